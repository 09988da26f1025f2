"""Generate what-if workbooks, and refresh the catalog sheets of a user's copy in place.

``refresh`` rewrites only the sheets in ``layout.CATALOG_SHEETS`` and the defined names that point into them, and the
Load sheet (numbers planner's simulation computes, not formulas: computed again from the copy's Inputs); inputs,
edits on other sheets (Assumptions included) and sheets the user added are kept.
"""

from __future__ import annotations

import html
import io
import os
import re
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from planner import __version__
from planner.accuracy.calibration import resolve_calibration
from planner.catalog import Catalog, default_catalog
from planner.engines.profiles import engine_profile
from planner.io.files import check_target, write_file
from planner.io.safetext import xlsx_text
from planner.workbook.build import (
    SELECTION_PROPERTY,
    build_catalog_sheets,
    build_whatif,
    select_entries,
    selection_text,
)
from planner.workbook.layout import (
    CALC_SHEET,
    CATALOG_SHEETS,
    ENGINE_INDEX,
    GPUS_SHEET,
    INPUTS_SHEET,
    LEVERS_SHEET,
    LOAD_SHEET,
    MODELS_SHEET,
    PRECISIONS_SHEET,
    VERSION_PROPERTY,
    WARNING_PREFIX,
    WORKBOOK_FILE,
    why_error_row,
)
from planner.workbook.reader import RefreshRefusedError, WorkbookError, check_file, check_marker, load, read_all_inputs
from planner.workbook.writer import write_sheet, write_workbook


@dataclass(frozen=True)
class Written:
    path: Path
    gpus: int
    models: int
    values_stored: bool = False  # every formula carries its value (LibreOffice recalculated a copy)
    #: what refresh did with the GPUs and models listed, where not simply what was asked: "kept" (the workbook's own
    #: selection, ``SELECTION_PROPERTY``) or "grew" (a workbook listing fewer, made before the property: the whole
    #: catalog now), with the counts it listed before; "" otherwise
    selection: str = ""
    listed_before: tuple[int, int] = (0, 0)
    #: why the Load sheet simulated nothing, a budget question the Inputs leave unasked (``refresh``:
    #: ``load_figures.not_simulated_why``, "no peak traffic on Inputs ..."); "" where it was simulated
    load_not_simulated: str = ""


def generate(
    out_dir: str | os.PathLike = "workbooks",
    catalog: Catalog | None = None,
    gpus: list[str] | None = None,
    models: list[str] | None = None,
    force: bool = False,
    inputs: dict | None = None,
) -> list[Written]:
    """Write the what-if workbook(s) into ``out_dir``, each formula with its value stored when LibreOffice is
    installed; an existing file is an OutputExistsError unless ``force``. ``inputs``: Inputs to open on in the place
    of the defaults (``build_whatif``)."""
    from planner.io.libreoffice import find_soffice

    check_target(Path(out_dir) / WORKBOOK_FILE, force, make_parents=True)  # before the (slow) build
    spec = build_whatif(catalog, gpus, models, inputs=inputs)
    path = write_workbook(spec, Path(out_dir) / WORKBOOK_FILE, force=force, store_values=True)
    stored = find_soffice() is not None
    return [Written(path, _rows(spec.sheet("GPUs")), _rows(spec.sheet("Models")), stored)]


def _rows(sheet) -> int:
    """Entries in the sheet's catalog table (header excluded)."""
    return int("".join(ch for ch in sheet.tables[0].ref.split(":")[1] if ch.isdigit())) - 1


