"""Trial 24 F13: the recommended deployment's own published runs (gpt-oss-120b on 2 x H100 with vLLM 0.10.2,
gpustack-performance-lab: GPUSTACK-116 and -125 to -128 at high concurrency, TPOT predicted 45.8 ms vs 86.5 ms
published and so on; catalogs/reference/published_run_errors.csv) are 1.68x-1.95x slower on TPOT than predicted, while
the margin drawn from many deployments is +47%. The margin stays; the Risk sentence says where the deployment's own
runs disagree with it.
"""

from __future__ import annotations

from test_export import review_of, write_scenario

from planner.accuracy.same_deployment import same_deployment_runs
from planner.export.assumptions import option_deployment
from planner.export.own_runs import OWN_RUNS_LEAST
from planner.export.reason import own_runs_beyond_margin, risk

SCENARIO = """
title = "gpt-oss own runs"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 2000
prompt_tokens_high = 6000
output_tokens_mean = 400
output_tokens_high = 1000
ttft_target_s = 1.5
tpot_target_s = 0.06
sizing = "littles-law"
[[option]]
name = "{bought}"
gpu = "H100"
model = "gpt-oss-120b"
gpus_per_replica = 2
"""


def recommended(tmp_path, text: str = SCENARIO):
    review = review_of(write_scenario(tmp_path, text, bought="gpt-oss H100"))
    return review.scenario, review.recommended


class TestOwnRunsBeyondTheMargin:
    def test_the_deployments_runs_are_read_from_the_shipped_file(self, tmp_path):
        _, rec = recommended(tmp_path)
        runs = same_deployment_runs(option_deployment(rec))
        tpot = sorted(
            round(c.published / c.predicted, 2)
            for run in runs
            for c in run.figures
            if c.quantity in ("tpot_ms", "tpot_median_ms")
        )
        assert len(tpot) == 7 >= OWN_RUNS_LEAST
        assert tpot[-5:] == [1.68, 1.78, 1.81, 1.89, 1.95]  # the five high-concurrency runs, -41% to -49%

    def test_the_risk_sentence_names_them_against_the_margin(self, tmp_path):
        scenario, rec = recommended(tmp_path)
        assert rec.margin == 0.47
        said = own_runs_beyond_margin(rec)
        assert said == (
            # TTFT's too since trial 26 F18 (published_run_errors.csv: five of seven 1.68x-2.88x)
            " This deployment's own published runs are slower than that margin allows: 5 of 7 TPOT figures measured "
            "1.68x to 1.95x the prediction and 5 of 7 TTFT figures measured 1.68x to 2.88x the prediction (the +47% "
            "margin allows 1.47x; Assumptions names the runs): test one "
            "replica at its planned load before committing."
        )
        assert said in risk(scenario, rec)

    def test_a_wider_margin_holding_them_says_nothing(self, tmp_path):
        _, rec = recommended(
            tmp_path, SCENARIO.replace('sizing = "littles-law"', 'sizing = "littles-law"\nlatency_margin = 0.99')
        )
        assert rec.margin == 0.99  # allows 1.99x: all seven within
        assert own_runs_beyond_margin(rec) == ""
