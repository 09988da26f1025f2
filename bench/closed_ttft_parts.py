"""Closed-loop runs: the simulated median TTFT split into its parts, beside the published median (issue 22).

    PYTHONPATH=. python bench/closed_ttft_parts.py [runs.csv]

Each closed-loop run of ``catalogs/reference/load_public.csv`` (a client keeping C requests in flight, no request
rate) is simulated as ``bench/load_validation.py`` simulates it (its source's front end fitted on the other sources,
``planner.accuracy.frontend``), with the simulation's trace on (``predict_percentiles(trace=...)``, a
``planner.serving.load.RunTrace``).
Each request's simulated TTFT is split into: the front end F; the wait for the step in flight when it reached the
engine ("in flight"); steps that ran after that and before its own ("earlier": other prompts ahead of it, an async
scheduler's one step more, its own earlier chunks); and its own step, split again into its own prompt's prefill alone
("own"), the other prompts computed in the same step ("others"), and what the step's decodes add ("decodes": the step
time minus the prefill of all its prompts alone). The parts are the mean over the requests whose TTFT lies between the
run's 40th and 60th percentiles (they add up to the mean TTFT of that band, "band"); "sim" is the simulated median,
"pub" the published one, "err" sim / pub - 1.

A second table anchors each sweep that has a run at one request in flight: the front end with which the simulation
gives that run's published median (``anchored_frontend_s``: at concurrency 1 the client sends a request only when the
one before has finished, so no queue, no decode and no other prompt share its step, and its TTFT is the front end
plus its own prefill), then the sweep's other runs predicted with it. What is left there is what the closed loop adds
beyond one request alone (queueing behind the step in flight, the mixed step), judged against the same host; the
anchored value is the source's own, so these figures are a diagnosis, not a held-out prediction. A third anchors each
server release on one host (``servers``): the front end solved on its plainest run, and every other run's shortfall
with it, which is what that run's own steps cost beyond the simulation's (the front end is the server's, not the
checkpoint's or the flags').

What it showed (s108, main 3bf2973): 30 of the 31 closed runs are gpustack's (``vllm bench serve --backend
openai-chat``, 100 ShareGPT requests, 1-8 in flight; the client's TTFT runs from before the POST to the first chunk
with a choice, the server's role chunk sent with the first token, as simulated), the other vLLM PR 23151's LD013.
The simulated median is mostly the front end (19.3-21.5 ms, the other sources' value) and the request's own prefill
(6.2-49.6 ms); the step in flight adds 0-11 ms (LD013 99 ms: its wave's first prompts' prefill step), decodes sharing
the request's step 0-4 ms, other prompts in it nothing but LD013's 75 ms. The gap is there at one in flight, where no
closed-loop rule acts (vLLM 0.11 Qwen3-8B LD085 -51%, SGLang EAGLE-3 LD088 -18%); anchored at that run, vLLM's runs at
2, 4 and 8 in flight come out -4%, +6%, +10% and SGLang EAGLE-3's 13 runs at 2-8 -12% median (about half a spec step:
~10 ms published ITL, 8.1 ms simulated). Equal lengths keep the waves together (LD013: 10 prompts of 2,042 tokens
prefilled 4 / 4 / 2 in three 8,192-token steps, the groups finishing a step apart ever after); its miss is the
prefill step itself (a run without the PR's tuned MoE configs; its TPOT is +28% the other way). One server, one front
end: SGLang 0.5.3 on gpustack's H100 fits its BF16 run at 4 in flight (LD069) with 7.9 ms; with that, its FP8 runs fall
short by 11-21 ms and its EAGLE-3 runs by 20-26 ms at 1, 2, 4 and 8 in flight alike (40 ms for LD078): a per-request
cost of those servers' own steps that no closed-loop rule carries. vLLM 0.11 on 8 x H200 fits DeepSeek-R1 (LD036)
with 89.5 ms, and GLM-4.6 on the same server then comes out 62 ms too slow: DeepSeek-R1's own prefill is short.
"""

from __future__ import annotations

