"""The Load sheet's figures: each Levers scenario's replica under traffic, simulated by ``planner.serving``.

A queue simulation is not a cell formula: these figures are computed here, when the workbook is written or refreshed,
and stored in the sheet as numbers (``planner.workbook.load_sheet`` lays them out). For each scenario of the Levers
sheet (``calc.SCENARIOS``), resolved in Python as the Calc sheet's formulas resolve it (``lever_inputs``):

    Levers replicas the Levers sheet's "Replicas for the peak": ``api.peak_fleet`` (1 / (output tokens / throughput at
                    max batch + one whole-context prefill); no queue)
    one request     prompt = context - output tokens, output = the Inputs' output tokens (context is prompt + output)
    the replica     ``serving.load.Replica`` on the scenario's GPUs and precisions, ``max_num_seqs`` = its max batch
                    (the Levers sheet runs each scenario at its max batch), the engine's scheduler
    needed          the fewest replicas whose simulated p99 TTFT and TPOT meet the Inputs' targets at the peak
                    (``serving.fleet.fewest_replicas``, as ``planner export`` sizes a fleet)
    rate            traffic multiple x peak requests/s / replicas, for each of ``LOAD_MULTIPLES``; replicas: the
                    needed ones (the review's Latency sheet draws its fleet the same way), the Levers sheet's where
                    no targets are given or none meet them
    figures         p50 and p99 TTFT and TPOT of 1,000 Poisson requests per rate
                    (``serving.fleet.sweep_within_capacity``); None past the replica's capacity

Assumption: the Inputs' targets apply to the p99 of these requests (the Levers sheet compares one whole-context
prompt's TTFT and the decode step at max batch with them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from planner import api
from planner.catalog import Catalog
from planner.engines.profiles import EngineProfile
from planner.errors import PlannerError
from planner.export.evaluate import LOAD_CURVE
from planner.serving.benchmark import SCHEDULERS
from planner.serving.fleet import fewest_replicas, sweep_within_capacity
from planner.serving.load import LoadResult, Replica
from planner.workbook.calc import SCENARIOS
from planner.workbook.catalog_sheets import gqa_sibling

#: Traffic on the Load sheet, as multiples of the Inputs' peak requests/s (spread over each scenario's replicas): the
#: review's latency-against-load multiples.
LOAD_MULTIPLES = LOAD_CURVE
#: The percentile the sheet reports beside the median, and sizes the "needed" replicas on.
HIGH_PERCENTILE = 99
#: The Inputs a Load sheet is computed from (``default_inputs`` keys); other inputs (price, batch) do not change it.
LOAD_INPUT_KEYS = (
    "gpu",
    "model",
    "context",
    "kv_precision",
    "weight_precision",
    "gpus",
    "memory_utilization",
    "compare_model",
    "peak_requests_per_s",
    "output_tokens",
    "tpot_target_ms",
    "ttft_target_ms",
)


@dataclass(frozen=True)
class LeverLoad:
    """One Levers scenario under traffic: what it evaluates, its fleet, and its simulated runs (None past capacity).

    ``error``: why nothing was simulated (a scenario that does not fit, a blank input), else None."""

    key: str
    header: str
    inputs: dict[str, Any]
    error: str | None = None
    max_batch: int | None = None
    replicas: int | None = None  # the Levers sheet's replicas for the peak
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    needed_replicas: int | None = None  # the fewest whose simulated p99 meet the targets
    needed_note: str = ""  # why ``needed_replicas`` is None
    rates_per_s: tuple[float, ...] = ()  # per replica (the needed ones, else the Levers'), one per LOAD_MULTIPLES
    runs: tuple[LoadResult | None, ...] = ()

    @property
    def curve_replicas(self) -> int | None:
        """The replicas the traffic is spread over: the needed ones, else the Levers sheet's."""
        return self.needed_replicas if self.needed_replicas is not None else self.replicas


@dataclass(frozen=True)
class LoadFigures:
    """Every scenario's figures, and the inputs and engine they were computed from."""

    inputs: dict[str, Any]  # LOAD_INPUT_KEYS
    engine: str
    levers: tuple[LeverLoad, ...]
    ttft_target_s: float | None
    tpot_target_s: float | None
    note: str = ""  # why no scenario was simulated (no peak traffic), else ""


