"""Public capacity functions over catalog names: ``ridge``, ``kv_bytes``, ``max_batch``, ``tpot`` and their family.

Each function takes GPU, model and precision names (or catalog entries) and numbers; any of them may be a
scalar, a numpy array or a pandas Series, and arrays broadcast. Names are resolved once per distinct value,
then the numeric formulas of ``planner.model`` run over whole arrays.

``errors="raise"`` (default) raises a ``PlannerError`` for the first bad scenario; ``errors="coerce"``
returns NaN for each scenario that raises, so a spreadsheet column can show an error per cell.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from planner import model as m
from planner.architecture import MODEL_FACT_FIELDS, model_facts
from planner.calibration import CALIBRATED_FIELDS, Calibration, resolve_calibration
from planner.catalog import Catalog, Gpu, Model, Precision, default_catalog
from planner.engines import EngineProfile, engine_profile
from planner.errors import DoesNotFitError, InvalidInputError, PlannerError, UnknownNameError

Errors = Literal["raise", "coerce"]

#: Tensor-parallel group sizes tried when the GPU count is not given (beyond 8: several nodes).
GPU_GROUPS = (1, 2, 4, 8, 16, 32, 64)
MAX_CONTEXT_TOKENS = 2**24
MAX_BATCH = 2**20
MAX_GPUS = 4096


# -- input checks ---------------------------------------------------------------------------------------


def _pandas_index(*args: Any):
    for a in args:
        if type(a).__name__ == "Series" and hasattr(a, "index"):
            return a.index
    return None


def _count(value: Any, what: str, maximum: int, unit: str = "") -> np.ndarray:
    """Whole numbers from 1 to ``maximum`` (8192.0 is 8192); anything else is an InvalidInputError."""
    accepted = f"{what} must be a whole number{unit} from 1 to {maximum:,}"
    if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, str):
        raise InvalidInputError(f"{accepted}; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{accepted}; got {value!r}") from None
    bad = ~np.isfinite(arr) | (arr < 1) | (arr > maximum) | (arr != np.floor(arr))
    if np.any(bad):
        first = arr[bad].flat[0] if arr.ndim else float(arr)
        shown = int(first) if np.isfinite(first) and first == int(first) else first
        raise InvalidInputError(f"{accepted}; got {shown!r}")
    return arr


def _fraction(value: Any, what: str) -> np.ndarray:
    accepted = f"{what} must be a number above 0 and at most 1"
    if isinstance(value, (bool, str)) or value is None:
        raise InvalidInputError(f"{accepted}; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{accepted}; got {value!r}") from None
    bad = ~np.isfinite(arr) | (arr <= 0) | (arr > 1)
    if np.any(bad):
        raise InvalidInputError(f"{accepted}; got {arr[bad].flat[0] if arr.ndim else float(arr)!r}")
    return arr


def _nonnegative(value: Any, what: str) -> np.ndarray:
    if isinstance(value, (bool, str)) or value is None:
        raise InvalidInputError(f"{what} must be a number of 0 or more; got {value!r}")
    arr = np.asarray(value, dtype=float)
    if np.any(~np.isfinite(arr) | (arr < 0)):
        raise InvalidInputError(f"{what} must be a number of 0 or more; got {value!r}")
    return arr


# -- name resolution ------------------------------------------------------------------------------------


@dataclass
class _Column:
    """Per-scenario numbers looked up from names, plus which scenarios named something unknown."""

    values: dict[str, np.ndarray]
    bad: np.ndarray | bool
    first_error: PlannerError | None


def _lookup(names: Any, resolve: Callable[[Any], Any], extract: Callable[[Any], dict[str, float]], errors: Errors) -> _Column:
    """Resolve each distinct name once and spread its numbers over the array of names."""
    if isinstance(names, (str, Gpu, Model, Precision)) or names is None:
        try:
            return _Column({k: np.asarray(v, dtype=float) for k, v in extract(resolve(names)).items()}, False, None)
        except PlannerError as exc:
            if errors == "raise":
                raise
            return _Column({}, True, exc)
    import pandas as pd  # only arrays of names need it

    arr = np.asarray(names, dtype=object)
    flat = arr.ravel()
    keys = np.array([x if isinstance(x, str) else repr(x) for x in flat], dtype=object)
    codes, uniques = pd.factorize(keys, use_na_sentinel=False)
    first_at = np.unique(codes, return_index=True)[1]  # where each distinct key first occurs
    rows: list[dict[str, float] | None] = []
    first_error: PlannerError | None = None
    for pos in first_at:
        try:
            rows.append(extract(resolve(flat[pos])))
        except PlannerError as exc:
            if errors == "raise":
                raise
            first_error = first_error or exc
            rows.append(None)
    return _spread(rows, codes, arr.shape, first_error)


def _spread(rows: list[dict[str, float] | None], codes: np.ndarray, shape: tuple, first_error: PlannerError | None) -> _Column:
    """Per-distinct-key rows of numbers -> per-scenario arrays (codes index the rows); None rows are failures."""
    present = [r for r in rows if r is not None]
    if not present:
        return _Column({}, np.ones(shape, dtype=bool), first_error)
    fields = dict.fromkeys(k for r in present for k in r)  # union: GPUs differ in which peaks they have
    filler = present[0]
    values = {
        k: np.array([(r or filler).get(k, math.nan) for r in rows], dtype=float)[codes].reshape(shape) for k in fields
    }
    bad = np.array([r is None for r in rows])[codes].reshape(shape)
    return _Column(values, bad, first_error)


def _gpu_numbers(g: Gpu, engine: EngineProfile | None = None, calibration: Calibration | None = None) -> dict[str, float]:
    """The GPU's catalog numbers, the engine's batching limits on it, and its (calibrated) efficiency factors."""
    price = g.price.cloud_usd_per_gpu_hour if g.price and g.price.cloud_usd_per_gpu_hour else math.nan
    eng = engine or engine_profile(None)
    factors = {f: getattr(eng, f) for f in CALIBRATED_FIELDS}
    entry = (calibration or resolve_calibration(None)).for_gpu(g.all_names(), eng.name)
    if entry is not None:
        factors.update(entry.factors())
    tokens, seqs = eng.batching_limits(g.memory_bytes, g.architecture)
    return {
        **factors,
        "max_num_batched_tokens": tokens,
        "max_num_seqs": seqs,
        "memory_bytes": g.memory_bytes,
        "engine_visible_memory_bytes": g.engine_visible_memory_bytes or math.nan,
        "bandwidth": g.hbm_bandwidth_bytes_per_s,
        "interconnect": g.interconnect_bytes_per_s or 32e9,  # PCIe Gen4 x16 when unstated
        "price_usd_per_gpu_hour": price,
        **{f"peak_{k}": v for k, v in g.peak_flop_per_s.items()},
    }


_PEAK_KEYS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "int4")
_PEAK_TWINS = {"bf16": "fp16", "fp16": "bf16"}


def gpu_peak_flop_per_s(gpu: Gpu, precision: Precision) -> float:
    """The GPU's dense peak for the precision's math: its own key, else its twin (bf16/fp16), else the fallback."""
    peaks = gpu.peak_flop_per_s
    for key in (precision.math, _PEAK_TWINS.get(precision.math), precision.math_fallback, _PEAK_TWINS.get(precision.math_fallback)):
        if key and key in peaks:
            return peaks[key]
    return peaks.get("fp16") or peaks["bf16"]


def _default_kv_precision(model: Model) -> str:
    """The KV cache is kept in the activation dtype: the native precision when 16/32-bit, else bf16."""
    return model.native_precision if model.native_precision in ("fp16", "bf16", "fp32") else "bf16"


@dataclass
class _Scenario:
    """Everything looked up for a batch of scenarios: numbers per scenario, and where lookups failed."""

    gpu: dict[str, np.ndarray]
    model: dict[str, np.ndarray]
    bad: np.ndarray | bool
    first_error: PlannerError | None
    catalog: Catalog | None = None


def _resolve(catalog: Catalog, errors: Errors, gpu: Any = None, model: Any = None, weight_precision: Any = None,
             kv_precision: Any = None, engine: EngineProfile | None = None,
             calibration: Calibration | None = None) -> _Scenario:
    """Look up GPUs, models and precisions (all optional), broadcasting arrays of names."""
    gpu_cols = (_lookup(gpu, catalog.gpu, lambda g: _gpu_numbers(g, engine, calibration), errors)
                if gpu is not None else _Column({}, False, None))

    def model_numbers(key: tuple[Any, Any, Any]) -> dict[str, float]:
        name, wp, kp = key
        mdl = catalog.model(name)
        facts = model_facts(mdl)
        w = catalog.precision(wp if wp is not None else mdl.native_precision)
        expert = catalog.precision(mdl.native_expert_precision) if (wp is None and mdl.native_expert_precision) else w
        kv = catalog.precision(kp if kp is not None else _default_kv_precision(mdl))
        if not kv.kv_cache:
            raise InvalidInputError(f"precision {kv.name!r} is not a KV-cache format; use one of "
                                    + ", ".join(p.name for p in catalog.precisions if p.kv_cache))
        out = {f: float(getattr(facts, f)) for f in MODEL_FACT_FIELDS}
        out.update(weight_bpp=w.bytes_per_element, expert_bpp=expert.bytes_per_element, kv_bpe=kv.bytes_per_element)
        out.update({f"math_{k}": float(w.math == k) for k in _PEAK_KEYS})
        out.update({f"fallback_{k}": float(w.math_fallback == k) for k in _PEAK_KEYS})
        return out

    model_cols = _Column({}, False, None)
    if model is not None:
        names = (model, weight_precision, kv_precision)
        if all(np.ndim(x) == 0 for x in names):
            model_cols = _lookup_key(names, model_numbers, errors)
        else:
            model_cols = _lookup_combinations(names, model_numbers, errors)
    first = gpu_cols.first_error or model_cols.first_error
    return _Scenario(gpu_cols.values, model_cols.values, np.logical_or(gpu_cols.bad, model_cols.bad), first, catalog)


def _lookup_key(key: tuple, numbers: Callable, errors: Errors) -> _Column:
    try:
        return _Column({k: np.asarray(v, dtype=float) for k, v in numbers(key).items()}, False, None)
    except PlannerError as exc:
        if errors == "raise":
            raise
        return _Column({}, True, exc)


def _lookup_combinations(arrays: tuple[Any, ...], numbers: Callable, errors: Errors) -> _Column:
    """Resolve each distinct combination of names (model, weight precision, KV precision) once, vectorized."""
    import pandas as pd

    objs = [np.asarray(a, dtype=object) for a in arrays]
    shape = np.broadcast(*objs).shape
    flats = [np.broadcast_to(a, shape).ravel() for a in objs]
    combined = np.zeros(flats[0].shape, dtype=np.int64)
    for flat in flats:
        codes, uniques = pd.factorize(flat, use_na_sentinel=False)
        combined = combined * max(len(uniques), 1) + codes
    _, first_at, inverse = np.unique(combined, return_index=True, return_inverse=True)
    rows, first_error = [], None
    for pos in first_at:
        try:
            rows.append(numbers(tuple(f[pos] for f in flats)))
        except PlannerError as exc:
            if errors == "raise":
                raise
            first_error = first_error or exc
            rows.append(None)
    return _spread(rows, inverse.ravel(), shape, first_error)


def _peak_for_weights(s: _Scenario) -> np.ndarray:
    """Per scenario: the GPU peak at the weight precision's math, falling back as ``gpu_peak_flop_per_s`` does."""
    g, md = s.gpu, s.model
    chosen = np.full(np.broadcast(*(list(g.values()) + list(md.values()))).shape, np.nan)
    for table in ("math", "fallback"):
        for key in _PEAK_KEYS:
            for k in (key, _PEAK_TWINS.get(key)):
                if k is None or f"peak_{k}" not in g:
                    continue
                take = (md[f"{table}_{key}"] > 0) & np.isnan(chosen) & ~np.isnan(g[f"peak_{k}"])
                chosen = np.where(take, g[f"peak_{k}"], chosen)
    base = g.get("peak_fp16", g.get("peak_bf16"))
    return np.where(np.isnan(chosen), base, chosen)


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


