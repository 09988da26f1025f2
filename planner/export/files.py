"""Writing output files: the one write path lives in ``planner.io.files``; these are its names for export."""

from __future__ import annotations

from planner.io.files import check_target, write_atomic, write_file, write_stdout

__all__ = ["check_target", "write_atomic", "write_file", "write_stdout"]
