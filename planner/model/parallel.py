"""Data-parallel attention with expert parallelism: memory and time of a MoE model served that way. Pure formulas.

vLLM ``--data-parallel-size g --enable-expert-parallel`` (tensor-parallel size 1 per rank) and SGLang
``--enable-dp-attention --dp g --tp g`` run a MoE model on g GPUs as g attention ranks: each GPU holds the whole
non-expert part (attention, dense layers, embeddings, head) and 1/g of the routed experts, serves its own
sequences, and keeps their KV cache whole, so an MLA latent is held once, not on every GPU as under tensor
parallelism. Each MoE layer sends every token to the ranks of its k experts and back (an all-to-all dispatch
and combine) instead of the two all-reduces per layer of tensor parallelism.

Assumptions: sequences spread evenly over the ranks; experts spread evenly (vLLM ``determine_expert_map`` gives
the first E mod g ranks one more); routing uniform, as ``experts_touched``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.model import operators, ops
from planner.model.collectives import table_allreduce_time_s
from planner.model.decode import (
    DecodeStep,
    StepCosts,
    collective_link,
    experts_touched,
    step_cost_parts,
    step_overhead_s,
    summed_costs,
)
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.layouts import is_pipeline, pipeline_stages
from planner.model.memory import (
    decode_attention_bytes,
    decode_attention_flop,
    kv_bytes,
    state_bytes,
    tensor_parallel_ok,
)
from planner.model.prefill import PrefillStep, causal_attention_flop
from planner.model.roofline import memory_time_s

#: Bytes per activation value an all-to-all moves (bf16 dispatch and combine, vLLM's default all2all backends).
ALLTOALL_BYTES_PER_VALUE = 2.0

#: A MoE layer's all-gather and reduce-scatter carry the tokens the engine gathers (``dp_gather_tokens`` by
#: ``DP_GATHER_RULES``), not g x the busiest rank's (h-dpgather, shipped; docs/hypotheses/dp-attention-gather-tokens.md).
#: False: every engine padded to the busiest rank (``bench/switch_bootstrap.py`` ablation ``dp-gather-as-engine:off``).
DP_GATHER_AS_ENGINE = True

#: How an engine sizes data-parallel attention's MoE gather (``EngineFacts.dp_gather``): 0 every rank padded to the
#: busiest (g x max rows; vLLM before PR #34102, TensorRT-LLM, unread engines); 1 SGLang 0.5.3+: a step with a prefill
#: all-reduces a buffer of the ranks' summed tokens twice (``dp_attention.py`` ``get_dp_padding_mode``: ``if
#: is_extend_in_batch: return SUM_LEN``; the gather, then the experts' output), a decode step the cheaper of that and
#: g x max; 2 SGLang 0.5.1: every step the cheaper; 3 vLLM from PR #34102 (``dp_utils.py``: ranks padded to the max
#: only for a graphed step; ``all2all.py`` ``AgRsAll2AllManager``: ``all_gatherv`` at the per-rank sizes): a prompt
#: step the summed tokens, a decode step g x max.
DP_GATHER_PADDED, DP_GATHER_SGLANG, DP_GATHER_SGLANG_CHEAPER, DP_GATHER_PER_RANK = 0.0, 1.0, 2.0, 3.0

#: ``DP_GATHER_*`` by engine profile name; SGLang's 0.5.3+ profiles ("sglang", "sglang-0.5.x") take
#: ``DP_GATHER_SGLANG``, any other name ``DP_GATHER_PADDED``. The "vllm" profile serves releases 0.12 on, so
#: 0.12-0.16 (before PR #34102, merged 2026-02-27) are read as later ones.
DP_GATHER_RULES: dict[str, float] = {
    "sglang-0.5.1": DP_GATHER_SGLANG_CHEAPER,
    "sglang-0.4": DP_GATHER_PADDED,
    "sglang-0.4.0": DP_GATHER_PADDED,
    "vllm": DP_GATHER_PER_RANK,
}


def dp_gather_rule(profile_name: str) -> float:
    """``EngineFacts.dp_gather`` of an engine profile (``DP_GATHER_RULES``); ``DP_GATHER_PADDED`` with
    ``DP_GATHER_AS_ENGINE`` off."""
    if not DP_GATHER_AS_ENGINE:
        return DP_GATHER_PADDED
    if profile_name in DP_GATHER_RULES:
        return DP_GATHER_RULES[profile_name]
    return DP_GATHER_SGLANG if profile_name == "sglang" or profile_name.startswith("sglang-") else DP_GATHER_PADDED


def dp_gather_tokens(
    rule: ArrayLike, summed: ArrayLike, busiest: ArrayLike, gpus: ArrayLike, prefill: bool
) -> ArrayLike:
    """Tokens one MoE layer's (all-gather, reduce-scatter) pair is timed at, by the engine's ``rule``
    (``DP_GATHER_*``): ``summed`` the ranks' real tokens, ``busiest`` the busiest rank's, ``prefill`` whether the
    step carries prompt tokens. A ring all-reduce of S bytes moves a reduce-scatter's and an all-gather's, so SGLang's
    two all-reduces of the summed buffer are the pair at 2 x summed."""
    padded = gpus * busiest
    cheaper = ops.minimum(padded, 2.0 * summed)
    if prefill:
        per_rank = ops.where(rule == DP_GATHER_PER_RANK, summed, padded)
        return ops.where(
            rule == DP_GATHER_SGLANG, 2.0 * summed, ops.where(rule == DP_GATHER_SGLANG_CHEAPER, cheaper, per_rank)
        )
    sglang = (rule == DP_GATHER_SGLANG) | (rule == DP_GATHER_SGLANG_CHEAPER)
    return ops.where(sglang, cheaper, padded)


def streams_of(parallelism: str, gpus: ArrayLike) -> ArrayLike:
    """How many alike batches a group of ``gpus`` runs side by side: its attention ranks ("dp-ep", one per GPU) or
    its pipeline's micro-batches (one per stage, ``layouts.pipeline_stages``); 1 for the other layouts."""
    return gpus if parallelism == "dp-ep" else pipeline_stages(parallelism, gpus)


