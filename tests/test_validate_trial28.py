"""Trial 28's findings on ``planner validate`` of a user's serving runs (F15, F6).

F15: a hand-typed row with ``ttft_median_ms`` and ``ttft_p99_ms`` swapped (median 489.2, p99 171.9) and one with a
mean TPOT typed 26000 for 26.0 were scored as model error (TTFT p99 +109.1%, TPOT mean -99.9%) and failed a --check
gate. Such a row is now listed under "Not scored" with the columns named (``under_load.row_contradiction``) and left
out of every error and the verdict.

F6: validate's FAIL on the user's own runs (p99 TTFT up to 2.9x the prediction) said nothing of how to carry that into
a budget. The FAIL now ends with the ``latency_margin`` that covers the runs (``planner.accuracy.margin_hint``).

Expected values: the trial's rows (/tmp/trial28/mine/bad.csv, quoted below); the rules' bounds from their
docstrings; the margin from the test rows' own published / predicted, read back from validate's --json.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from cli_support import run

from planner.accuracy.margin_hint import DOCS
from planner.accuracy.published import load_decode_rows
from planner.accuracy.under_load import MEAN_OVER_P99, row_contradiction

#: The trial's mine/bad.csv header and rows BAD-1 (TTFT and TPOT median / p99 swapped) and BAD-3 (mean TPOT 26000),
#: and its mine/myruns.csv OURS-70B-2, the same run typed right.
TRIAL_HEADER = (
    "record_id,gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,burstiness,input_len,"
    "output_len,ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms,itl_median_ms,itl_p99_ms,ttft_ms,tpot_ms,"
    "output_throughput_tok_s"
)
TRIAL_ROWS = {
    "BAD-1": "H100,Llama-3.3-70B,4,vllm,0.11.0,2,500,1,1498.7,297.3,489.2,171.9,31.8,25.7,22.3,118.5,190.4,26.0,589.7",
    "BAD-3": "H100,Llama-3.3-70B,4,vllm,0.11.0,2,500,1,1498.7,297.3,171.9,489.2,25.7,31.8,22.3,118.5,190.4,26000,589.7",
    "OURS-70B-2": "H100,Llama-3.3-70B,4,vllm,0.11.0,2,500,1,1498.7,297.3,171.9,489.2,25.7,31.8,22.3,118.5,190.4,26.0,589.7",
}

#: A small run (fast to simulate): Llama-3.1-8B on one H100, 100 prompts of 1,000 / 100 tokens at 2 req/s.
HEADER = (
    "record_id,gpu,model,tensor_parallel_size,engine,engine_version,request_rate,num_prompts,burstiness,input_len,"
    "output_len,ttft_median_ms,ttft_p99_ms,tpot_median_ms,tpot_p99_ms"
)
RUN = "H100,Llama-3.1-8B,1,vllm,0.11.0,2,100,1,1000,100"
FIGURES = ("ttft_median_ms", "ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms")


def _write(path: Path, header: str, rows: dict[str, str]) -> Path:
    path.write_text("\n".join([header, *(f"{rid},{cells}" for rid, cells in rows.items())]) + "\n")
    return path


def _json(*args: str) -> tuple[int, dict]:
    result = run("validate", *args, "--json")
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def trial_rows(tmp_path_factory):
    path = _write(tmp_path_factory.mktemp("t28") / "bad.csv", TRIAL_HEADER, TRIAL_ROWS)
    return {r.record_id: r for r in load_decode_rows(path)}


@pytest.fixture(scope="module")
def predicted(tmp_path_factory) -> dict[str, float]:
    """The run's four figures as validate predicts them (its --json), whatever was published."""
    path = _write(tmp_path_factory.mktemp("t28") / "probe.csv", HEADER, {"PROBE": f"{RUN},60,150,12,14"})
    _, out = _json("--decode", str(path))
    return {r["quantity"]: r["predicted"] for r in out["rows"]}


@pytest.fixture(scope="module")
def exact_and_swapped(tmp_path_factory, predicted) -> Path:
    """EXACT: published = predicted (3 decimals), so it passes every limit; SWAPPED: the same run with its TTFT median
    and p99 cells swapped (the trial's BAD-1 slip), whose errors, were it scored, would fail TTFT's."""
    p = {q: round(predicted[q], 3) for q in FIGURES}
    exact = [p["ttft_median_ms"], p["ttft_p99_ms"], p["tpot_median_ms"], p["tpot_p99_ms"]]
    swapped = [p["ttft_p99_ms"], p["ttft_median_ms"], p["tpot_median_ms"], p["tpot_p99_ms"]]
    rows = {"EXACT": ",".join([RUN, *map(str, exact)]), "SWAPPED": ",".join([RUN, *map(str, swapped)])}
    return _write(tmp_path_factory.mktemp("t28") / "mine.csv", HEADER, rows)


