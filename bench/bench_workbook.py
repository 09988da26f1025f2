"""Time to generate the full-catalog what-if workbook against writing the same number of plain cells with openpyxl.

    python bench/bench_workbook.py [--repeat 5]

Prints the median of each and their ratio (the baseline runs side by side, in the same process).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import openpyxl

from planner.workbook.build import build_whatif
from planner.workbook.writer import write_workbook


def generate(out: Path) -> int:
    spec = build_whatif()
    write_workbook(spec, out, force=True)
    return sum(len(s.cells) for s in spec.sheets)


def plain(out: Path, cells: int, width: int = 20) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    for i in range(cells):
        ws.cell(1 + i // width, 1 + i % width, i * 1.5)
    wb.save(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gen, base = [], []
        cells = generate(Path(tmp) / "warm.xlsx")
        for _ in range(args.repeat):
            t = time.perf_counter()
            generate(Path(tmp) / "wb.xlsx")
            gen.append(time.perf_counter() - t)
            t = time.perf_counter()
            plain(Path(tmp) / "plain.xlsx", cells)
            base.append(time.perf_counter() - t)
    g, b = statistics.median(gen), statistics.median(base)
    print(f"cells: {cells:,}")
    print(f"planner workbook (describe + write, full catalog): {g * 1e3:8.1f} ms")
    print(f"openpyxl, same number of plain cells:             {b * 1e3:8.1f} ms")
    print(f"ratio: {g / b:.2f}x")


if __name__ == "__main__":
    main()
