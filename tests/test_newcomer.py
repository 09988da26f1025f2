"""Issue 26 item 5: a newcomer's friction, each case as the issue reports it.

Token counts written as people write them, unit sanity checks with a way out, errors on the right line,
``calibrate`` reading what ``validate`` reads, ``plan`` hints, quiet broken pipes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from cli_support import SCENARIO, one_line, run

from planner.accuracy.validation import MEMORY_TOLERANCE
from planner.units import parse_seconds, parse_token_count

ROWS = "gpu,model,batch,input_len,output_len,tpot_ms\n"
#: `plan` sizing a fleet under load (a small model at 2 requests/s: one replica, about a second).
PLAN_UNDER_LOAD = ("plan", "--gpu", "H100", "--model", "llama2-7b", "--context", "4096", "--rate", "2")
PLAN_UNDER_LOAD += ("--prompt-tokens", "200", "--output-tokens", "100")


class TestCalibrateReadsWhatValidateReads:
    def test_skips_an_unusable_row_with_a_note(self, tmp_path):
        """One bad row (batch 0) is skipped with a note naming it; the other rows are fitted (0.1.0 gave up)."""
        f = tmp_path / "runs.csv"
        good = "".join(f"H100,llama2-7b,{b},1000,200,{12 + b / 8:.2f}\n" for b in (1, 2, 4, 8, 16, 32, 64, 128))
        f.write_text(ROWS + "H100,llama2-7b,0,1000,200,12\n" + good)
        assert run("validate", "--decode", str(f)).exit_code == 0
        r = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 0, r.output
        assert (
            "note: " in r.stderr
            and "line 2: batch '0' is below 1; give the sequences decoded together, a whole number from 1: row skipped"
            in r.stderr
        )
        assert "H100 SXM 80GB: 8 rows" in r.stdout
        assert "warning" not in r.stderr  # 8 rows: not few
        assert (tmp_path / "c.toml").exists()

    def test_warns_when_the_fit_rests_on_few_rows(self, tmp_path):
        """One row fits any factors exactly: the fit is written, with a warning that names the row count."""
        f = tmp_path / "runs.csv"
        f.write_text(ROWS + "H100,llama2-7b,8,1000,200,14\n")
        r = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 0, r.output
        assert "warning: H100 SXM 80GB: the fit rests on 1 row (fewer than 8)" in r.stderr
        assert "planner validate --decode" in r.stderr

    def test_a_fit_on_few_rows_records_no_range(self, tmp_path):
        """A range of +0% / +1% from one row cut the budget review's latency margin from +14% to +1% ("measured
        times fall within +0% / +1% ... on 80% of its benchmark rows"; found by s58): with fewer than 8 rows the
        file records no range, so sizing keeps the held-out one, as without a calibration."""
        from planner.accuracy.calibration import Calibration, load_calibration, residual_quantiles

        f = tmp_path / "runs.csv"
        f.write_text(ROWS + "H100,llama2-7b,8,1000,200,14\n")
        assert run("calibrate", str(f), "-o", str(tmp_path / "c.toml")).exit_code == 0
        one_row = load_calibration(tmp_path / "c.toml")
        assert one_row.entries[0].bandwidth_efficiency is not None  # the factors are written
        assert one_row.entries[0].residual_low is None and one_row.entries[0].residual_high is None
        shipped = residual_quantiles("H100", calibration=Calibration(), gpus=4, model="Llama-3.1-70B")
        assert residual_quantiles("H100", calibration=one_row, gpus=4, model="Llama-3.1-70B") == shipped
        assert shipped[1] > 0.05  # the held-out range (+14% at the stop this was written), not one row's +1%

    def test_warns_of_a_measurement_faster_than_the_datasheet(self, tmp_path):
        """A TPOT of 1 ms for Llama 2 7B on one H100 is under one read of its 13.2 GB of fp16 weights at 3.35 TB/s
        (3.9 ms: 6,738,415,616 active parameters less the 32,000 x 4,096 embedding table, of which a step reads one
        row): the row is fitted as given, with a warning naming it and what to check."""
        f = tmp_path / "runs.csv"
        good = "".join(f"H100,llama2-7b,{b},1000,200,{12 + b / 8:.2f}\n" for b in (1, 2, 4, 8, 16, 32, 64, 128))
        f.write_text(ROWS + good + "H100,llama2-7b,1,1000,200,1\n")
        r = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 0, r.output
        assert "warning: " in r.stderr and "line 10: published TPOT 1.0 ms is below the 3.9 ms" in r.stderr
        assert "line 2:" not in r.stderr  # 12 ms and more: above the floor

    def test_no_usable_row_is_one_line(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(ROWS + "H100,no-such-model,8,1000,200,14\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "none of the 1 rows can be used; the first: line 2: unknown model 'no-such-model'" in line
        assert not (tmp_path / "c.toml").exists()


def export(tmp_path, text: str):
    sc = tmp_path / "s.toml"
    sc.write_text(text)
    return run("export", str(sc), "-o", str(tmp_path / "r.md"), "--force")


class TestTokenCounts:
    """`--context 8k` gave click's "not a valid integer range"; one parser now reads every token count."""

    @pytest.mark.parametrize(
        ("written", "tokens"),
        [("8192", 8192), ("8,192", 8192), ("8_192", 8192), ("8k", 8192), ("8K", 8192), ("1e4", 10_000), ("1.5k", 1536)],
    )
    def test_parser(self, written, tokens):
        """k is 1,024 tokens: Llama 2's "4K context" is max_position_embeddings 4096 (its config.json)."""
        assert parse_token_count(written) == tokens

    @pytest.mark.parametrize("written", ["8,19", "1.3k", "8kb", "", "-5", "inf", "1e999999", True, 1.5])
    def test_parser_refuses(self, written):
        with pytest.raises(ValueError, match="whole number of tokens|comma|more tokens|not a whole"):
            parse_token_count(written)

    @pytest.mark.parametrize("written", ["8k", "8,192", "8192"])
    def test_plan_context(self, written):
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", written)
        assert r.exit_code == 0, r.output
        assert "context 8,192 tokens" in r.stdout.splitlines()[0]

    def test_plan_context_refused_names_what_is_accepted(self):
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "1.3k")
        assert r.exit_code == 2
        assert "'1.3k' is 1331.2 tokens, not a whole number" in r.stderr and "8k (k = 1,024 tokens)" in r.stderr

    def test_scenario_fields(self, tmp_path):
        """The same numbers written three ways size the same fleet."""
        plain = export(tmp_path, SCENARIO)
        written = SCENARIO.replace("= 3000", '= "3,000"').replace("= 1200", "= 1.2e3").replace("= 800", '= "800"')
        again = export(tmp_path, written)
        assert plain.exit_code == again.exit_code == 0, again.output
        assert plain.stdout.splitlines()[0] == again.stdout.splitlines()[0]


