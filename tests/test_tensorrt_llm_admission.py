"""How TensorRT-LLM 1.x (PyTorch backend, ``trtllm-serve``) sizes its KV cache and admits requests, read from its
source (issue 22): the start-up estimate's forward pass is the server's own ``max_num_tokens``, and the capacity
scheduler reserves each request's prompt and whole output. planner.engines.profiles, planner.serving.benchmark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planner.engines.profiles import TENSORRT_LLM, TENSORRT_LLM_0, VLLM, profiled_at_token_budget
from planner.serving.benchmark import reservation_block_tokens
from planner.serving.load import Replica
from planner.serving.simulate import Scheduler, StepTable, simulate
from planner.serving.state import Cohort, Run

#: Qwen/Qwen3-32B's config.json (https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json): hidden_size 5120,
#: intermediate_size 25600, 64 layers of 8 KV heads of 128; bf16 KV (2 bytes), K and V.
HIDDEN, MLP, KV_BYTES_PER_TOKEN = 5120, 25600, 64 * 8 * 128 * 2 * 2


def _kv_tokens(engine: str, max_num_batched_tokens: int | None) -> float:
    replica = Replica(
        "A100 SXM 80GB", "Qwen/Qwen3-32B", gpus=1, scheduler="tensorrt-llm" if "tensorrt" in engine else "vllm",
        engine=engine, max_num_batched_tokens=max_num_batched_tokens, frontend_s=0.0,
    )  # fmt: skip
    return float(replica.setup(217, 201).scheduler.kv_tokens)


class TestKvCacheSizedAtTheServersTokenBudget:
    def test_a_larger_max_num_tokens_leaves_less_kv_cache(self):
        """TensorRT-LLM 1.x estimates its KV cache after running dummy prompts that fill ``max_num_tokens``
        (``KvCacheCreator._create_dummy_context_requests``: ``remaining_tokens = max_num_tokens``, one request of
        min(max_num_tokens, max_seq_len - 1) tokens after another until none remain, each sampled once;
        tensorrt_llm/_torch/pyexecutor/_util.py from pull request 3092 on, the same loop in the 2026 tree) and
        gives the cache ``fraction x (total - peak + temporary KV)`` (``_cal_max_tokens`` / ``_cal_max_memory``).
        gpustack's ``trtllm-serve Qwen/Qwen3-32B --max_num_tokens=32768`` (load_public.csv LD057) therefore keeps
        0.9 x the activation of 24,576 more tokens out of its cache: at the profile's 2 B per token x (hidden + 2 x
        MLP width), 0.9 x 2 x 24,576 x 56,320 B = 2.49 GB, 9,504 tokens of 256 KiB (the pool in whole blocks of 32)."""
        default, larger = _kv_tokens("tensorrt-llm", None), _kv_tokens("tensorrt-llm", 32768)
        expected = 0.9 * 2.0 * (32768 - 8192) * (HIDDEN + 2 * MLP) / KV_BYTES_PER_TOKEN
        assert round(expected) == 9504
        assert default - larger == pytest.approx(expected, abs=32)
        assert default % 32 == 0 and larger % 32 == 0

    def test_a_server_given_the_default_budget_sizes_its_cache_as_one_given_none(self):
        """``trtllm-serve``'s ``--max_num_tokens`` defaults to BuildConfig's 8192 (``get_llm_args`` in
        tensorrt_llm/commands/serve.py), so naming 8192 changes nothing."""
        assert _kv_tokens("tensorrt-llm", 8192) == _kv_tokens("tensorrt-llm", None)

    @pytest.mark.parametrize("engine", ["vllm", "tensorrt-llm-0"])
    def test_engines_that_profile_at_their_own_tokens_ignore_it(self, engine):
        """Only profiles in ``TOKEN_BUDGET_PROFILED`` follow the run's budget: TensorRT-LLM 0.x sized its
        activations when the engine was built (``trtllm-build --max_num_tokens``), and vLLM's fitted activation terms
        stay at the budgets of the logs they were fitted on."""
        assert _kv_tokens(engine, 32768) == _kv_tokens(engine, None)

    def test_only_the_pytorch_backend_is_profiled_at_the_given_budget(self):
        """1.x's PyTorch backend profiles at the run's budget; 0.x's TensorRT engines and vLLM keep their own."""
        assert profiled_at_token_budget(TENSORRT_LLM, 16384).max_num_batched_tokens == 16384
        assert profiled_at_token_budget(TENSORRT_LLM, None) is TENSORRT_LLM
        assert profiled_at_token_budget(TENSORRT_LLM_0, 16384) is TENSORRT_LLM_0
        assert profiled_at_token_budget(VLLM, 16384) is VLLM


