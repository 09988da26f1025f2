"""``planner export``: the budget review of a scenario, as xlsx, csv, md or pdf."""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from planner.cli.options import calibration_option, catalog_option, load, not_an_input, output_option
from planner.cli.terminal import echo
from planner.errors import InvalidInputError
from planner.units import counted

FORMATS = ("xlsx", "csv", "md", "pdf")


def review_date(given: str | None) -> str:
    """--date, else SOURCE_DATE_EPOCH (reproducible builds), else today: YYYY-MM-DD. An empty --date is refused (it
    would silently print today's)."""
    if given is not None and not given.strip():
        raise click.BadParameter(
            "empty; give a date as YYYY-MM-DD, or leave --date out for today", param_hint="'--date'"
        )
    if given:
        try:
            return dt.date.fromisoformat(given).isoformat()
        except ValueError:
            raise click.BadParameter(f"{given!r} is not a date; use YYYY-MM-DD", param_hint="'--date'") from None
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return dt.datetime.fromtimestamp(int(epoch), tz=dt.timezone.utc).date().isoformat()
        except (ValueError, OverflowError, OSError):
            raise InvalidInputError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970; got {epoch!r}") from None
    return dt.date.today().isoformat()


def _format_for(output: Path, fmt: str | None) -> str:
    """The format: from the file name's ending; --format must agree with a known ending (else a usage error)."""
    ext = output.suffix.lower().lstrip(".")
    ext = {"markdown": "md", "xlsm": "xlsx"}.get(ext, ext)
    if fmt:
        if ext in FORMATS and ext != fmt:
            raise click.BadParameter(
                f"--format {fmt} does not match the file name {output.name!r}; name it "
                f"{output.with_suffix('.' + fmt).name!r} or leave --format out",
                param_hint="'--format'",
            )
        return fmt
    if ext not in FORMATS:
        raise click.BadParameter(
            f"cannot tell the format from {output.name!r}; end the name in .xlsx, .csv, .md or .pdf, or pass --format",
            param_hint="'-o' / '--output'",
        )
    return ext


def _ms(seconds: float) -> str:
    """A TPOT in ms, one decimal; "n/a (one output token)" where there is none (NaN: every request emits one)."""
    return "n/a (one output token)" if math.isnan(seconds) else f"{seconds * 1e3:.1f} ms"


def _simulated(rec, high_percentile: float) -> str:
    """How the replicas were counted, when on simulated percentiles: ", replicas on simulated p95 ...". The
    percentile sized on is the latency one (``Workload.sizing_percentile``); the lengths memory is sized at are the
    scenario's ``high_percentile`` (trial 28 F10: a p95-lengths, p99-SLO review said "the p99 lengths")."""
    u = rec.under_load
    if u is None:
        return ""
    q = f"p{u.percentile:g}"
    return (
        f", replicas on simulated {q} TTFT {u.result.ttft_s.at(u.percentile):.2f} s and {q} TPOT "
        f"{_ms(u.result.tpot_s.at(u.percentile))} at the peak on {counted(u.replicas, 'serving replica')}, each running "
        f"at most {counted(rec.batch_per_replica, 'sequence')} at once (max_num_seqs set to what memory holds at the "
        f"p{high_percentile:g} lengths, within the engine's limit)"
    )


