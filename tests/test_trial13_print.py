"""Trial 13's printing and appearance findings (/tmp/trial13/findings.md, F1-F3, F7-F10, F14, F15, F17): what the
written what-if workbook and the functions example hold (openpyxl: widths, wrapping, print titles, formats, chart
ranges) and, where LibreOffice is installed, what its printed pages say (``soffice --convert-to pdf``, then
``pdftotext -layout`` per page).

Widths are in characters of the default font (Calibri 11); a bold 11-pt heading is taken as 1.1 characters a letter
and the 14-pt title as 14 / 11 x 1.1 (writer.STYLES), the measure ``_fits`` applies.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from workbook_support import require_libreoffice

from planner.io.libreoffice import convert
from planner.workbook.build import build_whatif
from planner.workbook.layout import LOAD_SHEET, WORKBOOK_FILE
from planner.workbook.load_sheet import ENGINE_ROW_LABEL, ENGINE_TABLE_TITLE
from planner.workbook.writer import write_workbook

#: One worker builds this module's workbook and its PDF (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_trial13_print")

BOOL_FORMAT = '"TRUE";"TRUE";"FALSE"'


@pytest.fixture(scope="module")
def spec():
    return build_whatif()  # with the Load sheet (F1, F2): ~8 s of serving simulation


@pytest.fixture(scope="module")
def written(spec, tmp_path_factory) -> Path:
    return write_workbook(spec, tmp_path_factory.mktemp("trial13") / WORKBOOK_FILE)


@pytest.fixture(scope="module")
def wb(written):
    return openpyxl.load_workbook(written)


@pytest.fixture(scope="module")
def pages(written, tmp_path_factory) -> list[str]:
    """The printed pages' text, as LibreOffice prints the written workbook (pdftotext -layout, one page each)."""
    require_libreoffice()
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) not installed")
    (pdf,) = convert(written, "pdf", tmp_path_factory.mktemp("trial13-pdf"))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")[:-1]


def _row_of(ws, text: str, col: str = "A") -> int:
    return next(c.row for c in ws[col] if c.value == text)


class TestF1LoadEngineRowPrintsWhole:
    """Load!B22, "50 values, rows 130-179", right-aligned in the 14-wide Used column, printed as "ues, rows 130-179"."""

    def test_the_used_and_now_cells_wrap_on_a_two_line_row(self, wb):
        ws = wb[LOAD_SHEET]
        r = _row_of(ws, ENGINE_ROW_LABEL)
        for col in "BC":
            assert ws[f"{col}{r}"].alignment.wrap_text, col
        longest = max(len(w) for w in ws[f"B{r}"].value.split())  # "values," or "130-181": no word is cut
        assert longest < ws.column_dimensions["B"].width
        assert ws.row_dimensions[r].height >= 2 * 13.5

    def test_it_prints_whole(self, pages):
        line = next(p for p in pages if ENGINE_ROW_LABEL in p).split(ENGINE_ROW_LABEL)[1]
        assert re.match(r"\s+50 values, rows", line), line[:60]


class TestF2LoadEngineTableHasAHeaderOnEveryPage:
    """The Load sheet's last 4 engine-parameter rows printed alone on a page, with no title and no column header."""

    def test_split_into_parts_of_a_page_each_under_the_subtitle_and_header(self, wb):
        from planner.workbook.load_sheet import ENGINE_ROWS_PER_PAGE

        ws = wb[LOAD_SHEET]
        starts = [c.row for c in ws["A"] if str(c.value).startswith(ENGINE_TABLE_TITLE)]
        assert len(starts) == 2  # 50 parameters, at most 30 a page: two parts of 25
        breaks = {b.id for b in ws.row_breaks.brk}
        ends = [s - 1 for s in starts]
        assert set(ends) <= breaks  # each part starts a page
        last = max(c.row for c in ws["D"] if c.value is not None)
        for start, end in zip(starts, [*ends[1:], last], strict=True):
            assert ws[f"B{start + 1}"].value == "Used" and ws[f"C{start + 1}"].value == "Assumptions now"
            assert end - (start + 1) <= ENGINE_ROWS_PER_PAGE

    def test_every_printed_page_of_the_table_has_its_header(self, pages):
        """LibreOffice's pages: each one listing engine parameters (sparse_mla_kernel, ...) names the columns."""
        rows = re.compile(r"^\s*(pipeline_seqs_per_micro_batch|sparse_mla_prefill_max_heads)\s+\S+\s+\S+\s+yes", re.M)
        last = [p for p in pages if rows.search(p)]  # the Load table's last rows (Assumptions' have no "yes")
        assert len(last) == 1 and ENGINE_TABLE_TITLE in last[0]
        table = [p for p in pages if ENGINE_TABLE_TITLE in p]
        assert len(table) == 2
        for p in table:
            assert "Assumptions now" in p and "Matches" in p


