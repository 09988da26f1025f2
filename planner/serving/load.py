"""Latency under load: a traffic pattern and a length distribution run through the serving simulation.

A service-level objective is a percentile at a traffic level ("p95 TTFT under 1.5 s at 60 requests/s"). This
module draws the requests a client sends (``arrival_times_s``, the ``*_lengths`` functions), simulates the engine
serving them (``planner.serving.simulate``, step times from the model through ``planner.serving.benchmark``) and
reports the percentiles a serving benchmark prints (``LoadResult``):

- **Arrivals.** At a rate: ``vllm bench serve``'s gaps, gamma-distributed with shape ``burstiness`` and mean
  1 / rate (1: Poisson; below 1 burstier; ``inf``: evenly spaced), rescaled so the last request goes at N / rate
  (``vllm/benchmarks/serve.py`` ``get_request``). A closed loop: ``concurrency`` requests in flight, the client
  sending the next when one completes (``--max-concurrency`` with an infinite rate). A burst: every request at
  time 0 (neither given). A trace: the arrival times given (``arrivals_s``).
- **Lengths.** Fixed; ``--random-range-ratio`` as each benchmark reads it (``range_ratio_lengths``); lognormal
  with a mean and a coefficient of variation; a named dataset's published statistics or its benchmark client's
  default lengths (``DATASETS``, ``dataset_lengths``).
- **Prefix cache.** ``prefix_hit_rate``: the share of each prompt found cached (held, not computed); a named
  dataset's shared prefix sets it (``shared_prefix_hit_rate``; ``dataset_load``: a dataset's requests, their means
  and their hit, as one traffic).
- **Speculative decoding.** ``Replica.speculative`` (``planner.serving.speculative``): each decode step drafts,
  verifies and emits the acceptance length's tokens per sequence, streamed as one chunk.
- **Front end.** ``frontend_s``: each request's time outside the engine (HTTP, chat template, tokenizing,
  detokenizing), added to its TTFT and latency; a replica's default is ``FRONTEND_S``, fitted on published runs.

Percentiles are ``np.percentile``'s (linear), over requests for TTFT, TPOT and end-to-end latency and over output
tokens after each request's first for ITL, as ``vllm bench serve`` computes them. Throughputs are over the run's
duration, from the first request sent to the last completed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from planner.errors import InvalidInputError, OutOfRangeError, UnknownNameError
from planner.serving.benchmark import (  # noqa: F401  (arrival_times_s, OVERLAP_SCHEDULING_ENGINES re-exported)
    ARRIVAL_SEED,
    MAX_PROMPTS,
    OVERLAP_SCHEDULING_ENGINES,
    RANGE_READERS,
    SCHEDULERS,
    ServingSetup,
    _whole,
    arrival_times_s,
    check_run_size,
    engine_behaviour,
    overlaps_steps,
    range_ratio_bounds,
    serving_setups,
    speculative_setup,
    uniform_lengths,
)
from planner.serving.length_mixture import LengthMixture, mixture_fit, mixture_ratio_bound
from planner.serving.simulate import (
    DEFAULT_BEHAVIOUR,
    RunBehaviour,
    RunResult,
    Samples,
    Scheduler,
    StepTable,
    simulate,
    weighted_percentile,
)
from planner.serving.speculative import served_model
from planner.units import counted

#: The percentiles reported, as benchmarks print them (``--metric-percentiles``).
PERCENTILES = (50, 90, 95, 99)
#: The percentiles a high length may be stated at (a review's high_percentile, plan's --length-percentile).
HIGH_PERCENTILES = tuple(q for q in PERCENTILES if q > 50)


def percentile_error(percentile: Any) -> InvalidInputError:
    """The refusal of a percentile the simulation does not report, with the way out; a fraction (0.95) is named as
    the percentile it stands for (95)."""
    hint = ""
    if isinstance(percentile, (int, float)) and not isinstance(percentile, bool) and 0 < percentile < 1:
        hint = f" (a percentile, not a fraction: {percentile * 100:g} for {percentile:g})"
    number = isinstance(percentile, (int, float)) and not isinstance(percentile, bool)
    kind = OutOfRangeError if number else InvalidInputError  # a number out of range: #NUM! in a cell
    return kind(f"percentile {percentile!r} is not reported; use one of {PERCENTILES}{hint}")


#: How many requests a load simulation sends unless told: ``vllm bench serve``'s default ``--num-prompts``.
DEFAULT_REQUESTS = 1000
#: The fewest requests a sizing run leaves above its percentile (``sizing_requests``): 50, so the p95 of
#: ``DEFAULT_REQUESTS`` (50 above it) sets the rule and a p99 run sends 5,000.
TAIL_REQUESTS = 50


def sizing_requests(percentile: float) -> int:
    """How many requests a run whose ``percentile`` sizes a fleet draws (its lengths, a replica's share at a rate):
    at least ``DEFAULT_REQUESTS``, and enough that ``TAIL_REQUESTS`` lie above the percentile, n >= 50 / (1 - q)
    (q = percentile / 100): 1,000 at p50, p90 and p95, 5,000 at p99. Why a count in the tail: the sample's
    q-quantile is its order statistic of rank about nq, and the number of the n requests past the true quantile is
    binomial (n, 1 - q), of mean m = n (1 - q) and standard deviation sqrt(m q) ~ sqrt(m); the estimate moves by as
    many ranks, a relative error of about 1 / sqrt(m) of the tail's count. A fixed n = 1,000 leaves m = 50 at p95
    (+-14%) but 10 at p99 (+-32%): the p99's verdict then turns on the draw (trial 28 F13: 1 of 5 Poisson arrival
    draws at the sized fleet missed its p99 TPOT target). A fixed m = 50 bounds it alike at every percentile, and
    keeps every p95 run as it was (50 / 0.05 = 1,000)."""
    tail = 1.0 - float(percentile) / 100.0
    if not 0 < tail < 1:
        raise percentile_error(percentile)
    return max(DEFAULT_REQUESTS, math.ceil(round(TAIL_REQUESTS / tail, 6)))


@dataclass(frozen=True)
class DatasetLengths:
    """A named dataset's published length statistics (tokens), how a benchmark client draws from them, and where
    they are published.

    ``kind``: "means" (a dataset's published means; requests at the means unless a spread is given), "fixed" (a
    benchmark's default lengths, every request the same: ``--sonnet-input-len``, ``--random-input-len`` at range
    ratio 0) or "uniform" (a benchmark's default draw: ``range_ratio_lengths`` of the maxima at ``range_ratio``, as
    ``client`` reads it). A mean is None where none is published (the row must state that length). ``prefix_tokens``:
    of each prompt, the tokens every request of a group shares, and ``prefix_groups`` how many such groups a run
    sends (each group's first request computes its prefix, the rest find it cached: ``shared_prefix_hit_rate``).
    """

    prompt_mean_tokens: float | None
    output_mean_tokens: float | None
    source: str
    tokenizer: str = ""
    kind: str = "means"
    prompt_max_tokens: float | None = None
    output_max_tokens: float | None = None
    prefix_tokens: int = 0
    prefix_groups: int = 1
    range_ratio: float | None = None
    client: str = ""
    aliases: tuple[str, ...] = ()
    #: A shipped sample of the dataset's requests as its client sent them, one (prompt, output) a request
    #: (``dataset_sample``): where one is named, a run sends its requests, not every request at the means.
    sample_file: str = ""


#: vLLM's seed-0 ShareGPT sample, the first 200 requests with their generated lengths (``catalogs/reference``;
#: ``planner.accuracy.datasets`` describes it).
SHAREGPT_SAMPLE_FILE = "sharegpt_vllm_seed0_requests.csv"

#: Named datasets' published length statistics, each with its tokenizer, source and date. A benchmark's default
#: lengths (sonnet, random, generated-shared-prefix) are the client's own defaults, exactly, for the version named.
#: CNN/DailyMail is named with its limits only: no published mean length was found (MLPerf's GPT-J and Llama 3.1 8B
#: pages state the sample count, 13,368, and the accuracy targets), so a run of it must state its lengths.
DATASETS = {
    "sharegpt": DatasetLengths(
        161.31,
        337.99,
        "Kwon et al., Efficient Memory Management for LLM Serving with PagedAttention (SOSP 2023), Fig. 11a: "
        "ShareGPT input mean 161.31, output mean 337.99 tokens (OPT tokenizer); https://arxiv.org/abs/2309.06180, "
        "2023-09. vLLM's own seed-0 sample, request by request, is planner.accuracy.datasets.sharegpt_sample",
        tokenizer="OPT",
        aliases=("sharegpt_v3", "sharegpt-v3"),
        sample_file=SHAREGPT_SAMPLE_FILE,
    ),
    "alpaca": DatasetLengths(
        19.31,
        58.45,
        "Kwon et al., SOSP 2023, Fig. 11b: Alpaca input mean 19.31, output mean 58.45 tokens (OPT tokenizer); "
        "https://arxiv.org/abs/2309.06180, 2023-09",
        tokenizer="OPT",
    ),
    "openorca": DatasetLengths(
        None,
        294.45,
        "MLPerf Inference llama2-70b reference (github.com/mlcommons/inference language/llama2-70b/README.md, "
        "commit 00bf834, 2024): 24,576 OpenOrca GPT-4 samples, prompts filtered to at most 1,024 tokens "
        "(processorca.py --seqlen_limit=1024); accuracy target 'Tokens per sample: 294.45' (Llama-2-70b-chat FP16 "
        "on DGX-H100). No mean prompt length is published there",
        tokenizer="Llama 2",
        prompt_max_tokens=1024,
        aliases=("open-orca", "open_orca"),
    ),
    "cnn_dailymail": DatasetLengths(
        None,
        None,
        "MLPerf Inference GPT-J reference (github.com/mlcommons/inference language/gpt-j, commit 01cac40, 2023): "
        "13,368 CNN/DailyMail validation articles; backend.py reads prompts with model_max_length=1919 and generates "
        "with max_new_tokens 128, min_new_tokens 30, num_beams 4. No mean length is published there",
        tokenizer="GPT-J (GPT-2 BPE)",
        prompt_max_tokens=1919,
        output_max_tokens=128,
        aliases=("cnn-dailymail", "cnn/dailymail", "cnndm"),
    ),
    "sonnet": DatasetLengths(
        550,
        150,
        "vLLM vllm/benchmarks/datasets.py SonnetDataset (commit 0056b87, 2025; deprecated there, defaults copied "
        "from benchmark_serving.py): DEFAULT_INPUT_LEN = 550, DEFAULT_OUTPUT_LEN = 150, DEFAULT_PREFIX_LEN = 200 "
        "(--sonnet-input-len, --sonnet-output-len, --sonnet-prefix-len); the prompt counted with the chat template",
        tokenizer="the served model's",
        kind="fixed",
        prefix_tokens=200,
        client="vllm",
    ),
    "random": DatasetLengths(
        1024,
        128,
        "vLLM vllm/benchmarks/datasets.py RandomDataset (commit 0056b87, 2025): DEFAULT_INPUT_LEN = 1024, "
        "DEFAULT_OUTPUT_LEN = 128, DEFAULT_RANGE_RATIO = 0.0 ('Default values copied from benchmark_serving.py "
        "for the random dataset'): every request 1,024 in, 128 out",
        tokenizer="the served model's",
        kind="fixed",
        client="vllm",
    ),
    "generated-shared-prefix": DatasetLengths(
        2048 + 128,
        256,
        "SGLang python/sglang/bench_serving.py (commit 0033168, 2025): --gsp-num-groups 64, --gsp-prompts-per-group "
        "16, --gsp-system-prompt-len 2048, --gsp-question-len 128, --gsp-output-len 256 (target lengths): each "
        "prompt a group's 2,048-token system prompt and a 128-token question",
        tokenizer="the served model's",
        kind="fixed",
        prefix_tokens=2048,
        prefix_groups=64,
        client="sglang",
        aliases=("gsp",),
    ),
}

#: A client whose default for a dataset differs from ``DATASETS``'s (the vLLM one): (name, client) -> statistics.
CLIENT_DATASETS = {
    ("random", "sglang"): DatasetLengths(
        512.5,
        512.5,
        "SGLang python/sglang/bench_serving.py (commit 0033168, 2025): --random-input-len 1024, --random-output-len "
        "1024, --random-range-ratio 0.0, drawn by sample_random_requests uniform in [max(int(L r), 1), L]: "
        "1..1,024 tokens each, mean 512.5",
        tokenizer="the served model's",
        kind="uniform",
        prompt_max_tokens=1024,
        output_max_tokens=1024,
        range_ratio=0.0,
        client="sglang",
    ),
}


#: Every name a dataset is accepted by (``DATASETS``' names and their aliases, in that order) -> its ``DATASETS`` key.
_DATASET_KEYS = {n: key for key, d in DATASETS.items() for n in (key, *d.aliases)}
#: Those names as a free-text cell may hold them, longest first (``dataset_in``): a word, letters and digits on neither
#: side.
_NAMES_IN_TEXT = tuple(
    (n, re.compile(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])")) for n in sorted(_DATASET_KEYS, key=len, reverse=True)
)


def dataset_names() -> list[str]:
    """Every name a dataset is accepted by: ``DATASETS``' names and their aliases."""
    return list(_DATASET_KEYS)


def dataset_statistics(name: str, client: str = "vllm") -> DatasetLengths:
    """The published statistics of the dataset ``name`` (a name or alias of ``DATASETS``, any case), as ``client``'s
    defaults draw it (``CLIENT_DATASETS``); ``UnknownNameError`` (did you mean ...? and the accepted names)
    otherwise."""
    canonical = dataset_statistics_key(name)
    return CLIENT_DATASETS.get((canonical, str(client).strip().lower()), DATASETS[canonical])


def dataset_in(text: str) -> str | None:
    """The dataset a free-text cell names ("ShareGPT (vLLM sample)", "random 1024/1024"): the longest accepted name
    or alias found in it as a word (letters and digits on neither side), or None."""
    low = str(text).lower()
    return next((n for n, word in _NAMES_IN_TEXT if word.search(low)), None)


class UnknownDatasetError(UnknownNameError, InvalidInputError):
    """Raised when a dataset name is not one with published lengths here: the closest names and every accepted
    one."""

    def __init__(self, name: object):
        name = str(name) if len(str(name)) <= 60 else str(name)[:57] + "..."  # a cell's first word may be any length
        UnknownNameError.__init__(self, "dataset", name, dataset_names())
        self.suggestions = list(dict.fromkeys(_DATASET_KEYS[n] for n in self.suggestions))
        hint = f"did you mean {', '.join(self.suggestions)}? " if self.suggestions else ""
        self.args = (
            f"dataset {str(name)!r} has no published lengths here; {hint}accepted: {', '.join(dataset_names())}",
        )


@dataclass(frozen=True)
class Percentiles:
    """A latency's distribution over requests (or tokens), seconds: the mean and ``PERCENTILES``."""

    mean: float
    p50: float
    p90: float
    p95: float
    p99: float

    def at(self, percentile: float) -> float:
        """The value at one of ``PERCENTILES`` (50, 90, 95, 99)."""
        key = f"p{int(percentile)}"
        if int(percentile) != percentile or not hasattr(self, key):
            raise percentile_error(percentile)
        return getattr(self, key)


@dataclass(frozen=True)
class LoadResult:
    """A simulated run's figures as a serving benchmark reports them (seconds; requests or tokens per second)."""

    ttft_s: Percentiles
    tpot_s: Percentiles
    itl_s: Percentiles
    e2e_s: Percentiles
    request_throughput_per_s: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    duration_s: float
    completed: int
    peak_running: int
    preemptions: int


# -- arrivals ---------------------------------------------------------------------------------------------


# -- request lengths --------------------------------------------------------------------------------------


def fixed_length_tokens(mean_tokens: float) -> int:
    """The whole tokens each request of a fixed-length run at a mean length sends: the mean rounded to the nearest
    whole token (Python's round, half to even: 800.5 -> 800, 801.5 -> 802), at least 1. A benchmark's printed mean
    (207.5 tokens) is read this way (``planner.accuracy.published.mean_length``), and so is a scenario's or
    ``planner plan``'s fractional mean where one request length is priced or simulated."""
    return max(round(float(mean_tokens)), 1)


def fixed_lengths(prompt_tokens: float, output_tokens: float, num_requests: int) -> list[tuple[int, int]]:
    """Every request the same (prompt, output) tokens, rounded to whole tokens (``fixed_length_tokens``)."""
    n = _whole(num_requests, "num_requests")
    return [(fixed_length_tokens(prompt_tokens), fixed_length_tokens(output_tokens))] * n


def range_ratio_lengths(
    prompt_tokens: float,
    output_tokens: float,
    num_requests: int,
    range_ratio: float,
    reader: str = "vllm",
    seed: int = ARRIVAL_SEED,
) -> list[tuple[int, int]]:
    """(prompt, output) tokens as a benchmark given ``--random-input-len`` L and ``--random-range-ratio`` r draws
    them: uniform integers, vLLM in [floor(L (1 - r)), ceil(L (1 + r))], SGLang in [max(int(L r), 1), L]
    (``RANGE_READERS``)."""
    n = _whole(num_requests, "num_requests")
    r = float(range_ratio)
    if reader not in RANGE_READERS:
        raise InvalidInputError(f"range-ratio reader {reader!r} is not known; use one of {', '.join(RANGE_READERS)}")
    if not 0.0 <= r <= 1.0 or (reader == "vllm" and r >= 1.0):
        raise InvalidInputError(f"range ratio {range_ratio!r} is out of range; use 0 to 1 (vLLM: below 1)")
    bounds = (range_ratio_bounds(float(length), r, reader) for length in (prompt_tokens, output_tokens))
    return uniform_lengths(*bounds, n, seed=seed, stream=2)


def lognormal_lengths(
    prompt_mean_tokens: float,
    output_mean_tokens: float,
    num_requests: int,
    cv: float = 1.0,
    max_tokens: float = math.inf,
    seed: int = ARRIVAL_SEED,
    output_cv: float | None = None,
) -> list[tuple[int, int]]:
    """(prompt, output) tokens drawn lognormal with the given means and coefficient of variation (std / mean):
    sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2; rounded, at least 1, at most ``max_tokens`` each.
    ``output_cv``: the output's own coefficient of variation (None: ``cv``, as the prompt's)."""
    n = _whole(num_requests, "num_requests")
    rng = np.random.default_rng([seed, 3])
    drawn = []
    for mean, c in (
        (float(prompt_mean_tokens), cv),
        (float(output_mean_tokens), cv if output_cv is None else output_cv),
    ):
        c = float(c)
        if not c >= 0 or math.isinf(c):
            raise InvalidInputError(f"coefficient of variation {c!r} is not a finite number of 0 or more")
        sigma = math.sqrt(math.log1p(c * c))
        if not mean > 0:
            raise InvalidInputError(f"mean length {mean!r} is not a positive number of tokens")
        x = rng.lognormal(math.log(mean) - sigma * sigma / 2.0, sigma, n) if sigma else np.full(n, mean)
        drawn.append(np.clip(np.round(x), 1, max_tokens).astype(int))
    return list(zip(drawn[0].tolist(), drawn[1].tolist(), strict=True))


def lognormal_spread(mean_tokens: float, high_tokens: float, high_percentile: float) -> float:
    """sigma of a lognormal length with this mean and high percentile: s = z - sqrt(z^2 - 2 ln(high / mean)).

    From mean = exp(mu + s^2 / 2) and high = exp(mu + z s), z the normal quantile of the percentile (1.645 at
    p95). 0 when high = mean. Where the ratio is beyond any lognormal's (high / mean > exp(z^2 / 2) = 3.87 at p95)
    no s has both: ``LongTailError`` (``length_fit`` fits a lognormal truncated at the sequence's slot there; trial 27
    F12: the s = z this returned before dropped the stated high length and drew a tail to the model's context)."""
    z = _normal_quantile(high_percentile / 100.0)
    ratio = max(high_tokens / mean_tokens, 1.0)
    if ratio > lognormal_ratio_bound(high_percentile):
        raise LongTailError(mean_tokens, high_tokens, high_percentile)
    return z - math.sqrt(max(z * z - 2.0 * math.log(ratio), 0.0))


def lognormal_ratio_bound(high_percentile: float) -> float:
    """The largest high / mean any lognormal has at the percentile: exp(z^2 / 2), at s = z (3.87 at p95, 2.27 at
    p90, 14.9 at p99): high / mean = exp(z s - s^2 / 2), largest at s = z."""
    z = _normal_quantile(high_percentile / 100.0)
    return math.exp(z * z / 2.0)


def _normal_quantile(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def _log_normal_cdf(x: float) -> float:
    """ln Phi(x), by ``_normal_cdf`` down to x = -30 and below it by the tail's series, ln phi(x) - ln(-x) +
    ln(1 - 1 / x^2 + 3 / x^4) (relative error under 15 / x^6 = 2e-8 there), where Phi itself underflows (-38)."""
    if x > -30.0:
        return math.log(_normal_cdf(x))
    return -x * x / 2.0 - 0.5 * math.log(2.0 * math.pi) - math.log(-x) + math.log1p(-1.0 / x**2 + 3.0 / x**4)


def _normal_cdf(x: float) -> float:
    """Phi(x) = erfc(-x / sqrt 2) / 2: accurate far into the lower tail (``statistics.NormalDist().cdf`` rounds to
    0 below about -8.3, where a truncated fit with a wide spread still reads it)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


#: The way out ``LongTailError`` adds for lengths measured, not guessed (trial 28 F2): the sample itself, resampled.
MEASURED_LENGTHS_HINT = (
    "or, for lengths measured from logs, give the sample itself, each request drawn from its rows: planner plan "
    "--lengths FILE, a scenario's lengths_file (a CSV of prompt_tokens, output_tokens)"
)


class LongTailError(InvalidInputError):
    """Raised when a stated (mean, high percentile) of a length has no fit: the ratio high / mean above
    exp(z^2 / 2) (3.87 at p95), and, where a slot is given, above what the two-part mixture within it reaches
    (``long_tail_ratio_bound``: just under 1 / (1 - q)). The message names the ratio and what is accepted."""

    def __init__(self, mean: float, high: float, percentile: float, slot_tokens: float = math.inf, what: str = ""):
        self.mean, self.high, self.percentile, self.slot_tokens = (
            float(mean),
            float(high),
            float(percentile),
            slot_tokens,
        )
        self.what = what  # the length refused ("prompt", "output"; "": not named)
        q, ratio = f"p{percentile:g}", high / mean
        bound = lognormal_ratio_bound(percentile)
        said = f"{what} length's " if what else "a length's "
        said += (
            f"{q} / mean = {high:,.0f} / {mean:,.0f} = {ratio:.2f} has no lognormal fit: above any lognormal's "
            f"{bound:.2f} (exp(z^2 / 2) at {q})"
        )
        fit = f"a {q} of at most {bound * mean:,.0f} tokens ({bound:.2f} x the mean)"
        fix = f"give {fit}"
        if math.isfinite(slot_tokens):
            most = long_tail_ratio_bound(high, percentile, slot_tokens)
            said += (
                f", and above the {most:.2f} a two-part mixture (a lognormal body up to the {q}, the longest "
                f"{100 - percentile:g}% between it and the {slot_tokens:,.0f}-token slot memory is sized for, {q} "
                f"prompt + {q} output) reaches at this {q} (no distribution of positive lengths reaches "
                f"1 / (1 - {percentile / 100:g}) = {100 / (100 - percentile):.0f}: Markov's inequality)"
            )
            fix = (
                f"give a mean of at least {math.ceil(high / most):,} tokens at this {q}, or a {q} of at most "
                f"{math.floor(most * mean):,} tokens ({most:.2f} x the mean)"
            )
        super().__init__(f"{said}; {fix}; {MEASURED_LENGTHS_HINT}")


def truncated_ratio_bound(high_tokens: float, high_percentile: float, slot_tokens: float) -> float:
    """The largest high / mean ``length_fit`` fits with a lognormal truncated at ``slot_tokens`` T whose percentile
    is ``high_tokens`` h: h / the least mean over s in (0, ``MAX_TRUNCATED_SPREAD``] (``_truncated_peak_spread``;
    every ratio from 1 to it has a fit on the branch where the mean falls). Where T / h is small the mean falls all
    the way to s = 10 and the fit tends to the power law of density x^(a - 1) on (0, T], a = ln(1 / q) / ln(T / h),
    whose mean is a T / (a + 1), so the bound is just under (h / T) (a + 1) / a (p95, h = 12,000, T = 16,000:
    a = 0.0513 / 0.2877 = 0.178, 4.96, at s = 10 4.82; T = 22,000 at h = 20,000: 2.60 and 2.58). Where T / h is
    about 10 or more the mean is least at an s of 2 to 4 and rises past it (T / h = 10: 4.77 at s ~ 4, 4.69 at
    s = 10; T / h = 100: 3.88 near s = z, 1.16 at s = 10): the peak, not the value at s = 10. 1 where T <= h."""
    if slot_tokens <= high_tokens:
        return 1.0
    s = _truncated_peak_spread(high_tokens, high_percentile, slot_tokens)
    return high_tokens / _truncated_fit_at(s, high_tokens, high_percentile, slot_tokens).mean_tokens


@functools.cache
def _truncated_peak_spread(high_tokens: float, high_percentile: float, slot_tokens: float) -> float:
    """The s in (0, ``MAX_TRUNCATED_SPREAD``] where the mean of the lognormal truncated at T = ``slot_tokens`` whose
    q-quantile is h = ``high_tokens`` is least (golden-section search on it: it falls from h at s -> 0 to one
    minimum, then rises where T / h is large; ``truncated_ratio_bound``)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    lo, hi = 1e-9, MAX_TRUNCATED_SPREAD

    def mean(s: float) -> float:
        return _truncated_fit_at(s, high_tokens, high_percentile, slot_tokens).mean_tokens

    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = mean(c), mean(d)
    for _ in range(_PEAK_STEPS):
        if fc <= fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = mean(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = mean(d)
    best = (lo + hi) / 2.0
    return hi if mean(MAX_TRUNCATED_SPREAD) <= mean(best) else best


def _truncated_fit_at(s: float, high_tokens: float, high_percentile: float, slot_tokens: float) -> LengthFit:
    """The lognormal of spread s truncated at T = ``slot_tokens`` whose q-quantile is h = ``high_tokens``:
    Phi(a) = q Phi(a + ln(T / h) / s), a bisected (the left side over the right rises with a), mu = ln h - s a."""
    q, d = high_percentile / 100.0, math.log(slot_tokens / high_tokens)
    lo, hi = -1e3, 40.0
    for _ in range(_FIT_STEPS):
        a = (lo + hi) / 2.0
        lo, hi = (a, hi) if _log_normal_cdf(a) < math.log(q) + _log_normal_cdf(a + d / s) else (lo, a)
    return LengthFit(math.log(high_tokens) - s * (lo + hi) / 2.0, s, float(slot_tokens))


@dataclass(frozen=True)
class LengthFit:
    """A length's distribution: lognormal with log-mean ``mu`` and spread ``s`` (the normal's), truncated at
    ``upper_tokens`` (inf: not truncated). With b = (ln upper - mu) / s (inf untruncated):
    E[x^k] = exp(k mu + k^2 s^2 / 2) Phi(b - k s) / Phi(b), the q-quantile exp(mu + s Phi^-1(q Phi(b)))."""

    mu: float
    s: float
    upper_tokens: float = math.inf

    @property
    def truncated(self) -> bool:
        return math.isfinite(self.upper_tokens)

    @property
    def kind(self) -> str:
        """What the fit is, as surfaces name it ("lognormal", "truncated lognormal"; ``LengthMixture``'s: "two-part
        mixture")."""
        return "truncated lognormal" if self.truncated else "lognormal"

    def _b(self) -> float:
        return (math.log(self.upper_tokens) - self.mu) / self.s if self.truncated and self.s > 0 else math.inf

    def moment(self, k: int) -> float:
        """E[x^k] of the (truncated) lognormal, computed in logs (exp(k mu + k^2 s^2 / 2) alone overflows at wide s)."""
        if self.s == 0:
            return math.exp(k * self.mu)
        b = self._b()
        log_tail = 0.0 if math.isinf(b) else _log_normal_cdf(b - k * self.s) - _log_normal_cdf(b)
        return math.exp(k * self.mu + k * k * self.s * self.s / 2.0 + log_tail)

    @property
    def mean_tokens(self) -> float:
        return self.moment(1)

    @property
    def half_second_moment_tokens(self) -> float:
        """E[x^2] / (2 E[x]): a length's mean part done in flight, each in flight in proportion to it (docs/export.md
        "Two contexts"); m exp(s^2) / 2 untruncated."""
        return self.moment(2) / (2.0 * self.moment(1))

    def quantile_tokens(self, q: float) -> float:
        """The q-quantile (0 < q < 1): exp(mu + s Phi^-1(q Phi(b)))."""
        b = self._b()
        return math.exp(self.mu + self.s * _normal_quantile(q * (1.0 if math.isinf(b) else _normal_cdf(b))))

    def draw(self, u: np.ndarray) -> np.ndarray:
        """Lengths at the uniform draws ``u`` (inverse transform: each u's quantile), in tokens, not rounded."""
        from statistics import NormalDist

        b = self._b()
        top = 1.0 if math.isinf(b) else _normal_cdf(b)
        inv = NormalDist().inv_cdf
        return np.exp(self.mu + self.s * np.fromiter((inv(min(max(v * top, 1e-300), 1 - 1e-16)) for v in u), float))


#: The widest spread a truncated fit searches (s = 10: the truncated ratio reaches over 98% of its power-law bound
#: at the slots a review sizes; past it ``LongTailError``)
MAX_TRUNCATED_SPREAD = 10.0
#: Halvings of each bisection of ``length_fit`` (the intervals fall below 1e-12 of their start well before)
_FIT_STEPS = 100
#: Golden-section steps of ``_truncated_peak_spread`` (0.618^60 of 10: under 1e-11)
_PEAK_STEPS = 60


@functools.cache
def length_fit(
    mean_tokens: float, high_tokens: float, high_percentile: float, slot_tokens: float = math.inf, what: str = ""
) -> LengthFit | LengthMixture:
    """The distribution a length is drawn from, given its mean m and high percentile h (docs/export.md, "Two
    contexts"). Where a slot T = ``slot_tokens`` above h is known (the sequence length memory is sized for: high
    prompt + high output), the lognormal truncated at T whose truncated mean is m and whose q-quantile is h, for
    every h / m above 1 up to exp(z^2 / 2) (3.87 at p95; no length longer than the slot, and the stated mean and
    percentile held exactly): for each s, Phi(a) = q Phi(a + ln(T / h) / s) gives a (bisected; the left side over
    the right rises with a), mu = ln h - s a (``_truncated_fit_at``); then s is bisected on the mean over (0, the s
    where the mean is least] (``_truncated_peak_spread``), where it falls as s grows (the root that tends to the
    untruncated fit as T grows). Where no slot is known, the lognormal with s = z - sqrt(z^2 - 2 ln(h / m)),
    mu = ln m - s^2 / 2 (``lognormal_spread``), which exists where h / m <= exp(z^2 / 2); and that too where a slot
    is so close to h that no truncated lognormal reaches h / m (``truncated_ratio_bound``: T / h = 1.01 reaches 1.18
    at p95, 1.1 2.58): the truncated family cannot hold so many lengths near the slot, the untruncated fit holds m
    and h with a tail past it. Past exp(z^2 / 2), with a slot above h: the two-part distribution
    (``planner.serving.length_mixture``: a lognormal body of the share q up to h and a long-request component of the
    share 1 - q between h and T, of the shape this function fits at the bound, its log-location solved for m), up to
    just under Markov's 1 / (1 - q) (18.8 to 20 at p95, by the shape; the MoE capacity planner's trial F5: 1,000 / p95
    6,000 in 16,000 tokens; it replaced the lognormal truncated at the slot there, which reached only 4 to 6 at p95 and
    drew shapes of s = 5 where the slot was near h). ``LongTailError`` naming the ratio where none fits (h / m past
    exp(z^2 / 2) with no slot or a slot at most h, or past the two-part distribution's reach). Trial 27 F12: 3,000 / p95
    12,000 output tokens in a 16,000-token slot (a ratio of 4.00: the two-part distribution, s = 2.311 the truncated
    fit's at a mean of 12,000 / 3.87 = 3,102); 400 / p95 1,200 in 4,200: s = 0.9229, mu = 5.5837 (untruncated: 0.9319,
    5.5573)."""
    m, h = float(mean_tokens), float(high_tokens)
    if not (m > 0 and h > 0):
        raise InvalidInputError(f"lengths must be positive numbers of tokens; got mean {m!r}, high {h!r}")
    if h <= m:
        return LengthFit(math.log(m), 0.0)
    if h / m <= lognormal_ratio_bound(high_percentile):
        return _lognormal_fit(m, h, high_percentile, slot_tokens)
    if not (math.isfinite(slot_tokens) and slot_tokens > h):  # nothing to hold the long requests within
        raise LongTailError(m, h, high_percentile, what=what)
    fit = mixture_fit(m, h, high_percentile, slot_tokens, _bound_spread(h, high_percentile, float(slot_tokens)))
    if fit is None:
        raise LongTailError(m, h, high_percentile, slot_tokens, what)
    return fit


def _lognormal_fit(m: float, h: float, high_percentile: float, slot_tokens: float) -> LengthFit:
    """``length_fit`` where h / m is within exp(z^2 / 2): the lognormal truncated at the slot where it reaches the
    ratio, else the untruncated one (s = z at the bound itself, where ``lognormal_spread``'s rounding may read the
    ratio just past it)."""
    if (
        math.isfinite(slot_tokens)
        and slot_tokens > h
        and h / m <= truncated_ratio_bound(h, high_percentile, slot_tokens)
    ):
        lo, hi = 1e-9, _truncated_peak_spread(h, high_percentile, float(slot_tokens))
        for _ in range(_FIT_STEPS):
            s = (lo + hi) / 2.0
            lo, hi = (s, hi) if _truncated_fit_at(s, h, high_percentile, slot_tokens).mean_tokens > m else (lo, s)
        return _truncated_fit_at((lo + hi) / 2.0, h, high_percentile, slot_tokens)
    z = _normal_quantile(high_percentile / 100.0)
    s = z if h / m >= lognormal_ratio_bound(high_percentile) else lognormal_spread(m, h, high_percentile)
    return LengthFit(math.log(m) - s * s / 2.0, s)


@functools.cache
def _bound_spread(high_tokens: float, high_percentile: float, slot_tokens: float) -> float:
    """The two-part distribution's shape at h and T: the s ``length_fit`` fits at the bound, mean h / exp(z^2 / 2)
    (``planner.serving.length_mixture``: so the distribution is continuous across the bound)."""
    bound = lognormal_ratio_bound(high_percentile)
    return _lognormal_fit(high_tokens / bound, high_tokens, high_percentile, slot_tokens).s


def long_tail_ratio_bound(high_tokens: float, high_percentile: float, slot_tokens: float) -> float:
    """The largest high / mean ``length_fit`` fits at h = ``high_tokens`` in T = ``slot_tokens``: the two-part
    distribution's reach (``mixture_ratio_bound``, just under 1 / (1 - q): 18.8 to 20 at p95); exp(z^2 / 2) where
    T <= h."""
    if not slot_tokens > high_tokens:
        return lognormal_ratio_bound(high_percentile)
    s = _bound_spread(float(high_tokens), high_percentile, float(slot_tokens))
    return mixture_ratio_bound(high_tokens, high_percentile, slot_tokens, s)


def spread_lengths(
    prompt_mean_tokens: float,
    prompt_high_tokens: float,
    output_mean_tokens: float,
    output_high_tokens: float,
    high_percentile: float,
    num_requests: int = DEFAULT_REQUESTS,
    max_tokens: float = math.inf,
    seed: int = ARRIVAL_SEED,
) -> list[tuple[int, int]] | None:
    """Each request's (prompt, output) tokens drawn around a workload's means and high percentile, prompt and
    output independent, each from its own fit (``length_fit``: the one that sets the context in flight,
    docs/export.md "Two contexts"), seeded, so the same inputs give the same requests. A request's prompt + output is
    capped at ``max_tokens`` (the context the model admits: the prompt at most ``max_tokens`` - 1, the output cut to
    what is left): the fit's tail past it cannot be sent. None where both high lengths equal their means: every
    request at the means (``fixed_lengths``).

    Each length is fitted truncated at the slot T = high prompt + high output (``length_fit``, wherever the truncated
    family reaches its high / mean within the lognormal's bound: all but slots within a few percent of a high length;
    past the bound, the two-part mixture within T, ``planner.serving.length_mixture``, drawn by inverse transform as a
    truncated fit is). Where either fit is truncated, both are drawn by inverse transform (a prompt and an output each
    from its own uniform stream), the drawn means and percentiles the stated ones within sampling error (trial 27 F12:
    3,000 / p95 12,000 output tokens drew p95 10,686 and a request of 163,840 with an untruncated s = z), and, where
    both are truncated, each request's prompt + output capped at T as well (the smaller of T and ``max_tokens``), so no
    request is longer than the slot memory is sized for; an untruncated one (its slot too close to its high length) is
    not cut at T, which would draw it short of its mean (trial 28 F16: 1,500 / p95 5,800 prompts cut at 7,000 tokens
    drew 1,108). That cap cuts about 1% of requests (that trial's 1,000 / p95 4,000 prompts with those outputs in
    16,000: 1.3%, the output's mean and p95 about 0.9% below the fit's, so the context in flight the fit gives is that
    much on the long side). Where neither is truncated (a slot too close to a high length for any truncated lognormal):
    lognormal through ``lognormal_lengths`` (cv = sqrt(exp(s^2) - 1)), capped at ``max_tokens`` only. ``LongTailError``
    where no lognormal fits either."""
    if prompt_high_tokens <= prompt_mean_tokens and output_high_tokens <= output_mean_tokens:
        return None
    slot = float(prompt_high_tokens + output_high_tokens)
    fits = [
        length_fit(m, h, high_percentile, slot, what)
        for m, h, what in (
            (prompt_mean_tokens, prompt_high_tokens, "prompt"),
            (output_mean_tokens, output_high_tokens, "output"),
        )
    ]
    if not any(f.truncated for f in fits):
        cvs = [math.sqrt(math.expm1(f.s**2)) for f in fits]
        drawn = lognormal_lengths(
            prompt_mean_tokens, output_mean_tokens, num_requests, cv=cvs[0], output_cv=cvs[1],
            max_tokens=max(max_tokens - 1, 1), seed=seed,
        )  # fmt: skip
    else:
        n = _whole(num_requests, "num_requests")
        if all(f.truncated for f in fits):  # an untruncated fit (a slot too close to its high length) is not cut
            max_tokens = min(max_tokens, slot)  # at the slot: that would draw it short of its mean (trial 28 F16)
        rng = np.random.default_rng([seed, 3])
        uniforms = rng.random((2, n))
        cols = [
            np.clip(np.round(f.draw(u)), 1, max(max_tokens - 1, 1)).astype(int)
            for f, u in zip(fits, uniforms, strict=True)
        ]
        drawn = list(zip(cols[0].tolist(), cols[1].tolist(), strict=True))
    return [(p, max(min(o, int(max_tokens - p)), 1)) for p, o in drawn] if math.isfinite(max_tokens) else drawn


def spread_fit_note(
    prompt_mean_tokens: float,
    prompt_high_tokens: float,
    output_mean_tokens: float,
    output_high_tokens: float,
    high_percentile: float,
    slot_tokens: float | None = None,
) -> str:
    """Where a length of ``spread_lengths`` is beyond any lognormal (high / mean > exp(z^2 / 2)), the sentence that
    says so: the ratio, the bound, the two-part mixture within the slot that holds the stated mean and high length
    (``planner.serving.length_mixture``: its shares, the body's median, the long requests' mean and the shape s);
    "" where both are within it. Every surface that draws or times on the spread says it (planner plan
    --rate's lengths line, the review's Warnings and Assumptions). ``slot_tokens``: the slot (None: the two high
    lengths' sum, as ``spread_lengths`` takes it; a review whose prompts are not drawn passes its own)."""
    slot = float(prompt_high_tokens + output_high_tokens if slot_tokens is None else slot_tokens)
    q = f"p{high_percentile:g}"
    said = []
    for what, m, h in (
        ("prompt", prompt_mean_tokens, prompt_high_tokens),
        ("output", output_mean_tokens, output_high_tokens),
    ):
        f = length_fit(m, h, high_percentile, slot, what)
        if isinstance(f, LengthMixture):  # within the bound: a lognormal (truncated or not), said nowhere
            body, long = 100.0 - f.long_share * 100.0, f.long_share * 100.0
            bound = lognormal_ratio_bound(high_percentile)
            # plain words first, for a reader who is no statistician (trial 34 F8); the fit's detail after
            said.append(
                f"{what}: the {q} of {h:,.0f} tokens is {h / m:.2f} x the mean of {m:,.0f}, a longer tail than usual "
                f"request lengths have (at most {bound:.2f} x the mean at {q}); it is sized as stated, with {long:g}% "
                f"of requests long, between {h:,.0f} and {slot:,.0f} tokens (mean {f.long_mean_tokens:,.0f}); if "
                f"the {q} was a guess, check it, as the memory each request is sized for is the {q} prompt + {q} "
                f"output ({slot:,.0f} tokens) (detail: beyond any lognormal's {q} / mean, so drawn from a two-part "
                f"mixture within the {slot:,.0f}-token slot: {body:g}% of requests from a lognormal body up to "
                f"{h:,.0f} tokens (median {f.body_median_tokens:,.0f}), {long:g}% from a long-request component "
                f"(s = {f.s:.3f} both), whose mean and {q} are the stated ones)"
            )
    return "; ".join(said) + f"; no request is longer than {slot:,.0f} tokens" if said else ""


def resampled_lengths(
    prompt_tokens: Any, output_tokens: Any, num_requests: int = DEFAULT_REQUESTS, seed: int = ARRIVAL_SEED
) -> list[tuple[int, int]]:
    """Each simulated request's (prompt, output) tokens drawn from a sample's rows (a lengths file's:
    ``planner.io.lengths``): ``num_requests`` rows drawn uniformly with replacement, seeded (the same sample and seed
    give the same requests, as ``spread_lengths``' draws), a row's prompt and output kept together (a long prompt's
    own output, not another row's). Only the sample's values are drawn; its means and percentiles are the drawn
    requests' within sampling error (each mean's standard error the column's standard deviation / sqrt(n))."""
    p, o = np.asarray(prompt_tokens, dtype=np.int64), np.asarray(output_tokens, dtype=np.int64)
    if p.ndim != 1 or p.shape != o.shape or not len(p):
        raise InvalidInputError("a length sample is two columns of the same number of rows, at least one")
    if (p < 1).any() or (o < 1).any():
        raise InvalidInputError("a length sample's lengths are whole tokens of 1 or more")
    n = _whole(num_requests, "num_requests")
    rows = np.random.default_rng([seed, 5]).integers(0, len(p), n)
    return list(zip(p[rows].tolist(), o[rows].tolist(), strict=True))


#: Where a shipped sample of a dataset's requests is described (``DatasetLengths.sample_file``), for a reader.
SAMPLE_SOURCES = {
    "sharegpt_vllm_seed0_requests.csv": (
        "vLLM's seed-0 ShareGPT sample (vllm bench serve --dataset-name sharegpt: the dataset shuffled with seed 0), "
        "the first 200 requests' prompt and output tokens from one published result file (vLLM 0.8.3, "
        "Llama-3.3-70B-Instruct, Llama 3 tokenizer; catalogs/reference/sharegpt_vllm_seed0_requests.csv, each row "
        "citing it), cycled past 200; planner.accuracy.datasets describes it"
    ),
}


@functools.cache
def dataset_sample(sample_file: str) -> tuple[tuple[int, int], ...]:
    """The (prompt, output) tokens of each request of a shipped sample (``catalogs/reference/<sample_file>``,
    columns index, prompt_tokens, output_tokens), in the order sent (by index)."""
    import csv

    from planner.catalog.loader import shipped_catalog_dir

    with open(shipped_catalog_dir() / "reference" / sample_file, encoding="utf-8-sig", newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["index"]))
    return tuple((int(r["prompt_tokens"]), int(r["output_tokens"])) for r in rows)


def dataset_lengths(name: str, num_requests: int, client: str = "vllm") -> list[tuple[int, int]]:
    """A named dataset's requests (``dataset_statistics``): a benchmark's fixed default lengths, its default uniform
    draw (``range_ratio_lengths`` of the maxima, as ``client`` reads the ratio), a shipped sample's requests in the
    order its client sent them, cycled past its end (``dataset_sample``: ShareGPT as ``vllm bench serve`` sends it,
    means 213 / 212 Llama 3 tokens where the paper's OPT means are 161 / 338), or else a dataset's published means
    (every request at the means, so the percentiles are narrower than the dataset's spread; ``lognormal_lengths``
    gives them one). ``InvalidInputError`` naming the missing length where the dataset publishes no mean of it
    (OpenOrca's prompts)."""
    d = dataset_statistics(name, client)
    if d.kind == "uniform":
        return range_ratio_lengths(d.prompt_max_tokens, d.output_max_tokens, num_requests, d.range_ratio, d.client)
    if d.sample_file:
        sample = dataset_sample(d.sample_file)
        return [sample[i % len(sample)] for i in range(_whole(num_requests, "num_requests"))]
    _check_published(name, d)
    return fixed_lengths(d.prompt_mean_tokens, d.output_mean_tokens, num_requests)


class NoPublishedLengthError(InvalidInputError):
    """Raised when a named dataset publishes no mean of a length a run needs (OpenOrca's prompts, CNN/DailyMail's
    prompts and outputs): ``missing`` names them ("prompt", "output"); the run must state them instead."""

    def __init__(self, name: object, missing: list[str], hint: str = "give the lengths instead"):
        self.name, self.missing = str(name), list(missing)
        super().__init__(
            f"dataset {str(name)!r} publishes no mean {' or '.join(missing)} length (planner.serving.load.DATASETS "
            f"cites what its source states); {hint}"
        )


def _check_published(name: str, d: DatasetLengths) -> None:
    """``NoPublishedLengthError`` where ``d`` (of the dataset ``name``) lacks a mean and is not a draw of maxima."""
    if d.kind == "uniform":
        return
    missing = [w for w, m in (("prompt", d.prompt_mean_tokens), ("output", d.output_mean_tokens)) if m is None]
    if missing:
        raise NoPublishedLengthError(name, missing)


def shared_prefix_hit_rate(
    name: str, prompt_tokens: float, num_requests: int = DEFAULT_REQUESTS, block_tokens: int | None = None
) -> float:
    """The share of each prompt the prefix cache holds, as a mean over a run of ``num_requests``, when each request
    begins with its group's shared prefix (``DatasetLengths.prefix_tokens``, ``prefix_groups`` groups): each group's
    first request computes it, the others find it cached, so

        hit = cached / P x max(N - groups, 0) / N,   cached = floor(min(prefix, P - 1) / B) x B

    B = ``block_tokens`` (None: ``VLLM_BLOCK_TOKENS``, 16): vLLM caches whole blocks only and always computes a
    prompt's last token (``warm_prompt_fraction``); give 1 for a cache that matches token by token (SGLang's radix
    cache, Zheng et al., SGLang, arXiv:2312.07104, 2023). vLLM's ``SonnetDataset.sample``
    (vllm/benchmarks/datasets/sonnet.py, commit 237145e, 2025) builds every prompt as the chat template around "Pick
    as many lines as you can from these poem lines:" and the poem's first round((prefix_len - base_offset) / mean
    line) lines, then random lines, keeping prompts of at most input_len tokens: the first ``prefix_len`` (200) of
    each ~550 are the same in every request, so after the first a request finds 192 of them cached (12 blocks of
    16). SGLang's generated-shared-prefix sends ``--gsp-num-groups`` (64) system prompts of 2,048 tokens, each before
    ``--gsp-prompts-per-group`` (16) questions. Assumptions: requests sent while a group's first is still prefilling
    count as hits (the cache fills one prefill later), and nothing cached is evicted. 0 for a dataset without a
    shared prefix. The simulation applies the mean to every request (``RunBehaviour.cached_fraction``)."""
    d = DATASETS[dataset_statistics_key(name)]
    n = _whole(num_requests, "num_requests")
    b = VLLM_BLOCK_TOKENS if block_tokens is None else _whole(block_tokens, "block_tokens")
    p = float(prompt_tokens)
    if not p >= 1 or math.isinf(p):
        raise InvalidInputError(f"prompt_tokens {prompt_tokens!r} is not a number of tokens of 1 or more")
    if not d.prefix_tokens or not n or not b:
        return 0.0
    cached = min(d.prefix_tokens, round(p) - 1) // b * b
    return cached / round(p) * max(n - d.prefix_groups, 0) / n


def dataset_statistics_key(name: str) -> str:
    """The canonical ``DATASETS`` key of a dataset name or alias (any case); ``UnknownDatasetError`` otherwise."""
    canonical = _DATASET_KEYS.get(str(name).strip().lower())
    if canonical is None:
        raise UnknownDatasetError(name)
    return canonical


#: How a benchmark client is named to a reader: its command.
CLIENT_COMMANDS = {"vllm": "vllm bench serve", "sglang": "sglang.bench_serving"}


@dataclass(frozen=True)
class DatasetLoad:
    """A named dataset's traffic as a load simulation takes it: each request's (prompt, output) tokens
    (``dataset_lengths``), their means (tokens; the step times are tabulated at them), the prefix cache's mean hit
    (``shared_prefix_hit_rate``), the client whose defaults drew them, and the source of the lengths (a shipped
    sample's, ``SAMPLE_SOURCES``, else the statistics').

    ``at_means``: every request at the same lengths, the dataset's means where it publishes only those (its
    percentiles narrower than the dataset's own spread), or a benchmark's fixed lengths."""

    name: str
    client: str
    lengths: list[tuple[int, int]] = field(repr=False)
    prompt_mean_tokens: float
    output_mean_tokens: float
    prefix_hit_rate: float
    source: str

    @property
    def longest_tokens(self) -> int:
        return longest_request_tokens(self.lengths)

    @property
    def at_means(self) -> bool:
        return len(set(self.lengths)) == 1


def longest_request_tokens(lengths: list[tuple[int, int]]) -> int:
    """The most tokens one request of ``lengths`` holds (prompt + output): what a context must fit."""
    return max(p + o for p, o in lengths)


def dataset_load(name: str, num_requests: int = DEFAULT_REQUESTS, client: str | None = None) -> DatasetLoad:
    """The traffic of ``num_requests`` requests of the dataset ``name`` as ``client``'s defaults send it (None: the
    dataset's own client, ``DatasetLengths.client``, else vLLM's): ``dataset_lengths``, their means and
    ``shared_prefix_hit_rate`` at the mean prompt. ``UnknownDatasetError`` for a name not in ``DATASETS``;
    ``NoPublishedLengthError`` (naming what is missing) for a dataset without a published mean length."""
    canonical = dataset_statistics_key(name)
    who = str(client or DATASETS[canonical].client or "vllm").strip().lower()
    d = dataset_statistics(canonical, who)
    _check_published(canonical, d)
    lengths = dataset_lengths(canonical, num_requests, who)
    prompt_mean = float(np.mean([p for p, _ in lengths]))
    output_mean = float(np.mean([o for _, o in lengths]))
    hit = shared_prefix_hit_rate(canonical, prompt_mean, len(lengths))
    source = SAMPLE_SOURCES.get(d.sample_file, d.source) if d.sample_file else d.source
    return DatasetLoad(canonical, who, lengths, prompt_mean, output_mean, hit, source)


#: The columns of planner's own trace (``trace_load``): each request's arrival, seconds (any origin: the first becomes
#: 0), and its prompt and output tokens.
TRACE_COLUMNS = ("arrival_s", "prompt_tokens", "output_tokens")

#: Mooncake's KV-cache block, tokens: each of a request's ``hash_ids`` names one block of its prompt, the last one
#: partial (``conversation_trace.jsonl``'s first request: input_length 6,758, 14 hash_ids = ceil(6,758 / 512); NVIDIA
#: Dynamo ``benchmarks/data_generator/README.md``: "the block_size (the page size of the KV cache) is assumed to be
#: 512").
MOONCAKE_BLOCK_TOKENS = 512


@dataclass(frozen=True)
class TraceFormat:
    """A published trace's columns and the unit of its arrival column: "s" (seconds), "ms" (milliseconds) or
    "datetime" (a date and time, ISO 8601: "2023-11-16 18:15:46.6805900"); ``source``: where the format is stated."""

    name: str
    arrival: str
    prompt: str
    output: str
    arrival_unit: str
    source: str

    @property
    def columns(self) -> tuple[str, str, str]:
        return (self.arrival, self.prompt, self.output)

    def columns_text(self) -> str:
        """ "timestamp, input_length, output_length (milliseconds, tokens, tokens)"."""
        unit = {"s": "seconds", "ms": "milliseconds", "datetime": "a date and time"}[self.arrival_unit]
        return f"{', '.join(self.columns)} ({unit}, tokens, tokens)"


#: The trace formats ``trace_load`` reads, by their columns (the first whose three columns a file has):
TRACE_FORMATS = (
    TraceFormat("planner's own", *TRACE_COLUMNS, "s", "planner: arrival_s seconds from any origin"),
    TraceFormat(
        "Mooncake",
        "timestamp",
        "input_length",
        "output_length",
        "ms",
        "kvcache-ai/Mooncake FAST25-release/README.md and traces/*.jsonl (2025-02): JSON Lines of timestamp, "
        "input_length, output_length, hash_ids; timestamp 'the arrival time (in milliseconds) of the request since "
        "the first request' (NVIDIA Dynamo benchmarks/data_generator/README.md, which reads that format)",
    ),
    TraceFormat(
        "Azure LLM inference (2023, 2024)",
        "TIMESTAMP",
        "ContextTokens",
        "GeneratedTokens",
        "datetime",
        "Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md and AzureLLMInferenceDataset2024.md, Schema: "
        "TIMESTAMP 'Invocation time', ContextTokens, GeneratedTokens; data/AzureLLMInferenceTrace_code.csv's rows "
        "read '2023-11-16 18:17:03.9799600,4808,10'",
    ),
)


def trace_formats_text() -> str:
    """Every format ``trace_load`` reads, for a refusal: "arrival_s, prompt_tokens, output_tokens (seconds, tokens,
    tokens), or Mooncake's timestamp, ... , or ..."."""
    first, *rest = TRACE_FORMATS
    return ", or ".join([first.columns_text(), *(f"{f.name.split(' (')[0]}'s {f.columns_text()}" for f in rest)])


def trace_format(columns: Any) -> TraceFormat | None:
    """The first of ``TRACE_FORMATS`` whose three columns are all among ``columns``; None where none is."""
    have = set(columns)
    return next((f for f in TRACE_FORMATS if set(f.columns) <= have), None)


def _arrival_s(text: Any, unit: str) -> float:
    """A trace's arrival as seconds from its own origin: seconds as given, milliseconds / 1,000, a date and time as
    seconds since 1970 (its time zone where it states one, else read as UTC: only differences are used); NaN where
    it does not read."""
    text = str(text).strip()
    try:
        if unit == "datetime":
            when = datetime.fromisoformat(text)  # Python 3.11: a space or "T", any fraction digits (7 read as 6)
            return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
        return float(text) / (1000.0 if unit == "ms" else 1.0)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def _block_ids(text: Any) -> list[int] | None:
    """A Mooncake row's hash_ids (a JSON list of whole numbers, as the JSON Lines reader gives it: "[0, 1, 2]") as
    ints; None where it is no such list."""
    try:
        ids = json.loads(str(text))
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(ids, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in ids):
        return None
    return ids


def repeated_block_hit_rate(prompts: list[int], blocks: list[list[int]], block_tokens: int) -> float:
    """The share of all prompt tokens a prefix cache holds when each request's leading blocks were seen in an
    earlier request (in arrival order): for each request, its longest run of leading ``blocks`` ids seen before,
    x ``block_tokens``, at most its prompt less one token (vLLM V1 ``KVCacheManager.get_computed_blocks``: "When all
    tokens hit the cache, we must recompute the last token to obtain logits"), summed over requests and divided by
    the prompt tokens summed. It assumes one cache that every request reaches and that keeps every block (unbounded,
    no eviction): an upper bound for a fleet whose replicas each cache only the requests dealt to them."""
    seen: set[int] = set()
    held = 0
    for prompt, ids in zip(prompts, blocks, strict=True):
        leading = next((i for i, x in enumerate(ids) if x not in seen), len(ids))
        held += min(leading * block_tokens, prompt - 1)
        seen.update(ids)
    return held / sum(prompts)


#: A gap between two arrivals of a trace this many times its median gap or more is an outlier (a late or mistyped row:
#: trial 20 appended one row 9 s after 240 that came over 5 s, median gap 0.009 s, and the fleet fell from 3 to 1).
OUTLIER_GAP_FACTOR = 100.0
#: A trace whose active span is under this many times a request's median latency is too short to reach a steady state
#: (``TraceLoad.short_note``): the number in flight settles about one latency after the start (Little's law).
STEADY_STATE_LATENCIES = 3.0
#: The window, seconds, over which a trace's busiest rate is taken (``busiest_rate_per_s``) and a rate's Poisson
#: minutes are counted (``planner.serving.fleet.poisson_minutes_past``) to warn where they pass a replica's capacity:
#: a minute, long enough that a rate above the capacity builds a queue the targets feel (a 30-s surge to 80
#: requests/s within a 60-s window reads about 55), short enough that a quiet tail does not dilute the busy part.
CAPACITY_WINDOW_S = 60.0


def outlier_gaps(arrivals_s: Any) -> np.ndarray:
    """The indices i of sorted ``arrivals_s`` whose gap to the next arrival is ``OUTLIER_GAP_FACTOR`` x the median of
    the positive gaps or more (none where fewer than 2 gaps are positive)."""
    gaps = np.diff(np.asarray(arrivals_s, dtype=float))
    positive = gaps[gaps > 0]
    if len(positive) < 2:
        return np.zeros(0, dtype=int)
    return np.flatnonzero(gaps >= OUTLIER_GAP_FACTOR * float(np.median(positive)))


def active_arrivals_s(arrivals_s: Any) -> np.ndarray:
    """Sorted ``arrivals_s`` with each outlier gap (``outlier_gaps``) shortened to the median positive gap: the
    times the trace's requests would have come without its lulls and stray rows, from which its rate is judged."""
    t = np.asarray(arrivals_s, dtype=float)
    gaps = np.diff(t)
    far = outlier_gaps(t)
    if len(far):
        gaps = gaps.copy()
        gaps[far] = float(np.median(gaps[gaps > 0]))
    return np.concatenate([t[:1], t[0] + np.cumsum(gaps)]) if len(t) else t


def busiest_rate_per_s(arrivals_s: Any, window_s: float = CAPACITY_WINDOW_S) -> float:
    """A trace's busiest window's rate, requests/s: the most requests arriving within ``window_s`` of one another /
    ``window_s``, over ``active_arrivals_s`` (outlier gaps shortened to the median, so one late row neither dilutes
    the rate nor, at 1e12 s, makes it nil); where the active span is shorter than the window, (N - 1) / that span
    (the whole trace is the window). Past a replica's capacity it is warned about, not refused (trial 24 F2: any
    long Poisson trace has a minute 10-15% above its mean); the capacity is judged at ``active_rate_per_s``.
    inf for a burst (one time)."""
    t = active_arrivals_s(arrivals_s)
    span = float(t[-1] - t[0]) if len(t) else 0.0
    if span == 0:
        return math.inf
    if span <= window_s:
        return (len(t) - 1) / span
    within = np.searchsorted(t, t + window_s, side="left") - np.arange(len(t))  # arrivals in [t_i, t_i + window)
    return float(within.max()) / window_s


def active_rate_per_s(arrivals_s: Any) -> float:
    """A trace's mean rate, requests/s, at which its capacity is judged: (N - 1) / the span of ``active_arrivals_s``
    (outlier gaps shortened to the median, so one late row does not dilute it: trial 20 F5), the steady-state
    notion the rate mode judges its rate by. A busier stretch past the capacity builds a queue that drains after
    it, which the replay simulates (trial 24 F2: a Poisson trace at 3.94/s had a minute at 4.63/s, past a
    capacity of 4.54, and was refused); its busiest minute (``busiest_rate_per_s``) is warned about, not refused.
    inf for a burst (one time)."""
    t = active_arrivals_s(arrivals_s)
    span = float(t[-1] - t[0]) if len(t) else 0.0
    return math.inf if span == 0 else (len(t) - 1) / span


@dataclass(frozen=True)
class TraceLoad:
    """A recorded traffic replayed as it came: each request's arrival (seconds from the first, sorted by (arrival,
    prompt, output), so requests that arrive together are replayed in one order whatever the file's) and (prompt,
    output) tokens, their means as a ``DatasetLoad`` has them; ``name`` says where it was read from, ``format`` in
    which of ``TRACE_FORMATS``. ``block_hit_rate``: where the trace names each prompt's KV blocks (Mooncake's
    hash_ids), the share of prompt tokens its repeated leading blocks hold (``repeated_block_hit_rate``); None where it
    names none. A burst (``is_burst``): every request at the same time, so the trace implies no rate."""

    name: str
    arrivals_s: tuple[float, ...] = field(repr=False)
    lengths: list[tuple[int, int]] = field(repr=False)
    prompt_mean_tokens: float
    output_mean_tokens: float
    format: TraceFormat = TRACE_FORMATS[0]
    block_hit_rate: float | None = None
    #: Rows that arrive before the row above them in the file (0: the file was in time order), and the file line of
    #: the first of them (0: none); ``trace_load`` sorts the arrivals either way (``order_note`` says so).
    out_of_order_rows: int = 0
    first_out_of_order_line: int = 0

    def order_note(self) -> str:
        """Where the file's rows were not in time order: how many arrive before the row above them, the first one's
        line, that they were sorted, and what that often means (logs of several servers concatenated); else ""."""
        if not self.out_of_order_rows:
            return ""
        return (
            f"arrivals were not in time order in {self.name} ({counted(self.out_of_order_rows, 'row')} earlier than "
            f"the row above it, the first on line {self.first_out_of_order_line:,}): sorted by arrival; a merge of "
            "several logs?"
        )

    @property
    def span_s(self) -> float:
        return self.arrivals_s[-1] - self.arrivals_s[0]

    @property
    def is_burst(self) -> bool:
        """Whether every request arrives at the same time (the span is 0): a burst, with no rate."""
        return self.span_s == 0

    @property
    def rate_per_s(self) -> float:
        """Requests per second over the trace: (N - 1) / the time from its first arrival to its last; infinite for a
        burst (``is_burst``), which has no rate: a reader prints none."""
        return math.inf if self.is_burst else (len(self.arrivals_s) - 1) / self.span_s

    @property
    def longest_tokens(self) -> int:
        return longest_request_tokens(self.lengths)

    @property
    def busiest_rate_per_s(self) -> float:
        """Its busiest ``CAPACITY_WINDOW_S``'s rate (``busiest_rate_per_s``): warned about where past a replica's
        capacity, the queue it builds simulated."""
        return busiest_rate_per_s(self.arrivals_s)

    @property
    def active_rate_per_s(self) -> float:
        """The rate its capacity is judged at (``active_rate_per_s``: the mean, outlier gaps shortened)."""
        return active_rate_per_s(self.arrivals_s)

    def gap_note(self) -> str:
        """Where one gap between arrivals is ``OUTLIER_GAP_FACTOR`` x the median gap or more (a late or mistyped
        row?): the largest, where it falls, and that the capacity is judged without it; else ""."""
        far = outlier_gaps(self.arrivals_s)
        if not len(far):
            return ""
        t = np.asarray(self.arrivals_s)
        gaps = np.diff(t)
        i = int(far[np.argmax(gaps[far])])
        median = float(np.median(gaps[gaps > 0]))
        return (
            f"{counted(len(far), 'gap')} between arrivals of {self.name} at least {OUTLIER_GAP_FACTOR:g}x its "
            f"median gap ({median:.3g} s); the largest, {gaps[i]:.4g} s, before request {i + 2:,} of "
            f"{len(t):,} (in arrival order): a late or mistyped row? The replay keeps it; the capacity is judged "
            f"with it shortened to the median ({active_rate_per_s(t):.3g} requests/s over its span)"
        )

    def short_note(self, latency_s: float) -> str:
        """Where the trace's active span (``active_arrivals_s``) is under ``STEADY_STATE_LATENCIES`` x ``latency_s``
        (a request's simulated median end-to-end latency): too short for the requests in flight to settle (by
        Little's law they reach their steady number about one latency after the start), so a rate past a replica's
        capacity shows no queue that grows without bound; "" elsewhere, and for a burst."""
        t = active_arrivals_s(self.arrivals_s)
        span = float(t[-1] - t[0]) if len(t) else 0.0
        if self.is_burst or not span < STEADY_STATE_LATENCIES * latency_s:
            return ""
        return (
            f"the trace's requests come over {span:.3g} s, under {STEADY_STATE_LATENCIES:g}x a request's median "
            f"latency ({latency_s:.3g} s): too short to reach a steady state, so a queue that grows without bound "
            "would not show in its replay; the capacity is judged at its rate over that span "
            f"({active_rate_per_s(t):.3g} requests/s); a longer trace shows more"
        )

    def milliseconds_hint(self) -> str:
        """Where the arrivals read as seconds look like milliseconds (a median gap of 10 s or more over a span of
        hours: 600 requests over 31.9 hours for a trace written in ms), the way to read them; else "". Only for
        planner's own format, whose column is seconds (Mooncake's is read as milliseconds, Azure's as dates)."""
        if self.format.arrival_unit != "s":
            return ""
        gaps = np.diff(np.asarray(self.arrivals_s))
        if len(gaps) and float(np.median(gaps)) >= 10.0 and self.span_s >= 10_000.0:
            return (
                f"{len(self.arrivals_s):,} requests over {self.span_s / 3600:,.1f} hours ({self.rate_per_s:.3g} "
                "requests/s): if arrival_s holds milliseconds, divide it by 1,000 (the column is seconds)"
            )
        return ""


def trace_load(rows: list[dict[str, Any]], name: str) -> TraceLoad:
    """A ``TraceLoad`` from ``rows`` (mappings, as ``csv.DictReader`` gives a file's) in one of ``TRACE_FORMATS``
    (planner's own ``TRACE_COLUMNS``, Mooncake's, Azure's): arrivals finite (any origin: the first becomes 0), tokens
    whole numbers of 1 or more; at least one request and at most ``MAX_PROMPTS`` (the most a run is simulated with).
    One request, or all at the same time, is a burst (``TraceLoad.is_burst``). A Mooncake row's hash_ids give
    ``block_hit_rate`` (``MOONCAKE_BLOCK_TOKENS`` a block). ``InvalidInputError`` names the first bad row (its line in
    a file with a header: row 1 is line 2) and what is accepted; a file in no format, every format's columns."""
    if not rows:
        raise InvalidInputError(f"{name}: no requests; give a header {','.join(TRACE_COLUMNS)} and one row a request")
    fmt = trace_format(rows[0])
    if fmt is None:
        closest = max(TRACE_FORMATS, key=lambda f: sum(c in rows[0] for c in f.columns))  # ties: planner's own
        missing = [c for c in closest.columns if c not in rows[0]]
        raise InvalidInputError(
            f"{name}: no column {', '.join(missing)}; a trace has the columns {trace_formats_text()}; the file's: "
            f"{', '.join(str(c) for c in rows[0])[:160]}"
        )
    if len(rows) > MAX_PROMPTS:
        raise InvalidInputError(f"{name}: {len(rows):,} requests; a run is simulated with at most {MAX_PROMPTS:,}")
    blocks: list[list[int]] | None = [] if fmt.name == "Mooncake" and "hash_ids" in rows[0] else None
    unit = {"s": "seconds", "ms": "milliseconds", "datetime": "a date and time"}[fmt.arrival_unit]
    times, lengths, lines = [], [], []
    for line, row in enumerate(rows, start=2):
        line = getattr(row, "line", None) or line  # a file's row knows its line (blank lines skipped)
        lines.append(line)
        t = _arrival_s(row.get(fmt.arrival), fmt.arrival_unit)
        try:
            p, o = (float(str(row.get(c)).replace(",", "").strip()) for c in (fmt.prompt, fmt.output))
        except (TypeError, ValueError):
            p = o = math.nan
        if not (math.isfinite(t) and p >= 1 and o >= 1 and p.is_integer() and o.is_integer()):
            raise InvalidInputError(
                f"{name} line {line}: {fmt.arrival} {row.get(fmt.arrival)!r}, {fmt.prompt} {row.get(fmt.prompt)!r}, "
                f"{fmt.output} {row.get(fmt.output)!r}; give {unit}, and whole tokens of 1 or more"
            )
        if blocks is not None:
            ids = _block_ids(row.get("hash_ids"))
            if ids is None:
                raise InvalidInputError(
                    f"{name} line {line}: hash_ids {str(row.get('hash_ids'))[:60]!r}; give a list of whole numbers, "
                    "one a block of the prompt"
                )
            blocks.append(ids)
        times.append(t)
        lengths.append((int(p), int(o)))
    # ties in arrival ordered by (prompt, output) tokens, so the file's row order never changes the replay (trial 20)
    order = np.lexsort((np.asarray([o for _, o in lengths]), np.asarray([p for p, _ in lengths]), np.asarray(times)))
    arrivals = np.asarray(times)[order]
    ordered = [lengths[i] for i in order]
    hit = None
    if blocks is not None:
        hit = repeated_block_hit_rate([p for p, _ in ordered], [blocks[i] for i in order], MOONCAKE_BLOCK_TOKENS)
    prompt_mean, output_mean = (float(np.mean([x[j] for x in ordered])) for j in (0, 1))
    earlier = np.flatnonzero(np.diff(np.asarray(times)) < 0) + 1  # rows before the row above them
    first = lines[int(earlier[0])] if len(earlier) else 0
    return TraceLoad(
        name, tuple((arrivals - arrivals[0]).tolist()), ordered, prompt_mean, output_mean, fmt, hit, len(earlier),
        first,
    )  # fmt: skip


#: Each request's time outside the engine's steps, seconds, for every engine: the median over (engine, source) of the
#: front-end time with which the simulation gives the published median TTFT at each sweep's lightest load (at a rate,
#: published minus simulated; in a closed loop solved for, as the front end also delays each next request:
#: ``planner.accuracy.frontend.residual_s``), over the 9 (engine, source) pairs of
#: ``catalogs/reference/load_public.csv`` (``planner.accuracy.frontend``, which judges it leaving each source out;
#: ``python bench/frontend_fit.py`` re-derives it, and a test checks it matches). 27.1 ms when closed loops were read
#: by difference too; 21.5 before TensorRT-LLM 1.x paid the per-sequence cost and chat runs' answers were read in full;
#: 22.0 before s186 read a 16-bit KV cache at its own attention rate.
FRONTEND_S = 0.0222

#: vLLM's KV-cache block (``--block-size``'s default, tokens): prefix caching keeps whole blocks only.
VLLM_BLOCK_TOKENS = 16


def warm_prompt_fraction(prompt_tokens: float, block_tokens: int = VLLM_BLOCK_TOKENS) -> float:
    """The share of a prompt found in the prefix cache when the same prompt was served before: its whole blocks
    short of the last token, floor((P - 1) / B) x B / P (vLLM V1 ``KVCacheManager.get_computed_blocks``: "When all
    tokens hit the cache, we must recompute the last token to obtain logits", so at most P - 1 tokens hit, and the
    cache keeps only full blocks of B tokens)."""
    p = float(prompt_tokens)
    if not p >= 1 or math.isinf(p):
        raise InvalidInputError(f"prompt_tokens {prompt_tokens!r} is not a number of tokens of 1 or more")
    b = _whole(block_tokens, "block_tokens")
    return math.floor((round(p) - 1) / b) * b / round(p)


# -- the run ----------------------------------------------------------------------------------------------


#: How many ``Replica.setup`` results are kept: a setup (the step times tabulated on a batch grid: two model calls of
#: ~100-300 rows, ~50 ms) does not depend on the rate, so sizing a fleet asks for the same few setups again and again
#: (examples/budget-review.toml: 450 different setups per export, 728 made while 256 were kept; a 9-option MoE
#: review 442). A ``ServingSetup`` is frozen, so sharing it is safe; one is ~11 kB (its step table).
SETUPS_KEPT = 1024
_SETUPS: dict[tuple, tuple[tuple, ServingSetup]] = {}


def _key_part(x: Any) -> Any:
    """A name or number as itself (numpy scalars as Python ones, with their type: 1 and 1.0 stay apart), anything
    else by identity."""
    if isinstance(x, np.generic):
        x = x.item()
    return (type(x).__name__, x) if x is None or type(x) in (str, int, float, bool, bytes) else ("id", id(x))


def _lengths_key(lengths: Any) -> Any:
    """Request lengths as a key part: the (prompt, output) pairs as one tuple, compared as numbers (800 and 800.0
    alike, as in the float array the setup reads), so none is converted to build the key (~30 us against ~400 us for
    1,000 pairs); where a pair is not hashable (a list, an array's row), a BLAKE2b digest of that float array."""
    if not lengths:
        return None
    pairs = tuple(lengths)
    try:
        hash(pairs)
    except TypeError:
        return hashlib.blake2b(np.asarray(lengths, dtype=float).tobytes()).digest()
    return pairs


@dataclass(frozen=True)
class Replica:
    """What serves the load: one replica of ``model`` on ``gpus`` x ``gpu`` (None: the smallest group that holds a
    request) under an engine's scheduler and limits (None: the engine's defaults on that GPU,
    ``planner.serving.benchmark``), at the given precisions (None: the model's), each request spending
    ``frontend_s`` seconds outside the engine (``FRONTEND_S``), decoding speculatively when ``speculative`` says how
    (a ``planner.serving.speculative.SpeculativeDecoding``; None: one token per step). ``chunked_prefill``: whether
    the server splits prompts across steps (None: the scheduler's default, ``Scheduler.chunked_prefill``).
    ``parallelism`` (``planner.model.parallel.PARALLELISMS``): how the group splits the model; "dp-ep" serves the
    traffic on ``gpus`` attention ranks, each taking every g-th request (``ServingSetup.ranks``); "pp" on a pipeline's
    ``gpus`` micro-batch streams, likewise."""

    gpu: Any
    model: Any
    gpus: Any = None
    scheduler: str = "vllm"
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    chunked_prefill: bool | None = None
    weight_precision: Any = None
    kv_precision: Any = None
    engine: Any = None
    calibration: Any = None
    catalog: Any = None
    frontend_s: float = FRONTEND_S
    speculative: Any = None
    parallelism: str = "tp"

    @property
    def tokens_per_step(self) -> float:
        """Output tokens a decode step emits per sequence: the acceptance length when speculating, else 1."""
        return float(self.speculative.acceptance_length) if self.speculative is not None else 1.0

    def setup(
        self, prompt_tokens: float, output_tokens: float, lengths: list | None = None, concurrency: int = 0
    ) -> ServingSetup:
        """Ready to simulate (``serving_setups``): step times tabulated at ``prompt_tokens`` / ``output_tokens`` (the
        means), slots for the shortest of ``lengths``, a closed-loop client of ``concurrency`` (0: none)."""
        if self.scheduler not in SCHEDULERS:
            raise InvalidInputError(f"scheduler {self.scheduler!r} is not known; use one of {', '.join(SCHEDULERS)}")
        key, kept = self._setup_key(prompt_tokens, output_tokens, lengths, concurrency)
        hit = _SETUPS.get(key)
        if hit is not None:
            return hit[1]
        out = self._setup(prompt_tokens, output_tokens, lengths, concurrency)
        if len(_SETUPS) >= SETUPS_KEPT:
            _SETUPS.clear()
        _SETUPS[key] = (kept, out)
        return out

    def runs_key(self, prompt_tokens: float, output_tokens: float, *asked: Any) -> tuple[tuple, tuple]:
        """(key, objects to keep alive) of this replica's runs at ``prompt_tokens`` / ``output_tokens`` (the means,
        fixed lengths) and ``asked`` (names and numbers): its ``setup`` key at those means, its front-end time and
        ``asked``; for a memo of a figure those runs give (``planner.serving.fleet.capacity_per_s``)."""
        key, kept = self._setup_key(prompt_tokens, output_tokens, None, 0)
        more = (self.frontend_s, *asked)
        return key + tuple(map(_key_part, more)), kept + more

    def _setup_key(self, prompt_tokens, output_tokens, lengths, concurrency) -> tuple[tuple, tuple]:
        """(key, objects to keep alive) of a ``setup`` call: everything ``serving_setups`` reads. The catalog and the
        calibration are the ones a None resolves to now (``$PLANNER_CATALOG``, ``$PLANNER_CALIBRATION``); objects
        other than names and numbers are keyed by identity and kept alive with the entry, so no other object can
        take their key (as ``planner.catalog.resolve._resolve_one`` does)."""
        from planner.catalog import default_catalog
        from planner.deploy import resolve_calibration  # as every model call resolves it (``deploy``)

        catalog = self.catalog or default_catalog()
        calibration = resolve_calibration(self.calibration)
        objects = (
            self.gpu, self.model, self.gpus, self.scheduler, self.max_num_seqs, self.max_num_batched_tokens,
            self.chunked_prefill, self.weight_precision, self.kv_precision, self.engine, calibration, catalog,
            self.speculative, self.parallelism,
        )  # fmt: skip
        asked = (prompt_tokens, output_tokens, len(lengths) if lengths else 0, concurrency)
        return (*map(_key_part, objects + asked), _lengths_key(lengths)), objects + asked

    def _setup(
        self, prompt_tokens: float, output_tokens: float, lengths: list | None = None, concurrency: int = 0
    ) -> ServingSetup:
        shaped = np.empty((), dtype=object)
        shaped[()] = lengths or fixed_lengths(prompt_tokens, output_tokens, 1)
        _, setups, _ = serving_setups(
            self.gpu, served_model(self.model, self.speculative, self.catalog), float(prompt_tokens), float(output_tokens), concurrency,
            len(lengths) if lengths else DEFAULT_REQUESTS, self.max_num_seqs, self.max_num_batched_tokens,
            self.scheduler, shaped, self.gpus,
            dict(weight_precision=self.weight_precision, kv_precision=self.kv_precision),
            dict(
                engine=self.engine, catalog=self.catalog, calibration=self.calibration, errors="raise",
                parallelism=self.parallelism,
            ),
            self.chunked_prefill,
        )  # fmt: skip
        if setups[0] is None:
            raise OutOfRangeError(  # does not fit (#NUM! in a cell), not a wrong kind of argument (#VALUE!)
                f"{self.gpu} cannot serve {self.model} at {int(prompt_tokens + output_tokens)} tokens a request: "
                "not one request fits; give a larger group (gpus) or shorter requests"
            )
        return speculative_setup(setups[0], self.speculative, self.model, self.weight_precision, self.catalog)

    def behaviour(self, asked: RunBehaviour = DEFAULT_BEHAVIOUR, frontend_s: float | None = None) -> RunBehaviour:
        """How this replica runs (``RunBehaviour``): ``asked`` (prefix cache, scheduler steps, stream stalls), with
        ``frontend_s`` or, when None, the replica's own front-end time; overlap scheduling when asked or when its
        engine does so by default (``overlap_scheduling``); its speculation's tokens per step."""
        front = replace(asked, frontend_s=self.frontend_s if frontend_s is None else frontend_s)
        return engine_behaviour(self.engine, self.scheduler, front, self.speculative)


def run_setup(
    replica: Replica, prompt_tokens: float, output_tokens: float, lengths: list, client: int = 0, per_rank: bool = True
) -> tuple[list, ServingSetup]:
    """The requests a run sends and its ``Replica.setup``: ``lengths`` as given, or (``per_rank``, a replica of
    several attention ranks) each sent ranks times, so that the simulated rank's share (every ranks-th) is the list
    as given (at most ``MAX_PROMPTS`` in all), as
    ``latency_under_load(requests_per_rank=True)`` sizes it; the setup's ``cap`` is then the most one rank runs at
    once (its max_num_seqs and KV cache), not its share of a short run."""
    setup = replica.setup(prompt_tokens, output_tokens, lengths, client)
    if per_rank and setup.ranks > 1:  # each request ranks times in a row: a rank's every ranks-th is the list as given
        lengths = [request for request in lengths for _ in range(setup.ranks)][:MAX_PROMPTS]
        setup = replica.setup(prompt_tokens, output_tokens, lengths, client)
    return lengths, setup


def latency_under_load(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    *,
    rate_per_s: float | None = None,
    burstiness: float = 1.0,
    concurrency: int | None = None,
    arrivals_s: Any = None,
    num_requests: int = DEFAULT_REQUESTS,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
    frontend_s: float | None = None,
    async_scheduling: bool = False,
    scheduler_steps: int = 1,
    stream_stall_s: float = 0.0,
    warm_prompts: int = 0,
    trace: RunTrace | None = None,
    requests_per_rank: bool = False,
    samples: list | None = None,
    arrival_seed: int = ARRIVAL_SEED,
) -> LoadResult:
    """Percentiles of TTFT, TPOT, ITL and end-to-end latency, and throughputs, of one replica under a load.

    Traffic: one of ``rate_per_s`` (with ``burstiness``), ``concurrency`` (a closed loop) or ``arrivals_s`` (a
    trace, seconds), or none of them (a burst: every request at 0). ``lengths``: each request's (prompt, output)
    tokens (``fixed_lengths`` of ``prompt_tokens`` / ``output_tokens`` when None; the step times are tabulated at
    ``prompt_tokens`` / ``output_tokens``, so give the means). How the client and engine behave is one
    ``RunBehaviour`` (``planner.serving.simulate`` states each setting), made by ``Replica.behaviour`` from these:
    ``prefix_hit_rate`` (its ``cached_fraction``), ``async_scheduling`` (always on for an engine that overlaps its
    steps by default, ``OVERLAP_SCHEDULING_ENGINES``: TensorRT-LLM 1.x, SGLang from 0.4), ``scheduler_steps`` (vLLM V0
    ``--num-scheduler-steps``) and ``stream_stall_s`` (0: never). vLLM's API server prepares a request in the
    process and event loop that stream the others' tokens (``vllm/v1/engine/async_llm.py``, ``AsyncLLM.generate``:
    "A separate output_handler loop runs in a background AsyncIO task", pulling outputs from EngineCore, a separate
    process whose steps go on), so it stalls up to its front-end time; not on by default: the front-end time differs
    between servers more than the stall can be known without measuring that server (``bench/load_gaps.py`` prints
    both). ``warm_prompts`` N: the run's first N requests find their prompt in the prefix cache, as a prompt
    served before does (``warm_prompt_fraction`` of the mean prompt; a sweep that sends one fixed-seed sample to
    one server again), the rest ``prefix_hit_rate`` (0: none).
    ``frontend_s``: each request's time outside the engine, seconds (None: the replica's, ``Replica.frontend_s``).
    ``trace``: a ``RunTrace`` the run fills with its steps, step table and samples (the run is simulated afresh, not
    read from the memo); None: nothing kept.
    ``requests_per_rank``: a replica of several attention ranks (``"dp-ep"``) simulates ``num_requests`` requests on
    its one simulated rank, the whole replica that many times the ranks (``lengths`` repeated), as planner's own
    sizing asks: a run of 1,000 requests gave a rank of 72 only 14, whose p99 is its slowest and whose percentiles
    jumped with the rate. Off: the run is the replica's ``num_requests`` (a published run of that many prompts).
    ``arrival_seed``: the seed of the gaps at a rate (``arrival_times_s``; ``ARRIVAL_SEED``, the run every surface
    shows, unless another draw is asked: ``planner.serving.fleet.sampling_spread``).
    ``samples``: a list the run's ``RunResult`` (its every request's samples) and the replica's ranks are appended
    to (``fleet_trace_run`` pools them); None: nothing kept.
    """
    if sum(x is not None for x in (arrivals_s, rate_per_s, concurrency)) > 1:
        raise InvalidInputError("give one of a rate, a concurrency or a trace's arrival times (none: a burst)")
    hit = float(prefix_hit_rate)
    if not 0.0 <= hit <= 1.0:
        raise InvalidInputError(f"prefix_hit_rate {prefix_hit_rate!r} is not a fraction; use 0 to 1")
    front = float(replica.frontend_s if frontend_s is None else frontend_s)
    if not 0.0 <= front < math.inf:
        raise InvalidInputError(f"frontend_s {frontend_s!r} is not a finite number of seconds of 0 or more")
    stall = float(stream_stall_s)
    if not 0.0 <= stall < math.inf:
        raise InvalidInputError(f"stream_stall_s {stream_stall_s!r} is not a finite number of seconds of 0 or more")
    warm = _whole(warm_prompts, "warm_prompts") if warm_prompts else 0
    arrivals = None
    if arrivals_s is not None:
        arrivals = np.sort(np.asarray(arrivals_s, dtype=float).ravel())
        if not len(arrivals) or not np.isfinite(arrivals).all() or arrivals[0] < 0:
            raise InvalidInputError("a trace's arrival times must be finite seconds of 0 or more, at least one")
        num_requests = len(arrivals) if lengths is None else min(len(arrivals), len(lengths))
    check_run_size(
        [_whole(num_requests, "num_requests")], [None], "num_requests"
    )  # before any per-request list is made
    if lengths is None:
        lengths = fixed_lengths(prompt_tokens, output_tokens, num_requests)
    n = min(_whole(num_requests, "num_requests"), len(lengths))
    lengths = list(lengths[:n])
    client = 0 if concurrency is None else _whole(concurrency, "concurrency")
    scheduler_steps = _whole(scheduler_steps, "scheduler_steps")
    lengths, setup = run_setup(
        replica, prompt_tokens, output_tokens, lengths, client, requests_per_rank and arrivals is None
    )
    if setup.ranks > 1:  # one rank of several: every ranks-th request, at 1 / ranks of the rate
        lengths = lengths[:: setup.ranks]
        warm = -(-warm // setup.ranks)  # the run's first N: a rank's first ceil(N / ranks)
        arrivals = arrivals[: n : setup.ranks] if arrivals is not None else None
    if rate_per_s is not None and math.isfinite(float(rate_per_s)):
        arrivals = arrival_times_s(len(lengths), float(rate_per_s) / setup.ranks, burstiness, arrival_seed)
    sent = arrivals + front if arrivals is not None else None
    asked = RunBehaviour(
        hit,
        async_scheduling=async_scheduling,
        scheduler_steps=scheduler_steps,
        stream_stall_s=stall,
        warm_prompts=warm,
        warm_fraction=warm_prompt_fraction(prompt_tokens) if warm else 0.0,
    )
    behaviour = replica.behaviour(asked, front)
    key = RunKey.of(setup, prompt_tokens, output_tokens, lengths, sent, behaviour)
    if samples is not None:  # ``fleet_trace_run``: the run with its samples, to pool with the other replicas'
        run = _sampled_run(key)
        result = _finished(run)
        if result is not None:
            samples.append((run, setup.ranks))
    else:
        result = simulated_run(key) if trace is None else _traced_run(key, trace)
    if result is None:
        raise _cannot_finish(replica, key, setup.ranks)
    return of_ranks(result, setup.ranks)


def cut_to_context(lengths: Any, context_tokens: int) -> tuple[list[tuple[int, int]] | None, int]:
    """Drawn requests ((prompt, output) tokens each) cut to fit ``context_tokens`` (``planner plan``'s --context: the
    longest sequence the engine is started with; vLLM rejects a prompt past its --max-model-len, so a request longer
    than it is never served whole). A request whose prompt + output is longer keeps its output and has its prompt
    cut to the context less the output, as an application that caps its context cuts its prompt (fewer retrieved
    documents); an output longer than the context alone is cut to the context less one token, the prompt to one.
    Returns the lengths (the same list where none is longer) and how many were cut. Trial 29 F1: 12,000 / p95 30,000
    prompts and 350 / p95 900 outputs at --context 16,384: 219 of 1,000 drawn requests cut, sized as an engine
    started with --max-model-len 16384 serves them (the fleet had been sized on the 84,598-token tail)."""
    if not lengths:
        return lengths, 0
    c = int(context_tokens)
    if c < 2:
        raise InvalidInputError(f"a context of {c:,} tokens holds no prompt and output; give 2 or more")
    cut, count = [], 0
    for p, o in lengths:
        if p + o > c:
            count += 1
            o = min(o, c - 1)
            p = min(p, c - o)
        cut.append((p, o))
    return (cut, count) if count else (lengths, 0)


def past_context_note(lengths: Any, context_tokens: float, context_words: str, engine_words: str = "") -> str:
    """Where some of the simulated requests ``lengths`` ((prompt, output) tokens each) are longer, prompt + output,
    than ``context_tokens`` (a review's slot, the high prompt + high output; ``planner plan`` cuts its
    drawn requests to its --context instead, ``cut_to_context``), the sentence that says how many: they are simulated
    as served (the KV cache's admission simulated), though an engine limited to that context would reject them
    (``engine_words``: how, where the surface names the engine's setting). ``context_words``: what the context is
    ("--context"). "" where none is longer. The drawn lengths are never cut to it: the traffic stated is what is
    simulated (trial 28 F4: 1,000 / 8,192 tokens at --context 8k, the longest 11,919, nothing said)."""
    if not lengths or not math.isfinite(float(context_tokens)):
        return ""
    totals = np.asarray(lengths, dtype=np.int64).reshape(-1, 2).sum(axis=1)
    longer = int((totals > context_tokens).sum())
    if not longer:
        return ""
    return (
        f"{longer:,} of {len(totals):,} requests are longer than {context_words} ({context_tokens:,.0f} tokens, prompt "
        f"+ output; the longest {int(totals.max()):,}): simulated as served, the KV cache's admission simulated"
        + (f"; {engine_words}" if engine_words else "")
    )


#: What to change where a request is longer than a replica's KV cache: the levers, as every refusal of it names them.
LONGER_THAN_CACHE_LEVERS = "more GPUs a replica, a GPU with more memory, or shorter requests"


class RequestLongerThanCacheError(OutOfRangeError):
    """Raised where a simulated run cannot finish because its longest request (prompt + output) is longer than the
    replica's KV cache holds (each attention rank's, ``ServingSetup.ranks``): no number of replicas of that group
    serves it, so a fleet search over groups skips the group (``planner.serving.fleet.fewest_gpus``) and refuses
    only where no group can run. ``gpus``: the replica's GPUs; ``gpu`` and ``model``: their names;
    ``longest_tokens``: the longest request's prompt + output; ``cache_tokens``: what one rank's KV cache holds;
    ``ranks``: the attention ranks sharing the replica's traffic (1 but for dp-ep and pipelines); ``message``: another
    sentence than one group's (``planner.serving.fleet.longer_than_every_cache``: every group's)."""

    def __init__(
        self,
        *,
        gpus: int,
        gpu: str,
        model: str,
        longest_tokens: int,
        cache_tokens: int,
        ranks: int = 1,
        message: str = "",
    ):
        self.gpus, self.gpu, self.model = gpus, gpu, model
        self.longest_tokens, self.cache_tokens, self.ranks = longest_tokens, cache_tokens, ranks
        super().__init__(
            message or f"{self.group} / {model}: the run cannot finish: {self.holds}; give {LONGER_THAN_CACHE_LEVERS}"
        )

    @property
    def group(self) -> str:
        """The replica's group as a plan names it: "2 x H100 SXM 80GB" (``gpus`` 0, not given: the GPU's name)."""
        return f"{self.gpus:,} x {self.gpu}" if self.gpus else str(self.gpu)

    @property
    def holds(self) -> str:
        """What the cache holds against the longest request, in words (the figures a plan prints)."""
        cache = "its KV cache" if self.ranks == 1 else f"each of its {self.ranks:,} attention ranks' KV cache"
        return (
            f"{cache} holds {self.cache_tokens:,} tokens and the longest request is {self.longest_tokens:,} "
            "(prompt + output)"
        )

    @property
    def skip_note(self) -> str:
        """The one line a group search says of the group it skipped for this."""
        return f"{self.group}: skipped, {self.holds}"


def _cannot_finish(replica: Replica, key: RunKey, ranks: int) -> RequestLongerThanCacheError:
    """The refusal of ``key``'s run, which could not finish (nothing could run: a request longer than the KV cache),
    with the longest request it sent and what the cache holds."""
    longest = int(key.lengths.sum(axis=1).max()) if len(key.lengths) else 0
    cache = key.scheduler.kv_tokens
    return RequestLongerThanCacheError(
        gpus=int(replica.gpus) if replica.gpus is not None else 0, gpu=str(getattr(replica.gpu, "name", replica.gpu)),
        model=str(getattr(replica.model, "name", replica.model)), longest_tokens=longest,
        cache_tokens=int(cache) if math.isfinite(cache) else 0, ranks=int(ranks),
    )  # fmt: skip


def fleet_trace_run(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    shares: list[tuple[Any, list[tuple[int, int]]]],
    prefix_hit_rate: float = 0.0,
) -> LoadResult:
    """A fleet of alike replicas replaying one trace, each its share (``shares``: each replica's arrival times and
    (prompt, output) tokens, as ``planner.serving.fleet.replica_shares`` deals them): every share simulated
    (``latency_under_load``), the fleet's percentiles over every request (every token for ITL) of every replica
    pooled, as one benchmark client reading all the replicas would print them. Throughputs are one replica's mean
    (the fleet's over the longest run / the replicas), the duration the longest replica's run, the requests and
    preemptions the fleet's, the peak in flight the busiest replica's. An empty share is skipped. Trial 24 F2: the
    first replica's share alone (757 of 7,200 requests over 10 replicas) gave p95 TTFT 2.44 s where the rate mode
    gave 814 ms; one share's slowest minute is not the fleet's p95."""
    runs = []
    for arrivals, lengths in shares:
        if not len(arrivals):
            continue
        latency_under_load(
            replica, prompt_tokens, output_tokens, arrivals_s=arrivals, lengths=lengths,
            prefix_hit_rate=prefix_hit_rate, samples=runs,
        )  # fmt: skip
    if not runs:
        raise InvalidInputError("a fleet's replay has no request to simulate")
    pooled = [
        tuple(np.concatenate([getattr(r.samples, m)[j] for r, _ in runs]) for j in (0, 1))
        for m in ("ttft", "tpot", "itl", "e2e")
    ]
    duration = max(r.duration_s for r, _ in runs)
    count = len(runs)
    per = [r.samples for r, _ in runs]
    ranks = runs[0][1]
    done = sum(x.requests for x in per) * ranks
    out_tokens = sum(x.output_tokens for x in per) * ranks
    in_tokens = sum(x.input_tokens for x in per) * ranks
    return LoadResult(
        ttft_s=_percentiles(pooled[0]),
        tpot_s=_percentiles(pooled[1]),
        itl_s=_percentiles(pooled[2]),
        e2e_s=_percentiles(pooled[3]),
        request_throughput_per_s=done / duration / count,
        output_tokens_per_s=out_tokens / duration / count,
        total_tokens_per_s=(out_tokens + in_tokens) / duration / count,
        duration_s=duration,
        completed=done,
        peak_running=max(r.peak_running for r, _ in runs) * ranks,
        preemptions=sum(r.preemptions for r, _ in runs) * ranks,
    )


def of_ranks(result: LoadResult, ranks: int) -> LoadResult:
    """The replica's figures from one of its ``ranks`` alike attention ranks' (``ServingSetup.ranks``): throughputs,
    requests completed, sequences running and preemptions x ranks; latencies and the run's duration as the rank's."""
    if ranks == 1:
        return result
    return replace(
        result,
        request_throughput_per_s=result.request_throughput_per_s * ranks,
        output_tokens_per_s=result.output_tokens_per_s * ranks,
        total_tokens_per_s=result.total_tokens_per_s * ranks,
        completed=result.completed * ranks,
        peak_running=result.peak_running * ranks,
        preemptions=result.preemptions * ranks,
    )


def overlap_scheduling(replica: Replica) -> bool:
    """Whether the replica's engine schedules each step while the one before runs, by default
    (``planner.serving.benchmark.overlaps_steps`` of its engine, scheduler and speculation)."""
    return overlaps_steps(replica.engine, replica.scheduler, replica.speculative is not None)


@dataclass(frozen=True)
class RunKey:
    """Everything ``simulate`` reads, as one hashable value: equal keys give the same run (the arrivals are seeded).

    The request lengths and send times are compared by a BLAKE2b digest of their bytes (a few bytes instead of
    1,000 pairs); the arrays themselves ride along uncompared, for the simulation to read."""

    table: StepTable
    scheduler: Scheduler
    prompt_tokens: int
    output_tokens: int
    num_requests: int
    client_concurrency: int | None
    behaviour: RunBehaviour
    digest: bytes  # of the lengths and of the send times (or of "none": a burst or a closed loop)
    lengths: np.ndarray = field(compare=False, repr=False)  # (N, 2) prompt and output tokens
    sent_s: np.ndarray | None = field(compare=False, repr=False)

    @classmethod
    def of(
        cls,
        setup: ServingSetup,
        prompt_tokens: float,
        output_tokens: float,
        lengths: list[tuple[int, int]],
        sent_s: np.ndarray | None,
        behaviour: RunBehaviour = DEFAULT_BEHAVIOUR,
    ) -> RunKey:
        """The key of ``setup`` serving ``lengths`` sent at ``sent_s`` (None: all at once, or a closed loop)."""
        try:  # the same pairs again (a fleet's search, a capacity's runs): converted and hashed once
            pairs, digest = _request_pairs(tuple(lengths))
        except TypeError:  # a pair not hashable (a list, an array's row): converted afresh
            pairs, digest = _request_pairs.__wrapped__(lengths)
        digest = digest.copy()
        digest.update(b"-" if sent_s is None else np.asarray(sent_s, dtype=float).tobytes())
        return cls(
            setup.table, setup.scheduler, int(prompt_tokens), int(output_tokens), len(lengths),
            setup.client_concurrency, behaviour, digest.digest(), pairs, sent_s,
        )  # fmt: skip


#: How many simulated runs are kept. ``planner export`` sizes each option again for the outlook and the levers and
#: draws its latency curve through the same runs (examples/budget-review.toml: 791 different runs, 832 simulated
#: while 512 were kept; a 9-option MoE review 755 and 849).
RUNS_KEPT = 1024


@functools.lru_cache(maxsize=64)
def _request_pairs(lengths: Any) -> tuple[np.ndarray, Any]:
    """``RunKey.of``'s reading of ``lengths``: the (N, 2) prompt and output tokens (int64, 16 bytes a request, kept
    with the run; read-only, as the runs that send the same requests share them) and a BLAKE2b hash of their bytes
    (as floats), to which the send times are added."""
    pairs = np.asarray(lengths, dtype=np.int64).reshape(-1, 2)
    pairs.flags.writeable = False
    return pairs, hashlib.blake2b(pairs.astype(float).tobytes())


@dataclass
class RunTrace:
    """What a traced run keeps (``latency_under_load``'s ``trace``), for reading it request by request: every
    scheduled step (``planner.serving.simulate.TracedStep``), the step table the steps were timed with, and the run's
    figures with every request's samples (``RunResult``). Filled by the run; empty until then."""

    steps: list = field(default_factory=list)
    table: StepTable | None = None
    run: RunResult | None = None


def _simulated(key: RunKey, trace: RunTrace | None = None) -> RunResult:
    """The run ``key`` describes, simulated (its steps appended to ``trace.steps`` when a trace is given)."""
    return simulate(
        key.table, key.scheduler, key.prompt_tokens, key.output_tokens, key.num_requests,
        arrivals_s=key.sent_s, client_concurrency=key.client_concurrency, lengths=key.lengths.tolist(),
        behaviour=key.behaviour, trace=None if trace is None else trace.steps,
    )  # fmt: skip


@functools.lru_cache(maxsize=RUNS_KEPT)
def simulated_run(key: RunKey) -> LoadResult | None:
    """The run ``key`` describes, simulated once per distinct key (a ``LoadResult`` holds floats only and is frozen,
    so sharing it is safe); None when it cannot finish (a request longer than the KV cache)."""
    return _finished(_simulated(key))


#: How many runs ``_sampled_run`` keeps with their samples: a fleet's replay of a trace (``fleet_trace_run``) asks for
#: every replica's share at each replica count and multiple of the trace it tries, and its margin and limit lines ask
#: again.
SAMPLED_RUNS_KEPT = 256


@functools.lru_cache(maxsize=SAMPLED_RUNS_KEPT)
def _sampled_run(key: RunKey) -> RunResult:
    """The run ``key`` describes with every request's samples (``RunResult.samples``), simulated once per key."""
    return _simulated(key)


def _traced_run(key: RunKey, trace: RunTrace) -> LoadResult | None:
    """``simulated_run`` of ``key`` simulated afresh (a memoised run kept no steps), filling ``trace``."""
    trace.steps.clear()
    trace.table = key.table
    trace.run = _simulated(key, trace)
    return _finished(trace.run)


def _finished(run: RunResult) -> LoadResult | None:
    """The figures of ``run``; None when it could not finish (NaN duration: a request longer than the KV cache)."""
    return None if math.isnan(run.duration_s) else _result(run)


def rate_sweep(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rates_per_s: Any,
    *,
    burstiness: float = 1.0,
    num_requests: int = DEFAULT_REQUESTS,
) -> list[LoadResult | None]:
    """``latency_under_load`` at each rate of ``rates_per_s`` (requests/s, fixed lengths at the means; the replica's
    front-end time), the step times tabulated once for all of them; None for a rate whose run cannot finish. Runs go through the same memo
    (``simulated_run``), so a rate ``latency_under_load`` was asked before (a fleet's planned peak) is not simulated
    again."""
    n = _whole(num_requests, "num_requests")
    check_run_size([n], [None], "num_requests")
    lengths = fixed_lengths(prompt_tokens, output_tokens, n)
    setup = replica.setup(prompt_tokens, output_tokens, lengths)
    lengths = lengths[:: setup.ranks]  # one rank's requests (``latency_under_load``)
    behaviour = replica.behaviour()
    out: list[LoadResult | None] = []
    for rate in np.asarray(rates_per_s, dtype=float).ravel():
        if not 0 < rate < math.inf:
            raise InvalidInputError(f"rate {rate!r} is not a positive finite number of requests per second")
        sent = arrival_times_s(len(lengths), rate / setup.ranks, burstiness) + behaviour.frontend_s
        key = RunKey.of(setup, prompt_tokens, output_tokens, lengths, sent, behaviour)
        run = simulated_run(key)
        out.append(None if run is None else of_ranks(run, setup.ranks))
    return out


def _percentiles(samples: tuple[np.ndarray, np.ndarray]) -> Percentiles:
    values, counts = samples
    total = counts.sum()
    mean = float((values * counts).sum() / total) if total else math.nan
    return Percentiles(mean, *(float(x) for x in weighted_percentile(samples, np.array(PERCENTILES))))


def _result(run: RunResult) -> LoadResult:
    s: Samples = run.samples
    d = run.duration_s
    return LoadResult(
        ttft_s=_percentiles(s.ttft),
        tpot_s=_percentiles(s.tpot),
        itl_s=_percentiles(s.itl),
        e2e_s=_percentiles(s.e2e),
        request_throughput_per_s=s.requests / d,
        output_tokens_per_s=s.output_tokens / d,
        total_tokens_per_s=(s.output_tokens + s.input_tokens) / d,
        duration_s=d,
        completed=s.requests,
        peak_running=run.peak_running,
        preemptions=run.preemptions,
    )


#: What ``load_percentile`` reports: TTFT, TPOT, ITL or end-to-end latency (``LoadResult`` fields).
METRICS = ("ttft", "tpot", "itl", "e2e")
