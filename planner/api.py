"""Public capacity functions over catalog names: ``ridge``, ``kv_bytes``, ``max_batch``, ``tpot`` and their family.

Each function takes GPU, model and precision names (or catalog entries) and numbers; any of them may be a
scalar, a numpy array or a pandas Series, and arrays broadcast. This module only resolves names
(``planner.catalog.resolve``), checks and broadcasts arguments (``planner.deploy``) and shapes results; every formula
is a function of ``planner.model`` (docs/model.md lists them).

``errors="raise"`` (default) raises a ``PlannerError`` for the first bad scenario; ``errors="coerce"``
returns NaN for each scenario that raises, so a spreadsheet column can show an error per cell.
"""

from __future__ import annotations

from typing import Any, Unpack

import numpy as np

from planner import model as m
from planner.catalog import Catalog, as_catalog
from planner.catalog.lookup import lookup
from planner.catalog.resolve import (  # noqa: F401  (re-exported: the workbook writer and export use these)
    PEAK_KEYS,
    _peak_for_weights,
    _resolve,
    default_kv_precision,
    engine_vendor_refused,  # noqa: F401  (re-exported for export's checks)
    gpu_numbers,
    gpu_peak_flop_per_s,
    math_flags,
)
from planner.checks import (
    Errors,
    _count_or_mask,
    _pandas_index,
    check_errors,
    check_series_aligned,
    is_shape_mismatch,
    shape_error,
)
from planner.deploy import (  # noqa: F401  (re-exported: export, workbook and tests use these names here)
    GPU_GROUPS,
    LARGEST_GROUP_TRIED,
    MAX_BATCH_INPUT,
    MAX_CONTEXT_TOKENS,
    MAX_GPUS,
    all_failed,
    block_checkpoint_note,
    check_parallelism,
    check_release,
    deploy,
    engine_sequence_limit,
    finish,
    finish_record,
    fp8_kv_note,
    groups_to_try,
    layout_error,
    layout_kept,
    layouts_to_size,
    memory_utilization_in_effect,
    nan_record,
    next_tp_size,
    not_modelled_words,
    release_cannot_run,
    scale_up_gpus,
    served_batch,
    slow_end_open,
    spans_nodes_warning,
    sweep_options,
    tp_size_error,
    trained_context_warning,
    uneven_experts,
    untested_architecture_note,
    valid_tp_sizes,
    vendor_error,
    weight_bytes_per_gpu,
)
from planner.model import MemoryPlan
from planner.options import BatchOptions, DeploymentOptions, GroupOptions, Options

# -- catalog quantities ---------------------------------------------------------------------------------


def ridge(gpu: Any, *, precision: Any = "bf16", catalog: Catalog | None = None, errors: Errors = "raise"):
    """Ridge point in FLOP/B: the GPU's dense peak at ``precision``'s math / HBM bandwidth.

    H100 SXM at bf16: 989.4e12 / 3.35e12 = 295.3 FLOP/B. Below it a kernel is memory-bound.
    """
    errors = check_errors(errors)
    check_series_aligned(gpu=gpu, precision=precision)
    cat = as_catalog(catalog)
    r = _resolve(cat, errors, gpu=gpu)
    prec = lookup("bf16" if precision is None else precision, cat.precision, math_flags, errors)
    if r.gpu is None or not prec.values:
        return all_failed(r.first_error or prec.first_error, errors, gpu, precision)
    peak = _peak_for_weights(r.gpu_columns.values, prec.values)
    return finish(
        m.ridge_flop_per_byte(peak, r.gpu.bandwidth_bytes_per_s),
        np.logical_or(r.bad, prec.bad),
        errors,
        _pandas_index(gpu, precision),
    )


def weight_bytes(model: Any, *, precision: Any = None, catalog: Catalog | None = None, errors: Errors = "raise"):
    """Bytes of all weights at ``precision`` (default: as published; gpt-oss keeps its experts in MXFP4).

    Llama 2 70B at fp16: 68,976,648,192 params x 2 B = 137,953,296,384 B.
    """
    errors = check_errors(errors)
    check_series_aligned(model=model, precision=precision)
    r = _resolve(as_catalog(catalog), errors, model=model, weight_precision=precision)
    if r.model is None:
        return all_failed(r.first_error, errors, model, precision)
    return finish(m.weight_bytes(r.model, r.precision), r.bad, errors, _pandas_index(model, precision))