# ---- F15: the rule ----


def test_swapped_median_and_p99_name_both_columns_and_the_likely_cause(trial_rows):
    why = row_contradiction(trial_rows["BAD-1"])
    assert "ttft_p99_ms 171.9 < ttft_median_ms 489.2: columns swapped?" in why
    assert "tpot_p99_ms 25.7 < tpot_median_ms 31.8: columns swapped?" in why
    assert "ttft_ms" not in why  # its mean against swapped columns says no more than the swap


def test_a_mean_tpot_818_times_its_p99_is_named_as_a_unit_slip(trial_rows):
    why = row_contradiction(trial_rows["BAD-3"])
    assert why.startswith("tpot_ms 26,000 is 818x tpot_p99_ms 31.8")  # 26,000 / 31.8 = 817.6
    assert "unit slip" in why


def test_the_same_run_typed_right_contradicts_nothing(trial_rows):
    assert row_contradiction(trial_rows["OURS-70B-2"]) == ""


@pytest.mark.parametrize(
    ("cells", "contradicts"),
    [
        ("20,20,10,10", False),  # ties: every request alike
        ("21,20.8,10,10", False),  # 1% apart: a printed figure's rounding (ORDER_SLACK)
        ("21,20.5,10,10", True),  # 2.4% apart: not rounding
    ],
)
def test_percentiles_may_tie_or_differ_by_rounding_but_not_fall(tmp_path, cells, contradicts):
    rows = load_decode_rows(_write(tmp_path / "r.csv", HEADER, {"R": f"{RUN},{cells}"}))
    assert bool(row_contradiction(rows[0])) is contradicts


def test_a_mean_below_half_its_median_is_seconds_in_a_millisecond_column(tmp_path):
    # at least half the requests lie at or above the median, so mean >= median / 2: 0.026 < 25.7 / 2
    rows = load_decode_rows(_write(tmp_path / "r.csv", HEADER + ",tpot_ms", {"R": f"{RUN},60,150,25.7,31.8,0.026"}))
    assert "tpot_ms 0.026 is below 50% of tpot_median_ms 25.7" in row_contradiction(rows[0])


def test_a_mean_just_under_twice_its_p99_is_not_refused(tmp_path):
    mean = 31.8 * MEAN_OVER_P99 * 0.99  # the slowest 1% averaging ~99x the p99: extreme, not refused
    rows = load_decode_rows(_write(tmp_path / "r.csv", HEADER + ",tpot_ms", {"R": f"{RUN},60,150,25.7,31.8,{mean}"}))
    assert row_contradiction(rows[0]) == ""


def test_no_shipped_loaded_run_contradicts_itself():
    """catalogs/reference/load_public.csv: every published run's percentiles are in order (none is dropped)."""
    assert [r.record_id for r in load_decode_rows() if row_contradiction(r)] == []
    from planner.accuracy.published import reference_dir

    rows = load_decode_rows(reference_dir() / "load_public.csv")
    assert [r.record_id for r in rows if row_contradiction(r)] == []


# ---- F15: validate ----


def test_validate_lists_a_swapped_row_as_not_scored_and_passes_on_the_rest(exact_and_swapped, predicted):
    result = run("validate", "--decode", str(exact_and_swapped), "--check")
    assert result.exit_code == 0, result.output  # were SWAPPED scored, its TTFT errors would fail the gate
    out = result.stdout
    median, p99 = round(predicted["ttft_median_ms"], 3), round(predicted["ttft_p99_ms"], 3)
    assert "Not scored (the row contradicts itself" in out
    assert f"  SWAPPED: ttft_p99_ms {median:,.6g} < ttft_median_ms {p99:,.6g}: columns swapped?" in out
    assert "Not predicted:" not in out
    assert "(1 row, 1 not scored; limits 20% / 50%)" in out  # TTFT p99's summary: EXACT alone
    assert "PASS: Serving runs under load" in out and "Next step" not in out


def test_validate_json_carries_the_swapped_row_as_null_with_its_reason_outside_the_summary(exact_and_swapped):
    code, out = _json("--decode", str(exact_and_swapped))
    swapped = [r for r in out["rows"] if r["record_id"] == "SWAPPED"]
    assert swapped and all(r["predicted"] is None and r["not_scored"] is True for r in swapped)
    assert all("columns swapped?" in r["reason"] for r in swapped)
    assert out["verdict"] == "PASS" and out["margin_hints"] == []
    for q in FIGURES:  # EXACT's error only: published = predicted to 3 decimals
        assert out["summary"][q]["worst_abs_error"] < 1e-4
    assert not any("not_scored" in r for r in out["rows"] if r["record_id"] == "EXACT")


