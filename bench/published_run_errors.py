"""Write ``catalogs/reference/published_run_errors.csv``: each shipped published run's deployment and ``planner
validate``'s predicted and published figures for it, which ``planner plan`` reads to name the runs of the deployment
it prints (``planner.accuracy.same_deployment``).

    PYTHONPATH=. python bench/published_run_errors.py            # write the file (about a minute and a half)
    PYTHONPATH=. python bench/published_run_errors.py --check    # only say whether the file is as validate gives it

The tables are ``planner validate``'s with no arguments: ``validation.validate_time`` on every shipped
``decode_*.csv`` and ``perf_*.csv`` row and ``validation.validate_load`` on ``load_public.csv``, each row with its own
engine and release, no calibration (refused if ``$PLANNER_CALIBRATION`` is set: the file is the planner's own error).
Run it again after any change that moves a prediction; tests/test_same_deployment.py recomputes some rows and fails
while the file is stale.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time

from planner.accuracy.calibration import ENV_VAR
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.same_deployment import COLUMNS, RUN_ERRORS_FILE, error_rows
from planner.accuracy.validation import validate_load, validate_time
from planner.catalog import default_catalog


def rendered() -> str:
    """The file's text, from validate's two tables on the shipped rows."""
    cat = default_catalog()
    benchmarks = load_decode_rows()
    loaded = load_decode_rows(reference_dir() / "load_public.csv")
    checks = [*validate_time(benchmarks, catalog=cat).checks, *validate_load(loaded, catalog=cat).checks]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(error_rows([*benchmarks, *loaded], checks, cat))
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args()
    if os.environ.get(ENV_VAR):
        print(f"unset {ENV_VAR}: the file holds the planner's own error, without a calibration", file=sys.stderr)
        return 2
    start = time.time()
    text = rendered()
    path = reference_dir() / RUN_ERRORS_FILE
    if args.check:
        same = path.exists() and path.read_text(encoding="utf-8") == text
        print(f"{path}: {'as validate gives it' if same else 'STALE: run this script without --check'}")
        return 0 if same else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}: {text.count(chr(10)) - 1} runs in {time.time() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
