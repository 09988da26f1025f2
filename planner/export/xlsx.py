"""The review as an Excel workbook for finance: Summary, Options, Levers, Charts, Assumptions.

Monthly and annual costs and the levers' savings are live formulas over the cells beside them (GPUs x $ per
GPU-month), so a reader can change a price and see the total move. The file is deterministic: document
properties carry the review date, and every zip entry the same timestamp.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

from openpyxl import Workbook
from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.series import SeriesLabel
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.writer.excel import ExcelWriter

from planner.export.review import Review
from planner.export.tables import (
    CHART_COST_LIMIT,
    CHART_MAX_OPTIONS,
    DETAIL_KEYS,
    MAIN_KEYS,
    Table,
    charted,
    fmt,
    levers_table,
    options_table,
    select,
    sensitivity_table,
    sweep_table,
)
from planner.safetext import write_text, xlsx_text

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
THIN = Border(bottom=Side(style="thin", color="BFBFBF"))
WRAP = Alignment(wrap_text=True, vertical="top")
TOP = Alignment(vertical="top")


def _page(ws: Worksheet, landscape: bool = True, title_rows: str | None = None) -> None:
    """One page wide when printed or converted to PDF; as many pages tall as it needs."""
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_margins.left = ws.page_margins.right = 0.4
    ws.page_margins.top = ws.page_margins.bottom = 0.5
    if title_rows:
        ws.print_title_rows = title_rows
    ws.oddFooter.center.text = "&A — page &P of &N"


def _header(ws: Worksheet, row: int, headers: list[str], col: int = 1) -> None:
    for j, h in enumerate(headers):
        c = write_text(ws.cell(row=row, column=col + j), h)  # headers may carry option names
        c.font, c.fill = HEAD_FONT, HEAD_FILL
        c.alignment = Alignment(wrap_text=True, vertical="center", horizontal="center")


LINE_PT = 13.0


def _lines(text: str, width: float) -> int:
    """Lines a wrapped text takes in a column ``width`` characters wide (a little pessimistic, as renderers differ)."""
    per_line = max(int(width * 1.05) - 1, 1)
    return sum(max(1, -(-len(part) // per_line)) for part in str(text).split("\n"))


def _fit_row(ws: Worksheet, row: int, min_lines: int = 1) -> None:
    """Set the row's height to hold its tallest wrapped cell (spreadsheets do not autofit rows openpyxl wrote)."""
    lines = min_lines
    for cell in ws[row]:
        if isinstance(cell.value, str) and not cell.value.startswith("=") and cell.alignment.wrap_text:
            width = ws.column_dimensions[cell.column_letter].width or 10
            lines = max(lines, _lines(cell.value, width))
    ws.row_dimensions[row].height = LINE_PT * lines + 3


def _write_table(ws: Worksheet, table: Table, top: int, widths: dict[str, float] | None = None) -> None:
    for j, col in enumerate(table.columns, start=1):
        ws.column_dimensions[get_column_letter(j)].width = (widths or {}).get(col.key, 13 if col.kind != "text" else 18)
    _header(ws, top, [c.header for c in table.columns])
    for i, row in enumerate(table.rows, start=top + 1):
        for j, (v, col) in enumerate(zip(row, table.columns, strict=True), start=1):
            cell = ws.cell(row=i, column=j, value=None if isinstance(v, float) and v != v else v)
            if isinstance(v, str):  # table text is names and notes, never a formula
                write_text(cell, v)
            cell.number_format = NUMBER_FORMATS[col.kind]
            cell.alignment = WRAP if col.kind == "text" else TOP
            cell.border = THIN
    for r in range(top, top + len(table.rows) + 1):
        _fit_row(ws, r, 3 if r == top else 1)


def _col(keys: tuple[str, ...], key: str) -> str:
    return get_column_letter(keys.index(key) + 1)