import argparse
import bisect
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import planner.serving.load as load  # noqa: E402
from planner.accuracy import under_load  # noqa: E402
from planner.accuracy.frontend import frontend_for_rows, sweep_of  # noqa: E402
from planner.accuracy.published import DecodeRow, load_decode_rows, reference_dir  # noqa: E402
from planner.accuracy.under_load import speculation_handled  # noqa: E402

PARTS = ("front", "in flight", "earlier", "own", "others", "decodes")


def closed_rows(rows: list[DecodeRow]) -> list[DecodeRow]:
    """The runs of a closed loop: C < N requests in flight, no request rate."""
    return [
        r
        for r in rows
        if (r.request_rate is None or not math.isfinite(r.request_rate))
        and r.kind == "serving"
        and 0 < r.batch < (r.num_prompts or 0)
        and not math.isnan(r.ttft_median_s)
        and (speculation_handled(r) or not r.problem)
    ]


def traced(row: DecodeRow, front_s: float) -> tuple[float, list, object]:
    """The row's simulated median TTFT (ms, as ``load_validation`` predicts it), its steps and step table."""
    trace = load.RunTrace()
    median_ms = under_load.predict_percentiles(row, frontend_s=front_s, trace=trace)["ttft_median_ms"]
    return median_ms, trace.steps, trace.table


def request_parts(trace: list, table, front_s: float) -> list[tuple[float, int, dict[str, float]]]:
    """Each first token's (TTFT s, requests, parts s): ``PARTS`` as the module docstring states them."""
    starts = [s.start_s for s in trace]
    out = []
    for k, step in enumerate(trace):
        end = step.start_s + step.dt_s
        pre_all = table.prefill_alone_s(step.prefill_tokens) if step.prefill_tokens else 0.0
        for sent, n, need in step.firsts:
            own = table.prefill_alone_s(need)
            i = bisect.bisect_left(starts, sent) - 1  # the step running when it arrived (started before it)
            inflight = 0.0
            if 0 <= i < k:
                inflight = max(min(trace[i].start_s + trace[i].dt_s, step.start_s) - sent, 0.0)
            before = step.start_s - sent - inflight
            parts = {
                "front": front_s,
                "in flight": inflight,
                "earlier": before,
                "own": own,
                "others": max(pre_all - own, 0.0),
                "decodes": step.dt_s - max(pre_all, own),
            }
            out.append((end - sent + front_s, n, parts))
    return out


def band(parts: list[tuple[float, int, dict[str, float]]], lo: float = 0.4, hi: float = 0.6) -> dict[str, float]:
    """Mean of each part over the requests whose TTFT is between the ``lo`` and ``hi`` quantiles (weighted)."""
    ordered = sorted(parts, key=lambda p: p[0])
    total = sum(n for _, n, _ in ordered)
    acc = {k: 0.0 for k in PARTS}
    acc["band"], seen, used = 0.0, 0, 0
    for ttft, n, p in ordered:
        a, b = seen, seen + n
        seen = b
        take = max(0, min(b, hi * total) - max(a, lo * total))
        if take <= 0 and not (a <= total / 2 < b):
            continue
        take = take or 1
        used += take
        acc["band"] += take * ttft
        for k in PARTS:
            acc[k] += take * p[k]
    return {k: v / used for k, v in acc.items()}


def anchored_frontend_s(row: DecodeRow) -> float:
    """The front end, seconds, with which the simulated median TTFT of ``row`` equals its published one
    (``scipy.optimize.brentq`` on 0 .. the published median, to 0.1 ms; 0 when even no front end is too slow)."""
    from scipy.optimize import brentq

    def short_s(front_s: float) -> float:
        return under_load.predict_percentiles(row, frontend_s=front_s)["ttft_median_ms"] / 1e3 - row.ttft_median_s

    if short_s(0.0) >= 0.0:
        return 0.0
    return float(brentq(short_s, 0.0, row.ttft_median_s, xtol=1e-4))


def anchored(anchor: DecodeRow, others: list[DecodeRow]) -> tuple[float, list[tuple[DecodeRow, float]]]:
    """The front end solved on ``anchor`` (``anchored_frontend_s``, seconds) and each of ``others`` with its simulated
    median TTFT at that front end, ms."""
    front_s = anchored_frontend_s(anchor)
    return front_s, [(r, under_load.predict_percentiles(r, frontend_s=front_s)["ttft_median_ms"]) for r in others]