def refresh(
    path: str | os.PathLike,
    catalog: Catalog | None = None,
    gpus: list[str] | None = None,
    models: list[str] | None = None,
    output: str | os.PathLike | None = None,
    force: bool = False,
) -> Written:
    """Replace the catalog sheets of a workbook ``planner workbook`` made with the current catalog, and compute its
    Load sheet again from its Inputs (added after Levers when missing; ``refresh_load``).

    Writes ``output`` (default: the file itself, replaced atomically; a symlink is written through, a read-only
    file stays read-only). Raises WorkbookError for a file it did not make, or, unless ``force``,
    RefreshRefusedError for a read-only file, one holding pictures, sparklines, threaded comments, x14 validation or data bars, custom
    XML, dynamic-array formulas or other parts openpyxl cannot carry over, or rows added to a catalog sheet;
    OutputExistsError when ``output`` exists and ``force`` is not set.
    """
    src = Path(path)
    dest = Path(output) if output is not None else src
    in_place = output is None or (dest.exists() and dest.resolve() == src.resolve())
    if not in_place:
        check_target(dest, force, make_parents=True)
    elif not force and (not src.stat().st_mode & 0o222 or not os.access(src, os.W_OK)):  # root: mode bits
        raise RefreshRefusedError(f"{src} is read-only; pass --force to refresh it anyway (it stays read-only)")
    before = package_features(check_file(src), CATALOG_SHEETS)
    wb = load(src, keep_user_content=True)
    check_marker(wb, src)
    cat = catalog or default_catalog()
    added = user_rows(wb, cat)
    if added and not force:
        more = f" and {len(added) - 1} more" if len(added) > 1 else ""
        raise RefreshRefusedError(
            f"{src}: {added[0]}{more} is not in the catalog, and refresh rewrites that sheet from the catalog; "
            "add the entry to a catalog folder (--catalog DIR) to keep it, or pass --force to drop it"
        )
    cal = resolve_calibration(None)
    # before anything is built: Inputs or engine parameters the Load sheet cannot be simulated from are refused here
    from planner.workbook.assumptions import read_engine
    from planner.workbook.load_figures import not_simulated_why

    inputs = read_all_inputs(src, wb)
    eng = engine_profile(inputs["engine"])  # the Inputs' Engine (a workbook written before it: its only engine)
    read_engine(wb, src, eng)
    offered = _offered(wb, eng)
    gpus, models, selection = _selection(wb, gpus, models)
    listed_before = (_listed_count(wb, GPUS_SHEET), _listed_count(wb, MODELS_SHEET))
    gpu_list, model_list = select_entries(cat, gpus, models)
    if (
        not selection
        and gpus is None
        and models is None
        and (listed_before[0] < len(gpu_list) or listed_before[1] < len(model_list))
    ):
        selection = "grew"
    check_names(
        wb, src, cat, [g.name for g in gpu_list], [m.name for m in model_list]
    )  # before anything is simulated or written
    sheets, names = build_catalog_sheets(cat, gpu_list, model_list, offered, cal)
    for sheet in sheets:
        if sheet.name in wb.sheetnames:
            index = wb.sheetnames.index(sheet.name)
            wb.remove(wb[sheet.name])
        else:
            index = len(wb.sheetnames)
        write_sheet(wb.create_sheet(sheet.name, index), sheet)
    from openpyxl.workbook.defined_name import DefinedName

    for n in names:
        wb.defined_names[n.name] = DefinedName(n.name, attr_text=n.ref, hidden=n.hidden or None)
    check_load_sheet(wb, src, force)
    _set_property(wb, VERSION_PROPERTY, __version__)
    from planner.workbook.writer import PRINTED_FIELDS, printed_footer

    for ws in wb.worksheets:  # the printed footer names the planner that refreshed it (a user's own sheet: as it was)
        if ws.oddFooter.left.text and ws.oddFooter.left.text.startswith(printed_footer("")[:8]):
            ws.oddFooter.left.text = printed_footer() + PRINTED_FIELDS
    if gpus or models:  # the selection this refresh listed, for the next one
        _set_property(wb, SELECTION_PROPERTY, selection_text(gpus, models))
    else:
        _remove_property(wb, SELECTION_PROPERTY)
    if wb.calculation is None:  # a workbook whose <calcPr/> was removed
        from openpyxl.workbook.properties import CalcProperties

        wb.calculation = CalcProperties()
    wb.calculation.fullCalcOnLoad = True
    buf = io.BytesIO()
    wb.save(buf)
    lost = before - package_features(buf, CATALOG_SHEETS)
    if lost and not force:
        what = ", ".join(f"{n} {kind}{'s' if n > 1 else ''}" for kind, n in sorted(lost.items()))
        keep = f"{src} keeps them" if not in_place else "with -o NEW.xlsx the original keeps them"
        raise RefreshRefusedError(
            f"{src} holds {what} that refresh cannot carry over (openpyxl drops them); "
            f"pass --force to refresh anyway without them ({keep})"
        )
    # after that check, so that a refused refresh simulates nothing; the new sheet has as many charts as the old
    refresh_load(wb, src, cat, eng, cal, force)
    # keep the sheet the user had open, and only that one selected
    for ws in wb.worksheets:
        ws.sheet_view.tabSelected = ws is wb.active
    buf = io.BytesIO()
    wb.save(buf)
    from planner.workbook.values import with_stored_values

    stored = with_stored_values(buf.getvalue(), wb.sheetnames)  # openpyxl saved every formula without its value
    # in place: replace the file itself; a new -o file: created exclusively (of concurrent refreshes one wins)
    write_file(dest, stored or buf.getvalue(), force=force or in_place, make_parents=True)
    return Written(
        dest,
        len(gpu_list),
        len(model_list),
        stored is not None,
        selection,
        listed_before,
        not_simulated_why(inputs) or "",
    )


