"""The MoE term against SGLang's fused-MoE kernel timed on our own H200, and aiconfigurator's tables beside it.

    PYTHONPATH=. python bench/h200_moe_kernels.py     # tables from catalogs/reference/moe_h200_measured.csv

The measurement (``bench/h200_moe_measure.py``, one run on a lent NVIDIA H200 SXM, 2026-12-04: PyTorch 2.11.0+cu130,
Triton 3.6.0; catalogs/reference/README.md) times the two grouped GEMMs of SGLang 0.5.12's Triton fused MoE for
DeepSeek-R1 at TP 8 (256 experts, top-8, each expert's 2,048-wide MLP split 8 ways, block FP8) with the config SGLang
picks, over 1-8,192 tokens. Nothing in the planner was fitted to it. Beside it:

- the planner's MoE grouped-GEMM term for that layer (``planner.model.operators.expert_layers_time_s``: the touched
  experts' bytes at the GEMM curve's byte rate, FLOPs at the grouped-GEMM rate), its fused-MoE floor
  (``planner.model.decode.step_overhead_s``: the router, alignment, activation and sum kernels) and their sum, on
  8 x H200 under SGLang's profile; the measured GEMMs leave the floor's kernels out, so the GEMM term is the like;
- the same call in each of aiconfigurator 0.12.0's H200 collectors (``catalogs/reference/moe_hbm_check_aic.csv``,
  ``bench/moe_hbm_check.py``), and per collector how many of its calls read faster than the HBM's datasheet rate.
"""

from __future__ import annotations

import csv
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
GPU, MODEL, GPUS, ENGINE = "H200 SXM 141GB", "deepseek-r1", 8, "sglang"
#: One GPU's slice of one expert (gate, up and down, 2,048 / 8 columns each over hidden 7,168), FP8 bytes
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


def measured_s(rows: list[dict[str, str]], routing: str) -> dict[int, float]:
    """Tokens -> seconds of the two grouped GEMMs under ``routing`` ("balanced" or "random")."""
    return {int(r["tokens"]): float(r["latency_s"]) for r in rows if r["routing"] == routing}


#: The token counts whose measured read rate ``read_fraction`` takes: every expert touched (random routing), few rows
#: an expert (2-8), so the two GEMMs stream weights and compute little
READ_TOKENS = (64, 128, 256)


def read_fraction(rows: list[dict[str, str]] | None = None) -> float:
    """The expert bytes' measured read rate (random routing, median over ``READ_TOKENS``) over the H200 GEMM curve's
    byte rate (``catalogs/reference/kernel_curves_aic.csv``): how much slower the fused-MoE kernel streams its
    weights than the dense GEMMs the planner times them as."""
    from planner.engines.kernel_curves import read_curves

    rows = rows or measured_rows()
    touched = {int(r["tokens"]): int(r["experts_touched"]) for r in rows if r["routing"] == "random"}
    timed = measured_s(rows, "random")
    rate = statistics.median(touched[t] * EXPERT_SLICE_BYTES / timed[t] for t in READ_TOKENS)
    return rate / float(read_curves()[GPU]["gemm_bytes_per_s"])


def planner_moe_layer_s(tokens: int) -> tuple[float, float]:
    """(grouped GEMMs, fused-MoE floor) of one DeepSeek-R1 MoE layer at ``tokens`` on 8 x H200 under SGLang's
    profile, seconds: the terms the model's decode step adds per MoE layer at that many tokens."""
    o = Options.read(
        DecodeOptions,
        dict(gpus=GPUS, batch=tokens, weight_precision="fp8", kv_precision="bf16", engine=ENGINE, check_fit=False),
        "decode_step",
    )
    f = deploy(GPU, MODEL, 1024, o).facts
    g, m, p, lim = f.gpu, f.model, f.precision, f.limits
    touched = experts_touched(m, float(tokens))
    experts = O.expert_weight_bytes(m, p, touched)
    gemms = O.expert_layers_time_s(g, lim, experts, m, float(tokens), lim.decode_flop_efficiency, GPUS, None, touched)
    layers = float(m.moe_layers)
    no_floor = replace(lim, moe_floor_s=0.0, moe_floor_per_doubling_s=0.0)
    floor = step_overhead_s(m, lim, float(tokens)) - step_overhead_s(m, no_floor, float(tokens))
    return float(gemms) / layers, float(floor) / layers


def aic_deepseek_s() -> dict[str, dict[int, float]]:
    """ "engine version" -> tokens -> seconds of aiconfigurator's DeepSeek TP 8 H200 block-FP8 call."""
    out: dict[str, dict[int, float]] = {}
    for r in aic_rows():
        if r["kind"] == "deepseek_tp8":
            out.setdefault(f"{r['engine']} {r['version']}", {})[int(r["tokens"])] = float(r["latency_s"])
    return out


def main() -> int:
    rows = measured_rows()
    read = read_rate_bytes_per_s(rows)
    balanced, random_ = measured_s(rows, "balanced"), measured_s(rows, "random")
    touched = {int(r["tokens"]): int(r["experts_touched"]) for r in rows if r["routing"] == "random"}
    aic = aic_deepseek_s()
    print(
        f"HBM read (sum over 4 GiB) on the same run: {read / 1e12:.2f} TB/s; one expert slice {EXPERT_SLICE_BYTES:,} B"
    )
    print("\nDeepSeek-R1 MoE layer at TP 8 on one H200, us: SGLang 0.5.12's two grouped GEMMs measured (random and")
    print("balanced routing, the random run's expert read rate) | the planner's GEMM term (vs random), floor | aic")
    names = sorted(aic)
    print(
        f"  {'tokens':>6}{'random':>8}{'TB/s':>6}{'balanced':>9} | {'planner':>8}{'':>6}{'floor':>6} | "
        + "".join(f"{n:>17}" for n in names)
    )
    for t in sorted(random_):
        gemm, floor = planner_moe_layer_s(t)
        rate = touched[t] * EXPERT_SLICE_BYTES / random_[t]
        cells = "".join(f"{aic[n][t] * 1e6:>17.0f}" if t in aic[n] else f"{'':>17}" for n in names)
        print(
            f"  {t:>6}{random_[t] * 1e6:>8.0f}{rate / 1e12:>6.2f}{balanced[t] * 1e6:>9.0f} | {gemm * 1e6:>8.0f}"
            f"{gemm / random_[t] - 1:>+6.0%}{floor * 1e6:>6.0f} | {cells}"
        )
    mid = [planner_moe_layer_s(t)[0] / random_[t] - 1 for t in random_ if 16 <= t <= 1024]
    print(f"\nplanner GEMM term / measured - 1 at 16-1,024 tokens: median {statistics.median(mid):+.0%}, "
          f"range {min(mid):+.0%} to {max(mid):+.0%}")  # fmt: skip
    print(f"expert read rate at {', '.join(map(str, READ_TOKENS))} tokens over the GEMM curve's byte rate: "
          f"{read_fraction(rows):.3f} (bench/switch_bootstrap.py moe-read-rate)")  # fmt: skip
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