def _nan_scalar_error(s: _Scenario, errors: Errors) -> None:
    if errors == "raise" and s.first_error:
        raise s.first_error


# -- public functions -----------------------------------------------------------------------------------


def ridge(gpu: Any, precision: Any = "bf16", *, catalog: Catalog | None = None, errors: Errors = "raise"):
    """Ridge point in FLOP/B: the GPU's dense peak at ``precision``'s math / HBM bandwidth.

    H100 SXM at bf16: 989.4e12 / 3.35e12 = 295.3 FLOP/B. Below it a kernel is memory-bound.
    """
    cat = catalog or default_catalog()
    s = _resolve(cat, errors, gpu=gpu, model=None)
    p = _lookup(precision if precision is not None else "bf16", cat.precision,
                lambda pr: {**{f"math_{k}": float(pr.math == k) for k in _PEAK_KEYS},
                            **{f"fallback_{k}": float(pr.math_fallback == k) for k in _PEAK_KEYS}}, errors)
    s.model, s.bad = p.values, np.logical_or(s.bad, p.bad)
    if np.all(s.bad):
        raise_or_nan = s.first_error or p.first_error
        if errors == "raise" and raise_or_nan:
            raise raise_or_nan
        return _finish(np.full(np.broadcast(np.asarray(gpu, dtype=object), np.asarray(precision, dtype=object)).shape, np.nan), True, errors)
    peak = _peak_for_weights(s)
    return _finish(m.ridge_flop_per_byte(peak, s.gpu["bandwidth"]), s.bad, errors, _pandas_index(gpu, precision))


