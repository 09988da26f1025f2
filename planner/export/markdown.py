"""The review as Markdown, to paste into a document or a ticket (GitHub-flavoured tables).

Every text that comes from a user or a catalog (title, option names, sources) goes through ``md_text``: no
markup, links, HTML or line breaks of its own.
"""

from __future__ import annotations

from planner.export import breakeven, cash_by_year, decision, slow_end
from planner.export import money_tables as money
from planner.export.glossary import terms
from planner.export.ownership import SIZED_AFRESH, amortization_rule, book_value_note
from planner.export.records import Review
from planner.export.tables import (
    LEAD_KEYS,
    Table,
    fmt,
    headroom_table,
    latency_charted,
    levers_table,
    not_evaluated,
    options_table,
    sensitivity_table,
    tco_table,
)
from planner.io.safetext import md_text
from planner.units import counted, is_gb_unit

#: Options-table columns the Markdown shows (the csv and xlsx have them all; the held-out slow end's only where the
#: review has them: ``tables.shows_slow_end``).
MD_OPTION_KEYS = (
    *LEAD_KEYS,
    "tpot_ms",
    "tpot_pessimistic_ms",
    "ttft_peak_s",
    "ttft_s",
    "monthly_usd",
    "usd_per_million_output_tokens",
    "usd_per_million_output_all_in",
    "utilization_average",
    "monthly_usd_high",
    "slow_end_gpus",
    "slow_end_monthly_usd",
    "slow_end_more_usd_per_month",
    "slow_end_note",
    "batch_cap",
    "nodes_note",
    "note",
)
MD_TCO_KEYS = (
    "option",
    "price_kind",
    "gpus",
    "capex_usd",
    "capital_usd_per_month",
    "power_usd_per_month",
    "colocation_usd_per_month",
    "rent_usd_per_month",
    "monthly_usd",
    "annual_usd",
    "usd_per_million_input_tokens",
    "usd_per_million_output_tokens",
    "usd_per_million_output_all_in",
)


def _cell(value, kind: str) -> str:
    """A table cell: text (from users or catalogs) through md_text; numbers as ``fmt`` writes them."""
    return md_text(fmt(value, kind), line_start=False) if kind == "text" else fmt(value, kind)


def md_table(table: Table, keys: tuple[str, ...] | None = None) -> str:
    idx = [i for i, c in enumerate(table.columns) if keys is None or c.key in keys]
    cols = [table.columns[i] for i in idx]
    right = {"int", "usd", "usd2", "pct", "ms", "s", "x"}
    lines = [
        "| " + " | ".join(md_text(c.header, line_start=False) for c in cols) + " |",
        "|" + "|".join("---:" if c.kind in right else "---" for c in cols) + "|",
    ]
    for row in table.rows:
        lines.append("| " + " | ".join(_cell(row[i], table.columns[i].kind) for i in idx) + " |")
    return "\n".join(lines)


def _path(path: str) -> str:
    """The scenario's path as code, unless it holds what a code span cannot (then escaped text)."""
    return f"`{path}`" if path.isprintable() and "`" not in path else md_text(path, line_start=False)


def _source(label: str, url: str) -> str:
    text = md_text(label, line_start=False)
    return f"[{text}](<{url}>)" if url.startswith("https://") and not any(c in url for c in "<> ") else text


def breakeven_section(review: Review) -> list[str]:
    """Break-even: the buy-or-rent lines and each option's cumulative cash by quarter (``planner.export.breakeven``)."""
    table = breakeven.cumulative_table(review)
    if not table.rows:
        return []
    lines = [md_text(x) for x in breakeven.buy_rent_lines(review)]
    return [
        "## Break-even",
        "",
        "Each option's cumulative cash at the end of each quarter: its own fleet, phased as above; bought, capex when "
        "bought, then opex a month; rented, the rent a month; undiscounted, no residual value. A bought option breaks "
        "even against a rented one in the first month its cumulative cash is the lower.",
        "",
        *[x for y in lines for x in (y, "")],
        md_table(table),
        "",
    ]


def cash_by_year_section(review: Review) -> list[str]:
    """Cash by year: the compared options' money per year of the horizon (``planner.export.cash_by_year``)."""
    table = cash_by_year.cash_by_year_table(review)
    if not table.rows:
        return []
    return [
        "## Cash by year",
        "",
        md_text(cash_by_year.cash_by_year_note(review)),
        "",
        md_table(table),
        "",
    ]


