"""The per-MoE-layer time of a decode step, derived from measured kernel latencies (numpy only).

A MoE layer runs vLLM's fused-MoE call where a dense layer runs its MLP: ``fused_experts_impl``
(vllm/model_executor/layers/fused_moe/fused_moe.py, commit 000d1458) launches ``moe_align_block_size``, a grouped
GEMM over w13, the activation, a grouped GEMM over w2 and ``moe_sum``, each with a floor of a few microseconds
whatever it reads. On a decode step's few tokens that floor is far from the roofline of the expert bytes.

Derivation (``moe_floor_points``, ``moe_floor_line``), from aiconfigurator 0.12.0's measured kernel database for
vLLM 0.24.0 on H100 SXM, H200 SXM, B200, B300, GB200 and GB300 (``catalogs/reference/kernel_latency_aic.csv``, written
by ``bench/moe_kernel_extract.py``):

- per GPU and fused-MoE kernel vLLM runs there by default (bf16, fp8 block, gpt-oss mxfp4: Triton on Hopper,
  FlashInfer's TensorRT-LLM-gen kernels on Blackwell) and per token count, least squares of
  latency = floor + expert bytes / rate over calls of 1-8 tokens, expert bytes = tokens x top-k x 3 x hidden x
  (MoE width / TP) x bytes per weight; the call's floor is the median of those intercepts;
- the same for bf16 GEMMs of 1-8 rows (bytes = n x k x 2): a dense GEMM's floor, the median over the GPUs;
- per MoE layer: the call's floor less the two GEMMs' floors of the dense MLP it replaces (the fitted per-step
  overhead already holds a dense layer's floors: it was fitted on dense models).

Assumed the same for every engine on a GPU (SGLang runs the same Triton kernel on Hopper and FlashInfer's on
Blackwell; TensorRT-LLM its own), and a GPU without measurements borrows Hopper's (``kernel_curves.moe_floor_of``).
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

import numpy as np

from planner.catalog import Catalog, default_catalog
from planner.catalog.loader import shipped_catalog_dir
from planner.engines.kernel_curves import MLA_FILE_NAME, read_mla_rows  # noqa: F401  (re-exported)

KERNEL_FILE_NAME = "kernel_latency_aic.csv"  # in the shipped reference data (catalogs/reference)
#: Bytes per stored weight of each kernel dtype in the file (mxfp4: 4 bits + one 8-bit scale per 32 values).
DTYPE_BYTES = {"bfloat16": 2.0, "fp8_block": 1.0, "fp8": 1.0, "w4a16_mxfp4": 4.25 / 8}
#: Dense GEMMs of a dense layer's MLP (gate-up, down) whose floor the per-step overhead already holds.
DENSE_MLP_GEMMS = 2


def read_kernel_rows(path: str | Path | None = None) -> list[dict[str, str]]:
    with Path(path or shipped_catalog_dir() / "reference" / KERNEL_FILE_NAME).open(newline="") as f:
        return list(csv.DictReader(f))


def kernel_bytes(row: dict[str, str]) -> float:
    """Weight bytes one measured call reads: MoE: tokens x top-k experts (distinct) x 3 x hidden x width / TP x
    B/weight; GEMM: n x k x 2 B."""
    if row["op"] == "gemm":
        return float(row["n"]) * float(row["k"]) * 2.0
    experts = float(row["tokens"]) * float(row["topk"])
    width = float(row["inter_size"]) / float(row["tp_size"])
    return experts * 3.0 * float(row["hidden_size"]) * width * DTYPE_BYTES[row["dtype"]]


def floors_s(rows: list[dict[str, str]], op: str, catalog: Catalog | None = None) -> dict[tuple[str, str], float]:
    """Per (GPU, kernel) of ``op``: the intercept of least-squares latency = floor + bytes / (bandwidth x e), s."""
    cat = catalog or default_catalog()
    groups: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in rows:
        if r["op"] == op:
            groups.setdefault((r["gpu"], r["kernel_source"]), []).append(r)
    out = {}
    for (gpu, kernel), g in sorted(groups.items()):
        bandwidth = cat.gpu(gpu).hbm_bandwidth_bytes_per_s
        a = np.array([[1.0, kernel_bytes(r) / bandwidth] for r in g])
        latency_s = np.array([float(r["latency_ms"]) * 1e-3 for r in g])
        out[(gpu, kernel)] = float(np.linalg.lstsq(a, latency_s, rcond=None)[0][0])
    return out


#: The GPUs of the single flat term ``moe_layer_overhead_from_kernels`` (before issue 23 made it per GPU and step size).
HOPPER_MEASURED = ("H100 SXM 80GB", "H200 SXM 141GB")


def moe_layer_overhead_from_kernels(path: str | Path | None = None, catalog: Catalog | None = None) -> float:
    """Seconds per MoE layer per step over the Hopper GPUs: median fused-MoE call floor - 2 x median dense GEMM floor
    (module doc)."""
    rows = [r for r in read_kernel_rows(path) if r["gpu"] in HOPPER_MEASURED]
    moe = statistics.median(floors_s(rows, "moe", catalog).values())
    gemm = statistics.median(floors_s(rows, "gemm", catalog).values())
    return moe - DENSE_MLP_GEMMS * gemm


def moe_floor_points(gpu: str, path: str | Path | None = None, catalog: Catalog | None = None) -> dict[int, float]:
    """Per token count of the measured calls (1, 2, 4, 8): the median over the GPU's fused-MoE kernels of the
    intercept of latency against expert bytes at that count, less the GPU's two dense GEMM floors, seconds."""
    rows = [r for r in read_kernel_rows(path) if r["gpu"] == gpu]
    gemm = statistics.median(floors_s(rows, "gemm", catalog).values())
    counts = sorted({int(r["tokens"]) for r in rows if r["op"] == "moe"})
    return {
        t: statistics.median(
            floors_s([r for r in rows if r["op"] == "moe" and int(r["tokens"]) == t], "moe", catalog).values()
        )
        - DENSE_MLP_GEMMS * gemm
        for t in counts
    }


