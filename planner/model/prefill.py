"""Time of a prefill (TTFT): the prompt's FLOPs and bytes on the roofline, plus all-reduces and overhead."""

from __future__ import annotations

from dataclasses import dataclass

from planner.model.decode import params_per_token, step_overhead_s, tp_communication_s, weights_read_bytes
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.memory import cached_tokens_per_layer_sum, kv_bytes, kv_replication
from planner.model.roofline import compute_time_s, memory_time_s, roofline_time_s


def causal_attention_flop(model: ModelFacts, prompt_tokens: ArrayLike) -> ArrayLike:
    """Attention FLOPs of one causal prompt of L tokens: FLOP per token pair x L x layer-tokens at L/2.

    Token t attends to t earlier tokens (at most the window), L/2 on average. FLOP per pair: 4 x heads x head
    dim; MLA prefills as plain multi-head attention over 192/128-dim heads (``architecture``).
    """
    return (
        model.prefill_attention_flop_per_token_pair_per_layer
        * prompt_tokens
        * cached_tokens_per_layer_sum(model, prompt_tokens / 2.0)
    )


@dataclass(frozen=True)
class PrefillStep:
    """A prefill of ``batch`` prompts: its time, bytes and FLOPs for the whole group.

    ``ttft_s`` is the one busy time of a prompt: the full prefill, tensor-parallel all-reduces and step
    overhead included. TTFT reports it and fleet sizing charges each prompt it (``planner.export.sizing``).
    """

    gpus: ArrayLike
    prompt_tokens: ArrayLike
    ttft_s: ArrayLike
    bytes_moved: ArrayLike
    flop: ArrayLike

    @property
    def intensity_flop_per_byte(self):
        return self.flop / self.bytes_moved


def prefill_step(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    prompt_tokens: ArrayLike,
    batch: ArrayLike,
    gpus: ArrayLike,
) -> PrefillStep:
    """TTFT = roofline(bytes / (g x bandwidth x eff), FLOPs / (g x peak x prefill eff)) + TP all-reduces + overhead.

    overhead = per step + per layer x layers + the fixed prefill latency (fitted).

    The weights are read once for the batch (MoE: the experts its L x batch tokens touch); every prompt writes
    its KV (replicated heads counted) and spends 2 x params per token x L + causal attention FLOPs.
    """
    flop = batch * (2.0 * params_per_token(model) * prompt_tokens + causal_attention_flop(model, prompt_tokens))
    bytes_moved = weights_read_bytes(model, precision, prompt_tokens * batch) + kv_bytes(
        model, precision, prompt_tokens, batch * kv_replication(model, gpus)
    )  # weights read + KV written
    t = roofline_time_s(
        memory_time_s(bytes_moved, gpus, gpu.bandwidth_bytes_per_s, limits.bandwidth_efficiency),
        compute_time_s(flop, gpus, gpu.peak_flop_per_s, limits.prefill_flop_efficiency),
        limits.roofline_overlap,
    )
    overhead = step_overhead_s(model, limits) + limits.prefill_latency_s
    ttft = t + tp_communication_s(model, gpu, limits, prompt_tokens * batch, gpus) + overhead
    return PrefillStep(gpus=gpus, prompt_tokens=prompt_tokens, ttft_s=ttft, bytes_moved=bytes_moved, flop=flop)
