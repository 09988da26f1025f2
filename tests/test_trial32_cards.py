"""Trial 32 F4: the RTX PRO 6000 Blackwell Workstation Edition and the RTX 6000 Ada Generation, and "rtx 6000"'s
suggestions.

RTX PRO 6000 Blackwell Workstation Edition: NVIDIA's datasheet (transcribed in atineoSE/coding-model-seeks-gpu
pipeline/pipeline/sources/rtxpro6000_specs.md, commit ff052946): 96 GB GDDR7 with ECC, 1,792 GB/s, 4,000 AI TOPS
(effective FP4 with sparsity), FP32 125 TFLOPS, PCIe 5.0 x16, total board power 600 W. RTX 6000 Ada Generation
(heise online, 2022-12, quoting NVIDIA): 91.1 TFLOPS FP32, 48 GB, 960 GB/s, 300 W; its tensor rates the L40S's
x 91.1 / 91.6 (catalogs/gpus.toml notes)."""

from __future__ import annotations

import math

import pytest

from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_kernel_factors
from planner.engines.kernel_curves import NEAREST
from planner.errors import UnknownNameError

CAT = default_catalog()


def same_curves(a, b) -> bool:
    """Equal kernel factors, NaN (not measured) equal to NaN."""
    fa, fb = gpu_kernel_factors(CAT.gpu(a)), gpu_kernel_factors(CAT.gpu(b))
    return fa.keys() == fb.keys() and all(fa[k] == fb[k] or (math.isnan(fa[k]) and math.isnan(fb[k])) for k in fa)


class TestTheWorkstationEdition:
    def test_datasheet_figures(self):
        g = CAT.gpu("RTX PRO 6000 WS")
        assert g.name == "RTX PRO 6000 Blackwell Workstation Edition"
        assert g.memory_bytes == 96 * 2**30 == CAT.gpu("RTX PRO 6000 SE").memory_bytes  # the Server Edition's rule
        assert g.ecc_reserved_fraction == CAT.gpu("RTX PRO 6000 SE").ecc_reserved_fraction == 0
        assert g.hbm_bandwidth_bytes_per_s == 1792e9
        assert g.tdp_w == 600
        assert g.peak_flop_per_s["fp4"] == 4000e12 / 2  # 4,000 sparse FP4 TOPS, dense half
        assert g.peak_flop_per_s["fp32"] == 125e12
        assert g.interconnect_kind == "pcie"

    def test_its_curves_are_the_server_editions(self):
        assert CAT.gpu("RTX PRO 6000 WS").architecture == CAT.gpu("RTX PRO 6000 SE").architecture == "Blackwell"
        assert same_curves("RTX PRO 6000 WS", "RTX PRO 6000 SE")


class TestThe6000Ada:
    def test_figures(self):
        g = CAT.gpu("RTX 6000 Ada Generation")
        assert g.name == "RTX 6000 Ada"
        assert g.memory_bytes == 48 * 2**30
        assert g.hbm_bandwidth_bytes_per_s == 960e9  # 384 bits x 20 Gb/s / 8
        assert g.tdp_w == 300
        l40s = CAT.gpu("L40S")
        assert g.peak_flop_per_s["bf16"] == pytest.approx(l40s.peak_flop_per_s["bf16"] * 91.1 / 91.6, rel=1e-3)
        assert g.peak_flop_per_s["fp8"] == pytest.approx(l40s.peak_flop_per_s["fp8"] * 91.1 / 91.6, rel=1e-3)

    def test_its_curves_are_the_l40s(self):
        assert NEAREST["Ada Lovelace"] == "L40S"
        assert same_curves("RTX 6000 Ada", "L40S")
        assert not same_curves("RTX 6000 Ada", "H100 SXM 80GB")


class TestRtx6000Suggestions:
    def suggestions(self, text: str) -> list[str]:
        with pytest.raises(UnknownNameError) as e:
            CAT.gpu(text)
        return e.value.suggestions

    def test_rtx_6000_suggests_the_cards_named_6000_one_name_each(self):
        """Before: RTX A6000, RTX 5090, RTX 4090 (no RTX 6000 Ada in the catalog, the RTX PRO 6000 not offered)."""
        assert self.suggestions("rtx 6000") == ["RTX 6000 Ada", "RTX PRO 6000 SE", "RTX PRO 6000 WS"]

    def test_rtx_pro_6000_offers_both_editions(self):
        assert self.suggestions("rtx pro 6000")[:2] == ["RTX PRO 6000 SE", "RTX PRO 6000 WS"]
