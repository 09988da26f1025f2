"""The pre-AITER ROCm prompt step (h-amdttft, docs/hypotheses/amd-ttft.md): sgl-project/sglang pull request 3237's
DeepSeek-V3 prefill on 8 x MI300X against the planner's, the FLOP factor that closes it, and what the factor does to
prompt steps of other shapes (no judged row is read: the shapes are named on the command line).

    PYTHONPATH=. python bench/rocm_pre_aiter_prefill.py                  # the derivation
    PYTHONPATH=. python bench/rocm_pre_aiter_prefill.py --prompts 3200   # + the step ratio at 1-128 prompts of 3,200

The measured prefill: pull request 3237's comment of 2025-02-24, ``bench_one_batch --batch-size 4 --input 2048 --output
256`` (SGLang ROCm main, late February 2025: no AITER), "Decode. median latency: 0.03850 s" and "Total. latency:
10.656 s"; the total is one prefill plus 255 decode steps (sglang 0.4.3 ``bench_one_batch.py`` l.351-373), so the
prefill took 10.656 - 255 x 0.03850 = 0.8385 s (the fused-MLA run: 9.970 - 255 x 0.03581 = 0.8384 s). The planner's
step is priced with SGLang's profile and the shipped pre-AITER Triton-MoE term (``MOE_LAYER_COSTS``' rocm-triton-moe),
as a published SGLang 0.4.3 row on MI300X gets it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import planner  # noqa: E402
from planner.engines import profiles  # noqa: E402

#: sgl-project/sglang pull request 3237's run with the fused MLA decode (SGLANG_ROCM_FUSED_DECODE_MLA=1): the same
#: prefill from a second total (a check, not used for the constant).
FUSED_TOTAL_S, FUSED_DECODE_MEDIAN_S = 9.970, 0.03581
#: AMD's AITER announcement (rocm.blogs.amd.com, "AITER: AI Tensor Engine For ROCm", March 2025): AITER's speed-ups
#: over the kernels it replaced, "up to": block-scale GEMM 2x, block-scale fused MoE 3x, MHA prefill 14x.
AITER_UP_TO = {"dense GEMMs": 2.0, "MoE GEMMs": 3.0, "attention+state": 14.0}


def pre_aiter_sglang():
    """SGLang's profile as a published SGLang 0.4.3 row on an AMD GPU gets its MoE term (rocm-triton-moe, shipped)."""
    return profiles.with_moe_layer_costs(profiles.ENGINES["sglang"], "sglang", "0.4.3", "AMD")


def prefill_s(prompts: float, tokens: float, factor: float = 1.0, engine=None) -> float:
    """The planner's prefill of ``prompts`` x ``tokens`` of DeepSeek-V3 on 8 x MI300X, the prefill FLOP factor times
    ``factor``."""
    e = engine or pre_aiter_sglang()
    e = e.with_(prefill_flop_efficiency=e.prefill_flop_efficiency * factor)
    return float(
        planner.prefill("MI300X", "DeepSeek-V3", tokens, batch=prompts, gpus=8, engine=e, check_fit=False).ttft_s
    )


def solve(target_s: float, prompts: float = 4, tokens: float = 2048) -> float:
    """The factor on the prefill FLOP factor that makes the planner's prefill ``target_s`` (bisection)."""
    lo, hi = 0.01, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if prefill_s(prompts, tokens, mid) > target_s else (lo, mid)
    return (lo + hi) / 2


def terms(prompts: float, tokens: float, factor: float = 1.0) -> dict[str, float]:
    """``bench/step_operators.facts_step_terms`` of the same prefill."""
    from dataclasses import replace

    from step_operators import facts_step_terms

    from planner.deploy import deploy
    from planner.options import DecodeOptions, Options

    e = pre_aiter_sglang()
    o = Options.read(DecodeOptions, dict(gpus=8, batch=1, engine=e, check_fit=False), "decode_step")
    f = deploy("MI300X", "DeepSeek-V3", int(tokens), o).facts
    lim = replace(f.limits, prefill_flop_efficiency=f.limits.prefill_flop_efficiency * factor)
    return facts_step_terms((f.gpu, f.model, f.precision, lim, 8.0), prefill=True, batch=prompts, tokens=tokens)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=float, help="also the step ratio at 1-128 prompts of this many tokens")
    a = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    measured = profiles.ROCM_PRE_AITER_PREFILL_MEASURED_S
    fused = FUSED_TOTAL_S - profiles.ROCM_PRE_AITER_PREFILL_DECODE_STEPS * FUSED_DECODE_MEDIAN_S
    base = terms(4, 2048)
    print(f"measured prefill (PR 3237, 4 x 2,048): {measured * 1e3:.1f} ms (fused-MLA run: {fused * 1e3:.1f} ms)")
    print("planner: " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in base.items() if not k.startswith("_")) + " ms")
    factor = solve(measured)
    solved = terms(4, 2048, factor)
    print(f"solved factor {factor:.4f} (each compute term x{1 / factor:.2f}): step {solved['step'] * 1e3:.1f} ms")
    bound = base["step"] + sum(base[k] * (x - 1) for k, x in AITER_UP_TO.items())
    print(
        f"check, AITER's 'up to' speed-ups on the planner's terms (GEMM 2x, MoE 3x, attention 14x): {bound * 1e3:.1f} ms"
    )
    if a.prompts:
        for k in (1, 2, 4, 8, 16, 32, 64, 128):
            off, on = prefill_s(k, a.prompts), prefill_s(k, a.prompts, profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR)
            print(f"{k:>4} x {a.prompts:,.0f}: {off * 1e3:9.1f} -> {on * 1e3:9.1f} ms (x{on / off:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