class TestInFlightReadLikeForLike:
    def test_a_bursts_published_sequences_in_flight_come_from_its_result_block(self):
        """No benchmark prints the sequences in flight; Little's law over each request's time after its first token
        estimates their average from the result block: gpustack's gpt-oss-20b burst on one H100 (TensorRT-LLM
        1.2.0rc1, docs/performance-lab/gpt-oss-20b/h100.md at gpustack/gpustack 47277d7: 1,000 requests, 191,726
        tokens, 18.86 req/s, mean ITL 51.52 ms, mean TPOT 224.49 ms) decoded 190,726 x 0.05152 s / (1,000 / 18.86 s)
        = 185 or 190,726 x 0.22449 s / 53.0 s = 808 at a time: the two estimates bench/load_gaps.py section 8 sets
        beside the simulation's same two (not its peak)."""
        root = Path(__file__).resolve().parents[1]
        sys.path.insert(0, str(root / "bench"))
        try:
            from load_gaps import published_in_flight
        finally:
            sys.path.remove(str(root / "bench"))
        by_itl, by_tpot = published_in_flight("LD046")
        assert by_itl == pytest.approx(190726 * 0.05152 / (1000 / 18.86), rel=1e-9)
        assert (round(by_itl), round(by_tpot)) == (185, 808)


class TestReservationsInWholeBlocks:
    """``GUARANTEED_NO_EVICT`` (``trtllm-serve``'s policy: ``SchedulerConfig(capacity_scheduler_policy=
    CapacitySchedulerPolicy.GUARANTEED_NO_EVICT, ...)`` in ``get_llm_args``, tensorrt_llm/commands/serve.py) admits a
    request while the blocks every admitted request needs to completion fit, each request's ``ceil(min(prompt + max
    new tokens, window) / tokens_per_block)`` (``KVCacheManager::getRemainingBlocksToCompletion``,
    cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, summed by ``NoEvictScheduledBlocksManager``,
    scheduledBlocksManager.h; ``tokens_per_block`` 32, ``KvCacheConfig``): request by request, not as a run's mean."""

    # decode steps 10 ms at any batch, prefill 1 ms per 10 tokens, nothing shared
    TABLE = StepTable((0.01,) * 8, (0.01,) * 8, 100.0, 900.0, (0.0, 10000.0), (0.0, 1.0), 0.0)

    def test_a_request_reserves_its_tokens_rounded_up_to_whole_blocks(self):
        """A 217 + 201-token request takes 14 blocks of 32, 448 token slots: 30 beyond its 418 tokens; a 100 + 28-token
        one exactly 4 blocks, none beyond. TensorRT-LLM's scheduler rounds to its profile's block (32); vLLM's and
        SGLang's reserve tokens."""
        run = Run(10_000.0, 1.0, 32)
        assert run.pad(Cohort(1, 217, 201, [(0.0, 1)], 0.0)) == 30
        assert run.pad(Cohort(1, 100, 28, [(0.0, 1)], 0.0)) == 0
        assert Run(10_000.0).pad(Cohort(1, 217, 201, [(0.0, 1)], 0.0)) == 0
        assert reservation_block_tokens("tensorrt-llm", TENSORRT_LLM) == 32
        assert reservation_block_tokens("vllm", TENSORRT_LLM) == reservation_block_tokens("sglang", VLLM) == 1

    def _peak(self, kv_tokens: float, lengths: list[tuple[int, int]], block: int) -> int:
        sched = Scheduler(8, 8192, kind="tensorrt-llm", kv_tokens=kv_tokens, block_tokens=block)
        return simulate(self.TABLE, sched, 0, 0, len(lengths), lengths=lengths).peak_running

    def test_admission_stops_where_the_next_whole_block_reservation_does_not_fit(self):
        """Three 217 + 201-token requests at once into 3 x 448 - 1 = 1,343 token slots: their tokens fit (3 x 418 =
        1,254), their blocks do not (3 x 448 = 1,344), so TensorRT-LLM runs two, the third when one finishes; with
        one slot more all three run."""
        assert self._peak(1343, [(217, 201)] * 3, 32) == 2
        assert self._peak(1344, [(217, 201)] * 3, 32) == 3
        assert self._peak(1343, [(217, 201)] * 3, 1) == 3

    def test_each_request_is_rounded_alone_not_at_the_runs_mean(self):
        """Two 217 + 201-token requests (448 slots each) and two 100 + 28 (whole blocks: 128 each) at once into 1,020
        slots: the two long ones take 896, and a short one's 128 more would be 1,024, so TensorRT-LLM runs two. The
        run-mean reading this replaced (the cache x sum(tokens) / sum(slots) = 1,092 / 1,152, reservations
        token-exact) saw 966.9 slots, 130.9 free after the long ones' 836 tokens, and ran a third."""
        lengths = [(217, 201)] * 2 + [(100, 28)] * 2
        assert self._peak(1020, lengths, 32) == 2
        assert self._peak(1020 * 1092 / 1152, lengths, 1) == 3


