"""``planner plan``: one deployment, explained line by line."""

from __future__ import annotations

import functools
import json
import math
import textwrap
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from pathlib import Path

import click
import numpy as np

from planner.accuracy.calibration import resolve_calibration
from planner.accuracy.loaded_ranges import (
    BURST,
    STEADY,
    LoadedRange,
    load_loaded_ranges,
    loaded_run_coverage,
    quantity_for,
    ttft_borrowed_text,
    uncovered_texts,
)
from planner.accuracy.published import looks_like_json_lines, read_csv_rows, read_json_lines_rows
from planner.accuracy.ranges import range_table_words
from planner.accuracy.same_deployment import Deployment
from planner.api import groups_to_try, layout_kept, weight_bytes, weight_bytes_per_gpu
from planner.catalog import Model, no_rental_price
from planner.catalog.resolve import experts_words, weights_phrase
from planner.cli.lengths import LENGTHS_HELP, lengths_as_dict, lengths_line, plan_lengths, slot_percentile
from planner.cli.options import (
    ENGINE_HELP,
    Number,
    Seconds,
    TokenCount,
    Whole,
    catalog_option,
    engine_name,
    layout_name,
    load,
)
from planner.cli.terminal import echo
from planner.engines.architecture import model_facts, state_bytes_per_sequence, vllm_kv_layer_slots
from planner.engines.vllm_log import concurrency_note, logs_vllm_lines, vllm_kv_log
from planner.errors import InvalidInputError, PlannerError
from planner.export.money_tables import MARGIN_SETS_FLEET
from planner.export.not_sized import MARGIN_NOT_SIZED
from planner.export.ownership import option_money
from planner.export.scenario import (
    BARE_TPOT_MAX_S,
    BARE_TTFT_MAX_S,
    BUILTIN_DEFAULTS,
    MAX_REQUESTS_PER_S,
    Option,
    choices_text,
    reported_percentile,
)
from planner.export.sizing import margin_target, range_margin, rate_from_concurrency
from planner.model.breakdown import LABELS as STEP_LABELS
from planner.model.fleet import HOURS_PER_MONTH
from planner.model.layouts import is_pipeline, pipeline_stages
from planner.model.memory import cached_tokens_per_layer_sum, padded_kv_layer_tokens
from planner.options import SPECULATION_OPTIONS, option_doc
from planner.report import (
    EngineDifference,
    Plan,
    engine_release_words,
    kv_replication_words,
    limit_words,
    plan,
    replica_of,
)
from planner.serving.fleet import (
    HEADROOM_STEP,
    IN_FLIGHT_TOLERANCE,
    LOAD_CURVE,
    NO_TPOT_WITH_ONE_TOKEN,
    ROUTINGS,
    BindingTarget,
    FleetCheck,
    GroupChoice,
    GroupTried,
    SamplingSpread,
    Sizing,
    binding_target,
    capacity_per_s,
    check_fleet,
    draws_edge,
    fewest_gpus,
    fewest_replicas,
    in_flight_rate,
    near_ttft_floor,
    one_output_token,
    past_capacity,
    poisson_minutes_past,
    replica_burstiness,
    replica_run,
    sequences_memory_holds,
    within_targets,
)
from planner.serving.length_options import (
    check_high_lengths,
    check_length_percentile,
    length_percentile_of,
    sized_lengths,
)
from planner.serving.load import (
    CAPACITY_WINDOW_S,
    CLIENT_COMMANDS,
    DATASETS,
    DEFAULT_REQUESTS,
    MAX_PROMPTS,
    MOONCAKE_BLOCK_TOKENS,
    OUTLIER_GAP_FACTOR,
    PERCENTILES,
    DatasetLoad,
    LengthMixture,
    LongTailError,
    NoPublishedLengthError,
    TraceLoad,
    active_rate_per_s,
    cut_to_context,
    dataset_load,
    dataset_statistics,
    fixed_length_tokens,
    fixed_lengths,
    length_fit,
    lognormal_ratio_bound,
    resampled_lengths,
    sizing_requests,
    spread_fit_note,
    trace_load,
)
from planner.serving.load import run_setup as serving_run_setup
from planner.serving.speculative import NAMED_METHODS, served_model, speculation_for
from planner.units import (
    MAX_RENT_USD_PER_GPU_HOUR,
    RENT_ACCEPTED,
    GiB,
    counted,
    fixed_half_up,
    fmt_bytes,
    fmt_gb,
    fmt_percent,
    fmt_rate,
    fmt_seconds,
    fmt_usd,
    fmt_usd_per_gpu_hour,
    gpu_memory_words,
)

#: How each layout reads after the GPU count ("" for plain tensor parallelism).
LAYOUT_WORDS = {
    "tp": "",
    "tp-ep": ", experts spread whole (expert parallel)",
    "dp-ep": ", data-parallel attention + expert parallel",
}


def _split(parallelism: str, gpus: int) -> tuple[int, int]:
    """(pipeline stages, GPUs per stage) of a layout on ``gpus``: (1, all of them) unless it is a pipeline."""
    stages = int(pipeline_stages(parallelism, gpus))  # 1 for a layout that is no pipeline
    return stages, gpus // stages


#: Why a recorded request longer than --context is refused where a drawn one is cut (``context_cut_note``)
RECORDED_NOT_CUT = "recorded requests are the traffic as sent, refused whole; drawn lengths are cut to --context"


def _check_longest(who: str, longest_tokens: int, context: int) -> None:
    """Refuse traffic (``who``: "--dataset sharegpt sends") whose longest request holds more than ``context`` tokens."""
    if longest_tokens > context:
        raise InvalidInputError(
            f"{who} requests of up to {longest_tokens:,} tokens (prompt + output), more than --context {context:,}; "
            f"give --context {longest_tokens:,} or more ({RECORDED_NOT_CUT})"
        )


def _streams(p) -> tuple[str, int] | None:
    """The streams a replica's requests are split over, each taking one request in n: ("its pipeline's n micro-batch
    streams", n), ("its n attention ranks", n), or None for one stream (``planner.model.parallel.streams_of``)."""
    if is_pipeline(p.parallelism) and _stages(p)[0] > 1:
        n = _stages(p)[0]
        return f"its pipeline's {n:,} micro-batch streams", n
    if p.parallelism == "dp-ep" and p.gpus > 1:
        return f"its {p.gpus:,} attention ranks", p.gpus
    return None


def _prefill_share_words(p) -> str:
    """How the cost with prompt processing charges a prefill where a replica's streams each prefill their own prompt
    (``planner.timing.prompt_busy_s``, as ``planner export`` charges it; trial 33 F2), "" for one stream."""
    split = _streams(p)
    if split is None:
        return ""
    words, n = split
    return (
        f" (1/{n:,} of the {fmt_seconds(p.request_prompt_busy_s * n)} prefill of {n:,} prompts, one on each of "
        f"{words}, as planner export charges it: {fmt_seconds(p.request_prompt_busy_s)} a prompt)"
    )


def _streams_words(p, requests: int = DEFAULT_REQUESTS) -> str:
    """How many requests the simulation sends: ``requests`` (1,000; drawn lengths at p99: 5,000, ``sizing_requests``)
    a replica, or as many on each of its streams (``latency_under_load(requests_per_rank=True)``)."""
    split = _streams(p)
    if split is None:
        return f"{requests:,} requests a replica"
    what, n = split
    return f"{requests:,} requests on each of {what}, each taking one request in {n:,}"


def _split_words(p) -> str:
    """A trace's split over the replica's streams, each taking one request in n ("" for one)."""
    split = _streams(p)
    return "" if split is None else f", each of {split[0]} taking one request in {split[1]:,}"


def _low_words(low: float, floor_s: float) -> str:
    """A range's low end; where the roofline floor clamps it, said so."""
    return f"{fmt_seconds(low)}, the datasheet roofline floor," if floor_s > 0 and low <= floor_s else fmt_seconds(low)


def _range_words(p: Plan, low: float, floor_s: float, high: float) -> str:
    """ "range LOW to HIGH"; where the slow end is open (``Plan.slow_end_open``: the group spans nodes, slower than
    modelled by an amount no held-out run measures, trial 31 F7), "range LOW to more than HIGH: why"."""
    high_words = f"more than {fmt_seconds(high)}: {p.slow_end_open}" if p.slow_end_open else fmt_seconds(high)
    return f"range {_low_words(low, floor_s)} to {high_words}"


#: The engines with no held-out run of the dp-ep layout (trial 16, F2): every attention-DP run ``planner validate``
#: checks is TensorRT-LLM's ("DEP", README "Layouts"); sgl-cookbook's expert- or attention-data-parallel rows were
#: left out (catalogs/reference/README.md), and dstack's SGLang 0.4.3 runs are read as TP 8 (docs/history.md s180).
NO_DP_EP_RUNS = {"vllm": "vLLM", "sglang": "SGLang"}
#: What a plan says of an MLA model's TTFT range (trial 16, F6): the prediction ranges' dimensions are the GPU, group,
#: engine, MoE or dense and size (``planner.accuracy.ranges.DIMENSIONS``), no attention kind; only the Budget
#: review's TPOT margin keeps MLA apart (``serving_margin.margin_class``).
MLA_TTFT_RANGE = (
    "not per attention kind: MLA models' held-out TTFT figures are pooled with the GQA models' (no range of their "
    "own; the Budget review's TPOT margin keeps MLA apart)"
)


def _ranges_not_kept_apart(p: Plan) -> list[tuple[str, str]]:
    """The rows saying what the time ranges are not specific to (trial 16, F2 and F6): a dp-ep plan on an engine
    with no held-out run of that layout, and an MLA model's TTFT. Stated, not fitted."""
    from planner.accuracy.serving_margin import engine_name

    rows = []
    engine = NO_DP_EP_RUNS.get(engine_name(p.engine))
    if p.parallelism == "dp-ep" and engine:
        rows.append(
            (
                "Time ranges' layout",
                f"no held-out {engine} run of dp-ep exists (only TensorRT-LLM's DEP runs are checked): these ranges "
                "come from other layouts' runs, mostly tensor-parallel",
            )
        )
    if p.model.mla is not None:
        rows.append(("TTFT range", MLA_TTFT_RANGE))
    return rows


def _padded_sequence_words(p: Plan) -> str:
    """Where vLLM's hybrid KV cache pads a sequence (sliding-window layers in equal groups, the last padded, one more
    block per sliding group: ``planner.model.memory.padded_kv_layer_tokens``) to more than 0.5% above the layers
    alone: what it adds and KV_BYTES' figure (``kv_bytes``, the layers alone, KV heads replicated as the group does);
    "" elsewhere."""
    if not p.engine.kv_group_padding or p.model.linear_attention is not None or p.model.mamba is not None:
        return ""
    facts = model_facts(p.model)
    padded = float(padded_kv_layer_tokens(facts, float(p.context), p.engine.block_size))
    alone = float(cached_tokens_per_layer_sum(facts, float(p.context)))
    seq = float(p.memory.kv_bytes_per_sequence)
    if not padded > 1.005 * alone:
        return ""
    slots = vllm_kv_layer_slots(p.model)
    parts = [f"its KV groups pad {p.model.num_layers} layers to {slots}"] if slots != p.model.num_layers else []
    if p.model.sliding_window_layers:
        parts.append("each sliding-window group holds one more block")
    # a model without sliding windows (DeepSeek-V3: 61 full-attention layers) pads only to whole blocks (trial 16, F10)
    if not parts:
        parts.append(f"block rounding ({p.engine.block_size}-token blocks)")
    return (
        f" (vLLM's paged layout: {' and '.join(parts)}, +{padded / alone - 1:.1%}; the layers alone, what KV_BYTES "
        f"gives: {fmt_gb(seq * alone / padded)})"
    )


def _stages(p: Plan) -> tuple[int, int]:
    """``_split`` of the plan's layout."""
    return _split(p.parallelism, p.gpus)


def _layout_words(parallelism: str, gpus: int) -> str:
    """How a layout reads after the GPU count (``LAYOUT_WORDS``; a pipeline's stages)."""
    if not is_pipeline(parallelism):
        return LAYOUT_WORDS[parallelism]
    stages, per_stage = _split(parallelism, gpus)
    return ", pipeline parallel: " + (
        "one GPU per stage" if per_stage == 1 else f"{stages:,} stages of {counted(per_stage, 'GPU')}"
    )


def window_words(m: Model) -> str:
    """What the per-token KV figure (every layer's K and V of one token) leaves out: that sliding-window or chunked
    layers keep only their window, so a sequence caches less than that figure x its tokens (gpt-oss-120b config.json:
    sliding_window 128, layer_types alternating sliding and full over 36 layers: 73.7 kB a token, 0.31 GB at 8,192
    tokens, not 0.60 GB); "" for a model whose every layer keeps every token."""
    if m.sliding_window_layers:
        keeps, n, window = "a {:,}-token window", m.sliding_window_layers, m.sliding_window
    elif m.chunked_attention_layers:
        keeps, n, window = "the current {:,}-token chunk", m.chunked_attention_layers, m.attention_chunk_size
    else:
        return ""
    return (
        f"; {n} of {m.num_layers} layers keep only {keeps.format(window)}, so past {window:,} tokens a sequence "
        "holds less than this x its tokens"
    )


#: The published runs of the plan's deployment a plan prints, the farthest off first (``published_runs_rows``).
PUBLISHED_RUNS_SHOWN = 3


def published_runs_rows(p: Plan) -> list[tuple[str, str]]:
    """The plan's rows naming the shipped published runs of its deployment with ``planner validate``'s error on each
    (``Plan.published_runs``; trial 22 F7): a head saying how many and how they were matched, then the
    ``PUBLISHED_RUNS_SHOWN`` farthest off, one row each; none where the reference holds no run of it."""
    runs = list(p.published_runs)
    if not runs:
        return []
    d = Deployment.planned(
        p.gpu.name, p.model.name, p.engine.name, p.parallelism, p.gpus, p.weight_precision, p.kv_precision
    )
    shown = runs[:PUBLISHED_RUNS_SHOWN]
    which = (
        "it" if len(runs) == 1 else f"the {len(shown)} farthest off" if len(runs) > len(shown) else "farthest off first"
    )
    own = "; the planner's own error, without your calibration" if p.calibration is not None else ""
    head = (
        f"{counted(len(runs), 'run')} in planner validate's tables, each predicted as it ran (same GPU, model and "
        "engine, any release; "
        f"{d.layout}, {weights_phrase(p.weight_precision, p.expert_precision)}, {d.kv} KV){own}; {which}:"
    )
    return [("Published runs of this deployment", head)] + [(f"  {r.record_id}", r.words()) for r in shown]


def engine_line(p: Plan) -> str:
    """The line under the plan's head naming the engine release its prediction assumes (``Plan.engine_release``):
    the default's (vLLM 0.19.0, which README's Time section describes) or the one --engine pinned, with the profile
    that models it (trial 28 F12: "vllm-fullsort" was named, never the release asked for); "" for an engine named
    without a release."""
    if not p.engine_release:
        return ""
    if p.engine.name == "vllm" and p.engine_release == engine_release_words(None):
        return f"\nengine: {p.engine_release} (the default, --engine vllm; --engine vllm==X for another release)"
    return f"\nengine: {p.engine_release} (as --engine asked; planner models it with its {p.engine.name} profile)"


