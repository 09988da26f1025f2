"""The source bootstrap (planner.accuracy.bootstrap): hand-made examples whose answer is known without the code."""

from __future__ import annotations

import importlib
import statistics

import numpy as np
import pytest
from bench_support import bench_module

from planner.accuracy import bootstrap as bs
from planner.errors import PlannerError


class TestSourceCounts:
    def test_each_resample_draws_as_many_sources_as_there_are(self):
        """A resample of 7 sources holds 7 draws, each of a source that exists."""
        counts = bs.source_counts(7, resamples=500, seed=3)
        assert counts.shape == (500, 7)
        assert (counts.sum(axis=1) == 7).all() and (counts >= 0).all()

    def test_the_same_seed_draws_the_same_resamples(self):
        """Figures repeat: one seed, one draw; another seed, another."""
        assert (bs.source_counts(5, 50, seed=1) == bs.source_counts(5, 50, seed=1)).all()
        assert (bs.source_counts(5, 50, seed=1) != bs.source_counts(5, 50, seed=2)).any()

    def test_draws_are_uniform(self):
        """Each of 4 sources is drawn once per resample on average (4 draws over 4 equal cells)."""
        counts = bs.source_counts(4, resamples=20_000, seed=0)
        assert counts.mean(axis=0) == pytest.approx([1.0] * 4, abs=0.03)

    def test_no_source_is_refused(self):
        """An empty set of sources says so in one line."""
        with pytest.raises(PlannerError, match="at least one source"):
            bs.source_counts(0)


class TestWeightedStatistic:
    def test_two_sources_enumerated(self):
        """Sources A (error 0.1) and B (0.3): the four resamples AA, AB, BA, BB have medians 0.1, 0.2, 0.2, 0.3."""
        weights = np.array([[2, 0], [1, 1], [1, 1], [0, 2]])
        assert bs.weighted_statistic([0.1, 0.3], weights).tolist() == pytest.approx([0.1, 0.2, 0.2, 0.3])
        assert bs.weighted_statistic([0.1, 0.3], weights, "worst").tolist() == [0.1, 0.3, 0.3, 0.3]

    def test_equals_statistics_median_of_the_multiset(self):
        """Each resample's median is statistics.median of the values repeated by their counts (odd and even totals)."""
        rng = np.random.default_rng(7)
        values = rng.random(9)
        weights = rng.integers(0, 4, size=(200, 9))
        weights[0] = 0
        weights[0, 3] = 1  # a total of one
        got = bs.weighted_statistic(values, weights)
        for w, g in zip(weights, got, strict=True):
            multiset = np.repeat(values, w).tolist()
            assert g == (statistics.median(multiset) if multiset else pytest.approx(np.nan, nan_ok=True))

    def test_a_value_not_predicted_is_left_out(self):
        """NaN counts as absent: the median of (0.2, NaN, 0.4) is 0.3; a resample of NaN only is NaN."""
        out = bs.weighted_statistic([0.2, np.nan, 0.4], np.array([[1, 1, 1], [0, 3, 0]]))
        assert out[0] == pytest.approx(0.3) and np.isnan(out[1])

    def test_an_unknown_statistic_is_refused(self):
        with pytest.raises(PlannerError, match="did you mean median or worst"):
            bs.weighted_statistic([0.1], np.ones((1, 1)), "mean")


class TestSourceInterval:
    def test_one_source_has_no_spread(self):
        """With one source every resample is the data itself: the interval is the observed median."""
        got = bs.source_interval([0.1, -0.5, 0.2], ["a", "a", "a"])
        assert (got.observed, got.low, got.high) == pytest.approx((0.2, 0.2, 0.2))

    def test_rows_of_a_source_move_together(self):
        """Source A holds three rows at 0.1, B one at 0.5: the median is 0.5 only when B is drawn twice (1 in 4),
        so the 90% interval of the median reaches 0.5 and starts at 0.1; a row bootstrap (4 independent rows)
        would need three of four draws at 0.5."""
        got = bs.source_interval([0.1, 0.1, 0.1, 0.5], ["A", "A", "A", "B"], resamples=2000)
        assert (got.observed, got.low, got.high) == pytest.approx((0.1, 0.1, 0.5))

    def test_lengths_must_match(self):
        with pytest.raises(PlannerError, match="3 errors but 2 sources"):
            bs.source_interval([0.1, 0.2, 0.3], ["a", "b"])


