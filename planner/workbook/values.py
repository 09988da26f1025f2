"""Stored values for a what-if workbook's formulas, so that readers that do not recalculate see numbers.

LibreOffice (the engine the parity tests check against ``planner.api``) recalculates a copy of the saved
workbook; each formula cell of the original then carries the copy's value (``planner.io.xlsx_values``). The
formulas stay live: Excel still recalculates on open (``fullCalcOnLoad``). Without LibreOffice the workbook is
written as before, its formulas without stored values, and the caller says so.
"""

from __future__ import annotations

import io
import zipfile

import openpyxl
from openpyxl.utils.cell import coordinate_to_tuple

from planner.io.files import private_temp_dir
from planner.io.libreoffice import convert, find_soffice, without_print_titles
from planner.io.xlsx_values import unfilled_formula_cells
from planner.io.xlsx_values import with_stored_values as _store


def formula_cells(data: bytes, sheet_titles: list[str]) -> dict[str, set[str]]:
    """Sheet title -> the coordinates of its formula cells without a value (the cells ``store_values`` fills:
    ``unfilled_formula_cells``), read from the saved parts (xl/worksheets/sheet1.xml, ... in the order of
    ``sheet_titles``, openpyxl's) without loading the workbook."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = set(z.namelist())
        return {
            title: unfilled_formula_cells(z.read(name).decode("utf-8"))
            for i, title in enumerate(sheet_titles, start=1)
            if (name := f"xl/worksheets/sheet{i}.xml") in names
        }


def recalculated(data: bytes, sheet_titles: list[str]) -> dict[tuple[str, str], float | str | bool]:
    """(sheet title, coordinate) -> the value LibreOffice computes for every formula cell of ``data`` (an xlsx) that
    ``store_values`` fills; a formula whose result is empty text gets "". The recalculated copy is read in
    openpyxl's read-only mode, rows up to the last formula's (a third of the time of a full load and of reading
    the formulas back: the coordinates come from the parts, ``formula_cells``)."""
    wanted = formula_cells(data, sheet_titles)
    with private_temp_dir("values") as tmp:
        src = tmp / "book.xlsx"
        src.write_bytes(without_print_titles(data))  # no value changes; LibreOffice loads it ~0.85 s CPU faster
        done = convert(src, "xlsx", tmp / "out")[0]
        book = openpyxl.load_workbook(done, data_only=True, read_only=True)
        try:
            values: dict[tuple[str, str], float | str | bool] = {}
            for title, coords in wanted.items():
                if not coords:
                    continue
                at = {coordinate_to_tuple(c): c for c in coords}
                last_row = max(r for r, _ in at)
                last_col = max(c for _, c in at)
                rows = book[title].iter_rows(min_row=1, max_row=last_row, max_col=last_col, values_only=True)
                for r, row in enumerate(rows, start=1):
                    for c, v in enumerate(row, start=1):
                        if (r, c) in at:
                            values[(title, at[(r, c)])] = (
                                "" if v is None else v if isinstance(v, (str, bool)) else float(v)
                            )
                for coord in at.values():  # rows past the copy's last written one read as empty
                    values.setdefault((title, coord), "")
            return values
        finally:
            book.close()


def with_stored_values(data: bytes, sheet_titles: list[str]) -> bytes | None:
    """``data`` (a saved xlsx) with every formula's value stored; None when LibreOffice is not installed."""
    if find_soffice() is None:
        return None
    values = recalculated(data, sheet_titles)
    return _store(data, sheet_titles, values)
