"""The Load sheet: each lever's latency against traffic, p50 and p95 TTFT and TPOT, as planner's simulation computed it.

The figures (``load_figures``) are numbers, not formulas: a queue simulation is not a cell formula. The sheet says so
in its note, in a cell note on its title and in a Status cell whose formula compares the Inputs and the engine
parameters (Assumptions sheet) the figures were computed from with those now ("STALE ..." once one differs);
``planner workbook refresh`` computes them again, with the Assumptions sheet's engine parameters.
"""

from __future__ import annotations

from planner import __version__
from planner.workbook.calc import SCENARIOS, scenario_col
from planner.workbook.formats import BOOL, INT
from planner.workbook.formulas import same_input
from planner.workbook.layout import (
    BUDGET_FIELDS,
    COMPARE_FIELD,
    ENGINE_NAME,
    INPUT_FIELDS,
    LENGTH_KEYS,
    LOAD_BLANK_PRECISION,
    LOAD_FIRST_INPUT_ROW,
    LOAD_LENGTH_COLS,
    LOAD_LENGTH_ROWS,
    LOAD_SHEET,
    LOAD_STATUS_ROW,
)
from planner.workbook.load_figures import LOAD_MULTIPLES, LoadFigures
from planner.workbook.spec import Chart, Highlight, Series, Sheet
from planner.workbook.tail import HIGH_PERCENTILE

#: The sheet's title; ``refresh`` recognises a Load sheet planner wrote by it.
TITLE = "Load: latency against traffic per lever, computed by planner's queue simulation (not by Excel)"
STATUS_ROW = LOAD_STATUS_ROW
STATUS_CELL = f"B{STATUS_ROW}"
#: The row of the first "Computed from" input.
FIRST_INPUT_ROW = LOAD_FIRST_INPUT_ROW
TARGET_COL = "I"


def quantities(q: float = HIGH_PERCENTILE) -> tuple:
    """Charts and tables: (title, metric, percentile, y axis, log y), the median and the Inputs' latency percentile
    ``q`` (p50 alone once where it is 50). TTFT's high percentile near capacity is 10-50x its p50."""
    qs = (50,) if q == 50 else (50, q)
    return tuple(
        (f"{m.upper()} p{p:g}", m, p, axis, log)
        for m, axis, log in (("ttft", "TTFT (ms, log)", True), ("tpot", "TPOT (ms)", False))
        for p in qs
    )


#: The opening workbook's (p95).
QUANTITIES = quantities()
CHART_ROWS = 19  # rows a 9 cm chart covers, and a gap
CHART_WIDTH_CM = 18.5  # two side by side across the tables' width
MS_FMT = "#,##0"
TPOT_FMT = "#,##0.0"


def _arrivals(f: LoadFigures) -> str:
    """How the simulated requests arrive: the Inputs' burstiness (blank or 1: Poisson)."""
    b = f.inputs.get("burstiness")
    if not isinstance(b, (int, float)) or isinstance(b, bool) or b == 1:
        return "Poisson requests"
    return f"requests whose arrival gaps are gamma of shape {b:g} (the Inputs' burstiness, routed at random)"


def percentile_note(f: LoadFigures) -> str:
    """Which percentile the sheet sizes on and which lengths it simulated, as planner plan --rate does for the same
    Inputs (trial 28 F8: the percentile was not an input and every request at the mean lengths)."""
    said = (
        f"Percentile: p{f.percentile:g} (Inputs; blank {HIGH_PERCENTILE}, as planner plan and export): the replicas "
        "needed, tables, charts, the Levers' fleet. "
    )
    used = f.lengths_used or {}
    highs = [(w, used.get(k)) for w, k in (("prompt", "prompt_tokens_high"), ("output", "output_tokens_high"))]
    if all(h is None for _, h in highs):
        return said + "Lengths: every request at the Inputs' means (no high length on Inputs)."
    given = ", ".join(f"{w} {h:,.0f}" for w, h in highs if h is not None)
    return said + (
        f"Lengths: drawn as planner plan --rate draws them, the Inputs' means at p{f.length_percentile:g} highs "
        f"({given}), lognormal truncated at the slot (high prompt + high output), seeded; memory sized at the "
        "context, as plan."
    )


def _requests(f: LoadFigures) -> int:
    """How many requests each point sends: the drawn requests where the lengths are drawn, else 1,000."""
    return next((len(v.lengths) for v in f.levers if v.lengths), 1000)


