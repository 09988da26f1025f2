"""TTFT at the lightest loads split into its parts, per source and engine (issues 21 and 22).

    PYTHONPATH=. python bench/ttft_parts.py

TTFT = per-request front end + queue + the prefill step(s) (the step that finishes a prompt samples its first token in
vLLM V1, SGLang and TensorRT-LLM alike). Three readings of the shipped rows, none fitted:

1. **Lightest runs** (``planner.accuracy.frontend.lightest_runs``: each sweep's lowest rate or concurrency in
   ``catalogs/reference/load_public.csv``): the published median TTFT beside the simulated one with no front end
   (queue + steps, ``predict_percentiles(frontend_s=0)``) and the prompt's prefill step alone
   (``bench/step_operators.step_terms``); "residual" is what is left for the front end, by difference (for a
   closed loop ``planner.accuracy.frontend.residual_s`` solves for the front end instead, since it also delays each
   next request's arrival at the engine: s88). Then the run's ITL: a step that
   carries a new prompt delays the *other* streams' next token, and no front end reaches that gap, so
   "stall" = (published ITL p99 - p50) - (simulated ITL p99 - p50) is time the engine (or a server loop every stream
   shares) spends per new prompt beyond the model's step, printed where at least 1% of the run's inter-token gaps
   follow a new prompt (closed loop: (C - 1) / output length >= 1%), else "-".
2. **Per source and engine**: the median residual and stall of those runs.
3. **Prompt-length pairs**: runs of one source, engine, model, GPU group and load at two prompt lengths, published
   against simulated (front end 0): the slope is prefill time per token, the intercept what a prompt costs at no
   length (front end and fixed costs).

What it showed (main a3001ab, docs/accuracy.md "TTFT at the lightest loads"): on one host, one client and one model
(gpustack, Qwen3-8B on one H100, ``vllm bench serve`` chat at concurrency 4) the residual is SGLang 0.5.3 11.5 ms,
TensorRT-LLM 1.2 27.3 ms, vLLM 0.11 52.2 ms, and vLLM's stall is 33.5 ms (SGLang's -3.4): most of vLLM's extra time
there is paid in a loop every stream waits on, once per new request or per admission (the same release's bursts
allow serial per-request work of 11.4 ms on gpustack's 4 x H100 host and 37 ms on its one-H100 one). Other vLLM sources show
neither (0.14.1 on H200: residual 1 ms, stall 0-5 ms; 0.8.3 on A100: 10 ms, 1-6 ms), so it belongs to that host or
release, and no public source says which. The stall itself was found before (``bench/load_gaps.py`` sections 4-5,
the simulation's ``stream_stall_s`` option, off by default); this split places it inside the TTFT residual.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from step_operators import step_terms  # noqa: E402

from planner.accuracy.frontend import lightest_runs, offered_load  # noqa: E402
from planner.accuracy.predict import predict_decode_rows  # noqa: E402
from planner.accuracy.published import DecodeRow, load_decode_rows, reference_dir  # noqa: E402
from planner.accuracy.under_load import predict_percentiles  # noqa: E402
from planner.errors import PlannerError  # noqa: E402

#: A stall is read from the ITL p99 only where at least this share of a run's inter-token gaps follow a new prompt.
MIN_AFFECTED_SHARE = 0.01


def affected_share(row: DecodeRow) -> float:
    """Share of a closed-loop run's inter-token gaps that follow another request's new prompt: (C - 1) other streams
    per arrival over each request's output - 1 gaps; 0 for a rated run (its concurrency is not stated)."""
    if row.request_rate is not None or row.batch <= 1:
        return 0.0
    return (row.batch - 1) / max(row.output_len - 1, 1)


def parts(row: DecodeRow) -> dict[str, float]:
    """One light run's parts, milliseconds: published and simulated (front end 0) median TTFT, their difference
    ("residual"), the prompt's prefill step alone, and the stall (module docstring; NaN where not readable)."""
    sim = predict_percentiles(row, frontend_s=0.0)
    try:
        prefill = step_terms(row, prefill=True, batch=1.0, tokens=float(max(row.input_len, 1)))["step"] * 1e3
    except PlannerError:
        prefill = math.nan
    published = row.ttft_median_s * 1e3
    stall = math.nan
    if affected_share(row) >= MIN_AFFECTED_SHARE and not math.isnan(row.itl_p99_s + row.itl_median_s):
        stall = (row.itl_p99_s - row.itl_median_s) * 1e3 - (sim["itl_p99_ms"] - sim["itl_median_ms"])
    return {
        "published": published,
        "simulated": sim["ttft_median_ms"],
        "residual": published - sim["ttft_median_ms"],
        "prefill": prefill,
        "stall": stall,
    }


def _label(r: DecodeRow) -> str:
    version = (r.engine_version.split() or [""])[0]
    return f"{r.engine} {version}"


