"""The simulation's fast paths (h-simspeed) against the plain forms they replaced, bit for bit.

Each expected value is the replaced code itself, run on the same inputs: ``_pairs`` was ``zip(*pairs)`` and two
``numpy.asarray`` calls; ``_steps_after`` is ``_steps_until`` given ``StepTable.decode_s`` and ``decode_slope_s``;
the admission's ``Run.waiting`` limit (``simulate``) reads min(k, budget // need), k > 0 and whole < k alike.
The whole runs are compared against main's tree by ``bench/sim_identity.py``."""

from __future__ import annotations

import numpy as np
import pytest

from planner.serving.simulate import StepTable, _pairs, _steps_after, _steps_until
from planner.serving.state import Cohort, Run


def _zipped(pairs, shift_s=0.0):
    """``_pairs`` as it was before h-simspeed (planner/serving/simulate.py at b2bafc10)."""
    v, n = zip(*pairs, strict=True)
    return np.asarray(v, dtype=float) + shift_s, np.asarray(n, dtype=np.int64)


@pytest.fixture(scope="module")
def pairs():
    rng = np.random.default_rng(11)
    values = rng.exponential(0.05, 5000).tolist() + [0.0, -0.0, 1e-300, 3.0e5, float("inf")]
    counts = rng.integers(1, 4096, len(values)).tolist()
    return list(zip(values, counts, strict=True))


@pytest.mark.parametrize("shift_s", [0.0, 0.0123, -0.5])
def test_pairs_flattened_equal_the_zipped_arrays_bit_for_bit(pairs, shift_s):
    got, want = _pairs(pairs, shift_s), _zipped(pairs, shift_s)
    assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
    assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


def test_steps_after_a_step_and_its_slope_equals_steps_until_from_the_table():
    table = StepTable(
        decode_lo_s=(0.010, 0.011, 0.013, 0.016), decode_hi_s=(0.012, 0.015, 0.021, 0.030),
        ctx_lo_tokens=128.0, ctx_hi_tokens=8192.0, prefill_tokens=(1.0, 8192.0), prefill_s=(0.01, 0.5), shared_s=0.009,
    )  # fmt: skip
    flat = StepTable((0.02,), (0.02,), 512.0, 512.0, (1.0, 8192.0), (0.01, 0.5), 0.009)  # no context span: slope 0
    for t in (table, flat):
        for b in (1, 2, 3, 4, 9):
            for ctx in (0.0, 300.5, 4000.0, 9000.0):
                for wait in (-1.0, 0.0, 1e-6, 0.0105, 0.5, 37.0):
                    want = _steps_until(t, b, ctx, wait)
                    assert _steps_after(t.decode_s(b, ctx), t.decode_slope_s(b), wait) == want


def test_a_queue_count_stopped_past_the_budget_reads_as_the_whole_count():
    """``simulate`` asks ``Run.waiting`` no further than max(budget // need, 1) + 1: min(k, budget // need), k > 0 and
    whole < k (whole <= min(k, budget // need)) come out as with the whole count, for every budget."""
    run = Run(float("inf"))
    run.queue.extend(Cohort(1, 100, 10, [(0.0, 1)], 0.0) for _ in range(300))
    run.queue.append(Cohort(5, 700, 10, [(0.0, 5)], 0.0))  # other lengths: not one cohort with the rest
    need = 100
    for limit in (1, 7, 256, 1000):
        k = run.waiting(0.0, limit)
        for budget in range(0, 40_000, 613):
            short = run.waiting(0.0, min(limit, max(budget // need, 1) + 1))
            assert min(short, budget // need) == min(k, budget // need)
            assert (short > 0) == (k > 0)
            for whole in range(min(k, budget // need) + 1):
                assert (whole < short) == (whole < k)
