"""What every command prints goes through ``echo``: control characters from user text shown as escapes.

A name from a scenario, a catalog or a measurements file may hold ESC (a terminal escape sequence that
retitles the window, hides text or rewrites the screen), BEL, NUL, a carriage return or a bidirectional
override; ``planner.io.safetext.terminal_text`` shows each as its Python escape (``\\x1b``), keeping line
breaks, so the output reads as what was written.
"""

from __future__ import annotations

import click

from planner.io.safetext import terminal_text


def echo(message: object = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` made safe for a terminal (line breaks kept)."""
    click.echo(terminal_text(message), err=err, nl=nl)


__all__ = ["echo"]
