"""Ranges of time predictions from held-out residuals of the nearest covered region, widened per uncovered
dimension (issue 10 item 3; planner.accuracy.ranges).

Expected values are read from the shipped catalogs/reference/heldout_residuals.csv (written by
``python bench/loso.py --write-residuals``; tests/test_holdout.py re-derives it), or from a small file written here.
"""

from __future__ import annotations

import math

import pytest

from planner.accuracy import ranges
from planner.accuracy.calibration import Calibration, GpuCalibration, residual_range
from planner.catalog import default_catalog
from planner.engines import kernel_curves

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_ranges")

FALLBACK = (-0.09, 0.08)


@pytest.fixture(scope="module")
def shipped():
    ranges.load_regions.cache_clear()
    return ranges.load_regions()


def widened(x: float, *factors: float) -> float:
    """The rule in planner.accuracy.ranges: (1 + x) ** (product of factors) - 1, rounded outwards to whole percent."""
    v = math.expm1(math.log1p(x) * math.prod(factors)) * 100
    return (math.floor(round(v, 6)) if x < 0 else math.ceil(round(v, 6))) / 100


class TestShippedFile:
    def test_a_covered_gpu_and_tp_size_get_the_files_quantiles(self, shipped):
        """H100 at TP 4 with Llama-3.1-70B (40-100B, dense, vLLM): every dimension has >= 5 held-out figures."""
        h100 = shipped[("gpu", "H100 SXM 80GB")]
        assert shipped[("tp", "4")].rows >= ranges.MIN_ROWS and shipped[("size", "40-100B")].rows >= ranges.MIN_ROWS
        r = residual_range("H100", "vllm", gpus=4, model="llama3.1-70b")
        assert (r.low, r.high) == (h100.low, h100.high) and r.widened == ""
        assert f"{h100.rows} published figures on H100 SXM 80GB" in r.note

    def test_a_tp_size_without_rows_takes_the_tp_factor_and_the_note_names_it(self, shipped):
        """No published row at TP 8: H100's quantiles x the TP factor measured by holding TP sizes out (the
        operator model's residuals did not widen when a TP size was held out: x1.00); the note names TP 8, and the
        range is said widened only where the factor is above 1."""
        assert ("tp", "8") not in shipped
        h100, tp = shipped[("gpu", "H100 SXM 80GB")], shipped[("tp", "*")]
        r = residual_range("H100", "vllm", gpus=8, model="llama3.1-70b")
        assert (r.low, r.high) == (widened(h100.low, tp.widen), widened(h100.high, tp.widen))
        assert "no held-out figures at TP 8" in r.note
        assert ("at TP 8" in r.widened) == (tp.widen > 1.0)

    def test_uncovered_dimensions_multiply(self, shipped):
        """MI300X (no rows), TP 8 (none), DeepSeek-V3 (MoE: 4 figures; >100B: none): all GPUs' range, every
        factor applied, then the kernel curves' miss; every dimension whose factor is above 1 is named as a widening, the others in the note."""
        every = shipped[ranges.ALL]
        dims = {"gpu": "on MI300X", "tp": "at TP 8", "moe": "of MoE models", "size": "of >100B-parameter models"}
        factors = {d: shipped[(d, "*")].widen for d in dims}
        assert factors["gpu"] > 1.0  # at least one dimension widens
        r = residual_range("MI300X", "vllm", gpus=8, model="deepseek-v3")
        # then moved out by MI300X's borrowed kernel curves' miss (another vendor's: tests/test_amd_published_rates.py)
        miss = kernel_curves.borrowed_rate_miss(default_catalog())
        low, high = widened(every.low, *factors.values()), widened(every.high, *factors.values())
        assert (r.low, r.high) == (ranges._shift(low, 1 / miss), ranges._shift(high, miss))
        for d, text in dims.items():
            assert (text in r.widened) == (factors[d] > 1.0) and text in r.note
        assert r.low > -1.0  # widening is in log(measured / predicted): never a negative time

    def test_a_gpu_with_too_few_rows_gets_all_gpus_range_widened(self, shipped):
        """L40S has 2 held-out figures (< MIN_ROWS): all GPUs' quantiles x the GPU factor, TP 1 covered."""
        every, gpu = shipped[ranges.ALL], shipped[("gpu", "*")]
        assert shipped[("gpu", "L40S")].rows < ranges.MIN_ROWS
        r = ranges.region_residuals("L40S", FALLBACK, gpus=1)
        assert (r.low, r.high) == (widened(every.low, gpu.widen), widened(every.high, gpu.widen))
        assert r.widened.startswith(f"x{gpu.widen:.2f}: only 2 held-out figures on L40S")

    def test_a_dimension_whose_factor_is_one_is_said_not_widened(self, shipped):
        """The 'ideal' engine (the seeds' bound) has no rows; holding an engine out did not widen the residuals."""
        assert shipped[("engine", "*")].widen == 1.0
        h100 = shipped[("gpu", "H100 SXM 80GB")]
        r = residual_range("H100", "ideal", gpus=1, model="llama3.1-8b")
        assert (r.low, r.high) == (h100.low, h100.high) and r.widened == ""
        assert "no held-out figures of engine ideal" in r.note

    def test_vllm_profiles_share_vllms_rows(self):
        """vllm-fullsort and vllm-0.10 differ in memory only: their time factors are vLLM's, so are their rows."""
        assert ranges.query_values("H100", engine="vllm-0.10")["engine"] == "vllm"

    def test_every_dimension_has_a_factor_row(self, shipped):
        assert all(shipped[(d, "*")].widen >= 1.0 for d in ranges.DIMENSIONS)


