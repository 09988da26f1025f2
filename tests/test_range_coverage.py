"""Coverage arithmetic of bench/range_coverage.py on hand-made figures with known answers (not the live figures).

A 10th-90th percentile range holds 80% of figures, 10% on each side (nominal). A time's range is predicted x
(1 + low) .. predicted x (1 + high) (``planner.report.Plan.time_range``); a rate's is predicted / (1 + high) ..
predicted / (1 + low) (``planner.accuracy.predict.throughput_range``), the same range on the time 1 / rate.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from bench_support import bench_module

from planner.accuracy.ranges import TimeRange
from planner.accuracy.serving_margin import ServingRegion, margin_pool, margin_range

rc = bench_module("range_coverage")


class TestPlacement:
    def test_time_range_ends_are_inside(self):
        """100 ms predicted with -20% / +30%: 80 and 130 ms are inside, 79 below, 131 above."""
        at = [rc.placement(100.0, pub, -0.20, 0.30) for pub in (80.0, 130.0, 79.0, 131.0, 100.0)]
        assert at == ["inside", "inside", "below", "above", "inside"]

    def test_rate_range_divides_the_prediction(self):
        """1,000 tokens/s predicted with -20% / +25% (time residuals): the rate range is 800 .. 1,250 tokens/s."""
        at = [rc.placement(1000.0, pub, -0.20, 0.25, rate=True) for pub in (800.0, 1250.0, 799.0, 1251.0)]
        assert at == ["inside", "inside", "below", "above"]

    def test_a_slow_run_is_above_as_a_time_and_below_as_a_rate(self):
        """A run 50% slower than predicted (range +30% high) is over the time range and under the rate range."""
        assert rc.placement(10.0, 15.0, -0.2, 0.3) == "above"
        assert rc.placement(1 / 10.0, 1 / 15.0, -0.2, 0.3, rate=True) == "below"

    def test_no_range_without_a_prediction(self):
        """A prediction that is not a positive number has no range."""
        with pytest.raises(ValueError, match="no range"):
            rc.placement(float("nan"), 1.0, -0.2, 0.3)


class TestTally:
    def test_nominal_shares(self):
        """8 inside, 1 below, 1 above: 80% / 10% / 10%, the nominal shares."""
        c = rc.tally(["inside"] * 8 + ["below", "above"])
        assert (c.figures, c.share("inside"), c.share("below"), c.share("above")) == (10, 0.8, 0.1, 0.1)

    def test_line_prints_shares(self):
        """The table line gives the figures and whole-percent shares."""
        line = rc.coverage_line("all", rc.tally(["inside"] * 3 + ["above"]))
        assert line.split() == ["all", "4", "75%", "0%", "25%"]

    def test_unknown_placement_refused(self):
        with pytest.raises(ValueError, match="inside, below or above"):
            rc.tally(["inside", "beside"])


def _row(source: str, tpot_s: float) -> SimpleNamespace:
    """A steady-load serving row (4 of 100 prompts in flight) of vLLM 0.11, from ``source``."""
    return SimpleNamespace(
        tpot_s=tpot_s, kind="serving", batch=4, num_prompts=100, request_rate=None, engine="vllm", source_group=source,
        engine_version="0.11.0", parallelism="tp", gpus=1,
    )  # fmt: skip


class TestLeftOutRegions:
    def test_leaving_a_source_out_rebuilds_the_table_from_the_rest(self):
        """Source a: 2 figures +10%, +20%; source b: 5 figures -10% .. +30%. Without a, the region is b's 5 figures
        (10th / 90th percentile of -10, 0, +10, +20, +30%: -6% / +26%); without b, a's 2 (+10% / +20%)."""
        rows = [_row("a", 1.1), _row("a", 1.2)] + [_row("b", x) for x in (0.9, 1.0, 1.1, 1.2, 1.3)]
        pred, gpus, classes = [1.0] * len(rows), ["H100 SXM 80GB"] * len(rows), ["dense"] * len(rows)
        without_a = rc.left_out_regions(rows, pred, gpus, classes, "a")[KEY]
        assert (without_a.rows, without_a.low, without_a.high, without_a.sources) == (5, -0.06, 0.26, "b")
        without_b = rc.left_out_regions(rows, pred, gpus, classes, "b")[KEY]
        assert (without_b.rows, without_b.smallest, without_b.largest) == (2, 0.10, 0.20)
        assert rc.left_out_regions(rows, pred, gpus, classes, "b")[("*", "vllm", "dense", "all")].rows == 2

    def test_only_source_left_out_leaves_no_region(self):
        """A region all from one source is gone once that source is left out: the prediction range applies."""
        rows = [_row("a", 1.1)]
        assert rc.left_out_regions(rows, [1.0], ["H200 SXM 141GB"], ["dense"], "a") == {}
        prediction = TimeRange(-0.37, 0.09, "H200's held-out residuals")
        assert margin_range(prediction, "H200 SXM 141GB", "vllm", "dense", {}) == prediction


