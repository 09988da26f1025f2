"""The latency margin's cliff: an option whose fleet sized with the margin is many times its fleet sized on the
prediction is not sized (user trial 22, F1; docs/export.md, "How an option is sized", step 10)."""

from __future__ import annotations

import math
import re
from dataclasses import replace as dc_replace
from types import EllipsisType

from planner.accuracy.ranges import NoDataFloor
from planner.accuracy.serving_margin import runs_named
from planner.catalog import Catalog
from planner.export.outlook import without_margin
from planner.export.reason import floor_words, range_basis, usd
from planner.export.records import Result
from planner.export.scenario import Scenario
from planner.units import counted

__all__ = ["MARGIN_NOT_SIZED", "NOT_SIZED", "margin_basis", "not_sized"]


#: An option whose fleet sized with its latency margin is this many times (or more) the fleet sized on the prediction
#: is not sized: the margin's cliff, not the traffic, sets it. It is the 90% guard (``sizing.leaves_prompt_time``)
#: read on the result: a TPOT goal one sequence's decode uses 90% of leaves prompts a tenth of a replica's time, so
#: the fleet grows tenfold. The guard reads the closed form's batch-1 TPOT; the simulation's idle replica runs slower
#: (scheduling, prompt steps), so a goal can pass it and still size a fleet 180 times the prediction (trial 22, F1:
#: DeepSeek-V3 dp-ep on 8 x H200 under vLLM at +179%, TPOT goal 17.9 ms against 15.9 ms idle: 2,880 GPUs, 16 as
#: predicted). ``money_tables.MARGIN_SETS_FLEET`` (3x) only warns; this refuses to rank the option as sized. The
#: review searches the fleet with the margin below this many times the bare fleet only (``review.sized``).
MARGIN_NOT_SIZED = 10.0

#: how a not-sized option's shortfall starts (``not_sized``)
NOT_SIZED = "not sized, low confidence: measure one replica first"


def margin_basis(note: str, floor: NoDataFloor | None = None) -> str:
    """The runs a margin's note (``Result.time_range_note``) names, for a sentence on the margin: "13 MLA-model runs
    on H200 SXM 141GB + SGLang: SGLang 0.4.2.post4 (9 runs), ...; layout TP8 (all 13)" (``reason.range_basis``, then
    ``serving_margin.runs_named``), or "the model's range"; ``floor`` (``Result.time_range_floor``, the range's
    ``TimeRange.floor``) said after the head where the margin was held to a measured GPU's end (``reason.floor_words``)."""
    basis = range_basis(note)  # its floor said after the head, before the runs
    # the runs' releases and layout (trial 16, F1): "vLLM 0.7.4.dev181 (9 runs), 0.11.0 (1); layout TP8 (all 10)"
    runs = runs_named(note)
    if basis == "its benchmark rows":
        pooled = re.search(r"widened to hold the errors of (.+?) \(", note) if runs else None
        head = "the model's range" + (f", widened to hold {pooled[1]}" if pooled else "")
    else:
        thin = re.search(r": (widened to [^;]+);", basis)  # a region from too few sources (trial 20, F1)
        head = basis.split(" (")[0] + (f", {thin[1]}" if thin else "")
    return head + floor_words(floor) + (f": {runs}" if runs else "")  # trial 33 F10: held to a measured GPU's end


def not_sized(result: Result, scenario: Scenario, catalog: Catalog, bare: Result | None | EllipsisType = ...) -> Result:
    """``result`` unchanged, or, where its fleet with the latency margin is ``MARGIN_NOT_SIZED`` times its fleet sized
    on the prediction (``bare``: ``outlook.without_margin``'s, None where that meets no target; sized here when not
    given) or more, the option as not meeting its targets: no fleet, a shortfall naming both fleets and the margin's
    source. Such an option is neither recommended nor ranked as sized. A ``result`` whose search under load stopped
    at that bound (``evaluate``'s ``most_gpus``: its ``search_stopped_at_gpus`` that many GPUs) has no exact fleet: the
    shortfall says it would be that many times or more, and at least how many GPUs."""
    known = isinstance(bare, Result) and bare.meets and bare.gpus
    at = result.search_stopped_at_gpus
    stopped = bool(known) and at is not None and math.isclose(at, MARGIN_NOT_SIZED * bare.gpus)
    if not stopped and (not result.meets or result.margin <= 0):
        return result
    if bare is ...:
        bare = without_margin(scenario, result, catalog)
    if bare is None or not bare.meets or not bare.gpus:
        return result
    if not stopped and result.gpus < MARGIN_NOT_SIZED * bare.gpus:
        return result
    start = (
        f"{NOT_SIZED}: at its +{result.margin:.0%} latency margin the TPOT goal is {result.tpot_goal_s * 1e3:,.3g} ms, "
        "which one sequence's decode nearly uses, so the fleet would be "
    )
    predicted = f"{counted(bare.gpus, 'GPU', ',.0f')} ({usd(bare.monthly_usd)} a month) sized on the prediction"
    source = f"the margin, not the traffic, sets it; the margin from {margin_basis(result.time_range_note, result.time_range_floor)}"
    if stopped:  # searched below the bound only: no exact figure, only that it is at least there
        least = MARGIN_NOT_SIZED * bare.gpus
        fleet = (
            f"{MARGIN_NOT_SIZED:g} times or more the {predicted}: no fleet of fewer than {counted(least, 'GPU', ',.0f')} "
            f"({usd(least * bare.monthly_usd / bare.gpus)} a month) meets the margin's goals under load, and the "
            f"search stopped there ({source})"
        )
    else:
        fleet = (
            f"{counted(result.gpus, 'GPU', ',.0f')} ({usd(result.monthly_usd)} a month), "
            f"x{result.gpus / bare.gpus:,.0f} the {predicted} ({MARGIN_NOT_SIZED:g} times or more: {source})"
        )
    why = (
        f"{start}{fleet}; measure one replica of this deployment at its planned load (planner validate, planner "
        "calibrate) before budgeting on either"
    )
    w = scenario.workload
    return dc_replace(
        result,
        replica=None,
        fleet=None,
        low=None,
        high=None,
        sweep=None,
        peak_rate_per_s=w.peak_requests_per_s * w.growth_factor if w.by_rate else float("nan"),
        average_rate_per_s=w.average_requests_per_s * w.growth_factor if w.by_rate else float("nan"),
        shortfall=why,
        load_curve=None,
        slow_end=None,
        slow_end_full_range=None,
        again=(),
    )
