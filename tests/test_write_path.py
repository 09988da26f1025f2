"""planner.io.files.write_file, the one write path: exclusive, atomic, cleaned up, one line when the system refuses.

Expected behaviour is POSIX's: link(2) fails with EEXIST when the new name exists (so creation is exclusive);
rename(2) replaces its target in one step; a process that handles SIGTERM can clean up before exiting.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest
from cli_support import one_line, run
from click.testing import CliRunner

from planner.cli import main
from planner.errors import InvalidInputError, OutputExistsError, WriteError
from planner.io.files import write_file

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "budget-review.toml"
#: The README's example sized by Little's law (docs/export.md, ``sizing``): an export in seconds, no simulation.
QUICK_EXAMPLE = EXAMPLE.read_text(encoding="utf-8").replace("[workload]\n", '[workload]\nsizing = "littles-law"\n', 1)
assert QUICK_EXAMPLE.count('sizing = "littles-law"') == 1
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0  # root writes into read-only folders


def leftovers(folder: Path) -> list[str]:
    """Temporary files the write path leaves only when something went wrong."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".part", ".tmp")))


class TestWriteFile:
    def test_new_file_written_whole_with_the_usual_mode(self, tmp_path):
        """A new file has the content and 0666 & ~umask (mkstemp's 0600 is not kept)."""
        mask = os.umask(0o022)
        try:
            write_file(tmp_path / "a.txt", "héllo")
        finally:
            os.umask(mask)
        assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo"
        assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o644
        assert leftovers(tmp_path) == []

    def test_existing_file_needs_force(self, tmp_path):
        (tmp_path / "a.txt").write_text("old")
        with pytest.raises(OutputExistsError, match="pass --force"):
            write_file(tmp_path / "a.txt", "new")
        assert (tmp_path / "a.txt").read_text() == "old"
        write_file(tmp_path / "a.txt", "new", force=True)
        assert (tmp_path / "a.txt").read_text() == "new"

    def test_force_keeps_the_mode_of_the_file_replaced(self, tmp_path):
        (tmp_path / "a.txt").write_text("old")
        os.chmod(tmp_path / "a.txt", 0o440)
        write_file(tmp_path / "a.txt", "new", force=True)
        assert (tmp_path / "a.txt").stat().st_mode & 0o777 == 0o440

    def test_force_writes_through_a_symlink(self, tmp_path):
        """The link stays a link; its target gets the new content."""
        (tmp_path / "real.txt").write_text("old")
        (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
        write_file(tmp_path / "link.txt", "new", force=True)
        assert (tmp_path / "link.txt").is_symlink()
        assert (tmp_path / "real.txt").read_text() == "new"

    def test_a_symlink_is_an_existing_file_without_force(self, tmp_path):
        """Even a dangling link counts: writing would go wherever it points."""
        (tmp_path / "link.txt").symlink_to(tmp_path / "elsewhere.txt")
        with pytest.raises(OutputExistsError):
            write_file(tmp_path / "link.txt", "x")
        assert not (tmp_path / "elsewhere.txt").exists()

    def test_failure_while_writing_leaves_nothing(self, tmp_path):
        def broken(fh):
            fh.write(b"half")
            raise RuntimeError("renderer failed")

        with pytest.raises(RuntimeError):
            write_file(tmp_path / "a.xlsx", broken)
        assert list(tmp_path.iterdir()) == []

    def test_a_folder_is_not_a_file(self, tmp_path):
        with pytest.raises(InvalidInputError, match="is a folder"):
            write_file(tmp_path, b"x")

    def test_path_below_a_regular_file(self, tmp_path):
        (tmp_path / "f").write_text("x")
        with pytest.raises(InvalidInputError, match="not a folder"):
            write_file(tmp_path / "f" / "out.md", b"x")
        with pytest.raises(WriteError, match="cannot write"):
            write_file(tmp_path / "f" / "out.md", b"x", make_parents=True)

    def test_name_too_long(self, tmp_path):
        """NAME_MAX is 255 bytes on Linux and macOS file systems; 300 characters is one line, not a traceback."""
        with pytest.raises(WriteError, match="too long"):
            write_file(tmp_path / ("x" * 300 + ".md"), b"x")

    @pytest.mark.skipif(AS_ROOT, reason="root may write into a read-only folder")
    def test_read_only_folder(self, tmp_path):
        ro = tmp_path / "ro"
        ro.mkdir()
        os.chmod(ro, 0o555)
        try:
            with pytest.raises(WriteError, match="Permission denied"):
                write_file(ro / "a.md", b"x")
        finally:
            os.chmod(ro, 0o755)


class TestCommandsUseIt:
    """Every command that writes gives one line and exit 1 where the system refuses, and leaves no file."""

    @pytest.mark.parametrize(
        "args",
        [
            ("export", str(EXAMPLE), "-o", "{bad}/review.md"),
            ("addin", "example", "{bad}/example.xlsx"),
            ("addin", "lite", "{bad}/lite"),
            ("workbook", "-o", "{bad}/books"),
            ("addin", "install", "--config", "{bad}/.xlwings/xlwings.conf"),  # a home that cannot be written
        ],
    )
    def test_path_below_a_file(self, tmp_path, args):
        (tmp_path / "file").write_text("x")
        bad = str(tmp_path / "file")
        line = one_line(run(*[a.format(bad=bad) for a in args]), {"export": 2}.get(args[0], 1))
        assert "file" in line
        assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]

    def test_import_hf_into_a_folder_below_a_file(self, tmp_path):
        """A Llama-3.1-8B-shaped config.json (its published values); --to a path below a regular file."""
        cfg = tmp_path / "config.json"
        cfg.write_text(
            '{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, '
            '"num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, '
            '"intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072, '
            '"torch_dtype": "bfloat16", "tie_word_embeddings": false, "head_dim": 128}'
        )
        (tmp_path / "file").write_text("x")
        r = run("catalog", "import-hf", str(cfg), "--name", "X", "--to", str(tmp_path / "file" / "cat"))
        assert r.exit_code == 1 and "Traceback" not in r.output
        errors = [line for line in r.stderr.splitlines() if not line.startswith("note:")]
        assert len(errors) == 1 and "Not a directory" in errors[0]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "file"]

    def test_calibrate_to_a_300_character_name(self, tmp_path):
        csv = tmp_path / "runs.csv"
        csv.write_text(
            "gpu,model,batch,input_len,output_len,tpot_ms\nH100,llama2-7b,8,1000,200,12\nH100,llama2-7b,32,1000,200,16\n"
        )
        line = one_line(run("calibrate", str(csv), "-o", str(tmp_path / ("c" * 300 + ".toml"))), 1)
        assert "too long" in line
        assert leftovers(tmp_path) == []

    def test_export_to_stdout(self, tmp_path):
        """``-o -`` writes the review to standard output (the Unix convention), no file named '-'. The example sized
        by Little's law (``QUICK_EXAMPLE``): the output path is under test, not the serving simulation."""
        scenario = tmp_path / "budget-review.toml"
        scenario.write_text(QUICK_EXAMPLE, encoding="utf-8")
        r = CliRunner().invoke(main, ["export", str(scenario), "-o", "-", "--format", "md"])
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith("# ") and "Recommendation" in r.stdout
        assert not Path("-").exists()
        csv = CliRunner().invoke(main, ["export", str(scenario), "-o", "-", "--format", "csv"])
        assert csv.exit_code == 0 and csv.stdout.count("\n") > 3

    def test_calibrate_temporary_name_is_not_predictable(self, tmp_path):
        """0.1.0 wrote through ``.NAME.<pid>.tmp``: a symlink planted there overwrote its target."""
        csv = tmp_path / "runs.csv"
        csv.write_text(
            "gpu,model,batch,input_len,output_len,tpot_ms\nH100,llama2-7b,8,1000,200,12\nH100,llama2-7b,32,1000,200,16\n"
        )
        victim = tmp_path / "victim.txt"
        victim.write_text("precious")
        (tmp_path / f".cal.toml.{os.getpid()}.tmp").symlink_to(victim)
        r = run("calibrate", str(csv), "-o", str(tmp_path / "cal.toml"))
        assert r.exit_code == 0, r.output
        assert victim.read_text() == "precious"
        assert "[[calibration]]" in (tmp_path / "cal.toml").read_text()


