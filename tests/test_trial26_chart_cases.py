"""Trial 26 F4 (an FP&A user comparing buy and rent): the Charts page contradicted Demand cases.

Trial (/work/trial26-findings.md, F4): "Charts show bought gpt-oss at 2x peak = 16 GPUs/$24k; Demand cases say 8
GPUs/$11,998 (and reverse which is cheaper)". The charts scaled the planned fleet (``evaluate.fleet_at``: its group
and requests/s per replica) at every traffic level while Demand cases size each option afresh
(``evaluate.sized_again``); the note under the chart said the two "can differ by a replica or a group". The charts
now carry, at the traffic of each level the review sizes afresh (the plan, the -/+ traffic_change and the stress
case), those very fleets (``evaluate.charted_fleets``), and scale between them from the nearest such level below.

The scenario is the trial's my/support.toml with its gpt-oss-120b options (8 requests/s at peak today, +100% over 12
months: a planned peak of 16 requests/s), and gpt-oss-120b on H200 rented, whose planned fleet scaled to twice the
peak needs 5 GPUs where the fresh sizing there needs 4 (found by sizing it both ways before the fix: so the checks
below fail where the chart scales the plan). Since trial 26 F9 (the group tie goes to headroom) the bought H100 fleet
keeps 2-GPU replicas and its 8 GPUs carry twice the peak, as the trial's Demand cases found.
"""

from __future__ import annotations

import io
import math
from dataclasses import replace as dc_replace

import pandas as pd
import pytest

from planner.catalog import default_catalog
from planner.export import build_review, render
from planner.export.evaluate import SWEEP, at_traffic, chart_multipliers, fleet_at, sized_levels
from planner.export.scenario import parse_scenario
from planner.export.tables import charts_sizing_text

#: The trial's workload (my/support.toml) and its finance block; the review's date as the bench's.
SCENARIO = {
    "title": "Trial 26 F4: gpt-oss-120b bought vs rented",
    "traffic_change": 0.2,
    "workload": {
        "peak_requests_per_s": 8,
        "average_requests_per_s": 3,
        "prompt_tokens_mean": 1500,
        "prompt_tokens_high": 4000,
        "output_tokens_mean": 300,
        "output_tokens_high": 900,
        "high_percentile": 95,
        "ttft_target_s": "2 s",
        "tpot_target_s": "50 ms",
        "growth_over_horizon": "100%",
        "horizon_months": 12,
    },
    "defaults": {"spare_replicas": 1, "amortization_months": 36},
    "option": [
        {"name": "gpt-oss-120b, H100 bought", "gpu": "H100", "model": "gpt-oss-120b", "pricing": "purchase"},
        {"name": "gpt-oss-120b, H100 rented", "gpu": "H100", "model": "gpt-oss-120b", "pricing": "cloud"},
        {"name": "gpt-oss-120b, H200 rented", "gpu": "H200", "model": "gpt-oss-120b", "pricing": "cloud"},
    ],
    "finance": {"horizon_months": 36, "cost_of_capital": 0.08},
}
PLANNED_PEAK = 16.0  # requests/s: 8 today x (1 + 100% growth)
DATE = "2026-12-01"


@pytest.fixture(scope="module")
def review():
    """The scenario's review, simulated as the trial's export was (one per module: ~25 s of CPU)."""
    return build_review(parse_scenario(SCENARIO, "f4.toml"), default_catalog(), source="f4.toml", date=DATE)


@pytest.fixture(scope="module")
def sheets(review):
    """The review's xlsx, every sheet read by pandas as a finance user's script reads it."""
    return pd.read_excel(io.BytesIO(render(review, "xlsx")), sheet_name=None)


def by_name(review, name):
    return next(r for r in review.results if r.option.name == name)


