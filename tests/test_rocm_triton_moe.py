"""The pre-AITER ROCm fused-MoE switch (issue 21, h-band; shipped in s208, ``MOE_LAYER_COSTS``' "rocm-triton-moe";
docs/hypotheses/rocm-triton-moe-floor.md): a row on an AMD GPU served by SGLang before 0.4.4 or vLLM before 0.8 pays
0.468 ms per MoE layer per step, the gap between sgl-project/sglang pull request 3237's measured DeepSeek-V3 step on
8 x MI300X (batch 4, 2,048 in, 256 out: decode median 38.50 ms) and the planner's step at that shape (11.33 ms)."""

from __future__ import annotations

import pytest

import planner
from planner.accuracy import predict
from planner.engines import profiles

#: sgl-project/sglang pull request 3237 (2025-02-24): bench_one_batch, batch 4, --input 2048 --output 256, TP 8,
#: DeepSeek-V3, 8 x MI300X, without SGLANG_ROCM_FUSED_DECODE_MLA: decode median latency 0.03850 s.
PR3237_DECODE_MEDIAN_S = 38.50e-3
#: sgl-project/sglang pull request 4344 (2025-03-12), its "before" run with CK_MOE=1: bench_one_batch, batch 64,
#: --input 512 --output 32, TP 8, DeepSeek-R1 fp8: decode median latency 0.03876 s.
PR4344_CK_MOE_DECODE_MEDIAN_S = 38.76e-3


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(profiles, "MOE_LAYER_COSTS", profiles.MOE_LAYER_COSTS)
    profiles.set_moe_layer_cost("rocm-triton-moe", on=True)


def _pr3237_step(engine) -> float:
    """The planner's DeepSeek-V3 step at pull request 3237's shape: 8 x MI300X, 4 sequences at 2,048 + 256 / 2."""
    return planner.decode_step("MI300X", "DeepSeek-V3", 2176, batch=4, gpus=8, engine=engine, check_fit=False).step_s


def test_constant_is_the_measured_step_less_the_planners_over_58_moe_layers():
    """(38.50 - 11.33) ms / 58 MoE layers (DeepSeek-V3: 61 layers, first_k_dense_replace 3) = 0.46845 ms."""
    assert profiles.ROCM_TRITON_MOE_MEASURED_STEP_S == PR3237_DECODE_MEDIAN_S
    assert profiles.ROCM_TRITON_MOE_MOE_LAYERS == 58
    assert profiles.ROCM_TRITON_MOE_LAYER_S == pytest.approx((38.50e-3 - 11.33e-3) / 58, rel=1e-12)
    assert profiles.ROCM_TRITON_MOE_LAYER_S == pytest.approx(0.46845e-3, rel=1e-4)
    entry = profiles.moe_layer_cost("rocm-triton-moe")
    assert entry.layer_s == profiles.ROCM_TRITON_MOE_LAYER_S
    assert (entry.vendor, entry.engines) == ("AMD", frozenset({"sglang", "vllm"}))
    assert dict(entry.before) == {"sglang": (0, 4, 4), "vllm": (0, 8, 0)}
    assert entry.since == ()


def test_the_planners_step_at_the_measured_shape_is_the_one_subtracted():
    """Re-derives ``ROCM_TRITON_MOE_PLANNER_STEP_S``: a change of the step model that moves it by more than 1% must
    re-derive the constant (docs/hypotheses/rocm-triton-moe-floor.md)."""
    assert _pr3237_step("sglang") == pytest.approx(profiles.ROCM_TRITON_MOE_PLANNER_STEP_S, rel=0.01)


def test_with_the_switch_the_step_at_the_measured_shape_is_the_measured_one(switch_on):
    sglang = profiles.ENGINES["sglang"]
    on = profiles.with_moe_layer_costs(sglang, "sglang", "0.4.2.post4", "AMD")
    assert _pr3237_step(on) == pytest.approx(PR3237_DECODE_MEDIAN_S, rel=0.01)


def test_the_ck_moe_step_needs_no_term():
    """Pull request 4344's CK fused MoE run (batch 64 at 512 + 32 / 2) is within 5% of the planner's step as it is:
    the missing time is the Triton MoE call's."""
    step = planner.decode_step("MI300X", "DeepSeek-R1", 528, batch=64, gpus=8, engine="sglang", check_fit=False)
    assert step.step_s == pytest.approx(PR4344_CK_MOE_DECODE_MEDIAN_S, rel=0.05)


