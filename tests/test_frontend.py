"""Per-request front-end time (issue 22 gap (a)): fitted on published loaded runs, judged leaving whole sources out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.accuracy.frontend import (
    FRONTEND_S,
    SOLVE_TOLERANCE_S,
    Vote,
    fitted_frontend_s,
    frontend_for_rows,
    frontend_s_for,
    offered_load,
    residual_s,
    votes,
)
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.under_load import predict_percentiles
from planner.accuracy.validation import validate_load


@pytest.fixture(scope="module")
def rows():
    return load_decode_rows(reference_dir() / "load_public.csv")


@pytest.fixture(scope="module")
def shipped_votes(rows):
    return votes(rows)


class TestFit:
    def test_a_source_is_predicted_without_its_own_vote(self):
        """Leave one source out: the median of the other sources' votes (0.010 and 0.030 s -> 0.020 s), whatever the
        left-out source's own residual (1 s)."""
        found = [
            Vote("vllm", "a", 0.010, ("r1",)),
            Vote("sglang", "b", 0.030, ("r2",)),
            Vote("vllm", "c", 1.0, ("r3",)),
        ]
        assert fitted_frontend_s(found, leave_out="c") == pytest.approx(0.020)
        assert fitted_frontend_s(found) == pytest.approx(0.030)

    def test_never_negative(self):
        """A source whose runs are faster than simulated does not give a negative time outside the engine."""
        assert fitted_frontend_s([Vote("vllm", "a", -0.002, ("r1",))]) == 0.0

    def test_the_shipped_value_is_the_fit_on_every_source(self, shipped_votes):
        """``FRONTEND_S`` (22.2 ms) is re-derived from catalogs/reference/load_public.csv by the module's rule: 11 votes
        since s154 added kvcached's SGLang A100 runs (15.6 ms then, 20.5 since s199 ran the output head on each
        prompt's last token only) and PR 4918's SGLang DeepSeek-V3 H200 runs (246.6 ms, 245.7 now), one above and one
        below the median, which was 22.0 ms and is 22.2 since s186."""
        assert len(shipped_votes) == 11
        assert fitted_frontend_s(shipped_votes) == pytest.approx(FRONTEND_S, abs=5e-5)

    def test_only_each_sweeps_lightest_load_votes(self, rows, shipped_votes):
        """surajssd's vLLM 0.8.3 sweep (LD001-LD004: 1, 4, 16 req/s and all at once) votes with its 1 req/s run only:
        published 56.37 ms median TTFT, 9.6 ms above the simulated prefill (python bench/frontend_fit.py)."""
        vote = next(v for v in shipped_votes if v.source_group == "surajssd-llm-k8s-azure-a100")
        assert vote.runs == ("LD001",)
        assert vote.residual_s == pytest.approx(0.0097, abs=0.002)
        burst = next(r for r in rows if r.record_id == "LD004")
        assert offered_load(burst) is None