#: ``--gpus all`` / ``--models all``: the whole catalog, where the workbook kept a selection of its own.
ALL = "all"


def _selection(wb, gpus: list[str] | None, models: list[str] | None) -> tuple[list | None, list | None, str]:
    """The GPUs and models a refresh lists: those given (``ALL``: the whole catalog), else the workbook's own
    selection (``SELECTION_PROPERTY``, written by ``planner workbook --gpus/--models``), else all; and "kept" where
    the workbook's own selection was used."""
    import json

    try:
        stored = json.loads(_property(wb, SELECTION_PROPERTY) or "{}")
    except ValueError:
        stored = {}
    stored = stored if isinstance(stored, dict) else {}
    kept = ""
    out = []
    for given, key in ((gpus, "gpus"), (models, "models")):
        if given is None and isinstance(stored.get(key), list) and stored[key]:
            given, kept = [str(n) for n in stored[key]], "kept"
        if given is not None and [n.strip().lower() for n in given] == [ALL]:
            given = None
        out.append(given)
    return out[0], out[1], kept


def _listed_count(wb, sheet: str) -> int:
    """How many entries a catalog sheet of the workbook lists (its first column below the header)."""
    if sheet not in wb.sheetnames:
        return 0
    return sum(1 for r in wb[sheet].iter_rows(min_row=2, max_col=1, values_only=True) if r[0])


