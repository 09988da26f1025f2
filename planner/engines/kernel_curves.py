"""Per-GPU kernel curves of the operator model, from measured kernel latencies (numpy-free, read once).

``catalogs/reference/kernel_curves_aic.csv`` (written by ``bench/kernel_extract.py`` from aiconfigurator 0.12.0's
measured vLLM kernel database, Apache-2.0: ``catalogs/reference/LICENSE-aiconfigurator.txt``) holds, per GPU with
measurements, each kernel class's fitted floor and achieved rates: latency = floor + max(bytes / byte rate,
FLOPs / FLOP rate). ``kernel_factors`` turns them into the ``EngineFacts`` fields the model reads: the rates as
fractions of the catalog's datasheet bandwidth and dense peak (bf16; fp8 for GEMMs whose math is 8-bit or
narrower), the floors in seconds, and the all-reduce's fixed latency and achieved share of the NVLink bandwidth
fitted to vLLM's measured custom all-reduce per message size and group size (``allreduce_factors``).

A GPU without measurements borrows the fractions and floors of the nearest measured architecture
(``NEAREST``); ``borrowed_from`` names it, so plans and the ranges can say the curves are not its own.
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

from planner.catalog.loader import shipped_catalog_dir

CURVES_FILE_NAME = "kernel_curves_aic.csv"  # in the shipped reference data (catalogs/reference)
#: The measured GPU whose curves a GPU of each architecture (catalog ``architecture``) borrows when it has none.
#: AMD CDNA and Intel Gaudi have no kernel tables in aiconfigurator: the H100's fractions of the datasheet are used,
#: a what-if the held-out ranges widen for (no held-out figures on those GPUs beyond MI300X's), except where published
#: figures replace them (``PUBLISHED_MATMUL_TFLOPS``, ``PUBLISHED_STREAM_TBPS``) or a catalog ``kernel_rates_from``
#: names a sibling part whose published-scaled fractions stand in (``sibling_of``: MI325X, MI350X, MI355X -> MI300X).
NEAREST = {
    "Ampere": "A100 SXM 80GB",
    "Turing": "A100 SXM 80GB",
    "Hopper": "H100 SXM 80GB",
    "Blackwell": "B200 180GB",
    "Blackwell Ultra": "B300 288GB",
    "Ada Lovelace": "L40S",
}
FALLBACK = "H100 SXM 80GB"
#: Published maximum-achievable matmul rates (bf16, dense, TFLOP/s) measured by one method on both a GPU without kernel
#: tables and the measured GPU its curves borrow: Stas Bekman's MAMF finder (``mamf-finder.py``: torch.matmul over a
#: brute-force sweep of shapes, mean of 100 iterations after 50 warm-up, cache reset between shapes), table "Maximum
#: Achievable Matmul FLOPS comparison table", BF16 (v2), https://github.com/stas00/ml-engineering/blob/master/compute/
#: accelerator/README.md (commit b9e2972, read 2026-12-02): H100 SXM 794.5 (torch 2.7.0+cu126), MI300X 668.4 (torch
#: 2.5.1+ROCm 6.3.42131, PYTORCH_TUNABLEOP_ENABLED=1), MI325X 784.9 (torch 2.6.0+ROCm 6.2.4, 1000 W, TunableOp).
#: A GPU listed here keeps its borrowed curves' shape but its GEMM FLOP rates (bf16 and fp8) become the borrowed
#: GPU's measured rates times (its MAMF / the borrowed GPU's MAMF): MI300X 806.6 x 668.4 / 794.5 = 678.6 TFLOP/s bf16
#: (52% of its 1,307.4 datasheet peak; borrowing H100's fraction of the datasheet said 1,066). fp8 keeps the measured
#: GPU's fp8 / bf16 speed-up on layer-sized weights (H100: 908.8 / 806.6 = 1.13; no MAMF fp8 figure is published for
#: MI300X). Assumed: the ratio holds at every shape (the published figure is the best shape's). Not scaled here:
#: memory bandwidth (``PUBLISHED_STREAM_TBPS`` for MI300X) and attention FLOP rates (no same-method figure found: H100's
#: fractions of the datasheet), MI350X / MI355X (no figure published; they take MI300X's scaled fractions, their
#: catalog ``kernel_rates_from``: ``sibling_of``, trial 27 F2).
PUBLISHED_MATMUL_TFLOPS = {
    "H100 SXM 80GB": 794.5,
    "MI300X": 668.4,
    "MI325X": 784.9,
}
#: Published achievable HBM bandwidth (TB/s), one method on a GPU without kernel tables and the measured GPUs: BabelStream
#: Triad (the HIP and CUDA builds of the same fork, github.com/gitaumark/BabelStream, default array size, fp64) run by
#: Microsoft Azure's AI benchmarking guide on its VMs, results files "ND MI300X v5" (MI300X: Copy 4.15, Mul 4.28, Add
#: 4.13, Triad 4.10, Dot 4.0; ROCm 6.2, commit bf209ab, 2025-03-27), "ND H100 v5" (H100 SXM: 2.90, 2.90, 2.97, 2.97,
#: 3.18), "ND H200 v5" (H200: 4.01, 4.00, 4.19, 4.18, 4.57) and "ND A100 v4" (A100 80GB: 1.61, 1.61, 1.70, 1.70,
#: 1.75), https://github.com/samuel-bohman/AI-benchmarking-guide/tree/2b25b69/Azure_Results (a copy of
#: Azure/AI-benchmarking-guide with its later results; read 2026-12-02). AMD's own MI300X acceptance guide (ROCm
#: documentation, BabelStream section: 8 x MI300X, 2.1 GB arrays, read 2026-12-02) prints Triad 3.95 TB/s and sets
#: 3.885 as the pass mark: within 4% of the Azure figure used. A GPU listed here whose curves are borrowed
#: from another listed GPU reads memory at the borrowed GPU's measured GEMM and decode-attention byte rates x (its
#: Triad / the borrowed GPU's): MI300X 2.886 x 4.10 / 2.97 = 3.98 TB/s for GEMM weights (75% of its 5.3 datasheet;
#: H100's fraction of its own datasheet said 4.57), attention 2.815 x 1.380 = 3.89 (a 16-bit cache; 8-bit 1.826 x
#: 1.380 = 2.52). Checked where both GPUs have kernel tables (tests/test_amd_published_rates.py): H100's GEMM byte
#: rate scaled so gives H200 4.06 TB/s against its measured 3.98 (+2%; the datasheet fraction: +4%) and A100 1.65
#: against 1.47 (+12%; datasheet fraction +19%); its 16-bit-cache attention rate gives H200 3.96 against 3.78 (+5%;
#: before s186 one rate for both cache formats did not follow bandwidth: 2.71 measured, 3.38 scaled). Kept for the
#: checks, used only where curves are borrowed: H200 and A100 have their own.
PUBLISHED_STREAM_TBPS = {
    "A100 SXM 80GB": 1.70,
    "H100 SXM 80GB": 2.97,
    "H200 SXM 141GB": 4.18,
    "MI300X": 4.10,
}
#: Experiment, not used by the shipped model (docs/history.md: "MI300X's GEMM floor and fp8 rate from its own
#: measured GEMMs", s103; nothing in ``planner`` reads it, tests/test_amd_published_rates.py re-derives it).
#: MI300X's own measured GEMMs, not applied: (floor s, fp8 FLOP/s) fitted by ``planner.engines.kernel_floor.own_gemm_fit``
#: (``bench/kernel_extract.py``'s GEMM form and fit, the byte rate held at the published STREAM-scaled one above) to AMD's
#: aiter CK block-scale FP8 GEMMs as its tuner timed them on "AMD MI300X (gfx942, 304 CUs)", AITER 0.1.13.post1 (ROCm/
#: aiter pull request 3324, merged 2026-05-26, commit d6486abc8d; Qwen3-VL-235B / Qwen3-VL-32B / Qwen3.6-27B FP8 shapes
#: at TP 2-8), 5,704 GEMMs of 16-16,384 rows (``catalogs/reference/gemm_fp8_block_mi300x_aiter.csv``,
#: ``bench/aiter_extract.py``; tests/test_amd_published_rates.py re-derives it): floor 15.9 us (borrowed from H100:
#: 6.0), fp8 813.9 TFLOP/s on layer-sized weights (borrowed: MAMF x H100's fp8 / bf16 = 764.6), median |error| 3.8%.
#: The borrowed curve puts that table's 65-512-row GEMMs 37% fast (a 26 MB weight at 16 rows takes 18.0 us, 1.5 TB/s).
#: Applied to every MI300X GEMM it moved vLLM's per-tensor FP8 static batches on MI300X from +5% to -14% (held-out
#: static median 7% -> 14%) and left the MI300X TPOT median at -29%: the floor of aiter's block-scale kernel is not
#: that of the hipBLASLt GEMMs vLLM runs there (docs/history.md), so MI300X keeps the borrowed floor.
AITER_GEMM_MI300X = (15.91e-6, 813.9e12)
#: EngineFacts fields set from the curves, and what each is with the engine's "ideal" (no kernel tables) form.
KERNEL_FIELDS = {
    "gemm_bandwidth_efficiency": 1.0,
    "gemm_flop_efficiency": 1.0,
    "gemm_fp8_flop_efficiency": 1.0,
    "gemm_floor_s": 0.0,
    "attention_bandwidth_efficiency": 1.0,
    "attention_fp8_bandwidth_efficiency": 1.0,
    "attention_flop_efficiency": 1.0,
    "attention_floor_s": 0.0,
    "prefill_attention_flop_efficiency": 1.0,
    "prefill_attention_floor_s": 0.0,
    "prefill_attention_pairs_per_token": 0.0,
    "moe_floor_s": 0.0,
    "moe_floor_per_doubling_s": 0.0,
    "moe_gemm_half_width": 0.0,
    "moe_gemm_half_rows": 0.0,
    "moe_fp8_flop_scale": 1.0,
    "sparse_mla_token_s": 0.0,
    "weight_only_flop_fraction": 0.0,
    "mla_attention_flop_efficiency": 0.0,
}
#: Weight-only dense GEMMs (weights narrower than 16 bits whose math runs at the 16-bit peak: AWQ / GPTQ int4 or int8,
#: FP8 on GPUs without fp8 math) on a GPU whose curves are one of ``WEIGHT_ONLY_GEMM_GPUS`` compute at
#: ``MARLIN_FLOP_FRACTION`` of the bf16 GEMM rate (``planner.model.operators.weight_only_flop_scale``; issue 21, s140,
#: shipped by the rule as switch ``weight-only-gemm``: docs/history.md).
#: The GPUs whose curves (``source_gpu``) the fraction applies to: the one Marlin was measured on. Hopper has no
#: Marlin table (vLLM runs AWQ there with Marlin, W4A16 compressed-tensors with Machete; aiconfigurator's one Hopper
#: weight-only table, SGLang 0.5.6.post2's int8_wo on H100, is another kernel, 0.97-1.6 x bf16's time), so it keeps
#: the bf16 rate. None: every GPU (the ablation ``weight-only-gemm:all``).
WEIGHT_ONLY_GEMM_GPUS: frozenset[str] | None = frozenset({"A100 SXM 80GB"})
#: Marlin's FLOP rate over the dense bf16 GEMM rate on A100: the median achieved rate of SGLang 0.5.10's Marlin
#: W4A16 fused MoE (``sglang_marlin_moe``, int4) over its calls of at least 64 rows per expert (balanced routing, no
#: expert parallelism, expert width >= 1,024 per GPU: 215 calls, median 143.9 TFLOP/s, quartiles 132.6-149.9; FLOPs
#: 2 x tokens x top-k x 3 x hidden x width) in aiconfigurator 0.12.0's A100 SXM table (Apache-2.0), over the A100's
#: fitted bf16 GEMM rate (``kernel_curves_aic.csv``, 250.5 TFLOP/s): 143.9 / 250.5 = 0.574. ``bench/weight_only_gemm.py``
#: writes the calls (``MARLIN_FILE_NAME``); tests/test_weight_only_gemm.py re-derives the fraction. Marlin splits a
#: problem into slabs of at most 64 rows (vLLM ``csrc/quantization/gptq_marlin``: ``max_thread_m_blocks = 4`` blocks
#: of 16 rows), so its rate stays flat beyond: 142.8 TFLOP/s at 64 rows per expert, 148.3 at 1,024, 150.0 at 4,096.
#: TensorRT-LLM 1.0.0's ``WeightOnlyQuantMatmul`` on the same GPU (``WEIGHT_ONLY_FILE_NAME``) is at the same rate at
#: 64 rows (int4 139, int8 138 TFLOP/s) but changes tiles beyond and climbs back to bf16's (int4 213 at 256 rows,
#: bf16 218): the fraction is Marlin's, not every weight-only kernel's.
MARLIN_FLOP_FRACTION = 0.574
MARLIN_FILE_NAME = "marlin_moe_a100_aic.csv"
#: ``bench/weight_only_gemm.py``'s cross-check table: per rows m, the median over layer-sized shapes (n, k >= 4,096)
#: of TensorRT-LLM 1.0.0's int4 and int8 weight-only GEMM latency over the bf16 one at the same (m, n, k) on A100 SXM
#: (aiconfigurator 0.12.0): int4 0.373 at 1 row, 0.454 at 32, 0.675 at 64, 0.899 at 128, 1.045 at 256; int8 0.556,
#: 0.578, 0.664, 0.858, 1.003. Read by the tests only.
WEIGHT_ONLY_FILE_NAME = "weight_only_gemm_aic.csv"
#: The fused-MoE call's floor per MoE layer per step beyond the two GEMMs of a dense MLP, per GPU with measured MoE
#: kernels: (at one token, per doubling of the tokens up to 8), seconds: least squares of the floor against log2 of
#: the tokens over aiconfigurator 0.12.0's vLLM 0.24.0 fused-MoE calls of 1, 2, 4 and 8 tokens, of the kernels vLLM
#: runs by default there (``planner.engines.kernel_floor.moe_floor_line``, re-derived by tests/test_moe_overhead.py;
#: ``bench/moe_kernel_extract.py`` reads the oracles). Hopper, the Triton fused MoE (bf16, fp8 block, gpt-oss mxfp4):
#: H100 27.3, 27.6, 33.1, 35.5 us at 1, 2, 4, 8 tokens; H200 28.6, 27.3, 34.0, 37.9 us.
MOE_FLOORS_TRITON = {
    "H100 SXM 80GB": (26.3e-6, 3.0e-6),
    "H200 SXM 141GB": (26.7e-6, 3.5e-6),
}
#: Blackwell data-centre GPUs (SM 10.x), FlashInfer's TensorRT-LLM-gen fused MoE (bf16, fp8 block, gpt-oss mxfp4 x
#: bf16; monolithic): B200 11.9, 13.8, 23.1, 30.2 us at 1, 2, 4, 8 tokens; B300 11.0, 11.8, 21.6, 28.0; GB200 11.9,
#: 14.2, 23.6, 29.2; GB300 11.8, 12.9, 22.5, 28.9. Those kernels are built for SM 10.x only, so no other GPU borrows
#: these (an RTX PRO 6000 or RTX 5090, SM 12.0, takes the unmeasured stand-in below although its curves are B200's).
MOE_FLOORS_TRTLLM_GEN = {
    "B200 180GB": (10.1e-6, 6.4e-6),
    "B300 288GB": (9.0e-6, 6.1e-6),
    "GB200 NVL72": (10.5e-6, 6.1e-6),
    "GB300 NVL72": (9.9e-6, 6.1e-6),
}
#: EXPERIMENT switch (s191, ``bench/switch_bootstrap.py blackwell-moe-floors``): True times the Blackwell GPUs' MoE
#: floors from their own measured kernels (``MOE_FLOORS_TRTLLM_GEN``); False: the Hopper stand-in, as before s191.
BLACKWELL_MOE_FLOORS = False
#: A100 SXM, SGLang 0.5.10's Triton fused MoE (bf16; aiconfigurator measured vLLM's on A100 under power-law routing
#: only): 29.1, 33.6, 38.6, 50.5 us at 1, 2, 4, 8 tokens. The Ampere GPUs whose curves are A100's would borrow it.
MOE_FLOORS_AMPERE = {"A100 SXM 80GB": (27.6e-6, 6.9e-6)}
#: EXPERIMENT switch (s191, ``bench/switch_bootstrap.py a100-moe-floor``): True times A100 (and the Ampere GPUs that
#: take its curves) at ``MOE_FLOORS_AMPERE``; False: the Hopper stand-in. Off: it passed the ship rule, but it is a
#: Triton kernel's floor and A100 runs MXFP4 and int4 experts on Marlin (docs/history.md, s191).
AMPERE_MOE_FLOOR = False
#: A GPU without MoE measurements takes its curves' source GPU's Triton floor (an MI300X or H20: H100's; an A10 or RTX
#: 3090: A100's) or, where that has none either (L40S, SM 12.0), the Hopper GPUs' mean; TensorRT-LLM and LMDeploy run their own MoE kernels,
#: with the same floor assumed. ``moe_floor_note`` says so, with the spread of the measured floors it stands for
#: (``MOE_FLOOR_SPREADS_S``).
MOE_FLOOR_UNMEASURED = (26.5e-6, 3.25e-6)
#: The spread of the measured floors each stand-in stands for, seconds: the lowest and highest of
#: ``kernel_floor.moe_floor_points`` (the median over a GPU's kernels at 1, 2, 4 and 8 tokens) over the GPUs of each
#: table, rounded outwards to the microsecond (re-derived by tests/test_moe_overhead.py).
MOE_FLOOR_SPREADS_S = {"triton": (27e-6, 38e-6), "ampere": (29e-6, 51e-6), "trtllm-gen": (10e-6, 31e-6)}


def triton_floors() -> dict[str, tuple[float, float]]:
    """The GPUs with a measured Triton fused-MoE floor (which others of their architecture borrow), as the switch
    ``AMPERE_MOE_FLOOR`` stands."""
    return {**MOE_FLOORS_TRITON, **(MOE_FLOORS_AMPERE if AMPERE_MOE_FLOOR else {})}


def moe_floors() -> dict[str, tuple[float, float]]:
    """Every GPU with measured MoE floors, as the switches ``BLACKWELL_MOE_FLOORS`` and ``AMPERE_MOE_FLOOR`` stand."""
    return {**triton_floors(), **(MOE_FLOORS_TRTLLM_GEN if BLACKWELL_MOE_FLOORS else {})}


def moe_floor_of(gpu_name: str, source: str) -> tuple[float, float]:
    """(floor at one token, per doubling) for ``gpu_name`` whose kernel curves are ``source``'s: its own where
    measured, else its source's Triton floor, else ``MOE_FLOOR_UNMEASURED``."""
    return moe_floors().get(gpu_name) or triton_floors().get(source) or MOE_FLOOR_UNMEASURED


