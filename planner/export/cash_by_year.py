"""Cash by year: each compared option's money per year of [finance] horizon_months, for a finance analyst (trial F5).

Every figure is the review's own monthly cash (``Ownership.cash_by_month``, ``breakeven.option_cash_by_month``: each
option's fleet phased by quarter, as the Ownership and Break-even sheets use it), summed by year:

    capex           bought: the GPUs and their share of host servers and network in the month they are bought
                    (``finance.owned_capex_by_month`` over the GPUs owned by quarter, phased fleet growth included);
                    rented: none
    opex            bought: power + colocation of the GPUs owned each month; rented: the rent (the month's cash
                    less its capex)
    cash out        capex + opex: year k is months 12 (k - 1) + 1 .. 12 k (``finance.year_cash_usd``; year 1 is the
                    Ownership sheet's year-1 cash)
    residual        bought: the residual value recovered at the horizon's end (the Ownership sheet's), in the last year
    cumulative      cash out less the residual recovered, summed to the year's end; at the horizon's end it is the
                    Ownership sheet's total (``finance.total_usd``)
    depreciation    bought: straight-line (``Money.depreciation_usd_per_gpu_month``: capex less the residual the
                    monthly cost charges, over amortization_months), charged from the month each GPU is bought for
                    amortization_months or to the horizon's end; not cash (the P&L's charge)

Years are the horizon's: ceil(horizon / 12), a short last year where the horizon is not whole years. The Total column
is the sum of the years (for cumulative cash, the horizon's end). Nothing here sizes or prices: the fleets and money
are the review's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner.export import finance
from planner.export.breakeven import option_cash_by_month
from planner.export.ownership import depreciation_terms
from planner.export.tables import Column, Table

if TYPE_CHECKING:
    from planner.export.records import Result, Review

#: The lines of each option's block, in order: (key, label). Depreciation only for a bought option; residual only
#: where one is recovered.
LINES = (
    ("capex", "Capex, when bought"),
    ("opex", "Opex: power + colocation, or rent"),
    ("cash_out", "Cash out"),
    ("residual", "Residual value recovered"),
    ("cumulative", "Cumulative cash (less residual)"),
    ("depreciation", "Depreciation (not cash)"),
)
LABELS = dict(LINES)


@dataclass(frozen=True)
class CashByYear:
    """One option's money per year of the horizon (each a tuple, year 1 first) and over it (``total_*``)."""

    option: str
    price_kind: str
    role: str  # why it is shown: "recommended", "cheapest bought", "cheapest rented" (joined with ", ")
    horizon_months: int
    capex_usd: tuple[float, ...]
    opex_usd: tuple[float, ...]
    cash_out_usd: tuple[float, ...]
    residual_usd: tuple[float, ...]  # recovered in the last year; zeros when rented or none
    cumulative_usd: tuple[float, ...]  # cash out less residual recovered, summed to each year's end
    depreciation_usd: tuple[float, ...] | None  # None when rented
    total_usd: float  # the Ownership sheet's total: cash out over the horizon less the residual
    depreciation_terms: str = ""  # "straight-line over 36 months" for a bought option

    @property
    def years(self) -> int:
        return len(self.cash_out_usd)

    def line(self, key: str) -> tuple[float, ...] | None:
        return getattr(self, f"{key}_usd")

    def line_total(self, key: str) -> float:
        """The Total column: the years' sum; cumulative cash's is its value at the horizon's end."""
        values = self.line(key)
        if key == "cumulative":
            return self.total_usd
        return float(sum(values))


def years_of(horizon_months: int) -> int:
    """Years the horizon covers: 36 months 3, 30 months 3 (the last one of 6 months), 7 months 1."""
    return max(1, math.ceil(horizon_months / 12))


def year_label(year: int, horizon_months: int) -> str:
    """A year's header: "Year 1"; a short last year says its months: "Year 3: months 25 to 30"."""
    first, last = 12 * (year - 1) + 1, min(12 * year, horizon_months)
    if last - first == 11:
        return f"Year {year}"
    return f"Year {year}: month {first}" if first == last else f"Year {year}: months {first} to {last}"


def _owned_by_month(gpus_by_quarter: tuple[int, ...], horizon_months: int) -> np.ndarray:
    """GPUs owned each month: the Ownership sheet's GPUs bought so far by quarter, month by month."""
    return finance.monthly_from_quarters(np.asarray(gpus_by_quarter, dtype=float), horizon_months)


def depreciation_by_month(bought_gpus: np.ndarray, usd_per_gpu_month: float, life_months: int) -> np.ndarray:
    """Straight-line depreciation charged each month: each GPU bought in month b is charged ``usd_per_gpu_month`` in
    months b .. b + life - 1 (within the horizon). 8 bought in month 1, 8 in month 4, life 3: 8, 8, 8, 8, 8, 8 x rate."""
    bought = np.asarray(bought_gpus, dtype=float)
    in_service = np.cumsum(bought) - np.concatenate([np.zeros(life_months), np.cumsum(bought)])[: len(bought)]
    return in_service * usd_per_gpu_month


