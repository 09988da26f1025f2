"""How far off a time prediction may be: held-out residuals of the nearest region the published data covers.

``catalogs/reference/heldout_residuals.csv`` (written only by ``python bench/loso.py --write-residuals`` from
``planner.accuracy.holdout.residual_table``) holds the 10th and 90th percentiles of measured / predicted - 1 over the
leave-one-source-out held-out figures (single-prompt TTFT, TPOT, and throughput turned into a time; each source
predicted by the fit on the others): for all figures (``all,*``) and for each value of each dimension a query
has: the GPU, the tensor-parallel group (``tp``), the engine, MoE or dense (``moe``) and the model's size class
(``size``, total parameters).

**Region.** A query's range is its GPU's quantiles when that GPU has at least ``MIN_ROWS`` held-out figures,
else all GPUs'. **Widening.** Every dimension whose query value has fewer than ``MIN_ROWS`` held-out figures
(a GPU, TP size, engine, MoE / dense or size class the data does not cover) widens the range by that
dimension's factor, and the note names each one. Widening scales the range's width in log(measured /
predicted), the scale the fit measures misses on: high -> (1 + high) ** factor - 1, likewise low, so a range
never goes below -100%. Several uncovered dimensions multiply their factors.

**The factors are measured, not chosen.** Each figure is predicted once more by a fit that saw neither its
source nor any row sharing its value of that dimension (all TP-4 rows left out, as well as the source, to
predict a TP-4 figure: what a query at a TP size without rows faces). A dimension's factor is the width of
those residuals' 10th-90th percentiles over the width of the leave-one-source-out residuals of the same
figures, never below 1 (the ``widen`` column of the dimension's ``*`` row, whose quantiles are the
value-held-out ones). A factor of 1.00 is said in the note, not applied. Today's factors are in that column
(docs/export.md quotes them; tests/test_doc_figures.py checks the quote). Caveats: the MoE factor pools MoE held out (4 figures, all in one source: x1.00) with dense held out (a fit on
those 4 MoE rows alone), so it mostly says how little 4 rows pin down; the GPU factor comes from NVIDIA
A100/H100/H200/L40S/RTX 4090 rows, and an AMD GPU is a larger step than holding one of those out.
"""

from __future__ import annotations

import csv
import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from planner.catalog.loader import shipped_catalog_dir

MIN_ROWS = 5
#: The fewest sources a range is stated from (loaded ranges) or a margin region stands on alone (serving margin):
#: fewer, and one source's client or host is the range.
MIN_SOURCES = 3
ALL = ("all", "*")
#: The dimensions a query is judged on beyond its GPU, in the order the note names them.
DIMENSIONS = ("gpu", "tp", "engine", "moe", "size")
#: Size classes by total parameters (upper bound, label); larger models are ">100B".
SIZE_CLASSES = ((10e9, "<10B"), (40e9, "10-40B"), (100e9, "40-100B"))


@dataclass(frozen=True)
class Region:
    """Residual quantiles of one region: (low, high) with measured = predicted x (1 + residual).

    On a dimension's ``*`` row the quantiles are the value-held-out ones and ``widen`` the dimension's factor.
    """

    dimension: str
    value: str
    rows: int
    low: float
    high: float
    widen: float = 1.0
    sources: str = ""


#: The words that start a no-data floor's part of a margin's note (``serving_margin.no_data_floor``).
NO_DATA_FLOOR = "no runs on"


