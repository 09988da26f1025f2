"""The review's printed form (the PDF): the workbook's option tables turned so that options run across the page.

On screen each table is one row per option (sortable, filterable); printed so, Options, Costs, Details, Ownership and
Fleet by quarter are 5-30 columns wide and a few rows long, and each filled a page or two at 8 pt with most of the
page empty. Turned (one row per figure, one column per option, as finance compares options) they stack on one
sheet, "Options compared", at 11 pt, and a table moves to the next page only when the rest of this page would hold
less than ``MIN_SPLIT_ROWS`` of its rows. The sheets they come from stay in the file, hidden (the Summary's live box
reads Options), so nothing in the PDF is computed apart from the xlsx.

Rule for a page: the body height is A4 landscape's 595.3 pt less the top and bottom margins (0.7 in each); rows
are as tall as ``fit_row`` made them (13 pt a wrapped line + 3).
"""

from __future__ import annotations

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break
from openpyxl.worksheet.worksheet import Worksheet

from planner.export import breakeven
from planner.export import money_tables as money
from planner.export.records import Review
from planner.export.tables import Table, detail_keys, options_table, select, tco_table
from planner.export.xlsx_cells import (
    INDENT_CHARS,
    LINE_PT,
    THIN,
    WRAP,
    fit_row,
    header_row,
    page_setup,
    put_table_value,
    put_text,
    wrapped_lines,
)
from planner.io.paper import BASE_FONT_PT, LO_PT_PER_CHAR, MIN_PRINT_PT

#: Sheets shown turned on "Options compared" (hidden in the printed copy).
TURNED = ("Options", "Costs", "Details", "Ownership", "Break-even", "Fleet by quarter")
SHEET = "Options compared"
#: More options than this print as the screen tables do: turned, they would run several pages wide.
MAX_TURNED_OPTIONS = 8
LABEL_WIDTH = 30.0
#: Printable width of A4 landscape with 0.4 in margins: 10.89 in = 1,045 px at 96 px an inch.
PAGE_WIDTH_PX = (11.69 - 2 * 0.4) * 96


def option_width(n_options: int) -> float:
    """Characters per option column so the label and ``n_options`` columns fit one page width at 100% by Excel's
    measure (characters x 7 + 5 px), 3% to spare: 18 up to 6 options, 13 at 8. LibreOffice's substitute font is
    wider, so it prints the sheet fit to width a little below 100% (about 85%: 11-pt text at 9.4 pt); the page
    breaks, placed for 100%, then leave room at the foot of each page rather than run over it."""
    room_px = PAGE_WIDTH_PX * 0.97 - (LABEL_WIDTH * 7 + 5)
    return float(min(18, int((room_px / n_options - 5) / 7)))


#: Printable height of a page, in points: A4 landscape (595.3 pt) less 0.7 in top and bottom margins, less 5% for
#: the differences between our row heights and the printer's (so the printer never breaks a page before we do).
PAGE_BODY_PT = (595.3 - 2 * 0.7 * 72) * 0.95
#: A table starts on a new page unless the rest of this page holds its caption, header and this many rows.
MIN_SPLIT_ROWS = 4


def _tables(review: Review) -> list[tuple[str, Table]]:
    """The option tables of the workbook, as (caption, table), in the order of its sheets."""
    from planner.export.tables import main_keys

    full = options_table(review)
    return [
        ("Options, ranked by monthly cost", select(full, main_keys(review))),
        ("Total cost of ownership of the options that meet the targets", tco_table(review)),
        ("Details of each option", select(full, detail_keys(full))),
        ("The margin's price, year-1 cash, the horizon's total, commitments", money.ownership_table(review)),
        *[(breakeven.cumulative_heading(review), t) for t in (breakeven.cumulative_table(review),) if t.rows],
        ("GPUs each quarter (bought: GPUs owned so far)", money.phasing_table(review)),
    ]


