"""Fixtures shared by several test modules, built once per pytest process (each xdist worker is one process).

``whatif_cli_workbook``: ``planner workbook`` as a user runs it (with LibreOffice installed it recalculates the
workbook and stores the values), one build shared by test_stored_values, test_workbook_values and
test_export_workbook; they share the xdist group ``workbook_support.WHATIF_CLI_GROUP``, so one worker builds it once. Tests that
change the file copy it first.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture(scope="session")
def whatif_cli_workbook(tmp_path_factory) -> tuple[Path, str]:
    """``planner workbook -o DIR``: the written file and what the command printed. Copy the file to change it."""
    from planner.cli import main

    out = tmp_path_factory.mktemp("whatif-cli")
    r = CliRunner().invoke(main, ["workbook", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out / "capacity-what-if.xlsx", r.output
