"""One scenario fully evaluated for a report: memory, speed at batch 1 and at the batch asked for, TTFT, cost.

``planner plan`` prints a ``Plan``; every figure in it comes from a ``planner.api`` function.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Unpack

from planner import api
from planner import model as m
from planner.accuracy.calibration import CalibrationUse, calibration_in_effect, residual_range
from planner.accuracy.ranges import stated_coverage
from planner.catalog import Catalog, Gpu, Model, as_catalog, default_catalog, names_provider, stale_price_warning
from planner.catalog.names import implied_weight_precision
from planner.catalog.resolve import (
    default_kv_precision,
    expert_precision,
    fabric_numbers,
    gathers_moe,
    uses_allreduce_table,
    weights_to_pass,
)
from planner.checks import _count, _price, one_scenario
from planner.deploy import (
    GPU_GROUPS,
    MAX_BATCH_INPUT,
    MAX_CONTEXT_TOKENS,
    block_checkpoint_note,
    check_parallelism,
    dsa_default_kv_note,
    experts_published_apart,
    experts_upcast,
    fp8_kv_note,
    layouts_to_size,
    memory_utilization_in_effect,
    not_modelled_words,
    release_cannot_run,
    served_batch,
    sixteen_bit_note,
    slow_end_open,
    spans_nodes_warning,
    untested_architecture_note,
    valid_tp_sizes,
    weight_only_note,
)
from planner.engines.allreduce_table import borrowed_note, gather_scatter_note
from planner.engines.kernel_curves import curves_note, moe_floor_note
from planner.engines.profiles import (
    EngineProfile,
    engine_for_version,
    engine_profile,
    pinned_release,
    with_row_memory_utilization,
)
from planner.errors import InvalidInputError, OutOfRangeError, PlannerError
from planner.model import DecodeStep, MemoryPlan
from planner.model.layouts import is_pipeline, pipeline_stages
from planner.options import GroupOptions, Options
from planner.timing import _decode_breakdown, _decode_step, _prefill, _prompt_busy_s
from planner.units import fmt_bytes

if TYPE_CHECKING:  # the serving simulation is imported when a replica is made, not with every plan
    from planner.serving.load import Replica


@dataclass(frozen=True)
class LayoutOption:
    """The same GPUs split another way (``model.parallel.PARALLELISMS``), at the largest batch that layout serves:
    what its memory holds, at most the engine's sequence limit (``planner.deploy.served_batch``)."""

    parallelism: str
    gpus: int
    max_batch: int
    tpot_s: float
    throughput_tokens_per_s: float
    ttft_s: float
    cost_per_mtok_usd: float
    memory_max_batch: int = 0  # the sequences its memory holds (max_batch where the engine's limit does not bind)


#: The engine profile a plan on another engine is compared with (``EngineDifference``): vLLM, README's default.
COMPARED_ENGINE = "vllm"


@dataclass(frozen=True)
class EngineDifference:
    """The same deployment (GPU, model, precisions, group, layout, batch) on vLLM (``COMPARED_ENGINE``), for a plan
    on another engine (trial 33 F11: SGLang's TPOT at batch 1,024 was 1.8x vLLM's, nothing said why): both TPOTs,
    and each part's difference (this engine's - vLLM's, ``planner.model.decode_step_breakdown``'s parts), which sum
    to the TPOTs' difference. ``refused``: why vLLM cannot run the deployment (then the times are NaN)."""

    batch: int
    tpot_s: float
    vllm_tpot_s: float
    parts_s: dict[str, float]  # part key -> seconds more than vLLM's ({} where the step is not broken down)
    refused: str = ""

    @property
    def largest(self) -> str:
        """The part key whose difference is largest in size, "" without parts."""
        return max(self.parts_s, key=lambda k: abs(self.parts_s[k])) if self.parts_s else ""

    def as_dict(self) -> dict:
        return {
            "engine": COMPARED_ENGINE,
            "batch": self.batch,
            "tpot_s": None if self.refused else self.tpot_s,
            "vllm_tpot_s": None if self.refused else self.vllm_tpot_s,
            "difference_s": None if self.refused else self.tpot_s - self.vllm_tpot_s,
            "parts_difference_s": self.parts_s or None,
            "largest_part": self.largest or None,
            "refused": self.refused or None,
        }


