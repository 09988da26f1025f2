"""The Excel fleet and percentile functions take the lengths' spread, as ``planner plan --rate`` does (trial 29 F4).

Trial 29's RAG persona (prompts mean 12,000, p95 30,000; outputs mean 350, p95 900; Llama-3.3-70B fp16 on H100, p95
TTFT <= 3 s, TPOT <= 50 ms, 6 requests/s): ``FLEET_GPUS`` sized on the mean lengths alone gave 64 GPUs where ``planner
plan --prompt-tokens-high 30000 --output-tokens-high 900`` gives 72, since the cells had no high-length input.
REPLICAS, FLEET_GPUS, TTFT_P* and TPOT_P* now take ``prompt_tokens_high``, ``output_tokens_high``,
``length_percentile`` and ``context`` as their last four arguments (appended after every existing one, so no formula
changes meaning: trial 29 F11), and pass them to ``planner.serving.fleet.drawn_lengths``, which checks and draws with
the code plan runs (``planner.serving.length_options``: ``check_length_percentile``, ``check_high_lengths``,
``sized_lengths``; then ``planner.serving.load.cut_to_context`` at ``context``, plan's --context), so the drawn
requests are plan's. Blank is every request at the means, the figure the cells gave before. A high length below its
mean is refused in plan's words ("... is below ...; the high-percentile length is at least the mean", with the
arguments' names), as #VALUE! with the reason in PLANNER_WHY.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from cli_support import run

from planner.excel import functions as xf
from planner.serving.fleet import replicas_needed

#: Trial 29's deployment with the group given (8 x H100, fp16 weights and KV cache): plan's --gpus 8 and the cells'.
PLAN = ("--gpu", "H100", "--model", "llama3.3-70b", "--context", "32768", "-w", "fp16", "-k", "fp16", "--gpus", "8")
#: Its lengths and targets: plan's options (the means, p95 30,000 / 900, p95 TTFT 3 s, TPOT 50 ms).
MEANS = ("--prompt-tokens", "12000", "--output-tokens", "350", "--ttft-target", "3", "--tpot-target", "0.05")
HIGHS = ("--prompt-tokens-high", "30000", "--output-tokens-high", "900")
#: REPLICAS' arguments at a small rate, 3 requests/s (trial 29's 6 halved: one plan run ~10 s), up to kv_precision.
#: plan's --context 32768 cuts 37 of its 1,000 drawn requests there (--json under_load.requests_cut_to_context).
REPLICAS_HEAD = ("H100", "llama3.3-70b", 3, 12000, 350, 3, 0.05, 95, 8, "fp16", "fp16")
#: Blank parallelism, prefix_hit_rate, engine, burstiness and routing: the five arguments before the new ones.
BLANK_FIVE = (None,) * 5


def plan_json(*args: str) -> dict:
    result = run("plan", *PLAN, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


class TestSignatures:
    #: REPLICAS' and FLEET_GPUS' arguments before this change (docs/excel.md's signatures, 2026-12-06): unchanged.
    REPLICAS_BEFORE = [
        "gpu", "model", "rate_per_s", "prompt_tokens", "output_tokens", "ttft_target_s", "tpot_target_s", "percentile",
        "gpus", "weight_precision", "kv_precision", "parallelism", "prefix_hit_rate", "engine", "burstiness", "routing",
    ]  # fmt: skip
    LOAD_BEFORE = [
        "gpu", "model", "rate_per_s", "prompt_tokens", "output_tokens", "gpus", "weight_precision", "kv_precision",
        "speculative_tokens", "acceptance_length", "parallelism", "prefix_hit_rate", "engine", "speculative_method",
        "burstiness", "replicas", "routing",
    ]  # fmt: skip
    NEW = ["prompt_tokens_high", "output_tokens_high", "length_percentile", "context"]

    def test_the_new_arguments_are_appended_after_every_existing_one(self):
        """Every existing argument keeps its position (trial 29 F11: positions are what users get wrong), and the
        new ones are optional (default None, blank in a cell)."""
        assert list(inspect.signature(xf.REPLICAS).parameters) == self.REPLICAS_BEFORE + self.NEW
        fleet = [p for p in self.REPLICAS_BEFORE if p != "gpus"]
        assert list(inspect.signature(xf.FLEET_GPUS).parameters) == fleet + self.NEW
        for f in (xf.TTFT_P50, xf.TTFT_P95, xf.TTFT_P99, xf.TPOT_P50, xf.TPOT_P95, xf.TPOT_P99):
            assert list(inspect.signature(f).parameters) == self.LOAD_BEFORE + self.NEW
        for f in (xf.REPLICAS, xf.FLEET_GPUS, xf.TTFT_P95):
            params = inspect.signature(f).parameters
            assert all(params[n].default is None for n in self.NEW)
            assert "prompt_tokens_high" in f.__doc__
        assert "prompt_tokens_high" not in inspect.signature(xf.CAPACITY_RPS).parameters  # judged at the means

    def test_the_add_in_registers_their_help(self):
        """xlwings reads each argument's help from the Spec (``functions._udf``): the new ones have theirs."""
        from planner.excel import support as xs

        for name in ("REPLICAS", "FLEET_GPUS", "TTFT_P95"):
            docs = {p.name: p.doc for p in xs.SPECS[name].params}
            assert "plan --prompt-tokens-high" in docs["prompt_tokens_high"]
            assert "plan --output-tokens-high" in docs["output_tokens_high"]
            assert "plan --length-percentile" in docs["length_percentile"]
            assert "plan --context" in docs["context"]


