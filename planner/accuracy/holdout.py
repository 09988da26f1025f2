"""The shipped time factors, fitted on every source at once, and leave-one-source-out (LOSO) held-out errors.

Protocol (docs/accuracy.md), fixed before any figure was looked at:

- **Rows fitted**: published rows whose convention is unambiguous, ``kind == "static"`` (static batches
  and batch-1 latency: all sequences start together, no queueing), of an engine with a profile (vLLM,
  LMDeploy, TensorRT-LLM), that the planner can predict, whose whole batch fits the KV cache (else the
  engine queues part of it). A TPOT printed too coarsely (``TPOT_RESOLUTION_S``) is not used; a TTFT only
  for a single prompt (``planner.accuracy.fit.ttft_is_prefill``). Serving benchmarks are not fitted: their figures
  hold queueing and scheduling that ``planner.serving.benchmark`` simulates, not the time terms. A row published
  twice (``decode_public.csv`` repeats five LMDeploy rows of ``perf_public.csv``) counts once.
- **Factors**: ``SHARED_FIELDS`` are the kernels' (one value for every engine: the same GEMM and attention
  libraries); ``ENGINE_FIELDS`` are each engine's own (its runtime's per-step cost). An engine without rows
  in a fit keeps its starting value (``planner.engines.profiles``).
- **Held out**: for each source fold (``fold_of``: one source document; vLLM's CI pages of one benchmark
  on several GPUs are one fold), fit on all other folds' rows and predict that fold's rows. Every row
  of every fold has one held-out prediction; the shipped factors are the fit on all rows.

``python bench/loso.py`` prints in-sample and held-out errors per quantity and group.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import least_squares

from planner import api
from planner.accuracy import ranges
from planner.accuracy.calibration import Calibration
from planner.accuracy.fit import (
    FIT_SOURCE_GROUPS,
    PRIOR_WEIGHT,
    _from_vector,
    _observations,
    _to_vector,
    bounds,
    ttft_is_prefill,
)
from planner.accuracy.predict import (
    DecodePrediction,
    DecodeRow,
    predict_decode_rows,
    quantiles,
    resolve_gpu_name,
    resolve_model_name,
)
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import EngineProfile, engine_profile
from planner.errors import PlannerError

#: Engines whose rows are fitted (each has a profile); other engines' rows are predicted with vLLM's factors.
FIT_ENGINES = ("vllm", "lmdeploy", "tensorrt-llm")
#: Fitted end-to-end and shared by all engines: the per-layer cost beyond the measured GEMM and attention kernels
#: (norms, rotary embedding, activation, KV-cache writes: small kernels the kernel tables do not hold). The kernels'
#: own curves are measured (``planner.engines.kernel_curves``), never fitted here.
SHARED_FIELDS = ("layer_overhead_s",)
#: Each engine's own factors: its runtime's per-step cost and a prefill's fixed latency (front end, scheduling).
ENGINE_FIELDS = ("step_overhead_s", "prefill_latency_s")
#: Source groups that are one benchmark published on several pages: held out together.
FOLD_PREFIXES = ("vllm-buildkite-perf",)
#: Sources that publish TPOT rounded to a resolution, seconds: a TPOT whose half-resolution is more than
#: ``MAX_ROUNDING`` of its value is not fitted (LMDeploy's page prints per-token latency in s with two
#: decimals: 0.01 s is 5-15 ms). Their throughput columns keep 4-5 digits and are fitted.
TPOT_RESOLUTION_S = {"lmdeploy-a100-fp16-v0.1.0a1": 0.01}
MAX_ROUNDING = 0.05


def fold_of(row: DecodeRow) -> str:
    """The fold a row is held out with: its source group, or the benchmark several source groups publish."""
    return next((p for p in FOLD_PREFIXES if row.source_group.startswith(p)), row.source_group)


#: The profile each fitted engine's rows run under, where it is not the engine's name: every TensorRT-LLM row the
#: protocol fits is a 0.x TensorRT-engine run (trtllm-perf-v0.6.1, trtllm-blog-h200-launch v0.5.0), so its rows are
#: predicted with the 0.x profile (a C++ executor: no per-sequence cost of 1.x's Python loop); the fitted per-step and
#: prefill costs are the ones both TensorRT-LLM profiles ship (``TENSORRT_LLM_STEP_OVERHEAD_S``, ``..._PREFILL_...``).
FIT_PROFILE = {"tensorrt-llm": "tensorrt-llm-0"}


def engine_key(row: DecodeRow) -> str:
    """The profile whose time factors predict the row: its engine's, or vLLM's for an engine without one."""
    return row.engine if row.engine in FIT_ENGINES else "vllm"


def fit_profile(engine: str) -> EngineProfile:
    """The profile a fitted engine's rows are predicted with (``FIT_PROFILE``, else the engine's own)."""
    return engine_profile(FIT_PROFILE.get(engine, engine))


def fit_rows(rows: Sequence[DecodeRow], *, catalog: Catalog | None = None) -> list[DecodeRow]:
    """The rows the protocol fits: of the sources in ``FIT_SOURCE_GROUPS`` (the others are the held-out set of
    bench/heldout.py), static, of an engine with a profile, predictable, each published once."""
    cat = catalog or default_catalog()
    out, seen = [], set()
    for r in rows:
        if r.problem or r.kind != "static" or r.engine not in FIT_ENGINES or r.source_group not in FIT_SOURCE_GROUPS:
            continue
        try:
            model, gpu = resolve_model_name(r.model, cat), resolve_gpu_name(r.gpu, cat)
        except PlannerError:
            continue
        key = (r.source_group, gpu, model, r.gpus, r.batch, r.input_len, r.output_len, r.weight_precision)
        if key not in seen:
            seen.add(key)
            coarse = TPOT_RESOLUTION_S.get(r.source_group, 0.0) / 2 > MAX_ROUNDING * r.tpot_s
            out.append(replace(r, tpot_s=math.nan) if coarse else r)
    if out:
        first = predict_decode_rows(out, calibration=Calibration(), catalog=cat)
        out = [r for i, r in enumerate(out) if not math.isnan(first.tpot_s[i]) and batch_fits(r, cat)]
    return out


def batch_fits(row: DecodeRow, catalog: Catalog) -> bool:
    """Whether the row's whole batch of prompt + output tokens fits its engine's KV cache at once.

    A static batch that does not fit does not run as stated (the engine queues the sequences it cannot hold:
    LMDeploy's Llama-2-13B, 64 x 4096 tokens on one A100 80GB), so its figures are not fitted.
    """
    fits = api.max_batch(
        resolve_gpu_name(row.gpu, catalog),
        resolve_model_name(row.model, catalog),
        row.input_len + row.output_len,
        gpus=row.gpus,
        weight_precision=row.weight_precision,
        kv_precision=row.kv_precision,
        engine=fit_profile(engine_key(row)),
        catalog=catalog,
        calibration=Calibration(),
        errors="coerce",
    )
    return bool(float(fits) >= row.batch)


@dataclass(frozen=True)
class JointFit:
    """Fitted factors: the shared kernels' and each engine's own; ``profiles`` applies them."""

    shared: dict[str, float]
    engines: dict[str, dict[str, float]]
    rows: int

    def profile(self, engine: str) -> EngineProfile:
        return fit_profile(engine).with_(**self.shared, **self.engines.get(engine, {}))

    def predict(self, rows: Sequence[DecodeRow], *, catalog: Catalog | None = None) -> DecodePrediction:
        """Each row predicted with its engine's fitted profile (``engine_key``)."""
        return predict_with(rows, {e: self.profile(e) for e in FIT_ENGINES}, catalog=catalog)


def predict_with(
    rows: Sequence[DecodeRow],
    profiles: dict[str, EngineProfile],
    *,
    catalog: Catalog | None = None,
    memo: dict[tuple[str, EngineProfile], DecodePrediction] | None = None,
) -> DecodePrediction:
    """TPOT, output rate and TTFT of each row under ``profiles[engine_key(row)]`` (no user calibration).

    ``memo``: predictions of each engine's rows by (engine, profile), for calls on the same ``rows`` (``fit_joint``:
    a finite-difference step in one engine's own factor leaves the other engines' profiles, hence their rows'
    predictions, as they were; a profile equal field by field predicts the same numbers)."""
    n = len(rows)
    out = [np.full(n, math.nan) for _ in range(3)]
    by_engine: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_engine.setdefault(engine_key(r), []).append(i)
    for e, idx in by_engine.items():
        p = memo.get((e, profiles[e])) if memo is not None else None
        if p is None:
            p = predict_decode_rows(
                [rows[i] for i in idx], engine=profiles[e], calibration=Calibration(), catalog=catalog
            )
            if memo is not None:
                memo[(e, profiles[e])] = p
        for arr, got in zip(out, (p.tpot_s, p.throughput_tokens_per_s, p.ttft_s), strict=True):
            arr[idx] = got
    return DecodePrediction(*out)


def log_residuals(rows: Sequence[DecodeRow], pred: DecodePrediction) -> np.ndarray:
    """log(measured / predicted) of every measured TPOT, output rate and first-token latency (``fit``'s rule)."""
    (kinds, idx), meas, _ = _observations(rows, math.inf)  # a single prompt's TTFT only
    p = np.stack([pred.tpot_s, pred.throughput_tokens_per_s, pred.ttft_s])[kinds, idx]
    res = np.log(meas / p)
    return np.where(np.isfinite(res), res, 10.0)


def fit_joint(
    rows: Sequence[DecodeRow],
    *,
    shared_fields: Sequence[str] = SHARED_FIELDS,
    engine_fields: Sequence[str] = ENGINE_FIELDS,
    start: dict[str, EngineProfile] | None = None,
    catalog: Catalog | None = None,
) -> JointFit:
    """Least squares of log(measured / predicted) over ``rows`` (already ``fit_rows``): shared + per-engine fields.

    A light pull towards the starting values (``PRIOR_WEIGHT``) keeps a factor no row sees where it was.
    """
    cat = catalog or default_catalog()
    base = start or {e: fit_profile(e) for e in FIT_ENGINES}
    engines = [e for e in FIT_ENGINES if any(engine_key(r) == e for r in rows)]
    shared0 = {f: getattr(base["vllm"], f) for f in shared_fields}
    names = [*shared_fields, *(f for _ in engines for f in engine_fields)]
    x0 = np.concatenate(
        [
            _to_vector(shared0, shared_fields),
            *(_to_vector({f: getattr(base[e], f) for f in engine_fields}, engine_fields) for e in engines),
        ]
    )
    ns = len(shared_fields)

    def unpack(x: np.ndarray) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
        shared = _from_vector(x[:ns], shared_fields)
        own = {
            e: _from_vector(x[ns + k * len(engine_fields) : ns + (k + 1) * len(engine_fields)], engine_fields)
            for k, e in enumerate(engines)
        }
        return shared, own

    memo: dict[tuple[str, EngineProfile], DecodePrediction] = {}

    def r(x: np.ndarray) -> np.ndarray:
        shared, own = unpack(x)
        profiles = {e: base[e].with_(**shared, **own.get(e, {})) for e in FIT_ENGINES}
        res = log_residuals(rows, predict_with(rows, profiles, catalog=cat, memo=memo))
        return np.concatenate([res, math.sqrt(PRIOR_WEIGHT) * (x - x0)])

    lower, upper = bounds(names)
    x0 = np.clip(x0, lower, upper)
    shared, own = unpack(least_squares(r, x0, bounds=(lower, upper), x_scale=1.0, xtol=1e-6, ftol=1e-8).x)
    return JointFit(shared, own, len(rows))


@dataclass(frozen=True)
class HeldOut:
    """For each fitted row: the in-sample prediction (fit on all rows) and the held-out one (its fold left out)."""

    rows: tuple[DecodeRow, ...]
    in_sample: DecodePrediction
    held_out: DecodePrediction
    fit: JointFit  # on all rows: what planner.engines.profiles ships
    folds: dict[str, JointFit]

    def held_out_error(self, i: int, quantity: str, which: str = "held_out") -> float:
        """Predicted / measured - 1 of row ``i``'s "TPOT", "TTFT" or throughput (NaN where none); ``which``:
        "held_out" (its fold left out of the fit) or "in_sample" (the fit on all rows)."""
        r, p = self.rows[i], getattr(self, which)
        if quantity == "TPOT":
            return p.tpot_s[i] / r.tpot_s - 1.0
        if quantity == "TTFT":
            return p.ttft_s[i] / r.ttft_s - 1.0 if ttft_is_prefill(r) else math.nan
        return p.throughput_tokens_per_s[i] / r.throughput_tokens_per_s - 1.0

    def time_residuals(self, which: str = "held_out") -> list[tuple[DecodeRow, float]]:
        """(row, measured / predicted time - 1) of every figure; a throughput counts as a time's inverse."""
        out = []
        for i, r in enumerate(self.rows):
            for q in ("TPOT", "TTFT", "throughput"):
                e = self.held_out_error(i, q, which)
                if not math.isnan(e):
                    out.append((r, e if q == "throughput" else 1.0 / (1.0 + e) - 1.0))
        return out


def leave_one_source_out(
    rows: Sequence[DecodeRow],
    *,
    shared_fields: Sequence[str] = SHARED_FIELDS,
    engine_fields: Sequence[str] = ENGINE_FIELDS,
    catalog: Catalog | None = None,
) -> HeldOut:
    """Fit on all ``fit_rows`` of ``rows``, and once per fold on the others; predict each fold from its own fit."""
    cat = catalog or default_catalog()
    rows = fit_rows(rows, catalog=cat)
    options = dict(shared_fields=shared_fields, engine_fields=engine_fields, catalog=cat)
    full = fit_joint(rows, **options)
    n = len(rows)
    held = [np.full(n, math.nan) for _ in range(3)]
    folds = {}
    for fold in sorted({fold_of(r) for r in rows}):
        idx = [i for i, r in enumerate(rows) if fold_of(r) == fold]
        folds[fold] = fit_joint([r for r in rows if fold_of(r) != fold], **options)
        p = folds[fold].predict([rows[i] for i in idx], catalog=cat)
        for arr, got in zip(held, (p.tpot_s, p.throughput_tokens_per_s, p.ttft_s), strict=True):
            arr[idx] = got
    return HeldOut(tuple(rows), full.predict(rows, catalog=cat), DecodePrediction(*held), full, folds)


def fit_reference_defaults(rows: Sequence[DecodeRow], *, catalog: Catalog | None = None) -> JointFit:
    """The shipped time factors: ``fit_joint`` on all ``fit_rows`` of ``rows`` (``planner.engines.profiles`` holds them,
    rounded; ``tests/test_holdout.py`` re-derives them from the shipped reference rows)."""
    return fit_joint(fit_rows(rows, catalog=catalog), catalog=catalog)


# -- the residuals file of planner.accuracy.ranges ---------------------------------------------------------------


def row_values(row: DecodeRow, catalog: Catalog) -> dict[str, str]:
    """A fitted row's value of each of ``planner.accuracy.ranges.DIMENSIONS`` (GPU, TP size, engine, MoE, size class)."""
    model = catalog.model(resolve_model_name(row.model, catalog))
    return ranges.query_values(resolve_gpu_name(row.gpu, catalog), row.gpus, row.engine, model)


def value_held_out(
    result: HeldOut,
    dimension: str,
    *,
    catalog: Catalog | None = None,
    fits: dict[tuple[int, ...], JointFit] | None = None,
) -> HeldOut:
    """``result`` with each row predicted by a fit that saw neither its fold nor its value of ``dimension``.

    One fit per (value, fold) cell, on the rows of other folds with another value; a cell whose value has no row
    outside its fold reuses that fold's leave-one-source-out fit (the same rows). NaN where no row is left to fit.
    ``fits``: fits already made by the positions of their rows in ``result.rows`` (``residual_table`` shares one
    across dimensions: two cells that leave out the same rows fit the same rows, so the fit is the same).
    """
    cat = catalog or default_catalog()
    rows = result.rows
    values = [row_values(r, cat)[dimension] for r in rows]
    held = [np.full(len(rows), math.nan) for _ in range(3)]
    for v, fold in sorted({(v, fold_of(r)) for v, r in zip(values, rows, strict=True)}):
        idx = [i for i, r in enumerate(rows) if values[i] == v and fold_of(r) == fold]
        kept = tuple(i for i, r in enumerate(rows) if values[i] != v and fold_of(r) != fold)
        if not kept:
            continue
        alone = all(fold_of(r) == fold for i, r in enumerate(rows) if values[i] == v)
        if alone:
            fit = result.folds[fold]
        elif fits is not None and kept in fits:
            fit = fits[kept]
        else:
            fit = fit_joint([rows[i] for i in kept], catalog=cat)
            if fits is not None:
                fits[kept] = fit
        p = fit.predict([rows[i] for i in idx], catalog=cat)
        for arr, got in zip(held, (p.tpot_s, p.throughput_tokens_per_s, p.ttft_s), strict=True):
            arr[idx] = got
    return replace(result, held_out=DecodePrediction(*held))


def _width(residuals: Sequence[float]) -> float:
    """log(1 + 90th percentile) - log(1 + 10th): the range's width as a ratio of times (the fit's scale)."""
    low, high = quantiles(residuals)
    return math.log1p(high) - math.log1p(low)


def residual_table(result: HeldOut, *, catalog: Catalog | None = None) -> list[dict[str, str]]:
    """The rows of ``catalogs/reference/heldout_residuals.csv`` (``planner.accuracy.ranges`` states what each holds).

    Per dimension: a ``*`` row with the value-held-out quantiles and ``widen``, the width of their 10th-90th
    percentiles over that of the leave-one-source-out residuals of the same figures (at least 1.00; widths in
    log(measured / predicted), as the fit measures misses); then one row per value with its figures'
    leave-one-source-out quantiles.
    """
    cat = catalog or default_catalog()
    loso = result.time_residuals()

    def row(dimension: str, value: str, figures: list[tuple[DecodeRow, float]], widen: str = "") -> dict[str, str]:
        low, high = quantiles([e for _, e in figures])
        folds = " ".join(sorted({fold_of(r) for r, _ in figures}))
        return dict(
            dimension=dimension,
            value=value,
            rows=str(len(figures)),
            residual_low=f"{low:.2f}",
            residual_high=f"{high:.2f}",
            widen=widen,
            sources=folds,
        )

    out = [row(*ranges.ALL, loso)]
    fits: dict[tuple[int, ...], JointFit] = {}
    for dim in ranges.DIMENSIONS:
        lvo = value_held_out(result, dim, catalog=cat, fits=fits).time_residuals()
        kept = {id(r) for r, e in lvo}
        factor = max(1.0, _width([e for _, e in lvo]) / _width([e for r, e in loso if id(r) in kept]))
        out.append(row(dim, "*", lvo, f"{factor:.2f}"))
        by_value: dict[str, list[tuple[DecodeRow, float]]] = {}
        for r, e in loso:
            by_value.setdefault(row_values(r, cat)[dim], []).append((r, e))
        out += [row(dim, v, by_value[v]) for v in sorted(by_value, key=_value_order)]
    return out


def _value_order(value: str) -> tuple:
    return (0, int(value), "") if value.isdigit() else (1, 0, value)
