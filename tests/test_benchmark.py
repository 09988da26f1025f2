"""Predicting a benchmark run (issue 10 item 4): static batches, and serving runs simulated step by step
(planner.serving.simulate: continuous batching, max_num_seqs, a token budget per step with chunked prefill)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner import api
from planner.engines.profiles import engine_profile
from planner.errors import InvalidInputError
from planner.serving.benchmark import predict_benchmark, request_lengths
from planner.serving.simulate import Scheduler, StepTable, simulate

GPU, MODEL = "H100", "llama3.1-8b"


def _ttft(prompt_tokens, batch=1):
    return api.prefill(GPU, MODEL, prompt_tokens, gpus=1, batch=batch).ttft_s


class TestStatic:
    def test_lmdeploy_static_batch_within_the_held_out_spread(self):
        """LMDeploy a100_fp16.md, Llama-2-7B, batch 16, 128 in / 2048 out: 1010.62 out tok/s, FTL 0.13 s,
        median per-token latency 0.015 s (DM030). The throughput is a fitted row of the operator model's engine
        costs (planner.accuracy.holdout: in-sample -16%); a batch's FTL and a 0.01 s-resolution TPOT are not
        fitted: all within the held-out spread (static-batch throughput 6% median / 44% worst, bench/heldout.py)."""
        run = predict_benchmark("A100", "llama2-7b", 128, 2048, 16, engine="lmdeploy")
        assert run.run_output_tokens_per_s == pytest.approx(1010.62, rel=0.20)
        assert run.ttft_s == pytest.approx(0.13, rel=0.15)
        assert run.tpot_s == pytest.approx(0.015, abs=0.005)  # published to 0.01 s: 0.015 stands for 0.010-0.020

    def test_whole_run_rate_counts_the_prefill_steady_decode_does_not(self):
        """8k prompts, 16 output tokens: the run's rate is far below steady decode, which is api.throughput."""
        run = predict_benchmark(GPU, MODEL, 8192, 16, 8)
        steady = api.throughput(GPU, MODEL, 8192 + 8, batch=8, gpus=1, check_fit=False)
        assert run.steady_decode_tokens_per_s == pytest.approx(steady)
        assert run.run_output_tokens_per_s < 0.5 * steady

    def test_ttft_of_one_prompt_is_its_prefill(self):
        run = predict_benchmark(GPU, MODEL, 2048, 1, 1)
        assert run.ttft_s == pytest.approx(api.ttft(GPU, MODEL, 2048, gpus=1))


class TestPromptsAtOnce:
    def test_one_prompt_per_step_queues_linearly(self):
        """Prompts as long as the token budget (vLLM serve on H100: 8192) prefill one per step; with one output
        token there is no decode, so request k's first token comes after k prefills: mean (N + 1) / 2 x one, and
        the median too, as ``vllm bench serve`` prints it (``np.median``: of 16, the mean of the 8th and 9th)."""
        n = 16
        run = predict_benchmark(GPU, MODEL, 8192, 1, n, kind="serving", gpus=1)
        assert run.ttft_s == pytest.approx((n + 1) / 2 * _ttft(8192), rel=1e-6)
        assert run.ttft_median_s == pytest.approx((n + 1) / 2 * _ttft(8192), rel=1e-6)

    def test_ttft_grows_linearly_with_the_prompts_when_prefill_bound(self):
        """Twice the prompts at once, twice the mean wait behind the others' prefills (within 15%)."""
        runs = [predict_benchmark(GPU, MODEL, 4096, 64, n, kind="serving", gpus=1) for n in (16, 32, 64)]
        assert runs[1].ttft_s / runs[0].ttft_s == pytest.approx(2.0, rel=0.15)
        assert runs[2].ttft_s / runs[1].ttft_s == pytest.approx(2.0, rel=0.15)

    def test_prompts_within_one_step_share_it(self):
        """64 prompts of 128 tokens fit one 8192-token step: every first token comes together, after the prefill
        of the 64 as one batch (weights read once)."""
        run = predict_benchmark(GPU, MODEL, 128, 1, 64, kind="serving", gpus=1)
        assert run.ttft_s == pytest.approx(_ttft(128, batch=64), rel=1e-6)

    def test_run_rate_is_below_steady_decode(self):
        """The run's output rate includes the prefill ramp and the tail: below the steady-state decode rate."""
        run = predict_benchmark(GPU, MODEL, 1024, 256, 128, kind="serving", gpus=1)
        assert run.run_output_tokens_per_s < run.steady_decode_tokens_per_s
        assert run.tpot_s > api.tpot(GPU, MODEL, 1024 + 128, batch=128, gpus=1, check_fit=False)

    def test_more_prompts_than_max_num_seqs_wait_for_a_slot(self):
        """512 prompts at once, max_num_seqs 256: the second half waits for the first to finish, so the mean TTFT
        is at least a quarter of the run (half the requests wait about half of it)."""
        run = predict_benchmark(GPU, MODEL, 512, 512, 512, kind="serving", gpus=1, max_num_seqs=256)
        assert run.concurrency == 256
        assert run.ttft_s > 0.2 * run.duration_s
        assert run.ttft_median_s < run.ttft_s  # the first wave's short waits pull the median down

    def test_client_concurrency_keeps_requests_in_flight(self):
        """--max-concurrency 32 with 320 prompts: each request is sent when one ends, so after the first wave a
        request waits for no other prompt: mean TTFT far below sending all 320 at once."""
        kept = predict_benchmark(GPU, MODEL, 2048, 256, 32, kind="serving", num_prompts=320, gpus=1)
        at_once = predict_benchmark(GPU, MODEL, 2048, 256, 0, kind="serving", num_prompts=320, gpus=1)
        assert kept.concurrency == 32
        assert kept.ttft_s < 0.2 * at_once.ttft_s


