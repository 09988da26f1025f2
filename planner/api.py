"""Public capacity functions over catalog names: ``ridge``, ``kv_bytes``, ``max_batch``, ``tpot`` and their family.

Each function takes GPU, model and precision names (or catalog entries) and numbers; any of them may be a
scalar, a numpy array or a pandas Series, and arrays broadcast. Names are resolved once per distinct value,
then the numeric formulas of ``planner.model`` run over whole arrays.

``errors="raise"`` (default) raises a ``PlannerError`` for the first bad scenario; ``errors="coerce"``
returns NaN for each scenario that raises, so a spreadsheet column can show an error per cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from planner import model as m
from planner.calibration import residual_quantiles, resolve_calibration
from planner.catalog import Catalog, Gpu, Model, default_catalog, stale_price_warning
from planner.engines import EngineProfile, engine_profile
from planner.errors import DoesNotFitError, MissingDataError, OutOfRangeError
from planner.resolve import (  # noqa: F401  (re-exported: the workbook writer and export use these)
    _PEAK_TWINS,
    PEAK_KEYS,
    Errors,
    _count,
    _count_or_mask,
    _fraction,
    _lookup,
    _nonnegative,
    _pandas_index,
    _peak_for_weights,
    _resolve,
    _Scenario,
    default_kv_precision,
    gpu_numbers,
    gpu_peak_flop_per_s,
    math_flags,
)

#: Tensor-parallel group sizes tried when the GPU count is not given (beyond 8: several nodes).
GPU_GROUPS = (1, 2, 4, 8, 16, 32, 64)
MAX_CONTEXT_TOKENS = 2**24
MAX_BATCH = 2**20
MAX_GPUS = 4096


# -- result shaping -------------------------------------------------------------------------------------


def _finish(result: np.ndarray, bad: Any, errors: Errors, index=None, integer: bool = False):
    """NaN where a scenario failed (coerce), a Python scalar for scalar input, a Series for Series input."""
    out = np.where(bad, np.nan, result) if np.any(bad) else np.asarray(result, dtype=float)
    if integer and errors == "raise":
        out = out.astype(np.int64)
    if out.ndim == 0:
        v = out.item()
        return int(v) if integer and not (isinstance(v, float) and math.isnan(v)) else v
    if index is not None and len(index) == out.shape[0] and out.ndim == 1:
        import pandas as pd

        return pd.Series(out, index=index)
    return out


def _nan_shaped(*args: Any) -> np.ndarray:
    return np.full(np.broadcast(*(np.asarray(a, dtype=object) for a in args)).shape, np.nan)


def _all_failed(first_error: Exception | None, errors: Errors, *args: Any):
    """Every scenario failed a lookup: raise the first error, or NaN of the broadcast shape."""
    if errors == "raise" and first_error:
        raise first_error
    return _finish(_nan_shaped(*args), True, errors)


# -- public functions -----------------------------------------------------------------------------------


def ridge(gpu: Any, precision: Any = "bf16", *, catalog: Catalog | None = None, errors: Errors = "raise"):
    """Ridge point in FLOP/B: the GPU's dense peak at ``precision``'s math / HBM bandwidth.

    H100 SXM at bf16: 989.4e12 / 3.35e12 = 295.3 FLOP/B. Below it a kernel is memory-bound.
    """
    cat = catalog or default_catalog()
    gpus = _resolve(cat, errors, gpu=gpu)
    prec = _lookup("bf16" if precision is None else precision, cat.precision, math_flags, errors)
    if not gpus.gpu or not prec.values:
        return _all_failed(gpus.first_error or prec.first_error, errors, gpu, precision)
    peak = _peak_for_weights(_Scenario(gpus.gpu, prec.values, False, None))
    return _finish(
        m.ridge_flop_per_byte(peak, gpus.gpu["bandwidth"]),
        np.logical_or(gpus.bad, prec.bad),
        errors,
        _pandas_index(gpu, precision),
    )


def weight_bytes(model: Any, precision: Any = None, *, catalog: Catalog | None = None, errors: Errors = "raise"):
    """Bytes of all weights at ``precision`` (default: as published; gpt-oss keeps its experts in MXFP4).

    Llama 2 70B at fp16: 68,976,648,192 params x 2 B = 137,953,296,384 B.
    """
    s = _resolve(catalog or default_catalog(), errors, model=model, weight_precision=precision)
    if not s.model:
        return _all_failed(s.first_error, errors, model, precision)
    md = s.model
    wb = m.weight_bytes(md["params_non_expert"], md["weight_bpp"], md["params_routed_experts"], md["expert_bpp"])
    return _finish(wb, s.bad, errors, _pandas_index(model, precision))


def kv_bytes(
    model: Any,
    tokens: Any,
    kv_precision: Any = None,
    batch: Any = 1,
    *,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
):
    """KV cache bytes of ``batch`` sequences of ``tokens`` tokens (default precision: the activation dtype).

    2 x layers x KV heads x head dim x bytes per token (MLA: layers x (kv_lora_rank + rope dim) x bytes);
    sliding-window layers hold at most their window. Llama 2 70B, 8,192 tokens, fp16: 2,684,354,560 B.
    """
    tokens_arr, bad_tokens = _count_or_mask(tokens, "tokens", MAX_CONTEXT_TOKENS, " of tokens", errors)
    batch_arr, bad_batch = _count_or_mask(batch, "batch", MAX_BATCH, " of sequences", errors)
    s = _resolve(catalog or default_catalog(), errors, model=model, kv_precision=kv_precision)
    if not s.model:
        return _all_failed(s.first_error, errors, model, tokens, kv_precision, batch)
    md = s.model
    kv = m.kv_bytes(
        tokens_arr,
        md["kv_elements_per_token_per_layer"],
        md["kv_bpe"],
        md["full_attention_layers"],
        md["sliding_window_layers"],
        md["sliding_window"],
        batch_arr,
    )
    return _finish(
        kv, np.asarray(s.bad) | bad_tokens | bad_batch, errors, _pandas_index(model, tokens, kv_precision, batch)
    )


def kv_bytes_per_token(
    model: Any, kv_precision: Any = None, *, catalog: Catalog | None = None, errors: Errors = "raise"
):
    """KV bytes one token adds while the context is shorter than any sliding window (all layers cache it)."""
    return kv_bytes(model, 1, kv_precision, 1, catalog=catalog, errors=errors)


@dataclass(frozen=True)
class MemoryPlan:
    """Per-scenario memory quantities (arrays or scalars), all in bytes except counts."""

    gpus: Any  # tensor-parallel group size used
    weight_bytes: Any  # whole model
    visible_bytes_per_gpu: Any
    reserve_bytes_per_gpu: Any  # activation peak + non-torch
    kv_budget_bytes_per_gpu: Any
    kv_bytes_per_token_per_gpu: Any
    kv_bytes_per_sequence: Any  # whole group, replication included
    kv_cache_tokens: Any  # vLLM's "GPU KV cache size" for the group
    max_batch: Any  # sequences of ``context`` tokens that fit


def _memory(
    s: _Scenario, context: np.ndarray, gpus: np.ndarray, util: Any, engine: EngineProfile, reserve: Any
) -> MemoryPlan:
    """The memory budget of every scenario on groups of ``gpus``: weights, reserve, KV budget, max batch."""
    g, md = s.gpu, s.model
    wb = m.weight_bytes(md["params_non_expert"], md["weight_bpp"], md["params_routed_experts"], md["expert_bpp"])
    visible = m.visible_memory_bytes(g["memory_bytes"], g["engine_visible_memory_bytes"], engine)
    if reserve is None:
        act = m.activation_peak_bytes(
            md["hidden_size"],
            md["intermediate_size"],
            md["vocab_size"],
            gpus,
            engine,
            g["max_num_batched_tokens"],
            g["max_num_seqs"],
        )
        reserve = m.reserve_bytes_per_gpu(act, gpus, engine)
    budget = m.kv_budget_bytes_per_gpu(visible, wb, gpus, reserve, util, engine)
    repl = m.kv_replication(md["num_kv_heads"], gpus)
    per_token = md["kv_elements_per_token_per_layer"] * md["kv_bpe"] * md["num_layers"] * repl / gpus
    block = max(int(engine.block_size), 1)
    seq_tokens = np.ceil(context / block) * block
    seq_group = (
        m.kv_bytes(
            seq_tokens,
            md["kv_elements_per_token_per_layer"],
            md["kv_bpe"],
            md["full_attention_layers"],
            md["sliding_window_layers"],
            md["sliding_window"],
        )
        * repl
    )
    tokens = m.kv_cache_tokens(budget, per_token, block)
    batch = m.max_batch_from_budget(budget * gpus, seq_group)
    return MemoryPlan(gpus, wb, visible, reserve, budget, per_token, seq_group, tokens, batch)


def _choose_gpus(
    s: _Scenario, context: np.ndarray, gpus: Any, util: Any, engine: EngineProfile, reserve: Any, need_batch: Any = 1
) -> np.ndarray:
    """The GPU count per scenario: as given, or the smallest group in GPU_GROUPS holding weights + ``need_batch`` sequences."""
    if gpus is not None:
        return np.asarray(gpus, dtype=float)
    shape = np.broadcast_shapes(*(np.shape(x) for x in (context, need_batch, *s.gpu.values(), *s.model.values())))
    chosen = np.full(shape, np.nan)
    for n in GPU_GROUPS:
        plan = _memory(s, context, np.full(shape, float(n)), util, engine, reserve)
        chosen = np.where(np.isnan(chosen) & (plan.max_batch >= need_batch), n, chosen)
        if not np.any(np.isnan(chosen)):
            break
    return chosen


@dataclass(frozen=True)
class _Deployment:
    """Scenarios resolved and sized: their numbers, the GPU count of each, its memory plan and which failed."""

    s: _Scenario
    engine: EngineProfile
    context: np.ndarray
    batch: np.ndarray
    gpus: np.ndarray  # given or chosen; NaN where no group fits
    gpus_safe: np.ndarray  # NaN replaced by the largest group, so formulas can run everywhere
    plan: MemoryPlan
    bad: np.ndarray  # unknown name, or does not fit


def _deploy(
    gpu: Any,
    model: Any,
    context: Any,
    kv_precision: Any,
    gpus: Any,
    weight_precision: Any,
    memory_utilization: Any,
    batch: Any,
    *,
    engine: Any,
    reserve_bytes: Any,
    catalog: Catalog | None,
    errors: Errors,
    calibration: Any,
    check_fit: bool = True,
) -> _Deployment | None:
    """Resolve names, check numbers, pick the GPU count and test that ``batch`` sequences fit.

    Returns None when every scenario failed a lookup (errors="coerce"); raises the first error otherwise.
    ``check_fit=False`` skips the memory test for a given GPU count (time of a batch regardless of memory).
    """
    eng = engine_profile(engine)
    util = eng.memory_utilization if memory_utilization is None else _fraction(memory_utilization, "memory_utilization")
    ctx, bad_ctx = _count_or_mask(context, "context", MAX_CONTEXT_TOKENS, " of tokens", errors)
    b, bad_batch = _count_or_mask(batch, "batch", MAX_BATCH, " of sequences", errors)
    if gpus is not None:
        gpus, bad_gpus = _count_or_mask(gpus, "gpus", MAX_GPUS, " of GPUs", errors)
    else:
        bad_gpus = False
    reserve = None if reserve_bytes is None else _nonnegative(reserve_bytes, "reserve_bytes")
    s = _resolve(
        catalog or default_catalog(),
        errors,
        gpu=gpu,
        model=model,
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        engine=eng,
        calibration=resolve_calibration(calibration),
    )
    if not s.model or not s.gpu:
        if errors == "raise" and s.first_error:
            raise s.first_error
        return None
    need = b if check_fit else 1
    n = _choose_gpus(s, ctx, gpus, util, eng, reserve, need)
    n_safe = np.where(np.isnan(n), GPU_GROUPS[-1], n)
    plan = replace(_memory(s, ctx, n_safe, util, eng, reserve), gpus=n)
    bad = np.asarray(s.bad) | bad_ctx | bad_batch | bad_gpus
    if check_fit or gpus is None:
        short = (np.isnan(n) | (np.nan_to_num(plan.max_batch, nan=-1) < need)) & ~bad
        if errors == "raise" and np.any(short):
            first = tuple(np.argwhere(np.broadcast_to(short, np.shape(short)))[0]) if np.ndim(short) else ()
            raise _does_not_fit(s, plan, gpus, need, ctx, first, gpu, model, util, eng, reserve)
        bad = bad | short
    return _Deployment(s, eng, ctx, b, n, n_safe, plan, bad)


def _element(x: Any, idx: tuple, shape: tuple) -> Any:
    """Element ``idx`` of ``x`` broadcast to ``shape`` (scalars as they are)."""
    a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=object)
    if a.ndim == 0:
        return a.item()
    return np.broadcast_to(a, shape)[idx]


def _short_by(short_bytes: float) -> str:
    """'short by 1.2 GB'; a shortfall too large to be a number (inf, nan) is said in words, not as 'inf GB'."""
    if math.isfinite(short_bytes):
        return f"short by {short_bytes / 1e9:,.1f} GB"
    return "short by more than any GPU group holds"


def _does_not_fit(s, plan, gpus_given, need, context, idx, gpu, model, util, engine, reserve) -> DoesNotFitError:
    """The error for scenario ``idx``: what does not fit where, by how much, and the smallest group that works."""
    shape = np.broadcast(
        np.asarray(gpu, dtype=object), np.asarray(model, dtype=object), plan.kv_budget_bytes_per_gpu, need, context
    ).shape

    def at(x):
        return float(_element(np.asarray(x, dtype=float), idx, shape))

    gname = s.catalog.gpu(_element(gpu, idx, shape)).name
    mname = s.catalog.model(_element(model, idx, shape)).name
    n_need = int(at(need))
    what = f"{n_need} sequence{'s' if n_need != 1 else ''} of {int(at(context)):,} tokens"
    if gpus_given is None:
        biggest = GPU_GROUPS[-1]
        last = _memory(s, context, np.asarray(float(biggest)), util, engine, reserve)
        short = at(last.kv_bytes_per_sequence) * n_need - at(last.kv_budget_bytes_per_gpu) * biggest
        return DoesNotFitError(
            f"{mname} weights plus {what} do not fit on up to {biggest} x {gname}: {_short_by(short)}",
            shortfall_bytes=short,
            smallest_gpus=None,
        )
    n = int(at(plan.gpus))
    short = at(plan.kv_bytes_per_sequence) * n_need - at(plan.kv_budget_bytes_per_gpu) * n
    smallest = next(
        (
            k
            for k in GPU_GROUPS
            if at(_memory(s, context, np.asarray(float(k)), util, engine, reserve).max_batch) >= n_need
        ),
        None,
    )
    weights_short = at(plan.weight_bytes) / n > at(plan.visible_bytes_per_gpu) * at(util)
    head = (
        f"{mname} weights ({at(plan.weight_bytes) / 1e9:,.2f} GB) do not fit on {n} x {gname}"
        if weights_short
        else f"{mname} weights plus {what} do not fit on {n} x {gname}"
    )
    tail = (
        f"; the smallest group that works is {smallest} x {gname}"
        if smallest
        else f"; no group of up to {GPU_GROUPS[-1]} works"
    )
    return DoesNotFitError(f"{head}: {_short_by(short)}{tail}", shortfall_bytes=short, smallest_gpus=smallest)


def memory_plan(
    gpu: Any,
    model: Any,
    context: Any,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    *,
    batch: Any = 1,
    engine: str | EngineProfile | None = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
) -> MemoryPlan:
    """All memory quantities of a deployment; ``gpus=None`` picks the smallest group holding ``batch`` sequences."""
    d = _deploy(
        gpu,
        model,
        context,
        kv_precision,
        gpus,
        weight_precision,
        memory_utilization,
        batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
    )
    if d is None:
        return MemoryPlan(*([_nan_shaped(gpu, model, context)] * 9))
    idx = _pandas_index(gpu, model, context)
    return MemoryPlan(*[_finish(np.asarray(v, dtype=float), d.bad, "coerce", idx) for v in d.plan.__dict__.values()])


def max_batch(
    gpu: Any,
    model: Any,
    context: Any,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    *,
    engine: str | EngineProfile | None = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Sequences of ``context`` tokens that fit at once: floor(KV budget / KV bytes per sequence).

    KV budget = GPUs x (visible memory x utilization - reserve) - weights (engine ``"vllm"`` by default;
    ``engine="ideal"``, ``memory_utilization=1`` gives the seeds' free HBM / KV per sequence). Without
    ``gpus``, the smallest group of 1, 2, 4, 8 (... 64) GPUs that holds the weights and one sequence.
    """
    d = _deploy(
        gpu,
        model,
        context,
        kv_precision,
        gpus,
        weight_precision,
        memory_utilization,
        1,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
    )
    if d is None:
        return _finish(_nan_shaped(gpu, model, context, kv_precision, gpus), True, errors)
    return _finish(
        d.plan.max_batch, d.bad, errors, _pandas_index(gpu, model, context, kv_precision, gpus), integer=True
    )


