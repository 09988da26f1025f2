"""CPU time of ``planner.report.plan`` over a set of scenarios, this working tree against a baseline revision, side by
side.

    python bench/bench_plan.py [--baseline main] [--rounds 5] [--repeat 3]

Each tree plans the same scenarios (GPUs x models x engines, at 4,096 tokens; those that do not load are skipped
alike) in a fresh process of its own: a first round (each function's caches empty) and ``--rounds`` more, the best of
those counting (a busy moment decides no figure), by CPU time (``time.process_time``); ``--repeat`` processes of each
tree, alternating which runs first, their medians counting. ``plan`` as the what-if
workbook calls it, one per lever: no field read. Then each tree's ``Plan.to_dict()`` of every scenario (what
``planner plan --json`` prints, the decode step's parts and the vs-vLLM step included) is compared: a speed-up must
not move a figure. Prints each tree's seconds per plan, their ratio, and whether the objects are identical. The
baseline is ``git archive BASELINE`` unpacked in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import baseline_tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

GPUS = ("H100", "H200", "A100-80GB", "MI300X", "L40S")
MODELS = ("llama3.1-8b", "llama3.1-70b", "qwen3-32b", "mixtral-8x7b", "gpt-oss-120b")
ENGINES = ("vllm", "sglang")

#: Run in each tree's own process: prints one JSON object (seconds of each round, the plans' objects).
TIMER = r"""
import json, sys, time
from planner.errors import PlannerError
from planner.report import plan
gpus, models, engines, rounds = json.loads(sys.argv[1])
scenarios = [(g, m, e) for g in gpus for m in models for e in engines]

def one_round():
    done = []
    for g, m, e in scenarios:
        try:
            done.append(((g, m, e), plan(g, m, 4096, engine=e)))
        except PlannerError:
            pass
    return done

times = []
for _ in range(1 + rounds):
    t = time.process_time()
    plans = one_round()
    times.append(time.process_time() - t)
dicts = {" ".join(k): p.to_dict() for k, p in plans}
print(json.dumps({"times": times, "plans": dicts}, default=str, sort_keys=True))
"""


def timed(tree: Path, rounds: int) -> dict:
    """The timer's object, run with ``tree`` on the path."""
    arg = json.dumps([GPUS, MODELS, ENGINES, rounds])
    out = subprocess.run(
        [sys.executable, "-c", TIMER, arg], cwd=tree, env=os.environ | {"PYTHONPATH": str(tree)},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="main", help="git revision to compare against [main]")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds after the first [5]")
    ap.add_argument("--repeat", type=int, default=3, help="processes of each tree [3]")
    args = ap.parse_args()
    with baseline_tree(args.baseline) as base:
        trees = {"baseline": base, "this tree": ROOT}
        got: dict[str, list[dict]] = {name: [] for name in trees}
        for i in range(args.repeat):
            for name in list(trees) if i % 2 == 0 else list(trees)[::-1]:
                got[name].append(timed(trees[name], args.rounds))
    b, t = got["baseline"], got["this tree"]
    n = len(t[0]["plans"])
    same = all(run["plans"] == b[0]["plans"] for run in b + t)
    print(f"{n} scenarios planned ({len(GPUS) * len(MODELS) * len(ENGINES)} tried; the rest do not load)")
    print(
        f"{'median of ' + str(args.repeat) + ' processes':<28} {'baseline ms/plan':>17} {'this tree ms/plan':>18} {'ratio':>7}"
    )
    for label, pick in (("first round (caches empty)", lambda x: x[0]), ("best later round", lambda x: min(x[1:]))):
        bs, ts = (statistics.median(pick(run["times"]) for run in side) / n * 1e3 for side in (b, t))
        print(f"{label:<28} {bs:>17.1f} {ts:>18.1f} {ts / bs:>7.2f}")
    print(f"Plan.to_dict() of every scenario: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
