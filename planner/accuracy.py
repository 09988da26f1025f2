"""How far the planner is from what serving engines did: predictions for published reference rows, and ranges.

Two kinds of reference rows (``catalogs/reference/``):

- start-up logs of vLLM (``vllm_startup_*.csv``): the KV cache memory per GPU, the KV cache tokens of the
  tensor-parallel group and the maximum concurrency vLLM printed; each row is predicted with the engine
  profile of its vLLM version (``STARTUP_PROFILES``, or the file's ``profile`` column);
- decode measurements (``decode_*.csv``, or a user's own file in the same columns): TPOT and output
  throughput of a batch of ``batch`` sequences with ``input_len`` prompt and ``output_len`` output tokens.

TPOT of a row is predicted at the mean context of the generation, ``input_len + output_len / 2``: decode time
is linear in the context, so the mean step time is the step time at the mean context. When a row's prompts
were all sent at once to a continuous-batching server (vLLM's ``benchmark_serving`` without a request rate),
the other requests' prefills run between a request's decode steps: on average (batch - 1) / 2 prompt
prefills spread over its output tokens, which the row's TPOT includes. Throughput is the
planner's whole-run figure, ``batch x output_len / (prefill of the batch + (output_len - 1) x TPOT)``, since
the published figures count the prefill too.

``tpot_range`` and friends turn a prediction into a (low, high) range with the residual quantiles of the fit
(the calibration entry's, else the shipped fit's ``DEFAULT_RESIDUALS``).
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from planner import api
from planner.calibration import residual_quantiles, resolve_calibration
from planner.catalog import Catalog, default_catalog
from planner.catalog.loader import shipped_catalog_dir
from planner.engines import DEFAULT_RESIDUALS, EngineProfile, engine_profile
from planner.errors import InvalidInputError, PlannerError
from planner.model import max_concurrency  # noqa: F401  (re-exported: validation and its tests use it here)

GiB = 2**30

#: Thresholds the issue sets (tests/test_accuracy.py asserts them on the shipped reference rows).
MEMORY_TOLERANCE = 0.05
TIME_MEDIAN_TOLERANCE = 0.20
TIME_WORST_TOLERANCE = 0.40

#: Engine profile for each shipped start-up row. KV001-KV003 logged vLLM 0.10.1.1; KV017 logged 0.11.0 and
#: its activation peak (2.12 GiB) matches the current sampler cost; KV013's version was not logged (the
#: source's replication section runs the ``:latest`` image) and its activation peak (4.76 GiB, like every
#: row of that first llm-d batch) is the ~38 B/(sequence x vocabulary entry) sampler of "vllm-fullsort".
STARTUP_PROFILES = {
    "KV001": "vllm-0.10",
    "KV002": "vllm-0.10",
    "KV003": "vllm-0.10",
    "KV013": "vllm-fullsort",
    "KV017": "vllm",
}

#: Names in the published rows that are not catalog names or aliases, and what they are.
GPU_NAMES = {
    "nvidia a100-80g": "A100 SXM 80GB",  # LMDeploy's A100 benchmark page (SXM4 per its 400 W class results)
    "nvidia a100 80gb": "A100 SXM 80GB",  # dennislee22: "NVIDIA A100 80GB GPU"; form factor not stated
    "nvidia h100 80gb": "H100 SXM 80GB",  # llm-d: "H100 GPU (79.18 GiB)"
}
DTYPES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "fp16": "fp16",
    "bf16": "bf16",
    "float32": "fp32",
    "fp8": "fp8",
    "auto": None,
    "": None,
}


def reference_dir() -> Path:
    """The shipped reference data: ``catalogs/reference`` (``planner/_catalogs/reference`` when installed)."""
    return shipped_catalog_dir() / "reference"


# -- name resolution ---------------------------------------------------------------------------------------


def resolve_gpu_name(name: str, catalog: Catalog) -> str:
    """A catalog GPU name for a published one ("NVIDIA H100 80GB (79.18 GiB reported total)" -> H100 SXM 80GB)."""
    text = str(name).strip()
    for candidate in (text, re.sub(r"\s*\(.*\)\s*$", "", text)):
        try:
            return catalog.gpu(candidate).name
        except PlannerError:
            mapped = GPU_NAMES.get(candidate.lower())
            if mapped:
                return catalog.gpu(mapped).name
    return catalog.gpu(text).name  # raises UnknownNameError with suggestions


def resolve_model_name(name: str, catalog: Catalog) -> str:
    """A catalog model name for a published one (Hugging Face ids; "meta-llama/Llama-2-7b" -> Llama-2-7B)."""
    text = str(name).strip()
    for candidate in (text, text + "-hf", text.split("/")[-1]):
        try:
            return catalog.model(candidate).name
        except PlannerError:
            continue
    return catalog.model(text).name


def _dtype(value: str) -> str | None:
    key = str(value or "").strip().lower().split(" ")[0]
    return DTYPES.get(key, key or None)


def _float(value: Any) -> float:
    """The first number in a published cell ("14.2488 GiB", "93,872", "5.73x"); NaN when there is none."""
    hit = re.search(r"-?\d[\d,]*\.?\d*(?:[eE]-?\d+)?", str(value or ""))
    return float(hit.group(0).replace(",", "")) if hit else math.nan


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as exc:
        raise InvalidInputError(f"{path}: cannot read ({exc.strerror or exc})") from None


# -- memory ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartupRow:
    """One published vLLM start-up: the configuration and what vLLM printed."""

    record_id: str
    gpu: str
    model: str
    tensor_parallel_size: int
    memory_utilization: float
    max_model_len: int
    block_size: int | None
    weight_precision: str | None
    profile: str
    kv_cache_gib: float  # "Available KV cache memory", per GPU
    kv_cache_tokens: float  # "GPU KV cache size", whole group (NaN when not printed)
    max_concurrency: float  # "Maximum concurrency for L tokens per request" (NaN when not printed)
    source: str = ""


def load_startup_rows(path: str | Path | None = None) -> list[StartupRow]:
    """Rows of a vLLM start-up CSV (default: every ``vllm_startup_*.csv`` shipped), in file order."""
    paths = (
        [Path(path)]
        if path
        else sorted(
            reference_dir().glob("vllm_startup_*.csv"), key=lambda q: (q.name != "vllm_startup_public.csv", q.name)
        )
    )
    rows = []
    for p in paths:
        for r in _read_csv(p):
            rid = r["record_id"]
            block = _float(r.get("block_size"))
            rows.append(
                StartupRow(
                    record_id=rid,
                    gpu=r["gpu"],
                    model=r["model"],
                    tensor_parallel_size=int(_float(r.get("tensor_parallel_size")) or 1),
                    memory_utilization=_float(r["gpu_memory_utilization"]),
                    max_model_len=int(_float(r["max_model_len"])),
                    block_size=None if math.isnan(block) else int(block),
                    weight_precision=_weight_precision(r),
                    profile=(r.get("profile") or STARTUP_PROFILES.get(rid) or "vllm").strip(),
                    kv_cache_gib=_float(r["available_kv_cache_memory_gib"]),
                    kv_cache_tokens=_float(r.get("gpu_kv_cache_tokens")),
                    max_concurrency=_float(r.get("max_concurrency_x")),
                    source=r.get("source", ""),
                )
            )
    return rows


def _weight_precision(r: dict[str, str]) -> str | None:
    quant = str(r.get("quantization") or "").strip().lower()
    if quant.startswith("fp8"):
        return "fp8"
    if quant and quant != "none":
        return None
    return _dtype(r.get("weight_dtype", ""))


@dataclass(frozen=True)
class StartupPrediction:
    """What the planner says vLLM will print at start-up."""

    kv_cache_gib: float
    kv_cache_tokens: float
    max_concurrency: float


def predict_startup(row: StartupRow, *, catalog: Catalog | None = None) -> StartupPrediction:
    """Available KV cache GiB per GPU, KV cache tokens of the group, and max concurrency at max_model_len."""
    cat = catalog or default_catalog()
    eng = engine_profile(row.profile)
    if row.block_size:
        eng = eng.with_(block_size=row.block_size)
    plan = api.memory_plan(
        resolve_gpu_name(row.gpu, cat),
        resolve_model_name(row.model, cat),
        row.max_model_len,
        gpus=row.tensor_parallel_size,
        weight_precision=row.weight_precision,
        memory_utilization=row.memory_utilization,
        engine=eng,
        catalog=cat,
        errors="coerce",
    )
    tokens = float(plan.kv_cache_tokens)
    return StartupPrediction(
        float(plan.kv_budget_bytes_per_gpu) / GiB, tokens, max_concurrency(tokens, row.max_model_len, eng.block_size)
    )


# -- time --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodeRow:
    """One decode measurement: ``batch`` sequences, ``input_len`` prompt and ``output_len`` output tokens each."""

    record_id: str
    gpu: str
    model: str
    gpus: int
    batch: int
    input_len: int
    output_len: int
    weight_precision: str | None = None
    kv_precision: str | None = None
    engine: str = "vllm"
    tpot_s: float = math.nan
    throughput_tokens_per_s: float = math.nan
    ttft_s: float = math.nan  # static batches only (LMDeploy's first-token latency); NaN otherwise
    #: prompts sent together to a continuous-batching server: other prompts' prefills interleave with decode
    interleaved_prefill: bool = False
    source: str = ""

    @property
    def context(self) -> int:
        """The mean context over the generation, at which the row's TPOT is predicted (whole tokens)."""
        return self.input_len + self.output_len // 2


