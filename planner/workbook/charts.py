"""The Charts sheet: roofline, max batch against context, TPOT and throughput against batch (data: Sweeps)."""

from __future__ import annotations

from planner.workbook.layout import CHARTS_SHEET, SWEEPS_SHEET
from planner.workbook.spec import Chart, Series, Sheet


def charts_sheet(w: dict) -> Sheet:
    """Four scatter charts over the Sweeps data. Axes follow the data: batch axes take the batches that fit
    (column B, #N/A beyond max batch, so no axis runs to 10,000 for three points), contexts are evenly spaced
    categories 1,024 .. 131,072, and max batch is on a log scale so a model with 8x less batch does not lie flat on zero."""
    s = Sheet(CHARTS_SHEET, tab_color="ED7D31")
    s.set("A1", "Charts for the baseline (Inputs sheet); data on the Sweeps sheet", style="title")
    S = SWEEPS_SHEET
    b0, b1 = w["batch"]
    c0, c1a, c1b = w["ctx"]
    r0, r1 = w["roof"]
    rp = w["prefill"]
    cc = w["compare_col"]
    s.charts.append(
        Chart(
            "Roofline (log-log): decode and prefill",
            "A3",
            "Arithmetic intensity (FLOP/B, log)",
            "TFLOP/s per GPU (log)",
            (
                Series("Roof: min(peak, bandwidth x intensity)", f"{S}!$A${r0}:$A${r1}", f"{S}!$B${r0}:$B${r1}"),
                Series(
                    f"={S}!{w['decode_label']}",
                    f"{S}!${w['intensity']}${b0}:${w['intensity']}${b1}",
                    f"{S}!${w['ach']}${b0}:${w['ach']}${b1}",
                ),
                Series("Prefill of the context (achieved)", f"{S}!$A${rp}:$A${rp}", f"{S}!$B${rp}:$B${rp}", line=False),
            ),
            x_log=True,
            y_log=True,
            span_gaps=True,  # the sweep's rows past max batch are #N/A, its max-batch row last
        )
    )
    s.charts.append(
        Chart(
            "Max batch vs context: model and compare model",
            "K3",
            "Context (tokens)",
            "Max batch memory holds (sequences, log)",
            (
                Series(f"={S}!$B${c0}", f"{S}!$A${c1a}:$A${c1b}", f"{S}!$B${c1a}:$B${c1b}"),
                # the compare model's column for the chart: #N/A where it is the model itself (one line, not two)
                Series(f"={S}!${cc}${c0}", f"{S}!$A${c1a}:$A${c1b}", f"{S}!${cc}${c1a}:${cc}${c1b}"),
            ),
            y_log=True,  # a GQA model's batch is about 8x an MHA model's: on a linear axis the MHA line lies flat
            categories=True,  # contexts double: evenly spaced, the axis ends at the last context swept
        )
    )
    for what, anchor, axis, key in (
        ("TPOT", "A22", "TPOT (ms)", "tpot"),
        ("Throughput", "K22", "Throughput (tokens/s)", "tput"),
    ):
        series = Series(what, f"{S}!$B${b0}:$B${b1}", f"{S}!${w[key]}${b0}:${w[key]}${b1}")
        s.charts.append(
            Chart(f"{what} vs batch", anchor, "Batch (sequences, log)", axis, (series,), x_log=True, span_gaps=True)
        )
    s.widths.update({col: 9 for col in "ABCDEFGHIJKLMNOPQRS"})
    s.note(
        "A41",
        "Batches above what memory holds do not fit and are left out; those above the engine's max_num_seqs "
        "(GPUs sheet: Sampler sequences) are what-ifs, as planner plan warns. The roof uses the dense peak at the "
        "weight precision; achieved points include the engine efficiencies and overheads (Assumptions).",
        "S",
    )
    return s
