"""The review as plain tables (headers, kinds, rows of numbers and text): what every writer lays out.

A column's ``kind`` says how to show its numbers: "int", "usd" (whole dollars), "usd2" (cents), "pct",
"ms", "s", "x" (a multiplier) or "text". Writers format; nothing here computes a capacity figure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from planner.accuracy.loaded_ranges import LoadedRange
from planner.export import held_out
from planner.export.evaluate import sized_levels
from planner.export.glossary import LOAD_LABEL, OUTPUT_ALL_IN_LABEL, OUTPUT_SHARE_LABEL
from planner.export.margin_releases import row_words
from planner.export.outlook import stale_text
from planner.export.ownership import SIZED_AFRESH, capital_terms, host_basis
from planner.export.records import Result, Review
from planner.export.scenario import Workload
from planner.export.slow_end import basis_text, ratios_text
from planner.serving.fleet import HEADROOM_STEP
from planner.units import counted, fmt_usd_per_gpu_hour


@dataclass(frozen=True)
class Column:
    header: str
    kind: str
    key: str  # stable machine name (csv header)


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[tuple, ...]


def _n(x) -> float:
    return float(x) if x is not None else math.nan


#: The batch per replica's label, on every table that shows it: the most sequences one replica decodes at once (the
#: engine's ``max_num_seqs`` as the review sets it; each holds its KV cache), not requests per second, and a cap, not
#: a count of the sequences that run (trial 25 F2: at the traffic fewer run; Assumptions' memory rows give the chain).
BATCH_LABEL = "Sequences in flight per replica, at most (max batch)"
#: Where an option's max batch sets its fleet, that fleet against the engine's default limit's (``cap_note``): a
#: column of its own, on Details and in the Markdown, so Options' Note prints on one page (trial 14 F15).
BATCH_CAP_LABEL = "Max batch against the engine's default"
#: What the option's replica is not modelled with (``held_out.nodes_note``: across nodes, the held-out ranges' slow end
#: open; dp-ep's large-scale MoE recipe): on Details and in the Markdown, not in Options' Note (trial 14 F15).
NODES_LABEL = "Slower than modelled / not modelled"


def tpot_long_label(workload: Workload) -> str:
    """The label of ``_tpot_long_ms``: on its own basis (the full batch, every sequence at the high-percentile
    prompt + output, a decode step with no prompt in it), not TPOT at peak's (the simulated percentile at the
    peak's traffic, lengths spread around the means, prompts sharing the steps), so it can read lower than TPOT at
    peak."""
    return (
        f"TPOT, decode step alone: full batch, every sequence at p{workload.high_percentile:g} prompt + output "
        f"({workload.sizing_context_tokens:,} tokens)"
    )


def options_table(review: Review) -> Table:
    """One row per option, ranked: meeting options by monthly cost, then the ones that cannot meet the targets."""
    pct = f"{review.scenario.traffic_change:.0%}"
    w = review.scenario.workload
    nodes = nodes_notes(review)
    cols = (
        Column("Rank", "int", "rank"),
        Column("Option", "text", "option"),
        Column("GPU", "text", "gpu"),
        Column("Model", "text", "model"),
        Column("Weights / KV", "text", "precisions"),
        Column("Pricing", "text", "pricing"),
        Column("Price kind", "text", "price_kind"),
        Column("Price from", "text", "price_from"),
        Column("Price date", "text", "price_date"),
        Column("Meets targets", "text", "meets_targets"),
        Column("GPUs", "int", "gpus"),
        Column("GPUs per replica", "int", "gpus_per_replica"),
        Column("Replicas (incl. spare)", "int", "replicas"),
        Column(BATCH_LABEL, "int", "batch_per_replica"),
        Column("TPOT at peak", "ms", "tpot_ms"),
        Column("TPOT, pessimistic", "ms", "tpot_pessimistic_ms"),
        Column(tpot_long_label(w), "ms", "tpot_long_ms"),
        Column(f"TTFT at peak (simulated p{_sized_percentile(review):g})", "s", "ttft_peak_s"),
        Column(f"TTFT, one p{w.high_percentile:g} prompt alone", "s", "ttft_s"),
        Column("Margin used", "pct", "margin"),
        Column("$ per GPU-month", "usd", "usd_per_gpu_month"),
        Column("Monthly cost", "usd", "monthly_usd"),
        Column("Annual cost", "usd", "annual_usd"),
        Column("Capex up front", "usd", "capex_usd"),
        Column("Opex per month", "usd", "opex_usd_per_month"),
        Column("$ per M input tokens", "usd2", "usd_per_million_input_tokens"),
        Column(OUTPUT_SHARE_LABEL, "usd2", "usd_per_million_output_tokens"),
        Column(OUTPUT_ALL_IN_LABEL, "usd2", "usd_per_million_output_all_in"),
        Column(LOAD_LABEL, "pct", "utilization_average"),
        Column("Headroom (peak)", "pct", "headroom_peak"),
        Column(f"GPUs at {MINUS}{pct} traffic", "int", "gpus_low"),
        Column(f"Monthly at {MINUS}{pct}", "usd", "monthly_usd_low"),
        Column(f"GPUs at +{pct} traffic", "int", "gpus_high"),
        Column(f"Monthly at +{pct}", "usd", "monthly_usd_high"),
        *slow_end_columns(review),
        Column(BATCH_CAP_LABEL, "text", "batch_cap"),
        *((Column(NODES_LABEL, "text", "nodes_note"),) if any(nodes) else ()),
        Column("Note", "text", "note"),
    )
    shown = len(slow_end_columns(review))
    rows = []
    for i, (r, note) in enumerate(zip(review.results, nodes, strict=True), start=1):
        row = _option_row(i, r, review)
        shows = (note,) if any(nodes) else ()  # Details' and the Markdown's, not the Options note (trial 14 F15)
        rows.append((*row[:-1], *slow_end_values(r)[:shown], cap_note(r), *shows, row[-1]))  # before the note
    return Table(cols, tuple(rows))


def nodes_notes(review: Review) -> list[str | None]:
    """Each option's ``NODES_LABEL`` cell (``held_out.nodes_note``: across nodes, dp-ep's recipe; None where blank):
    the column is shown only where some option has one (Details, the Markdown and the CSV alike), not as a column of
    blanks."""
    return [held_out.nodes_note(r) or None for r in review.results]


def detail_keys(table: Table) -> tuple[str, ...]:
    """``DETAIL_KEYS`` the options ``table`` has (``nodes_note`` only where some option has one: ``nodes_notes``)."""
    have = {c.key for c in table.columns}
    return tuple(k for k in DETAIL_KEYS if k in have)


#: The fleet at the slow end of the held-out ranges under load (``planner.export.slow_end``), against the plan's: a
#: sensitivity, shown, not applied; the columns exist only where some option has it (``shows_slow_end``).
SLOW_END_COLUMNS = (
    Column("Held-out slow end: GPUs (shown, not applied)", "int", "slow_end_gpus"),
    Column("Held-out slow end: GPUs over plan", "int", "slow_end_more_gpus"),
    Column("Held-out slow end: monthly cost", "usd", "slow_end_monthly_usd"),
    Column("Held-out slow end: $/month over plan", "usd", "slow_end_more_usd_per_month"),
    Column("Held-out slow end: note", "text", "slow_end_note"),
)
SLOW_END_KEYS = tuple(c.key for c in SLOW_END_COLUMNS)


def slow_end_columns(review: Review) -> tuple[Column, ...]:
    """The review's ``SLOW_END_COLUMNS``: none without a sensitivity (``shows_slow_end``), the note only where some
    option is not met at the slow end or has a ratio the plan's margin or its own runs set (``slow_end.basis_text``;
    no column of blanks)."""
    if not shows_slow_end(review):
        return ()
    noted = any(r.slow_end is not None and (not r.slow_end.meets or basis_text(r.slow_end)) for r in review.results)
    return SLOW_END_COLUMNS if noted else SLOW_END_COLUMNS[:-1]


def shows_slow_end(review: Review) -> bool:
    """Whether some option carries the fleet at the held-out ranges' slow end (none without the ranges' table, or
    when no option was sized on simulated percentiles): the columns are then absent, not blank."""
    return any(r.slow_end is not None for r in review.results)


def slow_end_values(r: Result) -> tuple:
    """An option's ``SLOW_END_COLUMNS``: GPUs, GPUs over the plan's, monthly cost, its excess over the plan's, and the
    note: ``SlowEnd.shortfall`` (``slow_end.NOT_MET`` first) where no replica count meets the targets there (no
    numbers), then which ratios the plan's margin or the deployment's own runs set (``slow_end.basis_text``; trial 27
    F4), None where neither; all None without one."""
    s = r.slow_end
    if s is None:
        return (None,) * len(SLOW_END_COLUMNS)
    basis = basis_text(s)
    opened = held_out.open_end_of(r)  # a replica across nodes: this fleet is a lower bound (planner.deploy)
    basis = "; ".join(x for x in (basis, f"at least this: {opened}" if opened and s.meets else "") if x)
    if not s.meets:
        return None, None, None, None, "; ".join(x for x in (f"{s.shortfall} ({ratios_text(s)})", basis) if x)
    return s.gpus, s.gpus - r.gpus, s.monthly_usd, s.monthly_usd - r.monthly_usd, basis or None


def main_keys(review: Review) -> tuple[str, ...]:
    """``MAIN_KEYS``, with the review's slow-end columns (``slow_end_columns``) after TPOT at peak."""
    at = MAIN_KEYS.index("tpot_ms") + 1
    return (*MAIN_KEYS[:at], *(c.key for c in slow_end_columns(review)), *MAIN_KEYS[at:])


