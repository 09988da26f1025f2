"""Excel's latency targets are read as ``planner plan --ttft-target`` / ``--tpot-target`` and a scenario read them.

A user trial (s195): REPLICAS took a TTFT target of 1500 (1,500 ms typed into a seconds argument, beside TTFT_P95
cells that return milliseconds) as 1,500 seconds and answered 7 with PLANNER_WHY "ok", where plan refuses
``--ttft-target 1500`` as milliseconds typed as seconds; "800 ms", which plan takes, was #VALUE!. The same rule now
holds in the cell (``planner.units.parse_seconds``: bare numbers above 60 s for TTFT and 1 s for TPOT refused,
``BARE_TTFT_MAX_S`` / ``BARE_TPOT_MAX_S``; text carries its unit).
"""

from __future__ import annotations

from cli_support import run

from planner.excel import functions as xf

ARGS = ("H100", "llama3.1-70b", 60, 800, 400)


def test_a_target_in_milliseconds_typed_as_seconds_is_num_with_plans_reason():
    assert xf.REPLICAS(*ARGS, 1500, 0.05, None, 4, "fp8") == "#NUM!"
    assert xf.FLEET_GPUS(*ARGS, 1.5, 50, None, "fp8") == "#NUM!"
    why = xf.PLANNER_WHY("REPLICAS", *ARGS, 1500, 0.05, None, 4, "fp8")
    assert "1500 seconds looks like milliseconds typed as seconds" in why
    plan = run(
        "plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "1200", "-w", "fp8", "--gpus", "4",
        "--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1500",
    )  # fmt: skip
    assert plan.exit_code == 2 and "1500 seconds looks like milliseconds typed as seconds" in plan.output


def test_a_target_with_its_unit_is_read_as_plan_reads_it():
    """ "1500 ms" and "50 ms" are 1.5 s and 0.05 s: the same replicas as the numbers in seconds."""
    assert xf.REPLICAS(*ARGS, "1500 ms", "50 ms", None, 4, "fp8") == xf.REPLICAS(*ARGS, 1.5, 0.05, None, 4, "fp8")


def test_a_large_target_written_with_its_unit_stands_as_in_plan():
    """ "600 s" is taken as written (plan takes --ttft-target "600 s" too), where a bare 600 is refused; text that
    is no duration is #VALUE!."""
    assert xf.REPLICAS(*ARGS, "600 s", None, None, 4, "fp8") == xf.REPLICAS(*ARGS, 59.0, None, None, 4, "fp8")
    assert xf.REPLICAS(*ARGS, 600, None, None, 4, "fp8") == "#NUM!"
    assert xf.REPLICAS(*ARGS, "soon", None, None, 4, "fp8") == "#VALUE!"


def test_a_percentile_given_as_a_fraction_is_named_as_the_percentile_it_stands_for():
    """A trial typed 0.95 for the 95th percentile: refused as before (the simulation reports 50, 90, 95 and 99), now
    with the percentile it stands for."""
    assert xf.REPLICAS(*ARGS, 1.5, 0.05, 0.95, 4, "fp8") == "#NUM!"
    why = xf.PLANNER_WHY("REPLICAS", *ARGS, 1.5, 0.05, 0.95, 4, "fp8")
    assert "percentile 0.95 is not reported; use one of (50, 90, 95, 99) (a percentile, not a fraction: 95" in why