class TestTimeUnits:
    """`tpot_target_s = 50` (milliseconds typed as seconds) was accepted silently."""

    def test_bare_50_is_refused_with_the_way_out(self, tmp_path):
        line = one_line(export(tmp_path, SCENARIO.replace("tpot_target_s = 0.05", "tpot_target_s = 50")), 2)
        assert "workload.tpot_target_s: 50 seconds looks like milliseconds typed as seconds; write 0.05" in line
        assert '"50 ms"' in line

    def test_ttft_1500_is_refused(self, tmp_path):
        line = one_line(export(tmp_path, SCENARIO.replace("ttft_target_s = 1.5", "ttft_target_s = 1500")), 2)
        assert "workload.ttft_target_s: 1500 seconds looks like milliseconds" in line

    def test_explicit_unit_is_taken_as_written(self, tmp_path):
        """ "50 ms" is 0.05 s: the same review as 0.05; "2 s" is accepted though above the bare limit. Sized by
        Little's law (the TPOT target still picks each replica's batch; ~1 s CPU an export instead of ~3 s)."""
        text = SCENARIO.replace("[workload]\n", '[workload]\nsizing = "littles-law"\n', 1)
        plain = export(tmp_path, text)
        ms = export(tmp_path, text.replace("tpot_target_s = 0.05", 'tpot_target_s = "50 ms"'))
        assert plain.exit_code == ms.exit_code == 0, ms.output
        assert plain.stdout == ms.stdout
        assert plain.stdout != export(tmp_path, text.replace("tpot_target_s = 0.05", "tpot_target_s = 0.04")).stdout
        slow = export(tmp_path, text.replace("tpot_target_s = 0.05", 'tpot_target_s = "2 s"'))
        assert slow.exit_code == 0, slow.output

    def test_plan_tpot_target_50_is_refused_with_the_way_out(self):
        """`plan --rate ... --tpot-target 50` sized a fleet for "TPOT <= 50.00 s" without a word (found by s58)."""
        r = run(*PLAN_UNDER_LOAD, "--tpot-target", "50")
        assert r.exit_code == 2, r.output
        assert "'--tpot-target': 50 seconds looks like milliseconds typed as seconds; write 0.05" in r.stderr
        assert "'--ttft-target': 1500 seconds looks like" in run(*PLAN_UNDER_LOAD, "--ttft-target", "1500").stderr

    def test_plan_target_with_its_unit_is_taken_as_written(self):
        """ "50ms" is 0.05 s, "2 s" is taken though above the bare limit: the targets the JSON reports."""
        out = json.loads(run(*PLAN_UNDER_LOAD, "--tpot-target", "50ms", "--ttft-target", "2 s", "--json").stdout)
        assert out["under_load"]["tpot_target_s"] == pytest.approx(0.05)
        assert out["under_load"]["ttft_target_s"] == 2.0

    def test_parse_seconds(self):
        assert parse_seconds("50 ms", 1.0, "t") == pytest.approx(0.05)
        assert parse_seconds("800us", 1.0, "t") == pytest.approx(8e-4)
        assert parse_seconds(0.05, 1.0, "t") == 0.05


