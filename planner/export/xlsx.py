"""The review as an Excel workbook for finance: Summary, Options, Costs, Details, Like for like, Ownership, Break-even,
Cash by year, Demand cases, Fleet by quarter, Levers, Charts, Chart data, Glossary, Assumptions.

Summary is a snapshot of the review (it says so), with a live box that follows the prices on Options. On
Options the $ per GPU-month cells are inputs (yellow) and monthly cost, annual cost and the live rank are
formulas over them (blue); every formula carries the value Python computed, so readers that do not
recalculate see numbers. Every data table starts at A1 with one header row and has no notes under it: notes
are on Summary (Cash by year's one note, below its table after an empty row, names the review values its figures
rest on). The file is deterministic: document properties carry the review date, zip entries one timestamp.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import zipfile

from openpyxl import Workbook
from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.layout import Layout, ManualLayout
from openpyxl.chart.legend import LegendEntry
from openpyxl.chart.series import SeriesLabel
from openpyxl.styles import Alignment, Font, Protection
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.worksheet.worksheet import Worksheet
from openpyxl.writer.excel import ExcelWriter

from planner.accuracy.loaded_ranges import load_loaded_ranges
from planner.export import breakeven, cash_by_year, decision, held_out, slow_end
from planner.export import money_tables as money
from planner.export.glossary import LOAD_LABEL, OUTPUT_ALL_IN_LABEL, OUTPUT_SHARE_LABEL, terms
from planner.export.ownership import (
    SIZED_AFRESH,
    Money,
    amortization_rule,
    capital_terms,
    cost_of_capital_words,
    depreciation_terms,
)
from planner.export.print_layout import keep_together
from planner.export.records import LoadCurve, Review
from planner.export.tables import (
    CHART_COST_LIMIT,
    CHART_MAX_OPTIONS,
    LATENCY_CHART_CAP,
    SLOW_END_KEYS,
    Column,
    Table,
    charted,
    charts_sizing_text,
    detail_keys,
    fmt,
    headroom_table,
    latency_charted,
    latency_table,
    levers_table,
    main_keys,
    not_evaluated,
    options_table,
    planned_peak,
    select,
    sensitivity_table,
    serving_headroom_text,
    shows_slow_end,
    sweep_table,
    tco_table,
    tpot_range_values,
    tpot_ranges,
)
from planner.export.xlsx_cells import (
    INPUT_FILL,
    LINE_PT,
    LIVE_FILL,
    NO_FILL,
    NOTE_FONT,
    NUM,
    NUMBER_FORMATS,
    REC_FILL,
    THIN,
    WRAP,
    Cache,
    fit_row,
    header_row,
    number_format_for,
    page_setup,
    put_table_value,
    put_text,
    row_lines,
    safe_text,
    store_cached_values,
    wrapped_lines,
)
from planner.io.paper import A4_IN, BASE_FONT_PT, LO_PT_PER_CHAR, MIN_PRINT_PT, MIN_PRINT_SCALE_PCT
from planner.units import counted

#: Line styles of the charts' series, so that lines on top of each other stay distinguishable.
SERIES_STYLES = (
    ("1F77B4", "solid", "circle"),
    ("D62728", "dash", "triangle"),
    ("2CA02C", "sysDot", "square"),
    ("9467BD", "lgDash", "diamond"),
    ("FF7F0E", "dashDot", "x"),
)


#: The Summary's row above cost per token and utilization where traffic grows: the average they are at is the end of
#: the horizon's, not today's (a label that fits column A unwrapped: wrapped rows shrank the printed page).
GROWN = "Average after growth: the basis below"


#: Said in the printed heading of every sheet whose figures do not follow the yellow prices on Options (trial 14 F5:
#: an edited price changed Options and Summary's live box, and five sheets kept the old figures without saying so).
SNAPSHOT = "snapshot: the yellow prices on Options do not change it"


def snapshot(heading: str) -> str:
    """A sheet's heading marked as a snapshot (``SNAPSHOT``). A printed page header: at about 100 characters in all a
    narrow sheet's (printed at 100%) runs into the title on its left."""
    return f"{heading} ({SNAPSHOT})"


def footer_text(review: Review) -> str:
    """Every printed page's footer: the planner version, the review date and the scenario file."""
    return f"planner {review.version}, review of {review.date}, from {review.source}"


class _Book:
    def __init__(self, review: Review):
        self.review = review
        self.wb = Workbook()
        self.cache = Cache()
        self.footer = footer_text(review)

    def sheet(self, title: str, heading: str, title_rows: str | None = "1:1") -> Worksheet:
        ws = self.wb.active if self.wb.active.title == "Sheet" else self.wb.create_sheet()
        ws.title = title
        page_setup(ws, self.review.scenario.title, heading, self.footer, title_rows)
        return ws


def _write_table(ws: Worksheet, table: Table, top: int, widths: dict[str, float] | None = None) -> None:
    for j, col in enumerate(table.columns, start=1):
        width = (widths or {}).get(col.key, 13 if col.kind != "text" else 18)
        ws.column_dimensions[get_column_letter(j)].width = width
    header_row(ws, top, [c.header for c in table.columns])
    for i, row in enumerate(table.rows, start=top + 1):
        for j, (v, col) in enumerate(zip(row, table.columns, strict=True), start=1):
            put_table_value(ws.cell(row=i, column=j), v, col.kind, col.key)
    for r in range(top, top + len(table.rows) + 1):
        fit_row(ws, r, 3 if r == top else 1)


def _col(keys: tuple[str, ...], key: str) -> str:
    return get_column_letter(keys.index(key) + 1)


def _label(ws: Worksheet, row: int, text: str, size: int = 12) -> None:
    put_text(ws.cell(row=row, column=1), text)
    ws.cell(row=row, column=1).font = Font(bold=True, size=size)


