"""Time of a decode step (TPOT) and what it moves: the roofline plus tensor-parallel all-reduces and overhead."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.model import operators, ops
from planner.model.collectives import mesh_group_share, table_allreduce_time_s
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.memory import decode_attention_bytes, decode_attention_flop, kv_replication
from planner.model.roofline import compute_time_s, memory_time_s


def experts_touched(model: ModelFacts, tokens: ArrayLike) -> ArrayLike:
    """Expected distinct experts per MoE layer that ``tokens`` tokens route to, under uniform routing.

    E x (1 - (1 - k/E)^T): one token touches k, a large batch touches all E. 0 for dense models.
    Computed as -E x expm1(T x log1p(-k/E)), the same number: the logarithm is taken once per model and
    exp runs at a fraction of pow's cost over a sweep's tokens (T >= 1, so k = E gives E x 1).
    """
    e, k = model.num_experts, model.experts_per_token
    if type(e) in (float, int) and e == 0:
        return 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        # log of a token's chance to skip one expert (dense: log 1 = 0, so 0 x 0)
        log_miss = ops.where(e > 0, ops.log1p(-k / e), 0.0)
    return -e * ops.expm1(tokens * log_miss)  # -0.0 for a dense model in an array: equal to 0


def weights_read_bytes(model: ModelFacts, precision: PrecisionFacts, tokens: ArrayLike) -> ArrayLike:
    """Weight bytes one step over ``tokens`` tokens streams: dense part + the MoE experts those tokens touch.

    (params read per step - those kept 16-bit) x B/param + kept 16-bit (output head, norms, routers) x 2 B
    + MoE layers x params per expert x expert B/param x experts touched.
    """
    return operators.dense_weight_bytes(model, precision) + operators.expert_weight_bytes(
        model, precision, experts_touched(model, tokens)
    )


def params_per_token(model: ModelFacts) -> ArrayLike:
    """Matmul parameters one token uses: dense part + MoE layers x k experts x params per expert (2 FLOP each)."""
    return model.params_read_per_step + model.moe_layers * model.experts_per_token * model.params_per_expert_layer


def collective_link(
    gpu: GpuFacts, limits: EngineFacts, gpus: ArrayLike
) -> tuple[ArrayLike, ArrayLike, ArrayLike, ArrayLike]:
    """(within the fabric domain, link bytes/s achieved, latency s, mesh share) of a collective over ``gpus`` GPUs:
    within the domain the fabric (on a fully connected mesh the g - 1 links a group has:
    ``planner.model.collectives.mesh_group_share``) at the engine's latency, beyond it PCIe's; both links at the
    engine's ``interconnect_efficiency``."""
    within = gpus <= gpu.interconnect_domain_gpus
    share = mesh_group_share(gpu.mesh_link_bytes_per_s / gpu.interconnect_bytes_per_s, gpus)
    fabric = gpu.interconnect_bytes_per_s * share
    link = ops.where(within, fabric, gpu.pcie_bytes_per_s) * limits.interconnect_efficiency
    latency = ops.where(within, limits.allreduce_latency_s, gpu.pcie_latency_s)
    return within, link, latency, share


