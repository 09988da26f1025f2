"""The operator model's MoE layer at Mixtral-8x7B's shape against TensorRT-LLM's own measured CUTLASS fused MoE (s142).

    /tmp/s126/aic/bin/python bench/trtllm0_moe.py --extract AIC_DATA_DIR /tmp/mixtral_trt_calls.csv   # pandas, pyarrow
    PYTHONPATH=. python bench/trtllm0_moe.py /tmp/mixtral_trt_calls.csv
    PYTHONPATH=. python bench/trtllm0_moe.py --rows     # the held-out 0.13 rows, grouped (about 15 s)

``--extract`` keeps, from aiconfigurator 0.12.0's TensorRT-LLM tables (``AIC_DATA_DIR`` is its package's
``systems/data``; Apache-2.0, catalogs/reference/LICENSE-aiconfigurator.txt), the fused-MoE calls of Mixtral-8x7B's
shape (hidden 4,096, expert intermediate 14,336, top 2 of 8 experts): H100 / H200 / L40S 1.3.0rc20
(``moe_torch_flow_cutlass``: bf16, fp8 per-tensor, fp8 block) and A100 / L40S 1.0.0 (power-law routing only).

The comparison prints, per GPU, weight dtype and moe_tp (moe_ep 1, balanced routing), the measured call and
``bench/moe_large_tokens.planner_layer_s`` / measured - 1 at vLLM's grouped-GEMM halves (``kernel_curves.
MOE_GEMM_HALF_WIDTHS``: what a "tensorrt-llm-0" profile took before s142), at TensorRT-LLM's
(``TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS``) and, for fp8 math, at TensorRT-LLM's with its per-tensor fp8 multiplier
(``TENSORRT_LLM_MOE_FP8_FLOP_SCALES``: what "tensorrt-llm-0" takes since s142). The kernel is the one a TensorRT-LLM
0.13 engine runs: the MixtureOfExperts plugin's ``CutlassMoeFCRunner``, which 1.x's ``torch.ops.trtllm.fused_moe``
builds too (docs/history.md, s142).

Measured (s142): at 16-256 tokens both halves price the same, within -8..+18% of the calls; at 1,024-16,384 tokens
bf16 -12..+16% (vLLM's halves) and -3..+25% (TensorRT-LLM's); fp8 per-tensor +27..+76% and +47..+83%: TensorRT-LLM's
per-tensor fp8 grouped GEMM is faster at Mixtral's wide experts than the planner's one fp8 GEMM rate (46% of H100's
fp8 peak; the call of 16,384 tokens at TP 1 reaches 73%).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Mixtral-8x7B's MoE shape: hidden, expert intermediate, top-k, experts.
SHAPE = (4096, 14336, 2, 8)
#: The tables kept by ``--extract`` (GPU folder / framework version), and the catalog GPU each measures.
TABLES = {
    "h100_sxm/moe/trtllm/1.3.0rc20": "H100 SXM 80GB",
    "h200_sxm/moe/trtllm/1.3.0rc20": "H200 SXM 141GB",
    "l40s/moe/trtllm/1.3.0rc20": "L40S",
    "a100_sxm/moe/trtllm/1.0.0": "A100 SXM 80GB",
    "l40s/moe/trtllm/1.0.0": "L40S",
}
TOKENS = (16, 64, 256, 1024, 2048, 4096, 8192, 16384)
#: Weight bytes per parameter and whether the GEMM math is 8-bit, per table dtype.
DTYPES = {"bfloat16": (2.0, False), "fp8": (1.0, True), "fp8_block": (1.0, True)}


def extract(data_dir: Path, out: Path) -> None:
    """The Mixtral-shaped calls of ``TABLES`` to ``out`` (CSV, one column ``table`` naming the source)."""
    import pandas as pd

    h, i, k, e = SHAPE
    parts = []
    for table in TABLES:
        d = pd.read_parquet(data_dir / table / "moe_perf.parquet")
        d = d[(d.hidden_size == h) & (d.inter_size == i) & (d.topk == k) & (d.num_experts == e)]
        parts.append(d.assign(table=table))
    pd.concat(parts).to_csv(out, index=False)
    print(f"{sum(len(p) for p in parts)} calls -> {out}", file=sys.stderr)


def compare(calls: Path) -> None:
    """Print the comparison (module docstring) from an ``--extract`` file."""
    import csv

    from moe_large_tokens import planner_layer_s

    from planner.catalog import default_catalog
    from planner.engines import kernel_curves as kc

    h, i, k, e = SHAPE
    with calls.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["distribution"] == "balanced" and r["moe_ep_size"] == "1"]
    cat = default_catalog()
    for table, name in TABLES.items():
        mine = [r for r in rows if r["table"] == table]
        if not mine:
            print(f"{table}: no balanced moe_ep 1 calls")
            continue
        gpu = cat.gpu(name)
        f = kc.kernel_factors(gpu, cat)
        f.update(bw=float(gpu.hbm_bandwidth_bytes_per_s), bf16_peak=kc.bf16_peak(gpu))
        f["fp8_peak"] = float(gpu.peak_flop_per_s.get("fp8") or f["bf16_peak"])
        halves = {"vllm": (f["moe_gemm_half_width"], f["moe_gemm_half_rows"])}
        src = kc.tensorrt_llm_moe_source(gpu, cat)
        scale = 1.0
        if src is not None:
            halves["trtllm"] = (kc.TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS[src], kc.TENSORRT_LLM_MOE_GEMM_HALF_ROWS[src])
            scale = kc.TENSORRT_LLM_MOE_FP8_FLOP_SCALES[src]
        scaled = {**f, "gemm_fp8_flop_efficiency": f["gemm_fp8_flop_efficiency"] * scale}
        print(f"{table} ({name}): measured us, then planned / measured - 1 at " + ", ".join(
            f"{label} halves (w0 {w0:.0f}, m0 {m0:.1f})" for label, (w0, m0) in halves.items())
            + (f"; fp8: trtllm halves x {scale:.2f} the fp8 rate" if scale != 1.0 else ""))  # fmt: skip
        for dtype, (bpp, fp8) in DTYPES.items():
            for tp in (1, 2, 4, 8):
                cells = []
                for t in TOKENS:
                    got = [float(r["latency"]) for r in mine if r["moe_dtype"] == dtype and int(r["moe_tp_size"]) == tp
                           and int(r["num_tokens"]) == t]  # fmt: skip
                    if not got:
                        continue
                    measured_s = min(got) / 1e3
                    planned = [planner_layer_s(f, h, i, k, e, tp, bpp, t, fp8, w0, m0) for w0, m0 in halves.values()]
                    if fp8 and dtype == "fp8" and scale != 1.0:  # TensorRT-LLM 0.x's per-tensor fp8 experts
                        planned.append(planner_layer_s(scaled, h, i, k, e, tp, bpp, t, fp8, *halves["trtllm"]))
                    cells.append(
                        f"{t}: {measured_s * 1e6:.0f} " + " ".join(f"{p / measured_s - 1:+.0%}" for p in planned)
                    )
                if cells:
                    print(f"  {dtype:<9} TP {tp}  " + " | ".join(cells))


def rows(source: str = "trtllm-perf-overview-v0.13.0") -> None:
    """The held-out rows of ``source`` (``bench/heldout.py``'s checks: signed error of the output throughput), per
    GPU, model, TP and weight precision: the median and each ISL/OSL pair's error."""
    import collections
    import math
    import statistics

    import heldout as h

    from planner.accuracy import predict

    held = [r for r in h.held_out_rows(predict.load_decode_rows()) if source in r.source_group]
    groups = collections.defaultdict(list)
    for c in h.time_checks(held):
        r = c["row"]
        if not math.isnan(c["planner"]):
            groups[(c["GPU"], r.model.split("/")[-1], r.gpus, r.weight_precision)].append(
                (r.input_len, r.output_len, c["planner"])
            )
    for key in sorted(groups):
        got = sorted(groups[key])
        median = statistics.median(x[2] for x in got)
        print(f"{key} median {median:+.0%} " + " ".join(f"{i}/{o}:{e * 100:+.0f}" for i, o, e in got))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("calls", nargs="?", type=Path, help="an --extract file to compare")
    ap.add_argument("--extract", nargs=2, type=Path, metavar=("AIC_DATA_DIR", "OUT"))
    ap.add_argument("--rows", action="store_true", help="the held-out TensorRT-LLM 0.13 rows, grouped")
    args = ap.parse_args()
    if args.rows:
        rows()
    elif args.extract:
        extract(*args.extract)
    elif args.calls:
        compare(args.calls)
    else:
        ap.error("give an --extract file, or --extract AIC_DATA_DIR OUT")


if __name__ == "__main__":
    main()
