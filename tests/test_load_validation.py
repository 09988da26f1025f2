"""`planner validate` reads serving runs as they are published (issue 22, item 4): percentile columns, a run's
fractional mean lengths, a dataset named without lengths; each row simulated under its own load."""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from pathlib import Path

import pytest
from cli_support import run

from planner.accuracy.published import PERCENTILE_COLUMNS, load_decode_rows, reference_dir
from planner.accuracy.under_load import FIGURES, predict_percentiles
from planner.accuracy.validation import to_json, validate_load
from planner.serving.load import DATASETS

HEADER = (
    "record_id,kind,engine,gpu,tensor_parallel_size,model,dataset,batch_size_or_concurrency,num_prompts,"
    "request_rate,input_len,output_len,statistic,ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms,"
    "itl_median_ms,itl_p99_ms,source\n"
)


def _file(tmp_path, *lines: str):
    path = tmp_path / "runs.csv"
    path.write_text(HEADER + "".join(line + "\n" for line in lines))
    return path


class TestReading:
    def test_fractional_mean_lengths_are_read_rounded(self, tmp_path):
        """Serving benchmarks print a dataset's mean lengths (207.5 tokens); main refused them ("input_len '207.5'
        is not a whole number"). They are read rounded to whole tokens."""
        rows = load_decode_rows(
            _file(tmp_path, "r1,serving_rate,vLLM,H100,1,llama3.1-8b,,,100,2,207.5,99.4,,50,90,,,,,x")
        )
        assert (rows[0].input_len, rows[0].output_len, rows[0].problem) == (208, 99, "")

    def test_a_dataset_without_lengths_uses_its_published_means(self, tmp_path):
        """ShareGPT's published means (vLLM paper, SOSP 2023, Fig. 11): 161.31 in, 337.99 out, for a client whose
        sampler is not shipped (SGLang's bench_serving)."""
        rows = load_decode_rows(
            _file(
                tmp_path,
                "r1,serving_rate,SGLang,H100,1,llama3.1-8b,sharegpt (sglang.bench_serving),,100,2,,,,50,,,,,,x",
            )
        )
        assert (rows[0].input_len, rows[0].output_len) == (161, 338)

    def test_vllms_sharegpt_without_lengths_is_its_shipped_sample(self, tmp_path):
        """Trial 24 F3: vLLM's client sends its seed-0 sample (catalogs/reference/sharegpt_vllm_seed0_requests.csv,
        what `planner plan --dataset sharegpt` replays), so a blank-length row takes that sample's means over its
        num_prompts requests, read here from the file itself: 100 prompts 223.98 / 200.44, 1,000 (the 200 cycled)
        213.295 / 211.99; the paper's OPT means (161 / 338) scaled the sample to other lengths."""
        with (reference_dir() / "sharegpt_vllm_seed0_requests.csv").open() as f:
            sample = [(int(r["prompt_tokens"]), int(r["output_tokens"])) for r in csv.DictReader(f)]
        rows = load_decode_rows(
            _file(
                tmp_path,
                "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sharegpt,,100,2,,,,50,,,,,,x",
                "r2,serving_rate,vLLM,H100,1,llama3.1-8b,sharegpt,,1000,2,,,,50,,,,,,x",
            )
        )
        for row, n in zip(rows, (100, 1000), strict=True):
            picked = [sample[i % len(sample)] for i in range(n)]
            means = [sum(x[k] for x in picked) / n for k in (0, 1)]
            assert (row.input_len, row.output_len) == tuple(round(m) for m in means)
        assert [(r.input_len, r.output_len) for r in rows] == [(224, 200), (213, 212)]

    def test_each_named_dataset_gives_its_lengths(self, tmp_path):
        """Sonnet: vLLM SonnetDataset's defaults 550 / 150; random: vLLM RandomDataset's 1024 / 128, SGLang
        bench_serving's 1024 / 1024 at range ratio 0 (uniform 1..1,024, mean 512.5 -> 512 after rounding half to
        even); OpenOrca: MLPerf's 294.45 output tokens a sample and no prompt mean (the row says it is missing)."""
        rows = load_decode_rows(
            _file(
                tmp_path,
                "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sonnet,,100,2,,,,50,,,,,,x",
                "r2,serving_rate,vLLM,H100,1,llama3.1-8b,random,,100,2,,,,50,,,,,,x",
                "r3,serving_rate,SGLang,H100,1,llama3.1-8b,random (python -m sglang.bench_serving),,100,2,,,,50,,,,,,x",
                "r4,serving_rate,vLLM,H100,1,llama3.1-8b,OpenOrca (MLPerf set),,100,2,,,,50,,,,,,x",
            )
        )
        got = [(r.input_len, r.output_len) for r in rows]
        assert got[:3] == [(550, 150), (1024, 128), (512, 512)]
        assert (rows[3].output_len, rows[3].problem) == (
            294,
            "no input_len (the dataset openorca publishes no mean input length here: give the run's own in input_len "
            "and output_len)",
        )

    def test_a_misspelt_dataset_without_lengths_says_the_accepted_names(self, tmp_path):
        rows = load_decode_rows(_file(tmp_path, "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sharegtp,,100,2,,,,50,,,,,,x"))
        assert rows[0].problem.startswith("input_len blank and dataset 'sharegtp' has no published lengths here; ")
        assert "did you mean sharegpt? accepted: sharegpt," in rows[0].problem

    def test_validate_reads_a_named_dataset_and_says_why_a_typo_is_not_predicted(self, tmp_path):
        """`planner validate --decode`: the sonnet row is simulated at 550 / 150 (its configuration says so); the
        misspelt one is listed under "Not predicted" with the closest name; exit 0 (no --check)."""
        path = _file(
            tmp_path,
            "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sharegtp,,100,2,,,,50,90,,,,,x",
            "r2,serving_rate,vLLM,H100,1,llama3.1-8b,sonnet,,100,2,,,,50,90,,,,,x",
        )
        result = run("validate", "--decode", str(path))
        assert result.exit_code == 0, result.output
        assert re.search(r"r2 +TTFT median ms .* 550/150 2 req/s", result.output)
        assert "r1: input_len blank and dataset 'sharegtp' has no published lengths here; did you mean sharegpt?" in (
            result.output
        )

    def test_validate_help_names_every_dataset(self):
        """`planner validate --help` says which datasets stand in for blank lengths: every DATASETS name."""
        text = " ".join(run("validate", "--help").output.split())
        assert all(name in text for name in DATASETS), text

    def test_percentile_columns_are_seconds_inside(self, tmp_path):
        rows = load_decode_rows(
            _file(tmp_path, "r1,serving_rate,vLLM,H100,1,llama3.1-8b,,,100,2,512,128,,50,90,10,12,9,30,x")
        )
        r = rows[0]
        assert (r.ttft_median_s, r.ttft_p99_s, r.tpot_median_s, r.itl_p99_s) == (0.05, 0.09, 0.01, 0.03)

    def test_shipped_percentiles_are_in_their_quotes(self):
        """Every figure of load_public.csv appears in its row's quote (transcribed from the source's table), or, where
        the quote is the source's JSON entry (InferenceX's API, seconds: IXA rows), is its metric in milliseconds to
        two decimals (median_ttft 0.15738408698234707 s -> 157.38 ms)."""
        metric = {c: f"{c.split('_')[1]}_{c.split('_')[0]}" for c in PERCENTILE_COLUMNS}  # ttft_median_ms: median_ttft
        with open(reference_dir() / "load_public.csv", newline="") as f:
            for row in csv.DictReader(f):
                assert row["source"].startswith("https://"), row["record_id"]
                quoted = json.loads(row["quote"])["metrics"] if row["quote"].startswith("{") else None
                for column in PERCENTILE_COLUMNS:
                    if row[column] and quoted is not None:
                        assert row[column] == f"{quoted[metric[column]] * 1e3:.2f}", (row["record_id"], column)
                    elif row[column]:
                        assert row[column] in row["quote"], (row["record_id"], column)


