"""The latency margin per GPU, engine and architecture class: held-out TPOT errors of that engine's serving runs of
models of that class on that GPU.

``planner export`` sizes a fleet so that the pessimistic end of the predicted TPOT meets the target. The range of a
single prediction (``planner.accuracy.ranges``) comes from the fit sources' rows left out one source at a time:
static batches, mostly TensorRT-LLM and LMDeploy. A fleet runs an engine under steady load, so its margin comes
from the published serving runs the time factors never saw (``bench/heldout.py``'s held-out rows) whose clients
kept a load steady: a request rate, or a fixed number of requests in flight (runs that send every prompt at once
are excluded: their error is the schedule's, not the step's). ``catalogs/reference/heldout_serving_residuals.csv``
(written only by ``python bench/heldout.py --write-serving-residuals`` from ``serving_residual_table``) holds, per
GPU, engine and architecture class, and per engine and class on every GPU together (gpu ``*``), the figures' count
and the 10th, 50th and 90th percentile and the largest of measured TPOT / predicted TPOT - 1.

**Classes** (``ranges.moe_class``, the ranges' ``moe`` dimension): dense or MoE, from the catalog model. Until s171
the figures were pooled per GPU and engine, so a dense Llama fleet on H200 with vLLM was priced with the error of
DeepSeek-R1 runs (10 of that pair's 11 figures, 9 of them dstack's; +20% / +135%). MLA is not a class of its own:
its figures are all one model's (DeepSeek-R1), and no GPU and engine has ``MIN_ROWS`` figures of both MLA and other
MoE models (H200 + vLLM: 10 and 1, MI300X + vLLM: 9 and 1), so the data cannot tell MLA's error from that model's.

**Rule** (``margin_range``), for a query's GPU, engine and class:

- at least ``MIN_ROWS`` figures of that GPU, engine and class from at least ``MIN_SOURCES`` (3) independent
  sources (``ServingRegion.source_count``): their 10th-90th percentiles are the range; where the GPU's kernel curves
  are another vendor's (MI300X: H100's, ``planner.accuracy.ranges.curves_text``), the note says so: the runs' errors
  hold the borrowed curves' miss, so the range is not moved out for it again;
- at least ``MIN_ROWS`` figures from fewer sources ("own thin", s202, trial 20 F1): their 10th-90th percentiles
  widened by those of the same engine and class on every GPU together (low = min of the two lows, high = max of the
  highs) where that pool has more figures and ``MIN_ROWS`` or more; else their own, the note saying how many sources.
  Until s202 such a region stood alone: H100 + vLLM, dense, 7 figures from 2 sources, -8% / -1%, sized the H100
  options on the prediction while H200, with none of its own, took the pooled +25%, so the review's GPU ranking
  followed the amount of evidence. Left out one source at a time (``bench/range_coverage.py --part sources``) the
  share of steady-load TPOT figures at or under the margin's high end went from 75% to 77% (89% to 92% with each
  source weighing 1; docs/hypotheses/margin-min-sources.md);
- fewer: the prediction range (``ranges.region_residuals``), made at least as wide as the serving errors that stand
  in for the missing ones: the 10th-90th percentiles of the same engine and class on every GPU together, when they
  are ``MIN_ROWS`` figures or more (``pooled``), and the smallest and largest of this GPU's own 1 to
  ``MIN_ROWS - 1`` figures (A100 80GB + vLLM, dense: 2 figures). Figures of other GPUs widen the range, never narrow
  it: they do not hold this GPU's part of the miss (its kernel curves, its static-batch residuals);
- another class's figures never set a margin, on this GPU or any (the reason for the classes);
- no figure of the engine and class anywhere: the prediction range unchanged.

**No data is never narrower than some data** (``no_data_floor``, s212, trial 33 F10): a GPU with no runs of its own
of the engine and class (its pool's ``own`` None: the "every GPU" branch above, and a sibling part's margin,
``sibling_margin``) takes at each end the wider of its range and the widest end of the GPUs whose margin is their own
runs' (``measured_ends``: pool "own" or "own thin", each end as that GPU's ``margin_range`` gives it). Until s212
MI325X + SGLang took MI300X's DeepSeek-R1 margin moved out x1.17, -24% / +182%, while H200, with 13 runs of its own,
had +202%: the part without data got the narrower slow end, so every margin-sized comparison (the export's fleets
at the margin) leaned toward it. A GPU whose kernel curves are its own vendor's takes the floor only from measured
GPUs whose curves are too (``borrows_curves``): MI300X's runs hold the miss of H100's curves standing in, which an
NVIDIA part's prediction does not have (Llama-3.3-70B on H200 + vLLM keeps the dense runs' +25% rather than
MI300X's +55%). A GPU with runs of its own, few or many, is unchanged.

``MIN_ROWS`` (5) is the prediction ranges' minimum for a region's own quantiles (fewer give percentiles that are
one or two figures' values); it was kept, not chosen on the left-out coverage (``bench/range_coverage.py``).
A calibration file's range replaces all of this (``planner.accuracy.calibration.calibrated_range``).
"""

from __future__ import annotations

import csv
import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from planner.accuracy.ranges import MIN_ROWS, MIN_SOURCES, NoDataFloor, TimeRange, curves_part
from planner.catalog.loader import shipped_catalog_dir
from planner.engines.profiles import ENGINE_ALIASES, parse_version
from planner.model.layouts import layout_label
from planner.units import counted

