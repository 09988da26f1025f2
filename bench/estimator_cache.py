"""Answers of an outside estimator, cached by query: shared by bench/heldout_aic.py and bench/heldout_la.py.

Standard library only, so each estimator's own venv can import it (``sys.path`` holds the script's folder).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable


def run_cached(queries_path: str, cache_path: str, estimate: Callable[[dict], dict], what: str) -> None:
    """``estimate`` every query of QUERIES.json whose ``key`` CACHE.json lacks; an exception becomes its "error".

    The cache is rewritten after each answer (atomically), so an interrupted run resumes where it stopped.
    """
    queries = json.load(open(queries_path, encoding="utf-8"))
    cache = json.load(open(cache_path, encoding="utf-8")) if os.path.exists(cache_path) else {}
    todo = [q for q in queries if q["key"] not in cache]
    print(f"{len(todo)} of {len(queries)} {what} queries to run", flush=True)
    for i, q in enumerate(todo, 1):
        start = time.time()
        try:
            out = estimate(q)
        except Exception as exc:  # the estimator refuses the configuration: record why
            out = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
        cache[q["key"]] = out
        tmp = cache_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(cache, f, indent=0, sort_keys=True)
        os.replace(tmp, cache_path)
        print(f"{i}/{len(todo)} {q['key']}: {out} ({time.time() - start:.0f} s)", flush=True)