class TestAtRate:
    def test_low_rate_has_no_queue(self):
        """0.5 requests/s, far below capacity: a prompt prefills in the next step, TTFT about one prefill (plus
        at most the decode step it shares), and the run lasts about num_prompts / rate."""
        run = predict_benchmark(GPU, MODEL, 512, 256, 256, kind="serving", request_rate=0.5, num_prompts=200, gpus=1)
        one = _ttft(512)
        assert one <= run.ttft_s < one + 2 * run.tpot_s
        assert run.duration_s == pytest.approx(200 / 0.5, rel=0.15)  # Poisson arrivals, seeded: ~ N / rate

    def test_past_capacity_the_queue_grows_with_the_prompts(self):
        """Offered 1000 requests/s: the server runs at its capacity and waiting time grows with num_prompts."""
        opts = dict(kind="serving", request_rate=1000.0, gpus=1)
        small = predict_benchmark(GPU, MODEL, 512, 256, 64, num_prompts=100, **opts)
        large = predict_benchmark(GPU, MODEL, 512, 256, 64, num_prompts=1000, **opts)
        assert large.ttft_s > 5 * small.ttft_s
        assert small.concurrency == 64

    def test_same_inputs_same_answer(self):
        """Arrivals are drawn with a fixed seed: a prediction is repeatable."""
        a, b = (
            predict_benchmark(GPU, MODEL, 512, 128, 0, kind="serving", request_rate=8, num_prompts=100) for _ in "ab"
        )
        assert a == b


class TestStepTable:
    def test_step_is_the_models_decode_and_prefill_at_the_ends(self):
        """A step with no prompt tokens is model.decode_step; one with no decodes is the prefill of its prompts."""
        table = StepTable((0.010, 0.012), (0.011, 0.014), 100.0, 200.0, (0.0, 512.0), (0.02, 0.05), 0.009)
        assert table.step_s(2, 150.0, 0) == pytest.approx(0.013)
        assert table.step_s(0, 0.0, 512) == pytest.approx(0.05)
        # both: the decode step plus the prefill's work beyond what they share (weights, overheads)
        assert table.step_s(1, 100.0, 512) == pytest.approx(0.010 + 0.05 - 0.009)

    def test_chunked_prefill_of_a_long_prompt(self):
        """A 10,000-token prompt with a 4096-token budget takes three steps (4096, 4096, 1808 tokens)."""
        table = StepTable((0.01,), (0.01,), 1.0, 2.0, (0.0, 10000.0), (0.0, 1.0), 0.0)
        r = simulate(table, Scheduler(8, 4096), 10000, 1, 1)
        assert r.ttft_mean_s == pytest.approx(1.0)  # prefill cost is linear in tokens here: 0.4096 + 0.4096 + 0.1808


def test_arrays_broadcast():
    run = predict_benchmark(GPU, MODEL, [128, 4096], 64, 4, kind="serving")
    assert run.ttft_s.shape == (2,) and run.ttft_s[1] > run.ttft_s[0]
    assert not np.isnan(run.tpot_s).any()


