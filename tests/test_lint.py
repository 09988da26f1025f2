"""The code passes the project's lint rules (pyproject.toml [tool.ruff]), so style never drifts unnoticed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install '.[test]' brings it)")
    run = subprocess.run([ruff, "check", "planner", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_module_imports():
    """Each module imports (the CLI imports its commands lazily: a broken one would otherwise hide until used)."""
    import importlib
    import pkgutil

    import planner

    skip = {"planner.accuracy.measure", "planner.__main__"}  # torch extra (tests/test_measure.py); runs the CLI
    names = [m.name for m in pkgutil.walk_packages(planner.__path__, "planner.") if m.name not in skip]
    for name in names:
        importlib.import_module(name)
    assert "planner.cli.export" in names and "planner.workbook.reader" in names