def prompt_time_note(r: Result) -> str:
    """Why a fleet is huge when decode alone nearly uses the TPOT goal: prompts then get 1 - TPOT / goal of each
    replica's time, and the replica count grows as 1 / that share (``sizing.max_rate_per_replica``). Said when
    prompts set the replica count and get under 10% of the time; empty otherwise."""
    if not r.meets:
        return ""
    free = 1.0 - float(r.replica.tpot_s) / r.tpot_goal_s
    if not bool(r.fleet.prompt_bound) or free >= 0.1:
        return ""
    return (
        f"TPOT {float(r.replica.tpot_s) * 1e3:.1f} ms of a {r.tpot_goal_s * 1e3:.1f} ms goal leaves {free:.1%} of "
        "the time for prompts"
    )


#: The Options row's note on a named baseline that misses the targets: the review is written, the levers sized from it
#: with no saving booked (trial 31 F8; ``planner.export.review.build_review``).
BASELINE_MISSES = "baseline of the levers, misses the targets"


def reserved_note(r: Result, review: Review) -> str:
    """A reserved option's monthly cost under its contracts where its term is known (``finance.reserved_cash``, the
    Ownership sheet's Commitment): the horizon's reserved cash / its months, beside the row's peak fleet x the rate,
    and the cash due after the horizon; "" otherwise (F17)."""
    oo = review.outlook.of(r.option.name) if review.outlook is not None and r.meets else None
    rc = oo.ownership.reserved if oo is not None else None
    if rc is None:
        return ""
    beyond = f", ${rc.beyond_horizon_usd:,.0f} more due after it" if rc.beyond_horizon_usd else ""
    return (
        f"reserved in {rc.term_months}-month contracts ({rc.basis}): ${rc.monthly_usd:,.0f} a month over the "
        f"{rc.horizon_months}-month horizon (its reserved cash / {rc.horizon_months} months; the monthly cost here is "
        f"the peak fleet x the rate){beyond}"
    )


