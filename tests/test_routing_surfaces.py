"""Routing is an input of every surface that sizes a fleet, not only of ``planner plan --routing``.

``planner export`` takes a scenario's ``workload.routing`` and the Excel functions REPLICAS and FLEET_GPUS a last
``routing`` argument; each passes it to the one rule ``plan`` uses (``planner.serving.fleet.fewest_replicas`` with
``routing``, each replica's gaps at ``replica_burstiness``). Blank or left out is random, as before, so every
earlier review and cell reads as it did. Expected values come from ``planner plan`` for the same inputs, and the
ordering from tests/test_routing.py's reasoning: round-robin gives a replica every k-th arrival, gaps of gamma shape
k b, smoother than random's k b / (1 + (k - 1) b) <= k b, so the same traffic needs no more replicas."""

from __future__ import annotations

import inspect
import json
import tomllib
from pathlib import Path

import pytest
from cli_support import one_line, run

import planner.excel.functions as xf
from planner.catalog import default_catalog
from planner.export.evaluate import evaluate
from planner.export.scenario import parse_scenario
from planner.serving.fleet import ROUTINGS

ROOT = Path(__file__).resolve().parents[1]

#: Trial 10's bursty traffic (tests/test_routing.py): Llama 3.3 70B on 4 x H100, gamma 0.5 at 60 requests/s of
#: 1,000 / 300 tokens, p95 TTFT 1.5 s and TPOT 60 ms. In the scenario every request is alike (the *_high lengths are
#: the means, so each replica holds what memory holds at 1,300 tokens: plan --context 1300) and the margin is 0, so
#: the review sizes its serving replicas on the targets themselves, as plan does.
SCENARIO = """\
[workload]
peak_requests_per_s = 60
average_requests_per_s = 30
prompt_tokens_mean = 1000
prompt_tokens_high = 1000
output_tokens_mean = 300
output_tokens_high = 300
ttft_target_s = 1.5
tpot_target_s = "60 ms"
burstiness = 0.5
latency_margin = 0
{routing}
[[option]]
name = "4 x H100"
gpu = "H100"
model = "llama3.3-70b"
gpus_per_replica = 4
"""
PLAN = ("plan", "--gpu", "H100", "--model", "llama3.3-70b", "--rate", "60", "--prompt-tokens", "1000")
PLAN += ("--output-tokens", "300", "--ttft-target", "1.5", "--tpot-target", "60ms", "--burstiness", "0.5")


def scenario_text(routing: str | None) -> str:
    return SCENARIO.format(routing="" if routing is None else f'routing = "{routing}"')


def review_sizing(routing: str | None):
    """The review's sizing under load of the one option (``evaluate``: ``planner export``'s per-option call)."""
    s = parse_scenario(tomllib.loads(scenario_text(routing)))
    return evaluate(s.option[0], s.workload, default_catalog(), 0.0).under_load


