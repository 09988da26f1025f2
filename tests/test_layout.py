"""The package reads as the architecture: no import cycles, and dependencies point inward (issue 24).

The import graph is built from the source (``ast`` over ``planner/**/*.py``): every ``import`` and ``from ... import``
of a planner module counts, at module level, inside a function or under ``TYPE_CHECKING`` alike, since each is a
dependency a reader has to follow.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "planner"
#: The surfaces: what a user touches. Nothing of the core imports them.
SURFACES = ("cli", "excel", "workbook", "export")
PACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").exists())


def may_import(package: str) -> set[str]:
    """The parts of planner a package may import besides itself, read from its ``__init__`` docstring: every
    ````planner.x```` (or ````planner````) named in its paragraph that says what it may import (the docstring is
    the one statement of the rule; this test holds the code to it)."""
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))) or ""
    said = [p for p in doc.split("\n\n") if re.search(r"\bmay import\b", p, re.IGNORECASE)]
    assert len(said) == 1, f"planner/{package}/__init__.py: no one paragraph says what it may import"
    return {m or "planner" for m in re.findall(r"``planner(?:\.(\w+))?[\w.]*``", said[0])}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the planner modules it imports (``from planner.x import y`` counts ``planner.x.y`` when y is one)."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}

    def known(name: str) -> str:
        while name not in modules:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {known(a.name) for a in node.names if a.name.split(".")[0] == "planner"}
            elif (
                isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "planner"
            ):
                targets |= {known(f"{node.module}.{a.name}") for a in node.names}
        graph[name] = targets - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def part(module: str) -> str:
    """The part of the design a module belongs to: ``planner.excel.support`` -> ``excel``, ``planner.api`` -> ``api``."""
    return module.split(".")[1] if "." in module else "planner"


@functools.cache
def graph() -> dict[str, set[str]]:
    """``import_graph()``, parsed once, when a test first reads it (not at collection, on every worker)."""
    return import_graph()


#: One worker parses the package for this module's tests (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_layout")


class TestImportGraph:
    def test_the_graph_sees_the_known_edges(self):
        """The graph reads real imports: the API calls deploy, the Excel functions call support, the CLI reaches all."""
        assert "planner.deploy" in graph()["planner.api"]
        assert "planner.excel.support" in graph()["planner.excel.functions"]
        assert {"planner.model.memory", "planner.model.facts"} <= graph()["planner.model"]

    def test_finds_a_cycle_when_there_is_one(self):
        """The cycle finder is not vacuous: a -> b -> c -> a is one component, d alone is none."""
        assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]

    def test_no_import_cycles(self):
        assert cycles(graph()) == []

    def test_the_model_imports_nothing_of_planner_but_errors_and_units(self):
        assert may_import("model") == {"errors", "units"}
        outside = {
            (m, t) for m, ts in graph().items() if part(m) == "model" for t in ts if part(t) not in may_import("model")
        }
        assert {(m, t) for m, t in outside if part(t) != "model"} == set()

    def test_no_core_module_imports_a_surface(self):
        """Surfaces (CLI, Excel, workbook, export) sit outside; the core never reaches out to them."""
        core = [m for m in graph() if part(m) not in SURFACES and m not in ("planner", "planner.__main__")]
        assert {(m, t) for m in core for t in graph()[m] if part(t) in SURFACES} == set()

    def test_the_docstrings_are_read(self):
        """The reader finds the named parts, a dotted module counting as its part, and no surface where none is named."""
        assert may_import("io") == {"errors"}
        assert {"api", "checks", "deploy", "engines"} <= may_import("serving") and "excel" not in may_import("serving")
        assert {"planner", "excel", "export", "workbook"} <= may_import("cli")

    @pytest.mark.parametrize("package", PACKAGES)
    def test_packages_import_what_their_docstring_allows(self, package):
        allowed = may_import(package) | {package}
        bad = {(m, t) for m, ts in graph().items() if part(m) == package for t in ts if part(t) not in allowed}
        assert bad == set()


class TestLayout:
    def test_at_most_a_dozen_modules_directly_in_planner(self):
        assert len(list(ROOT.glob("*.py"))) <= 12

    @pytest.mark.parametrize("package", PACKAGES)
    def test_every_package_says_what_it_holds(self, package):
        doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc.splitlines()) >= 3, package

    def test_docs_map_names_every_package_and_module(self):
        """docs/model.md's map of ``planner/`` (its ``text`` block under "The layout") names each package (``name/``)
        and each module directly in ``planner/`` (``name.py``), and nothing that is not there."""
        doc = (ROOT.parent / "docs" / "model.md").read_text(encoding="utf-8")
        block = doc.split("## The layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
        named = set(re.findall(r"\b(\w+)/", block)) - {"planner"}, set(re.findall(r"\b(\w+\.py)\b", block))
        modules = {p.name for p in ROOT.glob("*.py")} - {"__init__.py", "__main__.py"}
        assert named == (set(PACKAGES), modules)
