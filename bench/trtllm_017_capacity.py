"""TensorRT-LLM 0.17's KV capacity on dstack's DeepSeek-R1 rows (h-tpot; a diagnostic, nothing shipped).

    PYTHONPATH=. python bench/trtllm_017_capacity.py

(a) Little's law on the nine TensorRT-LLM 0.17 rows (DSTK-025..030, 043..045): sequences decoding at once =
request throughput x TPOT x (output - 1), and the KV tokens they hold = that x (prompt + output) (the engine's
``GUARANTEED_NO_EVICT`` reserves both). (b) The planner's TPOT and TTFT as they are, and with the row's memory share
(``DecodeRow.server_memory_share``) set so that its KV cache holds (in) the four 128-in-flight rows' mean implied
capacity, or (LOO) the mean of the other three: the value is taken from these rows, so the figures say whether the
capacity is the mechanism, not how well a fitted term would do. ``docs/hypotheses/
range-ratio-class-and-trtllm-017-capacity.md`` holds the hypothesis and the result.
"""

from __future__ import annotations

import csv
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import planner.serving.benchmark as benchmark  # noqa: E402
from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.fit import held_out_rows  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402

AT_128 = ("DSTK-030", "DSTK-043", "DSTK-044", "DSTK-045")


def main() -> None:
    published = {r["record_id"]: r for r in csv.DictReader((acc.reference_dir() / "perf_public.csv").open())}
    held = held_out_rows(acc.load_decode_rows())
    frontend = dict(zip((r.record_id for r in held), frontend_s_of_rows(held), strict=True))
    rows = sorted(
        (r for r in held if r.record_id.startswith("DSTK") and r.engine == "tensorrt-llm"),
        key=lambda r: (r.batch, r.output_len),
    )
    print("(a) Little's law: decoding = request rate x TPOT x (out - 1); KV tokens = decoding x (in + out)")
    implied = {}
    for r in rows:
        rate = float(published[r.record_id]["request_throughput_req_s"])
        decoding = rate * r.tpot_s * (r.output_len - 1)
        implied[r.record_id] = decoding * (r.input_len + r.output_len)
        print(
            f"  {r.record_id} {r.batch:>4g} in flight, {r.output_len:>5g} out: {rate:.4f} req/s, "
            f"{decoding:5.1f} decoding, {implied[r.record_id] / 1e3:4.0f}k KV tokens"
        )
    mean = statistics.mean(implied[k] for k in AT_128)
    spread = [implied[k] / mean - 1 for k in AT_128]
    print(f"  at 128 in flight: mean {mean / 1e3:.0f}k tokens, {min(spread):+.1%} .. {max(spread):+.1%}")

    seen: dict[str, float] = {}
    memory_by_budget = benchmark._memory_by_budget

    def recording(*args, **kwargs):  # the KV tokens the planner gives the row's group
        result = memory_by_budget(*args, **kwargs)
        seen["kv"] = float(result[2][0])
        return result

    benchmark._memory_by_budget = recording

    def predict(r, share=None):
        row = r if share is None else dataclasses.replace(r, server_memory_share=share)
        p = acc.predict_decode_rows([row], frontend_s=[frontend[r.record_id]])
        return p.tpot_s[0] / r.tpot_s - 1, p.ttft_s[0] / r.ttft_s - 1, seen["kv"]

    def share_holding(r, tokens):  # bisection: the memory share whose KV cache holds ``tokens``
        lo, hi = 0.05, 0.9
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if predict(r, mid)[2] < tokens else (lo, mid)
        return (lo + hi) / 2

    print("\n(b) planner as is | KV set to the 128-in-flight mean (in) | to the other three's mean (LOO)")
    for r in rows:
        tpot, ttft, kv = predict(r)
        line = f"  {r.record_id}: KV {kv / 1e3:4.0f}k TPOT {tpot:+6.1%} TTFT {ttft:+6.1%}"
        loo = statistics.mean(implied[k] for k in AT_128 if k != r.record_id)
        for label, tokens in (("in", mean), ("LOO", loo)):
            tpot, ttft, kv = predict(r, share_holding(r, tokens))
            line += f" | {label}: KV {kv / 1e3:4.0f}k TPOT {tpot:+6.1%} TTFT {ttft:+6.1%}"
        print(line)
    benchmark._memory_by_budget = memory_by_budget


if __name__ == "__main__":
    main()
