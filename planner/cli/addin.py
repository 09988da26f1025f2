"""``planner addin``: set up the Excel functions (classic Windows UDFs or xlwings Lite) and the example workbook."""

from __future__ import annotations

import base64
import csv
import io
import sys
import zipfile
from pathlib import Path

import click

from planner.cli.addin_example import example_command
from planner.cli.terminal import echo
from planner.errors import InvalidInputError, OutputExistsError
from planner.io.files import write_file
from planner.io.limits import MAX_XLWINGS_CONFIG_BYTES, read_config_text

MODULE = "planner.excel.functions"
UDF_KEY = "UDF MODULES"
CATALOG_KEY = "PLANNER_CATALOG"


@click.group("addin")
def addin_group() -> None:
    """Use the capacity model from Excel cells: =MAX_BATCH("H100","llama2-70b",8192,"fp16").

    Example:

    \b
        planner addin install            # Windows, classic xlwings UDFs
        planner addin lite lite-files/   # xlwings Lite (Windows, Mac, web)
    """


addin_group.add_command(example_command)  # ``planner addin example``: the example workbook


# -- files ---------------------------------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes | str, force: bool, what: str = "file") -> None:
    """``planner.io.files.write_file``: exclusive unless ``force``, atomic, folders made as needed."""
    write_file(path, data, force=force, make_parents=True)


# -- xlwings.conf ------------------------------------------------------------------------------------------


def default_config_path() -> Path:
    from planner.excel.support import xlwings_config_path

    return Path(xlwings_config_path())


def read_config(path: Path) -> list[list[str]]:
    """The config's rows, ``[KEY, VALUE]`` each, in file order (xlwings writes one ``"KEY","VALUE"`` per line)."""
    if not path.exists():
        return []
    text = read_config_text(path, MAX_XLWINGS_CONFIG_BYTES, "an xlwings config file")
    return [row for row in csv.reader(io.StringIO(text, newline="")) if row]