def min_gpus(
    gpu: Any,
    model: Any,
    context: Any,
    batch: Any = 1,
    kv_precision: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    *,
    engine: str | EngineProfile | None = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
):
    """Smallest tensor-parallel group (1, 2, 4, 8, ... 64) holding the weights and ``batch`` sequences of ``context``."""
    g = memory_plan(
        gpu,
        model,
        context,
        kv_precision,
        None,
        weight_precision,
        memory_utilization,
        batch=batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
    ).gpus
    if errors == "raise":
        return int(g) if np.ndim(g) == 0 else g.astype("int64")
    return g


@dataclass(frozen=True)
class DecodeStep:
    """One decode step of a batch: times in seconds, bytes and FLOPs for the whole group."""

    gpus: Any
    batch: Any
    step_s: Any  # = TPOT: time between two tokens of one sequence
    bytes_moved: Any
    flop: Any
    memory_time_s: Any
    compute_time_s: Any
    communication_s: Any
    overhead_s: Any
    peak_flop_per_s: Any  # per GPU, at the weight precision's math
    bandwidth_bytes_per_s: Any  # per GPU

    @property
    def tpot_s(self):
        return self.step_s

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


def _weights_read_and_flop_per_token(md: dict, tokens: Any) -> tuple[np.ndarray, np.ndarray]:
    """Weight bytes a step over ``tokens`` tokens streams (MoE: the experts they touch) and matmul params per token."""
    touched = m.experts_touched(md["num_experts"], md["experts_per_token"], tokens)
    weights_read = (
        md["params_read_per_step"] * md["weight_bpp"]
        + md["moe_layers"] * touched * md["params_per_expert_layer"] * md["expert_bpp"]
    )
    params_per_token = (
        md["params_read_per_step"] + md["moe_layers"] * md["experts_per_token"] * md["params_per_expert_layer"]
    )
    return weights_read, params_per_token


