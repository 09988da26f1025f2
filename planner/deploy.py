"""A deployment of scenarios: names resolved to typed facts, numbers checked, the GPU group chosen or checked.

``planner.api`` calls ``deploy`` and then one model function (``memory_plan``, ``decode_step``,
``prefill_step``); this module holds the plumbing they share: the tensor-parallel group (given and valid, or
the smallest valid one that fits), the "does not fit" error with its way out, and result shaping.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from planner import model as m
from planner.accuracy.calibration import resolve_calibration
from planner.catalog import Catalog, Gpu, Model, as_catalog
from planner.catalog.names import implied_weight_precision
from planner.catalog.resolve import (
    KV_DTYPES_CHECKED,
    Resolved,
    _resolve,
    engine_vendor_refused,
    gpu_numbers,
    kv_formats,
)
from planner.catalog.schema import NVIDIA_ONLY_WEIGHTS
from planner.checks import (
    Errors,
    _count_or_mask,
    _fraction,
    _nonnegative,
    check_series_aligned,
    is_shape_mismatch,
    one_scenario,
    shape_error,
)
from planner.engines.architecture import model_facts
from planner.engines.kernel_paths import (
    ARCHITECTURE_SM,
    PROFILE_RELEASES,
    profile_mxfp4_refusal,
    refusal_message,
)
from planner.engines.profiles import (
    ENGINE_ALIASES,
    EngineProfile,
    engine_label,
    engine_profile,
    parse_version,
    pinned_release,
)
from planner.engines.sglang import default_memory_fraction
from planner.errors import DoesNotFitError, InvalidInputError, OutOfRangeError, typed_name
from planner.io import heap
from planner.model import failures, ops
from planner.model.layouts import (
    PARALLELISMS,
    is_pipeline,
    layout_label,
    pipeline_stages,
    spreads_experts,
    stages_named,
)
from planner.model.parallel import streams_of
from planner.model.rows import Rows, gathered, per_row
from planner.options import Options
from planner.units import counted

#: Tensor-parallel group sizes tried when the GPU count is not given (beyond 8: several nodes).
GPU_GROUPS = (1, 2, 4, 8, 16, 32, 64)


def scale_up_gpus(gpu: Gpu) -> int:
    """GPUs one tensor-parallel group can span at the speed modelled: the GPU's scale-up domain (NVLink, Infinity
    Fabric: ``Gpu.interconnect_domain_gpus``; 72 on an NVL72 rack) or one 8-GPU node, whichever is larger (PCIe cards
    talk at PCIe's rate within a node, as modelled)."""
    domain = gpu.interconnect_domain_gpus
    return max(8, int(domain)) if domain is not None and math.isfinite(domain) else 8


def spans_nodes_warning(gpu: Gpu, gpus: int, parallelism: str = "tp") -> str:
    """Where a group of ``gpus`` is larger than ``scale_up_gpus``: that it spans several nodes, slower than modelled,
    naming what crosses them (tensor parallelism's all-reduces; under "dp-ep" the experts' exchange between the
    data-parallel attention ranks, trial 16, F11); "" elsewhere."""
    most = scale_up_gpus(gpu)
    if gpus <= most:
        return ""
    what = "one 8-GPU node" if most == 8 else f"{gpu.name}'s {most}-GPU NVLink domain"
    if parallelism == "dp-ep":
        return (
            f"{gpus:,} GPUs is more than {what}: the attention ranks are data-parallel, but the experts' all-to-all "
            "exchange between them crosses nodes, slower than modelled"
        )
    return f"{gpus:,} GPUs is more than {what}: tensor parallelism across nodes is slower than modelled"


#: What planner does not model of large-scale MoE serving (data-parallel attention + expert parallel, "dp-ep"), in
#: the order README's "Not modelled" line names them (tests/test_plan_not_modelled.py checks README against it); a
#: dp-ep plan prints them (``not_modelled_words``). Trial 31 F7: LMSYS's 96 x H100 DeepSeek deployment (2025-05-05)
#: uses them, and the plan never said so.
LARGE_SCALE_MOE_NOT_MODELLED = (
    "a data-parallel size other than the expert-parallel size",
    "tensor-parallel attention inside a DP rank",
    "EPLB's redundant experts",
    "DeepEP's low-latency kernels",
    "two-batch overlap",
    "prefill/decode disaggregation",
)
#: What a tensor-parallel group larger than one node (``scale_up_gpus``) is not modelled with: its all-reduces are
#: timed at PCIe's rate and latency (``planner.model.decode.allreduce_time_s``: past the fabric domain).
ACROSS_NODES_NOT_MODELLED = (
    "the scale-out network between nodes (InfiniBand or RoCE): all-reduces across nodes are timed at PCIe's rate"
)
#: Why a time range's slow end is open (``slow_end_open``): the figure is slower than modelled by an amount no
#: published run measures (trial 31 F7), so no widening factor is invented; the range reads "to more than".
SLOW_END_OPEN_WORDS = "across nodes, slower than modelled; no held-out run across nodes"


def slow_end_open(gpu: Gpu, gpus: int, parallelism: str = "tp") -> str:
    """Why the time ranges' slow end is open for a group of ``gpus`` x ``gpu`` split as ``parallelism``
    (``SLOW_END_OPEN_WORDS``) where the plan warns that it spans nodes, slower than modelled
    (``spans_nodes_warning``; a pipeline's sends between nodes are timed at PCIe's, no such warning); "" elsewhere."""
    if is_pipeline(parallelism) or not spans_nodes_warning(gpu, gpus, parallelism):
        return ""
    return SLOW_END_OPEN_WORDS


def listed_words(items: tuple[str, ...]) -> str:
    """ "a, b, and c" (README's list form)."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", and " + items[-1]


def not_modelled_words(gpu: Gpu, gpus: int, parallelism: str = "tp") -> str:
    """What planner does not model for this layout, one line: the large-scale MoE recipe for "dp-ep"
    (``LARGE_SCALE_MOE_NOT_MODELLED``), the scale-out network for a tensor-parallel group across nodes
    (``ACROSS_NODES_NOT_MODELLED``); "" for a layout inside one node."""
    parts = []
    if parallelism == "dp-ep":
        parts.append(listed_words(LARGE_SCALE_MOE_NOT_MODELLED))
    elif slow_end_open(gpu, gpus, parallelism):
        parts.append(ACROSS_NODES_NOT_MODELLED)
    return "; ".join(parts)


#: The largest group a fleet search tries unless told otherwise (one 8-GPU node): ``planner export``'s
#: ``max_gpus_per_replica`` default and ``planner plan --rate`` without ``--gpus``.
LARGEST_GROUP_TRIED = 8
#: Input limits: the largest context, batch and GPU count an argument may ask for.
MAX_CONTEXT_TOKENS = 2**24
MAX_BATCH_INPUT = 2**20
MAX_GPUS = 4096


# -- the engine's batch limit ------------------------------------------------------------------------


def engine_sequence_limit(engine: EngineProfile, gpu: Gpu, parallelism: str = "tp", gpus: float = 1) -> int:
    """The most sequences the engine runs at once on a group of ``gpus`` x ``gpu``: its ``max_num_seqs`` on that GPU
    (``EngineProfile.batching_limits``: vLLM's default 1,024 on an H100-class GPU, 256 on an A100 or a smaller
    one), times the group's attention ranks under "dp-ep" (each rank schedules its own) and its pipeline's
    micro-batches where the engine's limit holds per micro-batch (``pipeline_seqs_per_micro_batch``, TensorRT-LLM).
    Memory may hold more: the engine still runs at most this many (``served_batch``)."""
    _, seqs = engine.batching_limits(gpu.memory_bytes, gpu.engine_device_name)
    per_stream = parallelism == "dp-ep" or (is_pipeline(parallelism) and engine.pipeline_seqs_per_micro_batch)
    return int(seqs) * (int(streams_of(parallelism, float(gpus))) if per_stream else 1)


def memory_utilization_in_effect(
    engine: EngineProfile,
    visible_bytes_per_gpu: float,
    gpus: float,
    parallelism: str = "tp",
    mla: bool = False,
    given: float | None = None,
) -> float:
    """The share of each GPU's engine-visible memory the engine takes for weights, reserve and KV cache on one
    scenario: ``given`` where set, else the engine's default (vLLM's gpu_memory_utilization 0.9), SGLang's
    mem_fraction_static by its rule on this GPU and group (``default_memory_fraction``: visible memory, TP size,
    data-parallel attention ranks under "dp-ep", MLA). What ``planner plan`` prints as "x utilization" and a budget
    review's memory rows state."""
    if given is not None:
        return float(given)
    if not engine.memory_fraction_rule:
        return float(engine.memory_utilization)
    ranks = gpus if parallelism == "dp-ep" else 1
    return float(default_memory_fraction(engine.memory_fraction_rule, visible_bytes_per_gpu, gpus, ranks, mla))


def weight_bytes_per_gpu(
    memory: m.MemoryPlan, engine: EngineProfile, memory_utilization: float, parallelism: str = "tp"
) -> float:
    """Weights one GPU of the group holds, bytes, on one scenario: whole model / GPUs where every layer is split
    over the group (tensor parallel, experts spread or not), + the tensors every rank holds whole beyond their 1/g
    share (``MemoryPlan.replicated_weight_bytes_per_gpu``: MLA's fused q_a + kv_a projection); under data-parallel attention or a pipeline of more than
    one stage, not 1/g of the weights a GPU: the KV budget's own identity gives them (``kv_budget_bytes_per_gpu``),
    visible x utilization - reserve - budget ("total", vLLM) or visible - reserve - budget / utilization ("free":
    TensorRT-LLM, LMDeploy)."""
    gpus = float(memory.gpus)
    if parallelism != "dp-ep" and float(pipeline_stages(parallelism, gpus)) <= 1:
        return float(memory.weight_bytes) / gpus + float(memory.replicated_weight_bytes_per_gpu)
    visible, reserve = float(memory.visible_bytes_per_gpu), float(memory.reserve_bytes_per_gpu)
    budget = float(memory.kv_budget_bytes_per_gpu)
    if engine.budget_mode == "free":
        return visible - reserve - budget / memory_utilization
    return visible * memory_utilization - reserve - budget


