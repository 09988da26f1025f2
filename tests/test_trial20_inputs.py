"""Trial 20's input handling (F12): durations, a trace's ties and its comment lines."""

from __future__ import annotations

import random

import pytest
from cli_support import run

from planner.accuracy.published import looks_like_json_lines, read_csv_rows, read_json_lines_rows
from planner.errors import InvalidInputError
from planner.serving.load import trace_load
from planner.units import parse_seconds

PLAN = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096")


def _trace(path):
    read = read_json_lines_rows if looks_like_json_lines(path) else read_csv_rows
    return trace_load(read(path, 1000, "a trace file", comments=True), str(path))


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1.5sec", 1.5), ("60msec", 0.06), ("2 secs", 2.0), ("1.5 seconds", 1.5), ("800 usec", 8e-4), ("50 ms", 0.05)],
)
def test_the_unit_table_reads_common_spellings(text, seconds):
    assert parse_seconds(text, 60.0, "ttft_target_s") == pytest.approx(seconds)


def test_a_negative_duration_is_refused_as_negative_not_as_no_duration():
    """'-1s' got "'-1s' is not a duration" (trial 20 F12): it is one, and must be positive."""
    result = run(*PLAN, "--rate", "1", "--prompt-tokens", "100", "--output-tokens", "50", "--ttft-target", "-1s")
    assert result.exit_code == 2 and "'-1s' is negative: a duration here must be positive" in result.stderr
    result = run(*PLAN, "--rate", "1", "--prompt-tokens", "9", "--output-tokens", "9", "--tpot-target", "0ms")
    assert result.exit_code == 2 and "'0ms' is zero" in result.stderr


ROWS = [(0.0, 100, 50), (0.5, 300, 20), (0.5, 100, 80), (0.5, 100, 10), (1.0, 50, 50), (1.0, 60, 40), (2.0, 10, 10)]


def test_ties_in_arrival_replay_in_one_order_whatever_the_files(tmp_path):
    """Rows with the same arrival were replayed in file order, so a shuffled file gave other percentiles (trial 20 F12):
    now (arrival, prompt, output) orders them."""
    loads = []
    for seed in range(4):
        rows = ROWS[:]
        random.Random(seed).shuffle(rows)
        path = tmp_path / f"t{seed}.csv"
        path.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{a},{p},{o}\n" for a, p, o in rows))
        loads.append(_trace(path))
    assert all(t.lengths == loads[0].lengths and t.arrivals_s == loads[0].arrivals_s for t in loads)
    assert loads[0].lengths == [(p, o) for _, p, o in sorted(ROWS)]


def test_blank_and_comment_lines_follow_one_rule(tmp_path):
    """A blank line was skipped while '# comment' was an error (trial 20 F12): both are skipped, in CSV and JSON
    Lines, and a bad row is still named by its line in the file."""
    plain = tmp_path / "plain.csv"
    plain.write_text("arrival_s,prompt_tokens,output_tokens\n" + "".join(f"{a},{p},{o}\n" for a, p, o in ROWS))
    noted = tmp_path / "noted.csv"
    body = "".join(f"{a},{p},{o}\n" + ("# a note\n\n" if i == 2 else "") for i, (a, p, o) in enumerate(ROWS))
    noted.write_text("# recorded 2026-12-06\n\narrival_s,prompt_tokens,output_tokens\n" + body)
    jsonl = tmp_path / "noted.jsonl"
    jsonl.write_text(
        "# a JSON Lines trace\n"
        + "".join(f'{{"arrival_s": {a}, "prompt_tokens": {p}, "output_tokens": {o}}}\n  # n\n' for a, p, o in ROWS)
    )
    want = _trace(plain)
    for path in (noted, jsonl):
        got = _trace(path)
        assert (got.arrivals_s, got.lengths) == (want.arrivals_s, want.lengths)
    bad = tmp_path / "bad.csv"
    bad.write_text("# note\narrival_s,prompt_tokens,output_tokens\n0,10,10\n# note\n1,x,10\n")
    with pytest.raises(InvalidInputError, match="line 5"):
        _trace(bad)
    result = run(*PLAN, "--trace", str(noted), "--ttft-target", "2s")
    assert result.exit_code == 0, result.output
