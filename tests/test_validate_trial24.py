"""Trial 24's findings on ``planner validate`` of a user's runs CSV (F10, F11).

F10: an SGLang server's row of ``dataset=random`` with blank lengths and no client named was read with ``vllm bench
serve``'s defaults (1,024 / 128, every request alike), silently; naming ``sglang.bench_serving`` read SGLang's (1 to
1,024 each, mean 512.5) and moved the TPOT prediction 2x. The shipped rows of SGLang servers that name their client
mostly name SGLang's own (``published.SGLANG_DEFAULT_CLIENT``; counted below), so an SGLang row naming none is now
read as SGLang's run, every other engine's as vLLM's, and validate says which in a note.

Expected values: the clients' defaults from ``planner.serving.load`` (DATASETS["random"]: vLLM's RandomDataset,
1,024 / 128; CLIENT_DATASETS[("random", "sglang")]: SGLang's sample_random_requests, uniform 1..1,024, mean 512.5,
whole tokens 512 or 513 by ``fixed_length_tokens``), the shipped CSVs' own cells for the count.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict

import pytest
from cli_support import run

from planner.accuracy.published import (
    SGLANG_DEFAULT_CLIENT,
    assumed_client_notes,
    load_decode_rows,
    reference_dir,
    source_group_of,
)
from planner.accuracy.serving_results import FIGURE_KEYS, unread_percentiles
from planner.accuracy.under_load import predict_percentiles
from planner.serving.load import CLIENT_DATASETS, DATASETS, fixed_length_tokens

HEADER = "record_id,gpu,model,engine,tensor_parallel_size,dataset,input_len,output_len,batching,request_rate,num_prompts,tpot_ms,ttft_ms"
#: The trial's row (my/runs.csv MINE-GPTOSS), with the client named three ways and on a vLLM server.
ROWS = {
    "MINE-GPTOSS": ("SGLang 0.5.5", "poisson rate"),
    "NAMED-SGLANG": ("SGLang 0.5.5", "sglang.bench_serving poisson rate"),
    "NAMED-VLLM": ("SGLang 0.5.5", "vllm bench serve poisson rate"),
    "VLLM-SERVER": ("vLLM 0.11.0", "poisson rate"),
}


@pytest.fixture
def runs_csv(tmp_path):
    path = tmp_path / "runs.csv"
    lines = [HEADER] + [
        f"{rid},H100 SXM 80GB,gpt-oss-120b,{engine},2,random,,,{batching},10,500,20,100"
        for rid, (engine, batching) in ROWS.items()
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _rows(path):
    return {r.record_id: r for r in load_decode_rows(path)}


SGLANG_RANDOM = CLIENT_DATASETS[("random", "sglang")]
VLLM_RANDOM = DATASETS["random"]


class TestF10ClientOfADatasetsBlankLengths:
    def test_an_sglang_row_naming_no_client_reads_sglangs_defaults_as_if_named(self, runs_csv):
        rows = _rows(runs_csv)
        mine, named = rows["MINE-GPTOSS"], rows["NAMED-SGLANG"]
        mean = fixed_length_tokens(SGLANG_RANDOM.prompt_mean_tokens)  # 512.5 as whole tokens
        assert (mine.input_len, mine.output_len) == (named.input_len, named.output_len) == (mean, mean)
        assert mine.length_range_ratio == named.length_range_ratio == SGLANG_RANDOM.range_ratio == 0.0
        assert mine.assumed_client == "sglang" and named.assumed_client == ""
        assert mine.client == "" and named.client == "sglang"  # seed-1 draws are reproduced only for a named client

    def test_a_named_vllm_client_and_a_vllm_server_read_vllms_defaults(self, runs_csv):
        rows = _rows(runs_csv)
        for rid in ("NAMED-VLLM", "VLLM-SERVER"):
            r = rows[rid]
            assert (r.input_len, r.output_len) == (VLLM_RANDOM.prompt_mean_tokens, VLLM_RANDOM.output_mean_tokens)
            assert r.length_range_ratio is None  # every request 1,024 in, 128 out
        assert rows["NAMED-VLLM"].assumed_client == "" and rows["VLLM-SERVER"].assumed_client == "vllm"

    def test_stated_lengths_assume_no_client(self, tmp_path):
        path = tmp_path / "stated.csv"
        path.write_text(
            f"{HEADER}\nS1,H100 SXM 80GB,gpt-oss-120b,SGLang 0.5.5,2,random,2000,200,poisson,10,500,20,100\n"
        )
        (row,) = load_decode_rows(path)
        assert (row.input_len, row.output_len, row.assumed_client) == (2000, 200, "")
        assert assumed_client_notes(str(path), [row]) == []

    def test_validate_notes_which_clients_defaults_it_assumed(self, runs_csv):
        result = run("validate", "--decode", str(runs_csv))
        notes = [line for line in result.stderr.splitlines() if "names no benchmark client" in line]
        assert len(notes) == 2, result.stderr
        sglang, vllm = notes
        assert "(MINE-GPTOSS)" in sglang and "read with sglang.bench_serving's defaults" in sglang
        assert "(512 / 512 tokens)" in sglang and "name vllm bench serve in batching or notes" in sglang
        assert "(VLLM-SERVER)" in vllm and "read with vllm bench serve's defaults (1,024 / 128 tokens)" in vllm
        assert "name sglang.bench_serving in batching or notes" in vllm
        assert "512/512 10 req/s" in result.stdout and "1024/128 10 req/s" in result.stdout


def test_shipped_sglang_runs_that_name_a_client_mostly_name_sglangs_own():
    """The evidence for ``SGLANG_DEFAULT_CLIENT``: the shipped serving rows of SGLang servers, by the client their
    batching, dataset or notes cell names, counted in source groups (one document's many rows are one choice: the
    sgl-cookbook's 56 rows, GPUStack's 110)."""
    sources = defaultdict(set)
    for name in ("load_public.csv", "perf_public.csv"):
        with open(reference_dir() / name, newline="") as fh:
            for r in csv.DictReader(fh):
                if "sglang" not in (r.get("engine") or "").lower():
                    continue
                text = " ".join(r.get(c) or "" for c in ("batching", "dataset", "notes")).lower()
                if "sglang.bench_serving" in text or "sglang/bench_serving" in text:
                    sources["sglang"].add(r.get("source_group") or source_group_of(r["source"]))
                elif "vllm bench serve" in text:
                    sources["vllm"].add(r.get("source_group") or source_group_of(r["source"]))
                elif "benchmark_serving.py" in text or "inferencex" in text:
                    sources["benchmark_serving.py fork"].add(r.get("source_group") or source_group_of(r["source"]))
    counts = {k: len(v) for k, v in sources.items()}
    assert counts == {"sglang": 6, "vllm": 1, "benchmark_serving.py fork": 2}  # published.SGLANG_DEFAULT_CLIENT
    assert max(counts, key=counts.get) == SGLANG_DEFAULT_CLIENT


#: F11: a run's p90 and p95 beside its median and p99 (``vllm bench serve --metric-percentiles 50,90,95,99``); the
#: figures are the trial's kind of run (Llama-3.1-8B on one H100 at 10 requests/s of 1,024 / 128), not a source's.
P95_HEADER = (
    "record_id,gpu,model,engine,tensor_parallel_size,dataset,input_len,output_len,batching,request_rate,num_prompts,"
    "ttft_median_ms,ttft_p95_ms,ttft_p99_ms,tpot_median_ms,tpot_p90_ms,tpot_p95_ms,tpot_p99_ms"
)
P95_ROW = (
    "P95,H100 SXM 80GB,Llama-3.1-8B,vLLM 0.11.0,1,,1024,128,vllm bench serve poisson rate,10,500,30,60,80,8,9,9.5,11"
)


@pytest.fixture
def p95_csv(tmp_path):
    path = tmp_path / "runs3.csv"
    # a second run whose p95 cannot be predicted (a GPU not in the catalog): null with the row's reason
    path.write_text(f"{P95_HEADER}\n{P95_ROW}\n{P95_ROW.replace('P95,H100 SXM 80GB', 'NOGPU,H999', 1)}\n")
    return path


class TestF11P90AndP95AreCompared:
    def test_the_columns_are_read_as_seconds(self, p95_csv):
        row = _rows(p95_csv)["P95"]
        assert (row.ttft_p95_s, row.tpot_p90_s, row.tpot_p95_s) == (0.06, 0.009, 0.0095)
        assert math.isnan(row.ttft_p90_s) and math.isnan(row.itl_p95_s)  # not in the file: not compared

    def test_predicted_from_the_same_run_as_the_median_and_p99(self, p95_csv):
        """One simulation gives every percentile: each metric's figures rise from the median through p90 and p95
        to p99 (a p95 read from another percentile or another run would break the order or the equality)."""
        row = _rows(p95_csv)["P95"]
        out = predict_percentiles(row)
        again = predict_percentiles(row)
        for metric in ("ttft", "tpot", "itl"):
            figures = [out[f"{metric}_{p}_ms"] for p in ("median", "p90", "p95", "p99")]
            assert figures == sorted(figures) and figures[0] < figures[-1], (metric, figures)
        assert out == again

    def test_json_has_the_p95_rows_with_the_range_they_borrow(self, p95_csv):
        result = run("validate", "--decode", str(p95_csv), "--json")
        out = json.loads(result.stdout)
        rows = {(r["record_id"], r["quantity"]): r for r in out["rows"]}
        p95 = rows[("P95", "ttft_p95_ms")]
        assert p95["published"] == 60.0 and p95["predicted"] > 0 and p95["held_out_range"] == "ttft_p99"
        assert rows[("P95", "tpot_p90_ms")]["held_out_range"] == "tpot_p99"
        assert "held_out_range" not in rows[("P95", "ttft_p99_ms")]
        missing = rows[("NOGPU", "tpot_p95_ms")]
        assert missing["predicted"] is None and missing["reason"]
        assert out["summary"]["tpot_p95_ms"]["limits"] == {"median": 0.2, "worst": 0.5}  # held as p99
        notes = " ".join(out["notes"])
        assert "ttft_p95_ms takes ttft_p99's" in notes and "tpot_p90_ms takes tpot_p99's" in notes
        assert "not compared" not in notes  # trial 24's "column tpot_p95_ms not compared" is gone

    def test_a_result_files_p90_and_p95_keys_are_compared_and_p75_is_not(self):
        assert unread_percentiles([{"p95_ttft_ms": 1.0, "p90_itl_ms": 1.0, "p75_ttft_ms": 1.0}]) == ["p75_ttft_ms"]
        assert FIGURE_KEYS["p95_tpot_ms"] == "tpot_p95_ms"
