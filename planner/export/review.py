"""The budget review: every option sized and costed (``planner.export.evaluate``), each at the slow end of the held-out
ranges under load (``planner.export.slow_end``: shown, not applied), the recommendation, the levers (five for a MoE baseline), the
sensitivity. The writers only lay out a ``Review`` (``planner.export.records``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace as dc_replace

from planner import __version__, api
from planner.accuracy.loaded_ranges import load_loaded_ranges
from planner.catalog import Catalog
from planner.engines.profiles import IDEAL
from planner.errors import DoesNotFitError, PlannerError
from planner.export.assumptions import assumptions, grid_prices, reused_host_warning
from planner.export.evaluate import (
    SWEEP,
    _kept_on_ties,
    chart_multipliers,
    charted_fleets,
    engine_limit_fleet,
    evaluate,
    sized_again,
    sized_levels,
)
from planner.export.levers import levers, prefix_memory_note
from planner.export.mix import size_mixes, unmet_warnings
from planner.export.not_sized import MARGIN_NOT_SIZED, NOT_SIZED, not_sized
from planner.export.outlook import bare_fleet, build_outlook, without_margin
from planner.export.own_runs import own_runs_fleet
from planner.export.reason import reason
from planner.export.records import Candidate, LayoutSized, Lever, Result, Review
from planner.export.scenario import Option, Scenario, check_names
from planner.export.shortfall import pessimistic
from planner.export.slow_end import cost_tied, met_at_slow_end, with_group_meeting_slow_end, with_slow_end
from planner.units import counted

__all__ = ["Candidate", "Lever", "Result", "Review", "SWEEP", "TargetNotMetError", "build_review", "evaluate"]


class TargetNotMetError(PlannerError):
    """Raised when no option meets the scenario's latency targets; says the best any option reaches. Exit 2, as
    README's "Exit codes" puts targets no number of replicas meets (trial 31 F8); where no option holds its model in
    GPU memory, exit 1, as weights that do not fit (``_impossible``)."""

    exit_code = 2


# -- the whole review -----------------------------------------------------------------------------------


def with_sized_again(result: Result, scenario: Scenario, catalog: Catalog) -> Result:
    """The option with its sensitivity (planned peak x (1 - traffic_change) and x (1 + traffic_change)) and its stress
    case (x stress_multiplier) sized afresh by the plan's own code (``evaluate.sized_again``: every group tried, the
    replicas searched again), not scaled from the planned fleet: ``low`` and ``high`` are those fleets, ``again`` the
    sized options (the demand cases read it). Where a fresh sizing meets no target (it cannot where the plan does:
    the replica's checks do not depend on the traffic), the scaled fleet stays, with a warning saying so."""
    if not result.meets:
        return result
    x = scenario.traffic_change
    again = []
    warnings = list(result.warnings)
    for mult in dict.fromkeys(sized_levels(scenario)):
        r = sized_again(result, scenario.workload, catalog, mult, x, scenario.finance)
        if not r.meets:
            warnings.append(
                f"{result.option.name}: at {mult:g} x the planned peak no fleet was sized afresh ({r.shortfall}); "
                "the figures there are the planned fleet scaled"
            )
            continue
        if r.under_load_refused and not result.under_load_refused:
            warnings.append(f"{result.option.name}: at {mult:g} x the planned peak, sized by Little's law; under load "
                            f"{r.under_load_refused}")  # fmt: skip
        again.append((mult, r))
    found = dict(again)
    out = dc_replace(
        result,
        low=found[1 - x].fleet if 1 - x in found else result.low,
        high=found[1 + x].fleet if 1 + x in found else result.high,
        again=tuple(again),
        warnings=tuple(warnings),
    )
    levels = sized_levels(scenario)
    return dc_replace(out, sweep=charted_fleets(out, scenario.workload, chart_multipliers(levels), levels))


def sized(option: Option, scenario: Scenario, catalog: Catalog) -> tuple[Result, Result | None]:
    """The option sized with its latency margin and judged (``not_sized``: a fleet the margin's cliff sets, trial 22,
    F1), and its fleet sized with no margin (``outlook.without_margin``'s: None where that meets no target), each
    sized once. Where the fleet with the margin is searched under load, the bare fleet is sized first (then only: an
    option that meets no target by the closed form is not) and the search stops at ``MARGIN_NOT_SIZED`` times it
    (``evaluate``'s ``most_gpus``), where the option is not sized whatever the exact figure (trial 22, F4: the 2,880
    and 4,768 GPUs of two such options were searched for, then set aside)."""
    w = scenario.workload
    bare: list[Result | None] = []

    def bound() -> float:
        bare.append(bare_fleet(scenario, option, catalog))
        return MARGIN_NOT_SIZED * bare[0].gpus if bare[0] is not None and bare[0].gpus else math.inf

    result = evaluate(
        option,
        w,
        catalog,
        scenario.traffic_change,
        load_curves=True,
        finance=scenario.finance,
        most_gpus=bound if w.latency_margin != 0 else None,
    )
    if result.meets and result.margin == 0:  # no margin on the kept group: the fleet as predicted is this one
        fleet = result
    elif bare:
        fleet = bare[0]
    else:  # not searched under load (sized by Little's law), or meets no target
        fleet = without_margin(scenario, result, catalog) if result.meets else None
    return not_sized(result, scenario, catalog, fleet), fleet


def size_option_alone(option: Option, scenario: Scenario, catalog: Catalog) -> Result:
    """``option`` sized as the review sizes each option (``sized_in_layouts``, then ``with_sized_again``): what a mixed
    fleet's part is (``planner.export.mix``)."""
    result, _ = sized_in_layouts(option, scenario, catalog)
    return with_sized_again(result, scenario, catalog)


def sized_in_layouts(option: Option, scenario: Scenario, catalog: Catalog) -> tuple[Result, Result | None]:
    """``sized`` in each layout the review sizes the option in (``planner.api.layouts_to_size``: the option's own
    ``parallelism``, alone, where it sets one; else tensor parallelism and, for a MoE model the engine runs so,
    data-parallel attention with the experts spread), keeping the cheapest that meets the targets
    (``planner.api.layout_kept``, the rule ``plan --rate`` sizes its other layout by: the same question, one answer;
    trial 24, F15: Qwen3-235B-A22B fp8 on H200 at 40 requests/s was 32 GPUs tensor-parallel in the review while
    ``plan`` showed 20 in dp-ep). The kept result's option names its layout; its ``layouts`` hold every layout sized.
    A layout the engine or model refuses is noted, not sized; where every one is refused, the first refusal is
    raised, as for an option of one layout."""
    model = catalog.model(option.model) if option.model else None
    layouts = api.layouts_to_size(model, option.engine, option.parallelism) if model is not None else ("tp",)
    if len(layouts) == 1:
        return sized(option, scenario, catalog)
    tried: dict[str, tuple[Result, Result | None]] = {}
    refused: dict[str, PlannerError] = {}
    for layout in layouts:
        try:
            tried[layout] = sized(option.model_copy(update={"parallelism": layout}), scenario, catalog)
        except PlannerError as exc:  # the engine or model runs no such layout (SGLang: experts uneven over the group)
            refused[layout] = exc
    if not tried:
        raise refused[layouts[0]]
    costs = {p: tried[p][0].monthly_usd if p in tried and tried[p][0].meets else math.nan for p in layouts}
    kept = api.layout_kept(costs)
    kept = kept if kept in tried else next(iter(tried))
    each = tuple(LayoutSized(p, tried[p][0]) if p in tried else LayoutSized(p, None, str(refused[p])) for p in layouts)
    result, bare = tried[kept]
    return dc_replace(result, layouts=each), bare


def _impossible(scenario: Scenario, results: list[Result], source: str) -> TargetNotMetError:
    w = scenario.workload
    unsized = [r for r in results if r.shortfall.startswith(NOT_SIZED)]
    if unsized:
        return TargetNotMetError(
            f"{source}: option: no option is sized; " + "; ".join(f"{r.option.name}: {r.shortfall}" for r in results)
        )
    fitting = [(c, r) for r in results for c in r.candidates if c.fits]
    if not fitting:
        tried = max(r.option.gpus_per_replica or r.option.max_gpus_per_replica for r in results)
        larger = (  # the automatic choice stops at max_gpus_per_replica (8): name the way to two nodes
            f"; the largest group tried was {tried} GPUs (max_gpus_per_replica = 16 in [defaults] or an option tries "
            "two nodes)"
            if tried < 16 and not any(r.option.gpus_per_replica for r in results)
            else ""
        )
        tried_each = "; ".join(  # each option and the group it was held to: the cause, named
            f"option #{scenario.option.index(r.option) + 1 if r.option in scenario.option else i + 1} "
            f"({r.option.name}): "
            + (
                f"gpus_per_replica = {r.option.gpus_per_replica}"
                if r.option.gpus_per_replica
                else f"up to max_gpus_per_replica = {r.option.max_gpus_per_replica}"
            )
            + f" x {r.gpu.name}"
            for i, r in enumerate(results)
        )
        error = TargetNotMetError(
            f"{source}: option: no option fits its model in GPU memory with a "
            f"{w.sizing_context_tokens:,}-token sequence ({tried_each}); use more or larger GPUs, a shorter "
            f"context or lower precisions{larger}"
        )
        error.exit_code = DoesNotFitError.exit_code  # weights that do not fit: README's 1, as planner plan's
        return error
    tp_c, tp_r = min(fitting, key=lambda cr: cr[0].tpot_batch1_s * (1 + cr[0].margin))
    tt_c, tt_r = min(fitting, key=lambda cr: cr[0].ttft_high_s * (1 + cr[0].margin))
    if tp_c.tpot_batch1_s * (1 + tp_c.margin) > w.tpot_target_s:
        return TargetNotMetError(
            f"{source}: workload.tpot_target_s: no option meets {w.tpot_target_s * 1e3:g} ms; the best any option "
            f"reaches is {pessimistic(tp_c.tpot_batch1_s, tp_c.margin, 'ms')} ({tp_r.option.name}, "
            f"{counted(tp_c.gpus_per_replica, 'GPU', ',.0f')} per replica, batch 1); workload.latency_margin sets the margin"
        )
    if tt_c.ttft_high_s * (1 + tt_c.margin) > w.ttft_target_s:
        return TargetNotMetError(
            f"{source}: workload.ttft_target_s: no option meets {w.ttft_target_s:g} s; the best any option reaches is "
            f"{pessimistic(tt_c.ttft_high_s, tt_c.margin, 's')} ({tt_r.option.name}, "
            f"{counted(tt_c.gpus_per_replica, 'GPU', ',.0f')} per replica, {w.prompt_tokens_high:,}-token prompt); workload.latency_margin sets the margin"
        )
    return TargetNotMetError(
        f"{source}: workload: no option meets the TTFT and TPOT targets with one group size; "
        + "; ".join(f"{r.option.name}: {r.shortfall}" for r in results)
    )


def baseline_misses_text(base: Result) -> str:
    """What the levers are where the scenario's ``baseline`` names an option that does not meet the targets (trial 31
    F8: the review had stopped there, exit 1, no file written, though the levers are most wanted exactly then): each
    is still that option with one thing changed, sized as the review sizes it, and says whether the change makes it
    meet the targets and the fleet it then takes; no saving is booked, the baseline having no fleet to set it
    against."""
    return (
        f"the baseline ({base.option.name}) does not meet the targets ({base.shortfall}): each lever is that option "
        "with one change, and says whether it then meets them and at what fleet; no saving is booked, the baseline "
        "having no fleet"
    )


#: The recommended fleet's average load (Load vs sized capacity (average)) below which the review warns that most of
#: its cost per token pays for idle GPUs (trial 34 F3: 2% at a peak of 30 and an average of 0.76 requests/s, 39x).
#: Web traffic usually peaks at 2-4x its average; with the latency margin, spare replicas and whole nodes on top,
#: such a fleet runs at some 15-40% on average (the README example: 40 / 16 requests/s). Under 10% takes a peak
#: some 10x the average or more: an average typed as conversations, not requests, or per hour of the day rather
#: than the month, or a fleet a scale-down off-peak (not modelled: billed 730 h a month) would serve for less. A
#: warning, not a figure: nothing sized or priced moves.
IDLE_LOAD = 0.10


def idle_fleet_warning(scenario: Scenario, rec: Result) -> str:
    """Where the recommended fleet's average load is under ``IDLE_LOAD`` of its sized capacity, a warning saying the
    fleet is sized for the peak and billed all month, so most of its $ per M tokens is idle GPUs, and what to check
    (the average is requests, not conversations); "" otherwise."""
    from planner.export.glossary import LOAD_LABEL

    if not rec.meets or rec.fleet is None:
        return ""
    load = float(rec.fleet.utilization_average)
    if not math.isfinite(load) or load >= IDLE_LOAD:
        return ""
    w = scenario.workload
    given = "average_requests_per_s" if w.by_rate else "average_concurrent_requests"
    peak, average = (
        (w.peak_requests_per_s, w.average_requests_per_s)
        if w.by_rate
        else (w.peak_concurrent_requests, w.average_concurrent_requests)
    )
    return (
        f"Workload: the recommended fleet ({rec.option.name}) is sized for the peak and billed all month, and at the "
        f"average traffic it is {load:.0%} loaded ({LOAD_LABEL}, under {IDLE_LOAD:.0%}; the peak is "
        f"{peak / average:,.3g} x the average): most of its cost per token pays for idle GPUs. Check {given}: "
        "requests (each chat turn is one), not conversations, averaged over the whole month (web traffic usually "
        "peaks at 2-4x its average); if it is right, the fleet's cost per month stands, and a fleet scaled down "
        "off-peak (not modelled here) would cost less"
    )


def recommended_first(ranked: list[Result]) -> list[Result]:
    """``ranked`` (meeting first, a real engine before the ideal one, then cost, then scenario order) with the option
    to recommend first: among the options tied on cost with the first (``slow_end.cost_tied``: the same monthly cost
    and GPUs, as ``evaluate._kept_on_ties`` ties groups), the first in scenario order whose fleet meets the targets at
    the held-out slow end (``slow_end.met_at_slow_end``), by ``_kept_on_ties`` itself, the rule a tie between groups
    of one option goes by (trial 27 F3); where none or all of them meet there, the first in scenario order. The rest
    keep their order. Trial 27's b200tp.toml: "B200 TP2" and "B200 TP4" as two options, 24 GPUs and $46,704 a month
    each; TP2, listed first, was recommended though no fleet of it meets the targets at the slow end, while 48 GPUs
    of TP4 do (56 before s208's truncated draws)."""
    first = ranked[0]
    if not first.meets:
        return ranked
    ideal = first.engine.name == IDEAL.name  # the ideal engine's options rank apart: a tie is within one kind
    tied = [
        ((float(r.monthly_usd), float(r.gpus), False, i), r)  # _cost_then_headroom's places: cost, GPUs, slow end
        for i, r in enumerate(ranked)
        if r.meets and (r.engine.name == IDEAL.name) == ideal and cost_tied(r, first)
    ]
    _, kept = _kept_on_ties(tied, met_at_slow_end)
    return [kept, *(r for r in ranked if r is not kept)]


def build_review(
    scenario: Scenario,
    catalog: Catalog,
    *,
    source: str = "scenario",
    date: str,
    progress: Callable[[str], None] | None = None,
    workload_source: str = "scenario file [workload]",
) -> Review:
    """Size every option, rank them, apply the levers to the baseline (one that misses the targets too:
    ``Review.baseline_misses`` says what that means). Raises TargetNotMetError when no option meets them.
    ``progress``: told of each long step before it runs, in a few words ("sizing option 2/5: H100, rented"; each
    option, the levers, the outlook, each mix): ``planner export`` prints them on a terminal."""
    check_names(scenario, catalog, source)
    results = []
    ranges = load_loaded_ranges()  # the held-out ranges under load: the sensitivity at their slow end (none: absent)
    bares: dict[str, Result | None] = {}  # each option sized with no margin, once: not_sized's and the outlook's
    for i, o in enumerate(scenario.option, 1):
        if progress:  # before the step: an option's sizing under load may take minutes (trial 32 F1)
            progress(f"sizing option {i}/{len(scenario.option)}: {o.name}")
        result, bares[o.name] = sized_in_layouts(o, scenario, catalog)
        # the fleet at the engine's own max_num_seqs, where the review's batch cap sets it (trial 29 F16)
        result = dc_replace(result, engine_limit=engine_limit_fleet(result, bares[o.name], scenario.workload, catalog))
        result = with_slow_end(result, scenario.workload, catalog, ranges)
        result = with_group_meeting_slow_end(result, scenario, catalog, ranges)  # trial 27 F3
        result = with_sized_again(result, scenario, catalog)
        results.append(result)
    if not any(r.meets for r in results):
        raise _impossible(scenario, results, source)
    order = {r.option.name: i for i, r in enumerate(results)}
    # an option of the "ideal" engine (a bound: every byte and FLOP usable) ranks after those a real engine runs
    ranked = sorted(
        results,
        key=lambda r: (
            not r.meets,
            r.engine.name == IDEAL.name,
            r.monthly_usd if r.meets else 0.0,
            order[r.option.name],
        ),
    )
    ranked = recommended_first(ranked)  # a tie in cost: the option met at the slow end (trial 27 F3)
    # the fleet the recommended deployment's own published runs call for, where most exceed its margin (trial 26 F18)
    if (own := own_runs_fleet(ranked[0], scenario, catalog)) is not None:
        ranked[0] = dc_replace(ranked[0], own_runs=own)
        results = [ranked[0] if r.option.name == ranked[0].option.name else r for r in results]
    rec = ranked[0]
    base = rec if scenario.baseline is None else next(r for r in results if r.option.name == scenario.baseline)
    if progress:
        progress(f"levers on the baseline ({base.option.name})")
    lv = levers(scenario, base, catalog)  # from a named baseline that misses the targets too (trial 31 F8)
    misses = "" if base.meets else baseline_misses_text(base)
    tail = scenario.workload.spread_fit_note  # the lengths' fit, said once for every option (trial 27 F12)
    warnings = ((f"Workload: {tail}",) if tail else ()) + tuple(dict.fromkeys(w for r in results for w in r.warnings))
    if (share := scenario.workload.prefix_hit_rate) > 0:  # what the share does not buy, said once (trial 29 F9)
        warnings += (f"Workload: {prefix_memory_note(share)}",)
    if host := reused_host_warning(results):  # the Assumptions' "host figures" rows, where the committee reads (F7)
        warnings += (host,)
    if idle := idle_fleet_warning(scenario, rec):  # a fleet mostly idle at the average (trial 34 F3)
        warnings += (idle,)
    if progress:
        progress("like for like, ownership and demand cases")
    outlook = build_outlook(scenario, tuple(ranked), catalog, bares)
    mixes = size_mixes(
        scenario, catalog, size_option_alone, progress
    )  # budget lines beside the ranking, which they leave alone
    warnings += unmet_warnings(mixes)
    return Review(
        scenario,
        source,
        date,
        __version__,
        tuple(ranked),
        rec,
        base,
        lv,
        chart_multipliers(sized_levels(scenario)),
        reason(scenario, rec, ranked),
        assumptions(scenario, results, catalog, date, workload_source) + grid_prices(results, outlook.grid),
        warnings,
        outlook,
        mixes,
        misses,
    )
