"""Buy against rent for a finance reader: the month buying's cumulative cash falls below renting's, and the capex per
GPU at which buying stops being the cheaper option (trial 30 F1, F3).

    cumulative cash     each option's cash out month by month over [finance] horizon_months, its own fleet phased
                        by quarter as the Ownership sheet phases it (``Ownership.cash_by_month``): bought, capex in
                        the month its GPUs are bought then opex (power + colocation) every month; rented, the rent
                        every month; undiscounted, no residual value
    break-even month    the first month whose cumulative cash of the bought option is below the rented option's;
                        none within the horizon where it never is
    break-even capex    the capex per GPU all-in (GPU + host server and network share) at which the bought option's
                        monthly cost equals the cheapest rented option's; the monthly cost is the review's own
                        (``ownership.option_money`` with the GPU price moved, x the fleet's GPUs); it is linear in
                        capex (the level payment is), so two evaluations solve it exactly; should it not be, a
                        bisection on the same function finds it

Nothing here sizes: the fleets are the review's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner.export.ownership import option_money
from planner.export.tables import Column, Table

if TYPE_CHECKING:
    from planner.export.records import Result, Review


@dataclass(frozen=True)
class BreakEven:
    """One bought option against one rented option: the month buying's cumulative cash falls below renting's."""

    bought: str
    rented: str
    rented_kind: str
    month: int | None  # None: not within the horizon


@dataclass(frozen=True)
class CapexBreakEven:
    """The capex per GPU all-in at which a bought option's monthly cost equals the cheapest rented option's."""

    bought: str
    rented: str  # the cheapest rented option that meets the targets
    rented_monthly_usd: float
    now_usd: float  # the capex per GPU all-in the review uses
    break_even_usd: float  # NaN: none (the host and network share alone cost more)
    recommended: bool  # whether the bought option is the review's recommendation


def option_cash_by_month(review: Review, r: Result) -> np.ndarray | None:
    """The option's cash out month by month over the horizon (``Ownership.cash_by_month``: its fleet phased by
    quarter, undiscounted, no residual); None where it has no Ownership figures. ``cash_by_year`` sums it by year."""
    oo = review.outlook.of(r.option.name) if review.outlook is not None else None
    if oo is None or not oo.ownership.cash_by_month:
        return None
    return np.asarray(oo.ownership.cash_by_month, dtype=float)


def _meeting(review: Review, pricing: str) -> list[Result]:
    return [
        r
        for r in review.results
        if r.meets and r.money.pricing == pricing and option_cash_by_month(review, r) is not None
    ]


def break_even_month(bought_cash: np.ndarray, rented_cash: np.ndarray) -> int | None:
    """The first month (1 = the first) whose cumulative cash bought is below rented's; None where none is.

    $861,210 of capex, then $9,117 a month against $52,487 of rent: month 20 (861,210 / 43,370 = 19.9)."""
    n = min(len(bought_cash), len(rented_cash))
    below = np.flatnonzero(np.cumsum(bought_cash[:n]) < np.cumsum(rented_cash[:n]))
    return int(below[0]) + 1 if below.size else None


def break_evens(review: Review) -> list[BreakEven]:
    """Every bought option that meets the targets against every rented one, in the review's order."""
    rented = _meeting(review, "cloud")
    return [
        BreakEven(
            b.option.name,
            r.option.name,
            r.money.price_kind,
            break_even_month(option_cash_by_month(review, b), option_cash_by_month(review, r)),
        )
        for b in _meeting(review, "purchase")
        for r in rented
    ]


def _bisect(f: Callable[[float], float], lo: float, hi: float, tol: float = 0.005) -> float:
    """x in [lo, hi] with f(x) = 0, f increasing, f(lo) <= 0 <= f(hi)."""
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def capex_break_even(review: Review, bought: Result, target_monthly_usd: float) -> float:
    """The capex per GPU all-in at which ``bought``'s monthly cost is ``target_monthly_usd``: the review's own cost
    (``option_money`` with the GPU price moved, x the fleet's GPUs); NaN where even a free GPU costs more (the host
    and network share, power and colocation alone)."""
    fin = review.scenario.finance
    gpus = float(bought.fleet.gpus)

    def money(purchase: float):
        return option_money(bought.option.model_copy(update={"purchase_usd": purchase}), bought.gpu, fin)

    def excess(purchase: float) -> float:  # monthly cost at this GPU price, less the target
        return gpus * money(purchase).usd_per_gpu_month - target_monthly_usd

    p0 = float(bought.money.purchase_usd)
    p1 = 2 * p0
    f0, f1 = excess(p0), excess(p1)
    slope = (f1 - f0) / (p1 - p0)
    p = p0 - f0 / slope
    fp = excess(p) if p > 0 else excess(1e-6)
    if p > 0 and abs(fp) > 1e-6 * max(target_monthly_usd, 1.0):  # not linear after all: bisect the same function
        lo, hi = 1e-6, p0
        while excess(hi) < 0:
            hi *= 2
        p = _bisect(excess, lo, hi) if excess(lo) <= 0 else 0.0
    if p <= 0:
        return math.nan
    return float(money(p).capex_usd_per_gpu)