def served_batch(
    memory_max_batch: int, engine: EngineProfile, gpu: Gpu, parallelism: str = "tp", gpus: float = 1
) -> tuple[int, bool]:
    """(batch, capped): the largest batch the engine serves, min(``memory_max_batch``, ``engine_sequence_limit``),
    and whether the engine's limit (not memory) bounds it."""
    limit = engine_sequence_limit(engine, gpu, parallelism, gpus)
    return min(int(memory_max_batch), limit), limit < int(memory_max_batch)


# -- flags --------------------------------------------------------------------------------------------


#: An 8-bit cache read at under this share of the 16-bit cache's bytes/s gets ``fp8_kv_note``.
FP8_KV_NOTE_BELOW = 0.75


def fp8_kv_note(g: Gpu, mdl: Model, eng: EngineProfile, kv_name: str, kv_bytes_per_element: float) -> str:
    """What an 8-bit KV cache buys where the engine's decode attention reads it at well under a 16-bit cache's bytes/s
    (``planner.model.operators.attention_time_s``: vLLM's and SGLang's FlashAttention-3 on Hopper): 2 / B times the
    tokens in the cache, but attention time per cached token falls by 1 - B / 2 x (16-bit rate / 8-bit rate), not by
    1 - B / 2 (B: the cache's bytes per value). "" elsewhere (a 16-bit cache, an MLA model, TensorRT-LLM's kernels, a
    GPU or engine without kernel curves)."""
    if kv_bytes_per_element > 1.0 or mdl.mla is not None or not eng.kernel_curves:
        return ""
    n = gpu_numbers(g, eng)
    bf16, fp8 = n["attention_bandwidth_efficiency"], n["attention_fp8_bandwidth_efficiency"]
    if fp8 >= FP8_KV_NOTE_BELOW * bf16:
        return ""
    bw = float(g.hbm_bandwidth_bytes_per_s)
    fall, bytes_fall = 1.0 - kv_bytes_per_element / 2.0 * bf16 / fp8, 1.0 - kv_bytes_per_element / 2.0
    return (
        f"{kv_name} KV cache: {2.0 / kv_bytes_per_element:g}x the tokens fit, but {eng.name}'s decode attention reads "
        f"it at {fp8 * bw / 1e12:.2f} TB/s on {g.name} against {bf16 * bw / 1e12:.2f} for bf16 (measured kernel "
        f"tables), so attention's time per cached token falls {max(fall, 0.0):.0%}, not {bytes_fall:.0%}"
    )


def trained_context_warning(model: Model, context_tokens: float) -> str | None:
    """The flag on a sequence longer than the model was trained for (``Model.max_context``, its config's
    ``max_position_embeddings``): such a context is computed, not refused (the KV cache grows linearly; planning a
    longer context is a question people ask), and said in these words on every surface (``planner plan``'s warning,
    the review's note, =PLANNER_WHY beside a number): "context 200,000 exceeds Llama-2-70B's trained maximum of
    4,096 tokens; memory and time are extrapolated". None within the maximum (or for a context that is not a
    number: its own check refuses it)."""
    tokens = float(context_tokens)
    if not math.isfinite(tokens) or tokens <= model.max_context:
        return None
    shown = f"{int(tokens):,}" if tokens == int(tokens) else f"{tokens:,}"
    return (
        f"context {shown} exceeds {model.name}'s trained maximum of {model.max_context:,} tokens; "
        "memory and time are extrapolated"
    )


# -- result shaping -------------------------------------------------------------------------------------


def finish(result: Any, bad: Any, errors: Errors, index=None, integer: bool = False):
    """NaN where a scenario failed (coerce), a Python scalar for scalar input, a Series for Series input."""
    if type(result) is float and bad is False:  # one scenario that worked
        return int(result) if integer and result == result else result
    given = result
    if isinstance(result, Rows) and isinstance(bad, Rows) and result.codes is bad.codes:  # NaN per row, one gather
        out = np.asarray(np.where(bad, np.nan, result), dtype=float)
    else:
        result, bad = gathered(result), gathered(bad)  # per-row values (planner.model.rows) become per scenario
        out = np.where(bad, np.nan, result) if np.any(bad) else np.asarray(result, dtype=float)
    if integer and (errors == "raise" or not np.isnan(out).any()):  # counts: integers wherever none failed
        out = out.astype(np.int64)
    if out.ndim == 0:
        v = out.item()
        return int(v) if integer and not (isinstance(v, float) and math.isnan(v)) else v
    if index is not None and len(index) == out.shape[0] and out.ndim == 1:
        import pandas as pd

        # A new array (gathered, np.where's, a cast) is the Series' own; the caller's array is copied.
        return pd.Series(out, index=index, copy=out is given or out.base is not None)
    return out


def sweep_options(o: Options) -> tuple[Any, Any]:
    """The numeric memory options a sweep may vary (``memory_utilization``, ``reserve_bytes``): with the names and
    numbers, the arguments whose pandas index the result takes."""
    return o.memory_utilization, o.reserve_bytes


#: Fields of a result record that count whole things (GPUs in the group, sequences): an array of them is int64 where
#: no scenario failed (``finish``'s ``integer``), float with NaN where one did (errors="coerce"). One scenario's
#: record keeps its floats.
COUNT_FIELDS = frozenset({"gpus", "max_batch"})


def finish_record(record: Any, bad: Any, index=None, field: str | None = None):
    """Every field of a result record (MemoryPlan, DecodeStep, PrefillStep) finished as ``finish`` does; with
    ``field``, only that field (or property) of the record, finished, which is the same number as that of the
    finished record."""
    if field is not None:
        value = getattr(record, field)
        if type(value) is float and bad is False:  # one scenario that worked: the number as it is (no numpy)
            return value
        value = value if isinstance(value, Rows) else np.asarray(value, dtype=float)
        return finish(value, bad, "coerce", index, integer=field in COUNT_FIELDS and np.ndim(value) > 0)
    if bad is False and all(type(v) is float for v in vars(record).values()):
        return record
    return type(record)(
        **{
            f.name: finish(
                np.asarray(getattr(record, f.name), dtype=float),
                bad,
                "coerce",
                index,
                integer=f.name in COUNT_FIELDS and np.ndim(getattr(record, f.name)) > 0,
            )
            for f in fields(record)
        }
    )


def nan_record(cls: type, *args: Any):
    """A result record of NaN in the broadcast shape of ``args`` (every scenario failed a lookup)."""
    shape = np.broadcast(*(np.asarray(a, dtype=object) for a in args)).shape
    return cls(**{f.name: finish(np.full(shape, np.nan), True, "coerce") for f in fields(cls)})


def all_failed(first_error: Exception | None, errors: Errors, *args: Any):
    """Every scenario failed a lookup: raise the first error, or NaN of the broadcast shape."""
    if errors == "raise" and first_error:
        raise first_error
    shape = np.broadcast(*(np.asarray(a, dtype=object) for a in args)).shape
    return finish(np.full(shape, np.nan), True, errors)


# -- tensor-parallel groups -----------------------------------------------------------------------------


def valid_tp_sizes(
    model: Any,
    *,
    max_gpus: int = GPU_GROUPS[-1],
    catalog: Catalog | None = None,
    parallelism: str = "tp",
    engine: Any = None,
) -> tuple[int, ...]:
    """Group sizes up to ``max_gpus`` that the engine runs ``model`` on (``model.group_ok``; tensor-parallel by
    default; vLLM's rules unless ``engine`` names another: TensorRT-LLM's KV heads need not divide).

    Attention heads divisible by the group, and KV heads divisible by it or it by them. Llama 2 70B (64 heads,
    8 KV heads): 1, 2, 4, 8, 16, 32, 64; Qwen2-7B (28, 4): 1, 2, 4 (28 heads allow 28, its MLP width does not).
    """
    one_scenario("valid_tp_sizes", "loop over models: {m: valid_tp_sizes(m) for m in models}", model=model)
    mdl = model if isinstance(model, Model) else as_catalog(catalog).model(model)
    any_kv = engine_profile(engine).kv_heads_any_split
    sizes = np.arange(1, int(max_gpus) + 1)
    return tuple(int(n) for n in sizes[m.group_ok(model_facts(mdl), sizes, check_parallelism(parallelism), any_kv)])


def groups_to_try(
    model: Any,
    *,
    max_gpus: int = LARGEST_GROUP_TRIED,
    catalog: Catalog | None = None,
    parallelism: str = "tp",
    engine: Any = None,
) -> tuple[int, ...]:
    """The groups a fleet search sizes (``planner export``, ``planner plan --rate`` without ``--gpus``): each of
    ``GPU_GROUPS`` up to ``max_gpus`` that the engine runs ``model`` on (``valid_tp_sizes``)."""
    valid = valid_tp_sizes(model, max_gpus=max_gpus, catalog=catalog, parallelism=parallelism, engine=engine)
    return tuple(n for n in GPU_GROUPS if n in valid)


