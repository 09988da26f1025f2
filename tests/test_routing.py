"""How the load balancer deals requests over replicas (``planner plan --routing``): one rule for a rate and a trace.

Until s200 a ``--rate`` was routed at random and a ``--trace`` dealt round-robin, so the same traffic sized different
fleets (trial 10 F3: gamma(0.5) at 60 requests/s, 9 x 4 H100 on the rate, 8 x 4 on its trace). Now both follow
``--routing`` (default random, the burstier share). Expected values are derived in each docstring."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_support import one_line, run

from planner.errors import InvalidInputError
from planner.serving.benchmark import arrival_times_s
from planner.serving.fleet import ROUTING_SEED, check_fleet, fewest_replicas, replica_burstiness, replica_share
from planner.serving.load import Replica

CASE = ("plan", "--gpu", "H100", "--model", "llama3.3-70b", "--context", "4096", "--gpus", "4")
LOAD = ("--rate", "60", "--prompt-tokens", "1000", "--output-tokens", "300")
TARGETS = ("--ttft-target", "1.5", "--tpot-target", "60ms")
REPLICA = Replica("H100", "llama3.3-70b", 4)


def plan(*more: str) -> str:
    r = run(*CASE, *more)
    assert r.exit_code == 0, r.output
    return r.stdout


def replicas_line(text: str) -> str:
    (line,) = [x for x in text.splitlines() if x.strip().startswith("replicas (")]
    return line


class TestTheRule:
    def test_round_robin_sums_k_gaps_into_a_gamma_of_shape_k_b(self):
        """Round-robin gives a replica every k-th arrival: its gap is the sum of k of the traffic's gamma(b) gaps,
        which is gamma of shape k b (a sum of k independent gammas of one scale); one replica: the traffic itself."""
        assert replica_burstiness(1.0, 4, "round-robin") == 4.0  # Poisson over 4: Erlang-4
        assert replica_burstiness(0.5, 8, "round-robin") == 4.0
        assert replica_burstiness(0.5, 1, "round-robin") == 0.5
        t = arrival_times_s(80_000, 60.0, 0.5, seed=3)
        gaps = np.diff(t[::8])
        # CV^2 of gamma(k b) is 1 / (k b) = 0.25
        assert gaps.var() / gaps.mean() ** 2 == pytest.approx(1 / replica_burstiness(0.5, 8, "round-robin"), rel=0.06)

    def test_a_trace_is_shared_as_the_routing_deals_it(self):
        """Round-robin: requests 0, k, 2k, ...; at random: each request's replica drawn with seed ROUTING_SEED, the
        first replica's share about count / k (binomial: 3,000 / 7 = 429 +- 19), the same every call."""
        assert replica_share(10, 3, "round-robin").tolist() == [0, 3, 6, 9]
        share = replica_share(3000, 7)
        expected = np.flatnonzero(np.random.default_rng(ROUTING_SEED).integers(0, 7, size=3000) == 0)
        assert share.tolist() == expected.tolist() and share.tolist() == replica_share(3000, 7).tolist()
        assert abs(len(share) - 3000 / 7) < 3 * (3000 * (1 / 7) * (6 / 7)) ** 0.5
        assert replica_share(5, 1).tolist() == [0, 1, 2, 3, 4]

    def test_an_unknown_routing_is_refused_with_the_choices(self):
        with pytest.raises(
            InvalidInputError, match="routing 'least-loaded' is not known; use one of random, round-robin"
        ):
            replica_burstiness(0.5, 4, "least-loaded")


class TestFleets:
    def test_round_robin_never_needs_more_replicas_than_random(self):
        """The same bursty traffic (gamma 0.5 at 60 requests/s, the trial's targets) reaches each replica smoother
        round-robin (shape k b) than at random (k b / (1 + (k - 1) b) <= k b), so it needs no more replicas."""
        kw = dict(ttft_target_s=1.5, tpot_target_s=0.06, burstiness=0.5)
        rnd = fewest_replicas(REPLICA, 1000, 300, 60, **kw)
        rr = fewest_replicas(REPLICA, 1000, 300, 60, routing="round-robin", **kw)
        assert rr.replicas <= rnd.replicas
        check = check_fleet(REPLICA, 1000, 300, 60, rr.replicas, routing="round-robin", **kw)
        assert check.meets

    def test_a_trace_and_its_rate_size_alike_under_one_routing(self):
        """A gamma(0.5) trace of the trial's traffic (3,000 requests at 60 requests/s) sizes within one replica of
        --rate 60 --burstiness 0.5 under each routing (before s200: 8 on the trace, dealt round-robin, against 9 on
        the rate, routed at random)."""
        t = arrival_times_s(3000, 60.0, 0.5, seed=1)
        lengths = [(1000, 300)] * len(t)
        kw = dict(ttft_target_s=1.5, tpot_target_s=0.06)
        for routing in ("random", "round-robin"):
            on_rate = fewest_replicas(REPLICA, 1000, 300, 60, burstiness=0.5, routing=routing, **kw).replicas
            on_trace = fewest_replicas(
                REPLICA, 1000, 300, len(t) / (t[-1] - t[0]), lengths=lengths, arrivals_s=t, routing=routing, **kw
            ).replicas
            assert abs(on_trace - on_rate) <= 1, routing


class TestPlanCommand:
    def test_plan_states_the_routing_it_assumed(self):
        text = plan(*LOAD, *TARGETS, "--burstiness", "0.5", "--routing", "round-robin")
        assert "dealt round-robin over the replicas (--routing round-robin)" in text
        assert "each of k replicas sees gaps of gamma shape k b)" in text
        assert "routed at random over the replicas (--routing random)" in plan(*LOAD, *TARGETS, "--burstiness", "0.5")

    def test_json_names_the_routing(self):
        out = json.loads(plan(*LOAD, *TARGETS, "--routing", "round-robin", "--json"))
        assert out["under_load"]["routing"] == "round-robin"

    def test_a_trace_line_says_every_replicas_share_is_simulated(self, tmp_path):
        """At random each request goes to a replica drawn by ``replica_shares`` and every share is simulated, the
        percentiles pooled (trial 24 F2: the first's share alone was); round-robin, one in k."""
        t = arrival_times_s(600, 20.0, 1.0, seed=2)
        trace = tmp_path / "t.csv"
        trace.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{x:.4f},1000,300\n" for x in t))
        text = plan("--trace", str(trace), *TARGETS)
        (line,) = [x for x in text.splitlines() if x.startswith("Under load: the trace")]
        k = int(replicas_line(text).split(": ")[1].split(" x ")[0])
        if k > 1:
            assert (
                f"routed to one of {k} replicas at random (--routing random), every replica's share simulated and the "
                "percentiles pooled over all of them" in line
            )
        rr = plan("--trace", str(trace), *TARGETS, "--routing", "round-robin")
        assert "--routing random" not in rr

    def test_routing_without_traffic_is_refused(self):
        line = one_line(run(*CASE, "--routing", "round-robin"), 2)
        assert "--routing shapes the traffic under load; give --rate with it" in line

    def test_an_unknown_routing_lists_the_choices(self):
        line = " ".join(run(*CASE, *LOAD, "--routing", "least").stderr.split())
        assert "'least' is not one of 'random', 'round-robin'" in line
