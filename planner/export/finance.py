"""Money over time: a fleet's cash month by month over an ownership horizon. Pure rules over numbers, no catalog.

The review sizes each option for the planned peak (the end of the plan's months). Finance asks what that costs
over the years the hardware is kept, in year-1 cash, and with the money's time value:

    phasing         traffic grows linearly from today's peak to the planned peak over the plan's months, then
                    stays there; each quarter's fleet is sized for the peak of its last month
    owned           GPUs are paid in full in the first month of the quarter that first needs them and never sold
                    before the horizon ends; each owned GPU costs opex (power + colocation) every month after;
                    at the end, residual share x capex comes back
    rented          each month's fleet x rent per GPU-month
    year-1 cash     cash out in months 1-12 (purchases made then included)
    total           cash out over the horizon, undiscounted, less the residual value
    present value   month m's cash x (1 + cost of capital)^(-m / 12), months 1 .. horizon, except purchases: paid
                    when bought, at the start of their month, x (1 + cost of capital)^(-(m - 1) / 12) (capex in
                    month 1 is worth itself; the monthly capital charge is the level payment of that capex)

Every argument may be a number or a numpy array; months are whole. Dollars are US$.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Months in a quarter: the fleet changes at most once a quarter.
QUARTER_MONTHS = 3


def quarter_end_months(horizon_months: int) -> np.ndarray:
    """The last month of each quarter of the horizon (a short last quarter ends with the horizon): 3, 6, ..., H."""
    ends = np.arange(QUARTER_MONTHS, horizon_months + QUARTER_MONTHS, QUARTER_MONTHS)
    return np.minimum(ends, horizon_months)


def traffic_share_of_plan(month: np.ndarray | int, growth: float, plan_months: int) -> np.ndarray:
    """Peak traffic in ``month`` as a share of the planned peak: (1 + growth x min(month, plan) / plan) / (1 + growth).

    Linear growth from today's peak (month 0) to the planned one (month ``plan_months``), flat afterwards.
    +50% over 12 months: month 3 is 1.125 / 1.5 = 0.75 of the planned peak.
    """
    m = np.minimum(np.asarray(month, dtype=float), plan_months)
    return (1.0 + growth * m / plan_months) / (1.0 + growth)


def monthly_from_quarters(per_quarter: np.ndarray, horizon_months: int) -> np.ndarray:
    """A value per month (months 1 .. H) from a value per quarter: each quarter's value for its months."""
    q = np.asarray(per_quarter, dtype=float)
    return np.repeat(q, QUARTER_MONTHS)[:horizon_months]


def discount_factors(horizon_months: int, cost_of_capital: float) -> np.ndarray:
    """(1 + annual rate)^(-m / 12) for months m = 1 .. H: what a dollar paid at the end of month m is worth today."""
    m = np.arange(1, horizon_months + 1, dtype=float)
    return (1.0 + cost_of_capital) ** (-m / 12.0)


def owned_cash_by_month(
    gpus_by_month: np.ndarray, capex_usd_per_gpu: float, opex_usd_per_gpu_month: float
) -> np.ndarray:
    """Cash out each month when GPUs are bought: capex for the GPUs added that month + opex for all owned so far.

    Owned GPUs are the running maximum of the fleet (a GPU bought is kept); 8, 8, 16: buys 8, 0, 8.
    """
    owned = np.maximum.accumulate(np.asarray(gpus_by_month, dtype=float))
    bought = np.diff(owned, prepend=0.0)
    return bought * capex_usd_per_gpu + owned * opex_usd_per_gpu_month


def rented_cash_by_month(gpus_by_month: np.ndarray, usd_per_gpu_month: float) -> np.ndarray:
    """Cash out each month when GPUs are rented: that month's fleet x rent per GPU-month."""
    return np.asarray(gpus_by_month, dtype=float) * usd_per_gpu_month


def residual_usd(owned_gpus: float, capex_usd_per_gpu: float, residual_share: float) -> float:
    """What the owned hardware is worth at the horizon's end: share x capex (0 when rented or written off)."""
    return float(owned_gpus) * capex_usd_per_gpu * residual_share


def year_cash_usd(cash_by_month: np.ndarray, year: int = 1) -> float:
    """Cash out in months 12 (year - 1) + 1 .. 12 year (fewer when the horizon is shorter)."""
    return float(np.sum(np.asarray(cash_by_month)[12 * (year - 1) : 12 * year]))


def total_usd(cash_by_month: np.ndarray, residual: float = 0.0) -> float:
    """Cash out over the horizon, undiscounted, less the residual value recovered at its end."""
    return float(np.sum(cash_by_month)) - residual


def present_value_usd(
    cash_by_month: np.ndarray, cost_of_capital: float, residual: float = 0.0, paid_at_start: np.ndarray | None = None
) -> float:
    """Sum of month m's cash x (1 + r)^(-m/12), less the residual's present value (recovered in the last month);
    the part of each month's cash in ``paid_at_start`` (purchases) is discounted from the month's start, m - 1."""
    cash = np.asarray(cash_by_month, dtype=float)
    d = discount_factors(len(cash), cost_of_capital)
    pv = float(np.sum(cash * d)) - (residual * float(d[-1]) if len(d) else 0.0)
    if paid_at_start is not None and len(d):
        start = np.concatenate([[1.0], d[:-1]])
        pv += float(np.sum(np.asarray(paid_at_start, dtype=float) * (start - d)))
    return pv


