"""Which runs should the export's serving margin come from? (s194's experiments; docs/history.md)

    PYTHONPATH=. python bench/margin_sources.py                  # the shipped rule: held-out steady-load TPOT rows
    PYTHONPATH=. python bench/margin_sources.py --load           # ... and the loaded runs' TPOT medians
    PYTHONPATH=. python bench/margin_sources.py --lines          # a current-line query reads its line's runs first
    PYTHONPATH=. python bench/margin_sources.py --load --lines   # both

Each variant's table (``serving_margin.serving_residual_table``) is judged on the 1,346 loaded percentiles of
``bench/load_validation.py``, each run against the table built without its own source (``range_coverage.
left_out_regions``): the share inside the margin the export would give its GPU, engine and model class (read as a
range, as ``bench/range_coverage.py --part loaded`` reads it), then a few of the table's regions."""

import math
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import range_coverage as rc  # noqa: E402
from heldout import steady_load_tpot  # noqa: E402

import planner.accuracy.predict as acc  # noqa: E402
import planner.accuracy.serving_margin as sm  # noqa: E402
from planner.accuracy.fit import held_out_rows  # noqa: E402
from planner.accuracy.holdout import fold_of  # noqa: E402
from planner.accuracy.serving_margin import margin_class  # noqa: E402
from planner.accuracy.validation import validate_load  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.engines.profiles import engine_profile  # noqa: E402

LINES_ONLY = "--lines" in sys.argv
WITH_LOAD = "--load" in sys.argv
sm.CURRENT_LINE_FIRST = LINES_ONLY

cat = default_catalog()
held = held_out_rows(acc.load_decode_rows())
rows, pred, gpus, classes = steady_load_tpot(held)
rows, pred, gpus, classes = list(rows), list(pred), list(gpus), list(classes)
load_rows = acc.load_decode_rows(acc.reference_dir() / "load_public.csv")
by_id = {r.record_id: r for r in load_rows}
checks = [c for c in validate_load(load_rows).checks if not math.isnan(c.predicted)]
added = 0
if WITH_LOAD:
    for c in checks:
        if c.quantity != "tpot_median_ms":
            continue
        r = by_id[c.record_id]
        if not sm.steady_load(r.kind, r.batch, r.num_prompts, r.request_rate):
            continue
        try:
            gpu, mdl = acc.resolve_gpu_name(r.gpu, cat), cat.model(acc.resolve_model_name(r.model, cat))
        except acc.PlannerError:
            continue
        rows.append(
            SimpleNamespace(
                tpot_s=c.published / 1e3,
                kind=r.kind,
                batch=r.batch,
                num_prompts=r.num_prompts,
                request_rate=r.request_rate,
                engine=r.engine,
                engine_version=r.engine_version,
                source_group=r.source_group,
            )
        )
        pred.append(c.predicted / 1e3)
        gpus.append(gpu)
        classes.append(margin_class(mdl))
        added += 1
whole = rc.regions_of(rc.serving_residual_table(rows, pred, gpus, classes))
memo_tables, memo, records = {}, {}, []
for c in checks:
    r = by_id[c.record_id]
    try:
        gpu, mdl = acc.resolve_gpu_name(r.gpu, cat), cat.model(acc.resolve_model_name(r.model, cat))
    except acc.PlannerError:
        continue
    fold = fold_of(r)
    if fold not in memo_tables:
        memo_tables[fold] = rc.left_out_regions(rows, pred, gpus, classes, fold)
    prediction = rc.range_of_query(cat, gpu, r.engine, int(r.gpus or 1), mdl.name, memo)
    rng = sm.margin_range(prediction, gpu, engine_profile(r.engine).name, margin_class(mdl), memo_tables[fold])
    records.append((c.quantity, rc.placement(c.predicted, c.published, rng.low, rng.high)))
print(f"lines only {LINES_ONLY}, loaded TPOT p50s added {added}; table rows {len(rows)}")
for q in ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms"):
    at = [a for qq, a in records if qq == q]
    print(f"  {q:16s} {len(at):4d}  inside {sum(a == rc.INSIDE for a in at) / len(at):.0%}")
for key in [
    ("H200 SXM 141GB", "vllm", "MoE"),
    ("*", "sglang", "MoE"),
    ("*", "vllm", "MoE"),
    ("*", "vllm", "dense"),
    ("H100 SXM 80GB", "vllm", "dense"),
    ("B200 180GB", "sglang", "MoE"),
]:
    g = whole.get(key)
    print(" ", key, (g.rows, g.low, g.high) if g else None)