@dataclass(frozen=True)
class Plan:
    """Everything about one deployment at one context, for reports: memory, speed at batch 1 and at max batch, cost.

    Max batch is the largest the engine serves: what memory holds (``memory.max_batch``), at most the engine's
    sequence limit (``engine_batch_limit``, vLLM's ``max_num_seqs``; ``planner.deploy.served_batch``)."""

    gpu: Gpu
    model: Model
    context: int
    gpus: int
    engine: EngineProfile
    memory_utilization: float
    weight_precision: str
    kv_precision: str
    memory: MemoryPlan
    ridge_flop_per_byte: float
    batch: int  # the batch asked for (default: max batch, the served one)
    at_batch: DecodeStep
    at_one: DecodeStep
    ttft_s: float
    price_usd_per_gpu_hour: float
    cost_per_mtok_usd: float
    warnings: tuple[str, ...]
    #: relative residuals of time predictions (calibration entry, else held-out residuals of the nearest covered
    #: region, ``planner.accuracy.ranges``): a measured time lies within prediction x (1 + low) .. x (1 + high) for 80% of them
    time_residuals: tuple[float, float] = (0.0, 0.0)
    time_range_note: str = ""  # where the range comes from
    time_range_widened: str = ""  # why it was widened ("" when it was not: the data covers this query)
    #: (GPUs, max batch) of the next valid tensor-parallel group, when this one holds fewer than
    #: ``FEW_SEQUENCES``: "4 x H100 would hold 55 sequences" where 2 hold 1. None otherwise.
    larger_group: tuple[int, int] | None = None
    parallelism: str = "tp"  # how the group splits the model (model.parallel.PARALLELISMS)
    alternatives: tuple[LayoutOption, ...] = ()  # the other layouts on the same GPUs, where the model loads
    experts_upcast: bool = False  # the engine loads the MXFP4 experts as bf16 on this layout (model.experts_upcast)
    expert_precision: str = ""  # the routed experts' precision (resolve.expert_precision); "" for a dense model
    #: how often such ranges held on published runs planner never saw (``planner.accuracy.ranges.coverage_note``); ""
    #: where a calibration file's own range stands instead
    time_range_held: str = ""
    #: where the price comes from: "on-demand, <provider>, <date>" for the catalog's (``Gpu.price``: one quote, or the
    #: median of several), "" for a price given
    price_source: str = ""
    #: the calibration file in effect and what it does to this GPU and engine (None: no calibration file)
    calibration: CalibrationUse | None = None
    #: the largest batch the engine serves: min(memory.max_batch, engine_batch_limit)
    max_batch: int = 0
    #: the most sequences the engine runs at once on this group (``planner.deploy.engine_sequence_limit``)
    engine_batch_limit: int = 0
    #: the range a budget review sizes this group with (``planner.accuracy.serving_margin.sizing_range``: serving
    #: runs' held-out TPOT errors where there are enough), and where it comes from; not this plan's own range
    serving_margin: tuple[float, float] = (0.0, 0.0)
    serving_margin_note: str = ""
    #: the prefill's datasheet roofline floor, seconds: max(bytes / (GPUs x HBM bandwidth), FLOPs / (GPUs x peak))
    ttft_floor_s: float = 0.0
    #: (prompt tokens, output tokens) of one request, when given: the lengths ``cost_with_prompts_usd`` is at
    request_tokens: tuple[int, int] | None = None
    #: US$ per million output tokens with each request's prompt processing (``request_prompt_busy_s``) added to
    #: its share of the decode steps at ``batch``, 100% busy (``model.cost_per_million_output_tokens_with_prompts_usd``);
    #: NaN without ``request_tokens``. ``cost_per_mtok_usd`` is decode only.
    cost_with_prompts_usd: float = math.nan
    #: the shipped published runs of this deployment with ``planner validate``'s error on each, the farthest off first
    #: (``planner.accuracy.same_deployment.same_deployment_runs``: same GPU, model, engine, layout and group, weight
    #: and KV precision)
    published_runs: tuple = ()
    #: the TTFT of ``request_tokens``' prompt alone on the group (the prefill the cost with prompts adds), seconds, and
    #: its datasheet roofline floor (as ``ttft_floor_s`` for the context); NaN and 0 without ``request_tokens``.
    #: ``ttft_s`` is the whole context as one prompt (trial 24 F12: "TTFT (4,096-token prompt) 430 ms" beside
    #: 2,000-token prompts, whose TTFT is 241 ms)
    request_ttft_s: float = math.nan
    request_ttft_floor_s: float = 0.0
    #: the group-seconds ``request_tokens``' prompt holds, the prefill ``cost_with_prompts_usd`` charges
    #: (``planner.timing.prompt_busy_s``, as ``planner export`` charges it): ``request_ttft_s`` under tensor
    #: parallelism; under data-parallel attention or a pipeline 1/s of the prefill of s prompts, one on each rank or
    #: stream (trial 33 F2); NaN without ``request_tokens``
    request_prompt_busy_s: float = math.nan
    #: the engine release the prediction assumes, as people name it (``engine_release_words``: "vLLM 0.11.0" for
    #: vllm==0.11.0, "vLLM 0.19.0" for the default ``vllm``), "" where another engine was named without a release
    #: (trial 28 F12)
    engine_release: str = ""
    #: why the time ranges' slow end is open (``planner.deploy.slow_end_open``: a group across nodes, slower than
    #: modelled by an amount no held-out run measures; trial 31 F7), "" where the range is closed
    slow_end_open: str = ""
    #: what planner does not model for this layout (``planner.deploy.not_modelled_words``: dp-ep's large-scale MoE
    #: recipe, a tensor-parallel group's scale-out network), "" where nothing is named
    not_modelled: str = ""
    #: the whole model's weights in parts, bytes: (quantized values, their block scales, params kept 16-bit, routed
    #: experts), summing to ``memory.weight_bytes`` (``planner.model.memory.weight_parts``, the values and scales
    #: split by the format's bits: ``weight_parts_split``); () where the loaded bytes are not the stored ones (MXFP4
    #: experts padded) or the format keeps nothing apart (trial 32 F5: int4 32B reads 19.2 GB, not params x 0.5 B)
    weight_parts: tuple[float, ...] = ()
    #: how a weight precision typed by another name was read ("awq read as int4 (4-bit weights, one 16-bit scale per
    #: group of 128: 0.515625 B a weight)", ``weight_alias_words``); "" where typed as the catalog names it (trial 32 F8)
    weight_alias: str = ""
    #: "activations and runtime" per GPU in parts, bytes: (the profiling run's activation peak, non-torch memory,
    #: NCCL / custom all-reduce buffers of a tensor-parallel group), summing to ``memory.reserve_bytes_per_gpu``
    #: (``planner.model.memory.reserve_parts``); () where they do not (a calibrated reserve, dp-ep, a pipeline)
    reserve_parts: tuple[float, ...] = ()
    #: what ``step_breakdowns``, ``breakdown_refused`` and ``vs_vllm`` are computed from, on first read (``StepParts``);
    #: None: a plan made without it (they read empty)
    step_parts: StepParts | None = field(default=None, repr=False, compare=False)

    @property
    def step_breakdowns(self) -> tuple[m.StepBreakdown, ...]:
        """The decode step at ``batch`` and, where it is another, at batch 1 in parts
        (``planner.model.decode_step_breakdown``: each operator group's seconds and bound, summing to the TPOT; trial
        33 F5; a pipeline's: ``pp_decode_step_breakdown``, dp-ep's: ``dp_decode_step_breakdown``); () where the step
        cannot be broken down, with the reason in ``breakdown_refused``. Computed on first read (``StepParts``)."""
        return () if self.step_parts is None else self.step_parts.breakdowns[0]

    @property
    def breakdown_refused(self) -> str:
        """Why the decode step is not broken down (``step_breakdowns`` ()), "" where it is."""
        return "" if self.step_parts is None else self.step_parts.breakdowns[1]

    @property
    def vs_vllm(self) -> EngineDifference | None:
        """The same deployment on vLLM, for a plan on another engine (``EngineDifference``; trial 33 F11); None on
        vLLM. Computed on first read (``StepParts``)."""
        return None if self.step_parts is None else self.step_parts.vs_vllm

    def request_ttft_range(self) -> tuple[float, float]:
        """``time_range`` of ``request_ttft_s``, at least its roofline floor."""
        return self.time_range(self.request_ttft_s, self.request_ttft_floor_s)

    def to_dict(self) -> dict:
        """The plan as plain values (``planner plan --json``'s object): every figure the text prints, in base units
        (bytes, seconds, FLOP/B), each time with the range the text gives beside it (``*_range_s``: low, high).
        ``max_batch`` is the largest batch the engine serves (``memory_max_batch``, what memory holds, at most
        ``engine_max_num_seqs``). ``pandas.DataFrame([plan(...).to_dict() for ...])`` makes a table of plans."""
        p = self
        mem = p.memory
        return {
            "gpu": p.gpu.name,
            "model": p.model.name,
            "context_tokens": p.context,
            "gpus": p.gpus,
            "engine": p.engine.name,
            # the release the prediction assumes, as plan's "engine:" line names it ("vLLM 0.19.0" for the default
            # ``vllm``); null where another engine was named without a release (trial 28 F12)
            "engine_release": p.engine_release or None,
            "weight_precision": p.weight_precision,
            "kv_precision": p.kv_precision,
            "memory_utilization": p.memory_utilization,
            "weight_bytes": float(mem.weight_bytes),
            "kv_budget_bytes_per_gpu": float(mem.kv_budget_bytes_per_gpu),
            "kv_bytes_per_sequence": float(mem.kv_bytes_per_sequence),
            "kv_cache_tokens": int(mem.kv_cache_tokens),
            "max_batch": p.max_batch,
            "memory_max_batch": int(mem.max_batch),
            "engine_max_num_seqs": p.engine_batch_limit,
            "max_batch_capped_by_engine": p.batch_capped,
            "ridge_flop_per_byte": p.ridge_flop_per_byte,
            "batch": p.batch,
            "tpot_s": float(p.at_batch.step_s),
            "tpot_range_s": list(p.tpot_range(p.at_batch)),
            "time_range_note": p.time_range_note,
            "calibration": None if p.calibration is None else p.calibration.as_dict(),
            "time_range_widened": p.time_range_widened,
            "time_range_held": p.time_range_held,
            "serving_margin": {"low": p.serving_margin[0], "high": p.serving_margin[1], "note": p.serving_margin_note},
            "time_range_coverage": {
                c.quantity: {
                    "figures": c.figures,
                    "inside": c.inside,
                    "below": c.below,
                    "above": c.above,
                    "sources": c.sources,
                }
                for c in (stated_coverage() if p.time_range_held else ())  # none beside a calibration file's range
            },
            "throughput_tokens_per_s": float(p.at_batch.throughput_tokens_per_s),
            "intensity_flop_per_byte": float(p.at_batch.intensity_flop_per_byte),
            "tpot_s_batch_1": float(p.at_one.step_s),
            "tpot_range_s_batch_1": list(p.tpot_range(p.at_one)),
            "throughput_tokens_per_s_batch_1": float(p.at_one.throughput_tokens_per_s),
            "mfu": float(p.at_batch.mfu),
            "mbu": float(p.at_batch.mbu),
            "ttft_s": p.ttft_s,
            "ttft_range_s": list(p.ttft_range()),
            # every *_range_s's high end is a lower bound where the group spans nodes, slower than modelled (trial 31
            # F7): no invented widening, the reason instead
            "slow_end_open": bool(p.slow_end_open),
            "slow_end_open_reason": p.slow_end_open or None,
            "not_modelled": p.not_modelled or None,
            "price_usd_per_gpu_hour": p.price_usd_per_gpu_hour,
            "price_source": p.price_source,
            "cost_per_million_output_tokens_usd": p.cost_per_mtok_usd,
            "cost_per_million_output_tokens_basis": api.COST_PER_MTOK_BASIS,
            "request_tokens": None
            if p.request_tokens is None
            else {"prompt": p.request_tokens[0], "output": p.request_tokens[1]},
            "cost_per_million_output_tokens_with_prompts_usd": None
            if p.request_tokens is None
            else p.cost_with_prompts_usd,
            "request_ttft_s": None if p.request_tokens is None else p.request_ttft_s,
            "request_prompt_busy_s": None if p.request_tokens is None else p.request_prompt_busy_s,
            "request_ttft_range_s": None if p.request_tokens is None else list(p.request_ttft_range()),
            "warnings": list(p.warnings),
            "larger_group": None
            if p.larger_group is None
            else {"gpus": p.larger_group[0], "max_batch": p.larger_group[1]},
            "parallelism": p.parallelism,
            "alternatives": [vars(a) for a in p.alternatives],
            "published_runs": [r.as_dict() for r in p.published_runs],
            # the decode step in parts at the batch and at batch 1, by batch (trial 33 F5; planner plan --explain)
            "step_breakdown_s": {str(int(b.batch)): breakdown_as_dict(b) for b in p.step_breakdowns} or None,
            "step_breakdown_refused": p.breakdown_refused or None,
            "vs_vllm": None if p.vs_vllm is None else p.vs_vllm.as_dict(),
            # the "Margin: ..." line of a fleet sized at the margin's slow end (planner plan --rate sets it); a plan
            # alone sizes no fleet
            "margin_verdict": None,
        }

    @property
    def batch_capped(self) -> bool:
        """Whether the engine's sequence limit, not memory, bounds the max batch."""
        return self.engine_batch_limit < int(self.memory.max_batch)

    def time_range(self, seconds: float, floor_s: float = 0.0) -> tuple[float, float]:
        """seconds x (1 + low) .. seconds x (1 + high), neither end below ``floor_s`` (the datasheet roofline floor:
        no run is faster, whatever the held-out residuals of another engine say)."""
        low, high = self.time_residuals
        return max(seconds * (1.0 + low), floor_s), max(seconds * (1.0 + high), floor_s)

    @staticmethod
    def decode_floor_s(step: DecodeStep) -> float:
        """A decode step's datasheet roofline floor, seconds: max(bytes / (GPUs x HBM bandwidth), FLOPs / (GPUs x
        peak)), what MBU or MFU 100% would take."""
        return float(step.step_s) * max(float(step.mbu), float(step.mfu))

    def tpot_range(self, step: DecodeStep) -> tuple[float, float]:
        """``time_range`` of a decode step, at least its roofline floor (``decode_floor_s``)."""
        return self.time_range(float(step.step_s), self.decode_floor_s(step))

    def ttft_range(self) -> tuple[float, float]:
        """``time_range`` of the TTFT, at least the prefill's roofline floor (``ttft_floor_s``)."""
        return self.time_range(self.ttft_s, self.ttft_floor_s)


