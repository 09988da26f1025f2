"""How a sheet prints: one page wide where its text stays legible, else over several pages wide at a fixed scale.

Every sheet is fit to one A4 page wide (any number tall), which shrinks a wide sheet with it: the GPUs and Models
tables (37 and 35 shown columns, ~500 characters) printed their 11-pt text at about 2.5 pt. A sheet whose fit would
print below ``MIN_PRINT_PT`` in Excel prints instead at a fixed scale of ``MIN_PRINT_PT`` or more over as few pages
wide as that takes: its columns split into groups of about even width (column breaks), its title columns (the
frozen ones, else column A) and title rows repeated on every page.

Two measures of a column's printed width: Excel's (Calibri: 7 px, 5.25 pt, a character of width) decides whether a
sheet fits one page wide; LibreOffice's, the wider (``LO_PT_PER_CHAR``), sizes the column groups, so that a group
fits its page in both (a group too wide for the page would be split again by the program, a page of one or two
columns). LibreOffice without Calibri or its metric twin Carlito prints a sheet fit to width at 5.25 / 7 of Excel's
size: 6 pt for a sheet at Excel's 8 pt.
"""

from __future__ import annotations

from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.utils.cell import range_boundaries
from openpyxl.worksheet.pagebreak import Break
from openpyxl.worksheet.worksheet import Worksheet

from planner.io.paper import (
    A4_IN,
    BASE_FONT_PT,
    EXCEL_PT_PER_CHAR,
    LO_PT_PER_CHAR,
    MIN_PRINT_PT,
    MIN_PRINT_SCALE_PCT,
)

#: Share of the page a column group may fill at its scale: room for the measure being a little off.
FILL = 0.97
#: Margins (inches) of a sheet printed over several pages wide (openpyxl's default: 0.75 left and right, 1 top and
#: bottom): the table gets 7% more of a page's width, 16% more of its height.
SPLIT_MARGIN_IN = 0.5


def printable_width_pt(ws: Worksheet) -> float:
    """The page's width between the left and right margins, in points."""
    paper = A4_IN[1] if ws.page_setup.orientation == "landscape" else A4_IN[0]
    return (paper - (ws.page_margins.left or 0.0) - (ws.page_margins.right or 0.0)) * 72


def shown_columns(ws: Worksheet) -> list[tuple[int, float]]:
    """(column index, width in characters) of each column that prints (not hidden), A to the last with cells."""
    out = []
    for j in range(1, ws.max_column + 1):
        dim = ws.column_dimensions.get(get_column_letter(j))
        if dim is not None and dim.hidden:
            continue
        out.append((j, (dim.width if dim is not None and dim.width else 8.43)))
    return out


def title_columns(ws: Worksheet) -> list[int]:
    """Indices of the columns repeated on every printed page (``print_title_cols``), none if not set."""
    titles = ws.print_title_cols
    if not titles:
        return []
    first, last = (column_index_from_string(c.strip("$")) for c in str(titles).split(":"))
    return list(range(first, last + 1))


def column_pages(ws: Worksheet) -> list[list[tuple[int, float]]]:
    """The shown columns on each printed page across, title columns repeated on each, as the page setup splits them
    (fit to width: one page; a fixed scale: at each column break)."""
    cols = shown_columns(ws)
    titles = set(title_columns(ws))
    head = [c for c in cols if c[0] in titles]
    breaks = sorted(b.id for b in ws.col_breaks.brk) if not ws.sheet_properties.pageSetUpPr.fitToPage else []
    pages: list[list[tuple[int, float]]] = [[]]
    for j, w in cols:
        if j in titles:
            continue
        while breaks and j > breaks[0]:
            breaks.pop(0)
            if pages[-1]:
                pages.append([])
        pages[-1].append((j, w))
    return [head + body for body in pages]


