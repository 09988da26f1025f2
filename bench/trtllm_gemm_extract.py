"""Extract TensorRT-LLM's measured dense GEMMs that ``planner.engines.kernel_floor.dense_gemm_flop_scale`` fits
TensorRT-LLM's bf16 and per-tensor fp8 GEMM FLOP-rate multipliers to (issue 21, s144).

    /work/venvs/aic/bin/python bench/trtllm_gemm_extract.py   # writes catalogs/reference/gemm_trtllm_aic.csv
    python bench/trtllm_gemm_extract.py --venv /tmp/s126/aic  # an aiconfigurator venv elsewhere

Source: aiconfigurator 0.12.0's collected kernel database for TensorRT-LLM (``aiconfigurator_core/systems/data/
<system>/gemm/trtllm/<version>/gemm_perf.parquet``, Apache-2.0, NVIDIA; catalogs/reference/LICENSE-aiconfigurator.txt):
latencies in ms of TensorRT-LLM's GEMM ops per GPU, the newest version with a table (H100 SXM, H200 SXM, B200, L40S:
1.3.0rc20; A100 SXM: 1.0.0, bf16 only). Kept, as ``bench/kernel_extract.py`` keeps vLLM's for the FLOP rates: the
dtypes bfloat16 and fp8 (per tensor: fp8 weights and activations, one scale a tensor), the fastest kernel per shape
(the one the engine picks), layer-sized weights (n x k >= 4,096 x 4,096, ``kernel_extract.LAYER_WEIGHT_MIN``) with n
and k of 1,024-16,384 (an LLM layer's GEMM per GPU; the table's 51,200 and 65,536 columns are left out), and the
rows m at the table's octaves, 1, 2, 4 ... 16,384 (a decode step's batch to a prefill chunk). Needs pandas and
pyarrow (the aiconfigurator venv has them); the planner reads only the CSV.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "catalogs" / "reference" / "gemm_trtllm_aic.csv"
DATA = "lib/python3.11/site-packages/aiconfigurator_core/systems/data"
#: aiconfigurator system -> planner catalog GPU name (the GPUs with TensorRT-LLM GEMM tables and vLLM curves).
GPUS = {
    "h100_sxm": "H100 SXM 80GB",
    "h200_sxm": "H200 SXM 141GB",
    "a100_sxm": "A100 SXM 80GB",
    "b200_sxm": "B200 180GB",
    "l40s": "L40S",
}
DTYPES = ("bfloat16", "fp8")
ROWS = tuple(2**i for i in range(15))  # 1 ... 16,384
LAYER_WEIGHT_MIN = 4096 * 4096
DIM_RANGE = (1024, 16384)
COLUMNS = ("gpu", "trtllm_version", "dtype", "m", "n", "k", "latency_ms")


def newest(folder: Path) -> Path:
    """The newest version folder under ``folder`` that holds a GEMM table (numeric order)."""
    versions = [p for p in folder.iterdir() if (p / "gemm_perf.parquet").exists()]
    return max(
        versions, key=lambda p: tuple(int(x) if x.isdigit() else 0 for x in p.name.replace("rc", ".").split("."))
    )


def calls(venv: Path) -> list[dict]:
    out = []
    for system, gpu in GPUS.items():
        folder = newest(venv / DATA / system / "gemm" / "trtllm")
        d = pd.read_parquet(folder / "gemm_perf.parquet")
        lo, hi = DIM_RANGE
        d = d[d.gemm_dtype.isin(DTYPES) & d.m.isin(ROWS) & d.n.between(lo, hi) & d.k.between(lo, hi)]
        d = d[d.n * d.k >= LAYER_WEIGHT_MIN]
        d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False).latency.min()  # the kernel the engine picks
        for r in d.sort_values(["gemm_dtype", "n", "k", "m"]).itertuples():
            out.append({"gpu": gpu, "trtllm_version": folder.name, "dtype": r.gemm_dtype, "m": r.m, "n": r.n,
                        "k": r.k, "latency_ms": f"{r.latency:.5g}"})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="/work/venvs/aic", help="the aiconfigurator 0.12.0 virtual environment")
    args = ap.parse_args()
    rows = calls(Path(args.venv))
    with OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"{OUT}: {len(rows)} calls")


if __name__ == "__main__":
    main()
