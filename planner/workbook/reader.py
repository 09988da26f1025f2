"""Open user workbooks safely and read the inputs of a what-if workbook that ``planner workbook`` made.

Safety: only .xlsx (no macro-enabled files, no vbaProject), at most ``MAX_FILE_BYTES`` on disk and
``MAX_UNPACKED_BYTES`` unpacked (zip bombs), XML parsed by openpyxl with defusedxml installed.
"""

from __future__ import annotations

import datetime
import math
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

from planner.errors import PlannerError, shown_name
from planner.io.libreoffice import save_as_xlsx_hint
from planner.units import parse_token_count, rent_usd_per_gpu_hour, whole_count
from planner.workbook.layout import (
    BUDGET_FIELDS,
    COMPARE_FIELD,
    ENGINE_NAME,
    ENGINE_NAMES,
    FORMAT_VERSION,
    INPUT_FIELDS,
    INPUTS_SHEET,
    LATER_INPUTS,
    MARKER_KIND,
    MARKER_NAME,
    MAX_BURSTINESS,
    SECONDS_SLIP,
    SHAPE_REFUSAL,
    InputField,
)

#: The Inputs' Engine and prompt tokens (``_engine``, ``_check_prompt`` name their cells).
ENGINE_FIELD = next(f for f in INPUT_FIELDS if f.key == "engine")
PROMPT_FIELD = next(f for f in BUDGET_FIELDS if f.key == "prompt_tokens")

MAX_FILE_BYTES = 50 * 10**6
MAX_UNPACKED_BYTES = 500 * 10**6


class WorkbookError(PlannerError):
    """Raised when a file is not a workbook ``planner workbook`` made, cannot be read safely, or an input cell holds
    what its input does not accept: bad input, exit 2 as a bad scenario file (``RefreshRefusedError``: 1)."""

    excel_error = "#VALUE!"
    exit_code = 2


class RefreshRefusedError(WorkbookError):
    """Raised when refreshing a workbook would lose what the user has in it (rows not in the catalog, charts, a sheet
    of theirs, a read-only file) and ``--force`` was not given: a refusal to overwrite, exit 1 as an existing
    output without ``--force``."""

    exit_code = 1


def check_file(path: str | os.PathLike) -> Path:
    """The path, if it names a plain .xlsx file of sane size without macros; else a WorkbookError."""
    p = Path(path)
    if not p.is_file():
        raise WorkbookError(f"{p}: no such file")
    suffix = p.suffix.lower()
    if suffix in (".xlsm", ".xltm", ".xlam", ".xls", ".xlsb"):
        raise WorkbookError(
            f"{p}: {suffix} files are not accepted; give the .xlsx workbook `planner workbook` made"
            + save_as_xlsx_hint(suffix)
        )
    if suffix != ".xlsx":
        raise WorkbookError(
            f"{p}: not an .xlsx file; give the .xlsx workbook `planner workbook` made" + save_as_xlsx_hint(suffix)
        )
    size = p.stat().st_size
    if size > MAX_FILE_BYTES:
        raise WorkbookError(f"{p}: {size / 1e6:,.0f} MB is larger than the {MAX_FILE_BYTES / 1e6:,.0f} MB accepted")
    if not zipfile.is_zipfile(p):
        raise WorkbookError(f"{p}: not an .xlsx file (not a zip package)")
    with zipfile.ZipFile(p) as z:
        infos = z.infolist()
        names = {i.filename.lower() for i in infos}
        if any(n.endswith("vbaproject.bin") for n in names):
            raise WorkbookError(f"{p}: contains macros (vbaProject.bin); save it as a macro-free .xlsx")
        if "[content_types].xml" not in names or "xl/workbook.xml" not in names:
            raise WorkbookError(f"{p}: not an Excel workbook package (no xl/workbook.xml)")
        unpacked = sum(i.file_size for i in infos)
        if unpacked > MAX_UNPACKED_BYTES:
            raise WorkbookError(
                f"{p}: unpacks to {unpacked / 1e6:,.0f} MB, more than the {MAX_UNPACKED_BYTES / 1e6:,.0f} MB accepted"
            )
    return p