#: Percentiles of a region's range, as the prediction ranges take them.
LOW_Q, HIGH_Q = 10, 90
#: The architecture classes a margin keeps apart (``margin_class``'s values).
CLASSES = ("dense", "MoE", "MLA")


def margin_class(model: Any) -> str:
    """A catalog model's class for the serving margin: "MLA" for a model whose attention is multi-head latent
    attention (DeepSeek-V2/V3/R1, Kimi K2: ``Model.attention_kind``), else ``ranges.moe_class``'s "MoE" or "dense".
    MLA runs another attention kernel (the absorbed latent form) than the GQA models, MoE or dense, so its serving
    errors are not theirs (s198: every held-out MLA figure is DeepSeek-R1's, and pooled as "MoE" they set gpt-oss-120b
    on B200 + SGLang at +180%, where gpt-oss's own B200 + vLLM runs read +16%)."""
    from planner.accuracy.ranges import moe_class

    return "MLA" if model.attention_kind == "MLA" else moe_class(model)


#: The ``gpu`` of a region that pools one engine and class over every GPU.
EVERY_GPU = "*"
#: The columns of ``heldout_serving_residuals.csv``, in order.
COLUMNS = (
    "gpu",
    "engine",
    "architecture",
    "releases",
    "rows",
    "residual_low",
    "residual_median",
    "residual_high",
    "residual_smallest",
    "residual_largest",
    "sources",
    "versions",
    "layouts",
)
#: The columns a file must have (one written before trial 16 lacks ``versions`` and ``layouts``).
REQUIRED_COLUMNS = COLUMNS[:-2]


@dataclass(frozen=True)
class ServingRegion:
    """Held-out steady-load TPOT residuals (measured / predicted - 1) of one engine's runs of one architecture class
    on one GPU (``gpu`` ``EVERY_GPU``: on every GPU together)."""

    gpu: str
    engine: str
    architecture: str  # "dense", "MoE" or "MLA" (CLASSES)
    rows: int
    low: float  # 10th percentile
    median: float
    high: float  # 90th percentile
    smallest: float
    largest: float
    sources: str
    releases: str = "all"  # "all": every release's runs; "current": only runs of the engine's current line (RELEASES)
    versions: str = ""  # the engine releases the runs used, as their sources give them ("0.7.4.dev181 0.8.5"; "?" none)
    layouts: str = (
        ""  # how the runs split the model, as read (``layouts.layout_label``: "TP8", "DEP8"), space-separated
    )

    @property
    def source_count(self) -> int:
        """The independent sources of the figures: the ``sources`` words counted as folds
        (``planner.accuracy.holdout.fold_of``: one benchmark's pages are one source)."""
        from planner.accuracy.holdout import FOLD_PREFIXES

        return len({next((p for p in FOLD_PREFIXES if s.startswith(p)), s) for s in self.sources.split()})


def serving_residuals_file() -> Path:
    return shipped_catalog_dir() / "reference" / "heldout_serving_residuals.csv"


#: The engines whose serving figures a margin pools: a release's profile ("vllm-0.6", "sglang-0.5.3",
#: "tensorrt-llm-0") shares its engine's figures.
ENGINE_FAMILIES = ("vllm", "sglang", "tensorrt-llm", "lmdeploy")


def engine_name(engine: object) -> str:
    """The engine family a profile or row name stands for (``ENGINE_FAMILIES``), read through the engines' aliases
    (``planner.engines.profiles.ENGINE_ALIASES``: NVIDIA NIM runs prebuilt TensorRT-LLM engines, ``NIM_BACKEND``, so
    its runs are TensorRT-LLM's figures and a "nim" query finds them; "trtllm", "turbomind" likewise); other names as
    given."""
    name = str(getattr(engine, "name", engine))
    name = ENGINE_ALIASES.get(name, name)
    return next((f for f in ENGINE_FAMILIES if name.startswith(f)), name)


def steady_load(kind: str, batch: float, num_prompts: float | None, request_rate: float | None) -> bool:
    """A serving run whose load is steady: at a request rate, or with clients keeping ``batch`` < prompts in flight."""
    if kind == "static":
        return False
    if request_rate is not None and math.isfinite(request_rate) and request_rate > 0:
        return True  # an infinite rate (every prompt at once) is a burst, not a rate
    return 0 < batch < (num_prompts or batch)


#: Whether a region with ``MIN_ROWS`` figures or more from fewer than ``MIN_SOURCES`` sources goes down the "fewer"
#: branch as it is (the prediction range widened by the pooled percentiles and its own smallest and largest
#: figure) instead of its own percentiles widened by the pooled ones: docs/hypotheses/margin-min-sources.md's variant
#: B, measured by ``bench/range_coverage.py --part sources``, not shipped.
THIN_AS_FEW = False