def moe_floor_line(gpu: str, path: str | Path | None = None, catalog: Catalog | None = None) -> tuple[float, float]:
    """(floor at one token, growth per doubling of the tokens), seconds: least squares of ``moe_floor_points``
    against log2(tokens) (``planner.engines.kernel_curves.MOE_FLOORS_TRITON`` and ``MOE_FLOORS_TRTLLM_GEN`` ship them
    rounded to 0.1 us)."""
    points = moe_floor_points(gpu, path, catalog)
    a = np.array([[1.0, np.log2(t)] for t in points])
    at_one, per_doubling = np.linalg.lstsq(a, np.array(list(points.values())), rcond=None)[0]
    return float(at_one), float(per_doubling)


#: The fused-MoE calls of 256-16,384 tokens ``moe_gemm_halves`` is fitted to, written by
#: ``bench/moe_large_tokens.py --write`` from the same aiconfigurator 0.12.0 vLLM 0.24.0 database.
LARGE_TOKENS_FILE_NAME = "moe_large_tokens_aic.csv"
#: TensorRT-LLM 1.3.0rc20's CUTLASS fused-MoE calls of 256-16,384 tokens at both layouts (moe_tp or moe_ep 1-8),
#: written by ``bench/trtllm_moe_extract.py`` from the same aiconfigurator 0.12.0 database.
TENSORRT_LLM_MOE_FILE_NAME = "moe_trtllm_aic.csv"
#: Kernel dtypes whose math is 8-bit (the fp8 GEMM curve); bf16 and gpt-oss's w4a16 mxfp4 compute in bf16.
FP8_MATH_DTYPES = ("fp8_block", "fp8")