class TestHighPercentile:
    """`high_percentile` at 5 sized 360 H100s instead of 44, and 1e-323 was a StatisticsError traceback."""

    @pytest.mark.parametrize("value", ["5", "1e-323", "50", "100"])
    def test_refused_unless_a_reported_percentile_above_the_median(self, tmp_path, value):
        text = SCENARIO.replace("tpot_target_s = 0.05", f"tpot_target_s = 0.05\nhigh_percentile = {value}")
        line = one_line(export(tmp_path, text), 2)
        assert "workload.high_percentile" in line and "90, 95 or 99" in line


class TestDefaultsTypo:
    def test_blamed_on_defaults_not_option_1(self, tmp_path):
        text = SCENARIO.replace('[[option]]\ngpu = "H100"\nmodel = "Llama-3.1-70B"\n', "")
        text += '[defaults]\nmodel = "Lama-3.1-8B"\n[[option]]\ngpu = "H100"\n[[option]]\ngpu = "H200"\n'
        line = one_line(export(tmp_path, text), 2)
        assert "s.toml: defaults.model: unknown model 'Lama-3.1-8B'; did you mean Llama-3.1-8B" in line
        typo = text.splitlines().index('model = "Lama-3.1-8B"') + 1
        assert line.endswith(f"(line {typo})")

    def test_errors_name_the_line_of_the_field(self, tmp_path):
        """The second option's GPU typo and a bare 50 for tpot_target_s: each error ends with its line."""
        text = SCENARIO + '[[option]]\nname = "second"\ngpu = "H1OO"\nmodel = "Llama-3.1-70B"\n'
        line = one_line(export(tmp_path, text), 2)
        assert "option #2 (second).gpu: unknown GPU 'H1OO'" in line
        typo = text.splitlines().index('gpu = "H1OO"') + 1
        assert line.endswith(f"(line {typo})")
        slip = SCENARIO.replace("tpot_target_s = 0.05", "tpot_target_s = 50")
        line = one_line(export(tmp_path, slip), 2)
        assert line.endswith(f"(line {slip.splitlines().index('tpot_target_s = 50') + 1})")

    def test_a_missing_field_points_at_its_table(self, tmp_path):
        line = one_line(export(tmp_path, SCENARIO.replace("ttft_target_s = 1.5\n", "")), 2)
        assert "workload.ttft_target_s: missing" in line and line.endswith("(line 1)")