# -- two writers, and kills ---------------------------------------------------------------------------------

#: fork() in a process with threads warns on Python 3.12+; these children only call write_file.
forking = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")


def _race(paths: list[str], barrier, results, i: int) -> None:
    """Writer ``i``: for each path, wait for the other writer at the barrier, then write it; (trial, i, outcome)."""
    for trial, path in enumerate(paths):
        barrier.wait()
        try:
            write_file(path, f"writer {i}\n" * 1000)
            results.put((trial, i, "won"))
        except OutputExistsError:
            results.put((trial, i, "refused"))


@forking
def test_two_writers_of_one_new_file_exactly_one_wins(tmp_path):
    """100 trials of two writers released together (a barrier before each new file; two processes that write
    the 100 files in turn): one writes, the other gets OutputExistsError."""
    ctx = mp.get_context("fork")
    paths = [str(tmp_path / f"review-{trial}.md") for trial in range(100)]
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(paths, barrier, results, i)) for i in (0, 1)]
    for p in procs:
        p.start()
    got: dict[int, dict[int, str]] = {}
    for _ in range(2 * len(paths)):
        trial, i, outcome = results.get(timeout=60)
        got.setdefault(trial, {})[i] = outcome
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert [sorted(got[t].values()) for t in range(len(paths))] == [["refused", "won"]] * 100
    for trial, path in enumerate(paths):
        winner = next(i for i, v in got[trial].items() if v == "won")
        assert Path(path).read_text() == f"writer {winner}\n" * 1000  # whole, and the winner's
    assert leftovers(tmp_path) == []