def owned_capex_by_month(gpus_by_month: np.ndarray, capex_usd_per_gpu: float) -> np.ndarray:
    """The purchases of each month when GPUs are bought: capex for the GPUs added that month (``owned_cash_by_month``'s
    first part)."""
    owned = np.maximum.accumulate(np.asarray(gpus_by_month, dtype=float))
    return np.diff(owned, prepend=0.0) * capex_usd_per_gpu


# -- reserved contracts (F17) ---------------------------------------------------------------------------
#
#     reserved        with a term T: each month the fleet needs more GPUs than its running contracts hold, a
#                     contract for the difference is signed for T months, and runs them all (paid monthly, used or
#                     not, past the horizon too); a contract ending while its GPUs are still needed is signed again.
#                     The alternative: the peak fleet signed from month 1 (and again each term). The review takes
#                     the one that commits less cash in all (horizon + beyond it; the contracts signed as the fleet
#                     grows on a tie: their cash comes later)


def reserved_contracts(gpus_by_month: np.ndarray, term_months: int) -> tuple[tuple[int, int], ...]:
    """The contracts signed for a fleet month by month (months 1 .. H), as (first month, GPUs): one whenever the
    fleet needs more GPUs than the contracts then running hold, for the difference, running ``term_months``.
    8 GPUs for 12 months then 16, a 12-month term: (1, 8), (13, 16), (25, 16); a 36-month term: (1, 8), (13, 8)."""
    signed: list[tuple[int, int]] = []
    for m, need in enumerate(np.asarray(gpus_by_month, dtype=float), start=1):
        held = sum(g for first, g in signed if first <= m < first + term_months)
        if need > held:
            signed.append((m, int(math.ceil(need - held))))
    return tuple(signed)


def contracted_gpus_by_month(contracts: tuple[tuple[int, int], ...], term_months: int) -> np.ndarray:
    """GPUs under contract in months 1 .. the last contract's end: each contract's GPUs for its term's months."""
    end = max((first + term_months - 1 for first, _ in contracts), default=0)
    held = np.zeros(end)
    for first, gpus in contracts:
        held[first - 1 : first - 1 + term_months] += gpus
    return held


@dataclass(frozen=True)
class ReservedCash:
    """A reserved option's cash as contracts of ``term_months`` (``reserved_cash``): the basis taken, its cash in
    the horizon's months and beyond them, and the alternative's commitment."""

    term_months: int
    horizon_months: int
    basis: str  # STEPPED or PEAK_UP_FRONT: the one taken
    contracts: tuple[tuple[int, int], ...]  # the basis's (first month, GPUs)
    cash_by_month: tuple[float, ...]  # months 1 .. horizon, the basis's
    beyond_horizon_usd: float  # the basis's cash due after the horizon's last month
    stepped_usd: float  # all the cash the contracts signed as the fleet grows commit (horizon + beyond)
    stepped_beyond_usd: float
    peak_usd: float  # all the cash the peak fleet signed from month 1 commits (horizon + beyond)
    peak_beyond_usd: float
    peak_gpus: int

    @property
    def horizon_usd(self) -> float:
        return float(sum(self.cash_by_month))

    @property
    def committed_usd(self) -> float:
        """All the cash the basis's contracts commit: the horizon's and beyond it."""
        return self.horizon_usd + self.beyond_horizon_usd

    @property
    def monthly_usd(self) -> float:
        """The monthly cost the review shows: the horizon's reserved cash / its months."""
        return self.horizon_usd / self.horizon_months


#: The bases ``reserved_cash`` chooses between.
STEPPED = "a contract at each step up of the fleet"
PEAK_UP_FRONT = "the peak fleet signed from month 1"


def reserved_cash(gpus_by_month: np.ndarray, usd_per_gpu_month: float, term_months: int) -> ReservedCash:
    """A reserved fleet's cash (months 1 .. H = len(gpus_by_month)) as contracts of ``term_months``: signed at each
    step up (``reserved_contracts``) or the peak signed from month 1, whichever commits fewer GPU-months in all
    (the steps on a tie). Each contract is paid monthly, its GPUs x ``usd_per_gpu_month``, for its whole term; the
    months after H are ``beyond_horizon_usd``. 8 GPUs for 12 months then 16, H = 36, T = 12, $1,000 a GPU-month:
    stepped 8 x 12 + 16 x 24 = 480 GPU-months, $480,000, none beyond; the peak up front 16 x 36 = 576."""
    fleet = np.asarray(gpus_by_month, dtype=float)
    h = len(fleet)
    peak = int(math.ceil(float(np.max(fleet)))) if h else 0

    def held(contracts):
        g = contracted_gpus_by_month(contracts, term_months)
        return g, float(np.sum(g[:h])), float(np.sum(g[h:]))

    stepped = reserved_contracts(fleet, term_months)
    up_front = reserved_contracts(np.full(h, float(peak)), term_months)
    s_held, s_in, s_beyond = held(stepped)
    p_held, p_in, p_beyond = held(up_front)
    take_steps = s_in + s_beyond <= p_in + p_beyond
    g, contracts, beyond = (s_held, stepped, s_beyond) if take_steps else (p_held, up_front, p_beyond)
    cash = np.zeros(h)
    cash[: min(h, len(g))] = g[:h] * usd_per_gpu_month
    return ReservedCash(
        term_months,
        h,
        STEPPED if take_steps else PEAK_UP_FRONT,
        contracts,
        tuple(float(x) for x in cash),
        beyond * usd_per_gpu_month,
        (s_in + s_beyond) * usd_per_gpu_month,
        s_beyond * usd_per_gpu_month,
        (p_in + p_beyond) * usd_per_gpu_month,
        p_beyond * usd_per_gpu_month,
        peak,
    )
