"""What no run can beat: a published row's TTFT and TPOT checked against its GPUs' datasheet, not against the model.

A floor is arithmetic on the catalog alone, every cost but one left out, so a published figure under it says the row
is read wrong (a warm prefix cache, another GPU count or precision, a mislabelled statistic), not that the time model
is (s185: Vultr's Nemotron-Super-49B sweep, 205 ms for 50 prompts whose cold prefill needs at least 1.1 s, was the
same 50 prompts sent again to a server that caches prefixes).

- **TTFT** (serving rows; the prefills where the lengths are known: ``datasheet_floors``): a prompt's
  prefill is at least 2 x the active parameters a token multiplies (the input embedding is a row lookup, the output
  head runs once a prompt, at its last position, as vLLM computes logits) x the tokens it computes (the share its
  prefix cache holds left out: ``planner.accuracy.datasets.prefix_hit``), plus 2 x the head's, FLOP at the GPUs'
  summed peak for the weights' math (``prefill_floor_s``). Prompts sent together share that peak, so the k-th of them to get its first token waits for
  k prefills (shortest first where lengths differ: no order does better), and the later requests of a closed loop or
  a rate for at least their own. The first request of a run is left free: benchmark clients send a test or warm-up
  request first (``vllm bench serve``'s ready check, ``sglang.bench_serving``'s warm-up), which a server that caches
  prefixes keeps; so n equal prompts at once (a burst, a closed loop's first wave) average (n - 1) / 2 prefills
  (``queued_prompt_tokens``, ``prefills_per_request``). Whatever its lengths, no first token comes before a step that
  reads every active weight (the TPOT floor below): the TTFT floor is at least that read, for every request but the
  free one.
- **TPOT** (rows without speculative decoding): a decode step reads every active weight once (the input embedding's
  one row, not the table, where the head is a matrix of its own), at the GPUs' summed HBM bandwidth, at its narrowest
  format (scales not counted) (``decode_floor_s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from planner.accuracy.datasets import prefix_hit, run_requests
from planner.accuracy.published import DecodeRow
from planner.catalog import Catalog
from planner.engines.architecture import param_breakdown
from planner.errors import PlannerError
from planner.serving.benchmark import MAX_PROMPTS
from planner.serving.load import dataset_in


@dataclass(frozen=True)
class Floors:
    """A row's datasheet floors, seconds; NaN where the row gives no floor (another kind of run or figure)."""

    ttft_s: float = math.nan
    tpot_s: float = math.nan
    #: a loaded run's TTFT percentile: one request's own prefill or one read of the weights, the longer (the queue in
    #: front of it unknown); NaN as ``ttft_s``
    ttft_percentile_s: float = math.nan
    #: the whole run's seconds per output token: the fewer of what its GPUs compute (each output token's FLOP and its
    #: share of the prompts') and what its sequences in flight decode (one token each a weight read); NaN: none
    output_token_s: float = math.nan


def _weights_math(catalog: Catalog, row: DecodeRow):
    """(GPU, model, precision) facts of the row, the precision as published where the row does not name one."""
    gpu = catalog.gpu(row.gpu)
    model = catalog.model(row.model)
    precision = catalog.precision(row.weight_precision or "bf16")
    return gpu, model, precision


def floor_params(model) -> tuple[int, int]:
    """(the active parameters each computed token multiplies, the output head's): the active count less the input
    embedding (a row lookup) and the head (vocabulary x hidden, the tied embedding where there is no head of its own),
    which computes logits where a token is sampled: once a prompt, once a decoded token. Llama 2 70B: 68,452,360,192
    and 262,144,000 (32,000 x 8,192) of 68,976,648,192 active."""
    b = param_breakdown(model)
    return b.active - b.embedding - b.lm_head, b.lm_head or b.embedding


def prefill_floor_s(catalog: Catalog, row: DecodeRow, tokens: float, prompts: float = 1.0) -> float:
    """``prompts`` prompts of ``tokens`` computed tokens in all: 2 x (``floor_params``' per-token parameters x tokens
    + the head's x prompts) / (GPUs x the faster of the weights' math peak and its fallback); NaN where the GPU lists
    neither."""
    gpu, model, precision = _weights_math(catalog, row)
    peaks = gpu.peak_flop_per_s
    peak = max(peaks.get(precision.math, 0.0), peaks.get(precision.math_fallback, 0.0))
    if not peak > 0:  # a GPU with no peak for the weights' math or its fallback (bf16 on a V100): no floor
        return math.nan
    per_token, head = floor_params(model)
    return 2.0 * (per_token * tokens + head * prompts) / (peak * max(row.gpus, 1))