def render_plan(p: Plan, verdict: str = "") -> str:
    """The plan as aligned text: memory, then speed at batch 1 and at the chosen batch, then cost. ``verdict``: a
    line under the head lines (``margin_verdict_line``: the fleet at the margin's slow end is not a budget figure)."""
    mem, m, g = p.memory, p.model, p.gpu
    stages, per_stage = _stages(p)
    # the GPUs one sequence's KV heads are split over: a stage's, or one attention rank's (dp-ep: none split)
    split = 1 if p.parallelism == "dp-ep" else per_stage
    per_gpu = float(mem.kv_bytes_per_token_per_gpu)
    heads = f", {m.num_kv_heads} KV heads" + kv_replication_words(m, split, per_gpu * split)
    kv_kind = m.attention_kind + (heads if m.attention_kind in ("GQA", "MQA", "MHA") else "")
    if m.sparse_attention is not None:
        kv_kind += f" + DSA indexer key; a query reads its top {m.sparse_attention.top_k:,}"
    if m.linear_attention is not None:
        kv_kind += f"; {m.num_layers - m.linear_attention.layers} of {m.num_layers} layers cache tokens"
    if m.mamba is not None:
        kv_kind += f"; {m.mamba.attention_layers} of {m.num_layers} blocks cache tokens"
    if m.nas is not None:
        skip = m.num_layers - m.nas.attention_layers
        kv_kind += f"; {m.nas.attention_layers} of {m.num_layers} layers cache tokens, {skip} skip attention (NAS)"
    kv_kind += window_words(m)
    rows: list[tuple[str, str]] = []

    def row(label: str, value: str) -> None:
        rows.append((label, value))

    weights = p.weight_precision + experts_words(p.weight_precision, p.expert_precision)
    if weights != p.weight_precision:  # experts as published (gpt-oss)
        if p.experts_upcast:
            weights += " upcast to bf16 at load"  # model.experts_upcast: SGLang 0.5.1-0.5.9 off Blackwell
    layout = _layout_words(p.parallelism, p.gpus)
    head = (
        f"{m.name} on {p.gpus:,} x {g.name}, context {p.context:,} tokens "
        f"(weights {weights}, KV {p.kv_precision}, {p.engine.name} memory budget{layout})"
    ) + engine_line(p)
    if p.weight_alias:  # trial 32 F8: -w awq read as the catalog's int4, said once
        head += f"\n{p.weight_alias}"
    if verdict:  # trial 33 F10: the margin's verdict before the figures, not only under the replicas
        head += f"\n{verdict}"
    row("Memory per GPU", "")
    visible = float(mem.visible_bytes_per_gpu)
    row(
        "  memory the engine sees", f"{fmt_gb(visible)} ({visible / GiB:.2f} GiB of {gpu_memory_words(g.memory_bytes)})"
    )
    free_fraction = p.engine.budget_mode == "free"  # TensorRT-LLM, LMDeploy: a fraction of what is left free
    if not free_fraction:
        row(f"  x utilization {p.memory_utilization:g}", fmt_gb(visible * p.memory_utilization))
    # dp-ep, a pipeline: not 1/g of the weights a GPU; the budget's own identity gives them
    weights_per_gpu = weight_bytes_per_gpu(mem, p.engine, p.memory_utilization, p.parallelism)
    loaded = float(mem.weight_bytes)
    try:
        given = None if p.weight_precision == p.model.native_precision else p.weight_precision  # as published
        stored = float(weight_bytes(p.model, precision=given))
    except PlannerError:  # a precision only a --catalog folder names: no second figure
        stored = loaded
    as_stored = (  # MXFP4 experts padded (or upcast) as the engine loads them: not the checkpoint's (WEIGHT_BYTES's)
        f" as loaded; {fmt_gb(stored)} as stored, what WEIGHT_BYTES gives"
        if abs(loaded - stored) > 0.005 * stored
        else ""
    )
    row("  - weights", f"{fmt_gb(weights_per_gpu)} (whole model {fmt_gb(loaded)}{as_stored})")
    if p.weight_parts:  # trial 32 F5: int4 32B is 19.2 GB, not params x 0.5 B; the whole model's parts
        row("      whole model's parts", weight_parts_words(p))
    row("  - activations and runtime", fmt_gb(float(mem.reserve_bytes_per_gpu)) + reserve_parts_words(p))
    budget = float(mem.kv_budget_bytes_per_gpu)
    if free_fraction:  # the ledger in the engine's order: what is free, then its fraction
        row("  = free memory", fmt_gb(budget / p.memory_utilization))
        row(f"  x free fraction {p.memory_utilization:g}", fmt_gb(budget))
    vllm_lines = logs_vllm_lines(p.engine.name)  # the vLLM log's figures only where vLLM is the engine
    row(
        "  = KV cache budget",
        f"{fmt_gb(budget)} ({budget / GiB:.2f} GiB" + (", as vLLM logs it)" if vllm_lines else ")"),
    )
    copies = (
        f"; {fmt_bytes(per_gpu)} on each of {p.gpus:,} GPUs, the MLA latent is not split"
        if m.mla and p.gpus > 1
        else ""
    )
    if p.parallelism == "dp-ep":
        row("KV cache per token", f"{fmt_bytes(per_gpu)} ({kv_kind}; on the one attention rank serving the sequence)")
    elif stages > 1:
        layers = math.ceil(m.num_layers / stages)
        row(
            "KV cache per token",
            f"{fmt_bytes(per_gpu * per_stage)} on the busiest stage ({kv_kind}; its {layers} of {m.num_layers} layers)",
        )
    else:
        row("KV cache per token", f"{fmt_bytes(per_gpu * p.gpus)} ({kv_kind}{copies})")
    if m.linear_attention is not None or m.mamba is not None:
        state = state_bytes_per_sequence(m)
        kind, n = (
            ("Mamba-2", m.mamba.mamba_layers)
            if m.mamba is not None
            else ("linear-attention", m.linear_attention.layers)
        )
        row(
            "KV cache per sequence",
            f"{fmt_gb(float(mem.kv_bytes_per_sequence))} (with {fmt_gb(state)} of {kind} state, "
            f"{n} layers, whatever the context)",
        )
    else:
        row("KV cache per sequence", fmt_gb(float(mem.kv_bytes_per_sequence)) + _padded_sequence_words(p))
    batched_tokens = p.engine.batching_limits(g.memory_bytes, g.engine_device_name)[0]
    logged_tokens, concurrency = vllm_kv_log(
        m,
        float(mem.kv_budget_bytes_per_gpu),
        float(mem.kv_bytes_per_token_per_gpu),
        p.context,
        block_size=p.engine.block_size,
        max_num_batched_tokens=batched_tokens,
        gpus=1 if p.parallelism == "dp-ep" else per_stage,
    )
    slots = vllm_kv_layer_slots(m)
    padded = f" (vLLM logs {int(logged_tokens):,}: its KV groups pad {m.num_layers} layers to {slots})"
    if m.linear_attention is not None or m.mamba is not None:  # state pages share the pool (hybrid_sequence_bytes)
        padded, slots = f" (vLLM logs {int(logged_tokens):,}: the state layers' pages share its blocks)", 0
    cached = m.nas.attention_layers if m.nas is not None else m.num_layers  # NAS: layers that skip attention cache none
    if slots != cached and vllm_lines:  # the pool counted on the layers alone; max batch takes the padded blocks
        padded = f" on the {cached} layers alone" + padded[:-1] + ", as max batch counts them)"
    row("KV cache tokens (group)", f"{int(mem.kv_cache_tokens):,}" + (padded if slots != cached and vllm_lines else ""))
    n = int(mem.max_batch)
    capped = f" ({limit_words(p.engine, g, p.parallelism, p.gpus)}; memory holds {n:,})" if p.batch_capped else ""
    row("Max batch", f"{counted(p.max_batch, 'sequence')} of {p.context:,} tokens{capped}")
    rank = ", each rank" if p.parallelism == "dp-ep" else ""
    if vllm_lines:  # SGLang, TensorRT-LLM and LMDeploy log no such line
        why = concurrency_note(m, batched_tokens, p.context)
        per_stream = n / (p.gpus if p.parallelism == "dp-ep" else 1)  # what memory holds, on the log line's GPUs
        lower = f"; {why}" if why and concurrency < per_stream else ""
        row(
            f"Max concurrency (vLLM's log line{rank})", f"{concurrency:.2f}x at {p.context:,} tokens per request{lower}"
        )
    row("Ridge point", f"{fixed_half_up(p.ridge_flop_per_byte)} FLOP/B")  # 281.25 -> 281.3, as a hand check
    steps = [(f"Decode at batch {p.batch}", p.at_batch)] + ([("Decode at batch 1", p.at_one)] if p.batch != 1 else [])
    for label, step in steps:
        row(label, "")
        low, high = p.tpot_range(step)
        row(
            "  TPOT (per sequence)",
            f"{fmt_seconds(float(step.step_s))} ({_range_words(p, low, p.decode_floor_s(step), high)})",
        )
        row("  throughput", fmt_rate(float(step.throughput_tokens_per_s)))
        row("  arithmetic intensity", f"{float(step.intensity_flop_per_byte):.1f} FLOP/B")
        row("  MBU / MFU", f"{fmt_percent(float(step.mbu))} / {fmt_percent(float(step.mfu))}")
    low, high = p.ttft_range()
    asked = p.request_tokens[0] if p.request_tokens is not None else p.context
    if asked != p.context:  # trial 24 F12: the given prompt's TTFT first, the whole context's said to be that
        r_low, r_high = p.request_ttft_range()
        row(
            f"TTFT ({asked:,}-token prompt, as given)",
            f"{fmt_seconds(p.request_ttft_s)} ({_range_words(p, r_low, p.request_ttft_floor_s, r_high)}; one prompt "
            "alone on the group)",
        )
    row(
        f"TTFT ({p.context:,}-token prompt)" if asked == p.context else f"  whole {p.context:,}-token context",
        f"{fmt_seconds(p.ttft_s)} ({_range_words(p, low, p.ttft_floor_s, high)})"
        + ("" if asked == p.context else "; the longest prompt the context holds, not your prompts"),
    )
    if p.not_modelled:  # trial 31 F7: the dp-ep (or across-nodes) plan names what it leaves out
        row("Not modelled", p.not_modelled)
    if p.calibration is not None:
        row("Calibration", p.calibration.text)
    if p.time_range_widened:
        row("Time ranges widened", range_table_words(p.time_range_widened, g.name))
    for label, words in _ranges_not_kept_apart(p):
        row(label, words)
    if p.time_range_held:
        row("Time ranges held", p.time_range_held)
    if p.serving_margin != p.time_residuals or p.serving_margin_note != p.time_range_note:
        low, high = p.serving_margin
        row(
            "Budget review's margin",
            f"TPOT {low:+.0%} / {high:+.0%} under steady load, not this range: {p.serving_margin_note}",
        )
    for label, words in published_runs_rows(p):
        row(label, words)
    price = (
        f"{fmt_usd_per_gpu_hour(p.price_usd_per_gpu_hour)}/GPU-hour" + (f": {p.price_source}" if p.price_source else "")
        if p.price_usd_per_gpu_hour == p.price_usd_per_gpu_hour
        else "the catalog has no on-demand price for this GPU"
        + (f" ({no_rental_price(p.gpu)})" if no_rental_price(p.gpu) else "")
        + "; give --price US$ per GPU-hour"
    )
    row(
        f"Cost at batch {p.batch}",
        f"{fmt_usd(p.cost_per_mtok_usd)} per million output tokens, decode only, 100% busy; prompt processing not "
        f"included ({price})",
    )
    if p.request_tokens is not None:
        prompt, output = p.request_tokens
        row(
            "  with prompt processing",
            f"{fmt_usd(p.cost_with_prompts_usd)} per million output tokens, 100% busy: each request's prefill of "
            f"{counted(prompt, 'prompt token')} added to its share of the decode steps for {counted(output, 'output token')}"
            + _prefill_share_words(p),
        )
    else:
        row("  with prompt processing", "give --prompt-tokens and --output-tokens (one request's lengths)")
    for alt in p.alternatives:
        row(
            f"Same {counted(alt.gpus, 'GPU')}{_layout_words(alt.parallelism, alt.gpus) or ', tensor parallel'}",
            f"max batch {alt.max_batch:,}, TPOT {fmt_seconds(alt.tpot_s)} and {fmt_rate(alt.throughput_tokens_per_s)} "
            f"at it, TTFT {fmt_seconds(alt.ttft_s)}, {fmt_usd(alt.cost_per_mtok_usd)} per million output tokens"
            f" (--parallelism {alt.parallelism})",
        )
    width = max(len(label) for label, _ in rows) + 2
    lines = [head, ""] + [f"{label:<{width}}{value}".rstrip() for label, value in rows]
    if p.vs_vllm is not None:  # trial 33 F11: another engine's TPOT beside vLLM's, and the part that differs most
        lines.append(vs_vllm_line(p.vs_vllm))
    if p.larger_group is not None:
        more, held = p.larger_group
        lines.append(
            f"hint: {more:,} x {g.name} would hold {held:,} sequences of {p.context:,} tokens where {p.gpus:,} "
            f"{'holds' if p.gpus == 1 else 'hold'} {n:,} (--gpus {more})"
        )
    lines += [f"warning: {w}" for w in p.warnings]
    lines += [f"warning: {w}" for w in [untimed_release(p)] if w]
    return "\n".join(lines)


def vs_vllm_line(d: EngineDifference) -> str:
    """ "vs vLLM on the same deployment: TPOT 133 ms vs 72.8 ms at batch 1,024; the difference is mostly host
    per-sequence cost (+60.4 ms)" (``Plan.vs_vllm``), or why vLLM cannot run it."""
    head = "vs vLLM on the same deployment: "
    if d.refused:
        return head + f"vLLM cannot run it ({d.refused})"
    line = head + f"TPOT {fmt_seconds(d.tpot_s)} vs {fmt_seconds(d.vllm_tpot_s)} at batch {d.batch:,}"
    if not d.parts_s:
        return line + " (the parts of a tensor-parallel step only: --parallelism tp or tp-ep)"
    part = d.largest
    return line + f"; the difference is mostly {STEP_LABELS[part]} ({d.parts_s[part] * 1e3:+.3g} ms)"


def explain_lines(p: Plan) -> list[str]:
    """``plan --explain``: each decode step of ``Plan.step_breakdowns`` in parts, ms, share of the step and bound
    (``planner.model.decode_step_breakdown``; trial 33 F5); parts that take no time are left out."""
    lines: list[str] = []
    for b in p.step_breakdowns:
        shown = [x for x in b.parts if x.seconds != 0.0]
        width = max(len(x.label) for x in shown) + 2
        lines += [
            "",
            f"Decode step at batch {int(b.batch):,} on {int(b.gpus):,} GPUs: TPOT {b.step_s * 1e3:.3f} ms in parts"
            + (f" ({b.layout})" if b.layout else ""),
            f"  {'part':<{width}}{'ms':>9}  {'share':>6}  bound",
        ]
        lines += [
            f"  {x.label:<{width}}{x.seconds * 1e3:>9.3f}  {x.seconds / b.step_s:>6.1%}  {x.bound}" for x in shown
        ]
        if b.residual_s != 0.0:
            lines.append(
                f"  {'residual':<{width}}{b.residual_s * 1e3:>9.3f}  {b.residual_s / b.step_s:>6.1%}  "
                f"floating-point rounding of the sum ({b.residual_s:.2g} s)"
            )
        lines.append(f"  {'= TPOT':<{width}}{b.step_s * 1e3:>9.3f}  {1:>6.1%}")
    return lines


def concurrency_rate(
    in_flight: float, p: Plan, replicas: dict, prompt: float, output: float, load_kwargs: dict
) -> tuple[float, str]:
    """``--concurrency``'s requests/s and the line saying how (trial 32 F2): Little's law R = N / L(R), L the simulated
    mean time a request takes (``LoadResult.e2e_s.mean``) on the fleet ``fewest_gpus`` sizes for R, by the export's
    own fixed point (``planner.serving.fleet.in_flight_rate``, which ``planner.export.evaluate`` converts
    ``peak_concurrent_requests`` with) from the closed form's rate (``planner.export.sizing.rate_from_concurrency``:
    N / (TTFT of the prompt alone + output x TPOT at the plan's batch))."""
    ttft = p.request_ttft_s if p.request_ttft_s == p.request_ttft_s else p.ttft_s
    first = float(rate_from_concurrency(in_flight, ttft, output, float(p.at_batch.step_s)))
    took: dict[float, float] = {}

    def latency_s(rate: float) -> float:
        took[rate] = float(fewest_gpus(replicas, prompt, output, rate, **load_kwargs).sizing.result.e2e_s.mean)
        return took[rate]

    rate = float(in_flight_rate(in_flight, first, latency_s))
    mean_s = took.get(rate) or latency_s(rate)
    line = (
        f"Concurrency: {in_flight:,.4g} requests in flight -> {rate:.3g} requests/s by Little's law, rate = in flight "
        f"/ {fmt_seconds(mean_s)}, the simulated mean time a request takes (queue, TTFT and decode) on the fleet "
        f"sized for that rate, the rate found again until it settles within {IN_FLIGHT_TOLERANCE:.0%} (as planner "
        f"export converts peak_concurrent_requests); check: {rate:.3g} x {fmt_seconds(mean_s)} = "
        f"{rate * mean_s:,.3g} in flight"
    )
    return rate, line


def weight_parts_words(p: Plan) -> str:
    """The whole model's weights in their parts (``Plan.weight_parts``), which sum to the weights line's whole model:
    "int4 layers 16.09 GB (4-bit values 15.60 GB + 16-bit scales 0.49 GB) + embeddings, output head and norms kept
    16-bit 3.12 GB" (trial 32 F5)."""
    values, scales, kept, experts = p.weight_parts
    wp = p.weight_precision
    layers = f"{wp} layers {fmt_gb(values + scales)}"
    if scales > 0:
        layers += f" ({fmt_gb(values)} values + {fmt_gb(scales)} block scales)"
    parts = [layers] + ([f"embeddings, output head and norms kept 16-bit {fmt_gb(kept)}"] if kept > 0 else [])
    parts += [f"routed experts at {p.expert_precision or wp} {fmt_gb(experts)}"] if experts > 0 else []
    return " + ".join(parts)


def reserve_parts_words(p: Plan) -> str:
    """What "activations and runtime" holds (``Plan.reserve_parts``; trial 32 F6: 0.88 GB at TP 1, 2.84 GB at TP 2):
    " (activation peak 0.62 GB + non-torch 0.27 GB + all-reduce buffers 1.97 GB at TP 2, the engine's fit)"."""
    if not p.reserve_parts:
        return ""
    activation, non_torch, collectives = p.reserve_parts
    words = f" (profiling run's activation peak {fmt_gb(activation)} + non-torch {fmt_gb(non_torch)}"
    if collectives > 0:
        words += f" + NCCL / custom all-reduce buffers {fmt_gb(collectives)} at TP {p.gpus}, {p.engine.name}'s fit"
    return words + ")"


#: The months a bought GPU is written off over unless --amortization-months says otherwise: the export's default
#: (``planner.export.scenario.BUILTIN_DEFAULTS``).
OWNED_AMORTIZATION_MONTHS = BUILTIN_DEFAULTS["amortization_months"]


def owned_usd_per_gpu_hour(g, model_name: str, amortization_months: int, basis: str | None) -> tuple[float, str]:
    """A bought GPU's cost per GPU-hour, owned, and the words for plan's cost line (trial 32 F3: "n/a ... give --price"
    where the catalog had only a purchase quote): the export's own money for a bought option (``planner.export.
    ownership.option_money``: the purchase quote + the node's host server and network share, amortized straight line
    over ``amortization_months``, plus power and colocation, every figure the export's default, no cost of capital)
    over 730 hours a month. L40S at the $7,800 quote, 8-GPU node, 36 months: $655.70 a month, $0.8982/GPU-hour."""
    if g.price("purchase") is None:
        raise InvalidInputError(
            f"--price-kind purchase: the catalog has no purchase quote for {g.name}; add a [[price]] entry with "
            'kind = "purchase" in a --catalog folder (docs/catalog.md), or give --price US$ per GPU-hour'
        )
    option = Option(
        gpu=g.name, model=model_name, pricing="purchase", amortization_months=amortization_months, price_basis=basis
    )
    money = option_money(option, g)
    hourly = money.usd_per_gpu_month / HOURS_PER_MONTH
    words = (
        f"bought, over {amortization_months} months amortization incl. power "
        f"and colocation (the export's defaults: ${money.purchase_usd:,.0f} GPU ({money.price_provider}, "
        f"{money.price_date}) + ${money.capex_usd_per_gpu - money.purchase_usd:,.0f} host server and network share "
        f"of a node of {money.node_size} GPUs = ${money.capex_usd_per_gpu:,.0f}, ${money.capital_usd_per_gpu_month:,.2f} "
        f"a month; {money.it_power_w_per_gpu:,.0f} W at PUE {money.pue.value:g} and ${money.power_usd_per_kwh.value:g}"
        f"/kWh ${money.power_usd_per_gpu_month:,.2f}; colocation ${money.colocation_usd_per_gpu_month:,.2f}; "
        f"${money.usd_per_gpu_month:,.2f} a month / {HOURS_PER_MONTH:g} h; planner export's Ownership sheet)"
    )
    return hourly, words


