"""Trial 27 F2 / F13: an AMD part without published rates of its own takes the nearest AMD part's that has them (its
catalog ``kernel_rates_from``: MI325X, the same CDNA 3 compute die as MI300X, and MI350X / MI355X, CDNA 4, take
MI300X's), and says so; its ranges and margin are its sibling's moved out by a stated factor.

Sources of the expected values: the catalog's datasheet bandwidths (MI300X 5.3 TB/s, MI325X 6.0 TB/s), the published
maximum-achievable matmul figures (``kernel_curves.PUBLISHED_MATMUL_TFLOPS``: MI300X 668.4, MI325X 784.9 TFLOP/s,
Stas Bekman's MAMF table) and the published STREAM Triad figures (``PUBLISHED_STREAM_TBPS``: H100 SXM 2.97, H200 4.18
TB/s, Azure's AI benchmarking guide)."""

from __future__ import annotations

import math

import pytest

from planner import tpot
from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_numbers
from planner.engines import kernel_curves

CATALOG = default_catalog()


def test_the_catalog_names_mi300x_for_the_amd_parts_without_figures():
    for name in ("MI325X", "MI350X", "MI355X"):
        gpu = CATALOG.gpu(name)
        assert kernel_curves.sibling_of(gpu, CATALOG).name == "MI300X"
        assert "MI300X" in gpu.kernel_rates_source
    assert "gfx942 | 256 | 304 (38 per XCD)" in CATALOG.gpu("MI325X").kernel_rates_source
    for name in ("MI300X", "H100 SXM 80GB", "H200 SXM 141GB"):
        assert kernel_curves.sibling_of(CATALOG.gpu(name), CATALOG) is None


def test_a_sibling_of_another_vendor_is_refused():
    mi325x = CATALOG.gpu("MI325X").model_copy(update={"kernel_rates_from": "H200 SXM 141GB"})
    with pytest.raises(ValueError, match="same vendor"):
        kernel_curves.sibling_of(mi325x, CATALOG)


def test_mi325x_batch1_decode_scales_with_bandwidth_from_mi300x():
    """Batch-1 decode of a 70B model is the weights' read: on the same die with MI300X's memory fraction, MI325X's
    time is MI300X's x 5.3 / 6.0 (the trial's 39.75 x 5.3 / 6.0 = 35.1 ms), give or take the fixed floors; before,
    H100's fraction put it at 31.7 ms, faster than the bandwidth alone allows."""
    mi300x = tpot("MI300X", "llama3.3-70b", 1024, batch=1, gpus=1)
    mi325x = tpot("MI325X", "llama3.3-70b", 1024, batch=1, gpus=1)
    assert mi325x / mi300x == pytest.approx(5.3 / 6.0, rel=0.02)


def test_no_amd_part_without_figures_is_more_efficient_than_mi300x():
    """The unmeasured parts' fractions of their datasheets are MI300X's, or their own published figure (MI325X's
    GEMM: 784.9 / 1,307.4 = 0.60 against MI300X's 668.4 / 1,307.4 = 0.51, measured)."""
    mi300x = gpu_numbers(CATALOG.gpu("MI300X"))
    for name in ("MI325X", "MI350X", "MI355X"):
        n = gpu_numbers(CATALOG.gpu(name))
        for key in (
            "gemm_bandwidth_efficiency",
            "attention_bandwidth_efficiency",
            "attention_fp8_bandwidth_efficiency",
        ):
            assert n[key] == mi300x[key], (name, key)
    assert gpu_numbers(CATALOG.gpu("MI355X"))["gemm_flop_efficiency"] == mi300x["gemm_flop_efficiency"]
    mi325x = gpu_numbers(CATALOG.gpu("MI325X"))["gemm_flop_efficiency"]
    assert mi325x / mi300x["gemm_flop_efficiency"] == pytest.approx(784.9 / 668.4, rel=1e-3)


