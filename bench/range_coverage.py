"""Do the stated ranges hold? The share of published figures the planner never saw that fall inside the range it
would have stated for that row's query (issues 21 and 22: an honest range, not a confident miss).

    PYTHONPATH=. python bench/range_coverage.py                 # all three parts (~1 minute)
    PYTHONPATH=. python bench/range_coverage.py --part prediction   # or margin, or loaded
    PYTHONPATH=. python bench/range_coverage.py --part rule   # s153's moved-out rule (not shipped), judged left out
    PYTHONPATH=. python bench/range_coverage.py --part sources   # the margin's MIN_SOURCES rule against the one before
    PYTHONPATH=. python bench/range_coverage.py --write-coverage   # part 1's totals and 2's left out -> catalogs/reference/range_coverage.csv

A range is the 10th-90th percentile of measured / predicted - 1, so 80% of figures should lie inside it, 10% below
and 10% above (nominal).

1. **Prediction ranges** (``planner.accuracy.calibration.residual_range``: what ``plan``, the Excel ranges and the
   export's per-group range state): every held-out figure of ``bench/heldout.py`` (``held_out_rows``,
   ``time_checks``: TPOT, TTFT, static-batch and serving output rate) against the range of its row's query (GPU,
   engine, TP size, model). A time's range is prediction x (1 + low) .. prediction x (1 + high) (``Plan.time_range``);
   a rate is a time inverted, so its range is prediction / (1 + high) .. prediction / (1 + low)
   (``planner.accuracy.predict.throughput_range``). Below / above: the published figure under / over the range in
   its own unit (for a rate, below is slower than the range).
2. **The export's serving margin** (``planner.accuracy.serving_margin.margin_range`` on the prediction range, as
   ``planner.export.evaluate`` calls it): its table comes from the held-out steady-load TPOT figures themselves,
   so their coverage is in-sample. Left out: for each source (``planner.accuracy.holdout.fold_of``) the table is
   rebuilt without its rows (``serving_residual_table`` on the rest) and its steady-load TPOT figures are checked
   against the margin range the export would then use; per model class (dense or MoE, the margin's key since s171),
   MoE split by MLA, GPU / engine / class, branch of the rule and run kind.
3. **Loaded percentiles** (``bench/load_validation.py``'s figures, ``validate_load``): until s156 ``plan --rate`` and
   the Excel TTFT_P99-style functions stated no range for them (since, 3b's; Excel's ``LOADED_RANGE``). The export sizes a fleet so that its simulated high-percentile
   TTFT and TPOT meet target / (1 + margin high), so this part reads that margin as a range on the loaded figures
   (the left-out table where the row's source is in it) and says how often the published figure is inside and above.
   Then the stated range under load (``planner.accuracy.loaded_ranges``, s156: ``plan --rate`` prints it): each
   loaded figure, and each held-out serving run's TTFT and TPOT mean, against the range of its quantity and arrival
   built WITHOUT its own source (``left_out_placements``), per quantity, engine and arrival, beside the margin's
   reading; and how far each range's ends move when one source is left out.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout import held_out_rows, run_kind, steady_load_tpot, time_checks  # noqa: E402

from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.calibration import residual_range  # noqa: E402
from planner.accuracy.holdout import fold_of  # noqa: E402
from planner.accuracy.ranges import COVERAGE_FILE_NAME, MARGIN_COVERAGE, MIN_ROWS, TimeRange, _shift  # noqa: E402
from planner.accuracy.serving_margin import (  # noqa: E402
    MIN_SOURCES,
    MarginPool,
    ServingRegion,
    engine_name,
    margin_class,
    margin_pool,
    margin_range,
    of_kernel_line,
    regions_of,
    serving_residual_table,
)
from planner.catalog import default_catalog  # noqa: E402
from planner.engines.profiles import engine_profile  # noqa: E402

#: The nominal share inside a 10th-90th percentile range, and on each side of it.
NOMINAL_INSIDE, NOMINAL_SIDE = 0.80, 0.10
#: Quantities that are rates (a time inverted): their range divides the prediction by 1 + high .. 1 + low.
RATES = ("static-batch throughput", "serving throughput")
#: Relative slack on the range's ends: a figure on an end (to rounding) is inside.
EDGE = 1e-9

INSIDE, BELOW, ABOVE = "inside", "below", "above"


def moved_out(low: float, high: float, m_low: float, m_high: float) -> tuple[float, float]:
    """(low, high) with each end moved out by its multiplier (>= 1): low -> (1 + low) / m_low - 1, high -> (1 + high)
    x m_high - 1, rounded outwards to whole percent (``ranges._shift``); a multiplier of 1 leaves its end as it is.
    s153's rule for the stated ranges, measured here and not shipped (docs/history.md)."""
    if min(m_low, m_high) < 1.0:
        raise ValueError(f"multipliers move a range out: at least 1, not {m_low!r}, {m_high!r}")
    return (_shift(low, 1 / m_low) if m_low > 1 else low, _shift(high, m_high) if m_high > 1 else high)


