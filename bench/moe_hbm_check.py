"""Which of aiconfigurator's fused-MoE tables are faster than the GPU's memory allows (issue 21's kernel source).

    /work/venvs/aic/bin/python bench/moe_hbm_check.py     # writes catalogs/reference/moe_hbm_check_aic.csv

A fused-MoE call reads every expert its tokens touch once, so it cannot take less than those bytes over the HBM's
datasheet rate. For each collector of aiconfigurator 0.12.0's database (``aiconfigurator_core/systems/data/<gpu>/moe/
<engine>/<version>/moe_perf.parquet``, Apache-2.0, NVIDIA) on H100 SXM, H200 SXM and B200 this counts the calls that
read at least 200 MB (balanced routing, no expert parallelism, 8- and 16-bit weights) and those among them measured
under that floor (touched experts = E (1 - (1 - k / E)^T), each 3 x hidden x inter / tp weights). It also copies
the DeepSeek-V3 / R1 call at TP 8 (256 experts, top-8, hidden 7,168, MoE width 2,048, block FP8) on H200 at
1-8,192 tokens from every collector that has it, which ``bench/h200_moe_kernels.py`` sets beside SGLang's kernel
timed on our own H200 (``bench/h200_moe_measure.py``). Needs pandas and pyarrow (the aiconfigurator venv has them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from moe_kernel_extract import DATA, VENV  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "moe_hbm_check_aic.csv"
#: aiconfigurator's system name -> the catalog GPU and its datasheet HBM rate (bytes/s: NVIDIA's H100 SXM, H200 and
#: B200 datasheets, as the catalog's entries carry them)
SYSTEMS = {
    "h100_sxm": ("H100 SXM 80GB", 3.35e12),
    "h200_sxm": ("H200 SXM 141GB", 4.8e12),
    "b200_sxm": ("B200 180GB", 8.0e12),
}
BYTES_PER_WEIGHT = {"fp8_block": 1.0, "fp8": 1.0, "bfloat16": 2.0, "float16": 2.0}
MIN_BYTES = 2e8
DEEPSEEK = dict(hidden_size=7168, inter_size=2048, topk=8, num_experts=256, moe_tp_size=8)
COLUMNS = ("kind", "gpu", "engine", "version", "dtype", "tokens", "calls", "below_floor", "min_ratio", "latency_s")


def floor_s(moe: pd.DataFrame, hbm_bytes_per_s: float) -> pd.Series:
    """Each call's touched expert bytes over the datasheet HBM rate, seconds."""
    t, k, e = moe.num_tokens, moe.topk, moe.num_experts
    touched = e * (1.0 - (1.0 - k / e) ** t)
    weight = moe.moe_dtype.astype(str).map(BYTES_PER_WEIGHT).astype(float)
    return touched * 3 * moe.hidden_size * moe.inter_size / moe.moe_tp_size * weight / hbm_bytes_per_s


def main() -> None:
    rows = []
    for system, (gpu, hbm) in SYSTEMS.items():
        for path in sorted((VENV / DATA / system / "moe").glob("*/*/moe_perf.parquet")):
            engine, version = path.parts[-3], path.parts[-2]
            moe = pd.read_parquet(path)
            moe = moe[(moe.distribution == "balanced") & (moe.moe_ep_size == 1) & moe.moe_dtype.isin(BYTES_PER_WEIGHT)]
            floor = floor_s(moe, hbm)
            big = moe[floor * hbm >= MIN_BYTES]
            ratio = big.latency / 1e3 / floor[big.index]
            for dtype, part in big.groupby("moe_dtype"):
                r = ratio[part.index]
                below = int((r < 1).sum())
                rows.append(("collector", gpu, engine, version, dtype, "", len(part), below, f"{r.min():.3g}", ""))
            if system != "h200_sxm":
                continue
            ds = moe[(moe.moe_dtype == "fp8_block") & (moe[list(DEEPSEEK)] == pd.Series(DEEPSEEK)).all(axis=1)]
            for r in ds.sort_values("num_tokens").itertuples():
                seconds = f"{r.latency / 1e3:.5g}"
                rows.append(("deepseek_tp8", gpu, engine, version, r.moe_dtype, r.num_tokens, "", "", "", seconds))
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(OUT, index=False)
    print(f"{len(rows)} rows -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    main()
