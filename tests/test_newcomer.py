"""Issue 26 item 5: a newcomer's friction, each case as the issue reports it.

Token counts written as people write them, unit sanity checks with a way out, errors on the right line,
``calibrate`` reading what ``validate`` reads, ``plan`` hints, quiet broken pipes.
"""

from __future__ import annotations

from cli_support import one_line, run

ROWS = "gpu,model,batch,input_len,output_len,tpot_ms\n"


class TestCalibrateReadsWhatValidateReads:
    def test_skips_an_unusable_row_with_a_note(self, tmp_path):
        """One bad row (batch 0) is skipped with a note naming it; the other rows are fitted (0.1.0 gave up)."""
        f = tmp_path / "runs.csv"
        good = "".join(f"H100,llama2-7b,{b},1000,200,{12 + b / 8:.2f}\n" for b in (1, 2, 4, 8, 16, 32, 64, 128))
        f.write_text(ROWS + "H100,llama2-7b,0,1000,200,12\n" + good)
        assert run("validate", "--decode", str(f)).exit_code == 0
        r = run("calibrate", str(f), "-o", str(tmp_path / "c.toml"))
        assert r.exit_code == 0, r.output
        assert "note: " in r.stderr and "row row1: batch must be 1 or more: row skipped" in r.stderr
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

    def test_no_usable_row_is_one_line(self, tmp_path):
        f = tmp_path / "runs.csv"
        f.write_text(ROWS + "H100,no-such-model,8,1000,200,14\n")
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "c.toml")), 2)
        assert "none of the 1 rows can be used; the first: row row1: unknown model 'no-such-model'" in line
        assert not (tmp_path / "c.toml").exists()
