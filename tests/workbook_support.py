"""Helpers for the workbook tests: LibreOffice availability, recalculation, and the Python model's expected values.

Not a conftest: test modules import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import copy
import io
import math
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple
from xml.sax.saxutils import escape

import openpyxl
import pytest
from openpyxl.utils import get_column_letter

from planner import api
from planner.catalog import default_catalog
from planner.errors import DoesNotFitError, PlannerError
from planner.io.libreoffice import LibreOfficeError, convert, find_soffice, without_print_titles
from planner.workbook.catalog_sheets import gqa_sibling
from planner.workbook.layout import BUDGET_DEFAULTS, BUDGET_FIELDS, COMPARE_FIELD, INPUT_FIELDS, INPUTS_SHEET, input_row
from planner.workbook.spec import WorkbookSpec
from planner.workbook.writer import write_workbook

#: The xdist group of the modules that read conftest.whatif_cli_workbook (pyproject: --dist loadgroup).
WHATIF_CLI_GROUP = "whatif_cli_workbook"


def first_engine(value):
    """A cell's value for the engine the workbook was written for (the first of the engines it offers): a value the
    engines share as it is, a ``CHOOSE(eng_index, ...)`` over them (``planner.workbook.by_engine``) its first choice."""
    if not (isinstance(value, str) and value.startswith("=CHOOSE(eng_index,")):
        return value
    first = re.match(r'=CHOOSE\(eng_index,("(?:[^"]|"")*"|[^,]*),', value)[1]
    if first.startswith('"'):
        return first[1:-1].replace('""', '"') or None
    return float(first) if "." in first else int(first)


def require_libreoffice() -> None:
    """Skip without soffice, except on CI (CI=true), where a missing LibreOffice is a failure."""
    if find_soffice() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice (soffice) is required on CI: .ci/run installs libreoffice-calc-nogui")
        pytest.skip("LibreOffice (soffice) not installed")


def with_inputs(spec: WorkbookSpec, inputs: dict[str, Any]) -> WorkbookSpec:
    """A copy of the description with the Inputs cells set (keys of read_inputs, plus compare_model)."""
    out = copy.deepcopy(spec)
    sheet = out.sheet(INPUTS_SHEET)
    for f in (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS):
        if f.key in inputs:
            sheet.cells[f"B{input_row(f.key)}"].value = inputs[f.key]
    return out


def recalculate_many(specs: dict[str, WorkbookSpec], tmp: Path) -> dict[str, BookValues]:
    """Write each description, recalculate all in one LibreOffice call, load the values (data_only)."""
    src = tmp / "src"
    src.mkdir(exist_ok=True)
    paths = [write_workbook(spec, src / f"{key}.xlsx", force=True) for key, spec in specs.items()]
    return _recalculated(list(specs), paths, tmp)


def recalculate_inputs(
    spec: WorkbookSpec, inputs: dict[str, dict[str, Any]], tmp: Path, print_titles: frozenset[str] = frozenset()
) -> dict[str, BookValues]:
    """Each ``with_inputs(spec, inputs[key])`` recalculated by LibreOffice in one call, its values by key.

    Without its print titles (planner.io.libreoffice.without_print_titles: ~0.85 s CPU a book less), except the
    books named in ``print_titles`` (TestParityWithThePythonModel checks that the shipped workbook's values are the
    same both ways).

    The description is written once and each copy only gets its Inputs cells (``with_inputs_xlsx``: openpyxl
    writes a 12-sheet workbook in ~0.5 s CPU). The values come through soffice's CSV export of every sheet
    (``convert_to_csv_sheets``), read as openpyxl's data_only workbook is (``BookValues``):
    ~1.3 s CPU a book where xlsx + openpyxl took ~2.75 s (soffice 2.3 -> 1.3 s, reading 0.44 -> 0.04 s; the
    what-if workbook, LibreOffice 7.4), ~0.5 s without print titles; TestCsvValues checks the two read alike."""
    src = tmp / "src"
    src.mkdir(exist_ok=True)
    base = write_workbook(spec, src / "_base.xlsx", force=True).read_bytes()
    stripped = without_print_titles(base)
    paths = []
    for key, values in inputs.items():
        paths.append(src / f"{key}.xlsx")
        paths[-1].write_bytes(with_inputs_xlsx(base if key in print_titles else stripped, spec, values))
    sheets = [s.name for s in spec.sheets]
    # ~0.5 s CPU a book; 1800 s leaves room for a machine shared by several test runs (600 s ran out at load 15)
    csvs = convert_to_csv_sheets(paths, sheets, tmp / "recalculated", timeout_s=1800)
    return {key: BookValues(out) for key, out in zip(inputs, csvs, strict=True)}


# -- LibreOffice's values through its CSV export (test-only: the parity books) ----------------------------


#: soffice's CSV export of every sheet with its computed values (help.libreoffice.org/latest/ug/text/shared/guide/
#: csv_params.html, read 2026-12-01; checked on LibreOffice 7.4): 44 comma, 34 double quote, 76 UTF-8, 1, no
#: column formats, 0 language; token 7 true: every text cell quoted (so "4096" the text and 4096 the number differ);
#: 8 true: numbers as numbers; 9 false: not "as shown" (15 significant digits, not the cell's format); 10 false:
#: values, not formulas; 11 false: spaces kept; 12 -1: each sheet to its own file, ``<stem>-<sheet>.csv``.
CSV_EVERY_SHEET = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,true,false,false,false,-1"


def convert_to_csv_sheets(
    files: list[Path] | Path, sheets: list[str], outdir: Path, timeout_s: float = 300
) -> list[dict[str, Path]]:
    """Each file recalculated and every sheet written as CSV (``CSV_EVERY_SHEET``) in one soffice call: per file,
    the CSV of each of ``sheets`` by name. Read them with ``read_csv_sheet``.

    Cheaper than ``convert(..., "xlsx")`` plus openpyxl when only values are wanted: on the what-if workbook
    (LibreOffice 7.4) soffice spends ~1.2 s CPU a book loading and recalculating, ~1.0 s more writing xlsx and
    ~0.15 s writing CSV, and openpyxl takes ~0.9 s to read the xlsx back.
    """
    files = [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]
    outputs = [{s: Path(outdir) / f"{f.stem}-{s}.csv" for s in sheets} for f in files]
    convert(files, CSV_EVERY_SHEET, Path(outdir), timeout_s, outputs=[p for out in outputs for p in out.values()])
    return outputs


#: One CSV field as CSV_EVERY_SHEET writes it: quoted text (a quote doubled inside) or an unquoted value.
_CSV_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,"\r\n]*)')


def read_csv_sheet(path: Path) -> dict[str, str | float | int | bool]:
    """The cells of one sheet written by ``convert_to_csv_sheets``, by reference ("B7"), blanks left out.

    Typed as openpyxl reads a LibreOffice xlsx with ``data_only=True``: quoted fields are text ("" blank; an error
    is its text, "#NUM!", LibreOffice's own "Err:502" as its xlsx names it, ``_XLSX_ERROR``), unquoted ones blank,
    TRUE/FALSE, a number or a percentage ("12.5%" -> 0.125). Limits: a text cell that reads "Err:502" is taken for
    the error; a typed-in TRUE reads True where openpyxl reads 1 (equal in Python). The csv module cannot tell a
    quoted field from an unquoted one before Python 3.12 (``QUOTE_STRINGS``), hence the one-line pattern.
    """
    text = Path(path).read_text(encoding="utf-8")
    cells: dict[str, str | float | int | bool] = {}
    row, col, i = 1, 1, 0
    while i <= len(text):
        m = _CSV_FIELD.match(text, i)
        try:
            value = _csv_value(*m.groups())
        except ValueError as e:
            raise LibreOfficeError(f"{Path(path).name}: {e}") from None
        if value is not None:
            cells[f"{get_column_letter(col)}{row}"] = value
        i = m.end()
        if text.startswith(",", i):
            col, i = col + 1, i + 1
        elif text.startswith("\r\n", i) or text.startswith("\n", i):
            row, col, i = row + 1, 1, i + (2 if text[i] == "\r" else 1)
        elif i == len(text):
            break
        else:
            raise LibreOfficeError(f"{Path(path).name}: not CSV as LibreOffice writes it at character {i}")
    return cells


def _csv_value(quoted: str | None, raw: str) -> str | float | int | bool | None:
    """One field of ``read_csv_sheet``: see there. A whole number is an int, as openpyxl reads LibreOffice's
    ``<v>4096</v>`` (the CSV writes 15 significant digits: 1.3125E+16 for 13125000000000000)."""
    if quoted is not None:
        text = quoted.replace('""', '"') or None
        if text is not None and _LO_ERROR.fullmatch(text):
            if text not in _XLSX_ERROR:
                raise ValueError(f"LibreOffice error {text} has no Excel name in _XLSX_ERROR yet")
            return _XLSX_ERROR[text]
        return text
    if raw in ("", "TRUE", "FALSE"):
        return None if raw == "" else raw == "TRUE"
    try:
        number = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is neither text, a number nor blank") from None
    return int(number) if number.is_integer() else number


#: The CSV shows an error that has no Excel name as LibreOffice's code ("Err:502"; help.libreoffice.org/latest/en-US/
#: text/scalc/05/02140000.html); its xlsx export writes Excel's error instead (sc/source/filter/excel/xltools.cxx,
#: XclTools::GetXclErrorCode: invalid argument, a missing pair, a circular reference -> #VALUE!, others -> #N/A).
#: Each code here was checked against LibreOffice 7.4's xlsx of the same cell (SQRT(-1), SUM(1;2), A1 = A1 + 1, an
#: IRR that does not converge); another raises in read_csv_sheet rather than be read as the wrong error.
_XLSX_ERROR = {"Err:502": "#VALUE!", "Err:508": "#VALUE!", "Err:522": "#VALUE!", "Err:523": "#N/A"}
_LO_ERROR = re.compile(r"Err:\d{3}")


class CellValue(NamedTuple):
    """One cell of a ``BookValues`` sheet: ``.value`` as openpyxl's data_only cell has it (None when blank)."""

    value: Any


@dataclass(frozen=True)
class SheetValues:
    """One recalculated sheet's values read as an openpyxl data_only worksheet is: ``ws["B7"].value`` and
    ``ws.iter_rows()`` (rows from 1 to the last used row, each as wide as the widest)."""

    cells: dict[str, Any]

    def __getitem__(self, ref: str) -> CellValue:
        return CellValue(self.cells.get(ref))

    def iter_rows(self, min_col: int = 1, max_col: int | None = None, values_only: bool = False):
        """As openpyxl's: each row from 1 to the last used, its cells (or values) from ``min_col`` to ``max_col``
        (default: the widest row's last column)."""
        from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

        places = [coordinate_from_string(ref) for ref in self.cells]
        rows = max((r for _, r in places), default=0)
        cols = max((column_index_from_string(c) for c, _ in places), default=0) if max_col is None else max_col
        letters = [get_column_letter(c) for c in range(min_col, cols + 1)]
        for r in range(1, rows + 1):
            cells = tuple(self[f"{c}{r}"] for c in letters)
            yield tuple(c.value for c in cells) if values_only else cells


class BookValues:
    """A recalculated workbook's values by sheet, read from LibreOffice's CSVs when a sheet is first asked for:
    ``book["Calc"]["C12"].value`` as openpyxl's data_only workbook gives it."""

    def __init__(self, csv_by_sheet: dict[str, Path]):
        self.csv_by_sheet, self.sheets = csv_by_sheet, {}

    def __getitem__(self, sheet: str) -> SheetValues:
        if sheet not in self.sheets:
            self.sheets[sheet] = SheetValues(read_csv_sheet(self.csv_by_sheet[sheet]))
        return self.sheets[sheet]


def _recalculated(keys: list[str], paths: list[Path], tmp: Path) -> dict[str, BookValues]:
    """Recalculate ``paths`` (books with the same sheets) in one LibreOffice call and read each copy's values as
    openpyxl's data_only workbook gives them (``BookValues``, through the CSV export), by key: ~1.9 s CPU a book
    less than an xlsx export read back by openpyxl (soffice ~1.0 s, openpyxl ~0.9 s; LibreOffice 7.4), and copies
    without print titles recalculated (~0.85 s CPU a book less; planner.io.libreoffice.without_print_titles)."""
    sheets = openpyxl.load_workbook(paths[0], read_only=True).sheetnames
    (tmp / "without-print-titles").mkdir(exist_ok=True)
    copies = [tmp / "without-print-titles" / p.name for p in paths]  # ~0.85 s CPU a book less (without_print_titles)
    for path, copy_ in zip(paths, copies, strict=True):
        copy_.write_bytes(without_print_titles(path.read_bytes()))
    outputs = convert_to_csv_sheets(copies, sheets, tmp / "recalculated", timeout_s=600)
    return {key: BookValues(out) for key, out in zip(keys, outputs, strict=True)}


#: One cell of a sheet as the writer saves it: ``<c r="B5" s="7" t="n"><v>4096</v></c>`` or ``<c r="B7" s="5" t="n" />``.
_CELL = re.compile(r'<c r="(B\d+)"((?: s="\d+")?)(?: t="[a-zA-Z]+")?\s*(?:/>|>.*?</c>)')


def with_inputs_xlsx(base: bytes, spec: WorkbookSpec, inputs: dict[str, Any]) -> bytes:
    """The written workbook ``base`` (write_workbook of ``spec``) with the Inputs cells set as ``with_inputs`` sets
    them, saved as the writer saves a cell: text inline (``t="inlineStr"``), a number or a blank ``t="n"``, the
    cell's style kept. TestPatchedInputs checks the result equals writing ``with_inputs(spec, inputs)``."""
    sheet_xml = f"xl/worksheets/sheet{[s.name for s in spec.sheets].index(INPUTS_SHEET) + 1}.xml"
    fields = {f"B{input_row(f.key)}": f.key for f in (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS) if f.key in inputs}

    def cell(m: re.Match) -> str:
        ref, style = m.group(1, 2)
        if ref not in fields:
            return m.group(0)
        value = inputs[fields[ref]]
        if value is None:
            return f'<c r="{ref}"{style} t="n" />'
        if isinstance(value, str):
            return f'<c r="{ref}"{style} t="inlineStr"><is><t>{escape(value)}</t></is></c>'
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"input {fields[ref]}: {value!r} is neither text, a number nor blank")
        return f'<c r="{ref}"{style} t="n"><v>{value}</v></c>'

    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(base)) as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as dst,
    ):
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == sheet_xml:
                data = _CELL.sub(cell, data.decode("utf-8")).encode("utf-8")
            dst.writestr(info, data)
    return out.getvalue()


