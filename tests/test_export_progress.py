"""Trial 32 F1: ``planner export`` of five options at 40 requests in flight ran for over 17 minutes without a line.

The export now says each step as it starts on a terminal (``--progress`` on a log too), with the time so far.
"""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.cli.export import progress_printer, show_progress
from tests.test_export import write_scenario


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class TestWhenShown:
    def test_a_terminal_shows_it_and_a_log_does_not(self):
        """Left to itself: on where standard error is a terminal, off where it is a file or a pipe (the README's
        transcripts and the tests' captured output stay as they were)."""
        assert show_progress(None, False, _Tty()) is True
        assert show_progress(None, False, io.StringIO()) is False

    def test_the_flag_and_quiet_decide_over_the_terminal(self):
        """--progress prints to a log, --no-progress not to a terminal; -q never."""
        assert show_progress(True, False, io.StringIO()) is True
        assert show_progress(False, False, _Tty()) is False
        assert show_progress(True, True, _Tty()) is False and show_progress(None, True, _Tty()) is False


def test_each_line_says_the_time_so_far_and_the_step(capsys):
    """A clock at 0 s, then 65 s: '  1:05 <step> ...' on standard error, nothing on standard output."""
    times = iter([100.0, 100.0, 165.0])
    step = progress_printer(True, clock=lambda: next(times))
    step("sizing option 1/5: L40S, bought")
    step("sizing option 2/5: H100, rented")
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "  0:00 sizing option 1/5: L40S, bought ...",
        "  1:05 sizing option 2/5: H100, rented ...",
    ]
    assert progress_printer(False) is None


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The hand-computed two-option scenario (Little's law, ~1 s) exported with --progress and without."""
    folder = tmp_path_factory.mktemp("progress")
    scenario = write_scenario(folder)
    runner = CliRunner()
    shown = runner.invoke(main, ["export", str(scenario), "-o", str(folder / "a.md"), "--progress"])
    plain = runner.invoke(main, ["export", str(scenario), "-o", str(folder / "b.md")])
    return folder, shown, plain


class TestCli:
    def test_progress_lines_name_each_option_then_the_later_steps(self, exported):
        """With --progress: one line per option (i/n and its name, in the scenario's order), the levers on the
        baseline, the outlook and the file written, each on standard error; standard output as without it."""
        folder, shown, plain = exported
        assert shown.exit_code == 0, shown.output
        steps = [
            line.split(" ", 1)[1] for line in (s.strip() for s in shown.stderr.splitlines()) if line.endswith("...")
        ]
        assert steps == [
            "sizing option 1/2: H100 bought ...",
            "sizing option 2/2: H100 rented ...",
            "levers on the baseline (H100 rented) ...",
            "like for like, ownership and demand cases ...",
            f"writing {folder / 'a.md'} ...",
        ]
        assert shown.stdout.replace("a.md", "b.md") == plain.stdout

    def test_no_lines_off_a_terminal_and_the_same_file(self, exported):
        """Without the flag under a test runner (not a terminal): no progress line, and the review is the same."""
        folder, _, plain = exported
        assert plain.exit_code == 0, plain.output
        assert "sizing option" not in plain.output
        assert (folder / "a.md").read_bytes() == (folder / "b.md").read_bytes()
