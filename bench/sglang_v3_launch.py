"""The planner's TTFT of sgl-project/sglang pull request 14918's "before" run (docs/hypotheses/sglang-v3-eager-launch.md):
DeepSeek-R1 (INT8 channel-wise, priced as its 8-bit checkpoint) on 8 x H200 under SGLang's eager prompt step, 1,024
prompt / 16 output tokens, one request at a time, at a given eager launch time per MoE layer; and the launch time
that makes it the published 108.471 ms median TTFT.

    PYTHONPATH=. python bench/sglang_v3_launch.py            # at 1.5 ms and 2.0 ms a MoE layer, and the solved value

Each value runs in a fresh process (the serving simulation keeps a run it has simulated).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

#: PR 14918's "before" table, max_concurrency 1: median TTFT, ms.
PUBLISHED_TTFT_MS = 108.471


def one(layer_s: float, path: Path) -> float:
    """The planner's median TTFT (ms) of the run in ``path`` with MLA + q-LoRA MoE layers launching ``layer_s``."""
    from load_validation import load_decode_rows, validate_load

    import planner.serving.benchmark as bench

    bench.SGLANG_MLA_HOST_MOE_LAYER_S = layer_s
    checks = validate_load(load_decode_rows(path)).checks
    c = next(c for c in checks if c.quantity == "ttft_median_ms")
    return c.published * (1 + c.error)


def write_run(path: Path) -> None:
    """The run as a load_public.csv row: the cookbook's DeepSeek-R1 SGLang 0.5.6 row (SGC016) with PR 14918's GPU,
    release line, lengths and concurrency."""
    from planner.accuracy.predict import reference_dir

    d = pd.read_csv(reference_dir() / "load_public.csv")
    r = d[d.record_id == "SGC016"].copy()
    r["record_id"], r["source_group"] = "PR14918", "sglang-pr-14918"
    r["gpu"], r["engine_version"] = "H200 SXM 141GB", "0.5.6"
    r["input_len"], r["output_len"], r["num_prompts"] = 1024, 16, 16
    r["dataset"] = "random (--random-input-len 1024 --random-output-len 16 --random-range-ratio 1.0)"
    for c in ("ttft_p99_ms", "tpot_median_ms", "tpot_p99_ms", "itl_median_ms", "itl_p99_ms"):
        r[c] = float("nan")
    r["ttft_median_ms"] = PUBLISHED_TTFT_MS
    r.to_csv(path, index=False)


def main(argv: list[str]) -> int:
    import tempfile

    if len(argv) == 3 and argv[1] == "--one":  # child: one value
        print(one(float(argv[2]), Path(tempfile.gettempdir()) / "pr14918.csv"))
        return 0
    path = Path(tempfile.gettempdir()) / "pr14918.csv"
    write_run(path)
    ttft = {}
    for v in (1.5e-3, 2.0e-3):
        out = subprocess.run([sys.executable, __file__, "--one", str(v)], check=True, capture_output=True, text=True)
        ttft[v] = float(out.stdout.strip().splitlines()[-1])
        print(f"{v * 1e3:.2f} ms a MoE layer: TTFT {ttft[v]:.2f} ms")
    per_layer = (ttft[2.0e-3] - ttft[1.5e-3]) / 0.5  # ms of TTFT per ms of launch a MoE layer: the MoE layers
    rest = ttft[1.5e-3] - per_layer * 1.5 - 3 * 9.28 / 32  # outside the launch floor (DeepSeek-R1's 3 dense layers)
    solved = (PUBLISHED_TTFT_MS - rest - 3 * 9.28 / 32) / per_layer
    print(f"host-bound slope {per_layer:.2f} MoE layers; outside the floor {rest:.2f} ms; solved {solved:.4f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
