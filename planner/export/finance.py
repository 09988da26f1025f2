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
