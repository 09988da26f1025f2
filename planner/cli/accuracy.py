"""``planner validate`` and ``planner calibrate``: how far off the planner is, and fitting it to your GPUs."""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import math
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import click
import numpy as np

from planner.accuracy.calibration import (
    ENV_VAR,
    FEW_ROWS,
    GpuCalibration,
    measurement_problem,
    resolve_calibration,
    write_calibration,
)
from planner.accuracy.margin_hint import margin_hints
from planner.accuracy.predict import (
    DECODE_COLUMNS,
    STARTUP_COLUMNS,
    DecodeRow,
    load_decode_rows,
    load_startup_rows,
    quantiles,
    read_csv_rows,
    reference_dir,
    resolve_gpu_name,
    resolve_model_name,
    why_not_predicted,
    with_names,
)
from planner.accuracy.published import KIND_COLUMN, assumed_client_notes, row_place
from planner.accuracy.releases import (
    PLAN_VLLM_RELEASE,
    assume_plan_release,
    assumed_release_note,
    engine_release,
    with_release,
)
from planner.accuracy.serving_results import RESULT_FILES, looks_like_result_file
from planner.accuracy.under_load import BORROWED_RANGE, FIGURES, borrowed_range_note, has_percentiles
from planner.accuracy.unread import (
    Unread,
    known_unread_figure,
    refusal,
    unknown_columns,
    unknown_result_keys,
    unknown_startup_columns,
)
from planner.accuracy.validation import (
    LIMITS,
    MEMORY_TOLERANCE,
    QUANTITIES,
    Table,
    render_table,
    to_json,
    validate_load,
    validate_memory,
    validate_time,
)
from planner.cli.options import (
    ENGINE_HELP,
    Whole,
    catalog_option,
    engine_name,
    layout_name,
    load,
    not_an_input,
    output_option,
)
from planner.cli.terminal import echo, keeping_stderr
from planner.engines.profiles import engine_family, engine_profile
from planner.errors import InvalidInputError, PlannerError
from planner.io.files import check_target
from planner.io.limits import MAX_MEASUREMENTS_BYTES, read_text_bounded
from planner.options import option_doc
from planner.serving.load import DATASETS

_PATH = click.Path(exists=True, dir_okay=False, path_type=Path)

#: The short form ``calibrate`` and ``validate --decode`` read beside DECODE_COLUMNS: decode timed at a context.
CONTEXT_COLUMNS = "gpu, model, batch, context, and tpot_ms and/or throughput_tok_s (decode timed at that context)"


#: A fit whose rows are still this much faster than it predicts (median measured / predicted - 1 below minus this),
#: with factors on their bounds, is warned (``at_bounds``): a factor of 1 is planner's own rate, the usual answer for
#: rows as fast as predicted, and no cause for a warning alone.
PINNED_MISS = 0.05


def at_bounds(factors: dict[str, float]) -> list[str]:
    """The fitted factors resting on a bound: an efficiency at ``fit.EFFICIENCY_BOUNDS``' top (the whole datasheet
    rate), a time at 0 (a trial's fit wrote bandwidth 1, FLOPs 1 and a step overhead of 4e-15 s, silently)."""
    from planner.accuracy.fit import EFFICIENCY_BOUNDS

    top = EFFICIENCY_BOUNDS[1]
    return [
        f"{k} {v:.3g}"
        for k, v in factors.items()
        if (k.endswith("_efficiency") and v >= top * 0.999) or (k.endswith("_s") and v < 1e-9)
    ]


def rows_params_b(rows, cat) -> tuple[float, float] | None:
    """The smallest and largest parameter count, in billions, of the rows' models (None where one is not in the
    catalog): what a calibration's range was measured on (``calibration.uncovered``)."""
    from planner.engines.architecture import param_counts

    try:
        sizes = [param_counts(cat.model(r.model))[0] / 1e9 for r in rows]
    except PlannerError:
        return None
    return (float(f"{min(sizes):.4g}"), float(f"{max(sizes):.4g}")) if sizes else None


@contextlib.contextmanager
def reading(path: Path | None, accepted: str):
    """A file of rows that cannot be read or parsed becomes one InvalidInputError line naming it."""
    try:
        yield
    except PlannerError:
        raise
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path}: not UTF-8 text; save it as a UTF-8 CSV with {accepted}") from None
    except (ValueError, KeyError, TypeError, OverflowError, IndexError, csv.Error) as exc:
        raise InvalidInputError(f"{path}: a row cannot be read ({exc}); expected {accepted}") from None


def _limits_text() -> str:
    """The limits ``validate`` holds each quantity to, as its help states them (from validation.LIMITS)."""
    return "; ".join(
        f"{QUANTITIES[q]} median {med:.0%}, worst {worst:.0%}" for q, (med, worst) in LIMITS.items() if q in TIME_LIMITS
    )


def _load_limits_text() -> str:
    """The limits of the serving-runs table, as its help states them: one per distinct (median, worst) pair."""
    by_limit: dict[tuple[float, float], list[str]] = {}
    for q in FIGURES:
        by_limit.setdefault(LIMITS[q], []).append(QUANTITIES[q])
    return "; ".join(f"{', '.join(qs)} median {m:.0%}, worst {w:.0%}" for (m, w), qs in by_limit.items())


#: The benchmark quantities; the start-up rows are held to MEMORY_TOLERANCE on every row.
TIME_LIMITS = ("tpot_ms", "ttft_ms", "throughput_tok_s")

