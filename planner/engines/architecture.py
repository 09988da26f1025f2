"""Counts derived from a model's architecture: parameters, KV-cache width, attention FLOPs.

Pure functions of a catalog ``Model``; no I/O. They feed the vectorized capacity model through
``planner.model.facts.ModelFacts``, a flat record of numbers per model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from planner.catalog.schema import Model
from planner.model.facts import ModelFacts
from planner.model.memory import kv_cache_groups


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters of one model by role; every count is exact (no rounding)."""

    embedding: int  # input token embedding (a row lookup per token: never streamed whole)
    lm_head: int  # output projection (0 when tied to the embedding)
    attention: int  # all layers: projections, biases, q/k norms, sinks
    norms: int  # all layers' norms plus the final norm
    dense_mlp: int  # dense MLP layers
    router: int  # MoE routers
    shared_experts: int  # MoE shared experts
    routed_experts: int  # all routed experts of all MoE layers
    routed_experts_active: int  # routed experts a single token uses
    extra: int  # outside the text decoder (vision tower, MTP), loaded but not run per decode step

    @property
    def total(self) -> int:
        return (
            self.embedding
            + self.lm_head
            + self.attention
            + self.norms
            + self.dense_mlp
            + self.router
            + self.shared_experts
            + self.routed_experts
            + self.extra
        )

    @property
    def active(self) -> int:
        """Parameters one token touches, embedding included (as model cards count them), extra excluded."""
        return self.total - self.routed_experts + self.routed_experts_active - self.extra

    @property
    def non_expert(self) -> int:
        """Everything but the routed experts: stored at the model's main precision."""
        return self.total - self.routed_experts


def _attention_params_per_layer(m: Model, kv_heads: int | None = None) -> int:
    """One attention layer's parameters; ``kv_heads``: a NAS layer's own KV heads (default ``num_kv_heads``)."""
    h = m.hidden_size
    if m.mla is not None:
        a = m.mla
        qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim
        if a.q_lora_rank:
            q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.num_attention_heads * qk_head
        else:
            q = h * m.num_attention_heads * qk_head
        kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
        kv += a.kv_lora_rank * m.num_attention_heads * (a.qk_nope_head_dim + a.v_head_dim)
        o = m.num_attention_heads * a.v_head_dim * h
        return q + kv + o + _indexer_params_per_layer(m)
    q_width = m.num_attention_heads * m.head_dim
    kv_width = (m.num_kv_heads if kv_heads is None else kv_heads) * m.head_dim
    n = h * q_width * (2 if m.attention_output_gate else 1) + 2 * h * kv_width + q_width * h
    if m.attention_bias:
        n += q_width + 2 * kv_width
    if m.attention_output_bias:
        n += h
    if m.qk_norm:
        n += 2 * m.head_dim
    if m.attention_sinks:
        n += m.num_attention_heads
    return n


def _indexer_params_per_layer(m: Model) -> int:
    """DSA's lightning indexer in one layer (0 without): wq_b (q_lora_rank x heads x dim), wk (hidden x dim),
    k_norm (a LayerNorm: weight and bias of dim) and weights_proj (hidden x heads), as the published checkpoints
    name them (DeepSeek-V3.2 ``inference/model.py`` ``Indexer``; transformers ``GlmMoeDsaIndexer``)."""
    d = m.sparse_attention
    if d is None or m.mla is None:
        return 0
    q_in = m.mla.q_lora_rank or m.hidden_size
    return (
        q_in * d.index_n_heads * d.index_head_dim
        + m.hidden_size * d.index_head_dim
        + 2 * d.index_head_dim
        + (m.hidden_size * d.index_n_heads)
    )


def _linear_attention_params_per_layer(m: Model) -> int:
    """One Gated DeltaNet layer (vLLM/transformers ``Qwen3NextGatedDeltaNet``; Qwen3.5 splits in_proj_qkvz into
    in_proj_qkv and in_proj_z, same count): in_proj_qkvz hidden x (2 key dim + 2 value dim), in_proj_ba hidden x
    2 value heads, conv1d (2 key dim + value dim) x kernel (no bias), dt_bias and A_log (value heads each), the gated
    RMSNorm (value head dim) and out_proj value dim x hidden."""
    a = m.linear_attention
    if a is None:
        return 0
    h = m.hidden_size
    conv_channels = 2 * a.key_dim + a.value_dim
    return (
        h * (2 * a.key_dim + 2 * a.value_dim)
        + h * 2 * a.num_value_heads
        + conv_channels * a.conv_kernel
        + 2 * a.num_value_heads
        + a.value_head_dim
        + a.value_dim * h
    )


