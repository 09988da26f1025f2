"""The Load sheet's figures: each Levers scenario's replica under traffic, simulated by ``planner.serving``.

A queue simulation is not a cell formula: these figures are computed here, when the workbook is written or refreshed,
and stored in the sheet as numbers (``planner.workbook.load_sheet`` lays them out). For each scenario of the Levers
sheet (``calc.SCENARIOS``), resolved in Python as the Calc sheet's formulas resolve it (``lever_inputs``):

    no queue        ``api.peak_fleet`` at rate factor 1: a replica takes 1 / (output tokens / throughput at max batch
                    + one whole-context prefill) requests/s; the replicas the Levers formula would count with no queue
    one request     prompt = the Inputs' prompt tokens (blank: context - output tokens), output = the Inputs' output
                    tokens (the context holds prompt + output, and any room left beside them)
    batch limit     the engine's own ``max_num_seqs`` on the GPU (vLLM's 1,024 on an H100), the KV cache admitting
                    requests by the tokens they hold (paged: blocks for each request's prompt and output, not the
                    whole context), as ``planner plan --rate`` simulates its replica (``report.replica_of``: no
                    max_num_seqs given; trial 28 F7: the memory's max batch at the whole context, 55 sequences of
                    8,192 tokens where 300 of 1,500-token prompts are admitted, sized 11 x 4 GPUs where plan sizes
                    9 x 4); ``at_once``: the most the simulated replica decodes together, the engine's limit or the
                    KV cache's tokens over each prompt's, as vLLM admits them and preempts as outputs grow
                    (``ServingSetup.cap``, plan's "each running at most N sequences at once");
                    the simulated percentiles, not a closed form's TPOT-best batch, decide how many the traffic keeps
                    in flight
    needed          the fewest replicas whose simulated p95 TTFT and TPOT meet the Inputs' targets at the peak
                    (``serving.fleet.fewest_replicas``, as ``planner export`` sizes a fleet); none where those
                    replicas are kept nearly idle (``serving.fleet.near_ttft_floor``: their median TTFT over 75% of
                    the target, the rule plan warns with and export counts as not met): the scenario then does not
                    meet the targets (``LeverLoad.floor``, Calc's floor row; trial 29 F2)
    rate factor     peak / (needed x the no-queue rate): the queue term the Levers sheet's fleet formula multiplies the
                    no-queue rate by (Calc's "rate_factor" row, ``api.peak_fleet``'s ``rate_factor``), so that its
                    replicas are the needed ones; 1 when none are
    rate            traffic multiple x peak requests/s / replicas, for each of ``LOAD_MULTIPLES``; replicas: the
                    needed ones (the review's Latency sheet draws its fleet the same way), the no-queue ones where
                    no targets are given or none meet them
    prefix cache    the Inputs' prompt share in the prefix cache (blank: 0) in every simulated run: each prompt
                    computes the rest of its tokens (``planner.serving.load.latency_under_load``)
    burstiness      the Inputs' gamma shape of the traffic's arrival gaps (blank: 1, Poisson), routed at random over
                    the replicas (``serving.fleet.replica_burstiness``), in the sizing and every run, as ``planner
                    plan --rate --burstiness`` and ``planner export`` (``Workload.burstiness``) take it
    figures         p50 and p95 TTFT and TPOT of 1,000 requests per rate
                    (``serving.fleet.sweep_within_capacity``); None past the replica's capacity

Assumption: the Inputs' targets apply to the p95 of these requests, the percentile ``planner export`` sizes on by
default (a scenario's ``high_percentile``); the Levers sheet's "Meets the latency targets" row still compares one
whole-context prompt's TTFT and the decode step at max batch with them.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from planner import __version__, api
from planner.catalog import Catalog
from planner.deploy import engine_sequence_limit
from planner.engines.profiles import EngineProfile
from planner.errors import PlannerError
from planner.export.evaluate import LOAD_CURVE
from planner.serving.benchmark import scheduler_of
from planner.serving.fleet import Sizing, draws_edge, fewest_replicas, near_ttft_floor, sweep_within_capacity
from planner.serving.length_options import (
    length_percentile_of,
)
from planner.serving.load import LoadResult, Replica, run_setup
from planner.units import ms_words
from planner.workbook import calc
from planner.workbook.assumptions import simulated_parameters
from planner.workbook.budget_fleet import BudgetFleet, budget_fleet
from planner.workbook.calc import SCENARIOS
from planner.workbook.catalog_sheets import gqa_sibling
from planner.workbook.layout import LENGTH_KEYS, LOAD_INPUT_KEYS
from planner.workbook.tail import HIGH_PERCENTILE, Tail, _number, prompt_of, tail_of

#: The data-parallel attention + expert parallel lever: its Calc key and header (``calc.DP_EP``), and its layout.
(DP_EP, DP_EP_HEADER, _), DP_EP_LAYOUT = calc.DP_EP, "dp-ep"
#: Traffic on the Load sheet, as multiples of the Inputs' peak requests/s (spread over each scenario's replicas): the
#: review's latency-against-load multiples.
LOAD_MULTIPLES = LOAD_CURVE
#: The Inputs a Load sheet is computed from (``default_inputs`` keys); other inputs (price, batch) do not change it.


@dataclass(frozen=True)
class LeverLoad:
    """One Levers scenario under traffic: what it evaluates, its fleet, and its simulated runs (None past capacity).

    ``error``: why nothing was simulated (a scenario that does not fit, a blank input), else None."""

    key: str
    header: str
    inputs: dict[str, Any]
    error: str | None = None
    max_batch: int | None = None
    replicas: int | None = None  # the replicas for the peak with no queue (``api.peak_fleet`` at rate factor 1)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    needed_replicas: int | None = None  # the fewest whose simulated p95 meet the targets
    needed_note: str = ""  # why ``needed_replicas`` is None
    rates_per_s: tuple[float, ...] = ()  # per replica (the needed ones, else the Levers'), one per LOAD_MULTIPLES
    runs: tuple[LoadResult | None, ...] = ()
    batch_limit: int | None = None  # the simulated replica's max_num_seqs: the engine's own (plan's)
    at_once: int | None = None  # the most it decodes together: max_num_seqs or the KV cache at the prompt's length
    no_queue_rate_per_s: float | None = None  # requests/s one replica takes with no queue (``api.peak_fleet``)
    peak_requests_per_s: float | None = None
    #: each simulated request's (prompt, output) tokens where high lengths are given (``sized_lengths``, as planner
    #: plan --rate draws them); None: every request at the means
    lengths: list[tuple[int, int]] | None = None
    #: why the fewest replicas meeting the targets are no fleet to budget: they are kept nearly idle, the TTFT target
    #: close to one prompt's own time (``floor_words``); "" where they are
    floor: str = ""
    #: where some arrival draws of the peak traffic miss the targets at the needed replicas, ``planner plan --rate``'s
    #: warning in a cell's words (``serving.fleet.draws_edge``, the one computation, its ``brief``: "4 of 5 arrival
    #: draws miss the p95 targets; 3 replicas (12 GPUs) meet them in every draw"); "" where every draw meets or no
    #: fleet was sized (trial 30 F4)
    edge: str = ""

    @property
    def rate_factor(self) -> float:
        """The Levers fleet formula's queue term: peak / (needed replicas x no-queue rate), the share of the no-queue
        rate each simulated replica takes at the peak; 1 (no queue) where no replicas were found to be needed."""
        if self.needed_replicas is None or not self.no_queue_rate_per_s or not self.peak_requests_per_s:
            return 1.0
        return self.peak_requests_per_s / self.needed_replicas / self.no_queue_rate_per_s

    @property
    def curve_replicas(self) -> int | None:
        """The replicas the traffic is spread over: the needed ones, else the no-queue ones."""
        return self.needed_replicas if self.needed_replicas is not None else self.replicas


@dataclass(frozen=True)
class LoadFigures:
    """Every scenario's figures, and the inputs and engine they were computed from."""

    inputs: dict[str, Any]  # LOAD_INPUT_KEYS
    engine: str
    levers: tuple[LeverLoad, ...]
    ttft_target_s: float | None
    tpot_target_s: float | None
    note: str = ""  # why no scenario was simulated (no peak traffic), else ""
    key: str = ""  # ``load_key`` of what the figures were computed from ("": nothing to reuse)
    #: the engine's parameters the runs used, as the Assumptions sheet holds them (``simulated_parameters``)
    engine_parameters: tuple[tuple[str, int | None, Any], ...] = ()
    #: the data-parallel attention + expert parallel lever (``dp_ep_lever``); None where the baseline is dense or
    #: nothing was simulated
    dp_ep: DpEpLever | None = None
    #: the fleet ``planner export`` of the workbook budgets for the same Inputs (``budget_fleet.budget_fleet``: its
    #: latency margin and spare replicas); None where nothing was simulated
    budget: BudgetFleet | None = None
    #: the percentile the targets are judged at and the replicas sized on (the Inputs' latency percentile, blank 95)
    percentile: float = HIGH_PERCENTILE
    #: the Inputs' latency percentile, high lengths and their percentile the figures were computed from
    #: (``LENGTH_KEYS``; blank: None)
    lengths_used: dict[str, Any] | None = None

    @property
    def length_percentile(self) -> float:
        """The high lengths' percentile: the Inputs' length percentile, else the latency percentile."""
        used = self.lengths_used or {}
        return length_percentile_of(self.percentile, used.get("length_percentile"))


