"""The review as PDF: the xlsx in its printed form (``print_layout``), converted by LibreOffice."""

from __future__ import annotations

from planner.export.records import Review
from planner.export.xlsx import render_print_xlsx
from planner.io.files import private_temp_dir
from planner.io.libreoffice import convert


def render_pdf(review: Review) -> bytes:
    """PDF bytes; raises LibreOfficeError with the install hint when LibreOffice is missing."""
    with private_temp_dir("pdf") as tmp:  # removed on every exit; after a SIGKILL, by the next run
        src = tmp / "review.xlsx"
        src.write_bytes(render_print_xlsx(review))
        return convert(src, "pdf", tmp / "out")[0].read_bytes()
