"""Mixed fleets: a scenario's [[mix]] tables, each a fleet in which several options serve the traffic at once (two
models behind one gateway), each option a share of it.

Each part is its option sized alone on the scenario's workload with today's peak and average traffic x its share
(``evaluate.at_traffic``: the planned peak after growth, the sensitivity and the demand cases then scale with it),
by the review's own code (``review.size_option_alone``, passed in: every group and layout tried,
the margin, the spares and whole nodes the option asks for), its ownership over the horizon and demand cases by
``outlook.ownership`` and ``outlook.demand_cases``. The mix's GPUs, monthly cost, year-1 cash and horizon total are
its parts' sums: nothing is shared between the parts (no spare replica, node or GPU serves two of them), and nothing
here computes a fleet or a price.

A mix is a budget line beside the ranked options, not one of them: the recommendation, levers and sensitivity are
the options' as before.
"""

from __future__ import annotations

from collections.abc import Callable

from planner.catalog import Catalog
from planner.export.evaluate import at_traffic
from planner.export.outlook import demand_cases, ownership
from planner.export.records import MixPart, MixSized, Result
from planner.export.scenario import Mix, Option, Scenario

#: How the review sizes one option on a scenario (``review.size_option_alone``: every group and layout tried, then
#: sized again at the planned peak); passed in, since the review imports this module.
SizeOption = Callable[[Option, Scenario, Catalog], Result]


def share_scenario(scenario: Scenario, option_name: str, share: float) -> Scenario:
    """The scenario of one part: its option alone, today's peak and average traffic x ``share``; no mixes, the
    baseline that option. What ``planner export`` of a file with that option alone and the traffic so scaled sizes."""
    option = next(o for o in scenario.option if o.name == option_name)
    return scenario.model_copy(
        update={
            "workload": at_traffic(scenario.workload, share),
            "option": (option,),
            "mix": (),
            "baseline": None,
        }
    )


def size_part(option_name: str, share: float, scenario: Scenario, catalog: Catalog, size: SizeOption) -> MixPart:
    """The option sized alone at ``share`` of the traffic (``share_scenario``) by ``size``, with its ownership and
    demand cases."""
    alone = share_scenario(scenario, option_name, share)
    result = size(alone.option[0], alone, catalog)
    if not result.meets:
        return MixPart(option_name, share, result, None)
    return MixPart(option_name, share, result, ownership(alone, result), demand_cases(alone, result))


def size_mix(
    mix: Mix,
    scenario: Scenario,
    catalog: Catalog,
    size: SizeOption,
    sized: dict[tuple[str, float], MixPart] | None = None,
) -> MixSized:
    """Each part of ``mix`` sized alone at its share of the traffic; the mix's figures are their sums. ``sized``: the
    parts sized so far by (option, share), reused (an option at one share in two mixes is sized once)."""
    sized = {} if sized is None else sized
    for p in mix.parts:
        if (p.option, p.share) not in sized:
            sized[p.option, p.share] = size_part(p.option, p.share, scenario, catalog, size)
    return MixSized(mix.name, tuple(sized[p.option, p.share] for p in mix.parts))


def size_mixes(
    scenario: Scenario, catalog: Catalog, size: SizeOption, progress: Callable[[str], None] | None = None
) -> tuple[MixSized, ...]:
    """Every [[mix]] of the scenario, sized (``size_mix``), in the scenario's order; ``progress`` is told of each
    before it is sized."""
    out, sized = [], {}
    for i, mix in enumerate(scenario.mix, 1):
        if progress:  # before the step, as the review says each option's
            progress(f"sizing mix {i}/{len(scenario.mix)}: {mix.name}")
        out.append(size_mix(mix, scenario, catalog, size, sized))
    return tuple(out)


def unmet_warnings(mixes: tuple[MixSized, ...]) -> tuple[str, ...]:
    """A warning for each part that meets no target at its share: its mix has no total."""
    return tuple(
        f"mix {m.name}: {p.option} at {p.share * 100:.4g}% of the traffic does not meet the targets ({p.result.shortfall}); "
        "the mix has no total"
        for m in mixes
        for p in m.parts
        if not p.result.meets
    )
