"""planner.model.rows: per-row values give the numbers of computing every scenario, whatever path an operation takes."""

from __future__ import annotations

import numpy as np
import pytest

from planner.model.rows import Rows, combined_codes


def _rows(seed: int = 0, n: int = 1000, rows: int = 7):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, rows, n)
    return codes, rng.random(rows) + 0.5, rng.random(rows) + 0.5


class TestOperators:
    """Binary operators on Rows take a fast path for Rows of the same codes and Python numbers; others go through
    numpy's dispatch. Both give numpy's result on the gathered arrays, bit for bit."""

    @pytest.mark.parametrize("name", ["add", "sub", "mul", "truediv", "pow", "lt", "le", "gt", "ge", "eq", "ne"])
    def test_same_codes_and_numbers_give_numpys_result(self, name):
        """Rows op Rows, Rows op 2.5, 2.5 op Rows (reflected) against the same operator on plain arrays."""
        import operator

        op = getattr(operator, name)
        codes, a, b = _rows()
        x, y = Rows(a, codes), Rows(b, codes)
        plain_x, plain_y = np.take(a, codes), np.take(b, codes)
        out = op(x, y)
        assert isinstance(out, Rows) and out.codes is codes
        np.testing.assert_array_equal(np.asarray(out), op(plain_x, plain_y))
        np.testing.assert_array_equal(np.asarray(op(x, 2.5)), op(plain_x, 2.5))
        np.testing.assert_array_equal(np.asarray(op(2.5, x)), op(2.5, plain_x))

    def test_other_codes_and_arrays_are_gathered(self):
        """Rows of other codes and per-scenario arrays: the gathered arrays, numpy's result (no Rows)."""
        codes, a, b = _rows()
        other = np.random.default_rng(1).integers(0, 7, codes.size)
        out = Rows(a, codes) - Rows(b, other)
        assert not isinstance(out, Rows)
        np.testing.assert_array_equal(out, np.take(a, codes) - np.take(b, other))
        plain = np.arange(codes.size, dtype=float)
        np.testing.assert_array_equal(Rows(a, codes) * plain, np.take(a, codes) * plain)

    def test_boolean_masks_combine_per_row(self):
        """& and | of Rows of booleans stay per row and equal numpy's on the gathered masks."""
        codes, a, b = _rows()
        x, y = Rows(a > 0.9, codes), Rows(b > 0.9, codes)
        for out, expected in ((x & y, (a > 0.9) & (b > 0.9)), (x | y, (a > 0.9) | (b > 0.9)), (True & x, a > 0.9)):
            assert isinstance(out, Rows)
            np.testing.assert_array_equal(np.asarray(out), np.take(expected, codes))


class TestKeptFacts:
    """A Rows that keeps its gathered values (``keep=True``: a catalog fact) is gathered once, read-only."""

    def test_a_kept_fact_is_gathered_once_and_never_overwritten(self):
        """The fact meets a per-scenario array twice (float arithmetic, where a gathered temporary would be the
        output buffer): both results right, the kept array the same object, read-only, unchanged."""
        codes, a, _ = _rows()
        fact = Rows(a, codes, keep=True)
        plain = np.linspace(1.0, 2.0, codes.size)
        first = fact + plain
        kept = fact.shared()
        second = fact * plain
        assert fact.shared() is kept and not kept.flags.writeable
        np.testing.assert_array_equal(kept, np.take(a, codes))
        np.testing.assert_array_equal(first, np.take(a, codes) + plain)
        np.testing.assert_array_equal(second, np.take(a, codes) * plain)

    def test_asarray_gives_a_new_writable_array(self):
        """np.asarray of a kept fact is the caller's to change: not the kept array."""
        codes, a, _ = _rows()
        fact = Rows(a, codes, keep=True)
        fact.shared()
        out = np.asarray(fact)
        out[:] = 0.0
        np.testing.assert_array_equal(fact.shared(), np.take(a, codes))


class TestCombinedCodes:
    def test_pairs_of_codes_as_one_code_broadcast(self):
        """a x k + b for equal shapes (added in place) and for a column and a row (a grid)."""
        a, b = np.array([0, 1, 2]), np.array([1, 0, 3])
        np.testing.assert_array_equal(combined_codes(a, 4, b), [1, 4, 11])
        grid = combined_codes(a.reshape(-1, 1), 4, b.reshape(1, -1))
        np.testing.assert_array_equal(grid, a.reshape(-1, 1) * 4 + b.reshape(1, -1))


class TestRegroup:
    def test_pairs_are_numbered_over_those_that_occur(self):
        """Every (row, value) pair present (a full grid): the pair's code is row x values + value; one pair
        missing: the codes are renumbered 0..n-1 in the pairs' order, and each pair's row and value read back."""
        from planner.model.rows import regroup

        rows, values = np.repeat(np.arange(3), 40), np.tile(np.arange(4), 30)
        pairs, row_of, value_of = regroup(rows, 3, values, 4)
        np.testing.assert_array_equal(pairs, rows * 4 + values)
        keep = ~((rows == 1) & (values == 2))
        pairs, row_of, value_of = regroup(rows[keep], 3, values[keep], 4)
        assert pairs.max() == 10 and len(row_of) == 11
        np.testing.assert_array_equal(row_of[pairs], rows[keep])
        np.testing.assert_array_equal(value_of[pairs], values[keep])


class TestPerRow:
    def test_measured_allreduce_runs_once_per_row_with_the_numbers_of_every_scenario(self):
        """The all-reduce table's interpolation (vLLM's measured all-reduce, catalogs/reference/allreduce_aic.csv)
        over Rows of per-pair arguments gives a Rows, equal bit for bit (NaN where the table has no value) to the
        array path over the gathered arguments."""
        from planner.engines.allreduce_table import read_allreduce_table
        from planner.model.collectives import table_allreduce_time_s

        table = read_allreduce_table()
        rng = np.random.default_rng(3)
        codes = rng.integers(0, 50, 5000)
        row = Rows(rng.integers(0, len(table.gpus), 50).astype(float), codes)
        message = Rows(2.0 ** rng.uniform(5, 31, 50), codes)
        graph = Rows(rng.random(50) < 0.5, codes)
        for gpus in (np.asarray(2.0), np.asarray(8.0), np.asarray(3.0)):
            out = table_allreduce_time_s(table, row, message, gpus, graph)
            assert isinstance(out, Rows) and out.values.size == 50
            expected = table_allreduce_time_s(table, np.asarray(row), np.asarray(message), gpus, np.asarray(graph))
            np.testing.assert_array_equal(np.asarray(out), expected)
        assert np.isfinite(np.asarray(table_allreduce_time_s(table, row, message, np.asarray(8.0), graph))).any()