#: The expert width per GPU (MoE intermediate / TP) and the rows per touched expert (tokens x top-k / experts touched)
#: at which vLLM's Triton grouped GEMM runs at half the GPU's dense GEMM FLOP rate (``planner.model.operators.
#: expert_layers_time_s``: rate x w / (w + w0) x m / (m + m0)), per GPU with measured MoE calls: least squares in log
#: space, both together, over aiconfigurator 0.12.0's vLLM 0.24.0 fused-MoE calls of 256-16,384 tokens
#: (``planner.engines.kernel_floor.moe_gemm_halves``, re-derived by tests/test_moe_gemm_rate.py;
#: catalogs/reference/moe_large_tokens_aic.csv, 2,178 calls: median |error| of those calls 31% -> 14% on H100, 33% ->
#: 14% on H200, against the dense rates of the layer-sized GEMMs, ``bench/kernel_extract.LAYER_WEIGHT_MIN``; the width
#: alone, fitted at 1,024-16,384 tokens, left 1,024 tokens 17-24% fast on Qwen3-235B and DeepSeek-V3).
#: Qwen3-235B at TP 4 (w = 384) computes at 46% of the dense rate x 56% at 64 rows an expert (1,024 tokens).
MOE_GEMM_HALF_WIDTHS = {
    "H100 SXM 80GB": 454.0,
    "H200 SXM 141GB": 382.0,
}
MOE_GEMM_HALF_ROWS = {
    "H100 SXM 80GB": 50.5,
    "H200 SXM 141GB": 51.9,
}
#: TensorRT-LLM's profiles (``TENSORRT_LLM_MOE_PROFILES``: 1.x, and 0.x since s142) on a GPU below, or on one of its
#: architecture that takes its kernel curves (``tensorrt_llm_moe_source``), take these in place of vLLM's
#: (``planner.catalog.resolve.gpu_numbers``; s126, docs/history.md): (w0, m0) of TensorRT-LLM 1.3.0rc20's CUTLASS fused MoE (``moe_torch_flow_cutlass``), fitted as vLLM's
#: (``planner.engines.kernel_floor.moe_gemm_halves``) to its measured calls at moe_tp or moe_ep 1-8
#: (catalogs/reference/moe_trtllm_aic.csv, ``bench/trtllm_moe_extract.py``, 2,766 calls: median |error| 19% -> 10% on
#: both GPUs; with vLLM's halves instead DeepSeek-V3's moe_tp 8 call of 1,024 tokens on H200 is 0.64 ms against the
#: measured 1.09, with these 0.98).
TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS = {
    "H100 SXM 80GB": 644.6,
    "H200 SXM 141GB": 572.0,
}
TENSORRT_LLM_MOE_GEMM_HALF_ROWS = {
    "H100 SXM 80GB": 81.6,
    "H200 SXM 141GB": 68.7,
}
#: The profiles that take ``TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS`` / ``_ROWS`` (``planner.catalog.resolve.gpu_numbers``):
#: TensorRT-LLM 1.x's PyTorch backend (its CUTLASS fused MoE, the measured kernel) and 0.x's TensorRT engines, whose
#: MixtureOfExperts plugin runs the same ``CutlassMoeFCRunner`` (s142, docs/history.md).
TENSORRT_LLM_MOE_PROFILES = ("tensorrt-llm", "tensorrt-llm-0")
#: TensorRT-LLM's per-tensor fp8 CUTLASS grouped GEMM's FLOP rate over the planner's one fp8 GEMM rate (vLLM's dense
#: fp8 GEMMs, ``gemm_fp8_flop_efficiency``), per GPU, with the halves above held (``planner.engines.kernel_floor.
#: moe_fp8_flop_scale``, re-derived by tests/test_trtllm0_moe.py): the grid value of least median |log error| over
#: aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 per-tensor fp8 gated CUTLASS fused-MoE calls
#: (catalogs/reference/moe_trtllm_fp8_aic.csv, ``bench/trtllm_moe_extract.py --fp8``: balanced routing, the catalog
#: shapes, moe_tp or moe_ep 1-8, 256-16,384 tokens; 534 calls a GPU; s142, docs/history.md): H100 1.60 (median |log
#: error| 0.231 -> 0.090), H200 1.57 (0.255 -> 0.066); 0.46 x 1.60 = 73% of H100's fp8 peak, what its fastest call
#: reaches (Mixtral-8x7B at TP 1, 16,384 tokens). Its block-scaled fp8 calls want no such multiplier (0.90 / 0.95),
#: so it is the per-tensor kernel's. TensorRT-LLM 0.x's FP8 engines quantize MoE experts per tensor (ModelOpt FP8;
#: block-scaled fp8 MoE came with DeepSeek-V3 support, after 0.13), so 0.x's profile takes it (``planner.catalog.resolve.gpu_numbers``;
#: 1.x's fp8 MoE rows are block-scaled DeepSeek runs and keep the fp8 curve).
TENSORRT_LLM_MOE_FP8_FLOP_SCALES = {
    "H100 SXM 80GB": 1.60,
    "H200 SXM 141GB": 1.57,
}
TENSORRT_LLM_MOE_FP8_PROFILES = ("tensorrt-llm-0",)
#: A GPU without such measurements (A100, B200, L40S, MI300X ...): the measured GPUs' mean. Assumed: the tile shapes
#: that make narrow experts and few rows slow are the kernel's on every GPU; not measured beyond Hopper.
MOE_GEMM_HALF_WIDTH_UNMEASURED = 418.0
MOE_GEMM_HALF_ROWS_UNMEASURED = 51.2
#: Seconds per token per DSA layer of each engine's sparse MLA kernel per 64 query heads on one GPU, per GPU with
#: measured DeepSeek-V3.2 attention modules: the median over 8-64 heads and 256-1,024 tokens of context of the decode
#: module's time per token at batch 256-1,024 less its projection GEMMs (``planner.engines.kernel_floor.
#: sparse_mla_token_s``, re-derived by tests/test_sparse_mla.py; aiconfigurator 0.12.0's ``dsa_generation_module``
#: tables, catalogs/reference/dsa_decode_aic.csv): vLLM 0.24.0's FLASHMLA_SPARSE over its default fp8_ds_mla KV
#: (points within 1.04-1.14 us) and TensorRT-LLM 1.3.0rc20's DSA attention over bf16 KV (1.36-1.64 us). Each walks the
#: indexer's whole top-k list (2,048 slots) for every token at 64 padded heads, whatever the heads (8-64) and context.
#: Hopper only: FlashMLA's sparse kernels here are SM90's (Blackwell runs others; A100 and older cannot run the
#: model's sparse attention), so other GPUs take 0. The kernel is compute-bound (H100 and H200, equal in FLOP/s and
#: 1.4x apart in bandwidth, take about the same time), so a Hopper GPU borrowing H100's value (H20, GH200, H100 NVL)
#: scales it by H100's bf16 peak over its own (H20: x 6.7).
SPARSE_MLA_ARCHITECTURE = "Hopper"
SPARSE_MLA_TOKEN_S = {
    "vllm": {"H100 SXM 80GB": 1.10e-6, "H200 SXM 141GB": 1.08e-6},
    "tensorrt-llm": {"H100 SXM 80GB": 1.54e-6, "H200 SXM 141GB": 1.48e-6},
}
#: EXPERIMENT (h-r4, off): vLLM's sparse MLA decode over a 16-bit cache at its own measured module (the same tables'
#: ``bfloat16`` rows), not the fp8_ds_mla kernel's rate: seconds per token per DSA layer and 64-head tile = the
#: first + the second x min(context, top-k) (``planner.engines.kernel_floor.sparse_mla_bf16_line``, rounded; the
#: bf16 module grows with the attended tokens where the fp8 one walks a fixed 2,048 slots). docs/hypotheses/
#: dsa-bf16-decode.md.
DSA_BF16_DECODE = False
SPARSE_MLA_BF16_LINE = {"H100 SXM 80GB": (0.323e-6, 0.370e-9), "H200 SXM 141GB": (0.292e-6, 0.270e-9)}
MOE_FLOOR_MEASURED_TOKENS = 8
#: Engines whose fused MoE is the measured kernel: vLLM's Triton ``fused_experts``; SGLang's ``fused_moe_triton``
#: is adapted from it.
MOE_FLOOR_ENGINES = ("vllm", "sglang")
#: A GPU's fitted all-reduce replaces the catalog latency and the engine's achieved-bandwidth share only where the
#: table's group sizes (2, 4, 8) lie inside its fabric domain and the one-latency-one-rate form follows the table:
#: median |error| over its messages at most this (A100, H100, H200, B200, B300, GB200 NVL72: 3-13%; GB300 NVL72's
#: table 40% and L40S's over PCIe 45% are not used).
ALLREDUCE_FIT_MAX_MEDIAN_ERROR = 0.15