def _option_row(rank: int, r: Result, review: Review) -> tuple:
    o = r.option
    role = "recommended" if r is review.recommended else ("baseline for the levers" if r is review.baseline else "")
    older = row_words(r, review.scenario.workload.latency_margin)  # a margin mostly older releases' (trial 31 F4)
    weak = f"price: {r.money.quote.caveat}" if r.money.quote is not None and r.money.quote.caveat else ""  # trial 33 F1
    parts = (role, whole_units_note(r), weak, older, r.layout_chosen, prompt_time_note(r), reserved_note(r, review))
    note = "; ".join(x for x in parts if x)
    price = (
        f"bought, ${r.money.purchase_usd:,.0f}/GPU + {host_basis(r.money, r.gpu)}, "
        f"{capital_terms(o, review.scenario.finance)}"
        if r.money.pricing == "purchase"
        else f"rented, {fmt_usd_per_gpu_hour(r.money.cloud_usd_per_gpu_hour)}/GPU-hour"
        + (f", billed in {r.money.node_size}-GPU instances" if r.money.node_size > 1 else "")
    )
    # what every option shows, met or not: option, GPU, model, precisions, pricing, price kind, source and date
    chosen = (o.name, r.gpu.name, r.model.name, f"{r.weights_label} / {r.kv_precision}", price, r.money.price_kind)
    quote = (r.money.price_provider, _dated(r, review.date))
    unmet = "; ".join(x for x in (role and BASELINE_MISSES, r.shortfall, older, r.layout_chosen) if x)
    if not r.meets:
        return (None, *chosen, *quote, "no", *([None] * 24), unmet)
    f, rep = r.fleet, r.replica
    return (
        rank,
        *chosen,
        *quote,
        "yes",
        int(f.gpus),
        int(rep.gpus),
        int(f.replicas),
        r.batch_per_replica,
        float(f.tpot_peak_s) * 1e3,
        float(f.tpot_peak_s) * 1e3 * (1 + r.pessimistic_high),
        _tpot_long_ms(r),
        float(r.under_load.result.ttft_s.at(r.under_load.percentile)) if r.under_load is not None else None,
        rep.ttft_s,
        r.margin,
        _n(f.usd_per_gpu_month),
        _n(f.monthly_usd),
        _n(f.monthly_usd) * 12,
        r.money.capex_usd_per_gpu * int(f.gpus),
        r.money.opex_usd_per_gpu_month * int(f.gpus),
        _n(f.usd_per_million_input),
        _n(f.usd_per_million_output),
        _n(f.usd_per_million_output_all_in),
        _n(f.utilization_average),
        _n(f.headroom_peak),
        int(r.low.gpus),
        _n(r.low.monthly_usd),
        int(r.high.gpus),
        _n(r.high.monthly_usd),
        note,
    )


