"""Run aiconfigurator's estimate on queries from bench/heldout.py; run by the aiconfigurator venv's Python.

    /work/venvs/aic/bin/python bench/heldout_aic.py QUERIES.json CACHE.json

Each query is ``{"key", "model_path", "system", "backend", "mode", "isl", "osl", "batch_size", "tp_size",
"gemm_quant_mode", "kvcache_quant_mode"}``; its result (TTFT and TPOT in ms, the run's output tokens/s, or the
error aiconfigurator raised) is added to CACHE.json under ``key`` as soon as it is known, so an interrupted
run resumes where it stopped. Not part of the planner package: it imports aiconfigurator only.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time


def main(queries_path: str, cache_path: str) -> None:
    logging.disable(logging.WARNING)
    from aiconfigurator.cli.api import cli_estimate

    queries = json.load(open(queries_path, encoding="utf-8"))
    cache = json.load(open(cache_path, encoding="utf-8")) if os.path.exists(cache_path) else {}
    todo = [q for q in queries if q["key"] not in cache]
    print(f"{len(todo)} of {len(queries)} queries to run", flush=True)
    for i, q in enumerate(todo, 1):
        args = {k: v for k, v in q.items() if k not in ("key", "model_path", "system", "backend") and v is not None}
        start = time.time()
        try:
            r = cli_estimate(q["model_path"], q["system"], backend_name=q["backend"], **args)
            out = {
                "ttft_ms": float(r.ttft),
                "tpot_ms": float(r.tpot),
                "throughput_tok_s": float(r.raw.get("tokens/s", float("nan"))),
                "version": str(r.backend_version),
            }
        except Exception as exc:  # aiconfigurator refuses the configuration: record why
            out = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
        cache[q["key"]] = out
        tmp = cache_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(cache, f, indent=0, sort_keys=True)
        os.replace(tmp, cache_path)
        print(f"{i}/{len(todo)} {q['key']}: {out} ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