def plan_json(*more: str) -> dict:
    result = run(*PLAN, *more, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


class TestExport:
    def test_round_robin_sizes_no_more_serving_replicas_than_random(self):
        """tests/test_routing.py's ordering, through the review: 8 against 9 serving replicas."""
        rr, rnd = review_sizing("round-robin"), review_sizing("random")
        assert rr.replicas <= rnd.replicas
        assert (rr.replicas, rnd.replicas) == (8, 9)  # plan --routing round-robin / random, below

    @pytest.mark.parametrize("routing", ["random", "round-robin"])
    def test_the_review_sizes_the_fleet_plan_sizes_under_each_routing(self, routing):
        """The same inputs through ``planner plan --routing`` (its --json): the same serving replicas, since both
        call ``fewest_replicas`` with the routing."""
        plan = plan_json("--gpus", "4", "--context", "1300", "--routing", routing)["under_load"]
        assert plan["routing"] == routing
        assert review_sizing(routing).replicas == plan["replicas"]

    def test_left_out_the_routing_is_random(self):
        """The default keeps every earlier review's figures (the README's example review does not name it)."""
        assert parse_scenario(tomllib.loads(scenario_text(None))).workload.routing == "random"
        assert review_sizing(None).replicas == review_sizing("random").replicas

    def test_the_assumptions_state_the_routing_used(self, tmp_path):
        path = tmp_path / "s.toml"
        path.write_text(scenario_text("round-robin"))
        result = run("export", str(path), "-o", "-", "--format", "md", "--date", "2026-12-05")
        assert result.exit_code == 0, result.output
        assert "| Routing over the replicas (each request to the next in turn) | round-robin |" in result.stdout
        assert "at the planned peak (the traffic dealt round-robin over them;" in result.stdout

    def test_an_unknown_routing_is_one_line_naming_the_accepted_values_and_the_line(self, tmp_path):
        """Exit 2, as every scenario error (docs/export.md: "exit code 2 for bad usage"; a bad ``sizing`` too)."""
        path = tmp_path / "s.toml"
        path.write_text(scenario_text("least-loaded"))
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.xlsx")), 2)
        assert "workload.routing: routing 'least-loaded' is not known; use one of random, round-robin" in line
        assert line.endswith("(line 12)")  # the line of `routing = "least-loaded"` in SCENARIO
        path.write_text(scenario_text(None).replace("latency_margin = 0", 'sizing = "queued"'))
        assert run("export", str(path), "-o", str(tmp_path / "r.xlsx")).exit_code == 2

    def test_docs_export_lists_the_key_with_its_values_and_default(self):
        row = next(x for x in (ROOT / "docs" / "export.md").read_text(encoding="utf-8").splitlines()
                   if x.startswith("| `routing` |"))  # fmt: skip
        assert all(f'`"{r}"`' in row for r in ROUTINGS) and '`"random"` (default' in row

    def test_round_robin_with_littles_law_is_refused_as_it_changes_nothing(self, tmp_path):
        path = tmp_path / "s.toml"
        path.write_text(scenario_text("round-robin").replace("latency_margin = 0", 'sizing = "littles-law"'))
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.xlsx")), 2)
        assert 'routing "round-robin" needs sizing = "simulated"' in line


#: REPLICAS' arguments for trial 10's traffic on 4 x H100 (tests/test_trial10_excel.py), burstiness 0.5, then routing.
REPLICAS_ARGS = ("H100", "llama3.3-70b", 60.0, 1000.0, 300.0, 1.5, 0.06, 95.0, 4.0, None, None, None, None, None, 0.5)
FLEET_ARGS = ("H100", "llama3.3-70b", 60.0, 1000.0, 300.0, 1.5, 0.06, 95.0, None, None, None, None, None, 0.5)


class TestExcel:
    def test_routing_is_the_last_argument_of_the_functions_that_size_a_fleet(self):
        """After burstiness, so every earlier formula reads as it did; TTFT_P*/TPOT_P* simulate one replica, which
        takes the traffic as it comes unless it is given the fleet's replicas, and then reads routing after them
        (trial 24 F6, tests/test_trial24_excel_fleet_burstiness.py). Only the lengths' spread comes after it, appended
        later (trial 29 F4, tests/test_excel_high_lengths.py)."""
        high = ["prompt_tokens_high", "output_tokens_high", "length_percentile", "context"]
        for f in (xf.REPLICAS, xf.FLEET_GPUS):
            assert list(inspect.signature(f).parameters)[-6:] == ["burstiness", "routing", *high]
        for f in (xf.TTFT_P50, xf.TTFT_P95, xf.TTFT_P99, xf.TPOT_P50, xf.TPOT_P95, xf.TPOT_P99):
            assert list(inspect.signature(f).parameters)[-7:] == ["burstiness", "replicas", "routing", *high]
            assert "dealt as routing says" in f.__doc__

    @pytest.mark.parametrize("routing", ["random", "round-robin"])
    def test_replicas_size_as_plan_routing(self, routing):
        """plan --context 4096 (the context tests/test_trial10_excel.py's REPLICAS parity runs at): 9 at random,
        8 round-robin."""
        plan = plan_json("--gpus", "4", "--context", "4096", "--routing", routing)
        assert xf.REPLICAS(*REPLICAS_ARGS, routing) == plan["under_load"]["replicas"]

    def test_fleet_gpus_round_robin_is_plan_routing_round_robin_without_gpus(self):
        """Replicas x the group plan keeps without --gpus (random: tests/test_trial10_excel.py)."""
        p = plan_json("--context", "4096", "--routing", "round-robin")
        assert xf.FLEET_GPUS(*FLEET_ARGS, "round-robin") == p["under_load"]["replicas"] * p["gpus"]

    def test_blank_and_any_case_read_as_plan_reads_them(self):
        """Blank is random (the figure REPLICAS gave before it took routing); plan's --routing takes any case."""
        assert xf.REPLICAS(*REPLICAS_ARGS, "") == xf.REPLICAS(*REPLICAS_ARGS) == xf.REPLICAS(*REPLICAS_ARGS, "random")
        assert xf.REPLICAS(*REPLICAS_ARGS, " Round-Robin ") == xf.REPLICAS(*REPLICAS_ARGS, "round-robin")

    def test_docs_excel_states_the_round_robin_cell_as_the_function_gives_it(self):
        doc = " ".join((ROOT / "docs" / "excel.md").read_text(encoding="utf-8").split())
        cell = xf.REPLICAS(*REPLICAS_ARGS, "round-robin")
        assert f'`=REPLICAS("H100","llama3.3-70b",60,1000,300,1.5,0.06,95,4,,,,,,0.5,"round-robin")` is {cell},' in doc

    def test_an_unknown_routing_is_value_with_plans_reason(self):
        """#VALUE!, the code of every argument of the wrong kind (an unknown parallelism, a number for a name), and
        PLANNER_WHY gives the same words as ``planner.serving.fleet.check_routing``."""
        assert xf.REPLICAS(*REPLICAS_ARGS, "least-loaded") == "#VALUE!"
        assert xf.FLEET_GPUS(*FLEET_ARGS, "least-loaded") == "#VALUE!"
        assert xf.REPLICAS(*REPLICAS_ARGS, 2.0) == "#VALUE!"
        why = xf.PLANNER_WHY("REPLICAS", *REPLICAS_ARGS, "least-loaded")
        assert why == "routing 'least-loaded' is not known; use one of random, round-robin"