@functools.cache
def read_curves(path: str | None = None) -> dict[str, dict[str, str]]:
    """The curves file's rows by catalog GPU name."""
    with Path(path or shipped_catalog_dir() / "reference" / CURVES_FILE_NAME).open(newline="") as f:
        return {r["gpu"]: r for r in csv.DictReader(f)}


def source_gpu(name: str, architecture: str) -> str:
    """The measured GPU whose curves ``name`` uses: itself when measured, else the nearest architecture's."""
    curves = read_curves()
    return name if name in curves else NEAREST.get(architecture, FALLBACK)


def tensorrt_llm_moe_source(gpu, catalog) -> str | None:
    """The GPU whose TensorRT-LLM 1.x fused-MoE halves (``TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS`` / ``_ROWS``) a catalog
    ``gpu`` takes: the one its kernel curves come from (``source_gpu``: itself, else its architecture's nearest
    measured GPU, as vLLM's halves are taken) where TensorRT-LLM was measured on it and it is of ``gpu``'s
    architecture (H800, H100 PCIe, H20, GH200: H100 SXM's); None elsewhere (A100, MI300X ...: vLLM's halves stay).
    Assumed: the CUTLASS tiles' efficiency at a width and rows is the architecture's, as the Triton kernel's is."""
    src = source_gpu(gpu.name, gpu.architecture)
    if src not in TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS:
        return None
    return src if src == gpu.name or catalog.gpu(src).architecture == gpu.architecture else None