def next_tp_size(model: Any, gpus: int, *, catalog: Catalog | None = None, engine: Any = None) -> int:
    """The smallest group of ``GPU_GROUPS`` above ``gpus`` that the engine runs ``model`` on (``valid_tp_sizes``).

    The what-if workbook's "More GPUs" lever. Llama 2 70B above 4: 8; Qwen2-7B (28 heads, 4 KV heads) above 2: 4,
    above 4: none of 8 to 64 divides its heads, so OutOfRangeError naming the valid sizes.
    """
    one_scenario("next_tp_size", "loop over models", model=model, gpus=gpus)
    mdl = model if isinstance(model, Model) else as_catalog(catalog).model(model)
    valid = valid_tp_sizes(mdl, engine=engine)
    larger = [g for g in GPU_GROUPS if g > gpus and g in valid]
    if not larger:
        raise OutOfRangeError(
            f"{mdl.name} has no tensor-parallel group above {gpus:,} GPUs among {', '.join(map(str, GPU_GROUPS))}"
            f" that {engine_label(engine)} accepts; valid groups: {', '.join(map(str, valid))}"
        )
    return larger[0]


def sglang_dp_default(engine: Any, util: Any, parallelism: str, gpus: float) -> bool:
    """Whether a plan's memory fraction is SGLang's default rule under data-parallel attention over more than one rank
    (``utilization_on``: none given, a ``memory_fraction_rule``, "dp-ep"), whose DP reserve grows with the DP size."""
    eng = engine_profile(engine)
    return util is None and bool(eng.memory_fraction_rule) and parallelism == "dp-ep" and gpus > 1


def sglang_dp_default_words(fraction: float, dp: int) -> str:
    """What SGLang's default mem_fraction_static does at DP ``dp`` (trial 16, F3), for a refusal: the rule reserves
    cuda_graph_max_bs x dp_size x 3 MiB (x 1.5 more above 300 graphs) for DP attention on every GPU
    (``planner.engines.sglang.sglang_reserved_mib``; SGLang 0.5.23 ``sglang/srt/arg_groups/memory_hook.py``
    ``reserve_for_graph_mb``: ``reserved_mem += decode_cuda_graph_config.max_bs * cfg.dp_size * 3``, and ``* 1.5``
    above 300; 0.5.5 ``server_args.py`` ``_handle_gpu_memory_settings`` the same), so 512 graphs at DP 16 keep 36 GiB
    of an 80 GiB H100 out of the fraction and DP 32 leaves it below 0. Deployments of this size set
    --mem-fraction-static (the LMSYS 96 x H100 DeepSeek deployment, 2025-05-05)."""
    left = "below 0, so SGLang cannot start with it" if fraction <= 0 else "too little for the weights"
    return (
        f"SGLang's default rule gives mem_fraction_static {fraction:.3g} at DP {dp:,}, {left} (its reserve for DP "
        "attention grows with the DP size); deployments of this size set --mem-fraction-static: give it as "
        "memory_utilization (planner plan --memory-utilization F)"
    )


def memory_fraction_words(engine: Any, fraction: float) -> str:
    """The engine's option that sets the share of each GPU's memory it takes for weights, activations and KV cache,
    with its value: "vLLM's gpu_memory_utilization 0.9", "SGLang's mem_fraction_static 0.817" (its per-GPU default,
    ``planner.engines.sglang``); "" for an engine whose fraction is of the memory left after the weights
    (TensorRT-LLM's free_gpu_memory_fraction, LMDeploy's cache_max_entry_count: ``budget_mode`` "free") and for the
    'ideal' engine, which takes all of it."""
    eng = engine_profile(engine)
    if eng.budget_mode != "total":
        return ""
    if eng.name.startswith("sglang"):
        return f"SGLang's mem_fraction_static {fraction:.3g}"
    if eng.name.startswith("vllm"):
        return f"vLLM's gpu_memory_utilization {fraction:.3g}"
    return ""


def tp_size_error(model: Model, gpus: int, parallelism: str = "tp", engine: Any = None) -> OutOfRangeError:
    """The error for a group size the engine refuses: the split that does not divide (``tp_refusal``), and the
    valid sizes."""
    valid = ", ".join(str(n) for n in valid_tp_sizes(model, parallelism=parallelism, engine=engine))
    if is_pipeline(parallelism):
        stages = int(pipeline_stages(parallelism, gpus))
        why = (
            f"it has {model.num_layers} layers, one at least for each stage"
            if stages > model.num_layers
            else f"{gpus:,} GPUs do not split into {stages:,} stages of whole GPUs"
            if gpus % stages
            else ""
        )
        if why:
            return OutOfRangeError(
                f"{model.name} cannot run as a pipeline of {stages:,} stages: {why}; valid groups up to "
                f"{GPU_GROUPS[-1]}: {valid}"
            )
        return OutOfRangeError(
            f"{model.name} cannot run {stages:,} pipeline stages of {gpus // stages:,} GPUs: each stage is a "
            f"tensor-parallel group, {tp_refusal(model, gpus // stages, engine)}; valid groups up to "
            f"{GPU_GROUPS[-1]}: {valid}"
        )
    if spreads_experts(parallelism) and (model.moe is None or gpus > model.moe.num_experts):
        experts = "it has no experts" if model.moe is None else f"it has {model.moe.num_experts} experts"
        return OutOfRangeError(
            f"{model.name} cannot spread its experts over {gpus:,} GPUs ({parallelism}): {experts}; valid groups up to "
            f"{GPU_GROUPS[-1]}: {valid or 'none'}"
            + (" (parallelism='tp' splits a dense model)" if model.moe is None else "")
        )
    return OutOfRangeError(
        f"{model.name} cannot run on a tensor-parallel group of {gpus:,} GPUs: {tp_refusal(model, gpus, engine)}; "
        f"valid groups up to {GPU_GROUPS[-1]}: {valid}"
    )


def vendor_error(gpu: Gpu, engine: Any = None) -> InvalidInputError:
    """The error for an engine that does not run on the GPU's vendor (``resolve.NVIDIA_ONLY_ENGINES``: TensorRT-LLM on
    an AMD or Intel GPU), naming the engines that do."""
    eng = engine_profile(engine)
    return InvalidInputError(
        f"{engine_label(eng)} (engine {eng.name!r}) runs on NVIDIA GPUs only; {gpu.name} is {gpu.vendor}'s: "
        "use engine vllm or sglang there"
    )


def release_error(model: Model, gpu: Gpu, engine: Any = None) -> OutOfRangeError:
    """The error for an engine release that cannot load the model's MXFP4 experts on the GPU
    (``model.mxfp4_experts_refused``; TensorRT-LLM 1.x below Hopper), naming the release, the GPU and the ways out."""
    eng = engine_profile(engine)
    release = PROFILE_RELEASES.get(eng.name)
    label = release.label if release else eng.name
    sm = ARCHITECTURE_SM.get(gpu.architecture)
    arch = f"{gpu.architecture}, SM {sm / 10:.1f}" if sm else gpu.architecture
    refusal = profile_mxfp4_refusal(eng.name, gpu.architecture)
    if release is None:  # vLLM's and SGLang's floor: no release of theirs loads MXFP4 below SM 8.0
        label = engine_label(eng)
    why = refusal_message(
        f"{label} (engine {eng.name!r})", f"{model.name}'s MXFP4 experts", f"{gpu.name} ({arch})", refusal
    )
    if release is None:
        return OutOfRangeError(
            f"{why}; give weights in fp16 (-w fp16, a checkpoint whose experts were converted: 2 B a weight) or an "
            "Ampere or newer GPU (A100, L40S, H100)"
        )
    return OutOfRangeError(f"{why}; use another engine (vllm, sglang) or a Hopper GPU (H100, H200)")


def weights_refused(r: Resolved) -> Any:
    """Per scenario: whether the GPU lacks the weight format (``GpuFacts.weight_formats`` shares no bit with
    ``PrecisionFacts.weight_format_bits``; a GPU without a list takes any format). Run per row where the facts
    are ``Rows`` (once per (GPU, model) combination, ``planner.model.rows.per_row``), gathered once."""
    return gathered(per_row(_weights_refused, r.gpu.weight_formats, r.precision.weight_format_bits))


def _weights_refused(weight_formats: Any, weight_format_bits: Any) -> Any:
    mask = np.asarray(weight_formats).astype(np.int64)
    bits = np.asarray(weight_format_bits).astype(np.int64)
    return (mask > 0) & ((mask & bits) == 0)


#: Why an fp8 KV cache is refused on a GPU without fp8 (T4, SM 7.5): vLLM 0.24.0 keeps no fp8 cache there, its
#: FlashInfer backend now needing SM 8.0 and its Triton backend SM 8.9 for native fp8 ("FP8 KV cache is not supported
#: by the Triton attention backend on ... (compute capability 7.5); native FP8 (fp8e4nv) requires SM89+").
FP8_KV_SOURCE = "vLLM 0.24's attention backends keep no fp8 cache below SM 8.0 (vllm-project/vllm issue 47549)"


def kv_refused(r: Resolved) -> Any:
    """Per scenario: whether the GPU lacks the KV cache's dtype (``PrecisionFacts.kv_format_bits`` shares no bit with
    ``GpuFacts.weight_formats``: a bf16 cache on a T4, and an fp8 one there, ``FP8_KV_SOURCE``; an int8 or int4 cache
    is the engine's matter, ``EngineProfile.accepts_kv``). Per row, as ``weights_refused``."""
    return gathered(per_row(_kv_refused, r.gpu.weight_formats, r.precision.kv_format_bits))


def _kv_refused(weight_formats: Any, kv_format_bits: Any) -> Any:
    mask = np.asarray(weight_formats).astype(np.int64)
    bits = np.asarray(kv_format_bits).astype(np.int64)
    return (mask > 0) & (bits > 0) & ((mask & bits) == 0)