def _mamba2_params_per_layer(m: Model) -> int:
    """One Mamba-2 mixer (vLLM ``MambaMixer2``, transformers ``NemotronHMamba2Mixer``): in_proj hidden x (2 x d_inner
    + 2 x groups x state + heads) for z, x, B, C and dt (no bias), conv1d conv_dim x kernel (+ conv_dim bias), dt_bias,
    A_log and D (heads each), the gated RMSNorm (d_inner) and out_proj d_inner x hidden (no bias)."""
    a = m.mamba
    if a is None:
        return 0
    h = m.hidden_size
    in_proj = h * (2 * a.inner_size + 2 * a.n_groups * a.state_size + a.num_heads)
    conv = a.conv_channels * a.conv_kernel + (a.conv_channels if a.conv_bias else 0)
    return in_proj + conv + 3 * a.num_heads + a.inner_size + a.inner_size * h


def quantized_kept_16bit_params(m: Model) -> int:
    """Mixer parameters a Mamba-2 hybrid's quantized checkpoints keep in bf16 (``Mamba2.quantized_kept_16bit_blocks``):
    each kept block's whole mixer (an ``M`` block's Mamba-2 mixer, a ``*`` block's attention) + the conv1d (weights and
    bias) of every other Mamba-2 layer; 0 for other models or when none is listed.

    Nemotron-3-Nano-30B-A3B (attention blocks 5, 12, 19, 26, 33, 42 and the Mamba-2 mixers before them, 4, 11, 18, 25,
    32, 41): 6 x 23,396,352 + 6 x 38,742,208 + 17 x 30,720 = 373,353,600."""
    a = m.mamba
    if a is None or not a.quantized_kept_16bit_blocks:
        return 0
    kept_mamba = sum(1 for i in a.quantized_kept_16bit_blocks if a.pattern[i] == "M")
    kept_attention = len(a.quantized_kept_16bit_blocks) - kept_mamba
    conv = a.conv_channels * a.conv_kernel + (a.conv_channels if a.conv_bias else 0)
    return (
        kept_attention * _attention_params_per_layer(m)
        + kept_mamba * _mamba2_params_per_layer(m)
        + (a.mamba_layers - kept_mamba) * conv
    )


def linear_attention_layers(m: Model) -> int:
    """Layers with a fixed state per sequence instead of a per-token KV cache: Gated DeltaNet layers, or a Mamba-2
    hybrid's ``M`` blocks (0 for other models)."""
    if m.mamba is not None:
        return m.mamba.mamba_layers
    return m.linear_attention.layers if m.linear_attention is not None else 0


def mixer_layers(m: Model) -> float:
    """Layers as the capacity model counts them: ``num_layers``, or a Mamba-2 hybrid's mixer blocks (``M`` and ``*``).

    A Nemotron-H block holds one mixer or one MLP, each followed by one tensor-parallel all-reduce; a transformer layer
    holds both and two all-reduces. Counting the mixers as layers keeps 2 all-reduces and one layer overhead per layer
    within a few blocks of the engine's (Nemotron-H-8B: 28 mixers, 2 x 28 = 56 all-reduces for its 52 blocks).
    """
    if m.mamba is not None:
        return m.mamba.mamba_layers + m.mamba.attention_layers
    if m.nas is not None:
        # A NAS layer may skip its attention or its FFN: count (attention blocks + FFN blocks) / 2 layers, so that the
        # capacity model's 2 all-reduces and 4 GEMMs per layer are the engine's one per block and two per block
        # (Llama-3.3-Nemotron-Super-49B-v1: 49 attention + 80 FFN blocks = 64.5 layers, 129 all-reduces under TP;
        # its per-layer attention floor is then counted 64.5 times for 49 attention kernels).
        return (m.nas.attention_blocks + m.nas.ffn_blocks) / 2
    return m.num_layers


def state_bytes_per_sequence(m: Model) -> int:
    """Fixed-size state one sequence holds in all linear-attention layers: layers x (recurrent x its bytes + conv x
    its bytes), whatever the context. Qwen3-Next-80B-A3B (36 layers, 32 value heads of 128 x 128, kernel 4, 16-bit):
    36 x (524,288 + 3 x 8,192) x 2 B = 39,518,208 B. A Mamba-2 hybrid: Mamba layers x ``Mamba2.state_bytes_per_layer``
    (Nemotron-H-8B: 24 x (3 x 10,240 x 2 B + 128 x 64 x 128 x 2 B) = 51,806,208 B)."""
    if m.mamba is not None:
        return m.mamba.mamba_layers * m.mamba.state_bytes_per_layer
    a = m.linear_attention
    return 0 if a is None else a.layers * a.state_bytes_per_layer


