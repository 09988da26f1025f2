"""The Results sheet: memory, roofline, decode and prefill of the baseline, with the range of the time fit."""

from __future__ import annotations

from planner.catalog import default_catalog
from planner.workbook.calc import Calc, weights_words_formula
from planner.workbook.formats import GB, INT, MS, MS_BEFORE_TEXT, USD, cell_holds
from planner.workbook.inputs import price_text
from planner.workbook.layout import RANGES_SHEET, RESULTS_SHEET
from planner.workbook.ranges_sheet import LongestAnswers, longest_answers, note_height
from planner.workbook.spec import Probe, Sheet

#: Lines of a range row's note (``range_note``, about 350 characters) in the 90-wide column D.
RANGE_NOTE_LINES = 5
#: The "How it is computed" of the cost per million output tokens: with the price used beside it (``inputs.price_text``; its source beside the Inputs' cost).
COST_HOW = "GPUs x price / 3600 / throughput x 1e6"


def range_note(quantity: str) -> str:
    """Beside a time range on Results: what the range is, and how often such ranges held on published runs planner
    never saw, as ``planner plan`` says it (``planner.accuracy.ranges.coverage_note``): the share inside read from
    the Ranges sheet's cell of ``quantity`` (TPOT or TTFT: ``ranges_sheet.HELD_ROW``), so the figure stays in one
    place, and which side most misses fall on from the same file (``stated_coverage``). Trial 13 F6: the row said the
    ranges held "in 80%" where 59% of TPOTs and 36% of TTFTs did, 56% of TTFTs slower than the high end. A plain
    sentence without the coverage file."""
    from planner.accuracy.ranges import stated_coverage
    from planner.workbook.ranges_sheet import HELD_COLUMNS, HELD_ROW

    what = (
        "10th-90th percentile of measured / predicted - 1 on held-out published figures of the nearest covered "
        "region (nominal 80%), widened where they do not cover this GPU, GPU count or model (Ranges sheet); neither "
        "end below the datasheet roofline floor (Calc)"
    )
    held = [(col, c) for col, c in zip(HELD_COLUMNS, stated_coverage(), strict=False) if c.quantity == quantity]
    if not held:
        return what
    col, c = held[0]
    misses = ""
    if c.above > c.below:
        misses = ", most misses slower: the high end is not an upper bound"
    elif c.below > c.above:
        misses = ", most misses faster than the low end"
    return (
        f'="{what}. On runs from sources planner never saw "&TEXT({RANGES_SHEET}!${col}${HELD_ROW},"0%")&" of '
        f'{quantity}s lay inside such a range ({RANGES_SHEET}!{col}{HELD_ROW}){misses}"'
    )


