"""How serving engines budget GPU memory and how fast a decode step runs: named, documented defaults.

An ``EngineProfile`` holds every assumption the capacity model makes that is not a catalog fact. The
defaults are fitted to public measurements (see ``docs/accuracy.md``); users override any field with
``dataclasses.replace`` or the keyword arguments of the API functions.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Literal, NamedTuple

from planner.engines.sglang import sglang_rule_for_version
from planner.errors import InvalidInputError, UnknownNameError

GiB = 2**30


@dataclass(frozen=True)
class EngineProfile:
    """Memory budgeting and efficiency assumptions of one serving engine.

    KV budget per GPU:
      - ``"total"`` (vLLM): visible total x memory_utilization - weights/GPU - activation peak - non-torch.
      - ``"free"`` (TensorRT-LLM): memory_utilization x (visible total - weights/GPU - activation - non-torch).
    With ``use_engine_visible_memory=False``, no reserve and utilization 1 this is the seeds' form:
    free HBM = memory - weights.
    """

    name: str
    description: str
    budget_mode: Literal["total", "free"] = "total"
    memory_utilization: float = 0.9
    #: a rule that computes the default utilization per GPU and group (``planner.engines.sglang``: SGLang's
    #: ``mem_fraction_static``); "" : ``memory_utilization`` everywhere. A given memory_utilization replaces it.
    memory_fraction_rule: str = ""
    use_engine_visible_memory: bool = True
    #: visible total / physical memory where the catalog has no measured visible total (H100: 79.18/80)
    visible_memory_fraction: float = 0.9898
    #: CUDA context, cuBLAS workspaces and allocator slack outside torch, per GPU
    non_torch_bytes: float = 0.13 * GiB
    #: extra non-torch memory per GPU when tensor-parallel (NCCL buffers)
    non_torch_bytes_tensor_parallel: float = 0.42 * GiB
    #: activation peak of the profiling forward pass, bytes per (batched token x (hidden + 2 x MLP width / TP))
    activation_bytes_per_token_width: float = 0.0
    #: activation peak of the sampler, bytes per (sequence x vocabulary entry)
    activation_bytes_per_seq_vocab: float = 0.0
    #: bytes per element of the fused-MoE workspace the profiling pass holds (vLLM's modular Triton and CUTLASS-FP8
    #: experts: 2, bf16; ``planner.model.memory.moe_workspace_bytes``); 0: not modelled for this engine
    moe_workspace_bytes_per_value: float = 0.0
    #: tokens of the profiling forward pass and sequences of the sampler run; None: the engine's default for the
    #: GPU class (vLLM: 8192 / 1024 on GPUs of 70 GiB or more whose device name holds no "a100", else 2048 / 256)
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    large_gpu_min_memory_bytes: float = 70 * GiB
    #: a device name (lower case) holding one of these is never large: vLLM 0.9.0+ ``"a100" not in device_name``,
    #: the name NVML reports (``catalog.Gpu.engine_device_name``); an A800 or an H100 is not excluded
    large_gpu_excluded_names: tuple[str, ...] = ("a100",)
    #: when not empty, only a device name holding one of these is large (vLLM 0.8.0-0.8.4: "h100", "h200")
    large_gpu_required_names: tuple[str, ...] = ()
    max_num_batched_tokens_large_gpu: int = 8192
    max_num_seqs_large_gpu: int = 1024
    max_num_batched_tokens_small_gpu: int = 2048
    max_num_seqs_small_gpu: int = 256
    #: a GPU with at least this much memory gets the largest class's defaults whatever its name, before the large
    #: class is tested (vLLM 0.28.0+: ``device_memory >= 160 * GiB_bytes``, ``VLLM_BATCHING_RELEASES``); None: no
    #: such class (vLLM before 0.28, the shipped profiles)
    xlarge_gpu_min_memory_bytes: float | None = None
    max_num_batched_tokens_xlarge_gpu: int = 16384
    max_num_seqs_xlarge_gpu: int = 1024
    block_size: int = 1
    #: vLLM V1's hybrid KV cache manager: layers paged in groups of equal size, padded with empty layers, a local
    #: group one block over its window (``planner.model.memory.padded_kv_layer_tokens``); False: layers alone
    kv_group_padding: bool = False
    #: a DSA model's fp8 KV cache is vLLM's ``fp8_ds_mla`` record (fp8 NoPE latent, fp32 scales, bf16 RoPE: 656 B a
    #: token per layer for DeepSeek-V3.2's 576 values; ``MLAAttentionSpec.real_page_size_bytes``,
    #: vllm/v1/kv_cache_interface.py); False: values x bytes (SGLang, TensorRT-LLM: not read from their source)
    fp8_ds_mla_cache: bool = False
    #: MXFP4 experts' hidden size is padded to a multiple of this when the engine loads them (vLLM, SGLang: 256,
    #: ``planner.model.memory.loaded_expert_padding_bytes``); 0: loaded as stored
    mxfp4_expert_hidden_alignment: int = 0
    #: KV heads need not divide the tensor-parallel group (TensorRT-LLM gives each GPU ceil(KV heads / g)); False:
    #: KV heads % g = 0 or g % KV heads = 0 (vLLM and SGLang's ``QKVParallelLinear``; ``model.tensor_parallel_ok``)
    kv_heads_any_split: bool = False
    #: KV-cache precisions the engine can cache in (catalog names); None: any KV-cache format (the seeds' form)
    kv_precisions: tuple[str, ...] | None = None
    #: where ``kv_precisions`` is documented
    kv_precisions_source: str = ""
    # -- time --
    #: factor on the bandwidth the GPU's kernels were measured at (``planner.model.operators``): the modelled
    #: memory-bound kernel time is divided by it (1: the kernels as measured); not a fraction of peak
    bandwidth_efficiency: float = 0.8
    #: factor on the measured kernels' FLOP/s in a decode step, as ``bandwidth_efficiency``
    decode_flop_efficiency: float = 0.6
    #: factor on the measured kernels' FLOP/s in prefill, as ``bandwidth_efficiency``
    prefill_flop_efficiency: float = 0.6
    #: fixed time per decode or prefill step (scheduling, sampling, launch gaps), seconds
    step_overhead_s: float = 0.0
    #: time per layer per step (kernel launch gaps that CUDA graphs do not hide), seconds
    layer_overhead_s: float = 0.0
    #: time per MoE layer per step, seconds: the fused-MoE call is a chain of small kernels (top-k routing,
    #: moe_align_block_size, two grouped GEMMs, activation, moe_sum) that on a decode step's few tokens per expert
    #: runs far from the roofline of the expert bytes it reads (``planner.model.decode.step_overhead_s``)
    moe_layer_overhead_s: float = 0.0
    #: time per sequence per decode step, seconds: per-request work on the CPU each step (scheduler bookkeeping,
    #: sampling parameters, detokenization, streaming the token), which grows with the batch
    sequence_overhead_s: float = 0.0
    #: fixed latency of a prefill beyond its roofline, seconds: a prefill step runs outside the decode CUDA
    #: graphs (eager or piecewise kernels, attention metadata built on the CPU) before its first token is sampled
    prefill_latency_s: float = 0.0
    #: latency of one all-reduce, seconds (two per layer when tensor-parallel); None: the GPU catalog's
    #: interconnect_latency_s within the fabric domain and pcie_latency_s beyond it (8 us where it has none)
    allreduce_latency_s: float | None = None
    #: achieved fraction of the interconnect bandwidth in an all-reduce
    interconnect_efficiency: float = 0.7
    #: how far a step's memory and compute times overlap: step = max + (1 - overlap) x min of the two
    #: (1: the textbook roofline, a lower bound; 0: their sum, kernels that are each bound by one of the two)
    roofline_overlap: float = 1.0
    #: time each operator from the GPU's measured kernel curves (``planner.engines.kernel_curves``); False: every
    #: kernel at the datasheet's bandwidth and peak with no floor (the seeds' roofline)
    kernel_curves: bool = True
    #: decode attention reads each KV head once per query head sharing it (TensorRT-LLM's masked multi-head
    #: attention kernel before XQA, ``planner.model.operators.decode_kv_read_factor``); set per release by
    #: ``with_release_kernels``, False for every shipped profile
    decode_kv_reads_per_query_head: bool = False
    #: time each tensor-parallel all-reduce in the fabric domain from vLLM's measured table per message and group
    #: size (``planner.engines.allreduce_table``; a GPU without one borrows its nearest architecture's), as the
    #: workbook's AllReduce sheet does; False: the latency + bandwidth form (``planner.model.decode.allreduce_time_s``)
    allreduce_table: bool = True
    #: how data-parallel attention's MoE layers move tokens to the experts. "gather": an all-gather of the group's
    #: tokens in bf16 before the experts and a reduce-scatter of the outputs after, timed from NCCL's measured tables
    #: (``planner.engines.allreduce_table.read_gather_scatter_table``): vLLM's default ``all2all_backend``
    #: "allgather_reducescatter" (vllm/config/parallel.py), SGLang's DP attention without ``--moe-a2a-backend``.
    #: "gather-quantized": the same with the tokens quantized to the experts' input precision first (NVFP4, per-tensor
    #: FP8), but an all-to-all where the experts spread over more GPUs than a token's top-k on a multi-node NVLink
    #: domain (GB200 / GB300 NVL72): TensorRT-LLM 1.x's CUTLASS MoE (``select_alltoall_method_type``,
    #: NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py). "alltoall": each token's k
    #: copies to its experts' ranks and back (``planner.model.parallel.expert_alltoall_time_s``; DeepEP-style backends)
    moe_exchange: str = "gather"
    #: 1: the engine prepares step n + 1 on the host while step n runs on the device, so a decode step takes
    #: max(device, host) with host = ``sequence_overhead_s`` x batch instead of their sum (vLLM >= 0.14 or
    #: --async-scheduling, SGLang >= 0.4, TensorRT-LLM 1.x). EXPERIMENT (s118): set only by
    #: ``with_published_host_cost`` under ``PUBLISHED_HOST_COST``; 0 on every shipped profile
    host_overlap: float = 0.0
    #: 1: each GPU holds whole routed experts (expert parallelism with tensor-parallel attention: TensorRT-LLM
    #: ``--ep_size``, SGLang ``--ep-size``, vLLM ``--enable-expert-parallel``), so the grouped GEMMs run at one expert's
    #: full width; 0: each expert split over the group (every engine's default). EXPERIMENT (s126): set only by
    #: ``with_expert_parallel`` under ``EXPERT_PARALLEL_FROM_ROWS``; 0 on every shipped profile
    experts_whole: float = 0.0
    #: the largest decode batch the engine replays as a CUDA graph; a larger one runs eagerly and pays
    #: ``eager_layer_s`` / ``eager_moe_layer_s`` a layer a step on top (``planner.model.decode.step_costs_s``); 0: no
    #: eager decode step modelled. Set per release by ``with_sglang_eager_decode`` (SGLang 0.4, s123) and
    #: ``trtllm_0_pytorch_profile`` (TensorRT-LLM 0.x's PyTorch backend, none graphed, s183); 0 on every shipped
    #: profile
    decode_graph_max_batch: float = 0.0
    #: above this batch (and up to ``decode_graph_max_batch``) only the powers of two are graphed, every other batch
    #: running eagerly (TensorRT-LLM 1.x's default graphs without padding: 1-32, 64, 128); 0: every batch up to
    #: ``decode_graph_max_batch`` is graphed. EXPERIMENT (h-p50): set only by ``with_trtllm_serve_eager_decode`` under
    #: ``TRTLLM_SERVE_EAGER_GRAPH_GAPS``; 0 on every shipped profile
    decode_graph_gap_above: float = 0.0
    #: an eager decode step's launch surplus per dense layer and per MoE layer, seconds (s123, as above)
    eager_layer_s: float = 0.0
    eager_moe_layer_s: float = 0.0
    #: time per MoE layer per *decode* step, seconds, on top of ``moe_layer_overhead_s`` (which decode and prompt steps
    #: both pay): a release's decode-path cost (``planner.model.decode.step_costs_s``; prompt steps do not pay it).
    #: Set only on published rows' profiles by ``with_moe_layer_costs`` (an entry of ``MOE_LAYER_COSTS`` whose
    #: ``steps`` is "decode"); 0 on every shipped profile
    decode_moe_layer_overhead_s: float = 0.0
    #: the routed experts' grouped GEMMs' FLOP rate over the GEMM curve's grouped rate; 1 on every shipped profile.
    #: EXPERIMENT (h-tpotcls, off): set only on published rows' profiles by ``planner.accuracy.predict`` under
    #: ``planner.engines.kernel_paths.VLLM_HOPPER_MXFP4_MARLIN`` (vLLM 0.10-0.11.0's MXFP4 experts on Marlin on
    #: Hopper: ``kernel_curves.MARLIN_FLOP_FRACTION``)
    moe_flop_scale: float = 1.0
    #: a ceiling on that fraction (the kernel's rate flattening, as Marlin's from 64 rows per expert on); 0: none.
    #: EXPERIMENT (h-tpotcls, off): set as ``moe_flop_scale`` is, under the switch's ":ceiling" reading
    moe_flop_ceiling: float = 0.0
    #: a step that admits prompts prefills only, whole prompts, the decoding requests waiting it out (vLLM V0's
    #: ``Scheduler._schedule_default`` without chunked prefill: ``planner.serving.simulate.RunBehaviour.
    #: prefill_only_steps``). Set per published row by ``with_v0_default_scheduler`` (s127); False on every shipped
    #: profile
    prefill_only_steps: bool = False
    #: under pipeline parallelism (``parallelism`` "pp") the sequence limit holds for each micro-batch in flight:
    #: TensorRT-LLM's ``PyExecutor`` admits ``max_num_active_requests`` = pp_size x max_batch_size
    #: (``PyTorchModelEngine.get_max_num_sequences``: "num_batches = self.mapping.pp_size"; tensorrt_llm/_torch/
    #: pyexecutor/model_engine.py). False: for all of them together (vLLM V1's one scheduler caps its running
    #: requests at max_num_seqs whatever the batches in flight)
    pipeline_seqs_per_micro_batch: bool = False
    #: SGLang's input budget per prefill batch where a published row's own command sets ``--max-prefill-tokens``
    #: (``planner.serving.simulate.RunBehaviour.max_prefill_tokens``); 0: the default,
    #: ``SGLANG_MAX_PREFILL_TOKENS``. Set per published row by ``with_row_max_prefill_tokens`` (s139); 0 on every
    #: shipped profile
    max_prefill_tokens: int = 0
    #: SGLang's ``--scheduler-recv-interval`` where a published row's own command sets it
    #: (``planner.serving.simulate.RunBehaviour.recv_interval``: new requests are read every N decode steps); 1: every
    #: scheduler loop, SGLang's default. Set per published row by ``with_row_scheduler_recv_interval`` (s187); 1 on
    #: every shipped profile
    scheduler_recv_interval: int = 1
    #: EXPERIMENT (h-ttftp50, ``planner.serving.benchmark.SGLANG_PIECEWISE_COVERAGE``): a published row's own SGLang
    #: command sets a flag that turns the piecewise prefill graph off (``sglang_piecewise_off_flag``); set by
    #: ``with_row_sglang_piecewise_off``; False on every shipped profile
    sglang_piecewise_off: bool = False
    #: TensorRT-LLM's attention-DP balancing where a published row's own options turn it on
    #: (``attention_dp_config: {enable_balance: true, timeout_iters: T}`` with ``enable_attention_dp: true``): new
    #: prompts enter every T steps (``planner.serving.simulate.RunBehaviour.context_gate``); 0: no gate, the
    #: release's default (``AttentionDpConfig.enable_balance`` False). Set per published row by
    #: ``with_row_attention_dp_gate`` (h-trt); 0 on every shipped profile
    attention_dp_gate_iters: int = 0
    #: the waiting prompts a rank holds when every rank of the group is read as holding one
    #: (``planner.serving.simulate.RunBehaviour.context_gate_quorum``: ceil(H_R) of R attention ranks); with
    #: ``attention_dp_gate_iters``
    attention_dp_gate_quorum: int = 0
    #: the memory share a published row's own command gives the engine (vLLM ``--gpu-memory-utilization``, SGLang
    #: ``--mem-fraction-static``, TensorRT-LLM ``free_gpu_memory_fraction``), read in place of ``memory_utilization``
    #: and ``memory_fraction_rule``'s value (the rule's other readings stay); 0: none given. Set per published row by
    #: ``with_row_memory_utilization`` (s187); 0 on every shipped profile (a plan's ``memory_utilization`` option is
    #: the user's way)
    row_memory_utilization: float = 0.0
    #: a DeepSeek Sparse Attention model's latents go through this engine family's sparse MLA kernel
    #: (``planner.engines.kernel_curves.SPARSE_MLA_TOKEN_S``: the GPU's measured time per token) for every decode token;
    #: None: the engine's sparse attention is not modelled apart (the attention curves alone, as SGLang's)
    sparse_mla_kernel: str | None = None
    #: the engine's decode attention reads an 8-bit KV cache at its 16-bit cache's bytes/s (the kernel curves'
    #: ``attention_bandwidth_efficiency`` for both). False: at the curves' own fp8 rate, vLLM's FlashAttention-3 (about
    #: half on Hopper; SGLang's tables the same). TensorRT-LLM's XQA kernels: aiconfigurator 0.12.0's trtllm
    #: 1.3.0rc20 decode-attention tables fit fp8 at 0.99, 0.90 and 0.96 of bf16's bytes/s on H100, H200 and B200
    #: (vLLM's: 0.65, 0.50, 0.90; ``bench/kernel_extract.py``'s fit per table, s186)
    fp8_kv_at_16_bit_rate: bool = False
    #: prompt tokens run that kernel too when a GPU holds fewer query heads than this (vLLM: 32,
    #: ``MIN_HEADS_FOR_BF16_PREFILL``: below it the fp8 decode kernel serves prefill tokens, "mixed batch mode", since
    #: the bf16 prefill kernel pads heads to 128; vllm/v1/attention/backends/mla/flashmla_sparse.py, commit 008a0c31;
    #: TensorRT-LLM: every head count, its measured prefill module costs what its decode module does per token)
    sparse_mla_prefill_max_heads: int = 0
    #: what the engine divides its prefill chunk (``chunked_prefill_size``, given or default) by: SGLang's attention
    #: data parallelism (``planner.accuracy.published.sglang_attention_dp``). Set per published row by
    #: ``with_prefill_chunk_divisor`` (s183); 1 on every shipped profile
    prefill_chunk_divisor: int = 1
    #: SGLang's attention data parallelism on a row predicted as tensor parallel: its R ranks each keep their own KV pool
    #: and request slots (``planner.serving.benchmark.serving_setups`` sizes the group's pool at "dp-ep"). Set per
    #: published row by ``with_dp_attention_kv_pool`` (h-dsk042, under ``planner.accuracy.predict.
    #: SGLANG_DP_ATTENTION_KV_POOL``); 0 on every shipped profile
    dp_attention_kv_ranks: int = 0

    def large_gpu(self, memory_bytes: float, device_name: str) -> bool:
        """Whether a GPU gets the large class's defaults: memory >= ``large_gpu_min_memory_bytes``, no excluded
        substring in its device name and, where ``large_gpu_required_names`` is set, one of those (case-insensitive).
        vLLM (``EngineArgs`` in vllm/engine/arg_utils.py, v0.9.2 l.1629, v0.19.0 l.2053): ``device_memory >= 70 *
        GiB_bytes and "a100" not in device_name``, the name ``current_platform.get_device_name().lower()``: NVML's
        ``nvmlDeviceGetName`` on CUDA (vllm/platforms/cuda.py, v0.11.0 l.559-607), what nvidia-smi prints.
        ``memory_bytes`` is the catalog's physical memory where vLLM reads NVML's total (nvidia-smi's, 81,559 MiB on
        an H100 80GB): no catalog GPU lies between the two sides of 70 GiB."""
        name = str(device_name).lower()
        return bool(
            memory_bytes >= self.large_gpu_min_memory_bytes
            and not any(s in name for s in self.large_gpu_excluded_names)
            and (not self.large_gpu_required_names or any(s in name for s in self.large_gpu_required_names))
        )

    def xlarge_gpu(self, memory_bytes: float) -> bool:
        """Whether a GPU gets the largest class's defaults: the profile has that class
        (``xlarge_gpu_min_memory_bytes`` set) and the GPU at least that much memory, whatever its name (vLLM 0.28.0+
        ``if device_memory >= 160 * GiB_bytes``, tested before the large class: v0.28.0 vllm/engine/arg_utils.py
        l.2582)."""
        return self.xlarge_gpu_min_memory_bytes is not None and memory_bytes >= self.xlarge_gpu_min_memory_bytes

    def batching_limits(self, memory_bytes: float, device_name: str) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs) on a GPU of ``memory_bytes`` whose device reports ``device_name``
        (``catalog.Gpu.engine_device_name``): the explicit values, else the GPU-class default (``xlarge_gpu``, then
        ``large_gpu``)."""
        if self.xlarge_gpu(memory_bytes):
            tokens, seqs = self.max_num_batched_tokens_xlarge_gpu, self.max_num_seqs_xlarge_gpu
        elif self.large_gpu(memory_bytes, device_name):
            tokens, seqs = self.max_num_batched_tokens_large_gpu, self.max_num_seqs_large_gpu
        else:
            tokens, seqs = self.max_num_batched_tokens_small_gpu, self.max_num_seqs_small_gpu
        return self.max_num_batched_tokens or tokens, self.max_num_seqs or seqs

    def batching_defaults(self) -> tuple:
        """The fields ``batching_limits`` reads (they differ between vLLM releases: ``with_release_kernels``)."""
        return (
            self.max_num_batched_tokens, self.max_num_seqs, self.large_gpu_min_memory_bytes,
            self.large_gpu_excluded_names, self.large_gpu_required_names,
            self.max_num_batched_tokens_large_gpu, self.max_num_seqs_large_gpu,
            self.max_num_batched_tokens_small_gpu, self.max_num_seqs_small_gpu,
            self.xlarge_gpu_min_memory_bytes, self.max_num_batched_tokens_xlarge_gpu, self.max_num_seqs_xlarge_gpu,
        )  # fmt: skip

    def accepts_kv(self, precision: str) -> bool:
        """Whether the engine caches KV in ``precision`` (a catalog name)."""
        return self.kv_precisions is None or precision in self.kv_precisions

    def with_(self, **changes) -> EngineProfile:
        """A copy with some fields changed; None values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


IDEAL = EngineProfile(
    name="ideal",
    description=(
        "the seeds' form: the full physical memory, nothing reserved, every token slot usable, any KV-cache "
        "format (int4 or int8 KV here is a what-if: vLLM caches fp16, bf16 or fp8 only)"
    ),
    use_engine_visible_memory=False,
    kernel_curves=False,
    # all of the memory and of every peak, nothing spent beside the weights and the KV cache
    **dict.fromkeys(("memory_utilization", "bandwidth_efficiency", "interconnect_efficiency"), 1.0),
    **dict.fromkeys(("decode_flop_efficiency", "prefill_flop_efficiency"), 1.0),
    **dict.fromkeys(("non_torch_bytes", "non_torch_bytes_tensor_parallel", "allreduce_latency_s"), 0.0),
)

#: Time factors fitted to every unambiguous published row at once (static batches and batch-1 latency of vLLM,
#: LMDeploy and TensorRT-LLM in catalogs/reference/: ``planner.accuracy.holdout.fit_reference_defaults``,
#: docs/accuracy.md), each source held out in turn to measure them (``python bench/loso.py``). The kernels'
#: share of the hardware is one value for every engine; each engine's per-step cost is its own. IDEAL keeps 100%.
KERNEL_FACTORS = dict(
    # the operator model's kernels run as measured (planner.engines.kernel_curves): the engine's factors multiply
    # the measured fractions, 1 leaves them; each kernel is the max of its memory and compute times plus its floor
    bandwidth_efficiency=1.0,
    decode_flop_efficiency=1.0,
    prefill_flop_efficiency=1.0,
    roofline_overlap=1.0,
    # fitted: 15.7 us per layer per step beyond the measured GEMM and attention kernels and vLLM's measured
    # all-reduce (norms, rotary, activation, KV-cache writes, residual adds: a few small kernels per layer the kernel
    # tables do not hold; 15.5 us before s199 counted the output head once per prompt, not per prompt token; 12.9 us
    # before s186 read a 16-bit KV cache at its own, faster, attention byte rate; 14.3 us with the latency +
    # bandwidth all-reduce fit). Unfused, the same kernels take 47-65 us a layer on an H200
    # (bench/h200_kernels.py: PyTorch eager ops in a CUDA graph, Llama-3.1-8B's shapes)
    layer_overhead_s=15.7e-6,
    # the engine's own time per MoE layer beyond the GPU's measured fused-MoE floor, which the kernel curves carry
    # per GPU and step size (``planner.engines.kernel_curves.moe_floor_of``: 26.3 us + 3.0 us per doubling of the
    # tokens on H100, from vLLM's measured fused-MoE and GEMM latencies, ``planner.engines.kernel_floor``); not
    # fitted (the fitted rows' only MoE model, Mixtral-8x7B at batch 8, reads nearly every expert)
    moe_layer_overhead_s=0.0,
)
#: Relative residuals (measured / predicted time - 1) of that fit: the 10th and 90th percentiles over its rows.
#: In-sample, so only the fallback when no held-out residuals file is shipped (``planner.accuracy.ranges``;
#: ``tests/test_holdout.py`` recomputes them).
DEFAULT_RESIDUALS = (-0.22, 0.22)
#: fitted: 0.48 ms per step on vLLM's CI rows beside the per-layer cost (0.57 before s186, 0.53 before the table)
VLLM_STEP_OVERHEAD_S = 0.0005
VLLM_PREFILL_LATENCY_S = 0.0  # fitted: 0 (vLLM's CI rows time the whole run; no single-prompt TTFT among them)
#: 0.059 ms per sequence per step: fitted to the dennislee22 vLLM serving rows (batch 1-50) through the serving
#: simulation with the factors of planner 0.1; kept (the static rows, batch 8 at most for vLLM, cannot see it)
VLLM_SEQUENCE_OVERHEAD_S = 0.000059
#: vLLM V1's whole host loop, seconds per sequence per decode step: the median of the whole-loop V1 synchronous
#: per-sequence figures in catalogs/reference/host_cost_published.csv (VLLM-V1PRE-256 19.53-23.44 us,
#: VLLM-V1-TT-NOOP-BEFORE 35.94, VLLM-V1-TT-NOOP-AFTER 19.38; each low and high taken: median 21.485 us).
#: Components alone (VLLM-V1-UFO-*) and the long-output detokenizer pathology (VLLM-V1-DETOK-*) are not whole-loop
#: steady figures and are left out; ``tests/test_host_cost_published.py`` re-derives the value.
PUBLISHED_V1_SEQUENCE_COST_S = 21.485e-6
#: vLLM's first V1-by-default release (V0 before it: ``VLLM_BATCHING_RELEASES``) and its first release that schedules
#: asynchronously by default (vllm-project/vllm pull request 27614, "Enable async scheduling by default", 0.14.0).
VLLM_V1_VERSION = (0, 8)
VLLM_ASYNC_SCHEDULING_VERSION = (0, 14)
#: vLLM's two host loops, by release (s189, shipped; docs/history.md): the engine fields ``with_vllm_host_loop`` sets.
#: Synchronous (V0; V1 0.8-0.13 without ``--async-scheduling``; a release not stated): the fitted 59 us a sequence,
#: summed with the device time. Asynchronous (0.14 on, where pull request 27614 made it the default, or any V1 release
#: run with ``--async-scheduling``): the step schedules the next while the device runs, so the published V1 loop's
#: 21.485 us a sequence hides behind the device (a decode step takes max(device, host): ``decode.step_costs_s``).
VLLM_SYNCHRONOUS_LOOP = {"sequence_overhead_s": VLLM_SEQUENCE_OVERHEAD_S, "host_overlap": 0.0}
VLLM_ASYNCHRONOUS_LOOP = {"sequence_overhead_s": PUBLISHED_V1_SEQUENCE_COST_S, "host_overlap": 1.0}
LMDEPLOY_STEP_OVERHEAD_S = 0.0  # fitted: 0 (TurboMind's C++ loop; its per-step cost is inside the kernels' share)
#: fitted: 9.53 ms per single-prompt TTFT on LMDeploy's A100 rows (v0.1.0a1), their first token read as the prefill's;
#: read as the decode step's that samples it (``first_token_from_decode_step``, not applied) the fit gives 1.2 ms
LMDEPLOY_PREFILL_LATENCY_S = 0.0095
TENSORRT_LLM_STEP_OVERHEAD_S = 0.0  # fitted: 0 per step on the TensorRT-LLM rows once the per-layer cost is counted
TENSORRT_LLM_PREFILL_LATENCY_S = 0.0037  # fitted: 3.74 ms per single-prompt TTFT on the TensorRT-LLM rows
#: vLLM's --kv-cache-dtype: "auto" (the model dtype: fp16, bf16, or fp32 with --dtype float32), "bfloat16" and
#: the fp8 variants (vllm/config/cache.py CacheDType; docs.vllm.ai/en/latest/features/quantization/quantized_kvcache/).
#: No integer KV formats.
VLLM_KV = dict(
    kv_precisions=("fp16", "bf16", "fp32", "fp8"),
    kv_precisions_source=(
        "vllm/config/cache.py CacheDType (auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2); "
        "https://docs.vllm.ai/en/latest/features/quantization/quantized_kvcache/"
    ),
)

#: What every vLLM V1 release shares: its KV-cache formats, blocks of 16 tokens, the fitted kernels' share and
#: per-step cost; the releases differ in their memory profiling (activation peak, non-torch) and host loop.
VLLM_COMMON = dict(
    **VLLM_KV,
    sparse_mla_kernel="vllm",
    sparse_mla_prefill_max_heads=32,
    block_size=16,
    kv_group_padding=True,
    fp8_ds_mla_cache=True,
    mxfp4_expert_hidden_alignment=256,
    **KERNEL_FACTORS,
    step_overhead_s=VLLM_STEP_OVERHEAD_S,
    prefill_latency_s=VLLM_PREFILL_LATENCY_S,
)


def vllm_release(
    name: str, description: str, token_width_bytes: float, seq_vocab_bytes: float, non_torch_gib: float, tp_gib: float,
    moe_workspace_bytes: float = 0.0, host_loop: dict[str, float] = VLLM_SYNCHRONOUS_LOOP,
) -> EngineProfile:  # fmt: skip
    """A vLLM V1 release: ``VLLM_COMMON`` with its memory profiling: activation peak per batched token x width and
    per sequence x vocabulary entry (bytes), non-torch memory and the extra when tensor-parallel (GiB), the bytes
    per element of its fused-MoE workspace (0: not modelled) and its host loop (``VLLM_SYNCHRONOUS_LOOP`` or
    ``VLLM_ASYNCHRONOUS_LOOP``)."""
    return EngineProfile(
        **VLLM_COMMON,
        **host_loop,
        name=name,
        description=description,
        activation_bytes_per_token_width=token_width_bytes,
        activation_bytes_per_seq_vocab=seq_vocab_bytes,
        non_torch_bytes=non_torch_gib * GiB,
        non_torch_bytes_tensor_parallel=tp_gib * GiB,
        moe_workspace_bytes_per_value=moe_workspace_bytes,
    )


#: vLLM 0.19.0's fused-MoE workspace, bf16 (``TritonExperts.workspace_shapes``, vllm/model_executor/layers/fused_moe/
#: fused_moe.py l.1976-1991, and ``CutlassExpertsFp8``'s, cutlass_moe.py l.414-429; allocated for every token of the
#: pass by ``FusedMoEModularKernel._allocate_buffers``, modular_kernel.py l.1009-1070; the PyPI wheel).
VLLM_MOE_WORKSPACE_BYTES = 2.0
#: Least squares over 12 vLLM 0.19.0 H100 runs with the activation peak logged (docs/accuracy.md); the fused-MoE
#: workspace (s184) added to it, not refitted.
VLLM = vllm_release(
    "vllm",
    "vLLM V1 as of 0.11.0-0.19.0: gpu_memory_utilization (0.9) of the torch-visible total, less weights, the "
    "activation peak of its profiling run (sampler: ~15.6 B per sequence x vocabulary entry; a MoE model's fused-MoE "
    "workspace) and non-torch memory (0.25 GiB, +1.83 GiB of NCCL/custom all-reduce buffers when tensor-parallel); "
    "KV in blocks of 16; from 0.14 the asynchronous host loop (21.5 us a sequence, hidden behind the device step)",
    0.077, 15.56, 0.25, 1.83, VLLM_MOE_WORKSPACE_BYTES, VLLM_ASYNCHRONOUS_LOOP,
)  # fmt: skip
#: Least squares over the 7 llm-d rows with the activation peak logged (docs/accuracy.md).
VLLM_FULLSORT = vllm_release(
    "vllm-fullsort",
    "vLLM builds whose profiling sampler costs ~38 B per sequence x vocabulary entry (a full sort of fp32 "
    "logits): the llm-d H100 rows run from the vllm/vllm-openai:latest image in late 2025; non-torch 0.13 GiB, "
    "+0.41 GiB when tensor-parallel",
    0.282, 38.39, 0.13, 0.41,
)  # fmt: skip
VLLM_010 = vllm_release(
    "vllm-0.10",
    "vLLM 0.10.x V1: as 'vllm' but a cheaper sampler profiling run (~11 B per sequence x vocabulary entry) and "
    "~0.13 GiB of NCCL buffers when tensor-parallel (fitted to three A100 0.10.1.1 start-up logs)",
    0.282, 11.0, 0.13, 0.13,
)  # fmt: skip


def free_memory_engine(
    name: str, description: str, block_size: int, kv_precisions: tuple[str, ...], kv_source: str, **changes
) -> EngineProfile:
    """An engine whose KV cache takes a share of the memory left free after weights and activations
    (``budget_mode="free"``: TensorRT-LLM, LMDeploy), with the activation allowance and profiling batch they share
    (2 B per token x width, 4 B per sequence x vocabulary entry, 8,192 tokens, 256 sequences) and the fitted kernels'
    share; ``changes``: its own fields (memory share, fitted per-step and prefill costs)."""
    return EngineProfile(
        name=name,
        description=description,
        budget_mode="free",
        activation_bytes_per_token_width=2.0,
        activation_bytes_per_seq_vocab=4.0,
        max_num_batched_tokens=8192,
        max_num_seqs=changes.pop("max_num_seqs", 256),
        block_size=block_size,
        kv_precisions=kv_precisions,
        kv_precisions_source=kv_source,
        **KERNEL_FACTORS,
        **changes,
    )


#: TensorRT-LLM's PyTorch backend (the default since 1.0): ``KvCacheConfig`` in ``tensorrt_llm/llmapi/llm_args.py``
#: (the stored snapshot of NVIDIA/TensorRT-LLM, December 2026): free_gpu_memory_fraction 0.9 ("Default is 90%"),
#: tokens_per_block 32, dtype "auto" (the model's), and ``BaseLlmArgs`` max_batch_size 2048, max_num_tokens 8192.
#: KV formats: FP8 and NVFP4 (https://nvidia.github.io/TensorRT-LLM/1.3.0rc27/features/quantization.html, "FP8 KV
#: Cache", "NVFP4 KV Cache"; 1.0.0's page: FP8 only); NVFP4 KV has no catalog format yet. Group rule: heads % g = 0,
#: KV heads ceil(KV heads / g) per GPU (``Attention.__init__``, ``tensorrt_llm/_torch/modules/attention.py`` lines
#: 114-117 at NVIDIA/TensorRT-LLM commit c6d3bb2a), experts tp = moe_tp x moe_ep (``MappingBase.__init__``,
#: ``tensorrt_llm/mapping.py`` lines 104-108 at commit b35ac1b6: "moe_tp_size * moe_ep_size * moe_cluster_size must
#: equal to moe_world_size", moe_world_size = tp_size, line 66); the MLP and block rules as vLLM's (a split that
#: leaves a remainder cannot load the weights).
#: TensorRT-LLM's prompt tokens run its sparse MLA kernel at every head count (more heads than any model puts on one
#: GPU): its measured prefill module costs per token what its decode module does (1.44 against 1.48 + 0.1 us on H200
#: at 16 heads, projections included; catalogs/reference/dsa_decode_aic.csv, tests/test_sparse_mla.py).
TENSORRT_LLM_SPARSE_PREFILL_HEADS = 1024
#: TensorRT-LLM 1.x's per-sequence cost per step: its PyTorch backend runs the executor loop in Python, and every
#: iteration walks each active request there (``PyExecutor._handle_responses`` in
#: ``tensorrt_llm/_torch/pyexecutor/py_executor.py``: ``for request in self.active_requests: ... response =
#: request.create_response(False, self.dist.rank)``, each request every step at the default stream_interval of 1;
#: the Overlap Scheduler page: "checking sampling stop criteria, updating responses, scheduling the next batch" are
#: CPU tasks of each step, https://nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html), as vLLM's and
#: SGLang's Python loops do. The value is vLLM's (``VLLM_SEQUENCE_OVERHEAD_S``, fitted on dennislee22's vLLM rows),
#: borrowed as SGLang borrows it: no TensorRT-LLM 1.x row was fitted, and 0.x's TensorRT engines (a C++ executor,
#: the rows behind ``TENSORRT_LLM_STEP_OVERHEAD_S``) keep none. A response is built each step only for a streamed
#: request (``LlmRequest::createResult``, cpp/tensorrt_llm/batch_manager/llmRequest.cpp: none "unless isFinished() ||
#: (mIsStreaming && ...GENERATION_IN_PROGRESS)"), so the cost is a streaming server's (trtllm-serve under a
#: streaming client); an offline non-streaming ``trtllm-bench`` run pays TensorRT-LLM's published exposed cost instead
#: (``with_trtllm_bench_host_cost``, s158).
TENSORRT_LLM_SEQUENCE_OVERHEAD_S = VLLM_SEQUENCE_OVERHEAD_S
TENSORRT_LLM = free_memory_engine(
    "tensorrt-llm",
    "TensorRT-LLM 1.x, PyTorch backend: free_gpu_memory_fraction (0.9) of the memory left after weights, "
    "activations and runtime buffers; up to 2,048 sequences, KV in blocks of 32, fp8 KV (no int8); per-sequence "
    "cost of its Python executor loop borrowed from vLLM",
    32,
    ("fp16", "bf16", "fp8"),
    "https://nvidia.github.io/TensorRT-LLM/1.3.0rc27/features/quantization.html (FP8 KV Cache, NVFP4 KV Cache); "
    "tensorrt_llm/llmapi/llm_args.py KvCacheConfig.dtype",
    max_num_seqs=2048,
    kv_heads_any_split=True,
    step_overhead_s=TENSORRT_LLM_STEP_OVERHEAD_S,
    sequence_overhead_s=TENSORRT_LLM_SEQUENCE_OVERHEAD_S,
    prefill_latency_s=TENSORRT_LLM_PREFILL_LATENCY_S,
    sparse_mla_kernel="tensorrt-llm",
    sparse_mla_prefill_max_heads=TENSORRT_LLM_SPARSE_PREFILL_HEADS,
    fp8_kv_at_16_bit_rate=True,
    moe_exchange="gather-quantized",
    pipeline_seqs_per_micro_batch=True,
)
TENSORRT_LLM_0 = free_memory_engine(
    "tensorrt-llm-0",
    "TensorRT-LLM 0.x, TensorRT engines (trtllm-build): free_gpu_memory_fraction (0.9) of the memory left after "
    "weights, activations and runtime buffers; engines built for 256 sequences; fp8 or int8 KV",
    32,
    ("fp16", "bf16", "fp8", "int8"),
    "https://nvidia.github.io/TensorRT-LLM/features/quantization.html (FP8 and INT8 KV cache)",
    kv_heads_any_split=True,
    step_overhead_s=TENSORRT_LLM_STEP_OVERHEAD_S,
    prefill_latency_s=TENSORRT_LLM_PREFILL_LATENCY_S,
    fp8_kv_at_16_bit_rate=True,
)


#: Profiles whose start-up memory estimate runs a forward pass of the server's own token budget, so that a run whose
#: command sets one (``--max_num_tokens``) keeps that much activation out of its KV cache rather than the profile's
#: ``max_num_batched_tokens`` (``profiled_at_token_budget``). TensorRT-LLM 1.x: ``KvCacheCreator.
#: _create_dummy_context_requests`` fills ``max_num_tokens`` with dummy prompts of min(max_num_tokens, max_seq_len -
#: 1) tokens, each sampled once (``max_tokens=1``), and the cache gets ``fraction x (total - peak + temporary KV)``
#: after them (``_cal_max_tokens``; tensorrt_llm/_torch/pyexecutor/_util.py from NVIDIA/TensorRT-LLM pull request
#: 3092, April 2025, through the 2026 tree). Not TensorRT-LLM 0.x (its activations were sized when ``trtllm-build``
#: built the engine) nor vLLM here (its ``profile_run`` also runs the budget's tokens, but its activation terms were
#: fitted at the logs' default budgets).
TOKEN_BUDGET_PROFILED = ("tensorrt-llm",)


def profiled_at_token_budget(engine: EngineProfile, max_num_batched_tokens: int | None) -> EngineProfile:
    """``engine`` as it sizes its KV cache for a server given ``max_num_batched_tokens`` (None: not given): profiled
    at that many tokens where its profile is in ``TOKEN_BUDGET_PROFILED``, else unchanged."""
    if engine.name not in TOKEN_BUDGET_PROFILED or not max_num_batched_tokens:
        return engine
    return replace(engine, max_num_batched_tokens=int(max_num_batched_tokens))


#: TensorRT-LLM 1.x's PyTorch backend captures decode CUDA graphs for the batch sizes of its ``CudaGraphConfig``,
#: on by default (``TorchLlmArgs.cuda_graph_config = Field(default_factory=CudaGraphConfig)``: "CUDA graphs are only
#: created for the batch sizes in cuda_graph_config.batch_sizes, and are enabled for batches that consist of decoding
#: requests *only*"), with ``max_batch_size`` 0 read as 128 ("If neither is provided, a default max_batch_size of 128
#: is used", https://nvidia.github.io/TensorRT-LLM/1.3.0rc27/llm-api/reference/DecodeCudaGraphConfig.html) and
#: ``enable_padding`` False; ``trtllm-serve`` sets neither unless ``--extra_llm_api_options`` does (gpustack's runs,
#: docs/performance-lab/*/{a100,h100,h200}.md at gpustack/gpustack 47277d7, pass none). Source of the sizes:
#: ``CudaGraphConfig._generate_cuda_graph_batch_sizes`` in ``tensorrt_llm/llmapi/llm_args.py`` (the 1.0-1.2 form,
#: https://nvidia.github.io/TensorRT-LLM/1.1.0rc5/_modules/tensorrt_llm/llmapi/llm_args.html).
TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH = 128


def tensorrt_llm_cuda_graph_batch_sizes(max_batch_size: int = 0, enable_padding: bool = False) -> tuple[int, ...]:
    """The decode batch sizes TensorRT-LLM 1.x captures as CUDA graphs: without padding 1-31, 32, 64, 128, then powers
    of two from 256 below ``max_batch_size`` and ``max_batch_size`` itself; with padding 1, 2, 4 and multiples of 8 to
    128, then the same. ``max_batch_size`` 0: ``TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH``. (Later releases than 1.2 round
    log2 up and, with padding, step by 64 past 128; the default sizes are the same.)"""
    if max_batch_size < 0:
        raise ValueError(f"cuda graph max_batch_size {max_batch_size} is negative; 0 means the default (128)")
    top = max_batch_size or TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH
    sizes = [1, 2, 4] + [8 * i for i in range(1, 17)] if enable_padding else [*range(1, 32), 32, 64, 128]
    sizes += [2**i for i in range(8, math.floor(math.log2(top)))]
    sizes = sorted(b for b in sizes if b <= top)
    return tuple(sizes if sizes and sizes[-1] == top else [*sizes, top])


def tensorrt_llm_decode_graphed(
    batch: int, prompts: int = 0, max_batch_size: int = 0, enable_padding: bool = False
) -> bool:
    """Whether a TensorRT-LLM 1.x step of ``batch`` decoding requests and ``prompts`` prefilling ones replays a CUDA
    graph: decode only (``prompts`` 0) and ``batch`` a captured size, or with padding at most the largest one (rounded
    up to the next). Otherwise the step runs eagerly, every kernel launched from Python."""
    if batch < 1 or prompts < 0:
        raise ValueError(f"a step needs at least one decoding request and no negative prompts (got {batch}, {prompts})")
    if prompts:
        return False
    sizes = tensorrt_llm_cuda_graph_batch_sizes(max_batch_size, enable_padding)
    return batch <= sizes[-1] if enable_padding else batch in sizes


def tensorrt_llm_for_version(version: tuple[int, ...]) -> tuple[EngineProfile, str]:
    """TensorRT-LLM 0.x: TensorRT engines ("tensorrt-llm-0"); 1.0 and later: the PyTorch backend ("tensorrt-llm"),
    a release after 1.4 (the newest documentation read here) with a note."""
    text = ".".join(map(str, version))
    if version < (1,):
        return TENSORRT_LLM_0, f"TensorRT-LLM {text} -> tensorrt-llm-0 (TensorRT engines; the PyTorch backend is 1.0's)"
    if version[:2] > (1, 4):
        return TENSORRT_LLM, (
            f"TensorRT-LLM {text} is newer than the newest release read here (1.4): mapped to the newest profile, "
            "tensorrt-llm; its defaults may have moved since"
        )
    return TENSORRT_LLM, f"TensorRT-LLM {text} -> tensorrt-llm (PyTorch backend, the default since 1.0)"


#: SGLang's --kv-cache-dtype in 0.5.23: auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16 / bfloat16, nvfp4, fp4_mx_block16
#: (``sglang/srt/arg_groups/fields/model.py`` lines 197-221); 0.4.6.post5: auto, fp8_e5m2, fp8_e4m3
#: (``server_args.py`` line 553). In catalog names (the fp4 KV formats have no catalog entry yet):
SGLANG_KV = dict(
    kv_precisions=("fp16", "bf16", "fp32", "fp8"),
    kv_precisions_source=(
        "sglang 0.5.23 sglang/srt/arg_groups/fields/model.py lines 197-221 (auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, "
        "bfloat16, nvfp4, fp4_mx_block16); 0.4.6.post5 server_args.py line 553 (auto, fp8_e5m2, fp8_e4m3)"
    ),
)


def _sglang(rule: str, releases: str, **changes) -> EngineProfile:
    """An SGLang profile: the KV pool is mem_fraction_static (``planner.engines.sglang``, per GPU and group) of the
    memory, less the weights; pages of one token; time as vLLM's (SGLang has no fitted rows here)."""
    return EngineProfile(
        **SGLANG_KV,
        **KERNEL_FACTORS,
        name="sglang" if rule == "sglang-0.5.20" else rule,
        description=(
            f"SGLang {releases}: the KV pool takes mem_fraction_static of the memory less the weights, the fraction "
            f"computed per GPU and group as the {rule} rule does when --mem-fraction-static is not given "
            "(planner.engines.sglang); pages of 1 token; non-torch memory and per-step costs borrowed from vLLM "
            "(no SGLang start-up logs or timed rows here)"
        ),
        memory_utilization=0.83,  # H100 at TP 1 under 0.5.23; the rule gives each GPU and group its own
        memory_fraction_rule=rule,
        non_torch_bytes=0.25 * GiB,
        non_torch_bytes_tensor_parallel=1.83 * GiB,
        block_size=1,
        mxfp4_expert_hidden_alignment=256,  # its triton_kernels swizzle (planner.model.memory.loaded_expert_padding_bytes)
        # SGLang's GPU classes go by memory alone (``gpu_mem`` from get_device_memory_capacity, "H100, A100" in one
        # class: 0.5.20 sglang/srt/arg_groups/memory_hook.py l.88-170); vLLM's "a100" name test is not its own
        large_gpu_excluded_names=(),
        step_overhead_s=VLLM_STEP_OVERHEAD_S,
        prefill_latency_s=VLLM_PREFILL_LATENCY_S,
        sequence_overhead_s=VLLM_SEQUENCE_OVERHEAD_S,
        **changes,
    )


