"""The Sweeps sheet: the charts' data (decode over batch sizes, max batch over contexts, the roofline)."""

from __future__ import annotations

from openpyxl.utils import get_column_letter

from planner.workbook import formulas as F
from planner.workbook.calc import Calc, scenario_col
from planner.workbook.formats import CELL_HOLDS, GB_NUM, GFLOP_NUM, INT, SECONDS_NUM, shown_unit
from planner.workbook.layout import SWEEPS_SHEET
from planner.workbook.spec import Probe, Sheet

BATCH_SWEEP = tuple(2**i for i in range(11))  # 1 .. 1024
#: The row after the sweep: the max batch the engine serves (Calc's served_batch, the Inputs' "at max batch"), so the
#: batch charts reach the operating point the Inputs quote (trial 13 F17: they stopped at 64 for a max batch of 117).
#: Plotted where it is not a batch of the sweep already.
MAX_BATCH_FORMAT = '#,##0" (max)"'
CONTEXT_SWEEP = tuple(2**i for i in range(10, 18))  # 1,024 .. 131,072
ROOF_INTENSITIES = (0.25, None, 20000.0)  # None: the ridge point
#: Unit of a Calc decode row -> (unit the Sweeps header names, number format): FLOP in GFLOP, bytes in GB (SI),
#: seconds in fixed point. The cells keep the base units (the parity tests read them); only the display changes, and
#: the header says so (formats.shown_unit: "Bytes moved (GB; cells hold bytes)").
SWEEP_DISPLAY = {"FLOP": ("GFLOP", GFLOP_NUM), "B": ("GB", GB_NUM), "s": ("s", SECONDS_NUM)}
#: Decode columns a reader prints: the totals and ratios. The workings (operator times, bytes per kind, all-reduce
#: parts) are folded (an outline group, "+" shows them), so the sheet prints one page wide at a legible size.
SWEEP_PRINTED = ("touched", "flop", "bytes", "tput", "mfu", "mbu", "intensity", "cost")
#: Times a reader compares beside TPOT, repeated in ms after it: (decode key, header). The all-reduces are a term of
#: TPOT; the whole step's roofline times are not (``formulas.ROOFLINE_MEMORY``: TPOT sums the operators, each timed on
#: the kernel curves), and the headers say which (trial 13 F4: the roofline's 10.4 ms read as TPOT's memory part).
SWEEP_MS = (
    ("tmem", "Roofline memory time, not a TPOT term (ms)"),
    ("tflop", "Roofline compute time, not a TPOT term (ms)"),
    ("comm", "All-reduce time, a TPOT term (ms)"),
)


