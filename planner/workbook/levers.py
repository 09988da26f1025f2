"""The Levers sheet: the baseline and five lever scenarios side by side, each at the max batch its engine serves, and
the data-parallel attention + expert parallel lever of a MoE baseline (``calc.DP_EP``: figures planner computed)."""

from __future__ import annotations

from planner.workbook.calc import (
    COLUMNS,
    DP_EP,
    FLOOR_SHORT,
    SCENARIOS,
    STALE_MEETS,
    UNKNOWN_SHORT,
    WORKLOAD_LEVERS,
    Calc,
    scenario_col,
    weights_words_formula,
)
from planner.workbook.formats import GB, INT, MS, USD, cell_holds
from planner.workbook.inputs import LOAD_FED, STALE_FLEET, STALE_UNIT, stale_estimate
from planner.workbook.layout import CALC_SHEET, LEVERS_SHEET, LOAD_SHEET, LOAD_STATUS_ROW, PERCENTILE_TERM
from planner.workbook.spec import Highlight, Probe, Sheet
from planner.workbook.tail import HIGH_PERCENTILE


def last_col() -> str:
    """The last lever column: the dp-ep lever's (``calc.COLUMNS``)."""
    return scenario_col(COLUMNS[-1][0])


def _shown(ref: str, scale: str = "", void: str | None = None) -> str:
    """A dp-ep column cell as Levers shows it: blank where planner stored nothing, not 0; with ``void`` (Calc's void
    cell of the column), its words where the lever does not apply (a dense baseline)."""
    shown = f'IF(ISBLANK({ref}),"",{ref}{scale})'
    return f"={shown}" if void is None else f'=IF({void}<>"",{void},{shown})'


def or_void(void: str | None, formula: str) -> str:
    """``formula`` (a cell's, with its "="), or the lever's words where it changes nothing or does not apply (Calc's
    void cell ``void``: "no change", "does not apply"; None: the Baseline, never void). Trial 13 F13: the
    compare model's "no change" column said "Serves the same requests: no: another model" and repeated the
    baseline's fleet; a dense model's DP attention + EP column said "yes" and 0 requests/s beside "does not apply"."""
    if void is None:
        return formula
    body = formula[1:] if formula.startswith("=") else f'"{formula}"'
    return f'=IF({void}<>"",{void},{body})'


def sized_by_formula(c: Calc, col: str, load: bool, dp_ep: bool = False) -> str:
    """What the fleet row rests on, as a formula over Calc's column ``col``: the rate factor it uses (blank: not
    simulated), whether that is stale (an estimate until a refresh), and, for the Baseline, which lever's run it is
    where the Load sheet simulated the Inputs' scenario as a lever ("the Weights fp8 lever's run"); else no queue.
    ``dp_ep``: the dp-ep lever's column, whose fleet exists only where planner simulated one (no no-queue formula for
    the layout)."""
    rate = c.ref("rate_used", col, absolute=True, sheet=True)
    said = f'"simulated p"&{PERCENTILE_TERM}&" under load"'
    if load:
        stale = c.ref("stale", col, absolute=True, sheet=True)
        said += f'&IF({stale}=1," (STALE: refresh)","")'
        if col == scenario_col("base"):
            lever = c.ref("sim_lever", col, absolute=True, sheet=True)
            heads = f"{LEVERS_SHEET}!$C$3:${scenario_col(SCENARIOS[-1][0])}$3"
            said += f'&IF(AND(ISNUMBER({lever}),{lever}>1)," (the "&INDEX({heads},{lever})&" lever\'s run)","")'
    otherwise = '"not sized: planner simulated no fleet"' if dp_ep else '"no queue (not simulated: Load sheet)"'
    if load and not dp_ep:  # a fleet kept nearly idle (Calc's floor row): none to budget, not a no-queue one
        floor = c.ref("floor", col, absolute=True, sheet=True)
        otherwise = f'IF({floor}<>"","no fleet: near-idle floor (Load sheet)",{otherwise})'
    return f"=IF(ISNUMBER({rate}),{said},{otherwise})"


