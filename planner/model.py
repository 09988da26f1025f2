"""The capacity model: pure formulas over numbers. No I/O, no catalog lookups, no Excel.

Every argument may be a Python number or a numpy array; arrays broadcast. Units are in the names:
bytes, seconds, FLOP, FLOP/s, bytes/s. ``planner.api`` turns GPU, model and precision names into the
numbers these functions take; the Excel functions, workbooks, export and CLI all go through it.
"""

from __future__ import annotations

import numpy as np

from planner.engines import EngineProfile

ArrayLike = float | np.ndarray

# -- roofline -------------------------------------------------------------------------------------------


def ridge_flop_per_byte(peak_flop_per_s: ArrayLike, bandwidth_bytes_per_s: ArrayLike) -> ArrayLike:
    """Ridge point (knee) of the roofline: peak FLOP/s / memory bandwidth. A100 80GB: 312e12/2039e9 = 153."""
    return np.asarray(peak_flop_per_s, dtype=float) / np.asarray(bandwidth_bytes_per_s, dtype=float)


def linear_intensity_flop_per_byte(tokens_per_step: ArrayLike, weight_bytes_per_param: ArrayLike) -> ArrayLike:
    """Arithmetic intensity of the linear layers: 2 x P x T FLOP over P x bytes/param read = 2T / bytes.

    With 16-bit weights this is T, the tokens processed together: decode at batch B gives B,
    one prefill of L tokens gives L.
    """
    return 2.0 * np.asarray(tokens_per_step, dtype=float) / np.asarray(weight_bytes_per_param, dtype=float)


def attention_intensity_flop_per_byte(
    num_attention_heads: ArrayLike, num_kv_heads: ArrayLike, kv_bytes_per_element: ArrayLike = 2.0
) -> ArrayLike:
    """Arithmetic intensity of reading the KV cache in decode: heads / KV heads at 16-bit (MHA 1, GQA 8:1 gives 8)."""
    return (
        np.asarray(num_attention_heads, dtype=float)
        / np.asarray(num_kv_heads, dtype=float)
        * 2.0
        / np.asarray(kv_bytes_per_element, dtype=float)
    )


# -- memory ---------------------------------------------------------------------------------------------


def weight_bytes(
    params_non_expert: ArrayLike,
    bytes_per_param: ArrayLike,
    params_routed_experts: ArrayLike = 0,
    expert_bytes_per_param: ArrayLike | None = None,
) -> ArrayLike:
    """Bytes of all weights: non-expert params x bytes/param + routed-expert params x their bytes/param."""
    expert_bpp = bytes_per_param if expert_bytes_per_param is None else expert_bytes_per_param
    return (
        np.asarray(params_non_expert, dtype=float) * bytes_per_param
        + np.asarray(params_routed_experts, dtype=float) * expert_bpp
    )


def cached_tokens_per_layer_sum(
    context_tokens: ArrayLike,
    full_attention_layers: ArrayLike,
    sliding_window_layers: ArrayLike = 0,
    sliding_window: ArrayLike = np.inf,
) -> ArrayLike:
    """Sum over layers of tokens held: full layers hold the whole context, sliding-window layers at most the window."""
    ctx = np.asarray(context_tokens, dtype=float)
    return np.asarray(full_attention_layers) * ctx + np.asarray(sliding_window_layers) * np.minimum(ctx, sliding_window)


def kv_bytes(
    context_tokens: ArrayLike,
    kv_elements_per_token_per_layer: ArrayLike,
    kv_bytes_per_element: ArrayLike,
    full_attention_layers: ArrayLike,
    sliding_window_layers: ArrayLike = 0,
    sliding_window: ArrayLike = np.inf,
    batch: ArrayLike = 1,
) -> ArrayLike:
    """KV cache of ``batch`` sequences of ``context_tokens``: elements/layer/token x bytes x layer-tokens x batch.

    MHA/GQA/MQA: elements = 2 x KV heads x head dim (the seeds' 2 x layers x KV heads x head dim x bytes per
    token); MLA: kv_lora_rank + rope dim. Llama 2 70B, fp16: 2 x 80 x 8 x 128 x 2 B = 327,680 B per token.
    """
    layer_tokens = cached_tokens_per_layer_sum(
        context_tokens, full_attention_layers, sliding_window_layers, sliding_window
    )
    return (
        np.asarray(kv_elements_per_token_per_layer, dtype=float)
        * kv_bytes_per_element
        * layer_tokens
        * np.asarray(batch, dtype=float)
    )


