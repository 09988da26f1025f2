"""Measured request lengths at a rate (trial 28 F9): ``planner plan --rate R --lengths FILE`` and a scenario's
``lengths_file``. One reader (``planner.io.lengths.read_lengths``) and one resampler
(``planner.serving.load.resampled_lengths``) serve both; bad files are refused in one line naming the file and the
line, exit 2. And trial 28 F2: ``--prompt-tokens-high``'s help says what happens past a lognormal's reach, and the
refusal suggests the measured sample instead."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from cli_support import one_line, run

from planner.errors import InvalidInputError
from planner.io.lengths import LengthsFileError, read_lengths
from planner.serving.load import DEFAULT_REQUESTS, resampled_lengths

PLAN = ["plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--gpus", "1"]

#: Ten requests of a long-tailed chat mix (p95 / mean of the prompt 3.1: past no fit, as the file is drawn as it is).
ROWS = [(120, 40), (300, 80), (150, 25), (900, 300), (200, 60), (2600, 120), (180, 30), (400, 200), (250, 90), (100, 5)]


def _write(tmp_path, text: str, name: str = "lengths.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _lengths_csv(tmp_path, rows=ROWS, name: str = "lengths.csv"):
    return _write(tmp_path, "prompt_tokens,output_tokens\n" + "".join(f"{p},{o}\n" for p, o in rows), name)


def _within_sampling_error(drawn: np.ndarray, column: np.ndarray, n: int) -> bool:
    """n rows drawn uniformly with replacement from a column of standard deviation sd (population) have a mean whose
    standard error is sd / sqrt(n): the drawn mean within 4 of them of the column's (a draw outside has probability
    6e-5; the seed is fixed, so the test is deterministic)."""
    return abs(drawn.mean() - column.mean()) <= 4 * column.std() / np.sqrt(n)


class TestResampler:
    def test_the_same_seed_draws_the_same_requests(self):
        p, o = np.array([r[0] for r in ROWS]), np.array([r[1] for r in ROWS])
        assert resampled_lengths(p, o, 50, seed=3) == resampled_lengths(p, o, 50, seed=3)
        assert resampled_lengths(p, o, 50, seed=3) != resampled_lengths(p, o, 50, seed=4)

    def test_only_the_files_rows_are_drawn_prompt_and_output_together(self):
        p, o = np.array([r[0] for r in ROWS]), np.array([r[1] for r in ROWS])
        drawn = resampled_lengths(p, o, 500)
        assert len(drawn) == 500 and set(drawn) <= set(ROWS)
        assert len(set(drawn)) == len(ROWS)  # with replacement, 500 draws reach every one of 10 rows

    def test_the_drawn_means_are_the_samples_within_sampling_error(self):
        p, o = np.array([r[0] for r in ROWS]), np.array([r[1] for r in ROWS])
        drawn = np.asarray(resampled_lengths(p, o, DEFAULT_REQUESTS))
        assert _within_sampling_error(drawn[:, 0], p, DEFAULT_REQUESTS)
        assert _within_sampling_error(drawn[:, 1], o, DEFAULT_REQUESTS)

    def test_a_length_below_one_token_is_refused(self):
        with pytest.raises(InvalidInputError, match="whole tokens of 1 or more"):
            resampled_lengths(np.array([10, 0]), np.array([5, 5]), 10)


class TestReading:
    def test_rows_read_skipping_blank_and_comment_lines_and_other_columns(self, tmp_path):
        path = _write(tmp_path, '# from the gateway\narrival_s,prompt_tokens,output_tokens\n0,100,20\n\n1,"1,024",30\n')
        s = read_lengths(path)
        assert s.prompt_tokens.tolist() == [100, 1024] and s.output_tokens.tolist() == [20, 30]
        assert s.lines == (3, 5) and s.longest_tokens == 1054 and s.longest_line == 5

    def test_the_slot_is_the_high_prompt_plus_the_high_output(self, tmp_path):
        s = read_lengths(_lengths_csv(tmp_path))
        p95, o95 = (int(np.ceil(np.percentile([r[i] for r in ROWS], 95))) for i in (0, 1))
        assert s.high_tokens(95) == (p95, o95) and s.slot_tokens(95) == p95 + o95

    def test_a_bad_file_is_a_lengths_file_error(self, tmp_path):
        with pytest.raises(LengthsFileError, match=r"line 2: output_tokens '-3' is not a whole number"):
            read_lengths(_write(tmp_path, "prompt_tokens,output_tokens\n5,-3\n"))


BAD_FILES = {
    "missing column": ("prompt_tokens,output\n100,20\n", r"bad\.csv line 1: no column output_tokens in the header"),
    "not whole": ("prompt_tokens,output_tokens\n100,20\n100.5,20\n", r"bad\.csv line 3: prompt_tokens '100\.5' is not"),
    "not a number": ("prompt_tokens,output_tokens\nabc,20\n", r"bad\.csv line 2: prompt_tokens 'abc' is not a whole"),
    "zero": ("prompt_tokens,output_tokens\n100,0\n", r"bad\.csv line 2: output_tokens '0' is not a whole number"),
    "empty": ("", r"bad\.csv: empty \(no header, no rows\)"),
    "header only": ("prompt_tokens,output_tokens\n", r"bad\.csv: a header and no rows"),
    "past the context": ("prompt_tokens,output_tokens\n100,20\n4000,200\n", r"bad\.csv line 3: a request of 4,200"),
}


class TestPlanRefuses:
    @pytest.mark.parametrize("case", BAD_FILES)
    def test_a_bad_file_in_one_line_naming_the_file_the_line_and_what_is_accepted(self, tmp_path, case):
        text, said = BAD_FILES[case]
        line = one_line(run(*PLAN, "--rate", "1", "--lengths", str(_write(tmp_path, text, "bad.csv"))), 2)
        assert re.search(said, line), line
        accepted = "more than --context 4,096" if case == "past the context" else "columns prompt_tokens, output_tokens"
        assert accepted in line

    def test_a_missing_file(self, tmp_path):
        line = one_line(run(*PLAN, "--rate", "1", "--lengths", str(tmp_path / "nope.csv")), 2)
        assert "nope.csv: no such file; a lengths file is a CSV with the columns prompt_tokens, output_tokens" in line

    @pytest.mark.parametrize(
        "other",
        [["--prompt-tokens", "100"], ["--output-tokens-high", "900"], ["--dataset", "sonnet"], ["--trace", "T"]],
    )
    def test_another_source_of_lengths_is_named(self, tmp_path, other):
        path = _lengths_csv(tmp_path)
        other = [str(path) if x == "T" else x for x in other]
        line = one_line(run(*PLAN, "--rate", "1", "--lengths", str(path), *other), 2)
        assert f"gives the requests' lengths; leave out {other[0]} (give one of --lengths" in line

    def test_without_a_rate(self, tmp_path):
        line = one_line(run(*PLAN, "--lengths", str(_lengths_csv(tmp_path))), 2)
        assert line.endswith("is the traffic's lengths under load, with no arrival times; give --rate with it")


def test_plan_draws_the_files_lengths_at_the_rate(tmp_path):
    """1,000 requests drawn from the 10 rows: the drawn means (printed to the token) within 4 standard errors
    (sd / sqrt(1,000)) of the file's; the slot memory is sized for is the file's p95 prompt + p95 output."""
    path = _lengths_csv(tmp_path)
    result = run(*PLAN, "--rate", "1", "--lengths", str(path))
    assert result.exit_code == 0, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("  lengths: "))
    assert f"1,000 requests drawn from {path} (10 rows, at random with replacement, seeded" in line
    got = re.search(r"file means ([\d,]+) / ([\d,]+), p95 ([\d,]+) / ([\d,]+) tokens, longest ([\d,]+)", line)
    drawn = re.search(r"drawn means ([\d,]+) / ([\d,]+)", line)
    p, o = np.array([r[0] for r in ROWS]), np.array([r[1] for r in ROWS])
    assert [int(x.replace(",", "")) for x in got.groups()] == [
        round(p.mean()),
        round(o.mean()),
        *read_lengths(path).high_tokens(95),
        int((p + o).max()),
    ]
    for mean, column in zip(drawn.groups(), (p, o), strict=True):  # printed rounded: half a token more leeway
        assert abs(int(mean.replace(",", "")) - column.mean()) <= 4 * column.std() / np.sqrt(1000) + 0.5
    slot = sum(read_lengths(path).high_tokens(95))
    assert f"memory's slot p95 prompt + p95 output = {slot:,} tokens" in line
    assert f"what memory holds at p95 prompt + p95 output ({slot:,} tokens here" in result.stdout


def test_plan_json_names_the_file_and_its_slot(tmp_path):
    path = _lengths_csv(tmp_path)
    result = run(*PLAN, "--rate", "1", "--lengths", str(path), "--json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)["under_load"]["lengths_file"]
    hp, ho = read_lengths(path).high_tokens(95)
    assert got == {
        "file": str(path), "rows": 10, "prompt_mean_tokens": 520.0, "output_mean_tokens": 95.0,
        "high_percentile": 95.0, "prompt_high_tokens": hp, "output_high_tokens": ho, "slot_tokens": hp + ho,
        "longest_tokens": 2720,
    }  # fmt: skip


SCENARIO = """\
[workload]
peak_requests_per_s = 2
average_requests_per_s = 1
lengths_file = "{file}"
ttft_target_s = 1.5
tpot_target_s = 0.05
[[option]]
gpu = "H100"
model = "Llama-3.1-8B"
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One review of a scenario whose lengths_file sits beside it (a relative path), run from another folder."""
    folder = tmp_path_factory.mktemp("lengths")
    _lengths_csv(folder, name="gateway.csv")
    (folder / "s.toml").write_text(SCENARIO.format(file="gateway.csv"), encoding="utf-8")
    result = run("export", str(folder / "s.toml"), "-o", str(folder / "review.md"))
    return result, (folder / "review.md").read_text(encoding="utf-8") if result.exit_code == 0 else ""


class TestExport:
    def test_the_summarys_lengths_line_names_the_file(self, exported):
        result, _ = exported
        assert result.exit_code == 0, result.output
        assert "  lengths: lengths_file gateway.csv: 10 rows, means 520 / 95 tokens (prompt / output)" in result.stdout

    def test_the_reviews_assumptions_name_the_file_and_how_requests_are_drawn(self, exported):
        _, review = exported
        assert "not evaluated: the requests are lengths\\_file gateway.csv's rows; cap its prompts there" in review
        assert "| Lengths from file gateway.csv | gateway.csv |" in review
        assert "1,000 requests drawn from lengths\\_file gateway.csv (its 10 rows at random with replacement" in review

    @pytest.mark.parametrize(
        ("file", "rows", "said"),
        [
            ("nope.csv", None, "workload: lengths_file 'nope.csv': no such file"),
            (
                "bad.csv",
                "prompt_tokens,output_tokens\n100,x\n",
                "lengths_file bad.csv line 2: output_tokens 'x' is not",
            ),
            ("bad.csv", "prompt,output\n1,2\n", "lengths_file bad.csv line 1: no column prompt_tokens, output_tokens"),
            ("bad.csv", "", "lengths_file bad.csv: empty"),
            ("bad.csv", "prompt_tokens,output_tokens\n150000,10000\n", "bad.csv line 2: a request of 160,000 tokens"),
        ],
    )
    def test_a_bad_file_in_one_line_with_the_scenarios_line(self, tmp_path, file, rows, said):
        if rows is not None:
            _write(tmp_path, rows, file)
        (tmp_path / "s.toml").write_text(SCENARIO.format(file=file), encoding="utf-8")
        line = one_line(run("export", str(tmp_path / "s.toml"), "-o", str(tmp_path / "r.md")), 2)
        assert said in line and line.endswith("(line 4)"), line

    def test_beside_a_length_field_it_is_refused(self, tmp_path):
        _lengths_csv(tmp_path)
        text = SCENARIO.format(file="lengths.csv").replace("ttft_target_s", "output_tokens_high = 900\nttft_target_s")
        (tmp_path / "s.toml").write_text(text, encoding="utf-8")
        line = one_line(run("export", str(tmp_path / "s.toml"), "-o", str(tmp_path / "r.md")), 2)
        assert "lengths_file gives the lengths; leave out output_tokens_high" in line


class TestLongTailHelp:
    """Trial 28 F2: a p95 / mean past what a truncated lognormal reaches is refused, as the help says, and the
    refusal names the measured sample's way. Since s211's two-part mixture (trial 31 F5) the refusal is only where no
    distribution of positive lengths holds the ratio: 6,000 / 300 = 20.00 = 1 / (1 - 0.95) (Markov's inequality);
    1,500 / 6,000 (4.00, refused before) is now drawn from the mixture."""

    def test_the_help_says_past_the_reach_it_is_refused_where_no_distribution_holds(self):
        text = " ".join(run(*PLAN, "--help").stdout.split())
        assert "drawn from a lognormal truncated at the slot memory is sized for" in text
        assert "a two-part mixture: a lognormal body up to the high length" in text
        assert "refused, naming the mean or high length that fits (a measured sample: --lengths FILE" in text

    def test_the_refusal_suggests_the_lengths_file(self):
        line = one_line(
            run(
                "plan",
                "--gpu",
                "H100",
                "--model",
                "llama3.1-8b",
                "--context",
                "8k",
                "--rate",
                "40",
                "--prompt-tokens",
                "300",
                "--output-tokens",
                "300",
                "--prompt-tokens-high",
                "6000",
                "--output-tokens-high",
                "1200",
            ),  # fmt: skip
            2,
        )
        assert "6,000 / 300 = 20.00 has no lognormal fit" in line
        assert line.endswith(
            "planner plan --lengths FILE, a scenario's lengths_file (a CSV of prompt_tokens, output_tokens)"
        )
