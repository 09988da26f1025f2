"""EXPERIMENT (h-amdttft, off; docs/hypotheses/amd-ttft.md): a MoE model's prompt steps on an AMD GPU under a release
before AITER (SGLang before 0.4.4, vLLM before 0.8) at 0.3232 of the profile's prefill FLOP factor.

Source of the constant: sgl-project/sglang pull request 3237 (comment of 2025-02-24), ``bench_one_batch --batch-size 4
--input 2048 --output 256``, DeepSeek-V3, TP 8, 8 x MI300X: "Decode. median latency: 0.03850 s", "Total. latency:
10.656 s"; bench_one_batch's total is one prefill plus 255 decode steps (sglang 0.4.3 ``bench_one_batch.py``
l.351-373), so the prefill took 10.656 - 255 x 0.03850 = 0.8385 s.
"""

from __future__ import annotations

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.published import load_decode_rows
from planner.engines import profiles

#: sgl-project/sglang pull request 3237's figures (above).
PR3237_TOTAL_S, PR3237_DECODE_MEDIAN_S = 10.656, 0.03850


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in load_decode_rows()}


@pytest.fixture(scope="module")
def derivation():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    import rocm_pre_aiter_prefill

    return rocm_pre_aiter_prefill


def test_the_measured_prefill_is_the_total_less_255_decode_steps():
    assert profiles.ROCM_PRE_AITER_PREFILL_DECODE_STEPS == 256 - 1
    assert profiles.ROCM_PRE_AITER_PREFILL_MEASURED_S == pytest.approx(PR3237_TOTAL_S - 255 * PR3237_DECODE_MEDIAN_S)
    assert profiles.ROCM_PRE_AITER_PREFILL_MEASURED_S == pytest.approx(0.8385, abs=1e-4)


def test_the_planners_prefill_and_the_solved_factor_re_derive(derivation):
    """A change of the step model that moves the planner's prefill at PR 3237's shape by more than 1% must re-derive
    ``ROCM_PRE_AITER_PREFILL_PLANNER_S`` and the factor (``bench/rocm_pre_aiter_prefill.py``)."""
    assert derivation.prefill_s(4, 2048) == pytest.approx(profiles.ROCM_PRE_AITER_PREFILL_PLANNER_S, rel=0.01)
    factor = profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR
    assert derivation.prefill_s(4, 2048, factor) == pytest.approx(profiles.ROCM_PRE_AITER_PREFILL_MEASURED_S, rel=0.01)
    assert derivation.solve(profiles.ROCM_PRE_AITER_PREFILL_MEASURED_S) == pytest.approx(factor, rel=0.01)


def test_shipped_and_off_under_its_ablation(rows, monkeypatch):
    """Shipped in s212 (docs/history.md: held-out TTFT 35.86% -> 31.79%); ``None`` is the rule before it."""
    assert acc.ROCM_PRE_AITER_PREFILL == "all"
    monkeypatch.setattr(acc, "ROCM_PRE_AITER_PREFILL", None)
    base = acc._profile_for(rows["DSTK-013"], None)
    assert base.prefill_flop_efficiency == profiles.ENGINES["sglang"].prefill_flop_efficiency


@pytest.mark.parametrize(
    "record, scaled",
    [
        ("DSTK-013", True),  # SGLang 0.4.2.post4, 8 x MI300X, DeepSeek-R1
        ("DSTK-006", True),  # vLLM 0.7.3.dev138 (ROCm fork), 8 x MI300X, DeepSeek-R1
        ("DSTK-012", False),  # SGLang 0.4.3.post2 on H200: not an AMD GPU
        ("XWDS-001", False),  # SGLang rocm/sgl-dev:upstream_20250312: a dated build, not a parsed release
        ("XWQ235-001", False),  # vLLM 0.8.3 on MI300X: AITER's release
        ("ROCMDD-009", False),  # vLLM v0.10.0 on MI300X, dense Llama-3.1-70B
        ("MLPF41-002", False),  # vLLM 0.4.3+rocm614 on MI300X, but a dense model (no Triton fused MoE)
    ],
)
def test_which_rows_it_reaches(rows, monkeypatch, record, scaled):
    row = rows[record]
    monkeypatch.setattr(acc, "ROCM_PRE_AITER_PREFILL", None)
    off = acc._profile_for(row, None)
    monkeypatch.setattr(acc, "ROCM_PRE_AITER_PREFILL", "all")
    on = acc._profile_for(row, None)
    factor = profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR if scaled else 1.0
    assert on.prefill_flop_efficiency == pytest.approx(off.prefill_flop_efficiency * factor)
    assert on.decode_flop_efficiency == off.decode_flop_efficiency  # decode steps unchanged


def test_the_sglang_ablation_leaves_vllm(rows, monkeypatch):
    monkeypatch.setattr(acc, "ROCM_PRE_AITER_PREFILL", "sglang")
    f = profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR
    assert acc._profile_for(rows["DSTK-013"], None).prefill_flop_efficiency == pytest.approx(f)
    assert acc._profile_for(rows["DSTK-006"], None).prefill_flop_efficiency == pytest.approx(1.0)
