"""Derive the operator model's kernel curves from aiconfigurator's measured kernel database.

    /work/venvs/aic/bin/python bench/kernel_extract.py          # writes catalogs/reference/kernel_curves_aic.csv
    /work/venvs/aic/bin/python bench/kernel_extract.py OUT.csv  # elsewhere (tests/test_kernel_curves.py)

Source: aiconfigurator 0.12.0 (PyPI ``aiconfigurator``, Apache-2.0, NVIDIA; licence text in
``catalogs/reference/LICENSE-aiconfigurator.txt``), its collected tables for vLLM
(``aiconfigurator_core/systems/data/<system>/{gemm,attention,comm}/vllm/<version>/*_perf.parquet``): kernel
latencies in ms measured on each GPU. Derived per GPU (one CSV row, a few hundred bytes; the 89 MB database is
not shipped), each by least squares of log(latency) (soft-L1, so a few odd shapes do not pull the fit):

- GEMM (bf16 and per-tensor fp8, the fastest kernel per shape; m <= 16384 rows, n and k >= 1024, an LLM
  layer's shapes): latency = floor + max(bytes / achieved bytes/s, 2 m n k / achieved FLOP/s),
  bytes = weights n x k x B/weight + activations in and out (m x (k + n) x 2 B). One floor and one byte rate
  per GPU over every shape, one FLOP rate per dtype refitted on the shapes of layer-sized weights (n x k >= 4,096 x
  4,096, ``LAYER_WEIGHT_MIN``: a prefill's GEMMs; small weights compute slower, fp8's most).
  One FLOP rate whatever the rows m: a rate as a function of m (``fit_rows_flop_rates``: rate x m / (m + m0)) fits
  the tables better but was not shipped (``bench/gemm_bands.py``; docs/history.md, s111).
  Block-FP8 (``fp8_block``, 128 x 128 weight scales) is not fitted: aiconfigurator times vLLM's block-FP8 GEMMs
  without a CUDA graph (``collector/vllm/collect_gemm.py``: ``use_cuda_graph=gemm_type != "fp8_block"``), so its rows
  are 58-164 us of host time on H100 whatever the shape; SGLang's and TensorRT-LLM's graph-measured block-FP8 tables
  sit at the per-tensor fp8 curve, which block-FP8 checkpoints take (docs/accuracy.md, ``TestBlockFp8Gemms``).
- Decode attention (``generation_attention``, no sliding window, the fastest kernel per shape as the engine
  picks it; bf16 and fp8 KV): latency = floor + max(KV bytes / achieved bytes/s, FLOPs / achieved FLOP/s),
  KV bytes = batch x context x KV heads x head dim x 2 (K, V) x B, FLOPs = batch x context x heads x head dim x 4;
  one floor and FLOP rate, one byte rate per KV format (bf16, fp8: Hopper's FlashAttention-3 reads an fp8 cache at
  about half the bytes/s of a bf16 one; one rate for both, as before s186, sat 28% under H200's bf16 rate and 42% over
  its fp8 one).
- Prefill attention (``context_attention``, causal, no window, bf16 KV): latency = floor + FLOPs / achieved
  FLOP/s, FLOPs = batch x isl^2 / 2 x heads x head dim x 4 (the "flat" fit, one rate whatever the prompt); and the
  "rising" fit, latency = floor + (pairs + s x tokens) x heads x head dim x 4 / rate, pairs = batch x isl^2 / 2,
  tokens = batch x isl: each new token costs s token pairs more, so the achieved rate rises with the prompt,
  rate x (isl / 2) / (isl / 2 + s), half the rate at isl = 2 s (a causal kernel's tiles on and near the diagonal, and
  its per-query-tile work, weigh most on short prompts). The flat rate sits 24-42% under what prompts of 8K-16K
  tokens reach in the same tables; the rising form halves the median error and leaves those prompts within 6%.
- All-reduce (vLLM's custom all-reduce under CUDA graphs, ``vLLM_custom_graph``, bf16; 2, 4 and 8 GPUs, messages
  1 KiB - 512 MiB: a decode step sends batch x hidden x 2 B, 8 KiB - 16 MiB, a prefill chunk up to hundreds of MiB): latency = fixed latency +
  2 (g-1)/g x message / bus bytes/s, one latency and one bus rate per GPU over all three group sizes (the form
  ``planner.model.decode.allreduce_time_s`` and the workbook's formula compute; the planner reads the rate as a
  fraction of the catalog's NVLink bandwidth). Its median / worst |error| per group size are written beside it.

Each fit's median and worst |error| over its own rows is written beside it (in-sample: the kernels are the
calibration data; the end-to-end figures in ``bench/heldout.py`` are the held-out test). Needs pandas, pyarrow and
scipy (the aiconfigurator venv has them); the planner reads only the CSV (``planner.engines.kernel_curves``).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "kernel_curves_aic.csv"
VENV = Path("/work/venvs/aic")
DATA = VENV / "lib/python3.11/site-packages/aiconfigurator_core/systems/data"
AIC_VERSION = "0.12.0"
#: aiconfigurator system -> planner catalog GPU name (the GPUs with vLLM kernel tables).
SYSTEMS = {
    "a100_sxm": "A100 SXM 80GB",
    "h100_sxm": "H100 SXM 80GB",
    "h200_sxm": "H200 SXM 141GB",
    "b200_sxm": "B200 180GB",
    "b300_sxm": "B300 288GB",
    "gb200": "GB200 NVL72",
    "gb300": "GB300 NVL72",
    "l40s": "L40S",
}
ALLREDUCE_MESSAGE_BYTES = (1024, 2**29)  # least and greatest message fitted: the whole table from 1 KiB
COLUMNS = (
    "gpu",
    "aic_system",
    "vllm_version",
    "gemm_floor_s",
    "gemm_bytes_per_s",
    "gemm_bf16_flop_per_s",
    "gemm_fp8_flop_per_s",
    "gemm_rows",
    "gemm_median_abs_error",
    "gemm_worst_abs_error",
    "attention_floor_s",
    "attention_bytes_per_s",
    "attention_fp8_bytes_per_s",
    "attention_trtllm_bytes_per_s",
    "attention_trtllm_fp8_bytes_per_s",
    "attention_flop_per_s",
    "attention_rows",
    "attention_median_abs_error",
    "attention_worst_abs_error",
    "prefill_attention_floor_s",
    "prefill_attention_flop_per_s",
    "prefill_attention_rows",
    "prefill_attention_median_abs_error",
    "prefill_attention_worst_abs_error",
    "prefill_attention_rising_floor_s",
    "prefill_attention_rising_flop_per_s",
    "prefill_attention_pairs_per_token",
    "prefill_attention_rising_median_abs_error",
    "prefill_attention_rising_worst_abs_error",
    "allreduce_latency_s",
    "allreduce_rows",
    "allreduce_bus_bytes_per_s",
    "allreduce_median_abs_error",
    "allreduce_worst_abs_error",
    "allreduce_worst_abs_error_2",
    "allreduce_worst_abs_error_4",
    "allreduce_worst_abs_error_8",
)


def latest(path: Path) -> Path | None:
    """The newest version folder under ``path`` (numeric order), or None."""
    if not path.is_dir():
        return None
    versions = sorted(path.iterdir(), key=lambda p: tuple(int(x) if x.isdigit() else 0 for x in p.name.split(".")))
    return versions[-1] if versions else None


def fit_floor_max(
    latency_s: np.ndarray, bytes_: np.ndarray, flop: np.ndarray, flop_groups: np.ndarray, guess: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of log latency = log(floor + max(bytes / rate_b, flop / rate_f[group])): (params, |errors|).

    Parameters in log space: floor (s), byte rate (B/s), one FLOP rate per group (FLOP/s).
    """
    groups = int(flop_groups.max()) + 1

    def predict(x):
        floor, rate_b, rate_f = np.exp(x[0]), np.exp(x[1]), np.exp(x[2:])[flop_groups]
        return floor + np.maximum(bytes_ / rate_b, flop / rate_f)

    x0 = np.log([guess[0], guess[1]] + [guess[2]] * groups)
    r = least_squares(lambda x: np.log(predict(x) / latency_s), x0, loss="soft_l1", f_scale=0.1)
    err = np.abs(predict(r.x) / latency_s - 1.0)
    return np.exp(r.x), err