def test_unknown_kind_is_refused():
    with pytest.raises(InvalidInputError, match="use one of static, serving"):
        predict_benchmark(GPU, MODEL, 128, 128, kind="offline")


def test_a_model_that_does_not_fit_is_refused_or_nan():
    with pytest.raises(Exception, match="fit|short"):
        predict_benchmark("L4", "llama3.1-405b", 128, 128, 4, kind="serving", gpus=1)
    run = predict_benchmark("L4", "llama3.1-405b", 128, 128, 4, kind="serving", gpus=1, errors="coerce")
    assert math.isnan(run.ttft_s)


class TestSchedulers:
    def test_sglang_prefills_first_so_prompts_wait_less_and_decodes_more(self):
        """SGLang runs prefill-only steps while prompts wait (no --enable-mixed-chunk): against vLLM's mixed
        steps with the same 8192-token budget, first tokens come sooner and the decoding requests stall longer."""
        opts = dict(kind="serving", num_prompts=64, gpus=1, max_num_batched_tokens=8192)
        vllm = predict_benchmark(GPU, MODEL, 2048, 256, 0, **opts)
        sglang = predict_benchmark(GPU, MODEL, 2048, 256, 0, scheduler="sglang", **opts)
        assert sglang.ttft_s < vllm.ttft_s
        assert sglang.tpot_s > api.tpot(GPU, MODEL, 2048 + 128, batch=64, gpus=1, check_fit=False)

    def test_sglang_chunk_follows_gpu_memory_as_each_release_does(self):
        """chunked_prefill_size by nvidia-smi's total (MiB) and release: 0.4.0 server_args.py l.171-175 (2,048 under
        25,000 MiB, else 8,192), 0.5.1 l.407-413 (2,048 / 8,192 under 160 GiB / 16,384), 0.5.3 l.566-623 and 0.5.10
        l.1166-1222 (4,096 at 35-60 GiB), 0.5.20 memory_hook.py l.88-170 (4,096 at 20-35 GiB too). MiB: RTX 4090
        24,564, L40S 46,068, H100 81,559, H200 143,771, B200 183,359 (nvidia-smi)."""
        from planner.engines.sglang import sglang_chunked_prefill_size

        mib = (24_564, 46_068, 81_559, 143_771, 183_359)
        want = {
            "sglang-0.4.0": [2048, 8192, 8192, 8192, 8192],
            "sglang-0.4": [2048, 8192, 8192, 8192, 8192],
            "sglang-0.5.1": [2048, 8192, 8192, 8192, 16384],
            "sglang-0.5.5": [2048, 4096, 8192, 8192, 16384],
            "sglang-0.5.10": [2048, 4096, 8192, 8192, 16384],
            "sglang-0.5.20": [4096, 4096, 8192, 8192, 16384],
        }
        assert {rule: [sglang_chunked_prefill_size(m, rule) for m in mib] for rule in want} == want

    def test_the_simulation_takes_the_profiles_release_chunk(self):
        """An L40S under SGLang 0.5.20 prefills 4,096 tokens a step (memory_hook.py l.119-125), under 0.5.1 8,192."""
        from planner.catalog import default_catalog
        from planner.serving.benchmark import _limits

        cat = default_catalog()
        new, old = engine_profile("sglang"), engine_profile("sglang-0.5.1")
        model = "Llama-3.1-8B"
        assert _limits(cat, new, "sglang", "L40S", model, 200_000, None, None) == (4096, 2048)
        assert _limits(cat, old, "sglang", "L40S", model, 200_000, None, None) == (8192, 2048)

    def test_unknown_scheduler_is_refused(self):
        with pytest.raises(InvalidInputError, match="use one of vllm, sglang"):
            predict_benchmark(GPU, MODEL, 128, 128, 4, kind="serving", scheduler="tgi")


