"""The next step after ``planner validate`` finds a user's own serving runs slower than predicted (trial 28 F6: a
user's rate runs of Llama-3.3-70B on 4 x H100 measured p99 TTFT up to 2.9x the prediction, validate printed FAIL,
and nothing said how to carry that into a budget).

**The key.** ``planner export`` sizes each option so that its simulated latency times (1 + ``latency_margin``) meets
the targets (``[workload] latency_margin``, a fraction: 0.25 is prediction + 25%; docs/export.md, "How an option is
sized", 3. Margin). One margin widens TTFT's and TPOT's goals alike; the scenario has no margin per quantity, and
export reads no user's runs (its own-runs budget, ``planner.export.own_runs``, reads the shipped published runs only),
so the margin that covers a user's runs is theirs to set.

**When** (``margin_hints``): for the rows of one deployment (``same_deployment.deployment_of``: GPU, model, engine,
layout and group, precisions), a loaded TTFT or TPOT percentile (``HINT_QUANTITIES``) whose median or worst |error|
over those rows misses its limit (``validation.LIMITS``), where some of those figures were published slower than
predicted. A deployment whose misses are all predictions slower than published gets no hint: a margin only adds.

**The value.** The largest published / predicted over the failing quantities' figures of that deployment, less 1,
rounded up to the hundredth: the margin under which the plan's prediction reaches every one of these runs. The
worst, not the median: the user asked what covers their runs, and each is a run of their own deployment.
An error of -65.3% (predicted / published - 1) is published = predicted / 0.347 = 2.88 x predicted: 1.89, not 0.65.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.accuracy.published import DecodeRow
from planner.accuracy.under_load import FIGURES
from planner.accuracy.validation import Check, Table

#: The loaded quantities a margin covers: TTFT's and TPOT's percentiles (the figures export sizes on), not ITL's.
HINT_QUANTITIES = tuple(q for q in FIGURES if q.startswith(("ttft_", "tpot_")))
#: Where docs/export.md says what the key does.
DOCS = 'docs/export.md, "How an option is sized", 3. Margin'


@dataclass(frozen=True)
class MarginHint:
    """One deployment's next step: the ``latency_margin`` that covers its runs' worst figure."""

    deployment: str  # ``Deployment.words``
    quantity: str  # a key of ``HINT_QUANTITIES``
    record_id: str  # the run of the worst figure
    published_ms: float
    predicted_ms: float
    latency_margin: float  # published / predicted - 1, rounded up to 0.01
    text: str

    @property
    def ratio(self) -> float:
        """Published / predicted of the worst figure."""
        return self.published_ms / self.predicted_ms

    def as_dict(self) -> dict[str, Any]:
        """For ``planner validate --json``'s ``margin_hints``."""
        return {
            "deployment": self.deployment,
            "quantity": self.quantity,
            "record_id": self.record_id,
            "published_over_predicted": self.ratio,
            "latency_margin": self.latency_margin,
            "text": self.text,
        }


def margin_hints(table: Table, rows: Sequence[DecodeRow], catalog, max_margin: float) -> list[MarginHint]:
    """One ``MarginHint`` per deployment of ``rows`` whose loaded TTFT or TPOT misses its limits with figures slower
    than predicted (module docstring), in the order the table first shows each deployment."""
    from planner.accuracy.same_deployment import deployment_of

    by_id = {r.record_id: r for r in rows}
    groups: dict[Any, list[Check]] = {}
    for c in table.checks:
        row = by_id.get(c.record_id)
        if c.quantity in HINT_QUANTITIES and row is not None and not math.isnan(c.error):
            d = deployment_of(row, catalog)
            if d is not None:
                groups.setdefault(d, []).append(c)
    hints = []
    for d, checks in groups.items():
        mine = Table(table.title, tuple(checks), table.limits)
        failing = [
            q for q in mine.quantities() if mine.median(q) > mine.limit(q)[0] or mine.worst(q) > mine.limit(q)[1]
        ]
        slower = [c for c in checks if c.quantity in failing and c.published > c.predicted > 0]
        if slower:
            worst = max(slower, key=lambda c: c.published / c.predicted)
            hints.append(_hint(d.words(), worst, max_margin))
    return hints


def _hint(deployment: str, c: Check, max_margin: float) -> MarginHint:
    """The hint's one line for the worst figure ``c`` of ``deployment``; past ``max_margin`` (the most a scenario's
    latency_margin may be: ``planner.export.scenario.MAX_LATENCY_MARGIN``, given by the surface) it says to measure."""
    ratio = c.published / c.predicted
    margin = math.ceil(round((ratio - 1) * 100, 6)) / 100  # up to the hundredth (1.8818 -> 1.89), never below
    metric, pct = c.quantity.split("_")[:2]
    what = f"{pct} {metric.upper()}"
    head = (
        f"Next step ({deployment}): your runs' {what} is up to {ratio:.2f}x the prediction ({c.record_id}: "
        f"{c.published:,.1f} ms against {c.predicted:,.1f} ms)"
    )
    if margin > max_margin:
        text = (
            f"{head}, beyond the +{max_margin:.0%} a scenario's latency_margin may set ({DOCS}): measure one "
            "replica at its planned load before budgeting on the plan"
        )
    else:
        text = (
            f"{head}: latency_margin = {margin:.2f} in the scenario's [workload] sizes on the prediction x "
            f"{1 + margin:.2f}, which covers them (one margin for TTFT and TPOT alike; planner export does not read "
            f"these runs; {DOCS})"
        )
    return MarginHint(deployment, c.quantity, c.record_id, c.published, c.predicted, margin, text)
