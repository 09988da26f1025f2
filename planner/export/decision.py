"""The decision box that opens the Summary (trial 26 F11: the recommendation was one ~500-word paragraph of held-out
ranges, sources and config keys a CFO could not act on): the option, its monthly cost, the horizon's total and
present value, what signing commits to, the one risk that matters and the test to run before committing; then, where
they apply, the capex figures to confirm (F20) and each other model's own answer (F3). The statistical detail stays in
``Review.reason``, printed below the box under ``DETAIL_HEADING``. Every figure is one the review already holds:
nothing here is sized or priced again.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from planner.export.breakeven import buy_rent_lines
from planner.export.money_tables import horizon_words, year1_phrase
from planner.export.ownership import capital_terms, cost_of_capital_words, quote_text, stale_words
from planner.export.reason import before_commitment, own_runs_budget, usd
from planner.units import counted

if TYPE_CHECKING:
    from planner.export.records import Result, Review

#: The heading of the recommendation's full paragraph below the box (xlsx, pdf and Markdown alike).
DETAIL_HEADING = "Why this option, and how sure: the detail (ranges, sources, runner-up)"

#: The scenario keys that replace each catalog capex figure with a quote (``Option`` / ``[defaults]`` fields).
CAPEX_KEYS = {"GPU price": "purchase_usd", "host server": "host_server_usd", "network": "networking_usd"}


def _ms(s: float) -> str:
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def _horizon(review: Review) -> str:
    """ "3 years": ``money_tables.horizon_words`` without the note on which key sets it (the detail below has it)."""
    return horizon_words(review).split(" (")[0]


def _change(new: float, plan: float) -> str:
    return f"{new / plan - 1:+.0%}" if plan > 0 and math.isfinite(new) else ""


def margin_contingency(review: Review, result: Result) -> str:
    """The latency margin of ``result`` in dollars a month, for the Risk row (trial F5/F6: finance reads a contingency,
    not a percent): the GPUs the margin adds (its fleet less the same option sized with no margin, the Ownership
    sheet's "GPUs without margin", ``OptionOutlook.margin_gpus``) and their cost at the option's own price kind
    (``OptionOutlook.margin_usd_per_month``: the monthly cost less the monthly cost without margin, each its GPUs x
    ``Money.usd_per_gpu_month``, the Options sheet's per GPU-month). "" where the option has no margin or could not
    be sized without it."""
    outlook = getattr(review, "outlook", None)  # a review without its money outlook (a stub) has no contingency
    oo = outlook.of(result.option.name) if outlook is not None else None
    if oo is None or not result.margin or not oo.gpus_without_margin:
        return ""
    extra, usd_month = oo.margin_gpus(result), oo.margin_usd_per_month(result)
    head = f"The +{result.margin:.0%} latency margin"
    if not extra:
        return f"{head} adds no GPU ({result.gpus:,} with or without it): contingency {usd(usd_month)} a month."
    per = result.money.usd_per_gpu_month
    return (
        f"{head} adds {counted(extra, 'GPU', ',.0f')} ({result.gpus:,} against {oo.gpus_without_margin:,} without "
        f"it): contingency {usd(usd_month)} a month ({extra:,} x {usd(per)} per GPU-month, "
        f"{result.money.price_kind})."
    )


def risk_line(review: Review) -> str:
    """The one risk that moves the budget, in money, then the latency margin's contingency in dollars a month
    (``margin_contingency``): (1) where most of the deployment's own published runs exceed
    its margin (``Result.own_runs``, the rule ``reason.own_runs_budget`` budgets by): the fleet and monthly cost at
    their median ratio; else (2) where the held-out ranges' slow end under load (``Result.slow_end``) costs more
    than the plan or meets no fleet: that cost; else (3) the model's prediction range and the margin that covers
    it. The detail paragraph below says how each figure is drawn."""
    rec = review.recommended
    contingency = margin_contingency(review, rec)
    text = _risk(review)
    return f"{text} {contingency}" if contingency else text


def _risk(review: Review) -> str:
    """``risk_line``'s first sentence: the risk."""
    rec = review.recommended
    plan = rec.monthly_usd
    own, s = rec.own_runs, rec.slow_end
    if own is not None and own_runs_budget(rec):
        said = f"This deployment's own published runs measured {own.ratio:.2f}x the predicted {own.metric} (median)"
        if not own.meets:
            return (
                f"{said}: at that speed no fleet of this option meets the targets; do not commit until the test passes."
            )
        return (
            f"{said}: at that speed it needs {counted(own.gpus, 'GPU', ',.0f')}, {usd(own.monthly_usd)} a month "
            f"({_change(own.monthly_usd, plan)}); budget that until the test passes."
        )
    if s is not None and not s.meets:
        return (
            "If it runs as slowly as published runs from other sources allow (the held-out slow end), no fleet of this "
            "option meets the targets; the test decides."
        )
    if s is not None and s.monthly_usd > plan and usd(s.monthly_usd) != usd(plan):
        return (
            f"If it runs as slowly as published runs from other sources allow (the held-out slow end), it needs "
            f"{counted(s.gpus, 'GPU', ',.0f')}, {usd(s.monthly_usd)} a month ({_change(s.monthly_usd, plan)}): "
            f"budget the plan's {usd(plan)} once the test passes."
        )
    low, high = rec.time_range
    sized = f"a +{rec.margin:.0%} margin" if rec.margin else "no margin: a slower deployment misses the targets"
    return (
        f"Measured times fall within {low:+.0%} / {high:+.0%} of the predictions on 80% of published runs; "
        f"the fleet is sized with {sized}."
    )


def measure_line(review: Review) -> str:
    """The measurement that settles the risk: one replica at its planned load (``under_load.rate_per_replica_s``
    where the fleet was sized under load) against the targets, in the price kind's verb (``before_commitment``)."""
    rec, w = review.recommended, review.scenario.workload
    sim = rec.under_load
    at = (
        f" ({sim.rate_per_replica_s:.3g} requests/s)"
        if sim is not None and not sim.is_burst and math.isfinite(sim.rate_per_replica_s)
        else ""
    )
    group = counted(int(rec.replica.gpus), "GPU", ",.0f") if rec.replica is not None else "its GPUs"
    when = before_commitment(rec)
    return (
        f"{when[0].upper()}{when[1:]}, run one replica ({group}) at its planned load{at} on your own prompts and check "
        f"TTFT at most {_ms(w.ttft_target_s)} for a p{w.high_percentile:g} prompt and TPOT at most {_ms(w.tpot_target_s)}."
    )


def capex_line(review: Review) -> str:
    """Where the recommended option's capex (or, for a rented recommendation, the cheapest bought option's that meets
    the targets) rests on catalog figures to confirm (trial 26 F20): the GPU price where its quote's provider calls it
    an estimate, or where it is stale (``ownership.stale_words``, the rule the Assumptions sheet flags it by), and the
    host server and network figures where stale; with the scenario keys that replace them (``CAPEX_KEYS``). A figure
    the scenario gives is its own quote and is not named. "" where none is."""
    meeting = [x for x in review.results if x.meets and x.money.pricing == "purchase"]
    rec = review.recommended
    bought = rec if rec.money.pricing == "purchase" else (meeting[0] if meeting else None)
    if bought is None:
        return ""
    m, date = bought.money, review.date
    parts: list[tuple[str, str]] = []
    if m.quote is not None:
        said = "estimate" in f"{m.price_provider} {m.quote.provider}".lower()
        stale = stale_words(m.price_date, date)
        if said or stale:
            why = "an estimate, not a quote" if said else "stale"
            parts.append(("GPU price", f"GPU price {usd(m.purchase_usd)} ({quote_text(m, with_gap=False)}: {why})"))
    for what, x in (("host server", m.host_server_usd), ("network", m.networking_usd)):
        if x is not None and stale_words(x.date, date):
            parts.append((what, f"{what} {usd(x.value)} per node (dated {x.date}, stale)"))
    if not parts:
        return ""
    whose = "its" if bought is rec else f"the cheapest bought option's ({bought.option.name})"
    keys = ", ".join(CAPEX_KEYS[what] for what, _ in parts)
    return (
        f"Capex to confirm: {whose} capex rests on catalog figures, {'; '.join(text for _, text in parts)}: replace "
        f"them with vendor quotes ({keys} in its [[option]] or [defaults]) before the purchase is approved."
    )


def _over_horizon(review: Review, a: Result, b: Result) -> str:
    """How much less ``a`` costs than ``b`` over the ownership horizon: in present value at the cost of capital where
    [finance] sets one, else in total (the Ownership sheet's figures, phased)."""
    oa, ob = review.outlook.of(a.option.name), review.outlook.of(b.option.name)
    if oa is None or ob is None:
        return ""
    fin = review.scenario.finance
    if fin.cost_of_capital:
        saved = ob.ownership.present_value_usd - oa.ownership.present_value_usd
        return f", {usd(saved)} in present value over {_horizon(review)}"
    return f", {usd(ob.ownership.total_usd - oa.ownership.total_usd)} over {_horizon(review)}"


def model_lines(review: Review) -> list[str]:
    """Where the options serve more than one model (trial 26 F3: the review picked the model on cost, and "if Qwen3,
    buy" was never said): for each model other than the recommended option's, its cheapest option that meets the
    targets and its monthly cost, and where it has bought and rented options that meet them, which is cheaper a
    month and over the horizon (its cheapest of each). [] for one model."""
    rec = review.recommended
    models = list(dict.fromkeys(x.model.name for x in review.results))
    lines = []
    for name in models:
        if name == rec.model.name:
            continue
        meeting = [x for x in review.results if x.model.name == name and x.meets]
        if not meeting:
            lines.append(f"If {name} is chosen: none of its options meets the targets (Options says why).")
            continue
        best = meeting[0]
        text = (
            f"If {name} is chosen: {best.option.name}, {usd(best.monthly_usd)} a month "
            f"({counted(best.gpus, 'GPU', ',.0f')}, {best.money.price_kind})"
        )
        bought = next((x for x in meeting if x.money.pricing == "purchase"), None)
        rented = next((x for x in meeting if x.money.pricing != "purchase"), None)
        if bought is not None and rented is not None:
            cheap, dear = (bought, rented) if bought.monthly_usd <= rented.monthly_usd else (rented, bought)
            verb = "buy" if cheap is bought else "rent"
            text += (
                f"; {verb}: {cheap.option.name} costs {usd(dear.monthly_usd - cheap.monthly_usd)} a month less than "
                f"{dear.option.name}{_over_horizon(review, cheap, dear)}"
            )
        lines.append(text + ".")
    return lines


def cheapest_per_model_lines(review: Review) -> list[str]:
    """Where the options serve more than one model, each model's cheapest option that meets the targets, its monthly
    cost, GPUs and price kind, the recommended option's model first (the ranking's order): what the terminal and the
    Markdown say before the recommendation, which ranks every model's options together and so picks the model on cost
    (trial 31 F14: "Recommended: gpt-oss-120b" for a team deciding the hardware for DeepSeek-R1; the xlsx Summary's
    ``model_lines`` said each other model's). [] for one model."""
    models = list(dict.fromkeys(x.model.name for x in review.results))
    if len(models) < 2:
        return []
    lines = []
    for name in models:
        best = next((x for x in review.results if x.model.name == name and x.meets), None)
        lines.append(
            f"Cheapest for {name}: none of its options meets the targets"
            if best is None
            else f"Cheapest for {name}: {best.option.name}, {usd(best.monthly_usd)} a month "
            f"({counted(best.gpus, 'GPU', ',.0f')}, {best.money.price_kind})"
        )
    return lines


def context_line(review: Review) -> str:
    """The [workload] context, where the scenario sets one (trial 30 F11), as the Summary states it: "16,384 tokens
    ...", with how many simulated requests were cut to it and the slot memory is sized for; "" without one."""
    w, rec = review.scenario.workload, review.recommended
    if w.context is None:
        return ""
    drawn = w.simulated_lengths(rec.model.max_context) if w.sizing == "simulated" else None
    cut = (
        f"; {w.context_cut_count(rec.model.max_context):,} of {len(drawn):,} simulated requests were longer and were "
        "cut to it, as planner plan --context cuts them"
        if drawn
        else ""
    )
    return (
        f"{w.context:,} tokens a request, prompt + output (the engine's longest, its --max-model-len){cut}; memory "
        f"sized for a {w.sizing_context_tokens:,}-token slot"
    )


def decision_rows(review: Review) -> list[tuple[str, str]]:
    """The box's rows, (label, text): the option, monthly cost, the horizon's total and present value, the
    commitment, the risk, the test, then the capex to confirm and each other model's line where they apply."""
    rec, fin = review.recommended, review.scenario.finance
    m = rec.money
    oo = review.outlook.of(rec.option.name) if review.outlook is not None else None
    rows = [
        ("Option", f"{rec.option.name} ({rec.model.name} on {rec.gpu.name}, {m.price_kind})"),
        ("Monthly cost", f"{usd(rec.monthly_usd)} a month, {counted(rec.gpus, 'GPU', ',.0f')}"),
    ]
    if oo is not None:
        ow = oo.ownership
        pv = (
            f"; present value {usd(ow.present_value_usd)} at {cost_of_capital_words(fin.cost_of_capital)}"
            if fin.cost_of_capital
            else " (undiscounted: no cost of capital set)"
        )
        rows.append(
            (
                f"Over {_horizon(review)}",
                f"{usd(ow.total_usd)} total{pv}; {year1_phrase(fin.horizon_months)} {usd(ow.year1_cash_usd)}",
            )
        )
        commit = ow.commitment.removeprefix("committed: ")  # the row's label says it
        if m.pricing == "purchase":
            commit += f"; amortized {capital_terms(rec.option, fin)}"
        rows.append(("Commitment", commit))
    rows += [("Risk", risk_line(review)), ("Test before committing", measure_line(review))]
    if capex := capex_line(review):
        said = capex.removeprefix("Capex to confirm: ")
        rows.append(("Capex to confirm", said[0].upper() + said[1:]))
    rows += [("Context", line)] if (line := context_line(review)) else []
    rows += [("Buy or rent", line) for line in buy_rent_lines(review)]  # break-even month and capex (trial 30)
    rows += [("Other model", line) for line in model_lines(review)]
    return rows


def decision_text(review: Review) -> str:
    """The box as one cell's text: "Label: text" a line (the xlsx's and pdf's merged cell)."""
    return "\n".join(f"{label}: {text}" for label, text in decision_rows(review))
