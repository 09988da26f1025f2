"""The Inputs sheet: the yellow input cells with dropdowns, the defaults the workbook opens on, and an
"at a glance" block."""

from __future__ import annotations

from planner.catalog import Catalog
from planner.serving.load import PERCENTILES
from planner.units import MAX_RENT_USD_PER_GPU_HOUR, RENT_ACCEPTED
from planner.workbook.calc import BATCH_REFUSED, NO_FLEET_ASKED, Calc, scenario_col
from planner.workbook.formats import INT
from planner.workbook.layout import (
    BUDGET_DEFAULTS,
    BUDGET_FIELDS,
    CALC_SHEET,
    COMPARE_FIELD,
    ENGINE_INDEX,
    ENGINE_NAMES,
    GLANCE,
    INPUT_FIELDS,
    INPUTS_SHEET,
    LOAD_SHEET,
    LOAD_STATUS_ROW,
    MAX_BURSTINESS,
    NO_CATALOG_PRICE,
    REVIEW_KEYS,
    TARGET_HELPS,
    WARNING_PREFIX,
    glance_row,
    input_row,
    meets_unit_formula,
    target_help_formula,
    why_error_row,
)
from planner.workbook.spec import Name, Sheet, Validation

#: The scenario the workbook opens on: the seed's comparison, valid for both models' inputs. Llama 2 70B (GQA,
#: 8 KV heads) at its trained 4,096 tokens on 4 x H100, compared with LLaMA-65B (MHA, 64 KV heads): about 8x
#: the KV cache per token, so about an eighth of the batch.
OPENING = dict(gpu="H100 SXM 80GB", model="Llama-2-70B", context=4096, gpus=4, compare_model="LLaMA-65B")


def default_inputs(catalog: Catalog, gpus: list, models: list, engine: str = "vllm") -> dict:
    """The inputs the workbook opens on: ``OPENING`` where the selected catalog has its entries, else the first
    GPU and model selected at a context within the model's trained maximum; ``engine``: the one it is written for."""
    gpu_names, model_names = [g.name for g in gpus], [m.name for m in models]
    seed = OPENING["gpu"] in gpu_names and OPENING["model"] in model_names
    gpu = OPENING["gpu"] if OPENING["gpu"] in gpu_names else gpu_names[0]
    model = OPENING["model"] if OPENING["model"] in model_names else model_names[0]
    compare = OPENING["compare_model"] if seed and OPENING["compare_model"] in model_names else None
    return {
        "gpu": gpu,
        "model": model,
        "context": min(OPENING["context"], catalog.model(model).max_context),
        "kv_precision": None,
        "weight_precision": None,
        "gpus": OPENING["gpus"] if seed else None,
        "engine": engine,
        "memory_utilization": None,
        "price_per_gpu_hour": None,
        "batch": 1,
        "compare_model": compare,
        **BUDGET_DEFAULTS,
    }


#: The price cell's refusal in Excel, worded as every surface words the bound (``planner.units.RENT_ACCEPTED``).
RENT_SENTENCE = f"{RENT_ACCEPTED[:1].upper()}{RENT_ACCEPTED[1:]}."

#: The data validation of each kind of numeric input: (Excel's kind, minimum, maximum, prompt, error).
NUMBER_CHECKS = {
    "count": ("whole", 1, 2**24, "A whole number of {unit}.", "A whole number of {unit} from 1."),
    "fraction": ("decimal", 0.01, 1, "A fraction above 0, at most 1.", "Above 0 and at most 1."),
    "share": ("decimal", 0, 0.999999, "A share of 0 or more, below 1.", "0 or more and below 1."),
    "shape": (
        "decimal",
        0.000001,
        MAX_BURSTINESS,
        "A gamma shape above 0: 1 Poisson, below 1 burstier.",
        f"Above 0 and at most {MAX_BURSTINESS} (1 Poisson, below 1 burstier).",
    ),  # fmt: skip
    # a rent is above 0 (planner.units.RENT_ACCEPTED); Excel's "between" is inclusive, so its floor is the rate's 1e-6
    "money": ("decimal", 0.000001, int(MAX_RENT_USD_PER_GPU_HOUR), "US$ per GPU-hour, above 0.", RENT_SENTENCE),
    "rate": ("decimal", 0.000001, 10**6, "Requests per second, above 0.", "Above 0 and at most 1,000,000 {unit}."),
    "ms": ("decimal", 0.001, 3_600_000, "Milliseconds, above 0.", "Above 0 and at most 3,600,000 {unit}."),
}


#: The number format of each kind of numeric input cell.
INPUT_FORMATS = {
    "count": INT, "percentile": "0", "fraction": "0.00", "share": "0.00", "shape": "0.00", "money": '"$"#,##0.00', "rate": "#,##0.###", "ms": "#,##0.###"
}  # fmt: skip


