"""CPU time of each call of the bench's sweep (max_batch, tpot, ttft), per form of names: where a sweep's time goes.

Run: PYTHONPATH=. python bench/sweep_calls.py [--sweep N] [--rounds N] [FORM ...]

The sweep of ``bench/bench_model.py`` (GPU, model and context varying, read back from a CSV file the four ways users
read names); every round starts with no grouping kept, so the first call pays the grouping and pairing and the two
later calls find them again. Prints the median of ``--rounds`` rounds of ``time.process_time`` per call, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_model  # noqa: E402  (the bench's own sweep and inputs)

import planner  # noqa: E402
from planner.catalog import lookup  # noqa: E402
from planner.io import heap  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", type=int, default=200_000, help="scenarios in the sweep")
    ap.add_argument("--rounds", type=int, default=9, help="rounds per form (the median is printed)")
    ap.add_argument("forms", nargs="*", help="forms of names (default: all four)")
    args = ap.parse_args()
    heap.allow()  # as bench_model.py
    with tempfile.TemporaryDirectory() as folder:
        data = bench_model.sweep_inputs(bench_model.sweep_file(args.sweep, Path(folder)))
    opts = dict(gpus=8, errors="coerce")
    calls = {
        "max_batch": lambda g, m, c: planner.max_batch(g, m, c, **opts),
        "tpot": lambda g, m, c: planner.tpot(g, m, c, batch=8, check_fit=False, **opts),
        "ttft": lambda g, m, c: planner.ttft(g, m, c, **opts),
    }
    for form in args.forms or list(data):
        g, m, c = data[form]
        bench_model.sweep(g[:100], m[:100], c[:100])
        ms: dict[str, list[float]] = {k: [] for k in (*calls, "total")}
        for _ in range(args.rounds):
            lookup._BY_IDENTITY.clear()
            total = 0.0
            for name, call in calls.items():
                t0 = time.process_time()
                call(g, m, c)
                ms[name].append((time.process_time() - t0) * 1e3)
                total += ms[name][-1]
            ms["total"].append(total)
        print(f"{form:34s} " + "  ".join(f"{k} {statistics.median(v):6.1f}" for k, v in ms.items()) + " ms CPU")


if __name__ == "__main__":
    main()
