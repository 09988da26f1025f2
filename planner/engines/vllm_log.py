"""What vLLM's start-up log prints about the KV cache, for models with local (sliding or chunked) attention too.

vLLM V1's hybrid KV cache manager (docs/design/hybrid_kv_cache_manager.md) pages layers in groups of equal size
(``planner.model.memory.kv_cache_groups``); the pool of ``num_blocks`` blocks is shared by the groups. The blocks a
request holds are ``planner.model.memory.kv_blocks_per_request``: the same rule ``max_batch`` uses (at one decoding
token), here at a prefill chunk of ``max_num_batched_tokens`` as vLLM's concurrency line assumes.

- "GPU KV cache size: N tokens" = (num_blocks // groups) x block size (``vllm/v1/core/kv_cache_utils.py``,
  ``_report_kv_cache_config``, through v0.19 at least; later versions print max concurrency x max_model_len);
- "Maximum concurrency for L tokens per request" = num_blocks / blocks one request of L tokens may hold: a
  full-attention group ceil(L / block); a sliding-window group ceil(min(window - 1 + max_num_batched_tokens, L)
  / block) + 1; a chunked-attention group ceil(min(chunk + max_num_batched_tokens, L) / block)
  (``SlidingWindowSpec`` / ``ChunkedLocalAttentionSpec.max_memory_usage_bytes`` in ``vllm/v1/kv_cache_interface.py``).

For a model with one attention type both reduce to the plain rule (``planner.model.kv_cache_tokens``,
``planner.model.max_concurrency``). Pure functions; no I/O.
"""

from __future__ import annotations

import math

from planner.catalog.schema import Model
from planner.engines.architecture import model_facts
from planner.model.facts import ModelFacts
from planner.model.memory import (
    KV_GROUP_SIZE_RATIO,
    hybrid_state_block_tokens,
    kv_cache_groups,
    padded_kv_layer_tokens,
)


