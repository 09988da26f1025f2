"""One source's runs of catalogs/reference/load_public.csv, as the file holds them and as the planner reads them: the
fixtures of the tests that check a source added to the file (tests/test_load_public_*.py)."""

from __future__ import annotations

import csv

from planner.accuracy.published import DecodeRow, load_decode_rows, reference_dir


def raw_rows(group: str) -> list[dict[str, str]]:
    """The cells of ``group``'s rows, as text, in file order."""
    with open(reference_dir() / "load_public.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["source_group"] == group]


def read_rows(group: str) -> list[DecodeRow]:
    """``group``'s rows as ``planner validate`` reads them."""
    return [r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.source_group == group]


def group_fixtures(group: str):
    """Module-scoped fixtures ``raw`` (``raw_rows``) and ``rows`` (``read_rows``) of ``group``, for a test module to
    bind: ``raw, rows = group_fixtures(GROUP)``."""
    import pytest

    @pytest.fixture(scope="module", name="raw")
    def raw() -> list[dict[str, str]]:
        return raw_rows(group)

    @pytest.fixture(scope="module", name="rows")
    def rows() -> list[DecodeRow]:
        return read_rows(group)

    return raw, rows
