"""Speed of the capacity model side by side with llm-analysis, in one run.

Run: PYTHONPATH=. python bench/bench_model.py [--sweep N] [--repeat N] [--rounds N] [--range N]

llm-analysis runs in its own virtual environment ($LLM_ANALYSIS_VENV, default /work/venvs/la; made with
``python -m venv DIR && DIR/bin/pip install llm-analysis==0.2.2`` here when missing), in a process of its own that
times one round of calls when asked, so that its rounds interleave with planner's in the same run; when it cannot be
installed, the baseline is planner's own scalar path. Every side is timed in ``--rounds`` interleaved rounds (each
side once a round) by the wall clock and by CPU time (``time.process_time``, which leaves out the time spent waiting
for a CPU on a machine shared with other work), and each side's best round counts, by each clock (a busy moment
decides no figure). Printed, in one table beside llm-analysis' call:

1. one scenario (Llama-2-70B, 2 x H100, batch 8, prompt 2,048, 128 output tokens): planner's max_batch + tpot +
   ttft through the scalar API against one ``LLMAnalysis.inference`` call (the analysis object built once, as
   planner's catalog is read once; ``--repeat`` calls a round on both sides) - the ratio should be >= 1;
2. a sweep where GPU, model and context all vary, written to a CSV file and read back as users read it: planner's
   vectorized max_batch + tpot + ttft per scenario against one llm-analysis call - the ratio should be >= 1000 -
   with the names as numpy text arrays (``np.loadtxt``), object arrays of distinct strings (``csv.reader``: a new
   string object per cell, as an Excel range or a file gives), pandas Series and Categoricals (``pd.read_csv``);
   every timed sweep starts with nothing kept, so its first call pays the grouping of the names (planner.catalog.
   lookup keeps the grouping of the arrays recent calls were given, and planner.catalog.resolve the (GPU, model,
   context) pairs the formulas run once each: the three calls of a sweep group each array and pair them once);
   then the distinct strings' sweep against the same with every call grouping its arrays of names afresh;
   and that sweep in fresh processes with glibc's malloc as it starts (a library user's process: planner leaves
   the allocator alone) against the same opted in (``PLANNER_MALLOC=sweeps``: ``planner.io.heap`` sets the
   thresholds glibc learns before the first sweep, as this bench and the planner command do), best of 3 each;
3. 300 x 300 distinct failing cells through PLANNER_WHY and the classic (Windows) runtime: seconds per range
   (the Office.js runtime shows the bare codes: the same work as the classic one, less the text).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

import planner
from planner.catalog import default_catalog, lookup
from planner.excel import support as xs
from planner.io import heap

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
print("ready", flush=True)
for line in sys.stdin:  # one timing round per line: the number of calls
    n = int(line)
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        one()
    print(json.dumps([(time.perf_counter() - t0) / n, (time.process_time() - c0) / n]), flush=True)
"""


