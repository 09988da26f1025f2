"""The numbers the capacity model runs on, as typed records: one field per fact, units in the names.

Every field is a Python number or a numpy array; arrays broadcast against each other, so one record can hold
one scenario or a million. ``planner.catalog.resolve`` fills them from the catalog; the model functions read them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal, Protocol

ArrayLike = Any  # a float or a numpy array of floats


@dataclass(frozen=True)
class ModelFacts:
    """A model's architecture as the capacity model needs it (``planner.engines.architecture.model_facts``)."""

    num_layers: ArrayLike
    hidden_size: ArrayLike
    intermediate_size: ArrayLike
    mlp_split_width: ArrayLike  # gcd of the dense MLP widths tensor parallelism divides exactly (0: none)
    expert_split_width: ArrayLike  # routed experts' width, split per GPU under tensor parallelism (0: dense)
    weight_block_size: ArrayLike  # of the checkpoint loaded: its quantization block (block-FP8: 128); 0: none
    vocab_size: ArrayLike
    num_attention_heads: ArrayLike
    num_kv_heads: ArrayLike  # MLA: 1 (one latent shared by all heads; replicated under tensor parallelism)
    kv_elements_per_token_per_layer: ArrayLike
    full_attention_layers: ArrayLike
    sliding_window_layers: ArrayLike
    sliding_window: ArrayLike  # tokens; inf when the model has none
    attention_flop_per_context_token_per_layer: ArrayLike  # decode (MLA: absorbed form over the latent)
    prefill_attention_flop_per_token_pair_per_layer: ArrayLike  # prefill (MLA: plain multi-head attention)
    params_total: ArrayLike
    params_non_expert: ArrayLike  # stored at the main precision
    params_routed_experts: ArrayLike  # stored at the expert precision (native: e.g. mxfp4 for gpt-oss)
    params_read_per_step: ArrayLike  # dense part streamed every decode step: all but embedding, extra, routed experts
    params_kept_16bit: ArrayLike  # loaded, never quantized: embeddings, output head, norms, routers, loaded towers
    params_read_kept_16bit: ArrayLike  # of those, streamed every decode step: output head, norms, routers
    params_not_loaded: ArrayLike  # in the checkpoint, not loaded by the engine (DeepSeek-V3's MTP module)
    params_per_expert_layer: ArrayLike  # one routed expert of one MoE layer (0 for dense models)
    moe_layers: ArrayLike
    num_experts: ArrayLike  # 0 for dense
    experts_per_token: ArrayLike  # 0 for dense
    params_active: ArrayLike
    # -- hybrid linear attention (Gated DeltaNet) and DeepSeek Sparse Attention; the defaults: neither --
    linear_attention_layers: ArrayLike = 0.0  # layers with a fixed-size state per sequence, no per-token KV
    state_bytes_per_sequence: ArrayLike = 0.0  # those layers' recurrent + conv state of one sequence, all layers
    linear_attention_flop_per_token: ArrayLike = 0.0  # those layers' state update and read per token, all layers
    attended_tokens_max: ArrayLike = float("inf")  # DSA top-k: tokens one query attends to per layer; inf: all
    indexer_bytes_per_token_per_layer: ArrayLike = 0.0  # DSA indexer key cache (fp8 + scale), any KV precision
    # a DSA model's latent as vLLM's fp8_ds_mla record (fp8 NoPE, fp32 scales, bf16 RoPE: 656 B for DeepSeek-V3.2), the
    # bytes its fp8 cache takes where the engine uses that layout (``EngineProfile.fp8_ds_mla_cache``); 0: not DSA
    fp8_ds_mla_bytes_per_token_per_layer: ArrayLike = 0.0
    indexer_flop_per_context_token_per_layer: ArrayLike = 0.0  # DSA indexer scoring of one cached token
    local_attention_chunked: ArrayLike = 0.0  # 1: the local layers are chunked attention (Llama 4), 0: sliding
    ssm_split_width: ArrayLike = (
        0.0  # state layers: the count TP must divide (Mamba-2 heads/groups, DeltaNet heads); 0: none
    )
    mla_attention: ArrayLike = 0.0  # 1: MLA, whose absorbed decode attention runs at the measured MLA rate
    # the output head's GEMM (vocabulary x hidden; a tied embedding doubles as it), one of ``params_read_per_step``: a
    # prefill runs it on each prompt's last token only (``planner.model.prefill``); 0: counted on every token
    params_output_head: ArrayLike = 0.0
    # of ``params_routed_experts``, the experts' bias vectors: stored 16-bit whatever the experts' format (gpt-oss's
    # MXFP4 checkpoint: the *_blocks and *_scales are U8, the *_bias tensors BF16); 0: none
    params_routed_expert_biases: ArrayLike = 0.0
    # of the linear non-expert params (main precision), those every tensor-parallel rank holds whole: MLA's fused
    # q_a + kv_a projection (``planner.engines.architecture.tp_replicated_params``); 0: every tensor split
    params_replicated_tp: ArrayLike = 0.0
    # -- a speculating deployment's draft, held in memory (``planner.model.memory.draft_kv_bytes_per_token``); the
    # defaults: no draft. Not catalog facts: set on the variant a speculating run serves
    # (``planner.serving.speculative.served_model``), never read by the timing model --
    draft_weight_bytes: ArrayLike = 0.0  # a separate draft's weights (EAGLE-3 head), bytes, whole group
    draft_kv_elements_per_token: ArrayLike = (
        0.0  # KV values per token of the draft's layers (MTP, EAGLE-3), all of them
    )
    draft_indexer_bytes_per_token: ArrayLike = 0.0  # the draft's DSA indexer keys per token (MTP of a DSA model)
    draft_kv_heads: ArrayLike = 0.0  # a separate draft's KV heads (its replication over the group); 0: the model's
    # of the loaded MTP layers (counted in ``params_non_expert``, at the main precision), their routed experts: one MoE
    # layer's each, spread over the ranks under "dp-ep" as the model's are (``planner.model.memory.memory_plan``)
    draft_routed_expert_params: ArrayLike = 0.0