DECODE_COLUMNS = "gpu, model, batch, input_len, output_len, and tpot_ms and/or output_throughput_tok_s"


def load_decode_rows(path: str | Path | None = None) -> list[DecodeRow]:
    """Rows of a decode CSV (default: the shipped ``decode_public.csv``). See ``DECODE_COLUMNS``."""
    p = Path(path) if path else reference_dir() / "decode_public.csv"
    raw = _read_csv(p)
    missing = [c for c in ("gpu", "model", "input_len", "output_len") if raw and c not in raw[0]]
    if raw and ("batch_size_or_concurrency" not in raw[0] and "batch" not in raw[0]):
        missing.append("batch")
    if missing:
        raise InvalidInputError(f"{p}: missing column(s) {', '.join(missing)}; a decode file has {DECODE_COLUMNS}")
    rows = []
    for i, r in enumerate(raw, 1):
        tpot = _float(r.get("tpot_ms")) / 1e3
        tput = _float(r.get("output_throughput_tok_s") or r.get("throughput_tok_s"))
        if math.isnan(tpot) and math.isnan(tput):
            raise InvalidInputError(f"{p}: row {i} has neither tpot_ms nor output_throughput_tok_s")
        batching = str(r.get("batching", "")).lower()
        static = "static" in batching
        interleaved = not static and ("at once" in batching or "together" in batching)
        engine = str(r.get("engine", "")).lower()
        rows.append(
            DecodeRow(
                record_id=r.get("record_id") or f"row{i}",
                gpu=r["gpu"],
                model=r["model"],
                gpus=int(_float(r.get("tensor_parallel_size") or r.get("gpus") or 1)),
                batch=int(_float(r.get("batch_size_or_concurrency") or r.get("batch"))),
                input_len=int(_float(r["input_len"])),
                output_len=int(_float(r["output_len"])),
                weight_precision=_dtype(r.get("weight_dtype", "")),
                kv_precision=_dtype(r.get("kv_cache_dtype", ""))
                if _dtype(r.get("kv_cache_dtype", "")) in ("fp16", "bf16", "fp8")
                else None,
                engine="vllm" if "vllm" in engine or not engine else engine.split(" ")[0],
                tpot_s=tpot,
                throughput_tokens_per_s=tput,
                ttft_s=_float(r.get("ttft_ms")) / 1e3 if static else math.nan,
                interleaved_prefill=interleaved,
                source=r.get("source", ""),
            )
        )
    return rows


