"""The fleet ``planner export`` of a what-if workbook budgets, computed by planner when the Load sheet is (trial 26
F16: the Inputs' peak fleet, "before spares, whole nodes and latency margin", read 4 GPUs and $5,840 a month where
the review of the same file budgeted 12 GPUs and $17,520; the headline money cell is the one a user copies into a
budget).

No sizing is restated here: the workbook's Inputs become the review's one-option scenario as ``planner export``
reads them (``planner.export.workbook_scenario.workbook_scenario_data``), and that option is sized by the review's
own ``planner.export.review.sized_in_layouts`` (its latency margin from the held-out runs, its spare replicas, whole
nodes and the cheapest group and layout), whose fleet's GPUs the review's recommendation states. The count does not
depend on the price per GPU-hour (every group is priced per GPU alike, so the cheapest group is the same at any
price): the Inputs' budget cost is a formula over it, budget GPUs x price x 730 h a month.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.catalog import Catalog
from planner.errors import PlannerError

#: The name the review's scenario gets (its messages name it).
SOURCE = "this workbook"


@dataclass(frozen=True)
class BudgetFleet:
    """The review's fleet for a workbook's Inputs: ``gpus`` (None where it sizes none) and, in words, what it is
    ("3 replicas of 4 GPUs incl. 1 spare, +47% latency margin": one line beside the row) or why there is none."""

    gpus: int | None
    words: str


def budget_fleet(inputs: dict[str, Any], catalog: Catalog) -> BudgetFleet:
    """``planner export``'s fleet for ``inputs`` (``read_all_inputs``' keys, or ``inputs.default_inputs``'): the
    option sized by ``sized_in_layouts`` on the scenario ``workbook_scenario_data`` maps the Inputs to; where it meets
    no target or an input is refused, no figure and the review's reason."""
    from planner.export.review import sized_in_layouts
    from planner.export.scenario import MAX_GPUS_PER_REPLICA, parse_scenario
    from planner.export.workbook_scenario import workbook_scenario_data

    gpus = inputs.get("gpus")
    if isinstance(gpus, (int, float)) and gpus > MAX_GPUS_PER_REPLICA:  # scenario_from_workbook's bound
        return BudgetFleet(None, f"not sized: a budget review sizes replicas of at most {MAX_GPUS_PER_REPLICA} GPUs")
    try:
        scenario = parse_scenario(workbook_scenario_data(inputs, SOURCE), SOURCE)
        result, _ = sized_in_layouts(scenario.option[0], scenario, catalog)
    except (PlannerError, ValueError) as exc:
        return BudgetFleet(None, f"not sized: {exc}")
    if not result.meets or result.fleet is None:
        return BudgetFleet(None, f"none meets the targets: {result.shortfall}")
    replicas, group = int(result.fleet.replicas), int(result.replica.gpus)
    spare = int(result.option.spare_replicas)
    words = f"{replicas} {'replica' if replicas == 1 else 'replicas'} of {group} {'GPU' if group == 1 else 'GPUs'}"
    words += f" incl. {spare} spare" if spare else ", no spare"
    words += f", +{result.margin:.0%} latency margin" if result.margin else ", no latency margin"
    return BudgetFleet(result.gpus, words)
