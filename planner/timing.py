"""Public time and cost functions: ``decode_step`` (TPOT and its family), ``prefill`` (TTFT), ``cost_per_mtok``.

As in ``planner.api``: names are resolved, arguments checked and broadcast, the tensor-parallel group checked or
chosen (``planner.deploy``), then one function of ``planner.model`` runs over whole arrays. ``decode_step`` and
``prefill`` spell out the required arguments (GPU, model, context or prompt tokens) and the keyword-only options
(the same names and defaults as everywhere: ``planner.deploy.Options``); each quantity of their records
(``tpot``, ``throughput``, ``mfu`` ... ``ttft``) is a function with exactly that signature (``_quantity``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ParamSpec

import numpy as np

from planner import model as m
from planner.catalog import Catalog, default_catalog
from planner.catalog.resolve import _resolve, gpu_numbers
from planner.checks import Errors, _nonnegative, _pandas_index
from planner.deploy import Options, deploy, finish, finish_record, nan_record
from planner.engines.profiles import EngineProfile
from planner.errors import MissingDataError
from planner.model import DecodeStep, PrefillStep

Engine = str | EngineProfile | None
P = ParamSpec("P")


def _quantity(
    step: Callable[P, Any], record_step: Callable[..., Any], field: str, name: str, doc: str
) -> Callable[P, Any]:
    """The public function ``name``: field ``field`` of ``step``'s record, with ``step``'s signature.

    ``inspect.signature`` and ``help`` show ``step``'s explicit keyword-only parameters, type checkers see them
    through the ParamSpec, and ``step`` checks every call. A call in the usual form (the three required arguments
    by position, options by name) goes to ``record_step`` (gpu, model, tokens, Options, field), which finishes
    only ``field``.
    """
    signature = inspect.signature(step)
    options = {p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY}

    def quantity(*args: P.args, **kwargs: P.kwargs) -> Any:
        if len(args) == 3 and kwargs.keys() <= options:
            return record_step(*args, Options(**kwargs), field)
        return getattr(step(*args, **kwargs), field)

    quantity.__name__ = quantity.__qualname__ = name
    quantity.__doc__ = doc
    quantity.__signature__ = signature.replace(return_annotation=inspect.Signature.empty)  # type: ignore[attr-defined]
    return quantity


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
    parallelism: Any = None,
) -> DecodeStep:
    """One decode step of ``batch`` sequences at ``context`` tokens (``model.decode_step``): its time and what it moves.

    ``gpus=None``: the smallest valid group holding ``batch`` sequences; ``check_fit=False`` skips the memory test
    for a given group (time of a batch regardless of memory).
    """
    return _decode_step(gpu, model, context, Options.pick(locals()))


def _decode_step(gpu: Any, model: Any, context: Any, options: Options, field: str | None = None) -> Any:
    """``decode_step``'s record, or only its ``field`` (the others are not finished)."""
    d = deploy(gpu, model, context, options)
    if d is None:
        record = nan_record(DecodeStep, gpu, model, context, options.batch)
        return record if field is None else getattr(record, field)
    f = d.facts
    step_of = m.dp_decode_step if d.parallelism == "dp-ep" else m.decode_step  # tp-ep: as tp (bytes split evenly)
    step = step_of(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    return finish_record(step, d.bad, _pandas_index(gpu, model, context, options.batch), field)


tpot = _quantity(
    decode_step,
    _decode_step,
    "step_s",
    "tpot",
    """Time per output token of one sequence, in seconds: the decode step time of the whole batch.

    step = max(memory, compute) + (1 - roofline_overlap) x min(memory, compute) + TP all-reduces + overhead, with
    memory = bytes / achieved bandwidth, compute = FLOPs / achieved peak, bytes =
    weights read (MoE: experts the batch touches) + batch x KV at ``context``. Not the seed's
    (weights + KV) / bandwidth x 1/B: that is ``batch_token_time`` (= 1 / throughput). Options: ``decode_step``.
    """,
)
throughput = _quantity(
    decode_step,
    _decode_step,
    "throughput_tokens_per_s",
    "throughput",
    """Steady-state decode output tokens per second of the whole group: batch / TPOT, every sequence decoding.

    Not a benchmark's "output throughput", which is a whole run's rate with the prefill included:
    ``planner.serving.benchmark.predict_benchmark(...).run_output_tokens_per_s``. Options: ``decode_step``.
    """,
)
batch_token_time = _quantity(
    decode_step,
    _decode_step,
    "batch_token_time_s",
    "batch_token_time",
    """Seconds per output token of the whole batch (TPOT / batch): the second seed's "x 1/B" figure.""",
)
mfu = _quantity(
    decode_step,
    _decode_step,
    "mfu",
    "mfu",
    """Model FLOPs utilization of a decode step: FLOPs / (step time x GPUs x peak). Batch 1 on H100: ~0.3%.""",
)
mbu = _quantity(
    decode_step,
    _decode_step,
    "mbu",
    "mbu",
    """Memory bandwidth utilization of a decode step: bytes / (step time x GPUs x bandwidth).""",
)
decode_intensity = _quantity(
    decode_step,
    _decode_step,
    "intensity_flop_per_byte",
    "decode_intensity",
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV). About B at 16-bit, short context.""",
)


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
    parallelism: Any = None,
) -> PrefillStep:
    """Prefill of ``batch`` prompts together (``model.prefill_step``): 2 x active params x tokens + causal attention.

    The weights are read once for the whole batch; every prompt's FLOPs and KV writes count. One prompt (the
    default) gives its TTFT, the one busy time of a prompt (all-reduces included).
    """
    return _prefill(gpu, model, prompt_tokens, Options.pick(locals()))


def _prefill(gpu: Any, model: Any, prompt_tokens: Any, options: Options, field: str | None = None) -> Any:
    """``prefill``'s record, or only its ``field`` (the others are not finished)."""
    d = deploy(gpu, model, prompt_tokens, options)
    if d is None:
        record = nan_record(PrefillStep, gpu, model, prompt_tokens)
        return record if field is None else getattr(record, field)
    f = d.facts
    step_of = m.dp_prefill_step if d.parallelism == "dp-ep" else m.prefill_step
    step = step_of(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    step = PrefillStep(d.gpus, step.prompt_tokens, step.ttft_s, step.bytes_moved, step.flop)
    return finish_record(step, d.bad, _pandas_index(gpu, model, prompt_tokens), field)


ttft = _quantity(
    prefill,
    _prefill,
    "ttft_s",
    "ttft",
    """Time to first token of one prompt, in seconds: the prefill time (no queueing). Options: ``prefill``.""",
)
prefill_intensity = _quantity(
    prefill,
    _prefill,
    "intensity_flop_per_byte",
    "prefill_intensity",
    """Arithmetic intensity of a prefill, FLOP per byte. About the prompt length at 16-bit.""",
)


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
    parallelism: Any = None,
):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6.

    ``price_per_gpu_hour`` defaults to the catalog's on-demand price for the GPU.
    """
    step = _decode_step(gpu, model, context, Options.pick(locals()))
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
