"""The sizing rules (planner.export.sizing): hand-computed cases, then the laws they obey."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.export import sizing
from planner.serving.load import LongTailError


class TestLargestBatchMeeting:
    def test_picks_the_largest_batch_at_or_under_the_target(self):
        """TPOT 10, 20, 30, 40 ms at batches 1-4 and a 30 ms target: batch 3 (equal to the target counts)."""
        assert sizing.largest_batch_meeting([0.01, 0.02, 0.03, 0.04], [1, 2, 3, 4], 0.03) == 3

    def test_a_batch_whose_kv_does_not_fit_is_never_chosen(self):
        """NaN (does not fit) at batches 3 and 4: the answer is 2 even though their 'TPOT' would be fast."""
        assert sizing.largest_batch_meeting([0.01, 0.02, np.nan, np.nan], [1, 2, 3, 4], 1.0) == 2

    def test_zero_when_even_batch_one_is_too_slow(self):
        """No batch meets a 5 ms target when batch 1 takes 10 ms."""
        assert sizing.largest_batch_meeting([0.01, 0.02], [1, 2], 0.005) == 0

    def test_works_row_by_row_over_group_sizes(self):
        """One row per tensor-parallel group: each row gets its own answer."""
        t = np.array([[0.01, 0.06, 0.07], [0.01, 0.02, 0.03]])
        assert list(sizing.largest_batch_meeting(t, [1, 2, 3], 0.05)) == [1, 3]


class TestLittlesLaw:
    def test_concurrency_is_rate_times_time_in_system(self):
        """20 requests/s x (0.5 s TTFT + 300 tokens x 40 ms) = 20 x 12.5 = 250 requests in flight."""
        assert sizing.concurrency(20, 0.5, 300, 0.04) == pytest.approx(250)

    def test_rate_from_concurrency_inverts_it(self):
        """250 in flight over 12.5 s each is 20 requests/s."""
        assert sizing.rate_from_concurrency(250, 0.5, 300, 0.04) == pytest.approx(20)


class TestFleet:
    def test_replicas_round_up_and_add_the_spares(self):
        """250 requests/s at 90 per replica: ceil(2.78) = 3, plus 1 spare (N+1) = 4."""
        assert sizing.replicas_for_rate(250, 90, 1) == 4

    def test_at_least_one_serving_replica_even_without_traffic(self):
        assert sizing.replicas_for_rate(0, 90, 1) == 2

    def test_no_replica_count_when_a_replica_takes_no_requests(self):
        """A replica that cannot meet the TPOT target (0 requests/s): the count is undefined, NaN."""
        assert math.isnan(sizing.replicas_for_rate(10, 0, 1))

    def test_gpus_round_up_to_whole_nodes(self):
        """5 replicas of 4 GPUs = 20 GPUs; bought in 8-GPU nodes: 24."""
        assert sizing.gpus_to_buy(5, 4, 8) == 24
        assert sizing.replicas_deployed(24, 4) == 6

    def test_a_replica_sits_in_one_node_or_spans_whole_ones(self):
        """A 4-GPU replica fits once in a 6-GPU node (2 GPUs idle): 3 replicas take 3 nodes, 18 GPUs (pooling them
        as 12 GPUs = 2 nodes would split one replica across nodes); a 16-GPU replica spans two 8-GPU nodes; a 4-GPU
        replica in 3-GPU nodes would straddle a node boundary (trial s195: "billed in 3-GPU instances", accepted)."""
        assert sizing.gpus_to_buy(3, 4, 6) == 18 and sizing.replicas_deployed(18, 4, 6) == 3
        assert sizing.gpus_to_buy(3, 16, 8) == 48 and sizing.replicas_deployed(48, 16, 8) == 3
        assert sizing.gpus_to_buy(271, 2, 3) == 813  # one GPU of each 3-GPU node idle
        assert [sizing.packs_into_nodes(g, 3) for g in (1, 2, 4, 6, 8)] == [True, True, False, True, False]
        assert sizing.packs_into_nodes(8, None) and sizing.packs_into_nodes(8, 1)  # billed per GPU

    def test_the_most_serving_replicas_below_a_gpu_count(self):
        """The review's search bound (ten times the 16 GPUs as predicted: 160): 18 serving replicas of 8 + 1 spare are
        152 GPUs, 19 + 1 are 160, not below it. 2-GPU replicas in 8-GPU nodes under 100 GPUs: 47 + 1 = 48 replicas
        fill 12 nodes (96), 48 + 1 need 13 (104). Where one serving replica and its spare are already that many: 0."""
        assert sizing.replicas_below(160, 8, 1, 8) == 18 and sizing.gpus_to_buy(19 + 1, 8, 8) == 160
        assert sizing.replicas_below(161, 8, 1, 8) == 19
        assert sizing.replicas_below(100, 2, 1, 8) == 47
        assert sizing.gpus_to_buy(47 + 1, 2, 8) == 96 and sizing.gpus_to_buy(48 + 1, 2, 8) == 104
        assert sizing.replicas_below(16, 8, 1, 8) == 0 and sizing.replicas_below(17, 8, 1, 8) == 1
        assert sizing.replicas_below(10, 1, 0) == 9  # billed per GPU, no spare

    @given(
        st.floats(1, 1e5),
        st.sampled_from([1, 2, 4, 8, 16]),
        st.integers(0, 3),
        st.sampled_from([1, 4, 8, 16]),
    )
    def test_replicas_below_is_the_largest_under_the_bound(self, gpus, group, spare, node):
        """k = replicas_below(...): k + spare replicas' GPUs are under the bound, k + 1 + spare's are not."""
        k = sizing.replicas_below(gpus, group, spare, node)
        assert k == 0 or sizing.gpus_to_buy(k + spare, group, node) < gpus
        assert sizing.gpus_to_buy(k + 1 + spare, group, node) >= gpus

    def test_utilization_and_headroom_add_to_one(self):
        """106 requests over 6 replicas x 90 slots: 19.6% used, 80.4% free."""
        assert sizing.utilization(106, 6, 90) == pytest.approx(106 / 540)
        assert sizing.headroom(106, 6, 90) == pytest.approx(1 - 106 / 540)


class TestMoney:
    def test_owned_gpu_month_is_amortization_plus_power(self):
        """$30,000 over 36 months = $833.33; 700 W x 1.3 x $0.12/kWh x 730 h = $79.716."""
        assert sizing.amortized_usd_per_gpu_month(30_000, 36) == pytest.approx(833.3333, rel=1e-6)
        assert sizing.power_usd_per_gpu_month(700, 1.3, 0.12) == pytest.approx(79.716)

    def test_cloud_gpu_month_is_730_hours(self):
        """$2.99 x 730 h = $2,182.70."""
        assert sizing.cloud_usd_per_gpu_month(2.99) == pytest.approx(2182.70)

    def test_cost_per_million_tokens(self):
        """$10,000 a month over 1 request/s x 500 tokens x 2,628,000 s = 1.314e9 tokens: $7.61 per million."""
        tokens = sizing.tokens_per_month(1, 500)
        assert tokens == pytest.approx(1.314e9)
        assert sizing.usd_per_million_tokens(10_000, tokens) == pytest.approx(10_000 / 1314)

    def test_max_rate_per_replica_satisfies_littles_law_at_the_limit(self):
        """At the slots limit, x (TTFT + output x TPOT / (1 - x TTFT)) is exactly the batch."""
        x = float(sizing.max_rate_per_replica(0.1, 300, 0.04, 90, 10.0))
        assert x * (0.1 + 300 * 0.04 / (1 - x * 0.1)) == pytest.approx(90)

    def test_without_prompt_time_a_replica_takes_batch_over_decode_time(self):
        """TTFT 0: x = batch / (output x TPOT) = 90 / 12 = 7.5 req/s."""
        assert float(sizing.max_rate_per_replica(0.0, 300, 0.04, 90, 1.0)) == pytest.approx(7.5)

    def test_a_replica_too_slow_for_the_target_takes_nothing(self):
        assert float(sizing.max_rate_per_replica(0.1, 300, 0.06, 90, 0.05)) == 0.0
        assert math.isnan(sizing.replicas_for_rate(10, 0.0, 1))

    def test_prefill_share_splits_replica_time(self):
        """TTFT 0.2 s vs 100 tokens x 50 ms / batch 10 = 0.5 s of shared decode: 0.2 / 0.7 of the time is prompts."""
        assert sizing.prefill_share(0.2, 100, 0.05, 10) == pytest.approx(0.2 / 0.7)


class TestSize:
    REPLICA = sizing.Replica(gpus=4, batch=90, tpot_s=0.04, ttft_s=0.5, ttft_mean_s=0.1)

    def test_end_to_end_by_hand(self):
        """Batch slots bind (target 0.2 s). Slots: x (0.1 + 300 x 0.04 / (1 - 0.1 x)) = 90 gives
        0.01 x^2 - 21.1 x + 90 = 0, x = 180 / (21.1 + sqrt(21.1^2 - 3.6)) = 4.2741 req/s per replica;
        latency allows (1 - 0.04 / 0.2) / 0.1 = 8 req/s. ceil(20 / 4.2741) = 5 + 1 spare = 6 replicas x 4 = 24 GPUs
        (3 nodes of 8); at peak each replica takes 4 req/s, busy 40% on prompts: TPOT 0.04 / 0.6 = 66.7 ms, and
        20 x (0.1 + 300 x 0.0667) = 402 requests in flight. At $913.05 a GPU-month: 24 x $913.05."""
        f = sizing.size(
            self.REPLICA, 20, 8, 300, 1500, spare_replicas=1, node_size=8, usd_per_gpu_month=913.05, tpot_target_s=0.2
        )
        assert float(f.concurrency_peak) == pytest.approx(402)
        assert float(f.tpot_peak_s) == pytest.approx(0.04 / 0.6)
        assert int(f.gpus) == 24 and int(f.replicas) == 6 and not bool(f.prompt_bound)
        assert float(f.monthly_usd) == pytest.approx(24 * 913.05)

    def test_prompts_stealing_decode_time_can_set_the_replica_count(self):
        """Target 50 ms: a replica may spend only 1 - 40/50 = 20% of its time on prompts, 2 req/s at TTFT 0.1 s:
        ceil(20 / 2) = 10 + 1 spare = 11 replicas x 4 = 44 GPUs, 48 in 8-GPU nodes; TPOT at peak exactly 50 ms."""
        f = sizing.size(
            self.REPLICA, 20, 8, 300, 1500, spare_replicas=1, node_size=8, usd_per_gpu_month=913.05, tpot_target_s=0.05
        )
        assert int(f.replicas_needed) == 11 and int(f.gpus) == 48 and bool(f.prompt_bound)
        assert float(f.tpot_peak_s) == pytest.approx(0.05)

    def test_input_and_output_costs_add_up_to_the_bill(self):
        """Cost per input token x input tokens + cost per output token x output tokens = the monthly bill."""
        f = sizing.size(self.REPLICA, 20, 8, 300, 1500, 1, 8, 913.05)
        total = (
            f.usd_per_million_input * sizing.tokens_per_month(8, 1500)
            + f.usd_per_million_output * sizing.tokens_per_month(8, 300)
        ) / 1e6
        assert float(total) == pytest.approx(float(f.monthly_usd))

    def test_the_all_tokens_rate_bills_the_same_month_between_the_two_rates(self):
        """Trial 23 F10: one rate over every token. By hand: 24 GPUs x $913.05 = $21,913.20 a month over 8 req/s x
        (1,500 + 300) tokens x 730 h x 3,600 s = 37,843.2 M tokens: $0.57905 per million; it lies between the
        input and output rates (a weighted harmonic mean of them)."""
        f = sizing.size(self.REPLICA, 20, 8, 300, 1500, 1, 8, 913.05)
        assert float(f.usd_per_million_tokens) == pytest.approx(24 * 913.05 / (8 * 1800 * 730 * 3600 / 1e6))
        assert float(f.usd_per_million_input) < float(f.usd_per_million_tokens) < float(f.usd_per_million_output)

    #: TPOT 22 ms + 0.2 ms a sequence, batch 1 to 90 (40 ms at 90: the replica's own batch and TPOT)
    CURVE = tuple(0.022 + 0.0002 * b for b in range(1, 91))

    def test_the_token_rates_split_the_bill_at_the_average_traffic(self):
        """Trial 26 F1 / trial 25 F8: the bill is split by GPU time at the average traffic, where the tokens are
        counted, not at the full batch memory holds. By hand: 8 req/s average over the 6 deployed replicas (the
        spare included, as the load figure counts them): x = 1.3333 req/s each; Little's law with the prompts'
        stretch 1 / (1 - 1.3333 x 0.1) = 1.153846: B = 1.3333 x (0.1 + 300 x (0.022 + 0.0002 B) x 1.153846) =
        10.28718 + 0.0923077 B, B = 11.3333 in flight, a step of 24.267 ms; a request's decode time 300 x 0.024267 /
        11.3333 = 0.64235 s against its prompt's 0.1 s: 0.1 / 0.74235 = 13.47% of the bill (24 x $913.05 =
        $21,913.20) on input. At the full batch (90, 40 ms) it was 0.1 / (0.1 + 300 x 0.04 / 90) = 42.86%, the basis
        the trials found."""
        rep = sizing.Replica(4, 90, 0.04, 0.5, 0.1, self.CURVE)
        b, tpot = sizing.average_batch(8 / 6, 0.1, 300, self.CURVE, 0.04, 90)
        assert float(b) == pytest.approx(10.28718 / (1 - 0.0923077), rel=1e-5)
        assert float(b) == pytest.approx(11.3333, abs=1e-4) and float(tpot) == pytest.approx(0.024267, abs=1e-6)
        f = sizing.size(rep, 20, 8, 300, 1500, 1, 8, 913.05)
        share_in = 0.1 / (0.1 + 300 * (0.022 + 0.0002 * 11.3333) / 11.3333)
        assert share_in == pytest.approx(0.1347, abs=1e-4)
        bill = 24 * 913.05
        assert float(f.usd_per_million_input) == pytest.approx(
            bill * share_in / (sizing.tokens_per_month(8, 1500) / 1e6), rel=1e-4
        )
        assert float(f.usd_per_million_output) == pytest.approx(
            bill * (1 - share_in) / (sizing.tokens_per_month(8, 300) / 1e6), rel=1e-4
        )
        old = sizing.size(self.REPLICA, 20, 8, 300, 1500, 1, 8, 913.05)  # no curve: the replica's own TPOT at B
        assert float(old.usd_per_million_tokens) == pytest.approx(float(f.usd_per_million_tokens))  # unchanged

    def test_the_same_gpus_and_bill_price_tokens_alike_whatever_the_group(self):
        """Trial 26 F1: 8 GPUs as 4 replicas of 2 or 8 of 1, the same bill and traffic. A 2-GPU replica's prompt
        and step take half the time of a 1-GPU one's and its memory holds 4x the batch (360 against 90): split at
        the full batch the input shares were 42.9% and 67.4% (input rates 1.57x apart); at the average traffic
        (4 req/s over 8 or 4 replicas: 3.64 and 3.58 in flight) both put $0.0257 per M on input (each GPU spends the
        same share of its time on prompts)."""
        one = sizing.Replica(1, 90, 0.04, 0.5, 0.1, self.CURVE)
        curve2 = tuple(0.011 + 0.0001 * b / 2 for b in range(1, 361))  # half the step at the same batch per GPU
        two = sizing.Replica(2, 360, curve2[-1], 0.25, 0.05, curve2)
        f1 = sizing.size(one, 6, 4, 300, 1500, 0, 8, 1000.0)
        f2 = sizing.size(two, 6, 4, 300, 1500, 0, 8, 1000.0)
        assert float(f1.monthly_usd) == float(f2.monthly_usd) == 8000.0
        assert float(f2.usd_per_million_input) == pytest.approx(float(f1.usd_per_million_input), rel=0.01)
        assert float(f1.usd_per_million_input) == pytest.approx(0.0257, abs=1e-4)
        at_full = [sizing.prefill_share(r.ttft_mean_s, 300, r.tpot_s, r.batch) for r in (one, two)]
        assert float(at_full[1] / at_full[0]) == pytest.approx(0.6742 / 0.4286, rel=1e-3)  # the old basis

    @given(st.floats(0.1, 500), st.floats(0.1, 500), st.sampled_from([1, 2, 4, 8]), st.integers(0, 2))
    def test_more_traffic_never_needs_fewer_gpus(self, r1, r2, node, spare):
        """GPUs needed are non-decreasing in the peak rate, and always a whole number of nodes."""
        lo, hi = sorted((r1, r2))
        f = sizing.size(self.REPLICA, np.array([lo, hi]), np.array([lo, hi]) / 2, 300, 1500, spare, node, 1000.0)
        assert f.gpus[0] <= f.gpus[1]
        assert np.all(f.gpus % node == 0)
        assert np.all(f.monthly_usd == f.gpus * 1000.0)


class TestContextsAndMargin:
    def test_inflight_context_of_the_readme_workload(self):
        """800 mean prompt, 400 mean / 1,200 p95 output (docs/export.md, "Two contexts"): a lognormal output with
        that mean and p95 has s = 1.6449 - sqrt(1.6449^2 - 2 ln 3) = 0.93189, so in-flight context is
        800 + 400 x exp(0.86842) / 2 = 800 + 476.63 = 1,276.6 tokens (not 800 + 200 = 1,000)."""
        assert sizing.output_length_spread(400, 1200, 95) == pytest.approx(0.931889, rel=1e-5)
        assert sizing.inflight_context_tokens(800, 400, 1200, 95) == pytest.approx(1276.63, abs=0.01)

    def test_equal_lengths_give_prompt_plus_half_the_output(self):
        """Every output 400 tokens (p95 = mean): a sequence is on average half way, 800 + 200 = 1,000."""
        assert sizing.inflight_context_tokens(800, 400, 400, 95) == pytest.approx(1000.0)

    def test_a_spread_beyond_any_lognormal_is_held_within_the_slot_not_capped(self):
        """p95 / mean 1,024 / 100 = 10.24, above exp(1.6449^2 / 2) = 3.87: no lognormal fits, nor a lognormal
        truncated at the slot (here 1 + 1,024 + 1,100 = 2,125 tokens, T / h = 2.075, so its ratio bound,
        (h / T) (a + 1) / a with a = 0.0513 / 0.7301 = 0.0703, is 7.35: 10.24 is past it; refused before the MoE
        trial's F5), so the output is the two-part mixture within the slot (``planner.serving.length_mixture``), and
        the context in flight 1 + E[o^2] / (2 E[o]) (506 tokens) is bounded by the slot: at most 1 + 2,125 x 100 /
        200 = 1,063.5 (o <= T, so E[o^2] <= T E[o]), at least 1 + 0.05 x 1,024^2 / 200 = 263.1 (the long 5%, each
        past h: E[o^2] >= 0.05 h^2); s = z before gave 1 + 100 x exp(2.7055) / 2 = 749.1 tokens with a tail past the
        slot. With no slot
        it is refused. Within the bound (p95 400, T = 2,000) it holds the slot: 1 + E[o^2] / (2 E[o]) is below
        1 + 2,000 / 2."""
        inflight = sizing.inflight_context_tokens(1, 100, 1024, 95, slot_tokens=2125)
        assert 1 + 0.05 * 1024**2 / 200 < inflight < 1 + 2125 * 100 / 200
        with pytest.raises(LongTailError, match=r"10\.24 has no lognormal fit: above any lognormal's 3\.87"):
            sizing.inflight_context_tokens(1, 100, 1024, 95)  # no slot: nothing to hold the long requests within
        assert 1 + 100 / 2 < sizing.inflight_context_tokens(1, 100, 400, 95, slot_tokens=2000) < 1 + 2000 / 2

    def test_margin_target(self):
        """A +8% margin on a 50 ms target: the prediction must be at most 50 / 1.08 = 46.30 ms."""
        assert float(sizing.margin_target(0.05, 0.08)) == pytest.approx(0.0462963, rel=1e-5)


class TestOwnership:
    def test_capex_per_gpu_adds_its_share_of_the_node(self):
        """$30,000 GPU + ($32,010 host + $15,060 network) / 8 = $35,883.75 (catalogs/costs/ownership.toml)."""
        assert float(sizing.owned_capex_usd_per_gpu(30_000, 32_010, 15_060, 8)) == pytest.approx(35_883.75)

    def test_it_power_and_colocation_per_gpu(self):
        """700 W + 4,600 W / 8 = 1,275 W; at $184.06 per kW-month (CBRE H2 2024) $234.68 a month."""
        w = sizing.it_power_w_per_gpu(700, 4600, 8)
        assert float(w) == 1275.0
        assert float(sizing.colocation_usd_per_gpu_month(w, 184.06)) == pytest.approx(234.6765)


class TestBestBatch:
    def test_a_smaller_batch_wins_when_prompts_need_the_replicas_time(self):
        """TPOT 10/20/30 ms at batch 1/2/3 (4 does not fit), 0.1 s prompts, 10 output tokens, target 50 ms: the
        requests/s each batch allows (max_rate_per_replica: min(slots root, (1 - TPOT / target) / prompt)) are
        3.82, 4.38 and 4.00 (by hand from the docstring's quadratic), so batch 2 wins; with no target the slots
        alone grow with the batch and the largest that fits, 3, wins (the rule planner export and the what-if's
        Load sheet both size with)."""
        curve = [0.010, 0.020, 0.030, float("nan")]
        assert sizing.best_batch(curve, 0.1, 10, 0.050) == (2, 0.020)
        assert sizing.best_batch(curve, 0.1, 10, math.inf) == (3, 0.030)
