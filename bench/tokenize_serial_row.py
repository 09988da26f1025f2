"""One loaded run's simulated TTFT percentiles with the h-tok front-end switches set by hand
(docs/hypotheses/tokenizer-serial-per-token.md): what the per-token serial front end, its micro-batches, or the
one-request-at-a-time path alone (a fixed serial time per request) do to one row.

    PYTHONPATH=. python bench/tokenize_serial_row.py SGC026 --per-token 1e-12 --batch 32
    PYTHONPATH=. python bench/tokenize_serial_row.py SGC026 --fixed 1e-9
"""

from __future__ import annotations

import argparse

from planner.accuracy import predict as acc
from planner.accuracy.under_load import predict_percentiles
from planner.serving import benchmark, simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("row", help="a record id of catalogs/reference/load_public.csv")
    parser.add_argument("--per-token", type=float, default=0.0, help="serial front end, seconds a prompt token")
    parser.add_argument("--batch", type=int, default=1, help="micro-batch size of that front end (1: one at a time)")
    parser.add_argument("--fixed", type=float, default=0.0, help="serial front end, seconds a request (s112's form)")
    parser.add_argument("--frontend-s", type=float, default=0.0222, help="the run's front end F, seconds")
    args = parser.parse_args()
    benchmark.SERIAL_TOKENIZE_S_PER_TOKEN = args.per_token
    benchmark.SERIAL_FRONT_END_S = args.fixed
    simulate.SERIAL_TOKENIZE_MICROBATCH = args.batch
    rows = {r.record_id: r for r in acc.load_decode_rows(acc.reference_dir() / "load_public.csv")}
    row = rows[args.row]
    got = predict_percentiles(row, frontend_s=args.frontend_s)
    print(f"{args.row}: published TTFT p50 {row.ttft_median_s * 1e3:.1f} ms; simulated p50 {got['ttft_median_ms']:.1f}"
          f" ms, p99 {got['ttft_p99_ms']:.1f} ms (per token {args.per_token:g} s, batch {args.batch}, fixed"
          f" {args.fixed:g} s, F {args.frontend_s * 1e3:.1f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