#: The first release of each engine's line that the kernel tables were measured on (aiconfigurator's collectors:
#: SGLang 0.5.10-0.5.14, vLLM 0.14-0.24, TensorRT-LLM 1.3; docs/history.md): SGLang 0.5, vLLM 0.8 (the V1 engine by
#: default) and TensorRT-LLM 1.0 (the PyTorch backend by default). ``bench/range_coverage.py`` reports the margin's
#: coverage on runs of these lines apart from older ones (SGLang 0.4, vLLM 0.7 V0, TensorRT-LLM 0.17).
KERNEL_LINES = {"sglang": (0, 5), "vllm": (0, 8), "tensorrt-llm": (1, 0)}
#: Whether a query on a current-line profile reads its line's runs first (``margin_pool``; the table holds them
#: apart as "current" rows either way). s198's experiment, not shipped (docs/history.md): on, the left-out margin held
#: 88% of today's lines' steady-load TPOT figures (83% off), and DeepSeek-R1 on H200 + SGLang took its 0.5.7 runs'
#: -9% / +4% instead of SGLang 0.4.3's +202%, but the 1,346 loaded percentiles of today's releases fell from TTFT p50
#: 67%, p99 39%, TPOT p50 79%, p99 78% inside to 54%, 31%, 76%, 73%: those runs miss by more under load than the few
#: current-line steady-load TPOT figures show (s194 found the same with the old runs dropped from the table).
CURRENT_LINE_FIRST = False


def of_kernel_line(engine: str, version: str) -> bool:
    """Whether a run's engine release is of the line the kernel tables measured (``KERNEL_LINES``), or not known to
    be older: a version that does not parse, an engine without a line, and NVIDIA NIM (its own version numbers, not
    its backend's) count."""
    family, parsed = engine_name(engine), parse_version(version or "")
    nim = str(engine).lower().replace(" ", "-") in ("nim", "nvidia-nim")
    return nim or family not in KERNEL_LINES or parsed is None or parsed.release >= KERNEL_LINES[family]


#: The release sets a region counts (``ServingRegion.releases``): every release's runs, or only those of the
#: engine's current line (``of_kernel_line``), which a query on a current-line profile reads first (``margin_range``).
RELEASES = ("all", "current")


def profile_of_kernel_line(profile: object) -> bool:
    """Whether an engine profile (or its name) plans a release of its engine's current line (``KERNEL_LINES``): the
    default profiles ("sglang", "vllm", "tensorrt-llm") and a release profile at or past the line ("sglang-0.5.3",
    "vllm-0.10") do; "sglang-0.4" and "tensorrt-llm-0" (TensorRT-LLM 0.x) do not."""
    name = str(getattr(profile, "name", profile))
    family = engine_name(name)
    suffix = name[len(family) :].lstrip("-") if name.startswith(family) else ""
    release = tuple(int(part) for part in suffix.split(".") if part.isdigit())
    if not release or family not in KERNEL_LINES:
        return True
    return release >= KERNEL_LINES[family]


#: How a note names an engine family's current line.
LINE_LABELS = {
    "vllm": "vLLM 0.8 and later",
    "sglang": "SGLang 0.5 and later",
    "tensorrt-llm": "TensorRT-LLM 1.0 and later",
}


#: How a note names an engine family.
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM", "lmdeploy": "LMDeploy"}


def serving_residual_table(
    rows: Sequence,
    tpot_pred_s: Sequence[float],
    gpus: Sequence[str | None],
    architectures: Sequence[str | None],
) -> list[dict]:
    """The rows of ``heldout_serving_residuals.csv``: per (GPU, engine, architecture class) of the steady-load rows
    with a published and a predicted TPOT, and per (engine, class) on every GPU together (gpu ``EVERY_GPU``), the
    quantiles of measured / predicted - 1, once over every release's runs ("all") and once over the runs of the
    engine's current line ("current": ``of_kernel_line``). ``gpus``: each row's catalog GPU name; ``architectures``:
    its catalog model's class (``margin_class``); None where the catalog does not know it (the row is left out)."""
    by_key: dict[tuple[str, str, str, str], list[tuple[float, str]]] = {}
    for r, pred, gpu, arch in zip(rows, tpot_pred_s, gpus, architectures, strict=True):
        measured = r.tpot_s
        if gpu is None or arch is None or not steady_load(r.kind, r.batch, r.num_prompts, r.request_rate):
            continue
        if arch not in CLASSES:
            raise ValueError(f"architecture class {arch!r} is not one of {', '.join(CLASSES)}")
        if not (np.isfinite(measured) and np.isfinite(pred) and pred > 0):
            continue
        figure = (
            measured / pred - 1.0,
            r.source_group,
            release_token(r.engine_version),
            layout_label(r.parallelism, r.gpus),
        )
        sets = ("all", "current") if of_kernel_line(r.engine, r.engine_version) else ("all",)
        for where in (gpu, EVERY_GPU):
            for releases in sets:
                by_key.setdefault((where, engine_name(r.engine), arch, releases), []).append(figure)
    out = []
    for (gpu, engine, arch, releases), figures in sorted(by_key.items()):
        e = np.array([f[0] for f in figures])
        low, median, high = np.percentile(e, [LOW_Q, 50, HIGH_Q])
        out.append(
            dict(
                gpu=gpu,
                engine=engine,
                architecture=arch,
                releases=releases,
                rows=str(len(e)),
                residual_low=f"{low:.2f}",
                residual_median=f"{median:.2f}",
                residual_high=f"{high:.2f}",
                residual_smallest=f"{e.min():.2f}",
                residual_largest=f"{e.max():.2f}",
                sources=" ".join(sorted({f[1] for f in figures})),
                versions=_counted_labels([f[2] for f in figures], _version_key),
                layouts=_counted_labels([f[3] for f in figures], _layout_key),
            )
        )
    return out