def moe_gemm_halves(
    gpu: str, path: str | Path | None = None, catalog: Catalog | None = None
) -> tuple[float, float, float, float]:
    """(half width ``w0``, half rows ``m0``, median |error| at the dense rate, with both): the expert width per GPU
    and the rows per expert at which vLLM's grouped GEMM runs at half the GPU's dense GEMM FLOP rate, fitted
    together to its measured fused-MoE calls of 256-16,384 tokens.

    Form (``planner.model.operators.expert_layers_time_s``): latency = MoE floor at 8 tokens + max(expert bytes /
    GEMM byte rate, FLOPs / (GEMM FLOP rate x w / (w + w0) x m / (m + m0))), w = MoE width / TP, m = T k / touched
    (the rows each touched expert gets), expert bytes = touched (E (1 - (1 - k/E)^T)) x 3 x hidden x w x
    B/weight, FLOPs = 2 T k 3 hidden w, each over ep where a file's ``ep_size`` spreads whole experts over ep GPUs
    (TensorRT-LLM's calls, ``TENSORRT_LLM_MOE_FILE_NAME``; w = MoE width / moe_tp); the GEMM rates and floor are the GPU's kernel curves
    (``planner.engines.kernel_curves``). ``w0`` and ``m0`` minimise the squared log error (scipy's Nelder-Mead in
    log space from 600 and 10). Why: the Triton kernel tiles each expert's rows (padded to its ``BLOCK_SIZE_M``
    block by ``moe_align_block_size``) and its w columns; a narrow expert gives the GPU few, short tiles (Qwen3-235B
    at TP 4: w = 384), and an expert with few rows computes padding: at 1,024 tokens (64 rows an expert of
    Qwen3-235B) the width alone put the layer 24% under the measured call (``bench/moe_large_tokens.py``).
    """

    from scipy.optimize import minimize

    from planner.engines.kernel_curves import MOE_FLOOR_UNMEASURED, MOE_FLOORS_TRITON, kernel_factors

    cat = catalog or default_catalog()
    g = cat.gpu(gpu)
    f = kernel_factors(g, cat)
    byte_rate = g.hbm_bandwidth_bytes_per_s * f["gemm_bandwidth_efficiency"]
    fp8_rate = g.peak_flop_per_s["fp8"] * f["gemm_fp8_flop_efficiency"]
    bf16_rate = g.peak_flop_per_s["bf16"] * f["gemm_flop_efficiency"]
    at_one, per_doubling = MOE_FLOORS_TRITON.get(gpu, MOE_FLOOR_UNMEASURED)
    floor_s = at_one + 3.0 * per_doubling  # the floor held at 8 tokens (step_overhead_s)
    with Path(path or shipped_catalog_dir() / "reference" / LARGE_TOKENS_FILE_NAME).open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["gpu"] == gpu]
    if not rows:
        raise ValueError(f"no large-token fused-MoE measurements for {gpu}")
    t, h, i, k, e, tp = (np.array([float(r[c]) for r in rows]) for c in
                         ("tokens", "hidden_size", "inter_size", "topk", "num_experts", "tp_size"))  # fmt: skip
    ep = np.array([float(r.get("ep_size") or 1.0) for r in rows])  # whole experts spread over ep GPUs (1: none)
    width = i / tp
    bpp = np.array([DTYPE_BYTES[r["dtype"]] for r in rows])
    rate = np.array([fp8_rate if r["dtype"] in FP8_MATH_DTYPES else bf16_rate for r in rows])
    touched = -e * np.expm1(t * np.log1p(-k / e))
    rows_per_expert = t * k / touched
    memory_s = touched / ep * 3.0 * h * width * bpp / byte_rate
    compute_s = 2.0 * t * k * 3.0 * h * width / ep / rate
    measured_s = np.array([float(r["latency_ms"]) * 1e-3 for r in rows])

    def predicted(w0: float, m0: float) -> np.ndarray:
        slow = (width + w0) / width * (rows_per_expert + m0) / rows_per_expert
        return floor_s + np.maximum(memory_s, compute_s * slow)

    def loss(log_w0_m0: np.ndarray) -> float:
        return float(np.sum(np.log(predicted(*np.exp(log_w0_m0)) / measured_s) ** 2))

    fit = minimize(loss, np.log([600.0, 10.0]), method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-9})
    w0, m0 = (float(x) for x in np.exp(fit.x))
    before = float(np.median(np.abs(predicted(0.0, 0.0) / measured_s - 1.0)))
    after = float(np.median(np.abs(predicted(w0, m0) / measured_s - 1.0)))
    return w0, m0, before, after