def _tp_communication_s(s: _Scenario, tokens: Any, gpus: Any) -> np.ndarray:
    """Two all-reduces per layer of tokens x hidden 16-bit activations."""
    g, md = s.gpu, s.model
    return (
        2.0
        * md["num_layers"]
        * m.allreduce_time_s(
            tokens * md["hidden_size"] * 2.0,
            gpus,
            g["interconnect"],
            g["allreduce_latency_s"],
            g["interconnect_efficiency"],
        )
    )


def _decode(s: _Scenario, ctx: np.ndarray, batch: np.ndarray, gpus: np.ndarray) -> DecodeStep:
    g, md = s.gpu, s.model
    weights_read, params_per_token = _weights_read_and_flop_per_token(md, batch)
    kv_read = m.kv_bytes(
        ctx,
        md["kv_elements_per_token_per_layer"],
        md["kv_bpe"],
        md["full_attention_layers"],
        md["sliding_window_layers"],
        md["sliding_window"],
        batch,
    ) * m.kv_replication(md["num_kv_heads"], gpus)
    attn = md["attention_flop_per_context_token_per_layer"] * m.cached_tokens_per_layer_sum(
        ctx, md["full_attention_layers"], md["sliding_window_layers"], md["sliding_window"]
    )
    flop = batch * (2.0 * params_per_token + attn)
    bytes_moved = weights_read + kv_read
    peak = _peak_for_weights(s)
    bw = g["bandwidth"]
    t_mem = m.roofline_step_time_s(bytes_moved, 0.0, gpus, bw, peak, g["bandwidth_efficiency"], 1.0)
    t_flop = m.roofline_step_time_s(0.0, flop, gpus, bw, peak, 1.0, g["decode_flop_efficiency"])
    comm = _tp_communication_s(s, batch, gpus)
    overhead = g["step_overhead_s"] + g["layer_overhead_s"] * md["num_layers"] + g["sequence_overhead_s"] * batch
    step = np.maximum(t_mem, t_flop) + comm + overhead
    return DecodeStep(gpus, batch, step, bytes_moved, flop, t_mem, t_flop, comm, overhead, peak, bw)