def _summary(book: _Book) -> None:
    review = book.review
    ws = book.sheet("Summary", "Summary (a snapshot; live box below)", None)
    s, w, rec = review.scenario, review.scenario.workload, review.recommended
    f, m = rec.fleet, rec.money
    for col, width in zip("ABCDEF", (40, 22, 26, 44, LIVE_WIDTH, 12), strict=True):
        ws.column_dimensions[col].width = width
    put_text(ws["A1"], s.title)
    ws["A1"].font = Font(bold=True, size=16)
    put_text(ws["A2"], f"Budget review, {review.date}. Made by planner {review.version} from {review.source}.")
    ws["A2"].font = NOTE_FONT
    ws.merge_cells("A3:F3")
    put_text(
        ws["A3"],
        f"SNAPSHOT computed on {review.date}: the recommendation, text and figures on this sheet do not change "
        "when the workbook is edited. The blue LIVE cells follow the yellow prices on Options.",
    )
    ws["A3"].font = Font(bold=True, color="9C5700")
    ws["A3"].alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[3].height = 30
    _label(ws, 5, "Recommendation", 13)
    ws.merge_cells("B5:F5")
    put_text(
        ws["B5"],
        f"{rec.option.name}: {fmt(rec.monthly_usd, 'usd')} a month, {counted(rec.gpus, 'GPU', ',.0f')} ({m.price_kind})",
    )
    ws["B5"].font = Font(bold=True, size=13, color="375623")
    ws["B5"].alignment = Alignment(wrap_text=True)
    # 13-pt bold runs about 1.3 times as wide as the 11-pt text wrapped_lines counts: a long option name wraps
    span_b = sum(ws.column_dimensions[c].width for c in "BCDEF") / 1.3
    if (lines := wrapped_lines(ws["B5"].value, span_b)) > 1:
        ws.row_dimensions[5].height = 17.0 * lines + 3
    ws.merge_cells("A7:F7")
    # the decision box (trial 26 F11): option, cost, horizon, commitment, risk and test, a line each; the full
    # recommendation paragraph is the first note below, under its heading (``decision.DETAIL_HEADING``)
    box = decision.decision_text(review)
    put_text(ws["A7"], box)
    ws["A7"].alignment = Alignment(wrap_text=True, vertical="top")
    ws["A7"].fill = REC_FILL
    # as tall as its wrapped lines across A:F (fit_row's rule, as the notes below), not a line per 150 characters,
    # which left the longer recommendation several lines too tall and pushed the key figures down the page
    ws.row_dimensions[7].height = LINE_PT * wrapped_lines(box, sum(ws.column_dimensions[c].width for c in "ABCDEF")) + 3

    load_unit = "requests/s" if w.by_rate else "concurrent requests"
    peak = w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests
    avg = w.average_requests_per_s if w.by_rate else w.average_concurrent_requests
    n = int(f.gpus)
    owned = m.pricing == "purchase"
    # cost per token and utilization are at the average the fleet is sized for: today's grown over the horizon
    grown = [(GROWN, f"{rec.average_rate_per_s:.3g} requests/s", "text")] if w.growth_factor != 1 else []
    figures = [
        ("Key figures (recommended option)", None, "text"),
        ("GPUs", n, "int"),
        ("GPU type", rec.gpu.name, "text"),
        ("Replicas x GPUs per replica", f"{int(f.replicas)} x {int(rec.replica.gpus)}", "text"),
        ("Price kind", m.price_kind, "text"),
        (
            "Capex committed (not refundable)" if owned else "Capex up front (GPUs, hosts, network)",
            m.capex_usd_per_gpu * n if owned else 0.0,
            "usd",
        ),  # fmt: skip
        (
            f"Capex per month ({capital_terms(rec.option, review.scenario.finance)})" if owned else "Capex per month",
            m.capital_usd_per_gpu_month * n,
            "usd",
        ),  # fmt: skip
        ("Opex per month (power, colocation or rent)", m.opex_usd_per_gpu_month * n, "usd"),
        ("Opex per year", m.opex_usd_per_gpu_month * n * 12, "usd"),
        ("Total per month", rec.monthly_usd, "usd"),
        *_budget_figures(review),
        *grown,
        ("$ per million input tokens", float(f.usd_per_million_input), "usd2"),
        (OUTPUT_SHARE_LABEL, float(f.usd_per_million_output), "usd2"),
        (OUTPUT_ALL_IN_LABEL, float(f.usd_per_million_output_all_in), "usd2"),
        ("$ per million tokens (all)", float(f.usd_per_million_tokens), "usd2"),
        (LOAD_LABEL, float(f.utilization_average), "pct"),
        *_headroom_figures(rec),
        ("TPOT at peak: predicted", float(f.tpot_peak_s) * 1e3, "ms"),
        (
            f"TPOT at peak: pessimistic (+{rec.pessimistic_high:.0%})",
            float(f.tpot_peak_s) * 1e3 * (1 + rec.pessimistic_high),
            "ms",
        ),
        *_held_out_figures(rec),
        *_slow_end_figures(rec),
        ("Margin sized with", rec.margin, "pct"),
        *_budget_request(review),
    ]
    targets = [
        ("Targets and traffic", None, "text"),
        (w.target_labels(f"prompt, {w.prompt_tokens_high:,} tokens")[0], w.ttft_target_s, "s"),
        (w.target_labels()[1], w.tpot_target_s * 1e3, "ms"),
        (f"Peak / average today ({load_unit})", f"{peak:g} / {avg:g}", "text"),
        (f"Growth over {w.horizon_months} months", w.growth_over_horizon, "pct"),
        (f"Planned peak ({load_unit})", peak * w.growth_factor, "x"),
        ("Prompt tokens: mean / high", f"{w.prompt_tokens_mean:,} / {w.prompt_tokens_high:,}", "text"),
        ("Output tokens: mean / high", f"{w.output_tokens_mean:,} / {w.output_tokens_high:,}", "text"),
        (  # trial 25 F3: the 1,277 feeds the group screening only, not the simulated TPOT at peak
            "Context memory holds / group screening's TPOT is taken at",
            f"{w.sizing_context_tokens:,} / {w.inflight_context_tokens:,} tokens"
            + (" (the simulated TPOT at peak: each request at its own context)" if w.sizing == "simulated" else ""),
            "text",
        ),  # fmt: skip
    ]
    r = _figures(ws, figures, 9, 1)
    for row in range(9, r):  # the held-out range's labels are longer than the column: wrapped, the row grown
        if any(
            t in str(ws.cell(row=row, column=1).value)
            for t in (held_out.SHORT_LABEL, SLOW_END_FIGURE, OUTPUT_SHARE_LABEL, OUTPUT_ALL_IN_LABEL)
        ):
            ws.cell(row=row, column=1).alignment = WRAP
            fit_row(ws, row)
    if _budget_request(review):  # the figures' last row (r - 1)
        # the budget request's note never opens a page alone: it goes with the figures above it (trial 26 F11: the
        # pdf put "Budget request: rent is cash ..." at the top of page 2, cut off from the Key figures on page 1)
        keep_together(ws, r - 1 - NOTE_KEPT_WITH, r - 1)
    _live_box(book, ws, 9)
    r = max(r, _figures(ws, targets, 14, 4)) + 1
    _label(ws, r, "Sensitivity (snapshot)")
    sens = sensitivity_table(review)
    header_row(ws, r + 1, [c.header for c in sens.columns])
    # "GPUs (<option name>)" wraps in its column, in bold: about 1.1 times as wide as wrapped_lines counts
    head = max(wrapped_lines(c.header, ws.column_dimensions[get_column_letter(j)].width / 1.1)
               for j, c in enumerate(sens.columns, start=1))  # fmt: skip
    ws.row_dimensions[r + 1].height = max(30.0, LINE_PT * head + 3)
    for i, row in enumerate(sens.rows, start=r + 2):
        for j, (v, col) in enumerate(zip(row, sens.columns, strict=True), start=1):
            c = ws.cell(row=i, column=j)
            if col.kind == "text":
                put_text(c, v)
                c.alignment = WRAP
            else:
                c.value = v
                c.number_format = NUMBER_FORMATS[col.kind]
                c.alignment = NUM
            c.border = THIN
        # an option name of 35-50 characters wraps in "Cheapest option there": the row grows to hold it (a trial
        # printed a 34-character name's second line over the next row)
        _grow_row(ws, i)
    # the heading, header and rows on one page, the blank row above going with them (a page may open with it)
    keep_together(ws, r - 1, r + 1 + len(sens.rows))
    r += 2 + len(sens.rows) + 1
    notes = []
    if review.warnings:
        notes.append(("Warnings", list(review.warnings)))
    skipped = not_evaluated(review)
    if skipped:
        notes.append(("Levers not evaluated", skipped))
    heading = (
        "Calibration, margin" if money.calibration_line(review) else "Margin"
    ) + ", years, like for like, quality"
    notes.insert(0, (heading, [*money.money_lines(review), money.sign_off_line(review)]))
    notes.insert(0, (decision.DETAIL_HEADING, review.reason.split("\n")))  # the box's detail, first below it
    if rec.under_load is not None and (lines := held_out.note_lines(load_loaded_ranges(), rec.under_load.percentile)):
        lines += held_out.uncovered_line(rec.option.name, rec.gpu.name, rec.engine)  # its GPU or engine unmeasured
        lines += slow_end.note_lines(review)  # the fleet at the ranges' slow end: shown, not applied
        notes.insert(2, ("Simulated latency against published runs", lines))
    if review.mixes:  # the [[mix]] budget lines, each the sum of its parts; figures on the Mixes sheet
        notes.append(
            ("Mixed fleets", [*money.mix_lines(review), money.MIX_NOTE + " Parts and totals: the Mixes sheet."])
        )
    notes.append(("How to read the other sheets", _reading_notes(review)))
    # each note spans A:F, as tall as its wrapped lines there (fit_row's rule). The former 150 characters a line
    # (the span holds about 190) left every note a line or two too tall, and LibreOffice's fit-to-width search
    # printed the README example's Summary, just over two pages so, at 71% (7.8-pt text) where 74% fits its width
    span = sum(ws.column_dimensions[c].width for c in "ABCDEF")
    for heading, lines in notes:
        _label(ws, r, heading)
        for k, text in enumerate(lines, start=1):
            ws.merge_cells(start_row=r + k, start_column=1, end_row=r + k, end_column=6)
            put_text(ws.cell(row=r + k, column=1), text)
            ws.cell(row=r + k, column=1).alignment = Alignment(wrap_text=True, vertical="top")
            ws.row_dimensions[r + k].height = LINE_PT * wrapped_lines(text, span) + 3
        keep_together(ws, r, r + len(lines))  # a heading never last on its page (trial 23: "Simulated latency" was)
        r += len(lines) + 2


def _budget_figures(review: Review) -> list[tuple[str, object, str]]:
    """The recommended option's two budget figures and which is which (trial 14 F6: the key figures led with the
    amortized total per year, $660,789 in the README example, and left its $1,608,572 of year-1 cash to a sentence):
    the total per year (the P&L's: capex amortized), the cash over the first year (capex when paid, the fleet added by
    quarter: Ownership); ``_budget_request`` names them. Where capex is a level payment at a cost of capital the total
    per month x 12 is no P&L figure (trial 26 F6): the P&L's year (straight-line depreciation + opex) and the capital
    charge (the rest) are given apart."""
    rec, fin = review.recommended, review.scenario.finance
    oo = review.outlook.of(rec.option.name) if review.outlook is not None else None
    m, n = rec.money, rec.gpus
    owned = m.pricing == "purchase"
    per_year = "Total per year (P&L, capex amortized)" if owned else "Total per year"
    rows: list[tuple[str, object, str]] = [(per_year, rec.monthly_usd * 12, "usd")]
    if owned and _financed(m):  # trial 26 F6: the level payment's capital charge is no P&L expense
        rows = [
            ("Total per year (P&L: straight-line depreciation + opex)", m.pnl_usd_per_gpu_month * n * 12, "usd"),
            (
                f"Capital charge per year ({cost_of_capital_words(fin.cost_of_capital)}: total per month x 12 less "
                "the P&L)",
                m.financing_usd_per_gpu_month * n * 12,
                "usd",
            ),
        ]
    if oo is None:
        return rows
    label = money.year1_label(fin.horizon_months)
    rows.append((f"{label} (fleet added by quarter)", oo.ownership.year1_cash_usd, "usd"))
    return rows


#: Key-figure rows printed on the page of the budget request's note beneath them (``keep_together``): the note names
#: the figures it reads, so it never opens a page alone.
NOTE_KEPT_WITH = 2


