"""A what-if workbook made by ``planner workbook``, read back as a one-option scenario.

The workbook describes one deployment (GPU, model, context, precisions, GPU count, engine (the Inputs' Engine),
memory utilization, price) and the budget question its Levers and Load sheets size a fleet for (peak traffic, output
and prompt tokens per request, TPOT and TTFT targets, each optional). The review asks the same question: the traffic
and targets typed there, every request of the workbook's fixed lengths (output tokens; the prompt tokens, blank:
context - output, as the Load sheet sends them), p95 targets. What the workbook leaves blank, and the average
traffic it does not hold, take the stated defaults, printed on the review's Assumptions sheet ("workbook"). Reading
is done by ``planner.workbook.read_all_inputs`` (defusedxml, marker check): a file it did not make is refused with
one line.

The mapping, input by input, is stated once in ``planner.export.workbook_scenario``'s docstring.
"""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog, default_catalog
from planner.export.scenario import MAX_GPUS_PER_REPLICA, Scenario, ScenarioError, parse_scenario
from planner.export.workbook_scenario import (  # noqa: F401 - read from here by the CLI and the tests
    WORKBOOK_AVERAGE_SHARE,
    WORKBOOK_ORIGIN,
    WORKBOOK_WORKLOAD,
    workbook_scenario_data,
)


def scenario_from_workbook(path: Path, catalog: Catalog | None = None) -> Scenario:
    """Read the workbook's inputs (refusing files ``planner workbook`` did not make, and a name its formulas do not
    look up: they show #N/A) and map them to a Scenario."""
    try:
        from planner.workbook.reader import load, read_all_inputs
        from planner.workbook.update import check_listed_names
    except ImportError:  # pragma: no cover - the workbook package ships with planner
        raise ScenarioError(
            f"{path}: reading what-if workbooks needs planner.workbook, which is not installed"
        ) from None
    bounds = {
        "gpus": (MAX_GPUS_PER_REPLICA, f"; a budget review sizes replicas of at most {MAX_GPUS_PER_REPLICA} GPUs")
    }
    wb = load(path)
    inputs = read_all_inputs(path, wb=wb, bounds=bounds)
    check_listed_names(wb, Path(path), catalog if catalog is not None else default_catalog())
    return parse_scenario(workbook_scenario_data(inputs, Path(path).name), str(path))
