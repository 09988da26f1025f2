"""Sizing rules of a deployment: pure functions over numbers, no catalog lookups, no I/O.

The capacity model (``planner.api``) says what ONE replica (a tensor-parallel group of GPUs running one copy of
the model) can do: its TPOT at each batch, whether a batch's KV cache fits, its TTFT. This module turns that
into a fleet and a bill:

    batch per replica   the batch (whose KV cache fits) that lets a replica take the most requests per second
    shared time         prompts and decode share a replica (continuous batching): taking x requests/s, it
                        spends x x TTFT of each second on prompts, so a decode step stretches to
                        TPOT / (1 - x x TTFT), which must still meet the target
    concurrency         Little's law: requests in flight = rate x (TTFT + output tokens x effective TPOT)
    replicas            ceil(peak rate / requests per second per replica) + spare replicas (N+1: spare = 1)
    GPUs                replicas x GPUs per replica, rounded up to whole nodes when bought by the node
    contexts            memory holds the high-percentile sequence; decode time follows the contexts in flight
    margin              targets are met by the pessimistic end of the predicted range: target / (1 + margin)
    monthly cost        owned: capex (GPU + its share of host server and network) / amortization months
                        + power (GPU TDP + host share) x PUE x $/kWh x 730 h + colocation $/kW-month x kW
                        cloud: GPUs x $/GPU-hour x 730 h

Every argument may be a number or a numpy array; arrays broadcast. Units are in the names: seconds, requests
per second, tokens, US dollars, watts, hours. Counts come back as floats (NaN where undefined).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from planner.model.fleet import HOURS_PER_MONTH, cloud_usd_per_gpu_month, replicas_for_rate  # noqa: F401 (sizing's names)
from planner.serving.load import length_fit

ArrayLike = float | np.ndarray

SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600.0
#: The least share of a replica's time a (margin-adjusted) TPOT goal must leave for prompts at batch 1. One
#: sequence's decode taking TPOT of a goal leaves 1 - TPOT / goal of each second for prompts, and the replicas
#: needed grow as 1 / that share (``max_rate_per_replica``): under a tenth, the fleet is ten times or more the one
#: a slightly looser goal needs, sized on a hair's difference between two predictions. Such an option is reported
#: as missing its TPOT target (``leaves_prompt_time``), not sized.
MIN_PROMPT_TIME_SHARE = 0.1


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


# -- one replica ----------------------------------------------------------------------------------------


def largest_batch_meeting(tpot_s: ArrayLike, batches: ArrayLike, tpot_target_s: ArrayLike) -> np.ndarray:
    """The largest batch whose TPOT is at most the target, along the last axis; 0 where none is.

    ``tpot_s[..., i]`` is the TPOT at ``batches[i]``, NaN where that batch's KV cache does not fit; so the
    answer is the largest batch that both fits and is fast enough. TPOT need not be monotonic in the batch.
    """
    t = _f(tpot_s)
    b = np.broadcast_to(_f(batches), t.shape)
    target = _f(tpot_target_s)
    target = target[..., None] if target.ndim else target
    ok = np.isfinite(t) & (t <= target)
    return np.max(np.where(ok, b, 0.0), axis=-1)


def concurrency(rate_per_s: ArrayLike, ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike) -> np.ndarray:
    """Requests in flight by Little's law: arrival rate x time in the system = rate x (TTFT + output tokens x TPOT).

    20 requests/s, TTFT 0.5 s, 300 output tokens at 40 ms: 20 x (0.5 + 12) = 250 requests in flight.
    """
    return _f(rate_per_s) * (_f(ttft_s) + _f(output_tokens) * _f(tpot_s))


def rate_from_concurrency(
    concurrent: ArrayLike, ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike
) -> np.ndarray:
    """Little's law solved for the rate: in-flight requests / (TTFT + output tokens x TPOT), requests per second."""
    return _f(concurrent) / (_f(ttft_s) + _f(output_tokens) * _f(tpot_s))


