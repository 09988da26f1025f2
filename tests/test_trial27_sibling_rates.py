"""Trial 27 F2 / F13: an AMD part without published rates of its own takes the nearest AMD part's that has them (its
catalog ``kernel_rates_from``: MI325X, the same CDNA 3 compute die as MI300X, and MI350X / MI355X, CDNA 4, take
MI300X's), and says so; its ranges and margin are its sibling's moved out by a stated factor.

Sources of the expected values: the catalog's datasheet bandwidths (MI300X 5.3 TB/s, MI325X 6.0 TB/s), the published
maximum-achievable matmul figures (``kernel_curves.PUBLISHED_MATMUL_TFLOPS``: MI300X 668.4, MI325X 784.9 TFLOP/s,
Stas Bekman's MAMF table) and the published STREAM Triad figures (``PUBLISHED_STREAM_TBPS``: H100 SXM 2.97, H200 4.18
TB/s, Azure's AI benchmarking guide)."""

from __future__ import annotations

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
