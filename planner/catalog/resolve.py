"""From names to typed facts for ``planner.api``: what a GPU's, model's and precision's numbers are, and the
facts records (``Resolved``) of a batch of scenarios.

Each distinct GPU, model and precision (or combination of them) is resolved once (``planner.catalog.lookup``: names to
codes and row tables); its numbers are then spread over the scenario arrays per (GPU, model) combination
(``planner.model.rows.Rows``), so a million-row sweep costs a few hundred catalog lookups.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner.accuracy.calibration import CALIBRATED_FIELDS, Calibration, resolve_calibration
from planner.catalog import Catalog, Gpu, Model, Precision, as_catalog, default_catalog
from planner.catalog.lookup import _BY_IDENTITY, Column, _keep, lookup, lookup_combinations, lookup_one, name_key, once
from planner.catalog.names import implied_weight_precision
from planner.checks import Errors
from planner.engines import kernel_curves
from planner.engines.allreduce_table import (
    mesh_link_share,
    read_allreduce_table,
    read_gather_scatter_table,
    table_source,
)
from planner.engines.architecture import MODEL_FACT_FIELDS, fp8_ds_mla_bytes_per_token, model_facts
from planner.engines.kernel_curves import KERNEL_FIELDS, kernel_factors, sparse_mla_bf16_for, sparse_mla_token_for
from planner.engines.kernel_paths import profile_expert_parallel_bytes_per_param, profile_mxfp4_refusal
from planner.engines.profiles import EngineProfile, engine_profile
from planner.errors import InvalidInputError, OutOfRangeError, PlannerError, typed_name
from planner.model import failures
from planner.model.facts import EngineFacts, GpuFacts, ModelFacts, PrecisionFacts, field_names
from planner.model.parallel import dp_gather_rule
from planner.model.rows import Rows, combined_codes, regroup, whole_number_codes


def gpu_numbers(
    g: Gpu, engine: EngineProfile | None = None, calibration: Calibration | None = None
) -> dict[str, float]:
    """The GPU's catalog numbers, the engine's batching limits on it, and its (calibrated) efficiency factors.

    Keys are the fields of ``GpuFacts`` and ``EngineFacts`` (less the peak at a precision), plus ``peak_<key>``.
    """
    on_demand = g.price("on-demand")
    price = on_demand.usd_per_gpu_hour if on_demand else math.nan
    eng = engine or engine_profile(None)
    factors = {f: getattr(eng, f) for f in CALIBRATED_FIELDS}
    entry = (calibration or resolve_calibration(None)).for_gpu(g.all_names(), eng.name)
    if entry is not None:
        factors.update(entry.factors())
    tokens, seqs = eng.batching_limits(g.memory_bytes, g.engine_device_name)
    override = factors["allreduce_latency_s"]  # the engine's or a calibration's, else measured, else the catalog's
    fabric = fabric_numbers(g)
    kernels = dict(KERNEL_FIELDS)
    if eng.kernel_curves:
        kernels = gpu_kernel_factors(g)
        measured = kernels.pop("measured_allreduce_latency_s")
        if not math.isnan(measured):
            fabric["allreduce_latency_s"] = measured
        share = kernels.pop("measured_interconnect_efficiency")  # a calibration's own share wins
        if not math.isnan(share) and (entry is None or entry.interconnect_efficiency is None):
            factors["interconnect_efficiency"] = share
    factors["allreduce_latency_s"] = fabric["allreduce_latency_s"] if override is None else override
    if eng.kernel_curves and eng.fp8_kv_at_16_bit_rate:  # its 8-bit cache read at the 16-bit cache's bytes/s
        kernels["attention_fp8_bandwidth_efficiency"] = kernels["attention_bandwidth_efficiency"]
        own = (
            kernel_curves.trtllm_attention_fractions(g, default_catalog())
            if kernel_curves.TENSORRT_LLM_OWN_ATTENTION
            else None
        )
        if own is not None:  # EXPERIMENT (s186, off): TensorRT-LLM's own measured attention byte rates
            kernels["attention_bandwidth_efficiency"], kernels["attention_fp8_bandwidth_efficiency"] = own
    if eng.kernel_curves:  # the engine family's sparse MLA kernel (planner.model.operators.sparse_mla_time_s), or 0
        kernels["sparse_mla_token_s"] = sparse_mla_token_for(g, default_catalog(), eng.sparse_mla_kernel)
    bf16_line = sparse_mla_bf16_for(g, default_catalog(), eng.sparse_mla_kernel) if eng.kernel_curves else (0.0, 0.0)
    if eng.kernel_curves and eng.name in kernel_curves.TENSORRT_LLM_MOE_PROFILES:
        # TensorRT-LLM's own grouped-GEMM rate (1.x's CUTLASS fused MoE, 0.x's plugin: one runner) where it was
        # measured on the GPU or the GPU of its architecture whose curves it takes (s126, s142), else vLLM's; 0.x's
        # fp8 experts, per tensor, at its per-tensor fp8 rate (s142)
        src = kernel_curves.tensorrt_llm_moe_source(g, default_catalog())
        if src is not None:
            kernels["moe_gemm_half_width"] = kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS[src]
            kernels["moe_gemm_half_rows"] = kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_ROWS[src]
            if eng.name in kernel_curves.TENSORRT_LLM_MOE_FP8_PROFILES:
                kernels["moe_fp8_flop_scale"] = kernel_curves.TENSORRT_LLM_MOE_FP8_FLOP_SCALES[src]
    interconnect = g.interconnect_bytes_per_s or 32e9  # PCIe Gen4 x16 when unstated
    table_row, table_scale = math.nan, 1.0  # the measured all-reduce table's row (planner.engines.allreduce_table)
    table_share = 0.0  # that row's GPU's mesh link / its aggregate (0: switched)
    if uses_allreduce_table(eng):
        src, table_scale = table_source(g, interconnect, default_catalog())
        table_row = read_allreduce_table().row(src)
        table_share = mesh_link_share(default_catalog().gpu(src))
    gs_row, gs_scale = math.nan, 1.0  # NCCL's all-gather / reduce-scatter row (data-parallel MoE, moe_exchange)
    if gathers_moe(eng):
        src, gs_scale = table_source(g, interconnect, default_catalog())
        gs_row = read_gather_scatter_table().row(src)
    return {
        "moe_exchange": float(MOE_EXCHANGES.index(eng.moe_exchange)) if gathers_moe(eng) else 0.0,
        "dp_gather": dp_gather_rule(eng.name),
        "gather_scatter_table_row": gs_row,
        "gather_scatter_table_bytes_scale": gs_scale,
        "allreduce_table_row": table_row,
        "allreduce_table_bytes_scale": table_scale,
        "allreduce_table_link_share": table_share,
        "mesh_link_bytes_per_s": g.mesh_link_bytes_per_s or 0.0,
        **fabric,
        **factors,
        **kernels,
        "pcie_latency_s": fabric["pcie_latency_s"] if override is None else override,
        "ecc_reserved_fraction": g.ecc_reserved_fraction,
        "decode_kv_reads_per_query_head": float(eng.decode_kv_reads_per_query_head),
        "sparse_mla_prefill_max_heads": float(eng.sparse_mla_prefill_max_heads),
        "sparse_mla_bf16_token_s": bf16_line[0],
        "sparse_mla_bf16_attended_s": bf16_line[1],
        "host_overlap": float(eng.host_overlap),
        "experts_whole": float(eng.experts_whole),
        "decode_graph_max_batch": float(eng.decode_graph_max_batch),
        "decode_graph_gap_above": float(eng.decode_graph_gap_above),
        "eager_layer_s": float(eng.eager_layer_s),
        "eager_moe_layer_s": float(eng.eager_moe_layer_s),
        "decode_moe_layer_overhead_s": float(eng.decode_moe_layer_overhead_s),
        "moe_flop_scale": float(eng.moe_flop_scale),
        "moe_flop_ceiling": float(eng.moe_flop_ceiling),
        "mxfp4_experts_refused": float(bool(profile_mxfp4_refusal(eng.name, g.architecture))),
        "expert_parallel_expert_bytes_per_param": profile_expert_parallel_bytes_per_param(eng.name, g.architecture),
        "max_num_batched_tokens": tokens,
        "max_num_seqs": seqs,
        "memory_bytes": g.memory_bytes,
        "engine_visible_memory_bytes": g.engine_visible_memory_bytes or math.nan,
        "bandwidth_bytes_per_s": g.hbm_bandwidth_bytes_per_s,
        "bf16_peak_flop_per_s": g.peak_flop_per_s.get("bf16") or g.peak_flop_per_s["fp16"],
        "interconnect_bytes_per_s": interconnect,
        "price_usd_per_gpu_hour": price,
        **{f"peak_{k}": v for k, v in g.peak_flop_per_s.items()},
    }


#: ``EngineProfile.moe_exchange`` by its ``EngineFacts.moe_exchange`` code.
MOE_EXCHANGES = ("alltoall", "gather", "gather-quantized")


def gathers_moe(engine: EngineProfile) -> bool:
    """Whether ``engine`` times data-parallel attention's MoE as an all-gather and a reduce-scatter from NCCL's
    measured table (``EngineProfile.moe_exchange`` "gather" or "gather-quantized", with kernel curves), unless
    ``planner.engines.allreduce_table.GATHER_SCATTER`` is off (a bench's ablation)."""
    from planner.engines import allreduce_table

    return bool(engine.moe_exchange != "alltoall" and engine.kernel_curves and allreduce_table.GATHER_SCATTER)


def uses_allreduce_table(engine: EngineProfile) -> bool:
    """Whether ``engine`` times all-reduces from the measured table: kernel curves and ``allreduce_table`` on (every
    shipped profile but "ideal"), unless a benchmark script set the run-wide
    ``planner.engines.allreduce_table.FIT_INSTEAD`` to compare with the latency + bandwidth form."""
    from planner.engines import allreduce_table

    return bool(engine.allreduce_table and engine.kernel_curves and not allreduce_table.FIT_INSTEAD)


def gpu_kernel_factors(g: Gpu) -> dict[str, float]:
    """The GPU's kernel curves (``planner.engines.kernel_curves``), its own or its nearest architecture's."""
    return kernel_factors(g, default_catalog())


def _gpu_numbers(catalog: Catalog, engine: EngineProfile | None, calibration: Calibration | None, name: Any):
    """``gpu_numbers`` of the GPU ``name`` (a name or a catalog entry), once per catalog, engine and calibration."""

    def numbers() -> dict[str, float]:
        g = catalog.gpu(name)
        return {
            **gpu_numbers(g, engine, calibration),
            "weight_formats": weight_format_mask(catalog, g),
            "engine_refused": float(engine_vendor_refused(engine, g)),
        }

    return once(
        ("gpu", id(catalog), id(engine), id(calibration), name_key(name)), (catalog, engine, calibration, name), numbers
    )


#: Engines that run on NVIDIA GPUs only (name prefixes): TensorRT-LLM is built on CUDA and lists only NVIDIA
#: architectures ("Supported Hardware", nvidia.github.io/TensorRT-LLM, read 2026-12-05: Blackwell, Hopper, Ada Lovelace,
#: Ampere); NIM's backend here is TensorRT-LLM's profile ("nim" is its alias).
NVIDIA_ONLY_ENGINES = ("tensorrt-llm",)


def engine_vendor_refused(engine: EngineProfile | None, g: Gpu) -> bool:
    """Whether ``engine`` does not run on ``g``'s vendor at all (``NVIDIA_ONLY_ENGINES`` on an AMD or Intel GPU)."""
    return engine is not None and engine.name.startswith(NVIDIA_ONLY_ENGINES) and g.vendor != "NVIDIA"


def weight_format_bits(catalog: Catalog, *names: str) -> float:
    """The bits of the catalog's precisions ``names`` (2**index each, ``PrecisionFacts.weight_format_bits``)."""
    index = {p.name: i for i, p in enumerate(catalog.precisions)}
    return float(sum(1 << index[n] for n in set(names) if n in index))


def weight_format_mask(catalog: Catalog, g: Gpu) -> float:
    """The bits of the weight formats an engine runs on ``g`` (``Gpu.weight_formats_among``: its
    ``weight_precisions``, less the NVIDIA-only ones off NVIDIA); 0: any."""
    formats = g.weight_formats_among(p.name for p in catalog.precisions)
    return 0.0 if formats is None else weight_format_bits(catalog, *formats)


def fabric_numbers(g: Gpu) -> dict[str, float]:
    """The GPU's all-reduce fabric from the catalog: domain size, latencies, PCIe rate (defaults where it is silent).

    Domain: the catalog's, 1 on PCIe cards, unlimited where unstated; latency: the catalog's, else 8 us;
    PCIe: the catalog's, else the card's own link on PCIe cards, else PCIe Gen4 x16 (32 GB/s).
    """
    pcie = g.interconnect_kind == "pcie"
    fabric_latency = g.interconnect_latency_s or DEFAULT_ALLREDUCE_LATENCY_S
    return {
        "interconnect_domain_gpus": float(g.interconnect_domain_gpus or (1 if pcie else math.inf)),
        "pcie_bytes_per_s": g.pcie_bytes_per_s or (g.interconnect_bytes_per_s if pcie else None) or 32e9,
        "allreduce_latency_s": fabric_latency,
        "pcie_latency_s": g.pcie_latency_s or fabric_latency,
    }


#: All-reduce latency where neither the engine, a calibration nor the catalog gives one: NVLink small-message
#: all-reduce on 8 GPUs (the engine default of planner 0.1).
DEFAULT_ALLREDUCE_LATENCY_S = 8e-6

#: The 16-bit formats a model published in either runs in on a GPU that lacks the other (vLLM ``_resolve_auto_dtype``).
SIXTEEN_BIT = ("bf16", "fp16")
#: The KV-cache dtypes checked against a GPU's formats (``Gpu.weight_precisions``): the 16/32-bit ones (no bf16 below
#: SM 8.0) and fp8 (no fp8 cache below SM 8.0 in vLLM 0.24: ``planner.deploy.FP8_KV_SOURCE``).
KV_DTYPES_CHECKED = (*SIXTEEN_BIT, "fp32", "fp8")
PEAK_KEYS = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "int4")
_PEAK_TWINS = {"bf16": "fp16", "fp16": "bf16"}


