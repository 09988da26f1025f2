"""The shipped published runs of one deployment, with ``planner validate``'s error on each (trial 22 F7).

``planner plan`` prints a deployment: a GPU, a model, an engine, a layout over a group of GPUs, weight and KV
precisions. The shipped reference runs (``catalogs/reference/decode_*.csv``, ``perf_*.csv`` and ``load_public.csv``)
hold published runs of some of these deployments, each of which ``planner validate`` predicts as the run went and
compares (its Benchmarks table: TPOT, TTFT and the run's output rate; its serving table: median and p99 under load).
A user choosing an engine should see where the same deployment's published runs and the prediction part: SGLang's
TP8 DeepSeek-V3.2 on H200 (GPUSTACK-017) is predicted at 223 ms TPOT against 1,104 ms published.

**The errors are validate's, never recomputed here.** Running ``validate_time`` on a deployment's rows costs seconds
(the serving simulations, and the front-end fit over every shipped loaded run, ``frontend.shipped_votes``: 7 s), too
slow for ``plan`` (2-5 s in all). ``bench/published_run_errors.py`` runs ``validation.validate_time`` and
``validate_load`` on the shipped rows exactly as ``planner validate`` does (no calibration, each row's own engine and
release) and writes each run's figures to ``catalogs/reference/published_run_errors.csv`` (``RUN_ERRORS_FILE``) with
the deployment it ran (``deployment_of``); ``same_deployment_runs`` reads that file and matches. A test recomputes
some rows with validate's code and holds the file to them (tests/test_same_deployment.py): a change to the model
that moves them fails it until the file is written again.

**Matching** (``Deployment``): the same catalog GPU, catalog model, engine (vLLM, SGLang, TensorRT-LLM, LMDeploy; any
release: each run names its own), layout and group (``planner.model.layouts.layout_label``: TP8, TEP8 with experts
spread whole (the run's command spreads them: ``--enable-expert-parallel``, ``--ep-size``), DEP8, TP4xPP2), weight
precision and KV-cache precision (a run that states none: the model's default, as validate predicts it). Runs with
speculative decoding are a different deployment and are not matched; runs validate could not predict carry no error
and are not listed. A run of a source the time factors were fitted on (``fit.FIT_SOURCE_GROUPS``) says so: its error
is in-sample.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.accuracy.published import (
    DecodeRow,
    reference_dir,
    release_in_engine_cell,
    resolve_gpu_name,
    resolve_model_name,
)
from planner.accuracy.validation import Check
from planner.catalog import Catalog
from planner.catalog.resolve import default_kv_precision, weights_phrase
from planner.engines.profiles import engine_family
from planner.errors import PlannerError
from planner.model.layouts import layout_label
from planner.units import fmt_rate, fmt_seconds

#: The file ``bench/published_run_errors.py`` writes (in ``catalogs/reference/``).
RUN_ERRORS_FILE = "published_run_errors.csv"
#: The figures kept per run, in the order a line shows them: validate's quantities (``validation.QUANTITIES``).
FIGURES = ("tpot_ms", "ttft_ms", "throughput_tok_s", "tpot_median_ms", "ttft_median_ms", "tpot_p99_ms")
#: How a line names each figure.
FIGURE_WORDS = {
    "tpot_ms": "TPOT",
    "ttft_ms": "TTFT",
    "throughput_tok_s": "throughput",
    "tpot_median_ms": "TPOT median",
    "ttft_median_ms": "TTFT median",
    "tpot_p99_ms": "TPOT p99",
}
#: The deployment columns of the file, then each figure's predicted and published value.
COLUMNS = (
    "record_id",
    "source_group",
    "gpu",
    "model",
    "engine",
    "release",
    "layout",
    "weights",
    "kv",
    "speculative",
    "run",
    *(f"{q}_{side}" for q in FIGURES for side in ("predicted", "published")),
)
#: Engine families (``planner.engines.profiles.engine_family``: ``DecodeRow.engine`` and a plan's engine profile) as
#: a line names them.
ENGINE_WORDS = {"vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM", "lmdeploy": "LMDeploy"}


@dataclass(frozen=True)
class Deployment:
    """What a run or a plan deploys, as ``same_deployment_runs`` matches it."""

    gpu: str  # catalog name
    model: str  # catalog name
    engine: str  # ``engine_family``
    layout: str  # ``layout_label``: TP8, TEP8, DEP8, TP4xPP2
    weights: str  # catalog precision name
    kv: str  # catalog precision name

    @classmethod
    def planned(
        cls, gpu: str, model: str, engine: str, parallelism: str, gpus: int, weights: str, kv: str
    ) -> Deployment:
        """A plan's deployment from its catalog names, its engine profile's name ("sglang-0.5.5": SGLang), its
        parallelism ("tp-ep") and group (8: TEP8)."""
        return cls(gpu, model, engine_family(engine), layout_label(parallelism, int(gpus)), weights, kv)

    def words(self, experts: str | None = None) -> str:
        """ "H200 SXM 141GB, DeepSeek-V3.2, SGLang, TP8, fp8 weights, bf16 KV"; with a plan's routed ``experts``
        precision where it differs from the weights ("bf16 weights + mxfp4 experts", ``resolve.weights_phrase``:
        gpt-oss as published), which the matching does not compare (trial 26 F2: the review's Assumptions said
        "bf16 weights" for gpt-oss where its Details said "bf16 + mxfp4 experts")."""
        engine = ENGINE_WORDS.get(self.engine, self.engine)
        weights = weights_phrase(self.weights, experts)
        return f"{self.gpu}, {self.model}, {engine}, {self.layout}, {weights}, {self.kv} KV"


def row_layout(row: DecodeRow) -> str:
    """The run's layout label: its ``parallelism`` over its GPUs, tensor parallel with experts spread whole (TEP) where
    its own command spreads them (``DecodeRow.expert_parallel``)."""
    parallelism = "tp-ep" if row.parallelism == "tp" and row.expert_parallel else row.parallelism
    return layout_label(parallelism, row.gpus)


def deployment_of(row: DecodeRow, catalog: Catalog) -> Deployment | None:
    """The deployment a shipped run ran, its names resolved as validate resolves them; None where a name does not
    resolve (validate cannot predict such a row either)."""
    try:
        gpu, model = resolve_gpu_name(row.gpu, catalog), resolve_model_name(row.model, catalog)
        mdl = catalog.model(model)
        weights = catalog.precision(row.weight_precision).name if row.weight_precision else mdl.native_precision
        kv = catalog.precision(row.kv_precision).name if row.kv_precision else default_kv_precision(mdl)
    except (PlannerError, KeyError, ValueError):
        return None
    return Deployment(gpu, model, engine_family(row.engine), row_layout(row), weights, kv)


def run_words(row: DecodeRow) -> str:
    """How the run went, in a few words: "1,000 prompts at once, ShareGPT 219/197 tokens"; "500 prompts at 8 req/s";
    "200 prompts, 32 at a time"; "static batch 64, 1,024/128 tokens"."""
    lengths = f"{row.input_len:,}/{row.output_len:,} tokens"
    dataset = (row.dataset.split() or [""])[0].strip(",;:")
    lengths = f"{dataset} {lengths}" if dataset and row.kind == "serving" else lengths
    if row.kind != "serving":
        return f"static batch {row.batch:,}, {lengths}"
    prompts = f"{row.num_prompts:,} prompts" if row.num_prompts else "prompts"
    if row.request_rate is not None and math.isfinite(row.request_rate):
        return f"{prompts} at {row.request_rate:g} req/s, {lengths}"
    if 0 < row.batch < (row.num_prompts or 0):
        return f"{prompts}, {row.batch:,} at a time, {lengths}"
    return f"{prompts} at once, {lengths}"


def error_rows(rows: Sequence[DecodeRow], checks: Iterable[Check], catalog: Catalog) -> list[dict[str, str]]:
    """The file's rows: for each run with at least one figure of ``FIGURES`` that validate predicted (``checks``,
    validate's own), its deployment and each kept figure's predicted value (8 significant digits: its error as
    validate prints it to 1e-7) and published value (as read)."""
    figures: dict[str, dict[str, Check]] = {}
    for c in checks:
        if c.quantity in FIGURES and not math.isnan(c.error):
            figures.setdefault(c.record_id, {})[c.quantity] = c
    out = []
    for r in rows:
        kept, where = figures.get(r.record_id), deployment_of(r, catalog)
        if not kept or where is None:
            continue
        release = r.engine_version and release_in_engine_cell(r.engine_version)
        line = {
            "record_id": r.record_id,
            "source_group": r.source_group,
            "gpu": where.gpu,
            "model": where.model,
            "engine": where.engine,
            "release": release or "",
            "layout": where.layout,
            "weights": where.weights,
            "kv": where.kv,
            "speculative": "yes" if r.speculation is not None else "",
            "run": run_words(r),
        }
        for q in FIGURES:
            c = kept.get(q)
            line[f"{q}_predicted"] = "" if c is None else f"{c.predicted:.8g}"
            line[f"{q}_published"] = "" if c is None else repr(float(c.published))
        out.append(line)
    return out


@dataclass(frozen=True)
class PublishedRun:
    """One published run of a deployment and validate's figures for it (``Check``s: predicted, published, error)."""

    record_id: str
    source_group: str
    engine: str
    release: str
    run: str
    figures: tuple[Check, ...]

    def as_dict(self) -> dict[str, Any]:
        """The run as plain values (``planner plan --json``'s ``published_runs``): each figure's quantity (validate's
        name), predicted and published value and signed error, predicted / published - 1."""
        return {
            "record_id": self.record_id,
            "source_group": self.source_group,
            "engine": self.engine,
            "release": self.release or None,
            "run": self.run,
            "in_sample": self.source_group in FIT_SOURCE_GROUPS,
            "figures": [
                {"quantity": c.quantity, "predicted": c.predicted, "published": c.published, "error": c.error}
                for c in self.figures
            ],
        }

    @property
    def worst(self) -> float:
        """The largest |error| of its figures."""
        return max(abs(c.error) for c in self.figures)

    def words(self) -> str:
        """ "gpustack-performance-lab, SGLang 0.5.6.post2, 1,000 prompts at once, ShareGPT 219/197 tokens: TPOT
        predicted 223 ms vs 1.10 s published (-80%), TTFT 4.17 s vs 11.47 s published (-64%), throughput 4,293
        tokens/s vs 1,427 tokens/s published (+201%)"."""
        engine = ENGINE_WORDS.get(self.engine, self.engine) + (f" {self.release}" if self.release else "")
        said = []
        for i, c in enumerate(self.figures):
            verb = "predicted " if i == 0 else ""
            said.append(
                f"{FIGURE_WORDS[c.quantity]} {verb}{_figure(c.quantity, c.predicted)} vs "
                f"{_figure(c.quantity, c.published)} published ({c.error:+.0%})"
            )
        fitted = (
            " (in-sample: the time factors were fitted on this source)"
            if self.source_group in FIT_SOURCE_GROUPS
            else ""
        )
        return f"{self.source_group}{fitted}, {engine}, {self.run}: " + ", ".join(said)