def format_config(rows: list[list[str]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerows(rows)
    return out.getvalue()


def set_config_value(rows: list[list[str]], key: str, value: str | None) -> list[list[str]]:
    """Rows with ``key`` set to ``value`` (None removes it); keys compare case-insensitively, as xlwings reads them."""
    out, done = [], False
    for row in rows:
        if row[0].strip().upper() == key.upper():
            if value is not None and not done:
                out.append([key, value])
                done = True
            continue
        out.append(row)
    if value is not None and not done:
        out.append([key, value])
    return out


def _get(rows: list[list[str]], key: str) -> str | None:
    for row in rows:
        if row[0].strip().upper() == key.upper() and len(row) > 1:
            return row[1]
    return None


def with_module(modules: str | None, add: bool) -> str:
    parts = [m.strip() for m in (modules or "").split(";") if m.strip() and m.strip() != MODULE]
    return ";".join(parts + ([MODULE] if add else []))


CLASSIC_STEPS = """\
Remaining steps in Excel (Windows; classic UDFs are not available on a Mac):
  1. pip install xlwings <planner checkout or wheel>   (in the Python Excel should use); xlwings addin install
  2. Excel > File > Options > Trust Center > Trust Center Settings > Macro Settings:
     tick "Trust access to the VBA project object model".
  3. Open a macro-enabled workbook with the xlwings reference (xlwings quickstart myplanner makes one),
     or your own .xlsm with Tools > References > xlwings ticked in the VBA editor (Alt+F11).
  4. xlwings ribbon tab > "Import Functions". Type =MAX_BATCH("H100","llama2-70b",8192,"fp16").
  Errors show as text on classic UDFs ("#N/A: unknown GPU ..."); =PLANNER_WHY(...) gives the reason anywhere.
  A "UDF Modules" value in the ribbon or a workbook's xlwings.conf sheet overrides this file."""


#: What applies on a machine that is not Windows, said after the steps (trial 19 F9: on Linux ``addin install`` printed
#: the Windows steps alone). xlwings' classic UDFs need Excel on Windows; LibreOffice runs no xlwings functions.
NOT_WINDOWS = """This machine runs {system}, where none of these steps apply: classic xlwings UDFs run only in Excel on Windows
(this config takes effect where Excel on Windows reads it). On a Mac or Excel on the web: planner addin lite DIR
(xlwings Lite). LibreOffice runs no xlwings functions (they show #NAME?): use the what-if workbook instead,
planner workbook (plain spreadsheet formulas)."""

#: What ``addin install`` says instead of writing the default config on a machine that is not Windows (trial 26 F12: on
#: Linux it wrote ~/.xlwings/xlwings.conf, then said none of the steps applied): docs/excel.md's statement on
#: LibreOffice, and how to write the config anyway.
NOTHING_WRITTEN = """This machine runs {system}: nothing written. {config} is read by classic xlwings UDFs, which run only
in Excel on Windows. LibreOffice runs no xlwings functions: a workbook using them shows #NAME? there, or the values
stored when it was saved. In LibreOffice, use the what-if workbook: planner workbook -o DIR (plain spreadsheet
formulas, no add-in). On a Mac or Excel on the web: planner addin lite DIR (xlwings Lite).
To write the config anyway (Excel on Windows reads this home): planner addin install --force, or --config FILE."""

#: ``sys.platform`` -> the system's name in ``NOT_WINDOWS``.
SYSTEMS = {"linux": "Linux", "darwin": "macOS"}


def _system(platform: str | None = None) -> str:
    """The system's name ``NOT_WINDOWS`` and ``NOTHING_WRITTEN`` say: "Linux", "macOS", else ``sys.platform``."""
    platform = sys.platform if platform is None else platform
    return SYSTEMS.get(platform, platform)


def platform_note(platform: str | None = None) -> str | None:
    """``NOT_WINDOWS`` for a machine that is not Windows (``platform``, default ``sys.platform`` when called), None on
    Windows."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("win"):
        return None
    return NOT_WINDOWS.format(system=_system(platform))


#: ``--config FILE``: the xlwings config file that install and uninstall edit.
config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="xlwings config file to edit (default: ~/.xlwings/xlwings.conf, as xlwings reads it).",
)


@addin_group.command("install")
@config_option
@click.option(
    "--catalog",
    "catalog_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Your own catalog folder for Excel to read (written as PLANNER_CATALOG).",
)
@click.option("--dry-run", is_flag=True, help="Show the new config without writing it.")
@click.option(
    "--force",
    is_flag=True,
    help="Write the default config on a machine that is not Windows too (for Excel on Windows sharing this home).",
)
def install_command(config_path: Path | None, catalog_dir: Path | None, dry_run: bool, force: bool) -> None:
    """Register the functions with classic xlwings UDFs (Windows): adds planner.excel.functions to "UDF Modules".

    Keeps every other setting and module in the config; prints the Excel steps that cannot be automated. On Linux
    or macOS it writes nothing to the default config (no Excel there to read it) and says what works instead
    (LibreOffice: the what-if workbook), unless --force or --config FILE; exit 0 either way.

    Example:

        planner addin install --catalog C:\\Users\\me\\planner-catalog
    """
    if config_path is None and not force and not dry_run and platform_note() is not None:
        echo(NOTHING_WRITTEN.format(system=_system(), config=default_config_path()))
        return
    path = config_path or default_config_path()
    rows = read_config(path)
    new = set_config_value(rows, UDF_KEY, with_module(_get(rows, UDF_KEY), add=True))
    if catalog_dir is not None:
        new = set_config_value(new, CATALOG_KEY, str(catalog_dir.resolve()))
    text = format_config(new)
    if dry_run:
        echo(f"would write {path}:\n{text}", nl=False)
    elif new == rows:
        echo(f"{path}: already set up ({UDF_KEY} = {_get(rows, UDF_KEY)})")
    else:
        _write_atomic(path, text, force=True)
        echo(
            f"wrote {path}: {UDF_KEY} = {_get(new, UDF_KEY)}"
            + (f"; {CATALOG_KEY} = {_get(new, CATALOG_KEY)}" if catalog_dir else "")
        )
    echo(CLASSIC_STEPS)
    if (note := platform_note()) is not None:
        echo(note)


@addin_group.command("uninstall")
@config_option
def uninstall_command(config_path: Path | None) -> None:
    """Remove planner.excel.functions from "UDF Modules" (and PLANNER_CATALOG); other settings stay.

    Example:

        planner addin uninstall
    """
    path = config_path or default_config_path()
    rows = read_config(path)
    modules = with_module(_get(rows, UDF_KEY), add=False)
    new = set_config_value(rows, UDF_KEY, modules or None)
    new = set_config_value(new, CATALOG_KEY, None)
    if new == rows:
        echo(f"{path}: planner was not set up there; nothing to do")
        return
    _write_atomic(path, format_config(new), force=True)
    echo(f"wrote {path}: removed {MODULE}; click 'Import Functions' again in open workbooks")


# -- xlwings Lite -----------------------------------------------------------------------------------------


def _package_files() -> list[tuple[str, bytes]]:
    """The modules the functions may import (planner's top level, the core packages and anything else they pull
    in; not the CLI, workbook or export code) and the shipped catalog, as (archive name, bytes)."""
    import planner.excel.functions  # noqa: F401 - its imports decide what the bundle needs
    from planner.accuracy.loaded_ranges import loaded_residuals_file
    from planner.catalog import shipped_catalog_dir
    from planner.engines.allreduce_table import GATHER_SCATTER_FILE_NAME, PUBLISHED_FILE_NAME, TABLE_FILE_NAME
    from planner.engines.kernel_curves import CURVES_FILE_NAME, MLA_FILE_NAME

    root = Path(__file__).resolve().parents[1]
    core = ("catalog", "model", "engines", "serving", "accuracy", "excel", "io")
    wanted = {p.resolve() for p in root.glob("*.py")} | {p.resolve() for d in core for p in (root / d).glob("*.py")}
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if (name == "planner" or name.startswith("planner.")) and f and not name.startswith("planner.cli"):
            wanted.add(Path(f).resolve())
    files = [
        (p.relative_to(root.parent).as_posix(), p.read_bytes())
        for p in sorted(wanted)
        if p.is_relative_to(root) and p.suffix == ".py"
    ]
    for path in sorted(shipped_catalog_dir().glob("*.toml")):
        files.append((f"planner/_catalogs/{path.name}", path.read_bytes()))
    # the operator model's kernel curves and MLA modules (planner.engines.kernel_curves), vLLM's measured all-reduce
    # table, the published rows of GPUs without one and NCCL's gather / scatter table (planner.engines.allreduce_table),
    # the licence of the data they come from, and LOADED_RANGE's held-out ranges under load
    # (planner.accuracy.loaded_ranges)
    reference = (CURVES_FILE_NAME, MLA_FILE_NAME, TABLE_FILE_NAME, PUBLISHED_FILE_NAME, GATHER_SCATTER_FILE_NAME)
    reference += ("LICENSE-aiconfigurator.txt",)
    for name in (*reference, loaded_residuals_file().name):
        files.append((f"planner/_catalogs/reference/{name}", (shipped_catalog_dir() / "reference" / name).read_bytes()))
    return files


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed dates: the same input, the same bundle
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def lite_bundle(catalog_dir: Path | None = None) -> bytes:
    """A zip of what the functions need under Pyodide (pure Python; numpy, pandas and pydantic come from Pyodide)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in _package_files():
            z.writestr(_entry(name), data)
        if catalog_dir is not None:
            tomls = sorted(Path(catalog_dir).glob("*.toml"))
            if not tomls:
                raise InvalidInputError(f"{catalog_dir}: no *.toml catalog files in this folder")
            for path in tomls:
                z.writestr(_entry(f"user_catalog/{path.name}"), path.read_bytes())
    return buf.getvalue()


MAIN_EMBEDDED = '''\
"""planner's Excel functions for xlwings Lite: =MAX_BATCH("H100","llama2-70b",8192,"fp16") and family.

Written by `planner addin lite` (planner {version}). Paste this whole file into the Lite editor's main.py.
The planner package (pure Python) and its catalog are embedded below; Pyodide provides numpy, pandas and
pydantic (listed in requirements.txt). =PLANNER_WHY("MAX_BATCH", ...) explains an error cell.
"""

import atexit
import base64
import io
import os
import shutil
import sys
import tempfile
import zipfile

_BUNDLE = (
{chunks}
)


def _unpack():
    """Unpack the bundle into a new private folder and import planner from there, never from a shared place.

    mkdtemp makes a folder with an unpredictable name that only this user may enter (0700), so nothing another
    user planted can be imported; it is checked anyway, and removed when Python exits.
    """
    target = tempfile.mkdtemp(prefix="planner-lite-")
    info = os.lstat(target)
    if (hasattr(os, "getuid") and info.st_uid != os.getuid()) or info.st_mode & 0o077:
        raise ImportError(target + " is not a private folder; planner's functions were not loaded")
    atexit.register(shutil.rmtree, target, True)
    zipfile.ZipFile(io.BytesIO(base64.b64decode(_BUNDLE))).extractall(target)
    sys.path.insert(0, target)
    user = os.path.join(target, "user_catalog")
    if os.path.isdir(user):
        os.environ["PLANNER_CATALOG"] = user


_unpack()

from planner.excel.functions import *  # noqa: E402,F401,F403  (Lite registers the @func functions it finds here)
'''

MAIN_WHEEL = '''\
"""planner's Excel functions for xlwings Lite: =MAX_BATCH("H100","llama2-70b",8192,"fp16") and family.

Written by `planner addin lite` (planner {version}). Paste this file into the Lite editor's main.py; the
planner wheel is installed from the URL in requirements.txt. =PLANNER_WHY("MAX_BATCH", ...) explains an error.
"""

from planner.excel.functions import *  # noqa: F401,F403  (Lite registers the @func functions it finds here)
'''

REQUIREMENTS = """\
# planner's Excel functions (written by `planner addin lite`). Keep the xlwings line Lite already has.
numpy
pandas
pydantic
scipy
{extra}"""


def lite_files(catalog_dir: Path | None = None, wheel_url: str | None = None) -> dict[str, str]:
    """The ``main.py`` and ``requirements.txt`` a Lite user pastes into the editor."""
    from planner import __version__

    if wheel_url:
        if catalog_dir is not None:
            raise InvalidInputError("--catalog works with the embedded bundle only; leave out --wheel-url")
        return {
            "main.py": MAIN_WHEEL.format(version=__version__),
            "requirements.txt": REQUIREMENTS.format(extra=wheel_url + "\n"),
        }
    data = base64.b64encode(lite_bundle(catalog_dir)).decode("ascii")
    chunks = "\n".join(f'    "{data[i : i + 100]}"' for i in range(0, len(data), 100))
    main = MAIN_EMBEDDED.format(version=__version__, chunks=chunks)
    return {"main.py": main, "requirements.txt": REQUIREMENTS.format(extra="")}


LITE_STEPS = """\
Next, in Excel (Windows, Mac or Excel on the web):
  1. Home > Add-ins > search "xlwings Lite" > Add (free, also for commercial use).
  2. Open the xlwings Lite task pane > main.py tab: replace its content with {main}.
  3. requirements.txt tab: add the lines of {req} (keep the xlwings line); wait for "installed".
  4. Type =MAX_BATCH("H100","llama2-70b",8192,"fp16") in a cell. Errors are real #N/A, #NUM!, #VALUE!;
     =PLANNER_WHY("MAX_BATCH","H10","llama2-70b",8192) gives the reason."""


@addin_group.command("lite")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--catalog",
    "catalog_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Your own catalog folder, embedded so Lite reads it (Lite cannot read local folders).",
)
@click.option("--wheel-url", help="Install planner from this wheel URL (served with CORS) instead of embedding it.")
@click.option("--force", is_flag=True, help="Overwrite main.py / requirements.txt in OUTDIR.")
def lite_command(outdir: Path, catalog_dir: Path | None, wheel_url: str | None, force: bool) -> None:
    """Write main.py and requirements.txt for the xlwings Lite editor (Windows, Mac, Excel on the web).

    By default main.py embeds the planner package and its catalog (no hosting needed).

    Example:

        planner addin lite lite-files/ --catalog my-catalog/
    """
    files = lite_files(catalog_dir, wheel_url)
    targets = {name: outdir / name for name in files}
    taken = [str(p) for p in targets.values() if p.exists()]
    if taken and not force:
        verb = "exists" if len(taken) == 1 else "exist"
        raise OutputExistsError(f"{', '.join(taken)} already {verb}; pass --force to overwrite")
    for name, text in files.items():
        _write_atomic(targets[name], text, force=force)
    size = len(files["main.py"].encode()) / 1e3
    echo(f"wrote {targets['main.py']} ({size:,.0f} kB) and {targets['requirements.txt']}")
    echo(LITE_STEPS.format(main=targets["main.py"], req=targets["requirements.txt"]))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(addin_group())
