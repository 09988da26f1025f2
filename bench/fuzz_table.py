"""Print the fuzz suite's table for the closing note of issue 26: inputs tried and held per hostile class.

    python bench/fuzz_table.py                      # CI's examples (about a minute)
    PLANNER_FUZZ_EXAMPLES=100 python bench/fuzz_table.py   # ten times as many
    python bench/fuzz_table.py --log fuzz.log       # pytest's whole output (failures, slowest tests) kept

Runs ``tests/test_fuzz_*.py`` (each example a trial of its class, ``tests/fuzz_support.py``; issue 13's
classes included), then prints one row per class and the totals of
the three things issue 26's "done means" asks to be zero: corrupt files, tracebacks and races. A trial that
does not hold fails its test: pytest's line for each failed test (its exception) is printed below the table, so
that a failure says what broke (a corrupt file, a leftover, a timeout under load) and not only its class.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The issue's item each class belongs to (item 2: sinks; 3: races, kills, bounds; 4: tracebacks, wrong
#: answers, refresh; 5: a newcomer's input).
ITEMS = {
    "XML-illegal text in an xlsx": 2,
    "print headers over 255 characters": 2,
    "control characters on the terminal": 2,
    "CSV formula under any separator": 2,
    "concurrent writes (one winner)": 3,
    "kills during a write": 3,
    "huge or deep inputs (bounded)": 3,
    "import-hf MoE without a MoE layer": 4,
    "empty or odd safetensors headers": 4,
    "lone surrogates in config text": 4,
    "unknown native_precision": 4,
    "high_percentile changes the fleet": 4,
    "validate printing +inf%": 4,
    "Excel texts over 32,767 characters": 4,
    "what-if name covering a range": 4,
    "refresh keeps or refuses": 4,
    "token counts as people write them": 5,
    "time targets: ms typed as seconds": 5,
    "calibrate reads what validate reads": 5,
    "import-hf config.json (issue 13)": 13,
    "scenario fields (issue 13)": 13,
    "catalog entries (issue 13)": 13,
    "catalog files (issue 13)": 13,
    "calibration files (issue 13)": 13,
    "plan arguments (issue 13)": 13,
    "output names (issue 13)": 13,
}
#: Classes whose failure would be a corrupt file, a traceback or a race (the closing note's three zeros).
CORRUPT = {"XML-illegal text in an xlsx", "kills during a write", "refresh keeps or refuses", "output names (issue 13)"}
RACES = {"concurrent writes (one winner)"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, help="write pytest's whole output here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "trials.jsonl"
        env = {**os.environ, "PLANNER_FUZZ_TABLE": str(table)}
        tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_fuzz_*.py"))
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-n", "0", "-q", "-rfE", "--tb=short", "-p", "no:cacheprovider"]
            + ["-p", "no:benchmark"] * _has_plugin("pytest_benchmark")
            + tests,
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        trials = [json.loads(line) for line in table.read_text().splitlines()] if table.exists() else []
    tried, held = collections.Counter(), collections.Counter()
    for t in trials:
        tried[t["class"]] += 1
        held[t["class"]] += t["held"]
    rows = [(ITEMS[c], c, tried[c], held[c]) for c in ITEMS if tried[c]]
    rows += [("?", c, tried[c], held[c]) for c in sorted(set(tried) - set(ITEMS))]  # a class added without an item
    width = max(len(c) for _, c, _, _ in rows)
    print(f"{'item':<5} {'class':<{width}} {'tried':>6} {'held':>6} {'failed':>6}")
    for item, cls, n, h in rows:
        print(f"{item!s:<5} {cls:<{width}} {n:>6} {h:>6} {n - h:>6}")
    n_all, h_all = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'':<5} {'all':<{width}} {n_all:>6} {h_all:>6} {n_all - h_all:>6}")
    failed = {cls for _, cls, n, h in rows if h < n}
    print(
        f"corrupt files: {sum(tried[c] - held[c] for c in CORRUPT)}; "
        f"tracebacks: {n_all - h_all - sum(tried[c] - held[c] for c in CORRUPT | RACES)}; "
        f"races: {sum(tried[c] - held[c] for c in RACES)}"
    )
    if args.log:
        args.log.write_text(run.stdout + run.stderr, encoding="utf-8")
    out = run.stdout.strip().splitlines()
    for line in out:
        if line.startswith(("FAILED ", "ERROR ")):
            print(line[:400])
    print(out[-1] if out else run.stderr.strip()[-500:])
    return 1 if failed or run.returncode else 0


def _has_plugin(module: str) -> bool:
    """Whether ``module`` (a pytest plugin that breaks ``-n 0`` runs, such as pytest-benchmark) is installed."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


if __name__ == "__main__":
    sys.exit(main())
