"""Excel cells to arguments: cleaning each cell, broadcasting ranges, and the error values of cells.

No xlwings import (``planner.excel.functions`` holds the ``@xw.func`` wrappers). Excel hands numbers as
floats (8192.0), empty cells as None, ranges as 2-D lists, and names with stray case and spaces; numbers typed
as text ("8192") count as numbers. A value of the wrong kind is a ``#VALUE!`` ``Failure`` with its reason;
``planner.excel.support`` runs the model over what is left and shows the failures as the runtime wants.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.errors import PlannerError
from planner.units import parse_percent, parse_seconds, parse_token_count

NA, NUM, VALUE = "#N/A", "#NUM!", "#VALUE!"


@dataclass(frozen=True)
class Failure:
    """One cell that has no number: its Excel error code and the reason, as a user-facing sentence."""

    code: str
    message: str


class _Blank:
    """A row whose required arguments are all empty: shown as an empty cell."""

    def __repr__(self) -> str:
        return "BLANK"


BLANK = _Blank()


def failure_from(exc: BaseException) -> Failure:
    """The Excel error for an exception raised by ``planner.api``: the error's own ``excel_error``.

    Unknown names give #N/A (a missing price too); a number out of range or a configuration that does not
    fit gives #NUM!, as Excel's own =SQRT(-1) does; an argument of the wrong kind gives #VALUE!. Anything
    else is a bug, shown as #VALUE! with a request to report it.
    """
    if isinstance(exc, PlannerError):
        return Failure(exc.excel_error, str(exc))
    return Failure(VALUE, f"planner could not compute this cell ({type(exc).__name__}: {exc}); please report it")


# -- arguments ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One argument of an Excel function: its name (also the API keyword), kind and help text."""

    name: str
    kind: str  # "gpu", "model", "precision", "engine", "text" (names) or "number"
    doc: str
    required: bool = True
    api_name: str | None = None  # the planner.api keyword, when it differs
    tokens: bool = False  # a token count: text as people write it ("8k", "8,192") read as the CLI reads it
    mean: bool = (
        False  # a mean length in tokens: a fraction is kept ("207.5", "1.3k"), as plan --prompt-tokens reads it
    )
    seconds: bool = False  # a duration: text carries its unit ("800 ms", "1.5 s"), as plan --ttft-target reads it
    #: one value for a whole API call (the engine, the parallelism: ``planner.options.Options`` reads one name): a range
    #: of them runs as one call per distinct value (``planner.excel.support._Block``)
    per_call: bool = False
    #: a percentage typed as text, read by ``planner.units.parse_percent`` as a scenario's TOML reads it: "share"
    #: ("30%" is 0.3: prefix_hit_rate, memory_utilization) or "percentile" ("95%" and "p95" are 95); "": none
    percent: str = ""

    @property
    def keyword(self) -> str:
        return self.api_name or self.name

    @property
    def is_name(self) -> bool:
        return self.kind != "number"


_EXAMPLES = {
    "gpu": "a GPU name such as H100",
    "model": "a model name such as llama2-70b",
    "precision": "a precision name such as fp16",
    "engine": "an engine name such as sglang or a release such as vllm==0.11.0",
    "text": "text",
}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"{'TRUE' if value else 'FALSE'} (a logical value)"
    if isinstance(value, (int, float, np.number)):
        return f"{float(value):g} (a number)"
    if isinstance(value, str):
        return f"{value!r} (text)"
    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list inside one cell"
    return f"a value of type {type(value).__name__}"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


#: Excel's error values as a cell hands them on as text (``ERROR.TYPE`` codes 1-8, Microsoft support, "ERROR.TYPE
#: function", https://support.microsoft.com/en-us/office/error-type-function-10958677-7c8d-44f7-ae77-b9a9ee6eefaa,
#: read 2026-12-03): what a classic UDF gets from a cell showing an error, and the start of planner's own error
#: text there ("#N/A: unknown GPU ...", ``planner.excel.support``).
EXCEL_ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA")