def lever_inputs(inputs: dict[str, Any], key: str, catalog: Catalog, engine: EngineProfile) -> dict[str, Any]:
    """The inputs a Levers scenario evaluates, as the Calc sheet's lever formulas define them (``calc.calc_rows``):
    the baseline's GPU group ``n`` (``memory_plan``'s choice) for every lever but "More GPUs" (the next group vLLM
    accepts, ``api.next_tp_size``); half the prompt, output kept (``halved_prompt``); the compare model (blank: the GQA
    sibling); fp8 KV cache; fp8 weights. ``prompt_tokens``: each request's prompt (``prompt_of``; None without output
    tokens). Raises the PlannerError the baseline's (or the lever's) inputs raise."""
    s = {k: inputs.get(k) for k in ("gpu", "model", "context", "kv_precision", "weight_precision", "gpus")}
    s["prompt_tokens"] = prompt_of(inputs)
    mu = inputs.get("memory_utilization")
    n = int(
        api.memory_plan(
            s["gpu"], s["model"], s["context"], kv_precision=s["kv_precision"], gpus=s["gpus"],
            weight_precision=s["weight_precision"], memory_utilization=mu, engine=engine, catalog=catalog,
        ).gpus
    )  # fmt: skip
    s["gpus"] = api.next_tp_size(s["model"], n, catalog=catalog, engine=engine) if key == "more_gpus" else n
    if key == "context_half":
        s["context"], s["prompt_tokens"] = halved_prompt(int(s["context"]), s["prompt_tokens"], inputs)
    elif key == "compare":
        s["model"] = inputs.get("compare_model") or gqa_sibling(catalog.model(s["model"]), list(catalog.models))
    elif key == "kv_fp8":
        s["kv_precision"] = catalog.precision("fp8").name
    elif key == "weights_fp8":
        s["weight_precision"] = catalog.precision("fp8").name
    return s


