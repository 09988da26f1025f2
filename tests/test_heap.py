"""planner.io.heap: glibc's learned malloc thresholds, set once before the first large sweep.

Each case runs in a fresh Python process: the thresholds are process-wide and set once, so a case must not see
another's. Expected values: glibc malloc/malloc.c (DEFAULT_MMAP_THRESHOLD_MAX = 4 x 1024 x 1024 x sizeof(long) =
32 MiB on 64-bit; ``free`` raises the trim threshold to twice the mmap threshold) and the page faults the kernel
counts (``getrusage`` ru_minflt).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest

from planner.io import heap

GLIBC = sys.platform.startswith("linux") and hasattr(ctypes.CDLL(None), "gnu_get_libc_version")

# Ten 1.6 MB arrays made and freed, 20 times over (a sweep's temporaries); page faults counted after the first round.
COUNT_FAULTS = textwrap.dedent(
    """
    import resource
    def churn():
        arrays = [np.ones(200_000) for _ in range(10)]
        del arrays
    churn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        churn()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    """
)
CHURN = (
    textwrap.dedent(
        """
        import json, sys
        import numpy as np
        from planner.io import heap
        first = heap.keep_heap_for_sweeps(int(sys.argv[1]))
        again = heap.keep_heap_for_sweeps(10**9)
        """
    )
    + COUNT_FAULTS
    + 'print(json.dumps({"first": first, "again": again, "faults": faults}))\n'
)


def churn(values: int, malloc: str | None = None) -> dict:
    env = dict(os.environ)
    env.pop("PLANNER_MALLOC", None)
    if malloc is not None:
        env["PLANNER_MALLOC"] = malloc
    out = subprocess.run(
        [sys.executable, "-c", CHURN, str(values)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_thresholds_are_glibcs_own_ceiling():
    assert heap.MMAP_THRESHOLD_BYTES == 4 * 1024 * 1024 * 8  # DEFAULT_MMAP_THRESHOLD_MAX, 64-bit
    assert heap.TRIM_THRESHOLD_BYTES == 2 * heap.MMAP_THRESHOLD_BYTES
    assert heap.SWEEP_VALUES * 8 == 128 * 1024  # float64 arrays from glibc's starting mmap threshold


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_a_sweep_reuses_the_heap_instead_of_faulting_in_fresh_pages():
    kept = churn(200_000, malloc="sweeps")
    assert kept["first"] is True and kept["again"] is True
    default = churn(200_000, malloc="default")
    assert default["first"] is False
    # glibc as it starts trims the freed 16 MB and faults it back in every round: 20 x 10 x 391 pages
    assert default["faults"] > 20_000
    assert kept["faults"] < 200


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_a_small_sweep_leaves_malloc_alone_and_a_later_large_one_sets_it():
    out = churn(heap.SWEEP_VALUES - 1, malloc="sweeps")
    assert out["first"] is False  # below the mmap threshold: nothing to keep
    assert out["again"] is True  # the later 10**9-value call sets it
    assert out["faults"] < 200


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_a_library_call_leaves_malloc_alone_unless_asked():
    """Issue 24: a process that did not ask (no ``allow()``, no ``PLANNER_MALLOC``) keeps glibc's malloc as it
    starts: a sweep's pattern of arrays faults its pages in every round, as in the "default" case above."""
    out = churn(200_000)
    assert out["first"] is False and out["again"] is False
    assert out["faults"] > 20_000


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_the_planner_command_opts_its_process_in():
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom planner.cli import main\nfrom planner.io import heap\n"
        "CliRunner().invoke(main, ['catalog', 'list', 'gpus'])\nprint(heap.keep_heap_for_sweeps(10**6))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_MALLOC"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "True"


def test_off_glibc_nothing_is_done(monkeypatch):
    monkeypatch.setattr(heap, "_state", {"done": False, "set": False, "allowed": True})
    monkeypatch.setattr(heap.sys, "platform", "darwin")
    assert heap.keep_heap_for_sweeps(10**6) is False
    assert heap._state["done"] is True


# A library user's sweep through the public API (20,000 scenarios: above SWEEP_VALUES, so deploy asks for the heap),
# with planner.cli imported too (importing the command does not opt in; running it does), then the churn counted.
LIBRARY_SWEEP = (
    textwrap.dedent(
        """
        import json
        import numpy as np
        import planner, planner.cli
        from planner.io import heap
        rng = np.random.default_rng(5)
        gpus = rng.choice(np.array(["H100", "L4", "A100 SXM 80GB"], dtype=object), 20_000)
        out = planner.max_batch(gpus, "llama3.1-8b", rng.choice([2048, 8192], 20_000), gpus=1)
        asked = heap._state["done"]
        """
    )
    + COUNT_FAULTS
    + 'print(json.dumps({"set": heap._state["set"], "asked": asked, "faults": faults, "n": int(out.size)}))\n'
)


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
@pytest.mark.parametrize("malloc", [None, "sweeps"])
def test_a_library_sweep_changes_malloc_only_when_the_process_opted_in(malloc):
    """Issue 24 Build 5: planner.max_batch over 20,000 scenarios in a fresh process leaves glibc's malloc as it
    starts (the freed 16 MB trimmed and faulted back each round, > 20,000 faults, as test_a_library_call_leaves_
    malloc_alone_unless_asked counts) unless the process opted in (PLANNER_MALLOC=sweeps: < 200 faults)."""
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_MALLOC"}
    if malloc is not None:
        env["PLANNER_MALLOC"] = malloc
    proc = subprocess.run([sys.executable, "-c", LIBRARY_SWEEP], env=env, capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["n"] == 20_000
    if malloc is None:
        assert out["set"] is False and out["asked"] is False and out["faults"] > 20_000
    else:
        assert out["set"] is True and out["faults"] < 200