VALIDATE_HELP = f"""Predicted vs published, row by row, with the median and worst error per quantity.

    Memory: vLLM's "Available KV cache memory" per GPU, "GPU KV cache size" and "Maximum concurrency" from
    start-up logs (limit {MEMORY_TOLERANCE:.0%} on every shipped row; your --memory file: median and worst
    {LIMITS["kv_cache_gib"][0]:.0%} and {LIMITS["kv_cache_gib"][1]:.0%}). Benchmarks: TPOT, TTFT and output
    throughput, each predicted as its benchmark ran (static batch, or a server given N prompts at once or at a
    rate; limits: {_limits_text()}). Serving runs under load (rows with {", ".join(FIGURES)}): each simulated
    as it ran; limits: {_load_limits_text()} (your --decode file's runs; the shipped runs are informative). In your
    file that table judges such a run whole: its mean TTFT and TPOT (limits as the medians) and output throughput
    are compared there, from the same simulation, and not in the Benchmarks table. Point --decode / --memory at your
    own files; rows that cannot be predicted say why. A row whose own figures contradict each other (a p99 below its
    median or p90, a mean under half its median or over twice its p99: columns swapped, a unit slipped) is listed
    under "Not scored" with the columns named, and left out of the errors and the verdict. Where your serving runs
    fail TTFT or TPOT slower than predicted, the FAIL ends with the latency_margin (planner export's [workload]) that
    covers the runs of each deployment; where most of a deployment's runs are predicted at 1.5x or more what they
    measured, it first says the plan is conservative for them and how to calibrate it (a fixed-concurrency run,
    planner calibrate). A row's kind cell says how
    its benchmark ran: {", ".join(KIND_COLUMN)} (blank: read from its batching cell). A row whose input_len or
    output_len is blank takes the published mean of the dataset its dataset cell names ({", ".join(DATASETS)};
    sonnet, random and generated-shared-prefix: the benchmark client's default lengths; sharegpt sent by vLLM's
    client: its shipped seed-0 sample, replayed as planner plan --dataset sharegpt sends it). A dataset cell's
    --random-range-ratio is read as its client draws it (vllm bench serve around the length, sglang.bench_serving
    below it); a prefix_cache cell says what the server had cached: warm, cold, or "warm: the first N prompts" (an
    earlier run of the sweep sent them). An optional burstiness cell (a run at a rate) is the gamma shape of its
    arrival gaps, as vllm bench serve --burstiness draws them (1 or blank: Poisson, below 1 burstier); the run is
    simulated at it.

    A vLLM row's release (engine_version column, or vllm==0.15.0 in its engine cell) sets its host loop: before 0.14
    synchronous (59 us a sequence), from 0.14 asynchronous. --engine vllm==X gives release X to the rows that state
    none; in your file a vLLM row that still states none is predicted as plan predicts it (vLLM
    {PLAN_VLLM_RELEASE}), with a note; the shipped rows keep the release their sources' dates give them.

    A --decode file may be the benchmark client's own result instead of a CSV: vllm bench serve --save-result's
    JSON (one run, or one a line with --append-result) or sglang.bench_serving --output-file's JSON Lines. It does
    not say the GPU or the GPUs of the server's group: give --gpu and --gpus (and --model for SGLang's, which names
    none; --metadata engine_version=X in the run, or --engine vllm==X, for the release). Each run is read as its CSV
    row: model_id, request_rate (inf: all at once), burstiness, max_concurrency (a closed loop), the mean lengths total_input_tokens / completed and total_output_tokens /
    completed (each request's where --save-detailed / --output-details listed them), and its median, p90, p95 and p99
    TTFT, TPOT and ITL (p90 / p95 where --metric-percentiles printed them), mean TTFT and TPOT and output_throughput.
    Its layout and precisions: --parallelism, --weight-precision and --kv-precision (plan's names), else vllm bench
    serve --metadata keys read as the CSV's columns of the same name (data_parallel_size, expert_parallel_size,
    pipeline_parallel_size, notes, weight_dtype, kv_cache_dtype); --gpus is the whole group (-tp 1 -dp 8: --gpus 8).
    The options win over the keys; a --metadata key read by nothing is named in a warning, and the text starts with
    the deployment each run is predicted as.

    A row's layout, shown in its configuration (TP8, DEP8, PP4, TP4xPP2): tensor_parallel_size GPUs split
    tensor-parallel (TP8), unless its batching or notes cell quotes TensorRT-LLM's "enable_attention_dp: true"
    (with expert_parallel_size, or an --ep_size in the command, equal to tensor_parallel_size) or SGLang's
    --enable-dp-attention (with --dp equal to it; up to SGLang 0.4.4 the flag alone): then data-parallel attention
    with the experts spread (DEP8); pipeline_parallel_size N: N stages of tensor_parallel_size GPUs each. A vLLM
    run of -tp 1 -dp N --enable-expert-parallel is DEP-N on N GPUs: a data_parallel_size column (with
    expert_parallel_size N, or --enable-expert-parallel in the batching or notes cell), or those words in the cell.
    expert_parallel_size alone, without one of those markers, leaves the row tensor-parallel (above the group: the
    row is refused with a note). A batching cell is
    read for words: "rate" or "poisson" (a server at a rate), "serving", "continuous", "concurrency", "at once"
    (prompts sent together), else a static batch; max_throughput goes in the kind cell.

    Example:

    \b
        planner validate
        planner validate --decode my-runs.csv --calibration my-gpus.toml --json
        planner validate --decode vllm-1.0qps-Llama-3.1-8B-Instruct.json --gpu H100 --gpus 1
    """


def run_layout_options(file: str):
    """--parallelism, --weight-precision (-w) and --kv-precision (-k): the deployment of ``file``'s runs (a benchmark
    client's result, which does not say it), as validate and calibrate both take them (``RunLayout``)."""

    def decorate(f):
        for option in reversed(
            (
                click.option(
                    "--parallelism",
                    type=click.STRING,
                    callback=layout_name,
                    help=f"Layout of the runs of {file}, as planner plan takes it: {option_doc('parallelism')} "
                    "[default: its --metadata data_parallel_size, expert_parallel_size, pipeline_parallel_size and "
                    "notes, read as the CSV's columns; else tp]; --gpus is then the whole group (vllm serve -tp 1 -dp 8 "
                    "--enable-expert-parallel: --gpus 8 --parallelism dp-ep).",
                ),
                click.option(
                    "--weight-precision",
                    "-w",
                    help=f"Weight precision of {file}'s runs, as planner plan takes it: "
                    f"{option_doc('weight_precision')} [before the default: its --metadata weight_dtype].",
                ),
                click.option(
                    "--kv-precision",
                    "-k",
                    help=f"KV-cache precision of {file}'s runs, as planner plan takes it: "
                    f"{option_doc('kv_precision')} [before the default: its --metadata kv_cache_dtype].",
                ),
            )
        ):
            f = option(f)
        return f

    return decorate