def release_token(engine_version: str) -> str:
    """A run's engine release as one word for the file's ``versions`` column: its first word, a leading "v" and a
    local build suffix dropped ("v0.11.0 (the document's Engine Version list)" -> "0.11.0", "0.7.4.dev181+gf35f8e22
    (...)" -> "0.7.4.dev181"); an image tag as written ("rocm/sgl-dev:upstream_20250312_v1"); "?" where none is
    given."""
    words = str(engine_version or "").split()
    if not words:
        return "?"
    word = words[0].split("+")[0]
    return word[1:] if word[:1] == "v" and word[1:2].isdigit() else word


def _counted_labels(labels: Sequence[str], key) -> str:
    """ "0.7.4.dev181:9 0.11.0:1": each label and how many figures have it, in ``key`` order."""
    counts = Counter(labels)
    return " ".join(f"{label}:{counts[label]}" for label in sorted(counts, key=key))


def counted_labels(text: str) -> list[tuple[str, int]]:
    """The (label, figures) pairs of a ``versions`` or ``layouts`` cell ("0.7.4.dev181:9 0.11.0:1")."""
    out = []
    for word in (text or "").split():
        label, _, n = word.rpartition(":")
        out.append((label, int(n)) if label and n.isdigit() else (word, 0))
    return out


def _version_key(version: str) -> tuple:
    """Releases oldest first ("0.4.3.post2" before "0.5.7"), unparsed ones ("?") last."""
    parsed = parse_version(version)
    return (0, parsed.release, version) if parsed is not None else (1, (), version)


def _layout_key(label: str) -> tuple:
    """Layouts by kind (TP, TEP, DEP, PP), then group size: "TP2 TP8 DEP8"."""
    digits = "".join(c for c in label if c.isdigit()) or "0"
    kind = label.rstrip("0123456789x")
    return ({"TP": 0, "TEP": 1, "DEP": 2}.get(kind, 3), kind, int(digits[:3]), label)


Regions = Mapping[tuple[str, str, str, str], ServingRegion]


@functools.lru_cache(maxsize=2)
def load_serving(path: str | None = None) -> dict[tuple[str, str, str, str], ServingRegion]:
    """The file's regions by (GPU or ``EVERY_GPU``, engine, architecture class, releases); empty when the file is
    absent."""
    p = Path(path) if path else serving_residuals_file()
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:  # a file written before s171 has no architecture column
            raise ValueError(
                f"{p}: no column {', '.join(missing)}; the columns are {', '.join(COLUMNS)} "
                "(write it with: python bench/heldout.py --write-serving-residuals)"
            )
        return regions_of(reader)


def regions_of(table: Iterable[Mapping[str, str]]) -> dict[tuple[str, str, str, str], ServingRegion]:
    """Regions by (GPU, engine, class, releases) from rows in the file's columns (``serving_residual_table``'s, or the
    file's)."""
    residuals = ("residual_low", "residual_median", "residual_high", "residual_smallest", "residual_largest")
    return {
        (r["gpu"], r["engine"], r["architecture"], r["releases"]): ServingRegion(
            r["gpu"],
            r["engine"],
            r["architecture"],
            int(r["rows"]),
            *(float(r[c]) for c in residuals),
            r["sources"],
            r["releases"],
            r.get("versions") or "",
            r.get("layouts") or "",
        )
        for r in table
    }


@dataclass(frozen=True)
class MarginPool:
    """The serving figures a query's margin is built from (``margin_pool``): ``own``, its GPU, engine and class's;
    ``pooled``, the same engine and class on every GPU together (None: no figure)."""

    gpu: str
    engine: str
    architecture: str
    own: ServingRegion | None
    pooled: ServingRegion | None
    releases: str = "all"  # RELEASES: which runs the regions count
    min_sources: int = MIN_SOURCES  # the sources a region's own figures need to stand alone (1: the rule before s202)

    @property
    def kind(self) -> str:
        """Which branch of ``margin_range``'s rule applies: "own" (``MIN_ROWS`` figures or more of its own from
        ``min_sources`` sources or more, or from fewer with no other GPU's figures to widen them), "own thin"
        (``MIN_ROWS`` or more of its own from fewer sources, and more figures of the engine and class on every GPU,
        ``MIN_ROWS`` or more), "every GPU" (fewer than ``MIN_ROWS`` of its own, and ``MIN_ROWS`` or more of the engine
        and class on every GPU), "every GPU and own few", "own few" (1 to ``MIN_ROWS - 1`` of its own and too few
        anywhere), or "none"."""
        pooled = self.pooled is not None and self.pooled.rows >= MIN_ROWS
        if self.own is not None and self.own.rows >= MIN_ROWS:
            thin = self.own.source_count < self.min_sources and pooled and self.pooled.rows > self.own.rows
            if not thin:
                return "own"
            return "every GPU and own few" if THIN_AS_FEW else "own thin"
        if pooled:
            return "every GPU and own few" if self.own is not None else "every GPU"
        return "own few" if self.own is not None else "none"


