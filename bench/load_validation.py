"""Serving runs under load: predicted / published - 1 of median and p99 TTFT, TPOT and ITL, per engine and GPU.

    python bench/load_validation.py [runs.csv]

Rows: ``catalogs/reference/load_public.csv`` (or a file in the same columns). Each run is simulated as it went
(``planner.accuracy.under_load``); nothing in the load simulation is fitted, so every row is out of sample for it
(the step times come from the time model, fitted on ``perf_public.csv``, whose rows include these sources' means).
"""

from __future__ import annotations

import math
import statistics
import sys

from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.validation import validate_load


def main(argv: list[str]) -> int:
    path = argv[1] if len(argv) > 1 else reference_dir() / "load_public.csv"
    rows = {r.record_id: r for r in load_decode_rows(path)}
    table = validate_load(list(rows.values()))
    groups: dict[tuple[str, str, str], list[float]] = {}
    missing = 0
    for c in table.checks:
        r = rows[c.record_id]
        key = (r.engine, r.gpu.split("(")[0].strip(), c.quantity)
        if math.isnan(c.error):
            missing += 1
            continue
        groups.setdefault(key, []).append(abs(c.error))
    print(f"{'engine':<8} {'GPU':<16} {'quantity':<16} {'n':>3} {'median':>8} {'worst':>8}")
    for (engine, gpu, quantity), errors in sorted(groups.items()):
        print(
            f"{engine:<8} {gpu:<16} {quantity:<16} {len(errors):>3} {statistics.median(errors):8.1%} {max(errors):8.1%}"
        )
    total = len(table.checks)
    print(f"{total - missing} of {total} figures predicted ({(total - missing) / max(total, 1):.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
