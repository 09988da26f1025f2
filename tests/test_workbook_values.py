"""Stored values: every formula of the what-if workbook carries the value readers that do not recalculate show.

The values come from LibreOffice recalculating a copy (planner.workbook.values); the numbers checked here are the
capacity model's own (planner.api) for the workbook's opening inputs: Llama 2 70B at 4,096 tokens on 4 x H100
(planner.workbook.inputs.OPENING).
"""

from __future__ import annotations

import zipfile

import pandas as pd
import pytest
from workbook_support import WHATIF_CLI_GROUP, require_libreoffice

from planner import api
from planner.io.xlsx_values import store_values

#: One worker builds the shared what-if workbook (conftest.whatif_cli_workbook) once (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group(WHATIF_CLI_GROUP)


class TestStoreValues:
    def test_each_kind_of_value_gets_its_cell_type(self):
        """A number as is, text t="str", TRUE t="b", #N/A t="e"; a cell without a value is left as it was."""
        xml = "".join(f'<c r="A{i}" s="1"><f>F{i}()</f><v /></c>' for i in range(1, 6))
        parts = {"xl/worksheets/sheet1.xml": xml.encode()}
        values = {("S", "A1"): 2.5, ("S", "A2"): "a<b", ("S", "A3"): True, ("S", "A4"): "#N/A"}
        out = store_values(parts, ["S"], values)["xl/worksheets/sheet1.xml"].decode()
        assert '<c r="A1" s="1"><f>F1()</f><v>2.5</v>' in out
        assert '<c r="A2" s="1" t="str"><f>F2()</f><v>a&lt;b</v>' in out
        assert '<c r="A3" s="1" t="b"><f>F3()</f><v>1</v>' in out
        assert '<c r="A4" s="1" t="e"><f>F4()</f><v>#N/A</v>' in out
        assert '<c r="A5" s="1"><f>F5()</f><v /></c>' in out


@pytest.fixture(scope="module")
def book(whatif_cli_workbook):
    """``planner workbook`` as a user runs it; built once (conftest.py)."""
    require_libreoffice()
    path, output = whatif_cli_workbook
    assert "no stored values" not in output
    return path


class TestWhatIfWorkbook:
    def test_no_formula_is_left_without_a_value(self, book):
        """None of the 1,805 formulas is written as an empty <v />."""
        with zipfile.ZipFile(book) as z:
            sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
            formulas = sum(z.read(n).decode().count("<f>") for n in sheets)
            assert formulas > 1000
            assert not any("</f><v />" in z.read(n).decode() or "</f><v/>" in z.read(n).decode() for n in sheets)

    def test_pandas_reads_the_models_numbers(self, book):
        """Levers, baseline column: max batch = api.max_batch for the opening inputs (117 sequences), read by pandas."""
        levers = pd.read_excel(book, sheet_name="Levers", header=None)
        row = levers[levers[0] == "Max batch memory holds"].iloc[0]
        assert row[2] == api.max_batch("H100", "Llama-2-70B", 4096, gpus=4) == 117