def check_names(wb, path: Path, catalog: Catalog, gpus: list[str], models: list[str], by: str = "refresh") -> None:
    """A WorkbookError (one line, exit 2) for the first Inputs name cell that planner reads as a catalog entry but the
    sheet's formulas do not find: they look each name up with MATCH over the GPUs, Models and Precisions sheets
    (``gpus``, ``models``: the names listed there, any case), while the catalog also takes aliases and other
    spellings ("H100", "H100_SXM_80G", " fp8"). Refreshed anyway, the Load sheet would be simulated for H100 SXM
    80GB and read "current" while every formula showed #N/A; exported (``by="export"``), the review would size a
    deployment the workbook shows no number for. An alias the sheet's alias table lists (fp4, H200, llama2-70b) passes
    where the workbook's formulas read it as its entry (``takes_aliases``); another spelling ("H200_SXM") does not. A name neither side knows (a typo) passes: the formulas show
    #N/A and the Load sheet says why it computed nothing."""
    from planner.errors import PlannerError, shown_name
    from planner.workbook.layout import COMPARE_FIELD, INPUT_FIELDS
    from planner.workbook.reader import _cell_of

    precisions = [p.name for p in catalog.precisions]
    if takes_precision_aliases(wb):
        precisions += [a for p in catalog.precisions for a in p.aliases]
    # an alias passes where the formulas read it through the sheet's alias table: refreshed, the table this refresh
    # writes (every alias of the entries listed, ``catalog_sheets.alias_table``); exported, the workbook's own
    if takes_aliases(wb, "gpu"):
        gpus = [*gpus, *_aliases_of(wb, "gpu", catalog.gpus, gpus, by)]
    if takes_aliases(wb, "model"):
        models = [*models, *_aliases_of(wb, "model", catalog.models, models, by)]
    lookups = {  # input key: (the names its MATCH reads, the sheet listing them, the catalog's lookup)
        "gpu": (gpus, GPUS_SHEET, catalog.gpu),
        "model": (models, MODELS_SHEET, catalog.model),
        "compare_model": (models, MODELS_SHEET, catalog.model),
        "weight_precision": (precisions, PRECISIONS_SHEET, catalog.precision),
        "kv_precision": (precisions, PRECISIONS_SHEET, catalog.precision),
    }
    for f in (*INPUT_FIELDS, COMPARE_FIELD):
        if f.key not in lookups:
            continue
        listed, sheet, lookup = lookups[f.key]
        cell = _cell_of(wb, f.name, path)
        value = str(cell.value) if type(cell.value).__name__ == "CellRichText" else cell.value
        if value is None or value == "" or (isinstance(value, str) and value.startswith("=")):
            continue  # blank (the default), or a formula: its value is the sheet's own
        if isinstance(value, str) and value.lower() in {n.lower() for n in listed}:
            continue  # MATCH(..., 0) ignores case
        try:
            name = lookup(str(value).strip()).name
        except PlannerError:
            continue  # unknown to planner too
        where = f"{path}: {cell.parent.title}!{cell.coordinate} ({f.label}) {shown_name(value)}"
        if name in listed:
            raise WorkbookError(f"{where} is not a name the workbook's formulas look up; type {name!r}")
        named = "" if value == name else f" names {name!r}, which"
        option = f"--{'gpus' if sheet == GPUS_SHEET else 'models'}"
        if by == "refresh":
            raise WorkbookError(
                f"{where}{named} is not on the {sheet} sheet this refresh writes; add it to {option} or choose a "
                "name from the list"
            )
        raise WorkbookError(
            f"{where}{named} is not on the workbook's {sheet} sheet, so its formulas show #N/A; add it with "
            f"`planner workbook refresh FILE {option} ...` or choose a name from the list"
        )


def _aliases_of(wb, prefix: str, entries, listed: list[str], by: str) -> list[str]:
    """The aliases the workbook's formulas will find for ``prefix`` ("gpu", "model"): for a refresh, those of the
    ``listed`` entries the rewritten sheet's table holds; for an export, the ``{prefix}_aliases`` range as it is."""
    if by == "refresh":
        return [a for e in entries if e.name in listed for a in e.aliases]
    defined = wb.defined_names.get(f"{prefix}_aliases")
    if defined is None:
        return []
    out = []
    for sheet, ref in defined.destinations:
        if sheet in wb.sheetnames:
            cells = wb[sheet][ref]
            rows = cells if isinstance(cells, tuple) else ((cells,),)
            out += [str(c.value).lstrip("'") for row in rows for c in row if c.value is not None]
    return out


def takes_precision_aliases(wb) -> bool:
    """Whether the workbook's formulas read a precision's alias as its precision (Calc's ``PRECISION_OF``, in
    workbooks written since); refresh rewrites the Precisions sheet, alias table and all, but not the Calc sheet, so
    the formulas, not the table, say it."""
    return takes_aliases(wb, "prec")


def takes_aliases(wb, prefix: str) -> bool:
    """Whether the workbook's Calc formulas read a typed name through the ``{prefix}_aliases`` table (``calc.name_of``:
    precisions in workbooks written since trial 11, GPUs and models since trial 19 F10)."""
    if CALC_SHEET not in wb.sheetnames:
        return False
    table = f"{prefix}_aliases"
    return any(isinstance(v, str) and table in v for row in wb[CALC_SHEET].iter_rows(values_only=True) for v in row)