class TestPairedDifference:
    ERRORS = [0.05, -0.30, 0.12, 0.5, -0.02, 0.25, 0.07, -0.11]
    SOURCES = ["s1", "s1", "s2", "s3", "s3", "s3", "s4", "s5"]

    def test_identical_predictions_differ_by_exactly_zero(self):
        """The same errors on both sides: 0 in every resample (neither worse nor better), interval [0, 0]."""
        got = bs.paired_difference(self.ERRORS, list(self.ERRORS), self.SOURCES)
        assert (got.observed, got.low, got.high, got.p_worse, got.p_better) == (0.0, 0.0, 0.0, 0.0, 0.0)

    def test_a_constant_shift_is_that_shift_in_every_resample(self):
        """Every |error| 10 points higher: the median is 10 points higher in every resample (order kept)."""
        a = [abs(e) for e in self.ERRORS]
        got = bs.paired_difference(a, [e + 0.10 for e in a], self.SOURCES, resamples=300)
        assert (got.observed, got.low, got.high) == pytest.approx((0.10, 0.10, 0.10), abs=1e-12)
        assert (got.p_worse, got.p_better) == (1.0, 0.0)
        worst = bs.paired_difference(a, [e + 0.10 for e in a], self.SOURCES, "worst", resamples=300)
        assert (worst.low, worst.high) == pytest.approx((0.10, 0.10), abs=1e-12)

    def test_resamples_are_paired(self):
        """Sources A (0.1) and B (0.3 under a, 0.5 under b): AA ties, AB is 0.1 worse, BB 0.2 worse, so b is worse in
        3 of 4 resamples and the difference runs 0 to 0.2 (two separate draws would also give b better)."""
        got = bs.paired_difference([0.1, 0.3], [0.1, 0.5], ["A", "B"], resamples=4000, seed=11)
        assert got.p_worse == pytest.approx(0.75, abs=0.03) and got.p_better == 0.0
        assert (got.observed, got.low, got.high) == pytest.approx((0.1, 0.0, 0.2))

    def test_a_row_one_side_does_not_predict_leaves_that_side_only(self):
        """NaN in b drops that row from b's median only: a's median stays that of all rows."""
        b = list(self.ERRORS)
        b[3] = float("nan")
        got = bs.paired_difference(self.ERRORS, b, self.SOURCES)
        assert got.a == statistics.median(abs(e) for e in self.ERRORS)
        assert got.b == statistics.median(abs(e) for i, e in enumerate(self.ERRORS) if i != 3)


class TestSwitchTable:
    """bench/switch_bootstrap.py's comparison, on hand-made figures ([set, quantity, record, source, error])."""

    MAIN = [
        ["held-out", "TPOT", "r1", "s1", 0.10],
        ["held-out", "TPOT", "r2", "s1", -0.20],
        ["held-out", "TPOT", "r3", "s2", 0.40],
        ["held-out", "TPOT", "r4", "s3", None],
    ]

    def test_the_same_figures_move_nothing(self):
        """main against itself: +0.00 points, interval [+0.00, +0.00], never worse nor better."""
        lines = bench_module("switch_bootstrap").compare(self.MAIN, self.MAIN, "itself", 200)
        median = next(line for line in lines if "median" in line and "TPOT" in line)
        assert median.split()[3:11] == ["20.00%", "20.00%", "+0.00", "[+0.00,", "+0.00]", "0.00", "0.00", "3"]

    def test_a_switch_five_points_worse_everywhere(self):
        """Every |error| 5 points higher: the median is 5 points worse in every resample, P(worse) 1."""
        switched = [[*f[:4], None if f[4] is None else abs(f[4]) + 0.05] for f in self.MAIN]
        lines = bench_module("switch_bootstrap").compare(self.MAIN, switched, "worse", 200)
        median = next(line for line in lines if "median" in line and "TPOT" in line)
        assert median.split()[3:10] == ["20.00%", "25.00%", "+5.00", "[+5.00,", "+5.00]", "1.00", "0.00"]

    def test_figures_of_other_rows_are_refused(self):
        """Two sides must hold the same rows in the same order."""
        other = [[*self.MAIN[1]], [*self.MAIN[0]], *self.MAIN[2:]]
        with pytest.raises(SystemExit, match="not the same rows"):
            bench_module("switch_bootstrap").compare(self.MAIN, other, "shuffled", 10)


def test_every_module_flag_switch_names_an_attribute_the_module_has():
    """A switch that sets a module attribute (bench/switch_bootstrap.py's MODULE_FLAGS) names one that exists and is
    offered on the command line: a renamed flag would otherwise be set on the module as a new name and the comparison
    would measure main against itself."""
    sb = bench_module("switch_bootstrap")
    for switch, (module, name, _value) in sb.MODULE_FLAGS.items():
        assert hasattr(importlib.import_module(module), name), (switch, module, name)
        assert switch in sb.SWITCHES or switch in sb.ABLATIONS, switch


def test_a_source_neither_side_predicts_is_not_drawn():
    """Rows NaN on both sides leave before resampling: adding such a source changes no figure of the comparison."""
    a, b, sources = [0.1, 0.3, 0.2], [0.1, 0.5, 0.2], ["A", "B", "C"]
    plain = bs.paired_difference(a, b, sources, resamples=500)
    padded = bs.paired_difference([*a, float("nan")], [*b, float("nan")], [*sources, "D"], resamples=500)
    assert padded == plain
