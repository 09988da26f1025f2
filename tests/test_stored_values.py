"""Every workbook planner writes carries a stored value for every formula, so previews, mail clients and pandas
(which do not recalculate) show numbers: ``planner workbook``, ``planner workbook refresh``, ``planner addin example``
and ``planner export`` to xlsx.

A formula cell "has a value" when openpyxl's data_only read gives one, or, for a formula whose result is empty text,
when the cell is stored as text (t="str") with its empty <v></v>: openpyxl reads that back as None too.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from test_export import review_of, write_scenario
from workbook_support import WHATIF_CLI_GROUP, require_libreoffice

from planner.cli import main
from planner.export import render

#: One worker builds the shared what-if workbook (conftest.whatif_cli_workbook) once (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group(WHATIF_CLI_GROUP)


def formulas_without_values(path: Path) -> list[str]:
    """Formula cells ("Sheet!B5"), those with an <f> element in the sheet's XML, whose stored value is missing."""
    values = openpyxl.load_workbook(path, data_only=True)
    missing = []
    for title, coord, attrs, stored in _formula_cells(path, values.sheetnames):
        if values[title][coord].value is not None:
            continue
        if not (stored == "" and 't="str"' in attrs):  # empty text is a value
            missing.append(f"{title}!{coord}")
    return missing


_FORMULA = re.compile(r'<c r="([A-Z]+\d+)"([^>]*)><f[^>]*(?:/>|>.*?</f>)(?:<v\s*/>|<v>(.*?)</v>)?')


def _formula_cells(path: Path, titles: list[str]) -> list[tuple[str, str, str, str | None]]:
    """(sheet, coordinate, the cell's attributes, its stored value text or None) of every formula cell."""
    found = []
    with zipfile.ZipFile(path) as z:
        for i, title in enumerate(titles, start=1):
            xml = z.read(f"xl/worksheets/sheet{i}.xml").decode()
            found += [(title, c, attrs, v or "") for c, attrs, v in _FORMULA.findall(xml)]
    return found


def formula_count(path: Path) -> int:
    return len(_formula_cells(path, openpyxl.load_workbook(path, read_only=True).sheetnames))


@pytest.fixture(scope="module")
def whatif(whatif_cli_workbook):
    """``planner workbook`` as a user runs it (LibreOffice stores the values); built once (conftest.py)."""
    require_libreoffice()
    return whatif_cli_workbook[0]


@pytest.mark.libreoffice
class TestEveryWrittenWorkbook:
    def test_the_what_if_workbook(self, whatif):
        """``planner workbook``: 2,000 formulas and more, none without its value."""
        assert formula_count(whatif) > 2000
        assert formulas_without_values(whatif) == []

    def test_a_refreshed_copy(self, whatif, tmp_path):
        """``planner workbook refresh`` rewrites the catalog sheets with openpyxl, which drops every stored value;
        refresh stores them again (a user's own formula sheet included)."""
        copy = tmp_path / "copy.xlsx"
        shutil.copyfile(whatif, copy)
        book = openpyxl.load_workbook(copy)
        mine = book.create_sheet("Mine")
        mine["A1"] = "=Results!B5*2"
        book.save(copy)
        assert formulas_without_values(copy)  # openpyxl's save lost them
        r = CliRunner().invoke(main, ["workbook", "refresh", str(copy)])
        assert r.exit_code == 0, r.output
        assert "no stored values" not in r.output
        assert formulas_without_values(copy) == []
        assert isinstance(openpyxl.load_workbook(copy, data_only=True)["Mine"]["A1"].value, (int, float))


class TestWithoutLibreOffice:
    def test_the_functions_example(self, tmp_path):
        """``planner addin example``: each add-in formula stores what the same function returned in Python (no
        spreadsheet without the add-in computes them): the ridge point, 295.34 FLOP/B, and the unknown GPU's #N/A."""
        path = tmp_path / "f.xlsx"
        r = CliRunner().invoke(main, ["addin", "example", str(path)])
        assert r.exit_code == 0, r.output
        assert formula_count(path) >= 20
        assert formulas_without_values(path) == []
        values = openpyxl.load_workbook(path, data_only=True)
        assert values["Functions"]["D2"].value == pytest.approx(values["Functions"]["E2"].value)
        assert values["Functions"]["D15"].value == "#N/A"
        assert values["Catalog"]["A2"].value == "A100 SXM 40GB"

    def test_the_review_workbook(self, tmp_path):
        """``planner export`` to xlsx: every formula (Options' monthly cost and live rank, Summary's live box) has
        the value Python computed."""
        path = tmp_path / "r.xlsx"
        path.write_bytes(render(review_of(write_scenario(tmp_path)), "xlsx"))
        assert formula_count(path) > 5
        assert formulas_without_values(path) == []
