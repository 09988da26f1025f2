"""The roofline: ridge point, arithmetic intensities, step time, cost per token. Pure formulas over numbers."""

from __future__ import annotations

import numpy as np

from planner.model import ops
from planner.model.facts import ArrayLike


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


def memory_time_s(bytes_moved: ArrayLike, gpus: ArrayLike, bandwidth_bytes_per_s: ArrayLike, efficiency: ArrayLike):
    """Bytes / (g x bandwidth x achieved fraction): the work split evenly over the group."""
    return bytes_moved / (gpus * bandwidth_bytes_per_s * efficiency)


def compute_time_s(flop: ArrayLike, gpus: ArrayLike, peak_flop_per_s: ArrayLike, efficiency: ArrayLike):
    """FLOPs / (g x peak x achieved fraction)."""
    return flop / (gpus * peak_flop_per_s * efficiency)


def roofline_time_s(memory_s: ArrayLike, compute_s: ArrayLike, overlap: ArrayLike) -> ArrayLike:
    """max(memory, compute) + (1 - overlap) x min(memory, compute): 1 the textbook roofline, 0 no overlap.

    The roofline (overlap 1) is a lower bound: a kernel near the ridge neither streams at full bandwidth nor
    computes at full rate at once, and a step's kernels (GEMMs, attention, norms) run one after another, each
    bound by one or the other. Overlap 0 is the upper bound, the two times added (docs/accuracy.md).
    """
    hi, lo = ops.maximum(memory_s, compute_s), ops.minimum(memory_s, compute_s)
    return hi + (1.0 - overlap) * lo


def cost_per_million_tokens_usd(
    price_usd_per_gpu_hour: ArrayLike, gpus: ArrayLike, tokens_per_s: ArrayLike
) -> ArrayLike:
    """$ per 1e6 tokens: GPUs x $/GPU-hour / 3600 s / (tokens/s) x 1e6.

    With decode's throughput at a batch this is decode only, the group 100% busy at that batch: no prompt
    processing (``cost_per_million_output_tokens_with_prompts_usd`` adds each request's prefill)."""
    return (
        np.asarray(price_usd_per_gpu_hour, dtype=float)
        * np.asarray(gpus, dtype=float)
        / 3600.0
        / np.asarray(tokens_per_s, dtype=float)
        * 1e6
    )


def request_group_time_s(output_tokens: ArrayLike, decode_tokens_per_s: ArrayLike, prefill_s: ArrayLike) -> ArrayLike:
    """Group-seconds one request holds: output tokens / decode throughput at the batch + its prompt's prefill.

    Its share of the decode steps it runs in, plus its prefill (TTFT, all-reduces included), which holds the group
    alone: continuous batching's steps stretch by that time (README, "Prompts and decode share a GPU"). No queueing,
    no overlap of a prefill with decode (chunked prefill would overlap some of it)."""
    return np.asarray(output_tokens, dtype=float) / np.asarray(decode_tokens_per_s, dtype=float) + np.asarray(
        prefill_s, dtype=float
    )


def cost_per_million_output_tokens_with_prompts_usd(
    price_usd_per_gpu_hour: ArrayLike,
    gpus: ArrayLike,
    output_tokens: ArrayLike,
    decode_tokens_per_s: ArrayLike,
    prefill_s: ArrayLike,
) -> ArrayLike:
    """$ per 1e6 output tokens, each request's prompt processing included, the group 100% busy:
    GPUs x $/GPU-hour / 3600 s x ``request_group_time_s`` / output tokens x 1e6.

    Llama-3.1-70B on 4 x H100 at $3.595, 800 + 400 tokens, batch 375 (8,139 tokens/s), TTFT 0.067 s: $1.16, where
    decode alone (``cost_per_million_tokens_usd``) is $0.49. Below 100% busy both scale up by 1 / utilization."""
    busy_s = request_group_time_s(output_tokens, decode_tokens_per_s, prefill_s)
    return (
        np.asarray(price_usd_per_gpu_hour, dtype=float)
        * np.asarray(gpus, dtype=float)
        / 3600.0
        * busy_s
        / np.asarray(output_tokens, dtype=float)
        * 1e6
    )
