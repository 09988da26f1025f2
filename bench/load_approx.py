"""How far the closed-form latency-under-load approximation (planner.serving.approx) is from the simulation
(planner.serving.load), per percentile and load: the error stated in docs/model.md ("Latency under load").

    python bench/load_approx.py

Grid: GPUs x models x request shapes (below), Poisson rates at 20%, 50%, 70%, 85% and 95% of the capacity the
approximation finds, ``REQUESTS`` requests each, both with the replica's own behaviour (``Replica.behaviour``: its
front-end time, ``FRONTEND_S``, in both TTFTs, as ``approximate_percentiles`` gives it; before s86 the approximation
was called without it, so its TTFT lacked the 27.1 ms the simulation adds: TTFT p50 29.8% median error). Nothing in
the approximation is fitted (no coefficient was tuned to these or any rows), so every row is out of sample. Error =
approximation / simulation - 1.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from planner.serving.approx import approximate_load
from planner.serving.load import Replica, latency_under_load

CASES = [  # (GPU, model, GPUs, prompt tokens, output tokens)
    ("H100", "llama3.1-8b", 1, 1024, 256),
    ("H100", "llama3.1-8b", 1, 4096, 128),
    ("H100", "llama3.1-8b", 1, 128, 1024),
    ("A100", "llama3.1-8b", 1, 512, 512),
    ("H100", "llama3.1-70b", 4, 2048, 256),
    ("H200", "llama3.1-70b", 2, 1024, 512),
    ("L40S", "qwen2-7b", 1, 1024, 256),
    ("H100", "mixtral-8x7b", 2, 1024, 256),
]
LOADS = (0.2, 0.5, 0.7, 0.85, 0.95)
#: Requests per simulated run: enough for steady state (a 1,000-request benchmark of 1,024-token outputs spends much
#: of its run filling the batch, which the steady-state approximation does not model).
REQUESTS = 4000
PERCENTILES = (50, 99)


def capacity(setup, prompt: int, output: int) -> float:
    """The highest rate the approximation holds finite (a geometric scan, then bisection)."""
    rates = np.geomspace(0.01, 1000.0, 600)
    ok = np.isfinite(approximate_load(setup.table, setup.scheduler, prompt, output, rates, 50)["ttft_s"])
    lo = rates[ok].max()
    hi = rates[np.argmax(rates > lo)]
    for _ in range(40):
        mid = (lo + hi) / 2
        fine = np.isfinite(
            approximate_load(setup.table, setup.scheduler, prompt, output, np.array([mid]), 50)["ttft_s"]
        )
        lo, hi = (mid, hi) if fine[0] else (lo, mid)
    return lo


def main(verbose: bool = False) -> int:
    start = time.perf_counter()
    rows = []  # (load, quantity, error)
    for gpu, model, n, p, o in CASES:
        try:
            replica = Replica(gpu, model, gpus=n)
            setup = replica.setup(p, o)
        except Exception as exc:  # noqa: BLE001 - a case the catalog cannot run is reported, not fatal
            print(f"skip {gpu} {model}: {exc}")
            continue
        cap = capacity(setup, p, o)
        for load in LOADS:
            rate = load * cap
            sim = latency_under_load(replica, p, o, rate_per_s=rate, num_requests=REQUESTS)
            for q in PERCENTILES:
                a = approximate_load(  # the replica's own behaviour (front end, overlap), as the simulation's
                    setup.table, setup.scheduler, p, o, np.array([rate]), q, replica.behaviour()
                )
                for what, est, ref in (
                    ("TTFT", a["ttft_s"][0], sim.ttft_s.at(q)),
                    ("TPOT", a["tpot_s"][0], sim.tpot_s.at(q)),
                ):
                    rows.append((load, f"{what} p{q}", est / ref - 1.0, f"{gpu} {model} x{n} {p}/{o} @{rate:.2f}/s"))
    print(f"{len(CASES)} deployments x {len(LOADS)} loads; approximation / simulation - 1 (|error|: median, worst)")
    print(f"{'quantity':<10} {'loads <= 85%':>26} {'load 95%':>26}")
    for quantity in sorted({r[1] for r in rows}):
        cells = []
        for sel in (lambda x: x <= 0.85, lambda x: x > 0.9):
            e = np.array([abs(r[2]) for r in rows if r[1] == quantity and sel(r[0])])
            worst = max((r for r in rows if r[1] == quantity and sel(r[0])), key=lambda r: abs(r[2]))
            cells.append(f"{np.median(e):6.1%} {e.max():6.1%} ({worst[2]:+.0%})")
            if verbose:
                print("   worst:", quantity, worst)
        print(f"{quantity:<10} {cells[0]:>26} {cells[1]:>26}")
    print(f"({len(rows)} comparisons in {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="also print each quantity's worst case")
    sys.exit(main(parser.parse_args().verbose))
