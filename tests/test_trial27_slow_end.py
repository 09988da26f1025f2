"""Trial 27 F4 and F6 (/work/trial27-findings.md; the trial's scenario my/reason.toml: DeepSeek-R1 as published,
fp8, on H200, B200, MI300X, MI325X and MI355X bought, vLLM).

F4: the "Held-out slow end" column applied the pooled held-out ends (p95 TTFT x6.41, TPOT x1.58) to every option, so
it put MI300X + DeepSeek-R1 at 48 GPUs (-$156,625 a month) against a 200-GPU plan sized on a +246% margin, while the
nine published runs of that very deployment measured TPOT 1.6x-4.0x the prediction. The rule
(``planner.export.slow_end.floored_ratio``): each ratio is at least the plan's own (1 + its margin) and the median
of the deployment's own published figures, so the slow end is never below the plan.

F6: every DeepSeek-R1 fleet was sized on a margin from 18 runs of vLLM 0.7.3/0.7.4 dev builds of 19, and the review
never said so. The margin row on Assumptions now says which releases, how many runs, and what the current line's runs
read (``planner.export.margin_releases``, ``planner.accuracy.serving_margin.release_split``); the
margin itself is unchanged.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_export import review_of, write_scenario

from planner.accuracy.serving_margin import ServingRegion, release_split
from planner.export import slow_end as slow_end_module
from planner.export.records import SlowEnd
from planner.export.slow_end import (
    HELD_OUT,
    OWN_RUNS,
    PLAN_MARGIN,
    basis_text,
    floored_ratio,
    slow_end,
)
from planner.export.tables import slow_end_values

ROOT = Path(__file__).parents[1]
REFERENCE = ROOT / "catalogs" / "reference"

#: published / predicted TPOT of the nine dstack runs of MI300X + DeepSeek-R1 + vLLM 0.7.3, TP8, fp8 weights
#: (published_run_errors.csv, DSTK-001 to -006, -037, -038, -041: tpot_ms_published / tpot_ms_predicted), sorted; since
#: s208's pre-AITER Triton MoE time (docs/hypotheses/rocm-triton-moe-floor.md) 1.03-1.39x, the trial's 1.64-4.04x
MI300X_TPOT = [0.97, 0.99, 1.03, 1.07, 1.1, 1.11, 1.2, 1.2, 1.37]  # 1.03-1.39 before s212
#: the same runs' TTFT (the trial's 2.33-3.59x)
MI300X_TTFT = [0.93, 0.98, 1.11, 1.11, 1.13, 1.14, 1.17, 1.17, 1.42]  # 2.26-3.51 before s212's pre-AITER prefill
#: the shipped held-out ends under load (loaded_residuals.csv, docs/export.md "Which end"): p99 TTFT without the one
#: source that sets the full end, p99 TPOT
TTFT_END, TPOT_END = 6.39, 1.56  # loaded_residuals.csv p99 ends (6.41, 1.57 before s211; TPOT 1.58 before s207)


def _own_ratios(gpu: str, metric: str) -> list[float]:
    """published / predicted of ``metric`` ("tpot" or "ttft", the mean or else the median figure) over the shipped
    runs of DeepSeek-R1 + vLLM, TP8, fp8 weights, bf16 KV on ``gpu``, read with the csv module (not the planner)."""
    with open(REFERENCE / "published_run_errors.csv", newline="", encoding="utf-8") as f:
        rows = [
            r
            for r in csv.DictReader(f)
            if (r["gpu"], r["model"], r["engine"], r["layout"], r["weights"], r["kv"], r["speculative"])
            == (gpu, "DeepSeek-R1", "vllm", "TP8", "fp8", "bf16", "")
        ]
    out = []
    for r in rows:
        for q in (f"{metric}_ms", f"{metric}_median_ms"):
            if r[f"{q}_predicted"] and r[f"{q}_published"] and float(r[f"{q}_predicted"]) > 0:
                out.append(float(r[f"{q}_published"]) / float(r[f"{q}_predicted"]))
    return out


class TestTheRule:
    def test_the_figures_above_are_the_shipped_runs(self):
        """The constants this module reasons with are the file's, to two places."""
        assert sorted(round(x, 2) for x in _own_ratios("MI300X", "tpot")) == sorted(MI300X_TPOT)
        assert sorted(round(x, 2) for x in _own_ratios("MI300X", "ttft")) == sorted(MI300X_TTFT)

    def test_the_plans_margin_floors_a_narrower_held_out_end(self):
        """MI300X's TPOT: the pooled end x1.58, the plan's +246% (x3.46), the own runs' median 1.10 (1.15 before s212): the plan's."""
        assert statistics.median(MI300X_TPOT) == pytest.approx(1.10)
        assert floored_ratio(TPOT_END, 3.46, MI300X_TPOT) == (3.46, PLAN_MARGIN)

    def test_a_wider_held_out_end_stands(self):
        """MI300X's TTFT: the pooled end x6.41 is past the plan's x3.46 and the own runs' median 1.13 (2.79 before s212's pre-AITER ROCm prefill)."""
        assert floored_ratio(TTFT_END, 3.46, MI300X_TTFT) == (TTFT_END, HELD_OUT)

    def test_own_runs_slower_than_both_set_it(self):
        """Trial 26 F18's deployment (gpt-oss-120b on 2 x H100, vLLM): TPOT figures 0.99-1.95x, median 1.78, against a
        +47% margin and the pooled x1.58 (tests/test_trial26_own_runs_budget.py's TPOT)."""
        tpot = [0.993, 0.995, 1.684, 1.779, 1.811, 1.891, 1.950]
        assert floored_ratio(TPOT_END, 1.47, tpot) == (pytest.approx(1.779), OWN_RUNS)

    def test_fewer_than_three_own_figures_are_not_read(self):
        """own_runs.OWN_RUNS_LEAST = 3: two slow runs do not set the slow end."""
        assert floored_ratio(TPOT_END, 1.25, [3.0, 4.0]) == (TPOT_END, HELD_OUT)

    def test_a_tie_keeps_the_held_out_range(self):
        assert floored_ratio(1.5, 1.5, [1.5, 1.5, 1.5]) == (1.5, HELD_OUT)


