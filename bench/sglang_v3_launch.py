"""The planner's TTFT of a published one-request-at-a-time SGLang run of a DeepSeek-V3-architecture model
(docs/hypotheses/sglang-v3-eager-launch.md) at a given eager launch time per MoE layer, and, for an eager run, the
launch time that makes it the published median TTFT.

Sources (``--source``, default ``pr14918``):

- ``pr14918``: sgl-project/sglang pull request 14918's "before" table: DeepSeek-R1 (INT8 channel-wise, priced as its
  8-bit checkpoint) on 8 GPUs (read as H200) under SGLang's eager prompt step, 1,024 prompt / 16 output tokens,
  median TTFT 108.471 ms. Solves the per-MoE-layer launch time (the constant ``SGLANG_V3_HOST_MOE_LAYER_S``).
- ``pr13466-graphed``: sgl-project/sglang pull request 13466's "After" table (piecewise CUDA graph ON):
  Kimi-K2-Instruct-0905 (DeepSeek-V3 architecture, block FP8) on 8 GPUs (read as H200), 1,024 / 16 tokens, median
  TTFT 92.937 ms. A graphed prompt step: the eager floor must not apply, so the planner's TTFT must not move with the
  launch time; printed against the published figure (no solve).

    PYTHONPATH=. python bench/sglang_v3_launch.py                             # at 1.5 and 2.0 ms a MoE layer, solved
    PYTHONPATH=. python bench/sglang_v3_launch.py --source pr13466-graphed    # the graph path, not moved

Each value runs in a fresh process (the serving simulation keeps a run it has simulated).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


@dataclass(frozen=True)
class Source:
    """One published max-concurrency-1 run, as the fields of a load_public.csv row that differ from SGC016's."""

    record_id: str
    model: str
    engine_version: str  # the planner's release: 0.5.6 = eager prompt steps, 0.5.10 = piecewise-graphed
    input_len: int
    output_len: int
    num_prompts: int
    dataset: str
    ttft_median_ms: float  # published median TTFT, ms
    dense_layers: int  # layers before the first MoE layer (DeepSeek-R1 3, Kimi-K2 1)
    eager: bool  # whether the run's prompt steps ran eagerly (a launch time is solved only then)
    url: str


SOURCES = {
    "pr14918": Source(
        "PR14918", "deepseek-ai/DeepSeek-R1-0528", "0.5.6", 1024, 16, 16,
        "random (--random-input-len 1024 --random-output-len 16 --random-range-ratio 1.0)", 108.471, 3, True,
        "https://github.com/sgl-project/sglang/pull/14918",
    ),
    "pr13466-graphed": Source(
        "PR13466", "moonshotai/Kimi-K2-Instruct-0905", "0.5.10", 1024, 16, 16,
        "random (--random-input-len 1024 --random-output-len 16 --random-range-ratio 1.0)", 92.937, 1, False,
        "https://github.com/sgl-project/sglang/pull/13466",
    ),
}  # fmt: skip

#: PR 14918's "before" table, max_concurrency 1: median TTFT, ms (kept for callers of the first version).
PUBLISHED_TTFT_MS = SOURCES["pr14918"].ttft_median_ms

#: Dense-layer launch time the planner keeps (Llama-3-8B's, 9.28 ms over 32 layers), ms.
DENSE_LAYER_MS = 9.28 / 32


def one(layer_s: float, path: Path) -> float:
    """The planner's median TTFT (ms) of the run in ``path`` with MLA + q-LoRA MoE layers launching ``layer_s``."""
    from load_validation import load_decode_rows, validate_load

    import planner.serving.benchmark as bench

    bench.SGLANG_MLA_HOST_MOE_LAYER_S = layer_s
    checks = validate_load(load_decode_rows(path)).checks
    c = next(c for c in checks if c.quantity == "ttft_median_ms")
    return c.published * (1 + c.error)


def write_run(path: Path, source: Source = SOURCES["pr14918"]) -> None:
    """The run as a load_public.csv row: the cookbook's DeepSeek-R1 SGLang 0.5.6 row (SGC016: 8 GPUs, TP 8, block
    FP8, max concurrency 1) with the source's model, GPU (H200), release line, lengths and TTFT."""
    from planner.accuracy.predict import reference_dir

    d = pd.read_csv(reference_dir() / "load_public.csv")
    r = d[d.record_id == "SGC016"].copy()
    r["record_id"], r["source_group"], r["model"] = source.record_id, f"sglang-{source.record_id.lower()}", source.model
    r["gpu"], r["engine_version"] = "H200 SXM 141GB", source.engine_version
    r["input_len"], r["output_len"], r["num_prompts"] = source.input_len, source.output_len, source.num_prompts
    r["dataset"] = source.dataset
    for c in ("ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms"):
        r[c] = float("nan")
    r["ttft_median_ms"] = source.ttft_median_ms
    r.to_csv(path, index=False)


def solve(ttft_ms: dict[float, float], source: Source) -> tuple[float, float, float]:
    """From the planner's TTFT at 1.5 and 2.0 ms a MoE layer: (MoE layers on the host-bound slope, ms of TTFT outside
    the launch floor, the launch time a MoE layer (ms) that makes the planner's TTFT the published one)."""
    per_layer = (ttft_ms[2.0e-3] - ttft_ms[1.5e-3]) / 0.5  # ms of TTFT per ms of launch a MoE layer: the MoE layers
    dense = source.dense_layers * DENSE_LAYER_MS
    rest = ttft_ms[1.5e-3] - per_layer * 1.5 - dense  # outside the launch floor
    return per_layer, rest, (source.ttft_median_ms - rest - dense) / per_layer


def main(argv: list[str]) -> int:
    import argparse
    import tempfile

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", choices=sorted(SOURCES), default="pr14918")
    p.add_argument("--one", type=float, help=argparse.SUPPRESS)  # child: one value
    a = p.parse_args(argv[1:])
    source = SOURCES[a.source]
    path = Path(tempfile.gettempdir()) / f"{a.source}.csv"
    if a.one is not None:
        print(one(a.one, path))
        return 0
    write_run(path, source)
    ttft = {}
    for v in (1.5e-3, 2.0e-3):
        cmd = [sys.executable, __file__, "--source", a.source, "--one", str(v)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        ttft[v] = float(out.stdout.strip().splitlines()[-1])
        print(f"{v * 1e3:.2f} ms a MoE layer: TTFT {ttft[v]:.2f} ms (published {source.ttft_median_ms} ms)")
    if not source.eager:
        moved = ttft[2.0e-3] - ttft[1.5e-3]
        print(f"graphed: the launch time moves the TTFT by {moved:.2f} ms; predicted / published - 1 = "
              f"{ttft[1.5e-3] / source.ttft_median_ms - 1:+.1%}")  # fmt: skip
        return 0
    per_layer, rest, solved = solve(ttft, source)
    print(f"host-bound slope {per_layer:.2f} MoE layers; outside the floor {rest:.2f} ms; solved {solved:.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