@dataclass(frozen=True)
class NoDataFloor:
    """Where ``serving_margin.no_data_floor`` held a margin of a GPU without runs of its own to measured GPUs' ends
    (trial 33 F10): that GPU, the runs measured ("SGLang MLA": the engine's label and the class), each end that moved
    as (the measured GPU, its end), the slow end first, and the margin before and after. ``TimeRange.floor`` carries
    it, so a review says whose end it is (``planner.export.reason.floor_words``) without reading the note back."""

    gpu: str
    runs: str
    ends: tuple[tuple[str, float], ...]
    before: tuple[float, float]
    after: tuple[float, float]

    @property
    def ends_words(self) -> str:
        """ "H200 SXM 141GB's +202%" (" and " between two ends)."""
        return " and ".join(f"{gpu}'s {end:+.0%}" for gpu, end in self.ends)

    def note_words(self) -> str:
        """The note's part: "; no runs on MI325X: at least as wide as the widest measured GPU of SGLang MLA runs, H200
        SXM 141GB's +202%: -24% / +182% -> -24% / +202%"."""
        (low, high), (new_low, new_high) = self.before, self.after
        return (
            f"; {NO_DATA_FLOOR} {self.gpu}: at least as wide as the widest measured GPU of {self.runs} runs, "
            f"{self.ends_words}: {low:+.0%} / {high:+.0%} -> {new_low:+.0%} / {new_high:+.0%}"
        )


class TimeRange(NamedTuple):
    """(low, high) relative residuals, where they come from, what widened them ("" when nothing did), and whether
    they are a calibration file's own (which the held-out coverage, ``coverage_note``, does not judge)."""

    low: float
    high: float
    note: str
    widened: str = ""
    calibrated: bool = False
    #: where a serving margin was held to measured GPUs' ends (``serving_margin.no_data_floor``), None elsewhere
    floor: NoDataFloor | None = None


def residuals_file() -> Path:
    return shipped_catalog_dir() / "reference" / "heldout_residuals.csv"


@functools.lru_cache(maxsize=2)
def load_regions(path: str | None = None) -> dict[tuple[str, str], Region]:
    """The regions of the residuals file by (dimension, value); empty when the file is absent."""
    p = Path(path) if path else residuals_file()
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        return {
            (r["dimension"], r["value"]): Region(
                r["dimension"],
                r["value"],
                int(r["rows"]),
                float(r["residual_low"]),
                float(r["residual_high"]),
                float(r["widen"] or 1.0),
                r["sources"],
            )
            for r in csv.DictReader(f)
        }


#: How often the stated ranges held on published figures planner never saw (``python bench/range_coverage.py
#: --write-coverage``): per quantity, the figures inside, below and above the range of their row's query, and their
#: sources. The file is read by ``coverage_note``.
COVERAGE_FILE_NAME = "range_coverage.csv"
#: The quantities ``plan`` and the export state a range for, in the note's order.
COVERAGE_QUANTITIES = ("TPOT", "TTFT")
#: The file's row for the export's serving margin (``planner.accuracy.serving_margin.margin_range``): its steady-load
#: TPOT figures, each source's against the margin rebuilt without that source (``bench/range_coverage.py``, part 2
#: left out), which the review's Risk sentence states where a margin sizes the fleet (``margin_coverage``).
MARGIN_COVERAGE = "export's serving margin, left out"


class Coverage(NamedTuple):
    """Published figures inside, below and above their stated range (below: faster than the range for a time)."""

    quantity: str
    inside: int
    below: int
    above: int
    sources: int

    @property
    def figures(self) -> int:
        return self.inside + self.below + self.above


@functools.lru_cache(maxsize=2)
def load_coverage(path: str | None = None) -> dict[str, Coverage]:
    """The coverage file's rows by quantity; empty when the file is absent."""
    p = Path(path) if path else shipped_catalog_dir() / "reference" / COVERAGE_FILE_NAME
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        return {
            r["quantity"]: Coverage(
                r["quantity"], int(r["inside"]), int(r["below"]), int(r["above"]), int(r["sources"])
            )
            for r in csv.DictReader(f)
        }


def stated_coverage(path: str | None = None) -> tuple[Coverage, ...]:
    """The coverage of the quantities ranges are stated for (``COVERAGE_QUANTITIES``, in that order) that have
    figures; () without the file."""
    return tuple(c for q in COVERAGE_QUANTITIES if (c := load_coverage(path).get(q)) is not None and c.figures)