def load(path: str | os.PathLike, data_only: bool = False, keep_user_content: bool = False):
    """openpyxl workbook of a checked file; any parse failure becomes a WorkbookError.

    ``keep_user_content``: read rich text as runs and keep links to other workbooks, for a file written back.
    """
    import openpyxl

    p = check_file(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # openpyxl warns about extensions it drops (slicers, ...)
            return openpyxl.load_workbook(
                p, data_only=data_only, keep_vba=False, keep_links=keep_user_content, rich_text=keep_user_content
            )
    except Exception as exc:  # openpyxl raises many kinds on malformed packages
        raise WorkbookError(f"{p}: {_unreadable(exc)}") from None


def _unreadable(exc: BaseException) -> str:
    """One line on why openpyxl could not read a package; XML with a DTD or entities is refused by defusedxml."""
    from defusedxml import DefusedXmlException

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DefusedXmlException):
            return (
                "refused: its XML declares a DTD or entities (as XXE and billion-laughs attacks do); "
                "Excel and LibreOffice never write them: save the file again from either"
            )
        seen = seen.__cause__ or seen.__context__
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"cannot read the workbook ({type(exc).__name__}{': ' + first if first else ''})"


def marker(wb) -> str | None:
    """The marker text of a workbook ``planner workbook`` made (defined name or document property), else None."""
    dn = wb.defined_names.get(MARKER_NAME)
    if dn is not None and dn.attr_text:
        return dn.attr_text.strip('"')
    try:
        for prop in wb.custom_doc_props.props:
            if prop.name == MARKER_NAME and prop.value:
                return str(prop.value)
    except AttributeError:
        pass
    return None


def check_marker(wb, path: str | os.PathLike) -> int:
    """The workbook's format version; a WorkbookError for a file ``planner workbook`` did not make."""
    text = marker(wb)
    if not text or not text.startswith(MARKER_KIND):
        raise WorkbookError(
            f"{path}: not a what-if workbook made by `planner workbook` "
            f"(no '{MARKER_NAME}' marker); generate one with `planner workbook`"
        )
    try:
        version = int(text.rsplit("/", 1)[1])
    except (IndexError, ValueError):
        raise WorkbookError(f"{path}: unreadable '{MARKER_NAME}' marker {text!r}") from None
    if version > FORMAT_VERSION:
        raise WorkbookError(
            f"{path}: made by a newer planner (format {version}, this one reads up to "
            f"{FORMAT_VERSION}); upgrade planner"
        )
    return version


def _cell_of(wb, name: str, path):
    dn = wb.defined_names.get(name)
    if dn is None:
        raise WorkbookError(f"{path}: the defined name '{name}' is missing; was the Inputs sheet restructured?")
    dests = list(dn.destinations)
    if len(dests) != 1:
        raise WorkbookError(f"{path}: the defined name '{name}' does not point at one cell")
    sheet, ref = dests[0]
    if sheet not in wb.sheetnames:
        raise WorkbookError(f"{path}: the defined name '{name}' points at a missing sheet {sheet!r}")
    try:
        cell = wb[sheet][ref.replace("$", "")]
    except (ValueError, KeyError, IndexError):  # not a cell reference openpyxl reads
        cell = None
    if not hasattr(cell, "coordinate"):  # a range (a tuple of rows) or a whole row or column
        raise WorkbookError(
            f"{path}: the defined name '{name}' covers {sheet}!{ref[:40]}, not one cell; "
            "point it at the one input cell (Formulas > Name Manager)"
        )
    return cell


def _count_limits() -> dict[str, int]:
    """The most of each count's unit that an input may hold: what ``planner.api`` accepts (imported on first use)."""
    from planner.api import MAX_BATCH_INPUT, MAX_CONTEXT_TOKENS, MAX_GPUS

    return {"tokens": MAX_CONTEXT_TOKENS, "sequences": MAX_BATCH_INPUT, "GPUs": MAX_GPUS}


