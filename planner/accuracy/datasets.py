"""The requests a benchmark's named dataset sends, where a published run lists them: ShareGPT as vLLM samples it.

A benchmark's mean TPOT is a mean over requests of each request's (latency - TTFT) / (output - 1). When every
prompt is sent at once, a request with a short output decodes only while the server is full and still prefilling
the rest, and the run ends with a few long outputs decoding at a small batch; lengths all at the run's means hide
both (gpustack's 1,000-prompt ShareGPT runs: the planner's equal-length simulation gave TPOT about -40%).

``SHAREGPT_SAMPLE_FILE``: the (prompt, output) tokens of the first 200 requests of vLLM's ShareGPT sample at its
default seed (``vllm bench serve --dataset-name sharegpt``, ``benchmark_serving.py``: the dataset shuffled with
seed 0, requests kept that pass the length filter), Llama 3 tokenizer, from one published result file that lists
each request's ``input_lens`` and ``output_lens`` (vLLM 0.8.3, Llama-3.3-70B-Instruct, 200 prompts at once; its
totals 42,659 prompt and 42,398 generated tokens; the prompts equal the first 200 of
``sharegpt_vllm_seed0_prompts.csv`` from another run). Outputs are what that server generated, the dataset's
answer length capped by the model's end of sequence (``--ignore-eos`` not set, as in the runs predicted).

Assumptions, stated: a run of more than 200 prompts sends this list again from the start (the sample's first 200
stand for the rest: its means, 213 / 212 tokens, are those of gpustack's 1,000-prompt runs within 7%); another
tokenizer scales every request by the run's stated mean over the sample's (the shape is kept, the means are the
run's).
"""

from __future__ import annotations

import math
from functools import cache

from planner.accuracy.published import DecodeRow, read_csv_rows, reference_dir

#: vLLM's seed-0 ShareGPT sample, the first 200 requests with their generated lengths (module docstring).
SHAREGPT_SAMPLE_FILE = "sharegpt_vllm_seed0_requests.csv"


@cache
def sharegpt_sample() -> tuple[tuple[int, int], ...]:
    """(prompt, output) tokens of each request of ``SHAREGPT_SAMPLE_FILE``, in the order sent."""
    rows = read_csv_rows(reference_dir() / SHAREGPT_SAMPLE_FILE)
    ordered = sorted(rows, key=lambda r: int(r["index"]))
    return tuple((int(r["prompt_tokens"]), int(r["output_tokens"])) for r in ordered)


def sharegpt_requests(
    num_prompts: int, prompt_mean_tokens: float | None = None, output_mean_tokens: float | None = None
) -> list[tuple[int, int]]:
    """The first ``num_prompts`` requests of vLLM's ShareGPT sample (cycled past its 200), each length scaled by
    ``mean / the sample's mean`` where a mean is given (rounded, at least 1 token); None keeps the sample's."""
    sample = sharegpt_sample()
    picked = [sample[i % len(sample)] for i in range(int(num_prompts))]
    if not picked:
        return []
    scales = []
    for which, mean in ((0, prompt_mean_tokens), (1, output_mean_tokens)):
        own = sum(r[which] for r in picked) / len(picked)
        scales.append(1.0 if mean is None or not math.isfinite(mean) or mean <= 0 else mean / own)
    return [(max(1, round(p * scales[0])), max(1, round(o * scales[1]))) for p, o in picked]


def sample_lengths(row: DecodeRow) -> list[tuple[int, int]] | None:
    """The requests a serving row's dataset sent, where a published sample lists them (ShareGPT, every prompt at
    once or in a closed loop or at a rate, lengths not drawn by ``--random-range-ratio``), scaled to the row's stated
    means; None otherwise (the run is simulated at its means)."""
    if row.kind != "serving" or row.length_range_ratio is not None or "sharegpt" not in row.dataset.lower():
        return None
    n = row.num_prompts or row.batch
    if not n or n <= 0:
        return None
    return sharegpt_requests(n, row.input_len or None, row.output_len or None)