def expert_parallel_ok(model: ModelFacts, gpus: ArrayLike) -> ArrayLike:
    """Whether the experts can be spread over ``gpus`` ranks: a MoE model with at least one expert per GPU."""
    return (model.num_experts > 0) & (gpus <= model.num_experts)


def group_ok(model: ModelFacts, gpus: ArrayLike, parallelism: str = "tp", kv_heads_any: bool = False) -> ArrayLike:
    """Whether the engine loads the model on ``gpus`` GPUs split as ``parallelism`` (``PARALLELISMS``).

    "tp": ``tensor_parallel_ok``; "tp-ep": the same with experts whole (no block rule on them) and at least one
    expert per GPU; "dp-ep": each rank holds attention whole, so only the experts' spread matters; a pipeline: every
    stage gets at least one layer, and its stages, g / N GPUs each ("ppN"), are whole tensor-parallel groups.
    ``kv_heads_any``: the engine's KV heads need not divide the group (TensorRT-LLM; ``tensor_parallel_ok``).
    """
    if parallelism == "dp-ep":
        return expert_parallel_ok(model, gpus)
    if is_pipeline(parallelism):
        stages = pipeline_stages(parallelism, gpus)
        per_stage = gpus / stages
        whole = (per_stage == ops.floor(per_stage)) & (per_stage >= 1)
        return (
            whole
            & (stages <= model.num_layers)
            & tensor_parallel_ok(model, ops.maximum(ops.floor(per_stage), 1.0), False, kv_heads_any)
        )
    if parallelism == "tp-ep":
        return tensor_parallel_ok(model, gpus, True, kv_heads_any) & expert_parallel_ok(model, gpus)
    return tensor_parallel_ok(model, gpus, False, kv_heads_any)