def sweeps_at_one(rows: list[DecodeRow]) -> list[tuple[DecodeRow, list[DecodeRow]]]:
    """Each run at one request in flight and the closed runs of its sweep (same engine, source, model, GPU group,
    dataset, speculating or not) at more."""

    def key(r: DecodeRow) -> tuple:
        return (*sweep_of(r), r.speculation is None)

    out = []
    for one in (r for r in rows if r.batch == 1):
        out.append((one, [r for r in rows if r.batch > 1 and key(r) == key(one)]))
    return out


def servers(rows: list[DecodeRow]) -> list[tuple[DecodeRow, list[DecodeRow]]]:
    """Each group of closed runs on one server release and host (engine, source, release, GPU, group size), with
    more than one run: its anchor (the run at the lowest concurrency without speculation, first in file order) and the
    others. One release on one host prepares and streams a request alike whatever the checkpoint or flags, so a front
    end solved on the anchor leaves, in the others' shortfall, what their own steps cost beyond the simulation's."""
    groups: dict[tuple, list[DecodeRow]] = {}
    for r in rows:
        groups.setdefault((r.engine, r.source_group, r.engine_version, r.gpu.split("(")[0].strip(), r.gpus), []).append(
            r
        )
    out = []
    for runs in groups.values():
        plain = [r for r in runs if r.speculation is None]
        if len(runs) > 1 and plain:
            anchor = min(plain, key=lambda r: r.batch)
            out.append((anchor, [r for r in runs if r is not anchor]))
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", help="runs CSV [default: catalogs/reference/load_public.csv]")
    path = parser.parse_args(argv[1:]).runs or reference_dir() / "load_public.csv"
    rows = closed_rows(load_decode_rows(path))
    fronts = frontend_for_rows(rows)
    head = f"{'run':<6}{'engine':<13}{'C':>3} {'model':<22}{'pub':>7}{'sim':>7}{'err':>6}{'band':>7}"
    print("Closed-loop median TTFT, ms: published, simulated, and the simulated parts (40-60th percentile band)")
    print(head + "".join(f"{k:>10}" for k in PARTS))
    errors: dict[str, list[float]] = {}
    for r in rows:
        front = fronts[r.record_id]
        sim_ms, trace, table = traced(r, front)
        parts = band(request_parts(trace, table, front))
        pub = r.ttft_median_s * 1e3
        errors.setdefault(r.engine, []).append(sim_ms / pub - 1)
        print(
            f"{r.record_id:<6}{r.engine:<13}{r.batch:>3} {r.model.split('/')[-1][:21]:<22}{pub:7.1f}{sim_ms:7.1f}"
            f"{sim_ms / pub - 1:+6.0%}{parts['band'] * 1e3:7.1f}" + "".join(f"{parts[k] * 1e3:10.1f}" for k in PARTS)
        )
    print()
    for engine, e in sorted(errors.items()):
        print(f"{engine:<13} signed median {statistics.median(e):+.0%} over {len(e)} runs")
    print("\nAnchored at one in flight: the front end of the run at C=1 (its own source), the sweep's others with it")
    for one, others in sweeps_at_one(rows):
        front, simulated = anchored(one, others)
        each = [(r, sim_ms / (r.ttft_median_s * 1e3) - 1) for r, sim_ms in simulated]
        line = " ".join(f"{r.record_id} C={r.batch} {e:+.0%}" for r, e in each)
        mid = statistics.median(e for _, e in each) if each else math.nan
        print(f"{one.record_id} {one.engine:<13} front {front * 1e3:5.1f} ms  median {mid:+.0%}  {line}")
    print("\nOne server, one front end: solved on the anchor, each other run's shortfall (published - simulated, ms)")
    for anchor, others in servers(rows):
        front, simulated = anchored(anchor, others)
        short = [
            f"{r.record_id} C={r.batch}{' spec' if r.speculation else ''} {r.ttft_median_s * 1e3 - sim_ms:+.1f}"
            for r, sim_ms in simulated
        ]
        print(f"{anchor.record_id} {anchor.engine:<13} front {front * 1e3:5.1f} ms  " + " ".join(short))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
