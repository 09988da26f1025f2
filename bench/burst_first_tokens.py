"""When the first tokens of an all-at-once run arrive, per engine: evidence for the gap docs/accuracy.md names
"All-at-once runs: what the client and the servers' sources say" (issues 21/22). Reads shipped rows only; nothing is
simulated or fitted.

    python bench/burst_first_tokens.py

For every gpustack run of N prompts sent at once (``vllm bench serve`` at request rate inf, no --max-concurrency) it
prints the published mean TTFT, the run's duration (N / request throughput), their ratio, the mean TPOT, and the
largest time per request a front end that prepares one request at a time could take: a burst of N has mean
TTFT >= s (N + 1) / 2 whatever the engine does, so s <= 2 mean / (N + 1). Rows are grouped by engine release so that
the same model on the same GPUs can be read across engines.

What it shows (the docs give the sources): vLLM 0.11's first tokens arrive late in the run (mean TTFT 0.63-0.92 of
the duration on the 128/4 runs) and its later tokens close together (small TPOT), where SGLang and TensorRT-LLM 1.2
spread their first tokens (0.51-0.62) and stall decodes (large TPOT); and the vLLM delay is not a fixed cost per
request: with the same release, chat template and tokenizer, Qwen3-235B-A22B FP8 on 4 x H100 finishes 984 prompts in
6.1 s and Qwen3-14B on one H100 1,000 in 22.7 s.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PERF = ROOT / "catalogs" / "reference" / "perf_public.csv"
SOURCE = "gpustack-performance-lab"


def burst_rows(path: Path = PERF, output_len: str | None = "4") -> list[dict[str, str]]:
    """gpustack's all-at-once rows (request rate inf) with a mean TTFT and a request throughput; only those of
    ``output_len`` output tokens when it is given (the 128/4 "short prompt" runs, where TTFT is most of the run)."""
    out = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            if r["source_group"] != SOURCE or r["request_rate"] != "inf":
                continue
            if output_len is not None and r["output_len"] != output_len:
                continue
            if not (r["ttft_ms"] and r["request_throughput_req_s"] and r["num_prompts"]):
                continue
            out.append(r)
    return out


def main() -> int:
    by_release: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in burst_rows():
        by_release[f"{r['engine']} {r['engine_version'].split(' ')[0]}"].append(r)
    print("gpustack all-at-once runs, 128/4 (perf_public.csv): mean TTFT / duration, TPOT, serial bound 2 mean/(N+1)")
    for release in sorted(by_release):
        print(f"\n{release}")
        for r in sorted(by_release[release], key=lambda r: (r["model"], r["gpu"], r["num_gpus"])):
            n = int(r["num_prompts"])
            ttft_s = float(r["ttft_ms"]) / 1e3
            duration_s = n / float(r["request_throughput_req_s"])
            tpot = f"{float(r['tpot_ms']):7.0f}" if r["tpot_ms"] else "      -"
            print(
                f"  {r['record_id']:13} {r['gpu'][:13]:13} x{r['num_gpus']:<2} {r['model'][:36]:36} N={n:<5}"
                f" TTFT {ttft_s:6.2f} s of {duration_s:6.1f} s ({ttft_s / duration_s:4.2f})  TPOT {tpot} ms"
                f"  s <= {2 * ttft_s / (n + 1) * 1e3:5.1f} ms"
            )
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    sys.exit(main())