def placement(predicted: float, published: float, low: float, high: float, rate: bool = False) -> str:
    """Where ``published`` lies against the stated range of ``predicted``: "inside", "below" or "above" (in the
    figure's own unit). A time's range is predicted x (1 + low) .. predicted x (1 + high); a rate's (``rate``) is
    predicted / (1 + high) .. predicted / (1 + low), the time range inverted. Ends included."""
    if not (math.isfinite(predicted) and math.isfinite(published)) or predicted <= 0 or low < -1:
        raise ValueError(f"no range around predicted {predicted!r} with low {low!r}")
    if rate:  # a low end of -100% (a time down to 0) leaves a rate no upper end
        bottom, top = predicted / (1.0 + high), predicted / (1.0 + low) if low > -1 else math.inf
    else:
        bottom, top = predicted * (1.0 + low), predicted * (1.0 + high)
    if published < bottom * (1 - EDGE):
        return BELOW
    if published > top * (1 + EDGE):
        return ABOVE
    return INSIDE


@dataclass(frozen=True)
class Coverage:
    """How many figures lie inside, below and above their stated ranges."""

    inside: int = 0
    below: int = 0
    above: int = 0

    @property
    def figures(self) -> int:
        return self.inside + self.below + self.above

    def share(self, where: str) -> float:
        """The share of figures ``where`` ("inside", "below", "above"); NaN without figures."""
        return getattr(self, where) / self.figures if self.figures else math.nan


def tally(placements: Iterable[str]) -> Coverage:
    """Count "inside", "below" and "above" placements."""
    n = Counter(placements)
    unknown = set(n) - {INSIDE, BELOW, ABOVE}
    if unknown:
        raise ValueError(f"placements are inside, below or above; got {sorted(unknown)}")
    return Coverage(n[INSIDE], n[BELOW], n[ABOVE])


HEAD = f"{'':<44}{'figures':>8}{'inside':>8}{'below':>8}{'above':>8}"


def coverage_line(label: str, c: Coverage) -> str:
    """One table line: the figures, and the share inside, below and above (nominal 80 / 10 / 10)."""
    shares = "".join(f"{c.share(w):>8.0%}" if c.figures else f"{'-':>8}" for w in (INSIDE, BELOW, ABOVE))
    return f"{label:<44}{c.figures:>8}{shares}"


def grouped_lines(records: list[dict], groups: tuple[str, ...]) -> list[str]:
    """``coverage_line`` for all records, then per value of each key in ``groups``."""
    lines = [coverage_line("all", tally(r["at"] for r in records))]
    for by in groups:
        values = sorted({r[by] for r in records})
        for v in values:
            lines.append(coverage_line(f"  {by} {v}", tally(r["at"] for r in records if r[by] == v)))
    return lines


# -- 1. prediction ranges -------------------------------------------------------------------------------------


def range_of_query(cat, gpu: str, engine: str, gpus: int, model: str, memo: dict) -> TimeRange:
    """``residual_range`` for the query (GPU, engine as the row names it, TP size, model), memoised."""
    key = (gpu, engine, gpus, model)
    if key not in memo:
        memo[key] = residual_range(gpu, engine, catalog=cat, gpus=gpus, model=model)
    return memo[key]