def linear_attention_flop_per_token(m: Model) -> int:
    """FLOPs one token spends in all linear-attention layers' recurrence: layers x (7 x value heads x key dim x
    value dim + 2 x kernel x conv channels).

    Gated delta rule, per value head with state S (key dim x value dim): decay S (1 FLOP per value), S^T k (2), the
    rank-1 delta update (2) and the output S^T q (2): 7 per state value; the short causal conv 2 x kernel per channel.
    The chunked prefill kernel does about as many per token (chunk 64: 2 x 64 x (128 + 128) = 32,768 per head
    against 7 x 128 x 128 = 114,688), so one count serves decode and prefill. A Mamba-2 layer: 5 per SSM-state value
    (decay, the rank-1 dt x B x update, the C readout) per head of head dim x state size, plus the conv.
    """
    if m.mamba is not None:
        b = m.mamba
        return b.mamba_layers * (5 * b.num_heads * b.head_dim * b.state_size + 2 * b.conv_kernel * b.conv_channels)
    a = m.linear_attention
    if a is None:
        return 0
    conv_channels = 2 * a.key_dim + a.value_dim
    return a.layers * (7 * a.num_value_heads * a.key_head_dim * a.value_head_dim + 2 * a.conv_kernel * conv_channels)


def _mlp_params(hidden: int, intermediate: int, gated: bool, bias: bool = False) -> int:
    n = (3 if gated else 2) * hidden * intermediate
    if bias:
        n += (2 if gated else 1) * intermediate + hidden
    return n


def routed_expert_biases(m: Model) -> int:
    """Bias values of all routed experts (counted in ``ParamBreakdown.routed_experts``): MoE layers x experts x
    (gate and up widths + hidden) for a gated MLP; 0 without ``expert_bias``. gpt-oss-120b: 36 x 128 x (2 x 2,880 +
    2,880) = 39,813,120 (``gate_up_proj_bias`` [128, 5,760] and ``down_proj_bias`` [128, 2,880] per layer)."""
    e = m.moe
    if e is None or not e.expert_bias:
        return 0
    width = e.expert_intermediate_size
    return m.moe_layers * e.num_experts * ((2 if m.gated_mlp else 1) * width + m.hidden_size)


def _moe_params(m: Model, moe_layers: int) -> tuple[int, int, int, int]:
    """(router, shared experts, routed experts, routed experts active per token) over ``moe_layers`` MoE layers:
    a router of hidden x experts (+ a bias per expert, + a shared-expert gate of hidden), each expert an MLP."""
    e, h = m.moe, m.hidden_size
    per_expert = _mlp_params(h, e.expert_intermediate_size, m.gated_mlp, bias=e.expert_bias)
    router = moe_layers * (
        h * e.num_experts + (e.num_experts if e.router_bias else 0) + (h if e.shared_expert_gate else 0)
    )
    shared = moe_layers * e.num_shared_experts * _mlp_params(h, e.shared_expert_intermediate_size, m.gated_mlp)
    return router, shared, moe_layers * e.num_experts * per_expert, moe_layers * e.experts_per_token * per_expert


def param_breakdown(m: Model) -> ParamBreakdown:
    """Exact parameter counts from the config fields (embedding, attention, MLP/MoE, norms, head)."""
    h = m.hidden_size
    blocks = _hybrid_mamba_blocks if m.mamba is not None else _nas_blocks if m.nas is not None else _transformer_blocks
    attention, norms, dense_mlp, moe_layers = blocks(m)
    router, shared, routed, routed_active = _moe_params(m, moe_layers) if m.moe is not None else (0, 0, 0, 0)
    return ParamBreakdown(
        embedding=m.vocab_size * h,
        lm_head=0 if m.tie_word_embeddings else m.vocab_size * h,
        attention=attention,
        norms=norms,
        dense_mlp=dense_mlp,
        router=router,
        shared_experts=shared,
        routed_experts=routed,
        routed_experts_active=routed_active,
        extra=m.extra_params,
    )


def _transformer_blocks(m: Model) -> tuple[int, int, int, int]:
    """(attention, norms, dense MLPs, MoE layers) of a transformer: full and linear-attention layers; a MoE model's
    leading dense or interleaved layers carry a dense MLP."""
    h, layers = m.hidden_size, m.num_layers
    linear = linear_attention_layers(m)
    attention = (layers - linear) * _attention_params_per_layer(m) + linear * _linear_attention_params_per_layer(m)
    moe_layers = m.moe_layers if m.moe is not None else 0
    dense_mlp = (layers - moe_layers) * _mlp_params(h, m.intermediate_size, m.gated_mlp)
    return attention, layers * m.norms_per_layer * h + h, dense_mlp, moe_layers