#: What a one-scenario function says to do with a sweep instead.
SWEEP_HINT = (
    "for a sweep, give the arrays to max_batch, min_gpus, tpot, ttft, throughput or cost_per_mtok, or call plan "
    "once per row"
)


def plan(
    gpu: Any,
    model: Any,
    context: Any,
    *,
    batch: Any = None,
    price_per_gpu_hour: Any = None,
    price_kind: str = "on-demand",
    price_basis: str | None = None,
    prompt_tokens: Any = None,
    output_tokens: Any = None,
    **options: Unpack[GroupOptions],
) -> Plan:
    """One scenario, fully evaluated (scalars only): the CLI's ``planner plan`` prints this. For a MoE model the
    other layouts on the same GPUs (data-parallel attention with experts spread ...) come beside it.

    ``batch`` (default: max batch, what memory holds at most the engine's ``max_num_seqs``: ``served_batch``) is
    the batch of the speed figures; options: ``planner.options.GroupOptions``
    (``errors`` is always "raise": one scenario). ``price_kind`` (on-demand, spot or reserved) and ``price_basis``
    ("median" or a provider's name) choose the catalog quote the cost is at, as a review's option's ``price_kind``
    and ``price_basis`` do (``planner export``); ``price_per_gpu_hour`` overrides both.
    The cost is decode's alone at ``batch``, 100% busy (``cost_per_mtok_usd``); with ``prompt_tokens`` and
    ``output_tokens`` (whole tokens, one request) the plan also prices each request's prefill of its prompt
    (``cost_with_prompts_usd``).
    """
    one_scenario("plan", SWEEP_HINT, gpu=gpu, model=model, context=context, batch=batch, gpus=options.get("gpus"))
    o = Options.read(GroupOptions, options, plan)
    if o.errors != "raise":
        raise TypeError('plan() evaluates one scenario and raises its error: errors="raise" only')
    cat = as_catalog(o.catalog)
    g, mdl = cat.gpu(gpu), cat.model(model)
    o = replace(o, weight_precision=implied_weight_precision(model, o.weight_precision))
    sixteen = sixteen_bit_note(g, mdl, o.weight_precision, o.kv_precision, o.engine)
    if sixteen:  # a GPU without bf16 runs a bf16 model as fp16 (the same bytes): say it and plan it so
        if not experts_published_apart(mdl):  # experts in another format stay as published, as every call keeps them
            o = replace(o, weight_precision="fp16")
    eng = engine_profile(o.engine)
    wp = cat.precision(o.weight_precision).name if o.weight_precision is not None else mdl.native_precision
    kp = cat.precision(o.kv_precision).name if o.kv_precision is not None else default_kv_precision(mdl)
    if o.kv_precision is None and kp == "bf16" and not g.takes_weights("bf16") and g.takes_weights("fp16"):
        kp = "fp16"  # the cache is kept in the model's dtype, fp16 where the GPU has no bf16 (T4; int4 weights too)
    layout = check_parallelism(o.parallelism)
    cannot = release_cannot_run(options.get("engine"), mdl, layout)  # vllm==0.6.0 and DeepSeek-V3 or dp-ep
    if cannot:
        raise OutOfRangeError(cannot)
    # the KV precision as typed ("fp4", not "nvfp4"): an error about it quotes the user's name (then the catalog's)
    typed_kv = o.kv_precision if o.kv_precision is not None else kp
    o = replace(o, kv_precision=typed_kv, engine=eng, catalog=cat, parallelism=layout)
    if o.gpus is not None and api.uneven_experts(mdl, int(o.gpus), layout, eng)[0]:  # before the memory's refusal
        raise OutOfRangeError(api.uneven_experts(mdl, int(o.gpus), layout, eng)[0])
    mem = api._memory_plan(g, mdl, context, o)
    n = int(mem.gpus)
    refused, uneven = api.uneven_experts(mdl, n, layout, eng)  # dp-ep over a group that does not divide the experts
    if refused:
        raise OutOfRangeError(refused)
    top = int(mem.max_batch)
    if batch is None and top > MAX_BATCH_INPUT:  # only with implausible catalog numbers (memory_bytes near 2**63)
        raise OutOfRangeError(
            f"{g.name} holds {top:,} sequences of {mdl.name} at once, more than the {MAX_BATCH_INPUT:,} planner "
            f"models; check the catalog's memory_bytes ({g.memory_bytes:,}) or give --batch"
        )
    served, _ = served_batch(top, eng, g, layout, n)
    limit = api.engine_sequence_limit(eng, g, layout, n)
    b = served if batch is None else int(_count(batch, "batch", MAX_BATCH_INPUT, " of sequences"))
    at_batch = _decode_step(g, mdl, context, replace(o, batch=b, gpus=n))
    at_one = _decode_step(g, mdl, context, replace(o, batch=1, gpus=n))
    prefill = _prefill(g, mdl, context, replace(o, gpus=n))
    first = prefill.ttft_s

    # the prefill's datasheet roofline: its bytes at the GPUs' HBM bandwidth, its FLOPs at their peak for the weights'
    # math (the decode step's, the same GPU and precision); the longer
    def floor_of(prefill) -> float:
        return max(
            float(prefill.bytes_moved) / (n * float(at_one.bandwidth_bytes_per_s)),
            float(prefill.flop) / (n * float(at_one.peak_flop_per_s)),
        )

    ttft_floor = floor_of(prefill)
    quote = _chosen_quote(g, price_kind, price_basis) if price_per_gpu_hour is None else None
    if price_per_gpu_hour is not None:
        price = float(_price(price_per_gpu_hour))
    else:  # no on-demand quote: NaN, the cost n/a (as before)
        price = api.gpu_price_per_hour(g, catalog=cat) if quote is None else float(quote.usd_per_gpu_hour)
    cost = float(m.cost_per_million_tokens_usd(price, n, at_batch.throughput_tokens_per_s))
    request = _request_tokens(prompt_tokens, output_tokens, context)
    with_prompts = prompt_s = busy = math.nan
    prompt_floor = 0.0
    if request is not None:
        asked = _prefill(g, mdl, request[0], replace(o, gpus=n))
        prompt_s, prompt_floor = float(asked.ttft_s), floor_of(asked)
        # the group-seconds the prompt holds, as export charges it (dp-ep: 1/g of g prompts' prefill, each rank its own)
        busy = float(_prompt_busy_s(g, mdl, request[0], replace(o, gpus=n)))
        with_prompts = float(
            m.cost_per_million_output_tokens_with_prompts_usd(
                price, n, request[1], at_batch.throughput_tokens_per_s, busy
            )
        )
    warnings = [sixteen] if sixteen else []
    own = cat.replaced_note(g, mdl)  # a user folder's entry in place of the shipped one: said wherever it is used
    warnings += [own] if own else []
    only = weight_only_note(g, cat.precision(wp), eng)
    warnings += [only] if only else []
    which_fp8 = block_checkpoint_note(mdl, wp, n, layout, eng)  # Qwen's block-FP8 checkpoint does not split here
    warnings += [which_fp8] if which_fp8 else []
    if b > limit:
        warnings.append(
            f"batch {b:,} is more than {eng.name} runs at once on {n:,} x {g.name}: {limit:,} sequences "
            f"({limit_words(eng, g, layout, n)}); the figures at it hold only where the deployment raises that limit"
        )
    ctx = int(_count(context, "context", MAX_CONTEXT_TOKENS, " of tokens", tokens=True))
    beyond = api.trained_context_warning(mdl, ctx)  # the one rule and wording (planner.deploy)
    warnings += [beyond] if beyond else []
    if eng.kv_precisions is None and kp not in ("fp16", "bf16", "fp32", "fp8"):
        warnings.append(f"KV cache in {kp}: a what-if of the {eng.name!r} engine; vLLM caches fp16, bf16 or fp8 only")
    warnings += [uneven] if uneven else []
    spans = spans_nodes_warning(g, n, layout)
    if spans and not is_pipeline(
        layout
    ):  # a pipeline's sends between nodes are timed at PCIe's (planner.model.pipeline)
        warnings.append(spans)
    warnings += [PIPELINE_NOTE] if is_pipeline(layout) and pipeline_stages(layout, n) > 1 else []
    warnings += _release_note(options.get("engine"))
    release_kv = _release_memory_note(options.get("engine"), g, mdl, context, n, o, int(mem.max_batch))
    warnings += [release_kv] if release_kv else []
    dsa_kv = dsa_default_kv_note(options.get("engine"), mdl, options.get("kv_precision") is not None)
    warnings += [dsa_kv] if dsa_kv else []
    untested = untested_architecture_note(g, eng)
    warnings += [untested] if untested else []
    curves = curves_note(g.name, g.architecture) if eng.kernel_curves else ""
    warnings += [curves] if curves else []
    fp8_kv = fp8_kv_note(g, mdl, eng, kp, cat.precision(kp).bytes_per_element)
    warnings += [fp8_kv] if fp8_kv else []
    if mdl.moe is not None and eng.kernel_curves:
        # the GPU and engine only: past 8 tokens per step the floor is held (a few % of a large step's time)
        floor_note = moe_floor_note(g.name, eng.name, 1, g.architecture)
        warnings += [floor_note] if floor_note else []
    if layout == "dp-ep":  # no all-reduce: the MoE layers' token exchange is the step's only collective
        exchange = moe_exchange_note(g, mdl, eng, n)
        warnings += [exchange] if exchange else []
    elif 1 < n <= fabric_numbers(g)["interconnect_domain_gpus"] and uses_allreduce_table(eng):
        table_note = borrowed_note(g, g.interconnect_bytes_per_s or 32e9, default_catalog(), n)
        warnings += [table_note] if table_note else []
    stale = stale_price_warning(quote, g.name) if price_per_gpu_hour is None else None
    warnings += [stale] if stale else []
    util = memory_utilization_in_effect(  # SGLang: its fraction on this GPU and group
        eng, mem.visible_bytes_per_gpu, n, layout, mdl.mla is not None, o.memory_utilization
    )
    from planner.accuracy.ranges import coverage_note  # (not at import: the Excel add-in imports this module)
    from planner.accuracy.same_deployment import Deployment, same_deployment_runs
    from planner.accuracy.serving_margin import sizing_range

    rng = residual_range(g, eng, o.calibration, cat, gpus=n, model=mdl)
    margin = sizing_range(g, eng, cat, n, mdl, o.calibration, parallelism=layout)
    larger = _larger_group(g, mdl, ctx, n, top, o)
    return Plan(
        g,
        mdl,
        ctx,
        n,
        eng,
        util,
        wp,
        kp,
        mem,
        float(api.ridge(g, precision=wp, catalog=cat)),
        b,
        at_batch,
        at_one,
        float(first),
        price,
        cost,
        tuple(warnings),
        (rng.low, rng.high),
        rng.note,
        rng.widened,
        larger,
        layout,
        _alternatives(g, mdl, context, n, price, o, options.get("engine")),
        experts_upcast(g, mdl, n, layout, eng, o.weight_precision, cat),
        expert_precision(cat, mdl, o.weight_precision).name if mdl.moe is not None else "",
        "" if rng.calibrated else coverage_note(),
        _price_source(g, quote) if price_per_gpu_hour is None else "",
        calibration_in_effect(g, eng, o.calibration),
        served,
        limit,
        (margin.low, margin.high),
        margin.note,
        ttft_floor if ttft_floor == ttft_floor else 0.0,
        request,
        with_prompts,
        tuple(same_deployment_runs(Deployment.planned(g.name, mdl.name, eng.name, layout, n, wp, kp))),
        request_ttft_s=prompt_s,
        request_ttft_floor_s=prompt_floor if prompt_floor == prompt_floor else 0.0,
        request_prompt_busy_s=busy,
        engine_release=engine_release_words(options.get("engine")),
        slow_end_open=slow_end_open(g, n, layout),
        not_modelled=not_modelled_words(g, n, layout),
        weight_parts=weight_parts_split(cat, mdl, wp, eng, float(mem.weight_bytes)),
        weight_alias=weight_alias_words(cat, options.get("weight_precision"), wp),
        reserve_parts=reserve_parts_split(cat, g, mdl, wp, eng, n, layout, float(mem.reserve_bytes_per_gpu)),
        step_parts=StepParts(g, mdl, context, replace(o, gpus=n), b, float(at_batch.step_s)),
    )


