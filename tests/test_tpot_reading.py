"""How a published serving run's TPOT is defined, and that the planner reads it so (issues 21 and 22).

The client of every gpustack run (``vllm bench serve --backend openai-chat``, vLLM 0.11.0 wheel,
``vllm/benchmarks/serve.py`` ``calculate_metrics`` l.300-327 and l.432): per successful request with more than one
output token, TPOT = (latency - TTFT) / (output tokens - 1), the output tokens from the server's usage count; the
printed mean is the mean of those ratios over requests (requests of one token left out), not all decode time over all
tokens. ITL (l.437) is every gap between streamed chunks (``lib/endpoint_request_func.py`` l.311-327: one per chunk
that carries ``choices`` after the first; the latency ends at the last message).
"""

from __future__ import annotations

import math
import re

import pytest

from planner.accuracy.datasets import (
    SHAREGPT_MIN_OUTPUT_TOKENS,
    answers_in_full,
    run_requests,
    sharegpt_requests,
    sharegpt_sample,
)
from planner.accuracy.published import load_decode_rows, read_csv_rows, reference_dir
from planner.serving.simulate import Scheduler, StepTable, simulate, weighted_percentile


def _published(record_id: str) -> dict[str, float]:
    """A perf_public.csv row's result block: requests, generated tokens, request rate and the mean figures (ms)."""
    row = next(r for r in read_csv_rows(reference_dir() / "perf_public.csv") if r["record_id"] == record_id)
    quote = row["quote"]

    def number(label: str) -> float:
        return float(re.search(label + r"[^:|]*: ([\d.]+)", quote).group(1))

    return dict(
        requests=number("Successful requests"),
        generated=number("Total generated tokens"),
        request_rate=number("Request throughput"),
        output_rate=number("Output token throughput"),
        ttft_ms=number("Mean TTFT"),
        tpot_ms=number("Mean TPOT"),
        itl_ms=number("Mean ITL"),
    )


class TestTheSimulatedTpotIsTheBenchmarks:
    """Step table: a decode step of 1 sequence 10 ms, of 2 sequences 40 ms, a prefill 1 ms a prompt token, nothing
    shared; vLLM's scheduler, everything fits. Three requests sent at once: A (10 prompt, 2 output tokens),
    B (10, 4) and C (10, 1)."""

    TABLE = StepTable((0.01, 0.04), (0.01, 0.04), 10.0, 110.0, (0.0, 1000.0), (0.0, 1.0), 0.0)

    def run(self):
        return simulate(self.TABLE, Scheduler(8, 1000, kind="vllm"), 10, 4, 3, lengths=[(10, 2), (10, 4), (10, 1)])

    def test_mean_over_requests_of_each_ones_ratio(self):
        """The three prompts prefill in one 30 ms step (every first token at 30 ms; C is done). A and B decode
        together (40 ms): A's second token at 70 ms, its TPOT 40 ms. B alone: tokens at 80 and 90 ms, TPOT
        (90 - 30) / 3 = 20 ms. The benchmark's mean TPOT is (40 + 20) / 2 = 30 ms: C (one token) left out, not
        counted as 0 (20 ms), and not all decode time over all tokens, (40 + 60) / (1 + 3) = 25 ms."""
        r = self.run()
        assert r.ttft_mean_s == pytest.approx(0.030)
        assert r.duration_s == pytest.approx(0.090)
        assert r.tpot_mean_s == pytest.approx(0.030)
        # the median as predicted (planner.serving.benchmark): np.percentile's 50th of (20, 40), as vLLM prints it
        assert weighted_percentile(r.samples.tpot, 50.0) == pytest.approx(0.030)

    def test_itl_is_the_token_weighted_gap(self):
        """The four gaps after a first token (A's 40 ms, B's 40, 10 and 10 ms) average 25 ms: the ratio of sums,
        which is what a run's mean ITL gives and its mean TPOT does not."""
        values, counts = self.run().samples.itl
        assert float((values * counts).sum() / counts.sum()) == pytest.approx(0.025)


class TestPublishedRowsReadAsDefined:
    def test_gpustack_131_tpot_is_a_mean_over_requests(self):
        """GPUSTACK-131 (gpustack docs/performance-lab/gpt-oss-20b/a100.md, SGLang 0.5.4.post2, 1,000 ShareGPT
        prompts at once): 195,617 tokens over 1,000 / 1.36 s = 735 s is the printed 265.99 tok/s. Mean TPOT 6,244 ms x
        the mean output after the first token (194.6) would be 1,215 s, longer than the run: so it is a mean over
        requests, which short outputs decoding while the server was full lift far above the mean gap (ITL 1,890 ms).
        TTFT + ITL x tokens / requests = 510 s <= 735 s: a request's mean latency fits in the run."""
        p = _published("GPUSTACK-131")
        duration_s = p["requests"] / p["request_rate"]
        assert p["generated"] / duration_s == pytest.approx(p["output_rate"], rel=0.005)
        mean_output = p["generated"] / p["requests"]
        assert p["tpot_ms"] / 1e3 * (mean_output - 1) > 1.5 * duration_s
        assert p["ttft_ms"] / 1e3 + p["itl_ms"] / 1e3 * mean_output < duration_s
        row = next(r for r in load_decode_rows() if r.record_id == "GPUSTACK-131")
        assert row.statistic == "mean" and row.tpot_s == pytest.approx(6.24398)

    @pytest.mark.parametrize("record_id, chunks", [("GPUSTACK-238", 4), ("GPUSTACK-214", 4), ("GPUSTACK-057", 5)])
    def test_a_chat_stream_has_a_gap_more_than_its_tokens(self, record_id, chunks):
        """gpustack's 128-in / 4-out runs (every request 4 tokens: 4,000 / 1,000): mean TPOT x 3 = mean ITL x 4 to
        four digits (vLLM 0.11, Qwen3-32B on one H100, GPUSTACK-238; Qwen3-235B FP8 on 4, GPUSTACK-214), x 5 on
        SGLang 0.5.4.post2 (GPUSTACK-057, GLM-4.5-Air on 4 x A100; the H100 page's copy of that block, GPUSTACK-072, now
        reads its own page's table, which prints no ITL): the first chunk, whose arrival is the TTFT, is the chat stream's role, not
        a token, so TPOT's 3 gaps span 4 or 5 ITL gaps. A completions stream would give 3 (TPOT = ITL)."""
        p = _published(record_id)
        assert p["generated"] == 4 * p["requests"]
        assert p["tpot_ms"] * 3 == pytest.approx(p["itl_ms"] * chunks, rel=5e-4)
        assert p["ttft_ms"] + 3 * p["tpot_ms"] < 1e3 * p["requests"] / p["request_rate"]


