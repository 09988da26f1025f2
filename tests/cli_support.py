"""Running the CLI in tests and reading its one-line errors."""

from __future__ import annotations

from click.testing import CliRunner

from planner.cli import main


def run(*args: str):
    """``planner ARGS...`` in this process (stdout and stderr kept apart)."""
    return CliRunner().invoke(main, list(args))


def one_line(result, code: int) -> str:
    """The single stderr line of a refused command: exit ``code``, no traceback, one line."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]