SGLANG = _sglang("sglang-0.5.20", "0.5.20-0.5.23 (read in both)")
SGLANG_0510 = _sglang("sglang-0.5.10", "0.5.10-0.5.19 (read in 0.5.10 and 0.5.15)")
SGLANG_055 = _sglang("sglang-0.5.5", "0.5.5-0.5.9 (read in 0.5.5)")
SGLANG_053 = _sglang("sglang-0.5.3", "0.5.3-0.5.4 (read in 0.5.3, 0.5.3.post3, 0.5.4 and 0.5.4.post2)")
SGLANG_051 = _sglang("sglang-0.5.1", "0.5.1-0.5.2 (read in 0.5.1, 0.5.2 and 0.5.3rc0)")
SGLANG_04 = _sglang("sglang-0.4", "0.4.6-0.4.x (read in 0.4.6.post5)")
SGLANG_040 = _sglang("sglang-0.4.0", "0.4.0-0.4.5 (read in 0.4.0, 0.4.3 and 0.4.5)")

LMDEPLOY = free_memory_engine(
    "lmdeploy",
    "LMDeploy TurboMind: the KV cache takes cache_max_entry_count (0.8) of the memory left free after the "
    "weights, in blocks of 64 tokens (memory side not checked against start-up logs); time factors fitted to "
    "its published A100 benchmarks",
    64,
    ("fp16", "bf16", "int8", "int4"),
    "https://lmdeploy.readthedocs.io/en/latest/quantization/kv_quant.html (quant_policy 8: int8, 4: int4)",
    memory_utilization=0.8,
    step_overhead_s=LMDEPLOY_STEP_OVERHEAD_S,
    prefill_latency_s=LMDEPLOY_PREFILL_LATENCY_S,
)