def _money_sections(review: Review) -> list[str]:
    """Like for like, ownership over the horizon (with the margin's price), demand cases and quarterly phasing."""
    fin, w = review.scenario.finance, review.scenario.workload
    return [
        "## Like for like",
        "",
        "Every GPU of the scenario x price kind x weight precision, sized and costed the same way; ranked by monthly "
        "cost at the planned peak. A row of an option's GPU, price kind and weights pays that option's price. Price "
        "from: the catalog quote's provider and date (stale: older than a year on the review's date), or \"scenario "
        "file\" and the option whose quote it is; a reserved quote adds its gap to the same provider's on-demand "
        "rate (like for like) and says where the gap to the on-demand price paid mixes providers.",
        "",
        md_table(money.grid_table(review)),
        "",
        f"## Ownership over {fin.horizon_months} months",
        "",
        f"Traffic grows linearly to the planned peak over {w.horizon_months} months, then stays; each quarter's fleet "
        "is the planned fleet scaled to the peak of that quarter's last month (same group and requests/s per "
        "replica, not sized again; bought GPUs are kept). Full fleet: the planned-peak fleet "
        f"from month 1. Cost of capital {fin.cost_of_capital:.1%} a year, residual value "
        f"{fin.residual_value_share:.0%} of capex ([finance] in the scenario){_book_value_words(review)}. Without "
        "margin: the option sized so "
        "that the central prediction, not the pessimistic one, meets the targets.",
        "",
        md_table(money.ownership_table(review)),
        "",
        *breakeven_section(review),
        *cash_by_year_section(review),
        "## Demand cases",
        "",
        f"Each option {SIZED_AFRESH}; the total ramps to that fleet quarter by quarter.",
        "",
        md_table(money.cases_table(review)),
        "",
        "## Fleet by quarter",
        "",
        md_text(money.quarters_heading(review)) + ".",
        "",
        md_table(money.phasing_table(review)),
        "",
    ]