def check_listed_names(wb, path: Path, catalog: Catalog) -> None:
    """``check_names`` against the names the workbook's own GPUs and Models sheets list (a workbook read as it is,
    by ``planner export``, not refreshed)."""

    def listed(sheet: str) -> list[str]:
        if sheet not in wb.sheetnames:
            return []
        return [str(r[0]).lstrip("'") for r in wb[sheet].iter_rows(min_row=2, max_col=1, values_only=True) if r[0]]

    check_names(wb, path, catalog, listed(GPUS_SHEET), listed(MODELS_SHEET), by="export")


def check_load_sheet(wb, path: Path, force: bool = False) -> None:
    """A RefreshRefusedError, unless ``force``, for a sheet named Load that planner did not write (its title differs):
    refresh would replace it."""
    from planner.workbook.load_sheet import TITLE

    if LOAD_SHEET in wb.sheetnames and str(wb[LOAD_SHEET]["A1"].value) != TITLE and not force:
        raise RefreshRefusedError(
            f"{path}: its sheet '{LOAD_SHEET}' was not written by planner, and refresh writes the Load sheet; "
            "rename that sheet to keep it, or pass --force to replace it"
        )


def refresh_load(wb, path: Path, catalog: Catalog, engine, calibration, force: bool = False) -> bool:
    """Write the Load sheet of ``wb`` again: its figures simulated from the workbook's Inputs (``read_all_inputs``)
    with ``engine`` as the Assumptions sheet's parameters edit it (``assumptions.read_engine``),
    in the place of the old one (new: after Levers), and the queue terms they give into Calc's rate_factor row. A
    Load sheet computed from the same Inputs, catalog, engine and planner (its ``load_key`` stored in the file's
    ``LOAD_KEY_PROPERTY``) is kept as it is, without simulating: True when it was written again. Inputs or engine
    parameters that cannot be read raise their WorkbookError (one line naming the cell), so that refresh writes
    nothing: a refreshed file whose Load sheet said "not computed" kept the old fleet estimates under a "refreshed"
    (trial 19 F1). A sheet named Load that planner did not write (another title) is a RefreshRefusedError unless
    ``force``."""
    from planner.workbook.assumptions import read_engine
    from planner.workbook.load_figures import (
        LOAD_KEY_PROPERTY,
        dp_ep_cells,
        edges,
        floors,
        load_figures,
        load_key,
        rate_factors,
        review_cells,
    )
    from planner.workbook.load_sheet import TITLE, load_sheet

    check_load_sheet(wb, path, force)
    inputs = read_all_inputs(path, wb)
    engine = read_engine(wb, path, engine)  # the engine parameters as the Assumptions sheet holds them now
    ours = LOAD_SHEET in wb.sheetnames and str(wb[LOAD_SHEET]["A1"].value) == TITLE
    stored = _property(wb, LOAD_KEY_PROPERTY)
    if ours and stored and stored == load_key(inputs, catalog, engine, calibration):
        return False  # current: the same figures would come out
    figures = load_figures(inputs, catalog, engine, calibration)
    if LOAD_SHEET in wb.sheetnames:
        index = wb.sheetnames.index(LOAD_SHEET)
        wb.remove(wb[LOAD_SHEET])
    else:
        index = wb.sheetnames.index(LEVERS_SHEET) + 1 if LEVERS_SHEET in wb.sheetnames else len(wb.sheetnames)
    write_sheet(wb.create_sheet(LOAD_SHEET, index), load_sheet(figures))
    _write_rate_factors(wb, rate_factors(figures), floors(figures), edges(figures))
    _write_dp_ep(wb, dp_ep_cells(figures))
    _write_review(wb, review_cells(figures))
    if figures.key:
        _set_property(wb, LOAD_KEY_PROPERTY, figures.key)
    else:
        _remove_property(wb, LOAD_KEY_PROPERTY)
    return True


