"""Per-row values gathered lazily: a sweep's formulas run once per distinct combination where they can.

A sweep of 200,000 scenarios over 31 GPUs and 66 models holds a few hundred distinct (GPU, model) combinations.
``planner.catalog.resolve`` gives the model its facts as ``Rows``: one value per combination (``values``) and each
scenario's combination (``codes``). A GPU's or a model's own fact is a ``Rows`` of ``Rows``: its values are the
catalog rows (31 GPUs, 66 models) with each combination's row as codes, so a term of the model's facts alone (its
tensor-parallel splits, its weight bytes) runs once per model and is gathered to the combinations when it meets
a term that depends on both. Arithmetic between ``Rows`` of the same codes and plain numbers stays per
combination (weights per GPU, KV bytes per token, usable memory, fixed step times); the first operation that
meets a per-scenario array (the context, a batch) gathers the row values once (``numpy.take``) and goes on per
scenario. Each formula is written once (``planner.model``), and a sweep pays per scenario only for the terms
that depend on the scenario.

The values are those of computing every scenario: the same floating-point operations on the same numbers,
only fewer of them. Anything else numpy is asked of a ``Rows`` (``numpy.asarray``, reductions, indexing) sees
the gathered array.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin


class Rows(NDArrayOperatorsMixin):
    """``values[codes]``, computed on ``values`` while every operand is per row or a plain number."""

    __slots__ = ("values", "codes", "keep", "_shared")
    __array_priority__ = 20.0

    def __init__(self, values: np.ndarray, codes: np.ndarray, keep: bool = False) -> None:
        self.values = values
        self.codes = codes
        self.keep = keep  # keep the gathered operand (``shared``): a catalog fact read by many terms and calls
        self._shared: np.ndarray | None = None

    @property
    def shape(self) -> tuple:
        return self.codes.shape

    @property
    def size(self) -> int:
        return self.codes.size

    @property
    def ndim(self) -> int:
        return self.codes.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.values.dtype

    def gather(self) -> np.ndarray:
        """The value of every scenario: a new array on each call (an operation's gathered operand becomes its
        result's buffer, so keeping it would let a later operation overwrite it)."""
        return np.take(self.values, self.codes)

    def shared(self) -> np.ndarray:
        """The value of every row as one read-only array, gathered on the first call and kept: an operand that
        numpy reads, never writes (``_plain``). A catalog fact (a GPU's or a model's, ``Rows(table, rows)``) meets
        the other side's facts in many terms of a formula and in each of a sweep's calls (the facts of a sweep's
        pairs are kept, ``planner.catalog.resolve._facts``): it is gathered once, not once per term. Read-only, so
        no operation can take it as its output buffer (``__array_ufunc__``) or change it for the next reader."""
        out = self._shared
        if out is None:
            out = self.gather()
            out.flags.writeable = False
            self._shared = out
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.gather()
        return out if dtype is None else out.astype(dtype, copy=False)

    def _per_row(self, operands: tuple) -> list | None:
        """The operands' per-row values when each is a Rows of these codes or a plain number, else None."""
        out = []
        for x in operands:
            if isinstance(x, Rows):
                if x.codes is not self.codes:
                    return None
                out.append(x.values)
            elif type(x) in (float, int, bool) or (isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0):
                out.append(x)
            else:
                return None
        return out

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain_call = method == "__call__" and not kwargs
        per_row = self._per_row(inputs) if plain_call else None
        if per_row is not None:
            result = ufunc(*per_row)
            return tuple(Rows(r, self.codes) for r in result) if isinstance(result, tuple) else Rows(result, self.codes)
        args = _plain(inputs)
        if plain_call and ufunc in _FLOAT_ARITHMETIC:
            # The gathered array is a temporary of this call: the result can take its place (one array less).
            for x, a in zip(inputs, args, strict=True):
                if (
                    isinstance(x, Rows)
                    and a.flags.writeable
                    and a.dtype == np.float64
                    and _float_operands(args, a.shape)
                ):
                    return ufunc(*args, out=a)
        return getattr(ufunc, method)(*args, **_plain(kwargs, read=False))

    def __array_function__(self, func: Any, types: Any, args: tuple, kwargs: dict) -> Any:
        if func is np.where and not kwargs and len(args) == 3:
            per_row = self._per_row(args)
            if per_row is not None:
                return Rows(np.where(*per_row), self.codes)
        return func(*_plain(args, read=func in _READERS), **_plain(kwargs, read=False))

    def __bool__(self) -> bool:
        return bool(self.gather())

    def __float__(self) -> float:
        return float(self.gather())

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, key: Any) -> Any:
        return self.gather()[key]

    def __iter__(self):
        return iter(self.gather())

    def __repr__(self) -> str:
        return f"Rows({self.values!r} over {self.codes.shape})"

    def astype(self, dtype: Any, copy: bool = True) -> np.ndarray:
        return self.gather().astype(dtype, copy=copy)

    def tolist(self) -> Any:
        return self.gather().tolist()