def render_markdown(review: Review) -> str:
    s, w = review.scenario, review.scenario.workload
    rec = review.recommended
    per_model = decision.cheapest_per_model_lines(review)
    out = [
        f"# {md_text(s.title, line_start=False)}",
        "",
        f"Budget review made by planner {review.version} on {review.date} from {_path(review.source)}.",
        "",
        *[f"- {md_text(x, line_start=False)}" for x in per_model],  # each model's cheapest first (trial 31 F14)
        *(["", "Across the models, the cheapest option of any:", ""] if per_model else []),
        f"**Recommendation: {md_text(rec.option.name, line_start=False)}** — {fmt(rec.monthly_usd, 'usd')} a month "
        f"({fmt(rec.monthly_usd * 12, 'usd')} a year), {counted(rec.gpus, 'GPU', ',.0f')}, {rec.money.price_kind} price.",
        "",
        *_decision_box(review),
        f"### {md_text(decision.DETAIL_HEADING, line_start=False)}",
        "",
        md_text(review.reason),
        "",
        *[md_text(x) + "\n" for x in money.money_lines(review)],
        md_text(money.sign_off_line(review)),
        "",
        "## Options",
        "",
        "Ranked by monthly cost among the options that meet the targets "
        f"(TTFT ≤ {w.ttft_target_s:g} s for a p{w.high_percentile:g} prompt, TPOT ≤ {w.tpot_target_s * 1e3:g} ms"
        f"{'' if w.latency_percentile is None else f', each at p{w.latency_percentile:g} of requests'}, "
        "each met by the pessimistic end of the model's range unless the scenario sets another margin). "
        "Price kind: which price each row pays (purchase, on-demand, spot, reserved).",
        "",
        md_table(options_table(review), MD_OPTION_KEYS),
        "",
        *[
            md_text(x) + "\n" for x in slow_end.note_lines(review, "the table above shows each option")
        ],  # the held-out slow end columns, if any
        *_mix_section(review),
        "## Total cost of ownership",
        "",
        f"Bought: capex = GPUs + host servers + network, {amortization_rule(review.scenario.finance)}; opex = power "
        "(IT load x PUE x $/kWh) + colocation ($/kW-month). Rented: the rent is all opex. $ per M input / output "
        "tokens: the bill split by GPU time at the average traffic's sequences in flight per replica, so the output "
        "rate is the decode share alone; all-in: the monthly cost over the output tokens alone (Glossary).",
        "",
        md_table(tco_table(review), MD_TCO_KEYS),
        "",
        *_money_sections(review),
        "## Levers",
        "",
        md_text(f"Levers: {review.baseline_misses}.")  # a named baseline that misses the targets (trial 31 F8)
        if review.baseline_misses
        else f"Each lever changes one thing in the baseline ({md_text(review.baseline.option.name, line_start=False)}); "
        "saving = baseline minus lever (negative: it costs more).",
        "",
        md_table(levers_table(review)),
        "",
    ]
    skipped = not_evaluated(review)
    if skipped:
        out += ["Not evaluated:", "", *[f"- {md_text(x, line_start=False)}" for x in skipped], ""]
    out += ["## Sensitivity", "", md_table(sensitivity_table(review)), ""]
    if latency_charted(review):
        q = latency_charted(review)[0].load_curve.percentile
        out += [
            "## Latency under load",
            "",
            f"Each option's serving replicas (its planned fleet without the spares), fixed, simulated at the planned "
            f"peak; headroom: how much more traffic than the planned peak they take with p{q:g} TTFT and TPOT within "
            "their goals (the targets less the model's margin), not the options table's headroom at peak (the spares' "
            "and whole nodes'). The xlsx charts p50 and p" + f"{q:g} from a quarter to twice the peak.",
            "",
            md_table(headroom_table(review)),
            "",
        ]
    if review.warnings:
        out += ["## Warnings", "", *[f"- {md_text(x, line_start=False)}" for x in review.warnings], ""]
    out += [
        "## Glossary",
        "",
        *[f"- **{term}**: {md_text(text, line_start=False)}" for term, text in terms(bool(review.mixes))],
        "",
    ]
    out += ["## Assumptions", "", "| What | Value | Unit | Source |", "|---|---:|---|---|"]
    for a in review.assumptions:
        if isinstance(a.value, str):
            value = a.value
        elif a.unit == "share":
            value = f"{a.value:.0%}"
        elif is_gb_unit(a.unit):  # memory: 85.90 GB, as the xlsx and the what-if workbook
            value = f"{a.value:,.2f}"
        elif float(a.value).is_integer():  # counts and bytes whole, with separators: 1,372,176 tokens, not 1.37218e+06
            value = f"{a.value:,.0f}"
        else:
            value = f"{a.value:,.6g}"
        value = md_text(value, line_start=False) if isinstance(a.value, str) else value
        what, unit = md_text(a.what, line_start=False), md_text(a.unit, line_start=False)
        links = "".join(f"; {_source(name, url)}" for name, url in a.links)  # a median: each quote's page
        out.append(f"| {what} | {value} | {unit} | {_source(a.label, a.url)}{links} |")
    return "\n".join(out) + "\n"


def _decision_box(review: Review) -> list[str]:
    """The decision box (``decision.decision_rows``) as a two-column table, then a blank line."""
    rows = [f"| {md_text(label, line_start=False)} | {md_text(text, line_start=False)} |"
            for label, text in decision.decision_rows(review)]  # fmt: skip
    return ["| Decision | |", "|---|---|", *rows, ""]


def _book_value_words(review: Review) -> str:
    """ "; bought GPUs amortized past the horizon at their book value then (Warnings)" where an option's residual is
    its book value at the horizon's end (``ownership.book_value_note``, trial 26 F13); "" otherwise."""
    fin = review.scenario.finance
    if not any(book_value_note(o, fin) for o in review.scenario.option):
        return ""
    return "; bought GPUs amortized past the horizon at their book value at its end (Warnings)"


def _mix_section(review: Review) -> list[str]:
    """ "## Mixed fleets": what a mix is, a line per mix, the table of parts and totals; [] without a [[mix]]."""
    if not review.mixes:
        return []
    return [
        "## Mixed fleets",
        "",
        md_text(money.MIX_NOTE),
        "",
        *[md_text(x) + "\n" for x in money.mix_lines(review)],
        md_table(money.mix_table(review)),
        "",
    ]
