"""Calibration files: efficiency factors fitted to a user's own measurements, per GPU (and engine).

A calibration file is TOML with ``[[calibration]]`` tables::

    [[calibration]]
    gpu = "H100 SXM 80GB"          # a catalog name or alias
    engine = "vllm"                # optional: applies to this engine only
    bandwidth_efficiency = 0.83
    step_overhead_s = 0.0021
    rows = 24                      # the measurement rows fitted (optional)
    source = "planner calibrate my-runs.csv, 2026-11-30, 24 rows"

The file named by ``$PLANNER_CALIBRATION`` (or passed as ``calibration=``) overrides the engine's
defaults for the GPUs it names; everything else keeps the engine defaults. ``calibration_in_effect`` says what
it does to one GPU and engine (``plan`` and the budget review print it).
"""

from __future__ import annotations

import functools
import math
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.catalog.schema import normalize_name
from planner.errors import CatalogError, InvalidInputError
from planner.io.limits import MAX_CATALOG_FILE_BYTES, read_text_bounded
from planner.io.toml_text import loads_toml

ENV_VAR = "PLANNER_CALIBRATION"

#: EngineProfile fields a calibration may set.
CALIBRATED_FIELDS = (
    "bandwidth_efficiency",
    "decode_flop_efficiency",
    "prefill_flop_efficiency",
    "step_overhead_s",
    "layer_overhead_s",
    "moe_layer_overhead_s",
    "sequence_overhead_s",
    "prefill_latency_s",
    "allreduce_latency_s",
    "interconnect_efficiency",
    "roofline_overlap",
)


#: The row count ``planner calibrate`` ends an entry's ``source`` with: "planner calibrate x.csv, 2026-11-30, 24 rows".
_ROWS_IN_SOURCE = re.compile(r"\b(\d[\d,]*) rows?\s*$")


class GpuCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: str = Field(min_length=1)
    engine: str | None = None
    bandwidth_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    decode_flop_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    prefill_flop_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    step_overhead_s: float | None = Field(default=None, ge=0)
    layer_overhead_s: float | None = Field(default=None, ge=0)
    moe_layer_overhead_s: float | None = Field(default=None, ge=0)
    sequence_overhead_s: float | None = Field(default=None, ge=0)
    prefill_latency_s: float | None = Field(default=None, ge=0)
    allreduce_latency_s: float | None = Field(default=None, ge=0)
    interconnect_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    roofline_overlap: float | None = Field(default=None, ge=0, le=1)
    #: relative residuals of the fit (measured / predicted - 1): lower and upper quantiles for ranges
    residual_low: float | None = None
    residual_high: float | None = None
    #: measurement rows the fit used (``planner calibrate`` writes it; older files say it in ``source`` alone)
    rows: int | None = Field(default=None, ge=1)
    #: what the rows covered (``planner calibrate`` writes them): their GPU counts, and their models' smallest and
    #: largest parameter counts in billions; a group or model outside them takes the held-out range as well
    gpu_counts: tuple[int, ...] | None = None
    params_b_range: tuple[float, float] | None = None
    source: str = ""

    def factors(self) -> dict[str, float]:
        return {f: getattr(self, f) for f in CALIBRATED_FIELDS if getattr(self, f) is not None}

    def fitted_rows(self) -> int | None:
        """The rows the fit used: ``rows``, else the count ending ``source`` ("..., 24 rows", as ``planner
        calibrate`` wrote it before ``rows``); None when neither says."""
        if self.rows is not None:
            return self.rows
        found = _ROWS_IN_SOURCE.search(self.source)
        return int(found.group(1).replace(",", "")) if found else None


@dataclass(frozen=True)
class Calibration:
    entries: tuple[GpuCalibration, ...] = ()
    path: Path | None = None

    def for_gpu(self, gpu_names: tuple[str, ...], engine: str) -> GpuCalibration | None:
        """The entry for this GPU (any of its names) and engine; an engine-specific entry wins."""
        keys = {normalize_name(n) for n in gpu_names}
        best = None
        for e in self.entries:
            if normalize_name(e.gpu) not in keys:
                continue
            if e.engine is None and best is None:
                best = e
            elif e.engine is not None and normalize_name(e.engine) == normalize_name(engine):
                best = e
        return best