def _summary(wb: Workbook, review: Review) -> None:
    ws = wb.active
    ws.title = "Summary"
    s, w, rec = review.scenario, review.scenario.workload, review.recommended
    f = rec.fleet
    ws.column_dimensions["A"].width = 34
    for col in "BCDE":
        ws.column_dimensions[col].width = 22
    write_text(ws["A1"], s.title)
    ws["A1"].font = Font(bold=True, size=16)
    write_text(ws["A2"], f"Budget review, {review.date}. Made by planner {review.version} from {review.source}.")
    ws["A2"].font = Font(italic=True, color="595959")
    ws["A4"] = "Recommendation"
    ws["A4"].font = Font(bold=True, size=13)
    write_text(ws["B4"], f"{rec.option.name}: {fmt(rec.monthly_usd, 'usd')} a month, {rec.gpus} GPUs")
    ws["B4"].font = Font(bold=True, size=13, color="375623")
    ws.merge_cells("A6:E6")
    write_text(ws["A6"], review.reason)
    ws["A6"].alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[6].height = 15 * (len(review.reason) // 120 + 2)

    load_unit = "requests/s" if w.by_rate else "concurrent requests"
    peak = w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests
    avg = w.average_requests_per_s if w.by_rate else w.average_concurrent_requests
    figures = [
        ("Key figures (recommended option)", None, "text"),
        ("GPUs", int(f.gpus), "int"),
        ("GPU type", rec.gpu.name, "text"),
        ("Replicas x GPUs per replica", f"{int(f.replicas)} x {int(rec.replica.gpus)}", "text"),
        ("Monthly cost", f"=Options!{_col(MAIN_KEYS, 'monthly_usd')}2", "usd"),
        ("Annual cost", f"=Options!{_col(MAIN_KEYS, 'annual_usd')}2", "usd"),
        ("$ per million input tokens", float(f.usd_per_million_input), "usd2"),
        ("$ per million output tokens", float(f.usd_per_million_output), "usd2"),
        ("Utilization at average load", float(f.utilization_average), "pct"),
        ("Headroom at peak", float(f.headroom_peak), "pct"),
        ("Targets and traffic", None, "text"),
        (f"TTFT target (p{w.high_percentile:g} prompt, {w.prompt_tokens_high:,} tokens)", w.ttft_target_s, "s"),
        ("TPOT target", w.tpot_target_s * 1e3, "ms"),
        (f"Peak / average today ({load_unit})", f"{peak:g} / {avg:g}", "text"),
        (f"Growth over {w.horizon_months} months", w.growth_over_horizon, "pct"),
        (f"Planned peak ({load_unit})", peak * w.growth_factor, "x"),
        ("Prompt tokens: mean / high", f"{w.prompt_tokens_mean:,} / {w.prompt_tokens_high:,}", "text"),
        ("Output tokens: mean / high", f"{w.output_tokens_mean:,} / {w.output_tokens_high:,}", "text"),
    ]
    r = 8
    for label, value, kind in figures:
        a = ws.cell(row=r, column=1, value=label)
        if value is None:
            a.font = Font(bold=True, size=12)
            r += 1
            continue
        b = ws.cell(row=r, column=2, value=value)
        if kind == "text":
            write_text(b, value)
        b.number_format = NUMBER_FORMATS[kind]
        b.alignment = Alignment(horizontal="right")
        a.border = b.border = THIN
        r += 1
    r += 1
    ws.cell(row=r, column=1, value="Sensitivity").font = Font(bold=True, size=12)
    sens = sensitivity_table(review)
    _header(ws, r + 1, [c.header for c in sens.columns])
    for i, row in enumerate(sens.rows, start=r + 2):
        for j, (v, col) in enumerate(zip(row, sens.columns, strict=True), start=1):
            c = write_text(ws.cell(row=i, column=j), v) if isinstance(v, str) else ws.cell(row=i, column=j, value=v)
            c.number_format = NUMBER_FORMATS[col.kind]
            c.border = THIN
    r += 2 + len(sens.rows) + 1
    if review.warnings:
        ws.cell(row=r, column=1, value="Warnings").font = Font(bold=True, size=12)
        for k, text in enumerate(review.warnings, start=1):
            ws.merge_cells(start_row=r + k, start_column=1, end_row=r + k, end_column=5)
            write_text(ws.cell(row=r + k, column=1), text).alignment = WRAP
        r += len(review.warnings) + 2
    ws.cell(
        row=r,
        column=1,
        value="Sheets: Options (all options ranked), Details (prices, sensitivity), Levers, "
        "Charts (cost and GPUs against traffic), Assumptions (every number used and its source).",
    ).font = Font(italic=True, color="595959")
    _page(ws, landscape=False)


def _options(wb: Workbook, review: Review) -> None:
    ws = wb.create_sheet("Options")
    full = options_table(review)
    main = select(full, MAIN_KEYS)
    widths = {
        "rank": 6,
        "option": 22,
        "meets_targets": 9,
        "gpus": 8,
        "gpus_per_replica": 10,
        "replicas": 10,
        "batch_per_replica": 10,
        "tpot_ms": 10,
        "ttft_s": 10,
        "usd_per_gpu_month": 11,
        "monthly_usd": 12,
        "annual_usd": 13,
        "usd_per_million_output_tokens": 11,
        "utilization_average": 11,
        "note": 34,
    }
    _write_table(ws, main, 1, widths)
    gpus, per, mon, ann = (_col(MAIN_KEYS, k) for k in ("gpus", "usd_per_gpu_month", "monthly_usd", "annual_usd"))
    for i, r in enumerate(review.results, start=2):
        if r.meets:
            ws[f"{mon}{i}"] = f"={gpus}{i}*{per}{i}"
            ws[f"{ann}{i}"] = f"={mon}{i}*12"
        fill = REC_FILL if r is review.recommended else (NO_FILL if not r.meets else None)
        if fill:
            for j in range(1, len(MAIN_KEYS) + 1):
                ws.cell(row=i, column=j).fill = fill
    n = len(review.results) + 2
    ws.cell(
        row=n,
        column=2,
        value="Monthly cost = GPUs x $ per GPU-month (a formula: change a price to see the total "
        "move). Green: recommended. Grey: cannot meet the targets (why: Note).",
    ).font = Font(italic=True, color="595959")
    ws.freeze_panes = "C2"
    _page(ws, title_rows="1:1")

    ws = wb.create_sheet("Details")
    detail = select(full, DETAIL_KEYS)
    _write_table(
        ws,
        detail,
        1,
        {
            "option": 22,
            "gpu": 16,
            "model": 16,
            "precisions": 11,
            "pricing": 24,
            "usd_per_million_input_tokens": 11,
            "headroom_peak": 11,
            "gpus_low": 12,
            "monthly_usd_low": 13,
            "gpus_high": 12,
            "monthly_usd_high": 13,
        },
    )
    ws.cell(
        row=len(detail.rows) + 3,
        column=1,
        value=f"Same order as Options. Headroom = share of batch slots free at the planned peak. The -/+ columns "
        f"size each option again at traffic {review.scenario.traffic_change:.0%} below and above the plan.",
    ).font = Font(italic=True, color="595959")
    ws.freeze_panes = "B2"
    _page(ws, title_rows="1:1")


def _levers(wb: Workbook, review: Review) -> None:
    ws = wb.create_sheet("Levers")
    table = levers_table(review)
    _write_table(ws, table, 1, {"lever": 22, "change": 48, "effect": 60, "gpus": 8})
    keys = [c.key for c in table.columns]
    mon = get_column_letter(keys.index("monthly_usd") + 1)
    sav = get_column_letter(keys.index("saving_usd_per_month") + 1)
    for i, row in enumerate(table.rows[1:], start=3):
        if row[keys.index("monthly_usd")] is not None:
            ws[f"{sav}{i}"] = f"=${mon}$2-{mon}{i}"
    n = len(table.rows) + 3
    ws.cell(
        row=n,
        column=1,
        value=f"Each lever changes one thing in the baseline ({review.baseline.option.name}) and "
        "sizes it again. Saving = baseline monthly cost - lever monthly cost; negative = it costs more.",
    ).font = Font(italic=True, color="595959")
    _page(ws, title_rows="1:1")


def _charts(wb: Workbook, review: Review) -> None:
    ws = wb.create_sheet("Charts")
    table = sweep_table(review)
    top = 34  # data below the two charts
    left_out = [r.option.name for r in review.results if r.meets and r not in charted(review)]
    w = review.scenario.workload
    planned = (w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests) * w.growth_factor
    write_text(
        ws.cell(row=top - 2, column=1),
        f"The planned peak is {planned:,.3g}; each option is sized again at each traffic "
        "level."
        + (
            f" Not charted (over {CHART_COST_LIMIT:g}x the recommended cost, or beyond the cheapest "
            f"{CHART_MAX_OPTIONS}): {', '.join(left_out)}."
            if left_out
            else ""
        ),
    ).font = Font(italic=True, color="595959")
    ws.cell(row=top - 1, column=1, value="Data for the charts").font = Font(bold=True)
    _write_table(ws, table, top)
    ws.column_dimensions["A"].width = 16
    ws.row_dimensions[top].height = 45
    n_opt = (len(table.columns) - 1) // 2
    meeting_names = [r.option.name for r in charted(review)]
    rows = len(table.rows)
    x = Reference(ws, min_col=1, min_row=top + 1, max_row=top + rows)
    x_title = table.columns[0].header
    for title, y_title, first, anchor, number_format in (
        ("Monthly cost against peak traffic", "US$ per month", 2, "A1", '"$"#,##0'),
        ("GPUs needed against peak traffic", "GPUs", 2 + n_opt, "A17", "0"),
    ):
        ch = ScatterChart()
        ch.title = title
        ch.style = 2
        ch.x_axis.title = x_title
        ch.y_axis.title = y_title
        ch.y_axis.number_format = number_format
        ch.x_axis.delete = False
        ch.y_axis.delete = False
        ch.height, ch.width = 7.5, 24
        ch.legend.position = "r"
        for j in range(first, first + n_opt):
            s = Series(Reference(ws, min_col=j, min_row=top + 1, max_row=top + rows), x)
            s.tx = SeriesLabel(v=xlsx_text(meeting_names[(j - first)]))
            s.marker.symbol = "circle"
            s.smooth = False
            ch.series.append(s)
        ws.add_chart(ch, anchor)
    _page(ws, title_rows=None)
    ws.page_setup.fitToHeight = 1


def _assumptions(wb: Workbook, review: Review) -> None:
    ws = wb.create_sheet("Assumptions")
    _header(ws, 1, ["What", "Value", "Unit", "Source"])
    for i, (what, value, unit, src) in enumerate(review.assumptions, start=2):
        for j, v in enumerate((what, value, unit, src), start=1):
            c = write_text(ws.cell(row=i, column=j), v) if isinstance(v, str) else ws.cell(row=i, column=j, value=v)
            c.alignment = WRAP
            c.border = THIN
            c.number_format = "@"
    for col, width in zip("ABCD", (40, 30, 12, 100), strict=True):
        ws.column_dimensions[col].width = width
    for r in range(1, len(review.assumptions) + 2):
        _fit_row(ws, r)
    ws.freeze_panes = "A2"
    _page(ws, title_rows="1:1")


def review_workbook(review: Review) -> Workbook:
    """The openpyxl Workbook (not saved): sheets, formulas, charts, page setup and properties."""
    wb = Workbook()
    _summary(wb, review)
    _options(wb, review)  # Options and Details
    _levers(wb, review)
    _charts(wb, review)
    _assumptions(wb, review)
    when = dt.datetime.fromisoformat(review.date)
    wb.properties.created = wb.properties.modified = when
    wb.properties.creator = wb.properties.lastModifiedBy = f"planner {review.version}"
    wb.properties.title = review.scenario.title
    return wb


def render_xlsx(review: Review) -> bytes:
    """The workbook's bytes; the same review gives the same bytes (no clock time inside)."""
    wb = review_workbook(review)
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).save()  # save_workbook() would stamp the current time as 'modified'
    stamp = dt.datetime.fromisoformat(review.date).timetuple()[:6]
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()
