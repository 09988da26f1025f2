"""Fixtures shared by several test modules, built once per pytest process (each xdist worker is one process).

``whatif_cli_workbook``: ``planner workbook`` as a user runs it (with LibreOffice installed it recalculates the
workbook and stores the values), one build shared by test_stored_values, test_workbook_values and
test_export_workbook; they share the xdist group ``workbook_support.WHATIF_CLI_GROUP``, so one worker builds it once. Tests that
change the file copy it first.

``held_out_time_checks``: bench/heldout.py's time checks over the published rows the fit never saw (the held-out
table; each row predicted, serving runs simulated step by step), read by test_heldout and test_published_names,
which run in the xdist group "test_heldout", so one worker computes it once.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.testing import CliRunner


@pytest.fixture(scope="session")
def whatif_cli_workbook(tmp_path_factory) -> tuple[Path, str]:
    """``planner workbook -o DIR``: the written file and what the command printed. Copy the file to change it."""
    from planner.cli import main

    out = tmp_path_factory.mktemp("whatif-cli")
    r = CliRunner().invoke(main, ["workbook", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return out / "capacity-what-if.xlsx", r.output


@pytest.fixture(scope="session")
def held_out_time_checks() -> list[dict]:
    """``bench/heldout.py``'s ``time_checks`` of the rows whose source is not in FIT_SOURCE_GROUPS (read only)."""
    from planner.accuracy import predict as acc
    from planner.accuracy.fit import held_out_rows

    spec = importlib.util.spec_from_file_location("heldout", Path(__file__).parents[1] / "bench" / "heldout.py")
    heldout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heldout)
    return heldout.time_checks(held_out_rows(acc.load_decode_rows()))


@pytest.fixture(scope="session")
def readme_example_review():
    """The README's budget review (examples/budget-review.toml at test_export.DATE), built once per worker: read by
    test_export_review and test_export_print, which share the xdist group "test_export_review" so that one worker
    builds it (its sizing simulates every option's fleet, ~7 s CPU). A frozen Review: read it, do not change it."""
    from test_export import DATE, EXAMPLE

    from planner.catalog import default_catalog
    from planner.export.review import build_review
    from planner.export.scenario import load_scenario

    return build_review(load_scenario(EXAMPLE), default_catalog(), source="budget-review.toml", date=DATE)


@pytest.fixture(scope="session")
def readme_means_review():
    """The README's budget review sized with every simulated request at the mean lengths (``sizing_lengths =
    "means"``, the default before s206): the case whose fleet has a slow end that meets the targets, on which the
    slow-end search, the headroom words and the printed layout were specified. Same date and group as
    ``readme_example_review``; frozen."""
    from test_export import DATE, EXAMPLE

    from planner.catalog import default_catalog
    from planner.export.review import build_review
    from planner.export.scenario import load_scenario

    scenario = load_scenario(EXAMPLE)
    means = scenario.model_copy(update={"workload": scenario.workload.model_copy(update={"sizing_lengths": "means"})})
    return build_review(means, default_catalog(), source="budget-review.toml", date=DATE)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Keep ``--dist loadgroup`` grouping under pytest >= 9.2: pytest-xdist (3.8) names a grouped test's worker by
    writing ``item._nodeid = "<id>@<group>"``, but pytest 9.2 reads ``nodeid`` from ``item._id`` (a NodeId), so the
    suffix is lost, every group is spread over both workers and each rebuilds its module fixtures (CI on 2026-12-01:
    the what-if parity books recalculated four times instead of twice). Copy the suffix into ``_id``."""
    for item in items:
        wanted = getattr(item, "_nodeid", None)
        if isinstance(wanted, str) and "@" in wanted and item.nodeid != wanted and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # pytest >= 9.2 only (older releases read _nodeid themselves)

            item._id = NodeId.parse(wanted)
