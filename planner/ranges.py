"""How far off a time prediction may be: held-out residuals of the nearest region the published data covers.

``catalogs/reference/heldout_residuals.csv`` holds, per GPU and for all GPUs together, the 10th and 90th
percentiles of measured / predicted - 1 over the leave-one-source-out held-out figures (``planner.holdout``:
single-prompt TTFT, TPOT, and throughput turned into a time; each source predicted by the fit on the others),
written by ``python bench/loso.py --write-residuals``.
A GPU with at least ``MIN_ROWS`` such figures gets its own percentiles; any other GPU gets those of all GPUs,
widened by ``WIDEN`` and with a note saying so: the data says nothing about it.
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass
from pathlib import Path

from planner.catalog.loader import shipped_catalog_dir

MIN_ROWS = 5
WIDEN = 1.5
ALL_GPUS = "*"


@dataclass(frozen=True)
class Region:
    """Residual quantiles of one region: (low, high) with measured = predicted x (1 + residual)."""

    gpu: str
    rows: int
    low: float
    high: float
    sources: str = ""


def residuals_file() -> Path:
    return shipped_catalog_dir() / "reference" / "heldout_residuals.csv"


@functools.lru_cache(maxsize=2)
def load_regions(path: str | None = None) -> dict[str, Region]:
    """The regions of the residuals file, by GPU name ("*": all GPUs); empty when the file is absent."""
    p = Path(path) if path else residuals_file()
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        return {
            r["gpu"]: Region(
                r["gpu"], int(r["rows"]), float(r["residual_low"]), float(r["residual_high"]), r["sources"]
            )
            for r in csv.DictReader(f)
        }


def region_residuals(gpu_name: str, fallback: tuple[float, float]) -> tuple[float, float, str]:
    """(low, high, note) for a catalog GPU: its own held-out quantiles, else all GPUs' widened, else ``fallback``."""
    regions = load_regions()
    own = regions.get(gpu_name)
    if own is not None and own.rows >= MIN_ROWS:
        note = f"held-out residuals of {own.rows} published figures on {gpu_name} (sources: {own.sources})"
        return own.low, own.high, note
    every = regions.get(ALL_GPUS)
    if every is None:
        return (*fallback, "residuals of the fit (no held-out residuals file)")
    low, high = _widen(every.low), _widen(every.high)
    return (
        low,
        high,
        f"no held-out rows on {gpu_name}: all GPUs' held-out range ({every.low:+.0%} / {every.high:+.0%}, "
        f"{every.rows} figures) widened x{WIDEN:g}",
    )


def _widen(x: float) -> float:
    """x x WIDEN, rounded outwards to whole percent (-0.30 -> -0.45, 0.20 -> 0.30)."""
    pct = round(x * WIDEN * 100, 6)
    return (math.floor(pct) if x < 0 else math.ceil(pct)) / 100
