"""The stated range of a figure predicted under load: held-out errors of the same quantity and arrival kind.

The prediction ranges (``planner.accuracy.ranges``) come from the fit sources' static batches and hold 60% of the
held-out serving TPOT and 42% of the serving TTFT figures inside a nominal 80% (``bench/range_coverage.py``, s153);
the loaded percentiles ``plan --rate`` prints had no range at all. This module states one from the published runs
the time factors never saw: ``bench/load_validation.py``'s loaded percentiles (TTFT, TPOT and ITL at p50 and p99)
and ``bench/heldout.py``'s serving rows' TTFT and TPOT (the run's published mean, or its median where the source
gives only that).

**Rule** (``range_of``), for a quantity and an arrival kind (``STEADY``: a request rate or a closed loop; ``BURST``:
every prompt at once): the 10th, 50th and 90th percentile of measured / predicted - 1 over the held-out figures of
that quantity and arrival, each source weighted alike (each of its figures 1 / its figure count:
``source_weights``), so the range answers "what will a source I have not seen get" and one source with many runs
(gpustack-performance-lab: 57 loaded runs) counts once. A percentile of weighted figures is the smallest figure whose
cumulative weight reaches that share of the total (``weighted_percentile``; the inverted CDF, numpy's
``method="inverted_cdf"`` when the weights are equal). Fewer than ``MIN_SOURCES`` sources: no range.

How well it holds is measured leaving whole sources out (``left_out_placements``: each source's figures against the
range built from the other sources only); the table stores that coverage beside the range, and the CLI prints it.
With a handful of sources each weighing alike, an end of the range is often one source's: the table also stores
each end at its least extreme over the sources left out one at a time (``one_out_ends``) and the source whose
absence moves it there, and the CLI names it where that moves the end by more than ``ONE_SOURCE_FACTOR``.

``catalogs/reference/loaded_residuals.csv`` is written only by ``python bench/load_validation.py
--write-loaded-residuals`` from ``loaded_residual_table``; ``load_loaded_ranges`` is its one loader.
``loaded_run_coverage`` reads which GPUs and engines those runs used (``catalogs/reference/load_public.csv``), so a
surface can say when a query's GPU or engine is none of them (``uncovered_texts``).

**Which row a simulated percentile takes** (``quantity_for``, ``range_for``; the one rule the review workbook, ``plan
--rate`` and =LOADED_RANGE apply): the table holds p50 and p99 (too few sources published p95 under load). The
median takes p50's range; a percentile above it (p90, p95: the sizing percentile, p95 by default) takes p99's: for
p95 the nearer of the two, and the wider at the slow end (TTFT 28x against 4.3x, TPOT 1.3x against 1.1x, ITL 13x
against 1.8x in the shipped table), so the conservative choice for a budget.
"""

from __future__ import annotations

import csv
import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from planner.accuracy.ranges import MIN_SOURCES
from planner.catalog.loader import shipped_catalog_dir

