"""Trial 28 F1 in the export: a group the simulation skips because its KV cache cannot hold the longest request drawn
(``RequestLongerThanCacheError``, ``planner plan``'s "note: 2 x H100 SXM 80GB: skipped, ...") is named in the
Assumptions row that says how each option's group was chosen ("GPUs per replica"), one line a skipped group, so a
reader sees why the smaller group was not used; not in Warnings, nor in the export's stdout headline."""

from __future__ import annotations

import openpyxl
import pytest

from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.export import build_review, render
from planner.export.assumptions import _groups_skipped_words
from planner.export.scenario import load_scenario
from planner.serving.load import RequestLongerThanCacheError

#: Llama-3.3-70B on H100 at 4 requests/s with measured lengths: 60 requests of 800 / 150 tokens, 37 of 2,000 / 400
#: and 3 of 12,000 / 1,000: memory's p95 slot is 2,000 + 400 = 2,400 tokens, which 2 x H100 hold (4 sequences of
#: their 10,144-token KV cache), so the 2-GPU group passes the screening; the 13,000-token requests drawn do not fit
#: in that cache, so the simulation skips it and keeps 4 GPUs per replica
ROWS = ["prompt_tokens,output_tokens"] + ["800,150"] * 60 + ["2000,400"] * 37 + ["12000,1000"] * 3
SCENARIO = """title = "A group too short for the longest request"
[workload]
peak_requests_per_s = 4
average_requests_per_s = 2
lengths_file = "lengths.csv"
high_percentile = 95
ttft_target_s = 2
tpot_target_s = 0.06
[[option]]
name = "H100 70B"
gpu = "H100"
model = "Llama-3.3-70B"
"""
#: plan's note of the 2-GPU group (``RequestLongerThanCacheError.skip_note``), as ``planner plan`` prints it
SKIP_NOTE = RequestLongerThanCacheError(
    gpus=2, gpu="H100 SXM 80GB", model="Llama-3.3-70B", longest_tokens=13000, cache_tokens=10144, ranks=1
).skip_note


@pytest.fixture(scope="module")
def review(tmp_path_factory):
    folder = tmp_path_factory.mktemp("skipped")
    (folder / "lengths.csv").write_text("\n".join(ROWS) + "\n")
    (folder / "s.toml").write_text(SCENARIO)
    return build_review(load_scenario(folder / "s.toml"), default_catalog(), date="2026-12-07")


def _group_row(review):
    return next(a for a in review.assumptions if a.what == "GPUs per replica")


def test_the_result_keeps_the_larger_group_and_names_the_skipped_one(review):
    (r,) = review.results
    assert r.meets and r.replica.gpus == 4
    assert r.groups_skipped == (SKIP_NOTE,)
    assert SKIP_NOTE == (
        "2 x H100 SXM 80GB: skipped, its KV cache holds 10,144 tokens and the longest request is 13,000 "
        "(prompt + output)"
    )


def test_the_group_choice_row_says_one_line_per_skipped_group(review):
    """The row's text, then one line naming the option and plan's note of each skipped group."""
    text = _group_row(review).value
    head, *lines = text.split("\n")
    assert head.startswith("each tensor-parallel group whose model fits")
    assert head.endswith("is skipped (no number of its replicas serves it):")
    assert lines == [f"H100 70B: {SKIP_NOTE}"]


def test_the_note_is_in_neither_the_warnings_nor_the_headline(review):
    assert not any("skipped, its KV cache" in w for w in review.warnings)
    assert not any("skipped" in line for line in summary_lines(review))


def test_the_workbook_and_markdown_carry_the_note(review, tmp_path):
    path = tmp_path / "r.xlsx"
    path.write_bytes(render(review, "xlsx"))
    ws = openpyxl.load_workbook(path)["Assumptions"]
    row = next(r for r in ws.iter_rows(values_only=True) if r[0] == "GPUs per replica")
    assert row[1].endswith(f":\nH100 70B: {SKIP_NOTE}")
    md = render(review, "md")
    md = md.decode() if isinstance(md, bytes) else md
    assert "KV cache holds 10,144 tokens and the longest request is 13,000" in md


def test_a_review_with_no_skipped_group_says_nothing_more():
    """Without a skipped group the row is as before (the committed workbooks and README do not move)."""

    class _R:
        groups_skipped = ()

    assert _groups_skipped_words([_R()]) == ""