def breakdown_as_dict(b: m.StepBreakdown) -> dict:
    """A decode step's parts for ``plan --json``: the TPOT, each part's seconds and bound, and the residual (what the
    parts' sum misses of the TPOT: rounding)."""
    return {
        "batch": int(b.batch),
        "tpot_s": b.step_s,
        "parts_s": b.seconds(),
        "bound": {p.key: p.bound for p in b.parts},
        "residual_s": b.residual_s,
    }


@dataclass(frozen=True, eq=False)
class StepParts:
    """A plan's decode step in parts (``Plan.step_breakdowns``, ``breakdown_refused``) and beside vLLM's
    (``Plan.vs_vllm``), each computed when first read and kept: ``plan`` stores the deployment here, ``planner plan``
    reads them for ``--explain``, ``--json`` and its vs-vLLM line, and a caller that never reads them (the what-if
    workbook's plan per lever) never pays for another engine's whole step and two breakdowns. ``options``: the plan's,
    its group (``gpus``) resolved; ``batch`` and ``tpot_s``: the plan's batch and its TPOT."""

    gpu: Gpu
    model: Model
    context: Any
    options: Options
    batch: int
    tpot_s: float

    @functools.cached_property
    def breakdowns(self) -> tuple[tuple[m.StepBreakdown, ...], str]:
        """(the step at ``batch`` and, where it is another, at 1 in parts; why not, "" where they are)."""
        batches = (self.batch, 1) if self.batch != 1 else (self.batch,)
        g, mdl, context, o = self.gpu, self.model, self.context, self.options
        try:
            return tuple(_decode_breakdown(g, mdl, context, replace(o, batch=x)) for x in batches), ""
        except InvalidInputError as exc:  # a step the breakdown cannot time
            return (), str(exc)

    @functools.cached_property
    def vs_vllm(self) -> EngineDifference | None:
        """``Plan.vs_vllm``: the step at ``batch`` on vLLM, and each part's difference where the step breaks down."""
        g, mdl, context, b = self.gpu, self.model, self.context, self.batch
        if self.options.engine.name.startswith(COMPARED_ENGINE):
            return None
        vllm = replace(self.options, engine=engine_profile(COMPARED_ENGINE), batch=b, check_fit=False)
        try:
            vllm_s = float(_decode_step(g, mdl, context, vllm).step_s)
            parts: dict[str, float] = {}
            if self.breakdowns[0]:
                ours, theirs = self.breakdowns[0][0].seconds(), _decode_breakdown(g, mdl, context, vllm).seconds()
                parts = {k: ours[k] - theirs[k] for k in ours}
            return EngineDifference(b, self.tpot_s, vllm_s, parts)
        except PlannerError as exc:
            return EngineDifference(b, self.tpot_s, math.nan, {}, refused=str(exc))