#: EXPERIMENT (s182, off: it failed the ship rule, docs/history.md; switch ``prefill-attention-rising``): True times
#: prefill attention at a rate that rises with the prompt (``bench/kernel_extract.py``'s "rising" fit: each new token
#: costs ``prefill_attention_pairs_per_token`` token pairs more, so the rate is the fitted one x (L / 2) / (L / 2 + s));
#: False (shipped): one rate for every prompt (the "flat" fit). On vLLM's measured kernels the flat rate times 8K-16K
#: prompts 24-42% slow and 128-512-token ones 24-41% fast; the rising fit halves the median error, but end to end the
#: held-out TPOT median and worst and the loaded p99 TTFT median got worse.
PREFILL_ATTENTION_RISING = False


def prefill_attention_factors(row: dict[str, str], peak: float) -> dict[str, float]:
    """A curves row's prefill attention: its FLOP rate over ``peak``, floor and pairs per token, of the rising fit
    (``PREFILL_ATTENTION_RISING``) or the flat one (no pairs per token)."""
    if PREFILL_ATTENTION_RISING:
        return {
            "prefill_attention_flop_efficiency": float(row["prefill_attention_rising_flop_per_s"]) / peak,
            "prefill_attention_floor_s": float(row["prefill_attention_rising_floor_s"]),
            "prefill_attention_pairs_per_token": float(row["prefill_attention_pairs_per_token"]),
        }
    return {
        "prefill_attention_flop_efficiency": float(row["prefill_attention_flop_per_s"]) / peak,
        "prefill_attention_floor_s": float(row["prefill_attention_floor_s"]),
        "prefill_attention_pairs_per_token": 0.0,
    }


