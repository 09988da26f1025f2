"""Speed of the capacity model side by side with llm-analysis, in one run.

Run: PYTHONPATH=. python bench/bench_model.py [--sweep N] [--repeat N] [--range N]

llm-analysis runs in its own virtual environment ($LLM_ANALYSIS_VENV, default /work/venvs/la; made with
``python -m venv DIR && DIR/bin/pip install llm-analysis==0.2.2`` here when missing) and is timed in a subprocess
on the same machine in the same run; when it cannot be installed, the baseline is planner's own scalar path.
Printed:

1. one scenario (Llama-2-70B, 2 x H100, batch 8, prompt 2,048, 128 output tokens): planner's max_batch + tpot +
   ttft through the scalar API against one ``LLMAnalysis.inference`` call (the analysis object built once, as
   planner's catalog is read once; best of 5 rounds on both sides) - the ratio should be >= 1;
2. a sweep where GPU, model and context all vary: planner's vectorized max_batch + tpot + ttft per scenario
   against one llm-analysis call - the ratio should be >= 1000 - with the names as arrays of text, and as pandas
   Categoricals (names coded once, as a sweep that calls several functions can build them); and the text sweep
   against the same with every call grouping its arrays of names afresh (planner.catalog.lookup keeps the grouping of the
   arrays recent calls were given: the three calls of a sweep group each array once; every timed sweep starts
   with nothing kept, so its first call pays the grouping);
   And the text sweep in fresh processes with glibc's malloc as it starts (``PLANNER_MALLOC=default``) against
   the same with planner's kept heap (``planner.io.heap``: the thresholds glibc learns, set before the first sweep),
   alternating, best of 3 each;
3. 300 x 300 distinct failing cells through PLANNER_WHY and the classic (Windows) runtime: seconds per range
   (the Office.js runtime shows the bare codes: the same work as the classic one, less the text).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import planner
from planner.catalog import default_catalog, lookup
from planner.excel import support as xs

VENV = Path(os.environ.get("LLM_ANALYSIS_VENV", "/work/venvs/la"))
LLM_ANALYSIS_TIMER = r"""
import json, logging, sys, time
from llm_analysis.analysis import LLMAnalysis, ParallelismConfig
from llm_analysis.config import get_dtype_config_by_name, get_gpu_config_by_name, get_model_config_by_name
logging.disable(logging.CRITICAL)
model = get_model_config_by_name("upstage_Llama-2-70b-instruct-v2")
gpu = get_gpu_config_by_name("h100-sxm-80gb")
dtype = get_dtype_config_by_name("w16a16e16")
a = LLMAnalysis(model, gpu, dtype, ParallelismConfig(tp_size=2), flops_efficiency=0.6, hbm_memory_efficiency=0.6)
def one():
    return a.inference(batch_size_per_gpu=8, seq_len=2048, num_tokens_to_generate=128)
one()
n = int(sys.argv[1])
t0 = time.perf_counter()
best = float("inf")
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(n):
        one()
    best = min(best, (time.perf_counter() - t0) / n)
print(json.dumps({"seconds_per_call": best}))
"""


def llm_analysis_seconds(repeat: int) -> float | None:
    """Seconds per llm-analysis inference call, timed in its own venv; None when it cannot be installed."""
    python = VENV / "bin" / "python"
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True)
        check = subprocess.run([str(python), "-c", "import llm_analysis"], capture_output=True)
        if check.returncode != 0:
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "llm-analysis==0.2.2"], check=True, capture_output=True
            )
        out = subprocess.run(
            [str(python), "-c", LLM_ANALYSIS_TIMER, str(repeat)], check=True, capture_output=True, text=True
        )
        return json.loads(out.stdout.strip().splitlines()[-1])["seconds_per_call"]
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError, IndexError):
        return None


def best_of(fn, repeat: int, rounds: int = 5) -> float:
    """Seconds per call of ``fn``: the best of ``rounds`` rounds of ``repeat`` calls (least disturbed by others)."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best


def scalar_scenario() -> tuple[int, float, float]:
    """Llama-2-70B on 2 x H100: max batch at 2,176 tokens, TPOT at batch 8, TTFT of a 2,048-token prompt."""
    return (
        planner.max_batch("H100", "llama2-70b", 2176, gpus=2),
        planner.tpot("H100", "llama2-70b", 2176, batch=8, gpus=2),
        planner.ttft("H100", "llama2-70b", 2048, gpus=2),
    )


def sweep_inputs(n: int, seed: int = 0):
    """GPU, model and context all varying, on groups of 8 GPUs."""
    cat = default_catalog()
    rng = np.random.default_rng(seed)
    gpus = rng.choice(np.array([g.name for g in cat.gpus], dtype=object), n)
    models = rng.choice(np.array([m.name for m in cat.models], dtype=object), n)
    contexts = rng.choice(np.array([1024, 2048, 4096, 8192, 16384, 32768]), n)
    return gpus, models, contexts


