"""Published runs of one document that differ only in the expert layout: TPOT with each expert split over the group
(no expert-parallel flag) over TPOT with whole experts spread (``--ep_size``, ``--ep-size``,
``--enable-expert-parallel``), published against predicted (issues 21 and 22, s126).

    PYTHONPATH=. python bench/expert_layout_pairs.py                       # main
    PYTHONPATH=. python bench/expert_layout_pairs.py --switch expert-parallel
    PYTHONPATH=. python bench/expert_layout_pairs.py --switch expert-parallel:trtllm

Each pair: same source document, section sequence, GPU, model and checkpoint, tensor-parallel size and engine; the
perf_public rows' mean TPOT (``predict_decode_rows``, each source's front-end time as ``bench/heldout.py`` gives it),
the load_public rows' median TPOT (``planner.accuracy.under_load``, as ``bench/load_validation.py``). Ratio > 1: the
split layout is slower.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: (split, spread): TP-only row, expert-parallel row of the same document
PAIRS = (
    ("LD037", "LD038"),  # DeepSeek-V3.2, TensorRT-LLM 1.2.0rc5, 8 x H200 (percentiles of GPUSTACK-018 / -032)
    ("GPUSTACK-018", "GPUSTACK-032"),
    ("GPUSTACK-018", "GPUSTACK-033"),  # the same, DeepGEMM off (TRTLLM_DG_ENABLED=0)
    ("GPUSTACK-024", "GPUSTACK-025"),  # DeepSeek-V3.2, SGLang 0.5.6.post2, DP attention 8, 8 x H200
    ("GPUSTACK-045", "GPUSTACK-046"),  # GLM-4.5-Air bf16, SGLang 0.5.4.post2, 4 x A100
    ("GPUSTACK-060", "GPUSTACK-061"),  # GLM-4.5-Air fp8, SGLang, 4 x H100
    ("GPUSTACK-062", "GPUSTACK-063"),  # GLM-4.5-Air fp8, SGLang, 2 x H100
    ("GPUSTACK-073", "GPUSTACK-074"),  # GLM-4.6-FP8, vLLM 0.11.0, 8 x A100
    ("GPUSTACK-079", "GPUSTACK-080"),  # GLM-4.6-FP8, SGLang 0.5.3, 8 x H100
    ("GPUSTACK-085", "GPUSTACK-086"),  # GLM-4.6-FP8, SGLang 0.5.3, 4 x H200
    ("GPUSTACK-189", "GPUSTACK-190"),  # Qwen3-235B-A22B-FP8, vLLM 0.11.0, 4 x A100
    ("GPUSTACK-204", "GPUSTACK-205"),  # Qwen3-235B-A22B-FP8, vLLM 0.11.0, 4 x H100
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--switch", default="main", help="an off-by-default switch of bench/switch_bootstrap.py to turn on")
    args = ap.parse_args(argv)
    from switch_bootstrap import turn_on

    turn_on(args.switch)
    from planner.accuracy.frontend import frontend_s_of_rows
    from planner.accuracy.predict import predict_decode_rows
    from planner.accuracy.published import load_decode_rows, reference_dir
    from planner.accuracy.validation import validate_load

    perf = {r.record_id: r for r in load_decode_rows()}
    load = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    ids = [i for pair in PAIRS for i in pair]
    rows = [perf[i] for i in ids if i in perf]
    front = dict(zip(list(perf), frontend_s_of_rows(list(perf.values())), strict=True))
    pred = predict_decode_rows(rows, frontend_s=[front[r.record_id] for r in rows])
    predicted = {r.record_id: float(t) for r, t in zip(rows, pred.tpot_s, strict=True)}
    published = {r.record_id: r.tpot_s for r in rows}
    for c in validate_load().checks:  # every run (each source's front end fitted on the others), kept: the pairs'
        if c.quantity == "tpot_median_ms" and c.record_id in ids:
            predicted[c.record_id], published[c.record_id] = c.predicted / 1e3, c.published / 1e3
    print(f"switch: {args.switch}; TPOT ms (split / spread), published then predicted, and their ratio")
    for a, b in PAIRS:
        r = perf.get(a) or load[a]
        what = f"{r.model.split('/')[-1]} {r.engine} {r.gpus} x {r.gpu.split(' (')[0]}"
        pa, pb, qa, qb = published[a], published[b], predicted[a], predicted[b]
        print(
            f"  {a:>12} / {b:<12} {what:<52} published {pa * 1e3:7.1f} / {pb * 1e3:7.1f} = {pa / pb:4.2f}; "
            f"predicted {qa * 1e3:7.1f} / {qb * 1e3:7.1f} = {qa / qb:4.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
