"""``planner workbook``: generate the what-if workbooks; ``planner workbook refresh FILE``: update a copy's catalog
and its Load sheet."""

from __future__ import annotations

from pathlib import Path

import click

from planner.cli.options import TokenCount, calibration_option, catalog_option, load, output_option
from planner.cli.plan import Percentile
from planner.cli.terminal import echo
from planner.export.scenario import choices_text
from planner.serving.load import PERCENTILES
from planner.units import counted

#: Said when LibreOffice is missing and a workbook's formulas were written without their values.
NO_VALUES = (
    "  its formulas have no stored values (LibreOffice not found): Excel and LibreOffice calculate them "
    "on open; previews and pandas show blanks. Install LibreOffice and run again with --force to store them"
)


def _selection_said(w) -> str:
    """What refresh did with the workbook's GPUs and models, where it was not what the options asked: kept its own
    selection (made with --gpus/--models), or grew a workbook that listed fewer to the whole catalog."""
    if w.selection == "kept":
        return (
            ": the GPUs and models the workbook was made with (--gpus/--models), with their GQA siblings; give "
            "--gpus all --models all for the whole catalog"
        )
    if w.selection == "grew":
        before = f"{counted(w.listed_before[0], 'GPU')} and {counted(w.listed_before[1], 'model')}"
        return (
            f": the whole catalog, where the workbook listed {before}; give --gpus and --models (the names it listed) "
            "to keep a smaller selection"
        )
    return ""


def _names(values: tuple[str, ...]) -> list[str] | None:
    """Repeated options and comma-separated lists alike: ('H100,A100', 'L4') -> ['H100', 'A100', 'L4']; None (all)
    when the option is not given."""
    out = [v.strip() for value in values for v in value.split(",") if v.strip()]
    return out or None


