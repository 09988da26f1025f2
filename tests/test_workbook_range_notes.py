"""The what-if workbook's range notes print readably for a GPU whose kernel curves are borrowed (trial 33 F12).

Trial 33 set Inputs to MI325X, Llama-3.3-70B, 2,560 tokens, fp8, 8 GPUs, batch 1, recalculated in LibreOffice and
printed: the Results sheet's "Range widened" note (251 characters, "... kernel curves of H100 SXM 80GB stand in on
MI325X (x1.57 either way: ...") sat on a one-line row sized for H100's notes and printed over "Range from" (398
characters on a 3-line row). Here the same Inputs are recalculated by LibreOffice and each note's text, as computed,
is wrapped at its merged range's width (textwrap, one character per column-width unit: the house's _line_height
allows 1.1 for the proportional font) and must fit its written row's height at 13.5 points a line.
"""

from __future__ import annotations

import textwrap

import openpyxl
import pytest
from openpyxl.utils import get_column_letter, range_boundaries
from workbook_support import recalculate_inputs, require_libreoffice

from planner.workbook.build import build_whatif
from planner.workbook.layout import RANGES_SHEET, RESULTS_SHEET

#: One worker computes this module's module-scoped fixture (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_workbook_range_notes")

#: trial 33's Inputs (/work/trial33-findings.md F12); H100 the GPU whose curves stand in, offered beside it
INPUTS = dict(gpu="MI325X", model="Llama-3.3-70B", context=2560, weight_precision="fp8", gpus=8, batch=1)
GPUS = ["H100 SXM 80GB", "MI325X"]
LINE_PT = 13.5  # the house's line height (planner.workbook.ranges_sheet._line_height, calc.py's wrapped rows)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The written book (heights, widths, merges) and MI325X's values recalculated by LibreOffice."""
    require_libreoffice()
    tmp = tmp_path_factory.mktemp("range-notes")
    spec = build_whatif(gpus=GPUS, models=[INPUTS["model"]], load=False)
    values = recalculate_inputs(spec, {"mi325x": INPUTS}, tmp)["mi325x"]
    written = openpyxl.load_workbook(tmp / "src" / "_base.xlsx")
    return written, values


def _row_of(ws, label: str) -> int:
    return next(c.row for c in ws["A"] if c.value == label)


def _fits(written, values, sheet: str, ref: str) -> tuple[str, int, float]:
    """The note's text, its wrapped lines at its merged range's width, and its row's written height."""
    ws = written[sheet]
    col, row = ref[0], int(ref[1:])
    merged = next(m for m in ws.merged_cells.ranges if ref in m)
    lo, _, hi, _ = range_boundaries(merged.coord)
    assert get_column_letter(lo) == col
    width = sum(ws.column_dimensions[get_column_letter(i)].width for i in range(lo, hi + 1))
    text = values[sheet][ref].value
    lines = len(textwrap.wrap(text, int(width)))
    return text, lines, ws.row_dimensions[row].height or 15


class TestMi325xRangeNotes:
    @pytest.mark.parametrize("label", ["Range widened", "Range from"])
    def test_the_results_notes_wrap_within_their_rows(self, book, label):
        written, values = book
        ref = f"B{_row_of(written[RESULTS_SHEET], label)}"
        text, lines, height = _fits(written, values, RESULTS_SHEET, ref)
        # the borrowed curves' sentence trial 33 saw cut ("... x1.57 either way: the borro")
        assert "kernel curves of H100 SXM 80GB stand in on MI325X" in text
        assert lines >= 2, text  # long enough to need more than the old one-line row
        assert lines * LINE_PT <= height, (label, len(text), lines, height)

    @pytest.mark.parametrize("label", ["Widened", "Note"])
    def test_the_ranges_answers_wrap_within_their_rows(self, book, label):
        written, values = book
        ws = written[RANGES_SHEET]
        ref = f"C{_row_of(ws, label)}"
        text, lines, height = _fits(written, values, RANGES_SHEET, ref)
        assert "stand in on MI325X" in text
        assert lines * LINE_PT <= height, (label, len(text), lines, height)

    @pytest.mark.parametrize(
        "label", ["Widening factor (product)", "Kernel curves of another vendor: miss (x)", "Widened, all"]
    )
    def test_the_ranges_query_notes_wrap_within_their_rows(self, book, label):
        written, values = book
        ws = written[RANGES_SHEET]
        ref = f"G{_row_of(ws, label)}"
        text, lines, height = _fits(written, values, RANGES_SHEET, ref)
        assert "MI325X" in text
        assert lines * LINE_PT <= height, (label, len(text), lines, height)