KEY = ("H100 SXM 80GB", "vllm", "dense", "all")
QUERY = KEY[:3]


class TestMarginRule:
    def test_rule_branches(self):
        """At least 5 figures of its own: their quantiles; 1-4 (none elsewhere): the prediction range widened to their
        extremes; none: the prediction range (``margin_range``'s rule with given regions, ``MarginPool.kind``)."""
        prediction = TimeRange(-0.29, 0.44, "H100's held-out residuals")
        five = ServingRegion(*QUERY, 9, -0.08, -0.06, 0.04, -0.08, 0.09, "x")
        two = ServingRegion(*QUERY, 2, 0.27, 0.53, 0.80, 0.20, 0.87, "x")
        assert margin_range(prediction, *QUERY, {KEY: five})[:2] == (-0.08, 0.04)
        assert margin_range(prediction, *QUERY, {KEY: two})[:2] == (-0.29, 0.87)
        assert rc.rule_of(margin_pool(*QUERY, {KEY: five})).startswith("own quantiles")
        assert rc.rule_of(margin_pool(*QUERY, {KEY: two})).endswith("own 1-4")
        assert rc.rule_of(margin_pool(*QUERY, {})).startswith("prediction range (no")


def _record(published: float, rate: bool = False) -> dict:
    """A figure predicted at 100 (ms, or tokens/s for a rate) with a -10% / +10% range."""
    return dict(predicted=100.0, published=published, rate=rate, low=-0.10, high=0.10)


class TestSourceCvRule:
    def test_moved_out(self):
        """All GPUs' -23% / +36% moved out x1.50 at the high end: 1.36 x 1.50 = 2.04, +104%; the low end kept."""
        assert rc.moved_out(-0.23, 0.36, 1.0, 1.5) == (-0.23, 1.04)
        assert rc.moved_out(-0.23, 0.36, 1.25, 1.0) == (-0.39, 0.36)  # 0.77 / 1.25 = 0.616, rounded outwards

    def test_needed_multiplier(self):
        """150 ms against 100 ms +10%: x1.36 (1.1 x 1.36 = 1.496, +50% rounded outwards); 200 ms: x1.81; a rate
        half the predicted one is a time twice it: x1.81 too."""
        assert rc.needed_multiplier(_record(150.0), "high") == 1.36
        assert rc.needed_multiplier(_record(200.0), "high") == 1.81
        assert rc.needed_multiplier(_record(50.0, rate=True), "high") == 1.81
        assert rc.needed_multiplier(_record(150.0), "low") == 1.0

    def test_multipliers_leave_a_tenth_outside(self):
        """8 figures inside, 150 and 200 ms slower: at most 1 of 10 may stay out, so the high end moves x1.36 (the
        9th smallest need) and 200 ms stays above; nothing is faster, so the low end stays."""
        records = [_record(100.0)] * 8 + [_record(150.0), _record(200.0)]
        assert rc.multipliers(records) == (1.0, 1.36)


@pytest.mark.xdist_group("test_heldout")  # the worker that computes the shared held-out checks (tests/test_heldout.py)
def test_readme_states_todays_coverage(held_out_time_checks):
    """README's Accuracy bullet ('it holds 60% of the held-out TPOT and 42% of the TTFT figures') carries the shares
    bench/range_coverage.py's first part computes now, on the held-out checks every doc test shares (conftest.py)."""
    import re
    from pathlib import Path

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"it holds (\d+)% of the held-out TPOT and (\d+)% of the TTFT figures", readme)
    assert m, "README's Accuracy bullet changed shape; update this test with it"
    records, _ = rc.prediction_records(held_out_time_checks)
    shares = [round(100 * rc.tally(r["at"] for r in records if r["q"] == q).share(rc.INSIDE)) for q in ("TPOT", "TTFT")]
    assert list(map(int, m.groups())) == shares


def test_source_weighted_inside_gives_each_source_one_vote():
    """Source a: 9 figures inside; b: 1 figure above. Per figure 90% inside; each source weighing 1, (1 + 0) / 2."""
    records = [dict(fold="a", at="inside")] * 9 + [dict(fold="b", at="above")]
    assert rc.source_weighted_inside(records) == 0.5
    assert math.isnan(rc.source_weighted_inside([]))