@dataclass(frozen=True)
class PrecisionFacts:
    """Bytes per stored value of the weights (main and expert) and of the KV cache."""

    weight_bytes_per_param: ArrayLike
    expert_bytes_per_param: ArrayLike
    kept_bytes_per_param: ArrayLike  # what the weight format leaves in 16-bit (2 B; = weight bytes for "all" formats)
    kv_bytes_per_element: ArrayLike
    #: 1 where the routed experts are MXFP4 (E2M1 values, one E8M0 scale per 32) as an engine's MoE kernel loads
    #: them, padded to its alignment (``planner.model.memory.loaded_expert_padding_bytes``); 0 otherwise.
    expert_mxfp4: ArrayLike = 0.0
    #: the weight format as a bit of the catalog's precisions (2**index; a 16-bit model as published: its bf16 and
    #: fp16 bits, either of which an engine runs it in), tested against ``GpuFacts.weight_formats``; 0: not checked
    weight_format_bits: ArrayLike = 0.0
    #: the KV cache's 16/32-bit format as a bit of the catalog's precisions (as for ``weight_format_bits``; the
    #: default cache of a 16-bit model: both 16-bit bits), tested against ``GpuFacts.weight_formats``: the GPU's
    #: dtypes (vLLM ``CudaPlatformBase.supported_dtypes``: no bf16 below SM 8.0; no fp8 cache below SM 8.0 in vLLM
    #: 0.24, ``planner.deploy.FP8_KV_SOURCE``); 0: not checked (int8 and int4 caches are the engine's matter)
    kv_format_bits: ArrayLike = 0.0
    #: bytes per token per layer the engine's quantized KV layout stores beyond values x ``kv_bytes_per_element``:
    #: vLLM's ``fp8_ds_mla`` for a DSA model's fp8 cache, 656 - 576 = 80 (fp32 scales + the RoPE part kept in bf16;
    #: ``planner.engines.architecture.fp8_ds_mla_bytes_per_token``); 0 elsewhere
    kv_layout_extra_bytes_per_token_per_layer: ArrayLike = 0.0


