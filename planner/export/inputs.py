"""What ``planner export`` reads: a scenario TOML file (or, once it exists, a what-if workbook)."""

from __future__ import annotations

from pathlib import Path

from planner.catalog import Catalog
from planner.export.scenario import Scenario, ScenarioError, load_scenario
from planner.io.libreoffice import save_as_xlsx_hint

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")


def read_scenario(path: Path, catalog: Catalog | None = None) -> Scenario:
    """A Scenario from a .toml file or a `planner workbook` .xlsx (its names checked against ``catalog``, default the
    shipped one); anything else is a one-line ScenarioError."""
    path = Path(path)
    if path.suffix.lower() in WORKBOOK_SUFFIXES:
        from planner.export.workbook_input import scenario_from_workbook

        return scenario_from_workbook(path, catalog)
    if path.suffix.lower() != ".toml":
        raise ScenarioError(
            f"{path}: not a scenario; give a .toml scenario file or an .xlsx made by `planner workbook`"
            + save_as_xlsx_hint(path.suffix)
        )
    return load_scenario(path)