def _note(f: LoadFigures) -> str:
    return (
        "These figures are computed by planner's queue simulation (planner.serving: the "
        f"{f.engine} scheduler serving {_requests(f):,} {_arrivals(f)} per point, its step times from the capacity "
        "model), "
        f"by planner {__version__} when it wrote this workbook, from the Inputs listed below. The cells hold numbers, "
        "not formulas: Excel and LibreOffice do not recalculate them. After changing Inputs, run "
        "`planner workbook refresh <this file>` (or generate the workbook again) to compute them again, with the "
        "engine parameters on the Assumptions sheet as they are then; Status says whether they still match the "
        "Inputs and the Assumptions (listed at the foot of this sheet). A blank figure: past the replica's capacity (its queue grows "
        f"without bound). {percentile_note(f)}"
    )


#: Status while every Input and engine parameter matches those the figures were computed from.
CURRENT = "current: computed from the Inputs and the Assumptions as they are now"
#: Status once an engine parameter on the Assumptions sheet (and no Input) differs from those simulated.
STALE_ENGINE = (
    "STALE: engine parameters on the Assumptions sheet changed after these figures were computed; run planner "
    "workbook refresh on this file (it simulates with the Assumptions as they are then)"
)
STALE_INPUTS = "STALE: Inputs changed after these figures were computed; run planner workbook refresh on this file"
ENGINE_ROW_LABEL = "Engine parameters (Assumptions sheet)"


def _status_formula(last_row: int, engine_row: int | None) -> str:
    """ "current" while no row of the Computed-from block reads "changed"; else which kind changed (an Input first)."""
    col = LOAD_LENGTH_COLS[-1]
    changed = (
        f'(COUNTIF(D{FIRST_INPUT_ROW}:D{last_row},"changed")'
        f'+COUNTIF({col}{LOAD_LENGTH_ROWS[0]}:{col}{LOAD_LENGTH_ROWS[-1]},"changed"))'
    )
    if engine_row is None:
        return f'=IF({changed}=0,"{CURRENT}","{STALE_INPUTS}")'
    return (
        f'=IF({changed}=0,"{CURRENT}",IF(D{engine_row}="changed",IF({changed}=1,"{STALE_ENGINE}",'
        f'"{STALE_INPUTS}"),"{STALE_INPUTS}"))'
    )


#: The length block's short labels (16-wide columns): the Inputs' latency percentile, high lengths and their percentile.
LENGTH_LABELS = {
    "latency_percentile": "Percentile",
    "prompt_tokens_high": "Prompt high",
    "output_tokens_high": "Output high",
    "length_percentile": "Length pct.",
}


def length_block(s: Sheet, f: LoadFigures) -> None:
    """The Computed-from rows of the Inputs' latency percentile and high lengths, beside the others (``LOAD_LENGTH_COLS``
    and ``LOAD_LENGTH_ROWS``: no row Calc reads moves), blank used as blank, each with its Matches cell."""
    fields = {x.key: x for x in BUDGET_FIELDS}
    label, used, now, same = LOAD_LENGTH_COLS
    for col, h in zip(LOAD_LENGTH_COLS, ("Input", "Used", "Inputs now", "Matches"), strict=True):
        s.set(f"{col}{FIRST_INPUT_ROW - 1}", h, style="header")
    for r, key in zip(LOAD_LENGTH_ROWS, LENGTH_KEYS, strict=True):
        name = fields[key].name
        s.set(f"{label}{r}", LENGTH_LABELS[key], style="label")
        s.set(f"{used}{r}", (f.lengths_used or {}).get(key), fmt="#,##0", style="calc")
        # IFERROR: a workbook written before these Inputs (refreshed by this planner) has no such name: blank
        s.set(f"{now}{r}", f'=IFERROR(IF({name}="","",{name}),"")', fmt="#,##0", style="calc")
        s.set(f"{same}{r}", f'=IF({same_input(f"{used}{r}", f"{now}{r}", "number")},"yes","changed")', style="calc")