def margin_pool(
    gpu_name: str,
    engine: object,
    architecture: str,
    regions: Regions | None = None,
    releases: str | None = None,
    min_sources: int = MIN_SOURCES,
) -> MarginPool:
    """The regions a margin for ``engine`` (a profile or family name) running a model of class ``architecture``
    (``margin_class``) on ``gpu_name`` reads; ``regions``: the file's unless given. ``releases`` None: every
    release's runs; with ``CURRENT_LINE_FIRST`` (not shipped), the current line's where the profile plans a
    current-line release (``profile_of_kernel_line``) and they are enough for a range (``MIN_ROWS`` on the GPU or on
    every GPU together); or "all" / "current" as given. ``min_sources``: ``MarginPool.min_sources``."""
    if architecture not in CLASSES:
        raise ValueError(f"architecture class {architecture!r} is not one of {', '.join(CLASSES)}")
    eng = engine_name(engine)
    regions = load_serving() if regions is None else regions
    if releases is None:
        current = margin_pool(gpu_name, engine, architecture, regions, "current", min_sources)
        usable = CURRENT_LINE_FIRST and current.kind in ("own", "own thin", "every GPU", "every GPU and own few")
        return (
            current
            if usable and profile_of_kernel_line(engine)
            else margin_pool(gpu_name, engine, architecture, regions, "all", min_sources)
        )
    return MarginPool(
        gpu_name,
        eng,
        architecture,
        regions.get((gpu_name, eng, architecture, releases)),
        regions.get((EVERY_GPU, eng, architecture, releases)),
        releases,
        min_sources,
    )


def _runs(n: int, architecture: str, pool: MarginPool | None = None) -> str:
    """'7 dense-model runs', '1 MoE-model run', '9 MLA-model runs of SGLang 0.5 and later' (a pool of the current
    line's runs)."""
    line = LINE_LABELS.get(pool.engine) if pool is not None and pool.releases == "current" else None
    return f"{n} {architecture}-model run{'s' if n != 1 else ''}" + (f" of {line}" if line else "")


#: The words of a thin region's note (``margin_range``'s "own thin" branch) before the pool that widens it, which
#: ``planner.export.reason.range_basis`` finds.
THIN_WIDENED = "widened to"


#: What a margin taken from the serving runs says it is (``margin_range``'s notes; ``from_serving_runs`` reads it).
HELD_OUT_STEADY = "held-out TPOT at steady load"


def from_serving_runs(note: str) -> bool:
    """Whether a margin's note says it is the serving runs' (``margin_range``), not a calibration file's or the
    prediction range where the engine and class have none."""
    return HELD_OUT_STEADY in note


@functools.lru_cache(maxsize=64)
def borrows_curves(gpu_name: str) -> bool:
    """Whether a catalog GPU's kernel curves are another vendor's (``kernel_curves.curves_miss``: MI300X, MI325X take
    H100's); False for a name the catalog does not hold."""
    from planner.catalog import default_catalog
    from planner.engines.kernel_curves import curves_miss

    catalog = default_catalog()
    if gpu_name not in catalog.gpus:
        return False
    return curves_miss(catalog.gpu(gpu_name), catalog)[0] > 1.0


def _own_ends(pool: MarginPool) -> tuple[float, float]:
    """The range of a GPU whose margin is its own runs' (pool "own" or "own thin"): their percentiles, a thin
    region's widened by the engine and class on every GPU (``margin_range``'s two first branches)."""
    own, pooled = pool.own, pool.pooled
    if pool.kind == "own thin":
        return min(own.low, pooled.low), max(own.high, pooled.high)
    return own.low, own.high


def measured_ends(pool: MarginPool, regions: Regions) -> list[tuple[str, float, float]]:
    """(GPU, low, high) of each GPU whose margin for ``pool``'s engine, class and releases is its own runs' (pool
    "own" or "own thin"), the ends as its ``margin_range`` gives them; where ``pool``'s GPU borrows no other vendor's
    kernel curves, only GPUs that borrow none either (``borrows_curves``)."""
    out = []
    foreign_ok = borrows_curves(pool.gpu)
    for gpu, eng, arch, releases in sorted(regions):
        if gpu in (EVERY_GPU, pool.gpu) or (eng, arch, releases) != (pool.engine, pool.architecture, pool.releases):
            continue
        theirs = margin_pool(gpu, eng, arch, regions, releases, pool.min_sources)
        if theirs.kind in ("own", "own thin") and (foreign_ok or not borrows_curves(gpu)):
            out.append((gpu, *_own_ends(theirs)))
    return out


def no_data_floor(
    low: float, high: float, pool: MarginPool, regions: Regions
) -> tuple[float, float, NoDataFloor | None]:
    """(low, high, floor) of a margin ``low`` / ``high`` for a GPU with no runs of its own of the engine and class
    (``pool.own`` None): each end at least as wide as the widest of ``measured_ends`` (the module's "No data is never
    narrower than some data"), and the ``NoDataFloor`` saying whose end where an end moved (its ``note_words``: ";
    no runs on MI325X: at least as wide as the widest measured GPU of SGLang MLA runs, H200 SXM 141GB's +202%: -24% /
    +182% -> -24% / +202%"); None where none did, or the GPU has runs of its own, or no GPU is measured."""
    measured = measured_ends(pool, regions) if pool.own is None else []
    if not measured:
        return low, high, None
    slow = max(measured, key=lambda m: m[2])
    fast = min(measured, key=lambda m: m[1])
    new_low, new_high = min(low, fast[1]), max(high, slow[2])
    if (new_low, new_high) == (low, high):
        return low, high, None
    label = ENGINE_LABELS.get(pool.engine, pool.engine)
    ends = ((slow[0], slow[2]),) * (new_high != high) + ((fast[0], fast[1]),) * (new_low != low)
    floor = NoDataFloor(pool.gpu, f"{label} {pool.architecture}", ends, (low, high), (new_low, new_high))
    return new_low, new_high, floor


def _from_sources(region: ServingRegion) -> str:
    """ "7 runs from 2 sources": a region's figures and its independent sources (``ServingRegion.source_count``)."""
    return f"{counted(region.rows, 'run')} from {counted(region.source_count, 'source')}"