def summary_lines(review) -> list[str]:
    """What the command prints: the recommendation and the ranked options, one line each."""
    from planner.export.assumptions import reused_host_warning
    from planner.export.decision import cheapest_per_model_lines
    from planner.export.evaluate import kernel_curves_warning
    from planner.export.margin_releases import row_words
    from planner.export.tables import cap_note, fmt, prompt_time_note, whole_units_note

    rec = review.recommended
    # several models: each one's cheapest first, the recommendation ranking them together after (trial 31 F14)
    per_model = cheapest_per_model_lines(review)
    lines = [*per_model, *(["Across the models, the cheapest option of any:"] if per_model else [])] + [
        f"Recommended: {rec.option.name}: {rec.gpus:,} x {rec.gpu.name}, {fmt(rec.monthly_usd, 'usd')}/month "
        f"({counted(int(rec.fleet.replicas), 'replica')} of {counted(int(rec.replica.gpus), 'GPU')}"
        f"{': ' + rec.filling_text if rec.filling_text else ''}, TPOT {_ms(float(rec.fleet.tpot_peak_s))}, "
        f"TTFT of one p{review.scenario.workload.high_percentile:g} prompt alone {rec.replica.ttft_s:.2f} s; sized with a +{rec.margin:.0%} margin{_simulated(rec, review.scenario.workload.high_percentile)})"
    ]
    if rec.time_range_widened and review.scenario.workload.latency_margin == "model-range":  # no margin, no note
        lines.append(f"  margin widened {rec.time_range_widened}")
    tail = review.scenario.workload.spread_fit_note  # the lengths' fit past any lognormal (trial 27 F12)
    lines += [f"  lengths: {note}"] if (note := review.scenario.workload.lengths_file_note) else []
    lines += [f"  warning: Workload: {tail}"] if tail else []  # the Warnings section's words: said once (trial 34 F8)
    lines += [f"  warning: {w}" for w in rec.warnings]  # the recommended option's (every option's: in the review)
    # and, once per GPU, a ranked option's GPU whose kernel curves are another's, as plan warns (trial 24 F16)
    lines += [
        f"  warning: {w}"
        for w in dict.fromkeys(kernel_curves_warning(r.gpu, r.engine) for r in review.results)
        if w and w not in rec.warnings
    ]
    # the bought options whose host figures are a DGX H100's, as the review's Warnings say (trial 27 F7)
    lines += [f"  warning: {w}" for w in (reused_host_warning(review.results),) if w]

    def older(r) -> str:  # the row's margin, where mostly older engine releases' runs set it (trial 31 F4)
        return row_words(r, review.scenario.workload.latency_margin)

    width = max(len(r.option.name) for r in review.results)
    kinds = max(len(r.money.price_kind) for r in review.results)
    counts = max((len(f"{r.gpus:,}") for r in review.results if r.meets), default=4)
    money = max((len(fmt(r.monthly_usd, "usd")) for r in review.results if r.meets), default=10)
    for i, r in enumerate(review.results, start=1):
        kind = f"{r.money.price_kind:<{kinds}}"
        if r.meets:
            lines.append(
                f"  {i}. {r.option.name:<{width}}  {kind}  {counted(r.gpus, 'GPU', f'>{counts},'):<{counts + 5}}  {fmt(r.monthly_usd, 'usd'):>{money}}/month"
                + (
                    f"  ({note})"
                    if (
                        note := "; ".join(
                            x
                            for x in (whole_units_note(r), older(r), r.layout_chosen, prompt_time_note(r), cap_note(r))
                            if x
                        )
                    )
                    else ""
                )
            )
        else:
            lines.append(
                f"  -  {r.option.name:<{width}}  {kind}  does not meet the targets: {r.shortfall}"
                + (f" ({note})" if (note := "; ".join(x for x in (older(r), r.layout_chosen) if x)) else "")
            )
    if review.baseline_misses:  # a named baseline that misses the targets: the levers say what changes that (F8)
        lines.append(f"Levers: {review.baseline_misses}.")
    if review.outlook is not None:
        from planner.export.money_tables import money_lines

        lines += money_lines(review)
    if review.mixes:  # the [[mix]] budget lines, each the sum of its parts (planner.export.mix)
        from planner.export.money_tables import mix_lines

        lines += mix_lines(review)
    return lines


def show_progress(asked: bool | None, quiet: bool, stream=None) -> bool:
    """Whether the export prints its progress lines: --progress / --no-progress as given, else where standard error
    (``stream``) is a terminal (a redirected log or a test's captured output stays as it was); never with -q."""
    if quiet:
        return False
    if asked is not None:
        return asked
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def progress_printer(show: bool, clock=time.monotonic) -> Callable[[str], None] | None:
    """The ``build_review`` progress callback that prints each step as it starts on standard error, after the time
    since the export began ("  0:42 sizing option 2/5: H100, rented"): an option's sizing under load can take
    minutes (trial 32 F1: five options, 40 requests in flight, no output for over 17 minutes); None where not
    ``show``."""
    if not show:
        return None
    start = clock()

    def step(text: str) -> None:
        seconds = int(clock() - start)
        echo(f"{seconds // 60:3d}:{seconds % 60:02d} {text} ...", err=True)

    return step


def _warnings_to_stderr(review, said: list[str] = ()) -> None:
    """Every line of the review's Warnings section, on standard error after the ranked list (trial 30 F9: an
    amortization of 3 months, "3 looks like years", was said only deep in the file), but those the summary above
    already printed (``said``, its lines: "  warning: ..."): on a terminal, where both streams show, each once
    (trial 34 F8: the long-tail and kernel-curve warnings read as a repeat)."""
    printed = {line.strip().removeprefix("warning: ") for line in said if line.startswith("  warning: ")}
    for w in review.warnings:
        if w not in printed:
            echo(f"warning: {w}", err=True)


