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


def _class_fixtures_on_instances(source: str) -> list[str]:
    """Methods decorated ``@pytest.fixture(scope="class")`` without ``@classmethod``: pytest 9.1+ warns
    (``PytestRemovedIn10Warning``, an error under this project's filterwarnings) as each test gets a new instance."""
    import ast

    found = []
    for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            names = [ast.unparse(d) for d in fn.decorator_list]
            if any("fixture" in d and "scope='class'" in d for d in names) and "classmethod" not in names:
                found.append(f"{cls.name}.{fn.name}")
    return found


def test_no_class_scoped_fixture_is_an_instance_method():
    """The README's test command runs the newest pytest (issue 26: a class fixture written as an instance method
    broke a fresh machine's run twice); an older local pytest does not warn, so the rule is checked here."""
    assert _class_fixtures_on_instances(
        "import pytest\nclass T:\n    @pytest.fixture(scope='class')\n    def f(self):\n        return 1\n"
    ) == ["T.f"]
    offenders = {p.name: _class_fixtures_on_instances(p.read_text()) for p in (ROOT / "tests").glob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


@pytest.mark.xdist_group("grouping_check")
def test_xdist_groups_reach_the_scheduler(request):
    """Under ``-n N --dist loadgroup`` (pyproject addopts) a grouped test's id carries its group, which is what the
    scheduler reads to keep a group on one worker (tests/conftest.py mends this for pytest >= 9.2)."""
    import os

    if not os.environ.get("PYTEST_XDIST_WORKER") or not getattr(request.config.option, "loadgroup", False):
        pytest.skip("runs only under pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@grouping_check")