def _budget_request(review: Review) -> list[tuple[str, object, str]]:
    """The key figures' last line: which of ``_budget_figures`` the cash budget and the P&L book (a note across both
    columns, under the figures: a tall row beside the targets would split them; two lines at most: a few lines more
    tipped the README example's Summary past two pages and LibreOffice printed it at 7.8 pt, under 8). What signing
    commits to is said under "Margin, years" (``money_tables.horizon_line``)."""
    rec, fin = review.recommended, review.scenario.finance
    oo = review.outlook.of(rec.option.name) if review.outlook is not None else None
    if oo is None:
        return []
    owned = rec.money.pricing == "purchase"
    phrase = money.year1_phrase(fin.horizon_months)
    if owned and _financed(rec.money):
        which = (
            f"Budget request: for cash, the {phrase} (capex paid when bought); for the P&L, the total per year "
            f"(depreciation {depreciation_terms(rec.option, fin)}, plus opex). The total per month adds the capital "
            "charge (capex as a level payment at the cost of capital), the basis options rank on."
        )
    elif owned:
        which = (
            f"Budget request: for cash, the {phrase} (capex paid when bought); for the P&L, the total per year (capex "
            f"amortized {capital_terms(rec.option, fin)})."
        )
    else:
        which = f"Budget request: rent is cash and expense alike; for cash and the P&L, the {phrase}."
    if (own := rec.own_runs) is not None and own.meets and round(own.monthly_usd) != round(rec.monthly_usd):
        # trial 26 F18: the deployment's own published runs call for another fleet (reason.own_runs_budget)
        which += f" Until one replica is measured: ${own.monthly_usd:,.0f} a month, {own.gpus:,} GPUs (What to budget)."
    return [(which, None, "note")]


def _financed(money: Money) -> bool:
    """Whether a bought option's monthly capex is a level payment at a cost of capital, not straight-line depreciation
    (more than a cent a GPU-month apart), so the P&L's figure and the ranking's differ."""
    return money.financing_usd_per_gpu_month > 0.005


def _held_out_figures(rec) -> list[tuple[str, object, str]]:
    """The recommended option's simulated high-percentile TPOT and TTFT at the peak, each with its held-out range
    (``planner.export.held_out``), as key-figure rows; none when the fleet was not sized on simulated percentiles.
    Shown, not applied: the rows above them (TPOT at peak, the margin, the cost) are the simulated sizing's."""
    sim = rec.under_load
    if sim is None:
        return []
    ranges, q = load_loaded_ranges(), sim.percentile
    tpot_ms, ttft_s = float(rec.fleet.tpot_peak_s) * 1e3, sim.result.ttft_s.at(q)
    open_end = held_out.open_end_of(rec)  # a replica across nodes: slower than modelled, the slow end open
    tpot_range = held_out.range_text(tpot_ms, held_out.range_for(ranges, "tpot", q), "ms", open_end=open_end)
    ttft_range = held_out.range_text(ttft_s, held_out.range_for(ranges, "ttft", q), "s", open_end=open_end)
    return [
        # the short label: one line in column A (the note on simulated latency says what the range is)
        *([(f"TPOT at peak: {held_out.SHORT_LABEL}", tpot_range, "text")] if tpot_range else []),
        (f"TTFT at peak: simulated p{q:g}", ttft_s, "s"),
        *([(f"TTFT at peak: {held_out.SHORT_LABEL}", ttft_range, "text")] if ttft_range else []),
    ]


def _headroom_figures(rec) -> list[tuple[str, object, str]]:
    """The recommended option's headroom at the planned peak as key-figure rows, each saying what it is (a trial: the
    Glossary called the Latency sheet's figure larger where it read "under 2%" against Summary's 10%): sized on
    simulated percentiles, the share of the deployed replicas' capacity left (its spares and whole nodes), then what
    the serving replicas alone take (``tables.serving_headroom_text``, the Latency sheet's); by Little's law, the
    share of batch slots free."""
    f = rec.fleet
    if rec.under_load is None:
        return [("Headroom at peak (batch slots free)", float(f.headroom_peak), "pct")]
    spares = rec.option.spare_replicas
    # labels that fit column A (40 characters) unwrapped: the value cell beside them stops an overflow
    rows = [
        (
            "Headroom at peak: spares, whole nodes" if spares else "Headroom at peak: whole nodes",
            float(f.headroom_peak),
            "pct",
        )
    ]
    if rec.load_curve is not None:
        without = {0: "Headroom of the serving replicas", 1: "Headroom without the spare"}.get(
            spares, f"Headroom without the {spares} spares"
        )
        rows.append((f"{without} (Latency)", serving_headroom_text(rec.load_curve), "text"))
    return rows


#: The key figures' label of the recommended option's fleet at the held-out ranges' slow end (each row's label one
#: line in column A: two-line labels tipped the README example's Summary under 8 pt in print).
SLOW_END_FIGURE = "Held-out slow end"


def _slow_end_figures(rec) -> list[tuple[str, object, str]]:
    """The recommended option's fleet at the held-out ranges' slow end (``planner.export.slow_end``), as key-figure
    rows: GPUs and monthly cost, or that no fleet meets the targets there; none without one."""
    s = rec.slow_end
    if s is None:
        return []
    if not s.meets:
        return [(f"{SLOW_END_FIGURE}: GPUs (not applied)", s.shortfall, "text")]
    return [
        (f"{SLOW_END_FIGURE}: GPUs (not applied)", s.gpus, "int"),
        (f"{SLOW_END_FIGURE}: monthly (not applied)", s.monthly_usd, "usd"),
    ]


def _grow_row(ws: Worksheet, row: int, texts: tuple[tuple[str, float], ...] = ()) -> None:
    """Make a Summary row tall enough for its wrapped cells and ``texts`` ((text, width in characters): a formula's
    text, which may change) where one takes more than a line (``fit_row``'s measure), its cells then set at the top;
    a row of one-line text keeps its height (the printed pages stay as they were)."""
    lines = max([row_lines(ws, row)] + [wrapped_lines(t, w) for t, w in texts])
    if lines <= 1:
        return
    ws.row_dimensions[row].height = max(ws.row_dimensions[row].height or 0.0, LINE_PT * lines + 3)
    for cell in ws[row]:
        if cell.value is not None and cell.alignment.vertical != "top":
            a = cell.alignment
            cell.alignment = Alignment(
                horizontal=a.horizontal, vertical="top", wrap_text=a.wrap_text, indent=a.indent or 0
            )


def _figures(ws: Worksheet, figures: list, top: int, col: int) -> int:
    """Label / value rows from ``top`` in columns ``col`` and ``col + 1``; a None value is a heading. Next free row."""
    r = top
    for label, value, kind in figures:
        a = ws.cell(row=r, column=col)
        put_text(a, label)
        if kind == "note":  # a sentence across the label and value columns, wrapped
            ws.merge_cells(start_row=r, start_column=col, end_row=r, end_column=col + 1)
            a.font = NOTE_FONT
            a.alignment = Alignment(wrap_text=True, vertical="top")
            width = sum(ws.column_dimensions[get_column_letter(j)].width or 8.43 for j in (col, col + 1))
            ws.row_dimensions[r].height = LINE_PT * wrapped_lines(label, width * 0.9) + 3  # italic runs wider
            r += 1
            continue
        if value is None:
            a.font = Font(bold=True, size=12)
            r += 1
            continue
        b = ws.cell(row=r, column=col + 1)
        b.alignment = Alignment(horizontal="right")
        if kind == "text":
            put_text(b, value)
            width = ws.column_dimensions[get_column_letter(col + 1)].width or 8.43
            if wrapped_lines(str(value), width) > 1:
                # a sentence wider than its cell was cut on the left in print (trial 24 F17: "vider than the target
                # allows" of a slow end not met): wrapped from the left, the row as tall as its lines
                b.alignment = Alignment(horizontal="left", vertical="top", wrap_text=True)
        else:
            b.value = value
            b.number_format = NUMBER_FORMATS[kind]
        a.border = b.border = THIN
        if wrapped_lines(label, ws.column_dimensions[get_column_letter(col)].width or 8.43) > 1:
            # trial 30 F10: a label wider than its column was cut in print ("Capex per month (over 36 months at an
            # 8.0% cost o") or ran into its value: wrapped, the row as tall as its lines
            a.alignment = Alignment(horizontal="left", vertical="top", wrap_text=True)
        if a.alignment.wrap_text or b.alignment.wrap_text:
            _grow_row(ws, r)
        r += 1
    return r


