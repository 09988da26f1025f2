"""ShareGPT as vLLM's benchmark sends it (planner.accuracy.datasets): the published sample's requests, and serving
runs simulated with them (planner.serving.benchmark.predict_benchmark's ``sample_lengths``)."""

from __future__ import annotations

import pytest

from planner.accuracy import published
from planner.accuracy.datasets import sample_lengths, sharegpt_requests, sharegpt_sample
from planner.accuracy.under_load import sharegpt_seed0_prompts
from planner.errors import InvalidInputError
from planner.serving.benchmark import predict_benchmark

#: The result file the sample is read from prints these totals over its 200 requests (surajssd/llm-k8s @58b61c5,
#: results_serving_meta-llama-Llama-3.3-70B-Instruct/01_tp8_pp1/..._sharegpt_qps_inf.json: "total_input_tokens":
#: 42659, "total_output_tokens": 42398).
SAMPLE_PROMPT_TOKENS, SAMPLE_OUTPUT_TOKENS = 42_659, 42_398


class TestSample:
    def test_totals_are_the_result_files(self):
        """The 200 requests add up to the totals the published result file prints."""
        sample = sharegpt_sample()
        assert len(sample) == 200
        assert sum(p for p, _ in sample) == SAMPLE_PROMPT_TOKENS
        assert sum(o for _, o in sample) == SAMPLE_OUTPUT_TOKENS

    def test_prompts_are_the_seed0_trace_of_another_run(self):
        """Its prompts equal the first 200 of the seed-0 trace read from a LambdaLabs run (another server, the same
        sampler and tokenizer): the same sample, in the same order."""
        assert [p for p, _ in sharegpt_sample()] == list(sharegpt_seed0_prompts()[:200])

    def test_scaled_to_the_runs_means_and_cycled(self):
        """A 1,000-prompt run at 219 / 201 mean tokens (gpustack DeepSeek-R1 H200: 219,171 / 200,752 tokens over
        1,000 requests) gets 1,000 requests at those means within rounding, the sample's shape kept."""
        reqs = sharegpt_requests(1000, 219.171, 200.752)
        assert len(reqs) == 1000
        assert sum(p for p, _ in reqs) / 1000 == pytest.approx(219.171, rel=0.01)
        assert sum(o for _, o in reqs) / 1000 == pytest.approx(200.752, rel=0.01)
        assert reqs[200] == reqs[0]  # past the sample's 200, its list again
        assert min(o for _, o in reqs) >= 1

    def test_unscaled_without_means(self):
        assert sharegpt_requests(3) == list(sharegpt_sample()[:3])


class TestRowsReadAsShareGPT:
    def test_gpustack_sharegpt_runs_get_the_sample(self):
        """gpustack's performance-lab documents benchmark ShareGPT with `vllm bench serve --dataset-name sharegpt
        --num-prompts 1000` (their Benchmark Script); each of those 1,000-prompt runs (984 where 16 requests failed)
        is simulated with the sample; its random-dataset runs (fixed lengths, labelled 'random ...') are not."""
        rows = [r for r in published.load_decode_rows() if r.source_group == "gpustack-performance-lab"]
        sharegpt = [r for r in rows if r.num_prompts in (1000, 984) and r.input_len > 150]
        assert len(sharegpt) == 114
        assert all(sample_lengths(r) is not None for r in sharegpt)
        assert all(sample_lengths(r) is None for r in rows if "random" in r.dataset.lower())

    def test_a_static_batch_or_a_range_ratio_is_not_a_sample(self):
        row = published.DecodeRow("x", "H100", "llama3.1-8b", 1, 8, 200, 200, dataset="ShareGPT", kind="static")
        assert sample_lengths(row) is None
        ranged = published.DecodeRow("x", "H100", "llama3.1-8b", 1, 0, 200, 200, dataset="ShareGPT", kind="serving",
                                     num_prompts=100, length_range_ratio=0.5)  # fmt: skip
        assert sample_lengths(ranged) is None


class TestRunWithTheSample:
    def test_mean_tpot_above_median_as_published(self):
        """gpustack qwen3-14b/h100.md, vLLM, 1,000 ShareGPT prompts at once: mean TPOT 226.03 ms, median 117.46 ms
        (a mean over requests of very different lengths). Equal lengths give mean = median within 10%; the sample
        gives a mean at least 30% above the median."""
        args = dict(kind="serving", num_prompts=1000, batch=0, engine="vllm", errors="raise")
        sample = sharegpt_requests(1000, 217.393, 201.648)
        equal = predict_benchmark("H100", "Qwen3-14B", 217, 202, **args)
        varied = predict_benchmark("H100", "Qwen3-14B", 217, 202, sample_lengths=sample, **args)
        assert equal.tpot_s == pytest.approx(equal.tpot_median_s, rel=0.10)
        assert varied.tpot_s > 1.3 * varied.tpot_median_s

    def test_run_rate_counts_the_long_tail(self):
        """With every prompt sent at once the run ends when the longest output does: the sample (outputs up to 780
        tokens) gives a lower whole-run output rate than the same means at equal lengths."""
        args = dict(kind="serving", num_prompts=200, batch=0)
        equal = predict_benchmark("H100", "llama3.1-8b", 213, 212, **args)
        varied = predict_benchmark("H100", "llama3.1-8b", 213, 212, sample_lengths=list(sharegpt_sample()), **args)
        assert varied.run_output_tokens_per_s < 0.9 * equal.run_output_tokens_per_s

    def test_a_static_batch_takes_no_sample(self):
        with pytest.raises(InvalidInputError, match="static batch has one length"):
            predict_benchmark("H100", "llama3.1-8b", 200, 200, 8, sample_lengths=[(200, 200)] * 8)

    def test_one_sample_per_run(self):
        with pytest.raises(InvalidInputError, match="sample_lengths has 1 runs; give one list"):
            predict_benchmark("H100", "llama3.1-8b", [200, 300], 200, 0, kind="serving", num_prompts=8,
                              sample_lengths=[[(200, 200)] * 8])  # fmt: skip
