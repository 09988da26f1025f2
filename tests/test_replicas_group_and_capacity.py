"""REPLICAS and the loaded-latency functions on a replica whose KV cache is small, and at rates the closed-form
approximation holds within capacity but the simulation does not.

1. The group REPLICAS chooses: ``=REPLICAS("H100","llama3.1-70b",60,800,400,1.5,0.05,,,"fp8")`` was #VALUE! ("H100
   cannot serve llama3.1-70b at 1200 tokens a request: not one fits"), and ``planner plan`` refused the same inputs,
   though 1 x H100 holds the fp8 weights and 3 requests of 1,200 tokens (MAX_BATCH). The replica's step table timed
   prefills of 1 to 11 prompts of 800 tokens (vLLM's 8,192-token budget) with the memory check on, and its KV cache
   (4,592 tokens) holds 5: the table was refused, so the replica was.
2. Capacity: ``planner.serving.fleet.past_capacity`` took the approximation's "within" verdict for rates farther than
   15% below its capacity, and the approximation's capacity is far above the simulation's where the KV cache caps the
   batch (H100 x 2 Llama-3.1-70B, 800 / 400 tokens: 0.924 requests/s against CAPACITY_RPS's 0.722). So TTFT_P95 at
   0.8 requests/s was a finite 124 s and REPLICAS at 60 requests/s with a 600 s TTFT target planned 75 replicas of 0.8
   requests/s each, every one past its capacity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner import api
from planner.excel import functions as xf
from planner.serving import fleet
from planner.serving.load import Replica

LLAMA = ("H100", "llama3.1-70b")


class TestReplicasOnOneFp8H100:
    """REPLICAS with gpus blank on fp8 weights: the smallest group holding a request is 1 x H100."""

    ARGS = (*LLAMA, 60.0, 800.0, 400.0, 1.5, 0.05, None, None, "fp8")

    def test_one_h100_holds_the_fp8_weights_and_three_requests(self):
        """``planner.api.max_batch`` / ``min_gpus``: the premise of the report."""
        assert api.max_batch(*LLAMA, 1200, weight_precision="fp8", gpus=1) == 3
        assert api.min_gpus(*LLAMA, 1200, weight_precision="fp8") == 1

    def test_replicas_is_a_number_and_the_fleet_plan_sizes(self):
        """414 replicas of 1 x H100: the figure ``planner plan --rate --gpus 1`` prints for the same inputs (without
        --gpus plan chooses the group needing fewest GPUs in all: tests/test_fleet_group_choice.py). (413 before the
        per-layer overhead was refitted to 15.7 us, 15.5 before: a slower step, one more replica.)"""
        from cli_support import run

        got = xf.REPLICAS(*self.ARGS)
        assert got == 414
        plan = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "1200", "-w", "fp8", "--rate",
                   "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5",
                   "--tpot-target", "0.05", "--gpus", "1")  # fmt: skip
        assert plan.exit_code == 0, plan.output
        assert f"replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): {got} x 1 x H100 SXM 80GB" in plan.output
        why = xf.PLANNER_WHY("REPLICAS", *self.ARGS)
        assert why.startswith("ok: a replica on 1 x H100 SXM 80GB")
        # and it says a larger group needs fewer GPUs in all (the group plan --rate without --gpus runs on)
        assert "2 GPUs a replica need fewer GPUs in all" in why

    def test_the_fleet_meets_the_targets_and_one_replica_fewer_misses(self):
        """TTFT_P95 / TPOT_P95 (milliseconds) of one replica at 60 / n requests/s, n = REPLICAS (414; 413 before the
        per-layer overhead refit to 15.7 us), meet 1.5 s and 50 ms; at 60 / (n - 1) one of them misses, so n is the
        fewest."""

        def p95(rate):
            return (
                xf.TTFT_P95(*LLAMA, rate, 800.0, 400.0, None, "fp8"),
                xf.TPOT_P95(*LLAMA, rate, 800.0, 400.0, None, "fp8"),
            )

        n = xf.REPLICAS(*self.ARGS)
        assert n == 414
        ttft, tpot = p95(60.0 / n)
        assert ttft <= 1500.0 and tpot <= 50.0
        ttft, tpot = p95(60.0 / (n - 1))
        assert ttft > 1500.0 or tpot > 50.0

    def test_a_target_no_fleet_meets_is_a_num_refusal_naming_the_miss(self):
        """A 0.1 s p95 TTFT is below one 800-token prefill on 1 x H100 (TTFT: 129 ms): #NUM!, never #VALUE!."""
        assert xf.TTFT(*LLAMA, 800.0, None, "fp8") > 100.0
        args = (*LLAMA, 60.0, 800.0, 400.0, 0.1, 0.05, None, None, "fp8")
        assert xf.REPLICAS(*args) == "#NUM!"
        why = xf.PLANNER_WHY("REPLICAS", *args)
        assert why.startswith("p95 TTFT target 100 ms is below one request's own TTFT on an idle replica (")
        assert why.endswith("no number of replicas meets it")  # trial 15 F6: said so, one unit (ms)

    def test_the_step_table_times_prefills_past_what_the_kv_cache_holds(self):
        """The replica's prefill rows cover the token budget: a one-token prompt and 1 to ceil(8,192 / 800) = 11
        prompts of 800 tokens, each as ``planner.api.prefill`` times it where it fits (5 prompts in its 4,592 KV
        tokens) and timed regardless of memory beyond, as the decode rows are."""
        table = Replica(*LLAMA, weight_precision="fp8").setup(800.0, 400.0).table
        assert table.prefill_tokens == tuple([0.0] + [800.0 * k for k in range(1, 12)])
        fits = [api.prefill(*LLAMA, 800, batch=k, gpus=1, weight_precision="fp8").ttft_s for k in range(1, 6)]
        assert np.allclose(table.prefill_s[1:6], fits, rtol=1e-12)
        assert np.isnan(api.prefill(*LLAMA, 800, batch=6, gpus=1, weight_precision="fp8", errors="coerce").ttft_s)
        assert all(math.isfinite(s) for s in table.prefill_s) and table.prefill_s[6] > table.prefill_s[5]