#: EXPERIMENT (s186, off): TensorRT-LLM's profiles read their decode attention at the byte rates of TensorRT-LLM's own
#: measured tables (``attention_trtllm_bytes_per_s`` and its fp8 column, fitted by ``bench/kernel_extract.py`` with the
#: vLLM curve's floor and FLOP rate held) instead of vLLM's 16-bit rate for both formats.
TENSORRT_LLM_OWN_ATTENTION = False


def byte_fractions(gpu, catalog, src: str, rates: list[float]) -> list[float]:
    """Measured byte rates (B/s) of ``src``, ``gpu``'s curve GPU, as fractions of ``gpu``'s datasheet bandwidth: over the
    measured GPU's bandwidth, or, where ``gpu`` has a published STREAM figure, ``gpu``'s own rates (rate x its STREAM
    ratio) over its own bandwidth."""
    stream = published_stream_ratio(gpu.name, src)
    if stream is not None:
        own = float(gpu.hbm_bandwidth_bytes_per_s)
        return [rate * stream / own for rate in rates]
    bw = float((gpu if src == gpu.name else catalog.gpu(src)).hbm_bandwidth_bytes_per_s)
    return [rate / bw for rate in rates]


def trtllm_attention_fractions(gpu, catalog) -> tuple[float, float] | None:
    """(16-bit, 8-bit) cache byte rates of TensorRT-LLM's measured decode attention as fractions of ``gpu``'s datasheet
    bandwidth (``byte_fractions``, as ``kernel_factors`` reads vLLM's), or None where it has no table."""
    src = source_gpu(gpu.name, gpu.architecture)
    row = read_curves()[src]
    rates = [row.get(k, "") for k in ("attention_trtllm_bytes_per_s", "attention_trtllm_fp8_bytes_per_s")]
    if not all(rates):
        return None
    bf16, fp8 = byte_fractions(gpu, catalog, src, [float(r) for r in rates])
    return bf16, fp8


def kernel_factors(gpu, catalog) -> dict[str, float]:
    """The ``KERNEL_FIELDS`` of one catalog GPU, plus ``allreduce_factors``' two (NaN where none was measured).

    Rates become fractions of the measured GPU's datasheet figures (its catalog entry: HBM bandwidth, dense bf16
    peak, dense fp8 peak for the fp8 GEMMs), floors stay seconds.
    """
    src = source_gpu(gpu.name, gpu.architecture)
    row = read_curves()[src]
    g = gpu if src == gpu.name else catalog.gpu(src)
    peak = bf16_peak(g)
    gemm = float(row["gemm_bf16_flop_per_s"]) / peak
    fp8_rate, fp8_peak = row["gemm_fp8_flop_per_s"], g.peak_flop_per_s.get("fp8")
    fp8 = float(fp8_rate) / float(fp8_peak) if fp8_rate and fp8_peak else gemm
    published = published_gemm_rates(gpu.name, src, row)
    if published is not None:  # the GPU's own GEMM rates (published matmul benchmarks) over its own peaks, which the
        bf16_rate, fp8_rate_own = published  # model multiplies these fractions by (planner.model.operators.gemm_time_s)
        gemm = bf16_rate / bf16_peak(gpu)
        own_fp8_peak = gpu.peak_flop_per_s.get("fp8")
        fp8 = fp8_rate_own / float(own_fp8_peak) if own_fp8_peak else gemm
    byte_rates = [float(row[k]) for k in ("gemm_bytes_per_s", "attention_bytes_per_s", "attention_fp8_bytes_per_s")]
    gemm_bytes, attention_bytes, attention_fp8_bytes = byte_fractions(gpu, catalog, src, byte_rates)
    sibling = sibling_of(gpu, catalog) if src != gpu.name else None
    if sibling is not None:  # a sibling's published-scaled fractions where this GPU has no figure of its own (F2)
        theirs = kernel_factors(sibling, catalog)
        if published is None:
            gemm, fp8 = theirs["gemm_flop_efficiency"], theirs["gemm_fp8_flop_efficiency"]
        if published_stream_ratio(gpu.name, src) is None:
            gemm_bytes, attention_bytes, attention_fp8_bytes = (
                theirs[k]
                for k in (
                    "gemm_bandwidth_efficiency",
                    "attention_bandwidth_efficiency",
                    "attention_fp8_bandwidth_efficiency",
                )
            )
    moe_floor, moe_floor_per_doubling = moe_floor_of(gpu.name, src)
    return {
        "gemm_bandwidth_efficiency": gemm_bytes,
        "gemm_flop_efficiency": gemm,
        "gemm_fp8_flop_efficiency": fp8,
        "gemm_floor_s": float(row["gemm_floor_s"]),
        "attention_bandwidth_efficiency": attention_bytes,
        "attention_fp8_bandwidth_efficiency": attention_fp8_bytes,
        "attention_flop_efficiency": float(row["attention_flop_per_s"]) / peak,
        "attention_floor_s": float(row["attention_floor_s"]),
        **prefill_attention_factors(row, peak),
        "moe_floor_s": moe_floor,
        "moe_floor_per_doubling_s": moe_floor_per_doubling,
        "moe_gemm_half_width": MOE_GEMM_HALF_WIDTHS.get(src, MOE_GEMM_HALF_WIDTH_UNMEASURED),
        "moe_gemm_half_rows": MOE_GEMM_HALF_ROWS.get(src, MOE_GEMM_HALF_ROWS_UNMEASURED),
        "moe_fp8_flop_scale": 1.0,
        "sparse_mla_token_s": sparse_mla_token_for(gpu, catalog, "vllm"),
        "weight_only_flop_fraction": weight_only_flop_fraction(src),
        "mla_attention_flop_efficiency": mla_attention_flop_efficiency(src) if MLA_DECODE_RATE else 0.0,
        **allreduce_factors(gpu, row, g),
    }


