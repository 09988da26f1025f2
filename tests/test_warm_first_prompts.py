"""A sweep's earlier runs warm the prefix cache for a later run's first prompts (issue 22, item 1: prefix caching).

A fixed-seed sampler (``sglang.bench_serving``'s and ``vllm bench serve``'s random dataset) draws the same first
prompts for every run of the same input length, so on one server that caches prefixes a run of 320 prompts after a
run of 80 finds those 80 cached. ``prefix_cache`` "warm: the first N prompts" says so (``DecodeRow.prompts_cached_first``);
the simulation serves those N as a warm prompt is served and the rest computed (``RunBehaviour.warm_prompts``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from planner.accuracy.published import load_decode_rows, prefix_cache_of, warm_prompts_of
from planner.accuracy.under_load import predict_percentiles
from planner.catalog.loader import shipped_catalog_dir
from planner.errors import InvalidInputError
from planner.serving.load import Replica, latency_under_load, warm_prompt_fraction

GPU, MODEL = "H100", "llama3.1-8b"
ONE = Replica(GPU, MODEL, gpus=1, frontend_s=0.0)
LOAD_PUBLIC = shipped_catalog_dir() / "reference" / "load_public.csv"


class TestTheCell:
    def test_the_first_n_prompts_are_read_with_the_reading_after_them(self):
        assert warm_prompts_of("warm: the first 80 prompts (an earlier run of the sweep sent them)") == 80
        assert warm_prompts_of("Warm: first 1,000 prompts") == 1000

    def test_whole_warm_and_cold_cells_have_no_count(self):
        assert [warm_prompts_of(c) for c in ("warm", "cold", "", None)] == [0, 0, 0, 0]

    def test_a_partly_warm_run_is_not_read_as_all_warm(self):
        assert prefix_cache_of("warm: the first 10 prompts") is False
        assert prefix_cache_of("warm") is True

    def test_other_text_says_what_is_accepted(self):
        with pytest.raises(ValueError, match="'warm', 'cold' or 'warm: the first N prompts'"):
            prefix_cache_of("lukewarm")
        with pytest.raises(ValueError, match="N of 1 or more"):
            warm_prompts_of("warm: the first 0 prompts")


class TestTheSimulation:
    def test_every_prompt_warm_is_the_whole_run_warm(self):
        """N >= the run's prompts serves each as ``prefix_hit_rate`` = ``warm_prompt_fraction`` does (the 'warm' cell)."""
        kw = dict(concurrency=8, num_requests=40)
        first = latency_under_load(ONE, 8000, 100, warm_prompts=40, **kw)
        whole = latency_under_load(ONE, 8000, 100, prefix_hit_rate=warm_prompt_fraction(8000), **kw)
        assert first.ttft_s.at(50) == whole.ttft_s.at(50) and first.ttft_s.at(99) == whole.ttft_s.at(99)

    def test_a_warm_first_wave_takes_its_queue_out(self):
        """A closed loop of 8 sends its first 8 together: cold, they queue behind each other's prefills of 8,000
        tokens (~0.37 s each on one H100 for Llama 3.1 8B): median 0.82 s, p99 1.45 s; warm, each takes about a step
        (10 ms). In a run of 80 the 72 sent later are computed either way: the median request is one of them and
        unchanged, the mean lower.

        Re-chosen at s199: the run of 80 had shown the first wave's queue at p90 (cold 0.58 s, warm 0.39 s), but
        only 7 of the 80 requests wait behind another of the first wave, so p90 sits on that wave's edge, and the
        prefills' 5% shortening (the output head on each prompt's last token only) moved it off (cold p90 = p50
        0.37 s). A closed loop's later waves queue too, as the previous wave's finishing times send them: warm, the
        first wave finishes together and the second queues as the first would have (the run of 80's p95 and p99 are
        the same warm and cold, before s199 and since), so the first wave alone (8 requests) is the scenario that
        shows what warming it takes out."""
        wave = dict(concurrency=8, num_requests=8)
        cold = latency_under_load(ONE, 8000, 100, **wave)
        warm = latency_under_load(ONE, 8000, 100, warm_prompts=8, **wave)
        assert cold.ttft_s.at(50) > 0.3 and cold.ttft_s.at(99) > 1.4 * cold.ttft_s.at(50)  # the queued wave
        assert warm.ttft_s.at(99) == pytest.approx(warm.ttft_s.at(50), rel=0.01)  # no queue
        assert warm.ttft_s.at(99) < 0.05 * cold.ttft_s.at(50)  # each about a step
        kw = dict(concurrency=8, num_requests=80)
        cold = latency_under_load(ONE, 8000, 100, **kw)
        warm = latency_under_load(ONE, 8000, 100, warm_prompts=8, **kw)
        assert warm.ttft_s.at(50) == pytest.approx(cold.ttft_s.at(50), rel=0.01)
        assert warm.ttft_s.mean < cold.ttft_s.mean

    @pytest.mark.parametrize("n", [-1, 2.5, "x"])
    def test_a_count_that_is_not_whole_is_refused(self, n):
        with pytest.raises(InvalidInputError, match="warm_prompts"):
            latency_under_load(ONE, 512, 64, concurrency=4, num_requests=16, warm_prompts=n)


class TestPublishedRows:
    def test_a_sweeps_third_run_is_simulated_with_its_first_80_prompts_warm(self):
        """The SGLang cookbook's Llama 3.1 70B page (8 x A100, SGLang 0.5.6) runs 8,000-token prompts at 1, 16 and
        64 in flight on one server with seed 1: the 64-run's first wave is the 16-run's first 64 prompts. Its
        published p99 TTFT, 1,912.97 ms, is under what 64 cold prompts of ~4,000 tokens take to prefill on 8 x A100
        at peak (2 x 70.6e9 x ~256k tokens / 2.5 PFLOP/s ~ 14 s), so the first wave was cached."""
        row = next(r for r in load_decode_rows(LOAD_PUBLIC) if r.record_id == "SGC006")
        assert (row.prompts_cached, row.prompts_cached_first) == (False, 80)
        warm = predict_percentiles(row)["ttft_p99_ms"]
        cold = predict_percentiles(replace(row, prompts_cached_first=0))["ttft_p99_ms"]
        assert warm < 0.2 * cold and not math.isnan(warm)
        assert abs(warm / (row.ttft_p99_s * 1e3) - 1) < 0.5  # published 1,912.97 ms, the page's result block


def test_a_data_parallel_replicas_ranks_each_find_their_share_warm():
    """Under data-parallel attention ("dp-ep") each of the 8 ranks takes every 8th request, so the run's first 64
    are each rank's first 8: all 64 warm is every rank's whole first wave warm, as the whole run warm is at N = 64."""
    dp = Replica("H200", "deepseek-v3", gpus=8, parallelism="dp-ep", frontend_s=0.0)
    kw = dict(concurrency=64, num_requests=64)
    first = latency_under_load(dp, 4000, 64, warm_prompts=64, **kw)
    whole = latency_under_load(dp, 4000, 64, prefix_hit_rate=warm_prompt_fraction(4000), **kw)
    cold = latency_under_load(dp, 4000, 64, **kw)
    assert first.ttft_s.at(99) == whole.ttft_s.at(99) < cold.ttft_s.at(99)