#: NVIDIA NIM for LLMs 1.x serves a model on an optimized profile's prebuilt TensorRT-LLM engines where the model's
#: manifest has one for the GPU, count and precision ("The optimized TensorRT-LLM profiles are preferred over vLLM
#: when available", https://docs.nvidia.com/nim/large-language-models/latest/optimization.html, "Automatic Profile
#: Selection"; vLLM profiles only where none is). Those engines are TensorRT engines built by ``trtllm-build``: each
#: optimized profile ships ``trtllm_engine/rank<i>.engine`` and ``trtllm_engine/config.json`` (the NIM
#: llama-3.3-70b-instruct manifest, release 1.8.5, as copied in cloudera/Model-Hub
#: manifests/1.9.0/nim/meta/llama-3.3-70b-instruct.yaml at commit 9046f33a, 2025-07-31: profile 7ee2258631ed, tags
#: gpu h100, llm_engine tensorrt_llm, precision fp8, profile throughput, tp 2), i.e. TensorRT-LLM's 0.x TensorRT
#: backend, not 1.x's PyTorch one. NIM's own version (1.8.0) is not TensorRT-LLM's, so a NIM row maps to the 0.x
#: profile whatever its version. The engines' build settings (max_batch_size, max_num_tokens, KV-cache dtype) are in
#: that config.json, which is not public: the 0.x profile's defaults stand in for them.
NIM_BACKEND = "tensorrt-llm-0"

