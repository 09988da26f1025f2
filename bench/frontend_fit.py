"""Per-request front-end time fitted on published loaded runs (``planner.accuracy.frontend``), leaving sources out.

    python bench/frontend_fit.py [runs.csv] [--serial-front-end]

Prints each (engine, source)'s vote (the median residual of its sweeps' lightest-load runs: published median TTFT
minus the simulated one with no front end), the value each source is predicted with in ``bench/load_validation.py``
(fitted on the other sources only), and the value fitted on every source beside the shipped ``FRONTEND_S``.
"""

from __future__ import annotations

import argparse
import sys

from planner.accuracy.frontend import FRONTEND_S, fitted_frontend_s, votes
from planner.accuracy.published import load_decode_rows, reference_dir


def main(argv: list[str]) -> int:
    from heldout import add_serial_front_end_option, use_serial_front_end  # (bench/: the script's folder)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", help="runs CSV [default: catalogs/reference/load_public.csv]")
    add_serial_front_end_option(parser)
    args = parser.parse_args(argv[1:])
    use_serial_front_end(args.serial_front_end)
    path = args.runs or reference_dir() / "load_public.csv"
    found = votes(load_decode_rows(path))
    print(f"{'engine':<13}{'source':<36}{'vote ms':>8}{'left-out ms':>12}  lightest-load runs")
    for v in found:
        loso = fitted_frontend_s(found, leave_out=v.source_group)
        print(f"{v.engine:<13}{v.source_group:<36}{v.residual_s * 1e3:8.1f}{loso * 1e3:12.1f}  {', '.join(v.runs)}")
    print(
        f"\nfitted on every source {fitted_frontend_s(found) * 1e3:.1f} ms; shipped FRONTEND_S {FRONTEND_S * 1e3:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