class TestKvAdmission:
    """KV taken as the engines take it (planner.serving.simulate.Scheduler). Step table of these tests: a decode step is
    10 ms whatever the batch, a prefill step 1 ms per prompt token, nothing shared, so schedules work out by hand."""

    TABLE = StepTable((0.01,) * 4, (0.01,) * 4, 10.0, 110.0, (0.0, 1000.0), (0.0, 1.0), 0.0)

    def test_vllm_admits_by_prompt_and_preempts_the_newest(self):
        """vLLM v1 (vllm/v1/core/sched/scheduler.py): 2 requests of 10 + 10 tokens, a 30-token cache (whole
        sequences: one fits). Both prefill in one 20 ms step (first tokens at 20 ms); five 10 ms decode steps
        fill the cache (2 x (10 + 5) = 30 tokens); the next finds no slot, so the newest request is preempted
        (self.running.pop()) with 6 tokens out. The first finishes after 4 more steps (110 ms); the second then
        recomputes its 16 tokens (126 ms, its 7th token) and decodes 3 more: 156 ms. TPOT: 10 ms and
        (156 - 20) / 9 ms."""
        r = simulate(self.TABLE, Scheduler(8, 1000, kind="vllm", kv_tokens=30), 10, 10, 2)
        assert (r.peak_running, r.preemptions) == (2, 1)
        assert r.ttft_mean_s == pytest.approx(0.020)
        assert r.duration_s == pytest.approx(0.156)
        assert r.tpot_mean_s == pytest.approx((0.010 + 0.136 / 9) / 2)

    @pytest.mark.parametrize(
        "kind, kv_tokens, ttft_s",
        [
            # held 70 + 0.7 x (1 - 60 / 600 x 0.86) x 39 left = 25.0 reserved + 110 for the new one = 205 <= 210:
            # admitted at 610 ms, a 10 ms prefill-only step (SGLang), first token 15 ms after its arrival
            ("sglang", 210, 0.015),
            # 205 > 200: it waits for the first request to finish (1.000 s), then prefills: 1.010 - 0.605
            ("sglang", 200, 0.405),
            # GUARANTEED_NO_EVICT keeps the first request's whole output: 70 + 39 + 110 = 219 > 210: waits
            ("tensorrt-llm", 210, 0.405),
            # vLLM needs only the 10 prompt tokens: admitted at 610 ms, its prefill shares a step with the decode
            # (10 + 10 ms): first token at 630 ms
            ("vllm", 210, 0.025),
        ],
    )
    def test_admission_of_a_second_request(self, kind, kv_tokens, ttft_s):
        """One request of 10 + 100 tokens at 0, another at 605 ms, when the first has 61 tokens out (at 610 ms).
        SGLang keeps back new_token_ratio (0.7, less 0.602 / 600 per decode step: global_config.py) of the
        running requests' remaining output, and a new request's prompt and whole output (schedule_policy.py
        PrefillAdder); TensorRT-LLM keeps every whole sequence (its default capacity policy)."""
        sched = Scheduler(8, 1000, kind=kind, kv_tokens=kv_tokens)
        r = simulate(self.TABLE, sched, 10, 100, 2, arrivals_s=np.array([0.0, 0.605]))
        assert 2 * r.ttft_mean_s - 0.010 == pytest.approx(ttft_s)  # the first request's TTFT is its 10 ms prefill

    @pytest.mark.parametrize("kind", ["vllm", "sglang", "tensorrt-llm"])
    def test_a_request_longer_than_the_cache_gives_no_figures(self, kind):
        """10 + 10 tokens in a 15-token cache: vLLM prefills it, preempts it at 15 tokens and cannot readmit its 16;
        SGLang and TensorRT-LLM never admit it. No engine finishes the run: NaN, not the figures of a part of it."""
        r = simulate(self.TABLE, Scheduler(8, 1000, kind=kind, kv_tokens=15), 10, 10, 2)
        assert math.isnan(r.ttft_mean_s) and math.isnan(r.duration_s) and math.isnan(r.tpot_mean_s)

    def test_sglang_request_slots(self):
        """SGLang: max_num_reqs = KV tokens / context length x 512 within 2048 .. 4096 (0.5.3 model_runner.py
        l.1431-1439), and at most KV tokens // 2 (tp_worker.py l.144-152; 0.5.20 kv_cache_configurator.py
        l.2267-2276); the 0.4 releases' pool holds one slot more (0.4.0 model_runner.py l.517)."""
        from planner.engines.sglang import sglang_max_running_requests

        assert sglang_max_running_requests(1_163_328, 131_072) == 4096  # 4544 clipped
        assert sglang_max_running_requests(200_000, 131_072) == 2048  # 781 raised
        assert sglang_max_running_requests(700_000, 131_072) == 2734
        assert sglang_max_running_requests(3_000, 131_072) == 1500  # KV tokens // 2
        assert sglang_max_running_requests(200_000, 131_072, "sglang-0.4.0") == 2049

    def test_more_run_at_once_than_whole_sequences_fit(self):
        """vLLM holds KV token by token: with 1024 + 1024-token requests on one H100 running Llama-3.1-8B, more
        requests run at once than the memory plan's whole sequences (max_batch), and some are preempted."""
        plan = api.memory_plan(GPU, MODEL, 2048, gpus=1)
        run = predict_benchmark(GPU, MODEL, 1024, 1024, 0, kind="serving", num_prompts=1000, gpus=1)
        assert run.concurrency > plan.max_batch