def _pooled_gpus(pool: MarginPool, regions: Regions) -> str:
    """'A100 SXM 40GB 3, H100 SXM 80GB 7; none on H200 SXM 141GB': the pooled figures per GPU."""
    per_gpu = sorted(
        (r.gpu, r.rows)
        for r in regions.values()
        if r.gpu != EVERY_GPU
        and (r.engine, r.architecture, r.releases) == (pool.engine, pool.architecture, pool.releases)
    )
    text = ", ".join(f"{g} {n}" for g, n in per_gpu)
    return text + ("" if pool.own is not None else f"; none on {pool.gpu}")


#: Which table a prediction range's widening ("no held-out figures on B200 180GB") counts, said where a margin's note
#: goes on to the serving runs at steady load, another table that may hold that GPU (trial 24 F12).
PREDICTION_TABLE = "in the table of single prompts and static batches; serving runs at steady load are another table"


def margin_range(
    prediction: TimeRange,
    gpu_name: str,
    engine: object,
    architecture: str,
    regions: Regions | None = None,
    parallelism: str | None = None,
    min_sources: int = MIN_SOURCES,
) -> TimeRange:
    """The range a fleet of ``engine`` serving a model of class ``architecture`` (``margin_class``) on ``gpu_name``
    is sized with (the module's rule), from ``prediction``, the range of a
    single prediction there (``calibration.residual_range``). ``regions``: the file's (``load_serving``) unless given
    (``bench/range_coverage.py`` rebuilds them without one source at a time). The note says which runs the margin
    comes from ("from 7 dense-model runs on H100 SXM 80GB + vLLM ..."), and ends with those runs' engine releases and
    layouts (``runs_clause``; ``parallelism``: the planned layout, said when no run had it). ``min_sources``:
    ``MarginPool.min_sources`` (1: the rule before s202, which ``bench/range_coverage.py --part sources`` compares)."""
    regions = load_serving() if regions is None else regions
    pool = margin_pool(gpu_name, engine, architecture, regions, min_sources=min_sources)
    kind, own, pooled = pool.kind, pool.own, pool.pooled
    label = ENGINE_LABELS.get(pool.engine, pool.engine)
    held = HELD_OUT_STEADY
    if kind == "none":
        return prediction
    if kind == "own":
        borrowed = curves_part(prediction.widened)
        note = f"from {_runs(own.rows, architecture, pool)} on {gpu_name} + {label} ({held}; sources: {own.sources}): "
        note += f"{own.low:+.0%} / {own.high:+.0%}"
        note += f"; {borrowed}: these runs' errors hold that miss, which is why the range is theirs" if borrowed else ""
        if own.source_count < pool.min_sources:  # thin, with nothing on other GPUs to widen it
            note += f"; {_from_sources(own)}, fewer than {pool.min_sources}, and no other GPU's runs to widen them"
        return TimeRange(own.low, own.high, note + runs_clause(own, parallelism))
    if kind == "own thin":
        low, high = _own_ends(pool)
        note = f"from {_runs(own.rows, architecture, pool)} on {gpu_name} + {label} ({held}; sources: {own.sources}): "
        note += f"{own.low:+.0%} / {own.high:+.0%}; {_from_sources(own)}, fewer than {pool.min_sources}: "
        note += f"{THIN_WIDENED} {label} {architecture} on every GPU ({_from_sources(pooled)}: "
        note += f"{_pooled_gpus(pool, regions)}; sources: {pooled.sources}): {pooled.low:+.0%} / {pooled.high:+.0%}"
        if (low, high) == (own.low, own.high):
            note += ", which it already holds"
        borrowed = curves_part(prediction.widened)
        note += f"; {borrowed}: these runs' errors hold that miss, which is why the range is theirs" if borrowed else ""
        return TimeRange(low, high, note + runs_clause(pooled, parallelism))
    low, high, parts = prediction.low, prediction.high, []
    if kind.startswith("every GPU"):
        low, high = min(low, pooled.low), max(high, pooled.high)
        parts.append(
            f"{_runs(pooled.rows, architecture, pool)} on any GPU + {label} ({_pooled_gpus(pool, regions)}; {held}; "
            f"sources: {pooled.sources}): {pooled.low:+.0%} / {pooled.high:+.0%}"
        )
    if own is not None:
        low, high = min(low, own.smallest), max(high, own.largest)
        parts.append(
            f"the {_runs(own.rows, architecture, pool)} on {gpu_name} + {label} (sources: {own.sources}): "
            f"{own.smallest:+.0%} to {own.largest:+.0%}"
        )
    verb = "widened to hold the errors of" if (low, high) != prediction[:2] else "it already holds the errors of"
    clause = runs_clause(pooled if kind.startswith("every GPU") else own, parallelism)
    # trial 24 F12: "no held-out figures on B200 180GB" beside "B200 180GB 4" read as a contradiction: two tables
    table = f" ({PREDICTION_TABLE})" if prediction.widened else ""
    low, high, floor = no_data_floor(low, high, pool, regions)  # trial 33 F10: never narrower than a measured GPU
    floored = floor.note_words() if floor else ""
    note = f"{prediction.note}{table}; {verb} " + " and of ".join(parts) + floored + clause
    return TimeRange(low, high, note, prediction.widened, floor=floor)