def test_a_file_whose_every_row_contradicts_itself_does_not_pass(tmp_path, trial_rows):
    """Nothing scored is no PASS (a --check gate on a file of slips alone fails, as one of unpredictable rows does)."""
    path = _write(tmp_path / "bad.csv", TRIAL_HEADER, {k: v for k, v in TRIAL_ROWS.items() if k.startswith("BAD")})
    result = run("validate", "--decode", str(path), "--check")
    assert result.exit_code == 1
    assert "no row scored: each contradicts itself (Not scored)" in result.stdout
    assert "BAD-1: ttft_p99_ms 171.9 < ttft_median_ms 489.2: columns swapped?" in result.stdout
    assert "Next step" not in result.stdout


# ---- F6: the next step ----


@pytest.fixture(scope="module")
def slow_and_fast(tmp_path_factory, predicted) -> Path:
    """SLOW: the H100 run with its p99 TTFT published at 3x the prediction (TTFT p99 fails, slower than predicted);
    FAST: the run on an H200 (another deployment) with only a p99 TTFT of 1 ms (fails, faster than predicted)."""
    p = {q: round(predicted[q], 3) for q in FIGURES}
    slow = [p["ttft_median_ms"], round(3 * predicted["ttft_p99_ms"], 3), p["tpot_median_ms"], p["tpot_p99_ms"]]
    rows = {"SLOW": ",".join([RUN, *map(str, slow)]), "FAST": RUN.replace("H100", "H200") + ",,1,,"}
    return _write(tmp_path_factory.mktemp("t28") / "slow.csv", HEADER, rows)


def test_a_fail_slower_than_predicted_ends_with_the_latency_margin_that_covers_the_runs(slow_and_fast):
    code, out = _json("--decode", str(slow_and_fast), "--check")
    assert code == 1 and out["verdict"] == "FAIL"
    # FAST's deployment fails too, but faster than predicted: a margin only adds, so it gets the calibrate hint
    # (trial 29 F10: its one run predicted 1.5x or more what it measured), not a margin
    (fast,) = [h for h in out["margin_hints"] if h["kind"] == "predicted_slower"]
    assert fast["deployment"].startswith("H200") and fast["latency_margin"] is None
    (hint,) = [h for h in out["margin_hints"] if h["kind"] == "latency_margin"]
    row = next(r for r in out["rows"] if r["record_id"] == "SLOW" and r["quantity"] == "ttft_p99_ms")
    # the margin is published / predicted - 1 of the worst figure, rounded up to the hundredth (~2.00 here: 3x)
    expected = math.ceil(round((row["published"] / row["predicted"] - 1) * 100, 6)) / 100
    assert hint["latency_margin"] == expected and 1.99 <= expected <= 2.01
    assert (hint["record_id"], hint["quantity"]) == ("SLOW", "ttft_p99_ms")
    assert hint["deployment"].startswith("H100 SXM 80GB, Llama-3.1-8B, vLLM, TP1")
    assert hint["published_over_predicted"] * row["predicted"] == pytest.approx(row["published"])

    text = run("validate", "--decode", str(slow_and_fast)).stdout
    lines = text.splitlines()
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL: Serving runs under load"))
    assert lines[fail + 1] == hint["text"] and lines[fail + 2] == fast["text"]  # one line each, right after the FAIL
    assert lines[fail + 3] == ""
    assert f"latency_margin = {expected:.2f} in the scenario's [workload]" in hint["text"]
    assert "your runs' p99 TTFT is up to" in hint["text"] and DOCS in hint["text"]


def test_the_export_docs_say_latency_margin_is_added_to_the_prediction():
    """The hint's reading of the key: the prediction x (1 + latency_margin) meets the target (docs/export.md)."""
    docs = (Path(__file__).resolve().parents[1] / "docs" / "export.md").read_text()
    assert '`latency_margin` | `"model-range"`' in docs and "(0.1: prediction + 10%" in docs
    assert "3. **Margin.**" in docs  # the section DOCS names


def test_the_csv_fixture_rows_read_as_serving_runs_at_a_rate(exact_and_swapped):
    rows = load_decode_rows(exact_and_swapped)
    assert [(r.kind, r.request_rate, r.num_prompts) for r in rows] == [("serving", 2.0, 100)] * 2
    with exact_and_swapped.open() as f:
        assert [r["record_id"] for r in csv.DictReader(f)] == ["EXACT", "SWAPPED"]
