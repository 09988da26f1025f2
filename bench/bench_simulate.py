"""Speed of the serving simulation (``planner.serving.simulate.simulate``) against another tree's, side by side.

Run: PYTHONPATH=. python bench/bench_simulate.py [--baseline main] [--rounds N]

Each tree runs in a process of its own (``--time``): it records the ``simulate`` calls that ``latency_under_load``
makes for the runs of ``bench/sim_identity.py`` (vLLM, SGLang, TensorRT-LLM; rate, burst, closed loop, trace; varied
lengths, preemption, prefix cache, speculative decoding) and the straight ``simulate`` calls there, then replays them
all once a round and prints each round's CPU seconds (``time.process_time``: the machine is shared, and a process
waiting for a CPU spends none). The two trees' rounds interleave (one process each, one round each in turn), and each
side's best round counts. Printed: both best rounds and old / new, the speedup (> 1: this tree is faster)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import baseline_tree  # noqa: E402


def _calls() -> list:
    """The (args, kwargs) of every ``simulate`` call of ``sim_identity``'s runs."""
    import sim_identity

    from planner.serving import load, simulate

    calls, real = [], simulate.simulate

    def record(*a, **kw):
        calls.append((a, kw))
        return real(*a, **kw)

    load.simulate = simulate.simulate = record  # (``sim_identity`` imports it from the module when it runs)
    try:
        for _, thunk in sim_identity._scenarios():
            thunk()
    finally:
        load.simulate = simulate.simulate = real
    for _, kw in calls:
        if kw.get("trace") is not None:
            kw["trace"] = []
    return calls


def timer() -> None:
    """Answer each line on stdin with the CPU seconds of one round of the calls."""
    from planner.serving.simulate import simulate

    calls = _calls()
    print(json.dumps({"calls": len(calls)}), flush=True)
    for _ in sys.stdin:
        t = time.process_time()
        for a, kw in calls:
            simulate(*a, **kw)
        print(json.dumps({"s": time.process_time() - t}), flush=True)


def _start(tree: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--time"]
    p = subprocess.Popen(cmd, env=env, cwd=tree, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    json.loads(p.stdout.readline())
    return p


def _round(p: subprocess.Popen) -> float:
    p.stdin.write("\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())["s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main", help="git revision to compare against [main]")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", action="store_true", help="(internal) the timing process")
    args = ap.parse_args()
    if args.time:
        timer()
        return
    with baseline_tree(args.baseline) as base:
        old, new = _start(base), _start(ROOT)
        olds, news = [], []
        for _ in range(args.rounds):
            olds.append(_round(old))
            news.append(_round(new))
        for p in (old, new):
            p.stdin.close()
            p.wait()
    print(f"old ({args.baseline}) rounds, CPU s: {', '.join(f'{s:.3f}' for s in olds)}")
    print(f"new ({ROOT}) rounds, CPU s: {', '.join(f'{s:.3f}' for s in news)}")
    print(f"best old {min(olds):.3f} s, best new {min(news):.3f} s: speedup x{min(olds) / min(news):.2f}")


if __name__ == "__main__":
    main()