#: Lines of the wrapped formula answers on Inputs (a formula's text is not measured when written): "no: TPOT not known
#: (blank target or error), TTFT not known (blank target or error)" in the 24-wide value column; a warning (a context
#: beyond a long model name's trained maximum, about 120 characters; a batch above the engine's limit, about 190) and
#: the Error line ("3 GPUs is not a tensor-parallel group ...", about 190; a price typed per instance, about 180) in
#: the 96-wide column D.
MEETS_LINES, WARNING_LINES, ERROR_LINES = 4, 2, 3
#: Column D beside the "at a glance" results (rows within the block, 1: its first result): two notes, what bounds the
#: served batch (``served_note``) beside it, then ``warnings`` from the row below, beside results whose units are short
#: (a formula showing "" still stops a unit overflowing into column D, so a long one would be cut).
SERVED_NOTE_ROW = [g[1] for g in GLANCE].index("served_batch") + 1
FIRST_WARNING_ROW = SERVED_NOTE_ROW + 1


def lines(n: int) -> float:
    """The height of a row of ``n`` lines of text, points (``writer._row_heights``' measure)."""
    return 13.5 * n + 2


#: The "at a glance" rows that read the headline's column of Calc (``headline``): with the GPU count blank, the
#: cheaper of the smallest group that fits and the next (Calc's headline row, ``calc.headline_pick``).
HEADLINE = ("m_cost", "fleet_gpus", "fleet_usd_month", "meets_text")


def headline(c: Calc, key: str) -> str:
    """A reference to Calc's ``key`` in the column the Inputs' headline reads: INDEX over the Baseline's and More
    GPUs' cells by Calc's headline row (1 or 2)."""
    first, more = scenario_col("base"), scenario_col("more_gpus")
    assert ord(more) == ord(first) + 1, (first, more)  # INDEX over the two adjacent columns
    row = c.row_of[key]
    return f"INDEX({CALC_SHEET}!${first}${row}:${more}${row},{c.ref('headline', first, True, True)})"


def headline_group(c: Calc) -> str:
    """A formula's body: where the headline is More GPUs' (Calc's headline row 2), the group its per-token cost is
    on, beside the smallest group's ("on 4 GPUs a replica, the peak fleet's group (2 GPUs: $12.05): "); else ""."""
    base, more = scenario_col("base"), scenario_col("more_gpus")
    pick, n_more = c.ref("headline", base, True, True), c.ref("n", more, True, True)
    n, cost = c.ref("n", base, True, True), c.ref("m_cost", base, True, True)
    return (
        f'IF({pick}=2,"on "&{n_more}&" GPUs a replica, the peak fleet\'s group ("&{n}&IF({n}=1," GPU: $"," GPUs: $")&'
        f'IFERROR(TEXT({cost},"#,##0.00"),"-")&"): ","")'
    )


#: The "at a glance" rows whose figures rest on the Load sheet's simulation (through the rate factor): their unit
#: cell reads ``STALE_UNIT`` once the Inputs differ from those the Load sheet was computed from, as the Levers'
#: "Sized by" row does (a trial read a 106-GPU fleet there that the refreshed workbook put at 979).
LOAD_FED = ("fleet_gpus", "fleet_usd_month")
STALE_UNIT = "STALE: refresh"
#: How a fleet figure resting on a stale simulation reads (``stale_estimate``): text, so that it is neither summed nor
#: copied into a budget as a current number (trial 19 F2: "$514,372.60" beside STALE was 21% under the refreshed
#: figure).
ESTIMATE_SUFFIX = " est."
#: How it reads where Inputs other than the peak traffic changed (Calc's stale_unknown row): no number, as "Meets the
#: latency targets" reads "not known" (trial 24 F5: "~148 est." on another scenario's queue term, 34 refreshed).
STALE_FLEET = "not known: refresh"


def stale_estimate(figure: str, stale: str, unknown: str, money: bool) -> str:
    """A fleet cell's formula: the figure (a reference) while its fleet is current; while Calc's ``stale`` cell is 1,
    ``STALE_FLEET`` where its ``unknown`` cell (Calc's stale_unknown: Inputs other than the peak changed) is 1, else
    the figure as words, "~48 est." or "~$514,373 est." (text, whole numbers: the old queue term at the new peak), so
    that only a refreshed workbook shows a number in the cell; an error shows as itself, and words (Calc's
    ``FLOOR_SHORT``: no fleet, kept nearly idle) as themselves."""
    words = f'"~{"$" if money else ""}"&TEXT({figure},"#,##0")&"{ESTIMATE_SUFFIX}"'
    words = f"IF(ISTEXT({figure}),{figure},{words})"
    return f'=IF(ISERROR({figure}),{figure},IF({stale}=1,IF({unknown}=1,"{STALE_FLEET}",{words}),{figure}))'