def allreduce_time_s(
    gpu: GpuFacts, limits: EngineFacts, message_bytes: ArrayLike, gpus: ArrayLike, tokens: ArrayLike = 1.0
) -> ArrayLike:
    """One ring all-reduce: latency + 2 (g-1)/g x message / (link bandwidth x achieved fraction); 0 on one GPU.

    Within the fabric domain (g <= domain GPUs: NVLink on HGX, a bridged pair on H100 NVL) the fabric's latency and
    bandwidth; a larger group runs at PCIe's (NCCL's ring is as fast as its slowest link). Where the engine reads
    the measured table (``limits.allreduce_table``, the GPU's row ``limits.allreduce_table_row``), a group in the
    fabric domain takes the table's time instead (``planner.model.collectives.table_allreduce_time_s``) at
    message x ``limits.allreduce_table_bytes_scale`` bytes (1 on the GPU's own row; a borrowed row's fabric bytes/s
    over this GPU's): measured inside a CUDA graph for a step of at most ``operators.CUDA_GRAPH_MAX_BATCH`` tokens
    (vLLM's largest captured size), outside one (eager) for a longer step; the form stands where the table has no
    value.

    On a fully connected mesh (AMD Infinity Fabric: ``gpu.mesh_link_bytes_per_s`` > 0) a group of g GPUs has g - 1
    of each GPU's links (``planner.model.collectives.mesh_group_share``): the form's link is that share of the
    aggregate, and a borrowed row's message scale is multiplied by the row's GPU's share over this one's at g (1
    where both are the same mesh, or both switched, or at 8 of 8 GPUs).
    """
    within, link, latency, share = collective_link(gpu, limits, gpus)
    t = latency + message_bytes * (2.0 * (gpus - 1.0) / gpus / link)
    row = limits.allreduce_table_row
    if limits.allreduce_table is not None and not (type(row) is float and row != row):
        graph = tokens <= operators.CUDA_GRAPH_MAX_BATCH  # per row where tokens are (planner.model.rows)
        source_share = mesh_group_share(limits.allreduce_table_link_share, gpus)
        scaled = message_bytes * (limits.allreduce_table_bytes_scale * source_share / share)
        measured = table_allreduce_time_s(limits.allreduce_table, row, scaled, gpus, graph)
        if type(measured) is float and ops.zero_dim(within) and ops.zero_dim(t):  # one scenario
            t = measured if within and measured == measured else float(t)
        else:
            t = np.where(within & np.isfinite(measured), measured, t)  # per row where all three are
            t = float(t) if t.ndim == 0 else t
    return ops.where(gpus > 1, t, 0.0)


def tp_communication_s(
    model: ModelFacts, gpu: GpuFacts, limits: EngineFacts, tokens: ArrayLike, gpus: ArrayLike
) -> ArrayLike:
    """Two all-reduces per layer (after attention and after the MLP) of tokens x hidden 16-bit activations."""
    return 2.0 * model.num_layers * allreduce_time_s(gpu, limits, tokens * (model.hidden_size * 2.0), gpus, tokens)


def step_overhead_s(model: ModelFacts, limits: EngineFacts, tokens: ArrayLike = 1.0) -> ArrayLike:
    """Fixed time per step (scheduling, sampling) + per layer x layers + per MoE layer x MoE layers.

    Per MoE layer: the engine's own term + the GPU's fused-MoE floor at the step's ``tokens`` (those one GPU's MoE
    call takes): floor(1) + per doubling x log2(min(max(tokens, 1), 8)) (``moe_floor_s``, ``moe_floor_per_doubling_s``:
    ``planner.engines.kernel_curves.moe_floor_of``, measured at 1-8 tokens; held at 8 beyond). The floor is the
    fused-MoE call's kernel chain beyond the roofline of the expert bytes it reads: vLLM's ``fused_experts_impl``
    (vllm/model_executor/layers/fused_moe/fused_moe.py, commit 000d1458) runs, per MoE layer and step, top-k
    routing, ``moe_align_block_size``, ``invoke_fused_moe_kernel`` on w13, the activation, ``invoke_fused_moe_kernel``
    on w2 and ``moe_sum``, each with a floor of a few microseconds whatever it reads. Dense models: 0 x it.
    """
    fixed, layers, moe_layers = step_overhead_parts(model, limits, tokens)
    return fixed + layers + moe_layers


def step_overhead_parts(
    model: ModelFacts, limits: EngineFacts, tokens: ArrayLike = 1.0
) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """``step_overhead_s``'s three terms, seconds, which it sums: (the fixed per-step cost, per layer x layers, per
    MoE layer x MoE layers)."""
    t = ops.minimum(ops.maximum(tokens, 1.0), 8.0)
    doublings = math.log2(t) if type(t) in (float, int) else np.log2(t)
    per_moe_layer = limits.moe_layer_overhead_s + limits.moe_floor_s + limits.moe_floor_per_doubling_s * doublings
    return limits.step_overhead_s, limits.layer_overhead_s * model.num_layers, per_moe_layer * model.moe_layers