def _shown(value: Any) -> str:
    """An input's value for a message: a date as a date; anything else as ``planner.errors.shown_name`` quotes it
    (text in quotes, a number as written, either cut at ``SHOWN_NAME_CHARS`` with its length: a 400-digit number)."""
    if isinstance(value, (datetime.date, datetime.time)):
        return f"a date ({value.isoformat()}); dates are not numbers here"
    return shown_name(value)


def _number_in_text(text: str, f: InputField) -> float | None:
    """The number a text means, as the Excel functions read one (``planner.excel.cells``): ``float`` ("8192",
    "0.9"), and for a token count ``planner.units.parse_token_count`` too ("8,192", "8k"); None when the text is not
    a number. Only for the message: the workbook's formulas refuse text in a number's cell (#VALUE!)."""
    try:
        return float(text)
    except ValueError:
        pass
    if f.unit == "tokens":
        try:
            return float(parse_token_count(text))
        except ValueError:
            return None
    return None


def text_message(text: str, number: float, f: InputField) -> str:
    """Why a number typed as text is refused, and what to type: the workbook's formulas read no text in a number's
    cell (their ISNUMBER checks give #VALUE! in every result), so reading "8k" as 8,192 would size a deployment the
    workbook shows no number for (trial 6 F4)."""
    if not math.isfinite(number):  # 400 digits: no number to suggest
        shown = f"a {_needs(f)}"
    elif f.kind == "count" and number == int(number) and number < 1e15:
        shown = f"{int(number)} as a number"
    else:
        shown = f"{number:g} as a number"
    return (
        f"is text {_shown(text)}, which the workbook's formulas cannot read (#VALUE!); type {shown} "
        "(a cell formatted as Text keeps what is typed as text)"
    )