# -- the model's side -----------------------------------------------------------------------------------


class Error:
    """An expected error cell: the model raised ``exc`` (or the sheet marks 'does not fit' as #N/A); or the words a
    cell shows in place of a figure (``expected_probe``: "no change")."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Error({self.text})"


def _err(exc: PlannerError) -> Error:
    """The error value every surface shows for this exception (PlannerError.excel_error)."""
    return Error(exc.excel_error)


def scenario_inputs(base: dict, key: str) -> dict:
    """The inputs each Calc column evaluates (as the workbook's lever formulas define them), from the baseline's."""
    s = dict(base)
    if key == "base":
        return s
    engine = {"engine": base["engine"]} if base.get("engine") else {}  # the Inputs' Engine (blank: the first)
    try:
        n = int(
            api.memory_plan(
                base["gpu"],
                base["model"],
                base["context"],
                kv_precision=base.get("kv_precision"),
                gpus=base.get("gpus"),
                weight_precision=base.get("weight_precision"),
                memory_utilization=base.get("memory_utilization"),
                **engine,
            ).gpus
        )
        s["gpus"] = api.next_tp_size(base["model"], n, **engine) if key == "more_gpus" else n
    except PlannerError as exc:
        s["gpus"] = _err(exc)  # n-dependent results repeat the baseline's (or the next group's) error
    if key == "context_half":  # load_figures.halved_prompt: the prompt halved, its output kept
        from planner.workbook.load_figures import halved_prompt
        from planner.workbook.tail import prompt_of

        ctx = base["context"]
        whole = isinstance(ctx, (int, float)) and not isinstance(ctx, bool) and ctx >= 1 and float(ctx).is_integer()

        def number(v) -> bool:
            return isinstance(v, (int, float)) and not isinstance(v, bool)

        output, prompt = (base.get(k, BUDGET_DEFAULTS.get(k)) for k in ("output_tokens", "prompt_tokens"))
        if whole and prompt is not None and not number(prompt):  # Calc's prompt row errs, and the lever's context
            s["context"] = s["gpus"] = Error("#VALUE!")
        elif whole:  # output tokens that are no number: no prompt, as blank ones (Calc's prompt row: "")
            inputs = {"context": ctx, "output_tokens": output if number(output) else None, "prompt_tokens": prompt}
            s["context"] = halved_prompt(int(ctx), prompt_of(inputs), inputs)[0]
    elif key == "compare":
        cat = default_catalog()
        s["model"] = base.get("compare_model") or gqa_sibling(cat.model(base["model"]), list(cat.models))
    elif key == "kv_fp8":
        s["kv_precision"] = "fp8"
    elif key == "weights_fp8":
        s["weight_precision"] = "fp8"
    return s


#: The budget inputs the fleet needs (layout.BUDGET_FIELDS); absent from a scenario: the workbook's default.
_FLEET_INPUTS = ("peak_requests_per_s", "output_tokens")

#: Functions whose result does not depend on the GPU count (so the baseline's group error does not reach them).
_N_FREE = ("ridge", "weight_bytes", "kv_bytes_per_token")


def _options(s: dict, n: int | None = None) -> dict:
    """The scenario's options as keyword arguments of planner.api (``n``: the group the memory plan chose)."""
    return dict(
        kv_precision=s.get("kv_precision"),
        gpus=s.get("gpus") if n is None else n,
        weight_precision=s.get("weight_precision"),
        memory_utilization=s.get("memory_utilization"),
        **({"engine": s["engine"]} if s.get("engine") else {}),  # the Inputs' Engine (blank: the workbook's first)
    )


def _served(s: dict, mem) -> int:
    """The batch the workbook's engine serves on the scenario's group: ``planner.api.served_batch`` of memory's."""
    from planner.catalog import default_catalog
    from planner.engines.profiles import engine_profile

    gpu = default_catalog().gpu(s["gpu"])
    engine = engine_profile(_options(s).get("engine"))  # the workbook's engine (a test may build another's)
    return api.served_batch(int(mem.max_batch), engine, gpu, "tp", int(mem.gpus))[0]


#: Each probe's function of planner.api, called with the scenario's inputs: a probe "function.field@arg=value"
#: is ``getattr(MODEL[function](scenario, args), field)``. ``n`` is the group memory_plan chose, ``args`` the
#: arguments after "@". No formula of the model is restated here.
MODEL = {
    "ridge": lambda s, n, a: api.ridge(s["gpu"], precision=s.get("weight_precision") or _native(s["model"])),
    "weight_bytes": lambda s, n, a: api.weight_bytes(s["model"], precision=s.get("weight_precision")),
    "kv_bytes_per_token": lambda s, n, a: api.kv_bytes_per_token(s["model"], kv_precision=s.get("kv_precision")),
    "memory_plan": lambda s, n, a: api.memory_plan(s["gpu"], s["model"], s["context"], **_options(s)),
    "served_batch": lambda s, n, a: _served(s, api.memory_plan(s["gpu"], s["model"], s["context"], **_options(s))),
    "max_batch": lambda s, n, a: api.max_batch(s["gpu"], s["model"], a["context"], **_options(s, n)),
    # the group memory_plan chose (None stays None: prefill chooses), with the scenario's other options
    "prefill": lambda s, n, a: api.prefill(s["gpu"], s["model"], s["context"], **{**_options(s, n), "gpus": n}),
    "decode_step": lambda s, n, a: api.decode_step(
        s["gpu"], s["model"], s["context"], batch=a["batch"], **_options(s, n)
    ),
    "peak_fleet": lambda s, n, a: api.peak_fleet(
        s["gpu"],
        s["model"],
        s["context"],
        peak_requests_per_s=s.get("peak_requests_per_s", BUDGET_DEFAULTS["peak_requests_per_s"]) or 1.0,  # blank:
        # only the rate per replica is asked (``expected`` answers #N/A for the rest)
        output_tokens=s.get("output_tokens", BUDGET_DEFAULTS["output_tokens"]),
        price_per_gpu_hour=s.get("price_per_gpu_hour"),
        rate_factor=s.get("rate_factor") or 1.0,  # the queue term the workbook stores (Calc's rate_factor row)
        **_options(s, n),
    ),
    "cost_per_mtok": lambda s, n, a: api.cost_per_mtok(
        s["gpu"],
        s["model"],
        s["context"],
        batch=a["batch"],
        price_per_gpu_hour=s.get("price_per_gpu_hour"),
        **_options(s, n),
    ),
}


def _native(model: str) -> str:
    """The weight precision a blank input means: the model as published."""
    return default_catalog().model(model).native_precision


def expected(s: dict, quantity: str) -> float | Error:
    """What the planner function a probe names gives for the scenario: a number, or the error cell it must show.

    "@batch=chosen" is the Inputs batch (blank: max batch), "@batch=max" the max batch the engine serves (memory's,
    at most its max_num_seqs: ``planner.api.served_batch``, as ``planner plan`` serves it); a sweep point above
    memory's max batch, or a context where nothing fits, shows #N/A (the Sweeps sheet's mark for charts to skip).
    """
    call, _, at = quantity.partition("@")
    function, _, field = call.partition(".")
    args: dict = dict(arg.split("=", 1) for arg in at.split(",")) if at else {}
    if isinstance(s.get("gpus"), Error) and function not in _N_FREE:
        return s["gpus"]
    n = None
    try:
        if function not in _N_FREE:
            mem = api.memory_plan(s["gpu"], s["model"], s["context"], **_options(s))
            n = int(mem.gpus)
    except PlannerError as exc:
        return _err(exc)
    batch = args.get("batch")
    if batch == "chosen":
        args["batch"] = _served(s, mem) if s.get("batch") is None else s["batch"]
    elif batch == "max":
        args["batch"] = _served(s, mem)
    elif batch is not None:  # a point of the batch sweep
        if int(batch) > mem.max_batch:
            return Error("#N/A")
        args["batch"] = int(batch)
    if "context" in args:
        args["context"] = int(args["context"])
    needs = _FLEET_INPUTS[1:] if field == "rate_per_replica_s" else _FLEET_INPUTS  # the rate needs no traffic
    if function == "peak_fleet" and any(s.get(k, BUDGET_DEFAULTS[k]) is None for k in needs):
        return Error("#N/A")  # a blank budget input (after the group's errors, as the sheet checks them): NO_DATA
    try:
        result = MODEL[function](s, n, args)
    except DoesNotFitError as exc:
        return Error("#N/A") if function == "max_batch" else _err(exc)  # a sweep context where nothing fits
    except PlannerError as exc:
        return _err(exc)
    value = float(getattr(result, field) if field else result)
    return Error("#N/A") if function == "peak_fleet" and math.isnan(value) else value  # no price: NO_DATA


def lever_void(inputs: dict, key: str) -> bool:
    """Whether Levers scenario ``key`` changes nothing against the baseline of ``inputs``
    (``load_figures.lever_changes_nothing``, the rule Calc's no_change row restates, under the engine ``_options``
    names); False where the baseline errs (every lever shows the error, unranked)."""
    from planner.engines.profiles import engine_profile
    from planner.workbook.load_figures import lever_changes_nothing

    if key == "base":
        return False
    try:
        return lever_changes_nothing(inputs, key, default_catalog(), engine_profile(_options(inputs).get("engine")))
    except (PlannerError, TypeError, ValueError):
        return False


def expected_probe(inputs: dict, probe, per_scenario: dict) -> float | Error:
    """What a probed cell must show for the baseline ``inputs``: ``expected`` of its scenario's inputs
    (``per_scenario``, by key), or, in a Levers fleet row of a lever that changes nothing, its words "no change"
    (``planner.workbook.levers.or_void``: trial 13 F13; Calc's own row keeps the figure), "no saving" for the Weights
    fp8 lever of a model whose experts ship smaller than fp8 (``resolve.weights_enlarge_experts``)."""
    from planner.catalog.resolve import weights_enlarge_experts
    from planner.workbook.calc import NO_CHANGE_WORDS, NO_SAVING_WORDS
    from planner.workbook.layout import LEVERS_SHEET

    if probe.sheet == LEVERS_SHEET and probe.quantity.startswith("peak_fleet") and lever_void(inputs, probe.scenario):
        cat = default_catalog()  # gpt-oss's Weights fp8: "no saving", its experts ship in mxfp4 (trial 26 F2)
        smaller = probe.scenario == "weights_fp8" and weights_enlarge_experts(cat, cat.model(inputs["model"]), "fp8")
        return Error(NO_SAVING_WORDS if smaller else NO_CHANGE_WORDS)
    return expected(per_scenario[probe.scenario], probe.quantity)


def agrees(cell: Any, want: float | Error, scale: float = 1.0, rel: float = 1e-9) -> bool:
    if isinstance(want, Error):
        return cell == want.text
    if isinstance(cell, bool) or not isinstance(cell, (int, float)):
        return False
    return math.isclose(cell, want * scale, rel_tol=rel, abs_tol=1e-300)


# -- a checked-in workbook against what its command writes now --------------------------------------------


def same_cell(a, b) -> bool:
    """Equal cells; numbers equal to 1e-9 relative, as a simulated figure's last digits differ between CPUs (the
    Load sheet's 161.3829932965218 written on one machine is 161.3829932966355 on another: SIMD summation order)."""
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _cells(ws) -> dict[str, Any]:
    """A sheet's non-empty cells by reference: values, formulas as their text, an array formula as (its range, its
    text) (openpyxl's ``ArrayFormula`` has no ``==``: two alike compare unequal)."""
    from openpyxl.worksheet.formula import ArrayFormula

    out = {}
    for row in ws.iter_rows():
        for c in row:
            if c.value is not None:
                out[c.coordinate] = (c.value.ref, c.value.text) if isinstance(c.value, ArrayFormula) else c.value
    return out


def workbook_differences(shipped: Path, fresh: Path, *, data_only: bool = False) -> list[str]:
    """Where a checked-in workbook differs from one its command writes now, one line each (empty: none): the sheets,
    the defined names, and per sheet the cells that differ (``same_cell``; the first 10 named). Compared by what a
    reader sees, not bytes, so the file's timestamps and other metadata (docProps) do not count. ``data_only``:
    each formula's stored value instead of its text (what a preview, pandas or a spreadsheet without the add-in
    shows)."""
    old = openpyxl.load_workbook(shipped, data_only=data_only)
    new = openpyxl.load_workbook(fresh, data_only=data_only)
    if old.sheetnames != new.sheetnames:
        return [f"sheets {old.sheetnames} are now {new.sheetnames}"]
    out = []
    names = lambda wb: {k: v.attr_text for k, v in wb.defined_names.items()}  # noqa: E731
    if names(old) != names(new):
        out.append(f"defined names {names(old)} are now {names(new)}")
    for ws in new.worksheets:
        now, before = _cells(ws), _cells(old[ws.title])
        differ = sorted(k for k in now.keys() | before.keys() if not same_cell(now.get(k), before.get(k)))
        if differ:
            shown = ", ".join(f"{k} {before.get(k)!r} -> {now.get(k)!r}" for k in differ[:10])
            out.append(f"{ws.title}: {len(differ)} cells differ: {shown}")
    return out


# -- the budget block's green ----------------------------------------------------------------------------


def stored_rate_factors(spec: WorkbookSpec) -> dict[str, float | None]:
    """Each scenario's queue term as the description stores it (Calc's rate_factor row: numbers planner's
    simulation computed, the same in every copy whatever its Inputs; None: blank, not simulated)."""
    from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col

    row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["rate_factor"]
    return {key: spec.sheet("Calc").cells[f"{scenario_col(key)}{row}"].value for key, _, _ in SCENARIOS}


def expected_green(
    inputs: dict, rate_factors: dict | None = None, simulated: bool = False, stale: bool = False
) -> set[str]:
    """The Levers headers that must be green: of the scenarios that meet the Inputs targets and whose fleet has a
    monthly cost (api.peak_fleet with the scenario's ``rate_factors``, default 1), the cheapest (all of them on a
    tie). Meeting the targets: a rate factor in a book whose Load sheet is current (``simulated``: the simulation
    found that fleet meeting them), else TPOT at max batch (api.decode_step) and TTFT (api.prefill) within them. A
    blank or text target, or an error in a value, means not met. A lever that changes the requests
    (``planner.workbook.calc.WORKLOAD_LEVERS``: Prompt halved, Compare model) is never green, nor one that changes
    nothing (``load_figures.lever_changes_nothing``: weights fp8 of an fp8 model). None is green where nothing is
    judged (``verdict_unknown``: an input refused, or the book's Load sheet ``stale``)."""
    from planner.workbook.calc import SCENARIOS, WORKLOAD_LEVERS

    if verdict_unknown(inputs, stale):
        return set()
    no_change = lambda key: lever_void(inputs, key)  # noqa: E731
    ok = {}
    for key, header, _ in SCENARIOS:
        meets, cost = _meets(inputs, key, rate_factors, simulated)
        if meets and not isinstance(cost, Error) and key not in WORKLOAD_LEVERS and not no_change(key):
            ok[header] = cost
    return {h for h, cost in ok.items() if cost == min(ok.values())}


def _meets(inputs: dict, key: str, rate_factors: dict | None, simulated: bool) -> tuple[bool, float | Error]:
    """Whether scenario ``key`` meets the Inputs targets (``expected_green``'s rule, cost aside), and its fleet's
    monthly cost (api.peak_fleet, or the error it shows)."""
    s = scenario_inputs(inputs, key)
    s["rate_factor"] = (rate_factors or {}).get(key)
    cost = expected(s, "peak_fleet.monthly_usd@batch=max")
    targets = [inputs.get(k, BUDGET_DEFAULTS[k]) for k in ("tpot_target_ms", "ttft_target_ms")]
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in targets):
        return False, cost
    if simulated and s["rate_factor"] is not None:
        return True, cost
    tpot_target_s, ttft_target_s = (t / 1000 for t in targets)
    step = expected(s, "decode_step.step_s@batch=max")
    ttft = expected(s, "prefill.ttft_s")
    met = not any(isinstance(x, Error) for x in (step, ttft)) and step <= tpot_target_s and ttft <= ttft_target_s
    return met, cost


