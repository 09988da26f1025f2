"""s174: five surface defects where one surface said or did otherwise than another; each rule has one owner now.

1. A context past a model's trained maximum: ``plan`` computes and flags it, the Excel functions computed it silently.
2. Fractional mean prompt lengths: ``plan --prompt-tokens 207.5`` took them, =TTFT_P95(...) refused them.
3. A rent of 0 per GPU-hour: the what-if workbook's reader took it, ``planner export`` refused it in other words.
4. A catalog folder without *.toml files: only =PLANNER_RELOAD refused it; the loader took it from $PLANNER_CATALOG.
5. A long value in a message: the workbook reader and ``planner.errors.shown_name`` cut it each their own way.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from cli_support import one_line, run

from planner.catalog import load_catalog
from planner.errors import SHOWN_NAME_CHARS, EmptyCatalogFolderError, shown_name
from planner.excel import functions as xf
from planner.workbook.reader import WorkbookError, read_inputs

ROOT = Path(__file__).resolve().parents[1]
WORKBOOK = ROOT / "workbooks" / "capacity-what-if.xlsx"


def _edited_workbook(tmp_path: Path, name: str, value: object) -> Path:
    """The shipped what-if workbook with the input cell of defined name ``name`` holding ``value``."""
    wb = openpyxl.load_workbook(WORKBOOK)
    sheet, ref = next(iter(wb.defined_names[name].destinations))
    wb[sheet][ref.replace("$", "")].value = value
    path = tmp_path / "edited.xlsx"
    wb.save(path)
    return path


class TestShownValue:
    def test_a_long_text_in_an_input_cell_is_quoted_as_shown_name_quotes_it(self, tmp_path):
        """A 400-character text in the context cell: the reader cut its repr at 57 characters and left the quote
        open ("'xxx... (400 characters)"); now it is ``shown_name``'s "'xxx...' (400 characters)", as an unknown
        name is quoted everywhere else."""
        text = "x" * 400
        with pytest.raises(WorkbookError) as err:
            read_inputs(_edited_workbook(tmp_path, "in_context", text))
        quoted = "'" + "x" * SHOWN_NAME_CHARS + "...' (400 characters)"
        assert str(err.value).endswith(f"got {quoted}"), str(err.value)

    def test_a_number_is_shown_unquoted_and_long_ones_are_cut_the_same_way(self):
        """A number is shown as Python writes it (no quotes: it was not text); a 400-digit one is cut at
        ``SHOWN_NAME_CHARS`` with its length, as text is."""
        assert shown_name(1e300) == "1e+300"
        assert shown_name("H10") == "'H10'"
        assert shown_name(10**399) == "1" + "0" * (SHOWN_NAME_CHARS - 1) + "... (400 characters)"


class TestCatalogFolderWithoutFiles:
    EXPECTED = "no *.toml catalog files in this folder; give the folder that holds your *.toml catalog files"

    def test_the_loader_refuses_it_with_a_named_error(self, tmp_path):
        """load_catalog read a folder with no *.toml file as an empty catalog; only =PLANNER_RELOAD checked."""
        with pytest.raises(EmptyCatalogFolderError) as err:
            load_catalog(tmp_path, use_env=False)
        assert str(err.value).startswith(f"{tmp_path}: {self.EXPECTED}") and err.value.folder == tmp_path

    def test_planner_catalog_naming_it_is_one_line_exit_2(self, tmp_path, monkeypatch):
        """$PLANNER_CATALOG naming a wrong (empty) folder planned from the shipped catalog without a word."""
        monkeypatch.setenv("PLANNER_CATALOG", str(tmp_path))
        said = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096"), 2)
        assert said == f"planner: error: {tmp_path}: {self.EXPECTED} (with [[gpu]], [[model]] or [[precision]] tables)"

    def test_reload_says_what_the_loader_says(self, tmp_path):
        """=PLANNER_RELOAD(folder) gives the loader's message, not a copy of the check."""
        assert xf.PLANNER_RELOAD(str(tmp_path)).startswith(f"catalog not reloaded: {tmp_path}: {self.EXPECTED}")
