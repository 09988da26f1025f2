"""``planner export`` on a replica that spans nodes says what ``planner plan`` says (trial 31 F7).

A copy of examples/budget-review.toml on DeepSeek-V3 and H200 (an 8-GPU NVLink domain: ``planner.deploy.scale_up_gpus``)
with one 8-GPU option (tensor parallel, inside one node) and one 16-GPU dp-ep option (across two nodes). The targets
are loosened (TTFT 5 s, TPOT 100 ms) so both options meet them and have held-out ranges. One export, reused.

Expected words are ``planner.deploy``'s: ``spans_nodes_warning`` (dp-ep: "the experts' all-to-all exchange ... crosses
nodes, slower than modelled"), ``SLOW_END_OPEN_WORDS`` and ``LARGE_SCALE_MOE_NOT_MODELLED`` (README's "Not modelled").
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from planner.accuracy.loaded_ranges import load_loaded_ranges
from planner.catalog import default_catalog
from planner.deploy import SLOW_END_OPEN_WORDS
from planner.export import build_review
from planner.export.markdown import render_markdown
from planner.export.scenario import parse_scenario
from planner.export.tables import NODES_LABEL, options_table, tpot_range_values

EIGHT, SIXTEEN = "H200 x8, rented", "H200 x16 DP-EP, rented"
OPTIONS = f"""
[[option]]
name = "{EIGHT}"
gpu = "H200"
pricing = "cloud"
gpus_per_replica = 8
parallelism = "tp"

[[option]]
name = "{SIXTEEN}"
gpu = "H200"
pricing = "cloud"
gpus_per_replica = 16
parallelism = "dp-ep"

"""
#: planner.deploy.spans_nodes_warning(H200, 16, "dp-ep"): 16 > H200's 8-GPU scale-up domain.
DP_EP_SPANS = (
    "16 GPUs is more than one 8-GPU node: the attention ranks are data-parallel, but the experts' all-to-all "
    "exchange between them crosses nodes, slower than modelled"
)
#: planner.deploy.spans_nodes_warning(H200, 16, "tp"): the levers' "More GPUs per replica" 8 -> 16 on the baseline.
TP_SPANS = "16 GPUs is more than one 8-GPU node: tensor parallelism across nodes is slower than modelled"
#: planner.deploy.LARGE_SCALE_MOE_NOT_MODELLED, as listed_words joins it (README's "Not modelled" line).
DP_EP_NOT_MODELLED = (
    "a data-parallel size other than the expert-parallel size, tensor-parallel attention inside a DP rank, EPLB's "
    "redundant experts, DeepEP's low-latency kernels, two-batch overlap, and prefill/decode disaggregation"
)


def _scenario_text() -> str:
    src = (Path(__file__).parents[1] / "examples" / "budget-review.toml").read_text()
    head, levers = src.split("\n[[option]]")[0], "[levers]" + src.split("[levers]")[1]
    head = head.replace('model = "Llama-3.1-70B"', 'model = "DeepSeek-V3"')
    head = head.replace('baseline = "H100, rented"', f'baseline = "{EIGHT}"')
    head = re.sub(r"(?m)^ttft_target_s = 1\.5 ", "ttft_target_s = 5.0 ", head)
    head = re.sub(r"(?m)^tpot_target_s = 0\.05 ", "tpot_target_s = 0.10 ", head)
    assert "DeepSeek-V3" in head and "ttft_target_s = 5.0" in head and "tpot_target_s = 0.10" in head
    return head + OPTIONS + levers


@pytest.fixture(scope="module")
def review():
    scenario = parse_scenario(tomllib.loads(_scenario_text()))
    return build_review(scenario, default_catalog(), source="nodes.toml", date="2026-12-07")


def _by_name(review, name):
    return next(r for r in review.results if r.option.name == name)


def test_both_options_meet(review):
    assert _by_name(review, EIGHT).meets and _by_name(review, SIXTEEN).meets


def test_spans_nodes_warning_and_not_modelled_in_warnings(review):
    assert f'{SIXTEEN}: {DP_EP_SPANS}; its held-out ranges\' slow end is open ("to more than")' in review.warnings
    assert f"{SIXTEEN}: not modelled: {DP_EP_NOT_MODELLED}" in review.warnings
    assert not [w for w in review.warnings if w.startswith(f"{EIGHT}:") and ("node" in w or "not modelled" in w)]


def test_held_out_ranges_open_only_across_nodes(review):
    values = dict(
        zip((r.option.name for r in review.results), tpot_range_values(review, load_loaded_ranges()), strict=True)
    )
    assert re.fullmatch(r"\d+\.\d - \d+\.\d ms", values[EIGHT]), values[EIGHT]  # closed, as before
    assert re.fullmatch(r"\d+\.\d to more than \d+\.\d ms", values[SIXTEEN]), values[SIXTEEN]


def test_details_and_markdown_name_it_once(review):
    table = options_table(review)
    col = [c.key for c in table.columns].index("nodes_note")
    assert table.columns[col].header == NODES_LABEL
    notes = {row[1]: row[col] for row in table.rows}
    assert notes[EIGHT] is None
    assert notes[SIXTEEN] == (
        f'held-out slow end open ("to more than"): {SLOW_END_OPEN_WORDS}; not modelled: {DP_EP_NOT_MODELLED}'
    )
    note = [c.key for c in table.columns].index("note")  # Options' Note stays short (trial 14 F15)
    assert "not modelled" not in (dict((row[1], row[note]) for row in table.rows)[SIXTEEN] or "")
    md = render_markdown(review)
    row = next(line for line in md.splitlines() if line.startswith("|") and f"| {SIXTEEN} |" in line)
    assert row.count("EPLB's redundant experts") == 1 and row.count(SLOW_END_OPEN_WORDS) >= 1
    eight = next(line for line in md.splitlines() if line.startswith("|") and f"| {EIGHT} |" in line)
    assert SLOW_END_OPEN_WORDS not in eight and "not modelled" not in eight


def test_levers_note_in_plan_words(review):
    lever = next(x for x in review.levers if x.name == "More GPUs per replica")
    assert "8 -> 16" in lever.change
    assert TP_SPANS in lever.note


def _details_headers(review) -> list[str]:
    import io

    import openpyxl

    from planner.export import render

    ws = openpyxl.load_workbook(io.BytesIO(render(review, "xlsx")))["Details"]
    return [c.value for c in ws[1]]


def test_details_md_and_csv_show_the_column_where_an_option_spans_nodes(review):
    """The 16-GPU dp-ep option has words (above): Details, the Markdown's options table and the CSV carry the column."""
    from planner.export import render

    assert NODES_LABEL in _details_headers(review)
    md = render(review, "md").decode()
    assert f"| {NODES_LABEL} |" in md
    header = render(review, "csv").decode().splitlines()[0].split(",")
    assert "nodes_note" in header
