"""planner.model.ops: each elementwise operation on Python numbers gives numpy's value for the same number (the
model's formulas run one scenario in Python floats and a sweep in numpy arrays through these)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.model import ops

NUMBERS = (-2.5, -1.0, 0.0, 1e-300, 0.5, 1.0, 3.0, 8.0, 709.0, 710.0, 1e308, math.inf, -math.inf, math.nan)


@pytest.mark.parametrize(
    ("mine", "numpys"),
    [
        (ops.log2, np.log2),
        (ops.exp, np.exp),
        (ops.log1p, np.log1p),
        (ops.floor, np.floor),
        (ops.ceil, np.ceil),
        (ops.isnan, np.isnan),
    ],
)
def test_a_number_as_numpy(mine, numpys):
    """On each number (negative, 0, tiny, beyond exp's overflow, infinite, NaN) the Python path gives numpy's value
    as a Python number (to 1e-15: math and numpy may differ in the last bit)."""
    with np.errstate(all="ignore"):
        for x in NUMBERS:
            got, want = mine(x), numpys(np.float64(x))
            assert type(got) in (float, int, bool), (x, got)
            assert got == pytest.approx(float(want), rel=1e-15, nan_ok=True), x


def test_searchsorted_and_take():
    """``searchsorted_right`` counts the grid's values <= x as ``numpy.searchsorted(side="right")`` (NaN: all);
    ``take`` reads a grid by an int (a float) or by an array of ints (an array)."""
    grid = (1.0, 2.0, 4.0, 8.0)
    xs = (0.0, 1.0, 1.5, 4.0, 8.0, 9.0, math.nan)
    for x in xs:
        assert ops.searchsorted_right(grid, x) == np.searchsorted(grid, x, side="right"), x
    assert ops.searchsorted_right(grid, np.array(xs)).tolist() == [0, 1, 1, 3, 4, 4, 4]
    assert type(ops.take(grid, 2)) is float and ops.take(grid, 2) == 4.0
    assert ops.take(grid, np.array([0, 3])).tolist() == [1.0, 8.0]
