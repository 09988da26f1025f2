"""s190's load sources, read as published: the SGLang cookbook's speed benchmarks, one source of 11 pages (SGC001-SGC026,
SGA001-SGA033 less the runs left out, SGB025-SGB026: random lengths and ShareGPT), and the vLLM blog's FP8 KV-cache
post (VFK001-VFK004), all judged only (no front-end vote)."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd
import pytest

from planner.accuracy.datasets import run_requests
from planner.accuracy.frontend import JUDGED_ONLY_SOURCE_GROUPS
from planner.accuracy.published import load_decode_rows
from planner.catalog.loader import shipped_catalog_dir

PATH = shipped_catalog_dir() / "reference" / "load_public.csv"
TABLE = pd.read_csv(PATH, dtype=str, keep_default_na=False)
COOKBOOK = TABLE[TABLE.source_group == "sgl-cookbook"]
BLOG = TABLE[TABLE.record_id.str.startswith("VFK")]
ROWS = {r.record_id: r for r in load_decode_rows(PATH)}
FIGURES = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms")


def test_the_sources_are_judged_only():
    assert {*COOKBOOK.source_group, *BLOG.source_group} <= set(JUDGED_ONLY_SOURCE_GROUPS)
    assert (len(COOKBOOK), COOKBOOK.source.str.split("#").str[0].nunique(), len(BLOG)) == (56, 10, 4)


@pytest.mark.parametrize("record_id", [*COOKBOOK.record_id, *BLOG.record_id])
def test_every_figure_is_in_its_quote_and_the_row_is_predicted(record_id):
    row = TABLE[TABLE.record_id == record_id].iloc[0]
    figures = [row[c] for c in FIGURES if row[c]]
    assert figures and all(f in row.quote for f in figures)
    # the two runs served with speculative decoding (EAGLE / MTP, no published acceptance) are refused, saying why
    problem = ROWS[record_id].problem
    assert "speculative decoding" in problem if record_id in ("SGA001", "SGA012") else problem == ""


def test_each_cookbook_run_finds_the_prompts_its_servers_earlier_runs_sent():
    """Each printed deployment command is a server launched for the runs after it (the Qwen3 page prints one for its
    reasoning scenario at line 522), which runs them in page order (the record ids follow the lines), seed 1: a run's
    first k prompts are any earlier run's on that server with the same dataset and --random-input-len, so it finds the
    largest such run's prompts cached (all of them where that run sent at least as many), unless the server runs with
    --disable-radix-cache. The rule, applied here from the rows' own commands and notes."""
    for _, page in COOKBOOK.groupby(COOKBOOK.source.str.split("#").str[0]):
        assert list(page.record_id) == sorted(page.record_id)
        lines = [int(re.search(r"#L(\d+)", s)[1]) for s in page.source]
        assert lines == sorted(lines)
        sent: dict[tuple[int, str], int] = {}
        for _, r in page.iterrows():
            server = int(re.search(r"server launch at line (\d+)", r.notes)[1])
            length = re.search(r"--random-input-len (\d+)", r.batching)
            key = (server, length[1] if length else r.dataset.split()[0])
            before, n = sent.get(key, 0), int(r.num_prompts)
            expected = "cold" if not before else "warm" if before >= n else f"warm: the first {before} prompts"
            if "--disable-radix-cache" in r.batching:
                expected = "cold"
            assert r.prefix_cache == expected, r.record_id
            sent[key] = max(before, n)
    launches = {
        rid: re.search(r"server launch at line (\d+)", n)[1]
        for rid, n in zip(COOKBOOK.record_id, COOKBOOK.notes, strict=True)
    }
    assert {launches[f"SGC{i:03d}"] for i in range(7, 10)} == {"344"}
    assert {launches[f"SGC{i:03d}"] for i in range(10, 16)} == {"522"}


def test_the_blogs_variance_is_vllms_window():
    """'±15% variance' under vllm bench serve: each length in [0.85 L, 1.15 L], SGLang's [r' top, top] with
    r' = 0.85 / 1.15."""
    assert [ROWS[r].length_range_ratio for r in BLOG.record_id] == [pytest.approx(0.85 / 1.15)] * 4


class TestSglangDraws:
    """``sglang.bench_serving``'s random lengths reproduced (``planner.accuracy.datasets.sglang_random_requests``):
    after ``np.random.seed(1)`` it draws every input length, then every output length, each uniform in [max(int(L r),
    1), L]. The published totals are the draws' exactly."""

    def test_the_cookbooks_totals_are_the_draws(self):
        """SGC004 (8,000 / 1,000, 10 prompts): 'Total input tokens: 41941'; SGC006 (320 prompts): 1,273,893; the
        Qwen3 page's 10-prompt outputs 'Total generated tokens: 4210' (the Llama page prints one token more a
        request, 4,220)."""
        tokens = {rid: run_requests(ROWS[rid]) for rid in ("SGC004", "SGC006", "SGC013")}
        assert sum(p for p, _ in tokens["SGC004"]) == 41941 and sum(p for p, _ in tokens["SGC006"]) == 1273893
        assert sum(o for _, o in tokens["SGC013"]) == 4210

    def test_datacrunchs_older_runs_are_the_same_draws(self):
        """perf_public.csv DCH200-001: SGLang on 4 x H200, --random-input 1024 (argparse's prefix of
        --random-input-len), 300 prompts, mean 508.71 tokens (its load_public.csv sibling LD022 states 508.71 in /
        534.49 out from the run's totals)."""
        rows = {r.record_id: r for r in load_decode_rows(PATH.with_name("perf_public.csv"))}
        drawn = run_requests(rows["DCH200-001"])
        assert len(drawn) == 300
        assert sum(p for p, _ in drawn) / 300 == pytest.approx(508.71, abs=0.005)
        assert sum(o for _, o in drawn) / 300 == pytest.approx(534.49, abs=0.005)

    def test_a_run_whose_mean_is_not_the_draws_keeps_its_own_lengths(self):
        row = ROWS["SGC004"]
        assert run_requests(replace(row, input_len=row.input_len * 1.02)) is None
        assert run_requests(replace(row, client="")) is None  # another client or a --seed: not this draw
