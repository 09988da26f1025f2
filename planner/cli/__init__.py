"""The ``planner`` command. Subcommands live in their own modules and are imported only when run.

Errors a user causes (``PlannerError``) become one line on stderr and exit code 2 (bad usage) or 1
(failure); click's own usage errors exit 2. No traceback reaches the user.

The outermost surface: may import every part, ``planner`` (its version), ``planner.api``, ``planner.options``,
``planner.report``, ``planner.units``, ``planner.errors``, ``planner.model``, ``planner.catalog``,
``planner.engines``, ``planner.serving``, ``planner.accuracy``, ``planner.io`` and the other surfaces
(``planner.excel``, ``planner.export``, ``planner.workbook``); only ``python -m planner`` imports it.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from planner import __version__
from planner.errors import PlannerError
from planner.io.safetext import message_text

#: command name -> "module:attribute"; a module that is not there (yet) leaves its command out.
COMMANDS = {
    "plan": "planner.cli.plan:plan_command",
    "catalog": "planner.cli.catalog:catalog_group",
    "workbook": "planner.cli.workbook:workbook_group",
    "export": "planner.cli.export:export_command",
    "validate": "planner.cli.accuracy:validate_command",
    "calibrate": "planner.cli.accuracy:calibrate_command",
    "addin": "planner.cli.addin:addin_group",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use, so ``planner plan`` starts fast."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._load(name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    @staticmethod
    def _load(name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                return None
            raise

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            hint = layout_option_hint(exc)
            if hint is None:
                raise
            raise click.NoSuchOption(exc.option_name, message=hint, ctx=exc.ctx) from None
        except PlannerError as exc:
            fail(str(exc), exc.exit_code)
        except BrokenPipeError:  # `planner catalog list | head`: the reader left; nothing to say
            quiet_exit_on_broken_pipe()
        except OSError as exc:  # a file the system would not let us read or write
            where = f"{exc.filename}: " if exc.filename else ""
            fail(f"{where}{exc.strerror or type(exc).__name__}", 1)
        except (RecursionError, OverflowError, MemoryError) as exc:
            fail(f"input too large or too deeply nested ({type(exc).__name__}); give values of a realistic size", 2)


#: The engines' own parallelism flags (vLLM's --tensor-parallel-size / --data-parallel-size /
#: --enable-expert-parallel, SGLang's --tp / --dp / --ep-size) that planner spells as a layout and a group size.
LAYOUT_FLAGS = (
    "--ep",
    "--dp",
    "--tp",
    "--ep-size",
    "--dp-size",
    "--tp-size",
    "--tensor-parallel-size",
    "--data-parallel-size",
    "--expert-parallel-size",
    "--enable-expert-parallel",
    "--enable-dp-attention",
)


def layout_option_hint(exc: click.NoSuchOption) -> str | None:
    """For an engine's parallelism flag given to a command that takes ``--parallelism`` (trial 16, F4: ``--ep 8``
    got click's "did you mean --gpu, --help, --rate"), what planner calls it; None for any other unknown option."""
    name = (exc.option_name or "").split("=")[0]
    takes = exc.ctx is not None and any(p.name == "parallelism" for p in exc.ctx.command.params)
    if name not in LAYOUT_FLAGS or not takes:
        return None
    return (
        f"No such option '{name}': planner sets the group size with --gpus and the layout with --parallelism "
        "(tp: tensor parallel over --gpus; dp-ep: data-parallel attention with the experts spread, DP = EP = --gpus; "
        "tp-ep: tensor-parallel attention, whole experts spread); a DP or EP size other than --gpus is not modelled"
    )


def quiet_exit_on_broken_pipe() -> None:
    """Exit 1 without a word when stdout's reader has gone (``| head``), as Python's documentation advises:
    stdout is pointed at devnull so that the flush at exit does not raise a second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner's stdout)
        pass
    sys.exit(1)


def fail(message: str, code: int) -> None:
    """One line on stderr (control characters shown escaped, never echoed raw), then exit with ``code``."""
    click.echo(f"planner: error: {message_text(message)}", err=True)
    sys.exit(code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="planner")
def main() -> None:
    """LLM-inference capacity planner: memory, max batch, TPOT, throughput and cost from sourced catalogs.

    Terms: TPOT, time per output token of one sequence; TTFT, time to first token (the prompt's processing);
    max batch, the sequences one GPU group serves at once; KV cache, the memory each sequence's tokens hold.

    Example:

        planner export examples/budget-review.toml -o review.xlsx

        planner plan --gpu H100 --model llama2-70b --context 8192

    Exit codes: 0 done; 2 bad input (an unknown name, a value of the wrong kind or out of range, targets no fleet
    meets, a GPU count the engine cannot split the model over); 1 a failure on input read (weights that do not fit
    the GPUs given, an output that exists without --force, validate --check finding a FAIL).
    """
    from planner.io import heap

    heap.allow()  # a command's process is planner's own: large sweeps keep their heap (planner.io.heap)