def _inputs_block(s: Sheet, f: LoadFigures) -> int:
    """What the figures were computed from, the Inputs now, and whether each still matches; the next free row."""
    s.set("A5", "Computed from: the Inputs when these figures were computed", style="subtitle")
    for col, h in zip("ABCD", ("Input", "Used", "Inputs now", "Matches"), strict=True):
        s.set(f"{col}6", h, style="header")
    fields = {x.key: x for x in (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS)}
    r = FIRST_INPUT_ROW
    rows = [(fields[k].label, fields[k].unit, fields[k].name, v, fields[k].kind) for k, v in f.inputs.items()]
    rows.append(("Engine (Assumptions)", "", ENGINE_NAME, f.engine, "text"))
    for label, unit, name, value, kind in rows:
        s.set(f"A{r}", f"{label} ({unit})" if unit and unit != "catalog name" else label, style="label")
        fmt = None if kind == "text" else "#,##0.###"
        s.set(f"B{r}", value, fmt=fmt, style="calc", text=kind == "text")
        s.set(f"C{r}", f'=IF({name}="","",{name})', fmt=fmt, style="calc")
        s.set(f"D{r}", f'=IF({same_input(f"B{r}", f"C{r}", kind)},"yes","changed")', style="calc")
        r += 1
    length_block(s, f)
    engine_row = None
    if f.engine_parameters:  # one row here; each parameter in a table at the foot of the sheet (``_engine_table``)
        engine_row = r
        s.set(f"A{r}", ENGINE_ROW_LABEL, style="label")
        r += 1
    s.set(STATUS_CELL, _status_formula(r - 1, engine_row), style="warn")  # red; green while current:
    s.highlights.append(Highlight(STATUS_CELL, f'LEFT({STATUS_CELL},7)="current"'))
    s.merges.append(f"{STATUS_CELL}:{TARGET_COL}{STATUS_ROW}")  # the fill under the whole answer
    return r + 1


#: Engine parameters on one printed page at most: a page of the Load sheet (fit to width, landscape) holds about 36
#: rows in Excel and 46 in LibreOffice; the table's 50 ran 4 rows onto a page of their own with no header (trial 13
#: F2). Longer, it is split into even parts, each on its own page under the subtitle and header.
ENGINE_ROWS_PER_PAGE = 30
ENGINE_TABLE_TITLE = "Engine parameters the figures were simulated with (Assumptions sheet)"


