"""A decode step in parts: each operator group's time and what bounded it, summing to the TPOT.

``decode_step_breakdown`` reads the terms ``planner.model.decode.decode_step`` sums (``_decode_terms``: the kernels of
``operators.forward_kernel_parts``, the all-reduces of ``tp_communication_s``, the engine costs of
``step_cost_parts``), so its parts are the TPOT's own numbers, not a second model of it. What bounded an operator
group (memory or compute) is read by timing the same group again with the engine's FLOP or byte factor made
infinite (that side then takes no time), and its kernel floors with both: the same functions, other inputs.
Trial 33 F5: "the CLI has no per-operator breakdown"; ``planner plan --explain`` prints this. A pipeline's step
(``pp_decode_step_breakdown``) is one stream's tensor-parallel step on a stage + its stage sends, as
``planner.model.pipeline.pp_decode_step`` sums it; dp-ep's (``dp_decode_step_breakdown``) reads the terms
``planner.model.parallel.dp_decode_step`` sums (``parallel._dp_terms``), its expert exchange in place of all-reduces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.model import operators, parallel, pipeline
from planner.model.decode import StepCosts, _decode_terms, allreduce_time_s
from planner.model.facts import EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.units import counted, fmt_bytes

#: The parts of a decode step, in the order listed: (key, label). Keys are ``planner plan --json``'s
#: (``step_breakdown_s``); every key is there for every model (0 where a part does not apply).
STEP_PARTS = (
    ("dense_gemms", "dense GEMMs (QKV, O, gate-up, down, head)"),
    ("expert_gemms", "MoE expert GEMMs"),
    ("gemm_floors", "GEMM kernel floors"),
    ("attention", "attention"),
    ("attention_floors", "attention kernel floors"),
    ("sparse_mla", "sparse MLA kernel"),
    ("all_reduce", "all-reduces"),
    ("stage_sends", "pipeline stage sends"),
    ("expert_exchange", "MoE expert exchange (all-to-all or gather-scatter)"),
    ("step_fixed", "per-step cost (scheduling, sampling)"),
    ("layer_overhead", "per-layer cost (norms, element-wise, launch gaps)"),
    ("moe_layer_floor", "per-MoE-layer fused-MoE floor"),
    ("decode_moe_layer", "decode-path MoE cost"),
    ("eager_launch", "eager launch above the decode graphs"),
    ("host_sequences", "host per-sequence cost"),
)
LABELS = dict(STEP_PARTS)


@dataclass(frozen=True)
class StepPart:
    """One part of a decode step: its key (``STEP_PARTS``), seconds and what bounded it, in words with the fraction
    or floor it used."""

    key: str
    seconds: float
    bound: str

    @property
    def label(self) -> str:
        return LABELS[self.key]


@dataclass(frozen=True)
class StepBreakdown:
    """A decode step of ``batch`` sequences on ``gpus`` GPUs in parts (``STEP_PARTS``' order) and the step time
    ``decode_step`` gives; ``residual_s`` is what the parts' sum misses of it (floating-point rounding only)."""

    batch: float
    gpus: float
    step_s: float
    parts: tuple[StepPart, ...]
    #: the layout in words where the step is not one tensor-parallel group's ("one stream of 19 sequences on a
    #: stage of 1 GPU, 4 stages"), "" where it is
    layout: str = ""

    @property
    def residual_s(self) -> float:
        return self.step_s - math.fsum(p.seconds for p in self.parts)

    def seconds(self) -> dict[str, float]:
        """Part key -> seconds, every part (0 where one does not apply)."""
        return {p.key: p.seconds for p in self.parts}

    def part(self, key: str) -> StepPart:
        return next(p for p in self.parts if p.key == key)


def _figure(x: float) -> str:
    """Three significant figures, whole with separators from 100: 0.105, 4.51, 898, 2,615."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _share(x: float) -> str:
    """75%, or 0.4% below 1%."""
    return f"{x:.0%}" if x >= 0.01 else f"{x:.1%}"


def _rate_words(amount: float, unit: str, seconds: float, gpus: float, datasheet: float, what: str) -> str:
    """ "8.82 GB a GPU at 4.51 TB/s, 75% of the datasheet's 6 TB/s bandwidth" (``unit``: "B" or "FLOP")."""
    per_gpu = amount / gpus
    rate = per_gpu / seconds if seconds > 0 else math.nan
    scale, prefix = (1e9, "G") if unit == "B" else (1e12, "T")
    return (
        f"{_figure(per_gpu / scale)} {prefix}{unit} a GPU at {_figure(rate / 1e12)} T{unit}/s, "
        f"{_share(rate / datasheet)} of the datasheet's {_figure(datasheet / 1e12)} T{unit}/s {what}"
    )


def _roofline_part(
    key: str, total: float, floor: float, memory_side: float, compute_side: float, bytes_: float, flop: float,
    gpus: float, bandwidth: float, peak: float,
) -> StepPart:  # fmt: skip
    """An operator group's time above its kernel floors, bound by the longer of its memory and compute sides."""
    memory_s, compute_s = memory_side - floor, compute_side - floor
    if memory_s >= compute_s:
        bound = "memory: " + _rate_words(bytes_, "B", memory_s, gpus, bandwidth, "bandwidth")
    else:
        bound = "compute: " + _rate_words(flop, "FLOP", compute_s, gpus, peak, "peak")
    return StepPart(key, total - floor, bound if total > floor else "none")


def _operator_parts(
    gpu: GpuFacts, model: ModelFacts, limits: EngineFacts, kwargs: dict, kernel_parts: tuple, sparse_s: float
) -> list[StepPart]:
    """The kernels' parts (dense GEMMs, MoE expert GEMMs, GEMM floors, attention, attention floors, sparse MLA) of
    ``operators.forward_kernel_parts`` called with ``kwargs`` (its own result: ``kernel_parts``), each group's bytes
    and FLOPs a GPU over the GPUs it runs on (``dense_gpus``, ``expert_rows``, ``attention_gpus``: the data-parallel
    forms; else ``gpus`` and ``rows``)."""
    inf = math.inf
    # the same kernels with one side free: FLOPs at infinite rate (memory side + floor), bytes at infinite rate
    # (compute side + floor), both (floor alone)
    memory_side = operators.forward_kernel_parts(gpu, model, replace(limits, decode_flop_efficiency=inf), **kwargs)
    compute_side = operators.forward_kernel_parts(gpu, model, replace(limits, bandwidth_efficiency=inf), **kwargs)
    floors = operators.forward_kernel_parts(
        gpu, model, replace(limits, decode_flop_efficiency=inf, bandwidth_efficiency=inf), **kwargs
    )
    bandwidth, peak = float(gpu.bandwidth_bytes_per_s), float(gpu.peak_flop_per_s)
    gpus = float(kwargs["gpus"])
    dense_gpus = gpus if kwargs.get("dense_gpus") is None else float(kwargs["dense_gpus"])
    attention_gpus = gpus if kwargs.get("attention_gpus") is None else float(kwargs["attention_gpus"])
    rows = float(kwargs["rows"])
    expert_rows = rows if kwargs.get("expert_rows") is None else float(kwargs["expert_rows"])
    dense_flop = 2.0 * rows * float(model.params_read_per_step)
    expert_flop = 2.0 * expert_rows * float(model.moe_layers * model.experts_per_token * model.params_per_expert_layer)
    kv_bytes = float(kwargs["attention_bytes"])
    if operators.any_nonzero(limits.decode_kv_reads_per_query_head):
        kv_bytes *= float(operators.decode_kv_read_factor(model, limits, attention_gpus))
    dense_t, expert_t, attention_t = (float(x) for x in kernel_parts)
    parts = [
        _roofline_part(
            "dense_gemms", dense_t, float(floors[0]), float(memory_side[0]), float(compute_side[0]),
            float(kwargs["dense_bytes"]), dense_flop, dense_gpus, bandwidth, peak,
        ),
        _roofline_part(
            "expert_gemms", expert_t, float(floors[1]), float(memory_side[1]), float(compute_side[1]),
            float(kwargs["expert_bytes"]), expert_flop, gpus, bandwidth, peak,
        ),
    ]  # fmt: skip
    gemm_kernels = float(floors[0]) / float(limits.gemm_floor_s) if float(limits.gemm_floor_s) > 0 else 0.0
    parts.append(
        StepPart(
            "gemm_floors",
            float(floors[0]) + float(floors[1]),
            f"kernel floor: {gemm_kernels:,.0f} GEMMs x {float(limits.gemm_floor_s) * 1e6:.2f} us",
        )
    )
    parts.append(
        _roofline_part(
            "attention", attention_t, float(floors[2]), float(memory_side[2]), float(compute_side[2]),
            kv_bytes, float(kwargs["attention_flop"]), attention_gpus, bandwidth,
            float(operators.attention_peak_flop_per_s(gpu)),
        )
    )  # fmt: skip
    parts.append(
        StepPart(
            "attention_floors",
            float(floors[2]),
            f"kernel floor: {float(model.num_layers):,.0f} layers x {float(limits.attention_floor_s) * 1e6:.2f} us",
        )
    )
    parts.append(StepPart("sparse_mla", sparse_s, "measured kernel time per token" if sparse_s else "none"))
    return parts


def _cost_parts(model: ModelFacts, limits: EngineFacts, c: StepCosts, batch: float) -> list[StepPart]:
    """The engine's costs (``step_cost_parts``' terms ``c``, of ``batch`` sequences on the host) as parts."""
    parts = []
    layers, moe_layers = float(model.num_layers), float(model.moe_layers)
    parts.append(StepPart("step_fixed", float(c.fixed_s), "engine profile's per-step cost"))
    parts.append(
        StepPart(
            "layer_overhead",
            float(c.layers_s),
            f"engine profile's per-layer cost: {float(limits.layer_overhead_s) * 1e6:.2f} us x {layers:,.0f} layers",
        )
    )
    per_moe = float(c.moe_layers_s) / moe_layers if moe_layers else 0.0
    parts.append(
        StepPart(
            "moe_layer_floor",
            float(c.moe_layers_s),
            f"measured fused-MoE floor + engine profile's cost: {per_moe * 1e6:.2f} us x {moe_layers:,.0f} MoE layers"
            if moe_layers
            else "none (dense model)",
        )
    )
    decode_moe = 0.0 if c.decode_moe_layers_s is None else float(c.decode_moe_layers_s)
    parts.append(
        StepPart(
            "decode_moe_layer", decode_moe, "engine profile's decode-path cost per MoE layer" if decode_moe else "none"
        )
    )
    eager = 0.0 if c.eager_s is None else float(c.eager_s)
    graph = float(limits.decode_graph_max_batch)
    parts.append(
        StepPart(
            "eager_launch",
            eager,
            f"eager launch: batch {batch:,.0f} above the largest decode graph ({graph:,.0f})" if eager else "none",
        )
    )
    host, hidden = float(c.host_s), 0.0 if c.host_hidden_s is None else float(c.host_hidden_s)
    words = f"engine profile's host cost: {float(limits.sequence_overhead_s) * 1e6:.2f} us x {counted(batch, 'sequence', ',.0f')}"
    if hidden:
        words += f", {hidden * 1e3:.3g} ms of it hidden behind the device by the engine's asynchronous loop"
    parts.append(StepPart("host_sequences", host - hidden, words))
    return parts


def decode_step_breakdown(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: float,
    batch: float,
    gpus: float,
) -> StepBreakdown:
    """One tensor-parallel decode step (``planner.model.decode.decode_step``, one scenario: numbers, not arrays) in
    parts summing to its ``step_s``: the dense GEMMs, MoE expert GEMMs and attention above their kernel floors, each
    bound by memory or compute (the bytes or FLOPs a GPU moves, the rate achieved and its fraction of the datasheet);
    the GEMM and attention kernel floors; the sparse MLA kernel (a measured time per token); the tensor-parallel
    all-reduces (the measured table or the latency + bandwidth form); the engine's per-step, per-layer and per-MoE-layer
    costs, its eager launch surplus and the host's per-sequence cost (less what the engine loop hides behind the
    device)."""
    t = _decode_terms(gpu, model, precision, limits, context_tokens, batch, gpus)
    parts = _operator_parts(gpu, model, limits, t.kernel_args, t.kernel_parts, float(t.sparse_s))
    comm = float(t.communication_s)
    if comm > 0:
        message = batch * float(model.hidden_size) * 2.0
        each = comm / (2.0 * float(model.num_layers))
        form = float(allreduce_time_s(gpu, replace(limits, allreduce_table=None), message, gpus, batch))
        source = "measured all-reduce table" if form != each else "latency + bytes / link form"
        words = (
            f"{source}: {2 * float(model.num_layers):,.0f} all-reduces of {fmt_bytes(message)} x "
            f"{_figure(each * 1e6)} us"
        )
    else:
        words = "none (one GPU)"
    parts.append(StepPart("all_reduce", comm, words))
    parts += [StepPart("stage_sends", 0.0, "none (one stage)"), StepPart("expert_exchange", 0.0, "none")]
    parts += _cost_parts(model, limits, t.costs, batch)
    return StepBreakdown(float(batch), float(gpus), float(t.step_s), tuple(parts))


def pp_decode_step_breakdown(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: float,
    batch: float,
    gpus: float,
    stages: float,
) -> StepBreakdown:
    """A pipeline's decode step (``planner.model.pipeline.pp_decode_step``, one scenario) in parts summing to its
    ``step_s``: one stream's step on one stage's g / S GPUs (``decode_step_breakdown`` of B / min(S, B) sequences)
    and the stream's S - 1 sends between stages (``pipeline.stage_sends_s``)."""
    n = float(pipeline.streams(batch, stages))
    stream = batch / n
    stage = decode_step_breakdown(gpu, model, precision, limits, context_tokens, stream, gpus / stages)
    sends = float(pipeline.stage_sends_s(gpu, limits, model, stream, stages, gpus))
    hops = max(float(stages) - 1.0, 0.0)
    message = stream * float(model.hidden_size) * pipeline.SENT_BYTES_PER_HIDDEN
    words = (
        f"{counted(hops, 'send', ',.0f')} of {fmt_bytes(message)} (a stream's {counted(stream, 'token', ',.4g')}: "
        f"hidden state and residual) x {_figure(sends / hops * 1e6)} us"
        if hops
        else "none (one stage)"
    )
    parts = tuple(StepPart("stage_sends", sends, words) if p.key == "stage_sends" else p for p in stage.parts)
    layout = (
        f"one stream of {counted(stream, 'sequence', ',.4g')} through {float(stages):,.0f} stages of "
        f"{counted(gpus / stages, 'GPU', ',.0f')} in turn, {counted(n, 'stream', ',.0f')} in flight"
    )
    # pp_decode_step's sum: the stream's step on a stage + its sends
    return StepBreakdown(float(batch), float(gpus), stage.step_s + sends, parts, layout)


def dp_decode_step_breakdown(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: float,
    batch: float,
    gpus: float,
) -> StepBreakdown:
    """A data-parallel-attention + expert-parallel decode step (``planner.model.parallel.dp_decode_step``, one
    scenario) in parts summing to its ``step_s``: one GPU's kernels at its own B / g sequences (the dense GEMMs and
    attention whole on the GPU, 1/g of the batch's expert work), the MoE layers' expert exchange in place of
    all-reduces (``parallel.ep_communication_s``: the all-to-all's dispatch + combine, or the engine's all-gather +
    reduce-scatter) and the engine's costs at the rank's sequences (``parallel._dp_terms``: the same terms)."""
    t = parallel._dp_terms(gpu, model, precision, limits, context_tokens, batch, gpus)
    per_rank = float(t.per_rank)
    parts = _operator_parts(gpu, model, limits, t.kernel_args, t.kernel_parts, float(t.sparse_s))
    parts.append(StepPart("all_reduce", 0.0, "none (data-parallel attention: no all-reduces)"))
    parts.append(StepPart("stage_sends", 0.0, "none (one stage)"))
    comm, moe_layers = float(t.communication_s), float(model.moe_layers)
    alltoall = moe_layers * float(parallel.expert_alltoall_time_s(gpu, limits, model, per_rank, gpus))
    each = comm / moe_layers if moe_layers else 0.0
    if comm <= 0:
        words = "none (one GPU)"
    elif comm == alltoall:
        sent = per_rank * float(model.experts_per_token * model.hidden_size) * parallel.ALLTOALL_BYTES_PER_VALUE
        words = (
            f"all-to-all (dispatch + combine): {moe_layers:,.0f} MoE layers x {_figure(each * 1e6)} us, "
            f"{fmt_bytes(sent * (gpus - 1.0) / gpus)} a GPU sends each way"
        )
    else:
        gathered = batch if t.gathered is None else float(t.gathered)
        words = (
            f"measured all-gather + reduce-scatter table: {moe_layers:,.0f} MoE layers x {_figure(each * 1e6)} us, "
            f"{counted(gathered, 'token', ',.4g')} gathered"
        )
    parts.append(StepPart("expert_exchange", comm, words))
    parts += _cost_parts(model, limits, t.costs, per_rank)
    layout = (
        f"each of {counted(gpus, 'GPU', ',.0f')}: attention over its own {counted(per_rank, 'sequence', ',.4g')}, "
        f"1/{gpus:,.0f} of the experts"
    )
    return StepBreakdown(float(batch), float(gpus), float(t.step_s), tuple(parts), layout)