class LlmAnalysis:
    """llm-analysis 0.2.2 in its own venv and process, which times one round of inference calls each time it is
    asked (``round``), so that its rounds interleave with planner's and both sides meet the same load."""

    def __init__(self) -> None:
        python = VENV / "bin" / "python"
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True)
        if subprocess.run([str(python), "-c", "import llm_analysis"], capture_output=True).returncode != 0:
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", "llm-analysis==0.2.2"], check=True, capture_output=True
            )
        self.process = subprocess.Popen(
            [str(python), "-c", LLM_ANALYSIS_TIMER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            self.close()
            raise OSError("llm-analysis did not start")

    def round(self, calls: int) -> tuple[float, float]:
        """(wall-clock, CPU) seconds per call over one round of ``calls`` calls (the analysis object built once, as
        planner's catalog is read once)."""
        self.process.stdin.write(f"{calls}\n")
        self.process.stdin.flush()
        wall, cpu = json.loads(self.process.stdout.readline())
        return wall, cpu

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def llm_analysis() -> LlmAnalysis | None:
    """llm-analysis' timer process; None when it cannot be installed or started."""
    try:
        return LlmAnalysis()
    except (OSError, subprocess.CalledProcessError):
        return None


def per_call(fn, repeat: int) -> tuple[float, float]:
    """(wall-clock, CPU) seconds per call of ``fn`` over one round of ``repeat`` calls. CPU time
    (``time.process_time``) leaves out the time the process waited for a CPU on a machine shared with other work."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - t0) / repeat, (time.process_time() - c0) / repeat


def best_of(fn, repeat: int, rounds: int = 5, clock=time.perf_counter) -> float:
    """Seconds per call of ``fn``: the best of ``rounds`` rounds of ``repeat`` calls (least disturbed by others)."""
    fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = clock()
        for _ in range(repeat):
            fn()
        best = min(best, (clock() - t0) / repeat)
    return best


def interleaved(rounds_of: dict[str, Callable[[], tuple[float, float]]], rounds: int) -> dict[str, tuple[float, float]]:
    """The best (wall-clock, CPU) seconds per call of each side over ``rounds`` rounds (``rounds_of``: name -> a
    function that times one round, as ``per_call`` or ``LlmAnalysis.round``), every side once a round: interleaved,
    so that all sides meet the same load, and the best of each side's rounds, so that a busy moment on a shared
    machine decides no figure (each clock's best separately)."""
    best = {name: (math.inf, math.inf) for name in rounds_of}
    for _ in range(rounds):
        for name, one_round in rounds_of.items():
            wall, cpu = one_round()
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def scalar_scenario() -> tuple[int, float, float]:
    """Llama-2-70B on 2 x H100: max batch at 2,176 tokens, TPOT at batch 8, TTFT of a 2,048-token prompt."""
    return (
        planner.max_batch("H100", "llama2-70b", 2176, gpus=2),
        planner.tpot("H100", "llama2-70b", 2176, batch=8, gpus=2),
        planner.ttft("H100", "llama2-70b", 2048, gpus=2),
    )


def sweep_file(n: int, folder: Path, seed: int = 0) -> Path:
    """A CSV file of ``n`` scenarios, GPU, model and context all varying (names drawn from the catalog)."""
    cat = default_catalog()
    rng = np.random.default_rng(seed)
    path = folder / "sweep.csv"
    pd.DataFrame(
        {
            "gpu": rng.choice([g.name for g in cat.gpus], n),
            "model": rng.choice([m.name for m in cat.models], n),
            "context": rng.choice([1024, 2048, 4096, 8192, 16384, 32768], n),
        }
    ).to_csv(path, index=False)
    return path


def sweep_inputs(path: Path) -> dict[str, tuple]:
    """The sweep's (gpus, models, contexts) read back from its CSV file the four ways users read names.

    - numpy text arrays: ``np.loadtxt(..., dtype=str)`` (dtype ``<U``);
    - object arrays of distinct strings: ``csv.reader`` rows (a new string object per cell, as from an Excel range);
    - pandas Series: ``pd.read_csv`` columns;
    - pandas Categoricals: ``pd.read_csv(..., dtype="category")`` columns.
    """
    contexts = pd.read_csv(path, usecols=["context"]).context.to_numpy()
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    frame = pd.read_csv(path)
    cats = pd.read_csv(path, dtype={"gpu": "category", "model": "category"})
    return {
        "numpy text arrays": (
            *(np.loadtxt(path, dtype=str, delimiter=",", skiprows=1, usecols=i) for i in (0, 1)),
            contexts,
        ),
        "object arrays of distinct strings": (
            *(np.array([r[i] for r in rows], dtype=object) for i in (0, 1)),
            contexts,
        ),
        "pandas Series": (frame.gpu, frame.model, frame.context),
        "pandas Categoricals": (cats.gpu, cats.model, contexts),
    }


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
    """Best of 3 sweeps of ``n`` scenarios (names as object arrays of distinct strings) in a new Python process
    with PLANNER_MALLOC=``malloc`` ("" : a library user's process, glibc's malloc as it starts)."""
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
    ap.add_argument("--repeat", type=int, default=300, help="calls per timing round of one scenario")
    ap.add_argument("--rounds", type=int, default=15, help="interleaved timing rounds per side (the best counts)")
    ap.add_argument("--range", type=int, default=300, help="side of the failing range")
    ap.add_argument("--sweep-seconds", action="store_true", help="print only the best text sweep's seconds")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data = sweep_inputs(sweep_file(args.sweep, Path(folder)))
    distinct = data["object arrays of distinct strings"]
    if args.sweep_seconds:
        sweep(*(a[:100] for a in distinct))
        print(best_of(lambda: sweep(*distinct), 1, rounds=3))
        return

    heap.allow()  # the bench's own process keeps its heap, as the planner command does (planner.io.heap)
    la = llm_analysis()
    scenario = "1. one scenario: max_batch + tpot + ttft"
    rounds_of = {} if la is None else {"llm-analysis 0.2.2: one inference call": lambda: la.round(args.repeat)}
    rounds_of[scenario] = lambda: per_call(scalar_scenario, args.repeat)
    sweep(*(a[:100] for a in distinct))
    for label, names in data.items():
        rounds_of[f"2. sweep, names as {label}"] = lambda n=names: per_call(lambda: sweep(*n), 1)
    for one_round in rounds_of.values():  # a first round each, not counted (imports, caches)
        one_round()
    times = interleaved(rounds_of, args.rounds)
    if la is not None:
        la.close()
    base_name = next(iter(times)) if la is not None else scenario + " (no llm-analysis)"
    base_wall, base_cpu = times[next(iter(times))]
    print(
        f"Best of {args.rounds} interleaved rounds per side (llm-analysis and planner's scalar scenario: "
        f"{args.repeat} calls a round; a sweep: {args.sweep:,} scenarios, GPU, model and context varying, read from "
        f"a CSV file); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs. Baseline: {base_name}. Ratio "
        f"= baseline's time / planner's per scenario (target: >= 1 for one scenario, >= 1000 for a sweep)."
    )
    print(f"{'':58s} {'wall clock':>12s} {'ratio':>8s} {'CPU time':>12s} {'ratio':>8s}")
    for name, (wall, cpu) in times.items():
        per = 1 if name.startswith(("llm-analysis", "1.")) else args.sweep
        unit, scale = ("ms", 1e3) if per == 1 else ("us", 1e6)
        print(
            f"{name:58s} {wall / per * scale:9.3f} {unit} {base_wall / wall * per:7,.{2 if per == 1 else 0}f}x "
            f"{cpu / per * scale:9.3f} {unit} {base_cpu / cpu * per:7,.{2 if per == 1 else 0}f}x"
        )

    best = {False: float("inf"), True: float("inf")}
    for _ in range(5):  # alternating, so both meet the same load
        for afresh in best:
            best[afresh] = min(best[afresh], best_of(lambda a=afresh: sweep(*distinct, afresh=a), 1, rounds=1))
    print(
        f"2. the sweep of distinct strings, each array of names grouped once: {best[False] / args.sweep * 1e6:.3f} us "
        f"per scenario; grouped by every call: {best[True] / args.sweep * 1e6:.3f} us   "
        f"ratio {best[True] / best[False]:.2f}x"
    )

    heap_s = {"": float("inf"), "sweeps": float("inf")}
    for _ in range(3):  # alternating, so both meet the same load
        for malloc in heap_s:
            heap_s[malloc] = min(heap_s[malloc], sweep_seconds_in_fresh_process(args.sweep, malloc))
    print(
        f"2. the sweep of distinct strings in a fresh process, glibc's malloc as it starts (a library user's "
        f"process): {heap_s[''] / args.sweep * 1e6:.3f} us per scenario   ratio {base_wall / heap_s[''] * args.sweep:,.0f}x; "
        f"opted in (PLANNER_MALLOC=sweeps): {heap_s['sweeps'] / args.sweep * 1e6:.3f} us   "
        f"{heap_s[''] / heap_s['sweeps']:.2f}x faster"
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
