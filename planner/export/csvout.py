"""The options table as CSV, safe to open in a spreadsheet with any separator (formula injection neutralized)."""

from __future__ import annotations

import csv
import io
import math

from planner.export.records import Review
from planner.export.tables import options_table
from planner.io.safetext import csv_text


def neutralize(text: str) -> str:
    """A text cell that starts no formula whatever separator the spreadsheet uses (planner.io.safetext.csv_text)."""
    return csv_text(text)


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
