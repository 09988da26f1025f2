"""The fleet to budget where the recommended deployment's own published runs are slower than the margin allows
(trial 26, F18: gpt-oss-120b on 2 x H100 with vLLM, five of seven TPOT figures 1.68x-1.95x the prediction against a
+47% margin, while "What to budget" said to budget the plan's 4 GPUs).

**The runs** (``ratios``): the shipped published runs of the very deployment an option plans (same GPU, model,
engine, layout, group and precisions: ``planner.accuracy.same_deployment``), each figure as published / predicted
(``planner validate``'s own errors, never recomputed here): TPOT (``tpot_ms``, ``tpot_median_ms``) and TTFT
(``ttft_ms``, ``ttft_median_ms``) apart.

**When** (``beyond``): a metric with at least ``OWN_RUNS_LEAST`` figures, most of which (more than half) exceed
1 + the option's margin: the margin, drawn from many deployments' held-out runs, does not hold this deployment's own.

**The ratio** (``budget_ratio``): the median of that metric's figures, the larger of TPOT's and TTFT's where both are
beyond. The median, not the worst: "most figures exceed the margin" is "the median exceeds it", so the ratio is the
one the rule's own test reads; it is what this deployment's typical published run measured, and with three to seven
figures the worst is one run's (a single outlying run would set the budget). The trial's runs: TPOT 0.99, 1.00,
1.68, 1.78, 1.81, 1.89, 1.95 (median 1.78); TTFT 0.83, 0.83, 1.68, 1.84, 2.00, 2.82, 2.88 (median 1.84): 1.84.

**The fleet** (``own_runs_fleet``): the same evaluation as the plan's (``evaluate.evaluate``) with
``latency_margin`` = the ratio - 1, on the option's kept group (the runs are of that group): spares, whole nodes and
price as the plan's. The review then says to budget that fleet until one replica is measured at its planned load
(``reason.budget_sentence``). Nothing else changes: the plan, its margin and the ranking stay the plan's.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

from planner.errors import PlannerError
from planner.export.records import OwnRunsBudget

if TYPE_CHECKING:
    from planner.catalog import Catalog
    from planner.export.records import Result
    from planner.export.scenario import Scenario

#: The fewest figures of one metric of the deployment's own published runs that the rule reads.
OWN_RUNS_LEAST = 3
#: Each metric's figures in ``planner.accuracy.same_deployment``'s names.
METRICS = {"TPOT": ("tpot_ms", "tpot_median_ms"), "TTFT": ("ttft_ms", "ttft_median_ms")}


def ratios(rec: Result) -> dict[str, list[float]]:
    """{"TPOT": [published / predicted, ...], "TTFT": [...]} over the option's deployment's shipped published runs;
    empty lists where it keeps no group or no run matches."""
    from planner.accuracy.same_deployment import same_deployment_runs
    from planner.export.assumptions import option_deployment

    d = option_deployment(rec)
    runs = same_deployment_runs(d) if d is not None else []
    figures = [c for run in runs for c in run.figures if c.predicted > 0]
    return {m: [c.published / c.predicted for c in figures if c.quantity in qs] for m, qs in METRICS.items()}


def beyond(rec: Result) -> dict[str, list[float]]:
    """The metrics (with all their figures) of which at least ``OWN_RUNS_LEAST`` figures were published and most
    exceed 1 + the option's margin; {} otherwise."""
    allowed = 1 + rec.margin
    return {
        m: xs
        for m, xs in ratios(rec).items()
        if len(xs) >= OWN_RUNS_LEAST and 2 * sum(x > allowed for x in xs) > len(xs)
    }


def budget_ratio(rec: Result) -> tuple[str, float] | None:
    """(the metric, its figures' median) for the metric whose median is largest among ``beyond``'s; None where no
    metric's figures are mostly beyond the margin."""
    over = beyond(rec)
    return _largest_median(over) if over else None


def _largest_median(over: dict[str, list[float]]) -> tuple[str, float]:
    """(the metric, its median) of the metric in ``over`` whose figures' median is largest."""
    medians = {m: statistics.median(xs) for m, xs in over.items()}
    metric = max(medians, key=medians.__getitem__)
    return metric, medians[metric]


def own_runs_fleet(rec: Result, scenario: Scenario, catalog: Catalog) -> OwnRunsBudget | None:
    """The option sized again with ``latency_margin`` = ``budget_ratio`` - 1 on its kept group (module docstring);
    None where the rule does not apply. ``gpus`` 0 and ``monthly_usd`` NaN where no fleet meets the targets then."""
    if not rec.meets:
        return None
    over = beyond(rec)  # the deployment's runs, read once
    if not over:
        return None
    from planner.export.evaluate import evaluate

    metric, ratio = _largest_median(over)
    workload = scenario.workload.model_copy(update={"latency_margin": ratio - 1})
    try:
        again = evaluate(
            rec.option,
            workload,
            catalog,
            scenario.traffic_change,
            groups=(int(rec.candidate.gpus_per_replica),),
            finance=scenario.finance,
        )
    except PlannerError:
        again = None
    met = again is not None and again.meets
    return OwnRunsBudget(
        metric=metric,
        ratio=ratio,
        figures=len(over[metric]),
        beyond=sum(x > 1 + rec.margin for x in over[metric]),
        gpus=again.gpus if met else 0,
        monthly_usd=again.monthly_usd if met else float("nan"),
    )