def _nas_blocks(m: Model) -> tuple[int, int, int, int]:
    """(attention, norms, dense MLPs, 0) of a NAS-pruned model (``NasBlocks``), summed layer by layer: each GQA layer
    with its own KV heads, each SwiGLU MLP with its own width, a linear-replaced attention or FFN a hidden x hidden
    matrix (no bias; counted with the attention or the MLPs); an RMSNorm of hidden per present attention and FFN plus
    the final norm, none for a no_op (vLLM ``DeciLMDecoderLayer``, nemotron_nas.py, commit 00bd1493).
    Llama-3.3-Nemotron-Super-49B-v1: 49 x 150,994,944 + 40,365,981,696 + 130 x 8,192 + 2 x 1,050,673,152 (embedding,
    lm_head) = 49,867,145,216."""
    a, h = m.nas, m.hidden_size
    attention = sum(_attention_params_per_layer(m, k) for k in a.kv_heads if k) + len(a.attention_linear) * h * h
    dense_mlp = sum(_mlp_params(h, w, m.gated_mlp) for w in a.ffn_intermediate if w) + len(a.ffn_linear) * h * h
    return attention, (a.attention_blocks + a.ffn_blocks) * h + h, dense_mlp, 0


def _hybrid_mamba_blocks(m: Model) -> tuple[int, int, int, int]:
    """(attention, norms, dense MLPs, MoE blocks) of a Mamba-2 hybrid's blocks, one kind each (``Mamba2.pattern``):
    ``M`` mixers and ``*`` attention layers (counted as attention), ``-`` dense MLPs, ``E`` MoE blocks; one RMSNorm
    of hidden per block plus the final norm (transformers ``NemotronHBlock.norm``, ``norm_f``)."""
    a, h = m.mamba, m.hidden_size
    attention = a.attention_layers * _attention_params_per_layer(m) + a.mamba_layers * _mamba2_params_per_layer(m)
    dense_mlp = a.mlp_blocks * _mlp_params(h, m.intermediate_size, m.gated_mlp)
    return attention, m.num_layers * h + h, dense_mlp, a.moe_blocks if m.moe is not None else 0


def param_counts(m: Model) -> tuple[int, int]:
    """(total, active) parameters, computed from the architecture."""
    b = param_breakdown(m)
    return b.total, b.active


def kv_elements_per_token_per_layer(m: Model) -> float:
    """Values one layer caches per token: 2 x KV heads x head dim (K and V), or MLA's latent + rope key.

    A NAS model (``NasBlocks``): the mean over its attention layers, sum(2 x KV heads x head dim) / attention layers,
    so that x ``full_attention_layers`` it is the exact total (Llama-3.3-Nemotron-Super-49B-v1: 49 layers of 8 KV
    heads, 100,352 values per token = 49 x 2,048)."""
    if m.mla is not None:
        return m.mla.kv_lora_rank + m.mla.qk_rope_head_dim
    if m.nas is not None:
        total = sum(2 * k * m.head_dim for k in m.nas.kv_heads)
        layers = m.nas.attention_layers
        return total // layers if total % layers == 0 else total / layers
    return 2 * m.num_kv_heads * m.head_dim


def full_attention_layers(m: Model) -> float:
    """Layers that cache every token: ``mixer_layers`` less the sliding-window (or chunked) and linear-attention
    layers; a NAS model's GQA layers (a no_op or linear-replaced attention caches nothing)."""
    if m.nas is not None:
        return m.nas.attention_layers
    return mixer_layers(m) - local_attention_span(m)[0] - linear_attention_layers(m)


def attention_flop_per_context_token_per_layer(m: Model) -> int:
    """FLOPs one new token spends per cached token in one layer: 4 x heads x head dim (QK^T and PV).

    MLA in decode uses absorbed weights: scores over the latent and rope key, output over the latent,
    2 x heads x (kv_lora_rank + rope dim) + 2 x heads x kv_lora_rank.
    """
    if m.mla is not None:
        a = m.mla
        return (
            2 * m.num_attention_heads * (a.kv_lora_rank + a.qk_rope_head_dim)
            + 2 * m.num_attention_heads * a.kv_lora_rank
        )
    return 4 * m.num_attention_heads * m.head_dim


def prefill_attention_flop_per_token_pair_per_layer(m: Model) -> int:
    """FLOPs of one (query token, earlier token) pair in one layer during prefill: QK^T plus PV.

    MHA/GQA/MQA: 4 x heads x head dim, as in decode. MLA prefills as plain multi-head attention over the
    decompressed keys and values (vLLM's and SGLang's MLA prefill path; DeepSeek-V3 technical report, 2.1.1):
    2 x heads x (nope + rope dim) + 2 x heads x v head dim. DeepSeek-V3 (128 heads, 128 + 64, 128):
    2 x 128 x 192 + 2 x 128 x 128 = 81,920, against 278,528 in the absorbed decode form.
    """
    if m.mla is not None:
        a = m.mla
        return 2 * m.num_attention_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) + 2 * m.num_attention_heads * (
            a.v_head_dim
        )
    return 4 * m.num_attention_heads * m.head_dim