def kv_replication(num_kv_heads: ArrayLike, gpus: ArrayLike) -> ArrayLike:
    """How many copies of each KV head a tensor-parallel group holds: 1, or gpus / KV heads when heads are fewer.

    Each GPU keeps max(1, KV heads // gpus) heads (vLLM's rule); MLA's single latent is on every GPU.
    """
    kvh = np.asarray(num_kv_heads, dtype=float)
    g = np.asarray(gpus, dtype=float)
    return g * np.maximum(1.0, np.floor(kvh / g)) / kvh


def visible_memory_bytes(
    memory_bytes: ArrayLike, engine_visible_memory_bytes: ArrayLike, engine: EngineProfile
) -> ArrayLike:
    """Total memory the engine sees per GPU: the measured torch-visible total, else a fraction of physical memory.

    ``engine_visible_memory_bytes`` is NaN where the catalog has no measurement.
    """
    physical = np.asarray(memory_bytes, dtype=float)
    if not engine.use_engine_visible_memory:
        return physical
    measured = np.asarray(engine_visible_memory_bytes, dtype=float)
    return np.where(np.isnan(measured), physical * engine.visible_memory_fraction, measured)


def activation_peak_bytes(
    hidden_size: ArrayLike,
    intermediate_size: ArrayLike,
    vocab_size: ArrayLike,
    gpus: ArrayLike,
    engine: EngineProfile,
    max_num_batched_tokens: ArrayLike,
    max_num_seqs: ArrayLike,
) -> ArrayLike:
    """Activation peak per GPU of the engine's profiling run.

    forward: a x batched tokens x (hidden + 2 x MLP width / GPUs); sampler: b x sequences x vocabulary
    (the sampler sees the whole vocabulary on every GPU). a and b are fitted per engine.
    """
    tokens, seqs = max_num_batched_tokens, max_num_seqs
    width = np.asarray(hidden_size, dtype=float) + 2.0 * np.asarray(intermediate_size, dtype=float) / np.asarray(
        gpus, dtype=float
    )
    return engine.activation_bytes_per_token_width * np.asarray(
        tokens, dtype=float
    ) * width + engine.activation_bytes_per_seq_vocab * np.asarray(seqs, dtype=float) * np.asarray(
        vocab_size, dtype=float
    )


def reserve_bytes_per_gpu(activation_bytes: ArrayLike, gpus: ArrayLike, engine: EngineProfile) -> ArrayLike:
    """Memory the engine keeps out of the KV budget per GPU: activation peak + non-torch (+ NCCL when TP > 1)."""
    tp_extra = np.where(np.asarray(gpus) > 1, engine.non_torch_bytes_tensor_parallel, 0.0)
    return np.asarray(activation_bytes, dtype=float) + engine.non_torch_bytes + tp_extra


def kv_budget_bytes_per_gpu(
    visible_bytes: ArrayLike,
    weight_bytes_total: ArrayLike,
    gpus: ArrayLike,
    reserve_bytes: ArrayLike,
    memory_utilization: ArrayLike,
    engine: EngineProfile,
) -> ArrayLike:
    """KV cache budget of one GPU of a tensor-parallel group (weights split evenly across the group).

    "total" (vLLM):  visible x utilization - weights/GPUs - reserve
    "free" (TRT-LLM): utilization x (visible - weights/GPUs - reserve)
    May be negative: the weights do not fit.
    """
    visible = np.asarray(visible_bytes, dtype=float)
    per_gpu_weights = np.asarray(weight_bytes_total, dtype=float) / np.asarray(gpus, dtype=float)
    if engine.budget_mode == "free":
        return np.asarray(memory_utilization) * (visible - per_gpu_weights - reserve_bytes)
    return visible * memory_utilization - per_gpu_weights - reserve_bytes