#: TensorRT-LLM 1.3.0rc20's per-tensor fp8 CUTLASS fused-MoE calls (the same selection as ``TENSORRT_LLM_MOE_FILE_NAME``,
#: gated kernel only), written by ``bench/trtllm_moe_extract.py --fp8``.
TENSORRT_LLM_MOE_FP8_FILE_NAME = "moe_trtllm_fp8_aic.csv"
#: The multipliers ``moe_fp8_flop_scale`` tries: 0.50-2.49 in steps of 0.01.
FP8_SCALE_GRID = tuple(round(0.5 + 0.01 * i, 2) for i in range(200))


def moe_fp8_flop_scale(
    gpu: str, path: str | Path | None = None, catalog: Catalog | None = None
) -> tuple[float, float, float]:
    """(multiplier, median |error| at 1, with it): TensorRT-LLM's per-tensor fp8 grouped GEMM's FLOP rate over the
    GPU's fp8 GEMM curve (``gemm_fp8_flop_efficiency``), with TensorRT-LLM's halves held
    (``planner.engines.kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS`` / ``_ROWS``).

    Form as ``moe_gemm_halves``: latency = MoE floor at 8 tokens + max(expert bytes / GEMM byte rate, FLOPs / (fp8
    rate x s x w / (w + w0) x m / (m + m0))), each over ep; s is the ``FP8_SCALE_GRID`` value of least median |log
    (predicted / measured)| over the calls (default ``TENSORRT_LLM_MOE_FP8_FILE_NAME``; a median, so the few
    memory-bound calls s cannot move do not pull it). Why: the planner's one fp8 GEMM rate is vLLM's dense fp8
    GEMMs' (909 TFLOP/s on H100, 46% of the fp8 peak); TensorRT-LLM's per-tensor fp8 grouped GEMM computes faster
    (Mixtral-8x7B at TP 1, 16,384 tokens: 8.0 ms, 73% of the peak).
    """
    from planner.engines.kernel_curves import (
        MOE_FLOOR_UNMEASURED,
        MOE_FLOORS_TRITON,
        TENSORRT_LLM_MOE_GEMM_HALF_ROWS,
        TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS,
        kernel_factors,
    )

    cat = catalog or default_catalog()
    g = cat.gpu(gpu)
    f = kernel_factors(g, cat)
    byte_rate = g.hbm_bandwidth_bytes_per_s * f["gemm_bandwidth_efficiency"]
    fp8_rate = g.peak_flop_per_s["fp8"] * f["gemm_fp8_flop_efficiency"]
    at_one, per_doubling = MOE_FLOORS_TRITON.get(gpu, MOE_FLOOR_UNMEASURED)
    floor_s = at_one + 3.0 * per_doubling
    w0, m0 = TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS[gpu], TENSORRT_LLM_MOE_GEMM_HALF_ROWS[gpu]
    with Path(path or shipped_catalog_dir() / "reference" / TENSORRT_LLM_MOE_FP8_FILE_NAME).open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["gpu"] == gpu and r["dtype"] == "fp8"]
    if not rows:
        raise ValueError(f"no per-tensor fp8 fused-MoE measurements for {gpu}")
    t, h, i, k, e, tp, ep = (np.array([float(r[c]) for r in rows]) for c in
                             ("tokens", "hidden_size", "inter_size", "topk", "num_experts", "tp_size", "ep_size"))  # fmt: skip
    width = i / tp
    touched = -e * np.expm1(t * np.log1p(-k / e))
    rows_per_expert = t * k / touched
    memory_s = touched / ep * 3.0 * h * width / byte_rate  # 1 B a weight
    compute_s = (
        2.0 * t * k * 3.0 * h * width / ep / fp8_rate * (width + w0) / width * (rows_per_expert + m0) / rows_per_expert
    )
    measured_s = np.array([float(r["latency_ms"]) * 1e-3 for r in rows])

    def error(scale: float) -> float:
        return float(np.median(np.abs(np.log((floor_s + np.maximum(memory_s, compute_s / scale)) / measured_s))))

    best = min(FP8_SCALE_GRID, key=error)
    return best, error(1.0), error(best)