def margin_coverage(path: str | None = None) -> Coverage | None:
    """How often the export's serving margin held on the steady-load TPOT figures of sources it was not built from
    (``MARGIN_COVERAGE``); None without the file or the row."""
    c = load_coverage(path).get(MARGIN_COVERAGE)
    return c if c is not None and c.figures else None


def coverage_note(path: str | None = None) -> str:
    """One sentence on how often the time ranges held on published runs planner never saw ("" without the file):
    a 10th-90th percentile range should hold 80% of them."""
    rows = stated_coverage(path)
    if not rows:
        return ""
    counts = " and ".join(f"{c.figures:,} {c.quantity}" for c in rows)
    inside = " and ".join(f"{c.inside / c.figures:.0%}" for c in rows)
    slower = " and ".join(f"{c.above / c.figures:.0%}" for c in rows)
    sources = " and ".join(str(c.sources) for c in rows)
    return (
        f"of {counts} figures of published runs from sources planner never saw ({sources} sources), {inside} lie "
        f"inside their range (nominal 80%) and {slower} are slower (docs/accuracy.md, 'Do the ranges hold?')"
    )


def moe_class(model: Any) -> str:
    """A catalog model's architecture class: "MoE" when it has a ``[moe]`` table (routed experts), else "dense".
    The ``moe`` dimension of the ranges, and the class the export's serving margin keeps apart
    (``planner.accuracy.serving_margin``)."""
    return "MoE" if model.moe is not None else "dense"


def size_class(total_params: float) -> str:
    return next((label for limit, label in SIZE_CLASSES if total_params < limit), ">100B")


def query_values(gpu: str, gpus: Any = None, engine: Any = None, model: Any = None) -> dict[str, str]:
    """A query's (or a published row's) value of each dimension; a dimension not given is left out."""
    from planner.engines.architecture import param_counts

    out = {"gpu": gpu}
    if gpus is not None:
        out["tp"] = str(int(gpus))
    if engine is not None:
        name = str(getattr(engine, "name", engine))
        out["engine"] = "vllm" if name.startswith("vllm") else name  # vLLM's profiles share its time factors
    if model is not None:
        out["moe"] = moe_class(model)
        out["size"] = size_class(param_counts(model)[0])
    return out


#: How a note names a dimension's value: text before and after it ("at TP " + "8"). The workbook's Ranges sheet
#: writes these beside its factors, so its note formulas say what ``region_residuals`` says.
WHERE = {
    "gpu": ("on ", ""),
    "tp": ("at TP ", ""),
    "engine": ("of engine ", ""),
    "moe": ("of ", " models"),
    "size": ("of ", "-parameter models"),
}


def _where(dimension: str, value: str) -> str:
    before, after = WHERE[dimension]
    return f"{before}{value}{after}"


def region_residuals(
    gpu_name: str,
    fallback: tuple[float, float],
    *,
    gpus: Any = None,
    engine: Any = None,
    model: Any = None,
    curves: tuple[float, str] = (1.0, ""),
) -> TimeRange:
    """The range of a catalog GPU's time predictions (``gpus``, ``engine``, ``model`` when known): its GPU's
    held-out quantiles (all GPUs' without enough rows), widened per uncovered dimension, then, where the GPU's kernel
    curves are another vendor's (``curves``: the miss factor m > 1 and the GPU whose curves stand in,
    ``planner.engines.kernel_curves.curves_miss``), moved out by m either way: low -> (1 + low) / m - 1, high ->
    (1 + high) x m - 1; ``fallback`` (the fit's in-sample quantiles) without a residuals file."""
    out = _region_residuals(gpu_name, fallback, gpus=gpus, engine=engine, model=model)
    out = _basis_widened(out, gpu_name, engine, model)
    miss, source = curves
    if miss > 1.0:
        text = curves_text(gpu_name, source, miss)
        widened = f"{out.widened}; {text}" if out.widened else text
        out = TimeRange(_shift(out.low, 1 / miss), _shift(out.high, miss), out.note, widened)
    return out._replace(note=f"{out.note}; widened {out.widened}") if out.widened else out