class TestPrediction:
    def test_a_low_rate_run_is_its_prefill(self):
        """LD001 (surajssd/llm-k8s, vLLM 0.8.3, Llama 3.3 70B on 8 x A100 40GB, ShareGPT at 1 request/s): far from
        capacity, the median TTFT is about one prompt's prefill; the source printed 56.37 ms. Within the issue's
        worst-case limit for medians (40%; the operator model of issue 21 predicts 42.4 ms, -25%)."""
        rows = [r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD001"]
        predicted = predict_percentiles(rows[0])
        assert predicted["ttft_median_ms"] == pytest.approx(56.3722, rel=0.40)
        assert set(predicted) == set(FIGURES)

    def test_an_sglang_random_run_is_read_with_its_range_ratio(self):
        """LD022 (datacrunch-research/h200-benchmarks, SGLang on 4 x H200, Llama 3.3 70B, ``--random-input 1024
        --random-output 1024`` with range ratio 0.0 at 1 req/s): sglang.bench_serving draws each length uniform in
        [1, 1024] (152,612 / 300 = 508.7 prompt tokens a request in the run's totals), so the row is read with that
        ratio around its stated means; the median ITL, 13.64 ms published, a decode step of the few requests in
        flight, is within the issue's 40% worst limit for medians (+14%)."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD022")
        assert (row.engine, row.length_range_ratio, row.input_len, row.gpus) == ("sglang", 0.0, 509, 4)
        assert predict_percentiles(row)["itl_median_ms"] == pytest.approx(13.639, rel=0.40)

    def test_readme_and_the_model_doc_state_todays_all_runs_figures(self):
        """README's Accuracy bullet ('p50 TTFT by 24% / 95%, p99 TTFT 32% / 99%, p50 TPOT 10% / 67%') and the 'all'
        line of docs/model.md's loaded-runs table are what ``validate_load`` gives now (bench/load_validation.py's
        last line; rounded as it prints them)."""
        table = validate_load()
        errors: dict[str, list[float]] = {}
        for c in table.checks:
            if not math.isnan(c.error):
                errors.setdefault(c.quantity, []).append(abs(c.error))

        figures = {q: (round(statistics.median(e) * 100), round(max(e) * 100)) for q, e in errors.items()}
        root = Path(__file__).parents[1]
        readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
        m = re.search(r"p50 TTFT by (\d+)% / (\d+)%, p99 TTFT (\d+)% / (\d+)%, p50 TPOT (\d+)% / (\d+)%", readme)
        assert m, "README's Accuracy bullet changed shape; update this test with it"
        stated = tuple(map(int, m.groups()))
        assert stated == (
            *figures["ttft_median_ms"],
            *figures["ttft_p99_ms"],
            *figures["tpot_median_ms"],
        ), "run python bench/load_validation.py and restate README's Accuracy bullet"
        doc = (root / "docs" / "model.md").read_text(encoding="utf-8")
        line = re.search(r"^\| all \| (\d+) \| (.*) \|$", doc, re.M)
        assert line, "docs/model.md's loaded-runs table lost its 'all' line"
        cells = [tuple(map(int, re.findall(r"\d+", c))) for c in line[2].split(" | ")]
        order = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms")
        assert cells == [figures[q] for q in order], "rebuild docs/model.md's table from bench/load_validation.py"

    def test_table_and_json_carry_the_new_quantities(self):
        table = validate_load()
        out = to_json([table])
        quantities = {r["quantity"] for r in out["rows"]}
        assert quantities == {
            "ttft_median_ms",
            "ttft_p99_ms",
            "tpot_median_ms",
            "tpot_p99_ms",
            "itl_median_ms",
            "itl_p99_ms",
        }
        refused = [r for r in out["rows"] if r["predicted"] is None]
        # every figure is predicted but the SGLang cookbook's two runs served with speculative decoding and no public
        # acceptance (SGA001 EAGLE on MI300X, SGA012 MTP on B200): the 14 SGLang EAGLE3 runs too, at their drafts'
        # public acceptance lengths, and DeepSeek-R1 on 4 x B200 (IXA003) at the memory share its command gives SGLang
        assert {r["record_id"] for r in refused} == {"SGA001", "SGA012"}
        # docs/model.md: '91 runs of 6 sources in load_public.csv', '466 of 466 figures are predicted (100%)'
        doc = " ".join((Path(__file__).parents[1] / "docs" / "model.md").read_text(encoding="utf-8").split())
        runs = re.search(r"(\d+) runs of (\d+) sources in `catalogs/reference/load_public\.csv`", doc)
        figures = re.search(r"(\d+) of (\d+) figures are predicted \((\d+)%\)", doc)
        assert runs and figures, "docs/model.md's loaded-runs sentence changed shape; update this test with it"
        rows = load_decode_rows(reference_dir() / "load_public.csv")
        assert (int(runs[1]), int(runs[2])) == (len(rows), len({r.source_group for r in rows}))
        n, predicted = len(out["rows"]), len(out["rows"]) - len(refused)
        assert tuple(map(int, figures.groups())) == (predicted, n, round(predicted / n * 100))

    def test_a_row_that_cannot_run_is_null_with_a_reason(self, tmp_path):
        rows = load_decode_rows(_file(tmp_path, "r1,serving_rate,vLLM,L4,1,llama3.1-405b,,,10,1,512,128,,50,,,,,,x"))
        out = to_json([validate_load(rows)])
        assert out["rows"][0]["predicted"] is None
        assert "do not fit" in out["rows"][0]["reason"]

    def test_an_unknown_kind_is_refused_with_the_accepted_ones(self, tmp_path):
        """A user's own file writes kind "serving"; it was read as its batching cell and this row, with no batching
        cell, as a static batch (s191)."""
        rows = load_decode_rows(_file(tmp_path, "r1,serving,vLLM,H100,1,llama3.1-8b,,16,500,,1024,128,,60,,,,,,x"))
        assert rows[0].problem == (
            "unknown kind 'serving'; did you mean serving_rate, serving_concurrency? (blank: the batching cell says)"
        )

    def test_a_run_that_does_not_say_how_it_sent_its_prompts_is_not_simulated(self, tmp_path):
        """Blank kind and no batching cell: the row reads as a static batch of 16, which has no percentiles under
        load; before s191 it was simulated as its 500 prompts sent at once (TPOT +716% on a 16-in-flight run)."""
        rows = load_decode_rows(_file(tmp_path, "r1,,vLLM,H100,1,llama3.1-8b,,16,500,,1024,128,,60,,,,,,x"))
        out = to_json([validate_load(rows)])
        assert out["rows"][0]["predicted"] is None
        assert out["rows"][0]["reason"].startswith("not a serving run: the kind cell (serving_concurrency, ")


class TestCli:
    def test_validate_a_users_serving_runs(self, tmp_path):
        """`planner validate --decode runs.csv --json` with only percentile columns and mean lengths."""
        path = _file(tmp_path, "r1,serving_rate,vLLM,H100,1,llama3.1-8b,,,200,2,207.5,99.4,,50,90,10,12,9,30,x")
        result = run("validate", "--decode", str(path), "--json")
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)["rows"]
        ttft = [r for r in rows if r["quantity"] == "ttft_p99_ms"]
        assert len(ttft) == 1 and not math.isnan(ttft[0]["predicted"]) and ttft[0]["published"] == 90.0


class TestPrefixCacheReading:
    """A sweep re-sends the same prompts to one server: with prefix caching on, runs after the first find them cached."""

    def test_warm_prompt_keeps_whole_blocks_short_of_the_last_token(self):
        """vLLM V1 ``KVCacheManager.get_computed_blocks``: at most P - 1 tokens hit (the last is recomputed for its
        logits) and only full 16-token blocks are kept: 207 tokens -> 192 cached; 16 -> none; 17 -> 16."""
        from planner.serving.load import warm_prompt_fraction

        assert warm_prompt_fraction(207) == pytest.approx(192 / 207)
        assert warm_prompt_fraction(16) == 0.0
        assert warm_prompt_fraction(17) == pytest.approx(16 / 17)

    def test_prefix_cache_cell(self, tmp_path):
        """ "warm" reads as cached, "cold" or blank as computed; other text is the row's problem, in one line."""
        header = HEADER.replace("dataset,", "dataset,prefix_cache,")
        path = tmp_path / "runs.csv"
        path.write_text(
            header
            + "r1,serving_rate,vLLM,H100,1,llama3.1-8b,,warm,,100,2,207.5,99.4,,50,90,,,,,x\n"
            + "r2,serving_rate,vLLM,H100,1,llama3.1-8b,,,,100,2,207.5,99.4,,50,90,,,,,x\n"
            + "r3,serving_rate,vLLM,H100,1,llama3.1-8b,,hot,,100,2,207.5,99.4,,50,90,,,,,x\n"
        )
        rows = load_decode_rows(path)
        assert [r.prompts_cached for r in rows] == [True, False, False]
        assert rows[2].problem == "prefix_cache 'hot' is not 'warm', 'cold' or 'warm: the first N prompts'"

    def test_a_warm_burst_is_not_a_prefill_queue(self):
        """LD004 (surajssd/llm-k8s, vLLM 0.8.3, 200 ShareGPT prompts at once on 8 x A100 40GB, Llama 3.3 70B, after
        the same prompts at 1, 4 and 16 req/s): its 42.6K prompt tokens need >= 6.0e15 FLOP, 2.4 s at 8 x 312
        TFLOPS, yet the source printed a p99 TTFT of 450.38 ms. Read cold, the simulation queues every prefill (over
        4 s at p99); read warm (vLLM V1 caches prefixes by default), no TTFT is above the published p99."""
        from dataclasses import replace

        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD004")
        assert row.prompts_cached
        warm = predict_percentiles(row)
        cold = predict_percentiles(replace(row, prompts_cached=False))
        assert cold["ttft_p99_ms"] > 4000.0
        assert warm["ttft_p99_ms"] < 450.38