def gpu_peak_key(gpu: Gpu, precision: Precision) -> str:
    """Which of the GPU's dense peaks the precision's math runs at: its own key, else its twin (bf16/fp16), else
    the fallback."""
    peaks = gpu.peak_flop_per_s
    for key in (
        precision.math,
        _PEAK_TWINS.get(precision.math),
        precision.math_fallback,
        _PEAK_TWINS.get(precision.math_fallback),
    ):
        if key and key in peaks:
            return key
    return "fp16" if peaks.get("fp16") else "bf16"


def gpu_peak_flop_per_s(gpu: Gpu, precision: Precision) -> float:
    """The GPU's dense peak for the precision's math (``gpu_peak_key``)."""
    return gpu.peak_flop_per_s[gpu_peak_key(gpu, precision)]


def math_flags(precision: Precision) -> dict[str, float]:
    """One-hot flags of the precision's math peak and its fallback, so ``_peak_for_weights`` can vectorize."""
    return {
        **{f"math_{k}": float(precision.math == k) for k in PEAK_KEYS},
        **{f"fallback_{k}": float(precision.math_fallback == k) for k in PEAK_KEYS},
    }


def default_kv_precision(model: Model | str, *, catalog: Catalog | None = None) -> str:
    """The KV cache is kept in the activation dtype: the native precision when 16/32-bit, else bf16 (DeepSeek-V3's fp8
    checkpoint caches bf16). ``model``: a catalog ``Model`` or its name or alias, looked up in ``catalog`` (default:
    the shipped one) as every ``planner.api`` function does."""
    if not isinstance(model, Model):
        if not isinstance(model, str):
            raise InvalidInputError(f"model must be a model name or a catalog Model; got {model!r}")
        model = as_catalog(catalog).model(model)
    return model.native_precision if model.native_precision in ("fp16", "bf16", "fp32") else "bf16"


