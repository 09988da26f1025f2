"""How often the closed-form approximation's capacity verdict (planner.serving.approx: infinite past capacity)
disagrees with the simulation's (planner.serving.fleet.past_capacity: the steady-state completion rate of two
closed-loop runs), over GPUs x models x rates: the figure stated in docs/model.md ("Latency under load").

    python bench/load_capacity.py

Rates: 33 from 2 to 80 requests/s, 12% apart; 1,000-token prompts and 100-token outputs (the case of `planner plan --rate` without targets) and
1,024 / 256. For each case it also prints the evidence of the simulation's verdict from Poisson runs at the
rate where the two disagree: median TTFT of a 1,000-request and a 4,000-request run (a queue past capacity grows with the run's length,
so the longer run's median is far above the shorter's; under capacity they agree) and the delivered output rate
against the offered. Nothing is fitted.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from planner.serving.approx import approximate_load
from planner.serving.fleet import capacity_per_s
from planner.serving.load import Replica, latency_under_load

CASES = [  # (GPU, model, GPUs)
    ("H100", "llama3.1-8b", 1),
    ("A100", "llama3.1-8b", 1),
    ("H200", "llama3.1-8b", 1),
    ("L40S", "qwen2-7b", 1),
    ("H100", "qwen2-7b", 1),
    ("H100", "llama3.1-70b", 4),
    ("H200", "llama3.1-70b", 2),
    ("H100", "mixtral-8x7b", 2),
]
SHAPES = [(1000, 100), (1024, 256)]
RATES = tuple(float(f"{x:.3g}") for x in np.geomspace(2, 80, 33))  # 2 to 80 requests/s, 12% apart


def main() -> int:
    start = time.process_time()
    total = disagree = 0
    ratios = []
    for gpu, model, n in CASES:
        for p, o in SHAPES:
            try:
                replica = Replica(gpu, model, gpus=n)
                setup = replica.setup(p, o)
                cap = capacity_per_s(replica, p, o)
            except Exception as exc:  # noqa: BLE001 - a case the catalog cannot run is reported, not fatal
                print(f"{gpu} {model} x{n} {p}/{o}: skipped ({exc})")
                continue
            rates = np.array(RATES, dtype=float)
            a = approximate_load(setup.table, setup.scheduler, p, o, rates, 50, replica.behaviour())
            approx_past = ~np.isfinite(a["ttft_s"])
            sim_past = rates >= cap
            fine = np.geomspace(0.05, 2000, 4000)
            af = np.isfinite(
                approximate_load(setup.table, setup.scheduler, p, o, fine, 50, replica.behaviour())["ttft_s"]
            )
            approx_cap = fine[af].max() if af.any() else 0.0
            ratios.append(approx_cap / cap)
            print(
                f"{gpu} {model} x{n} {p}/{o}: simulated capacity {cap:.2f} req/s, approximation's {approx_cap:.2f} "
                f"({approx_cap / cap - 1:+.0%})"
            )
            for r, ap, sp in zip(rates, approx_past, sim_past, strict=True):
                total += 1
                disagree += bool(ap != sp)
                if ap != sp:
                    short = latency_under_load(replica, p, o, rate_per_s=r)
                    long = latency_under_load(replica, p, o, rate_per_s=r, num_requests=4000)
                    print(
                        f"  {r:5g}/s  approx {'past' if ap else 'within'}  sim {'past' if sp else 'within'}"
                        f"{'  DISAGREE' if ap != sp else ''}  p50 TTFT 1k {short.ttft_s.p50:.3g} s, 4k "
                        f"{long.ttft_s.p50:.3g} s; output {short.output_tokens_per_s:,.0f} of {r * o:,.0f} tokens/s"
                    )
    ratios_a = np.array(ratios)
    print(
        f"\ncapacity verdicts: {disagree} of {total} (case, rate) pairs disagree ({disagree / max(total, 1):.1%}); "
        f"approximation's capacity / simulation's: median {np.median(ratios_a):.3f}, "
        f"range {ratios_a.min():.3f} to {ratios_a.max():.3f} over {len(ratios_a)} cases"
    )
    print(f"({time.process_time() - start:.1f} s CPU)")
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    sys.exit(main())
