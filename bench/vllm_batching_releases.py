"""vLLM's batching defaults by release, tried on the held-out rows (issue 21 item 3, s107; not shipped).

Prints the held-out figures (``bench/heldout.py``'s ``time_checks``, to 0.01%) with today's profiles and with each vLLM
row's release defaults (``planner.engines.profiles.with_release_batching``: V0 256 sequences, 0.8.0-0.8.3 1,024 on every
GPU, 0.8.4 by H100/H200 name, 0.8.5 by 70 GiB, 0.9.0+ as shipped), every figure that moved, and gpustack's Qwen3-8B
A100 rows (vLLM v0.9.2) at v0.9.2's A100 defaults (2,048 tokens / 256 sequences) beside 8,192 / 1,024.

    PYTHONPATH=. python bench/vllm_batching_releases.py
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

import heldout  # noqa: E402

from planner.accuracy import predict  # noqa: E402
from planner.accuracy.fit import held_out_rows  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.engines.profiles import with_release_batching, with_release_kernels  # noqa: E402

QUANTITIES = ("TPOT", "TTFT", "static-batch throughput", "serving throughput")


def with_release_kernels_and_batching(profile, engine: str, version: str):
    """The shipped ``with_release_kernels``, then the experiment ``with_release_batching`` (not shipped: docs/history.md,
    s107): the profile a row gets when each vLLM row runs with its release's batching defaults."""
    return with_release_batching(with_release_kernels(profile, engine, version), engine, version)


def use_release_batching(on: bool = True) -> None:
    """Every later prediction in this process gives each vLLM row its release's batching defaults (``on``), or not:
    ``planner.accuracy.predict`` looks a row's release up through its own name ``with_release_kernels``, which
    ``under_load`` shares."""
    predict.with_release_kernels = with_release_kernels_and_batching if on else with_release_kernels


def checks(rows, release_batching: bool) -> list[dict]:
    """``heldout.time_checks`` with (True) or without each vLLM row's release batching defaults."""
    use_release_batching(release_batching)
    try:
        return heldout.time_checks(rows)
    finally:
        use_release_batching(False)


def summary(cs: list[dict], quantity: str) -> str:
    errs = [abs(c["planner"]) for c in cs if c["q"] == quantity and not math.isnan(c["planner"])]
    return f"{statistics.median(errs):6.2%} / {max(errs):7.1%} ({len(errs)})"


def gpustack_a100_lines() -> list[str]:
    """gpustack's Qwen3-8B A100 rows predicted at 2,048 / 256 (v0.9.2's rule for a device named A100) and 8,192 / 1,024."""
    rows = [r for r in predict.load_decode_rows() if r.record_id.startswith("GPUSTACK-Q0") and "A100" in r.gpu]
    front = frontend_s_of_rows(rows)
    out = []
    for i, r in enumerate(rows):
        figures = []
        for tokens, seqs in ((2048, 256), (8192, 1024)):
            eng = predict._profile_for(r, None).with_(max_num_batched_tokens=tokens, max_num_seqs=seqs)
            p = predict.predict_decode_rows([r], engine=eng, frontend_s=[front[i]])
            figures.append((p.tpot_s[0] / r.tpot_s - 1, p.ttft_s[0] / r.ttft_s - 1))
        if not math.isnan(figures[0][0]):
            (t256, f256), (t1024, f1024) = figures
            out.append(
                f"  {r.record_id}  TPOT {r.tpot_s * 1e3:6.1f} ms: {t256:+5.0%} at 256, {t1024:+5.0%} at 1,024   "
                f"TTFT {r.ttft_s * 1e3:7.0f} ms: {f256:+5.0%} at 256, {f1024:+5.0%} at 1,024"
            )
    return out


def main() -> None:
    held = held_out_rows(predict.load_decode_rows())
    before, after = checks(held, False), checks(held, True)
    print("held-out median / worst |error| (figures): shipped -> each vLLM row's release defaults")
    for q in QUANTITIES:
        print(f"  {q:24s} {summary(before, q)}  ->  {summary(after, q)}")
    print("\nfigures that moved (signed error):")
    for b, a in zip(before, after, strict=True):
        pb, pa = b["planner"], a["planner"]
        if math.isnan(pb) != math.isnan(pa) or (not math.isnan(pb) and abs(pb - pa) > 1e-4):
            r = b["row"]
            print(
                f"  {r.record_id:13s} {b['q']:19s} {pb:+7.1%} -> {pa:+7.1%}  {r.gpu[:14]:14s} {r.engine_version[:40]}"
            )
    print("\ngpustack Qwen3-8B on one A100, vLLM v0.9.2, 1,000 ShareGPT prompts at once (not a fit: a diagnostic):")
    print("\n".join(gpustack_a100_lines()))


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    main()
