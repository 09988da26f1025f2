"""Public time and cost functions: ``decode_step`` (TPOT and its family), ``prefill`` (TTFT), ``cost_per_mtok``.

As in ``planner.api``: names are resolved, arguments checked and broadcast, the tensor-parallel group checked or
chosen (``planner.deploy``), then one function of ``planner.model`` runs over whole arrays. Every function takes
the required arguments (GPU, model, context or prompt tokens) and keyword-only options with the same names and
defaults everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planner import model as m
from planner.catalog import Catalog, default_catalog
from planner.deploy import deploy, finish, finish_record, nan_record
from planner.engines import EngineProfile
from planner.errors import MissingDataError
from planner.model import DecodeStep, PrefillStep
from planner.resolve import Errors, _nonnegative, _pandas_index, _resolve, gpu_numbers

Engine = str | EngineProfile | None

# -- decode ---------------------------------------------------------------------------------------------


def decode_step(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
) -> DecodeStep:
    """One decode step of ``batch`` sequences at ``context`` tokens (``model.decode_step``): its time and what it moves.

    ``gpus=None``: the smallest valid group holding ``batch`` sequences; ``check_fit=False`` skips the memory test
    for a given group (time of a batch regardless of memory).
    """
    d = deploy(
        gpu,
        model,
        context,
        kv_precision=kv_precision,
        gpus=gpus,
        weight_precision=weight_precision,
        memory_utilization=memory_utilization,
        batch=batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
        check_fit=check_fit,
    )
    if d is None:
        return nan_record(DecodeStep, gpu, model, context, batch)
    f = d.facts
    step = m.decode_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    return finish_record(step, d.bad, _pandas_index(gpu, model, context, batch))


def tpot(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Time per output token of one sequence, in seconds: the decode step time of the whole batch.

    step = max(bytes / achieved bandwidth, FLOPs / achieved peak) + TP all-reduces + overhead, with bytes =
    weights read (MoE: experts the batch touches) + batch x KV at ``context``. Not the seed's
    (weights + KV) / bandwidth x 1/B: that is ``batch_token_time`` (= 1 / throughput).
    """
    return decode_step(**locals()).step_s


def throughput(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Steady-state decode output tokens per second of the whole group: batch / TPOT, every sequence decoding.

    Not a benchmark's "output throughput", which is a whole run's rate with the prefill included:
    ``planner.benchmark.predict_benchmark(...).output_tokens_per_s``.
    """
    return decode_step(**locals()).throughput_tokens_per_s


def batch_token_time(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Seconds per output token of the whole batch (TPOT / batch): the second seed's "x 1/B" figure."""
    return decode_step(**locals()).batch_token_time_s


def mfu(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Model FLOPs utilization of a decode step: FLOPs / (step time x GPUs x peak). Batch 1 on H100: ~0.3%."""
    return decode_step(**locals()).mfu


def mbu(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Memory bandwidth utilization of a decode step: bytes / (step time x GPUs x bandwidth)."""
    return decode_step(**locals()).mbu


def decode_intensity(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV). About B at 16-bit, short context."""
    return decode_step(**locals()).intensity_flop_per_byte


# -- prefill --------------------------------------------------------------------------------------------


def prefill(
    gpu: Any,
    model: Any,
    prompt_tokens: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
) -> PrefillStep:
    """Prefill of ``batch`` prompts together (``model.prefill_step``): 2 x active params x tokens + causal attention.

    The weights are read once for the whole batch; every prompt's FLOPs and KV writes count. One prompt (the
    default) gives its TTFT, the one busy time of a prompt (all-reduces included).
    """
    d = deploy(
        gpu,
        model,
        prompt_tokens,
        kv_precision=kv_precision,
        gpus=gpus,
        weight_precision=weight_precision,
        memory_utilization=memory_utilization,
        batch=batch,
        engine=engine,
        reserve_bytes=reserve_bytes,
        catalog=catalog,
        errors=errors,
        calibration=calibration,
    )
    if d is None:
        return nan_record(PrefillStep, gpu, model, prompt_tokens)
    f = d.facts
    step = m.prefill_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    step = PrefillStep(d.gpus, step.prompt_tokens, step.ttft_s, step.bytes_moved, step.flop)
    return finish_record(step, d.bad, _pandas_index(gpu, model, prompt_tokens))


def ttft(
    gpu: Any,
    model: Any,
    prompt_tokens: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Time to first token of one prompt, in seconds: the prefill time (no queueing)."""
    return prefill(**locals()).ttft_s


def prefill_intensity(
    gpu: Any,
    model: Any,
    prompt_tokens: Any,
    *,
    batch: Any = 1,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """Arithmetic intensity of a prefill, FLOP per byte. About the prompt length at 16-bit."""
    return prefill(**locals()).intensity_flop_per_byte


# -- cost -----------------------------------------------------------------------------------------------


def gpu_price_per_hour(gpu: Any, *, catalog: Catalog | None = None) -> float:
    """The catalog's on-demand price per GPU-hour, or NaN when it has none."""
    return gpu_numbers((catalog or default_catalog()).gpu(gpu))["price_usd_per_gpu_hour"]


def cost_per_mtok(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = 1,
    price_per_gpu_hour: Any = None,
    kv_precision: Any = None,
    gpus: Any = None,
    weight_precision: Any = None,
    memory_utilization: Any = None,
    engine: Engine = None,
    reserve_bytes: Any = None,
    check_fit: bool = True,
    catalog: Catalog | None = None,
    errors: Errors = "raise",
    calibration: Any = None,
):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6.

    ``price_per_gpu_hour`` defaults to the catalog's on-demand price for the GPU.
    """
    options = dict(locals())
    del options["price_per_gpu_hour"]
    step = decode_step(**options)
    if price_per_gpu_hour is None:
        r = _resolve(catalog or default_catalog(), errors, gpu=gpu)
        price = r.gpu.price_usd_per_gpu_hour if r.gpu is not None else np.nan
        if errors == "raise" and np.any(np.isnan(price)):
            raise MissingDataError(f"no price per GPU-hour in the catalog for {gpu!r}; pass price_per_gpu_hour")
    else:
        price = _nonnegative(price_per_gpu_hour, "price_per_gpu_hour")
    return finish(
        m.cost_per_million_tokens_usd(price, step.gpus, step.throughput_tokens_per_s),
        False,
        "coerce",
        _pandas_index(gpu, model, context, batch),
    )