@dataclass(frozen=True)
class DecodeStep:
    """One decode step of a batch: times in seconds, bytes and FLOPs for the whole group."""

    gpus: ArrayLike
    batch: ArrayLike
    step_s: ArrayLike  # = TPOT: time between two tokens of one sequence
    bytes_moved: ArrayLike
    flop: ArrayLike
    #: whole-step roofline references, not parts of ``step_s``: all bytes / achieved bandwidth and all FLOPs /
    #: achieved peak, as if the step were one kernel (the step times each operator: ``kernels_s``)
    memory_time_s: ArrayLike
    compute_time_s: ArrayLike
    communication_s: ArrayLike  # tensor-parallel all-reduces (and a layout's other collectives)
    overhead_s: ArrayLike  # the engine's per-step, per-layer and per-sequence costs
    peak_flop_per_s: ArrayLike  # per GPU, at the weight precision's math
    bandwidth_bytes_per_s: ArrayLike  # per GPU

    @property
    def tpot_s(self):
        return self.step_s

    @property
    def kernels_s(self):
        """The step's operator kernels, seconds: step_s - communication_s - overhead_s, so that kernels_s +
        communication_s + overhead_s = step_s (the three parts of a stacked TPOT bar)."""
        return self.step_s - self.communication_s - self.overhead_s

    @property
    def throughput_tokens_per_s(self):
        return self.batch / self.step_s

    @property
    def batch_token_time_s(self):
        """The second seed's (weights + KV) / bandwidth x 1/B: step time / batch, the inverse of throughput."""
        return self.step_s / self.batch

    @property
    def mfu(self):
        return self.flop / (self.step_s * self.gpus * self.peak_flop_per_s)

    @property
    def mbu(self):
        return self.bytes_moved / (self.step_s * self.gpus * self.bandwidth_bytes_per_s)

    @property
    def intensity_flop_per_byte(self):
        return self.flop / self.bytes_moved


def eager_surplus_s(model: ModelFacts, limits: EngineFacts, batch: ArrayLike) -> ArrayLike:
    """What a decode step of ``batch`` pays for running eagerly, launched kernel by kernel, where
    it is larger than the engine's largest decode graph (``limits.decode_graph_max_batch``, 0: none modelled):
    eager_layer_s x dense layers + eager_moe_layer_s x MoE layers; 0 for a graphed batch. The surplus is CPU launch
    time summed with the step, as the per-layer launch cost is (``step_overhead_s``)."""
    per_step = (
        limits.eager_layer_s * (model.num_layers - model.moe_layers) + limits.eager_moe_layer_s * model.moe_layers
    )
    eager = (batch > limits.decode_graph_max_batch) & (limits.decode_graph_max_batch > 0)
    gap_above = getattr(limits, "decode_graph_gap_above", 0.0)  # EXPERIMENT (h-p50): between the powers of two
    if operators.any_nonzero(gap_above):
        eager = eager | uncaptured_gap(batch, gap_above, limits.decode_graph_max_batch)
    if type(eager) is bool or isinstance(eager, np.bool_):
        return per_step if eager else 0.0
    return per_step * eager


def uncaptured_gap(batch: ArrayLike, gap_above: ArrayLike, graph_max: ArrayLike) -> ArrayLike:
    """Whether a decode ``batch`` falls between the captured graphs of an engine that graphs every size up to
    ``gap_above`` and only the powers of two from there to ``graph_max`` (TensorRT-LLM 1.x's defaults without padding:
    1-32, 64, 128; ``planner.engines.profiles.TRTLLM_SERVE_EAGER_GRAPH_GAPS``): True for 33-63 and 65-127 there."""
    b = np.asarray(batch, dtype=float)
    power = np.exp2(np.round(np.log2(np.maximum(b, 1.0))))
    gap = (np.asarray(gap_above) > 0) & (b > gap_above) & (b <= graph_max) & (np.abs(b - power) > 1e-9)
    return gap.item() if gap.ndim == 0 else gap


def step_costs_s(model: ModelFacts, limits: EngineFacts, device_s: ArrayLike, batch: ArrayLike) -> ArrayLike:
    """A decode step's engine costs beyond ``device_s`` (its kernels and collectives): the per-step cost
    (``step_overhead_s``, + ``eager_surplus_s`` for a batch above the engine's largest decode graph: SGLang 0.4, s123;
    + ``limits.decode_moe_layer_overhead_s`` x MoE layers, a release's decode-path cost that prompt steps, which call
    ``step_overhead_s`` alone, do not pay) + the host's sequence_overhead_s x ``batch``. Where the engine loop overlaps host and device
    (``limits.host_overlap`` 1: vLLM's asynchronous loop from 0.14, ``planner.engines.profiles.with_vllm_host_loop``,
    s189; s101's reading (c)) the host part hides behind the device time, so the step takes max(device, host): less
    min(host, device + per-step cost)."""
    return summed_costs(step_cost_parts(model, limits, device_s, batch))


