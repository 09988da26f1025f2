"""A MoE baseline's review has a fifth lever: the same option run as data-parallel attention ranks with the experts
spread ("dp-ep", the layout SGLang and vLLM run DeepSeek-class models in; README "Layouts"). A dense model has no
experts to spread and keeps four; a baseline already in dp-ep has nothing to change.

Expected values are the review's own options: ``examples/deepseek-dp-attention.toml`` holds the same H200
DeepSeek-V3 deployment as two options, tensor parallel and dp-ep, so the lever on the first must size the fleet the
second option is sized at (the same ``evaluate`` call, changed in the layout only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import default_catalog
from planner.export import build_review
from planner.export.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
DATE = "2026-12-05"
LEVER = "Data-parallel attention"


@pytest.fixture(scope="module")
def deepseek():
    return build_review(load_scenario(ROOT / "examples/deepseek-dp-attention.toml"), default_catalog(), date=DATE)


def test_a_tensor_parallel_moe_baseline_gets_the_dp_ep_lever_sized_as_the_dp_ep_option(deepseek):
    by_name = {r.option.name: r for r in deepseek.results}
    assert deepseek.baseline.option.parallelism in (None, "tp")
    lever = next(lv for lv in deepseek.levers if lv.name == LEVER)
    dp = by_name["H200, DP attention + EP"]
    assert lever.change == "layout tp -> dp-ep (data-parallel attention, experts spread)"
    assert (lever.result.gpus, lever.result.monthly_usd) == (dp.gpus, dp.monthly_usd)
    assert lever.saving_usd_per_month == pytest.approx(deepseek.baseline.monthly_usd - dp.monthly_usd)


def test_a_dense_baseline_keeps_four_levers():
    """Four levers and the prefix cache's (not evaluated where [levers] prefix_hit_rate is not set; trial 29 F9)."""
    review = build_review(load_scenario(ROOT / "examples/budget-review.toml"), default_catalog(), date=DATE)
    assert review.baseline.model.moe is None
    assert [lv.name for lv in review.levers] == [
        "More GPUs per replica", "Shorter context", "GQA model", "KV-cache quantization", "Prefix cache"
    ]  # fmt: skip
    assert review.levers[-1].result is None


def test_a_dp_ep_baseline_has_no_such_lever(tmp_path):
    text = (ROOT / "examples/deepseek-dp-attention.toml").read_text()
    path = tmp_path / "dp.toml"
    path.write_text(text.replace('title = "DeepSeek-V3 on H200"', 'title = "x"\nbaseline = "H200, DP attention + EP"'))
    review = build_review(load_scenario(path), default_catalog(), date=DATE)
    assert review.baseline.option.parallelism == "dp-ep"
    assert LEVER not in [lv.name for lv in review.levers]
