"""Trial 15 (a capacity planner using `planner plan --rate/--trace/--replicas`; findings F3, F4, F6-F10 of its
findings.md), one class per finding.

The trial's cases: DeepSeek-R1 dp-ep on 8 x H200 at 10 requests/s of 1,000 / 500 tokens (p95 TTFT 2 s, TPOT 50 ms)
for F3; Llama-3.1-8B on 1 x H100 at 1,000 / 300 tokens for the rest."""

from __future__ import annotations

import pytest
from cli_support import one_line, run

from planner.units import counted

#: Llama-3.1-8B on one H100 with a 4k context: the trial's small case (F6, F7, F8, F9, F10).
SMALL = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4k", "--gpus", "1")
LENGTHS = ("--prompt-tokens", "1000", "--output-tokens", "300")


def plan_text(*args: str) -> str:
    """``planner plan ARGS`` run to success: its stdout."""
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r.stdout


class TestF10WordingAndFormat:
    """F10: "1 replicas", a context of 104857600 without separators, negative and zero lengths refused in two
    different ways, and the exit codes' convention (stated nowhere a user reads)."""

    def test_one_replica_lost_of_two_reads_1_replica(self):
        """The trial's `--rate 60 ... --replicas 2` printed "one replica lost: 1 replicas"; ``counted`` gives the
        singular (its own docstring: (1, "GPU") -> '1 GPU')."""
        text = plan_text(*SMALL, "--rate", "20", *LENGTHS, "--replicas", "2", "--ttft-target", "1")
        (line,) = [x for x in text.splitlines() if "one replica lost:" in x]
        assert "one replica lost: 1 replica at 20 requests/s" in line
        assert "1 replicas" not in text
        assert counted(1, "replica") == "1 replica"

    def test_a_context_past_the_limit_is_shown_with_thousands_separators(self):
        """`--context 100M` is 100 x 2^20 = 104,857,600 tokens (``planner.units.TOKEN_SUFFIXES``: M = 1,048,576);
        the limit 16,777,216 was already grouped, the value was not."""
        line = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "100M"), 2)
        assert line.endswith("from 1 to 16,777,216; got 104,857,600"), line

    @pytest.mark.parametrize("option", ["--prompt-tokens", "--output-tokens"])
    @pytest.mark.parametrize("typed", ["-3", "0", "-0.5", "0.5"])
    def test_a_length_below_one_token_gets_one_message_whatever_its_sign(self, option, typed):
        """The trial: `--output-tokens -3` read "'-3' is not a number of tokens", `--prompt-tokens 0` "0 tokens; give
        at least 1". Now one message for any length below 1 token, quoting what was typed and what is accepted."""
        lengths = {"--prompt-tokens": "1000", "--output-tokens": "300"} | {option: typed}
        r = run(*SMALL, "--rate", "1", *(x for kv in lengths.items() for x in kv))
        assert r.exit_code == 2
        assert (
            f"'{typed}' is less than 1 token; give a number of tokens of 1 or more, such as 207.5, 8,192, 1e4 or 8k"
            in r.output
        ), r.output

    def test_a_negative_context_reads_as_zero_does(self):
        """--context is whole tokens: the same message with "a whole number of tokens"."""
        for typed in ("-4k", "0"):
            r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", typed)
            assert r.exit_code == 2
            assert f"'{typed}' is less than 1 token; give a whole number of tokens of 1 or more" in r.output

    def test_the_exit_codes_are_stated_in_help_and_readme_as_the_errors_set_them(self):
        """planner/cli/__init__.py's docstring and planner/errors.py: 2 bad usage, 1 failure (kept; the trial saw
        "does not fit" exit 1 and an unknown name 2). Now `planner --help` and the README say so, and the codes are
        those said: an unknown name 2, weights that do not fit 1."""
        from pathlib import Path

        help_text = " ".join(run("--help").stdout.split())
        assert "Exit codes: 0 done; 2 bad input" in help_text and "1 a failure" in help_text
        readme = (Path(__file__).parents[1] / "README.md").read_text()
        assert "**Exit codes**" in readme
        assert run("plan", "--gpu", "H10", "--model", "llama3.1-8b", "--context", "4k").exit_code == 2
        assert run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--gpus", "1").exit_code == 1