def decode_step(
    gpu: Any,
    model: Any,
    context: Any,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    *,
    engine: str | EngineProfile | None = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
) -> DecodeStep:
    """Roofline of one decode step of ``batch`` sequences at ``context`` tokens (see ``tpot``)."""
    d = _deploy(
        gpu,
        model,
        context,
        kv_precision,
        gpus,
        weight_precision,
        memory_utilization,
        batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
        check_fit=check_fit,
    )
    if d is None:
        return DecodeStep(*([_nan_shaped(gpu, model, context, batch)] * 11))
    step = _decode(d.s, d.context, d.batch, d.gpus_safe)
    idx = _pandas_index(gpu, model, context, batch)
    return DecodeStep(*[_finish(np.asarray(v, dtype=float), d.bad, "coerce", idx) for v in step.__dict__.values()])


def _decode_figure(name: str, attribute: str, doc: str):
    """A public function returning one ``DecodeStep`` figure, with ``decode_step``'s arguments."""

    def figure(
        gpu: Any,
        model: Any,
        context: Any,
        batch: Any = 1,
        kv_precision: Any = None,
        gpus: Any = None,
        weight_precision: Any = None,
        memory_utilization: Any = None,
        **options,
    ):
        step = decode_step(
            gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options
        )
        return getattr(step, attribute)

    figure.__name__ = figure.__qualname__ = name
    figure.__doc__ = doc
    return figure