def kv_precision_error(
    gpu: Gpu, model: Model, kv_precision: Any, catalog: Catalog, engine: Any = None
) -> OutOfRangeError:
    """The error for a KV cache in a dtype the GPU does not have (``kv_refused``; T4: bf16, which vLLM refuses below
    SM 8.0, ``CudaPlatformBase.supported_dtypes``, and fp8, ``FP8_KV_SOURCE``): the dtype and the KV precisions it
    takes (those the engine caches in, less the ones the GPU lacks)."""
    eng = engine_profile(engine)
    precision = catalog.precision(kv_precision)
    sm = ARCHITECTURE_SM.get(gpu.architecture)
    arch = f"{gpu.architecture}, SM {sm / 10:.1f}" if sm else gpu.architecture
    takes = [n for n in kv_formats(catalog.precisions, [eng]) if n not in KV_DTYPES_CHECKED or gpu.takes_weights(n)]
    why = f"it has no {precision.name}" if precision.name != "fp8" else FP8_KV_SOURCE
    source = "catalogs/gpus.toml weight_precisions_source" if precision.name != "fp8" else "docs/model.md"
    return OutOfRangeError(
        f"{gpu.name} ({arch}) cannot cache {model.name}'s KV in {precision.name}: {why}; KV precisions it takes: "
        f"{', '.join(takes)} ({source})"
    )


def weight_precision_error(gpu: Gpu, model: Model, weight_precision: Any, catalog: Catalog) -> OutOfRangeError:
    """The error for weights in a format the GPU does not run (``Gpu.weight_precisions``): the format, why (the
    tensor-core math it lacks, else no engine's kernel for its SM) and the formats it takes."""
    name = implied_weight_precision(model.name, weight_precision)
    precision = catalog.precision(name if name is not None else model.native_precision)
    sm = ARCHITECTURE_SM.get(gpu.architecture)
    arch = f"{gpu.architecture}, SM {sm / 10:.1f}" if sm else gpu.architecture
    takes = ", ".join(gpu.weight_formats_among(p.name for p in catalog.precisions) or ())
    if precision.name in NVIDIA_ONLY_WEIGHTS and gpu.vendor != "NVIDIA":
        amd = (
            " (vLLM's ROCm emulation, dequantized into bf16 math, is not timed here); AMD's 4-bit format is mxfp4 "
            "(an E8M0 scale per 32; MI355X's FP4 tensor cores run it): give mxfp4 as the weight precision "
            "(weight_precision)"
            if gpu.vendor == "AMD"
            else ""
        )
        return OutOfRangeError(
            f"{gpu.name} ({gpu.vendor} {gpu.architecture}) cannot run {model.name}'s weights in "
            f"{typed_name(weight_precision, precision.name)}: NVFP4 (an FP8 E4M3 scale per 16) is NVIDIA's format, "
            f"with NVIDIA's kernels{amd}; weight precisions it takes: {takes}"
        )
    lacks = {precision.math, precision.math_fallback} - {None} - set(gpu.peak_flop_per_s)
    why = (
        f"it has no {' or '.join(sorted(lacks))} tensor cores"
        if lacks and precision.math not in gpu.peak_flop_per_s
        else "no engine's kernels for it run on this GPU"
    )
    return OutOfRangeError(
        f"{gpu.name} ({arch}) cannot run {model.name}'s weights in {precision.name}: {why}; weight precisions it "
        f"takes: {takes} (catalogs/gpus.toml weight_precisions_source)"
    )


def experts_published_apart(model: Model) -> bool:
    """Whether ``model``'s routed experts are published in another format than its other weights (gpt-oss: MXFP4
    experts beside bf16 layers)."""
    experts = model.native_expert_precision
    return model.moe is not None and experts is not None and experts != model.native_precision


#: TensorRT-LLM's support matrix lists Ampere (SM 8.0) and newer ("Supported Hardware", nvidia.github.io/TensorRT-LLM,
#: read 2026-12-05: Blackwell, Hopper, Ada Lovelace, Ampere; 0.18's "Hardware" table the same), and says "If a GPU
#: architecture is not listed, the TensorRT-LLM team does not develop or test the software on the architecture and
#: support is limited to community support".
TRTLLM_MIN_SM = 80


def untested_architecture_note(gpu: Gpu, engine: Any) -> str:
    """Where ``engine`` is TensorRT-LLM and ``gpu``'s architecture is older than its support matrix lists
    (``TRTLLM_MIN_SM``: a T4): that it is untested there, so the figures assume a build that runs; "" elsewhere."""
    eng = engine_profile(engine)
    sm = ARCHITECTURE_SM.get(gpu.architecture)
    if not eng.name.startswith("tensorrt-llm") or sm is None or sm >= TRTLLM_MIN_SM:
        return ""
    return (
        f"TensorRT-LLM's support matrix lists Ampere (SM 8.0) and newer; on {gpu.name} ({gpu.architecture}, SM "
        f"{sm / 10:.1f}) NVIDIA neither develops nor tests it (community support only): these figures assume a build "
        "that runs there; vLLM runs on it"
    )


def sixteen_bit_note(gpu: Gpu, model: Model, weight_precision: Any, kv_precision: Any, engine: Any = None) -> str:
    """Where ``gpu`` lacks bf16 (``Gpu.weight_precisions``) and ``model`` is published in bf16 with no weight
    precision given: how it runs, in fp16 (the same bytes; vLLM's --dtype auto takes the first of the platform's
    supported dtypes, fp16 below SM 8.0: ``_resolve_auto_dtype``, ``CudaPlatformBase.supported_dtypes``), its KV
    cache too unless one is given; "" elsewhere. Routed experts published in another format (gpt-oss: MXFP4) stay
    as published where the engine loads them (vLLM and SGLang refuse them below SM 8.0, TensorRT-LLM below 9.0,
    on every surface), as every model call keeps them."""
    if weight_precision is not None or model.native_precision != "bf16":
        return ""
    if gpu.takes_weights("bf16") or not gpu.takes_weights("fp16"):
        return ""
    kv = " and KV cache" if kv_precision is None else ""
    dtype = "(vLLM's --dtype auto does so below SM 8.0; --dtype bfloat16 is refused there)"
    if not experts_published_apart(model):
        return f"{gpu.name} has no bf16: {model.name}'s bf16 weights{kv} run in fp16, the same bytes {dtype}"
    return (
        f"{gpu.name} has no bf16: {model.name}'s bf16 layers{kv} run in fp16, the same bytes {dtype}; its "
        f"{model.native_expert_precision.upper()} routed experts stay as published (engine "
        f"{engine_profile(engine).name!r} loads them; vLLM and SGLang need SM 8.0 for MXFP4)"
    )


def weight_only_note(gpu: Gpu, precision: Any, engine: EngineProfile) -> str:
    """Where the weights' math is 8-bit or narrower (fp8, fp4) and ``gpu`` has no tensor cores for it (Ampere: fp8;
    Hopper and older: fp4): they run weight-only, dequantized into 16-bit math, and are timed so (1 B or less per
    weight read, GEMMs at the 16-bit peak, ``planner.model.operators.weight_only_flop_scale``). vLLM: FP8 on SM
    below 8.9 takes the Marlin kernel ("For GPUs that lack FP8 hardware support, we can leverage the Marlin kernel
    for fast weight-only FP8 quantization", ``Fp8LinearMethod.use_marlin``, vllm/model_executor/layers/quantization/
    fp8.py at commit 0071b24b). Marlin is a CUDA kernel: on another vendor's GPU (MI300X) the note names none (trial
    16, F11). "" elsewhere (16-bit or integer math, or the GPU has the math)."""
    if precision.math not in ("fp8", "fp4") or precision.math in gpu.peak_flop_per_s:
        return ""
    if not gpu.takes_weights(precision.name):
        return ""
    return (
        f"{precision.name} weights on {gpu.name}: it has no {precision.math} tensor cores ({gpu.architecture}), so "
        f"{engine.name} runs them weight-only, dequantized into 16-bit math (W{precision.bits_per_element:g}A16"
        f"{', Marlin kernels' if gpu.vendor == 'NVIDIA' else ''}): timed so, {precision.bytes_per_element:g} B read per weight and the GEMMs at the "
        "16-bit peak"
    )


def check_release(
    gpu: Gpu,
    model: Model,
    engine: Any = None,
    weight_precision: Any = None,
    catalog: Catalog | None = None,
    kv_precision: Any = None,
) -> None:
    """Raise ``release_error`` where the engine release cannot load ``model`` at ``weight_precision`` (None: as
    published) on ``gpu`` (``model.mxfp4_experts_refused``), and ``weight_precision_error`` where the GPU does not run
    that weight format (``weights_refused``), and ``kv_precision_error`` where it lacks the KV cache's dtype
    (``kv_refused``): the checks ``deploy`` makes per scenario, for a caller that sizes one GPU
    and model before it calls the functions (the export's options)."""
    eng = engine_profile(engine)
    r = _resolve(
        as_catalog(catalog),
        "raise",
        gpu=gpu,
        model=model,
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        engine=eng,
    )
    if engine_vendor_refused(eng, gpu):
        raise vendor_error(gpu, eng)
    if np.any(m.mxfp4_experts_refused(r.model, r.precision, r.limits)):
        raise release_error(model, gpu, eng)
    if np.any(weights_refused(r)):  # a format the GPU does not run (Gpu.weight_precisions: T4, no bf16 or fp8)
        raise weight_precision_error(gpu, model, weight_precision, r.catalog)
    if np.any(kv_refused(r)):  # a KV dtype the GPU does not have (T4: bf16)
        raise kv_precision_error(gpu, model, kv_precision, r.catalog, eng)