#: Percentiles of a range, as the prediction ranges take them.
LOW_Q, MEDIAN_Q, HIGH_Q = 10, 50, 90
#: How requests arrived: at a request rate or from a client keeping C in flight ("steady"), or all at once ("burst").
STEADY, BURST = "steady", "burst"
ARRIVALS = (STEADY, BURST)
#: The quantities, in the table's order: loaded percentiles (``bench/load_validation.py``), then the serving rows'
#: published TTFT and TPOT (``bench/heldout.py``: a mean, or a median where the source gives only that).
QUANTITIES = ("ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "itl_p50", "itl_p99", "ttft_mean", "tpot_mean")
#: An end is "one source's" where leaving that source out moves it by more than this factor (as a multiple of the
#: prediction: 1 + high over 1 + high left out, or 1 + low left out over 1 + low).
ONE_SOURCE_FACTOR = 2.0
#: How each figure is weighted (the table's ``weighted`` column).
WEIGHTED = "sources alike (each figure 1 / its source's figures)"

INSIDE, BELOW, ABOVE, NO_RANGE = "inside", "below", "above", "no range"
#: The latencies with loaded percentiles in the table (``QUANTITIES``' ``<metric>_p50`` and ``<metric>_p99``).
RANGED_METRICS = ("ttft", "tpot", "itl")
#: The percentiles the table holds per metric; any other takes one of them (``tabled_percentile``).
TABLED_PERCENTILES = (50, 99)


class NoLoadedRangeError(LookupError):
    """No stated range for this quantity and arrival: fewer than ``MIN_SOURCES`` sources measured it."""


@dataclass(frozen=True)
class LoadedFigure:
    """One held-out figure under load: its quantity, arrival kind, source (fold) and measured / predicted - 1."""

    quantity: str
    arrival: str
    source: str
    residual: float


@dataclass(frozen=True)
class LoadedRange:
    """The stated range of one quantity under one arrival kind: measured / predicted - 1 at the 10th, 50th and 90th
    weighted percentile of ``figures`` held-out figures from ``sources`` sources; ``inside_left_out``: the share of
    those figures inside the range built without their own source (NaN where it was not measured)."""

    quantity: str
    arrival: str
    sources: int
    figures: int
    low: float
    median: float
    high: float
    weighted: str = WEIGHTED
    inside_left_out: float = math.nan
    low_one_out: float = math.nan  # the least extreme low end with one source left out (``one_out_ends``)
    high_one_out: float = math.nan
    low_set_by: str = ""  # the source whose absence moves the low end there
    high_set_by: str = ""

    def one_source_ends(self) -> list[tuple[str, float, str]]:
        """The ends that are one source's: ("low" or "high", the end without that source, the source), where leaving
        it out moves the end by more than ``ONE_SOURCE_FACTOR`` times."""
        out = []
        if self.high_set_by and (1 + self.high) > ONE_SOURCE_FACTOR * (1 + self.high_one_out):
            out.append(("high", self.high_one_out, self.high_set_by))
        if self.low_set_by and (1 + self.low_one_out) > ONE_SOURCE_FACTOR * (1 + self.low):
            out.append(("low", self.low_one_out, self.low_set_by))
        return out

    def coverage_text(self) -> str:
        """How the range was built and how well it holds: "6 sources, 75% inside left out" (``sources``, and
        ``inside_left_out``: the share of a left-out source's figures inside the range built without it)."""
        return f"{self.sources} sources, {self.inside_left_out:.0%} inside left out"

    def one_source_texts(self, label: str) -> list[str]:
        """One sentence per end that one source sets (``one_source_ends``), the end without that source as a multiple
        of the prediction to two decimals, as the table stores it: "p99 TTFT's high end is one source's (s): 7.07x
        without it"."""
        return [
            f"{label}'s {end} end is one source's ({source}): {multiple_text(1 + without, end == 'high')} without it"
            for end, without, source in self.one_source_ends()
        ]

    def ratios(self) -> tuple[float, float]:
        """(1 + low, 1 + high): the range as multiples of the prediction."""
        return 1.0 + self.low, 1.0 + self.high

    def bounds(self, value: float) -> tuple[float, float]:
        """(value x (1 + low), value x (1 + high)): the range of a predicted ``value`` in its own unit."""
        lo, hi = self.ratios()
        return value * lo, value * hi

    def text(self) -> str:
        """The range as the multiples of the prediction that ``bounds`` applies, to two decimals, the precision the
        table stores them at (``LOADED_RANGE`` returns the same): "0.78x to 15.27x" for -0.22 / +14.27; a finer end
        is rounded outwards (the low end down, the high end up: never narrower than the table), "0.71x to 1.25x" for
        -0.285 / +0.25. Two significant figures printed "16x" beside bounds at 15.27x (trial 10, F7)."""
        lo, hi = self.ratios()
        return f"{multiple_text(lo, up=False)} to {multiple_text(hi, up=True)}"


def multiple_text(x: float, up: bool = True) -> str:
    """A multiple of a prediction as a range line prints it: two decimals, the table's precision ("15.27x",
    "0.82x"), a finer value rounded up (``up``) or down to the hundredth (15.271 -> 15.28x up)."""
    n = round(x * 100, 9)  # 0.82 * 100 is 82.00000000000001: whole to rounding first
    return f"{(math.ceil(n) if up else math.floor(n)) / 100:.2f}x"


def outward(x: float, up: bool, digits: int = 2) -> float:
    """``x`` > 0 to ``digits`` significant figures, rounded up (``up``) or down: 1.25 -> 1.3 up, 0.715 -> 0.71 down."""
    if not (math.isfinite(x) and x > 0):
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    n = round(x / step, 9)  # 0.72 / 0.01 is 71.99999999999999: whole to rounding first
    return (math.ceil(n) if up else math.floor(n)) * step


def arrival_of(request_rate: float | None, batch: float, num_prompts: float | None) -> str:
    """``STEADY`` for a serving run at a request rate or with a client keeping ``batch`` < prompts in flight
    (``serving_margin.steady_load``); else ``BURST``."""
    from planner.accuracy.serving_margin import steady_load

    return STEADY if steady_load("serving", batch, num_prompts, request_rate) else BURST


def source_weights(sources: Sequence[str]) -> list[float]:
    """Each figure's weight: 1 / the number of figures of its source (every source weighs 1 in all)."""
    n = Counter(sources)
    return [1.0 / n[s] for s in sources]


def weighted_percentile(values: Sequence[float], weights: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` weighted by ``weights``: the smallest value whose cumulative
    weight, values sorted, reaches q / 100 of the total (the inverted CDF). Equal weights: numpy's
    ``percentile(..., method="inverted_cdf")``; values 1..10 give 1 at q=10, 5 at q=50, 9 at q=90."""
    if not values or len(values) != len(weights):
        raise ValueError(
            f"a percentile needs values with one weight each: {len(values)} values, {len(weights)} weights"
        )
    if not 0 <= q <= 100 or any(w <= 0 or not math.isfinite(w) for w in weights):
        raise ValueError(f"a percentile is 0-100 ({q!r}) of positive finite weights")
    pairs = sorted(zip(values, weights, strict=True))
    total, cumulative = sum(weights), 0.0
    for v, w in pairs:
        cumulative += w
        if cumulative >= q / 100 * total * (1 - 1e-12):
            return v
    return pairs[-1][0]


def range_of(figures: Iterable[LoadedFigure], quantity: str, arrival: str) -> LoadedRange | None:
    """The module's rule on ``figures`` of ``quantity`` under ``arrival``; None with fewer than ``MIN_SOURCES``
    sources."""
    chosen = [f for f in figures if f.quantity == quantity and f.arrival == arrival and math.isfinite(f.residual)]
    sources = [f.source for f in chosen]
    if len(set(sources)) < MIN_SOURCES:
        return None
    e, w = [f.residual for f in chosen], source_weights(sources)
    low, median, high = (weighted_percentile(e, w, q) for q in (LOW_Q, MEDIAN_Q, HIGH_Q))
    return LoadedRange(quantity, arrival, len(set(sources)), len(chosen), low, median, high)


def placement(residual: float, rng: LoadedRange | None) -> str:
    """Where a figure of measured / predicted - 1 = ``residual`` lies against ``rng``: "inside" (ends included),
    "below" (faster than the range), "above" (slower), or "no range"."""
    if rng is None:
        return NO_RANGE
    if residual < rng.low - 1e-12:
        return BELOW
    return ABOVE if residual > rng.high + 1e-12 else INSIDE


def left_out_placements(figures: Sequence[LoadedFigure]) -> list[tuple[LoadedFigure, str]]:
    """Each figure with its placement against the range of its quantity and arrival built from the figures of the
    other sources only (``range_of`` without its source)."""
    memo: dict[tuple[str, str, str], LoadedRange | None] = {}
    out = []
    for f in figures:
        key = (f.quantity, f.arrival, f.source)
        if key not in memo:
            memo[key] = range_of((g for g in figures if g.source != f.source), f.quantity, f.arrival)
        out.append((f, placement(f.residual, memo[key])))
    return out


def one_out_ends(figures: Sequence[LoadedFigure], quantity: str, arrival: str) -> tuple[float, str, float, str]:
    """(low, its source, high, its source): over the ranges of ``quantity`` and ``arrival`` built with one source left
    out at a time, the largest low end and the smallest high end, each with the source left out; NaN and "" where no
    source can be left out with ``MIN_SOURCES`` remaining."""
    sources = sorted({f.source for f in figures if f.quantity == quantity and f.arrival == arrival})
    outs = [(s, range_of((f for f in figures if f.source != s), quantity, arrival)) for s in sources]
    outs = [(s, r) for s, r in outs if r is not None]
    if not outs:
        return math.nan, "", math.nan, ""
    low_s, low_r = max(outs, key=lambda sr: (sr[1].low, sr[0]))
    high_s, high_r = min(outs, key=lambda sr: (sr[1].high, sr[0]))
    return low_r.low, low_s, high_r.high, high_s


def loaded_residual_table(figures: Sequence[LoadedFigure]) -> list[dict]:
    """The rows of ``loaded_residuals.csv``: per quantity and arrival with at least ``MIN_SOURCES`` sources, the
    sources, figures, weighted 10th / 50th / 90th percentile of measured / predicted - 1, the weighting, the share
    of figures inside the range built without their own source, and each end at its least extreme with one source
    left out, with that source (``one_out_ends``)."""
    placed = left_out_placements(figures)
    out = []
    for q in QUANTITIES:
        for a in ARRIVALS:
            rng = range_of(figures, q, a)
            if rng is None:
                continue
            at = [p for f, p in placed if f.quantity == q and f.arrival == a]
            low_out, low_by, high_out, high_by = one_out_ends(figures, q, a)
            out.append(
                dict(
                    quantity=q,
                    arrival=a,
                    sources=str(rng.sources),
                    figures=str(rng.figures),
                    low=f"{rng.low:.2f}",
                    median=f"{rng.median:.2f}",
                    high=f"{rng.high:.2f}",
                    weighted=rng.weighted,
                    inside_left_out=f"{at.count(INSIDE) / len(at):.2f}",
                    low_one_out=f"{low_out:.2f}",
                    low_set_by=low_by,
                    high_one_out=f"{high_out:.2f}",
                    high_set_by=high_by,
                )
            )
    return out


def ranges_of(table: Iterable[Mapping[str, str]]) -> dict[tuple[str, str], LoadedRange]:
    """Ranges by (quantity, arrival) from rows in the file's columns (``loaded_residual_table``'s, or the file's)."""
    return {
        (r["quantity"], r["arrival"]): LoadedRange(
            r["quantity"],
            r["arrival"],
            int(r["sources"]),
            int(r["figures"]),
            float(r["low"]),
            float(r["median"]),
            float(r["high"]),
            r["weighted"],
            float(r["inside_left_out"]),
            float(r["low_one_out"]),
            float(r["high_one_out"]),
            r["low_set_by"],
            r["high_set_by"],
        )
        for r in table
    }


def loaded_residuals_file() -> Path:
    """The shipped table of held-out ranges under load, ``catalogs/reference/loaded_residuals.csv`` (it may be
    absent from a trimmed install: ``load_loaded_ranges`` then returns no ranges)."""
    return shipped_catalog_dir() / "reference" / "loaded_residuals.csv"


@functools.lru_cache(maxsize=2)
def load_loaded_ranges(path: str | None = None) -> dict[tuple[str, str], LoadedRange]:
    """The file's ranges by (quantity, arrival); empty when the file is absent. The one loader: callers pass its
    result on (``loaded_range``)."""
    p = Path(path) if path else loaded_residuals_file()
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        return ranges_of(csv.DictReader(f))


@functools.lru_cache(maxsize=1)
def loaded_run_coverage() -> tuple[frozenset[str], frozenset[str]]:
    """(catalog GPU names, engine families) of the published runs under load the ranges were measured on
    (``catalogs/reference/load_public.csv`` through ``published.load_decode_rows``; each row's GPU cell resolved by
    the shipped catalog, its engine by ``serving_margin.engine_name``). Empty sets without the file."""
    from planner.accuracy.published import load_decode_rows, reference_dir
    from planner.accuracy.serving_margin import engine_name
    from planner.catalog import default_catalog

    path = reference_dir() / "load_public.csv"
    if not path.exists():
        return frozenset(), frozenset()
    rows, cat = load_decode_rows(path), default_catalog()
    return frozenset(cat.gpu(r.gpu).name for r in rows), frozenset(engine_name(r.engine) for r in rows)


def uncovered_texts(gpu_name: str, engine: object, coverage: tuple[frozenset[str], frozenset[str]]) -> list[str]:
    """One sentence for a GPU and one for an engine (family, ``serving_margin.engine_name``) that no run of
    ``coverage`` (``loaded_run_coverage``'s) used: the ranges are then other deployments' misses; "no published run
    under load is on the MI300X: the ranges are of A100 SXM 40GB, ..."."""
    from planner.accuracy.serving_margin import engine_name

    gpus, engines = coverage
    family = engine_name(engine)
    out = []
    if gpus and gpu_name not in gpus:
        out.append(f"no published run under load is on the {gpu_name}: the ranges are of {', '.join(sorted(gpus))}")
    if engines and family not in engines:
        out.append(f"no published run under load is of {family}: the ranges are of {', '.join(sorted(engines))}")
    return out


def tabled_percentile(percentile: float) -> str:
    """The tabled percentile (of ``TABLED_PERCENTILES``) whose range a simulated ``percentile`` takes (the module's
    rule): "p50" for the median and below, "p99" above it, since p99 is the nearer to a p95 and the wider at the slow
    end (conservative for a budget); 95 -> "p99". Raises ``ValueError`` for a percentile outside (0, 100)."""
    if not 0 < percentile < 100:
        raise ValueError(f"a percentile is above 0 and below 100; got {percentile!r}")
    low, high = TABLED_PERCENTILES
    return f"p{low if percentile <= low else high}"


def quantity_for(metric: str, percentile: float) -> str:
    """The table's quantity whose range a simulated ``metric`` percentile takes: ``metric`` at
    ``tabled_percentile(percentile)``; ``"ttft", 95`` -> ``"ttft_p99"``. Raises ``ValueError`` for a metric not in
    ``RANGED_METRICS`` or a percentile outside (0, 100)."""
    if metric not in RANGED_METRICS:
        raise ValueError(f"a held-out range under load is stated for {', '.join(RANGED_METRICS)}, not {metric!r}")
    return f"{metric}_{tabled_percentile(percentile)}"


def range_for(
    ranges: Mapping[tuple[str, str], LoadedRange], metric: str, percentile: float, arrival: str = STEADY
) -> LoadedRange | None:
    """The range ``quantity_for`` names from ``ranges`` (``load_loaded_ranges``'s) under ``arrival``; None without
    one (no table, or fewer than ``MIN_SOURCES`` sources)."""
    return ranges.get((quantity_for(metric, percentile), arrival))


def loaded_range(ranges: Mapping[tuple[str, str], LoadedRange], quantity: str, arrival: str = STEADY) -> LoadedRange:
    """The stated range of ``quantity`` under ``arrival`` from ``ranges`` (``load_loaded_ranges``'s). Raises
    ``ValueError`` for an unknown quantity or arrival, ``NoLoadedRangeError`` where ``ranges`` is empty (no table
    installed) or has no row for them (fewer than ``MIN_SOURCES`` sources)."""
    if quantity not in QUANTITIES or arrival not in ARRIVALS:
        raise ValueError(f"quantities: {', '.join(QUANTITIES)}; arrivals: {', '.join(ARRIVALS)}; not {quantity!r}")
    if not ranges:
        raise NoLoadedRangeError(
            "no held-out ranges under load: the table catalogs/reference/loaded_residuals.csv is not in this install "
            "(python bench/load_validation.py --write-loaded-residuals writes it)"
        )
    try:
        return ranges[(quantity, arrival)]
    except KeyError:
        raise NoLoadedRangeError(
            f"no held-out range for {quantity} under {arrival} arrival: fewer than {MIN_SOURCES} sources measured it"
        ) from None


def ttft_borrowed_text(percentile: float = 95.0, ranges=None) -> str:
    """What a review's TTFT margin is (trial 20, F2): the TPOT margin, borrowed, since the held-out steady-load
    figures the margin is built from are TPOT's; beside it, TTFT's own held-out range under load at ``percentile``
    (``range_for``: pooled over every GPU, engine and class, a p95 taking p99's) and its end without
    the one source that sets it, which is why it is stated, not sized on (x15.66 would cut a 1.5 s target to 96 ms):
    "TTFT's margin is TPOT's, borrowed (no held-out TTFT margin per GPU, engine and class); TTFT's own held-out p99
    range under load, every GPU and engine pooled: 0.79x to 15.66x (6.41x without sglang-pr-4918-deepseek-v3-h200),
    stated, not sized on". ``ranges``: ``load_loaded_ranges()`` unless given; without a TTFT range, the first clause
    alone."""
    ranges = load_loaded_ranges() if ranges is None else ranges
    text = "TTFT's margin is TPOT's, borrowed (no held-out TTFT margin per GPU, engine and class)"
    rng = range_for(ranges, "ttft", percentile)
    if rng is None:
        return text
    label = tabled_percentile(percentile)
    without = "".join(
        f" ({multiple_text(1 + end, True)} without {source})"
        for side, end, source in rng.one_source_ends()
        if side == "high"
    )
    return (
        f"{text}; TTFT's own held-out {label} range under load, every GPU and engine pooled: {rng.text()}{without}, "
        "stated, not sized on"
    )