def local_attention_span(m: Model) -> tuple[int, float]:
    """(layers, tokens): layers that cache at most a bounded span, and that span; (0, inf) when none.

    A sliding-window layer holds the last ``sliding_window`` tokens. A chunked-attention layer (Llama 4)
    holds the tokens of the current chunk, between 1 and ``attention_chunk_size``; the bound is used for
    KV memory (what an engine must reserve) and, conservatively, for attention reads and FLOPs.
    """
    if m.chunked_attention_layers and m.attention_chunk_size:
        return m.chunked_attention_layers, float(m.attention_chunk_size)
    if m.sliding_window_layers and m.sliding_window:
        return m.sliding_window_layers, float(m.sliding_window)
    return 0, float("inf")


def vllm_kv_cache_groups(m: Model) -> tuple[int, int, int]:
    """(layers per group, full-attention groups, local groups) of vLLM's hybrid KV cache manager.

    ``planner.model.memory.kv_cache_groups`` of the model's facts (one rule for ``max_batch`` and the log matcher):
    a group holds as many layers as the smaller attention type has (min(full, local)), and a type whose layer count
    is not a multiple of it is padded with empty layers (docs/design/hybrid_kv_cache_manager.md, "Case 3": Gemma-3-27B's 10 full and 52 sliding layers make 1 + 6
    groups of 10, 8 of them padding). Models with one attention type are one group of all their layers.
    """
    size, full_groups, local_groups = kv_cache_groups(model_facts(m))
    return int(size), int(full_groups), int(local_groups)


def vllm_kv_layer_slots(m: Model) -> int:
    """Layers' worth of KV memory one token of every group takes in vLLM: groups x layers per group.

    The model's layer count, plus the padding ``vllm_kv_cache_groups`` adds: Gemma-3-27B 70 for 62 layers,
    Gemma-3-4B 35 for 34 (5 full, 29 sliding), gpt-oss 36 for 36 (18 and 18).
    """
    size, full_groups, local_groups = vllm_kv_cache_groups(m)
    return size * (full_groups + local_groups)


def tp_split_widths(m: Model) -> tuple[int, int]:
    """(dense, routed): the gcd of the MLP widths a tensor-parallel group splits, 0 where there are none.

    Dense: the dense MLP layers' ``intermediate_size`` and the shared experts' width (``n_shared`` x
    ``moe_intermediate_size`` as one MLP, vLLM ``DeepseekV2MoE.shared_experts``), both
    ``MergedColumnParallelLinear`` / ``RowParallelLinear``, which split them with ``divide`` (exact). Routed:
    the experts' width, which ``FusedMoE`` splits per GPU (``intermediate_size_per_partition``) unless experts
    are spread whole by expert parallelism. A layer the model does not have contributes nothing. A NAS model: the
    gcd of its SwiGLU MLPs' widths (Llama-3.3-Nemotron-Super-49B-v1: 256, widths 2,816 to 28,672; a linear-replaced
    FFN, hidden x hidden, adds nothing).
    """
    if m.nas is not None:
        return math.gcd(*m.nas.ffn_intermediate), 0
    dense_layers = m.mamba.mlp_blocks if m.mamba is not None else m.num_layers - m.moe_layers
    dense = m.intermediate_size if dense_layers > 0 else 0
    if m.moe is None:
        return dense, 0
    shared = m.moe.num_shared_experts * m.moe.shared_expert_intermediate_size
    return math.gcd(dense, shared), m.moe.expert_intermediate_size


def ssm_split_width(m: Model) -> int:
    """The number a tensor-parallel group must divide for vLLM to load a Mamba-2 mixer (0 for other models): the
    mixer's heads and groups, gcd(heads, groups), or the heads alone when there is one group (vLLM 0.33.0
    ``MambaMixer2.__init__``, vllm/model_executor/layers/mamba/mamba_mixer2.py lines 316-323: ``assert num_heads %
    self.tp_size == 0``; ``assert (n_groups % self.tp_size) == 0 or n_groups == 1``). Nemotron-H-8B (128 heads, 8
    groups): 8, so 16 GPUs are refused though its 32 attention heads and 8 KV heads would split. A Gated DeltaNet
    layer: its key and value heads, gcd(key heads, value heads) (vLLM 0.33.0 ``QwenGatedDeltaNetAttention``,
    vllm/model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py line 651 ``divide(self.num_v_heads, self.tp_size)``,
    line 957 ``ng = self.num_k_heads // self.tp_size`` whole key heads per GPU): Qwen3.5-397B-A17B's 16 key heads
    refuse 32 GPUs."""
    if m.linear_attention is not None:
        return math.gcd(m.linear_attention.num_key_heads, m.linear_attention.num_value_heads)
    a = m.mamba
    if a is None:
        return 0
    return a.num_heads if a.n_groups == 1 else math.gcd(a.num_heads, a.n_groups)


