"""NVIDIA NIM 1.8.0's Llama-3.3-70B rows (NIM18-001..009) under each reading of what the page leaves unstated.

    PYTHONPATH=. python bench/nim_readings.py

The rows (catalogs/reference/perf_public.csv; docs.nvidia.com/nim/benchmarking/llm/1.0.0/performance.md): fp8 TP 2 on
2 x H100 SXM, AIPerf kept 1-250 requests in flight, 5,000 + 500 tokens (and 500 + 2,000 at one in flight); AIPerf's
averages of TTFT and "ITL" (its ITL is per request (latency - TTFT) / (output - 1): a TPOT,
``planner.accuracy.published.ITL_AS_TPOT_CLIENTS``). Each row is predicted as ``bench/heldout.py`` predicts it (its
source's front-end time held out) under four readings, and the signed error of TTFT and TPOT printed per row:

- **as read**: what the planner ships (NIM -> the ``tensorrt-llm-0`` profile, the manifest's only 2 x H100 profile
  7ee2258631ed: TensorRT-LLM engines, fp8, throughput, TP 2; KV cache at the checkpoint's 16 bits, the cell says
  "not stated"; kernels on vLLM's measured curves).
- **TRT-LLM GEMMs**: the profile's compute-bound fp8 GEMMs at TensorRT-LLM's measured rate instead of vLLM's
  (aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 H100 table fitted as ``bench/kernel_extract.py`` fits vLLM's:
  1,151 against 909 TFLOP/s; ``TRTLLM_FP8_GEMM_FLOP_PER_S``). Not shipped: its ship rule failed (docs/accuracy.md).
- **fp8 KV**: the KV cache in fp8, as TensorRT-LLM's own FP8 builds of Llama-70B cache it (its perf-overview rows);
  no NIM page states it for this profile, so it is a what-if, not a reading.
- **both**.
- **3 a slot**: as read, but the run's length at NIM's benchmarking guide's own command (``--request-count
  $((CONCURRENCY * 3))``, docs.nvidia.com/nim/benchmarking/llm, "Using AIPerf to Benchmark") instead of
  ``CLOSED_LOOP_PROMPTS_PER_SLOT`` (10): the guide's example sweep (1, 2, 5, 10, 50, 100, 250 at 200/200 and 1000/200
  tokens) is not the page's, so it is a what-if for these rows, not a reading (s134).

Then the one-prompt prefill (NIM18-001) split into the model's terms under the first two readings
(``bench/step_operators.step_terms``). No reading here is fitted to these rows.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from step_operators import step_terms  # noqa: E402

import planner.catalog.resolve as resolve  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.accuracy.predict import predict_decode_rows  # noqa: E402
from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402
from planner.catalog import lookup  # noqa: E402

#: Per-tensor fp8 GEMM FLOP rate of TensorRT-LLM 1.3.0rc20 on H100 SXM: aiconfigurator 0.12.0's
#: ``systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet`` (fastest kernel per shape, m <= 16,384, n and
#: k >= 1,024) fitted as ``bench/kernel_extract.gemm_curve`` fits vLLM 0.24.0's table (floor + max(bytes / byte rate,
#: FLOPs / FLOP rate), the FLOP rate refitted on layer-sized weights): 1.151e15 (vLLM's: 9.088e14,
#: catalogs/reference/kernel_curves_aic.csv). Layer-sized H100 fp8 GEMMs run at a median 1,102 / 910 TFLOP/s at 4,096 /
#: 4,097 rows in vLLM's table and 1,278 / 1,301 in TensorRT-LLM's (vLLM's table holds 2^k and 2^k + 1 rows and its
#: kernel slows at the odd ones; TensorRT-LLM's runs 1,249-1,301 from 3,840 to 8,192 rows, a 5,000-token prompt's).
TRTLLM_FP8_GEMM_FLOP_PER_S = {"H100 SXM 80GB": 1.151e15}
ROWS = [f"NIM18-00{i}" for i in range(1, 10)]


def _trtllm_gemms(original):
    """``gpu_numbers`` with a TensorRT-LLM profile's fp8 GEMM efficiency at TensorRT-LLM's measured rate."""

    def numbers(g, engine=None, calibration=None):
        out = original(g, engine, calibration)
        rate = TRTLLM_FP8_GEMM_FLOP_PER_S.get(g.name)
        if engine is not None and engine.name.startswith("tensorrt-llm") and rate and g.peak_flop_per_s.get("fp8"):
            out = {**out, "gemm_fp8_flop_efficiency": rate / float(g.peak_flop_per_s["fp8"])}
        return out

    return numbers


def _fresh() -> None:
    """Forget the per-GPU numbers computed so far (the next reading recomputes them)."""
    lookup._MEMO.clear()
    lookup._BY_IDENTITY.clear()
    resolve._ONE.clear()


#: NIM's benchmarking guide's requests per slot (``--request-count $((CONCURRENCY * 3))``).
GUIDE_PROMPTS_PER_SLOT = 3


def predictions(rows, *, gemms: bool, fp8_kv: bool, per_slot: int | None = None):
    """Under one reading: each row's predicted TTFT and TPOT (two lists, seconds) and, unless ``fp8_kv``, the first
    row's batch-1 prefill split by operator (``step_operators.step_terms``, seconds; None with ``fp8_kv``). ``per_slot``:
    the closed loop's prompts per slot (None: as read)."""
    original = resolve.gpu_numbers
    _fresh()
    if gemms:
        resolve.gpu_numbers = _trtllm_gemms(original)
    try:
        read = [dataclasses.replace(r, kv_precision="fp8") if fp8_kv else r for r in rows]
        if per_slot is not None:
            read = [dataclasses.replace(r, num_prompts=per_slot * r.batch) for r in read]
        p = predict_decode_rows(read, frontend_s=frontend_s_of_rows(read))
        split = step_terms(read[0], prefill=True, batch=1, tokens=read[0].input_len) if not fp8_kv else None
        return list(p.ttft_s), list(p.tpot_s), split
    finally:
        resolve.gpu_numbers = original
        _fresh()


