"""Vectorized sweep against a loop of scalar calls: max batch and TPOT over 1,000,000 scenarios.

Run: python bench/bench_model.py [--scenarios N] [--sample N]
Prints scenarios per second for both paths and the per-scenario speed-up (target: at least 100x).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import planner
from planner.catalog import default_catalog


def scenarios(n: int, seed: int = 0):
    cat = default_catalog()
    gpus = [g.name for g in cat.gpus]
    models = [m.name for m in cat.models]
    precisions = ["bf16", "fp16", "fp8", "int8", "int4"]
    rng = np.random.default_rng(seed)
    return (
        rng.choice(np.array(gpus, dtype=object), n),
        rng.choice(np.array(models, dtype=object), n),
        rng.choice(np.array([1024, 2048, 4096, 8192, 16384, 32768, 65536]), n),
        rng.choice(np.array(precisions, dtype=object), n),
        rng.choice(np.array([1, 2, 4, 8, 16, 32, 64, 128]), n),
    )


def vectorized(gpu, model, context, kv, batch):
    mb = planner.max_batch(gpu, model, context, kv, 8, errors="coerce")
    tp = planner.tpot(gpu, model, context, batch, kv, 8, check_fit=False, errors="coerce")
    return mb, tp


def scalar(gpu, model, context, kv, batch):
    out = []
    for g, m, c, k, b in zip(gpu, model, context, kv, batch, strict=True):
        try:
            mb = planner.max_batch(g, m, int(c), k, 8)
        except planner.PlannerError:
            mb = float("nan")
        tp = planner.tpot(g, m, int(c), int(b), k, 8, check_fit=False)
        out.append((mb, tp))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=2_000)
    args = ap.parse_args()
    data = scenarios(args.scenarios)
    vectorized(*(a[:100] for a in data))  # warm the catalog cache
    t0 = time.perf_counter()
    mb, tp = vectorized(*data)
    t_vec = time.perf_counter() - t0
    sample = tuple(a[: args.sample] for a in data)
    t0 = time.perf_counter()
    loop = scalar(*sample)
    t_loop = time.perf_counter() - t0
    # the two paths agree on the sample
    loop_mb = np.array([x[0] for x in loop], dtype=float)
    loop_tp = np.array([x[1] for x in loop], dtype=float)
    assert np.allclose(loop_tp, tp[: args.sample], rtol=1e-12, equal_nan=True)
    assert np.array_equal(np.nan_to_num(loop_mb, nan=-1), np.nan_to_num(mb[: args.sample], nan=-1))
    vec_rate = args.scenarios / t_vec
    loop_rate = args.sample / t_loop
    print(f"vectorized: {args.scenarios:>9,} scenarios in {t_vec:6.2f} s = {vec_rate:>12,.0f} scenarios/s")
    print(f"scalar loop: {args.sample:>8,} scenarios in {t_loop:6.2f} s = {loop_rate:>12,.0f} scenarios/s")
    print(f"speed-up per scenario: {vec_rate / loop_rate:,.0f}x (target >= 100x)")


if __name__ == "__main__":
    main()