def published_of(c: dict) -> float:
    """The published figure of a ``time_checks`` check, in the unit its error was taken in (ms; tokens/s)."""
    r = c["row"]
    return {"TPOT": r.tpot_s * 1e3, "TTFT": r.ttft_s * 1e3}.get(c["q"], r.throughput_tokens_per_s)


def prediction_records(checks: list[dict]) -> tuple[list[dict], int]:
    """Each predicted held-out figure with the placement of its published value against its query's range; and the
    number of figures without a prediction (left out)."""
    cat, memo, out, unpredicted = default_catalog(), {}, [], 0
    for c in checks:
        if math.isnan(c["planner"]) or c["gpu"] is None or c["model"] is None:
            unpredicted += 1
            continue
        r, pub = c["row"], published_of(c)
        predicted = pub * (1.0 + c["planner"])  # the check's error is predicted / published - 1
        rng = range_of_query(cat, c["gpu"], r.engine, int(r.gpus or 1), c["model"].name, memo)
        rate = c["q"] in RATES
        at = placement(predicted, pub, rng.low, rng.high, rate=rate)
        out.append(
            dict(
                q=c["q"], at=at, GPU=c["GPU"], engine=c["engine"], run=c["run"], widened=bool(rng.widened),
                fold=fold_of(r), predicted=predicted, published=pub, rate=rate, low=rng.low, high=rng.high,
            )
        )  # fmt: skip
    return out, unpredicted


def prediction_report(checks: list[dict]) -> list[str]:
    records, unpredicted = prediction_records(checks)
    lines = [
        "== 1. Prediction ranges (residual_range of each held-out row's query) against the published figure",
        f"   nominal: inside {NOMINAL_INSIDE:.0%}, below {NOMINAL_SIDE:.0%}, above {NOMINAL_SIDE:.0%}; "
        f"{unpredicted} figures without a prediction left out; for a rate, below = slower than the range",
    ]
    for q in ("TPOT", "TTFT", "static-batch throughput", "serving throughput"):
        qr = [r for r in records if r["q"] == q]
        lines += ["", f"-- {q}", HEAD] + grouped_lines(qr, ("GPU", "engine", "run", "widened"))
    return lines


def write_coverage(checks: list[dict], path: Path | None = None, margin: list[dict] | None = None) -> Path:
    """Part 1's totals per quantity (figures inside, below and above their range, and their sources), then part 2's
    left out (``margin``: ``margin_left_out``'s records, computed from the held-out rows when not given) as the row
    ``ranges.MARGIN_COVERAGE``, to ``catalogs/reference/range_coverage.csv``, which
    ``planner.accuracy.ranges.coverage_note`` reads for ``plan`` and ``margin_coverage`` for the review's Risk."""
    import csv

    from planner.catalog.loader import shipped_catalog_dir

    records, _ = prediction_records(checks)
    if margin is None:
        margin = margin_left_out(held_out_rows(acc.load_decode_rows()))
    path = path or shipped_catalog_dir() / "reference" / COVERAGE_FILE_NAME
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(("quantity", "inside", "below", "above", "sources"))
        for q in ("TPOT", "TTFT", "static-batch throughput", "serving throughput"):
            qr = [r for r in records if r["q"] == q]
            c = tally(r["at"] for r in qr)
            w.writerow((q, c.inside, c.below, c.above, len({r["fold"] for r in qr})))
        c = tally(r["at"] for r in margin)
        w.writerow((MARGIN_COVERAGE, c.inside, c.below, c.above, len({r["fold"] for r in margin})))
    return path


# -- s153's moved-out rule (not shipped), judged leaving whole sources out -------------------------------------------

#: The largest multiplier searched (x1,000: a range 1,000 times wider is no range).
MOST_MULTIPLIER = 1000.0


def time_ratio(record: dict) -> float:
    """Measured / predicted time of a figure: published / predicted for a time, predicted / published for a rate."""
    p, pub = record["predicted"], record["published"]
    return p / pub if record["rate"] else pub / p