class TestValidateHelp:
    def test_states_the_limits_the_tables_use(self, tmp_path):
        """Each "limits A / B" that a table prints is in --help (0.1.0's help said 20% / 40%, unused)."""
        helptext = " ".join(run("validate", "--help").output.split())
        f = tmp_path / "runs.csv"
        f.write_text(ROWS + "H100,llama2-7b,8,1000,200,14\n")
        out = run("validate", "--decode", str(f)).stdout
        shown = re.findall(r"^(TPOT ms)\s.*limits (\d+%) / (\d+%)\)$", out, flags=re.M)
        assert shown, out
        for what, median, worst in shown:
            assert f"{what} median {median}, worst {worst}" in helptext
        assert f"limit {MEMORY_TOLERANCE:.0%} on every shipped row" in helptext

    def test_states_the_limits_of_the_serving_runs_table(self, tmp_path):
        """A --decode file with percentile columns is held to the serving table's limits (15% / 40%, 20% / 50%),
        which --help did not state (found by s58); every "limits A / B" that table prints is in --help."""
        helptext = " ".join(run("validate", "--help").output.split())
        f = tmp_path / "load.csv"
        f.write_text(
            "gpu,model,batch,input_len,output_len,num_prompts,request_rate,ttft_median_ms,ttft_p99_ms,"
            "tpot_median_ms,tpot_p99_ms,itl_median_ms,itl_p99_ms\nH100,llama2-7b,,200,100,100,2,30,60,8,9,8,20\n"
        )
        out = run("validate", "--decode", str(f)).stdout
        shown = re.findall(r"^((?:TTFT|TPOT|ITL) (?:median|p99) ms)\s.*limits (\d+%) / (\d+%)\)$", out, flags=re.M)
        assert len(shown) == 6, out
        stated = {  # "TTFT median ms, TPOT median ms median 15%, worst 40%" -> each quantity's pair
            what: (median, worst)
            for group, median, worst in re.findall(
                r"((?:\w+ \w+ ms, )*\w+ \w+ ms) median (\d+%), worst (\d+%)", helptext
            )
            for what in group.split(", ")
        }
        for what, median, worst in shown:
            assert stated.get(what) == (median, worst), (what, stated)


