"""H200 against H100 on TensorRT-LLM 0.13's perf-overview configurations: published ratio against the planner's (issue 21).

    PYTHONPATH=. python bench/h200_h100_pairs.py

The page (trtllm-perf-overview-v0.13.0, catalogs/reference/perf_public.csv rows TRT013-*) prints an H200 141GB and an
H100 80GB FP8 column side by side for each model / TP / ISL/OSL. Per such pair this prints the published H200/H100
output-throughput ratio, the planner's predicted ratio (``predict_decode_rows`` as ``bench/heldout.py`` runs it) and
their quotient ``planner / published - 1``: negative where the planner makes H200 relatively slower than the page.
Each row's own signed error (planner / published - 1) is printed beside it, and the rows' record ids, to decompose a
pair with ``bench/step_operators.py``.

    PYTHONPATH=. python bench/h200_h100_pairs.py --attention-ratio 1.27

A what-if, not a model change: TensorRT-LLM's H200 decode-attention byte rate set to H100's curve (2.402 TB/s) x
RATIO for this process alone, so the printed ratios show how much of the gap the attention rate's H200/H100 ratio
carries (shipped: 1.219, TensorRT-LLM's own kernels; vLLM's curve 2.705 / 2.402 = 1.126; s152, docs/history.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402

GROUP = "trtllm-perf-overview-v0.13.0"
H200, H100 = "H200 SXM 141GB", "H100 SXM 80GB"


def pairs() -> list[dict]:
    """One dict per (model, TP, ISL, OSL, weight precision) that the page gives on both H200 and H100."""
    cat = default_catalog()
    rows = [r for r in acc.load_decode_rows() if r.source_group == GROUP]
    pred = acc.predict_decode_rows(rows, catalog=cat, frontend_s=frontend_s_of_rows(rows))
    by_key: dict[tuple, dict[str, tuple]] = {}
    for i, r in enumerate(rows):
        gpu = acc.resolve_gpu_name(r.gpu, cat)
        if gpu not in (H200, H100):
            continue
        key = (r.model.split("/")[-1], r.gpus, r.weight_precision, r.input_len, r.output_len)
        by_key.setdefault(key, {})[gpu] = (r, pred.throughput_tokens_per_s[i])
    out = []
    for key, d in sorted(by_key.items()):
        if H200 not in d or H100 not in d:
            continue
        (r2, p2), (r1, p1) = d[H200], d[H100]
        pub_ratio = r2.throughput_tokens_per_s / r1.throughput_tokens_per_s
        pred_ratio = p2 / p1
        out.append(
            {
                "key": key,
                "ids": (r2.record_id, r1.record_id),
                "published_ratio": pub_ratio,
                "planner_ratio": pred_ratio,
                "ratio_error": pred_ratio / pub_ratio - 1,
                "h200_error": p2 / r2.throughput_tokens_per_s - 1,
                "h100_error": p1 / r1.throughput_tokens_per_s - 1,
            }
        )
    return out


def set_h200_attention_ratio(ratio: float) -> None:
    """For this process: TensorRT-LLM's H200 decode-attention byte rate = H100's measured rate x ``ratio``
    (``kernel_curves.TENSORRT_LLM_ATTENTION_RATIOS``, shipped 1.219; a what-if, every other factor as measured)."""
    from planner.engines import kernel_curves

    kernel_curves.TENSORRT_LLM_ATTENTION_RATIOS = {H200: (H100, ratio)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attention-ratio", type=float, help="what-if: H200's decode-attention byte rate / H100's")
    args = ap.parse_args()
    if args.attention_ratio:
        set_h200_attention_ratio(args.attention_ratio)
    ps = pairs()
    print(
        f"{'model':<20}{'TP':>3} {'prec':<5}{'ISL/OSL':>11} {'pub H200/H100':>13} {'planner':>8} {'ratio err':>9}"
        f" {'H200 err':>8} {'H100 err':>8}  ids"
    )
    for p in ps:
        m, tp, prec, isl, osl = p["key"]
        print(
            f"{m[:20]:<20}{tp:>3} {prec:<5}{f'{isl}/{osl}':>11} {p['published_ratio']:>13.3f} {p['planner_ratio']:>8.3f}"
            f" {p['ratio_error'] * 100:>+8.1f}% {p['h200_error'] * 100:>+7.1f}% {p['h100_error'] * 100:>+7.1f}%  "
            f"{p['ids'][0]} {p['ids'][1]}"
        )
    by_cfg: dict[tuple, list[dict]] = {}
    for p in ps:
        by_cfg.setdefault(p["key"][:3], []).append(p)
    print("\nper configuration (median over lengths): published ratio, planner ratio, ratio error")
    for k, v in by_cfg.items():
        print(
            f"  {k[0][:20]:<20} TP{k[1]} {k[2]}: {statistics.median(x['published_ratio'] for x in v):.3f}"
            f" {statistics.median(x['planner_ratio'] for x in v):.3f}"
            f" {statistics.median(x['ratio_error'] for x in v) * 100:+.1f}%"
        )
    print(f"all {len(ps)} pairs: median ratio error {statistics.median(p['ratio_error'] for p in ps) * 100:+.1f}%")


if __name__ == "__main__":
    main()