def _reading_notes(review: Review) -> list[str]:
    x, w = review.scenario.traffic_change, review.scenario.workload
    return [
        *money.margin_verdict_lines(review),  # trial 33 F10: a margin-sized fleet is not a budget figure, said first
        "Options: every option, ranked by monthly cost; the rank is the snapshot's, Live rank follows the yellow "
        "$ per GPU-month cells (monthly cost = GPUs x $ per GPU-month, annual = monthly x 12). Green: recommended. "
        "Grey: cannot meet the targets (why: Note). Price kind says which price each row pays: rows of different "
        "kinds (purchase, on-demand, spot, reserved) are ranked together only as stated there. "
        f"{_yellow_words(review)}"
        + (
            " Held-out slow end: the GPUs and monthly cost each option would take if real latency sat at the slow end "
            "of the held-out ranges (shown, not applied: see the note on simulated latency above)."
            if shows_slow_end(review)
            else ""
        ),
        "Costs: total cost of ownership. Bought: capex up front (GPUs + host servers + network per node), "
        f"{amortization_rule(review.scenario.finance)}, plus opex (power at full load x PUE, colocation per kW). "
        "Rented: the rent is all opex.",
        f"Details: GPU, model, precisions, price, pessimistic TPOT, TPOT of a decode step alone (the full batch, "
        f"every sequence at p{w.high_percentile:g} length: memory's worst case, no prompts in the step; on another "
        "basis than TPOT at peak, the simulated percentile at the peak's traffic and sized lengths, so it can read "
        f"lower), cost per input token, headroom at peak ({_headroom_words(review)}); "
        f"the -/+ columns are each option {SIZED_AFRESH}, {x:.0%} below and above the planned peak.",
        f"Levers: {review.baseline_misses}."  # a named baseline that misses the targets (trial 31 F8)
        if review.baseline_misses
        else f"Levers: each changes one thing in the baseline ({review.baseline.option.name}) and sizes it again, "
        "replicas and GPUs per replica shown; saving = baseline monthly cost - lever monthly cost (negative: costs more).",
        "Charts: monthly cost and GPUs against peak traffic (data on Chart data); the dotted grey line marks the "
        "planned peak. Assumptions: every number used, with a link to its source.",
        "Like for like: every GPU x price kind x weight precision sized the same way. Ownership: the margin's price, "
        "year-1 cash and the horizon's total with the fleet added by quarter (Fleet by quarter), present value at "
        "the scenario's cost of capital, residual value, commitment. Demand cases: low, base and high traffic. "
        "Glossary: the terms used.",
    ]


def _headroom_words(review: Review) -> str:
    """What the review's "Headroom (peak)" figures are, on the basis they were sized on (``sizing.size``): sized on
    simulated percentiles, the share of what the deployed replicas carry within the targets left at the planned peak
    (their spares and whole nodes); by Little's law, the share of batch slots free there. One definition, the
    Glossary's (a trial: this note gave Little's law's where the numbers were 1 - 9/10)."""
    slots = "the share of batch slots free at the planned peak, by Little's law (negative: requests wait for a slot)"
    if review.scenario.workload.sizing != "simulated":
        return slots
    fell_back = any(r.meets and r.under_load is None for r in review.results)  # its warning: "sized by Little's law"
    return (
        "the share of what the deployed replicas carry within the targets left at the planned peak: the spare "
        "replicas and whole nodes; the Latency sheet's headroom is the serving replicas' alone"
        + (f"; an option sized by Little's law: {slots}" if fell_back else "")
    )


def _yellow_words(review: Review) -> str:
    """What the yellow cells change and what they are (trial 14 F5): only Options and the LIVE box follow them, the
    other sheets are snapshots (their printed headings say so); a bought option's cell is a blended figure."""
    text = (
        "Only Options and the LIVE box above follow an edited yellow cell: Costs, Details, Like for like, Ownership, "
        "Demand cases, Levers, Charts and Assumptions are snapshots computed when the workbook was written (their "
        "printed headings say so)."
    )
    if any(r.meets and r.money.pricing == "purchase" for r in review.results):
        text += (
            " A bought option's yellow cell is a blended figure per GPU-month (capex amortized, plus power and "
            "colocation: Costs), not the GPU's purchase price: for another purchase price set purchase_usd in the "
            "scenario and export again."
        )
    return text


#: Width of the Summary's column E (characters): the LIVE box's values, the Sensitivity table's cheapest option.
LIVE_WIDTH = 24


def _live_box(book: _Book, ws: Worksheet, top: int) -> None:
    """Formulas over Options (cached with the review's values): they follow edited prices; the rest does not."""
    review = book.review
    n = len(review.results)
    keys = _options_keys(review)
    mon = _col(keys, "monthly_usd")
    opt = _col(keys, "option")
    rec_row = review.results.index(review.recommended) + 2
    rng = f"Options!${mon}$2:${mon}${n + 1}"
    cheapest = min((r for r in review.results if r.meets), key=lambda r: r.monthly_usd)
    put_text(ws.cell(row=top, column=4), "LIVE (follows Options)")
    ws.cell(row=top, column=4).font = Font(bold=True, size=12, color="1F4E79")
    rows = [
        (
            "Cheapest option at the prices on Options",
            f"=INDEX(Options!${opt}$2:${opt}${n + 1},MATCH(MIN({rng}),{rng},0))",
            cheapest.option.name,
            "text",
        ),  # fmt: skip
        ("Its monthly cost", f"=MIN({rng})", cheapest.monthly_usd, "usd"),
        (
            f"{review.recommended.option.name}: monthly cost",
            f"=Options!{mon}{rec_row}",
            review.recommended.monthly_usd,
            "usd",
        ),
    ]
    # the cheapest option's name follows the prices: any option's may show, so its row holds the longest wrapped
    # (a trial: a 34-character name, right-aligned and unwrapped, printed with its first word cut off on the left)
    longest = max((r.option.name for r in review.results), key=lambda name: wrapped_lines(name, LIVE_WIDTH))
    for k, (label, formula, value, kind) in enumerate(rows, start=1):
        a = ws.cell(row=top + k, column=4)
        put_text(a, label)
        a.alignment = Alignment(wrap_text=True, vertical="top")
        cell = ws.cell(row=top + k, column=5)
        book.cache.formula(ws, cell.coordinate, formula, value)
        cell.number_format = NUMBER_FORMATS[kind]
        cell.fill = LIVE_FILL
        cell.alignment = Alignment(horizontal="right", vertical="top", wrap_text=kind == "text")
        _grow_row(ws, top + k, ((longest, LIVE_WIDTH),) if kind == "text" else ())


def _options_keys(review: Review) -> tuple[str, ...]:
    """The Options sheet's columns: ``tables.main_keys`` (``MAIN_KEYS`` and, after TPOT at peak, the fleet at the
    held-out ranges' slow end where the review has it), with TPOT at peak's held-out range beside it when the options
    were sized on simulated percentiles and the held-out table has its range (``tables.tpot_ranges``)."""
    keys = main_keys(review)
    if tpot_ranges(review, load_loaded_ranges()) is None:
        return keys
    at = keys.index("tpot_ms") + 1
    return (*keys[:at], "tpot_range", *keys[at:])


def _options(book: _Book) -> None:
    review = book.review
    ws = book.sheet("Options", "Options, ranked by monthly cost (yellow: edit; blue: live)")
    full = options_table(review)
    main = select(full, main_keys(review))
    ranged = tpot_ranges(review, load_loaded_ranges())
    if ranged is not None:  # beside TPOT at peak (the simulated percentile): its held-out range (_options_keys)
        at = main_keys(review).index("tpot_ms") + 1
        values = tpot_range_values(review, load_loaded_ranges())
        main = Table(
            (*main.columns[:at], ranged, *main.columns[at:]),
            tuple((*row[:at], v, *row[at:]) for row, v in zip(main.rows, values, strict=True)),
        )
    keys = (*_options_keys(review), "live_rank")
    main = Table((*main.columns, Column("Live rank", "int", "live_rank")), tuple((*r, None) for r in main.rows))
    widths = {"rank": 6, "option": 24, "price_kind": 11, "meets_targets": 9, "gpus": 9, "note": 28, "live_rank": 8}
    # a fleet sized at batch 1 (its TPOT just meets the target) runs to 5-digit GPU counts, $1e9 a year and
    # $1,000s per million tokens: a number wider than its column prints ### in LibreOffice
    widths |= {"monthly_usd": 15, "annual_usd": 17, "usd_per_million_output_tokens": 12, "tpot_range": 14}
    widths |= {"usd_per_million_output_all_in": 12}
    widths |= {k: 13 for k in SLOW_END_KEYS} | {"slow_end_monthly_usd": 15, "slow_end_note": 24}
    _write_table(ws, main, 1, {**{k: 11 for k in keys}, **widths})
    gpus, per, mon, ann, live = (
        _col(keys, k) for k in ("gpus", "usd_per_gpu_month", "monthly_usd", "annual_usd", "live_rank")
    )
    n = len(review.results)
    for i, r in enumerate(review.results, start=2):
        if r.meets:
            book.cache.formula(ws, f"{mon}{i}", f"={gpus}{i}*{per}{i}", r.monthly_usd)
            book.cache.formula(ws, f"{ann}{i}", f"={mon}{i}*12", r.monthly_usd * 12)
            book.cache.formula(ws, f"{live}{i}", f"=RANK({mon}{i},${mon}$2:${mon}${n + 1},1)", i - 1)
            ws[f"{per}{i}"].fill = INPUT_FILL
            ws[f"{per}{i}"].protection = Protection(locked=False)  # the only cells a reader may edit
            for c in (mon, ann, live):
                ws[f"{c}{i}"].fill = LIVE_FILL
            # $ per M tokens follow the price as the monthly cost does: the tokens are fixed, the cost scales
            for key, usd in (
                ("usd_per_million_input_tokens", r.fleet.usd_per_million_input),
                ("usd_per_million_output_tokens", r.fleet.usd_per_million_output),
                ("usd_per_million_output_all_in", r.fleet.usd_per_million_output_all_in),
            ):
                if key in keys and math.isfinite(float(usd)) and r.monthly_usd > 0:
                    c = _col(keys, key)
                    book.cache.formula(ws, f"{c}{i}", f"={float(usd)!r}*{mon}{i}/{float(r.monthly_usd)!r}", float(usd))
                    ws[f"{c}{i}"].fill = LIVE_FILL
        if r.slow_end is not None and r.slow_end.meets:  # its cost follows the edited price too, as monthly cost
            s_gpus, s_mon, s_more = (
                _col(keys, k) for k in ("slow_end_gpus", "slow_end_monthly_usd", "slow_end_more_usd_per_month")
            )
            book.cache.formula(ws, f"{s_mon}{i}", f"={s_gpus}{i}*{per}{i}", r.slow_end.monthly_usd)
            book.cache.formula(ws, f"{s_more}{i}", f"={s_mon}{i}-{mon}{i}", r.slow_end.monthly_usd - r.monthly_usd)
            for c in (s_mon, s_more):
                ws[f"{c}{i}"].fill = LIVE_FILL
        fill = REC_FILL if r is review.recommended else (NO_FILL if not r.meets else None)
        if fill:
            for j in range(1, len(keys) + 1):
                if ws.cell(row=i, column=j).fill.fgColor.rgb in (None, "00000000"):
                    ws.cell(row=i, column=j).fill = fill
    ws.freeze_panes = "C2"

    ws = book.sheet("Costs", snapshot("Total cost of ownership of the options that meet the targets"))
    _write_table(ws, tco_table(review), 1, {"option": 24, "price_kind": 11})
    ws.freeze_panes = "B2"

    ws = book.sheet("Details", snapshot("Details of each option (same order as Options)"))
    widths = {"option": 24, "gpu": 16, "model": 16, "precisions": 11, "pricing": 26, "batch_cap": 40}
    _write_table(ws, select(full, detail_keys(full)), 1, widths)
    ws.freeze_panes = "B2"