def halved_prompt(context: int, prompt: int | None, inputs: dict[str, Any]) -> tuple[int, int | None]:
    """Prompt halved's (context, prompt), as Calc's ``HALVED_CONTEXT`` and ``HALVED_PROMPT`` define them: half the
    prompt (whole tokens, at least 1), the output tokens kept, the context less what the prompt drops (a context of 425
    with 212 output tokens: prompts 213 -> 106, context 318; trial 22 F13, where halving the context to 212 left no
    prompt). Without a prompt of 1 or more (no output tokens given, or none left beside them): half the context, and
    what it leaves beside the output tokens."""
    if prompt is not None and prompt >= 1:
        half = max(1, prompt // 2)
        return context - prompt + half, half
    half_context = max(1, context // 2)
    output = _number(inputs.get("output_tokens"))
    return half_context, None if output is None else half_context - int(output)


def _lever(
    key: str,
    header: str,
    inputs: dict,
    catalog: Catalog,
    engine: EngineProfile,
    calibration: Any,
    targets: tuple,
    parallelism: str = "tp",
    tail: Tail | None = None,
) -> LeverLoad:
    """One scenario's fleet and runs; ``parallelism``: how its group splits the model (``DP_EP``'s "dp-ep": the
    baseline's inputs on data-parallel attention ranks, as ``planner export``'s fifth lever and ``planner plan
    --rate``'s other layout size it: the same ``api.memory_plan``, ``api.peak_fleet``, ``Replica`` and
    ``fewest_replicas`` with ``parallelism`` given)."""
    peak, output = _number(inputs.get("peak_requests_per_s")), _number(inputs.get("output_tokens"))
    hit = _number(inputs.get("prefix_hit_rate")) or 0.0  # blank or 0: nothing cached
    shape = _number(inputs.get("burstiness")) or 1.0  # blank: Poisson
    try:
        s = lever_inputs(inputs, key, catalog, engine)
    except PlannerError as exc:
        return LeverLoad(key, header, {}, error=str(exc))
    mu = inputs.get("memory_utilization")
    options = dict(
        kv_precision=s["kv_precision"], weight_precision=s["weight_precision"], memory_utilization=mu,
        engine=engine, catalog=catalog, calibration=calibration,
        **({} if parallelism == "tp" else {"parallelism": parallelism}),  # tp: the calls as the other levers make them
    )  # fmt: skip
    try:
        plan = api.memory_plan(s["gpu"], s["model"], s["context"], gpus=s["gpus"], **options)
        fleet = api.peak_fleet(
            s["gpu"], s["model"], s["context"], peak_requests_per_s=peak, output_tokens=int(output),
            price_per_gpu_hour=1.0, gpus=s["gpus"], **options,  # any rent (above 0): replicas do not depend on it
        )  # fmt: skip
    except PlannerError as exc:
        return LeverLoad(key, header, s, error=str(exc))
    batch, replicas = int(plan.max_batch), int(fleet.replicas)
    prompt = s["prompt_tokens"] if s.get("prompt_tokens") is not None else int(s["context"]) - int(output)
    if prompt < 1:
        return LeverLoad(
            key, header, s, error=f"a context of {int(s['context']):,} tokens leaves no prompt beside "
            f"{int(output):,} output tokens", max_batch=batch, replicas=replicas,
        )  # fmt: skip
    tail = tail or Tail()
    try:  # the requests plan --rate draws for the same means, high lengths and percentiles (None: at the means)
        lengths = tail.lengths(key, prompt, int(output), catalog.model(s["model"]).max_context)
    except PlannerError as exc:
        return LeverLoad(key, header, s, error=str(exc), max_batch=batch, replicas=replicas)
    eng = engine if mu is None else replace(engine, memory_utilization=float(mu), memory_fraction_rule="")
    # no max_num_seqs: the engine's own, its KV cache admitting requests by the tokens they hold, as planner plan's
    # replica (``report.replica_of``) runs (trial 28 F7: not what memory holds at the whole context)
    replica = Replica(
        s["gpu"], s["model"], s["gpus"], scheduler=scheduler_of(engine),
        weight_precision=s["weight_precision"], kv_precision=s["kv_precision"],
        engine=eng, calibration=calibration, catalog=catalog, parallelism=parallelism,
    )  # fmt: skip
    try:
        # the run's own (memoized): its limit and the most at once, as plan's (``run_setup`` of the requests sent)
        setup = (
            replica.setup(prompt, int(output))
            if lengths is None
            else run_setup(replica, prompt, int(output), lengths)[1]
        )
    except PlannerError as exc:
        return LeverLoad(key, header, s, error=str(exc), max_batch=batch, replicas=replicas)
    limit = engine_sequence_limit(eng, catalog.gpu(s["gpu"]), parallelism, int(plan.gpus))  # plan's engine_batch_limit
    at_once = int(setup.cap)
    needed, why, floor, edge = None, "no TTFT or TPOT target on Inputs", "", ""
    if targets[0] is not None and targets[1] is not None:
        try:
            sized = fewest_replicas(
                replica, prompt, int(output), peak, percentile=tail.percentile,
                ttft_target_s=targets[0], tpot_target_s=targets[1], prefix_hit_rate=hit, burstiness=shape,
                lengths=lengths,
            )  # fmt: skip
            needed, why = sized.replicas, ""
            if sentence := near_ttft_floor(sized):  # met only by replicas kept nearly idle: no fleet to budget
                needed, floor = None, floor_words(sized)
                why = f"{floor}: {sentence}"
            else:  # the fleet's edge over the peak's arrival draws, as planner plan --rate warns of it
                edge = draws_edge(
                    replica, prompt, int(output), peak, needed, percentile=tail.percentile,
                    ttft_target_s=targets[0], tpot_target_s=targets[1], prefix_hit_rate=hit, burstiness=shape,
                    lengths=lengths,
                ).brief(int(plan.gpus))  # fmt: skip
        except PlannerError as exc:
            why = str(exc)
    done = LeverLoad(
        key, header, s, None, batch, replicas, prompt, int(output), needed, why,
        batch_limit=limit, at_once=at_once, no_queue_rate_per_s=float(fleet.rate_per_replica_s), peak_requests_per_s=peak,
        lengths=lengths, floor=floor, edge=edge,
    )  # fmt: skip
    rates = tuple(m * peak / done.curve_replicas for m in LOAD_MULTIPLES)
    try:
        runs = tuple(
            sweep_within_capacity(
                replica, prompt, int(output), rates, prefix_hit_rate=hit, burstiness=shape,
                replicas=done.curve_replicas, lengths=lengths,
            )
        )  # fmt: skip
    except PlannerError as exc:
        return replace(done, error=str(exc))
    return replace(done, rates_per_s=rates, runs=runs)


def floor_words(sized: Sizing) -> str:
    """What a scenario's "Meets the latency targets" reads where its fewest replicas meeting the targets are kept
    nearly idle (``planner.serving.fleet.near_ttft_floor``: their median TTFT over ``TTFT_FLOOR_SHARE`` of the
    target), the rule ``planner plan --rate`` warns with and ``planner export`` counts as not met
    (``planner.export.slow_end``): "does not meet: one prompt alone takes 2,948 ms of the 3,000 ms TTFT target"
    (five lines of its Levers cell; the "Fleet sized by" row below says "no fleet: near-idle floor"). Trial 29 F2: Llama-3.3-70B fp16 on 16 x H100 (More GPUs per replica), 12,000-token prompts
    at 6 requests/s, TTFT target 3 s: 357 replicas at 0.017 requests/s each, 5,712 GPUs, $14,990,287 a month read
    "yes", where the export's same lever does not meet the targets."""
    p50 = float(sized.result.ttft_s.p50)  # the median near_ttft_floor judges: a request on a nearly idle replica
    return f"does not meet: one prompt alone takes {ms_words(p50)} of the {ms_words(sized.ttft_target_s)} TTFT target"


#: Figures already computed in this process, newest last: writing or refreshing the same inputs again (a library
#: caller writing several books, a refresh of a book just written, whose Inputs read back as 40.0 where 40 was
#: written) does not simulate again (~4-10 s CPU for the opening inputs). Keyed by ``load_key`` (the catalog, engine,
#: calibration, version and the inputs' values, numbers as floats: the simulated numbers depend on values only) and
#: the repr of the inputs each ``LeverLoad.inputs`` copies (``lever_inputs``' keys), so that a hit's scenario inputs
#: are typed as the caller's; its ``LoadFigures.inputs`` is the caller's own.
_MEMO: OrderedDict[tuple[str, str], LoadFigures] = OrderedDict()
#: The inputs ``lever_inputs`` copies into each ``LeverLoad.inputs`` (their types are kept by the memo's key).
_LEVER_KEYS = ("gpu", "model", "context", "kv_precision", "weight_precision", "gpus", "compare_model", "prompt_tokens")
#: Sets of figures kept (each a few hundred kB of simulated percentiles).
MEMO_SIZE = 8


def clear_memo() -> None:
    """Forget every figure computed so far in this process (the next ``load_figures`` call simulates)."""
    _MEMO.clear()


def load_figures(inputs: dict[str, Any], catalog: Catalog, engine: EngineProfile, calibration: Any) -> LoadFigures:
    """Each Levers scenario's replica at ``LOAD_MULTIPLES`` x the Inputs' peak traffic (module docstring), from
    ``inputs`` (``inputs.default_inputs``' keys, or a workbook's Inputs read back). Computed once per process for
    the same inputs, catalog, engine and calibration (``_MEMO``); the result is shared: read it, do not change it."""
    used = {k: inputs.get(k) for k in LOAD_INPUT_KEYS}
    memo = (load_key(inputs, catalog, engine, calibration), repr([inputs.get(k) for k in _LEVER_KEYS]))
    if memo in _MEMO:
        _MEMO.move_to_end(memo)
        return replace(_MEMO[memo], inputs=used, lengths_used={k: inputs.get(k) for k in LENGTH_KEYS})
    figures = _computed(inputs, used, catalog, engine, calibration, memo[0])
    _MEMO[memo] = figures
    while len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return figures


def _computed(
    inputs: dict[str, Any], used: dict[str, Any], catalog: Catalog, engine: EngineProfile, calibration: Any, digest: str
) -> LoadFigures:
    ms = [_number(inputs.get(k)) for k in ("ttft_target_ms", "tpot_target_ms")]
    targets = tuple(None if v is None else v / 1e3 for v in ms)
    lengths_used = {k: inputs.get(k) for k in LENGTH_KEYS}
    if (why := not_simulated_why(inputs)) is not None:
        return replace(not_computed(why, engine, used), lengths_used=lengths_used)
    try:
        tail = tail_of(inputs)
    except PlannerError as exc:
        return replace(not_computed(str(exc), engine, used), lengths_used=lengths_used)
    levers = tuple(_lever(k, h, inputs, catalog, engine, calibration, targets, tail=tail) for k, h, _ in SCENARIOS)
    dp = dp_ep_lever(inputs, catalog, engine, calibration, targets, tail)
    return LoadFigures(
        used,
        engine.name,
        levers,
        *targets,
        key=digest,
        engine_parameters=simulated_parameters(engine),
        dp_ep=dp,
        budget=budget_fleet(inputs, catalog),
        percentile=tail.percentile,
        lengths_used=lengths_used,
    )


@dataclass(frozen=True)
class DpEpLever:
    """The baseline run as data-parallel attention ranks with the experts spread ("dp-ep") on its own GPUs, computed
    by planner (the workbook has no formulas for the layout): ``load``, its fleet as ``_lever`` sizes every
    scenario's; ``plan``, ``planner.report.plan``'s figures at the max batch the layout serves (what ``planner plan``
    prints on its "Same 8 GPUs, data-parallel attention + expert parallel" line). ``error``: why it has no figures."""

    load: LeverLoad
    plan: Any = None  # planner.report.Plan
    error: str = ""

    @property
    def rate_per_replica_s(self) -> float | None:
        """Requests/s one replica takes: the simulated fleet's (peak / needed replicas), else the no-queue rate."""
        rate = self.load.no_queue_rate_per_s
        return None if rate is None else rate * self.load.rate_factor


def dp_ep_lever(
    inputs: dict[str, Any],
    catalog: Catalog,
    engine: EngineProfile,
    calibration: Any,
    targets: tuple,
    tail: Tail | None = None,
) -> DpEpLever | None:
    """The dp-ep lever of a MoE baseline (``DpEpLever``); None for a dense one (no experts to spread) or a baseline
    planner cannot resolve. Its fleet: ``_lever`` with ``parallelism="dp-ep"`` (the same ``fewest_replicas`` of a
    dp-ep ``Replica`` that ``planner export``'s fifth lever and ``planner plan --rate`` size on)."""
    from planner.report import plan

    try:
        s = lever_inputs(inputs, DP_EP, catalog, engine)
        moe = catalog.model(s["model"]).moe is not None
    except PlannerError:
        return None
    if not moe:
        return None
    load = _lever(DP_EP, DP_EP_HEADER, inputs, catalog, engine, calibration, targets, DP_EP_LAYOUT, tail)
    if load.error and load.max_batch is None:
        return DpEpLever(load, None, load.error)
    try:
        p = plan(
            s["gpu"], s["model"], s["context"], gpus=s["gpus"], kv_precision=s["kv_precision"],
            weight_precision=s["weight_precision"], memory_utilization=inputs.get("memory_utilization"),
            engine=engine, catalog=catalog, calibration=calibration, parallelism=DP_EP_LAYOUT,
        )  # fmt: skip
    except PlannerError as exc:
        return DpEpLever(load, None, str(exc))
    return DpEpLever(load, p, load.error or "")


def dp_ep_cells(figures: LoadFigures | None) -> dict[str, float | str | None]:
    """The numbers planner computed for Calc's dp-ep column, by Calc row key (``calc.DP_EP_STORED``): max batch
    memory holds and the one the engine serves, KV budget per GPU and per sequence, TPOT, throughput and TTFT at the
    served batch (``planner.report.plan``), the queue's rate factor and the requests/s one replica takes (the
    simulation's); "dp_ep_error": why there are none; "edge": the fleet's edge words (``LeverLoad.edge``, blank where
    every arrival draw meets). Empty without figures or for a dense baseline (blank cells)."""
    dp = None if figures is None else figures.dp_ep
    if dp is None:
        return {}
    out: dict[str, float | str | None] = {"dp_ep_error": dp.error or dp.load.needed_note or None}
    out["edge"] = dp.load.edge or None  # the fleet's edge over the arrival draws, as the scenarios' (trial 30 F4)
    if dp.plan is not None:
        p = dp.plan
        out.update(
            max_batch=float(p.memory.max_batch), served_batch=float(p.max_batch),
            budget=float(p.memory.kv_budget_bytes_per_gpu), kv_seq=float(p.memory.kv_bytes_per_sequence),
            m_step=float(p.at_batch.step_s), m_tput=float(p.at_batch.throughput_tokens_per_s), p_ttft=float(p.ttft_s),
        )  # fmt: skip
    if dp.load.needed_replicas is not None:
        out.update(rate_factor=dp.load.rate_factor, rate_repl=dp.rate_per_replica_s)
    return out


#: The custom document property that holds the ``load_key`` the Load sheet was computed from (``refresh`` reads it).
LOAD_KEY_PROPERTY = "planner_load_key"


def load_key(inputs: dict[str, Any], catalog: Catalog, engine: EngineProfile, calibration: Any) -> str:
    """A digest (BLAKE2b, 32 hex digits) of everything the figures depend on: planner's version, the engine profile,
    the calibration, every catalog entry (JSON) and the Inputs of ``LOAD_INPUT_KEYS`` (numbers as floats, so 4096
    read back as 4096.0 matches; blank as ""). Equal keys: the same figures, so ``refresh`` need not simulate."""
    h = hashlib.blake2b(digest_size=16)

    def text(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return repr(float(value))
        return f"{type(value).__name__}:{value}"

    h.update(f"{__version__}\n{engine!r}\n{calibration!r}\n".encode())
    for table in (catalog.gpus, catalog.models, catalog.precisions):
        for entry in table:
            h.update(entry.model_dump_json().encode())
    h.update(json.dumps([text(inputs.get(k)) for k in LOAD_INPUT_KEYS]).encode())
    if any(inputs.get(k) is not None for k in LENGTH_KEYS):  # a workbook with none: its key as before they existed
        h.update(json.dumps([text(inputs.get(k)) for k in LENGTH_KEYS]).encode())
    return h.hexdigest()


def review_cells(figures: LoadFigures | None) -> tuple[int | None, str] | None:
    """Calc's review rows (``calc.review_rows``): the budget fleet's GPUs and words, None where nothing was computed
    (no Load sheet, or no traffic simulated)."""
    if figures is None or figures.budget is None:
        return None
    return figures.budget.gpus, figures.budget.words


def rate_factors(figures: LoadFigures | None) -> dict[str, float | None]:
    """Each Levers scenario's queue term for Calc's rate_factor row (``LeverLoad.rate_factor``; None, a blank cell,
    where no fleet was found to meet the targets); empty without figures (no Load sheet: every cell blank)."""
    if figures is None:
        return {}
    return {v.key: v.rate_factor if v.needed_replicas is not None else None for v in figures.levers}


def floors(figures: LoadFigures | None) -> dict[str, str | None]:
    """Each Levers scenario's near-idle refusal for Calc's floor row (``LeverLoad.floor``; None, a blank cell, where
    its fleet is budgeted or none was sized); empty without figures (no Load sheet: every cell blank)."""
    if figures is None:
        return {}
    return {v.key: v.floor or None for v in figures.levers}


def edges(figures: LoadFigures | None) -> dict[str, str | None]:
    """Each Levers scenario's edge warning for Calc's edge row (``LeverLoad.edge``; None, a blank cell, where every
    arrival draw meets the targets or no fleet was sized); empty without figures (no Load sheet: every cell blank)."""
    if figures is None:
        return {}
    return {v.key: v.edge or None for v in figures.levers}


def not_simulated_why(inputs: dict[str, Any]) -> str | None:
    """Why the Load sheet simulates nothing for these Inputs, a budget question left unasked: "no peak traffic on
    Inputs (a number above 0)" (blank peak traffic or output tokens); None when it simulates."""
    missing = [
        label
        for key, label in (("peak_requests_per_s", "peak traffic"), ("output_tokens", "output tokens per request"))
        if _number(inputs.get(key)) is None
    ]
    return f"no {' and no '.join(missing)} on Inputs (a number above 0)" if missing else None


def not_computed(why: str, engine: EngineProfile, inputs: dict[str, Any] | None = None) -> LoadFigures:
    """Figures for a sheet that says why nothing was simulated ("not computed: ..."): no traffic on Inputs, or
    Inputs that could not be read (``inputs`` None: none shown as used, so the Status reads stale)."""
    note = f"not computed: {why}"
    used = {k: (inputs or {}).get(k) for k in LOAD_INPUT_KEYS}
    levers = tuple(LeverLoad(k, h, {}, error=note) for k, h, _ in SCENARIOS)
    return LoadFigures(used, engine.name, levers, None, None, note=note)


def lever_changes_nothing(inputs: dict[str, Any], key: str, catalog: Catalog, engine: EngineProfile) -> bool:
    """Whether a Levers scenario resolves to the baseline's deployment (Calc's no_change row): the same model,
    context, GPU group and precisions used (weights, experts, KV cache) as ``planner.report.plan`` resolves them
    (the weights-fp8 lever of DeepSeek-V3, which ships fp8 weights; a compare model that is the model itself). Such a
    lever is labelled "no change" and never ranked. The weights-fp8 lever of a model whose experts ship in fewer
    bytes per value (gpt-oss's mxfp4: ``resolve.weights_enlarge_experts``) counts too: it is no saving, not ranked
    (trial 26 F2). Raises the PlannerError the baseline's inputs raise."""
    from planner.catalog.resolve import weights_enlarge_experts
    from planner.report import plan

    # the model's and fp8's formats alone, as Calc's EXPERTS_SMALLER reads them: whether the deployment fits or not
    if key == "weights_fp8" and weights_enlarge_experts(catalog, catalog.model(inputs["model"]), "fp8"):
        return True

    def resolved(k: str) -> tuple:
        s = lever_inputs(inputs, k, catalog, engine)
        p = plan(
            s["gpu"], s["model"], s["context"], gpus=s["gpus"], kv_precision=s["kv_precision"],
            weight_precision=s["weight_precision"], memory_utilization=inputs.get("memory_utilization"),
            engine=engine, catalog=catalog,
        )  # fmt: skip
        return p.model.name, p.context, p.gpus, p.weight_precision, p.expert_precision, p.kv_precision

    return key != "base" and resolved(key) == resolved("base")
