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

A request's output in a run of another model is not that sample's: vLLM's sampler sends each ShareGPT request with
``max_tokens`` = its answer's length, and keeps only answers of at least ``SHAREGPT_MIN_OUTPUT_TOKENS`` tokens (vLLM
0.11.0 ``benchmarks/datasets.py`` l.254-278 ``is_valid_sequence``, ``min_len=4``; l.977-985 the answer's length as
``expected_output_len``). The sample's 14 outputs under 4 tokens (each of 1) are Llama 3.3's own stops on the
completions endpoint's raw prompt; a chat endpoint's run (``answers_in_full``: a model answering the turn to its
``max_tokens``, as gpustack's runs did: GLM-4.6-FP8 on vLLM 0.11 and SGLang 0.5.3 both generated 199,904 tokens,
perf_public.csv GPUSTACK-078/079) had no such request: each of its outputs is its answer, at least 4 tokens. A stop
on a raw prompt says nothing of that answer's length, so each stands for the sample's mean output of the others (228
tokens; then scaled as every output). vLLM's mean TPOT leaves out requests of one output token (``benchmarks/serve.py``
l.316-320), so read as the sample's stops they dropped 7% of the requests from the mean. Setting each to the shortest
answer the sampler keeps (4) instead would be the bound, not the expectation: a cluster of 4-token requests that lifts
the TPOT mean of gpustack's bursts 10-44% and their p99 up to x3 (TensorRT-LLM A100, LD055: 842 ms against 265).