def as_time(record: dict) -> str:
    """The record's placement as a time: a rate's "below" (slower) is a time's "above", and the other way round."""
    flip = {BELOW: ABOVE, ABOVE: BELOW, INSIDE: INSIDE}
    return flip[record["at"]] if record["rate"] else record["at"]


def needed_multiplier(record: dict, side: str) -> float:
    """The smallest multiplier (steps of 0.01, at least 1) by which ``ranges.moved_out`` must move the record's range
    end on ``side`` ("high": slower figures; "low": faster) to take the figure in; 1 when it is inside already."""

    # the side a figure falls out on when it is slower (high end) or faster (low end) than its range, in its unit
    out_side = (ABOVE if side == "high" else BELOW) if not record["rate"] else (BELOW if side == "high" else ABOVE)

    def covers(hundredths: int) -> bool:
        m = hundredths / 100
        low, high = moved_out(record["low"], record["high"], *((1.0, m) if side == "high" else (m, 1.0)))
        return placement(record["predicted"], record["published"], low, high, record["rate"]) != out_side

    lo, hi = 100, int(MOST_MULTIPLIER * 100)
    if covers(lo):
        return 1.0
    if not covers(hi):
        return MOST_MULTIPLIER
    while hi - lo > 1:  # covers(hi), not covers(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if covers(mid) else (mid, hi)
    return hi / 100


def multipliers(records: list[dict], side_share: float = NOMINAL_SIDE) -> tuple[float, float]:
    """(m_low, m_high): the smallest multipliers that leave at most ``side_share`` of the records faster / slower
    than their moved range (the k-th smallest needed multiplier, k = ceil((1 - side_share) x figures))."""
    if not records:
        return 1.0, 1.0
    k = math.ceil((1 - side_share) * len(records) - 1e-9)
    out = []
    for side in ("low", "high"):
        needed = sorted(needed_multiplier(r, side) for r in records)
        out.append(needed[k - 1])
    return out[0], out[1]


def rule_report(checks: list[dict]) -> list[str]:
    """The rule's multipliers on every held-out source, then its coverage with each source's figures against the
    multipliers measured on the other sources only, beside the current ranges' coverage."""
    records, _ = prediction_records(checks)
    for r in records:
        r["t"] = time_ratio(r)
    m_all = multipliers(records)
    folds = sorted({r["fold"] for r in records})
    moved, per_fold = [], []
    for fold in folds:
        m_low, m_high = multipliers([r for r in records if r["fold"] != fold])
        own = [r for r in records if r["fold"] == fold]
        per_fold.append(f"  {fold:<44}{len(own):>5}   /{m_low:.2f} x{m_high:.2f}")
        for r in own:
            low, high = moved_out(r["low"], r["high"], m_low, m_high)
            at = placement(r["predicted"], r["published"], low, high, r["rate"])
            moved.append({**r, "at": at})
    lines = [
        "",
        "== s153's rule (not shipped): each end moved out by a multiplier leaving at most 10% of the other",
        "   held-out sources' figures (four quantities pooled, as times) outside it; judged on each source left out",
        f"   multipliers on every held-out source (the switch's constant): low /{m_all[0]:.2f}, high x{m_all[1]:.2f}",
        f"   {'source left out':<44}{'figures':>7}   multipliers from the others",
        *per_fold,
    ]
    for q in ("TPOT", "TTFT", "static-batch throughput", "serving throughput", None):
        now = [r for r in records if q is None or r["q"] == q]
        then = [r for r in moved if q is None or r["q"] == q]
        if q is None:  # pooled: every figure as a time, so below is faster and above slower
            now, then = ([{**r, "at": as_time(r)} for r in rs] for rs in (now, then))
        lines += [
            "",
            f"-- {q or 'all four pooled, as times (below: faster than the range, above: slower)'}",
            HEAD,
            coverage_line("current ranges", tally(r["at"] for r in now)),
            coverage_line("moved, multipliers from the other sources", tally(r["at"] for r in then)),
        ]
        for by in ("run",):
            for v in sorted({r[by] for r in now}):
                lines.append(coverage_line(f"  {by} {v}: current", tally(r["at"] for r in now if r[by] == v)))
                lines.append(coverage_line(f"  {by} {v}: moved", tally(r["at"] for r in then if r[by] == v)))
    return lines