def inputs_sheet(defaults: dict, c: Calc, load: bool = True) -> tuple[Sheet, list[Name]]:
    """The Inputs sheet."""
    # half-inch top and bottom margins: the inputs, the "at a glance" block with its warnings and the Error line below
    # it print on one page (with 1-in margins a refused input's Error line went to a second page)
    s = Sheet(INPUTS_SHEET, freeze="A4", tab_color="FFC000", top_bottom_margin_in=0.5, one_page_tall=True)
    # A: "TTFT target (time to first token) (optional)"; D: its notes in fewer lines, so the page, fit to one, prints
    # larger: 6.4 pt in LibreOffice with D 92 to 100 wide, 6.2 at 80 and 6.3 at 88 (the page's height bound it there)
    s.widths.update(A=42, B=24, C=14, D=96)
    s.set("A1", "LLM inference what-if: inputs", style="title")
    s.note(
        "A2",
        "Change the yellow cells; every other sheet recalculates, but the peak fleet and its cost come from planner's "
        "simulation (Load sheet): after an edit they read 'not known' ('~N est.' where only the peak changed) until "
        "planner workbook refresh (Python) runs on this file. Blank optional cells take the default in column D. For a meeting, print Inputs, Results and "
        "Levers (4 pages; the whole workbook prints about 80).",
    )
    for col, h in zip("ABCD", ("Input", "Value", "Unit", "What it means / default"), strict=True):
        s.set(f"{col}3", h, style="header")
    names = []
    sources = {
        "gpu": "gpu_names",
        "model": "model_names",
        "kv_precision": "kv_precision_names",
        "weight_precision": "prec_names",
        "compare_model": "model_names",
    }
    for f in (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS):
        r = input_row(f.key)
        s.set(f"A{r}", f.label + ("" if f.required else " (optional)"), style="label")
        fmt = INPUT_FORMATS.get(f.kind)
        s.set(f"B{r}", defaults.get(f.key), fmt=fmt, style="input", text=f.kind == "text")
        s.set(f"C{r}", f.unit, style="unit")
        # the targets' notes name the Inputs' latency percentile (a formula: "The slowest p99 TPOT users accept")
        s.set(f"D{r}", target_help_formula(f.key) if f.key in TARGET_HELPS else f.help, style="note")
        names.append(Name(f.name, f"{INPUTS_SHEET}!$B${r}"))
        if f.key == "engine":  # only the engines the Assumptions sheet has a column for
            s.validations.append(
                Validation(
                    f"B{r}",
                    "list",
                    source=ENGINE_NAMES,
                    prompt="Pick an engine from the list (the Assumptions sheet's engine columns).",
                    error="Not an engine the workbook holds a profile for: pick one from the list.",
                )
            )
        elif f.key in sources:
            s.validations.append(_name_validation(f"B{r}", sources[f.key], f.unit, f.key))
        elif f.kind == "percentile":  # the ones the simulation reports (planner plan's --percentile)
            s.validations.append(
                Validation(
                    f"B{r}",
                    "list",
                    source=f'"{",".join(f"{q:g}" for q in PERCENTILES)}"',
                    prompt=f"A percentile: {', '.join(f'{q:g}' for q in PERCENTILES)}. Blank: see column D.",
                    error=f"Not a percentile the simulation reports: {', '.join(f'{q:g}' for q in PERCENTILES)}.",
                )
            )
        elif f.kind in NUMBER_CHECKS:
            kind, low, high, prompt, error = NUMBER_CHECKS[f.kind]
            s.validations.append(
                Validation(
                    f"B{r}",
                    kind,
                    minimum=low,
                    maximum=high,
                    prompt=prompt.format(unit=f.unit),
                    error=error.format(unit=f.unit),
                )
            )
    r = glance_row()
    s.set(f"A{r}", "At a glance (baseline)", style="subtitle")
    for i, (label, key, fmt, unit) in enumerate(GLANCE, 1):
        scale = "*1000" if key in ("d_step", "m_step") else ""
        s.set(f"A{r + i}", label, style="label")
        text = key == "meets_text"  # right-aligned text past its column was cut by the label to its left
        formula = f"={headline(c, key) if key in HEADLINE else c.ref(key, 'C', absolute=True, sheet=True)}{scale}"
        if key in REVIEW_KEYS:  # the review's fleet: planner's figure while the Load sheet is current, else none
            formula, unit = review_cell(c, key, unit, load)
        elif load and key in LOAD_FED:  # stale (Calc): an estimate in words, its unit cell says so
            stale = headline(c, "stale")
            formula = stale_estimate(formula[1:], stale, headline(c, "stale_unknown"), key == "fleet_usd_month")
            for name, asked in (("in_output_tokens", "out_tok"), ("in_peak_requests", "rps")):  # not #N/A: F11
                formula = f'=IF({name}="","{NO_FLEET_ASKED[asked].split(" (")[0]}",{formula[1:]})'

            unit = f'=IF({stale}=1,"{STALE_UNIT}","{unit}")'
        s.set(f"B{r + i}", formula, fmt=fmt, style="result_text" if text else "result")
        s.set(f"C{r + i}", meets_unit_formula() if key == "meets_text" else unit, style="unit")
        if text:
            s.heights[r + i] = lines(MEETS_LINES)
    s.set(f"D{r + 1}", "Full results: Results sheet. The levers side by side: Levers sheet.", style="note")
    s.set(
        f"D{r + 2}",
        "#N/A: a name not in the catalog (or no price). #VALUE!: text where a number belongs. #NUM!: a number out of "
        "range, or does not fit.",
        style="note",
    )
    s.set(f"D{r + SERVED_NOTE_ROW}", served_note(c), style="note")
    for i, (warning, height) in enumerate(warnings(c), FIRST_WARNING_ROW):
        s.set(f"D{r + i}", warning, style="warn_text")
        s.heights[r + i] = lines(height)
    cost = (  # the group where the headline is More GPUs', the unit, then the price (short unit in C)
        f'={headline_group(c)}&"US$ per million output tokens, decode only, "&{price_at(c)}'
    )
    # trial 19 F4; the monthly cost's formula in words is one line ("rented: = 96 GPUs x $3.595 per GPU-hour x 730 h
    # a month"), the cost per token's note the price's source, after the headline's group where it is More GPUs'
    for key, words, height in (("m_cost", cost, PRICE_NOTE_LINES + 1), ("fleet_usd_month", monthly_words(c), 1)):
        row = r + [g[1] for g in GLANCE].index(key) + 1
        assert row >= r + FIRST_WARNING_ROW + len(warnings(c)), key  # column D of a warning's row is taken
        s.set(f"D{row}", words, style="note")
        s.heights[row] = max(s.heights.get(row, 0), lines(height))
    for key, note in review_notes(c, load).items():
        s.set(f"D{r + [g[1] for g in GLANCE].index(key) + 1}", note, style="note")
    fleet_row = r + [g[1] for g in GLANCE].index("fleet_gpus") + 1
    s.set(f"D{fleet_row}", fleet_group_note(c), style="note")
    s.heights[fleet_row] = lines(FLEET_NOTE_LINES)
    s.set(f"D{why_error_row()}", why_error(c), style="warn_text")
    s.heights[why_error_row()] = lines(ERROR_LINES)
    return s, names


