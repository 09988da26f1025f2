"""L40S (issue 21, s145): the catalog's tensor rates against the datasheet and aiconfigurator's measured kernels, and
its all-reduce beyond one GPU (the PCIe ring form; the measured-row reading, s145's switch, was not merged)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from test_allreduce_table import _facts

from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.model import decode

ROOT = Path(__file__).resolve().parents[1]
CURVES = ROOT / "catalogs" / "reference" / "kernel_curves_aic.csv"
L40S = default_catalog().gpu("L40S")


def _curve(gpu: str) -> dict:
    with CURVES.open() as f:
        return next(r for r in csv.DictReader(f) if r["gpu"] == gpu)


class TestTensorRates:
    def test_dense_rates_are_the_datasheets(self):
        """NVIDIA L40S datasheet (dense | sparse*): BF16/FP16 362.05 | 733*, FP8 733 | 1,466*, 864 GB/s."""
        peak = L40S.peak_flop_per_s
        assert peak["bf16"] == peak["fp16"] == pytest.approx(362.05e12)
        assert peak["fp8"] == pytest.approx(733e12)
        assert L40S.hbm_bandwidth_bytes_per_s == pytest.approx(864e9)

    def test_fp32_accumulate_runs_at_full_rate(self):
        """GeForce Ada halves FP16/FP8 tensor rates with FP32 accumulate (Ada whitepaper: RTX 4090 165.2 vs 330.3;
        the catalog's RTX 4090 takes the halved figures). The L40S does not: a bf16 GEMM (cuBLAS accumulates bf16 in
        fp32) was measured by aiconfigurator at a fitted 224.6 TFLOP/s on vLLM 0.24.0 (kernel_curves_aic.csv), above
        the 181 TFLOP/s a halved rate would cap it at, so the datasheet's dense figures are the fp32-accumulate ones."""
        measured = float(_curve("L40S")["gemm_bf16_flop_per_s"])
        assert measured == pytest.approx(2.246e14, rel=1e-3)
        assert measured > L40S.peak_flop_per_s["bf16"] / 2
        assert default_catalog().gpu("RTX 4090").peak_flop_per_s["bf16"] == pytest.approx(165.2e12)


class TestPcieAllreduce:
    def test_l40s_beyond_one_gpu_takes_the_pcie_form(self):
        """interconnect_domain_gpus 1: a 4-GPU L40S all-reduce is the ring form at PCIe's 32 GB/s x the engine's
        0.7 + 42.14 us (NCCL issue #1530), not aiconfigurator's measured row (its 4 x L40S machine moves ~3.7 GB/s
        of bus bytes, 6x slower than the form; reading it made the held-out L40S rows -76..-91%: docs/history.md,
        s145): 48 MiB -> 42.14 us + 1.5 x 48 MiB / 22.4 GB/s."""
        g, e = _facts("L40S", engine_profile("trtllm"))
        form = 42.14e-6 + 1.5 * 48 * 2**20 / (32e9 * 0.7)
        assert decode.allreduce_time_s(g, e, 48 * 2**20, 4.0, 3072.0) == pytest.approx(form, rel=1e-3)