class TestReplicasAsPlan:
    def test_replicas_with_the_trials_long_tail_is_plans_replica_count(self):
        """plan --gpus 8 --rate 3 with --prompt-tokens-high 30000 --output-tokens-high 900 sizes 5 replicas (its
        --json under_load.replicas, computed here; 5 on 2026-12-07); REPLICAS with the same high lengths gives the
        same, where the means alone give 4 (plan without the highs: every request at the means)."""
        under = plan_json("--rate", "3", *MEANS, *HIGHS)["under_load"]
        planned = under["replicas"]
        assert (planned, under["requests_cut_to_context"]) == (5, 37)  # as written (a change is a model change)
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 30000, 900, None, 32768) == planned
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 30000, 900, None, "32k") == planned
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 30000, 900) == planned  # uncut: 5 as well here
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, "30k", 900) == xf.REPLICAS(
            *REPLICAS_HEAD, *BLANK_FIVE, 30720, 900
        )
        # the Python API the cell calls, by keyword: the same count
        api = dict(gpus=8, weight_precision="fp16", kv_precision="fp16", ttft_target_s=3, tpot_target_s=0.05)
        highs = dict(prompt_tokens_high=30000, output_tokens_high=900, context=32768)
        assert replicas_needed(*REPLICAS_HEAD[:5], **api, **highs) == planned

    def test_a_blank_high_length_gives_todays_value(self):
        """Left out, None or empty text: every request at the means, 4 (the value REPLICAS gave before it took the
        high lengths; plan at the means sizes 4 too, tests/test_trial10_excel.py holds that parity)."""
        today = xf.REPLICAS(*REPLICAS_HEAD)
        assert today == 4
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, None, None, None, None) == today
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, "", "  ", "", "") == today
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, None, None, None, 32768) == today  # nothing drawn to cut
        assert "lengths drawn" not in xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD)

    def test_the_high_length_of_the_means_draws_nothing(self):
        """A high length equal to its mean is no spread (plan's rule: ``spread_lengths`` returns None)."""
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 12000, 350) == 4

    def test_planner_why_says_the_lengths_were_drawn(self):
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD, *BLANK_FIVE, 30000, 900)
        assert why.startswith("ok")
        assert "lengths drawn around the means (prompt p95 30,000, output p95 900 tokens; seeded)" in why
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD, *BLANK_FIVE, 30000, 900, None, 32768)
        assert "seeded), cut to context 32,768 as plan --context cuts them" in why

    def test_existing_positional_calls_read_as_before(self):
        """burstiness in its old place (15th) is still burstiness and routing (16th) still routing: the cell is the
        Python API's figure with them by name."""
        api = dict(gpus=8, weight_precision="fp16", kv_precision="fp16", ttft_target_s=3, tpot_target_s=0.05)
        by_name = replicas_needed(*REPLICAS_HEAD[:5], **api, burstiness=0.5, routing="round-robin")
        assert xf.REPLICAS(*REPLICAS_HEAD, None, None, None, 0.5, "round-robin") == by_name


