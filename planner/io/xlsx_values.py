"""Cached values in a saved xlsx: each formula cell keeps its formula and gets the value readers show.

openpyxl writes a formula cell as ``<c r="B5" s="3"><f>...</f><v />``: Excel recalculates it on open, but
previews, mail clients and pandas show the empty ``<v />``. ``store_values`` fills it: a number as is, text with
``t="str"``, TRUE/FALSE with ``t="b"``, an Excel error (``#N/A``, ``#NUM!`` ...) with ``t="e"``.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
from xml.sax.saxutils import escape

from planner.io.safetext import cell_text

#: The error values a cell can hold (ECMA-376 Part 1, 18.18.31 ST_CellErrorValue; LibreOffice adds none in xlsx).
EXCEL_ERRORS = frozenset({"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA"})

#: A formula cell without a value: ``<c r="B5" s="3"><f>...</f><v />`` (or ``<v></v>``); the formula element may
#: carry attributes (an array formula's ``<f t="array" ref="E2:E7">``).
_CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f((?: [^>]*)?)>(.*?)</f>(?:<v\s*/>|<v></v>)')


def unfilled_formula_cells(xml: str) -> set[str]:
    """The coordinates of a sheet part's formula cells without a value: the cells ``store_values`` fills."""
    return {m.group(1) for m in _CELL.finditer(xml)}


def _fill(xml: str, cached: dict[str, float | str | bool]) -> str:
    def sub(m: re.Match) -> str:
        coord, attrs, f_attrs, formula = m.group(1, 2, 3, 4)
        if coord not in cached:
            return m.group(0)
        value = cached[coord]
        attrs = re.sub(r'\st="[^"]*"', "", attrs)  # the cell's type follows its value
        f = f"<f{f_attrs}>{formula}</f>"
        if isinstance(value, bool):
            return f'<c r="{coord}"{attrs} t="b">{f}<v>{int(value)}</v>'
        if isinstance(value, float) and not math.isfinite(value):
            value = "#NUM!"  # xlsx has no NaN or infinity
        if isinstance(value, str) and value in EXCEL_ERRORS:
            return f'<c r="{coord}"{attrs} t="e">{f}<v>{value}</v>'
        if isinstance(value, str):
            return f'<c r="{coord}"{attrs} t="str">{f}<v>{escape(cell_text(value))}</v>'
        return f'<c r="{coord}"{attrs}>{f}<v>{float(value)!r}</v>'

    return _CELL.sub(sub, xml)


def store_values(
    parts: dict[str, bytes], sheet_titles: list[str], values: dict[tuple[str, str], float | str | bool]
) -> dict[str, bytes]:
    """The saved workbook's parts with each formula's value from ``values`` ((sheet title, coordinate) -> value)
    filled in; sheets are xl/worksheets/sheet1.xml, ... in the order of ``sheet_titles`` (openpyxl's)."""
    out = dict(parts)
    for i, title in enumerate(sheet_titles, start=1):
        name = f"xl/worksheets/sheet{i}.xml"
        cached = {coord: v for (t, coord), v in values.items() if t == title}
        if cached and name in out:
            out[name] = _fill(out[name].decode("utf-8"), cached).encode("utf-8")
    return out


def with_stored_values(
    data: bytes, sheet_titles: list[str], values: dict[tuple[str, str], float | str | bool]
) -> bytes:
    """A saved workbook (xlsx bytes) with ``store_values`` applied to its parts, rezipped in the same order."""
    with zipfile.ZipFile(io.BytesIO(data)) as src:
        infos = src.infolist()
        parts = store_values({i.filename: src.read(i.filename) for i in infos}, sheet_titles, values)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in infos:
            dst.writestr(info, parts[info.filename])
    return out.getvalue()