def weight_bytes(model: Any, precision: Any = None, *, catalog: Catalog | None = None, errors: Errors = "raise"):
    """Bytes of all weights at ``precision`` (default: as published; gpt-oss keeps its experts in MXFP4).

    Llama 2 70B at fp16: 68,976,648,192 params x 2 B = 137,953,296,384 B.
    """
    s = _resolve(catalog or default_catalog(), errors, model=model, weight_precision=precision)
    if not s.model:
        return _all_bad(s, errors, model, precision)
    md = s.model
    wb = m.weight_bytes(md["params_non_expert"], md["weight_bpp"], md["params_routed_experts"], md["expert_bpp"])
    return _finish(wb, s.bad, errors, _pandas_index(model, precision))


def _all_bad(s: _Scenario, errors: Errors, *args: Any):
    if errors == "raise" and s.first_error:
        raise s.first_error
    shape = np.broadcast(*(np.asarray(a, dtype=object) for a in args)).shape
    return _finish(np.full(shape, np.nan), True, errors)


def kv_bytes(model: Any, tokens: Any, kv_precision: Any = None, batch: Any = 1, *,
             catalog: Catalog | None = None, errors: Errors = "raise"):
    """KV cache bytes of ``batch`` sequences of ``tokens`` tokens (default precision: the activation dtype).

    2 x layers x KV heads x head dim x bytes per token (MLA: layers x (kv_lora_rank + rope dim) x bytes);
    sliding-window layers hold at most their window. Llama 2 70B, 8,192 tokens, fp16: 2,684,354,560 B.
    """
    tokens_arr = _count(tokens, "tokens", MAX_CONTEXT_TOKENS, " of tokens")
    batch_arr = _count(batch, "batch", MAX_BATCH, " of sequences")
    s = _resolve(catalog or default_catalog(), errors, model=model, kv_precision=kv_precision)
    if not s.model:
        return _all_bad(s, errors, model, tokens, kv_precision, batch)
    md = s.model
    kv = m.kv_bytes(tokens_arr, md["kv_elements_per_token_per_layer"], md["kv_bpe"], md["full_attention_layers"],
                    md["sliding_window_layers"], md["sliding_window"], batch_arr)
    return _finish(kv, s.bad, errors, _pandas_index(model, tokens, kv_precision, batch))