def lightest_table(rows: list[DecodeRow]) -> tuple[list[str], list[tuple[DecodeRow, dict[str, float]]]]:
    """Section 1's lines and each run's parts."""
    lines = [
        "== lightest runs: median TTFT, ms (published / simulated with no front end / residual), prefill step alone,",
        "   stall per new prompt beyond the model's step (from the ITL p99; '-' where under 1% of gaps follow one)",
        f"{'run':7s}{'source':26s}{'engine':22s}{'GPUs':18s}{'model':22s}{'load':>6s}{'prompt':>7s}"
        f"{'pub':>8s}{'sim':>8s}{'resid':>8s}{'prefill':>8s}{'stall':>7s}",
    ]
    out = []
    for r in lightest_runs(rows):
        try:
            p = parts(r)
        except PlannerError:
            continue
        out.append((r, p))
        stall = "-" if math.isnan(p["stall"]) else f"{p['stall']:.1f}"
        gpus = f"{r.gpus} x {r.gpu.split('(')[0].strip()}"
        lines.append(
            f"{r.record_id:7s}{r.source_group[:25]:26s}{_label(r)[:21]:22s}{gpus[:17]:18s}"
            f"{r.model.split('/')[-1][:21]:22s}{offered_load(r):6g}{r.input_len:7d}{p['published']:8.1f}"
            f"{p['simulated']:8.1f}{p['residual']:8.1f}{p['prefill']:8.1f}{stall:>7s}"
        )
    return lines, out


def by_source(found: list[tuple[DecodeRow, dict[str, float]]]) -> list[str]:
    """Section 2: median residual and stall per (source, engine release)."""
    groups: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for r, p in found:
        groups[(r.source_group, _label(r))].append(p)
    lines = ["", "== per source and engine release: median residual / stall, ms (runs)"]
    for (source, label), ps in sorted(groups.items()):
        stalls = [p["stall"] for p in ps if not math.isnan(p["stall"])]
        stall = f"{statistics.median(stalls):6.1f}" if stalls else "     -"
        lines.append(
            f"  {source[:34]:35s}{label[:22]:23s}{statistics.median(p['residual'] for p in ps):7.1f}{stall} ({len(ps)})"
        )
    return lines


def _published_ttft_s(r: DecodeRow) -> float:
    return r.ttft_median_s if not math.isnan(r.ttft_median_s) else r.ttft_s


def length_pairs(rows: list[DecodeRow]) -> list[str]:
    """Section 3: slope (us per prompt token) and intercept (ms) of published and simulated TTFT between the shortest
    and longest prompt of one source, engine, model and GPU group, at the lowest load that has both (a queue weighs
    least there)."""
    sets: dict[tuple, dict[float, list[DecodeRow]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        load = offered_load(r)
        if load is None or r.problem or r.speculation is not None or math.isnan(_published_ttft_s(r)):
            continue
        key = (r.source_group, r.engine, r.engine_version, r.model, r.gpu.split("(")[0].strip(), r.gpus)
        sets[key][load].append(r)
    pairs = []
    for key, by_load in sorted(sets.items(), key=lambda kv: str(kv[0])):
        for load in sorted(by_load):
            runs = by_load[load]
            lengths = sorted({r.input_len for r in runs})
            if len(lengths) >= 2 and lengths[-1] >= 1.5 * lengths[0]:
                short = next(r for r in runs if r.input_len == lengths[0])
                long = next(r for r in runs if r.input_len == lengths[-1])
                pairs.append(((*key, load), short, long))
                break
    if not pairs:
        return []
    flat = [r for _, s, lg in pairs for r in (s, lg)]
    sim = predict_decode_rows(flat, frontend_s=[0.0] * len(flat)).ttft_s
    lines = [
        "",
        "== prompt-length pairs at one load: slope us/token and intercept ms, published / simulated (front end 0)",
    ]
    for i, (key, short, long) in enumerate(pairs):
        source, engine, _, model, gpu, gpus, load = key
        dl = long.input_len - short.input_len
        pub = (_published_ttft_s(short), _published_ttft_s(long))
        mod = (sim[2 * i], sim[2 * i + 1])
        slope_p, slope_m = (pub[1] - pub[0]) / dl, (mod[1] - mod[0]) / dl
        icpt_p, icpt_m = pub[0] - slope_p * short.input_len, mod[0] - slope_m * short.input_len
        lines.append(
            f"  {short.record_id}/{long.record_id} {source[:30]} {engine} {gpus} x {gpu[:14]} {model.split('/')[-1][:22]}"
            f" load {load:g}, {short.input_len} -> {long.input_len} tokens: slope {slope_p * 1e6:.1f} / "
            f"{slope_m * 1e6:.1f}, intercept {icpt_p * 1e3:.1f} / {icpt_m * 1e3:.1f}"
        )
    return lines


def main() -> int:
    loaded = load_decode_rows(reference_dir() / "load_public.csv")
    lines, found = lightest_table(loaded)
    print("\n".join(lines + by_source(found) + length_pairs(load_decode_rows())))
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    raise SystemExit(main())