ENGINES: dict[str, EngineProfile] = {
    e.name: e
    for e in (
        VLLM, VLLM_FULLSORT, VLLM_010, SGLANG, SGLANG_0510, SGLANG_055, SGLANG_053, SGLANG_051, SGLANG_04, SGLANG_040,
        TENSORRT_LLM, TENSORRT_LLM_0, LMDEPLOY, IDEAL,
    )
}  # fmt: skip
ENGINE_ALIASES = {
    "nim": NIM_BACKEND,
    "nvidia-nim": NIM_BACKEND,
    "trtllm": "tensorrt-llm",
    "tensorrt-llm-1": "tensorrt-llm",
    "trtllm-0": "tensorrt-llm-0",
    "trt-llm": "tensorrt-llm",
    "tensorrtllm": "tensorrt-llm",
    "seed": "ideal",
    "turbomind": "lmdeploy",
    "vllm-0.10.1": "vllm-0.10",
    "vllm-0.10.1.1": "vllm-0.10",
    "vllm-0.19": "vllm",
    "vllm-0.19.0": "vllm",
}
DEFAULT_ENGINE = "vllm"
#: Engines with published rows but no profile of their own (MLC-LLM, llm-awq: 3 rows of
#: catalogs/reference/perf_public.csv): a row's ``engine`` cell may name them, and they are predicted with the
#: default profile (``DEFAULT_ENGINE``'s memory budget and fitted time factors), as they always were.
ENGINES_WITHOUT_PROFILE = ("mlc-llm", "llm-awq")
#: The engine names a measurement row's ``engine`` cell takes besides the profiles and ``ENGINE_ALIASES``
#: (``planner.accuracy.published``; a cell that contains one of the first five is read as it: "LMDeploy (TurboMind)").
ENGINE_CELL_NAMES = ("vllm", "sglang", "tensorrt-llm", "lmdeploy", "nim", *ENGINES_WITHOUT_PROFILE)
#: The engine families: a profile's name is its family's, or the family's followed by "-" and a release
#: ("sglang-0.5.5", "tensorrt-llm-0", "vllm-fullsort").
ENGINE_FAMILIES = ("vllm", "sglang", "tensorrt-llm", "lmdeploy")


def engine_family(name: str) -> str:
    """The family of an engine profile or row name (``ENGINE_FAMILIES``): the family it equals or starts with followed
    by "-", case and surrounding spaces ignored ("sglang-0.5.5" -> "sglang", "tensorrt-llm-0" -> "tensorrt-llm");
    any other name lower-cased, as it is. The one statement of the rule: the serving simulation's scheduler
    (``planner.serving.benchmark.scheduler_of``) and the same-deployment match (``planner.accuracy.same_deployment``)
    both read it."""
    text = str(name).strip().lower()
    return next((f for f in ENGINE_FAMILIES if text == f or text.startswith(f + "-")), text)


#: Which profile a vLLM release's start-up budget follows, by version (first version of each range), with the
#: published logs that put it there. Later versions than the last logged one use the last profile.
VLLM_VERSION_PROFILES: tuple[tuple[tuple[int, ...], str, str], ...] = (
    ((0, 10), "vllm-0.10", "three vLLM 0.10.1.1 logs (KV001-KV003): sampler ~11 B per sequence x vocabulary entry"),
    (
        (0, 11),
        "vllm-fullsort",
        "the llm-d rows run from the v0.11-era image (KV013, XL01-XL06): ~38 B per sequence x vocabulary entry; "
        "one log stated as 0.11.0 (KV017, Mistral-Small) matches 'vllm' instead, so 0.11 KV budgets are +-10%",
    ),
    ((0, 12), "vllm", "12 vLLM 0.19.0 logs (XN01-XN12): ~15.6 B; versions 0.12-0.18 have no published logs here"),
)
#: The newest vLLM release with published start-up logs here (XN01-XN12); a later release takes the last profile,
#: and ``engine_for_version`` says so.
NEWEST_LOGGED_VLLM = (0, 19, 0)
#: The oldest (KV001-KV003); an older release takes the first profile, and ``engine_for_version`` says so.
OLDEST_LOGGED_VLLM = (0, 10, 1, 1)
_VERSION = re.compile(r"^(?P<name>[a-z][a-z\-]*?)\s*(?:==|=|@|\s|-v?|v)\s*v?(?P<version>\d+(?:\.\d+){0,3})")


#: A pre-release's phases, in PEP 440's order ("Pre-releases": alpha, beta, release candidate), all before the release.
PRE_RELEASE_PHASES = ("a", "b", "rc")
_VERSION_NUMBER = re.compile(
    r"(?<![\d.])v?(\d+)\.(\d+)((?:\.\d+){0,2})(?:[-_.]?(a|b|rc)(\d*)(?![a-z]))?(?:[-_.]?post(\d+))?"
)


class EngineVersion(NamedTuple):
    """An engine release as ``parse_version`` reads it: ``release`` (0, 10, 1, 1), ``pre`` ("rc", 5) or None,
    ``post`` 2 or None. Compare ``release`` with a threshold tuple where a pre-release counts as its release (as
    every version rule here does), ``key`` where it comes before it."""

    release: tuple[int, ...]
    pre: tuple[str, int] | None = None
    post: int | None = None

    @property
    def key(self) -> tuple[tuple[int, ...], tuple[int, int], int]:
        """PEP 440's order (packaging.python.org, "Version specifiers", "Summary of permitted suffixes and relative
        ordering"): the release numbers with trailing zeros dropped (1.2 == 1.2.0), then a pre-release before its
        release and a post-release after it: 1.2.0a1 < 1.2.0b1 < 1.2.0rc5 < 1.2.0 < 1.2.0.post1 < 1.2.1.
        Developmental releases (.devN) and local labels (+rocm614) are not read."""
        release = self.release
        while len(release) > 1 and release[-1] == 0:
            release = release[:-1]
        pre = (PRE_RELEASE_PHASES.index(self.pre[0]), self.pre[1]) if self.pre else (len(PRE_RELEASE_PHASES), 0)
        return release, pre, -1 if self.post is None else self.post


def parse_version(text: str) -> EngineVersion | None:
    """The first version number in ``text`` ("0.11.0", "v0.10.1.1 (V1)", "1.2.0rc5 (...)", "v0.5.4.post2"): two to
    four release numbers, then an optional a/b/rc pre-release (its number 0 when none is written: "v0.7a") and
    post-release; None if ``text`` holds none."""
    hit = _VERSION_NUMBER.search(str(text or ""))
    if not hit:
        return None
    major, minor, more, phase, pre, post = hit.groups()
    release = tuple(int(x) for x in (major, minor, *more.strip(".").split(".")) if x != "")
    return EngineVersion(release, (phase, int(pre or 0)) if phase else None, int(post) if post is not None else None)


#: The first LMDeploy release whose TurboMind engine prefills a whole prompt and samples its first token in the same
#: forward pass: 0.1.0a2 ("Unify prefill & decode passes", InternLM/lmdeploy pull request 775, commit 7f943a26b,
#: 2023-12-04; tag v0.1.0a2 of 2023-12-06 holds it, v0.1.0a1 of 2023-11-29 does not). Before it
#: ``LlamaBatch::ContextDecode`` prefilled all but the prompt's last token ("subtract input/context len by 1 to skip
#: last input token (will process with decoder later)"; ``cache_len = h_context_length - 1  // -1 since we skip last
#: token``; src/turbomind/models/llama/LlamaBatch.cc at tag v0.1.0a1, commit 9c46b27) and a decode step
#: (``Generate``: ``decoderForward`` + ``dynamicDecode``) over that last token sampled the first one; a one-token
#: prompt had no prefill at all (``missing > 1``).
LMDEPLOY_UNIFIED_PREFILL = parse_version("0.1.0a2")


def first_token_from_decode_step(engine: str, version: str) -> bool:
    """Whether a release samples a prompt's first token in a decode step after prefilling all but its last token
    (TTFT = prefill of L - 1 tokens, none for L = 1, + one decode step at L): LMDeploy TurboMind before
    ``LMDEPLOY_UNIFIED_PREFILL``. False for every other engine and for a release whose version is not stated."""
    if _engine_key(engine) not in ("lmdeploy", "turbomind"):
        return False
    v = parse_version(version)
    return v is not None and v.key < LMDEPLOY_UNIFIED_PREFILL.key


def engine_for_version(engine: str, version: str) -> tuple[EngineProfile, str]:
    """The profile for an engine release ("vllm", "0.11.0"), and why (the logs that put the version there).

    vLLM releases map through ``VLLM_VERSION_PROFILES``, each with its host loop (``with_vllm_host_loop``); other
    engines have one profile for every version.
    """
    base = engine_profile(engine)
    parsed = parse_version(version)
    if parsed is None:
        raise InvalidInputError(f"{engine} version {version!r} holds no version number (e.g. 0.11.0)")
    v = parsed.release
    if _engine_key(engine) in ("nim", "nvidia-nim"):
        return ENGINES[NIM_BACKEND], (
            f"NVIDIA NIM {'.'.join(map(str, v))} -> {NIM_BACKEND}: an optimized profile's prebuilt TensorRT engines "
            "(TensorRT-LLM 0.x), NIM's choice where its manifest has one"
        )
    if base.name.startswith("sglang"):
        rule, why = sglang_rule_for_version(v, parsed.pre is not None)
        return ENGINES["sglang" if rule == "sglang-0.5.20" else rule], why
    if base.name.startswith("tensorrt-llm"):
        return tensorrt_llm_for_version(v)
    if not base.name.startswith("vllm"):
        return base, f"{base.name}: one profile for every version"
    text = ".".join(map(str, v))
    if v < VLLM_VERSION_PROFILES[0][0]:
        name, why = VLLM_VERSION_PROFILES[0][1:]
        return with_vllm_host_loop(ENGINES[name], "vllm", version), (
            f"vLLM {text} is older than the oldest release with published start-up logs here "
            f"({'.'.join(map(str, OLDEST_LOGGED_VLLM))}): mapped to the oldest profile, {name} ({why}); its memory profiling and "
            "scheduler may differ (releases before 0.8 run the V0 engine)"
        )
    name, why = next((n, w) for start, n, w in reversed(VLLM_VERSION_PROFILES) if v >= start)
    if v[:3] > NEWEST_LOGGED_VLLM:
        newest = ".".join(map(str, NEWEST_LOGGED_VLLM))
        rule, fields = vllm_batching_release(text)
        batching = (
            "0.19.0's batching defaults (the same through 0.27.1)"
            if not fields
            else f"its own batching defaults ({rule})"
        )
        profile = _copy_with(ENGINES[name], **_batching_fields(rule)) if fields else ENGINES[name]
        return with_vllm_host_loop(profile, "vllm", version), (
            f"vLLM {text} is newer than the newest release with published start-up logs here ({newest}): mapped to "
            f"the newest profile, {name} ({why}), with {batching}; its memory profiling may have moved since"
            + ("" if v[:3] <= NEWEST_READ_VLLM_BATCHING else ", and its batching defaults were read up to 0.33.0")
        )
    return with_vllm_host_loop(ENGINES[name], "vllm", version), f"vLLM {text} -> {name}: {why}"


#: The first TensorRT-LLM release whose generation kernels read a GQA/MQA KV head once for its group: the main-branch
#: update of 2023-12-01 ("MMHA optimization for MQA and GQA", NVIDIA/TensorRT-LLM pull request 524) that became 0.7,
#: followed by the XQA kernel ("2.4x more Llama-70B throughput within the same latency budget", README news of
#: 2024-01-30). Earlier releases (0.5, 0.6) run a GQA model's decode attention in the masked multi-head attention
#: kernel, a KV head read per query head: their Llama-2-70B rows whose time is the KV read are 73-85% faster than
#: one read predicts, while their Llama-2-7B/13B rows (no GQA) and the 0.7 pre-release's Llama-2-70B rows
#: (trtllm-blog-falcon180b-h200, within 3% without it) are not.
TENSORRT_LLM_XQA_VERSION = (0, 7)


#: The substrings of a device name that vLLM 0.8.0-0.8.4 named large ("h100" or "h200" in
#: ``current_platform.get_device_name().lower()``, see ``VLLM_BATCHING_RELEASES``): on the catalog every Hopper part
#: but H20 ("NVIDIA H20") and H800 ("NVIDIA H800"), GH200 included ("NVIDIA GH200 120GB").
H100_H200_NAMES = ("h100", "h200")
#: vLLM's own batching defaults (``vllm serve``, UsageContext.OPENAI_API_SERVER) by release: (first release, engine,
#: the profile fields that differ from today's, where the source says so). Read in each release's sdist from PyPI
#: (``vllm/engine/arg_utils.py``, line numbers of that file in that release):
#: - V0 (every release before 0.8.0; ROCm before 0.9.2; any release run with VLLM_USE_V1=0): 256 sequences on every
#:   GPU: v0.4.3 l.49 and v0.6.0 l.90 ``max_num_seqs: int = 256``, v0.7.3 l.224 ``256 if not envs.VLLM_USE_V1 else
#:   1024``, v0.8.x ``_set_default_args_v0`` ("Set max_num_seqs to 256 for VLLM_V0", v0.8.3 l.1608-1610). Its token
#:   budget is not the V1 one (no chunked prefill under 32k context: max(max_model_len, 2048), v0.6.0
#:   vllm/config.py l.981) and is not modelled: the V1 class default stands in.
#: - 0.8.0-0.8.3: 8,192 tokens if "h100" or "h200" is in the device name, else 2,048; 1,024 sequences on every GPU
#:   (v0.8.0 l.1693-1715, v0.8.3 l.1647-1669: ``default_max_num_seqs = 1024``).
#: - 0.8.4: 8,192 / 1,024 on "h100" / "h200" names, else 2,048 / 256 (v0.8.4 l.1669-1682).
#: - 0.8.5: 8,192 / 1,024 on a device of 70 GiB or more, A100 80GB included, else 2,048 / 256 (v0.8.5 l.1596-1609).
#: - 0.9.0 and later: as 0.8.5 but not on a device named "a100" ("Setting large max_num_batched_tokens for A100
#:   reduces throughput, see PR #17885"): v0.9.0 l.1495, v0.9.2 l.1629, v0.10.1.1 l.1638, v0.11.0 l.1605, v0.13.0
#:   l.1797, v0.16.0 l.1877, v0.19.0 l.2053, v0.20.0 l.2208, v0.24.0 l.2404, v0.27.0 l.2544, v0.27.1 l.2544
#:   (``get_batch_defaults``): the profiles' own fields. (0.20.0 adds ``DEFAULT_MAX_NUM_BATCHED_TOKENS_FOR_BATCHED_DP``
#:   where ``parallel_config.use_batched_dp_moe``, v0.20.0 l.2355-2358, not modelled.)
#: - 0.28.0 and later: 16,384 / 1,024 on a device of 160 GiB or more whatever its name ("for GPUs like B200/B300 with
#:   >= 160GB memory, use the largest defaults"), tested before the 0.9.0 rule: v0.28.0 l.2582-2591, v0.29.0 l.2698,
#:   v0.30.0 l.2730, v0.31.0 l.2858, v0.32.0 l.2923. On the catalog: B200, B300, GB200, GB300, MI300X, MI325X,
#:   MI350X, MI355X (H200's 141 GiB stays at 8,192 / 1,024). 0.27.1 has no such class (read: l.2544).
#: - 0.33.0: as 0.28.0, and a GB10 (DGX Spark, ``current_platform.is_device_capability((12, 1))``) is never large
#:   ("has the memory but not the compute of a large discrete GPU, keep it on the small tier", v0.33.0 l.2961-2963,
#:   l.2983-2987). No catalog GPU is a GB10 and the catalog records no compute capability: the fields are 0.28's.
#: Read in the wheels from PyPI (``pip download vllm==X --no-deps``, ``vllm/engine/arg_utils.py``): every minor
#: release 0.19.0-0.33.0 and 0.27.1; ``get_batch_defaults`` is the same text from 0.19.0 to 0.27.1 and from 0.28.0
#: to 0.32.0.
#: ROCm ran V0 by default before 0.9.2: "Non-CUDA is supported on V1, but off by default for now" (v0.8.3 l.1537;
#: v0.9.1 l.1443 "Non-[CUDA, TPU]"), then ``current_platform.default_v1`` (v0.9.2 l.1491; ROCm ``supports_v1``: True,
#: vllm/platforms/rocm.py l.397).
VLLM_BATCHING_RELEASES: tuple[tuple[tuple[int, ...], str, dict], ...] = (
    ((0,), "V0", dict(max_num_seqs_large_gpu=256, max_num_seqs_small_gpu=256)),
    (
        (0, 8),
        "V1 0.8.0-0.8.3",
        dict(
            large_gpu_min_memory_bytes=0.0,
            large_gpu_excluded_names=(),
            large_gpu_required_names=H100_H200_NAMES,
            max_num_seqs_small_gpu=1024,
        ),
    ),
    (
        (0, 8, 4),
        "V1 0.8.4",
        dict(large_gpu_min_memory_bytes=0.0, large_gpu_excluded_names=(), large_gpu_required_names=H100_H200_NAMES),
    ),
    ((0, 8, 5), "V1 0.8.5", dict(large_gpu_excluded_names=())),
    ((0, 9), "V1 0.9.0-0.27", {}),
    ((0, 28), "V1 0.28.0-0.32", dict(xlarge_gpu_min_memory_bytes=160 * GiB)),
    ((0, 33), "V1 0.33.0 and later", dict(xlarge_gpu_min_memory_bytes=160 * GiB)),
)
#: The newest vLLM release whose ``get_batch_defaults`` was read (``VLLM_BATCHING_RELEASES``).
NEWEST_READ_VLLM_BATCHING = (0, 33, 0)
#: ROCm builds of vLLM before this release run the V0 engine unless VLLM_USE_V1=1 (above).
VLLM_ROCM_V1_DEFAULT = (0, 9, 2)


