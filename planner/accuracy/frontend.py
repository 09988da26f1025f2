"""Per-request front-end time: what a served request spends outside the engine's steps (HTTP, chat template,
tokenizing, detokenizing, the client's own parsing), fitted on published loaded runs, judged leaving sources out.

No engine documents or measures this time per request (issue 22's gap (a); vLLM, SGLang and TensorRT-LLM issues
measure it only for one client or one model), so it is a fitted term. The residual of a run is the front-end time with
which the simulation gives its published median TTFT (``residual_s``): at a request rate, the published median minus
the simulated one with no front end (``predict_percentiles(row, frontend_s=0)``), since a front end moves every
arrival alike; in a closed loop the front end also delays each next request's arrival at the engine (after its
predecessor's last token reaches the client), which sets its phase against the engine's steps and keeps fewer requests
at the engine, so that difference overstates it and the value is solved for instead. Only each sweep's **lightest
load** counts: of the runs of one engine, source, model, GPU group and dataset at a request rate or a closed-loop
concurrency (never all at once), those at the sweep's lowest rate (or concurrency), so that a queue the simulation
gets wrong is read as little as it can be as a front end.

One vote per (engine, source): the median residual of that source's lightest-load runs of that engine. The front-end
time is the median of all votes (at least 0), one value for every engine: the votes do not separate engines (vLLM's
run from -1.5 to 211 ms over five sources), and a value per engine, judged leaving sources out, predicted median TTFT
worse (40% median / 107% worst |error| over the shipped runs, against 33% / 100% for one value; 47% / 100% with none).
``frontend_s_for`` gives the value a source is *predicted* with: the same rule over the other sources' votes only
(leave one source out), so no figure is judged by a value fitted on its own rows.
Sources in ``JUDGED_ONLY_SOURCE_GROUPS`` are held out of the fit: they cast no vote, so they are predicted with the
value fitted on every voting source and never move another source's value (s168: a source added after ``FRONTEND_S``
was fitted is judged by it, not fitted to).
``planner.serving.load.FRONTEND_S`` is the value fitted on every voting source, the default of every simulated replica
(plans, exports, Excel); ``bench/frontend_fit.py`` re-derives it and prints each source's left-out value.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from planner.accuracy.published import DecodeRow, load_decode_rows, reference_dir
from planner.catalog import default_catalog
from planner.errors import PlannerError
from planner.serving import benchmark
from planner.serving.load import FRONTEND_S

__all__ = [
    "FRONTEND_S",
    "JUDGED_ONLY_SOURCE_GROUPS",
    "SOLVE_TOLERANCE_S",
    "Vote",
    "fitted_frontend_s",
    "frontend_for_rows",
    "frontend_s_for",
    "frontend_s_of_rows",
    "lightest_runs",
    "offered_load",
    "residual_s",
    "shipped_votes",
    "votes",
]

#: The votes behind ``FRONTEND_S`` (engine, source: median front end, ms, of its sweeps' lightest-load runs): vLLM
#: gpustack 0.10/0.11 26.9 (30.8 by difference), H200 0.14.1 report 1.2, sglang-v0.3.0-vs-vllm-v0.6.0 33.9, surajssd
#: A100 0.8.3 9.6, vLLM PR 23151 89.0 (one closed-loop run at concurrency 10; 178.5 by difference); SGLang datacrunch
#: 0.4 27.1, gpustack 0.5.3 16.7 (21.9), sglang-v0.3.0 15.9; TensorRT-LLM gpustack 22.0 (27.3). Median 22.0 ms
#: (27.1 by difference; python bench/frontend_fit.py).


#: Loaded sources that are judged but cast no vote (held out of the front-end fit): s168's RTX 3090 runs of
#: Meta-Llama-3-8B-Instruct (vLLM 0.4.1, LMDeploy 0.4.0, TensorRT-LLM 0.9.0; LD098-LD113), added after ``FRONTEND_S``
#: was fitted. Had they voted (vLLM -3.1, LMDeploy -14.9, TensorRT-LLM 23.4 ms), the median of 14 votes would be
#: 19.3 ms instead of 22.0 ms: a fitted term moved by rows reported as held out. s187's InferenceX DeepSeek-R1
#: concurrency sweeps (IXA001-IXA091, ``bench/inferencex_rows.py``) are judged the same way, and so are s190's SGLang
#: cookbook's speed benchmarks (one source, ``sgl-cookbook``: its pages are one publisher's runs with one client and
#: method) and the vLLM blog's FP8 KV-cache runs (VFK001-VFK004: Llama 3.1 8B and gpt-oss-20b on one H100, vLLM 0.19).
JUDGED_ONLY_SOURCE_GROUPS = (
    "rtx3090-llama3-8b-vllm-lmdeploy-trtllm-sharegpt",
    "inferencex-app-dsr1-single-node",
    "sgl-cookbook",
    "vllm-blog-2026-04-fp8-kvcache",
)


@dataclass(frozen=True)
class Vote:
    """One (engine, source)'s front-end residual: median over its sweeps' lightest-load runs, seconds."""

    engine: str
    source_group: str
    residual_s: float
    runs: tuple[str, ...]


def offered_load(row: DecodeRow) -> float | None:
    """The run's request rate (req/s) or closed-loop concurrency; None for a burst (all at once)."""
    if row.request_rate is not None and math.isfinite(row.request_rate):
        return float(row.request_rate)
    if row.kind == "serving" and 0 < row.batch < (row.num_prompts or 0):
        return float(row.batch)
    return None


