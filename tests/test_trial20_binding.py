"""Trial 20 F6: with two targets the plan says which one sets the fleet (the replicas each alone needs), and where
prompts' prefill stalls the decodes so that TPOT needs many times TTFT's fleet, says so with the levers."""

from __future__ import annotations

import json
import math

from cli_support import run

from planner.serving.fleet import PREFILL_STALL_FACTOR, binding_target, fewest_replicas
from planner.serving.load import Replica

ARGS = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "32k", "--gpus", "1", "--rate", "2")
LONG = ("--prompt-tokens", "16000", "--output-tokens", "100", "--ttft-target", "10s", "--tpot-target", "15ms")


def test_each_target_alone_is_sized_as_fewest_replicas_sizes_it():
    r = Replica("H100", "llama3.1-8b", 1)
    b = binding_target(r, 16000, 100, 2.0, ttft_target_s=10.0, tpot_target_s=0.015)
    both = fewest_replicas(r, 16000, 100, 2.0, ttft_target_s=10.0, tpot_target_s=0.015).replicas
    assert b.ttft_alone == fewest_replicas(r, 16000, 100, 2.0, ttft_target_s=10.0).replicas
    assert b.tpot_alone == fewest_replicas(r, 16000, 100, 2.0, tpot_target_s=0.015).replicas
    assert both >= max(b.ttft_alone, b.tpot_alone) and b.binding == "TPOT"
    assert b.tpot_alone >= PREFILL_STALL_FACTOR * b.ttft_alone and b.prefill_stalls
    assert binding_target(r, 16000, 100, 2.0, ttft_target_s=10.0, tpot_target_s=math.inf) is None


def test_plan_names_the_binding_target_and_the_levers():
    result = run(*ARGS, *LONG)
    assert result.exit_code == 0, result.output
    assert "binding target: p95 TPOT (" in result.stdout and "p95 TTFT alone: " in result.stdout
    assert "prompts stall decodes: TPOT alone needs" in result.stdout
    assert "disaggregated prefill on separate replicas (not modelled)" in result.stdout
    got = json.loads(run(*ARGS, *LONG, "--json").stdout)["under_load"]["binding_target"]
    assert got["binding"] == "TPOT" and got["prefill_stalls_decodes"] is True
    assert got["tpot_alone_replicas"] >= PREFILL_STALL_FACTOR * got["ttft_alone_replicas"]
    one = json.loads(
        run(*ARGS, "--prompt-tokens", "800", "--output-tokens", "200", "--ttft-target", "1s", "--json").stdout
    )
    assert one["under_load"]["binding_target"] is None  # one target: nothing to compare
