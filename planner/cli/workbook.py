"""``planner workbook``: generate the what-if workbooks; ``planner workbook refresh FILE``: update a copy's catalog
and its Load sheet."""

from __future__ import annotations

from pathlib import Path

import click

from planner.cli.options import calibration_option, catalog_option, load, output_option
from planner.cli.terminal import echo
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


@click.group("workbook", invoke_without_command=True)
@output_option("-o", "--output-dir", folder=True, default=Path("workbooks"), help="Folder to write into.")
@_selection
@click.option("--force", is_flag=True, help="Overwrite existing workbooks.")
@calibration_option
@catalog_option
@click.pass_context
def workbook_group(ctx: click.Context, output_dir: Path, gpu_names, model_names, force: bool, catalog_dirs) -> None:
    """Generate the what-if workbook (capacity-what-if.xlsx): inputs with dropdowns (the engine among them: vllm,
    sglang, tensorrt-llm, lmdeploy), results, the baseline and five levers side by side (more GPUs, prompt halved,
    a compare model, KV cache fp8, weights fp8), a lever that
    changes nothing saying so, for a MoE model a sixth (DP attention + EP, figures planner computed), charts, and
    the catalog as tables. Every other result is a native spreadsheet formula, so it
    recalculates in Excel or LibreOffice without Python.

    Example:

    \b
        planner workbook -o workbooks --force
        planner workbook --gpus H100,A100-80GB --models llama2-70b,llama-65b -o my-books
    """
    if ctx.invoked_subcommand is not None:
        return
    from planner.workbook.update import generate

    gpus, models = (
        None if n and [x.lower() for x in n] == ["all"] else n for n in map(_names, (gpu_names, model_names))
    )
    for w in generate(output_dir, load(catalog_dirs), gpus, models, force=force):
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
    new GPUs, new prices; and compute its Load sheet again from your Inputs, the engine and prompt tokens among them
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