#: How closely a closed-loop run's front-end time is solved for (``residual_s``), seconds.
SOLVE_TOLERANCE_S = 1e-4


def residual_s(row: DecodeRow, **predict) -> float | None:
    """The front-end time F, seconds, at which the simulated median TTFT equals the published one; None when the row
    has no median TTFT or cannot be simulated.

    TTFT(F) = F + engine(F). At a request rate with every request's front end in parallel the engine's part does not
    depend on F (every arrival moves by F), so F = published - TTFT(0); with a serial part (``planner.serving.
    benchmark.SERIAL_FRONT_END_S`` when set, min(it, F) of each request done by one process in turn) requests also
    wait for one another there, so F is solved for, as in a closed loop. In a closed loop (``offered_load``: a concurrency) the client sends each next request
    when the previous one's last token reaches it, so F also delays that request's arrival at the engine: with F = 0
    it arrives as a step ends and joins the next step at once, with F > 0 mid-step, and fewer requests are at the
    engine. published - TTFT(0) then counts that wait as front end; F is solved for instead (``scipy.optimize.brentq``
    between 0 and published - TTFT(0), widened while TTFT there is still short, to ``SOLVE_TOLERANCE_S``). A run
    faster than simulated with no front end keeps its negative difference (``fitted_frontend_s`` floors the median
    at 0)."""
    from planner.accuracy.under_load import predict_percentiles

    if row.problem or math.isnan(row.ttft_median_s):
        return None

    def short_s(front_s: float) -> float:  # simulated minus published median TTFT at a front end of front_s
        return predict_percentiles(row, frontend_s=front_s, **predict)["ttft_median_ms"] / 1e3 - row.ttft_median_s

    try:
        difference = -short_s(0.0)
        rated = row.request_rate is not None and math.isfinite(row.request_rate)
        if difference <= 0.0 or (rated and benchmark.SERIAL_FRONT_END_S <= 0.0):
            return difference
        if offered_load(row) is None:
            return difference  # a burst: no next request to delay
        high = difference
        while short_s(high) < 0.0 and high < 64 * difference:
            high *= 2.0
        from scipy.optimize import brentq

        return float(brentq(short_s, 0.0, high, xtol=SOLVE_TOLERANCE_S)) if short_s(high) >= 0.0 else high
    except PlannerError:
        return None


def sweep_of(row: DecodeRow) -> tuple:
    """What runs of one sweep share: engine, source, model, GPU (the cell's name without its notes), group size and
    dataset (the cell's first word, lower case, without its notes)."""
    dataset = (row.dataset.split() or [""])[0].strip(",;").lower()
    return (row.engine, row.source_group, row.model, row.gpu.split("(")[0].strip(), row.gpus, dataset)