def _sized_percentile(review: Review) -> float:
    """The percentile the options were sized on under load (the workload's; 95 by default)."""
    return next((r.under_load.percentile for r in review.results if r.under_load is not None), 95.0)


def tpot_ranges(review: Review, ranges: Mapping[tuple[str, str], LoadedRange]) -> Column | None:
    """The options table's "TPOT at peak" held-out range column (``held_out.range_text`` of each option's TPOT at peak,
    the simulated sizing percentile's, in ms), or None when no option was sized on simulated percentiles (its TPOT at
    peak is then the model's, not the simulation's) or ``ranges`` (``load_loaded_ranges``'s) has no range for it (an
    install without ``loaded_residuals.csv``: no column of blanks). Its values: ``tpot_range_values``."""
    if not any(
        r.under_load is not None and held_out.range_for(ranges, "tpot", r.under_load.percentile) is not None
        for r in review.results
    ):
        return None
    return Column(f"TPOT at peak: {held_out.LABEL}", "text", "tpot_range")


def tpot_range_values(review: Review, ranges: Mapping[tuple[str, str], LoadedRange]) -> list[str | None]:
    """Per option, in the review's order: its TPOT at peak's held-out range, None where it does not meet the targets
    or was not sized on simulated percentiles."""
    out: list[str | None] = []
    for r in review.results:
        sim = r.under_load if r.meets else None
        if sim is None:
            out.append(None)
            continue
        rng = held_out.range_for(ranges, "tpot", sim.percentile)
        out.append(held_out.range_text(float(r.fleet.tpot_peak_s) * 1e3, rng, "ms", held_out.open_end_of(r)) or None)
    return out


def _dated(r: Result, review_date: str) -> str:
    """The quote's date, '(stale)' when older than PRICE_STALE_AFTER_DAYS on the review's date; '' for the scenario's own."""
    stale = stale_text(r, review_date)
    dated = r.money.price_date
    if r.money.price_provider.startswith("median of "):  # each quote's date: the range, not the oldest alone
        days = sorted(set(re.findall(r"\((\d{4}-\d{2}-\d{2})\)", r.money.price_provider)))
        dated = f"{days[0]} to {days[-1]}" if len(days) > 1 else dated
    return dated + (f" ({stale})" if stale else "")


def tco_table(review: Review) -> Table:
    """Total cost of ownership of each option that meets the targets: capex up front, then a month and a year.

    Owned: capex = GPUs x GPU price + nodes x (host server + network), charged a month as ``ownership.option_money``
    does (straight line, or a level payment at [finance]'s cost of capital); opex = power (IT load x PUE x $/kWh) +
    colocation ($/kW-month of IT load). Rented: no capex; the rent is all opex.
    """
    cols = (
        Column("Option", "text", "option"),
        Column("Price kind", "text", "price_kind"),
        Column("GPUs", "int", "gpus"),
        Column("Nodes", "int", "nodes"),
        Column("Capex: GPUs", "usd", "capex_gpus_usd"),
        Column("Capex: host servers", "usd", "capex_hosts_usd"),
        Column("Capex: network", "usd", "capex_network_usd"),
        Column("Capex total", "usd", "capex_usd"),
        Column("Amortization months", "int", "amortization_months"),
        Column("Capex per month", "usd", "capital_usd_per_month"),
        Column("Power per month", "usd", "power_usd_per_month"),
        Column("Colocation per month", "usd", "colocation_usd_per_month"),
        Column("Rent per month", "usd", "rent_usd_per_month"),
        Column("Total per month", "usd", "monthly_usd"),
        Column("Total per year", "usd", "annual_usd"),
        Column("$ per M input tokens", "usd2", "usd_per_million_input_tokens"),
        Column(OUTPUT_SHARE_LABEL, "usd2", "usd_per_million_output_tokens"),
        Column(OUTPUT_ALL_IN_LABEL, "usd2", "usd_per_million_output_all_in"),
        Column("$ per M tokens (all)", "usd2", "usd_per_million_tokens"),
    )
    rows = []
    for r in review.results:
        if not r.meets:
            continue
        m, n = r.money, r.gpus
        owned = m.pricing == "purchase"
        nodes = n / m.node_size if owned else None
        rows.append(
            (
                r.option.name,
                m.price_kind,
                n,
                nodes,
                n * m.purchase_usd if owned else None,
                nodes * m.host_server_usd.value if owned else None,
                nodes * m.networking_usd.value if owned else None,
                n * m.capex_usd_per_gpu if owned else None,
                r.option.amortization_months if owned else None,
                n * m.capital_usd_per_gpu_month if owned else None,
                n * m.power_usd_per_gpu_month if owned else None,
                n * m.colocation_usd_per_gpu_month if owned else None,
                None if owned else r.monthly_usd,
                r.monthly_usd,
                r.monthly_usd * 12,
                _n(r.fleet.usd_per_million_input),
                _n(r.fleet.usd_per_million_output),
                _n(r.fleet.usd_per_million_output_all_in),
                _n(r.fleet.usd_per_million_tokens),
            )
        )
    return Table(cols, tuple(rows))