def uneven_experts(model: Model, gpus: int, parallelism: str, engine: Any = None) -> tuple[str, str]:
    """Where "dp-ep" spreads ``model``'s routed experts over ``gpus`` ranks that do not divide them (trial 16, F8):
    (a refusal, a note). SGLang refuses it: ``FusedMoE.__init__`` asserts ``num_experts % self.moe_ep_size == 0``
    (python/sglang/srt/layers/moe/fused_moe_triton/layer.py); vLLM gives the first E % g ranks one expert more
    (``determine_expert_map``, vllm/model_executor/layers/fused_moe/layer.py), and the plan sizes that busiest rank
    (``planner.model.memory.memory_plan``). ("", "") where the experts divide evenly or are not spread."""
    if parallelism != "dp-ep" or model.moe is None or gpus <= 1 or model.moe.num_experts % gpus == 0:
        return "", ""
    e = model.moe.num_experts
    low, extra = e // gpus, e % gpus
    if engine_profile(engine).name.startswith("sglang"):
        return (
            f"SGLang cannot spread {model.name}'s {e} routed experts over {gpus} ranks (dp-ep): its FusedMoE requires "
            f"num_experts % ep_size == 0; give a group that divides {e}"
        ), ""
    return "", (
        f"{e} routed experts over {gpus} ranks: {extra} ranks hold {low + 1}, the others {low} (vLLM's "
        f"determine_expert_map); the plan sizes the busiest rank, {low + 1} experts"
    )


#: vLLM's first release that loads DeepSeek-V3's architecture (DeepseekV3ForCausalLM, which Kimi K2 shares): 0.6.6
#: (vllm-project/vllm issue 11559, a maintainer: "It is supported since v0.6.6", release tag v0.6.6 of 2024-12-27).
VLLM_DEEPSEEK_V3 = (0, 6, 6)
#: vLLM's first release with data-parallel attention beside expert- or tensor-parallel MoE layers (the dp-ep layout):
#: 0.8.0, the first release after vllm-project/vllm pull request 13931 ("[V1] EP/TP MoE + DP Attention", merged
#: 2025-03; RFC issue 16037 "Data Parallel Attention and Expert Parallel MoEs" tracks it as done).
VLLM_DP_ATTENTION_EP = (0, 8, 0)
#: Model families of the DeepSeek-V3 architecture (catalogs/models.toml ``family``).
DEEPSEEK_V3_FAMILIES = ("DeepSeek-V3", "Kimi K2")


def release_cannot_run(engine: Any, model: Model, parallelism: str = "tp") -> str:
    """Why a pinned vLLM release ("vllm==0.6.0") cannot run ``model`` as ``parallelism`` (trial 16, F7: vLLM 0.6.0
    was planned as dp-ep for DeepSeek-R1, with only a memory-profile warning), as the refusal's words; "" where it can
    or the engine is not a pinned vLLM release. Like TensorRT-LLM on AMD GPUs (``engine_vendor_refused``), refused,
    not warned: the engine would not start."""
    pinned = pinned_release(engine)
    if pinned is None or not ENGINE_ALIASES.get(pinned[0], pinned[0]).startswith("vllm"):
        return ""
    text = pinned[1]
    version = parse_version(text).release
    if model.family in DEEPSEEK_V3_FAMILIES and version < VLLM_DEEPSEEK_V3:
        return (
            f"vLLM {text} cannot load {model.name} (the DeepSeek-V3 architecture arrived in vLLM 0.6.6: "
            "vllm-project/vllm issue 11559); give engine vllm==0.6.6 or later, or vllm (the current release)"
        )
    if parallelism == "dp-ep" and version < VLLM_DP_ATTENTION_EP:
        return (
            f"vLLM {text} has no data-parallel attention with expert-parallel MoE layers (dp-ep; from vLLM 0.8.0: "
            "vllm-project/vllm pull request 13931); give engine vllm==0.8.0 or later, or parallelism tp"
        )
    return ""


def layouts_to_size(model: Model, engine: Any = None, parallelism: Any = None) -> tuple[str, ...]:
    """The layouts a deployment is sized in (trial 24, F15): the one given, alone; without one, tensor parallelism
    and, for a MoE model, data-parallel attention with the experts spread ("dp-ep", the layout ``plan`` prints beside
    a MoE plan and sizes under ``--rate``, which ``planner export`` keeps for an option that sets no ``parallelism``
    where its fleet is cheaper: ``layout_kept``), less a layout the engine's pinned release cannot run
    (``release_cannot_run``: vLLM before 0.8.0 has no dp-ep). Tensor parallelism first: the default, kept on a tie.
    Qwen3-235B-A22B: ("tp", "dp-ep"); Llama-3.1-70B: ("tp",)."""
    if parallelism is not None:
        return (check_parallelism(parallelism),)
    layouts = ("tp", "dp-ep") if model.moe is not None else ("tp",)
    return tuple(p for p in layouts if p == "tp" or not release_cannot_run(engine, model, p))


def layout_kept(costs: dict[str, float]) -> str:
    """Of the layouts sized (``layouts_to_size``'s order) and what each one's fleet costs for the same load and
    targets (GPUs or US$ a month, one unit for all; NaN where no fleet of the layout meets them), the cheapest; the
    first listed (tensor parallelism) on a tie or where none meets. Trial 24, F15: Qwen3-235B-A22B fp8 on 4 x H200 at
    40 requests/s, {"tp": 32, "dp-ep": 20} GPUs: "dp-ep"."""
    met = [(cost, i, layout) for i, (layout, cost) in enumerate(costs.items()) if cost == cost]
    return min(met)[2] if met else next(iter(costs))


#: vLLM releases whose "auto" KV dtype for a DSA model (DeepSeek-V3.2, GLM-5) is ``fp8_ds_mla``: 0.11.0 only.
#: vllm-project/vllm pull request 25988 (2025-09-30, in 0.11.0) mapped "auto" to fp8_ds_mla; pull request 27121
#: ("Disable fp8 kv-cache by default for DeepSeek V3.2", merged 2025-10-17, from 0.11.1) keeps "auto" at bf16
#: (``DeepseekV32ForCausalLM.verify_and_update_config``, vllm/model_executor/models/config.py, 1936cf3841ed).
VLLM_DSA_AUTO_FP8 = ((0, 11, 0), (0, 11, 1))


def dsa_default_kv_note(engine: Any, model: Model, kv_given: bool) -> str:
    """Where a pinned vLLM release caches a DSA model in fp8 by default (``VLLM_DSA_AUTO_FP8``: 0.11.0) and no KV
    precision was given, the note that planner plans bf16 (the default of every later release) and how to plan what
    that release runs; "" elsewhere."""
    pinned = pinned_release(engine)
    if kv_given or model.sparse_attention is None or pinned is None:
        return ""
    if not ENGINE_ALIASES.get(pinned[0], pinned[0]).startswith("vllm"):
        return ""
    low, high = VLLM_DSA_AUTO_FP8
    if not low <= parse_version(pinned[1]).release < high:
        return ""
    return (
        f"vLLM {pinned[1]} caches {model.name} in fp8 (fp8_ds_mla, 656 B a token per layer) by default; planned with a "
        "bf16 cache, the default from vLLM 0.11.1 (vllm-project/vllm pull request 27121): give kv_precision fp8 "
        "(-k fp8) to plan what this release runs"
    )


def experts_upcast(
    gpu: Gpu,
    model: Model,
    gpus: int,
    parallelism: Any = "tp",
    engine: Any = None,
    weight_precision: Any = None,
    catalog: Catalog | None = None,
) -> bool:
    """Whether the engine loads ``model``'s MXFP4 experts at another width (bf16) on ``gpus`` split as
    ``parallelism``, at ``weight_precision`` (None: as published): ``model.experts_upcast``, the rule ``deploy``
    sizes the weights by (SGLang 0.5.1-0.5.9 off Blackwell with the experts spread), for a report that says so."""
    eng = engine_profile(engine)
    r = _resolve(as_catalog(catalog), "raise", gpu=gpu, model=model, weight_precision=weight_precision, engine=eng)
    return bool(np.any(m.experts_upcast(r.precision, r.limits, float(gpus), check_parallelism(parallelism))))


def layout_error(model: Model, parallelism: str) -> OutOfRangeError:
    """The error for a layout that spreads experts asked of a dense model."""
    return OutOfRangeError(
        f"{model.name} has no experts to spread (parallelism={parallelism!r}); parallelism='tp' splits a dense model"
    )


def check_parallelism(parallelism: Any) -> str:
    """The parallelism named (``model.parallel.PARALLELISMS``; None: "tp"), or one error line naming the choices."""
    if parallelism is None:
        return "tp"
    name = parallelism.strip().lower() if isinstance(parallelism, str) else None
    if name in PARALLELISMS or (name and (stages_named(name) or 0) >= 1):
        return name
    raise OutOfRangeError(
        f"parallelism {parallelism!r} is not one of {', '.join(PARALLELISMS)} (tp: tensor parallel; tp-ep: experts "
        "spread whole; dp-ep: data-parallel attention with experts spread; pp: pipeline parallel, one GPU per stage; "
        "pp2, pp4 ...: that many stages, each a tensor-parallel group of gpus / stages); one name for the whole call"
    )


