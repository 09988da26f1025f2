"""DeepSeek-family eager launch time per MoE layer, chosen leaving whole sources out (h-mla, Test 4).

    PYTHONPATH=. python bench/mla_host_loso.py

docs/hypotheses/mla-prefill-mechanisms.md, Test 4. For each grid value of
``planner.serving.benchmark.SGLANG_MLA_HOST_MOE_LAYER_S`` every loaded run is simulated (``validate_load``); for each
source carrying SGLang eager MLA figures, the value is the one with the smallest median |TTFT p50 error| over the
*other* sources' SGLang eager MLA figures, and that source's figures are taken at it. Every other figure is main's.
Prints the chosen values, the left-out figures by class and the headline medians / worsts of each quantity.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import planner.serving.benchmark as B  # noqa: E402
from planner.accuracy.published import load_decode_rows, reference_dir, resolve_model_name  # noqa: E402
from planner.accuracy.validation import validate_load  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402

GRID_MS = (0.95, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
QUANTITIES = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms")


def run(value_ms: float | None) -> dict:
    B.SGLANG_MLA_HOST_MOE_LAYER_S = None if value_ms is None else value_ms * 1e-3
    rows = load_decode_rows(reference_dir() / "load_public.csv")
    checks = validate_load(rows).checks
    return {(c.record_id, c.quantity): c.error for c in checks}


def main() -> int:
    import math

    rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    cat = default_catalog()
    base = run(None)
    at = {v: run(v) for v in GRID_MS}
    B.SGLANG_MLA_HOST_MOE_LAYER_S = None

    def affected(rid: str) -> bool:  # an SGLang run of an MLA model whose prompt steps the shipped rule runs eagerly
        r = rows[rid]
        if str(r.engine).lower() != "sglang":
            return False
        try:
            mod = cat.model(resolve_model_name(r.model, cat))
        except Exception:  # noqa: BLE001
            return False
        return base.get((rid, "ttft_median_ms")) is not None and mod.mla is not None and rid in eager_ids

    # eager runs: those whose TTFT p50 moves between 0.95 ms and 3.0 ms a layer
    eager_ids = {
        rid
        for (rid, q), e in base.items()
        if q == "ttft_median_ms" and e is not None and not math.isnan(e)
        and abs(at[GRID_MS[-1]][(rid, q)] - at[GRID_MS[0]][(rid, q)]) > 1e-9
    }  # fmt: skip
    srcs = sorted({rows[rid].source_group for rid in eager_ids if affected(rid)})
    chosen = {}
    for s in srcs:
        others = [rid for rid in eager_ids if affected(rid) and rows[rid].source_group != s]
        score = {v: statistics.median(abs(at[v][(rid, "ttft_median_ms")]) for rid in others) for v in GRID_MS}
        chosen[s] = min(GRID_MS, key=lambda v: score[v])
        print(f"{s}: chosen on the other sources' {len(others)} figures: {chosen[s]} ms "
              f"({', '.join(f'{v}: {score[v]:.1%}' for v in GRID_MS)})")  # fmt: skip
    merged = {}
    for key, e in base.items():
        s = rows[key[0]].source_group
        merged[key] = at[chosen[s]][key] if s in chosen else e
    print("\nleft-out figures (each source at the value chosen without it) against main:")
    for q in QUANTITIES:
        a = [abs(e) for (rid, qq), e in base.items() if qq == q and e is not None and not math.isnan(e)]
        b = [abs(e) for (rid, qq), e in merged.items() if qq == q and e is not None and not math.isnan(e)]
        print(f"  {q:<16} median {statistics.median(a):.2%} -> {statistics.median(b):.2%}   "
              f"worst {max(a):.2%} -> {max(b):.2%}   ({len(b)} figures)")  # fmt: skip
    aff = [rid for rid in eager_ids if affected(rid)]
    sa = [base[(rid, "ttft_median_ms")] for rid in aff]
    sb = [merged[(rid, "ttft_median_ms")] for rid in aff]
    print(
        f"\nSGLang eager MLA TTFT p50 ({len(aff)} figures): signed {statistics.median(sa):+.0%} -> "
        f"{statistics.median(sb):+.0%}, |error| {statistics.median(map(abs, sa)):.0%} -> {statistics.median(map(abs, sb)):.0%}"
    )
    for s in srcs:
        ids = [rid for rid in aff if rows[rid].source_group == s]
        x = [base[(rid, "ttft_median_ms")] for rid in ids]
        y = [merged[(rid, "ttft_median_ms")] for rid in ids]
        print(f"  {s:<40} {len(ids):>3}  signed {statistics.median(x):+.0%} -> {statistics.median(y):+.0%}, "
              f"|error| {statistics.median(map(abs, x)):.0%} -> {statistics.median(map(abs, y)):.0%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
