"""Input checks for the public functions: numbers of the right kind and range, with errors that say what is
accepted. With ``errors="coerce"`` the scenarios that fail a check are masked (and, inside
``planner.model.failures.collect()``, noted with their reason) instead of raising."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from planner.errors import InvalidInputError, OutOfRangeError
from planner.model import failures
from planner.units import MAX_RENT_USD_PER_GPU_HOUR, RENT_ACCEPTED, count_accepted, parse_token_count

Errors = Literal["raise", "coerce"]


_PLAIN = (str, float, int, type(None))


def _pandas_index(*args: Any):
    for a in args:
        if type(a) in _PLAIN:  # a name or a number (one scenario's common case): no index
            continue
        if type(a).__name__ == "Series" and hasattr(a, "index"):
            return a.index
    return None


def _numbers(value: Any, accepted: str, errors: Errors) -> np.ndarray:
    """Floats from a number or an array of numbers; a value of another kind is an InvalidInputError.

    With errors="coerce", elements that are not numbers become NaN (they then fail the range check).
    """
    if isinstance(value, (bool, np.bool_, str)) or value is None:
        raise InvalidInputError(f"{accepted}; got {value!r}")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        if errors == "raise" or np.ndim(np.asarray(value, dtype=object)) == 0:
            raise InvalidInputError(f"{accepted}; got {value!r}") from None

    def one(x: Any) -> float:
        return float(x) if isinstance(x, (int, float, np.number)) and not isinstance(x, (bool, np.bool_)) else np.nan

    obj = np.asarray(value, dtype=object)
    return np.vectorize(one, otypes=[float])(obj)


def _checked(arr: np.ndarray, bad: np.ndarray, accepted: str, errors: Errors, fill: float) -> tuple[np.ndarray, Any]:
    if not np.any(bad):
        return arr, False
    if errors == "raise":
        raise _out_of_range(accepted, arr[bad].flat[0] if arr.ndim else arr)
    failures.note_each(bad, (arr,), lambda value: _out_of_range(accepted, value))
    return np.where(bad, fill, arr), bad


def _out_of_range(accepted: str, value: Any) -> OutOfRangeError:
    value = float(value)
    shown = int(value) if math.isfinite(value) and value == int(value) and abs(value) < 1e15 else value
    return OutOfRangeError(f"{accepted}; got {shown!r}")


def token_counts(value: Any, what: str, errors: Errors = "raise", whole: bool = True) -> Any:
    """``value`` with each token count written as text ("8k" = 8,192, "8,192", "1e4") read by
    ``planner.units.parse_token_count``, the parser ``planner plan --context`` and the Excel cells use; numbers and
    arrays of numbers come back as they are. Text that is not a count raises InvalidInputError saying what is
    accepted; with errors="coerce" it becomes NaN, noted with that reason (it then fails the caller's range check).
    ``whole=False``: a mean length, whose fraction is kept ("207.5", "1.3k"), as ``plan --prompt-tokens`` reads it."""
    if isinstance(value, str):
        try:
            return parse_token_count(value, whole=whole)
        except ValueError as exc:
            if errors == "raise":
                raise InvalidInputError(f"{what}: {exc}") from None
            failures.note(True, InvalidInputError(f"{what}: {exc}"))
            return math.nan
    dtype = getattr(value, "dtype", None)
    if isinstance(value, (int, float, np.number)) or (isinstance(dtype, np.dtype) and dtype.kind in "iuf"):
        return value  # numbers: nothing to read
    if not isinstance(value, (list, tuple)) and dtype is None:
        return value
    if np.asarray(value).dtype.kind in "iufb":  # a list of numbers (text makes it "U" or object): nothing to read
        return value
    obj = np.asarray(value, dtype=object)
    texts = np.frompyfunc(lambda x: isinstance(x, str), 1, 1)(obj).astype(bool)
    if not np.any(texts):
        return value
    out, reasons = obj.copy(), np.full(obj.shape, None, dtype=object)
    for idx in zip(*np.nonzero(texts), strict=True):
        try:
            out[idx] = parse_token_count(obj[idx], whole=whole)
        except ValueError as exc:
            if errors == "raise":
                raise InvalidInputError(f"{what}: {exc}") from None
            out[idx], reasons[idx] = math.nan, InvalidInputError(f"{what}: {exc}")
    if errors == "coerce" and any(r is not None for r in reasons.flat):
        failures.note(np.frompyfunc(lambda r: r is not None, 1, 1)(reasons).astype(bool), reasons)
    return out


def _count_or_mask(
    value: Any,
    what: str,
    maximum: int,
    unit: str = "",
    errors: Errors = "raise",
    integers: bool = False,
    tokens: bool = False,
) -> tuple[np.ndarray, Any]:
    """Whole numbers from 1 to ``maximum`` (8192.0 is 8192) as floats, and the mask of elements that are not
    (coerce). ``integers``: an array of integers that is all valid comes back as it is (no float copy; the caller
    casts it where it needs floats). ``tokens``: text is read as a token count (``token_counts``: "8k", "8,192")."""
    if type(value) in (int, float) and 1 <= value <= maximum and value == int(value):  # one valid number: fast
        return float(value), False
    if tokens:
        value = token_counts(value, what, errors)
        if type(value) is int and 1 <= value <= maximum:
            return float(value), False
    accepted = f"{what} must be {count_accepted(unit.removeprefix(' of '), maximum)}"
    dtype = getattr(value, "dtype", None)
    if not isinstance(value, np.ndarray) and isinstance(dtype, np.dtype) and dtype.kind in ("i", "u"):
        value = np.asarray(value)  # a pandas Series of numpy integers: its array (no copy)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":  # whole and finite already
        if value.size and value.min() >= 1 and value.max() <= maximum:  # all valid: two reductions, no mask
            return (value if integers else value.astype(float)), False
        return _checked(value.astype(float), (value < 1) | (value > maximum), accepted, errors, 1.0)
    arr = _numbers(value, accepted, errors)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(arr) | (arr < 1) | (arr > maximum) | (arr != np.floor(arr))
    return _checked(arr, bad, accepted, errors, 1.0)


def mean_tokens_or_mask(value: Any, what: str, maximum: int, errors: Errors = "raise") -> tuple[np.ndarray, Any]:
    """Mean lengths in tokens from 1 to ``maximum`` as floats, a fraction kept (207.5, a dataset's or a benchmark's
    printed mean), and the mask of elements that are not (coerce). Text is read by ``planner.units.parse_token_count``
    with ``whole=False`` ("207.5", "1.3k"), the parser ``planner plan --prompt-tokens`` and a scenario's
    ``*_tokens_mean`` use; where one request's length is needed, the mean is rounded by
    ``planner.serving.load.fixed_length_tokens``."""
    value = token_counts(value, what, errors, whole=False)
    accepted = f"{what} must be a number of tokens from 1 to {maximum:,} (a mean: a fraction such as 207.5 is kept)"
    arr = _numbers(value, accepted, errors)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(arr) | (arr < 1) | (arr > maximum)
    return _checked(arr, bad, accepted, errors, 1.0)


def _count(value: Any, what: str, maximum: int, unit: str = "", tokens: bool = False) -> np.ndarray:
    """Whole numbers from 1 to ``maximum``; anything else raises (InvalidInputError / OutOfRangeError). ``tokens``:
    text is read as a token count ("8k": ``token_counts``)."""
    return _count_or_mask(value, what, maximum, unit, tokens=tokens)[0]


def _fraction(value: Any, what: str) -> np.ndarray:
    accepted = f"{what} must be a number above 0 and at most 1"
    arr = _numbers(value, accepted, "raise")
    return _checked(arr, ~np.isfinite(arr) | (arr <= 0) | (arr > 1), accepted, "raise", 1.0)[0]


def _price(value: Any, what: str = "price_per_gpu_hour") -> np.ndarray:
    """A rent per GPU-hour, US$, above 0 and at most ``MAX_RENT_USD_PER_GPU_HOUR`` (``planner.units.RENT_ACCEPTED``,
    the bound every surface states); anything else raises."""
    accepted = f"{what} must be a number {RENT_ACCEPTED}"
    arr = _numbers(value, accepted, "raise")
    with np.errstate(invalid="ignore"):
        bad = ~((arr > 0) & (arr <= MAX_RENT_USD_PER_GPU_HOUR))  # NaN is bad too
    return _checked(arr, bad, accepted, "raise", 0.0)[0]


def _nonnegative(value: Any, what: str) -> np.ndarray:
    accepted = f"{what} must be a number of 0 or more"
    arr = _numbers(value, accepted, "raise")
    return _checked(arr, ~np.isfinite(arr) | (arr < 0), accepted, "raise", 0.0)[0]
