"""The budget review: every option sized and costed, the recommendation, the four levers, the sensitivity.

This is the only place the export calls the capacity model: per-replica memory, TPOT and TTFT come from
``planner.api``; fleet and money rules from ``planner.sizing``. The writers only lay out a ``Review``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from planner import __version__, api, sizing
from planner.calibration import residual_range
from planner.catalog import Catalog, Gpu, Model, stale_price_warning
from planner.engines import EngineProfile, engine_profile
from planner.errors import PlannerError
from planner.scenario import Option, Scenario, Workload, check_names

#: Traffic multipliers (of the sized peak) that the charts sweep.
SWEEP = tuple(round(0.25 * k, 2) for k in range(1, 13))  # 0.25x .. 3x


class TargetNotMetError(PlannerError):
    """Raised when no option meets the scenario's latency targets; says the best any option reaches."""

    exit_code = 1


@dataclass(frozen=True)
class Money:
    """What one GPU costs a month under the option's pricing, and where each number comes from."""

    pricing: str  # "purchase" or "cloud"
    usd_per_gpu_month: float
    capital_usd_per_gpu_month: float  # purchase / amortization months (0 when rented)
    power_usd_per_gpu_month: float  # TDP x PUE x $/kWh x 730 h (0 when rented: in the hourly rate)
    purchase_usd: float  # NaN when rented
    cloud_usd_per_gpu_hour: float  # NaN when bought
    price_source: str


@dataclass(frozen=True)
class Candidate:
    """One tensor-parallel group size tried for an option."""

    gpus_per_replica: int
    batch: int  # largest batch meeting the TPOT target whose KV fits (0: none)
    tpot_s: float  # at that batch (at batch 1 when none meets)
    tpot_batch1_s: float  # NaN when the weights do not fit
    ttft_high_s: float
    ttft_mean_s: float
    tpot_by_batch_s: tuple[float, ...] = field(default=(), repr=False, compare=False)  # batch 1, 2, ...; NaN: no fit

    @property
    def fits(self) -> bool:
        return math.isfinite(self.tpot_batch1_s)


@dataclass(frozen=True)
class Result:
    """One option, sized: the chosen replica and its fleet at peak, at +-traffic_change, and over the sweep."""

    option: Option
    gpu: Gpu
    model: Model
    weight_precision: str
    kv_precision: str
    engine: EngineProfile
    money: Money
    candidates: tuple[Candidate, ...]
    replica: sizing.Replica | None
    fleet: sizing.Fleet | None
    low: sizing.Fleet | None
    high: sizing.Fleet | None
    sweep: sizing.Fleet | None
    peak_rate_per_s: float
    average_rate_per_s: float
    shortfall: str  # why it does not meet the targets ("" when it does)
    warnings: tuple[str, ...] = ()

    @property
    def meets(self) -> bool:
        return self.fleet is not None

    @property
    def gpus(self) -> int:
        return int(self.fleet.gpus) if self.fleet is not None else 0

    @property
    def monthly_usd(self) -> float:
        return float(self.fleet.monthly_usd) if self.fleet is not None else math.nan


@dataclass(frozen=True)
class Lever:
    """One lever applied to the baseline: what changes, its result, and the saving (positive) or extra cost."""

    name: str
    change: str
    result: Result | None
    saving_usd_per_month: float  # baseline - lever; NaN when the lever does not meet the targets
    note: str


@dataclass(frozen=True)
class Review:
    scenario: Scenario
    source: str
    date: str
    version: str
    results: tuple[Result, ...]  # ranked: meeting options by monthly cost, then the others
    recommended: Result
    baseline: Result
    levers: tuple[Lever, ...]
    sweep_multipliers: tuple[float, ...]
    reason: str
    assumptions: tuple[tuple[str, str, str, str], ...]  # (what, value, unit, source)
    warnings: tuple[str, ...] = field(default=())


# -- money ----------------------------------------------------------------------------------------------


