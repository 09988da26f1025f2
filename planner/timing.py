"""Public time and cost functions: ``decode_step`` (TPOT and its family), ``prefill`` (TTFT), ``cost_per_mtok``.

As in ``planner.api``: names are resolved, arguments checked and broadcast, the tensor-parallel group checked or
chosen (``planner.deploy``), then one function of ``planner.model`` runs over whole arrays. Every function takes
the GPU, the model and the context (or prompt tokens), then its options by keyword (``planner.options``); each
quantity of a record (``tpot``, ``throughput``, ``mfu`` ... ``ttft``) finishes only its own field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Unpack

import numpy as np

from planner import model as m
from planner.catalog import Catalog, as_catalog, no_rental_price
from planner.catalog.resolve import _resolve, gpu_numbers
from planner.checks import _pandas_index, _price, one_scenario
from planner.deploy import check_parallelism, deploy, finish, finish_record, nan_record, served_batch, sweep_options
from planner.engines.profiles import engine_profile
from planner.errors import InvalidInputError, MissingDataError, OutOfRangeError, PlannerError, shown_name
from planner.model import DecodeStep, MemoryPlan, PrefillStep
from planner.model.fleet import cloud_usd_per_gpu_month, replicas_for_rate
from planner.model.layouts import is_pipeline, pipeline_stages
from planner.model.rows import gathered
from planner.options import DecodeOptions, DeploymentOptions, Options, StepOptions

# -- decode ---------------------------------------------------------------------------------------------


def decode_step(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> DecodeStep:
    """One decode step of ``batch`` sequences at ``context`` tokens (``model.decode_step``): its time and what it moves.

    ``gpus=None``: the smallest valid group holding ``batch`` sequences; ``check_fit=False`` skips the memory test
    for a given group (time of a batch regardless of memory). Options: ``planner.options.DecodeOptions``.
    """
    return _decode_step(gpu, model, context, Options.read(DecodeOptions, options, decode_step))


def _decode_step(gpu: Any, model: Any, context: Any, options: Options, field: str | None = None) -> Any:
    """``decode_step``'s record, or only its ``field`` (the others are not finished)."""
    d = deploy(gpu, model, context, options)
    if d is None:
        record = nan_record(DecodeStep, gpu, model, context, options.batch)
        return record if field is None else getattr(record, field)
    f = d.facts
    if is_pipeline(d.parallelism):
        stages = pipeline_stages(d.parallelism, d.gpus_safe)
        step = m.pp_decode_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe, stages)
        return finish_record(
            step, d.bad, _pandas_index(gpu, model, context, options.batch, *sweep_options(options)), field
        )
    step = m.decode_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    if d.parallelism == "dp-ep":  # tp-ep: as tp (bytes split evenly)
        step = m.dp_decode_step(step, f.gpu, f.model, f.precision, f.limits, d.context)
    return finish_record(step, d.bad, _pandas_index(gpu, model, context, options.batch, *sweep_options(options)), field)


