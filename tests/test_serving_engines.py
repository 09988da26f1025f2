"""How each engine's serving loop shapes latency under load (issue 22): schedulers that prepare the next step while
one runs (TensorRT-LLM's and SGLang's overlap schedulers) and a front end that holds the running requests' token
streams while it prepares a new one (vLLM's API server). planner.serving.load, planner.serving.simulate."""

from __future__ import annotations

import math
import re
import statistics
from pathlib import Path

import pytest
from bench_support import bench_module

from planner import api
from planner.engines.profiles import TENSORRT_LLM, TENSORRT_LLM_0
from planner.errors import InvalidInputError
from planner.serving.approx import approximate_load, approximate_percentiles
from planner.serving.load import Replica, latency_under_load, overlap_scheduling, range_ratio_lengths
from planner.serving.simulate import Scheduler, StepTable, simulate

GPU, MODEL = "H100", "llama3.1-8b"


def _decode_s(context_tokens: int, batch: int = 1, engine: str = "vllm") -> float:
    return float(
        api.decode_step(GPU, MODEL, context_tokens, batch=batch, gpus=1, check_fit=False, engine=engine).step_s
    )


def _replica(scheduler: str, engine: str | None) -> Replica:
    return Replica(GPU, MODEL, gpus=1, scheduler=scheduler, engine=engine, frontend_s=0.0)


class TestOverlapScheduling:
    def test_tensorrt_llm_1x_admits_an_arrival_one_step_later(self):
        """TensorRT-LLM's PyTorch backend (1.x) schedules step n + 1 while step n runs, by default ("Enabled by
        default. To disable, set disable_overlap_scheduler=True", the Overlap Scheduler page of its documentation):
        a second request arriving 2.5 decode steps into the first one's decode joins the second step that starts
        after it, one decode step later than under the TensorRT engines of 0.x, which schedule between steps. (0.x is
        given 1.x's per-sequence cost here, so that the two differ in their scheduling only.)"""
        step = _decode_s(1024 + 3, engine="tensorrt-llm")
        prefill = float(api.prefill(GPU, MODEL, 1024, gpus=1, batch=1, engine="tensorrt-llm").ttft_s)
        arrivals = [0.0, prefill + 2.5 * step]
        engine_0 = TENSORRT_LLM_0.with_(sequence_overhead_s=TENSORRT_LLM.sequence_overhead_s)
        one = latency_under_load(_replica("tensorrt-llm", "tensorrt-llm"), 1024, 64, arrivals_s=arrivals)
        zero = latency_under_load(_replica("tensorrt-llm", engine_0), 1024, 64, arrivals_s=arrivals)
        assert one.ttft_s.p99 - zero.ttft_s.p99 == pytest.approx(step, rel=0.05)
        asked = latency_under_load(
            _replica("tensorrt-llm", engine_0), 1024, 64, arrivals_s=arrivals, async_scheduling=True
        )
        assert one.ttft_s.p99 == asked.ttft_s.p99

    @pytest.mark.parametrize(
        ("scheduler", "engine", "overlaps"),
        [
            ("tensorrt-llm", "tensorrt-llm", True),  # 1.x, PyTorch backend
            ("tensorrt-llm", "tensorrt-llm-0", False),  # 0.x, TensorRT engines
            ("tensorrt-llm", "tensorrt-llm==0.9", False),  # a release names its profile
            ("tensorrt-llm", "tensorrt-llm==1.2.0", True),
            ("sglang", "sglang-0.4", True),  # SGLang v0.4 blog (2024-12-04): the overlap scheduler on by default
            ("sglang", "sglang-0.5.5", True),
            ("sglang", None, True),
            # SGLang 0.3 rows fall back to the shared profile with the synchronous loop: before the overlap scheduler
            ("sglang", "vllm==0.13.0", False),
            ("vllm", None, True),  # the default profile is the current vLLM's: asynchronous from 0.14 (PR 27614, s189)
            ("vllm", "vllm", True),
            ("vllm", "vllm==0.13.0", False),  # before 0.14 vLLM schedules asynchronously only when told
            ("vllm", "vllm-0.10", False),
        ],
    )
    def test_which_engines_overlap_by_default(self, scheduler, engine, overlaps):
        assert overlap_scheduling(_replica(scheduler, engine)) is overlaps


