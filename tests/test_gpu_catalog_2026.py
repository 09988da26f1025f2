"""The GPUs of issue 12: present, found by the names engines and nvidia-smi print, numbers as their sources state."""

from __future__ import annotations

import math

import pytest

from planner.catalog import default_catalog, normalize_name

CAT = default_catalog()
GiB = 2**30


def test_at_least_28_gpus_with_every_part_the_issue_names():
    assert len(CAT.gpus) >= 28
    for name in (
        "B300", "GB200", "GB300", "H800", "A800", "H20", "L20", "A10", "A40",
        "RTX 3090", "RTX 5090", "MI250X", "MI350X", "MI355X", "Gaudi 3",
    ):  # fmt: skip
        assert name in CAT.gpus, name


def test_names_and_aliases_are_unique_across_the_catalog():
    seen: dict[str, str] = {}
    for g in CAT.gpus:
        for alias in g.all_names():
            key = normalize_name(alias)
            assert seen.setdefault(key, g.name) == g.name, f"{alias!r}: {seen[key]} and {g.name}"


@pytest.mark.parametrize(
    "printed, entry",
    [  # names as nvidia-smi / vLLM print them (shared/reference/gpu_memory_totals.csv and the sources cited there)
        ("NVIDIA H100 80GB HBM3", "H100 SXM 80GB"),
        ("NVIDIA H200", "H200 SXM 141GB"),
        ("NVIDIA H20", "H20 96GB"),
        ("NVIDIA A800-SXM4-80GB", "A800 SXM 80GB"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
        ("NVIDIA A10", "A10"),  # not the A10G
        ("NVIDIA GeForce RTX 3090", "RTX 3090"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA L4", "L4"),
        ("AMD Instinct MI300X", "MI300X"),
    ],
)
def test_engine_and_nvidia_smi_names_resolve(printed, entry):
    assert CAT.gpu(printed).name == entry


class TestNumbersAgainstTheirSources:
    def test_nvl72_parts_are_per_gpu_with_a_72_gpu_domain(self):
        """GB200: 186 GB per GPU (372 GB per superchip, Spheron), dense FP4 10 PF at 1,200 W (glennklockwood B200 page);
        GB300: 279 GiB enabled (nvidia-smi 284208 MiB; tests/test_catalog_audit_s135.py), dense FP4 15 PF, 1.4 kW (Verda)."""
        gb200, gb300 = CAT.gpu("GB200"), CAT.gpu("GB300")
        assert gb200.memory_bytes == 186 * GiB and gb200.peak_flop_per_s["fp4"] == 10e15 and gb200.tdp_w == 1200
        assert gb300.memory_bytes == 279 * GiB and gb300.peak_flop_per_s["fp4"] == 15e15 and gb300.tdp_w == 1400
        for g in (gb200, gb300):
            assert g.interconnect_domain_gpus == 72 and g.interconnect_bytes_per_s == 900e9

    def test_fp4_and_fp6_where_the_part_has_them(self):
        """B300 dense FP4 13,125 and FP6 4,500 TFLOPS (glennklockwood B300); MI355X MXFP4 = MXFP6 (AMD); Hopper has none."""
        b300 = CAT.gpu("B300").peak_flop_per_s
        assert b300["fp4"] == 13.125e15 and b300["fp6"] == b300["fp8"] == 4.5e15
        mi355x = CAT.gpu("MI355X").peak_flop_per_s
        assert mi355x["fp4"] == mi355x["fp6"] == 2 * mi355x["fp8"]
        assert "fp4" not in CAT.gpu("H100").peak_flop_per_s and "fp6" not in CAT.gpu("H100").peak_flop_per_s

    def test_datasheet_values(self):
        """A40 datasheet: FP16 149.7 TFLOPS dense, 696 GB/s, 300 W. A10: 125 TFLOPS, 600 GB/s, 150 W. MI355X Infinity
        Fabric (N-1) x 76.8 GB/s = 537.6 GB/s at 8 GPUs (vLLM PR #39080). H800 NVLink 200 GB/s per direction (NCCL #1374)."""
        a40, a10 = CAT.gpu("A40"), CAT.gpu("A10")
        assert (a40.peak_flop_per_s["fp16"], a40.hbm_bandwidth_bytes_per_s, a40.tdp_w) == (149.7e12, 696e9, 300)
        assert (a10.peak_flop_per_s["fp16"], a10.hbm_bandwidth_bytes_per_s, a10.tdp_w) == (125e12, 600e9, 150)
        assert CAT.gpu("MI355X").interconnect_bytes_per_s == pytest.approx(7 * 76.8e9)
        assert CAT.gpu("H800").interconnect_bytes_per_s == 200e9
        assert CAT.gpu("H800").peak_flop_per_s == CAT.gpu("H100").peak_flop_per_s  # same GH100 compute

    def test_engine_visible_and_ecc_of_the_new_cards(self):
        """RTX 3090: vLLM total_gpu_memory=23.58GiB (vLLM #10517). A10: nvidia-smi 23028 MiB = 15/16 of 24 GiB less 12."""
        assert CAT.gpu("RTX 3090").engine_visible_memory_bytes == round(23.58 * GiB)
        a10 = CAT.gpu("A10")
        assert 23028 <= a10.memory_bytes * (1 - a10.ecc_reserved_fraction) / 2**20 <= 23028 + 12
        for name in ("A40", "L20"):
            assert CAT.gpu(name).ecc_reserved_fraction == 1 / 16

    def test_lower_precision_is_never_slower(self):
        order = ["bf16", "fp8", "fp6", "fp4"]
        for g in CAT.gpus:
            peaks = [g.peak_flop_per_s[k] for k in order if k in g.peak_flop_per_s]
            assert peaks == sorted(peaks), g.name


class TestPrices:
    def test_a_gpu_without_a_price_says_why(self):
        for g in CAT.gpus:
            if not g.prices:
                assert "no price is given" in g.notes or "no dated public" in g.notes.lower(), g.name

    def test_superchip_price_is_per_gpu(self):
        """Spheron lists GB200 at $9.08/hr per superchip of two GPUs (17 March 2026): $4.54 a GPU-hour."""
        spheron = next(p for p in CAT.gpu("GB200").prices if p.provider == "Spheron")
        assert math.isclose(spheron.usd_per_gpu_hour * 2, 9.08) and spheron.kind == "on-demand"

    def test_on_demand_coverage(self):
        """Rented publicly with a named provider's dated on-demand quote: at least these."""
        for name in ("H100", "H200", "B200", "GB200", "L4", "L40S", "RTX 3090", "RTX 4090", "RTX 5090", "MI300X", "T4"):
            assert CAT.gpu(name).price("on-demand") is not None, name


class TestPeaksTraceToVendorTables:
    """Dense per-GPU peaks against the vendor figures quoted in each entry (sparse figures halved)."""

    def test_b300_is_nvidias_hgx_table_per_gpu_dense(self):
        """HGX B300 (8 GPUs, * with sparsity): FP8/FP6 72 PF*, FP16/BF16 36 PF*, TF32 18 PF*, FP32 600 TF
        (NVIDIA's table as reproduced at fibermall.com/blog/?p=17161)."""
        peak = CAT.gpu("B300").peak_flop_per_s
        for key, hgx_sparse in (("fp8", 72e15), ("fp6", 72e15), ("bf16", 36e15), ("fp16", 36e15), ("tf32", 18e15)):
            assert peak[key] == pytest.approx(hgx_sparse / 8 / 2), key
        assert peak["fp32"] == pytest.approx(600e12 / 8)
        assert "int8" not in peak  # 2 POPS* for 8 GPUs = 0.125 POPS dense: Blackwell Ultra cut INT8

    def test_mi350_series_fp4_is_half_amds_sparse_maximum(self):
        """'MI350X ... maximum FP4/FP6 performance of 18.45 PFLOPS', 'MI355X ... 20.1 PFLOPS' (Tom's Hardware,
        ISC 2025; with sparsity); MI355X FP8 'delivering five petaflops' (AMD at ISSCC 2026)."""
        assert CAT.gpu("MI350X").peak_flop_per_s["fp4"] == pytest.approx(18.45e15 / 2, rel=0.001)
        assert CAT.gpu("MI355X").peak_flop_per_s["fp4"] == pytest.approx(20.1e15 / 2, rel=0.002)
        assert CAT.gpu("MI355X").peak_flop_per_s["fp8"] == pytest.approx(5e15, rel=0.01)
        assert (CAT.gpu("MI350X").tdp_w, CAT.gpu("MI355X").tdp_w) == (1000, 1400)

    def test_gaudi3_matrix_peaks(self):
        """'1835 TFLOPS em matrizes FP8 e BF16 e um consumo de 900 W' (pcguia.pt, Intel Vision 2024)."""
        g = CAT.gpu("Gaudi 3")
        assert g.peak_flop_per_s == {"bf16": 1835e12, "fp8": 1835e12} and g.tdp_w == 900