#: Dollar totals over years run to $10,000,000s: 15 characters keep them from printing ###.
MONEY_WIDTHS = {k: 15 for k in ("year1_cash_usd", "year1_cash_full_usd", "total_usd", "total_full_usd",
                                "present_value_usd", "residual_usd", "monthly_usd", "monthly_usd_without_margin")}  # fmt: skip


def _money(book: _Book) -> None:
    """Like for like, Ownership, Demand cases, Fleet by quarter: each a table from A1 (``money_tables``)."""
    review = book.review
    for title, heading, table, widths in (
        ("Like for like", snapshot("Every GPU x price kind x weight precision, ranked by monthly cost"),
         money.grid_table(review),
         {"gpu": 16, "price_kind": 11, "weights": 9, "price_from": 30, "note": 40}),
        ("Ownership", snapshot(f"The margin's price, {money.year1_phrase(review.scenario.finance.horizon_months)}, "
         "the horizon's total, commitments"), money.ownership_table(review),
         {"option": 24, "price_kind": 11, "commitment": 34, "price_from": 30}),
        ("Demand cases", snapshot("Demand cases, each option sized afresh"),
         money.cases_table(review), {"option": 24, "case": 14, "cheapest": 24}),
        ("Fleet by quarter", money.quarters_heading(review), money.phasing_table(review),
         {"option": 24, **{f"q{q}": 14 for q in range(1, 100)}}),
    ):  # fmt: skip
        ws = book.sheet(title, heading)
        _write_table(ws, table, 1, {**MONEY_WIDTHS, **widths})
        ws.freeze_panes = "B2"


def _breakeven(book: _Book) -> None:
    """Break-even, after Ownership: each option's cumulative cash by quarter, a bought option's break-even month
    against each rented one and the capex per GPU at which it costs what renting does (``planner.export.breakeven``;
    trial 30 F1, F3); no sheet where no option meets the targets."""
    review = book.review
    if review.outlook is None or not (table := breakeven.cumulative_table(review)).rows:
        return
    ws = book.sheet("Break-even", snapshot(breakeven.cumulative_heading(review)))
    book.wb.move_sheet(ws, offset=book.wb.sheetnames.index("Ownership") + 1 - book.wb.sheetnames.index(ws.title))
    widths = {"option": 24, "price_kind": 11, "break_even": 34, **{c.key: 15 for c in table.columns[3:]}}
    _write_table(ws, table, 1, widths)
    ws.freeze_panes = "B2"


def _cash_by_year(book: _Book) -> None:
    """Cash by year, after Break-even: the compared options' capex, opex, cash out, cumulative cash and depreciation
    per year of the horizon, and the Total (``planner.export.cash_by_year``); a note under the table says which of
    the review's values they rest on. No sheet where no option meets the targets."""
    review = book.review
    if review.outlook is None or not (table := cash_by_year.cash_by_year_table(review)).rows:
        return
    ws = book.sheet("Cash by year", snapshot(cash_by_year.cash_by_year_heading(review)))
    after = "Break-even" if "Break-even" in book.wb.sheetnames else "Ownership"
    book.wb.move_sheet(ws, offset=book.wb.sheetnames.index(after) + 1 - book.wb.sheetnames.index(ws.title))
    widths = {"option": 30, "price_kind": 11, "line": 32, **{c.key: 15 for c in table.columns[3:]}}
    _write_table(ws, table, 1, widths)
    chars = sum(widths[c.key] for c in table.columns)
    note_row(ws, len(table.rows) + 3, len(table.columns), cash_by_year.cash_by_year_note(review), chars)
    ws.freeze_panes = "D2"


def _mixes(book: _Book) -> None:
    """Mixes: each [[mix]]'s parts, each its option sized alone at its share, and the total row, their sums
    (``money_tables.mix_table``); no sheet where the scenario has no mix."""
    if not book.review.mixes:
        return
    ws = book.sheet("Mixes", snapshot("Mixed fleets: each part sized alone at its share; the total, their sums"))
    _write_table(ws, money.mix_table(book.review), 1,
                 {**MONEY_WIDTHS, "mix": 20, "option": 24, "model": 16, "gpu": 16, "price_kind": 11, "note": 40})  # fmt: skip
    ws.freeze_panes = "C2"


def _glossary(book: _Book) -> None:
    ws = book.sheet("Glossary", "Glossary: the terms this review uses")
    header_row(ws, 1, ["Term", "Meaning"])
    glossary = terms(bool(book.review.mixes))
    for i, (term, text) in enumerate(glossary, start=2):
        put_text(ws.cell(row=i, column=1), term)
        ws.cell(row=i, column=1).font = Font(bold=True)
        put_text(ws.cell(row=i, column=2), text)
        for j in (1, 2):
            ws.cell(row=i, column=j).alignment = WRAP
            ws.cell(row=i, column=j).border = THIN
    ws.column_dimensions["A"].width = 20
    ws.column_dimensions["B"].width = 110
    for r in range(1, len(glossary) + 2):
        fit_row(ws, r)


def _levers(book: _Book) -> None:
    ws = book.sheet("Levers", snapshot(f"Levers against the baseline ({book.review.baseline.option.name})"))
    _write_table(ws, levers_table(book.review), 1, {"lever": 20, "change": 40, "effect": 50, "gpus": 8})


def _charts(book: _Book) -> None:
    review = book.review
    data = book.sheet("Chart data", snapshot("Fleets by traffic: sized afresh or scaled"))  # the Charts note says where
    table = sweep_table(review)
    _write_table(data, table, 1)
    data.column_dimensions["A"].width = 16
    rows = len(table.rows)
    n_opt = (len(table.columns) - 1) // 2
    names = [r.option.name for r in charted(review)]
    planned, _ = planned_peak(review)

    ws = book.sheet("Charts", snapshot("Monthly cost and GPUs against peak traffic"), None)
    left_out = [r.option.name for r in review.results if r.meets and r not in charted(review)]
    note = f"Dotted grey line: the planned peak ({planned:,.3g}). {charts_sizing_text(review)}"
    note += coincident_note(table, names, n_opt)
    if left_out:
        note += f" {not_charted_text(left_out)}"
    letters = [get_column_letter(j) for j in range(1, 17)]  # read without creating: a new dimension sets a width
    chars = sum((ws.column_dimensions[c].width if c in ws.column_dimensions else 0) or 8.43 for c in letters)
    last = note_row(ws, CHARTS_NOTE_ROW, 16, note, chars)
    ws.print_area = f"A1:P{last}"
    # the planned-peak marker: a vertical segment, its points kept below the printed area
    helper = 44
    put_text(ws.cell(row=helper, column=1), "Chart helper: the planned-peak marker (x, cost, GPUs)")
    costs = [v for row in table.rows for v in row[1 : 1 + n_opt]]
    counts = [v for row in table.rows for v in row[1 + n_opt :]]
    for k, (y_cost, y_gpus) in enumerate(((0, 0), (max(costs) * 1.05, max(counts) * 1.05)), start=1):
        ws.cell(row=helper + k, column=1, value=planned)
        ws.cell(row=helper + k, column=2, value=y_cost)
        ws.cell(row=helper + k, column=3, value=y_gpus)
    x = Reference(data, min_col=1, min_row=2, max_row=rows + 1)
    xs = [row[0] for row in table.rows]
    for title, y_title, first, anchor, number_format, marker_col in (
        ("Monthly cost against peak traffic", "US$ per month", 2, "A1", '"$"#,##0', 2),
        ("GPUs needed against peak traffic", "GPUs", 2 + n_opt, "A19", "0", 3),
    ):
        ch = _scatter_chart(title, table.columns[0].header, y_title, number_format, x_max=max(xs))
        same = coincident([[row[j - 1] for row in table.rows] for j in range(first, first + n_opt)])  # 1-based
        for j in range(first, first + n_opt):
            ys = Reference(data, min_col=j, min_row=2, max_row=rows + 1)
            style = SERIES_STYLES[(j - first) % len(SERIES_STYLES)]
            series = _styled_series(ys, x, _series_name(names[j - first]), *style, marker_size=6)
            ch.series.append(_ringed(series, 6) if j - first in same else series)
        ch.series.append(_marker_line(ws, helper + 1, marker_col, f"Planned peak ({planned:,.3g})"))
        ws.add_chart(ch, anchor)
    ws.page_setup.fitToHeight = 1


