"""Every batch-1 TTFT the leave-one-source-out and held-out figures use, by operator, beside the published figure.

    PYTHONPATH=. python bench/ttft_batch1.py                        # the rows and the planner's operators
    PYTHONPATH=. /work/venvs/aic/bin/python bench/ttft_batch1.py    # and aiconfigurator's measured GEMMs beside them
    PYTHONPATH=. python bench/ttft_batch1.py --first-token-decode-step  # LMDeploy 0.1.0a1 read as it runs (not shipped)

Rows: the single-prompt TTFTs ``bench/loso.py`` judges (static runs of one prompt, ``planner.accuracy.fit.
ttft_is_prefill``; "loso" gives the figure predicted by the fit without the row's source) and the batch band "1" of
``bench/heldout.py`` (serving runs at concurrency 1; "heldout" gives its prediction, the other sources' front end
included). Per row: published and predicted ms, the error, then the planner's terms with the shipped profile of the
row's release (``bench/step_operators.step_terms``): dense GEMMs, MoE GEMMs, attention, all-reduces, overheads (per step,
per layer, the fixed prefill latency), the decode step that samples the first token where the release does so and
``--first-token-decode-step`` asks for it (``planner.engines.profiles.first_token_from_decode_step``: LMDeploy before
0.1.0a2; ``planner.accuracy.predict.FIRST_TOKEN_FROM_DECODE_STEP``) and the front end of a serving row.

With pandas and pyarrow (the aiconfigurator venv), "aic GEMM" is the sum over layers of aiconfigurator 0.12.0's measured vLLM
GEMM latencies (``systems/data/<gpu>/gemm/vllm/<version>/gemm_perf.parquet``, the fastest kernel per shape; bf16, or
per-tensor fp8 for an fp8 row) at the row's shapes: QKV, output, gate-up and down projections at TP, the prompt's
tokens as rows (interpolated linearly in m, n and k between measured points), and the output head at one row (the
engines compute logits for a prompt's last token only). Dense Llama-type models only ("-" for others and GPUs without
a table). Where "aic GEMM" is below "GEMM" the planner's one FLOP rate per GPU is slow for these shapes.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import heldout  # noqa: E402
from step_operators import step_terms  # noqa: E402

from planner.accuracy import holdout as ho  # noqa: E402
from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.fit import held_out_rows, ttft_is_prefill  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.engines.profiles import first_token_from_decode_step  # noqa: E402
from planner.errors import PlannerError  # noqa: E402

AIC_DATA = Path("/work/venvs/aic/lib/python3.11/site-packages/aiconfigurator_core/systems/data")
#: aiconfigurator's system and vLLM table version per catalog GPU (kernel_curves_aic.csv's).
AIC_GEMM_TABLES = {
    "A100 SXM 80GB": ("a100_sxm", "0.14.0"),
    "H100 SXM 80GB": ("h100_sxm", "0.24.0"),
    "H200 SXM 141GB": ("h200_sxm", "0.24.0"),
    "B200 180GB": ("b200_sxm", "0.24.0"),
    "L40S": ("l40s", "0.24.0"),
}
TERMS = ("dense GEMMs", "MoE GEMMs", "attention+state", "all-reduces", "overhead")


def rows_used() -> list[tuple[str, acc.DecodeRow, float, float]]:
    """(which figure, row, predicted s, front end s) of every batch-1 TTFT the two scripts judge."""
    rows = acc.load_decode_rows()
    out = []
    res = ho.leave_one_source_out(rows)
    for i, r in enumerate(res.rows):
        if ttft_is_prefill(r) and not math.isnan(r.ttft_s):
            out.append(("loso", r, float(res.held_out.ttft_s[i]), 0.0))
    held = held_out_rows(rows)
    front = dict(zip([r.record_id for r in held], frontend_s_of_rows(held), strict=True))
    for c in heldout.time_checks(held):
        if c["q"] == "TTFT" and c["batch"] == "1":
            r = c["row"]
            out.append(("heldout", r, (1.0 + c["planner"]) * r.ttft_s, front[r.record_id]))
    return out


def operator_terms(r: acc.DecodeRow, first_token_decode_step: bool = False) -> dict[str, float]:
    """The prefill's terms (seconds) with the shipped profile; with ``first_token_decode_step`` (the experiment
    ``acc.FIRST_TOKEN_FROM_DECODE_STEP`` turns on for the predictions), "first-token decode" where the release samples
    the first token in a decode step (then the prefill is of L - 1 tokens, none for L = 1)."""
    decode_first = first_token_decode_step and first_token_from_decode_step(r.engine, r.engine_version)
    tokens = float(r.input_len) - (1.0 if decode_first else 0.0)
    t = dict.fromkeys(TERMS, 0.0)
    if tokens >= 1.0:
        t.update({k: v for k, v in step_terms(r, prefill=True, batch=1.0, tokens=tokens).items() if k in TERMS})
    t["first-token decode"] = (
        step_terms(r, prefill=False, batch=1.0, tokens=float(r.input_len))["step"] if decode_first else 0.0
    )
    return t


class MeasuredGemms:
    """aiconfigurator's measured vLLM GEMMs (needs pandas: the aiconfigurator venv)."""

    def __init__(self) -> None:
        import pandas as pd
        import pyarrow  # noqa: F401  (pandas reads the parquet tables through it)

        self.pd = pd
        self.tables: dict[tuple[str, str], object] = {}

    def table(self, gpu: str, dtype: str):
        key = (gpu, dtype)
        if key not in self.tables:
            system, version = AIC_GEMM_TABLES[gpu]
            d = self.pd.read_parquet(AIC_DATA / system / "gemm" / "vllm" / version / "gemm_perf.parquet")
            d = d[d.gemm_dtype == dtype].groupby(["m", "n", "k"]).latency.min()
            self.tables[key] = d
        return self.tables[key]

    def latency_s(self, gpu: str, dtype: str, m: float, n: float, k: float) -> float:
        """Latency of one m x n x k GEMM, linear between the measured points around it in each of m, n and k."""
        t = self.table(gpu, dtype)
        ms = sorted(t.index.get_level_values("m").unique())
        total = 0.0
        for mm, wm in _between(ms, m):
            sub = t.xs(mm, level="m")
            ns, ks = sorted(sub.index.get_level_values("n").unique()), sorted(sub.index.get_level_values("k").unique())
            total += wm * sum(wn * wk * sub[(nn, kk)] for nn, wn in _between(ns, n) for kk, wk in _between(ks, k))
        return total * 1e-3

    def dense_gemms_s(self, r: acc.DecodeRow, model, gpu: str, tokens: float) -> float:
        """The layers' four GEMMs at ``tokens`` rows and the output head at one, summed over layers; NaN where the
        row's model or GPU is outside what is measured here."""
        if gpu not in AIC_GEMM_TABLES or model.moe or model.mla or model.sliding_window or tokens < 1:
            return math.nan
        dtype = "fp8" if (r.weight_precision or "").lower() == "fp8" else "bfloat16"
        g, h, d = r.gpus, model.hidden_size, model.head_dim
        shapes = [
            ((model.num_attention_heads + 2 * model.num_kv_heads) * d / g, h),
            (h, model.num_attention_heads * d / g),
            (2 * model.intermediate_size / g, h),
            (h, model.intermediate_size / g),
        ]
        layer = sum(self.latency_s(gpu, dtype, tokens, n, k) for n, k in shapes)
        head = self.latency_s(gpu, "bfloat16", 1, model.vocab_size / g, h)
        return model.num_layers * layer + head