class TestTheChartsCarryTheDemandCases:
    def test_every_option_of_demand_cases_is_charted(self, sheets):
        """The three options meet the targets and cost within 3x the cheapest: each has a column on Chart data, so
        the check below covers every option of Demand cases."""
        options = set(sheets["Demand cases"]["Option"])
        assert len(options) == 3
        for name in options:
            assert f"{name}: GPUs" in sheets["Chart data"] and f"{name}: monthly cost" in sheets["Chart data"]

    def test_the_chart_data_at_each_cases_traffic_is_the_cases_fleet(self, sheets):
        """F4's expectation: at the traffic of each demand case (x planned peak x 16 requests/s: 12.8, 16 and 32
        requests/s) the Chart data's GPUs and monthly cost are the Demand cases row's, for every option."""
        cases, data = sheets["Demand cases"], sheets["Chart data"]
        traffic = data["Peak traffic (requests/s)"]
        assert len(cases) == 9  # 3 options x (low, base, high)
        for _, case in cases.iterrows():
            rows = data[[math.isclose(t, case["x planned peak"] * PLANNED_PEAK) for t in traffic]]
            assert len(rows) == 1, (case["Option"], case["Demand case"])
            row = rows.iloc[0]
            assert row[f"{case['Option']}: GPUs"] == case["GPUs"], (case["Option"], case["Demand case"])
            assert row[f"{case['Option']}: monthly cost"] == pytest.approx(case["Monthly cost"], rel=1e-9)

    def test_the_chart_data_at_the_sensitivity_is_details_minus_and_plus_columns(self, review, sheets):
        """At -/+20% (12.8 and 19.2 requests/s) the Chart data's GPUs are each option's ``low`` and ``high`` fleets,
        which Details' -/+ columns show (sized afresh: test_trial14_money's F1)."""
        data = sheets["Chart data"]
        for r in review.results:
            for change, fleet in ((0.8, r.low), (1.2, r.high)):
                row = data[[math.isclose(t, change * PLANNED_PEAK) for t in data["Peak traffic (requests/s)"]]]
                assert row[f"{r.option.name}: GPUs"].item() == int(fleet.gpus)
                assert row[f"{r.option.name}: monthly cost"].item() == pytest.approx(float(fleet.monthly_usd))

    def test_the_scaled_plan_would_have_differed_at_the_high_case(self, review, sheets):
        """H200 rented at +20% (19.2 requests/s): the planned fleet scaled (what the chart showed before) needs 4 GPUs,
        the fleet sized afresh there 3 (1-GPU replicas, each running at a higher simulated rate); the chart shows 3.
        (At twice the peak, 32 requests/s, the two were 5 and 4 until s208 drew lengths truncated at the slot; both 5
        since.)"""
        r = by_name(review, "gpt-oss-120b, H200 rented")
        assert int(fleet_at(r, review.scenario.workload, 1.2).gpus) == 4
        assert r.sized_at(1.2).gpus == 3
        data = sheets["Chart data"]
        row = data[[math.isclose(t, 1.2 * PLANNED_PEAK) for t in data["Peak traffic (requests/s)"]]]
        assert row["gpt-oss-120b, H200 rented: GPUs"].item() == 3

    def test_the_bought_fleet_at_twice_the_peak_is_the_trials_eight_gpus(self, sheets):
        """The trial's Demand cases: "gpt-oss-120b, H100 bought | high (x2) | 8 GPUs | $11,998"; the chart showed
        16 GPUs, ~$24,000. Both now read 8 GPUs and the same money."""
        cases = sheets["Demand cases"]
        high = cases[(cases["Option"] == "gpt-oss-120b, H100 bought") & (cases["x planned peak"] == 2)].iloc[0]
        data = sheets["Chart data"]
        row = data[[math.isclose(t, 32.0) for t in data["Peak traffic (requests/s)"]]].iloc[0]
        assert high["GPUs"] == row["gpt-oss-120b, H100 bought: GPUs"] == 8
        assert row["gpt-oss-120b, H100 bought: monthly cost"] == pytest.approx(high["Monthly cost"])


class TestTheOtherTrafficLevels:
    def test_the_levels_are_the_sweep_and_the_levels_sized_afresh(self, review, sheets):
        """0.25x to 3x in steps of 0.25x (``SWEEP``) with 0.8x and 1.2x added (2x is on the sweep): 14 rows."""
        expected = sorted({*SWEEP, 0.8, 1.2})
        assert review.sweep_multipliers == pytest.approx(expected)
        assert list(sheets["Chart data"]["Peak traffic (requests/s)"]) == pytest.approx(
            [PLANNED_PEAK * m for m in expected]
        )

    def test_between_the_levels_the_nearest_level_below_is_scaled(self, review):
        """At 1.75x the fleet sized afresh at 1.2x, scaled to 1.75x; at 2.25x the one sized at 2x; at 0.25x (under
        every level sized afresh) the lowest, 0.8x's. Each is ``fleet_at`` of that fresh result on the workload at
        its own traffic."""
        w = review.scenario.workload
        for r in review.results:
            for m, level in ((1.75, 1.2), (2.25, 2.0), (0.25, 0.8)):
                j = review.sweep_multipliers.index(m)
                scaled = fleet_at(r.sized_at(level), at_traffic(w, level), m / level)
                assert int(r.sweep.gpus[j]) == int(scaled.gpus), (r.option.name, m)
                assert float(r.sweep.monthly_usd[j]) == pytest.approx(float(scaled.monthly_usd))

    def test_the_note_under_the_charts_names_the_levels_and_how_the_rest_are_sized(self, review):
        """The note names the levels sized afresh, their traffic and the tables they match, and the rule between."""
        text = charts_sizing_text(review)
        assert text.startswith(
            "At 0.8x, 1x, 1.2x and 2x the planned peak (12.8, 16, 19.2 and 32 requests/s: Demand cases and Details' "
            "-/+ columns) each option's fleet is sized afresh at that traffic"
        )
        assert "the nearest of those levels below (the lowest, under them) scaled to it" in text
        assert "differ by a replica or a group" not in text and "past the charts" not in text

    def test_a_stress_case_past_the_charts_is_said_to_be_left_off(self, review):
        """A stress multiplier of 5 lies past the charts' 3x: not a chart level, and the note says so."""
        finance = review.scenario.finance.model_copy(update={"stress_multiplier": 5.0})
        scenario = review.scenario.model_copy(update={"finance": finance})
        assert sized_levels(scenario) == pytest.approx((0.8, 1.2, 5.0))
        levels = chart_multipliers(sized_levels(scenario))
        assert 5.0 not in levels and max(levels) == 3.0
        text = charts_sizing_text(dc_replace(review, scenario=scenario, sweep_multipliers=levels))
        assert text.startswith("At 0.8x, 1x and 1.2x the planned peak (12.8, 16 and 19.2 requests/s")
        assert text.endswith("The high demand case (x5) lies past the charts.")