#: The measured MLA attention modules of DeepSeek-V3 (vLLM 0.24.0, block-fp8 GEMMs) fitted to three coefficients per
#: GPU, op, KV format and query heads per GPU by ``bench/mla_kernel_extract.py`` from aiconfigurator 0.12.0's
#: ``mla_{generation,context}_module_perf`` tables (issue 21): the decode attention's FLOP rate of an MLA model
#: (``mla_attention_flop_efficiency``, s180) and ``planner.engines.kernel_floor.mla_module_time_s``.
MLA_FILE_NAME = "mla_module_aic.csv"


@functools.cache
def read_mla_rows(path: str | Path | None = None) -> tuple[dict[str, str], ...]:
    """The rows of ``MLA_FILE_NAME`` (or ``path``), read once per path."""
    with Path(path or shipped_catalog_dir() / "reference" / MLA_FILE_NAME).open(newline="") as fh:
        return tuple(csv.DictReader(fh))


#: MLA's absorbed decode attention at the FLOP rate the measured MLA modules reach (``mla_attention_flop_efficiency``)
#: instead of the decode-attention curve's, which is fitted on GQA/MHA kernels whose FLOPs hardly bind (shipped s180:
#: docs/history.md). False (a bench's ablation only): every model's decode attention at the curve's rate.
MLA_DECODE_RATE = True
#: DeepSeek-V3's MLA (the model ``catalogs/reference/mla_module_aic.csv`` was measured on): absorbed decode attention
#: FLOPs per query head per cached token, 2 x (kv_lora_rank 512 + qk_rope_head_dim 64) for Q.K + 2 x 512 for P.V
MLA_MODULE_FLOP_PER_HEAD_TOKEN = 2.0 * (512 + 64) + 2.0 * 512


@functools.cache
def mla_attention_flop_efficiency(src: str) -> float:
    """MLA's absorbed decode attention FLOP rate on GPU ``src`` (the GPU whose curves a GPU takes) over its dense bf16
    peak: the largest over the measured MLA generation modules with a bf16 cache (one per query-head count, 16-128;
    ``planner.engines.kernel_floor.read_mla_rows``) of FLOP per row-token / the fit's seconds per row-token, where 128
    heads are compute-bound: H100 0.69, H200 0.74, B200 0.63 (vLLM 0.24.0's kernels). A GPU without modules of its
    own takes the largest fraction of its architecture's measured GPUs (GB200: B200's); 0.0 where none was measured."""
    from planner.catalog import default_catalog

    catalog = default_catalog()
    arch = catalog.gpu(src).architecture
    rows = [r for r in read_mla_rows() if (r["op"], r["kv_cache_dtype"]) == ("generation", "bfloat16")]
    own = [r for r in rows if r["gpu"] == src] or [r for r in rows if catalog.gpu(r["gpu"]).architecture == arch]
    rates = [
        MLA_MODULE_FLOP_PER_HEAD_TOKEN
        * float(r["num_heads"])
        / (float(r["per_row_token_ns"]) * 1e-9)
        / bf16_peak(catalog.gpu(r["gpu"]))
        for r in own
    ]
    return max(rates, default=0.0)


def weight_only_flop_fraction(src: str) -> float:
    """``MARLIN_FLOP_FRACTION`` where a GPU's curves are ``src``'s, one of ``WEIGHT_ONLY_GEMM_GPUS`` (None: any); else
    0.0 (weight-only GEMMs at the bf16 rate): ``EngineFacts.weight_only_flop_fraction``."""
    if WEIGHT_ONLY_GEMM_GPUS is not None and src not in WEIGHT_ONLY_GEMM_GPUS:
        return 0.0
    return MARLIN_FLOP_FRACTION


def bf16_peak(gpu) -> float:
    """A catalog GPU's dense 16-bit peak FLOP/s: bf16, else fp16 (older datasheets state only fp16)."""
    return float(gpu.peak_flop_per_s.get("bf16") or gpu.peak_flop_per_s["fp16"])


def published_gemm_rates(name: str, src: str, row: dict[str, str]) -> tuple[float, float] | None:
    """(bf16, fp8) GEMM FLOP/s of a GPU without kernel tables from ``PUBLISHED_MATMUL_TFLOPS``: the measured GPU
    ``src``'s fitted rates (its curves ``row``) x (this GPU's published matmul rate / ``src``'s, one method on both);
    fp8 is ``src``'s fp8 rate scaled alike (``src``'s bf16 rate where it has none). None where either figure is not
    published or the GPU has curves of its own."""
    if name == src or name not in PUBLISHED_MATMUL_TFLOPS or src not in PUBLISHED_MATMUL_TFLOPS:
        return None
    ratio = PUBLISHED_MATMUL_TFLOPS[name] / PUBLISHED_MATMUL_TFLOPS[src]
    bf16 = float(row["gemm_bf16_flop_per_s"])
    fp8 = float(row["gemm_fp8_flop_per_s"]) if row["gemm_fp8_flop_per_s"] else bf16
    return bf16 * ratio, fp8 * ratio


def published_stream_ratio(name: str, src: str) -> float | None:
    """A GPU without kernel tables over the measured GPU ``src`` whose curves it borrows, in published STREAM Triad
    bandwidth (``PUBLISHED_STREAM_TBPS``, one method on both): MI300X / H100 SXM = 4.10 / 2.97 = 1.380. None where
    either is not published or the GPU has curves of its own."""
    if name == src or name not in PUBLISHED_STREAM_TBPS or src not in PUBLISHED_STREAM_TBPS:
        return None
    return PUBLISHED_STREAM_TBPS[name] / PUBLISHED_STREAM_TBPS[src]


