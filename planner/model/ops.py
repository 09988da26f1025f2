"""Elementwise operations on numbers or numpy arrays: Python's own arithmetic for a single scenario (fast),
numpy's for arrays. The model's formulas use these where plain operators do not suffice."""

from __future__ import annotations

import bisect
import math

import numpy as np

from planner.model.rows import row_values

_SCALARS = (float, int)


def zero_dim(x) -> bool:
    """``np.ndim(x) == 0``, answered without numpy for a Python number (one scenario's common case)."""
    return type(x) in (bool, float, int) or np.ndim(x) == 0


def maximum(a, b):
    if type(a) in _SCALARS and type(b) in _SCALARS:  # both plain numbers: called many times a scenario
        return math.nan if a != a or b != b else (a if a >= b else b)
    return np.maximum(a, b)


def minimum(a, b):
    if type(a) in _SCALARS and type(b) in _SCALARS:  # both plain numbers: called many times a scenario
        return math.nan if a != a or b != b else (a if a <= b else b)
    return np.minimum(a, b)


def where(condition, a, b):
    if type(condition) is bool:
        return a if condition else b
    if isinstance(condition, np.ndarray) and condition.ndim == 0:  # one condition for all: the chosen side as it is
        chosen = a if condition else b
        if np.result_type(chosen) == np.result_type(a, b) and np.shape(chosen) == np.broadcast_shapes(
            np.shape(a), np.shape(b)
        ):
            return chosen
    return np.where(condition, a, b)


def any_positive(x) -> bool:
    """Whether any scenario's value of ``x`` (a number, an array or ``planner.model.rows.Rows``) is above 0: the
    check before a rule that applies to few scenarios, so the common case skips its arithmetic. A ``Rows`` is read
    at its innermost level (``row_values``: a catalog fact's GPU or model rows, not gathered to the combinations or
    pairs): every scenario's value is one of those, so a positive value there is never missed (a row no scenario
    uses can only make the rule run, and the rule computes each scenario's own answer)."""
    if type(x) in _SCALARS:
        return x > 0
    return bool(np.any(np.asarray(row_values(x)) > 0))


def isnan(x):
    return x != x if type(x) in _SCALARS else np.isnan(x)


def mod(a, b):
    return a % b if type(a) in _SCALARS and type(b) in _SCALARS else np.mod(a, b)


def floor(x):
    if type(x) in _SCALARS:
        return float(math.floor(x)) if math.isfinite(x) else float(x)  # inf and NaN are their own floor
    return np.floor(x)


def ceil(x):
    if type(x) in _SCALARS:
        return float(math.ceil(x)) if math.isfinite(x) else float(x)  # inf and NaN are their own ceil
    return np.ceil(x)


def log1p(x):
    """log(1 + x); -inf at x = -1 (as numpy), NaN below."""
    if type(x) in _SCALARS:
        return math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)
    return np.log1p(x)


def log2(x):
    """log2(x); -inf at 0 (as numpy), NaN below."""
    if type(x) in _SCALARS:
        return math.log2(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    return np.log2(x)


def exp(x):
    """e**x; inf where it overflows (as numpy)."""
    if type(x) in _SCALARS:
        try:
            return math.exp(x)
        except OverflowError:
            return math.inf
    return np.exp(x)


def searchsorted_right(grid, x):
    """How many of ``grid``'s values (ascending) are <= x: ``numpy.searchsorted(grid, x, side="right")``, an int
    for a number (NaN counts all)."""
    if type(x) in _SCALARS:
        return bisect.bisect_right(grid, x) if x == x else len(grid)
    return np.searchsorted(grid, x, side="right")


def take(values, index):
    """``values[index]`` of a sequence of numbers by an int (a float back) or an array of ints (an array back)."""
    return float(values[index]) if type(index) is int else np.take(values, index)


def expm1(x):
    return math.expm1(x) if type(x) in _SCALARS and x == x else np.expm1(x)