def option_money(option: Option, gpu: Gpu) -> Money:
    price = gpu.price("purchase" if option.pricing == "purchase" else "on-demand")
    cat_src = f"catalog {gpu.name} {price.kind} price, {price.provider}, {price.date}: {price.source}" if price else ""
    if option.pricing == "purchase":
        purchase = option.purchase_usd or price.purchase_usd  # check_names made sure one exists
        capital = float(sizing.amortized_usd_per_gpu_month(purchase, option.amortization_months))
        power = float(sizing.power_usd_per_gpu_month(gpu.tdp_w, option.pue, option.power_usd_per_kwh))
        src = "scenario file (purchase_usd)" if option.purchase_usd else cat_src
        return Money("purchase", capital + power, capital, power, float(purchase), math.nan, src)
    hourly = option.cloud_usd_per_gpu_hour or price.usd_per_gpu_hour
    src = "scenario file (cloud_usd_per_gpu_hour)" if option.cloud_usd_per_gpu_hour else cat_src
    return Money("cloud", float(sizing.cloud_usd_per_gpu_month(hourly)), 0.0, 0.0, math.nan, float(hourly), src)


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
) -> tuple[Candidate, ...]:
    """Per tensor-parallel group: TPOT over every batch in one vectorized call (``_best_batch`` then picks one)."""
    _, max_seqs = eng.batching_limits(gpu.memory_bytes, gpu.architecture)
    batches = np.arange(1, max_seqs + 1, dtype=float)
    tp = np.asarray(groups, dtype=float)
    common = dict(engine=eng, catalog=catalog, errors="coerce")
    ctx = workload.sizing_context_tokens
    tpot = np.asarray(
        api.tpot(
            gpu,
            model,
            ctx,
            batch=batches[None, :],
            kv_precision=kp,
            gpus=tp[:, None],
            weight_precision=wp,
            memory_utilization=option.memory_utilization,
            **common,
        )
    )
    best = sizing.largest_batch_meeting(tpot, batches, workload.tpot_target_s)
    ttft_hi = np.asarray(
        api.ttft(
            gpu,
            model,
            workload.prompt_tokens_high,
            gpus=tp,
            weight_precision=wp,
            kv_precision=kp,
            memory_utilization=option.memory_utilization,
            **common,
        )
    )
    mean_prompt = api.prefill(
        gpu,
        model,
        workload.prompt_tokens_mean,
        gpus=tp,
        weight_precision=wp,
        kv_precision=kp,
        memory_utilization=option.memory_utilization,
        **common,
    )
    ttft_mean = np.asarray(mean_prompt.ttft_s)
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
            )
        )
    return tuple(out)


def _rates(workload: Workload, replica: sizing.Replica, change: float = 1.0) -> tuple[float, float]:
    """(peak, average) requests per second at the end of the horizon (x change), from rates or concurrency."""
    g = workload.growth_factor * change
    if workload.by_rate:
        return workload.peak_requests_per_s * g, workload.average_requests_per_s * g

    def conv(c: float) -> float:
        return float(sizing.rate_from_concurrency(c, replica.ttft_mean_s, workload.output_tokens_mean, replica.tpot_s))

    return conv(workload.peak_concurrent_requests * g), conv(workload.average_concurrent_requests * g)


def _fleet(
    option: Option, workload: Workload, replica: sizing.Replica, money: Money, change: float | np.ndarray
) -> sizing.Fleet:
    peak, avg = _rates(workload, replica)
    return sizing.size(
        replica,
        peak * np.asarray(change),
        avg * np.asarray(change),
        workload.output_tokens_mean,
        workload.prompt_tokens_mean,
        option.spare_replicas,
        option.nodes_of,
        money.usd_per_gpu_month,
        workload.tpot_target_s,
    )


