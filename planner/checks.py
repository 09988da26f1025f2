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

#: The values ``errors=`` takes.
ERRORS_ACCEPTED = ("raise", "coerce")


def check_errors(errors: Any) -> Errors:
    """``errors`` when it is "raise" or "coerce"; any other value (a typo, None, pandas' "ignore") is an
    InvalidInputError naming the two, so that no misspelling quietly turns failures into NaN."""
    if type(errors) is str and errors in ERRORS_ACCEPTED:
        return errors  # type: ignore[return-value]
    raise InvalidInputError(
        f'errors must be "raise" (the default: the first bad scenario raises) or "coerce" (NaN for each bad '
        f"scenario); got {errors!r}"
    )


_PLAIN = (str, float, int, type(None))


def _is_series(a: Any) -> bool:
    return type(a).__name__ == "Series" and hasattr(a, "index")


def _pandas_index(*args: Any):
    """The index of the pandas Series among ``args`` (the result's index), None where there is none. Series are paired
    by position, so Series whose indexes differ are refused (``check_series_aligned``; here named by position)."""
    return _shared_index({f"argument {i}": a for i, a in enumerate(args, 1)})


def check_series_aligned(**named: Any) -> None:
    """Refuse pandas Series arguments whose indexes differ: planner pairs the elements of its arguments by position
    (numpy broadcasting), not by index label as ``a + b`` does in pandas, so Series built from two differently sorted
    or filtered frames would pair the wrong rows. Series with equal indexes (the columns of one DataFrame) pass."""
    _shared_index(named)


def _shared_index(named: dict[str, Any]):
    """The index the pandas Series among ``named`` share (None where none is a Series); ``series_index_error`` naming
    the first two whose indexes differ."""
    first_name, first = None, None
    for name, a in named.items():
        if type(a) in _PLAIN or not _is_series(a):  # a name or a number (one scenario's common case): no index
            continue
        if first is None:
            first_name, first = name, a.index
        elif not (a.index is first or a.index.equals(first)):
            raise series_index_error({first_name: first, name: a.index})
    return first


def series_index_error(indexes: dict[str, Any]) -> InvalidInputError:
    """The error for Series arguments whose indexes differ, naming them."""
    (a, ia), (b, ib) = list(indexes.items())[:2]

    def head(index: Any) -> str:
        shown = ", ".join(repr(x) for x in list(index[:3]))
        return f"[{shown}{', ...' if len(index) > 3 else ''}]"

    return InvalidInputError(
        f"pandas Series {a} (index {head(ia)}) and {b} (index {head(ib)}) have different indexes; planner pairs "
        f"Series by position, not by label: align them first ({b}.reindex({a}.index), or columns of one DataFrame), "
        "or pass .to_numpy() to pair by position"
    )


def shape_error(named: dict[str, Any]) -> InvalidInputError:
    """The error for arguments whose shapes do not broadcast, naming two that clash and their shapes (computed only
    here, after numpy refused: the arguments' shapes cost nothing on the way that works)."""
    shapes = {}
    for name, value in named.items():
        if value is None or type(value) in _PLAIN:
            continue
        try:
            shape = np.shape(value)
        except (TypeError, ValueError):  # a ragged list: numpy has no shape for it
            shape = None
        if shape:
            shapes[name] = shape
    items = list(shapes.items())
    for i, (a, sa) in enumerate(items):
        for b, sb in items[i + 1 :]:
            try:
                np.broadcast_shapes(sa, sb)
            except ValueError:
                return InvalidInputError(
                    f"{a} (shape {sa}) and {b} (shape {sb}) do not broadcast: give arrays of one length, or shapes "
                    "numpy broadcasts (a column of shape (n, 1) against a row of shape (k,) makes an n x k grid)"
                )
    listed = ", ".join(f"{k} {v}" for k, v in shapes.items())
    return InvalidInputError(f"the arguments' shapes do not broadcast ({listed or 'ragged lists'})")


def is_shape_mismatch(exc: BaseException) -> bool:
    """Whether ``exc`` is numpy's refusal to broadcast (not a planner error)."""
    from planner.errors import PlannerError

    return isinstance(exc, ValueError) and not isinstance(exc, PlannerError) and "broadcast" in str(exc)


def one_scenario(function: str, sweep_hint: str, **named: Any) -> None:
    """Refuse an array, list or Series given to a function that evaluates one scenario, naming the argument (not
    "unknown GPU array([...])" from the catalog)."""
    for name, value in named.items():
        if value is None or type(value) in _PLAIN:
            continue
        if isinstance(value, (list, tuple)) or _is_series(value) or (isinstance(value, np.ndarray) and value.ndim):
            raise InvalidInputError(
                f"{function} takes one scenario: {name} must be one value, got {type(value).__name__} of "
                f"{len(value):,}; {sweep_hint}"
            )


def one_value(value: Any, what: str, hint: str) -> Any:
    """``value`` as one value (a 0-d array's item); an array, list or Series is an InvalidInputError saying that
    ``what`` takes one value per call and what to do instead (``hint``)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    if isinstance(value, (list, tuple, np.ndarray)) or _is_series(value):
        raise InvalidInputError(f"{what} takes one value per call, got {type(value).__name__} {shown(value)}; {hint}")
    return value


def shown(value: Any) -> str:
    from planner.errors import shown_name

    return shown_name(value.tolist() if hasattr(value, "tolist") else list(value))


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
    """ "<accepted>; got <value>": a whole number with thousands separators, as every count planner prints
    ("got 104,857,600" for a context of 100M), any other as Python writes it ("got 1e+30", "got 0.5")."""
    value = float(value)
    whole = math.isfinite(value) and value == int(value) and abs(value) < 1e15
    return OutOfRangeError(f"{accepted}; got {int(value):,}" if whole else f"{accepted}; got {value!r}")


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


def _price(value: Any, what: str = "price_per_gpu_hour", errors: Errors = "raise") -> np.ndarray:
    """A rent per GPU-hour, US$, above 0 and at most ``MAX_RENT_USD_PER_GPU_HOUR`` (``planner.units.RENT_ACCEPTED``,
    the bound every surface states); anything else raises, or with errors="coerce" becomes NaN (a missing price in a
    joined price column: NaN cost on that row, as an unknown GPU gives)."""
    accepted = f"{what} must be a number {RENT_ACCEPTED}"
    arr = _numbers(value, accepted, errors)
    with np.errstate(invalid="ignore"):
        bad = ~((arr > 0) & (arr <= MAX_RENT_USD_PER_GPU_HOUR))  # NaN is bad too
    if errors == "coerce":
        return np.where(bad, np.nan, arr) if np.any(bad) else arr
    return _checked(arr, bad, accepted, "raise", 0.0)[0]


def _nonnegative(value: Any, what: str) -> np.ndarray:
    accepted = f"{what} must be a number of 0 or more"
    arr = _numbers(value, accepted, "raise")
    return _checked(arr, ~np.isfinite(arr) | (arr < 0), accepted, "raise", 0.0)[0]
