"""The capacity model: typed facts in, pure formulas, no I/O, no catalog lookups, no Excel.

- ``facts``: ``GpuFacts``, ``ModelFacts``, ``PrecisionFacts``, ``EngineFacts``: numbers or numpy arrays per field.
- ``memory``: weights, KV cache, tensor-parallel groups, the engine's KV budget, max batch (``memory_plan``).
- ``decode``: one decode step, TPOT (``decode_step``).
- ``breakdown``: one decode step in parts, each operator group's time and bound (``decode_step_breakdown``).
- ``prefill``: one prefill, TTFT, the busy time of a prompt (``prefill_step``).
- ``parallel``: data-parallel attention with expert parallelism (memory, decode, prefill, the all-to-all).
- ``pipeline``: pipeline parallelism, one GPU per stage (decode, prefill; memory: ``memory.pipeline_stage_facts``).
- ``roofline``: ridge point, intensities, cost per token.
- ``fleet``: replicas for a request rate, the monthly cost of their GPUs.

``planner.api`` turns GPU, model and precision names into these facts, broadcasts and shapes the results;
docs/model.md lists every quantity with its function and formula.

May import ``planner.errors`` and ``planner.units`` only: nothing of the catalog, the engines or a surface.
"""

from planner.model.breakdown import (
    StepBreakdown,
    StepPart,
    decode_step_breakdown,
    dp_decode_step_breakdown,
    pp_decode_step_breakdown,
)
from planner.model.decode import (
    DecodeStep,
    allreduce_time_s,
    decode_step,
    experts_touched,
    params_per_token,
    step_overhead_s,
    tp_communication_s,
    weights_read_bytes,
)
from planner.model.facts import EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.memory import (
    MemoryPlan,
    activation_peak_bytes,
    cached_tokens_per_layer_sum,
    experts_as_loaded,
    experts_upcast,
    kv_budget_bytes_per_gpu,
    kv_bytes,
    kv_bytes_of_layer_tokens,
    kv_cache_tokens,
    kv_replication,
    max_batch_from_budget,
    max_concurrency,
    memory_plan,
    mxfp4_experts_refused,
    pipeline_stage_facts,
    reserve_bytes_per_gpu,
    reserve_parts,
    tensor_parallel_ok,
    visible_memory_bytes,
    weight_bytes,
    weight_parts,
)
from planner.model.parallel import (
    dp_decode_step,
    dp_prefill_step,
    expert_alltoall_time_s,
    group_ok,
    streams_of,
)
from planner.model.pipeline import pp_decode_step, pp_prefill_step
from planner.model.prefill import PrefillStep, causal_attention_flop, prefill_step
from planner.model.roofline import (
    attention_intensity_flop_per_byte,
    compute_time_s,
    cost_per_million_output_tokens_with_prompts_usd,
    cost_per_million_tokens_usd,
    linear_intensity_flop_per_byte,
    memory_time_s,
    request_group_time_s,
    ridge_flop_per_byte,
)

__all__ = [
    "DecodeStep",
    "EngineFacts",
    "GpuFacts",
    "MemoryPlan",
    "ModelFacts",
    "PrecisionFacts",
    "PrefillStep",
    "StepBreakdown",
    "StepPart",
    "activation_peak_bytes",
    "allreduce_time_s",
    "attention_intensity_flop_per_byte",
    "cached_tokens_per_layer_sum",
    "causal_attention_flop",
    "compute_time_s",
    "cost_per_million_output_tokens_with_prompts_usd",
    "cost_per_million_tokens_usd",
    "decode_step",
    "decode_step_breakdown",
    "dp_decode_step_breakdown",
    "pp_decode_step_breakdown",
    "dp_decode_step",
    "dp_prefill_step",
    "expert_alltoall_time_s",
    "experts_as_loaded",
    "experts_upcast",
    "experts_touched",
    "group_ok",
    "kv_budget_bytes_per_gpu",
    "kv_bytes",
    "kv_bytes_of_layer_tokens",
    "kv_cache_tokens",
    "kv_replication",
    "linear_intensity_flop_per_byte",
    "max_batch_from_budget",
    "max_concurrency",
    "memory_plan",
    "memory_time_s",
    "mxfp4_experts_refused",
    "params_per_token",
    "pipeline_stage_facts",
    "pp_decode_step",
    "pp_prefill_step",
    "prefill_step",
    "reserve_bytes_per_gpu",
    "request_group_time_s",
    "ridge_flop_per_byte",
    "step_overhead_s",
    "streams_of",
    "tensor_parallel_ok",
    "tp_communication_s",
    "visible_memory_bytes",
    "weight_bytes",
    "weight_parts",
    "reserve_parts",
    "weights_read_bytes",
]
