"""What sits between Excel and ``planner.api``: the runtime, the catalog configuration and the evaluation of calls.

No xlwings import here (``planner.excel.functions`` holds the ``@xw.func`` wrappers), so everything is
testable as plain Python. The rules, as a spreadsheet user sees them:

- Every argument may be a cell or a range. Ranges broadcast the way Excel's own array arithmetic does
  (a row against a column gives a table; a single cell goes with anything), and one call computes the
  whole block: the model runs once over arrays, not once per cell.
- Excel hands numbers as floats (8192.0), empty cells as None, ranges as 2-D lists, and names with stray
  case and spaces; numbers typed as text ("8192") count as numbers (cleaning: ``planner.excel.cells``).
- A cell that cannot be computed holds an Excel error, never an exception: ``#N/A`` for an unknown GPU,
  model or precision; ``#NUM!`` for a number out of range or a configuration that does not fit or makes
  no sense; ``#VALUE!`` for an argument of the wrong kind (text where a number belongs, a number where a
  name belongs). ``why`` (``=PLANNER_WHY(...)``) gives the reason as text.
- A cell whose required arguments given as ranges are all empty there gives an empty cell (scenario
  tables with blank rows at the bottom stay tidy); one empty among filled ones is #VALUE!.

Classic Windows UDFs cannot return real error values (xlwings issue #776): there the error is text that
starts with the error code and carries the reason, e.g. ``#N/A: unknown GPU 'H10'; did you mean H100?``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from planner import api
from planner.catalog import Catalog, default_catalog, reload_catalog
from planner.engines.profiles import DEFAULT_ENGINE, ENGINES, engine_profile
from planner.errors import (
    InvalidInputError,
    MissingDataError,
    OutOfRangeError,
    PlannerError,
    UnknownNameError,
    closest_names,
    shown_name,
)
from planner.excel.cells import (  # noqa: F401  (NA, NUM, VALUE, BLANK, MISSING and clean re-exported for callers)
    BLANK,
    MISSING,
    NA,
    NUM,
    VALUE,
    Cells,
    Failure,
    Param,
    _empty,
    _grid,
    _Shape,
    _unwrap,
    clean,
    failure_from,
)
from planner.io.limits import MAX_XLWINGS_CONFIG_BYTES, read_config_text
from planner.io.safetext import MAX_CELL_CHARS
from planner.model import failures
from planner.options import SPECULATION_OPTIONS, option_doc
from planner.units import counted

#: Which Excel runtime calls the functions: "officejs" (xlwings Lite / Server: strings starting with "#"
#: become real error values), "classic" (Windows VBA/COM UDFs: errors become text with the reason),
#: "python" (plain Python, tests: the error codes as strings). Set by ``planner.excel.functions``.
RUNTIME = "python"

#: More distinct failing scenarios than this in one call, when no message is needed, are classified by
#: checking their names instead of re-running each through the model with errors="raise".
RERUN_LIMIT = 64


# -- failures ---------------------------------------------------------------------------------------------


def fit_cells(value: Any) -> Any:
    """A function's result with every text cut to the 32,767 characters a cell holds (ending in "..."), in a
    single value or a spilled table: Excel refuses a longer one (a 40,000-character name came back whole)."""
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[: MAX_CELL_CHARS - 3] + "..."
    if isinstance(value, (list, tuple)):
        return [fit_cells(v) for v in value]
    return value


def render(value: Any, runtime: str | None = None) -> Any:
    """A cell value as the runtime shows it: numbers as they are, failures as error values or text."""
    if isinstance(value, Failure):
        if (runtime or RUNTIME) == "classic":
            return f"{value.code}: {value.message}"
        return value.code
    if value is BLANK:
        return None
    return value


# -- the catalog the functions use ------------------------------------------------------------------------

#: Catalog folders in use in this process: the xlwings config's, then those PLANNER_RELOAD(folder) added;
#: None until the first call reads the config.
_session_folders: tuple[str, ...] | None = None
#: Folders PLANNER_RELOAD(folder) added in this process (kept across reloads, dropped by PLANNER_RELOAD()).
_added_folders: tuple[str, ...] = ()


def config_folders(path: str | None = None) -> tuple[str, ...]:
    """Folders named by ``"PLANNER_CATALOG","..."`` in the xlwings config file (``;``-separated)."""
    if path is None:
        path = xlwings_config_path()
    try:
        text = read_config_text(path, MAX_XLWINGS_CONFIG_BYTES, "an xlwings config file")
        for row in csv.reader(io.StringIO(text, newline="")):
            if len(row) >= 2 and row[0].strip().upper() == "PLANNER_CATALOG":
                return tuple(p.strip() for p in row[1].split(";") if p.strip())
    except (OSError, PlannerError):  # no config, or one that cannot be read: the shipped catalog alone
        pass
    return ()


def xlwings_config_path() -> str:
    """Where xlwings keeps its user config (the same rule as ``xlwings.USER_CONFIG_FILE``, without importing it)."""
    import sys

    home = os.path.expanduser("~")
    if sys.platform.startswith("darwin"):
        return os.path.join(home, "Library", "Containers", "com.microsoft.Excel", "Data", "xlwings.conf")
    return os.path.join(home, ".xlwings", "xlwings.conf")


def catalog() -> Catalog:
    """The catalog for Excel calls: shipped, then $PLANNER_CATALOG, then the user's folder; read once, reused."""
    global _session_folders
    if _session_folders is None:
        _session_folders = config_folders()
    return default_catalog(*_session_folders)


def reload(folder: str | None = None) -> str:
    """Forget the cached catalog and read it again; a one-line summary.

    With ``folder``: the configured folders, those added before, and ``folder`` (added, not replacing them).
    Without: the configured folders only.
    """
    global _session_folders, _added_folders
    added = tuple(dict.fromkeys((*_added_folders, folder))) if folder else ()
    new = tuple(dict.fromkeys((*config_folders(), *added)))
    reload_catalog()
    try:
        cat = default_catalog(*new)
    except PlannerError as exc:
        return f"catalog not reloaded: {exc}"
    _session_folders, _added_folders = new, added
    where = "; ".join(str(f) for f in cat.folders)
    return (
        f"catalog reloaded: {len(cat.gpus)} GPUs, {len(cat.models)} models, {len(cat.precisions)} precisions "
        f"from {where}"
    )


# -- functions ----------------------------------------------------------------------------------------------