def tpot(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Time per output token of one sequence, in seconds (Excel's ``TPOT`` gives milliseconds): the decode step time
    of the whole batch.

    step = sum of the operator kernels + TP all-reduces + overhead (``planner.model.decode.decode_step``): each
    operator (dense GEMMs, the MoE experts the batch touches, attention over ``batch`` x KV at ``context``) takes
    floor + max(bytes / (GPUs x bandwidth x its measured fraction), FLOPs / (GPUs x peak x fraction)); overhead is
    the engine's per-step, per-layer and per-sequence cost. ``decode_step(...)`` gives the parts: ``kernels_s`` +
    ``communication_s`` + ``overhead_s`` = ``step_s``; its ``memory_time_s`` and ``compute_time_s`` are whole-step
    roofline references, not parts of the sum. Not the seed's (weights + KV) / bandwidth x 1/B: that is
    ``batch_token_time`` (= 1 / throughput).

    Without ``gpus``, each scenario runs on its own smallest group that holds ``batch`` sequences, so the group can
    change along a sweep (a larger batch may move to more GPUs and run faster): ``min_gpus`` with the same arguments,
    or ``decode_step(...).gpus``, gives the group of each. Options: ``planner.options.DecodeOptions``.
    """
    return _decode_step(gpu, model, context, Options.read(DecodeOptions, options, tpot), "step_s")


def throughput(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Steady-state decode output tokens per second of the whole group: batch / TPOT, every sequence decoding.

    Not a benchmark's "output throughput", which is a whole run's rate with the prefill included:
    ``planner.serving.benchmark.predict_benchmark(...).run_output_tokens_per_s``. Options: ``decode_step``.
    """
    return _decode_step(
        gpu, model, context, Options.read(DecodeOptions, options, throughput), "throughput_tokens_per_s"
    )


def batch_token_time(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Seconds per output token of the whole batch (TPOT / batch): the second seed's "x 1/B" figure."""
    return _decode_step(
        gpu, model, context, Options.read(DecodeOptions, options, batch_token_time), "batch_token_time_s"
    )


def mfu(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Model FLOPs utilization of a decode step: FLOPs / (step time x GPUs x peak). Batch 1 on H100: ~0.3%."""
    return _decode_step(gpu, model, context, Options.read(DecodeOptions, options, mfu), "mfu")


def mbu(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Memory bandwidth utilization of a decode step: bytes / (step time x GPUs x bandwidth)."""
    return _decode_step(gpu, model, context, Options.read(DecodeOptions, options, mbu), "mbu")


def decode_intensity(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> Any:
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV). About B at 16-bit, short context."""
    return _decode_step(
        gpu, model, context, Options.read(DecodeOptions, options, decode_intensity), "intensity_flop_per_byte"
    )


# -- prefill --------------------------------------------------------------------------------------------


def prefill(gpu: Any, model: Any, prompt_tokens: Any, **options: Unpack[StepOptions]) -> PrefillStep:
    """Prefill of ``batch`` prompts together (``model.prefill_step``): 2 x active params x tokens + causal attention,
    the output head on each prompt's last token only (where the engine computes logits).

    The weights are read once for the whole batch; every prompt's FLOPs and KV writes count. One prompt (the
    default) gives its TTFT, the one busy time of a prompt (all-reduces included). Options:
    ``planner.options.StepOptions`` (``check_fit=False``: a batch of prompts the group's memory does not hold at once
    is timed all the same).
    """
    return _prefill(gpu, model, prompt_tokens, Options.read(StepOptions, options, prefill))


def _prefill(gpu: Any, model: Any, prompt_tokens: Any, options: Options, field: str | None = None) -> Any:
    """``prefill``'s record, or only its ``field`` (the others are not finished)."""
    d = deploy(gpu, model, prompt_tokens, options, "prompt_tokens")
    if d is None:
        record = nan_record(PrefillStep, gpu, model, prompt_tokens)
        return record if field is None else getattr(record, field)
    f = d.facts
    if is_pipeline(d.parallelism):
        stages = pipeline_stages(d.parallelism, d.gpus_safe)
        step = m.pp_prefill_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe, stages)
    else:
        step = m.prefill_step(f.gpu, f.model, f.precision, f.limits, d.context, d.batch, d.gpus_safe)
    if d.parallelism == "dp-ep":
        step = m.dp_prefill_step(step, f.gpu, f.model, f.precision, f.limits, d.batch)
    step = PrefillStep(d.gpus, step.prompt_tokens, step.ttft_s, step.bytes_moved, step.flop)
    return finish_record(step, d.bad, _pandas_index(gpu, model, prompt_tokens, *sweep_options(options)), field)


def ttft(gpu: Any, model: Any, prompt_tokens: Any, **options: Unpack[DeploymentOptions]) -> Any:
    """Time to first token, in seconds (Excel's ``TTFT`` gives milliseconds): the prefill time, no queueing.

    With the default ``batch=1``, one prompt of ``prompt_tokens`` alone; ``batch=B`` is the time to first token of
    B such prompts prefilled together in one forward pass (every prompt's first token comes at its end), on the
    smallest group that holds B sequences unless ``gpus`` is given. Options: ``planner.options.DeploymentOptions``
    (``prefill``)."""
    return _prefill(gpu, model, prompt_tokens, Options.read(DeploymentOptions, options, ttft), "ttft_s")


def prompt_busy_s(gpu: Any, model: Any, prompt_tokens: Any, **options: Unpack[DeploymentOptions]) -> Any:
    """Group-seconds one prompt's prefill holds its replica: what a cost per token charges for prompt processing.

    Tensor parallelism (and "tp-ep"): the prompt's TTFT, the whole group busy with it alone. Data-parallel attention
    ("dp-ep") or a pipeline: each of the group's s streams (attention ranks, micro-batches;
    ``model.parallel.streams_of``) prefills its own prompt alongside the others, so one prompt holds 1/s of the
    prefill of s prompts (docs/model.md, "Data-parallel attention"). ``planner export`` and ``planner plan``'s cost
    with prompt processing both charge this; TTFT targets keep the one-prompt time (``ttft``). Options:
    ``planner.options.DeploymentOptions`` (``batch`` is set here: one prompt per stream)."""
    return _prompt_busy_s(gpu, model, prompt_tokens, Options.read(DeploymentOptions, options, prompt_busy_s))


def _prompt_busy_s(gpu: Any, model: Any, prompt_tokens: Any, options: Options) -> Any:
    """``prompt_busy_s`` on read options."""
    layout = check_parallelism(options.parallelism)
    if layout != "dp-ep" and not is_pipeline(layout):
        return _prefill(gpu, model, prompt_tokens, replace(options, batch=1), "ttft_s")
    gpus = options.gpus
    if gpus is None:  # the group the deployment picks for one prompt
        gpus = _prefill(gpu, model, prompt_tokens, replace(options, batch=1)).gpus
    group = np.asarray(gpus, dtype=float)
    side = np.asarray(m.streams_of(layout, np.where(np.isfinite(group), group, 1.0)), dtype=float) * np.ones_like(group)
    many = _prefill(gpu, model, prompt_tokens, replace(options, gpus=gpus, batch=side), "ttft_s")
    return many / side


def prefill_intensity(gpu: Any, model: Any, prompt_tokens: Any, **options: Unpack[DeploymentOptions]) -> Any:
    """Arithmetic intensity of a prefill, FLOP per byte. About the prompt length at 16-bit."""
    return _prefill(
        gpu,
        model,
        prompt_tokens,
        Options.read(DeploymentOptions, options, prefill_intensity),
        "intensity_flop_per_byte",
    )


# -- cost -----------------------------------------------------------------------------------------------


def gpu_price_per_hour(gpu: Any, *, catalog: Catalog | None = None) -> float:
    """The catalog's on-demand price per GPU-hour, or NaN when it has none."""
    return gpu_numbers(as_catalog(catalog).gpu(gpu))["price_usd_per_gpu_hour"]


#: What ``cost_per_mtok``'s figure is, one sentence for every surface that states it (``planner plan --json``'s basis,
#: PLANNER_WHY of COST_PER_MTOK): decode's alone at the batch, the GPUs 100% busy, not a budget rate (trial 30 F7:
#: $0.10 where the review's all-in rate for the same service was $1.56).
COST_PER_MTOK_BASIS = "decode only, at the batch, 100% busy; prompt processing not included"


def cost_per_mtok(
    gpu: Any, model: Any, context: Any, *, price_per_gpu_hour: Any = None, **options: Unpack[DecodeOptions]
):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6.

    ``price_per_gpu_hour`` defaults to the catalog's on-demand price for the GPU. Options:
    ``planner.options.DecodeOptions``.
    """
    o = Options.read(DecodeOptions, options, cost_per_mtok)
    step = _decode_step(gpu, model, context, o)
    if price_per_gpu_hour is None:
        r = _resolve(as_catalog(o.catalog), o.errors, gpu=gpu)
        price = r.gpu.price_usd_per_gpu_hour if r.gpu is not None else np.nan
        if o.errors == "raise" and np.any(np.isnan(gathered(price))):
            raise missing_price_error(gpu, np.isnan(gathered(price)), r.catalog)
    else:
        price = _price(price_per_gpu_hour, errors=o.errors)
    return finish(
        m.cost_per_million_tokens_usd(price, step.gpus, step.throughput_tokens_per_s),
        False,
        "coerce",
        _pandas_index(gpu, model, context, o.batch),
    )


def missing_price_error(gpu: Any, missing: Any, catalog: Catalog) -> MissingDataError:
    """The error for GPUs the catalog has no price for, naming them as given (the first few of a sweep), not the
    array."""
    names = np.broadcast_to(np.asarray(gpu, dtype=object), np.shape(missing))[np.asarray(missing, dtype=bool)]
    unique = list(
        dict.fromkeys(shown_name(g if isinstance(g, str) else catalog.gpu(g).name) for g in names.ravel().tolist())
    )
    listed = ", ".join(unique[:5]) + (f" and {len(unique) - 5:,} more" if len(unique) > 5 else "")
    bought = []  # a GPU whose only quote is a purchase: the words plan and catalog list give it (no_rental_price)
    for g in dict.fromkeys(names.ravel().tolist()[:1000]):
        try:
            entry = catalog.gpu(g)
        except PlannerError:
            continue
        if no_rental_price(entry):
            bought.append(f"{entry.name}: {no_rental_price(entry)}")
    extra = f" ({'; '.join(dict.fromkeys(bought[:3]))})" if bought else ""
    return MissingDataError(f"no price per GPU-hour in the catalog for {listed}; pass price_per_gpu_hour{extra}")


def _memory_plan(gpu: Any, model: Any, context: Any, options: Options) -> MemoryPlan:
    """``api.memory_plan``'s finished record (NaN where every lookup failed)."""
    d = deploy(gpu, model, context, options)
    if d is None:
        return nan_record(MemoryPlan, gpu, model, context)
    return finish_record(d.plan, d.bad, _pandas_index(gpu, model, context, *sweep_options(options)))


# -- the fleet for a peak -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PeakFleet:
    """The rented fleet that serves a peak request rate, every replica at its max batch (the what-if Levers)."""

    rate_per_replica_s: (
        float  # requests/s one replica takes: rate factor / (output tokens / throughput at max batch + prefill)
    )
    replicas: float  # max(1, ceil(peak rate / rate per replica)), no spare
    gpus: float  # replicas x GPUs in the group
    monthly_usd: float  # GPUs x $/GPU-hour x 730 h; NaN when no price is given and the catalog has none


def peak_fleet(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    peak_requests_per_s: float,
    output_tokens: int,
    price_per_gpu_hour: Any = None,
    rate_factor: float = 1.0,
    **options: Unpack[DeploymentOptions],
) -> PeakFleet:
    """The fleet that serves ``peak_requests_per_s`` requests of ``output_tokens`` each, one scalar question.

    rate per replica = rate factor / (output tokens / throughput at max batch + prefill of a ``context``-token prompt):
    each request's share of the decode steps plus its own prefill, which holds the replica alone (the whole context as
    prompt, as the what-if's TTFT row reads it), times ``rate_factor``, the queue term: the share of that no-queue
    rate a replica may take while its latency percentiles meet their targets. 1 (the default) is no queue; the
    what-if's Levers take it from planner's queue simulation (``planner.workbook.load_figures``: the simulated
    fleet's rate per replica over this no-queue rate, so the replicas equal the simulation's; below 1 where queueing
    costs, above 1 where this no-queue bound, with its whole-context prefill, is pessimistic); replicas = max(1, ceil(peak / rate per replica))
    (``planner.model.fleet.replicas_for_rate``, no spare); GPUs = replicas x the group ``memory_plan`` chose;
    monthly cost = GPUs x $/GPU-hour x 730 h (``fleet.cloud_usd_per_gpu_month``). Assumes every replica runs at
    its max batch (the cheapest per token: what memory holds, at most the engine's max_num_seqs,
    ``deploy.served_batch``), queueing only through ``rate_factor``; its TPOT there is the decode step at max batch, which the
    caller compares with a target. ``planner export`` and the what-if's Load sheet size a fleet on simulated
    percentiles under load instead.
    """
    one_scenario("peak_fleet", "loop over scenarios", gpu=gpu, model=model, context=context)
    if isinstance(peak_requests_per_s, bool) or not isinstance(peak_requests_per_s, (int, float)):
        raise InvalidInputError(f"peak_requests_per_s must be a number; got {peak_requests_per_s!r}")
    if isinstance(output_tokens, bool) or not isinstance(output_tokens, (int, float)):
        raise InvalidInputError(f"output_tokens must be a number; got {output_tokens!r}")
    if not peak_requests_per_s > 0:
        raise OutOfRangeError(f"peak_requests_per_s must be above 0; got {peak_requests_per_s!r}")
    if not output_tokens >= 1:
        raise OutOfRangeError(f"output_tokens must be 1 or more; got {output_tokens!r}")
    if isinstance(rate_factor, bool) or not isinstance(rate_factor, (int, float)):
        raise InvalidInputError(f"rate_factor must be a number; got {rate_factor!r}")
    if not 0 < rate_factor < math.inf:
        raise OutOfRangeError(f"rate_factor must be above 0 and finite (1: no queue); got {rate_factor!r}")
    o = Options.read(DeploymentOptions, options, peak_fleet)
    plan = _memory_plan(gpu, model, context, o)
    g = as_catalog(o.catalog).gpu(gpu)
    batch, _ = served_batch(
        int(plan.max_batch), engine_profile(o.engine), g, check_parallelism(o.parallelism), plan.gpus
    )
    step_options = {**options, "gpus": int(plan.gpus), "batch": batch}
    step = decode_step(gpu, model, context, **step_options)
    prefill_s = float(prefill(gpu, model, context, **{**options, "gpus": int(plan.gpus)}).ttft_s)
    rate = float(rate_factor) / float(m.request_group_time_s(output_tokens, step.throughput_tokens_per_s, prefill_s))
    replicas = float(replicas_for_rate(peak_requests_per_s, rate))
    gpus = replicas * int(plan.gpus)
    if price_per_gpu_hour is None:
        price = gpu_price_per_hour(gpu, catalog=options.get("catalog"))
    else:
        price = float(_price(price_per_gpu_hour))
    return PeakFleet(rate, replicas, gpus, float(cloud_usd_per_gpu_month(price)) * gpus)


# -- a decode step in parts -----------------------------------------------------------------------------


def _decode_breakdown(gpu: Any, model: Any, context: Any, options: Options) -> m.StepBreakdown:
    """``model.decode_step_breakdown`` of one scenario on read options (``planner plan --explain``): the same
    deployment ``_decode_step`` times, in parts: a tensor-parallel step (tp, tp-ep), a pipeline's
    (``model.pp_decode_step_breakdown``) or dp-ep's (``model.dp_decode_step_breakdown``)."""
    check_parallelism(options.parallelism)
    d = deploy(gpu, model, context, options)
    f = d.facts
    if d.parallelism == "dp-ep":
        return m.dp_decode_step_breakdown(
            f.gpu, f.model, f.precision, f.limits, _number(d.context), _number(d.batch), _number(d.gpus_safe)
        )
    if is_pipeline(d.parallelism):
        return m.pp_decode_step_breakdown(
            f.gpu, f.model, f.precision, f.limits, _number(d.context), _number(d.batch), _number(d.gpus_safe),
            _number(pipeline_stages(d.parallelism, d.gpus_safe)),
        )  # fmt: skip
    return m.decode_step_breakdown(
        f.gpu, f.model, f.precision, f.limits, _number(d.context), _number(d.batch), _number(d.gpus_safe)
    )


def _number(x: Any) -> float:
    """One scenario's value as a Python float."""
    return float(gathered(x)) if not isinstance(x, float) else x