#: MI300X's measured block-FP8 GEMMs (aiter's tuning tables of pull request 3324), written by ``bench/aiter_extract.py``.
OWN_GEMM_FILE_NAME = "gemm_fp8_block_mi300x_aiter.csv"
#: The smallest weight (n x k) whose GEMMs set the FLOP rate: ``bench/kernel_extract.LAYER_WEIGHT_MIN``'s 4,096 x 4,096.
LAYER_WEIGHT_MIN = 4096 * 4096


def own_gemm_fit(bytes_per_s: float, path: str | Path | None = None) -> tuple[float, float, float, float]:
    """(floor s, fp8 FLOP/s, median |error|, worst |error|) of a GPU's own measured fp8 GEMMs (default: MI300X's,
    ``OWN_GEMM_FILE_NAME``), by ``bench/kernel_extract.py``'s GEMM fit with the byte rate ``bytes_per_s`` given.

    Experiment, not used by the shipped model: it derives ``planner.engines.kernel_curves.AITER_GEMM_MI300X``, which
    nothing applies (docs/history.md: "MI300X's GEMM floor and fp8 rate from its own measured GEMMs", s103);
    only tests/test_amd_published_rates.py calls it (``bench/aiter_extract.py`` writes the table it reads).

    Form: latency = floor + max(bytes / ``bytes_per_s``, 2 m n k / FLOP rate), bytes = n k x 1 B (fp8 weights) +
    m (k + n) x 2 B; least squares of log latency (soft-L1, f_scale 0.1) for floor and rate over every GEMM, then the
    rate refitted on layer-sized weights (n k >= 4,096^2), the floor kept. The byte rate is not fitted: the table's
    fewest rows are 16 and it holds no weight big enough at so few rows to be memory-bound (fitted freely, the rate
    comes out above the 5.3 TB/s datasheet), so the caller passes the published one (MI300X: H100's measured GEMM
    byte rate x the published STREAM ratio, ``planner.engines.kernel_curves.published_stream_ratio``).
    """
    from scipy.optimize import least_squares

    with Path(path or shipped_catalog_dir() / "reference" / OWN_GEMM_FILE_NAME).open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    m, n, k, us = (np.array([float(r[c]) for r in rows]) for c in ("m", "n", "k", "us"))
    bytes_, flop, latency_s = n * k + m * (k + n) * 2.0, 2.0 * m * n * k, us * 1e-6
    layer = n * k >= LAYER_WEIGHT_MIN

    def predicted(floor_s: float, flop_rate: float, rows_: np.ndarray | slice = slice(None)) -> np.ndarray:
        return floor_s + np.maximum(bytes_[rows_] / bytes_per_s, flop[rows_] / flop_rate)

    both = least_squares(
        lambda x: np.log(predicted(*np.exp(x)) / latency_s), np.log([5e-6, 5e14]), loss="soft_l1", f_scale=0.1
    )
    floor_s = float(np.exp(both.x[0]))
    rate = least_squares(
        lambda z: np.log(predicted(floor_s, float(np.exp(z[0])), layer) / latency_s[layer]),
        both.x[1:],
        loss="soft_l1",
        f_scale=0.1,
    )
    flop_rate = float(np.exp(rate.x[0]))
    err = np.abs(predicted(floor_s, flop_rate) / latency_s - 1.0)
    return floor_s, flop_rate, float(np.median(err)), float(np.max(err))


