"""The MoE term against SGLang's fused-MoE kernel timed on our own H200, and aiconfigurator's tables beside it.

    PYTHONPATH=. python bench/h200_moe_kernels.py     # tables from catalogs/reference/moe_h200_measured.csv

The measurement (``bench/h200_moe_measure.py``, one run on a lent NVIDIA H200 SXM, 2026-12-04: PyTorch 2.11.0+cu130,
Triton 3.6.0; catalogs/reference/README.md) times the two grouped GEMMs of SGLang 0.5.12's Triton fused MoE, with
the tuned config SGLang picks, over 1-8,192 tokens for five layers: DeepSeek-R1 at TP 8 (256 experts, top-8, block
FP8), Qwen3-235B-A22B at TP 8 (bf16) and TP 4 (block FP8; 128 experts, top-8), Qwen3-30B-A3B on one GPU (bf16) and
Mixtral-8x7B on one GPU (8 experts, top-2, bf16). Nothing in the planner was fitted to it. Beside it:

- the planner's MoE grouped-GEMM term for that layer (``planner.model.operators.expert_layers_time_s``: the touched
  experts' bytes at the GEMM curve's byte rate, FLOPs at the grouped-GEMM rate) and its fused-MoE floor
  (``planner.model.decode.step_overhead_s``: the router, alignment, activation and sum kernels), on the same GPUs
  under SGLang's profile; the measured GEMMs leave the floor's kernels out, so the GEMM term is the like;
- DeepSeek-R1's call in each of aiconfigurator 0.12.0's H200 collectors (``catalogs/reference/moe_hbm_check_aic.csv``,
  ``bench/moe_hbm_check.py``), and per collector how many of its calls read faster than the HBM's datasheet rate.
"""

from __future__ import annotations

import csv
import functools
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog.loader import shipped_catalog_dir  # noqa: E402
from planner.deploy import deploy  # noqa: E402
from planner.model import operators as O  # noqa: E402
from planner.model.decode import experts_touched, step_overhead_s  # noqa: E402
from planner.options import DecodeOptions, Options  # noqa: E402

MEASURED_FILE_NAME = "moe_h200_measured.csv"
AIC_FILE_NAME = "moe_hbm_check_aic.csv"
GPU, ENGINE = "H200 SXM 141GB", "sglang"
#: Each measured layer as the planner's deployment: (catalog model, GPUs, weight precision)
DEPLOYMENTS = {
    "deepseek-r1-tp8-fp8": ("deepseek-r1", 8, "fp8"),
    "qwen3-235b-a22b-tp8-bf16": ("qwen3-235b-a22b", 8, "bf16"),
    "qwen3-235b-a22b-tp4-fp8": ("qwen3-235b-a22b", 4, "fp8"),
    "qwen3-30b-a3b-tp1-bf16": ("qwen3-30b-a3b", 1, "bf16"),
    "mixtral-8x7b-tp1-bf16": ("mixtral-8x7b", 1, "bf16"),
}
DEEPSEEK = "deepseek-r1-tp8-fp8"
#: One GPU's slice of one DeepSeek-R1 expert (gate, up and down, 2,048 / 8 columns each over hidden 7,168), FP8 bytes
EXPERT_SLICE_BYTES = 3 * 7168 * 2048 // 8


def _rows(name: str, path: Path | None = None) -> list[dict[str, str]]:
    with (path or shipped_catalog_dir() / "reference" / name).open(newline="") as f:
        return list(csv.DictReader(f))


def measured_rows(path: Path | None = None) -> list[dict[str, str]]:
    return _rows(MEASURED_FILE_NAME, path)


def aic_rows(path: Path | None = None) -> list[dict[str, str]]:
    return _rows(AIC_FILE_NAME, path)


def read_rate_bytes_per_s(rows: list[dict[str, str]]) -> float:
    (r,) = [r for r in rows if r["kind"] == "read"]
    return float(r["expert_bytes"]) / float(r["latency_s"])


