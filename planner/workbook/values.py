"""Stored values for a what-if workbook's formulas, so that readers that do not recalculate see numbers.

LibreOffice (the engine the parity tests check against ``planner.api``) recalculates a copy of the saved
workbook; each formula cell of the original then carries the copy's value (``planner.io.xlsx_values``). The
formulas stay live: Excel still recalculates on open (``fullCalcOnLoad``). Without LibreOffice the workbook is
written as before, its formulas without stored values, and the caller says so.
"""

from __future__ import annotations

import io

import openpyxl

from planner.io.files import private_temp_dir
from planner.io.libreoffice import convert, find_soffice, without_print_titles
from planner.io.xlsx_values import with_stored_values as _store


def recalculated(data: bytes, sheet_titles: list[str]) -> dict[tuple[str, str], float | str | bool]:
    """(sheet title, coordinate) -> the value LibreOffice computes for every non-empty cell of ``data`` (an xlsx);
    a formula whose result is empty text gets ""."""
    with private_temp_dir("values") as tmp:
        src = tmp / "book.xlsx"
        src.write_bytes(without_print_titles(data))  # no value changes; LibreOffice loads it ~0.85 s CPU faster
        done = convert(src, "xlsx", tmp / "out")[0]
        book = openpyxl.load_workbook(done, data_only=True)
        formulas = openpyxl.load_workbook(io.BytesIO(data))
        values: dict[tuple[str, str], float | str | bool] = {}
        for title in sheet_titles:
            for row in formulas[title].iter_rows():
                for cell in row:
                    if isinstance(cell.value, str) and cell.value.startswith("="):
                        v = book[title][cell.coordinate].value
                        values[(title, cell.coordinate)] = (
                            "" if v is None else v if isinstance(v, (str, bool)) else float(v)
                        )
        return values


def with_stored_values(data: bytes, sheet_titles: list[str]) -> bytes | None:
    """``data`` (a saved xlsx) with every formula's value stored; None when LibreOffice is not installed."""
    if find_soffice() is None:
        return None
    values = recalculated(data, sheet_titles)
    return _store(data, sheet_titles, values)