def mean_mlp_width(m: Model) -> float:
    """``ModelFacts.intermediate_size``: ``intermediate_size``, or a NAS model's mean over the layers that have a
    SwiGLU MLP (Llama-3.3-Nemotron-Super-49B-v1: 1,642,496 / 80 = 20,531.2). An approximation for a NAS model: the
    dense GEMMs' bytes and FLOPs come from the exact parameter count (``params_read_per_step``), but a term that takes
    one MLP width (the activation peak, ``planner.model.memory.activation_peak_bytes``) sees one mean layer."""
    if m.nas is not None and m.nas.mlp_layers:
        widths = [w for w in m.nas.ffn_intermediate if w]
        total = sum(widths)
        return total // len(widths) if total % len(widths) == 0 else total / len(widths)
    return m.intermediate_size


def model_facts(m: Model) -> ModelFacts:
    """The numbers of one model that the capacity model needs (``planner.model.facts.ModelFacts``), as Python numbers."""
    b = param_breakdown(m)
    swa_layers, window = local_attention_span(m)
    linear = linear_attention_layers(m)
    moe_layers = m.moe_layers
    dsa = m.sparse_attention
    dense_width, routed_width = tp_split_widths(m)
    # Decode streams the output projection (the tied embedding doubles as it) but only looks up
    # one row of the input embedding.
    read = b.non_expert - b.extra - (b.embedding if b.lm_head else 0)
    layers = mixer_layers(m)
    kept_read = b.norms + b.router + quantized_kept_16bit_params(m)  # kept 16-bit and read every step
    return ModelFacts(
        num_layers=layers,
        hidden_size=m.hidden_size,
        intermediate_size=mean_mlp_width(m),
        mlp_split_width=dense_width,
        expert_split_width=routed_width,
        weight_block_size=m.weight_block_size or 0,
        vocab_size=m.vocab_size,
        num_attention_heads=m.num_attention_heads,
        num_kv_heads=1 if m.mla is not None else m.num_kv_heads,
        kv_elements_per_token_per_layer=kv_elements_per_token_per_layer(m),
        full_attention_layers=full_attention_layers(m),
        sliding_window_layers=swa_layers,
        sliding_window=window,
        attention_flop_per_context_token_per_layer=attention_flop_per_context_token_per_layer(m),
        prefill_attention_flop_per_token_pair_per_layer=prefill_attention_flop_per_token_pair_per_layer(m),
        params_total=b.total,
        params_non_expert=b.non_expert,
        params_routed_experts=b.routed_experts,
        params_read_per_step=read,
        params_kept_16bit=b.embedding + b.lm_head + kept_read + (b.extra if m.extra_params_loaded else 0),
        params_read_kept_16bit=(b.lm_head or b.embedding) + kept_read,
        # MTP speculative decoding loads the MTP layers (at the weight precision: DeepSeek-V3's layer 61 is stored in
        # fp8 like the others) less the embedding and output head it shares with the target (``mtp_held_params``); a
        # catalog whose extra parameters are loaded already counts them
        params_not_loaded=0 if m.extra_params_loaded else b.extra - (mtp_held_params(m) if m.mtp_loaded else 0),
        params_per_expert_layer=(b.routed_experts / (moe_layers * m.moe.num_experts)) if m.moe else 0.0,
        moe_layers=moe_layers,
        num_experts=m.moe.num_experts if m.moe else 0,
        experts_per_token=m.moe.experts_per_token if m.moe else 0,
        params_active=b.active,
        linear_attention_layers=linear,
        state_bytes_per_sequence=state_bytes_per_sequence(m),
        linear_attention_flop_per_token=linear_attention_flop_per_token(m),
        attended_tokens_max=float(dsa.top_k) if dsa is not None else float("inf"),
        indexer_bytes_per_token_per_layer=dsa.indexer_cache_bytes_per_token if dsa is not None else 0,
        fp8_ds_mla_bytes_per_token_per_layer=fp8_ds_mla_bytes_per_token(m) if dsa is not None else 0,
        indexer_flop_per_context_token_per_layer=2 * dsa.index_n_heads * dsa.index_head_dim if dsa is not None else 0,
        local_attention_chunked=float(bool(m.chunked_attention_layers and m.attention_chunk_size)),
        ssm_split_width=ssm_split_width(m),
        mla_attention=1.0 if m.mla is not None else 0.0,
        params_output_head=b.lm_head or b.embedding,
        params_routed_expert_biases=routed_expert_biases(m),
        params_replicated_tp=tp_replicated_params(m),
        **draft_facts(m),
    )