def _operator(op: Any, mixin: Any, reflected: bool = False) -> Any:
    """A binary operator of ``Rows``: with a Rows of the same codes or a Python number, ``op`` on the per-row values
    straight away (the same numpy operation ``__array_ufunc__`` would run, without numpy's dispatch to it: a sweep's
    formulas apply about a thousand operators to per-row values); anything else as ``NDArrayOperatorsMixin``'s."""

    def method(self: Rows, other: Any) -> Any:
        t = type(other)
        if t is Rows:
            if other.codes is self.codes:
                v = other.values
                return Rows(op(v, self.values) if reflected else op(self.values, v), self.codes)
        elif t is float or t is int or t is bool:
            return Rows(op(other, self.values) if reflected else op(self.values, other), self.codes)
        return mixin(self, other)

    method.__name__ = mixin.__name__
    return method


#: Rows' binary operators with a fast path (``_operator``): the arithmetic ones (with a reflected form), then the
#: comparisons; each is the ``operator`` module's function of that name (``and_``, ``or_`` for and, or).
_ARITHMETIC = ("add", "sub", "mul", "truediv", "pow", "and", "or")
_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")
for _name in _ARITHMETIC + _COMPARISONS:
    _op = getattr(operator, f"{_name}_" if _name in ("and", "or") else _name)
    setattr(Rows, f"__{_name}__", _operator(_op, getattr(NDArrayOperatorsMixin, f"__{_name}__")))
    if _name in _ARITHMETIC:
        setattr(Rows, f"__r{_name}__", _operator(_op, getattr(NDArrayOperatorsMixin, f"__r{_name}__"), True))

#: numpy functions that only read their arguments and return a new array: they may be given a kept read-only
#: gathered operand (``Rows.shared``); any other function gets new arrays (it may return a view or write into one).
_READERS = frozenset((np.where, np.take, np.any, np.all))

#: Ufuncs whose result on float64 operands is float64, so a float64 operand can hold it.
_FLOAT_ARITHMETIC = frozenset((np.add, np.subtract, np.multiply, np.true_divide, np.minimum, np.maximum, np.power))


def _float_operands(args: tuple, shape: tuple) -> bool:
    """Whether every operand is a float64 array broadcasting into ``shape`` or a Python float or int."""
    for a in args:
        if isinstance(a, np.ndarray):
            if a.dtype != np.float64 or (a.shape != shape and np.broadcast_shapes(a.shape, shape) != shape):
                return False
        elif type(a) not in (float, int):
            return False
    return True


def _plain(x: Any, read: bool = True) -> Any:
    """``x`` with every Rows inside (lists, tuples and dicts too) replaced by its gathered array; ``read``: operands
    that are only read, so a Rows that keeps its gathered array (``Rows.shared``, read-only) gives that one; else
    (an ufunc's ``out=``) a new array each."""
    if isinstance(x, Rows):
        return x.shared() if read and x.keep else x.gather()
    if isinstance(x, tuple):
        return tuple(_plain(v, read) for v in x)
    if isinstance(x, list):
        return [_plain(v, read) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v, read) for k, v in x.items()}
    return x