tpot = _decode_figure(
    "tpot",
    "step_s",
    """Time per output token of one sequence, in seconds: the decode step time of the whole batch.

    step = max(bytes / achieved bandwidth, FLOPs / achieved peak) + TP all-reduces + overhead, with bytes =
    weights read (MoE: experts the batch touches) + batch x KV at ``context``. Not the seed's
    (weights + KV) / bandwidth x 1/B: that is ``batch_token_time`` (= 1 / throughput).
    """,
)
throughput = _decode_figure(
    "throughput",
    "throughput_tokens_per_s",
    """Steady-state decode output tokens per second of the whole group: batch / TPOT, every sequence decoding.

    Not a benchmark's "output throughput", which is a whole run's rate with the prefill included:
    ``planner.benchmark.predict_benchmark(...).output_tokens_per_s``.
    """,
)
batch_token_time = _decode_figure(
    "batch_token_time",
    "batch_token_time_s",
    """Seconds per output token of the whole batch (TPOT / batch): the second seed's "x 1/B" figure.""",
)
mfu = _decode_figure(
    "mfu",
    "mfu",
    """Model FLOPs utilization of a decode step: FLOPs / (step time x GPUs x peak). Batch 1 on H100: ~0.3%.""",
)
mbu = _decode_figure(
    "mbu",
    "mbu",
    """Memory bandwidth utilization of a decode step: bytes / (step time x GPUs x bandwidth).""",
)
decode_intensity = _decode_figure(
    "decode_intensity",
    "intensity_flop_per_byte",
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV). About B at 16-bit, short context.""",
)


@dataclass(frozen=True)
class PrefillStep:
    """One prompt's prefill: time to first token, bytes and FLOPs for the whole group."""

    gpus: Any
    prompt_tokens: Any
    ttft_s: Any
    bytes_moved: Any
    flop: Any
    compute_s: Any  # the FLOPs alone at the achieved prefill peak: a prompt's marginal cost when batched with decode

    @property
    def intensity_flop_per_byte(self):
        return self.flop / self.bytes_moved