def measured_s(rows: list[dict[str, str]], routing: str, shape: str = DEEPSEEK) -> dict[int, float]:
    """Tokens -> seconds of ``shape``'s two grouped GEMMs under ``routing`` ("balanced" or "random")."""
    return {int(r["tokens"]): float(r["latency_s"]) for r in rows if r["shape"] == shape and r["routing"] == routing}


def read_rates(rows: list[dict[str, str]], shape: str, routing: str = "random") -> dict[int, float]:
    """Tokens -> the touched experts' bytes over the measured time, bytes/s."""
    return {
        int(r["tokens"]): int(r["expert_bytes"]) / float(r["latency_s"])
        for r in rows
        if r["shape"] == shape and r["routing"] == routing
    }


#: The token counts whose measured read rate ``read_fraction`` takes: (nearly) every expert touched under random
#: routing on the 128- and 256-expert layers, a few rows an expert, so the two GEMMs stream weights and compute little
READ_TOKENS = (64, 128, 256)


def read_fraction(rows: list[dict[str, str]] | None = None, shape: str = DEEPSEEK) -> float:
    """``shape``'s expert bytes' measured read rate (random routing, median over ``READ_TOKENS``) over the H200 GEMM
    curve's byte rate (``catalogs/reference/kernel_curves_aic.csv``): how much slower (or faster) the fused-MoE kernel
    streams its weights than the dense GEMMs the planner times them as."""
    from planner.engines.kernel_curves import read_curves

    rates = read_rates(rows or measured_rows(), shape)
    return statistics.median(rates[t] for t in READ_TOKENS) / float(read_curves()[GPU]["gemm_bytes_per_s"])


#: The measured block-FP8 layers (SGLang's Triton kernel with block scales)
BLOCK_FP8_SHAPES = ("deepseek-r1-tp8-fp8", "qwen3-235b-a22b-tp4-fp8")


def block_fp8_read_fraction(rows: list[dict[str, str]] | None = None) -> float:
    """The block-FP8 layers' read fractions (``read_fraction``), their median: DeepSeek-R1's 0.761 and Qwen3-235B's
    0.811."""
    rows = rows or measured_rows()
    return statistics.median(read_fraction(rows, s) for s in BLOCK_FP8_SHAPES)


@functools.cache
def planner_moe_layer_s(tokens: int, shape: str = DEEPSEEK) -> tuple[float, float]:
    """(grouped GEMMs, fused-MoE floor) of one MoE layer of ``shape``'s deployment at ``tokens`` on H200s under
    SGLang's profile, seconds: the terms the model's decode step adds per MoE layer at that many tokens."""
    model, gpus, precision = DEPLOYMENTS[shape]
    o = Options.read(
        DecodeOptions,
        dict(gpus=gpus, batch=tokens, weight_precision=precision, kv_precision="bf16", engine=ENGINE, check_fit=False),
        "decode_step",
    )
    f = deploy(GPU, model, 1024, o).facts
    g, m, p, lim = f.gpu, f.model, f.precision, f.limits
    touched = experts_touched(m, float(tokens))
    experts = O.expert_weight_bytes(m, p, touched)
    gemms = O.expert_layers_time_s(g, lim, experts, m, float(tokens), lim.decode_flop_efficiency, gpus, None, touched)
    layers = float(m.moe_layers)
    no_floor = replace(lim, moe_floor_s=0.0, moe_floor_per_doubling_s=0.0)
    floor = step_overhead_s(m, lim, float(tokens)) - step_overhead_s(m, no_floor, float(tokens))
    return float(gemms) / layers, float(floor) / layers


def planner_errors(rows: list[dict[str, str]], shape: str) -> dict[int, float]:
    """Tokens -> the planner's GEMM term / the measured GEMMs (random routing, whose expected experts touched the
    planner takes) - 1."""
    return {t: planner_moe_layer_s(t, shape)[0] / s - 1 for t, s in measured_s(rows, "random", shape).items()}


