"""Extract the measured kernel latencies ``planner.engines.kernel_floor`` derives the per-MoE-layer time from.

    /work/venvs/aic/bin/python bench/moe_kernel_extract.py   # writes catalogs/reference/kernel_latency_aic.csv

Source: aiconfigurator 0.12.0's collected kernel database for vLLM 0.24.0 on H100 SXM, H200 SXM, B200, B300, GB200
and GB300 (``aiconfigurator_core/systems/data/{h100_sxm,h200_sxm,b200_sxm,b300_sxm,gb200,gb300}/{moe,gemm}/vllm/0.24.0/
*_perf.parquet``, Apache-2.0, NVIDIA): latencies in ms of vLLM's fused-MoE call and of its dense GEMMs, measured on
those GPUs. Kept: the fused-MoE kernels vLLM runs by default for unquantized bf16, fp8 block and gpt-oss mxfp4
experts, with balanced routing, no expert parallelism, 1-8 tokens with tokens x top-k at most half the experts (each
token's experts distinct); bf16 GEMMs of 1, 2, 4 or 8 rows with both other sides at least 1024 (an MLP's shapes).
The default kernels, read in vLLM's MoE oracles (vllm-project/vllm ``vllm/model_executor/layers/fused_moe/oracle/``:
``unquantized.py`` at 011fbfd6, ``fp8.py`` at 001a058b, ``gpt_oss_mxfp4.py`` at 80416a17): on Hopper the Triton
fused MoE (``unquantized.py`` moves FlashInfer behind Triton on SM 9.x; ``fp8.py`` moves Triton to the front for
block fp8 without expert parallelism; gpt-oss: OpenAI's Triton kernels), on Blackwell data-centre GPUs FlashInfer's
TensorRT-LLM-gen kernels, the first backend each oracle lists, monolithic before modular. A100: aiconfigurator measured
vLLM's fused MoE there (0.14.0) under power-law routing only, so its calls are SGLang 0.5.10's Triton fused MoE
(``sglang_fused_moe_triton``, adapted from vLLM's; bf16, the A100's only MoE precision without fp8 math, balanced
routing) with vLLM 0.14.0's dense GEMMs. L40S (no Blackwell or Hopper kernels) is left out: its calls are so
bandwidth-bound that the intercept is lost (negative at 1-2 tokens).
Needs pandas and pyarrow (the aiconfigurator venv has them); the planner reads only the CSV.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "kernel_latency_aic.csv"
DATA = "lib/python3.11/site-packages/aiconfigurator_core/systems/data"
VENV = Path("/work/venvs/aic")
#: aiconfigurator's system name -> catalog GPU, and the kernels vLLM runs there by default (module doc).
MOE_KERNELS = (
    "vllm_unquantizedfusedmoe_triton_tritonexperts",
    "vllm_fp8moe_triton_tritonexperts",
    "vllm_gptossmxfp4moe_triton_oaitritonmxfp4expertsmonolithic",
)
BLACKWELL_MOE_KERNELS = (
    "vllm_unquantizedfusedmoe_flashinfer_trtllm_trtllmbf16experts",
    "vllm_fp8moe_flashinfer_trtllm_trtllmfp8expertsmonolithic",
    "vllm_gptossmxfp4moe_flashinfer_trtllm_mxfp4_bf16_trtllmmxfp4expertsmonolithic",
)
#: The Hopper GPUs, whose Triton calls of many tokens ``bench/moe_large_tokens.py`` also reads.
HOPPER_GPUS = {"h100_sxm": "H100 SXM 80GB", "h200_sxm": "H200 SXM 141GB"}
VLLM_024 = ("vllm/0.24.0", "vllm/0.24.0")  # the (fused-MoE, GEMM) tables' engine and release
GPUS = {
    **{key: (gpu, MOE_KERNELS, VLLM_024) for key, gpu in HOPPER_GPUS.items()},
    "b200_sxm": ("B200 180GB", BLACKWELL_MOE_KERNELS, VLLM_024),
    "b300_sxm": ("B300 288GB", BLACKWELL_MOE_KERNELS, VLLM_024),
    "gb200": ("GB200 NVL72", BLACKWELL_MOE_KERNELS, VLLM_024),
    "gb300": ("GB300 NVL72", BLACKWELL_MOE_KERNELS, VLLM_024),
    "a100_sxm": ("A100 SXM 80GB", ("sglang_fused_moe_triton",), ("sglang/0.5.10", "vllm/0.14.0")),
}
COLUMNS = ("op", "gpu", "kernel_source", "dtype", "tokens", "hidden_size", "inter_size", "topk", "num_experts")
COLUMNS += ("tp_size", "n", "k", "latency_ms")


def vllm_moe_calls(
    key: str, kernels: tuple[str, ...] | None = MOE_KERNELS, release: str = "vllm/0.24.0"
) -> pd.DataFrame:
    """vLLM 0.24.0's (or another engine ``release``'s) measured fused-MoE calls on GPU ``key`` (e.g. "h100_sxm") with
    balanced routing and no expert parallelism, of ``kernels`` (None: every kernel measured)."""
    moe = pd.read_parquet(VENV / DATA / key / "moe" / release / "moe_perf.parquet")
    moe = moe[(moe.distribution == "balanced") & (moe.moe_ep_size == 1)]
    return moe if kernels is None else moe[moe.kernel_source.isin(kernels)]


def main() -> None:
    data = VENV / DATA
    rows = []
    for key, (gpu, kernels, (moe_release, gemm_release)) in GPUS.items():
        moe = vllm_moe_calls(key, kernels, moe_release)
        moe = moe[(moe.num_tokens <= 8) & (moe.num_tokens * moe.topk * 2 <= moe.num_experts)]
        for r in moe.itertuples():
            rows.append(
                ("moe", gpu, r.kernel_source, r.moe_dtype, r.num_tokens, r.hidden_size, r.inter_size, r.topk)
                + (r.num_experts, r.moe_tp_size, "", "", f"{r.latency:.6g}")
            )
        gemm = pd.read_parquet(data / key / "gemm" / gemm_release / "gemm_perf.parquet")
        gemm = gemm[(gemm.gemm_dtype == "bfloat16") & gemm.m.isin([1, 2, 4, 8]) & (gemm.n >= 1024) & (gemm.k >= 1024)]
        for r in gemm.itertuples():
            rows.append(
                ("gemm", gpu, r.kernel_source, r.gemm_dtype, r.m, "", "", "", "", "", r.n, r.k, f"{r.latency:.6g}")
            )
    with OUT.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(sorted(rows, key=lambda r: tuple(str(x) for x in r)))
    print(f"{len(rows)} rows -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    main()
