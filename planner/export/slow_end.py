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

**Not met** (``NOT_MET``): where no replica count up to the search's limit (``planner.serving.fleet.MAX_REPLICAS``, 262,144) meets
the slow end, or only replicas kept nearly idle do (``planner.serving.fleet.near_ttft_floor``: their median TTFT over
75% of the goal; at 15.3x the README's review found 8,696 replicas of H100 x 4, $47.9 million a month, met by
simulation noise at that floor), the option gives no GPUs or cost, only why.

**Shown, not applied**: nothing here changes the plan's fleet, margin or cost. Without the ranges' table
(``catalogs/reference/loaded_residuals.csv``) or for an option not sized on simulated percentiles: no sensitivity.
"""

from __future__ import annotations

import math
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


def slow_end(
    result: Result,
    workload: Workload,
    catalog: Catalog,
    ranges: Mapping[tuple[str, str], LoadedRange],
    without_one_source: bool = True,
) -> SlowEnd | None:
    """The option's fleet at the slow end of its figures' held-out ranges (the module's rule); None where the option
    does not meet the targets, was not sized on simulated percentiles, or ``ranges`` has no TTFT or TPOT range for
    its percentile (``held_out.range_for``; an install without the table)."""
    sim = result.under_load if result.meets else None
    if sim is None:
        return None
    q = sim.percentile
    ttft_rng, tpot_rng = (held_out.range_for(ranges, m, q) for m in ("ttft", "tpot"))
    if ttft_rng is None or tpot_rng is None:
        return None
    (ttft_ratio, ttft_out), (tpot_ratio, tpot_out) = (
        slow_end_ratio(r, without_one_source) for r in (ttft_rng, tpot_rng)
    )
    goals = (workload.ttft_target_s / ttft_ratio, workload.tpot_target_s / tpot_ratio)
    ends = dict(percentile=q, ttft_ratio=ttft_ratio, tpot_ratio=tpot_ratio, ttft_left_out=ttft_out,
                tpot_left_out=tpot_out)  # fmt: skip
    try:
        sim, fleet = fleet_on_goals(result, workload, catalog, goals)
    except PlannerError:  # no replica count the search allows meets them
        return SlowEnd(**ends, replicas=0, gpus=0, monthly_usd=math.nan, shortfall=NOT_MET)
    if near_ttft_floor(sim):  # met only by replicas kept nearly idle: the range, not the traffic, sets that count
        return SlowEnd(**ends, replicas=0, gpus=0, monthly_usd=math.nan, shortfall=NOT_MET)
    return SlowEnd(**ends, replicas=int(fleet.replicas_needed), gpus=int(fleet.gpus),
                   monthly_usd=float(fleet.monthly_usd))  # fmt: skip


def with_slow_end(
    result: Result, workload: Workload, catalog: Catalog, ranges: Mapping[tuple[str, str], LoadedRange]
) -> Result:
    """``result`` with its ``slow_end`` (the end without a source that sets it alone) and, where that differs from
    the full range's end, its ``slow_end_full_range``; unchanged where there is none (``slow_end``)."""
    chosen = slow_end(result, workload, catalog, ranges)
    if chosen is None:
        return result
    trimmed = chosen.ttft_left_out or chosen.tpot_left_out
    full = slow_end(result, workload, catalog, ranges, without_one_source=False) if trimmed else None
    return replace(result, slow_end=chosen, slow_end_full_range=full)


def ratios_text(s: SlowEnd) -> str:
    """The ends as the figures are multiplied: "p95 TTFT x2.68, TPOT x1.27"."""
    return f"p{s.percentile:g} TTFT x{s.ttft_ratio:.3g}, TPOT x{s.tpot_ratio:.3g}"


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
    for metric, ratio, left_out, full_ratio in (
        ("TTFT", s.ttft_ratio, s.ttft_left_out, full.ttft_ratio if full else math.nan),
        ("TPOT", s.tpot_ratio, s.tpot_left_out, full.tpot_ratio if full else math.nan),
    ):
        which.append(
            f"p{s.percentile:g} {metric} x{ratio:.3g} (its range's slow end without {left_out}, the one source that "
            f"sets the full end, x{full_ratio:.3g})"
            if left_out
            else f"p{s.percentile:g} {metric} x{ratio:.3g} (its range's slow end)"
        )
    line = (
        "Sensitivity, shown not applied: the fleet if real latency sat at the slow end of the held-out ranges (published "
        "runs under load / simulated), "
        f"{' and '.join(which)}: each option's replicas found again by the same search, against the targets (not the "
        f"margin's goals: the range stands for what the margin does). {rec.option.name}: {fleet_text(s, rec)}; "
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
