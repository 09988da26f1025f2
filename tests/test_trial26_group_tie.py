"""Trial 26 F9 and F4: gpt-oss-120b bought on H100 (8-GPU nodes) kept 8 x 1-GPU replicas (Latency sheet headroom +2%)
over the same 8 GPUs as 4 x 2-GPU replicas, which the stress case found carry twice the peak; the charts then scaled
the 1-GPU fleet to 16 GPUs at 2x the peak where Demand cases said 8. The group choice now breaks a tie in cost by
headroom at peak (``evaluate._cost_then_headroom``), and the chart and the table agree.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_export import review_of, write_scenario

from planner.export.evaluate import _cost_then_headroom, fleet_at

#: The trial's /tmp/trial26/my/tp2.toml option "gpt-oss-120b, H100 bought, any" (no gpus_per_replica), lengths named.
SCENARIO = """
title = "Customer support chat"
traffic_change = 0.2
[workload]
peak_requests_per_s = 8
average_requests_per_s = 3
prompt_tokens_mean = 1500
prompt_tokens_high = 4000
output_tokens_mean = 300
output_tokens_high = 900
high_percentile = 95
ttft_target_s = "2 s"
tpot_target_s = "50 ms"
growth_over_horizon = "100%"
horizon_months = 12
sizing_lengths = "means"
[defaults]
spare_replicas = 1
amortization_months = 36
[[option]]
name = "gpt-oss-120b, H100 bought"
gpu = "H100"
model = "gpt-oss-120b"
pricing = "purchase"
[finance]
horizon_months = 36
cost_of_capital = 0.08
"""


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    return review_of(write_scenario(tmp_path_factory.mktemp("tie"), SCENARIO))


@pytest.fixture(scope="module")
def rec(review):
    return review.recommended


class TestATieInCostGoesToHeadroom:
    def test_the_same_eight_gpus_are_kept_as_2_gpu_replicas(self, rec):
        # the trial: 1-GPU and 2-GPU groups both cost one 8-GPU node ($11,998 a month); 2-GPU's headroom is larger
        assert (rec.candidate.gpus_per_replica, rec.gpus, round(rec.monthly_usd)) == (2, 8, 11_998)
        # 1 serving replica at 8 requests/s, 4 deployed: 1 - 8 / (4 x 8) (the 1-GPU fleet's: 1 - 8 / (8 x 8 / 5))
        assert float(rec.fleet.headroom_peak) == pytest.approx(0.75)

    def test_the_chart_at_twice_the_peak_agrees_with_the_stress_case(self, review, rec):
        # F4: the charts scale the kept fleet (2 serving + 1 spare replicas of 2 -> one 8-GPU node); Demand cases'
        # high (x2) sizes afresh: 8 GPUs, where the 1-GPU fleet scaled gave 16
        scaled = fleet_at(rec, review.scenario.workload, 2.0)
        assert rec.sized_at(2.0).gpus == int(scaled.gpus) == 8


class TestTheKey:
    """``_cost_then_headroom`` on fleets given by hand: cost, then GPUs, then the larger headroom, then the smaller
    group."""

    @staticmethod
    def key(usd, gpus, headroom, group):
        return _cost_then_headroom(
            SimpleNamespace(monthly_usd=usd, gpus=gpus, headroom_peak=headroom), SimpleNamespace(gpus_per_replica=group)
        )

    def test_cost_first_then_headroom_then_the_smaller_group(self):
        assert self.key(100, 8, 0.1, 1) < self.key(101, 8, 0.9, 2)  # cheaper wins whatever the headroom
        assert self.key(100, 8, 0.75, 2) < self.key(100, 8, 0.375, 1)  # the trial's tie: more headroom wins
        assert self.key(100, 8, 0.5, 1) < self.key(100, 8, 0.5, 2)  # a full tie: the smaller group