@click.command("validate", help=VALIDATE_HELP)
@click.option("--memory", "memory_file", type=_PATH, help="vLLM start-up CSV [default: the shipped reference rows].")
@click.option(
    "--decode",
    "decode_file",
    type=_PATH,
    help=f"Benchmark CSV ({DECODE_COLUMNS}; or, as calibrate reads it, {CONTEXT_COLUMNS}), or {RESULT_FILES} "
    "(give --gpu and --gpus) [default: shipped rows].",
)
@click.option("--gpu", help="GPU of the runs of a --decode result file (JSON: it does not say), e.g. H100.")
@click.option(
    "--gpus",
    type=Whole("a GPU count of 1 or more, e.g. 4", min=1),
    help="GPUs in the server's tensor-parallel group, for a --decode result file (JSON: it does not say).",
)
@click.option("--model", "model_name", help="Model of a --decode result file [default: its model_id].")
@run_layout_options("a --decode result file")
@click.option("--calibration", type=_PATH, help=f"Calibration file for the time predictions (also ${ENV_VAR}).")
@click.option(
    "--engine",
    callback=engine_name,
    help=f"Engine, {ENGINE_HELP}: for every row instead of the row's own engine; a release (vllm==0.15.0) is also "
    "the release of each row of that engine that states none.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object: "rows" (each compared figure; a row that contradicts itself, a p99 below its median, has '
    '"predicted" null, its "reason" and "not_scored" true), "summary" (errors and limits per quantity), "verdict" '
    '(PASS or FAIL, rows not scored left out), "margin_hints" (per deployment of your serving runs that fails TTFT or '
    'TPOT: kind "latency_margin", the margin that covers the runs slower than predicted, and kind "predicted_slower" '
    'where most are predicted at 1.5x or more what they measured: calibrate), "calibration", "deployments" (for a '
    'result file only: what its runs are predicted as, the text\'s header) and "notes" (what standard error said).',
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 when a table misses its limits (a row that contradicts itself, a p99 below its median or a mean "
    "many times its p99, is listed as not scored and left out); a --decode or --memory file with a column (or result "
    "key) that looks like a figure or a misspelt column and is not read is refused (exit 2).",
)
@catalog_option
def validate_command(
    memory_file,
    decode_file,
    gpu,
    gpus,
    model_name,
    parallelism,
    weight_precision,
    kv_precision,
    calibration,
    engine,
    as_json,
    check,
    catalog_dirs,
):
    layout = RunLayout(parallelism, weight_precision, kv_precision)
    heads: list[str] = []  # a result file's runs: the deployment each is predicted as (trial 31 F10)
    with keeping_stderr() as notes:  # every note and warning printed on the way, for --json's "notes"
        tables, calibration_in_effect, hints = _validated_tables(
            memory_file, decode_file, gpu, gpus, model_name, calibration, engine, check, catalog_dirs, layout, heads
        )
    if as_json:
        out = to_json([t for t, _ in tables], held=[counts for _, counts in tables])
        out["margin_hints"] = [h.as_dict() for h in hints]
        out["calibration"] = calibration_in_effect
        if heads:  # a result file's (a CSV names its deployments in its rows' configuration)
            out["deployments"] = heads
        out["notes"] = list(notes)
        echo(json.dumps(out, indent=1))
    else:
        for line in heads:
            echo(line)
        if heads:
            echo()
        for t, counts in tables:
            echo(render_table(t))
            if counts:
                why = "" if t.passed() else f" ({'; '.join(t.failures())})"
                echo(f"{'PASS' if t.passed() else 'FAIL'}: {t.title}{why}")
                if not t.passed() and any(q in FIGURES for q in t.quantities()):  # your serving runs' table
                    for h in hints:  # trial 28 F6: how to carry the runs' error into the budget
                        echo(h.text)
                echo()
            elif any(q in FIGURES for q in t.quantities()):  # the shipped loaded runs: informative (few sources)
                echo(f"INFO: {t.title}: not held to the limits ({'; '.join(t.failures()) or 'within them'})\n")
            else:  # informative rows: not held to the limits, their misses listed
                misses = sorted({c.record_id for c in t.checks if abs(c.error) > MEMORY_TOLERANCE})
                outside = f"; outside {MEMORY_TOLERANCE:.0%}: {', '.join(misses)}" if misses else ""
                echo(f"INFO: {t.title}: not held to the limits{outside}\n")
    if check and not all(t.passed() for t, counts in tables if counts):
        raise SystemExit(1)


@dataclass(frozen=True)
class RunLayout:
    """validate's --parallelism, --weight-precision and --kv-precision for a result file's runs (None: not given)."""

    parallelism: str | None = None
    weight_precision: str | None = None
    kv_precision: str | None = None

    def given(self) -> list[str]:
        """The options given, as flags."""
        flags = ("--parallelism", "--weight-precision", "--kv-precision")
        return [
            f for f, v in zip(flags, (self.parallelism, self.weight_precision, self.kv_precision), strict=True) if v
        ]

    def checked(self, cat) -> RunLayout:
        """The precisions as the catalog names them (plan's lookup: an unknown name is one line with the nearest)."""
        names = {}
        for field, flag in (("weight_precision", "--weight-precision"), ("kv_precision", "--kv-precision")):
            value = getattr(self, field)
            if value is not None:
                try:
                    names[field] = cat.precision(value.strip()).name
                except PlannerError as exc:
                    raise InvalidInputError(f"{flag} {value!r}: {exc}") from None
        return replace(self, **names)

    def applied(self, row: DecodeRow) -> DecodeRow:
        """``row`` with the options given in place of what its file said (the options win)."""
        changes: dict = {}
        if self.parallelism is not None:
            changes["parallelism"] = self.parallelism
            if self.parallelism in ("tp", "tp-ep"):  # TEP: tensor-parallel attention, experts spread whole
                changes["expert_parallel"] = self.parallelism == "tp-ep"
        if self.weight_precision is not None:
            changes["weight_precision"] = self.weight_precision
        if self.kv_precision is not None:
            changes["kv_precision"] = self.kv_precision
        return replace(row, **changes) if changes else row


def _validated_tables(
    memory_file,
    decode_file,
    gpu,
    gpus,
    model_name,
    calibration,
    engine,
    check,
    catalog_dirs,
    layout=RunLayout(),
    heads: list[str] | None = None,
) -> tuple[list[tuple[Table, bool]], str | None, list]:
    """``validate``'s tables, each with whether its limits count (PASS / FAIL; else informative), the calibration
    file in effect (None: none) and, where the table of your serving runs fails, each deployment's
    ``margin_hint.MarginHint`` (trial 28 F6; else none). Its notes and warnings go to standard error as they arise."""
    cat = load(catalog_dirs)
    release = engine_release(engine)  # --engine vllm==0.15.0: the release of the rows that state none
    engine = engine_profile(engine) if engine is not None else None
    result_file = decode_file is not None and looks_like_result_file(decode_file)
    given = [flag for flag, value in (("--gpu", gpu), ("--gpus", gpus), ("--model", model_name)) if value]
    if not result_file:
        _for_a_result_file(
            [*given, *layout.given()],
            "a --decode result file",
            "gpu, model, tensor_parallel_size (data_parallel_size, ",
        )
    layout = layout.checked(cat)
    tables = []  # (table, counts for --check)
    hints = []  # the latency_margin that covers your failing serving runs, per deployment
    if decode_file is None or memory_file is not None:
        if memory_file is None:
            ref = reference_dir()
            public = validate_memory(load_startup_rows(ref / "vllm_startup_public.csv"), engine=engine, catalog=cat)
            every_row = {q: (MEMORY_TOLERANCE, MEMORY_TOLERANCE) for q in public.quantities()}
            tables.append((replace(public, limits=every_row), True))
            for extra in sorted(ref.glob("vllm_startup_*.csv")):
                if extra.name != "vllm_startup_public.csv":
                    t = validate_memory(load_startup_rows(extra), engine=engine, catalog=cat)
                    tables.append((replace(t, title=f"{t.title} ({extra.name}: informative)"), False))
        else:
            _not_json(memory_file, STARTUP_COLUMNS)
            _name_unread_columns(memory_file, check, unknown_startup_columns)
            with reading(memory_file, "a vLLM start-up CSV with a number in every max_model_len"):
                rows = load_startup_rows(memory_file)
            _some_rows(memory_file, rows, STARTUP_COLUMNS)
            tables.append((validate_memory(rows, engine=engine, catalog=cat, every_row=True), True))
    if memory_file is None or decode_file is not None:
        if result_file:  # a benchmark client's own result: each run read as its decode CSV row would be
            decode_rows = _read_result_file(decode_file, cat, gpu, gpus, model_name, engine, check, layout)
            if heads is not None:  # the header: what each run is predicted as, and where each fact came from
                heads += deployment_lines(decode_file, decode_rows, cat, layout, engine)
        else:
            if decode_file is not None:
                _name_unread_columns(decode_file, check)
            with reading(decode_file, f"{DECODE_COLUMNS}; or {CONTEXT_COLUMNS}"):
                decode_rows = load_decode_rows() if decode_file is None else read_decode_csv(decode_file)
            _some_rows(decode_file, decode_rows, f"a decode file has {DECODE_COLUMNS}; or {CONTEXT_COLUMNS}")
            if decode_file is not None:
                _note_unread_percentiles(decode_file)
                for line in assumed_client_notes(str(decode_file), decode_rows):
                    echo(f"note: {line}", err=True)
        mine = decode_file is not None
        loaded = load_decode_rows(reference_dir() / "load_public.csv") if decode_file is None else decode_rows
        decode_rows, loaded = _releases(decode_rows, loaded, release, decode_file, result_file)
        # a user's serving run with percentiles is judged once, in the serving table (its means there too); the
        # shipped tables stay as they were: the Benchmarks rows (decode_*, perf_*) and the informative loaded runs
        timed = [r for r in decode_rows if not (mine and has_percentiles(r))]
        t = validate_time(timed, engine=engine, calibration=calibration, catalog=cat, every_row=mine)
        percentiles = any(has_percentiles(r) for r in loaded)
        if t.checks or decode_file is None or not percentiles:  # a file of serving runs alone: no empty PASS above
            tables.append((t, True))
        if percentiles:  # serving runs' medians and p99s (a user's: and means), simulated under their load
            t = validate_load(loaded, engine=engine, calibration=calibration, catalog=cat, means=mine)
            tables.append((t, decode_file is not None))
            if decode_file is not None and not t.passed():
                from planner.export.scenario import MAX_LATENCY_MARGIN

                hints = margin_hints(t, loaded, cat, MAX_LATENCY_MARGIN)
    if decode_file is not None:  # trial 33 F7: plan's notes on borrowed kernel and all-reduce rates, once per GPU
        for line in borrowed_rate_notes(decode_rows, engine, cat):
            echo(f"note: {line}", err=True)
    borrowed = sorted({c.quantity for t, _ in tables for c in t.checks if c.quantity in BORROWED_RANGE})
    if borrowed:  # trial 24 F11: a p95 compared, whose held-out range is p99's
        echo(f"note: {borrowed_range_note(borrowed)}", err=True)
    in_effect = resolve_calibration(calibration)
    if in_effect.entries:  # the predictions compared carry its factors (and, for its rows, the fit's own error)
        named = in_effect.path or calibration or "a calibration"
        echo(
            f"note: calibration {named} in effect ({len(in_effect.entries)} "
            f"entr{'ies' if len(in_effect.entries) != 1 else 'y'}): the predictions use its factors, so on the rows "
            f"it was fitted to this is its in-sample error; to validate planner's own, unset {ENV_VAR} and leave out "
            "--calibration",
            err=True,
        )
    return tables, (str(in_effect.path or calibration) if in_effect.entries else None), hints


def borrowed_rate_notes(rows: list[DecodeRow], engine, cat) -> list[str]:
    """``planner plan``'s warnings that a GPU's rates are another's (``planner.engines.kernel_curves.curves_note``:
    kernel curves; ``planner.engines.allreduce_table.borrowed_note``: all-reduce, where the row's group all-reduces
    within one fabric domain), on the same conditions as ``planner.report``'s, for the catalog GPUs among ``rows``,
    each text once (trial 33 F7: validate said nothing of MI325X's borrowed rates while its runs failed)."""
    from planner.accuracy.predict import _base_profile_for
    from planner.catalog.resolve import fabric_numbers, uses_allreduce_table
    from planner.engines.allreduce_table import borrowed_note
    from planner.engines.kernel_curves import curves_note

    out: list[str] = []
    for r in rows:
        try:
            g = cat.gpu(resolve_gpu_name(r.gpu, cat))
            eng = _base_profile_for(r, engine)
        except PlannerError:  # a row the tables already say they cannot predict
            continue
        notes = [curves_note(g.name, g.architecture) if eng.kernel_curves else ""]
        if r.parallelism != "dp-ep" and 1 < r.gpus <= fabric_numbers(g)["interconnect_domain_gpus"]:
            if uses_allreduce_table(eng):
                notes.append(borrowed_note(g, g.interconnect_bytes_per_s or 32e9, cat, r.gpus))
        out += [n for n in notes if n and n not in out]
    return out


def _releases(
    rows: list[DecodeRow],
    loaded: list[DecodeRow],
    release: tuple[str, str] | None,
    path: Path | None,
    result_file: bool,
) -> tuple[list[DecodeRow], list[DecodeRow]]:
    """The benchmark and loaded rows with the release each is predicted with where it states none
    (``planner.accuracy.releases``): --engine's release (vllm==0.15.0) for its engine's rows; then, in a user's file
    (``path``), the release plan models for its vLLM rows, with a note on standard error. The shipped rows keep their
    reading (their sources' dates: every published vLLM row that states none predates 0.14)."""
    if release is not None:
        rows, loaded = with_release(rows, *release)[0], with_release(loaded, *release)[0]
    if path is None or _shipped(path):  # the shipped rows, or one of their files given by name
        return rows, loaded
    rows, assumed = assume_plan_release(rows)
    if assumed:
        echo(f"note: {assumed_release_note(str(path), assumed, result_file)}", err=True)
    return rows, rows  # a user's file: its loaded runs are its rows


def _shipped(path: Path) -> bool:
    """Whether ``path`` is one of the shipped reference files (``catalogs/reference/``), whose rows keep the release
    their sources' dates give them."""
    try:
        return path.resolve().parent == reference_dir().resolve()
    except OSError:
        return False


def _read_result_file(
    path: Path, cat, gpu, gpus, model, engine, check: bool = False, layout: RunLayout = RunLayout()
) -> list[DecodeRow]:
    """The runs of a benchmark client's result file (``planner.accuracy.serving_results``), with its notes on
    standard error: a key that looks like a figure and is not read (``planner.accuracy.unread``: a warning; with
    ``check``, the file refused), ``--metadata`` keys not read (a warning, as for a CSV's columns), a backend that
    names an API (unless --engine says the engine), percentiles not compared. The options given (``layout``) win over
    the file's metadata."""
    from planner.accuracy.serving_results import read_results, unread_percentiles

    results = read_results(path)
    _name_unread(unknown_result_keys(results), "key", path, check)
    rows, notes = result_rows(path, cat, results, gpu, gpus, model, layout, "validate")
    for note in notes if engine is None else []:
        echo(f"note: {note}", err=True)
    unread = unread_percentiles(results)
    if unread:
        echo(
            f"note: {path}: key{'s' if len(unread) > 1 else ''} {', '.join(unread)} not compared; validate compares "
            "the median, p90, p95 and p99 of TTFT, TPOT and ITL, the means of TTFT and TPOT, and output_throughput",
            err=True,
        )
    return rows


def result_rows(
    path: Path, cat, results: list[dict], gpu, gpus, model, layout: RunLayout, command: str
) -> tuple[list[DecodeRow], list[str]]:
    """The runs of a benchmark client's result file as ``command`` (validate, calibrate) reads them: each run read as
    its decode CSV row (``serving_results.read_result_rows``), its ``--metadata`` layout keys (``LAYOUT_METADATA``)
    set aside where --parallelism is given, with a note, and the options given (``layout``) in place of what the file
    says; a ``--metadata`` key read by nothing is named in a warning (trial 31 F10). Returns the rows and the reader's
    notes (a backend that names an API) for the caller to print or not."""
    from planner.accuracy.serving_results import LAYOUT_METADATA, METADATA_COLUMNS, read_result_rows, unread_metadata

    rows, notes = read_result_rows(
        path, cat, gpu=gpu, gpus=gpus, model=model, results=results, layout_given=layout.parallelism is not None
    )
    figures = {u.name for u in unknown_result_keys(results)}  # (named by the caller, as keys not read)
    ignored = [k for k in unread_metadata(results) if k not in figures]
    if ignored:  # trial 31 F10: data_parallel_size and notes were dropped without a word
        echo(
            f"warning: {path}: --metadata key{'s' if len(ignored) > 1 else ''} {', '.join(ignored)} not read; "
            f"{command} reads {', '.join(METADATA_COLUMNS)} (each as the CSV column of that name)",
            err=True,
        )
    set_aside = [k for k in LAYOUT_METADATA if layout.parallelism and any(r.get(k) not in (None, "") for r in results)]
    if set_aside:
        echo(f"note: {path}: --metadata {', '.join(set_aside)} set aside: --parallelism given", err=True)
    return [layout.applied(r) for r in rows], notes


def _for_a_result_file(given: list[str], file: str, columns: str) -> None:
    """The options that say what a benchmark client's result file does not (``given``: --gpu, --parallelism ...)
    refused, in one line, for a CSV, which names them in its ``columns`` (then its layout and precision columns)."""
    if given:
        raise InvalidInputError(
            f"{' and '.join(given)} name{'s' if len(given) == 1 else ''} what {file} (JSON) does not say; a CSV "
            f"names them in its {columns}pipeline_parallel_size), weight_dtype and kv_cache_dtype columns"
        )


def deployment_lines(path: Path, rows: list[DecodeRow], cat, layout: RunLayout, engine) -> list[str]:
    """The header of a result file's runs: "PATH: predicted as ..." (``_deployment_line``), once per deployment."""
    return [f"{path}: {line}" for line in dict.fromkeys(_deployment_line(r, cat, layout, engine) for r in rows)]


def _deployment_line(row: DecodeRow, cat, layout: RunLayout, engine) -> str:
    """ "predicted as H200 SXM 141GB, DeepSeek-R1, vLLM, DEP8, fp8 weights, fp8 KV (layout: --parallelism; KV:
    --kv-precision)": what a result file's run is validated as, and where each fact came from."""
    from planner.accuracy.same_deployment import Deployment, deployment_of, row_layout

    dep = deployment_of(row, cat)
    if dep is None:  # a name that does not resolve: the row's own reason says so
        return f"{row.record_id}: predicted as {row.gpu}, {row.model}, {row_layout(row)}"
    if engine is not None:
        dep = Deployment(dep.gpu, dep.model, engine_family(engine.name), dep.layout, dep.weights, dep.kv)
    sources = [
        f"{what}: {flag if value else default}"
        for what, flag, value, default in (
            ("layout", "--parallelism", layout.parallelism, "--gpus and the file's metadata, else tp"),
            ("weights", "--weight-precision", layout.weight_precision, "weight_dtype, else the checkpoint's"),
            ("KV", "--kv-precision", layout.kv_precision, "kv_cache_dtype, else the model's default"),
        )
    ]
    refused = "; not predicted: its row says why" if row.problem else ""
    return f"predicted as {dep.words()} ({'; '.join(sources)}{refused})"


def _name_unread(unread: list[Unread], what: str, path: Path, check: bool) -> None:
    """One warning line on standard error for each column (or key) of ``path`` that is not read; with ``check``, a
    file with one the verdict would have covered (``Unread.judged``) is refused in one line instead (exit 2), since
    the PASS would not cover it (trial 15 F2: a misspelt ttft_p99_ms turned a FAIL into a PASS)."""
    if check and any(u.judged for u in unread):
        raise InvalidInputError(refusal(unread, what, str(path)))
    for u in unread:
        echo(f"warning: {u.warning(what, str(path))}", err=True)


def _name_unread_columns(path: Path, check: bool, unknown=unknown_columns) -> None:
    """``_name_unread`` for the columns of a decode CSV (``planner.accuracy.unread.unknown_columns``; a start-up CSV's
    with ``unknown_startup_columns``); a file that cannot be read is left to the reader's own message."""
    _name_unread(_unread_columns(path, unknown), "column", path, check)


def _unread_columns(path: Path, unknown=unknown_columns) -> list[Unread]:
    """The columns of the CSV ``path`` that ``unknown`` finds not read (none where it cannot be read: the reader's own
    message says why)."""
    try:
        rows = read_csv_rows(path)
    except PlannerError:
        return []
    return unknown(rows[0] if rows else {})


def _unread_in_measurements(path: Path) -> tuple[list[Unread], str]:
    """What of a measurements file ``calibrate`` does not read, and what those are ("column" or "key"): a decode
    CSV's unknown columns, or the unknown figure keys of a benchmark client's result file, as validate names them."""
    if looks_like_result_file(path):
        from planner.accuracy.serving_results import read_results

        try:
            return unknown_result_keys(read_results(path)), "key"
        except PlannerError:
            return [], "key"
    return _unread_columns(path), "column"


def _name_unread_measurements(path: Path, unread: list[Unread], what: str, fits: bool) -> None:
    """``calibrate``'s word on what of its file it does not read: where it would fit (``fits``) without a column (or
    key) that looks like a figure or a read column's misspelling, the file is refused in one line (exit 2), since the
    factors written would not answer to it; otherwise one warning line for each."""
    if fits and any(u.judged for u in unread):
        raise InvalidInputError(refusal(unread, what, str(path), "calibrate would fit the file", "calibrate"))
    for u in unread:
        echo(f"warning: {u.warning(what, str(path))}", err=True)


def _note_unread_percentiles(path: Path) -> None:
    """One note line on standard error naming the known figure columns of ``path`` that are not compared
    (ttft_p75_ms, vLLM's mean_itl_ms and request_throughput: ``unread.known_unread_figure``), so that a run's p75 is
    not dropped without a word."""
    with contextlib.suppress(PlannerError):
        rows = read_csv_rows(path)
        unread = [c for c in (rows[0] if rows else {}) if known_unread_figure(c) and c not in FIGURES]
        if unread:
            echo(
                f"note: {path}: column{'s' if len(unread) > 1 else ''} {', '.join(unread)} not compared; validate "
                f"compares {', '.join(FIGURES)}, the means of TTFT and TPOT (ttft_ms or ttft_mean_ms, tpot_ms or "
                "tpot_mean_ms) and output_throughput_tok_s (vllm bench serve's names of these, mean_ttft_ms ..., "
                "are read too)",
                err=True,
            )


def _some_rows(path: Path | None, rows: list, accepted: str) -> None:
    """A user's file with no rows (empty, or a header alone) is an error: an empty table would PASS --check."""
    if path is not None and not rows:
        raise InvalidInputError(f"{path}: no rows to compare (empty, or a header alone); {accepted}")


def _not_json(path: Path, accepted: str) -> None:
    """A JSON file given where a CSV belongs: its lines were read as a header and rows ("no rows", "missing
    columns gpu, model"); say what it is instead (a file that cannot be read is left to the CSV reader's error)."""
    start = ""
    with contextlib.suppress(OSError, UnicodeDecodeError, PlannerError):
        start = read_text_bounded(path, MAX_MEASUREMENTS_BYTES, "a measurements file").lstrip()[:1]
    if start in ("{", "["):
        raise InvalidInputError(
            f"{path}: a JSON file, not a CSV; {accepted} (a serving benchmark's result: planner validate --decode "
            f"{path} --gpu NAME --gpus N reads it)"
        )


def read_measurements(path: Path, gpu: str | None, model: str | None, gpus: int) -> list[DecodeRow]:
    """A decode CSV (``read_decode_csv``) or a benchmark client's result file (``serving_results``)."""
    return [row for row, _ in read_measurement_cells(path, gpu, model, gpus)]


def read_measurement_cells(
    path: Path, gpu: str | None, model: str | None, gpus: int, catalog=None, layout: RunLayout = RunLayout()
) -> list[tuple[DecodeRow, dict | None]]:
    """``read_measurements``' rows, each with its CSV row as written ({column: text} with its ``line``; for a
    benchmark client's result file, the result's keys as written): a message about a row names its line, column and
    cell as the file has them. A result file is read as ``validate --decode`` reads it (``result_rows``, with
    ``layout``: calibrate's --parallelism, -w and -k): a run at a request rate is a serving run, not a static batch of
    its prompts."""
    if looks_like_result_file(path):
        from planner.accuracy.serving_results import read_results

        if not gpu:
            raise InvalidInputError(f"{path}: a benchmark client's result does not name the GPU; pass --gpu")
        results = read_results(path)
        rows, _ = result_rows(path, catalog or load(()), results, gpu, gpus, model, layout, "calibrate")
        cells = [{str(k): "" if v is None else str(v) for k, v in r.items()} for r in results]
        return list(zip(rows, cells, strict=True))
    return _decode_csv_cells(path, gpu, model, gpus)


def read_decode_csv(
    path: Path, gpu: str | None = None, model: str | None = None, gpus: int | None = None
) -> list[DecodeRow]:
    """A user's decode CSV as ``calibrate`` and ``validate --decode`` read it: DECODE_COLUMNS, or CONTEXT_COLUMNS
    (``context`` in place of input_len / output_len: TPOT at that context, no output). ``gpu`` and ``model`` replace
    the file's names; ``gpus`` is the group of a file without a tensor_parallel_size (or gpus) column (None: the
    reader's own, 1)."""
    return [row for row, _ in _decode_csv_cells(path, gpu, model, gpus)]


def _decode_csv_cells(
    path: Path, gpu: str | None, model: str | None, gpus: int | None
) -> list[tuple[DecodeRow, dict | None]]:
    """``read_decode_csv``'s rows, each with its CSV row as written; a row that repeats an earlier one cell for cell
    (its record_id aside) is counted once, with a note (``_once``)."""
    return _once(path, _decode_csv_pairs(path, gpu, model, gpus))


def _once(path: Path, pairs: list[tuple[DecodeRow, dict | None]]) -> list[tuple[DecodeRow, dict | None]]:
    """``pairs`` without the rows whose cells (all but record_id) repeat an earlier row's, and one note naming them:
    a measurement pasted twice counted twice in the medians and in the fit (a trial)."""
    seen: dict[tuple, dict] = {}
    kept, repeats = [], []
    for row, cells in pairs:
        key = tuple(sorted((k, v) for k, v in (cells or {}).items() if k != "record_id")) if cells else None
        if key is not None and key in seen:
            repeats.append((getattr(cells, "line", None), getattr(seen[key], "line", None)))
            continue
        if key is not None:
            seen[key] = cells
        kept.append((row, cells))
    if repeats:
        shown = ", ".join(f"line {a} (= line {b})" for a, b in repeats[:5]) + (" ..." if len(repeats) > 5 else "")
        echo(
            f"note: {path}: {len(repeats)} row(s) repeat an earlier one cell for cell, counted once: {shown}", err=True
        )
    return kept


def _decode_csv_pairs(
    path: Path, gpu: str | None, model: str | None, gpus: int | None
) -> list[tuple[DecodeRow, dict | None]]:
    raw = read_csv_rows(path)  # bounded in size and rows
    header = list(raw[0]) if raw else []
    if "context" in header and "input_len" not in header:
        given = (("gpu", gpu, "--gpu"), ("model", model, "--model"))
        missing = [(column, flag) for column, value, flag in given if not value and column not in header]
        if missing:  # every row would lack it: the file, not its rows, is refused
            columns = " and ".join(c for c, _ in missing)
            flags = " and ".join(f for _, f in missing)
            raise InvalidInputError(
                f"{path}: no {columns} column; the context form has {CONTEXT_COLUMNS} (calibrate also takes {flags})"
            )
        return list(zip(_read_context_csv(path, raw, gpu, model, gpus or 1), raw, strict=True))
    rows = with_names(load_decode_rows(path), gpu, model)
    if gpus is not None and not {"tensor_parallel_size", "gpus"} & set(header):  # the file does not say: --gpus does
        rows = [replace(r, gpus=gpus) for r in rows]
    return list(zip(rows, raw, strict=True))


def _read_context_csv(
    path: Path, raw: list[dict[str, str]], gpu: str | None, model: str | None, gpus: int
) -> list[DecodeRow]:
    rows = []
    for i, r in enumerate(raw, 1):
        try:
            tpot = float(r.get("tpot_ms") or "nan") / 1e3
            tput = float(r.get("throughput_tok_s") or r.get("output_throughput_tok_s") or "nan")
            rows.append(
                DecodeRow(
                    record_id=r.get("record_id") or f"row{i}",
                    gpu=gpu or r["gpu"],
                    model=model or r["model"],
                    gpus=int(r.get("gpus") or gpus),
                    batch=int(float(r["batch"])),
                    input_len=int(float(r["context"])),
                    output_len=0,
                    tpot_s=tpot,
                    throughput_tokens_per_s=tput,
                    source=str(path),
                )
            )
        except (KeyError, ValueError, OverflowError) as exc:  # kept with its problem: calibrate skips it with a note
            what = f"no column {exc}" if isinstance(exc, KeyError) else f"a value is not a usable number ({exc})"
            problem = f"{what}; columns: gpu, model, batch, context, tpot_ms and/or throughput_tok_s"
            rid = r.get("record_id") or f"row{i}"
            rows.append(DecodeRow(rid, gpu or "", model or "", gpus, 1, 1, 0, source=str(path), problem=problem))
    return rows


#: The model whose shape ``calibrate --measure`` times when --model is not given.
MEASURE_MODEL = "Llama-3.1-8B"

#: Skipped rows named one by one on stderr; the rest are counted.
SKIPPED_SHOWN = 5


def measurement_place(row: DecodeRow, cells: dict | None) -> str:
    """Where a measurement is in the user's file: "line 3" (and its record_id) for a CSV row, else "row ID"."""
    if cells is not None and getattr(cells, "line", None) is not None:
        return row_place(cells, 0)
    if cells is not None and "#" in row.record_id:  # a benchmark client's result file's result i: "b#1"
        return f"result {row.record_id.rsplit('#', 1)[1]}"
    return f"row {row.record_id}"


def usable_by_gpu(
    rows: list[DecodeRow], cat, cells: list[dict | None] | None = None, engine=None
) -> tuple[dict[str, list[DecodeRow]], list[str]]:
    """The rows a fit can use, by catalog GPU name, and one "line N: why" line per row it cannot use (``cells``:
    each row's CSV row as written, naming its line, column and cell; without them, "row ID: why").

    The same rows ``planner validate`` reads; a bad cell, an unknown name or a missing figure skips that row only.
    """
    from planner.accuracy.calibration import Calibration
    from planner.accuracy.predict import predict_decode_rows

    by_gpu: dict[str, list[DecodeRow]] = {}
    skipped = []
    first = predict_decode_rows(rows, engine=engine, calibration=Calibration(), catalog=cat)  # as the fit starts
    for i, (r, c) in enumerate(zip(rows, cells or [None] * len(rows), strict=True)):
        problem = measurement_problem(r, c)
        if problem and not r.problem and r.batch == 0:  # a serving run whose server chose the batch
            served = r.request_rate is not None or r.kind == "serving"
            what = "a serving run at a rate (no batch: the server chose it)" if served else "batch 0 (no batch stated)"
            problem = (
                f"{what} is not fitted; calibrate takes rows of a stated batch of 1 or more with tpot_ms or "
                "output_throughput_tok_s"
                + ("; planner validate --decode compares its percentiles" if has_percentiles(r) else "")
            )
        if not problem:
            try:
                gpu = resolve_gpu_name(r.gpu, cat)
                resolve_model_name(r.model, cat)
            except PlannerError as exc:
                problem = str(exc)
        if not problem and math.isnan(first.tpot_s[i]):  # a group the engine cannot run ...: validate's reason
            problem = why_not_predicted(r, engine=engine, catalog=cat) or "no prediction for this row"
        if problem:
            skipped.append(f"{measurement_place(r, c)}: {problem}")
        else:
            by_gpu.setdefault(gpu, []).append(r)
    return by_gpu, skipped


def check_hint(file: Path | None, rows: list[DecodeRow], engine, output: Path, result_options: str = "") -> str:
    """How to check a calibration on the measurements it was fitted to: ", and check it with: planner validate ..."
    where ``validate --decode`` reads the file as calibrate did (the same GPU, model and group on every row:
    ``read_decode_csv`` without --gpu, --model and --gpus; a result file with calibrate's ``result_options``), else
    what to add to the file; "" for --measure."""
    if file is None:
        return ""
    chosen = f" --engine {shlex.quote(engine)}" if engine is not None else ""
    quoted = f"{shlex.quote(str(file))} --calibration {shlex.quote(str(output))}"
    if looks_like_result_file(file):  # validate reads it with the same --gpu, --gpus and --model
        return f", and check it with: planner validate --decode {quoted}{result_options}{chosen}"
    header: set[str] = set()
    try:
        header = set(read_csv_rows(file)[0])
        alone = read_decode_csv(file)
    except (PlannerError, ValueError, KeyError, IndexError, csv.Error):  # validate cannot read it as it stands
        alone = None
    group = "gpus" if "context" in header and "input_len" not in header else "tensor_parallel_size"  # as read
    if alone is None or len(alone) != len(rows):  # a name only the option gave
        columns = [c for c in ("gpu", "model") if c not in header]
        if not columns:
            return ""
    else:
        columns = [
            name
            for name, field in (("gpu", "gpu"), ("model", "model"), (group, "gpus"))
            if any(getattr(a, field) != getattr(r, field) for a, r in zip(alone, rows, strict=True) if not a.problem)
        ]
    if columns:
        words = {"gpu": "GPU", "model": "model", group: "GPUs in the tensor-parallel group"}
        return (
            "; to check it with planner validate (its --gpu, --model and --gpus are for a result JSON; a CSV names "
            "them), put the "
            f"{' and the '.join(words[c] for c in columns)} in the file's {' and '.join(columns)} "
            f"column{'s' if len(columns) > 1 else ''}"
        )
    return f", and check it with: planner validate --decode {quoted}{chosen}"


@click.command("calibrate")
@click.argument("file", type=_PATH, required=False)
@click.option("--measure", is_flag=True, help="Measure this machine's GPU with PyTorch (pip install 'planner[gpu]').")
@click.option("--gpu", help="GPU of the measurements (needed for a benchmark result file and --measure).")
@click.option(
    "--model",
    "model_name",
    help=f"Model of the measurements when the file does not say (--measure: its shape [default: {MEASURE_MODEL}]).",
)
@click.option(
    "--gpus",
    type=Whole("a GPU count of 1 or more, e.g. 4", min=1),
    default=1,
    show_default=True,
    help="GPUs in the tensor-parallel group of the measurements, for a file without a tensor_parallel_size column.",
)
@click.option(
    "--engine",
    callback=engine_name,
    help=f"Engine, {ENGINE_HELP}: write an entry for this engine only (default: one for every engine on this GPU); "
    "a release (vllm==0.15.0) is also the release of each row of that engine that states none, as in validate.",
)
@run_layout_options("a result FILE")
@output_option("--output", "-o", default=Path("planner-calibration.toml"), help="Calibration file to write.")
@click.option("--force", is_flag=True, help="Overwrite the output file.")
@click.option("--device", default=None, help="--measure: torch device [default: cuda if available, else cpu].")
@catalog_option
def calibrate_command(
    file,
    measure,
    gpu,
    model_name,
    gpus,
    engine,
    parallelism,
    weight_precision,
    kv_precision,
    output,
    force,
    device,
    catalog_dirs,
):
    """Fit the efficiency factors to your own measurements and write a calibration file.

    FILE is a CSV (gpu, model, batch, input_len, output_len, and tpot_ms and/or output_throughput_tok_s; or gpu,
    model, batch, context, tpot_ms: decode timed at that context; planner validate --decode reads both) or a
    serving benchmark's result file (vllm bench serve --save-result JSON, sglang.bench_serving --output-file JSON
    Lines; give --gpu and --gpus), read as validate reads it: a run at a request rate is not fitted (validate
    compares its percentiles), a closed loop at --max-concurrency is fitted at that batch; its layout and precisions
    are --parallelism, -w and -k, else its --metadata data_parallel_size, expert_parallel_size,
    pipeline_parallel_size, notes, weight_dtype and kv_cache_dtype (--gpus is the whole group: vllm serve -tp 1 -dp 8
    --enable-expert-parallel, --gpus 8 --parallelism dp-ep), and the text starts with the deployment each run is
    predicted as. A column (or result key)
    it does not read is named on standard error with the closest one it reads; one that looks like a figure or a
    misspelt read column (tpot_msx) refuses the file (exit 2): the fit would go on without it. Factors are fitted per
    GPU type; the file is picked up with ``calibration=`` in Python, --calibration, or the PLANNER_CALIBRATION
    environment variable. Prints the error before and after, over every figure fitted and per quantity (TPOT, output
    throughput, a static batch's prefill TTFT), the figures it does not fit (a serving run's TTFT, percentiles under
    load: planner validate compares them), each efficiency that sits at the fit's bound and whether the rows asked for
    more, and which plans the file re-times: every plan on its GPU, with every engine unless --engine names one, and
    every model.

    Example:

    \b
        planner calibrate my-runs.csv -o my-gpus.toml
        export PLANNER_CALIBRATION=my-gpus.toml
    """
    from planner.accuracy.bounds import floor_note
    from planner.accuracy.fit import CROSS_VALIDATION_FOLDS, cross_validated_residuals, fit_time_factors

    cat = load(catalog_dirs)
    not_an_input(output, file, "measurements file")
    check_target(output, force, make_parents=True)
    if measure == (file is not None):
        raise click.UsageError("give a measurements FILE or --measure (one of the two)")
    layout = RunLayout(parallelism, weight_precision, kv_precision)
    if measure and layout.given():
        raise click.UsageError(f"{' and '.join(layout.given())}: for a result FILE's runs; --measure times this GPU")
    if file is not None and not looks_like_result_file(file):
        _for_a_result_file(layout.given(), "a result file", "tensor_parallel_size (data_parallel_size, ")
    layout = layout.checked(cat)
    engine_text = engine  # as given, for the check it suggests (validate --engine vllm==0.15.0)
    release = engine_release(engine)  # --engine vllm==0.15.0: the release of the rows that state none
    engine = engine_profile(engine) if engine is not None else None
    eng = engine_profile(engine)
    if measure:
        from planner.accuracy import measure as meas

        result = meas.measure(gpu=gpu, model=model_name or MEASURE_MODEL, device=device, catalog=cat)
        echo(result.summary())
        rows, cat, source = result.rows, result.catalog, f"planner calibrate --measure on {result.device_name}"
        cells = [None] * len(rows)
    else:
        with reading(file, DECODE_COLUMNS):
            pairs = read_measurement_cells(file, gpu, model_name, gpus, cat, layout)
        rows, cells = [row for row, _ in pairs], [c for _, c in pairs]
        source = f"planner calibrate {file.name}"
    assumed = []
    if release is not None:  # --engine vllm==0.15.0: the release of the rows that state none, as validate reads it
        rows = with_release(rows, *release)[0]
    if file is not None and not _shipped(file):  # read as validate reads it: a vLLM row without a release is plan's
        rows, assumed = assume_plan_release(rows)
    given = (("--gpu", gpu), ("--gpus", gpus), ("--model", model_name))
    given += tuple(zip(layout.given(), (v for v in (parallelism, weight_precision, kv_precision) if v), strict=True))
    options = "".join(f" {flag} {shlex.quote(str(value))}" for flag, value in given if value)
    where = file or "--measure"
    if not rows:
        raise InvalidInputError(f"{where}: no measurements")
    by_gpu, skipped = usable_by_gpu(rows, cat, cells, eng)
    if file is not None:  # a misspelt tpot_ms: the fit went on without it, silently
        _name_unread_measurements(file, *_unread_in_measurements(file), fits=bool(by_gpu))
    places = {id(r): measurement_place(r, c) for r, c in zip(rows, cells, strict=True)}
    if not by_gpu:
        raise InvalidInputError(f"{where}: none of the {len(rows)} rows can be used; the first: {skipped[0]}")
    if assumed:  # (after the refusal above: a file none of whose rows can be used gets its one line alone)
        echo(f"note: {assumed_release_note(str(file), assumed, looks_like_result_file(file))}", err=True)
    if file is not None and looks_like_result_file(file):  # the header: what each run is fitted as (trial 31 F10)
        for line in deployment_lines(file, rows, cat, layout, engine):
            echo(line)
        echo()
    for line in skipped[:SKIPPED_SHOWN]:
        echo(f"note: {where}: {line}: row skipped", err=True)
    if len(skipped) > SKIPPED_SHOWN:
        echo(f"note: {where}: {len(skipped) - SKIPPED_SHOWN} more rows skipped", err=True)
    for row in (r for grows in by_gpu.values() for r in grows):
        if caveat := floor_note(cat, row):  # a measurement faster than the datasheet: fitted, but say so
            echo(f"warning: {where}: {places[id(row)]}: {caveat}", err=True)
    entries = []
    today = datetime.date.today().isoformat()
    for g, grows in by_gpu.items():
        fit = fit_time_factors(grows, eng, catalog=cat)
        few = len(grows) < FEW_ROWS  # quantiles of a handful of residuals are no range: the held-out one applies
        fit_low, fit_high = fit.quantiles
        low, high = fit_low, fit_high
        if not few:  # the range sizing applies: each row as predicted by a fit that did not use it
            cv_low, cv_high = quantiles(cross_validated_residuals(grows, eng, catalog=cat))
            low, high = min(cv_low, fit_low), max(cv_high, fit_high)
        entries.append(
            GpuCalibration(
                gpu=g,
                engine=engine.name if engine is not None else None,
                **fit.factors,
                residual_low=None if few else low,
                residual_high=None if few else high,
                rows=len(grows),
                gpu_counts=tuple(sorted({int(r.gpus) for r in grows})),
                params_b_range=rows_params_b(grows, cat),
                source=f"{source}, {today}, {len(grows)} row{'s' if len(grows) != 1 else ''}",
            )
        )
        echo(
            f"{g}: {len(grows)} row{'s' if len(grows) != 1 else ''}; median |error| {fit.median_abs_error(False):.1%} -> "
            f"{fit.median_abs_error():.1%}, worst {fit.worst_abs_error(False):.1%} -> {fit.worst_abs_error():.1%} "
            f"over the {len(fit.labels)} figure{'s' if len(fit.labels) != 1 else ''} fitted ({', '.join(fitted_quantities(fit))})"
        )
        for line in quantity_lines(fit):  # trial 31 F3: which quantity the error is of
            echo(f"  {line}")
        if not_fitted := unfitted_figures(grows):
            echo(f"  not fitted: {not_fitted}")
        recorded = (
            f"range {low:+.0%} / {high:+.0%} (each row predicted by a fit of the others, {CROSS_VALIDATION_FOLDS} "
            f"folds; in sample {fit_low:+.0%} / {fit_high:+.0%})"
            if not few
            else "no range recorded (too few rows)"
        )
        echo("  " + ", ".join(f"{k} {v:.4g}" for k, v in fit.factors.items()) + f"; {recorded}")
        echo(f"  {reach_line(entries[-1])}")  # trial 31 F3: keyed by GPU (and engine), not by model
        faster = float(np.median(fit.residuals_after)) < -PINNED_MISS  # measured under predicted, after the fit
        pinned = at_bounds(fit.factors) if faster else []
        for line in [] if pinned else top_bound_lines(fit, grows, eng, cat):  # trial 31 F3: 1.0 written silently
            echo(f"  at its bound: {line}")  # (a fit that misses because of it: the warning below, on stderr)
        if pinned:  # the rows ask for more than the factors give: they stop at their bounds and the fit cannot follow
            echo(
                f"warning: {g}: {', '.join(pinned)} reached {'their bounds' if len(pinned) > 1 else 'its bound'} "
                "(an efficiency at the datasheet's whole rate, a time at zero): the rows ask for more than the factors "
                "can give, so the fit stops short of them there; check the GPU count, precision and units of the rows",
                err=True,
            )
        if fit.median_abs_error() > fit.median_abs_error(False):  # the factors' form cannot follow these rows
            echo(
                f"warning: {g}: the fitted factors predict these rows worse at the median than the model without "
                f"them ({fit.median_abs_error(False):.1%} -> {fit.median_abs_error():.1%}; worst "
                f"{fit.worst_abs_error(False):.1%} -> {fit.worst_abs_error():.1%}): leave this GPU out of the file "
                "(the model's own factors then apply) or measure more batches and contexts",
                err=True,
            )
        if few:
            echo(
                f"warning: {g}: the fit rests on {len(grows)} row{'s' if len(grows) != 1 else ''} (fewer than "
                f"{FEW_ROWS}): its factors can move a sizing far, and its range is not recorded (sizing keeps the "
                f"held-out range); measure more batches and contexts{check_hint(file, rows, engine_text, output, options)}",
                err=True,
            )
    write_calibration(
        output, entries, force=force, header=f"Written by {source} on {today}. Use: PLANNER_CALIBRATION={output}"
    )
    echo(f"wrote {output}; use it with: export {ENV_VAR}={output}")


#: How ``calibrate`` names the quantities of ``fit.FitResult.labels`` ("IX-c8 TPOT" ...), in this order.
FITTED_WORDS = {"TPOT": "TPOT", "throughput": "output throughput", "TTFT": "TTFT (static batches' prefill)"}


def fitted_quantities(fit) -> list[str]:
    """The quantities of the figures ``fit`` scored, in ``FITTED_WORDS``' order."""
    kinds = {label.rsplit(" ", 1)[-1] for label in fit.labels}
    return [word for kind, word in FITTED_WORDS.items() if kind in kinds]


def quantity_lines(fit) -> list[str]:
    """One line per quantity fitted: its figures and their median and worst |error| before -> after the fit, as
    validate computes them (predicted / measured - 1)."""
    before, after = np.abs(fit.errors(False)), np.abs(fit.errors())
    kinds = np.array([label.rsplit(" ", 1)[-1] for label in fit.labels])
    lines = []
    for kind, word in FITTED_WORDS.items():
        sel = kinds == kind
        if sel.any():
            b, a = before[sel], after[sel]
            lines.append(
                f"{word} ({int(sel.sum())} figure{'s' if sel.sum() != 1 else ''}): median |error| "
                f"{np.median(b):.1%} -> {np.median(a):.1%}, worst {b.max():.1%} -> {a.max():.1%}"
            )
    return lines


def unfitted_figures(rows: list[DecodeRow]) -> str:
    """The figures the rows hold that the fit does not score ("" where none), and why: a serving run's TTFT (its
    queueing and the prefills of others, not one prefill's time: ``fit.ttft_is_prefill``) and the percentiles of runs
    under load, which validate compares by simulating each run."""
    from planner.accuracy.fit import MIN_PREFILL_TOKENS, ttft_is_prefill

    ttft = sum(
        1 for r in rows if not math.isnan(r.ttft_s) and r.ttft_s > 0 and not ttft_is_prefill(r, MIN_PREFILL_TOKENS)
    )
    parts = []
    if ttft:
        parts.append(
            f"TTFT of {ttft} row{'s' if ttft != 1 else ''} (a server's or a batch's first token holds its queue and "
            "the other prompts' prefills, not one prefill's time)"
        )
    names = [
        QUANTITIES.get(q, q)
        for q, (field, _, _) in FIGURES.items()
        if any(not math.isnan(getattr(r, field)) for r in rows)
    ]
    if names:
        parts.append(f"{', '.join(names)} (percentiles under load: validate simulates each run)")
    if not parts:
        return ""
    return "; ".join(parts) + ": the factors may move them either way; planner validate --decode compares them"


def top_bound_lines(fit, rows: list[DecodeRow], engine, cat) -> list[str]:
    """A line for each fitted efficiency at the fit's top (``fit.EFFICIENCY_BOUNDS``: 1, the GPU's kernels at the rate
    planner measured them, ``profiles.KERNEL_FACTORS``), saying whether the rows asked for more: the rows' error with
    the factor 5% above the bound, lower than at it, means the runs are faster than the model can express there."""
    from planner.accuracy.fit import EFFICIENCY_BOUNDS, residuals

    top = EFFICIENCY_BOUNDS[1]
    base = engine_profile(engine)
    at = float(np.sum(np.log1p(fit.residuals_after) ** 2))
    lines = []
    for name, value in fit.factors.items():
        if not name.endswith("_efficiency") or value < top * 0.999:
            continue
        try:
            beyond = residuals(rows, base.with_(**{**fit.factors, name: top * 1.05}), cat)
            wants_more = float(np.sum(np.log1p(beyond) ** 2)) < at
        except (PlannerError, ValueError):
            wants_more = False
        rate = "the rate planner's kernel curves give this GPU" if base.kernel_curves else "the datasheet's whole rate"
        what = f"{name} = {value:.3g} sits at the fit's upper bound ({top:g}: {rate})"
        if wants_more:
            lines.append(
                f"{what}: the runs are faster than the model can express there, and the fit stopped short of them "
                f"(by less than {PINNED_MISS:.0%} at the median); check the rows' GPU count, layout, precision and "
                "units before trusting the other factors"
            )
        else:
            lines.append(
                f"{what}: these rows fit no better 5% above it, so it is planner's own rate kept, not a rate these "
                "runs measured beyond it"
            )
    return lines


def reach_line(e: GpuCalibration) -> str:
    """Which plans an entry written changes (trial 31 F3): its factors re-time every plan, validate and export on its
    GPU, with its engine where --engine named one, else with every engine, and with every model (an entry is keyed by
    GPU and engine, never by model); the rows' GPU counts and model sizes only decide where its own time range holds
    (``calibration.uncovered``: outside them the held-out range is taken too)."""
    scope = f"engine {e.engine}" if e.engine else "every engine (--engine NAME writes an entry for one engine only)"
    covered = []
    if e.gpu_counts:
        covered.append(f"{', '.join(map(str, e.gpu_counts))}-GPU groups")
    if e.params_b_range:
        lo, hi = e.params_b_range
        covered.append(f"models of {lo:.4g}" + ("" if lo == hi else f"-{hi:.4g}") + "B parameters")
    rows = (
        f"; the rows' {' and '.join(covered)} only bound where its own time range holds (outside them the held-out "
        "range is taken too)"
        if covered
        else ""
    )
    return f"applies to every plan, validate and export on {e.gpu} with {scope} and every model{rows}"
