"""An option its margin multiplies is said to be sized on the margin (trial 9 F1, s198)."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.export.review import build_review
from planner.export.scenario import load_scenario

SCENARIO = """title = "DeepSeek-R1 with data-parallel attention"
[workload]
peak_requests_per_s = 20
average_requests_per_s = 8
prompt_tokens_mean = 2000
prompt_tokens_high = 6000
output_tokens_mean = 800
output_tokens_high = 2000
high_percentile = 95
ttft_target_s = 3
tpot_target_s = 0.06
sizing = "littles-law"
[[option]]
name = "H200 sglang dp-ep"
gpu = "H200"
model = "DeepSeek-R1"
engine = "sglang"
parallelism = "dp-ep"
gpus_per_replica = 8
"""


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    path = tmp_path_factory.mktemp("t9") / "r1.toml"
    path.write_text(SCENARIO)
    return build_review(load_scenario(path), default_catalog(), date="2026-06-01")


def test_a_fleet_its_margin_multiplies_is_said_to_be_sized_on_the_margin(review):
    """DeepSeek-R1 on H200 + SGLang takes +202% (heldout_serving_residuals.csv 'H200 SXM 141GB,sglang,MLA,all,13,
    -0.02,0.89,2.02': 9 of the 13 runs are SGLang 0.4.3's), which cut the 60 ms TPOT target to 19.9 ms and sized the
    trial's simulated dp-ep fleet at 1,736 GPUs where 32 meet it as predicted, printed as a plain quote (trial 9 F1).
    Under Little's law here: 192 against 48; the review says the fleet is the far end of a range."""
    from planner.export.money_tables import MARGIN_SETS_FLEET, margin_sets_fleet_line, money_lines

    (r,) = review.results
    bare = review.outlook.of(r.option.name).gpus_without_margin
    assert r.margin == pytest.approx(2.02) and r.gpus >= MARGIN_SETS_FLEET * bare
    line = margin_sets_fleet_line(review)
    # trial 20 F1: such a slow end is no fleet to budget, and the line opens by saying so
    assert line.startswith(
        "Low confidence, measure one replica first: sized on the margin, not the traffic: "
        f"H200 sglang dp-ep {r.gpus:,} GPUs at +202% against"
    )
    assert f"against {bare:,} as predicted (x{r.gpus / bare:.0f}; the margin from 13 MLA-model runs on H200" in line
    assert line in money_lines(review)