def _slow_writer(path: str, started, force: bool) -> None:
    def slowly(fh):
        fh.write(b"new-" * 1000)
        started.set()
        time.sleep(5)
        fh.write(b"end")

    write_file(path, slowly, force=force)


@forking
@pytest.mark.parametrize("force", [True, False])
def test_sigterm_during_a_write_leaves_the_old_file_and_no_temporary(tmp_path, force):
    """Killed (SIGTERM) mid-write: the old file (or none) and no temporary file; 10 trials per mode."""
    ctx = mp.get_context("fork")
    for trial in range(10):
        path = tmp_path / f"out-{trial}.xlsx"
        if force:
            path.write_bytes(b"old")
        started = ctx.Event()
        p = ctx.Process(target=_slow_writer, args=(str(path), started, force))
        p.start()
        assert started.wait(20)
        time.sleep(0.01 * (trial % 3))
        os.kill(p.pid, signal.SIGTERM)
        p.join(20)
        assert p.exitcode == 128 + signal.SIGTERM  # SystemExit raised by the handler, cleanup ran
        assert (path.read_bytes() == b"old") if force else not path.exists()
    assert leftovers(tmp_path) == []


@forking
def test_sigterm_races_the_commit(tmp_path):
    """SIGTERM at any moment of short writes: always the old or the new complete file, never a temporary one."""
    ctx = mp.get_context("fork")
    path = tmp_path / "out.md"
    old, new = b"old" * 10_000, b"new" * 10_000
    for trial in range(30):
        path.write_bytes(old)
        p = ctx.Process(target=lambda: [write_file(path, new, force=True) for _ in range(1000)])
        p.start()
        time.sleep(0.002 * trial)
        os.kill(p.pid, signal.SIGTERM)
        p.join(20)
        assert path.read_bytes() in (old, new)
    assert leftovers(tmp_path) == []


def test_a_dead_writers_leftovers_go_and_a_running_ones_stay(tmp_path):
    """A killed writer's ``.NAME.<pid>.<random>.part`` file and ``planner-<kind>-<pid>-<random>`` folder are removed;
    those of a running process (this one) are kept."""
    import subprocess
    import sys

    from planner.io.files import remove_stale_parts, remove_stale_temp_dirs

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid, live_pid = int(dead.stdout), os.getpid()
    for pid in (dead_pid, live_pid):
        (tmp_path / f".out.xlsx.{pid}.x1.part").write_bytes(b"")
        (tmp_path / f"planner-render-{pid}-x1").mkdir()
    assert remove_stale_parts(tmp_path / "out.xlsx") == [f".out.xlsx.{dead_pid}.x1.part"]
    assert remove_stale_temp_dirs(tmp_path) == [f"planner-render-{dead_pid}-x1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f".out.xlsx.{live_pid}.x1.part", f"planner-render-{live_pid}-x1"]
    )