def vllm_batching_release(version: str) -> tuple[str, dict]:
    """(rule, profile fields) of ``VLLM_BATCHING_RELEASES`` for a vLLM version cell ("0.8.3", "0.6.0 (ROCm docker)",
    "rocm/vllm-dev:nightly (V0 engine: VLLM_USE_V1=0)"): V0 for a release before 0.8, a ROCm build before
    ``VLLM_ROCM_V1_DEFAULT`` or a cell that says V0 / VLLM_USE_V1=0; ("", {}) for a cell with neither a version
    nor a V0 mark (today's defaults)."""
    text = str(version or "")
    parsed = parse_version(text)
    v = parsed.release if parsed else None
    if re.search(r"VLLM_USE_V1\s*=\s*0|\bV0 engine\b", text, re.IGNORECASE) or (
        v is not None and "rocm" in text.lower() and v < VLLM_ROCM_V1_DEFAULT
    ):
        return VLLM_BATCHING_RELEASES[0][1:]
    if v is None:
        return "", {}
    return next(rule[1:] for rule in reversed(VLLM_BATCHING_RELEASES) if v >= rule[0])


def with_release_kernels(profile: EngineProfile, engine: str, version: str) -> EngineProfile:
    """``profile`` with the kernels of the release that ran a row: TensorRT-LLM before ``TENSORRT_LLM_XQA_VERSION``
    reads the KV cache once per query head in decode (``decode_kv_reads_per_query_head``); any other release, or
    a version that does not parse, keeps the profile as it is. (A vLLM release's batching defaults are not applied
    here: ``with_release_batching`` failed its ship rule, docs/history.md, s107.)"""
    v = parse_version(version)
    name = _engine_name(engine)
    if name == "tensorrt-llm" and v is not None and v.release < TENSORRT_LLM_XQA_VERSION:
        return _copy_with(profile, decode_kv_reads_per_query_head=True)
    return profile


#: A TensorRT-LLM 0.13 row (the release's performance overview, run with ``trtllm-bench``) gets the engine
#: ``trtllm-bench build`` made for it (``with_trtllm_bench_build``: ``benchmark_config.yml``'s max_batch_size and
#: max_num_tokens) and the chunked context ``trtllm-bench throughput`` turns on (``trtllm_bench_chunked_context``).
#: Shipped in s141 (docs/history.md). The release whose ``trtllm-bench`` was read: perf-overview.md @v0.13.0 ("All data in the table below was generated
#: using version 0.13.0") builds with ``trtllm-bench --model $model_name build --tp_size $tp_size [--quantization FP8]
#: --dataset $dataset_file`` and runs ``trtllm-bench ... throughput --dataset $dataset_file --engine_dir $engine_dir``.
TRTLLM_BENCH_VERSION = (0, 13)
#: ``trtllm-bench build``'s engine limits, (max_batch_size, max_num_tokens) by (catalog model, tensor-parallel size),
#: keyed by the dataset's max sequence length (ISL + OSL) or "general": ``get_benchmark_engine_settings`` in
#: ``tensorrt_llm/bench/build/build.py`` of the release whose build options are ``--dataset`` / ``--max_seq_length``
#: (those the v0.13 page names) looks up ``configs[model][f"tp{tp}_pp{pp}"]``, then ``.get(max_seq_len)``, else
#: ``"general"``; the figures are ``tensorrt_llm/bench/build/benchmark_config.yml`` at NVIDIA/TensorRT-LLM commit
#: 8fcf9fc (meta-llama/Meta-Llama-3-8B, meta-llama/Meta-Llama-3-70B, mistralai/Mixtral-8x7B-v0.1). No stored
#: version of the file holds v0.13's Llama 3.1 entries: Llama 3.1 8B / 70B are read as Meta-Llama-3 8B / 70B (the
#: same architecture and shapes; an assumption, docs/history.md s141). Mixtral at TP 8 and Llama-3.1-405B have no
#: entry read and keep the profile's limits.
TRTLLM_BENCH_BUILD_LIMITS: dict[tuple[str, int], dict[int | str, tuple[int, int]]] = {
    ("Llama-3.1-8B", 1): {"general": (2048, 8192)},
    ("Llama-3.1-70B", 1): {"general": (2048, 2048)},
    ("Llama-3.1-70B", 2): {"general": (256, 1024), 4096: (2048, 1024)},
    ("Llama-3.1-70B", 4): {"general": (2048, 1024)},
    ("Llama-3.1-70B", 8): {"general": (8192, 16384)},
    ("Mixtral-8x7B", 2): {"general": (2048, 3072)},
    ("Mixtral-8x7B", 4): {"general": (8192, 8192)},
}


#: Shipped in s151 (switch ``trtllm-013-decoder-buffers``, docs/history.md): a TensorRT-LLM 0.13 row's engine keeps its runtime
#: buffers and its decoder out of the memory its KV cache shares. ``TrtGptModelInflightBatching``'s constructor
#: (cpp/tensorrt_llm/batch_manager/trtGptModelInflightBatching.cpp) allocates ``createBuffers`` ("[MemUsageChange]
#: Allocated %s GPU memory for runtime buffers") and ``createDecoder`` ("... for decoder") before
#: ``calculateMaxNumBlocks`` reads the device's free memory (``getDeviceMemoryInfo``) and takes
#: ``freeGpuMemoryFraction`` of it; both are sized at the engine's max_batch_size (logits of every slot, the decoder's
#: per-slot sampling workspaces over the whole vocabulary). Measured rate: one start-up log of a 0.x engine at
#: trtllm-build's default max_batch_size 2,048 (NVIDIA/TensorRT-LLM issue 1188, comment of 2024-11-21, Qwen2.5-Coder-
#: 0.5B, vocabulary 151,936: runtime buffers 2.66 GB, decoder 5.76 GB, TensorRT-LLM's "GB" being GiB; the log's KV
#: line, 4.53 GiB for 395,776 tokens of 12,288 B, checks the order: 0.9 x what is left after both): (2.66 + 5.76) GiB /
#: (2,048 x 151,936) = 29.05 B per sequence x vocabulary entry, which replaces the free-memory profiles' 4 B (logits
#: alone) on these rows. Assumption: the whole of both allocations scales with sequences x vocabulary (the few
#: sequence-length buffers of that 0.5B engine are counted in, a slight overcount). The value: bytes per sequence x
#: vocabulary entry of a 0.13 engine's runtime buffers and decoder.
TRTLLM_013_DECODER_BYTES_PER_SEQ_VOCAB = (2.66 + 5.76) * 2**30 / (2048 * 151936)


def _trtllm_bench_release(engine: str, version: str) -> bool:
    """Whether a row ran TensorRT-LLM ``TRTLLM_BENCH_VERSION`` (the release whose ``trtllm-bench`` was read)."""
    v = parse_version(version)
    return _engine_name(engine) == "tensorrt-llm" and v is not None and v.release[:2] == TRTLLM_BENCH_VERSION


def trtllm_bench_build_limits(
    engine: str, version: str, model: str, tensor_parallel: int, sequence_tokens: int
) -> tuple[int, int] | None:
    """(max_batch_size, max_num_tokens) ``trtllm-bench build`` gave the engine of a row of TensorRT-LLM
    ``TRTLLM_BENCH_VERSION`` serving ``model`` (a catalog name) on ``tensor_parallel`` GPUs for requests of
    ``sequence_tokens`` (ISL + OSL, the dataset's max sequence length): ``TRTLLM_BENCH_BUILD_LIMITS``' entry for that
    length, else its "general"; None for another release or a model and group without an entry read."""
    if not _trtllm_bench_release(engine, version):
        return None
    entry = TRTLLM_BENCH_BUILD_LIMITS.get((model, int(tensor_parallel)))
    if entry is None:
        return None
    return entry.get(int(sequence_tokens), entry["general"])


def with_trtllm_bench_build(
    profile: EngineProfile, engine: str, version: str, model: str, tensor_parallel: int, sequence_tokens: int
) -> EngineProfile:
    """``profile`` as the engine ``trtllm-bench build`` made for a TensorRT-LLM 0.13 row (s141): max_num_seqs and
    max_num_batched_tokens are the engine's max_batch_size and max_num_tokens (``trtllm_bench_build_limits``).
    ``trtllm-bench throughput`` runs the engine's own limits (``get_settings_from_engine``, ``tensorrt_llm/bench/run/
    utils.py``), so they cap the scheduler, and the activation allowance of a "free" profile (a x tokens x width + b x
    sequences x vocabulary) follows them as TensorRT sizes an engine's activations and logits at build, with b the
    runtime buffers' and decoder's ``TRTLLM_013_DECODER_BYTES_PER_SEQ_VOCAB`` (s151: allocated before the KV cache
    takes its share of the free memory). Unchanged for another release or without an entry read; a user's plan never
    gets it (only published rows' profiles, ``planner.accuracy.predict._profile_for``)."""
    limits = trtllm_bench_build_limits(engine, version, model, tensor_parallel, sequence_tokens)
    if limits is None:
        return profile
    return _copy_with(
        profile,
        max_num_seqs=limits[0],
        max_num_batched_tokens=limits[1],
        activation_bytes_per_seq_vocab=TRTLLM_013_DECODER_BYTES_PER_SEQ_VOCAB,
    )


def trtllm_bench_chunked_context(engine: str, version: str) -> bool | None:
    """True where a row ran TensorRT-LLM ``TRTLLM_BENCH_VERSION``: its ``trtllm-bench throughput`` builds the executor with ``enable_chunked_context=self.settings_config.chunking``, True by default
    (``ExecutorSettingsConfig.chunking: bool = True``, FIRST_COME_FIRST_SERVED chunking, ``tensorrt_llm/bench/run/
    dataclasses.py``); None (the scheduler's own default) otherwise."""
    return True if _trtllm_bench_release(engine, version) else None


#: EXPERIMENT switch (issue 21 item 3, s118), read at call time; off on main. On: each row's per-sequence host cost
#: is the published one of its engine's loop (``with_published_host_cost``) instead of the fitted 59 us.
PUBLISHED_HOST_COST = False
#: Which of its two readings the switch applies (ablations, ``bench/switch_bootstrap.py published-host-cost:cost``
#: / ``:overlap``): "cost", the published per-sequence figure in place of the fitted one; "overlap", max(device, host)
#: for the overlapped loops (at whichever cost).
PUBLISHED_HOST_COST_READINGS = frozenset({"cost", "overlap"})


def vllm_schedules_asynchronously(version: str | None, async_scheduling: bool = False) -> bool:
    """Whether a vLLM release runs the asynchronous host loop (``VLLM_ASYNCHRONOUS_LOOP``): a V1 release from
    ``VLLM_ASYNC_SCHEDULING_VERSION`` (0.14), or any V1 release run with ``--async-scheduling``
    (``async_scheduling``). A V0 cell (``vllm_batching_release``), a release before V1 (0.8) or a cell without a
    version (every such published row predates 0.14) runs the synchronous loop."""
    v = parse_version(str(version or ""))
    if (
        v is None
        or v.release < VLLM_V1_VERSION
        or vllm_batching_release(str(version))[0] == VLLM_BATCHING_RELEASES[0][1]
    ):
        return False
    return v.release >= VLLM_ASYNC_SCHEDULING_VERSION or bool(async_scheduling)


def with_vllm_host_loop(
    profile: EngineProfile, engine: str, version: str | None, async_scheduling: bool = False
) -> EngineProfile:
    """``profile`` with the host loop of the vLLM release that runs it (``VLLM_SYNCHRONOUS_LOOP`` or
    ``VLLM_ASYNCHRONOUS_LOOP``, by ``vllm_schedules_asynchronously``; s189). Unchanged for another engine and for a
    profile whose per-sequence cost and overlap are neither loop's (set by hand or fitted: kept as given)."""
    if _engine_name(engine) != "vllm":
        return profile
    current = {"sequence_overhead_s": profile.sequence_overhead_s, "host_overlap": profile.host_overlap}
    if current not in (VLLM_SYNCHRONOUS_LOOP, VLLM_ASYNCHRONOUS_LOOP):
        return profile
    loop = VLLM_ASYNCHRONOUS_LOOP if vllm_schedules_asynchronously(version, async_scheduling) else VLLM_SYNCHRONOUS_LOOP
    return profile if current == loop else _copy_with(profile, **loop)


#: SGLang's overlap ("zero-overhead batch") scheduler from 0.4 (lmsys.org/blog/2024-12-04-sglang-v0-4/);
#: TensorRT-LLM's PyTorch backend's overlap scheduler from 1.0 (nvidia.github.io/TensorRT-LLM/features/overlap-scheduler.html).
SGLANG_OVERLAP_VERSION = (0, 4)
TENSORRT_LLM_OVERLAP_VERSION = (1, 0)


def with_published_host_cost(
    profile: EngineProfile, engine: str, version: str, async_scheduling: bool = False
) -> EngineProfile:
    """EXPERIMENT (s118): ``profile`` with the published host cost of the loop of the release that ran a row, when
    ``PUBLISHED_HOST_COST`` is on (else unchanged). vLLM V1 (>= 0.8, not a V0 cell): ``PUBLISHED_V1_SEQUENCE_COST_S``
    a sequence a step, summed with the device time (synchronous loop), or hidden behind it (``host_overlap`` 1: step
    = max(device, host)) from 0.14 or with --async-scheduling; SGLang >= 0.4 and TensorRT-LLM >= 1.0 (overlap
    schedulers): the same cost, hidden. Any other release, an unparsed version or a profile without a per-sequence
    cost keeps the fitted value (vLLM V0: 59 us, between V0's published 100-106 and V1's)."""
    if not PUBLISHED_HOST_COST or profile.sequence_overhead_s == 0.0:
        return profile
    v = parse_version(version)
    name = _engine_name(engine)
    if v is None:
        return profile
    if name == "vllm":
        if v.release < VLLM_V1_VERSION or vllm_batching_release(version)[0] == VLLM_BATCHING_RELEASES[0][1]:
            return profile
        overlap = v.release >= VLLM_ASYNC_SCHEDULING_VERSION or bool(async_scheduling)
    elif name == "sglang" and v.release >= SGLANG_OVERLAP_VERSION:
        overlap = True
    elif name == "tensorrt-llm" and v.release >= TENSORRT_LLM_OVERLAP_VERSION:
        overlap = True
    else:
        return profile
    cost = PUBLISHED_V1_SEQUENCE_COST_S if "cost" in PUBLISHED_HOST_COST_READINGS else profile.sequence_overhead_s
    overlap = overlap and "overlap" in PUBLISHED_HOST_COST_READINGS
    return replace(profile, sequence_overhead_s=cost, host_overlap=float(overlap))


#: SGLang's decode server's generation throughput at 16 running requests without and with its overlap scheduler,
#: tokens per second (catalogs/reference/host_cost_published.csv SGLANG-PD-OVERLAP-16: sgl-project/sglang pull request
#: 5608, Llama-3.1-8B-Instruct at TP 4, SGLang main between 0.4.5 and 0.4.6; "gen throughput (token/s): 3053.86" before,
#: "3458.31" after, one decode-batch log line each).
SGLANG_PD_OVERLAP_TOK_S = (3053.86, 3458.31)
#: SGLang's host time per sequence per decode step, seconds: what its overlap scheduler hides in that pair, 16 / 3053.86
#: - 16 / 3458.31 s a step over 16 sequences = 1 / 3053.86 - 1 / 3458.31 = 38.3 us (the file's per_seq_us; a lower
#: bound of the host work, the part the overlap hid). EXPERIMENT (h-sglhost, ``with_sglang_host_overlap``).
SGLANG_OVERLAP_SEQUENCE_COST_S = 1.0 / SGLANG_PD_OVERLAP_TOK_S[0] - 1.0 / SGLANG_PD_OVERLAP_TOK_S[1]
#: EXPERIMENT switch (issue 21, h-sglhost; docs/hypotheses/sglang-host-overlap.md), read at call time; off on main.
#: On: an SGLang >= 0.4 row's per-sequence host cost is ``SGLANG_OVERLAP_SEQUENCE_COST_S``, hidden behind the device
#: (a decode step takes max(device, host)) unless the row's command turns the overlap scheduler off. Ablations (measured
#: after the switch, ``bench/switch_bootstrap.py sglang-host-overlap:cost`` / ``:overlap``): "cost", SGLang's figure
#: summed everywhere (no overlap); "overlap", the borrowed 59 us kept and hidden where the overlap is on.
SGLANG_HOST_OVERLAP: bool | str = False


def with_sglang_host_overlap(
    profile: EngineProfile, engine: str, version: str, overlap_off: str | None = None
) -> EngineProfile:
    """EXPERIMENT (h-sglhost, off unless ``SGLANG_HOST_OVERLAP``): ``profile`` with SGLang's own host cost where a row
    ran SGLang from ``SGLANG_OVERLAP_VERSION`` (0.4; its "zero-overhead" overlap scheduler, on by default,
    lmsys.org/blog/2024-12-04-sglang-v0-4/): ``SGLANG_OVERLAP_SEQUENCE_COST_S`` a sequence a step, hidden behind the
    device (``host_overlap`` 1: step = max(device, host)), or summed with it where ``overlap_off`` names what in the
    row's command turned the overlap scheduler off (``--disable-overlap-schedule``; pipeline parallelism,
    ``_handle_pipeline_parallelism``; EAGLE-family speculative decoding without SGLANG_ENABLE_SPEC_V2, 0.4.x-0.5.x
    ``server_args.py``). Unchanged: the switch off, another engine, an SGLang release before 0.4 or not parsed, a
    profile without a per-sequence cost."""
    if not SGLANG_HOST_OVERLAP or profile.sequence_overhead_s == 0.0 or _engine_name(engine) != "sglang":
        return profile
    v = parse_version(str(version or ""))
    if v is None or v.release < SGLANG_OVERLAP_VERSION:
        return profile
    cost = profile.sequence_overhead_s if SGLANG_HOST_OVERLAP == "overlap" else SGLANG_OVERLAP_SEQUENCE_COST_S
    hidden = not overlap_off and SGLANG_HOST_OVERLAP != "cost"
    return replace(profile, sequence_overhead_s=cost, host_overlap=1.0 if hidden else 0.0)


