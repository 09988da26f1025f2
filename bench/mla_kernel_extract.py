"""Fit aiconfigurator's measured MLA attention modules (DeepSeek-V3 form) to three coefficients per GPU, heads and KV
format (issue 21, step 1: MLA from the measured MLA module tables).

    /work/venvs/aic/bin/python bench/mla_kernel_extract.py   # writes catalogs/reference/mla_module_aic.csv

Source: aiconfigurator 0.12.0's collected kernel database for vLLM 0.24.0 (``aiconfigurator_core/systems/data/
{h100_sxm,h200_sxm,b200_sxm}/mla/vllm/0.24.0/mla_{generation,context}_module_perf.parquet``, Apache-2.0, NVIDIA): the
latency (ms) of one layer's whole MLA attention module of deepseek-ai/DeepSeek-V3 (q_a / kv_a down-projections, q_b,
the absorbed attention, o_proj; ``aiconfigurator_core/sdk/models/deepseek.py`` lines 801-880) at ``num_heads`` query
heads per GPU (128 / TP), block-fp8 GEMMs, for a KV cache in bf16 (FLASH_ATTN_MLA on Hopper, FLASHINFER_MLA on B200)
or fp8 (FLASHMLA on Hopper, FLASHINFER_MLA on B200).

Fitted forms (least squares on relative error, medians of repeated shapes):
- decode (``op`` generation): t = floor + per_row x batch + per_row_token x batch x context, on batch 1-1,024 x
  context 128-8,192 (the table's ``step`` is the cached context);
- prefill (``op`` context): t = floor + per_row x tokens + per_row_token x batch x prompt^2 (causal attention), on
  batch x prompt length of 128-32,768 tokens.
Each row also carries the fit's median and worst relative error on the points it was fitted to. The floor (about
0.1 ms a layer on Hopper) is the collector's: the module is timed as separate kernel launches. Needs pandas, numpy and
pyarrow (the aiconfigurator venv has them); the planner reads only the CSV (kilobytes).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "mla_module_aic.csv"
DATA = Path("/work/venvs/aic/lib/python3.11/site-packages/aiconfigurator_core/systems/data")
GPUS = {"h100_sxm": "H100 SXM 80GB", "h200_sxm": "H200 SXM 141GB", "b200_sxm": "B200 180GB"}
HEADS = (16, 32, 64, 128)
KV = ("bfloat16", "fp8")
DECODE_BATCHES = (1, 8, 64, 256, 1024)
DECODE_CONTEXTS = (128, 512, 2048, 8192)
PREFILL_TOKENS = (128, 32768)
COLUMNS = ("engine", "op", "gpu", "kv_cache_dtype", "num_heads", "floor_ms", "per_row_us", "per_row_token_ns")
COLUMNS += ("points", "median_error", "worst_error")


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients of y ~ x @ c minimizing the squared relative error, and the relative errors."""
    w = 1.0 / y
    c = np.linalg.lstsq(x * w[:, None], y * w, rcond=None)[0]
    return c, x @ c / y - 1.0


def rows_for(key: str, gpu: str) -> list[tuple]:
    out = []
    for op in ("generation", "context"):
        t = pd.read_parquet(DATA / key / "mla" / "vllm" / "0.24.0" / f"mla_{op}_module_perf.parquet")
        t = t[(t.model == "deepseek-ai/DeepSeek-V3") & (t.gemm_type == "fp8_block")]
        for kv in KV:
            for heads in HEADS:
                s = t[(t.kv_cache_dtype == kv) & (t.num_heads == heads)]
                if op == "generation":
                    s = s[s.batch_size.isin(DECODE_BATCHES) & s.step.isin(DECODE_CONTEXTS)]
                    s = s.groupby(["batch_size", "step"]).latency.median().reset_index()
                    b, ctx = s.batch_size.to_numpy(float), s.step.to_numpy(float)
                    x = np.c_[np.ones(len(s)), b, b * ctx]
                else:
                    tokens = s.batch_size * s.isl
                    s = s[(tokens >= PREFILL_TOKENS[0]) & (tokens <= PREFILL_TOKENS[1])]
                    s = s.groupby(["batch_size", "isl"]).latency.median().reset_index()
                    b, n = s.batch_size.to_numpy(float), s.isl.to_numpy(float)
                    x = np.c_[np.ones(len(s)), b * n, b * n * n]
                if len(s) < 6:
                    continue
                c, err = fit(x, s.latency.to_numpy(float))
                out.append(
                    ("vllm", op, gpu, kv, heads, f"{c[0]:.5g}", f"{c[1] * 1e3:.5g}", f"{c[2] * 1e6:.5g}", len(s))
                    + (f"{np.median(np.abs(err)):.3f}", f"{np.abs(err).max():.3f}")
                )
    return out


def main(out: Path = OUT) -> None:
    rows = [r for key, gpu in GPUS.items() for r in rows_for(key, gpu)]
    with Path(out).open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{len(rows)} rows -> {out}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help=f"the CSV to write [default: {OUT}]")
    main(parser.parse_args().out)
