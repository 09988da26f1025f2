"""A MoE option that sets no ``parallelism`` is sized in each layout ``plan --rate`` sizes, and the cheaper kept.

Trial 24, F15: ``planner plan --gpu H200 --model qwen3-235b-a22b -w fp8 --rate 40 --prompt-tokens 2000
--output-tokens 400 --ttft-target 1.5 --tpot-target 60ms`` printed 8 x 4 = 32 GPUs tensor-parallel and "same 4 GPUs a
replica, data-parallel attention + expert parallel: 5 x 4 = 20 GPUs for the same targets", while the review of the
same question sized only tensor parallelism and ranked Qwen3-235B last; dp-ep showed only as a lever of the
baseline. Now both surfaces answer with one rule (``planner.api.layouts_to_size``, ``planner.api.layout_kept``): the
review sizes tp and dp-ep, keeps the cheaper that meets the targets and says so on the option.

Expected values are ``plan``'s own, read from ``plan --json`` for the same question (no latency margin, no spare
replica, the trial's lengths as both mean and high percentile, so the review asks exactly what plan asks): the
review's fleet in each layout is plan's fleet in that layout, not a number written here.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_support import run
from doc_support import stated

from planner import api
from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.export import build_review
from planner.export.review import sized_in_layouts
from planner.export.scenario import load_scenario
from planner.report import plan

DATE = "2026-12-05"
CAT = default_catalog()

#: trial 24 F15's question as a review: H200, Qwen3-235B-A22B fp8, 40 requests/s of 2,000 / 400 tokens, p95 TTFT 1.5 s
#: and TPOT 60 ms; no margin and no spare, as plan sizes; no growth
SCENARIO = """
title = "Qwen3-235B on H200 (trial 24 F15)"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 2000
prompt_tokens_high = 2000
output_tokens_mean = 400
output_tokens_high = 400
high_percentile = 95
ttft_target_s = 1.5
tpot_target_s = 0.06
growth_over_horizon = 0
horizon_months = 12
latency_margin = 0
[defaults]
gpu = "H200"
spare_replicas = 0
[[option]]
name = "H200 Qwen3-235B fp8"
model = "Qwen3-235B-A22B"
weight_precision = "fp8"
"""
PLAN = ("plan", "--gpu", "H200", "--model", "qwen3-235b-a22b", "--context", "7000", "-w", "fp8", "--rate", "40",
        "--prompt-tokens", "2000", "--output-tokens", "400", "--ttft-target", "1.5", "--tpot-target", "60ms",
        "--json")  # fmt: skip


@pytest.fixture(scope="module")
def planned() -> dict:
    """``plan --json`` of the trial's command: its fleet (tensor parallel) and its other layout on the same group."""
    out = run(*PLAN)
    assert out.exit_code == 0, out.output
    return json.loads(out.output)["under_load"]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    path = tmp_path_factory.mktemp("moe") / "qwen.toml"
    path.write_text(SCENARIO)
    return load_scenario(path)


@pytest.fixture(scope="module")
def review(scenario):
    return build_review(scenario, CAT, date=DATE)


def test_the_review_keeps_the_layout_plan_finds_cheaper_with_plans_gpu_count(planned, review):
    """plan: tp 8 x 4 = 32 GPUs, dp-ep 5 x 4 = 20 (the trial's figures). The review keeps dp-ep at plan's 20."""
    (dp,) = planned["other_layouts"]
    assert dp["parallelism"] == "dp-ep" and dp["gpus"] < planned["gpus"]  # the trial's case: dp-ep the cheaper
    (r,) = review.results
    assert r.option.parallelism == "dp-ep"
    assert (r.gpus, int(r.replica.gpus)) == (dp["gpus"], dp["gpus_per_replica"])


def test_the_layout_not_kept_is_sized_as_plan_sizes_it_and_named_on_the_option(planned, review):
    (r,) = review.results
    by_layout = {s.parallelism: s.result for s in r.layouts}
    assert set(by_layout) == {"tp", "dp-ep"}
    assert by_layout["dp-ep"] is not None and by_layout["dp-ep"].gpus == r.gpus
    tp = by_layout["tp"]
    group = planned["other_layouts"][0]["gpus_per_replica"]  # plan's kept group, its other layout on the same
    assert tp.meets and tp.gpus == planned["gpus"] and int(tp.replica.gpus) == group
    assert tp.monthly_usd > r.monthly_usd
    said = (
        f"layout dp-ep, the cheaper of those sized (dp-ep {r.gpus} GPUs, ${r.monthly_usd:,.0f}/month; "
        f"tp {tp.gpus} GPUs, ${tp.monthly_usd:,.0f}/month; parallelism in the option fixes it)"
    )
    assert r.layout_chosen == said
    assert any(said in line for line in summary_lines(review))  # the command's ranked line


