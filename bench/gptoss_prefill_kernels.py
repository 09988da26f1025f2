"""gpt-oss's long-prefill kernels: the planner's rates against aiconfigurator's measured ones (s137, issue 21).

    python -m pip download aiconfigurator-core==0.12.0 --no-deps -d /tmp/aic
    unzip -q /tmp/aic/aiconfigurator_core-0.12.0-*.whl 'aiconfigurator_core/systems/data/*' -d /tmp/aic
    PYTHONPATH=. python bench/gptoss_prefill_kernels.py /tmp/aic/aiconfigurator_core/systems/data   # needs pyarrow

Prints, as TFLOP/s (FLOPs as ``planner.model.operators`` counts them: 2 x tokens x top-k x 3 x hidden x expert width
for a fused MoE call; 4 x isl^2 / 2 x heads x head dim for causal prefill attention):

- the MoE kernels at many rows an expert (>= 2,048 tokens, expert width >= 1,024, balanced routing, no expert
  parallelism): A100 Marlin W4A16 (SGLang 0.5.10's ``sglang_marlin_moe``, int4 weights: the Marlin kernel family vLLM
  0.11.0 runs gpt-oss's MXFP4 experts with below SM 9.0; aiconfigurator has no vLLM Marlin MXFP4 table on A100) and
  H100 triton_kernels ``matmul_ogs`` MXFP4 (vLLM 0.24.0, at gpt-oss-120b's shape), against the planner's grouped-GEMM
  rate for gpt-oss-120b at 32,000 tokens on one GPU (``kernel_curves`` x ``grouped_gemm_flop_fraction``);
- causal prefill attention at 16,384 tokens, 64 query / 8 KV heads: A100 vLLM 0.14.0 FlashAttention (head size 128
  only) and H100 vLLM 0.24.0 FA3 at head size 64 (gpt-oss's), against the planner's prefill-attention rate.

No table measures vLLM's ``TRITON_ATTN`` (``kernel_unified_attention_2d``), the attention vLLM 0.10.2-0.11.0 give a
model with sinks on every GPU but SM 9.0.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog import default_catalog  # noqa: E402
from planner.engines.kernel_curves import kernel_factors  # noqa: E402

HIDDEN, WIDTH, TOP_K, EXPERTS, PROMPT = 2880, 2880, 4, 128, 32000  # gpt-oss-120b, one GPU, one 32,000-token prompt


def moe_tflops(d: pd.DataFrame) -> pd.Series:
    width = d.inter_size / d.moe_tp_size
    return 2.0 * d.num_tokens * d.topk * 3.0 * d.hidden_size * width / (d.latency * 1e-3) / 1e12


def planner_moe_tflops(gpu_name: str) -> float:
    cat = default_catalog()
    gpu = cat.gpu(gpu_name)
    f = kernel_factors(gpu, cat)
    touched = -EXPERTS * math.expm1(PROMPT * math.log1p(-TOP_K / EXPERTS))
    rows = PROMPT * TOP_K / touched
    fraction = WIDTH / (WIDTH + f["moe_gemm_half_width"]) * rows / (rows + f["moe_gemm_half_rows"])
    return gpu.peak_flop_per_s["bf16"] * f["gemm_flop_efficiency"] * fraction / 1e12


def planner_attention_tflops(gpu_name: str) -> float:
    cat = default_catalog()
    gpu = cat.gpu(gpu_name)
    return gpu.peak_flop_per_s["bf16"] * kernel_factors(gpu, cat)["prefill_attention_flop_efficiency"] / 1e12


def attention_tflops(path: Path, head_dim: int) -> float:
    c = pd.read_parquet(path)
    c["window_size"] = c.get("window_size", 0)
    c = c[(c.window_size == 0) & (c.kv_cache_dtype == "bfloat16") & (c.attn_dtype == "bfloat16")]
    c = c[(c.batch_size == 1) & (c.isl == 16384) & (c.num_heads == 64) & (c.num_key_value_heads == 8)]
    c = c[c.head_dim == head_dim]
    flop = c.isl * c.isl / 2.0 * c.num_heads * c.head_dim * 4.0
    return float((flop / (c.latency * 1e-3)).max() / 1e12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="aiconfigurator-core 0.12.0's systems data folder (see above)")
    data = parser.parse_args().data
    m = pd.read_parquet(data / "a100_sxm/moe/sglang/0.5.10/moe_perf.parquet")
    m = m[(m.kernel_source == "sglang_marlin_moe") & (m.distribution == "balanced") & (m.moe_ep_size == 1)]
    m = m[(m.num_tokens >= 2048) & (m.inter_size / m.moe_tp_size >= 1024)]
    rates = moe_tflops(m)
    print(
        f"A100 Marlin W4A16 MoE, {len(m)} calls: median {statistics.median(rates):.1f} TFLOP/s "
        f"({rates.min():.1f}-{rates.max():.1f}); planner, gpt-oss-120b 32,000 tokens: "
        f"{planner_moe_tflops('A100 SXM 80GB'):.1f} (vLLM; s137's ceiling at the measured median, not shipped, would give "
        f"{min(planner_moe_tflops('A100 SXM 80GB'), statistics.median(rates)):.1f})"
    )
    h = pd.read_parquet(data / "h100_sxm/moe/vllm/0.24.0/moe_perf.parquet")
    h = h[(h.moe_dtype == "w4a16_mxfp4") & (h.hidden_size == HIDDEN) & (h.num_experts == EXPERTS) & (h.topk == TOP_K)]
    h = h[(h.moe_tp_size == 1) & (h.moe_ep_size == 1) & (h.num_tokens == 16384)]
    for dist, rate in zip(h.distribution, moe_tflops(h), strict=True):
        print(f"H100 triton_kernels MXFP4 MoE, gpt-oss-120b shape, 16,384 tokens, {dist}: {rate:.1f} TFLOP/s")
    print(f"  planner, gpt-oss-120b 32,000 tokens: {planner_moe_tflops('H100 SXM 80GB'):.1f}")
    a100 = attention_tflops(data / "a100_sxm/attention/vllm/0.14.0/context_attention_perf.parquet", 128)
    h100 = attention_tflops(data / "h100_sxm/attention/vllm/0.24.0/context_attention_perf.parquet", 64)
    print(
        f"prefill attention, 16,384 tokens, 64/8 heads: A100 FlashAttention head 128 {a100:.1f} TFLOP/s "
        f"(planner {planner_attention_tflops('A100 SXM 80GB'):.1f}); H100 FA3 head 64 {h100:.1f} "
        f"(planner {planner_attention_tflops('H100 SXM 80GB'):.1f})"
    )


if __name__ == "__main__":
    main()