def tp_replicated_params(m: Model) -> int:
    """Parameters every GPU of a tensor-parallel group holds whole (``ModelFacts.params_replicated_tp``): an MLA
    model's down-projections of the query and the latent, fused into one matrix of hidden x (q_lora_rank +
    kv_lora_rank + qk_rope_head_dim) per layer and built unsplit by both engines: vLLM
    ``DeepSeekV2FusedQkvAProjLinear`` (a ``MergedColumnParallelLinear`` with ``disable_tp=True``,
    vllm/model_executor/models/deepseek_v2.py, vllm-project/vllm 002d6073), SGLang ``fused_qkv_a_proj_with_mqa =
    ReplicatedLinear(hidden_size, q_lora_rank + kv_lora_rank + qk_rope_head_dim)`` (python/sglang/srt/models/
    deepseek_v2.py, "For tensor parallel attention"). DeepSeek-V3 (config.json: hidden_size 7168, q_lora_rank 1536,
    kv_lora_rank 512, qk_rope_head_dim 64, 61 layers): 61 x 7168 x 2112 = 923,467,776. 0 for a model without MLA or
    without a query down-projection (q_lora_rank null: DeepSeek-V2-Lite, not counted). Not counted either: the
    routers (replicated too, kept 16-bit), a DSA indexer's replicated ``wq_b`` and ``wk``, the MTP layers'."""
    a = m.mla
    if a is None or not a.q_lora_rank:
        return 0
    return m.num_layers * m.hidden_size * (a.q_lora_rank + a.kv_lora_rank + a.qk_rope_head_dim)


def draft_facts(m: Model) -> dict[str, float]:
    """What a speculating deployment's draft holds in GPU memory (``ModelFacts.draft_*``): a separate draft's weights
    and KV (``Model.draft_weight_bytes``, ``draft_kv_elements_per_token``: an EAGLE-3 head), and with the MTP layers
    loaded (``Model.mtp_loaded``) their KV cache: each MTP layer one more attention layer of the model's own, its KV
    values (and a DSA model's indexer key) per token, at the KV precision. vLLM: ``EagleProposer.load_model``
    (``vllm/v1/spec_decode/eagle.py``, commit 008603a3) takes the attention layers the draft (EAGLE head or MTP
    module) adds, indexer layers apart, and ``GPUModelRunner.get_kv_cache_spec`` (``vllm/v1/worker/gpu_model_runner.
    py``) gives every attention layer of the config its KV cache spec, the draft's included, in one cache of the
    target's tokens. SGLang: the draft worker's ``ModelRunnerKVCacheMixin.profile_max_num_token``
    (``python/sglang/srt/model_executor/model_runner_kv_cache_mixin.py``) sizes its cells with
    ``num_nextn_predict_layers`` layers (an EAGLE-3 head: its one), for as many tokens as the target's pool
    (``init_memory_pool``: ``draft_runner_cache_size``). Zero for a deployment not speculating."""
    kv, indexer, routed = float(m.draft_kv_elements_per_token), 0.0, 0.0
    if m.mtp_loaded and m.mtp_layers:
        kv += m.mtp_layers * kv_elements_per_token_per_layer(m)
        if m.sparse_attention is not None:
            indexer = float(m.mtp_layers * m.sparse_attention.indexer_cache_bytes_per_token)
        routed = float(mtp_routed_expert_params(m))
    return {
        "draft_weight_bytes": float(m.draft_weight_bytes),
        "draft_kv_elements_per_token": kv,
        "draft_indexer_bytes_per_token": indexer,
        "draft_kv_heads": float(m.draft_kv_heads),
        "draft_routed_expert_params": routed,
    }


def mtp_held_params(m: Model) -> int:
    """Parameters a run speculating with MTP holds for the MTP layers: the checkpoint's ``mtp_params`` less the stored
    copies of the input embedding and output head (``Model.mtp_shared_params``), which both engines replace by the
    target's own tensors before the KV cache is sized, so each GPU holds them once, as the target's:

    - vLLM: ``DeepSeekMTP._rewrite_spec_layer_name`` maps ``model.layers.61.embed_tokens`` to the predictor's one
      top-level ``embed_tokens`` (``shared_weight_names``, vllm/model_executor/models/deepseek_mtp.py, vllm-project/vllm
      03356f8c); after loading the draft, ``SpecDecodeBaseProposer.load_model`` -> ``_maybe_share_embeddings`` deletes
      it and points it at the target's (an MTP draft: always, where the pipeline-parallel size is 1) and
      ``_maybe_share_lm_head`` does the same for every MTP layer's ``shared_head.head`` ("MTP models call
      compute_logits via shared_head.head ... Always share it explicitly", vllm/v1/spec_decode/llm_base_proposer.py,
      vllm-project/vllm 82720b1e; added by pull request 34385, merged 2026-02-11). This runs inside
      ``GPUModelRunner.load_model`` (vllm/v1/worker/gpu_model_runner.py: ``self.drafter.load_model(self.model)``, then
      ``self.model_memory_usage = m.consumed_memory``, as public walk-throughs of that file quote it), so the weight
      memory the KV budget subtracts is measured after the draft's own copies are freed. Before 34385
      (``EagleProposer.load_model``, vllm/v1/spec_decode/eagle.py, 008603a3) only the embedding was shared: DeepSeek's
      draft kept its own ``shared_head.head`` (vocab x hidden, bf16 in the fp8 checkpoint: 1.85 GB whole), not
      modelled here.
    - SGLang: ``DeepseekV3ForCausalLMNextN.load_weights`` skips ``shared_head.head`` and ``embed_tokens`` ("Use shared
      head and embed weights from target model", python/sglang/srt/models/deepseek_nextn.py, sgl-project/sglang
      0114f9c9) and ``EAGLEWorker.__init__`` hands the draft the target's (``get_embed_and_head`` ->
      ``set_embed_and_head``, python/sglang/srt/speculative/eagle_worker.py, 00559eac) for every non-EAGLE-3 draft;
      the target's KV pool is sized before the draft worker is built (``profile_max_num_token``).

    DeepSeek-R1 (config.json: vocab_size 129280, hidden_size 7168): 13,463,426,304 - 2 x 129280 x 7168 =
    11,610,068,224. 0 for a model without MTP layers."""
    return m.mtp_params - m.mtp_shared_params


