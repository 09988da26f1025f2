"""The held-out rows ``trtllm-gemm`` (s144) moves: TensorRT-LLM 0.13's perf-overview groups and gpustack's TensorRT-LLM
rows, predicted / published - 1, with main's model or with a switch of ``bench/switch_bootstrap.py`` turned on.

    PYTHONPATH=. python bench/trtllm_gemm_rows.py               # main
    PYTHONPATH=. python bench/trtllm_gemm_rows.py trtllm-gemm   # the switch on

First block: per (GPU, model, TP, weight precision) of the perf-overview sources, the median signed error of output
throughput and each (input / output length)'s; second: each gpustack TensorRT-LLM figure (TPOT, TTFT, serving
throughput) with its row and page.
"""

from __future__ import annotations

import collections
import math
import statistics
import sys


def main(argv: list[str]) -> int:
    import heldout as h  # (bench/)

    if len(argv) > 1:
        import switch_bootstrap  # (bench/)

        switch_bootstrap.turn_on(argv[1])
    from planner.accuracy import predict as acc

    rows = h.held_out_rows(acc.load_decode_rows())
    groups = collections.defaultdict(list)
    for c in h.time_checks([r for r in rows if "perf-overview" in r.source_group]):
        r = c["row"]
        if not math.isnan(c["planner"]):
            key = (c["GPU"], r.model.split("/")[-1][:26], r.gpus, r.weight_precision)
            groups[key].append((r.input_len, r.output_len, c["planner"]))
    for key in sorted(groups):
        v = groups[key]
        cells = " ".join(f"{i}/{o}:{e * 100:+.0f}" for i, o, e in sorted(v))
        print(key, f"median {statistics.median(x[2] for x in v) * 100:+.0f}%", cells)
    gs = [r for r in rows if "gpustack" in r.source_group and "tensorrt" in r.engine.lower()]
    for c in h.time_checks(gs):
        r = c["row"]
        if not math.isnan(c["planner"]):
            page = "/".join(r.source.split("/")[-2:])
            print(r.record_id, c["GPU"], r.model.split("/")[-1][:28], f"TP{r.gpus}", r.weight_precision,
                  r.engine_version[:9], page, c["q"], f"{c['planner'] * 100:+.0f}%")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    sys.exit(main(sys.argv))
