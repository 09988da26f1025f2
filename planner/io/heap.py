"""The C heap kept between a sweep's arrays: glibc's own learned malloc thresholds, set before the first sweep.

A sweep of 200,000 scenarios makes a few hundred temporary arrays of 1.6 MB. glibc's malloc serves a block of
at least ``M_MMAP_THRESHOLD`` (128 KiB at start) with a fresh ``mmap`` and gives it back on ``free``; each new
block then costs a page fault per 4 KiB page it touches. glibc learns: freeing such a block raises the
threshold to the block's size (at most 32 MiB on 64-bit, ``DEFAULT_MMAP_THRESHOLD_MAX``) and the trim threshold
to twice that (glibc malloc/malloc.c, ``free``). It learns from the first block freed, though: after a 1.6 MB
block it still trims the heap each time more than 3.2 MB lies free at its top, which a sweep's temporaries do
many times a call. Measured on a 2-core Linux machine (``bench/bench_model.py``): about 10,000 page faults per
sweep of 200,000 scenarios, half its time.

Only when asked: the thresholds are process-wide and, once set, stay for the life of the process (glibc has no way
back to its own learning), so a library call never sets them by itself: a notebook or Excel's Python keeps its
malloc as it is. A process opts in with ``PLANNER_MALLOC=sweeps`` in its environment or by calling ``allow()``
(the ``planner`` command and the benchmarks do); ``PLANNER_MALLOC=default`` keeps glibc as it is even then.

``keep_heap_for_sweeps`` then sets the thresholds glibc would reach by itself after freeing a 32 MiB block (mmap
above 32 MiB, trim above 64 MiB), once per process, the first time planner evaluates arrays large enough to be
mmapped (16,384 float64 values: 128 KiB). The process then keeps up to 64 MiB of freed memory at the top of its
heap for its next arrays, and arrays up to 32 MiB come from the heap (freed space below a live block is kept for
reuse), as after glibc's own learning. Values are unchanged (this is where memory comes from, not what is
computed). Elsewhere (macOS, Windows, musl, Pyodide) nothing is done.
"""

from __future__ import annotations

import os
import sys

#: glibc's ceiling for the learned mmap threshold on 64-bit (4 x 1024 x 1024 x sizeof(long)).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: glibc sets the trim threshold to twice the mmap threshold when it raises it.
TRIM_THRESHOLD_BYTES = 2 * MMAP_THRESHOLD_BYTES
#: Arrays from this many values (float64: 128 KiB, glibc's starting mmap threshold) are mmapped by default.
SWEEP_VALUES = 16_384

_M_TRIM_THRESHOLD = -1  # mallopt parameters, glibc's malloc.h
_M_MMAP_THRESHOLD = -3

_state = {"done": False, "set": False, "allowed": False}


def allow() -> None:
    """Opt this process in: the next large sweep sets the thresholds (the ``planner`` command, the benchmarks)."""
    _state["allowed"] = True


def _asked() -> str:
    """``PLANNER_MALLOC`` as given: "sweeps" (opt in), "default" (never) or "" (only after ``allow()``)."""
    return os.environ.get("PLANNER_MALLOC", "").strip().lower()


def keep_heap_for_sweeps(values: int) -> bool:
    """Set glibc's learned malloc thresholds the first time a sweep of at least ``SWEEP_VALUES`` values runs, in a
    process that asked for it (``allow()`` or ``PLANNER_MALLOC=sweeps``).

    Returns whether the thresholds are set (now or before); False when not asked, off glibc or with
    ``PLANNER_MALLOC=default``.
    """
    if _state["done"] or values < SWEEP_VALUES or not (_state["allowed"] or _asked() == "sweeps"):
        return _state["set"]
    _state["done"] = True
    if _asked() == "default" or not sys.platform.startswith("linux"):
        return False
    import ctypes  # here, not at import: Pyodide (xlwings Lite) never gets this far

    try:
        libc = ctypes.CDLL(None)  # the process's own C library
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    if not hasattr(libc, "gnu_get_libc_version"):  # glibc only: musl's mallopt does nothing
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    _state["set"] = bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)
    )
    return _state["set"]