def _turn(ws: Worksheet, caption: str, table: Table, top: int, used_pt: float, room_pt: float) -> tuple[int, float]:
    """Write ``table`` turned from row ``top``: a caption, a header of option names, one row per other column.

    Pages are broken here, not by the printer (``room_pt``: a page's height in the sheet's points): a table starts
    the next page unless this one holds all of it (a table shorter than a page) or its caption, header and
    ``MIN_SPLIT_ROWS`` rows (a longer one); split, it leaves at least
    ``MIN_SPLIT_ROWS`` rows for the next page, which repeats its header of option names. ``used_pt`` is how much of
    the current page is taken. Returns the next free row and the page's new ``used_pt``.
    """
    keys = [c.key for c in table.columns]
    at = keys.index("option")
    names = [table.columns[at].header, *(str(r[at]) for r in table.rows)]
    rows = [j for j in range(len(table.columns)) if j != at]
    heights = [_row_height(table, j, ws.column_dimensions["B"].width) for j in rows]
    head = _names_height(ws, names)

    def fitting(start: int, free: float) -> int:
        """How many rows from ``start`` fit in ``free`` points, leaving none or MIN_SPLIT_ROWS or more after them."""
        k, total = start, 0.0
        while k < len(rows) and total + heights[k] <= free:
            total += heights[k]
            k += 1
        if k < len(rows):
            k = min(k, len(rows) - MIN_SPLIT_ROWS)
        return k - start

    whole = 20 + head + sum(heights) <= room_pt  # a table that fits on one page is never split
    free = room_pt - used_pt - 20 - head
    if used_pt and (fitting(0, free) < min(MIN_SPLIT_ROWS, len(rows)) or (whole and sum(heights) > free)):
        ws.row_breaks.append(Break(id=top - 1))
        used_pt = 0.0
    put_text(ws.cell(row=top, column=1), caption)
    ws.cell(row=top, column=1).font = Font(bold=True, size=12)
    ws.row_dimensions[top].height = 20
    header_row(ws, top + 1, names)
    ws.row_dimensions[top + 1].height = head
    used_pt += 20 + head
    r, k = top + 2, 0
    while k < len(rows):
        n = max(fitting(k, room_pt - used_pt), 1)
        for j in rows[k : k + n]:
            _figure_row(ws, table, j, r)
            used_pt += ws.row_dimensions[r].height
            r += 1
        k += n
        if k < len(rows):  # the rest opens the next page under the option names again
            ws.row_breaks.append(Break(id=r - 1))
            header_row(ws, r, names)
            ws.row_dimensions[r].height = head
            used_pt = head
            r += 1
    return r, used_pt


def _names_height(ws: Worksheet, names: list[str]) -> float:
    lines = max(wrapped_lines(n, ws.column_dimensions[get_column_letter(i + 1)].width) for i, n in enumerate(names))
    return LINE_PT * max(lines, 2) + 3


def _row_height(table: Table, j: int, width: float) -> float:
    """Height ``fit_row`` gives the turned row of column ``j`` (its label and each option's value, wrapped)."""
    col = table.columns[j]
    texts = [col.header] + ([str(row[j]) for row in table.rows if row[j] is not None] if col.kind == "text" else [])
    widths = [w - INDENT_CHARS * WRAP.indent for w in [LABEL_WIDTH] + [width] * (len(texts) - 1)]  # as fit_row
    return LINE_PT * max(wrapped_lines(t, w) for t, w in zip(texts, widths, strict=True)) + 3


def _figure_row(ws: Worksheet, table: Table, j: int, r: int) -> None:
    """Row ``r``: column ``j``'s header, then each option's value, formatted by the column's kind."""
    col = table.columns[j]
    label = ws.cell(row=r, column=1)
    put_text(label, col.header)
    label.alignment, label.border = WRAP, THIN
    for i, row in enumerate(table.rows, start=2):
        put_table_value(ws.cell(row=r, column=i), row[j], col.kind, col.key)
    fit_row(ws, r)


def options_compared(wb: Workbook, review: Review, title: str, footer: str) -> Worksheet | None:
    """Add "Options compared" in place of the ``TURNED`` sheets (hidden, kept); None when there are more than
    ``MAX_TURNED_OPTIONS`` options (the screen tables print as they are)."""
    if len(review.results) > MAX_TURNED_OPTIONS:
        return None
    ws = wb.create_sheet(SHEET, index=wb.sheetnames.index(TURNED[0]))
    page_setup(ws, title, "Options side by side: each figure a row, each option a column", footer, None)
    ws.column_dimensions["A"].width = LABEL_WIDTH
    for i in range(len(review.results)):
        ws.column_dimensions[get_column_letter(i + 2)].width = option_width(len(review.results))
    room = PAGE_BODY_PT / print_scale(ws, len(review.results) + 1)
    top, used = 1, 0.0
    for caption, table in _tables(review):
        top, used = _turn(ws, caption, table, top, used, room)
        top += 1  # a blank row between tables
        used += 15.0
    for name in TURNED:
        if name in wb.sheetnames:  # Break-even: where an option meets the targets
            wb[name].sheet_state = "hidden"
    return ws


#: Smallest printed text (11-pt cells): a sheet scaled below MIN_PRINT_PT / 11 is not fitted to one page tall.
MIN_SCALE = MIN_PRINT_PT / BASE_FONT_PT
#: A sheet's last page is at least this share of a page; when it would be less, the last two pages share the rows.
MIN_LAST_PAGE = 0.4


