"""A fleet for a request rate: how many replicas serve it and what their GPUs cost a month. Pure arithmetic.

Used by ``planner.api.peak_fleet`` (the what-if workbook's Levers) and by the export's sizing
(``planner.export.sizing``), so that both count replicas and months the same way. Arguments may be numbers or
numpy arrays; arrays broadcast.
"""

from __future__ import annotations

import numpy as np

ArrayLike = float | np.ndarray

#: Hours in an average month: 8,760 h / 12 = 730 h (the convention cloud providers bill monthly estimates on).
HOURS_PER_MONTH = 730.0


def replicas_for_rate(
    rate_per_s: ArrayLike, max_rate_per_replica_s: ArrayLike, spare_replicas: ArrayLike = 0
) -> np.ndarray:
    """Serving replicas ceil(rate / max rate per replica) (at least 1) plus the spares; NaN where a replica takes none."""
    x = np.asarray(max_rate_per_replica_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        serving = np.maximum(np.ceil(np.asarray(rate_per_s, dtype=float) / x - 1e-9), 1.0)
    return np.where(x > 0, serving + np.asarray(spare_replicas, dtype=float), np.nan)


def cloud_usd_per_gpu_month(usd_per_gpu_hour: ArrayLike, hours: ArrayLike = HOURS_PER_MONTH) -> np.ndarray:
    """Rented around the clock: $/GPU-hour x hours. $2.99 x 730 h = $2,182.70 a month."""
    return np.asarray(usd_per_gpu_hour, dtype=float) * np.asarray(hours, dtype=float)