def test_the_warning_names_the_part_borrowed_from():
    mi325x = kernel_curves.curves_note("MI325X", "CDNA 3")
    assert "its GEMM rates are H100 SXM 80GB's x 784.9 / 794.5" in mi325x
    assert "its memory byte rates MI300X's fractions of the datasheet" in mi325x
    mi355x = kernel_curves.curves_note("MI355X", "CDNA 4")
    assert "its GEMM and memory byte rates are MI300X's fractions of the datasheet" in mi355x
    assert "attention FLOP and MoE rates H100 SXM 80GB's" in mi355x


def test_the_same_die_miss_is_the_published_sibling_pairs_largest():
    """(784.9 / 1,307.4) / (668.4 / 1,307.4) = 1.174 (MI325X over MI300X, one matmul method); H200 over H100 in
    Triad, (4.18 / 4.8) / (2.97 / 3.35) = 0.982, is nearer."""
    assert kernel_curves.same_die_rate_miss(CATALOG) == pytest.approx(784.9 / 668.4, rel=1e-4)
    assert kernel_curves.sibling_miss(CATALOG.gpu("MI325X"), CATALOG) == (
        pytest.approx(1.174, abs=1e-3),
        "MI300X",
    )
    # another architecture (CDNA 4 on CDNA 3's rates): the widest known miss of a borrowed rate, MI300X's 1.57
    miss, sibling = kernel_curves.sibling_miss(CATALOG.gpu("MI355X"), CATALOG)
    assert (round(miss, 2), sibling) == (1.57, "MI300X")
    assert kernel_curves.sibling_miss(CATALOG.gpu("MI300X"), CATALOG) == (1.0, "")


def _margin(name: str):
    from planner.accuracy.serving_margin import sizing_range
    from planner.engines.profiles import engine_profile

    return sizing_range(CATALOG.gpu(name), engine_profile("vllm"), CATALOG, 8, CATALOG.model("llama3.3-70b"))


def test_mi325x_margin_is_mi300xs_moved_out_by_the_same_die_miss():
    """F13: MI325X has no serving runs; MI300X has 5 (its margin's pool "own thin"). MI325X's margin is MI300X's
    moved out x1.174 either way, (1 + high) x 1.174 - 1, rounded outwards, not the all-GPU residuals widened for an
    unknown GPU and for another vendor's curves (+119% before)."""
    mi300x, mi325x = _margin("MI300X"), _margin("MI325X")
    m = 784.9 / 668.4
    assert mi325x.high == pytest.approx(math.ceil(((1 + mi300x.high) * m - 1) * 100) / 100)
    assert mi325x.low == pytest.approx(math.floor(((1 + mi300x.low) / m - 1) * 100) / 100)
    assert mi300x.high < mi325x.high < 1.19
    assert mi325x.note.startswith("MI300X's margin, moved out x1.17 either way for MI325X")


def test_mi355x_margin_is_mi300xs_moved_out_by_the_cross_vendor_miss():
    """Another architecture: MI300X's margin moved out by the widest known miss of a borrowed rate (x1.57), wider than
    MI325X's, and stated."""
    mi300x, mi355x = _margin("MI300X"), _margin("MI355X")
    m = kernel_curves.borrowed_rate_miss(CATALOG)
    assert mi355x.high == pytest.approx(math.ceil(((1 + mi300x.high) * m - 1) * 100) / 100)
    assert mi355x.high > _margin("MI325X").high
    assert "another architecture" in mi355x.note


def test_the_review_says_the_rank_rests_on_a_data_gap():
    from planner.accuracy.serving_margin import DATA_GAP
    from planner.export.reason import range_basis

    basis = range_basis(_margin("MI325X").note)
    assert basis.startswith("MI300X's margin moved out x1.17 for MI325X, which has no runs of its own")
    assert f"{DATA_GAP} MI325X" in basis
    assert "5 dense-model runs on MI300X + vLLM" in basis
    assert DATA_GAP not in range_basis(_margin("MI300X").note)