# -- 2. the serving margin ------------------------------------------------------------------------------------


def left_out_regions(
    rows: list, tpot_pred_s: list[float], gpus: list[str | None], classes: list[str | None], fold: str
) -> dict[tuple[str, str, str], ServingRegion]:
    """The serving-margin regions (``serving_residual_table``) rebuilt without the rows of source ``fold``."""
    keep = [i for i, r in enumerate(rows) if fold_of(r) != fold]
    table = serving_residual_table(*([x[i] for i in keep] for x in (rows, tpot_pred_s, gpus, classes)))
    return regions_of(table)


#: How the report names each branch of ``margin_range``'s rule (``MarginPool.kind``).
RULES = {
    "own": f"own quantiles (>= {MIN_ROWS} figures)",
    "own thin": f"own quantiles (>= {MIN_ROWS}, < {MIN_SOURCES} sources) + every GPU",
    "every GPU": "prediction range + every GPU",
    "every GPU and own few": f"prediction range + every GPU, own 1-{MIN_ROWS - 1}",
    "own few": f"prediction range + own 1-{MIN_ROWS - 1}",
    "none": "prediction range (no serving figures)",
}


def rule_of(pool: MarginPool) -> str:
    """Which branch of ``margin_range``'s rule a query's regions give (``MarginPool.kind``), as the report names it."""
    return RULES[pool.kind]


def margin_records(
    rows: list,
    tpot_pred_s: list[float],
    gpus: list[str | None],
    regions_for: Callable[[str], dict[tuple[str, str, str], ServingRegion]],
    min_sources: int = MIN_SOURCES,
) -> list[dict]:
    """Each steady-load TPOT figure with the placement of its published value against the margin range the export
    would use for its GPU, engine, TP size and model (and so its class), the regions given by ``regions_for(fold)``;
    ``min_sources``: the rule's (``serving_margin.MarginPool.min_sources``; 1: the rule before s202)."""
    cat, memo, out = default_catalog(), {}, []
    for r, pred_s, gpu in zip(rows, tpot_pred_s, gpus, strict=True):
        if gpu is None or not (math.isfinite(pred_s) and pred_s > 0 and math.isfinite(r.tpot_s)):
            continue
        try:
            model = cat.model(acc.resolve_model_name(r.model, cat))
        except acc.PlannerError:
            continue
        prediction = range_of_query(cat, gpu, r.engine, int(r.gpus or 1), model.name, memo)
        regions = regions_for(fold_of(r))
        profile = engine_profile(r.engine).name  # the export asks by profile (planner.export.evaluate)
        arch = margin_class(model)
        rng = margin_range(prediction, gpu, profile, arch, regions, min_sources=min_sources)
        at = placement(pred_s, r.tpot_s, rng.low, rng.high)
        pair = f"{gpu} / {engine_name(r.engine)} / {arch}"
        rule = rule_of(margin_pool(gpu, profile, arch, regions, min_sources=min_sources))
        # MLA is no class of the margin's (serving_margin's docstring); the report splits MoE by it to show what a
        # class of its own would have to beat
        kind = arch if model.moe is None else f"{arch}, {'MLA' if model.mla is not None else 'no MLA'}"
        # the margin is built from the kernel tables' engine lines only (serving_margin.KERNEL_LINES): an older line's
        # figure is shown, against the margin the export would give today's release, in its own group
        line = "kernel tables' line" if of_kernel_line(r.engine, r.engine_version) else "older line (not in the margin)"
        out.append(
            dict(
                at=at, pair=pair, rule=rule, run=run_kind(r), fold=fold_of(r), cls=arch, kind=kind, line=line,
                high=rng.high,
            )
        )  # fmt: skip
    return out


def at_or_under_high(records: list[dict]) -> tuple[float, float]:
    """The share of records at or under their range's high end (inside or faster: the end a fleet is sized on;
    nominal 90%), pooled over figures and with each source (``fold``) weighing 1 (the mean of its figures' share)."""
    under = [{**r, "at": INSIDE if r["at"] != ABOVE else BELOW} for r in records]
    pooled = sum(r["at"] == INSIDE for r in under) / len(under) if under else math.nan
    return pooled, source_weighted_inside(under)


