"""A step as the engine runs it: each operator class timed from the GPU's measured kernel curves.

Every kernel takes floor + max(bytes / achieved bandwidth, FLOPs / achieved peak) (``kernel_time_s``), the form
its measurements were fitted to (``planner.engines.kernel_curves``, ``bench/kernel_extract.py``). A step sums its
operators: the linear layers' GEMMs (QKV, O, gate-up, down per layer and the output head; the same rows, so
one shared intensity: the sum of their times is one max over their summed bytes and FLOPs), the MoE layers'
grouped GEMMs over the experts the step's tokens touch, and attention (decode: paged attention over the cache,
MLA in its absorbed form, sliding-window layers up to their window; prefill: causal FlashAttention over the new
tokens). The tensor-parallel all-reduces and the engine's per-step costs are added by ``decode`` and ``prefill``.
The engine's ``bandwidth_efficiency`` and FLOP efficiencies multiply the measured fractions (1: the kernels as
measured).
"""

from __future__ import annotations

import math

import numpy as np

from planner.model import ops
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.roofline import roofline_time_s
from planner.model.rows import row_values

#: GEMM kernels per decoder layer: fused QKV, output projection, fused gate-up, down (a MoE layer's expert GEMMs
#: are the fused-MoE call's, whose floor beyond two GEMMs is ``EngineFacts.moe_layer_overhead_s``).
GEMMS_PER_LAYER = 4
#: vLLM's CUDA-graph capture sizes: 1, 2, 4, then every multiple of 8 up to 512 (``CompilationConfig``
#: ``cudagraph_capture_sizes`` default); a decode batch runs padded to the next one, a larger one runs eagerly.
CUDA_GRAPH_MAX_BATCH = 512


def cuda_graph_batch(batch: ArrayLike) -> ArrayLike:
    """The batch a decode step's kernels run at: 1, 2, 4, then the next multiple of 8 up to 512; beyond: the batch."""
    if type(batch) in (float, int):  # one scenario: Python's arithmetic
        if batch > CUDA_GRAPH_MAX_BATCH or batch != batch:
            return batch
        return 1.0 if batch <= 1 else 2.0 if batch <= 2 else 4.0 if batch <= 4 else 8.0 * math.ceil(batch / 8.0)
    padded = ops.where(
        batch <= 4.0, ops.where(batch <= 1.0, 1.0, ops.where(batch <= 2.0, 2.0, 4.0)), 8.0 * ops.ceil(batch / 8.0)
    )
    return ops.where(batch <= CUDA_GRAPH_MAX_BATCH, padded, batch)


def kernel_time_s(
    bytes_moved: ArrayLike,
    flop: ArrayLike,
    gpus: ArrayLike,
    bandwidth_bytes_per_s: ArrayLike,
    bandwidth_efficiency: ArrayLike,
    peak_flop_per_s: ArrayLike,
    flop_efficiency: ArrayLike,
    overlap: ArrayLike,
) -> ArrayLike:
    """roofline(bytes / (g x bandwidth x eff), FLOPs / (g x peak x eff), overlap): the work split over the group."""
    memory_s = bytes_moved / (gpus * bandwidth_bytes_per_s * bandwidth_efficiency)
    compute_s = flop / (gpus * peak_flop_per_s * flop_efficiency)
    if type(memory_s) is float and type(compute_s) is float:  # one scenario: Python's max (NaN still propagates)
        hi, lo = (memory_s, compute_s) if memory_s >= compute_s else (compute_s, memory_s)
        return hi + (1.0 - overlap) * lo
    if _all_one(overlap):  # the plain max for every scenario (as shipped): 0 x min adds nothing
        return ops.maximum(memory_s, compute_s)
    return roofline_time_s(memory_s, compute_s, overlap)


def any_nonzero(x: ArrayLike) -> bool:
    """Whether ``x`` is nonzero anywhere, read on its per-combination values where it has them (``Rows``)."""
    if type(x) in (float, int):
        return x != 0.0
    return bool(np.any(np.asarray(row_values(x)) != 0.0))