def test_sibling_range_moves_the_siblings_range_out():
    """(1 - 0.10) / 1.174 - 1 = -23.3% -> -24%; (1 + 0.50) x 1.174 - 1 = +76.1% -> +77% (rounded outwards)."""
    from planner.accuracy.ranges import TimeRange, sibling_range

    out = sibling_range(TimeRange(-0.10, 0.50, "MI300X's figures"), "MI325X", "MI300X", 1.174, True)
    assert (out.low, out.high) == (-0.24, 0.77)
    assert "MI300X's range stands in on MI325X" in out.note and "x1.17 either way" in out.widened


def test_a_sibling_without_figures_of_its_own_leaves_the_unknown_gpu_range():
    """MI300X has no held-out static figures of its own, so its prediction range is the all-GPU one MI325X would get
    anyway: MI325X's is not moved out again for the sibling (that would count the gap twice)."""
    from planner.accuracy.calibration import residual_range
    from planner.accuracy.ranges import MIN_ROWS, own_rows

    assert own_rows("MI300X") < MIN_ROWS
    mi325x = residual_range("MI325X", "vllm", None, CATALOG, gpus=8, model="llama3.3-70b")
    assert "stands in on MI325X" not in mi325x.note
    assert "no held-out figures on MI325X" in mi325x.widened


class TestExcelSaysTheCurvesAreBorrowed:
    """F5: PLANNER_WHY of a timed cell on a GPU whose kernel curves are another GPU's carries ``planner plan``'s warning
    (``kernel_curves.curves_note``) after "ok", as docs/excel.md promises for what the CLI flags."""

    def test_timed_cells_on_borrowed_curves_warn(self):
        import planner.excel.functions as F

        for why in (
            F.PLANNER_WHY("TPOT", "MI355X", "llama3.3-70b", 4096, 98),
            F.PLANNER_WHY("TTFT", "MI355X", "llama3.3-70b", 4000),
            F.PLANNER_WHY("TPOT_P95", "MI355X", "llama3.3-70b", 3.75, 1500, 300),
        ):
            assert why.startswith("ok")
            assert f"; warning: {kernel_curves.curves_note('MI355X', 'CDNA 4')}" in why
        mi325x = F.PLANNER_WHY("TPOT", "MI325X", "llama3.3-70b", 4096, 75)
        assert "warning: kernel curves not measured on MI325X" in mi325x and "MI300X's fractions" in mi325x

    def test_measured_gpus_and_memory_only_cells_do_not(self):
        import planner.excel.functions as F

        assert "kernel curves" not in F.PLANNER_WHY("TPOT", "H100", "llama3.3-70b", 4096, 8)
        assert "kernel curves" not in F.PLANNER_WHY("MAX_BATCH", "MI355X", "llama3.3-70b", 4096)

    def test_the_number_is_unchanged_by_the_warning(self):
        import planner.excel.functions as F

        assert F.TPOT("MI355X", "llama3.3-70b", 4096, 98) == pytest.approx(
            tpot("MI355X", "llama3.3-70b", 4096, batch=98) * 1e3
        )


def test_a_sibling_with_figures_of_its_own_sets_the_prediction_range(monkeypatch):
    """Were MI300X to have ``MIN_ROWS`` held-out figures (and MI325X none), MI325X's prediction range would be
    MI300X's moved out x1.174 either way (``ranges.sibling_range``), its note saying so."""
    from planner.accuracy import ranges
    from planner.accuracy.calibration import residual_range

    monkeypatch.setattr(ranges, "own_rows", lambda name: ranges.MIN_ROWS if name == "MI300X" else 0)
    mi300x = residual_range("MI300X", "vllm", None, CATALOG, gpus=8, model="llama3.3-70b")
    mi325x = residual_range("MI325X", "vllm", None, CATALOG, gpus=8, model="llama3.3-70b")
    assert "MI300X's range stands in on MI325X" in mi325x.note
    assert mi325x.high == pytest.approx(math.ceil(round(((1 + mi300x.high) * 784.9 / 668.4 - 1) * 100, 6)) / 100)