def print_scale(ws: Worksheet, pt_per_char: float = EXCEL_PT_PER_CHAR) -> float:
    """The scale the sheet prints at: fit to one page wide (at most 100%) by ``pt_per_char`` (Excel's measure, or
    ``LO_PT_PER_CHAR``), else the set scale."""
    if ws.sheet_properties.pageSetUpPr.fitToPage:
        if ws.page_setup.fitToWidth != 1:
            raise ValueError(f"{ws.title}: fit to {ws.page_setup.fitToWidth} pages wide is not modelled")
        chars = sum(w for _, w in shown_columns(ws))
        return min(1.0, printable_width_pt(ws) / (chars * pt_per_char))
    return (ws.page_setup.scale or 100) / 100


def _groups(widths: list[float], cap: float) -> list[int]:
    """Sizes of the groups greedily packed from ``widths`` with each at most ``cap`` (a wider column alone)."""
    sizes, used = [0], 0.0
    for w in widths:
        if sizes[-1] and used + w > cap:
            sizes.append(0)
            used = 0.0
        sizes[-1] += 1
        used += w
    return sizes


def legible_print(ws: Worksheet) -> None:
    """Keep the sheet fit to one page wide when that prints at ``MIN_PRINT_PT`` or more in Excel; else print it at
    73% (``MIN_PRINT_PT``) with 0.5-in margins over as few pages wide as LibreOffice's measure allows, its columns
    split into groups as even in width as that number of pages allows, its title columns (column A when none are
    set) repeated on each page. A fixed scale rather than a larger one fitting the widest group: fewer pages down."""
    if print_scale(ws) * BASE_FONT_PT >= MIN_PRINT_PT:
        return
    if not ws.print_title_cols:
        ws.print_title_cols = "A:A"
    margins = ws.page_margins  # a table over several pages gets as much of each page as printers allow
    margins.left = margins.right = margins.top = margins.bottom = SPLIT_MARGIN_IN
    margins.header = margins.footer = 0.3
    titles = set(title_columns(ws))
    cols = shown_columns(ws)
    head = sum(w for j, w in cols if j in titles)
    body = [(j, w) for j, w in cols if j not in titles]
    widths = [w for _, w in body]
    least = MIN_PRINT_SCALE_PCT / 100  # the smallest scale allowed, 73%
    page_chars = printable_width_pt(ws) * FILL / (LO_PT_PER_CHAR * least)
    room = max(page_chars - head, max(widths))
    n = len(_groups(widths, room))
    # the narrowest cap that still packs into n pages: the pages as even as the columns allow
    sums = sorted({sum(widths[a:b]) for a in range(len(widths)) for b in range(a + 1, len(widths) + 1)})
    cap = next(s for s in sums if s >= max(widths) and len(_groups(widths, s)) <= n)
    sizes = _groups(widths, cap)
    scale = round(100 * least)
    ws.sheet_properties.pageSetUpPr.fitToPage = False
    ws.page_setup.scale = scale
    end = 0
    for size in sizes[:-1]:
        end += size
        ws.col_breaks.append(Break(id=body[end - 1][0], max=1048575))  # the page ends after this column


#: A block of rows (a sheet, or the rows between two of its page breaks) running onto a further page down leaves that
#: last page at least this share of a page's room; when it would hold less, the last two pages share the rows
#: evenly (planner.export.print_layout.MIN_LAST_PAGE, the review's rule). s211's two workstation GPUs left the GPUs
#: table's last two rows and its note alone on a page of each group of columns (four pages of 4-6 rows).
MIN_LAST_PAGE = 0.4
#: The default row height in points (openpyxl writes the sheets' defaultRowHeight 15; LibreOffice keeps it).
ROW_PT = 15.0


def printable_height_pt(ws: Worksheet) -> float:
    """The page's height between the top and bottom margins, in points (the header and footer print in the
    margins: a what-if page of GPUs at 73% held rows 1-34, 716 pt, of the 717 this gives)."""
    paper = A4_IN[0] if ws.page_setup.orientation == "landscape" else A4_IN[1]
    return (paper - (ws.page_margins.top or 0.0) - (ws.page_margins.bottom or 0.0)) * 72


def _title_rows(ws: Worksheet) -> range:
    titles = ws.print_title_rows
    if not titles:
        return range(1, 1)
    first, last = (int(r.strip("$")) for r in str(titles).split(":"))
    return range(first, last + 1)