def _basis_widened(out: TimeRange, gpu_name: str, engine: Any, model: Any) -> TimeRange:
    """``out`` widened where the query's configuration has no measured basis (``planner.accuracy.basis``; the
    EXPERIMENT switch ``UNMEASURED_SPARSE_ATTENTION``, h-worst, off): a DSA model on an engine and GPU without a
    measured sparse-attention kernel takes the engine dimension's factor, as an engine without held-out figures
    does (not twice where the engine is already uncovered), and the gap is said."""
    from planner.accuracy import basis

    if not basis.UNMEASURED_SPARSE_ATTENTION or engine is None or model is None or not gpu_name:
        return out
    gap = basis.sparse_attention_gap(gpu_name, engine, model)
    regions = load_regions()
    if not gap or not regions or "held-out figures of engine " in out.widened:
        return out
    factor = max(regions[("engine", "*")].widen, 1.0)
    text = f"{gap} (x{factor:.2f}, an engine without held-out figures' factor" + (
        "; not widened by it, and the range does not bound this configuration)" if factor <= 1.0 else ")"
    )
    if out.widened:
        head, _, tail = out.widened.partition(": ")
        total = float(head.lstrip("x")) * factor
        widened = f"x{total:.2f}: {tail}, {text}"
    else:
        widened = f"x{factor:.2f}: {text}"
    return TimeRange(_widen(out.low, factor), _widen(out.high, factor), out.note, widened)


def curves_text(gpu_name: str, source: str, miss: float) -> str:
    """What a range widened for another vendor's kernel curves says (the Ranges sheet writes the same words)."""
    return (
        f"kernel curves of {source} stand in on {gpu_name} (x{miss:.2f} either way: the borrowed GEMM rate's miss on "
        "a published matmul figure; published GEMM, memory and all-reduce figures replace them where they exist)"
    )


def own_rows(gpu_name: str) -> int:
    """How many held-out figures of the residuals file are on ``gpu_name`` (its ``gpu`` region; 0 without one)."""
    own = load_regions().get(("gpu", gpu_name))
    return own.rows if own is not None else 0


#: Which table "no held-out figures on MI300X" counts, said after that phrase where a GPU has none (or few) there
#: (trial 33 F3: beside bench/heldout.py's 31 held-out MI300X TPOT figures it read as "MI300X was never tested").
RANGE_TABLE = (
    "in the range table (the fit's single prompts and static batches, heldout_residuals.csv; "
    "other sources' held-out runs: bench/heldout.py)"
)


def range_table_words(widened: str, gpu_name: str) -> str:
    """``widened`` (a ``TimeRange.widened``) with ``RANGE_TABLE`` right after its "no held-out figures on <GPU>
    (x1.06)" (or "only N ..."), so the GPU's count cannot read as every held-out run's; unchanged otherwise."""
    found = re.search(rf"held-out figures {re.escape(_where('gpu', gpu_name))} \(x[0-9.]+\)", widened)
    if found is None:
        return widened
    return f"{widened[: found.end()]} {RANGE_TABLE}{widened[found.end() :]}"


def sibling_text(gpu_name: str, sibling: str, miss: float, same_die: bool) -> str:
    """What a range moved out for a sibling part's kernel rates says (``sibling_range``)."""
    why = (
        "the largest miss of one part's published rate on a part with the same compute die: MI325X's matmul over "
        "MI300X's"
        if same_die
        else "another architecture, whose rates no published figure checks: the widest known miss of a borrowed rate, "
        "another vendor's GEMM rate on a published matmul figure"
    )
    return (
        f"{sibling}'s range stands in on {gpu_name}, which takes {sibling}'s kernel rates and has no held-out figures "
        f"of its own (x{miss:.2f} either way: {why})"
    )