class TestStatedCoverage:
    """What ``plan`` says of its own ranges: the shares of ``catalogs/reference/range_coverage.csv`` (part 1's totals,
    ``--write-coverage``), which docs/accuracy.md's "Do the ranges hold?" table prints."""

    def test_the_file_is_the_docs_table(self):
        from pathlib import Path

        from planner.accuracy.ranges import load_coverage

        doc = (Path(__file__).resolve().parents[1] / "docs" / "accuracy.md").read_text(encoding="utf-8")
        for c in load_coverage().values():
            line = f"| {c.quantity} ({c.figures}) | " + " | ".join(
                f"{n / c.figures:.0%}" for n in (c.inside, c.below, c.above)
            )
            assert line + " |" in doc, line

    def test_the_note_by_hand(self, tmp_path):
        """60 of 100 TPOT figures inside, 30 slower, from 4 sources; 40 of 80 TTFT, 36 slower, from 5."""
        from planner.accuracy.ranges import coverage_note

        path = tmp_path / "coverage.csv"
        path.write_text("quantity,inside,below,above,sources\nTPOT,60,10,30,4\nTTFT,40,4,36,5\nserving,1,1,1,1\n")
        assert coverage_note(str(path)) == (
            "of 100 TPOT and 80 TTFT figures of published runs from sources planner never saw (4 and 5 sources), "
            "60% and 50% lie inside their range (nominal 80%) and 30% and 45% are slower (docs/accuracy.md, "
            "'Do the ranges hold?')"
        )
        assert coverage_note(str(tmp_path / "absent.csv")) == ""

    def test_the_writer_counts_each_quantitys_placements_and_sources(self, tmp_path, monkeypatch):
        """Three TPOT figures of two sources (inside, inside, above) and one TTFT figure (below) of one."""
        import csv

        records = [
            dict(q="TPOT", at="inside", fold="a"),
            dict(q="TPOT", at="inside", fold="b"),
            dict(q="TPOT", at="above", fold="b"),
            dict(q="TTFT", at="below", fold="a"),
        ]
        monkeypatch.setattr(rc, "prediction_records", lambda checks: (records, 0))
        path = rc.write_coverage([], tmp_path / "coverage.csv")
        with path.open(newline="") as f:
            rows = {r["quantity"]: r for r in csv.DictReader(f)}
        assert [rows["TPOT"][k] for k in ("inside", "below", "above", "sources")] == ["2", "0", "1", "2"]
        assert [rows["TTFT"][k] for k in ("inside", "below", "above", "sources")] == ["0", "1", "0", "1"]
        assert rows["serving throughput"]["sources"] == "0"

    def test_plan_states_it_and_a_calibration_file_replaces_it(self, tmp_path):
        """``planner plan`` prints the note under its ranges and ``--json`` its counts; with a calibration file whose
        own range stands (s93), neither: the held-out coverage is not that range's."""
        import json

        from cli_support import run

        from planner.accuracy.ranges import coverage_note, load_coverage

        args = ("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "4096")
        text = run(*args)
        held = [line for line in text.output.splitlines() if line.startswith("Time ranges held ")]
        assert text.exit_code == 0 and [line.split(None, 3)[3] for line in held] == [coverage_note()]
        got = json.loads(run(*args, "--json").output)
        tpot = load_coverage()["TPOT"]
        assert got["time_range_coverage"]["TPOT"] == {
            "figures": tpot.figures, "inside": tpot.inside, "below": tpot.below, "above": tpot.above,
            "sources": tpot.sources,
        }  # fmt: skip
        cal = tmp_path / "cal.toml"
        cal.write_text('[[calibration]]\ngpu = "H100"\nresidual_low = -0.02\nresidual_high = 0.01\nsource = "test"\n')
        calibrated = run(*args, "--calibration", str(cal))
        assert calibrated.exit_code == 0 and "Time ranges held" not in calibrated.output
        assert json.loads(run(*args, "--calibration", str(cal), "--json").output)["time_range_coverage"] == {}

    def test_the_workbooks_ranges_sheet_states_it(self):
        """The what-if workbook's Ranges sheet says how often such ranges held, beside the range it computes: the
        file's shares, TPOT then TTFT (row 8), and the counts in its note (G8, the Source or meaning column printed
        beside the repeated Setting and Value: tests/test_trial13_print.py)."""
        from planner.accuracy.ranges import stated_coverage
        from planner.workbook.build import build_whatif
        from planner.workbook.layout import RANGES_SHEET

        sheet = next(s for s in build_whatif(load=False).sheets if s.name == RANGES_SHEET)
        tpot, ttft = stated_coverage()
        assert sheet.cells["A8"].value == "How often such ranges held: TPOT / TTFT"
        assert [sheet.cells[c].value for c in ("B8", "C8")] == [tpot.inside / tpot.figures, ttft.inside / ttft.figures]
        assert f"TPOT {tpot.inside} of {tpot.figures}, TTFT {ttft.inside} of {ttft.figures}" in sheet.cells["G8"].value