#: The Charts sheet's note: the row under its two charts (8.6 cm tall each, anchored at A1 and A19).
CHARTS_NOTE_ROW = 37


def note_row(ws: Worksheet, row: int, columns: int, text: str, chars: float) -> int:
    """An italic note in one row merged across ``columns`` columns (``chars`` characters wide in all), as tall as its
    wrapped lines (``wrapped_lines``, italic read 0.8 as wide); returns the row, the printed area's last.

    One row, never a merge over several (trial 23, F8; trial 20, F9 before it): LibreOffice's fit to one page tall
    counts the printed area's rows down to the last that holds a value, so the empty rows under a note merged over
    rows 37-38 were left out of the scale, then fell off the page, and the note printed cut after row 37's share."""
    ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=columns)
    cell = ws.cell(row=row, column=1)
    put_text(cell, text)
    cell.font = NOTE_FONT
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[row].height = LINE_PT * wrapped_lines(text, chars * 0.8) + 3  # italic runs wider
    return row


def not_charted_text(names: list[str], why: str = "") -> str:
    """ "Not charted (over 3x the recommended cost, or beyond the cheapest 5): A, B." for options that meet the
    targets but are left off the charts (``charted``); ``why`` replaces the reason in brackets."""
    why = why or f"over {CHART_COST_LIMIT:g}x the recommended cost, or beyond the cheapest {CHART_MAX_OPTIONS}"
    return f"Not charted ({why}): {', '.join(names)}."


#: The row of the Latency sheet's headroom table, under its two charts (7 cm tall each, anchored at A1 and A15), so
#: that the sheet prints on one page at the Charts sheet's scale.
LATENCY_TABLE_ROW = 29


def _latency(book: _Book) -> None:
    """The latency-against-load view: each charted option's planned fleet (replicas fixed) under traffic from a
    quarter to twice the planned peak, p50 (dashed) and high-percentile (solid) TTFT and TPOT, the targets and
    the planned peak marked; the headroom table below. Only for reviews sized on simulated percentiles."""
    review = book.review
    shown = latency_charted(review)
    if not shown:
        return
    ranges = load_loaded_ranges() or None  # an install without loaded_residuals.csv: no range columns, no note
    table = latency_table(review, ranges)
    where = {c.key: j for j, c in enumerate(table.columns)}  # a figure's column: its range's text may follow it
    data = book.sheet(
        "Latency data", "Data of the latency charts: each option's planned fleet under more or less traffic"
    )
    _write_table(data, table, 1)
    rows = len(table.rows)
    w = review.scenario.workload
    q = shown[0].load_curve.percentile
    planned = shown[0].load_curve.peak_requests_per_s
    ws = book.sheet("Latency", f"Latency against traffic: p50 and p{q:g} of each option's planned fleet", None)
    heads = headroom_table(review, ranges)
    _write_table(
        ws,
        heads,
        LATENCY_TABLE_ROW,
        {
            "option": 16,
            "replicas": 8.43,
            "headroom": 13,
            **dict.fromkeys(("ttft_peak", "tpot_peak"), 9),
            **dict.fromkeys(("ttft_goal", "tpot_goal"), 10),
            **dict.fromkeys(("ttft_peak_range", "tpot_peak_range"), 10),
        },
    )
    goals = [i for i, r in enumerate(shown) if r.margin > 0]  # options whose goal is below the target
    goal_words = "; thin, in its colour: an option's goal (target less margin)" if goals else ""
    note = (  # short: the page prints at 8 pt or more only with the note within five estimated lines
        f"Each option keeps its serving replicas (the fewest meeting the goals at the peak; spares apart) as traffic "
        f"changes (sized lengths, burstiness {w.burstiness:g}). Dashed: p50; solid: p{q:g}; dotted: the planned peak "
        f"({planned:,.3g} requests/s) and the target{goal_words}. A line stops past a replica's capacity or at "
        f"{LATENCY_CHART_CAP:g}x the target. Headroom: the extra traffic the serving replicas take (spares unused) "
        "within both goals; Summary's headroom at peak is the spares' and whole nodes'."
    )
    # trial 20, F9: say which options meeting the targets the page leaves out, and why
    off_count = [r.option.name for r in review.results if r.meets and r.load_curve is not None and r not in shown]
    off_curve = [r.option.name for r in review.results if r.meets and r.load_curve is None]
    if off_count:
        models = {r.model.name for r in review.results if r.meets}
        cost = "the cost" if len(models) == 1 else "their model's cheapest"  # short: the page's scale rests on it
        why = f"over {CHART_COST_LIMIT:g}x {cost}, or past the cheapest {CHART_MAX_OPTIONS}"
        note += f" {not_charted_text(off_count, why)}"
    if off_curve:
        note += f" {not_charted_text(off_curve, 'not sized on simulated percentiles')}"
    figures = [
        [row[where[f"{m}_{which}_{i}"]] for m in ("ttft", "tpot") for which in ("p50", "high") for row in table.rows]
        for i in range(len(shown))
    ]
    note += "".join(
        f" {shown[j].option.name} runs as {shown[i].option.name} at every traffic level (its markers ring the other's)."
        for j, i in coincident(figures).items()
    )
    top = LATENCY_TABLE_ROW + 1 + len(heads.rows) + 1
    ws.merge_cells(start_row=top, start_column=1, end_row=top + 3, end_column=13)
    put_text(ws.cell(row=top, column=1), note)
    ws.cell(row=top, column=1).font = NOTE_FONT
    ws.cell(row=top, column=1).alignment = Alignment(wrap_text=True, vertical="top")
    # merged cells do not grow with their text: the four rows share the height the wrapped note needs
    chars = sum(ws.column_dimensions[get_column_letter(j)].width or 8.43 for j in range(1, 14))
    for r in range(top, top + 4):
        ws.row_dimensions[r].height = (LINE_PT * wrapped_lines(note, chars * 0.8) + 3) / 4  # italic runs wider
    helper = top + 4
    short = held_out.short_note(ranges or {}, q)  # what the ranges are, which is used and why, how well it holds
    for line in [short] if short else []:  # one line: the sheet prints on one page (Summary has the full note)
        ws.merge_cells(start_row=helper, start_column=1, end_row=helper, end_column=13)
        put_text(ws.cell(row=helper, column=1), line)
        ws.cell(row=helper, column=1).font = NOTE_FONT
        ws.cell(row=helper, column=1).alignment = Alignment(wrap_text=True, vertical="top")
        ws.row_dimensions[helper].height = LINE_PT * wrapped_lines(line, chars * 0.8) + 3
        helper += 1
    notes_end = helper - 1
    put_text(ws.cell(row=helper, column=1), "Chart helper: the planned peak and the targets (x, TTFT s, TPOT ms)")
    xs = [row[0] for row in table.rows]

    def highest(metric: str, target: float) -> float:  # the highest charted figure of a metric ("ttft", "tpot")
        keys = [f"{metric}_{which}_{i}" for i in range(len(shown)) for which in ("p50", "high")]
        cells = [row[where[k]] for row in table.rows for k in keys]
        return max([target, *(v for v in cells if isinstance(v, float) and math.isfinite(v))]) * 1.1

    k = 1
    goal_points = [
        (x, shown[i].load_curve.ttft_goal_s, shown[i].load_curve.tpot_goal_s * 1e3)
        for i in goals
        for x in (min(xs), max(xs))
    ]  # each option's goals (rows 5 and 6, 7 and 8 ...): trial 20, F7
    for x, t_ttft, t_tpot in (
        (planned, 0.0, 0.0),
        (planned, highest("ttft", w.ttft_target_s), highest("tpot", w.tpot_target_s * 1e3)),
        (min(xs), w.ttft_target_s, w.tpot_target_s * 1e3),
        (max(xs), w.ttft_target_s, w.tpot_target_s * 1e3),
        *goal_points,
    ):
        ws.cell(row=helper + k, column=1, value=x)
        ws.cell(row=helper + k, column=2, value=t_ttft)
        ws.cell(row=helper + k, column=3, value=t_tpot)
        k += 1
    x = Reference(data, min_col=1, min_row=2, max_row=rows + 1)
    for title, y_title, metric, anchor, number_format, marker_col in (
        ("Time to first token against traffic", "seconds", "ttft", "A1", "0.00", 2),
        ("Time per output token against traffic", "ms", "tpot", "A15", "0", 3),
    ):
        ch = _scatter_chart(
            title, table.columns[0].header, y_title, number_format, x_max=max(xs), legend_below_title=True
        )
        ch.height = 7.0
        curves = [
            [row[where[f"{metric}_{which}_{i}"]] for which in ("p50", "high") for row in table.rows]
            for i in range(len(shown))
        ]
        same = coincident(curves)  # an option whose fleet runs as another's: ringed, so that both stay visible
        for i in range(len(shown)):
            color, _, symbol = SERIES_STYLES[i % len(SERIES_STYLES)]
            for j, dash in ((0, "dash"), (1, "solid")):
                col = 1 + where[f"{metric}_{'p50' if j == 0 else 'high'}_{i}"]
                ys = Reference(data, min_col=col, min_row=2, max_row=rows + 1)
                name = _series_name(f"{shown[i].option.name}: p{50 if j == 0 else q:g}")
                series = _styled_series(ys, x, name, color, dash, symbol, marker_size=5)
                ch.series.append(_ringed(series, 5) if i in same else series)
        target = w.ttft_target_s if metric == "ttft" else w.tpot_target_s
        for first_row, label in ((1, f"Planned peak ({planned:,.3g})"), (3, f"Target ({_latency_text(target)})")):
            ch.series.append(_marker_line(ws, helper + first_row, marker_col, label))
        # trial 26 F5: the legend said "Target" where a reader saw the goal line (34 ms against a 50 ms target). One
        # goal shared by every charted option (one margin): in the legend with its value; several: each in its
        # option's colour, out of the legend (the note says what they are)
        shared = len({(round(shown[i].margin, 6), _goal_s(shown[i].load_curve, metric)) for i in goals}) == 1
        for n, i in enumerate(goals):
            name = (
                f"Target less {shown[i].margin:.0%} margin ({_latency_text(_goal_s(shown[i].load_curve, metric))})"
                if shared and n == 0
                else f"{shown[i].option.name}: goal"
            )
            goal = _marker_line(ws, helper + 5 + 2 * n, marker_col, _series_name(name))
            goal.graphicalProperties.line.solidFill = SERIES_STYLES[i % len(SERIES_STYLES)][0]
            goal.graphicalProperties.line.width = 12700
            ch.series.append(goal)
            if not (shared and n == 0):
                ch.legend.legendEntry.append(LegendEntry(idx=len(ch.series) - 1, delete=True))
        ws.add_chart(ch, anchor)
    ws.print_area = f"A1:M{max(top + 3, notes_end)}"
    ws.page_setup.fitToHeight = 1


