"""Why each scenario failed, in bulk, for callers that show one reason per cell (the Excel functions).

With ``errors="coerce"`` the API gives NaN where a scenario fails. Inside ``collect()``, each check that marks
scenarios bad (a number out of range, an unknown name, a refused tensor-parallel group, a deployment that does
not fit) also notes, per scenario, the error ``errors="raise"`` would raise for that scenario alone. The checks
run in the order raise mode runs them, so a scenario's first note is its reason. Outside ``collect()`` nothing
is noted and nothing is paid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np


class Notes:
    """The notes of one ``collect()``: (mask of failed scenarios, their errors) in the order they were made."""

    def __init__(self) -> None:
        self._notes: list[tuple[Any, Any]] = []

    def add(self, mask: Any, reasons: Any) -> None:
        self._notes.append((mask, reasons))

    def reasons(self, shape: tuple) -> np.ndarray:
        """Per scenario of ``shape``: the first error noted for it, or None."""
        out = np.full(shape, None, dtype=object)
        unset = np.ones(shape, dtype=bool)
        for mask, why in self._notes:
            try:
                take = np.broadcast_to(np.asarray(mask, dtype=bool), shape) & unset
            except ValueError:  # a note about arrays of another shape (an inner call): not about these cells
                continue
            if not take.any():
                continue
            out[take] = np.broadcast_to(why, shape)[take] if isinstance(why, np.ndarray) else why
            unset &= ~take
        return out


_ACTIVE: ContextVar[Notes | None] = ContextVar("planner_failure_notes", default=None)


@contextmanager
def collect() -> Iterator[Notes]:
    """Note the reason of every scenario that fails in the API calls made inside the block."""
    notes = Notes()
    token = _ACTIVE.set(notes)
    try:
        yield notes
    finally:
        _ACTIVE.reset(token)


def active() -> bool:
    """Whether a ``collect()`` block is listening (checks build per-scenario errors only then)."""
    return _ACTIVE.get() is not None


def note(mask: Any, reasons: Any) -> None:
    """Scenarios where ``mask`` holds failed with ``reasons`` (one error, or an object array of them)."""
    notes = _ACTIVE.get()
    if notes is not None:
        notes.add(mask, reasons)


def note_each(mask: Any, keys: tuple[Any, ...], make: Callable[..., BaseException]) -> None:
    """Scenarios where ``mask`` holds failed with ``make(*key)``: one error per distinct key.

    ``keys``: the arrays the error depends on (a bad value; a model and a group size), broadcast with ``mask``;
    they are read only where ``mask`` holds.
    """
    notes = _ACTIVE.get()
    if notes is None:
        return
    mask = np.asarray(mask, dtype=bool)
    arrays = [np.asarray(k) for k in keys]
    shape = np.broadcast_shapes(mask.shape, *(a.shape for a in arrays))
    where = np.broadcast_to(mask, shape)
    columns = [np.broadcast_to(a, shape)[where].tolist() for a in arrays]
    made: dict[Any, BaseException] = {}
    errors = np.empty(len(columns[0]) if columns else int(where.sum()), dtype=object)
    for i, key in enumerate(zip(*columns, strict=True)):
        try:
            err = made.get(key)
            if err is None:
                err = made[key] = make(*key)
        except TypeError:  # an unhashable key (a catalog entry): made each time
            err = make(*key)
        errors[i] = err
    reasons = np.full(shape, None, dtype=object)
    reasons[where] = errors
    notes.add(where, reasons)