#: The measured DeepSeek-V3.2 decode attention modules ``sparse_mla_token_s`` is derived from, written by
#: ``bench/dsa_kernel_extract.py`` from aiconfigurator 0.12.0's vLLM 0.24.0 ``dsa_generation_module`` tables.
DSA_FILE_NAME = "dsa_decode_aic.csv"
#: The fp8 sparse decode kernel's query-head tile: FlashMLA's sparse fp8 decode "only supports h_q = 64 or 128", so
#: vLLM pads a GPU's heads to it (``FlashMLASparseMetadataBuilder.fp8_decode_padded_heads``,
#: vllm/v1/attention/backends/mla/flashmla_sparse.py, commit 008a0c31).
SPARSE_MLA_HEAD_TILE = 64
#: Batches whose latency difference gives a module's time per token (the kernel's per-token work dominates there).
SPARSE_SLOPE_BATCHES = (256, 1024)
#: Contexts the per-token time is read at: short enough that the indexer's scan of the context (which the operator
#: model times on its own, ``planner.model.memory.decode_attention_bytes``) is a small part.
SPARSE_SLOPE_CONTEXTS = (256, 512, 1024)


def dsa_module_gemm_params(model_name: str = "DeepSeek-V3.2", heads: float = 16.0, catalog: Catalog | None = None):
    """Weights one GPU's DSA attention module multiplies per token at ``heads`` query heads: q_a (hidden x q_lora),
    kv_a (hidden x (kv_lora + rope)), q_b (q_lora x heads x (nope + rope)), the absorbed k/v up-projections
    (heads x kv_lora x (nope + v)), o_proj (heads x v x hidden), the indexer's wq_b (q_lora x index heads x index
    dim), wk (hidden x index dim) and weights_proj (hidden x index heads). DeepSeek-V3.2 at 16 heads: 50,593,792."""
    m = (catalog or default_catalog()).model(model_name)
    a, s, h = m.mla, m.sparse_attention, m.hidden_size
    return (
        h * a.q_lora_rank
        + h * (a.kv_lora_rank + a.qk_rope_head_dim)
        + a.q_lora_rank * heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
        + heads * a.kv_lora_rank * (a.qk_nope_head_dim + a.v_head_dim)
        + heads * a.v_head_dim * h
        + a.q_lora_rank * s.index_n_heads * s.index_head_dim
        + h * s.index_head_dim
        + h * s.index_n_heads
    )


#: The KV format each engine's measured sparse kernel reads: vLLM's ``fp8_ds_mla`` (its "auto" for DeepSeek-V3.2 in
#: 0.11.0 only; from 0.11.1 "auto" is bf16, vllm-project/vllm pull request 27121, and fp8 is ``-k fp8``: the memory
#: default is bf16, ``planner.deploy.VLLM_DSA_AUTO_FP8``). The same tables' vLLM bf16 module is faster (H200, 16
#: heads, batch 1,024: 0.59-0.84 ms at 256-1,024 tokens against 1.34-1.38; 1.30 against 1.56 ms at 4,096): not
#: modelled apart, so a bf16 cache's latents are timed at the fp8 kernel's rate (docs/model.md). TensorRT-LLM's
#: tables hold bf16 only.
SPARSE_MLA_KV = {"vllm": "fp8", "tensorrt-llm": "bfloat16"}


def read_dsa_rows(path: str | Path | None = None) -> list[dict[str, str]]:
    with Path(path or shipped_catalog_dir() / "reference" / DSA_FILE_NAME).open(newline="") as fh:
        return list(csv.DictReader(fh))