def _best_batch(c: Candidate, workload: Workload) -> sizing.Replica:
    """The batch (its KV fits) that lets one replica take the most requests per second at the TPOT target.

    Prompts share the replica's time with decode, so the largest batch meeting the target is not always best:
    a smaller, faster batch leaves more time for prompts. Ties go to the larger batch.
    """
    curve = np.asarray(c.tpot_by_batch_s, dtype=float)
    batches = np.arange(1, len(curve) + 1, dtype=float)
    rates = sizing.max_rate_per_replica(
        c.ttft_mean_s,
        workload.output_tokens_mean,
        np.nan_to_num(curve, nan=np.inf),
        np.where(np.isfinite(curve), batches, 0.0),
        workload.tpot_target_s,
        ttft_s=c.ttft_mean_s,
    )
    i = int(len(rates) - 1 - np.argmax(rates[::-1]))  # the largest batch among the best
    return sizing.Replica(c.gpus_per_replica, float(batches[i]), float(curve[i]), c.ttft_high_s, c.ttft_mean_s)


def evaluate(
    option: Option,
    workload: Workload,
    catalog: Catalog,
    traffic_change: float,
    *,
    model: Model | None = None,
    groups: tuple[int, ...] | None = None,
) -> Result:
    """Size one option: try each tensor-parallel group, keep the one whose fleet costs least at peak."""
    gpu = catalog.gpu(option.gpu)
    mdl = model or catalog.model(option.model)
    eng = engine_profile(option.engine)
    wp = catalog.precision(option.weight_precision).name if option.weight_precision else mdl.native_precision
    kp = catalog.precision(option.kv_precision).name if option.kv_precision else api.default_kv_precision(mdl)
    money = option_money(option, gpu)
    valid = api.valid_tp_sizes(mdl)
    if option.gpus_per_replica and option.gpus_per_replica not in valid:
        raise api.tp_size_error(mdl, option.gpus_per_replica)
    groups = groups or (
        (option.gpus_per_replica,)
        if option.gpus_per_replica
        else tuple(n for n in api.GPU_GROUPS if n <= option.max_gpus_per_replica and n in valid)
    )
    cands = _candidates(option, workload, catalog, gpu, mdl, option.weight_precision, option.kv_precision, eng, groups)
    warnings = []
    own_quote = option.purchase_usd if option.pricing == "purchase" else option.cloud_usd_per_gpu_hour
    kind = "purchase" if option.pricing == "purchase" else "on-demand"
    stale = None if own_quote else stale_price_warning(gpu.price(kind), gpu.name)
    warnings += [f"{option.name}: {stale}"] if stale else []
    if workload.sizing_context_tokens > mdl.max_context:
        warnings.append(
            f"{mdl.name}: a {workload.sizing_context_tokens:,}-token sequence exceeds its trained maximum "
            f"of {mdl.max_context:,} tokens; memory and time are extrapolated"
        )
    best: tuple | None = None
    for c in cands:
        if c.batch < 1 or not c.ttft_high_s <= workload.ttft_target_s:
            continue
        rep = _best_batch(c, workload)
        fl = _fleet(option, workload, rep, money, 1.0)
        key = (float(fl.monthly_usd), float(fl.gpus), c.gpus_per_replica)
        if best is None or key < best[0]:
            best = (key, rep, fl)
    common = dict(
        option=option,
        gpu=gpu,
        model=mdl,
        weight_precision=wp,
        kv_precision=kp,
        engine=eng,
        money=money,
        candidates=cands,
        warnings=tuple(warnings),
    )
    if best is None:
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
            shortfall=_shortfall(cands, workload, gpu, mdl),
        )
    _, rep, fl = best
    peak, avg = _rates(workload, rep)
    x = traffic_change
    return Result(
        **common,
        replica=rep,
        fleet=fl,
        low=_fleet(option, workload, rep, money, 1 - x),
        high=_fleet(option, workload, rep, money, 1 + x),
        sweep=_fleet(option, workload, rep, money, np.asarray(SWEEP)),
        peak_rate_per_s=peak,
        average_rate_per_s=avg,
        shortfall="",
    )