class TestShareGptSample:
    """vLLM's ShareGPT sampler at its default seed sends the same prompts in the same order in every version."""

    def test_the_trace_is_the_sample_other_runs_printed(self):
        """The trace (LambdaLabsML/vllm-benchmark, vLLM 0.5.4, 320 prompts, Llama 3.1 tokenizer): its first 300 add up
        to 62,238 tokens, the total the H200 report (vLLM 0.14.1, 300 prompts) prints; its first 200 to 42,659,
        213.3 a prompt, the mean of surajssd/llm-k8s's run JSON (vLLM 0.8.3, 200 prompts: 213)."""
        from planner.accuracy.under_load import sharegpt_seed0_prompts

        trace = sharegpt_seed0_prompts()
        assert len(trace) == 320
        assert sum(trace[:300]) == 62238
        assert sum(trace[:200]) == 42659

    def test_a_run_is_read_as_the_sample_only_when_its_mean_matches(self, tmp_path):
        """A ShareGPT row of 300 prompts at 207.46 tokens is the sample (each prompt its own length, 4 to 933 tokens);
        at 161 tokens (the vLLM paper's mean, another sampler) it is not, and is simulated at its mean."""
        from planner.accuracy.under_load import sharegpt_prompts

        rows = load_decode_rows(
            _file(
                tmp_path,
                "r1,serving_rate,vLLM,H100,1,llama3.1-8b,sharegpt,,300,2,207.46,198,,50,,,,,,x",
                "r2,serving_rate,vLLM,H100,1,llama3.1-8b,sharegpt,,300,2,161,198,,50,,,,,,x",
            )
        )
        sample = sharegpt_prompts(rows[0], 300)
        assert sample is not None and (min(sample), max(sample), len(sample)) == (4, 933, 300)
        assert sharegpt_prompts(rows[1], 300) is None

    def test_another_tokenizer_reads_the_trace_scaled_to_the_stated_mean(self):
        """LD085 (gpustack, Qwen3-8B on one H100, vllm bench serve ShareGPT, 100 prompts, one in flight): 23,260 prompt
        tokens under Qwen3's tokenizer, 233 a prompt, against 224 for the trace's first 100 under Llama 3's (4% apart,
        beyond the 1% same-tokenizer match): the trace's prompts, each scaled by 233 / 224."""
        from planner.accuracy.under_load import sharegpt_prompts, sharegpt_seed0_prompts

        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD085")
        assert (row.client, row.input_len, row.num_prompts) == ("vllm", 233, 100)
        prompts = sharegpt_prompts(row, 100)
        trace = sharegpt_seed0_prompts()[:100]
        assert sum(prompts) / 100 == pytest.approx(233, rel=0.005)
        assert prompts.index(max(prompts)) == trace.index(max(trace))  # the same prompts in the same order

    def test_sglangs_sampler_is_not_read_as_vllms(self):
        """LD027 (datacrunch, sglang.bench_serving --backend sglang, ShareGPT): SGLang's sampler (seed 1) sends other
        prompts, so the row is simulated at its mean lengths even though its mean is near the trace's."""
        from planner.accuracy.under_load import sharegpt_prompts

        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD027")
        assert row.client == "sglang"
        assert sharegpt_prompts(row, 300) is None

    def test_the_samples_outputs_give_the_tpot_tail(self):
        """LD041 (gpustack, vLLM 0.11, gpt-oss-120b on one A100 80GB, vllm bench serve ShareGPT, 100 prompts, 4 in
        flight): p99 TPOT 15.0 ms published. With every output at the run's mean (217 tokens) the simulation gave 10.5 ms
        (-30%); with the sample's outputs (planner.accuracy.datasets: 4 to 834 tokens at that mean, the sample's
        one-token stops read as answers for a chat run) a short output's TPOT carries its neighbours' prefills, within
        the issue's p99 median limit of 20%: 17.8 ms (s90's MoE term (b) took it to 18.1 ms, +20.4%, with the stops
        read as one-token requests)."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD041")
        assert (row.client, row.batch, row.num_prompts) == ("vllm", 4, 100)
        assert predict_percentiles(row)["tpot_p99_ms"] == pytest.approx(15.0, rel=0.20)

    def test_a_cold_sweep_start_has_the_long_prompt_tail(self):
        """LD005 (H200, vLLM 0.14.1, Llama 3.1 70B FP8, ShareGPT at 0.5 req/s, the sweep's cold first rate): the p99
        TTFT is the longest prompts' prefill, 180.7 ms published; at the mean length every prompt is alike and the
        p99 was 75.8 ms (-58%); with the sample's lengths it is within the issue's p99 limit of 50%."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD005")
        assert predict_percentiles(row)["ttft_p99_ms"] == pytest.approx(180.7, rel=0.5)

    def test_a_row_names_the_dataset_its_perf_public_twin_names(self):
        """A loaded row transcribed from a perf_public.csv result block names ShareGPT exactly when that row does: both
        read the same document, whose Benchmark Script (e.g. gpustack docs/performance-lab/qwen3-32b/a100.md: ``vllm
        bench serve ... --dataset-name sharegpt ... --num-prompts 1000``) states the dataset the block itself does not."""
        from planner.accuracy.published import read_csv_rows

        perf = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}
        checked = 0
        for r in read_csv_rows(reference_dir() / "load_public.csv"):
            twin = re.search(r"perf_public\.csv (GPUSTACK-\d+)", r["notes"])
            if twin:
                checked += 1
                names = ("sharegpt" in r["dataset"].lower(), "sharegpt" in perf[twin.group(1)]["dataset"].lower())
                assert names[0] == names[1], (r["record_id"], twin.group(1))
        assert checked >= 50

    def test_more_prompts_than_the_trace_send_the_sample_cycled(self):
        """LD055 (gpustack, TensorRT-LLM 1.2.0rc1, Qwen3-32B on one A100 80GB, 1,000 ShareGPT prompts at once;
        docs/performance-lab/qwen3-32b/a100.md): p99 ITL 318.76 ms published. With every request at the run's means
        the requests moved in lockstep, a whole wave's prompts shared one 8,192-token step and the p99 ITL was 2,166 ms
        (+579%); with the sample's lengths (vLLM's sampler, cycled past its 200, planner.accuracy.datasets) requests
        finish and are admitted a few at a time, within the issue's p99 limit of 50%."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD055")
        assert (row.client, row.num_prompts, row.batch) == ("vllm", 1000, 0)
        assert predict_percentiles(row)["itl_p99_ms"] == pytest.approx(318.76, rel=0.5)


class TestSglangReleaseMemory:
    """A run is simulated with the KV pool its SGLang release would have sized (planner.engines.sglang)."""

    def test_the_405b_at_8_per_s_queues_under_040s_pool(self):
        """LD032 (datacrunch, Llama 3.1 405B on 8 x H200, SGLang 0.4.0, 1,024 / 1,024 random at 8 req/s): published
        median TTFT 123.7 s, the queue growing through the run. 0.4.0's server_args.py keeps mem_fraction_static at
        0.81 for TP 8 on every GPU (0.4.6's raise for GPUs above 96 GiB gave 0.872 and a pool that kept up: 2.0 s,
        -98%); with 0.81 the requests 8 req/s keeps in flight do not fit and the simulated queue grows too."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD032")
        assert row.engine_version.startswith("0.4.0") and row.request_rate == 8
        assert predict_percentiles(row)["ttft_median_ms"] > 20_000


