"""Trial 24's findings on ``planner validate`` of a user's runs CSV.

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