def untimed_release(p: Plan) -> str:
    """Where --engine pinned a vLLM release older than the oldest one planner has read (``profiles.
    OLDEST_LOGGED_VLLM``, mapped to the oldest profile: ``engine_for_version``), a line saying that its step time is
    not modelled either, only its memory is warned about there (trial 31 F13: vllm==0.7.0 printed a normal TPOT)."""
    from planner.engines.profiles import OLDEST_LOGGED_VLLM, VLLM_V1_VERSION, parse_version

    words = p.engine_release or ""
    if not p.engine.name.startswith("vllm") or not words.startswith("vLLM "):
        return ""
    version = parse_version(words.split(" ", 1)[1])
    if version is None or version.release >= OLDEST_LOGGED_VLLM:
        return ""
    oldest = ".".join(map(str, OLDEST_LOGGED_VLLM))
    v0 = (
        ", and it runs the V0 engine (before 0.8), whose scheduling differs"
        if version.release < VLLM_V1_VERSION
        else ""
    )
    return (
        f"{words}'s step time is not modelled either: TPOT and TTFT above are the {p.engine.name} profile's (the "
        f"oldest release read here, {oldest}, stands in), not this release's{v0}; measure the release you run "
        f"(planner validate --decode RESULT.json --engine vllm=={words.split(' ', 1)[1]} compares a run)"
    )


def plan_as_dict(p: Plan) -> dict:
    """``plan --json``: ``Plan.to_dict()``, every figure the text prints in base units."""
    return p.to_dict()


def error_as_dict(exc: PlannerError) -> dict:
    """A refusal for ``plan --json``: ``{"error": {...}}`` with the error's kind (its class), the sentence the stderr
    line says and the exit code; a ``LongTailError`` adds the length refused (``what``), its mean and high tokens, the
    percentile and the slot (null: none given), so a script reads why without parsing the sentence."""
    said = {"kind": type(exc).__name__, "message": str(exc), "exit_code": exc.exit_code}
    if isinstance(exc, LongTailError):
        said |= {
            "length": exc.what or None,
            "mean_tokens": exc.mean,
            "high_tokens": exc.high,
            "percentile": exc.percentile,
            "high_over_mean": exc.high / exc.mean,
            "lognormal_ratio_bound": lognormal_ratio_bound(exc.percentile),
            "slot_tokens": exc.slot_tokens if math.isfinite(exc.slot_tokens) else None,
        }
    return {"error": said}