class TestF3SwitchesShowTrueFalse:
    """Six of Assumptions' eight TRUE/FALSE switches printed 1 / 0 in LibreOffice: a General-format boolean shows as
    1 / 0 where "TRUE" does not fit before a filled next cell (their Unit "TRUE/FALSE"), TRUE / FALSE where it may
    overflow into an empty one (kv_group_padding's and kv_heads_any_split's Unit was blank). Every boolean cell
    now has the format Precisions' KV-cache column had, which reads TRUE / FALSE either way."""

    def test_every_boolean_cell_has_the_true_false_format(self, wb):
        seen = set()
        for ws in wb.worksheets:
            for row in ws.iter_rows():
                for c in row:
                    if isinstance(c.value, bool):
                        assert c.number_format == BOOL_FORMAT, (ws.title, c.coordinate)
                        seen.add(ws.title)
        assert seen == {"Assumptions", "Load", "Precisions"}

    def test_the_load_sheets_now_column_has_it_too(self, wb):
        ws = wb[LOAD_SHEET]
        r = _row_of(ws, "kernel_curves")
        assert ws[f"B{r}"].value is True and ws[f"C{r}"].number_format == BOOL_FORMAT

    def test_every_switch_names_its_unit(self, wb):
        ws = wb["Assumptions"]
        units = {ws[f"C{c.row}"].value for c in ws["B"] if isinstance(c.value, bool)}
        assert units == {"TRUE/FALSE"}

    def test_they_print_true_or_false(self, pages):
        assumptions = "".join(p for p in pages if p.lstrip().startswith("Assumptions: the vllm engine profile"))
        for name in ("use_engine_visible_memory", "kv_group_padding", "kernel_curves", "fp8_kv_at_16_bit_rate"):
            value = re.search(rf"^{name}\s+(\S+)", assumptions, re.M).group(1)
            assert value in ("TRUE", "FALSE"), (name, value)


def _shown_text_cells(ws, header: str):
    """The cells of the column headed ``header`` (row 1) that hold text, and that column's width."""
    col = next(c.column_letter for c in ws[1] if c.value == header)
    assert not ws.column_dimensions[col].hidden, header
    return [c for c in ws[col][1:] if isinstance(c.value, str)], ws.column_dimensions[col].width


class TestF10PriceQuotesPrintWhole:
    """The GPUs sheet printed "median of 2 quotes: Modal 2.50 (2026-05-07), Hyperstack 1." (A100 SXM 80GB): the Price
    provider column was 48 wide (catalog_sheets.MAX_TEXT_WIDTH) for a 75-character text, cut at the next column."""

    def test_each_quote_fits_its_column_or_wraps_on_a_row_tall_enough(self, wb):
        ws = wb["GPUs"]
        for header in ("Price provider", "Reserved quote (provider, date)", "Spot quote (provider, date)"):
            cells, width = _shown_text_cells(ws, header)
            assert cells, header
            for c in cells:
                if len(c.value) + 1 > width:
                    lines = math.ceil(len(c.value) * 1.1 / width)
                    assert c.alignment.wrap_text and ws.row_dimensions[c.row].height >= 13.5 * lines, c.coordinate

    def test_the_median_quotes_print_whole(self, pages):
        from planner.catalog import default_catalog

        quotes = [g.price("on-demand").provider for g in default_catalog().gpus if g.price("on-demand")]
        medians = [q for q in quotes if q.startswith("median of")]
        assert len(medians) >= 5  # A100 SXM 80GB, H100 SXM, H200, B200, RTX A6000, ...
        text = "".join(pages)
        for q in medians:
            assert q in text, q

    def test_every_shown_catalog_text_fits_or_wraps(self, wb):
        """The rule on every catalog table (catalog_sheets._table_sheet): a shown text column grows to its longest
        text up to 76 characters; a longer text wraps on a row tall enough."""
        checked = 0
        for title in ("GPUs", "Models", "Precisions"):
            ws = wb[title]
            (table,) = ws.tables.values()  # its rows: the footnote below is a merged note (F7)
            for row in ws[table.ref][1:]:
                for c in row:
                    width = ws.column_dimensions[c.column_letter].width
                    if c.data_type != "s" or ws.column_dimensions[c.column_letter].hidden:
                        continue
                    checked += 1
                    if len(c.value) + 1 > width:
                        assert c.alignment.wrap_text, (title, c.coordinate)
                        assert ws.row_dimensions[c.row].height >= 13.5 * math.ceil(len(c.value) * 1.1 / width)
        assert checked > 300