def prefill_share(ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike, batch: ArrayLike) -> np.ndarray:
    """Share of a replica's time spent on prompts: TTFT / (TTFT + output tokens x TPOT / batch).

    A prompt has the replica to itself for its TTFT; a decode step is shared by the whole batch, so each
    request uses output tokens x TPOT / batch of it. This splits the bill between input and output tokens, at
    the batch (and its step's TPOT) the average traffic runs (``average_batch``), where the tokens are counted.
    """
    prefill = _f(ttft_s)
    decode = _f(output_tokens) * _f(tpot_s) / _f(batch)
    return prefill / (prefill + decode)


def tpot_at_batch(tpot_by_batch_s: tuple[float, ...], batch: ArrayLike, fallback_tpot_s: float) -> np.ndarray:
    """A decode step's time at ``batch`` sequences: linear between the curve's whole batches (``tpot_by_batch_s``,
    batch 1, 2, ...; NaN where the KV cache does not fit, so the curve ends at the last batch that fits), clipped to
    its ends; ``fallback_tpot_s`` (the replica's TPOT at its own batch) where there is no curve."""
    curve = np.asarray(tpot_by_batch_s, dtype=float)
    fits = int(np.sum(np.isfinite(curve)))
    if fits == 0:
        return np.broadcast_to(_f(fallback_tpot_s), np.shape(batch)).astype(float)
    return np.interp(_f(batch), np.arange(1, fits + 1, dtype=float), curve[:fits])


#: Fixed-point steps of ``average_batch``; each moves B by at most (out x x x dTPOT/dB) of the last move, a small
#: fraction where a decode step's time grows slowly with the batch, so 60 settle it far below a sequence.
AVERAGE_BATCH_STEPS = 60