def kv_bytes_per_token(model: Any, kv_precision: Any = None, *, catalog: Catalog | None = None, errors: Errors = "raise"):
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


def _memory(s: _Scenario, context: np.ndarray, gpus: np.ndarray, util: Any, engine: EngineProfile,
            reserve: Any) -> MemoryPlan:
    g, md = s.gpu, s.model
    wb = m.weight_bytes(md["params_non_expert"], md["weight_bpp"], md["params_routed_experts"], md["expert_bpp"])
    visible = m.visible_memory_bytes(g["memory_bytes"], g["engine_visible_memory_bytes"], engine)
    if reserve is None:
        act = m.activation_peak_bytes(md["hidden_size"], md["intermediate_size"], md["vocab_size"], gpus, engine,
                                      g["max_num_batched_tokens"], g["max_num_seqs"])
        reserve = m.reserve_bytes_per_gpu(act, gpus, engine)
    budget = m.kv_budget_bytes_per_gpu(visible, wb, gpus, reserve, util, engine)
    repl = m.kv_replication(md["num_kv_heads"], gpus)
    per_token = md["kv_elements_per_token_per_layer"] * md["kv_bpe"] * md["num_layers"] * repl / gpus
    block = max(int(engine.block_size), 1)
    seq_tokens = np.ceil(context / block) * block
    seq_group = m.kv_bytes(seq_tokens, md["kv_elements_per_token_per_layer"], md["kv_bpe"], md["full_attention_layers"],
                           md["sliding_window_layers"], md["sliding_window"]) * repl
    tokens = m.kv_cache_tokens(budget, per_token, block)
    batch = m.max_batch_from_budget(budget * gpus, seq_group)
    return MemoryPlan(gpus, wb, visible, reserve, budget, per_token, seq_group, tokens, batch)


def _choose_gpus(s: _Scenario, context: np.ndarray, gpus: Any, util: Any, engine: EngineProfile, reserve: Any,
                 need_batch: Any = 1) -> np.ndarray:
    """The GPU count per scenario: as given, or the smallest group in GPU_GROUPS holding weights + ``need_batch`` sequences."""
    if gpus is not None:
        return _count(gpus, "gpus", MAX_GPUS, " of GPUs")
    shape = np.broadcast(context, need_batch, *s.gpu.values(), *s.model.values()).shape
    chosen = np.full(shape, np.nan)
    for n in GPU_GROUPS:
        plan = _memory(s, context, np.full(shape, float(n)), util, engine, reserve)
        fits = np.isnan(chosen) & (plan.max_batch >= need_batch)
        chosen = np.where(fits, n, chosen)
        if not np.any(np.isnan(chosen)):
            break
    return chosen


def _setup(catalog, errors, engine, memory_utilization, gpu, model, weight_precision, kv_precision, context,
           calibration=None):
    eng = engine_profile(engine)
    util = eng.memory_utilization if memory_utilization is None else _fraction(memory_utilization, "memory_utilization")
    ctx = _count(context, "context", MAX_CONTEXT_TOKENS, " of tokens")
    s = _resolve(catalog or default_catalog(), errors, gpu=gpu, model=model, weight_precision=weight_precision,
                 kv_precision=kv_precision, engine=eng, calibration=resolve_calibration(calibration))
    return eng, util, ctx, s


def _fit_check(s: _Scenario, plan: MemoryPlan, gpus_given: Any, need: Any, context: np.ndarray, errors: Errors,
               gpu: Any, model: Any, util: Any, engine: EngineProfile, reserve: Any) -> np.ndarray:
    """Scenarios whose group cannot hold ``need`` sequences; raises the first one's DoesNotFitError when asked."""
    no_group = np.isnan(plan.gpus)
    short = no_group | (np.nan_to_num(plan.max_batch, nan=-1) < need)
    short = short & ~np.asarray(s.bad)
    if errors == "raise" and np.any(short):
        idx = np.argwhere(np.broadcast_to(short, np.shape(short)))[0] if np.ndim(short) else ()
        raise _does_not_fit(s, plan, gpus_given, need, context, idx, gpu, model, util, engine, reserve)
    return short


