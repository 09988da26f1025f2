"""Interconnect and ECC data of the GPU catalog: every GPU states its fabric and ECC cost, each value sourced."""

from __future__ import annotations

import pytest

from planner.catalog import Gpu, default_catalog

CAT = default_catalog()
MiB = 2**20


class TestEveryGpuStatesItsFabric:
    @pytest.mark.parametrize("gpu", list(CAT.gpus), ids=lambda g: g.name)
    def test_fields_present_and_sourced(self, gpu: Gpu):
        assert gpu.interconnect_kind is not None and gpu.interconnect_domain_gpus is not None and gpu.pcie_bytes_per_s
        if (
            gpu.interconnect_latency_s is None or gpu.pcie_latency_s is None
        ):  # only where the source says none was found
            assert "latency found" in gpu.interconnect_source or "No small-message" in gpu.interconnect_source, gpu.name
        assert "https://" in gpu.interconnect_source and "https://" in gpu.ecc_source
        # a fabric is at least as fast as the PCIe link beyond it
        assert (gpu.interconnect_bytes_per_s or 0) >= gpu.pcie_bytes_per_s
        if gpu.interconnect_kind == "pcie":
            assert gpu.interconnect_domain_gpus == 1 and gpu.interconnect_bytes_per_s == gpu.pcie_bytes_per_s

    def test_domains(self):
        """HGX boards put 8 GPUs on NVSwitch; H100 NVL is sold as bridged pairs (issue 9 item 9, H100 datasheet
        'NVLink bridge 600 GB/s' for 2 GPUs); PCIe-only cards share nothing."""
        assert CAT.gpu("H100").interconnect_domain_gpus == 8 and CAT.gpu("H100").interconnect_kind == "nvlink"
        assert CAT.gpu("H100 NVL").interconnect_domain_gpus == 2
        assert CAT.gpu("H100 NVL").interconnect_kind == "nvlink-bridge"
        for name in ("L4", "L40S", "T4", "A10G", "RTX 4090"):
            assert CAT.gpu(name).interconnect_domain_gpus == 1, name
        assert CAT.gpu("MI300X").interconnect_kind == "infinity-fabric"

    def test_latencies_against_their_measurements(self):
        """H100: vLLM custom all-reduce at TP 8, 512 B, 0.0101 ms (sglang PR #2904). PCIe: NCCL all_reduce_perf on
        8x RTX 4090, 8 B, 42.14 us (NCCL issue #1530)."""
        assert CAT.gpu("H100").interconnect_latency_s == pytest.approx(10.1e-6)
        assert CAT.gpu("L40S").interconnect_latency_s == pytest.approx(42.14e-6)
        assert CAT.gpu("H100").pcie_latency_s == pytest.approx(42.14e-6)
        # PCIe is slower to start than the fabric it stands in for
        for g in CAT.gpus:
            if g.pcie_latency_s and g.interconnect_latency_s:
                assert g.pcie_latency_s >= g.interconnect_latency_s, g.name

    def test_mi300x_latency_is_measured_on_mi300x(self):
        """RCCL all_reduce_perf on 8x MI300X, graph mode (-G 1), 512 B: 7.44 us out-of-place (AMD ROCm blog
        'Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X', 2025-03-02,
        rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi). Not MI355X's 6.3 us (vLLM PR #39080).
        MI325X (same CDNA 3 fabric, no own measurement) takes the MI300X figure."""
        mi300x, mi325x = CAT.gpu("MI300X"), CAT.gpu("MI325X")
        assert mi300x.interconnect_latency_s == pytest.approx(7.44e-6)
        assert "rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi" in mi300x.interconnect_source
        assert mi325x.interconnect_latency_s == pytest.approx(7.44e-6)
        assert "measured on MI300X" in mi325x.interconnect_source
        # the MI350-series entries keep their own measurement
        assert CAT.gpu("MI355X").interconnect_latency_s == pytest.approx(6.3e-6)

    def test_pcie_rates_by_generation(self):
        """x16, one direction: Gen3 16 GB/s (T4 datasheet: 32 GB/s bidirectional), Gen4 32, Gen5 64 (H100: 128 GB/s
        bidirectional)."""
        assert CAT.gpu("T4").pcie_bytes_per_s == 16e9
        assert CAT.gpu("L4").pcie_bytes_per_s == 32e9
        assert CAT.gpu("H100").pcie_bytes_per_s == 64e9


class TestEcc:
    @pytest.mark.parametrize(
        "name, smi_mib",
        [("L4", 23034), ("L40S", 46068), ("T4", 15360)],  # nvidia-smi with ECC on, modal-labs/modal-client PR #2797
    )
    def test_gddr_cards_lose_a_sixteenth_as_nvidia_smi_shows(self, name, smi_mib):
        g = CAT.gpu(name)
        assert g.ecc_reserved_fraction == 1 / 16
        left_mib = g.memory_bytes * (1 - g.ecc_reserved_fraction) / MiB
        assert smi_mib <= left_mib <= smi_mib * 1.001  # nvidia-smi shows at most 12 MiB less than 15/16

    def test_engine_visible_totals_already_lie_below_the_ecc_cut(self):
        """T4 torch 14.75 GiB < 15 GiB; L40S torch 44.53 GiB < 45 GiB: measured totals already include ECC."""
        for name in ("T4", "L40S"):
            g = CAT.gpu(name)
            assert g.engine_visible_memory_bytes < g.memory_bytes * (1 - g.ecc_reserved_fraction)

    def test_hbm_and_ecc_off_cards_lose_nothing(self):
        """H100 nvidia-smi 81559 MiB of 81920 with ECC on (gpu-burn #114); RTX A6000 vLLM 47.54 GiB > 45 GiB."""
        for name in ("H100", "H200", "B200", "MI300X", "RTX 4090", "RTX A6000"):
            assert CAT.gpu(name).ecc_reserved_fraction == 0, name
        assert CAT.gpu("RTX A6000").engine_visible_memory_bytes > 45 * 2**30

    def test_schema_refuses_unsourced_or_impossible_values(self):
        base = CAT.gpu("L4").model_dump()
        with pytest.raises(ValueError, match="ecc_reserved_fraction needs ecc_source"):
            Gpu(**{**base, "ecc_source": ""})
        with pytest.raises(ValueError, match="less than 1"):
            Gpu(**{**base, "ecc_reserved_fraction": 1.0})
        with pytest.raises(ValueError, match="'pcie' has interconnect_domain_gpus = 1"):
            Gpu(**{**base, "interconnect_domain_gpus": 4})