def results_sheet(c: Calc, longest: LongestAnswers | None = None) -> tuple[Sheet, list[Probe]]:
    """The sheet and its probes; ``longest``: the most characters the Range widened and Range from notes take for any
    GPU the Inputs offer (``ranges_sheet.longest_answers``; None: the shipped catalog's), their rows made as tall."""
    s = Sheet(RESULTS_SHEET, freeze="A4", tab_color="70AD47")
    s.widths.update(A=40, B=18, C=14, D=90)  # C: the high end of a range, up to "99,999.99 ms"
    s.set("A1", "Results for the baseline inputs", style="title")
    s.set(
        "A2",
        '=""&Calc!$C$'
        + str(c.row_of["model"])
        + '&" on "&Calc!$C$'
        + str(c.row_of["n"])
        + '&" x "&Calc!$C$'
        + str(c.row_of["gpu"])
        + '&", "&TEXT(Calc!$C$'
        + str(c.row_of["context"])
        + ',"#,##0")&" tokens, weights "&'
        + weights_words_formula(f"Calc!$C${c.row_of['wp']}", f"Calc!$C${c.row_of['ep']}")
        + '&", KV "&Calc!$C$'
        + str(c.row_of["kv"]),
        style="subtitle",
    )
    for col, h in zip("ABCD", ("Result", "Value", "Unit", "How it is computed"), strict=True):
        s.set(f"{col}3", h, style="header")
    probes = []
    MSF = "*1000"
    rows = [
        ("Memory", None),
        (
            "GPUs in the group",
            (
                "n",
                INT,
                "GPUs",
                "",
                "given, or the smallest valid vLLM group of 1, 2, 4, 8, ... holding the weights and one sequence",
            ),
        ),
        (
            "Memory the engine sees per GPU",
            (
                "visible",
                GB,
                "GB",
                "",
                "measured torch-visible total, else physical x (1 - ECC) x fraction (Assumptions)",
            ),
        ),
        (
            "Weights (whole model)",
            (
                "weight_bytes",
                GB,
                "GB",
                "",
                "non-expert params x bytes/weight + routed-expert params x their bytes (their biases 16-bit)",
            ),
        ),
        (
            "Reserve per GPU",
            ("reserve", GB, "GB", "", "engine activation peak + non-torch memory (+ NCCL when tensor-parallel)"),
        ),
        ("KV budget per GPU", ("budget", GB, "GB", "", "visible x utilization - weights / GPUs - reserve")),
        (
            "KV per token (one copy)",
            ("kv_token", '#,##0.000,," MB"', "MB", "", "2 x layers x KV heads x head dim x bytes (MLA: latent + rope)"),
        ),
        (
            "KV per token per GPU",
            ("kv_token_gpu", '#,##0.0," kB"', "kB", "", "with KV heads replicated when GPUs > KV heads"),
        ),
        (
            "KV per sequence (group)",
            (
                "kv_seq",
                GB,
                "GB",
                "",
                "context rounded up to KV blocks; sliding-window layers hold at most the window; under vLLM its KV "
                "groups' padding included (KV_BYTES leaves it out)",
            ),
        ),
        (
            "KV cache tokens (group)",
            ("kv_tokens", INT, "tokens", "", "on the layers alone; vLLM's log counts its padded KV groups (fewer)"),
        ),
        ("Max batch memory holds", ("max_batch", INT, "sequences", "", "floor(KV budget x GPUs / KV per sequence)")),
        (
            "Max batch the engine serves",
            ("served_batch", INT, "sequences", "", "min(max batch memory holds, the engine's max_num_seqs)"),
        ),
        ("Roofline", None),
        (
            "Peak at the weight precision",
            ("peak", '#,##0.0,,,," TFLOP/s"', "TFLOP/s", "", "dense peak of the GPU for the weights' math"),
        ),
        ("HBM bandwidth", ("bw", '#,##0,,," GB/s"', "GB/s", "", "")),
        ("Ridge point", ("ridge", "#,##0.0", "FLOP/B", "", "peak / bandwidth: below it a step is memory-bound")),
        ("Decode at the chosen batch", None),
        ("Batch", ("d_batch", INT, "sequences", "", "Inputs: batch (blank: max batch)")),
        (
            "TPOT",
            (
                "d_step",
                MS,
                "ms",
                MSF,
                "sum of the operators (dense GEMMs, MoE experts, attention), each timed on the GPU's kernel curves "
                "(Assumptions: kernel_curves), + all-reduces + overheads + host time (Explain; Calc)",
            ),
        ),
        ("Throughput", ("d_tput", INT, "tokens/s", "", "batch / TPOT")),
        ("MFU", ("d_mfu", "0.00%", "", "", "FLOPs / (TPOT x GPUs x peak)")),
        ("MBU", ("d_mbu", "0.00%", "", "", "bytes / (TPOT x GPUs x bandwidth)")),
        (
            "Arithmetic intensity",
            ("d_intensity", "#,##0.0", "FLOP/B", "", "FLOPs / bytes moved; about the batch at 16-bit"),
        ),
        (
            "Cost per million output tokens",
            ("d_cost", USD, "US$", "", COST_HOW),
        ),
        ("Decode at max batch", None),
        ("Batch", ("served_batch", INT, "sequences", "", "the max batch the engine serves")),
        ("TPOT", ("m_step", MS, "ms", MSF, "")),
        ("Throughput", ("m_tput", INT, "tokens/s", "", "")),
        ("MFU", ("m_mfu", "0.00%", "", "", "")),
        ("MBU", ("m_mbu", "0.00%", "", "", "")),
        ("Arithmetic intensity", ("m_intensity", "#,##0.0", "FLOP/B", "", "")),
        (
            "Cost per million output tokens",
            ("m_cost", USD, "US$", "", "decode only, at full batch, 100% busy; prompt processing not included"),
        ),
        ("Prefill", None),
        (
            "TTFT (prompt of the whole context)",
            (
                "p_ttft",
                MS,
                "ms",
                MSF,
                "the prompt's operators on the kernel curves at the prefill rates (FLOPs: 2 x params x tokens + causal "
                "attention, the output head on the last token only) + all-reduces + overheads",
            ),
        ),
        (
            "Prefill arithmetic intensity",
            ("p_intensity", "#,##0", "FLOP/B", "", "about the prompt length at 16-bit: far right of the ridge"),
        ),
    ]
    r = 4
    row_of = {}
    for label, spec in rows:
        if spec is None:
            s.set(f"A{r}", label, style="subtitle")
            r += 1
            continue
        key, fmt, unit, scale, how = spec
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", f"={c.ref(key, 'C', absolute=True, sheet=True)}{scale}", fmt=fmt, style="result")
        # a unit the format shows ("80.00 GB"): the Unit column says what the cell holds (formats.cell_holds)
        s.set(f"C{r}", cell_holds(unit) if fmt.endswith('"') else unit, style="unit")
        if how == COST_HOW:  # the price it is computed at, on the printed page (trial 19 F4)
            price = c.ref("price", "C", True, True)
            how = (
                f'="GPUs x price / 3600 / throughput x 1e6 (decode only, prompts not included), at "&IF(ISERROR({price}),"the price",{price_text(c)}&'
                '" per GPU-hour")&" (Inputs: where the price comes from)"'
            )
        s.set(f"D{r}", how, style="note")
        row = next(x for x in c.rows if x.key == key)
        if row.quantity:
            probes.append(Probe(RESULTS_SHEET, f"B{r}", "base", row.quantity, 1000.0 if scale else 1.0))
        row_of[key] = r
        r += 1
    r += 1
    s.set(f"A{r}", "Range of the time predictions", style="subtitle")
    # the range's two ends sit under Value and Unit: each gets its own heading on this row
    s.set(f"B{r}", "Low", style="header")
    s.set(f"C{r}", "High", style="header")
    floors = {"d_step": "d_floor", "m_step": "m_floor", "p_ttft": "p_floor"}
    for label, key in (("TPOT at the chosen batch", "d_step"), ("TPOT at max batch", "m_step"), ("TTFT", "p_ttft")):
        r += 1
        floor = f"{c.ref(floors[key], 'C', absolute=True, sheet=True)}*1000"
        s.set(f"A{r}", f"{label}: low / high", style="label")
        s.set(f"B{r}", f"=MAX(B{row_of[key]}*(1+rng_low),{floor})", fmt=MS, style="result")
        s.set(f"C{r}", f"=MAX(B{row_of[key]}*(1+rng_high),{floor})", fmt=MS_BEFORE_TEXT, style="result")
        s.set(f"D{r}", range_note("TTFT" if key == "p_ttft" else "TPOT"), style="note")
        s.heights[r] = 13.5 * RANGE_NOTE_LINES + 2
    r += 1
    s.set(f"A{r}", "Range widened", style="label")
    s.set(f"B{r}", "=rng_widened", style="note")
    s.merges.append(f"B{r}:D{r}")
    # wrapped in B:D on rows as tall as the longest any GPU gets (trial 33 F12: MI325X's borrowed kernel curves
    # overflowed rows sized for H100's notes and printed over each other)
    longest = longest or longest_answers([g.name for g in default_catalog().gpus])
    notes_width = sum(s.widths[col] for col in "BCD")
    s.heights[r] = note_height(longest.widened, notes_width)
    r += 1
    s.set(f"A{r}", "Range from", style="label")
    s.set(f"B{r}", "=rng_note", style="note")
    s.merges.append(f"B{r}:D{r}")
    s.heights[r] = note_height(longest.note, notes_width)
    r += 2
    s.set(f"A{r}", 'Why "GPU-Util 80%" says nothing about these', style="subtitle")
    util = [
        "nvidia-smi's GPU-Util is the share of time in which any kernel runs. A decode step keeps a kernel running "
        "nearly all the time, so GPU-Util reads 80-100% whatever the batch.",
        f'="At batch "&TEXT(B{row_of["d_batch"]},"#,##0")&" this GPU does "&TEXT(B{row_of["d_mfu"]},"0.0%")&" of its '
        f'peak FLOPs (MFU) and moves "&TEXT(B{row_of["d_mbu"]},"0%")&" of its peak bandwidth (MBU)."',
        f'="At max batch ("&TEXT(B{row_of["served_batch"]},"#,##0")&") MFU is "&TEXT(B{row_of["m_mfu"]},"0.0%")&'
        f'" and throughput "&TEXT(B{row_of["m_tput"]},"#,##0")&" tokens/s: same GPU-Util, "&'
        f'TEXT(B{row_of["m_tput"]}/B{row_of["d_tput"]},"0.0")&"x the tokens."',
        "Decode is memory-bound while its arithmetic intensity (about the batch) is below the ridge point: "
        "judge capacity by max batch, MBU and tokens per dollar, not by GPU-Util.",
    ]
    for i, text in enumerate(util, 1):
        s.note(f"A{r + i}", text)
    return s, probes
