"""Fitting the efficiency factors of the time model to measurements (scipy's bounded least squares).

The measurements are ``planner.accuracy.predict.DecodeRow``s: TPOT, whole-run throughput and (for static batches)
the batch's first-token latency. The fit minimises the squared log-ratios predicted / measured over all of
them, so a 10% miss weighs the same on a 10 ms and on a 100 ms row. Efficiencies are fitted in log space
and kept within [0.02, 1] (no engine beats the datasheet); overheads in milliseconds, kept at 0 or above.
A very light pull towards the starting values (``PRIOR_WEIGHT``) keeps factors that the data cannot see
(e.g. the decode FLOP efficiency when every row is memory-bound) where they were, instead of wandering.

``fit_time_factors`` is what ``planner calibrate`` runs; the shipped defaults in ``planner.engines.profiles`` come from
``planner.accuracy.holdout.fit_reference_defaults`` (every source at once, each held out in turn: docs/accuracy.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from planner.accuracy.calibration import CALIBRATED_FIELDS, Calibration
from planner.accuracy.predict import DecodeRow, predict_decode_rows, quantiles
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import EngineProfile, engine_profile
from planner.errors import InvalidInputError

#: Factors fitted by default, and those that are times (fitted in ms, linearly) rather than efficiencies.
DEFAULT_FIELDS = ("bandwidth_efficiency", "decode_flop_efficiency", "prefill_flop_efficiency", "step_overhead_s")
TIME_FIELDS = tuple(f for f in CALIBRATED_FIELDS if f.endswith("_s"))  # seconds: the overheads and latencies
EFFICIENCY_BOUNDS = (0.02, 1.0)
#: Factors fitted as they are, between 0 and 1 (not as logs: 0 is a valid value).
FRACTION_FIELDS = ("roofline_overlap",)
#: Upper bound of a fitted time, ms.
MAX_TIME_MS = 100.0
#: First-token latencies of batches of several prompts with fewer prompt tokens than this are left out: the
#: prompts' first tokens are staggered there (LMDeploy, 64 one-token prompts: FTL 13 ms min, 42 ms mean,
#: 210 ms max), which neither the roofline nor a fixed latency describes. A single prompt's TTFT is kept.
#: (``planner.accuracy.holdout`` keeps single prompts only: 64 x 128-token prompts also stagger, FTL several times
#: the batch's prefill.)
MIN_PREFILL_TOKENS = 512
PRIOR_WEIGHT = 1e-5
#: The sources (``source_group``) whose rows the shipped time factors are fitted to (``planner.accuracy.holdout``: their
#: static and batch-1 rows; vLLM's per-sequence cost on the dennislee22 serving rows; ``tests/test_holdout.py``
#: checks the list against the rows): the other sources' rows are never fitted (``bench/heldout.py``).
FIT_SOURCE_GROUPS = (
    "dennislee22-vllm-benchmarking",
    "lmdeploy-a100-fp16-v0.1.0a1",
    "lmdeploy-w4a16-rtx4090",
    "trtllm-blog-h200-launch",
    "trtllm-perf-v0.6.1",
    "vllm-buildkite-perf-9513",
    "vllm-buildkite-perf-9515",
    "vllm-buildkite-perf-9523",
    "vllm-buildkite-perf-9555",
)


def held_out_rows(rows: Sequence[DecodeRow]) -> list[DecodeRow]:
    """The rows the shipped factors never saw, in order: those whose ``source_group`` is not in ``FIT_SOURCE_GROUPS``
    (the held-out set of ``bench/heldout.py``)."""
    return [r for r in rows if r.source_group not in FIT_SOURCE_GROUPS]


@dataclass(frozen=True)
class FitResult:
    """Fitted factors, the residuals measured / predicted - 1 before and after, and their quantiles."""

    factors: dict[str, float]
    fields: tuple[str, ...]
    residuals_before: np.ndarray
    residuals_after: np.ndarray
    labels: tuple[str, ...]  # "DM028 TPOT" ... one per residual
    rows: int

    @property
    def quantiles(self) -> tuple[float, float]:
        """(10th, 90th) percentile of the residuals after the fit, for ranges (rounded outwards)."""
        return quantiles(self.residuals_after)

    def errors(self, after: bool = True) -> np.ndarray:
        """predicted / measured - 1 per figure: the error ``planner validate`` prints for the same row (the
        residuals are its inverse, measured / predicted - 1, as ranges read them)."""
        r = self.residuals_after if after else self.residuals_before
        return 1.0 / (1.0 + r) - 1.0

    def median_abs_error(self, after: bool = True) -> float:
        e = self.errors(after)
        return float(np.median(np.abs(e))) if len(e) else math.nan

    def worst_abs_error(self, after: bool = True) -> float:
        e = self.errors(after)
        return float(np.max(np.abs(e))) if len(e) else math.nan


def ttft_is_prefill(row: DecodeRow, min_prefill_tokens: float = math.inf) -> bool:
    """Whether a row's TTFT is a prefill's time: a static run of one prompt (or of ``min_prefill_tokens`` or more)."""
    return row.kind == "static" and (row.batch == 1 or row.batch * row.input_len >= min_prefill_tokens)


def _observations(
    rows: Sequence[DecodeRow], min_prefill_tokens: float = MIN_PREFILL_TOKENS
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(which prediction, row index) pairs with a measured value, and the measured values."""
    kinds, idx, meas, labels = [], [], [], []
    for i, r in enumerate(rows):
        ttft = (
            r.ttft_s if ttft_is_prefill(r, min_prefill_tokens) else math.nan
        )  # a server's TTFT holds queueing: not a prefill time
        for kind, value, name in (
            (0, r.tpot_s, "TPOT"),
            (1, r.throughput_tokens_per_s, "throughput"),
            (2, ttft, "TTFT"),
        ):
            if not math.isnan(value) and value > 0:
                kinds.append(kind)
                idx.append(i)
                meas.append(value)
                labels.append(f"{r.record_id} {name}")
    return np.array([kinds, idx], dtype=int), np.array(meas, dtype=float), labels


