"""Trial 32 F1: ``planner export`` of five options at 40 requests in flight ran for over 17 minutes without a line.

The export now says each step as it starts on a terminal (``--progress`` on a log too), and the simulation's
prefill lookup, a large share of an export's time, is a pure-Python copy of ``numpy.interp`` that must give the
same bits (the review's figures byte for byte as before).
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from click.testing import CliRunner

from planner.cli import main
from planner.cli.export import progress_printer, show_progress
from planner.serving.simulate import interp_scalar
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


class TestInterp:
    def test_the_same_bits_as_numpy(self):
        """Below, on, between and past the table's points, with a repeated point and a flat stretch: every answer
        is float(numpy.interp(...)) exactly (the simulation's step times, so the review's figures, do not move)."""
        rng = np.random.default_rng(7)
        tables = [
            ((0.0, 3000.0), (0.0021, 0.3105)),
            ((1.0,), (0.5,)),
            ((0.0, 16.0, 16.0, 512.0, 8192.0), (0.001, 0.002, 0.003, 0.02, 0.5)),
            ((0.0, 100.0, 200.0), (0.25, 0.25, 0.1)),
        ]
        for xp, fp in tables:
            xs = [
                *xp,
                -1.0,
                0.5,
                math.inf,
                -math.inf,
                *rng.uniform(-100, 9000, 2000),
                *np.round(rng.uniform(0, 9000, 2000)),
            ]
            for x in map(float, xs):
                assert interp_scalar(x, xp, fp) == float(np.interp(x, xp, fp)), (xp, x)
        assert math.isnan(interp_scalar(math.nan, (0.0, 1.0), (0.0, 1.0)))

    def test_a_simulated_run_is_the_same_with_numpy_interp(self, monkeypatch):
        """A run of spread lengths (many distinct prefill chunks) simulated with ``interp_scalar`` and again with
        numpy's interp in its place: the same ``LoadResult`` field for field, uncached both times."""
        from planner.serving import simulate
        from planner.serving.load import Replica, RunKey, _finished, _simulated, lognormal_lengths

        replica = Replica("H100", "llama3.1-8b", gpus=1, frontend_s=0.0)
        lengths = lognormal_lengths(3000, 300, 120, 1.0, 8192, seed=0)
        setup = replica.setup(3000, 300)
        sent = np.cumsum(np.full(len(lengths), 1 / 6.0))
        key = RunKey.of(setup, 3000, 300, lengths, sent, replica.behaviour())
        ours = _finished(_simulated(key))
        key.table._prefill_memo.clear()
        monkeypatch.setattr(simulate, "interp_scalar", lambda x, xp, fp: float(np.interp(x, xp, fp)))
        numpys = _finished(_simulated(key))
        key.table._prefill_memo.clear()
        assert ours == numpys