def _scatter_chart(
    title: str, x_title: str, y_title: str, number_format: str, x_max: float | None = None,
    legend_below_title: bool = False,
) -> ScatterChart:  # fmt: skip
    """A review chart: titled axes both shown, the y axis in ``number_format``, 8.6 x 26 cm, legend on the right.
    ``x_max``: the x axis ends at the last traffic charted (a trial: it ran to 200 where the data ends at 180).
    ``legend_below_title``: a legend of many lines placed under the title, not centred on the chart's height, where
    its top ran into the title (a trial: the Latency sheet's two charts, ten lines each)."""
    ch = ScatterChart()
    ch.title = title
    ch.style = 2
    ch.x_axis.title = x_title
    ch.y_axis.title = y_title
    ch.y_axis.number_format = number_format
    ch.x_axis.delete = ch.y_axis.delete = False
    ch.height, ch.width = 8.6, 26
    ch.legend.position = "r"
    if x_max is not None:
        ch.x_axis.scaling.min, ch.x_axis.scaling.max = 0, x_max
    if legend_below_title:
        ch.legend.layout = Layout(ManualLayout(xMode="edge", yMode="edge", x=0.68, y=0.16, w=0.31, h=0.83))
    return ch


def coincident(values: list[list]) -> dict[int, int]:
    """{series: the earlier series it lies on}: every point of the series equal to the earlier one's (both empty
    where one is), so that one line would hide the other on a chart (a trial: "H100, rented" under "H100, bought" on
    GPUs against traffic, four series in the legend and three on the chart)."""
    same: dict[int, int] = {}
    for j, ys in enumerate(values):
        for i in range(j):
            if (
                i not in same
                and len(ys) == len(values[i])
                and all(_equal(a, b) for a, b in zip(ys, values[i], strict=True))
            ):
                same[j] = i
                break
    return same


def _equal(a, b) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def coincident_note(table: Table, names: list[str], n_opt: int) -> str:
    """The Charts note's sentence on options drawn on top of each other (``coincident``), per chart: " H100, rented
    needs the same GPUs as H100, bought at every traffic level (its markers ring the other's)." "" where none are."""
    out = ""
    for what, first in (("costs the same as", 1), ("needs the same GPUs as", 1 + n_opt)):
        same = coincident([[row[j] for row in table.rows] for j in range(first, first + n_opt)])
        out += "".join(
            f" {names[j]} {what} {names[i]} at every traffic level (its markers ring the other's)."
            for j, i in same.items()
        )
    return out


def _ringed(series: Series, marker_size: int) -> Series:
    """A series that lies on an earlier one (``coincident``): its markers larger and hollow, so that they ring the
    earlier series' and both options stay visible. Excel draws later series on top and leaves the ring hollow;
    LibreOffice (7.4) fills it but draws later series first, under the earlier one's markers: a ring either way."""
    series.marker.size = marker_size + 5
    series.marker.graphicalProperties.solidFill = None  # a fill and noFill both written: LibreOffice fills
    series.marker.graphicalProperties.noFill = True
    series.marker.graphicalProperties.line.width = 19050
    return series


def _styled_series(ys, xs, name: str, color: str, dash: str, symbol: str, marker_size: int) -> Series:
    """One option's line: its colour, dash and marker (``SERIES_STYLES``), 2.2 pt wide, straight segments."""
    s = Series(ys, xs)
    s.tx = SeriesLabel(v=name)
    s.graphicalProperties.line.solidFill = color
    s.graphicalProperties.line.prstDash = dash
    s.graphicalProperties.line.width = 22000
    s.marker.symbol = symbol
    s.marker.size = marker_size
    s.marker.graphicalProperties.solidFill = color
    s.marker.graphicalProperties.line.solidFill = color
    s.smooth = False
    return s


def _goal_s(curve: LoadCurve, metric: str) -> float:
    """The goal a load curve's option was sized against, seconds: its TTFT or TPOT ("ttft", "tpot") target less
    the margin."""
    return curve.ttft_goal_s if metric == "ttft" else curve.tpot_goal_s


def _latency_text(seconds: float) -> str:
    """A latency target as the Latency sheet's legend gives it: "50 ms" under a second, else "2.00 s"."""
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.2f} s"


def _marker_line(ws, first_row: int, y_col: int, label: str) -> Series:
    """A grey dotted segment through two helper points (x in column 1, y in ``y_col``, rows ``first_row`` and the
    next): the planned peak or a target marked on a chart."""
    xs = Reference(ws, min_col=1, min_row=first_row, max_row=first_row + 1)
    line = Series(Reference(ws, min_col=y_col, min_row=first_row, max_row=first_row + 1), xs)
    line.tx = SeriesLabel(v=label)
    line.graphicalProperties.line.solidFill = "7F7F7F"
    line.graphicalProperties.line.prstDash = "sysDot"
    line.graphicalProperties.line.width = 28000
    line.marker.symbol = "none"
    line.smooth = False
    return line


def _series_name(name: str) -> str:
    """User text for a chart series or title: plain text, no control characters."""
    return safe_text(name)


def _assumptions(book: _Book) -> None:
    ws = book.sheet("Assumptions", snapshot("Assumptions: every number used and its source"))
    header_row(ws, 1, ["What", "Value", "Unit", "Source (link)"])
    for i, a in enumerate(book.review.assumptions, start=2):
        put_text(ws.cell(row=i, column=1), a.what)
        v = ws.cell(row=i, column=2)
        if isinstance(a.value, str):
            put_text(v, a.value)
            v.alignment = WRAP
        else:
            v.value = a.value
            v.number_format = number_format_for(a.value, a.unit)
            v.alignment = NUM
        put_text(ws.cell(row=i, column=3), a.unit)
        src = ws.cell(row=i, column=4)
        put_text(src, a.label_with_links)  # a median's every quote page as text beside the one hyperlink
        if a.url.startswith(("https://", "http://")):
            src.hyperlink = a.url
            src.font = Font(color="0563C1", underline="single")
        for j in (1, 3, 4):
            ws.cell(row=i, column=j).alignment = WRAP
        for j in range(1, 5):
            ws.cell(row=i, column=j).border = THIN
    for col, width in zip("ABCD", (44, 22, 16, 62), strict=True):
        ws.column_dimensions[col].width = width
    for r in range(1, len(book.review.assumptions) + 2):
        fit_row(ws, r)
    ws.freeze_panes = "A2"


