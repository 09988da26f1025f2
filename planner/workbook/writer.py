"""Write a ``WorkbookSpec`` with openpyxl: atomically (temporary file + os.replace), never over a file unless asked."""

from __future__ import annotations

import io
import os
from pathlib import Path

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference, ScatterChart
from openpyxl.chart import Series as XlSeries
from openpyxl.chart.series import SeriesLabel, StrRef
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.comments import Comment
from openpyxl.formatting.rule import FormulaRule
from openpyxl.packaging.custom import StringProperty
from openpyxl.styles import Alignment, Border, Font, PatternFill, Protection, Side
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.pagebreak import Break
from openpyxl.worksheet.protection import SheetProtection
from openpyxl.worksheet.table import Table as XlTable
from openpyxl.worksheet.table import TableStyleInfo

from planner import __version__
from planner.export.xlsx_cells import titled_pages
from planner.io.files import write_file
from planner.io.safetext import write_text
from planner.workbook.printing import legible_print, no_near_empty_page
from planner.workbook.spec import Chart, Sheet, WorkbookSpec

_thin = Side(style="thin", color="BFBFBF")
STYLES = {
    "title": dict(font=Font(bold=True, size=14, color="1F3864")),
    "subtitle": dict(font=Font(bold=True, size=11, color="1F3864")),
    # a heading kept within the columns repeated on every page across (Sheet.heading): wrapped there
    "title_wrap": dict(
        font=Font(bold=True, size=14, color="1F3864"), alignment=Alignment(wrap_text=True, vertical="top")
    ),
    "subtitle_wrap": dict(
        font=Font(bold=True, size=11, color="1F3864"), alignment=Alignment(wrap_text=True, vertical="top")
    ),
    "header": dict(
        font=Font(bold=True, color="FFFFFF"),
        fill=PatternFill("solid", fgColor="1F3864"),
        alignment=Alignment(wrap_text=True, vertical="top"),
    ),
    # a label longer than its column wraps there (Calc's 75-character labels were cut by the numbers beside them)
    "label": dict(font=Font(bold=False), alignment=Alignment(horizontal="left", vertical="top", wrap_text=True)),
    "input": dict(
        fill=PatternFill("solid", fgColor="FFF2CC"),
        border=Border(_thin, _thin, _thin, _thin),
        font=Font(bold=True, color="1F3864"),
        protection=Protection(locked=False),  # the one kind of cell a protected sheet lets the user edit
    ),
    "result": dict(font=Font(bold=True), alignment=Alignment(horizontal="right", vertical="top")),
    # a formula's text answer ("no: TPOT 61.1 ms > 50.0 ms") wrapped in its column, not spilling into the next
    "result_text": dict(font=Font(bold=True), alignment=Alignment(horizontal="right", vertical="top", wrap_text=True)),
    "unit": dict(font=Font(italic=True, color="595959")),
    "note": dict(font=Font(color="595959"), alignment=Alignment(wrap_text=True, vertical="top")),
    "calc": dict(alignment=Alignment(horizontal="right", vertical="top")),
    # a Calc text answer ("no: TPOT 61.1 ms > 50.0 ms, TTFT ...") wrapped in its 17-wide column, not cut
    "calc_text": dict(alignment=Alignment(horizontal="right", vertical="top", wrap_text=True)),
    "key": dict(font=Font(bold=True)),
    "warn": dict(font=Font(bold=True, color="C00000")),
    # a formula's warning or error line that can be longer than its column (Inputs' "Error: 3 GPUs is not a ..."):
    # wrapped in a row tall enough, not spilling past the last column and widening the printed page
    "warn_text": dict(font=Font(bold=True, color="C00000"), alignment=Alignment(wrap_text=True, vertical="top")),
    # a catalog text longer than its column (a GPU's two price quotes): wrapped there, not cut by the next column
    "text": dict(alignment=Alignment(wrap_text=True, vertical="top")),
}
TOP = Alignment(vertical="top")
#: Series colours in order (the Load sheet's six levers and its target use all seven).
PALETTE = ("1F77B4", "D62728", "2CA02C", "FF7F0E", "9467BD", "8C564B", "7F7F7F")
BEST_FILL = PatternFill("solid", fgColor="C6EFCE", bgColor="C6EFCE")
BEST_FONT = Font(bold=True, color="006100")