def _figure(quantity: str, value: float) -> str:
    """A figure as plan prints its own: a time in ms or s (``fmt_seconds``), a rate in tokens/s (``fmt_rate``)."""
    return fmt_rate(value) if quantity == "throughput_tok_s" else fmt_seconds(value / 1e3)


@functools.cache
def _read(path: str, size: int, mtime: int) -> tuple[dict[str, str], ...]:
    with open(path, newline="", encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def shipped_run_errors(path: str | Path | None = None) -> tuple[dict[str, str], ...]:
    """The rows of ``RUN_ERRORS_FILE`` (read once per process while the file is unchanged); () where it is missing."""
    p = Path(path) if path is not None else reference_dir() / RUN_ERRORS_FILE
    try:
        st = p.stat()
    except OSError:
        return ()
    return _read(str(p), st.st_size, st.st_mtime_ns)


def same_deployment_runs(deployment: Deployment, rows: Iterable[dict[str, Any]] | None = None) -> list[PublishedRun]:
    """The published runs of ``deployment`` (``rows``: the file's; default the shipped one), the farthest off first
    (largest |error| of any of its figures), speculative runs left out. A pure function of its arguments."""
    found = []
    for r in shipped_run_errors() if rows is None else rows:
        key = Deployment(r["gpu"], r["model"], r["engine"], r["layout"], r["weights"], r["kv"])
        if key != deployment or r.get("speculative"):
            continue
        checks = tuple(
            Check(r["record_id"], q, "", float(r[f"{q}_predicted"]), float(r[f"{q}_published"]))
            for q in FIGURES
            if r.get(f"{q}_predicted") and r.get(f"{q}_published")
        )
        checks = tuple(c for c in checks if not math.isnan(c.error))
        if checks:
            found.append(PublishedRun(r["record_id"], r["source_group"], r["engine"], r["release"], r["run"], checks))
    return sorted(found, key=lambda run: (-run.worst, run.record_id))