class TestVariedLengths:
    def test_lengths_drawn_as_sglang_random_range_ratio(self):
        """sglang.bench_serving sample_random_requests: lengths uniform from max(int(len x ratio), 1) to len. The
        datacrunch H200 run DCH200-005 (--random-range-ratio 0.0, nominal 1024 / 1024) had means 1629242 / 3200 =
        509.1 in and 1642637 / 3200 = 513.3 out: drawn back from those means, the lengths span 1 .. 2 x mean and
        average the means (within 2%: 3200 draws of a uniform spread of sd ~ 294)."""
        from planner.serving.benchmark import request_lengths

        drawn = np.array(request_lengths(509.1, 513.3, 3200, 0.0))
        assert drawn.min() == 1 and drawn[:, 0].max() <= 1018 and drawn[:, 1].max() <= 1027
        assert drawn.mean(axis=0) == pytest.approx([509.1, 513.3], rel=0.02)
        assert request_lengths(500, 200, 4, 1.0) == [(500, 200)] * 4  # ratio 1: every request alike
        assert request_lengths(500, 200, 4, 0.0) == request_lengths(500, 200, 4, 0.0)  # seeded

    def test_range_ratio_read_from_a_dataset_cell(self):
        from planner.accuracy.published import range_ratio_of

        assert range_ratio_of({"dataset": "random, --random-range-ratio 0.0 (lengths drawn up to 1024)"}) == 0.0
        assert range_ratio_of({"dataset": "random, --random-range-ratio 0.5"}) == 0.5
        assert range_ratio_of({"dataset": "sharegpt (variable lengths; not stated)"}) is None

    def test_every_request_runs_its_own_lengths(self):
        """Two requests of 10 + 5 and 20 + 15 tokens (1 ms per prompt token, 10 ms per decode step): one 30 ms
        prefill step, then 4 steps end the first and 14 the second (170 ms): 20 tokens out over 0.17 s."""
        table = StepTable((0.01,) * 2, (0.01,) * 2, 10.0, 30.0, (0.0, 1000.0), (0.0, 1.0), 0.0)
        r = simulate(table, Scheduler(8, 1000), 0, 0, 2, lengths=[(10, 5), (20, 15)])
        assert r.duration_s == pytest.approx(0.170)
        assert r.run_output_tokens_per_s == pytest.approx(20 / 0.170)

    def test_serving_only(self):
        with pytest.raises(InvalidInputError, match="static batch has one length"):
            predict_benchmark(GPU, MODEL, 128, 128, 4, length_range_ratio=0.0)
        with pytest.raises(InvalidInputError, match="not a fraction"):
            predict_benchmark(GPU, MODEL, 128, 128, 4, kind="serving", length_range_ratio=2.0)
        run = predict_benchmark(GPU, MODEL, 512, 256, 0, kind="serving", num_prompts=200, length_range_ratio=0.0)
        assert run.ttft_s > 0 and run.tpot_s > 0

    def test_inferencex_rows_are_read_with_its_range_ratio(self):
        """InferenceX's benchmark template sets ``RANDOM_RANGE_RATIO: 0.8`` (.github/workflows/benchmark-tmpl.yml,
        SemiAnalysisAI/InferenceX 00983c3) and its DeepSeek-R1 H200 SGLang script passes it to the client, so its
        ISL = OSL = 1024 runs draw each length uniform in [int(1024 x 0.8), 1024] = [819, 1024], mean 921.5 (the
        table of issue 870 agrees: (E2E - TTFT) / TPOT + 1 = 923 tokens at 64 in flight). The rows are read with
        that ratio around that mean, and the draw spans exactly the client's range."""
        from planner.accuracy.published import load_decode_rows

        rows = {r.record_id: r for r in load_decode_rows() if r.record_id.startswith("IX870-")}
        assert len(rows) == 4
        assert {(r.length_range_ratio, r.input_len, r.output_len) for r in rows.values()} == {(0.8, 922, 922)}
        drawn = np.array(request_lengths(922, 922, 640, 0.8))
        assert drawn.min() == 819 and drawn.max() == 1024
        assert (32330.0 - 423.1) / 34.6 + 1 == pytest.approx(921.5, abs=2.0)

    def test_a_closed_loop_of_varied_lengths_does_not_arrive_in_waves(self):
        """IX870-004 (InferenceX issue 870, SGLang 0.5.7, DeepSeek-R1 on 8 x H200, 64 in flight, 640 prompts): the
        published mean TTFT is 423.1 ms at 64 in flight, 330.6 ms at 8. Read as fixed lengths every request of a
        wave finished together and the next 64 prompts arrived in one burst of 64 x 1,024 tokens (1.38 s mean
        TTFT, +226%); drawn as the client draws them, the streams drift apart and a prompt meets few others. The
        prediction stays within the issue's 2x band of the published mean (-40% on this tree; the rest is
        docs/accuracy.md's open TTFT residual, which aiconfigurator shares at -44%)."""
        from planner.accuracy.frontend import frontend_s_of_rows
        from planner.accuracy.predict import predict_decode_rows
        from planner.accuracy.published import load_decode_rows

        row = next(r for r in load_decode_rows() if r.record_id == "IX870-004")
        ttft_s = float(predict_decode_rows([row], frontend_s=frontend_s_of_rows([row])).ttft_s[0])
        assert 0.5 * 0.4231 < ttft_s < 2.0 * 0.4231