def errors_as_json(command):
    """With ``--json`` (the ``as_json`` parameter), a ``PlannerError`` the command raises is also printed on stdout as
    one JSON object (``error_as_dict``) before it goes on to the usual one-line stderr message and exit code (2 bad
    input, 1 a failure: ``planner.cli.fail``), so a script reading stdout gets JSON either way; click's own usage
    errors (an unknown option, a value of the wrong kind) are refused before the command runs and stay stderr only."""

    @functools.wraps(command)
    def wrapped(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except PlannerError as exc:
            if kwargs.get("as_json"):
                echo(json.dumps(error_as_dict(exc), indent=2))
            raise

    return wrapped


def length_fits_as_dict(
    prompt_mean: float, prompt_high: float, output_mean: float, output_high: float, percentile: float
) -> dict:
    """The fit each length is drawn from under ``--prompt-tokens-high`` / ``--output-tokens-high``, for --json
    (``planner.serving.load.length_fit``, as ``spread_lengths`` draws them): the slot (the two high lengths' sum), and
    per length its mean and high tokens, high / mean, the largest any lognormal has at the percentile (3.87 at p95),
    its distribution ("lognormal", "truncated lognormal" at the slot wherever one reaches a ratio within the bound,
    s208, or "two-part mixture" past it: ``planner.serving.length_mixture``, with its long share and split), whether
    no length is past the slot ("truncated"), and its mu and s."""
    slot = float(prompt_high + output_high)
    bound = lognormal_ratio_bound(percentile)
    fits = {}
    for what, m, h in (("prompt", prompt_mean, prompt_high), ("output", output_mean, output_high)):
        f = length_fit(m, h, percentile, slot, what)
        fits[what] = {
            "mean_tokens": m,
            "high_tokens": h,
            "high_over_mean": h / m,
            "distribution": f.kind,
            "truncated": f.truncated,
            "truncated_at_tokens": f.upper_tokens if f.truncated else None,
            "mu": f.mu,
            "s": f.s,
        }
        if isinstance(f, LengthMixture):  # past the bound: the long requests' share, split at the high length
            fits[what] |= {"long_share": f.long_share, "split_tokens": f.split_tokens}
    return {"percentile": percentile, "slot_tokens": slot, "lognormal_ratio_bound": bound} | fits


class Percentile(click.ParamType):
    """A percentile the simulation reports (``planner.serving.load.PERCENTILES``: 50, 90, 95 or 99), as people write
    it ("95", "p95", "95%"): ``planner.export.scenario.reported_percentile``, which a scenario's ``high_percentile``
    goes through too; a fraction (0.95) or another percentile is refused in one line naming the accepted ones."""

    name = "[" + "|".join(f"{q:g}" for q in PERCENTILES) + "]"

    def convert(self, value, param, ctx) -> float:
        try:
            return reported_percentile(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


#: The engine flags each --parallelism value stands for (docs/model.md, "Data-parallel attention and expert
#: parallelism" and "Pipeline parallelism"; trial 31 F9: the usual SGLang DeepSeek command is none of them).
PARALLELISM_FLAGS = (
    ". As engines start it, for --gpus g: tp = vLLM --tensor-parallel-size g, SGLang --tp g; tp-ep = vLLM "
    "--tensor-parallel-size g --enable-expert-parallel; dp-ep = vLLM --data-parallel-size g --enable-expert-parallel "
    "(tensor-parallel size 1), SGLang --tp g --dp g --enable-dp-attention --ep-size g (or --moe-a2a-backend deepep), "
    "TensorRT-LLM --tp_size g --ep_size g with enable_attention_dp: true; pp = vLLM --pipeline-parallel-size g, "
    "SGLang --pp-size g, TensorRT-LLM --pp_size g; ppN = vLLM --tensor-parallel-size g/N --pipeline-parallel-size N. "
    "Not modelled: SGLang --enable-dp-attention without --ep-size (MoE tensor-parallel over the gathered tokens, "
    "\"dp-tp\": its memory is dp-ep's, its MoE time and exchange another layout's), a DP size other than the EP size"
)


@click.command("plan")
@click.option("--gpu", required=True, help="GPU name or alias, e.g. H100, A100-40GB, MI300X.")
@click.option("--model", "model_name", required=True, help="Model name or alias, e.g. llama2-70b, qwen3-32b.")
@click.option(
    "--context",
    required=True,
    type=TokenCount(
        whole_because="--context is the tokens one sequence holds and sizes its KV cache: whole tokens; only "
        "--prompt-tokens and --output-tokens, means, may have a fraction",
        missing="It is the most tokens one request holds, prompt + answer (the engine's --max-model-len), e.g. 8k "
        "(8,192 tokens) for a chat; the model's trained maximum is its max_context (planner catalog show MODEL)",
    ),
    help="Tokens per sequence (prompt + output), a whole number: 8192, 8,192, 1e4 or 8k (k = 1,024 tokens); the "
    "engine's --max-model-len: with --rate, requests drawn longer (--prompt-tokens-high) are cut to it, a trace's, "
    "dataset's or lengths file's refused.",
)
@click.option(
    "--gpus",
    type=Whole("a GPU count of 1 or more, e.g. 4", min=1),
    help=option_doc("gpus") + "; with --rate, the group of 1, 2, 4 or 8 from it whose fleet needs fewest GPUs",
)
@click.option(
    "--batch",
    type=Whole("a number of sequences of 1 or more, e.g. 8", min=1),
    help="Batch for the speed figures [default: max batch: what memory holds, at most the engine's max_num_seqs].",
)
@click.option("--weight-precision", "-w", help=option_doc("weight_precision"))
@click.option("--kv-precision", "-k", help=option_doc("kv_precision"))
@click.option(
    "--memory-utilization",
    type=Number("a fraction above 0 and at most 1, e.g. 0.9 (90%)", min=0, max=1, min_open=True),
    help=option_doc("memory_utilization"),
)
@click.option(
    "--engine",
    default="vllm",
    show_default=True,
    callback=engine_name,
    help=f"Serving engine whose memory budget (KV cache) and per-step costs are used: {ENGINE_HELP}.",
)
@click.option(
    "--price",
    "price_per_gpu_hour",
    type=Number(f"a rent {RENT_ACCEPTED}, e.g. 2.99", min=0, min_open=True, max=MAX_RENT_USD_PER_GPU_HOUR),
    help=f"Rent {RENT_ACCEPTED} [default: the catalog's on-demand price].",
)
@click.option(
    "--price-kind",
    type=click.Choice(("on-demand", "spot", "reserved", "purchase")),
    default="on-demand",
    show_default=True,
    help="Which catalog rent the cost is at (a review's option price_kind); purchase: the catalog's purchase quote "
    "owned, as planner export prices a bought GPU (amortized over --amortization-months, plus power and colocation "
    "at the export's defaults), also used where the GPU has no rent but a purchase quote.",
)
@click.option(
    "--amortization-months",
    type=Whole("a number of months of 1 or more, e.g. 36", min=1),
    default=OWNED_AMORTIZATION_MONTHS,
    show_default=True,
    help="With a purchase price: the months a bought GPU is written off over (a review's amortization_months).",
)
@click.option(
    "--price-basis",
    metavar="PROVIDER",
    help="Which quote of that kind: \"median\" (default: the median of the catalog's quotes) or a provider's name, "
    'e.g. "OurCloud" for a [[price]] entry of a --catalog folder (a review\'s price_basis).',
)
@click.option(
    "--calibration",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Calibration file from `planner calibrate` (also $PLANNER_CALIBRATION).",
)
@click.option(
    "--parallelism",
    type=click.STRING,
    callback=layout_name,
    default="tp",
    show_default=True,
    help=option_doc("parallelism") + PARALLELISM_FLAGS,
)
@click.option(
    "--rate",
    "rate_per_s",
    type=Number(
        f"requests per second above 0 and up to {MAX_REQUESTS_PER_S:,.0f}, e.g. 40",
        min=0,
        min_open=True,
        max=MAX_REQUESTS_PER_S,
    ),
    help="Requests per second to serve, up to 1,000,000 (a scenario's bound): size a fleet on simulated percentiles "
    "(needs --prompt-tokens and --output-tokens, --lengths, or --dataset).",
)
@click.option(
    "--concurrency",
    type=Number("a number of requests in flight above 0, e.g. 40", min=0, min_open=True, max=MAX_REQUESTS_PER_S),
    help="Instead of --rate: requests in flight at once (concurrent users each waiting for an answer), converted to "
    "requests/s by Little's law as planner export converts peak_concurrent_requests: rate = in flight / the simulated "
    "mean time a request takes on the fleet sized for that rate, found again until it settles within 1%.",
)
@click.option(
    "--max-num-seqs",
    "max_num_seqs",
    type=Whole("sequences, a whole number of 1 or more, e.g. 225", min=1),
    help="With --rate or --trace: the most sequences a replica runs at once (the engine's max_num_seqs; default the "
    "engine's, 1,024 for vLLM on an H100, with what the KV cache admits simulated). planner export sets it to what "
    "memory holds at the scenario's high-percentile lengths (its 'Sequences in flight per replica'): give that number "
    "to reproduce a review's figures.",
)
@click.option(
    "--replicas",
    "fleet_replicas",
    type=Whole("replicas, a whole number of 1 or more, e.g. 9", min=1),
    help="With --rate or --trace: run this many replicas (of --gpus, else the smallest group that holds the model) on "
    "the traffic instead of sizing a fleet: each replica's percentiles against the targets (meets or misses), each "
    "replica's steady-state capacity (Excel CAPACITY_RPS), with targets the most each takes within them and the "
    "headroom over the rate (the review's Latency sheet's rule; a trace's: the trace replayed faster, its arrival "
    "times divided by the multiple), and the same traffic on one replica fewer (does the fleet hold its targets when "
    "one fails?). Not with a burst trace (no rate).",
)
@click.option(
    "--prompt-tokens",
    type=TokenCount(mean=True),
    help="Mean prompt length under load, tokens; a fraction such as 800.5 is kept (each simulated request sends the "
    "mean rounded to whole tokens, as validation reads a benchmark's printed mean). Without --rate, with "
    "--output-tokens: the request the cost with prompt processing is priced at.",
)
@click.option(
    "--output-tokens",
    type=TokenCount(mean=True),
    help="Mean output length under load, tokens; a fraction such as 400.5 is kept (rounded as --prompt-tokens).",
)
@click.option(
    "--prompt-tokens-high",
    type=TokenCount(),
    help="With --rate and --prompt-tokens: the prompt length at --length-percentile (default --percentile, p95; as "
    "a review's prompt_tokens_high at its high_percentile): each simulated request's prompt drawn from a lognormal "
    "truncated at the slot memory is sized for (the two high lengths' sum) whose mean and high length are these "
    "(seeded), as planner export sizes; where that slot is within a few percent of a high length (no truncated fit "
    "reaches it: T / h = 1.1 reaches 2.58 at p95), the untruncated lognormal, its draws not cut at the slot; where "
    "the high length is past any lognormal's reach (high / mean above 3.87 at p95), a two-part mixture: a lognormal "
    "body up to the high length and the longest 5% between it and the slot; where no distribution of positive "
    "lengths holds them (high / mean near 1 / (1 - percentile), 20 at p95), refused, naming the mean or high length "
    "that fits (a measured sample: --lengths FILE instead). Every drawn request longer than --context is cut to it (its prompt cut to "
    "the context less its output, as an application capping its context does; a note counts them): the engine "
    "rejects a longer one. Default: the mean, every prompt alike.",
)
@click.option(
    "--output-tokens-high",
    type=TokenCount(),
    help="With --rate and --output-tokens: the output length at --length-percentile (default --percentile), drawn "
    "as --prompt-tokens-high (refused where no distribution holds it; an output longer than --context alone cut to "
    "it less one token).",
)
@click.option(
    "--dataset",
    "dataset_name",
    help="Instead of --prompt-tokens and --output-tokens: a named dataset's requests, with its shared prefix cached "
    f"({', '.join(DATASETS)}): sharegpt as vllm bench serve sends it, request by request from a shipped sample "
    "(means 213 / 212 tokens); a benchmark's default lengths (sonnet, random, generated-shared-prefix) as its "
    "client sends them; alpaca at its published mean lengths, every request alike (percentiles narrower than the "
    "dataset's spread); openorca and cnn_dailymail publish no mean prompt, so give the lengths for them.",
)
@click.option("--lengths", "lengths_path", type=click.Path(dir_okay=False, path_type=Path), help=LENGTHS_HELP)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Instead of --rate and the lengths: a recorded traffic replayed as it came, a CSV with the columns "
    "arrival_s, prompt_tokens, output_tokens (one row a request, seconds from any origin), or JSON Lines with those "
    "keys (one object a line); also read as published: Mooncake's JSON Lines (timestamp in milliseconds, "
    "input_length, output_length, hash_ids) and the Azure LLM inference traces' CSV (TIMESTAMP, ContextTokens, "
    "GeneratedTokens). Rows in any order: sorted by arrival (ties by prompt, then output tokens), with a note where "
    "they were not; blank lines and lines starting with # (comments) are skipped. Capacity is judged at the "
    "trace's mean rate (a gap of 100x the median or more shortened to the median), as --rate judges its rate; its "
    "busiest 60-s window is warned about where past a replica's capacity, the queue it builds in the percentiles of "
    "its replay. Each request goes to a replica as --routing deals it, every replica's share simulated. Every request "
    "at one time is a burst: sized on the targets, with no rate.",
)
@click.option(
    "--ttft-target",
    type=Seconds(BARE_TTFT_MAX_S, example_s=1.5),
    help=f'TTFT (time to first token) target at the percentile: seconds (1.5), or with the unit ("800ms"); a bare number above '
    f"{BARE_TTFT_MAX_S:g} is refused as milliseconds typed as seconds. Default: none (with neither target, the "
    "fleet is sized on capacity: the fewest replicas each below one replica's capacity).",
)
@click.option(
    "--tpot-target",
    type=Seconds(BARE_TPOT_MAX_S),
    help=f'TPOT (time per output token) target at the percentile: seconds (0.05), or with the unit ("50ms"); a bare number above '
    f"{BARE_TPOT_MAX_S:g} is refused as milliseconds typed as seconds; refused with one output token a request "
    "(it has no token after the first). Default: none (with neither target, the fleet is sized on capacity: the "
    "fewest replicas each below one replica's capacity).",
)
@click.option(
    "--percentile",
    type=Percentile(),
    default="95",
    show_default=True,
    help=f"Percentile the TTFT and TPOT targets hold at: {choices_text(PERCENTILES)} (p95 and 95% read as 95); 95 means 95 of "
    "100 requests within them (a review's latency_percentile); also the high lengths' unless --length-percentile.",
)
@click.option(
    "--length-percentile",
    type=Percentile(),
    help="With --prompt-tokens-high or --output-tokens-high: the percentile those lengths are at (a review's "
    "high_percentile: 90, 95 or 99); default --percentile. p95 lengths from the logs and a p99 SLO, as a review with "
    "high_percentile = 95 and latency_percentile = 99 sizes: --percentile 99 --length-percentile 95.",
)
@click.option(
    "--burstiness",
    type=Number("a gamma shape above 0, e.g. 1 (Poisson)", min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Gamma shape of the incoming traffic's arrival gaps, before the load balancer: 1 Poisson, below 1 burstier "
    "(vllm bench serve --burstiness). Routed at random (--routing), each of k replicas sees gaps of shape "
    "k b / (1 + (k - 1) b), nearer Poisson (0.5 over 9 replicas: 0.9); round-robin, k b.",
)
@click.option(
    "--routing",
    type=click.Choice(ROUTINGS, case_sensitive=False),
    default="random",
    show_default=True,
    help="With --rate or --trace: how the load balancer deals requests over the replicas: random (each request to a "
    "replica drawn at random, as Kubernetes' kube-proxy does in iptables mode: the burstier share, so the safer "
    "default) or round-robin (each in turn, as nginx and IPVS do by default: smoother, so it can need fewer "
    "replicas). A least-loaded router does better than both.",
)
@click.option(
    "--prefix-hit-rate",
    type=Number("a share of 0 or more and below 1, e.g. 0.25", min=0, max=1, max_open=True),
    help="With --rate: the share of each prompt the prefix cache holds, not computed again (a system prompt every "
    "request shares, over the mean prompt: 0.25 for 200 of 800 tokens); default 0, or --dataset's shared prefix.",
)
@click.option(
    "--speculative-tokens",
    type=Whole("draft tokens per step, 1 or more, e.g. 3", min=1),
    help=f"With --rate: {SPECULATION_OPTIONS['speculative_tokens']}.",
)
@click.option(
    "--acceptance-length",
    type=Number("tokens a step emits, 1 or more, e.g. 2.7", min=1),
    help=f"With --rate: {SPECULATION_OPTIONS['acceptance_length']}.",
)
@click.option(
    "--speculative-method",
    type=click.Choice(NAMED_METHODS, case_sensitive=False),
    help=f"With --speculative-tokens: {SPECULATION_OPTIONS['speculative_method']}.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print JSON instead of text; a refusal is then also a JSON object {"error": ...} on stdout (same exit code).',
)
@click.option(
    "--explain",
    is_flag=True,
    help="After the plan, the decode step at the batch and at batch 1 in parts: the dense and MoE GEMMs, attention, "
    "kernel floors, all-reduces and the engine's per-step, per-layer and per-sequence costs, each in ms with its "
    "share of the TPOT and what bounded it (memory or compute with the rate achieved, a kernel floor, a measured "
    "table, a fitted cost); they sum to the TPOT. --json always carries them (step_breakdown_s). A pipeline adds its "
    "stage sends (the parts are one stream's step on a stage); dp-ep its MoE expert exchange in place of all-reduces.",
)
@catalog_option
@errors_as_json
def plan_command(
    gpu,
    model_name,
    context,
    as_json,
    explain,
    catalog_dirs: tuple[Path, ...],
    rate_per_s,
    concurrency,
    fleet_replicas,
    max_num_seqs,
    prompt_tokens,
    output_tokens,
    prompt_tokens_high,
    output_tokens_high,
    dataset_name,
    lengths_path,
    trace_path,
    ttft_target,
    tpot_target,
    percentile,
    length_percentile,
    burstiness,
    routing,
    prefix_hit_rate,
    speculative_tokens,
    acceptance_length,
    speculative_method,
    **options,
):
    """Memory, max batch, TPOT, throughput and cost of one model on one GPU type; with --rate, the fewest
    replicas whose simulated percentile TTFT and TPOT meet the targets at that traffic (without targets: the fewest
    each below one replica's capacity), on the group of 1, 2, 4 or 8 GPUs needing fewest GPUs in all unless --gpus
    fixes it.

    Example:

    \b
        planner plan --gpu H100 --model llama2-70b --context 8192
        planner plan --gpu H100 --model llama3.1-70b --context 4096 -w fp8 --gpus 4 \\
            --rate 60 --prompt-tokens 800 --output-tokens 400 --ttft-target 1.5 --tpot-target 0.05
        planner plan --gpu H100 --model Qwen/Qwen3-8B --context 4096 -w fp8 --gpus 1 \\
            --rate 4 --prompt-tokens 233 --output-tokens 221 --speculative-tokens 3 --acceptance-length 2.7
        planner plan --gpu H100 --model llama3.1-8b --context 4096 --rate 10 --dataset sonnet --ttft-target 0.5
    """
    traffic = None
    trace = None
    if concurrency is not None:  # trial 32 F2: requests in flight, converted as the export converts them
        if rate_per_s is not None or trace_path is not None:
            raise InvalidInputError(
                "give --rate (requests per second) or --concurrency (requests in flight), not both"
                if rate_per_s is not None
                else "--trace gives the arrivals; leave out --concurrency"
            )
        if fleet_replicas is not None:
            raise InvalidInputError(
                "--concurrency sizes a fleet (its rate depends on the fleet's own latency); with --replicas give --rate"
            )
        rate_per_s = 1.0  # the checks below ask for a rate; replaced by the converted one before sizing
    if fleet_replicas is not None and rate_per_s is None and trace_path is None:
        raise InvalidInputError(
            "--replicas runs a given fleet on a traffic; give --rate (and the lengths) or --trace with it"
        )
    sample = None  # --lengths: measured lengths, resampled at --rate (planner.cli.lengths)
    if lengths_path is not None:
        sample = plan_lengths(lengths_path, rate_per_s, context, {
            "--prompt-tokens": prompt_tokens, "--output-tokens": output_tokens, "--prompt-tokens-high":
            prompt_tokens_high, "--output-tokens-high": output_tokens_high, "--dataset": dataset_name,
            "--trace": trace_path,
        })  # fmt: skip
        prompt_tokens, output_tokens = sample.prompt_mean_tokens, sample.output_mean_tokens
    if trace_path is not None:
        given = [n for n, v in (("--rate", rate_per_s), ("--prompt-tokens", prompt_tokens),
                                ("--output-tokens", output_tokens), ("--dataset", dataset_name)) if v is not None]  # fmt: skip
        given += ["--burstiness"] * _given("burstiness")
        if given:
            raise InvalidInputError(f"--trace gives the arrivals and lengths; leave out {' and '.join(given)}")
        read = read_json_lines_rows if looks_like_json_lines(trace_path) else read_csv_rows
        trace = trace_load(read(trace_path, MAX_PROMPTS, "a trace file", comments=True), str(trace_path))
        rate_per_s, prompt_tokens, output_tokens = trace.rate_per_s, trace.prompt_mean_tokens, trace.output_mean_tokens
        _check_longest(f"--trace {trace_path} has", trace.longest_tokens, context)
        if trace.is_burst and fleet_replicas is not None:
            raise InvalidInputError(
                f"--trace {trace_path} is a burst (its {counted(len(trace.lengths), 'request')} all arrive at the same "
                "time), which has no rate for a given fleet's capacity and headroom; leave out --replicas to size the "
                "fleet on the burst"
            )
        if trace.is_burst and ttft_target is None and tpot_target is None:
            raise InvalidInputError(
                f"--trace {trace_path} is a burst (its {counted(len(trace.lengths), 'request')} all arrive at the same "
                "time), which has no rate to size on capacity; give --ttft-target or --tpot-target"
            )
    if dataset_name is not None:
        if prompt_tokens is not None or output_tokens is not None:
            raise InvalidInputError(
                "--dataset gives the lengths; give either --dataset or --prompt-tokens and --output-tokens, not both"
            )
        if rate_per_s is None:
            raise InvalidInputError("--dataset is the traffic's lengths under load; give --rate with it")
        traffic = dataset_traffic(dataset_name)
        prompt_tokens, output_tokens = traffic.prompt_mean_tokens, traffic.output_mean_tokens
        _check_longest(f"--dataset {traffic.name} sends", traffic.longest_tokens, context)
    if rate_per_s is not None and (prompt_tokens is None or output_tokens is None):
        raise InvalidInputError(
            "--rate needs --prompt-tokens and --output-tokens (the mean lengths under load), --lengths FILE (measured "
            "lengths), or --dataset"
        )
    # the high lengths' percentile (a review's high_percentile), the targets' --percentile unless given (trial 28 F5)
    length_q = length_percentile_of(percentile, length_percentile)
    check_length_percentile(length_percentile, prompt_tokens_high, output_tokens_high)
    check_high_lengths(
        prompt_tokens_high, output_tokens_high, prompt_tokens, output_tokens, length_q,
        at_rate=rate_per_s is not None and traffic is None and trace is None,
        by="percentile" if length_percentile is None else "length_percentile",
    )  # fmt: skip
    if rate_per_s is None and max_num_seqs is not None:
        raise InvalidInputError("--max-num-seqs sets a replica's limit under load; give --rate (or --trace) with it")
    if rate_per_s is None and (speculative_tokens is not None or acceptance_length is not None):
        raise InvalidInputError("--speculative-tokens and --acceptance-length size a fleet under load; give --rate")
    if speculative_method is not None and speculative_tokens is None:
        raise InvalidInputError(
            "--speculative-method names the draft of speculative decoding; give --speculative-tokens and "
            "--acceptance-length with it"
        )
    if rate_per_s is None and (prompt_tokens is None) != (output_tokens is None):
        raise InvalidInputError(
            "--prompt-tokens and --output-tokens are one request's lengths (under load with --rate, else the request "
            "the cost with prompt processing is priced at); give both, and give --rate to size a fleet under load"
        )
    if rate_per_s is None and (ttft_target is not None or tpot_target is not None):
        raise InvalidInputError("--ttft-target and --tpot-target size a fleet under load; give --rate with them")
    given = [
        f"--{n.replace('_', '-')}" for n in ("burstiness", "percentile", "prefix_hit_rate", "routing") if _given(n)
    ]
    if prefix_hit_rate is not None and traffic is not None and traffic.prefix_hit_rate:
        raise InvalidInputError(
            f"--dataset {traffic.name} sets the prefix hit from its shared prefix "
            f"({fmt_percent(traffic.prefix_hit_rate)} of each prompt); leave out --prefix-hit-rate"
        )
    if rate_per_s is None and given:
        verb, them = ("shape", "them") if len(given) > 1 else ("shapes", "it")
        raise InvalidInputError(f"{' and '.join(given)} {verb} the traffic under load; give --rate with {them}")
    if traffic is None and trace is None and prompt_tokens is not None and prompt_tokens + output_tokens > context:
        raise InvalidInputError(
            f"--prompt-tokens {prompt_tokens:,} + --output-tokens {output_tokens:,} are more than --context "
            f"{context:,} (the tokens one sequence may hold, prompt + output); give --context "
            f"{math.ceil(prompt_tokens + output_tokens):,} or more"
        )
    cat = load(catalog_dirs)
    amortization_months = options.pop("amortization_months")
    owned = ""  # where the cost is a bought GPU's, owned: its words (trial 32 F3)
    if options.get("price_per_gpu_hour") is None and (
        options.get("price_kind") == "purchase"
        or (options.get("price_kind") == "on-demand" and no_rental_price(cat.gpu(gpu)))
    ):
        hourly, owned = owned_usd_per_gpu_hour(
            cat.gpu(gpu), model_name, amortization_months, options.get("price_basis")
        )
        options |= {"price_per_gpu_hour": hourly, "price_kind": "on-demand", "price_basis": None}
    spec = None
    if rate_per_s is not None:  # MTP's layers are loaded with the model: the plan's weights hold them
        spec = speculation_for(
            model_name, speculative_tokens, acceptance_length, catalog=cat, method=speculative_method
        )
    served = served_model(model_name, spec, cat)
    request = {}  # one request's whole tokens: the cost line then adds each request's prompt processing
    if prompt_tokens is not None and output_tokens is not None:
        prompt, output = fixed_length_tokens(prompt_tokens), fixed_length_tokens(output_tokens)
        output = max(min(output, int(context) - prompt), 1)  # a dataset's or trace's means, rounded, within the context
        request = dict(prompt_tokens=prompt, output_tokens=output)
    p = plan(gpu, served, context, catalog=cat, **request, **options)  # the options by their API names
    if explain and p.breakdown_refused:  # dp-ep: before any sizing under load
        raise InvalidInputError(p.breakdown_refused)
    sized = None
    others: tuple[OtherLayout, ...] = ()
    hit = prefix_hit_rate if prefix_hit_rate is not None else traffic.prefix_hit_rate if traffic else 0.0
    check: FleetCheck | None = None
    forward: tuple[str, dict] | None = None  # --replicas that misses: the rate it serves, the fleet sized instead
    margin: MarginCheck | None = None
    sent_output = output_tokens
    spread_line = ""
    tail = ""  # where a length is past any lognormal (3.87 at p95): the truncated fit's warning
    fits_json: dict | None = None  # --json's under_load.length_fit: null where every request is at the means
    cut = 0  # drawn requests longer than --context, cut to it (``cut_to_context``)
    if rate_per_s is not None:
        run_prompt, run_output = prompt_tokens, output_tokens  # a dataset's means, its lengths drawn around them
        if traffic is None or not float(prompt_tokens + output_tokens).is_integer():
            # a fixed-length run, a trace's or a dataset sample's step tables: the means in whole tokens
            run_prompt, run_output = fixed_length_tokens(prompt_tokens), fixed_length_tokens(output_tokens)
        lengths = traffic.lengths if traffic else trace.lengths if trace else None
        if sample is not None:  # --lengths: the file's rows drawn with replacement, seeded
            lengths = resampled_lengths(sample.prompt_tokens, sample.output_tokens, sizing_requests(float(percentile)))
            spread_line = lengths_line(sample, lengths, length_q)
        if prompt_tokens_high is not None or output_tokens_high is not None:  # drawn as planner export draws them
            lengths = sized_lengths(
                run_prompt, run_output, prompt_tokens_high, output_tokens_high, length_q, percentile,
                p.model.max_context,
            )  # fmt: skip
            drawn = lengths
            lengths, cut = cut_to_context(drawn, p.context)  # a request cannot be longer than the engine's context
            spread_line = spread_words(lengths, prompt_tokens_high, output_tokens_high, length_q)
            tail = spread_fit_note(
                run_prompt, prompt_tokens_high or run_prompt, run_output, output_tokens_high or run_output,
                length_q,
            )  # fmt: skip
            spread_line += f"\n  warning: {tail}" if tail else ""
            fits_json = length_fits_as_dict(
                run_prompt, prompt_tokens_high or run_prompt, run_output, output_tokens_high or run_output, length_q,
            )  # fmt: skip
            highs = (prompt_tokens_high or run_prompt, output_tokens_high or run_output)
            past = context_cut_note(drawn, lengths, cut, p.context, highs, length_q)
            spread_line += f"\n  note: {past}" if past else ""
        sent_output = output_tokens if lengths else run_output  # what each simulated request emits, on average
        if tpot_target is not None and one_output_token(output_tokens, lengths):
            raise InvalidInputError(
                f"--tpot-target: {NO_TPOT_WITH_ONE_TOKEN}, so a TPOT target has nothing to hold; leave out "
                "--tpot-target to size the fleet on TTFT alone"
                + (
                    f" (every request of {'the trace' if trace else 'the lengths file' if sample else 'the dataset'}"
                    " emits one output token)"
                    if lengths
                    else ", or give --output-tokens of 2 or more"
                )
            )
        # without --gpus, each group from the smallest that holds the model, the one whose fleet needs fewest GPUs
        groups = (p.gpus,)
        if options.get("gpus") is None and fleet_replicas is None:
            groups = tuple(n for n in groups_to_try(p.model, catalog=cat, parallelism=p.parallelism, engine=p.engine)
                           if n >= p.gpus) or groups  # fmt: skip
        # one replica per group (the plan's deployment on n GPUs); only the kept group needs its whole plan
        given_util = options.get("memory_utilization")  # the simulated replica at the share given, not the default
        base = dc_replace(
            replica_of(p, cat, options.get("calibration"), given_util), speculative=spec, max_num_seqs=max_num_seqs
        )
        replicas = {n: dc_replace(base, gpus=n) for n in groups}
        load_args = (run_prompt, run_output, rate_per_s)
        load_kwargs = dict(
            percentile=float(percentile), ttft_target_s=ttft_target or math.inf,
            tpot_target_s=tpot_target or math.inf, burstiness=burstiness, lengths=lengths, prefix_hit_rate=hit,
            arrivals_s=trace.arrivals_s if trace else None, routing=routing,
        )  # fmt: skip
        if concurrency is not None:  # requests in flight -> requests/s, the export's fixed point (trial 32 F2)
            rate_per_s, concurrency_line = concurrency_rate(
                concurrency, p, replicas, run_prompt, run_output, load_kwargs
            )
            load_args = (run_prompt, run_output, rate_per_s)
        if fleet_replicas is not None:  # a given fleet at the rate, not sized: check_fleet
            check = check_fleet(
                replicas[p.gpus], *load_args, fleet_replicas, percentile=float(percentile),
                ttft_target_s=ttft_target or math.inf, tpot_target_s=tpot_target or math.inf, burstiness=burstiness,
                lengths=lengths, prefix_hit_rate=hit, routing=routing, arrivals_s=trace.arrivals_s if trace else None,
            )  # fmt: skip
            sized = sizing_of(check)
            choice = None
            if not check.meets:  # the way forward: the fleet plan sizes for the same traffic and targets on this group
                forward = way_forward(check, p, replicas[p.gpus], load_args, load_kwargs)
        else:
            choice = fewest_gpus(replicas, *load_args, **load_kwargs)
            sized = choice.sizing
        if choice is not None and choice.gpus_per_replica != p.gpus:
            p = plan(gpu, served, context, catalog=cat, **request, **(options | {"gpus": choice.gpus_per_replica}))
        sent = lengths or fixed_lengths(run_prompt, run_output, DEFAULT_REQUESTS)
        _, run_setup = serving_run_setup(replicas[p.gpus], run_prompt, run_output, sent)  # cached: as just simulated
        # the Budget review's margin beside a fleet sized (or given) on the prediction: one more search at its slow end
        margin = margin_check(sized, p, replicas[p.gpus], load_args, load_kwargs) if sized else None
        # the engine's max_num_seqs against the review's rule (what memory holds at the high-percentile request)
        seqs_line = (
            max_num_seqs_line(
                replicas[p.gpus],
                sized,
                lengths or sent,
                load_args,
                load_kwargs,
                max_num_seqs,
                sample.slot_tokens(slot_percentile(length_q))
                if sample
                else (prompt_tokens_high or run_prompt) + (output_tokens_high or run_output)
                if spread_line
                else None,
                length_q=length_q,
                context=p.context,
            )  # fmt: skip
            if sized and not sized.is_burst
            else ""
        )
        # with both targets, the fleet each alone needs on the kept group: which one binds (a sized fleet only)
        binding = binding_target(replicas[p.gpus], *load_args, **load_kwargs) if sized and check is None else None
        # the plan's other layouts on the same group (a MoE model's), sized for the same targets: the same question
        others = tuple(
            _other_layout(dc_replace(replicas[p.gpus], parallelism=alt.parallelism), load_args, load_kwargs)
            for alt in p.alternatives
            if alt.gpus == p.gpus and check is None
        )
    binding = binding if rate_per_s is not None else None
    seqs_line = seqs_line if rate_per_s is not None else ""
    fluctuation_lines: tuple[str, ...] = ()
    spread: SamplingSpread | None = None
    draws = ""  # where the arrival draws disagree on the targets: said under the replicas and in the warnings
    if sized is not None and not sized.is_burst:  # the busy minutes against the capacity, one notion in both modes
        cap_each = (
            check.capacity_per_s if check is not None else capacity_per_s(replicas[p.gpus], run_prompt, run_output, hit)
        )
        if trace is None:  # at a rate: the percentiles over several arrival draws, not one draw's alone
            edge = draws_edge(  # the one computation of the fleet's edge (PLANNER_WHY and the workbook run it too)
                replicas[p.gpus], run_prompt, run_output, rate_per_s, sized.replicas, percentile=float(percentile),
                ttft_target_s=ttft_target or math.inf, tpot_target_s=tpot_target or math.inf, burstiness=burstiness,
                lengths=lengths, prefix_hit_rate=hit, routing=routing,
            )  # fmt: skip
            spread = edge.spread
            draws = edge.warning(p.gpus, check is not None)
        busy = busy_minutes_line(trace, sized, cap_each, burstiness, routing)
        fluctuation_lines = tuple(x for x in (sampling_spread_line(spread, burstiness), busy) if x)
    ranges = load_loaded_ranges() if sized else {}
    notes = held_out_range_notes(p, options.get("calibration")) if sized and ranges else []
    if spec is not None:  # a speculating deployment is another: the plan's published runs are not its own
        p = dc_replace(p, published_runs=())
    # trial 33 F10: the fleet at the margin's slow end is no budget figure (the line under the head; --json's key)
    verdict = margin_verdict_line(margin, sized, p) if sized and margin is not None else ""
    if as_json:
        out = (
            plan_as_dict(dc_replace(p, price_source=owned) if owned else p)
            | {"margin_verdict": verdict or None}
            | (
                {"under_load": sizing_as_dict(sized, p, sent_output, length_q) | {"prefix_hit_rate": hit}}
                if sized
                else {}
            )
        )
        out["warnings"] = [*out.get("warnings", []), *([tail] if tail else []), *([draws] if draws else [])]
        if check is not None:  # --replicas: the given fleet, sized on nothing
            out.setdefault("under_load", {"replicas": check.replicas, "gpus": check.replicas * p.gpus})
            out["under_load"] |= {"sized_on": "given (--replicas)", "fleet_check": fleet_check_as_dict(check)}
            out["under_load"]["fleet_check"]["way_forward"] = forward[1] if forward else None
        if sized:
            out["under_load"]["groups_tried"] = groups_as_dict(choice) if choice is not None else []
            out["under_load"]["max_sequences_at_once"] = {"per_rank": run_setup.cap, "ranks": run_setup.ranks}
            out["under_load"]["other_layouts"] = [
                {
                    "parallelism": o.parallelism,
                    "gpus_per_replica": p.gpus,
                    "replicas": o.replicas or None,
                    "gpus": o.replicas * p.gpus or None,
                    "reason": o.reason or None,
                }
                for o in others
            ]
            out["under_load"]["held_out_ranges"] = held_out_ranges_as_dict(
                sized, ranges, _arrival(sized), p.slow_end_open
            )
            out["under_load"]["held_out_ranges_notes"] = notes
            out["under_load"]["held_out_ranges_scope"] = (
                f"the held-out ranges {POOLED_RANGES}; {deployment_range_words(p)}"
            )
            # a fleet is never sized past a replica's capacity (without targets it is sized on it): kept for readers
            out["under_load"]["past_capacity"] = False
            if out["under_load"].get("capacity_per_s") is None and not sized.is_burst:  # sized on targets: its own
                out["under_load"]["capacity_per_s"] = (
                    check.capacity_per_s if check is not None else capacity_per_s(replicas[p.gpus], *load_args[:2], hit)
                )
            out["under_load"]["dataset"] = dataset_as_dict(traffic) if traffic else None
            out["under_load"]["trace"] = trace_as_dict(trace) if trace else None
            out["under_load"]["lengths_file"] = lengths_as_dict(sample, float(percentile)) if sample else None
            out["under_load"]["routing"] = routing
            # --concurrency: the requests in flight given and the line saying how they became the rate (trial 32 F2)
            out["under_load"]["concurrency"] = (
                {"in_flight_requests": concurrency, "rate_per_s": rate_per_s, "conversion": concurrency_line}
                if concurrency is not None
                else None
            )
            out["under_load"]["length_fit"] = fits_json  # the fits drawn from; "truncated": the long-tail fit
            out["under_load"]["requests_cut_to_context"] = cut  # drawn longer than --context, sized cut to it
            # at a rate: the percentiles over several arrival draws (``sampling_spread``; null: a trace or a burst)
            out["under_load"]["sampling_spread"] = (
                None
                if spread is None
                else {
                    "percentile": spread.percentile,
                    "seeds": list(spread.seeds),
                    "ttft_s": list(spread.ttft_s),
                    "tpot_s": None if math.isnan(spread.tpot_s[0]) else list(spread.tpot_s),
                    "draws_missing_targets": spread.draws_missing,
                }
            )
            out["under_load"]["margin"] = margin_check_as_dict(margin, p.gpus) if margin is not None else None
            out["under_load"]["binding_target"] = (
                None
                if binding is None
                else {
                    "binding": binding.binding,
                    "ttft_alone_replicas": binding.ttft_alone,
                    "tpot_alone_replicas": binding.tpot_alone,
                    "capacity_alone_replicas": binding.capacity_alone or None,
                    "prefill_stalls_decodes": binding.prefill_stalls,
                }
            )
        if spec is not None:
            out["under_load"]["speculative"] = {
                "method": spec.method,
                "draft": spec.draft,
                "draft_params": spec.draft_params,
                "speculative_tokens": spec.draft_steps,
                "acceptance_length": spec.acceptance_length,
            }
        echo(json.dumps(out, indent=2))
    else:
        text = (
            render_sizing(
                sized,
                p,
                rate_per_s,
                prompt_tokens,
                output_tokens,
                spec,
                traffic,
                prefix_hit_rate,
                trace,
                choice,
                run_setup,
                given=check is not None,
                routing=routing,
                sent_output=sent_output,
                margin=margin,
                binding=binding,
                seqs_line=seqs_line,
                spread_line=spread_line,
                fluctuation_lines=fluctuation_lines,
                draws_warning=draws,
                requests=len(sent),
                lengths=sent,
                length_q=length_q,
            )
            + "".join(f"\n{_other_layout_line(o, p, sized)}" for o in others)
            if sized
            else ""
        )
        if check is not None:
            if sized is None:  # past capacity at the rate: no percentile to show
                head = (
                    trace_line(trace, p, check.replicas, routing)
                    if trace is not None
                    else _rate_line(rate_per_s, prompt_tokens, output_tokens, p, routing, len(sent))
                )
                text = f"\n\n{head}"
            text += "".join(f"\n{line}" for line in fleet_check_lines(check, p))
            text += f"\n{forward[0]}" if forward else ""
        lines = (
            held_out_range_lines(sized, ranges, _arrival(sized), deployment_range_words(p), p.slow_end_open)
            if sized
            else []
        )
        lines += [f"    ({note})" for note in notes] if lines else []
        text += "".join("\n" + line for line in lines)
        text = f"\n\n{concurrency_line}" + text if concurrency is not None else text
        explained = "".join("\n" + line for line in explain_lines(p)) if explain else ""
        echo(render_plan(dc_replace(p, price_source=owned) if owned else p, verdict) + text + explained)


def routing_words(routing: str) -> str:
    """How ``--rate`` deals the traffic over the replicas, as the "Under load" line states it
    (``planner.serving.fleet.replica_burstiness``)."""
    if routing == "round-robin":
        return (
            "the traffic's arrivals dealt round-robin over the replicas (--routing round-robin), each replica taking "
            "one request in k (a --burstiness b is the incoming traffic's: each of k replicas sees gaps of gamma "
            "shape k b)"
        )
    return (
        "the traffic's arrivals routed at random over the replicas (--routing random), each replica taking its share "
        "of the rate (a --burstiness b is the incoming traffic's: each of k replicas sees gaps of gamma shape "
        "k b / (1 + (k - 1) b))"
    )


def spread_words(
    lengths: list[tuple[int, int]] | None, prompt_high: int | None, output_high: int | None, q: float
) -> str:
    """The line under "Under load" saying the lengths were drawn (``--prompt-tokens-high`` / ``--output-tokens-high``):
    the highs asked and what the drawn requests hold (``planner.serving.load.spread_lengths``)."""
    if not lengths:
        return "  lengths: every request at the means (each high length equals its mean)"
    drawn = np.asarray(lengths, dtype=float)
    asked = [f"{w} p{q:g} {h:,}" for w, h in (("prompt", prompt_high), ("output", output_high)) if h is not None]
    return (
        f"  lengths: {counted(len(lengths), 'request')} drawn lognormal around the means ({', '.join(asked)} tokens; "
        f"seeded, as planner export sizes): drawn means {drawn[:, 0].mean():,.0f} / {drawn[:, 1].mean():,.0f}, "
        f"p{q:g} {np.percentile(drawn[:, 0], q):,.0f} / {np.percentile(drawn[:, 1], q):,.0f} tokens, "
        f"longest {int(drawn.sum(axis=1).max()):,} (prompt + output)"
    )


def context_cut_note(
    drawn: list[tuple[int, int]] | None,
    cut: list[tuple[int, int]] | None,
    count: int,
    context: int,
    highs: tuple[float, float],
    q: float,
) -> str:
    """The note under the lengths line where drawn requests were longer than --context and are sized cut to it
    (``planner.serving.load.cut_to_context``): how many, the drawn means after the cut, the longest drawn and the
    --context that serves every one whole; and, where the stated high lengths themselves are longer than the
    context, that the high request cannot be sent whole (a second note). "" where neither (the ordinary case)."""
    notes = []
    if count:
        before, means = np.asarray(drawn, dtype=float).mean(axis=0), np.asarray(cut, dtype=float).mean(axis=0)
        longest = int(np.asarray(drawn, dtype=np.int64).sum(axis=1).max())
        notes.append(
            f"{count:,} of {len(drawn):,} drawn requests are longer than --context {context:,} (prompt + output; the "
            f"longest {longest:,}) and are sized cut to it (prompt truncated, as an application capping its context "
            f"does; an engine started with --max-model-len {context} rejects them whole): drawn means "
            f"{before[0]:,.0f} / {before[1]:,.0f} before the cut, {means[0]:,.0f} / {means[1]:,.0f} after (the "
            f"lengths above); to serve them whole give --context {longest:,} or more"
        )
    slot = float(highs[0] + highs[1])
    if slot > context:
        notes.append(
            f"the stated p{q:g} prompt + p{q:g} output ({slot:,.0f} tokens) is itself longer than --context "
            f"{context:,}: the p{q:g} request is never served whole at this context; to size on it give --context "
            f"{slot:,.0f} or more; a capped context's own tail: --prompt-tokens-high at most "
            f"{max(context - highs[1], 1):,.0f}"
        )
    return "\n  note: ".join(notes)


def _rate_line(
    rate_per_s: float,
    prompt_tokens: float,
    output_tokens: float,
    p: Plan,
    routing: str = "random",
    requests: int = DEFAULT_REQUESTS,
) -> str:
    """The "Under load" line of ``--rate``: the traffic, the simulation (``requests`` a replica) and how the traffic
    is routed."""
    return (
        f"Under load: {rate_per_s:g} requests/s of {_tokens(prompt_tokens)}-token prompts and "
        f"{_tokens(output_tokens)}-token outputs, computed by planner's serving simulation "
        f"({_streams_words(p, requests)}; "
        f"{routing_words(routing)})"
    )


def sizing_of(check: FleetCheck) -> Sizing | None:
    """A given fleet's run as a ``Sizing`` to render (``render_sizing``, the held-out ranges); None where each
    replica is past its capacity at the rate (no run to show)."""
    if check.result is None:
        return None
    cap = check.capacity_per_s if check.on_capacity else math.nan
    return Sizing(
        check.replicas, check.rate_per_replica_s, check.result, check.percentile, check.ttft_target_s,
        check.tpot_target_s, cap,
    )  # fmt: skip


def _headroom_words(c: FleetCheck) -> str:
    """The headroom over the rate as ``fleet_check_lines`` says it: "+5%", "over +100%" (inf: past ``LOAD_CURVE``'s
    2x), "-12%" (a shortfall), "under -75%" (even a quarter of the rate misses)."""
    if math.isinf(c.headroom):
        return f"over +{LOAD_CURVE[-1] - 1:.0%}"
    if c.headroom <= -1 and not c.on_capacity:
        return f"under -{1 - LOAD_CURVE[0]:.0%}"
    return f"{c.headroom:+.0%}"


def _verdict(c: FleetCheck) -> str:
    """ "meets" / "misses" the targets (or, without targets, its capacity), with the figures that decide it."""
    if c.result is None:
        busiest = " (the trace's mean rate)" if c.replayed else ""
        return (
            f"misses: {c.judged_rate_per_replica_s:.3g} requests/s each{busiest} is at or past one replica's capacity "
            f"({c.capacity_per_s:.3g} requests/s, simulated steady state), so its queue grows without bound"
        )
    q, r = f"p{c.percentile:g}", c.result
    if c.on_capacity:
        return f"meets: each below its capacity ({c.rate_per_replica_s:.3g} of {c.capacity_per_s:.3g} requests/s)"
    figures = [f"TTFT {fmt_seconds(r.ttft_s.at(c.percentile))}"] * math.isfinite(c.ttft_target_s)
    figures += [f"TPOT {fmt_seconds(r.tpot_s.at(c.percentile))}"] * math.isfinite(c.tpot_target_s)
    return f"{'meets' if c.meets else 'misses'} ({q} {', '.join(figures)})"


def fleet_check_lines(c: FleetCheck, p: Plan) -> list[str]:
    """``--replicas``' verdict under the fleet's figures: the targets met or missed at the rate, each replica's
    capacity (CAPACITY_RPS) and, with targets, the most each takes within them and the headroom over the rate
    (``headroom_over``, the review's rule, to ``HEADROOM_STEP``), then one replica lost at the same rate."""
    q = f"p{c.percentile:g}"
    targets = [f"TTFT <= {fmt_seconds(c.ttft_target_s)}"] * math.isfinite(c.ttft_target_s)
    targets += [f"TPOT <= {fmt_seconds(c.tpot_target_s)}"] * math.isfinite(c.tpot_target_s)
    against = f"the targets ({q} {', '.join(targets)})" if targets else "capacity (no targets given)"
    traffic = f"the trace's {c.rate_per_s:.3g} requests/s" if c.replayed else f"{c.rate_per_s:g} requests/s"
    lines = [
        f"  fleet given: {c.replicas:,} x {p.gpus:,} x {p.gpu.name} = {counted(c.replicas * p.gpus, 'GPU')} at "
        f"{traffic}, {c.rate_per_replica_s:.3g} each",
        f"  against {against}: {_verdict(c)}",
    ]
    capacity = f"  capacity per replica: {c.capacity_per_s:.3g} requests/s in steady state (Excel CAPACITY_RPS)"
    if c.on_capacity:
        capacity += f"; headroom over the rate: {_headroom_words(c)} ({c.replicas:,} x capacity / rate - 1)"
    elif math.isinf(c.headroom):
        capacity += (
            f"; within the targets: over {LOAD_CURVE[-1] * c.rate_per_replica_s:.3g} requests/s each (the targets "
            f"hold at {LOAD_CURVE[-1]:g}x the rate); headroom over the rate: {_headroom_words(c)}"
        )
    elif c.headroom <= -1:
        capacity += (
            f"; within the targets: none at {LOAD_CURVE[0]:g}x the rate; headroom over the rate: {_headroom_words(c)}"
        )
    else:
        capacity += (
            f"; within the targets: {c.rate_within_targets_per_replica_s:.3g} requests/s each; headroom over the "
            f"rate: {_headroom_words(c)} (bisected to {HEADROOM_STEP:.0%}, as the review's Latency sheet)"
        )
    if c.replayed and not c.on_capacity:
        capacity += "; a multiple of a trace's rate is the trace replayed that much faster (its arrival times / it)"
    lines.append(capacity)
    if c.one_lost is None:
        lines.append("  one replica lost: none left to serve the rate (one replica given)")
    else:
        o = c.one_lost
        holds = "the targets still hold" if o.meets and targets else "capacity still holds" if o.meets else ""
        lines.append(
            f"  one replica lost: {counted(o.replicas, 'replica')} at "
            + (f"the trace's {o.rate_per_s:.3g} requests/s, " if o.replayed else f"{o.rate_per_s:g} requests/s, ")
            + f"{o.rate_per_replica_s:.3g} each: {_verdict(o)}"
            + (f"; {holds}" if holds else f"; {'the targets do' if targets else 'capacity does'} not hold")
            + f" (headroom {_headroom_words(o)})"
        )
    return lines


def way_forward(c: FleetCheck, p: Plan, replica, load_args: tuple, load_kwargs: dict) -> tuple[str, dict]:
    """Where a given fleet (``--replicas``) misses: the rate it serves within the targets (its replicas x the most
    each takes, ``FleetCheck.rate_within_targets_per_replica_s``; none where even ``LOAD_CURVE``'s first multiple
    misses), and the fleet ``planner plan`` sizes without --replicas on the same group (``fewest_gpus``, the same
    search), or why none meets the targets. The line and its --json object. Trial 29 F14: 2 x 8 H100 at 6
    requests/s of RAG prompts missed with "none at 0.25x the rate" and no fleet named; the sizing gives 9 x 8."""
    targets = math.isfinite(c.ttft_target_s) or math.isfinite(c.tpot_target_s)
    within = "within the targets" if targets else "within its capacity"
    unit = "the trace's rate" if c.replayed else "the rate"
    if c.on_capacity or c.headroom > -1:
        serves = c.replicas * c.rate_within_targets_per_replica_s
        said = f"this fleet serves {serves:.3g} requests/s {within}"
    else:
        serves = 0.0
        said = (
            f"this fleet serves none {within}, even at {LOAD_CURVE[0]:g}x {unit} "
            f"({LOAD_CURVE[0] * c.rate_per_s:.3g} requests/s; its capacity, "
            f"{c.replicas * c.capacity_per_s:.3g} requests/s, is past them)"
        )
    doc: dict = {"rate_within_targets_per_s": serves, "sized_replicas": None, "sized_gpus": None, "refused": None}
    try:
        sized = fewest_gpus({p.gpus: replica}, *load_args, **load_kwargs).sizing
    except PlannerError as exc:  # no number of replicas of this group meets them: its reason, as plan refuses
        doc["refused"] = str(exc)
        return f"  way forward: {said}; no fleet of {p.gpus:,}-GPU replicas meets them: {exc}", doc
    doc |= {"sized_replicas": sized.replicas, "sized_gpus": sized.replicas * p.gpus}
    rate = f"the trace's {c.rate_per_s:.3g}" if c.replayed else f"{c.rate_per_s:g}"
    return (
        f"  way forward: {said}; {rate} requests/s {within} needs {sized.replicas:,} x {p.gpus:,} x {p.gpu.name} = "
        f"{counted(sized.replicas * p.gpus, 'GPU')} (drop --replicas: planner plan sizes it, the same search)",
        doc,
    )


def fleet_check_as_dict(c: FleetCheck) -> dict:
    """``--replicas``' verdict for --json: rates in requests/s, the headroom a share (null: over ``LOAD_CURVE``'s
    end), the one-replica-lost check nested (null for one replica)."""
    return {
        "replicas": c.replicas,
        "rate_per_s": c.rate_per_s,
        "rate_per_replica_per_s": c.rate_per_replica_s,
        "meets": c.meets,
        "past_capacity": c.result is None,
        "capacity_per_replica_per_s": c.capacity_per_s,
        "rate_within_targets_per_replica_per_s": (
            None if math.isinf(c.rate_within_targets_per_replica_s) else c.rate_within_targets_per_replica_s
        ),
        "headroom": None if math.isinf(c.headroom) else c.headroom,
        # a trace's multiples: the trace replayed that much faster (its arrival times / the multiple)
        "headroom_by": "the trace replayed faster" if c.replayed else "the rate",
        # a trace's busiest CAPACITY_WINDOW_S, a replica's share (warned about past the capacity; null at a rate)
        "busiest_window_rate_per_replica_per_s": c.busiest_rate_per_replica_s if c.replayed else None,
        "busiest_window_past_capacity": c.busy_window_past if c.replayed else None,
        # at a rate: the share of its minutes past each replica's capacity (``poisson_minutes_past``; null: a trace)
        "minutes_past_capacity_share": None if c.replayed else c.minutes_past,
        "one_lost": fleet_check_as_dict(c.one_lost) if c.one_lost is not None else None,
    }


def dataset_traffic(name: str) -> DatasetLoad:
    """``--dataset``'s traffic (``planner.serving.load.dataset_load``, 1,000 requests as its client sends them); a
    dataset without a published mean length is refused with the options to give instead."""
    try:
        return dataset_load(name)
    except NoPublishedLengthError as exc:
        raise NoPublishedLengthError(
            exc.name, exc.missing, "give --prompt-tokens and --output-tokens instead of --dataset"
        ) from None


def dataset_as_dict(t: DatasetLoad) -> dict:
    """``--dataset``'s traffic for --json: its name, client, mean lengths (tokens), prefix hit and source."""
    return {
        "name": t.name,
        "client": t.client,
        "prompt_mean_tokens": t.prompt_mean_tokens,
        "output_mean_tokens": t.output_mean_tokens,
        "longest_tokens": t.longest_tokens,
        "prefix_hit_rate": t.prefix_hit_rate,
        "source": t.source,
    }


def _held(setup, lengths: list | None, q: float) -> tuple[str, int]:
    """What one rank's KV cache holds at the sent requests' mean lengths and at their ``q``-th percentile lengths
    (prompt and output each, as the lengths line states them): its tokens over each request's, whole blocks where
    the engine reserves them; the words and the count at the high lengths. ("", 0) where every request is alike
    (the cap is then taken at that one length) or the cache never binds. Trial 29 F6: 1,332,800 tokens hold 107
    requests of 11,828 + 355 tokens and 43 of 29,497 + 896, where the run's cap (taken at the shortest drawn
    request) read "at least 1,000"."""
    kv, block = float(setup.scheduler.kv_tokens), max(int(setup.scheduler.block_tokens), 1)
    if not lengths or not math.isfinite(kv) or len(set(lengths)) < 2:
        return "", 0
    drawn = np.asarray(lengths, dtype=float)
    mean = [int(round(v)) for v in drawn.mean(axis=0)]
    high = [int(round(v)) for v in np.percentile(drawn, q, axis=0)]
    at_mean, at_high = (int(kv // (math.ceil(sum(x) / block) * block)) for x in (mean, high))
    words = (
        f"its KV cache's {kv:,.0f} tokens hold about {at_mean:,} requests at the mean lengths ({mean[0]:,} + "
        f"{mean[1]:,} tokens) and {at_high:,} at the p{q:g} lengths ({high[0]:,} + {high[1]:,})"
    )
    return words, at_high


def _at_once(setup, p: Plan, lengths: list | None = None, q: float = 95.0) -> str:
    """ "running at most 1,024 sequences at once (...)": the most a replica (each attention rank) decodes together in
    the simulated run, ``ServingSetup.cap``, the engine's limit or what the KV cache holds of the shortest requests
    sent (every request, at fixed lengths; of a dataset or trace, longer requests hold fewer at once). Where the
    requests sent (``lengths``) differ, what the cache holds at their mean and ``q``-th percentile lengths as well
    (``_held``), and "able to run all ... at once" only where it holds them all at the high lengths."""
    who = f"each of its {setup.ranks} attention ranks" if setup.ranks > 1 else "each"
    engine = p.engine_release or p.engine.name  # the release asked for, not its profile's name (trial 28 F12)
    held, at_high = _held(setup, lengths, q)
    if setup.cap >= setup.num_prompts:  # the run's own requests bound it, not the engine or the memory
        if not held or at_high >= setup.num_prompts:
            return (
                f"{who} able to run all {counted(setup.num_prompts, 'request')} of the simulated run at once (the "
                f"engine's max_num_seqs and the KV cache hold at least that many, as {engine} admits them)"
            )
        return (
            f"{who} admitting the simulated run's {counted(setup.num_prompts, 'request')} as its KV cache has room "
            f"(the engine's max_num_seqs is no lower; {held}, as {engine} admits them token by token: more of the "
            "short ones)"
        )
    return (
        f"{who} running at most {counted(setup.cap, 'sequence')} at once (the engine's max_num_seqs or, where "
        f"fewer, what the KV cache holds at the shortest request's length, as {engine} admits them: the simulated "
        "run's limit" + (f"; {held}" if held else "") + ")"
    )


#: Fewer requests than this on the simulated replica: its high percentiles rest on a handful of them.
FEW_REQUESTS = 100


def _few_requests(requests: int) -> str:
    """Where a trace has under ``FEW_REQUESTS`` requests (every replica's share is simulated and pooled,
    ``planner.serving.fleet.replica_shares``): how few its percentiles rest on; "" elsewhere."""
    if requests >= FEW_REQUESTS:
        return ""
    return (
        f"the trace has {counted(requests, 'request')}: its p95 and p99 are its slowest one or two, not a "
        "distribution; a longer trace gives percentiles to plan on"
    )


def sampling_spread_line(spread: SamplingSpread | None, burstiness: float) -> str:
    """The rate's percentiles over several arrival draws (``planner.serving.fleet.sampling_spread``): the range of
    each, the draw shown among them, and how many draws miss the targets; "" without one (a trace, a burst)."""
    if spread is None:
        return ""
    q, n = f"p{spread.percentile:g}", len(spread.seeds)
    kind = "Poisson" if burstiness == 1.0 else f"gamma (shape {burstiness:g})"
    figures = [f"TTFT {fmt_seconds(spread.ttft_s[0])} to {fmt_seconds(spread.ttft_s[1])}"]
    if math.isfinite(spread.tpot_s[0]):
        figures.append(f"TPOT {fmt_seconds(spread.tpot_s[0])} to {fmt_seconds(spread.tpot_s[1])}")
    missing = f"; {spread.draws_missing} of {n} draws miss the targets" if spread.draws_missing else ""
    return (
        f"  sampling spread: {q} {', '.join(figures)} over {n} {kind} arrival draws at this rate (seeds "
        f"{spread.seeds[0]}-{spread.seeds[-1]}; the figures above are seed {spread.seeds[0]}'s){missing}: another "
        "sample of the same traffic lands about this far either way"
    )


def busy_minutes_line(
    trace: TraceLoad | None, s: Sizing, capacity_per_replica_s: float, burstiness: float, routing: str
) -> str:
    """How the traffic's busiest minutes stand against each replica's steady-state capacity, in the one notion both
    modes judge capacity by (trial 24 F2: a fleet refused only where its mean rate is past it). A trace whose busiest
    ``CAPACITY_WINDOW_S`` window (``TraceLoad.busiest_rate_per_s``), a replica's share of it, is at or past the
    capacity: a warning naming it, the queue building there and draining after (in the percentiles shown); at a rate,
    the share of its minutes past the capacity (``poisson_minutes_past``, at the shape each replica sees), what a
    recorded trace of that traffic would show. "" for a burst, below the capacity, or where none is past."""
    if s.is_burst or not math.isfinite(capacity_per_replica_s):
        return ""
    cap = f"the capacity ({capacity_per_replica_s:.3g} requests/s, simulated steady state)"
    if trace is not None:
        busiest = trace.busiest_rate_per_s / s.replicas
        if busiest < capacity_per_replica_s:
            return ""
        each = " a replica" if s.replicas > 1 else ""
        return (
            f"  warning: the trace's busiest {CAPACITY_WINDOW_S:g}-s window comes at {busiest:.3g} requests/s{each}, "
            f"at or past {cap}, where its mean is {trace.active_rate_per_s / s.replicas:.3g}: a queue builds there "
            "and drains after, which the percentiles above include; a longer stretch that busy would not drain"
        )
    shape = replica_burstiness(burstiness, s.replicas, routing)
    share = poisson_minutes_past(s.rate_per_replica_s, capacity_per_replica_s, shape)
    kind = "Poisson" if shape == 1.0 else f"gamma-gap (shape {shape:.3g})"
    words = "under 0.1%" if 0 < share < 0.001 else f"{share:.1%}"
    return (
        f"  busy minutes: {words} of minutes of {kind} traffic at {s.rate_per_replica_s:.3g} requests/s a replica "
        f"({CAPACITY_WINDOW_S:g}-s windows) are past {cap}: "
        "a queue builds in them and drains after (in the simulated run); a recorded trace of this traffic is "
        "judged alike (--trace: its busiest minute warned about, refused only where its mean is past it)"
    )


def offered_output_tokens_per_s(s: Sizing, output_tokens: float) -> float:
    """The output one replica is offered: its requests per second x the mean output tokens (NaN for a burst, which
    has no rate)."""
    return math.nan if s.is_burst else s.rate_per_replica_s * output_tokens


def _output_words(s: Sizing, output_tokens: float) -> str:
    """The "output per replica" figure and what it is: the whole simulated run's output tokens over its duration, as
    ``vllm bench serve`` prints its output throughput, ramp-up and drain included, so a little under the rate offered
    (a trial read 5,613 tokens/s against 20 requests/s x 300 tokens = 6,000 as "cannot keep up"); beside it the rate
    offered, which the replica keeps up with (no fleet is sized, nor a given fleet's run shown, past a replica's
    capacity). A burst's: while it drains."""
    r = s.result
    if s.is_burst:
        return f"{fmt_rate(r.output_tokens_per_s)} while the burst drains (over {fmt_seconds(r.duration_s)})"
    return (
        f"{fmt_rate(r.output_tokens_per_s)} over the whole simulated run ({fmt_seconds(r.duration_s)}, its ramp-up "
        f"and drain included); offered {fmt_rate(offered_output_tokens_per_s(s, output_tokens))} "
        f"({s.rate_per_replica_s:.3g} requests/s x {_tokens(round(output_tokens, 1))} tokens), below the replica's "
        "capacity"
    )


def high_request_tokens(lengths: list[tuple[int, int]], percentile: float) -> int:
    """The ``percentile`` request's length, prompt + output tokens, of the requests sent (rounded up): the length
    ``planner export`` holds a slot for (its scenario's high-percentile prompt + output)."""
    return int(math.ceil(np.percentile([p + o for p, o in lengths], percentile)))


def max_num_seqs_line(
    replica, s: Sizing, lengths: list, load_args: tuple, load_kwargs: dict, given: int | None,
    high_tokens: int | None = None, length_q: float | None = None, context: int | None = None,
) -> str:  # fmt: skip
    """One line naming the max_num_seqs the simulated replica ran with against ``planner export``'s rule (what memory
    holds at the high-percentile request, ``sequences_memory_holds``), and its effect: where that rule gives fewer
    than the engine's limit and none was given, the same replicas simulated with it (one more run, and the capacity
    at that limit): their percentile TTFT and TPOT, the review's figure at these lengths. ``high_tokens``: the high
    prompt + high output given (``--prompt-tokens-high``, ``--output-tokens-high``), the review's rule exactly, not
    the drawn requests' percentile. ``length_q``: the high lengths' percentile (``--length-percentile``; None: the
    sizing's, ``s.percentile``), the review's high_percentile. ``context``: --context, which no slot exceeds (trial
    29 F1: a 30,900-token p95 request at --context 16,384 is cut to 16,384, as the drawn requests are)."""
    q = s.percentile
    lq = q if length_q is None else length_q
    high = high_request_tokens(lengths, lq) if high_tokens is None else int(high_tokens)
    at = f"the p{lq:g} request" if high_tokens is None else f"p{lq:g} prompt + p{lq:g} output"
    if context is not None and high > context:  # no request is longer than the context the engine is started with
        high, at = int(context), f"{at} ({high:,}) cut to --context"
    rule = sequences_memory_holds(replica, high)
    review = (
        f"planner export sets it to what memory holds at {at} ({high:,} tokens here: {rule:,}, a review's "
        "'Sequences in flight per replica')"
    )
    if given is not None:
        return f"  max_num_seqs: {given:,} (as given, --max-num-seqs); {review}"
    limit = sequences_memory_holds(replica, 1)  # the engine's own limit: memory holds more one-token sequences
    if rule >= limit:
        return f"  max_num_seqs: the engine's {limit:,}, its default setting; {review}, the same"
    capped = dc_replace(replica, max_num_seqs=rule)
    rate = s.rate_per_replica_s * s.replicas
    arrivals = load_kwargs.get("arrivals_s")
    judged = rate if arrivals is None else active_rate_per_s(arrivals)
    prompt, output = load_args[0], load_args[1]
    if past_capacity(capped, prompt, output, [judged / s.replicas], load_kwargs["prefix_hit_rate"])[0]:
        effect = f"at that limit {s.replicas:,} replicas are past their capacity"
    else:
        r = replica_run(
            capped, prompt, output, rate, s.replicas, burstiness=load_kwargs["burstiness"],
            lengths=load_kwargs["lengths"], prefix_hit_rate=load_kwargs["prefix_hit_rate"], arrivals_s=arrivals,
            routing=load_kwargs["routing"],
        )  # fmt: skip
        tpot = r.tpot_s.at(q)  # NaN: one output token, no TPOT
        effect = f"at that limit these replicas give p{q:g} TTFT {fmt_seconds(r.ttft_s.at(q))}" + (
            f", TPOT {fmt_seconds(tpot)}" if math.isfinite(tpot) else ""
        )
    return (
        f"  max_num_seqs: the engine's {limit:,}, its default setting (the run above kept it, the KV cache's "
        f"admission simulated beneath it); {review}: {effect} "
        f"(--max-num-seqs {rule:,}; a review's own high lengths set its number)"
    )


def binding_lines(b: BindingTarget, s: Sizing) -> list[str]:
    """Which target sets the fleet (``planner.serving.fleet.binding_target``: the replicas each alone needs on this
    group) and, where TPOT alone needs ``PREFILL_STALL_FACTOR`` x TTFT's or more, why and the levers. Where capacity
    alone needs as many replicas (``BindingTarget.binding`` "capacity"), neither target binds: the line says so with
    each figure against its target (trial 28 F3); likewise where one replica meets both ("none")."""
    q = f"p{s.percentile:g}"
    r = s.result
    figures = [f"{q} TTFT {fmt_seconds(r.ttft_s.at(s.percentile))} against {fmt_seconds(s.ttft_target_s)}"]
    if not math.isnan(r.tpot_s.at(s.percentile)):
        figures.append(f"TPOT {fmt_seconds(r.tpot_s.at(s.percentile))} against {fmt_seconds(s.tpot_target_s)}")
    if b.binding == "none":
        head = f"  binding target: none (one replica, the fewest a fleet has, meets both: {', '.join(figures)})"
    elif b.binding == "capacity":  # a figure within 5% of its target is said so: the fleet is at its edge (trial 30 F4)
        near = [
            f"{name} within {math.ceil(100 * (1 - x / t)):.0f}% of its target"
            for name, x, t in (("TTFT", r.ttft_s.at(s.percentile), s.ttft_target_s), ("TPOT", r.tpot_s.at(s.percentile), s.tpot_target_s))
            if math.isfinite(t) and 0.95 * t <= x <= t
        ]  # fmt: skip
        head = (
            f"  binding target: capacity (neither target binds: {'; '.join([', '.join(figures), *near])}; capacity alone needs "
            f"{counted(b.capacity_alone, 'replica')}, each below its simulated steady-state capacity)"
        )
    elif b.binding == "both":
        head = f"  binding target: both alike (each alone needs {counted(b.ttft_alone, 'replica')})"
    else:
        other = "TPOT" if b.binding == "TTFT" else "TTFT"
        need = {"TTFT": b.ttft_alone, "TPOT": b.tpot_alone}
        head = (
            f"  binding target: {q} {b.binding} ({counted(need[b.binding], 'replica')} alone; {q} {other} alone: "
            f"{counted(need[other], 'replica')})"
        )
    if not b.prefill_stalls:
        return [head]
    return [
        head,
        f"  prompts stall decodes: TPOT alone needs {b.tpot_alone / b.ttft_alone:.1f}x TTFT's replicas, as each "
        "prompt's prefill runs in the steps that decode the other requests and stretches them; the replicas are kept "
        "far below their capacity. Cheaper levers: a looser TPOT target, a smaller chunked-prefill token budget "
        "(prefill in shorter pieces between decode steps: the engine's setting, not varied here), or disaggregated "
        "prefill on separate replicas (not modelled)",
    ]


def render_sizing(
    s: Sizing,
    p: Plan,
    rate_per_s: float,
    prompt_tokens: float,
    output_tokens: float,
    speculative=None,
    traffic: DatasetLoad | None = None,
    prefix_hit_rate: float | None = None,
    trace: TraceLoad | None = None,
    choice: GroupChoice | None = None,
    setup=None,
    given: bool = False,
    routing: str = "random",
    sent_output: float | None = None,
    margin: MarginCheck | None = None,
    binding: BindingTarget | None = None,
    seqs_line: str = "",
    spread_line: str = "",
    fluctuation_lines: tuple[str, ...] = (),
    draws_warning: str = "",
    requests: int = DEFAULT_REQUESTS,
    lengths: list | None = None,
    length_q: float | None = None,
) -> str:
    """The fleet sized on simulated percentiles: replicas, then each latency's p50 / p95 / p99 on one of them (and the
    speculation it decodes with, if any; the dataset whose lengths it serves, if named; the prefix hit, if given;
    the groups tried, where the group was chosen among several; how many sequences a replica ran at once, from the
    simulated run's ``setup``: the engine's max_num_seqs and the KV cache, as the engine admits them). ``given``: the
    replicas were given (``--replicas``), not sized: ``fleet_check_lines`` follows with the verdict. ``sent_output``:
    the output tokens a simulated request emits on average (fixed lengths: the mean in whole tokens), in which the
    rate offered a replica is counted (``_output_words``); None: ``output_tokens``. ``margin``: the Budget review's
    margin beside the replicas (``margin_lines``), where targets were given. ``fluctuation_lines``: how the traffic's
    draws move the figures (``sampling_spread_line``) and its busy minutes against the capacity
    (``busy_minutes_line``), under the figures. ``draws_warning``: where those draws disagree on the targets
    (``draws_warning``), right under the replicas, not only in the spread line."""
    r, q = s.result, f"p{s.percentile:g}"
    sent_output = output_tokens if sent_output is None else sent_output
    targets = [f"TTFT <= {fmt_seconds(s.ttft_target_s)}"] * math.isfinite(s.ttft_target_s)
    targets += [f"TPOT <= {fmt_seconds(s.tpot_target_s)}"] * math.isfinite(s.tpot_target_s)
    meet = (
        f" ({q} {', '.join(targets)})"
        if targets
        else f" (no targets given: sized on capacity, each below one replica's {s.capacity_per_s:.3g} requests/s)"
    )

    def spread(x) -> str:
        if math.isnan(x.p50):  # every request one output token: no token after the first
            return f"none: {NO_TPOT_WITH_ONE_TOKEN}"
        return " / ".join(fmt_seconds(v) for v in (x.p50, x.p95, x.p99))

    lines = [
        "\n",
        _rate_line(rate_per_s, prompt_tokens, output_tokens, p, routing, requests)
        if trace is None
        else trace_line(trace, p, s.replicas, routing),
        *([dataset_line(traffic)] if traffic is not None else []),
        *([spread_line] if spread_line else []),
        *(
            [f"  prefix cache: {fmt_percent(prefix_hit_rate)} of each prompt cached, not computed again (as given)"]
            if prefix_hit_rate
            else []
        ),
        *(
            [
                f"  speculative decoding: {speculative.draft} {speculative.draft_steps} draft tokens a step, "
                f"{speculative.acceptance_length:g} tokens emitted a step (as given; ITL is one step); "
                f"{speculative.held}"
            ]
            if speculative is not None
            else []
        ),
        f"  replicas{' (given: --replicas; see below against the targets)' if given else meet}: "
        f"{s.replicas:,} x {p.gpus:,} x {p.gpu.name} = {counted(s.replicas * p.gpus, 'GPU')}, "
        + (
            f"{counted(s.burst_requests_per_replica, 'request')} of the burst each at most"
            if s.is_burst
            else f"{s.rate_per_replica_s:.3g} requests/s each"
        )
        + (f", {_at_once(setup, p, lengths, length_q or s.percentile)}" if setup is not None else ""),
        *([f"  warning: {draws_warning}"] if draws_warning else []),
        *(
            ["  (capacity alone bounds no latency: give --ttft-target and --tpot-target to size on latency)"]
            if s.on_capacity and not given
            else []
        ),
        *(margin_lines(margin, s, p, given) if margin is not None else []),
        *([seqs_line] if seqs_line else []),
        *(binding_lines(binding, s) if binding is not None else []),
        *([group_line(choice)] if choice is not None and len(choice.tried) > 1 else []),
        *(f"  note: {t.reason}" for t in (choice.tried if choice is not None else ()) if t.skipped),
        fleet_cost_line(s.replicas * p.gpus, p),  # the month's cost, before the figures (trial 34 F2)
        *(
            f"  {label:<25}{value}"  # one column of figures: the longest label and two spaces
            for label, value in (
                ("TTFT p50 / p95 / p99", spread(r.ttft_s)),
                ("TPOT p50 / p95 / p99", spread(r.tpot_s)),
                ("ITL p50 / p95 / p99", spread(r.itl_s)),
                ("latency p50 / p95 / p99", spread(r.e2e_s)),
                ("output per replica", _output_words(s, sent_output)),
            )
        ),
        *fluctuation_lines,
        *([f"  note: {stalls}"] if speculative is None and (stalls := itl_stall_note(r, s.tpot_target_s)) else []),
        *([f"  warning: {floor}"] if (floor := near_ttft_floor(s)) else []),
        *([f"  warning: {few}"] if trace is not None and (few := _few_requests(len(trace.arrivals_s))) else []),
        *([f"  warning: {short}"] if trace is not None and (short := trace.short_note(float(r.e2e_s.p50))) else []),
    ]
    return lines[0] + "\n".join(lines[1:])


#: A p95 ITL more than this many times the TPOT target gets a note (trial 24 F12: 226 ms against 60 ms, printed and
#: never compared).
ITL_STALL_FACTOR = 2.0


def fleet_usd_per_month(gpus: int, p: Plan) -> float:
    """The fleet's month at the plan's price per GPU-hour: GPUs x price x ``HOURS_PER_MONTH`` (730 h, billed 24 x 7, as
    planner export bills a rented GPU); NaN where the plan has no price."""
    return gpus * p.price_usd_per_gpu_hour * HOURS_PER_MONTH


def fleet_cost_line(gpus: int, p: Plan) -> str:
    """What the fleet under load costs a month (trial 34 F2: ``plan --rate`` sized a fleet and priced only a token at
    100% busy, which a reader took for the budget): GPUs x the Cost line's price per GPU-hour x 730 h, said to be the
    GPUs sized here, without what a budget from planner export adds."""
    if p.price_usd_per_gpu_hour != p.price_usd_per_gpu_hour:  # no price: the Cost line says how to give one
        return "  fleet cost: not known, no price per GPU-hour for this GPU (give --price US$ per GPU-hour)"
    return (
        f"  fleet cost: {counted(gpus, 'GPU')} x {fmt_usd_per_gpu_hour(p.price_usd_per_gpu_hour)}/GPU-hour (the Cost "
        f"line's price) x {HOURS_PER_MONTH:g} h = ${fleet_usd_per_month(gpus, p):,.0f} a month; these GPUs only: a "
        "budget from planner export adds its latency margin, spare replicas and whole nodes"
    )


def itl_stall_note(r, tpot_target_s: float) -> str:
    """Where the simulated run's p95 ITL (``r.itl_s``) is over ``ITL_STALL_FACTOR`` x the TPOT target: a sentence
    saying so and why (a step that runs another request's prompt chunk, chunked prefill, stalls every decode in it;
    TPOT averages a request's gaps, so it meets the target while single gaps are long). "" elsewhere, or without a
    TPOT target."""
    itl = float(r.itl_s.p95)
    if not math.isfinite(tpot_target_s) or not itl > ITL_STALL_FACTOR * tpot_target_s:
        return ""
    return (
        f"p95 ITL {fmt_seconds(itl)} is {itl / tpot_target_s:.1f}x the {fmt_seconds(tpot_target_s)} TPOT target: "
        "steps that prefill other requests' prompts (chunked prefill) stall the decodes in them, and TPOT, a "
        "request's mean gap, hides such pauses; a streaming client sees them as gaps between tokens"
    )


#: The figures under load that carry a stated range (``planner.accuracy.loaded_ranges``), in print order: (label,
#: the sizing result's field, the percentile; the percentile first, so no line starts as the figures' lines above it
#: do). Each takes the table's row ``quantity_for`` names: p50's for p50, p99's for p95 and p99 (the table has no
#: p95: no source's run published it; the review workbook's rule); the end-to-end latency has none.
RANGED_FIGURES = tuple(
    (f"p{pct} {metric.upper()}", f"{metric}_s", pct) for metric in ("ttft", "tpot", "itl") for pct in (50, 95, 99)
)
#: The statistics ``--json`` states a range for, by key: the percentiles ``sizing_as_dict`` gives (each by
#: ``quantity_for``) and the mean (its own row, where the table has one).
RANGED_STATS = ("p50", "p90", "p95", "p99", "mean")


def range_quantity(field: str, stat: str) -> str:
    """The table's quantity whose range the figure ``field`` (``ttft_s``) at ``stat`` (``p95``, ``mean``) takes:
    the mean its own row, a percentile ``quantity_for``'s (``ttft_s``, ``p95`` -> ``ttft_p99``)."""
    metric = field[:-2]
    return f"{metric}_mean" if stat == "mean" else quantity_for(metric, float(stat[1:]))


#: Beside the held-out ranges when the simulation used a calibration entry (``is_calibrated``): the ranges were
#: measured on the shipped factors' predictions, not the calibrated ones.
CALIBRATED_RANGES_NOTE = "measured on planner's uncalibrated predictions: your calibration file is not in them"


def is_calibrated(p: Plan, calibration: Path | None) -> bool:
    """Whether the calibration the sizing used (``--calibration``, else ``$PLANNER_CALIBRATION``:
    ``resolve_calibration``) has an entry for the plan's GPU and engine, i.e. changed its simulated figures."""
    return resolve_calibration(calibration).for_gpu(p.gpu.all_names(), p.engine.name) is not None


def held_out_range_notes(p: Plan, calibration: Path | None) -> list[str]:
    """What the held-out ranges do not cover for this plan, one sentence each: a GPU or an engine no published run
    under load used (the ranges are other deployments' misses), and a calibration entry for the plan's GPU and
    engine (``is_calibrated``: the ranges were measured on uncalibrated predictions)."""
    out = uncovered_texts(p.gpu.name, p.engine, loaded_run_coverage())
    if is_calibrated(p, calibration):
        out.append(CALIBRATED_RANGES_NOTE)
    return out


def _arrival(s: Sizing) -> str:
    """The arrival kind whose held-out ranges a sizing's figures take: ``BURST`` for a burst trace, else ``STEADY``."""
    return BURST if s.is_burst else STEADY


#: What the held-out ranges under load are drawn from: one table over every deployment (``planner.accuracy.
#: loaded_ranges``: by quantity and arrival kind only), so the same multiples for an 8B on one H100 and DeepSeek-R1 on
#: 8 x H200 (trial 15, F4).
POOLED_RANGES = (
    "is pooled over every GPU, engine and model class of those runs: the same multiples for every deployment, not "
    "specific to this one"
)


def deployment_range_words(p: Plan) -> str:
    """Which line printed above is this deployment's own range, as the held-out ranges' scope names it: the Budget
    review's margin line where it is printed (``render_plan``: the serving runs of this GPU, engine and model class),
    else the TPOT range of the decode lines (this GPU and group, which the margin then equals)."""
    if p.serving_margin != p.time_residuals or p.serving_margin_note != p.time_range_note:
        return "this deployment's own is the Budget review's margin line above (this GPU, engine and model class)"
    return "this deployment's own is the TPOT range above (this GPU and group; the Budget review's margin too)"


def held_out_range_lines(
    s: Sizing,
    ranges: dict[tuple[str, str], LoadedRange],
    arrival: str = STEADY,
    specific: str = "",
    open_end: str = "",
) -> list[str]:
    """The stated range of each loaded percentile ``render_sizing`` prints, one line each: the range as multiples of
    the simulated figure, the figure's bounds, the sources and the share of held-out figures inside the range built
    without their own source (a p95 figure: p99's range, ``quantity_for``, labelled "(p99's range)"); then one line
    per end that one source sets. Under the heading, that the ranges are pooled over every deployment
    (``POOLED_RANGES``) and ``specific``: which line is this deployment's own (``deployment_range_words``). None
    without the ranges' file. With ``open_end`` (``Plan.slow_end_open``: a replica across nodes, slower than
    modelled), each figure's slow bound reads "more than" and one line says why (trial 31 F7)."""
    rows = []
    for label, field, pct in RANGED_FIGURES:
        quantity = range_quantity(field, f"p{pct}")
        value = getattr(getattr(s.result, field), f"p{pct}")
        rows.append((label, value, ranges.get((quantity, arrival)), quantity.rsplit("_", 1)[1], f"p{pct}"))
    if not any(r for _, _, r, _, _ in rows):
        if arrival == BURST:  # the steady ranges do not describe a burst, and no burst publishes percentiles enough
            return [
                "  held-out range: none for a burst (fewer than 3 sources published percentiles of every prompt "
                "sent at once; the ranges under steady load do not describe one)"
            ]
        return []
    lines = [
        "  held-out range (measured / predicted: 10th-90th percentile over published runs under steady load from",
        "  sources planner never saw, each source alike; inside: share of those runs within the range built",
        "  without their own source, nominal 80%; docs/accuracy.md, 'Do the ranges hold?')",
        *textwrap.wrap(f"{POOLED_RANGES}" + (f"; {specific}:" if specific else ":"), 104, initial_indent="  ",
                       subsequent_indent="  "),
    ]  # fmt: skip
    notes = []
    width = 32 if open_end else 22  # "2.86 s to more than 56.68 s"
    for label, value, r, taken, stat in rows:
        if math.isnan(value):  # no such figure (TPOT and ITL of one output token): no range around it
            continue
        if r is None:
            lines.append(f"    {label:<10}no range: fewer than 3 sources published it under steady load")
            continue
        lo_s, hi_s = r.bounds(value)
        bounds = f"{fmt_seconds(lo_s)} to {'more than ' if open_end else ''}{fmt_seconds(hi_s)}"
        if taken != stat:  # another percentile's row: its coverage and ends are stated on that row's line
            lines.append(f"    {label:<10}{r.text():<17}{bounds:<{width}}({taken}'s range)")
            continue
        lines.append(f"    {label:<10}{r.text():<17}{bounds:<{width}}{r.coverage_text()}")
        notes += [f"    {text}" for text in r.one_source_texts(label)]
    if open_end:
        notes.append(f'    slow ends open ("more than"): {open_end}')
    return lines + notes


def held_out_ranges_as_dict(
    s: Sizing, ranges: dict[tuple[str, str], LoadedRange], arrival: str = STEADY, open_end: str = ""
) -> dict:
    """``held_out_range_lines``' ranges for --json, by figure and statistic (``ttft_s``: ``p50``, ``p90``, ``p95``,
    ``p99``, ``mean``; ``tpot_s`` and ``itl_s`` likewise): the table's row used (``range_of``: ``ttft_p99`` for p90,
    p95 and p99, ``range_quantity``), ratios (1 + low, 1 + median, 1 + high), the figure's bounds in seconds,
    sources, figures, share inside left out, weighting, and the ends one source sets; a statistic without a range is
    absent. ``high_open``: whether ``high_s`` is a lower bound of the slow end (``open_end``, ``Plan.slow_end_open``:
    a replica across nodes, slower than modelled; trial 31 F7)."""
    out: dict[str, dict] = {}
    for field in ("ttft_s", "tpot_s", "itl_s"):
        for stat in RANGED_STATS:
            quantity = range_quantity(field, stat)
            r = ranges.get((quantity, arrival))
            value = getattr(getattr(s.result, field), stat)
            if r is None or math.isnan(value):  # NaN: TPOT and ITL of one output token, no figure to range
                continue
            low_s, high_s = r.bounds(value)
            out.setdefault(field, {})[stat] = {
                "range_of": quantity,
                "arrival": r.arrival,
                "low_ratio": 1 + r.low,
                "median_ratio": 1 + r.median,
                "high_ratio": 1 + r.high,
                "low_s": low_s,
                "high_s": high_s,
                "high_open": bool(open_end),
                "sources": r.sources,
                "figures": r.figures,
                "inside_left_out": r.inside_left_out,
                "weighted": r.weighted,
                "one_source_ends": [
                    {"end": end, "ratio_without": 1 + without, "source": source}
                    for end, without, source in r.one_source_ends()
                ],
            }
    return out


def _tokens(x: float) -> str:
    """A token count: whole as 1,024; a mean of drawn lengths to one decimal (512.5)."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def dataset_line(t: DatasetLoad) -> str:
    """How ``--dataset``'s requests were drawn: its client, mean lengths, prefix hit and source. A shipped sample's
    requests (ShareGPT) and a benchmark's default draw are as the client sends them; a dataset that publishes only its
    means is sent at those means, which the line says narrows the percentiles."""
    stats = dataset_statistics(t.name, t.client)
    cached = (
        f"; {fmt_percent(t.prefix_hit_rate)} of each prompt cached (its shared prefix)" if t.prefix_hit_rate else ""
    )
    client = CLIENT_COMMANDS.get(t.client, t.client)
    if stats.sample_file:
        how = f"as {client} sends it, each request's own lengths from a shipped sample (the means shown)"
    elif not t.at_means:
        how = f"as {client} sends it, each drawn per request (the means shown)"
    elif stats.kind == "means":
        how = (
            "at the dataset's mean lengths, every request alike (its percentiles narrower than the dataset's "
            "spread: no distribution of its lengths is shipped)"
        )
    else:
        how = f"as {client} sends it"
    return f"  dataset {t.name} {how}{cached}: {t.source}"


def trace_line(t: TraceLoad, p: Plan, replicas: int, routing: str = "random") -> str:
    """The "Under load" line of ``--trace``: its requests, span, mean rate and lengths (a burst: at once, no rate),
    and how they were replayed (each request dealt to a replica by ``routing``, every share simulated and pooled; a
    burst's first share of even shares); then the format it was read in (``trace_format_line``) and, where it names its KV blocks, their repeats
    (``block_hit_line``)."""
    share = ""
    if replicas > 1 and t.is_burst:
        share = f"; each of {replicas:,} replicas taking one request in {replicas:,}, the first's simulated"
    elif replicas > 1 and routing == "round-robin":
        share = (
            f"; each of {replicas:,} replicas taking one request in {replicas:,}, every replica's share simulated "
            "and the percentiles pooled over all of them"
        )
    elif replicas > 1:
        share = (
            f"; each request routed to one of {replicas:,} replicas at random (--routing random), every replica's "
            "share simulated and the percentiles pooled over all of them"
        )
    when = (
        f"{len(t.lengths):,} requests all at once (a burst: every arrival at the same time, so no rate is implied;"
        if t.is_burst
        else f"{len(t.lengths):,} requests over {fmt_seconds(t.span_s)} ({t.rate_per_s:.3g} requests/s,"
    )
    return (
        f"Under load: the trace {t.name}, {when} prompts of {_tokens(round(t.prompt_mean_tokens, 1))} and outputs of "
        f"{_tokens(round(t.output_mean_tokens, 1))} tokens on average), computed by planner's serving simulation "
        f"(replayed as they came{share}"
        + _split_words(p)
        + ")"
        + f"\n{trace_format_line(t)}"
        + (f"\n{line}" if (line := block_hit_line(t)) else "")
        + (f"\n  warning: {hint}" if (hint := t.milliseconds_hint()) else "")
        + (f"\n  note: {order}" if (order := t.order_note()) else "")
        + (f"\n  warning: {gap}" if (gap := t.gap_note()) else "")
        + (
            ""
            if t.is_burst
            else f"\n  capacity judged at the trace's mean rate, {t.active_rate_per_s:.3g} requests/s (gaps of "
            f"{OUTLIER_GAP_FACTOR:g}x the median or more shortened), as --rate judges its rate; its busiest "
            f"{CAPACITY_WINDOW_S:g}-s window: {t.busiest_rate_per_s:.3g} requests/s, the queue it builds in the "
            "replay's percentiles"
        )
    )


def trace_format_line(t: TraceLoad) -> str:
    """Which of ``TRACE_FORMATS`` the trace was read in, its columns and units, arrivals from its first request."""
    return f"  read as {t.format.name} trace: {t.format.columns_text()}, arrivals from the first request"


def block_hit_line(t: TraceLoad) -> str:
    """Where the trace names its prompts' KV blocks (Mooncake's hash_ids): the share of prompt tokens its repeated
    leading blocks hold, and that it is not applied (an upper bound: one unbounded cache every request reaches), with
    the option that applies it; "" where it names none."""
    if t.block_hit_rate is None:
        return ""
    return (
        f"  prefix cache: the trace's hash_ids repeat {fmt_percent(t.block_hit_rate)} of prompt tokens (each "
        f"request's leading {MOONCAKE_BLOCK_TOKENS}-token blocks seen in an earlier one; an upper bound: one cache "
        "of unbounded size that every request reaches); not applied: give --prefix-hit-rate "
        f"{math.floor(t.block_hit_rate * 1000) / 1000:g} to apply it"
    )


def trace_as_dict(t: TraceLoad) -> dict:
    """``--trace``'s traffic for --json: where it was read, its requests, span (seconds), mean rate and lengths."""
    return {
        "path": t.name,
        "requests": len(t.lengths),
        "span_s": t.span_s,
        "rate_per_s": None if t.is_burst else t.rate_per_s,  # a burst has no rate (JSON has no Infinity)
        "burst": t.is_burst,
        # the rate its capacity is judged at: its mean, outlier gaps shortened (null: a burst)
        "capacity_judged_at_rate_per_s": None if t.is_burst else t.active_rate_per_s,
        # its busiest CAPACITY_WINDOW_S's rate, outlier gaps shortened: warned about past a replica's capacity
        "busiest_window_rate_per_s": None if t.is_burst else t.busiest_rate_per_s,
        "gap_note": t.gap_note() or None,  # a gap of OUTLIER_GAP_FACTOR x the median or more (a late row?)
        "format": t.format.name,
        "columns": list(t.format.columns),
        "block_hit_rate": t.block_hit_rate,  # reported, not applied (``block_hit_line``)
        "out_of_order_rows": t.out_of_order_rows,  # rows earlier than the row above them: sorted (``order_note``)
        "note": t.order_note() or None,
        "prompt_mean_tokens": t.prompt_mean_tokens,
        "output_mean_tokens": t.output_mean_tokens,
    }


@dataclass(frozen=True)
class MarginEnd:
    """One end of the Budget review's margin (``Plan.serving_margin``: measured / predicted TPOT - 1 of published
    serving runs of this GPU, engine and model class, 10th or 90th percentile) applied to a fleet's simulated
    percentile TTFT and TPOT, as ``planner export`` applies it to both targets (``planner.export.sizing.
    margin_target``): each figure x (1 + margin), and the targets it would then be past ("TTFT", "TPOT")."""

    margin: float
    ttft_s: float
    tpot_s: float  # NaN: no TPOT (one output token)
    past: tuple[str, ...]


@dataclass(frozen=True)
class MarginCheck:
    """The fleet sized (or given) on the prediction, no margin, against the Budget review's margin: its figures at
    the margin's two ends (``MarginEnd``) and, where the slow end is past a target, the fleet ``planner export``
    sizes there: ``fewest_replicas`` with each target / (1 + margin) (``margin_target``, export's own rule, margin
    ``range_margin`` of the slow end), the same search plan ran (0 replicas: not sized, or none meets: ``reason``)."""

    low: MarginEnd
    high: MarginEnd
    note: str  # where the margin comes from (``Plan.serving_margin_note``)
    ttft_goal_s: float = math.inf  # the targets / (1 + margin) at the slow end (inf: no target)
    tpot_goal_s: float = math.inf
    replicas: int = 0
    reason: str = ""

    @property
    def sized(self) -> bool:
        """Whether the fleet at the slow end was sized (its end was past a target and the margin above 0)."""
        return bool(self.replicas or self.reason)


def _margin_end(s: Sizing, margin: float) -> MarginEnd:
    """``MarginEnd`` of the sizing's percentile figures at ``margin``."""
    q = s.percentile
    ttft, tpot = s.result.ttft_s.at(q) * (1 + margin), s.result.tpot_s.at(q) * (1 + margin)
    past = tuple(
        name for name, value, target in (("TTFT", ttft, s.ttft_target_s), ("TPOT", tpot, s.tpot_target_s))
        if math.isfinite(target) and value > target
    )  # fmt: skip
    return MarginEnd(margin, ttft, tpot, past)


def margin_check(s: Sizing, p: Plan, replica, load_args: tuple, load_kwargs: dict) -> MarginCheck | None:
    """The Budget review's margin beside a fleet plan sized (or was given) on the prediction (F3 of trial 15: plan
    said DeepSeek-R1 on 8 x H200 "meets" p95 TPOT 50 ms at 44.3 ms, the margin line said such runs are +40% / +149%
    slower, and ``planner export`` sized 336 GPUs). Its two ends' figures, and where the slow end is past a target
    (with a margin above 0), the fleet sized there as export sizes it: ``fewest_replicas(replica, *load_args,
    **load_kwargs)`` with each target / (1 + ``range_margin(high)``) (one more search). None without targets (a
    fleet sized on capacity: the margin is a latency's)."""
    if s.on_capacity or s.result is None:
        return None
    low, high = p.serving_margin
    ends = _margin_end(s, low), _margin_end(s, high)
    check = MarginCheck(ends[0], ends[1], p.serving_margin_note)
    margin = range_margin(high)
    if not ends[1].past or margin <= 0:
        return check
    goals = tuple(float(margin_target(t, margin)) for t in (s.ttft_target_s, s.tpot_target_s))
    check = dc_replace(check, ttft_goal_s=goals[0], tpot_goal_s=goals[1])
    try:
        at = fewest_replicas(
            replica, *load_args, **(load_kwargs | {"ttft_target_s": goals[0], "tpot_target_s": goals[1]})
        )
    except PlannerError as exc:
        return dc_replace(check, reason=str(exc))
    return dc_replace(check, replicas=at.replicas)


def _metric_at_ends(metric: str, lo: float, hi: float, target_s: float, m: MarginCheck) -> str:
    """One targeted figure at the margin's two ends against its target: "TPOT would be 62 ms / 110 ms against the
    50 ms target: past it at both ends"."""
    if hi > target_s and lo > target_s:
        verdict = "past it at both ends"
    elif hi > target_s:
        verdict = f"past it at the {m.high.margin:+.0%} end"
    else:
        verdict = "within it at both ends"
    return (
        f"{metric} would be {fmt_seconds(lo)} / {fmt_seconds(hi)} against the {fmt_seconds(target_s)} target: {verdict}"
    )


def margin_not_budget(m: MarginCheck, s: Sizing) -> bool:
    """Whether the fleet sized at the margin's slow end is ``MARGIN_SETS_FLEET`` times the fleet here or more: the
    margin, not the traffic, sets it, so it is not a budget figure (trial 20, F1)."""
    return bool(m.replicas) and m.replicas >= MARGIN_SETS_FLEET * max(s.replicas, 1)


def margin_verdict_line(m: MarginCheck, s: Sizing, p: Plan) -> str:
    """The one line under the plan's head where ``margin_not_budget`` (trial 33 F10: the verdict sat 40 lines down):
    ``serving_margin.margin_verdict`` of the model, its class, the engine and this GPU, the runs' sources said where
    the margin is the serving runs'; "" elsewhere."""
    if not margin_not_budget(m, s):
        return ""
    from planner.accuracy.serving_margin import from_serving_runs, margin_class, margin_verdict

    from_runs = from_serving_runs(m.note)
    return margin_verdict(p.model.name, margin_class(p.model), p.engine.name, [p.gpu.name], from_runs)


def margin_lines(m: MarginCheck, s: Sizing, p: Plan, given: bool = False) -> list[str]:
    """``MarginCheck`` in words, under the replica count: that the fleet is sized (or judged) on the prediction with no
    margin; each targeted percentile figure at the Budget review's margin's two ends against its target; and where
    the slow end passes one, the fleet ``planner export`` sizes there (docs/export.md, "Margin")."""
    lo, hi = m.low, m.high
    where = (
        "its line above"
        if p.serving_margin != p.time_residuals or p.serving_margin_note != p.time_range_note
        else "the TPOT range above"
    )
    figures = [("TTFT", lo.ttft_s, hi.ttft_s, s.ttft_target_s), ("TPOT", lo.tpot_s, hi.tpot_s, s.tpot_target_s)]
    said = [_metric_at_ends(*f, m) for f in figures if math.isfinite(f[3]) and not math.isnan(f[1])]
    lines = [
        f"  margin: {'judged' if given else 'sized'} on the prediction, with no margin; at the Budget review's margin "
        f"(TPOT {lo.margin:+.0%} / {hi.margin:+.0%}, {where}; planner export applies it to both targets) "
        f"p{s.percentile:g} " + "; ".join(said)
    ]
    if math.isfinite(s.ttft_target_s):  # trial 20, F2: the TTFT margin is TPOT's
        lines.append(f"  {ttft_borrowed_text(s.percentile)}")
    hi_margin = f"{hi.margin:+.0%}"
    if margin_not_budget(m, s):
        # trial 20, F1: a slow end many times the plan is the margin's evidence speaking, not a budget figure
        lines.append(
            f"  low confidence: measure one replica first. At the {hi_margin} margin's end planner export sizes "
            f"{m.replicas:,} x {p.gpus:,} = {counted(m.replicas * p.gpus, 'GPU')} (x{m.replicas / max(s.replicas, 1):,.0f} "
            f"the {s.replicas:,} here; each target / {1 + range_margin(hi.margin):.3g}): the margin, not the traffic, "
            "sets that fleet, so it is not a budget figure; run one replica at its planned load and size on what it "
            "measures (planner calibrate)"
            + (  # trial 22, F1: at 10x or more the review does not rank or recommend it (review.MARGIN_NOT_SIZED)
                f"; at {MARGIN_NOT_SIZED:g} times or more, planner export shows the option as not sized, not ranked"
                if m.replicas >= MARGIN_NOT_SIZED * max(s.replicas, 1)
                else ""
            )
        )
    elif m.replicas:
        # trial 24 F12: GPUs were set against the replicas given ("56 GPUs, against the 17 given")
        more = (
            f", against the {counted(s.replicas, 'replica')} given ({counted(s.replicas * p.gpus, 'GPU')})"
            if given
            else ""
        )
        lines.append(
            f"  at the {hi_margin} margin's end: {m.replicas:,} x {p.gpus:,} = {counted(m.replicas * p.gpus, 'GPU')}"
            f"{more}, as planner export sizes (each target / {1 + range_margin(hi.margin):.3g}, the same search; "
            "docs/export.md, 'Margin')"
        )
    elif m.reason:
        lines.append(
            f"  at the {hi_margin} margin's end: no fleet meets the targets as planner export sets them (each / "
            f"{1 + range_margin(hi.margin):.3g}): {m.reason}"
        )
    elif not hi.past and not given:
        lines[0] += "; so planner export's margin needs no more replicas on this group"
    elif not hi.past and within_targets(s.result, s.percentile, s.ttft_target_s, s.tpot_target_s):
        lines[0] += "; so the fleet given holds the targets at the margin's ends too"
    return lines


def margin_check_as_dict(m: MarginCheck, gpus_per_replica: int) -> dict:
    """``MarginCheck`` for --json: the fleet sized on the prediction, no margin; each end's margin, figures (seconds;
    null: no TPOT) and targets passed; at the slow end the targets export sizes on and its replicas (null: not sized
    or none meets, ``reason``)."""

    def end(e: MarginEnd) -> dict:
        tpot = None if math.isnan(e.tpot_s) else e.tpot_s
        return {"margin": e.margin, "ttft_s": e.ttft_s, "tpot_s": tpot, "past_targets": list(e.past)}

    return {
        "sized_on": "the prediction, no margin",
        "note": m.note,
        "low": end(m.low),
        "high": end(m.high),
        "at_high_end": {
            "ttft_goal_s": m.ttft_goal_s if math.isfinite(m.ttft_goal_s) else None,
            "tpot_goal_s": m.tpot_goal_s if math.isfinite(m.tpot_goal_s) else None,
            "replicas": m.replicas or None,
            "gpus": m.replicas * gpus_per_replica or None,
            "reason": m.reason or None,
        }
        if m.sized
        else None,
    }


@dataclass(frozen=True)
class OtherLayout:
    """The plan's group split another way (``Plan.alternatives``), sized for the same load: its replicas (0: none
    meets, ``reason``)."""

    parallelism: str
    replicas: int = 0
    reason: str = ""


def _other_layout(replica, load_args: tuple, load_kwargs: dict) -> OtherLayout:
    """``fewest_replicas`` of ``replica`` (the plan's group in another layout) for the same load and targets."""
    try:
        return OtherLayout(replica.parallelism, fewest_replicas(replica, *load_args, **load_kwargs).replicas)
    except PlannerError as exc:
        return OtherLayout(replica.parallelism, 0, str(exc))


def _other_layout_line(o: OtherLayout, p: Plan, sized: Sizing) -> str:
    """ "  same 8 GPUs a replica, data-parallel attention + expert parallel: 1 x 8 = 8 GPUs for the same targets
    (--parallelism dp-ep)", or why none meets; where it needs fewer GPUs than the plan's layout, tp against dp-ep
    (``layout_kept``: the review's rule for a MoE option that sets no parallelism), that the review keeps it
    (trial 24, F15)."""
    head = f"  same {counted(p.gpus, 'GPU')} a replica{_layout_words(o.parallelism, p.gpus)}"
    if not o.replicas:
        return f"{head}: no fleet meets the same targets ({o.reason})"
    mine = sized.replicas * p.gpus
    pair = {p.parallelism, o.parallelism} == {"tp", "dp-ep"}  # the two the review sizes (``layouts_to_size``)
    fewer = pair and layout_kept({p.parallelism: mine, o.parallelism: o.replicas * p.gpus}) == o.parallelism
    return (
        f"{head}: {o.replicas:,} x {p.gpus:,} = {counted(o.replicas * p.gpus, 'GPU')} for the same "
        f"{'capacity rule' if sized.on_capacity else 'targets'} (--parallelism {o.parallelism})"
        + (f"; fewer than {p.parallelism}'s {mine:,} (planner export sizes both layouts for a MoE option that sets "
           "no parallelism and keeps the cheaper)" if fewer else "")
    )  # fmt: skip


def group_line(choice: GroupChoice) -> str:
    """Which group the fleet runs on and why: the fewest GPUs of the groups tried, each with its total."""

    def total(t: GroupTried) -> str:
        if t.replicas:
            return f"{t.gpus_per_replica:,} -> {t.replicas:,} x {t.gpus_per_replica:,} = {counted(t.gpus, 'GPU')}"
        if t.skipped:  # its KV cache shorter than the longest request: the note under this line says so
            return f"{t.gpus_per_replica:,} -> skipped (a request longer than its KV cache)"
        return f"{t.gpus_per_replica:,} -> " + ("not needed" if t.reason.startswith("not tried") else "none meets")

    return (
        f"  group: {counted(choice.gpus_per_replica, 'GPU')} per replica, the fewest GPUs of the groups tried "
        f"({'; '.join(total(t) for t in choice.tried)}); --gpus fixes the group"
    )


def groups_as_dict(choice: GroupChoice) -> list[dict]:
    """Each group ``fewest_gpus`` tried, for --json: its replicas and GPUs (null where none meets), and why not."""
    return [
        {
            "gpus_per_replica": t.gpus_per_replica,
            "replicas": t.replicas or None,
            "gpus": t.gpus or None,
            "chosen": t.gpus_per_replica == choice.gpus_per_replica,
            "reason": t.reason or None,
        }
        for t in choice.tried
    ]


def sizing_as_dict(s: Sizing, p: Plan, output_mean: float = math.nan, length_percentile: float | None = None) -> dict:
    """The sizing's figures for --json: seconds, requests and tokens per second; the output rate the whole simulated
    run's (``_output_words``), with the rate offered a replica (its requests/s x ``output_mean`` tokens).
    ``length_percentile``: the high lengths' percentile (``--length-percentile``, a review's high_percentile; None:
    the targets' ``s.percentile``, as ``--length-percentile`` defaults to ``--percentile``), the one the text's
    max_num_seqs line and lengths line name."""

    def pct(x) -> dict | None:  # None: no such figure (TPOT and ITL of one output token; JSON has no NaN)
        if math.isnan(x.p50):
            return None
        return {"mean": x.mean, "p50": x.p50, "p90": x.p90, "p95": x.p95, "p99": x.p99}

    r = s.result
    return {
        "replicas": s.replicas,
        "gpus": s.replicas * p.gpus,
        # GPUs x price per GPU-hour x 730 h (``fleet_cost_line``); None: no price
        "usd_per_month": None if math.isnan(usd := fleet_usd_per_month(s.replicas * p.gpus, p)) else usd,
        "rate_per_replica_per_s": None if s.is_burst else s.rate_per_replica_s,
        "burst_requests_per_replica": s.burst_requests_per_replica if s.is_burst else None,
        "percentile": s.percentile,
        "length_percentile": s.percentile if length_percentile is None else length_percentile,
        "ttft_target_s": s.ttft_target_s if math.isfinite(s.ttft_target_s) else None,
        "tpot_target_s": s.tpot_target_s if math.isfinite(s.tpot_target_s) else None,
        "sized_on": "capacity" if s.on_capacity else "targets",
        "capacity_per_s": s.capacity_per_s if s.on_capacity else None,
        "ttft_s": pct(r.ttft_s),
        "tpot_s": pct(r.tpot_s),
        "itl_s": pct(r.itl_s),
        "e2e_s": pct(r.e2e_s),
        "output_tokens_per_s_per_replica": r.output_tokens_per_s,  # the whole run's, ramp-up and drain included
        "offered_output_tokens_per_s_per_replica": None if s.is_burst else offered_output_tokens_per_s(s, output_mean),
        "run_duration_s": r.duration_s,
        "computed_by": "planner's serving simulation (planner.serving.load)",
    }


def _given(option: str) -> bool:
    """Whether the user gave ``option`` (a parameter name) on the command line or through the environment, rather
    than leaving its default."""
    source = click.get_current_context().get_parameter_source(option)
    return source not in (None, click.core.ParameterSource.DEFAULT)