def kv_cache_tokens(
    kv_budget_per_gpu: ArrayLike, kv_bytes_per_token_per_gpu: ArrayLike, block_size: int = 1
) -> ArrayLike:
    """Token slots the group's KV cache holds (vLLM's "GPU KV cache size"): whole blocks of ``block_size`` tokens.

    Every GPU of the group holds its share of every token, so the group holds as many tokens as one GPU.
    """
    budget = np.maximum(np.asarray(kv_budget_per_gpu, dtype=float), 0.0)
    blocks = np.floor(budget / (np.asarray(kv_bytes_per_token_per_gpu, dtype=float) * block_size))
    return blocks * block_size


def max_concurrency(kv_cache_tokens: ArrayLike, tokens_per_request: ArrayLike, block_size: int = 16) -> ArrayLike:
    """vLLM's "Maximum concurrency for L tokens per request": KV cache tokens / L rounded up to whole blocks."""
    per_request = np.ceil(np.asarray(tokens_per_request, dtype=float) / block_size) * block_size
    out = np.asarray(kv_cache_tokens, dtype=float) / per_request
    return float(out) if out.ndim == 0 else out


def max_batch_from_budget(kv_budget_total_bytes: ArrayLike, kv_bytes_per_sequence_total: ArrayLike) -> ArrayLike:
    """Sequences that fit: floor(KV budget / KV bytes per sequence). The seeds' trailer size."""
    budget = np.maximum(np.asarray(kv_budget_total_bytes, dtype=float), 0.0)
    return np.floor(budget / np.asarray(kv_bytes_per_sequence_total, dtype=float))


# -- time -----------------------------------------------------------------------------------------------


def experts_touched(num_experts: ArrayLike, experts_per_token: ArrayLike, tokens: ArrayLike) -> ArrayLike:
    """Expected distinct experts per MoE layer that ``tokens`` tokens route to, under uniform routing.

    E x (1 - (1 - k/E)^T): one token touches k, a large batch touches all E.
    """
    e = np.asarray(num_experts, dtype=float)
    k = np.asarray(experts_per_token, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        touched = e * (1.0 - np.power(1.0 - k / e, np.asarray(tokens, dtype=float)))
    return np.where(e > 0, touched, 0.0)


def allreduce_time_s(
    message_bytes: ArrayLike,
    gpus: ArrayLike,
    interconnect_bytes_per_s: ArrayLike,
    latency_s: ArrayLike,
    interconnect_efficiency: ArrayLike,
) -> ArrayLike:
    """One ring all-reduce: latency + 2 (g-1)/g x message / achieved link bandwidth; 0 on one GPU."""
    g = np.asarray(gpus, dtype=float)
    link = np.asarray(interconnect_bytes_per_s, dtype=float) * interconnect_efficiency
    t = latency_s + 2.0 * (g - 1.0) / g * np.asarray(message_bytes, dtype=float) / link
    return np.where(g > 1, t, 0.0)


def roofline_step_time_s(
    bytes_moved: ArrayLike,
    flop: ArrayLike,
    gpus: ArrayLike,
    bandwidth_bytes_per_s: ArrayLike,
    peak_flop_per_s: ArrayLike,
    bandwidth_efficiency: float,
    flop_efficiency: float,
) -> ArrayLike:
    """max(bytes / achieved bandwidth, FLOPs / achieved peak), the work split evenly over ``gpus``."""
    g = np.asarray(gpus, dtype=float)
    t_mem = np.asarray(bytes_moved, dtype=float) / (
        g * np.asarray(bandwidth_bytes_per_s, dtype=float) * bandwidth_efficiency
    )
    t_flop = np.asarray(flop, dtype=float) / (g * np.asarray(peak_flop_per_s, dtype=float) * flop_efficiency)
    return np.maximum(t_mem, t_flop)


def cost_per_million_tokens_usd(
    price_usd_per_gpu_hour: ArrayLike, gpus: ArrayLike, tokens_per_s: ArrayLike
) -> ArrayLike:
    """$ per 1e6 tokens: GPUs x $/GPU-hour / 3600 s / (tokens/s) x 1e6."""
    return (
        np.asarray(price_usd_per_gpu_hour, dtype=float)
        * np.asarray(gpus, dtype=float)
        / 3600.0
        / np.asarray(tokens_per_s, dtype=float)
        * 1e6
    )