#: Wrapped styles whose rows are made tall enough: (characters of width a letter takes, points a line).
WRAPPED = {
    "note": (1.1, 13.5),
    "header": (1.1, 13.5),
    "label": (1.1, 13.5),
    "text": (1.1, 13.5),
    "title_wrap": (1.1 * 14 / 11 * 1.1, 18.5),  # 14-pt bold
    "subtitle_wrap": (1.1 * 1.1, 14.5),  # 11-pt bold
}


def text_height(text: str, style: str, width: float) -> float | None:
    """Points a row needs for ``text`` wrapped in ``width`` characters in ``style`` (``WRAPPED``); None: one line."""
    per_char, line = WRAPPED[style]
    lines = -(-len(text) * per_char // max(width, 1))
    return line * lines + 2 if lines > 1 else None


def _row_heights(ws, s: Sheet) -> None:
    """Tall enough rows for wrapped text (LibreOffice and Excel do not grow rows of a generated file)."""
    from openpyxl.utils.cell import range_boundaries

    span = {}
    for rng in s.merges:
        c0, r0, c1, _ = range_boundaries(rng)
        span[f"{get_column_letter(c0)}{r0}"] = range(c0, c1 + 1)
    height_of: dict[int, float] = {}
    for ref, cell in s.cells.items():
        if cell.style not in WRAPPED or not isinstance(cell.value, str) or cell.value.startswith("="):
            continue
        col = "".join(ch for ch in ref if ch.isalpha())
        row = int(ref[len(col) :])
        cols = span.get(ref, [column_index_from_string(col)])
        width = sum(s.widths.get(get_column_letter(c), 9) for c in cols)
        height = text_height(cell.value, cell.style, width)
        if height:
            height_of[row] = max(height_of.get(row, 0), height)
    for row, height in height_of.items():
        ws.row_dimensions[row].height = height
    for row, height in s.heights.items():
        ws.row_dimensions[row].height = max(height, ws.row_dimensions[row].height or 0)


def _merges_on_their_pages(ws) -> None:
    """On a sheet printed over several pages wide, a merged note that ran across a column break ends at the last
    column of its first cell's page (a title column's: the last title column), its row as tall as its text then
    needs: a note merged across two pages printed the halves of its lines on different pages, and its start
    under the repeated title columns on every later one (trial 13 F7)."""
    from planner.workbook.printing import column_pages, title_columns

    if ws.sheet_properties.pageSetUpPr.fitToPage:
        return
    titles = title_columns(ws)
    page_of = {j: i for i, page in enumerate(column_pages(ws)) for j, _ in page if j not in titles}
    for rng in list(ws.merged_cells.ranges):
        if rng.min_col not in titles and rng.min_col not in page_of:
            continue  # a hidden first cell
        home = "titles" if rng.min_col in titles else page_of[rng.min_col]
        keep = [rng.min_col]
        for j in range(rng.min_col + 1, rng.max_col + 1):  # up to the first column printed elsewhere
            at = "titles" if j in titles else page_of.get(j)  # None: hidden, printed nowhere
            if at is not None and at != home:
                break
            if at is not None:
                keep.append(j)
        if keep[-1] == rng.max_col:
            continue
        first, row = ws.cell(rng.min_row, rng.min_col), rng.min_row
        ws.unmerge_cells(str(rng))
        ws.merge_cells(start_row=row, start_column=rng.min_col, end_row=rng.max_row, end_column=keep[-1])
        if isinstance(first.value, str) and not first.value.startswith("="):
            width = sum(ws.column_dimensions[get_column_letter(j)].width or 9 for j in keep)
            height = text_height(first.value, "note", width)
            rows = range(row, rng.max_row + 1)  # a merge down several rows: their heights together
            have = sum(ws.row_dimensions[r].height or 15 for r in rows)
            if height and height > have:
                ws.row_dimensions[rng.max_row].height = (ws.row_dimensions[rng.max_row].height or 15) + height - have


def _quote_ref(ref: str) -> tuple[str, str]:
    sheet, cells = ref.split("!")
    return sheet.strip("'"), cells


def write_sheet(ws, s: Sheet) -> None:
    """Fill an (empty) openpyxl worksheet from its description."""
    for ref, cell in s.cells.items():
        c = ws[ref]
        if cell.text and cell.value is not None:
            write_text(c, cell.value)  # a catalog or user name: a string cell, never a formula
        else:
            c.value = cell.value
        if cell.fmt:
            c.number_format = cell.fmt
        style = STYLES.get(cell.style or "", {})
        for attr, value in style.items():
            setattr(c, attr, value)
        if "alignment" not in style:  # a row made tall by wrapped text reads from the top, label beside its text
            c.alignment = TOP
        if cell.comment:
            c.comment = Comment(cell.comment, "planner")
    for col, width in s.widths.items():
        ws.column_dimensions[col].width = width
    for rng in s.merges:
        ws.merge_cells(rng)
    _row_heights(ws, s)
    if s.freeze:
        ws.freeze_panes = s.freeze
    for v in s.validations:
        if v.kind == "list":
            dv = DataValidation(type="list", formula1=v.source, allow_blank=True)
        else:
            dv = DataValidation(
                type=v.kind, operator="between", formula1=str(v.minimum), formula2=str(v.maximum), allow_blank=True
            )
        dv.promptTitle, dv.prompt = "Input", v.prompt
        dv.errorTitle, dv.error = ("Not accepted" if v.error_style == "stop" else "Not on the list"), v.error
        dv.errorStyle = v.error_style
        dv.showInputMessage = dv.showErrorMessage = True
        dv.add(v.sqref)
        ws.add_data_validation(dv)
    for h in s.highlights:
        ws.conditional_formatting.add(h.sqref, FormulaRule(formula=[h.formula], fill=BEST_FILL, font=BEST_FONT))
    for t in s.tables:
        table = XlTable(displayName=t.name, ref=t.ref)
        table.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
        ws.add_table(table)
    for ch in s.charts:
        ws.add_chart(_chart(ch), ch.anchor)
    if s.tab_color:
        ws.sheet_properties.tabColor = s.tab_color
    ws.page_setup.orientation = "landscape" if s.landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    for col in s.folded:
        dim = ws.column_dimensions[col]
        dim.outlineLevel, dim.hidden = 1, True
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_options.gridLines = False
    for row in s.page_breaks:
        ws.row_breaks.append(Break(id=row))
    if s.top_bottom_margin_in is not None:
        ws.page_margins.top = ws.page_margins.bottom = s.top_bottom_margin_in
        ws.page_margins.header = ws.page_margins.footer = 0.3
    if s.protect:
        ws.protection = protection()
    if s.freeze:
        col = "".join(ch for ch in s.freeze if ch.isalpha())
        row = int(s.freeze[len(col) :])
        if row > 1:
            ws.print_title_rows = f"1:{row - 1}"
        if col != "A":
            ws.print_title_cols = f"A:{get_column_letter(column_index_from_string(col) - 1)}"
    if s.print_title_cols:
        ws.print_title_cols = s.print_title_cols
    if s.print_title_rows:
        ws.print_title_rows = s.print_title_rows
    if s.one_page_tall:
        ws.page_setup.fitToHeight = 1
    titled_pages(ws, s.name, PRINTED_TITLE, printed_footer(), PRINTED_FIELDS)
    legible_print(ws)  # a sheet too wide for one page at 8 pt prints over several, its title columns on each
    _merges_on_their_pages(ws)
    no_near_empty_page(ws)  # its rows heights final: a block's last page down not a few rows alone


#: The printed pages' header (right of the sheet's name) and footer fields (codes: the date printed, the file).
PRINTED_TITLE = "LLM inference what-if workbook"
PRINTED_FIELDS = ", printed &D, file &F"


def printed_footer(version: str = __version__) -> str:
    """The printed pages' footer before its fields: the planner that wrote the workbook ("planner 0.1.0, what-if
    workbook"); ``refresh`` writes it again with its own version."""
    return f"planner {version}, what-if workbook"


def protection() -> SheetProtection:
    """Sheet protection without a password: formulas locked, input cells editable; columns and rows may be
    resized, tables filtered and sorted (Review > Unprotect Sheet lifts it, no password asked)."""
    return SheetProtection(sheet=True, formatColumns=False, formatRows=False, autoFilter=False, sort=False)


def _chart(ch: Chart) -> ScatterChart | LineChart:
    chart = LineChart() if ch.categories else ScatterChart()
    chart.title = ch.title
    chart.title.tx.rich.p[0].pPr.defRPr.sz = 1100
    chart.title.tx.rich.p[0].pPr.defRPr.b = True
    chart.x_axis.title = ch.x_title
    chart.y_axis.title = ch.y_title
    chart.width, chart.height = ch.width_cm, ch.height_cm
    chart.legend.position = "b"
    if ch.span_gaps:
        chart.display_blanks = "span"
    for axis, log in ((chart.x_axis, ch.x_log), (chart.y_axis, ch.y_log)):
        axis.delete = False
        axis.number_format = "#,##0.##"
        axis.majorTickMark = "out"
        axis.majorGridlines = axis.majorGridlines if axis is chart.y_axis else None
        if log:
            axis.scaling.logBase = 10
    for i, ser in enumerate(ch.series):
        color = PALETTE[i % len(PALETTE)]
        xs, ys = _quote_ref(ser.x_ref), _quote_ref(ser.y_ref)
        x = Reference(range_string=f"{xs[0]}!{xs[1]}")
        y = Reference(range_string=f"{ys[0]}!{ys[1]}")
        s = XlSeries(y, None if ch.categories else x)
        if ser.title.startswith("="):
            s.tx = SeriesLabel(strRef=StrRef(ser.title[1:]))
        else:
            s.tx = SeriesLabel(v=ser.title)
        s.marker.symbol = ("diamond" if not ser.line else "circle") if ser.marker else "none"
        s.marker.size = 11 if not ser.line else 6
        s.marker.graphicalProperties = GraphicalProperties(solidFill=color)
        s.marker.graphicalProperties.line.solidFill = color
        if ser.line:
            s.graphicalProperties.line.solidFill = color
            s.graphicalProperties.line.width = 22000
            if ser.dash:
                s.graphicalProperties.line.dashStyle = "dash"
        else:
            s.graphicalProperties.line.noFill = True
        s.smooth = False
        chart.series.append(s)
        if ch.categories:
            chart.set_categories(x)
    return chart


def to_openpyxl(spec: WorkbookSpec) -> Workbook:
    wb = Workbook()
    wb.remove(wb.active)
    for s in spec.sheets:
        write_sheet(wb.create_sheet(s.name), s)
    for n in spec.names:
        wb.defined_names[n.name] = DefinedName(n.name, attr_text=n.ref, hidden=n.hidden or None)
    for key, value in spec.properties.items():
        wb.custom_doc_props.append(StringProperty(name=key, value=value))
    active = spec.sheets.index(spec.sheet(spec.active))
    wb.active = active
    for i, ws in enumerate(wb.worksheets):
        ws.sheet_view.tabSelected = i == active
    wb.calculation.fullCalcOnLoad = True
    return wb


def save_atomic(wb: Workbook, path: str | os.PathLike, force: bool = False) -> Path:
    """Save through ``planner.io.files.write_file``: whole or not at all; an existing file only with ``force``."""
    return write_file(path, wb.save, force=force, make_parents=True)


def write_workbook(
    spec: WorkbookSpec, path: str | os.PathLike, force: bool = False, *, store_values: bool = False
) -> Path:
    """Write the workbook; with ``store_values``, every formula also carries the value LibreOffice computes for
    it (``planner.workbook.values``; written without them when LibreOffice is missing)."""
    wb = to_openpyxl(spec)
    if not store_values:
        return save_atomic(wb, path, force)
    from planner.workbook.values import with_stored_values

    raw = io.BytesIO()
    wb.save(raw)
    data = with_stored_values(raw.getvalue(), wb.sheetnames)
    return write_file(path, data if data is not None else raw.getvalue(), force=force, make_parents=True)
