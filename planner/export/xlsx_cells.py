"""Cell-level helpers of the review workbook: text that stays text, formulas that carry their value, page setup.

openpyxl never computes a formula and writes it with an empty cached value, so ``pandas.read_excel`` and
previews that do not recalculate (mail, phones, file viewers) would show blanks. ``Cache`` records the value
the Python model computed for each formula cell, and ``store_cached_values`` writes it into the saved sheet
XML as the cell's cached value; a spreadsheet program recalculates it anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.worksheet.worksheet import Worksheet

from planner.io.safetext import MAX_HEADER_CHARS, cell_text, header_text, write_text, xlsx_text
from planner.io.xlsx_values import store_values
from planner.units import is_gb_unit

NUMBER_FORMATS = {
    "int": "#,##0",
    "usd": '"$"#,##0',
    "usd2": '"$"#,##0.00',
    "pct": "0%",
    "ms": '0.0" ms"',
    "s": '0.00" s"',
    "x": "#,##0.0",
    "text": "@",
}
HEAD_FILL = PatternFill("solid", fgColor="1F3864")
HEAD_FONT = Font(bold=True, color="FFFFFF")
REC_FILL = PatternFill("solid", fgColor="E2EFDA")
NO_FILL = PatternFill("solid", fgColor="F2F2F2")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
LIVE_FILL = PatternFill("solid", fgColor="DDEBF7")
THIN = Border(bottom=Side(style="thin", color="BFBFBF"))
#: Wrapped text, left-aligned and indented one level, so that it stands clear of a right-aligned number in the
#: column before it (a "general" alignment ignores the indent: "$1,973,251H100, bought" in LibreOffice's PDF).
WRAP = Alignment(wrap_text=True, vertical="top", horizontal="left", indent=1)
#: Characters of a column's width one indent level takes (LibreOffice: about 10 pt, characters about 6 pt).
INDENT_CHARS = 2.0
NUM = Alignment(vertical="top", horizontal="right", indent=2)
CENTER = Alignment(vertical="top", horizontal="center")
NOTE_FONT = Font(italic=True, color="595959")
LINE_PT = 13.0


def safe_text(value) -> str:
    """User or catalog text made safe for a chart title or a series name (planner.io.safetext's rule)."""
    return xlsx_text(value)


def put_text(cell, value) -> None:
    """Write user or catalog text as a text cell (never a formula), whatever its first character."""
    write_text(cell, value)


@dataclass
class Cache:
    """Computed values of formula cells, by sheet title and coordinate."""

    values: dict[tuple[str, str], float | str] = field(default_factory=dict)

    def formula(self, ws: Worksheet, coord: str, formula: str, value: float | str | None) -> None:
        """A live formula cell whose cached value is what the Python model computed."""
        ws[coord] = formula
        if value is not None:
            self.values[(ws.title, coord)] = cell_text(value) if isinstance(value, str) else value


def store_cached_values(parts: dict[str, bytes], sheet_titles: list[str], cache: Cache) -> dict[str, bytes]:
    """The saved workbook's parts with each recorded formula's value filled in (``planner.io.xlsx_values``)."""
    return store_values(parts, sheet_titles, cache.values)


def page_setup(ws: Worksheet, title: str, subtitle: str, footer: str, title_rows: str | None = None) -> None:
    """Landscape A4, one page wide; every page titled (header) and numbered (footer)."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.7
    ws.page_margins.header = ws.page_margins.footer = 0.3
    if title_rows:
        ws.print_title_rows = title_rows
    titled_pages(ws, title, subtitle, footer)


def titled_pages(ws: Worksheet, title: str, subtitle: str, footer: str, fields: str = "") -> None:
    """Every printed page of ``ws`` titled and numbered: the header ``title`` (bold, left) and ``subtitle`` (right),
    the footer ``footer`` (left; then ``fields``, header codes kept as codes: "&D" the date printed, "&F" the file)
    and "page &P of &N" (right). The budget review's pages and the what-if workbook's (trial 19 F8) alike."""
    # each of header and footer holds 255 characters, codes included: the title and subtitle share theirs
    ws.oddHeader.left.size = ws.oddHeader.right.size = 10
    ws.oddHeader.left.text, ws.oddHeader.right.text = "&B&B", ""
    room = MAX_HEADER_CHARS - len(str(ws.oddHeader))
    sub = header_text(subtitle, max(room - len(header_text(title)), room // 2))
    ws.oddHeader.left.text = "&B" + header_text(title, room - len(sub)) + "&B"
    ws.oddHeader.right.text = sub
    ws.oddFooter.left.size = ws.oddFooter.right.size = 8
    ws.oddFooter.left.text, ws.oddFooter.right.text = "", "page &P of &N"
    ws.oddFooter.left.text = header_text(footer, MAX_HEADER_CHARS - len(str(ws.oddFooter)) - len(fields)) + fields


def header_row(ws: Worksheet, row: int, headers: list[str], col: int = 1) -> None:
    for j, h in enumerate(headers):
        c = ws.cell(row=row, column=col + j)
        put_text(c, h)
        c.font, c.fill = HEAD_FONT, HEAD_FILL
        c.alignment = Alignment(wrap_text=True, vertical="center", horizontal="center")


def wrapped_lines(text: str, width: float) -> int:
    """Lines a wrapped text takes in a column ``width`` characters wide (a little pessimistic, as renderers differ).

    A line holds ``int(width x 1.15) - 2`` characters (two short of what LibreOffice fits, for other renderers);
    words move whole to the next line, breaking only at a space or after a hyphen, as LibreOffice and Excel wrap
    ("Hyperstack (reserved contract), 2026-08-26" in a 14-wide column: 4 lines, not the 3 its 42 characters fill;
    words are laid out one character short of what LibreOffice fits, since the margin above counted the breaks)."""
    per_line = max(int(width * 1.15) - 2, 1)
    return sum(max(-(-len(part) // per_line), _word_lines(part, per_line + 1)) for part in str(text).split("\n"))


def _word_lines(part: str, per_line: int) -> int:
    """Lines one paragraph takes, wrapped greedily at spaces and after hyphens (a piece wider than a line is cut)."""
    lines, used = 1, 0
    for word in part.split():
        for k, piece in enumerate(re.findall(r"[^-]*-|[^-]+", word)):
            need = len(piece) + (1 if used and k == 0 else 0)  # the space before a word, not before a piece
            if used and used + need > per_line:
                lines, used, need = lines + 1, 0, len(piece)
            while need > per_line:
                lines, need = lines + 1, need - per_line
            used += need
    return lines


def row_lines(ws: Worksheet, row: int) -> int:
    """Lines the row's tallest wrapped text cell takes (``wrapped_lines`` in its column, less its indent); 1 without."""
    lines = 1
    for cell in ws[row]:
        if isinstance(cell.value, str) and cell.data_type == "s" and cell.alignment.wrap_text:
            width = ws.column_dimensions[cell.column_letter].width or 10
            if cell.alignment.horizontal == "left":  # the indent narrows the text
                width -= INDENT_CHARS * (cell.alignment.indent or 0)
            lines = max(lines, wrapped_lines(cell.value, width))
    return lines


def fit_row(ws: Worksheet, row: int, min_lines: int = 1) -> None:
    """Set the row's height to hold its tallest wrapped cell (spreadsheets do not autofit rows openpyxl wrote)."""
    ws.row_dimensions[row].height = LINE_PT * max(min_lines, row_lines(ws, row)) + 3


def put_table_value(cell, value, kind: str, key: str) -> None:
    """One value of a review table in its cell: text wrapped (never a formula), a number in its column kind's format
    (NaN and None blank), the rank centred; a thin rule under it."""
    if kind == "text":
        if value is not None:
            put_text(cell, value)
        cell.alignment = WRAP
    else:
        cell.value = None if value is None or (isinstance(value, float) and value != value) else value
        cell.number_format = NUMBER_FORMATS[kind]
        cell.alignment = CENTER if key == "rank" else NUM
    cell.border = THIN


def number_format_for(value: float, unit: str) -> str:
    """How an Assumptions number shows: shares as %, memory in GB to 2 decimals (85.90, as the what-if workbook),
    whole numbers with separators, others to 3 decimals."""
    if unit == "share":
        return "0%"
    if is_gb_unit(unit):  # "GB" or "GB (80 GiB)"
        return "#,##0.00"
    if float(value).is_integer():
        return "#,##0"
    return "#,##0.00#" if abs(value) < 1000 else "#,##0.0"
