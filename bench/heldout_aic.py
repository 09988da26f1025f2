"""Run aiconfigurator's estimate on queries from bench/heldout.py; run by the aiconfigurator venv's Python.

    /work/venvs/aic/bin/python bench/heldout_aic.py QUERIES.json CACHE.json

Each query is ``{"key", "model_path", "system", "backend", "mode", "isl", "osl", "batch_size", "tp_size",
"gemm_quant_mode", "kvcache_quant_mode"}``; its result (TTFT and TPOT in ms, the run's output tokens/s, or the
error aiconfigurator raised) is added to CACHE.json under ``key`` as soon as it is known, so an interrupted
run resumes where it stopped. Not part of the planner package: it imports aiconfigurator only.
"""

from __future__ import annotations

import argparse
import logging

from estimator_cache import run_cached


def main(queries_path: str, cache_path: str) -> None:
    logging.disable(logging.WARNING)
    from aiconfigurator.cli.api import cli_estimate

    def estimate(q: dict) -> dict:
        args = {k: v for k, v in q.items() if k not in ("key", "model_path", "system", "backend") and v is not None}
        r = cli_estimate(q["model_path"], q["system"], backend_name=q["backend"], **args)
        return {
            "ttft_ms": float(r.ttft),
            "tpot_ms": float(r.tpot),
            "throughput_tok_s": float(r.raw.get("tokens/s", float("nan"))),
            "version": str(r.backend_version),
        }

    run_cached(queries_path, cache_path, estimate, "aiconfigurator")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("queries", help="QUERIES.json (written by bench/heldout.py)")
    parser.add_argument("cache", help="CACHE.json, each result added under its query's key")
    args = parser.parse_args()
    main(args.queries, args.cache)