@pytest.mark.parametrize("kind", ["vllm", "sglang", "tensorrt-llm"])
def test_every_request_finishes_whatever_the_limits(kind):
    """Random runs (lengths, caches from one longest sequence up, budgets, sequence limits, arrivals): every
    request finishes, so a run's output rate is its tokens over a finite duration: preemption, retraction and
    reservation never lose or strand a request (200 seeded runs per engine)."""
    rng = np.random.default_rng(7)
    lo = tuple(0.01 + 0.0002 * b for b in range(64))
    table = StepTable(lo, tuple(x * 1.5 for x in lo), 50.0, 300.0, (0.0, 1000.0, 5000.0), (0.0, 0.1, 0.5), 0.005)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        lengths = [(int(rng.integers(1, 200)), int(rng.integers(1, 100))) for _ in range(n)]
        kv = max(p + o for p, o in lengths) + int(rng.integers(0, 400))
        sched = Scheduler(int(rng.integers(1, 64)), int(rng.integers(1, 600)), kind=kind, kv_tokens=kv)
        mode = int(rng.integers(3))
        arrivals = np.cumsum(rng.exponential(0.05, n)) if mode == 1 else None
        conc = int(rng.integers(1, n + 1)) if mode == 2 else None
        r = simulate(table, sched, 0, 0, n, arrivals_s=arrivals, client_concurrency=conc, lengths=lengths)
        assert r.run_output_tokens_per_s * r.duration_s == pytest.approx(sum(o for _, o in lengths))