class TestFleetGpusAsPlan:
    def test_the_trials_fleet_is_plans_72_not_64(self):
        """Trial 29 F4 at 6 requests/s without a group: FLEET_GPUS gave 64 (8 replicas of 8 at the means, as the
        trial's cells.py read it) where planner plan ... --prompt-tokens-high 30000 --output-tokens-high 900 gives
        72 (9 x 8; "4 -> 228", trial 29 F4's 57 x 4). With the high lengths the cell gives plan's 72."""
        head = ("H100", "llama3.3-70b", 6, 12000, 350, 3, 0.05, 95, "fp16", "fp16")
        assert xf.FLEET_GPUS(*head, *BLANK_FIVE, 30000, 900) == 72
        why = xf.PLANNER_WHY("FLEET_GPUS", *head, *BLANK_FIVE, 30000, 900)
        assert "9 replicas of 8 x H100 SXM 80GB, the fewest GPUs of the groups tried (4 -> 228; 8 -> 72)" in why

    def test_docs_excel_md_states_the_cells_figures(self):
        """docs/excel.md's "Long-tailed lengths": 64 on the means, 72 with the p95 lengths cut to a 32K context, as
        plan --context 32768 sizes it (9 x 8; its --json groups_tried 4 -> 19 x 4 = 76, 8 -> 72, computed here)."""
        doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "excel.md").read_text(encoding="utf-8").split())
        f = r'`=FLEET_GPUS\("H100","llama3\.3-70b",6,12000,350,3,0\.05,95,"fp16","fp16"'
        means = re.search(f + r"\)` is (\d+) on the means", doc)
        highs = re.search(f + r",,,,,,30000,900,,32768\)` is (\d+), 9 replicas of 8 x H100", doc)
        assert means and highs, "docs/excel.md's long-tailed example is missing"
        head = ("H100", "llama3.3-70b", 6, 12000, 350, 3, 0.05, 95, "fp16", "fp16")
        assert int(means.group(1)) == xf.FLEET_GPUS(*head) == 64
        assert int(highs.group(1)) == xf.FLEET_GPUS(*head, *BLANK_FIVE, 30000, 900, None, 32768) == 72
        why = xf.PLANNER_WHY("FLEET_GPUS", *head, *BLANK_FIVE, 30000, 900, None, 32768)
        assert "the fewest GPUs of the groups tried (4 -> 76; 8 -> 72)" in why
        plan = run("plan", *PLAN[:10], "--rate", "6", *MEANS, *HIGHS, "--json")
        tried = {g["gpus_per_replica"]: g["gpus"] for g in json.loads(plan.stdout)["under_load"]["groups_tried"]}
        assert tried == {4: 76, 8: 72}


class TestPercentilesAsPlan:
    HEAD = ("H100", "llama3.3-70b", 0.6, 12000, 350, 8, "fp16", "fp16", *(None,) * 9)

    def test_ttft_and_tpot_p95_with_high_lengths_are_plans_one_replica_figures(self):
        """plan --replicas 1 --rate 0.6 --context 32768 with the high lengths (its --json under_load percentiles,
        computed here) and the cells with the same lengths and context, in milliseconds, to the last digit."""
        plan = plan_json("--replicas", "1", "--rate", "0.6", *MEANS[:4], *HIGHS)["under_load"]
        assert plan["requests_cut_to_context"] > 0  # the cut is part of what is compared
        cells = (30000, 900, None, 32768)
        assert xf.TTFT_P95(*self.HEAD, *cells) == pytest.approx(plan["ttft_s"]["p95"] * 1e3, rel=1e-12)
        assert xf.TPOT_P95(*self.HEAD, *cells) == pytest.approx(plan["tpot_s"]["p95"] * 1e3, rel=1e-12)
        assert xf.TTFT_P50(*self.HEAD, *cells) == pytest.approx(plan["ttft_s"]["p50"] * 1e3, rel=1e-12)

    def test_blank_context_is_plans_figure_at_the_models_trained_context(self):
        """context blank: no cut below the model's trained context (Llama 3.3 70B's 131,072), plan's figure at
        --context 131072 (2,658 ms p95 TTFT on 2026-12-07, against the mean lengths' 1,480 ms)."""
        plan = run(
            "plan", *PLAN[:5], "131072", *PLAN[6:], "--replicas", "1", "--rate", "0.6", *MEANS[:4], *HIGHS, "--json"
        )
        want = json.loads(plan.stdout)["under_load"]["ttft_s"]["p95"] * 1e3
        assert xf.TTFT_P95(*self.HEAD, 30000, 900) == pytest.approx(want, rel=1e-12)
        assert xf.TTFT_P95(*self.HEAD, 30000, 900) == pytest.approx(2658.0, abs=1.0)
        assert xf.TTFT_P95(*self.HEAD) == pytest.approx(1479.5, abs=1.0)