#: TensorRT-LLM 1.x's host cost per sequence per decode step that its overlap scheduler leaves exposed, seconds:
#: catalogs/reference/host_cost_published.csv TRTLLM-PYEXEC-64, "~580 us/iter of host overhead as GPU idle" at 64
#: requests in flight (Llama-3.1-8B FP8, B200; NVIDIA/TensorRT-LLM issue 13957), 580 / 64 = 9.062 us. Summed with
#: the device time (it is the part the one-step overlap does not hide); the hidden part is not published.
TRTLLM_BENCH_EXPOSED_SEQUENCE_COST_S = 580e-6 / 64


def with_trtllm_bench_host_cost(profile: EngineProfile, engine: str, version: str, offline: bool) -> EngineProfile:
    """``profile`` with TensorRT-LLM's published exposed host cost per sequence,
    ``TRTLLM_BENCH_EXPOSED_SEQUENCE_COST_S``, for a TensorRT-LLM >= 1.0 run by ``trtllm-bench throughput`` without
    ``--streaming`` (``offline``); any other row keeps its profile (s158, shipped).

    Why: ``TENSORRT_LLM_SEQUENCE_OVERHEAD_S`` is vLLM's 59 us, borrowed because the PyTorch executor builds a streamed
    request's response every step; an offline run builds none until a request finishes and detokenizes nothing, so
    what is left is the loop's own per-request work, which the overlap scheduler (1.0+) hides but for the published
    exposed part. Assumption: that part scales with the requests in flight (one figure, at 64)."""
    if not offline or _engine_name(engine) != "tensorrt-llm":
        return profile
    v = parse_version(version)
    if v is None or v.release < TENSORRT_LLM_OVERLAP_VERSION:
        return profile
    return replace(profile, sequence_overhead_s=TRTLLM_BENCH_EXPOSED_SEQUENCE_COST_S)


def with_stream_interval(profile: EngineProfile, engine: str, version: str, interval: int | None) -> EngineProfile:
    """``profile`` with the per-sequence cost paid once every ``interval`` steps, where a published row's options set a
    stream interval above 1 for an engine that builds a streamed request's output only then (s189, shipped;
    docs/history.md). TensorRT-LLM 1.x: the cost is the PyTorch executor building each streamed request's response
    every step (``TENSORRT_LLM_SEQUENCE_OVERHEAD_S``), and with ``stream_interval`` N it builds one every N iterations
    (NVIDIA/TensorRT-LLM pull request 5284, "The iteration interval to create responses under the streaming mode";
    the project's tech blog 8 names it as the remedy for the host's per-response detokenization and protocol work).
    SGLang: its scheduler builds a request's output (``Scheduler.stream_output``: ids, offsets, incremental-detokenize
    state, stats) and the detokenizer decodes it only when ``len(output_ids) % stream_interval == 1`` (sglang 0.5.12,
    ``scheduler_output_processor_mixin.py``); the per-step part it keeps (appending the token, the stop check) is
    taken as small. Any other row keeps its profile, and a plan runs the default interval of 1."""
    if not interval or interval <= 1:
        return profile
    name = _engine_name(engine)
    if name == "tensorrt-llm":
        v = parse_version(version)
        if v is None or v.release < TENSORRT_LLM_OVERLAP_VERSION:
            return profile
    elif name != "sglang":
        return profile
    return _copy_with(profile, sequence_overhead_s=profile.sequence_overhead_s / interval)


#: SGLang 0.4's ``cuda_graph_max_bs`` when the flag is not given, on any GPU of 25 GB or more (``server_args.py`` of
#: the 0.4 line: ``else: self.cuda_graph_max_bs = 160``, "80 (half of the default value 160)");
#: ``cuda_graph_runner.get_batch_sizes_to_capture`` captures 1, 2, 4, 8-160 by 8 (ROCm: + 168-256) and keeps only
#: sizes <= it, so a decode batch above 160 runs eagerly on CUDA and ROCm alike.
SGLANG_04_GRAPH_MAX_BATCH = 160.0
#: SGLang's published eager surplus per layer at batch 1 (sgl-project/sglang pull request 1401, 2024-09-12,
#: ``bench_latency`` with and without ``--disable-cuda-graph``, triton attention backend;
#: catalogs/reference/eager_decode_published.csv): Llama-3-8B 7.06 -> 9.28 ms over 32 dense layers; DeepSeek-Coder-V2-
#: Lite (MLA + fused MoE, 27 layers, 26 of them MoE) 6.22 ms with the graph, "4x faster", so 24.88 ms eager: the MoE
#: layers' share of 18.66 ms after one dense layer's. ``tests/test_eager_decode_published.py`` re-derives both.
SGLANG_EAGER_LAYER_S = (9.28e-3 - 7.06e-3) / 32
SGLANG_EAGER_MOE_LAYER_S = (4 * 6.22e-3 - 6.22e-3 - SGLANG_EAGER_LAYER_S) / 26
#: The host's time to launch one layer of an eager step, seconds: the same pull request's eager decode step at batch 1,
#: which launch time bounds (a batch-1 step's kernels take less than their launch), per layer: Llama-3-8B 9.28 ms / 32
#: dense layers; DeepSeek-Coder-V2-Lite 24.88 ms less one dense layer, over its 26 MoE layers.
SGLANG_HOST_LAYER_S = 9.28e-3 / 32
SGLANG_HOST_MOE_LAYER_S = (4 * 6.22e-3 - SGLANG_HOST_LAYER_S) / 26
#: SGLang profiles whose releases run every extend (prefill) step outside CUDA graphs on NVIDIA as on AMD:
#: ``enable_piecewise_cuda_graph`` False by default up to 0.5.9 (``server_args.py``: 0.5.6 l.508, 0.5.9 l.604); from
#: 0.5.10 ``disable_piecewise_cuda_graph`` False (0.5.10 l.637, 0.5.12 l.737), except on ROCm and other non-CUDA
#: devices (``_handle_piecewise_cuda_graph``: ``is_hip()``), so an extend step of up to ``piecewise_cuda_graph_max_tokens``
#: replays a graph there.
SGLANG_EAGER_PREFILL_RULES = ("sglang-0.4.0", "sglang-0.4", "sglang-0.5.1", "sglang-0.5.3", "sglang-0.5.5")


#: SGLang 0.5.12's piecewise prefill graph covers a step of at most this many tokens for an MLA backend
#: (``ServerArgs.piecewise_cuda_graph_max_tokens``'s default, ``srt/server_args.py`` l.1514-1521, sglang PR 15927; other
#: backends: the chunked-prefill size); ``PiecewiseCudaGraphRunner.can_run`` (``num_tokens <= self.max_num_tokens``,
#: ``srt/model_executor/piecewise_cuda_graph_runner.py`` l.483) sends a larger step to the eager ``forward_extend``.
SGLANG_PIECEWISE_MLA_MAX_TOKENS = 2048


#: Model families SGLang 0.5.12 refuses the piecewise prefill graph for, by their published architecture:
#: ``piecewise_cuda_graph_disabled_model_archs`` (``srt/configs/model_config.py`` l.1558-1566: Qwen3NextForCausalLM) and
#: the multimodal architectures (``multimodal_model_archs`` l.1495-1566: Llama4ForConditionalGeneration,
#: Qwen3_5(Moe)ForConditionalGeneration), read by ``ServerArgs._handle_piecewise_cuda_graph`` (l.1309-1310, l.1336-1337).
#: DeepSeek Sparse Attention models (DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM) are read from the model's
#: ``sparse_attention``; Kimi-K2.5 (KimiK25ForConditionalGeneration) by its id (EXPERIMENT h-ttftp50).
SGLANG_PIECEWISE_REFUSED_FAMILIES = frozenset({"Qwen3-Next", "Llama 4", "Qwen3.5"})
SGLANG_PIECEWISE_REFUSED_MODELS = frozenset({"moonshotai/Kimi-K2.5"})


def sglang_piecewise_refused(model) -> bool:
    """Whether SGLang 0.5.12 turns the piecewise prefill graph off for ``model``'s architecture
    (``SGLANG_PIECEWISE_REFUSED_FAMILIES``, ``SGLANG_PIECEWISE_REFUSED_MODELS``, a sparse-attention model)."""
    return (
        model.sparse_attention is not None
        or model.family in SGLANG_PIECEWISE_REFUSED_FAMILIES
        or model.hf_id in SGLANG_PIECEWISE_REFUSED_MODELS
    )


def sglang_piecewise_host_s(
    profile: EngineProfile, vendor: str, num_layers: int, moe_layers: int, mla: bool, refused: bool = False
) -> tuple[float, float]:
    """EXPERIMENT (h-ttftp50): where ``sglang_prefill_host_s`` reads an SGLang release as graphed (0.5.10+ on NVIDIA),
    the eager launch time its prompt steps still pay and the prompt tokens above which they pay it: (host, 0) where the
    row's own command turned the piecewise graph off (``EngineProfile.sglang_piecewise_off``) or the release refuses it
    for the model's architecture (``refused``: ``sglang_piecewise_refused``), (host,
    ``SGLANG_PIECEWISE_MLA_MAX_TOKENS``) for an MLA model; (0, 0) for any other model (its cap is the chunked-prefill
    size, which no extend batch exceeds: ``PrefillAdder``'s ``rem_chunk_tokens``), and where the release is read as
    eager already or is not SGLang on NVIDIA."""
    rule = profile.memory_fraction_rule
    if not rule.startswith("sglang") or vendor != "NVIDIA" or rule in SGLANG_EAGER_PREFILL_RULES:
        return 0.0, 0.0
    host = SGLANG_HOST_LAYER_S * (num_layers - moe_layers) + SGLANG_HOST_MOE_LAYER_S * moe_layers
    if profile.sglang_piecewise_off or refused:
        return host, 0.0
    return (host, float(SGLANG_PIECEWISE_MLA_MAX_TOKENS)) if mla else (0.0, 0.0)


def with_row_sglang_piecewise_off(profile: EngineProfile, flag: str | None) -> EngineProfile:
    """EXPERIMENT (h-ttftp50): ``profile`` with ``sglang_piecewise_off`` where a published row's own SGLang command
    sets ``flag``, one that ``ServerArgs._handle_piecewise_cuda_graph`` turns the piecewise graph off for; else
    unchanged."""
    return _copy_with(profile, sglang_piecewise_off=True) if flag else profile


def sglang_prefill_host_s(profile: EngineProfile, vendor: str, num_layers: int, moe_layers: int) -> float:
    """The host's launch time of an SGLang extend (prefill) step run eagerly, seconds: ``SGLANG_HOST_LAYER_S`` a dense
    layer and ``SGLANG_HOST_MOE_LAYER_S`` a MoE layer, where the release runs its extend steps eagerly on the GPU's
    vendor (``SGLANG_EAGER_PREFILL_RULES``; every release on a GPU that is not NVIDIA's); 0 otherwise (a piecewise
    graph). ``ModelRunner.forward`` replays its decode graph only for decode batches (``forward_mode.is_cuda_graph``);
    ``forward_extend`` launches each kernel from Python."""
    rule = profile.memory_fraction_rule
    if not rule.startswith("sglang") or (vendor == "NVIDIA" and rule not in SGLANG_EAGER_PREFILL_RULES):
        return 0.0
    return SGLANG_HOST_LAYER_S * (num_layers - moe_layers) + SGLANG_HOST_MOE_LAYER_S * moe_layers


#: The SGLang cells without a version that ran a 0.4-line build (their dates: 2024-12 and 2025-03).
SGLANG_04_UNVERSIONED = ("lmsysorg/sglang:latest, results committed 2024-12-14", "rocm/sgl-dev:upstream_20250312")


#: V0 turns chunked prefill on by itself for a ``max_model_len`` above this (``use_long_context = max_model_len >
#: 32768``, vllm/engine/arg_utils.py from 0.5.3 l.747; 0.6.3 l.936, 0.7.3 l.1164, 0.8.3 l.1550), read in the PyPI
#: sdists: not in 0.4.3 or 0.5.0-0.5.2 (no such rule), so from ``VLLM_V0_LONG_CONTEXT_CHUNKING``; only on a device of
#: type "cuda", which ROCm is too (v0.6.0 config.py l.1062-1068, v0.6.3 ``is_cuda_alike`` l.1075), until 0.6.5 adds
#: ``not current_platform.is_rocm()`` (l.1084; 0.6.6 l.1101, 0.7.0 l.1105, 0.7.3 l.1185) and 0.8's V0 path asks
#: ``current_platform.is_cuda()`` (``_set_default_args_v0``, v0.8.3 l.1546-1577); never with a sliding window (any
#: release), with prefix caching (0.5.3 l.760, 0.6.0 l.859; gone in 0.6.1), or for an MLA model (from 0.7.1:
#: ``VLLM_V0_MLA_NO_CHUNKING``).
VLLM_V0_LONG_CONTEXT_TOKENS = 32768
VLLM_V0_LONG_CONTEXT_CHUNKING = (0, 5, 3)
VLLM_V0_CHUNKING_PREFIX_CACHE_ALLOWED = (0, 6, 1)
VLLM_V0_CHUNKING_NOT_ROCM = (0, 6, 5)
#: vLLM 0.7.1 turned chunked prefill off for every MLA model (vllm/config.py ``VllmConfig.__post_init__``: "MLA is
#: enabled; forcing chunked prefill and prefix caching to be disabled", PR 12642); 0.8's V0 path never turns it on
#: for one (``_set_default_args_v0``). Before 0.7.1 vLLM ran no MLA model as MLA.
VLLM_V0_MLA_NO_CHUNKING = (0, 7, 1)
#: V0's token budget without chunked prefill, where the server sets none: ``max(max_model_len, 2048)``
#: (vllm/config.py ``SchedulerConfig.__post_init__``, v0.7.3 l.1536; for MLA set again in ``VllmConfig`` by PR 13620).
VLLM_V0_MIN_BATCHED_TOKENS = 2048


def vllm_v0_chunks_by_default(
    version: str, max_model_len: int, *, rocm: bool, sliding_window: bool = False, prefix_caching: bool = False,
    mla: bool = False,
) -> bool:  # fmt: skip
    """Whether a vLLM V0 server of ``version`` (a cell ``vllm_batching_release`` calls V0) that was not told
    ``--enable-chunked-prefill`` either way chunks prompts: ``max_model_len`` > ``VLLM_V0_LONG_CONTEXT_TOKENS`` from
    ``VLLM_V0_LONG_CONTEXT_CHUNKING``, on CUDA, or on ROCm before ``VLLM_V0_CHUNKING_NOT_ROCM``; no sliding window; no
    prefix caching before ``VLLM_V0_CHUNKING_PREFIX_CACHE_ALLOWED``; no MLA model from ``VLLM_V0_MLA_NO_CHUNKING``. A
    V0-marked cell with no release (a nightly image) is read as 0.8's V0 path."""
    parsed = parse_version(version)
    v = parsed.release if parsed else VLLM_V1_VERSION
    if v < VLLM_V0_LONG_CONTEXT_CHUNKING or max_model_len <= VLLM_V0_LONG_CONTEXT_TOKENS or sliding_window:
        return False
    if rocm and v >= VLLM_V0_CHUNKING_NOT_ROCM:
        return False
    if prefix_caching and v < VLLM_V0_CHUNKING_PREFIX_CACHE_ALLOWED:
        return False
    return not (mla and v >= VLLM_V0_MLA_NO_CHUNKING)


#: vLLM releases whose V0 engine kept the chunked default's 2,048-token budget after forcing chunked prefill off for an
#: MLA model, so that a longer prompt was refused ("Input prompt (N tokens) is too long and exceeds limit of 2048",
#: vLLM issue 13209): from PR 12642 (0.7.1) until PR 13620 set the budget to ``max(max_model_len, 2048)``, after
#: 0.7.3 (the 0.7.3 wheel's ``VllmConfig.__post_init__``, vllm/config.py l.3327-3335, sets no budget).
VLLM_MLA_PROMPT_LIMIT_RELEASES = ((0, 7, 1), (0, 7, 4))


def vllm_mla_prompt_limit(
    version: str, max_model_len: int, *, rocm: bool, mla: bool, chunked_prefill: bool | None,
    max_num_batched_tokens: int | None, sliding_window: bool = False, prefix_caching: bool = False,
) -> int | None:  # fmt: skip
    """The longest prompt a vLLM server of ``version`` accepted, where it refused longer ones, else None: an MLA model
    on a ``VLLM_MLA_PROMPT_LIMIT_RELEASES`` release whose chunked prefill was on (asked, or V0's long-context default)
    and then forced off, with no ``--max-num-batched-tokens``: ``VLLM_V0_MIN_BATCHED_TOKENS`` (2,048)."""
    parsed = parse_version(version)
    first, fixed = VLLM_MLA_PROMPT_LIMIT_RELEASES
    if not (mla and parsed and first <= parsed.release < fixed) or max_num_batched_tokens:
        return None
    if chunked_prefill is None:
        chunked_prefill = vllm_v0_chunks_by_default(
            version, max_model_len, rocm=rocm, sliding_window=sliding_window, prefix_caching=prefix_caching
        )
    return VLLM_V0_MIN_BATCHED_TOKENS if chunked_prefill else None