FILE = """dimension,value,rows,residual_low,residual_high,widen,sources
all,*,40,-0.30,0.20,,a b
gpu,*,40,-0.40,0.30,1.50,a b
gpu,H100 SXM 80GB,12,-0.10,0.25,,a
gpu,L40S,3,-0.05,0.05,,b
tp,*,40,-0.30,0.20,2.00,a b
tp,1,40,-0.30,0.20,,a b
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
    r = ranges.region_residuals("H100 SXM 80GB", FALLBACK, gpus=1)
    assert (r.low, r.high, r.widened) == (-0.10, 0.25, "") and "12 published figures" in r.note


@pytest.mark.parametrize("gpu", ["L40S", "T4"])
def test_outside_coverage_the_all_gpu_range_widens_with_a_note(regions, gpu):
    """L40S has 3 figures (< MIN_ROWS = 5) and T4 none: all GPUs' -30% / +20%, widened x1.5 in log terms:
    0.7 ** 1.5 = 0.5857 -> -42%, 1.2 ** 1.5 = 1.3145 -> +32%."""
    r = ranges.region_residuals(gpu, FALLBACK)
    assert (r.low, r.high) == (-0.42, 0.32)
    assert r.widened.startswith("x1.50: ") and f"held-out figures on {gpu} (x1.50)" in r.widened


def test_tp_widening_multiplies_the_gpus(regions):
    """T4 at TP 8: x1.5 x 2.0 = x3: 0.7 ** 3 = 0.343 -> -66%, 1.2 ** 3 = 1.728 -> +73%."""
    r = ranges.region_residuals("T4", FALLBACK, gpus=8)
    assert (r.low, r.high) == (-0.66, 0.73) and r.widened.startswith("x3.00: ") and "at TP 8 (x2.00)" in r.widened


def test_a_calibration_entry_wins(regions):
    """The entry's own range, its note naming where it is (here built in Python: no file), its rows and source."""
    cal = Calibration((GpuCalibration(gpu="H100", residual_low=-0.02, residual_high=0.03, source="mine"),))
    assert residual_range("H100", calibration=cal, gpus=8)[:3] == (
        -0.02,
        0.03,
        "your calibration given in Python, rows fitted not stated (mine)",
    )


def test_without_the_file_the_fit_residuals_are_used(tmp_path, monkeypatch):
    monkeypatch.setattr(ranges, "residuals_file", lambda: tmp_path / "absent.csv")
    ranges.load_regions.cache_clear()
    try:
        assert ranges.region_residuals("H100 SXM 80GB", FALLBACK, gpus=8)[:2] == FALLBACK
    finally:
        ranges.load_regions.cache_clear()


def test_size_classes_follow_total_parameters():
    """Llama-3.1-8B: 8.0e9 total (< 10B); Mixtral 8x7B: 46.7e9 total, 12.9e9 active: sized by total (40-100B)."""
    cat = default_catalog()
    assert ranges.query_values("H100", model=cat.model("llama3.1-8b"))["size"] == "<10B"
    assert ranges.query_values("H100", model=cat.model("mixtral-8x7b")) == {
        "gpu": "H100",
        "moe": "MoE",
        "size": "40-100B",
    }