def summed_costs(c: StepCosts) -> ArrayLike:
    """``step_costs_s`` from its terms: per-step terms + host - the host time hidden."""
    per_step = c.fixed_s + c.layers_s + c.moe_layers_s
    if c.decode_moe_layers_s is not None:
        per_step = per_step + c.decode_moe_layers_s
    if c.eager_s is not None:
        per_step = per_step + c.eager_s
    if c.host_hidden_s is not None:
        return per_step + c.host_s - c.host_hidden_s
    return per_step + c.host_s


@dataclass(frozen=True)
class StepCosts:
    """A decode step's engine costs in terms (``step_cost_parts``), seconds; None: a term the engine does not have
    for any scenario (``step_costs_s`` then skips its arithmetic)."""

    fixed_s: ArrayLike  # per step (scheduling, sampling)
    layers_s: ArrayLike  # per layer x layers
    moe_layers_s: ArrayLike  # per MoE layer x MoE layers (the fused-MoE floor + the engine's own term)
    decode_moe_layers_s: ArrayLike | None  # a release's decode-path cost per MoE layer x MoE layers
    eager_s: ArrayLike | None  # eager launch above the largest decode graph (``eager_surplus_s``)
    host_s: ArrayLike  # per sequence x batch, on the host
    host_hidden_s: ArrayLike | None  # the host time the engine loop hides behind the device (``host_overlap``)


def step_cost_parts(model: ModelFacts, limits: EngineFacts, device_s: ArrayLike, batch: ArrayLike) -> StepCosts:
    """``step_costs_s``'s terms, which it sums: ``step_overhead_parts`` at ``batch``, the decode-path MoE cost, the
    eager surplus, the host's per-sequence cost and the part of it hidden behind ``device_s`` + the per-step cost."""
    fixed, layers, moe_layers = step_overhead_parts(model, limits, batch)
    per_step = fixed + layers + moe_layers
    decode_moe = eager = hidden = None
    if operators.any_nonzero(limits.decode_moe_layer_overhead_s):  # a release's decode-path MoE cost (h-moetab)
        decode_moe = limits.decode_moe_layer_overhead_s * model.moe_layers
        per_step = per_step + decode_moe
    if operators.any_nonzero(limits.decode_graph_max_batch):  # an eager step above the graphs (SGLang 0.4, s123)
        eager = eager_surplus_s(model, limits, batch)
        per_step = per_step + eager
    host = limits.sequence_overhead_s * batch
    if operators.any_nonzero(limits.host_overlap):
        hidden = limits.host_overlap * ops.minimum(host, device_s + per_step)
    return StepCosts(fixed, layers, moe_layers, decode_moe, eager, host, hidden)


def decode_step(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
) -> DecodeStep:
    """TPOT = dense GEMMs + MoE grouped GEMMs + decode attention (``planner.model.operators``; a DSA model's latents
    through the engine's fp8 sparse MLA kernel where it runs one, ``operators.sparse_mla_time_s``) + TP all-reduces
    + overhead.

    Each operator: floor + max(bytes / (g x bandwidth x its measured fraction), FLOPs / (g x peak x fraction)), at
    the CUDA-graph batch (``cuda_graph_batch``). overhead = per step + per layer x layers + per MoE layer x MoE
    layers + per sequence x batch (the engine's).

    bytes = weights read (MoE: the experts the batch touches) + batch x KV at the context (replicated heads
    counted; DSA: the top-k latents + every indexer key; linear layers: their state read and written); FLOPs =
    batch x (2 x params per token + attention FLOP per attended token x attended tokens + indexer + recurrence)
    (``memory.decode_attention_bytes``, ``memory.decode_attention_flop``).
    """
    t = _decode_terms(gpu, model, precision, limits, context_tokens, batch, gpus)
    t_mem = memory_time_s(t.bytes_moved, gpus, gpu.bandwidth_bytes_per_s, limits.bandwidth_efficiency)
    t_flop = compute_time_s(t.flop, gpus, gpu.peak_flop_per_s, limits.decode_flop_efficiency)
    return DecodeStep(
        gpus=gpus,
        batch=batch,
        step_s=t.step_s,
        bytes_moved=t.bytes_moved,
        flop=t.flop,
        memory_time_s=t_mem,
        compute_time_s=t_flop,
        communication_s=t.communication_s,
        overhead_s=t.overhead_s,
        peak_flop_per_s=gpu.peak_flop_per_s,
        bandwidth_bytes_per_s=gpu.bandwidth_bytes_per_s,
    )