class TestAsyncScheduling:
    """vLLM ``--async-scheduling`` (``vllm/v1/engine/core.py`` ``step_with_batch_queue``) schedules step k+1 when step
    k is launched: a request arriving at a busy engine joins the second step after it arrives."""

    def test_the_row_says_so(self, tmp_path):
        """The flag or the words in the batching / notes cells turn it on; "no async scheduling" does not."""
        from planner.accuracy.published import async_scheduling_of

        assert async_scheduling_of({"batching": "vllm serve --async-scheduling"})
        assert async_scheduling_of({"notes": "Async Scheduling enabled"})
        assert not async_scheduling_of({"batching": "no async scheduling"})
        assert not async_scheduling_of({"batching": "Poisson arrivals"})

    def test_a_busy_engine_adds_one_step_to_ttft(self):
        """Far from capacity, a busy engine's median TTFT rises by about one decode step (vLLM 0.14.1 on an H200, its
        report's server table: 'Async Scheduling | Enabled'); an idle one's does not change. vLLM 0.13's profile: the
        bare vllm is the current release, asynchronous already (s189)."""
        from planner.serving.load import Replica, latency_under_load

        replica = Replica("H200", "llama3.1-8b", gpus=1, engine="vllm==0.13.0")
        sync = latency_under_load(replica, 200, 200, rate_per_s=5.0, num_requests=300)
        overlap = latency_under_load(replica, 200, 200, rate_per_s=5.0, num_requests=300, async_scheduling=True)
        step = sync.tpot_s.p50
        assert overlap.ttft_s.p50 - sync.ttft_s.p50 == pytest.approx(step, rel=0.35)
        alone = [
            latency_under_load(replica, 200, 2, concurrency=1, num_requests=5, async_scheduling=a).ttft_s.p50
            for a in (False, True)
        ]
        assert alone[0] == pytest.approx(alone[1])

    def test_the_h200_sweep_reads_as_its_report_says(self):
        """LD007 (H200, vLLM 0.14.1, Llama 3.1 70B FP8, ShareGPT at 1 req/s, warm, async): median TTFT 56.5 ms
        published; read with the report's prefix caching and async scheduling it is within the issue's 15% median
        limit (read as a cold, synchronous run it was -11%, and warm but synchronous -35%). The reading rules are checked
        alone, with no front-end time: this source's lowest-rate run shows none (-1.5 ms; ``bench/frontend_fit.py``),
        and with the 31.3 ms fitted on all sources it reads far higher."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD007")
        assert row.async_scheduling and row.prompts_cached
        assert predict_percentiles(row, frontend_s=0.0)["ttft_median_ms"] == pytest.approx(56.5, rel=0.15)


class TestMultiStep:
    def test_a_multi_step_server_is_simulated_in_windows(self):
        """vLLM 0.6.0 with --num-scheduler-steps 10 (sgl-project/sglang benchmark/benchmark_vllm_060, Llama 3.1 8B on
        one A100 80GB, ShareGPT at 4 req/s): tokens arrive ten at a time, median ITL 129.32 ms against a 14.14 ms
        TPOT, and an arrival waits for the window to end (median TTFT 100.48 ms, SGLang's 31.98). Predicted within
        the issue's worst-case limit for medians (40%); the ITL is a window, not a step."""
        row = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD015")
        assert row.scheduler_steps == 10
        predicted = predict_percentiles(row)
        assert predicted["itl_median_ms"] == pytest.approx(129.32, rel=0.40)
        assert predicted["ttft_median_ms"] == pytest.approx(100.48, rel=0.40)
        assert predicted["tpot_median_ms"] == pytest.approx(14.14, rel=0.40)
        assert predicted["itl_median_ms"] > 5 * predicted["tpot_median_ms"]


# s187: a row's own memory share (planner.accuracy.published.server_memory_share)


@pytest.mark.parametrize(
    ("command", "share"),
    [
        ("vllm serve m --gpu-memory-utilization 0.92 --max-num-seqs 256", 0.92),
        ("python3 -m sglang.launch_server --mem-fraction-static=0.8 --tp 8", 0.8),
        ("trtllm-serve m --kv_cache_free_gpu_memory_fraction 0.85", 0.85),
        ("YAML: kv_cache_config: {dtype: fp8, free_gpu_memory_fraction: 0.75}", 0.75),
        ("vllm serve m --max-num-seqs 256", None),
        ("vllm serve m --gpu-memory-utilization 1.5", None),  # not a share: the engine's default, not a guess
    ],
)
def test_a_rows_command_gives_its_memory_share(command, share):
    """vLLM's --gpu-memory-utilization, SGLang's --mem-fraction-static and TensorRT-LLM's free_gpu_memory_fraction (flag
    or YAML) are read from the row's command; anything else, or a value outside (0, 1], leaves the engine's default."""
    from planner.accuracy.published import server_memory_share

    assert server_memory_share({"notes": command}) == share