def reserve_parts_split(
    cat: Catalog, g: Gpu, mdl: Model, wp: str, eng: EngineProfile, n: int, layout: str, reserve_bytes: float
) -> tuple[float, ...]:
    """``Plan.reserve_parts`` (trial 32 F6: 0.88 GB at TP 1, 2.84 GB at TP 2, unexplained): the tensor-parallel
    group's activation peak (``activation_peak_bytes``) split by ``planner.model.memory.reserve_parts``; () where the
    parts do not sum to the plan's reserve within 0.5% (a calibration's, another layout's)."""
    from planner.catalog.resolve import _resolve

    if layout != "tp":
        return ()
    r = _resolve(cat, "raise", gpu=g.name, model=mdl.name, weight_precision=wp, engine=eng)
    act = m.activation_peak_bytes(r.model, r.limits, eng, n, r.precision)
    parts = tuple(float(x) for x in m.reserve_parts(act, n, eng))
    return parts if abs(sum(parts) - reserve_bytes) <= 0.005 * reserve_bytes else ()


def weight_parts_split(cat: Catalog, mdl: Model, wp: str, eng: EngineProfile, loaded_bytes: float) -> tuple[float, ...]:
    """``Plan.weight_parts``: (quantized values, block scales, kept 16-bit, routed experts) bytes of the whole model
    at ``wp``, from ``planner.model.memory.weight_parts``, the quantized layers split by the format's bits (values
    bits_per_element, scales scale_bits / scale_block per value: int4 4 : 0.125); () where they do not sum to the
    bytes loaded (within 0.5%) or nothing is kept 16-bit and there are no scales (a 16-bit model: one part)."""
    from planner.catalog.resolve import _resolve

    r = _resolve(cat, "raise", model=mdl.name, weight_precision=wp, engine=eng)
    quantized, kept, experts = (float(x) for x in m.weight_parts(r.model, r.precision))
    prec = cat.precision(wp)
    payload = prec.bits_per_element
    scales_per_value = prec.scale_bits / prec.scale_block if prec.scale_block else 0.0
    values = quantized * payload / (payload + scales_per_value)
    parts = (values, quantized - values, kept, experts)
    if prec.quantizes == "all" or abs(sum(parts) - loaded_bytes) > 0.005 * loaded_bytes:
        return ()
    return parts