def _pick(x: Any, idx: tuple) -> Any:
    a = np.asarray(x, dtype=object) if not isinstance(x, np.ndarray) else x
    if a.ndim == 0:
        return a.item() if hasattr(a, "item") else a
    return np.broadcast_to(a, np.broadcast(a, np.empty(tuple(i + 1 for i in idx))).shape)[tuple(idx)] if len(idx) else a


def _does_not_fit(s, plan, gpus_given, need, context, idx, gpu, model, util, engine, reserve) -> DoesNotFitError:
    def at(x):
        arr = np.asarray(x)
        return arr.item() if arr.ndim == 0 else np.broadcast_to(arr, np.broadcast(arr, plan.kv_budget_bytes_per_gpu, need).shape)[tuple(idx)]

    gname = s.catalog.gpu(_pick(gpu, tuple(idx))).name
    mname = s.catalog.model(_pick(model, tuple(idx))).name
    ctx = int(at(context))
    n_need = int(at(need))
    what = f"{n_need} sequence{'s' if n_need != 1 else ''} of {ctx:,} tokens"
    if gpus_given is None:
        biggest = GPU_GROUPS[-1]
        last = _memory(s, context, np.asarray(float(biggest)), util, engine, reserve)
        short = at(last.kv_bytes_per_sequence) * n_need - at(last.kv_budget_bytes_per_gpu) * biggest
        return DoesNotFitError(
            f"{mname} weights plus {what} do not fit on up to {biggest} x {gname}: short by {short / 1e9:,.1f} GB",
            shortfall_bytes=short, smallest_gpus=None)
    n = int(at(plan.gpus))
    short = at(plan.kv_bytes_per_sequence) * n_need - at(plan.kv_budget_bytes_per_gpu) * n
    smallest = None
    for k in GPU_GROUPS:
        alt = _memory(s, context, np.asarray(float(k)), util, engine, reserve)
        if at(alt.max_batch) >= n_need:
            smallest = k
            break
    weights_short = at(plan.weight_bytes) / n > at(plan.visible_bytes_per_gpu) * (1.0 if np.ndim(util) else float(util))
    head = (f"{mname} weights ({at(plan.weight_bytes) / 1e9:,.2f} GB) do not fit on {n} x {gname}"
            if weights_short else f"{mname} weights plus {what} do not fit on {n} x {gname}")
    tail = f"; the smallest group that works is {smallest} x {gname}" if smallest else f"; no group of up to {GPU_GROUPS[-1]} works"
    return DoesNotFitError(f"{head}: short by {short / 1e9:,.1f} GB{tail}", shortfall_bytes=short, smallest_gpus=smallest)


def memory_plan(gpu: Any, model: Any, context: Any, kv_precision: Any = None, gpus: Any = None,
                weight_precision: Any = None, memory_utilization: Any = None, *, batch: Any = 1,
                engine: str | EngineProfile | None = None, reserve_bytes: Any = None,
                catalog: Catalog | None = None, errors: Errors = "raise", calibration: Any = None) -> MemoryPlan:
    """All memory quantities of a deployment; ``gpus=None`` picks the smallest group holding ``batch`` sequences."""
    eng, util, ctx, s = _setup(catalog, errors, engine, memory_utilization, gpu, model, weight_precision, kv_precision, context,
                               calibration)
    need = _count(batch, "batch", MAX_BATCH, " of sequences")
    reserve = None if reserve_bytes is None else _nonnegative(reserve_bytes, "reserve_bytes")
    if not s.model or not s.gpu:
        _nan_scalar_error(s, errors)
        nan = np.full(np.broadcast(np.asarray(gpu, dtype=object), np.asarray(model, dtype=object), ctx).shape, np.nan)
        return MemoryPlan(*([nan] * 9))
    n = _choose_gpus(s, ctx, gpus, util, eng, reserve, need)
    plan = _memory(s, ctx, np.where(np.isnan(n), GPU_GROUPS[-1], n), util, eng, reserve)
    plan = MemoryPlan(n, *list(plan.__dict__.values())[1:])
    short = _fit_check(s, plan, gpus, need, ctx, errors, gpu, model, util, eng, reserve)
    bad = np.logical_or(s.bad, short)
    idx = _pandas_index(gpu, model, context)
    return MemoryPlan(*[_finish(np.asarray(v, dtype=float), bad, "coerce", idx) for v in plan.__dict__.values()])


