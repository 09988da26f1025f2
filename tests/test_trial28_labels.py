"""Trial 28 F5, F10, F11, F12: what plan and the review call their percentiles, costs and engine.

F5: ``plan`` had one ``--percentile`` for the high lengths and the targets, so a review with ``high_percentile = 95``
and ``latency_percentile = 99`` (p95 lengths from the logs, a p99 SLO) could not be reproduced; ``--length-percentile``
sets the lengths' apart. F10: the export headline said "what memory holds at the p99 lengths" where memory is sized at
the p95 ones. F11: "$ per M output tokens" is the decode share of the bill (prompts billed per input token), 15% below
the monthly cost / output tokens a finance reader divides; the header says so and an all-in column sits beside it.
F12: ``plan --engine vllm==0.11.0`` named the profile ("as vllm-fullsort admits them"), never the release, and three
batch limits in one block read alike; without --engine the release assumed was nowhere in plan's output.
"""

from __future__ import annotations

import json

import openpyxl
import pytest
from cli_support import run

from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.export import build_review, render
from planner.export.glossary import GLOSSARY, OUTPUT_ALL_IN_LABEL, OUTPUT_SHARE_LABEL
from planner.export.scenario import load_scenario
from planner.export.sizing import tokens_per_month
from planner.export.tables import options_table, tco_table
from planner.serving.fleet import fewest_replicas
from planner.serving.load import Replica, sizing_requests, spread_lengths

#: Llama-3.1-8B on 1 x H100 at 20 requests/s, 800 / p95 3,000 prompt and 400 / p95 1,200 output tokens (the README
#: example's lengths: a 4,200-token slot), a p99 SLO
MIXED = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k", "--gpus", "1", "--rate", "20",
         "--prompt-tokens", "800", "--output-tokens", "400", "--prompt-tokens-high", "3000",
         "--output-tokens-high", "1200", "--ttft-target", "0.5", "--tpot-target", "20ms", "--percentile", "99")  # fmt: skip
GOALS_S = (0.5, 0.020)


def test_plan_sizes_p95_lengths_at_a_p99_slo_as_the_core_does():
    """``--percentile 99 --length-percentile 95``: the requests drawn at p95 (as export's ``high_percentile``,
    ``Workload.simulated_lengths``), the fleet sized on their p99 (as its ``latency_percentile``,
    ``evaluate._simulated``): the same replicas and p99 figures as ``fewest_replicas`` on those requests."""
    r = run(*MIXED, "--length-percentile", "95", "--json")
    assert r.exit_code == 0, r.output
    under = json.loads(r.output)["under_load"]
    requests = sizing_requests(99)  # a p99 target's draw: 5,000 requests (``sizing_requests``, trial 28 F13)
    lengths = spread_lengths(800, 3000, 400, 1200, 95, requests, 131072)
    assert lengths != spread_lengths(800, 3000, 400, 1200, 99, requests, 131072)  # the p99 fit is another
    core = fewest_replicas(
        Replica("H100", "Llama-3.1-8B", 1), 800, 400, 20.0, percentile=99, ttft_target_s=GOALS_S[0],
        tpot_target_s=GOALS_S[1], lengths=lengths,
    )  # fmt: skip
    assert under["replicas"] == core.replicas
    assert under["ttft_s"]["p99"] == pytest.approx(core.result.ttft_s.at(99))
    assert under["tpot_s"]["p99"] == pytest.approx(core.result.tpot_s.at(99))


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--length-percentile", "97"], "--length-percentile"),
        (["--length-percentile", "50"], "--prompt-tokens-high is the length at --length-percentile, which must then"),
        (["--percentile", "50"], "--length-percentile sets it apart from the targets' --percentile"),
    ],
)
def test_a_length_percentile_plan_cannot_draw_is_refused(extra, words):
    r = run(*MIXED, *extra)
    assert r.exit_code == 2 and words in r.output, r.output