def average_batch(
    rate_per_replica: ArrayLike, ttft_s: float, output_tokens: float, tpot_by_batch_s: tuple[float, ...],
    fallback_tpot_s: float, max_batch: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(sequences in flight on one serving replica, a decode step's time at that batch) at ``rate_per_replica``
    requests/s: Little's law's fixed point B = x (TTFT + out x TPOT(B) / (1 - x TTFT)), TPOT(B) the step time at B
    (``tpot_at_batch``) stretched by the prompts in between as ``effective_tpot`` does, from B at the replica's own
    batch's TPOT (an upper bound: the step is slower at the larger batch), within [0, ``max_batch``]. By hand (the
    test): x = 1.3333 req/s, TTFT 0.1 s, 300 tokens, TPOT(B) = 22 ms + 0.2 ms x B: B = 1.3333 x (0.1 + 300 x (0.022
    + 0.0002 B) / (1 - 0.13333)) gives B = 10.28718 / 0.907692 = 11.3333, TPOT 24.27 ms."""
    x = _f(rate_per_replica)

    def step(tpot: np.ndarray) -> np.ndarray:  # Little's law at the TPOT a user sees (prompts in between)
        with np.errstate(invalid="ignore"):
            return np.clip(concurrency(x, ttft_s, output_tokens, effective_tpot(tpot, x, ttft_s)), 0.0, max_batch)

    b = step(_f(fallback_tpot_s))
    for _ in range(AVERAGE_BATCH_STEPS):
        b = step(tpot_at_batch(tpot_by_batch_s, np.maximum(b, 1.0), fallback_tpot_s))
    return b, tpot_at_batch(tpot_by_batch_s, np.maximum(b, 1.0), fallback_tpot_s)


def leaves_prompt_time(tpot_batch1_s: ArrayLike, tpot_goal_s: ArrayLike) -> np.ndarray:
    """Whether one sequence's decode leaves prompts at least ``MIN_PROMPT_TIME_SHARE`` of a replica's time:
    TPOT at batch 1 <= (1 - 0.1) x goal. 10.0 ms against a 10.03 ms goal leaves 0.3%: False."""
    return _f(tpot_batch1_s) <= (1.0 - MIN_PROMPT_TIME_SHARE) * _f(tpot_goal_s)


def max_rate_per_replica(
    prompt_s: ArrayLike,
    output_tokens: ArrayLike,
    tpot_s: ArrayLike,
    batch: ArrayLike,
    tpot_target_s: ArrayLike,
    ttft_s: ArrayLike | None = None,
) -> np.ndarray:
    """Requests per second one replica can take when prompts and decode share its time.

    Taking x requests/s, a replica spends x p of each second on prompts (p = ``prompt_s``, a prompt's
    replica time), so its decode steps stretch to TPOT_eff = TPOT / (1 - x p). Two limits on x:

    - latency: TPOT_eff <= target, so x <= (1 - TPOT / target) / p;
    - batch slots (Little's law, T = ``ttft_s``, default p): x (T + output x TPOT_eff) <= batch, whose
      boundary is the smaller root of T p x^2 - (T + output x TPOT + batch p) x + batch = 0.

    0 where the batch is 0 or even an idle replica's TPOT misses the target. With p -> 0 this is
    batch / (T + output x TPOT): the slots alone.
    """
    p, out, t, b, target = (_f(x) for x in (prompt_s, output_tokens, tpot_s, batch, tpot_target_s))
    ttft = p if ttft_s is None else _f(ttft_s)
    lin = ttft + out * t + b * p
    with np.errstate(divide="ignore", invalid="ignore"):
        slots = 2.0 * b / (lin + np.sqrt(np.maximum(lin * lin - 4.0 * ttft * p * b, 0.0)))
        latency = np.where(p > 0, (1.0 - t / target) / p, np.inf)
    x = np.minimum(slots, latency)
    return np.where(np.isfinite(x) & (x > 0) & (b > 0) & (t <= target), x, 0.0)


def best_batch(
    tpot_by_batch_s: ArrayLike, prompt_s: float, output_tokens: float, tpot_target_s: float
) -> tuple[int, float]:
    """The batch (1-based index into ``tpot_by_batch_s``, NaN where its KV cache does not fit) at which one replica
    takes the most requests per second meeting the TPOT target, and its TPOT: ``max_rate_per_replica`` with each
    prompt holding the replica for ``prompt_s`` (its TTFT too). Prompts share the replica's time with decode, so the
    largest batch meeting the target is not always best: a smaller, faster batch leaves more time for prompts. Ties go
    to the larger batch; with no target (inf) that is the largest batch that fits."""
    curve = _f(tpot_by_batch_s)
    batches = np.arange(1, len(curve) + 1, dtype=float)
    rates = max_rate_per_replica(
        prompt_s,
        output_tokens,
        np.nan_to_num(curve, nan=np.inf),
        np.where(np.isfinite(curve), batches, 0.0),
        tpot_target_s,
        ttft_s=prompt_s,
    )
    i = int(len(rates) - 1 - np.argmax(rates[::-1]))  # the largest batch among the best
    return int(batches[i]), float(curve[i])


def effective_tpot(tpot_s: ArrayLike, rate_per_replica: ArrayLike, ttft_s: ArrayLike) -> np.ndarray:
    """TPOT a user sees when the replica also processes prompts: TPOT / (1 - rate per replica x TTFT)."""
    busy = _f(rate_per_replica) * _f(ttft_s)
    with np.errstate(divide="ignore"):
        return np.where(busy < 1.0, _f(tpot_s) / (1.0 - busy), np.inf)


# -- contexts and margin ----------------------------------------------------------------------------------


def output_length_spread(
    output_mean: float, output_high: float, high_percentile: float, slot_tokens: float = math.inf
) -> float:
    """sigma (s) of the output length's fit with this mean and high percentile (``planner.serving.load.length_fit``,
    the one fit: the simulated sizing draws its lengths with it too): s = z - sqrt(z^2 - 2 ln(high / mean)) of a
    lognormal, z the normal quantile of the percentile (1.645 at p95), 0 when high = mean; where the ratio is beyond
    any lognormal's (exp(z^2 / 2) = 3.87 at p95) the shape s of the two-part mixture within ``slot_tokens`` that holds
    both (``planner.serving.length_mixture``), and ``LongTailError`` where none does (trial 27 F12: capped at z
    before, so the stated high length was dropped).
    """
    return length_fit(output_mean, output_high, high_percentile, slot_tokens, "output").s


def inflight_context_tokens(
    prompt_mean: float,
    output_mean: float,
    output_high: float,
    high_percentile: float = 95.0,
    slot_tokens: float = math.inf,
) -> float:
    """Mean context of the sequences a decode step reads under continuous batching, in tokens.

    A sequence is in flight for as long as it decodes, so the batch holds requests in proportion to their output
    length o, each on average half way through it: E[p] + E[o^2] / (2 E[o]), prompt and output independent, o from
    its fit (``planner.serving.load.length_fit``). For a lognormal output that is mean prompt + mean output x
    exp(s^2) / 2: 800 / 400 / p95 1,200 tokens with no slot: s = 0.9319, 800 + 400 x 2.3833 / 2 = 1,276.7 tokens
    (not 800 + 200). With a slot, o is the lognormal truncated at ``slot_tokens`` (the high prompt + high output
    memory is sized for) with the stated mean and high length (in a 4,200-token slot: s = 0.9229, 1,225.3 tokens),
    E[o^k] = exp(k mu + k^2 s^2 / 2)
    Phi(b - k s) / Phi(b), b = (ln slot - mu) / s: trial 27 F12's 1,000 / 3,000 / p95 12,000 in 16,000 tokens,
    past the bound (4.00), o is the two-part mixture within the slot (``planner.serving.length_mixture``; its E[o^k]
    the body's and the long requests' weighted by their shares): 1,000 + 3,873.6 = 4,874 tokens (the truncated fit
    before the MoE trial's F5: s = 2.5906, 4,921; s = z before that gave 23,444, past the slot). ``LongTailError``
    where no fit holds the ratio (past the mixture's reach, just under 1 / (1 - q), or past 3.87 with no slot).
    """
    fit = length_fit(output_mean, output_high, high_percentile, slot_tokens, "output")
    return prompt_mean + fit.half_second_moment_tokens


def range_margin(high: float) -> float:
    """The margin a fleet is sized with from a range's upper end (measured / predicted - 1 at its 90th percentile;
    ``latency_margin = "model-range"``, the default): that end, or 0 where it is below 0 (a prediction that runs slow
    is never sized for faster: docs/export.md, "Margin")."""
    return max(0.0, float(high))


def margin_target(target: ArrayLike, margin: ArrayLike) -> np.ndarray:
    """The target the central prediction must meet so that prediction x (1 + margin) meets ``target``."""
    return _f(target) / (1.0 + _f(margin))


# -- the fleet ------------------------------------------------------------------------------------------


def gpus_to_buy(replicas: ArrayLike, gpus_per_replica: ArrayLike, node_size: ArrayLike = 1) -> np.ndarray:
    """GPUs bought: whole nodes of ``node_size`` GPUs holding the replicas. A group no larger than a node runs
    floor(node / group) replicas in each (a 4-GPU replica in a 6-GPU node leaves 2 idle); a larger one spans
    group / node whole nodes (``packs_into_nodes``): ceil(replicas x group / node) x node either way where the
    group divides the node."""
    node, group, replicas = _f(node_size), _f(gpus_per_replica), _f(replicas)
    per_node = np.maximum(np.floor(node / group), 1.0)
    gpus = np.where(group <= node, np.ceil(replicas / per_node) * node, np.ceil(replicas * group / node) * node)
    return gpus[()]  # scalars in, a numpy scalar out (as np.ceil gives), not a 0-d array


def filling_text(replicas: int, needed: int, spare: int, node_size: int, unit: str) -> str:
    """The fleet's replicas by kind where rounding ``needed`` (serving + ``spare``) up to whole ``unit`` ("nodes",
    "instances") of ``node_size`` GPUs adds some (``replicas``: those the GPUs hold, ``gpus_to_buy``): "8 serving + 1
    spare + 3 filling whole 8-GPU nodes"; "" where it adds none. Trial 27 F10: "12 replicas of 2, including 1 spare"
    hid that 3 of them fill the third 8-GPU node; 30 requests/s over 11 serving replicas read 2.73 each, where the
    review plans 3.75 (30 / 8 serving)."""
    filling = replicas - needed
    if filling <= 0:
        return ""
    parts = [f"{needed - spare:,} serving"] + ([f"{spare:,} spare"] if spare else []) + [f"{filling:,} filling"]
    return f"{' + '.join(parts)} whole {node_size}-GPU {unit}"


def replicas_below(gpus: float, gpus_per_replica: int, spare_replicas: int, node_size: int = 1) -> int:
    """The most serving replicas of ``gpus_per_replica`` GPUs whose fleet, with ``spare_replicas`` and in whole nodes
    (``gpus_to_buy``), has fewer than ``gpus`` GPUs; 0 where not even one's has."""
    if not math.isfinite(gpus):
        raise ValueError(f"no finite GPU count to stay below: {gpus!r}")
    k = max(math.ceil(gpus / gpus_per_replica) - int(spare_replicas), 0)  # its fleet has at least k + spare groups
    while k > 0 and float(gpus_to_buy(k + spare_replicas, gpus_per_replica, node_size)) >= gpus:
        k -= 1
    return k


def packs_into_nodes(gpus_per_replica: int, node_size: int | None) -> bool:
    """Whether each replica of ``gpus_per_replica`` GPUs sits in one node of ``node_size`` or spans whole nodes.
    Otherwise (a 4-GPU replica in 3-GPU instances) a replica straddles a node boundary, its tensor-parallel
    all-reduces over the network, which the time model does not price. No node size given (or 1: billed per GPU):
    always."""
    if node_size is None or node_size <= 1:
        return True
    return gpus_per_replica <= node_size or gpus_per_replica % node_size == 0


def replicas_deployed(gpus: ArrayLike, gpus_per_replica: ArrayLike, node_size: ArrayLike = 1) -> np.ndarray:
    """Replicas the bought GPUs hold (node rounding can leave room for more): floor(nodes) x floor(node / group)
    for a group no larger than a node, floor(GPUs / group) for one spanning whole nodes (``gpus_to_buy``)."""
    gpus, group, node = _f(gpus), _f(gpus_per_replica), _f(node_size)
    held = np.where(group <= node, np.floor(gpus / node) * np.floor(node / group), np.floor(gpus / group))
    return held[()]


def utilization(concurrent: ArrayLike, replicas: ArrayLike, batch_per_replica: ArrayLike) -> np.ndarray:
    """Share of the fleet's batch slots in use: concurrent requests / (replicas x batch per replica)."""
    return _f(concurrent) / (_f(replicas) * _f(batch_per_replica))


def headroom(concurrent: ArrayLike, replicas: ArrayLike, batch_per_replica: ArrayLike) -> np.ndarray:
    """Share of the fleet's batch slots still free: 1 - utilization (0.25: a quarter of the slots are idle)."""
    return 1.0 - utilization(concurrent, replicas, batch_per_replica)


# -- money ----------------------------------------------------------------------------------------------


def amortized_usd_per_gpu_month(
    purchase_usd: ArrayLike,
    amortization_months: ArrayLike,
    cost_of_capital: ArrayLike = 0.0,
    residual_share: ArrayLike = 0.0,
) -> np.ndarray:
    """The capital charge a month: the level payment at the end of each of n months whose present value at the
    annual ``cost_of_capital`` r equals the purchase less the present value of ``residual_share`` x purchase
    recovered after the last month (equivalent monthly cost; the Ownership sheet discounts with the same
    (1 + r)^(-m/12)): (P - s P (1 + j)^-n) x j / (1 - (1 + j)^-n), j = (1 + r)^(1/12) - 1. At r = 0 it is straight
    line, (P - s P) / n; at r = 0 and s = 0, P / n."""
    p, n = _f(purchase_usd), _f(amortization_months)
    j = (1.0 + _f(cost_of_capital)) ** (1.0 / 12.0) - 1.0
    left = p * (1.0 - _f(residual_share) * (1.0 + j) ** -n)
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(j > 0, left * j / (1.0 - (1.0 + j) ** -n), left / n)
    return level


def level_payment_balance_share(
    amortization_months: ArrayLike, months_paid: ArrayLike, cost_of_capital: ArrayLike = 0.0
) -> np.ndarray:
    """Share of the capex the level payment (``amortized_usd_per_gpu_month``, no residual) has still to repay after
    ``months_paid`` of its n months, the hardware's book value then: (1 - (1 + j)^-(n - m)) / (1 - (1 + j)^-n),
    j = (1 + r)^(1/12) - 1; at r = 0 the straight line's (n - m) / n (60 months, 36 paid: 40%); 0 once m >= n. Its
    present value at month m plus that of the m payments made is the capex, so a horizon of m months that recovers it
    costs what m monthly charges do (trial 26 F13)."""
    n = _f(amortization_months)
    m = np.minimum(_f(months_paid), n)
    j = (1.0 + _f(cost_of_capital)) ** (1.0 / 12.0) - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(j > 0, (1.0 - (1.0 + j) ** -(n - m)) / (1.0 - (1.0 + j) ** -n), (n - m) / n)


def owned_capex_usd_per_gpu(
    gpu_usd: ArrayLike, host_server_usd: ArrayLike, networking_usd: ArrayLike, node_size: ArrayLike
) -> np.ndarray:
    """Capital per GPU bought: the GPU + its share of the node's host server and network (per node / node size)."""
    return _f(gpu_usd) + (_f(host_server_usd) + _f(networking_usd)) / _f(node_size)


def it_power_w_per_gpu(tdp_w: ArrayLike, host_power_w: ArrayLike, node_size: ArrayLike) -> np.ndarray:
    """Electrical load per GPU at full power: its TDP + its share of the host's (CPUs, NVSwitch, NICs, fans)."""
    return _f(tdp_w) + _f(host_power_w) / _f(node_size)


def colocation_usd_per_gpu_month(it_power_w: ArrayLike, usd_per_kw_month: ArrayLike) -> np.ndarray:
    """Colocation rent, billed per kW of IT load: W / 1000 x $/kW-month. 1,275 W at $184.06: $234.68 a month."""
    return _f(it_power_w) / 1000.0 * _f(usd_per_kw_month)


def power_usd_per_gpu_month(
    tdp_w: ArrayLike, pue: ArrayLike, usd_per_kwh: ArrayLike, hours: ArrayLike = HOURS_PER_MONTH
) -> np.ndarray:
    """Electricity at full board power: TDP / 1000 x PUE x $/kWh x hours. 700 W, PUE 1.3, $0.12: $79.72 a month."""
    return _f(tdp_w) / 1000.0 * _f(pue) * _f(usd_per_kwh) * _f(hours)


def tokens_per_month(rate_per_s: ArrayLike, tokens_per_request: ArrayLike) -> np.ndarray:
    """Tokens served in a month at a steady rate: rate x tokens per request x 730 h x 3600 s."""
    return _f(rate_per_s) * _f(tokens_per_request) * SECONDS_PER_MONTH


def usd_per_million_tokens(monthly_usd: ArrayLike, monthly_tokens: ArrayLike) -> np.ndarray:
    """Dollars per million tokens: monthly cost / monthly tokens x 1e6."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _f(monthly_usd) / _f(monthly_tokens) * 1e6


# -- one option, end to end -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    """What one replica does at its chosen batch (from the capacity model): the input of ``size``."""

    gpus: float  # tensor-parallel group size
    batch: float  # sequences per replica (0: no batch meets the TPOT target)
    tpot_s: float  # at that batch and the sizing context
    ttft_s: float  # of a high-percentile prompt
    ttft_mean_s: float  # of a mean prompt: Little's law, and the replica time each prompt takes
    #: a decode step's time at batch 1, 2, ... (NaN: the KV cache does not fit): the step at the average traffic's
    #: batch, which splits the bill between input and output tokens (trial 26 F1); () where not known
    tpot_by_batch_s: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def prompt_time_s(self) -> float:
        """Replica time one prompt takes: its full prefill (``api.prefill``'s ``ttft_s``, all-reduces included)."""
        return self.ttft_mean_s


@dataclass(frozen=True)
class Fleet:
    """A sized deployment; each field may be an array when the rates are."""

    concurrency_peak: np.ndarray
    concurrency_average: np.ndarray
    replicas_needed: np.ndarray  # serving + spare
    gpus: np.ndarray  # bought (rounded to nodes) or rented
    replicas: np.ndarray  # that the GPUs hold
    usd_per_gpu_month: np.ndarray
    monthly_usd: np.ndarray
    utilization_average: np.ndarray
    headroom_peak: np.ndarray
    usd_per_million_input: np.ndarray
    usd_per_million_output: np.ndarray
    prompt_bound: np.ndarray  # True where prompts' share of the time (the TPOT target), not batch slots, sets replicas
    tpot_peak_s: np.ndarray  # the TPOT users see at peak: decode steps stretched by the prompts in between
    #: the monthly cost over every token, prompts and answers, at the average traffic (trial 23 F10: "cost per
    #: million tokens", the figure a CFO asks for, had to be worked out from the two rates)
    usd_per_million_tokens: np.ndarray
    #: the monthly cost over the output tokens alone, at the average traffic: what an output-token product must be
    #: priced at to recover the bill (trial 28 F11: ``usd_per_million_output`` is the decode share only, the prompts
    #: billed in ``usd_per_million_input``, and a finance reader pricing output tokens on it under-recovered by 15%)
    usd_per_million_output_all_in: np.ndarray


def size(
    replica: Replica,
    peak_rate_per_s: ArrayLike,
    average_rate_per_s: ArrayLike,
    output_tokens_mean: float,
    prompt_tokens_mean: float,
    spare_replicas: float,
    node_size: float,
    usd_per_gpu_month: float,
    tpot_target_s: float = math.inf,
    max_rate_per_replica_s: float | None = None,
) -> Fleet:
    """Size the fleet for a peak rate and cost it; utilization and cost per token at the average rate.

    Serving replicas = ceil(peak rate / ``max_rate_per_replica``): prompts and decode share each replica's
    time and the stretched TPOT must meet the target. Little's law uses the mean prompt's TTFT and the mean
    output length; the batch (and its TPOT) was chosen for the high-percentile sequence length, so every slot
    can hold a long request. ``max_rate_per_replica_s``, when given, replaces Little's law's rate per replica (a
    rate at which one replica's simulated percentiles meet the targets); utilization and headroom are then shares of
    the traffic the deployed replicas carry at that rate (average / carried, 1 - peak / carried: spares and whole
    nodes are the headroom), not of Little's law's batch slots, which a simulated queue does not fill alike.
    The $ per M input / output tokens split the bill by GPU time at the average traffic (``prefill_share`` at
    ``average_batch``: the average's sequences in flight per deployed replica, spares and whole nodes' replicas
    included as the load figure counts them, and a decode step's time at that batch).
    """
    busy = replica.prompt_time_s
    x_max = max_rate_per_replica(
        busy, output_tokens_mean, replica.tpot_s, replica.batch, tpot_target_s, ttft_s=replica.ttft_mean_s
    )
    if max_rate_per_replica_s is not None:  # sized on simulated percentiles (planner.serving.fleet.fewest_replicas)
        x_max = np.asarray(max_rate_per_replica_s, dtype=float)
    need = replicas_for_rate(peak_rate_per_s, x_max, spare_replicas)
    serving = need - _f(spare_replicas)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_replica = _f(peak_rate_per_s) / serving
        latency_limit = (1.0 - replica.tpot_s / _f(tpot_target_s)) / busy
        prompt_bound = np.asarray(latency_limit <= x_max * (1 + 1e-9)) & (busy > 0)
    tpot_peak = effective_tpot(replica.tpot_s, per_replica, busy)
    avg_per_replica = _f(average_rate_per_s) / serving
    tpot_avg = effective_tpot(replica.tpot_s, avg_per_replica, busy)
    peak = concurrency(peak_rate_per_s, replica.ttft_mean_s, output_tokens_mean, tpot_peak)
    avg = concurrency(average_rate_per_s, replica.ttft_mean_s, output_tokens_mean, tpot_avg)
    gpus = gpus_to_buy(need, replica.gpus, node_size)
    held = replicas_deployed(gpus, replica.gpus, node_size)
    monthly = gpus * _f(usd_per_gpu_month)
    # the bill split by GPU time at the traffic the tokens are counted at (the average, dealt over every deployed
    # replica as the load figure counts them), not at the full batch memory holds (trial 26 F1, trial 25 F8: the
    # same GPUs and bill priced input tokens 3x apart)
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_per_held = _f(average_rate_per_s) / held
    batch_avg, tpot_step_avg = average_batch(
        avg_per_held, replica.ttft_mean_s, output_tokens_mean, replica.tpot_by_batch_s, replica.tpot_s,
        replica.batch,
    )  # fmt: skip
    share_in = prefill_share(replica.ttft_mean_s, output_tokens_mean, tpot_step_avg, np.maximum(batch_avg, 1.0))
    per_in = usd_per_million_tokens(monthly * share_in, tokens_per_month(average_rate_per_s, prompt_tokens_mean))
    per_out = usd_per_million_tokens(
        monthly * (1.0 - share_in), tokens_per_month(average_rate_per_s, output_tokens_mean)
    )
    if max_rate_per_replica_s is None:  # batch slots in use, by Little's law
        used_avg, left_peak = utilization(avg, held, replica.batch), headroom(peak, held, replica.batch)
    else:  # the traffic the replicas carry within the targets, each at the simulated rate that met them
        with np.errstate(divide="ignore", invalid="ignore"):
            carried = held * x_max
            used_avg, left_peak = _f(average_rate_per_s) / carried, 1.0 - _f(peak_rate_per_s) / carried
        # peak / carried is 1 up to rounding where the replicas carry exactly the peak: no headroom, not -2.2e-16
        left_peak = np.where(np.abs(left_peak) < 1e-9, 0.0, left_peak)
    return Fleet(
        peak,
        avg,
        need,
        gpus,
        held,
        np.broadcast_to(_f(usd_per_gpu_month), np.shape(gpus)),
        monthly,
        used_avg,
        left_peak,
        per_in,
        per_out,
        prompt_bound,
        tpot_peak,
        usd_per_million_tokens(monthly, tokens_per_month(average_rate_per_s, prompt_tokens_mean + output_tokens_mean)),
        usd_per_million_tokens(monthly, tokens_per_month(average_rate_per_s, output_tokens_mean)),
    )
