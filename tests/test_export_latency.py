"""`planner export`'s latency-against-load view (issue 22, item 2): each option's planned fleet, its replicas fixed,
under more or less traffic; p50 and the sizing percentile of TTFT and TPOT, the targets and the planned peak marked,
and the headroom to the goals."""

from __future__ import annotations

import io
import math
import re

import openpyxl
import pytest

from planner.catalog import default_catalog
from planner.export import build_review, render
from planner.export.evaluate import HEADROOM_STEP, LOAD_CURVE
from planner.export.scenario import parse_scenario
from planner.export.tables import headroom_table, latency_table
from planner.serving.fleet import past_capacity
from planner.serving.load import Replica, latency_under_load

SCENARIO = {
    "title": "Latency view",
    "workload": {
        "peak_requests_per_s": 40,
        "average_requests_per_s": 20,
        "prompt_tokens_mean": 512,
        "prompt_tokens_high": 2048,
        "output_tokens_mean": 128,
        "output_tokens_high": 512,
        "ttft_target_s": 1.0,
        "tpot_target_s": 0.05,
    },
    "defaults": {"model": "Llama-3.1-8B", "weight_precision": "bf16", "kv_precision": "bf16", "engine": "vllm"},
    "option": [{"name": "H100 rented", "gpu": "H100", "pricing": "cloud", "cloud_usd_per_gpu_hour": 2.0}],
}


@pytest.fixture(scope="module")
def review():
    return build_review(parse_scenario(SCENARIO), default_catalog(), date="2026-12-01")


class TestLoadCurve:
    def test_the_curve_at_the_peak_is_the_run_the_fleet_was_sized_on(self, review):
        """At 1x the planned peak each replica takes peak / replicas: the same simulated run as the sizing's."""
        r = review.recommended
        c, sim = r.load_curve, r.under_load
        i = c.multipliers.index(1.0)
        assert c.replicas == sim.replicas and c.multipliers == LOAD_CURVE
        assert c.ttft_high_s[i] == pytest.approx(sim.result.ttft_s.at(sim.percentile))
        assert c.tpot_high_s[i] == pytest.approx(sim.result.tpot_s.at(sim.percentile))

    def test_latency_rises_with_traffic_and_the_headroom_is_where_it_passes_the_goal(self, review):
        """The high-percentile TTFT does not fall as traffic grows; within the headroom both figures meet their goals,
        a step past it one does not (simulated again here, as the curve was, a rate past the simulated capacity,
        ``planner.serving.fleet.past_capacity``, counting as a miss)."""
        r = review.recommended
        c = r.load_curve
        finite = [x for x in c.ttft_high_s if math.isfinite(x)]
        assert finite == sorted(finite) and len(finite) >= 4
        assert 0.0 <= c.headroom < 1.0
        replica = Replica(
            "H100", "Llama-3.1-8B", int(r.replica.gpus), max_num_seqs=int(r.replica.batch), engine=r.engine
        )
        q = c.percentile

        def meets(mult: float) -> bool:
            rate = 40 * mult / c.replicas
            # past the replica's simulated capacity, a queue grows without bound: the goal is missed
            if past_capacity(replica, 512, 128, rate):
                return False
            run = latency_under_load(replica, 512, 128, rate_per_s=rate)
            return run.ttft_s.at(q) <= c.ttft_goal_s and run.tpot_s.at(q) <= c.tpot_goal_s

        assert meets(1 + c.headroom)
        assert not meets(1 + c.headroom + HEADROOM_STEP)

    def test_tables(self, review):
        """The data table has one row per multiplier and four figures per option; the headroom table one row per
        option, in words."""
        data, heads = latency_table(review), headroom_table(review)
        assert len(data.rows) == len(LOAD_CURVE) and len(data.columns) == 1 + 4
        assert data.rows[LOAD_CURVE.index(1.0)][0] == pytest.approx(40.0)
        assert heads.rows[0][0] == "H100 rented"
        assert re.fullmatch(r"\+\d+%|under 2%|over 100%", heads.rows[0][-1])


class TestWorkbook:
    def test_a_sheet_of_two_charts_after_the_cost_charts(self, review):
        """Latency (TTFT and TPOT against traffic) and its data follow Charts and Chart data."""
        book = openpyxl.load_workbook(io.BytesIO(render(review, "xlsx")))
        names = book.sheetnames
        assert names.index("Latency") == names.index("Chart data") + 1
        assert names[names.index("Latency") + 1] == "Latency data"
        assert len(book["Latency"]._charts) == 2


class TestMarkdown:
    def test_the_review_states_the_headroom(self, review):
        """The Markdown review (and the PDF made from it) carries the headroom table under its own heading."""
        md = render(review, "md").decode()
        assert "## Latency under load" in md
        section = md.split("## Latency under load", 1)[1]
        assert "| H100 rented |" in section and "more traffic than the planned peak" in section.split("|", 1)[0]