def _number(value: Any) -> float | None:
    """An optional numeric input: None when blank or not a positive number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        return None
    return float(value)


def lever_inputs(inputs: dict[str, Any], key: str, catalog: Catalog, engine: EngineProfile) -> dict[str, Any]:
    """The inputs a Levers scenario evaluates, as the Calc sheet's lever formulas define them (``calc.calc_rows``):
    the baseline's GPU group ``n`` (``memory_plan``'s choice) for every lever but "More GPUs" (the next group vLLM
    accepts, ``api.next_tp_size``); half the context; the compare model (blank: the GQA sibling); fp8 KV cache; fp8
    weights. Raises the PlannerError the baseline's (or the lever's) inputs raise."""
    s = {k: inputs.get(k) for k in ("gpu", "model", "context", "kv_precision", "weight_precision", "gpus")}
    mu = inputs.get("memory_utilization")
    n = int(
        api.memory_plan(
            s["gpu"], s["model"], s["context"], kv_precision=s["kv_precision"], gpus=s["gpus"],
            weight_precision=s["weight_precision"], memory_utilization=mu, engine=engine, catalog=catalog,
        ).gpus
    )  # fmt: skip
    s["gpus"] = api.next_tp_size(s["model"], n, catalog=catalog, engine=engine) if key == "more_gpus" else n
    if key == "context_half":
        s["context"] = max(1, int(s["context"]) // 2)
    elif key == "compare":
        s["model"] = inputs.get("compare_model") or gqa_sibling(catalog.model(s["model"]), list(catalog.models))
    elif key == "kv_fp8":
        s["kv_precision"] = catalog.precision("fp8").name
    elif key == "weights_fp8":
        s["weight_precision"] = catalog.precision("fp8").name
    return s


def scheduler_of(engine: EngineProfile) -> str:
    """The serving simulation's scheduler for an engine profile: its family ("sglang-0.5.1" -> "sglang"), else vLLM's."""
    return next((n for n in SCHEDULERS if engine.name == n or engine.name.startswith(n + "-")), "vllm")


def _lever(
    key: str, header: str, inputs: dict, catalog: Catalog, engine: EngineProfile, calibration: Any, targets: tuple
) -> LeverLoad:
    peak, output = _number(inputs.get("peak_requests_per_s")), _number(inputs.get("output_tokens"))
    try:
        s = lever_inputs(inputs, key, catalog, engine)
    except PlannerError as exc:
        return LeverLoad(key, header, {}, error=str(exc))
    mu = inputs.get("memory_utilization")
    options = dict(
        kv_precision=s["kv_precision"], weight_precision=s["weight_precision"], memory_utilization=mu,
        engine=engine, catalog=catalog, calibration=calibration,
    )  # fmt: skip
    try:
        plan = api.memory_plan(s["gpu"], s["model"], s["context"], gpus=s["gpus"], **options)
        fleet = api.peak_fleet(
            s["gpu"], s["model"], s["context"], peak_requests_per_s=peak, output_tokens=int(output),
            price_per_gpu_hour=0.0, gpus=s["gpus"], **options,  # replicas do not depend on the price
        )  # fmt: skip
    except PlannerError as exc:
        return LeverLoad(key, header, s, error=str(exc))
    batch, replicas = int(plan.max_batch), int(fleet.replicas)
    prompt = int(s["context"]) - int(output)
    if prompt < 1:
        return LeverLoad(
            key, header, s, error=f"a context of {int(s['context']):,} tokens leaves no prompt beside "
            f"{int(output):,} output tokens", max_batch=batch, replicas=replicas,
        )  # fmt: skip
    eng = engine if mu is None else replace(engine, memory_utilization=float(mu), memory_fraction_rule="")
    replica = Replica(
        s["gpu"], s["model"], s["gpus"], scheduler=scheduler_of(engine),
        max_num_seqs=batch, weight_precision=s["weight_precision"], kv_precision=s["kv_precision"],
        engine=eng, calibration=calibration, catalog=catalog,
    )  # fmt: skip
    needed, why = None, "no TTFT or TPOT target on Inputs"
    if targets[0] is not None and targets[1] is not None:
        try:
            needed = fewest_replicas(
                replica, prompt, int(output), peak, percentile=HIGH_PERCENTILE,
                ttft_target_s=targets[0], tpot_target_s=targets[1],
            ).replicas  # fmt: skip
            why = ""
        except PlannerError as exc:
            why = str(exc)
    done = LeverLoad(key, header, s, None, batch, replicas, prompt, int(output), needed, why)
    rates = tuple(m * peak / done.curve_replicas for m in LOAD_MULTIPLES)
    try:
        runs = tuple(sweep_within_capacity(replica, prompt, int(output), rates))
    except PlannerError as exc:
        return replace(done, error=str(exc))
    return replace(done, rates_per_s=rates, runs=runs)


def load_figures(inputs: dict[str, Any], catalog: Catalog, engine: EngineProfile, calibration: Any) -> LoadFigures:
    """Each Levers scenario's replica at ``LOAD_MULTIPLES`` x the Inputs' peak traffic (module docstring), from
    ``inputs`` (``inputs.default_inputs``' keys, or a workbook's Inputs read back)."""
    used = {k: inputs.get(k) for k in LOAD_INPUT_KEYS}
    ms = [_number(inputs.get(k)) for k in ("ttft_target_ms", "tpot_target_ms")]
    targets = tuple(None if v is None else v / 1e3 for v in ms)
    missing = [
        label
        for key, label in (("peak_requests_per_s", "peak traffic"), ("output_tokens", "output tokens per request"))
        if _number(inputs.get(key)) is None
    ]
    if missing:
        return not_computed(f"no {' and no '.join(missing)} on Inputs (a number above 0)", engine, used)
    levers = tuple(_lever(k, h, inputs, catalog, engine, calibration, targets) for k, h, _ in SCENARIOS)
    return LoadFigures(used, engine.name, levers, *targets)


def not_computed(why: str, engine: EngineProfile, inputs: dict[str, Any] | None = None) -> LoadFigures:
    """Figures for a sheet that says why nothing was simulated ("not computed: ..."): no traffic on Inputs, or
    Inputs that could not be read (``inputs`` None: none shown as used, so the Status reads stale)."""
    note = f"not computed: {why}"
    used = {k: (inputs or {}).get(k) for k in LOAD_INPUT_KEYS}
    levers = tuple(LeverLoad(k, h, {}, error=note) for k, h, _ in SCENARIOS)
    return LoadFigures(used, engine.name, levers, None, None, note=note)