def _profile_for(row: DecodeRow, engine: str | EngineProfile | None) -> EngineProfile:
    if engine is not None:
        return engine_profile(engine)
    try:
        return engine_profile(row.engine)
    except PlannerError:
        return engine_profile(None)  # e.g. LMDeploy: the shared fitted time factors


@dataclass(frozen=True)
class DecodePrediction:
    """Predictions for decode rows (arrays, one entry per row, or floats for one row)."""

    tpot_s: Any
    throughput_tokens_per_s: Any
    batch_prefill_s: Any


def predict_decode(
    row: DecodeRow,
    *,
    engine: str | EngineProfile | None = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
) -> DecodePrediction:
    """TPOT at the mean context and the whole-run output throughput of one row (see the module docstring)."""
    p = predict_decode_rows([row], engine=engine, calibration=calibration, catalog=catalog)
    return DecodePrediction(float(p.tpot_s[0]), float(p.throughput_tokens_per_s[0]), float(p.batch_prefill_s[0]))


def predict_decode_rows(
    rows: Sequence[DecodeRow],
    *,
    engine: str | EngineProfile | None = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
) -> DecodePrediction:
    """``predict_decode`` for many rows at once: one vectorized call per engine profile. NaN where a row fails."""
    cat = catalog or default_catalog()
    cal = resolve_calibration(calibration)
    n = len(rows)
    tpot, tput, pre = (np.full(n, math.nan) for _ in range(3))
    groups: dict[str, list[int]] = {}
    profiles: dict[str, EngineProfile] = {}
    for i, r in enumerate(rows):
        eng = _profile_for(r, engine)
        profiles[eng.name] = eng
        groups.setdefault(eng.name, []).append(i)
    for name, idx in groups.items():
        eng = profiles[name]
        sel = [rows[i] for i in idx]
        try:
            gpus = np.array([resolve_gpu_name(r.gpu, cat) for r in sel], dtype=object)
            models = np.array([resolve_model_name(r.model, cat) for r in sel], dtype=object)
        except PlannerError:
            if len(sel) == 1:
                continue
            for i in idx:  # find the bad row by itself
                one = predict_decode_rows([rows[i]], engine=eng, calibration=cal, catalog=cat)
                tpot[i], tput[i], pre[i] = one.tpot_s[0], one.throughput_tokens_per_s[0], one.batch_prefill_s[0]
            continue
        wp = np.array([r.weight_precision for r in sel], dtype=object)
        kp = np.array([r.kv_precision for r in sel], dtype=object)
        n_gpus = np.array([r.gpus for r in sel], dtype=float)
        batch = np.array([r.batch for r in sel], dtype=float)
        out_len = np.array([r.output_len for r in sel], dtype=float)
        opts = dict(engine=eng, catalog=cat, calibration=cal, errors="coerce")
        step = api.decode_step(
            gpus, models, np.array([r.context for r in sel]), batch, kp, n_gpus, wp, check_fit=False, **opts
        )
        prompts = np.array([max(r.input_len, 1) for r in sel], dtype=float)
        pf = api.prefill(gpus, models, prompts, n_gpus, wp, **opts)
        # a batch's prompts prefill together: the weights are read once, every prompt's FLOPs are done
        batch_prefill = api.prefill(gpus, models, prompts, n_gpus, wp, batch=batch, **opts)
        t_pre = np.asarray(batch_prefill.ttft_s, dtype=float)
        t = np.asarray(step.step_s, dtype=float)
        # prompts sent together to a continuous-batching server: each request's decode waits, on average, for
        # (batch - 1) / 2 other prompts' prefills spread over its output tokens
        interleaved = np.array([r.interleaved_prefill for r in sel])
        one_prefill = np.asarray(pf.ttft_s, dtype=float)
        t = t + np.where(interleaved, (batch - 1.0) / 2.0 * one_prefill / np.maximum(out_len - 1.0, 1.0), 0.0)
        tpot[idx], pre[idx] = t, t_pre
        # rows measured at one context (no output length) are steady-state decode: batch / TPOT
        tput[idx] = np.where(out_len > 0, batch * out_len / (t_pre + np.maximum(out_len - 1.0, 0.0) * t), batch / t)
    return DecodePrediction(tpot, tput, pre)