class TestPastTheSimulatedCapacity:
    """H100 x 2 Llama-3.1-70B (16-bit, the group chosen), 800 / 400 tokens: CAPACITY_RPS is 0.722 requests/s
    (``planner.serving.fleet.capacity_per_s``); the approximation's capacity is 0.924 and its p95 TTFT at 0.8
    requests/s is a finite 0.2 s."""

    REPLICA = Replica(*LLAMA)

    def test_capacity_is_0722_and_the_approximation_holds_08_within(self):
        from planner.serving.approx import approximate_percentiles

        assert xf.CAPACITY_RPS(*LLAMA, 800.0, 400.0) == pytest.approx(0.722, abs=5e-4)
        assert xf.CAPACITY_RPS(*LLAMA, 800.0, 400.0) == fleet.capacity_per_s(self.REPLICA, 800.0, 400.0)
        assert np.isfinite(approximate_percentiles(self.REPLICA, 800.0, 400.0, [0.8], 95)["ttft_s"][0])

    @pytest.mark.parametrize("function", ["TTFT_P50", "TTFT_P95", "TTFT_P99", "TPOT_P50", "TPOT_P95", "TPOT_P99"])
    def test_a_loaded_percentile_past_capacity_is_refused_saying_so(self, function):
        """0.8 requests/s, past CAPACITY_RPS's 0.722: #NUM! and the reason (it was a finite 124 s TTFT_P95); 0.7,
        within, is a figure."""
        f = getattr(xf, function)
        assert f(*LLAMA, 0.8, 800.0, 400.0) == "#NUM!"
        assert xf.PLANNER_WHY(function, *LLAMA, 0.8, 800.0, 400.0) == (
            "0.8 requests/s is past one replica's capacity (0.722 requests/s, simulated steady state): its queue grows "
            "without bound, so no percentile holds; use more replicas"
        )
        assert math.isfinite(f(*LLAMA, 0.7, 800.0, 400.0))

    def test_past_capacity_agrees_with_capacity_rps_on_both_sides(self):
        cap = fleet.capacity_per_s(self.REPLICA, 800.0, 400.0)
        rates = [0.5, 0.99 * cap, cap, 1.01 * cap, 0.8, 5.0]
        got = fleet.past_capacity(self.REPLICA, 800.0, 400.0, rates)
        assert got.tolist() == [r >= cap for r in rates] == [False, False, True, True, True, True]
        assert fleet.sweep_within_capacity(self.REPLICA, 800.0, 400.0, [0.7, 0.8])[1] is None

    def test_replicas_with_a_loose_target_never_plans_a_replica_past_capacity(self):
        """60 requests/s, p95 TTFT within 600 s: any replica within capacity meets it, so the fleet is the fewest each
        below 0.722 requests/s, floor(60 / 0.722) + 1 = 84, as without targets (it was 75, 0.8 requests/s each)."""
        cap = xf.CAPACITY_RPS(*LLAMA, 800.0, 400.0)
        got = xf.REPLICAS(*LLAMA, 60.0, 800.0, 400.0, "600 s")  # a bare 600 reads as milliseconds typed as seconds
        assert got == math.floor(60.0 / cap) + 1 == 84 == xf.REPLICAS(*LLAMA, 60.0, 800.0, 400.0)
        assert 60.0 / got < cap <= 60.0 / (got - 1)
        sized = fleet.fewest_replicas(self.REPLICA, 800.0, 400.0, 0.8, ttft_target_s=600.0)
        assert sized.replicas == 2 and sized.rate_per_replica_s < cap
