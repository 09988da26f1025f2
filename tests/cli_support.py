"""Running the CLI in tests and reading its one-line errors."""

from __future__ import annotations

import os
import shutil

from click.testing import CliRunner

from planner.cli import main

#: A one-option budget-review scenario, as a newcomer writes it (the README example's workload, one H100 option):
#: tests replace one line of it to try a slip.
SCENARIO = """\
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 400
output_tokens_high = 1200
ttft_target_s = 1.5
tpot_target_s = 0.05
[[option]]
gpu = "H100"
model = "Llama-3.1-70B"
"""


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


def without_libreoffice(monkeypatch) -> None:
    """PATH without the folders holding soffice or libreoffice, for this test: ``planner workbook`` and ``refresh``
    then write without stored values (LibreOffice's recalculation of the book, ~5 s CPU for the what-if workbook), by
    the same write path. For checks that do not read the stored values (test_stored_values does)."""
    from planner.io.libreoffice import find_soffice

    path = os.environ.get("PATH", "").split(os.pathsep)
    no_soffice = [d for d in path if not any(shutil.which(n, path=d) for n in ("soffice", "libreoffice"))]
    monkeypatch.setenv("PATH", os.pathsep.join(no_soffice))
    assert find_soffice() is None