#: The Levers budget rows whose figures rest on the Load sheet (through Calc's stored rate factor): their unit cell
#: reads ``inputs.STALE_UNIT`` while its Status is not current, as the Inputs' fleet rows do (``inputs.LOAD_FED``).
LOAD_FED_ROWS = ("rate_used", "rate_repl", "replicas", "fleet_gpus", "fleet_usd_month")

#: The Levers budget rows above the fleet that rest on the same rate factor: "not known" where the fleet is (Calc's
#: stale_unknown: Inputs other than the peak changed; trial 24 F5's 74 replicas on another scenario's queue term).
NOT_KNOWN_ROWS = ("rate_repl", "replicas")

#: The cheapest-fleet row where only levers that change the requests meet the targets (they are never ranked).
ONLY_WORKLOAD_MEETS = (
    "none that serves the same requests meets the targets ("
    + " and ".join(header for key, header, _ in SCENARIOS if key in WORKLOAD_LEVERS)
    + " change them)"
)

#: Each scenario's answer on the Levers row "Serves the same requests": a lever that changes them is not ranked.
SAME_REQUESTS_LABEL = "Serves the same requests"


def same_requests_text(key: str) -> str:
    """ "yes", or "no: another model" for a lever that changes the requests (``WORKLOAD_LEVERS``); Prompt halved's
    cell is ``context_halved_formula``, this its words where the contexts are errors."""
    return f"no: {WORKLOAD_LEVERS[key]}" if key in WORKLOAD_LEVERS else "yes"


def context_halved_words(context: int, output_tokens: float | None, prompt_tokens: float | None = None) -> str:
    """What Prompt halved does to the requests, as ``context_halved_formula`` says it: each prompt (the Inputs' prompt
    tokens, blank: context - output, as the Load sheet sends it) halved, the output tokens kept
    (``load_figures.halved_prompt``): "no: prompts 1,000 -> 500 (output kept)" for 1,300 tokens and 300 output, "no:
    prompts 213 -> 106 (output kept)" for trial 22 F13's 425 and 212 (halving the context had left no prompt:
    "prompts 213 -> none"). Without a prompt (no output tokens, or none left beside them), the whole sequence's tokens
    halved: "no: prompt + output 4,096 -> 2,048"."""
    from planner.workbook.load_figures import halved_prompt
    from planner.workbook.tail import prompt_of

    inputs = {"context": context, "output_tokens": output_tokens, "prompt_tokens": prompt_tokens}
    prompt = prompt_of(inputs)
    half_context, half = halved_prompt(int(context), prompt, inputs)
    if prompt is not None and prompt >= 1:
        return f"no: prompts {prompt:,} -> {half:,} (output kept)"
    return f"no: prompt + output {int(context):,} -> {half_context:,}"


def context_halved_formula(c: Calc) -> str:
    """Levers' "Serves the same requests" cell of Prompt halved: ``context_halved_words`` over Calc's context used and
    prompt (Baseline's and Prompt halved's columns)."""
    base, half = (c.ref("context", scenario_col(k), sheet=True) for k in ("base", "context_half"))
    prompt, half_prompt = (c.ref("prompt", scenario_col(k), sheet=True) for k in ("base", "context_half"))
    head = f"no: {WORKLOAD_LEVERS['context_half']}"
    fmt = '"#,##0"'
    whole = f'"no: prompt + output "&TEXT({base},{fmt})&" -> "&TEXT({half},{fmt})'
    prompts = f'"no: prompts "&TEXT({prompt},{fmt})&" -> "&TEXT({half_prompt},{fmt})&" (output kept)"'
    return (
        f'=IF(OR(ISERROR({base}),ISERROR({half})),"{head}",'
        f"IF(ISNUMBER({prompt}),IF({prompt}>=1,{prompts},{whole}),{whole}))"
    )