#: The words ``runs_clause`` starts with, which ``runs_named`` finds in a note.
RUNS_CLAUSE = "; the runs' releases: "
#: How a note names the dp-ep layout where no run of a margin had it (trial 16, F1).
NO_DP_EP_RUN = (
    "none of these runs used data-parallel attention with the experts spread (dp-ep, the layout planned), "
    "so the margin is the tensor-parallel runs'"
)


def runs_clause(region: ServingRegion | None, parallelism: str | None = None) -> str:
    """ "; the runs' releases: vLLM 0.7.4.dev181 (9 runs), 0.11.0 (1); layout TP8 (all 10)": which engine releases
    and layouts the runs a margin rests on used (the file's ``versions`` and ``layouts``; trial 16, F1: a +149%
    margin from February 2025 nightlies, all TP 8, sized a dp-ep fleet without saying so), and, where the planned
    ``parallelism`` is "dp-ep" and no run was DEP, ``NO_DP_EP_RUN``. "" for a region without those columns."""
    if region is None or not region.versions:
        return ""
    label = ENGINE_LABELS.get(region.engine, region.engine)
    versions = counted_labels(region.versions)
    said = ", ".join(f"{v} ({counted(n, 'run') if i == 0 else n})" for i, (v, n) in enumerate(versions))
    text = f"{RUNS_CLAUSE}{label} {said}"
    layouts = counted_labels(region.layouts)
    if len(layouts) == 1:
        text += f"; layout {layouts[0][0]} (all {region.rows})"
    elif layouts:
        text += "; layouts " + ", ".join(f"{v} ({n})" for v, n in layouts)
    if parallelism == "dp-ep" and layouts and not any(v.startswith("DEP") for v, _ in layouts):
        text += f"; {NO_DP_EP_RUN}"
    return text


def runs_named(note: str) -> str:
    """What a margin's note says of its runs after ``RUNS_CLAUSE`` (``runs_clause``'s text: "vLLM 0.7.4.dev181 (9 runs),
    0.11.0 (1); layout TP8 (all 10)"), read back by the review's sentences on the margin
    (``planner.export.not_sized.margin_basis``); "" where the note has none."""
    return note.split(RUNS_CLAUSE, 1)[1] if RUNS_CLAUSE in note else ""


def sizing_range(gpu, engine, catalog, gpus: int, model, calibration=None, parallelism: str | None = None) -> TimeRange:
    """The range a budget review sizes a group with (``planner export``'s latency margin), which ``planner plan``
    states beside its prediction range: a calibration entry's own range where one is in effect, else
    ``margin_range`` of the prediction range for this GPU, group and model (``calibration.residual_range``), with
    the calibration's note where a file sets the times but not the range. ``engine``: an engine profile."""
    from planner.accuracy.calibration import calibrated_range, residual_range, with_calibration_note

    prediction = residual_range(gpu, engine.name, calibration, catalog, gpus=gpus, model=model)
    if calibrated_range(gpu, engine, calibration) is not None:
        return prediction
    margin = sibling_margin(gpu, engine, catalog, gpus, model, calibration, parallelism)
    if margin is None:
        margin = margin_range(prediction, gpu.name, engine.name, margin_class(model), parallelism=parallelism)
    return with_calibration_note(margin, gpu, engine, calibration)


#: How the one-line verdict on a margin-sized fleet starts (``margin_verdict``).
MARGIN_VERDICT = "Margin: "


def margin_verdict(
    model_name: str,
    architecture: str,
    engine: object,
    gpu_names: Sequence[str],
    from_runs: bool = True,
    regions: Regions | None = None,
) -> str:
    """One line for the top of a plan or review whose fleet sized at the margin's slow end is not a budget figure
    (trial 33 F10): "Margin: DeepSeek-R1 (MLA) on SGLang has runs from 3 sources (none on MI325X); the margin-sized
    fleet is not a budget figure: measure one replica". ``gpu_names``: the GPUs whose fleets it is said of (each with
    its own runs' sources, or none); ``from_runs`` False: the margin is not the serving runs' (a calibration file's,
    or the prediction range where the engine and class have none), so their sources are not said."""
    fleets = "fleet is not a budget figure" if len(gpu_names) == 1 else "fleets are not budget figures"
    tail = f"the margin-sized {fleets}: measure one replica"
    if not from_runs or not gpu_names:
        return f"{MARGIN_VERDICT}{tail}"
    regions = load_serving() if regions is None else regions
    pools = [margin_pool(g, engine, architecture, regions) for g in gpu_names]
    label = ENGINE_LABELS.get(pools[0].engine, pools[0].engine)
    pooled = pools[0].pooled
    if pooled is None:
        return f"{MARGIN_VERDICT}{model_name} ({architecture}) on {label} has no serving runs; {tail}"
    each = "; ".join(
        f"{q.own.source_count} of them on {q.gpu}" if q.own is not None else f"none on {q.gpu}" for q in pools
    )
    runs = f"has runs from {counted(pooled.source_count, 'source')} ({each})"
    return f"{MARGIN_VERDICT}{model_name} ({architecture}) on {label} {runs}; {tail}"


#: How a margin taken from a sibling part's starts (``sibling_margin``), which ``planner.export.reason.range_basis``
#: reads back.
SIBLING_MARGIN = "'s margin, moved out x"
#: What such a margin's note says of the ranking it gives (trial 27 F13: the review read as a hardware result).
DATA_GAP = "its rank against other GPUs rests on that data gap, not on a measurement of"