#: How the budget rows read where the workbook has no Load sheet (``build_whatif(load=False)``): nothing computed.
REVIEW_NOT_COMPUTED = "not computed: run planner workbook refresh"


def load_current() -> str:
    """A formula's body: TRUE while the Load sheet's Status reads "current" (its Inputs and engine are the ones it,
    and so the budget fleet, was computed from)."""
    return f'LEFT({LOAD_SHEET}!$B${LOAD_STATUS_ROW},7)="current"'


def review_cell(c: Calc, key: str, unit: str, load: bool) -> tuple[str, str]:
    """The formula and unit cell of a budget row (``REVIEW_KEYS``): Calc's review figure (the GPUs planner computed,
    or the cost formula over them; the words why, where the review sizes none) while the Load sheet is current;
    ``STALE_FLEET`` once it is not, with ``STALE_UNIT`` beside it, as the peak fleet reads after an edit, but never
    an estimate: the margin and spare are the review's, not a rescaling of the old figure; the peak fleet's words
    where no fleet is asked for (a blank peak or output tokens). Without a Load sheet: ``REVIEW_NOT_COMPUTED``."""
    figure = c.ref(key, "C", absolute=True, sheet=True)
    if not load:
        return f'=IF({figure}="","{REVIEW_NOT_COMPUTED}",{figure})', unit
    body = f'IF(NOT({load_current()}),"{STALE_FLEET}",IF({figure}="","{STALE_FLEET}",{figure}))'
    for name, asked in (("in_output_tokens", "out_tok"), ("in_peak_requests", "rps")):
        body = f'IF({name}="","{NO_FLEET_ASKED[asked].split(" (")[0]}",{body})'
    stale = f'AND(NOT({load_current()}),in_peak_requests<>"",in_output_tokens<>"")'
    return f"={body}", f'=IF({stale},"{STALE_UNIT}","{unit}")'


def review_notes(c: Calc, load: bool) -> dict[str, str]:
    """Column D beside the budget rows, one line each (the Inputs page, fit to one, is as tall as its rows: 5.8 pt with
    two lines each): what the fleet is, as planner computed it ("planner export's sizing: 31 replicas of 4 GPUs incl.
    1 spare, +25% latency margin"), and the cost's formula in numbers ("rented: = 124 GPUs x $3.595 per GPU-hour x
    730 h a month", ``monthly_words``' form)."""
    from planner.export.sizing import HOURS_PER_MONTH

    gpus, words = c.ref("review_gpus", "C", True, True), c.ref("review_words", "C", True, True)
    what = '"planner export\'s sizing: "'
    fleet = f'=IF({words}="",{what}&"{REVIEW_NOT_COMPUTED}",{what}&{words})'
    if load:
        fleet = (
            f'=IF(NOT({load_current()}),{what}&"not known for these Inputs until planner workbook refresh",{fleet[1:]})'
        )
    cost = (
        f'=IF(OR(NOT(ISNUMBER({gpus})),ISERROR({c.ref("price", "C", True, True)})),"budget GPUs x price per GPU-hour x '
        f'{HOURS_PER_MONTH:g} h a month","rented: = "&TEXT({gpus},"#,##0")&" GPUs x "&{price_text(c)}&" per GPU-hour x '
        f'{HOURS_PER_MONTH:g} h a month")'
    )
    if load:
        cost = (
            f'=IF(NOT({load_current()}),"budget GPUs x price per GPU-hour x {HOURS_PER_MONTH:g} h a month",{cost[1:]})'
        )
    return {"review_gpus": fleet, "review_usd_month": cost}


#: Lines of the price note beside the cost (``price_at``: a median's four quotes run to about 200 characters), and one
#: more beside the cost per token for the headline's group (``headline_group``, about 60).
PRICE_NOTE_LINES = 3


