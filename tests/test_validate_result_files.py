"""`planner validate --decode` on a serving benchmark's own result file (``planner.accuracy.serving_results``).

The fixture ``data/vllm_bench_serve_llama33_70b_tp8_qps1.json`` is a published ``benchmark_serving.py --save-result
--save-detailed`` file (vLLM 0.8.3's client): surajssd/llm-k8s at 58b61c59450e06073120a8ad166c1e9c333851a7,
``results_serving_meta-llama-Llama-3.3-70B-Instruct/01_tp8_pp1/serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_
sharegpt_qps_01.json`` (client command in the ``.commands`` file beside it: ``--backend=vllm --dataset-name=sharegpt
--num-prompts=200 --request-rate 01``; 8 A100 40GB, TP 8). Its keys and values are kept as written, less
``ttfts``, ``itls``, ``generated_texts`` and ``errors`` (1.1 MB, all errors empty); its ``input_lens`` and
``output_lens`` add up to its ``total_input_tokens`` 42,659 and ``total_output_tokens`` 42,722. The shipped row
LD001 of ``catalogs/reference/load_public.csv`` transcribes the same run.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.serving_results import read_result_rows
from planner.catalog import default_catalog
from planner.cli import main

FIXTURE = Path(__file__).parent / "data" / "vllm_bench_serve_llama33_70b_tp8_qps1.json"
RUN = ["--gpu", "A100-40GB", "--gpus", "8"]  # the run's 8 A100 40GB (the .commands file's Standard_ND96asr_v4)
DETAIL_KEYS = ("input_lens", "output_lens")


def summary_only(tmp_path: Path, name: str = "qps1.json", **changes) -> Path:
    """The fixture without its per-request lists (what --save-result writes without --save-detailed)."""
    d = {k: v for k, v in json.loads(FIXTURE.read_text()).items() if k not in DETAIL_KEYS}
    p = tmp_path / name
    p.write_text(json.dumps({**d, **changes}))
    return p


def validate_json(*args: str) -> dict[tuple[str, str], dict]:
    r = CliRunner().invoke(main, ["validate", "--decode", *args, "--json"])
    assert r.exit_code == 0, r.output
    return {(row["record_id"], row["quantity"]): row for row in json.loads(r.stdout)["rows"]}


def test_the_published_file_reads_as_the_shipped_row_of_the_same_run():
    """Each compared figure of the file is LD001's (load_public.csv, transcribed from the same run to 6 digits), and
    its mean lengths 42,659 / 200 and 42,722 / 200 round to LD001's 213 and 214."""
    (row,), _ = read_result_rows(FIXTURE, default_catalog(), gpu="A100-40GB", gpus=8)
    ld001 = next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD001")
    for field in ("ttft_median_s", "ttft_p99_s", "tpot_median_s", "tpot_p99_s", "itl_median_s", "itl_p99_s"):
        assert getattr(row, field) == pytest.approx(getattr(ld001, field), rel=1e-5), field
    assert (row.input_len, row.output_len, row.num_prompts, row.request_rate) == (213, 214, 200, 1.0)
    assert (row.gpus, row.kind, row.engine) == (8, "serving", "vllm")  # backend "vllm"


def test_a_result_file_and_a_csv_of_the_same_run_predict_the_same(tmp_path):
    """The JSON path reads a run as the CSV path reads its row: the same run written both ways (the fixture's
    figures, its mean lengths 213.295 / 213.61) gets the same prediction for every quantity, to the last bit."""
    result = summary_only(tmp_path)
    d = json.loads(result.read_text())
    row = {
        "record_id": "csv",
        "gpu": "A100-40GB",
        "model": d["model_id"],
        "tensor_parallel_size": 8,
        "engine": "vllm",
        "kind": "serving_rate",
        "num_prompts": d["num_prompts"],
        "request_rate": d["request_rate"],
        "input_len": d["total_input_tokens"] / d["completed"],
        "output_len": d["total_output_tokens"] / d["completed"],
        "tpot_ms": d["mean_tpot_ms"],
        "ttft_ms": d["mean_ttft_ms"],
        "output_throughput_tok_s": d["output_throughput"],
        **{
            f"{m}_{s}_ms": d[f"{k}_{m}_ms"] for m in ("ttft", "tpot", "itl") for s, k in (("median",) * 2, ("p99",) * 2)
        },
    }
    table = tmp_path / "same-run.csv"
    with table.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)
    from_json = {q: (v["predicted"], v["published"]) for (_, q), v in validate_json(str(result), *RUN).items()}
    from_csv = {q: (v["predicted"], v["published"]) for (_, q), v in validate_json(str(table)).items()}
    assert len(from_json) == 9  # 6 percentiles, mean TPOT and TTFT, output throughput
    assert from_json == from_csv


