"""Extract TensorRT-LLM's measured fused-MoE calls, at both expert layouts, that
``planner.engines.kernel_floor.moe_gemm_halves`` fits TensorRT-LLM's grouped-GEMM half width and half rows to.

    /work/venvs/aic/bin/python bench/trtllm_moe_extract.py   # writes catalogs/reference/moe_trtllm_aic.csv
    python bench/trtllm_moe_extract.py --venv /tmp/aic       # an aiconfigurator venv elsewhere

Source: aiconfigurator 0.12.0's collected kernel database for TensorRT-LLM 1.3.0rc20 on H100 SXM and H200 SXM
(``aiconfigurator_core/systems/data/{h100_sxm,h200_sxm}/moe/trtllm/1.3.0rc20/moe_perf.parquet``, Apache-2.0, NVIDIA;
catalogs/reference/LICENSE-aiconfigurator.txt): latencies in ms of TensorRT-LLM's CUTLASS fused-MoE op
(``moe_torch_flow_cutlass``) per GPU. Kept: balanced routing; the shapes of catalog MoE models that
``catalogs/reference/moe_large_tokens_aic.csv`` holds for vLLM; each expert split over moe_tp GPUs or spread whole
over moe_ep GPUs (one of them 1, the other 1-8: the layouts a node's TP group runs with ``--ep_size`` or without);
256-16,384 tokens into the op (with tensor-parallel attention every GPU's MoE op takes the step's tokens); the
kernel dtypes the catalog's checkpoints load (bf16, fp8 block, mxfp4 weights with bf16 activations). Needs pandas and
pyarrow (the aiconfigurator venv has them); the planner reads only the CSV.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "catalogs" / "reference" / "moe_trtllm_aic.csv"
SHAPES_FROM = ROOT / "catalogs" / "reference" / "moe_large_tokens_aic.csv"
DATA = "lib/python3.11/site-packages/aiconfigurator_core/systems/data"
VERSION = "1.3.0rc20"
GPUS = {"h100_sxm": "H100 SXM 80GB", "h200_sxm": "H200 SXM 141GB"}
DTYPES = ("bfloat16", "fp8_block", "w4a16_mxfp4")
TOKENS = (256, 512, 1024, 2048, 4096, 16384)
COLUMNS = ("gpu", "kernel_source", "dtype", "tokens", "hidden_size", "inter_size", "topk", "num_experts")
COLUMNS += ("tp_size", "ep_size", "latency_ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="/work/venvs/aic", help="the aiconfigurator 0.12.0 virtual environment")
    args = ap.parse_args()
    with SHAPES_FROM.open(newline="") as fh:
        shapes = {(int(r["hidden_size"]), int(r["inter_size"]), int(r["topk"]), int(r["num_experts"])) for r in
                  csv.DictReader(fh)}  # fmt: skip
    rows = []
    for key, gpu in GPUS.items():
        moe = pd.read_parquet(Path(args.venv) / DATA / key / "moe" / "trtllm" / VERSION / "moe_perf.parquet")
        moe = moe[(moe.distribution == "balanced") & moe.moe_dtype.isin(DTYPES) & moe.num_tokens.isin(TOKENS)]
        one = (moe.moe_tp_size == 1) | (moe.moe_ep_size == 1)
        moe = moe[one & (moe.moe_tp_size * moe.moe_ep_size <= 8)]
        for r in moe.itertuples():
            if (r.hidden_size, r.inter_size, r.topk, r.num_experts) not in shapes:
                continue
            rows.append(
                (gpu, r.kernel_source, r.moe_dtype, r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts)
                + (r.moe_tp_size, r.moe_ep_size, f"{r.latency:.6g}")
            )
    rows.sort(key=lambda x: (x[0], x[2], x[4], x[5], x[6], x[7], x[8], x[9], x[3]))
    with OUT.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{len(rows)} calls -> {OUT}")


if __name__ == "__main__":
    main()
