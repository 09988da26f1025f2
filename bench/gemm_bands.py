"""How far the shipped GEMM curve is from aiconfigurator's measured GEMMs, per band of rows m (issue 21, s111).

    /work/venvs/aic/bin/python bench/gemm_bands.py             # layer-sized weights (n x k >= 4,096 x 4,096)
    /work/venvs/aic/bin/python bench/gemm_bands.py --all-shapes # every shape kernel_extract fits (n, k >= 1,024)

The shipped curve (``catalogs/reference/kernel_curves_aic.csv``, ``bench/kernel_extract.py``) times a GEMM as
floor + max(bytes / byte rate, 2 m n k / FLOP rate), one FLOP rate per GPU and dtype whatever m, fitted on vLLM's
table. Printed per GPU, engine table (aiconfigurator 0.12.0's vLLM, SGLang and TensorRT-LLM GEMM tables, the newest
version of each; bf16 and per-tensor fp8, the fastest kernel per shape) and dtype: the median signed error
(curve / measured - 1) in each band of m (1-16, 17-128, 129-1,024, 1,025-4,096, 4,097-16,384) and the median |error|,
for the flat curve ("flat") and for the rate as a function of m, rate x m / (m + m0) (``kernel_extract.
fit_rows_flop_rates``: rate and m0 fitted on the GPU's vLLM table, floor and byte rate kept; "m0"), and with
``--own`` that form fitted on each engine's own table ("own").

Not shipped (docs/history.md, s111): on H100's vLLM fp8 table the flat curve is 24% fast at 129-1,024 rows
and 10% slow at 4,097-16,384. vLLM's sm90 fp8 GEMM picks its CUTLASS configuration by m (vllm-project/vllm 44d638a,
csrc/quantization/cutlass_w8a8/c3x/scaled_mm_sm90_fp8_dispatch.cuh: m <= 64 tile 64 x 64, cluster 1 x 8; m <= 128 tile
64 x 128, cluster 2 x 1; above, tile 128 x 128, cluster 2 x 1, i.e. m in steps of 256), so the table runs 469 TFLOP/s
at 128 rows, 316 at 129, 752 at 256, 402 at 257; padding m to 256 costs m / (m + ~128) on average over m, and the fit
gives 993 x m / (m + 133) TFLOP/s, every band from 17 rows within 3%. End to end it failed the ship rule.
Needs pandas, pyarrow and scipy (the aiconfigurator venv).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_extract as K  # noqa: E402

BANDS = ((1, 16), (17, 128), (129, 1024), (1025, 4096), (4097, 16384))
FRAMEWORKS = ("vllm", "sglang", "trtllm")
DTYPES = {"bfloat16": (2.0, 0), "fp8": (1.0, 1)}  # B per weight, FLOP-rate group (kernel_extract.gemm_curve's)


def shipped_curves(path: Path = K.OUT) -> dict[str, dict[str, str]]:
    """The shipped curves' rows by aiconfigurator system."""
    with path.open(newline="") as f:
        return {r["aic_system"]: r for r in csv.DictReader(f)}


def gemm_table(system: str, framework: str, all_shapes: bool = False) -> pd.DataFrame | None:
    """One engine table's bf16 and fp8 GEMMs as ``kernel_extract.gemm_curve`` reads them (m <= 16,384, n and k >=
    1,024, the fastest kernel per shape), layer-sized weights only unless ``all_shapes``; None where it has none."""
    folder = K.latest(K.DATA / system / "gemm" / framework)
    if folder is None:
        return None
    d = pd.read_parquet(folder / "gemm_perf.parquet")
    d = d[d.gemm_dtype.isin(list(DTYPES)) & (d.m <= 16384) & (d.n >= 1024) & (d.k >= 1024)]
    d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False).latency.min()
    if not all_shapes:
        d = d[d.n * d.k >= K.LAYER_WEIGHT_MIN]
    d.attrs["version"] = folder.name
    return d


