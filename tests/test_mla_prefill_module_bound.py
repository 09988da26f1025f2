"""The h-mla upper bound on MLA's prefill module (``planner.serving.benchmark.MLA_PREFILL_MODULE_BOUND``, off;
docs/hypotheses/mla-prefill-mechanisms.md): nothing with the switch off, the measured module's layers where on."""

from __future__ import annotations

import pytest

import planner.serving.benchmark as B
from planner.catalog import default_catalog


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(B, "MLA_PREFILL_MODULE_BOUND", True)


def test_off_by_default():
    cat = default_catalog()
    assert B.MLA_PREFILL_MODULE_BOUND is False
    assert B.mla_prefill_module_s(cat.gpu("H200"), cat.model("deepseek-r1"), 8, "fp8", [922]) is None


def test_bound_is_the_measured_module_over_61_layers(switch_on):
    cat = default_catalog()
    h200 = B.mla_prefill_module_s(cat.gpu("H200"), cat.model("deepseek-r1"), 8, "fp8", [922, 7372])
    b200 = B.mla_prefill_module_s(cat.gpu("B200"), cat.model("deepseek-r1"), 8, "fp8", [922])
    # mla_module_aic.csv, 16 heads, fp8 cache: H200 0.10271 ms + 0.14045 us x 922 + 0.0041361 ns x 922^2 a layer
    assert h200[0] == pytest.approx(61 * (0.10271e-3 + 0.14045e-6 * 922 + 0.0041361e-9 * 922**2), rel=1e-6)
    assert h200[1] > 5 * h200[0]
    assert 6.0e-3 < b200[0] < 7.0e-3


def test_no_bound_without_a_measured_gpu_or_mla(switch_on):
    cat = default_catalog()
    assert B.mla_prefill_module_s(cat.gpu("B300"), cat.model("deepseek-r1"), 8, "fp8", [922]) is None
    assert B.mla_prefill_module_s(cat.gpu("MI300X"), cat.model("deepseek-r1"), 8, "fp8", [922]) is None
    assert B.mla_prefill_module_s(cat.gpu("H200"), cat.model("qwen3-8b"), 1, "bf16", [922]) is None


def test_module_in_place_of_the_planners_share(monkeypatch):
    """Test 3 (``MLA_PREFILL_MODULE``): off, nothing; on, the module less the planner's share (H200 TP 8, fp8:
    ~+9 ms at 922 tokens; B200 smaller, and below the planner's share at 7,372 tokens)."""
    from planner.engines.profiles import engine_profile

    cat = default_catalog()
    m, eng = cat.model("deepseek-r1"), engine_profile("sglang")
    args = (8.0, "fp8", "fp8", [(1.0, 922.0), (1.0, 7372.0)])
    assert B.mla_prefill_module_delta_s(cat, eng, cat.gpu("H200"), m, *args) is None
    monkeypatch.setattr(B, "MLA_PREFILL_MODULE", True)
    h200 = B.mla_prefill_module_delta_s(cat, eng, cat.gpu("H200"), m, *args)
    b200 = B.mla_prefill_module_delta_s(cat, eng, cat.gpu("B200"), m, *args)
    assert 5e-3 < h200[0] < 13e-3 and h200[1] > 0
    assert 0 < b200[0] < h200[0] and b200[1] < 0
    assert B.mla_prefill_module_delta_s(cat, eng, cat.gpu("B300"), m, *args) is None
    assert B.mla_projection_params_per_layer(m) * 61 == pytest.approx(11.41e9, rel=1e-3)


def test_mla_eager_launch_switch_is_off():
    """Test 4 (``SGLANG_MLA_HOST_MOE_LAYER_S``): off (None) on every branch that is not measuring it."""
    assert B.SGLANG_MLA_HOST_MOE_LAYER_S is None