def vllm_kv_log(
    model: Model,
    kv_budget_bytes_per_gpu: float,
    kv_bytes_per_token_per_gpu: float,
    max_model_len: int | None,
    *,
    block_size: int,
    max_num_batched_tokens: int,
    gpus: int = 1,
) -> tuple[float, float]:
    """(KV cache tokens of the group, maximum concurrency at ``max_model_len``) as vLLM logs them.

    ``kv_bytes_per_token_per_gpu`` is the planner's all-layer figure (every layer caching the token); a group of
    ``size`` layers takes size / layers of it per block. Concurrency is NaN without a ``max_model_len``. A model with
    state layers pages as ``_hybrid_state_log`` on ``gpus`` GPUs.
    """
    block = max(int(block_size), 1)
    facts = model_facts(model)
    if facts.linear_attention_layers:
        return _hybrid_state_log(
            facts, kv_budget_bytes_per_gpu, kv_bytes_per_token_per_gpu, max_model_len, block, max(int(gpus), 1)
        )
    size, full_groups, local_groups = (int(x) for x in kv_cache_groups(facts))
    attention_layers = float(facts.full_attention_layers + facts.sliding_window_layers)  # linear layers: no KV
    page = kv_bytes_per_token_per_gpu / attention_layers * size * block
    num_blocks = math.floor(max(kv_budget_bytes_per_gpu, 0.0) / page)
    tokens = float(num_blocks // (full_groups + local_groups) * block)
    if not max_model_len:
        return tokens, math.nan
    layer_tokens = padded_kv_layer_tokens(facts, float(max_model_len), block, float(max_num_batched_tokens))
    return tokens, num_blocks / (layer_tokens / (size * block))


def _hybrid_state_log(
    facts: ModelFacts,
    budget_per_gpu: float,
    kv_per_token_per_gpu: float,
    max_model_len: int | None,
    block: int,
    gpus: int,
) -> tuple[float, float]:
    """``vllm_kv_log`` for a model with state layers (Gated DeltaNet, Mamba-2): pages of one enlarged attention block
    (``planner.model.memory.hybrid_state_block_tokens``), groups of ``size`` layers of one kind
    (``hybrid_sequence_bytes``); num_blocks = budget / (size x page); tokens = (num_blocks // groups) x block; a
    request of L tokens holds ceil(L / block) blocks of each attention group and one of each state group (no prefix
    caching of states). Qwen3-Next on 2 x H200 with 44.59 GiB per GPU: 7,162 blocks of 544 tokens, 1,790 x 544 =
    973,760 tokens and 7,162 / 485 = 14.77x at 262,144, as its start-up log prints."""
    full, linear = float(facts.full_attention_layers), float(facts.linear_attention_layers)
    token_page = kv_per_token_per_gpu / full
    hybrid_block = float(hybrid_state_block_tokens(token_page, facts.state_bytes_per_sequence / linear / gpus, block))
    low, high = min(full, linear), max(full, linear)
    size = max(high if high < KV_GROUP_SIZE_RATIO * low else low, 1.0)
    full_groups, state_groups = math.ceil(full / size), math.ceil(linear / size)
    num_blocks = math.floor(max(budget_per_gpu, 0.0) / (size * hybrid_block * token_page))
    tokens = float(num_blocks // (full_groups + state_groups) * hybrid_block)
    if not max_model_len:
        return tokens, math.nan
    return tokens, num_blocks / (full_groups * math.ceil(max_model_len / hybrid_block) + state_groups)


def logs_vllm_lines(engine_name: str) -> bool:
    """Whether the engine profile's start-up log is vLLM's, the one whose "Available KV cache memory" (GiB),
    "GPU KV cache size" and "Maximum concurrency" lines ``vllm_kv_log`` reproduces: the vllm profiles only
    (SGLang, TensorRT-LLM and LMDeploy log their pools in other words and units; the 'ideal' engine logs nothing)."""
    return engine_name == "vllm" or engine_name.startswith("vllm-")


def concurrency_note(model: Model, max_num_batched_tokens: int, max_model_len: int) -> str:
    """Why vLLM's "Maximum concurrency" line reads fewer requests than the max batch the cache holds, for a model with
    local (sliding-window or chunked) attention layers; "" for any other model.

    The line divides the pool by the blocks one request may hold with a whole prefill chunk of
    ``max_num_batched_tokens`` in flight: a sliding-window layer ceil(min(window - 1 + max_num_batched_tokens, L) /
    block) + 1 blocks, a chunked one ceil(min(chunk + max_num_batched_tokens, L) / block)
    (``SlidingWindowSpec`` / ``ChunkedLocalAttentionSpec.max_memory_usage_bytes``, vllm/v1/kv_cache_interface.py),
    where a decoding sequence holds its window and one token (``planner.model.memory.kv_blocks_per_request`` at
    s = 1), what max batch counts. gpt-oss-120b on one H100 at 8,192 tokens: window 128, so each of its 18
    sliding layers is counted at all 8,192 tokens in the line (6.26x) and at 128 in max batch (12)."""
    facts = model_facts(model)
    local = int(facts.sliding_window_layers)
    if local <= 0 or not math.isfinite(float(facts.sliding_window)):
        return ""
    chunked = float(facts.local_attention_chunked) > 0
    span, s, length = int(facts.sliding_window), int(max_num_batched_tokens), int(max_model_len)
    kind, sum_text = (
        ("chunked-attention", f"chunk {span:,} + max_num_batched_tokens {s:,}")
        if chunked
        else ("sliding-window", f"window {span:,} - 1 + max_num_batched_tokens {s:,}")
    )
    held = min(span - (0 if chunked else 1) + s, length)
    return (
        f"lower than max batch: vLLM's line counts each of the {local} {kind} layers at {held:,} tokens a request, "
        f"as if a whole prefill chunk were in flight ({sum_text}, at most the request's {length:,}), max batch at "
        f"the {span:,} a decoding sequence keeps"
    )
