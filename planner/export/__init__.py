"""``planner export``: a budget review from a scenario, as xlsx, csv, md or pdf.

    review = build_review(load_scenario(path), default_catalog(), source=str(path), date="2026-06-01")
    write_review(review, Path("review.xlsx"), "xlsx", force=False)

``review`` computes (through ``planner.api`` and ``planner.export.sizing``); ``tables`` lays the review out as plain
tables; ``xlsx``, ``csvout``, ``markdown`` and ``pdf`` each render bytes; ``files`` writes them atomically.

May import ``planner`` (its version), ``planner.api``, ``planner.serving``, ``planner.accuracy``,
``planner.engines``, ``planner.catalog``, ``planner.model``, ``planner.io``, ``planner.units``,
``planner.errors`` and the what-if workbook's Inputs reader (``planner.workbook``); nothing of the core imports it.
"""

from __future__ import annotations

from pathlib import Path

from planner.export.files import write_atomic
from planner.export.review import Review, TargetNotMetError, build_review

FORMATS = ("xlsx", "csv", "md", "pdf")


def render(review: Review, fmt: str) -> bytes:
    """The review in one format, as bytes (text formats in UTF-8)."""
    if fmt == "xlsx":
        from planner.export.xlsx import render_xlsx

        return render_xlsx(review)
    if fmt == "csv":
        from planner.export.csvout import render_csv

        return render_csv(review).encode("utf-8")
    if fmt == "md":
        from planner.export.markdown import render_markdown

        return render_markdown(review).encode("utf-8")
    if fmt == "pdf":
        from planner.export.pdf import render_pdf

        return render_pdf(review)
    raise ValueError(f"unknown format {fmt!r}")


def write_review(review: Review, path: Path, fmt: str, *, force: bool = False) -> Path:
    """Render, then write all at once (temp file in the same folder + rename); refuses to overwrite without force."""
    from planner.export.files import check_target

    check_target(path, force)  # before the (slow) rendering
    return write_atomic(path, render(review, fmt), force=force)


__all__ = ["FORMATS", "Review", "TargetNotMetError", "build_review", "render", "write_review"]