@dataclass
class Resolved:
    """Everything looked up for a batch of scenarios: typed facts per scenario, and where lookups failed.

    ``gpu`` and ``limits`` are None when no GPU was asked for; ``model`` and ``precision`` when no model was.
    ``gpu.peak_flop_per_s`` is the peak at the weight precision's math (NaN without a model).
    """

    gpu: GpuFacts | None
    limits: EngineFacts | None
    model: ModelFacts | None
    precision: PrecisionFacts | None
    bad: np.ndarray | bool
    first_error: PlannerError | None
    catalog: Catalog | None = None
    gpu_columns: Column | None = None
    numbers: Rows | None = None  # the numbers asked to pair with the names, per (names, number) pair; None: not paired

    @property
    def ok(self) -> bool:
        """Whether some scenario resolved (all asked-for records are present)."""
        return (self.gpu is not None or self.gpu_columns is None) and (self.model is not None or self.precision is None)

    def shape(self, *arrays: Any) -> tuple:
        """The broadcast shape of every fact and ``arrays``."""
        parts: list[Any] = list(arrays)
        for rec in (self.gpu, self.limits, self.model, self.precision):
            if rec is not None:
                parts.extend(vars(rec).values())
        return np.broadcast_shapes(*(np.shape(p) for p in parts))