def with_v0_default_scheduler(
    profile: EngineProfile, engine: str, version: str, *, chunked_prefill: bool | None, scheduler_steps: int | None,
    max_model_len: int, rocm: bool, sliding_window: bool = False, prefix_caching: bool = False, mla: bool = False,
) -> EngineProfile:  # fmt: skip
    """``profile`` with ``prefill_only_steps`` where the row ran vLLM's V0 engine (``vllm_batching_release``) without chunked prefill (not ``--enable-chunked-prefill``, and not
    by V0's own rule, ``vllm_v0_chunks_by_default``) and without multi-step scheduling (``scheduler_steps`` > 1 is
    prefill-first already); else unchanged. V0's ``Scheduler._schedule`` runs ``_schedule_default`` unless
    ``chunked_prefill_enabled`` (vllm/core/scheduler.py v0.6.3 l.1174-1179, v0.7.3 l.1440-1445), which schedules
    whole waiting prompts first (``_schedule_prefills(..., enable_chunking=False)``, l.1014 / l.1232) and the running
    decodes only ``if len(prefills.seq_groups) == 0`` ("Don't schedule decodes if prefills are scheduled",
    l.1022-1027 / l.1240-1245). Its token budget, where the server sets none, is ``max(max_model_len, 2048)``
    (``VLLM_V0_MIN_BATCHED_TOKENS``; s184): a wave of prompts sent together is prefilled in one step, as dstack's
    closed loops of DeepSeek-R1 on vLLM 0.7.4 show (every request of a wave gets its first token at once). Shipped
    in s127 and s184 (docs/history.md) for published rows only: the profiles users and the workbook plan with carry
    no such flag. An MLA model on 0.7.1-0.7.3 whose chunking was forced off keeps the chunked default's 2,048
    (``vllm_mla_prompt_limit``: it refused longer prompts, vLLM issue 13209, until PR 13620)."""
    name = _engine_name(engine)
    if name != "vllm" or not profile.name.startswith("vllm"):
        return profile
    if vllm_batching_release(version)[0] != VLLM_BATCHING_RELEASES[0][1] or (scheduler_steps or 1) > 1:
        return profile
    asked = chunked_prefill
    if chunked_prefill is None:
        chunked_prefill = vllm_v0_chunks_by_default(
            version, max_model_len, rocm=rocm, sliding_window=sliding_window, prefix_caching=prefix_caching, mla=mla
        )
    if chunked_prefill:
        return profile
    kept = vllm_mla_prompt_limit(
        version, max_model_len, rocm=rocm, mla=mla, chunked_prefill=asked, max_num_batched_tokens=None,
        sliding_window=sliding_window, prefix_caching=prefix_caching,
    )  # fmt: skip
    budget = kept or max(max_model_len, VLLM_V0_MIN_BATCHED_TOKENS)
    return _copy_with(profile, prefill_only_steps=True, max_num_batched_tokens=budget)


#: A decode-graph limit below one sequence: no decode batch replays a graph (``EngineProfile.decode_graph_max_batch``).
NO_DECODE_GRAPH_BATCH = 0.5
#: An eager step's launch surplus per layer where the engine's own is not published: SGLang's (s123).
PYTORCH_EAGER_COSTS = {"eager_layer_s": SGLANG_EAGER_LAYER_S, "eager_moe_layer_s": SGLANG_EAGER_MOE_LAYER_S}


def trtllm_0_pytorch_profile() -> EngineProfile:
    """TensorRT-LLM's PyTorch backend as its 0.x releases served it (s183, docs/history.md): ``TENSORRT_LLM`` with
    every decode step eager, for a published 0.x row served by ``trtllm-serve --backend pytorch``
    (``planner.accuracy.published.pytorch_backend_of``; ``planner.accuracy.predict._base_profile_for``).
    ``PyTorchConfig.use_cuda_graph`` defaulted to False (tensorrt_llm/_torch/pyexecutor/config.py at commit 9b931c0f,
    2025-02, the build of the dstack rows), and that line's ``trtllm-serve`` built its PyTorchConfig with
    ``enable_overlap_scheduler=True`` alone (tensorrt_llm/commands/serve.py, ``get_llm_args``), so no graph was
    captured unless an ``--extra_llm_api_options`` file asked. Its launch surplus per layer is not published:
    SGLang's (``SGLANG_EAGER_LAYER_S``, ``SGLANG_EAGER_MOE_LAYER_S``: another PyTorch engine launching a layer's
    kernels one by one) stands in for it."""
    return _copy_with(TENSORRT_LLM, decode_graph_max_batch=NO_DECODE_GRAPH_BATCH, **PYTORCH_EAGER_COSTS)


#: EXPERIMENT switch (issue 21, s183), read at call time; off on main. On: a TensorRT-LLM 1.x row served by a plain
#: ``trtllm-serve`` (no CUDA-graph settings of its own: ``planner.accuracy.published.trtllm_serve_default_graphs``)
#: runs decode batches above ``TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH`` eagerly (``with_trtllm_serve_eager_decode``).
TRTLLM_SERVE_EAGER_ABOVE_GRAPHS = False
#: EXPERIMENT switch (issue 22, h-p50; docs/hypotheses/trtllm-graph-gaps.md), read at call time; off on main. On: as
#: ``TRTLLM_SERVE_EAGER_ABOVE_GRAPHS``, and the decode batches between the default graphs (33-63, 65-127) run eagerly
#: too: without ``enable_padding`` (False by default, ``DecodeCudaGraphConfig``) a generation batch of a size not
#: captured gets no graph (``PyTorchModelEngine._maybe_get_cuda_graph``).
TRTLLM_SERVE_EAGER_GRAPH_GAPS = False
#: The largest batch below which TensorRT-LLM 1.x's default graphs (no padding) take every size: 1-32, then 64 and 128
#: (``CudaGraphConfig._generate_cuda_graph_batch_sizes``, ``list(range(1, 32)) + [32, 64, 128]``).
TENSORRT_LLM_CUDA_GRAPH_EVERY_SIZE_TO = 32


def with_trtllm_serve_eager_decode(profile: EngineProfile, default_graphs: bool) -> EngineProfile:
    """``profile`` (TensorRT-LLM 1.x's, ``TENSORRT_LLM``) whose decode batches above the default graphs' largest
    (``TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH``, 128: ``CudaGraphConfig`` max_batch_size 0 read as 128, no padding) run
    eagerly at SGLang's eager cost per layer, as ``trtllm_0_pytorch_profile``'s every step does; under
    ``TRTLLM_SERVE_EAGER_ABOVE_GRAPHS`` and for a run on the default graphs only. The uncaptured sizes between them
    (33-63, 65-127) stay graphed here: the simulation interpolates decode steps over a batch grid. Any other profile
    or run keeps the profile."""
    on = TRTLLM_SERVE_EAGER_ABOVE_GRAPHS or TRTLLM_SERVE_EAGER_GRAPH_GAPS
    if not (on and default_graphs and profile.name == TENSORRT_LLM.name):
        return profile
    if profile.decode_graph_max_batch:
        return profile  # the 0.x line's PyTorch backend: no graphs at all
    gaps = float(TENSORRT_LLM_CUDA_GRAPH_EVERY_SIZE_TO) if TRTLLM_SERVE_EAGER_GRAPH_GAPS else 0.0
    return _copy_with(
        profile,
        decode_graph_max_batch=float(TENSORRT_LLM_CUDA_GRAPH_MAX_BATCH),
        decode_graph_gap_above=gaps,
        **PYTORCH_EAGER_COSTS,
    )


def with_sglang_eager_decode(profile: EngineProfile, engine: str, version: str) -> EngineProfile:
    """``profile`` with SGLang 0.4's eager decode steps (s123, docs/history.md): a decode batch above
    ``SGLANG_04_GRAPH_MAX_BATCH`` runs eagerly and pays ``SGLANG_EAGER_LAYER_S`` per dense layer and
    ``SGLANG_EAGER_MOE_LAYER_S`` per MoE layer on top of its step (``planner.model.decode.eager_surplus_s``). Only
    SGLang 0.4-line releases (a 0.4 version, or a cell in ``SGLANG_04_UNVERSIONED``); 0.5 releases (graphs to 256-512
    by GPU class, not modelled), other engines and versions that do not parse keep the profile. Applied where
    published rows get their profile (``planner.accuracy.predict._profile_for``), as ``with_release_kernels``."""
    name = _engine_name(engine)
    if name != "sglang":
        return profile
    v = parse_version(version)
    line_04 = v is not None and v.release[:2] == (0, 4)
    if not (line_04 or (v is None and any(tag in str(version) for tag in SGLANG_04_UNVERSIONED))):
        return profile
    return _copy_with(
        profile,
        decode_graph_max_batch=SGLANG_04_GRAPH_MAX_BATCH,
        eager_layer_s=SGLANG_EAGER_LAYER_S,
        eager_moe_layer_s=SGLANG_EAGER_MOE_LAYER_S,
    )


#: The per-MoE-layer release costs (issue 21; ``MoeLayerCost``, ``MOE_LAYER_COSTS``, ``with_moe_layer_costs``): a row
#: of a listed engine release on a listed GPU vendor pays a measured time per MoE layer per step on top of its
#: profile's, derived as (a published step - the planner's step at its shape) / the model's MoE layers.
#:
#: ``rocm-triton-moe``: shipped in s208 (h-band; docs/hypotheses/rocm-triton-moe-floor.md: it passed the ship rule;
#: ``bench/switch_bootstrap.py rocm-triton-moe:off`` turns it off). A row on an AMD GPU served by a release before
#: AITER's fused MoE (SGLang before 0.4.4, vLLM before 0.8) pays ``ROCM_TRITON_MOE_LAYER_S``; the ablation
#: ``rocm-triton-moe:sglang``: SGLang's releases alone (``engines``), the engine the constant was measured on.
#: The releases before AITER's fused MoE, per engine: versions below these (AITER's block-scale MoE arrived as opt-in
#: code in sgl-project/sglang pull requests 3788 (2025-02-22) and 4344 (2025-03-12), in vllm-project/vllm pull
#: requests 13998 / 14001 (2025-02-28); SGLang 0.4.4 and vLLM 0.8.0 are the first releases after them).
ROCM_TRITON_MOE_BEFORE = {"sglang": (0, 4, 4), "vllm": (0, 8, 0)}
#: sgl-project/sglang pull request 3237 (comment of 2025-02-24): ``sglang.bench_one_batch --batch-size 4 --input
#: 2048 --output 256 --model deepseek-ai/DeepSeek-V3 --tp 8`` on 8 x MI300X, SGLang ROCm main of late February 2025
#: (the Triton fused MoE, the unfused MLA decode): decode median latency 38.50 ms.
ROCM_TRITON_MOE_MEASURED_STEP_S = 38.50e-3
#: The planner's step at that shape on main 3895ae4b (``planner.decode_step("MI300X", "DeepSeek-V3", 2176, batch=4,
#: gpus=8, engine="sglang")``; context 2,048 + 256 / 2): 11.33 ms. tests/test_rocm_triton_moe.py re-derives it.
ROCM_TRITON_MOE_PLANNER_STEP_S = 11.33e-3
#: DeepSeek-V3's MoE layers (61 layers, the first 3 dense: its config.json's first_k_dense_replace).
ROCM_TRITON_MOE_MOE_LAYERS = 58
#: The missing time per MoE layer per step: (38.50 - 11.33) ms / 58 = 0.468 ms. The CK fused MoE in its place brings
#: the planner's step within 3.5% of a measured one (sgl-project/sglang pull request 4344's "before" run, CK_MOE=1:
#: batch 64 at 512 + 32 tokens, 38.76 ms measured, 40.18 ms the planner), so the time is the Triton MoE call's.
ROCM_TRITON_MOE_LAYER_S = (
    ROCM_TRITON_MOE_MEASURED_STEP_S - ROCM_TRITON_MOE_PLANNER_STEP_S
) / ROCM_TRITON_MOE_MOE_LAYERS

#: ``rocm-pre-aiter-prefill``: EXPERIMENT (h-amdttft; docs/hypotheses/amd-ttft.md), off
#: (``planner.accuracy.predict.ROCM_PRE_AITER_PREFILL``). A MoE model's prompt steps on an AMD GPU under a release
#: before AITER (the ``ROCM_TRITON_MOE_BEFORE`` releases: SGLang before 0.4.4, vLLM before 0.8) run their block-FP8
#: linears on Triton's ``w8a8_block_fp8_matmul`` (no CUTLASS on ROCm: sglang 0.4.3 ``fp8_utils.py`` l.71-84, vllm
#: 0.7.3 ``fp8_utils.py`` l.50-74), their experts on Triton's fused MoE and (SGLang) MLA's prompt attention on
#: Triton's extend kernel, at a FLOP rate ``ROCM_PRE_AITER_PREFILL_FLOP_FACTOR`` of the planner's MI300X rate.
#: Sized on the same run as ``ROCM_TRITON_MOE_MEASURED_STEP_S``: sgl-project/sglang pull request 3237 (comment of
#: 2025-02-24), ``bench_one_batch --batch-size 4 --input 2048 --output 256``, DeepSeek-V3, TP 8, 8 x MI300X, "Total.
#: latency: 10.656 s". bench_one_batch's total is one prefill of the batch plus ``output_len - 1`` decode steps
#: (sglang 0.4.3 ``bench_one_batch.py`` l.351-373), so the prefill of 4 x 2,048 tokens took 10.656 - 255 x 0.03850
#: (the decode median) = 0.8385 s (the same run with the fused MLA decode: 9.970 - 255 x 0.03581 = 0.8384 s).
ROCM_PRE_AITER_PREFILL_TOTAL_S = 10.656
ROCM_PRE_AITER_PREFILL_DECODE_STEPS = 255
ROCM_PRE_AITER_PREFILL_MEASURED_S = (
    ROCM_PRE_AITER_PREFILL_TOTAL_S - ROCM_PRE_AITER_PREFILL_DECODE_STEPS * ROCM_TRITON_MOE_MEASURED_STEP_S
)
#: The planner's prefill of that batch on main 8e4cbcfd (``planner.prefill("MI300X", "DeepSeek-V3", 2048, batch=4,
#: gpus=8, engine=<SGLang's profile with the shipped rocm-triton-moe term>)``): 351.9 ms (dense GEMMs 42.4, MoE 181.8,
#: attention 10.8, all-reduces 86.3, overheads 30.7). ``bench/rocm_pre_aiter_prefill.py`` and
#: tests/test_rocm_pre_aiter_prefill.py re-derive it.
ROCM_PRE_AITER_PREFILL_PLANNER_S = 0.3519
#: The factor on the profile's ``prefill_flop_efficiency`` that makes that prefill 0.8385 s (solved by bisection,
#: ``bench/rocm_pre_aiter_prefill.py``): the GEMM, MoE and attention FLOP rates of the prompt step at 32.3% of the
#: planner's (each compute term 3.09x); bandwidth, all-reduce and host terms unchanged.
ROCM_PRE_AITER_PREFILL_FLOP_FACTOR = 0.3232


def rocm_pre_aiter_prefill_applies(
    engine: str, version: str, vendor: str, moe: bool, engines=("sglang", "vllm")
) -> bool:
    """Whether a row's prompt steps run at ``ROCM_PRE_AITER_PREFILL_FLOP_FACTOR`` (the switch aside): a MoE model on
    an AMD GPU under an ``engines`` release before AITER (``ROCM_TRITON_MOE_BEFORE``; the version parsed: a dated
    build does not)."""
    name = _engine_name(engine)
    if not moe or str(vendor).upper() != "AMD" or name not in engines or name not in ROCM_TRITON_MOE_BEFORE:
        return False
    v = parse_version(version)
    if v is None:
        return False
    return (tuple(v.release) + (0, 0))[:3] < ROCM_TRITON_MOE_BEFORE[name]


def with_rocm_pre_aiter_prefill(profile: EngineProfile, factor: float = ROCM_PRE_AITER_PREFILL_FLOP_FACTOR):
    """``profile`` with its prompt steps' FLOP factor times ``factor`` (one copy per profile and factor)."""
    return _copy_with(profile, prefill_flop_efficiency=profile.prefill_flop_efficiency * factor)