def sources_report(held: list) -> list[str]:
    """docs/hypotheses/margin-min-sources.md's judgement: each source's steady-load TPOT figures against the margin
    built without that source, under the rule before s202 (a region's own quantiles from ``MIN_ROWS`` figures
    whatever their sources), the shipped rule (own quantiles stand alone from ``MIN_SOURCES`` sources, else widened by
    the engine and class on every GPU) and variant B (a thin region down the "fewer" branch as it is); the share at
    or under the high end, per rule, per branch and per source, and the margins' high ends."""
    import planner.accuracy.serving_margin as sm

    rows, pred, gpus, classes = steady_load_tpot(held)
    memo: dict[str, dict] = {}

    def left_out(fold: str) -> dict:
        if fold not in memo:
            memo[fold] = left_out_regions(rows, pred, gpus, classes, fold)
        return memo[fold]

    rules = {}
    for label, min_sources, as_few in (
        ("before s202: own quantiles from 5 figures", 1, False),
        (f"shipped: own alone from {MIN_SOURCES} sources, else widened", MIN_SOURCES, False),
        ("variant B: thin own down the 'fewer' branch", MIN_SOURCES, True),
    ):
        sm.THIN_AS_FEW = as_few
        try:
            rules[label] = margin_records(rows, pred, gpus, left_out, min_sources)
        finally:
            sm.THIN_AS_FEW = False
    lines = [
        "",
        "== The margin rule's sources (docs/hypotheses/margin-min-sources.md): each source's steady-load TPOT figures",
        "   against the margin built without that source; at or under the high end (nominal 90%), pooled over figures",
        "   and with each source weighing 1; inside the range (nominal 80%); the median high end of the ranges used",
        f"{'':<56}{'figures':>8}{'<= high':>9}{'sources':>9}{'inside':>8}{'median high':>13}",
    ]

    def line(label: str, rs: list[dict]) -> str:
        pooled, alike = at_or_under_high(rs)
        inside = sum(r["at"] == INSIDE for r in rs) / len(rs)
        highs = sorted(r["high"] for r in rs)
        return f"{label:<56}{len(rs):>8}{pooled:>9.0%}{alike:>9.0%}{inside:>8.0%}{highs[len(highs) // 2]:>+13.0%}"

    for label, rs in rules.items():
        lines.append(line(label, rs))
        for by in ("rule", "cls"):
            for v in sorted({r[by] for r in rs}):
                lines.append(line(f"  {by} {v}", [r for r in rs if r[by] == v]))
    folds = sorted({r["fold"] for rs in rules.values() for r in rs})
    lines += ["", f"   {'source left out':<50}" + "".join(f"{k.split(':')[0]:>13}" for k in rules)]
    for fold in folds:
        shares = [at_or_under_high([r for r in rs if r["fold"] == fold])[0] for rs in rules.values()]
        n = sum(r["fold"] == fold for r in next(iter(rules.values())))
        lines.append(f"   {fold[:44]:<44}{n:>6}" + "".join(f"{x:>13.0%}" for x in shares))
    return lines


def margin_left_out(held: list) -> list[dict]:
    """Part 2 left out: each source's steady-load TPOT figures against the margin built without that source
    (``margin_records``), as ``write_coverage`` writes them and ``margin_report`` prints them."""
    rows, pred, gpus, classes = steady_load_tpot(held)
    memo: dict[str, dict] = {}

    def left_out(fold: str) -> dict:
        if fold not in memo:
            memo[fold] = left_out_regions(rows, pred, gpus, classes, fold)
        return memo[fold]

    return margin_records(rows, pred, gpus, left_out)


