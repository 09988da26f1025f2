"""The options table as CSV, safe to open in a spreadsheet with any separator (formula injection neutralized)."""

from __future__ import annotations

import csv
import io
import math

from planner.export import cash_by_year
from planner.export.records import Result, Review
from planner.export.tables import options_table
from planner.io.safetext import csv_text


def neutralize(text: str) -> str:
    """A text cell that starts no formula whatever separator the spreadsheet uses (planner.io.safetext.csv_text)."""
    return csv_text(text)


def _value(v, kind: str):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if kind == "text":
        return neutralize(str(v))
    if kind in ("usd2",):
        return f"{v:.4f}"
    if kind in ("usd",):
        return f"{v:.2f}"
    if kind in ("pct",):
        return f"{v:.4f}"
    if kind in ("ms", "s", "x"):
        return f"{v:.4g}"
    return str(int(v))


def _share_words(share: float) -> str:
    """A share as a key's words: 0.2 -> "20pct", 0.125 -> "12.5pct"."""
    return f"{share * 100:g}pct"


def sensitivity_keys(review: Review) -> dict[str, str]:
    """The options table's -/+ ``traffic_change`` keys as the CSV names them, the share in the name (trial 26 F17:
    ``gpus_high`` was +20% while the review's Demand cases call x2 "high"): ``gpus_traffic_minus_20pct``,
    ``monthly_usd_traffic_plus_20pct``, ..."""
    x = _share_words(review.scenario.traffic_change)
    return {
        "gpus_low": f"gpus_traffic_minus_{x}",
        "monthly_usd_low": f"monthly_usd_traffic_minus_{x}",
        "gpus_high": f"gpus_traffic_plus_{x}",
        "monthly_usd_high": f"monthly_usd_traffic_plus_{x}",
    }


def money_columns(review: Review) -> tuple[tuple[str, str], ...]:
    """(key, kind) of the money the Summary and Ownership sheets give per option, which the options table lacks
    (trial 26 F17: a finance model fed the CSV had to derive them): the all-tokens rate, the P&L's year (bought:
    straight-line depreciation + opex; rented: the rent), the cash in the first year and over the horizon (the fleet
    added by quarter), the present value at the cost of capital, the residual value, the commitment, and the stress
    case (planned peak x ``stress_multiplier``, the review's "high" demand case)."""
    fin = review.scenario.finance
    stress = f"x{fin.stress_multiplier:g}"
    return (
        ("usd_per_million_tokens", "usd2"),
        ("pnl_usd_per_year", "usd"),
        ("year1_cash_usd" if fin.horizon_months >= 12 else f"cash_{fin.horizon_months}_months_usd", "usd"),
        (f"total_usd_{fin.horizon_months}_months", "usd"),
        (f"present_value_usd_at_{_share_words(fin.cost_of_capital)}", "usd"),
        ("residual_usd", "usd"),
        ("commitment", "text"),
        (f"gpus_stress_{stress}", "int"),
        (f"monthly_usd_stress_{stress}", "usd"),
        (f"total_usd_{fin.horizon_months}_months_stress_{stress}", "usd"),
    )


def money_values(review: Review, result: Result) -> tuple:
    """One option's ``money_columns``, read from the review (its fleet, money and Ownership figures); blanks where the
    option does not meet the targets (no Ownership figures)."""
    f, m = result.fleet, result.money
    oo = review.outlook.of(result.option.name) if review.outlook is not None and result.meets else None
    rate = float(f.usd_per_million_tokens) if f is not None else None
    pnl = m.pnl_usd_per_gpu_month * result.gpus * 12 if f is not None else None
    if oo is None:
        return (rate, pnl, *(None,) * 8)
    ow, stress = oo.ownership, oo.cases[-1]
    return (
        rate, pnl, ow.year1_cash_usd, ow.total_usd, ow.present_value_usd, ow.residual_usd, ow.commitment,
        stress.gpus, stress.monthly_usd, stress.total_usd,
    )  # fmt: skip


def render_csv(review: Review) -> str:
    """Header row of machine names (units in them), one row per option; plain numbers, no currency signs. After the
    options table's columns (its -/+ traffic ones named with the share: ``sensitivity_keys``) and before its note,
    the money the Summary and Ownership sheets give (``money_columns``), then each year's cash out, capex, opex and
    depreciation (the Cash by year sheet's, ``cash_by_year.csv_columns``) for every option that meets the targets."""
    table = options_table(review)
    renamed = sensitivity_keys(review)
    extra = money_columns(review) + cash_by_year.csv_columns(review)
    cols = [(renamed.get(c.key, c.key), c.kind) for c in table.columns]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([k for k, _ in cols[:-1]] + [k for k, _ in extra] + [cols[-1][0]])
    for result, row in zip(review.results, table.rows, strict=True):
        values = [*row[:-1], *money_values(review, result), *cash_by_year.csv_values(review, result), row[-1]]
        kinds = [k for _, k in cols[:-1]] + [k for _, k in extra] + [cols[-1][1]]
        writer.writerow([_value(v, k) for v, k in zip(values, kinds, strict=True)])
    return buf.getvalue()