Assumptions, stated: a run of more than 200 prompts sends this list again from the start (the sample's first 200
stand for the rest: its means, 213 / 212 tokens, are those of gpustack's 1,000-prompt runs within 7%); another
tokenizer scales every request by the run's stated mean over the sample's (the shape is kept, the means are the
run's).
"""

from __future__ import annotations

import math
import re
from functools import cache

import numpy as np

from planner.accuracy.published import DecodeRow, read_csv_rows, reference_dir
from planner.engines.profiles import parse_version
from planner.serving.load import (
    SHAREGPT_SAMPLE_FILE,
    dataset_in,
    dataset_sample,
    shared_prefix_hit_rate,
    warm_prompt_fraction,
)


@cache
def sharegpt_sample() -> tuple[tuple[int, int], ...]:
    """(prompt, output) tokens of each request of ``SHAREGPT_SAMPLE_FILE``, in the order sent: the one reader
    (``planner.serving.load.dataset_sample``) that ``planner plan --dataset sharegpt`` sends too."""
    return dataset_sample(SHAREGPT_SAMPLE_FILE)


#: The fewest output tokens vLLM's ShareGPT sampler sends a request for (``is_valid_sequence``'s ``min_len``; module
#: docstring): a run whose model answers every request to its ``max_tokens`` makes at least this many.
SHAREGPT_MIN_OUTPUT_TOKENS = 4
#: Sources whose every ShareGPT run went through a chat endpoint (``answers_in_full``), with where they say so:
#: gpustack's documents' Benchmark Script (e.g. docs/performance-lab/gpt-oss-20b/a100.md at gpustack/gpustack 7ae332a:
#: ``vllm bench serve --backend openai-chat --endpoint /v1/chat/completions``; the quantization study's
#: ``--endpoint-type openai-chat --endpoint /v1/chat/completions``). Their 128/4 runs print mean TPOT / mean ITL = 4/3
#: (vLLM, TensorRT-LLM) or 5/3 (SGLang), never 1: a chat stream's role chunk comes before the first token
#: (``tests/test_datasets.py`` pins one).
CHAT_ENDPOINT_SOURCES = frozenset({"gpustack-performance-lab", "gpustack-quantization-impact"})


def answers_in_full(row: DecodeRow) -> bool:
    """Whether the row's run sent its prompts to a chat endpoint (its source, ``CHAT_ENDPOINT_SOURCES``, or its dataset
    cell naming ``openai-chat``), so that each request's output is its own answer, at least
    ``SHAREGPT_MIN_OUTPUT_TOKENS``, not the published sample's stop on a raw prompt (module docstring)."""
    return row.source_group in CHAT_ENDPOINT_SOURCES or "openai-chat" in row.dataset.lower()


#: Tokens a chat endpoint's server adds to each prompt beyond what ``vllm bench serve`` counts (its ``prompt_len`` is
#: ``tokenizer(prompt).input_ids`` of the raw text or the random sequence's length, vLLM 0.11.0
#: ``benchmarks/datasets.py`` l.976-978 and l.400-440; ``--backend openai-chat`` sends that text as the one user
#: message, ``benchmarks/lib/endpoint_request_func.py`` l.237-258, and the server prefills it inside the model's chat
#: template): (model-name family, tokens, the template it is counted from). Qwen3's ChatML ``<|im_start|>user\n`` ...
#: ``<|im_end|>\n<|im_start|>assistant\n`` (no BOS); GLM-4.5/4.6 ``[gMASK]<sop><|user|>\n`` ... ``<|assistant|>``;
#: DeepSeek-R1-0528 ``<｜User｜>`` ... ``<｜Assistant｜>`` and DeepSeek-V3.2 the same and ``</think>`` (the BOS both
#: templates write is one the client's tokenizer counts too); gpt-oss's Harmony system message (identity, knowledge
#: cutoff, date, reasoning effort, channels: vLLM 0.11.0 ``entrypoints/harmony_utils.py`` ``get_system_message``
#: l.61-100, ``serving_chat.py`` ``_make_request_with_harmony`` l.1564-1591), an empty developer message and the
#: turn's markers, about 68 tokens (an estimate of its o200k tokenization, 60-75; the others are special tokens and
#: single-token role words). docs/hypotheses/chat-template-tokens.md.
CHAT_TEMPLATE_TOKENS: tuple[tuple[str, int, str], ...] = (
    ("qwen3", 8, "Qwen3 ChatML template"),
    ("glm-4.5", 5, "GLM-4.5 chat template"),
    ("glm-4.6", 5, "GLM-4.6 chat template"),
    ("deepseek-r1", 2, "DeepSeek-R1-0528 chat template"),
    ("deepseek-v3.2", 3, "DeepSeek-V3.2 encoding, non-thinking"),
    ("gpt-oss", 68, "gpt-oss Harmony system + developer messages (estimate, 60-75)"),
)
#: Whether the simulation adds ``chat_template_tokens`` to a chat-endpoint row's prompts (h-r2: measured behind this
#: switch, ``bench/switch_bootstrap.py chat-template-tokens``).
CHAT_TEMPLATE_ON = False


def chat_template_tokens(row: DecodeRow) -> int:
    """Tokens the row's server prefilled per request beyond the client's counted prompt: ``CHAT_TEMPLATE_TOKENS`` of
    the row's model family when its run went through a chat endpoint (``answers_in_full``) and ``CHAT_TEMPLATE_ON``;
    0 otherwise (a completions endpoint or raw text prefills what the client counted; a family not listed adds none,
    an assumption that leaves it as before)."""
    if not CHAT_TEMPLATE_ON or row.kind != "serving" or not answers_in_full(row):
        return 0
    name = row.model.lower().rsplit("/", 1)[-1]
    return next((tokens for family, tokens, _ in CHAT_TEMPLATE_TOKENS if name.startswith(family)), 0)


def sharegpt_requests(
    num_prompts: int,
    prompt_mean_tokens: float | None = None,
    output_mean_tokens: float | None = None,
    min_output_tokens: int = 1,
) -> list[tuple[int, int]]:
    """The first ``num_prompts`` requests of vLLM's ShareGPT sample (cycled past its 200), each length scaled by
    ``mean / the sample's mean`` where a mean is given (rounded, at least 1 token); None keeps the sample's. Outputs
    under ``min_output_tokens`` (``SHAREGPT_MIN_OUTPUT_TOKENS`` for a run that answers in full: the sample's stops) first
    become the mean of the sample's other outputs, then all are scaled, and kept at least that after rounding."""
    sample = sharegpt_sample()
    least = max(int(min_output_tokens), 1)
    answered = [o for _, o in sample if o >= least]
    typical = round(sum(answered) / len(answered))  # a stop's answer, unknown: the sample's mean of the others
    picked = [(p, o if o >= least else typical) for p, o in (sample[i % len(sample)] for i in range(int(num_prompts)))]
    if not picked:
        return []
    scales = []
    for which, mean in ((0, prompt_mean_tokens), (1, output_mean_tokens)):
        own = sum(r[which] for r in picked) / len(picked)
        scales.append(1.0 if mean is None or not math.isfinite(mean) or mean <= 0 else mean / own)
    return [(max(1, round(p * scales[0])), max(least, round(o * scales[1]))) for p, o in picked]


def _least_output(row: DecodeRow) -> int:
    return SHAREGPT_MIN_OUTPUT_TOKENS if answers_in_full(row) else 1


def sample_lengths(row: DecodeRow) -> list[tuple[int, int]] | None:
    """The requests a serving row's dataset sent, where a published sample lists them (ShareGPT, every prompt at
    once or in a closed loop or at a rate, lengths not drawn by ``--random-range-ratio``), scaled to the row's stated
    means; None otherwise (the run is simulated at its means)."""
    if row.kind != "serving" or row.length_range_ratio is not None or "sharegpt" not in row.dataset.lower():
        return None
    n = row.num_prompts or row.batch
    if not n or n <= 0:
        return None
    return sharegpt_requests(n, row.input_len or None, row.output_len or None, _least_output(row))


#: vLLM's ShareGPT sample at its default seed (0), prompt tokens under the Llama 3 tokenizer, in the order sent
#: (``catalogs/reference/sharegpt_vllm_seed0_prompts.csv``, from a ``benchmark_serving.py`` result file that lists
#: each request's length). vLLM's sampler shuffles the dataset with ``random.seed(0)`` and keeps the first prompts
#: that pass its length filter, so a run of N prompts sends this list's first N (its first 300 add up to 62,238
#: tokens and its first 200 to 42,659, the totals two other published runs print, vLLM 0.14.1 and 0.8.3).
SHAREGPT_TRACE_FILE = "sharegpt_vllm_seed0_prompts.csv"
#: How close a run's stated mean prompt must be to the trace's first N for the run to be read as that sample.
SHAREGPT_TRACE_MATCH = 0.01
#: How close it must be when the run's client is vLLM's sampler at its default seed but the model's tokenizer is
#: another (Qwen, DeepSeek, GLM ...): the same prompts in the same order, each a few percent longer or shorter.
SHAREGPT_TOKENIZER_MATCH = 0.10


@cache
def sharegpt_seed0_prompts() -> tuple[int, ...]:
    """The prompt lengths of ``SHAREGPT_TRACE_FILE``, tokens, in the order sent."""
    rows = read_csv_rows(reference_dir() / SHAREGPT_TRACE_FILE)
    return tuple(int(r["prompt_tokens"]) for r in sorted(rows, key=lambda r: int(r["index"])))


def sharegpt_prompts(row: DecodeRow, n: int) -> list[int] | None:
    """The prompts a ShareGPT run sent, when the row is vLLM's seed-0 sample: its dataset names ShareGPT, it sent at
    most as many prompts as the trace holds, and its stated mean prompt is within ``SHAREGPT_TRACE_MATCH`` of the
    trace's first ``n`` (the check that it is that sample, tokenizer included): the trace's first ``n``. A run whose
    client is vLLM's sampler at its default seed (``DecodeRow.client`` "vllm") sent the same prompts under the model's
    own tokenizer: within ``SHAREGPT_TOKENIZER_MATCH``, the trace's first ``n`` each scaled by stated mean / trace mean
    (rounded, at least 1). Else None (lengths at the means)."""
    if "sharegpt" not in row.dataset.lower() or row.length_range_ratio is not None:
        return None
    trace = sharegpt_seed0_prompts()
    if not 0 < n <= len(trace):
        return None
    mean = sum(trace[:n]) / n
    ratio = max(row.input_len, 1) / mean
    if abs(1 / ratio - 1) <= SHAREGPT_TRACE_MATCH:
        return list(trace[:n])
    if row.client == "vllm" and abs(1 / ratio - 1) <= SHAREGPT_TOKENIZER_MATCH:
        return [max(round(p * ratio), 1) for p in trace[:n]]
    return None


#: ``sglang.bench_serving``'s default ``--seed`` (``np.random.seed(args.seed)`` before the dataset is drawn: 0.5.6
#: ``bench_serving.py`` l.2334-2335, ``--seed`` default 1 at l.2683)
SGLANG_BENCH_SEED = 1
#: How close a run's stated mean prompt must be to the reproduced draws' for the run to be read as them.
SGLANG_DRAW_MATCH = 0.005
#: The first release whose random outputs are drawn from at least 1 token (``max(int(O r), 1)``; 0.5.6.post1 and
#: before from ``int(O r)``: the released wheels' ``bench_serving.py``, read by s190's helper)
SGLANG_OUTPUTS_FROM_ONE = (0, 5, 7)


def sglang_random_requests(row: DecodeRow) -> list[tuple[int, int]] | None:
    """The lengths ``sglang.bench_serving --dataset-name random`` drew for the row's run, reproduced: after
    ``np.random.seed(1)`` (its default ``--seed``), ``sample_random_requests`` draws every input length with
    ``np.random.randint(max(int(L r), 1), L + 1, size=N)`` and then every output length with
    ``np.random.randint(int(O r), O + 1, size=N)`` (0.5.6 ``bench_serving.py`` l.1217-1236; from 0.5.7, by the row's
    release, at least 1: ``SGLANG_OUTPUTS_FROM_ONE``), L and O the command's
    ``--random-input-len`` / ``--random-output-len`` and r its ``--random-range-ratio`` (0.0 by default), in the order
    sent. Used only where the row is that client's run of a random dataset without ``--seed`` and its stated mean
    prompt is the draws' within ``SGLANG_DRAW_MATCH`` (the check that it is that draw: the SGLang cookbook's runs print
    totals equal to it, 41,941 input tokens for L 8,000 over 10 requests); each output at least 1 token. Else None."""
    if row.kind != "serving" or row.client != "sglang" or row.length_range_ratio is None:
        return None
    # (argparse takes a prefix: datacrunch's cells write --random-input for --random-input-len)
    lengths = [re.search(rf"--random-{what}(?:-len)?[ =](\d+)", row.dataset) for what in ("input", "output")]
    n = row.num_prompts or 0
    if not all(lengths) or n < 1:  # (a run with --seed has no client: ``benchmark_client_of``)
        return None
    top_in, top_out = (int(m[1]) for m in lengths)
    r = float(row.length_range_ratio)
    version = parse_version(row.engine_version)
    least = 1 if version is not None and version.release >= SGLANG_OUTPUTS_FROM_ONE else 0
    draws = np.random.RandomState(SGLANG_BENCH_SEED)
    prompts = draws.randint(max(int(top_in * r), 1), top_in + 1, size=n)
    outputs = draws.randint(max(int(top_out * r), least), top_out + 1, size=n)
    if abs(prompts.mean() / max(row.input_len, 1) - 1) > SGLANG_DRAW_MATCH:
        return None
    return [(int(p), max(int(o), 1)) for p, o in zip(prompts, outputs, strict=True)]


def run_requests(row: DecodeRow) -> list[tuple[int, int]] | None:
    """Each request's (prompt, output) tokens of a serving row's run, the one list both its mean figures
    (``planner.accuracy.predict.predict_decode_rows``) and its percentiles (``planner.accuracy.under_load``) are
    simulated with: where the row is vLLM's seed-0 sample (``sharegpt_prompts``), that trace's prompts and the
    published sample's outputs scaled to the row's mean output; else, where vLLM's sampler drew the requests
    (``DecodeRow.client`` "vllm"), the published sample scaled to the row's means (``sample_lengths``); where
    ``sglang.bench_serving`` drew a random dataset, its draws reproduced (``sglang_random_requests``); None: the row's
    own lengths (its means, or drawn by its range ratio). A row whose result file lists each request's lengths
    (``DecodeRow.request_lengths``) is simulated with those. A chat-endpoint row's prompts each carry
    ``chat_template_tokens`` more than the client counted."""
    if row.kind != "serving":
        return None
    lengths = _client_requests(row)
    extra = chat_template_tokens(row)
    if lengths is None or not extra:
        return lengths
    return [(p + extra, o) for p, o in lengths]  # the server prefills the chat template around each prompt


def _client_requests(row: DecodeRow) -> list[tuple[int, int]] | None:
    """``run_requests`` as the benchmark client counted them (without ``chat_template_tokens``)."""
    if row.request_lengths:  # the run's own requests, as its result file lists them
        return list(row.request_lengths)
    n = row.num_prompts or max(row.batch, 1)
    prompts = sharegpt_prompts(row, n)
    if prompts is not None:
        outputs = [o for _, o in sharegpt_requests(n, None, max(row.output_len, 1), _least_output(row))]
        return list(zip(prompts, outputs, strict=True))
    if row.client == "sglang":
        return sglang_random_requests(row)
    return sample_lengths(row) if row.client == "vllm" else None


def prefix_hit(row: DecodeRow) -> float:
    """The share of each prompt of a serving row's run the prefix cache holds: every prompt warm where the row says its
    server had served them before (``DecodeRow.prompts_cached``: ``warm_prompt_fraction``); else, where its dataset
    cell names a dataset whose prompts share a prefix (sonnet's 200 tokens, generated-shared-prefix's 2,048 a
    group), that prefix's mean hit over the run's requests (``planner.serving.load.shared_prefix_hit_rate``); else
    0."""
    if row.prompts_cached:
        return warm_prompt_fraction(max(row.input_len, 1))
    named = dataset_in(row.dataset) if row.kind == "serving" else None
    if named is None:  # shared_prefix_hit_rate is 0 for a dataset without a shared prefix
        return 0.0
    return shared_prefix_hit_rate(named, max(row.input_len, 1), row.num_prompts or max(row.batch, 1))
