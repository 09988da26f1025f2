"""Options shared by several commands."""

from __future__ import annotations

import math
import os
from pathlib import Path

import click

from planner.api import check_parallelism
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import ENGINES, engine_profile
from planner.errors import PlannerError
from planner.units import SpeedNotTimeError, counted, parse_seconds, parse_token_count, token_count_accepted


class TokenCount(click.ParamType):
    """A token count as people write it ("8192", "8,192", "1e4", "8k"): ``planner.units.parse_token_count``."""

    name = "TOKENS"

    def __init__(self, minimum: int = 1, mean: bool = False, whole_because: str = "", missing: str = ""):
        """``mean``: a mean length (800.5 kept as a float, "8k" an int); else whole tokens, a fraction refused with
        ``whole_because``. ``missing``: what a required option left out is and what to give (click prints it after
        "Missing option '--context'.": trial 34 F7)."""
        self.minimum, self.mean, self.whole_because, self.missing = minimum, mean, whole_because, missing

    def get_missing_message(self, param, ctx) -> str | None:
        return self.missing or None

    def convert(self, value, param, ctx) -> int | float:
        """The count; one refusal for any count below ``minimum``, negative or zero alike ("'-3' is less than 1
        token; give a number of tokens of 1 or more, such as 207.5, ..."), where the parser alone would call "-3"
        no number and 0 too few."""
        text = value.strip() if isinstance(value, str) else value
        negative = isinstance(text, str) and text.startswith("-")
        try:
            count = parse_token_count(text[1:] if negative else text, whole=not self.mean,
                                      whole_because=self.whole_because)  # fmt: skip
        except ValueError as exc:
            if negative:  # "-abc": not a number either way; say so of what was typed
                self.fail(f"{text[:40]!r} is not {token_count_accepted(not self.mean, self.minimum)}", param, ctx)
            self.fail(str(exc), param, ctx)
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        if negative or count < self.minimum:
            shown = repr(text[:40]) if isinstance(text, str) else repr(value)
            self.fail(
                f"{shown} is less than {counted(self.minimum, 'token')}; give "
                f"{token_count_accepted(not self.mean, self.minimum)}",
                param,
                ctx,
            )
        return count


class _Described:
    """A click range type whose refusal says what the option takes: click's own reads "'10k' is not a valid float
    range" (a type's name, not a reason) and "90.0 is not in the range 0<x<=1" (no unit, no example, and not the
    text typed: "90")."""

    def __init__(self, accepted: str, **bounds):
        """``accepted``: what the option takes, with an example ("a rent above 0 and at most 10,000 US$ per GPU-hour, e.g. 2.99")."""
        super().__init__(**bounds)
        self.accepted = accepted

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            text = str(value).strip()
            try:
                self.parse(text)
            except ValueError:
                self.fail(f"{text[:40]!r} is not {self.kind}{_hint(text)}; give {self.accepted}", param, ctx)
            # click's "90.0 is not in the range 0<x<=1" echoes the number as read; quote it as typed ("90")
            self.fail(f"{text[:40]!r} is out of range; give {self.accepted}", param, ctx)


def _hint(text: str) -> str:
    """Why a number-like text was not read as a number: a multiplier, a percent sign or a currency sign."""
    if text[-1:] in "kKmM" and text[:-1].replace(",", "").replace(".", "", 1).isdigit():
        return " (a k or M multiplier is read in a token count only; write the number in full)"
    if text.endswith("%") and text[:-1].replace(".", "", 1).isdigit():
        return f" (a percentage: write the fraction, {float(text[:-1]) / 100:g})"
    if text.startswith("$"):
        return " (write the number without the $ sign)"
    if "," in text and text.replace(",", "").replace(".", "", 1).isdigit():
        return " (a thousands comma is read in a token count only)"
    return ""


class Number(_Described, click.FloatRange):
    """A plain number in a range (``click.FloatRange``), refused in one line naming what is accepted. NaN is refused
    too: ``FloatRange`` lets it through, every comparison with it being False."""

    kind, parse = "a number", staticmethod(float)

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{str(value).strip()[:40]!r} is not a number; give {self.accepted}", param, ctx)
        return number


class Whole(_Described, click.IntRange):
    """A whole number in a range (``click.IntRange``), refused in one line naming what is accepted."""

    kind, parse = "a whole number", staticmethod(int)


class Seconds(click.ParamType):
    """A duration as people write it: a bare number is seconds, text carries its unit ("50ms", "1.5 s");
    ``planner.units.parse_seconds``. A bare number above ``bare_max_s`` is refused as milliseconds typed as seconds
    (``--tpot-target 50``), with the way out; the same number with its unit ("50 s") is taken as written."""

    name = "SECONDS"

    def __init__(self, bare_max_s: float, example_s: float = 0.05):
        self.bare_max_s = bare_max_s
        self.example_s = example_s  # a realistic value for the message: 0.05 for a TPOT, 1.5 for a TTFT

    def convert(self, value, param, ctx) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        try:
            number = float(text)
        except ValueError:
            number = None
        try:
            seconds = parse_seconds(text if number is None else number, self.bare_max_s, "", self.example_s)
        except ValueError as exc:
            if number is not None or isinstance(exc, SpeedNotTimeError):  # its own words: the way out
                self.fail(str(exc), param, ctx)
            e = self.example_s
            self.fail(
                f'{text[:40]!r} is not a duration; give seconds ({e:g}) or the unit ("{e * 1e3:g}ms")', param, ctx
            )
        if math.isnan(seconds) or seconds <= 0:
            why = "is negative" if seconds < 0 else "is zero" if seconds == 0 else "is not a number"
            self.fail(f"{text[:40]!r} {why}: a duration here must be positive, above 0 seconds", param, ctx)
        return seconds


