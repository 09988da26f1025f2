"""Predicting a benchmark run (issue 10 item 4): static batches, servers given N prompts at once or at a rate."""

from __future__ import annotations

import pytest

from planner import api
from planner.benchmark import predict_benchmark
from planner.errors import InvalidInputError


class TestStatic:
    def test_lmdeploy_static_batch_within_ten_percent(self):
        """LMDeploy a100_fp16.md, Llama-2-7B, batch 16, 128 in / 2048 out: 1010.62 out tok/s, FTL 0.13 s,
        median per-token latency 0.015 s (DM030; in-sample: the shipped factors are fitted to these rows)."""
        run = predict_benchmark("A100", "llama2-7b", 128, 2048, 16, engine="lmdeploy")
        assert run.output_tokens_per_s == pytest.approx(1010.62, rel=0.05)
        assert run.ttft_s == pytest.approx(0.13, rel=0.10)
        assert run.tpot_s == pytest.approx(0.015, rel=0.10)

    def test_whole_run_rate_counts_the_prefill_steady_decode_does_not(self):
        """8k prompts, 16 output tokens: the run's rate is far below steady decode, which is api.throughput."""
        run = predict_benchmark("H100", "llama3.1-8b", 8192, 16, 8)
        steady = api.throughput("H100", "llama3.1-8b", 8192 + 8, batch=8, gpus=1, check_fit=False)
        assert run.decode_tokens_per_s == pytest.approx(steady)
        assert run.output_tokens_per_s < 0.5 * steady

    def test_ttft_of_one_prompt_is_its_prefill(self):
        run = predict_benchmark("H100", "llama3.1-8b", 2048, 1, 1)
        assert run.ttft_s == pytest.approx(api.ttft("H100", "llama3.1-8b", 2048, gpus=1))


class TestServing:
    def test_all_at_once_first_wave_waits_for_half_the_prefills(self):
        """N prompts at once: request k gets its first token after k prefills, mean (N + 1) / 2N of all N."""
        n = 32
        run = predict_benchmark("H100", "llama3.1-8b", 1024, 256, n, kind="serving")
        wave = api.prefill("H100", "llama3.1-8b", 1024, gpus=1, batch=n).ttft_s
        assert run.ttft_s == pytest.approx(wave * (n + 1) / (2 * n))
        static = predict_benchmark("H100", "llama3.1-8b", 1024, 256, n)
        assert run.tpot_s > static.tpot_s  # other prompts' prefills run between its decode steps

    def test_low_rate_obeys_littles_law(self):
        """At 0.5 requests/s far below capacity, concurrency = rate x request latency and TTFT has no queue."""
        run = predict_benchmark("H100", "llama3.1-8b", 512, 256, 256, kind="serving", request_rate=0.5, num_prompts=200)
        latency = api.ttft("H100", "llama3.1-8b", 512, gpus=1) + 255 * run.tpot_s
        assert run.concurrency == pytest.approx(0.5 * latency, rel=0.01)
        assert run.ttft_s < 2 * api.ttft("H100", "llama3.1-8b", 512, gpus=1) + run.tpot_s
        assert run.output_tokens_per_s == pytest.approx(200 * 256 / (200 / 0.5 + latency), rel=0.01)

    def test_past_capacity_the_queue_grows_with_the_prompts(self):
        """Offered 1000 requests/s: the server runs at its capacity and waiting time grows with num_prompts."""
        opts = dict(kind="serving", request_rate=1000.0)
        small = predict_benchmark("H100", "llama3.1-8b", 512, 256, 64, num_prompts=100, **opts)
        large = predict_benchmark("H100", "llama3.1-8b", 512, 256, 64, num_prompts=1000, **opts)
        assert large.ttft_s > 5 * small.ttft_s
        assert small.concurrency == pytest.approx(64)

    def test_arrays_broadcast(self):
        run = predict_benchmark("H100", "llama3.1-8b", [128, 4096], 64, 4, kind="serving")
        assert run.ttft_s.shape == (2,) and run.ttft_s[1] > run.ttft_s[0]


def test_unknown_kind_is_refused():
    with pytest.raises(InvalidInputError, match="use one of static, serving"):
        predict_benchmark("H100", "llama3.1-8b", 128, 128, kind="offline")