def last_printed_row(ws: Worksheet) -> int:
    """The last row with a value in a shown column (a merged cell counts its whole range): rows below, and cells of
    folded columns, print nothing."""
    hidden = {
        j for j in range(1, ws.max_column + 1) if (d := ws.column_dimensions.get(get_column_letter(j))) and d.hidden
    }
    last = max(
        (c.row for row in ws.iter_rows() for c in row if c.value is not None and c.column not in hidden), default=0
    )
    for rng in ws.merged_cells.ranges:
        c0, r0, _, r1 = range_boundaries(str(rng))
        if c0 not in hidden and ws.cell(r0, c0).value is not None:
            last = max(last, r1)
    return last


def row_height_pt(ws: Worksheet, r: int) -> float:
    """A row's printed height at 100%: its set height, the sheet's default without one, 0 hidden."""
    dim = ws.row_dimensions.get(r)
    if dim is not None and dim.hidden:
        return 0.0
    if dim is not None and dim.height is not None:
        return dim.height
    return ws.sheet_format.defaultRowHeight or ROW_PT


def pages_down(ws: Worksheet) -> list[list[int]]:
    """The first row of each page down, per block of rows between the sheet's page breaks, as a printer fills a page
    with rows until the next does not fit (the title rows repeated on each page after the first)."""
    last = last_printed_row(ws)
    titles = _title_rows(ws)
    scale = print_scale(ws, LO_PT_PER_CHAR)
    title_pt = sum(row_height_pt(ws, r) for r in titles)
    room = printable_height_pt(ws) / scale
    ends = sorted(b.id for b in ws.row_breaks.brk if b.id < last)
    blocks = []
    for first, end in zip([1] + [e + 1 for e in ends], [*ends, last], strict=True):
        starts, used = [first], title_pt if first > titles.stop - 1 and titles else 0.0
        for r in range(first, end + 1):
            h = row_height_pt(ws, r)
            if used > title_pt and used + h > room:
                starts.append(r)
                used = title_pt
            used += h
        blocks.append(starts)
    return blocks


def no_near_empty_page(ws: Worksheet) -> None:
    """Where a block of rows runs onto a further page down that its rows would fill less than ``MIN_LAST_PAGE`` of,
    break its last two pages between rows at half their height (together under 1.4 pages: each under 0.7 and a
    row), the title rows repeated on both: no page of a few rows alone, and no text shrunk below the sheet's scale. Only sheets printed at a fixed
    scale (``legible_print``'s): a sheet fit to width prints at a scale LibreOffice works out a little below
    ``print_scale``'s (the what-if Inputs, 945 pt of rows at 59.6%, 563 pt, printed on one 523-pt page), so its
    pages down are not known well enough to move them. Sheets with charts keep their pages."""
    if ws._charts or ws.sheet_properties.pageSetUpPr.fitToPage:
        return
    titles = _title_rows(ws)
    title_pt = sum(row_height_pt(ws, r) for r in titles)
    room = printable_height_pt(ws) / print_scale(ws, LO_PT_PER_CHAR) - title_pt
    last = last_printed_row(ws)
    ends = sorted(b.id for b in ws.row_breaks.brk if b.id < last)
    for starts in pages_down(ws):
        if len(starts) < 2:
            continue
        end = next((e for e in ends if e >= starts[-1]), last)
        if sum(row_height_pt(ws, r) for r in range(starts[-1], end + 1)) >= MIN_LAST_PAGE * room:
            continue
        pair = range(max(starts[-2], titles.stop if titles else 1), end + 1)
        half, acc = sum(row_height_pt(ws, r) for r in pair) / 2, 0.0
        for r in pair:
            if acc + row_height_pt(ws, r) > half:
                break
            acc += row_height_pt(ws, r)
        # the page ends before row r; the pages before keep the printer's own breaks (one of them a row off ours
        # moves a row into or out of the first of the two, each under 0.7 of a page: the last is still not alone)
        ws.row_breaks.append(Break(id=r - 1))


__all__ = [
    "MIN_PRINT_PT",
    "column_pages",
    "legible_print",
    "no_near_empty_page",
    "pages_down",
    "print_scale",
    "printable_height_pt",
    "printable_width_pt",
]