# -- validation tables -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One compared quantity of one reference row."""

    record_id: str
    what: str  # "KV cache GiB", "KV cache tokens", "max concurrency", "TPOT ms", "throughput tok/s"
    label: str  # model / GPU / configuration, for the table
    predicted: float
    published: float

    @property
    def error(self) -> float:
        """Relative error, predicted / published - 1 (NaN when the planner has no prediction)."""
        return self.predicted / self.published - 1.0 if self.published else math.nan


@dataclass(frozen=True)
class Table:
    title: str
    checks: tuple[Check, ...]
    tolerance_median: float
    tolerance_worst: float
    notes: tuple[str, ...] = field(default=())

    def errors(self, what: str | None = None) -> np.ndarray:
        return np.array(
            [
                abs(c.error) if not math.isnan(c.error) else math.inf
                for c in self.checks
                if what is None or c.what == what
            ]
        )

    def median(self, what: str | None = None) -> float:
        e = self.errors(what)
        return float(statistics.median(e)) if len(e) else math.nan

    def worst(self, what: str | None = None) -> float:
        e = self.errors(what)
        return float(e.max()) if len(e) else math.nan

    def passed(self) -> bool:
        kinds = dict.fromkeys(c.what for c in self.checks)
        return all(self.median(k) <= self.tolerance_median and self.worst(k) <= self.tolerance_worst for k in kinds)