#: ``sglang-early-hopper-moe``: EXPERIMENT (h-h200dsk; docs/hypotheses/sglang-early-hopper-deepseek-step.md), off. A
#: row on an NVIDIA GPU served by SGLang 0.4.1 to before 0.4.4 pays ``SGLANG_EARLY_HOPPER_MOE_LAYER_S``. Failed the
#: ship rule (held-out TTFT worst 464.85% -> 548.00%, DSTK-042's prompt steps; TPOT 16.45% -> 16.14%): kept off.
#: The SGLang releases it applies to: [0.4.1, 0.4.4) (0.4.1 the first with DeepSeek-V3; the upper bound is where the
#: evidence stops: 0.4.3.post2 is the newest release with a row, not a known fix).
SGLANG_EARLY_HOPPER_MOE_FROM = (0, 4, 1)
SGLANG_EARLY_HOPPER_MOE_BEFORE = (0, 4, 4)
#: sgl-project/sglang pull request 2643 ("chore: bump v0.4.1.post2", 2024-12-29), its description: DeepSeek-V3 served
#: by ``launch_server --tp 8 --enable-dp-attention`` on one node (GPU not printed; read as 8 x H200, see the doc),
#: "batch 1, input 128, output 256: 30.29 token/s": 1000 / 30.29 = 33.01 ms a token.
SGLANG_EARLY_HOPPER_MEASURED_STEP_S = 1.0 / 30.29
#: The planner's step at that shape on main e9ffa72d (``planner.decode_step("H200", "DeepSeek-V3", 256, batch=1,
#: gpus=8, engine="sglang", check_fit=False)``; context 128 + 256 / 2): 7.355 ms. tests re-derive it.
SGLANG_EARLY_HOPPER_PLANNER_STEP_S = 7.355e-3
#: DeepSeek-V3's MoE layers (61, the first 3 dense).
SGLANG_EARLY_HOPPER_MOE_LAYERS = 58
#: (33.01 - 7.355) ms / 58 = 0.442 ms per MoE layer per step. Check from the same description (not used for it): with
#: it the planner's batch 8 / 32 steps are 38.83 / 50.09 ms against 38.77 / 42.08 published (+0.2%, +19%).
SGLANG_EARLY_HOPPER_MOE_LAYER_S = (
    SGLANG_EARLY_HOPPER_MEASURED_STEP_S - SGLANG_EARLY_HOPPER_PLANNER_STEP_S
) / SGLANG_EARLY_HOPPER_MOE_LAYERS


@dataclass(frozen=True)
class MoeLayerCost:
    """One release's extra time per MoE layer per step (an entry of ``MOE_LAYER_COSTS``).

    ``key``: its switch's name (``bench/switch_bootstrap.py``); ``on``: whether it applies (read at call time, from
    the entry in ``MOE_LAYER_COSTS``: ``set_moe_layer_cost`` turns it); ``vendor``: the GPU vendor it applies on;
    ``engines``: the engines it applies to; ``since`` / ``before``: per engine, the first release that pays it and
    the first that does not (release numbers, padded to three; every engine has a ``before``); an engine missing from
    ``since`` pays it from its first release. The time: (``measured_step_s`` - ``planner_step_s``) / ``moe_layers`` (``layer_s``): a
    published step less the planner's at its shape, over the model's MoE layers; ``source``: where the measured step
    is published and the doc that records the hypothesis; ``steps``: "both" (decode and prompt steps pay it: the
    profile's ``moe_layer_overhead_s``) or "decode" (decode steps alone: ``decode_moe_layer_overhead_s``)."""

    key: str
    on: bool
    vendor: str
    engines: frozenset[str]
    before: tuple[tuple[str, tuple[int, int, int]], ...]
    measured_step_s: float
    planner_step_s: float
    moe_layers: int
    source: str
    since: tuple[tuple[str, tuple[int, int, int]], ...] = ()
    steps: Literal["both", "decode"] = "both"

    @property
    def layer_s(self) -> float:
        """Seconds per MoE layer per step: (measured step - the planner's) / MoE layers."""
        return (self.measured_step_s - self.planner_step_s) / self.moe_layers

    def applies(self, engine: str, version: str, vendor: str) -> bool:
        """Whether a row of ``engine`` at ``version`` on a GPU of ``vendor`` pays it (its switch aside): the vendor
        and engine listed, the version parsed (a dated build does not) within [since, before)."""
        name = _engine_name(engine)
        if str(vendor).upper() != self.vendor or name not in self.engines:
            return False
        v = parse_version(version)
        if v is None:
            return False
        release = (tuple(v.release) + (0, 0))[:3]
        return dict(self.since).get(name, (0, 0, 0)) <= release < dict(self.before)[name]


#: Every per-MoE-layer release cost, applied together by ``with_moe_layer_costs`` (the constants above keep their
#: derivations and sources). The module global is read at call time: ``set_moe_layer_cost`` replaces an entry.
MOE_LAYER_COSTS: tuple[MoeLayerCost, ...] = (
    MoeLayerCost(
        key="rocm-triton-moe",
        on=True,
        vendor="AMD",
        engines=frozenset({"sglang", "vllm"}),
        before=tuple(sorted(ROCM_TRITON_MOE_BEFORE.items())),
        measured_step_s=ROCM_TRITON_MOE_MEASURED_STEP_S,
        planner_step_s=ROCM_TRITON_MOE_PLANNER_STEP_S,
        moe_layers=ROCM_TRITON_MOE_MOE_LAYERS,
        source="sgl-project/sglang pull request 3237; docs/hypotheses/rocm-triton-moe-floor.md (h-band, s208)",
    ),
    MoeLayerCost(
        key="sglang-early-hopper-moe",
        on=False,
        vendor="NVIDIA",
        engines=frozenset({"sglang"}),
        since=(("sglang", SGLANG_EARLY_HOPPER_MOE_FROM),),
        before=(("sglang", SGLANG_EARLY_HOPPER_MOE_BEFORE),),
        measured_step_s=SGLANG_EARLY_HOPPER_MEASURED_STEP_S,
        planner_step_s=SGLANG_EARLY_HOPPER_PLANNER_STEP_S,
        moe_layers=SGLANG_EARLY_HOPPER_MOE_LAYERS,
        source="sgl-project/sglang pull request 2643; docs/hypotheses/sglang-early-hopper-deepseek-step.md (h-h200dsk)",
        # decode steps alone (h-moetab, docs/hypotheses/sglang-early-hopper-decode-only.md): the constant measures
        # decode steps; h-h200dsk's "both" failed on a prompt-step worst (``sglang-early-hopper-moe:both``)
        steps="decode",
    ),
)


def moe_layer_cost(key: str) -> MoeLayerCost:
    """The entry of ``MOE_LAYER_COSTS`` whose switch is ``key``."""
    for entry in MOE_LAYER_COSTS:
        if entry.key == key:
            return entry
    raise UnknownNameError("MoE layer cost", key, [e.key for e in MOE_LAYER_COSTS])


def set_moe_layer_cost(key: str, **changes: Any) -> None:
    """Replace the entry ``key`` of ``MOE_LAYER_COSTS`` by itself with ``changes`` (``on=False``: its switch off;
    ``engines=...``: fewer engines) for this process (``bench/switch_bootstrap.py``'s switches and ablations)."""
    global MOE_LAYER_COSTS
    entry = moe_layer_cost(key)
    MOE_LAYER_COSTS = tuple(replace(e, **changes) if e is entry else e for e in MOE_LAYER_COSTS)


def moe_layer_costs_on() -> bool:
    """Whether any entry of ``MOE_LAYER_COSTS`` is on (a row's GPU vendor is looked up only then)."""
    return any(e.on for e in MOE_LAYER_COSTS)


def with_moe_layer_costs(profile: EngineProfile, engine: str, version: str, vendor: str) -> EngineProfile:
    """``profile`` whose MoE layers each pay, per step, the ``layer_s`` of every entry of ``MOE_LAYER_COSTS`` that is
    on and applies to the row (``MoeLayerCost.applies``: its GPU ``vendor``, ``engine`` and ``version``): an entry
    whose ``steps`` is "both" on top of its ``moe_layer_overhead_s`` (decode and prefill steps alike), one whose
    ``steps`` is "decode" on top of its ``decode_moe_layer_overhead_s`` (decode steps alone); a dense model has no
    MoE layer to pay either. Rows no entry applies to, and versions that do not parse (dated builds), keep the
    profile."""
    hits = [e for e in MOE_LAYER_COSTS if e.on and e.applies(engine, version, vendor)]
    if not hits:
        return profile
    both = [e.layer_s for e in hits if e.steps == "both"]
    decode = [e.layer_s for e in hits if e.steps == "decode"]
    changes = {}
    if both:
        changes["moe_layer_overhead_s"] = sum(both, profile.moe_layer_overhead_s)
    if decode:
        changes["decode_moe_layer_overhead_s"] = sum(decode, profile.decode_moe_layer_overhead_s)
    return _copy_with(profile, **changes)


def with_dp_attention_kv_pool(profile: EngineProfile, ranks: int) -> EngineProfile:
    """``profile`` whose KV pool and request slots are those of ``ranks`` SGLang attention-DP ranks
    (``EngineProfile.dp_attention_kv_ranks``; docs/hypotheses/sglang-dp-attention-kv-pool.md); 1 or less keeps it."""
    return profile if ranks <= 1 else _copy_with(profile, dp_attention_kv_ranks=int(ranks))


def with_prefill_chunk_divisor(profile: EngineProfile, divisor: int) -> EngineProfile:
    """``profile`` whose prefill chunk is divided by ``divisor`` (``EngineProfile.prefill_chunk_divisor``: SGLang's
    attention data parallelism, as the row's release does it); 1 keeps the profile."""
    return profile if divisor <= 1 else _copy_with(profile, prefill_chunk_divisor=int(divisor))


#: EXPERIMENT switch (issues 21 and 22, s126), read at call time; off on main. On: a row whose own server command
#: spreads the experts (``planner.accuracy.published.expert_parallel_of``) is priced with whole experts on each GPU
#: (``with_expert_parallel``); every other row keeps the split width.
EXPERT_PARALLEL_FROM_ROWS = False
#: The engine profiles the reading applies to (None: every one; ``bench/switch_bootstrap.py
#: expert-parallel:trtllm``: TensorRT-LLM 1.x's alone, the one engine whose own kernel was measured at both layouts)
EXPERT_PARALLEL_PROFILES: frozenset[str] | None = None


def with_expert_parallel(profile: EngineProfile, expert_parallel: bool) -> EngineProfile:
    """EXPERIMENT (s126): ``profile`` with ``experts_whole`` 1 when ``EXPERT_PARALLEL_FROM_ROWS`` is on and the row ran
    with expert parallelism (``expert_parallel``), else unchanged.

    Assumed, with tensor-parallel attention (no data-parallel attention): the MoE input is replicated on every GPU,
    each GPU runs its E / g whole experts over the tokens routed to them and the outputs are summed by the same
    all-reduce as tensor parallelism (TensorRT-LLM's TP + EP, vLLM's and SGLang's expert parallelism at DP 1 use no
    all-to-all), so only the grouped GEMM's width changes: the rows per expert and the expert bytes per GPU are the
    same; routing uniform (no GPU holds more of the touched experts than E / g)."""
    if not EXPERT_PARALLEL_FROM_ROWS or not expert_parallel:
        return profile
    if EXPERT_PARALLEL_PROFILES is not None and profile.name not in EXPERT_PARALLEL_PROFILES:
        return profile
    return _copy_with(profile, experts_whole=1.0)


def with_release_batching(profile: EngineProfile, engine: str, version: str) -> EngineProfile:
    """A vLLM ``profile`` with the batching defaults of the release that ran a row (``vllm_batching_release``);
    another engine, a profile that is not vLLM's, or a cell with neither a version nor a V0 mark keeps the profile.

    Experiment, not used by the shipped model: no prediction of a published row and no user surface calls it
    (``bench/vllm_batching_releases.py`` and ``bench/switch_bootstrap.py release-batching`` do; it failed its ship
    rule, docs/history.md: "vLLM's batching defaults by release", s107). What ships is narrower:
    ``engine_for_version`` gives a release newer than ``NEWEST_LOGGED_VLLM`` its own defaults (``_batching_fields``;
    0.28.0 on: the 160 GiB class, History s113)."""
    name = _engine_name(engine)
    if name != "vllm" or not profile.name.startswith("vllm"):
        return profile
    rule, fields = vllm_batching_release(version)
    return _copy_with(profile, **_batching_fields(rule)) if fields else profile


def _engine_key(engine: str) -> str:
    """An engine name as ``engine_profile`` looks it up, before aliases: lower case, '-' for '_' and spaces."""
    return str(engine or "").strip().lower().replace("_", "-").replace(" ", "-")


def _engine_name(engine: str) -> str:
    """A row's engine cell as the per-release readings compare it: ``_engine_key`` through ``ENGINE_ALIASES``
    ("TensorRT-LLM" -> "tensorrt-llm", "TurboMind" -> "lmdeploy")."""
    key = _engine_key(engine)
    return ENGINE_ALIASES.get(key, key)


@functools.lru_cache(maxsize=256)
def _copy_with(profile: EngineProfile, **changes: float | bool | int) -> EngineProfile:
    """``profile`` with ``changes``, one copy per profile and changes: the facts caches key on the profile object, so
    every row of one base profile that a per-release reading changes alike must get the same copy."""
    return profile.with_(**changes)


def _batching_fields(rule: str) -> dict[str, float]:
    """The batching fields ``VLLM_BATCHING_RELEASES`` gives ``rule``."""
    return next(f for _, r, f in VLLM_BATCHING_RELEASES if r == rule)


def pinned_release(engine: Any) -> tuple[str, str] | None:
    """(the engine's name, the release as written) of an engine named with a release ("vllm==0.11.0": ("vllm",
    "0.11.0")), as ``engine_profile`` reads it; None for a bare name, a profile or anything else."""
    hit = _VERSION.match(str(engine).strip().lower()) if isinstance(engine, str) else None
    return (hit["name"], hit["version"]) if hit else None


def engine_profile(engine: str | EngineProfile | None) -> EngineProfile:
    """The profile for a name ('vllm', 'tensorrt-llm', 'ideal'), a release ('vllm==0.11.0'), or the profile itself."""
    if isinstance(engine, EngineProfile):
        return engine
    text = str(engine or DEFAULT_ENGINE).strip().lower()
    key = text.replace("_", "-").replace(" ", "-")
    key = ENGINE_ALIASES.get(key, key)
    if key in ENGINES:
        return ENGINES[key]
    hit = _VERSION.match(text)
    if hit and ENGINE_ALIASES.get(hit["name"], hit["name"]) in ENGINES:
        return engine_for_version(hit["name"], text[hit.start("version") :])[0]  # "0.5.3rc0": the rc too
    name, pinned, version = (part.strip() for part in text.partition("=="))
    if pinned and ENGINE_ALIASES.get(name, name) in ENGINES:  # a known engine, a release that is no version number
        raise InvalidInputError(f"engine {engine!r}: {version!r} is not a version number (e.g. vllm==0.11.0)")
    raise UnknownNameError("engine", engine, [*ENGINES, "<engine>==<version>"]) from None


def engine_label(engine: Any) -> str:
    """How an error names the engine whose loading rules it states: vLLM (also for LMDeploy and the ideal engine,
    which follow vLLM's rules here), SGLang or TensorRT-LLM."""
    name = engine_profile(engine).name
    return "SGLang" if name.startswith("sglang") else "TensorRT-LLM" if name.startswith("tensorrt") else "vLLM"


def with_row_memory_utilization(profile: EngineProfile, share: float | None) -> EngineProfile:
    """``profile`` with ``row_memory_utilization`` where a published row's own command sets the engine's memory share
    (``planner.accuracy.published.server_memory_share``), else unchanged: the run's KV cache as its server sized it,
    not at the engine's default. Shipped in s187 (docs/history.md)."""
    if not share or not 0.0 < share <= 1.0:
        return profile
    return _copy_with(profile, row_memory_utilization=float(share))


def with_row_scheduler_recv_interval(profile: EngineProfile, interval: int | None) -> EngineProfile:
    """``profile`` with ``scheduler_recv_interval`` N where a published row's own command sets SGLang's
    ``--scheduler-recv-interval N`` above 1 (``ServerArgs.scheduler_recv_interval``, read by ``SchedulerRecvSkipper``
    from 0.5.3), else unchanged: every other row and every plan read new requests each scheduler loop. Shipped in s187
    (docs/history.md)."""
    if not interval or interval <= 1:
        return profile
    return _copy_with(profile, scheduler_recv_interval=int(interval))


def with_row_attention_dp_gate(profile: EngineProfile, iters: int | None, ranks: int = 1) -> EngineProfile:
    """``profile`` with ``attention_dp_gate_iters`` T where a published TensorRT-LLM row's options turn on attention
    data parallelism with ``attention_dp_config.enable_balance`` (``PyExecutor._balance_adp_requests``: a rank's
    context requests wait until every rank has one or ``timeout_iters`` iterations have passed), else unchanged:
    every other row and every plan admit prompts at any step (h-trt, docs/history.md). ``ranks``: the attention
    ranks, R; the quorum read as "every rank has one" is ceil(H_R) (``RunBehaviour.context_gate_quorum``)."""
    if not iters or iters <= 1 or ranks <= 1:
        return profile
    quorum = math.ceil(sum(1.0 / i for i in range(1, int(ranks) + 1)) - 1e-9)
    return _copy_with(profile, attention_dp_gate_iters=int(iters), attention_dp_gate_quorum=quorum)


def with_row_max_prefill_tokens(profile: EngineProfile, max_prefill_tokens: int | None) -> EngineProfile:
    """``profile`` with ``max_prefill_tokens`` N where a published row's own command sets ``--max-prefill-tokens N``
    (SGLang's ``ServerArgs.max_prefill_tokens``, which starts ``PrefillAdder.rem_input_tokens``), else unchanged; every
    other row and every plan keep ``SGLANG_MAX_PREFILL_TOKENS`` (16,384). Only SGLang's scheduler reads it
    (``planner.serving.simulate``). Shipped in s139 (docs/history.md)."""
    if not max_prefill_tokens or max_prefill_tokens <= 0:
        return profile
    return _copy_with(profile, max_prefill_tokens=int(max_prefill_tokens))
