"""bench/load_validation.py --timeline: a run's simulated requests and token gaps beside what its published p99s imply
(issue 22, s173; a diagnostic, nothing in the model moves)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from load_validation import print_timelines, request_timeline, timeline_lines, traced_run  # noqa: E402

from planner.accuracy.frontend import frontend_for_rows  # noqa: E402
from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402
from planner.accuracy.under_load import predict_percentiles  # noqa: E402

ROWS = load_decode_rows(reference_dir() / "load_public.csv")
BY_ID = {r.record_id: r for r in ROWS}
#: gpustack's H100 closed loops of 100 ShareGPT requests, 4 in flight (docs/performance-lab/qwen3-8b/h100-latency.md at
#: gpustack/gpustack 47277d7): SGLang 0.5.3.post3 BF16 (LD069, line 117) and FP8 (LD074, line 255), vLLM 0.11.0 BF16
#: (LD068, line 83).
RUNS = ("LD069", "LD074", "LD068")


@pytest.fixture(scope="module")
def fronts():
    return frontend_for_rows(ROWS)


@pytest.fixture(scope="module")
def timelines(fronts):
    out = {}
    for rid in RUNS:
        traced = traced_run(BY_ID[rid], fronts[rid])
        out[rid] = (request_timeline(traced.steps, fronts[rid]), traced.run)
    return out


class TestTimeline:
    @pytest.mark.parametrize("rid", RUNS)
    def test_the_timeline_is_the_run_validate_load_scores(self, rid, fronts, timelines):
        """Every request of the run is listed once (100, the result block's 'Successful requests'), and the p99 and
        median of the listed TTFTs (numpy's, as ``vllm bench serve`` prints them) are the figures
        ``predict_percentiles`` gives the row with the same front end: the diagnostic reads the run that is scored."""
        timeline, _ = timelines[rid]
        predicted = predict_percentiles(BY_ID[rid], frontend_s=fronts[rid])
        ttfts = [q.ttft_ms for q in timeline]
        assert len(ttfts) == BY_ID[rid].num_prompts == 100
        assert np.percentile(ttfts, 99) == pytest.approx(predicted["ttft_p99_ms"], rel=1e-9)
        assert np.percentile(ttfts, 50) == pytest.approx(predicted["ttft_median_ms"], rel=1e-9)

    @pytest.mark.parametrize("rid", RUNS)
    def test_the_first_wave_reaches_the_engine_at_once(self, rid, timelines):
        """``vllm bench serve`` 0.11 (the client of every gpustack run) lets its first C requests through its
        ``--max-concurrency`` semaphore together (``vllm/benchmarks/serve.py``, ``limited_request_func``), so the
        first four requests reach the engine at the run's start and the fifth only after one has finished."""
        timeline, _ = timelines[rid]
        assert [q.at_engine_ms for q in timeline[:4]] == [0.0] * 4
        assert timeline[4].at_engine_ms > timeline[0].first_token_ms

    def test_sglang_first_tokens_come_from_prefill_only_steps_and_vllms_from_mixed_ones(self, timelines):
        """SGLang 0.5.3.post3 runs new prompts in a step of their own ("Run prefill first if possible",
        ``Scheduler.get_next_batch_to_run``, python/sglang/srt/managers/scheduler.py l.1919-1921 of the PyPI wheel;
        ``enable_mixed_chunk`` False), so every request's first token comes from a step with no decodes; vLLM V1
        schedules the running decodes first and the new prompt in the same step, so after the first wave the three
        others decode in it (a request that arrives as another finishes finds two)."""
        sglang, _ = timelines["LD069"]
        vllm, _ = timelines["LD068"]
        assert {q.step_decoding for q in sglang} == {0}
        assert {q.step_decoding for q in vllm[:4]} == {0}
        assert {q.step_decoding for q in vllm[4:]} <= {2, 3}
        assert sum(q.step_decoding == 3 for q in vllm[4:]) > 80

    def test_the_lines_state_the_published_p99s_and_how_many_simulated_reach_them(self, fronts):
        """LD074's result block prints P99 TTFT 5,700.99 ms and P99 ITL 28.71 ms (gpustack h100-latency.md l.255): the
        lines quote both, and the ITL line asks for 1% of the run's gaps (22,000 simulated: 100 requests of 221
        output tokens, the run's mean, 220 gaps)."""
        text = "\n".join(timeline_lines(BY_ID["LD074"], fronts["LD074"], limit=5))
        assert "TTFT p99: published 5701.0 ms (median 40.7)" in text
        assert "token gaps (ITL), 22000 in all" in text
        assert "ITL p99: published 28.7 ms (median 5.4): about 220 gaps (1%) at or above it" in text
        assert "... 95 more" in text

    def test_one_scheduler_stalls_bf16_too_long_and_fp8_too_short(self, fronts):
        """SGLang 0.5.3.post3, one client, 4 in flight: BF16 Qwen3-8B prints P99 ITL 11.48 ms (LD069, h100-latency.md
        l.117), its FP8 checkpoint 28.71 ms (LD074, l.255). About 1% of the 22,000 gaps set the p99, and the simulated
        gaps that carry a prefill-only step (one per arrival and decoding stream, ~1.3% of all) outnumber them, so the
        published p99 is one of those: the BF16 run's is shorter than the simulated one there, the FP8 run's longer by
        more than a decode step (5.4 ms median): no rule of the scheduler the two share moves both the right way."""

        def excess_ms(rid: str) -> float:
            line = next(s for s in timeline_lines(BY_ID[rid], fronts[rid], limit=0) if "ITL p99" in s)
            return float(line.rsplit("(", 1)[1].split(" ms)")[0])

        assert excess_ms("LD069") < 0.0
        assert excess_ms("LD074") > 2 * 5.4


class TestCli:
    def test_an_unknown_run_is_named_with_the_accepted_ones(self, capsys):
        """A misspelt id: exit 2 and one line naming it and the file's range of ids, no traceback."""
        assert print_timelines(ROWS, ["LD9999"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: no run with percentiles named LD9999; runs are the record ids of the file, ")
        assert "IXA001 to VFK004" in err

    def test_the_script_prints_a_timeline(self):
        """``python bench/load_validation.py --timeline LD069`` prints the run's header and its requests."""
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "load_validation.py"), "--timeline", "LD069"],
            capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
            check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("LD069 sglang v0.5.3.post3 H100 SXM 80GB x1 Qwen3-8B closed C=4 N=100")

    def test_a_run_that_cannot_be_simulated_says_why_and_the_others_print(self, tmp_path, capsys):
        """A user's file with a model the catalog lacks: that run gets one line with the reason ``validate_load`` lists
        it under, exit 1, and the next run's timeline still prints."""
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,dataset,batch_size_or_concurrency,num_prompts,"
            "request_rate,input_len,output_len,statistic,ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms,"
            "itl_median_ms,itl_p99_ms,source\n"
            "r1,serving_rate,vLLM,H100,1,nosuchmodel,,,100,2,200,100,,50,90,,,,,x\n"
            "r2,serving_rate,vLLM,H100,1,llama3.1-8b,,,100,2,200,100,,50,90,,,,,x\n"
        )
        assert print_timelines(load_decode_rows(path), ["r1", "r2"]) == 1
        out = capsys.readouterr()
        assert out.err.startswith("error: r1 is not simulated: unknown model 'nosuchmodel'; known: ")
        assert out.out.startswith("r2 vllm  H100 x1 llama3.1-8b rate C=0 N=100: 100 requests")