@pytest.mark.parametrize(
    ("engine", "version", "vendor", "moved"),
    [
        ("sglang", "0.4.2.post4 (the README's SgLang-Mi300x environment)", "AMD", True),
        ("sglang", "0.4.3.post2", "AMD", True),
        ("sglang", "0.4.4", "AMD", False),
        ("sglang", "0.4.2.post4", "NVIDIA", False),
        ("sglang", "rocm/sgl-dev:upstream_20250312_v1 (ROCm SGLang build of 2025-03-12)", "AMD", False),
        ("vllm", "0.7.3.dev138+g21f6ca217", "AMD", True),
        ("vllm", "0.8.3", "AMD", False),
        ("vllm", "0.8", "AMD", False),
        ("tensorrt-llm", "0.17.post1.dev", "AMD", False),
    ],
)
def test_which_releases_pay_it(monkeypatch, engine, version, vendor, moved):
    """The entry alone in the table (on), so that another entry's rows do not count."""
    monkeypatch.setattr(profiles, "MOE_LAYER_COSTS", (profiles.moe_layer_cost("rocm-triton-moe"),))
    profiles.set_moe_layer_cost("rocm-triton-moe", on=True)
    base = profiles.ENGINES["sglang"]
    assert profiles.moe_layer_cost("rocm-triton-moe").applies(engine, version, vendor) is moved
    out = profiles.with_moe_layer_costs(base, engine, version, vendor)
    extra = out.moe_layer_overhead_s - base.moe_layer_overhead_s
    assert extra == pytest.approx(profiles.ROCM_TRITON_MOE_LAYER_S if moved else 0.0, abs=1e-15)


def test_is_on_by_default():
    """Shipped in s208: the switch passed the ship rule (docs/hypotheses/rocm-triton-moe-floor.md)."""
    assert profiles.moe_layer_cost("rocm-triton-moe").on is True


def test_off_changes_nothing(monkeypatch):
    monkeypatch.setattr(profiles, "MOE_LAYER_COSTS", profiles.MOE_LAYER_COSTS)
    profiles.set_moe_layer_cost("rocm-triton-moe", on=False)
    sglang = profiles.ENGINES["sglang"]
    assert profiles.with_moe_layer_costs(sglang, "sglang", "0.4.2.post4", "AMD") is sglang


def test_the_sglang_ablation_leaves_vllms_releases_out(monkeypatch):
    """``bench/switch_bootstrap.py rocm-triton-moe:sglang``: the entry's engines narrowed to SGLang."""
    monkeypatch.setattr(profiles, "MOE_LAYER_COSTS", profiles.MOE_LAYER_COSTS)
    profiles.set_moe_layer_cost("rocm-triton-moe", on=True, engines=frozenset({"sglang"}))
    base = profiles.ENGINES["vllm"]
    assert profiles.with_moe_layer_costs(base, "vllm", "0.7.3", "AMD") is base
    on = profiles.with_moe_layer_costs(base, "sglang", "0.4.2.post4", "AMD")
    assert on.moe_layer_overhead_s == pytest.approx(base.moe_layer_overhead_s + profiles.ROCM_TRITON_MOE_LAYER_S)


def test_the_published_rows_get_it_by_their_own_gpu_and_release(switch_on):
    """dstack's SGLang 0.4.2.post4 row on 8 x MI300X gets the term, its SGLang 0.4.3.post2 row on 8 x H200 does not,
    predicted together (the rows' profile groups tell them apart)."""
    rows = [r for r in predict.load_decode_rows() if r.record_id in ("DSTK-013", "DSTK-012")]
    assert sorted(r.record_id for r in rows) == ["DSTK-012", "DSTK-013"]
    extra = {r.record_id: predict._profile_for(r, None).moe_layer_overhead_s for r in rows}
    base = profiles.ENGINES["sglang"].moe_layer_overhead_s
    assert extra["DSTK-013"] == pytest.approx(base + profiles.ROCM_TRITON_MOE_LAYER_S)
    assert extra["DSTK-012"] == pytest.approx(base)
    tpot = dict(zip((r.record_id for r in rows), predict.predict_decode_rows(rows).tpot_s, strict=True))
    alone = predict.predict_decode_rows([r for r in rows if r.record_id == "DSTK-013"]).tpot_s[0]
    assert tpot["DSTK-013"] == pytest.approx(alone, rel=1e-9)
    assert tpot["DSTK-013"] > 3 * tpot["DSTK-012"]