def fit_floor_max_byte_groups(
    latency_s: np.ndarray, bytes_: np.ndarray, flop: np.ndarray, byte_groups: np.ndarray, guess: tuple
) -> tuple[np.ndarray, np.ndarray]:
    """As ``fit_floor_max`` with one FLOP rate and one byte rate per group: (floor, rate_b[0..], rate_f), |errors|."""
    groups = int(byte_groups.max()) + 1

    def predict(x):
        floor, rate_b, rate_f = np.exp(x[0]), np.exp(x[1:-1])[byte_groups], np.exp(x[-1])
        return floor + np.maximum(bytes_ / rate_b, flop / rate_f)

    x0 = np.log([guess[0]] + [guess[1]] * groups + [guess[2]])
    r = least_squares(lambda x: np.log(predict(x) / latency_s), x0, loss="soft_l1", f_scale=0.1)
    return np.exp(r.x), np.abs(predict(r.x) / latency_s - 1.0)


def fit_rising_rate(
    latency_s: np.ndarray, flop: np.ndarray, flop_per_pair_tokens: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(floor s, rate FLOP/s, s pairs per token), |errors|: least squares of log latency = log(floor + (flop + s x
    ``flop_per_pair_tokens``) / rate), soft-L1 as ``fit_floor_max``; ``flop_per_pair_tokens``: tokens x the FLOPs of
    one token pair (batch x isl x heads x head dim x 4), so s x it is s more pairs for every new token."""

    def predict(z):
        floor, rate, s = np.exp(z)
        return floor + (flop + s * flop_per_pair_tokens) / rate

    r = least_squares(
        lambda z: np.log(predict(z) / latency_s), np.log([1e-5, 5e14, 256.0]), loss="soft_l1", f_scale=0.1
    )
    return np.exp(r.x), np.abs(predict(r.x) / latency_s - 1.0)


#: The smallest weight matrix (n x k elements) whose GEMMs set the FLOP rates: 4,096 x 4,096, a 7-8B model's output
#: projection at TP 1, the smallest of the layer GEMMs that dominate a prefill's FLOPs (a 70B model's MLP GEMMs at TP 8
#: are 8,192 x 3,584 = 29 Mi). Below it the measured rate falls with the weight, fp8's most: H100 fp8 GEMMs of
#: 1,024-16,384 rows run at a median 357 TFLOP/s for weights under 4 Mi elements and 980-990 TFLOP/s above 64 Mi
#: (bf16: 638 and 787-812), so one rate over all shapes put fp8 at bf16's (823 against 812 TFLOP/s).
LAYER_WEIGHT_MIN = 4096 * 4096


def fit_layer_flop_rates(
    latency_s: np.ndarray, bytes_: np.ndarray, flop: np.ndarray, groups: np.ndarray, layer: np.ndarray, x: np.ndarray
) -> np.ndarray:
    """The FLOP rates per group refitted on the GEMMs of layer-sized weights (``layer``), the floor and byte rate
    (``x[0]``, ``x[1]``, fitted on every shape) kept: the same log least squares (soft-L1) as ``fit_floor_max``."""
    floor, rate_b = x[0], x[1]
    lat, b, f, g = latency_s[layer], bytes_[layer], flop[layer], groups[layer]

    def residual(z):
        return np.log((floor + np.maximum(b / rate_b, f / np.exp(z)[g])) / lat)

    return np.exp(least_squares(residual, np.log(x[2:]), loss="soft_l1", f_scale=0.1).x)


def fit_rows_flop_rates(
    latency_s: np.ndarray,
    bytes_: np.ndarray,
    flop: np.ndarray,
    rows: np.ndarray,
    groups: np.ndarray,
    layer: np.ndarray,
    x: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(saturated FLOP rate, half rows m0) per group: latency = floor + max(bytes / rate_b, FLOPs / (rate x m / (m +
    m0))), refitted on the GEMMs of layer-sized weights (``layer``) with the floor and byte rate (``x[0]``, ``x[1]``)
    kept: the same log least squares (soft-L1) as ``fit_layer_flop_rates``, started from its flat rates and m0 = 100.

    Experiment, not used by the shipped curves (``gemm_curve`` keeps one flat rate per dtype): ``bench/gemm_bands.py``
    compares the two forms (docs/history.md: "The GEMM curve per band of rows m", s111)."""
    floor, rate_b = x[0], x[1]
    lat, b, f, m, g = latency_s[layer], bytes_[layer], flop[layer], rows[layer], groups[layer]
    n = len(x) - 2

    def residual(z):
        rate, m0 = np.exp(z[:n])[g], np.exp(z[n:])[g]
        return np.log((floor + np.maximum(b / rate_b, f * (m + m0) / (m * rate))) / lat)

    z0 = np.concatenate([np.log(x[2:]), np.log(np.full(n, 100.0))])
    z = np.exp(least_squares(residual, z0, loss="soft_l1", f_scale=0.1).x)
    return z[:n], z[n:]


def gemm_curve(system: Path, framework: str = "vllm") -> dict:
    """The GEMM curve of one GPU's ``framework`` table (its newest version): vLLM's for the shipped curves; others
    ("trtllm", "sglang") for comparisons (``bench/nim_readings.py``: TensorRT-LLM's fp8 rate on H100)."""
    folder = latest(system / "gemm" / framework)
    d = pd.read_parquet(folder / "gemm_perf.parquet")
    dtypes = {"bfloat16": (2.0, 0), "fp8": (1.0, 1)}  # B per weight, FLOP-rate group
    d = d[d.gemm_dtype.isin(list(dtypes)) & (d.m <= 16384) & (d.n >= 1024) & (d.k >= 1024)]
    d = d.groupby(["gemm_dtype", "m", "n", "k"], as_index=False).latency.min()  # the kernel the engine picks
    wb = np.array([dtypes[t][0] for t in d.gemm_dtype])
    group = np.array([dtypes[t][1] for t in d.gemm_dtype])
    m, n, k = (d[c].to_numpy(float) for c in "mnk")
    bytes_ = n * k * wb + m * (k + n) * 2.0
    latency_s, flop = d.latency.to_numpy() * 1e-3, 2.0 * m * n * k
    x, _ = fit_floor_max(latency_s, bytes_, flop, group, (5e-6, 2e12, 5e14))
    x[2:] = fit_layer_flop_rates(latency_s, bytes_, flop, group, n * k >= LAYER_WEIGHT_MIN, x)
    err = np.abs((x[0] + np.maximum(bytes_ / x[1], flop / x[2:][group])) / latency_s - 1.0)
    return {
        "vllm_version": folder.name,
        "gemm_floor_s": x[0],
        "gemm_bytes_per_s": x[1],
        "gemm_bf16_flop_per_s": x[2],
        "gemm_fp8_flop_per_s": x[3] if len(x) > 3 else "",
        "gemm_rows": len(d),
        "gemm_median_abs_error": float(np.median(err)),
        "gemm_worst_abs_error": float(np.max(err)),
    }


ATTENTION_SHAPE = ["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype", "step"]


def generation_attention(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A ``generation_attention`` table's shapes without a sliding window, the fastest kernel per shape: (latency s,
    KV bytes, FLOPs, 1 where the cache is fp8) per shape, as the docstring's decode-attention form counts them."""
    g = pd.read_parquet(folder / "generation_attention_perf.parquet")
    g["window_size"] = g.get("window_size", 0)  # older tables (A100, vLLM 0.14) have no window column
    g = g[g.window_size == 0].groupby(ATTENTION_SHAPE, as_index=False).latency.min()
    fp8 = (g.kv_cache_dtype == "fp8").to_numpy().astype(int)
    ctx = g.step.to_numpy(float) + g.isl.to_numpy(float)
    per = g.batch_size.to_numpy(float) * ctx * g.head_dim.to_numpy(float)
    bytes_ = per * g.num_key_value_heads.to_numpy(float) * 2.0 * np.where(fp8, 1.0, 2.0)
    flop = per * g.num_heads.to_numpy(float) * 4.0
    return g.latency.to_numpy() * 1e-3, bytes_, flop, fp8


def attention_curves(system: Path) -> dict:
    folder = latest(system / "attention" / "vllm")
    latency_s, bytes_, flop, fp8 = generation_attention(folder)
    # one byte rate per KV format: on Hopper vLLM's FlashAttention-3 reads an fp8 cache at about half the bytes/s of
    # a bf16 one (H200: 2.0 against 3.7 TB/s, so fp8 KV saves little decode time); one rate for both put bf16 at 2.7
    x, err = fit_floor_max_byte_groups(latency_s, bytes_, flop, fp8, (5e-6, 2e12, 2e14))
    if not fp8.any():  # no fp8 cache measured (A100's table): the bf16 rate
        x = np.array([x[0], x[1], x[1], x[2]])
    c = pd.read_parquet(folder / "context_attention_perf.parquet")
    c["window_size"] = c.get("window_size", 0)
    c = (
        c[(c.window_size == 0) & (c.kv_cache_dtype == "bfloat16")]
        .groupby(ATTENTION_SHAPE, as_index=False)
        .latency.min()
    )
    isl = c.isl.to_numpy(float)
    cflop = c.batch_size.to_numpy(float) * isl * isl / 2.0 * c.num_heads.to_numpy(float) * c.head_dim.to_numpy(float)
    cflop = cflop * 4.0
    # no byte term: a prefill's attention is compute-bound (bytes 0 leave the max to the FLOPs)
    clat = c.latency.to_numpy() * 1e-3
    cx, cerr = fit_floor_max(clat, 0.0 * cflop, cflop, np.zeros(len(c), int), (1e-5, 1e12, 3e14))
    rx, rerr = fit_rising_rate(clat, cflop, c.batch_size.to_numpy(float) * isl * c.num_heads.to_numpy(float)
                               * c.head_dim.to_numpy(float) * 4.0)  # fmt: skip
    return {
        "attention_floor_s": x[0],
        "attention_bytes_per_s": x[1],
        "attention_fp8_bytes_per_s": x[2],
        "attention_flop_per_s": x[3],
        "attention_rows": len(latency_s),
        "attention_median_abs_error": float(np.median(err)),
        "attention_worst_abs_error": float(np.max(err)),
        "prefill_attention_floor_s": cx[0],
        "prefill_attention_flop_per_s": cx[2],
        "prefill_attention_rows": len(c),
        "prefill_attention_median_abs_error": float(np.median(cerr)),
        "prefill_attention_worst_abs_error": float(np.max(cerr)),
        "prefill_attention_rising_floor_s": rx[0],
        "prefill_attention_rising_flop_per_s": rx[1],
        "prefill_attention_pairs_per_token": rx[2],
        "prefill_attention_rising_median_abs_error": float(np.median(rerr)),
        "prefill_attention_rising_worst_abs_error": float(np.max(rerr)),
    }


def trtllm_attention_rates(system: Path, floor_s: float, flop_per_s: float) -> dict:
    """TensorRT-LLM's own decode attention (its ``generation_attention`` table: XQA / masked MHA) read through the vLLM
    curve's floor and FLOP rate: one byte rate per KV format fitted with those two held (blank without a table)."""
    folder = latest(system / "attention" / "trtllm")
    empty = {"attention_trtllm_bytes_per_s": "", "attention_trtllm_fp8_bytes_per_s": ""}
    if folder is None:
        return empty
    latency_s, bytes_, flop, fp8 = generation_attention(folder)

    def predict(x):
        return floor_s + np.maximum(bytes_ / np.exp(x)[fp8], flop / flop_per_s)

    r = least_squares(lambda x: np.log(predict(x) / latency_s), np.log([2e12, 2e12]), loss="soft_l1", f_scale=0.1)
    bf16, fp8_rate = np.exp(r.x)
    return {"attention_trtllm_bytes_per_s": float(bf16), "attention_trtllm_fp8_bytes_per_s": float(fp8_rate)}


def allreduce_curve(system: Path) -> dict:
    """Fixed latency and bus rate of vLLM's graph-captured custom all-reduce (the docstring's form), by least squares
    of log(latency) over 2, 4 and 8 GPUs and the step's message sizes; blank where the GPU has no vLLM table."""
    blank = dict.fromkeys(COLUMNS[COLUMNS.index("allreduce_latency_s") :], "") | {"allreduce_rows": 0}
    folder = latest(system / "comm" / "vllm")
    if folder is None:
        return blank
    d = pd.read_parquet(folder / "custom_allreduce_perf.parquet")
    low, high = ALLREDUCE_MESSAGE_BYTES
    d = d[(d.kernel_source == "vLLM_custom_graph") & d.message_size.between(low, high)]
    if d.empty:
        return blank
    m, g, t = (d.message_size.to_numpy(float), d.num_gpus.to_numpy(float), d.latency.to_numpy(float) * 1e-3)

    def model(p):  # p: latency in us, bus rate in GB/s (scaled so both are near 1-1000)
        return p[0] * 1e-6 + 2.0 * (g - 1.0) / g * m / (p[1] * 1e9)

    fit = least_squares(
        lambda p: np.log(model(p) / t), [5.0, 200.0], loss="soft_l1", f_scale=0.1, bounds=([0.1, 1.0], [100, 5000])
    )
    err = np.abs(model(fit.x) / t - 1.0)
    return {
        "allreduce_latency_s": float(fit.x[0]) * 1e-6,
        "allreduce_rows": len(d),
        "allreduce_bus_bytes_per_s": float(fit.x[1]) * 1e9,
        "allreduce_median_abs_error": float(np.median(err)),
        "allreduce_worst_abs_error": float(err.max()),
        **{f"allreduce_worst_abs_error_{n}": float(err[g == n].max()) if (g == n).any() else "" for n in (2, 4, 8)},
    }


def fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def main(out: Path = OUT) -> None:
    rows = []
    for key, gpu in SYSTEMS.items():
        system = DATA / key
        attention = attention_curves(system)
        trtllm = trtllm_attention_rates(system, attention["attention_floor_s"], attention["attention_flop_per_s"])
        row = {
            "gpu": gpu,
            "aic_system": key,
            **gemm_curve(system),
            **attention,
            **trtllm,
            **allreduce_curve(system),
        }
        rows.append([fmt(row[c]) for c in COLUMNS])
        print(" ".join(f"{c}={fmt(row[c])}" for c in COLUMNS), file=sys.stderr)
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    print(f"{len(rows)} GPUs -> {out}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help=f"the CSV to write [default: {OUT}]")
    main(parser.parse_args().out)