def _write_rate_factors(
    wb, factors: dict[str, float | None], floor: dict[str, str | None] | None = None, edge: dict | None = None
) -> None:
    """Calc's rate_factor row set to ``factors`` (blank for a scenario without one), and its floor row to ``floor``
    (``load_figures.floors``: why a simulated fleet kept nearly idle is no budget; blank: none), where the Calc sheet
    has each row (found by its label: a workbook written before the row existed is left as it is), and its edge row to
    ``edge`` (``load_figures.edges``: planner plan's warning that some arrival draws miss; blank: none)."""
    from planner.workbook.calc import EDGE_LABEL, FLOOR_LABEL, RATE_FACTOR_LABEL, SCENARIOS, scenario_col

    if CALC_SHEET not in wb.sheetnames:
        return
    ws = wb[CALC_SHEET]
    for label, values in ((RATE_FACTOR_LABEL, factors), (FLOOR_LABEL, floor or {}), (EDGE_LABEL, edge or {})):
        row = next((c.row for c in ws["A"] if c.value == label), None)
        if row is None:
            continue
        for key, _, _ in SCENARIOS:
            ws[f"{scenario_col(key)}{row}"].value = values.get(key)


def _write_review(wb, review: tuple[int | None, str] | None) -> None:
    """Calc's review rows (``calc.review_rows``: the budget fleet ``planner export`` of the file gives) set to
    ``review`` as ``calc_rows`` stores it (GPUs, else the words why; blank where nothing was computed), where the Calc
    sheet has those rows (found by label: a workbook written before them is left as it is)."""
    from planner.workbook.calc import REVIEW_GPUS_LABEL, REVIEW_WORDS_LABEL, scenario_col

    if CALC_SHEET not in wb.sheetnames:
        return
    ws, col = wb[CALC_SHEET], scenario_col("base")
    rows = {c.value: c.row for c in ws["A"] if c.value in (REVIEW_GPUS_LABEL, REVIEW_WORDS_LABEL)}
    gpus, words = review if review is not None else (None, None)
    if REVIEW_GPUS_LABEL in rows:
        ws[f"{col}{rows[REVIEW_GPUS_LABEL]}"].value = float(gpus) if gpus is not None else (words or None)
    if REVIEW_WORDS_LABEL in rows:
        ws[f"{col}{rows[REVIEW_WORDS_LABEL]}"].value = words or None


def _write_dp_ep(wb, cells: dict[str, float | str | None]) -> None:
    """Calc's dp-ep column (``calc.DP_EP``) set to the numbers planner computed again (``load_figures.dp_ep_cells``;
    blank where none), each row where this planner writes it and its label says so, where the Calc sheet has that column (a workbook written before
    the lever existed is left as it is)."""
    from planner.workbook.calc import DP_EP, DP_EP_STORED, calc_rows, scenario_col

    if CALC_SHEET not in wb.sheetnames:
        return
    ws, col = wb[CALC_SHEET], scenario_col(DP_EP[0])
    if ws[f"{col}3"].value != DP_EP[1]:
        return
    c = calc_rows(lever_kv="fp8", lever_weights="fp8")  # the layout this planner writes (rows do not move)
    for row in c.rows:
        r = c.row_of[row.key]
        if row.key in DP_EP_STORED and ws[f"A{r}"].value == row.label:
            ws[f"{col}{r}"].value = cells.get(row.key)


_RUN = rb"<(?:\w+:)?r>"
_RICH_TEXT = "rich-text run"

