"""Published rows past their datasheet bounds (the benchmark rows' means and output rates, the loaded runs' TTFT and
TPOT percentiles): a TTFT no cold prefill reaches, a TPOT no weight read reaches, an output rate (printed as seconds per
output token of the whole run, "output token") above what the GPUs compute or decode at peak
(``planner.accuracy.bounds``, s185). A row listed is read wrong, not predicted wrong.

    PYTHONPATH=. python bench/datasheet_floors.py          # the rows under a floor, and how many were checked
    PYTHONPATH=. python bench/datasheet_floors.py --all    # also the 20 rows closest to their floors
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.bounds import figures_and_floors  # noqa: E402
from planner.accuracy.published import reference_dir  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.errors import PlannerError  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also list the 20 figures closest to their floors")
    args = parser.parse_args()
    cat = default_catalog()
    ratios, skipped = [], 0
    for row in acc.load_decode_rows() + acc.load_decode_rows(reference_dir() / "load_public.csv"):
        try:
            figures = figures_and_floors(cat, row)
        except PlannerError:  # a GPU, model or precision the catalog does not resolve
            skipped += 1
            continue
        for name, published, floor in figures:
            if not math.isnan(published) and floor > 0:
                ratios.append((published / floor, row, name, published, floor))
    ratios.sort(key=lambda t: t[0])
    under = [t for t in ratios if t[0] < 1]
    unresolved = f"{skipped} rows whose GPU, model or precision the catalog does not resolve"
    print(f"{len(ratios)} figures checked ({unresolved}); {len(under)} under a floor")
    for ratio, row, name, published, floor in under if not args.all else ratios[: max(20, len(under))]:
        print(
            f"  {row.record_id:14s} {name} published {published * 1e3:9.1f} ms  floor {floor * 1e3:9.1f} ms "
            f"(x{ratio:.2f})  {row.source_group}  {row.gpu} x{row.gpus} {row.model} {row.input_len}/{row.output_len} "
            + (f"at {row.request_rate:g}/s" if row.request_rate else f"in flight {row.batch or 'all'}")
            + f" of {row.num_prompts}"
        )


if __name__ == "__main__":
    main()
