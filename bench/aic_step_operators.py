"""aiconfigurator 0.12.0's own decode and prefill steps by operator, beside ``bench/step_operators.py``'s (issue 21).

    /work/venvs/aic/bin/python bench/aic_step_operators.py deepseek-ai/DeepSeek-R1 h200_sxm vllm --tp 8 \\
        --moe-tp 8 --gemm fp8_block --decode 8 64 256 1000 --isl 127 --osl 4 --prefill 64
    /work/venvs/aic/bin/python bench/aic_step_operators.py Qwen/Qwen3-235B-A22B h100_sxm vllm --tp 4 --moe-tp 4 \\
        --gemm fp8 --moe fp8_block --decode 984 --isl 218 --osl 197 --prefill 75

Run by the aiconfigurator venv's Python (it imports aiconfigurator only, like ``bench/heldout_aic.py``). The model is
compiled as ``aiconfigurator_core.sdk.engine.EngineHandle.compile`` does for its CLI; a decode step of N sequences is
its ``decode_step_per_op(N, isl, osl)`` and a prefill step of B prompts the context ops of ``run_static_per_op(B,
isl, osl=2)``. Each operator's time is printed in microseconds per step with the source aiconfigurator gives it
("silicon": its measured tables; "empirical": its own bytes / bandwidth estimate, e.g. add_norm; "mixed": both); an
all-reduce op stands for its layer count of calls a step (x 2 for ``generation_tp_allreduce``, two a layer,
``sdk/models/deepseek.py``). Pass ``--moe``
where the checkpoint's experts are quantized: without ``moe_quant_mode`` aiconfigurator times a bf16 checkpoint
path's experts from its bf16 rows (Qwen3-235B-FP8 on 4 x H100 at 984 sequences: 53.7 ms bf16 against 40.0 ms
fp8-block). docs/accuracy.md ("The all-reduce reading, re-checked by operator") states the figures and what they
show against the planner's steps.
"""

from __future__ import annotations

import argparse
import logging


def handle(model: str, system: str, backend: str, tp: int, moe_tp: int | None, gemm: str | None, moe: str | None,
           kv: str | None):  # fmt: skip
    """aiconfigurator's compiled engine for the model on ``tp`` GPUs of ``system`` (quant modes as its CLI takes them)."""
    from aiconfigurator_core.sdk.engine import EngineHandle

    kw = {"tp_size": tp, "gemm_quant_mode": gemm, "kvcache_quant_mode": kv}
    if moe_tp:
        kw["moe_tp_size"] = moe_tp
    if moe:
        kw["moe_quant_mode"] = moe
    return EngineHandle.compile(model, system, backend, **kw)


def decode_ops(engine, sequences: int, isl: int, osl: int) -> list[tuple[str, float, str]]:
    """(op name, microseconds a decode step, source) of one decode step of ``sequences``, slowest first."""
    ops = engine._engine.decode_step_per_op(int(sequences), int(isl), int(osl), 1.0)
    return sorted(((name, ms * 1e3, src) for name, ms, _, src in ops), key=lambda o: -o[1])


def prefill_ops(engine, prompts: int, isl: int) -> list[tuple[str, float, str]]:
    """(op name, microseconds, source) of the prefill step of ``prompts`` prompts of ``isl`` tokens, slowest first."""
    context, _ = engine.run_static_per_op(batch_size=int(prompts), isl=int(isl), osl=2)
    return sorted(((name, ms * 1e3, src) for name, ms, _, src in context), key=lambda o: -o[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="a model path aiconfigurator ships a config for (e.g. Qwen/Qwen3-32B)")
    ap.add_argument("system", help="aiconfigurator's system name (h100_sxm, h200_sxm, b200_sxm, a100_sxm, ...)")
    ap.add_argument("backend", choices=("vllm", "sglang", "trtllm"))
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--moe-tp", type=int, default=None, help="experts split like the rest (the engines' default)")
    ap.add_argument("--gemm", default=None, help="gemm_quant_mode (fp8, fp8_block, ...)")
    ap.add_argument("--moe", default=None, help="moe_quant_mode (fp8_block, ...)")
    ap.add_argument("--kv", default=None, help="kvcache_quant_mode (fp8)")
    ap.add_argument("--decode", type=int, nargs="*", default=[], help="decode steps of these many sequences")
    ap.add_argument("--prefill", type=int, nargs="*", default=[], help="prefill steps of these many prompts")
    ap.add_argument("--isl", type=int, default=1024)
    ap.add_argument("--osl", type=int, default=128)
    a = ap.parse_args()
    logging.disable(logging.WARNING)
    engine = handle(a.model, a.system, a.backend, a.tp, a.moe_tp, a.gemm, a.moe, a.kv)
    steps = [(f"decode {n} sequences", decode_ops(engine, n, a.isl, a.osl)) for n in a.decode]
    steps += [(f"prefill {n} x {a.isl} tokens", prefill_ops(engine, n, a.isl)) for n in a.prefill]
    for title, ops in steps:
        print(f"{a.model} on {a.tp} x {a.system} ({a.backend}), {title}: {sum(us for _, us, _ in ops) / 1e3:.2f} ms")
        for name, us, src in ops:
            print(f"  {name:34s} {us:10.1f} us  {src}")


if __name__ == "__main__":
    main()