def _between(points: list, x: float) -> list[tuple[float, float]]:
    """(point, weight) pairs that interpolate linearly at ``x`` (the end points beyond the range)."""
    if x <= points[0]:
        return [(points[0], 1.0)]
    if x >= points[-1]:
        return [(points[-1], 1.0)]
    if x in points:
        return [(x, 1.0)]
    lo = max(p for p in points if p < x)
    hi = min(p for p in points if p > x)
    w = (x - lo) / (hi - lo)
    return [(lo, 1.0 - w), (hi, w)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--first-token-decode-step",
        action="store_true",
        help="LMDeploy before 0.1.0a2: TTFT = prefill of L - 1 tokens + a decode step (not shipped)",
    )
    decode_first = ap.parse_args(argv).first_token_decode_step
    acc.FIRST_TOKEN_FROM_DECODE_STEP = decode_first  # for this process's predictions (rows_used)
    try:
        measured = MeasuredGemms() if AIC_DATA.is_dir() else None
    except ImportError:  # no pandas: the planner's terms alone
        measured = None
    cat = default_catalog()
    print(
        f"{'figure':<8}{'row':<14}{'GPU':<15}{'model':<24}{'TP':>3} {'prec':<5}{'tokens':>7}{'pub ms':>9}{'pred ms':>9}"
        f"{'err':>6} | {'GEMM':>7}{'aic GEMM':>9}{'MoE':>7}{'attn':>7}{'AR':>7}{'ovhd':>7}{'1st dec':>8}{'front':>7}"
    )
    for which, r, pred_s, front_s in rows_used():
        try:
            gpu = acc.resolve_gpu_name(r.gpu, cat)
            model = cat.model(acc.resolve_model_name(r.model, cat))
            t = operator_terms(r, decode_first)
        except PlannerError as exc:
            print(f"{which:<8}{r.record_id:<14}not predicted: {exc}")
            continue
        tokens = r.input_len - (1 if t["first-token decode"] else 0)
        aic = measured.dense_gemms_s(r, model, gpu, tokens) if measured else math.nan
        err = pred_s / r.ttft_s - 1.0
        ms = [t["dense GEMMs"], aic, t["MoE GEMMs"], t["attention+state"], t["all-reduces"], t["overhead"]]
        ms += [t["first-token decode"], front_s]
        cells = "".join(
            f"{x * 1e3:>{w}.1f}" if not math.isnan(x) else f"{'-':>{w}}"
            for x, w in zip(ms, (7, 9, 7, 7, 7, 7, 8, 7), strict=True)
        )
        print(
            f"{which:<8}{r.record_id:<14}{gpu[:14]:<15}{model.name[:23]:<24}{r.gpus:>3} {(r.weight_precision or '-')[:4]:<5}"
            f"{r.input_len:>7}{r.ttft_s * 1e3:>9.1f}{pred_s * 1e3:>9.1f}{err:>+6.0%} | {cells}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