def dsa_latency_s(
    rows: list[dict[str, str]], engine: str, op: str, gpu: str, kv: str | None = None
) -> dict[tuple[int, int, int], float]:
    """(heads, context, batch) -> the median measured latency, seconds, of ``engine``'s ``op`` module on ``gpu`` in
    KV format ``kv`` (default its ``SPARSE_MLA_KV`` format; a shape measured twice counts once)."""
    groups: dict[tuple[int, int, int], list[float]] = {}
    kv = kv or SPARSE_MLA_KV[engine]
    for r in rows:
        if (r["engine"], r["op"], r["gpu"], r["kv_cache_dtype"]) == (engine, op, gpu, kv):
            key = (int(r["num_heads"]), int(r["context"]), int(r["batch"]))
            groups.setdefault(key, []).append(float(r["latency_ms"]) * 1e-3)
    return {k: statistics.median(v) for k, v in groups.items()}


def sparse_mla_token_points(
    gpu: str,
    path: str | Path | None = None,
    catalog: Catalog | None = None,
    engine: str = "vllm",
    kv: str | None = None,
) -> dict[tuple[int, int], float]:
    """Per (heads per GPU <= 64, context): seconds per token per layer of ``engine``'s sparse MLA kernel, from its
    measured decode module: (latency at batch 1,024 - at 256) / 768, less the module's projection GEMMs per token at
    the GPU's fp8 GEMM rate (2 x ``dsa_module_gemm_params`` / rate; the operator model times those GEMMs itself)."""
    from planner.engines.kernel_curves import kernel_factors

    cat = catalog or default_catalog()
    g = cat.gpu(gpu)
    fp8_rate = g.peak_flop_per_s["fp8"] * kernel_factors(g, cat)["gemm_fp8_flop_efficiency"]
    lat = dsa_latency_s(read_dsa_rows(path), engine, "generation", gpu, kv)
    lo, hi = SPARSE_SLOPE_BATCHES
    out = {}
    for heads, ctx in sorted({(h, c) for h, c, _ in lat}):
        if heads > SPARSE_MLA_HEAD_TILE or ctx not in SPARSE_SLOPE_CONTEXTS:
            continue
        slope = (lat[(heads, ctx, hi)] - lat[(heads, ctx, lo)]) / (hi - lo)
        out[(heads, ctx)] = slope - 2.0 * dsa_module_gemm_params(heads=heads, catalog=cat) / fp8_rate
    if not out:
        raise ValueError(f"no {engine} DSA decode module measurements for {gpu}")
    return out


def sparse_mla_token_s(
    gpu: str, path: str | Path | None = None, catalog: Catalog | None = None, engine: str = "vllm"
) -> float:
    """Seconds per token per DSA layer of ``engine``'s sparse MLA kernel on ``gpu`` at up to 64 heads per GPU: the
    median of ``sparse_mla_token_points`` (``planner.engines.kernel_curves.SPARSE_MLA_TOKEN_S`` ships it rounded).

    The kernel walks the indexer's whole top-k list (2,048 slots, unused ones invalid) for every query token at 64
    padded heads, so its time per token hardly moves with the heads (8-64) or the context (256-1,024): vLLM's points
    on H200 lie within 1.04-1.13 us, TensorRT-LLM's within a few percent of 1.4 us (tests/test_sparse_mla.py)."""
    return float(statistics.median(sparse_mla_token_points(gpu, path, catalog, engine).values()))


def sparse_mla_bf16_line(
    gpu: str, path: str | Path | None = None, catalog: Catalog | None = None
) -> tuple[float, float]:
    """(seconds per token, seconds per token per attended token) per DSA layer and 64-head tile of vLLM's sparse MLA
    decode over a bf16 cache on ``gpu``: time per token = the first + the second x min(context, top-k).

    Unlike the fp8 kernel (a fixed 2,048-slot walk), vLLM's bf16 module grows with the context up to the top-k
    (H200, 16 heads: 0.32, 0.41, 0.56, 0.87 us at 256, 512, 1,024, 2,048 tokens; 1.01 at 4,096, where the fp8
    module grows alike: the indexer's scan). The slope is the bf16 points' slope over the context less the fp8
    points' (the indexer, which the operator model times itself), median over 8-64 heads at 256-1,024 tokens; the
    intercept the median of each bf16 point less slope x context (``sparse_mla_token_points`` at ``kv="bfloat16"``)."""
    bf = sparse_mla_token_points(gpu, path, catalog, "vllm", "bfloat16")
    f8 = sparse_mla_token_points(gpu, path, catalog, "vllm", "fp8")
    slopes = []
    for heads in sorted({h for h, _ in bf}):
        ctx = np.array(SPARSE_SLOPE_CONTEXTS, dtype=float)
        diff = np.array([bf[(heads, c)] - f8[(heads, c)] for c in SPARSE_SLOPE_CONTEXTS])
        slopes.append(float(np.polyfit(ctx, diff, 1)[0]))
    slope = float(statistics.median(slopes))
    return float(statistics.median(v - slope * c for (_, c), v in bf.items())), slope


