"""The operator model against kernels measured on our own H200 (issue 21): GEMMs, decode attention, a decode step.

    PYTHONPATH=. python bench/h200_kernels.py            # tables from catalogs/reference/kernels_h200_measured.csv

The measurements (``bench/h200_measure.py``, run once on a lent NVIDIA H200 SXM, 2026-12-04: PyTorch 2.11.0+cu130,
driver 580.159.04, 132 SMs, clocks as found; catalogs/reference/README.md) are not the engines' kernels: cuBLAS
through ``torch.nn.functional.linear`` and ``torch._scaled_mm`` (vLLM runs cuBLAS for bf16 GEMMs but CUTLASS for
per-tensor fp8), PyTorch's ``scaled_dot_product_attention`` for decode attention (vLLM: FlashAttention-3 over a paged
cache) and unfused element-wise ops. Nothing in the planner was fitted to them; they check what the curves derived
from aiconfigurator's tables (``bench/kernel_extract.py``) say about a GPU measured by someone else's code:

- ``read``: HBM read rate (a sum over 4 GiB) against the datasheet and the GEMM curve's byte rate;
- ``gemm``: the GEMM curve (floor + max(bytes / rate, FLOPs / rate)) per dtype and band of rows;
- ``decode_attention``: the decode-attention curve at a 16-bit cache (32 query / 8 KV heads, dim 128);
- ``decode_step``: a Llama-3.1-8B-shaped step in one CUDA graph, its GEMMs alone and its attention alone, beside the
  planner's dense-GEMM and attention terms for that model on one H200 in bf16 (``bench/step_operators.py``'s split,
  engine "vllm"); the rest (norms, rotary, element-wise, cache writes: unfused here) beside the planner's
  per-layer and per-step costs.
"""

from __future__ import annotations

import csv
import functools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.catalog import default_catalog  # noqa: E402
from planner.catalog.loader import shipped_catalog_dir  # noqa: E402
from planner.deploy import deploy  # noqa: E402
from planner.engines.kernel_curves import read_curves  # noqa: E402
from planner.options import DecodeOptions, Options  # noqa: E402

MEASURED_FILE_NAME = "kernels_h200_measured.csv"
GPU = "H200 SXM 141GB"
#: Llama-3.1-8B's decode attention layer as measured (config.json: 32 heads, 8 KV heads, head dim 128)
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128


def measured_rows(path: Path | None = None) -> list[dict[str, str]]:
    with (path or shipped_catalog_dir() / "reference" / MEASURED_FILE_NAME).open(newline="") as f:
        return [r for r in csv.DictReader(f) if r["latency_s"] not in ("", "nan")]


@functools.cache
def _curve() -> dict[str, float]:
    """The H200 row of the kernel curves, as numbers (read once)."""
    return {k: float(v) for k, v in read_curves()[GPU].items() if k not in ("gpu", "aic_system", "vllm_version")}


def gemm_curve_s(dtype: str, m: int, n: int, k: int) -> float:
    """The GEMM curve of ``bench/kernel_extract.py``: floor + max(n k B + m (k + n) 2 B over the byte rate, 2 m n k
    over the dtype's FLOP rate)."""
    c = _curve()
    weight_bytes = 1.0 if dtype == "fp8" else 2.0
    bytes_ = n * k * weight_bytes + m * (k + n) * 2.0
    rate = c["gemm_fp8_flop_per_s"] if dtype == "fp8" else c["gemm_bf16_flop_per_s"]
    return c["gemm_floor_s"] + max(bytes_ / c["gemm_bytes_per_s"], 2.0 * m * n * k / rate)


def attention_curve_s(batch: int, context: int, *, rate_key: str = "attention_bytes_per_s") -> float:
    """The decode-attention curve at a 16-bit cache (``rate_key``: which fitted byte rate)."""
    c = _curve()
    per = batch * context * HEAD_DIM
    return c["attention_floor_s"] + max(
        per * KV_HEADS * 4.0 / c[rate_key], per * HEADS * 4.0 / c["attention_flop_per_s"]
    )


def read_rate_bytes_per_s(rows: list[dict[str, str]]) -> float:
    (r,) = [r for r in rows if r["kind"] == "read"]
    return float(r["n"]) / float(r["latency_s"])


def gemm_errors(rows: list[dict[str, str]]) -> list[tuple[str, int, int, int, float, float]]:
    """(dtype, m, n, k, measured s, curve s) per measured GEMM."""
    out = []
    for r in rows:
        if r["kind"] == "gemm":
            m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
            out.append((r["dtype"], m, n, k, float(r["latency_s"]), gemm_curve_s(r["dtype"], m, n, k)))
    return out


