"""Benchmark of the Excel functions against the model they wrap. Prints ratios; asserts nothing.

    python bench/bench_excel.py            # about 20 s

1. A scalar call as Excel makes it (each argument a 1x1 range [[x]], numbers as floats) against calling
   the planner.api function directly: the wrapper's overhead (target: under 30%).
2. One call over a 10,000-row range against 10,000 scalar calls of the same function (target: at least
   50x faster per row): why a spreadsheet should call once per column.
3. Import time of planner.excel.functions against importing xlwings alone (fresh interpreters, median of 5).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner import api  # noqa: E402
from planner.excel import functions as xf  # noqa: E402


def best_per_call(f, repeat: int = 7, number: int = 200) -> float:
    """Seconds per call: the best of ``repeat`` runs of ``number`` calls (the least disturbed run)."""
    f()
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            f()
        runs.append((time.perf_counter() - t) / number)
    return min(runs)


def scalar_overhead() -> None:
    print("1. Scalar call: Excel function (args as [[x]]) vs planner.api directly")
    cases = [
        (
            "KV_BYTES",
            lambda: xf.KV_BYTES([["llama2-70b"]], [[8192.0]], [["fp16"]], [[None]]),
            lambda: api.kv_bytes("llama2-70b", 8192.0, kv_precision="fp16"),
        ),
        ("RIDGE", lambda: xf.RIDGE([["H100"]], [[None]]), lambda: api.ridge("H100")),
        (
            "MAX_BATCH",
            lambda: xf.MAX_BATCH([["H100"]], [["llama2-70b"]], [[8192.0]], [["fp16"]]),
            lambda: api.max_batch("H100", "llama2-70b", 8192.0, kv_precision="fp16"),
        ),
        (
            "TPOT",
            lambda: xf.TPOT([["H100"]], [["llama2-70b"]], [[8192.0]], [[8.0]]),
            lambda: api.tpot("H100", "llama2-70b", 8192.0, batch=8.0),
        ),
    ]
    for name, wrapped, direct in cases:
        # interleave the two so drift in machine speed hits both alike
        w = min(best_per_call(wrapped, 3), best_per_call(wrapped, 3))
        d = min(best_per_call(direct, 3), best_per_call(direct, 3))
        print(
            f"   {name:<10} wrapper {w * 1e6:8.1f} us   api {d * 1e6:8.1f} us   overhead {w / d - 1:+6.1%}"
            f"   {'ok' if w / d - 1 < 0.30 else 'ABOVE 30%'}"
        )


def range_vs_scalars(rows: int = 10_000) -> None:
    print(f"2. One call over a {rows:,}-row range vs {rows:,} scalar calls")
    gpus = [["H100"] if i % 3 else ["A100 SXM 80GB"] for i in range(rows)]
    ctx = [[float(1024 + (i * 37) % 30000)] for i in range(rows)]
    for name in ("MAX_BATCH", "TPOT", "KV_BYTES"):
        f = getattr(xf, name)
        if name == "KV_BYTES":

            def one_call(f=f):
                return f("llama2-70b", ctx)

            def per_cell(f=f):
                return [f("llama2-70b", c[0]) for c in ctx]
        else:

            def one_call(f=f):
                return f(gpus, "llama2-70b", ctx)

            def per_cell(f=f):
                return [f(g[0], "llama2-70b", c[0]) for g, c in zip(gpus, ctx, strict=True)]

        t = time.perf_counter()
        spilled = one_call()
        t_range = time.perf_counter() - t
        t = time.perf_counter()
        cells = per_cell()
        t_cells = time.perf_counter() - t
        same = [r[0] for r in spilled] == cells
        print(
            f"   {name:<10} range {t_range * 1e3:8.1f} ms ({t_range / rows * 1e6:6.1f} us/row)   "
            f"scalars {t_cells * 1e3:8.1f} ms ({t_cells / rows * 1e6:6.1f} us/row)   "
            f"{t_cells / t_range:6.1f}x faster per row   {'ok' if t_cells / t_range >= 50 else 'BELOW 50x'}"
            f"   same results: {same}"
        )


def import_time(repeat: int = 5) -> None:
    print("3. Import time in a fresh interpreter (median of 5)")

    def cost(stmt: str) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", stmt], check=True, cwd=ROOT)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    base = cost("pass")
    xw = cost("import xlwings") - base
    ours = cost("import planner.excel.functions") - base
    probe = (
        "import sys, planner.excel.functions; print(' '.join(sorted(m for m in "
        "('openpyxl', 'matplotlib', 'click', 'pandas', 'planner.cli') if m in sys.modules)))"
    )
    heavy = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"   import xlwings                  {xw * 1e3:7.0f} ms")
    print(
        f"   import planner.excel.functions  {ours * 1e3:7.0f} ms   ({ours / xw:.2f}x xlwings alone; "
        f"+{(ours - xw) * 1e3:.0f} ms for planner)"
    )
    print(f"   heavy modules loaded after import: {heavy or 'none'} (xlwings itself imports pandas and matplotlib)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    print(f"Python {sys.version.split()[0]}")
    scalar_overhead()
    range_vs_scalars()
    import_time()
