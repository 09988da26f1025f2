"""The Ranges sheet: how far off the baseline's time predictions may be, as ``planner.accuracy.ranges`` judges a query.

The facts come from ``planner.accuracy.ranges`` (the held-out residuals file, its widening factors, ``MIN_ROWS`` and the
note's wording); the formulas apply its rule to the baseline's GPU, GPU count and model: the GPU's own quantiles
when it has at least ``MIN_ROWS`` held-out figures, else all GPUs'; every dimension (GPU, TP size, engine, MoE or
dense, size class) whose value has fewer figures widens the range by its factor, in log(measured / predicted),
rounded outwards to whole percent; a calibration entry's own range (GPUs sheet) replaces all of it.
``tests/test_workbook_ranges.py`` checks the recalculated cells against ``planner.accuracy.calibration.residual_range``.
"""

from __future__ import annotations

from typing import NamedTuple

from planner.accuracy import ranges
from planner.engines.profiles import DEFAULT_RESIDUALS, EngineProfile
from planner.workbook.calc import Calc
from planner.workbook.layout import RANGES_SHEET
from planner.workbook.spec import Name, Sheet

PCT = "+0%;-0%"
#: The row and columns (TPOT, TTFT: ``planner.accuracy.ranges.stated_coverage``'s order) of how often such ranges held
#: on published runs planner never saw; the Results sheet's range notes read them (``results.range_note``).
HELD_ROW, HELD_COLUMNS = 8, "BC"
#: What each dimension is, in words (the file's codes stay in column A: they are the lookup keys).
DIMENSION_LABELS = {
    "gpu": "GPU",
    "tp": "tensor-parallel size (GPUs in the group)",
    "engine": "engine",
    "moe": "MoE or dense",
    "size": "size class (total parameters)",
}


def _text(x: str) -> str:
    """A string literal for a formula."""
    return '"' + x.replace('"', '""') + '"'


def _widen(x: str, factor: str) -> str:
    """``planner.accuracy.ranges._widen`` as a formula: (1 + x) ^ factor - 1, rounded outwards to whole percent."""
    p = f"ROUND((EXP(LN(1+{x})*{factor})-1)*100,6)"
    return f"IF({factor}>1,IF({x}<0,INT({p}),-INT(-{p}))/100,{x})"


def _shift(x: str, miss: str, low: bool) -> str:
    """``planner.accuracy.ranges._shift`` as a formula: (1 + x) / miss - 1 for the low end, (1 + x) x miss - 1 for
    the high end, rounded outwards to whole percent; x itself where the miss is 1."""
    p = f"ROUND(((1+{x}){'/' if low else '*'}{miss}-1)*100,6)"
    return f"IF({miss}>1,{f'INT({p})' if low else f'-INT(-{p})'}/100,{x})"


def _merged_note(s: Sheet, cell: str, formula: str, last_col: str = "H") -> None:
    """A note in ``cell`` (e.g. "G12") merged across to ``last_col``: the notes are longer than one column."""
    s.set(cell, formula, style="note")
    s.merges.append(f"{cell}:{last_col}{cell.lstrip('ABCDEFG')}")


#: Printed over two pages wide (planner.workbook.printing), Dimension and Value (A:B) on both: A..F on the first, G:H
#: on the second (the settings' sources, the query's notes, the coverage's sources). No text runs across the break or
#: out of A:B (trial 13 F7, F9): the title wraps in A:B, the introduction and the Widened and Note answers sit in
#: C:F. The settings and the query on one page, the file's factors and coverage on the next.
TITLE_COLS = "A:B"
WIDTHS = dict(A=40, B=24, C=20, D=11, E=11, F=40, G=40, H=42)


