"""Names to numbers in bulk: each distinct name (or combination of names) resolved once into a row table.

An array of names becomes integer codes (``_codes``: a Categorical's own codes, else grouped by object identity,
else pandas' hash table); each distinct name's numbers are computed once (``lookup``, ``lookup_combinations``)
into one array per field, and each scenario keeps its row's code (``Column``). Tables of a set of names are kept
(``once``), so a sweep that repeats its names pays no lookup again. ``planner.catalog.resolve`` says what a name's
numbers are (catalog GPUs, models, precisions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.catalog import Gpu, Model, Precision
from planner.checks import Errors
from planner.errors import PlannerError
from planner.model import failures


@dataclass
class Column:
    """Numbers looked up from names: one row per distinct name (``rows``) and each scenario's row (``codes``).

    One name: ``rows`` holds Python floats and ``codes`` is None. Failed rows hold a working row's numbers
    (so formulas run everywhere) and are marked in ``bad``, per scenario.
    """

    rows: dict[str, Any]
    codes: np.ndarray | None
    bad: np.ndarray | bool
    first_error: PlannerError | None

    def gather(self, name: str) -> Any:
        """Field ``name`` per scenario (numpy ``take`` of the row table by code)."""
        col = self.rows[name]
        return col if self.codes is None else np.take(col, self.codes)

    @property
    def values(self) -> dict[str, Any]:
        """Every field per scenario."""
        return {k: self.gather(k) for k in self.rows}


def lookup_one(key: Any, numbers: Callable[[Any], dict[str, float]], errors: Errors) -> Column:
    """One name (or combination of names) resolved: a column of Python floats."""
    try:
        return Column({k: float(v) for k, v in numbers(key).items()}, None, False, None)
    except PlannerError as exc:
        if errors == "raise":
            raise
        failures.note(True, exc)
        return Column({}, None, True, exc)


def _codes(names: Any) -> tuple[np.ndarray, list[Any], tuple]:
    """(code per element, the distinct values in code order, shape): each distinct name once.

    A pandas Categorical (or Series of category dtype) brings its codes: a sweep that builds its names as
    categoricals once pays no per-call hashing. Other arrays of names are grouped by identity first
    (``_codes_by_identity``), else hashed as they are (pandas' hash table, no per-element Python work); when some
    value is not text (a number, a list or a catalog entry inside a cell) every value is keyed by its repr instead.
    """
    import pandas as pd  # only arrays of names need it

    cat = getattr(names, "cat", None)
    if isinstance(names, pd.Categorical) or cat is not None:
        c = names if isinstance(names, pd.Categorical) else names.array
        raw = c.codes
        cache_key = ("category", raw.__array_interface__["data"][0], raw.shape, raw.dtype.str)
        hit = _BY_IDENTITY.get(cache_key)
        if hit is not None and hit[2][0] is c.categories and np.array_equal(hit[0], raw):  # a recent call's codes
            return hit[1], hit[2][1], raw.shape
        codes = np.asarray(raw, dtype=np.intp)
        values = [*c.categories, None]  # code -1 (missing) -> None
        if codes.size and codes.min() < 0:
            codes = np.where(codes < 0, len(values) - 1, codes)
        codes, values, shape = _used(codes, values, codes.shape)
        codes.flags.writeable = False  # shared by the calls that pass the same categoricals
        _keep(cache_key, (raw.copy(), codes, (c.categories, values)))
        return codes, values, shape
    if isinstance(names, np.ndarray) and names.dtype.kind == "U":
        text = _codes_of_text(names.ravel())
        if text is not None:
            return (*text, names.shape)
    arr = np.asarray(names, dtype=object)
    flat = arr.ravel()
    by_identity = _codes_by_identity(flat)
    if by_identity is not None:
        return (*by_identity, arr.shape)
    try:
        codes, uniques = pd.factorize(flat, use_na_sentinel=False)
        plain = all(type(u) is str for u in uniques)
    except TypeError:
        plain = False
    if plain:
        return codes.astype(np.intp, copy=False), list(uniques), arr.shape
    codes, _ = pd.factorize(np.array([x if isinstance(x, str) else repr(x) for x in flat], dtype=object))
    codes = codes.astype(np.intp, copy=False)
    return codes, [flat[i] for i in _first_appearances(codes)], arr.shape


def _codes_by_identity(flat: np.ndarray) -> tuple[np.ndarray, list[Any]] | None:
    """``_codes`` of an object array whose elements are a few objects repeated, as a sweep's names are, or distinct
    strings of a few values, as read from a file.

    Distinct strings (``_mostly_copies``) are grouped by value (``_factorize_strings``); otherwise the elements are
    grouped by identity first (an object array holds references: hashing them as integers costs a fraction of
    hashing the text), then the few distinct objects by value as ``_codes`` keys them (text as it is, anything else
    by its repr), numbered in order of first appearance. None when the array cannot be read as references or holds
    many distinct objects (then hashing the values is as fast).

    The grouping of the last few arrays of strings is kept (``_BY_IDENTITY``) with a copy of the array, which holds
    a reference to every element: the next call over an array whose every reference is the same (one vectorized
    compare) reuses it. Holding the elements is what makes equal references mean equal strings: an element
    replaced and freed could otherwise leave its address to a new string (CPython reuses freed memory at once), and
    strings do not change. Arrays holding other objects (a list, a catalog entry) are grouped afresh each call.
    """
    import pandas as pd

    try:
        refs = np.frombuffer(memoryview(flat).cast("B"), dtype=np.intp)
    except (TypeError, ValueError, BufferError):
        return None
    if len(refs) != len(flat):
        return None
    cache_key = ("objects", len(refs), *refs[[0, len(refs) // 2, -1]].tolist()) if len(refs) else ("objects", 0)
    hit = _BY_IDENTITY.get(cache_key)
    if hit is not None and np.array_equal(np.frombuffer(memoryview(hit[0]).cast("B"), dtype=np.intp), refs):
        return hit[1], list(hit[2])
    kept = None
    if _mostly_copies(flat):  # as read from a file: a new object per cell, few distinct values
        found = _factorize_strings(flat)
        if found is None:
            return None
        codes, distinct, kept = found
    else:
        codes, distinct = pd.factorize(refs)
        if len(distinct) > max(1024, len(flat) // 16):
            return None
        codes = codes.astype(np.intp, copy=False)
    first_at = _first_appearances(codes, len(distinct))
    objects = [flat[i] for i in first_at]
    strings = all(type(x) is str for x in objects)
    group: dict[Any, int] = {}
    values: list[Any] = []
    renumber = np.empty(len(objects), dtype=np.intp)
    for i, x in enumerate(objects):  # equal text in several objects is one code (pandas' read_csv shares some)
        key = x if strings or isinstance(x, str) else repr(x)  # as ``_codes``: non-text keyed by its repr
        if key not in group:
            group[key] = len(values)
            values.append(x)
        renumber[i] = group[key]
    if len(values) < len(objects):
        codes = np.take(renumber, codes)
    if strings:
        codes.flags.writeable = False  # shared by the calls that pass the same references
        _keep(cache_key, (flat.copy() if kept is None else kept, codes, tuple(values)))
    return codes, values


def _factorize_strings(flat: np.ndarray) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """(code per element, the distinct strings in order of first appearance, a copy of the array) of an object array
    of Python strings, by pandas' hash table of strings (``StringHashTable``: each string's UTF-8 bytes hashed once);
    None when some element is not a ``str`` (a missing cell, a number, a subclass): ``_codes`` keys those otherwise.

    The array is read a block of ``_STRING_BLOCK`` elements at a time: the block's few distinct strings are numbered
    over the whole array (a dict of the strings seen, in order of first appearance, so the codes are those of one
    pass over the whole array), and the block is copied into the copy while its strings are in the CPU's cache (the
    copy holds a reference to every string: ``_codes_by_identity`` keeps it). ``pandas.factorize`` reaches the same
    table after reading every element once more to learn that the array is all text (``lib.is_string_array``); the
    table itself marks any other element missing (code -1), which is read here as "not all text", so that pass is
    left out. Where pandas' table cannot be imported, ``pandas.factorize``.
    """
    import pandas as pd

    try:
        from pandas._libs.hashtable import StringHashTable
    except ImportError:
        StringHashTable = None
    n = len(flat)
    codes = np.empty(n, dtype=np.intp)
    kept = np.empty(n, dtype=object)
    number: dict[str, int] = {}
    for start in range(0, n, _STRING_BLOCK):
        block = flat[start : start + _STRING_BLOCK]
        try:
            distinct, local = StringHashTable(64).factorize(block)
        except (TypeError, AttributeError, ValueError):  # no table (None) or one that refuses the block
            local, distinct = pd.factorize(block)  # missing cells (None, NaN) code -1
        if not all(type(u) is str for u in distinct) or (len(local) and local.min() < 0):
            return None
        kept[start : start + len(block)] = block
        renumber = np.fromiter((number.setdefault(u, len(number)) for u in distinct), np.intp, len(distinct))
        np.take(renumber, local, out=codes[start : start + len(block)])
    return codes, list(number), kept


#: Object arrays of strings are grouped this many elements at a time (``_factorize_strings``): a block's strings
#: (about 70 bytes each) stay in the CPU's cache while they are hashed and referenced by the kept copy.
_STRING_BLOCK = 8192


def _mostly_copies(flat: np.ndarray, sample: int = 1024) -> bool:
    """Whether the first ``sample`` elements hold many more objects than values: names read from a file, a
    DataFrame or an Excel range (each cell its own string), which are grouped by value rather than by identity."""
    head = flat[:sample].tolist()
    try:
        values = len(set(head))
    except TypeError:  # an unhashable cell (a list): grouped by identity, then by repr
        return False
    return len({id(x) for x in head}) > 2 * values + 16


def _codes_of_text(flat: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """``_codes`` of a numpy text array (``dtype <U``), without making a Python string per element.

    Names in Latin-1 (every code point < 256, as catalog names are) are cast one byte per character into rows of
    ``width`` bytes (``packed``, a quarter of the text); the rows are hashed (``_text_hash``) and the hashes grouped
    (pandas' hash table), then every row is compared with its group's first row: a hash collision costs time (the
    array is grouped as objects instead) but never a wrong name. None for other text (grouped as objects). The
    packed rows of the last few arrays are kept with their grouping (``_BY_IDENTITY``): the next call over the same
    array compares its text with the kept rows and, when they are equal, reuses the grouping. The text is read a
    block of rows at a time (``_text_blocks``), so that the check, the cast and the hash (or the comparison) of a
    block read it from the CPU's cache, not from memory, and no array of the text's size is made on a reuse.
    """
    import pandas as pd

    n, width = len(flat), flat.dtype.itemsize // 4
    if not n or not width:
        return None
    text = np.ascontiguousarray(flat)
    points = text.view(np.uint32).reshape(n, width)
    cache_key = ("text", text.__array_interface__["data"][0], n, width)
    hit = _BY_IDENTITY.get(cache_key)
    if hit is not None and _same_text(points, hit[0]):  # a recent call's text: its grouping
        return hit[1], hit[2].tolist()
    kept = bytearray(n * width)  # the packed rows, compared by ``bytearray.startswith`` (memcmp, no temporaries)
    packed = np.frombuffer(kept, dtype=np.uint8).reshape(n, width)
    hashes = np.empty(n, dtype=np.uint64)
    for rows, block in _text_blocks(points, packed):
        if rows is None:
            return None
        hashes[block] = _text_hash(rows)
    codes, distinct = pd.factorize(hashes)
    codes = codes.astype(np.intp, copy=False)
    at = _first_appearances(codes, len(distinct))
    first_rows = packed[at]
    spare = np.empty((min(n, _block_rows(width)), width), dtype=np.uint8)
    for start in range(0, n, len(spare)):
        block = slice(start, start + len(spare))
        expected = spare[: len(codes[block])]
        np.take(first_rows, codes[block], axis=0, out=expected)
        if not kept.startswith(memoryview(expected).cast("B"), block.start * width):
            return None
    codes.flags.writeable = False  # shared by the calls that pass the same text
    first = flat[at]
    _keep(cache_key, (kept, codes, first))
    return codes, first.tolist()


#: Text is read in blocks of about this many bytes (``_text_blocks``): a block stays in the CPU's cache while it is
#: checked, cast and hashed, so the text is read from memory once.
_TEXT_BLOCK_BYTES = 1 << 20


def _block_rows(width: int) -> int:
    """Rows of ``width`` code points (4 bytes each) in one block of ``_TEXT_BLOCK_BYTES``."""
    return max(1, _TEXT_BLOCK_BYTES // (4 * width))


def _text_blocks(points: np.ndarray, out: np.ndarray | None = None):
    """Rows of code points (uint32, n x width) cast to a byte per character, a block of rows at a time: yields
    (the block's rows of bytes, the block's slice), or (None, slice) at the first block with a code point >= 256
    (beyond Latin-1, where a byte would lose the character). ``out``: an n x width uint8 array the rows are written
    to; without it each block is written to one reused buffer (for comparing, not keeping)."""
    n, width = points.shape
    step = _block_rows(width)
    spare = np.empty((min(n, step), width), dtype=np.uint8) if out is None else None
    for start in range(0, n, step):
        block = slice(start, start + step)
        source = points[block]
        if source.max() > 255:
            yield None, block
            return
        rows = out[block] if out is not None else spare[: len(source)]
        np.copyto(rows, source, casting="unsafe")
        yield rows, block


def _same_text(points: np.ndarray, kept: bytearray) -> bool:
    """Whether rows of code points (uint32, n x width) hold the same Latin-1 text as ``kept``, a recent call's rows
    packed a byte per character: cast and compared (memcmp) a block at a time (``_text_blocks``)."""
    n, width = points.shape
    if len(kept) != n * width:
        return False
    for rows, block in _text_blocks(points):
        if rows is None or not kept.startswith(memoryview(rows).cast("B"), block.start * width):
            return False
    return True


#: The multiplier of ``_text_hash``: the 64-bit golden-ratio constant.
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _text_hash(rows: np.ndarray) -> np.ndarray:
    """One integer per row of bytes (C-contiguous, ``width`` bytes a row): h = h * M xor word over the row's 8-byte
    words read in place (wrapping uint64 arithmetic; the last word ends at the row's end, overlapping the one before
    when the width is not a multiple of 8). Rows of up to 8 bytes: the bytes themselves, zero-padded, so exact."""
    n, width = rows.shape
    if width < 8:
        padded = np.zeros((n, 8), dtype=np.uint8)
        padded[:, :width] = rows
        return padded.view(np.uint64)[:, 0]
    buffer = np.ascontiguousarray(rows).reshape(-1)
    offsets = [*range(0, width - 7, 8), *([width - 8] if width % 8 else [])]
    h = np.ndarray((n,), dtype=np.uint64, buffer=buffer, offset=offsets[0], strides=(width,)).copy()
    for offset in offsets[1:]:
        h *= _HASH_MULTIPLIER
        h ^= np.ndarray((n,), dtype=np.uint64, buffer=buffer, offset=offset, strides=(width,))
    return h


#: The grouping of recent arrays of names. Object arrays of strings by ("objects", length, three references): (a
#: copy of the array, holding every element, so that no element's address can pass to another string while kept;
#: codes; the distinct names); a hit needs every reference equal (one vectorized compare). Text arrays by ("text",
#: address, length, width): (the packed rows, a byte per character; codes; the distinct names); a hit needs the
#: text packed again equal. Categoricals by ("category", address, shape, dtype): (their codes, codes renumbered over the categories used, (categories, values)); a hit needs the same categories
#: and codes. ``planner.catalog.resolve`` keeps its pairs of names and contexts here too (``_pair``). A sweep that
#: passes the same arrays to several functions groups each once. Eight entries at most: an entry holds two integers
#: per name (16 MB for a million names), a text entry a byte per character besides.
_BY_IDENTITY: dict[tuple, tuple[Any, ...]] = {}


def _keep(key: tuple, grouping: tuple[Any, ...]) -> None:
    """Keep an array's grouping for the next calls (``_BY_IDENTITY``), forgetting all when eight are kept."""
    if len(_BY_IDENTITY) >= 8:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[key] = grouping


def _first_appearances(codes: np.ndarray, count: int | None = None) -> np.ndarray:
    """Where each code first appears: pandas numbers codes in order of appearance, so a new one raises the max.

    With ``count`` (the number of codes), only the part up to the last code's first appearance is read.
    """
    if count:
        end = 1024
        while end < len(codes) and codes[:end].max() < count - 1:
            end *= 8
        codes = codes[:end]
    if not len(codes):
        return codes
    top = np.maximum.accumulate(codes)
    return np.flatnonzero(np.concatenate(([True], top[1:] > top[:-1])))


def _used(codes: np.ndarray, values: list[Any], shape: tuple) -> tuple[np.ndarray, list[Any], tuple]:
    """Codes renumbered over the values that occur (categories that no element uses are not looked up)."""
    used = np.flatnonzero(np.bincount(codes.ravel(), minlength=len(values)))
    if len(used) == len(values):
        return codes, values, shape
    renumber = np.zeros(len(values), dtype=np.intp)
    renumber[used] = np.arange(len(used))
    return np.take(renumber, codes), [values[i] for i in used], shape


def lookup(
    names: Any,
    resolve: Callable[[Any], Any],
    extract: Callable[[Any], dict[str, float]],
    errors: Errors,
    memo: tuple = (),
) -> Column:
    """Resolve each distinct name once: its numbers in a row table, and each scenario's row code.

    ``memo``: (key, objects) naming what else the numbers depend on (catalog, engine ...), so the table of a set
    of names is built once (``_table``).
    """
    if isinstance(names, (str, Gpu, Model, Precision)) or names is None:
        return lookup_one(names, lambda n: extract(resolve(n)), errors)
    codes, values, shape = _codes(names)
    key = ((*memo[0], *map(name_key, values)), (*memo[1], values)) if memo else None
    return _table([lambda v=v: extract(resolve(v)) for v in values], codes, shape, errors, key)


def _table(
    makers: list[Callable[[], dict[str, float]]],
    codes: np.ndarray,
    shape: tuple,
    errors: Errors,
    memo: tuple | None = None,
) -> Column:
    """Rows of numbers (one maker per distinct key; a PlannerError marks the row failed) and codes of ``shape``.

    ``memo``: (key, objects behind the key's identities) of this set of keys: a table where every row resolved is
    kept and found again by the next call over the same names (``_MEMO``).
    """
    hit = _MEMO.get(memo[0]) if memo else None
    if hit is not None:
        return Column(hit[1], codes.reshape(shape), False, None)
    rows: list[dict[str, float] | None] = []
    row_errors = np.full(len(makers), None, dtype=object)
    for i, make in enumerate(makers):
        try:
            rows.append(make())
        except PlannerError as exc:
            if errors == "raise":
                raise
            row_errors[i] = exc
            rows.append(None)
    present = [r for r in rows if r is not None]
    codes = codes.reshape(shape)
    first_error = next((e for e in row_errors if e is not None), None)
    if first_error is not None:
        failures.note(np.take(np.not_equal(row_errors, None), codes), np.take(row_errors, codes))
    if not present:
        return Column({}, codes, np.ones(shape, dtype=bool), first_error)
    table = once(("table", *map(id, rows)), tuple(rows), lambda: _stack(rows, present[0]))
    if memo and first_error is None:
        once(memo[0], memo[1], lambda: table)
    bad = np.take(np.array([r is None for r in rows]), codes) if first_error is not None else False
    return Column(table, codes, bad, first_error)


def _stack(rows: list[dict[str, float] | None], filler: dict[str, float]) -> dict[str, np.ndarray]:
    """Rows of numbers as one array per field (a failed row, None, holds ``filler``'s numbers)."""
    present = [r for r in rows if r is not None]
    fields = dict.fromkeys(k for r in present for k in r)  # union: GPUs differ in which peaks they have
    return {k: np.array([(r or filler).get(k, math.nan) for r in rows], dtype=float) for k in fields}


#: Catalog numbers by name and by set of names, computed once: GPU and model rows (``planner.catalog.resolve``'s
#: ``_gpu_numbers``, ``_model_numbers``) and their tables (``_table``). Objects in a key (a catalog, an engine,
#: the rows of a table) are keyed by identity and kept alive with the entry, so a key cannot be reused by another
#: object.
_MEMO: dict[tuple, tuple[tuple, Any]] = {}


def once(key: tuple, keep: tuple, make: Callable[[], Any]) -> Any:
    """``make()``, once per ``key`` (``keep``: the objects behind the identities in ``key``)."""
    hit = _MEMO.get(key)
    if hit is None:
        if len(_MEMO) > 8192:
            _MEMO.clear()
        hit = _MEMO[key] = (keep, make())
    return hit[1]


def name_key(x: Any) -> Any:
    """A cache key for a name: the text itself, None, or the identity of a catalog entry."""
    return x if x is None or type(x) is str else id(x)


def lookup_combinations(arrays: tuple[Any, ...], numbers: Callable, errors: Errors, memo: tuple = ()) -> Column:
    """Resolve each distinct combination of names (model, weight precision, KV precision) once (``memo``: as
    ``lookup``'s)."""
    parts = [(None, [a], ()) if np.ndim(a) == 0 and getattr(a, "cat", None) is None else _codes(a) for a in arrays]
    shape = np.broadcast_shapes(*(p[2] for p in parts))
    ranged = [p for p in parts if p[0] is not None]
    if len(ranged) == 1:  # one array of names: its codes are the combinations' codes
        codes, values, _ = ranged[0]
        index = [(i,) for i in range(len(values))]
        codes = np.broadcast_to(codes.reshape(ranged[0][2]), shape)
    else:
        combined = np.zeros(shape, dtype=np.int64)
        for c, values, sh in ranged:
            combined = combined * len(values) + c.reshape(sh)
        keys, codes = np.unique(combined, return_inverse=True)
        index = []
        for key in keys.tolist():
            digits = []
            for _, values, _ in reversed(ranged):
                key, d = divmod(key, len(values))
                digits.append(d)
            index.append(tuple(reversed(digits)))

    def names(digits: tuple) -> tuple:
        it = iter(digits)
        return tuple(p[1][0] if p[0] is None else p[1][next(it)] for p in parts)

    combos = [names(d) for d in index]
    key = ((*memo[0], *(tuple(map(name_key, c)) for c in combos)), (*memo[1], combos)) if memo else None
    return _table([lambda c=c: numbers(c) for c in combos], np.asarray(codes), shape, errors, key)