def green_scenarios(book: openpyxl.Workbook) -> set[str]:
    """The headers whose cell in Calc's green row (what the Levers highlight reads) is 1 in a recalculated book."""
    from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col

    row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["green"]
    flags = {header: book["Calc"][f"{scenario_col(key)}{row}"].value for key, header, _ in SCENARIOS}
    assert set(flags.values()) <= {0, 1}, flags
    return {h for h, flag in flags.items() if flag == 1}


#: What the Levers' "Cheapest fleet that meets the targets" says where no scenario is green and no fleet was asked
#: for (a blank peak traffic or output length: Inputs say "Blank: no fleet") or none has a cost (no price; a price
#: refused), rather than "none meets the targets" beside levers that read "yes".
NO_PEAK_LABEL = "no peak traffic given (Inputs): no fleet asked for"
NO_OUTPUT_LABEL = "no output tokens given (Inputs): no fleet asked for"
NONE_MEETS_LABEL = "none meets the targets"
#: ... and where only a lever that changes the requests meets them (Prompt halved, Compare model: never ranked).
ONLY_WORKLOAD_MEETS_LABEL = (
    "none that serves the same requests meets the targets (Prompt halved and Compare model change them)"
)


def expected_cheapest_label(
    inputs: dict, rate_factors: dict | None = None, simulated: bool = False, stale: bool = False
) -> str:
    """The Levers' cheapest-fleet label where nothing is green: why nothing is judged (``verdict_unknown``), else why
    no fleet was asked for or has a cost, in that order, else "none meets the targets", or
    ``ONLY_WORKLOAD_MEETS_LABEL`` where a lever that changes the requests meets them (it is not ranked). A blank price
    with no catalog price (``api.gpu_price_per_hour`` NaN) names the GPU (a price typed and refused is an input
    refused)."""
    from planner.workbook.calc import UNKNOWN_SHORT, WORKLOAD_LEVERS

    unknown = verdict_unknown(inputs, stale)
    if unknown:
        return UNKNOWN_SHORT.get(unknown, unknown)  # the row's short words (levers.unknown_short)

    none_meets = (
        ONLY_WORKLOAD_MEETS_LABEL
        if any(_meets(inputs, key, rate_factors, simulated)[0] for key in WORKLOAD_LEVERS)
        else NONE_MEETS_LABEL
    )

    if inputs.get("peak_requests_per_s", BUDGET_DEFAULTS["peak_requests_per_s"]) is None:
        return NO_PEAK_LABEL
    if inputs.get("output_tokens", BUDGET_DEFAULTS["output_tokens"]) is None:
        return NO_OUTPUT_LABEL
    if inputs.get("price_per_gpu_hour") is not None:
        return none_meets
    cat = default_catalog()
    if inputs["gpu"] in cat.gpus and math.isnan(api.gpu_price_per_hour(inputs["gpu"])):
        return f"no price for {cat.gpu(inputs['gpu']).name}: give a price per GPU-hour (Inputs)"
    return none_meets


