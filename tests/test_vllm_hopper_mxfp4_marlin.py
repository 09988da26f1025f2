"""EXPERIMENT (h-tpotcls, off): vLLM 0.10.0-0.11.0 ran MXFP4 routed experts (gpt-oss) on Marlin on Hopper.

Sources (docs/hypotheses/vllm-hopper-mxfp4-marlin.md): vLLM's ``get_mxfp4_backend``
(``vllm/model_executor/layers/quantization/mxfp4.py``, 0.11.x): "If FlashInfer is not available, try either Marlin or
Triton", Marlin when ``not has_triton_kernels()``; vllm-project/vllm pull request 27370 ("[Misc] Add triton_kernels
dependency", merged 2025-10-22, after 0.11.0): "At the moment, users have to install `triton_kernels` manually to
access this code-path". Marlin's rate: ``kernel_curves.MARLIN_FLOP_FRACTION`` (aiconfigurator 0.12.0's A100 Marlin
fused MoE, 143.9 / 250.5 TFLOP/s, s140).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.published import load_decode_rows
from planner.engines import kernel_curves, kernel_paths
from planner.engines.kernel_paths import vllm_hopper_mxfp4_marlin


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in load_decode_rows()}


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(kernel_paths, "VLLM_HOPPER_MXFP4_MARLIN", True)


@pytest.mark.parametrize(
    ("engine", "version", "architecture", "marlin"),
    [
        ("vllm", "v0.10.2", "Hopper", True),  # gpustack's gpt-oss-120b H100 page
        ("vllm", "v0.11.0", "Hopper", True),  # gpustack's gpt-oss-20b H100 page; PR 27370 merged after it
        ("vllm", "0.10.0", "Hopper", True),  # the first release with gpt-oss
        ("vllm", "0.11.1", "Hopper", False),  # triton_kernels a dependency (PR 27370)
        ("vllm", "0.13.0", "Hopper", False),
        ("vllm", "0.9.2", "Hopper", False),  # no gpt-oss
        ("vllm", "v0.11.0", "Ampere", False),  # Marlin anyway below SM 9.0 (mxfp4_kernel_path), not this switch's
        ("vllm", "v0.11.0", "Blackwell", False),
        ("sglang", "v0.5.4.post2", "Hopper", False),  # SGLang refuses to start without triton_kernels' runner
    ],
)
def test_release_window(engine, version, architecture, marlin):
    assert vllm_hopper_mxfp4_marlin(engine, version, architecture) is marlin


def test_off_changes_no_profile(rows):
    """Off (shipped): the gpt-oss rows' profiles keep the grouped GEMMs at their curve's rate."""
    assert not kernel_paths.VLLM_HOPPER_MXFP4_MARLIN
    for rid in ("GPUSTACK-116", "GPUSTACK-146"):
        assert acc._profile_for(rows[rid], None).moe_flop_scale == 1.0


def test_on_sets_marlins_fraction_on_the_window_only(rows, switch_on):
    """On: vLLM 0.10.2 (GPUSTACK-116) and 0.11.0 (GPUSTACK-146) gpt-oss on H100 take Marlin's fraction; a vLLM 0.11.0
    GLM-4.5-Air run on H100 (bf16 experts, GPUSTACK-058), an A100 gpt-oss run (GPUSTACK-096) and SGLang's gpt-oss
    run on H100 (GPUSTACK-113) do not."""
    for rid in ("GPUSTACK-116", "GPUSTACK-146"):
        assert acc._profile_for(rows[rid], None).moe_flop_scale == kernel_curves.MARLIN_FLOP_FRACTION == 0.574
    for rid in ("GPUSTACK-058", "GPUSTACK-096", "GPUSTACK-113"):
        assert acc._profile_for(rows[rid], None).moe_flop_scale == 1.0


def test_a_prompt_step_slows_by_at_most_the_fraction(rows, switch_on):
    """The scale lowers the grouped GEMMs' FLOP rate only: a prompt-heavy step (GPUSTACK-116's 1,000-prompt burst)
    gets slower, by no more than 1 / 0.574 on its TTFT, and no row gets faster."""
    row = rows["GPUSTACK-116"]
    on = acc.predict_decode_rows([row])
    kernel_paths.VLLM_HOPPER_MXFP4_MARLIN = False
    try:
        off = acc.predict_decode_rows([row])
    finally:
        kernel_paths.VLLM_HOPPER_MXFP4_MARLIN = True
    ttft_on, ttft_off = float(on.ttft_s[0]), float(off.ttft_s[0])
    assert ttft_off < ttft_on <= ttft_off / kernel_curves.MARLIN_FLOP_FRACTION
    assert float(on.tpot_s[0]) > float(off.tpot_s[0])


def test_the_profile_field_is_a_published_row_field():
    """``moe_flop_scale`` / ``moe_flop_ceiling`` are set only on published rows' profiles: on no workbook sheet, 1 / 0
    on every shipped profile."""
    from planner.engines.profiles import ENGINES
    from planner.workbook.assumptions import PUBLISHED_ROW_FIELDS

    assert {"moe_flop_scale", "moe_flop_ceiling"} <= PUBLISHED_ROW_FIELDS
    assert all(p.moe_flop_scale == 1.0 and p.moe_flop_ceiling == 0.0 for p in ENGINES.values())
    assert replace(next(iter(ENGINES.values())), moe_flop_scale=0.5).moe_flop_scale == 0.5


def test_the_ceiling_reading_leaves_steps_of_few_rows_per_expert(rows, monkeypatch):
    """ ":ceiling" (s140's Marlin rate flattens at the fraction from 64 rows per expert on): the fraction caps the
    grouped GEMM's, so a closed loop at 4 in flight (GPUSTACK-124, a few rows per expert) keeps its TPOT while a
    1,000-prompt burst's first tokens (GPUSTACK-116, hundreds of prompt rows per expert) come later."""
    monkeypatch.setattr(kernel_paths, "VLLM_HOPPER_MXFP4_MARLIN", "ceiling")
    profile = acc._profile_for(rows["GPUSTACK-116"], None)
    assert (profile.moe_flop_scale, profile.moe_flop_ceiling) == (1.0, kernel_curves.MARLIN_FLOP_FRACTION)
    on = acc.predict_decode_rows([rows["GPUSTACK-124"], rows["GPUSTACK-116"]])
    monkeypatch.setattr(kernel_paths, "VLLM_HOPPER_MXFP4_MARLIN", False)
    off = acc.predict_decode_rows([rows["GPUSTACK-124"], rows["GPUSTACK-116"]])
    assert float(on.tpot_s[0]) == pytest.approx(float(off.tpot_s[0]), rel=1e-9)
    assert float(on.ttft_s[1]) > float(off.ttft_s[1])
