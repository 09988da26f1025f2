"""EXPERIMENT (h-h100tpot, off): every H100 SXM row's FLOP factors at the H100 PCIe's share of the SXM's dense peak.

Source of the constant: NVIDIA H100 Tensor Core GPU datasheet, BF16 tensor 1,979 TFLOP/s (SXM) and 1,513 TFLOP/s
(PCIe), both with sparsity (989 / 756 dense). docs/hypotheses/h100-tpot-split.md says why it is a test of a reading,
not a candidate. The rows: gpustack's vLLM 0.11.0 Qwen3-14B runs of 100 prompts of 32,000 tokens on one A100
(GPUSTACK-163) and on one H100 (GPUSTACK-178), which ``predict_decode_rows`` puts in one group on main.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.published import load_decode_rows


@pytest.fixture(scope="module")
def pair():
    rows = {r.record_id: r for r in load_decode_rows()}
    return [rows["GPUSTACK-163"], rows["GPUSTACK-178"]]


def test_the_constant_is_the_datasheets_ratio():
    assert acc.H100_COMPUTE_SCALE is None  # off on main
    assert acc.H100_PCIE_OVER_SXM_FLOP == pytest.approx(756 / 989, rel=2e-3)


def test_only_the_h100_row_moves(pair, monkeypatch):
    """The switch reaches the H100 row's profile and no other GPU's, even where both rows share a group (before the
    group key carried the FLOP factors, the A100 row was priced with the H100's scaled profile)."""
    a100, h100 = pair
    base = acc._profile_for(h100, None)
    off = acc.predict_decode_rows(pair)
    monkeypatch.setattr(acc, "H100_COMPUTE_SCALE", "all")
    scaled = acc._profile_for(h100, None)
    assert scaled.prefill_flop_efficiency == pytest.approx(base.prefill_flop_efficiency * 1513 / 1979)
    assert scaled.decode_flop_efficiency == pytest.approx(base.decode_flop_efficiency * 1513 / 1979)
    assert acc._profile_for(a100, None).prefill_flop_efficiency == base.prefill_flop_efficiency
    on = acc.predict_decode_rows(pair)
    assert on.ttft_s[0] == off.ttft_s[0] and on.tpot_s[0] == off.tpot_s[0]
    # a prompt-bound run on the H100: 32,000-token prefills, slower at the lower FLOP rate
    assert on.ttft_s[1] > off.ttft_s[1] * 1.1
    assert math.isfinite(on.tpot_s[1])


def test_gpustack_reading_leaves_other_sources(pair, monkeypatch):
    monkeypatch.setattr(acc, "H100_COMPUTE_SCALE", "gpustack")
    h100 = pair[1]
    assert acc._profile_for(h100, None).prefill_flop_efficiency < 1.0  # gpustack's row: scaled
    other = replace(h100, source_group="someone-else")
    assert (
        acc._profile_for(other, None).prefill_flop_efficiency == acc._profile_for(pair[0], None).prefill_flop_efficiency
    )