def refused_input(inputs: dict) -> bool:
    """Whether the baseline's inputs are refused, as the Inputs' Error line names one (Calc's input_refused row):
    a GPU, model or precision that is not a name the sheets list (any case, as MATCH compares; an alias is not), a
    cell ``planner.workbook.reader`` refuses (text in a number's cell), or inputs ``planner.report.plan`` raises for
    (a group that does not fit, a batch above the max batch, a price of 0, ...). A GPU without a catalog price is not
    refused: ``plan`` prices nothing there."""
    from planner.report import plan
    from planner.workbook.reader import _convert

    cat = default_catalog()
    listed = {
        "gpu": {g.name.lower() for g in cat.gpus},
        "model": {m.name.lower() for m in cat.models},
        "kv_precision": {p.name.lower() for p in cat.precisions},
        "weight_precision": {p.name.lower() for p in cat.precisions},
    }
    for key, names in listed.items():
        value = inputs.get(key)
        if value is not None and str(value).lower() not in names:
            return True
    try:
        for f in INPUT_FIELDS:
            _convert(f, inputs.get(f.key), "Inputs")
        plan(
            inputs["gpu"], inputs["model"], inputs["context"], gpus=inputs.get("gpus"), batch=inputs.get("batch"),
            kv_precision=inputs.get("kv_precision"), weight_precision=inputs.get("weight_precision"),
            memory_utilization=inputs.get("memory_utilization"), price_per_gpu_hour=inputs.get("price_per_gpu_hour"),
        )  # fmt: skip
    except (PlannerError, TypeError, ValueError):
        return True
    return False