def sibling_of(gpu, catalog):
    """The catalog GPU whose kernel rates, as fractions of the datasheet, ``gpu`` takes where it has no published figure
    of its own (its catalog ``kernel_rates_from``: the nearest part of its own vendor with published rates, MI325X and
    MI350X / MI355X -> MI300X; trial 27 F2), or None (its architecture's measured GPU's fractions, ``source_gpu``).
    Refused where it names another vendor's GPU or one that itself borrows a sibling's (one step, so a note can say
    where each rate comes from)."""
    name = getattr(gpu, "kernel_rates_from", "")
    if not name or name == gpu.name:
        return None
    sibling = catalog.gpu(name)
    if sibling.vendor != gpu.vendor or getattr(sibling, "kernel_rates_from", ""):
        raise ValueError(
            f"{gpu.name}'s kernel_rates_from names {sibling.name}: it must be a GPU of the same vendor "
            f"({gpu.vendor}) that takes no other GPU's rates"
        )
    return sibling


def same_die_rate_miss(catalog) -> float:
    """How far a sibling's rate (a fraction of the datasheet) is known to miss on a part with the same compute die and
    other memory: over the pairs of one architecture with a published figure by one method on both
    (``PUBLISHED_MATMUL_TFLOPS``, ``PUBLISHED_STREAM_TBPS``), the largest ratio of their fractions of their datasheets.
    MI325X's matmul over MI300X's: (784.9 / 1,307.4) / (668.4 / 1,307.4) = 1.174; H200's Triad over H100's: (4.18 /
    4.8) / (2.97 / 3.35) = 0.982, 1.018. A part with ``kernel_rates_from`` of its own architecture has its ranges moved
    out by it (``sibling_miss``)."""
    misses = []
    for table, datasheet in (
        (PUBLISHED_MATMUL_TFLOPS, lambda g: bf16_peak(g) / 1e12),
        (PUBLISHED_STREAM_TBPS, lambda g: float(g.hbm_bandwidth_bytes_per_s) / 1e12),
    ):
        gpus = [catalog.gpu(name) for name in table]
        for i, a in enumerate(gpus):
            for b in gpus[i + 1 :]:
                if a.architecture != b.architecture:
                    continue
                ratio = (table[a.name] / datasheet(a)) / (table[b.name] / datasheet(b))
                misses.append(max(ratio, 1 / ratio))
    return max(misses, default=1.0)


def sibling_miss(gpu, catalog) -> tuple[float, str]:
    """(miss factor, the sibling) for a catalog GPU that takes a sibling's kernel rates (``sibling_of``): of the same
    architecture (the same compute die: MI325X), ``same_die_rate_miss`` (1.17); of another (a newer generation:
    MI355X), ``borrowed_rate_miss`` (1.57; no rate of a CDNA 4 part is published to check CDNA 3's against, so the
    widest known miss of a borrowed rate). (1.0, "") for a GPU without a sibling."""
    sibling = sibling_of(gpu, catalog)
    if sibling is None:
        return 1.0, ""
    if sibling.architecture == gpu.architecture:
        return same_die_rate_miss(catalog), sibling.name
    return borrowed_rate_miss(catalog), sibling.name


def borrowed_rate_miss(catalog) -> float:
    """How far a rate borrowed from another vendor's GPU is known to miss: over the GPUs with a published matmul
    figure (``PUBLISHED_MATMUL_TFLOPS``), the largest ratio of the borrowed GEMM rate (the measured GPU's fraction
    of its datasheet x this GPU's peak) to the published-derived one. MI300X: 0.8152 x 1,307.4 / 678.6 = 1.571
    (MI325X: 1.338). The ranges widen by it either way where the curves are another vendor's
    (``planner.accuracy.ranges``): the attention FLOP and MoE rates are still borrowed and may miss as far as the
    GEMM rate did. The other published check, MI300X's memory byte rate (``PUBLISHED_STREAM_TBPS``), missed by less:
    borrowed 0.8615 x 5.3 = 4.57 TB/s over 3.98, 1.15."""
    misses = []
    for name in PUBLISHED_MATMUL_TFLOPS:
        gpu = catalog.gpu(name)
        src = source_gpu(gpu.name, gpu.architecture)
        row = read_curves()[src]
        published = published_gemm_rates(gpu.name, src, row)
        if published is None:
            continue
        src_peak = bf16_peak(catalog.gpu(src))
        own_peak = bf16_peak(gpu)
        borrowed = float(row["gemm_bf16_flop_per_s"]) / src_peak * own_peak
        misses.append(max(borrowed / published[0], published[0] / borrowed))
    return max(misses, default=1.0)


def curves_miss(gpu, catalog) -> tuple[float, str]:
    """(miss factor, the GPU whose curves stand in) for a catalog GPU whose kernel curves are another vendor's
    (``borrowed_rate_miss``); (1.0, "") where they are its own or its own vendor's (NVIDIA parts borrowing an NVIDIA
    architecture's: their datasheet fractions agree within 14%, A100 / H100 / H200 / B200 bf16 GEMM 0.80 / 0.82 /
    0.80 / 0.71)."""
    src = source_gpu(gpu.name, gpu.architecture)
    if src == gpu.name or catalog.gpu(src).vendor == gpu.vendor:
        return 1.0, ""
    return borrowed_rate_miss(catalog), src


def curves_note(name: str, architecture: str) -> str:
    """ "" where the GPU's kernel curves are its own (aiconfigurator's measured kernels); else what stands in, naming
    the sibling part whose rates it takes where it has one (``sibling_of``)."""
    src = source_gpu(name, architecture)
    if src == name:
        return ""
    from planner.catalog import default_catalog

    catalog = default_catalog()
    sibling = sibling_of(catalog.gpu(name), catalog) if name in catalog.gpus else None
    if sibling is not None:
        return sibling_curves_note(name, sibling.name, src)
    if name in PUBLISHED_MATMUL_TFLOPS and src in PUBLISHED_MATMUL_TFLOPS:
        memory = (
            f"its memory byte rates {src}'s x {PUBLISHED_STREAM_TBPS[name]:g} / {PUBLISHED_STREAM_TBPS[src]:g} "
            "(published STREAM Triad TB/s, one method on both), its attention FLOP and MoE rates"
            if published_stream_ratio(name, src)
            else "its memory, attention and MoE rates"
        )
        return (
            f"kernel curves not measured on {name}: its GEMM rates are {src}'s x {PUBLISHED_MATMUL_TFLOPS[name]:g} / "
            f"{PUBLISHED_MATMUL_TFLOPS[src]:g} (published maximum-achievable matmul TFLOP/s, one method on both), "
            f"{memory} {src}'s fractions of the datasheet"
        )
    return f"kernel curves not measured on {name}: its GEMM, memory, attention and MoE rates are {src}'s fractions of the datasheet"