def residuals(
    rows: Sequence[DecodeRow], engine: EngineProfile, catalog: Catalog, calibration: Calibration | None = None
) -> np.ndarray:
    """measured / predicted - 1 for every measured TPOT, throughput and first-token latency of the rows."""
    (kinds, idx), meas, _ = _observations(rows)
    p = predict_decode_rows(rows, engine=engine, calibration=calibration or Calibration(), catalog=catalog)
    pred = np.stack([p.tpot_s, p.throughput_tokens_per_s, p.ttft_s])[kinds, idx]
    return meas / pred - 1.0


def _to_vector(factors: dict[str, float], fields: Sequence[str]) -> np.ndarray:
    """Fit space: times in ms, fractions (``FRACTION_FIELDS``) as they are, efficiencies as logs."""
    return np.array(
        [
            factors[f] * 1e3 if f in TIME_FIELDS else factors[f] if f in FRACTION_FIELDS else math.log(factors[f])
            for f in fields
        ]
    )


def _from_vector(x: np.ndarray, fields: Sequence[str]) -> dict[str, float]:
    out = {}
    for v, f in zip(_clip(x, fields), fields, strict=True):
        out[f] = float(v) / 1e3 if f in TIME_FIELDS else float(v) if f in FRACTION_FIELDS else math.exp(v)
    return out


def bounds(fields: Sequence[str]) -> tuple[list[float], list[float]]:
    """(lower, upper) of each field in fit space: times 0 to ``MAX_TIME_MS``, fractions 0-1, efficiencies 0.02-1."""
    eff = (math.log(EFFICIENCY_BOUNDS[0]), math.log(EFFICIENCY_BOUNDS[1]))
    pairs = [(0.0, MAX_TIME_MS) if f in TIME_FIELDS else (0.0, 1.0) if f in FRACTION_FIELDS else eff for f in fields]
    return [lo for lo, _ in pairs], [hi for _, hi in pairs]


def _clip(x: np.ndarray, fields: Sequence[str]) -> np.ndarray:
    return np.clip(x, *bounds(fields))


