"""Calibration files: efficiency factors fitted to a user's own measurements, per GPU (and engine).

A calibration file is TOML with ``[[calibration]]`` tables::

    [[calibration]]
    gpu = "H100 SXM 80GB"          # a catalog name or alias
    engine = "vllm"                # optional: applies to this engine only
    bandwidth_efficiency = 0.83
    step_overhead_s = 0.0021
    source = "planner calibrate my-runs.csv, 2026-11-30, 24 rows"

The file named by ``$PLANNER_CALIBRATION`` (or passed as ``calibration=``) overrides the engine's
defaults for the GPUs it names; everything else keeps the engine defaults.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner.catalog.schema import normalize_name
from planner.errors import CatalogError

ENV_VAR = "PLANNER_CALIBRATION"

#: EngineProfile fields a calibration may set.
CALIBRATED_FIELDS = (
    "bandwidth_efficiency", "decode_flop_efficiency", "prefill_flop_efficiency",
    "step_overhead_s", "layer_overhead_s", "allreduce_latency_s", "interconnect_efficiency",
)


class GpuCalibration(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: str = Field(min_length=1)
    engine: str | None = None
    bandwidth_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    decode_flop_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    prefill_flop_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    step_overhead_s: float | None = Field(default=None, ge=0)
    layer_overhead_s: float | None = Field(default=None, ge=0)
    allreduce_latency_s: float | None = Field(default=None, ge=0)
    interconnect_efficiency: float | None = Field(default=None, gt=0, le=1.5)
    #: relative residuals of the fit (measured / predicted - 1): lower and upper quantiles for ranges
    residual_low: float | None = None
    residual_high: float | None = None
    source: str = ""

    def factors(self) -> dict[str, float]:
        return {f: getattr(self, f) for f in CALIBRATED_FIELDS if getattr(self, f) is not None}


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
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CatalogError(f"{p}: cannot read calibration file ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{p}: not valid TOML ({exc})") from None
    extra = set(data) - {"calibration"}
    if extra:
        raise CatalogError(f"{p}: unknown table {sorted(extra)[0]!r}; a calibration file holds [[calibration]] tables")
    entries = []
    for i, raw in enumerate(data.get("calibration", []), 1):
        try:
            entries.append(GpuCalibration(**raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise CatalogError(f"{p}: calibration #{i} ({raw.get('gpu', '?')}): field '{field}': {err['msg']}") from None
    return Calibration(tuple(entries), p)


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