class TestStreamStall:
    """A front end that prepares each new request in the loop that streams the others' tokens (vLLM's API server)
    holds every running request's stream for ``stream_stall_s``: one gap per arrival per running request."""

    LENGTHS = range_ratio_lengths(233, 221, 100, 0.5)

    def _run(self, concurrency: int, stall_s: float):
        return latency_under_load(
            _replica("vllm", None), 233, 221, concurrency=concurrency, lengths=self.LENGTHS, stream_stall_s=stall_s
        )

    def test_p99_itl_sees_the_stall_once_its_share_of_gaps_passes_one_percent(self):
        """100 requests of ~221 outputs in a closed loop: each arrival stalls the C - 1 others once, (C - 1) x 100
        of ~22,000 gaps: 0.45% at C = 2 (p99 ITL stays a decode step), 1.4% at C = 4 (p99 ITL is a step plus the
        stall). The pattern of gpustack's vLLM 0.11 runs on one H100 (p99 ITL 8.2 and 8.8 ms at 1 and 2 in flight,
        41.0 and 45.5 ms at 4 and 8; bench/load_gaps.py)."""
        stall = 0.0313
        two, two_stalled = self._run(2, 0.0), self._run(2, stall)
        assert two_stalled.itl_s.p99 == pytest.approx(two.itl_s.p99, rel=0.05)
        four, four_stalled = self._run(4, 0.0), self._run(4, stall)
        assert four_stalled.itl_s.p99 == pytest.approx(four.itl_s.p99 + stall, rel=0.10)
        assert four_stalled.itl_s.p50 == pytest.approx(four.itl_s.p50, rel=1e-9)

    def test_the_engine_timing_is_untouched(self):
        """The engine's steps go on while the front end holds the streams: TTFT, TPOT and latency are unchanged."""
        base, stalled = self._run(4, 0.0), self._run(4, 0.0313)
        for name in ("ttft_s", "tpot_s", "e2e_s"):
            assert getattr(stalled, name).p99 == pytest.approx(getattr(base, name).p99, rel=1e-12), name

    def test_a_negative_stall_is_refused(self):
        with pytest.raises(InvalidInputError, match="stream_stall_s -0.01 is not a finite number of seconds"):
            self._run(4, -0.01)


class TestTheTensorRTLLMH100GapIsTheSources:
    def test_docs_figures_for_vllm_and_tensorrt_llm_on_the_same_documents(self):
        """docs/model.md: 'vLLM xA on H100 (n runs) against xB on A100 (m), TensorRT-LLM xC (k) against xD (l)':
        published / simulated mean TPOT of gpustack's all-at-once runs on the same documents
        (bench/load_gaps.py section 3), and the H100 excess over A100 within 10% for the two engines."""
        root = Path(__file__).resolve().parents[1]
        gaps = bench_module("load_gaps")
        same_document_ratios = gaps.same_document_ratios
        doc = " ".join((root / "docs" / "model.md").read_text(encoding="utf-8").split())
        m = re.search(
            r"vLLM x([\d.]+) on H100 \((\d+) runs\) against x([\d.]+) on A100 \((\d+)\), TensorRT-LLM x([\d.]+) "
            r"\((\d+)\) against x([\d.]+) \((\d+)\)",
            doc,
        )
        assert m, "docs/model.md's same-documents sentence changed shape; update this test with it"
        ratios = same_document_ratios()
        cells = [("vllm", "H100 SXM 80GB"), ("vllm", "A100 SXM 80GB"), ("tensorrt-llm", "H100 SXM 80GB")]
        cells.append(("tensorrt-llm", "A100 SXM 80GB"))
        got = []
        for key in cells:
            got += [f"{statistics.median(ratios[key]):.2f}", str(len(ratios[key]))]
        assert list(m.groups()) == got
        excess = [statistics.median(ratios[(e, "H100 SXM 80GB")]) / statistics.median(ratios[(e, "A100 SXM 80GB")])
                  for e in ("vllm", "tensorrt-llm")]  # fmt: skip
        assert excess[0] == pytest.approx(excess[1], rel=0.10)


