"""Named datasets as traffic (issue 22, item 1): a dataset's shared prefix sets the prefix-cache hit, a client's
uniform default is drawn request by request, and `planner plan --dataset` sizes a fleet on them (planner.serving.load
``dataset_load``, ``shared_prefix_hit_rate``)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from cli_support import one_line, run

from planner.accuracy.datasets import prefix_hit
from planner.accuracy.published import load_decode_rows, range_ratio_of
from planner.serving.benchmark import request_lengths
from planner.serving.fleet import fewest_replicas
from planner.serving.load import (
    NoPublishedLengthError,
    Replica,
    dataset_load,
    latency_under_load,
    shared_prefix_hit_rate,
)

PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1")


class TestSharedPrefix:
    def test_sonnet_caches_its_200_token_prefix_in_whole_blocks_after_the_first_request(self):
        """vLLM SonnetDataset.sample (vllm/benchmarks/datasets/sonnet.py, commit 237145e): every prompt opens with the
        same chat template, base prompt and poem lines, prefix_len 200 of input_len 550 tokens; vLLM caches full
        16-token blocks only: 192 of 550 tokens, for 999 of 1,000 requests."""
        assert shared_prefix_hit_rate("sonnet", 550, 1000) == pytest.approx(192 / 550 * 999 / 1000, rel=1e-12)
        assert dataset_load("sonnet").prefix_hit_rate == pytest.approx(192 / 550 * 0.999, rel=1e-12)

    def test_a_token_by_token_cache_holds_the_whole_prefix(self):
        """SGLang's radix cache matches token by token (block 1): 200 of 550."""
        assert shared_prefix_hit_rate("sonnet", 550, 1000, block_tokens=1) == pytest.approx(200 / 550 * 0.999)

    def test_generated_shared_prefix_computes_each_groups_prefix_once(self):
        """SGLang bench_serving (commit 0033168): 64 groups, each a 2,048-token system prompt before a 128-token
        question: 2,048 of 2,176 tokens cached for all but 64 of 1,024 requests."""
        assert shared_prefix_hit_rate("gsp", 2176, 1024) == pytest.approx(2048 / 2176 * 960 / 1024, rel=1e-12)

    def test_a_dataset_without_a_shared_prefix_caches_nothing(self):
        assert shared_prefix_hit_rate("sharegpt", 161, 1000) == 0.0
        assert dataset_load("random").prefix_hit_rate == 0.0

    def test_a_single_request_finds_nothing_cached(self):
        """The first request of a group computes its prefix."""
        assert shared_prefix_hit_rate("sonnet", 550, 1) == 0.0

    def test_the_hit_shortens_the_simulated_first_token(self):
        """The same 1,000 sonnet requests at 10/s: with the prefix cached, each prefill computes 358 of 550 tokens,
        so the median TTFT is shorter (nothing else differs)."""
        one = Replica("H100", "llama3.1-8b", gpus=1, frontend_s=0.0)
        t = dataset_load("sonnet")
        cold, warm = (
            latency_under_load(one, 550, 150, rate_per_s=10, lengths=t.lengths, prefix_hit_rate=h)
            for h in (0.0, t.prefix_hit_rate)
        )
        assert warm.ttft_s.p50 < cold.ttft_s.p50
        assert warm.tpot_s.p50 == pytest.approx(cold.tpot_s.p50, rel=0.05)