def tp_refusal(model: Model, gpus: int, engine: Any = None) -> str:
    """Why the engine refuses a group of ``gpus`` (the first rule of ``model.tensor_parallel_ok`` that fails), in
    words."""
    f = model_facts(model)
    g = int(gpus)
    label, any_kv = engine_label(engine), engine_profile(engine).kv_heads_any_split
    heads, kvh = int(f.num_attention_heads), int(f.num_kv_heads)
    if not heads % g and kvh % g and g % kvh and not any_kv:
        return (
            f"{label} needs its {kvh} KV heads to be divisible by the group or the group by them "
            "(QKVParallelLinear; TensorRT-LLM replicates them instead)"
        )
    if heads % g:
        kv = (
            ""
            if model.mla is not None or any_kv
            else f" and its {kvh} KV heads to be divisible by the group or the group by them"
        )
        return f"{label} needs its {heads} attention heads to be divisible by the group{kv}"
    width, experts, block = int(f.mlp_split_width), int(f.expert_split_width), int(f.weight_block_size)
    if width % g:
        return f"{label} splits its MLP width of {width:,} evenly (MergedColumnParallelLinear): {width:,} / {g} leaves {width % g}"
    if experts % g:
        return (
            f"{label} splits each expert's width of {experts:,} evenly (FusedMoEConfig): {experts:,} / {g} leaves "
            f"{experts % g}; expert parallelism (parallelism='tp-ep') keeps experts whole"
        )
    ssm = int(f.ssm_split_width)
    if ssm % g and model.mamba is not None:
        return (
            f"{label} splits each Mamba-2 mixer's {model.mamba.num_heads} heads and {model.mamba.n_groups} groups "
            f"evenly (MambaMixer2): {ssm} / {g} leaves {ssm % g}"
        )
    if ssm % g and model.linear_attention is not None:
        a = model.linear_attention
        return (
            f"{label} splits each Gated DeltaNet layer's {a.num_key_heads} key heads and {a.num_value_heads} value "
            f"heads evenly: {ssm} / {g} leaves {ssm % g}"
        )
    short = [w for w in (width, experts) if w and w % (g * block)] if block else [0]
    hint = (
        "; expert parallelism (parallelism='tp-ep' or 'dp-ep') keeps experts whole"
        if short[0] == experts and len(short) == 1
        else ""
    )
    return (
        f"its weights are quantized in blocks of {block} and {label} needs whole blocks on each GPU: "
        f"{short[0]:,} / {g} = {short[0] / g:g} (validate_fp8_block_shape{hint})"
    )


def block_checkpoint_note(
    model: Model, weight_precision: str, gpus: int, parallelism: str = "tp", engine: Any = None
) -> str:
    """Which fp8 a plan of ``model`` with fp8 weights on ``gpus`` GPUs split as ``parallelism`` is, where it matters:
    the model's makers publish a block-FP8 checkpoint (``Model.block_fp8_checkpoint``: Qwen/Qwen3-235B-A22B-FP8,
    128 x 128 blocks) that this layout cannot load, as the checkpoint's own name would be refused here
    (``tp_refusal``: vLLM ``validate_fp8_block_shape`` and the MoE layer's ``intermediate_size_per_partition %
    block_n``; "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128",
    https://github.com/vllm-project/vllm/issues/17569). The plan is then of per-tensor FP8, the 16-bit weights
    quantized online (vLLM ``--quantization fp8``, ``fp8_per_tensor`` in releases with its online-quantization
    frontend, https://docs.vllm.ai/en/latest/features/quantization/online/; SGLang ``--quantization fp8``,
    https://docs.sglang.io/docs/advanced_features/quantization) or a per-tensor FP8 checkpoint, which runs; the note
    says so and names the layouts the published checkpoint loads on (vLLM's Qwen3 guide: "Consider
    --tensor-parallel-size 4 or --tensor-parallel-size 8 --enable-expert-parallel",
    https://github.com/vllm-project/vllm/issues/17327). "" where the checkpoint loads on this layout, the weights
    are not fp8, the model has no such checkpoint, or the model was named by the checkpoint itself
    (``Catalog.model`` then gives it the block size, and a layout that splits a block is refused).

    A note, not a refusal: the per-tensor FP8 planned has no blocks to split, so it loads on this layout; only the
    published block checkpoint needs whole blocks on each GPU."""
    ck = model.block_fp8_checkpoint
    if ck is None or weight_precision != "fp8" or model.weight_block_size:
        return ""
    g = int(gpus)
    blocked = model.model_copy(update={"weight_block_size": ck.weight_block_size})
    if g in valid_tp_sizes(blocked, max_gpus=max(g, GPU_GROUPS[-1]), parallelism=parallelism, engine=engine):
        return ""
    per_stage = g // int(pipeline_stages(parallelism, g)) if is_pipeline(parallelism) else g
    f, b = model_facts(blocked), ck.weight_block_size
    widths = [
        ("its MLP width" if model.moe is None else "its dense and shared-expert MLP width", int(f.mlp_split_width))
    ]
    widths += [("each expert's width", int(f.expert_split_width))] if parallelism != "tp-ep" else []
    split = [(what, w) for what, w in widths if w and w % (per_stage * b)]
    why = (
        f"{split[0][0]} {split[0][1]:,} / {per_stage} = {split[0][1] / per_stage:,g} per GPU, not a whole number of "
        f"{b}-wide blocks, which vLLM and SGLang refuse"
        if split
        else tp_refusal(blocked, per_stage, engine)
    )
    loads = [n for n in valid_tp_sizes(blocked, engine=engine) if n in GPU_GROUPS]
    where = "TP " + ", ".join(map(str, loads))
    if model.moe is not None and parallelism != "tp-ep":
        ep = valid_tp_sizes(blocked, max_gpus=max(g, GPU_GROUPS[-1]), parallelism="tp-ep", engine=engine)
        if g in ep:
            where += f", or on these {g:,} GPUs with expert parallelism (--parallelism tp-ep: routed experts whole)"
    return (
        f"fp8 weights here are per-tensor FP8: the {model.native_precision} weights quantized online (vLLM --quantization fp8 or "
        f"fp8_per_tensor, SGLang --quantization fp8) or a per-tensor FP8 checkpoint. The makers' block-FP8 checkpoint "
        f"{ck.hf_id} does not load as {layout_label(parallelism, g)}: {why}; it loads at {where}"
    )


# -- a deployment ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deployment:
    """Scenarios resolved and sized: their facts, the GPU count of each, its memory plan and which failed."""

    facts: Resolved
    engine: EngineProfile
    context: np.ndarray
    batch: np.ndarray
    utilization: Any
    gpus: np.ndarray  # given or chosen; NaN where no group fits
    gpus_safe: np.ndarray  # NaN replaced by the largest group, so formulas can run everywhere
    plan: m.MemoryPlan | None  # None when nothing needed it (a given group, check_fit=False)
    bad: np.ndarray  # unknown name, refused group, or does not fit
    parallelism: str = "tp"  # model.parallel.PARALLELISMS


def plan_on(
    r: Resolved, engine: EngineProfile, context: Any, gpus: Any, util: Any, reserve: Any, parallelism: str = "tp"
) -> m.MemoryPlan:
    """``model.memory_plan`` of the resolved scenarios on groups of ``gpus`` split as ``parallelism``; a None
    ``util`` is the engine's default on each GPU and group (``utilization_on``)."""
    util = utilization_on(r, engine, gpus, util, parallelism)
    return m.memory_plan(r.gpu, r.model, r.precision, r.limits, engine, context, gpus, util, reserve, parallelism)


def utilization_on(r: Resolved, engine: EngineProfile, gpus: Any, util: Any, parallelism: str = "tp") -> Any:
    """``util`` as given, else the engine's rule for each GPU and group (SGLang's mem_fraction_static:
    ``planner.engines.sglang.default_memory_fraction``; MLA models: the attention FLOP forms differ)."""
    if util is not None:
        return util
    a, b = r.model.attention_flop_per_context_token_per_layer, r.model.prefill_attention_flop_per_token_pair_per_layer
    if type(a) is float and type(b) is float:  # one scenario: no numpy
        mla = a != b
    else:
        mla = bool(np.all(np.asarray(a) != np.asarray(b)))
    ranks = gpus if parallelism == "dp-ep" else 1.0  # a pipeline stage is a tensor-parallel group of one
    visible = m.visible_memory_bytes(r.gpu, engine)
    out = default_memory_fraction(engine.memory_fraction_rule, visible, gpus, ranks, mla)
    return out


def choose_gpus(
    r: Resolved, engine: EngineProfile, context, gpus, util, reserve, need_batch: Any = 1, parallelism: str = "tp"
) -> np.ndarray:
    """The GPU count per scenario: as given, or the smallest valid group in GPU_GROUPS holding the weights and
    ``need_batch`` sequences (valid: ``model.tensor_parallel_ok``); NaN where none does."""
    if gpus is not None:
        return np.asarray(gpus, dtype=float)
    shape = r.shape(context, need_batch)
    chosen = np.full(shape, np.nan)
    for n in GPU_GROUPS:
        group = np.asarray(float(n))
        fits = plan_on(r, engine, context, group, util, reserve, parallelism).max_batch >= need_batch
        chosen = np.where(
            np.isnan(chosen) & fits & m.group_ok(r.model, group, parallelism, engine.kv_heads_any_split), n, chosen
        )
        if not np.any(np.isnan(chosen)):
            break
    return chosen


def deploy(gpu: Any, model: Any, context: Any, options: Options, context_name: str = "context") -> Deployment | None:
    """Resolve names, check numbers, check or pick the GPU count and test that ``batch`` sequences fit.

    Returns None when every scenario failed a lookup (errors="coerce"); raises the first error otherwise.
    ``check_fit=False`` skips the memory test for a given GPU count (time of a batch regardless of memory).
    ``context_name``: what the caller calls ``context`` (``ttft``'s ``prompt_tokens``), for the message refusing it.
    pandas Series whose indexes differ are refused (``checks.check_series_aligned``: pairing is by position), and
    arguments whose shapes do not broadcast are an InvalidInputError naming them (``checks.shape_error``).
    """
    o = options
    if not (type(gpu) is str and type(context) in (int, float)):  # one scenario's common case: no Series
        check_series_aligned(**_arguments(gpu, model, context, o, context_name))
    try:
        return _deploy(gpu, model, context, o, context_name)
    except ValueError as exc:
        if is_shape_mismatch(exc):
            raise shape_error(_arguments(gpu, model, context, o, context_name)) from None
        raise