def prefill(
    gpu: Any,
    model: Any,
    prompt_tokens: Any,
    gpus: Any = None,
    weight_precision: Any = None,
    kv_precision: Any = None,
    *,
    batch: Any = 1,
    engine: str | EngineProfile | None = None,
    memory_utilization: Any = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
) -> PrefillStep:
    """Prefill of ``batch`` prompts together: roofline over 2 x active params x tokens + causal attention FLOPs.

    The weights are read once for the whole batch; every prompt's FLOPs and KV writes count. One prompt
    (the default) gives its TTFT.
    """
    d = _deploy(
        gpu,
        model,
        prompt_tokens,
        kv_precision,
        gpus,
        weight_precision,
        memory_utilization,
        batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
    )
    if d is None:
        return PrefillStep(*([_nan_shaped(gpu, model, prompt_tokens)] * 6))
    g, md, ctx, n, b = d.s.gpu, d.s.model, d.context, d.gpus_safe, d.batch
    weights_read, params_per_token = _weights_read_and_flop_per_token(md, ctx * b)
    kv_written = m.kv_bytes(
        ctx,
        md["kv_elements_per_token_per_layer"],
        md["kv_bpe"],
        md["full_attention_layers"],
        md["sliding_window_layers"],
        md["sliding_window"],
        b,
    )
    # causal attention: token t attends to t earlier tokens (at most the window): about ctx/2 on average
    attn = (
        md["attention_flop_per_context_token_per_layer"]
        * ctx
        * m.cached_tokens_per_layer_sum(
            ctx / 2.0, md["full_attention_layers"], md["sliding_window_layers"], md["sliding_window"]
        )
    )
    flop = b * (2.0 * params_per_token * ctx + attn)
    bytes_moved = weights_read + kv_written
    t = m.roofline_step_time_s(
        bytes_moved,
        flop,
        n,
        g["bandwidth"],
        _peak_for_weights(d.s),
        g["bandwidth_efficiency"],
        g["prefill_flop_efficiency"],
    )
    overhead = g["step_overhead_s"] + g["layer_overhead_s"] * md["num_layers"] + g["prefill_latency_s"]
    ttft_s = t + _tp_communication_s(d.s, ctx * b, n) + overhead
    compute_s = m.roofline_step_time_s(
        0.0, flop, n, g["bandwidth"], _peak_for_weights(d.s), 1.0, g["prefill_flop_efficiency"]
    )
    idx = _pandas_index(gpu, model, prompt_tokens)
    return PrefillStep(
        *[
            _finish(np.asarray(v, dtype=float), d.bad, "coerce", idx)
            for v in (d.gpus, ctx, ttft_s, bytes_moved, flop, compute_s)
        ]
    )


