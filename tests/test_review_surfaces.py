"""A fresh review of the user surfaces (s155): each defect found as a user met it, with its message and exit code.

Each case states what the user typed and what planner did before the mend; the CLI cases check the exit code and
the one-line message together (cli_support.one_line).
"""

from __future__ import annotations

from cli_support import one_line, run

DECODE_HEADER = "gpu,model,batch,input_len,output_len,tpot_ms\n"


class TestValidateFiles:
    def test_a_row_with_more_cells_than_the_header_is_refused(self, tmp_path):
        """A decimal comma ("8,0") makes one cell more than the header; the extra cell was dropped and the row
        compared as 8 ms (PASS), so a European CSV's 8.7 would be read as 8."""
        f = tmp_path / "runs.csv"
        f.write_text(DECODE_HEADER + "H100,llama3.1-8b,1,128,128,8,7\n")
        line = one_line(run("validate", "--decode", str(f)), 2)
        assert "line 2 has 7 cells where the header has 6" in line
        assert "8.0, not 8,0" in line
