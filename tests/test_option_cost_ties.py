"""A tie in cost between separate options goes to the one met at the held-out slow end (``review.recommended_first``),
the rule a tie between groups of one option goes by (trial 27 F3: ``evaluate._kept_on_ties``); still tied, scenario
order. Trial 27's b200tp.toml listed "B200 TP2" and "B200 TP4" as two options, 24 GPUs and $46,704 a month each, and
recommended TP2, listed first, though no fleet of it meets the targets at the slow end while 48 GPUs of TP4 do.

Expected figures are test_trial27_groups.py's (the trial's b200tp.md TP2 and TP4 rows; the slow end's 48 GPUs,
$93,408 a month, is the review's Options "Held-out slow end" for the 4-GPU group) unless a comment says otherwise.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_export import review_of, write_scenario

from planner.export.reason import cost_tie_words
from planner.export.review import recommended_first
from planner.export.slow_end import NOT_MET

#: test_trial27_groups.py's workload (the trial's my/chat.toml), its "B200 TP2, bought" option, and the same with
#: the group fixed at 4, listed second
SCENARIO = """
title = "Chat assistant Llama 3.3 70B: 2027 purchase, TP2 or TP4"
traffic_change = 0.2
[workload]
peak_requests_per_s = 30
average_requests_per_s = 12
prompt_tokens_mean = 1500
prompt_tokens_high = 4000
output_tokens_mean = 300
output_tokens_high = 1000
high_percentile = 95
ttft_target_s = 1.5
tpot_target_s = 0.05
[defaults]
model = "Llama-3.3-70B"
spare_replicas = 1
gpu = "B200"
pricing = "purchase"
purchase_usd = 45000
node_size = 8
[[option]]
name = "B200 TP2, bought"
gpus_per_replica = 2
[[option]]
name = "B200 TP4, bought"
gpus_per_replica = 4
"""


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    return review_of(write_scenario(tmp_path_factory.mktemp("ties"), SCENARIO))


def test_the_two_options_tie_on_cost_and_only_tp4_is_met_at_the_slow_end(review):
    tp2, tp4 = (next(r for r in review.results if r.option.name == n) for n in ("B200 TP2, bought", "B200 TP4, bought"))
    assert (tp2.gpus, round(tp2.monthly_usd)) == (tp4.gpus, round(tp4.monthly_usd)) == (24, 46_704)
    assert tp2.monthly_usd == tp4.monthly_usd  # exactly: _kept_on_ties's equality
    assert not tp2.slow_end.meets  # the trial's TP2 row: "not met at the slow end"
    assert tp4.slow_end.meets and (tp4.slow_end.gpus, round(tp4.slow_end.monthly_usd)) == (48, 93_408)


def test_the_tie_recommends_the_second_option_met_at_the_slow_end(review):
    assert review.recommended.option.name == "B200 TP4, bought"
    assert [r.option.name for r in review.results] == ["B200 TP4, bought", "B200 TP2, bought"]


def test_the_recommendation_says_why_it_chose_on_a_tie(review):
    assert (
        "The next option, B200 TP2, bought, is tied on cost with it (24 GPUs, $46,704 a month each); chosen because "
        "it meets the targets at the slow end of the held-out ranges (48 GPUs, $93,408 a month (+24 GPUs, +$46,704 "
        f"against the plan)) and B200 TP2, bought's fleet does not ({NOT_MET})"
    ) in review.reason
    assert "costs $0 a month more" not in review.reason


def option(name, usd=100.0, gpus=8, met: bool | None = True, meets=True, engine="vLLM"):
    """An option's result by hand: its cost, GPUs, and slow end (None: none, not known)."""
    slow_end = None if met is None else SimpleNamespace(meets=met, gpus=gpus, monthly_usd=usd)
    return SimpleNamespace(
        option=SimpleNamespace(name=name), monthly_usd=usd, gpus=gpus, meets=meets, slow_end=slow_end,
        engine=SimpleNamespace(name=engine),
    )  # fmt: skip


class TestRecommendedFirst:
    """``recommended_first`` on ranked options given by hand (meeting first, then cost, then scenario order)."""

    @staticmethod
    def names(ranked):
        return [r.option.name for r in recommended_first(ranked)]

    def test_both_met_at_the_slow_end_keeps_scenario_order(self):
        assert self.names([option("a"), option("b")]) == ["a", "b"]

    def test_neither_met_keeps_scenario_order(self):
        assert self.names([option("a", met=False), option("b", met=False)]) == ["a", "b"]

    def test_the_first_met_of_three_tied_wins_the_rest_keep_their_order(self):
        ranked = [option("a", met=False), option("b", met=False), option("c"), option("d")]
        assert self.names(ranked) == ["c", "a", "b", "d"]

    def test_cost_still_comes_first(self):
        assert self.names([option("a", 100, met=False), option("b", 101)]) == ["a", "b"]

    def test_equal_cost_on_other_gpus_is_no_tie(self):  # _kept_on_ties ties on cost and GPUs
        assert self.names([option("a", 100, 8, met=False), option("b", 100, 10)]) == ["a", "b"]

    def test_a_slow_end_not_known_counts_as_met(self):  # as evaluate._cheapest_under_load takes it
        assert self.names([option("a", met=None), option("b")]) == ["a", "b"]
        assert self.names([option("a", met=False), option("b", met=None)]) == ["b", "a"]

    def test_an_option_that_meets_no_target_is_not_promoted(self):
        assert self.names([option("a", met=False), option("b", meets=False)]) == ["a", "b"]

    def test_the_ideal_engine_does_not_tie_with_a_real_one(self):  # it ranks after those a real engine runs
        assert self.names([option("a", met=False), option("b", engine="ideal")]) == ["a", "b"]


class TestCostTieWords:
    def test_no_tie_says_nothing(self):
        assert cost_tie_words(option("a", 100), option("b", 120)) == ""

    def test_both_met_says_scenario_order(self):
        said = cost_tie_words(option("a"), option("b"))
        assert said.endswith(
            "it comes first in the scenario (both meet the targets at the slow end of the held-out ranges)"
        )

    def test_neither_met_says_scenario_order(self):
        said = cost_tie_words(option("a", met=False), option("b", met=False))
        assert "(neither meets the targets at the slow end" in said

    def test_no_slow_end_says_the_ranking(self):
        assert "no slow end of the held-out ranges" in cost_tie_words(option("a", met=None), option("b"))
