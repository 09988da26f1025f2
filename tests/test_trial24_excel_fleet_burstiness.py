"""Trial 24 F6: REPLICAS takes the fleet's incoming burstiness (each of k replicas then sees shape k b / (1 + (k - 1)
b) at random, ``planner.serving.fleet.replica_burstiness``), TTFT_P*/TPOT_P* one replica's own, so a sheet chaining
them read TPOT_P95 68.5 ms for the 18 replicas REPLICAS sized against the 60 ms target, where `planner plan --gpu H100
--model llama3.3-70b --context 4096 -w fp8 --gpus 2 --rate 40 --prompt-tokens 2000 --output-tokens 400
--ttft-target 1.5 --tpot-target 60ms --burstiness 0.5` gives 18 replicas, TTFT p95 950 ms, TPOT p95 59.5 ms (the
trial's transcript). The percentile functions take the fleet's replicas (and routing) after burstiness.
"""

from __future__ import annotations

import pytest

import planner.excel.functions as xf
from planner.serving.fleet import replica_burstiness

ARGS = ("H100", "llama3.3-70b", 40 / 18, 2000, 400, 2, "fp8", None, None, None, None, None, None, None, 0.5)


class TestFleetBurstinessInThePercentileFunctions:
    def test_replicas_sizes_18_as_plan_does(self):
        assert xf.REPLICAS("H100", "llama3.3-70b", 40, 2000, 400, 1.5, 0.06, 95, 2, "fp8", *[None] * 4, 0.5) == 18

    def test_with_the_fleets_replicas_the_percentiles_are_plans(self):
        assert xf.TPOT_P95(*ARGS, 18) == pytest.approx(59.5, abs=0.05)
        assert xf.TTFT_P95(*ARGS, 18) == pytest.approx(950, abs=0.5)

    def test_they_equal_the_replicas_own_shape_given_directly(self):
        """0.5 over 18 replicas at random: 18 x 0.5 / (1 + 17 x 0.5) = 0.947."""
        own = replica_burstiness(0.5, 18)
        assert own == pytest.approx(9 / 9.5)
        assert xf.TPOT_P95(*ARGS, 18) == xf.TPOT_P95(*ARGS[:-1], own)

    def test_without_replicas_the_replica_takes_the_traffic_as_it_comes(self):
        assert xf.TPOT_P95(*ARGS) == pytest.approx(68.5, abs=0.05)  # the trial's reading

    def test_round_robin_deals_every_kth_request(self):
        """Round-robin: gaps of shape k b = 9 (smoother than at random)."""
        assert xf.TPOT_P95(*ARGS, 18, "round-robin") == xf.TPOT_P95(*ARGS[:-1], 9.0)

    @pytest.mark.parametrize("bad, why", [("x", "replicas must be a number"), (0, "not a whole number of 1 or more")])
    def test_a_bad_count_says_what_is_accepted(self, bad, why):
        assert why in xf.PLANNER_WHY("TPOT_P95", *ARGS, bad)
