"""A fifth user trial's findings (s197, a capacity planner's), each checked against the value it should have."""

from __future__ import annotations

import numpy as np
from cli_support import run

from planner.excel.support import BEFORE_MARGIN_NOTE
from planner.serving.fleet import GUESS_EVERY_UP_TO, MAX_REPLICAS, replica_counts_to_guess


class TestNoGroupLosesForTheSearchLimit:
    def test_a_fleet_past_4096_replicas_is_sized_on_its_cheapest_group(self):
        """Llama 3.1 8B on H100 at 100,000 requests/s of 1,000 / 300 tokens: a one-GPU replica takes ~22 requests/s
        within the targets (the trial: 3,973 replicas at 90,000), so ~4,500 one-GPU replicas; the search stopped at
        4,096 and sized 2-GPU replicas instead (2,836 x 2 = 5,672 GPUs), "1 -> none meets"."""
        result = run(
            "plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "2048", "--rate", "100000",
            "--prompt-tokens", "1000", "--output-tokens", "300", "--ttft-target", "0.5", "--tpot-target", "0.03",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        line = next(x for x in result.stdout.splitlines() if x.strip().startswith("replicas ("))
        replicas = int(line.split(": ", 1)[1].split(" x ")[0].replace(",", ""))
        assert " x 1 x H100" in line and 4096 < replicas < 5672

    def test_the_first_guess_is_every_count_then_one_percent_apart(self):
        ks = replica_counts_to_guess(MAX_REPLICAS)
        assert ks[:GUESS_EVERY_UP_TO].tolist() == list(range(1, GUESS_EVERY_UP_TO + 1))
        above = ks[GUESS_EVERY_UP_TO - 1 :]
        assert ks[-1] == MAX_REPLICAS and np.all(np.diff(ks) > 0) and np.all(above[1:] / above[:-1] < 1.011)
        assert len(ks) < 2 * GUESS_EVERY_UP_TO


class TestATtftTargetAtOnePromptsOwnTime:
    ARGS = (
        "plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8", "--gpus", "4",
        "--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400",
    )  # fmt: skip

    def test_the_fleet_it_needs_is_flagged_as_set_by_the_target(self):
        """One 800-token prompt on a nearly idle 4 x H100 replica: median TTFT 86 ms (64 ms prefill + the 22 ms front
        end), so a 100 ms target keeps 3,568 replicas at 0.017 requests/s each (the trial's 14,272 GPUs, printed
        with no word); the plan now says the target sets the fleet."""
        result = run(*self.ARGS, "--ttft-target", "0.1")
        assert result.exit_code == 0, result.output
        assert "warning: the TTFT target (100 ms) is close to what a request takes on a nearly idle replica" in (
            result.stdout
        )

    def test_a_target_with_room_for_queueing_is_not(self):
        """docs/excel.md's REPLICAS example: 1.5 s for the same replica, 7 replicas; no such warning."""
        result = run(*self.ARGS, "--ttft-target", "1.5", "--tpot-target", "0.05")
        assert result.exit_code == 0 and "nearly idle replica" not in result.stdout


class TestOneTokenOutputsInAReview:
    def test_the_fleet_is_simulated_on_ttft_alone_and_says_so(self):
        """A classifier's one-token answers (10 requests/s of 1,000-token prompts): the simulation has no TPOT, so
        the review fell back to Little's law with a warning to leave the TPOT target out, which the scenario then
        refused as missing. Now the TPOT target is not applied under load, and the option says so."""
        from planner.catalog import default_catalog
        from planner.export.evaluate import ONE_TOKEN_NOTE, evaluate
        from planner.export.scenario import parse_scenario

        workload = {
            "peak_requests_per_s": 10, "average_requests_per_s": 5, "prompt_tokens_mean": 1000,
            "prompt_tokens_high": 3000, "output_tokens_mean": 1, "output_tokens_high": 1, "ttft_target_s": 2,
            "tpot_target_s": 0.05,
        }  # fmt: skip
        option = {"name": "H100", "gpu": "H100", "model": "llama3.1-8b"}
        scenario = parse_scenario({"workload": workload, "option": [option]}, "s.toml")
        r = evaluate(scenario.option[0], scenario.workload, default_catalog(), scenario.traffic_change)
        assert r.under_load is not None and not any("Little's law" in w for w in r.warnings)
        assert f"H100: {ONE_TOKEN_NOTE}" in r.warnings
        assert r.under_load.result.ttft_s.at(95) <= 2.0


def test_a_pipeline_no_searched_group_splits_into_asks_for_the_gpu_count():
    """pp3 without --gpus: the groups tried (1, 2, 4, ... 64) hold no multiple of 3, and the refusal read "do not
    fit on 0 x H100 ... ()" with exit 1, though Llama 3.1 8B fits one H100 (`--gpus 3 --parallelism pp3` runs)."""
    from cli_support import one_line

    base = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--parallelism", "pp3")
    line = one_line(run(*base), 2)
    assert "pp3 runs 3 pipeline stages, each a tensor-parallel group, so its group is 3, 6, 12, ... GPUs" in line
    assert run(*base, "--gpus", "3").exit_code == 0


def test_a_group_within_an_nvl72_racks_nvlink_domain_is_not_warned_as_spanning_nodes():
    """catalogs/gpus.toml: GB200 NVL72's interconnect_domain_gpus is 72 (one NVLink domain per rack), so 16 GPUs
    are one domain; the warning said "more than one 8-GPU node". An H100's domain is 8: warned as before."""
    base = ("plan", "--model", "deepseek-v3", "--context", "8192", "--gpus", "16")
    assert "8-GPU node" not in run(*base, "--gpu", "GB200").stdout
    assert "16 GPUs is more than one 8-GPU node" in run(*base, "--gpu", "H100").stdout


def test_the_risk_sentence_says_what_its_range_rests_on():
    """The README review's H100 range is -8% / -1% from 7 dense-model runs of two sources, TPOT only (its
    Assumptions row); the Summary's risk sentence said "on 80% of its benchmark rows", and applied it to TTFT
    unsaid."""
    from planner.export.reason import range_basis

    note = (
        "from 7 dense-model runs on H100 SXM 80GB + vLLM (held-out TPOT at steady load; sources: "
        "gpustack-performance-lab sglang-v0.3.0-vs-vllm-v0.6.0): -8% / -1%"
    )
    assert range_basis(note) == (
        "7 dense-model runs on H100 SXM 80GB + vLLM (held-out TPOT at steady load, 2 sources; TTFT's margin borrowed "
        "from TPOT)"
    )
    from planner.accuracy.ranges import TimeRange
    from planner.accuracy.serving_margin import margin_range

    thin = margin_range(TimeRange(-0.1, 0.1, "p"), "H100 SXM 80GB", "vllm", "dense").note  # trial 20, F1
    assert range_basis(thin) == (
        "7 dense-model runs on H100 SXM 80GB + vLLM (held-out TPOT at steady load, 2 sources: widened to vLLM dense on "
        "every GPU, 21 runs from 5 sources; TTFT's margin borrowed from TPOT)"
    )
    h200 = (
        "held-out residuals of 10 published figures on H200 SXM 141GB (sources: trtllm-blog-h200-launch "
        "vllm-buildkite-perf); widened to hold the errors of 21 dense-model runs on any GPU + vLLM (A100 SXM 40GB 3; "
        "none on H200 SXM 141GB; held-out TPOT at steady load; sources: a b)"
    )  # the README review's H200 row (trial 7 F10: it still read "its benchmark rows")
    assert range_basis(h200) == (
        "10 published figures on H200 SXM 141GB (2 sources), widened to hold 21 dense-model runs on any GPU + vLLM "
        "(TTFT's margin borrowed from TPOT)"
    )
    assert range_basis("a calibration file's own range") == "its benchmark rows"


def test_a_tpot_target_only_speculation_meets_is_sized_not_refused():
    """Qwen3-8B fp8 on one H100, 40 requests/s of 233 / 221 tokens, TPOT 4 ms: a decode step alone takes 5.3 ms, so
    the review refused every option before simulating ("no option meets 4 ms"), where `plan --rate` with 3 draft
    tokens accepting 2.7 sizes one GPU (p95 TPOT 3.5 ms). The closed form now prices the speculative step."""
    from planner.catalog import default_catalog
    from planner.export.evaluate import evaluate
    from planner.export.scenario import parse_scenario

    workload = {
        "peak_requests_per_s": 40, "average_requests_per_s": 40, "prompt_tokens_mean": 233, "prompt_tokens_high": 233,
        "output_tokens_mean": 221, "output_tokens_high": 221, "ttft_target_s": "100 ms", "tpot_target_s": "4 ms",
        "latency_margin": 0,
    }  # fmt: skip
    defaults = {"model": "qwen3-8b", "gpu": "H100", "weight_precision": "fp8", "gpus_per_replica": 1}
    options = [{"name": "spec", "speculative_tokens": 3, "acceptance_length": 2.7}, {"name": "nospec"}]
    s = parse_scenario({"workload": workload, "defaults": defaults, "option": options}, "s.toml")
    spec, plain = (evaluate(o, s.workload, default_catalog(), s.traffic_change) for o in s.option)
    assert spec.meets and spec.under_load is not None
    assert spec.under_load.result.tpot_s.at(95) <= 0.004
    assert not plain.meets and "> target 4.0 ms" in plain.shortfall


def test_plan_names_the_weights_as_stored_where_the_engine_loads_them_padded():
    """gpt-oss-120b: WEIGHT_BYTES 65.25 GB (the checkpoint: MXFP4 experts), plan's "whole model" 69.32 GB (vLLM pads
    the experts' hidden size to 256: docs/model.md, "Weights loaded"), each unexplained beside the other; a model
    loaded as stored shows one figure. (65.19 and 69.25 GB before the experts' biases were counted at bf16, as the
    checkpoint stores them, not at MXFP4's width: tests/test_trial11_formulas.py.)"""
    import planner

    stored = planner.weight_bytes("gpt-oss-120b")
    assert round(stored / 1e9, 2) == 65.25
    out = run("plan", "--gpu", "H100", "--model", "gpt-oss-120b", "--context", "8192").stdout
    assert "(whole model 69.32 GB as loaded; 65.25 GB as stored, what WEIGHT_BYTES gives)" in out
    dense = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192").stdout
    assert "(whole model 16.06 GB)" in dense


def test_planner_why_of_replicas_says_the_target_sets_the_fleet_as_plan_does():
    """Trial 7 F4: plan and export warned of a TTFT target at a nearly idle replica's own time, and PLANNER_WHY of the
    same REPLICAS (3,568 replicas of 4 x H100 in the trial) said a bare "ok". docs/excel.md's REPLICAS example (1.5 s
    / 50 ms, 7 replicas) stays "ok". The fleet is plan --rate's for the same inputs: 4,099 replicas now (3,446 before
    the per-layer overhead was refitted to 15.7 us; the target is 86% of a nearly idle replica's median TTFT, so a
    slightly slower step grows the fleet steeply, as the warning says)."""
    import json

    import planner.excel.functions as xf

    near = ("H100", "llama3.1-70b", 60, 800, 400, 0.1, None, None, 4, "fp8")
    plan = run(*TestATtftTargetAtOnePromptsOwnTime.ARGS, "--ttft-target", "0.1", "--json")
    assert plan.exit_code == 0, plan.output
    assert xf.REPLICAS(*near) == json.loads(plan.stdout)["under_load"]["replicas"] == 4099
    assert xf.PLANNER_WHY("REPLICAS", *near).startswith(
        "ok; warning: the TTFT target (100 ms) is close to what a request takes on a nearly idle replica"
    )
    roomy = ("H100", "llama3.1-70b", 60, 800, 400, 1.5, 0.05, None, 4, "fp8")
    assert xf.REPLICAS(*roomy) == 7 and xf.PLANNER_WHY("REPLICAS", *roomy) == f"ok; {BEFORE_MARGIN_NOTE}"  # trial 30 F4
