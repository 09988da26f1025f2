"""Units: exact binary sizes inside, SI (1 GB = 1e9 B) for display."""

from __future__ import annotations

import math

KiB, MiB, GiB = 2**10, 2**20, 2**30
KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12


def _si(value: float, unit: str, prefixes=((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")), digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    for scale, prefix in prefixes:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def fmt_bytes(n: float) -> str:
    """SI bytes: 137953296384 -> '138 GB', 327680 -> '328 kB'."""
    return _si(n, "B")


def fmt_gb(n: float, digits: int = 2) -> str:
    """Bytes as GB with fixed decimals: 137953296384 -> '137.95 GB'."""
    return f"{n / GB:,.{digits}f} GB"


def fmt_seconds(s: float) -> str:
    """0.0213 -> '21.3 ms'; 1.5 -> '1.50 s'."""
    if s is None or math.isnan(s):
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tokens/s" if tokens_per_s >= 100 else f"{tokens_per_s:.3g} tokens/s"


def fmt_percent(x: float) -> str:
    return f"{x * 100:.2f}%" if x < 0.1 else f"{x * 100:.1f}%"


def fmt_usd(x: float) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"${x:,.2f}" if x >= 0.1 else f"${x:.4f}"