def band(m: int) -> str:
    return "1-16 rows" if m <= 16 else "32-256 rows" if m <= 256 else "512-8192 rows"


def step_facts(batch: int, context: int):
    o = Options.read(
        DecodeOptions,
        dict(gpus=1, batch=batch, weight_precision="bf16", kv_precision="bf16", engine="vllm", check_fit=False),
        "decode_step",
    )
    f = deploy(GPU, "llama-3.1-8b", context, o).facts
    return f.gpu, f.model, f.precision, f.limits, 1.0


def step_comparison(rows: list[dict[str, str]]) -> list[dict[str, float]]:
    """Per measured (batch, context): the measured step, GEMMs and attention graphs and the planner's terms, seconds."""
    from step_operators import facts_step_terms

    by = {(r["kind"], int(r["batch"]), int(r["context"])): float(r["latency_s"]) for r in rows if r["batch"]}
    out = []
    for (kind, b, ctx), step in sorted(by.items(), key=lambda kv: (kv[0][2], kv[0][1])):
        if kind != "decode_step":
            continue
        t = facts_step_terms(step_facts(b, ctx), prefill=False, batch=b, tokens=ctx)
        gemms, attention = by[("decode_step_gemms", b, ctx)], by[("decode_step_attention", b, ctx)]
        out.append(
            dict(batch=b, context=ctx, step=step, gemms=gemms, attention=attention, rest=step - gemms - attention,
                 model_gemms=t["dense GEMMs"], model_attention=t["attention+state"], model_overhead=t["overhead"],
                 model_per_sequence=t["per sequence"])
        )  # fmt: skip
    return out


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def main() -> int:
    rows = measured_rows()
    cat = default_catalog()
    datasheet = float(cat.gpu(GPU).hbm_bandwidth_bytes_per_s)
    read = read_rate_bytes_per_s(rows)
    curve = _curve()
    print(
        f"HBM read (sum over 4 GiB): {read / 1e12:.2f} TB/s = {read / datasheet:.0%} of the datasheet's "
        f"{datasheet / 1e12:.1f}; the GEMM curve's byte rate {curve['gemm_bytes_per_s'] / 1e12:.2f} TB/s "
        f"({curve['gemm_bytes_per_s'] / read - 1:+.0%})"
    )
    print("\nGEMMs, curve / measured - 1 (L2 flushed between runs; fp8 through torch._scaled_mm, per-tensor scales):")
    print(f"  {'dtype':6}{'rows':>15}{'n':>5}{'median':>9}{'signed':>9}{'worst':>8}")
    groups: dict[tuple[str, str], list[float]] = {}
    for dtype, m, _n, _k, t, c in gemm_errors(rows):
        groups.setdefault((dtype, band(m)), []).append(c / t - 1)
    for (dtype, b), e in sorted(groups.items()):
        worst = max(e, key=abs)
        print(
            f"  {dtype:6}{b:>15}{len(e):>5}{statistics.median(map(abs, e)):>9.0%}"
            f"{statistics.median(e):>+9.0%}{worst:>+8.0%}"
        )
    print("\nDecode attention, bf16 cache (torch SDPA), curve / measured - 1: the 16-bit cache's rate (s186) and the")
    print("rate fitted to both cache formats before it:")
    for r in rows:
        if r["kind"] == "decode_attention":
            b, ctx, t = int(r["batch"]), int(r["context"]), float(r["latency_s"])
            kv = b * ctx * KV_HEADS * HEAD_DIM * 4.0
            print(
                f"  batch {b:>4} context {ctx:>6}: {t * 1e6:7.1f} us ({kv / t / 1e12:.2f} TB/s) "
                f"curve {_pct(attention_curve_s(b, ctx) / t - 1):>5}"
            )
    print("\nLlama-3.1-8B decode step on one H200, bf16, CUDA graph (ms): measured | planner (engine vllm)")
    print(
        f"  {'batch':>5}{'ctx':>6}{'step':>7}{'GEMMs':>7}{'attn':>7}{'rest':>6} | {'GEMMs':>13}{'attn':>13}{'per-layer+step':>16}"
    )
    for s in step_comparison(rows):
        print(
            f"  {s['batch']:>5}{s['context']:>6}{s['step'] * 1e3:7.2f}{s['gemms'] * 1e3:7.2f}{s['attention'] * 1e3:7.2f}"
            f"{s['rest'] * 1e3:6.2f} | {s['model_gemms'] * 1e3:6.2f} {_pct(s['model_gemms'] / s['gemms'] - 1):>5}"
            f" {s['model_attention'] * 1e3:6.2f} {_pct(s['model_attention'] / s['attention'] - 1):>5}"
            f"{s['model_overhead'] * 1e3:10.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