def max_batch(gpu: Any, model: Any, context: Any, kv_precision: Any = None, gpus: Any = None,
              weight_precision: Any = None, memory_utilization: Any = None, *,
              engine: str | EngineProfile | None = None, reserve_bytes: Any = None,
              catalog: Catalog | None = None, errors: Errors = "raise", calibration: Any = None):
    """Sequences of ``context`` tokens that fit at once: floor(KV budget / KV bytes per sequence).

    KV budget = GPUs x (visible memory x utilization - reserve) - weights (engine ``"vllm"`` by default;
    ``engine="ideal"``, ``memory_utilization=1`` gives the seeds' free HBM / KV per sequence). Without
    ``gpus``, the smallest group of 1, 2, 4, 8 (... 64) GPUs that holds the weights and one sequence.
    """
    eng, util, ctx, s = _setup(catalog, errors, engine, memory_utilization, gpu, model, weight_precision, kv_precision, context,
                               calibration)
    reserve = None if reserve_bytes is None else _nonnegative(reserve_bytes, "reserve_bytes")
    if not s.model or not s.gpu:
        return _all_bad(s, errors, gpu, model, context)
    n = _choose_gpus(s, ctx, gpus, util, eng, reserve)
    plan = _memory(s, ctx, np.where(np.isnan(n), GPU_GROUPS[-1], n), util, eng, reserve)
    plan = MemoryPlan(n, *list(plan.__dict__.values())[1:])
    short = _fit_check(s, plan, gpus, 1, ctx, errors, gpu, model, util, eng, reserve)
    return _finish(plan.max_batch, np.logical_or(s.bad, short), errors,
                   _pandas_index(gpu, model, context, kv_precision, gpus), integer=True)


def min_gpus(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None,
             weight_precision: Any = None, memory_utilization: Any = None, *,
             engine: str | EngineProfile | None = None, reserve_bytes: Any = None,
             catalog: Catalog | None = None, errors: Errors = "raise"):
    """Smallest tensor-parallel group (1, 2, 4, 8, ... 64) holding the weights and ``batch`` sequences of ``context``."""
    plan = memory_plan(gpu, model, context, kv_precision, None, weight_precision, memory_utilization, batch=batch,
                       engine=engine, reserve_bytes=reserve_bytes, catalog=catalog, errors=errors)
    g = plan.gpus
    if errors == "raise":
        return int(g) if np.ndim(g) == 0 else (g.astype(np.int64) if isinstance(g, np.ndarray) else g.astype("int64"))
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


def _decode(s: _Scenario, ctx: np.ndarray, batch: np.ndarray, gpus: np.ndarray, eng: EngineProfile) -> DecodeStep:
    g, md = s.gpu, s.model
    touched = m.experts_touched(md["num_experts"], md["experts_per_token"], batch)
    weights_read = (md["params_read_per_step"] * md["weight_bpp"]
                    + md["moe_layers"] * touched * md["params_per_expert_layer"] * md["expert_bpp"])
    kv_read = m.kv_bytes(ctx, md["kv_elements_per_token_per_layer"], md["kv_bpe"], md["full_attention_layers"],
                         md["sliding_window_layers"], md["sliding_window"], batch) * m.kv_replication(md["num_kv_heads"], gpus)
    params_per_token = md["params_read_per_step"] + md["moe_layers"] * md["experts_per_token"] * md["params_per_expert_layer"]
    attn = md["attention_flop_per_context_token_per_layer"] * m.cached_tokens_per_layer_sum(
        ctx, md["full_attention_layers"], md["sliding_window_layers"], md["sliding_window"])
    flop = batch * (2.0 * params_per_token + attn)
    bytes_moved = weights_read + kv_read
    peak = _peak_for_weights(s)
    bw = g["bandwidth"]
    t_mem = bytes_moved / (gpus * bw * g["bandwidth_efficiency"])
    t_flop = flop / (gpus * peak * g["decode_flop_efficiency"])
    comm = 2.0 * md["num_layers"] * m.allreduce_time_s(batch * md["hidden_size"] * 2.0, gpus, g["interconnect"],
                                                       g["allreduce_latency_s"], g["interconnect_efficiency"])
    overhead = g["step_overhead_s"] + g["layer_overhead_s"] * md["num_layers"]
    step = np.maximum(t_mem, t_flop) + comm + overhead
    return DecodeStep(gpus, batch, step, bytes_moved, flop, t_mem, t_flop, comm, overhead, peak, bw)


def decode_step(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
                weight_precision: Any = None, memory_utilization: Any = None, *,
                engine: str | EngineProfile | None = None, reserve_bytes: Any = None, check_fit: bool = True,
                catalog: Catalog | None = None, errors: Errors = "raise", calibration: Any = None) -> DecodeStep:
    """Roofline of one decode step of ``batch`` sequences at ``context`` tokens (see ``tpot``)."""
    eng, util, ctx, s = _setup(catalog, errors, engine, memory_utilization, gpu, model, weight_precision, kv_precision, context,
                               calibration)
    b = _count(batch, "batch", MAX_BATCH, " of sequences")
    reserve = None if reserve_bytes is None else _nonnegative(reserve_bytes, "reserve_bytes")
    if not s.model or not s.gpu:
        _nan_scalar_error(s, errors)
        nan = np.full(np.broadcast(np.asarray(gpu, dtype=object), np.asarray(model, dtype=object), ctx, b).shape, np.nan)
        return DecodeStep(*([nan] * 11))
    n = _choose_gpus(s, ctx, gpus, util, eng, reserve, b if check_fit else 1)
    n_safe = np.where(np.isnan(n), GPU_GROUPS[-1], n)
    bad = np.asarray(s.bad)
    if check_fit:
        plan = _memory(s, ctx, n_safe, util, eng, reserve)
        plan = MemoryPlan(n, *list(plan.__dict__.values())[1:])
        bad = np.logical_or(bad, _fit_check(s, plan, gpus, b, ctx, errors, gpu, model, util, eng, reserve))
    step = _decode(s, ctx, b, n_safe, eng)
    idx = _pandas_index(gpu, model, context, batch)
    return DecodeStep(*[_finish(np.asarray(v, dtype=float), bad, "coerce", idx) for v in step.__dict__.values()])