def test_docs_export_states_the_trials_figures(planned, review):
    """docs/export.md, step 11, quotes this review's note and plan's two fleets (issue 26: every figure in the docs
    checked by a test)."""
    (r,) = review.results
    tp = next(s.result for s in r.layouts if s.parallelism == "tp")
    note = r"layout dp-ep, the cheaper of those sized \(dp-ep (\d+) GPUs, \$([\d,]+)/month; tp (\d+) GPUs, \$([\d,]+)/month"
    assert stated("docs/export.md", note) == (r.gpus, round(r.monthly_usd), tp.gpus, round(tp.monthly_usd))
    fleets = r"finds (\d+) x (\d+) = (\d+) GPUs tensor-parallel and (\d+) x (\d+) = (\d+) in dp-ep"
    (dp,) = planned["other_layouts"]
    group = dp["gpus_per_replica"]
    assert stated("docs/export.md", fleets) == (
        planned["replicas"], group, planned["gpus"], dp["replicas"], group, dp["gpus"]
    )  # fmt: skip


def test_the_baselines_layout_lever_offers_the_other_layout_not_its_own(review):
    """The baseline already runs dp-ep: no "tp -> dp-ep" lever; the lever is tensor parallelism, as the review sized
    it (its fleet, not sized again), costing more."""
    (r,) = review.results
    names = [lv.name for lv in review.levers]
    assert "Data-parallel attention" not in names
    lever = next(lv for lv in review.levers if lv.name == "Tensor parallelism")
    tp = next(s.result for s in r.layouts if s.parallelism == "tp")
    assert lever.change == "layout dp-ep -> tp (tensor parallel)"
    assert lever.result is tp
    assert (
        lever.saving_usd_per_month == pytest.approx(r.monthly_usd - tp.monthly_usd) and lever.saving_usd_per_month < 0
    )


def test_plans_other_layout_line_says_the_review_keeps_the_fewer(planned):
    """plan's line for the trial: dp-ep's 20 GPUs, fewer than tp's 32, carries the review's rule; a layout needing
    more does not (the same ``layout_kept``)."""
    from types import SimpleNamespace

    from planner.cli.plan import OtherLayout, _other_layout_line

    (dp,) = planned["other_layouts"]
    group = dp["gpus_per_replica"]
    p = SimpleNamespace(gpus=group, parallelism="tp")
    sized = SimpleNamespace(replicas=planned["replicas"], on_capacity=False)
    line = _other_layout_line(OtherLayout("dp-ep", dp["replicas"]), p, sized)
    assert line == (
        f"  same {group} GPUs a replica, data-parallel attention + expert parallel: {dp['replicas']} x {group} = "
        f"{dp['gpus']} GPUs for the same targets (--parallelism dp-ep); fewer than tp's {planned['gpus']} (planner "
        "export sizes both layouts for a MoE option that sets no parallelism and keeps the cheaper)"
    )
    more = _other_layout_line(OtherLayout("dp-ep", planned["replicas"] + 1), p, sized)
    assert more.endswith("(--parallelism dp-ep)")


def test_an_option_that_sets_its_layout_keeps_it(scenario, planned):
    """parallelism = "tp" in the option: sized in tensor parallelism only, plan's 32 GPUs, no choice stated."""
    option = scenario.option[0].model_copy(update={"parallelism": "tp"})
    result, _ = sized_in_layouts(option, scenario, CAT)
    assert result.option.parallelism == "tp" and result.layouts == () and result.layout_chosen == ""
    assert result.gpus == planned["gpus"]


class TestOneRule:
    """``layouts_to_size`` and ``layout_kept``: what plan and export both size, and which one the review keeps."""

    def test_a_moe_model_is_sized_in_tp_and_dp_ep_a_dense_one_in_tp(self):
        qwen, llama = CAT.model("Qwen3-235B-A22B"), CAT.model("Llama-3.1-70B")
        assert api.layouts_to_size(qwen) == ("tp", "dp-ep")
        assert api.layouts_to_size(llama) == ("tp",)
        assert api.layouts_to_size(qwen, parallelism="dp-ep") == ("dp-ep",)  # given: that one alone

    def test_an_engine_release_without_dp_ep_is_not_sized_in_it(self):
        """vLLM before 0.8.0 has no data-parallel attention with expert-parallel MoE (``release_cannot_run``):
        neither surface offers it (plan's other layouts offered it before)."""
        qwen = CAT.model("Qwen3-235B-A22B")
        assert api.layouts_to_size(qwen, "vllm==0.7.0") == ("tp",)
        assert api.layouts_to_size(qwen, "vllm==0.8.0") == ("tp", "dp-ep")
        old = plan("H200", "Qwen3-235B-A22B", 7000, weight_precision="fp8", engine="vllm==0.7.0")
        new = plan("H200", "Qwen3-235B-A22B", 7000, weight_precision="fp8", engine="vllm==0.8.0")
        assert [a.parallelism for a in old.alternatives] == []
        assert [a.parallelism for a in new.alternatives] == ["dp-ep"]

    def test_the_cheapest_meeting_layout_is_kept_tensor_parallel_on_a_tie(self):
        assert api.layout_kept({"tp": 32.0, "dp-ep": 20.0}) == "dp-ep"  # the trial's GPUs
        assert api.layout_kept({"tp": 20.0, "dp-ep": 20.0}) == "tp"
        assert api.layout_kept({"tp": math.nan, "dp-ep": 44.0}) == "dp-ep"  # tp meets no target
        assert api.layout_kept({"tp": math.nan, "dp-ep": math.nan}) == "tp"  # none meets: the default's shortfall