def decode_floor_s(catalog: Catalog, row: DecodeRow) -> float:
    """One decode step: the parameters it reads (``floor_params``: the per-token ones and the head) x the weights'
    bits / 8 B over the GPUs' summed HBM bandwidth."""
    gpu, model, precision = _weights_math(catalog, row)
    read = sum(floor_params(model))
    return read * precision.bits_per_element / 8 / (gpu.hbm_bandwidth_bytes_per_s * max(row.gpus, 1))


def queued_prompt_tokens(prompts: list[float], wave: int, at_rate: bool) -> float:
    """The mean over requests of the prompt tokens prefilled before each gets its first token (its own included), at
    least: the first ``wave`` requests sent together are served shortest first (no order finishes their prefills
    sooner), the rest each after their own, and the run's first request is free (the wave's longest prompt left out,
    whichever it was). ``at_rate``: requests arrive apart, each waits for its own alone."""
    n = len(prompts)
    if n == 0:
        return 0.0
    if at_rate:
        return (sum(prompts) - max(prompts)) / n
    first = sorted(prompts[:wave])[:-1]  # the longest is the free one
    done, total = 0.0, 0.0
    for p in first:
        done += p
        total += done
    return (total + sum(prompts[wave:])) / n


def fixed_lengths(row: DecodeRow) -> bool:
    """Whether every request of the row's run had its stated lengths: no range ratio, and a dataset cell that names
    no dataset but ``random`` (a blank one included) and does not say its lengths vary."""
    named = dataset_in(row.dataset)
    return row.length_range_ratio is None and named in (None, "random") and "variable" not in row.dataset.lower()


def _sent_together(row: DecodeRow) -> tuple[int, int]:
    """(the run's prompts, how many of them were sent at once): all of them, or a closed loop's first wave."""
    n = max(row.num_prompts or 0, 1)
    return n, n if not 0 < row.batch < n else row.batch


def prefills_per_request(row: DecodeRow) -> float:
    """``queued_prompt_tokens`` in prompts of the row's mean length, in closed form: n sent at once wait for 1, 2,
    ..., n prefills (the first free: (n - 1) / 2 on average); a closed loop's later requests and a rate's for at least
    their own."""
    n, wave = _sent_together(row)
    if row.request_rate:
        return (n - 1) / n
    return ((wave - 1) * wave / 2 + (n - wave)) / n


def datasheet_floors(catalog: Catalog, row: DecodeRow) -> Floors:
    """The row's floors (module docstring). A serving run's TTFT: its prompts' prefills where their lengths are known
    (fixed, or a published sample's: ``planner.accuracy.datasets.run_requests``, shortest first), and at least one
    read of the weights per request but the free first; its percentiles one prompt's prefill or that read. Its output
    rate's ceiling, as seconds per output token: the larger of its FLOP at peak, 2 x active parameters x (output + the
    prompt's computed tokens) / output per token (a static batch's prompts counted as cached: a latency benchmark
    repeats them), and one weight read over the sequences in flight (its batch, or all its prompts at once). NaN: a
    static batch's TTFT (a latency benchmark repeats its prompts), a run of more prompts than a simulation takes
    (``MAX_PROMPTS``: refused), and a speculative run's TPOT and in-flight read (its own reading or one the row's
    ``problem`` names: a step emits several tokens). A row's other problems (a throughput unit, a provisional
    figure) leave its times as published."""
    simulated = (row.num_prompts or 0) <= MAX_PROMPTS  # more: refused as a run (too long)
    serving = row.kind == "serving" and simulated
    if not (serving and row.input_len > 0) and row.output_len < 1:
        return Floors()
    read = decode_floor_s(catalog, row)  # a weight read
    flop, head = prefill_floor_s(catalog, row, 1.0, 0.0), prefill_floor_s(catalog, row, 0.0, 1.0)  # a token; a head
    computed = 1.0 - prefix_hit(row) if serving else 0.0  # the share of each prompt computed
    speculative = row.speculation is not None or "speculative decoding" in row.problem
    n, wave = _sent_together(row)
    ttft = one = math.nan
    if serving and row.input_len > 0:
        requests = run_requests(row) if row.length_range_ratio is None else None
        if requests is not None:
            prompts = [float(p) for p, _ in requests]
            wave_now, at_rate = min(wave, len(prompts)), bool(row.request_rate)
            ttft = flop * computed * queued_prompt_tokens(prompts, wave_now, at_rate) + head * queued_prompt_tokens(
                [1.0] * len(prompts), wave_now, at_rate
            )  # each prefill before it computes its head once
        elif fixed_lengths(row):
            one = flop * computed * row.input_len + head
            ttft = prefills_per_request(row) * one
        # whatever its tokens and lengths, a first token needs a step that reads every active weight
        ttft = read * (n - 1) / n if math.isnan(ttft) else max(ttft, read * (n - 1) / n)
        one = read if math.isnan(one) else max(one, read)
    output_token = math.nan
    if row.output_len >= 1 and simulated:
        in_flight = row.batch if row.batch > 0 else (row.num_prompts or 0)
        # every output token's forward pass and its share of the prompt's; the head once an output token (the
        # first's at the prompt's last position)
        per_token = (flop * (row.output_len + computed * row.input_len) + head * row.output_len) / row.output_len
        by_read = read / in_flight if in_flight > 0 and not speculative else math.nan
        output_token = max((x for x in (per_token, by_read) if not math.isnan(x)), default=math.nan)
    tpot = read if not speculative and row.output_len > 1 else math.nan
    return Floors(ttft_s=ttft, tpot_s=tpot, ttft_percentile_s=one, output_token_s=output_token)