def _convert(f: InputField, value: Any, where: str, bound: tuple[int, str] | None = None) -> Any:
    """An input cell's value as ``f`` takes it; a WorkbookError naming the cell, the input and what it needs.

    Text in a number's cell is refused as the workbook's formulas refuse it, a number typed as text ("8k", "8192")
    with the number to type (``text_message``); a count must be whole, from 1 to what
    ``planner.api`` accepts of its unit (``_count_limits``), or to ``bound``'s number when given (its text: why, said
    after the bound in the message)."""
    if isinstance(value, str):
        value = value.strip()
        if value == "":
            value = None
    if value is None:
        if f.required:
            raise WorkbookError(f"{where} ({f.label}) is empty; it needs a {f.unit}")
        return None
    if isinstance(value, str) and value.startswith("#"):
        raise WorkbookError(f"{where} ({f.label}) holds the error {value[:20]}; enter a {_needs(f)}")
    if f.kind == "text":
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise WorkbookError(f"{where} ({f.label}) must be a name; got {_shown(value)}")
        return str(value)
    typed = value  # as the cell holds it, for the messages
    if isinstance(value, str) and (number := _number_in_text(value, f)) is not None and not math.isnan(number):
        raise WorkbookError(f"{where} ({f.label}) {text_message(value, number, f)}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WorkbookError(f"{where} ({f.label}) must be a {_needs(f)}; got {_shown(value)}")
    if f.kind == "count":  # the bound's wording: planner.units, as a scenario and the public functions say it
        try:
            most, why = bound or (_count_limits()[f.unit], "")
            return whole_count(value, f.unit, most, typed=typed)
        except ValueError as exc:
            raise WorkbookError(f"{where} ({f.label}) {exc}{why}") from None
    if not math.isfinite(value):
        raise WorkbookError(f"{where} ({f.label}) must be a finite {_needs(f)}; got {_shown(typed)}")
    if f.kind == "percentile":  # as planner plan's --percentile reads one (50, 90, 95 or 99)
        from planner.export.scenario import reported_percentile

        try:
            return reported_percentile(value)
        except ValueError as exc:
            raise WorkbookError(f"{where} ({f.label}) {exc}") from None
    if f.kind == "fraction" and not 0 < value <= 1:
        raise WorkbookError(f"{where} ({f.label}) must be above 0 and at most 1; got {_shown(value)}")
    if f.kind == "share" and not 0 <= value < 1:
        raise WorkbookError(f"{where} ({f.label}) must be 0 or more and below 1; got {_shown(value)}")
    if f.kind == "shape" and not 0 < value <= MAX_BURSTINESS:
        raise WorkbookError(f"{where} ({f.label}) {SHAPE_REFUSAL}; got {_shown(value)}")
    if f.kind in ("rate", "ms") and value <= 0:
        raise WorkbookError(f"{where} ({f.label}) must be above 0 {f.unit}; got {_shown(typed)}")
    if f.slip_below_ms is not None and value < f.slip_below_ms:
        raise WorkbookError(f"{where} ({f.label}) {slip_message(value)}")
    if f.kind == "money":  # the bound and its wording: planner.units, as `planner export` and `plan --price` say it
        try:
            rent_usd_per_gpu_hour(value)
        except ValueError as exc:
            raise WorkbookError(f"{where} ({f.label}) {exc}") from None
    return float(value)


def slip_message(ms: float) -> str:
    """Why a target below its field's ``slip_below_ms`` is refused, and the way out, as the Inputs' Error line words
    it (``planner.workbook.inputs.budget_refused``): "0.05 ms looks like seconds typed as milliseconds; write 50 for
    0.05 s (this cell takes milliseconds)"."""
    return f"{ms:g} ms {SECONDS_SLIP}; write {ms * 1e3:g} for {ms:g} s (this cell takes milliseconds)"


def _needs(f: InputField) -> str:
    """What a number input needs, for a message: "number (tokens)"."""
    return f"number ({f.unit})"


def read_inputs(path: str | os.PathLike) -> dict:
    """The Inputs of a what-if workbook that ``planner workbook`` made.

    Keys: gpu (str), model (str), context (int), kv_precision (str|None), weight_precision (str|None),
    gpus (int|None), engine (str: the Inputs' Engine as the Assumptions sheet's engine columns name it, blank the
    first of them), memory_utilization (float|None), price_per_gpu_hour (float|None), batch (int|None). Blank
    optional inputs are None. Raises ``WorkbookError`` (a PlannerError) with a one-line
    message for a file it did not make, an unsafe or unreadable file, or an input of the wrong kind.
    """
    return _read(load(path), path, INPUT_FIELDS)


def read_all_inputs(path: str | os.PathLike, wb=None, bounds: dict[str, tuple[int, str]] | None = None) -> dict:
    """``read_inputs`` and the Inputs it leaves out: the compare model and the budget question (``BUDGET_FIELDS``:
    peak traffic, output tokens, prompt tokens, targets), None when blank (a prompt whose tokens and the output's do
    not fit the context is refused); the Load sheet is computed from them. ``wb``: the file
    already loaded. Raises ``WorkbookError`` as ``read_inputs`` does, for a budget input that is not a number too.
    ``bounds``: a count input's key -> (its most, why), for a reader that takes less than the workbook does
    (``planner export``: a replica of at most 64 GPUs), so that the message names the cell."""
    return _read(wb if wb is not None else load(path), path, (*INPUT_FIELDS, COMPARE_FIELD, *BUDGET_FIELDS), bounds)


def _read(wb, path: str | os.PathLike, fields, bounds: dict[str, tuple[int, str]] | None = None) -> dict[str, Any]:
    check_marker(wb, path)
    out = _read_fields(wb, path, fields, bounds or {})
    out["engine"] = _engine(wb, path, out.pop("engine", None))
    _check_prompt(wb, path, out)
    if "peak_requests_per_s" in out:  # the budget inputs read: the high lengths as planner plan checks them
        _check_lengths(wb, path, out)
    return out


def _check_lengths(wb, path: str | os.PathLike, out: dict[str, Any]) -> None:
    """A WorkbookError naming the cell where the Inputs' high lengths or their percentile are refused as planner
    plan refuses its options (``planner.workbook.tail.tail_of``: a high length below its mean, a length
    percentile of 50, a length percentile with no high length); the output's checked only where it is given."""
    from planner.workbook.tail import tail_of

    if not any(out.get(k) is not None for k in ("prompt_tokens_high", "output_tokens_high", "length_percentile")):
        return
    try:
        tail_of(out)
    except PlannerError as exc:
        raise WorkbookError(f"{path}: {exc}") from None


def _engine(wb, path: str | os.PathLike, typed: str | None) -> str:
    """The engine the workbook's formulas use: the Inputs' Engine (``in_engine``) as the Assumptions sheet's engine
    columns name it (any case: the formulas' MATCH ignores it), blank: the first of them; in a workbook written before
    the Inputs had an Engine, the Assumptions sheet's ``eng_name``. A WorkbookError naming the cell for a name the
    columns do not hold (every formula shows #N/A there)."""
    listed = engine_names(wb)
    if not listed:  # written before the engine columns: the one engine it was written for
        engine = _cell_of(wb, ENGINE_NAME, path).value
        return str(engine).strip() if engine else "vllm"
    if typed is None:
        return listed[0]
    for name in listed:
        if name.lower() == typed.strip().lower():
            return name
    cell = _cell_of(wb, ENGINE_FIELD.name, path)
    raise WorkbookError(
        f"{path}: {cell.parent.title}!{cell.coordinate} ({ENGINE_FIELD.label}) {_shown(typed)} is not an engine the "
        f"workbook's formulas look up; choose one of {', '.join(listed)} (the Assumptions sheet's engine columns)"
    )


def prompt_refusal(prompt: float, output: float | None, context: float) -> str | None:
    """Why a typed prompt is refused beside the context and output tokens (the Inputs' Error line says it in the same
    words, ``calc.budget_refusal``): prompt + output more than the context per sequence, which holds both; else None."""
    out = output or 0
    if prompt + out <= context:
        return None
    beside = f" plus {out:,.0f} output tokens" if output else ""
    return (
        f"{prompt:,.0f}{beside} is more than the context of {context:,.0f} tokens each sequence holds: give at most "
        f"{max(context - out, 0):,.0f} prompt tokens, a longer context, or leave it blank (context - output)"
    )


def _check_prompt(wb, path: str | os.PathLike, out: dict[str, Any]) -> None:
    """A WorkbookError naming the prompt's cell where prompt + output tokens do not fit the context
    (``prompt_refusal``): the Load sheet could not simulate such requests, nor ``planner export`` review them."""
    prompt, context = out.get("prompt_tokens"), out.get("context")
    if prompt is None or context is None:
        return
    why = prompt_refusal(prompt, out.get("output_tokens"), context)
    if why is not None:
        cell = _cell_of(wb, PROMPT_FIELD.name, path)
        raise WorkbookError(f"{path}: {cell.parent.title}!{cell.coordinate} ({PROMPT_FIELD.label}) {why}")


def engine_column(wb, engine: str) -> tuple[str, int] | None:
    """The Assumptions sheet's column (sheet, column number) holding ``engine``'s parameters (``ENGINE_NAMES``' header
    of that name, any case); None in a workbook written before the engine columns, or for an engine it lacks."""
    dn = wb.defined_names.get(ENGINE_NAMES)
    dests = list(dn.destinations) if dn is not None else []
    if len(dests) != 1 or dests[0][0] not in wb.sheetnames:
        return None
    sheet, ref = dests[0]
    cells = wb[sheet][ref.replace("$", "")]
    row = cells[0] if isinstance(cells, tuple) and cells and isinstance(cells[0], tuple) else cells
    row = row if isinstance(row, tuple) else (row,)
    for cell in row:
        if str(cell.value or "").strip().lower() == engine.strip().lower():
            return sheet, cell.column
    return None


def engine_names(wb) -> list[str]:
    """The engines a workbook offers on Inputs (``ENGINE_NAMES``' headers, in order); [] in one written before."""
    dn = wb.defined_names.get(ENGINE_NAMES)
    dests = list(dn.destinations) if dn is not None else []
    if len(dests) != 1 or dests[0][0] not in wb.sheetnames:
        return []
    sheet, ref = dests[0]
    cells = wb[sheet][ref.replace("$", "")]
    flat = (
        [c for row in cells for c in (row if isinstance(row, tuple) else (row,))]
        if isinstance(cells, tuple)
        else [cells]
    )
    return [str(c.value).strip() for c in flat if c.value is not None and str(c.value).strip()]


#: TRUE and FALSE as LibreOffice Calc saves them in an .xlsx: as the formulas ``=TRUE()`` / ``=FALSE()`` (their saved
#: results 1 / 0, typed as numbers), not as Excel's boolean cells; ``=TRUE`` / ``=FALSE`` as typed by hand. Upper case:
#: ``SavedValues`` compares the formula's text in upper case without spaces.
BOOLEAN_FORMULAS = {"=TRUE()": True, "=FALSE()": False, "=TRUE": True, "=FALSE": False}


class SavedValues:
    """The one rule for reading a cell of a workbook as a spreadsheet shows it, for every reader of Inputs and
    Assumptions (``planner export`` of a workbook and ``planner workbook refresh`` alike): rich text as its text;
    TRUE / FALSE as a bool however it was saved (Excel's boolean cell, or LibreOffice's ``=TRUE()`` formula:
    ``BOOLEAN_FORMULAS``); any other formula as the value saved with it (the file loaded again with ``data_only``,
    once, on the first formula), None where no value was saved."""

    def __init__(self, path: str | os.PathLike):
        self.path = path
        self._cached = None

    def __call__(self, cell) -> Any:
        value = cell.value
        if type(value).__name__ == "CellRichText":  # a workbook loaded with rich text kept (``refresh``)
            value = str(value)
        if not (isinstance(value, str) and value.startswith("=")):
            return value
        spelled = "".join(value.split()).upper()
        if spelled in BOOLEAN_FORMULAS:
            return BOOLEAN_FORMULAS[spelled]
        if self._cached is None:
            self._cached = load(self.path, data_only=True)
        return self._cached[cell.parent.title][cell.coordinate].value


def _read_fields(wb, path: str | os.PathLike, fields, bounds: dict[str, tuple[int, str]]) -> dict[str, Any]:
    """Each field's input cell (its defined name), converted and checked; a formula typed into an input: its saved
    value (``SavedValues``)."""
    saved = SavedValues(path)
    out: dict[str, Any] = {}
    for f in fields:
        if f.key in LATER_INPUTS and wb.defined_names.get(f.name) is None:  # a workbook written before the input
            out[f.key] = None
            continue
        cell = _cell_of(wb, f.name, path)
        value = saved(cell)
        if value is None and isinstance(cell.value, str) and cell.value.startswith("="):
            raise WorkbookError(
                f"{path}: {cell.parent.title}!{cell.coordinate} ({f.label}) holds a formula "
                "without a saved value; open and save the file in Excel or LibreOffice first"
            )
        out[f.key] = _convert(f, value, f"{path}: {cell.parent.title}!{cell.coordinate}", bounds.get(f.key))
    return out


__all__ = [
    "COMPARE_FIELD",
    "INPUTS_SHEET",
    "RefreshRefusedError",
    "SavedValues",
    "WorkbookError",
    "check_file",
    "check_marker",
    "engine_column",
    "engine_names",
    "load",
    "read_all_inputs",
    "read_inputs",
]