def routed_expert_bytes(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """Weight bytes of all routed experts: routed params x expert B/param."""
    return model.params_routed_experts * precision.expert_bytes_per_param


def expert_alltoall_time_s(
    gpu: GpuFacts, limits: EngineFacts, model: ModelFacts, tokens_per_gpu: ArrayLike, gpus: ArrayLike
) -> ArrayLike:
    """One MoE layer's dispatch + combine: 2 x (latency + T x k x hidden x 2 B x (g-1)/g / (link x efficiency)).

    Each of a GPU's T tokens goes to its k experts; under uniform routing (g-1)/g of those copies live on other
    ranks, and come back after the experts (combine). The link is the GPU's own fabric bandwidth within the fabric
    domain (on a fully connected mesh the g - 1 links a group has: ``collectives.mesh_group_share``), PCIe's beyond it
    (as ``allreduce_time_s``); the latency is the engine's collective latency. 0 on one GPU.
    """
    _, link, latency, _ = collective_link(gpu, limits, gpus)
    sent = tokens_per_gpu * model.experts_per_token * model.hidden_size * ALLTOALL_BYTES_PER_VALUE
    one_way = latency + sent * ((gpus - 1.0) / gpus) / link
    return ops.where(gpus > 1, 2.0 * one_way, 0.0)


def gathered_token_bytes(limits: EngineFacts, model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """Bytes per hidden value a data-parallel MoE all-gathers: bf16, but the experts' input precision where the engine
    quantizes the tokens before the gather (``limits.moe_exchange`` 2, TensorRT-LLM: NVFP4 experts their 0.5625 B
    with its scales, per-tensor FP8 1 B; block-FP8 and MXFP4 experts take 16-bit inputs: ``fused_moe_cutlass.py``
    quantizes before its all-gather only for ``has_nvfp4`` and ``has_fp8_qdq``)."""
    e = precision.expert_bytes_per_param
    per_tensor_fp8 = (e == 1.0) & (model.weight_block_size == 0)
    quantized = ops.where(precision.expert_mxfp4 > 0, 2.0, ops.where(e < 1.0, e, ops.where(per_tensor_fp8, 1.0, 2.0)))
    return ops.where(limits.moe_exchange == 2.0, quantized, 2.0)


def moe_gather_scatter_time_s(
    limits: EngineFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    tokens_per_gpu: ArrayLike,
    gpus: ArrayLike,
    gathered: ArrayLike | None = None,
) -> ArrayLike:
    """One MoE layer's all-gather of the group's g x T tokens (``gathered_token_bytes`` a value) and reduce-scatter of
    their bf16 outputs, each NCCL's measured time on the GPU's row of ``limits.gather_scatter_table`` (at the message's
    total bytes x ``gather_scatter_table_bytes_scale``; ``planner.model.collectives.table_allreduce_time_s``, whose
    mode axis here is (all_gather, reduce_scatter)); NaN where the table has no row or group size. ``gathered``: the
    tokens the engine gathers instead of g x T (``dp_gather_tokens``)."""
    tokens = tokens_per_gpu * gpus if gathered is None else gathered
    values = tokens * model.hidden_size * limits.gather_scatter_table_bytes_scale
    table, row = limits.gather_scatter_table, limits.gather_scatter_table_row
    gather = table_allreduce_time_s(table, row, values * gathered_token_bytes(limits, model, precision), gpus, True)
    return gather + table_allreduce_time_s(table, row, values * 2.0, gpus, False)


def ep_communication_s(
    gpu: GpuFacts,
    limits: EngineFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    tokens_per_gpu: ArrayLike,
    gpus: ArrayLike,
    gathered: ArrayLike | None = None,
) -> ArrayLike:
    """A step's MoE communication (no all-reduces: attention is not split): MoE layers x one layer's. Where the engine
    gathers (``limits.moe_exchange`` > 0), an all-gather and a reduce-scatter (``moe_gather_scatter_time_s``), but
    TensorRT-LLM's (2) all-to-alls for experts spread over more GPUs than a token's top-k on a multi-node NVLink domain
    (more than 8 GPUs sharing the fabric: GB200 / GB300 NVL72); elsewhere, or where the measured table cannot say, the
    all-to-all (``expert_alltoall_time_s``). ``gathered``: the tokens the gather carries (``dp_gather_tokens``; None:
    g x ``tokens_per_gpu``); the all-to-all is the busiest rank's either way."""
    alltoall = expert_alltoall_time_s(gpu, limits, model, tokens_per_gpu, gpus)
    if limits.gather_scatter_table is None or (type(limits.moe_exchange) is float and limits.moe_exchange == 0.0):
        return model.moe_layers * alltoall
    gather_s = moe_gather_scatter_time_s(limits, model, precision, tokens_per_gpu, gpus, gathered)
    mnnvl = (limits.moe_exchange == 2.0) & (gpu.interconnect_domain_gpus > 8) & (gpus > model.experts_per_token)
    use = (limits.moe_exchange > 0) & (gpus > 1) & (mnnvl < 1) & (gather_s == gather_s)
    return model.moe_layers * ops.where(use, gather_s, alltoall)


def dp_decode_step(
    split: DecodeStep,
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: ArrayLike,
) -> DecodeStep:
    """TPOT of g attention ranks holding B / g sequences each: one GPU's operators (``planner.model.operators``)
    + all-to-alls + overhead.

    A GPU runs the dense GEMMs whole at its own CUDA-graph batch, 1/g of the batch's expert work (the experts the
    whole batch touches, E / g of them on each GPU: as tensor parallelism splits it) and attention over its own
    sequences' KV. ``split``: ``decode_step`` of the same batch on the same group, whose ``flop`` (the group's),
    batch and GPU count it keeps; ``bytes_moved`` g x one GPU's.

    Attention takes the one rule ``decode_step`` gives a tensor-parallel GPU (``operators.attention_time_s`` over
    the GPU's own cache and heads), here every query head over 1/g of the latents: MLA's 128 heads make it
    compute-bound on Hopper, so an fp8 cache, which halves the bytes, hardly moves it, while TP8's 16 heads a GPU
    are bound by the bytes (vLLM's measured MLA modules, ``catalogs/reference/mla_module_aic.csv``, H200: fp8 0.70x
    bf16 at 16 heads, 0.93x at 128; trial 22 F6, tests/test_mla_attention_per_rank.py).
    """
    t = _dp_terms(gpu, model, precision, limits, context_tokens, split.batch, split.gpus)
    gpus = split.gpus
    return replace(
        split,
        step_s=t.step_s,
        bytes_moved=t.bytes_gpu * gpus,
        memory_time_s=memory_time_s(t.bytes_gpu, 1.0, gpu.bandwidth_bytes_per_s, limits.bandwidth_efficiency),
        communication_s=t.communication_s,
        overhead_s=t.overhead_s,
    )


@dataclass(frozen=True)
class _DpTerms:
    """What ``dp_decode_step`` times a step from, kept in terms so that
    ``planner.model.breakdown.dp_decode_step_breakdown`` lists the same numbers the TPOT sums."""

    per_rank: ArrayLike  # sequences a rank holds (B / g)
    gathered: ArrayLike | None  # the tokens the gather carries (``dp_gather_tokens``)
    #: the keyword arguments ``operators.forward_kernel_parts`` is called with (but gpu, model, limits) and its parts
    kernel_args: dict
    kernel_parts: tuple[ArrayLike, ArrayLike, ArrayLike]
    sparse_s: ArrayLike  # ``operators.sparse_mla_time_s``
    bytes_gpu: ArrayLike  # one GPU's bytes: dense + experts / g + its KV
    communication_s: ArrayLike  # ``ep_communication_s``
    costs: StepCosts  # ``step_cost_parts`` at the rank's sequences
    overhead_s: ArrayLike  # their sum (``step_costs_s``)
    step_s: ArrayLike


def _dp_terms(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
) -> _DpTerms:
    """``dp_decode_step``'s arithmetic (see there) of ``batch`` sequences on ``gpus`` attention ranks."""
    per_rank = batch / gpus
    rows = operators.cuda_graph_batch(per_rank)
    dense = operators.dense_weight_bytes(model, precision)
    touched = experts_touched(model, batch)
    experts = operators.expert_weight_bytes(model, precision, touched)
    sparse = operators.sparse_mla_applies(model, limits, 1.0, prefill=False)  # every head on the rank
    kv_all = decode_attention_bytes(model, precision, context_tokens, per_rank)
    kv_read = (
        kv_all
        if type(sparse) is float and sparse == 0.0
        else (decode_attention_bytes(model, precision, context_tokens, per_rank, 1.0, sparse))
    )
    attention_flop = decode_attention_flop(model, context_tokens, per_rank, sparse)
    kernel_args = dict(
        prefill=False, rows=rows, gpus=gpus, dense_bytes=dense, expert_bytes=experts,
        attention_bytes=kv_read, attention_flop=attention_flop,
        dense_gpus=1.0, expert_rows=gpus * rows, attention_gpus=1.0, touched=touched,
        weight_bytes_per_param=precision.weight_bytes_per_param, kv_bytes_per_element=precision.kv_bytes_per_element,
    )  # fmt: skip
    kernel_parts = operators.forward_kernel_parts(gpu, model, limits, **kernel_args)
    sparse_s = operators.sparse_mla_time_s(
        model, limits, rows, 1.0, sparse, precision.kv_bytes_per_element, context_tokens
    )
    # ``operators.forward_kernels_time_s``' sum, then the sparse kernel
    kernels_s = (kernel_parts[0] + kernel_parts[1] + kernel_parts[2]) + sparse_s
    bytes_gpu = dense + experts / gpus + kv_all
    gathered = dp_gather_tokens(limits.dp_gather, batch, per_rank, gpus, prefill=False)
    comm = ep_communication_s(gpu, limits, model, precision, per_rank, gpus, gathered)
    costs = step_cost_parts(model, limits, kernels_s + comm, per_rank)
    overhead = summed_costs(costs)  # step_costs_s
    return _DpTerms(
        per_rank, gathered, kernel_args, kernel_parts, sparse_s, bytes_gpu, comm, costs, overhead,
        kernels_s + (comm + overhead),
    )  # fmt: skip


def dp_prefill_step(
    split: PrefillStep,
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    batch: ArrayLike,
) -> PrefillStep:
    """TTFT of ``batch`` prompts spread over g attention ranks (ceil(batch / g) on the busiest): that rank's
    operators + all-to-alls + overhead + prefill latency.

    The busiest rank runs its prompts' dense GEMMs and causal attention alone, 1/g of every prompt's expert work
    (the experts all tokens touch, E / g of them here) and writes its prompts' KV whole. ``flop`` is the group's
    (``split``: ``prefill_step`` of the same prompts on the same group, whose ``flop``, prompt length and GPU count it
    keeps), ``bytes_moved`` g x the busiest rank's.
    """
    prompt_tokens, gpus = split.prompt_tokens, split.gpus
    on_rank = ops.ceil(batch / gpus)
    dense = operators.dense_weight_bytes(model, precision)
    touched = experts_touched(model, prompt_tokens * batch)
    experts = operators.expert_weight_bytes(model, precision, touched)
    kv_written = kv_bytes(model, precision, prompt_tokens, on_rank) + state_bytes(model, on_rank)
    sparse = operators.sparse_mla_applies(model, limits, 1.0, prefill=True)  # every head on the rank
    attention_flop = on_rank * causal_attention_flop(model, prompt_tokens, sparse)
    t = operators.forward_kernels_time_s(
        gpu, model, limits, prefill=True, rows=on_rank * prompt_tokens, gpus=gpus, dense_bytes=dense,
        expert_bytes=experts, attention_bytes=kv_written, attention_flop=attention_flop,
        dense_gpus=1.0, expert_rows=prompt_tokens * batch, attention_gpus=1.0, touched=touched,
        weight_bytes_per_param=precision.weight_bytes_per_param, kv_bytes_per_element=precision.kv_bytes_per_element,
        head_rows=on_rank,
    ) + operators.sparse_mla_time_s(model, limits, on_rank * prompt_tokens, 1.0, sparse)  # fmt: skip
    # the ranks' real tokens: batch prompts, ceil(batch / g) of them on the busiest (one prompt: the others idle)
    gathered = dp_gather_tokens(limits.dp_gather, batch * prompt_tokens, on_rank * prompt_tokens, gpus, prefill=True)
    comm = ep_communication_s(gpu, limits, model, precision, on_rank * prompt_tokens, gpus, gathered)
    ttft = t + comm + step_overhead_s(model, limits, on_rank * prompt_tokens) + limits.prefill_latency_s
    return replace(split, ttft_s=ttft, bytes_moved=(dense + experts / gpus + kv_written) * gpus)
