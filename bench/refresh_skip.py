"""Seconds ``refresh_load`` takes on the shipped what-if workbook: Inputs unchanged (the Load sheet is kept, nothing is
simulated) against one Input changed (simulated again). ``PYTHONPATH=. python bench/refresh_skip.py``."""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import openpyxl

from planner.accuracy.calibration import resolve_calibration
from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.workbook.layout import INPUTS_SHEET, input_row
from planner.workbook.update import refresh_load


def main() -> None:
    cat, eng, cal = default_catalog(), engine_profile(None), resolve_calibration(None)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "copy.xlsx"
        shutil.copy(Path(__file__).parents[1] / "workbooks" / "capacity-what-if.xlsx", path)
        wb = openpyxl.load_workbook(path, rich_text=True)
        t = time.perf_counter()
        again = refresh_load(wb, path, cat, eng, cal)
        print(f"unchanged Inputs: {time.perf_counter() - t:.2f} s, simulated again: {again}")
        wb[INPUTS_SHEET][f"B{input_row('peak_requests_per_s')}"] = 50
        t = time.perf_counter()
        again = refresh_load(wb, path, cat, eng, cal)
        print(f"peak traffic 40 -> 50: {time.perf_counter() - t:.2f} s, simulated again: {again}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    main()