def weight_alias_words(cat: Catalog, typed: Any, wp: str) -> str:
    """How a weight precision typed by another name than the catalog's was read, from the catalog's precision entry
    (trial 32 F8: ``-w awq`` printed "weights int4" and nothing else): "awq read as int4 (4-bit weights, one 16-bit
    scale per group of 128: 0.515625 B a weight)"; "" where typed as the catalog names it, or not typed."""
    if not isinstance(typed, str) or typed.strip().lower() == wp.lower():
        return ""
    prec = cat.precision(wp)
    scale = (
        f", one {prec.scale_bits:g}-bit scale per group of {prec.scale_block:,}" if prec.scale_block else ", no scales"
    )
    return f"{typed.strip()} read as {wp} ({prec.bits_per_element:g}-bit weights{scale}: {prec.bytes_per_element:g} B a weight)"


#: The makers' names of the engines a release may be pinned for ("vllm==0.11.0": vLLM), by the name's start.
ENGINE_MAKERS = (("vllm", "vLLM"), ("sglang", "SGLang"), ("tensorrt", "TensorRT-LLM"), ("trt", "TensorRT-LLM"),
                 ("nvidia-nim", "NVIDIA NIM"), ("nim", "NVIDIA NIM"), ("lmdeploy", "LMDeploy"))  # fmt: skip


def engine_release_words(engine: Any) -> str:
    """The engine release a plan's prediction assumes, as people name it, for ``planner plan``'s text (trial 28
    F12: "as vllm-fullsort admits them" for --engine vllm==0.11.0): "vLLM 0.11.0" for a pinned release; for none or
    the bare ``vllm`` (``DEFAULT_ENGINE``), the release its profile models ("vLLM 0.19.0", ``NEWEST_LOGGED_VLLM``,
    as ``planner validate`` assumes for a run without one); "" for another engine or profile named outright."""
    from planner.engines.profiles import DEFAULT_ENGINE, NEWEST_LOGGED_VLLM

    pinned = pinned_release(engine)
    if pinned is not None:
        name, version = pinned
        maker = next((w for start, w in ENGINE_MAKERS if name.startswith(start)), name)
        return f"{maker} {version}"
    if engine is None or (isinstance(engine, str) and engine.strip().lower() == DEFAULT_ENGINE):
        return f"vLLM {'.'.join(map(str, NEWEST_LOGGED_VLLM))}"
    return ""


