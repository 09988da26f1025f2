"""s190's load sources, read as published: the SGLang cookbook's three speed-benchmark pages (SGC001-SGC024) and the
vLLM blog's FP8 KV-cache post (VFK001-VFK004), both judged only (no front-end vote)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from planner.accuracy.frontend import JUDGED_ONLY_SOURCE_GROUPS
from planner.accuracy.published import load_decode_rows
from planner.catalog.loader import shipped_catalog_dir

PATH = shipped_catalog_dir() / "reference" / "load_public.csv"
TABLE = pd.read_csv(PATH, dtype=str, keep_default_na=False)
COOKBOOK = TABLE[TABLE.record_id.str.startswith("SGC")]
BLOG = TABLE[TABLE.record_id.str.startswith("VFK")]
ROWS = {r.record_id: r for r in load_decode_rows(PATH)}
FIGURES = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms")


def test_the_sources_are_judged_only():
    assert set(COOKBOOK.source_group) | set(BLOG.source_group) <= set(JUDGED_ONLY_SOURCE_GROUPS)
    assert (len(COOKBOOK), COOKBOOK.source_group.nunique(), len(BLOG)) == (24, 3, 4)


@pytest.mark.parametrize("record_id", [*COOKBOOK.record_id, *BLOG.record_id])
def test_every_figure_is_in_its_quote_and_the_row_is_predicted(record_id):
    row = TABLE[TABLE.record_id == record_id].iloc[0]
    figures = [row[c] for c in FIGURES if row[c]]
    assert figures and all(f in row.quote for f in figures)
    assert ROWS[record_id].problem == ""


def test_each_cookbook_run_finds_the_prompts_its_pages_earlier_runs_sent():
    """One server a page, its runs in page order (the record ids follow the lines), seed 1: a run's first k prompts
    are any earlier run's of the same --random-input-len, so it finds the largest earlier such run's prompts cached
    (all of them where that run sent at least as many). The rule, applied here from the rows' own commands."""
    for _, page in COOKBOOK.groupby("source_group"):
        assert list(page.record_id) == sorted(page.record_id)
        lines = [int(re.search(r"#L(\d+)", s)[1]) for s in page.source]
        assert lines == sorted(lines)
        sent: dict[int, int] = {}
        for _, r in page.iterrows():
            length, n = int(re.search(r"--random-input-len (\d+)", r.batching)[1]), int(r.num_prompts)
            before = sent.get(length, 0)
            expected = "cold" if not before else "warm" if before >= n else f"warm: the first {before} prompts"
            assert r.prefix_cache == expected, r.record_id
            sent[length] = max(before, n)


def test_the_blogs_variance_is_vllms_window():
    """'±15% variance' under vllm bench serve: each length in [0.85 L, 1.15 L], SGLang's [r' top, top] with
    r' = 0.85 / 1.15."""
    assert [ROWS[r].length_range_ratio for r in BLOG.record_id] == [pytest.approx(0.85 / 1.15)] * 4
