"""The latency margin per GPU and engine: held-out TPOT errors of that engine's serving runs on that GPU.

``planner export`` sizes a fleet so that the pessimistic end of the predicted TPOT meets the target. The range of a
single prediction (``planner.accuracy.ranges``) comes from the fit sources' rows left out one source at a time:
static batches, mostly TensorRT-LLM and LMDeploy. A fleet runs an engine under steady load, so its margin comes
from the published serving runs the time factors never saw (``bench/heldout.py``'s held-out rows) whose clients
kept a load steady: a request rate, or a fixed number of requests in flight (runs that send every prompt at once
are excluded: their error is the schedule's, not the step's). ``catalogs/reference/heldout_serving_residuals.csv``
(written only by ``python bench/heldout.py --write-serving-residuals`` from ``serving_residual_table``) holds, per
GPU and engine, the figures' count and the 10th, 50th and 90th percentile and the largest of measured TPOT /
predicted TPOT - 1.

**Rule** (``margin_range``), for a query's GPU and engine:

- at least ``MIN_ROWS`` figures: their 10th-90th percentiles are the range (H100 with vLLM: 9 figures, -8% / +19%);
  where the GPU's kernel curves are another vendor's (MI300X: H100's, ``planner.accuracy.ranges.curves_text``), the
  note says so: the runs' errors hold the borrowed curves' miss, so the range is not moved out for it again;
- 1 to ``MIN_ROWS - 1`` figures: the prediction range (``ranges.region_residuals``), but at least as wide as the
  errors measured there: its high end at least their largest, its low end at most their smallest (A100 80GB with
  vLLM: 4 figures, -17% to -9%, so its low end at most -17%);
- none: the prediction range unchanged (B200: all GPUs' range, widened).

A calibration file's range replaces all of this (``planner.accuracy.calibration.calibrated_range``).
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from planner.accuracy.ranges import MIN_ROWS, TimeRange, curves_part
from planner.catalog.loader import shipped_catalog_dir
from planner.engines.profiles import ENGINE_ALIASES

#: Percentiles of a region's range, as the prediction ranges take them.
LOW_Q, HIGH_Q = 10, 90


@dataclass(frozen=True)
class ServingRegion:
    """Held-out steady-load TPOT residuals (measured / predicted - 1) of one engine on one GPU."""

    gpu: str
    engine: str
    rows: int
    low: float  # 10th percentile
    median: float
    high: float  # 90th percentile
    smallest: float
    largest: float
    sources: str


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


def serving_residual_table(rows: Sequence, tpot_pred_s: Sequence[float], gpus: Sequence[str | None]) -> list[dict]:
    """The rows of ``heldout_serving_residuals.csv``: per (GPU, engine) of the steady-load rows with a published and a
    predicted TPOT, the quantiles of measured / predicted - 1. ``gpus``: each row's catalog GPU name (None: unknown)."""
    by_pair: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for r, pred, gpu in zip(rows, tpot_pred_s, gpus, strict=True):
        measured = r.tpot_s
        if gpu is None or not steady_load(r.kind, r.batch, r.num_prompts, r.request_rate):
            continue
        if not (np.isfinite(measured) and np.isfinite(pred) and pred > 0):
            continue
        by_pair.setdefault((gpu, engine_name(r.engine)), []).append((measured / pred - 1.0, r.source_group))
    out = []
    for (gpu, engine), figures in sorted(by_pair.items()):
        e = np.array([x for x, _ in figures])
        low, median, high = np.percentile(e, [LOW_Q, 50, HIGH_Q])
        out.append(
            dict(
                gpu=gpu,
                engine=engine,
                rows=str(len(e)),
                residual_low=f"{low:.2f}",
                residual_median=f"{median:.2f}",
                residual_high=f"{high:.2f}",
                residual_smallest=f"{e.min():.2f}",
                residual_largest=f"{e.max():.2f}",
                sources=" ".join(sorted({s for _, s in figures})),
            )
        )
    return out


@functools.lru_cache(maxsize=2)
def load_serving(path: str | None = None) -> dict[tuple[str, str], ServingRegion]:
    """The file's regions by (GPU, engine); empty when the file is absent."""
    p = Path(path) if path else serving_residuals_file()
    if not p.exists():
        return {}
    with open(p, newline="", encoding="utf-8") as f:
        return regions_of(csv.DictReader(f))


def regions_of(table: Iterable[Mapping[str, str]]) -> dict[tuple[str, str], ServingRegion]:
    """Regions by (GPU, engine) from rows in the file's columns (``serving_residual_table``'s, or the file's)."""
    residuals = ("residual_low", "residual_median", "residual_high", "residual_smallest", "residual_largest")
    return {
        (r["gpu"], r["engine"]): ServingRegion(
            r["gpu"], r["engine"], int(r["rows"]), *(float(r[c]) for c in residuals), r["sources"]
        )
        for r in table
    }


def margin_range(
    prediction: TimeRange,
    gpu_name: str,
    engine: object,
    regions: Mapping[tuple[str, str], ServingRegion] | None = None,
) -> TimeRange:
    """The range a fleet of ``engine`` on ``gpu_name`` is sized with (the module's rule), from ``prediction``, the
    range of a single prediction there (``calibration.residual_range``). ``regions``: the file's (``load_serving``)
    unless given (``bench/range_coverage.py`` rebuilds them without one source at a time)."""
    eng = engine_name(engine)
    region = (load_serving() if regions is None else regions).get((gpu_name, eng))
    if region is None:
        return prediction
    where = f"held-out TPOT of {region.rows} steady-load serving run{'s' if region.rows > 1 else ''} of {eng} on "
    where += f"{gpu_name} (sources: {region.sources})"
    if region.rows >= MIN_ROWS:
        borrowed = curves_part(prediction.widened)
        note = f"{where}: {region.low:+.0%} / {region.high:+.0%}"
        note += f"; {borrowed}: these runs' errors hold that miss, which is why the range is theirs" if borrowed else ""
        return TimeRange(region.low, region.high, note)
    low, high = min(prediction.low, region.smallest), max(prediction.high, region.largest)
    if (low, high) == (prediction.low, prediction.high):
        return prediction
    note = (
        f"{prediction.note}; at least the errors measured on {where}: {region.smallest:+.0%} to {region.largest:+.0%}"
    )
    return TimeRange(low, high, note, prediction.widened)