def _fake_result(gpus: int = 200, monthly_usd: float = 206086.0, margin: float = 2.46):
    """The trial's MI300X option as the slow end reads it: 25 replicas, 200 GPUs, $206,086 a month (my/reason.md's
    options row), goals = the targets (3 s, 60 ms) / (1 + margin)."""
    return SimpleNamespace(
        meets=True,
        under_load=SimpleNamespace(percentile=95),
        ttft_goal_s=3.0 / (1 + margin),
        tpot_goal_s=0.060 / (1 + margin),
        fleet=SimpleNamespace(replicas_needed=25),
        gpus=gpus,
        monthly_usd=monthly_usd,
    )


WORKLOAD = SimpleNamespace(ttft_target_s=3.0, tpot_target_s=0.060)


@pytest.fixture
def searched(monkeypatch):
    """slow_end's replica search replaced by one that records its goals and answers ``answer["gpus"]`` GPUs at
    $1,030.43 each a month (the trial's MI300X: $206,086 / 200); near-idle check off."""
    seen: list[tuple[float, float]] = []
    answer = {"gpus": 0}

    def fleet_on_goals(result, workload, catalog, goals):
        seen.append(goals)
        g = answer["gpus"]
        return object(), SimpleNamespace(replicas_needed=g // 8, gpus=g, monthly_usd=g * 1030.43)

    monkeypatch.setattr(slow_end_module, "fleet_on_goals", fleet_on_goals)
    monkeypatch.setattr(slow_end_module, "near_ttft_floor", lambda sim: "")
    return seen, answer


def _ranges():
    from planner.accuracy.loaded_ranges import load_loaded_ranges

    return load_loaded_ranges()


class TestTheFleet:
    def test_the_trials_mi300x_is_never_below_its_plan(self, searched):
        """The trial's row: 48 GPUs at the slow end against 200 planned. Now TPOT takes the plan's x3.46 and TTFT the
        held-out x6.41; a search that answered 48 (what the pooled ends found) gives way to the plan's 200."""
        seen, answer = searched
        answer["gpus"] = 48
        s = slow_end(_fake_result(), WORKLOAD, None, _ranges(), own_figures={"tpot": MI300X_TPOT, "ttft": MI300X_TTFT})
        assert (s.tpot_basis, s.ttft_basis) == (PLAN_MARGIN, HELD_OUT)
        assert s.tpot_ratio == pytest.approx(3.46) and s.ttft_ratio == pytest.approx(TTFT_END, abs=0.005)
        assert seen == [(pytest.approx(3.0 / s.ttft_ratio), pytest.approx(0.060 / 3.46))]
        assert (s.gpus, s.monthly_usd) == (200, 206086.0)
        assert s.tpot_range_ratio == pytest.approx(TPOT_END, abs=0.005)

    def test_a_search_past_the_plan_is_the_slow_end(self, searched):
        _, answer = searched
        answer["gpus"] = 232
        s = slow_end(_fake_result(), WORKLOAD, None, _ranges(), own_figures={})
        assert (s.gpus, s.monthly_usd) == (232, pytest.approx(232 * 1030.43))

    def test_where_the_margin_is_past_both_ends_the_plan_is_the_slow_end_without_a_search(self, searched):
        """A +600% margin (x7) is past both held-out ends: the plan's own goals, so its fleet, not searched again."""
        seen, _ = searched
        s = slow_end(_fake_result(margin=6.0), WORKLOAD, None, _ranges(), own_figures={})
        assert seen == []
        assert (s.ttft_basis, s.tpot_basis) == (PLAN_MARGIN, PLAN_MARGIN)
        assert (s.replicas, s.gpus, s.monthly_usd) == (25, 200, 206086.0)

    def test_own_runs_slower_than_the_plan_tighten_the_goals(self, searched):
        """TPOT figures with a median 4.0x, past the plan's x3.46: the TPOT goal is 60 ms / 4.0 = 15 ms."""
        seen, answer = searched
        answer["gpus"] = 264
        s = slow_end(_fake_result(), WORKLOAD, None, _ranges(), own_figures={"tpot": [3.9, 4.0, 4.1]})
        assert s.tpot_basis == OWN_RUNS and s.tpot_own_figures == 3
        assert seen[0][1] == pytest.approx(0.015)
        assert s.gpus == 264


class TestTheNote:
    def test_the_note_says_what_set_each_ratio(self):
        s = SlowEnd(95, 6.41, 3.46, "sglang-pr-4918-deepseek-v3-h200", "", 25, 200, 206086.0,
                    tpot_basis=PLAN_MARGIN, tpot_range_ratio=1.58)  # fmt: skip
        assert basis_text(s) == (
            "at least the plan: TPOT x3.46, the plan's own +246% margin (the held-out range's end: x1.58)"
        )
        plan = SimpleNamespace(gpus=200, monthly_usd=206086.0)
        assert slow_end_values(SimpleNamespace(slow_end=s, **vars(plan))) == (200, 0, 206086.0, 0.0, basis_text(s))

    def test_own_runs_are_named_with_their_count(self):
        s = SlowEnd(95, 6.41, 1.78, "", "", 4, 8, 1.0, tpot_basis=OWN_RUNS, tpot_range_ratio=1.58, tpot_own_figures=7)
        said = basis_text(s)
        assert said.startswith("at least the plan and this deployment's own published runs: TPOT x1.78, the median")
        assert "the median of this deployment's 7 published TPOT figures / predicted" in said

    def test_the_held_out_ends_alone_need_no_note(self):
        s = SlowEnd(95, 6.41, 1.58, "", "", 4, 8, 1.0)
        assert basis_text(s) == ""
        assert slow_end_values(SimpleNamespace(slow_end=s, gpus=8, monthly_usd=1.0))[-1] is None


def _region(gpu, rows, versions, low=0.0, high=0.0, smallest=0.0, largest=0.0, sources="a b c", releases="all"):
    return ServingRegion(gpu, "vllm", "MLA", rows, low, 0.0, high, smallest, largest, sources, releases, versions)


class TestReleaseSplit:
    def test_the_shipped_vllm_mla_runs_are_mostly_older_than_the_current_line(self):
        """heldout_serving_residuals.csv, (*, vllm, MLA): all 19 runs, 0.7.3.dev138:9 0.7.4.dev181:9 0.11.0:1; current
        1 run, 0.11.0, +86%. MI300X's own 9 runs from one source widen to every GPU ("own thin"), so the split is
        every GPU's."""
        split = release_split("MI300X", "vllm", "MLA")
        assert (split.region.gpu, split.region.rows, split.current.rows) == ("*", 19, 1)
        assert split.older_runs == 18 and split.mostly_older
        assert split.older_versions() == [("0.7.3.dev138", 9), ("0.7.4.dev181", 9)]
        assert split.current.largest == pytest.approx(0.86)

    def test_the_shipped_sglang_mla_runs(self):
        """(*, sglang, MLA): 27 runs, 18 of SGLang 0.4.2.post4 / 0.4.3.post2; current 9 from 2 sources, -9% / +4%
        (the trial's "within -9%/+4%")."""
        split = release_split("MI355X", "sglang", "MLA")
        assert (split.region.rows, split.older_runs) == (27, 18)
        assert (split.current.low, split.current.high) == (pytest.approx(-0.09), pytest.approx(0.04))

    def test_a_profile_of_the_older_line_is_not_told_its_runs_are_older(self):
        assert release_split("MI355X", "sglang-0.4", "MLA") is None

    def test_half_older_is_not_mostly(self):
        regions = {
            ("*", "vllm", "MLA", "all"): _region("*", 10, "0.7.3:5 0.11.0:5"),
            ("*", "vllm", "MLA", "current"): _region("*", 5, "0.11.0:5", releases="current"),
        }
        assert not release_split("B200 180GB", "vllm", "MLA", regions).mostly_older


def _margin_row(review, gpu: str):
    return next(a for a in review.assumptions if a.what.startswith(gpu) and a.what.endswith("margin used"))


#: The trial's scenario (my/reason.toml) cut to its MI300X option, the layout pinned to tensor parallelism (the kept
#: one; dp-ep is not sized at its margin: docs/export.md "Not sized where the margin sets the fleet").
SCENARIO = """
title = "Reasoning: DeepSeek-R1 on MI300X (trial 27)"
[workload]
peak_requests_per_s = 2
average_requests_per_s = 0.8
prompt_tokens_mean = 1000
prompt_tokens_high = 4000
output_tokens_mean = 3000
output_tokens_high = 12000
high_percentile = 95
ttft_target_s = 3
tpot_target_s = 0.06
[defaults]
model = "DeepSeek-R1"
spare_replicas = 1
[[option]]
name = "MI300X, bought"
gpu = "MI300X"
pricing = "purchase"
purchase_usd = 17000
node_size = 8
parallelism = "tp"
"""


@pytest.fixture(scope="module")
def mi300x_review(tmp_path_factory):
    return review_of(write_scenario(tmp_path_factory.mktemp("trial27"), SCENARIO))


class TestTheTrialsMI300X:
    def test_the_slow_end_is_at_least_the_plan(self, mi300x_review):
        """Trial 27: plan 200 GPUs at +246%, slow end 48 (-$156,625). Now at least the plan's 200."""
        r = mi300x_review.recommended
        assert r.margin == pytest.approx(
            1.33
        )  # MI300X + vLLM, MLA: every GPU's residual_high 1.33 (heldout_serving_residuals.csv, s208)
        s = r.slow_end
        assert s.meets and s.gpus >= r.gpus and s.monthly_usd >= r.monthly_usd
        assert s.tpot_basis == PLAN_MARGIN and s.tpot_ratio == pytest.approx(2.33)
        assert s.tpot_ratio >= statistics.median(_own_ratios("MI300X", "tpot"))
        assert s.ttft_ratio >= max(1 + r.margin, statistics.median(_own_ratios("MI300X", "ttft")))

    def test_the_options_note_says_so(self, mi300x_review):
        from planner.export.tables import options_table

        table = options_table(mi300x_review)
        keys = [c.key for c in table.columns]
        note = table.rows[0][keys.index("slow_end_note")]
        assert "TPOT x2.33, the plan's own +133% margin (the held-out range's end: x1.56)" in note
        assert "below the plan" not in str(table.rows[0])

    def test_the_margin_row_names_the_older_releases(self, mi300x_review):
        label = _margin_row(mi300x_review, "MI300X").label
        assert (
            "18 of the 19 runs this +133% margin rests on (vLLM MLA on every GPU) are of vLLM 0.7 and earlier" in label
        )
        assert "0.7.3.dev138 (9), 0.7.4.dev181 (9)" in label
        assert "the 1 run of vLLM 0.8 and later there (0.11.0; 1 source) reads +86%" in label


def test_a_margin_set_by_the_prediction_range_says_nothing_of_releases():
    """The runs' largest (+304%) below the margin: the prediction range set it, not these runs."""
    from planner.export.margin_releases import margin_releases_text

    r = SimpleNamespace(
        meets=True,
        time_range_note="...; the runs' releases: vLLM 0.7.3.dev138 (9 runs)",
        margin=3.5,
        gpu=SimpleNamespace(name="MI300X"),
        engine=SimpleNamespace(name="vllm"),
        model=SimpleNamespace(attention_kind="MLA"),
    )
    assert margin_releases_text(r) == ""
    assert margin_releases_text(SimpleNamespace(**{**vars(r), "margin": 1.33})).startswith("18 of the 19 runs")


def _fake_option(name: str, gpu: str, margin: float, engine: str = "vllm"):
    """An option as the margin's statements read it: met, its margin's note naming serving runs (``runs_named``),
    DeepSeek-R1 (MLA)."""
    return SimpleNamespace(
        meets=True,
        time_range_note="...; the runs' releases: vLLM 0.7.3.dev138 (9 runs), 0.7.4.dev181 (9), 0.11.0 (1)",
        margin=margin,
        gpu=SimpleNamespace(name=gpu),
        engine=SimpleNamespace(name=engine),
        model=SimpleNamespace(attention_kind="MLA"),
        option=SimpleNamespace(name=name),
    )


def test_the_money_lines_name_the_options_on_older_releases():
    """The trial's five options (my/reason.md's Ownership table: +179% on four, +246% on MI300X; +149% and +133% since
    s208 timed the pre-AITER ROCm MoE), with vLLM: one
    sentence, every option named, under the recommendation on every surface (``money_lines``)."""
    from planner.export.money_tables import margin_releases_line

    options = [
        _fake_option("MI355X, bought", "MI355X", 1.49),
        _fake_option("B200, bought", "B200 180GB", 1.49),
        _fake_option("MI300X, bought", "MI300X", 1.33),
    ]
    runs = SimpleNamespace(workload=SimpleNamespace(latency_margin="model-range"))  # the margin from the runs
    line = margin_releases_line(SimpleNamespace(results=options, scenario=runs))
    assert line.startswith(
        "Margins from older engine releases: MI355X, bought; B200, bought; and MI300X, bought are sized on +133% and "
        "+149% margins from 19 runs (vLLM MLA on every GPU), 18 of them of vLLM 0.7 and earlier: 0.7.3.dev138 (9), "
        "0.7.4.dev181 (9), older than the line their engine plans (vLLM 0.8 and later); the 1 run of vLLM 0.8 and "
        "later there (0.11.0; 1 source) reads +86%."
    )
    older = [_fake_option("B200", "B200 180GB", 1.49, "sglang-0.4")]
    assert margin_releases_line(SimpleNamespace(results=older, scenario=runs)) == ""