def groups_note(c: Calc) -> str:
    """Which tensor-parallel groups the fleets are sized on, as a formula: the baseline's and More GPUs' groups;
    with the GPU count blank, that the baseline's is only the smallest that fits, where ``planner plan --rate``
    searches 1, 2, 4 and 8 (a trial's blank count sized 1 and 2 GPUs a replica, 979 and 366 GPUs, where plan found
    4 x 44 = 176). "" where the baseline's group is an error."""
    base, more = (c.ref("n", scenario_col(k), absolute=True, sheet=True) for k in ("base", "more_gpus"))
    return (
        f'=IF(ISERROR({base}),"","Groups sized: "&{base}&IF({base}=1," GPU"," GPUs")&" a replica"&IF(in_gpus=""," (the '
        f'smallest that fits: GPU count blank)"," (Inputs)")&", More GPUs per replica "&IF(ISERROR({more}),"none larger",{more})&IF(in_gpus='
        '"","; planner plan --rate searches 1, 2, 4 and 8 GPUs and may need fewer: type a GPU count to size '
        'another",""))'
    )


def no_cheapest(c: Calc) -> str:
    """Why no fleet is green where the targets are judged (Calc's unknown row, read first, says why they are not: an
    input refused, a price typed and refused among them, or the Load sheet stale), as a formula: no fleet was asked
    for (a blank peak traffic or output tokens: the Inputs say "Blank: no fleet"), no fleet has a cost (no catalog
    price for the GPU), else none meets the targets. Every scenario runs on the baseline's GPU and price, so the
    baseline's column answers for all."""

    def base(key: str) -> str:
        return c.ref(key, scenario_col(SCENARIOS[0][0]), absolute=True, sheet=True)

    price, gpu_row = base("price"), base("gpu_row")
    first, last = scenario_col(SCENARIOS[0][0]), last_col()

    def row(key: str) -> str:
        return f"{CALC_SHEET}!${first}${c.row_of[key]}:${last}${c.row_of[key]}"

    # a lever that changes the requests meets the targets, none that serves them does (not ranked: WORKLOAD_LEVERS)
    only_workload = f"SUMPRODUCT({row('meets')},1-{row('same_requests')})>0"
    none_meets = f'IF({only_workload},"{ONLY_WORKLOAD_MEETS}","none meets the targets")'
    return (
        'IF(in_peak_requests="","no peak traffic given (Inputs): no fleet asked for",'
        'IF(in_output_tokens="","no output tokens given (Inputs): no fleet asked for",'
        f'IF(AND(ISERROR({price}),ISNUMBER({gpu_row})),"no price for "&{base("gpu")}&": give a price per GPU-hour '
        f'(Inputs)",{none_meets})))'
    )


#: Lines of the Weights fp8 lever's quality note across the scenario columns (about 420 characters in 133).
QUALITY_LINES = 4


def quality_formula(c: Calc) -> str:
    """The Weights fp8 lever's quality caveat, the budget review's own words (the Models sheet's
    ``model_fp8_quality`` column, ``catalog_sheets.fp8_quality``) for the baseline's model; "" where the lever
    changes nothing (fp8 weights already) or the model is not listed."""
    lever = scenario_col("weights_fp8")
    no_change = c.ref("no_change", lever, absolute=True, sheet=True)
    row = c.ref("model_row", scenario_col("base"), absolute=True, sheet=True)
    note = f"INDEX(model_fp8_quality,{row})"
    return f'=IF(ISERROR({no_change}),"",IF({no_change}=1,"",IF(ISERROR({note}),"",""&{note})))'


def unknown_short(unknown: str) -> str:
    """The cheapest-fleet row's words for why nothing is judged, from Calc's unknown cell ``unknown``: the "Meets"
    rows' words before their advice ("not known: the Load sheet is stale", ``calc.UNKNOWN_SHORT``), two lines of its
    19-wide column (the whole sentence printed cut: "tale; run planner workbook refresh")."""
    formula = unknown
    for full, short in reversed(UNKNOWN_SHORT.items()):
        formula = f'IF({unknown}="{full}","{short}",{formula})'
    return formula


