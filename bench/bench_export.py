"""CPU time of `planner export` on a scenario, this working tree against a baseline revision, side by side.

    python bench/bench_export.py [--baseline main] [--repeat 1] [SCENARIO ...]

Each scenario (default: the README's examples/budget-review.toml) is exported to xlsx by both trees in turn, in fresh
processes (no memo carried over), alternating which runs first; prints each one's median CPU seconds (user + system,
``resource.getrusage`` of the child), their ratio, and whether the two workbooks hold the same value in every cell of
every sheet (a speed-up must not move a figure). The baseline is ``git archive BASELINE`` unpacked in a temporary
folder.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import openpyxl

ROOT = Path(__file__).resolve().parent.parent
DATE = "2026-12-01"  # one date for both, so the workbooks can be compared cell by cell


def export_cpu_s(tree: Path, scenario: Path, out: Path) -> float:
    """CPU seconds (user + system) of one `planner export SCENARIO -o OUT` run with ``tree`` on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "planner", "export", str(scenario), "-o", str(out), "--force", "-q", "--date", DATE],
        cwd=tree, env=os.environ | {"PYTHONPATH": str(tree)}, check=True,
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cell_values(path: Path) -> dict[str, list[list[object]]]:
    """Every sheet's cell values (formulas as their text), by sheet name."""
    wb = openpyxl.load_workbook(path)
    return {ws.title: [[c.value for c in row] for row in ws.iter_rows()] for ws in wb.worksheets}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenarios", nargs="*", type=Path, default=[ROOT / "examples" / "budget-review.toml"])
    ap.add_argument("--baseline", default="main", help="git revision to compare against [main]")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each tree per scenario [1]")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        trees = {"baseline": base, "this tree": ROOT}
        print(f"{'scenario':<32} {'baseline CPU s':>15} {'this tree CPU s':>16} {'ratio':>7}  cells")
        for scenario in args.scenarios:
            scenario = scenario.resolve()
            times: dict[str, list[float]] = {name: [] for name in trees}
            for i in range(args.repeat):
                order = list(trees) if i % 2 == 0 else list(trees)[::-1]
                for name in order:
                    out = Path(tmp) / f"{name.replace(' ', '_')}.xlsx"
                    times[name].append(export_cpu_s(trees[name], scenario, out))
            same = cell_values(Path(tmp) / "baseline.xlsx") == cell_values(Path(tmp) / "this_tree.xlsx")
            b, t = (statistics.median(times[name]) for name in trees)
            print(f"{scenario.name:<32} {b:>15.1f} {t:>16.1f} {t / b:>7.2f}  {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