def sweep(gpus, models, contexts, afresh: bool = False) -> None:
    """max_batch + tpot + ttft of every scenario on 8 GPUs (NaN where the model does not fit or vLLM refuses 8).

    The sweep starts with no grouping of names kept (a timing round must not reuse the previous round's), so it
    pays one grouping per array, shared by its three calls; ``afresh``: each call groups the arrays again (as
    before planner kept the grouping)."""
    opts = dict(gpus=8, errors="coerce")
    lookup._BY_IDENTITY.clear()
    for call in (
        lambda: planner.max_batch(gpus, models, contexts, **opts),
        lambda: planner.tpot(gpus, models, contexts, batch=8, check_fit=False, **opts),
        lambda: planner.ttft(gpus, models, contexts, **opts),
    ):
        if afresh:
            lookup._BY_IDENTITY.clear()
        call()


def sweep_seconds_in_fresh_process(n: int, malloc: str) -> float:
    """Best of 3 text sweeps of ``n`` scenarios in a new Python process with PLANNER_MALLOC=``malloc``."""
    env = dict(os.environ, PLANNER_MALLOC=malloc, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run(
        [sys.executable, __file__, "--sweep", str(n), "--sweep-seconds"], env=env, check=True, capture_output=True
    )
    return float(out.stdout.decode().split()[-1])


def failing_range(n: int) -> list[list[float]]:
    """n x n distinct contexts that all fail: Llama 2 70B with 4M to 4.1M-token sequences on one GPU."""
    return [[float(4_000_000 + i * n + j) for j in range(n)] for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", type=int, default=200_000, help="scenarios in the sweep")
    ap.add_argument("--repeat", type=int, default=300, help="calls per timing round")
    ap.add_argument("--range", type=int, default=300, help="side of the failing range")
    ap.add_argument("--sweep-seconds", action="store_true", help="print only the best text sweep's seconds")
    args = ap.parse_args()
    if args.sweep_seconds:
        data = sweep_inputs(args.sweep)
        sweep(*(a[:100] for a in data))
        print(best_of(lambda: sweep(*data), 1, rounds=3))
        return

    la = llm_analysis_seconds(args.repeat)
    one = best_of(scalar_scenario, args.repeat)
    base, base_name = (la, "llm-analysis 0.2.2 call") if la else (one, "planner scalar scenario (no llm-analysis)")
    print(f"baseline: {base_name}: {base * 1e3:.3f} ms")
    print(f"1. one scenario (max_batch + tpot + ttft): {one * 1e3:.3f} ms   ratio {base / one:,.2f}x (target >= 1)")

    data = sweep_inputs(args.sweep)
    sweep(*(a[:100] for a in data))
    for label, (gpus, models, contexts) in (
        ("names as text", data),
        ("names as pandas Categoricals", (pd.Categorical(data[0]), pd.Categorical(data[1]), data[2])),
    ):
        per = best_of(lambda g=gpus, m=models, c=contexts: sweep(g, m, c), 1, rounds=3) / args.sweep
        print(
            f"2. sweep, GPU + model + context varying ({args.sweep:,} scenarios, {label}): {per * 1e6:.3f} us per "
            f"scenario   ratio {base / per:,.0f}x (target >= 1000)"
        )

    best = {False: float("inf"), True: float("inf")}
    for _ in range(5):  # alternating, so both meet the same load
        for afresh in best:
            best[afresh] = min(best[afresh], best_of(lambda a=afresh: sweep(*data, afresh=a), 1, rounds=1))
    print(
        f"2. the text sweep, each array of names grouped once: {best[False] / args.sweep * 1e6:.3f} us per scenario; "
        f"grouped by every call: {best[True] / args.sweep * 1e6:.3f} us   ratio {best[True] / best[False]:.2f}x"
    )

    heap = {"default": float("inf"), "kept": float("inf")}
    for _ in range(3):  # alternating, so both meet the same load
        for malloc in heap:
            heap[malloc] = min(heap[malloc], sweep_seconds_in_fresh_process(args.sweep, malloc))
    print(
        f"2. the text sweep in a fresh process, glibc's malloc as it starts: {heap['default'] / args.sweep * 1e6:.3f} us "
        f"per scenario; planner's kept heap: {heap['kept'] / args.sweep * 1e6:.3f} us   "
        f"ratio {heap['default'] / heap['kept']:.2f}x"
    )

    grid = failing_range(args.range)
    spec = xs.SPECS["MAX_BATCH"]
    for runtime, label in (("python", "PLANNER_WHY"), ("classic", "classic runtime")):
        old = xs.RUNTIME
        xs.RUNTIME = runtime
        try:
            t0 = time.perf_counter()
            out = (
                xs.why("MAX_BATCH", ("H100", "llama2-70b", grid, None, 1.0))
                if label == "PLANNER_WHY"
                else xs.evaluate(spec, ("H100", "llama2-70b", grid, None, 1.0))
            )
            seconds = time.perf_counter() - t0
        finally:
            xs.RUNTIME = old
        cells = sum(len(r) for r in out) if isinstance(out, list) else 1
        print(f"3. {args.range} x {args.range} failing cells through {label}: {seconds:.2f} s ({cells:,} cells)")


if __name__ == "__main__":
    main()