def _tpot_long_ms(r: Result) -> float:
    """TPOT of a decode step alone at the chosen batch (``batch_per_replica``, the full batch) with every sequence at
    the high-percentile prompt + output (``Workload.sizing_context_tokens``, memory's worst case), before stretching
    for prompts: ``tpot_long_label``'s basis, not TPOT at peak's."""
    curve = r.candidate.tpot_long_by_batch_s if r.candidate else ()
    b = r.batch_per_replica
    return curve[b - 1] * 1e3 if 0 < b <= len(curve) else math.nan


def levers_table(review: Review) -> Table:
    """The levers evaluated against the baseline: GPUs as replicas x group size, monthly cost, saving, TPOT.

    A lever that could not be evaluated has no row (``not_evaluated`` lists it with the reason).
    """
    cols = (
        Column("Lever", "text", "lever"),
        Column("Change", "text", "change"),
        Column("GPUs", "int", "gpus"),
        Column("Replicas", "int", "replicas"),
        Column("GPUs per replica", "int", "gpus_per_replica"),
        Column(BATCH_LABEL, "int", "batch_per_replica"),
        Column("Monthly cost", "usd", "monthly_usd"),
        Column("Saving per month", "usd", "saving_usd_per_month"),
        Column("TPOT at peak", "ms", "tpot_ms"),
        Column("Effect", "text", "effect"),
    )

    def sized(r: Result) -> tuple:
        return (r.gpus, int(r.fleet.replicas), int(r.replica.gpus), r.batch_per_replica, r.monthly_usd)

    b = review.baseline
    rows = [
        ("Baseline", b.option.name, *sized(b), None, float(b.fleet.tpot_peak_s) * 1e3, "what the levers start from")
        if b.meets
        else ("Baseline", b.option.name, *([None] * 7), f"misses the targets ({b.shortfall}): no saving booked")
    ]
    for lv in review.levers:
        r = lv.result
        if r is None:
            continue
        if r.meets:
            saving = lv.saving_usd_per_month if math.isfinite(lv.saving_usd_per_month) else None
            rows.append((lv.name, lv.change, *sized(r), saving, float(r.fleet.tpot_peak_s) * 1e3, lv.note))
        else:
            rows.append((lv.name, lv.change, None, None, None, None, None, None, None, lv.note))
    return Table(cols, tuple(rows))


def not_evaluated(review: Review) -> list[str]:
    """'Lever: reason' for each lever that has no result (not applicable, or not above the baseline)."""
    return [f"{lv.name}: {lv.note} ({lv.change})" for lv in review.levers if lv.result is None]


def planned_peak(review: Review) -> tuple[float, str]:
    """(the peak traffic the fleet is planned for, its unit): today's peak x (1 + growth over the horizon), in
    requests/s for a workload given by rate, else in concurrent requests."""
    w = review.scenario.workload
    if w.by_rate:
        return w.peak_requests_per_s * w.growth_factor, "requests/s"
    return w.peak_concurrent_requests * w.growth_factor, "concurrent requests"


def sensitivity_table(review: Review) -> Table:
    """The recommended option at traffic -x, as planned and +x: GPUs, monthly cost, and the cheapest option there."""
    x = review.scenario.traffic_change
    peak, unit = planned_peak(review)
    rec = review.recommended
    meeting = [r for r in review.results if r.meets]
    cols = (
        Column("Traffic", "text", "traffic"),
        Column(f"Peak ({unit})", "x", "peak"),
        Column(f"GPUs ({rec.option.name})", "int", "gpus"),
        Column("Monthly cost", "usd", "monthly_usd"),
        Column("Cheapest option there", "text", "cheapest"),
    )
    rows = []
    for label, mult, attr in ((f"-{x:.0%}", 1 - x, "low"), ("as planned", 1.0, "fleet"), (f"+{x:.0%}", 1 + x, "high")):
        cheapest = min(meeting, key=lambda r: (float(getattr(r, attr).monthly_usd), review.results.index(r)))
        f = getattr(rec, attr)
        rows.append((label, peak * mult, int(f.gpus), float(f.monthly_usd), cheapest.option.name))
    return Table(cols, tuple(rows))