def sibling_margin(
    gpu, engine, catalog, gpus: int, model, calibration=None, parallelism: str | None = None
) -> TimeRange | None:
    """The margin of a GPU that takes a sibling part's kernel rates (``kernel_curves.sibling_miss``: MI325X and MI355X
    take MI300X's) and has no serving runs of its own (its margin pool neither "own" nor "own thin") where the sibling
    has (its pool "own" or "own thin"; else the sibling's margin is the pooled one this GPU gets anyway): the sibling's
    margin (``margin_range`` of the sibling's prediction range) moved out by the miss factor m either way, widened to
    hold this GPU's own 1 to ``MIN_ROWS - 1`` runs where it has some; None where the rule does not apply. The
    sibling's runs hold the errors of the curves both borrow; m is what the sibling's rates may miss on this part
    (``ranges.sibling_range``). Rule and reasons: docs/accuracy.md, "A sibling part's kernel rates"."""
    from planner.accuracy.calibration import residual_range
    from planner.accuracy.ranges import _shift
    from planner.engines.kernel_curves import sibling_miss

    if not engine.kernel_curves:
        return None
    miss, sibling = sibling_miss(gpu, catalog)
    cls = margin_class(model)
    pool = margin_pool(gpu.name, engine.name, cls)
    if not sibling or pool.kind in ("own", "own thin"):
        return None
    if margin_pool(sibling, engine.name, cls).kind not in ("own", "own thin"):  # the sibling's margin is no nearer
        return None
    sib = catalog.gpu(sibling)
    theirs = margin_range(
        residual_range(sib, engine.name, calibration, catalog, gpus=gpus, model=model),
        sib.name,
        engine.name,
        cls,
        parallelism=parallelism,
    )
    low, high = _shift(theirs.low, 1 / miss), _shift(theirs.high, miss)
    own = ""
    if pool.own is not None:
        low, high = min(low, pool.own.smallest), max(high, pool.own.largest)
        own = f"; widened to hold the {_runs(pool.own.rows, cls, pool)} on {gpu.name} ({pool.own.smallest:+.0%} to "
        own += f"{pool.own.largest:+.0%})"
    same = "the same compute die" if sib.architecture == gpu.architecture else "another architecture"
    moved = f"{low:+.0%} / {high:+.0%}"
    low, high, floor = no_data_floor(low, high, pool, load_serving())  # trial 33 F10: never narrower than measured
    floored = floor.note_words() if floor else ""
    note = (
        f"{sib.name}{SIBLING_MARGIN}{miss:.2f} either way for {gpu.name} ({gpu.name} takes {sib.name}'s kernel rates, "
        f"{same}, and has no serving runs of its own: {DATA_GAP} {gpu.name}): {theirs.low:+.0%} / {theirs.high:+.0%} "
        f"-> {moved}{own}{floored}; {sib.name}'s margin: {theirs.note}"
    )
    return TimeRange(low, high, note, theirs.widened, floor=floor)


#: The words of an engine line before ``KERNEL_LINES``' (how ``release_split``'s statement names the older runs).
OLDER_LINE_LABELS = {
    "vllm": "vLLM 0.7 and earlier",
    "sglang": "SGLang 0.4 and earlier",
    "tensorrt-llm": "TensorRT-LLM 0.x",
}


@dataclass(frozen=True)
class ReleaseSplit:
    """The runs a margin rests on (``region``: the one its note's ``runs_clause`` names), split by engine line:
    ``current``, the same scope's runs of the engine's current line (``of_kernel_line``, the table's "current" rows;
    None: none). A release whose version does not parse (an image tag) counts as current, as the table counts it."""

    region: ServingRegion
    current: ServingRegion | None

    @property
    def older_runs(self) -> int:
        """The region's runs of releases before the current line: all less the current line's."""
        return self.region.rows - (self.current.rows if self.current is not None else 0)

    @property
    def mostly_older(self) -> bool:
        """Whether more than half of the region's runs are of releases before the current line."""
        return 2 * self.older_runs > self.region.rows

    def older_versions(self) -> list[tuple[str, int]]:
        """(release, runs) of the region's runs before the current line, oldest first: its ``versions`` less the
        current line's."""
        current = dict(counted_labels(self.current.versions)) if self.current is not None else {}
        return [(v, n - current.get(v, 0)) for v, n in counted_labels(self.region.versions) if n > current.get(v, 0)]


def release_split(
    gpu_name: str, engine: object, architecture: str, regions: Regions | None = None
) -> ReleaseSplit | None:
    """The runs the margin for ``engine`` (a profile or its name) on ``gpu_name`` for a model of class
    ``architecture`` rests on, split by engine line (``ReleaseSplit``): the region ``margin_range``'s note names
    (its own GPU's runs where they stand alone or are all there is, "own" and "own few"; else the engine and class on
    every GPU) and the same scope's current-line region. None where the margin reads no serving run, the engine has
    no line (``KERNEL_LINES``), or the profile plans a release before its line ("sglang-0.4": those runs are not
    older than it)."""
    regions = load_serving() if regions is None else regions
    pool = margin_pool(gpu_name, engine, architecture, regions, releases="all")
    if pool.kind == "none" or pool.engine not in KERNEL_LINES or not profile_of_kernel_line(engine):
        return None
    own_scope = pool.kind in ("own", "own few")
    region = pool.own if own_scope else pool.pooled
    if region is None or region.rows < 1:
        return None
    current = margin_pool(gpu_name, engine, architecture, regions, releases="current")
    return ReleaseSplit(region, current.own if own_scope else current.pooled)