def margin_report(held: list) -> list[str]:
    rows, pred, gpus, classes = steady_load_tpot(held)
    whole = regions_of(serving_residual_table(rows, pred, gpus, classes))
    from planner.accuracy.serving_margin import load_serving

    same = "matches" if whole == load_serving() else "DIFFERS FROM"
    lines = [
        "",
        "== 2. The export's serving margin (margin_range) against the held-out steady-load TPOT figures",
        f"   table rebuilt from {len(rows)} steady-load rows {same} catalogs/reference/heldout_serving_residuals.csv",
    ]
    for label, records in (
        ("in-sample (the shipped table, which holds these figures)", margin_records(rows, pred, gpus, lambda f: whole)),
        ("left out (each source's figures against the table built without that source)", margin_left_out(held)),
    ):
        lines += ["", f"-- {label}", HEAD] + grouped_lines(records, ("line", "cls", "kind", "pair", "rule", "run"))
    return lines


# -- 3. loaded percentiles ------------------------------------------------------------------------------------


def loaded_report(held: list) -> list[str]:
    from planner.accuracy.validation import validate_load

    rows, pred, gpus, classes = steady_load_tpot(held)
    whole = regions_of(serving_residual_table(rows, pred, gpus, classes))
    in_table = {fold_of(r) for r in rows}
    load_rows = acc.load_decode_rows(acc.reference_dir() / "load_public.csv")
    by_id = {r.record_id: r for r in load_rows}
    cat, memo, records, left = default_catalog(), {}, [], set()
    for c in validate_load(load_rows).checks:
        if math.isnan(c.predicted):
            continue
        r = by_id[c.record_id]
        try:
            gpu, mdl = acc.resolve_gpu_name(r.gpu, cat), cat.model(acc.resolve_model_name(r.model, cat))
        except acc.PlannerError:
            continue
        fold = fold_of(r)
        regions = whole
        if fold in in_table:  # the row's source is in the table: leave it out
            regions = left_out_regions(rows, pred, gpus, classes, fold)
            left.add(fold)
        prediction = range_of_query(cat, gpu, r.engine, int(r.gpus or 1), mdl.name, memo)
        rng = margin_range(prediction, gpu, engine_profile(r.engine).name, margin_class(mdl), regions)
        at = placement(c.predicted, c.published, rng.low, rng.high)
        records.append(dict(q=c.quantity, at=at, engine=r.engine, GPU=gpu))
    lines = [
        "",
        "== 3. Loaded percentiles (bench/load_validation.py), read against the export's margin (the range plan --rate "
        "states for them is 3b's);",
        "   the export holds its simulated high percentile to target / (1 + margin high): that margin read as a range",
        f"   (table without the row's source where it is in it: {', '.join(sorted(left)) or 'none'})",
    ]
    for q in ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms"):
        qr = [r for r in records if r["q"] == q]
        lines += ["", f"-- {q}", HEAD] + grouped_lines(qr, ("engine",))
    return lines


def loaded_range_records(held: list) -> list[dict]:
    """Each figure of ``loaded_residuals.csv``'s rows (``load_validation.loaded_figure_rows``) with its placement
    against the range of its quantity and arrival built without its own source (``left_out_placements``)."""
    from heldout import time_checks
    from load_validation import loaded_figure_rows

    from planner.accuracy.loaded_ranges import left_out_placements
    from planner.accuracy.validation import validate_load

    load_rows = acc.load_decode_rows(acc.reference_dir() / "load_public.csv")
    pairs = loaded_figure_rows(load_rows, validate_load(load_rows).checks, time_checks(held))
    placed = left_out_placements([f for f, _ in pairs])
    return [
        dict(q=f.quantity, arrival=f.arrival, engine=r.engine, fold=f.source, residual=f.residual, at=at)
        for (f, r), (_, at) in zip(pairs, placed, strict=True)
    ]


def source_weighted_inside(records: list[dict]) -> float:
    """The share inside with each source weighing 1: the mean over sources of their figures' share inside."""
    by_fold: dict[str, list[bool]] = {}
    for r in records:
        by_fold.setdefault(r["fold"], []).append(r["at"] == INSIDE)
    return sum(sum(v) / len(v) for v in by_fold.values()) / len(by_fold) if by_fold else math.nan