def _arguments(gpu: Any, model: Any, context: Any, o: Options, context_name: str) -> dict[str, Any]:
    """A deployment's arguments that broadcast, by the names the caller gave them."""
    return {
        "gpu": gpu,
        "model": model,
        context_name: context,
        "batch": o.batch,
        "gpus": o.gpus,
        "kv_precision": o.kv_precision,
        "weight_precision": o.weight_precision,
        "memory_utilization": o.memory_utilization,
        "reserve_bytes": o.reserve_bytes,
    }


def _deploy(gpu: Any, model: Any, context: Any, o: Options, context_name: str) -> Deployment | None:
    """``deploy``'s work."""
    gpus, batch, errors, check_fit = o.gpus, o.batch, o.errors, o.check_fit
    par = check_parallelism(o.parallelism)
    stages = stages_named(par)
    if gpus is None and stages is not None and not any(k % stages == 0 for k in GPU_GROUPS):
        raise InvalidInputError(  # no group searched splits into the stages: a usage slip, not a shortfall
            f"{par} runs {stages} pipeline stages, each a tensor-parallel group, so its group is {stages}, "
            f"{2 * stages}, {4 * stages}, ... GPUs; give the count (gpus), as the groups tried without one "
            f"({', '.join(map(str, GPU_GROUPS))}) split into none"
        )
    eng = engine_profile(o.engine)
    util = (
        (eng.row_memory_utilization or (None if eng.memory_fraction_rule else eng.memory_utilization))
        # a published row's own share, else None: per GPU and group (utilization_on)
        if o.memory_utilization is None
        else _fraction(o.memory_utilization, "memory_utilization")
    )
    # Integer contexts stay integers until they are paired with the names (``_resolve``'s numbers): only unpaired
    # ones are cast to floats (below), so a sweep's three calls make no float copy of its contexts.
    ctx, bad_ctx = _count_or_mask(
        context, context_name, MAX_CONTEXT_TOKENS, " of tokens", errors, integers=True, tokens=True
    )
    b, bad_batch = _count_or_mask(batch, "batch", MAX_BATCH_INPUT, " of sequences", errors)
    bad_gpus: Any = False
    if gpus is not None:
        gpus, bad_gpus = _count_or_mask(gpus, "gpus", MAX_GPUS, " of GPUs", errors)
    reserve = None if o.reserve_bytes is None else _nonnegative(o.reserve_bytes, "reserve_bytes")
    names = dict(gpu=gpu, model=model, weight_precision=o.weight_precision, kv_precision=o.kv_precision)
    calibration = resolve_calibration(o.calibration)
    r = _resolve(as_catalog(o.catalog), errors, **names, engine=eng, calibration=calibration, numbers=ctx)
    if r.numbers is not None:  # contexts that repeat: the formulas run once per (names, context) pair
        ctx = r.numbers
    elif isinstance(ctx, np.ndarray) and ctx.dtype.kind != "f":
        ctx = ctx.astype(float)
    if r.model is None or r.gpu is None:
        if errors == "raise" and r.first_error:
            raise r.first_error
        return None
    if spreads_experts(par):  # a dense model has no experts to spread: refused whatever the group
        dense = gathered(r.model.num_experts == 0) & ~np.asarray(r.bad)
        if np.any(dense):
            _refuse(dense, errors, lambda: (_names(model),), lambda name: layout_error(r.catalog.model(name), par))
            bad_gpus = np.asarray(bad_gpus) | dense
    if ops.any_positive(r.gpu.engine_refused):  # an engine that does not run on the GPU's vendor (TensorRT-LLM on AMD)
        refused = gathered(np.asarray(r.gpu.engine_refused) > 0) & ~np.asarray(r.bad)
        if np.any(refused):
            _refuse(refused, errors, lambda: (_names(gpu),), lambda g: vendor_error(r.catalog.gpu(g), eng))
            bad_gpus = np.asarray(bad_gpus) | refused
    if ops.any_positive(r.limits.mxfp4_experts_refused):  # an engine release that cannot load the experts on the GPU
        refused = gathered(m.mxfp4_experts_refused(r.model, r.precision, r.limits)) & ~np.asarray(r.bad)
        if np.any(refused):
            _refuse(
                refused,
                errors,
                lambda: (_names(gpu), _names(model)),
                lambda g, name: release_error(r.catalog.model(name), r.catalog.gpu(g), eng),
            )
            bad_gpus = np.asarray(bad_gpus) | refused
    if ops.any_positive(r.gpu.weight_formats):  # a GPU that runs only some weight formats (T4: no bf16, no fp8)
        refused = weights_refused(r) & ~np.asarray(r.bad)
        if np.any(refused):
            _refuse(
                refused,
                errors,
                lambda: (_names(gpu), _names(model), _names(o.weight_precision)),
                lambda g, name, wp: weight_precision_error(r.catalog.gpu(g), r.catalog.model(name), wp, r.catalog),
            )
            bad_gpus = np.asarray(bad_gpus) | refused
        refused = kv_refused(r) & ~np.asarray(r.bad) & ~np.asarray(bad_gpus)  # a KV dtype it lacks (T4: bf16)
        if np.any(refused):
            _refuse(
                refused,
                errors,
                lambda: (_names(gpu), _names(model), _names(o.kv_precision)),
                lambda g, name, kp: kv_precision_error(r.catalog.gpu(g), r.catalog.model(name), kp, r.catalog, eng),
            )
            bad_gpus = np.asarray(bad_gpus) | refused
    one = type(ctx) is float and type(b) is float and r.bad is False and (gpus is None or type(gpus) is float)
    one = one and bad_gpus is False and getattr(util, "ndim", 0) == 0 and getattr(reserve, "ndim", 0) == 0  # sweeps
    if one and type(r.model.num_layers) is float and type(r.gpu.memory_bytes) is float:
        return _deploy_one(r, eng, ctx, b, util, gpus, reserve, check_fit, gpu, model, errors, par)
    heap.keep_heap_for_sweeps(max(x.size if isinstance(x, Rows) else np.size(x) for x in (ctx, b, r.bad, gpus)))
    if gpus is not None:
        refused = ~m.group_ok(r.model, gpus, par, eng.kv_heads_any_split) & ~np.asarray(r.bad)
        _refuse(
            refused,
            errors,
            lambda: (_names(model), gpus),
            lambda name, n: tp_size_error(r.catalog.model(name), int(n), par, eng),
        )
        bad_gpus = np.asarray(bad_gpus) | refused
    need = b if check_fit else 1
    n = choose_gpus(r, eng, ctx, gpus, util, reserve, need, par)
    n_safe = np.where(np.isnan(n), GPU_GROUPS[-1], n)
    bad = np.asarray(r.bad) | bad_ctx | bad_batch | bad_gpus
    r = _experts_as_loaded(r, n_safe, par)
    plan = None
    if check_fit or gpus is None:
        plan = replace(plan_on(r, eng, ctx, n_safe, util, reserve, par), gpus=n)
        short = (np.isnan(n) | ~(plan.max_batch >= need)) & ~bad  # NaN max batch: short
        if (errors == "raise" or failures.active()) and np.any(short):  # coerce: marked per scenario, unread
            first_only = errors == "raise"
            where, why = _does_not_fit(r, eng, plan, gpus, need, ctx, short, gpu, model, util, reserve, first_only, par)
            if first_only:
                raise why[0]
            reasons = np.full(where.shape, None, dtype=object)
            reasons[where] = why
            failures.note(where, reasons)
        bad = bad | short
    return Deployment(r, eng, ctx, b, util, n, n_safe, plan, bad, par)


def _deploy_one(r: Resolved, eng, ctx: float, b: float, util, gpus, reserve, check_fit, gpu, model, errors, par):
    """``deploy`` for one scenario of Python numbers: the same checks without array bookkeeping."""
    if gpus is not None and not m.group_ok(r.model, gpus, par, eng.kv_heads_any_split):
        if errors == "raise":
            raise tp_size_error(r.catalog.model(model), int(gpus), par, eng)
        failures.note(True, tp_size_error(r.catalog.model(model), int(gpus), par, eng))
        plan = plan_on(r, eng, ctx, gpus, util, reserve, par)
        return Deployment(r, eng, ctx, b, util, gpus, gpus, plan, True, par)
    need = b if check_fit else 1.0
    n = gpus
    if n is None:
        n = math.nan
        for k in GPU_GROUPS:
            if (
                m.group_ok(r.model, float(k), par, eng.kv_heads_any_split)
                and plan_on(r, eng, ctx, float(k), util, reserve, par).max_batch >= need
            ):
                n = float(k)
                break
    n_safe = float(GPU_GROUPS[-1]) if n != n else n
    r = _experts_as_loaded(r, n_safe, par)
    plan = plan_on(r, eng, ctx, n_safe, util, reserve, par)
    if not (type(plan.gpus) is float and plan.gpus == n):  # the plan on n_safe GPUs says n (NaN where none fits)
        plan = replace(plan, gpus=n)
    bad = False
    if (check_fit or gpus is None) and (n != n or not plan.max_batch >= need):
        if errors == "raise" or failures.active():
            why = _does_not_fit(r, eng, plan, gpus, need, ctx, True, gpu, model, util, reserve, True, par)[1][0]
            if errors == "raise":
                raise why
            failures.note(True, why)
        bad = True
    return Deployment(r, eng, ctx, b, util, n, n_safe, plan, bad, par)