@dataclass(frozen=True)
class GpuFacts:
    """One GPU's hardware, per scenario. ``peak_flop_per_s`` is the dense peak at the weight precision's math."""

    memory_bytes: ArrayLike
    engine_visible_memory_bytes: ArrayLike  # NaN where the catalog has no measured torch-visible total
    bandwidth_bytes_per_s: ArrayLike
    interconnect_bytes_per_s: ArrayLike  # one direction, per GPU, within the fabric domain
    interconnect_domain_gpus: ArrayLike  # GPUs sharing that fabric (8 on HGX, 2 for bridged pairs, 1 on PCIe; inf: any)
    pcie_bytes_per_s: ArrayLike  # one direction: what a group larger than the domain communicates at
    pcie_latency_s: ArrayLike  # all-reduce latency beyond the domain (engine or calibration override applied)
    ecc_reserved_fraction: ArrayLike  # share of physical memory ECC takes when on by default (GDDR: 1/16)
    peak_flop_per_s: ArrayLike
    bf16_peak_flop_per_s: ArrayLike  # dense 16-bit peak (fp16 where no bf16): a peak above it is 8-bit or narrower math
    price_usd_per_gpu_hour: ArrayLike  # NaN where the catalog has none
    # one link of a fully connected mesh fabric, one direction (MI300X: 64e9 of 7 x 64e9); 0: a switched fabric
    # (NVSwitch), where any group in the domain gets the whole interconnect_bytes_per_s (collectives.mesh_group_share)
    mesh_link_bytes_per_s: ArrayLike = 0.0
    #: the weight formats an engine runs on the GPU, one bit per catalog precision (``Gpu.weight_precisions``); 0: any
    weight_formats: ArrayLike = 0.0
    #: 1 where the engine does not run on the GPU's vendor at all (TensorRT-LLM on an AMD or Intel GPU), else 0
    engine_refused: ArrayLike = 0.0


