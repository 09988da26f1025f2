"""One option of a budget review sized and costed: every tensor-parallel group tried, the best batch, the fleet.

This is the only place the export calls the capacity model: per-replica memory, TPOT and TTFT come from
``planner.api``; fleet and money rules from ``planner.export.sizing``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import replace as dc_replace

import numpy as np

from planner import api
from planner.accuracy.calibration import calibration_in_effect
from planner.accuracy.loaded_ranges import load_loaded_ranges
from planner.accuracy.ranges import TimeRange
from planner.accuracy.serving_margin import sizing_range
from planner.catalog import Catalog, Gpu, Model, stale_price_warning
from planner.catalog.names import implied_weight_precision
from planner.catalog.resolve import expert_precision, weights_to_pass
from planner.engines.kernel_curves import curves_note
from planner.engines.profiles import IDEAL, EngineProfile, engine_label, engine_profile
from planner.errors import InvalidInputError, NoFleetMeetsError, OutOfRangeError, PlannerError
from planner.export import held_out, sizing
from planner.export.batch_cap import EngineLimitFleet, cap_words
from planner.export.memory_chain import memory_chain
from planner.export.ownership import Money, book_value_note, money_warnings, option_money, residual_left_out
from planner.export.records import Candidate, LoadCurve, Result
from planner.export.scenario import Finance, Option, Scenario, Workload
from planner.export.shortfall import quoted_group, shortfall_text
from planner.model.layouts import spreads_experts
from planner.serving.fleet import HEADROOM_STEP as HEADROOM_STEP  # re-exported: the review's step, plan's too
from planner.serving.fleet import (  # noqa: F401 (the review's names)  # LOAD_CURVE: the review's multiples, plan --replicas' too
    IN_FLIGHT_STEPS,
    IN_FLIGHT_TOLERANCE,
    LOAD_CURVE,
    MAX_REPLICAS,
    NO_TPOT_WITH_ONE_TOKEN,
    SPREAD_SEEDS,
    Sizing,
    fewest_replicas,
    headroom_over,
    longer_than_every_cache,
    near_ttft_floor,
    one_output_token,
    replica_run,
    sequences_memory_holds,
    sweep_within_capacity,
    within_targets,
)
from planner.serving.fleet import in_flight_rate as _in_flight_rate
from planner.serving.load import ARRIVAL_SEED, Replica, RequestLongerThanCacheError, fixed_length_tokens
from planner.serving.speculative import decode_at_s, served_model, speculation_for
from planner.units import RENT_IMPLAUSIBLE_FACTOR, fmt_usd_per_gpu_hour

#: Traffic multipliers (of the sized peak) that the charts sweep, with the levels sized afresh (``chart_multipliers``).
SWEEP = tuple(round(0.25 * k, 2) for k in range(1, 13))  # 0.25x .. 3x


# -- one option -----------------------------------------------------------------------------------------


def _candidates(
    option: Option,
    workload: Workload,
    catalog: Catalog,
    gpu: Gpu,
    model: Model,
    wp: str | None,
    kp: str | None,
    eng: EngineProfile,
    groups: tuple[int, ...],
    time_ranges: tuple[TimeRange, ...],
) -> tuple[Candidate, ...]:
    """Per tensor-parallel group: TPOT over every batch in one vectorized call (``_best_batch`` then picks one).

    A batch fits when its slots can each hold a high-percentile sequence (memory); its TPOT is taken at the
    mean context in flight (decode time under continuous batching). docs/export.md, "Two contexts". Each group
    meets the TPOT target with its own margin (``latency_margin`` of its ``time_ranges`` entry).
    """
    margins = [latency_margin(workload, r.high) for r in time_ranges]
    tpot_goals = sizing.margin_target(workload.tpot_target_s, np.asarray(margins))
    layout = option.parallelism or "tp"
    # the engine runs at most max_num_seqs per group (per attention rank, per TensorRT-LLM pipeline micro-batch)
    limits = np.asarray([api.engine_sequence_limit(eng, gpu, layout, n) for n in groups], dtype=float)
    batches = np.arange(1, int(limits.max()) + 1, dtype=float)
    tp = np.asarray(groups, dtype=float)
    common = dict(engine=eng, catalog=catalog, errors="coerce", parallelism=layout)
    mu = option.memory_utilization
    fits = np.asarray(
        api.max_batch(
            gpu,
            model,
            workload.sizing_context_tokens,
            kv_precision=kp,
            gpus=tp,
            weight_precision=wp,
            memory_utilization=mu,
            **common,
        ),
        dtype=float,
    )
    room = (batches[None, :] <= np.nan_to_num(fits, nan=0.0)[:, None]) & (batches[None, :] <= limits[:, None])

    def curve(ctx: float) -> np.ndarray:
        t = np.asarray(
            api.tpot(
                gpu,
                model,
                ctx,
                batch=batches[None, :],
                kv_precision=kp,
                gpus=tp[:, None],
                weight_precision=wp,
                memory_utilization=mu,
                **common,
            ),
            dtype=float,
        )
        return np.where(room, t, np.nan)

    tpot = curve(workload.inflight_context_tokens)
    tpot_long = curve(workload.sizing_context_tokens)
    best = sizing.largest_batch_meeting(tpot, batches, tpot_goals)
    prompt = dict(kv_precision=kp, memory_utilization=mu, **common)
    ttft_hi = np.asarray(api.ttft(gpu, model, workload.prompt_tokens_high, gpus=tp, weight_precision=wp, **prompt))
    # the group-seconds a mean prompt holds: its TTFT, or under dp-ep / a pipeline 1/s of s prompts' prefill (each
    # rank or stream prefills its own alongside); the one rule plan's cost with prompt processing charges too
    ttft_mean = np.asarray(
        api.prompt_busy_s(gpu, model, workload.prompt_tokens_mean, gpus=tp, weight_precision=wp, **prompt), dtype=float
    )
    out = []
    for i, n in enumerate(groups):
        b = int(best[i])
        out.append(
            Candidate(
                n,
                b,
                float(tpot[i, b - 1] if b else tpot[i, 0]),
                float(tpot[i, 0]),
                float(ttft_hi[i]),
                float(ttft_mean[i]),
                tuple(float(v) for v in tpot[i]),
                tuple(float(v) for v in tpot_long[i]),
                time_ranges[i],
                margins[i],
            )
        )
    return tuple(out)


def _with_speculation(
    cands: tuple[Candidate, ...], option: Option, workload: Workload, catalog: Catalog, gpu: Gpu, mdl: Model,
    eng: EngineProfile, wp: str, kp: str,
) -> tuple[Candidate, ...]:  # fmt: skip
    """Where the option decodes speculatively, each group's TPOT by batch as speculation makes it: the closed form's
    decode-step TPOT x (a speculative step over the acceptance length / a plain decode step of the same batch), both
    from the serving simulation's own step tables at the mean prompt (``Replica.setup``; a speculative step is one
    verify pass and the draft passes, ``planner.serving.speculative.step_s``); the batch meeting each group's TPOT
    goal found again. Unchanged without speculation, or for a group the simulation cannot set up. Without it a TPOT
    target that only speculation meets was refused before the simulation, which meets it (a trial: 4 ms for
    Qwen3-8B on one H100, 5.3 ms without drafting, 3.5 ms simulated with it)."""
    if _speculation(option, mdl, catalog) is None:
        return cands
    out = []
    for c in cands:
        replica = _serving_replica(option, gpu, mdl, c.gpus_per_replica, eng, catalog, wp, kp)
        try:
            p, o = fixed_length_tokens(workload.prompt_tokens_mean), fixed_length_tokens(workload.output_tokens_mean)
            fast = replica.setup(p, o).table
            plain = dc_replace(replica, speculative=None).setup(p, o).table
        except PlannerError:
            out.append(c)
            continue
        n = len(c.tpot_by_batch_s)
        tokens = replica.speculative.acceptance_length
        ratio = np.asarray(
            [
                decode_at_s(fast, b, fast.ctx_lo_tokens) / tokens / decode_at_s(plain, b, plain.ctx_lo_tokens)
                for b in range(1, n + 1)
            ]
        )
        tpot = np.asarray(c.tpot_by_batch_s) * ratio
        b = int(sizing.largest_batch_meeting(tpot, np.arange(1, n + 1), c.goal_s(workload.tpot_target_s)))
        out.append(
            dc_replace(
                c,
                batch=b,
                tpot_s=float(tpot[b - 1] if b else tpot[0]),
                tpot_batch1_s=float(tpot[0]),
                tpot_by_batch_s=tuple(float(v) for v in tpot),
                tpot_long_by_batch_s=tuple(float(v) for v in np.asarray(c.tpot_long_by_batch_s) * ratio),
            )
        )
    return tuple(out)


def _rates(workload: Workload, replica: sizing.Replica, change: float = 1.0) -> tuple[float, float]:
    """(peak, average) requests per second at the end of the horizon (x change), from rates or concurrency: requests
    in flight by Little's law at the replica's own latency per request, TTFT + mean output x TPOT at its batch (the
    closed form's: consistent with a fleet sized by Little's law, each replica running that batch; a fleet sized on
    simulated percentiles takes its rate from the simulation instead, ``_simulated_in_flight``)."""
    g = workload.growth_factor * change
    if workload.by_rate:
        return workload.peak_requests_per_s * g, workload.average_requests_per_s * g

    def conv(c: float) -> float:
        return float(sizing.rate_from_concurrency(c, replica.ttft_mean_s, workload.output_tokens_mean, replica.tpot_s))

    return conv(workload.peak_concurrent_requests * g), conv(workload.average_concurrent_requests * g)


def _fleet(
    option: Option,
    workload: Workload,
    replica: sizing.Replica,
    money: Money,
    change: float | np.ndarray,
    tpot_goal_s: float,
    under_load: Sizing | None = None,
    rates: tuple[float, float] | None = None,
) -> sizing.Fleet:
    """The fleet for the planned (peak, average) ``rates`` x ``change`` (None: ``_rates``'), costed (``sizing.size``)."""
    peak, avg = rates if rates is not None else _rates(workload, replica)
    return sizing.size(
        replica,
        peak * np.asarray(change),
        avg * np.asarray(change),
        workload.output_tokens_mean,
        workload.prompt_tokens_mean,
        option.spare_replicas,
        money.node_size,
        money.usd_per_gpu_month,
        tpot_goal_s,
        None if under_load is None else under_load.rate_per_replica_s,
    )


#: Said of an option whose requests emit one output token each: its TPOT target has nothing to hold.
ONE_TOKEN_NOTE = (
    f"{NO_TPOT_WITH_ONE_TOKEN}: the TPOT target is not applied under load; the fleet is sized on TTFT alone"
)


def _simulated(
    workload: Workload,
    replica: Replica,
    slots: int | None,
    peak_rate_per_s: float,
    goals: tuple[float, float],
    max_replicas: int = MAX_REPLICAS,
    arrival_seed: int = ARRIVAL_SEED,
) -> Sizing:
    """The fewest replicas (of the kept group, each running at most ``slots`` sequences at once:
    ``Candidate.slots``; None: the engine's own max_num_seqs, ``sized_at_engine_limit``) whose simulated high-percentile TTFT and TPOT meet the
    (margin-adjusted) targets at the peak: ``planner.serving.fleet.fewest_replicas``, the workload's requests
    (``_lengths``: ``Workload.simulated_lengths``: at the mean lengths, or with ``sizing_lengths = "spread"`` drawn
    around the means and high percentile), the workload's
    burstiness dealt by its routing (``Workload.routing``, as ``planner plan --routing``) and its dataset's
    shared-prefix hit (``Workload.prefix_hit_rate``), at the workload's sizing percentile
    (``Workload.sizing_percentile``: its latency_percentile, else its high percentile). Where every request emits one output
    token there is no TPOT (``one_output_token``): the fleet is sized on TTFT alone, as ``plan`` sizes it without a
    TPOT target (the option's warnings say so: ``ONE_TOKEN_NOTE``). ``max_replicas``: where the search stops
    (``NoFleetMeetsError`` past it). ``arrival_seed``: the draw of the arrivals (``ARRIVAL_SEED``: the one every
    surface shows; ``replicas_over_draws`` the others), the requests' lengths the same in every draw."""
    percentile = workload.sizing_percentile
    if one_output_token(workload.output_tokens_mean):
        goals = (goals[0], math.inf)
    return fewest_replicas(
        dc_replace(replica, max_num_seqs=slots),
        workload.prompt_tokens_mean,
        workload.output_tokens_mean,
        peak_rate_per_s,
        percentile=percentile,
        ttft_target_s=goals[0],
        tpot_target_s=goals[1],
        burstiness=workload.burstiness,
        prefix_hit_rate=workload.prefix_hit_rate,
        routing=workload.routing,
        max_replicas=max_replicas,
        lengths=_lengths(workload, replica),
        arrival_seed=arrival_seed,
    )


# Requests in flight -> requests/s, R = N / latency(R): planner.serving.fleet.in_flight_rate, which plan
# --concurrency calls too (trial 32 F2)


def in_flight_requests(workload: Workload) -> tuple[float, float]:
    """(peak, average) requests in flight at the end of the horizon (growth applied), of a workload given so."""
    g = workload.growth_factor
    return workload.peak_concurrent_requests * g, workload.average_concurrent_requests * g


def _simulated_in_flight(
    workload: Workload,
    replica: Replica,
    slots: int,
    first_rate_per_s: float,
    goals: tuple[float, float],
    max_replicas: int = MAX_REPLICAS,
) -> Sizing:
    """For traffic given as N requests in flight at the peak: the fleet sized on simulated percentiles
    (``_simulated``) at the rate R that this fleet's own latency gives by Little's law, R = N / L(R), L the simulated
    mean time a request takes, queue and prefill stalls included (``LoadResult.e2e_s.mean``), on the fleet sized for
    R. From ``first_rate_per_s`` (the closed form's, ``_rates``), R <- N / L until a step moves R by less than
    ``IN_FLIGHT_TOLERANCE`` (latency rises with the rate and each step re-sizes the fleet to the targets, so it
    settles), at most ``IN_FLIGHT_STEPS``. The rate is the sizing's replicas x rate per replica. Trial 24 F18:
    800 in flight, Llama-3.3-70B fp8 on 2 x H100, 2,000 / 400 tokens: the closed form's TPOT at a batch of 44
    (24.2 ms, 9.9 s a request) made it 80.7 requests/s and 76 GPUs, while that fleet's requests take 16.3 s (mean
    TPOT 40 ms under load): 1,319 in flight, not 800."""
    sized: list[Sizing] = []

    def latency_s(rate: float) -> float:
        sized.append(_simulated(workload, replica, slots, rate, goals, max_replicas))
        return float(sized[-1].result.e2e_s.mean)

    _in_flight_rate(in_flight_requests(workload)[0], first_rate_per_s, latency_s)
    return sized[-1]


def _average_in_flight_rate(workload: Workload, replica: Replica, slots: int, sim: Sizing) -> float:
    """The average traffic's requests/s on the fleet ``sim`` sized (``_simulated_in_flight``): the same fixed point,
    R = N_average / L(R), with L the simulated mean time a request takes on those replicas at R (``replica_run``,
    dealt as the sizing deals it, on the requests the peak was sized on: ``_lengths``, drawn around the high lengths
    with ``sizing_lengths = "spread"``), from the peak's latency (a floor of the rate: latency falls with the load)."""
    n_peak, n_avg = in_flight_requests(workload)
    mine = dc_replace(replica, max_num_seqs=slots)
    lengths = _lengths(workload, replica)  # the peak's own requests: the same lengths, the same latency per token

    def latency_s(rate: float) -> float:
        run = replica_run(
            mine, workload.prompt_tokens_mean, workload.output_tokens_mean, rate, sim.replicas,
            burstiness=workload.burstiness, prefix_hit_rate=workload.prefix_hit_rate, routing=workload.routing,
            lengths=lengths,
        )  # fmt: skip
        return float(run.e2e_s.mean)

    return float(_in_flight_rate(n_avg, sim.replicas * sim.rate_per_replica_s * n_avg / n_peak, latency_s))


def _lengths(workload: Workload, replica: Replica) -> list[tuple[int, int]] | None:
    """The sizing simulation's requests (``Workload.simulated_lengths``), each within the model's context."""
    return workload.simulated_lengths(replica.model.max_context if isinstance(replica.model, Model) else math.inf)


def load_curve(replica: Replica, workload: Workload, peak_rate_per_s: float, sim: Sizing) -> LoadCurve:
    """The planned fleet (``sim.replicas``) at ``LOAD_CURVE`` x the planned peak: each replica takes that traffic /
    replicas (dealt by the workload's routing); its p50 and ``sim.percentile`` TTFT and TPOT simulated as the fleet
    was sized, on the same requests (``planner.serving.fleet.sweep_within_capacity``), infinite where the rate is past the replica's simulated
    capacity (``planner.serving.fleet.past_capacity``; a finite run cannot show a queue that grows without
    bound). Headroom: the most traffic, as a multiple of the planned peak less 1, at which both ``sim.percentile`` figures still meet their goals, bisected to ``HEADROOM_STEP`` between
    the peak (which meets) and the first curve point that misses; ``math.inf`` when none to the curve's end does."""
    workload = workload.at_request_lengths()
    p, o, b = workload.prompt_tokens_mean, workload.output_tokens_mean, workload.burstiness
    q = sim.percentile
    lengths = _lengths(workload, replica)  # the requests the fleet was sized on

    def runs(mults: list[float]) -> list:
        rates = np.asarray(mults) * peak_rate_per_s / sim.replicas
        return sweep_within_capacity(
            replica, p, o, rates, burstiness=b, prefix_hit_rate=workload.prefix_hit_rate, replicas=sim.replicas,
            routing=workload.routing, lengths=lengths,
        )  # fmt: skip

    def meets(r) -> bool:  # past the replica's capacity (None): a miss
        return r is not None and within_targets(r, q, sim.ttft_target_s, sim.tpot_target_s)

    curve = runs(list(LOAD_CURVE))
    inf = math.inf
    on_curve = dict(zip(LOAD_CURVE, curve, strict=True))
    # the peak meets (the fleet was sized on it): headroom_over bisects above it, as plan --replicas does
    headroom = headroom_over(lambda m: meets(on_curve[m] if m in on_curve else runs([m])[0]))

    def col(f) -> tuple[float, ...]:
        return tuple(inf if r is None else float(f(r)) for r in curve)

    return LoadCurve(
        LOAD_CURVE, float(peak_rate_per_s), int(sim.replicas), float(q),
        col(lambda r: r.ttft_s.p50), col(lambda r: r.ttft_s.at(q)),
        col(lambda r: r.tpot_s.p50), col(lambda r: r.tpot_s.at(q)),
        float(sim.ttft_target_s), float(sim.tpot_target_s), headroom,
    )  # fmt: skip


def _speculation(option: Option, mdl: Model, catalog: Catalog):
    """The option's speculative decoding (``speculation_for``: its tokens, acceptance and draft method), or None."""
    return speculation_for(
        mdl, option.speculative_tokens, option.acceptance_length, catalog=catalog, method=option.speculative_method
    )


def _serving_replica(
    option: Option, gpu: Gpu, mdl: Model, gpus: int, eng: EngineProfile, catalog: Catalog, wp: str, kp: str
) -> Replica:
    """The replica the serving simulation runs for an option: its GPU, model, group and how the group splits the
    model, engine, precisions and speculative decoding (``speculation_for``)."""
    spec = _speculation(option, mdl, catalog)
    experts = expert_precision(catalog, mdl, option.weight_precision).name if mdl.moe is not None else None
    wp = weights_to_pass(catalog, mdl, wp, experts)
    return Replica(
        gpu.name, mdl, gpus, engine=eng, catalog=catalog, speculative=spec, weight_precision=wp, kv_precision=kp,
        parallelism=option.parallelism or "tp",
    )  # fmt: skip


def fleet_on_goals(
    result: Result, workload: Workload, catalog: Catalog, goals: tuple[float, float]
) -> tuple[Sizing, sizing.Fleet]:
    """The option's kept replica (its group and batch, unchanged) sized again on simulated percentiles against other
    (TTFT, TPOT) ``goals`` in seconds at the planned peak: the review's one replica search (``_simulated``, so
    ``planner.serving.fleet.fewest_replicas``), then the fleet and its cost as the option's (``_fleet``: spares, whole
    nodes or instances, the option's price). Raises ``PlannerError`` where no number of replicas the search allows
    meets them. Only for an option sized on simulated percentiles (``result.under_load``)."""
    if result.replica is None or result.under_load is None:
        raise ValueError(f"{result.option.name}: not sized on simulated percentiles, so there is no replica search")
    workload = workload.at_request_lengths()
    rep = result.replica
    sim = _simulated(workload, kept_replica(result, catalog), result.candidate.slots, result.peak_rate_per_s, goals)
    return sim, _fleet(
        result.option, workload, rep, result.money, 1.0, result.tpot_goal_s, sim, _planned(result, workload)
    )


def sized_at_engine_limit(result: Result, workload: Workload, catalog: Catalog, max_replicas: int) -> Sizing:
    """The option's kept replica (its group, GPU, model, precisions and engine, unchanged) with the engine's own
    max_num_seqs in place of the review's cap (``Replica.max_num_seqs`` None: vLLM's 1,024 on an H100), the KV cache
    admitting by tokens beneath it (a full cache preempts), sized on simulated percentiles against the targets as
    given, no margin, on the requests the review sized on (``_lengths``): what ``planner plan --rate --gpus <group>``
    sizes for the same deployment, lengths and targets (``planner.serving.fleet.fewest_replicas`` of the plan's
    replica, the same seeded draw). Searched below ``max_replicas`` only: raises ``PlannerError`` where none there
    meets them. Only for an option sized on simulated percentiles (``result.under_load``)."""
    if result.replica is None or result.under_load is None:
        raise ValueError(f"{result.option.name}: not sized on simulated percentiles, so there is no replica search")
    workload = workload.at_request_lengths()
    goals = (workload.ttft_target_s, workload.tpot_target_s)
    return _simulated(workload, kept_replica(result, catalog), None, result.peak_rate_per_s, goals, max_replicas)


def kept_replica(result: Result, catalog: Catalog) -> Replica:
    """The serving simulation's replica of an option's kept group (``_serving_replica``), with the engine's own
    max_num_seqs (the review's cap, ``Candidate.slots``, is set where it is simulated)."""
    return _serving_replica(
        result.option, result.gpu, result.model, int(result.replica.gpus), result.engine, catalog,
        result.weight_precision, result.kv_precision,
    )  # fmt: skip


def replicas_over_draws(result: Result, workload: Workload, catalog: Catalog) -> tuple[int, ...]:
    """The serving replicas the option's kept replica (its group and batch) needs in each arrival draw of its traffic
    (``planner.serving.fleet.SPREAD_SEEDS``, the first the sized one; the draws ``planner plan``'s sampling spread
    compares), each by the review's one replica search (``_simulated``, its ``arrival_seed`` set) at the rate and
    goals the option was sized on, on the same requests (``_lengths``: seeded, one draw of lengths for every
    arrival draw): how far another sample of the same traffic moves the replica count. Two options' fleets are
    set side by side on common random numbers: the same lengths and arrival draws, so only the deployment differs.
    () where the option was not sized on simulated percentiles at a rate (a burst, Little's law) or a draw meets
    no fleet the search allows."""
    sim = result.under_load
    if result.replica is None or sim is None or sim.is_burst or not result.meets:
        return ()
    workload = workload.at_request_lengths()
    replica = kept_replica(result, catalog)
    goals, rate = (sim.ttft_target_s, sim.tpot_target_s), sim.replicas * sim.rate_per_replica_s
    try:
        return tuple(
            sim.replicas
            if seed == ARRIVAL_SEED
            else _simulated(workload, replica, result.candidate.slots, rate, goals, arrival_seed=seed).replicas
            for seed in SPREAD_SEEDS
        )
    except PlannerError:
        return ()


def run_at_replicas(result: Result, workload: Workload, catalog: Catalog, replicas: int):
    """The option's kept replica (its group and batch) simulated as one of ``replicas`` at the rate and on the
    requests it was sized on (``replica_run``, dealt by the workload's routing, the sized arrival draw): what it
    reads on another replica count (a lever's on the baseline's). Only for an option sized on simulated
    percentiles at a rate."""
    sim = result.under_load
    if result.replica is None or sim is None or sim.is_burst:
        raise ValueError(f"{result.option.name}: not sized on simulated percentiles at a rate")
    workload = workload.at_request_lengths()
    replica = kept_replica(result, catalog)
    return replica_run(
        dc_replace(replica, max_num_seqs=result.candidate.slots), workload.prompt_tokens_mean,
        workload.output_tokens_mean, sim.replicas * sim.rate_per_replica_s, int(replicas),
        burstiness=workload.burstiness, prefix_hit_rate=workload.prefix_hit_rate, routing=workload.routing,
        lengths=_lengths(workload, replica),
    )  # fmt: skip


def _sim_rates(workload: Workload, sim: Sizing) -> tuple[float, float] | None:
    """Of a workload given as requests in flight, the fleet ``sim`` sized under load: its peak rate (replicas x rate
    per replica, ``_simulated_in_flight``'s) twice (the ranking's cost needs only the peak); None for one by rate."""
    return None if workload.by_rate else (sim.replicas * sim.rate_per_replica_s,) * 2


def _planned(result: Result, workload: Workload) -> tuple[float, float] | None:
    """The (peak, average) requests/s the option was sized on under load, where the traffic is given as requests in
    flight (the rate rests on the sized fleet's latency, so it is not worked out again); None (``_rates``) for
    traffic by rate, or a fleet sized by Little's law."""
    if workload.by_rate or result.under_load is None:
        return None
    return result.peak_rate_per_s, result.average_rate_per_s


def fleet_at(result: Result, workload: Workload, change: float | np.ndarray) -> sizing.Fleet:
    """The option's planned fleet scaled to the planned peak x ``change`` (an array scales to several at once): the
    kept group and its requests/s per replica (the simulated rate that met the targets, or Little's law's) unchanged,
    replicas = ceil(traffic / that rate) + spares, rounded to whole nodes. Not sized again: a fresh sizing at that
    traffic (``sized_again``) may keep another group or run each replica at another rate (trial 14: H200 at twice
    the example's peak, 66 GPUs scaled against 64 sized again). The quarter-by-quarter ramp uses it, the charts
    between the levels sized afresh (``charted_fleets``); say so where they are shown."""
    workload = workload.at_request_lengths()
    return _fleet(
        result.option, workload, result.replica, result.money, change, result.tpot_goal_s, result.under_load,
        _planned(result, workload),
    )  # fmt: skip


def at_traffic(workload: Workload, change: float) -> Workload:
    """The workload with today's peak and average traffic (requests/s, or requests in flight) x ``change``: the
    planned peak, after growth, is then x ``change`` too."""
    fields = (
        ("peak_requests_per_s", "average_requests_per_s")
        if workload.by_rate
        else ("peak_concurrent_requests", "average_concurrent_requests")
    )
    return workload.model_copy(update={f: getattr(workload, f) * change for f in fields})


def sized_again(
    result: Result, workload: Workload, catalog: Catalog, change: float, traffic_change: float, finance: Finance | None
) -> Result:
    """The option sized afresh for the planned peak x ``change``: ``evaluate`` on the workload at that traffic
    (``at_traffic``), the same code as the plan's, so every tensor-parallel group is tried and the replicas are
    searched again (``planner.serving.fleet.fewest_replicas`` where the review sizes on simulated percentiles), not
    the planned fleet scaled (``fleet_at``). Its own ``low`` and ``high`` are scaled from it: unused."""
    return evaluate(result.option, at_traffic(workload, change), catalog, traffic_change, finance=finance)


def sized_levels(scenario: Scenario) -> tuple[float, ...]:
    """The traffic levels, as multipliers of the planned peak, at which the review sizes each option afresh besides
    the plan (``review.with_sized_again``): 1 - traffic_change, 1 + traffic_change and the stress multiplier."""
    x = scenario.traffic_change
    return 1 - x, 1 + x, scenario.finance.stress_multiplier


def chart_multipliers(sized_levels: tuple[float, ...]) -> tuple[float, ...]:
    """The charts' traffic levels, as multipliers of the planned peak: ``SWEEP`` (0.25x to 3x in steps of 0.25x) and
    each level of ``sized_levels`` (those the review sizes afresh: the sensitivity's 1 -/+ traffic_change and the
    stress case, ``review.with_sized_again``) within that range, in order, each once. So the Chart data holds the
    Demand cases' and Details' -/+ fleets at their own traffic (trial 26 F4); a stress case past 3x is not charted."""
    levels = sorted({*SWEEP, *(m for m in sized_levels if 0 < m <= max(SWEEP))})
    return tuple(m for i, m in enumerate(levels) if i == 0 or not math.isclose(m, levels[i - 1]))


def charted_fleets(
    result: Result, workload: Workload, multipliers: tuple[float, ...], sized_levels: tuple[float, ...]
) -> sizing.Fleet:
    """The option's fleet at the planned peak x each of ``multipliers`` (the charts' data; each field one array):

    * at 1 and at each level of ``sized_levels`` the review sized the option afresh at (``Result.again``), that
      fleet: the very result Demand cases and Details' -/+ columns read, not sized again here;
    * at a level of ``sized_levels`` where no fresh sizing met the targets (a warning says so), the planned fleet
      scaled (``fleet_at``), as those tables show it there;
    * at any other traffic, the fleet sized at the nearest of those levels below it (the lowest, under them all)
      scaled to it (``fleet_at`` on the workload at that level: its group and requests/s per replica kept, not sized
      again).

    Trial 26 F4: the charts scaled the planned fleet at every level, and at twice the peak showed a bought fleet of
    16 GPUs where Demand cases sized 8 afresh, reversing which option was cheaper there."""
    anchors = sorted([(1.0, result), *result.again], key=lambda a: a[0])
    fleets = []
    for m in multipliers:
        exact = next((r for a, r in anchors if math.isclose(a, m)), None)
        if exact is not None:
            fleets.append(exact.fleet)
        elif any(math.isclose(m, s) for s in sized_levels):
            fleets.append(fleet_at(result, workload, m))
        else:
            a, r = next((a, r) for a, r in reversed(anchors) if a <= m) if anchors[0][0] <= m else anchors[0]
            fleets.append(fleet_at(r, at_traffic(workload, a), m / a))
    return sizing.Fleet(
        *(np.array([np.asarray(getattr(f, k)).item() for f in fleets]) for k in sizing.Fleet.__dataclass_fields__)
    )


def _best_batch(c: Candidate, workload: Workload, tpot_goal_s: float) -> sizing.Replica:
    """The batch (its KV fits) that lets one replica take the most requests per second at the TPOT target
    (``sizing.best_batch``)."""
    b, tpot_s = sizing.best_batch(c.tpot_by_batch_s, c.ttft_mean_s, workload.output_tokens_mean, tpot_goal_s)
    return sizing.Replica(c.gpus_per_replica, float(b), tpot_s, c.ttft_high_s, c.ttft_mean_s, c.tpot_by_batch_s)


def _groups_in_nodes(option: Option, model: Model, groups: tuple[int, ...]) -> tuple[int, ...]:
    """The groups tried whose replicas pack into the option's nodes (``sizing.packs_into_nodes``); none: refused."""
    kept = tuple(n for n in groups if sizing.packs_into_nodes(n, option.node_size))
    if not kept:
        raise InvalidInputError(
            f"{option.name}: no tensor-parallel group the engine runs {model.name} on ({', '.join(map(str, groups))} "
            f"GPUs) fits in a node of {option.node_size} or spans whole ones: a replica would straddle a node "
            "boundary, over the network, which planner does not time; give a node_size of at least "
            f"{min(groups)} GPUs"
        )
    return kept


def kernel_curves_warning(gpu: Gpu, eng: EngineProfile) -> str:
    """``planner plan``'s warning where the GPU's kernel curves are another GPU's (``curves_note``: "kernel curves
    not measured on MI300X: its GEMM rates are H100 SXM 80GB's x 668.4 / 794.5 ..."), for an engine timed on kernel
    curves; "" elsewhere. Without an option's name, so a review with several options on that GPU says it once."""
    return curves_note(gpu.name, gpu.architecture) if eng.kernel_curves else ""


def _option_warnings(option: Option, tried: tuple[int, ...]) -> list[str]:
    """What the scenario gave that the option does not use, each said (silently ignored before): groups of ``tried``
    that would straddle its nodes, a purchase price on an option that rents, rent settings on one that buys."""
    out = []
    straddling = [n for n in tried if not sizing.packs_into_nodes(n, option.node_size)]
    if straddling:
        out.append(
            f"{option.name}: replicas of {', '.join(map(str, straddling))} GPUs were not tried: each would straddle "
            f"the {option.node_size}-GPU nodes (tensor-parallel traffic over the network, not timed)"
        )
    if option.pricing != "purchase" and option.purchase_usd is not None:
        out.append(
            f"{option.name}: purchase_usd ${option.purchase_usd:,.0f} is not used: the option rents (pricing "
            f'"cloud", the default); set pricing = "purchase" to buy at that price'
        )
    given = []
    if option.pricing == "purchase" and option.price_kind is not None:
        given.append(f"price_kind {option.price_kind!r}")
    if option.pricing == "purchase" and option.cloud_usd_per_gpu_hour is not None:
        given.append(f"cloud_usd_per_gpu_hour ${option.cloud_usd_per_gpu_hour:g}")
    if given:
        out.append(
            f'{option.name}: {" and ".join(given)} not used: the option buys (pricing "purchase"); set pricing = '
            '"cloud" to rent at that price'
        )
    return out


def evaluate(
    option: Option,
    workload: Workload,
    catalog: Catalog,
    traffic_change: float,
    *,
    model: Model | None = None,
    groups: tuple[int, ...] | None = None,
    load_curves: bool = False,
    finance: Finance | None = None,
    most_gpus: Callable[[], float] | None = None,
) -> Result:
    """Size one option: try each tensor-parallel group, keep the one whose fleet costs least at peak (a tie: the one
    with a fleet at the held-out slow end, then the more headroom, ``_cost_then_headroom``; asked only of groups tied
    on cost under load, ``_kept_on_ties``).
    ``load_curves``: also its planned fleet's latency against traffic (``load_curve``; the review's own options
    only, not the levers' and outlook's variants). ``finance``: the scenario's [finance], whose cost of capital and
    residual value a bought GPU's monthly charge takes (``option_money``; None: straight line). Fractional mean lengths are computed in whole tokens
    (``Workload.at_request_lengths``). ``most_gpus``: a bound on the fleet under load, asked for once where one is
    searched (``planner.export.review.sized``: ten times the fleet sized without the margin, sized only then): the
    search runs below that many GPUs only, and where no group's fleet below it meets the targets the option meets
    none, its shortfall ``past_limit_text`` of the bound and its ``search_stopped_at_gpus`` the bound."""
    workload = workload.at_request_lengths()
    gpu = catalog.gpu(option.gpu)
    mdl = model or catalog.model(option.model)
    # drafting with MTP loads the checkpoint's MTP layers: every memory plan of the option holds them
    mdl = served_model(mdl, _speculation(option, mdl, catalog), catalog)
    eng = engine_profile(option.engine)
    if option.weight_precision is None and model is None:  # "...-FP8" checkpoint names state their precision
        option = option.model_copy(update={"weight_precision": implied_weight_precision(option.model, None)})
    wp = catalog.precision(option.weight_precision).name if option.weight_precision else mdl.native_precision
    kp = catalog.precision(option.kv_precision).name if option.kv_precision else api.default_kv_precision(mdl)
    money = option_money(option, gpu, finance)
    layout = option.parallelism or "tp"
    if spreads_experts(layout) and mdl.moe is None:  # a pipeline splits layers, any model's
        raise api.layout_error(mdl, layout)
    # an engine release that cannot load the model on the GPU (TensorRT-LLM 1.x: no MXFP4 experts below SM 9.0)
    api.check_release(gpu, mdl, eng, option.weight_precision, catalog, option.kv_precision)
    valid = api.valid_tp_sizes(mdl, parallelism=layout, engine=eng)  # the engine's split rule (kv_heads_any_split)
    if option.gpus_per_replica and option.gpus_per_replica not in valid:
        raise api.tp_size_error(mdl, option.gpus_per_replica, layout, eng)
    uneven = api.uneven_experts(mdl, option.gpus_per_replica or 1, layout, eng)[0]  # SGLang: E % g != 0
    if uneven:
        raise OutOfRangeError(uneven)
    tried = (
        ()
        if option.gpus_per_replica
        else api.groups_to_try(mdl, max_gpus=option.max_gpus_per_replica, parallelism=layout, engine=eng)
    )
    groups = groups or ((option.gpus_per_replica,) if option.gpus_per_replica else _groups_in_nodes(option, mdl, tried))
    time_ranges = tuple(sizing_range(gpu, eng, catalog, n, mdl, parallelism=layout) for n in groups)
    cands = _candidates(
        option, workload, catalog, gpu, mdl, option.weight_precision, option.kv_precision, eng, groups, time_ranges
    )
    cands = _with_speculation(cands, option, workload, catalog, gpu, mdl, eng, wp, kp)
    warnings = _option_warnings(option, tried)
    own = catalog.replaced_note(gpu, mdl)  # a user folder's entry in place of the shipped one
    warnings += [f"{option.name}: {own}"] if own else []
    own_quote = option.purchase_usd if option.pricing == "purchase" else option.cloud_usd_per_gpu_hour
    stale = None if own_quote else stale_price_warning(money.quote, gpu.name)
    warnings += [f"{option.name}: {stale}"] if stale else []
    implausible = _implausible_rate(option, gpu)
    warnings += [f"{option.name}: {implausible}"] if implausible else []
    beyond = api.trained_context_warning(mdl, workload.sizing_context_tokens)  # plan's words (planner.deploy)
    warnings += [f"{option.name}: {beyond}"] if beyond else []
    fp8_kv = api.fp8_kv_note(gpu, mdl, eng, kp, catalog.precision(kp).bytes_per_element)  # plan's words too
    warnings += [f"{option.name}: {fp8_kv}"] if fp8_kv else []
    if eng.name == IDEAL.name:
        warnings.append(
            f"{option.name}: the 'ideal' engine is a bound, not an engine to deploy (all of the memory and every "
            "datasheet peak usable, no engine overheads: the seeds' form); it ranks after options a real engine runs"
        )
    untested = api.untested_architecture_note(gpu, eng)
    warnings += [f"{option.name}: {untested}"] if untested else []
    curves = kernel_curves_warning(gpu, eng)  # unprefixed: the review says it once per GPU (trial 24 F16)
    warnings += [curves] if curves else []
    residual = residual_left_out(option, finance) if finance is not None else ""
    warnings += [residual] if residual else []
    book = book_value_note(option, finance) if finance is not None else ""  # trial 26 F13
    warnings += [book] if book else []
    warnings += money_warnings(option)  # years typed as months, $/MWh as $/kWh (trial 23 F6)
    passing = []
    for c in cands:
        if c.batch < 1 or not c.ttft_high_s <= c.goal_s(workload.ttft_target_s):
            continue
        if not sizing.leaves_prompt_time(c.tpot_batch1_s, c.goal_s(workload.tpot_target_s)):
            continue  # decode alone nearly uses the goal: the shortfall says so
        rep = _best_batch(c, workload, c.goal_s(workload.tpot_target_s))
        fl = _fleet(option, workload, rep, money, 1.0, c.goal_s(workload.tpot_target_s))
        passing.append((_cost_then_headroom(fl, c), rep, fl, c))
    best = min(passing, key=lambda t: t[0]) if passing else None
    under_load: Sizing | PlannerError | None = None
    skipped: tuple[str, ...] = ()  # the groups the simulation skipped, each plan's note (``Result.groups_skipped``)
    if best is not None and workload.sizing == "simulated":
        best, under_load, skipped = _cheapest_under_load(
            passing, option, workload, catalog, gpu, mdl, eng, wp, kp, money, most_gpus
        )
    # the margin stated: the kept group's, or (none meets) that of the group the shortfall quotes
    kept = best[3] if best is not None else quoted_group(cands)
    tpot_goal = kept.goal_s(workload.tpot_target_s)
    # which fp8 the kept group plans where the makers' block-FP8 checkpoint would not load on it (plan's words)
    which_fp8 = api.block_checkpoint_note(mdl, wp, kept.gpus_per_replica, layout, eng)
    warnings += [f"{option.name}: {which_fp8}"] if which_fp8 else []
    # the kept group across nodes: plan's warning, its held-out ranges' slow end open; what is not modelled (dp-ep's
    # large-scale MoE recipe, the scale-out network), each in plan's words (planner.deploy; trial 31 F7)
    if api.slow_end_open(gpu, kept.gpus_per_replica, layout):
        spans = api.spans_nodes_warning(gpu, kept.gpus_per_replica, layout)
        warnings.append(f'{option.name}: {spans}; its held-out ranges\' slow end is open ("to more than")')
    missing = api.not_modelled_words(gpu, kept.gpus_per_replica, layout)
    warnings += [f"{option.name}: not modelled: {missing}"] if missing else []
    common = dict(
        option=option,
        gpu=gpu,
        model=mdl,
        weight_precision=wp,
        kv_precision=kp,
        expert_precision=expert_precision(catalog, mdl, option.weight_precision).name if mdl.moe is not None else None,
        engine=eng,
        money=money,
        candidates=cands,
        warnings=tuple(warnings),
        margin=kept.margin,
        time_range=(kept.time_range.low, kept.time_range.high),
        time_range_note=kept.time_range.note,
        time_range_widened=kept.time_range.widened,
        time_range_floor=kept.time_range.floor,
        tpot_goal_s=tpot_goal,
        ttft_goal_s=kept.goal_s(workload.ttft_target_s),
        calibration=calibration_in_effect(gpu, eng),
    )
    if best is None or isinstance(under_load, FleetPastLimit):
        peak = avg = math.nan
        if workload.by_rate:
            peak = workload.peak_requests_per_s * workload.growth_factor
            avg = workload.average_requests_per_s * workload.growth_factor
        return Result(
            **common,
            replica=None,
            fleet=None,
            low=None,
            high=None,
            sweep=None,
            peak_rate_per_s=peak,
            average_rate_per_s=avg,
            shortfall=shortfall_text(cands, workload, gpu, mdl) if best is None else str(under_load),
            search_stopped_at_gpus=under_load.gpus if isinstance(under_load, FleetPastLimit) else None,
        )
    _, rep, fl, _ = best
    peak, avg = _rates(workload, rep)
    # the memory behind the kept group's batch, from the memory plan _candidates' max_batch read (trial 25 F2)
    common["memory"] = memory_chain(
        gpu, mdl, workload.sizing_context_tokens, kept.gpus_per_replica, eng, catalog,
        option.weight_precision, option.kv_precision, option.memory_utilization, layout,
    )  # fmt: skip
    sim = None
    if workload.sizing == "simulated":
        replica = _serving_replica(option, gpu, mdl, kept.gpus_per_replica, eng, catalog, wp, kp)
        if isinstance(under_load, PlannerError):  # no fleet meets the targets under load: the option says why
            warnings.append(f"{option.name}: sized by Little's law; under load {under_load}")
            common["under_load_refused"] = str(under_load)
        else:
            sim = under_load
            common["groups_skipped"] = skipped  # why a group that passed Little's law was not sized (trial 28 F1)
            if not workload.by_rate:  # requests in flight: the rates the sized fleet's simulated latency gives
                peak = sim.replicas * sim.rate_per_replica_s
                avg = _average_in_flight_rate(workload, replica, kept.slots, sim)
            if one_output_token(workload.output_tokens_mean):
                warnings.append(f"{option.name}: {ONE_TOKEN_NOTE}")
            if floor := near_ttft_floor(sim):  # the target, not the traffic, sets this fleet
                warnings.append(f"{option.name}: {floor}")
            fl = _fleet(option, workload, rep, money, 1.0, tpot_goal, sim, (peak, avg))
            # the TPOT users see at the peak: the simulated one at the sizing percentile (it meets the goal)
            fl = dc_replace(fl, tpot_peak_s=np.asarray(sim.result.tpot_s.at(sim.percentile)))
            if load_curves:
                common["load_curve"] = load_curve(dc_replace(replica, max_num_seqs=kept.slots), workload, peak, sim)
        common["warnings"] = tuple(warnings)
    x = traffic_change
    return Result(
        **common,
        replica=rep,
        fleet=fl,
        low=_fleet(option, workload, rep, money, 1 - x, tpot_goal, sim, (peak, avg)),
        high=_fleet(option, workload, rep, money, 1 + x, tpot_goal, sim, (peak, avg)),
        sweep=None,  # the charts' fleets: the review's (``charted_fleets``), once the option is sized afresh
        under_load=sim,
        peak_rate_per_s=peak,
        average_rate_per_s=avg,
        shortfall="",
    )


def past_limit_text(gpus: float) -> str:
    """The shortfall of an option whose fleet under load was searched below ``gpus`` GPUs only and meets none there."""
    return f"no fleet of fewer than {gpus:,.0f} GPUs meets the targets under load (the search stopped there)"


class FleetPastLimit(PlannerError):
    """Every group's search for the fewest replicas under load stopped at ``evaluate``'s ``most_gpus`` unmet: the
    fleet, if any meets, has at least that many GPUs."""

    def __init__(self, gpus: float):
        self.gpus = gpus
        super().__init__(past_limit_text(gpus))


def _cheapest_under_load(
    passing: list,
    option: Option,
    workload: Workload,
    catalog: Catalog,
    gpu: Gpu,
    mdl: Model,
    eng: EngineProfile,
    wp: str,
    kp: str,
    money: Money,
    most_gpus: Callable[[], float] | None = None,
) -> tuple[tuple, Sizing | PlannerError, tuple[str, ...]]:
    """Of the groups that meet the targets by Little's law (``passing``: (key, replica, fleet, candidate)), the one
    whose fleet sized on simulated percentiles (``_simulated``) costs least (then fewest GPUs, then the most headroom,
    then the smaller group: ``_cost_then_headroom``; groups tied on cost and GPUs ranked first on whether a fleet
    of theirs meets the targets at the held-out slow end, ``planner.export.slow_end``'s test: ``_kept_on_ties``), with
    its sizing; where none can be sized under load, Little's law's cheapest with the first group's error.
    Each group is simulated: Little's law misses the queue of long prompts, so its cheapest group is not always the
    cheapest under load (Llama 3.1 70B fp8 on H200 at 40 requests/s of 7,792 / 400 tokens: 412 x 2 = 824 GPUs kept
    by Little's law, 28 x 8 = 224 under load). ``most_gpus``: the bound, asked for here; each group is searched for a
    fleet of fewer GPUs only (``sizing.replicas_below``); where none meets there and some group stopped at it (not
    refused for a reason no number of replicas changes: an idle replica too slow), Little's law's cheapest with a
    ``FleetPastLimit``. A group whose KV cache cannot hold the longest request is skipped as ``planner plan``
    skips it (``planner.serving.fleet.fewest_gpus``: ``RequestLongerThanCacheError``); where no group is sized,
    another group's refusal is the one given, else every group's cache against the longest request
    (``longer_than_every_cache``, plan's words). The third value: each skipped group's note, smallest group first
    (``RequestLongerThanCacheError.skip_note``, the line ``planner plan`` prints of it), for the Assumptions row that
    says how the group was chosen."""
    keyed, first_error, stopped = [], None, False
    too_short: list[RequestLongerThanCacheError] = []  # groups whose KV cache cannot hold the longest request
    bound = most_gpus() if most_gpus is not None else math.inf
    for key, rep, fl, c in sorted(passing, key=lambda t: t[0]):
        most = MAX_REPLICAS
        if math.isfinite(bound):
            most = min(sizing.replicas_below(bound, c.gpus_per_replica, option.spare_replicas, money.node_size), most)
            if most < 1:  # even one serving replica's fleet is that large
                stopped = True
                continue
        replica = _serving_replica(option, gpu, mdl, c.gpus_per_replica, eng, catalog, wp, kp)
        goals = (c.goal_s(workload.ttft_target_s), c.goal_s(workload.tpot_target_s))
        try:
            if workload.by_rate:
                sim = _simulated(workload, replica, c.slots, _rates(workload, rep)[0], goals, most)
            else:  # requests in flight: at the rate this fleet's simulated latency gives (trial 24 F18)
                sim = _simulated_in_flight(workload, replica, c.slots, _rates(workload, rep)[0], goals, most)
        except RequestLongerThanCacheError as exc:  # skipped: no number of its replicas serves the longest request
            too_short.append(exc)
            continue
        except PlannerError as exc:
            # stopped at the limit, not at the search's own end nor by an idle replica's miss
            stopped = stopped or (most < MAX_REPLICAS and isinstance(exc, NoFleetMeetsError) and not exc.idle_misses)
            first_error = first_error or exc
            continue
        loaded = _fleet(option, workload, rep, money, 1.0, goals[1], sim, _sim_rates(workload, sim))
        keyed.append((_cost_then_headroom(loaded, c), ((key, rep, fl, c), sim, replica)))
    too_short.sort(key=lambda e: e.gpus)
    skipped = tuple(e.skip_note for e in too_short)
    if first_error is None and too_short:
        first_error = longer_than_every_cache(too_short)
    if not keyed:
        return min(passing, key=lambda t: t[0]), FleetPastLimit(bound) if stopped else first_error, skipped

    def meets_at_slow_end(entry) -> bool:  # slow_end.slow_end's test, on this group's replica and planned peak
        goals_at_end = held_out.slow_end_goals(workload, load_loaded_ranges())
        if goals_at_end is None:  # no ranges table: not known, the tie goes to headroom
            return True
        (_, rep, _, c), sim, replica = entry
        peak = _rates(workload, rep)[0] if workload.by_rate else sim.replicas * sim.rate_per_replica_s
        try:
            at_end = _simulated(workload, replica, c.slots, peak, goals_at_end)
        except PlannerError:
            return False
        return not near_ttft_floor(at_end)

    _, (kept, found, _) = _kept_on_ties(keyed, meets_at_slow_end)
    return kept, found, skipped


def _cost_then_headroom(
    fleet: sizing.Fleet, c: Candidate, meets_at_slow_end: bool = True
) -> tuple[float, float, bool, float, int]:
    """The key a group is kept by, least first: the fleet's monthly cost, then its GPUs, then whether some fleet of
    the group meets the targets at the held-out slow end (``meets_at_slow_end``, as ``planner.export.slow_end`` finds
    it; one that does first), then the more traffic it carries within the targets (the Options table's "Headroom
    (peak)", ``Fleet.headroom_peak``: 1 - peak / (replicas deployed x each one's rate), larger first), then the
    smaller group. Trial 26 F9: 8 GPUs as 8 x 1-GPU replicas (headroom 38%) were kept over the same 8 GPUs as 4 x
    2-GPU replicas (75%, the fleet that the stress case found carries twice the peak): the tie in cost went to the
    smaller group. Trial 27 F3: 24 B200 as 12 x 2-GPU or 6 x 4-GPU replicas, $46,704 either way; the 2-GPU group was
    kept, and at the slow end (p95 TTFT x6.41) no fleet of it meets 1.5 s (one p95 prompt alone 0.24 s x 6.41 =
    1.54 s) while 56 GPUs of the 4-GPU group do (0.16 s x 6.41 = 1.03 s)."""
    headroom = float(fleet.headroom_peak)
    return (
        float(fleet.monthly_usd),
        float(fleet.gpus),
        not meets_at_slow_end,
        -headroom if math.isfinite(headroom) else 0.0,
        c.gpus_per_replica,
    )


def _kept_on_ties(
    keyed: list[tuple[tuple, object]], meets_at_slow_end: Callable[[object], bool] | None
) -> tuple[tuple, object]:
    """The least of ``keyed`` (pairs of a ``_cost_then_headroom`` key, the slow end taken as met, and a group),
    where groups tied on the least cost and GPUs are ranked again with ``meets_at_slow_end`` of each (their key's
    third place; None: not known, the key as given). Only the tied groups are asked (a replica search each)."""
    least = min(keyed, key=lambda t: t[0])
    tied = [t for t in keyed if t[0][:2] == least[0][:2]]
    if meets_at_slow_end is None or len(tied) < 2:
        return least
    return min(((k[:2] + (not meets_at_slow_end(e),) + k[3:], e) for k, e in tied), key=lambda t: t[0])


def latency_margin(workload: Workload, high: float) -> float:
    """The margin the option is sized with: the scenario's, or ``high``, the time model's upper residual quantile.

    "model-range" (the default): the 90th percentile of measured / predicted - 1 for this GPU and tensor-parallel
    group (held-out rows of the nearest covered region, widened where the data does not cover the group, GPU or
    model; or your calibration's: ``planner.accuracy.calibration.residual_range``), so the pessimistic end of the range meets
    the target. Each group is sized with its own (``_candidates``): a 4-GPU and an 8-GPU group may differ.
    """
    if workload.latency_margin != "model-range":
        return float(workload.latency_margin)
    return sizing.range_margin(high)


def _implausible_rate(option: Option, gpu) -> str:
    """A per-GPU cloud price several times above every catalog quote of that GPU (an instance's rate typed per GPU,
    trial 22 F10): a warning, not a refusal. "" when the price is the catalog's, or below ``RENT_IMPLAUSIBLE_FACTOR``
    (4) times its highest rental quote (``Gpu.highest_rental_quote``)."""
    rate = option.cloud_usd_per_gpu_hour
    quotes = [p for p in gpu.prices if p.kind != "purchase"]
    if option.pricing != "cloud" or not rate or not quotes:
        return ""
    top = gpu.highest_rental_quote().usd_per_gpu_hour
    if rate < RENT_IMPLAUSIBLE_FACTOR * top:
        return ""
    kind = option.price_kind or "on-demand"
    same = [p for p in quotes if p.kind == kind] or quotes
    median = statistics.median(p.usd_per_gpu_hour for p in same)
    inst = max(p.instance_gpus for p in same)
    return (
        f"cloud_usd_per_gpu_hour {fmt_usd_per_gpu_hour(rate)} is {rate / top:.1f}x the highest catalog quote for "
        f"{gpu.name} ({fmt_usd_per_gpu_hour(top)}; {kind} median {fmt_usd_per_gpu_hour(median)}, {inst}-GPU instances): "
        f"per GPU, not per {inst}-GPU instance?"
    )


def engine_limit_fleet(
    result: Result, bare: Result | None, workload: Workload, catalog: Catalog
) -> EngineLimitFleet | None:
    """``result``'s fleet at the engine's own max_num_seqs where its batch cap binds: its kept replica sized as
    ``planner plan`` sizes it (``evaluate.sized_at_engine_limit``), searched below the option's own serving replicas
    without the margin (``bare``, ``review.sized``'s; where its group differs from the kept one, the kept replica sized
    again on the targets as given, ``fleet_on_goals``); None where the option is not sized on simulated percentiles,
    its cap is the engine's limit, or no fewer replicas at the engine's limit meet the targets (the cap does not bind:
    no note). One more replica search per option whose cap is below the engine's limit, the one below that fleet
    only."""
    if not result.meets or result.under_load is None or result.candidate is None:
        return None
    cap = result.candidate.slots
    group = int(result.replica.gpus)
    limit = sequences_memory_holds(
        kept_replica(result, catalog), 1
    )  # the engine's own limit: memory holds more one-token sequences
    if cap >= limit:
        return None
    w = workload.at_request_lengths()
    if (
        bare is not None
        and bare.under_load is not None
        and bare.replica is not None
        and int(bare.replica.gpus) == group
    ):
        at_cap = bare.under_load.replicas
    elif result.margin == 0:
        at_cap = result.under_load.replicas
    else:
        try:
            at_cap = fleet_on_goals(result, w, catalog, (w.ttft_target_s, w.tpot_target_s))[0].replicas
        except PlannerError:
            return None
    if at_cap <= 1:
        return None
    try:
        sim = sized_at_engine_limit(result, w, catalog, at_cap - 1)
    except PlannerError:  # no fewer replicas meet the targets at the engine's limit: the cap does not bind
        return None
    if sim.replicas >= at_cap:
        return None
    return EngineLimitFleet(
        result.option.name, cap, cap_words(w), engine_label(result.engine), limit, group, sim.replicas, at_cap
    )