def ttft(gpu: Any, model: Any, prompt_tokens: Any, gpus: Any = None, weight_precision: Any = None, **options):
    """Time to first token of one prompt, in seconds: the prefill time (no queueing)."""
    return prefill(gpu, model, prompt_tokens, gpus, weight_precision, **options).ttft_s


def prefill_intensity(
    gpu: Any, model: Any, prompt_tokens: Any, gpus: Any = None, weight_precision: Any = None, **options
):
    """Arithmetic intensity of a prefill, FLOP per byte. About the prompt length at 16-bit."""
    return prefill(gpu, model, prompt_tokens, gpus, weight_precision, **options).intensity_flop_per_byte


def gpu_price_per_hour(gpu: Any, *, catalog: Catalog | None = None) -> float:
    """The catalog's cloud price per GPU-hour, or NaN when it has none."""
    return gpu_numbers((catalog or default_catalog()).gpu(gpu))["price_usd_per_gpu_hour"]


def cost_per_mtok(
    gpu: Any,
    model: Any,
    context: Any,
    batch: Any = 1,
    price_per_gpu_hour: Any = None,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    **options,
):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6.

    ``price_per_gpu_hour`` defaults to the catalog's cloud price for the GPU.
    """
    step = decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, **options)
    if price_per_gpu_hour is None:
        cat = options.get("catalog") or default_catalog()
        s = _resolve(cat, options.get("errors", "raise"), gpu=gpu)
        price = s.gpu.get("price_usd_per_gpu_hour", np.nan)
        if options.get("errors", "raise") == "raise" and np.any(np.isnan(price)):
            raise MissingDataError(f"no price per GPU-hour in the catalog for {gpu!r}; pass price_per_gpu_hour")
    else:
        price = _nonnegative(price_per_gpu_hour, "price_per_gpu_hour")
    return _finish(
        m.cost_per_million_tokens_usd(price, step.gpus, step.throughput_tokens_per_s),
        False,
        "coerce",
        _pandas_index(gpu, model, context, batch),
    )


@dataclass(frozen=True)
class Plan:
    """Everything about one deployment at one context, for reports: memory, speed at batch 1 and at max batch, cost."""

    gpu: Gpu
    model: Model
    context: int
    gpus: int
    engine: EngineProfile
    memory_utilization: float
    weight_precision: str
    kv_precision: str
    memory: MemoryPlan
    ridge_flop_per_byte: float
    batch: int  # the batch asked for (default: max batch)
    at_batch: DecodeStep
    at_one: DecodeStep
    ttft_s: float
    price_usd_per_gpu_hour: float
    cost_per_mtok_usd: float
    warnings: tuple[str, ...]
    #: relative residuals of time predictions (calibration entry, else the shipped fit): a measured time lies
    #: within prediction x (1 + low) .. prediction x (1 + high) for 80% of the fitted rows
    time_residuals: tuple[float, float] = (0.0, 0.0)

    def time_range(self, seconds: float) -> tuple[float, float]:
        low, high = self.time_residuals
        return seconds * (1.0 + low), seconds * (1.0 + high)


def plan(
    gpu: Any,
    model: Any,
    context: Any,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    *,
    batch: Any = None,
    engine: str | EngineProfile | None = None,
    reserve_bytes: Any = None,
    price_per_gpu_hour: Any = None,
    catalog: Catalog | None = None,
    calibration: Any = None,
) -> Plan:
    """One scenario, fully evaluated (scalars only): the CLI's ``planner plan`` prints this."""
    cat = catalog or default_catalog()
    g, mdl = cat.gpu(gpu), cat.model(model)
    eng = engine_profile(engine)
    wp = cat.precision(weight_precision).name if weight_precision is not None else mdl.native_precision
    kp = cat.precision(kv_precision).name if kv_precision is not None else default_kv_precision(mdl)
    opts = dict(engine=eng, reserve_bytes=reserve_bytes, catalog=cat, calibration=calibration)
    mem = memory_plan(g, mdl, context, kp, gpus, weight_precision, memory_utilization, **opts)
    n = int(mem.gpus)
    top = int(mem.max_batch)
    if batch is None and top > MAX_BATCH:  # only with implausible catalog numbers (memory_bytes near 2**63)
        raise OutOfRangeError(
            f"{g.name} holds {top:,} sequences of {mdl.name} at once, more than the {MAX_BATCH:,} planner models; "
            f"check the catalog's memory_bytes ({g.memory_bytes:,}) or give --batch"
        )
    b = top if batch is None else int(_count(batch, "batch", MAX_BATCH, " of sequences"))
    at_batch = decode_step(g, mdl, context, b, kp, n, weight_precision, memory_utilization, **opts)
    at_one = decode_step(g, mdl, context, 1, kp, n, weight_precision, memory_utilization, **opts)
    first = ttft(g, mdl, context, n, weight_precision, kv_precision=kp, memory_utilization=memory_utilization, **opts)
    price = (
        gpu_price_per_hour(g, catalog=cat)
        if price_per_gpu_hour is None
        else float(_nonnegative(price_per_gpu_hour, "price_per_gpu_hour"))
    )
    cost = float(m.cost_per_million_tokens_usd(price, n, at_batch.throughput_tokens_per_s))
    warnings = []
    ctx = int(_count(context, "context", MAX_CONTEXT_TOKENS, " of tokens"))
    if ctx > mdl.max_context:
        warnings.append(
            f"context {ctx:,} exceeds {mdl.name}'s trained maximum of {mdl.max_context:,} tokens; "
            "memory and time are extrapolated"
        )
    if n > 8:
        warnings.append(
            f"{n} GPUs is more than one 8-GPU node: tensor parallelism across nodes is slower than modelled"
        )
    stale = stale_price_warning(g.price("on-demand"), g.name) if price_per_gpu_hour is None else None
    warnings += [stale] if stale else []
    util = eng.memory_utilization if memory_utilization is None else float(memory_utilization)
    return Plan(
        g,
        mdl,
        ctx,
        n,
        eng,
        util,
        wp,
        kp,
        mem,
        float(ridge(g, wp, catalog=cat)),
        b,
        at_batch,
        at_one,
        float(first),
        price,
        cost,
        tuple(warnings),
        residual_quantiles(g, eng, calibration, cat),
    )
