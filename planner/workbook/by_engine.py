"""One sheet for every engine a workbook offers: the cells that differ between engines follow the one chosen on Inputs.

A sheet built from an engine profile (the GPUs sheet's kernel factors, the Precisions sheet's KV-cache list, the Ranges
sheet's engine, the Explain sheet's worked numbers) is built once per engine offered (``layout.WORKBOOK_ENGINES``, the
Assumptions sheet's engine columns), and ``merged`` keeps one sheet: a cell equal for every engine as it is, one that
differs as ``CHOOSE(eng_index, <engine 1's>, <engine 2's>, ...)``, ``eng_index`` being the Assumptions cell that holds
the column of the engine chosen on Inputs (``layout.ENGINE_INDEX``). Text too long for a formula's literal (Excel takes
255 characters in one) goes in folded columns at the right of the sheet, one per engine, and the cell reads the chosen
one with INDEX. The numbers are planner's for each engine, not a formula restated: the chosen engine's are shown.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
from openpyxl.utils import column_index_from_string, get_column_letter

from planner.workbook.layout import ENGINE_INDEX
from planner.workbook.spec import Cell, Sheet

#: The longest text literal a formula takes (Excel: 255 characters in one string constant).
LITERAL_CHARS = 255
#: The longest formula written (Excel: 8,192 characters), with room to spare.
FORMULA_CHARS = 8000


def literal(value: Any) -> str:
    """A cell's value as an expression inside a formula: a number in positional notation (no exponent: read alike by
    Excel and LibreOffice), TRUE() / FALSE(), text quoted ("" doubled), a formula's body in brackets, blank as ""."""
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "TRUE()" if value else "FALSE()"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "NA()"
        return np.format_float_positional(value, trim="-") if isinstance(value, float) else str(value)
    text = str(value)
    if text.startswith("="):
        return f"({text[1:]})"
    quoted = text.replace('"', '""')
    return '"' + '"&"'.join(quoted[i : i + LITERAL_CHARS] for i in range(0, len(quoted), LITERAL_CHARS)) + '"'


def choose(values: list[Any]) -> Any:
    """One cell's value for every engine: the value where they agree, else the CHOOSE formula over them."""
    if all(v == values[0] and type(v) is type(values[0]) for v in values[1:]):
        return values[0]
    return f"=CHOOSE({ENGINE_INDEX},{','.join(literal(v) for v in values)})"


def merged(sheets: list[Sheet], variant_col: str | None = None) -> Sheet:
    """The first of ``sheets`` (one per engine, in the Assumptions sheet's engine-column order), each cell that differs
    between them following the chosen engine (module docstring). ``variant_col``: the first of the folded columns that
    hold a long text's variants (one per engine); without it a long text is a chunked literal. The sheets must share
    their layout (a cell of one engine's is the same quantity in the others')."""
    out = copy.deepcopy(sheets[0])
    if len(sheets) == 1:
        return out
    refs = dict.fromkeys(ref for s in sheets for ref in s.cells)
    for ref in refs:
        cells = [s.cells.get(ref) for s in sheets]
        values = [None if c is None else c.value for c in cells]
        value = choose(values)
        if value is values[0] and ref in out.cells:
            continue
        first = next(c for c in cells if c is not None)
        long = any(isinstance(v, str) and len(v) > LITERAL_CHARS for v in values)
        if long and variant_col is not None:
            value = _variants(out, ref, values, variant_col)
        elif isinstance(value, str) and len(value) > FORMULA_CHARS:
            raise ValueError(f"{out.name}!{ref}: the engines' values make a formula of {len(value):,} characters")
        else:
            _tall_enough(out, ref, first.style, values)
        out.cells[ref] = Cell(value, first.fmt, first.style, first.comment, text=False)
    return out


def _tall_enough(s: Sheet, ref: str, style: str | None, values: list[Any]) -> None:
    """``ref``'s row as tall as the longest of ``values`` wrapped in its column (or its merged columns) needs: the
    writer measures text, not a formula's result."""
    from openpyxl.utils.cell import range_boundaries

    from planner.workbook.writer import WRAPPED, text_height

    texts = [v for v in values if isinstance(v, str) and not v.startswith("=")]
    if style not in WRAPPED or not texts:
        return
    col = "".join(ch for ch in ref if ch.isalpha())
    row = int(ref[len(col) :])
    cols = [column_index_from_string(col)]
    for rng in s.merges:
        c0, r0, c1, _ = range_boundaries(rng)
        if r0 == row and c0 == cols[0]:
            cols = list(range(c0, c1 + 1))
    width = sum(s.widths.get(get_column_letter(c), 9) for c in cols)
    heights = [text_height(t, style, width) or 0 for t in texts]
    s.heights[row] = max([s.heights.get(row, 0), *heights])


def _variants(s: Sheet, ref: str, values: list[Any], variant_col: str) -> str:
    """``ref``'s engines' values in folded columns from ``variant_col`` on its row, and the formula reading the chosen
    one; the row as tall as the longest value wrapped in ``ref``'s column (a formula's text is not measured)."""
    from planner.workbook.writer import WRAPPED, text_height

    col = "".join(ch for ch in ref if ch.isalpha())
    row = int(ref[len(col) :])
    start = column_index_from_string(variant_col)
    for j, v in enumerate(values):
        letter = get_column_letter(start + j)
        s.cells[f"{letter}{row}"] = Cell(v, text=isinstance(v, str))
        if letter not in s.folded:
            s.folded.append(letter)
    style = s.cells[ref].style if ref in s.cells else None
    if style in WRAPPED:
        width = s.widths.get(col, 9)
        heights = [text_height(v, style, width) or 0 for v in values if isinstance(v, str)]
        s.heights[row] = max([s.heights.get(row, 0), *heights])
    first, last = variant_col, get_column_letter(start + len(values) - 1)
    return f"=INDEX(${first}${row}:${last}${row},{ENGINE_INDEX})"
