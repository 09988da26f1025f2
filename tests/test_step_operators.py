"""bench/step_operators.py: a published run's step split by operator adds up to the model's step (issue 21)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from step_operators import _facts, step_terms  # noqa: E402

from planner.accuracy.published import load_decode_rows  # noqa: E402
from planner.model.decode import decode_step  # noqa: E402
from planner.model.prefill import prefill_step  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in load_decode_rows() if r.record_id in ("GPUSTACK-214", "VUL-008", "GPUSTACK-160")}


@pytest.mark.parametrize("rid", ["GPUSTACK-214", "VUL-008"])
def test_terms_sum_to_the_models_step(rows, rid):
    """A MoE model at TP 4 (Qwen3-235B-A22B FP8, H100) and a Mamba-2 + attention + MoE hybrid at TP 2
    (Nemotron-3-Nano FP8, B200): the printed terms sum to ``decode_step`` / ``prefill_step`` of the same deployment
    to 1e-12, at a captured batch, an eager one and a prefill of the token budget; none is zero where the model has
    it (MoE layers, two GPUs' all-reduces, per-sequence cost on a decode step of vLLM 0.11's synchronous loop; vLLM
    0.16's asynchronous loop leaves only the host time above the device's exposed: max(0, host - device))."""
    r = rows[rid]
    for batch in (64.0, 984.0):
        g, m, p, lim, gpus = _facts(r, 2304.0)
        t = step_terms(r, prefill=False, batch=batch, tokens=2304.0)
        assert t["step"] == pytest.approx(float(decode_step(g, m, p, lim, 2304.0, batch, gpus).step_s), rel=1e-12)
        assert t["MoE GEMMs"] > 0 and t["all-reduces"] > 0
        host, device = float(lim.sequence_overhead_s) * batch, t["step"] - t["per sequence"]
        exposed = max(0.0, host - device) if lim.host_overlap else host
        assert t["per sequence"] == pytest.approx(exposed, rel=1e-12, abs=1e-15)
        assert (lim.host_overlap == 1.0) is (rid == "VUL-008")
    g, m, p, lim, gpus = _facts(r, 128.0)
    t = step_terms(r, prefill=True, batch=64.0, tokens=128.0)
    assert t["step"] == pytest.approx(float(prefill_step(g, m, p, lim, 128.0, 64.0, gpus).ttft_s), rel=1e-12)
    assert t["per sequence"] == 0.0


def test_weight_only_dense_gemms_are_the_models(rows):
    """GPUSTACK-160 (Qwen3-14B AWQ on A100, vLLM): its dense GEMMs are weight-only, which the model computes at
    Marlin's 0.574 of the bf16 rate (s140); the printed terms sum to the model's steps as for any row (s150: the
    "dense GEMMs" term was the bf16 rate's, the prefill of 64 x 128 tokens 1/0.574 slower in the model than its
    terms)."""
    r = rows["GPUSTACK-160"]
    g, m, p, lim, gpus = _facts(r, 128.0)
    assert float(p.weight_bytes_per_param) < 1.5 and float(lim.weight_only_flop_fraction) > 0
    t = step_terms(r, prefill=True, batch=64.0, tokens=128.0)
    assert t["step"] == pytest.approx(float(prefill_step(g, m, p, lim, 128.0, 64.0, gpus).ttft_s), rel=1e-12)
    g, m, p, lim, gpus = _facts(r, 2304.0)
    t = step_terms(r, prefill=False, batch=256.0, tokens=2304.0)
    assert t["step"] == pytest.approx(float(decode_step(g, m, p, lim, 2304.0, 256.0, gpus).step_s), rel=1e-12)
