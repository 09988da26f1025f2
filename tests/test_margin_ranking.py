"""The review says when its latency margin, not the options themselves, sets which option ranks first.

A user trial (s194): for examples/deepseek-dp-attention.toml the review recommended tensor parallelism (184 H200, +148%
margin) over data-parallel attention with expert parallelism (200), while ``plan --rate`` for the same traffic sized
72 and 24: the two surfaces ranked the layouts in opposite orders with nothing saying why. The margin multiplies TPOT,
and data-parallel attention runs a large batch close to the 80 ms target, so the margin takes most of its batch.
Each meeting option is also sized with no margin (``planner.export.outlook.without_margin``); where that ranks
another option first, the margin sentence says which and at what cost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.catalog import default_catalog
from planner.export import build_review
from planner.export.evaluate import evaluate
from planner.export.money_tables import margin_line
from planner.export.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def deepseek():
    path = ROOT / "examples" / "deepseek-dp-attention.toml"
    scenario = load_scenario(path)
    return scenario, build_review(scenario, default_catalog(), source=path.name, date="2026-12-05")


def test_the_review_names_the_option_that_ranks_first_without_margins(deepseek):
    """Data-parallel attention sized with latency_margin = 0 (an evaluation of its own, not the review's) costs
    less than tensor parallelism sized so, while the margin ranks tensor parallelism first: the sentence names it
    with that fleet."""
    scenario, review = deepseek
    assert review.recommended.option.parallelism in (None, "tp")
    bare = scenario.workload.model_copy(update={"latency_margin": 0.0})
    dp, tp = (
        evaluate(
            next(o for o in scenario.option if (o.parallelism or "tp") == layout),
            bare,
            default_catalog(),
            scenario.traffic_change,
        )
        for layout in ("dp-ep", "tp")
    )
    assert dp.meets and tp.meets and dp.monthly_usd < tp.monthly_usd
    line = margin_line(review)
    assert (
        f"Without margins the ranking changes: {dp.option.name} would be cheapest at {dp.gpus:,} GPUs, "
        f"${dp.monthly_usd:,.0f} a month (the recommendation {tp.gpus:,} GPUs, ${tp.monthly_usd:,.0f})"
    ) in line


def test_no_ranking_sentence_where_the_margin_changes_nothing():
    """README example: the recommendation (H100 bought, +0% margin) is also the cheapest option without margins."""
    path = ROOT / "examples" / "budget-review.toml"
    review = build_review(load_scenario(path), default_catalog(), source=path.name, date="2026-12-05")
    assert "ranking changes" not in margin_line(review)
