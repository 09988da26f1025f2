"""The table of per-MoE-layer release costs (``planner.engines.profiles.MOE_LAYER_COSTS``, issue 21): one rule
applies every entry that is on and matches a row; bench/switch_bootstrap.py's switches turn its entries."""

from __future__ import annotations

import pytest
from bench_support import bench_module

from planner.engines import profiles


@pytest.fixture
def table(monkeypatch):
    """The table restored after the test."""
    monkeypatch.setattr(profiles, "MOE_LAYER_COSTS", profiles.MOE_LAYER_COSTS)


def test_the_table_holds_the_two_entries_with_their_published_figures():
    """sgl-project/sglang PR 3237 (38.50 ms on 8 x MI300X, planner 11.33 ms) and PR 2643 (30.29 token/s at batch 1
    on 8 x H200, planner 7.355 ms), each over DeepSeek-V3's 58 MoE layers."""
    assert [e.key for e in profiles.MOE_LAYER_COSTS] == ["rocm-triton-moe", "sglang-early-hopper-moe"]
    rocm, hopper = profiles.MOE_LAYER_COSTS
    assert rocm.layer_s == pytest.approx((38.50e-3 - 11.33e-3) / 58, rel=1e-12)
    assert hopper.layer_s == pytest.approx((1 / 30.29 - 7.355e-3) / 58, rel=1e-12)
    for entry in profiles.MOE_LAYER_COSTS:
        assert entry.engines <= {name for name, _ in entry.before}, entry.key  # every engine has its bound
        assert "pull request" in entry.source and "docs/hypotheses/" in entry.source


def test_every_matching_entry_adds_its_time(table):
    """Two entries on for the same row both add (the rule sums what matches); one off adds nothing."""
    rocm = profiles.moe_layer_cost("rocm-triton-moe")
    twin = profiles.MoeLayerCost(
        key="twin", on=True, vendor="AMD", engines=frozenset({"sglang"}), before=(("sglang", (0, 5, 0)),),
        measured_step_s=2e-3, planner_step_s=1e-3, moe_layers=10, source="a test",
    )  # fmt: skip
    profiles.MOE_LAYER_COSTS = (rocm, twin)
    base = profiles.ENGINES["sglang"]
    both = profiles.with_moe_layer_costs(base, "sglang", "0.4.2.post4", "AMD")
    assert both.moe_layer_overhead_s == pytest.approx(base.moe_layer_overhead_s + rocm.layer_s + 1e-4, rel=1e-12)
    profiles.set_moe_layer_cost("twin", on=False)
    one = profiles.with_moe_layer_costs(base, "sglang", "0.4.2.post4", "AMD")
    assert one.moe_layer_overhead_s == pytest.approx(base.moe_layer_overhead_s + rocm.layer_s, rel=1e-12)


def test_an_unknown_key_is_refused():
    with pytest.raises(profiles.UnknownNameError):
        profiles.moe_layer_cost("no-such-cost")


@pytest.mark.parametrize(
    ("switch", "key", "on", "engines"),
    [
        ("rocm-triton-moe:off", "rocm-triton-moe", False, {"sglang", "vllm"}),
        ("rocm-triton-moe:sglang", "rocm-triton-moe", True, {"sglang"}),
        ("sglang-early-hopper-moe", "sglang-early-hopper-moe", True, {"sglang"}),
        ("sglang-early-hopper-moe:both", "sglang-early-hopper-moe", True, {"sglang"}),
    ],
)
def test_the_bootstrap_switches_turn_their_entry(table, switch, key, on, engines):
    sb = bench_module("switch_bootstrap")
    assert switch in sb.SWITCHES or switch in sb.ABLATIONS
    others = [e for e in profiles.MOE_LAYER_COSTS if e.key != key]
    sb.turn_on(switch)
    entry = profiles.moe_layer_cost(key)
    assert (entry.on, entry.engines) == (on, frozenset(engines))
    assert [e for e in profiles.MOE_LAYER_COSTS if e.key != key] == others


def test_no_profile_a_user_or_the_workbook_plans_with_has_a_decode_only_cost():
    """``decode_moe_layer_overhead_s`` is set only on published rows' profiles (``with_moe_layer_costs``), so the
    workbook, which offers the shipped profiles, leaves it out (``PUBLISHED_ROW_FIELDS``) without losing parity."""
    from planner.workbook.assumptions import PUBLISHED_ROW_FIELDS

    assert "decode_moe_layer_overhead_s" in PUBLISHED_ROW_FIELDS
    for name, profile in profiles.ENGINES.items():
        assert profile.decode_moe_layer_overhead_s == 0.0, name
    for name in ("vllm", "sglang", "tensorrt-llm", "lmdeploy", "vllm==0.8.0", "sglang==0.4.3.post2"):
        assert profiles.engine_profile(name).decode_moe_layer_overhead_s == 0.0, name