def test_listed_request_lengths_are_simulated_as_sent(tmp_path):
    """With --save-detailed's input_lens / output_lens the run is simulated request by request: its 200 (prompt,
    output) pairs, in order (the fixture's first is 13 / 120), and its percentiles move off the equal-lengths ones."""
    (row,), _ = read_result_rows(FIXTURE, default_catalog(), gpu="A100-40GB", gpus=8)
    assert len(row.request_lengths) == 200 and row.request_lengths[0] == (13, 120)
    assert sum(a for a, _ in row.request_lengths) == 42659 and sum(b for _, b in row.request_lengths) == 42722
    listed = validate_json(str(FIXTURE), *RUN)
    means = validate_json(str(summary_only(tmp_path)), *RUN)
    moved = [q for (_, q), v in listed.items() if v["predicted"] != means[("qps1#1", q)]["predicted"]]
    assert "ttft_p99_ms" in moved and "tpot_p99_ms" in moved


@pytest.mark.parametrize(
    "options, message",
    [
        ([], "names no GPU; give --gpu NAME (the run's GPU, e.g. H100) and --gpus N (the GPUs of the server's"),
        (["--gpu", "H100"], "names no GPU count; give --gpus N (the GPUs of the server's tensor-parallel group)"),
        (["--gpus", "8"], "names no GPU; give --gpu NAME (the run's GPU, e.g. H100)"),
    ],
)
def test_a_result_without_its_gpu_is_refused_with_what_to_give(tmp_path, options, message):
    r = CliRunner().invoke(main, ["validate", "--decode", str(summary_only(tmp_path, "result.json")), *options])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "result.json names no GPU" in r.output and message in r.output


def test_metadata_can_name_the_gpu_and_group(tmp_path):
    """``vllm bench serve --metadata gpu=A100-40GB tensor_parallel_size=8`` writes them into the result: read."""
    p = summary_only(tmp_path, gpu="A100-40GB", tensor_parallel_size="8")
    (row,), _ = read_result_rows(p, default_catalog())
    assert (row.gpu, row.gpus) == ("A100-40GB", 8)


def test_an_unknown_model_id_is_refused_with_the_closest_catalog_names(tmp_path):
    p = summary_only(tmp_path, model_id="meta-llama/Llama-3.9-70B-Instruct")
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), *RUN])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "model_id 'meta-llama/Llama-3.9-70B-Instruct' is not in the catalog; did you mean" in r.output
    assert "Llama-3" in r.output.split("did you mean")[1] and "give --model" in r.output


def test_json_lines_of_two_runs_give_two_rows(tmp_path):
    """Two runs appended one a line (--append-result): the fixture's qps 1 run, and its sweep's qps inf run (LD004
    of load_public.csv: every prompt at once; its figures LD004's, its totals its means 213 / 212 x 200)."""
    first = json.loads(summary_only(tmp_path).read_text())
    burst = {**first, "request_rate": "inf", "total_output_tokens": 212 * 200, "median_ttft_ms": 349.846,
             "p99_ttft_ms": 450.379, "median_tpot_ms": 36.9731, "p99_tpot_ms": 75.7652, "median_itl_ms": 35.0514,
             "p99_itl_ms": 43.5951}  # fmt: skip
    p = tmp_path / "sweep.jsonl"
    p.write_text(json.dumps(first) + "\n" + json.dumps(burst) + "\n")
    rows, _ = read_result_rows(p, default_catalog(), gpu="A100-40GB", gpus=8)
    assert [(r.record_id, r.request_rate, r.batch) for r in rows] == [("sweep#1", 1.0, 0), ("sweep#2", None, 0)]
    got = validate_json(str(p), *RUN)
    assert {rid for rid, _ in got} == {"sweep#1", "sweep#2"}
    assert got[("sweep#2", "ttft_median_ms")]["published"] == 349.846


def test_json_output_carries_every_compared_quantity_with_the_files_figures():
    got = validate_json(str(FIXTURE), *RUN)
    d = json.loads(FIXTURE.read_text())
    expected = {
        "ttft_median_ms": d["median_ttft_ms"],
        "ttft_p99_ms": d["p99_ttft_ms"],
        "tpot_median_ms": d["median_tpot_ms"],
        "tpot_p99_ms": d["p99_tpot_ms"],
        "itl_median_ms": d["median_itl_ms"],
        "itl_p99_ms": d["p99_itl_ms"],
        # the run's means, judged in the serving table beside its percentiles (trial 10, F9: one verdict a run)
        "tpot_mean_ms": d["mean_tpot_ms"],
        "ttft_mean_ms": d["mean_ttft_ms"],
        "throughput_tok_s": d["output_throughput"],
    }
    rid = FIXTURE.stem + "#1"
    assert {q: got[(rid, q)]["published"] for q in expected} == pytest.approx(expected, rel=1e-12)
    assert all(got[(rid, q)]["predicted"] > 0 for q in expected)