@dataclass(frozen=True)
class _DecodeTerms:
    """What ``decode_step`` times a step from: the kernels' inputs, each operator group's time and the step's sum."""

    rows: ArrayLike  # the CUDA-graph batch the kernels run at
    dense_bytes: ArrayLike
    expert_bytes: ArrayLike
    touched: ArrayLike
    attention_bytes: ArrayLike  # KV bytes the attention curves time (DSA through the sparse kernel: not its latents)
    attention_flop: ArrayLike
    sparse: ArrayLike  # 1 where the sparse MLA kernel runs (``operators.sparse_mla_applies``)
    bytes_moved: ArrayLike
    flop: ArrayLike
    #: the keyword arguments ``operators.forward_kernel_parts`` is called with (but gpu, model, limits) and its parts
    kernel_args: dict
    kernel_parts: tuple[ArrayLike, ArrayLike, ArrayLike]
    sparse_s: ArrayLike  # ``operators.sparse_mla_time_s``
    communication_s: ArrayLike
    costs: StepCosts  # ``step_cost_parts``
    overhead_s: ArrayLike  # their sum (``step_costs_s``)
    step_s: ArrayLike


def _decode_terms(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    context_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
) -> _DecodeTerms:
    """``decode_step``'s arithmetic (see there), kept in terms so that ``decode_step_breakdown`` lists the same
    numbers the TPOT sums."""
    rows = operators.cuda_graph_batch(batch)
    dense_bytes = operators.dense_weight_bytes(model, precision)
    dense_model = type(model.moe_layers) is float and model.moe_layers == 0.0  # one dense scenario: no experts
    touched = 0.0 if dense_model else experts_touched(model, batch)
    expert_bytes = 0.0 if dense_model else operators.expert_weight_bytes(model, precision, touched)
    replication = kv_replication(model, gpus)
    kv_read = decode_attention_bytes(model, precision, context_tokens, batch, replication)
    attention_flop = decode_attention_flop(model, context_tokens, batch)
    bytes_moved = dense_bytes + expert_bytes + kv_read
    flop = batch * 2.0 * params_per_token(model) + attention_flop
    sparse = operators.sparse_mla_applies(model, limits, gpus, prefill=False)
    if not (type(sparse) is float and sparse == 0.0):  # DSA latents through the fp8 sparse kernel: not read twice
        kv_read = decode_attention_bytes(model, precision, context_tokens, batch, replication, sparse)
        attention_flop = decode_attention_flop(model, context_tokens, batch, sparse)
    kernel_args = dict(
        prefill=False, rows=rows, gpus=gpus, dense_bytes=dense_bytes, expert_bytes=expert_bytes,
        attention_bytes=kv_read, attention_flop=attention_flop, touched=touched,
        weight_bytes_per_param=precision.weight_bytes_per_param, kv_bytes_per_element=precision.kv_bytes_per_element,
    )  # fmt: skip
    kernel_parts = operators.forward_kernel_parts(gpu, model, limits, **kernel_args)
    sparse_s = operators.sparse_mla_time_s(
        model, limits, rows, gpus, sparse, precision.kv_bytes_per_element, context_tokens
    )
    kernels_s = kernel_parts[0] + kernel_parts[1] + kernel_parts[2] + sparse_s
    comm = tp_communication_s(model, gpu, limits, batch, gpus)
    costs = step_cost_parts(model, limits, kernels_s + comm, batch)
    overhead = summed_costs(costs)  # step_costs_s
    step = kernels_s + (comm + overhead)
    return _DecodeTerms(
        rows, dense_bytes, expert_bytes, touched, kv_read, attention_flop, sparse, bytes_moved, flop, kernel_args,
        kernel_parts, sparse_s, comm, costs, overhead, step,
    )  # fmt: skip