def loaded_range_report(held: list) -> list[str]:
    """The stated range under load judged leaving whole sources out (s156), per quantity, arrival and engine; each
    range as shipped and its ends' spread over the sources left out."""
    from planner.accuracy.loaded_ranges import NO_RANGE, QUANTITIES, LoadedFigure, range_of

    records = loaded_range_records(held)
    lines = [
        "",
        "== 3b. The stated range under load (planner.accuracy.loaded_ranges; plan --rate prints it), each figure",
        "   against the range of its quantity and arrival built without its own source (sources weighted alike,",
        "   10th-90th percentile of measured / predicted - 1); 'no range': fewer than 3 other sources measured it;",
        "   below = faster than the range, above = slower",
        f"{'':<44}{'figures':>8}{'inside':>8}{'below':>8}{'above':>8}{'none':>8}  inside, sources alike",
    ]
    figures = [LoadedFigure(r["q"], r["arrival"], r["fold"], r["residual"]) for r in records]

    def line(label: str, rs: list[dict]) -> str:
        c = tally(r["at"] for r in rs if r["at"] != NO_RANGE)
        none = sum(r["at"] == NO_RANGE for r in rs)
        shares = "".join(f"{n / len(rs):>8.0%}" for n in (c.inside, c.below, c.above, none))
        return f"{label:<44}{len(rs):>8}{shares}  {source_weighted_inside(rs):>5.0%} of {len({r['fold'] for r in rs})}"

    for q in QUANTITIES:
        for a in ("steady", "burst"):
            qr = [r for r in records if r["q"] == q and r["arrival"] == a]
            if not qr:
                continue
            lines += ["", f"-- {q}, {a}", line("left out", qr)]
            lines += [
                line(f"  engine {e}", [r for r in qr if r["engine"] == e]) for e in sorted({r["engine"] for r in qr})
            ]
    pooled = [r for r in records if r["q"] in QUANTITIES[:6]]
    lines += ["", "-- the six loaded percentiles pooled", line("left out", pooled)]
    lines += [line(f"  arrival {a}", [r for r in pooled if r["arrival"] == a]) for a in ("steady", "burst")]
    lines += [
        "",
        "-- each range (all sources) and its ends with one source left out (smallest .. largest over the sources)",
        f"   {'quantity':<11}{'arrival':<8}{'sources':>8}{'low':>8}{'high':>8}   low left out     high left out",
    ]
    for q in QUANTITIES:
        for a in ("steady", "burst"):
            whole = range_of(figures, q, a)
            if whole is None:
                continue
            folds = sorted({f.source for f in figures if f.quantity == q and f.arrival == a})
            outs = [range_of([f for f in figures if f.source != s], q, a) for s in folds]
            outs = [o for o in outs if o is not None]
            lo = f"{min(o.low for o in outs):+.2f} .. {max(o.low for o in outs):+.2f}" if outs else "-"
            hi = f"{min(o.high for o in outs):+.2f} .. {max(o.high for o in outs):+.2f}" if outs else "-"
            lines.append(f"   {q:<11}{a:<8}{whole.sources:>8}{whole.low:>+8.2f}{whole.high:>+8.2f}   {lo:<17}{hi}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--part",
        choices=("prediction", "margin", "loaded", "rule", "sources"),
        help="one part only [default: the three; 'rule': s153's moved-out multipliers and left-out coverage]",
    )
    parser.add_argument(
        "--write-coverage",
        action="store_true",
        help="write part 1's totals per quantity and part 2's left out to catalogs/reference/range_coverage.csv (what plan "
        "and the review's Risk sentence state) and stop",
    )
    args = parser.parse_args(argv)
    held = held_out_rows(acc.load_decode_rows())
    if args.write_coverage:
        print(f"wrote {write_coverage(time_checks(held), margin=margin_left_out(held))}")
        return 0
    lines = []
    if args.part in (None, "prediction"):
        lines += prediction_report(time_checks(held))
    if args.part == "rule":
        lines += rule_report(time_checks(held))
    if args.part == "sources":
        lines += sources_report(held)
    if args.part in (None, "margin"):
        lines += margin_report(held)
    if args.part in (None, "loaded"):
        lines += loaded_report(held) + loaded_range_report(held)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