#: Parts a user may add, and whether openpyxl reads them back: (label, part-name pattern, element pattern).
#: Counted before and after the rewrite; what the rewrite would lose is refused unless --force. Rich text
#: (runs in shared or inline strings) and links to other workbooks are read with ``rich_text`` and
#: ``keep_links`` and so kept; the others openpyxl does not model and drops.
_FEATURES = (
    ("picture", r"xl/drawings/[^/]+\.xml", rb"<(?:\w+:)?pic[\s>]"),
    ("shape", r"xl/drawings/[^/]+\.xml", rb"<(?:\w+:)?sp[\s>]"),
    ("chart", r"xl/charts/chart[^/]*\.xml", None),
    ("sparkline", r"xl/worksheets/[^/]+\.xml", rb"<(?:\w+:)?sparkline[\s>]"),
    ("pivot table", r"xl/pivotTables/[^/]+\.xml", None),
    ("slicer", r"xl/slicers/[^/]+\.xml", None),
    ("form control", r"xl/ctrlProps/[^/]+\.xml", None),
    ("threaded comment", r"xl/threadedComments/[^/]+\.xml", rb"<(?:\w+:)?threadedComment[\s>]"),
    (_RICH_TEXT, r"xl/(?:sharedStrings|worksheets/[^/]+)\.xml", _RUN),
    ("link to another workbook", r"xl/externalLinks/externalLink[^/]*\.xml", None),
    ("x14 data validation", r"xl/worksheets/[^/]+\.xml", rb"<x14:dataValidation[\s>]"),
    ("x14 conditional format (data bar, icon set)", r"xl/worksheets/[^/]+\.xml", rb"<x14:cfRule[\s>]"),
    ("custom XML part", r"customXml/item\d+\.xml", None),
    ("dynamic-array formula", r"xl/worksheets/[^/]+\.xml", rb"<(?:\w+:)?c\s[^>]*\bcm=\"\d+\""),
)


def user_rows(wb, catalog: Catalog) -> list[str]:
    """Rows a user added to a catalog sheet ("GPUs row 34 ('My GPU')"): a first cell that names no catalog entry
    of that kind, with more cells filled beside it (the sheet's one-cell footnote is not a row). Refresh would
    drop them with the sheet."""
    tables = {GPUS_SHEET: catalog.gpus, MODELS_SHEET: catalog.models, PRECISIONS_SHEET: catalog.precisions}
    found = []
    for sheet, table in tables.items():
        if sheet not in wb.sheetnames:
            continue
        written = {xlsx_text(e.name) for e in table}  # a name that starts like a formula is written as '=...
        for row in wb[sheet].iter_rows(min_row=2, max_col=4):
            name = row[0].value
            known = name is None or str(name) in table or str(name) in written
            if not known and sum(c.value is not None for c in row) >= 2:
                found.append(f"{sheet} row {row[0].row} ({str(name)[:40]!r})")
    return found


def package_features(source, rewritten_sheets: tuple[str, ...] = ()) -> Counter:
    """How many pictures, shapes, charts, sparklines, pivot tables, slicers, form controls, rich-text runs ...
    (``_FEATURES``) an xlsx holds.

    Read from the package's parts (zip entries) without an XML parser, so nothing is lost to openpyxl. Rich-text
    runs in the cells of ``rewritten_sheets`` (the catalog sheets refresh writes again from the catalog) are not
    counted: LibreOffice saves planner's own text there as runs where a character needs a fallback font, and
    those cells are replaced by design, not user work lost.
    """
    found: Counter = Counter()
    with zipfile.ZipFile(source) as z:
        skipped = _sheet_parts(z, rewritten_sheets)
        for name in z.namelist():
            for label, part, element in _FEATURES:
                if re.fullmatch(part, name):
                    if label == _RICH_TEXT and rewritten_sheets:
                        continue  # counted below, sheet by sheet
                    found[label] += 1 if element is None else len(re.findall(element, z.read(name)))
        if rewritten_sheets:
            found[_RICH_TEXT] += _runs_outside(z, skipped)
    return +found


