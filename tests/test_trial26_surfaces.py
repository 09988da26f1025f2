"""Trial 26 (an FP&A user on LibreOffice): `planner addin install` on a machine without Excel (F12)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from planner.cli import main


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home of the test's own (never the real one): xlwings' config is ~/.xlwings/xlwings.conf on Linux."""
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


class TestF12AddinInstallWithoutExcel:
    def test_linux_writes_nothing_and_says_what_works_in_libreoffice(self, home, monkeypatch):
        """The trial: on Linux it created ~/.xlwings/xlwings.conf, then said none of the steps applied."""
        monkeypatch.setattr("sys.platform", "linux")
        result = CliRunner().invoke(main, ["addin", "install"])
        assert result.exit_code == 0, result.output
        assert not (home / ".xlwings").exists()
        assert "This machine runs Linux: nothing written" in result.output
        # docs/excel.md's statement: LibreOffice runs no xlwings functions; the what-if workbook instead
        assert "LibreOffice runs no xlwings functions" in result.output and "#NAME?" in result.output
        assert "planner workbook -o DIR" in result.output and "--force" in result.output
        assert "Trust Center" not in result.output  # no Windows Excel steps for a machine without Excel

    def test_force_writes_the_default_config(self, home, monkeypatch):
        """For Excel on Windows reading this home: --force writes it, with the steps and the note."""
        monkeypatch.setattr("sys.platform", "linux")
        result = CliRunner().invoke(main, ["addin", "install", "--force"])
        assert result.exit_code == 0, result.output
        conf = home / ".xlwings" / "xlwings.conf"
        assert conf.read_text(encoding="utf-8") == '"UDF MODULES","planner.excel.functions"\n'
        assert "none of these steps apply" in result.output

    def test_windows_writes_the_default_config(self, home, monkeypatch):
        monkeypatch.setattr("sys.platform", "win32")
        result = CliRunner().invoke(main, ["addin", "install"])
        assert result.exit_code == 0, result.output
        assert (home / ".xlwings" / "xlwings.conf").is_file()
        assert "nothing written" not in result.output and "Trust Center" in result.output


class TestF11WordsAndPrint:
    @pytest.mark.parametrize(("pricing", "words"), [("purchase", "before buying"), ("cloud", "before committing")])
    def test_the_test_before_a_commitment_takes_the_price_kinds_verb(self, pricing, words):
        """The trial: "test one replica ... against the targets before buying" on a rented recommendation."""
        from types import SimpleNamespace

        from planner.export.reason import before_commitment

        assert before_commitment(SimpleNamespace(money=SimpleNamespace(pricing=pricing))) == words

    def test_the_budget_request_note_prints_with_the_figures_above_it(self, readme_example_review, monkeypatch):
        """The trial's pdf put "Budget request: rent is cash and expense alike; ..." alone at the top of page 2. The
        printed Summary keeps the note and the ``NOTE_KEPT_WITH`` figure rows above it on one page
        (``print_layout.keep_together``, whose page estimate tests/test_trial14_words.py checks): no page break
        between them."""
        import io

        import openpyxl

        from planner.export import xlsx
        from planner.export.print_layout import keep_together

        calls = []

        def recorded(ws, first, last):
            calls.append((ws.title, first, last))
            return keep_together(ws, first, last)

        monkeypatch.setattr(xlsx, "keep_together", recorded)
        ws = openpyxl.load_workbook(io.BytesIO(xlsx.render_print_xlsx(readme_example_review)))["Summary"]
        note = next(
            r for r in range(1, ws.max_row + 1) if str(ws.cell(row=r, column=1).value).startswith("Budget request:")
        )
        first = note - xlsx.NOTE_KEPT_WITH
        assert ("Summary", first, note) in calls
        assert ws.cell(row=first, column=2).value is not None  # a key figure, not a heading or a blank row
        assert not any(first <= b.id < note for b in ws.row_breaks.brk)
