"""The review's money over time as plain tables: like-for-like grid, the margin's price, ownership, demand, phasing.

Same ``Table`` and column kinds as ``planner.export.tables``; every figure comes from ``review.outlook``
(``planner.export.outlook``); nothing here computes.
"""

from __future__ import annotations

import math

from planner.catalog.resolve import weights_phrase
from planner.engines.profiles import IDEAL
from planner.export.margin_releases import current_words, older_split, older_words, scope_words
from planner.export.not_sized import NOT_SIZED, margin_basis
from planner.export.outlook import GridRow, reserved_commitment, stale_text
from planner.export.ownership import (
    cost_of_capital_words,
    quote_text,
    reserved_phasing,
    reserved_terms,
)
from planner.export.reason import listed, usd
from planner.export.records import Review
from planner.export.tables import Column, Table
from planner.units import counted


def _columns(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    """Columns from (header, kind, key) triples."""
    return tuple(Column(*x) for x in spec)


def _years(months: int) -> str:
    """ "3 years", "1 year", "18 months"."""
    if months % 12:
        return f"{months} months"
    return "1 year" if months == 12 else f"{months // 12} years"


def year1_label(horizon_months: int) -> str:
    """The first year's cash as a header: "Year-1 cash", or "Cash, 7 months" where the horizon is shorter than a
    year (its cash covers the horizon's months only; trial 14 found a 7-month horizon's cash headed "Year-1 cash")."""
    return "Year-1 cash" if horizon_months >= 12 else f"Cash, {horizon_months} months"


def year1_phrase(horizon_months: int) -> str:
    """``year1_label`` in a sentence: "year-1 cash", "cash over the 7 months"."""
    return "year-1 cash" if horizon_months >= 12 else f"cash over the {horizon_months} months"


def horizon_words(review: Review) -> str:
    """ "3 years", and which key sets it where a reader may take another for it: a scenario that sets [workload]
    growth_months (the traffic's growth; horizon_months, its old name, until trial 33 F9) and not [finance]
    horizon_months (the cost's, 36 by default) read the review's "Over 3 years" as its own 12 months (a trial)."""
    w, fin = review.scenario.workload, review.scenario.finance
    words = _years(fin.horizon_months)
    if "horizon_months" in w.model_fields_set and "horizon_months" not in fin.model_fields_set:
        words += (
            f" ([finance] horizon_months, by default; [workload] growth_months = {w.horizon_months} is the months "
            "the traffic grows over)"
        )
    return words


def grid_table(review: Review) -> Table:
    """Every GPU x price kind x weight precision, sized like an option: ranked by monthly cost, then the rest."""
    h = review.scenario.finance.horizon_months
    cols = _columns(
        ("Rank", "int", "rank"),
        ("GPU", "text", "gpu"),
        ("Price kind", "text", "price_kind"),
        ("Weights", "text", "weights"),
        ("GPUs", "int", "gpus"),
        ("GPUs per replica", "int", "gpus_per_replica"),
        ("$ per GPU-month", "usd", "usd_per_gpu_month"),
        ("Monthly cost", "usd", "monthly_usd"),
        (year1_label(h), "usd", "year1_cash_usd"),
        (f"Total, {_years(h)}", "usd", "total_usd"),
        ("Price from", "text", "price_from"),
        ("Note", "text", "note"),
    )
    rows = []
    rank = 0
    for g in review.outlook.grid:
        r = g.result
        if r is not None and r.meets:
            rank += 1
            stale = stale_text(r, review.date)
            rows.append(
                (
                    rank,
                    r.gpu.name,
                    g.price_kind,
                    r.weights_label,
                    r.gpus,
                    int(r.replica.gpus),
                    float(r.fleet.usd_per_gpu_month),
                    g.monthly_usd,
                    g.ownership.year1_cash_usd,
                    g.ownership.total_usd,
                    g.note,
                    "; ".join(x for x in (stale, _grid_role(g, review), _reserved_note(g)) if x),
                )
            )
        else:
            rows.append((None, g.gpu, g.price_kind, g.weight_precision, None, None, None, None, None, None, "", g.note))
    return Table(cols, tuple(rows))


def _reserved_note(g: GridRow) -> str:
    """A reserved row's terms (``ownership.reserved_terms``) and what its cash assumes (``ownership.reserved_phasing``;
    with a term, its contracts: the basis taken, the cash due past the horizon)."""
    terms = reserved_terms(g.result)
    if not terms:
        return ""
    return f"reserved: {terms}; {_reserved_cash_words(g)}"


def _reserved_cash_words(g: GridRow) -> str:
    """``ownership.RESERVED_PHASING`` without a term; with one, the row's contracts (``outlook.reserved_commitment``)."""
    rc = g.ownership.reserved if g.ownership is not None else None
    return reserved_commitment(rc) if rc is not None else reserved_phasing(g.result.money)


def _grid_role(g: GridRow, review: Review) -> str:
    same = [
        r.option.name
        for r in review.results
        if r.gpu.name == g.result.gpu.name
        and r.model.name == g.result.model.name
        and r.money.price_kind == g.price_kind
        and r.weight_precision == g.weight_precision
        and r.kv_precision == g.result.kv_precision
        and abs(r.money.usd_per_gpu_month - g.result.money.usd_per_gpu_month) < 0.005  # the same price, too
    ]
    return f"= option {same[0]}" if same else ""


def grid_line(review: Review) -> str:
    """One sentence: the grid's cheapest row, and how it differs from the recommendation when it is another."""
    from planner.export.reason import differences

    meeting = [g for g in review.outlook.grid if g.result is not None and g.result.meets]
    if not meeting:
        return ""
    best, rec = meeting[0], review.recommended
    models = {r.model.name for r in review.results}
    serving = f" serving {rec.model.name}" if len(models) > 1 else ""  # the recommendation's model, on every GPU
    text = (
        f"Like for like ({len(review.outlook.grid)} combinations of GPU, price kind and weights{serving}): by monthly "
        f"cost at the planned peak the cheapest is {_row_words(best)}, {counted(best.result.gpus, 'GPU', ',.0f')} at "
        f"{usd(best.monthly_usd)} a month{_reserved_words(best)}"
    )
    diff = differences(best.result, rec)
    if not diff:
        text += ", the recommendation itself."
    else:
        text += (
            f"; against the recommendation it differs in: {'; '.join(diff)}".replace("runner-up", "recommended") + "."
        )
    return text + _lowest_total_words(review, meeting)


def _row_words(g: GridRow) -> str:
    """ "H100 SXM 80GB, purchase, fp8 weights": a grid row's configuration."""
    r = g.result
    return f"{r.gpu.name}, {g.price_kind}, {weights_phrase(r.weight_precision, r.expert_precision)}"


def _lowest_total_words(review: Review, meeting: list[GridRow]) -> str:
    """Where another row than the cheapest a month has the lowest total over the horizon (phased cash less the
    residual value), a sentence naming it, so that "cheapest" is not read as cheapest on that basis too (trial 14: a
    reserved row's 3-year total under the named cheapest's), and the cheapest's total it is set against (trial 25 F9: a
    bare "against $1,585,894" read as the recommendation's); "" otherwise."""
    best = meeting[0]
    low = min(meeting, key=lambda g: g.ownership.total_usd)
    if low is best or not low.ownership.total_usd < best.ownership.total_usd:
        return ""
    return (
        f" Over {_years(review.scenario.finance.horizon_months)} (cash phased by quarter, less residual value) the "
        f"lowest total is {_row_words(low)}: {usd(low.ownership.total_usd)} against {usd(best.ownership.total_usd)} "
        f"for {_row_words(best)}, the cheapest a month{_reserved_words(low)}."
    )


def _reserved_words(g: GridRow) -> str:
    """ " (reserved: a 'from' rate, term set per contract; cash phased as if billed monthly, ...)" after a reserved
    row named in a sentence; "" for another kind."""
    terms = reserved_terms(g.result)
    return f" (reserved: {terms}; {_reserved_cash_words(g)})" if terms else ""


def ownership_table(review: Review) -> Table:
    """Per meeting option: the margin's GPUs and price, year-1 cash, the horizon's total and present value, commitment."""
    fin = review.scenario.finance
    h = _years(fin.horizon_months)
    cols = _columns(
        ("Option", "text", "option"),
        ("Price kind", "text", "price_kind"),
        ("GPUs", "int", "gpus"),
        ("Latency margin", "pct", "margin"),
        ("GPUs without margin", "int", "gpus_without_margin"),
        ("Monthly without margin", "usd", "monthly_usd_without_margin"),
        ("Margin's price per month", "usd", "margin_usd_per_month"),
        (f"{year1_label(fin.horizon_months)}, phased", "usd", "year1_cash_usd"),
        (f"{year1_label(fin.horizon_months)}, full fleet", "usd", "year1_cash_full_usd"),
        (f"Total, {h}, phased", "usd", "total_usd"),
        (f"Total, {h}, full fleet", "usd", "total_full_usd"),
        (f"Present value at {fin.cost_of_capital:.1%}", "usd", "present_value_usd"),
        ("Residual value", "usd", "residual_usd"),
        ("Commitment", "text", "commitment"),
        ("Price from", "text", "price_from"),
    )
    rows = []
    for r in review.results:
        oo = review.outlook.of(r.option.name)
        if oo is None:
            continue
        ow = oo.ownership
        m = r.money
        src = quote_text(m)
        stale = stale_text(r, review.date)
        rows.append(
            (
                r.option.name,
                m.price_kind,
                r.gpus,
                r.margin,
                oo.gpus_without_margin or None,
                oo.monthly_without_margin_usd,
                oo.margin_usd_per_month(r),
                ow.year1_cash_usd,
                ow.year1_cash_full_usd,
                ow.total_usd,
                ow.total_full_usd,
                ow.present_value_usd,
                ow.residual_usd,
                ow.commitment,
                src + (f" ({stale})" if stale else ""),
            )
        )
    return Table(cols, tuple(rows))


def cases_table(review: Review) -> Table:
    """Per meeting option, the low, base and high demand cases: GPUs, monthly cost, the horizon's total."""
    h = _years(review.scenario.finance.horizon_months)
    cols = _columns(
        ("Option", "text", "option"),
        ("Demand case", "text", "case"),
        ("x planned peak", "x", "multiplier"),
        ("GPUs", "int", "gpus"),
        ("Monthly cost", "usd", "monthly_usd"),
        (f"Total, {h}, phased", "usd", "total_usd"),
        ("Cheapest option in this case", "text", "cheapest"),
    )
    outs = [review.outlook.of(r.option.name) for r in review.results]
    outs = [o for o in outs if o is not None]
    rows = []
    for o in outs:
        for k, c in enumerate(o.cases):
            cheapest = min(outs, key=lambda x: x.cases[k].monthly_usd)
            rows.append((o.name, c.name, c.multiplier, c.gpus, c.monthly_usd, c.total_usd, cheapest.name))
    return Table(cols, tuple(rows))


def quarter_label(q: int, horizon_months: int) -> str:
    """A quarter's column header: "Q1: months 1 to 3", months counted from the plan's first month (Q5: months 13 to 15,
    in year 2; a short last quarter: "Q4: month 10"). "to", not a hyphen: a header wraps after a hyphen ("28-" / "30")."""
    first, last = 3 * q - 2, min(3 * q, horizon_months)
    return f"Q{q}: month {first}" if first == last else f"Q{q}: months {first} to {last}"


def quarters_heading(review: Review) -> str:
    """Fleet by quarter's heading (a printed page header: about 100 characters, or it runs into the title): what a
    quarter is, what the fleet is (bought: GPUs owned so far), and the traffic it follows."""
    w = review.scenario.workload
    return (
        "GPUs by quarter from the plan's month 1 (not fiscal): the planned fleet scaled; traffic flat after month "
        f"{w.horizon_months}"
    )


def phasing_table(review: Review) -> Table:
    """Per meeting option, the fleet each quarter of the horizon (owned: GPUs bought so far), each quarter headed by
    its months (``quarter_label``)."""
    outs = [o for o in (review.outlook.of(r.option.name) for r in review.results) if o is not None]
    n = max(len(o.ownership.gpus_by_quarter) for o in outs)
    h = review.scenario.finance.horizon_months
    cols = (
        Column("Option", "text", "option"),
        *[Column(quarter_label(q + 1, h), "int", f"q{q + 1}") for q in range(n)],
    )
    rows = tuple((o.name, *o.ownership.gpus_by_quarter) for o in outs)
    return Table(cols, rows)


def margin_line(review: Review) -> str:
    """What the latency margin costs on the recommended fleet, and, where sizing every option without its margin
    would rank another first, which (``margin_ranking_line``)."""
    text = _margin_cost_line(review)
    ranking = margin_ranking_line(review)
    return f"{text} {ranking}" if text and ranking else text or ranking


def margin_ranking_line(review: Review) -> str:
    """ "Without margins the ranking changes: ..." where another meeting option, sized with no latency margin, costs
    less than the recommended one sized so (``OptionOutlook.monthly_without_margin_usd``); "" otherwise. A margin
    multiplies TPOT, so it weighs most on an option that runs close to the TPOT target at a large batch (DeepSeek-V3
    with data-parallel attention: 32 H200 without the margin, 200 with it, where tensor parallelism takes 112 and
    184)."""
    rec = review.recommended
    bare = [o for o in review.outlook.options if o.gpus_without_margin and math.isfinite(o.monthly_without_margin_usd)]
    mine = review.outlook.of(rec.option.name)
    if not bare or mine is None or not mine.gpus_without_margin:
        return ""
    first = min(bare, key=lambda o: o.monthly_without_margin_usd)
    if first.name == rec.option.name or first.monthly_without_margin_usd >= mine.monthly_without_margin_usd:
        return ""
    return (
        f"Without margins the ranking changes: {first.name} would be cheapest at "
        f"{counted(first.gpus_without_margin, 'GPU', ',.0f')}, {usd(first.monthly_without_margin_usd)} a month "
        f"(the recommendation {counted(mine.gpus_without_margin, 'GPU', ',.0f')}, {usd(mine.monthly_without_margin_usd)}); "
        "the margin multiplies TPOT, so it weighs most on an option that runs near the TPOT target."
    )


#: An option whose fleet sized with its margin is this many times its fleet sized on the prediction is said to be
#: sized on its margin (``margin_sets_fleet_line``): trial 9's DeepSeek-R1 with data-parallel attention on H200 +
#: SGLang, 1,736 GPUs at +202% where 32 meet the targets as predicted (x54).
MARGIN_SETS_FLEET = 3.0


def margin_sets_fleet_line(review: Review) -> str:
    """Where an option's margin multiplies its fleet ``MARGIN_SETS_FLEET`` times or more: its two fleets and what the
    margin rests on, read as a range, not a quote (the TPOT goal at the margin's end leaves a replica only a few
    sequences at once); "" where none does."""
    parts, bought = [], []
    for r in review.results:
        oo = review.outlook.of(r.option.name)
        if r.fleet is None or oo is None or not oo.gpus_without_margin:
            continue
        if r.gpus >= MARGIN_SETS_FLEET * oo.gpus_without_margin:
            bought.append(r.money.pricing == "purchase")
            parts.append(
                f"{r.option.name} {counted(r.gpus, 'GPU', ',.0f')} at +{r.margin:.0%} against "
                f"{oo.gpus_without_margin:,.0f} as predicted (x{r.gpus / oo.gpus_without_margin:,.0f}"
                f"{_in_flight(r)}; the margin from {margin_basis(r.time_range_note, r.time_range_floor)})"
            )
    if not parts:
        return ""
    return (
        "Low confidence, measure one replica first: sized on the margin, not the traffic: "
        + "; ".join(parts)
        + ". A margin this wide leaves a replica so little of the TPOT target that each replica is kept far below "
        "what its memory holds: these fleets are not budget figures but the far end of a range whose near end is the fleet as "
        "predicted; measure one replica of this deployment at its planned load (planner validate, planner calibrate) "
        # the verb of the price kind (trial 26 F11): nothing is bought on a rented option
        f"{'before buying on' if all(bought) else 'before committing to'} {'either' if len(parts) > 1 else 'it'}."
    )


def margin_verdict_lines(review: Review) -> list[str]:
    """One line per model and engine whose options' fleets at the margin's slow end are not budget figures (trial 33
    F10): each option ``margin_sets_fleet_line`` names (its fleet ``MARGIN_SETS_FLEET`` times the fleet as predicted
    or more) or ``not_sized`` left unsized; ``serving_margin.margin_verdict`` of the model, its class, the engine and
    those options' GPUs ("Margin: DeepSeek-R1 (MLA) on SGLang has runs from 3 sources (none on MI325X; 2 of them on
    H200 SXM 141GB); the margin-sized fleets are not budget figures: measure one replica"). [] where none is."""
    from planner.accuracy.serving_margin import from_serving_runs, margin_class, margin_verdict

    groups: dict[tuple[str, str], list] = {}
    for r in review.results:
        oo = review.outlook.of(r.option.name)
        sized_on_margin = (
            r.fleet is not None
            and oo is not None
            and bool(oo.gpus_without_margin)
            and r.gpus >= MARGIN_SETS_FLEET * oo.gpus_without_margin
        )
        if sized_on_margin or r.shortfall.startswith(NOT_SIZED):
            groups.setdefault((r.model.name, r.engine.name), []).append(r)
    lines = []
    for (model, engine), results in groups.items():
        gpus = list(dict.fromkeys(r.gpu.name for r in results))
        from_runs = all(from_serving_runs(r.time_range_note) for r in results)
        lines.append(margin_verdict(model, margin_class(results[0].model), engine, gpus, from_runs))
    return lines


def _in_flight(r) -> str:
    """ ", at most 12 of the 1,848 sequences memory holds in flight per replica at the planned peak": the simulated
    replica's peak (``LoadResult.peak_running``), not the batch limit, so the sentence reads the actual batch (trial
    22, F1: "only a few sequences at once" stood beside "at most 1,848"); "" where the fleet was not simulated."""
    sim = r.under_load
    if sim is None or r.replica is None:
        return ""
    return (
        f", at most {sim.result.peak_running:,} of the {r.batch_per_replica:,.0f} sequences a replica may run in flight "
        "at the planned peak"
    )


def _margin_cost_line(review: Review) -> str:
    rec = review.recommended
    oo = review.outlook.of(rec.option.name)
    if oo is None or not oo.gpus_without_margin:
        return ""
    if rec.margin == 0:  # a model-range margin is 0 where its pessimistic end is at or under the prediction
        why = (
            "the scenario sets none (workload.latency_margin)"
            if review.scenario.workload.latency_margin != "model-range"
            else f"the pessimistic end of the model's range here ({rec.time_range[1]:+.0%}) is no slower than its "
            "prediction"
        )
        return f"No latency margin on the recommended fleet: {why}, so the fleet is sized on the prediction itself."
    if not oo.margin_gpus(rec):
        return (
            f"The +{rec.margin:.0%} latency margin costs no GPU on the recommended fleet: without it the fleet is the "
            f"same {counted(oo.gpus_without_margin, 'GPU', ',.0f')}."
        )
    return (
        f"The +{rec.margin:.0%} latency margin costs {counted(oo.margin_gpus(rec), 'GPU', ',.0f')} ({usd(oo.margin_usd_per_month(rec))} a "
        f"month) on the recommended fleet: {counted(oo.gpus_without_margin, 'GPU', ',.0f')}, {usd(oo.monthly_without_margin_usd)} a month "
        "without it."
    )


def _millions(tokens: float) -> str:
    """Tokens in millions for a reader: "2,000 M", "12.6 M", "0.25 M"."""
    m = tokens / 1e6
    return f"{m:,.0f} M" if m >= 100 else f"{m:,.1f} M" if m >= 1 else f"{m:,.2g} M"


def tokens_month_line(review: Review) -> str:
    """The month's tokens at the average traffic the $ per M tokens are counted at (``sizing.tokens_per_month``:
    average requests/s x the mean tokens a request x 730 h x 3,600 s), prompt and output apart, so a reader can price
    a hosted API's per-token rates by hand (trial 34 F5: "cloud" here is GPUs rented by the hour). The rate is the
    recommendation's: the scenario's average requests/s, or where the traffic is requests in flight, the average
    rate its fleet was sized at; either grown to the horizon's end (``growth_over_horizon``), as the $ per M tokens
    are counted. "" where the recommendation does not meet the targets."""
    from planner.export.sizing import SECONDS_PER_MONTH, tokens_per_month

    rec, w = review.recommended, review.scenario.workload
    if not rec.meets:
        return ""
    rate = float(rec.average_rate_per_s)
    prompt = float(tokens_per_month(rate, w.prompt_tokens_mean))
    output = float(tokens_per_month(rate, w.output_tokens_mean))
    g = float(w.growth_factor)  # the review's traffic is the planned one, grown by the horizon's end
    grown = f", today's {rate / g:,.4g} x {g:g} growth," if g != 1 else ""
    return (
        f"Tokens a month at the average: {_millions(prompt)} prompt, {_millions(output)} output ({rate:,.4g} "
        f"requests/s{grown} x {SECONDS_PER_MONTH:,.0f} s x {w.prompt_tokens_mean:,g} prompt and "
        f"{w.output_tokens_mean:,g} output tokens a request); a hosted API priced per token would cost its $ per M "
        f"prompt tokens x {_millions(prompt)[:-2]} + its $ per M output tokens x {_millions(output)[:-2]} a month (the "
        "options here rent or buy GPUs)."
    )


def horizon_line(review: Review) -> str:
    """One sentence: the recommendation's year-1 cash, horizon total and high-demand case."""
    fin = review.scenario.finance
    rec = review.recommended
    oo = review.outlook.of(rec.option.name)
    ow = oo.ownership
    high = oo.cases[-1]
    pv = f", {usd(ow.present_value_usd)} at {cost_of_capital_words(fin.cost_of_capital)}" if fin.cost_of_capital else ""
    return (
        f"Over {horizon_words(review)}: {year1_phrase(fin.horizon_months)} {usd(ow.year1_cash_usd)} with the "
        f"fleet added by quarter ({usd(ow.year1_cash_full_usd)} at full size from month 1), total {usd(ow.total_usd)}{pv}; "
        f"{ow.commitment}. At {high.name} demand: {counted(high.gpus, 'GPU', ',.0f')}, {usd(high.monthly_usd)} a month."
    )


#: A present value this much below the recommendation's (as a share of it) is said (``present_value_line``).
PV_DISAGREES = 0.005


def present_value_line(review: Review) -> str:
    """Where another option meeting the targets (a real engine's) costs less in present value over the horizon than
    the recommendation, one sentence saying so and why the monthly ranking differs ("" otherwise): the ranking prices
    the planned-peak fleet a month, bought capex spread over its amortization; the present value follows the fleet
    quarter by quarter over ``horizon_months`` (a trial: 48 months against 36 of amortization, buying $388k cheaper
    in present value and renting recommended)."""
    fin, rec = review.scenario.finance, review.recommended
    real = rec.engine.name != IDEAL.name  # a bound (the 'ideal' engine) is set against real engines only by itself
    pvs = {
        r.option.name: o.ownership.present_value_usd
        for r in review.results
        if r.meets and not (real and r.engine.name == IDEAL.name) and (o := review.outlook.of(r.option.name))
    }
    if rec.option.name not in pvs:
        return ""
    best = min(pvs, key=pvs.get)
    mine = pvs[rec.option.name]
    if best == rec.option.name or pvs[best] >= mine * (1.0 - PV_DISAGREES):
        return ""
    bought = [
        r.option for r in review.results if r.option.name in (best, rec.option.name) and r.money.pricing == "purchase"
    ]
    rate = f" at {cost_of_capital_words(fin.cost_of_capital)}" if fin.cost_of_capital else ""
    text = (
        f"Over the {fin.horizon_months}-month horizon {best} costs {usd(mine - pvs[best])} less than the "
        f"recommendation in present value{rate} ({usd(pvs[best])} against {usd(mine)}, Ownership sheet): the ranking "
        "is by monthly cost at the planned peak"
    )
    months = sorted({o.amortization_months for o in bought})
    if months and months != [fin.horizon_months]:
        text += (
            f", bought GPUs' capex spread over {' and '.join(map(str, months))} months of amortization, not the "
            f"{fin.horizon_months} of the horizon (amortization_months = {fin.horizon_months} ranks as the present "
            "values do)"
        )
    return text + "."


def calibration_line(review: Review) -> str:
    """One sentence when a calibration file is in effect ("" otherwise): for each option's GPU and engine, what it
    did to the predicted times and ranges (``planner.accuracy.calibration.CalibrationUse.text``), those it has no
    entry for named together."""
    uses = [r.calibration for r in review.results if r.calibration is not None]
    if not uses:
        return ""
    parts = list(dict.fromkeys(u.text for u in uses if u.entry is not None))
    bare = list(dict.fromkeys(f"{u.gpu} with {u.engine}" for u in uses if u.entry is None))
    if bare:
        parts.append(
            f"{uses[0].named} has no entry for {', '.join(bare)}: {'their' if len(bare) > 1 else 'its'} predicted "
            "times and ranges are planner's own"
        )
    return "Calibration: " + "; ".join(parts) + "."


def margin_releases_line(review: Review) -> str:
    """Where options' margins rest mostly on runs of engine releases older than the line their engine plans
    (``planner.export.margin_releases``; trial 27 F6: the margins that reordered the trial's AMD and NVIDIA options came
    from vLLM 0.7.x dev builds, said only inside the Assumptions notes): one sentence per set of runs, naming the
    options, their margins, the older releases and what the current line's runs read; "" where none does. Where the
    scenario sets its own ``latency_margin`` (a number), no run sets it: one sentence saying the fleets rest on that
    number instead (trial 31 F15: "+30% margin from 27 runs ... of SGLang 0.4" for the scenario's own +30%)."""
    groups: dict[tuple[str, str, str], list] = {}
    own = review.scenario.workload.latency_margin
    for r in review.results:
        if (split := older_split(r)) is not None:
            key = (split.region.gpu, split.region.engine, split.region.architecture)
            groups.setdefault(key, []).append((r, split))
    said = []
    for pairs in groups.values():
        split = pairs[0][1]
        names = listed([r.option.name for r, _ in pairs])
        margins = sorted({round(r.margin, 2) for r, _ in pairs})
        one = len(pairs) == 1
        said.append(
            f"{names} {'is' if one else 'are'} sized on {listed([f'+{m:.0%}' for m in margins])} "
            f"margin{'' if len(margins) == 1 else 's'} from {counted(split.region.rows, 'run')} "
            f"({scope_words(split)}), {split.older_runs} of them "
            f"{older_words(split, 'its' if one else 'their')}; {current_words(split)}"
        )
    if not said:
        return ""
    if own != "model-range":  # the scenario's own number, not the runs' (trial 31 F15): no release is behind it
        return (
            f"Margins: every option is sized on the scenario's latency_margin +{float(own):.0%} "
            "(workload.latency_margin), not on a margin from runs: no engine release's runs set these fleets."
        )
    return (
        "Margins from older engine releases: "
        + "; ".join(said)
        + ". Every release counts alike in a margin, so these fleets rest on those releases' runs; one replica "
        "measured on the release to be run (planner validate, planner calibrate) replaces them (Assumptions, "
        "'margin used')."
    )


def money_lines(review: Review) -> list[str]:
    """What every surface says under the recommendation: the calibration in effect, the margin's price, the years,
    like for like, quality."""
    lines = [
        x
        for x in (
            calibration_line(review), margin_line(review), margin_sets_fleet_line(review),
            margin_releases_line(review), tokens_month_line(review), horizon_line(review),
            present_value_line(review), grid_line(review),
        )
        if x
    ]  # fmt: skip
    return lines + [q.text for q in review.outlook.quality]


def sign_off_line(review: Review) -> str:
    return (
        "Signed off: finance ______________   engineering ______________   "
        f"quality ({review.scenario.finance.quality_sign_off}) ______________"
    )


# -- mixed fleets ([[mix]]: planner.export.mix) ------------------------------------------------------------------

#: What a mix is, said under its heading on every surface.
MIX_NOTE = (
    "A mixed fleet serves the scenario's traffic with several options at once, each taking its share of the requests "
    "(peak, average, growth and demand cases x the share); each part is its option sized alone at that share, as "
    "an export of that option alone at that traffic sizes it, and the mix's figures are the parts' sums: no spare "
    "replica, node or GPU is shared between the parts. A mix is a budget line, not an option: the ranking and the "
    "recommendation above are the options' alone."
)
#: The Part cell of a mix's total row.
MIX_TOTAL = "Total (sum of the parts)"


def mix_table(review: Review) -> Table:
    """Per [[mix]]: a row per part (its option sized alone at its share of the traffic) and a total row, the sums."""
    fin = review.scenario.finance
    h = _years(fin.horizon_months)
    w = review.scenario.workload
    stress = fin.stress_multiplier
    cols = _columns(
        ("Mix", "text", "mix"),
        ("Part", "text", "option"),
        ("Share of traffic", "pct", "share"),
        ("Model", "text", "model"),
        ("GPU", "text", "gpu"),
        ("Price kind", "text", "price_kind"),
        ("Planned peak, requests/s", "x", "peak_requests_per_s"),
        ("Replicas x GPUs per replica", "text", "fleet"),
        ("GPUs", "int", "gpus"),
        ("Monthly cost", "usd", "monthly_usd"),
        (f"{year1_label(fin.horizon_months)}, phased", "usd", "year1_cash_usd"),
        (f"Total, {h}, phased", "usd", "total_usd"),
        (f"Monthly cost, low (-{review.scenario.traffic_change:.0%})", "usd", "monthly_usd_low"),
        (f"GPUs, high (x{stress:g})", "int", "gpus_high"),
        (f"Monthly cost, high (x{stress:g})", "usd", "monthly_usd_high"),
        ("Note", "text", "note"),
    )
    rows = []
    for m in review.mixes:
        for p in m.parts:
            r = p.result
            low = p.cases[0] if p.cases else None
            high = p.cases[2] if p.cases else None
            rows.append(
                (
                    m.name,
                    p.option,
                    p.share,
                    r.model.name,
                    r.gpu.name,
                    r.money.price_kind,
                    r.peak_rate_per_s if w.by_rate or r.meets else None,
                    f"{int(r.fleet.replicas)} x {int(r.replica.gpus)}" if r.meets else "",
                    r.gpus if r.meets else None,
                    r.monthly_usd,
                    p.ownership.year1_cash_usd if p.ownership else None,
                    p.ownership.total_usd if p.ownership else None,
                    low.monthly_usd if low else None,
                    high.gpus if high else None,
                    high.monthly_usd if high else None,
                    r.layout_chosen if r.meets else f"does not meet the targets: {r.shortfall}",
                )
            )
        rows.append(
            (
                m.name,
                MIX_TOTAL,
                sum(p.share for p in m.parts),
                "",
                "",
                "",
                sum(p.result.peak_rate_per_s for p in m.parts) if m.meets else None,
                "",
                m.gpus if m.meets else None,
                m.monthly_usd,
                m.year1_cash_usd,
                m.total_usd,
                m.case_monthly_usd(0) if m.meets else None,
                m.case_gpus(2) if m.meets else None,
                m.case_monthly_usd(2) if m.meets else None,
                "" if m.meets else "no total: a part does not meet the targets",
            )
        )
    return Table(cols, tuple(rows))


def mix_lines(review: Review) -> list[str]:
    """A line per [[mix]]: its total (GPUs, monthly cost, year-1 cash, the horizon's total), then each part's share,
    fleet and monthly cost. [] where the scenario has no mix."""
    from planner.export.tables import fmt

    fin = review.scenario.finance
    lines = []
    for m in review.mixes:
        parts = "; ".join(
            f"{p.option} ({p.share * 100:.4g}% of the traffic): "
            + (
                f"{counted(p.result.gpus, 'GPU', ',.0f')} ({int(p.result.fleet.replicas)} x "
                f"{int(p.result.replica.gpus)} x {p.result.gpu.name}), {fmt(p.result.monthly_usd, 'usd')} a month"
                if p.result.meets
                else f"does not meet the targets ({p.result.shortfall})"
            )
            for p in m.parts
        )
        if m.meets:
            head = (
                f"Mixed fleet {m.name}: {counted(m.gpus, 'GPU', ',.0f')}, {fmt(m.monthly_usd, 'usd')} a month, "
                f"{year1_phrase(fin.horizon_months)} {fmt(m.year1_cash_usd, 'usd')}, total over "
                f"{_years(fin.horizon_months)} {fmt(m.total_usd, 'usd')} (phased), the sum of its parts"
            )
        else:
            head = f"Mixed fleet {m.name}: no total, a part does not meet the targets"
        lines.append(f"{head}: {parts}.")
    return lines