def _sheet_parts(z: zipfile.ZipFile, sheets: tuple[str, ...]) -> set[str]:
    """The package part names (``xl/worksheets/sheetN.xml``) of the sheets named ``sheets``."""
    if not sheets or "xl/workbook.xml" not in z.namelist():
        return set()
    rels = z.read("xl/_rels/workbook.xml.rels") if "xl/_rels/workbook.xml.rels" in z.namelist() else b""
    targets = {}
    for rel in re.findall(rb"<(?:\w+:)?Relationship\b[^>]*>", rels):
        rid, target = re.search(rb'\bId="([^"]*)"', rel), re.search(rb'\bTarget="([^"]*)"', rel)
        if rid and target:
            path = html.unescape(target[1].decode())
            targets[rid[1]] = path.lstrip("/") if path.startswith("/") else "xl/" + path
    parts = set()
    for sheet in re.findall(rb"<(?:\w+:)?sheet\b[^>]*>", z.read("xl/workbook.xml")):
        name, rid = re.search(rb'\bname="([^"]*)"', sheet), re.search(rb'\br:id="([^"]*)"', sheet)
        if name and rid and html.unescape(name[1].decode()) in sheets and rid[1] in targets:
            parts.add(targets[rid[1]])
    return parts


def _runs_outside(z: zipfile.ZipFile, skipped: set[str]) -> int:
    """Rich-text runs in the cells of every worksheet but ``skipped``: inline strings in the sheet part, and the
    shared strings its cells use (each shared string counted once)."""
    names = z.namelist()
    shared = z.read("xl/sharedStrings.xml") if "xl/sharedStrings.xml" in names else b""
    runs_of = [len(re.findall(_RUN, si)) for si in re.findall(rb"<(?:\w+:)?si>(.*?)</(?:\w+:)?si>", shared, re.S)]
    used: set[int] = set()
    inline = 0
    for name in names:
        if re.fullmatch(r"xl/worksheets/[^/]+\.xml", name) and name not in skipped:
            data = z.read(name)
            inline += len(re.findall(_RUN, data))
            for index in re.findall(rb'<(?:\w+:)?c\b[^>]*\bt="s"[^>]*>\s*<(?:\w+:)?v>(\d+)</', data):
                used.add(int(index))
    return inline + sum(runs_of[i] for i in used if i < len(runs_of))


def _offered(wb, engine) -> list:
    """The engine profiles the workbook's engine-dependent catalog cells follow (``by_engine``): one per engine column
    of its Assumptions sheet, in their order; a workbook written before the columns: ``engine`` alone (its catalog
    sheets then hold that engine's numbers, as they did)."""
    from planner.workbook.reader import engine_names

    names = engine_names(wb) if wb.defined_names.get(ENGINE_INDEX) is not None else []
    return [engine_profile(n) for n in names] or [engine]


def _property(wb, name: str) -> str | None:
    """A custom document property's value, None when the file has none of that name."""
    return next((str(p.value) for p in wb.custom_doc_props.props if p.name == name), None)


def _remove_property(wb, name: str) -> None:
    for p in [p for p in wb.custom_doc_props.props if p.name == name]:
        wb.custom_doc_props.props.remove(p)


def _set_property(wb, name: str, value: str) -> None:
    from openpyxl.packaging.custom import StringProperty

    props = wb.custom_doc_props
    for p in list(props.props):
        if p.name == name:
            props.props.remove(p)
    props.append(StringProperty(name=name, value=value))


def inputs_warning(path: Path) -> str | None:
    """The Inputs' Error line where it holds a warning, as the file stores its value (``refresh`` stores LibreOffice's:
    a price typed per instance, ``inputs.price_warning``, trial 23 F5), for ``planner workbook refresh`` to print; None
    where it holds none, an error or no stored value."""
    import openpyxl

    book = openpyxl.load_workbook(path, data_only=True, read_only=True)
    try:
        value = book[INPUTS_SHEET][f"D{why_error_row()}"].value if INPUTS_SHEET in book.sheetnames else None
    finally:
        book.close()
    return value if isinstance(value, str) and value.startswith(WARNING_PREFIX) else None


__all__ = ["CATALOG_SHEETS", "WorkbookError", "Written", "generate", "inputs_warning", "refresh"]
