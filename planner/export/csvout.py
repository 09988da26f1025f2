"""The options table as CSV, safe to open in a spreadsheet (formula injection neutralized)."""

from __future__ import annotations

import csv
import io
import math

from planner.export.records import Review
from planner.export.tables import options_table

#: A text cell starting with one of these would run as a formula in Excel, LibreOffice or Google Sheets
#: (OWASP "CSV injection"); tab and carriage return are included because some programs strip them first.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralize(text: str) -> str:
    """A text cell that cannot start a formula: a leading ', which spreadsheets show as text, is added when needed."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _value(v, kind: str):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if kind == "text":
        return neutralize(str(v))
    if kind in ("usd2",):
        return f"{v:.4f}"
    if kind in ("usd",):
        return f"{v:.2f}"
    if kind in ("pct",):
        return f"{v:.4f}"
    if kind in ("ms", "s", "x"):
        return f"{v:.4g}"
    return str(int(v))


def render_csv(review: Review) -> str:
    """Header row of machine names (units in them), one row per option; plain numbers, no currency signs."""
    table = options_table(review)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([c.key for c in table.columns])
    for row in table.rows:
        writer.writerow([_value(v, c.kind) for v, c in zip(row, table.columns, strict=True)])
    return buf.getvalue()
