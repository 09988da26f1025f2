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

**The other direction** (trial 29 F10: one run 1.13x slower than predicted drew ``latency_margin = 0.14`` while the
other two were predicted 2-6.7x too slow). Where most of a deployment's runs (more than half) have a failing TTFT or
TPOT figure predicted at least ``FAST_RUNS_RATIO`` times what they measured, the hint says so first: the plan is
conservative for these runs, and a margin only adds to it. The way forward is a calibration: ``planner calibrate``
fits static batches and closed loops (``vllm bench serve --max-concurrency C`` at ``--request-rate inf``), not runs at
a request rate, so the hint asks for such a run of the same deployment, then for ``validate --calibration`` on these
runs. The margin hint for the runs slower than predicted stays, saying it covers those runs alone.
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
#: predicted / published at or above which a run counts as predicted much slower than it ran (the other direction).
FAST_RUNS_RATIO = 1.5
#: Where docs/accuracy.md says what calibrate fits.
CALIBRATE_DOCS = 'docs/accuracy.md, "Calibrating to your hardware"'


@dataclass(frozen=True)
class MarginHint:
    """One deployment's next step: the ``latency_margin`` that covers its runs' worst figure."""

    deployment: str  # ``Deployment.words``
    quantity: str  # a key of ``HINT_QUANTITIES``
    record_id: str  # the run of the worst figure
    published_ms: float
    predicted_ms: float
    latency_margin: float | None  # published / predicted - 1, rounded up to 0.01; None: a faster-runs hint
    text: str
    #: "latency_margin" (runs slower than predicted: the margin that covers them) or "predicted_slower" (most runs
    #: ran faster than predicted: calibrate, ``FAST_RUNS_RATIO``)
    kind: str = "latency_margin"
    runs: int = 0  # a predicted_slower hint: the deployment's runs with a failing TTFT / TPOT figure predicted
    faster_runs: int = 0  # ... of which predicted at least FAST_RUNS_RATIO x slower than measured

    @property
    def ratio(self) -> float:
        """Published / predicted of the worst figure."""
        return self.published_ms / self.predicted_ms

    def as_dict(self) -> dict[str, Any]:
        """For ``planner validate --json``'s ``margin_hints``."""
        out = {
            "kind": self.kind,
            "deployment": self.deployment,
            "quantity": self.quantity,
            "record_id": self.record_id,
            "published_over_predicted": self.ratio,
            "latency_margin": self.latency_margin,
            "text": self.text,
        }
        if self.kind == "predicted_slower":
            out |= {"runs": self.runs, "runs_predicted_slower": self.faster_runs}
        return out


def margin_hints(table: Table, rows: Sequence[DecodeRow], catalog, max_margin: float) -> list[MarginHint]:
    """One ``MarginHint`` per deployment of ``rows`` whose loaded TTFT or TPOT misses its limits with figures slower
    than predicted (module docstring), in the order the table first shows each deployment; before it, where most of
    that deployment's runs ran much faster than predicted, a ``kind`` "predicted_slower" hint (``FAST_RUNS_RATIO``)."""
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
        judged = [c for c in checks if c.quantity in failing and c.published > 0 and c.predicted > 0]
        fast = _faster_runs_hint(d.words(), judged)
        if fast is not None:
            hints.append(fast)
        slower = [c for c in judged if c.published > c.predicted]
        if slower:
            worst = max(slower, key=lambda c: c.published / c.predicted)
            hints.append(_hint(d.words(), worst, max_margin, alone=fast is not None))
    return hints


def _faster_runs_hint(deployment: str, judged: list[Check]) -> MarginHint | None:
    """The other direction's hint (module docstring) where more than half of the runs of ``judged`` (a deployment's
    failing TTFT / TPOT figures) have one predicted at least ``FAST_RUNS_RATIO`` x its measurement; else None."""
    runs = list(dict.fromkeys(c.record_id for c in judged))
    over = [c for c in judged if c.predicted >= FAST_RUNS_RATIO * c.published]
    faster = list(dict.fromkeys(c.record_id for c in over))
    if not runs or 2 * len(faster) <= len(runs):
        return None
    worst = max(over, key=lambda c: c.predicted / c.published)
    metric, pct = worst.quantity.split("_")[:2]
    text = (
        f"Next step ({deployment}): the plan is conservative for these runs: {len(faster)} of {len(runs)} "
        f"{'has' if len(runs) == 1 else 'have'} a TTFT or TPOT predicted {FAST_RUNS_RATIO:g}x or more what "
        f"{'it' if len(runs) == 1 else 'they'} measured (worst {worst.record_id}: {pct} {metric.upper()} "
        f"{worst.predicted:,.1f} ms predicted against {worst.published:,.1f} ms, "
        f"{worst.predicted / worst.published:.2f}x), so a fleet sized on the plan is larger than these runs need, "
        "and a latency_margin only adds to it. To fit the predictions to your servers, measure this deployment at a "
        "fixed concurrency (vllm bench serve --max-concurrency C --request-rate inf --save-result) or as static "
        "batches, fit them with planner calibrate FILE -o my-gpus.toml (it fits closed loops and batches, not runs "
        f"at a request rate; {CALIBRATE_DOCS}), and check these runs again with planner validate --decode FILE "
        "--calibration my-gpus.toml"
    )
    return MarginHint(
        deployment, worst.quantity, worst.record_id, worst.published, worst.predicted, None, text,
        kind="predicted_slower", runs=len(runs), faster_runs=len(faster),
    )  # fmt: skip


def _hint(deployment: str, c: Check, max_margin: float, alone: bool = False) -> MarginHint:
    """The hint's one line for the worst figure ``c`` of ``deployment``; past ``max_margin`` (the most a scenario's
    latency_margin may be: ``planner.export.scenario.MAX_LATENCY_MARGIN``, given by the surface) it says to measure.
    ``alone``: most of the deployment's runs ran faster than predicted (``_faster_runs_hint``), so the margin covers
    the runs slower than predicted alone, and the line says so."""
    ratio = c.published / c.predicted
    margin = math.ceil(round((ratio - 1) * 100, 6)) / 100  # up to the hundredth (1.8818 -> 1.89), never below
    metric, pct = c.quantity.split("_")[:2]
    what = f"{pct} {metric.upper()}"
    head = (
        f"Next step ({deployment}): your runs' {what} is up to {ratio:.2f}x the prediction ({c.record_id}: "
        f"{c.published:,.1f} ms against {c.predicted:,.1f} ms)"
    )
    if alone:  # trial 29 F10: the other runs were predicted 2-6.7x too slow
        head = head.replace("your runs' ", "where your runs ran slower than predicted, their ", 1)
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