def mtp_routed_expert_params(m: Model) -> float:
    """The routed experts of a MoE model's MTP layers (``Model.mtp_layers``), one MoE layer's each: mtp_layers x routed
    experts / MoE layers; 0 for a dense model. Each MTP layer is one more decoder layer of the model's own, built with
    its parallel config, so its routed experts are split or spread over the group as every MoE layer's are: vLLM's
    ``DeepSeekMultiTokenPredictorLayer`` holds ``mtp_block = DeepseekV2DecoderLayer(vllm_config, prefix)``
    (vllm/model_executor/models/deepseek_mtp.py, vllm-project/vllm 03356f8c), SGLang's ``DeepseekModelNextN`` a
    ``DeepseekV2DecoderLayer(config, 0, quant_config, is_nextn=True)`` whose experts load through ``EPMoE`` under
    ``enable_ep_moe`` (python/sglang/srt/models/deepseek_nextn.py, sgl-project/sglang 0114f9c9). DeepSeek-V3/R1
    (config.json: num_nextn_predict_layers 1, n_routed_experts 256, moe_intermediate_size 2048, hidden_size 7168):
    256 x 3 x 7168 x 2048 = 11,274,289,152 of the MTP module's 13,463,426,304. The catalog's ``mtp_params`` of every
    MoE model with MTP layers holds at least this (GLM-4.5: 3,774,873,600 of 5,539,962,272)."""
    if m.moe is None or not m.moe_layers or not m.mtp_layers:
        return 0.0
    return m.mtp_layers * param_breakdown(m).routed_experts / m.moe_layers


MODEL_FACT_FIELDS = tuple(f.name for f in fields(ModelFacts))
#: The facts a catalog entry has (the workbook's Models columns, ``=CATALOG_INFO``): all but a speculating
#: deployment's draft (``draft_facts``), which no catalog entry holds
CATALOG_FACT_FIELDS = tuple(f for f in MODEL_FACT_FIELDS if not f.startswith("draft_"))


#: vLLM's fp8 cache of a DSA model (DeepSeek-V3.2, GLM-5): any fp8 ``--kv-cache-dtype`` becomes ``fp8_ds_mla``
#: (``DeepseekV32ForCausalLM.verify_and_update_config``, vllm/model_executor/models/config.py), whose page is
#: ``block_size * 656`` (``MLAAttentionSpec.real_page_size_bytes``, vllm/v1/kv_cache_interface.py, vllm-project/vllm
#: 001cabc1be16; the layout: vllm/v1/attention/backends/mla/flashmla_sparse.py).
FP8_DS_MLA_SOURCE = (
    "vLLM fp8_ds_mla: MLAAttentionSpec.real_page_size_bytes = block_size * 656 (vllm/v1/kv_cache_interface.py, "
    "vllm-project/vllm 001cabc1be16); any fp8 KV of DeepSeek-V3.2 becomes fp8_ds_mla "
    "(DeepseekV32ForCausalLM.verify_and_update_config, vllm/model_executor/models/config.py, 1936cf3841ed)"
)


def fp8_ds_mla_bytes_per_token(m: Model) -> int:
    """Bytes per token per layer of vLLM's ``fp8_ds_mla`` latent (``FP8_DS_MLA_SOURCE``): the NoPE latent in fp8, one
    fp32 scale per 128 of its values, the RoPE part in bf16: kv_lora_rank + kv_lora_rank / 128 x 4 + rope dim x 2 =
    512 + 16 + 128 = 656 for DeepSeek-V3.2 and GLM-5 (vLLM hard-codes 656); 0 for a model without MLA."""
    if m.mla is None:
        return 0
    return m.mla.kv_lora_rank + m.mla.kv_lora_rank // 128 * 4 + m.mla.qk_rope_head_dim * 2
