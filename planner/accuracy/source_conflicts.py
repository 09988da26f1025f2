"""Held-out rows whose source contradicts itself (``catalogs/reference/source_conflicts.csv``, issue 21).

A row is flagged for figures of its own source, never for the planner's error on it: the page's result block
against the same page's summary (``own_summary``), a sibling run of the same page that differs in one variable and
moves the wrong way (``own_sibling``: a column that falls when the GPUs double, a TTFT at 1 in flight above the
TTFT at 8), a stall visible in the block's own statistics (``own_stall``: peak output rate over mean above 10, or
a mean over its median above 3 with the p99 past 20x the median), or a log quoted for the run that another figure
of the run rules out (``own_log``). Each flag names the row's quantities it bears on (``TPOT``, ``TTFT``,
``throughput``: the figure ``bench/heldout.py`` compares) and cites the conflicting figures as
``label = value @ where`` (the page's line, or its table and row where it has no lines), ``; ``-separated.

Nothing is dropped: ``bench/heldout.py`` prints every headline on all rows and, beside it, the same figures
without the flagged ones (docs/accuracy.md, "The worst figures, one by one").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from planner.accuracy.published import read_csv_rows, reference_dir
from planner.errors import InvalidInputError

CONFLICTS_FILE = "source_conflicts.csv"
#: What the source contradicts itself with (module docstring).
KINDS = ("own_summary", "own_sibling", "own_stall", "own_log")
#: The row's compared figures a flag may name.
QUANTITIES = ("TPOT", "TTFT", "throughput")
#: One cited figure: ``label = value @ where``; the value a number as the page prints it (thousands commas kept).
_FIGURE = re.compile(r"^(?P<label>.+?) = (?P<value>-?[\d,]+(?:\.\d+)?) @ (?P<where>.+)$")


@dataclass(frozen=True)
class CitedFigure:
    """One figure of the source: its ``label``, ``value`` (``text`` as printed) and ``where`` it is printed."""

    label: str
    value: float
    text: str
    where: str


@dataclass(frozen=True)
class SourceConflict:
    """One flagged row: ``record_id``, the ``kind`` of conflict, the ``quantities`` of the row it bears on, the
    ``page`` (the row's source address without its anchor), the ``figures`` that conflict, a one-line
    ``explanation`` and the session that ``found_by`` it."""

    record_id: str
    kind: str
    quantities: tuple[str, ...]
    page: str
    figures: tuple[CitedFigure, ...]
    explanation: str
    found_by: str


def parse_figures(cell: str, where: str) -> tuple[CitedFigure, ...]:
    """The ``; ``-separated ``label = value @ where`` figures of a ``figures`` cell; ``InvalidInputError`` naming
    ``where`` for an item that does not parse or fewer than two (a conflict takes two figures)."""
    out = []
    for item in (part.strip() for part in cell.split("; ")):
        m = _FIGURE.match(item)
        if not m:
            raise InvalidInputError(f"{where}: figure {item!r} is not 'label = number @ where it is printed'")
        text = m["value"]
        out.append(CitedFigure(m["label"], float(text.replace(",", "")), text, m["where"]))
    if len(out) < 2:
        raise InvalidInputError(f"{where}: a conflict cites at least two figures, got {len(out)}")
    return tuple(out)


@cache
def source_conflicts() -> dict[str, SourceConflict]:
    """``CONFLICTS_FILE``'s flags by record_id; ``InvalidInputError`` for a kind or quantity not in ``KINDS`` /
    ``QUANTITIES``, a figure that does not parse, an empty explanation or a record_id flagged twice."""
    out: dict[str, SourceConflict] = {}
    for i, r in enumerate(read_csv_rows(reference_dir() / CONFLICTS_FILE), start=2):
        where = f"{CONFLICTS_FILE} line {i} ({r['record_id']})"
        if r["kind"] not in KINDS:
            raise InvalidInputError(f"{where}: kind {r['kind']!r} is not one of {', '.join(KINDS)}")
        quantities = tuple(q.strip() for q in r["quantities"].split(";") if q.strip())
        bad = [q for q in quantities if q not in QUANTITIES]
        if bad or not quantities:
            raise InvalidInputError(f"{where}: quantities {r['quantities']!r}: each one of {', '.join(QUANTITIES)}")
        if not r["explanation"].strip():
            raise InvalidInputError(f"{where}: no explanation")
        if r["record_id"] in out:
            raise InvalidInputError(f"{where}: {r['record_id']} is flagged twice")
        out[r["record_id"]] = SourceConflict(
            record_id=r["record_id"],
            kind=r["kind"],
            quantities=quantities,
            page=r["page"],
            figures=parse_figures(r["figures"], where),
            explanation=r["explanation"],
            found_by=r["found_by"],
        )
    return out


def flagged(record_id: str, quantity: str) -> bool:
    """Whether ``quantity`` (``TPOT``, ``TTFT``, or any throughput: ``static-batch throughput``, ``serving
    throughput``) of row ``record_id`` is flagged in ``CONFLICTS_FILE``."""
    conflict = source_conflicts().get(record_id)
    if conflict is None:
        return False
    return ("throughput" if "throughput" in quantity else quantity) in conflict.quantities