def _request_tokens(prompt_tokens: Any, output_tokens: Any, context: Any) -> tuple[int, int] | None:
    """(prompt, output) whole tokens of one request, both given or neither (None), together at most ``context``;
    anything else is refused."""
    if prompt_tokens is None and output_tokens is None:
        return None
    if prompt_tokens is None or output_tokens is None:
        raise InvalidInputError("give prompt_tokens and output_tokens together (one request's lengths) or neither")
    prompt = int(_count(prompt_tokens, "prompt_tokens", MAX_CONTEXT_TOKENS, " of tokens", tokens=True))
    output = int(_count(output_tokens, "output_tokens", MAX_CONTEXT_TOKENS, " of tokens", tokens=True))
    ctx = int(_count(context, "context", MAX_CONTEXT_TOKENS, " of tokens", tokens=True))
    if prompt + output > ctx:
        raise OutOfRangeError(
            f"prompt_tokens {prompt:,} + output_tokens {output:,} are more than the context {ctx:,} (the tokens one "
            f"sequence holds); give a context of {prompt + output:,} or more"
        )
    return prompt, output


def kv_replication_words(model: Model, gpus: int, group_bytes: float) -> str:
    """Where a group of ``gpus`` holds some KV heads more than once (``planner.model.memory.kv_replication``: each
    GPU holds ceil(KV heads / g), at least one), the words that follow "4 KV heads" beside the per-token figure
    ``group_bytes`` (the group's): " replicated to 8 GPUs, one each; 193 kB unreplicated". "" where the heads split
    evenly, for MLA (its own words) and for a model that caches no KV heads. vLLM: ``num_kv_head_replicas`` = tp /
    KV heads when tp > KV heads (vllm/model_executor/layers/linear.py ``QKVParallelLinear``); TensorRT-LLM:
    ceil(KV heads / tp) a GPU (tensorrt_llm/_torch/modules/attention.py, NVIDIA/TensorRT-LLM c6d3bb2a)."""
    kvh = int(model.num_kv_heads or 0)
    if model.mla or kvh <= 0 or gpus <= 1:
        return ""
    each = math.ceil(kvh / gpus)
    held = each * gpus
    if held <= kvh:
        return ""
    unreplicated = fmt_bytes(group_bytes * kvh / held)
    if each == 1:
        return f" replicated to {gpus:,} GPUs, one each; {unreplicated} unreplicated"
    return f" held {each} on each of {gpus:,} GPUs, {held} in all: {held - kvh} replicated; {unreplicated} unreplicated"


def limit_words(eng: EngineProfile, g: Gpu, layout: str, gpus: int) -> str:
    """Where the engine's sequence limit on a group comes from: "vllm's max_num_seqs", or with the per-stream
    limit where each attention rank or pipeline micro-batch has its own ("..., 1,024 on each of 8 attention
    ranks")."""
    per = eng.batching_limits(g.memory_bytes, g.engine_device_name)[1]
    streams = api.engine_sequence_limit(eng, g, layout, gpus) // per
    if streams <= 1:
        return f"{eng.name}'s max_num_seqs"
    each = "attention ranks" if layout == "dp-ep" else "pipeline micro-batches"
    return f"{eng.name}'s max_num_seqs, {per:,} on each of {streams} {each}"


#: What the held-out pipeline runs say of a "pp" plan (``python bench/heldout.py --source trtllm-perf-overview-1.2``
#: and the GPUStack rows GPUSTACK-064 / GPUSTACK-118; docs/model.md, "Pipeline parallelism").
PIPELINE_NOTE = (
    "pipeline parallel: held out, TensorRT-LLM 1.2's 32 pipeline runs (RTX PRO 6000, 2 to 8 stages) read 14% median / "
    "114% worst on output rate; on one page of H100 runs (1,000 requests at once) a vLLM 0.10.2 pipeline of 2 and an "
    "SGLang 0.5.4 pipeline of 4 served 1.7x and 4.1x slower than predicted, the same page's tensor-parallel runs of "
    "those models 0.8x to 1.5x: read these figures as a best case on those engines"
)


#: Max batches that differ by more than this share between vLLM's release memory rules are said in the plan.
RELEASE_MEMORY_GAP = 0.25


def _release_memory_note(engine: Any, g: Gpu, mdl: Model, context: Any, n: int, o: Options, held: int) -> str:
    """Where the bare ``vllm`` profile (vLLM 0.12-0.19's memory rule: sampler ~15.6 B per sequence x vocabulary entry)
    and the v0.11-era image's (``vllm-fullsort``: ~38 B, ``VLLM_VERSION_PROFILES``) hold max batches more than
    ``RELEASE_MEMORY_GAP`` apart on this group, the note naming both and how to pin one; "" elsewhere (a pinned
    release or another engine, a small vocabulary, a loose budget). gpt-oss-120b on 1 x H100 at 16,000 tokens and
    utilization 0.95: 13 against 5 sequences (trial 21 F8)."""
    if engine not in (None, "vllm") or held < 1:
        return ""
    try:
        other = int(
            api._memory_plan(g, mdl, context, replace(o, engine=engine_profile("vllm-fullsort"), gpus=n)).max_batch
        )
    except PlannerError:
        return ""
    if abs(held - other) <= RELEASE_MEMORY_GAP * max(held, other):
        return ""
    return (
        f"the KV budget depends on the vLLM release: this plan uses vLLM 0.12-0.19's memory rule (its sampler's "
        f"profiling peak, ~15.6 B per sequence x vocabulary entry, fitted on vLLM 0.19.0 logs) and holds {held:,} "
        f"sequences; the v0.11-era rule (~38 B, engine vllm-fullsort) holds {other:,} (the sampler's term grows with "
        f"{mdl.name}'s {mdl.vocab_size:,}-entry vocabulary): pin the release you run (engine vllm==0.11.0 ...)"
    )


def _release_note(engine: Any) -> list[str]:
    """The note of an engine named with a release outside the logged ones ("vllm==0.25.0", "vllm==0.1": mapped to
    the newest or oldest profile), or between two read ones, else nothing."""
    pinned = pinned_release(engine)
    if not pinned:
        return []
    why = engine_for_version(*pinned)[1]
    mapped = ("newer than the newest release", "older than the oldest release", "not read itself")
    return [why] if any(m in why for m in mapped) else []


def _price_source(g: Gpu, quote: Any = None) -> str:
    """Where the plan's catalog price of ``g`` comes from (``quote``, default ``Gpu.price``), "" when it has none."""
    quote = g.price("on-demand") if quote is None else quote
    if quote is None:
        return ""
    several = quote.is_median  # the median's provider lists each quote's date
    said = f"{quote.kind}, {quote.provider}" + ("" if several else f", {quote.date}")
    return f"{said}; {quote.caveat}" if quote.caveat else said  # how weak the quote is (trial 33 F1)