def test_a_length_percentile_without_high_lengths_is_refused():
    r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k", "--length-percentile", "95")
    assert r.exit_code == 2 and "--length-percentile is the percentile of --prompt-tokens-high" in r.output, r.output


def test_the_help_says_which_percentile_is_which():
    text = " ".join(run("plan", "--help").output.split())
    assert "--length-percentile" in text and "high_percentile = 95 and latency_percentile = 99" in text
    assert "the prompt length at --length-percentile (default --percentile" in text


SCENARIO = """title = "p95 lengths, p99 SLO"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 4
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 200
output_tokens_high = 600
high_percentile = 95
latency_percentile = 99
sizing_lengths = "means"
ttft_target_s = 0.3
tpot_target_s = 0.0135
[[option]]
name = "H100"
gpu = "H100"
model = "Llama-3.1-8B"
gpus_per_replica = 1
"""


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixed") / "s.toml"
    path.write_text(SCENARIO)
    return build_review(load_scenario(path), default_catalog(), date="2026-12-07")


def test_the_headline_names_the_lengths_percentile_memory_is_sized_at(mixed):
    """F10: sized on the simulated p99, memory at the p95 lengths (Assumptions: "p95 prompt + p95 output")."""
    line = summary_lines(mixed)[0]
    assert "replicas on simulated p99 TTFT" in line
    assert "(max_num_seqs set to what memory holds at the p95 lengths, within the engine's limit)" in line
    assert "p99 lengths" not in line


def test_the_output_rate_says_it_is_the_decode_share_and_the_all_in_rate_sits_beside_it(mixed):
    """F11: input x its rate + output x its rate is the bill; the all-in rate is the bill over the output tokens."""
    f = mixed.recommended.fleet
    monthly = float(f.monthly_usd)
    tokens_in, tokens_out = (float(tokens_per_month(4, n)) / 1e6 for n in (800, 200))
    assert float(f.usd_per_million_input) * tokens_in + float(f.usd_per_million_output) * tokens_out == pytest.approx(
        monthly
    )
    assert float(f.usd_per_million_output_all_in) == pytest.approx(monthly / tokens_out)
    assert float(f.usd_per_million_output_all_in) > float(f.usd_per_million_output)
    assert "decode share" in OUTPUT_SHARE_LABEL and "monthly cost / output tokens" in OUTPUT_ALL_IN_LABEL
    for table in (options_table(mixed), tco_table(mixed)):
        headers = [c.header for c in table.columns]
        at = headers.index(OUTPUT_SHARE_LABEL)
        assert headers[at + 1] == OUTPUT_ALL_IN_LABEL and "$ per M output tokens" not in headers
    assert OUTPUT_ALL_IN_LABEL in dict(GLOSSARY)


def test_every_rendering_of_the_review_uses_the_same_labels(mixed, tmp_path):
    """md and xlsx (the pdf prints the xlsx): the Options and Costs headers, the Summary rows; the Options cells
    follow an edited price as the monthly cost does (a formula of the cost's cell, by the column's key)."""
    md = render(mixed, "md").decode()
    assert md.count(OUTPUT_SHARE_LABEL.replace("$", "\\$")) + md.count(OUTPUT_SHARE_LABEL) >= 2, md
    assert OUTPUT_ALL_IN_LABEL.replace("$", "\\$") in md or OUTPUT_ALL_IN_LABEL in md
    path = tmp_path / "r.xlsx"
    path.write_bytes(render(mixed, "xlsx"))
    book = openpyxl.load_workbook(path)
    for sheet in ("Options", "Costs"):
        header = [c.value for c in book[sheet][1]]
        assert header.index(OUTPUT_ALL_IN_LABEL) == header.index(OUTPUT_SHARE_LABEL) + 1, sheet
    header = [c.value for c in book["Options"][1]]
    cell = book["Options"].cell(row=2, column=header.index(OUTPUT_ALL_IN_LABEL) + 1).value
    monthly = openpyxl.utils.get_column_letter(header.index("Monthly cost") + 1)
    assert isinstance(cell, str) and cell.startswith("=") and f"*{monthly}2/" in cell
    summary = [c.value for c in book["Summary"]["A"]]
    assert summary.index(OUTPUT_ALL_IN_LABEL) == summary.index(OUTPUT_SHARE_LABEL) + 1


