"""Options shared by several commands."""

from __future__ import annotations

from pathlib import Path

import click

from planner.catalog import Catalog, default_catalog


def catalog_option(f):
    """``--catalog DIR`` (repeatable): user folders that extend or override the shipped catalog."""
    return click.option(
        "--catalog",
        "catalog_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Folder of your own catalog TOML files (extends/overrides the shipped one; also $PLANNER_CATALOG).",
    )(f)


def load(catalog_dirs: tuple[Path, ...]) -> Catalog:
    return default_catalog(*catalog_dirs)
