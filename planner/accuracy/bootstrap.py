"""How much a held-out median or worst |error| moves by chance: a bootstrap over whole sources.

The held-out protocol holds out whole sources (``planner.accuracy.holdout.fold_of``), and a source's rows share its
host, client and reading, so the unit resampled is the source, not the row (a cluster bootstrap): each resample draws
as many sources as there are, uniformly with replacement, and takes every row of each source drawn as often as it was
drawn. A statistic's interval is the 5th to 95th percentile of its value over the resamples (the percentile
interval, Efron & Tibshirani 1993, ch. 13); with few sources (six under load) it is coarse and tends to be too narrow.

A comparison of two prediction sets on the same rows (main and a switch) is paired: both are measured on the same
resample of sources, so ``paired_difference`` gives the distribution of (b's statistic - a's), and the share of
resamples in which b is worse (its median |error| higher) is what a ship rule "no median gets worse" can read as a
probability instead of a two-decimal comparison.

Pure: numbers in, numbers out; numpy's seeded generator (``numpy.random.default_rng``), so figures repeat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from planner.errors import PlannerError

#: Resamples drawn when a caller does not say (the scripts' ``--bootstrap`` default).
DEFAULT_RESAMPLES = 1000
#: The generator's seed when a caller does not say: one fixed draw, so every printed interval repeats.
DEFAULT_SEED = 0
#: Central share of the resampled values an interval covers (5th to 95th percentile).
INTERVAL_LEVEL = 0.90

Statistic = Literal["median", "worst"]


@dataclass(frozen=True)
class Interval:
    """A statistic on the rows as published (``observed``) and the ``INTERVAL_LEVEL`` percentile interval of its
    value over the source resamples (``low`` .. ``high``), all as fractions (0.17 = 17% |error|)."""

    observed: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedDifference:
    """b's statistic minus a's on the same resamples (fractions: +0.01 = b one point worse).

    ``observed``: the difference on the rows as published; ``low`` .. ``high``: its percentile interval;
    ``p_worse`` / ``p_better``: the share of resamples where b's statistic is above / below a's (ties: neither)."""

    a: float
    b: float
    observed: float
    low: float
    high: float
    p_worse: float
    p_better: float


def source_counts(n_sources: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples, n_sources) integers: how often each source is drawn when ``n_sources`` are drawn uniformly
    with replacement (a multinomial of n_sources draws over n_sources equal cells), one row per resample."""
    if n_sources < 1:
        raise PlannerError("a bootstrap needs at least one source")
    if resamples < 1:
        raise PlannerError(f"a bootstrap needs at least one resample, not {resamples}")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_sources, np.full(n_sources, 1.0 / n_sources), size=resamples)


def weighted_statistic(values: Sequence[float], weights: np.ndarray, statistic: Statistic = "median") -> np.ndarray:
    """Per row of ``weights`` (resamples x values, integer counts), the median or the largest of the multiset in which
    ``values[j]`` appears ``weights[i, j]`` times; NaN values count as absent. The median follows
    ``statistics.median``: the middle value, or the mean of the two middle ones for an even count. NaN where a
    resample holds no value."""
    v = np.asarray(values, dtype=float)
    w = np.where(np.isnan(v), 0, np.asarray(weights, dtype=np.int64))
    if w.ndim != 2 or w.shape[1] != v.size:
        raise PlannerError(f"weights must be (resamples, {v.size}), not {w.shape}")
    total = w.sum(axis=1)
    out = np.full(w.shape[0], np.nan)
    filled = total > 0
    if statistic == "worst":
        out[filled] = np.where(w > 0, np.nan_to_num(v, nan=-np.inf), -np.inf).max(axis=1)[filled]
        return out
    if statistic != "median":
        raise PlannerError(f"unknown statistic {statistic!r}; did you mean median or worst?")
    order = np.argsort(np.nan_to_num(v, nan=np.inf), kind="stable")
    sv, cum = v[order], np.cumsum(w[:, order], axis=1)
    lo_rank, hi_rank = (total - 1) // 2, total // 2  # 0-based ranks of the middle value(s)
    lo = (cum > lo_rank[:, None]).argmax(axis=1)
    hi = (cum > hi_rank[:, None]).argmax(axis=1)
    out[filled] = ((sv[lo] + sv[hi]) / 2.0)[filled]
    return out