def kv_bytes(
    model: Any,
    tokens: Any,
    *,
    kv_precision: Any = None,
    batch: Any = 1,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
):
    """KV cache bytes of ``batch`` sequences of ``tokens`` tokens (default precision: the activation dtype).

    2 x layers x KV heads x head dim x bytes per token (MLA: layers x (kv_lora_rank + rope dim) x bytes);
    sliding-window layers hold at most their window. Llama 2 70B, 8,192 tokens, fp16: 2,684,354,560 B.
    """
    errors = check_errors(errors)
    named = dict(model=model, tokens=tokens, kv_precision=kv_precision, batch=batch)
    check_series_aligned(**named)
    tokens_arr, bad_tokens = _count_or_mask(tokens, "tokens", MAX_CONTEXT_TOKENS, " of tokens", errors, tokens=True)
    batch_arr, bad_batch = _count_or_mask(batch, "batch", MAX_BATCH_INPUT, " of sequences", errors)
    r = _resolve(as_catalog(catalog), errors, model=model, kv_precision=kv_precision)
    if r.model is None:
        return all_failed(r.first_error, errors, model, tokens, kv_precision, batch)
    try:
        kv = m.kv_bytes(r.model, r.precision, tokens_arr, batch_arr)
    except ValueError as exc:
        if is_shape_mismatch(exc):
            raise shape_error(named) from None
        raise
    return finish(
        kv, np.asarray(r.bad) | bad_tokens | bad_batch, errors, _pandas_index(model, tokens, kv_precision, batch)
    )


def kv_bytes_per_token(
    model: Any, *, kv_precision: Any = None, catalog: Catalog | None = None, errors: Errors = "raise"
):
    """KV bytes one token adds while the context is shorter than any sliding window (all layers cache it)."""
    return kv_bytes(model, 1, kv_precision=kv_precision, batch=1, catalog=catalog, errors=errors)


# -- memory ---------------------------------------------------------------------------------------------


def memory_plan(gpu: Any, model: Any, context: Any, **options: Unpack[DeploymentOptions]) -> MemoryPlan:
    """All memory quantities of a deployment (``model.memory_plan``); ``gpus=None`` picks the smallest valid group
    holding ``batch`` sequences. Options: ``planner.options.DeploymentOptions``."""
    return _memory_plan(gpu, model, context, Options.read(DeploymentOptions, options, memory_plan))


def max_batch(gpu: Any, model: Any, context: Any, **options: Unpack[GroupOptions]):
    """Sequences of ``context`` tokens that fit at once: floor(KV budget / KV bytes per sequence).

    KV budget = GPUs x (visible memory x utilization - reserve) - weights (engine ``"vllm"`` by default;
    ``engine="ideal"``, ``memory_utilization=1`` gives the seeds' free HBM / KV per sequence). Without
    ``gpus``, the smallest valid group of 1, 2, 4, 8 (... 64) GPUs that holds the weights and one sequence, chosen
    for each scenario of a sweep on its own: a longer context can move to a larger group and hold more. Give
    ``gpus`` to compare on one group; ``min_gpus`` with the same arguments (or ``memory_plan(...).gpus``) gives the
    group of each. Options: ``planner.options.GroupOptions``.
    """
    o = Options.read(GroupOptions, options, max_batch)
    d = deploy(gpu, model, context, o)
    if d is None:
        return all_failed(None, o.errors, gpu, model, context, o.kv_precision, o.gpus)
    index = _pandas_index(gpu, model, context, o.kv_precision, o.gpus, *sweep_options(o))
    return finish(d.plan.max_batch, d.bad, o.errors, index, integer=True)


def min_gpus(gpu: Any, model: Any, context: Any, **options: Unpack[BatchOptions]):
    """Smallest valid tensor-parallel group (1, 2, 4, 8, ... 64) holding the weights and ``batch`` sequences.
    Options: ``planner.options.BatchOptions``."""
    o = Options.read(BatchOptions, options, min_gpus)
    g = _memory_plan(gpu, model, context, o).gpus
    if o.errors == "raise":
        return int(g) if np.ndim(g) == 0 else g.astype("int64")
    return g


from planner.timing import (  # noqa: E402  (the time functions, re-exported: one public module)
    COST_PER_MTOK_BASIS,
    _memory_plan,
    batch_token_time,
    cost_per_mtok,
    decode_intensity,
    decode_step,
    gpu_price_per_hour,
    mbu,
    mfu,
    peak_fleet,
    prefill,
    prefill_intensity,
    prompt_busy_s,
    throughput,
    tpot,
    ttft,
)

__all__ = [
    "COST_PER_MTOK_BASIS",
    "GPU_GROUPS",
    "LARGEST_GROUP_TRIED",
    "MAX_BATCH_INPUT",
    "MAX_CONTEXT_TOKENS",
    "MAX_GPUS",
    "batch_token_time",
    "cost_per_mtok",
    "decode_intensity",
    "decode_step",
    "default_kv_precision",
    "gpu_numbers",
    "gpu_peak_flop_per_s",
    "gpu_price_per_hour",
    "groups_to_try",
    "kv_bytes",
    "kv_bytes_per_token",
    "layout_kept",
    "layouts_to_size",
    "max_batch",
    "mbu",
    "memory_plan",
    "mfu",
    "min_gpus",
    "peak_fleet",
    "prefill",
    "prefill_intensity",
    "prompt_busy_s",
    "ridge",
    "throughput",
    "tp_size_error",
    "tpot",
    "fp8_kv_note",
    "block_checkpoint_note",
    "untested_architecture_note",
    "scale_up_gpus",
    "vendor_error",
    "engine_vendor_refused",
    "release_cannot_run",
    "uneven_experts",
    "trained_context_warning",
    "ttft",
    "next_tp_size",
    "valid_tp_sizes",
    "weight_bytes",
]