def lightest_runs(rows: Iterable[DecodeRow]) -> list[DecodeRow]:
    """The runs at the lowest load of each sweep (``sweep_of``, rated and closed-loop apart; runs with a median TTFT
    only), in the order of their sweeps: where a queue the simulation gets wrong weighs least."""
    sweeps: dict[tuple, list[tuple[float, DecodeRow]]] = {}
    for r in rows:
        load = offered_load(r)
        if load is not None and not r.problem and not math.isnan(r.ttft_median_s):
            sweeps.setdefault((*sweep_of(r), r.request_rate is None), []).append((load, r))
    out = []
    for _, runs in sorted(sweeps.items(), key=lambda kv: str(kv[0])):
        lowest = min(load for load, _ in runs)
        out.extend(r for load, r in runs if load == lowest)
    return out


def votes(rows: Iterable[DecodeRow], **predict) -> list[Vote]:
    """Each (engine, source)'s vote: the median residual (``residual_s``) of its sweeps' lightest runs
    (``lightest_runs``); sources in ``JUDGED_ONLY_SOURCE_GROUPS`` cast none."""
    found: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for r in lightest_runs(r for r in rows if r.source_group not in JUDGED_ONLY_SOURCE_GROUPS):
        x = residual_s(r, **predict)
        if x is not None:
            found.setdefault((r.engine, r.source_group), []).append((r.record_id, x))
    return [
        Vote(engine, source, statistics.median(x for _, x in runs), tuple(rid for rid, _ in runs))
        for (engine, source), runs in sorted(found.items())
    ]


def fitted_frontend_s(all_votes: Iterable[Vote], leave_out: str | None = None) -> float:
    """The front-end time, seconds: the median of the votes from sources other than ``leave_out``, at least 0 (0 when
    there are none)."""
    others = [v.residual_s for v in all_votes if v.source_group != leave_out]
    return max(statistics.median(others), 0.0) if others else 0.0


def frontend_s_for(row: DecodeRow, all_votes: Iterable[Vote]) -> float:
    """The front-end time ``row`` is predicted with: fitted on every source but its own (leave one source out)."""
    return fitted_frontend_s(all_votes, leave_out=row.source_group)


def frontend_for_rows(rows: Iterable[DecodeRow], **predict) -> dict[str, float]:
    """The front-end time each row is predicted with, seconds, by record id: a row of a source in
    ``catalogs/reference/load_public.csv`` gets the value fitted on that file's other sources (``frontend_s_for``);
    any other row the value fitted on every shipped source (``FRONTEND_S`` when the simulation's options are the
    defaults). The shipped runs are simulated only when a row needs them."""
    rows = list(rows)
    if predict.get("catalog") is default_catalog():  # the shipped catalog, as given by the CLI: the default options
        predict = {k: v for k, v in predict.items() if k != "catalog"}  # (a user's row: FRONTEND_S, as plan has it)
    shipped = load_decode_rows(reference_dir() / "load_public.csv")
    groups = {r.source_group for r in shipped}
    if not any(r.source_group in groups for r in rows) and not any(v is not None for v in predict.values()):
        return {r.record_id: FRONTEND_S for r in rows}
    fits = votes(shipped, **predict)
    return {r.record_id: fitted_frontend_s(fits, r.source_group if r.source_group in groups else None) for r in rows}


@functools.cache
def shipped_votes() -> tuple[Vote, ...]:
    """The shipped loaded runs' votes with the default options, computed once per process."""
    return tuple(votes(load_decode_rows(reference_dir() / "load_public.csv")))


def frontend_s_of_rows(rows: Iterable[DecodeRow]) -> list[float]:
    """Each row's per-request front-end time, seconds, in order (for ``predict_decode_rows(frontend_s=...)``): the
    median of the shipped votes of every source but the row's own (``fitted_frontend_s``, leave one source out), so
    no row is predicted with its own source's vote; ``FRONTEND_S`` (the median of all votes) for a source that did
    not vote. Default options only: the front end is outside the engine."""
    fits = shipped_votes()
    voted = {v.source_group for v in fits}
    return [fitted_frontend_s(fits, r.source_group if r.source_group in voted else None) for r in rows]