def test_json_rows_carry_the_signed_error_and_the_configuration_the_table_prints():
    """A --json row says which run it is and how far off, as the table does (a trial: a script reading --json had
    to recompute the error and could not tell the rows' GPU, layout or lengths apart)."""
    got = validate_json(str(FIXTURE), *RUN)
    table = CliRunner().invoke(main, ["validate", "--decode", str(FIXTURE), *RUN]).stdout
    for row in got.values():
        assert row["error"] == pytest.approx(row["predicted"] / row["published"] - 1, rel=1e-12)
        assert row["configuration"] in table
    assert "A100" in row["configuration"] and "TP8" in row["configuration"]


def test_max_concurrency_is_a_closed_loop(tmp_path):
    """vllm bench serve --max-concurrency 16 at the default rate inf: 16 requests kept in flight."""
    p = summary_only(tmp_path, request_rate="inf", max_concurrency=16)
    (row,), _ = read_result_rows(p, default_catalog(), gpu="A100-40GB", gpus=8)
    assert (row.kind, row.batch, row.request_rate, row.num_prompts) == ("serving", 16, None, 200)


def test_an_sglang_result_needs_the_model_and_reads_its_dataset(tmp_path):
    """sglang.bench_serving's JSON Lines (python/sglang/bench_serving.py ``benchmark``) name no model and no
    num_prompts: --model names it, its completed requests are the run's; its random dataset's flags are kept, so
    the CSV path's reproduction of its draws applies (``datasets.sglang_random_requests``)."""
    line = {
        "backend": "sglang",
        "dataset_name": "random",
        "request_rate": float("inf"),
        "max_concurrency": 8,
        "random_input_len": 1024,
        "random_output_len": 1024,
        "random_range_ratio": 0.0,
        "completed": 80,
        "total_input_tokens": 80 * 512,
        "total_output_tokens": 80 * 512,
        "total_output_tokens_retokenized": 1,
        "median_ttft_ms": 100.0,
        "p99_ttft_ms": 200.0,
        "median_itl_ms": 10.0,
        "p99_itl_ms": 20.0,
        "p75_itl_ms": 15.0,
    }  # fmt: skip  (figures: any positive numbers; only how they are read is tested)
    p = tmp_path / "sglang.jsonl"
    p.write_text(json.dumps(line) + "\n")
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), "--gpu", "H100", "--gpus", "1"])
    assert r.exit_code == 2 and "names no model (sglang.bench_serving writes none); give --model NAME" in r.output
    (row,), _ = read_result_rows(p, default_catalog(), gpu="H100", gpus=1, model="Llama-3.1-8B")
    assert (row.engine, row.client, row.num_prompts, row.batch) == ("sglang", "sglang", 80, 8)
    assert row.dataset == "random (--random-input-len 1024 --random-output-len 1024 --random-range-ratio 0.0)"
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), "--gpu", "H100", "--gpus", "1", "--model",
                                  "Llama-3.1-8B"])  # fmt: skip
    assert r.exit_code == 0 and "key p75_itl_ms not compared" in r.stderr


def test_a_backend_that_names_an_api_is_noted(tmp_path):
    """vllm bench serve's default --backend openai names the API, not the server: taken as vLLM, with a note."""
    p = summary_only(tmp_path, backend="openai-chat")
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), *RUN])
    assert r.exit_code == 0 and "backend openai-chat names the API the client called, not the engine" in r.stderr


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"completed": 200, "num_prompts": ', "line 1 is not JSON"),
        ('{"foo": 1}', "result 1 is not a serving benchmark's result (no completed, total_input_tokens"),
        ("[]", "no results"),
        (
            '{"model_id": "meta-llama/Llama-3.3-70B-Instruct", "completed": "x", "total_input_tokens": 1, '
            '"total_output_tokens": 1, "median_ttft_ms": 1}',
            "not a count",
        ),
    ],
)
def test_a_garbled_result_file_is_one_line_naming_it_and_what_is_read(tmp_path, text, message):
    p = tmp_path / "bad.json"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), *RUN])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert str(p) in r.output and message in r.output
    assert message == "not a count" or "vllm bench serve --save-result" in r.output


def test_gpu_options_with_a_csv_are_refused(tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text("gpu,model,batch,input_len,output_len,tpot_ms\nH100,Llama-3.1-8B,1,128,128,7\n")
    r = CliRunner().invoke(main, ["validate", "--decode", str(p), "--gpu", "H100"])
    assert r.exit_code == 2 and "--gpu names what a --decode result file (JSON) does not say" in r.output