def refused_beside_the_batch(inputs: dict) -> bool:
    """``refused_input`` but for a batch above the max batch (a whole number the batch cell takes: Calc's
    input_refused row; the fleet is sized at max batch, so a batch refused for the speed figures leaves it and its
    verdict standing: trial 19 F12). A batch the cell itself refuses (0, a fraction, text) is still refused."""
    from planner.api import MAX_BATCH_INPUT

    batch = inputs.get("batch")
    whole = isinstance(batch, (int, float)) and not isinstance(batch, bool) and batch == int(batch)
    return refused_input({**inputs, "batch": None} if whole and 1 <= batch <= MAX_BATCH_INPUT else inputs)


def refused_budget(inputs: dict) -> bool:
    """Whether a budget input (peak traffic, output tokens, targets, prompt share, burstiness; blank: the workbook's
    default) is one ``planner export`` of the file refuses (``planner.workbook.reader``, Calc's budget_refused row)."""
    from planner.workbook.reader import _convert

    try:
        for f in BUDGET_FIELDS:
            _convert(f, inputs.get(f.key, BUDGET_DEFAULTS.get(f.key)), "Inputs")
    except PlannerError:
        return True
    return False


def verdict_unknown(inputs: dict, stale: bool = False) -> str:
    """Why the workbook judges no scenario's targets, in its words (``planner.workbook.calc.verdict_unknown``): an
    input refused (not a batch above the max batch: the fleet is sized at max batch, trial 19 F12), a budget input
    refused, no fleet asked for (a blank peak traffic or output tokens), or a Load sheet that is ``stale``; "" where it
    judges them."""
    from planner.workbook.calc import INPUT_REFUSED_MEETS, NO_FLEET_ASKED, REFUSED_MEETS, STALE_MEETS

    if refused_beside_the_batch(inputs):
        return INPUT_REFUSED_MEETS
    if refused_budget(inputs):
        return REFUSED_MEETS
    if inputs.get("peak_requests_per_s", BUDGET_DEFAULTS["peak_requests_per_s"]) is None:
        return NO_FLEET_ASKED["rps"]
    if inputs.get("output_tokens", BUDGET_DEFAULTS["output_tokens"]) is None:
        return NO_FLEET_ASKED["out_tok"]
    return STALE_MEETS if stale else ""