def price_text(c: Calc) -> str:
    """The price per GPU-hour used, as a formula giving text with its cents and further digits ("$3.595", as
    ``planner.units.fmt_usd_per_gpu_hour`` writes it: "$3.60" did not reproduce the monthly cost, trial 19 F4)."""
    return f'"$"&TEXT({c.ref("price", "C", True, True)},"#,##0.00##")'


def price_at(c: Calc) -> str:
    """The price the costs are computed at and where it comes from, a formula's body (no "="): "at $3.595 per
    GPU-hour (on-demand, catalog: median of 4 quotes: Lambda 3.99 (2026-09-20), ...)" or "(typed on Inputs)"; ""
    where the price is an error. Beside the Inputs' cost and in the Results' cost rows (trial 19 F4)."""
    price, gpu_row = c.ref("price", "C", True, True), c.ref("gpu_row", "C", True, True)
    origin = f'IF(in_price="","on-demand, catalog: "&INDEX(gpu_price_provider,{gpu_row}),"typed on Inputs")'
    return f'IF(ISERROR({price}),"","at "&{price_text(c)}&" per GPU-hour ("&{origin}&")")'


def monthly_words(c: Calc) -> str:
    """Beside the fleet's monthly cost, its formula with the numbers: "rented: = 96 GPUs x $3.595 per GPU-hour x 730 h
    a month" (``planner.export.sizing.HOURS_PER_MONTH``), so the printed page reproduces the figure ("~ 196 GPUs ..."
    while the fleet is a stale estimate: only the peak traffic changed); where Inputs other than the peak changed (the
    cost reads ``STALE_FLEET``) or where the fleet is kept nearly idle (no fleet: Calc's floor row), the formula in
    words without a count (trial 29 F13: "~ 152 GPUs" beside "not known")."""
    from planner.export.sizing import HOURS_PER_MONTH

    gpus, price = headline(c, "fleet_gpus"), c.ref("price", "C", True, True)
    stale, unknown = headline(c, "stale"), headline(c, "stale_unknown")
    words = f'"fleet GPUs x price per GPU-hour x {HOURS_PER_MONTH:g} h a month"'
    return (
        # no count where not known, nor where there is no fleet (Calc's floor: "does not meet", trial 29 F2)
        f"=IF(OR(ISERROR({gpus}),ISTEXT({gpus}),ISERROR({price}),AND({stale}=1,{unknown}=1)),{words},"
        f'"rented: "&IF({stale}=1,"~ ","= ")&TEXT({gpus},"#,##0")&" GPUs x "&{price_text(c)}&" per GPU-hour x '
        f'{HOURS_PER_MONTH:g} h a month")'
    )


#: Lines of the fleet's group note (``fleet_group_note``, about 370 characters) in the 96-wide column D.
FLEET_NOTE_LINES = 5
#: Beside the fleet: that it carries no latency margin, which ``planner export`` of the file sizes with (trial 6 F3:
#: 1,528 GPUs here, 2,516 in the review of the same file, whose +25% margin the workbook never named). The margin is
#: not a cell formula: export takes it from the held-out runs of the GPU, engine and model class
#: (``planner.accuracy.serving_margin.sizing_range``: +25% for Llama 3.1 70B on 4 x H100 + vLLM, where the Ranges
#: sheet's single-prediction high reads +43%), so the note names where it is stated, not a figure (trial 7 F7).
MARGIN_NOTE = (
    '". No latency margin: planner export of this file sizes against the targets less the margin its review states '
    '(from held-out runs on this GPU and engine) and adds spare replicas: not a budget; the budget fleet is below"'
)


def fleet_group_note(c: Calc) -> str:
    """Beside the peak fleet, what it counts: replicas x the group's GPUs; with the GPU count blank, which group: the
    next one where it needs fewer GPUs (Calc's headline row: "replicas x 4 GPUs, the cheaper group (GPU count blank):
    4 GPUs a replica need 40 GPUs, fewer than 2 GPUs a replica's 404 (the smallest that fits; Levers)", trial 23 F1)
    or where the smallest misses the targets ("the next group ..."), else the smallest that fits, which ``planner plan --rate`` does not stop at (it searches 1, 2, 4 and 8 GPUs a
    replica: a trial's 979 GPUs on 1 GPU a replica were 176 on 4 there); then the latency margin it leaves out
    (``MARGIN_NOTE``)."""
    base, more = scenario_col("base"), scenario_col("more_gpus")
    n, pick = headline(c, "n"), c.ref("headline", base, True, True)
    n_base, n_more = c.ref("n", base, True, True), c.ref("n", more, True, True)
    gpus_base, gpus_more = c.ref("fleet_gpus", base, True, True), c.ref("fleet_gpus", more, True, True)
    est = f'IF({headline(c, "stale")}=1,"~","")'  # a stale simulation's figures are estimates (``stale_estimate``)
    unknown = c.ref("stale_unknown", base, True, True)  # no estimate: the group is not compared (``stale_estimate``)
    not_known = '", the group not compared until planner workbook refresh (GPU count blank)"'
    cheaper = (
        f'", the cheaper group (GPU count blank): "&{n_more}&" GPUs a replica need "&{est}&TEXT({gpus_more},"#,##0")&'
        f'" GPUs, fewer than "&{n_base}&IF({n_base}=1," GPU"," GPUs")&" a replica\'s "&{est}&'
        f'TEXT({gpus_base},"#,##0")&" (the smallest that fits; Levers)"'
    )
    misses = (  # the smallest group misses the targets, the next meets them
        f'", the next group (GPU count blank): "&{n_base}&IF({n_base}=1," GPU"," GPUs")&" a replica, the smallest '
        'that fits, does not meet the targets (Levers)"'
    )
    cheaper = f"IF(AND(ISNUMBER({gpus_base}),{gpus_more}<{gpus_base}),{cheaper},{misses})"
    smallest = (
        '", the smallest group that fits (GPU count blank): planner plan --rate searches 1, 2, 4 and 8 GPUs a replica '
        'and may need fewer GPUs; type a GPU count to size another group"'
    )
    return (
        f'=IF(ISERROR({n}),"replicas x GPUs in the group","replicas x "&{n}&IF({n}=1," GPU"," GPUs")&IF(in_gpus="",'
        f'IF({unknown}=1,{not_known},IF({pick}=2,{cheaper},{smallest})),""))&{MARGIN_NOTE}'
    )


