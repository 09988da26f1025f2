"""How TensorRT-LLM 1.x (PyTorch backend, ``trtllm-serve``) sizes its KV cache and admits requests, read from its
source (issue 22): the start-up estimate's forward pass is the server's own ``max_num_tokens``, and the capacity
scheduler reserves each request's prompt and whole output. planner.engines.profiles, planner.serving.benchmark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planner.engines.profiles import TENSORRT_LLM, TENSORRT_LLM_0, VLLM, profiled_at_token_budget
from planner.serving.benchmark import reserved_blocks_factor
from planner.serving.load import Replica

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
        MLP width), 0.9 x 2 x 24,576 x 56,320 B = 2.49 GB, 9,504 tokens of 256 KiB (seen through requests of 217 +
        201 tokens that reserve 14 blocks of 32: x 418 / 448)."""
        default, larger = _kv_tokens("tensorrt-llm", None), _kv_tokens("tensorrt-llm", 32768)
        expected = 0.9 * 2.0 * (32768 - 8192) * (HIDDEN + 2 * MLP) / KV_BYTES_PER_TOKEN
        assert round(expected) == 9504
        assert default - larger == pytest.approx(expected * 418 / 448, abs=32)  # the pool: whole blocks of 32

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
    def test_each_request_reserves_whole_blocks_to_completion(self):
        """``GUARANTEED_NO_EVICT`` (``trtllm-serve``'s policy: ``SchedulerConfig(capacity_scheduler_policy=
        CapacitySchedulerPolicy.GUARANTEED_NO_EVICT, ...)`` in ``get_llm_args``, tensorrt_llm/commands/serve.py)
        admits a request while the blocks every admitted request needs to completion fit, each request's
        ``ceil(min(prompt + max new tokens, window) / tokens_per_block)`` (``KVCacheManager::
        getRemainingBlocksToCompletion``, cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp; ``tokens_per_block``
        32, ``KvCacheConfig``). A 217 + 201-token request holds 14 blocks, 448 token slots for its 418 tokens, so the
        simulation's token-exact reservations see the cache x 418 / 448."""
        assert reserved_blocks_factor(None, 217, 201, 32) == pytest.approx(418 / 448)
        assert reserved_blocks_factor([(100, 28), (217, 201)], 0, 0, 32) == pytest.approx((128 + 418) / (128 + 448))
        assert reserved_blocks_factor(None, 217, 201, 1) == 1.0
        plain = Replica("A100 SXM 80GB", "Qwen/Qwen3-32B", gpus=1, scheduler="vllm", engine="tensorrt-llm")
        reserving = Replica("A100 SXM 80GB", "Qwen/Qwen3-32B", gpus=1, scheduler="tensorrt-llm", engine="tensorrt-llm")
        ratio = reserving.setup(217, 201).scheduler.kv_tokens / plain.setup(217, 201).scheduler.kv_tokens
        assert ratio == pytest.approx(418 / 448)