def tpot(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
         weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Time per output token of one sequence, in seconds: the decode step time of the whole batch.

    step = max(bytes / achieved bandwidth, FLOPs / achieved peak) + TP all-reduces + overhead, with bytes =
    weights read (MoE: experts the batch touches) + batch x KV at ``context``. Not the seed's
    (weights + KV) / bandwidth x 1/B: that is ``batch_token_time`` (= 1 / throughput).
    """
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).step_s


def throughput(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
               weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Output tokens per second of the whole group: batch / TPOT."""
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).throughput_tokens_per_s


def batch_token_time(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
                     weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Seconds per output token of the whole batch (TPOT / batch): the second seed's "x 1/B" figure."""
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).batch_token_time_s


def mfu(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
        weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Model FLOPs utilization of a decode step: FLOPs / (step time x GPUs x peak). Batch 1 on H100: ~0.3%."""
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).mfu


def mbu(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
        weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Memory bandwidth utilization of a decode step: bytes / (step time x GPUs x bandwidth)."""
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).mbu


def decode_intensity(gpu: Any, model: Any, context: Any, batch: Any = 1, kv_precision: Any = None, gpus: Any = None,
                     weight_precision: Any = None, memory_utilization: Any = None, **options):
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV). About B at 16-bit, short context."""
    return decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, memory_utilization, **options).intensity_flop_per_byte


@dataclass(frozen=True)
class PrefillStep:
    gpus: Any
    prompt_tokens: Any
    ttft_s: Any
    bytes_moved: Any
    flop: Any

    @property
    def intensity_flop_per_byte(self):
        return self.flop / self.bytes_moved


def prefill(gpu: Any, model: Any, prompt_tokens: Any, gpus: Any = None, weight_precision: Any = None,
            kv_precision: Any = None, *, engine: str | EngineProfile | None = None, memory_utilization: Any = None,
            reserve_bytes: Any = None, catalog: Catalog | None = None, errors: Errors = "raise",
            calibration: Any = None) -> PrefillStep:
    """Prefill of one prompt: compute-bound roofline over 2 x active params x tokens + causal attention FLOPs."""
    eng, util, ctx, s = _setup(catalog, errors, engine, memory_utilization, gpu, model, weight_precision, kv_precision, prompt_tokens,
                               calibration)
    reserve = None if reserve_bytes is None else _nonnegative(reserve_bytes, "reserve_bytes")
    if not s.model or not s.gpu:
        _nan_scalar_error(s, errors)
        nan = np.full(np.broadcast(np.asarray(gpu, dtype=object), np.asarray(model, dtype=object), ctx).shape, np.nan)
        return PrefillStep(*([nan] * 5))
    n = _choose_gpus(s, ctx, gpus, util, eng, reserve)
    n_safe = np.where(np.isnan(n), GPU_GROUPS[-1], n)
    plan = MemoryPlan(n, *list(_memory(s, ctx, n_safe, util, eng, reserve).__dict__.values())[1:])
    bad = np.logical_or(s.bad, _fit_check(s, plan, gpus, 1, ctx, errors, gpu, model, util, eng, reserve))
    g, md = s.gpu, s.model
    touched = m.experts_touched(md["num_experts"], md["experts_per_token"], ctx)
    weights_read = (md["params_read_per_step"] * md["weight_bpp"]
                    + md["moe_layers"] * touched * md["params_per_expert_layer"] * md["expert_bpp"])
    kv_written = m.kv_bytes(ctx, md["kv_elements_per_token_per_layer"], md["kv_bpe"], md["full_attention_layers"],
                            md["sliding_window_layers"], md["sliding_window"])
    params_per_token = md["params_read_per_step"] + md["moe_layers"] * md["experts_per_token"] * md["params_per_expert_layer"]
    # causal attention: token t attends to t earlier tokens (at most the window): about ctx/2 on average
    attn = md["attention_flop_per_context_token_per_layer"] * ctx * m.cached_tokens_per_layer_sum(
        ctx / 2.0, md["full_attention_layers"], md["sliding_window_layers"], md["sliding_window"])
    flop = 2.0 * params_per_token * ctx + attn
    bytes_moved = weights_read + kv_written
    peak = _peak_for_weights(s)
    t = m.roofline_step_time_s(bytes_moved, flop, n_safe, g["bandwidth"], peak, g["bandwidth_efficiency"],
                               g["prefill_flop_efficiency"])
    comm = 2.0 * md["num_layers"] * m.allreduce_time_s(ctx * md["hidden_size"] * 2.0, n_safe, g["interconnect"],
                                                       g["allreduce_latency_s"], g["interconnect_efficiency"])
    ttft_s = t + comm + g["step_overhead_s"] + g["layer_overhead_s"] * md["num_layers"]
    idx = _pandas_index(gpu, model, prompt_tokens)
    return PrefillStep(*[_finish(np.asarray(v, dtype=float), bad, "coerce", idx) for v in (n, ctx, ttft_s, bytes_moved, flop)])


def ttft(gpu: Any, model: Any, prompt_tokens: Any, gpus: Any = None, weight_precision: Any = None, **options):
    """Time to first token of one prompt, in seconds: the prefill time (no queueing)."""
    return prefill(gpu, model, prompt_tokens, gpus, weight_precision, **options).ttft_s


def prefill_intensity(gpu: Any, model: Any, prompt_tokens: Any, gpus: Any = None, weight_precision: Any = None, **options):
    """Arithmetic intensity of a prefill, FLOP per byte. About the prompt length at 16-bit."""
    return prefill(gpu, model, prompt_tokens, gpus, weight_precision, **options).intensity_flop_per_byte


def gpu_price_per_hour(gpu: Any, *, catalog: Catalog | None = None) -> float:
    """The catalog's cloud price per GPU-hour, or NaN when it has none."""
    return _gpu_numbers((catalog or default_catalog()).gpu(gpu))["price_usd_per_gpu_hour"]


