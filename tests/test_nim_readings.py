"""bench/nim_readings.py: NIM 1.8.0's Llama-3.3-70B rows under each reading of what the page leaves unstated (issues 21
and 22). The TensorRT-LLM GEMM reading (not shipped: its ship rule failed, docs/accuracy.md) times the profile's fp8
GEMMs at TensorRT-LLM's measured rate; these tests pin that rate to its table and the reading to the GEMMs alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import nim_readings  # noqa: E402

from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402
from planner.engines.kernel_curves import read_curves  # noqa: E402

AIC_PYTHON = Path("/work/venvs/aic/bin/python")


@pytest.fixture(scope="module")
def nim001():
    return next(r for r in load_decode_rows(reference_dir() / "perf_public.csv") if r.record_id == "NIM18-001")


@pytest.mark.skipif(not AIC_PYTHON.exists(), reason="aiconfigurator venv (/work/venvs/aic) not installed")
def test_trtllm_fp8_rate_rederives_from_its_table():
    """aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 H100 GEMM table, fitted as vLLM's is: 1.151e15 FLOP/s fp8 (vLLM
    0.24.0's: 9.088e14) and bf16 within 4% of vLLM's 8.066e14."""
    code = (
        "import sys; sys.path.insert(0, 'bench'); import kernel_extract as K;"
        "c = K.gemm_curve(K.DATA / 'h100_sxm', 'trtllm');"
        "print(c['vllm_version'], c['gemm_fp8_flop_per_s'], c['gemm_bf16_flop_per_s'])"
    )
    out = subprocess.run([str(AIC_PYTHON), "-c", code], cwd=REPO, check=True, capture_output=True, text=True)
    version, fp8, bf16 = out.stdout.split()
    assert version == "1.3.0rc20"
    assert float(fp8) == pytest.approx(nim_readings.TRTLLM_FP8_GEMM_FLOP_PER_S["H100 SXM 80GB"], rel=0.005)
    assert float(bf16) == pytest.approx(float(read_curves()["H100 SXM 80GB"]["gemm_bf16_flop_per_s"]), rel=0.04)


def test_the_gemm_reading_moves_the_fp8_gemms_only(nim001):
    """One 5,000-token prompt of Llama-3.3-70B fp8 on 2 x H100 (NIM18-001): its GEMMs are compute-bound, so they
    shrink by vLLM's rate over TensorRT-LLM's (908.8 / 1,151: 379 -> 299 ms; 384 -> 304 ms before s199 ran the output
    head, 128,256 x 8,192 params, on the prompt's last token only); attention and all-reduces stay."""
    *_, as_read = nim_readings.predictions([nim001], gemms=False, fp8_kv=False)
    *_, trt = nim_readings.predictions([nim001], gemms=True, fp8_kv=False)
    vllm_rate = float(read_curves()["H100 SXM 80GB"]["gemm_fp8_flop_per_s"])
    ratio = vllm_rate / nim_readings.TRTLLM_FP8_GEMM_FLOP_PER_S["H100 SXM 80GB"]
    assert trt["dense GEMMs"] / as_read["dense GEMMs"] == pytest.approx(ratio, rel=0.01)
    assert as_read["dense GEMMs"] == pytest.approx(0.3785, rel=0.005)
    for part in ("attention+state", "all-reduces", "overhead"):
        assert trt[part] == pytest.approx(as_read[part])


def test_readings_leave_the_planner_as_it_was(nim001):
    """The readings patch nothing for good: after them the row predicts as before (533 ms prefill + front end)."""
    before, _, _ = nim_readings.predictions([nim001], gemms=False, fp8_kv=False)
    nim_readings.predictions([nim001], gemms=True, fp8_kv=True)
    after, _, _ = nim_readings.predictions([nim001], gemms=False, fp8_kv=False)
    assert after == pytest.approx(before)


def test_the_guide_run_length_reading_only_sets_the_prompt_count():
    """NIM's guide sends ``--request-count $((CONCURRENCY * 3))``; the what-if sets only the run's prompts: at the
    planner's own unstated-length reading (``CLOSED_LOOP_PROMPTS_PER_SLOT`` = 10 a slot) it predicts as read."""
    from planner.accuracy.published import CLOSED_LOOP_PROMPTS_PER_SLOT

    rows = [r for r in load_decode_rows(reference_dir() / "perf_public.csv") if r.record_id == "NIM18-002"]
    assert rows[0].num_prompts == CLOSED_LOOP_PROMPTS_PER_SLOT * rows[0].batch
    as_read, tpot, _ = nim_readings.predictions(rows, gemms=False, fp8_kv=False)
    same, tpot_same, _ = nim_readings.predictions(
        rows, gemms=False, fp8_kv=False, per_slot=CLOSED_LOOP_PROMPTS_PER_SLOT
    )
    assert same == pytest.approx(as_read) and tpot_same == pytest.approx(tpot)
    assert nim_readings.GUIDE_PROMPTS_PER_SLOT == 3