def _engine_table(s: Sheet, f: LoadFigures, r: int) -> None:
    """Each engine parameter the runs used (``LoadFigures.engine_parameters``), the Assumptions cell now and whether
    it still matches, from row ``r``; the Computed-from block's engine row sums them up (a memory utilization
    edited from 0.9 to 0.5 leaves the KV cache fewer sequences than were simulated at once: the figures are stale). In parts of
    at most ``ENGINE_ROWS_PER_PAGE`` rows, a page each, each under the subtitle and the header."""
    row = next(int(ref[1:]) for ref, c in s.cells.items() if ref[0] == "A" and c.value == ENGINE_ROW_LABEL)
    params = list(f.engine_parameters)
    parts = -(-len(params) // ENGINE_ROWS_PER_PAGE)
    size = -(-len(params) // parts)
    first = None
    for i, (field, item, value) in enumerate(params):
        if i % size == 0:  # a part begins: on a new page after the first, under the subtitle and header again
            if i:
                s.page_breaks.append(r)
                r += 1
            s.set(f"A{r}", ENGINE_TABLE_TITLE + (" (continued)" if i else ""), style="subtitle")
            r += 1
            heads = ("Parameter (defined name eng_...)", "Used", "Assumptions now", "Matches")
            for col, h in zip("ABCD", heads, strict=True):
                s.set(f"{col}{r}", h, style="header")
        r += 1
        first = first or r
        name = f"eng_{field}" if item is None else f"INDEX(eng_{field},{item})"
        s.set(f"A{r}", field if item is None else f"{field} ({item})", style="label")
        fmt = BOOL if isinstance(value, bool) else "General" if isinstance(value, (int, float)) else None
        s.set(f"B{r}", value, fmt=fmt, style="calc", text=isinstance(value, str))
        s.set(f"C{r}", f'=IF({name}="","",{name})', fmt=fmt, style="calc")
        same = f'IF(AND(ISNUMBER(B{r}),ISNUMBER(C{r})),B{r}=C{r},EXACT(""&B{r},""&C{r}))'
        s.set(f"D{r}", f'=IF({same},"yes","changed")', style="calc")
    changed = f'COUNTIF(D{first}:D{r},"changed")'  # a repeated header's "Matches" is not "changed"
    # wrapped in the 14-wide Used column, not cut at its left edge (trial 13 F1: "ues, rows 130-179")
    s.set(f"B{row}", f"{len(params)} values, rows {first}-{r}", style="calc_text", text=True)
    s.set(f"C{row}", f'=IF({changed}=0,"as used",{changed}&" changed (rows {first}-{r})")', style="calc_text")
    s.set(f"D{row}", f'=IF({changed}=0,"yes","changed")', style="calc")
    s.heights[row] = 2 * 13.5 + 2


#: The most sequences the simulated replica decodes together, plan's "each running at most N sequences at once": the
#: engine's own max_num_seqs (vLLM's 1,024 on an H100), or what its paged KV cache admits of the prompts (it preempts
#: as outputs grow), as ``planner plan --rate`` simulates its replica. Trial 28 F7: the row read "Batch limit simulated
#: (the engine's max_num_seqs)" and held what memory holds at the whole context, 55 sequences of 8,192 tokens on 4 x
#: H100, where vLLM admits 300 of the 1,500-token prompts. One row (two lines at column A's width): a Load page taller
#: by a row printed under 6 pt.
AT_ONCE_LABEL = "Sequences at once: the engine's max_num_seqs, or what its KV cache admits (as plan)"


def _lever_rows(s: Sheet, f: LoadFigures, r: int) -> int:
    s.set(f"A{r}", "Each lever's replica (the Levers sheet's scenarios)", style="subtitle")
    r += 1
    s.set(f"A{r}", "", style="header")
    s.set(f"B{r}", "Unit", style="header")
    for lever in f.levers:
        s.set(f"{scenario_col(lever.key)}{r}", lever.header, style="header")
    r += 1
    rows = (
        ("Model", "", lambda v: v.inputs.get("model"), None),
        ("Context", "tokens", lambda v: v.inputs.get("context"), INT),
        (
            "KV-cache precision",
            "",
            lambda v: v.inputs.get("kv_precision") or LOAD_BLANK_PRECISION["kv_precision"],
            None,
        ),
        (
            "Weight precision",
            "",
            lambda v: v.inputs.get("weight_precision") or LOAD_BLANK_PRECISION["weight_precision"],
            None,
        ),
        ("GPUs per replica", "GPUs", lambda v: v.inputs.get("gpus"), INT),
        ("Prompt tokens per request (typed, or context - output)", "tokens", lambda v: v.prompt_tokens, INT),
        ("Output tokens per request", "tokens", lambda v: v.output_tokens, INT),
        *(  # where the lengths are drawn (high lengths on Inputs): how, and what the drawn requests hold
            (
                ("Drawn mean prompt / output", "tokens", lambda v: _drawn(v, "mean"), None),
                (f"Drawn p{f.length_percentile:g} prompt / output", "tokens", lambda v: _drawn(v, "high", f), None),
            )
            if any(v.lengths for v in f.levers)
            else ()
        ),
        ("Max batch (memory)", "sequences", lambda v: v.max_batch, INT),
        (AT_ONCE_LABEL, "sequences", lambda v: v.at_once, INT),
        ("Replicas for the peak with no queue", "replicas", lambda v: v.replicas, INT),
        (
            f"Replicas needed: p{f.percentile:g} within targets (Levers' fleet)",
            "replicas",
            lambda v: v.needed_replicas,
            INT,
        ),
        (
            "Rate factor: the Levers' queue term",
            "x no queue",
            lambda v: v.rate_factor if v.needed_replicas is not None else None,
            "0.000",
        ),
        ("Replicas the traffic below is spread over", "replicas", lambda v: v.curve_replicas if v.runs else None, INT),
        (
            "Requests/s per replica at the peak",
            "requests/s",
            lambda v: v.rates_per_s[LOAD_MULTIPLES.index(1.0)] if v.rates_per_s else None,
            "#,##0.00",
        ),
    )
    for label, unit, get, fmt in rows:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", unit, style="unit")
        for lever in f.levers:
            value = get(lever)
            s.set(f"{scenario_col(lever.key)}{r}", value, fmt=fmt, style="calc", text=isinstance(value, str))
        r += 1
    notes = {} if f.note else {v.key: v.error or v.needed_note for v in f.levers}  # f.note: said once, above
    if any(notes.values()):
        s.set(f"A{r}", "Not simulated, or not sized on the targets, because", style="label")
        for key, text in notes.items():
            if text:
                s.set(f"{scenario_col(key)}{r}", text, style="note", text=True)
        r += 1
    return r + 1


def _drawn(v, what: str, f: LoadFigures | None = None):
    """A drawn scenario's mean or high-percentile prompt / output ("1,498 / 301"); None at the means."""
    if not v.lengths:
        return None
    import numpy as np

    a = np.asarray(v.lengths, dtype=float)
    p, o = (a.mean(axis=0)) if what == "mean" else np.percentile(a, f.length_percentile, axis=0)
    return f"{p:,.0f} / {o:,.0f}"


def _figure(run, metric: str, percentile: int) -> float | None:
    """A run's percentile of a metric in ms; None past capacity (no run)."""
    if run is None:
        return None
    return getattr(run, f"{metric}_s").at(percentile) * 1e3


def _blocks(s: Sheet, f: LoadFigures, r: int) -> list[tuple[str, int, int, str, bool]]:
    """One table per quantity: traffic down, levers across, the target beside; returns each block's chart data."""
    peak = f.inputs.get("peak_requests_per_s")
    made = []
    for title, metric, percentile, axis, log in quantities(f.percentile):
        target_s = f.ttft_target_s if metric == "ttft" else f.tpot_target_s
        what = "time to first token" if metric == "ttft" else "time per output token"
        middle = "median" if percentile == 50 else f"{percentile:g}th percentile"
        s.set(f"A{r}", f"{title} (ms): {what}, {middle} over the requests", style="subtitle")
        r += 1
        s.set(f"A{r}", "Traffic (the whole fleet's)", style="header")
        s.set(f"B{r}", "x peak", style="header")
        for lever in f.levers:
            s.set(f"{scenario_col(lever.key)}{r}", lever.header, style="header")
        s.set(f"{TARGET_COL}{r}", "Target", style="header")
        r += 1
        first = r
        for i, mult in enumerate(LOAD_MULTIPLES):
            rate = f" = {mult * peak:,.4g} requests/s" if isinstance(peak, (int, float)) else ""
            s.set(f"A{r}", f"{mult:g} x the peak{rate}" + (" (the peak)" if mult == 1.0 else ""), style="label")
            s.set(f"B{r}", mult, fmt='0.00"x"', style="calc")
            for lever in f.levers:
                value = _figure(lever.runs[i], metric, percentile) if lever.runs else None
                fmt = MS_FMT if metric == "ttft" else TPOT_FMT
                s.set(f"{scenario_col(lever.key)}{r}", value, fmt=fmt, style="key" if mult == 1.0 else "calc")
            if target_s is not None:
                s.set(f"{TARGET_COL}{r}", target_s * 1e3, fmt=MS_FMT, style="calc")
            r += 1
        made.append((title, first, r - 1, axis, log))
        r += 1
    return made


def _charts(s: Sheet, blocks: list, top: int, has_target: tuple[bool, bool]) -> None:
    """A line chart per quantity, 2 x 2 from ``top``: one line per lever, the target dashed."""
    name = LOAD_SHEET
    for i, (title, first, end, axis, log) in enumerate(blocks):
        x = f"{name}!$B${first}:$B${end}"
        series = [
            Series(
                f"={name}!${scenario_col(k)}${first - 1}",
                x,
                f"{name}!${scenario_col(k)}${first}:${scenario_col(k)}${end}",
            )
            for k, _, _ in SCENARIOS
        ]
        if has_target[0 if title.startswith("TTFT") else 1]:
            t = f"{name}!${TARGET_COL}${first}:${TARGET_COL}${end}"
            series.append(Series("Target", x, t, marker=False, dash=True))
        anchor = f"{'A' if i % 2 == 0 else 'E'}{top + (i // 2) * CHART_ROWS}"
        s.charts.append(
            Chart(
                f"{title} against traffic (ms)",
                anchor,
                "Traffic (x the Inputs' peak; 1 = the peak)",
                axis,
                tuple(series),
                y_log=log,
                width_cm=CHART_WIDTH_CM,
                height_cm=9.0,
            )
        )


def load_sheet(f: LoadFigures) -> Sheet:
    """The Load sheet of figures ``f`` (``load_figures.load_figures``): what they were computed from and whether the
    Inputs still match, each lever's replica, four charts, and the four tables the charts draw."""
    s = Sheet(LOAD_SHEET, tab_color="7030A0")
    s.widths.update(A=50, B=14, C=16, D=16, E=16, F=16, G=16, H=16, I=11)  # "Prompt halved" on one line
    s.set("A1", TITLE, style="title", comment=_note(f))
    s.note("A2", _note(f), TARGET_COL)
    s.set(f"A{STATUS_ROW}", "Status", style="label")
    r = _inputs_block(s, f)
    if f.note:
        s.set(f"A{r}", f.note, style="warn")
        r += 2
    r = _lever_rows(s, f, r)
    s.page_breaks.append(r - 1)  # the charts on a page of their own, then the tables
    s.set(f"A{r}", "Charts: each lever's replica under traffic; dashed: the Inputs' target", style="subtitle")
    charts_top = r + 1
    blocks_top = charts_top + 2 * CHART_ROWS
    s.page_breaks.append(blocks_top - 1)
    blocks = _blocks(s, f, blocks_top)
    _charts(s, blocks, charts_top, (f.ttft_target_s is not None, f.tpot_target_s is not None))
    if f.engine_parameters:  # on a page of its own: run on below the tables, LibreOffice printed every page smaller
        s.page_breaks.append(blocks[-1][2] + 1)
        _engine_table(s, f, blocks[-1][2] + 2)
    return s