class TestUniformDraw:
    def test_sglangs_random_is_drawn_per_request_with_mean_512_5(self):
        """sglang.bench_serving's random dataset (--random-input-len 1024, --random-range-ratio 0.0): uniform integers
        1..1,024, mean 512.5, standard deviation sqrt((1024^2 - 1) / 12) = 295.6; 1,000 requests at the fixed seed
        land within 3 standard errors (28.0 tokens) of it, and span nearly the whole range."""
        t = dataset_load("random", 1000, client="sglang")
        drawn = np.array(t.lengths)
        se = math.sqrt((1024**2 - 1) / 12) / math.sqrt(1000)
        assert abs(t.prompt_mean_tokens - 512.5) < 3 * se and abs(t.output_mean_tokens - 512.5) < 3 * se
        assert drawn.min() >= 1 and drawn.max() <= 1024 and len(set(drawn[:, 0])) > 400
        assert t.longest_tokens == int(drawn.sum(axis=1).max())

    def test_a_published_sglang_random_run_without_a_ratio_is_drawn_uniformly(self, tmp_path):
        """A row naming sglang.bench_serving's random dataset and no --random-range-ratio is read at the client's
        default (0.0), so its requests are drawn as the client drew them (1..1,024, the tops set by the row's means),
        not all at the mean; vLLM's random is fixed lengths (no ratio); a stated ratio wins."""
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,dataset,batch_size_or_concurrency,num_prompts,"
            "request_rate,input_len,output_len,statistic,ttft_median_ms,source\n"
            "r1,serving_rate,SGLang,H100,1,llama3.1-8b,random (python -m sglang.bench_serving),,1000,2,,,median,50,x\n"
        )
        (row,) = load_decode_rows(path)
        assert (row.input_len, row.output_len, row.length_range_ratio) == (512, 512, 0.0)
        drawn = np.array(request_lengths(row.input_len, row.output_len, 1000, row.length_range_ratio))
        assert (drawn.min(), drawn.max()) == (1, 1024)
        sglang = {"dataset": "random", "batching": "python -m sglang.bench_serving --backend sglang"}
        assert range_ratio_of(sglang) == 0.0
        assert range_ratio_of({"dataset": "random", "batching": "vllm bench serve"}) is None
        assert range_ratio_of(sglang | {"dataset": "random --random-range-ratio 0.5"}) == 0.5
        assert range_ratio_of({"dataset": "sharegpt", "batching": "python -m sglang.bench_serving"}) is None


class TestPublishedRowsWithASharedPrefix:
    def test_a_sonnet_run_is_simulated_with_its_prefix_cached(self, tmp_path):
        """A serving row naming sonnet, 1,000 prompts of 550 tokens: 192 / 550 x 999 / 1,000 of each prompt cached."""
        path = tmp_path / "runs.csv"
        path.write_text(
            "record_id,kind,engine,gpu,tensor_parallel_size,model,dataset,batch_size_or_concurrency,num_prompts,"
            "request_rate,input_len,output_len,statistic,ttft_median_ms,source\n"
            "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sonnet,,1000,2,,,median,50,x\n"
            "r2,serving_rate,vLLM,H100,1,llama3.1-8b,sharegpt,,1000,2,,,median,50,x\n"
        )
        rows = load_decode_rows(path)
        assert prefix_hit(rows[0]) == pytest.approx(192 / 550 * 0.999, rel=1e-12)
        assert prefix_hit(rows[1]) == 0.0


class TestRefused:
    @pytest.mark.parametrize(("name", "missing"), [("openorca", ["prompt"]), ("cnn_dailymail", ["prompt", "output"])])
    def test_a_dataset_without_a_published_mean_is_refused_naming_what_is_missing(self, name, missing):
        """MLPerf publishes OpenOrca's output mean (294.45) but no prompt mean, CNN/DailyMail's limits only."""
        with pytest.raises(NoPublishedLengthError, match=f"publishes no mean {' or '.join(missing)} length") as err:
            dataset_load(name)
        assert err.value.missing == missing


class TestFleet:
    def test_a_fleet_sized_on_a_datasets_requests_reads_them_and_its_hit(self):
        """fewest_replicas given the lengths and hit serves exactly that run: its sized result is
        latency_under_load's at rate / replicas with the same requests."""
        one = Replica("H100", "llama3.1-8b", gpus=1)
        t = dataset_load("sonnet")
        s = fewest_replicas(
            one, t.prompt_mean_tokens, t.output_mean_tokens, 30, ttft_target_s=0.2,
            lengths=t.lengths, prefix_hit_rate=t.prefix_hit_rate,
        )  # fmt: skip
        again = latency_under_load(
            one, t.prompt_mean_tokens, t.output_mean_tokens, rate_per_s=30 / s.replicas, lengths=t.lengths,
            prefix_hit_rate=t.prefix_hit_rate,
        )  # fmt: skip
        assert s.result == again and s.result.ttft_s.p95 <= 0.2