#: The name Inputs, each with the sheet whose alias table the Calc sheet reads it through (``calc.name_of``) and an
#: example alias: a typed alias is read as its entry's name, as ``planner plan`` and the Excel functions read it.
ALIAS_INPUTS = {
    "gpu": ("GPUs", "H200: H200 SXM 141GB"),
    "model": ("Models", "llama2-70b: Llama-2-70B"),
    "compare_model": ("Models", "llama2-70b: Llama-2-70B"),
    "weight_precision": ("Precisions", "fp4: nvfp4"),
    "kv_precision": ("Precisions", "fp4: nvfp4"),
}


def _name_validation(cell: str, source: str, unit: str, key: str) -> Validation:
    """The dropdown of a name input: a warning the user may accept, not a refusal, for a name off the list, since
    an alias the catalog takes (``ALIAS_INPUTS``: H200, llama2-70b, fp4) is read as its entry there (a list
    validation of "stop" style refused "H200", which the CLI takes); any other name shows #N/A and the Error line
    says which input."""
    sheet, example = ALIAS_INPUTS[key]
    return Validation(
        cell,
        "list",
        source=source,
        prompt=f"Pick a name from the list ({unit}), or type an alias the {sheet} sheet lists ({example}).",
        error=f"Not a name on the list: an alias the {sheet} sheet lists ({example}) is read as its entry; any "
        "other name shows #N/A.",
        error_style="warning",
    )