#: Smallest printed text: a sheet too wide to print one page wide at this size prints several pages wide instead.


def printed_width_pt(ws: Worksheet) -> float:
    """Width of the sheet's used columns on paper at 100%: the wider of Excel's (characters x 7 + 5) px, 96 px an
    inch, and LibreOffice's (characters x ``planner.io.paper.LO_PT_PER_CHAR``), which makes the PDF."""
    chars = [ws.column_dimensions[get_column_letter(j)].width or 8.43 for j in range(1, ws.max_column + 1)]
    return max(sum(c * 7 + 5 for c in chars) * 0.75, sum(chars) * LO_PT_PER_CHAR)


#: Text columns wrap: they may narrow to this many characters before a sheet prints several pages wide.
MIN_TEXT_WIDTH = 12.0


def _narrowest(ws: Worksheet, col: int) -> float:
    """How narrow a column may print: MIN_TEXT_WIDTH for text (it wraps); a number column keeps its widest value
    whole, else it prints ###: digits and separators + 8 (a currency sign, decimals, a unit such as " ms", and
    LibreOffice's substitute font being wider than Calibri), at least 10."""
    values = [ws.cell(row=r, column=col).value for r in range(2, ws.max_row + 1)]
    if any(isinstance(v, str) for v in values):
        return MIN_TEXT_WIDTH
    numbers = [abs(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return max([10.0] + [len(f"{v:,.0f}") + 8.0 for v in numbers])


def legible_print(ws: Worksheet, title_cols: str = "A:A") -> None:
    """Keep printed text at MIN_PRINT_PT or more and tables one page wide where possible: first narrow the columns
    (text down to MIN_TEXT_WIDTH, it wraps; numbers down to their widest value) until the fit scale keeps 11-pt
    text at 8 pt; if even that is too wide, print at 8 pt over several pages wide with ``title_cols`` repeated."""
    printable_pt = (A4_IN[1] - ws.page_margins.left - ws.page_margins.right) * 72
    # the table's width at 100% that still prints at 8 pt, 1% short so rounding cannot tip it below
    widest_pt = printable_pt * BASE_FONT_PT / MIN_PRINT_PT * 0.99
    excess_px = (printed_width_pt(ws) - widest_pt) / 0.75
    if excess_px <= 0:
        return
    cols = {get_column_letter(j): _narrowest(ws, j) for j in range(1, ws.max_column + 1)}
    width = {c: ws.column_dimensions[c].width or 8.43 for c in cols}
    px_per_char = max(7.0, LO_PT_PER_CHAR / 0.75)
    room_px = sum(max(0.0, width[c] - low) * px_per_char for c, low in cols.items())
    if room_px >= excess_px:
        share = excess_px / room_px
        for c, low in cols.items():
            ws.column_dimensions[c].width = width[c] - max(0.0, width[c] - low) * share
        for r in range(1, ws.max_row + 1):
            fit_row(ws, r, 3 if r == 1 else 1)
        return
    ws.sheet_properties.pageSetUpPr.fitToPage = False
    ws.page_setup.scale = MIN_PRINT_SCALE_PCT
    ws.print_title_cols = title_cols
    _fewest_pages_wide(ws, cols, width, title_cols, printable_pt)


#: The share of a page's width ``_fewest_pages_wide`` fills, for the difference between its column widths and the
#: printer's.
PAGE_WIDTH_USED = 0.95


def pages_wide(widths: list[float], title_widths: list[float], page_pt: float) -> int:
    """Pages a row of columns ``widths`` (characters) prints across, ``page_pt`` wide at 100%, each page after the
    first repeating the title columns (``title_widths``): columns fill a page in order, a column that does not fit
    opens the next (a printer does not split a column)."""

    def pt(chars: float) -> float:  # printed_width_pt's measure, one column
        return max((chars * 7 + 5) * 0.75, chars * LO_PT_PER_CHAR)

    titles = sum(pt(c) for c in title_widths)
    pages, used = 1, 0.0
    for w in widths:
        if used and used + pt(w) > page_pt:
            pages, used = pages + 1, titles
        used += pt(w)
    return pages


def _fewest_pages_wide(
    ws: Worksheet, lows: dict[str, float], width: dict[str, float], title_cols: str, printable_pt: float
) -> None:
    """A sheet that prints several pages wide at 8 pt (``legible_print``) over as few as its columns allow: narrowed
    (text down to MIN_TEXT_WIDTH, numbers to their widest value; ``_narrowest``) just enough to drop the pages it can,
    its rows grown to the wrapped text (a trial: Options over 3 pages, each two-thirds empty). Unchanged where
    narrowing saves no page."""
    page_pt = printable_pt / (MIN_PRINT_SCALE_PCT / 100) * PAGE_WIDTH_USED
    first, last = (column_index_from_string(c) for c in title_cols.split(":"))
    keys = list(width)
    titles = keys[first - 1 : last]
    text = {c for c in keys if lows[c] == MIN_TEXT_WIDTH}  # _narrowest's text columns: narrowed, they wrap

    def at(share: float) -> dict[str, float]:
        """Number columns narrowed first (share 0 to 1: they keep their values on one line), then text (1 to 2)."""
        out = {}
        for c in keys:
            part = min(max(share - (1.0 if c in text else 0.0), 0.0), 1.0)
            out[c] = width[c] - max(0.0, width[c] - lows[c]) * part
        return out

    def pages(widths: dict[str, float]) -> int:
        return pages_wide([widths[c] for c in keys], [widths[c] for c in titles], page_pt)

    fewest = pages(at(2.0))
    if fewest >= pages(width):
        return
    lo, hi = 0.0, 2.0  # the least narrowing that prints on the fewest pages
    for _ in range(24):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if pages(at(mid)) == fewest else (mid, hi)
    for c, w in at(min(hi + 0.01, 2.0)).items():  # a little past the boundary, rounded down: still the fewest
        ws.column_dimensions[c].width = math.floor(w * 100) / 100
    for r in range(1, ws.max_row + 1):
        fit_row(ws, r, 3 if r == 1 else 1)


def review_workbook(review: Review) -> tuple[Workbook, Cache]:
    """The openpyxl Workbook (not saved) and the computed values of its formula cells."""
    book = _Book(review)
    _summary(book)
    _options(book)  # Options, Costs and Details
    _money(book)  # Like for like, Ownership, Demand cases, Fleet by quarter
    _breakeven(book)  # under Ownership: cumulative cash by quarter, buy or rent (trial 30 F1, F3)
    _cash_by_year(book)  # under Break-even: capex, opex, cash and depreciation per year
    _mixes(book)  # Mixes, where the scenario has a [[mix]]
    _levers(book)
    _charts(book)  # Chart data and Charts
    book.wb.move_sheet("Charts", offset=-1)
    _latency(book)  # Latency and its data, when sized on simulated percentiles
    if "Latency" in book.wb.sheetnames:
        book.wb.move_sheet("Latency", offset=-1)
    _glossary(book)
    _assumptions(book)
    for ws in book.wb.worksheets:
        if ws.title not in ("Summary", "Charts", "Latency"):
            legible_print(ws, "A:B" if ws.title in ("Options", "Mixes") else "A:A")
        # protected without a password: the yellow prices stay editable, the snapshot and formulas do not
        ws.protection.sheet = True
        ws.protection.formatColumns = ws.protection.formatRows = False  # widths and heights may still change
    when = dt.datetime.fromisoformat(review.date)
    wb = book.wb
    wb.properties.created = wb.properties.modified = when
    wb.properties.creator = wb.properties.lastModifiedBy = f"planner {review.version}"
    wb.properties.title = _series_name(review.scenario.title)
    return wb, book.cache


def render_xlsx(review: Review) -> bytes:
    """The workbook's bytes, formulas with their cached values; the same review gives the same bytes."""
    wb, cache = review_workbook(review)
    return _saved(wb, cache, review)


def render_print_xlsx(review: Review) -> bytes:
    """The workbook as the PDF prints it: the option tables turned onto "Options compared" (``print_layout``)."""
    from planner.export.print_layout import break_pages, options_compared

    wb, cache = review_workbook(review)
    ws = options_compared(wb, review, review.scenario.title, footer_text(review))
    if ws is not None:
        ws.protection.sheet = True
        ws.protection.formatColumns = ws.protection.formatRows = False
    if "Latency data" in wb.sheetnames:  # its figures print as the Latency charts and headroom table
        wb["Latency data"].sheet_state = "hidden"
    for sheet in wb.worksheets:
        if sheet is not ws and sheet.sheet_state == "visible" and sheet.title not in ("Summary", "Charts", "Latency"):
            break_pages(sheet)
    return _saved(wb, cache, review)


def _saved(wb: Workbook, cache: Cache, review: Review) -> bytes:
    """``wb``'s bytes with the cached values of its formulas, zip entries stamped with the review date."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).save()  # save_workbook() would stamp the current time as 'modified'
    stamp = dt.datetime.fromisoformat(review.date).timetuple()[:6]
    with zipfile.ZipFile(raw) as src:
        names = [i.filename for i in src.infolist()]
        parts = store_cached_values({n: src.read(n) for n in names}, wb.sheetnames, cache)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in names:
            fixed = zipfile.ZipInfo(name, date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, parts[name])
    return out.getvalue()