def load_calibration(path: str | os.PathLike) -> Calibration:
    """Read and validate a calibration file; errors name the file, the entry and the field."""
    p = Path(path)
    try:
        text = read_text_bounded(p, MAX_CATALOG_FILE_BYTES, "a calibration file")
    except InvalidInputError as exc:
        raise CatalogError(str(exc)) from None
    except UnicodeDecodeError:
        raise CatalogError(f"{p}: cannot read calibration file (not UTF-8 text)") from None
    except OSError as exc:
        raise CatalogError(f"{p}: cannot read calibration file ({exc.strerror or exc})") from None
    return load_calibration_text(text, p)


def load_calibration_text(text: str, p: Path) -> Calibration:
    """Validate calibration TOML text; ``p`` names it in errors."""
    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        hint = f" (measurements? fit them first: planner calibrate {p})" if Path(p).suffix.lower() == ".csv" else ""
        raise CatalogError(
            f"{p}: not valid TOML ({exc}); a calibration file is the TOML `planner calibrate` writes{hint}"
        ) from None
    extra = set(data) - {"calibration"}
    if extra:
        raise CatalogError(f"{p}: unknown table {sorted(extra)[0]!r}; a calibration file holds [[calibration]] tables")
    if not data.get("calibration"):  # an empty or cut file would leave every figure uncalibrated without a word
        raise CatalogError(
            f"{p}: no [[calibration]] table; a calibration file holds one per GPU (`planner calibrate` writes it)"
        )
    entries = []
    for i, raw in enumerate(data.get("calibration", []), 1):
        try:
            entries.append(GpuCalibration(**raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise CatalogError(
                f"{p}: calibration #{i} ({raw.get('gpu', '?')}): field '{field}': {err['msg']}"
            ) from None
    return Calibration(tuple(entries), p)


#: A measurement row's fields as a file's columns write them (the first non-blank column of each is the one read),
#: and what each accepts: a message about a bad cell names the column and echoes the cell as the file has them
#: (mean_tpot_ms and output_throughput: a vLLM benchmark_serving result's keys).
MEASUREMENT_COLUMNS = {
    "batch": (("batch_size_or_concurrency", "batch"), "a whole number of sequences from 1"),
    "gpus": (("tensor_parallel_size", "gpus"), "a whole number of GPUs from 1"),
    "input_len": (("input_len", "context"), "a whole number of tokens from 1"),
    "output_len": (("output_len",), "a whole number of tokens from 0"),
    "tpot_s": (("tpot_ms", "itl_ms", "mean_tpot_ms"), "a positive number of milliseconds, e.g. 12.5"),
    "throughput_tokens_per_s": (
        ("output_throughput_tok_s", "throughput_tok_s", "output_throughput"),
        "a positive number of output tokens per second, e.g. 1500",
    ),
}


def _cell_problem(field: str, value: object, cells: dict | None) -> str:
    """Why ``field`` holding ``value`` is refused, in the file's terms where its ``cells`` are known (the column,
    the cell as written, what is accepted), else in the row's (the field, the value read)."""
    columns, accepted = MEASUREMENT_COLUMNS[field]
    for column in columns if cells else ():
        cell = str(cells.get(column) or "").strip()
        if cell:
            return f"{column} is {cell[:40]!r}, not {accepted}"
    if field == "tpot_s" and isinstance(value, float):  # read in seconds: say it in the milliseconds asked for
        return f"TPOT must be {accepted}; got {value * 1e3:g} ms"
    return f"{field} must be {accepted}; got {value!r}"


def measurement_problem(row, cells: dict | None = None) -> str:
    """Why a fit cannot use a measurement row ("" when it can): the field and what it must be; with the row's
    ``cells`` (its CSV row, {column: text}), the column and the cell as the file writes them.

    Batch, GPUs and prompt length are whole numbers from 1, the output length from 0; TPOT and throughput are
    finite and above 0 where given, and each row gives at least one of them.
    """
    if row.problem:
        return row.problem
    for field, low in (("batch", 1), ("gpus", 1), ("input_len", 1), ("output_len", 0)):
        value = getattr(row, field)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            return _cell_problem(field, value, cells)
    given = 0
    for field in ("tpot_s", "throughput_tokens_per_s"):
        value = getattr(row, field)
        if isinstance(value, float) and math.isnan(value):
            continue
        if not math.isfinite(value) or value < sys.float_info.min:
            return _cell_problem(field, value, cells)
        given += 1
    return "" if given else "give tpot_ms or a throughput (tokens per second)"


#: A fit of the four time factors from fewer rows than this is reported with a warning: one row fits any
#: factors exactly and says nothing about the others (one row moved the budget review's H200 option from 56 to
#: 32 GPUs, issue 26).
FEW_ROWS = 8


def _toml_value(v: object) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, float):
        return repr(float(f"{v:.6g}"))  # 6 significant digits; Python's repr is valid TOML
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return str(v)


def dumps_calibration(entries: list[GpuCalibration], header: str = "") -> str:
    """TOML text of ``[[calibration]]`` tables (fields that are None are left out), with a comment header."""
    lines = [f"# {line}" for line in header.splitlines()] + ([""] if header else [])
    for e in entries:
        lines.append("[[calibration]]")
        for name, value in e.model_dump().items():
            if value is not None and value != "":
                lines.append(f"{name} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def write_calibration(
    path: str | os.PathLike, entries: list[GpuCalibration], *, header: str = "", force: bool = False
) -> Path:
    """Write a calibration file through ``planner.io.files.write_file``; an existing file needs ``force``."""
    from planner.io.files import check_target, write_file

    p = check_target(path, force, make_parents=True)
    text = dumps_calibration(entries, header)
    load_calibration_text(text, p)  # never write what we could not read back
    write_file(p, text, force=force, make_parents=True)
    _cached.cache_clear()
    return p


@functools.lru_cache(maxsize=4)
def _cached(path: str) -> Calibration:
    return load_calibration(path) if path else Calibration()


def default_calibration() -> Calibration:
    """The calibration named by ``$PLANNER_CALIBRATION``, read once; empty when unset."""
    return _cached(os.environ.get(ENV_VAR, ""))


def resolve_calibration(calibration: Calibration | str | os.PathLike | None) -> Calibration:
    if calibration is None:
        return default_calibration()
    if isinstance(calibration, Calibration):
        return calibration
    return _cached(str(calibration))


def residual_quantiles(
    gpu: Any, engine: Any = None, calibration: Any = None, catalog: Any = None, *, gpus: Any = None, model: Any = None
) -> tuple[float, float]:
    """(low, high) relative residuals of time predictions for a GPU: its calibration entry's, else held-out ones.

    Without a calibration entry: the 10th / 90th percentiles of measured / predicted - 1 on published rows the
    shipped factors were not fitted on, for this GPU (all GPUs' when it has too few), widened for each of the GPU,
    the tensor-parallel group ``gpus``, the engine and the ``model``'s kind and size the data does not cover
    (``planner.accuracy.ranges``). A measured time lies, for 80% of those rows, within prediction x (1 + low) ..
    prediction x (1 + high).
    """
    return residual_range(gpu, engine, calibration, catalog, gpus=gpus, model=model)[:2]


def residual_range(
    gpu: Any, engine: Any = None, calibration: Any = None, catalog: Any = None, *, gpus: Any = None, model: Any = None
):
    """``residual_quantiles`` and where they come from: a ``planner.accuracy.ranges.TimeRange`` (low, high, note, widened).

    Where a calibration entry sets the predicted times but records no range (fewer than ``FEW_ROWS`` rows), the
    held-out range stands and its note says so first (``with_calibration_note``)."""
    from planner.accuracy.ranges import MIN_ROWS, TimeRange, own_rows, region_residuals, sibling_range
    from planner.catalog import default_catalog
    from planner.engines.kernel_curves import curves_miss, sibling_miss
    from planner.engines.profiles import DEFAULT_RESIDUALS, engine_profile

    cat = catalog or default_catalog()
    g = cat.gpu(gpu)
    eng = engine_profile(engine)
    own = calibrated_range(g, eng, calibration)
    mdl = cat.model(model) if model is not None else None
    if own is not None:
        outside = uncovered(calibration_in_effect(g, eng, calibration).entry, gpus, mdl)
        if not outside:
            return own
    curves = curves_miss(g, cat) if eng.kernel_curves else (1.0, "")
    miss, sibling = sibling_miss(g, cat) if eng.kernel_curves else (1.0, "")
    # a sibling's rates, no figures of its own and the sibling's figures (docs/accuracy.md): the sibling's range
    if sibling and own_rows(g.name) < MIN_ROWS <= own_rows(sibling):
        sib = cat.gpu(sibling)
        theirs = region_residuals(
            sib.name, DEFAULT_RESIDUALS, gpus=gpus, engine=eng.name, model=mdl, curves=curves_miss(sib, cat)
        )
        held = sibling_range(theirs, g.name, sib.name, miss, sib.architecture == g.architecture)
    else:
        held = region_residuals(g.name, DEFAULT_RESIDUALS, gpus=gpus, engine=eng.name, model=mdl, curves=curves)
    if own is not None:  # the fit's in-sample range, outside what its rows measured: the held-out range too
        return TimeRange(
            min(own.low, held.low),
            max(own.high, held.high),
            f"{own.note}; {outside}: widened to hold the held-out range ({held.low:+.0%} / {held.high:+.0%}: "
            f"{held.note})",
        )
    return with_calibration_note(held, g, eng, calibration)


def uncovered(entry: GpuCalibration | None, gpus: Any, model: Any) -> str:
    """Where a calibration entry's rows (``gpu_counts``, ``params_b_range``) did not measure this group or model,
    how ("its rows ran 1 GPU, not 8; models of 8 billion parameters, not 70.6"); "" where they did or say nothing.
    A model counts as covered within half to twice the rows' smallest and largest."""
    if entry is None:
        return ""
    parts = []
    if entry.gpu_counts and gpus is not None and int(gpus) not in entry.gpu_counts:
        counts = ", ".join(map(str, entry.gpu_counts))
        parts.append(f"its rows ran {counts} GPU{'s' if entry.gpu_counts != (1,) else ''}, not {int(gpus)}")
    if entry.params_b_range and model is not None:
        from planner.engines.architecture import param_counts

        lo, hi = entry.params_b_range
        size = param_counts(model)[0] / 1e9
        if not lo / 2 <= size <= hi * 2:
            span = f"{lo:.3g}" if lo == hi else f"{lo:.3g}-{hi:.3g}"
            parts.append(f"models of {span} billion parameters, not {size:.3g}")
    return "; ".join(parts)


def calibrated_range(gpu: Any, engine: Any, calibration: Any = None):
    """The calibration entry's own (low, high) for a catalog ``gpu`` and engine profile, as a TimeRange that
    nothing widens; None when no entry names both quantiles (the held-out regions then apply)."""
    from planner.accuracy.ranges import TimeRange

    use = calibration_in_effect(gpu, engine, calibration)
    if use is None or not use.has_range:
        return None
    entry = use.entry
    note = f"{use.named}, {use.rows_text} ({entry.source or 'no source'})"
    return TimeRange(entry.residual_low, entry.residual_high, note, calibrated=True)


def with_calibration_note(held, gpu: Any, engine: Any, calibration: Any = None):
    """A held-out ``TimeRange`` whose note first says, where a calibration entry for this catalog ``gpu`` and engine
    profile sets the predicted times without a range of its own, that the range is not the file's
    (``CalibrationUse.range_note``); unchanged otherwise, and where the note says it already."""
    use = calibration_in_effect(gpu, engine, calibration)
    if use is None or use.entry is None or use.has_range or held.note.startswith(use.range_note):
        return held
    return held._replace(note=f"{use.range_note}: {held.note}")


@dataclass(frozen=True)
class CalibrationUse:
    """A calibration file in effect, and what it does to one GPU and engine's predictions: its ``entry`` for them
    (None: it has none, and planner's own factors and held-out ranges stand). An entry's factors replace the
    engine's in every predicted time; its range (``residual_low`` / ``residual_high``, written when the fit had
    ``FEW_ROWS`` rows or more) replaces the held-out one."""

    path: str  # the file; "" for a Calibration built in Python without one
    gpu: str  # the catalog GPU asked about
    engine: str  # the engine profile asked about
    entry: GpuCalibration | None

    @property
    def rows(self) -> int | None:
        return self.entry.fitted_rows() if self.entry is not None else None

    @property
    def named(self) -> str:
        """ "your calibration file PATH" (or "your calibration given in Python")."""
        return f"your calibration file {self.path}" if self.path else "your calibration given in Python"

    @property
    def rows_text(self) -> str:
        n = self.rows
        return "rows fitted not stated" if n is None else f"fitted on {n:,} row{'s' if n != 1 else ''}"

    @property
    def has_range(self) -> bool:
        e = self.entry
        return e is not None and e.residual_low is not None and e.residual_high is not None

    @property
    def _few_rows(self) -> int | None:
        """The rows fitted where they are too few for a range of its own (under ``FEW_ROWS``); else None."""
        n = self.rows
        return n if n is not None and n < FEW_ROWS else None

    def _no_range_why(self) -> str:
        n = self._few_rows
        if n is not None:
            return (
                f"{n:,} row{'s are' if n != 1 else ' is'} too few for a range of its own (it takes {FEW_ROWS} or more)"
            )
        return "it records no range of its own"

    @property
    def range_note(self) -> str:
        """The head of a held-out range's note when the entry sets the times but has no range."""
        n = self._few_rows
        why = (
            f"has {n:,} row{'s' if n != 1 else ''}, too few for a range of its own: it takes {FEW_ROWS} or more"
            if n is not None
            else "records no range of its own"
        )
        return f"held-out ({self.named} sets the predicted times but {why})"

    @property
    def text(self) -> str:
        """One sentence: the file, its entry, its rows, what it changed and where the time ranges come from."""
        e = self.entry
        if e is None:
            return (
                f"{self.named} is in effect but has no entry for {self.gpu} with {self.engine}: predicted times and "
                "ranges are planner's own"
            )
        factors = ", ".join(f"{k} {v:.4g}" for k, v in e.factors().items()) or "no factors: the engine's own"
        which = f"{e.gpu} entry, {'engine ' + e.engine if e.engine else 'every engine'}"
        head = f"predicted times from {self.named} ({which}, {self.rows_text}: {factors})"
        if self.has_range:
            return f"{head}; time ranges its own, {e.residual_low:+.0%} / {e.residual_high:+.0%}"
        return (
            f"{head}; {self._no_range_why()}, so time ranges are the held-out ones, measured on planner's "
            "uncalibrated predictions"
        )

    def as_dict(self) -> dict:
        """For ``--json``: the file, whether it has an entry here, its rows, factors, own range and the sentence."""
        e = self.entry
        return {
            "path": self.path or None,
            "entry": None if e is None else {"gpu": e.gpu, "engine": e.engine, "source": e.source},
            "rows": self.rows,
            "factors": {} if e is None else e.factors(),
            "range": [e.residual_low, e.residual_high] if self.has_range else None,
            "ranges_from": "calibration" if self.has_range else "held-out",
            "note": self.text,
        }


def calibration_in_effect(gpu: Any, engine: Any, calibration: Any = None) -> CalibrationUse | None:
    """The calibration in effect (``calibration``, else ``$PLANNER_CALIBRATION``: ``resolve_calibration``) for a
    catalog ``gpu`` and engine profile; None when there is none (no file, no entries)."""
    cal = resolve_calibration(calibration)
    if cal.path is None and not cal.entries:
        return None
    return CalibrationUse(
        "" if cal.path is None else str(cal.path), gpu.name, engine.name, cal.for_gpu(gpu.all_names(), engine.name)
    )