def option_cash_by_year(review: Review, result: Result, role: str = "") -> CashByYear | None:
    """One option's ``CashByYear``; None where it has no Ownership figures (it meets no target)."""
    cash = option_cash_by_month(review, result)
    oo = review.outlook.of(result.option.name) if review.outlook is not None else None
    if cash is None or oo is None:
        return None
    ow, m, fin = oo.ownership, result.money, review.scenario.finance
    h = len(cash)
    n = years_of(h)
    if m.pricing == "purchase":
        owned = _owned_by_month(ow.gpus_by_quarter, h)
        capex = finance.owned_capex_by_month(owned, m.capex_usd_per_gpu)
        bought = np.diff(owned, prepend=0.0)
        dep = depreciation_by_month(bought, m.depreciation_usd_per_gpu_month, result.option.amortization_months)
        terms = depreciation_terms(result.option, fin)
    else:
        capex, dep, terms = np.zeros(h), None, ""
    opex = cash - capex

    def by_year(x: np.ndarray) -> tuple[float, ...]:
        return tuple(finance.year_cash_usd(x, k) for k in range(1, n + 1))

    out = by_year(cash)
    residual = tuple(ow.residual_usd if k == n else 0.0 for k in range(1, n + 1))
    cumulative = tuple(float(np.sum(cash[: 12 * k])) for k in range(1, n))
    cumulative += (finance.total_usd(cash, ow.residual_usd),)
    return CashByYear(
        result.option.name,
        m.price_kind,
        role,
        h,
        by_year(capex),
        by_year(opex),
        out,
        residual,
        cumulative,
        by_year(dep) if dep is not None else None,
        ow.total_usd,
        terms,
    )


def compared(review: Review) -> list[tuple[Result, str]]:
    """The options the view shows, each with why: the recommended one, the cheapest bought and the cheapest rented
    that meet the targets (by monthly cost, the review's ranking); one option may be several."""
    meeting = [r for r in review.results if r.meets and option_cash_by_month(review, r) is not None]
    picks: dict[str, tuple[Result, list[str]]] = {}
    rec = review.recommended
    if rec in meeting:
        picks[rec.option.name] = (rec, ["recommended"])
    for pricing, role in (("purchase", "cheapest bought"), ("cloud", "cheapest rented")):
        mine = [r for r in meeting if r.money.pricing == pricing]
        if mine:
            best = min(mine, key=lambda r: r.monthly_usd)
            picks.setdefault(best.option.name, (best, []))[1].append(role)
    return [(r, ", ".join(roles)) for r, roles in picks.values()]


def cash_by_year(review: Review) -> list[CashByYear]:
    """The view: ``compared``'s options, each ``option_cash_by_year``; [] where none meets the targets."""
    out = [option_cash_by_year(review, r, role) for r, role in compared(review)]
    return [c for c in out if c is not None]


def cash_by_year_table(review: Review) -> Table:
    """One block of rows per compared option (``LINES``), a column per year and the Total: the xlsx sheet's and the
    Markdown section's table."""
    views = cash_by_year(review)
    h = review.scenario.finance.horizon_months
    n = years_of(h)
    cols = (
        Column("Option", "text", "option"),
        Column("Price kind", "text", "price_kind"),
        Column("Line", "text", "line"),
        *[Column(year_label(k, h), "usd", f"year_{k}_usd") for k in range(1, n + 1)],
        Column("Total", "usd", "total_usd"),
    )
    rows = []
    for v in views:
        name = f"{v.option} ({v.role})" if v.role else v.option
        for key, label in LINES:
            values = v.line(key)
            if values is None or (key == "residual" and not any(values)):
                continue
            rows.append((name, v.price_kind, label, *values, v.line_total(key)))
    return Table(cols, tuple(rows))


def cash_by_year_heading(review: Review) -> str:
    """The sheet's printed heading (short: with the snapshot words it runs into the page's title past about 100
    characters)."""
    return "Cash by year of the options compared"


def cash_by_year_note(review: Review) -> str:
    """What the figures are and which of the review's values they rest on (the sheet's note, the section's text)."""
    fin = review.scenario.finance
    views = cash_by_year(review)
    terms = "; ".join(f"{v.option}: {v.depreciation_terms}" for v in views if v.depreciation_terms)
    dep = (
        f" Depreciation is the P&L's charge, not cash: {terms} (amortization_months, the write-off the monthly cost "
        "uses), from the month each GPU is bought; the review states no other depreciation life."
        if terms
        else ""
    )
    return (
        f"Years of the [finance] horizon_months ({fin.horizon_months} months), from the plan's month 1 (not fiscal). "
        "Each option's own fleet, added by quarter as Fleet by quarter shows; cash undiscounted, as on Ownership and "
        "Break-even. Capex: GPUs with their host server and network share, in the month bought. Opex: power and "
        "colocation of the GPUs owned (bought), or the rent. Year 1's cash out is Ownership's year-1 cash; the "
        "cumulative cash at the end (Total) is Ownership's total, less any residual value." + dep
    )


def csv_columns(review: Review) -> tuple[tuple[str, str], ...]:
    """(key, kind) of the CSV's per-year columns: cash out, capex, opex and depreciation for each year."""
    n = years_of(review.scenario.finance.horizon_months)
    return tuple(
        (f"{what}_usd_year_{k}", "usd")
        for what in ("cash_out", "capex", "opex", "depreciation")
        for k in range(1, n + 1)
    )


def csv_values(review: Review, result: Result) -> tuple:
    """One option's ``csv_columns``; blanks where it meets no target, and depreciation blank when rented."""
    n = years_of(review.scenario.finance.horizon_months)
    v = option_cash_by_year(review, result) if result.meets else None
    if v is None:
        return (None,) * (4 * n)
    dep = v.depreciation_usd if v.depreciation_usd is not None else (None,) * n
    return (*v.cash_out_usd, *v.capex_usd, *v.opex_usd, *dep)
