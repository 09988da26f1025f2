"""A serving row's TTFT as its benchmark client measures it: the engine's first token plus the per-request front-end
time (planner.accuracy.frontend.frontend_s_of_rows, predict_decode_rows(frontend_s=...)), never fitted on the row's
own source."""

from __future__ import annotations

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.datasets import sample_lengths
from planner.accuracy.frontend import fitted_frontend_s, frontend_s_of_rows, shipped_votes

ROWS = {r.record_id: r for r in acc.load_decode_rows()}


class TestFrontendOfRows:
    def test_a_source_that_voted_gets_the_other_sources_median(self):
        """GPUSTACK-260 (gpustack-performance-lab voted for vLLM, SGLang and TensorRT-LLM) is predicted with the
        median of the votes without gpustack's, not with the median of all votes."""
        votes = shipped_votes()
        row = ROWS["GPUSTACK-260"]
        assert any(v.source_group == row.source_group for v in votes)
        (front,) = frontend_s_of_rows([row])
        assert front == fitted_frontend_s(votes, leave_out=row.source_group)
        assert front != fitted_frontend_s(votes)

    def test_any_other_source_gets_the_median_of_all_votes(self):
        """A row of a source with no vote (NVIDIA NIM's page) gets the fitted value over every shipped source."""
        (front,) = frontend_s_of_rows([ROWS["NIM18-001"]])
        assert front == fitted_frontend_s(shipped_votes())


class TestPredictWithFrontend:
    def test_serving_ttft_grows_by_the_front_end_and_the_closed_loop_waits_for_it(self):
        """GPUSTACK-260 (vLLM, Qwen3-8B, one request in flight, 100 requests): TTFT + 25 ms exactly, TPOT equal; the
        client sends each next request when one finishes, and it reaches the engine 25 ms later (as the load path
        simulates it, ``latency_under_load``): the run lasts 99 x 25 ms longer (the first request is sent at 0)."""
        row = ROWS["GPUSTACK-260"]
        plain = acc.predict_decode_rows([row])
        fronted = acc.predict_decode_rows([row], frontend_s=[0.025])
        assert fronted.ttft_s[0] == pytest.approx(plain.ttft_s[0] + 0.025, abs=1e-12)
        assert fronted.tpot_s[0] == pytest.approx(plain.tpot_s[0], rel=1e-12)
        tokens = sum(o for _, o in sample_lengths(row))
        longer_s = tokens / fronted.throughput_tokens_per_s[0] - tokens / plain.throughput_tokens_per_s[0]
        assert longer_s == pytest.approx(99 * 0.025, rel=1e-9)

    def test_a_static_row_has_no_front_end(self):
        """A static batch is an offline engine call (no HTTP client): its TTFT is the prefill alone."""
        static = next(r for r in ROWS.values() if r.kind == "static" and r.ttft_s == r.ttft_s and not r.problem)
        plain = acc.predict_decode_rows([static])
        assert acc.predict_decode_rows([static], frontend_s=[0.025]).ttft_s[0] == plain.ttft_s[0]