def _refuse(
    refused: Any, errors: Errors, keys_of: Callable[[], tuple[Any, ...]], make: Callable[..., BaseException]
) -> None:
    """Scenarios where ``refused`` holds fail with ``make(*key)``, ``keys_of()`` the arrays the error depends on (a
    model name; a GPU and a model; a model and a group size): raised for the first of them (errors="raise"), else
    noted for each inside ``failures.collect()`` (``failures.note_each``); nothing is built where nobody listens
    (coerce: the caller marks them bad). ``keys_of`` is called only then: turning a sweep's text arrays into object
    arrays costs more than the rest of a coerced sweep's refusal check."""
    if errors != "raise" and not failures.active():
        return
    if not np.any(refused):
        return
    keys = keys_of()
    if errors == "raise":
        shape = np.shape(refused)
        first = tuple(np.argwhere(refused)[0]) if shape else ()
        raise make(*(element(k, first, shape) for k in keys))
    failures.note_each(refused, keys, make)


def element(x: Any, idx: tuple, shape: tuple) -> Any:
    """Element ``idx`` of ``x`` broadcast to ``shape`` (scalars as they are)."""
    a = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=object)
    if a.ndim == 0:
        return a.item()
    return np.broadcast_to(a, shape)[idx]


def _short_by(short_bytes: float) -> str:
    """'short by 1.2 GB'; a shortfall too large to be a number (inf, nan) is said in words, not as 'inf GB'."""
    if math.isfinite(short_bytes):
        return f"short by {short_bytes / 1e9:,.1f} GB"
    return "short by more than any GPU group holds"


def _holds_at_most(max_batch: float, context: float, short_bytes: float, group_bytes: float) -> str:
    """``_short_by``, unless the shortfall is more than the group's whole memory ``group_bytes`` (it counts KV heads
    replicated past the model's KV heads, which no GPU added relieves: trial 19 F13, "short by 5,902.6 GB" on 64 x
    85.9 GB) and the group holds some sequences: then how many it holds ("the group holds at most 218 sequences of
    8,000 tokens; more replicas serve more")."""
    if not max_batch >= 1 or short_bytes <= group_bytes:
        return _short_by(short_bytes)
    held = counted(max_batch, "sequence", ",.0f")
    return f"the group holds at most {held} of {context:,.0f} tokens; more replicas serve more"


def _experts_as_loaded(r: Resolved, gpus: Any, parallelism: str) -> Resolved:
    """``r`` with its precision facts as the engine loads the experts on ``gpus`` (``model.experts_as_loaded``), so
    that the time functions read what the memory plan holds; ``r`` itself where nothing changes."""
    if not spreads_experts(parallelism):
        return r
    loaded = m.experts_as_loaded(r.precision, r.limits, gpus, parallelism)
    return r if loaded is r.precision else replace(r, precision=loaded)


def _names(x: Any) -> np.ndarray:
    """Names (or catalog entries) as an object array: text, a list, a Categorical or a Series alike."""
    return np.asarray(x, dtype=object)


def _does_not_fit(
    r, engine, plan, gpus_given, need, context, mask, gpu, model, util, reserve, first_only: bool = False, par="tp"
) -> tuple[np.ndarray, list[DoesNotFitError]]:
    """The error of each scenario where ``mask`` holds (only the first with ``first_only``), and where they are:
    what does not fit where, by how much, and the smallest group that works.

    The numbers are computed over all scenarios at once (a memory plan per group size); only the sentences are
    written one by one.
    """
    shape = np.broadcast(
        _names(gpu), _names(model), plan.kv_budget_bytes_per_gpu, need, context, np.asarray(mask)
    ).shape
    where = np.broadcast_to(np.asarray(mask, dtype=bool), shape)
    if first_only:
        first = np.zeros(shape, dtype=bool)
        first[tuple(np.argwhere(where)[0]) if shape else ()] = True
        where = first

    def at(x) -> list[float]:
        return np.broadcast_to(np.asarray(x, dtype=float), shape)[where].tolist()

    def names(x, lookup) -> list[str]:
        seen: dict[Any, str] = {}
        out = []
        for v in np.broadcast_to(_names(x), shape)[where].tolist():
            key = v if isinstance(v, str) else id(v)
            out.append(seen[key] if key in seen else seen.setdefault(key, lookup(v).name))
        return out

    def pick(by_group: dict[int, Any], groups: np.ndarray) -> np.ndarray:
        """Per masked scenario, the value at its group size (groups: NaN -> NaN)."""
        out = np.full(groups.shape, np.nan)
        for k, values in by_group.items():
            out = np.where(groups == k, values, out)
        return out

    plans = {k: plan_on(r, engine, context, np.asarray(float(k)), util, reserve, par) for k in GPU_GROUPS}
    ok = {
        k: np.asarray(at(m.group_ok(r.model, float(k), par, engine.kv_heads_any_split)), dtype=bool) for k in GPU_GROUPS
    }
    valid_text = {}  # the valid groups, written once per combination
    code = sum(ok[k].astype(np.int64) << j for j, k in enumerate(GPU_GROUPS))
    for c in np.unique(code).tolist():
        valid_text[c] = ", ".join(str(k) for j, k in enumerate(GPU_GROUPS) if c >> j & 1)
    largest = np.zeros(code.shape)
    for k in GPU_GROUPS:
        largest = np.where(ok[k], float(k), largest)
    gnames, mnames, needs = names(gpu, r.catalog.gpu), names(model, r.catalog.model), np.asarray(at(need))
    whats = [
        f"{counted(n, 'sequence', ',.0f')} of {c:,.0f} tokens" for n, c in zip(needs.tolist(), at(context), strict=True)
    ]
    errors = []
    if gpus_given is None:
        per_seq = pick({k: at(p.kv_bytes_per_sequence) for k, p in plans.items()}, largest)
        budget = pick({k: at(p.kv_budget_bytes_per_gpu) for k, p in plans.items()}, largest)
        holds = pick({k: at(p.max_batch) for k, p in plans.items()}, largest).tolist()
        sees = pick({k: at(p.visible_bytes_per_gpu) for k, p in plans.items()}, largest).tolist()
        shorts = (per_seq * needs - budget * largest).tolist()
        contexts = at(context)
        for i, (gname, mname, big) in enumerate(zip(gnames, mnames, largest.astype(int).tolist(), strict=True)):
            where_text = (
                f"up to {big:,} x {gname}"
                if big == GPU_GROUPS[-1]
                else f"{big:,} x {gname}, the largest group {engine_label(engine)} runs it on ({valid_text[int(code[i])]})"
            )
            errors.append(
                DoesNotFitError(
                    f"{mname} weights plus {whats[i]} do not fit on {where_text}: "
                    f"{_holds_at_most(holds[i], contexts[i], shorts[i], sees[i] * big)}",
                    shortfall_bytes=shorts[i],
                    smallest_gpus=None,
                )
            )
        return where, errors
    n = np.asarray(at(plan.gpus))
    shorts = np.asarray(at(plan.kv_bytes_per_sequence)) * needs - np.asarray(at(plan.kv_budget_bytes_per_gpu)) * n
    weights = np.asarray(at(plan.weight_bytes))
    groups = np.asarray(plan.gpus, dtype=float)
    util_n = np.asarray(at(utilization_on(r, engine, np.where(np.isnan(groups), GPU_GROUPS[-1], groups), util, par)))
    visibles, utils = at(plan.visible_bytes_per_gpu), util_n.tolist()
    weights_short = (weights / n > np.asarray(visibles) * util_n).tolist()
    held, contexts = at(plan.max_batch), at(context)
    smallest = np.zeros(n.shape)
    for k in reversed(GPU_GROUPS):
        smallest = np.where(ok[k] & (np.asarray(at(plans[k].max_batch)) >= needs), float(k), smallest)
    for i, (gname, mname, g, least) in enumerate(
        zip(gnames, mnames, n.astype(int).tolist(), smallest.astype(int).tolist(), strict=True)
    ):
        short = _short_by(shorts[i])
        if weights_short[i] and needs[i] > 1:  # the shortfall below is the batch's, not the weights' alone
            head = (
                f"{mname} weights ({weights[i] / 1e9:,.2f} GB) plus {whats[i]} do not fit on {g:,} x {gname} "
                "(the weights alone do not)"
            )
        elif weights_short[i]:
            head = f"{mname} weights ({weights[i] / 1e9:,.2f} GB) do not fit on {g:,} x {gname}"
            fraction = memory_fraction_words(engine, utils[i])
            if fraction:  # the GPUs may hold more than the weights: the engine's fraction of them is what falls short
                seen = visibles[i] * g
                short = (
                    f"{fraction} leaves {seen * utils[i] / 1e9:,.2f} GB of the {seen / 1e9:,.2f} GB the engine sees "
                    f"on {'them' if g > 1 else 'it'}, {_short_by(shorts[i])} for the weights, activations and one "
                    "sequence's KV cache"
                )
        else:
            head = f"{mname} weights plus {whats[i]} do not fit on {g:,} x {gname}"
            short = _holds_at_most(held[i], contexts[i], shorts[i], visibles[i] * g)
        tail = (
            f"; the smallest group that works is {least:,} x {gname}"
            if least
            else f"; no group of up to {GPU_GROUPS[-1]} works"
        )
        if sglang_dp_default(engine, util, par, g) and (weights_short[i] or utils[i] <= 0):
            # SGLang's own default fraction falls with the DP size (trial 16, F3): the refusal is the rule's, not the
            # GPUs', and no larger group helps (the reserve grows with it): say so, and how deployments set it
            head, short, tail = f"{mname} on {g:,} x {gname} as dp-ep", sglang_dp_default_words(utils[i], g), ""
        errors.append(
            DoesNotFitError(f"{head}: {short}{tail}", shortfall_bytes=float(shorts[i]), smallest_gpus=least or None)
        )
    return where, errors