def _make_folder(folder: Path) -> Path | None:
    """Create the output's folder (e.g. out/) when its parent exists; the folder made, or None."""
    if folder.exists() or not folder.parent.is_dir():
        return None
    try:
        folder.mkdir()
    except FileExistsError:  # another export made it meanwhile: it is theirs
        return None
    return folder


def _folder_above(output: Path) -> None:
    """Refuse an output whose folder is missing more than one level down (``out/2027/q1/review.xlsx`` with no
    ``out/``): only the last folder is made, so a typo in a path does not grow a tree; say how to make it."""
    parent = output.parent
    if parent.exists() or parent.parent.exists() or any(p.exists() and not p.is_dir() for p in parent.parents):
        return  # made by _make_folder, or a file in the way: check_target names it
    missing = next(p for p in (parent, *parent.parents) if p.parent.exists())
    raise InvalidInputError(
        f"{output}: the folder {parent} does not exist; export makes the last folder only when the one above it "
        f"exists ({missing} is missing too): create it first (mkdir -p {parent})"
    )


def _remove_if_empty(folder: Path | None) -> None:
    if folder is not None and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()


@click.command("export")
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option(
    "-o",
    "--output",
    required=True,
    help="File to write: review.xlsx, review.csv, review.md or review.pdf; - writes md or csv to standard output.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format [default: from the file name].")
@click.option("--force", is_flag=True, help="Overwrite the output file if it exists.")
@click.option(
    "--date", "date", metavar="YYYY-MM-DD", help="Date printed in the review [default: $SOURCE_DATE_EPOCH, else today]."
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="A line on standard error as each option and step starts, with the time so far [default: on a terminal "
    "only]; -q turns it off.",
)
@calibration_option
@catalog_option
def export_command(
    scenario: Path,
    output: Path,
    fmt: str | None,
    force: bool,
    date: str | None,
    quiet: bool,
    progress: bool | None,
    catalog_dirs: tuple[Path, ...],
):
    """Budget review of a scenario: each option sized and costed, the cheapest that meets the targets, the levers.

    SCENARIO is a scenario TOML file (see examples/budget-review.toml) or a what-if workbook made by
    `planner workbook`. The xlsx opens on Summary (the recommendation, its risk and cost of ownership), then
    Options, Costs, Details, Like for like, Ownership, Break-even, Cash by year, Demand cases, Fleet by quarter, Levers,
    Charts, Glossary and Assumptions (every number with its source); csv is the options table; md is for a document or a ticket;
    pdf needs LibreOffice. A scenario's [[mix]] tables (several options serving the traffic at once, each its share:
    two models behind one gateway) add a line each, the sum of its parts, and a Mixes sheet.

    The format follows the file name's ending (--format must agree with it); a missing folder such as out/
    is created. An existing file is kept unless --force is given.

    Example:

        planner export examples/budget-review.toml -o out/review.xlsx
    """
    from planner.export import build_review, render, write_review
    from planner.export.files import check_target, write_stdout
    from planner.export.inputs import read_scenario

    to_stdout = str(output) == "-"
    if to_stdout and fmt not in ("md", "csv"):
        raise click.BadParameter(
            "standard output takes --format md or --format csv; give a file name for xlsx or pdf",
            param_hint="'-o' / '--output'",
        )
    kind = _format_for(output, fmt)
    if not to_stdout:
        not_an_input(output, scenario, "scenario")
    made = None if to_stdout else _make_folder(output.parent)
    if not to_stdout:
        try:
            _folder_above(output)
            check_target(output, force)
        except Exception:
            _remove_if_empty(made)
            raise
    try:  # a scenario, catalog or date refused, or the sizing stopped: the folder made for the output goes too
        when = review_date(date)
        catalog = load(catalog_dirs)
        sc = read_scenario(scenario, catalog)
        origin = "scenario file [workload]"
        if scenario.suffix.lower() in (".xlsx", ".xlsm"):
            from planner.export.workbook_input import WORKBOOK_ORIGIN

            origin = WORKBOOK_ORIGIN
        step = progress_printer(show_progress(progress, quiet))
        review = build_review(sc, catalog, source=str(scenario), date=when, progress=step, workload_source=origin)
        if step is not None and not to_stdout:
            step(f"writing {output}")
        if to_stdout:  # the review is the output; the summary would corrupt it
            write_stdout(render(review, kind))
            if not quiet:
                _warnings_to_stderr(review)
            return
        write_review(review, output, kind, force=force)
    except BaseException:
        _remove_if_empty(made)
        raise
    if not quiet:
        summary = summary_lines(review)
        for line in summary:
            echo(line)
        _warnings_to_stderr(review, summary)
        echo(f"Wrote {output} ({kind}). To write it again: the same command with --force.")
