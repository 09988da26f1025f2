"""The review as plain tables (headers, kinds, rows of numbers and text): what every writer lays out.

A column's ``kind`` says how to show its numbers: "int", "usd" (whole dollars), "usd2" (cents), "pct",
"ms", "s", "x" (a multiplier) or "text". Writers format; nothing here computes a capacity figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.export.review import Result, Review


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


def options_table(review: Review) -> Table:
    """One row per option, ranked: meeting options by monthly cost, then the ones that cannot meet the targets."""
    pct = f"{review.scenario.traffic_change:.0%}"
    w = review.scenario.workload
    cols = (
        Column("Rank", "int", "rank"),
        Column("Option", "text", "option"),
        Column("GPU", "text", "gpu"),
        Column("Model", "text", "model"),
        Column("Weights / KV", "text", "precisions"),
        Column("Pricing", "text", "pricing"),
        Column("Meets targets", "text", "meets_targets"),
        Column("GPUs", "int", "gpus"),
        Column("GPUs per replica", "int", "gpus_per_replica"),
        Column("Replicas (incl. spare)", "int", "replicas"),
        Column("Requests per replica", "int", "batch_per_replica"),
        Column("TPOT", "ms", "tpot_ms"),
        Column(f"TTFT (p{w.high_percentile:g} prompt)", "s", "ttft_s"),
        Column("$ per GPU-month", "usd", "usd_per_gpu_month"),
        Column("Monthly cost", "usd", "monthly_usd"),
        Column("Annual cost", "usd", "annual_usd"),
        Column("$ per M input tokens", "usd2", "usd_per_million_input_tokens"),
        Column("$ per M output tokens", "usd2", "usd_per_million_output_tokens"),
        Column("Utilization (average)", "pct", "utilization_average"),
        Column("Headroom (peak)", "pct", "headroom_peak"),
        Column(f"GPUs at -{pct} traffic", "int", "gpus_low"),
        Column(f"Monthly at -{pct}", "usd", "monthly_usd_low"),
        Column(f"GPUs at +{pct} traffic", "int", "gpus_high"),
        Column(f"Monthly at +{pct}", "usd", "monthly_usd_high"),
        Column("Note", "text", "note"),
    )
    rows = []
    for i, r in enumerate(review.results, start=1):
        rows.append(_option_row(i, r, review))
    return Table(cols, tuple(rows))


def _option_row(rank: int, r: Result, review: Review) -> tuple:
    o = r.option
    note = "recommended" if r is review.recommended else ("baseline for the levers" if r is review.baseline else "")
    price = (
        f"bought, ${r.money.purchase_usd:,.0f}/GPU over {o.amortization_months} months"
        if r.money.pricing == "purchase"
        else f"rented, ${r.money.cloud_usd_per_gpu_hour:,.2f}/GPU-hour"
    )
    if not r.meets:
        return (
            None,
            o.name,
            r.gpu.name,
            r.model.name,
            f"{r.weight_precision} / {r.kv_precision}",
            price,
            "no",
            *([None] * 17),
            r.shortfall,
        )
    f, rep = r.fleet, r.replica
    return (
        rank,
        o.name,
        r.gpu.name,
        r.model.name,
        f"{r.weight_precision} / {r.kv_precision}",
        price,
        "yes",
        int(f.gpus),
        int(rep.gpus),
        int(f.replicas),
        int(rep.batch),
        float(f.tpot_peak_s) * 1e3,
        rep.ttft_s,
        _n(f.usd_per_gpu_month),
        _n(f.monthly_usd),
        _n(f.monthly_usd) * 12,
        _n(f.usd_per_million_input),
        _n(f.usd_per_million_output),
        _n(f.utilization_average),
        _n(f.headroom_peak),
        int(r.low.gpus),
        _n(r.low.monthly_usd),
        int(r.high.gpus),
        _n(r.high.monthly_usd),
        note,
    )


def levers_table(review: Review) -> Table:
    """The four levers against the baseline: monthly cost, saving (negative: extra cost), and what else changes."""
    cols = (
        Column("Lever", "text", "lever"),
        Column("Change", "text", "change"),
        Column("GPUs", "int", "gpus"),
        Column("Monthly cost", "usd", "monthly_usd"),
        Column("Saving per month", "usd", "saving_usd_per_month"),
        Column("TPOT", "ms", "tpot_ms"),
        Column("Effect", "text", "effect"),
    )
    b = review.baseline
    rows = [
        (
            "Baseline",
            b.option.name,
            b.gpus,
            b.monthly_usd,
            None,
            float(b.fleet.tpot_peak_s) * 1e3,
            f"{int(b.replica.gpus)} GPUs per replica, {int(b.replica.batch)} requests per replica",
        )
    ]
    for lv in review.levers:
        r = lv.result
        shown = r is not None and r.meets and math.isfinite(lv.saving_usd_per_month)
        rows.append(
            (
                lv.name,
                lv.change,
                r.gpus if shown else None,
                r.monthly_usd if shown else None,
                lv.saving_usd_per_month if shown else None,
                float(r.fleet.tpot_peak_s) * 1e3 if shown else None,
                lv.note,
            )
        )
    return Table(cols, tuple(rows))


def sensitivity_table(review: Review) -> Table:
    """The recommended option at traffic -x, as planned and +x: GPUs, monthly cost, and the cheapest option there."""
    x = review.scenario.traffic_change
    w = review.scenario.workload
    unit = "requests/s" if w.by_rate else "concurrent requests"
    peak = (w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests) * w.growth_factor
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
    """Monthly cost and GPUs of the charted options over a range of peak traffic (the charts' data)."""
    w = review.scenario.workload
    peak = (w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests) * w.growth_factor
    meeting = charted(review)
    unit = "requests/s" if w.by_rate else "concurrent requests"
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


def select(table: Table, keys: tuple[str, ...]) -> Table:
    """The same table with only the columns named by ``keys``, in that order."""
    where = {c.key: i for i, c in enumerate(table.columns)}
    idx = [where[k] for k in keys]
    return Table(tuple(table.columns[i] for i in idx), tuple(tuple(row[i] for i in idx) for row in table.rows))


#: The options table as a finance reader sees it first, and the details that follow it.
MAIN_KEYS = (
    "rank",
    "option",
    "meets_targets",
    "gpus",
    "gpus_per_replica",
    "replicas",
    "batch_per_replica",
    "tpot_ms",
    "ttft_s",
    "usd_per_gpu_month",
    "monthly_usd",
    "annual_usd",
    "usd_per_million_output_tokens",
    "utilization_average",
    "note",
)
DETAIL_KEYS = (
    "option",
    "gpu",
    "model",
    "precisions",
    "pricing",
    "usd_per_million_input_tokens",
    "headroom_peak",
    "gpus_low",
    "monthly_usd_low",
    "gpus_high",
    "monthly_usd_high",
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