def fit_time_factors(
    rows: Sequence[DecodeRow],
    engine: str | EngineProfile | None = None,
    fields: Sequence[str] = DEFAULT_FIELDS,
    *,
    catalog: Catalog | None = None,
    max_iterations: int = 100,
) -> FitResult:
    """Least-squares fit of ``fields`` of the engine's time factors to the rows (log-ratio residuals).

    Rows without a first-token latency say nothing about ``prefill_flop_efficiency`` except through the
    throughput; fields the rows cannot see stay near their starting values.
    """
    cat = catalog or default_catalog()
    base = engine_profile(engine)
    fields = tuple(fields)
    unknown = [f for f in fields if f not in CALIBRATED_FIELDS]
    if unknown:
        raise InvalidInputError(
            f"cannot fit {', '.join(unknown)}; fields that can be fitted: {', '.join(CALIBRATED_FIELDS)}"
        )
    rows = [r for r in rows if not r.problem]
    if rows:  # rows the planner cannot predict (unknown name, does not fit) say nothing about the factors
        first = predict_decode_rows(rows, engine=base, calibration=Calibration(), catalog=cat)
        rows = [r for i, r in enumerate(rows) if not math.isnan(first.tpot_s[i])]
    (_, _), meas, labels = _observations(rows)
    if len(meas) == 0:
        raise InvalidInputError("no measured TPOT, throughput or first-token latency to fit")
    start = {f: getattr(base, f) if getattr(base, f) is not None else 8e-6 for f in fields}  # None: catalog's
    for f in fields:  # log space needs a positive start
        if f not in TIME_FIELDS and start[f] <= 0:
            start[f] = 0.5
    x0 = _to_vector(start, fields)

    def r(x: np.ndarray) -> np.ndarray:
        eng = base.with_(**_from_vector(x, fields))
        res = np.log1p(residuals(rows, eng, cat))  # log(measured / predicted)
        res = np.where(np.isfinite(res), res, 10.0)
        return np.concatenate([res, math.sqrt(PRIOR_WEIGHT) * (x - x0) / np.where(_is_time(fields), 1.0, 1.0)])

    x = least_squares(r, x0, fields, max_iterations)
    factors = _from_vector(x, fields)
    before = residuals(rows, base, cat)
    after = residuals(rows, base.with_(**factors), cat)
    return FitResult(factors, fields, before, after, tuple(labels), len(rows))


#: Folds of ``cross_validated_residuals``: each row is predicted by a fit on the other four fifths.
CROSS_VALIDATION_FOLDS = 5


def cross_validated_residuals(
    rows: Sequence[DecodeRow],
    engine: str | EngineProfile | None = None,
    fields: Sequence[str] = DEFAULT_FIELDS,
    *,
    catalog: Catalog | None = None,
    folds: int = CROSS_VALIDATION_FOLDS,
) -> np.ndarray:
    """Residuals measured / predicted - 1 of every row predicted by factors fitted on the other rows only: the rows
    dealt into ``folds`` folds in turn (row i to fold i mod folds), each fold predicted by a fit of the rest. A range
    from these is what the factors do on measurements they were not fitted to; the in-sample residuals
    (``FitResult.residuals_after``) are narrower by construction."""
    cat = catalog or default_catalog()
    base = engine_profile(engine)
    rows = list(rows)
    folds = max(2, min(folds, len(rows)))
    out = []
    for k in range(folds):
        test = [r for i, r in enumerate(rows) if i % folds == k]
        train = [r for i, r in enumerate(rows) if i % folds != k]
        try:
            factors = fit_time_factors(train, base, fields, catalog=cat).factors
        except InvalidInputError:  # the rest holds no figure to fit: the fold says nothing
            continue
        out.append(residuals(test, base.with_(**factors), cat))
    return np.concatenate(out) if out else np.array([], dtype=float)


def _is_time(fields: Sequence[str]) -> np.ndarray:
    return np.array([f in TIME_FIELDS for f in fields])


def least_squares(
    r: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, fields: Sequence[str], max_iterations: int = 100
) -> np.ndarray:
    """Bounded least squares of the residual function ``r`` (scipy's trust-region reflective ``least_squares``), kept
    within the fields' bounds; the Jacobian by one-sided differences of 1e-4 in log efficiency (downwards: the
    engines' multipliers start at 1, the upper bound) and 1e-3 ms in a time, steps the model's rounding cannot hide.

    ``r`` is evaluated once per point: the Jacobian reuses the residuals of the point it is taken at. (The
    hand-written damped Gauss-Newton this replaces clipped its steps at the bounds: with factors resting on a bound
    it crept, 585 evaluations for a 2-row file; scipy's reflective steps stop in ~55.)"""
    from scipy.optimize import least_squares as scipy_least_squares

    last: dict[bytes, np.ndarray] = {}

    def at(x: np.ndarray) -> np.ndarray:
        """``r(x)``, remembered for the last point asked."""
        key = x.tobytes()
        if key not in last:
            last.clear()
            last[key] = r(x)
        return last[key]

    steps = np.array([-1e-4 if f not in TIME_FIELDS else 1e-3 for f in fields])

    def jacobian(x: np.ndarray) -> np.ndarray:
        f0 = at(x)
        jac = np.empty((len(f0), len(x)))
        for j, h in enumerate(steps):
            xp = x.copy()
            xp[j] += h
            jac[:, j] = (at(xp) - f0) / h
        return jac

    lower, upper = bounds(fields)
    fit = scipy_least_squares(
        at,
        _clip(x0, fields),
        jac=jacobian,
        bounds=(lower, upper),
        method="trf",
        xtol=1e-8,
        ftol=1e-10,
        max_nfev=max_iterations,
    )
    return _clip(fit.x, fields)