#: The charts show at most this many options, and none costing more than CHART_COST_LIMIT x the recommended one,
#: so that one very expensive option does not flatten the lines a reader compares.
CHART_MAX_OPTIONS = 5
CHART_COST_LIMIT = 3.0


def charted(review: Review) -> list[Result]:
    """The options the charts show: the cheapest few that meet the targets (see CHART_MAX_OPTIONS)."""
    meeting = [r for r in review.results if r.meets]
    limit = review.recommended.monthly_usd * CHART_COST_LIMIT
    return [r for r in meeting if r.monthly_usd <= limit][:CHART_MAX_OPTIONS]


def sweep_table(review: Review) -> Table:
    """Monthly cost and GPUs of the charted options over a range of peak traffic (the charts' data): each option's
    ``sweep`` (``evaluate.charted_fleets``: sized afresh at the levels the review sizes afresh, scaled between)."""
    peak, unit = planned_peak(review)
    meeting = charted(review)
    cols = (
        Column(f"Peak traffic ({unit})", "x", "peak"),
        *[Column(f"{r.option.name}: monthly cost", "usd", f"monthly_{i}") for i, r in enumerate(meeting)],
        *[Column(f"{r.option.name}: GPUs", "int", f"gpus_{i}") for i, r in enumerate(meeting)],
    )
    rows = []
    for j, mult in enumerate(review.sweep_multipliers):
        rows.append(
            (peak * mult, *[float(r.sweep.monthly_usd[j]) for r in meeting], *[int(r.sweep.gpus[j]) for r in meeting])
        )
    return Table(cols, tuple(rows))


def charts_sizing_text(review: Review) -> str:
    """How the charts' fleets are sized, naming the traffic levels (``evaluate.charted_fleets``): "At 0.8x, 1x, 1.2x
    and 2x the planned peak (48, 60, 72 and 120 requests/s: Demand cases and Details' -/+ columns) each option's fleet
    is sized afresh at that traffic (...), the same figures as those tables; at the other traffic levels it is the fleet
    sized at the nearest of those levels below (the lowest, under them) scaled to it (same group and requests/s per
    replica), not sized again." A stress case past the charts' last level is said to be left off."""
    peak, unit = planned_peak(review)
    levels = sized_levels(review.scenario)
    fresh = [m for m in review.sweep_multipliers if math.isclose(m, 1.0) or any(math.isclose(m, s) for s in levels)]
    past = [m for m in levels if not any(math.isclose(m, f) for f in fresh)]  # past the charts' last level
    text = (
        f"At {_and(f'{m:g}x' for m in fresh)} the planned peak ({_and(f'{peak * m:,.3g}' for m in fresh)} {unit}: "
        f"Demand cases and Details' -/+ columns) each option's fleet is {SIZED_AFRESH}, the same figures as those "
        "tables; at the other traffic levels it is the fleet sized at the nearest of those levels below (the lowest, "
        "under them) scaled to it (same group and requests/s per replica), not sized again."
    )
    if past:
        text += f" The high demand case (x{past[0]:g}) lies past the charts."
    return text


def _and(words) -> str:
    """'a', 'a and b', 'a, b and c'."""
    w = list(words)
    return w[0] if len(w) == 1 else f"{', '.join(w[:-1])} and {w[-1]}"


def latency_charted(review: Review) -> list[Result]:
    """The options the latency charts show: of those meeting the targets with a latency-against-load curve (sized
    on percentiles) and costing at most ``CHART_COST_LIMIT`` x their own model's cheapest, each model's cheapest
    first, then the next cheapest, at most ``CHART_MAX_OPTIONS``, in the review's order. The cost limit is per model:
    a cheaper option of another model left every option of the model a reader would deploy off the page (trial 24
    F7); with one model it is the cost charts' choice."""
    curved = [r for r in review.results if r.meets and r.load_curve is not None]
    ranked = sorted(curved, key=lambda r: (float(r.monthly_usd), review.results.index(r)))
    firsts = [r for i, r in enumerate(ranked) if all(q.model.name != r.model.name for q in ranked[:i])]
    cheapest = {r.model.name: float(r.monthly_usd) for r in firsts}
    rest = [r for r in ranked if all(r is not f for f in firsts)]
    rest = [r for r in rest if float(r.monthly_usd) <= cheapest[r.model.name] * CHART_COST_LIMIT]
    kept = {id(r) for r in (firsts + rest)[:CHART_MAX_OPTIONS]}
    return [r for r in review.results if id(r) in kept]


