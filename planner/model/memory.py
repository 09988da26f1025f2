"""Memory of a deployment: weights, KV cache, the engine's budget and the batch that fits. Pure formulas.

Every function takes typed facts (``planner.model.facts``) and numbers or numpy arrays; arrays broadcast.
Bytes are exact; a tensor-parallel group of ``gpus`` GPUs splits weights and KV heads evenly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from planner.model import ops
from planner.model.facts import ArrayLike, EngineFacts, EngineMemoryRules, GpuFacts, ModelFacts, PrecisionFacts
from planner.model.layouts import is_pipeline, pipeline_stages, spreads_experts


def weight_bytes(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """W = linear non-expert params x B/param + params kept 16-bit x 2 B + routed-expert params x expert B/param.

    Linear non-expert = non-expert - kept 16-bit - not loaded. Quantized checkpoints (AWQ, GPTQ, llm-compressor,
    ModelOpt) keep embeddings, output head, norms and routers in 16-bit. Llama 2 70B at fp16: 68,976,648,192 x 2 B
    = 137,953,296,384 B; Llama-3.1-8B at int4: 6,979,321,856 x 0.515625 + 1,050,939,392 x 2 = 5,700,591,616 B.
    Routed experts: ``routed_expert_bytes`` (their biases 16-bit).
    """
    quantized, kept, experts = weight_parts(model, precision)
    return quantized + kept + experts


def weight_parts(model: ModelFacts, precision: PrecisionFacts) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """``weight_bytes``'s three parts, (linear layers at the weight format, params kept 16-bit, routed experts), which
    sum to it. Qwen2.5-32B at int4: 31,206,080,512 linear params x 0.515625 B = 16,090,635,264 B, and 2 x 152,064 x
    5,120 embedding and output-head params + 660,480 norm params (64 layers x 2 x 5,120 + 5,120) = 1,557,795,840
    params x 2 B = 3,115,591,680 B: 19,206,226,944 B in all (trial 32 F5: plan's weights line shows the split)."""
    linear = model.params_non_expert - model.params_kept_16bit - model.params_not_loaded
    return (
        linear * precision.weight_bytes_per_param,
        model.params_kept_16bit * precision.kept_bytes_per_param,
        routed_expert_bytes(model, precision),
    )


def routed_expert_bytes(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """All routed experts as stored: params x expert B/param + their bias values x (max(expert B/param, kept B/param)
    - expert B/param): a quantized format packs the matrices, not the biases. gpt-oss-120b's MXFP4 checkpoint
    stores ``*_blocks`` and ``*_scales`` as U8 and ``gate_up_proj_bias`` / ``down_proj_bias`` as BF16 (the model page's
    tensor types: BF16, U8); vLLM's ``Mxfp4MoEMethod.create_weights`` loads ``w13_bias`` and ``w2_bias`` as
    torch.bfloat16. 114,701,598,720 params x 0.53125 + 39,813,120 biases x (2 - 0.53125) = 60,993,699,840 B.
    Not modelled: on Hopper vLLM's Triton backend (``Mxfp4Backend.TRITON``) then holds the biases in fp32
    (``process_weights_after_loading``, commit 007d50058a06), 0.07 GiB more for gpt-oss-120b."""
    experts = model.params_routed_experts * precision.expert_bytes_per_param
    biases = model.params_routed_expert_biases
    if type(biases) is float and biases == 0.0:  # no expert biases (every model but gpt-oss): nothing added
        return experts
    ebpp = precision.expert_bytes_per_param
    return experts + biases * (ops.maximum(ebpp, precision.kept_bytes_per_param) - ebpp)


def loaded_expert_padding_bytes(model: ModelFacts, precision: PrecisionFacts, engine: EngineMemoryRules) -> ArrayLike:
    """Bytes an engine's MXFP4 MoE kernels add to the routed experts when loading them: the experts' hidden size
    padded to a multiple of a (``engine.mxfp4_expert_hidden_alignment``; 0: none), every expert matrix having the
    hidden size as one dimension: routed experts' bytes (``routed_expert_bytes``) x (ceil(H / a) x a / H - 1).

    vLLM (0.10.1 on, gpt-oss support): on Hopper the Triton backend swizzles each expert matrix into
    ``HopperMXValueLayout``, whose ``_padded_shape`` aligns one dimension to 256 and the other to 64
    (triton-lang/triton python/triton_kernels/triton_kernels/tensor_details/layout_details/hopper_value.py,
    commit 000df03e48; vLLM ``_swizzle_mxfp4``); on GPUs without it (A100: ``Mxfp4Backend.MARLIN``)
    ``Mxfp4MoEMethod.create_weights`` pads ``hidden_size = round_up(hidden_size, 256)`` (and the expert width per GPU
    to 128, not modelled: +2.2% of gpt-oss's experts on one GPU) (vllm/model_executor/layers/quantization/mxfp4.py,
    commit 007d50058a06). SGLang's ``Mxfp4MoEMethod`` swizzles with the same triton_kernels layout
    (python/sglang/srt/layers/quantization/mxfp4.py, commit 0043c43a42). gpt-oss (H = 2,880 -> 3,072): experts
    x 1.0667. gpt-oss-120b on one H100: 60.76 + 3.79 = 64.55 GiB (the experts' biases at bf16), where vLLM logged 'Model loading took 64.38 GiB'
    (catalogs/reference/vllm_startup_extra.csv XL05); gpt-oss-20b: 13.44 GiB, logged 13.47 (XL04).
    """
    a = engine.mxfp4_expert_hidden_alignment
    h = model.hidden_size
    factor = ops.where(a > 0, ops.ceil(h / ops.maximum(a, 1)) * ops.maximum(a, 1) / h, 1.0) - 1.0
    return routed_expert_bytes(model, precision) * precision.expert_mxfp4 * factor


def experts_as_loaded(
    precision: PrecisionFacts, limits: EngineFacts, gpus: ArrayLike, parallelism: str = "tp"
) -> PrecisionFacts:
    """``precision`` with the routed experts at the width the engine loads them: where MXFP4 experts are spread over
    more than one GPU (``parallelism`` "tp-ep" or "dp-ep" and ``gpus`` > 1) and the engine loads them at another width
    (``limits.expert_parallel_expert_bytes_per_param`` > 0), expert B/param = that width and no MXFP4 padding
    (``expert_mxfp4`` 0); elsewhere as given. Applying it twice changes nothing.

    SGLang 0.5.1-0.5.9 off Blackwell: ``ServerArgs`` gives gpt-oss the triton_kernel MoE runner only at ep_size 1, and
    ``Mxfp4MoEMethod.process_weights_after_loading`` upcasts the experts to bf16 for any other runner (``upcast_from_mxfp``;
    ``planner.engines.kernel_paths.SGLANG_EP_UPCAST_SOURCE``): 2 B per expert weight instead of 0.53125, the hidden size
    not padded. gpt-oss-120b's 114.7e9 routed params: 229.4 GB of experts instead of 60.9 (65.0 padded), the whole model
    233.66 GB as loaded, what its bf16 checkpoint weighs."""
    width = limits.expert_parallel_expert_bytes_per_param
    if not spreads_experts(parallelism) or not ops.any_positive(width):  # experts not spread, or no engine upcasts
        return precision
    up = experts_upcast(precision, limits, gpus, parallelism)
    ebpp = precision.expert_bytes_per_param
    return replace(
        precision, expert_bytes_per_param=ebpp + up * (width - ebpp), expert_mxfp4=precision.expert_mxfp4 * (1 - up)
    )


def experts_upcast(
    precision: PrecisionFacts, limits: EngineFacts, gpus: ArrayLike, parallelism: str = "tp"
) -> ArrayLike:
    """1 where the engine loads MXFP4 experts at another width (``experts_as_loaded``): the experts spread over more
    than one GPU (``parallelism`` "tp-ep" or "dp-ep", ``gpus`` > 1), MXFP4 (``expert_mxfp4``) and an engine that loads
    them so (``limits.expert_parallel_expert_bytes_per_param`` > 0: SGLang 0.5.1-0.5.9 off Blackwell); 0 elsewhere."""
    if not spreads_experts(parallelism):
        return 0
    return (limits.expert_parallel_expert_bytes_per_param > 0) * (precision.expert_mxfp4 > 0) * (gpus > 1)


def mxfp4_experts_refused(model: ModelFacts, precision: PrecisionFacts, limits: EngineFacts) -> ArrayLike:
    """True where the engine release cannot load the model's routed experts in MXFP4 on the GPU
    (``limits.mxfp4_experts_refused``: TensorRT-LLM 1.x below SM 9.0, whose ``WFP4A16FusedMoEMethod.create_weights``
    raises "WFP4A16 MoE is unsupported on SM80"; ``planner.engines.kernel_paths``): a model with routed experts whose
    expert precision is MXFP4 (gpt-oss as published). False for dense models and other expert formats."""
    return (limits.mxfp4_experts_refused > 0) & (precision.expert_mxfp4 > 0) & (model.params_routed_experts > 0)


def cached_tokens_per_layer_sum(model: ModelFacts, context_tokens: ArrayLike) -> ArrayLike:
    """Sum over layers of tokens held: full layers hold the context C, sliding-window layers min(C, window)."""
    return model.full_attention_layers * context_tokens + model.sliding_window_layers * ops.minimum(
        context_tokens, model.sliding_window
    )


def attended_tokens_per_layer_sum(model: ModelFacts, context_tokens: ArrayLike) -> ArrayLike:
    """Sum over layers of tokens one query attends to: full layers min(C, top-k) (DSA; top-k is inf for dense
    attention, so C), sliding-window layers min(C, window); linear-attention layers none."""
    return model.full_attention_layers * ops.minimum(
        context_tokens, model.attended_tokens_max
    ) + model.sliding_window_layers * ops.minimum(context_tokens, model.sliding_window)


def left_to_dense(attended: ArrayLike, sparse_kernel: ArrayLike) -> ArrayLike:
    """``attended`` (tokens or token pairs) x (1 - ``sparse_kernel``): the share the attention curves time, the rest
    left to the engine's fp8 sparse MLA kernel (``planner.model.operators.sparse_mla_applies``). The plain float 0.0
    (every model without DSA, the common case) returns ``attended`` as it is: x 1.0 changes no value, it only costs
    a pass over the arrays (and makes whole numbers floats)."""
    if type(sparse_kernel) is float and sparse_kernel == 0.0:
        return attended
    return attended * (1.0 - sparse_kernel)


def kv_bytes(
    model: ModelFacts, precision: PrecisionFacts, context_tokens: ArrayLike, batch: ArrayLike = 1
) -> ArrayLike:
    """KV cache of ``batch`` sequences: (values per token per layer x bytes + indexer bytes) x layer-tokens x batch.

    MHA/GQA/MQA: 2 x KV heads x head dim values; MLA: kv_lora_rank + rope dim. Llama 2 70B, fp16:
    2 x 8 x 128 x 2 B x 80 layers = 327,680 B per token. DSA (DeepSeek-V3.2) adds its indexer's key per token and
    layer (132 B, fp8 + scale, whatever the KV precision); its fp8 latent under vLLM is ``fp8_ds_mla``, 656 B, not
    576 (``kv_latent_bytes_per_token_per_layer``): 61 x (656 + 132) = 48,068 B per token. Linear-attention layers hold no per-token cache: their
    fixed state is ``state_bytes``.
    """
    return kv_bytes_of_layer_tokens(model, precision, cached_tokens_per_layer_sum(model, context_tokens), batch)


def kv_latent_bytes_per_token_per_layer(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """Bytes one cached token's attention values take in one layer, the indexer key apart: values x bytes + the
    engine's layout extra (vLLM's ``fp8_ds_mla`` for a DSA model's fp8 cache: 576 x 1 + 80 = 656 B)."""
    return (
        model.kv_elements_per_token_per_layer * precision.kv_bytes_per_element
        + precision.kv_layout_extra_bytes_per_token_per_layer
    )


def kv_bytes_of_layer_tokens(
    model: ModelFacts, precision: PrecisionFacts, layer_tokens: ArrayLike, batch: ArrayLike = 1
) -> ArrayLike:
    """``kv_bytes`` from the tokens held summed over layers (``cached_tokens_per_layer_sum``), for a caller that
    has them: (values per token per layer x bytes + indexer bytes per token per layer) x layer-tokens x batch."""
    per_token = kv_latent_bytes_per_token_per_layer(model, precision)
    return (per_token + model.indexer_bytes_per_token_per_layer) * layer_tokens * batch


def state_bytes(model: ModelFacts, batch: ArrayLike = 1) -> ArrayLike:
    """Linear-attention state of ``batch`` sequences: state bytes per sequence x batch, whatever the context.

    The state is split by heads under tensor parallelism (no replication); one slot per running sequence (vLLM
    without prefix caching of hybrid models; SGLang's radix cache keeps extra slots, not counted). 0 for models
    without linear-attention layers.
    """
    return model.state_bytes_per_sequence * batch


def decode_attention_bytes(
    model: ModelFacts,
    precision: PrecisionFacts,
    context_tokens: ArrayLike,
    batch: ArrayLike,
    replication: ArrayLike = 1.0,
    sparse_kernel: ArrayLike = 0.0,
) -> ArrayLike:
    """Bytes one decode step's attention moves: the KV of the tokens each query attends to (DSA: the top-k latents;
    sliding windows: the window) + the indexer keys of every cached token (DSA scores them all), x batch x the
    KV copies; + the linear-attention state, read and written once per sequence (2 x state bytes x batch).

    ``sparse_kernel`` 1: the latents are timed by the engine's fp8 sparse MLA kernel instead
    (``planner.model.operators.sparse_mla_time_s``): only the indexer keys and the state are counted."""
    per_token = kv_latent_bytes_per_token_per_layer(model, precision)
    attended = left_to_dense(attended_tokens_per_layer_sum(model, context_tokens), sparse_kernel)
    kv = per_token * attended + model.indexer_bytes_per_token_per_layer * cached_tokens_per_layer_sum(
        model, context_tokens
    )
    return kv * batch * replication + 2.0 * state_bytes(model, batch)


def decode_attention_flop(
    model: ModelFacts, context_tokens: ArrayLike, batch: ArrayLike, sparse_kernel: ArrayLike = 0.0
) -> ArrayLike:
    """FLOPs of one decode step's attention: batch x (FLOP per attended token x attended layer-tokens + the DSA
    indexer's FLOP per cached token (2 x index heads x index dim) x full-attention layer-tokens + the linear layers'
    recurrence per token); ``sparse_kernel`` 1: the attended latents' FLOPs left to the fp8 sparse MLA kernel
    (``decode_attention_bytes``)."""
    attended = left_to_dense(attended_tokens_per_layer_sum(model, context_tokens), sparse_kernel)
    indexed = model.indexer_flop_per_context_token_per_layer * model.full_attention_layers * context_tokens
    return batch * (
        model.attention_flop_per_context_token_per_layer * attended + indexed + model.linear_attention_flop_per_token
    )


#: vLLM 0.33.0 ``vllm/v1/core/kv_cache_planning.py`` lines 521-531: the group size is the smaller attention type's
#: layer count, or the larger's when it is under 1.5 times the smaller (gpt-oss-20b + EAGLE: 12 sliding, 13 full).
KV_GROUP_SIZE_RATIO = 1.5


def kv_cache_groups(model: ModelFacts) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """(layers per group, full-attention groups, local groups) of vLLM's hybrid KV cache manager.

    Every group holds the same number of layers s: s = min(full, local), or max(full, local) when that is under
    1.5 x the minimum; each type gets ceil(layers / s) groups, the last padded with empty layers ("Add %d padding
    layers, may waste at most %.2f%% KV cache memory", vLLM 0.33.0 ``vllm/v1/core/kv_cache_planning.py`` lines
    521-540). One attention type: one group of all layers. Gemma-3-27B (10 full, 52 sliding): s = 10, 1 + 6
    groups, 70 layer slots for 62 layers.
    """
    full, local = model.full_attention_layers, model.sliding_window_layers
    low, high = ops.minimum(full, local), ops.maximum(full, local)
    size = ops.where(low > 0, ops.where(high < KV_GROUP_SIZE_RATIO * low, high, low), high)
    full_groups = ops.where(full > 0, ops.ceil(full / size), 0.0)
    local_groups = ops.where(local > 0, ops.ceil(local / size), 0.0)
    return size, full_groups, local_groups


def kv_blocks_per_request(
    model: ModelFacts, tokens: ArrayLike, block_size: int, scheduled_tokens: ArrayLike
) -> tuple[ArrayLike, ArrayLike]:
    """(blocks of one full-attention group, blocks of one local group) a request of ``tokens`` holds in vLLM
    with ``scheduled_tokens`` in flight.

    Full: ceil(L / b). Sliding window W: ceil(min(W - 1 + s, L) / b) + 1 (+1: the window need not start on a block
    boundary; ``SlidingWindowSpec``, vLLM 0.33.0 ``vllm/v1/kv_cache_interface.py`` line 944). Chunked attention of
    chunk c: ceil(min(c + s, L) / b) (``ChunkedLocalAttentionSpec``, line 881). The start-up log's "Maximum
    concurrency" takes s = max_num_batched_tokens (a prefill chunk); a sequence decoding holds s = 1.
    """
    b = float(max(int(block_size), 1))
    window = model.sliding_window
    chunked = model.local_attention_chunked
    held = ops.minimum(window - 1.0 + scheduled_tokens + chunked, tokens)
    local = ops.ceil(held / b) + (1.0 - chunked)
    return ops.ceil(tokens / b), local


def padded_kv_layer_tokens(model: ModelFacts, tokens: ArrayLike, block_size: int, scheduled_tokens: ArrayLike = 1.0):
    """Token slots summed over layers that one request of ``tokens`` takes in vLLM's paged cache: layers per group x
    block x (full groups x full blocks + local groups x local blocks) (``kv_cache_groups``,
    ``kv_blocks_per_request``): padding layers and a local group's extra block included. Gemma-3-27B at 8,192 tokens
    decoding (s = 1), b = 16: 10 x 16 x (512 + 6 x 65) = 144,320, where 10 x 8,192 + 52 x 1,024 = 135,168 counts
    the layers alone (max batch 6.8% higher).
    """
    size, full_groups, local_groups = kv_cache_groups(model)
    full, local = kv_blocks_per_request(model, tokens, block_size, scheduled_tokens)
    return (
        size
        * float(max(int(block_size), 1))
        * (full_groups * full + ops.where(local_groups > 0, local_groups * local, 0.0))
    )


def vllm_sliding_tokens_factor(model: ModelFacts, contexts: ArrayLike, block_size: int) -> float:
    """How many more context tokens vLLM's hybrid cache holds than its logged "GPU KV cache size" counts, for requests
    of ``contexts`` tokens: sum(L x C) / sum(``padded_kv_layer_tokens``(C)), L the layers with a KV cache.

    The log's tokens are the pool's pages per group x block (every layer's token counted, ``kv_cache_tokens``); a
    request holds ceil(C / b) pages in each full group and at most ceil((W - 1 + 1) / b) + 1 in each sliding
    group (``SlidingWindowSpec``, ``kv_blocks_per_request``), so a request of C tokens takes padded(C) / L of them.
    gpt-oss (18 full + 18 sliding-128 layers, b = 16): C = 313 (ShareGPT's mean prompt and half its output)
    takes 18 x 16 x (20 + 9) / 36 = 232 tokens, x1.35; C = 4,100: x1.92. 1 for a model without local layers.
    ``contexts``: each request's mean context over its life (prompt + output / 2), the scale applied to all.
    """
    c = np.maximum(np.asarray(contexts, dtype=float).ravel(), 1.0)
    layers = float(model.full_attention_layers + model.sliding_window_layers)
    if not float(model.sliding_window_layers) > 0 or not layers > 0:
        return 1.0
    padded = np.asarray(padded_kv_layer_tokens(model, c, block_size), dtype=float)
    return float(layers * c.sum() / padded.sum())


#: SGLang's default share of the sliding-window pool's tokens in the full-attention pool's (``--swa-full-tokens-ratio``,
#: ``python/sglang/srt/server_args.py``: ``swa_full_tokens_ratio: float = 0.8``).
SGLANG_SWA_FULL_TOKENS_RATIO = 0.8


def sglang_full_pool_factor(model: ModelFacts, swa_full_tokens_ratio: float = SGLANG_SWA_FULL_TOKENS_RATIO) -> float:
    """SGLang's full-attention pool over its profiled token count for a model with sliding-window and full layers:
    L / (ratio x sliding layers + full layers). SGLang sizes the memory for ``max_total_num_tokens`` tokens of every
    layer, then splits it so that the sliding pool holds ratio x the full pool's tokens (``ModelRunner.
    set_num_token_hybrid``: ``denominator = swa_full_tokens_ratio * swa_layers_num + full_layers_num``;
    ``full_max_total_num_tokens = int(total_tokens / denominator)``, python/sglang/srt/model_executor/model_runner.py).
    gpt-oss: 36 / (0.8 x 18 + 18) = 1.111. A request holds its whole context in the full pool (the binding one
    here; the sliding pool, which frees what falls out of the window, is not simulated). 1 without both kinds. Only
    where the release splits the pools for the model: not gpt-oss before 0.5.10, not Gemma 2/3
    (``planner.engines.sglang.sglang_splits_sliding_pool``)."""
    full, local = float(model.full_attention_layers), float(model.sliding_window_layers)
    if not (full > 0 and local > 0):
        return 1.0
    return (full + local) / (swa_full_tokens_ratio * local + full)


def hybrid_state_block_tokens(token_page_bytes: ArrayLike, state_page_bytes: ArrayLike, block_size: int) -> ArrayLike:
    """Attention block size (tokens) vLLM picks for a model with state layers (Mamba-2, Gated DeltaNet): the
    smallest multiple of the kernel's block whose attention page covers one layer's state,
    b x ceil(state page / (b x attention bytes per token)), never below b.

    vLLM 0.33.0 ``Platform._align_hybrid_block_size`` (vllm/platforms/interface.py lines 1098-1101:
    ``attn_block_size = kernel_block_alignment_size * cdiv(mamba_page_size, kernel_block_alignment_size *
    attn_page_size_1_token)``); both pages per GPU (TP splits the state's heads and the KV heads). Nemotron-H-8B
    at TP 1: 16 x ceil(2,158,592 / (16 x 4,096)) = 528 tokens.
    """
    b = float(max(int(block_size), 1))
    blocks = ops.ceil(state_page_bytes / ops.maximum(b * token_page_bytes, 1e-30))
    return b * ops.maximum(blocks, 1.0)


def hybrid_sequence_bytes(
    model: ModelFacts, token_page_bytes: ArrayLike, context_tokens: ArrayLike, gpus: ArrayLike, block_size: int
) -> ArrayLike:
    """Bytes one sequence of ``context_tokens`` takes over the group in vLLM's cache for a model with state layers.

    Every page is one attention block (``hybrid_state_block_tokens``) of one layer: a state layer's page is padded up
    to it (``cache_config.mamba_page_size_padded = attn_page_size``, vllm/platforms/interface.py lines 1118-1128), and
    the layers form groups of equal size (the smaller type's count, or the larger's when under 1.5 x: vLLM 0.33.0
    vllm/v1/core/kv_cache_planning.py lines 521-540), the last group of a type padded. A sequence holds
    ceil(tokens / block) pages per attention layer slot and one page per state layer slot (no prefix caching of
    states). Per GPU: group size x page x (attention groups x ceil(tokens / block) + state groups), times g.
    ``token_page_bytes``: one token of one attention layer on one GPU (replicated KV heads included).
    """
    full, linear = model.full_attention_layers, model.linear_attention_layers
    state_page = model.state_bytes_per_sequence / ops.maximum(linear, 1.0) / gpus
    block = hybrid_state_block_tokens(token_page_bytes, state_page, block_size)
    low, high = ops.minimum(full, linear), ops.maximum(full, linear)
    size = ops.maximum(ops.where(high < KV_GROUP_SIZE_RATIO * low, high, low), 1.0)
    full_groups, state_groups = ops.ceil(full / size), ops.ceil(linear / size)
    page = block * token_page_bytes
    return gpus * size * page * (full_groups * ops.ceil(context_tokens / block) + state_groups)


def pipeline_stage_facts(model: ModelFacts, stages: ArrayLike) -> ModelFacts:
    """The busiest of S pipeline stages (``stages``) as a model of its own: ceil(L / S) of the L layers (vLLM's and SGLang's
    ``get_pp_indices`` split the layers evenly and give the remainder to the first stages; vllm/distributed/utils.py)
    with one vocabulary matrix (the first stage holds the embedding, the last the output head) and what else is kept
    16-bit outside the layers (a loaded vision tower: the first stage's); every per-layer count and sum scaled by
    ceil(L / S) / L. One stage (S = 1) is the whole model.

    Outside the layers: N = kept 16-bit - read kept 16-bit + V (V = vocabulary x hidden) counts the embedding, the head
    when untied and the other kept parameters; the stage holds max(V, kept - read kept) of them. Approximation: a
    hybrid model's state and attention layers are taken in the same proportion on every stage.
    """
    layers = model.num_layers
    f = ops.ceil(layers / stages) / layers
    vocab = model.vocab_size * model.hidden_size
    outside_kept = model.params_kept_16bit - model.params_read_kept_16bit
    outside = outside_kept + vocab
    on_stage = ops.where(stages > 1, ops.maximum(vocab, outside_kept), outside)  # one stage: all of it
    per_layer = (
        "num_layers", "full_attention_layers", "sliding_window_layers", "moe_layers", "linear_attention_layers",
        "state_bytes_per_sequence", "linear_attention_flop_per_token", "params_routed_experts", "params_not_loaded",
        "params_read_per_step", "params_read_kept_16bit", "params_active", "params_output_head",
        "params_replicated_tp",
    )  # fmt: skip
    scaled = {name: getattr(model, name) * f for name in per_layer}
    return replace(
        model,
        **scaled,
        params_total=(model.params_total - outside) * f + on_stage,
        params_non_expert=(model.params_non_expert - outside) * f + on_stage,
        params_kept_16bit=(model.params_kept_16bit - outside) * f + on_stage,
    )


def tensor_parallel_ok(
    model: ModelFacts, gpus: ArrayLike, expert_parallel: ArrayLike = False, kv_heads_any: bool = False
) -> ArrayLike:
    """Whether vLLM loads the model on a tensor-parallel group of ``gpus``: every split it makes is exact.

    heads % g = 0 (``ModelConfig.verify_with_parallel_config``); KV heads % g = 0 or g % KV heads = 0
    (``QKVParallelLinear``: ``divide(kv_heads, tp)`` or ``divide(tp, kv_heads)``; MLA's single latent: any g);
    dense MLP width % g = 0 (``MergedColumnParallelLinear`` / ``RowParallelLinear``: ``divide(size, tp)``;
    Qwen2-7B's 18,944 refuses 28); routed experts' width % g = 0 unless experts are spread whole
    (``FusedMoEConfig.__post_init__``: ``assert self.intermediate_size % tp_size == 0``, vLLM 0.33.0
    ``vllm/model_executor/layers/fused_moe/config.py`` line 1352); and for a block-quantized checkpoint (block b), every split width per GPU a
    multiple of b, routed experts' included (``validate_fp8_block_shape``; ``Fp8MoEMethod.create_weights``:
    "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128").
    ``divide`` asserts an exact division; SGLang's loaders (adapted from vLLM's) raise the same errors.
    A Mamba-2 mixer's heads and groups % g = 0 (``ModelFacts.ssm_split_width``, vLLM 0.33.0 ``MambaMixer2.__init__``,
    vllm/model_executor/layers/mamba/mamba_mixer2.py lines 316-323).
    ``expert_parallel``: experts spread whole over the group (``--enable-expert-parallel``), not split.
    ``kv_heads_any``: the engine gives each GPU ceil(KV heads / g) heads whatever g (TensorRT-LLM's
    ``Attention.__init__``, ``tensorrt_llm/_torch/modules/attention.py`` lines 114-117 at NVIDIA/TensorRT-LLM commit
    c6d3bb2a: ``assert self.num_heads % tp_size == 0``, ``self.num_key_value_heads = (self.num_key_value_heads +
    tp_size - 1) // tp_size``; lines 103-104: with attention data parallelism ``tp_size = 1``), so only the heads
    must divide.
    """
    g, kvh = gpus, model.num_kv_heads
    kv_ok = (ops.mod(kvh, g) == 0) | (ops.mod(g, kvh) == 0) | kv_heads_any
    heads_ok = (ops.mod(model.num_attention_heads, g) == 0) & kv_ok
    experts_ok = (ops.mod(model.expert_split_width, g) == 0) | expert_parallel
    ssm_ok = ops.mod(model.ssm_split_width, g) == 0
    return (
        heads_ok
        & (ops.mod(model.mlp_split_width, g) == 0)
        & experts_ok
        & ssm_ok
        & tp_blocks_ok(model, g, expert_parallel)
    )


def tp_blocks_ok(model: ModelFacts, gpus: ArrayLike, expert_parallel: ArrayLike = False) -> ArrayLike:
    """Whether each GPU's shard of a block-quantized checkpoint holds whole blocks: dense MLP width % (g b) = 0
    and, unless experts are spread whole (expert parallelism), expert width % (g b) = 0. True for g = 1 or b = 0.

    vLLM ``validate_fp8_block_shape`` (``vllm/model_executor/layers/quantization/utils/fp8_utils.py``) checks the
    linear layers' shards when ``tp_size > 1``; ``Fp8MoEMethod.create_weights`` (``quantization/fp8.py``) the
    experts' ``intermediate_size_per_partition % block_n``. DeepSeek-V3 (widths 18,432 and 2,048, b = 128):
    groups of up to 16; 32 leaves 2,048 / 32 = 64 per GPU.
    """
    b = model.weight_block_size
    step = gpus * ops.maximum(b, 1)
    experts_ok = (ops.mod(model.expert_split_width, step) == 0) | expert_parallel
    blocks_ok = (ops.mod(model.mlp_split_width, step) == 0) & experts_ok
    return (gpus == 1) | (b == 0) | blocks_ok


def kv_replication(model: ModelFacts, gpus: ArrayLike) -> ArrayLike:
    """Copies of each KV head the group holds: g x max(1, ceil(KV heads / g)) / KV heads.

    1 when the group splits the KV heads; g / KV heads when each GPU holds one head (vLLM's
    ``num_kv_head_replicas``); TensorRT-LLM gives every GPU ceil(KV heads / g) heads whatever g (``Attention.__init__``,
    tensorrt_llm/_torch/modules/attention.py lines 116-117 at NVIDIA/TensorRT-LLM commit c6d3bb2a): Phi-4's 10 KV
    heads on 4 GPUs are 3 per GPU, 1.2 copies. MLA's latent: g copies.
    """
    kvh = model.num_kv_heads
    return gpus * ops.maximum(1.0, ops.ceil(kvh / gpus)) / kvh


def visible_memory_bytes(gpu: GpuFacts, engine: EngineMemoryRules) -> ArrayLike:
    """Memory the engine sees per GPU: the measured torch-visible total, else physical x (1 - ECC) x visible fraction.

    ECC on GDDR cards (L4, A10G, L40S, T4...) takes 1/16 of the memory when on, as it is by default: an L4's
    24 GiB x 15/16 x 0.9898 = 22.27 GiB, where torch reports 22.03 GiB (the catalog's measured total, used first).
    The ideal engine: physical x (1 - ECC).
    """
    usable = gpu.memory_bytes * (1.0 - gpu.ecc_reserved_fraction)
    if not engine.use_engine_visible_memory:
        return usable
    measured = gpu.engine_visible_memory_bytes
    return ops.where(ops.isnan(measured), usable * engine.visible_memory_fraction, measured)


def activation_peak_bytes(
    model: ModelFacts,
    limits: EngineFacts,
    engine: EngineMemoryRules,
    gpus: ArrayLike,
    precision: PrecisionFacts,
    moe_workspace: bool = True,
) -> ArrayLike:
    """Activation peak per GPU of the engine's profiling run.

    a x batched tokens x (hidden + 2 x MLP width / g) + b x sequences x vocabulary (the sampler sees the whole
    vocabulary on every GPU) + a MoE model's fused-MoE workspace (``moe_workspace_bytes``; ``moe_workspace`` False:
    left out, as for data-parallel ranks, whose dispatch sets the workspace's tokens); a and b are fitted per engine.
    """
    width = model.hidden_size + 2.0 * model.intermediate_size / gpus
    peak = (
        engine.activation_bytes_per_token_width * limits.max_num_batched_tokens * width
        + engine.activation_bytes_per_seq_vocab * limits.max_num_seqs * model.vocab_size
    )
    return peak + moe_workspace_bytes(model, limits, engine, gpus, precision) if moe_workspace else peak


def moe_workspace_bytes(
    model: ModelFacts, limits: EngineFacts, engine: EngineMemoryRules, gpus: ArrayLike, precision: PrecisionFacts
) -> ArrayLike:
    """The fused-MoE workspace the profiling pass holds per GPU: bytes per element x batched tokens x experts per token
    x (max(w, hidden) + max(2w, hidden)), w the routed experts' width per GPU (vLLM 0.19's Triton and CUTLASS-FP8
    experts: one buffer of max(w, hidden) and one of max(2w, hidden) per token and expert, bf16). 0 for a dense model
    and for MXFP4 experts (gpt-oss: vLLM's OpenAI Triton kernels keep a workspace of another shape, not modelled)."""
    w = model.expert_split_width / gpus
    hidden = model.hidden_size
    per_token = model.experts_per_token * (ops.maximum(w, hidden) + ops.maximum(2.0 * w, hidden))
    return (
        engine.moe_workspace_bytes_per_value
        * limits.max_num_batched_tokens
        * per_token
        * (1.0 - precision.expert_mxfp4)
    )


def reserve_bytes_per_gpu(activation_bytes: ArrayLike, gpus: ArrayLike, engine: EngineMemoryRules) -> ArrayLike:
    """Memory kept out of the KV budget per GPU: activation peak + non-torch (+ NCCL buffers when g > 1)."""
    activation, non_torch, collectives = reserve_parts(activation_bytes, gpus, engine)
    return activation + non_torch + collectives


def reserve_parts(
    activation_bytes: ArrayLike, gpus: ArrayLike, engine: EngineMemoryRules
) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """``reserve_bytes_per_gpu``'s parts, (activation peak, non-torch memory, NCCL / custom all-reduce buffers when
    g > 1, else 0), which sum to it. vLLM (profile ``vllm``: 0.25 GiB non-torch, +1.83 GiB when tensor-parallel,
    fitted to 12 vLLM 0.19.0 H100 runs, docs/accuracy.md): Qwen2.5-32B int4 on L40S, 0.616 GB of activations, reads
    0.88 GB per GPU at TP 1 and 2.84 GB at TP 2, the 1.97 GB of buffers the step (trial 32 F6)."""
    collectives = ops.where(gpus > 1, engine.non_torch_bytes_tensor_parallel, 0.0)
    return activation_bytes, engine.non_torch_bytes, collectives


def kv_budget_bytes_per_gpu(
    visible_bytes: ArrayLike,
    weight_bytes_total: ArrayLike,
    gpus: ArrayLike,
    reserve_bytes: ArrayLike,
    memory_utilization: ArrayLike,
    engine: EngineMemoryRules,
) -> ArrayLike:
    """KV budget of one GPU of the group (weights split evenly); negative when the weights do not fit.

    "total" (vLLM):  visible x utilization - weights / g - reserve
    "free" (TensorRT-LLM, LMDeploy): utilization x (visible - weights / g - reserve)
    """
    per_gpu_weights = weight_bytes_total / gpus
    if engine.budget_mode == "free":
        return memory_utilization * (visible_bytes - per_gpu_weights - reserve_bytes)
    return visible_bytes * memory_utilization - per_gpu_weights - reserve_bytes


def kv_cache_tokens(kv_budget_per_gpu: ArrayLike, kv_bytes_per_token_per_gpu: ArrayLike, block_size: int = 1):
    """Token slots of the group's cache (vLLM's "GPU KV cache size"): floor(budget / (bytes x block)) x block.

    Every GPU holds its share of every token, so the group holds as many tokens as one GPU.
    """
    blocks = ops.floor(ops.maximum(kv_budget_per_gpu, 0.0) / (kv_bytes_per_token_per_gpu * block_size))
    return blocks * block_size


def max_concurrency(kv_cache_tokens: ArrayLike, tokens_per_request: ArrayLike, block_size: int = 16) -> ArrayLike:
    """vLLM's "Maximum concurrency for L tokens per request": KV cache tokens / L rounded up to whole blocks."""
    per_request = ops.ceil(np.asarray(tokens_per_request, dtype=float) / block_size) * block_size
    out = np.asarray(kv_cache_tokens, dtype=float) / per_request
    return float(out) if out.ndim == 0 else out


def max_batch_from_budget(kv_budget_total_bytes: ArrayLike, kv_bytes_per_sequence_total: ArrayLike) -> ArrayLike:
    """Sequences that fit: floor(KV budget / KV bytes per sequence). The seeds' trailer size."""
    return ops.floor(ops.maximum(kv_budget_total_bytes, 0.0) / kv_bytes_per_sequence_total)


def draft_weights(model: ModelFacts) -> ArrayLike:
    """Bytes a speculating deployment's separate draft (an EAGLE-3 head) holds beside the model's weights
    (``ModelFacts.draft_weight_bytes``: its parameters x its own bytes each), split over the group as the weights
    are (vLLM loads the draft at the target's tensor-parallel size: ``EagleProposer.load_model``); 0 without one.
    MTP layers are the model's own weights (``params_not_loaded`` leaves them out of it only when not loaded)."""
    return model.draft_weight_bytes


def draft_kv_bytes_per_token(model: ModelFacts, precision: PrecisionFacts) -> ArrayLike:
    """KV bytes per token a speculating deployment's draft caches, the whole group's before replication: its layers'
    KV values x the KV precision + its DSA indexer keys (``ModelFacts.draft_kv_elements_per_token``,
    ``draft_indexer_bytes_per_token``; ``planner.engines.architecture.draft_facts`` cites the engines). Each of its
    layers holds every token of the context, as a full-attention layer of the model does, replicated as the model's
    KV heads are. DeepSeek-R1's MTP layer at bf16: (512 + 64) x 2 B = 1,152 B per token beside 61 x 1,152; Llama 3.3
    70B's EAGLE-3 head: 2 x 8 x 128 x 2 B = 4,096 B beside 80 x 4,096. 0 without a draft."""
    elements = model.draft_kv_elements_per_token
    indexer = model.draft_indexer_bytes_per_token
    if type(elements) is float and elements == 0.0 and type(indexer) is float and indexer == 0.0:
        return 0.0
    # the engine's layout extra once per draft layer of the model's width (DeepSeek-V3.2's one MTP layer: + 80 B at fp8)
    layers = ops.where(
        model.kv_elements_per_token_per_layer > 0,
        elements / ops.maximum(model.kv_elements_per_token_per_layer, 1.0),
        0.0,
    )
    return (
        elements * precision.kv_bytes_per_element
        + precision.kv_layout_extra_bytes_per_token_per_layer * layers
        + indexer
    )


def draft_kv_replication(model: ModelFacts, gpus: ArrayLike, model_replication: ArrayLike) -> ArrayLike:
    """Copies of the draft's KV the group holds: a separate draft's own KV heads split or replicated as the model's are
    (``kv_replication`` of ``draft_kv_heads``: an EAGLE-3 head of 8 KV heads on 4 GPUs, 1); the model's
    ``model_replication`` where the draft caches as the model does (``draft_kv_heads`` 0: MTP layers, MLA's latent on
    every GPU)."""
    heads = model.draft_kv_heads
    own = gpus * ops.maximum(1.0, ops.ceil(ops.maximum(heads, 1.0) / gpus)) / ops.maximum(heads, 1.0)
    return ops.where(heads > 0, own, model_replication)


@dataclass(frozen=True)
class MemoryPlan:
    """Per-scenario memory quantities (arrays or scalars), all in bytes except counts."""

    gpus: ArrayLike  # tensor-parallel group size used
    weight_bytes: ArrayLike  # whole model, as the engine loads it (``loaded_expert_padding_bytes`` included)
    visible_bytes_per_gpu: ArrayLike
    reserve_bytes_per_gpu: ArrayLike  # activation peak + non-torch
    kv_budget_bytes_per_gpu: ArrayLike
    kv_bytes_per_token_per_gpu: ArrayLike
    kv_bytes_per_sequence: ArrayLike  # whole group, replication included
    kv_cache_tokens: ArrayLike  # vLLM's "GPU KV cache size" for the group
    max_batch: ArrayLike  # sequences of ``context`` tokens that fit
    #: bytes a GPU holds beyond weight_bytes / g, tensor parallel: the tensors every rank holds whole
    #: (``tp_replicated_bytes_per_gpu``); 0 on one GPU
    replicated_weight_bytes_per_gpu: ArrayLike = 0.0


def tp_replicated_bytes_per_gpu(model: ModelFacts, precision: PrecisionFacts, gpus: ArrayLike) -> ArrayLike:
    """Bytes each GPU of a tensor-parallel group of ``gpus`` holds beyond its 1/g share of the weights: the tensors
    built whole on every rank (``ModelFacts.params_replicated_tp``, at the main precision), of which a 1/g share is
    already counted: replicated params x B/param x (1 - 1/g). DeepSeek-V3 fp8 on 8 GPUs: 923,467,776 x 1 x 7/8 =
    808,034,304 B (0.81 GB) per GPU (trial 31, F11). 0 on one GPU and for a model without such tensors."""
    rep = model.params_replicated_tp
    if type(rep) is float and rep == 0.0:
        return 0.0
    return rep * precision.weight_bytes_per_param * (1.0 - 1.0 / gpus)


def memory_plan(
    gpu: GpuFacts,
    model: ModelFacts,
    precision: PrecisionFacts,
    limits: EngineFacts,
    engine: EngineMemoryRules,
    context_tokens: ArrayLike,
    gpus: ArrayLike,
    memory_utilization: ArrayLike,
    reserve_bytes: ArrayLike | None = None,
    parallelism: str = "tp",
) -> MemoryPlan:
    """The memory budget on a group of ``gpus``: weights, reserve, KV budget, KV per sequence, max batch.

    max batch = floor(g x KV budget per GPU / (KV bytes of a sequence rounded up to whole blocks x replication
    + linear-attention state of a sequence)); with ``engine.kv_group_padding`` (vLLM) a sequence's blocks are
    ``padded_kv_layer_tokens`` at one decoding token, and a model with state layers pages as
    ``hybrid_sequence_bytes``.
    ``reserve_bytes`` replaces the engine's activation + non-torch estimate when given.

    ``parallelism`` (``planner.model.parallel.PARALLELISMS``): "tp" and "tp-ep" split every layer's weights (experts
    whole or split, the same bytes per GPU); "dp-ep", g attention ranks with the experts spread over them, is the
    plan of one rank, g times: a group of 1 GPU holding the non-experts whole and 1/g of the experts (expert bytes
    / g), with the activation peak of one rank (its MLPs unsplit) + non-torch + the collectives' buffers; each rank
    caches whole sequences (no KV replication): max batch = g x floor(budget / KV of a block-rounded sequence), the
    group's KV cache tokens g x one rank's. A pipeline of S stages (``planner.model.layouts``: "pp" one GPU each, "ppN"
    N of g / N GPUs) is the plan of the busiest stage (``pipeline_stage_facts``) on its g / S GPUs: every stage holds
    every sequence's KV for its own layers, so that stage's max batch and KV cache tokens are the group's.
    """
    precision = experts_as_loaded(precision, limits, gpus, parallelism)
    # as loaded, a speculating deployment's separate draft (an EAGLE-3 head) beside the model
    wb = weight_bytes(model, precision) + loaded_expert_padding_bytes(model, precision, engine) + draft_weights(model)
    if is_pipeline(parallelism):
        stages = pipeline_stages(parallelism, gpus)
        per_stage = gpus / stages
        if reserve_bytes is None:
            reserve_bytes = reserve_bytes_per_gpu(
                activation_peak_bytes(model, limits, engine, per_stage, precision), gpus, engine
            )
        stage = pipeline_stage_facts(model, stages)
        one = memory_plan(
            gpu, stage, precision, limits, engine, context_tokens, per_stage, memory_utilization, reserve_bytes
        )
        whole = one.kv_bytes_per_sequence * model.num_layers / stage.num_layers  # every stage's layers
        return replace(one, gpus=gpus, weight_bytes=wb, kv_bytes_per_sequence=whole)
    if parallelism == "dp-ep":
        if reserve_bytes is None:
            # not the fused-MoE workspace: a rank's experts see the tokens its dispatch gathers (vLLM's all-gather, its
            # MoE DP chunks, batched all-to-all kernels), not read here
            peak = activation_peak_bytes(model, limits, engine, 1.0, precision, moe_workspace=False)
            reserve_bytes = reserve_bytes_per_gpu(peak, gpus, engine)
        # the busiest rank's experts: vLLM's ``determine_expert_map`` (vllm/model_executor/layers/fused_moe/layer.py)
        # gives num_experts // g to each rank and one more to the first num_experts % g, so ceil(E / g) sets the
        # memory (256 over 6 ranks: 43, not 42.67; trial 16, F8); SGLang refuses a g that does not divide E
        experts = ops.maximum(model.num_experts, 1.0)
        busiest = ops.ceil(experts / gpus) / experts
        share = replace(precision, expert_bytes_per_param=precision.expert_bytes_per_param * busiest)
        # a speculating deployment's MTP layers are MoE layers of the model's own, their routed experts spread as the
        # others' (``planner.engines.architecture.mtp_routed_expert_params``; trial 31, F1): counted among the
        # non-experts at the main precision, the busiest rank keeps that share of them
        mtp = model.draft_routed_expert_params
        rank = model
        if not (type(mtp) is float and mtp == 0.0):
            rank = replace(model, params_non_expert=model.params_non_expert - mtp * (1.0 - busiest))
        one = memory_plan(gpu, rank, share, limits, engine, context_tokens, 1.0, memory_utilization, reserve_bytes)
        group = {"kv_cache_tokens": gpus * one.kv_cache_tokens, "max_batch": gpus * one.max_batch}
        return replace(one, gpus=gpus, weight_bytes=wb, **group)
    visible = visible_memory_bytes(gpu, engine)
    if reserve_bytes is None:
        reserve_bytes = reserve_bytes_per_gpu(
            activation_peak_bytes(model, limits, engine, gpus, precision), gpus, engine
        )
    # the tensors every rank holds whole (MLA's fused q_a + kv_a projection) counted once more on each but one GPU
    replicated = tp_replicated_bytes_per_gpu(model, precision, gpus)
    budget = kv_budget_bytes_per_gpu(visible, wb + replicated * gpus, gpus, reserve_bytes, memory_utilization, engine)
    repl = kv_replication(model, gpus)
    per_layer_token = kv_latent_bytes_per_token_per_layer(model, precision) + model.indexer_bytes_per_token_per_layer
    # the layers that cache tokens (num_layers - linear-attention layers for every model but a NAS-pruned one, whose
    # layers may skip attention: planner.engines.architecture.full_attention_layers)
    per_token = per_layer_token * (model.full_attention_layers + model.sliding_window_layers) * repl / gpus
    draft_token = draft_kv_bytes_per_token(model, precision)  # a draft's layers: every token, as a full layer's
    drafting = not (type(draft_token) is float and draft_token == 0.0)  # the common case: no draft, nothing added
    if drafting:
        draft_repl = draft_kv_replication(model, gpus, repl)
        per_token = per_token + draft_token * draft_repl / gpus
    block = max(int(engine.block_size), 1)
    seq_tokens = ops.ceil(context_tokens / block) * block
    if engine.kv_group_padding:  # vLLM: layer groups of equal size, padded; a local group holds one more block
        layer_tokens = padded_kv_layer_tokens(model, context_tokens, block)
        seq_group = kv_bytes_of_layer_tokens(model, precision, layer_tokens) * repl + state_bytes(model)
        # state layers (Mamba-2, Gated DeltaNet): pages of one enlarged attention block, the state padded to it
        state_layers = model.linear_attention_layers
        if not (type(state_layers) is float and not state_layers > 0):  # one scenario without them: nothing to page
            hybrid = hybrid_sequence_bytes(model, per_layer_token * repl / gpus, context_tokens, gpus, block)
            seq_group = ops.where(state_layers > 0, hybrid, seq_group)
    else:
        seq_group = kv_bytes(model, precision, seq_tokens) * repl + state_bytes(model)
    if drafting:
        seq_group = seq_group + draft_token * seq_tokens * draft_repl
    tokens = kv_cache_tokens(budget, per_token, block)
    batch = max_batch_from_budget(budget * gpus, seq_group)
    return MemoryPlan(
        gpus=gpus,
        weight_bytes=wb,
        visible_bytes_per_gpu=visible,
        reserve_bytes_per_gpu=reserve_bytes,
        kv_budget_bytes_per_gpu=budget,
        kv_bytes_per_token_per_gpu=per_token,
        kv_bytes_per_sequence=seq_group,
        kv_cache_tokens=tokens,
        max_batch=batch,
        replicated_weight_bytes_per_gpu=replicated,
    )