def _shortfall(cands: tuple[Candidate, ...], workload: Workload, gpu: Gpu, model: Model) -> str:
    fitting = [c for c in cands if c.fits]
    if not fitting:
        return (
            f"{model.name} does not fit on up to {cands[-1].gpus_per_replica} x {gpu.name} with a "
            f"{workload.sizing_context_tokens:,}-token sequence"
        )
    tp = min(c.tpot_batch1_s for c in fitting)
    ttft = min(c.ttft_high_s for c in fitting)
    parts = []
    if tp > workload.tpot_target_s:
        parts.append(f"best TPOT {tp * 1e3:.1f} ms > target {workload.tpot_target_s * 1e3:.1f} ms")
    if ttft > workload.ttft_target_s:
        parts.append(f"best TTFT {ttft:.2f} s > target {workload.ttft_target_s:.2f} s")
    if not parts:  # each target met by some group, not both by one
        parts.append("no single group size meets both the TTFT and TPOT targets")
    return "; ".join(parts)


# -- levers ---------------------------------------------------------------------------------------------


def _lever(name: str, change: str, base: Result, res: Result | None, note: str = "") -> Lever:
    if res is None:
        return Lever(name, change, None, math.nan, note)
    saving = base.monthly_usd - res.monthly_usd if res.meets else math.nan
    if res.meets and not note:
        dt = (float(res.fleet.tpot_peak_s) - float(base.fleet.tpot_peak_s)) * 1e3
        note = (
            f"{int(res.replica.batch)} requests per replica of {int(res.replica.gpus)} GPUs (baseline "
            f"{int(base.replica.batch)}); TPOT {float(res.fleet.tpot_peak_s) * 1e3:.1f} ms ({dt:+.1f} ms)"
        )
        if res.gpus == base.gpus:
            note += (
                f"; same GPU count: {int(res.fleet.replicas)} replicas of {int(res.replica.gpus)} "
                f"(baseline {int(base.fleet.replicas)} of {int(base.replica.gpus)})"
            )
            if bool(res.fleet.prompt_bound):
                note += "; prompt processing (rate x TTFT), not batch room, sets the replica count"
    elif not res.meets:
        note = f"does not meet the targets: {res.shortfall}"
    return Lever(name, change, res, saving, note)