def _all_one(x: ArrayLike) -> bool:
    """Whether ``x`` is 1 everywhere, read on its per-combination values where it has them (``Rows``)."""
    return bool(np.all(np.asarray(row_values(x)) == 1.0))


def dense_weight_bytes(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """Weight bytes of the non-expert linear layers a step streams: quantized part x B/param + kept 16-bit x 2 B."""
    return (model.params_read_per_step - model.params_read_kept_16bit) * precision.weight_bytes_per_param + (
        model.params_read_kept_16bit * precision.kept_bytes_per_param
    )


def eight_bit_math(gpu: GpuFacts) -> ArrayLike:
    """Whether the weights' math peak is above 1.5x the 16-bit one (fp8, int8, fp4 math), where GEMMs take the fp8
    curve; False for 16-bit math, weight-only precisions included."""
    return gpu.peak_flop_per_s > 1.5 * gpu.bf16_peak_flop_per_s


def gemm_time_s(
    gpu: GpuFacts,
    limits: EngineFacts,
    bytes_moved: ArrayLike,
    flop: ArrayLike,
    kernels: ArrayLike,
    flop_efficiency: ArrayLike,
    gpus: ArrayLike,
) -> ArrayLike:
    """GEMMs of one intensity: roofline at the GEMM curve's fractions (x the engine's) + kernels x the GEMM floor.

    The FLOP fraction is the fp8 GEMMs' where the weights' math peak is above the 16-bit peak (fp8, int8, fp4).
    """
    gemm_flop = ops.where(eight_bit_math(gpu), limits.gemm_fp8_flop_efficiency, limits.gemm_flop_efficiency)
    return (
        kernel_time_s(
            bytes_moved,
            flop,
            gpus,
            gpu.bandwidth_bytes_per_s,
            limits.gemm_bandwidth_efficiency * limits.bandwidth_efficiency,
            gpu.peak_flop_per_s,
            gemm_flop * flop_efficiency,
            limits.roofline_overlap,
        )
        + kernels * limits.gemm_floor_s
    )


#: Weights narrower than this many bytes per value whose math runs at the 16-bit peak are weight-only (W8A16, W4A16:
#: AWQ, GPTQ, FP8 on a GPU without fp8 math): ``weight_only_flop_scale``.
WEIGHT_ONLY_BELOW_BYTES = 1.5


def weight_only_flop_scale(
    gpu: GpuFacts,
    model: ModelFacts,
    limits: EngineFacts,
    weight_bytes_per_param: ArrayLike,
    head_skipped: ArrayLike = 0.0,
) -> ArrayLike:
    """The dense GEMMs' FLOP rate over the bf16 GEMM curve's where they are weight-only: read / ((read - kept) / f +
    kept), f = ``limits.weight_only_flop_fraction`` (> 0 where applied), the quantized params at f of the rate and
    the kept 16-bit ones (output head, norms, routers) at the full rate; 1 elsewhere (f 0, weights of 1.5 B or more,
    or math at an 8-bit-or-narrower peak, which ``gemm_time_s`` gives the fp8 curve).

    Source (s140, ``planner.engines.kernel_curves.MARLIN_FLOP_FRACTION``): Marlin, the kernel vLLM and SGLang run
    these weights with below Hopper, dequantizes in its mainloop and splits a problem into slabs of at most 64 rows,
    so its rate flattens from 64 rows on at 143.9 TFLOP/s on A100 (SGLang 0.5.10's Marlin W4A16 fused MoE, 215 calls
    of aiconfigurator 0.12.0), 0.574 of the A100's dense bf16 GEMM rate. Assumed: dense Marlin (W4A16 and W8A16)
    flattens at the fused MoE's rate; TensorRT-LLM's weight-only kernel is at it at 64 rows too (139 TFLOP/s).

    ``head_skipped``: output-head parameters a row does not run on average (``prefill_head_skipped``; kept 16-bit),
    taken off both read and kept."""
    f = limits.weight_only_flop_fraction
    read, kept = model.params_read_per_step, model.params_read_kept_16bit
    narrow = eight_bit_math(gpu)
    if type(f) is float and type(weight_bytes_per_param) is float and type(narrow) is bool:  # one scenario
        applies = f > 0 and weight_bytes_per_param < WEIGHT_ONLY_BELOW_BYTES and not narrow
        return (read - head_skipped) / ((read - kept) / f + kept - head_skipped) if applies else 1.0
    # narrow chosen by where, not masked with ~np.asarray(narrow): that would expand a sweep's per-GPU values to rows
    applies = (f > 0) & (weight_bytes_per_param < WEIGHT_ONLY_BELOW_BYTES)
    scale = (read - head_skipped) / ((read - kept) / ops.where(f > 0, f, 1.0) + kept - head_skipped)
    return ops.where(narrow, 1.0, ops.where(applies, scale, 1.0))


def prefill_head_skipped(model: ModelFacts, tokens: ArrayLike, head_rows: ArrayLike) -> ArrayLike:
    """Output-head parameters a prefill row does not run, on average: head x (1 - head rows / tokens); 0 where
    ``tokens`` is 0.

    A prefill computes logits only at the positions it samples from, one per prompt: vLLM's ``logits_indices``
    (the last scheduled token of each request, ``vllm/v1/worker/gpu_model_runner.py`` ``_prepare_inputs``;
    ``compute_logits`` takes ``hidden_states[logits_indices]``), SGLang's ``LogitsProcessor`` (the last token of
    each extend sequence unless ``extend_return_logprob``). Prompt logprobs, which run the head on every prompt
    token, are not modelled."""
    if type(tokens) in (float, int) and type(head_rows) in (float, int):  # one scenario: Python's arithmetic
        return model.params_output_head * (1.0 - head_rows / tokens) if tokens > 0 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        share = ops.where(tokens > 0, head_rows / tokens, 1.0)
    return model.params_output_head * (1.0 - share)


def linear_layers_time_s(
    gpu: GpuFacts,
    model: ModelFacts,
    limits: EngineFacts,
    dense_bytes: ArrayLike,
    tokens: ArrayLike,
    flop_efficiency: ArrayLike,
    gpus: ArrayLike,
    weight_bytes_per_param: ArrayLike | None = None,
    head_rows: ArrayLike | None = None,
) -> ArrayLike:
    """The dense GEMMs of a step over ``tokens`` rows: ``dense_bytes`` (``dense_weight_bytes``) read once, 2 FLOP per
    parameter per token; 4 GEMMs per layer + the output head, each with the GEMM floor. Weight-only GEMMs compute
    at ``weight_only_flop_scale`` of the rate (``weight_bytes_per_param``: the precision's; None: not weight-only).
    ``head_rows``: the rows the output head runs on (a prefill: one per prompt, ``prefill_head_skipped``); None: all
    ``tokens`` (decode)."""
    skipped = 0.0 if head_rows is None else prefill_head_skipped(model, tokens, head_rows)
    if weight_bytes_per_param is not None and any_nonzero(limits.weight_only_flop_fraction):
        flop_efficiency = flop_efficiency * weight_only_flop_scale(gpu, model, limits, weight_bytes_per_param, skipped)
    return gemm_time_s(
        gpu,
        limits,
        dense_bytes,
        2.0 * tokens * (model.params_read_per_step - skipped),
        GEMMS_PER_LAYER * model.num_layers + 1.0,
        flop_efficiency,
        gpus,
    )


def expert_weight_bytes(model: ModelFacts, precision: PrecisionFacts, touched: ArrayLike) -> ArrayLike:
    """Weight bytes of the routed experts a step streams: MoE layers x params per expert x B/param x experts touched."""
    return model.moe_layers * model.params_per_expert_layer * precision.expert_bytes_per_param * touched


def grouped_gemm_flop_fraction(
    limits: EngineFacts, expert_width: ArrayLike, rows_per_expert: ArrayLike | None = None
) -> ArrayLike:
    """The grouped GEMM's FLOP rate over a dense GEMM's: w / (w + w0) x m / (m + m0), w = one expert's width on one
    GPU (MoE intermediate / TP; whole under expert parallelism), m = the rows each touched expert gets (tokens x
    top-k / experts touched; None: the width term alone), w0, m0 = ``limits.moe_gemm_half_width`` /
    ``moe_gemm_half_rows`` (0: that term is 1; a dense model's w = 0 or m = 0: 1, the dense rate).

    vLLM's Triton fused-MoE kernel tiles each expert's rows, padded to its row block (``moe_align_block_size``), and
    its w columns; narrow experts give short tiles, few rows half-empty ones, so its measured rate at 256-16,384
    tokens is w / (w + ~420) x m / (m + ~51) of a dense GEMM's (``planner.engines.kernel_curves.MOE_GEMM_HALF_WIDTHS``
    and ``MOE_GEMM_HALF_ROWS``, fitted together to aiconfigurator's measured calls).
    """
    w0, m0 = limits.moe_gemm_half_width, limits.moe_gemm_half_rows
    scalar = type(w0) in (float, int) and type(expert_width) in (float, int) and type(m0) in (float, int)
    if scalar and (rows_per_expert is None or type(rows_per_expert) in (float, int)):  # one scenario
        width = expert_width / (expert_width + w0) if expert_width > 0 and w0 > 0 else 1.0
        m = rows_per_expert
        return width * (m / (m + m0) if m is not None and m > 0 and m0 > 0 else 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ops.where((expert_width > 0) & (w0 > 0), expert_width / (expert_width + w0), 1.0)
        if rows_per_expert is None:
            return out
        return out * ops.where((rows_per_expert > 0) & (m0 > 0), rows_per_expert / (rows_per_expert + m0), 1.0)


def expert_layers_time_s(
    gpu: GpuFacts,
    limits: EngineFacts,
    expert_bytes: ArrayLike,
    model: ModelFacts,
    tokens: ArrayLike,
    flop_efficiency: ArrayLike,
    gpus: ArrayLike,
    expert_width: ArrayLike | None = None,
    touched: ArrayLike | None = None,
) -> ArrayLike:
    """The MoE layers' grouped GEMMs: the touched experts' bytes once, 2 x tokens x top-k x params per expert FLOPs
    at the GEMM curve's FLOP rate x ``grouped_gemm_flop_fraction`` (narrow experts and experts with few rows compute
    slower than a dense GEMM).

    Each expert runs at the tokens routed to it (tokens x k / ``touched``, the experts the step touches; None: the
    rows term is left out), so the intensity is that of those rows; the call's kernel floor is the engine's
    per-MoE-layer time (``step_overhead_s``). 0 for dense models. ``expert_width``: one expert's width on one GPU;
    default the tensor-parallel split, MoE width / ``gpus``, or the whole width where ``limits.experts_whole``
    (expert parallelism with tensor-parallel attention; EXPERIMENT s126).
    """
    flop = 2.0 * tokens * model.moe_layers * model.experts_per_token * model.params_per_expert_layer
    width = expert_width
    if width is None:
        whole = limits.experts_whole
        if type(whole) in (float, int) and whole == 0:
            width = model.expert_split_width / gpus
        else:
            width = ops.where(whole > 0, model.expert_split_width, model.expert_split_width / gpus)
    rows_per_expert = None
    if type(touched) in (float, int):  # one scenario (a dense one: 0 experts, the rows term stays 1)
        rows_per_expert = tokens * model.experts_per_token / touched if touched > 0 else 0.0
    elif touched is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            rows_per_expert = ops.where(touched > 0, tokens * model.experts_per_token / touched, 0.0)
    fraction = grouped_gemm_flop_fraction(limits, width, rows_per_expert)
    scale = limits.moe_fp8_flop_scale  # 8-bit math only (gemm_time_s's fp8 rule); 1 but for TensorRT-LLM 0.x (s142)
    if not (type(scale) in (float, int) and scale == 1.0):
        fraction = fraction * ops.where(eight_bit_math(gpu), scale, 1.0)
    kernel = limits.moe_flop_scale  # any math; 1 but on published rows under an experiment (h-tpotcls)
    if not (type(kernel) in (float, int) and kernel == 1.0):
        fraction = fraction * kernel
    ceiling = limits.moe_flop_ceiling  # a kernel whose rate flattens (h-tpotcls ":ceiling"); 0: none
    if not (type(ceiling) in (float, int) and ceiling == 0.0):
        fraction = ops.where(ceiling > 0, ops.minimum(fraction, ceiling), fraction)
    return gemm_time_s(gpu, limits, expert_bytes, flop, 0.0, flop_efficiency * fraction, gpus)


def attention_peak_flop_per_s(gpu: GpuFacts) -> ArrayLike:
    """The dense peak attention runs against: the 16-bit one (bf16, fp16 where none), whatever the weights' math.

    vLLM, SGLang and TensorRT-LLM compute attention in the activations' dtype: an fp8 checkpoint (DeepSeek-V3's
    block-FP8) quantizes the linear layers' inputs, not the attention scores. MLA's prefill (DeepSeek-V3) runs in
    the model dtype unless the KV cache is fp8 and ``use_prefill_query_quantization`` is set (default False, vLLM
    0.33.0 ``vllm/config/attention.py`` line 85; ``determine_prefill_query_data_type``,
    ``vllm/model_executor/layers/attention/mla_attention.py`` line 2357). Only an fp8 KV cache changes other
    models' attention math, and only on some kernels: vLLM 0.33.0's FlashAttention backend then passes an fp8
    query ("queries are quantized in the attention layer", ``vllm/v1/attention/backends/flash_attn.py`` line 1277,
    ``q_descale`` line 1290) where the kernel takes one (FA3), while FA4 on SM90 "consumes native FP16/BF16 Q and
    dequantizes FP8 K/V in-kernel" (line 1155). The planner credits no fp8 attention math (the kernel curves
    measured bf16 attention only): fp8-KV prefills on FA3 may run faster than it says.
    """
    return gpu.bf16_peak_flop_per_s


def prefill_attention_timed_flop(
    model: ModelFacts, limits: EngineFacts, attention_flop: ArrayLike, new_tokens: ArrayLike
) -> ArrayLike:
    """The causal prefill FLOPs the attention curve times: ``attention_flop`` + FLOP per token pair x
    ``new_tokens`` x s summed over the attention layers (sliding-window layers: min(s, window)), s =
    ``limits.prefill_attention_pairs_per_token``.

    The measured kernels run each new token as if it attended to s more tokens (the tiles on the causal diagonal,
    the per-query-tile work), so a prompt of L tokens runs at the fitted rate x (L / 2) / (L / 2 + s): H100's
    594 TFLOP/s at s = 554 is 237 TFLOP/s at 736 tokens and 556 TFLOP/s at 16K (``bench/kernel_extract.py``).
    The extra is time, not FLOPs: the step's reported FLOPs keep the causal count."""
    s = limits.prefill_attention_pairs_per_token
    if type(s) is float and s == 0.0:  # no tables (or the flat fit): the causal FLOPs as they are
        return attention_flop
    layers = model.full_attention_layers * s + model.sliding_window_layers * ops.minimum(s, model.sliding_window)
    return attention_flop + model.prefill_attention_flop_per_token_pair_per_layer * new_tokens * layers


def attention_time_s(
    gpu: GpuFacts,
    model: ModelFacts,
    limits: EngineFacts,
    kv_bytes: ArrayLike,
    flop: ArrayLike,
    flop_efficiency: ArrayLike,
    floor_s: ArrayLike,
    gpus: ArrayLike,
    kv_bytes_per_element: ArrayLike = 2.0,
) -> ArrayLike:
    """Attention: roofline(KV bytes / (g bw x attention curve's fraction), FLOPs / (g 16-bit peak x
    ``flop_efficiency``)) + layers x ``floor_s`` (one attention kernel per layer).

    The curve's byte fraction is its 8-bit cache's where the KV cache stores a byte or less per value
    (``kv_bytes_per_element``) and the model's attention is not MLA: Hopper's FlashAttention-3 reads an fp8 cache at
    about half a bf16 cache's bytes/s (aiconfigurator's H200 tables: 1.9 against 3.8 TB/s), so an fp8 cache halves
    the bytes but not the time. MLA's latent cache runs other kernels, near the 16-bit fraction in both formats: the
    16-bit fraction (vLLM's measured MLA modules read bf16 latents at 4.4 TB/s on H200, fp8 at 3.6:
    catalogs/reference/mla_module_aic.csv's per-row-token terms over the latent's bytes).

    Attention's math is 16-bit whatever the weights are (``attention_peak_flop_per_s``): fp8 weights make the GEMMs
    fp8, not Q K^T and P V, and the measured attention curves are fractions of the bf16 peak.

    Decode (paged attention): KV bytes read = every sequence's cache at its context (sliding-window layers: the
    window; MLA: the latent), FLOPs = MLA's absorbed form over the latent, else 4 x heads x head dim per cached
    token, at the decode-attention curve. Prefill (causal FlashAttention over the new tokens; MLA as plain
    multi-head attention): KV bytes written, FLOPs of the causal prompt, at the prefill-attention curve.
    """
    byte_fraction = limits.attention_bandwidth_efficiency
    if not (type(kv_bytes_per_element) is float and kv_bytes_per_element > 1.0):  # a 16-bit cache: the 16-bit rate
        eight_bit = (kv_bytes_per_element <= 1.0) & (model.mla_attention == 0)
        byte_fraction = ops.where(eight_bit, limits.attention_fp8_bandwidth_efficiency, byte_fraction)
    return (
        kernel_time_s(
            kv_bytes,
            flop,
            gpus,
            gpu.bandwidth_bytes_per_s,
            byte_fraction * limits.bandwidth_efficiency,
            attention_peak_flop_per_s(gpu),
            flop_efficiency,
            limits.roofline_overlap,
        )
        + model.num_layers * floor_s
    )


def decode_kv_read_factor(model: ModelFacts, limits: EngineFacts, attention_gpus: ArrayLike) -> ArrayLike:
    """KV bytes a decode attention kernel reads over those of one read per KV head: 1, or, where the engine's kernel
    reads a KV head once per query head (``limits.decode_kv_reads_per_query_head``), a GPU's query heads over its
    KV heads, max(1, heads / max(g, KV heads)) (``attention_gpus`` g: the GPUs the heads are split over).

    TensorRT-LLM before 0.7 ran GQA's generation step in the masked multi-head attention kernel, one thread block
    per query head; 0.7's GQA-aware kernels and then XQA read each KV head once for its group
    (``planner.engines.profiles.TENSORRT_LLM_XQA_VERSION``). Assumed: no reuse of a KV head's blocks across its
    query heads in L2 (the 0.5/0.6 Llama-2-70B rows then sit 5-10% below the same sources' Llama-2-7B/13B rows,
    what some reuse would give). Not for MLA (no such kernel predates it).
    """
    per_head = model.num_attention_heads / ops.maximum(attention_gpus, model.num_kv_heads)
    return 1.0 + limits.decode_kv_reads_per_query_head * (ops.maximum(per_head, 1.0) - 1.0)


#: The fp8 sparse MLA decode kernel's query-head tile: FlashMLA's sparse fp8 decode "only supports h_q = 64 or 128",
#: so vLLM pads a GPU's heads to a multiple of 64 (``FlashMLASparseMetadataBuilder.fp8_decode_padded_heads``,
#: vllm/v1/attention/backends/mla/flashmla_sparse.py, commit 008a0c31).
SPARSE_MLA_HEAD_TILE = 64.0


def sparse_mla_applies(model: ModelFacts, limits: EngineFacts, heads_gpus: ArrayLike, prefill: bool) -> ArrayLike:
    """1 where a step's DSA latents go through the engine's sparse MLA kernel (``sparse_mla_time_s``), else 0:
    a DSA model (a finite top-k) on an engine and GPU with the kernel's measured time; a prefill only when a GPU
    holds fewer query heads (heads / ``heads_gpus``) than ``limits.sparse_mla_prefill_max_heads``. 0.0 (a float) for
    every scenario of a dense-attention model or an engine without the kernel."""
    topk, token_s = model.attended_tokens_max, limits.sparse_mla_token_s
    if (type(topk) is float and topk == math.inf) or (type(token_s) is float and token_s == 0.0):
        return 0.0
    applies = (topk < math.inf) & (token_s > 0.0)
    if prefill:
        applies = applies & (model.num_attention_heads / heads_gpus < limits.sparse_mla_prefill_max_heads)
    return ops.where(applies, 1.0, 0.0)


def sparse_mla_time_s(
    model: ModelFacts,
    limits: EngineFacts,
    tokens: ArrayLike,
    heads_gpus: ArrayLike,
    applies: ArrayLike,
    kv_bytes_per_element: ArrayLike = 1.0,
    context_tokens: ArrayLike = 0.0,
) -> ArrayLike:
    """The sparse MLA kernel of a DSA model (vLLM's FLASHMLA_SPARSE measured over its fp8_ds_mla KV, used for a bf16 cache too; TensorRT-LLM's
    DSA attention): ``tokens`` query tokens x full-attention layers x the GPU's measured time per token and 64-head
    tile for the engine (``limits.sparse_mla_token_s``) x ceil(heads per GPU / 64), where ``applies``
    (``sparse_mla_applies``).

    The kernel takes the indexer's fixed-width top-k list (2,048 slots, unused ones invalid) for every query token and
    pads the heads to 64, so its time does not follow the context or the heads: DeepSeek-V3.2's decode attention
    module on H200 at batch 1,024 and 16 heads per GPU takes 1.338 ms per layer at 256 tokens of context and 1.376 ms
    at 1,024 (aiconfigurator 0.12.0, vLLM 0.24.0; catalogs/reference/dsa_decode_aic.csv), about 1.08 us per token
    once its projections are taken off, where the attention curves' read of 256 latents would take 0.1 us. The
    latents it reads are not timed again by the attention curves (``planner.model.memory.decode_attention_bytes``'s
    ``sparse_kernel``); the indexer's scoring of the cached tokens is.
    """
    if type(applies) is float and applies == 0.0:
        return 0.0
    tiles = ops.ceil(model.num_attention_heads / heads_gpus / SPARSE_MLA_HEAD_TILE)
    token_s = limits.sparse_mla_token_s
    bf16_s = limits.sparse_mla_bf16_token_s
    if not (type(bf16_s) is float and bf16_s == 0.0):  # EXPERIMENT (h-r4): a 16-bit cache at its own module's line
        attended = ops.minimum(context_tokens, model.attended_tokens_max)
        bf16 = bf16_s + limits.sparse_mla_bf16_attended_s * attended
        token_s = ops.where((kv_bytes_per_element > 1.0) & (bf16_s > 0.0), bf16, token_s)
    return applies * tokens * model.full_attention_layers * token_s * tiles


def forward_kernels_time_s(
    gpu: GpuFacts,
    model: ModelFacts,
    limits: EngineFacts,
    **kwargs,
) -> ArrayLike:
    """One forward pass's kernels: the sum of ``forward_kernel_parts`` (dense GEMMs + MoE grouped GEMMs +
    attention), seconds. Keyword arguments: ``forward_kernel_parts``'."""
    linear, experts, attention = forward_kernel_parts(gpu, model, limits, **kwargs)
    return linear + experts + attention


def forward_kernel_parts(
    gpu: GpuFacts,
    model: ModelFacts,
    limits: EngineFacts,
    *,
    prefill: bool,
    rows: ArrayLike,
    gpus: ArrayLike,
    dense_bytes: ArrayLike,
    expert_bytes: ArrayLike,
    attention_bytes: ArrayLike,
    attention_flop: ArrayLike,
    dense_gpus: ArrayLike | None = None,
    expert_rows: ArrayLike | None = None,
    attention_gpus: ArrayLike | None = None,
    touched: ArrayLike | None = None,
    weight_bytes_per_param: ArrayLike | None = None,
    kv_bytes_per_element: ArrayLike = 2.0,
    head_rows: ArrayLike | None = None,
) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """One forward pass's kernels, each on its own curve, as (dense GEMMs, MoE grouped GEMMs, attention) seconds,
    what ``forward_kernels_time_s`` sums and ``planner.model.decode.decode_step_breakdown`` lists: dense GEMMs (``linear_layers_time_s``) + MoE grouped
    GEMMs (``expert_layers_time_s``; none when ``expert_bytes`` is a dense model's float 0.0) + attention
    (``attention_time_s``) at the decode or prefill FLOP efficiency, attention efficiency and floor; a decode
    step's KV bytes x ``decode_kv_read_factor`` (1 but for engines whose kernel reads a KV head once per query head).

    Under tensor parallelism every operator sees the same ``rows`` (tokens per GEMM) split over ``gpus``; the
    data-parallel forms (``planner.model.parallel``) run the dense GEMMs and attention whole on one GPU
    (``dense_gpus``, ``attention_gpus``) and the experts over the rows of the whole group (``expert_rows``).
    ``touched``: the experts per MoE layer the step touches (``planner.model.decode.experts_touched``), for the
    grouped GEMM's rows per expert. ``weight_bytes_per_param``: the precision's, for the weight-only dense GEMMs
    (``linear_layers_time_s``). ``kv_bytes_per_element``: the KV cache's, for the attention curve's byte rate
    (``attention_time_s``). ``head_rows``: the rows of the dense GEMMs the output head runs on (a prefill: one per
    prompt); None: all of them (``linear_layers_time_s``)."""
    flop_efficiency = limits.prefill_flop_efficiency if prefill else limits.decode_flop_efficiency
    dense_gpus = gpus if dense_gpus is None else dense_gpus
    # the data-parallel forms hold whole experts on each GPU (expert parallelism): one expert's full width
    expert_width = None if expert_rows is None else model.expert_split_width
    expert_gpus, expert_rows = gpus, rows if expert_rows is None else expert_rows
    attention_gpus = gpus if attention_gpus is None else attention_gpus
    dense_rows = rows
    if prefill:
        attention_efficiency, attention_floor_s = (
            limits.prefill_attention_flop_efficiency,
            limits.prefill_attention_floor_s,
        )
        attention_flop = prefill_attention_timed_flop(model, limits, attention_flop, rows)
    else:
        attention_efficiency, attention_floor_s = limits.attention_flop_efficiency, limits.attention_floor_s
        if not (type(limits.mla_attention_flop_efficiency) is float and limits.mla_attention_flop_efficiency == 0.0):
            mla = (model.mla_attention > 0) & (limits.mla_attention_flop_efficiency > 0)
            attention_efficiency = ops.where(mla, limits.mla_attention_flop_efficiency, attention_efficiency)
        if not (type(limits.decode_kv_reads_per_query_head) is float and limits.decode_kv_reads_per_query_head == 0):
            attention_bytes = attention_bytes * decode_kv_read_factor(model, limits, attention_gpus)
    no_experts = type(expert_bytes) is float and expert_bytes == 0.0
    return (
        linear_layers_time_s(
            gpu, model, limits, dense_bytes, dense_rows, flop_efficiency, dense_gpus, weight_bytes_per_param, head_rows
        ),
        (
            0.0
            if no_experts
            else expert_layers_time_s(
                gpu, limits, expert_bytes, model, expert_rows, flop_efficiency, expert_gpus, expert_width, touched
            )
        ),
        attention_time_s(
            gpu,
            model,
            limits,
            attention_bytes,
            attention_flop,
            attention_efficiency * flop_efficiency,
            attention_floor_s,
            attention_gpus,
            kv_bytes_per_element,
        ),
    )
