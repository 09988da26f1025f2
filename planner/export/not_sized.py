"""The latency margin's cliff: an option whose fleet sized with the margin is many times its fleet sized on the
prediction is not sized (user trial 22, F1; docs/export.md, "How an option is sized", step 10)."""

from __future__ import annotations

from dataclasses import replace as dc_replace

from planner.catalog import Catalog
from planner.export.outlook import without_margin
from planner.export.records import Result
from planner.export.scenario import Scenario
from planner.units import counted

__all__ = ["MARGIN_NOT_SIZED", "NOT_SIZED", "not_sized"]


#: An option whose fleet sized with its latency margin is this many times (or more) the fleet sized on the prediction
#: is not sized: the margin's cliff, not the traffic, sets it. It is the 90% guard (``sizing.leaves_prompt_time``)
#: read on the result: a TPOT goal one sequence's decode uses 90% of leaves prompts a tenth of a replica's time, so
#: the fleet grows tenfold. The guard reads the closed form's batch-1 TPOT; the simulation's idle replica runs slower
#: (scheduling, prompt steps), so a goal can pass it and still size a fleet 180 times the prediction (trial 22, F1:
#: DeepSeek-V3 dp-ep on 8 x H200 under vLLM at +179%, TPOT goal 17.9 ms against 15.9 ms idle: 2,880 GPUs, 16 as
#: predicted). ``money_tables.MARGIN_SETS_FLEET`` (3x) only warns; this refuses to rank the option as sized.
MARGIN_NOT_SIZED = 10.0

#: how a not-sized option's shortfall starts (``not_sized``)
NOT_SIZED = "not sized, low confidence: measure one replica first"


def not_sized(result: Result, scenario: Scenario, catalog: Catalog, bare: Result | None = None) -> Result:
    """``result`` unchanged, or, where its fleet with the latency margin is ``MARGIN_NOT_SIZED`` times its fleet sized
    on the prediction (``bare``, sized here when not given) or more, the option as not meeting its targets: no fleet,
    a shortfall naming both fleets and the margin's source. Such an option is neither recommended nor ranked as sized."""
    if not result.meets or result.margin <= 0:
        return result
    bare = bare if bare is not None else without_margin(scenario, result, catalog)
    if bare is None or not bare.meets or not bare.gpus or result.gpus < MARGIN_NOT_SIZED * bare.gpus:
        return result
    from planner.export.money_tables import _basis
    from planner.export.reason import usd

    why = (
        f"{NOT_SIZED}: at its +{result.margin:.0%} latency margin the TPOT goal is {result.tpot_goal_s * 1e3:,.3g} ms, "
        f"which one sequence's decode nearly uses, so the fleet would be {counted(result.gpus, 'GPU', ',.0f')} "
        f"({usd(result.monthly_usd)} a month), x{result.gpus / bare.gpus:,.0f} the {counted(bare.gpus, 'GPU', ',.0f')} "
        f"({usd(bare.monthly_usd)} a month) sized on the prediction ({MARGIN_NOT_SIZED:g} times or more: the margin, "
        f"not the traffic, sets it; the margin from {_basis(result.time_range_note)}); measure one replica of this "
        "deployment at its planned load (planner validate, planner calibrate) before budgeting on either"
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