ENGINE = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k", "--gpus", "1")


def test_plan_without_engine_names_the_release_it_assumes():
    """F12: README's Time section models vLLM 0.19.0 for the bare ``vllm``; plan's head now says so."""
    out = run(*ENGINE).output.splitlines()
    assert out[1] == "engine: vLLM 0.19.0 (the default, --engine vllm; --engine vllm==X for another release)"
    pinned = run(*ENGINE, "--engine", "vllm==0.11.0").output.splitlines()
    assert pinned[1] == "engine: vLLM 0.11.0 (as --engine asked; planner models it with its vllm-fullsort profile)"
    assert not run(*ENGINE, "--engine", "sglang").output.splitlines()[1].startswith("engine:")


def test_plan_names_the_release_asked_and_labels_each_batch_limit():
    """F12: the admission "as vLLM 0.11.0 admits them", the simulated run's limit, the engine's default setting and
    what planner export would set, each named for what it is."""
    r = run(*ENGINE, "--engine", "vllm==0.11.0", "--rate", "4", "--replicas", "1", "--prompt-tokens", "1500",
            "--output-tokens", "300", "--ttft-target", "2", "--tpot-target", "60ms", "--percentile", "99")  # fmt: skip
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "vllm-fullsort admits" not in text
    assert "as vLLM 0.11.0 admits them: the simulated run's limit)" in text
    line = next(x for x in r.output.splitlines() if x.startswith("  max_num_seqs:"))
    assert line.startswith("  max_num_seqs: the engine's 1,024, its default setting")
    assert "planner export sets it to what memory holds at" in line
    assert "a review's 'Sequences in flight per replica')" in line


#: ENGINE at 4 requests/s on one given replica, 1,500 / p95 4,000 prompt and 300 / p95 600 output tokens, p99 targets
GIVEN = (*ENGINE, "--engine", "vllm==0.11.0", "--rate", "4", "--replicas", "1", "--prompt-tokens", "1500",
         "--output-tokens", "300", "--prompt-tokens-high", "4000", "--output-tokens-high", "600", "--ttft-target", "2",
         "--tpot-target", "60ms", "--percentile", "99", "--json")  # fmt: skip


@pytest.mark.parametrize(("extra", "length_q"), [((), 99), (("--length-percentile", "95"), 95)])
def test_plan_json_states_the_engine_release_and_the_length_percentile(extra, length_q):
    """``plan --json`` carries what the text's head and lengths lines say: ``engine_release`` beside ``engine`` (the
    release the "engine:" line names; ``engine`` stays the profile modelled) and ``under_load.length_percentile``
    beside the targets' ``percentile`` (the high lengths' percentile: ``--length-percentile``, default
    ``--percentile``), the one ``length_fit`` is drawn at."""
    r = run(*GIVEN, *extra)
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["engine"], out["engine_release"]) == ("vllm-fullsort", "vLLM 0.11.0")
    under = out["under_load"]
    assert (under["percentile"], under["length_percentile"]) == (99, length_q)
    assert under["length_fit"]["percentile"] == length_q


def test_plan_json_names_the_default_release_and_none_for_an_engine_without_one():
    """The bare ``vllm``: ``engine_release`` "vLLM 0.19.0" (README's Time section); ``--engine sglang``, which names
    no release: null, as the text prints no "engine:" line."""
    bare = json.loads(run(*ENGINE, "--json").stdout)
    assert (bare["engine"], bare["engine_release"]) == ("vllm", "vLLM 0.19.0")
    assert json.loads(run(*ENGINE, "--engine", "sglang", "--json").stdout)["engine_release"] is None