def validate_memory(rows: Sequence[StartupRow] | None = None, *, catalog: Catalog | None = None) -> Table:
    """Every start-up row: available KV GiB per GPU, KV cache tokens and max concurrency, predicted vs printed."""
    rows = load_startup_rows() if rows is None else rows
    checks = []
    for r in rows:
        try:
            p = predict_startup(r, catalog=catalog)
        except PlannerError:
            p = StartupPrediction(math.nan, math.nan, math.nan)
        label = f"{r.model.split('/')[-1]} TP{r.tensor_parallel_size} util {r.memory_utilization:g} [{r.profile}]"
        checks.append(Check(r.record_id, "KV cache GiB", label, p.kv_cache_gib, r.kv_cache_gib))
        if not math.isnan(r.kv_cache_tokens):
            checks.append(Check(r.record_id, "KV cache tokens", label, p.kv_cache_tokens, r.kv_cache_tokens))
        if not math.isnan(r.max_concurrency):
            checks.append(Check(r.record_id, "max concurrency", label, p.max_concurrency, r.max_concurrency))
    return Table(
        "vLLM start-up: KV cache memory per GPU, KV cache tokens, max concurrency",
        tuple(checks),
        MEMORY_TOLERANCE,
        MEMORY_TOLERANCE,
    )