def _resolve(
    catalog: Catalog,
    errors: Errors,
    gpu: Any = None,
    model: Any = None,
    weight_precision: Any = None,
    kv_precision: Any = None,
    engine: EngineProfile | None = None,
    calibration: Calibration | None = None,
    numbers: Any = None,
) -> Resolved:
    """Look up GPUs, models and precisions (all optional) into typed facts, broadcasting arrays of names.

    ``numbers``: an array of whole numbers per scenario (a context) that the facts are paired with when its values
    repeat (``_pair``): the facts then hold one row per distinct (names, number) pair, and ``Resolved.numbers``
    the number of each pair, so that the formulas run once per pair."""
    if _is_one_name(gpu) and _is_one_name(model) and _is_one_name(weight_precision) and _is_one_name(kv_precision):
        try:
            return _resolve_one(catalog, gpu, model, weight_precision, kv_precision, engine, calibration)
        except PlannerError as exc:
            if errors == "raise":
                raise
            failures.note(True, exc)
            missing = Column({}, None, True, exc) if gpu is not None else None
            return Resolved(None, None, None, None, True, exc, catalog, missing)
    return _resolve_many(catalog, errors, gpu, model, weight_precision, kv_precision, engine, calibration, numbers)


def _is_one_name(x: Any) -> bool:
    return x is None or isinstance(x, (str, Gpu, Model, Precision))


#: One scenario's resolved facts by (catalog, names, engine, calibration); objects are keyed by identity and kept
#: alive with the entry, so a key cannot be reused by another object.
_ONE: dict[tuple, tuple[tuple, Resolved]] = {}


def _resolve_one(catalog, gpu, model, weight_precision, kv_precision, engine, calibration) -> Resolved:
    """One scenario's facts, cached: repeated scalar calls skip the catalog lookups (raises a PlannerError)."""
    objects = (catalog, gpu, model, weight_precision, kv_precision, engine, calibration)
    key = tuple([x if x is None or type(x) is str else id(x) for x in objects])  # a list comprehension: inlined
    hit = _ONE.get(key)
    if hit is not None:
        return hit[1]
    out = _resolve_many(catalog, "raise", gpu, model, weight_precision, kv_precision, engine, calibration)
    if len(_ONE) > 4096:
        _ONE.clear()
    _ONE[key] = (objects, out)
    return out


def _resolve_many(
    catalog: Catalog,
    errors: Errors,
    gpu: Any,
    model: Any,
    weight_precision: Any,
    kv_precision: Any,
    engine: EngineProfile | None,
    calibration: Calibration | None,
    numbers: Any = None,
) -> Resolved:
    gpu_cols = (
        lookup(
            gpu,
            lambda name: name,
            functools.partial(_gpu_numbers, catalog, engine, calibration),
            errors,
            (("gpus", id(catalog), id(engine), id(calibration)), (catalog, engine, calibration)),
        )
        if gpu is not None
        else Column({}, None, False, None)
    )
    model_cols = Column({}, None, False, None)
    if model is not None:
        names = (model, weight_precision, kv_precision)
        model_numbers = functools.partial(_model_numbers, catalog, engine)
        if all(np.ndim(x) == 0 for x in names):
            model_cols = lookup_one(names, model_numbers, errors)
        else:
            model_cols = lookup_combinations(
                names, model_numbers, errors, (("models", id(catalog), id(engine)), (catalog, engine))
            )
    first = gpu_cols.first_error or model_cols.first_error
    g, md = gpu_cols.rows, model_cols.rows
    gpu_facts = limits = model_rec = precision = None
    codes, gi, mi, numbers, via = _groups((gpu_cols if g else None, model_cols if md else None), numbers)
    if g:
        peak = _peak(gpu_cols, model_cols, gi, mi, codes, via) if md else np.nan
        eng = engine or engine_profile(None)
        table = read_allreduce_table() if uses_allreduce_table(eng) else None
        gathers = read_gather_scatter_table() if gathers_moe(eng) else None
        gpu_facts, limits = _facts(
            gpu_cols, gi, codes, (GpuFacts, EngineFacts), via, peak_flop_per_s=peak, allreduce_table=table,
            gather_scatter_table=gathers,
        )  # fmt: skip
    if md:
        model_rec, precision = _facts(model_cols, mi, codes, (ModelFacts, PrecisionFacts), via)
    return Resolved(
        gpu_facts,
        limits,
        model_rec,
        precision,
        bad if np.ndim(bad := np.logical_or(gpu_cols.bad, model_cols.bad)) else bool(bad),
        first,
        catalog,
        gpu_cols if gpu is not None else None,
        numbers,
    )


