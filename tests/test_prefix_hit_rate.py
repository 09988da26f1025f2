"""A prefix cache hit the user states (issue 22: "prefix caching, hit rate as an input"): ``workload.prefix_hit_rate``
in a scenario and ``planner plan --prefix-hit-rate``, beside a named dataset's own shared prefix
(tests/test_load_datasets.py). The simulation computes only the uncached share of each prompt
(``planner.serving.simulate.RunBehaviour.cached_fraction``; tests/test_load.py pins that)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import one_line, run

from planner.export.inputs import read_scenario

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "budget-review.toml"
PLAN = ["plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8", "--gpus", "4",
        "--rate", "20", "--prompt-tokens", "1600", "--output-tokens", "400"]  # fmt: skip


def _scenario(tmp_path, **workload) -> Path:
    """examples/budget-review.toml with ``workload``'s fields added to [workload] (and its lengths replaced when a
    dataset gives them)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    if "dataset" in workload:
        for line in ("prompt_tokens_mean = 800", "prompt_tokens_high = 3000", "output_tokens_mean = 400"):
            text = text.replace(line + "\n", "")
    given = "".join(f"{k} = {json.dumps(v)}\n" for k, v in workload.items())
    if "dataset" in workload:
        text = text.replace("output_tokens_high = 1200\n", given)
    else:
        text = text.replace("output_tokens_high = 1200\n", "output_tokens_high = 1200\n" + given)
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return path


class TestScenarioField:
    def test_default_is_no_hit_and_a_share_is_kept(self, tmp_path):
        assert read_scenario(EXAMPLE).workload.prefix_hit_rate == 0.0
        assert read_scenario(_scenario(tmp_path, prefix_hit_rate=0.25)).workload.prefix_hit_rate == 0.25

    def test_a_dataset_without_a_shared_prefix_takes_the_share_given(self, tmp_path):
        path = _scenario(tmp_path, dataset="sharegpt", prompt_tokens_high=1000, output_tokens_high=1200,
                         prefix_hit_rate=0.3)  # fmt: skip
        assert read_scenario(path).workload.prefix_hit_rate == 0.3

    @pytest.mark.parametrize(
        ("workload", "message"),
        [
            ({"prefix_hit_rate": 1.0}, "workload.prefix_hit_rate: must be at least 0 and below 1"),
            ({"prefix_hit_rate": -0.1}, "workload.prefix_hit_rate: must be at least 0 and below 1"),
            (
                {"dataset": "sonnet", "prefix_hit_rate": 0.5},
                "dataset 'sonnet' sets prefix_hit_rate from its shared prefix of 200 tokens; leave it out",
            ),
            (
                {"prefix_hit_rate": 0.5, "sizing": "littles-law"},
                'prefix_hit_rate needs sizing = "simulated" (Little\'s law charges every prompt its whole prefill)',
            ),
        ],
    )
    def test_refusals_in_one_line(self, tmp_path, workload, message):
        line = one_line(run("export", str(_scenario(tmp_path, **workload)), "-o", str(tmp_path / "r.md")), 2)
        assert message in line


class TestExport:
    def test_a_cached_system_prompt_needs_fewer_gpus_and_the_review_says_so(self, tmp_path):
        """Half of each 800-token prompt cached (a 400-token system prompt): the README example's recommended fleet
        needs fewer replicas than without (8 serving against 9 since s189, 40 H100s either way in 8-GPU nodes; s182: 48 -> 40
        H100s), and the review's assumptions state the share."""
        # at the mean lengths, as docs/export.md's figures are (the spread's draws would move the group chosen)
        (tmp_path / "plain").mkdir()
        base = read_scenario(_scenario(tmp_path / "plain", sizing_lengths="means"))
        cached_path = _scenario(tmp_path, prefix_hit_rate=0.5, sizing_lengths="means")
        out = tmp_path / "review.md"
        result = run("export", str(cached_path), "-o", str(out), "--date", "2026-12-01", "-q")
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert "| Prefix cache hit (as given) | 50% | share |" in text
        from planner.catalog import default_catalog
        from planner.export.evaluate import evaluate

        def fleet(scenario) -> tuple[int, int]:  # the README's recommended option, "H100, bought": serving, GPUs
            option = next(o for o in scenario.option if o.name == "H100, bought")
            r = evaluate(option, scenario.workload, default_catalog(), scenario.traffic_change)
            return int(r.fleet.replicas_needed) - option.spare_replicas, int(r.fleet.gpus)

        (cached, gpus), (plain, plain_gpus) = fleet(read_scenario(cached_path)), fleet(base)
        assert cached < plain and gpus <= plain_gpus
        from doc_support import stated

        said = stated(
            "docs/export.md",
            r"the README example at 0\.5: (\d+) serving replicas against (\d+), (\d+) H100s either way",
        )
        assert said == (cached, plain, gpus) and gpus == plain_gpus


class TestPlan:
    def test_the_share_is_simulated_and_said(self):
        """The same traffic with half of each prompt cached: a line says so, and the simulated p50 TTFT of one
        replica at the whole rate is lower (less of each prompt computed)."""
        plain = run(*PLAN, "--json")
        cached = run(*PLAN, "--prefix-hit-rate", "0.5", "--json")
        assert plain.exit_code == 0 and cached.exit_code == 0, cached.output
        a, b = json.loads(plain.output)["under_load"], json.loads(cached.output)["under_load"]
        assert (a["prefix_hit_rate"], b["prefix_hit_rate"]) == (0.0, 0.5)
        assert b["ttft_s"]["p50"] < a["ttft_s"]["p50"]
        text = run(*PLAN, "--prefix-hit-rate", "0.5").output
        assert "  prefix cache: 50.0% of each prompt cached, not computed again (as given)\n" in text

    def test_refusals(self):
        no_rate = one_line(run(*PLAN[:11], "--prefix-hit-rate", "0.5"), 2)
        assert no_rate.endswith("--prefix-hit-rate shapes the traffic under load; give --rate with it")
        sonnet = [*PLAN[:13], "--dataset", "sonnet", "--prefix-hit-rate", "0.5"]
        assert "leave out --prefix-hit-rate" in one_line(run(*sonnet), 2)
        percent = run(*PLAN, "--prefix-hit-rate", "25%")
        assert percent.exit_code == 2 and "(a percentage: write the fraction, 0.25)" in percent.output


class TestLaws:
    def test_more_of_each_prompt_cached_never_slows_the_first_token_nor_needs_more_replicas(self):
        """Over hits 0, 0.25, 0.5 and 0.75 of 1,600-token prompts on one H100 (Llama-3.1-8B): at 8 requests/s the
        simulated p50 and p95 TTFT fall (s182: p95 107, 84, 66, 52 ms), and at 30 requests/s the replicas for a p95 TTFT
        of 80 ms never grow and fall overall (s182: 14, 5, 3, 2)."""
        from planner.serving.fleet import load_percentile, replicas_needed

        hits = [0.0, 0.25, 0.5, 0.75]
        args = ("H100", "llama3.1-8b", 8.0, 1600, 200)
        for q in (50, 95):
            ttft = [load_percentile(*args, metric="ttft", percentile=q, prefix_hit_rate=h) for h in hits]
            assert ttft == sorted(ttft, reverse=True) and ttft[-1] < ttft[0], q
        busy = ("H100", "llama3.1-8b", 30.0, 1600, 200)
        replicas = [replicas_needed(*busy, ttft_target_s=0.08, prefix_hit_rate=h) for h in hits]
        assert replicas == sorted(replicas, reverse=True) and replicas[-1] < replicas[0]
