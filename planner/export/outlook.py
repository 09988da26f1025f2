"""The money a finance team signs: like-for-like grid, the margin's price, ownership over years, demand cases.

Built once per review from its sized options (``planner.export.review``); the rules are ``planner.export.finance``'s:

    grid            every GPU of the scenario x price kind ([finance] grid_price_kinds, spot when an option asks)
                    x weight precision any option uses, each sized like an option; ranked by monthly cost
    margin price    each option sized again with no latency margin: the GPUs and dollars the margin adds
    ownership       the fleet phased by quarter over [finance] horizon_months (default 36), owned or rented;
                    year-1 cash, total, present value at the cost of capital, residual value, the commitment
    demand cases    the planned peak x (1 - traffic_change), x 1 and x stress_multiplier (default 2), each option
                    sized afresh there (``Result.sized_at``)

The quarter-by-quarter fleet is the sized one scaled to each quarter's peak (``evaluate.fleet_at``: same group and
requests/s per replica), not sized again each quarter.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping

import numpy as np

from planner.catalog import Catalog
from planner.catalog.resolve import expert_precision, weights_enlarge_experts, weights_phrase, weights_words
from planner.catalog.schema import PRICE_STALE_AFTER_DAYS
from planner.errors import PlannerError
from planner.export import finance
from planner.export.evaluate import evaluate, fleet_at
from planner.export.ownership import RESERVED_PHASING, horizon_residual_share, quote_text
from planner.export.quality import model_switch, quality_notes
from planner.export.records import Case, GridRow, OptionOutlook, Outlook, Ownership, Result
from planner.export.scenario import Option, Scenario
from planner.units import counted

# -- ownership ------------------------------------------------------------------------------------------


def reserved_commitment(rc: finance.ReservedCash) -> str:
    """What a reserved option's contracts commit (``finance.reserved_cash``), in words: the basis taken and the other's
    commitment, all the cash committed, the part due past the horizon, and the monthly cost the review shows."""
    n, t, h = len(rc.contracts), rc.term_months, rc.horizon_months
    if rc.basis == finance.STEPPED:
        other = f"the peak ({counted(rc.peak_gpus, 'GPU')}) signed from month 1 would commit ${rc.peak_usd:,.0f}"
        why = "the same, its cash sooner" if round(rc.peak_usd) == round(rc.stepped_usd) else "more"
    else:
        other = f"a contract at each step up of the fleet would commit ${rc.stepped_usd:,.0f}"
        why = "more"
    beyond = (
        f", of which ${rc.beyond_horizon_usd:,.0f} falls due after the {h}-month horizon (not in its totals)"
        if rc.beyond_horizon_usd
        else f", all within the {h}-month horizon"
    )
    return (
        f"committed: {counted(n, 'reserved contract')} of {t} months ({rc.basis}), each paid monthly for its whole "
        f"term whether used or not: ${rc.committed_usd:,.0f}{beyond}; {other} ({why}); monthly cost shown: the "
        f"horizon's reserved cash / {h} months = ${rc.monthly_usd:,.0f}"
    )


def commitment(
    result: Result, owned_gpus: float, capex_usd: float, reserved: finance.ReservedCash | None = None
) -> str:
    """What signing for this price kind commits to: capex for bought GPUs, a contract term for reserved ones (their
    contracts, ``reserved_commitment``, where the term is known)."""
    kind = result.money.price_kind
    if kind == "purchase":
        return f"committed: ${capex_usd:,.0f} of hardware ({counted(owned_gpus, 'GPU', ',.0f')}) paid when bought, not refundable"
    if kind == "reserved" and reserved is not None:
        return reserved_commitment(reserved)
    if kind == "reserved":
        return (
            "committed per contract: a reserved rate's term and volume are set in it (see the price source); "
            f"{RESERVED_PHASING}"
        )
    if kind == "spot":
        return "not committed; spot capacity can be reclaimed by the provider at any time"
    return "not committed: billed by the hour"


def ownership(scenario: Scenario, result: Result, scale: float = 1.0) -> Ownership:
    """The option's cash over the horizon with its fleet quarter by quarter (traffic x ``scale``): each quarter's
    fleet is ``result``'s planned fleet scaled to that quarter's peak (``fleet_at``: its group and requests/s per
    replica, not sized again), so ``result`` is the option sized at traffic x ``scale`` (``Result.sized_at``) for a
    demand case; the full-size months are that fleet."""
    fin, w = scenario.finance, scenario.workload
    h = fin.horizon_months
    ends = finance.quarter_end_months(h)
    shares = finance.traffic_share_of_plan(ends, w.growth_over_horizon, w.horizon_months) * scale
    per_quarter = np.asarray(fleet_at(result, w, shares).gpus, dtype=float)
    phased = finance.monthly_from_quarters(per_quarter, h)
    full = np.full(h, float(fleet_at(result, w, scale).gpus))
    m = result.money
    reserved = None
    if m.pricing == "purchase":
        cash = finance.owned_cash_by_month(phased, m.capex_usd_per_gpu, m.opex_usd_per_gpu_month)
        cash_full = finance.owned_cash_by_month(full, m.capex_usd_per_gpu, m.opex_usd_per_gpu_month)
        owned = float(np.max(phased))
        share = horizon_residual_share(result.option, fin)  # a book value past the horizon (trial 26 F13)
        residual = finance.residual_usd(owned, m.capex_usd_per_gpu, share)
        residual_full = finance.residual_usd(float(full[0]), m.capex_usd_per_gpu, share)
        gpus = np.maximum.accumulate(per_quarter)
        commit = commitment(result, owned, owned * m.capex_usd_per_gpu)
        purchases = finance.owned_capex_by_month(phased, m.capex_usd_per_gpu)
    elif m.price_kind == "reserved" and m.reserved_term_months:  # contracts for a term (F17)
        reserved = finance.reserved_cash(phased, m.usd_per_gpu_month, m.reserved_term_months)
        cash = np.asarray(reserved.cash_by_month)
        cash_full = np.asarray(finance.reserved_cash(full, m.usd_per_gpu_month, m.reserved_term_months).cash_by_month)
        residual = residual_full = 0.0
        purchases = None
        gpus = per_quarter
        commit = commitment(result, 0.0, 0.0, reserved)
    else:
        cash = finance.rented_cash_by_month(phased, m.usd_per_gpu_month)
        cash_full = finance.rented_cash_by_month(full, m.usd_per_gpu_month)
        residual = residual_full = 0.0
        purchases = None
        gpus = per_quarter
        commit = commitment(result, 0.0, 0.0)
    return Ownership(
        h,
        tuple(int(g) for g in gpus),
        finance.year_cash_usd(cash),
        finance.year_cash_usd(cash_full),
        finance.total_usd(cash, residual),
        finance.total_usd(cash_full, residual_full),
        finance.present_value_usd(cash, fin.cost_of_capital, residual, purchases),
        residual,
        commit,
        tuple(float(x) for x in cash),
        reserved,
    )


def demand_cases(scenario: Scenario, result: Result) -> tuple[Case, ...]:
    """Low (1 - traffic_change), base and stress (x stress_multiplier) demand: GPUs, monthly cost, horizon total.
    Each case's fleet is the option sized afresh at that traffic (``Result.sized_at``, the plan's own code: trial 14
    found the stress case scaled from the plan, 66 H200 GPUs where a fresh review sizes 64); its total ramps to that
    fleet quarter by quarter (``ownership``). An option not sized afresh (``Result.again`` empty: not the review's
    own) has its planned fleet scaled (``fleet_at``)."""
    x, stress = scenario.traffic_change, scenario.finance.stress_multiplier
    out = []
    for name, mult in ((f"low (-{x:.0%})", 1 - x), ("base", 1.0), (f"high (x{stress:g})", stress)):
        sized = result if mult == 1.0 else result.sized_at(mult)
        if sized is None:
            f, total = fleet_at(result, scenario.workload, mult), ownership(scenario, result, mult).total_usd
        else:
            f, total = sized.fleet, ownership(scenario, sized, mult).total_usd
        out.append(Case(name, mult, int(f.gpus), float(f.monthly_usd), total))
    return tuple(out)


# -- the margin's price ---------------------------------------------------------------------------------


def without_margin(scenario: Scenario, result: Result, catalog: Catalog) -> Result | None:
    """The same option sized with no latency margin (predictions meet the targets as they are); None where that
    meets no target. The review sizes it once per option and passes it on (``review.sized``: ``bare_fleet``, before
    the option itself, where its fleet is searched under load; else this)."""
    if result.margin == 0:
        return result
    w = scenario.workload.model_copy(update={"latency_margin": 0.0})
    r = evaluate(result.option, w, catalog, scenario.traffic_change, model=result.model, finance=scenario.finance)
    return r if r.meets else None


def bare_fleet(scenario: Scenario, option: Option, catalog: Catalog) -> Result | None:
    """``option`` sized with no latency margin before it is sized with its own (``without_margin`` of a result not
    yet there: the same ``evaluate``, the option's served model and weights as evaluate derives them); None where it
    meets no target or cannot be sized (the sizing with the margin then says why). The review searches the fleet
    with the margin below ten times this one only (``review.sized``, ``not_sized``)."""
    w = scenario.workload.model_copy(update={"latency_margin": 0.0})
    try:
        r = evaluate(option, w, catalog, scenario.traffic_change, finance=scenario.finance)
    except PlannerError:
        return None
    return r if r.meets else None


# -- the like-for-like grid -----------------------------------------------------------------------------


def _grid_option(base: Option, kind: str, weights: str | None, name: str) -> Option:
    """``base`` with another price kind and weight precision; its own quote and node size kept only for its own kind."""
    pricing = "purchase" if kind == "purchase" else "cloud"
    same = base.pricing == pricing and (pricing == "purchase" or (base.price_kind or "on-demand") == kind)
    update = {
        "name": name,
        "pricing": pricing,
        "price_kind": None if pricing == "purchase" else kind,
        "weight_precision": weights,
        "purchase_usd": base.purchase_usd if same else None,
        "cloud_usd_per_gpu_hour": base.cloud_usd_per_gpu_hour if same else None,
        "node_size": base.node_size if base.pricing == pricing else None,
    }
    return base.model_copy(update=update)


def _own_quote(base: Option, kind: str) -> bool:
    """Whether the option gives its own price of this kind."""
    if kind == "purchase":
        return base.pricing == "purchase" and base.purchase_usd is not None
    return (
        base.pricing == "cloud" and (base.price_kind or "on-demand") == kind and base.cloud_usd_per_gpu_hour is not None
    )


def _payer(in_order: list[Result], gpu: str, model: str, kind: str, weights: str) -> Result | None:
    """The option whose price a grid row pays: the option of this GPU, model, price kind and weights (the row is
    that configuration: one price for it in the workbook, the option's own quote or the catalog's), else the first
    option on this GPU that gives its own quote of this kind (borrowed: a quote for the GPU, whatever its weights);
    None: the catalog's."""
    same = next(
        (
            r
            for r in in_order
            if r.gpu.name == gpu
            and r.model.name == model
            and r.money.price_kind == kind
            and r.weight_precision == weights
        ),
        None,
    )
    return same or next((r for r in in_order if r.gpu.name == gpu and _own_quote(r.option, kind)), None)


def _price_from(res: Result, payer: Result, weights: str) -> str:
    """A grid row's "Price from": the catalog quote's provider and date, or "scenario file: <option>" for a
    scenario's own quote, saying where it is borrowed from an option of other weights (``_payer``)."""
    m = res.money
    if m.quote is not None:
        return quote_text(m)
    if payer.weight_precision == weights:
        return f"scenario file: {payer.option.name}"
    return f"scenario file: the quote of {payer.option.name} (given with {payer.weight_precision} weights)"


def grid_kinds(scenario: Scenario) -> tuple[str, ...]:
    """The price kinds the grid tries: [finance] grid_price_kinds, plus spot when an option pays spot."""
    kinds = list(scenario.finance.grid_price_kinds)
    if any(o.pricing == "cloud" and o.price_kind == "spot" for o in scenario.option) and "spot" not in kinds:
        kinds.append("spot")
    return tuple(kinds)


def like_for_like(scenario: Scenario, results: tuple[Result, ...], catalog: Catalog) -> tuple[GridRow, ...]:
    """Every GPU of the scenario x price kind x weight precision serving the recommended option's model (``results``
    ranked: the first), sized and costed; meeting rows ranked by cost.

    Each GPU's row takes everything else (KV precision, engine, spares, group sizes, layout) from the scenario's
    first option on that GPU with that model, else its first option on that GPU (the model replaced: another model
    on the same GPUs is no like for like). Its price (``_payer``): that of the option of this GPU, model, price kind
    and weights where there is one, so one configuration has one price in the workbook (trial 14: a $2.00 quote given
    for bf16 priced the fp8 row at $46,720 a month beside that option's $72,299 at the catalog's rate); else the
    scenario's own quote of that kind on that GPU where an option gives one (borrowed, and the row says whose); else
    the catalog's. A kind without a catalog quote for the GPU (or the option's own) gets a row that says so. Every
    priced row names its price's source (``_price_from``).
    """
    model = results[0].model
    order = {o.name: i for i, o in enumerate(scenario.option)}
    # the model's own options first, then in the scenario's order (not the ranking's, which a price can flip)
    in_order = sorted(results, key=lambda r: (r.model.name != model.name, order.get(r.option.name, len(order))))
    firsts: dict[str, Result] = {}
    for r in in_order:
        firsts.setdefault(r.gpu.name, r)
    precisions = list(dict.fromkeys(r.weight_precision for r in results))
    rows: list[GridRow] = []
    for gpu_name, first in firsts.items():
        for weights in precisions:
            for kind in grid_kinds(scenario):
                wp = None if weights == model.native_precision else weights
                no_saving = weights_enlarge_experts(catalog, model, wp) if wp is not None else ""
                if no_saving:  # gpt-oss at fp8: its MXFP4 experts would grow; not offered as a saving (F2)
                    rows.append(GridRow(gpu_name, kind, weights, None, None, no_saving))
                    continue
                experts = expert_precision(catalog, model, wp).name if model.moe is not None else None
                label = f"{gpu_name}, {kind}, {weights_phrase(weights, experts)}"
                own = _payer(in_order, gpu_name, model.name, kind, weights) or first
                if first.gpu.price(kind) is None and not _own_quote(own.option, kind):
                    rows.append(GridRow(gpu_name, kind, weights, None, None, f"no {kind} price in the catalog"))
                    continue
                priced = _grid_option(own.option, kind, wp, label)
                base = first.option.model_copy(
                    update={
                        k: getattr(priced, k)
                        for k in (
                            "name",
                            "pricing",
                            "price_kind",
                            "weight_precision",
                            "purchase_usd",
                            "cloud_usd_per_gpu_hour",
                            "node_size",
                            "price_basis",
                        )
                    }  # fmt: skip
                )
                opt = base.model_copy(update={"model": model.name})
                try:
                    res = evaluate(
                        opt, scenario.workload, catalog, scenario.traffic_change, model=model, finance=scenario.finance
                    )
                except PlannerError as exc:
                    rows.append(GridRow(gpu_name, kind, weights, None, None, str(exc)))
                    continue
                note = _price_from(res, own, weights)
                if res.meets:
                    rows.append(GridRow(gpu_name, kind, weights, res, ownership(scenario, res), note))
                else:
                    rows.append(
                        GridRow(gpu_name, kind, weights, res, None, f"does not meet the targets: {res.shortfall}")
                    )
    meeting = sorted((g for g in rows if g.result is not None and g.result.meets), key=lambda g: g.monthly_usd)
    return tuple(meeting) + tuple(g for g in rows if g.result is None or not g.result.meets)


# -- price dates ----------------------------------------------------------------------------------------


def price_age_days(result: Result, review_date: str) -> int | None:
    """Days from the catalog quote's date to the review's date; None for a scenario's own quote."""
    if not result.money.price_date:
        return None
    parts = [int(x) for x in result.money.price_date.split("-")]
    quoted = dt.date(parts[0], parts[1], parts[2] if len(parts) > 2 else 1)
    return (dt.date.fromisoformat(review_date) - quoted).days


def stale_text(result: Result, review_date: str) -> str:
    """'stale (N days)' when the catalog quote is older than PRICE_STALE_AFTER_DAYS on the review's date; 'a quote
    dated YYYY-MM-DD, after the review' when one of the quotes it pays (a median's) is dated after it (a review
    dated back in time prices with what was not yet known); else ''."""
    age = price_age_days(result, review_date)
    if age is not None and age > PRICE_STALE_AFTER_DAYS:
        return f"stale ({age} days)"
    if result.money.quote is None:
        return ""
    on = dt.date.fromisoformat(review_date)
    later = [p.date for p in result.gpu.prices if p.kind == result.money.price_kind and p.quoted_on() > on]
    return f"a quote dated {max(later)}, after the review" if later else ""


# -- the whole outlook ----------------------------------------------------------------------------------


def build_outlook(
    scenario: Scenario,
    results: tuple[Result, ...],
    catalog: Catalog,
    bare: Mapping[str, Result | None] | None = None,
) -> Outlook:
    """Ownership, demand cases and the margin's price of every meeting option; the grid; the quality lines.
    ``bare``: each option's fleet sized with no latency margin by name (``without_margin``'s: the review's, sized once
    per option); an option not in it is sized so here."""
    given = bare or {}
    opts = []
    for r in results:
        if not r.meets:
            continue
        fleet = given[r.option.name] if r.option.name in given else without_margin(scenario, r, catalog)
        opts.append(
            OptionOutlook(
                r.option.name,
                ownership(scenario, r),
                demand_cases(scenario, r),
                fleet.gpus if fleet is not None else 0,
                fleet.monthly_usd if fleet is not None else math.nan,
            )
        )
    grid = like_for_like(scenario, results, catalog)
    # the weights as every surface names them (resolve.weights_words): gpt-oss is "published as bf16 + mxfp4
    # experts", not "as bf16" (trial 26 F2)
    runs = [(r.option.name, r.model.name, r.weights_label, weights_words(catalog, r.model)) for r in results if r.meets]
    runs += [
        (g.result.option.name, g.result.model.name, g.result.weights_label, weights_words(catalog, g.result.model))
        for g in grid[:1]
        if g.result is not None and g.result.meets
    ]
    notes = quality_notes(runs, scenario.finance.quality_sign_off)
    switch = model_switch([r.model.name for r in results if r.meets], scenario.finance.quality_sign_off)
    return Outlook(tuple(opts), grid, (*notes, *([switch] if switch else [])))