class TestChunkedPrefillAsTheServerWasStarted:
    """``trtllm-serve`` runs each prompt whole unless started with ``--enable_chunked_prefill`` (``get_llm_args(...,
    enable_chunked_prefill: bool = False)`` in tensorrt_llm/commands/serve.py); gpustack's random-length and
    chunked-prefill runs set it (docs/performance-lab/qwen3-32b/h100.md line 219 at gpustack/gpustack 47277d7:
    ``trtllm-serve Qwen/Qwen3-32B-FP8 --max_seq_len=40960 --enable_chunked_prefill``), its ShareGPT baselines do not."""

    def test_the_flag_is_read_from_the_server_command(self):
        """The row's ``notes`` (or ``batching``) cell quotes the server command: the flag turns chunking on, its
        absence leaves the engine's default (None), and a longer option name that merely starts alike is not it."""
        from planner.accuracy.published import chunked_prefill_of

        assert chunked_prefill_of(
            {"notes": "trtllm-serve Qwen/Qwen3-32B-FP8 --max_seq_len=40960 --enable_chunked_prefill"}
        )
        assert chunked_prefill_of({"batching": "vllm serve m --enable-chunked-prefill"}) is True
        assert chunked_prefill_of({"notes": "trtllm-serve Qwen/Qwen3-32B"}) is None
        assert chunked_prefill_of({"notes": "--enable_chunked_prefill_size 4"}) is None

    def test_gpustacks_rows_carry_it_as_their_commands_say(self):
        """LD063 (the 'Enable Chunked Prefill in TensorRT-LLM' section) is read chunked, LD062 (the same document's
        baseline, ``trtllm-serve Qwen/Qwen3-32B``) with the engine's default."""
        from planner.accuracy.published import load_decode_rows, reference_dir

        rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
        assert rows["LD063"].chunked_prefill is True and rows["LD062"].chunked_prefill is None

    def test_a_replica_started_with_it_splits_prompts(self):
        """The replica's scheduler follows the flag; without it TensorRT-LLM's default is whole prompts."""
        base = dict(gpus=1, scheduler="tensorrt-llm", engine="tensorrt-llm", frontend_s=0.0)
        assert not Replica("A100 SXM 80GB", "Qwen/Qwen3-14B", **base).setup(217, 201).scheduler.chunks_prompts
        chunked = Replica("A100 SXM 80GB", "Qwen/Qwen3-14B", chunked_prefill=True, **base)
        assert chunked.setup(217, 201).scheduler.chunks_prompts

    # decode steps 10 ms at any batch; a step of t prompt tokens t / 10,000 s; nothing shared
    TABLE = StepTable((0.01,) * 4, (0.01,) * 4, 4000.0, 4002.0, (0.0, 10000.0), (0.0, 1.0), 0.0)

    def _ttfts(self, chunked: bool | None) -> list[float]:
        sched = Scheduler(4, 8192, kind="tensorrt-llm", kv_tokens=1e6, chunked_prefill=chunked, block_tokens=32)
        res = simulate(self.TABLE, sched, 0, 0, 2, lengths=[(4000, 2), (4200, 2)])
        values, counts = res.samples.ttft
        return [round(float(v), 6) for v, n in zip(values, counts, strict=True) for _ in range(int(n))]

    def test_a_chunking_server_fills_the_step_with_the_next_prompts_first_chunk(self):
        """A 4,000- and a 4,200-token prompt at once under the 8,192-token budget. Whole prompts (the default): step
        1 prefills the first (0.4 s), step 2 the second beside its decode (0.42 + 0.01 s): TTFTs 0.4 and 0.83 s.
        Chunked (FIRST_COME_FIRST_SERVED, ``MicroBatchScheduler::setCtxRequestsChunkSize``,
        cpp/tensorrt_llm/batch_manager/microBatchScheduler.cpp): the second's first 4,192 tokens fill step 1 (0.8192
        s) and its last 8 finish in step 2 (0.0008 + 0.01 s): 0.8192 and 0.83 s."""
        assert self._ttfts(None) == pytest.approx([0.4, 0.83])
        assert self._ttfts(True) == pytest.approx([0.8192, 0.83])

    def test_predict_benchmark_passes_it_to_the_scheduler(self):
        """``predict_benchmark(chunked_prefill=True)`` simulates a chunking TensorRT-LLM server: a 4,000- and a
        4,200-token prompt at once, the first request waits for the fuller first step, as in the table above, so the
        mean and median TTFT both rise (ignoring the flag would leave them equal)."""
        from planner.serving.benchmark import predict_benchmark

        def ttfts(flag):
            run = predict_benchmark(
                "A100 SXM 80GB", "Qwen/Qwen3-14B", 4100, 10, 0, kind="serving", num_prompts=2,
                scheduler="tensorrt-llm", engine="tensorrt-llm", gpus=1, chunked_prefill=flag,
                sample_lengths=[(4000, 10), (4200, 10)],
            )  # fmt: skip
            return run.ttft_s, run.ttft_median_s

        (whole_mean, whole_median), (chunked_mean, chunked_median) = ttfts(None), ttfts(True)
        assert chunked_mean > whole_mean and chunked_median > whole_median

    def test_a_static_batch_refuses_it(self):
        """A static batch prefills its prompts together: chunking is a serving run's setting."""
        from planner.errors import InvalidInputError
        from planner.serving.benchmark import predict_benchmark

        with pytest.raises(InvalidInputError, match="static batch prefills"):
            predict_benchmark("A100 SXM 80GB", "Qwen/Qwen3-14B", 4000, 10, 1, chunked_prefill=True)
