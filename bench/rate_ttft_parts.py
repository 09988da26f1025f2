"""vLLM at a request rate: which part of the simulated TTFT the miss is in (issue 22).

    PYTHONPATH=. python bench/rate_ttft_parts.py

The vLLM runs at a request rate in ``catalogs/reference/load_public.csv`` (surajssd's 0.8.3 on 8 x A100 40GB, the
H200 report's 0.14.1, the sglang v0.3.0 blog's 0.6.0), their median TTFT predicted as ``bench/load_validation.py``
predicts it (each source with the front end fitted on the other sources, ``planner.accuracy.frontend``), then with one
part of the run changed at a time: no front end; the chunked-prefill budget at 2,048 or 8,192 tokens for every row;
every prompt read cold (no prefix cache); async scheduling off; every request at the run's mean lengths instead of
the dataset's; a warm prompt computing vLLM's own last 1-16 tokens (``KVCacheManager.get_computed_blocks``: whole
16-token blocks up to P - 1 hit) instead of the share at the mean prompt. One line per reading: the signed median of
predicted / published - 1 over the figures, then each run's.

What it showed (s88, docs/model.md "What is left"): as shipped +28.4%; no front end -9.2% (H200 -9% to +2%); budget
2,048 or 8,192 +28.4%; cold +50.0%; async off +1.6%; mean lengths +30.8%; vLLM's per-prompt hit +29.5% (A100 LD002 / LD003 +24% / +11% -> +28% / +18%: ~8.5
tokens a warm prompt on average, against ~5 at the share of the mean prompt). The miss is
the front end each source is given; async scheduling is what vLLM 0.14.1 does (``vllm/v1/engine/core.py``
``step_with_batch_queue``), so it stays.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import planner.serving.state as state  # noqa: E402
from planner.accuracy import under_load  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.accuracy.published import DecodeRow, load_decode_rows, reference_dir  # noqa: E402
from planner.serving.load import VLLM_BLOCK_TOKENS, simulated_run  # noqa: E402

#: The simulation's own rule (the share at the mean prompt), kept before ``main`` swaps in vLLM's per prompt.
SHARED_NEED = state.cached_need


def rated_vllm_rows() -> list[DecodeRow]:
    """The shipped vLLM runs at a finite request rate."""
    rows = load_decode_rows(reference_dir() / "load_public.csv")
    return [r for r in rows if r.engine == "vllm" and r.request_rate is not None and math.isfinite(r.request_rate)]


def vllm_cached_need(prompt: int, cached_fraction: float, block: int = VLLM_BLOCK_TOKENS) -> int:
    """A warm prompt's computed tokens as vLLM V1 counts them: P - floor((P - 1) / B) x B (1 to B); a prompt not
    read warm as ``state.cached_need`` does."""
    return prompt - (prompt - 1) // block * block if cached_fraction > 0 else SHARED_NEED(prompt, 0.0)


def line(label: str, rows: list[DecodeRow], predict: Callable[[DecodeRow, float], float]) -> str:
    fronts = frontend_s_of_rows(rows)
    errors = [predict(r, f) / (r.ttft_median_s * 1e3) - 1 for r, f in zip(rows, fronts, strict=True)]
    each = " ".join(f"{r.record_id} {e:+.0%}" for r, e in zip(rows, errors, strict=True))
    return f"{label:<40}{statistics.median(errors):+7.1%}   {each}"


def main() -> int:
    rows = rated_vllm_rows()

    def median(row: DecodeRow, front_s: float) -> float:
        return under_load.predict_percentiles(row, frontend_s=front_s)["ttft_median_ms"]

    print(f"{'reading':<40}{'signed':>7}   each run (median TTFT predicted / published - 1)")
    print(line("as shipped (others' front end)", rows, median))
    print(line("no front end", rows, lambda r, f: median(r, 0.0)))
    for budget in (2048, 8192):
        print(
            line(
                f"budget {budget} tokens", rows, lambda r, f, b=budget: median(replace(r, max_num_batched_tokens=b), f)
            )
        )
    print(line("every prompt cold", rows, lambda r, f: median(replace(r, prompts_cached=False), f)))
    print(line("async scheduling off", rows, lambda r, f: median(replace(r, async_scheduling=False), f)))
    dataset = under_load.run_requests
    under_load.run_requests = lambda r: None  # the run's own mean lengths
    try:
        print(line("every request at the run's means", rows, median))
    finally:
        under_load.run_requests = dataset
    state.cached_need = vllm_cached_need
    simulated_run.cache_clear()  # runs are memoized by their key, which does not name the rule swapped in
    try:
        print(line("warm: vLLM's last 1-16 tokens a prompt", rows, median))
    finally:
        state.cached_need = SHARED_NEED
        simulated_run.cache_clear()
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    sys.exit(main())