def why_error(c: Calc) -> str:
    """A formula naming the first input the baseline refuses and what is accepted ("" when every result computes), in
    the order the model checks them: the legend beside the results gives only what each error value means, so an
    input that passes the cell's own check (a GPU count of 3, a context too long to fit) left every result #NUM!
    with nothing saying which input or why. The wording follows the CLI's refusals (``planner.errors``). Last, a budget
    input ``planner export`` refuses (Calc's budget_refused row, in the reader's words: a peak of -3, a target typed
    in seconds). A precision is looked up by its name or an alias (Calc's ``PRECISION_OF``: fp4 is nvfp4, as for
    ``planner plan``), so one the line names is neither (trial 11 F7: the line said "fp4 is not in the catalog")."""

    def ref(key: str) -> str:
        return c.ref(key, "C", True, True)

    def not_listed_precision(what: str, key: str) -> str:
        return (
            f'"{what} \'"&{ref(key)}&"\' is neither a name nor an alias on the Precisions sheet: pick one from the '
            'list"'
        )

    checks = (
        (
            ENGINE_INDEX,
            '"engine \'"&in_engine&"\' is not one the Assumptions sheet holds a column for: pick one from the list"',
        ),
        ("gpu_row", _not_listed("GPU", "in_gpu", "GPUs")),
        ("model_row", _not_listed("model", "in_model", "Models")),
        ("w_row", not_listed_precision("weight precision", "wp")),
        ("kv_row", not_listed_precision("KV-cache precision", "kv")),
        (
            "kvbpe",
            '"KV-cache precision "&'
            + ref("kv")
            + '&" is not a format the engine caches (Assumptions: kv_precisions): pick one from the list, or leave it '
            'blank"',
        ),
        ("context", '"context: give a whole number of tokens from 1 to 16,777,216"'),
        ("util", '"memory utilization: give a fraction above 0 and at most 1 (0.9 = 90%), or leave it blank"'),
        (
            "n_raw",
            'IF(in_gpus="","no group of 1 to 64 GPUs holds the weights and one sequence: a smaller precision or a '
            'shorter context",in_gpus&" GPUs is not a tensor-parallel group the engine runs for this model (its '
            'attention and KV heads must split evenly): try 1, 2, 4 or 8, or leave it blank for the smallest that fits")',
        ),
        (
            "n",
            '"the weights and one sequence of the context do not fit on "&'
            + ref("n_raw")
            + "&IF("
            + ref("n_raw")
            + '=1," GPU"," GPUs")&": more GPUs, a shorter context or a smaller precision (blank GPU count: the '
            'smallest group that fits)"',
        ),
        (
            "price",
            f'IF(in_price="","{NO_CATALOG_PRICE}","price per GPU-hour: give a price {RENT_ACCEPTED}")',
        ),
        (
            "d_batch",
            f'"{BATCH_REFUSED}"&'
            + ref("batch")
            + '&" is more than the max batch that fits ("&'
            + ref("max_batch")
            + '&")"',
        ),
    )
    mxfp4 = ref("mxfp4_refused")
    refused = (  # after the names and precisions (it reads them); the GPU count is then OUT_OF_RANGE for this reason
        f"IF(ISNUMBER({mxfp4}),{mxfp4},0)>0",
        '"the engine cannot load this model\'s MXFP4 experts on this GPU (Assumptions: engine)"',
    )
    formats = ref("weights_refused")
    weights = (  # the same place: the GPU does not run the weight format (deploy.weight_precision_error)
        f"IF(ISNUMBER({formats}),{formats},0)>0",
        ref("gpu")
        + '&" does not run weights in "&'
        + ref("wp")
        + '&": it runs "&SUBSTITUTE(MID(INDEX(gpu_weight_formats,'
        + ref("gpu_row")
        + "),2,LEN(INDEX(gpu_weight_formats,"
        + ref("gpu_row")
        + '))-2),",",", ")&" (GPUs sheet: weight formats)"',
    )
    kv_formats = ref("kv_refused")
    kv_dtype = (  # the same place: the GPU does not have the KV cache's dtype (deploy.kv_precision_error)
        f"IF(ISNUMBER({kv_formats}),{kv_formats},0)>0",
        "IF("
        + ref("kv")
        + '="fp8",'
        + ref("gpu")
        + '&" keeps no fp8 KV cache: vLLM 0.24\'s attention backends need SM 8.0 for one; pick fp16",'
        + ref("gpu")
        + '&" has no "&'
        + ref("kv")
        + '&" to cache the KV in: it runs "&SUBSTITUTE(MID(INDEX(gpu_weight_formats,'
        + ref("gpu_row")
        + "),2,LEN(INDEX(gpu_weight_formats,"
        + ref("gpu_row")
        + '))-2),",",", ")&" (GPUs sheet: weight formats); pick fp16")',
    )
    numbers = {"context": "context", "util": "memory_utilization", "n_raw": "gpus", "price": "price_per_gpu_hour"}
    numbers["d_batch"] = "batch"
    checks = tuple((key, _text_first(numbers[key], reason) if key in numbers else reason) for key, reason in checks)
    vendor = (  # the same place, first: the engine does not run on the GPU's vendor (deploy.vendor_error)
        f"IF(ISNUMBER({ref('engine_refused')}),{ref('engine_refused')},0)>0",
        '"engine "&eng_name&" runs on NVIDIA GPUs only; "&'
        + ref("gpu")
        + '&" is "&INDEX(gpu_vendor,'
        + ref("gpu_row")
        + ')&"\'s: choose vllm or sglang there (Inputs: Engine)"',
    )
    conditions = [(f"ISERROR({key if key == ENGINE_INDEX else ref(key)})", reason) for key, reason in checks]
    conditions.insert(7, vendor)
    conditions.insert(8, refused)
    conditions.insert(9, weights)
    conditions.insert(10, kv_dtype)
    budget = ref("budget_refused")  # last: the budget question, after everything the baseline's results need
    conditions.append((f'{budget}<>""', budget))
    formula = price_warning(c)  # nothing refused: a price typed per instance, not per GPU, is warned of (trial 23 F5)
    for condition, reason in reversed(conditions):
        formula = f'IF({condition},"Error: "&{reason},{formula})'
    return "=" + formula


def price_warning(c: Calc) -> str:
    """A formula's body: on the Error line where no input is refused, a warning where the price typed per GPU-hour is
    ``planner.units.RENT_IMPLAUSIBLE_FACTOR`` (4) times the GPU's highest catalog rental quote or more (the GPUs
    sheet's gpu_top_quote: an 8-GPU instance's price typed per GPU), in ``planner export``'s words for a scenario
    with that price (``planner.export.evaluate._implausible_rate``; trial 23 F5: "Warning: $31.92 per GPU-hour is 5.2x
    the highest catalog quote for H100 SXM 80GB ($6.155; on-demand median $3.595, 8-GPU instances; GPUs sheet): per
    GPU, not per 8-GPU instance?"); "" otherwise (a blank price is the catalog's). A warning, as export's: the price
    stands and every figure uses it."""
    from planner.units import RENT_IMPLAUSIBLE_FACTOR

    row, gpu = c.ref("gpu_row", "C", True, True), c.ref("gpu", "C", True, True)
    top, median, inst = (f"INDEX({name},{row})" for name in ("gpu_top_quote", "gpu_price", "gpu_quote_instance"))

    def usd(x: str) -> str:
        return f'"$"&TEXT({x},"#,##0.00##")'

    return (
        f"IFERROR(IF(AND(ISNUMBER(in_price),ISNUMBER({top}),ISNUMBER({inst})),IF(in_price>="
        f'{RENT_IMPLAUSIBLE_FACTOR:g}*{top},"{WARNING_PREFIX}"&{usd("in_price")}&" per GPU-hour is "&'
        f'TEXT(in_price/{top},"0.0")&"x the highest catalog quote for "&{gpu}&" ("&{usd(top)}&IF(ISNUMBER({median}),'
        f'"; on-demand median "&{usd(median)},"")&", "&{inst}&"-GPU instances; GPUs sheet): per GPU, not per "&{inst}&'
        '"-GPU instance?",""),""),"")'
    )