def _fleet(name: str) -> Callable[..., Any]:
    """``planner.serving.fleet.<name>``, its simulation imported at the first call (~20 ms) rather than with the Excel
    functions (the percentile functions, REPLICAS and CAPACITY_RPS)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        from planner.serving import fleet

        return getattr(fleet, name)(*args, **kwargs)

    call.__name__ = name
    return call


#: LOADED_RANGE's quantities (``planner.accuracy.loaded_ranges.RANGED_METRICS``: TTFT_P50 / P95 / P99 and
#: TPOT_P50 / P95 / P99 here, ITL as ``plan --rate`` prints it), percentiles and ends, as a cell names them. The
#: percentiles are the serving simulation's (``planner.serving.load.PERCENTILES``): 50 takes the table's p50 row, 90,
#: 95 and 99 its p99 row (``loaded_ranges.quantity_for``, the rule the review workbook and ``plan --rate`` apply).
LOADED_QUANTITIES = ("TTFT", "TPOT", "ITL")
LOADED_PERCENTILES = (50, 90, 95, 99)
LOADED_ENDS = ("low", "high")


def _loaded_end(quantity: Any, percentile: Any, end: Any) -> float:
    """One cell of LOADED_RANGE: measured / predicted at ``end`` of the held-out range a simulated ``percentile`` of
    ``quantity`` takes under steady load, 1 + low (the 10th percentile) or 1 + high (the 90th) of the shipped table's
    row (``planner.accuracy.loaded_ranges.load_loaded_ranges``, arrival ``STEADY``: the TTFT_P* / TPOT_P* functions'
    Poisson requests); the row is ``loaded_ranges.quantity_for``'s: p50's for 50, p99's for 90, 95 and 99 (only p50
    and p99 are tabled; p99 is nearer to p95 and wider at the slow end). Raises ``UnknownNameError`` (#N/A) for an
    unknown quantity or end, ``MissingDataError`` (#N/A) for a figure the table has no range for,
    ``OutOfRangeError`` (#NUM!) for another percentile, ``InvalidInputError`` (#VALUE!) for an empty end
    (``loaded_range_row`` spills both ends of a single call)."""
    from planner.accuracy.loaded_ranges import (
        STEADY,
        NoLoadedRangeError,
        load_loaded_ranges,
        loaded_range,
        quantity_for,
    )

    name = str(quantity).strip().upper()
    if name not in LOADED_QUANTITIES:
        raise UnknownNameError("quantity", quantity, LOADED_QUANTITIES)
    pct = float(percentile)
    if pct not in LOADED_PERCENTILES:
        raise OutOfRangeError(
            "percentile must be 50, 90, 95 or 99 (the serving simulation's; 50 takes the held-out p50 range, "
            f"90, 95 and 99 the p99 range); got {pct:g}"
        )
    if end is None:
        raise InvalidInputError(
            'end is empty; with a range of quantities or percentiles, give end "low" or "high" '
            "(a single call without it spills both ends as a row)"
        )
    side = str(end).strip().lower()
    if side not in LOADED_ENDS:
        raise UnknownNameError("end", end, LOADED_ENDS)
    try:
        r = loaded_range(load_loaded_ranges(), quantity_for(name.lower(), pct), STEADY)
    except NoLoadedRangeError as exc:
        raise MissingDataError(str(exc)) from None
    low, high = r.ratios()
    return low if side == "low" else high


def _loaded_ratio(quantity: Any, percentile: Any, end: Any = None, catalog: Any = None, errors: str = "raise") -> Any:
    """LOADED_RANGE's ``Spec`` call: ``_loaded_end`` cell by cell over broadcast arrays (a float for scalars); a
    refused cell raises, and ``evaluate`` splits a range until each refused cell has its own error. The catalog is
    not read: the table is the shipped one."""
    q, p, e = np.broadcast_arrays(*(np.asarray(x, dtype=object) for x in (quantity, percentile, end)))
    out = np.empty(q.shape)
    for i in np.ndindex(q.shape):
        out[i] = _loaded_end(q[i], p[i], e[i])
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class Spec:
    """An Excel function backed by one ``planner.api`` function."""

    name: str
    api: Callable[..., Any]
    params: tuple[Param, ...]
    scale: float = 1.0  # API unit -> Excel unit (seconds -> milliseconds: 1e3)
    integer: bool = False
    #: The arguments whose sum is one sequence's tokens (("context",); under load prompt + output): the context the
    #: core flags past the model's trained maximum (``planner.api.trained_context_warning``); () for none.
    sequence: tuple[str, ...] = ()
    #: How a cell's number was found, where the arguments change the question (REPLICAS without targets is sized on
    #: capacity): notes PLANNER_WHY gives after "ok", from the cell's cleaned arguments by name (MISSING: left empty).
    notes: Callable[[dict[str, Any]], list[str]] | None = None
    #: notes on the cell's number itself: from its cleaned arguments, its number and the group it ran on
    number_notes: Callable[[dict[str, Any], float, float], list[str]] | None = None
    #: Whether the number is timed on the engine's kernel curves (TPOT, TTFT, the loaded percentiles, the fleet
    #: sizes ...): PLANNER_WHY then warns where the GPU's curves are another GPU's, as ``planner plan`` does
    #: (``kernel_curves_warning``; trial 27 F5). False for memory-only figures (MAX_BATCH, KV_BYTES, ...).
    timed: bool = False


def ok_text(spec: Spec, values: dict[str, Any], group: float | None = None, number: float | None = None) -> str:
    """PLANNER_WHY's reason for a cell that has a number: "ok"; "ok: on 4 x H100 SXM 80GB, the smallest group ..."
    where the cell left ``gpus`` empty and the function chose the group (``group``, from ``chosen_gpus``:
    ``group_note``); then "; warning: ..." where the core flags the scenario, as ``planner plan`` prints the same flag
    beside its figures: a sequence past the model's trained maximum (``planner.api.trained_context_warning``, the one
    rule; computed, not refused); then the spec's notes on how the number was found (``Spec.notes``), each after "; ".
    ``values``: the cell's cleaned arguments by name."""
    parts = ["ok"]
    if group is not None and group == group:
        note = group_note(spec, values, group)
        parts = [f"ok: {note}" if note else "ok"]
    warning = _trained_context_warning(spec, values)
    if warning:
        parts.append(f"warning: {warning}")
    curves = kernel_curves_warning(spec, values)
    if curves:
        parts.append(f"warning: {curves}")
    if spec.notes is not None:
        parts += spec.notes(values)
    if spec.number_notes is not None and number is not None:
        on = values.get("gpus", MISSING)
        parts += spec.number_notes(values, number, group if on is MISSING else on)
    return "; ".join(parts)


def kernel_curves_warning(spec: Spec, values: dict[str, Any]) -> str:
    """``planner plan``'s "kernel curves not measured on MI355X: ..." (``planner.engines.kernel_curves.curves_note``,
    for an engine timed on kernel curves) for a ``Spec.timed`` cell's GPU and engine (blank: the default engine);
    "" where the curves are the GPU's own, the function is not timed or an argument cannot be read (the cell's own
    error says that)."""
    from planner.engines.kernel_curves import curves_note

    if not spec.timed or not isinstance(values.get("gpu"), str):
        return ""
    engine = values.get("engine", MISSING)
    try:
        gpu = catalog().gpu(values["gpu"])
        eng = engine_profile(DEFAULT_ENGINE if engine is MISSING else engine)
    except (PlannerError, KeyError, TypeError, ValueError):
        return ""
    return curves_note(gpu.name, gpu.architecture) if eng.kernel_curves else ""


def _trained_context_warning(spec: Spec, values: dict[str, Any]) -> str | None:
    """``planner.api.trained_context_warning`` for the cell's sequence (None where it has none or it cannot be read)."""
    if not spec.sequence or not isinstance(values.get("model"), str):
        return None
    try:
        model = catalog().model(values["model"])
        tokens = sum(float(values[name]) for name in spec.sequence)
    except (PlannerError, KeyError, TypeError, ValueError):
        return None
    return api.trained_context_warning(model, tokens)


def precision_notes(values: dict[str, Any]) -> list[str]:
    """Which precision each of the KV cache and the weights is, where a cell gave either: "KV cache fp8 (given);
    weights fp16 (as published)", so that "fp8" in MAX_BATCH's fourth argument, the KV cache's, is not read as the
    weights' (trial 19 F6: 2 sequences where fp8 weights hold 26). Nothing where neither was given or the model does
    not resolve."""
    from planner.catalog.resolve import default_kv_precision

    kv, weights = values.get("kv_precision", MISSING), values.get("weight_precision", MISSING)
    if kv is MISSING and weights is MISSING:
        return []
    try:
        model = catalog().model(values["model"])
        kv_name = f"{catalog().precision(kv).name} (given)" if kv is not MISSING else None
        w_name = f"{catalog().precision(weights).name} (given)" if weights is not MISSING else None
    except (PlannerError, KeyError, TypeError):
        return []
    kv_name = kv_name or f"{default_kv_precision(model)} (the activation dtype)"
    w_name = w_name or f"{model.native_precision} (as published)"
    return [f"KV cache {kv_name}, weights {w_name}"]


#: PLANNER_WHY's note on a decode figure whose batch was left empty (``batch_notes``).
BATCH_ONE_NOTE = (
    "at batch 1 (batch left empty: one sequence at a time); planner plan and the what-if workbook quote throughput and "
    "cost at the max batch the engine serves: give it as batch for a loaded server"
)


def batch_notes(values: dict[str, Any]) -> list[str]:
    """A decode figure's batch where the cell left it empty: 1, one sequence at a time, which is not the loaded
    server ``planner plan`` and the what-if workbook price (COST_PER_MTOK of Llama 2 70B at 4,096 tokens on H100:
    $59 a million tokens at batch 1, $1.20 at the 117 four GPUs serve: trial 19 F5)."""
    return [BATCH_ONE_NOTE] if values.get("batch", MISSING) is MISSING else []


#: PLANNER_WHY's note on every COST_PER_MTOK number: what it is (``planner.api.COST_PER_MTOK_BASIS``, the words of
#: ``planner plan --json``'s basis) and where the all-in rate is (trial 30 F7: $0.10 where the review's all-in rate for
#: the same service was $1.56).
COST_BASIS_NOTE = (
    f"{api.COST_PER_MTOK_BASIS}: not a budget rate; planner export gives the all-in $ per million output tokens "
    "(prompts, the traffic's idle time, margin and spare replicas)"
)


def cost_notes(values: dict[str, Any]) -> list[str]:
    """COST_PER_MTOK's notes: ``COST_BASIS_NOTE``, then a decode figure's (``decode_notes``)."""
    return [COST_BASIS_NOTE, *decode_notes(values)]


def decode_notes(values: dict[str, Any]) -> list[str]:
    """A decode figure's notes: the batch it is at where left empty (``batch_notes``), then the precisions
    (``precision_notes``)."""
    return batch_notes(values) + precision_notes(values)


def ridge_notes(values: dict[str, Any]) -> list[str]:
    """Which math RIDGE's number is, where it is not the precision's own: a weight-only format's (int4: the matrix
    math runs at 16 bits), a 4-bit format's own math (nvfp4, mxfp4: fp4 on Blackwell, W4A4), or the GPU's stand-in for
    math it lacks (nvfp4 on H100: bf16, the format weight-only there; bf16 on a T4: fp16, in which engines run bf16
    weights there). Nothing where the names do not resolve."""
    from planner.catalog.resolve import gpu_peak_key

    try:
        gpu = catalog().gpu(values["gpu"])
        precision = catalog().precision("bf16" if values.get("precision", MISSING) is MISSING else values["precision"])
    except (PlannerError, KeyError, TypeError):
        return []
    used = gpu_peak_key(gpu, precision)
    notes = []
    weight_only = precision.math in ("fp16", "bf16", "fp32")  # dequantized into 16-bit math (int4, w8a16)
    if precision.math != precision.name and weight_only:
        notes.append(f"{precision.name} is a weight-only format: the matrix math runs in {precision.math}")
    elif precision.math != precision.name:  # nvfp4, mxfp4: the math itself in fp4 where the GPU has it (W4A4)
        notes.append(
            f"{precision.name} is a 4-bit format: on GPUs with {precision.math} tensor cores (Blackwell) this is the "
            f"ridge of {precision.math} math, weights and activations in {precision.math} (W4A4)"
        )
    if used != precision.math:
        notes.append(
            f"{gpu.name} has no {precision.math} tensor cores: this is the ridge of its {used} math"
            + ("" if weight_only else f" (weight-only there: the weights are dequantized to {used})")
        )
    return notes


def cell_engine(values: dict[str, Any]) -> Any:
    """The engine a cell names (its ``engine`` argument), or None where it left it empty: the API's default, vLLM."""
    engine = values.get("engine", MISSING)
    return None if engine is MISSING else engine


def max_batch_notes(values: dict[str, Any], held: float, gpus: float | None) -> list[str]:
    """MAX_BATCH is what memory holds (``held`` sequences on ``gpus``); where that is more than the cell's engine (blank:
    vLLM) runs at once on the group (its max_num_seqs, ``planner.api.engine_sequence_limit``), say so: ``planner plan``
    serves and times the smaller batch (``planner.api.served_batch``). Nothing where the names do not resolve."""
    layout = values.get("parallelism", MISSING)
    try:
        gpu = catalog().gpu(values["gpu"])
        engine = engine_profile(cell_engine(values))
        limit = api.engine_sequence_limit(
            engine, gpu, api.check_parallelism(None if layout is MISSING else layout), float(gpus)
        )
    except (PlannerError, KeyError, TypeError, ValueError):
        return []
    smaller = smaller_group_notes(values, gpus)
    if not held > limit:
        return smaller
    return [
        f"memory holds {int(held):,} sequences, but {engine.name} runs at most {limit:,} at once on {gpu.name} (its "
        f"max_num_seqs): planner plan serves and times {limit:,}",
        *smaller,
    ]


def smaller_group_notes(values: dict[str, Any], gpus: float | None) -> list[str]:
    """Where a MAX_BATCH cell left ``gpus`` empty and gave a precision, and the group chosen for it (``gpus``) is
    smaller than the one the default precisions would choose (``chosen_gpus`` without them), say so: fp8 KV in the
    fourth argument put Llama 3.3 70B at 16,384 tokens on 2 x H100 holding 1 sequence, where the default's 4 GPUs
    hold 27 (trial 30 F8: "fp8 makes it 27x worse" side by side). Nothing otherwise, or on any failure."""
    given = [k for k in ("kv_precision", "weight_precision") if values.get(k, MISSING) is not MISSING]
    if values.get("gpus", MISSING) is not MISSING or not given or gpus is None or not gpus == gpus:
        return []
    spec = SPECS["MAX_BATCH"]
    kwargs = {
        p.keyword: values[p.name]
        for p in spec.params
        if values.get(p.name, MISSING) is not MISSING and p.name not in given
    }
    default = chosen_gpus(spec, kwargs)
    if not default == default or not float(default) > float(gpus):
        return []
    n = int(default)
    return [f"fewer GPUs than at the default precision ({n}): give gpus={n} to compare like for like"]


def spread_notes(values: dict[str, Any], default_percentile: float = 95.0) -> list[str]:
    """Where a high length is given (``prompt_tokens_high`` / ``output_tokens_high``), that each request's lengths
    were drawn, as ``planner plan --rate``'s "lengths:" line says it: the highs at their percentile (``length_percentile``,
    else the targets' ``percentile``, else ``default_percentile``; the core's rule, ``length_percentile_of``). Nothing
    where neither is given."""
    given = [
        (what, values[name])
        for what, name in (("prompt", "prompt_tokens_high"), ("output", "output_tokens_high"))
        if values.get(name, MISSING) is not MISSING
    ]
    if not given:
        return []
    from planner.serving.length_options import length_percentile_of

    percentile, length_q = (values.get(n, MISSING) for n in ("percentile", "length_percentile"))
    q = length_percentile_of(
        default_percentile if percentile is MISSING else percentile, None if length_q is MISSING else length_q
    )
    highs = ", ".join(f"{what} p{float(q):g} {float(h):,.0f}" for what, h in given)
    limit = values.get("context", MISSING)
    cut = "" if limit is MISSING else f", cut to context {float(limit):,.0f} as plan --context cuts them"
    return [
        f"lengths drawn around the means ({highs} tokens; seeded){cut}, as planner plan --rate --prompt-tokens-high "
        "--output-tokens-high draws them"
    ]


def load_notes(values: dict[str, Any]) -> list[str]:
    """The percentile functions' notes: the lengths' spread (``spread_notes`` at plan's default --percentile, 95)."""
    return spread_notes(values)


def load_spread_notes(name: str, values: dict[str, Any], number: float, group: float) -> list[str]:
    """Beside a percentile function's number (``name``: TTFT_P99 ...): the same percentile over the rate's arrival
    draws (``planner.serving.fleet.sampling_spread``, the draws ``draws_edge`` runs for REPLICAS' edge warning), in
    the words of ``fleet.spread_note``: the cell's number is one draw's (seed 0), and another sample of the same
    traffic lands about this far either way. Run here, not in the cell (five draws more); nothing on any failure (a
    note beside a number, not a result)."""
    spec = SPECS[name]
    kwargs = {p.keyword: values[p.name] for p in spec.params if values.get(p.name, MISSING) is not MISSING}
    try:
        from planner.serving import fleet

        spreads: list = []
        spec.api(**kwargs, catalog=catalog(), errors="raise", spreads=spreads)
        return [fleet.spread_note(spreads[-1], name.split("_")[0].lower())]
    except Exception:  # noqa: BLE001 - a note beside a number, not worth an error
        return []


def replicas_notes(values: dict[str, Any]) -> list[str]:
    """How REPLICAS found its number, as ``planner plan --rate`` says it beside its fleet: with neither target given,
    sized on capacity alone (the fewest replicas each below one replica's capacity, ``fewest_replicas``); with one
    output token a request and no TPOT (none after the first), sized on TTFT alone; then the lengths' spread where
    a high length is given (``spread_notes``)."""
    return _sizing_notes(values) + spread_notes(values)


def _sizing_notes(values: dict[str, Any]) -> list[str]:
    """``replicas_notes`` before the lengths' spread."""
    ttft, tpot = (values.get(name, MISSING) is not MISSING for name in ("ttft_target_s", "tpot_target_s"))
    if not (ttft or tpot):
        return [
            "no TTFT or TPOT target given, so sized on capacity: the fewest replicas each taking less than one "
            "replica's capacity (CAPACITY_RPS)"
        ]
    output = values.get("output_tokens")
    if not tpot and isinstance(output, float):
        from planner.serving.fleet import NO_TPOT_WITH_ONE_TOKEN, one_output_token

        if one_output_token(output):
            return [f"sized on TTFT alone: {NO_TPOT_WITH_ONE_TOKEN}"]
    return []


#: PLANNER_WHY's note beside every REPLICAS and FLEET_GPUS number: the fleet the targets need, not a budget's (trial
#: 30 F4: a sheet of FLEET_GPUS x price understated the review's budget by 40-60%).
BEFORE_MARGIN_NOTE = (
    "before the latency margin and spare replicas; planner export adds them (and whole nodes) for a budget's fleet"
)


def replicas_number_notes(values: dict[str, Any], replicas: float, group: float) -> list[str]:
    """Beside REPLICAS' number: where a TTFT target sits close to a nearly idle replica's TTFT, that the target, not
    the traffic, sets the fleet (``planner.serving.fleet.near_ttft_floor``, as ``planner plan --rate`` and ``planner
    export`` say it); where the fleet sits at its targets' edge (some arrival draws miss them), plan's warning
    (``replicas_edge_notes``); then ``replicas_group_notes``; then ``BEFORE_MARGIN_NOTE``."""
    return (
        replicas_floor_notes(values)
        + replicas_edge_notes(values, group)
        + replicas_group_notes(values, replicas, group)
        + [BEFORE_MARGIN_NOTE]
    )


def edge_notes(edges: list, gpus: float) -> list[str]:
    """``planner plan --rate``'s warning that the fleet sits at its targets' edge (``planner.serving.fleet.draws_edge``,
    the one computation: "4 of 5 arrival draws of this traffic miss the p95 targets at 2 replicas ...; 3 replicas (12
    GPUs) meet them in every draw"), from the last ``DrawsEdge`` in ``edges`` on replicas of ``gpus`` GPUs; nothing
    where every draw meets or none was found."""
    if not edges or not gpus == gpus:
        return []
    warning = edges[-1].warning(int(gpus))
    return [f"warning: {warning}"] if warning else []


def replicas_edge_notes(values: dict[str, Any], group: float) -> list[str]:
    """``edge_notes`` of REPLICAS' fleet for ``values`` (the sizing run again, its runs kept, then the arrival
    draws); nothing on any failure (a note beside a number, not a result)."""
    edges: list = []
    _replicas_again(values, "replicas_needed", "edges", edges)
    return edge_notes(edges, group)


def replicas_floor_notes(values: dict[str, Any]) -> list[str]:
    """``near_ttft_floor`` of REPLICAS' sizing for ``values`` (the simulation run again: its setups are kept), or
    nothing (no TTFT target, or any failure: a note beside a number, not a result)."""
    if values.get("ttft_target_s", MISSING) is MISSING:
        return []
    from planner.serving import fleet

    sized = _replicas_again(values, "replicas_needed", "sizings")
    floor = fleet.near_ttft_floor(sized) if sized is not None else ""
    return [f"warning: {floor}"] if floor else []


def _replicas_again(values: dict[str, Any], function: str, collect: str, seen: list | None = None) -> Any:
    """The REPLICAS arguments ``values`` run again through ``planner.serving.fleet``'s ``function``, collecting what
    it appends to its ``collect`` list (a ``Sizing``, a ``GroupChoice``, a ``DrawsEdge``; into ``seen`` where given):
    the last, or None on any failure (a note beside a number, not a result)."""
    spec = SPECS["REPLICAS"]
    kwargs = {p.keyword: values[p.name] for p in spec.params if values.get(p.name, MISSING) is not MISSING}
    try:
        from planner.serving import fleet

        seen = [] if seen is None else seen
        getattr(fleet, function)(**kwargs, catalog=catalog(), errors="raise", **{collect: seen})
        return seen[-1]
    except Exception:  # noqa: BLE001 - a note beside a number, not worth an error
        return None


def replicas_group_notes(values: dict[str, Any], replicas: float, group: float) -> list[str]:
    """With gpus left empty, REPLICAS sizes the smallest group holding a request; where a larger group's fleet needs
    fewer GPUs in all (FLEET_GPUS' choice for the same arguments: ``planner.serving.fleet.fleet_gpus_needed``, as
    ``planner plan --rate`` without ``--gpus`` chooses), say which and how many: "2 GPUs a replica need 11 x 2 = 22
    GPUs where this needs 413 x 1 = 413 (give gpus 2)". Nothing where gpus was given, or on any failure (a note, not
    a result)."""
    if values.get("gpus", MISSING) is not MISSING or not group == group or not replicas == replicas:
        return []
    choice = _replicas_again(values, "fleet_gpus_needed", "choices")
    if choice is None:
        return []
    k, n = choice.sizing.replicas, choice.gpus_per_replica
    if n == int(group) or k * n >= int(replicas) * int(group):
        return []
    return [
        f"{n} GPUs a replica need fewer GPUs in all: {k:,} x {n} = {k * n:,} where this needs {int(replicas):,} x "
        f"{int(group)} = {int(replicas) * int(group):,} (give gpus {n}; planner plan --rate without --gpus chooses it)"
    ]


def fleet_gpus_notes(values: dict[str, Any]) -> list[str]:
    """How FLEET_GPUS found its number: the group kept and each group tried, as ``planner plan --rate`` lists them
    ("11 replicas of 2 GPUs, the fewest GPUs of the groups tried: 1 -> 413, 2 -> 22, 4 -> 28, 8 -> 40"), plan's
    warning where the fleet sits at its targets' edge (``edge_notes``), REPLICAS' notes (sized on capacity, or on TTFT
    alone), then ``BEFORE_MARGIN_NOTE``. Only the last two where the choice cannot be found again."""
    spec = SPECS["FLEET_GPUS"]
    kwargs = {p.keyword: values[p.name] for p in spec.params if values.get(p.name, MISSING) is not MISSING}
    try:
        from planner.serving import fleet

        seen: list = []
        edges: list = []
        fleet.fleet_gpus_needed(**kwargs, catalog=catalog(), errors="raise", choices=seen, edges=edges)
        choice = seen[-1]
    except Exception:  # noqa: BLE001 - a note beside a number, not worth an error
        return [*replicas_notes(values), BEFORE_MARGIN_NOTE]
    tried = "; ".join(
        f"{t.gpus_per_replica} -> {t.gpus:,}"
        if t.replicas
        else f"{t.gpus_per_replica} -> " + ("not needed" if t.reason.startswith("not tried") else "none meets")
        for t in choice.tried
    )
    gpu = catalog().gpu(values["gpu"]).name
    head = (
        f"{counted(choice.sizing.replicas, 'replica')} of {choice.gpus_per_replica} x {gpu}, the fewest GPUs of the groups "
        f"tried ({tried})"
    )
    return [head, *edge_notes(edges, choice.gpus_per_replica), *replicas_notes(values), BEFORE_MARGIN_NOTE]


# -- the group a cell without gpus ran on ---------------------------------------------------------------------

#: The options of ``planner.api.min_gpus`` a cell can give (``planner.options.BatchOptions``): the group is chosen
#: from the same ones the function's own call read.
_GROUP_OPTIONS = ("batch", "kv_precision", "weight_precision", "memory_utilization", "parallelism", "engine")


def chooses_group(spec: Spec) -> bool:
    """Whether ``spec`` takes an optional ``gpus``: left empty, the function runs on a group it chooses."""
    return any(p.name == "gpus" for p in spec.params)


def _whole_tokens(x: Any) -> Any:
    """Mean lengths in the whole tokens each request sends (``planner.serving.load.fixed_length_tokens``: rounded
    half to even, at least 1), over arrays too."""
    from planner.serving.load import fixed_length_tokens

    if isinstance(x, np.ndarray):
        return np.array([float(fixed_length_tokens(v)) for v in x.tolist()])
    return float(fixed_length_tokens(x))


def _sequence_parts(spec: Spec, values: dict[str, Any]) -> list[Any]:
    """One sequence's tokens as the function sized the group for it, in parts: the context (TTFT: the prompt), or
    under load one request's prompt and output in whole tokens (``_whole_tokens``), as a simulated replica is sized."""
    mean = {p.name for p in spec.params if p.mean}
    return [_whole_tokens(values[n]) if n in mean else values[n] for n in spec.sequence]


def chosen_gpus(spec: Spec, kwargs: dict[str, Any]) -> Any:
    """The group a call without ``gpus`` ran on, per scenario of ``kwargs`` (the call's own keywords, arrays or
    values): ``planner.api.min_gpus`` over the same GPU, model, sequence (``_sequence_parts``) and options, the rule
    the function applied (``planner.deploy.choose_gpus``: the smallest valid group of 1, 2, 4, 8 ... holding the
    weights and ``batch`` sequences; under load one request, as ``planner.serving.benchmark`` sizes a replica).
    NaN where there is none, or where the group cannot be found again (the reason then says "ok" alone, never an
    error: the cell has its number)."""
    opts = {k: v for k, v in kwargs.items() if k in _GROUP_OPTIONS}
    try:
        parts = _sequence_parts(spec, kwargs)
        tokens = sum(parts[1:], parts[0])
        with np.errstate(all="ignore"):
            return api.min_gpus(kwargs["gpu"], kwargs["model"], tokens, **opts, catalog=catalog(), errors="coerce")
    except Exception:  # noqa: BLE001 - a note beside a number, not worth an error
        return np.nan


def group_note(spec: Spec, values: dict[str, Any], group: float) -> str:
    """What PLANNER_WHY says of a group the function chose: "on 4 x H100 SXM 80GB, the smallest group that holds the
    weights and 4 sequences of 8,192 tokens (give gpus to fix it)"; under load "a replica on ...", its sequence one
    request's prompt + output tokens. "" where the names do not resolve (the cell then has no number)."""

    try:
        gpu = catalog().gpu(values["gpu"]).name
        batch = values.get("batch", MISSING)
        batch = 1.0 if batch is MISSING else float(batch)
        parts = [float(t) for t in _sequence_parts(spec, values)]
    except (PlannerError, KeyError, TypeError, ValueError):
        return ""
    tokens = " + ".join(f"{t:,.0f}" for t in parts)
    tokens = f"{tokens} tokens" if len(parts) > 1 or tokens != "1" else "1 token"
    where = "a replica on" if len(parts) > 1 else "on"
    return (
        f"{where} {group:,.0f} x {gpu}, the smallest group that holds the weights and "
        f"{counted(batch, 'sequence', ',.0f')} of {tokens} (give gpus to fix it)"
    )


def _fail_all(result: Failure, why: bool) -> Any:
    return result.message if why else render(result)


def _finish_value(v: float, spec: Spec) -> Any:
    if not math.isfinite(v):
        return Failure(NUM, f"{spec.name} has no finite value for these arguments")
    v = v * spec.scale
    return int(v) if spec.integer else v


def _api_call(spec: Spec, kwargs: dict[str, Any], errors: str) -> Any:
    with np.errstate(all="ignore"):
        return spec.api(**kwargs, catalog=catalog(), errors=errors)


def _scalar(spec: Spec, values: Sequence[Any]) -> Any:
    """One scenario of cleaned values (MISSING allowed for optional ones): a number or a Failure."""
    kwargs = {}
    for p, v in zip(spec.params, values, strict=True):
        if v is MISSING:
            if p.required:
                return _empty(p)
            continue
        kwargs[p.keyword] = v
    try:
        result = _api_call(spec, kwargs, "raise")
        return _finish_value(float(result), spec)
    except Exception as exc:  # noqa: BLE001 - a cell shows an error, never an exception
        return failure_from(exc)


def evaluate(spec: Spec, args: Sequence[Any], why: bool = False) -> Any:
    """Call ``spec`` as Excel does: cells or ranges in, a value or a spilled list of lists out.

    ``why=True`` gives, per cell, the reason it has no number ("ok" where it has one).
    """
    try:
        return _evaluate(spec, list(args), why)
    except Exception as exc:  # noqa: BLE001 - last line of defence: never raise into Excel
        f = failure_from(exc)
        return _fail_all(f, why)


def _evaluate(spec: Spec, args: list[Any], why: bool) -> Any:
    args = args + [None] * (len(spec.params) - len(args))
    args = [_unwrap(a) for a in args]
    # fast path: one scenario
    if not any(isinstance(a, (list, tuple, np.ndarray)) for a in args):
        values = [clean(a, p) for a, p in zip(args, spec.params, strict=True)]
        bad = next((v for v in values if isinstance(v, Failure)), None)
        result = bad or _scalar(spec, values)
        if why:
            if isinstance(result, Failure):
                return result.message
            by_name = {p.name: v for p, v in zip(spec.params, values, strict=True)}
            group = None
            if chooses_group(spec) and by_name["gpus"] is MISSING:
                kwargs = {p.keyword: v for p, v in zip(spec.params, values, strict=True) if v is not MISSING}
                group = float(chosen_gpus(spec, kwargs))
            return ok_text(spec, by_name, group, float(result))
        return render(result)
    try:
        grids = [_grid(a) for a in args]
        arrays = [g for g in grids if isinstance(g, np.ndarray)]
        shape = np.broadcast_shapes(*(g.shape for g in arrays))
    except _Shape as exc:
        return _fail_all(Failure(VALUE, f"{spec.name} got {exc}"), why)
    except ValueError:
        sizes = " and ".join(f"{g.shape[0]}x{g.shape[1]}" for g in arrays)
        return _fail_all(
            Failure(
                VALUE,
                f"{spec.name} got ranges of {sizes} cells that do not line up; give ranges "
                "of the same size, a single row or column, or a single cell",
            ),
            why,
        )
    cells = _Block(spec, grids, shape, why)
    out = cells.run()
    if shape == (1, 1):
        return out[0][0]
    return out


class _Block(Cells):
    """One call over ranges: the cleaned arguments (``Cells``), then the model over the good rows."""

    def __init__(self, spec: Spec, grids: list[Any], shape: tuple[int, int], why: bool):
        super().__init__(spec.params, grids, shape)
        self.spec, self.why = spec, why

    def run(self) -> list[list[Any]]:
        has_failure = ~np.equal(self.failure, None)
        has_missing = ~np.equal(self.missing_required, None)
        ok = ~(self.blank_rows | has_failure | has_missing)
        for i in np.flatnonzero(~ok):
            if self.blank_rows[i]:
                self.result[i] = BLANK
            elif has_failure[i]:
                self.result[i] = self.failure[i]
            else:
                p = self.missing_required[i]
                self.result[i] = _empty(p)
        # rows with the same optional arguments left empty go to the model together
        for rows, dropped in self._by_pattern(ok):
            self._solve(rows, dropped)
        done = ok & np.isfinite(self.numbers)
        return self._assemble(done)

    def _by_pattern(self, among: np.ndarray):
        """(rows, names of the optional arguments they left empty) for each pattern of empty optional arguments
        among the rows where ``among`` holds, and within it for each distinct value of the arguments the API takes one
        of per call (``Param.per_call``: a range of engines runs as one call per engine)."""
        optional = [p for p in self.spec.params if not p.required]
        pattern = np.zeros(self.n, dtype=np.int64)
        for k, miss in enumerate(self.missing_optional):
            pattern += np.broadcast_to(miss, (self.n,)).astype(np.int64) << k
        per_call = [v for p, v in zip(self.spec.params, self.values, strict=True) if p.per_call]
        per_call = [v for v in per_call if isinstance(v, np.ndarray)]
        for code in np.unique(pattern[among]):
            rows = np.flatnonzero(among & (pattern == code))
            dropped = {p.name for k, p in enumerate(optional) if code >> k & 1}
            if not per_call:
                yield rows, dropped
                continue
            groups: dict[tuple, list[int]] = {}
            for r in rows.tolist():
                key = tuple(v[r] for v in per_call)  # cleaned names: text, or MISSING where left empty
                groups.setdefault(key, []).append(r)
            for same in groups.values():
                yield np.asarray(same, dtype=np.intp), dropped

    def _chosen_groups(self, done: np.ndarray) -> np.ndarray:
        """Per row, the group the function chose where the row left ``gpus`` empty and has a number (NaN elsewhere):
        ``chosen_gpus`` once per pattern of empty optional arguments, over its rows at once."""
        out = np.full(self.n, np.nan)
        if not chooses_group(self.spec):
            return out
        optional = [p.name for p in self.spec.params if not p.required]
        chose = done & np.broadcast_to(self.missing_optional[optional.index("gpus")], (self.n,))
        for rows, dropped in self._by_pattern(chose):
            out[rows] = np.broadcast_to(chosen_gpus(self.spec, self._kwargs(rows, dropped)), rows.shape)
        return out

    def _kwargs(self, rows: np.ndarray, dropped: set[str]) -> dict[str, Any]:
        """The API keywords of ``rows``: each argument's values there, one value for a ``per_call`` argument (the rows
        share it, ``_by_pattern``)."""
        kw = {}
        for p, v in zip(self.spec.params, self.values, strict=True):
            if p.name in dropped:
                continue
            if isinstance(v, np.ndarray):
                kw[p.keyword] = v[rows[0]] if p.per_call else v[rows]
            elif v is not MISSING:
                kw[p.keyword] = v
        return kw

    def _solve(self, rows: np.ndarray, dropped: set[str]) -> None:
        """Run the model over ``rows`` (errors="coerce"); split in halves when an argument value is refused."""
        try:
            with failures.collect() as notes:
                res = _api_call(self.spec, self._kwargs(rows, dropped), "coerce")
            res = np.broadcast_to(np.asarray(res, dtype=float), rows.shape)
        except Exception as exc:  # noqa: BLE001 - an out-of-range number refuses the whole array
            if len(rows) == 1:
                self.result[rows[0]] = failure_from(exc)
                return
            mid = len(rows) // 2
            self._solve(rows[:mid], dropped)
            self._solve(rows[mid:], dropped)
            return
        self.numbers[rows] = res
        failed = ~np.isfinite(res)
        if failed.any():
            reasons = notes.reasons(rows.shape)[failed]
            self._explain(rows[failed], dropped, reasons)

    def _explain(self, rows: np.ndarray, dropped: set[str], reasons: np.ndarray) -> None:
        """The Excel error (and reason) of each failed row: the error the API noted for it in bulk
        (``planner.model.failures``); a row without one (a number that is not finite) re-runs with errors="raise"."""
        made: dict[int, Failure] = {}
        for r, exc in zip(rows.tolist(), reasons.tolist(), strict=True):
            if exc is not None:
                key = id(exc)
                self.result[r] = made[key] if key in made else made.setdefault(key, failure_from(exc))
        rerun = rows[np.equal(reasons, None)]
        seen: dict[tuple, Failure] = {}
        need_text = self.why or RUNTIME == "classic"
        for r in rerun:
            kw = self._kwargs(np.array([r]), dropped)
            kw = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
            key = tuple(sorted(kw.items()))
            if key not in seen:
                if need_text or len(seen) < RERUN_LIMIT:
                    try:
                        value = _finish_value(float(_api_call(self.spec, kw, "raise")), self.spec)
                    except Exception as exc:  # noqa: BLE001
                        value = failure_from(exc)
                else:
                    value = self._quick_failure(kw)
                seen[key] = value
            self.result[r] = seen[key]

    def _quick_failure(self, kw: dict[str, Any]) -> Failure:
        """#N/A when a name is unknown, else #NUM!: the code without re-running the model (messages not shown)."""
        cat = catalog()
        look_up = {"gpu": cat.gpu, "model": cat.model, "precision": cat.precision, "engine": engine_profile}
        for p in self.spec.params:
            if p.keyword in kw and p.kind in look_up:
                try:
                    look_up[p.kind](kw[p.keyword])
                except PlannerError as exc:
                    return failure_from(exc)
        return Failure(NUM, f"{self.spec.name} has no value for these arguments; =PLANNER_WHY gives the reason")

    def _row_values(self, i: int) -> dict[str, Any]:
        """Row ``i``'s cleaned arguments by name, MISSING for an optional one left empty there (``ok_text`` reads
        them)."""
        optional = iter(self.missing_optional)
        out = {}
        for p, v in zip(self.spec.params, self.values, strict=True):
            missing = False if p.required else bool(np.broadcast_to(next(optional), (self.n,))[i])
            out[p.name] = MISSING if missing else (v[i] if isinstance(v, np.ndarray) else v)
        return out

    def _assemble(self, done: np.ndarray) -> list[list[Any]]:
        spec = self.spec
        rows, cols = self.shape
        if np.all(done) and not self.why:
            v = self.numbers * spec.scale
            return (v.astype(np.int64) if spec.integer else v).reshape(rows, cols).tolist()
        out: list[Any] = []
        groups = self._chosen_groups(done) if self.why else None
        for i in range(self.n):
            if done[i]:
                cell = _finish_value(float(self.numbers[i]), spec)
            else:
                cell = self.result[i]
                if cell is None:  # not failed and not computed: should not happen
                    cell = Failure(VALUE, f"{spec.name} computed nothing for this cell; please report it")
            if self.why:
                if isinstance(cell, Failure) or cell is BLANK:
                    cell = "" if cell is BLANK else cell.message
                else:
                    cell = ok_text(spec, self._row_values(i), float(groups[i]), float(self.numbers[i]))
            else:
                cell = render(cell)
            out.append(cell)
        return [out[r * cols : (r + 1) * cols] for r in range(rows)]


# -- the functions' table ---------------------------------------------------------------------------------

GPU = Param("gpu", "gpu", "GPU name or alias, e.g. H100 (see PLANNER_GPUS)")
MODEL = Param("model", "model", "model name or alias, e.g. llama2-70b (see PLANNER_MODELS)")
CONTEXT = Param("context", "number", "tokens per sequence (prompt + output), e.g. 8192 or 8k", tokens=True)
BATCH = Param("batch", "number", option_doc("batch"), required=False)
KV = Param("kv_precision", "precision", option_doc("kv_precision"), required=False)
GPUS = Param("gpus", "number", option_doc("gpus"), required=False)
WEIGHTS = Param("weight_precision", "precision", option_doc("weight_precision"), required=False)
UTIL = Param("memory_utilization", "number", option_doc("memory_utilization"), required=False, percent="share")
PARALLELISM = Param("parallelism", "text", option_doc("parallelism"), required=False, per_call=True)
#: The last optional argument of every function whose figure depends on the engine: read as ``planner plan --engine``
#: reads it (``planner.engines.profiles.engine_profile``: any case, a profile or a release).
ENGINE = Param(
    "engine",
    "engine",
    "serving engine whose memory budget, batch limit and step costs are priced, as plan --engine takes it: "
    f"{', '.join(sorted(n for n in ENGINES if not any(c.isdigit() for c in n)))}, a release profile such as "
    f"sglang-0.5.5, or a release, e.g. vllm==0.11.0; blank: {DEFAULT_ENGINE}",
    required=False,
    per_call=True,
)

RATE = Param(
    "rate_per_s", "number", "requests per second arriving, e.g. 4 (Poisson; with burstiness, gamma gaps of that shape)"
)
PROMPT = Param("prompt_tokens", "number", "prompt length in tokens, e.g. 2048 or 2k", tokens=True)
#: Under load the lengths are means, a fraction kept (a dataset's 207.5), as ``plan --prompt-tokens`` takes them.
MEAN_PROMPT = Param(
    "prompt_tokens",
    "number",
    "mean prompt length in tokens, e.g. 207.5, 2048 or 2k (each request sends it rounded to whole tokens)",
    tokens=True,
    mean=True,
)
MEAN_OUTPUT = Param(
    "output_tokens",
    "number",
    "mean output length in tokens, e.g. 256 or 221.5 (rounded as prompt_tokens)",
    tokens=True,
    mean=True,
)
SPEC_TOKENS = Param(
    "speculative_tokens", "number", SPECULATION_OPTIONS["speculative_tokens"], required=False, tokens=True
)
ACCEPTANCE = Param("acceptance_length", "number", SPECULATION_OPTIONS["acceptance_length"], required=False)
PREFIX_HIT = Param(
    "prefix_hit_rate",
    "number",
    "the share of each prompt the prefix cache holds, not computed again (a system prompt every request shares, "
    'over the mean prompt: 0.25 for 200 of 800 tokens, or "25%"); blank: 0',
    required=False,
    percent="share",
)

TTFT_TARGET = Param(
    "ttft_target_s",
    "number",
    'time-to-first-token target at the percentile, seconds, e.g. 1.5 or "1500 ms" (TTFT_P95 returns '
    "milliseconds: 1,500; a number above 60 is refused as milliseconds); blank: none",
    required=False,
    seconds=True,
)
TPOT_TARGET = Param(
    "tpot_target_s",
    "number",
    'time-per-output-token target at the percentile, seconds, e.g. 0.05 or "50 ms" (TPOT_P95 returns '
    "milliseconds: 50; a number above 1 is refused as milliseconds); blank: none",
    required=False,
    seconds=True,
)
SIZING_PERCENTILE = Param(
    "percentile",
    "number",
    'the percentile the targets hold at: 50, 90, 95 or 99 ("p95" and "95%" read the same); blank: 95',
    required=False,
    percent="percentile",
)

#: The draft of the percentile functions' speculative decoding, last so that every earlier call reads as it did
#: (blank: plan's default, ``planner.serving.speculative.default_method``); read as plan --speculative-method reads it
SPEC_METHOD = Param(
    "speculative_method",
    "text",
    SPECULATION_OPTIONS["speculative_method"] + "; needs speculative_tokens and acceptance_length",
    required=False,
)

#: The incoming traffic's gamma shape (``planner.serving.fleet.burstiness_shape``), as plan --burstiness takes it: last,
#: after the engine (and the percentile functions' speculative_method), so that every earlier call reads as it did
#: (blank: 1, Poisson, the figure the functions gave before they took it).
BURSTINESS = Param(
    "burstiness",
    "number",
    "gamma shape of the incoming traffic's arrival gaps, as plan --burstiness takes it: 1 Poisson, below 1 burstier "
    "(vllm bench serve --burstiness), e.g. 0.5; over k replicas each sees the shape routing leaves, at random "
    "k b / (1 + (k - 1) b), round-robin k b; blank: 1",
    required=False,
)

#: How the load balancer deals the traffic over the replicas (``planner.serving.fleet.routing_name``), as plan
#: --routing takes it: last, after burstiness, so that every earlier call reads as it did (blank: random, the figure
#: the functions gave before they took it). REPLICAS and FLEET_GPUS deal the traffic over the replicas they size;
#: TTFT_P* and TPOT_P* simulate one replica, and read it only with ``replicas`` (``FLEET_REPLICAS``).
ROUTING = Param(
    "routing",
    "text",
    'how the load balancer deals requests over the replicas, as plan --routing takes it: "random" (each to a replica '
    'drawn at random: the burstier share) or "round-robin" (each in turn: smoother, so it can need fewer replicas); '
    "blank: random",
    required=False,
)

#: The fleet a percentile function's replica is one of, last with routing so that every earlier call reads as it did
#: (blank: the replica takes the traffic, and its burstiness, as they come). With it burstiness is the fleet's traffic's,
#: as REPLICAS takes it (trial 24 F6: a sheet chaining REPLICAS into TPOT_P95 read 68.5 ms where plan gives 59.5).
FLEET_REPLICAS = Param(
    "replicas",
    "number",
    "the replicas the traffic is dealt over (REPLICAS' answer); with it burstiness is the whole traffic's, as REPLICAS "
    "takes it, and rate_per_s is still one replica's share (the traffic / replicas); blank: this replica takes the "
    "traffic as it comes",
    required=False,
)

#: The high-percentile lengths REPLICAS and FLEET_GPUS draw each request's lengths around the means with, as plan
#: --prompt-tokens-high / --output-tokens-high / --length-percentile take them (``planner.serving.fleet.drawn_lengths``,
#: the same ``spread_lengths`` call): last, after routing, so that every earlier call reads as it did (blank: every
#: request at the means, the figure the functions gave before they took them; trial 29 F4).
PROMPT_HIGH = Param(
    "prompt_tokens_high",
    "number",
    "the prompt length at length_percentile (blank: percentile, p95), e.g. 30000 or 30k, as plan --prompt-tokens-high "
    "takes it: each simulated request's prompt drawn from the fit whose mean is prompt_tokens and whose high length "
    "is this, as planner plan --rate and planner export draw them; at least prompt_tokens; blank: every prompt at "
    "the mean",
    required=False,
    tokens=True,
)
OUTPUT_HIGH = Param(
    "output_tokens_high",
    "number",
    "the output length at length_percentile, e.g. 1200, as plan --output-tokens-high takes it, drawn as "
    "prompt_tokens_high; at least output_tokens; blank: every output at the mean",
    required=False,
    tokens=True,
)
LENGTH_PERCENTILE = Param(
    "length_percentile",
    "number",
    "the percentile prompt_tokens_high and output_tokens_high are at: 90, 95 or 99, as plan --length-percentile "
    "takes it (a review's high_percentile); blank: percentile (the targets')",
    required=False,
    percent="percentile",
)
#: The percentile functions' length percentile: theirs is the latency's percentile, not a sizing one, so blank is
#: plan's default --percentile, 95 (``planner plan --rate --replicas 1 --prompt-tokens-high`` draws at it).
LOAD_LENGTH_PERCENTILE = Param(
    "length_percentile",
    "number",
    "the percentile prompt_tokens_high and output_tokens_high are at: 90, 95 or 99, as plan --length-percentile "
    "takes it; blank: 95 (plan's default --percentile)",
    required=False,
    percent="percentile",
)
#: The context the drawn requests are cut to, as plan --context cuts them (``planner.serving.load.cut_to_context``):
#: last, after the high lengths; blank: the model's trained context (no cut below it).
MAX_CONTEXT = Param(
    "context",
    "number",
    "the tokens one sequence may hold, prompt + output, as plan --context takes it (the engine's --max-model-len), "
    "e.g. 32768 or 32k: drawn requests longer are cut to it, their prompt truncated, as plan --rate cuts them; "
    "blank: the model's trained context",
    required=False,
    tokens=True,
)
#: REPLICAS' and FLEET_GPUS' trailing arguments: the traffic's shape, then its lengths' spread.
FLEET_TAIL = (PREFIX_HIT, ENGINE, BURSTINESS, ROUTING, PROMPT_HIGH, OUTPUT_HIGH, LENGTH_PERCENTILE, MAX_CONTEXT)

#: The under-load percentile functions' arguments (TTFT_P50 ... TPOT_P99), in order.
LOAD_PARAMS = (GPU, MODEL, RATE, MEAN_PROMPT, MEAN_OUTPUT, GPUS, WEIGHTS, KV, SPEC_TOKENS, ACCEPTANCE, PARALLELISM)
LOAD_PARAMS += (PREFIX_HIT, ENGINE, SPEC_METHOD, BURSTINESS, FLEET_REPLICAS, ROUTING, PROMPT_HIGH, OUTPUT_HIGH)
LOAD_PARAMS += (LOAD_LENGTH_PERCENTILE, MAX_CONTEXT)

#: The decode-step functions' arguments (TPOT, THROUGHPUT, MFU, MBU, DECODE_INTENSITY), in order.
DECODE_PARAMS = (GPU, MODEL, CONTEXT, BATCH, KV, GPUS, WEIGHTS, PARALLELISM, ENGINE)

#: One sequence's tokens: the context argument (``Spec.sequence``).
CTX = ("context",)

SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "RIDGE",
            api.ridge,
            (GPU, Param("precision", "precision", "math precision; default bf16", required=False)),
            notes=ridge_notes,
        ),
        Spec(
            "WEIGHT_BYTES",
            api.weight_bytes,
            (MODEL, Param("precision", "precision", "weight precision; default: as published", required=False)),
        ),
        Spec(
            "KV_BYTES",
            api.kv_bytes,
            (MODEL, Param("tokens", "number", "tokens per sequence, e.g. 8192 or 8k", tokens=True), KV, BATCH),
            sequence=("tokens",),
        ),
        Spec(
            "MAX_BATCH",
            api.max_batch,
            (GPU, MODEL, CONTEXT, KV, GPUS, WEIGHTS, UTIL, PARALLELISM, ENGINE),
            integer=True,
            sequence=CTX,
            notes=precision_notes,
            number_notes=max_batch_notes,
        ),
        Spec(
            "MIN_GPUS",
            api.min_gpus,
            (GPU, MODEL, CONTEXT, BATCH, KV, WEIGHTS, UTIL, PARALLELISM, ENGINE),
            integer=True,
            sequence=CTX,
            notes=precision_notes,
        ),
        Spec("TPOT", api.tpot, DECODE_PARAMS, scale=1e3, sequence=CTX, notes=decode_notes, timed=True),
        Spec(
            "TTFT",
            api.ttft,
            (GPU, MODEL, PROMPT, GPUS, WEIGHTS, KV, PARALLELISM, ENGINE),
            scale=1e3,
            sequence=("prompt_tokens",),
            notes=precision_notes,
            timed=True,
        ),
        Spec("THROUGHPUT", api.throughput, DECODE_PARAMS, sequence=CTX, notes=decode_notes, timed=True),
        Spec(
            "COST_PER_MTOK",
            api.cost_per_mtok,
            (
                GPU,
                MODEL,
                CONTEXT,
                BATCH,
                Param(
                    "price_per_gpu_hour",
                    "number",
                    "US dollars per GPU-hour; default: the catalog's cloud price",
                    required=False,
                ),
                KV,
                GPUS,
                WEIGHTS,
                PARALLELISM,
                ENGINE,
            ),
            sequence=CTX,
            notes=cost_notes,
            timed=True,
        ),
        Spec("MFU", api.mfu, DECODE_PARAMS, sequence=CTX, notes=decode_notes, timed=True),
        Spec("MBU", api.mbu, DECODE_PARAMS, sequence=CTX, notes=decode_notes, timed=True),
        Spec("DECODE_INTENSITY", api.decode_intensity, DECODE_PARAMS, sequence=CTX, notes=decode_notes),
        *(
            Spec(
                f"{metric.upper()}_P{q}",
                functools.partial(_fleet("load_percentile"), metric=metric, percentile=q),
                LOAD_PARAMS,
                scale=1e3,
                sequence=("prompt_tokens", "output_tokens"),
                notes=load_notes,
                number_notes=functools.partial(load_spread_notes, f"{metric.upper()}_P{q}"),
                timed=True,
            )
            for metric in ("ttft", "tpot")
            for q in (50, 95, 99)
        ),
        Spec(
            "REPLICAS",
            _fleet("replicas_needed"),
            (GPU, MODEL, RATE, MEAN_PROMPT, MEAN_OUTPUT, TTFT_TARGET, TPOT_TARGET, SIZING_PERCENTILE, GPUS, WEIGHTS, KV)
            + (PARALLELISM, *FLEET_TAIL),
            integer=True,
            sequence=("prompt_tokens", "output_tokens"),
            notes=replicas_notes,
            number_notes=replicas_number_notes,
            timed=True,
        ),
        Spec(
            "FLEET_GPUS",
            _fleet("fleet_gpus_needed"),
            (GPU, MODEL, RATE, MEAN_PROMPT, MEAN_OUTPUT, TTFT_TARGET, TPOT_TARGET, SIZING_PERCENTILE, WEIGHTS, KV)
            + (PARALLELISM, *FLEET_TAIL),
            integer=True,
            sequence=("prompt_tokens", "output_tokens"),
            notes=fleet_gpus_notes,
            timed=True,
        ),
        Spec(
            "CAPACITY_RPS",
            _fleet("replica_capacity_per_s"),
            (GPU, MODEL, MEAN_PROMPT, MEAN_OUTPUT, GPUS, WEIGHTS, KV, PARALLELISM, PREFIX_HIT, ENGINE),
            sequence=("prompt_tokens", "output_tokens"),
            timed=True,
        ),
        Spec(
            "LOADED_RANGE",
            _loaded_ratio,
            (
                Param("quantity", "text", '"TTFT", "TPOT" or "ITL": the loaded percentile\'s quantity'),
                Param(
                    "percentile",
                    "number",
                    "50, 90, 95 or 99: the simulated percentile; 50 takes the held-out p50 range, 90 and 95 take "
                    "p99's (only p50 and p99 are tabled; p99 is nearer to p95 and wider at the slow end)",
                ),
                Param(
                    "end",
                    "text",
                    '"low" or "high": measured / predicted at that end; empty: both, as a row of two cells',
                    required=False,
                ),
            ),
        ),
    )
}