def _line_height(texts: list[str], width: float) -> float | None:
    """A row's height for the longest of ``texts`` wrapped in ``width`` characters; None: one line fits."""
    lines = max((-(-len(t) * 1.1 // width) for t in texts), default=1)
    return 13.5 * lines + 2 if lines > 1 else None


#: The borrowed kernel curves' sentence of the Widened and Note answers (the "Kernel curves of another vendor" row's
#: formula below), with ``{gpu}`` for the GPU, ``{source}`` for the one whose curves stand in
CURVES_SENTENCE = (
    "kernel curves of {source} stand in on {gpu} (x9.99 either way: the borrowed GEMM rate's miss on a published "
    "matmul figure; published GEMM, memory and all-reduce figures replace them where they exist)"
)


class LongestAnswers(NamedTuple):
    """Characters, at most, of the query's notes (``longest_answers``)."""

    region: int  # "Region: low / high"'s note, its flat dimensions' sentences included
    factor: int  # "Widening factor (product)"'s
    curves: int  # "Kernel curves of another vendor"'s
    widened: int  # "Widened, all" and the Widened answer (rng_widened)
    note: int  # the Note answer (rng_note)


def longest_answers(
    gpu_names: list[str] | tuple[str, ...], engine_names: list[str] | tuple[str, ...] = ()
) -> LongestAnswers:
    """Characters, at most, of the query's Widened and Note answers (``rng_widened``, ``rng_note``) for any of
    ``gpu_names`` and ``engine_names``: their formulas' text is not measured when written, so the rows that show them
    (here and on Results) are made tall enough for the longest they can get (trial 33 F12: MI325X's borrowed curves
    printed over the next row). Every dimension uncovered with a 3-digit count and factor, the longest names, the
    longest sources of a GPU's region; a calibration file's own note is not counted."""
    gpu = max(map(len, gpu_names), default=20)
    value = {
        "gpu": gpu,
        "tp": 3,
        "engine": max(map(len, engine_names), default=12),
        "moe": len("dense"),
        "size": max(len(label) for _, label in (*ranges.SIZE_CLASSES, (0, ">100B"))),
    }
    regions = ranges.load_regions()
    widens, flat = 0, 0
    for dim in ranges.DIMENSIONS:  # each uncovered dimension said in the widening (G) or, x1.00, in the region's (H)
        before, after = ranges.WHERE[dim]
        said = len(f"only {ranges.MIN_ROWS - 1} held-out figures ") + len(before) + value[dim] + len(after)
        held = regions.get((dim, "*"))
        if held is None or held.widen > 1:  # no file: the factor table's 1.0 (ranges_sheet), said on either side
            widens += len(", ") + said + len(" (x9.99)")
        if held is None or held.widen <= 1:
            flat += len("; ") + said + len(" (holding one out did not widen the residuals: x9.99)")
    curves = len(CURVES_SENTENCE.format(source="x" * gpu, gpu="x" * gpu))
    widened = len("x9.99: ") + widens - len(", ") + len("; ") + curves
    sources = max((len(g.sources) for (dim, _), g in regions.items() if dim == "gpu"), default=0)
    region = max(
        len("held-out residuals of 999 published figures on  (sources: )") + gpu + sources,
        len("all GPUs' held-out residuals (-99% / +99%, 999 figures)"),
    )
    note = region + flat + len("; widened x9.99: ") + len("; ") + curves
    return LongestAnswers(region + flat, len("x9.99: ") + widens - len(", "), curves, widened, note)


def note_height(chars: int, width: float) -> float:
    """A row's height for a note of ``chars`` characters wrapped in ``width`` (a merged range's widths summed)."""
    return _line_height(["x" * chars], width) or 15


def ranges_sheet(
    c: Calc,
    engine: EngineProfile,
    gpu_names: list[str] | tuple[str, ...] = (),
    engine_names: list[str] | tuple[str, ...] = (),
) -> tuple[Sheet, list[Name]]:
    """The sheet and its defined names; ``gpu_names``: the GPUs the Inputs offer, whose longest name (and lookup key)
    the query's GPU row is made tall enough for."""
    s = Sheet(RANGES_SHEET, tab_color="C00000", print_title_cols=TITLE_COLS)
    s.widths.update(WIDTHS)
    s.heading("A1", "Ranges: how far off the baseline's time predictions may be", "B")
    s.note(
        "C2",
        "The 10th-90th percentile of measured / predicted - 1 over published figures the time fit did not see "
        "(leave-one-source-out), for the nearest covered region: the GPU's own when it has enough figures, else "
        "all GPUs'. Every dimension of the query the figures do not cover (a GPU, TP size, engine, MoE / dense or "
        "size class with too few) widens it by that dimension's factor, measured by holding a whole value out, "
        "and the note names it. A calibration file's range (GPUs sheet) replaces all of this. Same rule and "
        "figures as planner plan and planner export (planner.accuracy.ranges; docs/accuracy.md, Ranges).",
        "F",
    )
    names: list[Name] = []
    regions = ranges.load_regions()
    every = regions.get(ranges.ALL)
    gpu, n = c.ref("gpu", "C", True, True), c.ref("n", "C", True, True)
    gpu_row, model_row = c.ref("gpu_row", "C", True, True), c.ref("model_row", "C", True, True)

    # -- settings -------------------------------------------------------------------------------------------
    s.set("A3", "Setting", style="header")
    s.set("B3", "Value", style="header")
    s.set("C3", "", style="header")
    s.set("D3", "", style="header")
    s.set("E3", "", style="header")
    for col in "FGH":
        s.set(f"{col}3", "Source or meaning" if col == "G" else "", style="header")
    s.set("A4", "Held-out residuals file (catalogs/reference/)", style="label")
    s.set("B4", "heldout_residuals.csv", text=True)  # within B, repeated on the second page
    _merged_note(
        s,
        "G4",
        "written by python bench/loso.py --write-residuals (planner.accuracy.holdout.residual_table) from the published "
        "rows of catalogs/reference/; tests/test_holdout.py re-derives it",
    )
    s.set("A5", "Covered: at least this many figures", style="label")
    s.set("B5", ranges.MIN_ROWS, style="result")
    _merged_note(s, "G5", "planner.accuracy.ranges.MIN_ROWS")
    s.set("A6", "Engine, as the figures name it", style="label")
    s.set("B6", ranges.query_values("", engine=engine.name)["engine"], style="result", text=True)
    _merged_note(s, "G6", f"the {engine.name} profile (Assumptions); vLLM's profiles share its time factors")
    s.set("A7", "All GPUs: low / high / figures", style="label")
    all_low, all_high, all_rows = (every.low, every.high, every.rows) if every else (*DEFAULT_RESIDUALS, 0)
    s.set("B7", all_low, fmt=PCT, style="result")
    s.set("C7", all_high, fmt=PCT, style="result")
    s.set("D7", all_rows, style="result")
    _merged_note(s, "G7", "the file's all,* row: the range of a GPU with too few figures, before widening")
    held = {c.quantity: c for c in ranges.stated_coverage()}
    if held:  # row 8, the spacer above the query block
        s.set(f"A{HELD_ROW}", "How often such ranges held: " + " / ".join(held), style="label")
        for col, c in zip(HELD_COLUMNS, held.values(), strict=False):
            s.set(f"{col}{HELD_ROW}", c.inside / c.figures, fmt="0%", style="result")
        counts = ", ".join(f"{c.quantity} {c.inside} of {c.figures}" for c in held.values())
        _merged_note(
            s, f"G{HELD_ROW}", f"held-out figures inside, nominal 80%: {counts} (catalogs/reference/range_coverage.csv)"
        )

    # -- widening factors and coverage (the file) --------------------------------------------------------------
    r_q = 10  # the query block: header, one row per dimension, then the region, factor and result rows
    r_fac = r_q + len(ranges.DIMENSIONS) + 14
    s.heading(f"A{r_fac - 1}", "Widening factor per dimension (a whole value held out)", "B", style="subtitle")
    heads = ("Dimension", "Factor", "Held-out low", "high", "figures", "Meaning", "", "")
    for col, h in zip("ABCDEFGH", heads, strict=True):
        s.set(f"{col}{r_fac}", h, style="header")
    factor_row = {}
    for i, dim in enumerate(ranges.DIMENSIONS, 1):
        r = r_fac + i
        factor_row[dim] = r
        held = regions.get((dim, "*"))
        s.set(f"A{r}", dim, style="label")
        s.set(f"B{r}", held.widen if held else 1.0, fmt="0.00", style="result")
        if held:
            s.set(f"C{r}", held.low, fmt=PCT)
            s.set(f"D{r}", held.high, fmt=PCT)
            s.set(f"E{r}", held.rows)
        s.set(f"F{r}", DIMENSION_LABELS[dim], style="note")
    r_cov = r_fac + len(ranges.DIMENSIONS) + 3
    s.page_breaks.append(r_fac - 2)  # the file's factors and coverage, reference data that grows, on pages of their own
    s.set(f"A{r_cov - 1}", "Coverage: held-out figures per region", style="subtitle")
    heads = ("Dimension", "Value", "Figures", "Low (10th)", "High (90th)", "Lookup key", "Sources", "")
    for col, h in zip("ABCDEFGH", heads, strict=True):
        s.set(f"{col}{r_cov}", h, style="header")
    rows = [g for (dim, value), g in regions.items() if value != "*" and dim in ranges.DIMENSIONS] or [None]
    for i, g in enumerate(rows, 1):
        r = r_cov + i
        if g is None:  # no residuals file: an empty table keeps the names valid
            continue
        s.set(f"A{r}", g.dimension, text=True)
        s.set(f"B{r}", g.value, text=True)
        s.set(f"C{r}", g.rows)
        s.set(f"D{r}", g.low, fmt=PCT)
        s.set(f"E{r}", g.high, fmt=PCT)
        s.set(f"F{r}", f"{g.dimension}|{g.value}", text=True)
        s.note(f"G{r}", g.sources, "H").text = True
    last = r_cov + len(rows)
    for name, col in (("keys", "F"), ("rows", "C"), ("lows", "D"), ("highs", "E"), ("sources", "G")):
        names.append(Name(f"rng_{name}", f"{RANGES_SHEET}!${col}${r_cov + 1}:${col}${last}"))

    # -- this query ------------------------------------------------------------------------------------------
    s.set(f"A{r_q - 1}", "This query: the baseline on Inputs", style="subtitle")
    heads = ("Dimension", "Value", "Lookup key", "Figures", "Factor", "Not covered", "Widens", "Said, not widened")
    for col, h in zip("ABCDEFGH", heads, strict=True):
        s.set(f"{col}{r_q}", h, style="header")
    value_of = {
        "gpu": f"={gpu}",
        "tp": f"={n}",
        "engine": "=$B$6",
        "moe": f"=INDEX(model_range_moe,{model_row})",
        "size": f"=INDEX(model_range_size,{model_row})",
    }
    q = {}
    for i, dim in enumerate(ranges.DIMENSIONS, 1):
        r, f = r_q + i, factor_row[dim]
        q[dim] = r
        w = f"$B${f}"
        # the note's words around the value (ranges.WHERE: "on " GPU, "at TP " size), in the formula: as cells of
        # the factor table they printed as a column of fragments ("on", "at TP", "-parameter models"; trial 13 F7)
        before, after = (_text(x) for x in ranges.WHERE[dim])
        match = f"MATCH(C{r},rng_keys,0)"
        s.set(f"A{r}", dim, style="label")
        s.set(f"B{r}", value_of[dim], style="label")
        s.set(f"C{r}", f'=A{r}&"|"&B{r}', style="label")
        s.set(f"D{r}", f"=IF(ISNA({match}),0,INDEX(rng_rows,{match}))", style="calc")
        s.set(f"E{r}", f"=IF(AND(D{r}<$B$5,{w}>1),{w},1)", fmt="0.00", style="calc")
        s.set(
            f"F{r}",
            f'=IF(D{r}>=$B$5,"",IF(D{r}>0,"only "&D{r},"no")&" held-out figures "&{before}&B{r}&{after})',
            style="note",
        )
        s.set(f"G{r}", f'=IF(AND(F{r}<>"",{w}>1),", "&F{r}&" (x"&TEXT({w},"0.00")&")","")', style="note")
        s.set(
            f"H{r}",
            f'=IF(AND(F{r}<>"",{w}<=1),"; "&F{r}&" (holding one out did not widen the residuals: x"'
            f'&TEXT({w},"0.00")&")","")',
            style="note",
        )
    # the GPU's name (B) and its lookup key (C, "gpu|H100 SXM 80GB") wrap on a row tall enough for the longest
    # (trial 13 F8: the key's second line printed over the next row's)
    tall = [_line_height([g], WIDTHS["B"]) or 0 for g in gpu_names]
    tall += [_line_height([f"gpu|{g}"], WIDTHS["C"]) or 0 for g in gpu_names]
    if max(tall, default=0):
        s.heights[q["gpu"]] = max(tall)
    first, end = r_q + 1, r_q + len(ranges.DIMENSIONS)
    gaps = "&".join(f"G{r}" for r in range(first, end + 1))
    flats = "&".join(f"H{r}" for r in range(first, end + 1))
    g_rows, g_key = f"D{q['gpu']}", f"MATCH(C{q['gpu']},rng_keys,0)"
    r = end + 2
    # the region rows' notes in G:H, the second page's columns beside the repeated A:B (their values in B:C)
    s.set(f"A{r}", "Region: low / high", style="label")
    if every is None:  # no residuals file: the fit's own residuals, as planner.accuracy.ranges falls back to
        fallback = ranges.region_residuals("", DEFAULT_RESIDUALS)
        s.set(f"B{r}", fallback.low, fmt=PCT, style="result")
        s.set(f"C{r}", fallback.high, fmt=PCT, style="result")
        s.set(f"G{r}", fallback.note, style="note", text=True)
    else:
        s.set(f"B{r}", f"=IF({g_rows}>=$B$5,INDEX(rng_lows,{g_key}),$B$7)", fmt=PCT, style="result")
        s.set(f"C{r}", f"=IF({g_rows}>=$B$5,INDEX(rng_highs,{g_key}),$C$7)", fmt=PCT, style="result")
        own = (
            f'"held-out residuals of "&{g_rows}&" published figures on "&B{q["gpu"]}&" (sources: "'
            f'&INDEX(rng_sources,{g_key})&")"'
        )
        every_note = (
            '"all GPUs\' held-out residuals ("&TEXT($B$7,"+0%;-0%")&" / "&TEXT($C$7,"+0%;-0%")&", "&$D$7&" figures)"'
        )
        s.set(f"G{r}", f"=IF({g_rows}>=$B$5,{own},{every_note})&{flats}", style="note")
    s.merges.append(f"G{r}:H{r}")
    region = r
    r += 1
    s.set(f"A{r}", "Widening factor (product)", style="label")
    s.set(f"B{r}", f"=PRODUCT(E{first}:E{end})", fmt="0.00", style="result")
    _merged_note(s, f"G{r}", f'=IF({gaps}="","","x"&TEXT(B{r},"0.00")&": "&MID({gaps},3,1000))')
    factor = r
    r += 1
    miss = f"INDEX(gpu_curve_miss,{gpu_row})"
    s.set(f"A{r}", "Kernel curves of another vendor: miss (x)", style="label")
    s.set(f"B{r}", f"={miss}", fmt="0.00", style="result")
    _merged_note(
        s,
        f"G{r}",
        f'=IF(B{r}>1,"kernel curves of "&INDEX(gpu_curve_source,{gpu_row})&" stand in on "&B{q["gpu"]}&" (x"'
        f'&TEXT(B{r},"0.00")&" either way: the borrowed GEMM rate\'s miss on a published matmul figure; published "'
        f'&"GEMM, memory and all-reduce figures replace them where they exist)","")',
    )
    curves = r
    r += 1
    s.set(f"A{r}", "Widened, all", style="label")
    _merged_note(s, f"G{r}", f'=IF(AND(G{factor}<>"",G{curves}<>""),G{factor}&"; "&G{curves},G{factor}&G{curves})')
    all_widened = r
    # as many lines of G:H as the longest note any GPU gets: a GPU's sources, a borrowed curve's sentence
    longest = longest_answers(gpu_names, engine_names or [engine.name])
    notes_width = WIDTHS["G"] + WIDTHS["H"]
    for row, chars in (
        (region, longest.region),
        (factor, longest.factor),
        (curves, longest.curves),
        (r, longest.widened),
    ):
        s.heights[row] = note_height(chars, notes_width)
    r += 1
    s.set(f"A{r}", "Before the curves' miss: low / high", style="label")
    s.set(f"B{r}", f"={_widen(f'B{region}', f'B{factor}')}", fmt=PCT, style="calc")
    s.set(f"C{r}", f"={_widen(f'C{region}', f'B{factor}')}", fmt=PCT, style="calc")
    pre = r
    r += 1
    calibrated = f'INDEX(gpu_cal_range_note,{gpu_row})<>""'
    s.set(f"A{r}", "Calibration file's range (GPUs sheet)", style="label")
    s.set(f"B{r}", f'=IF({calibrated},INDEX(gpu_cal_residual_low,{gpu_row}),"none")', fmt=PCT, style="result")
    s.set(f"C{r}", f'=IF({calibrated},INDEX(gpu_cal_residual_high,{gpu_row}),"")', fmt=PCT, style="result")
    cal = r
    r += 2
    s.set(f"A{r}", "Range: low / high", style="subtitle")
    s.set(f"B{r}", f"=IF({calibrated},B{cal},{_shift(f'B{pre}', f'B{curves}', low=True)})", fmt=PCT, style="result")
    s.set(f"C{r}", f"=IF({calibrated},C{cal},{_shift(f'C{pre}', f'B{curves}', low=False)})", fmt=PCT, style="result")
    names += [Name("rng_low", f"{RANGES_SHEET}!$B${r}"), Name("rng_high", f"{RANGES_SHEET}!$C${r}")]
    r += 1
    # the answers in C:F, on the first page beside their labels, out of the repeated B
    s.set(f"A{r}", "Widened", style="label")
    _merged_note(s, f"C{r}", f'=IF(OR({calibrated},G{all_widened}=""),"no",G{all_widened})', "F")
    answer_width = sum(WIDTHS[col] for col in "CDEF")
    s.heights[r] = note_height(longest.widened, answer_width)
    names.append(Name("rng_widened", f"{RANGES_SHEET}!$C${r}"))
    r += 1
    s.set(f"A{r}", "Note", style="label")
    _merged_note(
        s,
        f"C{r}",
        f'=IF({calibrated},INDEX(gpu_cal_range_note,{gpu_row}),G{region}&IF(G{all_widened}="","","; widened "'
        f"&G{all_widened}))",
        "F",
    )
    s.heights[r] = note_height(longest.note, answer_width)
    names.append(Name("rng_note", f"{RANGES_SHEET}!$C${r}"))
    assert r == r_fac - 3, "the query block's rows and the factor table's place disagree"
    return s, names