def levers_sheet(c: Calc, load: bool = True) -> tuple[Sheet, list[Probe]]:
    """The Levers sheet; ``load``: the workbook has a Load sheet (the "Sized by" row reads its Status)."""
    s = Sheet(LEVERS_SHEET, freeze="C4", tab_color="4472C4")

    def void(sk: str) -> str | None:
        """Calc's void cell of a lever column (None: the Baseline's, never void)."""
        return None if sk == "base" else c.ref("void", scenario_col(sk), absolute=True, sheet=True)

    s.widths.update(A=40, B=12)
    s.set("A1", "Levers: each changes one thing against the baseline", style="title")
    s.note(
        "A2",
        "Speed and cost at each scenario's max batch the engine serves (what memory holds, at most the engine's "
        "max_num_seqs on the GPU), on the baseline's GPU count (More GPUs per replica: the next tensor-parallel "
        "group vLLM accepts, usually twice it). The fleet: the fewest replicas whose TTFT and TPOT at the Inputs' "
        f"latency percentile (blank: p{HIGH_PERCENTILE}), simulated by planner under the peak "
        "traffic (Load sheet), meet the targets; as a formula, the no-queue rate per replica times the rate factor "
        "the simulation found (a stored number; blank, no queue, where nothing was simulated). "
        "Green: the cheapest fleet per month of the scenarios that serve the same requests and meet the TPOT and "
        "TTFT targets (Inputs); one that misses a target or lacks a value (a blank input, an error) is never green, "
        'nor one that changes nothing ("no change" in its first row). DP attention + EP (a MoE baseline\'s GPUs as '
        "data-parallel attention ranks, experts spread): no formula restates that layout, so its figures are numbers "
        "planner computed (as planner plan --parallelism dp-ep and planner export's fifth lever), current while the "
        "Load sheet is.",
        last_col(),
    )
    s.set("A3", "", style="header")
    s.set("B3", "Unit", style="header")
    for key, header, _ in COLUMNS:
        col = scenario_col(key)
        s.widths[col] = 18  # seven columns: 40 + 12 + 7 x 18 = 178 characters, printed one page wide at 6 pt or more
        s.set(f"{col}3", header, style="header")
    probes: list[Probe] = []
    r = 4
    s.set(f"A{r}", "What changes", style="note")
    for key, _, _ in COLUMNS:  # Calc's what row: "no change: ..." where a lever resolves to the baseline
        col = scenario_col(key)
        s.set(f"{col}{r}", f"={c.ref('what', col, absolute=True, sheet=True)}", style="note")
    s.heights[r] = 13.5 * 5 + 2  # "no change: the compare model is DeepSeek-V3 itself (blank: ...)" in 20 wide
    s.set(f"B{r}", "", style="note")
    r += 1
    shown = [
        ("GPU", "gpu", None, ""),
        ("Model", "model", None, ""),
        ("Context", "context", INT, "tokens"),
        ("KV-cache precision", "kv", None, ""),
        ("Weight precision", "wp", None, ""),
        ("GPUs in the group", "n", INT, "GPUs"),
        ("Context within trained maximum", "trained_note", None, ""),
    ]
    results = [
        ("Max batch memory holds", "max_batch", INT, "sequences", ""),
        ("Max batch the engine serves", "served_batch", INT, "sequences", ""),
        ("KV budget per GPU", "budget", GB, "GB", ""),
        ("KV per sequence", "kv_seq", GB, "GB", ""),
        ("TPOT at max batch", "m_step", MS, "ms", "*1000"),
        ("Throughput at max batch", "m_tput", INT, "tokens/s", ""),
        ("Cost at max batch", "m_cost", USD, "$/M tokens", ""),
        ("TTFT (whole context as prompt)", "p_ttft", MS, "ms", "*1000"),
    ]
    for label, key, fmt, unit in shown:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", cell_holds(unit) if (fmt or "").endswith('"') else unit, style="unit")
        for sk, _, _ in COLUMNS:
            col = scenario_col(sk)
            ref = c.ref(key, col, absolute=True, sheet=True)
            formula = _shown(ref) if sk == DP_EP[0] else f"={ref}"
            if key == "wp":  # "bf16 + mxfp4 experts" for gpt-oss as published (trial 26 F2), as the review names them
                words = weights_words_formula(ref, c.ref("ep", col, absolute=True, sheet=True))
                formula = f'=IF(ISBLANK({ref}),"",{words})' if sk == DP_EP[0] else f"={words}"
            s.set(f"{col}{r}", formula, fmt=fmt, style="calc")
        r += 1
    r += 1
    s.set(f"A{r}", "Results", style="subtitle")
    r += 1
    result_row = {}
    for label, key, fmt, unit, scale in results:
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", cell_holds(unit) if fmt.endswith('"') else unit, style="unit")
        q = next(x for x in c.rows if x.key == key).quantity
        for sk, _, _ in COLUMNS:
            col = scenario_col(sk)
            ref = c.ref(key, col, absolute=True, sheet=True)
            if sk == DP_EP[0]:  # planner's numbers (Calc's dp-ep column), no api function restated: no probe
                s.set(f"{col}{r}", _shown(ref, scale, void(sk)), fmt=fmt, style="result")
                continue
            s.set(f"{col}{r}", f"={ref}{scale}", fmt=fmt, style="result")
            if q:
                probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, q, 1000.0 if scale else 1.0))
        result_row[key] = r
        r += 1
    first, last = scenario_col(SCENARIOS[0][0]), last_col()
    r += 1
    s.set(
        f"A{r}",
        "Budget: the fleet for the peak traffic (Inputs), sized at the simulated latency percentile (Load sheet)",
        style="subtitle",
    )
    r += 1
    s.set(f"A{r}", SAME_REQUESTS_LABEL, style="label")
    for sk, _, _ in COLUMNS:
        text = context_halved_formula(c) if sk == "context_half" else same_requests_text(sk)
        s.set(f"{scenario_col(sk)}{r}", or_void(void(sk), text), style="result_text")
    s.heights[r] = 13.5 * 2 + 2  # "no: prompts 3,696 -> 1,848 (output kept)" on two lines of its column
    r += 1
    budget = [
        ("Meets the latency targets", "meets_text", None, "", ""),
        ("Queue term: rate factor (planner's simulation)", "rate_used", "0.000", "x no queue", ""),
        ("Requests/s one replica takes", "rate_repl", "#,##0.00", "requests/s", ""),
        ("Replicas for the peak", "replicas", INT, "replicas", ""),
        ("Fleet sized by", "sized_by", None, "", ""),
        ("Fleet GPUs", "fleet_gpus", INT, "GPUs", ""),
        ("Fleet cost per month", "fleet_usd_month", USD, "US$", ""),
    ]
    for label, key, fmt, unit, _ in budget:
        s.set(f"A{r}", label, style="label")
        if load and key in LOAD_FED_ROWS:  # the figure rests on the Load sheet's rate factor: marked while it is stale
            unit = f'=IF(LEFT({LOAD_SHEET}!$B${LOAD_STATUS_ROW},7)="current","{unit}","{STALE_UNIT}")'
        s.set(f"B{r}", unit, style="unit")
        q = None if key == "sized_by" else next(x for x in c.rows if x.key == key).quantity
        for sk, _, _ in COLUMNS:
            col = scenario_col(sk)
            style = "result_text" if key in ("meets_text", "sized_by") else "result"
            if key == "sized_by":
                formula = sized_by_formula(c, col, load, sk == DP_EP[0])
            elif sk == DP_EP[0] and key == "rate_used":
                formula = _shown(c.ref(key, col, absolute=True, sheet=True))  # its void words: or_void below
            elif key == "rate_used" and load:  # a fleet kept nearly idle (Calc's floor row) has no queue term: not 0
                floor = c.ref("floor", col, absolute=True, sheet=True)
                formula = f'=IF({floor}<>"","{FLOOR_SHORT}",{c.ref(key, col, absolute=True, sheet=True)})'
            else:
                formula = f"={c.ref(key, col, absolute=True, sheet=True)}"
            if load and key in LOAD_FED:  # stale (Calc): an estimate in words, never a number to sum
                stale = c.ref("stale", col, absolute=True, sheet=True)
                unknown = c.ref("stale_unknown", col, absolute=True, sheet=True)
                formula = stale_estimate(formula[1:], stale, unknown, key == "fleet_usd_month")
            elif load and key in NOT_KNOWN_ROWS:  # the same fleet's per-replica rate and replicas (trial 24 F5)
                unknown = c.ref("stale_unknown", col, absolute=True, sheet=True)
                formula = f'=IF(ISERROR({formula[1:]}),{formula[1:]},IF({unknown}=1,"{STALE_FLEET}",{formula[1:]}))'
            s.set(f"{col}{r}", or_void(void(sk), formula), fmt=fmt, style=style)
            if q and sk != DP_EP[0] and not (load and key in (*LOAD_FED, *NOT_KNOWN_ROWS)):  # Calc's row is probed
                probes.append(Probe(LEVERS_SHEET, f"{col}{r}", sk, q))
        if key == "meets_text":  # "no: TPOT not known (blank target or error), TTFT not known (...)" on five
            s.heights[r] = 13.5 * 5 + 2  # lines of its 20-wide column, bold (two cut it after "(blank target or")
        elif key == "sized_by":
            s.heights[r] = 13.5 * 2 + 2  # "simulated p95 under load (STALE: refresh)" on two lines of its column
        result_row[key] = r
        r += 1
    green_row = c.row_of["green"]
    for key in ("meets_text", "fleet_usd_month"):  # Calc's green row: 1 only where the targets are met
        row = result_row[key]
        s.highlights.append(Highlight(f"{first}{row}:{last}{row}", f"{CALC_SHEET}!{first}${green_row}=1"))
    greens = f"{CALC_SHEET}!${first}${green_row}:${last}${green_row}"
    # why nothing is judged (an input refused, the Load sheet stale), the "Meets" rows' first words: said here too;
    # stale where any column is (the Baseline simulated as a lever's run is current, the other levers are not)
    stale_row = f"{CALC_SHEET}!${first}${c.row_of['stale']}:${last}${c.row_of['stale']}"
    base_unknown = c.ref("unknown", first, absolute=True, sheet=True)
    unknown = f'IF({base_unknown}<>"",{base_unknown},IF(MAX({stale_row})=1,"{STALE_MEETS}",""))'

    s.set(f"A{r}", "Cheapest fleet that meets the targets", style="label")
    s.set(
        f"{first}{r}",
        f"=IF(MAX({greens})=1,INDEX({first}3:{last}3,MATCH(1,{greens},0)),"
        f'IF({unknown}<>"",{unknown_short(unknown)},{no_cheapest(c)}))',
        style="result_text",  # wrapped: "not known: the Load sheet is stale; ..." was cut to "tale; run planner ..."
    )
    # beside it, the groups the fleets are on (about 190 characters: two lines across the other scenario columns, as
    # tall as the label and the "not known" answers' short words; a row of its own pushed "Change from baseline" onto
    # a second printed page)
    s.note(f"{scenario_col(SCENARIOS[1][0])}{r}", groups_note(c), last)
    s.heights[r] = 13.5 * 2 + 2
    r += 1
    # beside the cheapest fleet, the budget review's caveat on fp8 weights (trial 19 F7): they change the answers
    s.set(f"A{r}", "Quality: Weights fp8", style="label")
    s.note(f"{first}{r}", quality_formula(c), last)
    s.heights[r] = 13.5 * QUALITY_LINES + 2
    r += 2
    s.set(f"A{r}", "Change from baseline", style="subtitle")
    r += 1
    for label, key in (
        ("Max batch the engine serves", "served_batch"),
        ("Throughput at max batch", "m_tput"),
        ("Cost at max batch", "m_cost"),
    ):
        src = result_row[key]
        s.set(f"A{r}", label, style="label")
        s.set(f"B{r}", "vs baseline", style="unit")
        for sk, _, _ in COLUMNS:
            col = scenario_col(sk)
            change = f"={col}{src}/${first}${src}-1"
            if sk == DP_EP[0]:  # blank where planner stored nothing
                change = f'=IF(ISNUMBER({col}{src}),{col}{src}/${first}${src}-1,"")'
            s.set(f"{col}{r}", or_void(void(sk), change), fmt="+0%;-0%;0%", style="calc")
        r += 1
    return s, probes
