"""``planner addin``: set up the Excel functions (classic Windows UDFs or xlwings Lite) and the example workbook."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import click

from planner.errors import InvalidInputError, OutputExistsError
from planner.files import write_file

MODULE = "planner.excel_functions"
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


# -- files ---------------------------------------------------------------------------------------------------


def _write_atomic(path: Path, data: bytes | str, force: bool, what: str = "file") -> None:
    """``planner.files.write_file``: exclusive unless ``force``, atomic, folders made as needed."""
    write_file(path, data, force=force, make_parents=True)


# -- xlwings.conf ------------------------------------------------------------------------------------------


def default_config_path() -> Path:
    from planner.excel_support import xlwings_config_path

    return Path(xlwings_config_path())


def read_config(path: Path) -> list[list[str]]:
    """The config's rows, ``[KEY, VALUE]`` each, in file order (xlwings writes one ``"KEY","VALUE"`` per line)."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="") as f:
        return [row for row in csv.reader(f) if row]


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


@addin_group.command("install")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="xlwings config file to edit (default: ~/.xlwings/xlwings.conf, as xlwings reads it).",
)
@click.option(
    "--catalog",
    "catalog_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Your own catalog folder for Excel to read (written as PLANNER_CATALOG).",
)
@click.option("--dry-run", is_flag=True, help="Show the new config without writing it.")
def install_command(config_path: Path | None, catalog_dir: Path | None, dry_run: bool) -> None:
    """Register the functions with classic xlwings UDFs (Windows): adds planner.excel_functions to "UDF Modules".

    Keeps every other setting and module in the config; prints the Excel steps that cannot be automated.

    Example:

        planner addin install --catalog C:\\Users\\me\\planner-catalog
    """
    path = config_path or default_config_path()
    rows = read_config(path)
    new = set_config_value(rows, UDF_KEY, with_module(_get(rows, UDF_KEY), add=True))
    if catalog_dir is not None:
        new = set_config_value(new, CATALOG_KEY, str(catalog_dir.resolve()))
    text = format_config(new)
    if dry_run:
        click.echo(f"would write {path}:\n{text}", nl=False)
    elif new == rows:
        click.echo(f"{path}: already set up ({UDF_KEY} = {_get(rows, UDF_KEY)})")
    else:
        _write_atomic(path, text, force=True)
        click.echo(
            f"wrote {path}: {UDF_KEY} = {_get(new, UDF_KEY)}"
            + (f"; {CATALOG_KEY} = {_get(new, CATALOG_KEY)}" if catalog_dir else "")
        )
    click.echo(CLASSIC_STEPS)


@addin_group.command("uninstall")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="xlwings config file to edit (default: ~/.xlwings/xlwings.conf).",
)
def uninstall_command(config_path: Path | None) -> None:
    """Remove planner.excel_functions from "UDF Modules" (and PLANNER_CATALOG); other settings stay.

    Example:

        planner addin uninstall
    """
    path = config_path or default_config_path()
    rows = read_config(path)
    modules = with_module(_get(rows, UDF_KEY), add=False)
    new = set_config_value(rows, UDF_KEY, modules or None)
    new = set_config_value(new, CATALOG_KEY, None)
    if new == rows:
        click.echo(f"{path}: planner was not set up there; nothing to do")
        return
    _write_atomic(path, format_config(new), force=True)
    click.echo(f"wrote {path}: removed {MODULE}; click 'Import Functions' again in open workbooks")


# -- xlwings Lite -----------------------------------------------------------------------------------------


def _package_files() -> list[tuple[str, bytes]]:
    """The modules the functions import (planner's top level, the catalog package and anything else they pull
    in; not the CLI, workbook or export code) and the shipped catalog, as (archive name, bytes)."""
    import planner.excel_functions  # noqa: F401 - its imports decide what the bundle needs
    from planner.catalog import shipped_catalog_dir

    root = Path(__file__).resolve().parents[1]
    wanted = {p.resolve() for p in root.glob("*.py")} | {p.resolve() for p in (root / "catalog").glob("*.py")}
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

import base64
import io
import os
import sys
import tempfile
import zipfile

_BUNDLE = (
{chunks}
)


def _unpack():
    target = os.path.join(tempfile.gettempdir(), "planner-lite-{digest}")
    if not os.path.isdir(os.path.join(target, "planner")):
        zipfile.ZipFile(io.BytesIO(base64.b64decode(_BUNDLE))).extractall(target)
    if target not in sys.path:
        sys.path.insert(0, target)
    user = os.path.join(target, "user_catalog")
    if os.path.isdir(user):
        os.environ["PLANNER_CATALOG"] = user


_unpack()

from planner.excel_functions import *  # noqa: E402,F401,F403  (Lite registers the @func functions it finds here)
'''

MAIN_WHEEL = '''\
"""planner's Excel functions for xlwings Lite: =MAX_BATCH("H100","llama2-70b",8192,"fp16") and family.

Written by `planner addin lite` (planner {version}). Paste this file into the Lite editor's main.py; the
planner wheel is installed from the URL in requirements.txt. =PLANNER_WHY("MAX_BATCH", ...) explains an error.
"""