def capex_break_evens(review: Review) -> list[CapexBreakEven]:
    """Each bought option that meets the targets against the cheapest rented option that does."""
    rented = _meeting(review, "cloud")
    if not rented:
        return []
    cheapest = min(rented, key=lambda r: r.monthly_usd)
    return [
        CapexBreakEven(
            b.option.name,
            cheapest.option.name,
            float(cheapest.monthly_usd),
            float(b.money.capex_usd_per_gpu),
            capex_break_even(review, b, float(cheapest.monthly_usd)),
            b is review.recommended,
        )
        for b in _meeting(review, "purchase")
    ]


def _usd(x: float) -> str:
    return f"${x:,.0f}"


def _month_words(b: BreakEven, horizon: int) -> str:
    where = f" in month {b.month}" if b.month else f": not within the {horizon}-month horizon"
    return f"{b.rented} ({b.rented_kind}){where}"


def capex_words(c: CapexBreakEven) -> str:
    """ "Buying stays cheapest up to $N per GPU all-in (now $M)", or, not recommended, "buying would be cheapest
    below $N"."""
    now = f"now {_usd(c.now_usd)}"
    if math.isnan(c.break_even_usd):
        return (
            f"buying costs more than {c.rented} ({_usd(c.rented_monthly_usd)} a month) at any GPU price: the host, "
            f"network, power and colocation alone do ({now} per GPU all-in)"
        )
    against = f"against {c.rented}, {_usd(c.rented_monthly_usd)} a month, the cheapest rented option"
    if c.recommended:
        return f"Buying stays cheapest up to {_usd(c.break_even_usd)} per GPU all-in ({now}; {against})"
    return f"buying would be cheapest below {_usd(c.break_even_usd)} per GPU all-in ({now}; {against})"


def buy_rent_lines(review: Review) -> list[str]:
    """One line per bought option that meets the targets: its break-even month against each rented option, and the
    capex per GPU at which it stops (or would start) being cheaper than the cheapest rented one. [] without both."""
    h = review.scenario.finance.horizon_months
    evens, capex = break_evens(review), {c.bought: c for c in capex_break_evens(review)}
    out = []
    for name in dict.fromkeys(b.bought for b in evens):
        mine = [b for b in evens if b.bought == name]
        text = (
            f"Buying ({name}) breaks even against {_month_words(mine[0], h)}"
            + "".join(f"; against {_month_words(b, h)}" for b in mine[1:])
            + " (cumulative cash: capex when bought, then opex a month, against rent a month; each option's own "
            "fleet, phased)."
        )
        if (c := capex.get(name)) is not None:
            words = capex_words(c)
            text += f" {words[0].upper()}{words[1:]}."
        out.append(text)
    return out


def cumulative_table(review: Review) -> Table:
    """Per meeting option: for a bought one, its break-even month against each rented option and the capex per GPU
    at which it costs what the cheapest rented option does (blank for a rented one); then its cumulative cash at the
    end of each quarter of the horizon (``Ownership.cash_by_month`` summed)."""
    h = review.scenario.finance.horizon_months
    outs = [
        (r, option_cash_by_month(review, r))
        for r in review.results
        if r.meets and option_cash_by_month(review, r) is not None
    ]
    ends = list(range(3, h + 1, 3)) + ([h] if h % 3 else [])
    evens, capex = break_evens(review), {c.bought: c for c in capex_break_evens(review)}
    cols = (
        Column("Option", "text", "option"),
        Column("Price kind", "text", "price_kind"),
        Column("Breaks even against (month)", "text", "break_even"),
        Column("Capex per GPU all-in", "usd", "capex_usd_per_gpu"),
        # short: the header prints in one row of a landscape page (the docs say what it is)
        Column("Capex per GPU at break-even", "usd", "break_even_capex_usd_per_gpu"),
        *[Column(f"By month {m}", "usd", f"cum_m{m}") for m in ends],
    )
    rows = []
    for r, c in outs:
        name = r.option.name
        mine = "; ".join(f"{b.rented}: {b.month or f'not within {h}'}" for b in evens if b.bought == name)
        ce = capex.get(name)
        rows.append(
            (
                name,
                r.money.price_kind,
                mine or None,
                ce.now_usd if ce else None,
                ce.break_even_usd if ce and not math.isnan(ce.break_even_usd) else None,
                *[float(np.sum(c[:m])) for m in ends],
            )
        )
    return Table(cols, tuple(rows))


def cumulative_heading(review: Review) -> str:
    """The sheet's printed heading (about 100 characters) and the md section's first line."""
    return "Break-even month and capex; cumulative cash by quarter"
