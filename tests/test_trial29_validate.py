"""Trial 29's findings on ``planner validate --decode`` of a user's serving runs (F8, F10).

F8: a CSV typed from ``vllm bench serve``'s output, with vLLM's own key names as columns (``mean_ttft_ms``,
``mean_tpot_ms``), had those columns dropped as "unknown column ... not read" with no "did you mean"; renamed to
``ttft_mean_ms`` / ``tpot_mean_ms`` (the quantities ``--json`` names), they were "not compared", while ``--help`` and
the table's title said the means are compared. A decode CSV now reads the clients' key names and those two as the
columns they name, from one table shared with the result-file reader (``published.CLIENT_FIGURE_KEYS``), and the
means are compared from the same simulation as the medians.

F10: the "Next step" advised ``latency_margin = 0.14`` from one run 1.13x slower than predicted while the other two
were predicted 2-6.7x too slow; it now says first that the plan is conservative for these runs and how to calibrate.

Expected values: the trial's CSV rows (/tmp/trial29/mine/my-runs.csv and my-runs2.csv, quoted below), read back
from validate's --json; the documented-name file is the reference the vLLM-name file must equal figure for figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run

from planner.accuracy.margin_hint import FAST_RUNS_RATIO, _faster_runs_hint
from planner.accuracy.published import CLIENT_FIGURE_KEYS, DECODE_COLUMN_ALIASES, load_decode_rows
from planner.accuracy.serving_results import FIGURE_KEYS
from planner.accuracy.validation import Check
from planner.errors import InvalidInputError

#: The trial's mine/my-runs2.csv (the documented column names) ...
DOCUMENTED = (
    "gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,input_len,output_len,ttft_mean_ms,"
    "ttft_median_ms,ttft_p99_ms,tpot_mean_ms,tpot_median_ms,tpot_p99_ms,itl_median_ms,itl_p99_ms,"
    "output_throughput_tok_s"
)
#: ... and the same runs under every key name vllm bench serve --save-result writes for them (mine/my-runs.csv wrote
#: mean_ttft_ms and mean_tpot_ms so), with its mean ITL and request throughput, which validate does not compare.
VLLM_NAMES = (
    "gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,input_len,output_len,mean_ttft_ms,"
    "median_ttft_ms,p99_ttft_ms,mean_tpot_ms,median_tpot_ms,p99_tpot_ms,median_itl_ms,p99_itl_ms,output_throughput"
)
ROWS = [
    "H100,Llama-3.3-70B-Instruct,8,vllm,0.11.0,0.5,200,12000,350,812.4,745.1,1650.3,16.2,15.8,24.9,14.1,180.2,172.5",
    "H100,Llama-3.3-70B-Instruct,8,vllm,0.11.0,1.0,200,12000,350,1104.7,980.3,2410.8,21.5,20.9,38.7,14.6,395.0,339.8",
    'H100,Llama-3.3-70B-Instruct,8,vllm,0.11.0,1.5,200,12000,350,"2,130.5",1870.2,5120.9,31.8,29.4,61.2,15.0,610.4,'
    "498.1",
]
#: A small run (fast to simulate, as tests/test_validate_trial28.py): Llama-3.1-8B on one H100, 100 prompts at 2 req/s.
SMALL_HEADER = (
    "record_id,gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,input_len,output_len"
)
SMALL_RUN = "S1,H100,Llama-3.1-8B,1,vllm,0.11.0,2,100,1000,100"


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _json(*args: str):
    result = run("validate", *args, "--json")
    return result, json.loads(result.stdout)


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> dict[str, tuple]:
    """validate --json of the trial's runs under the documented names and under vLLM's."""
    d = tmp_path_factory.mktemp("t29")
    return {
        "documented": _json("--decode", str(_write(d / "my-runs2.csv", DOCUMENTED, ROWS))),
        "vllm": _json("--decode", str(_write(d / "my-runs.csv", VLLM_NAMES, ROWS))),
    }


# ---- F8: vLLM's key names in a CSV, and the means compared ----


def test_one_alias_table_serves_the_result_file_and_the_csv():
    assert FIGURE_KEYS is CLIENT_FIGURE_KEYS  # the result-file reader's table is the CSV's (not a second copy)
    assert DECODE_COLUMN_ALIASES["mean_ttft_ms"] == DECODE_COLUMN_ALIASES["ttft_mean_ms"] == "ttft_ms"
    assert DECODE_COLUMN_ALIASES["mean_tpot_ms"] == DECODE_COLUMN_ALIASES["tpot_mean_ms"] == "tpot_ms"
    assert DECODE_COLUMN_ALIASES["median_itl_ms"] == "itl_median_ms"
    assert DECODE_COLUMN_ALIASES["output_throughput"] == "output_throughput_tok_s"


def test_vllm_key_names_are_read_with_no_unknown_column_warning(both):
    result, out = both["vllm"]
    assert "unknown column" not in result.stderr and "not compared" not in result.stderr
    published = {(r["record_id"], r["quantity"]): r["published"] for r in out["rows"]}
    # the trial's row1 and row3, as typed: mean TTFT 812.4 and "2,130.5" ms, mean TPOT 16.2, p99 ITL 610.4, 498.1 tok/s
    assert published[("row1", "ttft_mean_ms")] == pytest.approx(812.4)
    assert published[("row3", "ttft_mean_ms")] == pytest.approx(2130.5)
    assert published[("row1", "tpot_mean_ms")] == pytest.approx(16.2)
    assert published[("row3", "itl_p99_ms")] == pytest.approx(610.4)
    assert published[("row3", "throughput_tok_s")] == pytest.approx(498.1)


def test_the_means_are_compared_alike_under_either_name(both):
    """The documented ttft_mean_ms / tpot_mean_ms (the trial's my-runs2.csv: "not compared") and vLLM's names give one
    table, figure for figure, the means predicted (the mean of the simulated requests, the medians' simulation)."""
    (doc_result, doc), (_, vllm) = both["documented"], both["vllm"]
    assert "not compared" not in doc_result.stderr
    assert doc["rows"] == vllm["rows"] and doc["summary"] == vllm["summary"]
    means = [r for r in doc["rows"] if r["quantity"] in ("ttft_mean_ms", "tpot_mean_ms")]
    assert len(means) == 6 and all(r["predicted"] is not None and r["predicted"] > 0 for r in means)
    assert doc["summary"]["ttft_mean_ms"]["limits"] == {"median": 0.15, "worst": 0.40}  # held as the medians


def test_the_text_table_shows_the_means_it_says_it_includes(tmp_path):
    path = _write(tmp_path / "one.csv", VLLM_NAMES, ROWS[:1])
    out = run("validate", "--decode", str(path)).stdout
    assert "means included" in out
    assert "TTFT mean ms" in out and "TPOT mean ms" in out
    assert "row1   TTFT mean ms" in out and "812.40" in out  # the published mean as typed


def test_a_misspelt_vllm_key_gets_a_did_you_mean(tmp_path):
    path = _write(tmp_path / "typo.csv", f"{SMALL_HEADER},mean_ttft_msx,ttft_mean", [f"{SMALL_RUN},120,120"])
    err = run("validate", "--decode", str(path)).stderr
    assert "unknown column 'mean_ttft_msx' in" in err and "did you mean mean_ttft_ms?" in err
    assert "unknown column 'ttft_mean' in" in err and "did you mean ttft_mean_ms?" in err


def test_one_figure_under_two_names_is_refused(tmp_path):
    path = _write(tmp_path / "twice.csv", f"{SMALL_HEADER},ttft_ms,mean_ttft_ms", [f"{SMALL_RUN},120,121"])
    with pytest.raises(InvalidInputError, match=r"columns 'ttft_ms' and 'mean_ttft_ms' both give ttft_ms.*keep one"):
        load_decode_rows(path)
    result = run("validate", "--decode", str(path))
    assert result.exit_code == 2 and "both give ttft_ms" in result.stderr


def test_vllm_figures_not_compared_are_named_in_a_note_not_as_unknown(tmp_path):
    header = f"{SMALL_HEADER},median_ttft_ms,mean_itl_ms,std_ttft_ms,request_throughput"
    path = _write(tmp_path / "other.csv", header, [f"{SMALL_RUN},120,9.5,30,1.9"])
    err = run("validate", "--decode", str(path)).stderr
    assert "unknown column" not in err
    assert "columns mean_itl_ms, std_ttft_ms, request_throughput not compared" in err
    assert "the means of TTFT and TPOT (ttft_ms or ttft_mean_ms, tpot_ms or tpot_mean_ms)" in err


# ---- F10: the other direction ----


def _check(rid: str, quantity: str, predicted: float, published: float) -> Check:
    return Check(rid, quantity, "label", predicted, published)


def test_most_runs_predicted_much_slower_get_the_calibrate_hint():
    """2 of 3 runs with a TTFT / TPOT predicted 1.5x or more what they measured (the trial's row2 TPOT median 42.31
    against 20.90, 2.02x; row3 196.57 against 29.40, 6.69x); row1 slower than predicted (745.1 against 657.25)."""
    checks = [
        _check("row1", "ttft_median_ms", 657.25, 745.1),
        _check("row2", "tpot_median_ms", 42.31, 20.90),
        _check("row3", "tpot_median_ms", 196.57, 29.40),
    ]
    hint = _faster_runs_hint("H100 ...", checks)
    assert hint is not None and hint.kind == "predicted_slower" and (hint.faster_runs, hint.runs) == (2, 3)
    assert (hint.record_id, hint.quantity) == ("row3", "tpot_median_ms")
    assert "2 of 3 have a TTFT or TPOT predicted 1.5x or more" in hint.text and "6.69x" in hint.text
    assert "planner calibrate" in hint.text and "--max-concurrency" in hint.text
    assert hint.as_dict()["latency_margin"] is None and hint.as_dict()["runs_predicted_slower"] == 2


def test_one_run_of_three_predicted_slower_is_not_most():
    checks = [
        _check("a", "ttft_median_ms", 657.25, 745.1),
        _check("b", "ttft_median_ms", 700.0, 745.1),
        _check("c", "tpot_median_ms", 2.0 * 29.4, 29.4),
    ]
    assert _faster_runs_hint("H100 ...", checks) is None
    # at the ratio itself it counts: 1.5 x published
    at = [_check("a", "tpot_p99_ms", FAST_RUNS_RATIO * 20.0, 20.0)]
    assert _faster_runs_hint("H100 ...", at) is not None


def test_validate_gives_both_hints_for_the_trial_runs(both):
    """The trial's runs: the calibrate hint first, then the margin for row1 alone (745.1 / 657.2 ms: 0.14)."""
    _, out = both["documented"]
    kinds = [(h["kind"], h["record_id"]) for h in out["margin_hints"]]
    assert kinds == [("predicted_slower", "row3"), ("latency_margin", "row1")]
    margin = out["margin_hints"][1]
    assert margin["latency_margin"] == 0.14
    assert "where your runs ran slower than predicted, their median TTFT is up to 1.13x" in margin["text"]
    slower = out["margin_hints"][0]
    assert slower["runs"] == 3 and slower["runs_predicted_slower"] == 2
