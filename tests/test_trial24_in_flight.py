"""Trial 24 F18: a workload given as requests in flight is turned into requests/s at the latency the sized fleet
delivers, not at the closed form's TPOT at the candidate batch.

The trial's case (/work/trial24-findings.md, F18): Llama-3.3-70B fp8 on 2-GPU H100 replicas, 2,000 / 400 tokens,
TTFT 1.5 s and TPOT 60 ms targets, margin 0.25, no spare, ``peak_concurrent_requests = 800``. Before: 800 / (TTFT
0.218 s + 400 x 24.2 ms, the closed form's TPOT at a batch of 44) = 80.71 requests/s and 76 GPUs (38 replicas),
while those replicas' simulated requests took 16.3 s on average (mean TPOT 40 ms under load): 80.71 x 16.3 =
1,319 in flight, not 800. The same review at 40 requests/s (the trial's my/one.toml) sizes 19 replicas, 38 GPUs,
whose requests take 16.2 s on average: 40 x 16.2 = 646 in flight, so 800 in flight is more traffic than 40
requests/s on this deployment, and less than 80.7.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace

import pytest

from planner.catalog import default_catalog
from planner.export.assumptions import in_flight_row
from planner.export.evaluate import IN_FLIGHT_TOLERANCE, _serving_replica, evaluate
from planner.export.scenario import parse_scenario
from planner.serving.fleet import replica_run

TRIAL = """
title = "one option, like plan"
[workload]
peak_concurrent_requests = 800
average_concurrent_requests = 320
prompt_tokens_mean = 2000
prompt_tokens_high = 2000
output_tokens_mean = 400
output_tokens_high = 400
ttft_target_s = 1.5
tpot_target_s = "60 ms"
latency_margin = 0.25
[defaults]
model = "Llama-3.3-70B"
spare_replicas = 0
[[option]]
name = "H100 vLLM fp8 TP2"
gpu = "H100"
pricing = "cloud"
weight_precision = "fp8"
gpus_per_replica = 2
"""

BY_RATE = TRIAL.replace("peak_concurrent_requests = 800", "peak_requests_per_s = 40").replace(
    "average_concurrent_requests = 320", "average_requests_per_s = 16"
)


def _sized(text: str):
    scenario = parse_scenario(tomllib.loads(text))
    return scenario, evaluate(scenario.option[0], scenario.workload, default_catalog(), 0.25)


@pytest.fixture(scope="module")
def in_flight():
    return _sized(TRIAL)


def test_the_rate_times_the_sized_fleets_latency_is_the_requests_in_flight(in_flight):
    _, r = in_flight
    sim = r.under_load
    took = sim.result.e2e_s.mean  # the sized fleet's simulated mean time a request takes, at this rate
    assert r.peak_rate_per_s * took == pytest.approx(800, rel=2 * IN_FLIGHT_TOLERANCE)
    assert sim.replicas * sim.rate_per_replica_s == pytest.approx(r.peak_rate_per_s)
    # not the closed form's rate any more: 800 / (0.218 s + 400 x 24.2 ms) = 80.71
    closed = 800 / (r.replica.ttft_mean_s + 400 * r.replica.tpot_s)
    assert closed == pytest.approx(80.71, abs=0.01)
    assert r.peak_rate_per_s < 0.7 * closed
    # known value of this fixed point: 51.3 requests/s, 25 replicas of 2 GPUs (the trial's before: 76 GPUs)
    assert r.peak_rate_per_s == pytest.approx(51.3, abs=0.5)
    assert float(r.fleet.gpus) == 50


def test_the_fleet_lies_between_the_40_per_s_fleet_and_the_old_one_as_littles_law_says(in_flight):
    """At 40 requests/s the sized fleet (19 replicas, 38 GPUs, the trial's my/one.toml) holds 40 x ~16.2 s = ~646
    in flight: fewer than 800, so the 800-in-flight fleet needs more replicas, but not the closed form's 76 GPUs."""
    _, by_rate = _sized(BY_RATE)
    assert float(by_rate.fleet.gpus) == 38
    held = 40 * by_rate.under_load.result.e2e_s.mean
    assert 600 < held < 700
    _, r = in_flight
    assert 38 < float(r.fleet.gpus) < 76
    # each replica holds about what the 40 requests/s fleet's replicas hold (both sized to just meet the targets;
    # whole replicas: 32.2 on 25 against 34.0 on 19)
    per_replica = r.peak_rate_per_s * r.under_load.result.e2e_s.mean / r.under_load.replicas
    assert 0.9 * held / 19 < per_replica <= held / 19


def test_the_average_rate_is_solved_on_the_sized_fleet_too(in_flight):
    """320 in flight on the 25 replicas: the average's rate x its simulated mean latency = 320 (before: 320 /
    9.9 s = 32.3 requests/s at the closed form's TPOT)."""
    scenario, r = in_flight
    w = scenario.workload
    replica = _serving_replica(
        r.option, r.gpu, r.model, int(r.replica.gpus), r.engine, default_catalog(), r.weight_precision, r.kv_precision
    )
    run = replica_run(
        replace(replica, max_num_seqs=r.candidate.slots), w.prompt_tokens_mean, w.output_tokens_mean,
        r.average_rate_per_s, r.under_load.replicas,
    )  # fmt: skip
    assert r.average_rate_per_s * run.e2e_s.mean == pytest.approx(320, rel=2 * IN_FLIGHT_TOLERANCE)
    assert r.average_rate_per_s < r.peak_rate_per_s


def test_the_assumptions_row_says_how_and_checks_it(in_flight):
    scenario, r = in_flight
    row = in_flight_row(scenario, r)
    took = r.under_load.result.e2e_s.mean
    assert row.what == "H100 vLLM fp8 TP2: planned peak as requests/s"
    assert row.value == round(r.peak_rate_per_s, 2)
    assert "800 requests in flight at the planned peak / " in row.label
    assert "the simulated mean time a request takes (queue, TTFT and decode) on 25 replicas" in row.label
    assert f"check: {r.peak_rate_per_s:,.2f} x {took:.2f} s = " in row.label
    in_flight_check = round(r.peak_rate_per_s * took)
    assert abs(in_flight_check - 800) <= 16
    assert f"= {in_flight_check:,} in flight, {r.peak_rate_per_s * took / 25:,.1f} per serving replica" in row.label
    assert "The average's 320 in flight" in row.label


def test_littles_law_sizing_keeps_the_closed_form_and_states_it():
    """``sizing = "littles-law"``: each replica runs the closed form's batch at its TPOT, so the closed form's rate
    is the consistent one (80.71 requests/s as before), stated with its TTFT, TPOT and batch."""
    text = TRIAL.replace("latency_margin = 0.25", 'latency_margin = 0.25\nsizing = "littles-law"')
    scenario, r = _sized(text)
    assert r.under_load is None
    assert r.peak_rate_per_s == pytest.approx(80.71, abs=0.01)
    row = in_flight_row(scenario, r)
    assert (
        "Little's law: 800 requests in flight at the planned peak / 9.91 s a request, TTFT 0.22 s + 400 output "
        in row.label
    )
    assert "x TPOT 24.2 ms at a batch of 44 (the closed form, as the fleet was sized)" in row.label
    assert "check: 80.71 x 9.91 s = 800 in flight" in row.label


def test_the_average_rate_is_solved_on_the_requests_the_peak_was_sized_on():
    """With ``sizing_lengths = "spread"`` the peak is sized on requests drawn around the high lengths (3,000 / 1,200
    here: with 800 the truncated draws' mean latency is within 1.2% of the means', too near to tell apart); the average's fixed point runs the same requests (before: every request at the means, whose mean
    latency differs, so rate x latency of the requests sized on was not the 320 in flight given)."""
    text = TRIAL.replace("prompt_tokens_high = 2000", "prompt_tokens_high = 3000").replace(
        "output_tokens_high = 400", 'output_tokens_high = 1200\nsizing_lengths = "spread"'
    )
    scenario, r = _sized(text)
    w = scenario.workload
    replica = _serving_replica(
        r.option, r.gpu, r.model, int(r.replica.gpus), r.engine, default_catalog(), r.weight_precision, r.kv_precision
    )
    lengths = w.simulated_lengths(r.model.max_context)
    assert lengths and len(set(lengths)) > 1  # drawn, not all at the means
    mine = replace(replica, max_num_seqs=r.candidate.slots)
    args = (mine, w.prompt_tokens_mean, w.output_tokens_mean, r.average_rate_per_s, r.under_load.replicas)
    spread = replica_run(*args, lengths=lengths).e2e_s.mean
    means = replica_run(*args).e2e_s.mean
    assert r.average_rate_per_s * spread == pytest.approx(320, rel=2 * IN_FLIGHT_TOLERANCE)
    assert abs(means / spread - 1) > 2 * IN_FLIGHT_TOLERANCE  # the means' latency would not have given 320