#: The latency charts leave out a figure above this many times its target (its queue has run away; the axis stays
#: readable near the target).
LATENCY_CHART_CAP = 3.0


#: The latency table's figures per option: (metric, which percentile: "p50" or the sizing's "high", column kind).
LATENCY_FIGURES = (("ttft", "p50", "s"), ("ttft", "high", "s"), ("tpot", "p50", "ms"), ("tpot", "high", "ms"))


def latency_table(review: Review, ranges: Mapping[tuple[str, str], LoadedRange] | None = None) -> Table:
    """The latency-against-load view's data: traffic (the whole fleet's requests/s) and, per option with a curve,
    its planned fleet's p50 and high-percentile TTFT (s) and TPOT (ms); blank past a replica's capacity or above
    ``LATENCY_CHART_CAP`` x the target. With ``ranges`` (``load_loaded_ranges``'s), each figure is followed by its
    held-out range as text (``held_out.range_text``; key ``<figure's key>_range``, blank with its figure)."""
    shown = latency_charted(review)
    q = shown[0].load_curve.percentile if shown else 95.0
    cols = [Column("Traffic (requests/s)", "x", "traffic")]
    for i, r in enumerate(shown):
        name = r.option.name
        for metric, which, kind in LATENCY_FIGURES:
            label = f"{name}: p{50 if which == 'p50' else q:g} {metric.upper()}"
            cols.append(Column(label, kind, f"{metric}_{which}_{i}"))
            if ranges is not None:
                cols.append(Column(f"{label}: {held_out.LABEL}", "text", f"{metric}_{which}_{i}_range"))
    if not shown:
        return Table(tuple(cols), ())
    c0 = shown[0].load_curve
    w = review.scenario.workload

    def v(x: float, target: float, scale: float = 1.0) -> float:
        return x * scale if math.isfinite(x) and x <= LATENCY_CHART_CAP * target else math.nan

    rows = []
    for j, mult in enumerate(c0.multipliers):
        row = [c0.peak_requests_per_s * mult]
        for r in shown:
            c = r.load_curve
            for metric, which, kind in LATENCY_FIGURES:
                target = w.ttft_target_s if metric == "ttft" else w.tpot_target_s
                x = v(getattr(c, f"{metric}_{which}_s")[j], target, 1e3 if kind == "ms" else 1.0)
                row.append(x)
                if ranges is not None:
                    rng = held_out.range_for(ranges, metric, 50.0 if which == "p50" else c.percentile)
                    row.append(held_out.range_text(x, rng, kind, held_out.open_end_of(r)) or None)
        rows.append(tuple(row))
    return Table(tuple(cols), tuple(rows))


def serving_headroom_text(curve) -> str:
    """The Latency sheet's headroom (``LoadCurve.headroom``: the extra traffic the serving replicas alone, spares
    not used, take before a simulated percentile misses its goal) in words: "under 2%" below the bisection's step,
    "over 100%" past the curve's end, else "+5%"."""
    if math.isinf(curve.headroom):
        return "over 100%"
    if curve.headroom < HEADROOM_STEP:
        return f"under {HEADROOM_STEP:.0%}"
    return f"+{curve.headroom:.0%}"


def headroom_table(review: Review, ranges: Mapping[tuple[str, str], LoadedRange] | None = None) -> Table:
    """Per option with a curve: its planned replicas, the simulated high-percentile TTFT and TPOT at the planned
    peak against their goals, and the headroom (``LoadCurve.headroom``: more traffic it takes within the goals).
    With ``ranges`` (``load_loaded_ranges``'s), each simulated figure is followed by its held-out range as text
    (``held_out.range_text``; keys ``ttft_peak_range``, ``tpot_peak_range``; headed ``held_out.SHORT_LABEL``: the
    table prints on one page, and its note opens with the full label)."""
    shown = latency_charted(review)
    ranged = ranges is not None
    cols = (
        Column("Option", "text", "option"),
        Column("Serving replicas", "int", "replicas"),
        Column("TTFT at peak (s)", "s", "ttft_peak"),
        *([Column(f"TTFT {held_out.SHORT_LABEL}", "text", "ttft_peak_range")] if ranged else []),
        Column("TTFT goal (s)", "s", "ttft_goal"),
        Column("TPOT at peak (ms)", "ms", "tpot_peak"),
        *([Column(f"TPOT {held_out.SHORT_LABEL}", "text", "tpot_peak_range")] if ranged else []),
        Column("TPOT goal (ms)", "ms", "tpot_goal"),
        Column("Headroom over the planned peak", "text", "headroom"),
    )
    rows = []
    for r in shown:
        c, sim = r.load_curve, r.under_load
        h = serving_headroom_text(c)
        ttft, tpot = sim.result.ttft_s.at(c.percentile), sim.result.tpot_s.at(c.percentile) * 1e3
        ttft_range, tpot_range = (), ()
        if ranged:
            opened = held_out.open_end_of(r)  # a replica across nodes: the slow end is a lower bound (trial 31 F7)
            ttft_rng, tpot_rng = (held_out.range_for(ranges, m, c.percentile) for m in ("ttft", "tpot"))
            ttft_range = (held_out.range_text(ttft, ttft_rng, "s", opened) or None,)
            tpot_range = (held_out.range_text(tpot, tpot_rng, "ms", opened) or None,)
        rows.append(
            (
                r.option.name,
                c.replicas,
                ttft,
                *ttft_range,
                c.ttft_goal_s,
                tpot,
                *tpot_range,
                c.tpot_goal_s * 1e3,
                h,
            )
        )
    return Table(cols, tuple(rows))