def sibling_curves_note(name: str, sibling: str, src: str) -> str:
    """``curves_note`` for a GPU that takes its sibling's rates (``sibling_of``): which of its rates are its own
    published figures, which the sibling's fractions of the datasheet, and which ``src``'s (the measured GPU whose
    curves both borrow)."""
    own_gemm = name in PUBLISHED_MATMUL_TFLOPS and src in PUBLISHED_MATMUL_TFLOPS
    taken = "memory byte rates" if own_gemm else "GEMM and memory byte rates"
    head = f"kernel curves not measured on {name}: "
    if own_gemm:
        head += (
            f"its GEMM rates are {src}'s x {PUBLISHED_MATMUL_TFLOPS[name]:g} / {PUBLISHED_MATMUL_TFLOPS[src]:g} "
            "(published maximum-achievable matmul TFLOP/s, one method on both), "
        )
    verb = "" if own_gemm else "are "
    return (
        head + f"its {taken} {verb}{sibling}'s fractions of the datasheet (the nearest part of its vendor with "
        f"published rates, its catalog kernel_rates_from), its attention FLOP and MoE rates {src}'s fractions of the "
        "datasheet"
    )


def sparse_mla_token_for(gpu, catalog, kernel: str | None) -> float:
    """``kernel``'s (an engine family of ``SPARSE_MLA_TOKEN_S``; None: none) sparse MLA time per token and 64-head
    tile on catalog GPU ``gpu``: its own, else its curves' source GPU's x that GPU's bf16 peak over its own; 0 off
    Hopper or without a measured kernel."""
    times = SPARSE_MLA_TOKEN_S.get(kernel or "", {})
    src = source_gpu(gpu.name, gpu.architecture)
    if gpu.architecture != SPARSE_MLA_ARCHITECTURE or src not in times:
        return 0.0
    g = gpu if src == gpu.name else catalog.gpu(src)
    peak = bf16_peak(g)
    own = bf16_peak(gpu)
    return times[src] * peak / own


def sparse_mla_bf16_for(gpu, catalog, kernel: str | None) -> tuple[float, float]:
    """``SPARSE_MLA_BF16_LINE``'s (per token, per attended token) for vLLM's kernel on catalog GPU ``gpu`` (its curves'
    source GPU's x that GPU's bf16 peak over its own, as ``sparse_mla_token_for``); (0, 0): the fp8 rate stays
    (``DSA_BF16_DECODE`` off, another engine, off Hopper or unmeasured)."""
    if not DSA_BF16_DECODE or kernel != "vllm":
        return 0.0, 0.0
    src = source_gpu(gpu.name, gpu.architecture)
    if gpu.architecture != SPARSE_MLA_ARCHITECTURE or src not in SPARSE_MLA_BF16_LINE:
        return 0.0, 0.0
    g = gpu if src == gpu.name else catalog.gpu(src)
    scale = bf16_peak(g) / bf16_peak(gpu)
    a, b = SPARSE_MLA_BF16_LINE[src]
    return a * scale, b * scale


def allreduce_factors(gpu, row: dict[str, str], measured_gpu) -> dict[str, float]:
    """``measured_allreduce_latency_s`` and ``measured_interconnect_efficiency`` of one GPU from its curves row.

    One all-reduce of M bytes over g GPUs takes latency + 2 (g-1)/g x M / (fabric bytes/s x efficiency)
    (``planner.model.decode.allreduce_time_s``); ``bench/kernel_extract.py`` fits latency and the bus rate
    (= fabric bytes/s x efficiency) to vLLM's graph-captured custom all-reduce at 2, 4 and 8 GPUs and 1 KiB - 512 MiB
    messages. H100: 4.9 us and 151 GB/s, 34% of 450 GB/s (the engine default assumed 70%): 1 MiB over 8 GPUs takes
    19.4 us measured, 17.1 us fitted, 10.5 us before; 512 MiB over 8 GPUs 4.0 ms measured, 6.2 ms fitted (one rate
    for all sizes: the bus rate rises from ~130 GB/s at 1-16 MiB to ~230 GB/s at 512 MiB).

    A GPU without a table of its own (``measured_gpu`` is the one whose row this is: MI300X, H20, GH200 -> H100 SXM)
    borrows the share of its fabric, as it borrows the GEMM and attention fractions, and keeps its catalog latency
    (MI300X: RCCL's measured 7.44 us). NaN (the catalog latency and the engine's share stand) where the GPU's fabric
    domain is under 8 GPUs or the form misses the table (``ALLREDUCE_FIT_MAX_MEDIAN_ERROR``).
    """
    nan = {"measured_allreduce_latency_s": float("nan"), "measured_interconnect_efficiency": float("nan")}
    if not row.get("allreduce_bus_bytes_per_s") or not gpu.interconnect_bytes_per_s:
        return nan
    domain = gpu.interconnect_domain_gpus or (1 if gpu.interconnect_kind == "pcie" else math.inf)
    if float(row["allreduce_median_abs_error"]) > ALLREDUCE_FIT_MAX_MEDIAN_ERROR or domain < 8:
        return nan
    share = float(row["allreduce_bus_bytes_per_s"]) / float(measured_gpu.interconnect_bytes_per_s)
    own = measured_gpu.name == gpu.name
    return {
        "measured_allreduce_latency_s": float(row["allreduce_latency_s"]) if own else float("nan"),
        "measured_interconnect_efficiency": share,
    }


def moe_floor_note(gpu_name: str, engine_name: str, tokens_per_step: float, architecture: str = "") -> str:
    """ "" where the fused-MoE floor was measured for this GPU, engine and step size; else what stands in for it (the
    GPU's ``architecture`` names the measured GPU it borrows from, ``moe_floor_of``)."""
    gaps = []
    own = gpu_name in moe_floors()
    if not own:
        gaps.append(f"on {gpu_name}")
    if not engine_name.startswith(MOE_FLOOR_ENGINES):
        gaps.append(f"for {engine_name}'s own MoE kernels")
    if tokens_per_step > MOE_FLOOR_MEASURED_TOKENS:
        gaps.append(f"beyond {MOE_FLOOR_MEASURED_TOKENS} tokens per step (held at its 8-token value)")
    if not gaps:
        return ""
    source = gpu_name if own else source_gpu(gpu_name, architecture) if architecture else ""
    if source in MOE_FLOORS_TRTLLM_GEN and own:
        stand_in, (low, high) = f"FlashInfer's fused MoE as vLLM runs it on {source}", MOE_FLOOR_SPREADS_S["trtllm-gen"]
    elif source in MOE_FLOORS_AMPERE and source in triton_floors():
        stand_in, (low, high) = f"SGLang's Triton fused MoE on {source}", MOE_FLOOR_SPREADS_S["ampere"]
    else:
        stand_in, (low, high) = "vLLM's Triton fused MoE on H100/H200", MOE_FLOOR_SPREADS_S["triton"]
    return (
        "MoE kernel floor not measured " + " or ".join(gaps) + f": {stand_in} stands in "
        f"({low * 1e6:.0f}-{high * 1e6:.0f} us per MoE layer over the measured GPUs, kernels and 1-8 tokens)"
    )