def _spills_both_ends(quantity: Any, percentile: Any, end: Any) -> bool:
    """A single LOADED_RANGE call without an end (omitted, a blank cell or "": Excel passes an optional argument
    left empty either way), whose two ends spill as a row."""
    no_end = end is None or (isinstance(end, str) and not end.strip())
    return no_end and not any(isinstance(a, (list, tuple, np.ndarray)) for a in (quantity, percentile))


def loaded_range_row(quantity: Any, percentile: Any, end: Any) -> Any:
    """LOADED_RANGE as a cell calls it: with ``end`` empty and single cells for the rest, both ends as a row of two
    cells (``[[low, high]]``), or the one error the call has; otherwise ``evaluate`` over the ranges, a cell per end."""
    quantity, percentile, end = _unwrap(quantity), _unwrap(percentile), _unwrap(end)
    spec = SPECS["LOADED_RANGE"]
    if _spills_both_ends(quantity, percentile, end):
        low = evaluate(spec, (quantity, percentile, "low"))
        if not isinstance(low, float):
            return low
        return [[low, evaluate(spec, (quantity, percentile, "high"))]]
    return evaluate(spec, (quantity, percentile, end))


def loaded_range_why(args: Sequence[Any]) -> Any:
    """PLANNER_WHY("LOADED_RANGE", ...): the reason per cell; a single call without an end has one reason (both its
    ends are found or refused together)."""
    quantity, percentile, end = ([_unwrap(a) for a in args] + [None] * 3)[:3]
    if len(args) > 3:
        return f"LOADED_RANGE takes at most 3 arguments; got {len(args)}"
    if _spills_both_ends(quantity, percentile, end):
        end = "low"
    return evaluate(SPECS["LOADED_RANGE"], (quantity, percentile, end), why=True)


