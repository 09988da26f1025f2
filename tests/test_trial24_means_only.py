"""Trial 24 F1: a review sized under load with every request at the mean lengths (``sizing_lengths = "means"``; the
default until s206, now "spread"), while the workload's high lengths describe a spread (2,000 / p95 6,000 prompt
tokens): the Risk sentence says the percentiles are the means' and names ``sizing_lengths = "spread"``
(tests/test_sizing_spread.py tests that sizing)."""

from __future__ import annotations

from test_export import review_of, write_scenario

from planner.export.reason import means_only, risk

SCENARIO = """
title = "chat"
[workload]
peak_requests_per_s = 10
average_requests_per_s = 4
prompt_tokens_mean = 2000
prompt_tokens_high = {high}
output_tokens_mean = 400
output_tokens_high = {out_high}
ttft_target_s = 1.5
tpot_target_s = 0.06
{extra}
[[option]]
name = "{bought}"
gpu = "H100"
model = "Llama-3.3-70B"
weight_precision = "fp8"
gpus_per_replica = 4
"""

SAID = (
    " The simulated percentiles are of requests all at the mean lengths: longer prompts, as the high lengths say there "
    'are, queue longer (sizing_lengths = "spread" sizes on lengths drawn around them).'
)


def recommended(tmp_path, high=6000, out_high=1000, extra=""):
    text = SCENARIO.format(high=high, out_high=out_high, extra=extra, bought="{bought}")
    review = review_of(write_scenario(tmp_path, text, bought="H100 fp8"))
    return review.scenario, review.recommended


class TestMeansOnlyIsSaid:
    def test_a_spread_sized_at_the_means_says_so(self, tmp_path):
        scenario, rec = recommended(tmp_path, extra='sizing_lengths = "means"')
        assert rec.under_load is not None
        assert means_only(scenario, rec) == SAID
        assert SAID in risk(scenario, rec)

    def test_equal_high_and_mean_lengths_are_the_workload(self, tmp_path):
        scenario, rec = recommended(tmp_path, high=2000, out_high=400)
        assert means_only(scenario, rec) == ""

    def test_sized_on_the_spread_says_nothing(self, tmp_path):
        scenario, rec = recommended(tmp_path, extra='sizing_lengths = "spread"')
        assert means_only(scenario, rec) == ""

    def test_the_default_is_the_spread(self, tmp_path):
        scenario, rec = recommended(tmp_path)
        assert scenario.workload.sizing_lengths == "spread" and means_only(scenario, rec) == ""

    def test_littles_law_simulates_nothing(self, tmp_path):
        scenario, rec = recommended(tmp_path, extra='sizing = "littles-law"')
        assert means_only(scenario, rec) == ""
