"""What every command prints goes through ``echo``: control characters from user text shown as escapes.

A name from a scenario, a catalog or a measurements file may hold ESC (a terminal escape sequence that
retitles the window, hides text or rewrites the screen), BEL, NUL, a carriage return or a bidirectional
override; ``planner.io.safetext.terminal_text`` shows each as its Python escape (``\\x1b``), keeping line
breaks, so the output reads as what was written.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import click

from planner.io.safetext import terminal_text

#: The list ``keeping_stderr`` keeps standard error's messages in (None: outside one).
_KEPT_STDERR: ContextVar[list[str] | None] = ContextVar("kept_stderr", default=None)


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` made safe for a terminal (line breaks kept); a message to standard error is
    also kept where ``keeping_stderr`` is in effect."""
    text = terminal_text(message)
    kept = _KEPT_STDERR.get() if err else None
    if kept is not None:
        kept.append(str(text))
    click.echo(text, err=err, nl=nl)


@contextlib.contextmanager
def keeping_stderr() -> Iterator[list[str]]:
    """Every message ``echo(..., err=True)`` prints inside the block (notes, warnings), also kept, as printed, in the
    list it yields: what ``planner validate --json`` gives as its "notes"."""
    kept: list[str] = []
    token = _KEPT_STDERR.set(kept)
    try:
        yield kept
    finally:
        _KEPT_STDERR.reset(token)


def table(rows: list[tuple[str, ...]], right: tuple[int, ...] = (), gap: int = 2) -> list[str]:
    """``rows`` of cells as lines whose columns line up, each column as wide as its widest cell (a long name widens
    its column, not one row); columns ``right`` (indices) right-aligned, the others left; ``gap`` spaces between
    columns; trailing spaces stripped."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    sep = " " * gap
    return [
        sep.join(
            cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]


__all__ = ["echo", "keeping_stderr", "table"]
