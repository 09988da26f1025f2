"""Extract TensorRT-LLM's measured fused-MoE calls, at both expert layouts, that
``planner.engines.kernel_floor.moe_gemm_halves`` fits TensorRT-LLM's grouped-GEMM half width and half rows to.

    /work/venvs/aic/bin/python bench/trtllm_moe_extract.py   # writes catalogs/reference/moe_trtllm_aic.csv
    python bench/trtllm_moe_extract.py --venv /tmp/aic       # an aiconfigurator venv elsewhere
    /work/venvs/aic/bin/python bench/trtllm_moe_extract.py --fp8   # writes catalogs/reference/moe_trtllm_fp8_aic.csv

Source: aiconfigurator 0.12.0's collected kernel database for TensorRT-LLM 1.3.0rc20 on H100 SXM and H200 SXM
(``aiconfigurator_core/systems/data/{h100_sxm,h200_sxm}/moe/trtllm/1.3.0rc20/moe_perf.parquet``, Apache-2.0, NVIDIA;
catalogs/reference/LICENSE-aiconfigurator.txt): latencies in ms of TensorRT-LLM's CUTLASS fused-MoE op
(``moe_torch_flow_cutlass``) per GPU. Kept: balanced routing; the shapes of catalog MoE models that
``catalogs/reference/moe_large_tokens_aic.csv`` holds for vLLM; each expert split over moe_tp GPUs or spread whole
over moe_ep GPUs (one of them 1, the other 1-8: the layouts a node's TP group runs with ``--ep_size`` or without);
256-16,384 tokens into the op (with tensor-parallel attention every GPU's MoE op takes the step's tokens); the
kernel dtypes the catalog's checkpoints load (bf16, fp8 block, mxfp4 weights with bf16 activations). Needs pandas and
pyarrow (the aiconfigurator venv has them); the planner reads only the CSV.

``--fp8`` (s142) writes the per-tensor fp8 calls instead (``moe_dtype`` "fp8": fp8 weights and activations, one
scale a tensor, the form TensorRT-LLM 0.x's MixtureOfExperts plugin quantizes experts to) with the same selection
(balanced routing, the catalog shapes, one layout of 1-8 GPUs, 256-16,384 tokens) and the gated CUTLASS kernel only
(``moe_torch_flow_cutlass``: three expert matrices, the form the planner times; the table's non-gated calls of a
relu-squared shape are left out): the calls ``planner.engines.kernel_floor.moe_fp8_flop_scale`` fits TensorRT-LLM's
fp8 grouped-GEMM rate multiplier to.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "catalogs" / "reference" / "moe_trtllm_aic.csv"
FP8_OUT = ROOT / "catalogs" / "reference" / "moe_trtllm_fp8_aic.csv"
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
    ap.add_argument("--fp8", action="store_true", help=f"write {FP8_OUT.name} (per-tensor fp8 calls)")
    args = ap.parse_args()
    with SHAPES_FROM.open(newline="") as fh:
        shapes = {(int(r["hidden_size"]), int(r["inter_size"]), int(r["topk"]), int(r["num_experts"])) for r in
                  csv.DictReader(fh)}  # fmt: skip
    if args.fp8:
        write(FP8_OUT, calls(Path(args.venv), ("fp8",), shapes, ("moe_torch_flow_cutlass",)))
    else:
        write(OUT, calls(Path(args.venv), DTYPES, shapes))


def calls(venv: Path, dtypes: tuple[str, ...], shapes: set, kernels: tuple[str, ...] | None = None) -> list[tuple]:
    """Both GPUs' balanced calls of ``dtypes`` at ``shapes`` (hidden, intermediate, top-k, experts), one layout of
    1-8 GPUs, ``TOKENS``; ``kernels``: the kernel sources kept (None: all), as ``COLUMNS`` rows, sorted."""
    rows = []
    for key, gpu in GPUS.items():
        moe = pd.read_parquet(venv / DATA / key / "moe" / "trtllm" / VERSION / "moe_perf.parquet")
        moe = moe[(moe.distribution == "balanced") & moe.moe_dtype.isin(dtypes) & moe.num_tokens.isin(TOKENS)]
        one = (moe.moe_tp_size == 1) | (moe.moe_ep_size == 1)
        moe = moe[one & (moe.moe_tp_size * moe.moe_ep_size <= 8)]
        if kernels is not None:
            moe = moe[moe.kernel_source.isin(kernels)]
        for r in moe.itertuples():
            if (r.hidden_size, r.inter_size, r.topk, r.num_experts) not in shapes:
                continue
            rows.append(
                (gpu, r.kernel_source, r.moe_dtype, r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts)
                + (r.moe_tp_size, r.moe_ep_size, f"{r.latency:.6g}")
            )
    rows.sort(key=lambda x: (x[0], x[2], x[4], x[5], x[6], x[7], x[8], x[9], x[3]))
    return rows


def write(path: Path, rows: list[tuple]) -> None:
    """``rows`` under ``COLUMNS`` to ``path``."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{len(rows)} calls -> {path}")


if __name__ == "__main__":
    main()