class TestClosedLoopTails:
    """What makes a closed loop's p99 (issue 22): the first wave, and the steps that stall the decodes. Step times
    are a flat table (a decode step 10 ms at any batch, a prefill step 20 ms at any size, 5 ms shared), so each
    figure below is a count of steps."""

    TABLE = StepTable(
        decode_lo_s=(0.010,) * 8, decode_hi_s=(0.010,) * 8, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
        prefill_tokens=(1.0, 1e4), prefill_s=(0.020, 0.020), shared_s=0.005,
    )  # fmt: skip

    def _run(self, kind: str, concurrency: int, lengths: list[tuple[int, int]]):
        scheduler = Scheduler(max_num_seqs=concurrency, max_num_batched_tokens=8192, kind=kind)
        return simulate(self.TABLE, scheduler, 100, 5, len(lengths), client_concurrency=concurrency, lengths=lengths)

    def test_the_first_wave_is_sent_at_once_and_prefilled_in_one_step(self):
        """``vllm bench serve`` starts every request's task at once at an infinite rate and its ``--max-concurrency``
        semaphore lets the first C through together (``vllm/benchmarks/serve.py``, ``benchmark``:
        ``limited_request_func``, ``async with semaphore``); within the token budget the engine prefills them in
        one step: four prompts of 100 tokens reach their first token after one 20 ms step, not 20, 40, 60, 80 ms.
        Equal outputs finish together, so the next four go together too."""
        values, counts = self._run("vllm", 4, [(100, 5)] * 8).samples.ttft
        assert counts.sum() == 8
        assert values == pytest.approx([0.020] * len(values))

    def test_sglang_decodes_wait_a_whole_prefill_step(self):
        """SGLang runs a batch of new prompts alone and the decoding requests wait for it
        (``python/sglang/srt/managers/scheduler.py``, ``Scheduler.get_next_batch_to_run``: "Run prefill first if
        possible"; a prefill takes the running decodes into its batch only when ``is_mixed_chunk``, i.e.
        ``--enable-mixed-chunk``): the gap a decoding request sees when a new request arrives is a prefill step and
        its own decode step, 20 + 10 = 30 ms."""
        itl = self._run("sglang", 2, [(100, 5), (100, 40)] + [(100, 5)] * 6).samples.itl
        assert sorted(set(itl[0].round(9))) == [0.010, 0.030]

    def test_vllm_decodes_share_the_step_with_a_new_prompt(self):
        """vLLM V1 schedules the running requests first and the new prompt's tokens in the same step
        (``vllm/v1/core/sched/scheduler.py``, ``Scheduler.schedule``: "First, schedule the RUNNING requests", then
        the WAITING ones within the token budget): the gap is the mixed step, 10 + 20 - 5 shared = 25 ms, shorter
        than SGLang's 30."""
        itl = self._run("vllm", 2, [(100, 5), (100, 40)] + [(100, 5)] * 6).samples.itl
        assert sorted(set(itl[0].round(9))) == [0.010, 0.025]

    def test_a_new_servers_first_wave_carries_the_sglang_fp8_tail(self):
        """bench/load_gaps.py section 9. gpustack's h100-latency.md: LD074 (FlashInfer attention, its own launch)
        printed mean TTFT 269.33 ms and median 40.70 over 100 requests at 4 in flight, so the slow ones took
        (269.33 - 40.70) x 100 = 22.9 s beyond the median: 5.7 s for each of the first four, its p99 5,701 ms.
        LD090 ran LD075's server command and client at 4 in flight on the launch that served 1, 2 and 8 in flight
        (LD088, LD089, LD091; blocks labelled only "BS=n"), and carries none (mean 39.93 ms, below its median 41.92)."""
        gaps = bench_module("load_gaps")
        first_wave_means = gaps.first_wave_means
        from planner.accuracy.published import load_decode_rows, reference_dir

        rows = load_decode_rows(reference_dir() / "load_public.csv")
        runs = {r.record_id: (wave, excess, launch) for r, wave, excess, launch in first_wave_means(rows)}
        wave, excess, launch = runs["LD074"]
        assert wave == pytest.approx((0.26933 - 0.04070) * 100 / 4, rel=1e-9)
        assert wave == pytest.approx(excess, rel=0.02) and launch == ("LD074",)
        assert runs["LD075"][2] == ("LD075",)
        assert runs["LD090"][2] == ("LD088", "LD089", "LD090", "LD091")
        assert runs["LD090"][0] < 0 < runs["LD075"][0]

    def test_vllms_closed_loop_gap_is_a_held_stream_the_others_an_engine_stall(self):
        """bench/load_gaps.py section 10. gpustack's h100-latency.md result blocks: vLLM 0.11 (LD068) mean TPOT 7.38 ms,
        mean ITL 7.78: 0.949 chunks a token, 5.1% of the tokens delivered in a chunk with another (a held stream: the
        request's latency did not grow with its gaps); over the 3 / 220 of the gaps a new request meets, ~3.7 tokens a
        held chunk, 27.8 ms at the 7.37 ms median ITL against a p99 - p50 of 33.6. SGLang (LD069: 7.19 / 7.08) and
        TensorRT-LLM (LD070: 7.67 / 7.59) deliver a chunk per token or more: no held chunk."""
        gaps = bench_module("load_gaps")
        chunks_per_token = gaps.chunks_per_token
        from planner.accuracy.published import load_decode_rows, reference_dir

        rows = [
            r
            for r in load_decode_rows(reference_dir() / "load_public.csv")
            if r.record_id in ("LD068", "LD069", "LD070")
        ]
        runs = {r.record_id: (ratio, stall) for r, ratio, _, stall, _ in chunks_per_token(rows)}
        assert runs["LD068"][0] == pytest.approx(7.38 / 7.78, rel=1e-9)
        assert runs["LD068"][1] == pytest.approx((1 - 7.38 / 7.78) / (3 / 220) * 0.00737, rel=1e-9)
        assert runs["LD069"][0] > 1.0 and runs["LD070"][0] > 1.0
        assert math.isnan(runs["LD069"][1]) and math.isnan(runs["LD070"][1])

    def test_sglangs_fp8_stall_is_in_its_eager_prefill_not_the_step_model(self):
        """bench/load_gaps.py section 11 (s120). SGLang 0.5.3.post3 runs a prefill (extend) step outside the CUDA
        graphs (``model_executor/forward_batch_info.py`` l.124-129: ``is_cuda_graph`` is DECODE, TARGET_VERIFY and IDLE;
        ``model_executor/model_runner.py`` l.2170-2200, ``forward_extend`` eagerly otherwise; ``server_args.py`` l.434,
        ``enable_piecewise_cuda_graph`` False), and on Hopper a block-FP8 linear is an activation quantization and a
        DeepGEMM call (``layers/quantization/fp8_utils.py`` l.139-149, 217-255). gpustack's Qwen3-8B at 4 in flight on
        one H100: p99 - p50 ITL 11.48 - 7.04 and 11.56 - 7.04 ms in BF16 (LD069, LD071), 22.20 - 5.39 ms in FP8 (LD072),
        so (16.81 - 4.48) / 36 layers = 0.34 ms a layer more; the step model prices the FP8 prefill below the BF16 one
        (a quicker weight read), the published gap goes the other way."""
        gaps = bench_module("load_gaps")
        eager_prefill_excess = gaps.eager_prefill_excess
        from planner.accuracy.published import load_decode_rows, reference_dir

        rows = [
            r
            for r in load_decode_rows(reference_dir() / "load_public.csv")
            if r.record_id in ("LD069", "LD071", "LD072", "LD090")
        ]
        runs = {
            r.record_id: (published, simulated, per_layer)
            for r, published, simulated, per_layer in eager_prefill_excess(rows)
        }
        assert runs["LD069"][0] == pytest.approx(0.01148 - 0.00704, rel=1e-9)
        assert runs["LD071"][0] == pytest.approx(0.01156 - 0.00704, rel=1e-9)
        bf16 = ((0.01148 - 0.00704) + (0.01156 - 0.00704)) / 2
        assert runs["LD072"][2] == pytest.approx((0.02220 - 0.00539 - bf16) / 36, rel=1e-9)
        assert math.isnan(runs["LD069"][2]) and math.isnan(runs["LD090"][2])  # BF16 itself; a draft's steps differ
        assert runs["LD072"][1] < runs["LD069"][1] and runs["LD072"][0] > 3 * runs["LD069"][0]

    def test_a_front_end_queue_cannot_be_the_first_waves_tail(self):
        """bench/load_gaps.py section 7. gpustack's closed loops of vLLM 0.11.0 on Qwen3-8B (LD068 at 4 in flight:
        p99 - p50 TTFT 38.3 ms published; LD087 at 8: 143.3 ms) would need a front end preparing one request at a
        time for 14 and 22 ms a request, while a burst of 984 Qwen3 prompts on the same release and client bounds
        such a front end to 2 x 5.622 s / 983 = 11.4 ms (GPUSTACK-214: mean TTFT 5,622 ms); TensorRT-LLM 1.2.0rc1's
        LD070 would need 40 ms against 2 x 7.883 s / 1000 = 15.8 ms (LD053's median, Qwen3-14B). SGLang 0.5.3's
        front end renders the same template for Qwen3-8B and its FP8 checkpoint, and the BF16 runs need 1-3 ms where
        the FP8 run LD072 needs 46."""
        gaps = bench_module("load_gaps")
        family = gaps.family
        first_wave_excess = gaps.first_wave_excess
        release = gaps.release
        serial_front_end_bounds = gaps.serial_front_end_bounds
        from planner.accuracy.published import load_decode_rows, reference_dir

        bounds = serial_front_end_bounds()
        assert bounds[("vllm 0.11.0", "Qwen3")] == (pytest.approx(2 * 5.62165 / 983, rel=1e-3), "GPUSTACK-214")
        assert bounds[("tensorrt-llm 1.2.0rc1", "Qwen3")] == (pytest.approx(2 * 7.88294 / 1000, rel=1e-3), "LD053")
        wanted = ("LD068", "LD087", "LD070", "LD069", "LD071", "LD072")
        rows = [r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id in wanted]
        runs = {r.record_id: (r, need) for r, _, _, need in first_wave_excess(rows)}
        assert runs["LD068"][1] == pytest.approx(0.0143, abs=0.002)
        assert runs["LD087"][1] == pytest.approx(0.0221, abs=0.002)
        for rid in ("LD068", "LD087", "LD070"):
            r, need = runs[rid]
            assert need > bounds[(release(r), family(r))][0], rid
        assert max(runs["LD069"][1], runs["LD071"][1]) < 0.005 < 0.04 < runs["LD072"][1]


class TestApproximationFollowsTheSimulation:
    def test_an_overlapping_engine_adds_one_step_to_the_approximate_ttft(self):
        """planner.serving.approx: the closed form admits an arrival one step (its mean step tau) later on an engine
        that schedules a step ahead, as the simulation does; TPOT is the same."""
        rates = [2.0, 6.0]
        trt = approximate_percentiles(_replica("tensorrt-llm", "tensorrt-llm"), 1024, 256, rates, 50)
        engine_0 = TENSORRT_LLM_0.with_(sequence_overhead_s=TENSORRT_LLM.sequence_overhead_s)  # step times alike
        setup = _replica("tensorrt-llm", engine_0).setup(1024, 256)
        plain = approximate_load(setup.table, setup.scheduler, 1024, 256, rates, 50)
        tau = [trt["ttft_s"][i] - plain["ttft_s"][i] for i in range(2)]
        assert all(_decode_s(1024, 1, "tensorrt-llm") <= t <= _decode_s(1280, 64, "tensorrt-llm") for t in tau)
        assert list(trt["tpot_s"]) == list(plain["tpot_s"])