class TestPlanCli:
    def test_plan_takes_a_dataset_and_says_which(self):
        """`plan --dataset sonnet`: vLLM's sonnet defaults (550 / 150), 34.9% of each prompt cached, the source named."""
        result = run(*PLAN, "--rate", "10", "--dataset", "sonnet", "--ttft-target", "0.5", "--json")
        assert result.exit_code == 0, result.output
        d = json.loads(result.stdout)["under_load"]["dataset"]
        got = (d["name"], d["client"], d["prompt_mean_tokens"], d["output_mean_tokens"])
        assert got == ("sonnet", "vllm", 550, 150)
        assert d["prefix_hit_rate"] == pytest.approx(192 / 550 * 0.999) and "SonnetDataset" in d["source"]
        text = run(*PLAN, "--rate", "10", "--dataset", "sonnet", "--ttft-target", "0.5").stdout
        assert "of 550-token prompts and 150-token outputs" in text
        assert "dataset sonnet as vllm bench serve sends it; 34.9% of each prompt cached" in text

    def test_without_a_dataset_the_json_says_none(self):
        result = run(*PLAN, "--rate", "10", "--prompt-tokens", "550", "--output-tokens", "150", "--json")
        assert json.loads(result.stdout)["under_load"]["dataset"] is None

    @pytest.mark.parametrize("given", [("--prompt-tokens", "500"), ("--output-tokens", "100")])
    def test_a_dataset_with_lengths_is_refused(self, given):
        line = one_line(run(*PLAN, "--rate", "10", "--dataset", "sonnet", *given), 2)
        assert line.endswith("give either --dataset or --prompt-tokens and --output-tokens, not both")

    def test_a_dataset_without_a_rate_is_refused(self):
        assert "--dataset is the traffic's lengths under load; give --rate with it" in one_line(
            run(*PLAN, "--dataset", "sonnet"), 2
        )

    @pytest.mark.parametrize(("name", "what"), [("openorca", "prompt"), ("cnndm", "prompt or output")])
    def test_a_dataset_without_published_means_says_what_to_give(self, name, what):
        line = one_line(run(*PLAN, "--rate", "10", "--dataset", name), 2)
        assert f"publishes no mean {what} length" in line
        assert line.endswith("give --prompt-tokens and --output-tokens instead of --dataset")

    def test_a_misspelt_dataset_gets_the_closest_name(self):
        assert "did you mean sonnet?" in one_line(run(*PLAN, "--rate", "10", "--dataset", "sonet"), 2)

    def test_a_dataset_longer_than_the_context_is_refused(self):
        """generated-shared-prefix: 2,176 + 256 = 2,432 tokens a request."""
        line = one_line(run(*PLAN[:-4], "--context", "2048", "--rate", "1", "--dataset", "gsp"), 2)
        assert "more than --context 2,048; give --context 2,432 or more (recorded requests are" in line


class TestDocs:
    def test_docs_state_the_sonnet_hit_the_code_gives(self):
        """docs/model.md's prefix-cache paragraph: sonnet 192 / 550 x 999 / 1,000 = 34.9%."""
        from doc_support import stated

        said = stated("docs/model.md", r"sonnet .*? ([\d,]+) / ([\d,]+) x ([\d,]+) / ([\d,]+) = ([\d.]+)% at 1,000")
        assert said[:4] == (192, 550, 999, 1000)
        assert float(said[4]) == pytest.approx(dataset_load("sonnet").prefix_hit_rate * 100, abs=0.05)