def catalog_option(f):
    """``--catalog DIR`` (repeatable): user folders that extend or override the shipped catalog."""
    return click.option(
        "--catalog",
        "catalog_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Folder of your own catalog TOML files (extends/overrides the shipped one; also $PLANNER_CATALOG).",
    )(f)


def output_option(*names: str, help: str, folder: bool = False, default: Path | None = None, required: bool = False):
    """Where a command writes: a file (``folder=False``) or a folder, as a Path; its default shown in the help.

    A folder option refuses a name that ends like one of planner's files (``-o review.xlsx``), which would otherwise
    become a folder of that name with the file inside it."""
    return click.option(
        *names,
        type=click.Path(file_okay=not folder, dir_okay=folder),
        default=default,
        show_default=default is not None,
        required=required,
        help=help,
        callback=_folder_path if folder else _file_path,
    )


def _path(ctx: click.Context, param: click.Parameter, value: str | Path | None, what: str) -> Path | None:
    """The option's value as a Path; an empty one is refused (Path("") is the current folder: a silent default)."""
    if value is None:
        return None
    if not str(value).strip():
        raise click.BadParameter(f"empty; give {what}", ctx=ctx, param=param)
    return Path(value)


def _file_path(ctx: click.Context, param: click.Parameter, value: str | Path | None) -> Path | None:
    return _path(ctx, param, value, "the file to write")


def _folder_path(ctx: click.Context, param: click.Parameter, value: str | Path | None) -> Path | None:
    return _not_a_file_name(ctx, param, _path(ctx, param, value, "the folder to write into"))


#: Endings of the files planner writes; a folder option given one of them was meant as a file name.
_FILE_SUFFIXES = frozenset({".xlsx", ".xlsm", ".xls", ".ods", ".pdf", ".csv", ".md", ".toml", ".json"})


def _not_a_file_name(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None and value.suffix.lower() in _FILE_SUFFIXES and not value.is_dir():
        raise click.BadParameter(
            f"'{value}' looks like a file name; this option takes a folder to write into (e.g. '{value.parent}')",
            ctx=ctx,
            param=param,
        )
    return value


def not_an_input(output: Path, source: Path | None, what: str, param_hint: str = "'-o' / '--output'") -> None:
    """A usage error when ``output`` is the file ``source`` (the same file by any name): --force would replace the
    command's own input with what it made from it."""
    if source is not None and output.exists() and source.exists() and output.resolve() == source.resolve():
        raise click.BadParameter(f"{output} is the {what} itself; write to another file", param_hint=param_hint)


#: What an --engine option takes (the API's ``engine=``: ``planner.engines.profiles.engine_profile``).
ENGINE_HELP = f"a profile ({', '.join(sorted(ENGINES))}) or a release, e.g. vllm==0.11.0"


def engine_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An --engine value checked before any work starts (UnknownNameError: one line, with the names meant); the
    name as given, which the API resolves the same way. An empty value is refused: the API reads "" as the default."""
    if value is not None and not value.strip():
        default = f"for {param.default}" if param.default else "for its default"
        raise click.BadParameter(f"empty; give {ENGINE_HELP}, or leave --engine out {default}", ctx=ctx, param=param)
    if value is not None:
        engine_profile(value)
    return value


def layout_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --parallelism value checked before any work starts (``planner.deploy.check_parallelism``: its one line
    naming the layouts), as the API reads it."""
    if value is None:
        return value
    try:
        return check_parallelism(value)
    except PlannerError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def load(catalog_dirs: tuple[Path, ...]) -> Catalog:
    return default_catalog(*catalog_dirs)


def calibration_option(f):
    """``--calibration FILE``: the same as ``PLANNER_CALIBRATION=FILE`` for this command."""

    def use(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
        if value is not None:
            from planner.accuracy.calibration import ENV_VAR, load_calibration

            load_calibration(value)  # a broken file is reported before any work starts
            before = os.environ.get(ENV_VAR)
            os.environ[ENV_VAR] = str(value)

            def restore() -> None:
                if before is None:
                    os.environ.pop(ENV_VAR, None)
                else:
                    os.environ[ENV_VAR] = before

            ctx.call_on_close(restore)
        return value

    return click.option(
        "--calibration",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        callback=use,
        expose_value=False,
        is_eager=True,
        help="Calibration file from `planner calibrate` (same as $PLANNER_CALIBRATION).",
    )(f)
