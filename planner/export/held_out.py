"""The held-out range beside each simulated latency percentile the review workbook shows (issues 21 and 22).

The review sizes replicas on the serving simulation's high-percentile TTFT and TPOT at the peak and charts them
against traffic; a simulated percentile misses what a real deployment measures, and by how much is stated in
``catalogs/reference/loaded_residuals.csv`` (``planner.accuracy.loaded_ranges``): per loaded quantity, measured /
predicted at the 10th and 90th percentile over published runs under steady load from sources planner never saw,
each source alike, with the share of a left-out source's runs inside and the ends one source sets.

**Which quantity** (``quantity_for``: ``planner.accuracy.loaded_ranges.quantity_for``, the rule =LOADED_RANGE and
``plan --rate`` apply too): the table holds p50 and p99 of TTFT, TPOT and ITL (no source published p95
under load often enough). A p50 figure takes p50's range; a figure above the median (the sizing percentile, p95 by
default) takes p99's: for p95 the nearer of the two, and the wider at the slow end (TTFT 28x against 4.3x, TPOT
1.3x against 1.1x in the shipped table), so the conservative choice for a budget.

**Shown, not applied**: the bounds are the simulated figure x (1 + low) and x (1 + high); the fleet, the margin and
the cost are sized on the simulated figure, unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from planner.accuracy import loaded_ranges
from planner.accuracy.loaded_ranges import STEADY, LoadedRange, loaded_run_coverage, uncovered_texts
from planner.api import not_modelled_words, slow_end_open, spans_nodes_warning
from planner.export.scenario import Workload

#: The column and row label a finance reader sees beside a simulated figure.
LABEL = "held-out range (published runs / simulated)"
#: The same in a narrow column of a sheet that prints on one page (Latency's headroom table), its note giving ``LABEL``.
SHORT_LABEL = "held-out range"
#: The metrics with a held-out range, by the names the review's tables use (``ttft``, ``tpot``).
METRICS = ("ttft", "tpot")


def quantity_for(metric: str, percentile: float) -> str:
    """``planner.accuracy.loaded_ranges.quantity_for`` for the review's ``METRICS``: ``metric``_p50 for the median,
    ``metric``_p99 above it (the module's rule); ``ttft``, 95 -> "ttft_p99". ``ValueError`` for another metric."""
    if metric not in METRICS:
        raise ValueError(f"a held-out range is stated for {', '.join(METRICS)}, not {metric!r}")
    return loaded_ranges.quantity_for(metric, percentile)


def range_for(ranges: Mapping[tuple[str, str], LoadedRange], metric: str, percentile: float) -> LoadedRange | None:
    """The steady-load range ``quantity_for`` names from ``ranges`` (``load_loaded_ranges``'s); None without one."""
    quantity_for(metric, percentile)  # the review's metrics only
    return loaded_ranges.range_for(ranges, metric, percentile, STEADY)


def bounds(value: float, rng: LoadedRange | None) -> tuple[float, float] | None:
    """(value x (1 + low), value x (1 + high)): the figure's held-out range in its own unit; None without a range or
    a finite figure."""
    if rng is None or value is None or not math.isfinite(value):
        return None
    return rng.bounds(value)


def range_text(value: float, rng: LoadedRange | None, kind: str, open_end: str = "") -> str:
    """The held-out range of a figure of ``kind`` ("s" or "ms", as the review's tables show it: 2 and 1 decimals),
    "low - high unit": 0.78 s with p99 TTFT's 0.76x / 15.4x -> "0.59 - 12.01 s"; "" without a range. With
    ``open_end`` (``open_end_of``: a replica across nodes, slower than modelled) the slow end is a lower bound, as
    ``planner plan`` words it: "0.59 to more than 12.01 s"."""
    b = bounds(value, rng)
    if b is None:
        return ""
    digits = {"s": 2, "ms": 1}[kind]
    if open_end:
        return f"{b[0]:,.{digits}f} to more than {b[1]:,.{digits}f} {kind}"
    return f"{b[0]:,.{digits}f} - {b[1]:,.{digits}f} {kind}"


def _kept(result: object) -> tuple[object, int, str] | None:
    """(GPU, GPUs per replica, layout) of a result's kept replica; None without one."""
    replica = getattr(result, "replica", None)
    if replica is None:
        return None
    return result.gpu, int(replica.gpus), result.option.parallelism or "tp"


def open_end_of(result: object) -> str:
    """Why the option's held-out ranges' slow end is open (``planner.deploy.slow_end_open`` of its kept replica: a
    group across nodes, slower than modelled by an amount no held-out run measures, trial 31 F7); "" elsewhere."""
    kept = _kept(result)
    return slow_end_open(*kept) if kept else ""


def spans_nodes_of(result: object) -> str:
    """``planner.deploy.spans_nodes_warning`` of the option's kept replica where its slow end is open
    (``open_end_of``: not a pipeline's); "" elsewhere."""
    kept = _kept(result)
    return spans_nodes_warning(*kept) if kept and slow_end_open(*kept) else ""


def nodes_note(result: object) -> str:
    """The option's line on what is slower than modelled or not modelled, once, short (Details, Markdown): the held-out
    slow end open (``open_end_of``) and ``planner.deploy.not_modelled_words`` of its kept replica (dp-ep's large-scale
    MoE recipe, or the scale-out network); "" for a replica inside one node in a modelled layout."""
    kept = _kept(result)
    if not kept:
        return ""
    opened, missing = slow_end_open(*kept), not_modelled_words(*kept)
    parts = [
        f'held-out slow end open ("to more than"): {opened}' if opened else "",
        f"not modelled: {missing}" if missing else "",
    ]
    return "; ".join(x for x in parts if x)


def ranged_metrics(ranges: Mapping[tuple[str, str], LoadedRange], percentile: float) -> list[tuple[str, LoadedRange]]:
    """(metric, its range) for each of ``METRICS`` that ``ranges`` has a range for at ``percentile`` (``range_for``)."""
    shown = [(m, range_for(ranges, m, percentile)) for m in METRICS]
    return [(m, r) for m, r in shown if r is not None]


def note_lines(ranges: Mapping[tuple[str, str], LoadedRange], percentile: float) -> list[str]:
    """The sheet's note on the ranges: what they are and which quantity a ``percentile`` figure takes, then one line
    with each range's left-out coverage and the ends one source sets. Empty without the ranges' file."""
    shown = ranged_metrics(ranges, percentile)
    if not shown:
        return []
    q = loaded_ranges.tabled_percentile(percentile)
    which = (
        f"a p{percentile:g} figure takes {q}'s range."
        if percentile <= 50 or percentile == 99
        else f"a p{percentile:g} figure takes p99's range: the table holds p50 and p99 only (too few sources published "
        f"p{percentile:g} under load), p99 is the nearer and, at the slow end, the wider, so the conservative choice."
    )
    what = (
        f"Held-out range (published runs / simulated): beside each simulated p{percentile:g} TTFT and TPOT, how far "
        "published runs from sources planner never saw landed from planner's simulation of them (measured / "
        "simulated, 10th to 90th percentile, each source alike, steady load; "
        "catalogs/reference/loaded_residuals.csv), as the figure times those two ratios; " + which + " Sized on the "
        "simulated figure; the held-out range is shown, not applied: the fleet, the margin and the cost do not change."
    )
    parts = []
    for m, r in shown:
        label = f"{q} {m.upper()}"
        ends = "; ".join(r.one_source_texts(label))
        parts.append(f"{label} {r.text()} ({r.coverage_text()}" + (f"; {ends})" if ends else ")"))
    how = (
        "How well it holds (inside left out: the share of a source's runs within the range built without that "
        "source, nominal 80%): " + "; ".join(parts) + "."
    )
    return [what, how]


def uncovered_line(option_name: str, gpu_name: str, engine: object) -> list[str]:
    """One line where the option's GPU or engine is one no published run under load used (``uncovered_texts`` over
    ``loaded_run_coverage``): its held-out ranges are other deployments' misses. Empty otherwise."""
    texts = uncovered_texts(gpu_name, engine, loaded_run_coverage())
    return [f"{option_name}: " + "; ".join(texts) + "."] if texts else []


def short_note(ranges: Mapping[tuple[str, str], LoadedRange], percentile: float) -> str:
    """``note_lines`` in one line for a sheet that prints on one page (Latency): what the range is, which quantity and
    why, shown not applied, each range's left-out coverage and the ends one source sets. Empty without the file."""
    shown = ranged_metrics(ranges, percentile)
    if not shown:
        return ""
    q = loaded_ranges.tabled_percentile(percentile)
    which = (
        ""
        if percentile <= 50 or percentile == 99
        else f" p{percentile:g} takes p99's range (only p50 and p99 are tabled; p99 is nearer, and wider when slow: "
        "conservative)."
    )
    inside = ", ".join(f"{q} {m.upper()} {r.inside_left_out:.0%}" for m, r in shown)
    ends = " ".join(f"{t}." for m, r in shown for t in r.one_source_texts(f"{q} {m.upper()}"))
    return (
        f"{LABEL[0].upper()}{LABEL[1:]}: the figure x measured / simulated on published runs from sources planner "
        f"never saw (10th-90th percentile).{which} Shown, not applied. Inside with its source left out (nominal "
        f"80%): {inside}." + (f" {ends}" if ends else "")
    )


def slow_end_ratio(rng: LoadedRange, without_one_source: bool = True) -> tuple[float, str]:
    """(1 + the slow end taken, the source left out for it or ""): the range's high end, or, with
    ``without_one_source`` where one source alone sets it (``LoadedRange.one_source_ends``), the end without that
    source. Shipped p99 TTFT (high 14.40, 1.68 without sglang-pr-4918-deepseek-v3-h200): (2.68, that source)."""
    if without_one_source:
        for end, without, source in rng.one_source_ends():
            if end == "high":
                return 1.0 + without, source
    return 1.0 + rng.high, ""


def slow_end_goals(
    workload: Workload, ranges: Mapping[tuple[str, str], LoadedRange], without_one_source: bool = True
) -> tuple[float, float] | None:
    """The (TTFT, TPOT) goals in seconds a fleet's simulated figures at the workload's sizing percentile meet at the
    slow end (``planner.export.slow_end.slow_end``'s: target / ``slow_end_ratio``), for ranking a group before it is
    kept (``evaluate._cost_then_headroom``); None without both ranges."""
    rngs = [range_for(ranges, m, workload.sizing_percentile) for m in ("ttft", "tpot")]
    if None in rngs:
        return None
    ttft_ratio, tpot_ratio = (slow_end_ratio(r, without_one_source)[0] for r in rngs)
    return workload.ttft_target_s / ttft_ratio, workload.tpot_target_s / tpot_ratio
