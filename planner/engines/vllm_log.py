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
from planner.model.memory import kv_cache_groups, padded_kv_layer_tokens


def vllm_kv_log(
    model: Model,
    kv_budget_bytes_per_gpu: float,
    kv_bytes_per_token_per_gpu: float,
    max_model_len: int | None,
    *,
    block_size: int,
    max_num_batched_tokens: int,
) -> tuple[float, float]:
    """(KV cache tokens of the group, maximum concurrency at ``max_model_len``) as vLLM logs them.

    ``kv_bytes_per_token_per_gpu`` is the planner's all-layer figure (every layer caching the token); a group of
    ``size`` layers takes size / layers of it per block. Concurrency is NaN without a ``max_model_len``.
    """
    block = max(int(block_size), 1)
    facts = model_facts(model)
    size, full_groups, local_groups = (int(x) for x in kv_cache_groups(facts))
    attention_layers = float(facts.full_attention_layers + facts.sliding_window_layers)  # linear layers: no KV
    page = kv_bytes_per_token_per_gpu / attention_layers * size * block
    num_blocks = math.floor(max(kv_budget_bytes_per_gpu, 0.0) / page)
    tokens = float(num_blocks // (full_groups + local_groups) * block)
    if not max_model_len:
        return tokens, math.nan
    layer_tokens = padded_kv_layer_tokens(facts, float(max_model_len), block, float(max_num_batched_tokens))
    return tokens, num_blocks / (layer_tokens / (size * block))
