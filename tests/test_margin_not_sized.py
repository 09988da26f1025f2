"""A fleet the latency margin's cliff sets is not sized, not recommended (user trial 22, F1).

Trial 22's budget review recommended DeepSeek-V3 on 8 x H200 with data-parallel attention + expert parallelism at
2,880 GPUs ($10,822,104 a month) for 30 requests/s, "Meets targets: yes", where `plan` sizes 8 GPUs: the +179% margin
(TP8 runs of vLLM 0.7.x) cut the 50 ms TPOT target to 17.9 ms, 89% of which one sequence's decode on an idle replica
takes, just under the 90% guard. These tests read the trial's scenario (its `my/small-dpep.toml`, and a DP-EP option
beside TP8 as in its `my/moe2026.toml`) as the specification.
"""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.export.not_sized import MARGIN_NOT_SIZED, NOT_SIZED
from planner.export.review import TargetNotMetError, build_review
from planner.export.scenario import load_scenario

WORKLOAD = """[workload]
peak_requests_per_s = 30
average_requests_per_s = 12
prompt_tokens_mean = 213
prompt_tokens_high = 1024
output_tokens_mean = 212
output_tokens_high = 800
ttft_target_s = 2
tpot_target_s = 0.05
sizing_lengths = "means"
"""

DPEP = """[[option]]
name = "DSV3 H200 DPEP"
parallelism = "dp-ep"
model = "DeepSeek-V3"
gpu = "H200"
"""

TP8 = """[[option]]
name = "DSV3 H200 TP8"
model = "DeepSeek-V3"
gpu = "H200"
gpus_per_replica = 8
parallelism = "tp"  # as its name says: without it the review sizes tp and dp-ep and keeps the cheaper (trial 24 F15)
"""


def _review(tmp_path, text):
    path = tmp_path / "t22.toml"
    path.write_text('title = "small"\n' + text)
    return build_review(load_scenario(path), default_catalog(), date="2026-12-06")


#: What a not-sized option of the review says of its fleet: the search under load stopped at ten times the 16 GPUs
#: as predicted (trial 22, F4: it went on to 2,880 GPUs, a figure the review then set aside), so no exact fleet.
STOPPED = (
    "so the fleet would be 10 times or more the 16 GPUs ($60,123 a month) sized on the prediction: no fleet of fewer "
    "than 160 GPUs ($601,228 a month) meets the margin's goals under load, and the search stopped there"
)


def test_the_trials_one_dp_ep_option_is_refused_as_not_sized(tmp_path):
    """my/small-dpep.toml alone: no recommendation of 2,880 GPUs; the refusal names both fleets (the one with the
    margin as a bound: 10 times or more) and the margin's source (TP8 runs, none with data-parallel attention) and
    says to measure one replica first."""
    with pytest.raises(TargetNotMetError) as err:
        _review(tmp_path, WORKLOAD + DPEP)
    text = str(err.value)
    assert "no option is sized" in text and NOT_SIZED in text
    assert "+149% latency margin the TPOT goal is 20.1 ms" in text
    assert STOPPED in text and "2,880" not in text and "x180" not in text
    assert "layout TP8" in text and "none of these runs used data-parallel attention" in text


def test_the_search_with_the_margin_stops_at_ten_times_the_bare_fleet(tmp_path, monkeypatch):
    """The bare fleet (16 GPUs: 1 replica of 8 + 1 spare) is sized first; the fleet with the margin is then searched
    below 160 GPUs only: at most 18 serving replicas of 8 (+ 1 spare: 152 GPUs; 19 are 160), never the 360 replicas
    (2,880 GPUs) the search went on to before (trial 22, F4)."""
    import planner.export.evaluate as ev

    searched = []
    real = ev.fewest_replicas

    def spy(replica, *args, **kwargs):
        searched.append((int(replica.gpus), kwargs["max_replicas"], kwargs["tpot_target_s"]))
        return real(replica, *args, **kwargs)

    monkeypatch.setattr(ev, "fewest_replicas", spy)
    with pytest.raises(TargetNotMetError):
        _review(tmp_path, WORKLOAD + DPEP)
    bare = [s for s in searched if s[2] == pytest.approx(0.05)]
    margin = [s for s in searched if s[2] < 0.04]
    assert [s[:2] for s in bare] == [(8, ev.MAX_REPLICAS)]  # sized once, the search unbounded
    assert margin and all(s[:2] == (8, 18) for s in margin)
    assert margin[0][2] == pytest.approx(0.0201, abs=5e-5)  # the +149% goal (0.05 / 2.49)