class TestOutputsOfAChatRun:
    def test_no_request_of_a_chat_run_is_under_the_samplers_minimum(self):
        """vLLM's ShareGPT sampler sends only answers of 4 tokens or more (0.11.0 ``benchmarks/datasets.py``
        l.254-278); the published sample's 14 outputs under 4 (each of one token) are Llama 3.3's stops on a raw
        prompt. A gpustack run (chat endpoint) sends those requests' answers, whose length a stop does not tell: each
        gets the sample's mean of the others (228 tokens), then every output is scaled to the run's mean."""
        sample = sharegpt_sample()
        stops = [i for i, (_, o) in enumerate(sample) if o < SHAREGPT_MIN_OUTPUT_TOKENS]
        assert len(stops) == 14 and all(sample[i][1] == 1 for i in stops)
        others = [o for _, o in sample if o >= SHAREGPT_MIN_OUTPUT_TOKENS]
        assert round(sum(others) / len(others)) == 228
        assert [o for _, o in sharegpt_requests(200, None, None, SHAREGPT_MIN_OUTPUT_TOKENS)] == [
            228 if o < SHAREGPT_MIN_OUTPUT_TOKENS else o for _, o in sample
        ]
        row = next(r for r in load_decode_rows() if r.record_id == "GPUSTACK-078")
        assert answers_in_full(row)
        outputs = [o for _, o in run_requests(row)]
        assert len(outputs) == 1000 and min(outputs) >= SHAREGPT_MIN_OUTPUT_TOKENS
        assert sum(outputs) / 1000 == pytest.approx(row.output_len, rel=0.01)

    def test_the_samples_own_runs_keep_their_stops(self):
        """surajssd's Llama-3.3-70B runs (the sample's source: ``vllm bench serve --backend vllm``, completions)
        made those one-token outputs themselves: their requests are the sample's."""
        rows = [r for r in load_decode_rows() if r.source_group == "surajssd-llm-k8s-azure-a100" and run_requests(r)]
        assert rows and not any(answers_in_full(r) for r in rows)
        assert min(o for r in rows for _, o in run_requests(r)) == 1


@pytest.fixture(scope="module")
def rows():
    """The shipped public rows by record id (catalogs/reference/perf_public.csv)."""
    return {r.record_id: r for r in load_decode_rows(reference_dir() / "perf_public.csv")}


class TestAiperfItlIsTpot:
    """AIPerf's "Inter Token Latency" is per request (request latency - TTFT) / (output tokens - 1), averaged over
    requests (``InterTokenLatencyMetric``, aiperf/metrics/types/inter_token_latency_metric.py, ai-dynamo/aiperf
    @db4f639): vllm bench serve's TPOT above, not a gap between chunks. NVIDIA's NIM benchmarking page prints AIPerf's
    averages under "ITL", so its rows (NIM18-*, no TPOT column) are compared on TPOT too."""

    def test_nim_rows_read_itl_as_tpot(self, rows):
        """NIM 1.8.0, Llama-3.3-70B fp8 on 2 x H100, 5000/500 at 5 in flight: 'ITL (ms)' 21.83 (the page's table)."""
        assert rows["NIM18-002"].tpot_s == pytest.approx(0.02183)
        assert rows["NIM18-009"].tpot_s == pytest.approx(0.01891)

    def test_the_page_is_consistent_with_that_reading(self, rows):
        """The same page's output rate at one in flight is what 500 tokens take at that TTFT and TPOT:
        500 / (0.40677 + 499 x 0.01858) = 51.66 tok/s against the printed 51.67 (NIM18-001's quote), so 'ITL' spans
        tokens 2..500 of each request as a TPOT does."""
        r = rows["NIM18-001"]
        assert 500 / (r.ttft_s + 499 * r.tpot_s) == pytest.approx(51.67, rel=1e-3)

    def test_chunk_gap_itl_stays_out(self, rows):
        """sglang.bench_serving's ITL (datacrunch's H200 rows) is a median gap between chunks: no TPOT from it."""
        from planner.accuracy.published import itl_is_tpot

        assert itl_is_tpot({"batching": "fixed concurrency (AIPerf, requests kept in flight)"})
        assert itl_is_tpot({"notes": "genai-perf profile --concurrency 8"})
        assert not itl_is_tpot({"batching": "all prompts sent at once (request rate inf); sglang.bench_serving"})
        assert math.isnan(rows["DCH200-001"].tpot_s)  # its ITL cell is a median gap between chunks
