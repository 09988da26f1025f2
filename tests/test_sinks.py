"""Issue 26 item 2: text from users made safe at one place (planner.io.safetext) for every sink.

Sinks and the rule each must keep (sources in planner/io/safetext.py):
- xlsx: no character XML 1.0 forbids (W3C XML 1.0, production [2] Char), in cells and in formulas' cached
  values; page headers and footers at most 255 characters (Microsoft, "Excel specifications and limits").
- terminal: no raw control character (ECMA-48 C0/C1: ESC starts escape sequences, BEL rings, NUL).
- CSV: no cell a spreadsheet would read as a formula (OWASP "CSV Injection"), whichever of , ; tab | it
  splits on (German and French Excel split on ';').
- code: the xlwings Lite main.py imports planner only from a new folder only its user can enter.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import tomli_w
from cli_support import run
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog import default_catalog
from planner.io.safetext import (
    CSV_SEPARATORS,
    MAX_HEADER_CHARS,
    cell_text,
    csv_text,
    header_text,
    terminal_text,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import hostile_io  # noqa: E402  (bench/: the hostile-input script, whose scenario these tests write)

#: Names the issue reports (ESC/OSC, BEL, NUL, vertical tab, U+FFFE) and a ';' formula.
HOSTILE = "H100 \x1b]0;pwned\x07 \x1b[31mred\x00\x0b\ufffe"
SEMICOLON = "x;=1+1;"
#: What XML 1.0 cannot hold (Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | ...).
XML_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def scenario(folder: Path, *names: str, title: str = "T") -> Path:
    """A scenario whose options (one per name, H100 rented, Llama 3.1 70B) carry the given names: the one
    ``bench/hostile_io.py`` tries the sinks with."""
    return hostile_io.scenario(folder, list(names), title=title)


class TestReviewWorkbook:
    def test_cached_value_of_the_live_box_is_clean(self, tmp_path):
        """A hostile name as the only option: the live box's cached 'cheapest option' is the name without what
        XML forbids, and openpyxl and pandas both open the file (it was malformed XML before)."""
        out = tmp_path / "r.xlsx"
        r = run("export", str(scenario(tmp_path, HOSTILE)), "-o", str(out))
        assert r.exit_code == 0, r.output
        with zipfile.ZipFile(out) as z:
            for name in z.namelist():
                assert not XML_ILLEGAL.search(z.read(name).decode("utf-8", "replace")), name
        pd.read_excel(out, sheet_name=None)
        cached = openpyxl.load_workbook(out, data_only=True)["Summary"]
        values = [c.value for row in cached.iter_rows() for c in row if isinstance(c.value, str)]
        assert cell_text(HOSTILE) in values and HOSTILE not in values

    def test_headers_and_footers_fit_excel(self, tmp_path):
        """A 300-character title with '&' and long option names: every sheet's header and footer <= 255."""
        out = tmp_path / "r.xlsx"
        long = "Budget & plan " * 25
        r = run("export", str(scenario(tmp_path, "A" * 200, "B" * 300, title=long)), "-o", str(out))
        assert r.exit_code == 0, r.output
        book = openpyxl.load_workbook(out)
        for ws in book:
            assert 0 < len(str(ws.oddHeader)) <= MAX_HEADER_CHARS, ws.title
            assert 0 < len(str(ws.oddFooter)) <= MAX_HEADER_CHARS, ws.title
            assert "Budget && plan" in str(ws.oddHeader)  # '&' stays a character, not a code


def test_what_if_workbook_from_a_hostile_catalog(tmp_path):
    """A user GPU named with ESC, VT, U+FFFE and ';=1+1': the generated what-if workbook has no XML-illegal
    character in any part and shows the name cleaned, as text."""
    entry = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
    entry.update(name="Evil\x1b[31m\x0b\ufffe;=1+1", aliases=[])
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "evil.toml").write_text(tomli_w.dumps({"gpu": [entry]}), encoding="utf-8")
    r = run("workbook", "-o", str(tmp_path / "wb"), "--catalog", str(tmp_path / "cat"), "--models", "llama2-7b")
    assert r.exit_code == 0, r.output
    path = tmp_path / "wb" / "capacity-what-if.xlsx"
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            assert not XML_ILLEGAL.search(z.read(name).decode("utf-8", "replace")), name
    gpus = openpyxl.load_workbook(path)["GPUs"]
    names = [c.value for c in gpus["A"] if isinstance(c.value, str)]
    assert "Evil[31m;=1+1" in names  # ESC, VT and U+FFFE are not XML characters: removed


class TestHeaderText:
    @given(st.text(max_size=400), st.integers(min_value=0, max_value=300))
    def test_never_longer_and_never_half_an_ampersand(self, text, limit):
        """At most ``limit`` characters; every '&' of the text is still doubled (an odd run would start a code)."""
        out = header_text(text, limit)
        assert len(out) <= limit
        assert all(len(run) % 2 == 0 for run in re.findall(r"&+", out))
        assert not XML_ILLEGAL.search(out)