@pytest.fixture(scope="module")
def beside_tp8(tmp_path_factory):
    return _review(tmp_path_factory.mktemp("t22"), WORKLOAD + DPEP + TP8)


def test_dp_ep_is_not_recommended_at_thousands_of_gpus(beside_tp8):
    """Beside TP8 (96 GPUs, x3 its 32 as predicted: under the bound) the DP-EP option is neither recommended nor
    ranked as sized: it does not meet its targets, and its row says why."""
    review = beside_tp8
    assert review.recommended.option.name == "DSV3 H200 TP8"
    assert review.recommended.gpus < MARGIN_NOT_SIZED * review.outlook.of("DSV3 H200 TP8").gpus_without_margin
    dpep = next(r for r in review.results if r.option.name == "DSV3 H200 DPEP")
    assert not dpep.meets and dpep.fleet is None and dpep.slow_end is None
    assert dpep.shortfall.startswith(NOT_SIZED) and STOPPED in dpep.shortfall
    assert review.results[-1] is dpep  # ranked after every sized option


def test_the_low_confidence_line_reads_the_actual_batch(beside_tp8):
    """The summary's low-confidence sentence gave "can run only a few sequences at once" beside a headline of
    "at most 1,848 sequences at once"; it now states what the simulated replica ran against what it may run."""
    from planner.export.money_tables import margin_sets_fleet_line

    line = margin_sets_fleet_line(beside_tp8)
    assert "only a few sequences at once" not in line
    rec = beside_tp8.recommended
    if line:  # TP8 at x3: sized on the margin, not refused
        assert "sequences a replica may run in flight at the planned peak" in line
        assert f"of the {rec.batch_per_replica:,} " in line


def test_the_data_parallel_lever_is_not_sized_either(beside_tp8):
    """`planner export my/wb/dsv3-mine.xlsx` put the lever at 2,880 GPUs, -$10,461,367: a lever's fleet is judged
    as an option's, so it shows no saving and says why."""
    import math

    lever = next(lv for lv in beside_tp8.levers if lv.name == "Data-parallel attention")
    assert math.isnan(lever.saving_usd_per_month) and not lever.result.meets
    assert lever.note.startswith(f"does not meet the targets: {NOT_SIZED}")
    # the lever's fleet was searched in full (levers size it, then judge it): its exact figure, and the ratio
    assert "the fleet would be 408 GPUs ($1,533,131 a month), x26 the 16 GPUs ($60,123 a month)" in lever.note


def test_the_stopped_search_is_a_field_of_the_result(tmp_path):
    """The search that stopped at the bound says so in a typed field (``Result.search_stopped_at_gpus``: the bound in
    GPUs), which ``not_sized`` reads; its shortfall is ``past_limit_text`` of that bound. The bare fleet is 16 GPUs,
    so ``review.sized`` bounds the search at 160."""
    from planner.export.evaluate import evaluate, past_limit_text
    from planner.export.review import sized

    path = tmp_path / "t22.toml"
    path.write_text('title = "small"\n' + WORKLOAD + DPEP)
    scenario = load_scenario(path)
    option = scenario.option[0]
    stopped = evaluate(option, scenario.workload, default_catalog(), 0.2, most_gpus=lambda: 160.0)
    assert stopped.search_stopped_at_gpus == 160 and stopped.shortfall == past_limit_text(160)
    judged, bare = sized(option, scenario, default_catalog())
    assert bare.gpus == 16 and judged.search_stopped_at_gpus == MARGIN_NOT_SIZED * 16
    assert STOPPED in judged.shortfall
