"""Time of a prefill (TTFT): the prompt's FLOPs and bytes on the roofline, plus all-reduces and overhead."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.model import operators, ops
from planner.model.decode import experts_touched, params_per_token, step_overhead_s, tp_communication_s
from planner.model.facts import ArrayLike, EngineFacts, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.memory import cached_tokens_per_layer_sum, kv_bytes, kv_replication, left_to_dense, state_bytes
from planner.model.rows import row_values


def causal_attention_flop(model: ModelFacts, prompt_tokens: ArrayLike, sparse_kernel: ArrayLike = 0.0) -> ArrayLike:
    """Attention FLOPs of one causal prompt of L tokens: FLOP per token pair x L x layer-tokens at L/2.

    Token t attends to t earlier tokens (at most the window), L/2 on average. FLOP per pair: 4 x heads x head
    dim; MLA prefills as plain multi-head attention over 192/128-dim heads (``architecture``).

    DSA (top-k = k): token t attends to min(t, k), on average m^2 / (2L) + (L - m) m / L with m = min(L, k) (L/2
    when L <= k), and the indexer scores all t earlier tokens (L/2 on average) at its FLOP per pair. Linear-attention
    layers add their recurrence per token (``linear_attention_flop_per_token``) and no pairs. ``sparse_kernel`` 1:
    the full layers' attended pairs are left to the engine's fp8 sparse MLA kernel
    (``planner.model.operators.sparse_mla_time_s``); the indexer's scoring stays.
    """
    if _dense_attention(model):  # no DSA, no linear layers: the plain causal sum
        return (
            model.prefill_attention_flop_per_token_pair_per_layer
            * prompt_tokens
            * cached_tokens_per_layer_sum(model, prompt_tokens / 2.0)
        )
    m = ops.minimum(prompt_tokens, model.attended_tokens_max)
    mean_attended = left_to_dense(
        m * m / (2.0 * prompt_tokens) + (prompt_tokens - m) * m / prompt_tokens, sparse_kernel
    )
    pairs = model.full_attention_layers * mean_attended + model.sliding_window_layers * ops.minimum(
        prompt_tokens / 2.0, model.sliding_window
    )
    indexed = model.indexer_flop_per_context_token_per_layer * model.full_attention_layers * prompt_tokens / 2.0
    return prompt_tokens * (
        model.prefill_attention_flop_per_token_pair_per_layer * pairs + indexed + model.linear_attention_flop_per_token
    )


def _dense_attention(model: ModelFacts) -> bool:
    """Whether every scenario's model attends densely with no linear layers (the common case, kept bit for bit)."""
    return _all_zero(model.indexer_flop_per_context_token_per_layer) and _all_zero(
        model.linear_attention_flop_per_token
    )


def _all_zero(x: ArrayLike) -> bool:
    """Whether ``x`` is 0 everywhere, read on its per-combination values where it has them (``Rows``)."""
    if type(x) in (float, int):  # one scenario: no numpy
        return x == 0.0
    return bool(np.all(np.asarray(row_values(x)) == 0.0))


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
    """TTFT = dense GEMMs + MoE grouped GEMMs + causal attention (``planner.model.operators``; a DSA model's latents
    through the engine's fp8 sparse MLA kernel where its prompt tokens run it, ``operators.sparse_mla_time_s``) + TP
    all-reduces + overhead.

    One forward pass over the batch's L x batch tokens: the weights are read once (MoE: the experts those tokens
    touch), every prompt writes its KV (replicated heads counted) and spends 2 x (params per token - output head) x L
    + 2 x output head + causal attention FLOPs: the output head (vocabulary x hidden) runs on each prompt's last
    token only, where the engine samples (``operators.prefill_head_skipped``: vLLM's ``logits_indices``). overhead = per step + per layer x layers + per MoE layer x MoE layers + the fixed prefill
    latency (the engine's).
    """
    tokens = prompt_tokens * batch
    attention_flop = batch * causal_attention_flop(model, prompt_tokens)
    flop = 2.0 * (tokens * params_per_token(model) - (tokens - batch) * model.params_output_head) + attention_flop
    sparse = operators.sparse_mla_applies(model, limits, gpus, prefill=True)
    if not (type(sparse) is float and sparse == 0.0):  # DSA latents through the fp8 sparse kernel: not timed twice
        attention_flop = batch * causal_attention_flop(model, prompt_tokens, sparse)
    dense_bytes = operators.dense_weight_bytes(model, precision)
    dense_model = type(model.moe_layers) is float and model.moe_layers == 0.0  # one dense scenario: no experts
    touched = 0.0 if dense_model else experts_touched(model, tokens)
    expert_bytes = 0.0 if dense_model else operators.expert_weight_bytes(model, precision, touched)
    kv_written = kv_bytes(model, precision, prompt_tokens, batch * kv_replication(model, gpus)) + state_bytes(
        model, batch
    )
    bytes_moved = dense_bytes + expert_bytes + kv_written  # weights read + KV written
    t = operators.forward_kernels_time_s(
        gpu, model, limits, prefill=True, rows=tokens, gpus=gpus, dense_bytes=dense_bytes, expert_bytes=expert_bytes,
        attention_bytes=kv_written, attention_flop=attention_flop, touched=touched,
        weight_bytes_per_param=precision.weight_bytes_per_param, kv_bytes_per_element=precision.kv_bytes_per_element,
        head_rows=batch,
    ) + operators.sparse_mla_time_s(model, limits, tokens, gpus, sparse)  # fmt: skip
    overhead = step_overhead_s(model, limits, prompt_tokens * batch) + limits.prefill_latency_s
    ttft = t + tp_communication_s(model, gpu, limits, tokens, gpus) + overhead
    return PrefillStep(gpus=gpus, prompt_tokens=prompt_tokens, ttft_s=ttft, bytes_moved=bytes_moved, flop=flop)