class TestClosedLoopFrontEnd:
    """In a closed loop the front end also delays each next request's arrival at the engine: the vote is solved for."""

    def test_a_closed_loop_run_returns_the_front_end_it_was_simulated_with(self, rows):
        """vLLM PR 23151's run LD013 (Qwen3-30B-A3B, one H100, concurrency 10, 100 x 2,042/1,016 tokens) simulated
        with a 50 ms front end (median TTFT 248.5 ms) and that median taken as published: ``residual_s`` gives back
        50 ms, where published minus the simulation with no front end reads 138.5 ms. With no front end each next
        request reaches the engine as a step ends and its prompt starts at once (110.1 ms to its first token); with
        20 ms or more it reaches the engine mid-step, and its first token takes 198.5-199.6 ms however long the front
        end. (261.0 / 144.6 / 116.4 / 211-212 ms before s199 ran the output head on each prompt's last token only:
        Qwen3-30B-A3B's head, 151,936 x 2,048 = 311M, is a tenth of the 3.3B parameters a token runs.
        271.4 / 149.8 / 121.6 / 221.4 ms before the MoE grouped GEMM's rows term: Qwen3-30B-A3B's experts, w = 768,
        run at 768 / 1,222 x m / (m + 50.5) of the dense rate where the width alone gave 768 / 1,451, faster above
        ~270 rows an expert, i.e. the steps of 4,300 tokens or more that several prompts make; one 2,042-token
        prompt alone is slower, 35.2 -> 35.5 ms.)"""
        row = next(r for r in rows if r.record_id == "LD013")
        assert row.request_rate is None and 0 < row.batch < row.num_prompts  # a closed loop
        made = predict_percentiles(row, frontend_s=0.050)["ttft_median_ms"] / 1e3
        assert made == pytest.approx(0.2485, abs=5e-4)
        assert residual_s(replace(row, ttft_median_s=made)) == pytest.approx(0.050, abs=2 * SOLVE_TOLERANCE_S)
        by_difference = made - predict_percentiles(row, frontend_s=0.0)["ttft_median_ms"] / 1e3
        assert by_difference == pytest.approx(0.1385, abs=5e-4)

    def test_equal_steps_read_it_to_within_a_step(self, rows):
        """gpustack's SGLang run LD069 (Qwen3-8B, one H100, concurrency 4) decodes in equal steps of ~8 ms, so its
        simulated median TTFT climbs in steps as the front end grows (front ends of 17-23 ms all give 39.6 ms, with
        its ShareGPT requests read as a chat run's answers; 17.7-22 ms before): simulated at 20 ms, ``residual_s``
        gives a front end within a step of 20 ms that reproduces that median exactly."""
        row = next(r for r in rows if r.record_id == "LD069")
        made = predict_percentiles(row, frontend_s=0.020)["ttft_median_ms"] / 1e3
        found = residual_s(replace(row, ttft_median_s=made))
        assert abs(found - 0.020) < 0.008
        assert predict_percentiles(row, frontend_s=found)["ttft_median_ms"] / 1e3 == pytest.approx(made, abs=1e-4)

    def test_a_rated_run_is_read_by_difference(self, rows):
        """At a request rate the front end moves every arrival alike: LD001 (1 req/s) simulated with 20 ms gives back
        exactly 20 ms, without solving."""
        row = next(r for r in rows if r.record_id == "LD001")
        made = predict_percentiles(row, frontend_s=0.020)["ttft_median_ms"] / 1e3
        assert residual_s(replace(row, ttft_median_s=made)) == pytest.approx(0.020, abs=1e-9)

    def test_the_closed_loop_votes_as_solved(self, shipped_votes):
        """The votes with closed-loop runs (python bench/frontend_fit.py): vLLM PR 23151's one run at concurrency 10
        (Qwen3-30B-A3B, 2,042-token prompts, published 300.1 ms) 101.5 ms, 190.0 by difference (89.0 and 183.7 before
        s199 ran the output head on each prompt's last token only, shortening its prefills; 78.7 and 178.5 before
        the MoE grouped GEMM's rows term made its steps of several prompts faster); gpustack's vLLM 26.9 (30.8), SGLang
        16.8 (21.9), TensorRT-LLM 22.2 (27.3); the rated sources as before (surajssd 9.6)."""
        vote = {(v.engine, v.source_group): v.residual_s * 1e3 for v in shipped_votes}
        assert vote["vllm", "vllm-pr-23151-qwen3-30b-a3b-h100"] == pytest.approx(101.5, abs=1.0)
        assert vote["vllm", "gpustack-performance-lab"] == pytest.approx(26.9, abs=0.5)
        assert vote["sglang", "gpustack-performance-lab"] == pytest.approx(16.8, abs=0.5)
        assert vote["tensorrt-llm", "gpustack-performance-lab"] == pytest.approx(22.2, abs=0.5)


class TestValidation:
    def test_each_row_is_judged_by_the_value_fitted_on_other_sources(self, rows, shipped_votes):
        """LD001 at 1 req/s (arrivals shifted, so TTFT moves by exactly the front end): validate_load's prediction is
        the simulation plus the left-out value (the other votes' median, 24.6 ms since s190's exact SGLang draws moved
        datacrunch's and kvcached's votes; python bench/frontend_fit.py),
        not the value fitted on every source (22.2 ms; datacrunch's rows get 21.4 ms, its own vote left out: the
        median of the other ten, kvcached's 20.5 ms and TensorRT-LLM's 22.2; 19.5 ms before s199 ran the output head
        on each prompt's last token only, when kvcached's vote was 16.7 ms); within
        the issue's worst-case limit for medians (40%) of the published 56.37 ms (this source's own residual is
        9.6 ms)."""
        row = next(r for r in rows if r.record_id == "LD001")
        left_out = frontend_s_for(row, shipped_votes)
        assert left_out == pytest.approx(0.0246, abs=5e-4)
        assert left_out == fitted_frontend_s(shipped_votes, leave_out=row.source_group)
        datacrunch = next(r for r in rows if r.source_group == "datacrunch-h200-sglang-outputs")
        assert frontend_s_for(datacrunch, shipped_votes) == pytest.approx(0.0214, abs=5e-4)
        assert frontend_s_for(datacrunch, shipped_votes) != pytest.approx(fitted_frontend_s(shipped_votes), abs=5e-4)
        bare = predict_percentiles(row, frontend_s=0.0)["ttft_median_ms"]
        checks = validate_load(rows).checks
        check = next(c for c in checks if c.record_id == "LD001" and c.quantity == "ttft_median_ms")
        assert check.predicted == pytest.approx(bare + left_out * 1e3, rel=1e-6)
        assert check.predicted == pytest.approx(56.3722, rel=0.40)  # published (surajssd/llm-k8s, benchmark_results.md)

    def test_a_users_run_gets_the_value_fitted_on_every_shipped_source(self, tmp_path):
        """A run of a source not in load_public.csv was in no fit: it is predicted with ``FRONTEND_S`` itself (and
        the shipped runs are not simulated for it)."""
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,batch_size_or_concurrency,request_rate,num_prompts,"
            "input_len,output_len,ttft_median_ms,source\n"
            "u1,serving_rate,vLLM,H100,1,llama3.1-8b,,2,100,512,128,50,https://example.com/mine\n"
        )
        assert frontend_for_rows(load_decode_rows(path)) == {"u1": FRONTEND_S}