def main() -> int:
    by_id = {r.record_id: r for r in load_decode_rows(reference_dir() / "perf_public.csv")}
    rows = [by_id[i] for i in ROWS]
    readings = {
        "as read": dict(gemms=False, fp8_kv=False),
        "TRT-LLM GEMMs": dict(gemms=True, fp8_kv=False),
        "fp8 KV": dict(gemms=False, fp8_kv=True),
        "both": dict(gemms=True, fp8_kv=True),
        "3 a slot": dict(gemms=False, fp8_kv=False, per_slot=GUIDE_PROMPTS_PER_SLOT),
    }
    got = {name: predictions(rows, **kw) for name, kw in readings.items()}
    print(f"{'row':<11}{'in flight':>9} {'lengths':>10}  {'TTFT ms':>8}  " + "".join(f"{n:>15}" for n in readings))
    for i, r in enumerate(rows):
        cells = "".join(f"{got[n][0][i] / r.ttft_s - 1.0:>+15.0%}" for n in readings)
        print(f"{r.record_id:<11}{r.batch:>9} {r.input_len:>5}/{r.output_len:<4}  {r.ttft_s * 1e3:>8.0f}  {cells}")
    print(f"\n{'row':<11}{'in flight':>9} {'lengths':>10}  {'TPOT ms':>8}  " + "".join(f"{n:>15}" for n in readings))
    for i, r in enumerate(rows):
        cells = "".join(
            f"{got[n][1][i] / r.tpot_s - 1.0:>+15.0%}" if not math.isnan(r.tpot_s) else f"{'-':>15}" for n in readings
        )
        print(f"{r.record_id:<11}{r.batch:>9} {r.input_len:>5}/{r.output_len:<4}  {r.tpot_s * 1e3:>8.2f}  {cells}")
    print(f"\none {rows[0].input_len}-token prefill ({rows[0].record_id}), ms:")
    for name in ("as read", "TRT-LLM GEMMs"):
        t = got[name][2]
        parts = ", ".join(f"{k} {v * 1e3:.1f}" for k, v in t.items() if not k.startswith("_") and k != "step" and v)
        print(f"  {name:<14} {t['step'] * 1e3:6.1f} = {parts}")
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    raise SystemExit(main())