def figures_and_floors(catalog: Catalog, row: DecodeRow) -> tuple[tuple[str, float, float], ...]:
    """(quantity, published s, floor s) of each figure a floor applies to: the row's means, a loaded run's TTFT and
    TPOT percentiles (its ITL is left out: a client reading several tokens at once records gaps of ~0) and its output
    rate as seconds per output token of the whole run ("output token"); NaN where the row prints no such figure or
    has no such floor."""
    f, rate = datasheet_floors(catalog, row), row.throughput_tokens_per_s
    return (
        ("TTFT", row.ttft_s, f.ttft_s),
        ("TPOT", row.tpot_s, f.tpot_s),
        ("TTFT median", row.ttft_median_s, f.ttft_percentile_s),
        ("TTFT p99", row.ttft_p99_s, f.ttft_percentile_s),
        ("TPOT median", row.tpot_median_s, f.tpot_s),
        ("TPOT p99", row.tpot_p99_s, f.tpot_s),
        ("output token", 1.0 / rate if rate > 0 else math.nan, f.output_token_s),  # the run's rate, inverted
    )


def below_floor(catalog: Catalog, row: DecodeRow) -> list[tuple[str, float, float]]:
    """(quantity, published s, floor s) of each of the row's figures under its floor (``figures_and_floors``)."""
    return [
        (name, pub, floor)
        for name, pub, floor in figures_and_floors(catalog, row)
        if not math.isnan(pub) and floor > 0 and pub < floor
    ]


def floor_note(catalog: Catalog, row: DecodeRow) -> str:
    """``planner validate``'s caveat for a row under a floor: what the figure and its floor are and what to check in
    the row; "" for a row at or above its floors, or one whose names the catalog does not resolve."""
    try:
        under = below_floor(catalog, row)
    except PlannerError:
        return ""
    if not under:
        return ""
    name, published, floor = under[0]
    check = "or are the GPUs, their count or the weights' precision not the run's?"
    if name == "output token":  # said as the rate it is
        return (
            f"published output rate {1 / published:,.0f} tok/s is above the {1 / floor:,.0f} tok/s its GPUs compute "
            "at peak or its sequences in flight decode a weight read apart: is it output tokens of the whole "
            f"server, {check}"
        )
    why = {
        "TTFT": "its prompts' prefill at the GPUs' peak FLOP/s: were they in the prefix cache already (prefix_cache "
        "warm)",
        "TPOT": "one read of the active weights at the GPUs' HBM bandwidth: was it speculative decoding",
    }[name.split()[0]]
    return f"published {name} {_ms(published)} ms is below the {_ms(floor)} ms of {why}, {check}"


def _ms(seconds: float) -> str:
    """Milliseconds to one decimal, or three significant digits below 0.1 ms (9.5 us: "0.0095", not "0.0")."""
    ms = seconds * 1e3
    return f"{ms:.3g}" if 0 < abs(ms) < 0.1 else f"{ms:,.1f}"