def _error_in(text: str) -> str | None:
    """The Excel error ``text`` is, alone or followed by ": reason"; None for any other text."""
    code = text.split(":", 1)[0].strip().upper()
    return code if code in EXCEL_ERRORS else None


def clean(value: Any, param: Param) -> Any:
    """One cell's value for ``param``: a stripped name, a float, MISSING, or a Failure: #VALUE! for a value of the
    wrong kind; an argument holding an error (another cell's #N/A) passes that error on, as Excel's own functions
    do (#VALUE! for an error planner does not return), saying where it came from."""
    if value is None:
        return MISSING
    if isinstance(value, str) and (code := _error_in(value)):
        passed = code if code in (NA, NUM, VALUE) else VALUE
        return Failure(passed, f"{param.name} holds the error {code} (from the cell it refers to); fix that cell")
    if param.is_name:
        if isinstance(value, str):
            text = value.strip()
            return text if text else MISSING
        if param.kind == "text":  # its own help names the text it takes (LOADED_RANGE's "TTFT", "TPOT" or "ITL")
            return Failure(VALUE, f"{param.name} must be text: {param.doc}; got {_describe(value)}")
        return Failure(VALUE, f"{param.name} must be {_EXAMPLES[param.kind]}, as text; got {_describe(value)}")
    if isinstance(value, float) or (isinstance(value, (int, np.integer, np.floating)) and not isinstance(value, bool)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return MISSING
        try:
            return float(text)
        except ValueError:
            pass
        if param.seconds:  # "800 ms", "600 s": kept as written (the unit stands), read by planner.units.parse_seconds
            try:
                parse_seconds(text, math.inf, param.name)
            except ValueError as exc:
                return Failure(VALUE, f"{param.name}: {exc}")
            return text
        if param.percent:  # "30%" (0.3) or "95%" / "p95" (95): planner.units.parse_percent, as a scenario reads it
            try:
                return parse_percent(text, share=param.percent == "share")
            except ValueError as exc:
                return Failure(VALUE, f"{param.name}: {exc}; {param.doc}")
        if param.tokens:  # "8k" (8,192), "8,192", "1.5k": planner.units.parse_token_count, as --context reads it
            try:
                return float(parse_token_count(text, whole=not param.mean))
            except ValueError as exc:
                return Failure(VALUE, f"{param.name}: {exc}")
    return Failure(VALUE, f"{param.name} must be a number ({param.doc}); got {_describe(value)}")


def _grid(value: Any) -> Any:
    """A cell value (returned as is) or a range as a 2-D object array; a malformed range raises _Shape."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        return value
    if len(value) == 0:
        raise _Shape("an empty range; give at least one cell")
    if not any(isinstance(r, (list, tuple)) for r in value):
        rows = [[v] for v in value]  # a plain list is a column
    elif all(isinstance(r, (list, tuple)) for r in value):
        rows = [list(r) for r in value]
        width = len(rows[0])
        if width == 0 or any(len(r) != width for r in rows):
            raise _Shape("a range whose rows differ in length; give a rectangular range")
    else:
        raise _Shape("a range mixing single values and rows; give a rectangular range")
    flat = [v for r in rows for v in r]
    return np.fromiter(flat, dtype=object, count=len(flat)).reshape(len(rows), len(rows[0]))


def _clean_many(items: list[Any], p: Param) -> tuple[list[Any], list[int], list[int]]:
    """``clean`` over many cells, each distinct value once: (cleaned, indices missing, indices failed)."""
    out: list[Any] = []
    missing: list[int] = []
    failed: list[int] = []
    cache: dict[Any, Any] = {}
    number = not p.is_name
    for i, v in enumerate(items):
        t = type(v)
        if number and t is float:
            out.append(v)
            continue
        try:  # keyed by type too: True == 1.0 in a dict, but TRUE is not a number here
            key = (t, v)
            c = cache[key] if key in cache else cache.setdefault(key, clean(v, p))
        except TypeError:  # unhashable: a list inside a cell
            c = clean(v, p)
        if c is MISSING:
            missing.append(i)
        elif isinstance(c, Failure):
            failed.append(i)
        out.append(c)
    return out, missing, failed


class _Shape(Exception):
    pass


def _unwrap(value: Any) -> Any:
    """``[[x]]`` (one cell, as xlwings hands it with ndim=2) -> ``x``."""
    if type(value) is list and len(value) == 1:
        inner = value[0]
        if type(inner) is list and len(inner) == 1:
            return inner[0]
    return value


def _empty(p: Param) -> Failure:
    """A required argument left empty: #VALUE!, saying what to give (a text argument's own help: LOADED_RANGE's)."""
    if p.kind == "text":
        return Failure(VALUE, f"{p.name} is empty; give {p.doc}")
    return Failure(VALUE, f"{p.name} is empty; give {_EXAMPLES.get(p.kind, 'a number (' + p.doc + ')')}")


class Cells:
    """The arguments of one call over ranges: each cleaned once, broadcast to the call's shape, flattened.

    Per row: the first #VALUE! among its arguments (``failure``), the first required argument left empty
    (``missing_required``), whether all its ranged required arguments are empty (``blank_rows``), and per
    optional argument whether it is empty there (``missing_optional``).
    """

    def __init__(self, params: tuple[Param, ...], grids: list[Any], shape: tuple[int, int]):
        self.shape = shape
        self.n = n = shape[0] * shape[1]
        self.values: list[Any] = []  # per param: a cleaned scalar, or a flat array (float for numbers)
        self.failure = np.full(n, None, dtype=object)  # the first #VALUE! among a row's arguments
        self.blank_rows = np.ones(n, dtype=bool)
        self.missing_required = np.full(n, None, dtype=object)  # the first required Param left empty
        self.missing_optional = []  # per optional param: a bool array (or a bool)
        ranged_required = False
        for g, p in zip(grids, params, strict=True):
            if isinstance(g, np.ndarray):
                cleaned, miss_at, fail_at = _clean_many(g.ravel().tolist(), p)
                if p.is_name:
                    arr = np.fromiter(cleaned, dtype=object, count=len(cleaned))
                else:  # rows with a missing or failed value never reach the model: any placeholder does
                    arr = np.array([c if type(c) is float else 1.0 for c in cleaned], dtype=float)
                missing = np.zeros(g.size, dtype=bool)
                missing[miss_at] = True
                failed = np.zeros(g.size, dtype=bool)
                failed[fail_at] = True
                flat = np.broadcast_to(arr.reshape(g.shape), shape).ravel()
                missing = np.broadcast_to(missing.reshape(g.shape), shape).ravel()
                failed = np.broadcast_to(failed.reshape(g.shape), shape).ravel()
                if fail_at:
                    objs = np.fromiter(cleaned, dtype=object, count=len(cleaned))
                    objs = np.broadcast_to(objs.reshape(g.shape), shape).ravel()
                    take = failed & np.equal(self.failure, None)
                    self.failure[take] = objs[take]
            else:
                flat = clean(g, p)
                missing, failed = flat is MISSING, isinstance(flat, Failure)
                if failed:
                    take = np.equal(self.failure, None)
                    for i in np.flatnonzero(take):
                        self.failure[i] = flat
            self.values.append(flat)
            if p.required:
                if isinstance(g, np.ndarray):  # constants do not make a row a scenario; ranges do
                    self.blank_rows &= missing
                    ranged_required = True
                if np.any(missing):
                    for i in np.flatnonzero(missing & np.equal(self.missing_required, None)):
                        self.missing_required[i] = p
            else:
                self.missing_optional.append(missing)
        if not ranged_required or n == 1:  # a single cell left empty is an error, not a blank
            self.blank_rows[:] = False
        self.result = np.full(n, None, dtype=object)
        self.numbers = np.full(n, np.nan)
