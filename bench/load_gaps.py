"""Evidence for the loaded-run gaps that are not a reading of the run (issue 22: docs/model.md, "What is left").

    python bench/load_gaps.py

1. Closed-loop ITL p99 (gpustack, Qwen3-8B on one H100, ShareGPT, 1-8 in flight): each run simulated with outputs
   all at the run's mean and with vLLM's published ShareGPT sample's outputs scaled to it (as validated,
   ``planner.accuracy.datasets``). Equal outputs keep the closed loop in lockstep (the C requests finish in one step
   and the next C prefill together, so no decode ever shares a step with a prompt); with the sample's spread a prompt
   joins the decodes' step, but the step model prices 233 prompt tokens of an 8B model at well under a millisecond
   beyond the decode step, so the p99 stays about one step.
2. TensorRT-LLM all-at-once runs: simulated and published median TPOT, their ratio and the sequences in flight.
"""

from __future__ import annotations

from planner.accuracy.datasets import sharegpt_requests
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.under_load import _replica, sharegpt_prompts
from planner.serving.load import FRONTEND_S, fixed_lengths, latency_under_load

CLOSED_LOOP = ("LD085", "LD086", "LD068", "LD087", "LD069", "LD070")


def main() -> int:
    rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    print("1. closed loop: ITL p50 / p99 ms, simulated with equal outputs, with the sample's outputs; published")
    for rid in CLOSED_LOOP:
        r = rows[rid]
        prompts = sharegpt_prompts(r, r.num_prompts) or [r.input_len] * r.num_prompts
        cells = []
        for outs in (
            [r.output_len] * r.num_prompts,
            [o for _, o in sharegpt_requests(r.num_prompts, None, r.output_len)],
        ):
            res = latency_under_load(
                _replica(r, None, None, None), r.input_len, r.output_len, concurrency=r.batch,
                lengths=list(zip(prompts, outs, strict=True)), frontend_s=FRONTEND_S,
            )  # fmt: skip
            cells.append(f"{res.itl_s.p50 * 1e3:5.1f} / {res.itl_s.p99 * 1e3:5.1f}")
        published = f"{r.itl_median_s * 1e3:5.1f} / {r.itl_p99_s * 1e3:5.1f}"
        print(f"  {rid} {r.engine:<13} C={r.batch}  " + "   ".join(cells) + f"   published {published}")
    print("\n2. TensorRT-LLM, all at once: median TPOT ms simulated, published, published / simulated; peak in flight")
    for r in rows.values():
        if r.engine != "tensorrt-llm" or r.batch:
            continue
        lengths = fixed_lengths(r.input_len, r.output_len, r.num_prompts)
        res = latency_under_load(_replica(r, None, None, None), r.input_len, r.output_len, lengths=lengths)
        sim, pub = res.tpot_s.p50 * 1e3, r.tpot_median_s * 1e3
        print(
            f"  {r.record_id} {r.model.split('/')[-1][:18]:<18} {r.gpu.split('(')[0].strip():<15} "
            f"{r.input_len:>6}/{r.output_len:<4} {sim:7.1f} {pub:7.1f}  x{pub / sim:5.2f}  {res.peak_running:5}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