from planner.excel_functions import *  # noqa: F401,F403  (Lite registers the @func functions it finds here)
'''

REQUIREMENTS = """\
# planner's Excel functions (written by `planner addin lite`). Keep the xlwings line Lite already has.
numpy
pandas
pydantic
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
    digest = hashlib.sha256(data.encode()).hexdigest()[:12]
    main = MAIN_EMBEDDED.format(version=__version__, chunks=chunks, digest=digest)
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
    click.echo(f"wrote {targets['main.py']} ({size:,.0f} kB) and {targets['requirements.txt']}")
    click.echo(LITE_STEPS.format(main=targets["main.py"], req=targets["requirements.txt"]))


# -- example workbook ---------------------------------------------------------------------------------------


class Shown(str):
    """Text shown as is, even when it starts with "=" (the formula of the next cell, for reading)."""


def example_cells() -> dict:
    """The example workbook as data: per sheet, rows of values/formulas, and array formulas by output range.

    Values in the "Python gave" column are what the same functions return in Python when the file is made,
    so a user can check their add-in against them.
    """
    from planner import excel_functions as xf

    single = [
        ("Ridge point of an H100 at bf16", "FLOP/B", 'RIDGE("H100","bf16")', xf.RIDGE("H100", "bf16")),
        (
            "Weights of Llama 2 70B at fp16",
            "bytes",
            'WEIGHT_BYTES("llama2-70b","fp16")',
            xf.WEIGHT_BYTES("llama2-70b", "fp16"),
        ),
        (
            "KV cache, 8,192 tokens, fp16",
            "bytes",
            'KV_BYTES("llama2-70b",8192,"fp16")',
            xf.KV_BYTES("llama2-70b", 8192.0, "fp16"),
        ),
        (
            "Max batch, 8,192 tokens (smallest group that fits)",
            "sequences",
            'MAX_BATCH("H100","llama2-70b",8192,"fp16")',
            xf.MAX_BATCH("H100", "llama2-70b", 8192.0, "fp16"),
        ),
        (
            "Smallest GPU group for 16 sequences",
            "GPUs",
            'MIN_GPUS("H100","llama2-70b",8192,16)',
            xf.MIN_GPUS("H100", "llama2-70b", 8192.0, 16.0),
        ),
        ("TPOT at batch 8", "ms", 'TPOT("H100","llama2-70b",8192,8)', xf.TPOT("H100", "llama2-70b", 8192.0, 8.0)),
        ("TTFT of a 2,048-token prompt", "ms", 'TTFT("H100","llama2-70b",2048)', xf.TTFT("H100", "llama2-70b", 2048.0)),
        (
            "Throughput at batch 8",
            "tokens/s",
            'THROUGHPUT("H100","llama2-70b",8192,8)',
            xf.THROUGHPUT("H100", "llama2-70b", 8192.0, 8.0),
        ),
        (
            "Cost at batch 8, catalog price",
            "$ per 1M output tokens",
            'COST_PER_MTOK("H100","llama2-70b",8192,8)',
            xf.COST_PER_MTOK("H100", "llama2-70b", 8192.0, 8.0),
        ),
        ("MFU at batch 8", "fraction", 'MFU("H100","llama2-70b",8192,8)', xf.MFU("H100", "llama2-70b", 8192.0, 8.0)),
        ("MBU at batch 8", "fraction", 'MBU("H100","llama2-70b",8192,8)', xf.MBU("H100", "llama2-70b", 8192.0, 8.0)),
        (
            "Decode intensity at batch 8",
            "FLOP/B",
            'DECODE_INTENSITY("H100","llama2-70b",8192,8)',
            xf.DECODE_INTENSITY("H100", "llama2-70b", 8192.0, 8.0),
        ),
        ("H100 memory", "bytes", 'PLANNER_INFO("H100","memory_bytes")', xf.PLANNER_INFO("H100", "memory_bytes")),
        ("An unknown GPU", "#N/A", 'MAX_BATCH("H10","llama2-70b",8192)', "#N/A"),
        (
            "... and why",
            "text",
            'PLANNER_WHY("MAX_BATCH","H10","llama2-70b",8192)',
            xf.PLANNER_WHY("MAX_BATCH", "H10", "llama2-70b", 8192.0),
        ),
        ("Does not fit on 1 GPU", "#NUM!", 'MAX_BATCH("H100","llama2-70b",8192,,1)', "#NUM!"),
    ]
    functions_rows = [["What", "Unit", "Formula", "Result", "Python gave"]]
    for what, unit, formula, value in single:
        functions_rows.append([what, unit, Shown("=" + formula), f"={formula}", value])

    scen = [
        ("H100", "llama2-70b", 4096, 1),
        ("H100", "llama2-70b", 8192, 8),
        ("A100 SXM 80GB", "llama2-70b", 8192, 8),
        ("H200", "llama3.1-70b", 32768, 16),
        ("L40S", "llama3.1-8b", 8192, 32),
        ("MI300X", "qwen3-32b", 16384, 8),
    ]
    gpus = [[g] for g, *_ in scen]
    models = [[m] for _, m, *_ in scen]
    ctx = [[float(c)] for *_, c, _ in scen]
    batch = [[float(b)] for *_, b in scen]
    n = len(scen)
    last = n + 1
    header = [
        "GPU",
        "Model",
        "Context (tokens)",
        "Batch",
        "Max batch",
        "Min GPUs",
        "TPOT (ms)",
        "Throughput (tok/s)",
        "$ / 1M tokens",
    ]
    scenario_rows = [header] + [[g, m, c, b, None, None, None, None, None] for g, m, c, b in scen]
    arrays = {
        f"E2:E{last}": f"MAX_BATCH(A2:A{last},B2:B{last},C2:C{last})",
        f"F2:F{last}": f"MIN_GPUS(A2:A{last},B2:B{last},C2:C{last},D2:D{last})",
        f"G2:G{last}": f"TPOT(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,F2:F{last})",
        f"H2:H{last}": f"THROUGHPUT(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,F2:F{last})",
        f"I2:I{last}": f"COST_PER_MTOK(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,,F2:F{last})",
    }
    expected = {
        "Max batch": xf.MAX_BATCH(gpus, models, ctx),
        "Min GPUs": (mg := xf.MIN_GPUS(gpus, models, ctx, batch)),
        "TPOT (ms)": xf.TPOT(gpus, models, ctx, batch, None, mg),
        "Throughput (tok/s)": xf.THROUGHPUT(gpus, models, ctx, batch, None, mg),
        "$ / 1M tokens": xf.COST_PER_MTOK(gpus, models, ctx, batch, None, None, mg),
    }
    check_rows = [["Python gave (when this file was made)"] + list(expected)]
    for i in range(n):
        check_rows.append([f"{scen[i][0]} / {scen[i][1]}"] + [expected[k][i][0] for k in expected])
    return {
        "Functions": {"rows": functions_rows, "arrays": {}},
        "Scenarios": {"rows": scenario_rows, "arrays": arrays, "below": check_rows},
        "Catalog": {
            "rows": [["GPUs", "Models", "Precisions"]],
            "arrays": {
                f"A2:A{1 + len(xf.PLANNER_GPUS())}": "PLANNER_GPUS()",
                f"B2:B{1 + len(xf.PLANNER_MODELS())}": "PLANNER_MODELS()",
                f"C2:C{1 + len(xf.PLANNER_PRECISIONS())}": "PLANNER_PRECISIONS()",
            },
        },
        "Read me": {"rows": [[line] for line in README_SHEET.splitlines()], "arrays": {}},
    }


README_SHEET = """planner Excel functions: example workbook
These cells call planner's functions; they compute only where the functions are installed:
- Windows, classic xlwings UDFs: `planner addin install`, then save this file as .xlsm and click Import Functions.
- xlwings Lite (Windows, Mac, web): `planner addin lite DIR`, paste main.py and requirements.txt into the Lite editor.
Without them Excel shows #NAME?. After installing, press Ctrl+Alt+F9 to recalculate everything.
Column "Python gave" holds what the same functions returned in Python when the file was made.
Range formulas on the Scenarios sheet are array formulas over whole columns: one call per column.
Units: bytes (1 GB = 1e9 B), ms, tokens/s, US dollars; see docs/excel.md."""


def write_example(path: Path, force: bool) -> None:
    from openpyxl import Workbook
    from openpyxl.worksheet.formula import ArrayFormula

    sheets = example_cells()
    wb = Workbook()
    wb.remove(wb.active)
    for title, spec in sheets.items():
        ws = wb.create_sheet(title)
        for row in spec["rows"]:
            ws.append(row)
            for c in ws[ws.max_row]:
                if isinstance(c.value, Shown):
                    c.value, c.data_type = str(c.value), "s"
        for ref, formula in spec["arrays"].items():
            ws[ref.split(":")[0]] = ArrayFormula(ref, f"={formula}")
        if spec.get("below"):
            ws.append([])
            for row in spec["below"]:
                ws.append(row)
        for col, width in zip("ABCDEFGHI", (44, 18, 52, 16, 22, 12, 12, 18, 14), strict=True):
            ws.column_dimensions[col].width = width
    buf = io.BytesIO()
    wb.save(buf)
    _write_atomic(path, buf.getvalue(), force)


@addin_group.command("example")
@click.argument(
    "path", type=click.Path(dir_okay=False, path_type=Path), default=Path("workbooks/functions-example.xlsx")
)
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
def example_command(path: Path, force: bool) -> None:
    """Write the example workbook whose cells use the functions (for people who have the add-in).

    Example:

        planner addin example workbooks/functions-example.xlsx --force
    """
    if path.suffix.lower() != ".xlsx":
        raise InvalidInputError(f"{path}: the example workbook is an .xlsx file; give a path ending in .xlsx")
    write_example(path, force)
    click.echo(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(addin_group())