def _row_weights(sources: Sequence[str], counts: np.ndarray) -> np.ndarray:
    """Each row's count in each resample: its source's (sources sorted by name, as ``counts``' columns)."""
    names = sorted(set(sources))
    index = {s: i for i, s in enumerate(names)}
    return counts[:, [index[s] for s in sources]]


def _resampled_weights(sources: Sequence[str], resamples: int, seed: int) -> np.ndarray:
    """(resamples, rows) counts: each row's weight in each resample of whole sources (``source_counts``)."""
    return _row_weights(sources, source_counts(len(set(sources)), resamples, seed))


def _observed(values: np.ndarray, statistic: Statistic) -> float:
    """The statistic of ``values`` as published (every row once)."""
    return float(weighted_statistic(values, np.ones((1, values.size), dtype=np.int64), statistic)[0])


def _interval(samples: np.ndarray, observed: float, level: float) -> Interval:
    tail = (1.0 - level) / 2.0
    low, high = np.nanquantile(samples, [tail, 1.0 - tail])
    return Interval(float(observed), float(low), float(high))


def _check(errors: Sequence[float], sources: Sequence[str]) -> None:
    if len(errors) != len(sources):
        raise PlannerError(f"{len(errors)} errors but {len(sources)} sources: give one source per error")
    if not sources:
        raise PlannerError("a bootstrap needs at least one error")


def source_interval(
    errors: Sequence[float],
    sources: Sequence[str],
    statistic: Statistic = "median",
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = INTERVAL_LEVEL,
) -> Interval:
    """The median (or worst) |error| of ``errors`` (signed or not; NaN: not predicted, left out) and its percentile
    interval over ``resamples`` resamples of whole ``sources`` (one label per error)."""
    _check(errors, sources)
    e = np.abs(np.asarray(errors, dtype=float))
    samples = weighted_statistic(e, _resampled_weights(sources, resamples, seed), statistic)
    return _interval(samples, _observed(e, statistic), level)


def paired_difference(
    errors_a: Sequence[float],
    errors_b: Sequence[float],
    sources: Sequence[str],
    statistic: Statistic = "median",
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = INTERVAL_LEVEL,
) -> PairedDifference:
    """b's median (or worst) |error| minus a's, on the rows as published and on each resample of whole sources, the
    same resample for both (paired). ``errors_a[i]`` and ``errors_b[i]`` are one row's errors under a and b, from
    source ``sources[i]``; a NaN (not predicted) leaves that row out of that side only, as each side's own median
    would; rows neither side predicts are left out before resampling (their sources are not drawn). Identical
    errors give a difference of exactly 0 in every resample."""
    _check(errors_a, sources)
    _check(errors_b, sources)
    a, b = np.abs(np.asarray(errors_a, dtype=float)), np.abs(np.asarray(errors_b, dtype=float))
    either = ~(np.isnan(a) & np.isnan(b))  # a source whose rows neither side predicts is not a source of this figure
    a, b, sources = a[either], b[either], [s for s, keep in zip(sources, either, strict=True) if keep]
    if not sources:
        raise PlannerError("neither side predicts any row: no difference to bootstrap")
    obs_a, obs_b = _observed(a, statistic), _observed(b, statistic)
    weights = _resampled_weights(sources, resamples, seed)
    diff = weighted_statistic(b, weights, statistic) - weighted_statistic(a, weights, statistic)
    interval = _interval(diff, obs_b - obs_a, level)
    known = diff[~np.isnan(diff)]
    n = max(known.size, 1)
    return PairedDifference(
        a=float(obs_a),
        b=float(obs_b),
        observed=interval.observed,
        low=interval.low,
        high=interval.high,
        p_worse=float((known > 0).sum() / n),
        p_better=float((known < 0).sum() / n),
    )