def _scenario(tmp_path, **workload):
    """examples/budget-review.toml with its four length fields replaced by ``workload``'s."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "examples" / "budget-review.toml").read_text(encoding="utf-8")
    for line in ("prompt_tokens_mean = 800", "prompt_tokens_high = 3000", "output_tokens_mean = 400"):
        text = text.replace(line + "\n", "")
    given = "".join(f"{k} = {json.dumps(v)}\n" for k, v in workload.items())
    text = text.replace("output_tokens_high = 1200\n", given)
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    return path


class TestExportScenario:
    def test_a_dataset_gives_the_workloads_lengths_and_its_prefix_hit(self, tmp_path):
        """workload.dataset = "sonnet": every request 550 / 150 (vLLM SonnetDataset's defaults), so the means and the
        high lengths alike; 192 / 550 x 999 / 1,000 of each prompt cached."""
        from planner.export.inputs import read_scenario

        w = read_scenario(_scenario(tmp_path, dataset="sonnet")).workload
        got = (w.prompt_tokens_mean, w.prompt_tokens_high, w.output_tokens_mean, w.output_tokens_high)
        assert got == (550, 550, 150, 150)
        assert w.prefix_hit_rate == pytest.approx(192 / 550 * 0.999)

    def test_a_dataset_of_means_takes_the_high_lengths_given(self, tmp_path):
        """ShareGPT's means, those of the shipped sample plan sends request by request (213.3 / 212.0; the SOSP 2023
        paper's OPT-tokenizer 161.31 / 337.99 until trial 20), the high lengths as given."""
        from planner.export.inputs import read_scenario

        path = _scenario(tmp_path, dataset="sharegpt", prompt_tokens_high=1000, output_tokens_high=1200)
        w = read_scenario(path).workload
        assert (w.prompt_tokens_mean, w.output_tokens_mean, w.prompt_tokens_high, w.prefix_hit_rate) == (
            213,
            212,
            1000,
            0.0,
        )

    @pytest.mark.parametrize(
        ("workload", "message"),
        [
            (
                {"dataset": "openorca"},
                "dataset 'openorca' publishes no mean prompt length; give prompt_tokens_mean, prompt_tokens_high, "
                "output_tokens_mean and output_tokens_high instead of dataset",
            ),
            ({"dataset": "sonnet", "prompt_tokens_mean": 500}, "dataset 'sonnet' gives the mean lengths; leave out "),
            ({"dataset": "sharegpt"}, "publishes its means only; give prompt_tokens_high and output_tokens_high"),
            ({"dataset": "sonnet", "output_tokens_high": 300}, "sends every request alike (150 tokens); leave out "),
            ({"dataset": "sonet"}, "did you mean sonnet?"),
        ],
    )
    def test_export_refuses_a_dataset_it_cannot_use_in_one_line(self, tmp_path, workload, message):
        path = _scenario(tmp_path, **workload)
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.md")), 2)
        assert message in line

    def test_a_misspelt_dataset_names_its_own_line(self, tmp_path):
        """The refusal points at the line that sets ``dataset`` (the one to edit), not at the [workload] header
        (s96 found "(line 2)" for a dataset written further down)."""
        path = _scenario(tmp_path, dataset="sonet")
        number = next(
            i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if t.startswith("dataset")
        )
        line = one_line(run("export", str(path), "-o", str(tmp_path / "r.md")), 2)
        assert line.endswith(f"(line {number})") and number > 2

    def test_the_review_says_which_datasets_statistics_it_used(self, tmp_path):
        """The review's assumptions name the dataset, its client and source, and the prefix hit."""
        path = _scenario(tmp_path, dataset="sonnet")
        out = tmp_path / "review.md"
        result = run("export", str(path), "-o", str(out), "--date", "2026-12-01", "-q")
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert "| Lengths from dataset sonnet (as vllm bench serve sends it) | sonnet |  | vLLM " in text
        assert "SonnetDataset" in text and "| Prefix cache hit (the dataset's shared prefix) | 35% | share |" in text