#: The Levers row naming the cheapest fleet (of the levers that serve the same requests: "Serves the same requests").
CHEAPEST_ROW_LABEL = "Cheapest fleet that meets the targets"


def cheapest_label(book: openpyxl.Workbook):
    """The Levers cell that names the cheapest fleet meeting the targets."""
    row = next(r for r in book["Levers"].iter_rows() if r[0].value == CHEAPEST_ROW_LABEL)
    return row[2].value


def page_body(text: str) -> str:
    """A printed page's text (``pdftotext -layout`` or ``-raw``) without its header (the sheet's name and
    ``writer.PRINTED_TITLE``) and footer (``writer.printed_footer``'s line and "page n of N"), which every page of the
    what-if workbook carries since trial 19 F8: what the sheet itself prints."""
    from planner.workbook.writer import PRINTED_TITLE, printed_footer

    footer = re.escape(printed_footer()) + r", printed \S+, file \S+(\s+page \d+ of \d+)?"
    if "\n" not in text.strip():  # -raw, whitespace made single spaces: the header leads, then the footer
        text = re.sub(rf"^\s*\S+ {re.escape(PRINTED_TITLE)} ", "", text)
        return re.sub(rf"\s*{footer}\s*", " ", text).strip()
    lines = [x for x in text.splitlines() if PRINTED_TITLE not in x and not re.match(rf"\s*{footer}", x)]
    while lines and not lines[0].strip():  # the blank line between the header and the sheet's first row
        lines.pop(0)
    return "\n".join(lines)
