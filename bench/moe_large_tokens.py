"""The operator model's MoE layer time against vLLM's measured fused-MoE calls at 1-16,384 tokens.

    /work/venvs/aic/bin/python bench/moe_large_tokens.py            # H100; needs the aiconfigurator venv (pandas)
    /work/venvs/aic/bin/python bench/moe_large_tokens.py --gpu h200_sxm
    /work/venvs/aic/bin/python bench/moe_large_tokens.py --write   # catalogs/reference/moe_large_tokens_aic.csv

``--write`` keeps the calls of 256, 512, 1,024, 2,048, 4,096 and 16,384 tokens of the three Triton fused-MoE kernels
vLLM runs by default (bf16, fp8 block, gpt-oss mxfp4; balanced routing, no expert parallelism) on both GPUs: the rows
``planner.engines.kernel_floor.moe_gemm_halves`` fits the grouped GEMM's FLOP rate to (its half width and half rows).

Measured: aiconfigurator 0.12.0's vLLM 0.24.0 fused-MoE latencies (``moe/vllm/0.24.0/moe_perf.parquet``, balanced
routing, no expert parallelism; Apache-2.0, catalogs/reference/LICENSE-aiconfigurator.txt) for the MoE shapes of
catalog models (hidden, expert intermediate, top-k, experts, TP). Predicted: ``planner.model.operators``'
``expert_layers_time_s`` for one layer (the touched experts' bytes once, 2 x tokens x top-k x 3 x hidden x
intermediate FLOPs, at the GPU's GEMM curve x the grouped GEMM's fraction) + the per-MoE-layer floor of
``planner.model.decode.step_overhead_s``. Prints predicted / measured - 1 per shape and token count at the dense GEMM
rate and at the grouped GEMM's (w / (w + w0) x m / (m + m0)): where the model over- or under-states the grouped GEMM.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from moe_kernel_extract import HOPPER_GPUS as GPUS  # noqa: E402
from moe_kernel_extract import vllm_moe_calls  # noqa: E402

from planner.catalog import default_catalog  # noqa: E402
from planner.engines.kernel_curves import kernel_factors  # noqa: E402

#: (label, hidden, expert intermediate, top-k, experts, TP, table dtype, weight bytes per parameter)
SHAPES = [
    ("Qwen3-235B-A22B fp8 TP4", 4096, 1536, 8, 128, 4, "fp8_block", 1.0),
    ("Qwen3-30B-A3B bf16 TP1", 2048, 768, 8, 128, 1, "bfloat16", 2.0),
    ("DeepSeek-V3 fp8 TP8", 7168, 2048, 8, 256, 8, "fp8_block", 1.0),
    ("Mixtral-8x7B bf16 TP2", 4096, 14336, 2, 8, 2, "bfloat16", 2.0),
    ("gpt-oss-120b mxfp4 TP1", 2880, 2880, 4, 128, 1, "w4a16_mxfp4", 0.53125),
]
TOKENS = (1, 8, 64, 256, 512, 1024, 2048, 4096, 16384)
#: The token counts ``--write`` keeps: from where every expert is touched and the GEMMs turn compute-bound (256-2,048
#: tokens, the steps of a loaded decode and of a chunked prefill) to many rows per expert.
WRITE_TOKENS = (256, 512, 1024, 2048, 4096, 16384)
OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "moe_large_tokens_aic.csv"
COLUMNS = ("gpu", "kernel_source", "dtype", "tokens", "hidden_size", "inter_size", "topk", "num_experts", "tp_size")
COLUMNS += ("latency_ms",)


def write() -> None:
    """The large-token fused-MoE calls of both GPUs, sorted, to ``OUT``."""
    rows = []
    for key, gpu in GPUS.items():
        m = vllm_moe_calls(key)
        m = m[m.num_tokens.isin(WRITE_TOKENS)]
        for r in m.itertuples():
            rows.append(
                (gpu, r.kernel_source, r.moe_dtype, r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts)
                + (r.moe_tp_size, f"{r.latency:.6g}")
            )
    with OUT.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(sorted(rows, key=lambda r: tuple(str(x) for x in r)))
    print(f"{len(rows)} rows -> {OUT}", file=sys.stderr)


def planner_layer_s(
    f: dict, hidden, inter, k, e, tp, bpp, tokens, fp8: bool, half_width: float, half_rows: float = 0.0
) -> float:
    """One MoE layer as ``expert_layers_time_s`` + the per-layer floor of ``step_overhead_s`` time it (engine
    multipliers 1, as shipped): max(touched x 3 h i x B / (g bw), 2 T k 3 h i / (g peak x w / (w + w0) x m / (m +
    m0))) + floor, w = i / g, m = T k / touched, w0 = ``half_width``, m0 = ``half_rows`` (0, 0: the dense GEMM's
    rate)."""
    params = 3.0 * hidden * inter
    touched = -e * math.expm1(tokens * math.log1p(-k / e))
    bw = f["bw"] * f["gemm_bandwidth_efficiency"]
    peak = f["fp8_peak"] * f["gemm_fp8_flop_efficiency"] if fp8 else f["bf16_peak"] * f["gemm_flop_efficiency"]
    mem = touched * params * bpp / (tp * bw)
    width = inter / tp
    rows = tokens * k / touched
    flop = 2.0 * tokens * k * params / (tp * peak * (width / (width + half_width)) * (rows / (rows + half_rows)))
    floor = f["moe_floor_s"] + f["moe_floor_per_doubling_s"] * math.log2(min(max(tokens, 1), 8))
    return max(mem, flop) + floor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h100_sxm", choices=sorted(GPUS))
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name} and stop")
    args = ap.parse_args()
    if args.write:
        write()
        return
    cat = default_catalog()
    gpu = cat.gpu(GPUS[args.gpu])
    f = kernel_factors(gpu, cat)
    f.update(bw=float(gpu.hbm_bandwidth_bytes_per_s), bf16_peak=float(gpu.peak_flop_per_s["bf16"]))
    f["fp8_peak"] = float(gpu.peak_flop_per_s["fp8"])
    m = vllm_moe_calls(args.gpu, kernels=None)
    print(
        f"{GPUS[args.gpu]}: predicted / measured - 1 per MoE layer at the dense GEMM rate, then at the grouped GEMM's"
    )
    print(f"(w0 = {f['moe_gemm_half_width']:.0f}, m0 = {f['moe_gemm_half_rows']:.1f}); measured us in brackets")
    print(f"{'shape':<26}" + "".join(f"{t:>20}" for t in TOKENS))
    for label, h, i, k, e, tp, dtype, bpp in SHAPES:
        sel = m[(m.hidden_size == h) & (m.inter_size == i) & (m.topk == k) & (m.num_experts == e)]
        sel = sel[(sel.moe_tp_size == tp) & (sel.moe_dtype == dtype)]
        cells = []
        for t in TOKENS:
            got = sel[sel.num_tokens == t]
            if got.empty:
                cells.append(f"{'-':>20}")
                continue
            measured_s = float(got.latency.min()) / 1e3  # the fastest kernel vLLM picks among those measured
            fp8 = dtype.startswith("fp8")
            dense_rate = planner_layer_s(f, h, i, k, e, tp, bpp, t, fp8, 0.0)
            now = planner_layer_s(f, h, i, k, e, tp, bpp, t, fp8, f["moe_gemm_half_width"], f["moe_gemm_half_rows"])
            cells.append(f"{dense_rate / measured_s - 1:+5.0%} {now / measured_s - 1:+5.0%} ({measured_s * 1e6:5.0f})")
        print(f"{label:<26}" + "".join(cells))
    print("(grouped rate: w0 and m0 from planner.engines.kernel_curves, fitted on 256-16,384 tokens of every shape)")


if __name__ == "__main__":
    main()
