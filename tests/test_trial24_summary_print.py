"""Trial 24 F17: the PDF review's first page cut a long key-figure value on the left ("vider than the target
allows"): the slow end's ``NOT_MET`` text (67 characters) right-aligned, unwrapped, in column B (22 characters) of the
Summary's key figures. A text value wider than its cell now wraps from the left and its row grows to hold it
(checked by eye on the trial's my/one.toml: page 1 rendered with pdftoppm shows "not met at the slow end: / latency
range wider than / the target allows" in three lines)."""

from __future__ import annotations

from openpyxl import Workbook

from planner.export.slow_end import NOT_MET
from planner.export.xlsx import SLOW_END_FIGURE, _figures
from planner.export.xlsx_cells import LINE_PT, wrapped_lines


def _sheet():
    ws = Workbook().active
    for col, width in zip("ABCDEF", (40, 22, 26, 44, 30, 12), strict=True):  # the Summary's widths (LIVE_WIDTH 30)
        ws.column_dimensions[col].width = width
    return ws


def test_a_long_text_value_wraps_in_its_cell_and_the_row_holds_it():
    ws = _sheet()
    figures = [
        ("Key figures (recommended option)", None, "text"),
        ("Price kind", "on-demand", "text"),
        (f"{SLOW_END_FIGURE}: GPUs (not applied)", NOT_MET, "text"),
        ("GPUs", 38, "int"),
    ]
    assert _figures(ws, figures, 9, 1) == 13
    lines = wrapped_lines(NOT_MET, 22)
    assert lines == 3  # 67 characters, 23 a line at width 22 (wrapped_lines' rule)
    cell = ws["B11"]
    assert cell.value == NOT_MET
    assert cell.alignment.wrap_text and cell.alignment.horizontal == "left" and cell.alignment.vertical == "top"
    assert ws.row_dimensions[11].height == LINE_PT * lines + 3
    # short values keep their one right-aligned line and the row its height
    for ref in ("B10", "B12"):
        assert ws[ref].alignment.horizontal == "right" and not ws[ref].alignment.wrap_text
    assert ws.row_dimensions[10].height is None and ws.row_dimensions[12].height is None
