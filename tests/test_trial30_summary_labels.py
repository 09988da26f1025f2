"""Trial 30 F10 (a finance analyst's printed review): the Summary's key-figure labels were cut at their column's
edge in print ("Capex per month (over 36 months at an 8.0% cost o", "Total per year (P&L: straight-line depreciation
+ o") and, in the targets box, a label ran into its value ("group screening's TPOT is take13,500 / 4,586 tokens").
A label wider than its column now wraps and its row grows to hold its lines (checked by eye: the trial's chat70b.toml
exported and printed with LibreOffice, page 1 at 60 and 110 dpi, every label whole).

Widths are ``wrapped_lines``' rule (a line holds int(width x 1.15) - 2 characters: 44 in Summary's column A, 40
wide; 48 in column D, 44 wide); the review is test_trial26_money's: HAND's bought H100s at an 8% cost of capital.
"""

from __future__ import annotations

import openpyxl
import pytest
from test_trial26_money import BOUGHT_ONLY, review_of_text

from planner.export import render
from planner.export.xlsx_cells import LINE_PT, wrapped_lines

CAPEX = "Capex per month (over 36 months at an 8.0% cost of capital)"  # the trial's first cut label
PNL = "Total per year (P&L: straight-line depreciation + opex)"
CHARGE = "Capital charge per year (an 8.0% cost of capital: total per month x 12 less the P&L)"
CONTEXT = "Context memory holds / group screening's TPOT is taken at"


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    review = review_of_text(BOUGHT_ONLY + "\n[finance]\ncost_of_capital = 0.08\n")
    path = tmp_path_factory.mktemp("t30") / "s.xlsx"
    path.write_bytes(render(review, "xlsx"))
    return openpyxl.load_workbook(path)["Summary"]


def _label_cells(ws):
    """The label cells of the key figures (column A) and the targets (column D): those with a value beside them,
    from the figures' first row (9) to the Sensitivity heading."""
    end = next(r for r in range(1, ws.max_row + 1) if ws.cell(row=r, column=1).value == "Sensitivity (snapshot)")
    for r in range(9, end):
        for col in (1, 4):
            label, value = ws.cell(row=r, column=col), ws.cell(row=r, column=col + 1)
            if isinstance(label.value, str) and value.value is not None and label.coordinate not in ws.merged_cells:
                yield label


def test_the_trials_cut_labels_wrap_and_their_rows_hold_them(summary):
    ws = summary
    cells = {c.value: c for c in _label_cells(ws)}
    # 60, 55 and 84 characters in column A's 44 a line: 2, 2 and 2 lines (word breaks); 57 in column D's 48: 2
    for text, col, lines in ((CAPEX, "A", 2), (PNL, "A", 2), (CHARGE, "A", 2), (CONTEXT, "D", 2)):
        cell = cells[text]
        width = ws.column_dimensions[col].width
        assert cell.column_letter == col and len(text) > int(width * 1.15) - 2
        assert wrapped_lines(text, width) == lines
        assert cell.alignment.wrap_text and cell.alignment.vertical == "top"
        assert ws.row_dimensions[cell.row].height >= LINE_PT * lines + 3
    # a short label keeps its one unwrapped line (the page stays as it was)
    assert not cells["GPUs"].alignment.wrap_text


def test_every_summary_label_fits_its_column_or_wraps_in_a_row_tall_enough(summary):
    ws = summary
    labels = list(_label_cells(ws))
    assert len(labels) > 20  # the key figures and the targets, not an empty scan
    for cell in labels:
        width = ws.column_dimensions[cell.column_letter].width
        if cell.alignment.horizontal == "left":  # an indented label (the held-out rows) has that much less room
            width -= 2.0 * (cell.alignment.indent or 0)
        lines = wrapped_lines(cell.value, width)
        if lines > 1:
            assert cell.alignment.wrap_text, f"{cell.coordinate} {cell.value!r} is cut in print"
            assert (ws.row_dimensions[cell.row].height or 0) >= LINE_PT * lines + 3, cell.coordinate