def _combinations(gpus: Column | None, models: Column | None) -> tuple[np.ndarray | None, list[np.ndarray | None]]:
    """Each scenario's distinct (GPU row, model row) combination, and the GPU and model row of each combination.

    (codes of the combinations, [GPU rows, model rows]: None for a column of one name or none). The combined code
    (GPU row x model rows + model row) counts in a small range: when it is small beside the scenarios, every pair
    is a combination (a few unused ones cost less than finding them), else the distinct ones are found by
    counting, not sorting.
    """
    ranged = [c is not None and c.codes is not None for c in (gpus, models)]
    if not any(ranged):
        return None, [None, None]
    if not all(ranged):
        c = gpus if ranged[0] else models
        rows = np.arange(_row_count(c))
        return c.codes, [rows, None] if ranged[0] else [None, rows]
    n_models = _row_count(models)
    combined = combined_codes(
        gpus.codes, n_models, models.codes
    )  # broadcast: GPUs in a column, models in a row: a grid
    span = _row_count(gpus) * n_models
    if span <= max(combined.size // 16, 1024):  # every (GPU row, model row) pair a row: no renumbering
        return combined, list(np.divmod(np.arange(span), n_models))
    if span <= max(4 * combined.size, 1 << 16):
        renumber = np.zeros(span, dtype=np.intp)
        used = np.flatnonzero(np.bincount(combined.ravel(), minlength=span))
        renumber[used] = np.arange(len(used))
        codes = np.take(renumber, combined)
    else:  # very many distinct names on both sides
        used, codes = np.unique(combined, return_inverse=True)
        codes = codes.reshape(combined.shape)
    gpu_rows, model_rows = np.divmod(used, n_models)
    return codes, [gpu_rows, model_rows]


def _groups(columns: tuple[Column | None, Column | None], numbers: Any, most: int = 4096) -> tuple:
    """(codes, GPU rows, model rows, numbers, via): each scenario's combination of names and the GPU and model row
    of each combination (``_combinations``), or, when ``numbers`` (whole numbers per scenario: a context) repeat,
    each scenario's distinct (combination, number) pair, the GPU and model rows of each combination, the number of
    each pair as ``Rows`` and the combination of each pair (``via``), so that every fact and the number are per pair
    and a formula runs once per pair, its terms without the number once per combination (a sweep of 200,000
    scenarios over 33 GPUs, 87 models and 6 contexts holds 2,871 combinations and 17,226 pairs). numbers and via
    are None when not paired: not an array of whole numbers, more than ``most`` values, or pairs not much fewer
    than the scenarios (``planner.model.rows.regroup``).

    The pairs of recent calls are kept (``lookup._BY_IDENTITY``) by the name codes of ``columns`` (read-only arrays
    kept with the entry: their place and shape name them) and the numbers (compared whole): the calls of a sweep
    over the same arrays pair them once."""
    if not isinstance(numbers, np.ndarray) or numbers.size < 4 * most or numbers.dtype.kind not in "iuf":
        return (*_ungrouped(columns), None, None)
    ranged = [c for c in columns if c is not None and c.codes is not None]
    name_codes = tuple(c.codes for c in ranged)
    key = ("pairs", *((c.__array_interface__["data"][0], c.shape, c.strides) for c in name_codes))
    key += (numbers.shape, *(_row_count(c) for c in ranged), tuple(c is None for c in columns))
    hit = _BY_IDENTITY.get(key)
    if hit is not None and not any(c.flags.writeable for c in name_codes) and np.array_equal(hit[1], numbers):
        return hit[2]
    codes, gpu_rows, model_rows = _ungrouped(columns)
    found = whole_number_codes(numbers, most) if codes is not None else None
    rows = len(gpu_rows if gpu_rows is not None else model_rows) if codes is not None else 0
    grouped = None if found is None else regroup(codes, rows, found[0], len(found[1]))
    if grouped is None:
        return codes, gpu_rows, model_rows, None, None
    pairs, row_of, value_of = grouped
    for a in (pairs, gpu_rows, model_rows, row_of):
        if a is not None:
            a.flags.writeable = False  # shared by the calls that pass the same names and numbers (and ``_facts``)
    out = pairs, gpu_rows, model_rows, Rows(np.take(found[1].astype(float, copy=False), value_of), pairs), row_of
    _keep(key, (name_codes, numbers.copy(), out))
    return out


def _ungrouped(columns: tuple[Column | None, Column | None]) -> tuple:
    codes, (gpu_rows, model_rows) = _combinations(*columns)
    return codes, gpu_rows, model_rows


def _row_count(column: Column) -> int:
    return len(next(iter(column.rows.values())))


#: Up to this many scenarios, facts are plain per-scenario arrays instead of ``Rows``: a formula on a few hundred
#: numbers costs numpy's per-call overhead either way, and ``Rows``' own bookkeeping (a Python call per operation)
#: was most of the time of the fits' ~100-row calls (``planner.accuracy.holdout``, ``planner calibrate``).
SMALL_SCENARIOS = 256


def _facts(
    column: Column,
    rows: np.ndarray | None,
    codes: np.ndarray | None,
    classes: tuple[type, ...],
    via: np.ndarray | None = None,
    **given: Any,
) -> list[Any]:
    """Facts records of ``column``'s fields: Python floats for one scenario, else ``Rows`` per combination
    (``rows``: the column's row of each combination; None: one name, its floats shared by all) whose values are the
    column's own rows (``Rows(Rows(table, rows), codes)``: a term of these facts alone runs once per catalog row).
    ``via``: the combination of each pair when ``codes`` number (combination, context) pairs (``_groups``): then
    ``Rows(Rows(Rows(table, rows), via), codes)``, so that a term of the GPU's and the model's facts together runs
    once per (GPU, model) combination (2,871 in the bench's sweep) and only a term with the context once per pair
    (17,226). The Rows of pairs kept by ``_groups`` (read-only rows and codes) are kept too
    (``lookup._BY_IDENTITY``): a sweep's next calls over the same names and contexts take no row again. The catalog
    facts keep their gathered values (``Rows.keep``): read by many terms and calls, each is gathered once."""
    shared = rows is not None and not rows.flags.writeable and not codes.flags.writeable  # pairs kept (``_groups``)
    key = ("facts", id(column.rows), id(rows), id(codes), id(via), classes, tuple(given))
    hit = _BY_IDENTITY.get(key) if shared else None
    if hit is not None and hit[0][0] is column.rows and hit[0][1] is rows and hit[0][2] is codes and hit[0][3] is via:
        values = {**hit[1], **given}
    else:
        values = dict(given)
        for cls in classes:
            for n in field_names(cls):
                if n not in values:
                    v = column.rows[n]
                    if rows is None:
                        values[n] = v
                    elif codes.size <= SMALL_SCENARIOS:  # plain arrays: numpy's overhead beats per-row savings
                        values[n] = np.take(np.take(v, rows), codes if via is None else np.take(via, codes))
                    else:
                        v = Rows(v, rows, keep=True)
                        values[n] = Rows(v if via is None else Rows(v, via, keep=True), codes)
        if shared:
            _keep(key, ((column.rows, rows, codes, via), {k: v for k, v in values.items() if k not in given}))
    return [cls(**{n: values[n] for n in field_names(cls)}) for cls in classes]


def _peak(gpus: Column, models: Column, gpu_rows: Any, model_rows: Any, codes: Any, via: Any = None) -> Any:
    """Per combination: the GPU's peak at the weight precision's math, chosen once per (GPU, model) row pair
    (``via``: the combination of each (combination, context) pair, as ``_facts``)."""
    if gpus.codes is None and models.codes is None:
        return _peak_for_weights(gpus.rows, models.rows)
    table = once(("peak", id(gpus.rows), id(models.rows)), (gpus.rows, models.rows), lambda: _peaks(gpus, models))
    gi = 0 if gpu_rows is None else gpu_rows
    mi = 0 if model_rows is None else model_rows
    per_combination = np.asarray(table[gi, mi])
    if via is not None:  # paired: per combination, then per (combination, context) pair
        return Rows(Rows(per_combination, via), codes)
    return np.take(per_combination, codes) if np.size(codes) <= SMALL_SCENARIOS else Rows(per_combination, codes)


def _peaks(gpus: Column, models: Column) -> np.ndarray:
    """The peak at the weight precision's math of every (GPU row, model row) pair: GPU rows x model rows."""
    g = {k: np.asarray(v, dtype=float).reshape(-1, 1) for k, v in gpus.rows.items()}
    flags = {
        k: np.asarray(v, dtype=float).reshape(1, -1) for k, v in models.rows.items() if k[:5] in ("math_", "fallb")
    }
    return _peak_for_weights(g, flags)


def _model_numbers(catalog: Catalog, engine: EngineProfile | None, key: tuple[Any, Any, Any]) -> dict[str, float]:
    """A model's facts, weight / expert / kept / KV bytes and math flags at the given precisions (names or None)."""
    return once(
        ("model", id(catalog), id(engine), *(name_key(x) for x in key)),
        (catalog, engine, key),
        lambda: _model_row(catalog, engine, key),
    )


def experts_words(weight_precision: str, expert_precision: str | None) -> str:
    """ " + mxfp4 experts" where a MoE model's routed experts are kept in another format than its other weights
    (gpt-oss as published), else "": how every surface names the weights ("bf16 + mxfp4 experts")."""
    if expert_precision and expert_precision != weight_precision:
        return f" + {expert_precision} experts"
    return ""


def weights_phrase(weights: str, experts: str | None) -> str:
    """The weights in a list of a deployment's parts: "bf16 weights + mxfp4 experts" (gpt-oss as published,
    ``experts_words``), "fp8 weights"; what the review's sentences, grid rows and published-run rows say."""
    return f"{weights} weights{experts_words(weights, experts)}"


def expert_precision(catalog: Catalog, model: Model, weight_precision: Any) -> Precision:
    """The routed experts' precision: the model's own expert format where the weights are as published
    (``weight_precision`` None; gpt-oss: MXFP4 experts beside bf16 layers), else the weights' precision."""
    if weight_precision is None:
        return catalog.precision(model.native_expert_precision or model.native_precision)
    return catalog.precision(weight_precision)


def weights_words(catalog: Catalog, model: Model, weight_precision: Any = None) -> str:
    """How every surface names ``model``'s weights at ``weight_precision`` (None: as published): the precision's name
    and, where a MoE model's routed experts are kept in another format (``expert_precision``), " + <format> experts"
    (``experts_words``). gpt-oss-120b as published: "bf16 + mxfp4 experts" (its config's quantization_config:
    MXFP4 experts beside bf16 attention and embeddings); at fp8: "fp8"; Llama-2-70B: "fp16"."""
    w = catalog.precision(weight_precision if weight_precision is not None else model.native_precision).name
    experts = expert_precision(catalog, model, weight_precision).name if model.moe is not None else None
    return w + experts_words(w, experts)


def weights_enlarge_experts(catalog: Catalog, model: Model, weights: Any) -> str:
    """Why quantizing ``model``'s weights to ``weights`` saves nothing, "" where it may: the checkpoint's routed
    experts already ship in fewer bytes per value than ``weights`` (gpt-oss: MXFP4, 4.25 bits = 0.53 B per value,
    against fp8's 1 B), and the weights' precision applies to the experts too (``expert_precision``), so the model
    would grow (gpt-oss-120b at fp8: 41.19 GB of KV room per H100 of 4 against 53.75 GB as published; trial 26 F2).
    The rule both the what-if workbook's Weights fp8 lever (Calc's no_change row) and the budget review's
    like-for-like grid follow: neither proposes such weights as a saving."""
    if model.moe is None or not model.native_expert_precision:
        return ""
    shipped, asked = catalog.precision(model.native_expert_precision), catalog.precision(weights)
    if shipped.bytes_per_element >= asked.bytes_per_element:
        return ""
    return f"no saving: the checkpoint's experts are already {shipped.name}, smaller than {asked.name}"


def weights_to_pass(catalog: Catalog, model: Model, weights: str, experts: str | None = None) -> str | None:
    """The weight precision a resolved deployment hands on to another model call (the serving simulation's replica):
    None where ``weights`` (and, for a MoE model, its routed ``experts``) are the model's as published, else
    ``weights``. The resolved name alone would be read as asked and quantize the routed experts too: gpt-oss's
    "bf16" by name reads its MXFP4 experts as bf16 (gpt-oss-120b 233.66 GB against 69.25 GB)."""
    published_experts = expert_precision(catalog, model, None).name
    as_published = weights == model.native_precision and (
        model.moe is None or (experts if experts is not None else published_experts) == published_experts
    )
    return None if as_published else weights


def kv_formats(precisions: Iterable[Precision], engines: Iterable[EngineProfile] = ()) -> list[str]:
    """The KV-cache formats among ``precisions`` that every one of ``engines`` caches (``EngineProfile.accepts_kv``;
    no engine: every KV-cache format), in the catalog's order: what a refused KV precision is offered, and the
    what-if workbook's KV list (vLLM: fp32, bf16, fp16, fp8, not int8 or int4)."""
    engines = list(engines)
    return [p.name for p in precisions if p.kv_cache and all(e.accepts_kv(p.name) for e in engines)]


def kv_engines(precision: Precision, engines: Iterable[EngineProfile] | None = None) -> list[str]:
    """The engine profiles that cache KV in ``precision`` (``EngineProfile.accepts_kv``; default: every shipped
    profile, ``planner.engines.profiles.ENGINES``), a family named once where all its releases do ("vllm" for vllm,
    vllm-fullsort and vllm-0.10), else the releases that do ("tensorrt-llm-0": int8, where TensorRT-LLM 1.x does
    not). Empty for a weights-only format (``Precision.kv_cache`` False). int4: lmdeploy (quant_policy 4) and the
    'ideal' engine's what-if; vLLM, SGLang and TensorRT-LLM refuse it (``plan -k int4`` exits 2 there)."""
    if not precision.kv_cache:
        return []
    if engines is None:
        from planner.engines.profiles import ENGINES

        engines = ENGINES.values()
    engines = list(engines)
    families: dict[str, list[EngineProfile]] = {}
    for e in engines:  # a family: the first profile whose name, or name + "-", starts the others'
        base = next((f for f in families if e.name == f or e.name.startswith(f + "-")), e.name)
        families.setdefault(base, []).append(e)
    out = []
    for base, members in families.items():
        takes = [e.name for e in members if e.accepts_kv(precision.name)]
        out += [base] if len(takes) == len(members) else takes
    return out


def _model_row(catalog: Catalog, engine: EngineProfile | None, key: tuple[Any, Any, Any]) -> dict[str, float]:
    name, wp, kp = key
    mdl = catalog.model(name)
    wp = implied_weight_precision(name, wp)  # "...-FP8" checkpoints: fp8
    facts = model_facts(mdl)
    w = catalog.precision(wp if wp is not None else mdl.native_precision)
    expert = expert_precision(catalog, mdl, wp)
    kv = catalog.precision(kp if kp is not None else default_kv_precision(mdl))
    if not kv.kv_cache:  # suggest only formats the engine then accepts (vLLM: not int8 or int4)
        usable = kv_formats(catalog.precisions, [engine] if engine is not None else [])
        raise OutOfRangeError(
            f"precision {typed_name(kp, kv.name)} is not a KV-cache format; use one of " + ", ".join(usable)
        )
    if engine is not None and not engine.accepts_kv(kv.name):
        raise OutOfRangeError(
            f"the {engine.name!r} engine cannot cache KV in {typed_name(kp, kv.name)}; it caches "
            + ", ".join(engine.kv_precisions or ())
            + " (the 'ideal' engine computes any KV format as a what-if)"
        )
    out = {f: float(getattr(facts, f)) for f in MODEL_FACT_FIELDS}
    # re-quantized online (per tensor): no blocks; a block-FP8 checkpoint of a 16-bit model (Qwen "-FP8", whose name
    # gives the entry its weight_block_size: Catalog.model) loaded as fp8 keeps them
    block_checkpoint = w.name == "fp8" and bool(mdl.weight_block_size)
    if w.name != catalog.precision(mdl.native_precision).name and not block_checkpoint:
        out["weight_block_size"] = 0.0
    out.update(
        weight_bytes_per_param=w.bytes_per_element,
        expert_bytes_per_param=expert.bytes_per_element,
        kept_bytes_per_param=w.bytes_per_element if w.quantizes == "all" else 2.0,
        kv_bytes_per_element=kv.bytes_per_element,
        expert_mxfp4=1.0 if expert.name == "mxfp4" else 0.0,
        # as published, a 16-bit model runs in either 16-bit format (vLLM's --dtype auto: fp16 where no bf16)
        weight_format_bits=weight_format_bits(catalog, *SIXTEEN_BIT)
        if wp is None and w.name in SIXTEEN_BIT
        else weight_format_bits(catalog, w.name),
        # the cache's dtype, bf16 refused where the GPU has none (T4); by default a 16-bit cache runs in either. An
        # fp8 cache likewise where the GPU has no fp8 format (T4: vLLM 0.24's attention backends below SM 8.0 keep
        # no fp8 cache, deploy.FP8_KV_SOURCE)
        kv_format_bits=(weight_format_bits(catalog, *SIXTEEN_BIT) if kp is None and kv.name in SIXTEEN_BIT else 0.0)
        or (weight_format_bits(catalog, kv.name) if kv.name in KV_DTYPES_CHECKED else 0.0),
    )
    out.update(kv_layout_extra_bytes_per_token_per_layer=kv_layout_extra_bytes(mdl, kv, engine))
    out.update(math_flags(w))
    return out


def kv_layout_extra_bytes(mdl: Model, kv: Precision, engine: EngineProfile | None) -> float:
    """Bytes per token per layer the engine's KV layout stores beyond values x bytes (``PrecisionFacts.
    kv_layout_extra_bytes_per_token_per_layer``): a DSA model's fp8 cache where the engine stores it as
    ``fp8_ds_mla`` (``EngineProfile.fp8_ds_mla_cache``: every vLLM release; the default engine, vLLM, when none is
    given), 656 B where 576 values x 1 B are counted: + 80 (``fp8_ds_mla_bytes_per_token``). SGLang, TensorRT-LLM and
    the 'ideal' engine: 0 (not read from their source). The workbook's Calc row "kvrec" is the same rule."""
    if engine is None:
        engine = engine_profile(None)
    if mdl.sparse_attention is None or mdl.mla is None or kv.name != "fp8" or not engine.fp8_ds_mla_cache:
        return 0.0
    values = mdl.mla.kv_lora_rank + mdl.mla.qk_rope_head_dim
    return float(fp8_ds_mla_bytes_per_token(mdl) - values * kv.bytes_per_element)


def _peak_for_weights(g: dict[str, np.ndarray], flags: dict[str, np.ndarray]) -> np.ndarray:
    """Per scenario: the GPU peak at the weight precision's math, falling back as ``gpu_peak_flop_per_s`` does."""
    if all(type(v) is float for v in [*g.values(), *flags.values()]):  # one scenario: plain Python
        for table in ("math", "fallback"):
            for key in PEAK_KEYS:
                if flags[f"{table}_{key}"] > 0:
                    for k in (key, _PEAK_TWINS.get(key)):
                        if k is not None and g.get(f"peak_{k}", math.nan) == g.get(f"peak_{k}", math.nan):
                            return g[f"peak_{k}"]
        base = g.get("peak_fp16", g.get("peak_bf16"))
        return base if base == base else g.get("peak_bf16", math.nan)
    chosen = np.full(np.broadcast_shapes(*(np.shape(v) for v in [*g.values(), *flags.values()])), np.nan)
    for table in ("math", "fallback"):
        for key in PEAK_KEYS:
            for k in (key, _PEAK_TWINS.get(key)):
                if k is None or f"peak_{k}" not in g:
                    continue
                take = (flags[f"{table}_{key}"] > 0) & np.isnan(chosen) & ~np.isnan(g[f"peak_{k}"])
                chosen = np.where(take, g[f"peak_{k}"], chosen)
    base = g.get("peak_fp16", g.get("peak_bf16"))
    return np.where(np.isnan(chosen), base, chosen)
