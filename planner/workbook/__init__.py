"""What-if workbooks: a pure description of the sheets (``build``), an openpyxl writer, ``refresh`` for a user's
copy, and ``read_inputs`` for other commands (``planner export``).

    from planner.workbook import read_inputs
    read_inputs("workbooks/capacity-what-if.xlsx")   # {"gpu": "H100 SXM 80GB", "model": "Llama-2-70B", ...}

May import ``planner`` (its version), ``planner.api``, ``planner.deploy`` (an engine's sequence limit, as plan's),
``planner.serving``, ``planner.accuracy`` (calibration and
ranges), ``planner.engines``, ``planner.catalog``, ``planner.io``, ``planner.errors``, ``planner.units`` (a price's
bound), ``planner.report`` (the plan ``planner plan`` prints: the DP attention + EP lever's figures are its) and the
review's sizing rules (``planner.export``: the in-flight context and a replica's load figures, shared with the budget
review, and its printed pages' titles and quality line).
"""

from planner.workbook.reader import WorkbookError, read_inputs

__all__ = ["WorkbookError", "build_whatif", "generate", "read_inputs", "refresh", "write_workbook"]


def __getattr__(name):  # the builder and writer import openpyxl and the model: load them on first use
    if name in ("build_whatif",):
        from planner.workbook.build import build_whatif

        return build_whatif
    if name in ("write_workbook",):
        from planner.workbook.writer import write_workbook

        return write_workbook
    if name in ("refresh", "generate"):
        from planner.workbook import update

        return getattr(update, name)
    raise AttributeError(name)