def aic_deepseek_s() -> dict[str, dict[int, float]]:
    """Each aiconfigurator collector ("engine version") -> tokens -> seconds of its DeepSeek TP 8 H200 block-FP8
    call."""
    out: dict[str, dict[int, float]] = {}
    for r in aic_rows():
        if r["kind"] == "deepseek_tp8":
            out.setdefault(f"{r['engine']} {r['version']}", {})[int(r["tokens"])] = float(r["latency_s"])
    return out


def main() -> int:
    rows = measured_rows()
    read = read_rate_bytes_per_s(rows)
    aic = aic_deepseek_s()
    names = sorted(aic)
    print(f"HBM read (sum over 4 GiB) on the same run: {read / 1e12:.2f} TB/s")
    for shape in DEPLOYMENTS:
        random_, balanced = measured_s(rows, "random", shape), measured_s(rows, "balanced", shape)
        rates = read_rates(rows, shape)
        print(
            f"\n{shape}, one MoE layer on one H200, us: SGLang 0.5.12's two grouped GEMMs measured (random routing, its"
        )
        print(
            "expert read rate, balanced routing) | the planner's GEMM term (vs random), fused-MoE floor"
            + (" | aic" if shape == DEEPSEEK else "")
        )
        head = f"  {'tokens':>6}{'random':>8}{'TB/s':>6}{'balanced':>9} | {'planner':>8}{'':>6}{'floor':>6}"
        print(head + (" | " + "".join(f"{n:>17}" for n in names) if shape == DEEPSEEK else ""))
        for t in sorted(random_):
            gemm, floor = planner_moe_layer_s(t, shape)
            line = (
                f"  {t:>6}{random_[t] * 1e6:>8.0f}{rates[t] / 1e12:>6.2f}{balanced[t] * 1e6:>9.0f} | {gemm * 1e6:>8.0f}"
                f"{gemm / random_[t] - 1:>+6.0%}{floor * 1e6:>6.0f}"
            )
            if shape == DEEPSEEK:
                line += " | " + "".join(f"{aic[n][t] * 1e6:>17.0f}" if t in aic[n] else f"{'':>17}" for n in names)
            print(line)
    print("\nThe planner's GEMM term / measured - 1 (random routing), median by band, and the expert read rate at")
    print(f"{', '.join(map(str, READ_TOKENS))} tokens over the GEMM curve's byte rate:")
    for shape in DEPLOYMENTS:
        err = planner_errors(rows, shape)
        bands = [statistics.median(e for t, e in err.items() if lo <= t <= hi) for lo, hi in ((16, 256), (1024, 8192))]
        print(
            f"  {shape:26} 16-256 tokens {bands[0]:+5.0%}, 1,024-8,192 {bands[1]:+5.0%}; read {read_fraction(rows, shape):.3f}"
        )
    print(
        f"the block-FP8 layers' median, {block_fp8_read_fraction(rows):.3f}, is bench/switch_bootstrap.py moe-read-rate's"
        f" fraction (DeepSeek-R1's, {read_fraction(rows):.3f}, moe-read-rate:all's)"
    )
    print("\naiconfigurator's collectors: calls reading >= 200 MB, and those faster than the HBM's datasheet rate")
    print(f"  {'gpu':16}{'engine':>8}{'version':>11}{'dtype':>11}{'calls':>7}{'faster':>8}{'min t / floor':>15}")
    for r in aic_rows():
        if r["kind"] == "collector":
            print(
                f"  {r['gpu']:16}{r['engine']:>8}{r['version']:>11}{r['dtype']:>11}{r['calls']:>7}{r['below_floor']:>8}"
                f"{float(r['min_ratio']):>15.2f}"
            )
    return 0 if not math.isnan(read) else 1


if __name__ == "__main__":
    sys.exit(main())