def levers(scenario: Scenario, base: Result, catalog: Catalog) -> tuple[Lever, ...]:
    """More GPUs per replica, a shorter context, a GQA model, KV quantization: each against the baseline."""
    w, o, lv, x = scenario.workload, base.option, scenario.levers, scenario.traffic_change
    out = []
    tp_now = int(base.replica.gpus)
    tp_new = lv.gpus_per_replica or tp_now * 2
    if tp_new <= tp_now:
        out.append(
            Lever(
                "More GPUs per replica",
                f"{tp_now} -> {tp_new} GPUs per replica",
                None,
                math.nan,
                f"not evaluated: levers.gpus_per_replica ({tp_new}) is not above the baseline's {tp_now}",
            )
        )
    else:
        res = evaluate(o.model_copy(update={"gpus_per_replica": tp_new}), w, catalog, x, model=base.model)
        lever = _lever("More GPUs per replica", f"tensor-parallel group {tp_now} -> {tp_new} GPUs", base, res)
        if tp_new > 8:
            lever = Lever(
                lever.name,
                lever.change,
                lever.result,
                lever.saving_usd_per_month,
                lever.note + f"; {tp_new} GPUs per replica span several 8-GPU nodes: slower than modelled",
            )
        out.append(lever)

    cap = lv.prompt_tokens_high or max(1, w.prompt_tokens_high // 2)
    short = w.model_copy(update={"prompt_tokens_high": cap, "prompt_tokens_mean": min(w.prompt_tokens_mean, cap)})
    res = evaluate(o, short, catalog, x, model=base.model)
    out.append(
        _lever(
            "Shorter context",
            f"prompts capped at {cap:,} tokens (was {w.prompt_tokens_high:,} at p{w.high_percentile:g})",
            base,
            res,
        )
    )

    m = base.model
    if lv.gqa_model:
        alt = catalog.model(lv.gqa_model)
        res = evaluate(o.model_copy(update={"model": alt.name}), w, catalog, x, model=alt)
        out.append(
            _lever(
                "GQA model",
                f"{m.name} ({m.attention_kind}, {m.num_kv_heads} KV heads) -> {alt.name} "
                f"({alt.attention_kind}, {alt.num_kv_heads} KV heads)",
                base,
                res,
            )
        )
    elif m.attention_kind in ("GQA", "MQA"):
        mha = m.model_copy(update={"num_kv_heads": m.num_attention_heads, "name": f"{m.name} without GQA"})
        res = evaluate(o, w, catalog, x, model=mha)
        lever = _lever(
            "GQA model",
            f"{m.name} already uses {m.attention_kind} ({m.num_kv_heads} KV heads for "
            f"{m.num_attention_heads} query heads); shown: the same model without it (hypothetical)",
            base,
            res,
        )
        saving = -lever.saving_usd_per_month if res.meets else math.nan
        note = (
            f"GQA already saves {_usd(saving)} a month against full multi-head attention"
            if res.meets
            else f"without GQA no deployment meets the targets ({res.shortfall})"
        )
        out.append(Lever(lever.name, lever.change, res, math.nan, note))
    elif m.attention_kind == "MHA":
        gqa = m.model_copy(update={"num_kv_heads": max(1, m.num_attention_heads // 8), "name": f"{m.name} with GQA-8"})
        res = evaluate(o, w, catalog, x, model=gqa)
        out.append(
            _lever(
                "GQA model",
                f"{m.name} (MHA) -> a hypothetical GQA variant with {gqa.num_kv_heads} KV heads; "
                "name a real one in levers.gqa_model",
                base,
                res,
            )
        )
    else:
        out.append(
            Lever(
                "GQA model",
                f"{m.name} uses {m.attention_kind}",
                None,
                math.nan,
                "not applicable: its KV cache is already compressed",
            )
        )

    kv_now = base.kv_precision
    kv_new = catalog.precision(lv.kv_precision).name
    if kv_new == kv_now:
        out.append(
            Lever(
                "KV-cache quantization",
                f"KV cache already {kv_now}",
                None,
                math.nan,
                "not evaluated: set levers.kv_precision to another format",
            )
        )
    else:
        res = evaluate(o.model_copy(update={"kv_precision": kv_new}), w, catalog, x, model=base.model)
        out.append(_lever("KV-cache quantization", f"KV cache {kv_now} -> {kv_new}", base, res))
    return tuple(out)


# -- the whole review -----------------------------------------------------------------------------------


def _usd(x: float) -> str:
    return "n/a" if not math.isfinite(x) else f"${x:,.0f}"


def _ms(s: float) -> str:
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def _reason(scenario: Scenario, rec: Result, ranked: list[Result]) -> str:
    w = scenario.workload
    f, r = rec.fleet, rec.replica
    load = (
        f"{rec.peak_rate_per_s:,.1f} requests/s"
        if w.by_rate
        else f"{w.peak_concurrent_requests * w.growth_factor:,.0f} concurrent requests"
    )
    growth = (
        f" (today's peak +{w.growth_over_horizon:.0%} growth over {w.horizon_months} months)"
        if w.growth_over_horizon
        else ""
    )
    spare = f", including {rec.option.spare_replicas} spare" if rec.option.spare_replicas else ""
    text = (
        f"{rec.option.name} is the cheapest option that meets the targets (TTFT at most {_ms(w.ttft_target_s)}, "
        f"TPOT at most {_ms(w.tpot_target_s)}) at the planned peak of {load}{growth}: "
        f"{int(f.gpus)} {rec.gpu.name} GPUs as {int(f.replicas)} replicas of {int(r.gpus)}{spare}, "
        f"{int(r.batch)} requests per replica, for {_usd(float(f.monthly_usd))} a month."
    )
    others = [x for x in ranked if x.meets and x is not rec]
    if others:
        nxt = others[0]
        text += f" The next option, {nxt.option.name}, costs {_usd(nxt.monthly_usd - rec.monthly_usd)} a month more."
    failing = [x for x in ranked if not x.meets]
    if failing:
        text += f" {len(failing)} option{'s' if len(failing) > 1 else ''} cannot meet the targets."
    text += (
        f" At average load it is {float(f.utilization_average):.0%} utilized; with traffic "
        f"{scenario.traffic_change:.0%} higher it needs {int(rec.high.gpus)} GPUs ({_usd(float(rec.high.monthly_usd))} a month)"
    )
    meeting = [x for x in ranked if x.meets]
    lo_best = min(meeting, key=lambda x: (float(x.low.monthly_usd), x.option.name))
    hi_best = min(meeting, key=lambda x: (float(x.high.monthly_usd), x.option.name))
    if lo_best is rec and hi_best is rec:
        text += f", and it stays the cheapest at -{scenario.traffic_change:.0%} and +{scenario.traffic_change:.0%}."
    else:
        flips = [
            f"{name} traffic {best.option.name} is cheaper"
            for name, best in (
                (f"at -{scenario.traffic_change:.0%}", lo_best),
                (f"at +{scenario.traffic_change:.0%}", hi_best),
            )
            if best is not rec
        ]
        text += "; but " + " and ".join(flips) + "."
    return text


def _impossible(scenario: Scenario, results: list[Result], source: str) -> TargetNotMetError:
    w = scenario.workload
    fitting = [(c, r) for r in results for c in r.candidates if c.fits]
    if not fitting:
        return TargetNotMetError(
            f"{source}: option: no option fits its model in GPU memory with a "
            f"{w.sizing_context_tokens:,}-token sequence; use more or larger GPUs, a shorter "
            "context or lower precisions"
        )
    tp_c, tp_r = min(fitting, key=lambda cr: cr[0].tpot_batch1_s)
    tt_c, tt_r = min(fitting, key=lambda cr: cr[0].ttft_high_s)
    if tp_c.tpot_batch1_s > w.tpot_target_s:
        return TargetNotMetError(
            f"{source}: workload.tpot_target_s: no option meets {w.tpot_target_s * 1e3:g} ms; the best any option reaches "
            f"is {tp_c.tpot_batch1_s * 1e3:.1f} ms ({tp_r.option.name}, {tp_c.gpus_per_replica} GPUs per replica, batch 1)"
        )
    if tt_c.ttft_high_s > w.ttft_target_s:
        return TargetNotMetError(
            f"{source}: workload.ttft_target_s: no option meets {w.ttft_target_s:g} s; the best any option reaches is "
            f"{tt_c.ttft_high_s:.3g} s ({tt_r.option.name}, {tt_c.gpus_per_replica} GPUs per replica, "
            f"{w.prompt_tokens_high:,}-token prompt)"
        )
    return TargetNotMetError(
        f"{source}: workload: no option meets the TTFT and TPOT targets with one group size; "
        + "; ".join(f"{r.option.name}: {r.shortfall}" for r in results)
    )


def build_review(
    scenario: Scenario,
    catalog: Catalog,
    *,
    source: str = "scenario",
    date: str,
    progress: Callable[[str], None] | None = None,
    workload_source: str = "scenario file [workload]",
) -> Review:
    """Size every option, rank them, apply the levers to the baseline. Raises TargetNotMetError when none meets."""
    check_names(scenario, catalog, source)
    results = []
    for o in scenario.option:
        results.append(evaluate(o, scenario.workload, catalog, scenario.traffic_change))
        if progress:
            progress(o.name)
    if not any(r.meets for r in results):
        raise _impossible(scenario, results, source)
    order = {r.option.name: i for i, r in enumerate(results)}
    ranked = sorted(results, key=lambda r: (not r.meets, r.monthly_usd if r.meets else 0.0, order[r.option.name]))
    rec = ranked[0]
    base = rec if scenario.baseline is None else next(r for r in results if r.option.name == scenario.baseline)
    if not base.meets:
        raise TargetNotMetError(
            f"{source}: baseline: option {base.option.name!r} does not meet the targets "
            f"({base.shortfall}); name an option that does, or leave baseline out"
        )
    lv = levers(scenario, base, catalog)
    if progress:
        progress("levers")
    warnings = tuple(dict.fromkeys(w for r in results for w in r.warnings))
    return Review(
        scenario,
        source,
        date,
        __version__,
        tuple(ranked),
        rec,
        base,
        lv,
        SWEEP,
        _reason(scenario, rec, ranked),
        assumptions(scenario, results, catalog, date, workload_source),
        warnings,
    )


# -- assumptions ----------------------------------------------------------------------------------------


def assumptions(
    scenario: Scenario,
    results: list[Result],
    catalog: Catalog,
    date: str,
    workload_source: str = "scenario file [workload]",
) -> tuple[tuple[str, str, str, str], ...]:
    """(what, value, unit, source) for every number the review used: catalog facts with their sources, then rules."""
    rows: list[tuple[str, str, str, str]] = []
    w = scenario.workload
    rows.append(("Planner version", __version__, "", "planner package"))
    rows.append(("Review date", date, "", "--date, SOURCE_DATE_EPOCH or today"))
    rows.append(("Scenario", scenario.title, "", "scenario file"))
    unit = "requests/s" if w.by_rate else "concurrent requests"
    labels = [
        ("Peak traffic today", w.peak_requests_per_s if w.by_rate else w.peak_concurrent_requests, unit),
        ("Average traffic today", w.average_requests_per_s if w.by_rate else w.average_concurrent_requests, unit),
        ("Prompt length, mean", w.prompt_tokens_mean, "tokens"),
        (f"Prompt length, p{w.high_percentile:g}", w.prompt_tokens_high, "tokens"),
        ("Output length, mean", w.output_tokens_mean, "tokens"),
        (f"Output length, p{w.high_percentile:g}", w.output_tokens_high, "tokens"),
        (f"TTFT target (p{w.high_percentile:g} prompt)", w.ttft_target_s, "s"),
        ("TPOT target", w.tpot_target_s * 1e3, "ms"),
        (f"Traffic growth over {w.horizon_months} months", f"{w.growth_over_horizon:.0%}", ""),
    ]
    for what, value, u in labels:
        rows.append((what, value if isinstance(value, str) else f"{value:,.10g}", u, workload_source))
    rows.append(
        ("Sensitivity: traffic change", f"+/-{scenario.traffic_change:.0%}", "", "scenario file (traffic_change)")
    )
    seen: set[str] = set()
    for r in results:
        g = r.gpu
        if g.name not in seen:
            seen.add(g.name)
            rows += [
                (f"{g.name}: memory", f"{g.memory_bytes / 2**30:g}", "GiB", g.source),
                (f"{g.name}: HBM bandwidth", f"{g.hbm_bandwidth_bytes_per_s / 1e12:g}", "TB/s", g.source),
                (
                    f"{g.name}: dense peak (bf16/fp16)",
                    f"{api.gpu_peak_flop_per_s(g, catalog.precision('bf16')) / 1e12:g}",
                    "TFLOP/s",
                    g.source,
                ),
                (
                    f"{g.name}: GPU-to-GPU bandwidth",
                    f"{(g.interconnect_bytes_per_s or 32e9) / 1e9:g}",
                    "GB/s one way",
                    g.source if g.interconnect_bytes_per_s else "PCIe Gen4 x16 assumed (not in catalog)",
                ),
                (f"{g.name}: board power (TDP)", f"{g.tdp_w:g}", "W", g.source),
            ]
            if g.engine_visible_memory_bytes:
                rows.append(
                    (
                        f"{g.name}: memory the engine sees",
                        f"{g.engine_visible_memory_bytes / 2**30:.2f}",
                        "GiB",
                        g.engine_visible_memory_source,
                    )
                )
    for r in results:
        o, money = r.option, r.money
        if money.pricing == "purchase":
            rows += [
                (f"{o.name}: purchase price per GPU", f"{money.purchase_usd:,.0f}", "US$", money.price_source),
                (
                    f"{o.name}: amortization",
                    f"{o.amortization_months}",
                    "months",
                    "scenario file / default 36 (straight line, no residual)",
                ),
                (f"{o.name}: electricity", f"{o.power_usd_per_kwh:g}", "US$/kWh", "scenario file / default 0.12"),
                (f"{o.name}: PUE", f"{o.pue:g}", "", "scenario file / default 1.3"),
                (f"{o.name}: bought in nodes of", f"{o.nodes_of}", "GPUs", "scenario file / default 8 when bought"),
            ]
        else:
            rows += [
                (f"{o.name}: cloud price per GPU-hour", f"{money.cloud_usd_per_gpu_hour:g}", "US$", money.price_source),
                (f"{o.name}: rented in nodes of", f"{o.nodes_of}", "GPUs", "scenario file / default 1 when rented"),
            ]
        rows += [
            (f"{o.name}: spare replicas", f"{o.spare_replicas}", "", "scenario file / default 1 (N+1)"),
            (
                f"{o.name}: weights / KV cache / engine",
                f"{r.weight_precision} / {r.kv_precision} / {r.engine.name}",
                "",
                "scenario file / defaults: as published, activation dtype, vllm",
            ),
        ]
    seen.clear()
    for r in results:
        m = r.model
        if m.name in seen:
            continue
        seen.add(m.name)
        rows += [
            (f"{m.name}: parameters", f"{m.published_params_total / 1e9:.1f}", "billion", m.published_params_source),
            (
                f"{m.name}: attention",
                f"{m.attention_kind}, {m.num_layers} layers, {m.num_kv_heads} KV heads",
                "",
                m.source,
            ),
            (f"{m.name}: trained context", f"{m.max_context:,}", "tokens", m.source),
        ]
    seen.clear()
    for r in results:
        e = r.engine
        if e.name in seen:
            continue
        seen.add(e.name)
        src = f"planner.engines profile '{e.name}' (fitted to public measurements; see docs/accuracy.md)"
        rows += [
            (f"engine {e.name}: memory utilization", f"{e.memory_utilization:g}", "", src),
            (f"engine {e.name}: achieved bandwidth", f"{e.bandwidth_efficiency:.0%}", "of peak", src),
            (f"engine {e.name}: achieved FLOP/s (prefill)", f"{e.prefill_flop_efficiency:.0%}", "of peak", src),
            (f"engine {e.name}: per-step overhead", f"{e.step_overhead_s * 1e3:.1f}", "ms", src),
        ]
    for gpu in dict.fromkeys(r.gpu.name for r in results):
        low, high, note = residual_range(gpu, catalog=catalog)
        source = f"10th / 90th percentile of measured / predicted - 1: {note} (docs/accuracy.md)"
        rows.append((f"{gpu}: uncertainty of TPOT and TTFT", f"{low:+.0%} / {high:+.0%}", "of the prediction", source))
    rules = "planner.sizing (docs/export.md)"
    rows += [
        ("Hours per month", f"{sizing.HOURS_PER_MONTH:g}", "h", "8,760 h / 12"),
        (
            "Batch per replica",
            "the one (its KV cache fits) that lets a replica take the most requests per second",
            "",
            rules,
        ),
        (
            "Prompts and decode share a replica",
            "taking x requests/s, a replica spends x x TTFT of each second on prompts: TPOT / (1 - x x TTFT) "
            "must meet the target",
            "",
            "continuous batching; " + rules,
        ),
        (
            "Sequence length for memory and TPOT",
            f"{w.sizing_context_tokens:,}",
            "tokens",
            f"p{w.high_percentile:g} prompt + p{w.high_percentile:g} output",
        ),
        (
            "Requests in flight",
            "rate x (TTFT of a mean prompt + mean output tokens x TPOT at that load)",
            "",
            "Little's law; " + rules,
        ),
        ("Replicas", "ceil(peak rate / requests per second a replica takes) + spare replicas", "", rules),
        ("Owned GPU per month", "purchase / amortization months + TDP x PUE x $/kWh x 730 h", "", rules),
        ("Rented GPU per month", "$/GPU-hour x 730 h", "", rules),
        (
            "Cost per million tokens",
            "monthly cost split by prefill/decode time share, / tokens at average load",
            "",
            rules,
        ),
        ("Not included", "networking, storage, staff, software licences, CPU hosts' own power, discounts", "", ""),
    ]
    shown = []
    for i, (what, value, unit, src) in enumerate(rows):  # a long source repeated on the next row: say so once
        same = i > 0 and src and src == rows[i - 1][3] and len(src) > 40
        shown.append((what, value, unit, "(same source as above)" if same else src))
    return tuple(shown)