def cost_per_mtok(gpu: Any, model: Any, context: Any, batch: Any = 1, price_per_gpu_hour: Any = None,
                  kv_precision: Any = None, gpus: Any = None, weight_precision: Any = None, **options):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6.

    ``price_per_gpu_hour`` defaults to the catalog's cloud price for the GPU.
    """
    step = decode_step(gpu, model, context, batch, kv_precision, gpus, weight_precision, **options)
    if price_per_gpu_hour is None:
        cat = options.get("catalog") or default_catalog()
        s = _resolve(cat, options.get("errors", "raise"), gpu=gpu)
        price = s.gpu.get("price_usd_per_gpu_hour", np.nan)
        if options.get("errors", "raise") == "raise" and np.any(np.isnan(price)):
            raise InvalidInputError(f"no price per GPU-hour in the catalog for {gpu!r}; pass price_per_gpu_hour")
    else:
        price = _nonnegative(price_per_gpu_hour, "price_per_gpu_hour")
    return _finish(m.cost_per_million_tokens_usd(price, step.gpus, step.throughput_tokens_per_s), False, "coerce",
                   _pandas_index(gpu, model, context, batch))


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


def plan(gpu: Any, model: Any, context: Any, kv_precision: Any = None, gpus: Any = None, weight_precision: Any = None,
         memory_utilization: Any = None, *, batch: Any = None, engine: str | EngineProfile | None = None,
         reserve_bytes: Any = None, price_per_gpu_hour: Any = None, catalog: Catalog | None = None,
         calibration: Any = None) -> Plan:
    """One scenario, fully evaluated (scalars only): the CLI's ``planner plan`` prints this."""
    cat = catalog or default_catalog()
    g, mdl = cat.gpu(gpu), cat.model(model)
    eng = engine_profile(engine)
    wp = cat.precision(weight_precision).name if weight_precision is not None else mdl.native_precision
    kp = cat.precision(kv_precision).name if kv_precision is not None else _default_kv_precision(mdl)
    opts = dict(engine=eng, reserve_bytes=reserve_bytes, catalog=cat, calibration=calibration)
    mem = memory_plan(g, mdl, context, kp, gpus, weight_precision, memory_utilization, **opts)
    n = int(mem.gpus)
    top = int(mem.max_batch)
    b = top if batch is None else int(_count(batch, "batch", MAX_BATCH, " of sequences"))
    at_batch = decode_step(g, mdl, context, b, kp, n, weight_precision, memory_utilization, **opts)
    at_one = decode_step(g, mdl, context, 1, kp, n, weight_precision, memory_utilization, **opts)
    first = ttft(g, mdl, context, n, weight_precision, kv_precision=kp, memory_utilization=memory_utilization, **opts)
    price = gpu_price_per_hour(g, catalog=cat) if price_per_gpu_hour is None else float(_nonnegative(price_per_gpu_hour, "price_per_gpu_hour"))
    cost = float(m.cost_per_million_tokens_usd(price, n, at_batch.throughput_tokens_per_s))
    warnings = []
    ctx = int(_count(context, "context", MAX_CONTEXT_TOKENS, " of tokens"))
    if ctx > mdl.max_context:
        warnings.append(f"context {ctx:,} exceeds {mdl.name}'s trained maximum of {mdl.max_context:,} tokens; "
                        "memory and time are extrapolated")
    if n > 8:
        warnings.append(f"{n} GPUs is more than one 8-GPU node: tensor parallelism across nodes is slower than modelled")
    util = eng.memory_utilization if memory_utilization is None else float(memory_utilization)
    return Plan(g, mdl, ctx, n, eng, util, wp, kp, mem, float(ridge(g, wp, catalog=cat)), b, at_batch, at_one,
                float(first), price, cost, tuple(warnings))