def sweeps_sheet(c: Calc) -> tuple[Sheet, list[Probe], dict]:
    """Chart data: decode of the baseline over batch sizes; max batch over contexts; the roofline."""
    s = Sheet(SWEEPS_SHEET, freeze="A4", tab_color="A5A5A5")
    s.set("A1", "Sweeps: chart data for the baseline (#N/A: does not fit, charts skip it)", style="title")
    probes: list[Probe] = []
    base = scenario_col("base")

    def baseline(key: str) -> str:
        """The Calc sheet's absolute cell of ``key`` in the baseline column."""
        return c.ref(key, base, True, True)

    block = F.decode_block("sb")
    keys = [k for k, *_ in block]
    s.set("A3", "Batch", style="header")
    s.set("B3", "Batch (if it fits)", style="header")
    col_of = {"sb": "B"}
    for j, (key, label, unit, _fmt, _) in enumerate(block):
        col_of[f"s_{key}"] = get_column_letter(3 + j)
        unit = SWEEP_DISPLAY.get(unit, (unit, None))[0]
        unit = shown_unit(unit) if unit in CELL_HOLDS else unit
        s.set(f"{col_of[f's_{key}']}3", f"{label}{f' ({unit})' if unit else ''}", style="header")
        if key not in SWEEP_PRINTED:
            s.folded.append(col_of[f"s_{key}"])
    tpot_col = get_column_letter(3 + len(block))
    ach_col = get_column_letter(4 + len(block))
    ms_col = {key: get_column_letter(5 + len(block) + j) for j, (key, _) in enumerate(SWEEP_MS)}
    s.set(f"{tpot_col}3", "TPOT (ms)", style="header")
    s.set(f"{ach_col}3", "Achieved TFLOP/s per GPU", style="header")
    for key, header in SWEEP_MS:
        s.set(f"{ms_col[key]}3", header, style="header")
    for j in range(1, 5 + len(block) + len(SWEEP_MS)):
        s.widths[get_column_letter(j)] = 12
    first = 4
    swept = f"$A${first}:$A${first + len(BATCH_SWEEP) - 1}"
    for i, b in enumerate((*BATCH_SWEEP, "max")):
        r = first + i
        if b == "max":
            s.set(f"A{r}", f"={baseline('served_batch')}", fmt=MAX_BATCH_FORMAT)
            s.set(f"B{r}", f"=IF(OR(A{r}>{baseline('max_batch')},COUNTIF({swept},A{r})>0),NA(),A{r})", fmt=INT)
        else:
            s.set(f"A{r}", b, fmt=INT)
            s.set(f"B{r}", f"=IF(A{r}>{baseline('max_batch')},NA(),A{r})", fmt=INT)

        def resolve(k, r=r):
            if k in col_of:
                return f"{col_of[k]}{r}"
            return c.ref(k, base, absolute=True, sheet=True)

        for key, _label, unit, fmt, tmpl in block:
            fmt = SWEEP_DISPLAY.get(unit, (unit, fmt))[1]
            s.set(f"{col_of['s_' + key]}{r}", F.render(F.local(tmpl, "s"), resolve), fmt=fmt)
        s.set(f"{tpot_col}{r}", f"={col_of['s_step']}{r}*1000", fmt="#,##0.00")
        for key, _ in SWEEP_MS:
            s.set(f"{ms_col[key]}{r}", f"={col_of['s_' + key]}{r}*1000", fmt="#,##0.000")
        s.set(
            f"{ach_col}{r}",
            f"={col_of['s_flop']}{r}/({col_of['s_step']}{r}*{baseline('n')})/1000000000000",
            fmt="#,##0.0",
        )
        for key, q in (
            ("step", "step_s"),
            ("tput", "throughput_tokens_per_s"),
            ("intensity", "intensity_flop_per_byte"),
        ):
            if b != "max":  # #N/A where the max batch is a batch of the sweep (tests/test_trial13_print.py)
                probes.append(Probe(SWEEPS_SHEET, f"{col_of['s_' + key]}{r}", "base", f"decode_step.{q}@batch={b}"))
    batch_rows = (first, first + len(BATCH_SWEEP))  # the sweep and the max batch
    del keys
    # max batch against context, baseline model and the compare model, each on the baseline's GPU count
    r0 = batch_rows[1] + 3
    s.set(f"A{r0 - 1}", "Max batch memory holds against context (on the baseline's GPU count)", style="subtitle")
    s.set(f"A{r0}", "Context (tokens)", style="header")
    comp = scenario_col("compare")
    s.set(f"B{r0}", f'={baseline("model")}&" ("&{baseline("kv")}&" KV)"', style="header")
    s.set(f"C{r0}", f'={c.ref("model", comp, True, True)}&" ("&{c.ref("kv", comp, True, True)}&" KV)"', style="header")
    # the chart's compare series: C where the compare model differs, none where it is the model itself (blank
    # Compare with model on a GQA model: its own sibling), which drew the model's line twice under one name
    same = f"$B${r0}=$C${r0}"
    # in a printed column: a chart leaves out a hidden column's cells (the decode workings' folded ones)
    chart_col = next(get_column_letter(j) for j in range(4, 60) if get_column_letter(j) not in s.folded)
    s.set(
        f"{chart_col}{r0}",
        f'=IF({same},"(no compare model: the compare model is the model)",$C${r0})',
        style="header",
    )
    for i, ctx in enumerate(CONTEXT_SWEEP):
        r = r0 + 1 + i
        s.set(f"A{r}", ctx, fmt=INT)
        for col, sc in (("B", base), ("C", comp)):

            def resolve(k, sc=sc, r=r):
                return c.ref(k, sc, absolute=True, sheet=True)

            seq = "({kvrec}+{idxb})*" + F.held_layer_tokens(f"$A{r}")
            per_seq = (
                f"IF(AND(eng_kv_group_padding,{{linl}}>0),{F.hybrid_sequence('{n}', f'$A{r}')},"
                f"({seq})*{{repl}}+{{state}})"
            )
            mb = F.render(f"INT(MAX({{budget}}*{{n}},0)/({per_seq}))", resolve)[1:]
            s.set(f"{col}{r}", f"=IF({mb}<1,NA(),{mb})", fmt=INT)
            probes.append(
                Probe(SWEEPS_SHEET, f"{col}{r}", "base" if sc == base else "compare", f"max_batch@context={ctx}")
            )
        s.set(f"{chart_col}{r}", f"=IF({same},NA(),C{r})", fmt=INT)
    ctx_rows = (r0 + 1, r0 + len(CONTEXT_SWEEP))
    # roofline of the chosen GPU at the weight precision
    r1 = ctx_rows[1] + 3
    s.set(f"A{r1 - 1}", "Roofline of the chosen GPU (peak at the weight precision)", style="subtitle")
    s.set(f"A{r1}", "Intensity (FLOP/B)", style="header")
    s.set(f"B{r1}", "Attainable TFLOP/s", style="header")
    for i, x in enumerate(ROOF_INTENSITIES):
        r = r1 + 1 + i
        s.set(f"A{r}", x if x is not None else f"={baseline('ridge')}", fmt="#,##0.00")
        s.set(
            f"B{r}",
            f"=MIN({baseline('peak')},{baseline('bw')}*A{r})/1000000000000",
            fmt="#,##0.0",
        )
    roof_rows = (r1 + 1, r1 + len(ROOF_INTENSITIES))
    # the roofline chart's decode series, named by the batches it plots (those that fit, up to the max batch)
    s.set(f"C{r1}", "Decode points (chart legend)", style="header")
    largest = f"MAX(LOOKUP({baseline('max_batch')},{swept}),$A${batch_rows[1]})"
    s.set(
        f"C{r1 + 1}", f'=IFERROR("Decode, batch 1 .. "&TEXT({largest},"#,##0")&" (achieved)","Decode (no batch fits)")'
    )
    rp = roof_rows[1] + 2
    s.set(f"A{rp - 1}", "Prefill intensity (FLOP/B)", style="header")
    s.set(f"B{rp - 1}", "Prefill achieved TFLOP/s per GPU", style="header")
    s.set(f"A{rp}", f"={baseline('p_intensity')}", fmt="#,##0")
    s.set(
        f"B{rp}",
        f"={baseline('p_flop')}/({baseline('p_ttft')}*{baseline('n')})/1000000000000",
        fmt="#,##0.0",
    )
    where = dict(
        batch=batch_rows,
        ctx=(r0, *ctx_rows),
        roof=roof_rows,
        prefill=rp,
        tpot=tpot_col,
        decode_label=f"$C${r1 + 1}",
        compare_col=chart_col,
        ach=ach_col,
        intensity=col_of["s_intensity"],
        tput=col_of["s_tput"],
    )
    return s, probes, where
