"""What a fleet sized on simulated percentiles was simulated with, and on which basis its shares are, is stated.

A user trial (s194) gave the same fleet (Llama 3.1 70B fp8, 11 x 2 H100 at 60 requests/s of 800 / 400 tokens) a p95
TTFT of 1.26 s in ``planner export`` and 401 ms in ``planner plan --rate`` with nothing saying why: the review runs
each replica at most its sized batch at once (max_num_seqs set to it), plan the engine's own limit and the KV cache.
Both now say how many sequences a replica ran at once. The review's "Headroom at peak" (-3%) and utilization (107%)
were Little's-law batch-slot shares beside a simulated fleet that meets its targets; they are now shares of the
traffic the deployed replicas carry at the simulated rate. Cost per token and utilization are at the average after
growth, and the Summary says so.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import openpyxl
import pytest
from cli_support import run

from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.export import build_review, render
from planner.export.scenario import load_scenario
from planner.report import plan

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "budget-review.toml"
SAME_FLEET = """title = "Compare with plan --rate"
[workload]
peak_requests_per_s = 60
average_requests_per_s = 60
prompt_tokens_mean = 800
prompt_tokens_high = 800
output_tokens_mean = 400
output_tokens_high = 400
ttft_target_s = 1.5
tpot_target_s = 0.05
latency_margin = 0
[defaults]
model = "Llama-3.1-70B"
spare_replicas = 0
[[option]]
name = "H100 fp8"
gpu = "H100"
pricing = "cloud"
weight_precision = "fp8"
node_size = 1
gpus_per_replica = 2
"""
PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "1200", "-w", "fp8", "--gpus", "2",
        "--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5",
        "--tpot-target", "0.05")  # fmt: skip


def review(path: Path):
    return build_review(load_scenario(path), default_catalog(), source=path.name, date="2026-12-05")


@pytest.fixture(scope="module")
def same_fleet(tmp_path_factory):
    path = tmp_path_factory.mktemp("basis") / "same.toml"
    path.write_text(SAME_FLEET)
    return review(path)


@pytest.fixture(scope="module")
def example():
    return review(EXAMPLE)


class TestSequencesAtOnce:
    def test_plan_rate_states_the_sequences_vllm_admits_at_once(self):
        """vLLM admits a request when its prompt's KV blocks fit (16-token blocks): 2 x H100 hold 219,040 KV tokens
        of Llama 3.1 70B at fp8 weights (plan's memory breakdown), so 800-token prompts admit floor(13,690 / 50) =
        273 at once, below max_num_seqs 1,024; the text and --json say 273."""
        p = plan("H100", "llama3.1-70b", 1200, gpus=2, weight_precision="fp8")
        blocks = int(p.memory.kv_cache_tokens) // 16
        expected = blocks // (800 // 16)
        assert expected == 273
        text = run(*PLAN)
        assert text.exit_code == 0, text.output
        assert f"each running at most {expected} sequences at once (the engine's max_num_seqs" in text.output
        out = json.loads(run(*PLAN, "--json").output)
        assert out["under_load"]["max_sequences_at_once"] == {"per_rank": expected, "ranks": 1}

    def test_export_states_its_replicas_run_at_most_what_memory_holds_at_the_high_lengths(self, same_fleet):
        """The review simulates max_num_seqs = what memory holds when every sequence may reach the high-percentile
        length (800 + 400 = 1,200 tokens, 75 blocks of 16: 13,690 blocks // 75 = 182 on 2 x H100 at fp8 weights, as
        above), and its line says so. It was the closed form's TPOT-best batch (106), so the review's p95 TTFT for
        this fleet read 1.26 s where plan read 0.40 s (s197)."""
        rec = same_fleet.recommended
        line = summary_lines(same_fleet)[0]
        assert rec.under_load is not None and int(rec.replica.gpus) == 2
        blocks = int(plan("H100", "llama3.1-70b", 1200, gpus=2, weight_precision="fp8").memory.kv_cache_tokens) // 16
        assert rec.candidate.slots == blocks // (1200 // 16) == 182
        assert (
            f"on {rec.under_load.replicas} serving replicas, each running at most 182 sequences at once (max_num_seqs "
            "set to what memory holds at the p95 lengths, within the engine's limit)"
        ) in line
        assert f"TTFT of one p95 prompt alone {rec.replica.ttft_s:.2f} s" in line


class TestSharesOnTheSimulatedBasis:
    def test_a_fleet_sized_exactly_at_its_peak_is_fully_used_with_no_headroom(self, same_fleet):
        """Peak = average, no spare, 1-GPU billing: the replicas carry exactly the peak, so utilization is 100% and
        headroom 0% (Little's law's batch slots said 107% utilized on a fleet meeting its targets)."""
        f = same_fleet.recommended.fleet
        assert int(f.replicas) == same_fleet.recommended.under_load.replicas
        assert float(f.utilization_average) == pytest.approx(1.0)
        assert float(f.headroom_peak) == pytest.approx(0.0, abs=1e-12)

    def test_the_readme_examples_headroom_is_its_spare_replica(self, example):
        """README example (sized on the spread of lengths since s206): n replicas including 1 spare
        (examples/budget-review.toml spare_replicas = 1), n - 1 serving the 60 requests/s peak: 1 - (n - 1) / n
        headroom (it read -3%); the average after 50% growth, 16 x 1.5 = 24 requests/s, uses 24 / (n x 60 / (n - 1))
        (at the means n was 10: 10% and 36%)."""
        rec = example.recommended
        n = int(rec.fleet.replicas)
        assert rec.under_load.replicas == n - 1 and n > 2
        assert float(rec.fleet.headroom_peak) == pytest.approx(1 - (n - 1) / n)
        assert rec.average_rate_per_s == pytest.approx(24.0)
        assert float(rec.fleet.utilization_average) == pytest.approx(24 / (n * 60 / (n - 1)))

    def test_the_summary_says_cost_per_token_is_at_the_average_after_growth(self, example, tmp_path):
        """Cost per token and the load vs sized capacity are at 24 requests/s, not today's 16 (a trial found the Summary's
        per-token rates add up to the monthly cost only at the grown average)."""
        out = tmp_path / "r.xlsx"
        out.write_bytes(render(example, "xlsx"))
        sheet = openpyxl.load_workbook(out)["Summary"]
        rows = {c.value: sheet.cell(row=c.row, column=2).value for c in sheet["A"] if isinstance(c.value, str)}
        assert rows["Average after growth: the basis below"] == "24 requests/s"
        labels = list(rows)
        at = labels.index("Average after growth: the basis below")
        assert labels[at + 1 : at + 6] == [
            "$ per million input tokens",
            # trial 28 F11: the output rate is the decode share, the all-in rate (monthly cost / output tokens) beside it
            "$ per M output tokens (decode share; prompts in $ per M input)",
            "$ per M output tokens, all-in (monthly cost / output tokens)",
            "$ per million tokens (all)",  # trial 23 F10: one rate for the whole bill, at the same basis
            "Load vs sized capacity (average)",
        ]
        assert "At the average load after growth (24 requests/s, the basis of the cost per token)" in example.reason
        assert not math.isnan(float(example.recommended.fleet.usd_per_million_output))
