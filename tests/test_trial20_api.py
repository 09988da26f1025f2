"""Trial 20 F10: what Python's plan() gives is stated exactly; the under-load figures are one import away; --json
fills capacity_per_s when the fleet is sized on targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

import planner


def test_the_fleet_functions_are_planners_and_plan_takes_no_traffic():
    assert {"replicas_needed", "fleet_gpus_needed", "load_percentile", "replica_capacity_per_s"} <= set(planner.__all__)
    with pytest.raises(TypeError):
        planner.plan("H100", "llama3.1-8b", 4096, rate=10)  # the README now says so
    readme = Path(__file__).parents[1].joinpath("README.md").read_text(encoding="utf-8")
    assert "the fields of `planner plan --json` without `--rate`; it takes no traffic" in readme


def test_json_states_the_capacity_when_sized_on_targets():
    """``"capacity_per_s": null`` when sized on targets, though --replicas printed the capacity (trial 20 F10)."""
    args = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1", "--rate", "10")
    args += ("--prompt-tokens", "800", "--output-tokens", "200", "--ttft-target", "1s", "--json")
    result = run(*args)
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)["under_load"]
    assert got["sized_on"] == "targets"
    assert got["capacity_per_s"] == pytest.approx(
        planner.replica_capacity_per_s("H100", "llama3.1-8b", 800, 200, gpus=1)
    )