def why(function: Any, args: Sequence[Any], others: dict[str, Callable[[Sequence[Any]], Any]] | None = None) -> Any:
    """PLANNER_WHY: the reason each cell of ``function(*args)`` has no number ("ok" where it has one).

    ``others``: the reasons of functions outside ``SPECS`` by name (``planner.excel.functions`` passes
    PLANNER_INFO's, so this module needs nothing of ``planner.excel.catalog``, which builds on it).
    """
    others = others or {}
    names = list(dict.fromkeys([*SPECS, *others]))  # LOADED_RANGE is in both
    known = ", ".join(names)
    function = _unwrap(function)
    if not isinstance(function, str) or not function.strip():
        return f'give the function\'s name as text, e.g. "MAX_BATCH"; known: {known}'
    key = function.strip().lstrip("=").split("(")[0].strip().upper()
    if key in others:
        return others[key](args)
    spec = SPECS.get(key)
    if spec is None:
        near = closest_names(key, names)
        hint = f"did you mean {', '.join(near)}? " if near else ""
        return f"unknown function {shown_name(function.strip())}; {hint}known: {known}"
    if len(args) > len(spec.params):
        return f"{spec.name} takes at most {len(spec.params)} arguments; got {len(args)}"
    return evaluate(spec, args, why=True)