def select(table: Table, keys: tuple[str, ...]) -> Table:
    """The same table with only the columns named by ``keys``, in that order."""
    where = {c.key: i for i, c in enumerate(table.columns)}
    idx = [where[k] for k in keys]
    return Table(tuple(table.columns[i] for i in idx), tuple(tuple(row[i] for i in idx) for row in table.rows))


#: The minus sign of a header's "-20%": a hyphen lets a wrapped header break after it ("Monthly at -" / "20%", a
#: trial's printed Details); U+2212 binds to the number that follows it (Unicode line breaking: PR x NU).
MINUS = "\u2212"

#: The options table's first columns in every view (xlsx, Markdown): which option, how it is paid, whether it
#: meets the targets, and its GPUs.
LEAD_KEYS = ("rank", "option", "price_kind", "meets_targets", "gpus", "gpus_per_replica", "replicas")
#: The options table as a finance reader sees it first, and the details that follow it.
MAIN_KEYS = (
    *LEAD_KEYS,
    "batch_per_replica",
    "tpot_ms",
    "ttft_peak_s",
    "ttft_s",
    "usd_per_gpu_month",
    "monthly_usd",
    "annual_usd",
    "usd_per_million_output_tokens",
    "usd_per_million_output_all_in",
    "utilization_average",
    "note",
)
DETAIL_KEYS = (
    "option",
    "gpu",
    "model",
    "precisions",
    "pricing",
    "price_kind",
    "price_from",
    "price_date",
    "tpot_pessimistic_ms",
    "tpot_long_ms",
    "margin",
    "usd_per_million_input_tokens",
    "headroom_peak",
    "gpus_low",
    "monthly_usd_low",
    "gpus_high",
    "monthly_usd_high",
    "batch_cap",
    "nodes_note",
)


def fmt(value, kind: str) -> str:
    """A cell as text for md and the terminal: '$21,913', '29.1 ms', '20%', '—' for empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "usd":
        return f"-${-value:,.0f}" if value < 0 else f"${value:,.0f}"
    if kind == "usd2":
        return f"${value:,.2f}"
    if kind == "pct":
        return f"{value:.0%}"
    if kind == "ms":
        return f"{value:.1f} ms"
    if kind == "s":
        return f"{value:.2f} s"
    if kind == "x":
        return f"{value:,.3g}"
    return str(value)


def whole_units_note(r: Result) -> str:
    """Why an option has more GPUs than its replicas need, where whole servers (bought) or instances (rented) of
    ``Money.node_size`` GPUs round them up (``sizing.gpus_to_buy``): "12 GPUs needed, bought in whole 8-GPU servers";
    "" where the rounding adds none, or the option does not meet the targets. The export command's line of the option
    (trial 34 F9: a bought 8 GPUs beside a rented 3, with no word why)."""
    if not r.meets or r.fleet is None or int(r.money.node_size) <= 1:
        return ""
    needed = int(r.fleet.replicas_needed) * int(r.replica.gpus)  # serving + spare replicas' GPUs
    if r.gpus <= needed:
        return ""
    bought = r.money.pricing == "purchase"
    return (
        f"{counted(needed, 'GPU')} needed, {'bought' if bought else 'rented'} in whole {int(r.money.node_size)}-GPU "
        f"{'servers' if bought else 'instances'}"
    )


def cap_note(result: Result) -> str:
    """The option's note where its batch cap sets its fleet (``batch_cap.EngineLimitFleet.text``), "" elsewhere: the Options
    sheet's and the Markdown's Note, and the export command's line of the option."""
    return result.engine_limit.text if result.engine_limit is not None else ""
