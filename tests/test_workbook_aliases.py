"""A GPU or model typed on Inputs as an alias the catalog takes (trial 19 F10): the CLI and the Excel functions read
"H100" as H100 SXM 80GB and "llama2-70b" as Llama-2-70B, while every workbook formula gave #N/A. The Calc sheet reads
the Inputs' GPU and models through the GPUs and Models sheets' alias tables (``calc.name_of``, the pattern the
precisions' ``PRECISION_OF`` follows), so LibreOffice recalculates a workbook with aliases typed to the values it
gives for the names themselves.
"""

from __future__ import annotations

import pytest
from workbook_support import recalculate_inputs, require_libreoffice, with_inputs

from planner.catalog import default_catalog
from planner.workbook.build import build_whatif
from planner.workbook.inputs import ALIAS_INPUTS
from planner.workbook.layout import INPUTS_SHEET, input_row, why_error_row

#: The opening's names, and aliases the catalog lists for them (catalogs/gpus.toml, catalogs/models/*.toml).
NAMES = {"gpu": "H100 SXM 80GB", "model": "Llama-2-70B", "compare_model": "LLaMA-65B"}
ALIASES = {"gpu": "h100", "model": "LLAMA2-70B", "compare_model": "huggyllama/llama-65b"}


class TestAliasTables:
    """The GPUs and Models sheets list each alias of their entries beside the name it stands for (folded)."""

    def test_every_alias_of_a_listed_entry_is_in_its_sheets_table(self):
        """Every alias the catalog lists for a GPU or model on the sheet is found, any case, as MATCH finds it."""
        spec = build_whatif(load=False)
        cat = default_catalog()
        for sheet, prefix, entries in (("GPUs", "gpu", cat.gpus), ("Models", "model", cat.models)):
            s = spec.sheet(sheet)
            column = lambda name: spec.name(name).ref.split("!")[1].split(":")[0].strip("$").split("$")[0]  # noqa: E731
            alias_col, name_col = column(f"{prefix}_aliases"), column(f"{prefix}_alias_names")
            assert alias_col in s.folded and name_col in s.folded
            table = {}
            for ref, cell in s.cells.items():
                if ref.startswith(alias_col) and ref[len(alias_col) :].isdigit() and ref[len(alias_col) :] != "1":
                    table[str(cell.value).lower()] = s.cells[f"{name_col}{ref[len(alias_col) :]}"].value
            names = {e.name.lower() for e in entries}
            for e in entries:
                for a in e.aliases:
                    assert table.get(a.lower(), e.name if a.lower() in names else None) == e.name, (sheet, a)

    def test_the_name_inputs_accept_an_alias(self):
        """The GPU, model and compare-model dropdowns warn about a name off the list (an alias is read as its
        entry), as the precisions' do; they refused "H200"."""
        spec = build_whatif(load=False)
        inputs = spec.sheet(INPUTS_SHEET)
        checked = {v.sqref: v for v in inputs.validations}
        for key in ALIAS_INPUTS:
            v = checked[f"B{input_row(key)}"]
            assert v.error_style == "warning" and "alias" in v.prompt, key
            assert len(v.prompt) <= 255 and len(v.error) <= 255, key  # Excel's limits


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    require_libreoffice()
    spec = build_whatif(load=False)  # the Load sheet records the Inputs as typed: an alias reads "changed" there
    return recalculate_inputs(spec, {"names": NAMES, "aliases": ALIASES}, tmp_path_factory.mktemp("aliases"))


@pytest.mark.libreoffice
def test_aliases_recalculate_to_the_values_of_the_names(books):
    """Every cell of every sheet but the Inputs' typed names recalculates alike with the aliases typed: no #N/A, the
    Error line empty, Calc's GPU and model rows the full names."""
    names, aliases = books["names"], books["aliases"]
    assert names[INPUTS_SHEET][f"D{why_error_row()}"].value in (None, "")
    typed = {f"B{input_row(k)}" for k in ALIASES}
    compared = 0
    for sheet in names.csv_by_sheet:
        a, b = names[sheet].cells, aliases[sheet].cells
        for ref in set(a) | set(b):
            if sheet == INPUTS_SHEET and ref in typed:
                continue
            assert a.get(ref) == b.get(ref), (sheet, ref, a.get(ref), b.get(ref))
            compared += 1
    assert compared > 5000
    assert aliases[INPUTS_SHEET][f"B{input_row('gpu')}"].value == "h100"
    calc = aliases["Calc"]
    assert [calc[f"C{r}"].value for r in (5, 6)] == ["H100 SXM 80GB", "Llama-2-70B"]


def test_refresh_and_export_take_an_alias_the_formulas_read(tmp_path):
    """``update.check_names`` (refresh, export) lets an alias of a listed GPU or model pass where the Calc sheet
    reads it through the alias table, and still refuses a spelling neither lists."""
    import openpyxl

    from planner.workbook.reader import WorkbookError
    from planner.workbook.update import check_listed_names
    from planner.workbook.writer import write_workbook

    spec = build_whatif(gpus=["H100 SXM 80GB"], models=["Llama-2-70B", "LLaMA-65B"], load=False)
    cat = default_catalog()
    path = write_workbook(with_inputs(spec, ALIASES), tmp_path / "aliases.xlsx")
    check_listed_names(openpyxl.load_workbook(path), path, cat)
    path = write_workbook(with_inputs(spec, {**ALIASES, "model": "llama_2_70b"}), tmp_path / "spelling.xlsx")
    with pytest.raises(WorkbookError, match="'llama_2_70b' is not a name the workbook's formulas look up"):
        check_listed_names(openpyxl.load_workbook(path), path, cat)


def test_export_reads_the_workbooks_own_alias_table(tmp_path):
    """Exported, a workbook is checked against the alias table it holds, not the catalog's aliases: an alias the
    catalog lists but the workbook's table does not (a table written before the catalog took it) is refused, since
    its formulas show #N/A."""
    import openpyxl

    from planner.workbook.reader import WorkbookError
    from planner.workbook.update import check_listed_names
    from planner.workbook.writer import write_workbook

    spec = build_whatif(gpus=["H100 SXM 80GB"], models=["Llama-2-70B", "LLaMA-65B"], load=False)
    path = write_workbook(with_inputs(spec, ALIASES), tmp_path / "aliases.xlsx")
    wb = openpyxl.load_workbook(path)
    sheet, ref = next(iter(wb.defined_names["gpu_aliases"].destinations))
    for row in wb[sheet][ref]:
        for cell in row:
            if str(cell.value).lower() == "h100":
                cell.value = "not-h100"
    wb.save(path)
    with pytest.raises(WorkbookError, match="'h100' is not a name the workbook's formulas look up"):
        check_listed_names(openpyxl.load_workbook(path), path, default_catalog())
