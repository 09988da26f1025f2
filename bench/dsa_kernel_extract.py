"""Extract the measured DeepSeek-V3.2 decode attention modules ``planner.engines.kernel_floor.sparse_mla_token_s``
derives the fp8 sparse-attention kernel's time per token from.

    /work/venvs/aic/bin/python bench/dsa_kernel_extract.py   # writes catalogs/reference/dsa_decode_aic.csv

Source: aiconfigurator 0.12.0's collected kernel database for vLLM 0.24.0 on H100 SXM and H200 SXM
and TensorRT-LLM 1.3.0rc20 (``aiconfigurator_core/systems/data/{h100_sxm,h200_sxm}/sparse_attention/<engine>/<version>/
dsa_{generation,context}_module_perf.parquet``, Apache-2.0, NVIDIA): the latency (ms) of one layer's whole
DeepSeek-V3.2 attention module (the q/kv projections, the lightning indexer and its top-k, the sparse MLA attention,
the output projection) at ``num_heads`` query heads per GPU (128 / TP): in a decode step of ``batch`` sequences each at
``context`` tokens (``op`` generation), or in a prefill of ``batch`` prompts of ``context`` tokens (``op`` context,
TensorRT-LLM only). Kept: DeepSeek-V3.2 with block-fp8 projections, vLLM's two KV formats (fp8: its default
``fp8_ds_mla``; bfloat16) and TensorRT-LLM's measured one (bfloat16), 8-128 heads, decode batch 64-1,024 at 256-4,096
tokens, prefill batch 1-32 at 256 and 1,024 tokens. Needs pandas and pyarrow (the aiconfigurator venv has them); the
planner reads only the CSV.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "dsa_decode_aic.csv"
DATA = "lib/python3.11/site-packages/aiconfigurator_core/systems/data"
VENV = Path("/work/venvs/aic")
GPUS = {"h100_sxm": "H100 SXM 80GB", "h200_sxm": "H200 SXM 141GB"}
#: (engine as the CSV names it, op, table under the system's data folder)
TABLES = (
    ("vllm", "generation", "sparse_attention/vllm/0.24.0/dsa_generation_module_perf.parquet"),
    ("tensorrt-llm", "generation", "sparse_attention/trtllm/1.3.0rc20/dsa_generation_module_perf.parquet"),
    ("tensorrt-llm", "context", "sparse_attention/trtllm/1.3.0rc20/dsa_context_module_perf.parquet"),
)
HEADS = (8, 16, 32, 64, 128)
CONTEXTS = (256, 512, 1024, 2048, 4096)
BATCHES = (64, 128, 256, 512, 1024)
PREFILL_CONTEXTS = (256, 1024)
PREFILL_BATCHES = (1, 2, 4, 8, 16, 32)
COLUMNS = ("engine", "op", "gpu", "kernel_source", "kv_cache_dtype", "gemm_type", "num_heads", "batch", "context")
COLUMNS += ("latency_ms",)


def main() -> None:
    rows = []
    for key, gpu in GPUS.items():
        for engine, op, table in TABLES:
            t = pd.read_parquet(VENV / DATA / key / table)
            context = t.step if op == "generation" else t.isl
            contexts, batches = (CONTEXTS, BATCHES) if op == "generation" else (PREFILL_CONTEXTS, PREFILL_BATCHES)
            t = t[
                (t.model == "deepseek-ai/DeepSeek-V3.2")
                & (t.gemm_type == "fp8_block")
                & t.num_heads.isin(HEADS)
                & context.isin(contexts)
                & t.batch_size.isin(batches)
            ]
            for r in t.itertuples():
                ctx = r.step if op == "generation" else r.isl
                rows.append(
                    (engine, op, gpu, r.kernel_source, r.kv_cache_dtype, r.gemm_type, r.num_heads, r.batch_size, ctx)
                    + (f"{r.latency:.6g}",)
                )
    with OUT.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(sorted(rows, key=lambda r: (r[0], r[1], r[2], r[4], r[6], r[8], r[7])))
    print(f"{len(rows)} rows -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    main()
