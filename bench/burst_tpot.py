"""Why the planner's TPOT misses gpustack's "all at once" runs: the reading, or the run's speed (issues 21, 22).

    python bench/burst_tpot.py              # every gpustack all-at-once run with a result block
    python bench/burst_tpot.py GPUSTACK-131 GPUSTACK-238

The published mean TPOT is ``vllm bench serve``'s: per request (latency - TTFT) / (output tokens - 1), averaged over
requests with more than one token (vLLM 0.11.0 ``benchmarks/serve.py`` l.316-320, l.432); the simulation computes the
same (``planner.serving.simulate``; ``tests/test_tpot_reading.py``). A result block gives two more figures that
separate the parts of a miss: the run's duration (requests / request throughput) and its mean ITL, every gap
between streamed chunks (one a token, plus a chat stream's role chunk), which is all decode time over all tokens. So

    published / simulated TPOT = (published / simulated ITL) x (published / simulated TPOT/ITL)

the first factor how fast each token came (the step, the host), the second how the requests' lengths and places in
the run skew a mean over requests (short outputs decoding while the server is full). Printed per run, beside the
duration ratio: where the ITL ratio carries the miss and the duration ratio matches it, the run was slower (or
faster) than the model throughout, whatever TPOT is read as.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy.datasets import run_requests  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.accuracy.published import load_decode_rows, read_csv_rows, reference_dir  # noqa: E402
from planner.accuracy.under_load import _replica  # noqa: E402
from planner.errors import PlannerError  # noqa: E402
from planner.serving.load import fixed_lengths, latency_under_load  # noqa: E402


def result_block(quote: str) -> dict[str, float] | None:
    """Requests, generated tokens, request rate and mean ITL of a perf_public.csv quote, or None without them."""
    got = {}
    for key, label in (("n", "Successful requests"), ("tokens", "Total generated tokens"),
                       ("rate", "Request throughput"), ("itl_ms", "Mean ITL")):  # fmt: skip
        hit = re.search(label + r"[^:|]*: ([\d.]+)", quote)
        if not hit:
            return None
        got[key] = float(hit.group(1))
    return got


def main(ids: list[str]) -> int:
    path = reference_dir() / "perf_public.csv"
    rows = load_decode_rows(path)
    quotes = {r["record_id"]: r["quote"] for r in read_csv_rows(path)}
    fronts = dict(zip([r.record_id for r in rows], frontend_s_of_rows(rows), strict=True))
    picked = [
        r for r in rows
        if (r.record_id in ids if ids else r.source_group == "gpustack-performance-lab" and r.kind == "serving"
            and not r.batch and r.request_rate is None and not math.isnan(r.tpot_s))
    ]  # fmt: skip
    print("published / simulated: TPOT = ITL x skew (TPOT / ITL); duration; published skew")
    itl_r, skew_r, tpot_r, dur_r = [], [], [], []
    for r in picked:
        block = result_block(quotes[r.record_id])
        if block is None:
            continue
        lengths = run_requests(r) or fixed_lengths(r.input_len, r.output_len, r.num_prompts or 1)
        try:
            res = latency_under_load(
                _replica(r, None, None, None), r.input_len, r.output_len, lengths=lengths,
                num_requests=len(lengths), frontend_s=fronts[r.record_id],
            )  # fmt: skip
        except PlannerError:
            continue
        if not (res.tpot_s.mean > 0 and res.itl_s.mean > 0):
            continue
        pub_itl, pub_tpot = block["itl_ms"] / 1e3, r.tpot_s
        pub_duration = block["n"] / block["rate"]
        ratios = (pub_tpot / res.tpot_s.mean, pub_itl / res.itl_s.mean,
                  (pub_tpot / pub_itl) / (res.tpot_s.mean / res.itl_s.mean), pub_duration / res.duration_s)  # fmt: skip
        for acc, v in zip((tpot_r, itl_r, skew_r, dur_r), ratios, strict=True):
            acc.append(v)
        print(
            f"  {r.record_id:<13} {r.engine:<12} {r.gpu.split('(')[0].strip():<15} TP{r.gpus} "
            f"{r.model.split('/')[-1][:22]:<22} {r.input_len:>5}/{r.output_len:<4} TPOT x{ratios[0]:5.2f} = ITL "
            f"x{ratios[1]:5.2f} . skew x{ratios[2]:4.2f}   duration x{ratios[3]:5.2f}   skew {pub_tpot / pub_itl:4.2f}"
        )
    if tpot_r:
        med = statistics.median
        print(
            f"median over {len(tpot_r)} runs: TPOT x{med(tpot_r):.2f}, ITL x{med(itl_r):.2f}, skew x{med(skew_r):.2f}, "
            f"duration x{med(dur_r):.2f}"
        )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ids", nargs="*", help="record ids [default: every gpustack all-at-once run]")
    raise SystemExit(main(parser.parse_args().ids))
