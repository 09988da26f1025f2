"""The review as PDF: the xlsx, converted by LibreOffice (one page wide per sheet)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from planner.export.records import Review
from planner.export.xlsx import render_xlsx
from planner.io.libreoffice import convert


def render_pdf(review: Review) -> bytes:
    """PDF bytes; raises LibreOfficeError with the install hint when LibreOffice is missing."""
    with tempfile.TemporaryDirectory(prefix="planner-pdf-") as tmp:
        src = Path(tmp) / "review.xlsx"
        src.write_bytes(render_xlsx(review))
        return convert(src, "pdf", Path(tmp) / "out")[0].read_bytes()
