"""Weight-only GEMMs (W4A16, W8A16) against bf16 ones at the same shape, by rows: the ratio table the planner reads.

    python -m pip download aiconfigurator-core==0.12.0 --no-deps -d /tmp/aic
    unzip -q /tmp/aic/aiconfigurator_core-0.12.0-*.whl 'aiconfigurator_core/systems/data/*' -d /tmp/aic
    PYTHONPATH=. python bench/weight_only_gemm.py /tmp/aic/aiconfigurator_core/systems/data            # prints
    PYTHONPATH=. python bench/weight_only_gemm.py /tmp/aic/aiconfigurator_core/systems/data --write    # the CSV
    (needs pandas with pyarrow)

Source: aiconfigurator 0.12.0's collected kernel database (Apache-2.0, NVIDIA; licence text in
catalogs/reference/LICENSE-aiconfigurator.txt), ``a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet``: the only GEMM table
in the package with weight-only calls (``gemm_dtype`` int4_wo and int8_wo: TensorRT-LLM's ``WeightOnlyQuantMatmul``
plugin) beside bf16 ones (torch) at the same (m, n, k). (The others: int8_wo on H100 in SGLang 0.5.6.post2, no int4;
fp8 / fp8_block / nvfp4 W8A8-class calls elsewhere.) Per row count m: the median over the layer-sized shapes
(n, k >= 4,096: ``LAYER_MIN``) of the weight-only latency over the bf16 one, with its quartiles and the number of
shapes. Written, rounded to 3 decimals, to ``catalogs/reference/weight_only_gemm_aic.csv``
(a cross-check: tests/test_weight_only_gemm.py checks it and the fraction against it).

Marlin (the kernel vLLM and SGLang run AWQ / GPTQ / FP8-on-Ampere weights with; the package has no dense Marlin table):
SGLang 0.5.10's Marlin W4A16 fused MoE (``a100_sxm/moe/sglang/0.5.10/moe_perf.parquet``, ``sglang_marlin_moe``,
int4_wo) on A100. Printed: its time over the Triton bf16 fused MoE's at dense-like experts (8 experts, top-2, width
>= 3,584 per GPU, no expert parallelism, balanced routing), by rows per expert (tokens x top-k / experts); and its
achieved FLOP rate over its calls of >= 64 rows per expert (width >= 1,024), whose median over the A100's fitted bf16
GEMM rate is ``planner.engines.kernel_curves.MARLIN_FLOP_FRACTION``. Written: those calls, to
``catalogs/reference/marlin_moe_a100_aic.csv``. The same on H100 SXM and H200 (s147: ``h100_sxm`` / ``h200_sxm``'s
table; ``planner.engines.kernel_curves.MARLIN_HOPPER_FLOP_FRACTIONS``, read only by an ablation), written to
``catalogs/reference/marlin_moe_hopper_aic.csv``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "catalogs" / "reference" / "weight_only_gemm_aic.csv"
TABLE = "a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet"
MARLIN_MOE = "a100_sxm/moe/sglang/0.5.10/moe_perf.parquet"
LAYER_MIN = 4096  # n and k at least this: a layer's GEMM, not a head's
MARLIN_OUT = ROOT / "catalogs" / "reference" / "marlin_moe_a100_aic.csv"
MARLIN_MIN_ROWS = 64  # Marlin's slab: from here on its rate is flat
MARLIN_MIN_WIDTH = 1024
A100_BF16_GEMM_FLOP_PER_S = 2.505e14  # catalogs/reference/kernel_curves_aic.csv, A100 SXM 80GB gemm_bf16_flop_per_s
#: The same Marlin table on Hopper (s147): GPU -> (its system folder, its fitted bf16 GEMM FLOP/s in
#: catalogs/reference/kernel_curves_aic.csv).
MARLIN_HOPPER = {"H100 SXM 80GB": ("h100_sxm", 8.066e14), "H200 SXM 141GB": ("h200_sxm", 7.945e14)}
MARLIN_HOPPER_OUT = ROOT / "catalogs" / "reference" / "marlin_moe_hopper_aic.csv"


def ratio_table(data: Path) -> pd.DataFrame:
    """Per m: median (and quartiles) of int4_wo / bf16 and int8_wo / bf16 over the layer-sized (n, k)."""
    d = pd.read_parquet(data / TABLE)
    p = d.pivot_table(index=["m", "n", "k"], columns="gemm_dtype", values="latency").reset_index()
    p = p[(p.n >= LAYER_MIN) & (p.k >= LAYER_MIN)].dropna(subset=["bfloat16", "int4_wo", "int8_wo"])
    out = []
    for m, g in p.groupby("m"):
        r4, r8 = g.int4_wo / g.bfloat16, g.int8_wo / g.bfloat16
        out.append(
            {
                "rows": int(m),
                "int4_over_bf16": round(float(r4.median()), 3),
                "int4_q25": round(float(r4.quantile(0.25)), 3),
                "int4_q75": round(float(r4.quantile(0.75)), 3),
                "int8_over_bf16": round(float(r8.median()), 3),
                "int8_q25": round(float(r8.quantile(0.25)), 3),
                "int8_q75": round(float(r8.quantile(0.75)), 3),
                "shapes": len(g),
            }
        )
    t = pd.DataFrame(out)
    t.insert(0, "gpu", "A100 SXM 80GB")
    t["source"] = f"aiconfigurator 0.12.0 systems/data/{TABLE} (TensorRT-LLM 1.0.0 WeightOnlyQuantMatmul vs torch bf16)"
    return t


def marlin_moe_ratios(data: Path) -> pd.DataFrame:
    """SGLang 0.5.10's Marlin W4A16 fused MoE over its Triton bf16 fused MoE on A100, by rows per expert."""
    d = pd.read_parquet(data / MARLIN_MOE)
    d = d[(d.distribution == "balanced") & (d.num_experts == 8) & (d.moe_ep_size == 1)]
    d = d[d.inter_size / d.moe_tp_size >= 3584]
    keys = ["num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size"]
    p = d.pivot_table(index=keys, columns="moe_dtype", values="latency").dropna().reset_index()
    p["rows_per_expert"] = p.num_tokens * p.topk / p.num_experts
    p["ratio"] = p.int4_wo / p.bfloat16
    return p.pivot_table(index="rows_per_expert", columns="moe_tp_size", values="ratio", aggfunc="median")


