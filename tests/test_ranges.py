"""Ranges of time predictions from held-out residuals of the nearest covered region (issue 10 item 3)."""

from __future__ import annotations

import pytest

from planner import ranges
from planner.calibration import Calibration, GpuCalibration, residual_range

FILE = """gpu,rows,residual_low,residual_high,sources
*,40,-0.30,0.20,a b
H100 SXM 80GB,12,-0.10,0.25,a
L40S,3,-0.05,0.05,b
"""


@pytest.fixture
def regions(tmp_path, monkeypatch):
    p = tmp_path / "heldout_residuals.csv"
    p.write_text(FILE)
    monkeypatch.setattr(ranges, "residuals_file", lambda: p)
    ranges.load_regions.cache_clear()
    yield
    ranges.load_regions.cache_clear()


def test_a_covered_gpu_gets_its_own_quantiles(regions):
    low, high, note = ranges.region_residuals("H100 SXM 80GB", (-0.09, 0.08))
    assert (low, high) == (-0.10, 0.25) and "12 published figures" in note


@pytest.mark.parametrize("gpu", ["L40S", "T4"])
def test_outside_coverage_the_all_gpu_range_widens_with_a_note(regions, gpu):
    """L40S has 3 figures (< MIN_ROWS = 5) and T4 none: all GPUs' -30% / +20%, widened x1.5."""
    low, high, note = ranges.region_residuals(gpu, (-0.09, 0.08))
    assert (low, high) == (-0.45, 0.30)
    assert note.startswith(f"no held-out rows on {gpu}") and "widened x1.5" in note


def test_a_calibration_entry_wins(regions):
    cal = Calibration((GpuCalibration(gpu="H100", residual_low=-0.02, residual_high=0.03, source="mine"),))
    assert residual_range("H100", calibration=cal) == (-0.02, 0.03, "your calibration file (mine)")


def test_without_the_file_the_fit_residuals_are_used(tmp_path, monkeypatch):
    monkeypatch.setattr(ranges, "residuals_file", lambda: tmp_path / "absent.csv")
    ranges.load_regions.cache_clear()
    try:
        assert ranges.region_residuals("H100 SXM 80GB", (-0.09, 0.08))[:2] == (-0.09, 0.08)
    finally:
        ranges.load_regions.cache_clear()