def validate_time(
    rows: Sequence[DecodeRow] | None = None,
    *,
    engine: str | EngineProfile | None = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
) -> Table:
    """Every decode row: TPOT and whole-run output throughput, predicted vs published."""
    rows = load_decode_rows() if rows is None else rows
    p = predict_decode_rows(rows, engine=engine, calibration=calibration, catalog=catalog)
    checks = []
    for i, r in enumerate(rows):
        label = f"{r.model.split('/')[-1]} {r.gpu.split('(')[0].strip()} B={r.batch} {r.input_len}/{r.output_len}"
        if not math.isnan(r.tpot_s):
            checks.append(Check(r.record_id, "TPOT ms", label, p.tpot_s[i] * 1e3, r.tpot_s * 1e3))
        if not math.isnan(r.throughput_tokens_per_s):
            checks.append(
                Check(r.record_id, "throughput tok/s", label, p.throughput_tokens_per_s[i], r.throughput_tokens_per_s)
            )
    return Table(
        "Decode: TPOT at the mean context, whole-run output throughput",
        tuple(checks),
        TIME_MEDIAN_TOLERANCE,
        TIME_WORST_TOLERANCE,
    )


def render_table(table: Table) -> str:
    """The table as aligned text: one line per check, then the median and worst |error| per quantity."""
    head = f"{'row':<7}{'quantity':<18}{'predicted':>12}{'published':>12}{'error':>9}  configuration"
    lines = [table.title, "", head]
    for c in table.checks:
        err = "n/a" if math.isnan(c.error) else f"{c.error:+.1%}"
        lines.append(f"{c.record_id:<7}{c.what:<18}{_num(c.predicted):>12}{_num(c.published):>12}{err:>9}  {c.label}")
    lines.append("")
    for what in dict.fromkeys(c.what for c in table.checks):
        lines.append(
            f"{what:<18} median |error| {table.median(what):6.1%}   worst {table.worst(what):6.1%}"
            f"   (limits {table.tolerance_median:.0%} / {table.tolerance_worst:.0%})"
        )
    return "\n".join(lines)


def _num(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:,.2f}"


# -- ranges ------------------------------------------------------------------------------------------------


def _range(value: Any, gpu: Any, engine: Any, calibration: Any, catalog: Catalog | None):
    """value x (1 + low), value x (1 + high): the measured time is value x (1 + residual)."""
    low, high = residual_quantiles(gpu, engine, calibration, catalog)
    return value * (1.0 + low), value * (1.0 + high)


def tpot_range(gpu: Any, model: Any, context: Any, batch: Any = 1, *args: Any, **options: Any):
    """(low, high) TPOT in seconds: ``api.tpot`` times 1 + the residual quantiles (scalars; one GPU name)."""
    t = api.tpot(gpu, model, context, batch, *args, **options)
    return _range(t, gpu, options.get("engine"), options.get("calibration"), options.get("catalog"))


def throughput_range(gpu: Any, model: Any, context: Any, batch: Any = 1, *args: Any, **options: Any):
    """(low, high) output tokens/s: ``api.throughput`` divided by 1 + the residual quantiles (high, low)."""
    tput = api.throughput(gpu, model, context, batch, *args, **options)
    low, high = residual_quantiles(gpu, options.get("engine"), options.get("calibration"), options.get("catalog"))
    return tput / (1.0 + high), tput / (1.0 + low)


def ttft_range(gpu: Any, model: Any, prompt_tokens: Any, *args: Any, **options: Any):
    """(low, high) TTFT in seconds: ``api.ttft`` times 1 + the residual quantiles (no queueing)."""
    t = api.ttft(gpu, model, prompt_tokens, *args, **options)
    return _range(t, gpu, options.get("engine"), options.get("calibration"), options.get("catalog"))


def quantiles(residuals: Iterable[float], low: float = 0.1, high: float = 0.9) -> tuple[float, float]:
    """The ``low`` and ``high`` quantiles of relative residuals, rounded outwards to 0.01, never excluding 0."""
    r = np.asarray([x for x in residuals if not math.isnan(x)], dtype=float)
    if not len(r):
        return DEFAULT_RESIDUALS
    lo, hi = np.quantile(r, [low, high])
    return min(math.floor(lo * 100) / 100, 0.0), max(math.ceil(hi * 100) / 100, 0.0)