@dataclass(frozen=True)
class EngineFacts:
    """The engine's numbers that vary per GPU: batching limits and (calibrated) efficiency factors."""

    max_num_batched_tokens: ArrayLike
    max_num_seqs: ArrayLike
    bandwidth_efficiency: ArrayLike
    decode_flop_efficiency: ArrayLike
    prefill_flop_efficiency: ArrayLike
    step_overhead_s: ArrayLike
    layer_overhead_s: ArrayLike
    moe_layer_overhead_s: ArrayLike  # per MoE layer per step (the fused-MoE call's kernel chain)
    sequence_overhead_s: ArrayLike  # per sequence per decode step
    prefill_latency_s: ArrayLike  # fixed latency of a prefill beyond its roofline
    allreduce_latency_s: ArrayLike  # within the fabric domain (catalog, unless the engine or a calibration sets it)
    interconnect_efficiency: ArrayLike
    roofline_overlap: ArrayLike  # 1: step = max(memory, compute); 0: their sum
    # -- kernel curves of the operator model (planner.engines.kernel_curves: measured per GPU) --
    gemm_bandwidth_efficiency: ArrayLike  # a memory-bound GEMM's bytes/s over the datasheet bandwidth
    gemm_flop_efficiency: ArrayLike  # a compute-bound 16-bit GEMM's FLOP/s over the dense bf16 peak
    gemm_fp8_flop_efficiency: ArrayLike  # a compute-bound GEMM's FLOP/s over the dense peak when its math is 8-bit
    gemm_floor_s: ArrayLike  # time of the smallest GEMM (per kernel)
    attention_bandwidth_efficiency: ArrayLike  # decode attention's KV bytes/s over the datasheet bandwidth (16-bit KV)
    attention_fp8_bandwidth_efficiency: ArrayLike  # the same for an 8-bit (fp8) KV cache
    attention_flop_efficiency: ArrayLike  # decode attention's FLOP/s over the dense peak (MLA's absorbed form)
    attention_floor_s: ArrayLike  # time of the smallest decode attention kernel (per layer)
    prefill_attention_flop_efficiency: ArrayLike  # causal prefill attention's FLOP/s over the dense peak
    prefill_attention_floor_s: ArrayLike  # time of the smallest prefill attention kernel (per layer)
    moe_floor_s: ArrayLike  # the fused-MoE call's floor beyond two GEMMs' at one token, per MoE layer per step
    moe_floor_per_doubling_s: ArrayLike  # its growth per doubling of the tokens in the call, measured up to 8
    # 1: decode attention reads each KV head once per query head (TensorRT-LLM's masked MHA before XQA); 0: once
    decode_kv_reads_per_query_head: ArrayLike
    # -- measured all-reduce table (planner.model.collectives): the GPU's row in it, NaN: the latency + bandwidth form
    allreduce_table_row: ArrayLike = math.nan
    allreduce_table: Any = None  # an AllReduceTable shared by every scenario, or None
    # messages are looked up at this many times their bytes (1: the GPU's own row; a borrowed row: its fabric's
    # bytes/s over this GPU's)
    allreduce_table_bytes_scale: ArrayLike = 1.0
    # the table row's GPU's mesh link over its aggregate fabric bandwidth (MI300X: 1/7); 0: a switched fabric. With
    # the GPU's own share it rescales a borrowed row per group size (planner.model.decode.allreduce_time_s)
    allreduce_table_link_share: ArrayLike = 0.0
    # the expert width per GPU at which the fused-MoE grouped GEMM runs at half the dense GEMM's FLOP rate; 0: at it
    moe_gemm_half_width: ArrayLike = 0.0
    # the rows per touched expert at which it runs at half its rate again (the kernel's row tiles padded); 0: no loss
    moe_gemm_half_rows: ArrayLike = 0.0
    # the grouped GEMM's 8-bit FLOP rate over ``gemm_fp8_flop_efficiency``'s (TensorRT-LLM 0.x's per-tensor fp8
    # kernel, ``planner.engines.kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES``, s142); 1: the dense GEMMs' rate
    moe_fp8_flop_scale: ArrayLike = 1.0
    # the grouped GEMM's FLOP rate over its curve's on any math (EXPERIMENT h-tpotcls: vLLM 0.10-0.11.0's MXFP4
    # experts on Marlin on Hopper, ``planner.engines.kernel_paths.VLLM_HOPPER_MXFP4_MARLIN``); 1: the curve's
    moe_flop_scale: ArrayLike = 1.0
    # a ceiling on the grouped GEMM's fraction of its curve's rate (EXPERIMENT h-tpotcls ":ceiling"); 0: none
    moe_flop_ceiling: ArrayLike = 0.0
    # seconds per token per DSA layer of the engine's sparse MLA kernel per 64 query heads on one GPU; 0: not
    # modelled apart (the attention curves alone time DSA's latents)
    sparse_mla_token_s: ArrayLike = 0.0
    # EXPERIMENT (h-r4, off): over a 16-bit cache, that kernel's time per token = this + ``sparse_mla_bf16_attended_s``
    # x min(context, top-k) (vLLM's measured bf16 module); 0: the fp8 rate for every cache
    sparse_mla_bf16_token_s: ArrayLike = 0.0
    sparse_mla_bf16_attended_s: ArrayLike = 0.0
    # prefill tokens run that kernel too when a GPU holds fewer query heads than this (vLLM: 32; TensorRT-LLM: all)
    sparse_mla_prefill_max_heads: ArrayLike = 0.0
    # MLA's absorbed decode attention's FLOP/s over the dense 16-bit peak, from the measured MLA modules
    # (``planner.engines.kernel_curves.mla_attention_flop_efficiency``); 0: at ``attention_flop_efficiency``
    mla_attention_flop_efficiency: ArrayLike = 0.0
    # token pairs of causal prefill attention work each new token adds (its kernel's tiles on the diagonal; the
    # measured rate rises with the prompt: ``planner.model.operators.prefill_attention_timed_flop``); 0: one rate
    prefill_attention_pairs_per_token: ArrayLike = 0.0
    # how data-parallel attention's MoE moves tokens (``planner.engines.profiles.EngineProfile.moe_exchange``): 0 an
    # all-to-all of each token's k copies, 1 an all-gather (bf16) + reduce-scatter, 2 the same with the tokens at the
    # experts' input precision and an all-to-all above top-k on a multi-node NVLink domain (TensorRT-LLM)
    moe_exchange: ArrayLike = 0.0
    gather_scatter_table: Any = None  # NCCL's measured all-gather / reduce-scatter (an AllReduceTable), or None
    gather_scatter_table_row: ArrayLike = math.nan  # the GPU's row in it (NaN: none; the all-to-all form stands)
    gather_scatter_table_bytes_scale: ArrayLike = 1.0  # as ``allreduce_table_bytes_scale``, for a borrowed row
    # how the engine sizes that gather (``planner.model.parallel.DP_GATHER_RULES``): 0 g x the busiest rank's tokens,
    # 1 SGLang 0.5.3+, 2 SGLang 0.5.1, 3 vLLM's per-rank sizes (h-dpgather)
    dp_gather: ArrayLike = 0.0
    # 1: a decode step takes max(device, host), host = sequence_overhead_s x batch (an overlapped engine loop: vLLM
    # 0.14+, ``planner.engines.profiles.with_vllm_host_loop``, s189); 0: their sum
    host_overlap: ArrayLike = 0.0
    # 1: each GPU holds whole routed experts (expert parallelism; EXPERIMENT s126,
    # ``planner.engines.profiles.with_expert_parallel``), the grouped GEMMs at one expert's full width; 0: split (shipped)
    experts_whole: ArrayLike = 0.0
    # the largest decode batch the engine replays as a graph, and an eager step's surplus per dense / MoE layer
    # (SGLang 0.4, s123: ``planner.engines.profiles.with_sglang_eager_decode``); 0: no eager decode step modelled
    decode_graph_max_batch: ArrayLike = 0.0
    # above it only powers of two are graphed (TensorRT-LLM 1.x without padding; EXPERIMENT h-p50); 0: every batch
    decode_graph_gap_above: ArrayLike = 0.0
    eager_layer_s: ArrayLike = 0.0
    eager_moe_layer_s: ArrayLike = 0.0
    # per MoE layer per decode step on top of ``moe_layer_overhead_s`` (a release's decode-path cost, prompt steps
    # free of it: ``planner.engines.profiles.MOE_LAYER_COSTS``' "decode" entries); 0 on every shipped profile
    decode_moe_layer_overhead_s: ArrayLike = 0.0
    # 1 where the engine release cannot load MXFP4 routed experts on this GPU (TensorRT-LLM 1.x below SM 9.0,
    # ``planner.engines.kernel_paths``); 0: it loads them
    mxfp4_experts_refused: ArrayLike = 0.0
    # bytes per routed-expert weight as the engine loads MXFP4 experts spread over more than one GPU, where that differs
    # from the stored format (SGLang 0.5.1-0.5.9 off Blackwell: 2.0, upcast to bf16); 0: as stored
    expert_parallel_expert_bytes_per_param: ArrayLike = 0.0
    # a weight-only dense GEMM's (weights under 1.5 B, math at the 16-bit peak) FLOP rate over the bf16 GEMM curve's
    # (Marlin's measured ceiling, s140: ``planner.model.operators.weight_only_flop_scale``); 0: the bf16 rate
    weight_only_flop_fraction: ArrayLike = 0.0


class EngineMemoryRules(Protocol):
    """What the memory formulas read of an engine (``planner.engines.profiles.EngineProfile`` has these fields).

    A protocol, so the model names the engine's memory rules without importing the engines package.
    """

    budget_mode: Literal["total", "free"]  # KV budget from the total visible memory (vLLM) or the free memory
    use_engine_visible_memory: bool  # the catalog's measured visible total (else physical x visible_memory_fraction)
    visible_memory_fraction: float
    non_torch_bytes: float  # per GPU
    non_torch_bytes_tensor_parallel: float  # extra per GPU when tensor-parallel
    activation_bytes_per_token_width: float
    activation_bytes_per_seq_vocab: float
    moe_workspace_bytes_per_value: float  # the profiling pass's fused-MoE workspace, bytes per element (0: none)
    block_size: int  # KV-cache block, tokens
    kv_group_padding: bool  # vLLM's hybrid allocator: equal-size layer groups, padded (memory.kv_cache_groups)
    mxfp4_expert_hidden_alignment: int  # MXFP4 experts' hidden size padded to a multiple of this when loaded (0: none)


def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