class TestPrefixCache:
    """A serving run whose prompts the server has cached (``cached_fraction``) prefills only the rest."""

    def test_cached_prompts_reach_their_first_token_sooner(self):
        """16 prompts of 8,192 tokens at once: with half of each cached, each prefill computes 4,096 tokens, so the
        queue of prefills behind one another drains in well under the uncached time (at most 60% of it)."""
        cold = predict_benchmark(GPU, MODEL, 8192, 1, 16, kind="serving", gpus=1)
        warm = predict_benchmark(GPU, MODEL, 8192, 1, 16, kind="serving", gpus=1, cached_fraction=0.5)
        assert warm.ttft_s < 0.6 * cold.ttft_s

    def test_per_run_fractions_broadcast(self):
        runs = predict_benchmark(GPU, MODEL, 8192, 1, 16, kind="serving", gpus=1, cached_fraction=np.array([0.0, 0.5]))
        one = predict_benchmark(GPU, MODEL, 8192, 1, 16, kind="serving", gpus=1, cached_fraction=0.5)
        assert runs.ttft_s[1] == one.ttft_s and runs.ttft_s[0] > one.ttft_s

    @pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0])
    def test_a_share_outside_0_to_1_is_refused(self, bad):
        with pytest.raises(InvalidInputError, match="cached_fraction must be at least 0 and below 1"):
            predict_benchmark(GPU, MODEL, 1024, 16, 4, kind="serving", gpus=1, cached_fraction=bad)

    def test_a_static_batch_is_refused(self):
        with pytest.raises(InvalidInputError, match="without a prefix cache"):
            predict_benchmark(GPU, MODEL, 1024, 16, 4, gpus=1, cached_fraction=0.5)

    def test_a_published_warm_run_is_predicted_with_its_cached_share(self):
        """K8S-004 (surajssd's script sends the same 200 ShareGPT prompts again to one vLLM 0.8.3 server that caches
        prefixes) is read as prompts_cached; its cached share is vLLM's whole 16-token blocks short of the last token
        of its 213-token mean prompt: floor(212 / 16) x 16 / 213 = 208 / 213."""
        from planner.accuracy.datasets import prefix_hit
        from planner.accuracy.predict import load_decode_rows

        row = next(r for r in load_decode_rows() if r.record_id == "K8S-004")
        assert row.prompts_cached and row.input_len == 213
        assert prefix_hit(row) == pytest.approx(208 / 213)


class TestOneRunTwoStatistics:
    """A serving run's means (``predict_benchmark``: ``planner validate``'s mean rows) and its percentiles
    (``latency_under_load``: the loaded rows, plan, export) come from one simulated run: the same step table, the same
    engine rule (``engine_behaviour``: overlap scheduling), the same arrivals and front end (issue 21, Build 4)."""

    @pytest.mark.parametrize(
        "engine, scheduler", [("sglang", "sglang"), ("tensorrt-llm", "tensorrt-llm"), ("vllm", "vllm")]
    )
    def test_the_mean_row_is_the_load_runs_mean_and_its_median_the_p50(self, engine, scheduler):
        """4 requests/s of 512 / 128 tokens, 200 of them, 20 ms of front end: every figure equal to 1e-9."""
        from planner.serving.load import Replica, latency_under_load

        replica = Replica(GPU, MODEL, 1, scheduler=scheduler, engine=engine, frontend_s=0.02)
        load = latency_under_load(replica, 512, 128, rate_per_s=4.0, num_requests=200)
        run = predict_benchmark(
            GPU, MODEL, 512, 128, 200, kind="serving", request_rate=4.0, gpus=1, scheduler=scheduler, engine=engine,
            frontend_s=0.02,
        )  # fmt: skip
        assert run.ttft_s == pytest.approx(load.ttft_s.mean, rel=1e-9)
        assert run.tpot_s == pytest.approx(load.tpot_s.mean, rel=1e-9)
        assert run.ttft_median_s == pytest.approx(load.ttft_s.p50, rel=1e-9)
        assert run.tpot_median_s == pytest.approx(load.tpot_s.p50, rel=1e-9)
        assert run.run_output_tokens_per_s == pytest.approx(load.output_tokens_per_s, rel=1e-9)

    def test_an_overlapping_engine_admits_an_arrival_a_step_later_in_the_mean_rows_too(self):
        """SGLang (>= 0.4) overlaps its steps by default: its mean TTFT is vLLM's scheduler with
        ``--async-scheduling``, and longer than without it (one decode step more for an arrival at a busy engine).
        vLLM 0.13 (the synchronous host loop's per-sequence cost, as SGLang's profile) keeps the steps alike."""
        opts = dict(kind="serving", request_rate=8.0, num_prompts=200, gpus=1, scheduler="sglang")
        sglang = predict_benchmark(GPU, MODEL, 512, 128, 200, engine="sglang", **opts)
        told = predict_benchmark(GPU, MODEL, 512, 128, 200, engine="vllm==0.13.0", async_scheduling=True, **opts)
        plain = predict_benchmark(GPU, MODEL, 512, 128, 200, engine="vllm==0.13.0", **opts)
        assert sglang.ttft_s == told.ttft_s
        assert sglang.ttft_s > plain.ttft_s

    def test_a_static_batch_refuses_run_settings(self):
        """A static batch is one engine call: no front end, overlap or multi-step setting applies."""
        with pytest.raises(InvalidInputError, match="frontend_s"):
            predict_benchmark(GPU, MODEL, 512, 128, 8, frontend_s=0.02)