def arrays(d: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(m, bytes, FLOPs, latency s, FLOP-rate group) of a table's GEMMs, as ``kernel_extract.gemm_curve`` counts."""
    wb = np.array([DTYPES[t][0] for t in d.gemm_dtype])
    group = np.array([DTYPES[t][1] for t in d.gemm_dtype])
    m, n, k = (d[c].to_numpy(float) for c in "mnk")
    return m, n * k * wb + m * (k + n) * 2.0, 2.0 * m * n * k, d.latency.to_numpy() * 1e-3, group


def curve_s(floor_s: float, bytes_per_s: float, rate: np.ndarray, m0: np.ndarray, m, bytes_, flop) -> np.ndarray:
    """floor + max(bytes / byte rate, FLOPs / (rate x m / (m + m0))); m0 = 0: the flat curve."""
    return floor_s + np.maximum(bytes_ / bytes_per_s, flop * (m + m0) / (m * rate))


def rows_fit(curve: dict[str, str], d: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(rate, m0) per dtype group fitted on table ``d`` (all its shapes here: it is already filtered) with the
    shipped floor and byte rate; A100's single group (no fp8 table) gives one pair, used for both."""
    m, bytes_, flop, latency_s, group = arrays(d)
    flat = [float(curve["gemm_bf16_flop_per_s"])]
    if curve["gemm_fp8_flop_per_s"] and (group == 1).any():
        flat.append(float(curve["gemm_fp8_flop_per_s"]))
    x = np.array([float(curve["gemm_floor_s"]), float(curve["gemm_bytes_per_s"]), *flat])
    keep = group < len(flat)
    rate, m0 = K.fit_rows_flop_rates(latency_s, bytes_, flop, m, group, keep, x)
    return rate, m0


def band_errors(errors: np.ndarray, m: np.ndarray) -> list[float]:
    """The median signed error in each of ``BANDS`` (NaN where the band has no GEMM)."""
    return [
        float(np.median(errors[(m >= lo) & (m <= hi)])) if ((m >= lo) & (m <= hi)).any() else np.nan for lo, hi in BANDS
    ]


def report(all_shapes: bool = False, own: bool = False, systems: list[str] | None = None) -> list[dict]:
    """One record per GPU, engine table and dtype: bands and median |error| of the flat and the m0 curves."""
    out = []
    curves = shipped_curves()
    for system in systems or list(K.SYSTEMS):
        c = curves[system]
        floor_s, bytes_per_s = float(c["gemm_floor_s"]), float(c["gemm_bytes_per_s"])
        tables = {fw: gemm_table(system, fw, all_shapes) for fw in FRAMEWORKS}
        layer = {fw: gemm_table(system, fw) for fw in FRAMEWORKS} if all_shapes else tables
        vllm_rate, vllm_m0 = rows_fit(c, layer["vllm"])
        for fw, d in tables.items():
            if d is None:
                continue
            own_rate, own_m0 = rows_fit(c, layer[fw]) if own else (None, None)
            for dtype, (_, g) in DTYPES.items():
                x = d[d.gemm_dtype == dtype]
                if x.empty:
                    continue
                m, bytes_, flop, latency_s, _ = arrays(x)
                flat_rate = (
                    float(c["gemm_fp8_flop_per_s"] or c["gemm_bf16_flop_per_s"])
                    if g
                    else float(c["gemm_bf16_flop_per_s"])
                )
                gi = min(g, len(vllm_rate) - 1)
                rec = {
                    "gpu": K.SYSTEMS[system],
                    "table": f"{fw} {d.attrs['version']}",
                    "dtype": dtype,
                    "rate_tflops": vllm_rate[gi] / 1e12,
                    "half_rows": vllm_m0[gi],
                }
                fits = {"flat": (flat_rate, 0.0), "m0": (vllm_rate[gi], vllm_m0[gi])}
                if own:
                    go = min(g, len(own_rate) - 1)
                    fits["own"] = (own_rate[go], own_m0[go])
                    rec["own_rate_tflops"], rec["own_half_rows"] = own_rate[go] / 1e12, own_m0[go]
                for name, (rate, m0) in fits.items():
                    e = curve_s(floor_s, bytes_per_s, rate, m0, m, bytes_, flop) / latency_s - 1.0
                    rec[name] = band_errors(e, m)
                    rec[f"{name}_median_abs"] = float(np.median(np.abs(e)))
                out.append(rec)
    return out


def _fmt(values: list[float]) -> str:
    return " ".join(f"{v:+6.0%}" if v == v else f"{'-':>6}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all-shapes", action="store_true", help="every fitted shape, not only layer-sized weights")
    parser.add_argument("--own", action="store_true", help="also the m0 form fitted on each engine's own table")
    parser.add_argument("systems", nargs="*", help="aiconfigurator systems (default: every measured GPU)")
    args = parser.parse_args()
    bands = " ".join(f"{f'{lo}-{hi}':>6}" if hi < 16384 else f"{f'>{lo - 1}':>6}" for lo, hi in BANDS)
    print(f"median signed error (curve / measured - 1) per band of rows m: {bands} | median |error|")
    for r in report(args.all_shapes, args.own, args.systems or None):
        head = f"{r['gpu']:<15} {r['table']:<17} {r['dtype']:<8}"
        print(f"{head} flat {_fmt(r['flat'])} | {r['flat_median_abs']:4.0%}")
        print(
            f"{'':<42} m0   {_fmt(r['m0'])} | {r['m0_median_abs']:4.0%}   ({r['rate_tflops']:.0f} TFLOP/s, m0 {r['half_rows']:.0f})"
        )
        if args.own:
            own = f"({r['own_rate_tflops']:.0f} TFLOP/s, m0 {r['own_half_rows']:.0f})"
            print(f"{'':<42} own  {_fmt(r['own'])} | {r['own_median_abs']:4.0%}   {own}")


if __name__ == "__main__":
    main()