class TestRefusedAsPlanRefuses:
    def test_a_high_length_below_its_mean_is_value_with_plans_rule(self):
        """plan: "--prompt-tokens-high 10,000 is below --prompt-tokens 12,000; the high-percentile length is at least
        the mean" (its _check_high_lengths); the cell: #VALUE!, the same words with the argument names."""
        refused = run("plan", *PLAN, "--rate", "3", *MEANS, "--prompt-tokens-high", "10000")
        assert refused.exit_code != 0
        assert "the high-percentile length is at least the mean" in refused.output
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 10000) == "#VALUE!"
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD, *BLANK_FIVE, 10000)
        assert why == (
            "prompt_tokens_high 10,000 is below prompt_tokens 12,000; the high-percentile length is at least the mean"
        )
        assert xf.FLEET_GPUS(*REPLICAS_HEAD[:8], "fp16", "fp16", *BLANK_FIVE, None, 300) == "#VALUE!"
        why = xf.PLANNER_WHY("TTFT_P95", "H100", "llama3.3-70b", 0.6, 12000, 350, 8, *(None,) * 11, None, 300)
        assert why.startswith("output_tokens_high 300 is below output_tokens 350")

    def test_a_length_percentile_without_a_high_length_is_refused_as_plan_refuses_it(self):
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, None, None, 95) == "#VALUE!"
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD, *BLANK_FIVE, None, None, 95)
        assert why.startswith("length_percentile is the percentile of prompt_tokens_high and output_tokens_high")

    def test_a_high_length_at_the_median_is_refused_as_plan_refuses_it(self):
        """The targets' percentile 50 with a high length and no length_percentile: plan's rule (a high length is at
        90, 95 or 99), #VALUE! as plan's InvalidInputError; length_percentile sets it apart, as plan
        --length-percentile does."""
        head = (*REPLICAS_HEAD[:7], 50, *REPLICAS_HEAD[8:])
        assert xf.REPLICAS(*head, *BLANK_FIVE, 30000) == "#VALUE!"
        why = xf.PLANNER_WHY("REPLICAS", *head, *BLANK_FIVE, 30000)
        assert "which must then be a high one: 90, 95, 99" in why
        assert "length_percentile sets it apart from the targets' percentile" in why
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, 30000, None, 80) == "#VALUE!"

    def test_means_longer_than_the_context_are_refused_as_plan_refuses_them(self):
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_HEAD, *BLANK_FIVE, None, None, None, 8192)
        assert why == (
            "prompt_tokens 12,000 + output_tokens 350 are more than context 8,192 (the tokens one sequence may hold, "
            "prompt + output); give context 12,350 or more"
        )

    @pytest.mark.parametrize(
        ("high", "code"), [("abc", "#VALUE!"), (30000.5, "#NUM!"), (-5, "#NUM!"), (True, "#VALUE!")]
    )
    def test_a_high_length_that_is_no_token_count_is_an_error_value(self, high, code):
        assert xf.REPLICAS(*REPLICAS_HEAD, *BLANK_FIVE, high) == code