def sibling_range(theirs: TimeRange, gpu_name: str, sibling: str, miss: float, same_die: bool) -> TimeRange:
    """A GPU's range where it takes a sibling part's kernel rates (``planner.engines.kernel_curves.sibling_miss``: the
    miss factor m and the sibling) and has no held-out figures of its own while the sibling has ``MIN_ROWS`` or more
    (``planner.accuracy.calibration.residual_range``; else the sibling's range is the all-GPU one this GPU gets
    anyway, and moving it out would count the gap twice): the sibling's range ``theirs`` moved out by
    m either way, as another vendor's curves move a range out (low -> (1 + low) / m - 1, high -> (1 + high) x m - 1).
    Not the all-GPU residuals widened for an unknown GPU: the sibling's figures are the nearest evidence (trial 27
    F13: MI325X, MI300X's die with more memory, took +119% against MI300X's +55% for want of figures of its own)."""
    text = sibling_text(gpu_name, sibling, miss, same_die)
    widened = f"{theirs.widened}; {text}" if theirs.widened else text
    return TimeRange(_shift(theirs.low, 1 / miss), _shift(theirs.high, miss), f"{theirs.note}; {text}", widened)


def curves_part(widened: str) -> str:
    """The part of a range's ``widened`` that ``curves_text`` wrote (another vendor's kernel curves; ``region_residuals``
    puts it last), or ""."""
    start = widened.find("kernel curves of ")
    return widened[start:] if start >= 0 else ""


def _shift(x: float, m: float) -> float:
    """(1 + x) x m - 1, rounded outwards to whole percent like ``_widen`` (m < 1 moves a low end down)."""
    pct = round(((1 + x) * m - 1) * 100, 6)
    return (math.floor(pct) if m < 1 else math.ceil(pct)) / 100


def _region_residuals(
    gpu_name: str, fallback: tuple[float, float], *, gpus: Any = None, engine: Any = None, model: Any = None
) -> TimeRange:
    """``region_residuals`` before the kernel-curves widening, its note without the "; widened ..." that
    ``region_residuals`` adds once every widening is known."""
    regions = load_regions()
    if not regions:
        return TimeRange(*fallback, "residuals of the fit (no held-out residuals file)")
    query = query_values(gpu_name, gpus, engine, model)
    own = regions.get(("gpu", gpu_name))
    base = own if own is not None and own.rows >= MIN_ROWS else regions[ALL]
    note = (
        f"held-out residuals of {own.rows} published figures on {gpu_name} (sources: {own.sources})"
        if base is own
        else f"all GPUs' held-out residuals ({base.low:+.0%} / {base.high:+.0%}, {base.rows} figures)"
    )
    factor, gaps, flat = 1.0, [], []
    for dim in DIMENSIONS:
        if dim not in query:
            continue
        covered = regions.get((dim, query[dim]))
        rows = covered.rows if covered is not None else 0
        if rows >= MIN_ROWS:
            continue
        widen = regions[(dim, "*")].widen
        text = f"{f'only {rows}' if rows else 'no'} held-out figures {_where(dim, query[dim])}"
        if widen > 1.0:
            factor *= widen
            gaps.append(f"{text} (x{widen:.2f})")
        else:  # holding such a value out did not widen the residuals: said, not widened
            flat.append(f"{text} (holding one out did not widen the residuals: x{widen:.2f})")
    note += "".join(f"; {t}" for t in flat)
    if not gaps:
        return TimeRange(base.low, base.high, note)
    widened = f"x{factor:.2f}: " + ", ".join(gaps)
    return TimeRange(_widen(base.low, factor), _widen(base.high, factor), note, widened)


def _widen(x: float, factor: float) -> float:
    """(1 + x) ** factor - 1, rounded outwards to whole percent: the range's width in log(measured / predicted)
    times ``factor``, never below -100% (+58% x1.29 -> +81%, -22% x1.29 -> -28%)."""
    pct = round(math.expm1(math.log1p(x) * factor) * 100, 6)
    return (math.floor(pct) if x < 0 else math.ceil(pct)) / 100