class TestTerminal:
    def test_export_echoes_names_escaped(self, tmp_path):
        """export prints the option names with ESC, BEL, NUL shown as \\x1b, \\x07, \\x00."""
        r = run("export", str(scenario(tmp_path, HOSTILE)), "-o", str(tmp_path / "r.md"))
        assert r.exit_code == 0, r.output
        assert not RAW_CONTROL.search(r.stdout) and "\\x1b]0;pwned\\x07" in r.stdout

    def test_plan_and_catalog_echo_names_escaped(self, tmp_path):
        """A user GPU named with an escape sequence (reached by a plain alias): plan and catalog list print
        the name escaped."""
        entry = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
        entry.update(name="Evil\x1b[2J\x1b]0;t\x07", aliases=["evilgpu"])
        (tmp_path / "cat").mkdir()
        (tmp_path / "cat" / "evil.toml").write_text(tomli_w.dumps({"gpu": [entry]}), encoding="utf-8")
        cat = str(tmp_path / "cat")
        plan = run("plan", "--gpu", "evilgpu", "--model", "llama2-7b", "--context", "4096", "--catalog", cat)
        listing = run("catalog", "list", "gpus", "--catalog", cat)
        for r in (plan, listing):
            assert r.exit_code == 0, r.output
            assert "Evil\\x1b[2J" in r.stdout and not RAW_CONTROL.search(r.stdout)

    def test_validate_echoes_a_file_name_escaped(self, tmp_path):
        """validate's table names the measurements file's rows; a name with ESC in it is shown escaped."""
        f = tmp_path / "runs.csv"
        f.write_text(
            "record_id,gpu,model,batch,input_len,output_len,tpot_ms\nrow\x1b[31m1,H100,llama2-7b,8,1000,200,12\n",
            encoding="utf-8",
        )
        r = run("validate", "--decode", str(f))
        assert "Traceback" not in r.output
        assert not RAW_CONTROL.search(r.stdout + r.stderr)

    def test_keeps_line_breaks_escapes_the_rest(self):
        """terminal_text: a newline stays, ESC, BEL, NUL, CR, C1 CSI and a right-to-left override are escaped."""
        assert terminal_text("a\nb") == "a\nb"
        assert terminal_text("\x1b[31m\x07\x00\r\x9b\u202e") == "\\x1b[31m\\x07\\x00\\r\\x9b\\u202e"


class TestCsv:
    @pytest.mark.parametrize("sep", CSV_SEPARATORS)
    def test_review_csv_read_with_any_separator(self, tmp_path, sep):
        """The review's CSV with an option named 'x;=1+1;', split on , ; tab or |: no cell starts a formula (a
        negative number, "-0.0305", is a number to every spreadsheet, not a formula)."""
        out = tmp_path / "r.csv"
        r = run("export", str(scenario(tmp_path, SEMICOLON, "=HYPERLINK(1)|@SUM(1)")), "-o", str(out))
        assert r.exit_code == 0, r.output
        rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8")), delimiter=sep))
        cells = [c.strip(" ") for row in rows for c in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@")) and not _number(c)]

    def test_known_cases(self):
        """The issue's example and the conventional apostrophe."""
        assert csv_text("x;=1+1;") == "x;'=1+1;"
        assert csv_text("=1+1") == "'=1+1"
        assert csv_text("H100, rented") == "H100, rented"

    @given(st.text(alphabet=st.sampled_from(list("ab =+-@,;|\t\r\n'\"1")), max_size=40))
    def test_no_piece_starts_a_formula(self, text):
        """Whatever the text and the separator, no piece after a split starts with = + - @ (blanks skipped)."""
        out = csv_text(text)
        for sep in (*CSV_SEPARATORS, "\n"):
            for piece in out.split(sep):
                assert not piece.lstrip().startswith(("=", "+", "-", "@")), (text, sep, out)


class TestLiteMainPy:
    def test_imports_from_a_new_private_folder_not_a_planted_one(self, tmp_path):
        """A folder planted where 0.1's main.py looked (TMP/planner-lite-<digest>) holding a 'planner' package is
        never imported: main.py unpacks into a new 0700 folder of its own, and removes it at exit."""
        from planner.cli.addin import lite_bundle, lite_files

        out = tmp_path / "lite"
        out.mkdir()
        (out / "main.py").write_text(lite_files()["main.py"], encoding="utf-8")
        temp = tmp_path / "tmp"
        digest = hashlib.sha256(base64.b64encode(lite_bundle())).hexdigest()[:12]
        planted = temp / f"planner-lite-{digest}" / "planner"
        planted.mkdir(parents=True)
        (planted / "__init__.py").write_text("raise SystemExit('planted code ran')\n", encoding="utf-8")
        code = (
            "import os, runpy, stat; runpy.run_path('main.py', run_name='main'); import planner; "
            "d = os.path.dirname(os.path.dirname(planner.__file__)); s = os.lstat(d); "
            "print(d, oct(stat.S_IMODE(s.st_mode)), s.st_uid == os.getuid())"
        )
        env = {**os.environ, "TMPDIR": str(temp)}
        proc = subprocess.run(
            [sys.executable, "-I", "-c", code], cwd=out, capture_output=True, text=True, timeout=120, env=env
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        folder, mode, own = proc.stdout.split()
        assert Path(folder).parent == temp and Path(folder).name != f"planner-lite-{digest}"
        assert mode == oct(stat.S_IRWXU) and own == "True"
        assert not Path(folder).exists()  # removed at exit


def _number(cell: str) -> bool:
    """Whether a CSV cell is a plain decimal number (what a spreadsheet reads as a value, never as a formula)."""
    return re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", cell) is not None
