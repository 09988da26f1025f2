"""``planner plan --rate`` without ``--gpus`` sizes the fleet on the GPU group needing the fewest GPUs in all.

It used to size the smallest group that holds the model: Llama 3.1 70B in fp8 on 1 x H100, whose KV cache holds one
4,096-token sequence, so 60 requests/s of 800 / 400 tokens took 413 x 1 H100 where 11 x 2 = 22 meet the same p95
targets (``planner export`` already tried each group). Now each group of ``planner.deploy.groups_to_try`` from the
smallest is sized (``planner.serving.fleet.fewest_gpus``); the fewest GPUs wins, the smaller group on a tie. Each
expected count is REPLICAS' own for that group (the same search, ``fewest_replicas``), so the test checks the choice,
not the simulation's numbers. A MoE model's other layouts on the chosen group are sized for the same targets too.
"""

from __future__ import annotations

import json
import math

import pytest
from cli_support import run

from planner import api
from planner.errors import OutOfRangeError
from planner.excel import functions as xf
from planner.serving import fleet
from planner.serving.load import Replica

FP8_70B = ("--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8")
LOAD = ("--rate", "60", "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5",
        "--tpot-target", "0.05")  # fmt: skip


def replicas(gpus: int) -> int:
    """REPLICAS for the same load on ``gpus`` per replica."""
    return int(xf.REPLICAS("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, gpus, "fp8"))


@pytest.fixture(scope="module")
def chosen() -> dict:
    out = run("plan", *FP8_70B, *LOAD, "--json")
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


class TestPlanRateChoosesTheGroup:
    def test_each_group_from_the_smallest_is_sized_as_replicas_sizes_it(self, chosen):
        tried = {t["gpus_per_replica"]: t for t in chosen["under_load"]["groups_tried"]}
        assert list(tried) == [1, 2, 4, 8]  # groups_to_try: 1, 2, 4, 8 (Llama 3.1 70B: 64 heads, 8 KV heads)
        for n, t in tried.items():
            if t["replicas"] is not None:
                assert t["replicas"] == replicas(n) and t["gpus"] == replicas(n) * n

    def test_the_fleet_is_the_one_needing_fewest_gpus(self, chosen):
        u = chosen["under_load"]
        sized = [t for t in u["groups_tried"] if t["gpus"] is not None]
        best = min(sized, key=lambda t: (t["gpus"], t["gpus_per_replica"]))
        assert [t["gpus_per_replica"] for t in u["groups_tried"] if t["chosen"]] == [best["gpus_per_replica"]]
        assert chosen["gpus"] == best["gpus_per_replica"]  # the plan above the fleet is the chosen group's
        assert u["gpus"] == best["gpus"] == u["replicas"] * chosen["gpus"]
        # far fewer than the smallest group's 414 x 1 (tests/test_replicas_group_and_capacity.py; 413 before the
        # per-layer overhead was refitted to 15.7 us)
        assert replicas(1) == 414 and u["gpus"] < 414 / 4

    def test_the_text_names_each_group_and_how_to_fix_one(self):
        out = run("plan", *FP8_70B, *LOAD)
        assert out.exit_code == 0, out.output
        k1, k2 = replicas(1), replicas(2)
        assert (
            f"group: 2 GPUs per replica, the fewest GPUs of the groups tried (1 -> {k1} x 1 = {k1} GPUs; " in out.output
        )
        assert f"2 -> {k2} x 2 = {k2 * 2} GPUs" in out.output and "--gpus fixes the group" in out.output
        assert f"replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): {k2} x 2 x H100 SXM 80GB" in out.output
        assert out.output.startswith("Llama-3.1-70B on 2 x H100 SXM 80GB")

    def test_given_gpus_size_that_group_only(self):
        out = run("plan", *FP8_70B, *LOAD, "--gpus", "4", "--json")
        assert out.exit_code == 0, out.output
        u = json.loads(out.output)["under_load"]
        assert [t["gpus_per_replica"] for t in u["groups_tried"]] == [4] and u["replicas"] == replicas(4)
        assert "group:" not in run("plan", *FP8_70B, *LOAD, "--gpus", "4").output


class TestFewestGpus:
    """``fleet.fewest_gpus`` on hand-made groups (the replicas' own searches are REPLICAS')."""

    def test_a_group_at_least_the_best_total_is_not_sized(self, monkeypatch):
        counts = {1: 3, 2: 1, 4: 1}
        seen = []

        def fake(replica, *args, **kwargs):
            seen.append(replica)
            return fleet.Sizing(counts[replica], 1.0, None, 95.0, math.inf, math.inf)

        monkeypatch.setattr(fleet, "fewest_replicas", fake)
        choice = fleet.fewest_gpus({1: 1, 2: 2, 4: 4}, 800, 400, 10.0)
        assert choice.gpus_per_replica == 2 and choice.sizing.replicas == 1  # 1 x 2 = 2 GPUs against 3 x 1
        assert seen == [1, 2]  # 4 GPUs a replica cannot beat 2 in all
        assert [t.gpus for t in choice.tried] == [3, 2, 0] and choice.tried[2].reason.startswith("not tried")

    def test_a_tie_keeps_the_smaller_group(self, monkeypatch):
        monkeypatch.setattr(
            fleet, "fewest_replicas", lambda r, *a, **k: fleet.Sizing({1: 4, 2: 2}[r], 1.0, None, 95.0, 1.0, 1.0)
        )
        assert fleet.fewest_gpus({2: 2, 1: 1}, 800, 400, 10.0).gpus_per_replica == 1

    def test_no_group_meeting_names_each_groups_reason(self):
        """A 1 ms TTFT is below an idle replica's of both groups: one sentence naming each group's idle TTFT and
        the lowest (trial 15, F6: it was each group's "no fleet of up to 262,144 replicas" after "meets them")."""
        reps = {n: Replica("H100", "llama3.1-70b", n, weight_precision="fp8") for n in (2, 4)}
        with pytest.raises(OutOfRangeError) as err:
            fleet.fewest_gpus(reps, 800, 400, 1.0, ttft_target_s=0.001)
        assert str(err.value).startswith(
            "p95 TTFT target 1 ms is below one request's own TTFT on an idle replica of every group tried (2 and 4 x "
            "H100: "
        )
        assert "no number of replicas meets it; the lowest reachable is" in str(err.value)
        assert "them" not in str(err.value)

    def test_groups_failing_for_other_reasons_are_each_named(self, monkeypatch):
        """No target every group's idle replica misses: "no group of GPUs tried (...) meets the targets: " and each
        group's own refusal (a stand-in fewest_replicas here: the reasons are the groups')."""

        def refuse(r, *a, **k):
            raise fleet.NoFleetMeetsError(f"reason {r}")

        monkeypatch.setattr(fleet, "fewest_replicas", refuse)
        with pytest.raises(OutOfRangeError) as err:
            fleet.fewest_gpus({1: 1, 2: 2, 4: 4}, 800, 400, 10.0)
        assert str(err.value) == (
            "no group of GPUs tried (1, 2 and 4 GPUs a replica) meets the targets: 1 per replica: reason 1; 2 per "
            "replica: reason 2; 4 per replica: reason 4"
        )


def test_export_and_plan_try_the_same_groups():
    """``groups_to_try``: the GPU_GROUPS up to 8 (one node) the engine splits the model over; Qwen2-7B's 28 heads
    and 4 KV heads split over 1, 2 and 4 only (``valid_tp_sizes``' docstring)."""
    assert api.groups_to_try("llama3.1-70b") == (1, 2, 4, 8)
    assert api.groups_to_try("llama3.1-70b", max_gpus=4) == (1, 2, 4)
    assert api.groups_to_try("qwen2-7b") == (1, 2, 4)


class TestOtherLayoutsUnderLoad:
    """A MoE model's plan lists its other layouts on the same GPUs (``Plan.alternatives``); under load each is sized
    for the same targets, so data-parallel attention's fleet is compared as the fleet, not only as a max batch:
    DeepSeek-V3 on 8 x H200 at 10 requests/s of 1,000 / 500 tokens needs several tensor-parallel replicas and fewer
    dp-ep ones. Each count is REPLICAS' for that layout (the same search)."""

    ARGS = ("--gpu", "H200", "--model", "deepseek-v3", "--context", "4096", "--rate", "10", "--prompt-tokens",
            "1000", "--output-tokens", "500", "--ttft-target", "2", "--tpot-target", "0.05")  # fmt: skip

    def test_each_other_layout_is_sized_as_replicas_sizes_it(self):
        out = run("plan", *self.ARGS, "--json")
        assert out.exit_code == 0, out.output
        u = json.loads(out.output)["under_load"]
        want = int(xf.REPLICAS("H200", "deepseek-v3", 10.0, 1000.0, 500.0, 2.0, 0.05, None, 8, None, None, "dp-ep"))
        tp = int(xf.REPLICAS("H200", "deepseek-v3", 10.0, 1000.0, 500.0, 2.0, 0.05, None, 8))
        assert u["replicas"] == tp
        assert [(o["parallelism"], o["replicas"], o["gpus"]) for o in u["other_layouts"]] == [("dp-ep", want, want * 8)]
        assert want < tp  # each rank caches its own sequences once (README, "Layouts")

    def test_the_text_gives_the_option_that_runs_it(self):
        out = run("plan", *self.ARGS)
        want = int(xf.REPLICAS("H200", "deepseek-v3", 10.0, 1000.0, 500.0, 2.0, 0.05, None, 8, None, None, "dp-ep"))
        assert (
            f"  same 8 GPUs a replica, data-parallel attention + expert parallel: {want} x 8 = "
            f"{want * 8} GPUs for the same targets (--parallelism dp-ep)"
        ) in out.output

    def test_a_dense_model_has_none(self, chosen):
        assert chosen["under_load"]["other_layouts"] == []


def test_the_readme_states_the_counts_replicas_gives():
    """README's "Tensor parallelism" and "Layouts" bullets quote these fleets; REPLICAS computes them."""
    from doc_support import stated

    k2, total, k1 = stated(
        "README.md", r"fp8 Llama 3\.1 70B at 60 requests/s: (\d+) x 2 H100 = (\d+), where the smallest group, 1 H100 "
        r"holding one sequence, takes (\d+)\)",
    )  # fmt: skip
    assert (k2, total, k1) == (replicas(2), 2 * replicas(2), replicas(1))
    tp, dp = stated("README.md", r"500 tokens: (\d+) tensor-parallel replicas or (\d+) dp-ep\)")
    args = ("H200", "deepseek-v3", 10.0, 1000.0, 500.0, 2.0, 0.05, None, 8)
    assert (tp, dp) == (int(xf.REPLICAS(*args)), int(xf.REPLICAS(*args, None, None, "dp-ep")))


class TestFleetGpusInExcel:
    """FLEET_GPUS: the GPUs `plan --rate` without --gpus sizes, in a cell; PLANNER_WHY names the group and each tried."""

    ARGS = ("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, "fp8")

    def test_it_is_plans_fleet(self, chosen):
        assert xf.FLEET_GPUS(*self.ARGS) == chosen["under_load"]["gpus"] == replicas(2) * 2

    def test_planner_why_names_the_group_and_each_group_tried(self):
        k1, k2, k4 = replicas(1), replicas(2), replicas(4)
        assert xf.PLANNER_WHY("FLEET_GPUS", *self.ARGS).startswith(
            f"ok; {k2} replicas of 2 x H100 SXM 80GB, the fewest GPUs of the groups tried (1 -> {k1}; 2 -> {k2 * 2}; "
            f"4 -> {k4 * 4}; "
        )

    def test_a_range_of_rates_spills_a_fleet_each_and_a_target_none_meets_is_num(self):
        """Without targets each group is sized on capacity (REPLICAS' rule): 600 requests/s of bf16 Llama 3.1 70B
        take 65 x 4 H100 where the smallest group, 2, takes 833 x 2 (tests/test_excel_functions.py's 833)."""
        got = xf.FLEET_GPUS("H100", "llama3.1-70b", [[600.0, 6.0]], 800.0, 400.0)
        four = xf.REPLICAS("H100", "llama3.1-70b", 600.0, 800.0, 400.0, None, None, None, 4)
        assert got[0][0] == min(833 * 2, four * 4) < 833 * 2 and got[0][1] < got[0][0]
        assert xf.FLEET_GPUS(*self.ARGS[:5], 0.001) == "#NUM!"
        assert xf.PLANNER_WHY("FLEET_GPUS", *self.ARGS[:5], 0.001).startswith(
            "p95 TTFT target 1 ms is below one request's own TTFT on an idle replica of every group tried (2, 4 and 8 x"
        )


def test_docs_excel_states_fleet_gpus_as_computed():
    """docs/excel.md's FLEET_GPUS row quotes its example; FLEET_GPUS and REPLICAS compute it."""
    from doc_support import stated

    gpus, k, n, smallest = stated(
        "docs/excel.md",
        r'`=FLEET_GPUS\("H100","llama3\.1-70b",60,800,400,1\.5,0\.05,,"fp8"\)` is (\d+), (\d+) replicas of (\d+) x H100, '
        r"where `REPLICAS` on the smallest group, one H100, is (\d+)",
    )
    assert (gpus, k, n, smallest) == (xf.FLEET_GPUS(*TestFleetGpusInExcel.ARGS), replicas(2), 2, replicas(1))