def print_scale(ws: Worksheet, columns: int | None = None) -> float:
    """The scale LibreOffice prints the sheet at: fit to width (at most 100%) by ``LO_PT_PER_CHAR``, else the set one.
    ``columns``: how many columns the sheet will have (default: those with cells now)."""
    if not ws.sheet_properties.pageSetUpPr.fitToPage:
        return (ws.page_setup.scale or 100) / 100
    n = columns or ws.max_column
    chars = sum(ws.column_dimensions[get_column_letter(j)].width or 8.43 for j in range(1, n + 1))
    return min(1.0, PAGE_WIDTH_PX * 0.75 / (chars * LO_PT_PER_CHAR))


def break_pages(ws: Worksheet) -> int:
    """Break the sheet's pages ourselves (its row heights are known), so that no page is near-empty: a sheet just
    over one page is printed one page tall when that keeps text at 8 pt or more; otherwise, when the last page would
    hold less than ``MIN_LAST_PAGE`` of a page, the last two pages share their rows evenly. Repeated title rows count
    on every page. Returns the number of pages."""
    scale = print_scale(ws)
    titles = ws.print_title_rows
    first = int(str(titles).split(":")[-1].lstrip("$")) + 1 if titles else 1
    height = {r: ws.row_dimensions[r].height or 15.0 for r in range(1, ws.max_row + 1)}
    title_pt = sum(height[r] for r in range(1, first))
    room = PAGE_BODY_PT / scale - title_pt
    starts, used = [first], 0.0
    for r in range(first, ws.max_row + 1):
        if used and used + height[r] > room:
            starts.append(r)
            used = 0.0
        used += height[r]
    last = sum(height[r] for r in range(starts[-1], ws.max_row + 1))
    if len(starts) == 2 and ws.sheet_properties.pageSetUpPr.fitToPage:
        total = sum(height.values())
        if PAGE_BODY_PT / total >= MIN_SCALE:  # one page tall at 8 pt or more
            ws.page_setup.fitToHeight = 1
            return 1
    if len(starts) > 1 and last < MIN_LAST_PAGE * room:
        pair = [r for r in range(starts[-2], ws.max_row + 1)]
        half, acc = sum(height[r] for r in pair) / 2, 0.0
        for r in pair:
            if acc + height[r] > half:
                starts[-1] = max(r, starts[-2] + 1)
                break
            acc += height[r]
    for r in starts[1:]:
        ws.row_breaks.append(Break(id=r - 1))
    return len(starts)


#: LibreOffice's height of a row without a set height, and a page's whole body height (A4 landscape less 0.7 in top
#: and bottom margins), in the sheet's points at 100%: the README review's Summary (2026-12, LibreOffice 7.4) printed
#: rows 1-35 on page 1 and not row 36, which 14.2-14.7 pt rows on the 494.5-pt body do; ``break_pages``' 15 pt and
#: 95% of the body (``PAGE_BODY_PT``) put its page break three rows early.
LO_ROW_PT = 14.5
BODY_PT = 595.3 - 2 * 0.7 * 72
#: ``keep_together`` keeps rows together that would fill more than this share of the page they start on (rounding
#: between the estimate and the printer), and adds no break that would leave that page less full than its share below.
FIT_SHARE = 0.95
MIN_PAGE_BEFORE_BREAK = 0.25


def keep_together(ws: Worksheet, first: int, last: int) -> bool:
    """Start a new page at row ``first`` where rows ``first`` to ``last`` (a heading, a table's header and its rows)
    would otherwise be split across two pages by the printer (a trial: Summary's Sensitivity header was the last line
    of page 1, its rows on page 2). Where the printer breaks is estimated from the row heights at the fit scale
    (``print_scale``; ``LO_ROW_PT`` a row without a set height, ``BODY_PT`` a page); the break is added where the rows
    may not fit (``FIT_SHARE``) and the page before keeps at least ``MIN_PAGE_BEFORE_BREAK`` of its height. Returns
    whether it was added."""
    room = BODY_PT / print_scale(ws)
    manual = {b.id for b in ws.row_breaks.brk}
    height = {r: ws.row_dimensions[r].height or LO_ROW_PT for r in range(1, last + 1)}
    used = 0.0
    for r in range(1, first):
        if (used and used + height[r] > room) or (r - 1) in manual:
            used = 0.0
        used += height[r]
    block = sum(height[r] for r in range(first, last + 1))
    if used + block > FIT_SHARE * room and used >= MIN_PAGE_BEFORE_BREAK * room:
        ws.row_breaks.append(Break(id=first - 1))
        return True
    return False


__all__ = [
    "MAX_TURNED_OPTIONS", "SHEET", "TURNED", "break_pages", "keep_together", "options_compared", "print_scale",
]  # fmt: skip