def per_row(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` of an elementwise function that reads its arguments as arrays (``numpy.asarray``, which would
    gather a ``Rows`` per scenario): when every argument is a Rows of the same codes or a plain number, ``fn`` runs
    on the per-row values (level by level, as an operator does) and the result is a Rows of those codes; else on
    the arguments gathered. The same operations on the same numbers, once per row."""
    first = next((a for a in args if isinstance(a, Rows)), None)
    values = first._per_row(args) if first is not None else None
    if values is None:  # no Rows, or Rows of other codes beside arrays: gathered (``fn`` then sees no Rows)
        return fn(*_plain(args))
    return Rows(per_row(fn, *values), first.codes)


def row_values(x: Any) -> Any:
    """The values ``x`` holds per row, at its innermost level (a ``Rows`` of ``Rows``: the catalog's rows), else
    ``x`` itself: enough to ask whether a fact is one value everywhere without gathering it."""
    while isinstance(x, Rows):
        x = x.values
    return x


def gathered(x: Any) -> Any:
    """A plain number or numpy array: Rows gathered, anything else as it is."""
    return x.gather() if isinstance(x, Rows) else x


def whole_number_codes(x: np.ndarray, most: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(code per element, the distinct values in increasing order) of an array of whole numbers from 0 to 2**24 (a
    context, a batch), found by counting (``numpy.bincount``), not sorting; None when it holds more than ``most``
    distinct values or numbers too large to count cheaply beside its size."""
    top = int(x.max()) if x.size else 0
    if top > max(4 * x.size, 1 << 16):
        return None
    whole = x.astype(np.intp, copy=False)  # read, not written
    present = np.flatnonzero(np.bincount(whole.ravel(), minlength=top + 1))
    if len(present) > most:
        return None
    code_of = np.zeros(top + 1, dtype=np.intp)
    code_of[present] = np.arange(len(present))
    return np.take(code_of, whole), present.astype(x.dtype)


def regroup(codes: np.ndarray, rows: int, value_codes: np.ndarray, values: int) -> tuple[np.ndarray, ...] | None:
    """Rows of (row, value) pairs: each scenario's pair (the row ``codes`` of a table of ``rows`` rows, and
    ``value_codes`` of ``values`` distinct numbers, broadcast together), numbered over the pairs that occur.

    (the pair of each scenario, the row of each pair, the value of each pair); None when the pairs are not much
    fewer than the scenarios (a sweep whose numbers hardly repeat: per-row work would save nothing)."""
    span = rows * values
    shape = np.broadcast_shapes(codes.shape, value_codes.shape)
    size = math.prod(shape)
    if span > size // 4:
        return None
    pairs = combined_codes(codes, values, value_codes)
    renumber = np.zeros(span, dtype=np.intp)
    used = np.flatnonzero(np.bincount(pairs.ravel(), minlength=span))
    if len(used) > size // 4:
        return None
    row_of, value_of = np.divmod(used, values)
    if len(used) == span and pairs.dtype == np.intp:  # every pair occurs (a full grid): its code is its number
        return pairs, row_of, value_of
    renumber[used] = np.arange(len(used))
    return np.take(renumber, pairs), row_of, value_of


def combined_codes(a: np.ndarray, k: int, b: np.ndarray) -> np.ndarray:
    """a x k + b, broadcast (each element's pair of codes as one code), in one new array: the product, then ``b``
    added in place where the product has the broadcast shape (a sweep's 200,000 codes: one array, not two)."""
    out = a * k
    if out.shape == np.broadcast_shapes(out.shape, np.shape(b)) and np.can_cast(np.result_type(b), out.dtype):
        out += b
        return out
    return out + b