def marlin_calls(data: Path, gpu: str = "A100 SXM 80GB", table: str = MARLIN_MOE) -> pd.DataFrame:
    """SGLang 0.5.10's Marlin W4A16 fused-MoE calls on ``gpu`` (``table``: A100's unless told) at >=
    ``MARLIN_MIN_ROWS`` rows per expert (balanced routing, no expert parallelism, expert width >= ``MARLIN_MIN_WIDTH``
    per GPU), with their achieved FLOP rate."""
    d = pd.read_parquet(data / table)
    d = d[(d.distribution == "balanced") & (d.moe_ep_size == 1) & (d.moe_dtype == "int4_wo")].copy()
    d["width"] = d.inter_size // d.moe_tp_size
    d["rows_per_expert"] = d.num_tokens * d.topk / d.num_experts
    d = d[(d.width >= MARLIN_MIN_WIDTH) & (d.rows_per_expert >= MARLIN_MIN_ROWS)].copy()
    d["latency"] = d.latency.map(lambda x: float(f"{x:.6g}"))  # ms, 6 significant figures
    d["tflops"] = (2.0 * d.num_tokens * d.topk * 3.0 * d.hidden_size * d.width / (d.latency * 1e-3) / 1e12).round(3)
    cols = ["num_tokens", "hidden_size", "inter_size", "topk", "num_experts", "moe_tp_size", "width"]
    out = d[[*cols, "rows_per_expert", "latency", "tflops"]].rename(columns={"latency": "latency_ms"})
    out = out.sort_values(cols).reset_index(drop=True)
    out.insert(0, "gpu", gpu)
    out["source"] = f"aiconfigurator 0.12.0 systems/data/{table} (sglang_marlin_moe int4_wo, balanced)"
    return out


def marlin_hopper_calls(data: Path) -> pd.DataFrame:
    """``marlin_calls`` on each GPU of ``MARLIN_HOPPER`` (the A100 table's folder name swapped for the GPU's)."""
    tables = [
        marlin_calls(data, gpu, MARLIN_MOE.replace("a100_sxm", system)) for gpu, (system, _) in MARLIN_HOPPER.items()
    ]
    return pd.concat(tables, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="aiconfigurator_core/systems/data")
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = parser.parse_args()
    t = ratio_table(args.data)
    print(t.drop(columns=["gpu", "source"]).to_string(index=False))
    print("\nMarlin W4A16 fused MoE / Triton bf16 fused MoE (A100, SGLang 0.5.10), by rows per expert x moe_tp:")
    print(marlin_moe_ratios(args.data).round(2).to_string())
    calls = marlin_calls(args.data)
    median = float(calls.tflops.median())
    print(
        f"\nMarlin W4A16 fused MoE, >= {MARLIN_MIN_ROWS} rows per expert: {len(calls)} calls, median {median:.1f} "
        f"TFLOP/s (quartiles {calls.tflops.quantile(0.25):.1f}-{calls.tflops.quantile(0.75):.1f}); over the A100's "
        f"bf16 GEMM rate {A100_BF16_GEMM_FLOP_PER_S / 1e12:.1f}: {median * 1e12 / A100_BF16_GEMM_FLOP_PER_S:.3f}"
    )
    hopper = marlin_hopper_calls(args.data)
    for gpu, (_, bf16) in MARLIN_HOPPER.items():
        rates = hopper[hopper.gpu == gpu].tflops
        print(
            f"{gpu}: {len(rates)} calls, median {rates.median():.1f} TFLOP/s (quartiles {rates.quantile(0.25):.1f}-"
            f"{rates.quantile(0.75):.1f}); over its bf16 GEMM rate {bf16 / 1e12:.1f}: {rates.median() * 1e12 / bf16:.3f}"
        )
    if args.write:
        t.to_csv(OUT, index=False)
        calls.to_csv(MARLIN_OUT, index=False)
        hopper.to_csv(MARLIN_HOPPER_OUT, index=False)
        print(f"wrote {OUT}, {MARLIN_OUT} and {MARLIN_HOPPER_OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
