"""The fleet at the slow end of the held-out ranges under load: the review's held-out range in GPUs and dollars (a
sensitivity, shown, not applied; issues 21 and 22).

The review sizes each option's replicas on the serving simulation's high-percentile TTFT and TPOT at the planned peak
and shows beside each simulated figure its held-out range (``planner.export.held_out``: the figure x measured /
simulated at the 10th and 90th percentile over published runs under load from sources planner never saw). This module
answers the finance reader's question about that range: how many GPUs, and dollars a month, the option would take if
real latency sat at the range's slow end.

**Rule** (``slow_end``): the fewest replicas of the option's kept group and batch whose simulated p95 TTFT x (1 +
high TTFT) and p95 TPOT x (1 + high TPOT) meet the scenario's targets, i.e. whose simulated figures meet target /
(1 + high): the review's one replica search (``evaluate.fleet_on_goals``, so ``planner.serving.fleet.fewest_replicas``)
with those goals, then spares, whole nodes and the option's price as the plan's own fleet. ``high`` is the slow end of
the range ``held_out.range_for`` gives for the figure (p99's for a p95 figure).

**Which end** (``slow_end_ratio``): the range's high end, except where one source alone sets it (``LoadedRange.
one_source_ends``: leaving that source out moves the end by more than ``ONE_SOURCE_FACTOR`` = 2x); then the end
without that source (``high_one_out``). In the shipped table (s190) that is p99 TTFT: 15.3x with
sglang-pr-4918-deepseek-v3-h200 (DeepSeek-V3 on SGLang, one of nine sources), 7.07x without it; p99 TPOT's end
(1.56x) is not one source's (1.37x without sgl-cookbook, under 2x), so it stands. Why: at 15.3x the README's review
meets a 1.5 s TTFT not at all (an idle replica's simulated p95 TTFT, 0.114 s, x 15.3 is 1.74 s; at
15.4x in s168-s185, 4,090 replicas of H100 x 4 met; at the 27.4x before s168 none did), so the full end says how
little load a replica may carry, not what the range costs; the end that survives leaving any one source out is the
slow end the other sources agree on. The full end is not hidden: the workbook shows it beside each
figure and in its note, and ``slow_end_full_range`` states the fleet (or that none meets) at it.

**Targets, not the margin's goals**: the held-out range states how far real latency lies from the simulated figure,
which is what the plan's margin (``latency_margin``) stands for; applying both would count one uncertainty twice.

**Never faster than the plan, nor than the deployment's own runs** (``floored_ratio``; trial 27, F4: the pooled TPOT
end, x1.58, put MI300X + DeepSeek-R1 at 48 GPUs, -$156,625 a month, against a 200-GPU plan sized on a +246% margin,
while nine published runs of that very deployment measured TPOT 1.6x-4.0x the prediction). Each metric's ratio is
the largest of: 1 + the held-out range's slow end (above); the plan's own, target / the plan's goal (1 + its
margin: the plan already assumes latency that far above the simulated figure, so a "slow end" below it is a
contradiction, not a sensitivity); and, where the option's deployment has at least ``own_runs.OWN_RUNS_LEAST``
shipped published figures of that metric (``own_runs.ratios``: same GPU, model, engine, layout, group and
precisions), their median published / predicted. The median, as ``own_runs`` budgets at, not the slowest: with 3 to
16 figures the slowest is one run's, and the shipped runs include bursts and concurrencies the plan does not run
(H200 + DeepSeek-R1 + vLLM: DSTK-033, 128 requests in flight for 6,400 output tokens, TTFT 31x the prediction). Where
both ratios are the plan's, the slow end is the plan's fleet (no search); else the search's fleet, and never fewer
GPUs than the plan's (the floor, against the simulation's noise). ``SlowEnd.ttft_basis`` / ``tpot_basis`` say which
set each ratio, and the Options note column says it (``basis_text``).

**Not met** (``NOT_MET``): where no replica count up to the search's limit (``planner.serving.fleet.MAX_REPLICAS``, 262,144) meets
the slow end, or only replicas kept nearly idle do (``planner.serving.fleet.near_ttft_floor``: their median TTFT over
75% of the goal; at 15.3x the README's review found 8,696 replicas of H100 x 4, $47.9 million a month, met by
simulation noise at that floor), the option gives no GPUs or cost, only why.

**Shown, not applied**: nothing here changes the plan's fleet, margin or cost. Without the ranges' table
(``catalogs/reference/loaded_residuals.csv``) or for an option not sized on simulated percentiles: no sensitivity.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import replace

from planner.accuracy.loaded_ranges import LoadedRange
from planner.catalog import Catalog
from planner.errors import PlannerError
from planner.export import held_out
from planner.export.evaluate import evaluate, fleet_on_goals
from planner.export.held_out import slow_end_ratio  # the module's "Which end", stated there
from planner.export.records import Result, Review, SlowEnd
from planner.export.scenario import Scenario, Workload
from planner.serving.fleet import near_ttft_floor, replica_burstiness
from planner.units import counted

#: What an option that no fleet meets at the slow end says, instead of a replica count.
NOT_MET = "not met at the slow end: latency range wider than the target allows"


#: What set a slow end's ratio (``SlowEnd.ttft_basis``, ``tpot_basis``), in the order a tie keeps.
HELD_OUT, PLAN_MARGIN, OWN_RUNS = "held-out range", "plan's margin", "own runs"


def floored_ratio(range_ratio: float, plan_ratio: float, own_figures: list[float]) -> tuple[float, str]:
    """(the slow end's ratio for one metric, what set it): the largest of 1 + the held-out range's slow end
    (``range_ratio``), the plan's target / goal (``plan_ratio``, 1 + its margin) and the median of the deployment's
    own published / predicted figures where there are ``own_runs.OWN_RUNS_LEAST`` or more (the module's rule); a tie
    keeps the first of ``HELD_OUT``, ``PLAN_MARGIN``, ``OWN_RUNS``. (1.58, 3.46, [1.6, 1.9, 4.0]) -> (3.46, "plan's
    margin")."""
    from planner.export.own_runs import OWN_RUNS_LEAST

    ratio, basis = range_ratio, HELD_OUT
    if math.isfinite(plan_ratio) and plan_ratio > ratio:
        ratio, basis = plan_ratio, PLAN_MARGIN
    if len(own_figures) >= OWN_RUNS_LEAST and (own := statistics.median(own_figures)) > ratio:
        ratio, basis = own, OWN_RUNS
    return ratio, basis


def _own_figures(result: Result) -> dict[str, list[float]]:
    """{"ttft": [...], "tpot": [...]}: the option's deployment's own published / predicted figures
    (``own_runs.ratios``)."""
    from planner.export.own_runs import ratios

    own = ratios(result)
    return {"ttft": own.get("TTFT", []), "tpot": own.get("TPOT", [])}


def slow_end(
    result: Result,
    workload: Workload,
    catalog: Catalog,
    ranges: Mapping[tuple[str, str], LoadedRange],
    without_one_source: bool = True,
    own_figures: Mapping[str, list[float]] | None = None,
) -> SlowEnd | None:
    """The option's fleet at the slow end of its figures' held-out ranges, floored at the plan's margin and at the
    median of its deployment's own published runs (the module's rule); None where the option does not meet the
    targets, was not sized on simulated percentiles, or ``ranges`` has no TTFT or TPOT range for its percentile
    (``held_out.range_for``; an install without the table). ``own_figures``: {"ttft": [...], "tpot": [...]}
    published / predicted, read from the shipped runs (``_own_figures``) unless given."""
    sim = result.under_load if result.meets else None
    if sim is None:
        return None
    q = sim.percentile
    ttft_rng, tpot_rng = (held_out.range_for(ranges, m, q) for m in ("ttft", "tpot"))
    if ttft_rng is None or tpot_rng is None:
        return None
    (ttft_range, ttft_out), (tpot_range, tpot_out) = (
        slow_end_ratio(r, without_one_source) for r in (ttft_rng, tpot_rng)
    )
    own = _own_figures(result) if own_figures is None else own_figures
    plan = {"ttft": workload.ttft_target_s / result.ttft_goal_s, "tpot": workload.tpot_target_s / result.tpot_goal_s}
    (ttft_ratio, ttft_basis), (tpot_ratio, tpot_basis) = (
        floored_ratio(rng, plan[m], list(own.get(m, []))) for m, rng in (("ttft", ttft_range), ("tpot", tpot_range))
    )
    ends = dict(percentile=q, ttft_ratio=ttft_ratio, tpot_ratio=tpot_ratio, ttft_left_out=ttft_out,
                tpot_left_out=tpot_out, ttft_basis=ttft_basis, tpot_basis=tpot_basis, ttft_range_ratio=ttft_range,
                tpot_range_ratio=tpot_range,
                ttft_own_figures=len(own.get("ttft", [])) if ttft_basis == OWN_RUNS else 0,
                tpot_own_figures=len(own.get("tpot", [])) if tpot_basis == OWN_RUNS else 0)  # fmt: skip
    plans = SlowEnd(**ends, replicas=int(result.fleet.replicas_needed), gpus=int(result.gpus),
                    monthly_usd=float(result.monthly_usd))  # fmt: skip
    if ttft_basis == tpot_basis == PLAN_MARGIN:  # the plan's own goals: its fleet, not a second search
        return plans
    goals = (workload.ttft_target_s / ttft_ratio, workload.tpot_target_s / tpot_ratio)
    try:
        sim, fleet = fleet_on_goals(result, workload, catalog, goals)
    except PlannerError:  # no replica count the search allows meets them
        return SlowEnd(**ends, replicas=0, gpus=0, monthly_usd=math.nan, shortfall=NOT_MET)
    if near_ttft_floor(sim):  # met only by replicas kept nearly idle: the range, not the traffic, sets that count
        return SlowEnd(**ends, replicas=0, gpus=0, monthly_usd=math.nan, shortfall=NOT_MET)
    if fleet.gpus < result.gpus:  # goals no looser than the plan's: at least its fleet (the search's noise aside)
        return plans
    return SlowEnd(**ends, replicas=int(fleet.replicas_needed), gpus=int(fleet.gpus),
                   monthly_usd=float(fleet.monthly_usd))  # fmt: skip


def with_slow_end(
    result: Result, workload: Workload, catalog: Catalog, ranges: Mapping[tuple[str, str], LoadedRange]
) -> Result:
    """``result`` with its ``slow_end`` (the end without a source that sets it alone) and, where that differs from
    the full range's end, its ``slow_end_full_range``; unchanged where there is none (``slow_end``)."""
    own = _own_figures(result) if result.meets and result.under_load is not None else {}
    chosen = slow_end(result, workload, catalog, ranges, own_figures=own)
    if chosen is None:
        return result
    trimmed = chosen.ttft_left_out or chosen.tpot_left_out
    full = slow_end(result, workload, catalog, ranges, False, own) if trimmed else None
    return replace(result, slow_end=chosen, slow_end_full_range=full)


def ratios_text(s: SlowEnd) -> str:
    """The ends as the figures are multiplied: "p95 TTFT x2.68, TPOT x1.27"."""
    return f"p{s.percentile:g} TTFT x{s.ttft_ratio:.3g}, TPOT x{s.tpot_ratio:.3g}"


def basis_text(s: SlowEnd) -> str:
    """Which ratios the floors set (``floored_ratio``), for the Options note column; "" where both are the held-out
    range's ends. "at least the plan: TPOT x3.46, the plan's own +246% margin (the held-out range's end: x1.58)"; "at
    least the plan and this deployment's own published runs: ..." where those set one."""
    parts = []
    for metric, ratio, basis, range_ratio, figures in (
        (f"p{s.percentile:g} TTFT", s.ttft_ratio, s.ttft_basis, s.ttft_range_ratio, s.ttft_own_figures),
        ("TPOT", s.tpot_ratio, s.tpot_basis, s.tpot_range_ratio, s.tpot_own_figures),
    ):
        end = f"the held-out range's end: x{range_ratio:.3g}"
        if basis == PLAN_MARGIN:
            parts.append(f"{metric} x{ratio:.3g}, the plan's own +{ratio - 1:.0%} margin ({end})")
        elif basis == OWN_RUNS:
            word = metric.split()[-1]
            parts.append(
                f"{metric} x{ratio:.3g}, the median of this deployment's {figures} published {word} figures / "
                f"predicted (Assumptions names the farthest off; {end})"
            )
    if not parts:
        return ""
    floors = (
        "the plan and this deployment's own published runs" if OWN_RUNS in (s.ttft_basis, s.tpot_basis) else "the plan"
    )
    return f"at least {floors}: " + "; ".join(parts)


def fleet_text(s: SlowEnd, plan: Result) -> str:
    """The fleet at the slow end against the plan's: "56 GPUs, $77,092 a month (+8 GPUs, +$11,013 against the
    plan)", or why none is given (``SlowEnd.shortfall``)."""
    if not s.meets:
        return s.shortfall
    more, extra = s.gpus - plan.gpus, s.monthly_usd - plan.monthly_usd
    money = f"+${extra:,.0f}" if extra >= 0 else f"-${-extra:,.0f}"
    return f"{counted(s.gpus, 'GPU', ',.0f')}, ${s.monthly_usd:,.0f} a month ({more:+,} GPUs, {money} against the plan)"


def note_lines(review: Review, where: str = "Options shows each option (the Held-out slow end columns)") -> list[str]:
    """The review's note on the sensitivity (Summary, Markdown): which ends, why, what the recommended option would
    take there and at the full range's end, ``where`` the other options' are, and that it is shown, not applied.
    Empty without a sensitivity."""
    rec = review.recommended
    s, full = rec.slow_end, rec.slow_end_full_range
    if s is None:
        return []
    which = []
    for metric, ratio, left_out, full_ratio, basis, range_ratio, figures in (
        ("TTFT", s.ttft_ratio, s.ttft_left_out, full.ttft_ratio if full else math.nan, s.ttft_basis,
         s.ttft_range_ratio, s.ttft_own_figures),
        ("TPOT", s.tpot_ratio, s.tpot_left_out, full.tpot_ratio if full else math.nan, s.tpot_basis,
         s.tpot_range_ratio, s.tpot_own_figures),
    ):  # fmt: skip
        if basis == PLAN_MARGIN:  # trial 27 F4: never below the plan
            which.append(
                f"p{s.percentile:g} {metric} x{ratio:.3g} (the plan's own +{ratio - 1:.0%} margin, wider than its "
                f"range's slow end, x{range_ratio:.3g})"
            )
        elif basis == OWN_RUNS:
            which.append(
                f"p{s.percentile:g} {metric} x{ratio:.3g} (the median of this deployment's {figures} published "
                f"{metric} figures / predicted, slower than its range's slow end, x{range_ratio:.3g}, and the plan)"
            )
        elif left_out:
            which.append(
                f"p{s.percentile:g} {metric} x{ratio:.3g} (its range's slow end without {left_out}, the one source "
                f"that sets the full end, x{full_ratio:.3g})"
            )
        else:
            which.append(f"p{s.percentile:g} {metric} x{ratio:.3g} (its range's slow end)")
    line = (
        "Sensitivity, shown not applied: the fleet if real latency sat at the slow end of the held-out ranges (published "
        "runs under load / simulated), "
        f"{' and '.join(which)}: each option's replicas found again by the same search, against the targets (not the "
        f"margin's goals: the range stands for what the margin does), each ratio at least the plan's own margin and "
        f"the median of the option's deployment's own published runs where it has 3 or more, so never below the "
        f"plan. {rec.option.name}: {fleet_text(s, rec)}; "
        f"{where}. "
    )
    if full is not None:
        line += (
            f"At the full range's slow end ({ratios_text(full)}): {fleet_text(full, rec)}. "
            if full.meets
            else f"At the full range's slow end ({ratios_text(full)}) no replica count the search allows meets the "
            "targets: the latency range is wider than the targets allow"
            + (" (only a near-idle fleet at its limit does). " if full.shortfall != NOT_MET else ". ")
        )
    basis = budget_basis_text(rec, review.scenario.workload)  # a line of its own: one row of the sheet each
    done = line + "The plan, its margin and its cost are sized on the simulated figures and do not change."
    return [done, basis] if basis else [done]


def budget_basis_text(plan: Result, workload: Workload) -> str:
    """Which fleet to budget on, as one test a reader can run (a trial: the review showed a +0% margin beside a
    slow end 8x the GPUs and did not say which to book): the plan's fleet holds while real latency at each replica's
    planned load is within target / simulated of the simulation, so booking it rests on one replica measured at that
    load; the slow end's fleet is the one to book where the measurement is slower (where the slow end has a fleet
    that meets the targets; else measure before committing). "" where the option was not sized on simulated
    percentiles."""
    sim = plan.under_load
    if sim is None or sim.is_burst or not math.isfinite(sim.rate_per_replica_s):
        return ""
    q = sim.percentile
    ttft, tpot = sim.result.ttft_s.at(q), sim.result.tpot_s.at(q)
    slack = [
        f"p{q:g} {metric} up to {target / got:.2f}x the simulated {shown}"
        for metric, target, got, shown in (
            ("TTFT", workload.ttft_target_s, ttft, f"{ttft:.2f} s"),
            ("TPOT", workload.tpot_target_s, tpot, f"{tpot * 1e3:.1f} ms"),
        )
        if math.isfinite(target) and got > 0
    ]
    if not slack:
        return ""
    # what one replica sees of the traffic's bursts, as the review's routing deals them (Poisson stays Poisson at
    # random; round-robin smooths even Poisson to gamma k)
    shape = replica_burstiness(workload.burstiness, sim.replicas, workload.routing)
    burst = f" --burstiness {shape:.2g}" if shape != 1 else ""
    # trial 20, F8: no slow end's fleet to book where none of this option meets the targets there
    slower = (
        "and book the slow end's fleet where it is slower"
        if plan.slow_end is not None and plan.slow_end.meets
        else "the slow end has no fleet of this option that meets the targets: where it is slower, no fleet size "
        "is promised, so measure before committing"
        if not (other := other_group_text(plan))
        else f"the slow end has no fleet of this option's {int(plan.replica.gpus)}-GPU replicas that meets the "
        f"targets, while {other}: where it is slower, no fleet of these replicas is promised, so measure before "
        "committing"
    )
    return (
        f"Which to budget on: the plan's {counted(plan.gpus, 'GPU', ',.0f')} meet the targets while real latency at "
        f"each replica's planned load ({sim.rate_per_replica_s:.3g} requests/s) is within {' and '.join(slack)}; "
        f"measure one replica there before booking it (vllm bench serve --request-rate {sim.rate_per_replica_s:.3g}"
        f"{burst} at the scenario's lengths); {slower}."
    )


def with_group_meeting_slow_end(
    result: Result, scenario: Scenario, catalog: Catalog, ranges: Mapping[tuple[str, str], LoadedRange]
) -> Result:
    """``result`` with its ``slow_end_group``, where no fleet of its kept group meets the targets at the slow end
    (``slow_end``) and the option leaves the group to the review: each other group that fits sized alone as the plan
    is (``evaluate`` on that group), its slow end found (``with_slow_end``), the cheapest plan among those whose slow
    end has a fleet kept (a tie: the cheaper slow end, then the smaller group). Trial 27 F3: B200's 2-GPU replicas
    were said to be promised "at any fleet size" never, while 56 GPUs of its 4-GPU replicas meet there. Unchanged
    where the kept group's slow end meets, or none other does."""
    s = result.slow_end
    if s is None or s.meets or result.option.gpus_per_replica or result.replica is None:
        return result
    kept, found = int(result.replica.gpus), []
    for c in result.candidates:
        if c.gpus_per_replica == kept or not c.fits:
            continue
        try:
            other = evaluate(result.option, scenario.workload, catalog, scenario.traffic_change,
                             groups=(c.gpus_per_replica,), finance=scenario.finance)  # fmt: skip
        except PlannerError:
            continue
        other = with_slow_end(other, scenario.workload, catalog, ranges)
        if other.meets and other.slow_end is not None and other.slow_end.meets:
            found.append(other)
    if not found:
        return result
    best = min(found, key=lambda r: (r.monthly_usd, r.slow_end.monthly_usd, int(r.replica.gpus)))
    return replace(result, slow_end_group=best)


def met_at_slow_end(result: Result) -> bool:
    """Whether the option's own fleet meets the targets at the held-out slow end (``Result.slow_end``, this module's
    rule: a fleet kept there), for a tie in cost between options (``review.recommended_first``, the rule
    ``evaluate._kept_on_ties`` ranks tied groups by); True where there is no slow end to ask (no ranges table, an
    option not sized on simulated percentiles): not known, as ``evaluate._cheapest_under_load`` takes it."""
    return result.slow_end is None or result.slow_end.meets


def cost_tied(a: Result, b: Result) -> bool:
    """Whether two options tie on cost as ``evaluate._kept_on_ties`` ties groups: the same monthly cost and GPUs,
    exactly (the trial 27 F3 B200 TP2 and TP4 options: 24 GPUs, $46,704 a month each)."""
    return (float(a.monthly_usd), float(a.gpus)) == (float(b.monthly_usd), float(b.gpus))


def other_group_text(plan: Result) -> str:
    """Where no fleet of the plan's group meets the targets at the slow end and another group size of the option
    does (``Result.slow_end_group``): "on 4-GPU replicas 52 GPUs do, $101,192 a month (the plan on them: 20 GPUs,
    $38,920 a month)"; "" otherwise."""
    other = plan.slow_end_group
    if other is None or other.slow_end is None or other.replica is None:
        return ""
    s = other.slow_end
    return (
        f"on {int(other.replica.gpus)}-GPU replicas {counted(s.gpus, 'GPU', ',.0f')} do, ${s.monthly_usd:,.0f} a month "
        f"(the plan on them: {counted(other.gpus, 'GPU', ',.0f')}, ${other.monthly_usd:,.0f} a month)"
    )


def unmet_words(plan: Result) -> tuple[str, str]:
    """What the budget sentence says where no fleet of the plan's group meets the targets at the slow end: (the slow
    end, what then); "this option" narrowed to its group where another group size meets there (``other_group_text``,
    trial 27 F3: "cannot be promised on this option at any fleet size" stood where 4-GPU replicas of it meet)."""
    other = other_group_text(plan)
    if not other:
        return (
            "at the slow end of those ranges no fleet of this option meets the targets",
            "otherwise the targets cannot be promised on this option at any fleet size: measure before committing",
        )
    g = int(plan.replica.gpus)
    return (
        f"at the slow end of those ranges no fleet of this option's {g}-GPU replicas meets the targets, while {other}",
        f"otherwise the targets cannot be promised on its {g}-GPU replicas at any fleet size: measure before "
        f"committing, or plan on {int(plan.slow_end_group.replica.gpus)}-GPU replicas",
    )