def _not_empty(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """A --gpus or --models given with no name in it ("", ",") is refused: leaving the option out means all."""
    if values and not _names(values):
        what = "GPU" if param.name == "gpu_names" else "model"
        raise click.BadParameter(
            f"{' '.join(map(repr, values))} names no {what}; give names, comma-separated or repeated "
            f"({'H100,A100-80GB' if what == 'GPU' else 'llama2-70b,llama-65b'}), or leave the option out for all",
            ctx=ctx,
            param=param,
        )
    return values


def _selection(f):
    f = click.option(
        "--models",
        "model_names",
        multiple=True,
        metavar="NAMES",
        callback=_not_empty,
        help="Models for the Models sheet, comma-separated or repeated [default: all; refresh: the workbook's own, "
        "'all' for the whole catalog]. GQA siblings are added.",
    )(f)
    return click.option(
        "--gpus",
        "gpu_names",
        multiple=True,
        metavar="NAMES",
        callback=_not_empty,
        help="GPUs for the GPUs sheet, comma-separated or repeated [default: all; refresh: the workbook's own, 'all' "
        "for the whole catalog].",
    )(f)


def _lengths(f):
    """The Inputs' mean lengths, latency percentile and high lengths, as planner plan takes them (its option types,
    and its checks: ``planner.serving.length_options``)."""
    for option in reversed(
        (
            click.option(
                "--prompt-tokens",
                type=TokenCount(),
                help="The Inputs' mean prompt tokens per request [default: blank, context - output tokens].",
            ),
            click.option(
                "--output-tokens",
                type=TokenCount(),
                help="The Inputs' mean output tokens per request [default: 400].",
            ),
            click.option(
                "--percentile",
                "latency_percentile",
                type=Percentile(),
                help=f"The Inputs' latency percentile: the TTFT and TPOT targets hold at it, {choices_text(PERCENTILES)} "
                "(plan --percentile); the Load sheet sizes the fleet on it [default: blank, 95].",
            ),
            click.option(
                "--prompt-tokens-high",
                type=TokenCount(),
                help="The Inputs' prompt length at the length percentile (plan --prompt-tokens-high): the Load sheet "
                "draws each prompt from a lognormal truncated at the slot (high prompt + high output), seeded, as "
                "planner plan --rate does; refused where no such fit holds it [default: blank, every prompt at the "
                "mean].",
            ),
            click.option(
                "--output-tokens-high",
                type=TokenCount(),
                help="The Inputs' output length at the length percentile (plan --output-tokens-high), drawn as "
                "--prompt-tokens-high [default: blank, every output at the mean].",
            ),
            click.option(
                "--length-percentile",
                type=Percentile(),
                help="With --prompt-tokens-high or --output-tokens-high: the percentile they are at, 90, 95 or 99 "
                "(plan --length-percentile) [default: blank, --percentile].",
            ),
        )
    ):
        f = option(f)
    return f


@click.group("workbook", invoke_without_command=True)
@output_option("-o", "--output-dir", folder=True, default=Path("workbooks"), help="Folder to write into.")
@_selection
@_lengths
@click.option("--force", is_flag=True, help="Overwrite existing workbooks.")
@calibration_option
@catalog_option
@click.pass_context
def workbook_group(
    ctx: click.Context, output_dir: Path, gpu_names, model_names, force: bool, catalog_dirs, **lengths
) -> None:
    """Generate the what-if workbook (capacity-what-if.xlsx): inputs with dropdowns (the engine among them: vllm,
    sglang, tensorrt-llm, lmdeploy), results, the baseline and five levers side by side (more GPUs per replica,
    prompt halved, a compare model, KV cache fp8, weights fp8), a lever that
    changes nothing saying so, for a MoE model a sixth (DP attention + EP, figures planner computed), charts, and
    the catalog as tables. Every other result is a native spreadsheet formula, so it
    recalculates in Excel or LibreOffice without Python. The Load sheet's latency under load (and the fleet sized on
    it) is planner's simulation, at the Inputs' latency percentile and with the Inputs' high lengths drawn as planner
    plan --rate draws them (--percentile, --prompt-tokens-high, --output-tokens-high, --length-percentile: the
    Inputs cells they fill, checked as plan checks them).

    Example:

    \b
        planner workbook -o workbooks --force
        planner workbook --gpus H100,A100-80GB --models llama2-70b,llama-65b -o my-books
        planner workbook -o my-books --percentile 99 --prompt-tokens 1500 --output-tokens 300 \\
            --prompt-tokens-high 3000 --output-tokens-high 600 --length-percentile 95
    """
    if ctx.invoked_subcommand is not None:
        return
    from planner.serving.length_options import PLAN_NAMES
    from planner.workbook.build import opening_inputs, select_entries
    from planner.workbook.update import generate

    gpus, models = (
        None if n and [x.lower() for x in n] == ["all"] else n for n in map(_names, (gpu_names, model_names))
    )
    cat = load(catalog_dirs)
    inputs = {k: v for k, v in lengths.items() if v is not None}
    if inputs:  # refused as planner plan refuses its options, in its words, before anything is built or written
        opening_inputs(cat, *select_entries(cat, gpus, models), "vllm", inputs, PLAN_NAMES)
    for w in generate(output_dir, cat, gpus, models, force=force, inputs=inputs or None):
        echo(f"wrote {w.path} ({counted(w.gpus, 'GPU')}, {counted(w.models, 'model')})")
        if not w.values_stored:
            echo(NO_VALUES)


@workbook_group.command("refresh")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option("-o", "--output", help="Write the refreshed copy here instead of replacing FILE.")
@_selection
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite --output if it exists; refresh a read-only FILE (it stays read-only), or one holding pictures "
    "or sparklines that refresh cannot keep.",
)
@calibration_option
@catalog_option
def refresh_command(file: Path, output: Path | None, gpu_names, model_names, force: bool, catalog_dirs) -> None:
    """Update the catalog sheets (GPUs, Models, Precisions) of a what-if workbook from the current catalog:
    new GPUs, new prices; and compute its Load sheet again from your Inputs, the engine, prompt tokens, latency
    percentile and high lengths among them (a percentile or high length planner plan refuses is refused, naming the
    cell)
    (latency under load comes from planner's simulation, not from cell formulas). Your inputs, your edits on other sheets (Assumptions included)
    and sheets you added are kept. Refuses a file `planner workbook` did not make, and an Inputs name its formulas
    do not look up (an alias such as H100: it names the catalog name to type).

    Example:

        planner workbook refresh my-copy.xlsx
    """
    from planner.workbook.update import inputs_warning, refresh

    w = refresh(file, load(catalog_dirs), _names(gpu_names), _names(model_names), output=output, force=force)
    echo(f"refreshed {w.path} ({counted(w.gpus, 'GPU')}, {counted(w.models, 'model')}){_selection_said(w)}")
    if w.load_not_simulated:
        echo(f"Load sheet not simulated: {w.load_not_simulated}; type it and refresh again to size a fleet")
    if not w.values_stored:
        echo(NO_VALUES.replace("run again with --force", "refresh again"))
    elif warning := inputs_warning(w.path):  # the Inputs' Error line warns of a price typed per instance (trial 23 F5)
        echo(warning)