class TestBrokenPipe:
    def test_catalog_list_into_a_closed_pipe_is_quiet(self):
        """`planner catalog list | head` ended in "error: Broken pipe"; the reader here has gone before the write."""
        p = subprocess.Popen(
            [sys.executable, "-m", "planner", "catalog", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        p.stdout.close()
        with p.stderr:
            err = p.stderr.read().decode()
        p.wait(timeout=60)
        assert err == ""
        assert p.returncode == 1


class TestPlanHints:
    def test_names_what_the_next_group_would_hold(self):
        """Llama 2 70B at 16K on H100: 2 GPUs hold 1 sequence; the hint gives the 4-GPU group's max batch."""
        from planner import max_batch

        two = int(max_batch("H100", "llama2-70b", 16384, gpus=2))
        four = int(max_batch("H100", "llama2-70b", 16384, gpus=4))
        assert two == 1 and four > 8 * two
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "16k")
        assert r.exit_code == 0, r.output
        hint = f"hint: 4 x H100 SXM 80GB would hold {four:,} sequences of 16,384 tokens where 2 hold 1 (--gpus 4)"
        assert hint in r.stdout.splitlines()

    def test_no_hint_when_the_batch_is_not_small(self):
        r = run("plan", "--gpu", "H100", "--model", "llama2-7b", "--context", "4096", "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["larger_group"] is None

    def test_a_batch_that_cannot_fit_says_why_and_what_works(self):
        """--batch 10 on 2 x H100: the shortfall and the smallest group that holds it."""
        line = one_line(run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8k", "--batch", "10"), 1)
        assert "do not fit on 2 x H100 SXM 80GB: short by" in line
        assert "the smallest group that works is 4 x H100 SXM 80GB" in line


class TestFolderOptions:
    """A folder option given a file's name (``-o review.xlsx``) is refused, not made into a folder of that name."""

    @pytest.mark.parametrize(
        "args", [("workbook", "-o", "{}/my.xlsx"), ("catalog", "import-hf", "{}/cfg", "--to", "{}/mine.toml")]
    )
    def test_a_file_name_is_refused_and_nothing_is_made(self, tmp_path, args):
        result = run(*(a.format(tmp_path) for a in args))
        assert result.exit_code == 2, result.output
        assert "looks like a file name; this option takes a folder to write into" in result.stderr
        assert list(tmp_path.iterdir()) == []

    def test_an_existing_folder_of_that_name_is_taken(self, tmp_path):
        folder = tmp_path / "books.xlsx"
        folder.mkdir()
        from planner.cli import options

        assert options._not_a_file_name(None, None, folder) == folder


class TestPlanLoadOptions:
    """s89's newcomer pass: load options that were read silently wrong or not at all."""

    PLAN = ("plan", "--gpu", "H100", "--model", "llama2-7b", "--context", "4096")

    def test_lengths_longer_than_the_context_are_refused(self):
        """16k prompts under load with --context 8k were simulated as if a sequence could hold them: --context is the
        tokens one sequence holds (prompt + output), so the way out is a context of at least their sum."""
        line = one_line(run(*self.PLAN, "--rate", "2", "--prompt-tokens", "4k", "--output-tokens", "100"), 2)
        assert line == (
            "planner: error: --prompt-tokens 4,096 + --output-tokens 100 are more than --context 4,096 (the tokens one "
            "sequence may hold, prompt + output); give --context 4,196 or more"
        )

    @pytest.mark.parametrize(
        "extra, names",
        [
            (("--prompt-tokens", "200"), "--prompt-tokens and --output-tokens"),
            (("--ttft-target", "1"), "--ttft-target and --tpot-target"),
            (("--tpot-target", "50ms"), "--ttft-target and --tpot-target"),
        ],
    )
    def test_load_options_without_a_rate_are_refused_not_ignored(self, extra, names):
        """Without --rate these were dropped without a word (the plan printed as if they had not been given)."""
        assert one_line(run(*self.PLAN, *extra), 2).startswith(f"planner: error: {names} ")
        assert "give --rate" in one_line(run(*self.PLAN, *extra), 2)


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_export_refuses_to_write_over_its_own_scenario(tmp_path, fmt):
    """`export s.toml -o s.toml --force --format md` replaced the scenario with its review (a .toml name has no format
    to disagree with --format): refused before anything is sized, the scenario kept byte for byte."""
    sc = tmp_path / "s.toml"
    sc.write_text("[workload]\n")
    r = run("export", str(sc), "-o", str(sc), "--force", "--format", fmt)
    assert r.exit_code == 2 and "is the scenario itself; write to another file" in r.output
    assert "Traceback" not in r.output and sc.read_text() == "[workload]\n"


def test_calibrate_refuses_to_write_over_its_measurements(tmp_path):
    """`calibrate runs.csv -o runs.csv --force` replaced the measurements with the calibration it fitted."""
    runs = tmp_path / "runs.csv"
    runs.write_text(ROWS + "H100,llama3.1-8b,8,1024,128,10\n")
    r = run("calibrate", str(runs), "-o", str(runs), "--force")
    assert r.exit_code == 2 and "runs.csv is the measurements file itself; write to another file" in r.output
    assert runs.read_text() == ROWS + "H100,llama3.1-8b,8,1024,128,10\n"


class TestPlanEngine:
    def test_a_release_is_taken_as_validate_and_the_api_take_it(self):
        """`plan --engine vllm==0.11.0` was refused by a fixed list while `validate --engine` and the API's engine=
        accept a release: the same profile as the API picks (planner.engines.profiles.engine_profile)."""
        import planner

        out = json.loads(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k",
                             "--engine", "vllm==0.11.0", "--json").stdout)  # fmt: skip
        assert out["max_batch"] == planner.max_batch("H100", "llama3.1-8b", 8192, engine="vllm==0.11.0")

    def test_a_misspelt_engine_names_the_one_meant(self):
        r = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8k", "--engine", "vlm")
        assert one_line(r, 2) == "planner: error: unknown engine 'vlm'; did you mean vllm, vllm-0.10?"