def _not_listed(what: str, name: str, sheet: str) -> str:
    """Why a GPU or model name gives #N/A: neither a name nor an alias the sheet lists (its alias table: "H200" is
    read as "H200 SXM 141GB", as `planner plan` reads it). Said so, not "not in the catalog" (trial 6 F10): a name the
    catalog takes in another spelling ("H200_SXM") is not one the formulas' MATCH finds (``update.check_names`` says
    so for refresh and export, with the full name)."""
    return (
        f'"{what} \'"&{name}&"\' is neither a name nor an alias on the {sheet} sheet, which the formulas look up: '
        'pick one from the list"'
    )


def _text_first(key: str, reason: str) -> str:
    """``reason``, or first, where the input's cell holds text (the result's #VALUE!), the reader's words for text in
    a number's cell: "Inputs!B9 (GPU count (tensor parallel)) must be a number (GPUs); got 'four'" (the line blamed
    the tensor-parallel group for "four": trial 6 F5)."""
    f = next(x for x in INPUT_FIELDS if x.key == key)
    where = f"{INPUTS_SHEET}!B{input_row(key)} ({f.label})"
    return f'IF(ISTEXT({f.name}),"{where} must be a number ({f.unit}); got \'"&{f.name}&"\'",{reason})'


def served_note(c: Calc) -> str:
    """What bounds the baseline's served batch, as ``planner plan`` says it after its max batch: the engine's limit
    where memory holds more ("vllm's max_num_seqs; memory holds 1,732"), else memory, with the engine's limit
    beside it (``planner.deploy.served_batch``); "" where the batch is an error."""
    served, held = c.ref("served_batch", "C", True, True), c.ref("max_batch", "C", True, True)
    seqs = c.ref("seqs", "C", True, True)
    return (
        f'=IF(ISERROR({served}),"",IF({served}<{held},eng_name&"\'s max_num_seqs; memory holds "&TEXT({held},"#,##0"),'
        f'"what memory holds ("&eng_name&"\'s max_num_seqs: "&TEXT({seqs},"#,##0")&")"))'
    )


def warnings(c: Calc) -> tuple[tuple[str, int], ...]:
    """The baseline's warnings as formulas, each with the lines its row is tall, worded and ordered as
    ``planner.report.plan``'s: a batch that fits but is more than the engine runs at once (its max_num_seqs on the
    GPU: a what-if, not refused), a context beyond the model's trained maximum, and a tensor-parallel group larger
    than the GPU's scale-up domain (the GPUs sheet's ``gpu_scale_up``, ``planner.deploy.scale_up_gpus``: one 8-GPU
    node, or an NVL72 rack's 72; worded as ``planner.deploy.spans_nodes_warning``) ("" where one does not apply)."""
    ctx, n = c.ref("context", "C", True, True), c.ref("n", "C", True, True)
    model, row = c.ref("model", "C", True, True), c.ref("model_row", "C", True, True)
    batch, seqs, gpu = c.ref("d_batch", "C", True, True), c.ref("seqs", "C", True, True), c.ref("gpu", "C", True, True)
    trained = f"INDEX(model_max_context,{row})"
    gpu_row = c.ref("gpu_row", "C", True, True)
    scale_up = f"INDEX(gpu_scale_up,{gpu_row})"
    return (
        (
            f'=IF(ISERROR({batch}),"",IF({batch}>{seqs},"Warning: batch "&TEXT({batch},"#,##0")&" is more than "&'
            f'eng_name&" runs at once on "&{n}&" x "&{gpu}&": "&TEXT({seqs},"#,##0")&" sequences ("&eng_name&'
            '"\'s max_num_seqs); the figures at it hold only where the deployment raises that limit",""))',
            ERROR_LINES,
        ),
        (
            f'=IF(ISERROR({ctx}),"",IF({ctx}>{trained},"Warning: context "&TEXT({ctx},"#,##0")&" exceeds "&{model}&'
            f'"\'s trained maximum of "&TEXT({trained},"#,##0")&" tokens; memory and time are extrapolated",""))',
            WARNING_LINES,
        ),
        (
            f'=IF(OR(ISERROR({n}),ISERROR({gpu_row})),"",IF({n}>{scale_up},"Warning: "&TEXT({n},"#,##0")&" GPUs is '
            f'more than "&IF({scale_up}=8,"one 8-GPU node",{gpu}&"\'s "&TEXT({scale_up},"#,##0")&"-GPU NVLink '
            'domain")&": tensor parallelism across nodes is slower than modelled",""))',
            WARNING_LINES,
        ),
    )
