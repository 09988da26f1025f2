"""A baseline revision's tree for the side-by-side benchmarks (``bench_plan``, ``bench_simulate``, ``sim_identity``):
``git archive REVISION`` unpacked in a temporary folder, removed afterwards."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def baseline_tree(revision: str) -> Iterator[Path]:
    """The files of ``revision`` (any git revision: main, a hash, HEAD~3) in a temporary folder."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        base.mkdir()
        archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True)
        if archive.returncode:
            raise SystemExit(f"git archive {revision}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        yield base