def prefill_token_s(gpu: str, engine: str = "tensorrt-llm", heads: int = 16, path: str | Path | None = None) -> float:
    """Seconds per prompt token per layer of ``engine``'s measured DSA prefill module at ``heads`` per GPU: (latency
    of 32 prompts of 256 tokens - of 8) / (24 x 256), projections included (what the test compares with the decode
    kernel's time per token: a prompt token pays about the same)."""
    lat = dsa_latency_s(read_dsa_rows(path), engine, "context", gpu)
    return (lat[(heads, 256, 32)] - lat[(heads, 256, 8)]) / (24 * 256)


def mla_module_time_s(
    gpu: str,
    op: str,
    kv_cache_dtype: str,
    heads: float,
    batch: float,
    context: float,
    path: str | Path | None = None,
) -> float:
    """Seconds one layer's MLA attention module takes on ``gpu`` (vLLM 0.24.0; projections, absorbed attention and
    o_proj together), at ``heads`` query heads per GPU (128 / TP for DeepSeek-V3; the nearest measured head count, 16 /
    32 / 64 / 128, in log scale, clamped to that range):

    - ``op`` "generation" (a decode step of ``batch`` sequences at ``context`` cached tokens):
      floor + per_row x batch + per_row_token x batch x context;
    - ``op`` "context" (a prefill of ``batch`` prompts of ``context`` tokens):
      floor + per_row x batch x context + per_row_token x batch x context^2.

    Fitted on batch 1-1,024 x context 128-8,192 (decode) and 128-32,768 prompt tokens (prefill): median error
    2-8% per fit, worst 5-14% (decode) and up to 63% (prefill's fp8-cache kernels at few long prompts); each row of
    ``catalogs/reference/mla_module_aic.csv`` states its own. Example (tests/test_mla_module.py): H200, 16 heads, fp8
    cache, 1,024 sequences at 128 tokens: 0.386 ms against 0.4015 measured.

    Not used by the time model as a whole module (``planner.model.decode`` times MLA's attention as the other
    operators): wired in twice and not shipped, by rules fixed before measuring (docs/history.md: "The MLA module on
    vLLM profiles only" and "MLA from the measured module tables"). The same rows give MLA's decode attention its FLOP
    rate (``planner.engines.kernel_curves.mla_attention_flop_efficiency``, s180)."""
    rows = [r for r in read_mla_rows(path) if (r["gpu"], r["op"], r["kv_cache_dtype"]) == (gpu, op, kv_cache_dtype)]
    if not rows:
        known = sorted({r["gpu"] for r in read_mla_rows(path)})
        raise ValueError(f"no measured MLA {op} module for {gpu!r} with a {kv_cache_dtype} cache; measured: {known}")
    row = min(rows, key=lambda r: abs(np.log2(float(r["num_heads"])) - np.log2(max(float(heads), 1.0))))
    floor_s, per_row_s = float(row["floor_ms"]) * 1e-3, float(row["per_row_us"]) * 1e-6
    per_token_s = float(row["per_row_token_ns"]) * 1e-9
    if op == "generation":
        return floor_s + per_row_s * batch + per_token_s * batch * context
    return floor_s + per_row_s * batch * context + per_token_s * batch * context * context