#: The rents ``plan`` can be costed at (a purchase is amortized by ``planner export`` only).
PLAN_PRICE_KINDS = ("on-demand", "spot", "reserved")


def _chosen_quote(g: Gpu, kind: str, basis: str | None) -> Any:
    """The catalog quote ``plan`` costs at: the catalog's rule (``Gpu.quote``: ``kind``'s median, billed in
    ``Gpu.median_billing_unit``, or with ``basis`` that provider's first quote of the kind), the one a review's option
    pays (``planner.export.ownership.chosen_quote``). A kind or provider the GPU has no quote of is refused, naming
    what it has; the on-demand median may be None (cost n/a, as before)."""
    from planner.errors import InvalidInputError

    if kind not in PLAN_PRICE_KINDS:
        raise InvalidInputError(
            f"price kind {kind!r}: give one of {', '.join(PLAN_PRICE_KINDS)} (a purchase is amortized by planner "
            'export, option pricing = "purchase")'
        )
    have = ", ".join(f"{p.kind} ({p.provider})" for p in g.prices if p.kind != "purchase") or "none"
    quote = g.quote(kind, basis)
    if quote is None and names_provider(basis):
        raise InvalidInputError(
            f"{g.name} has no {kind} quote from a provider named {basis.strip()!r}; its rents: {have} "
            "(planner catalog show gpu lists them; a [[price]] entry in a --catalog folder adds one)"
        )
    if quote is None and kind != "on-demand":
        raise InvalidInputError(f"{g.name} has no {kind} quote in the catalog; its rents: {have}")
    return quote


def _alternatives(
    g: Gpu, mdl: Model, context: Any, n: int, price: float, o: Options, engine: Any = None
) -> tuple[LayoutOption, ...]:
    """The other layouts on the same ``n`` GPUs, each at the largest batch it holds: the layouts a deployment is sized
    in (``layouts_to_size``: tensor parallelism and a MoE model's data-parallel attention, where ``engine``, as
    named, runs it), and a pipeline of one GPU per stage where the group is larger than the GPU's
    fabric domain (PCIe cards: tensor parallelism all-reduces over PCIe twice a layer, a pipeline sends once a stage).
    None where a layout does not load or hold one sequence."""
    others = layouts_to_size(mdl, engine)  # tp-ep times and holds as tp: offered by its refusal
    if n > fabric_numbers(g)["interconnect_domain_gpus"]:
        others += ("pp",)
    if n < 2:
        return ()
    out = []
    for other in others:
        if other == o.parallelism:
            continue
        on = replace(o, gpus=n, parallelism=other)
        try:
            held = int(api._memory_plan(g, mdl, context, on).max_batch)
            top, _ = served_batch(held, on.engine, g, other, n)
            step = _decode_step(g, mdl, context, replace(on, batch=top))
            first = float(_prefill(g, mdl, context, on, "ttft_s"))
        except PlannerError:
            continue
        rate = float(step.throughput_tokens_per_s)
        cost = float(m.cost_per_million_tokens_usd(price, n, rate))
        out.append(LayoutOption(other, n, top, float(step.step_s), rate, first, cost, held))
    return tuple(out)


#: A max batch below this is reported with what the next valid group of GPUs would hold.
FEW_SEQUENCES = 8


def _larger_group(gpu: Gpu, model: Model, context: int, gpus: int, top: int, o: Options) -> tuple[int, int] | None:
    """(GPUs, max batch) of the smallest valid tensor-parallel group above ``gpus`` (at most 64), asked only when
    ``top`` is below FEW_SEQUENCES; None when there is no larger group or it holds no more."""
    if top >= FEW_SEQUENCES:
        return None
    valid = valid_tp_sizes(model, catalog=o.catalog, parallelism=o.parallelism or "tp", engine=o.engine)
    larger = [size for size in valid if size > gpus and (o.parallelism in (None, "tp") or size in GPU_GROUPS)]
    if not larger:
        return None
    held = int(api._memory_plan(gpu, model, context, replace(o, gpus=larger[0])).max_batch)
    return (larger[0], held) if held > top else None


def replica_of(
    p: Plan, catalog: Catalog | None = None, calibration: Any = None, memory_utilization: float | None = None
) -> Replica:
    """The plan's deployment as one serving replica (its GPU group, precisions and engine), for
    ``planner.serving.fleet``: ``fewest_replicas(replica_of(p), ...)`` sizes a fleet on simulated percentiles.
    ``memory_utilization``: the share of memory the user gave (``planner plan --memory-utilization``), which the
    replica's memory plan then takes on every group tried (the engine's ``row_memory_utilization``, read by
    ``planner.deploy`` in place of the engine's default); None: the engine's default on each group (SGLang's rule).
    Without it the simulated replica sized its KV cache at the default whatever the user set (trial 31, F1: an SGLang
    dp-ep refusal "short by 23.1 GB" at 0.85 and at 0.95 alike)."""
    from planner.serving.load import Replica

    cat = as_catalog(catalog)
    weights = weights_to_pass(cat, p.model, p.weight_precision, p.expert_precision or None)
    precisions = {"weight_precision": weights, "kv_precision": p.kv_precision}
    engine = p.engine if memory_utilization is None else with_row_memory_utilization(p.engine, memory_utilization)
    return Replica(
        p.gpu.name, p.model.name, p.gpus, engine=engine, calibration=calibration, catalog=catalog,
        parallelism=p.parallelism, **precisions,
    )  # fmt: skip


def moe_exchange_note(g: Gpu, mdl: Model, eng: EngineProfile, n: int) -> str:
    """What stands in for NCCL's measured all-gather / reduce-scatter of a data-parallel MoE on ``n`` x ``g``
    (``planner.engines.allreduce_table.gather_scatter_note``), where the engine gathers there
    (``planner.model.parallel.ep_communication_s``): not under TensorRT-LLM's MNNVL all-to-all (a multi-node NVLink
    domain, the experts over more GPUs than a token's top-k) nor an engine that all-to-alls everywhere; "" there."""
    if mdl.moe is None or n <= 1 or not gathers_moe(eng):
        return ""
    domain = fabric_numbers(g)["interconnect_domain_gpus"]
    if eng.moe_exchange == "gather-quantized" and domain > 8 and n > mdl.moe.experts_per_token:
        return ""
    return gather_scatter_note(g, g.interconnect_bytes_per_s or 32e9, default_catalog(), n)
