"""Fleets sized on latency under load: the fewest replicas whose simulated percentiles meet the targets.

The closed-form approximation (``planner.serving.approx``) gives a first guess, the simulation
(``planner.serving.load``) settles it; ``planner plan --rate`` and ``planner export`` call ``fewest_replicas``.
``sweep_within_capacity``: one replica's simulated runs over a range of rates, None past its capacity (the review's
latency-against-load view and the what-if workbook's Load sheet). ``capacity_per_s`` / ``past_capacity``: the one
rule every surface judges capacity by (the simulation's steady-state completion rate, not the approximation's).
``load_percentile``: one percentile of one latency of a replica at a rate, refused past its capacity (the Excel
functions TTFT_P*, TPOT_P*). ``one_output_token``: whether a traffic's requests each emit one output token, where
TPOT (and ITL) has no value: no token comes after the first. ``fewest_gpus``: of several GPU groups, the one whose
fleet needs the fewest GPUs (``planner plan --rate`` without ``--gpus``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Unpack

import numpy as np

from planner.catalog import default_catalog
from planner.checks import _checked, _numbers, mean_tokens_or_mask
from planner.deploy import MAX_CONTEXT_TOKENS, check_parallelism, engine_sequence_limit
from planner.engines.profiles import engine_profile
from planner.errors import InvalidInputError, NoFleetMeetsError, OutOfRangeError
from planner.model import failures
from planner.options import Options, ReplicaOptions
from planner.serving.approx import approximate_setup_load
from planner.serving.length_options import (
    check_high_lengths,
    check_length_percentile,
    length_percentile_of,
    sized_lengths,
)
from planner.serving.load import (
    ARRIVAL_SEED,
    CAPACITY_WINDOW_S,
    DEFAULT_REQUESTS,
    LONGER_THAN_CACHE_LEVERS,
    METRICS,
    PERCENTILES,
    LoadResult,
    Replica,
    RequestLongerThanCacheError,
    active_rate_per_s,
    busiest_rate_per_s,
    cut_to_context,
    fixed_length_tokens,
    fleet_trace_run,
    latency_under_load,
    percentile_error,
)
from planner.serving.speculative import speculation_for
from planner.units import (
    BARE_TPOT_MAX_S,
    BARE_TTFT_MAX_S,
    UnitSlipError,
    counted,
    fmt_seconds,
    ms_words,
    parse_percent,
    parse_seconds,
    parse_token_count,
    rate_words,
)

#: Concurrencies, as multiples of a replica's slots, at which ``capacity_per_s`` measures steady-state throughput:
#: 1/8 to sqrt(2) in steps of sqrt(2). Over ``bench/load_capacity.py``'s 16 cases the capacity is within 1.6% (at
#: most that much lower) of a grid of 17 steps of 2^(1/4) to 2 x the slots, for a third of the CPU (5.6 s against
#: 16.5): past the slots the engine queues what it cannot run, so higher concurrencies add little.
CAPACITY_CONCURRENCY = tuple(2.0 ** (k / 2) for k in range(-6, 2))


#: How the load balancer deals requests over the replicas (``planner plan --routing``): "random", each request to a
#: replica drawn at random (Kubernetes' kube-proxy in iptables mode; the conservative default: the burstier share);
#: "round-robin", each in turn (nginx's and IPVS's default). A least-loaded router does better than both.
ROUTINGS = ("random", "round-robin")


def check_routing(routing: str) -> str:
    """``routing`` if it is one of ``ROUTINGS``, else ``InvalidInputError`` naming them."""
    if routing not in ROUTINGS:
        raise InvalidInputError(f"routing {routing!r} is not known; use one of {', '.join(ROUTINGS)}")
    return routing


def routing_name(value: Any) -> str:
    """A routing as a cell or a scenario gives it, read as ``planner plan --routing`` reads it (any case, spaces
    around ignored): None or blank "random" (the default, the burstier share), else one of ``ROUTINGS``; anything
    else ``InvalidInputError`` naming them (#VALUE! in a cell)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "random"
    name = value.strip().lower() if isinstance(value, str) else value
    return name if name in ROUTINGS else check_routing(value)


def replica_burstiness(burstiness: float, replicas: int, routing: str = "random") -> float:
    """The gamma shape of one replica's arrival gaps where traffic whose gaps are gamma of shape ``burstiness`` (gap
    CV^2 = 1 / burstiness; 1 is Poisson) is dealt over ``replicas`` replicas alike. Routed at random: thinning a
    renewal process, each request kept with p = 1 / k, leaves a renewal process whose gaps (a geometric number of the
    traffic's gaps) have CV^2 = p / burstiness + (1 - p); the gamma with that CV^2 has shape k b / (1 + (k - 1) b).
    Poisson stays Poisson (1 -> 1); bursty traffic reaches each replica nearer Poisson (0.5 over 9 replicas: 0.9),
    even traffic (inf) at shape k / (k - 1). The gamma matches the thinned gaps' mean and CV^2, not their whole
    distribution (a geometric sum of gammas). Round-robin: a replica's gap is the sum of k of the traffic's gaps, a
    gamma of shape k b exactly (Poisson over 4 replicas: Erlang-4, smoother). One replica takes the traffic as it
    comes."""
    k, b = int(replicas), float(burstiness)
    if k <= 1:
        return b
    if check_routing(routing) == "round-robin":
        return k * b
    if math.isinf(b):
        return k / (k - 1)
    return k * b / (1 + (k - 1) * b)


#: Seed of the random deal of a recorded traffic over the replicas (``replica_share``): the same trace, the same share.
ROUTING_SEED = 0


def replica_shares(count: int, replicas: int, routing: str = "random") -> list[np.ndarray]:
    """Which of ``count`` recorded requests (in arrival order) each of ``replicas`` replicas takes: round-robin,
    replica j one in k (j, j + k, ...); at random, each request's replica drawn uniformly (seed ``ROUTING_SEED``), so
    each share is about count / k and as uneven as a random balancer leaves it. Indices into the trace, in order;
    every request in exactly one share."""
    k = max(int(replicas), 1)
    if check_routing(routing) == "round-robin" or k == 1:
        return [np.arange(j, count, k) for j in range(k)]
    drawn = np.random.default_rng(ROUTING_SEED).integers(0, k, size=count)
    return [np.flatnonzero(drawn == j) for j in range(k)]


def replica_share(count: int, replicas: int, routing: str = "random") -> np.ndarray:
    """Which of ``count`` recorded requests the first of ``replicas`` replicas takes (``replica_shares``' first)."""
    k = int(replicas)
    if check_routing(routing) == "round-robin" or k <= 1:
        return np.arange(0, count, k)
    return np.flatnonzero(np.random.default_rng(ROUTING_SEED).integers(0, k, size=count) == 0)


def poisson_minutes_past(
    rate_per_s: float, capacity_per_s: float, burstiness: float = 1.0, window_s: float = CAPACITY_WINDOW_S
) -> float:
    """The share of ``window_s`` windows (a minute) of traffic at a mean ``rate_per_s`` whose own rate is at or past
    ``capacity_per_s``: with Poisson arrivals (``burstiness`` 1) the window's count N is Poisson(rate x window), and
    the share is P(N >= ceil(capacity x window)); with gamma gaps of shape b (gap CV^2 = 1 / b) N is about normal,
    mean rate x window, variance rate x window / b (a renewal process's count), its share past capacity x window -
    1/2. A planned rate's fluctuation against the steady-state capacity, as a trace's busiest minute is judged
    (trial 24 F2: at 4.0 requests/s a minute is past 4.54 about 2% of the time, and any 1,000-request trace's
    busiest minute 10-15% above its mean). 0 where the capacity is infinite."""
    from scipy.special import gammainc, ndtr  # the Poisson and normal tails, at first use

    if not math.isfinite(capacity_per_s):
        return 0.0
    mean = float(rate_per_s) * window_s
    need = math.ceil(capacity_per_s * window_s - 1e-9)
    if need <= 0:
        return 1.0
    if burstiness == 1.0:
        return float(gammainc(need, mean))  # P(Poisson(mean) >= need) = the regularized lower gamma P(need, mean)
    return float(ndtr((mean - (need - 0.5)) / math.sqrt(mean / burstiness)))


def replica_run(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: float,
    replicas: int,
    *,
    burstiness: float = 1.0,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
    arrivals_s: Any = None,
    routing: str = "random",
    arrival_seed: int = ARRIVAL_SEED,
) -> LoadResult:
    """One of ``replicas`` replicas' simulated run when the fleet takes ``rate_per_s`` requests per second: the
    traffic's gaps gamma of ``burstiness``, dealt by ``routing`` (``ROUTINGS``), so each replica takes rate / k at
    the shape ``replica_burstiness`` gives (1,000 requests; ``len(lengths)`` with ``lengths``); a recorded traffic
    (``arrivals_s``, with its ``lengths``) is dealt the same way, request by request at the times it came
    (``replica_shares``), every replica's share simulated and the fleet's percentiles pooled over them
    (``fleet_trace_run``). How ``fewest_replicas`` sizes and ``planner plan --replicas`` runs a given fleet. The
    capacity is not checked here (``past_capacity``)."""
    k = int(replicas)
    if arrivals_s is not None:  # a trace: every replica's share, at the times it came, pooled
        times = np.asarray(arrivals_s)
        shares = [(times[mine], [lengths[i] for i in mine]) for mine in replica_shares(len(times), k, routing)]
        return fleet_trace_run(replica, prompt_tokens, output_tokens, shares, prefix_hit_rate)
    return latency_under_load(
        replica, prompt_tokens, output_tokens, rate_per_s=rate_per_s / k,
        burstiness=replica_burstiness(burstiness, k, routing),
        num_requests=len(lengths) if lengths else DEFAULT_REQUESTS, lengths=lengths, prefix_hit_rate=prefix_hit_rate,
        requests_per_rank=True, arrival_seed=arrival_seed,
    )  # fmt: skip


#: The arrival draws (``arrival_times_s`` seeds) ``sampling_spread`` runs a rate's traffic over: the first,
#: ``ARRIVAL_SEED``, is the run every surface shows.
SPREAD_SEEDS = (ARRIVAL_SEED, 1, 2, 3, 4)


@dataclass(frozen=True)
class SamplingSpread:
    """A rate's percentile TTFT and TPOT over several draws of its arrivals (``sampling_spread``), seconds: the
    lowest and highest over ``seeds``, and how many draws miss the targets."""

    percentile: float
    seeds: tuple[int, ...]
    ttft_s: tuple[float, float]
    tpot_s: tuple[float, float]  # NaN: one output token, no TPOT
    draws_missing: int


def sampling_spread(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: float,
    replicas: int,
    *,
    percentile: float = 95,
    ttft_target_s: float = math.inf,
    tpot_target_s: float = math.inf,
    burstiness: float = 1.0,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
    routing: str = "random",
    seeds: tuple[int, ...] = SPREAD_SEEDS,
) -> SamplingSpread:
    """The sampling spread of a rate's simulated percentiles: ``replica_run`` once per arrival draw of ``seeds``
    (each 1,000 requests, or ``len(lengths)``: ``planner.serving.load.sizing_requests``, 5,000 drawn at p99; at
    exactly the rate, ``vllm bench serve``'s rescaled gaps; only the pattern of gaps differs), the lowest and
    highest ``percentile`` TTFT and TPOT over them and the draws that miss the targets.
    One draw's p95 moves smoothly with the rate and says nothing of how far another 1,000 requests land (trial 24
    F2: 645 ms at 4.0 requests/s, where Poisson traces of that traffic, 3.93-4.07 requests/s over their span,
    replay at 704 ms to 1.21 s). ~0.05 s a draw."""
    runs = [
        replica_run(
            replica,
            prompt_tokens,
            output_tokens,
            rate_per_s,
            replicas,
            burstiness=burstiness,
            lengths=lengths,
            prefix_hit_rate=prefix_hit_rate,
            routing=routing,
            arrival_seed=seed,
        )  # fmt: skip
        for seed in seeds
    ]
    ttft = [r.ttft_s.at(percentile) for r in runs]
    tpot = [r.tpot_s.at(percentile) for r in runs]
    missing = sum(not within_targets(r, percentile, ttft_target_s, tpot_target_s) for r in runs)
    return SamplingSpread(float(percentile), tuple(seeds), (min(ttft), max(ttft)), (min(tpot), max(tpot)), missing)


@dataclass(frozen=True)
class DrawsEdge:
    """Whether a fleet sits at its targets' edge (``draws_edge``): the rate's percentiles over its arrival draws at
    the fleet (``spread``) and how many draws one more replica still misses (``missing_one_more``; 0 where every draw
    meets at the fleet, one more replica then not run)."""

    spread: SamplingSpread
    replicas: int
    missing_one_more: int = 0

    def warning(self, gpus: int, given: bool = False) -> str:
        """``draws_warning`` of this edge for replicas of ``gpus`` GPUs each; "" where every draw meets."""
        return draws_warning(self.spread, self.replicas, gpus, self.missing_one_more, given)

    def brief(self, gpus: int) -> str:
        """The warning in a cell's few words (the what-if workbook's "Meets the latency targets": "yes, at the edge:
        4 of 5 arrival draws miss the p95 targets; 3 replicas (12 GPUs) meet them in every draw"); "" where every
        draw meets."""
        if not self.spread.draws_missing:
            return ""
        n, q = len(self.spread.seeds), f"p{self.spread.percentile:g}"
        return (
            f"{self.spread.draws_missing} of {n} arrival draws miss the {q} targets; "
            f"{_one_more_words(self.replicas, gpus, self.missing_one_more, n)}"
        )


def draws_edge(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: float,
    replicas: int,
    **kwargs: Any,
) -> DrawsEdge:
    """The one computation of a fleet's edge every surface shows (``planner plan --rate``'s warning under the
    replicas, PLANNER_WHY of REPLICAS and FLEET_GPUS, the what-if workbook's "Meets the latency targets"):
    ``sampling_spread`` at ``replicas`` and, where some draws miss the targets, at ``replicas`` + 1, so the sentence
    (``draws_warning``) says whether one more replica meets them in every draw. ``kwargs``: ``sampling_spread``'s
    (percentile, targets, burstiness, lengths, prefix_hit_rate, routing). Five simulated draws, ten at the edge
    (~0.05 s a draw at 1,000 requests)."""
    spread = sampling_spread(replica, prompt_tokens, output_tokens, rate_per_s, replicas, **kwargs)
    if not spread.draws_missing:
        return DrawsEdge(spread, replicas)
    more = sampling_spread(replica, prompt_tokens, output_tokens, rate_per_s, replicas + 1, **kwargs)
    return DrawsEdge(spread, replicas, more.draws_missing)


def _one_more_words(replicas: int, gpus: int, missing_one_more: int, draws: int) -> str:
    """What one more replica does over the draws: "3 replicas (12 GPUs) meet them in every draw", or "3 replicas still
    miss them in 1 of 5"."""
    if not missing_one_more:
        return f"{counted(replicas + 1, 'replica')} ({counted((replicas + 1) * gpus, 'GPU')}) meet them in every draw"
    return f"{counted(replicas + 1, 'replica')} still miss them in {missing_one_more} of {draws}"


def draws_warning(spread: SamplingSpread, replicas: int, gpus: int, missing_one_more: int, given: bool = False) -> str:
    """Where some of the rate's arrival draws (``sampling_spread``) miss the targets at the fleet shown: a sentence
    saying how many, that the fleet was sized on one draw (seed 0's; ``given``: the fleet of ``--replicas``, its
    figures seed 0's), and how many draws one more replica misses
    (``missing_one_more``, ``sampling_spread`` at replicas + 1), so the reader sees the verdict's doubt where the
    fleet is stated (trial 28 F13), not only in the spread line; "" where every draw meets."""
    if not spread.draws_missing:
        return ""
    n, q = len(spread.seeds), f"p{spread.percentile:g}"
    one_more = _one_more_words(replicas, gpus, missing_one_more, n)
    on = "the figures shown are" if given else "sized on"
    return (
        f"{spread.draws_missing} of {n} arrival draws of this traffic miss the {q} targets at "
        f"{counted(replicas, 'replica')} ({on} seed {spread.seeds[0]}'s draw): the fleet sits at the targets' edge, "
        f"and another sample of the same traffic can land past them; {one_more}"
    )


def spread_note(spread: SamplingSpread, metric: str) -> str:
    """One percentile's spread over its arrival draws (``sampling_spread``), in the words of ``draws_warning`` and of
    ``planner plan --rate``'s sampling spread line: "p99 TTFT 1.04 s to 1.31 s over 5 arrival draws of this traffic
    (seeds 0-4; the figure shown is seed 0's draw): another sample of the same traffic lands about this far either
    way" (PLANNER_WHY of TTFT_P99 and its family, which take no targets to judge the draws by)."""
    low, high = spread.ttft_s if metric == "ttft" else spread.tpot_s
    return (
        f"sampling spread: p{spread.percentile:g} {metric.upper()} {fmt_seconds(low)} to {fmt_seconds(high)} over "
        f"{len(spread.seeds)} arrival draws of this traffic (seeds {spread.seeds[0]}-{spread.seeds[-1]}; the figure "
        f"shown is seed {spread.seeds[0]}'s draw): another sample of the same traffic lands about this far either way"
    )


#: How many ``capacity_per_s`` results are kept: a replica's capacity does not depend on the rate, and sizing asks for
#: it at each replica count it tries and each traffic it sizes (examples/budget-review.toml: 862 asks, 27 different,
#: each of the others a dozen memoized runs' keys to build). Kept by ``Replica.runs_key``, as ``Replica.setup`` keeps.
CAPACITIES_KEPT = 256
_CAPACITIES: dict[tuple, tuple[tuple, float]] = {}


def capacity_per_s(replica: Replica, prompt_tokens: float, output_tokens: float, prefix_hit_rate: float = 0.0) -> float:
    """The most requests per second one replica completes in steady state, from the simulation: closed-loop runs
    at concurrencies C = ``CAPACITY_CONCURRENCY`` x its slots (min(max_num_seqs, the decode table's batches)),
    each of N and 2N requests (N = max(2C, 1,000)): at each C, N / (duration(2N) - duration(N)), and the largest
    over C. Both runs of a C fill the batch and drain it alike, so the difference is N completions in steady state
    (a single finite run's N / duration counts its ramp and drain). The largest over C, as throughput falls past
    the concurrency whose KV cache fits (vLLM preempts): H100 x 4 Llama-3.1-70B, 1,024 / 256 tokens, 6.92
    requests/s at C = 110, 8.48 at 300, 7.71 at 880 (504 preemptions). A mean arrival rate at or above it makes the
    queue grow without bound, whatever its burstiness. ``prefix_hit_rate``: the share of each prompt the prefix cache
    holds (``latency_under_load``); lengths at the means. The runs are memoized (``latency_under_load``), and so is the
    capacity of a replica and lengths (``CAPACITIES_KEPT``)."""
    key, kept = replica.runs_key(prompt_tokens, output_tokens, prefix_hit_rate)
    hit = _CAPACITIES.get(key)
    if hit is not None:
        return hit[1]
    best = _capacity_per_s(replica, prompt_tokens, output_tokens, prefix_hit_rate)
    if len(_CAPACITIES) >= CAPACITIES_KEPT:
        _CAPACITIES.clear()
    _CAPACITIES[key] = (kept, best)
    return best


def _capacity_per_s(replica: Replica, prompt_tokens: float, output_tokens: float, prefix_hit_rate: float) -> float:
    setup = replica.setup(prompt_tokens, output_tokens)
    slots = max(min(int(setup.scheduler.max_num_seqs), len(setup.table.decode_lo_s)), 1) * setup.ranks
    best = 0.0
    for c in sorted({max(round(slots * f), 1) for f in CAPACITY_CONCURRENCY}):
        n = max(2 * c, DEFAULT_REQUESTS)
        short, long = (
            latency_under_load(
                replica, prompt_tokens, output_tokens, concurrency=c, num_requests=k, prefix_hit_rate=prefix_hit_rate
            )
            for k in (n, 2 * n)
        )
        best = max(best, n / (long.duration_s - short.duration_s))
    return best


def sequences_memory_holds(replica: Replica, context_tokens: float) -> int:
    """The most sequences a replica runs at once when each may reach ``context_tokens`` (prompt + output): what its
    memory holds at that length (``planner.api.max_batch``, the engine's memory budget), within the engine's sequence
    limit (``planner.deploy.engine_sequence_limit``: vLLM's 1,024 on an H100), at least 1. The rule ``planner export``
    sets each replica's max_num_seqs by, at the scenario's high-percentile prompt + output (``Candidate.slots``: 107
    for the README example's 3,000 + 1,200 tokens on 4 x H100), and ``planner plan --max-num-seqs`` takes."""
    from planner import api  # planner.api loads the serving package's callers: imported at first use

    layout = check_parallelism(replica.parallelism)
    held = api.max_batch(
        replica.gpu, replica.model, int(math.ceil(context_tokens)), gpus=replica.gpus, parallelism=layout,
        weight_precision=replica.weight_precision, kv_precision=replica.kv_precision, engine=replica.engine,
        catalog=replica.catalog,
    )  # fmt: skip
    gpu = (replica.catalog or default_catalog()).gpu(replica.gpu)
    limit = engine_sequence_limit(engine_profile(replica.engine), gpu, layout, replica.gpus or 1)
    return max(min(int(held), limit), 1)


#: Relative distance above the approximation's capacity beyond which its "past" verdict stands without simulating.
#: Its capacity is never far below the simulation's: 0.93-1.08 x it where the KV cache holds the batch
#: (``python bench/load_capacity.py``), 0.95-8.6 x it where it does not (H100 x 1-2 Llama-3.1-70B, fp8 or 16-bit weights,
#: 600 / 800, 800 / 400 and 128 / 2,048 tokens: the approximation does not see the preemptions that cap the
#: simulated throughput), so a rate above 1 / (1 - 0.15) x it is past the simulated capacity. Its "within" verdict is
#: not taken: 0.8 requests/s is within its 0.924 requests/s for H100 x 2 Llama-3.1-70B at 800 / 400 tokens, past the
#: simulation's 0.721.
CAPACITY_BAND = 0.15


def past_capacity(
    replica: Replica, prompt_tokens: float, output_tokens: float, rates_per_s: Any, prefix_hit_rate: float = 0.0
) -> np.ndarray:
    """Whether each mean request rate (requests/s) is at or past the replica's simulated steady-state capacity
    (``capacity_per_s``): there a finite run's figures only say how long it ran, so no surface reports them. A rate
    farther than ``CAPACITY_BAND`` past the approximation's capacity is past (the same verdict) without simulating;
    any other rate is judged by ``capacity_per_s`` itself (0.2-1.8 s CPU the first time for a replica and lengths,
    then memoized), so a rate past the capacity CAPACITY_RPS states is never within. The approximation computes every
    prompt (it does not read a prefix hit), so with a ``prefix_hit_rate`` above 0 every rate is simulated."""
    rates = np.asarray(rates_per_s, dtype=float)
    past = np.zeros(rates.shape, dtype=bool)
    if prefix_hit_rate == 0:
        setup = replica.setup(prompt_tokens, output_tokens)
        a = approximate_setup_load(
            setup, prompt_tokens, output_tokens, rates * (1.0 - CAPACITY_BAND), 50, replica.behaviour()
        )
        past = ~np.isfinite(a["ttft_s"])
    if not past.all():
        past = past | (rates >= capacity_per_s(replica, prompt_tokens, output_tokens, prefix_hit_rate))
    return past


#: The most replicas ``fewest_replicas`` tries unless told otherwise: far past any fleet a plan buys (262,144), so
#: that no group loses to another for hitting the search's end (a trial's Llama 3.1 8B at 100,000 requests/s needs
#: ~4,500 one-GPU replicas; at 4,096 the search sized 2-GPU replicas instead, 5,672 GPUs).
MAX_REPLICAS = 262_144
#: Replica counts the closed-form first guess is evaluated at one by one; above it, at ``GUESS_STEP`` apart (the
#: simulation's bisection settles the count).
GUESS_EVERY_UP_TO = 4096
GUESS_STEP = 1.01

#: Why a one-token output has no TPOT (nor ITL): the reason every surface gives, TPOT_P* and a TPOT target alike.
NO_TPOT_WITH_ONE_TOKEN = "one output token has no time per output token after the first"


def one_output_token(output_tokens: float, lengths: list[tuple[int, int]] | None = None) -> bool:
    """Whether every request emits one output token, so the simulation has no TPOT (nor ITL) to report: no token
    comes after the first (``LoadResult.tpot_s`` is NaN). ``lengths``: each request's (prompt, output) tokens (a
    dataset's or a trace's); None: each sends ``output_tokens`` in whole tokens (``fixed_length_tokens``: 1.4 -> 1)."""
    if lengths:
        return all(int(o) <= 1 for _, o in lengths)
    return fixed_length_tokens(output_tokens) <= 1


def _one_token_without_tpot_target(
    output_tokens: float, lengths: list[tuple[int, int]] | None, tpot_target_s: float
) -> bool:
    """Whether every request has one output token (``one_output_token``: no TPOT, none after the first), as
    ``fewest_replicas`` and ``fewest_replicas_for_burst`` size on it; a TPOT target there has nothing to hold and is
    refused (``OutOfRangeError``)."""
    no_tpot = one_output_token(output_tokens, lengths)
    if no_tpot and math.isfinite(tpot_target_s):
        raise OutOfRangeError(
            f"a TPOT target has nothing to hold: {NO_TPOT_WITH_ONE_TOKEN}; leave the TPOT target out to size the "
            "fleet on TTFT alone, or give output_tokens of 2 or more"
        )
    return no_tpot


def replica_counts_to_guess(max_replicas: int) -> np.ndarray:
    """Every count 1 .. ``GUESS_EVERY_UP_TO``, then counts ``GUESS_STEP`` apart up to ``max_replicas`` (included):
    where the closed-form approximation is evaluated for a first guess, a few thousand points whatever the limit."""
    ks = np.arange(1, min(max_replicas, GUESS_EVERY_UP_TO) + 1, dtype=float)
    if max_replicas <= GUESS_EVERY_UP_TO:
        return ks
    n = math.ceil(math.log(max_replicas / GUESS_EVERY_UP_TO) / math.log(GUESS_STEP))
    more = np.unique(np.round(np.geomspace(GUESS_EVERY_UP_TO, max_replicas, n + 1)))
    return np.concatenate([ks, more[more > GUESS_EVERY_UP_TO]])


@dataclass(frozen=True)
class Sizing:
    """The fewest replicas meeting percentile targets at a rate, and the simulated run of one of them."""

    replicas: int
    rate_per_replica_s: float  # requests per second each replica takes
    result: LoadResult  # one replica's simulated run at that rate
    percentile: float
    ttft_target_s: float
    tpot_target_s: float
    #: One replica's simulated capacity (``capacity_per_s``), requests/s, where the fleet was sized on it (no
    #: targets); NaN where targets sized it.
    capacity_per_s: float = math.nan
    #: Of a burst (a trace whose requests all arrive at once: ``fewest_replicas_for_burst``), the requests the
    #: simulated replica takes (ceil(N / replicas)); 0 for traffic at a rate. A burst has no rate: its
    #: ``rate_per_replica_s`` is NaN.
    burst_requests_per_replica: int = 0

    @property
    def is_burst(self) -> bool:
        """Whether the fleet was sized on a burst (every request at once), not on a rate."""
        return self.burst_requests_per_replica > 0

    @property
    def on_capacity(self) -> bool:
        """Whether the fleet was sized on capacity alone: no TTFT or TPOT target was given."""
        return not (math.isfinite(self.ttft_target_s) or math.isfinite(self.tpot_target_s))


#: A fleet whose median TTFT uses more than this share of the TTFT target is sized by the target's closeness to one
#: prompt's own time, not by the traffic: replicas must stay nearly idle (a trial's 100 ms target against 86 ms
#: for one 800-token prompt on 4 x H100: 3,568 replicas at 0.017 requests/s each, 51 at a 150 ms target).
TTFT_FLOOR_SHARE = 0.75


def near_ttft_floor(s: Sizing) -> str:
    """Where the sized fleet's median TTFT is over ``TTFT_FLOOR_SHARE`` of the TTFT target: a sentence saying that
    the target, not the traffic, sets the fleet, and how to make it cheaper; "" elsewhere."""
    p50 = float(s.result.ttft_s.p50)
    if not math.isfinite(s.ttft_target_s) or not p50 > TTFT_FLOOR_SHARE * s.ttft_target_s:
        return ""
    load = (
        f"{s.burst_requests_per_replica:,} of the burst's requests each"
        if s.is_burst
        else f"{s.rate_per_replica_s:.3g} requests/s each"
    )
    return (
        f"the TTFT target ({s.ttft_target_s * 1e3:,.4g} ms) is close to what a request "
        f"takes on a nearly idle replica (median {p50 * 1e3:,.4g} ms, {p50 / s.ttft_target_s:.0%} of it), so the "
        f"replicas are kept nearly idle ({load}) and the fleet grows steeply as "
        "the target nears that floor: a looser TTFT target, a larger group per replica or shorter prompts cost far less"
    )


def within_targets(r: LoadResult, percentile: float, ttft_target_s: float, tpot_target_s: float) -> bool:
    """Whether a run's ``percentile`` TTFT and TPOT are within the targets (inf: none; a NaN TPOT, one output token,
    holds where there is no TPOT target)."""
    tpot_ok = not math.isfinite(tpot_target_s) or r.tpot_s.at(percentile) <= tpot_target_s
    return r.ttft_s.at(percentile) <= ttft_target_s and tpot_ok


@dataclass(frozen=True)
class IdleMiss:
    """A latency target that one request alone on an idle replica already misses, so that no number of replicas
    meets it (more replicas only make each idler): the target, the percentile figure of the idle run
    (``idle_misses``), and the replica's group ("1 x H100 SXM 80GB")."""

    metric: str  # "TTFT" or "TPOT"
    percentile: float
    target_s: float
    idle_s: float  # the run's percentile with every request alone
    gpus: int | None  # GPUs a replica (None: not given)
    gpu: str
    varied: bool = False  # the requests' lengths differ (a dataset's or a trace's): the figure is their percentile

    def _alone(self) -> str:
        if self.varied:
            return f"the p{self.percentile:g} {self.metric} of the requests each sent alone"
        return f"one request's own {self.metric}"

    def _head(self) -> str:
        return f"p{self.percentile:g} {self.metric} target {ms_words(self.target_s)} is below {self._alone()}"

    @property
    def group(self) -> str:
        return f"{self.gpus:,} x {self.gpu}" if self.gpus else f"the smallest group of {self.gpu} that holds a request"

    def text(self) -> str:
        """ "p95 TTFT target 1 ms is below one request's own TTFT on an idle replica (42.5 ms on 1 x H100 SXM 80GB):
        no number of replicas meets it"."""
        return (
            f"{self._head()} on an idle replica ({ms_words(self.idle_s)} on {self.group}): no number of replicas "
            "meets it"
        )

    @staticmethod
    def text_of_groups(misses: list[IdleMiss]) -> str:
        """One target's misses on several groups of one GPU, in one sentence: each group's idle figure and the lowest
        of them, the best any fleet reaches ("... on an idle replica of every group tried (1, 2, 4 and 8 x H100 SXM
        80GB: 42.5, 30.1, 22 and 17.3 ms): no number of replicas meets it; the lowest reachable is 17.3 ms, on 8 x
        H100 SXM 80GB a replica")."""
        first, best = misses[0], min(misses, key=lambda m: m.idle_s)
        sizes = [f"{m.gpus:,}" for m in misses]
        figures = [ms_words(m.idle_s)[:-3] for m in misses]
        listed = ", ".join(sizes[:-1]) + f" and {sizes[-1]}"
        values = ", ".join(figures[:-1]) + f" and {figures[-1]}"
        return (
            f"{first._head()} on an idle replica of every group tried ({listed} x {first.gpu}: {values} ms): no "
            f"number of replicas meets it; the lowest reachable is {ms_words(best.idle_s)}, on {best.group} a replica"
        )


def idle_misses(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    percentile: float,
    ttft_target_s: float,
    tpot_target_s: float,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
) -> tuple[IdleMiss, ...]:
    """The targets (inf: none) that the replica misses at ``percentile`` with every request alone on it: a closed
    loop of one request at a time (``latency_under_load(concurrency=1)``: no queue, no batch), over ``lengths``
    (None: one request of the fixed lengths, every one alike). TTFT and TPOT only fall as replicas are added, to
    this; a TPOT of one output token (NaN) misses nothing."""
    if not (math.isfinite(ttft_target_s) or math.isfinite(tpot_target_s)):
        return ()
    idle = latency_under_load(
        replica, prompt_tokens, output_tokens, concurrency=1, num_requests=len(lengths) if lengths else 1,
        lengths=lengths, prefix_hit_rate=prefix_hit_rate,
    )  # fmt: skip
    varied = bool(lengths) and len(set(lengths)) > 1
    gpu = str(getattr(replica.gpu, "name", replica.gpu))
    gpus = int(replica.gpus) if replica.gpus is not None else None
    out = []
    for metric, target_s, figure in (("TTFT", ttft_target_s, idle.ttft_s), ("TPOT", tpot_target_s, idle.tpot_s)):
        value = float(figure.at(percentile))
        if math.isfinite(target_s) and value > target_s:  # NaN (no TPOT) is no miss
            out.append(IdleMiss(metric, float(percentile), float(target_s), value, gpus, gpu, varied))
    return tuple(out)


def fewest_replicas(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: float,
    *,
    percentile: float = 95,
    ttft_target_s: float = math.inf,
    tpot_target_s: float = math.inf,
    burstiness: float = 1.0,
    max_replicas: int = MAX_REPLICAS,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
    arrivals_s: Any = None,
    routing: str = "random",
    arrival_seed: int = ARRIVAL_SEED,
) -> Sizing:
    """The fewest replicas k whose simulated ``percentile`` TTFT and TPOT, each replica taking rate / k requests
    per second (``replica_run``: the traffic's gamma gaps of ``burstiness`` dealt by ``routing``, at random by
    default, each replica's at ``replica_burstiness``; 1,000 requests), meet the targets: the closed-form
    approximation (``planner.serving.approx``) gives a first k (one where it meets none), the simulation settles it:
    a k that meets is checked against k - 1, k - 2, k - 4, ... and one that misses doubles, then bisection (latency
    falls as k grows); a k whose rate / k is past the simulated capacity (``past_capacity``) never counts (a
    1,000-request run cannot show a queue that grows without bound). ``lengths``: each request's (prompt, output)
    tokens (None: all at ``prompt_tokens`` / ``output_tokens``, which must be their means: a named dataset's traffic
    is ``planner.serving.load.dataset_load``); ``prefix_hit_rate``: the share of each prompt the prefix cache holds.
    ``arrivals_s``: a recorded traffic's arrivals, with its ``lengths`` (``planner.serving.load.TraceLoad``;
    ``rate_per_s`` its mean rate): replayed as they came, each request dealt to a replica by ``routing``
    (``replica_shares``; every replica's share simulated, the percentiles pooled). The capacity check runs at the
    mean lengths and, for a trace, at its mean rate with outlier gaps shortened to the median
    (``planner.serving.load.active_rate_per_s``), as the rate mode judges its rate: a busier minute past the capacity
    builds a queue that drains, which the replay simulates (trial 24 F2). ``arrival_seed``: which draw of the
    arrivals (``replica_run``; ``SPREAD_SEEDS`` are the draws ``sampling_spread`` compares), the lengths unchanged.

    Without targets (both inf) the fleet is sized on capacity alone: the fewest replicas k each taking less than its
    simulated capacity, rate / k < ``capacity_per_s`` (the Excel CAPACITY_RPS: k = floor(rate / capacity) + 1) and
    not ``past_capacity``, never one replica whose queue grows without bound. Where every request emits one output
    token (``one_output_token``) there is no TPOT: the fleet is sized on TTFT (and capacity) alone, and a TPOT
    target is refused (``OutOfRangeError``: it has nothing to hold).
    Raises ``OutOfRangeError`` (#NUM! in a cell) when even ``max_replicas`` miss (an idle replica is too slow, or
    rate / ``max_replicas`` is still past a replica's capacity)."""
    if percentile not in PERCENTILES:
        raise percentile_error(percentile)
    if arrivals_s is not None and len(arrivals_s) and np.ptp(np.asarray(arrivals_s, dtype=float)) == 0:
        return fewest_replicas_for_burst(
            replica, prompt_tokens, output_tokens, arrivals_s, lengths, percentile=percentile,
            ttft_target_s=ttft_target_s, tpot_target_s=tpot_target_s, max_replicas=max_replicas,
            prefix_hit_rate=prefix_hit_rate,
        )  # fmt: skip
    rate = float(rate_per_s)
    if not 0 < rate < math.inf:
        raise InvalidInputError(f"rate {rate_per_s!r} is not a positive finite number of requests per second")
    no_tpot = _one_token_without_tpot_target(output_tokens, lengths, tpot_target_s)
    runs: dict[int, LoadResult] = {}

    def run_at(k: int) -> LoadResult:
        return replica_run(
            replica, prompt_tokens, output_tokens, rate, k, burstiness=burstiness, lengths=lengths,
            prefix_hit_rate=prefix_hit_rate, arrivals_s=arrivals_s, routing=routing, arrival_seed=arrival_seed,
        )  # fmt: skip

    targets = math.isfinite(ttft_target_s) or math.isfinite(tpot_target_s)
    tpot_free = not math.isfinite(tpot_target_s)  # no TPOT target (or no TPOT): a NaN TPOT is no miss
    # sized on capacity alone, the capacity itself (CAPACITY_RPS's) bounds each replica's rate, not only
    # ``past_capacity``'s shortcut, whose approximation can be further off than its band for a replica
    cap = math.inf if targets else capacity_per_s(replica, prompt_tokens, output_tokens, prefix_hit_rate)
    # the rate the capacity is judged at: a trace's mean, outlier gaps shortened (one late row does not dilute it)
    judged = rate if arrivals_s is None else active_rate_per_s(arrivals_s)
    over: dict[int, bool] = {}

    def past(k: int) -> bool:
        if k not in over:
            over[k] = judged / k >= cap or bool(
                past_capacity(replica, prompt_tokens, output_tokens, [judged / k], prefix_hit_rate)[0]
            )
        return over[k]

    def meets(k: int) -> bool:
        # past the simulated capacity a finite run can look fine while its queue grows without bound: such a k
        # misses, whatever 1,000 requests show (with targets or without: without, capacity is all that sizes)
        if past(k):
            return False
        if not targets:  # sized on capacity alone: no run to look at
            return True
        if k not in runs:
            runs[k] = run_at(k)
        return within_targets(runs[k], percentile, ttft_target_s, tpot_target_s)

    setup = replica.setup(prompt_tokens, output_tokens)
    ks = replica_counts_to_guess(max_replicas)
    a = approximate_setup_load(setup, prompt_tokens, output_tokens, rate / ks, percentile, replica.behaviour())
    # an infinite approximate TTFT is the approximation's own "past capacity": no k there meets, targets or none
    ok = np.isfinite(a["ttft_s"]) & (a["ttft_s"] <= ttft_target_s) & (tpot_free | (a["tpot_s"] <= tpot_target_s))
    # without an approximate answer the search starts from one replica (not from max_replicas, which met at once
    # would be returned without a look below); without targets, from the fewest each below the capacity
    hi = int(ks[np.argmax(ok)]) if ok.any() else 1
    if not targets:
        hi = min(math.floor(judged / cap) + 1, max_replicas)
    guessed = False  # hi from a short draw's sizing, not from the approximation
    if targets and arrivals_s is None and lengths and len(lengths) > DEFAULT_REQUESTS:
        # a long draw (``sizing_requests``: 5,000 requests at p99) runs five times as long: its first 1,000 requests,
        # an iid draw of the same lengths, are sized first, and that fleet is the first guess the long draw settles
        # in a step or two (trial 28 F13's fleet: 10 replicas from both; a long search from the approximation's 8
        # runs 5 long simulations: 8, 16, 12, 10, 9)
        try:
            hi = fewest_replicas(
                replica, prompt_tokens, output_tokens, rate, percentile=percentile, ttft_target_s=ttft_target_s,
                tpot_target_s=tpot_target_s, burstiness=burstiness, max_replicas=max_replicas,
                lengths=lengths[:DEFAULT_REQUESTS], prefix_hit_rate=prefix_hit_rate, routing=routing,
                arrival_seed=arrival_seed,
            ).replicas  # fmt: skip
            guessed = True
        except NoFleetMeetsError:  # the short draw's refusal is not the long one's: searched as without a guess
            pass
    lo = 0  # lo misses (0 replicas serve nothing), hi meets once found
    if meets(hi):
        # the approximation errs either way: below a k that meets, step down by doubling strides to one that misses
        step = 1
        while hi - step >= 1 and meets(hi - step):
            hi, step = hi - step, 2 * step
        lo = max(hi - step, 0)
    elif guessed:  # the long draw needs more than the short one: up by doubling strides from it, to one that meets
        lo, step = hi, 1
        while lo < max_replicas:
            k = min(lo + step, max_replicas)
            if meets(k):
                hi = k
                break
            lo, step = k, 2 * step
        else:
            hi = max_replicas  # refused below (``refuse``): even the limit misses
    if not guessed and not ok.any() and hi < max_replicas and not meets(max_replicas):
        hi = max_replicas  # nothing meets even at the limit (an idle replica too slow): refused without the walk up

    def refuse(hi: int) -> None:
        if past(hi):
            cap = capacity_per_s(replica, prompt_tokens, output_tokens, prefix_hit_rate)  # memoized runs
            busiest = "" if arrivals_s is None else " (the trace's mean, outlier gaps shortened)"
            raise NoFleetMeetsError(
                f"no fleet of up to {max_replicas:,} replicas keeps up with {rate_words(judged)}{busiest}: at "
                f"{rate_words(judged / hi)} each a replica is past its capacity ({rate_words(cap)}, simulated "
                "steady state), so its queue grows without bound"
            )
        misses = idle_misses(
            replica, prompt_tokens, output_tokens, percentile, ttft_target_s, tpot_target_s, lengths, prefix_hit_rate
        )
        if misses:  # an idle replica already misses: no number of replicas helps, and the search's end is no news
            raise NoFleetMeetsError("; ".join(m.text() for m in misses), misses)
        r = runs.get(hi) or run_at(hi)
        raise NoFleetMeetsError(
            f"no fleet of up to {max_replicas:,} replicas meets the targets: at {rate_words(rate / hi)} each, "
            + _figures_against_targets(r, percentile, ttft_target_s, tpot_target_s, no_tpot)
        )

    hi = _doubled_then_bisected(meets, lo, hi, max_replicas, refuse)
    result = runs[hi] if hi in runs else run_at(hi)
    return Sizing(
        hi, rate / hi, result, float(percentile), float(ttft_target_s), float(tpot_target_s),
        math.nan if targets else cap,
    )  # fmt: skip


#: TPOT alone needing this many times the replicas TTFT alone needs (or more): the prompts' prefill, run in the steps
#: that decode the other requests, sets the fleet (``BindingTarget.prefill_stalls``). Trial 20: 128k-token prompts at
#: 1 request/s on 8 x H100, TTFT (30 s) alone 30 replicas, TPOT (60 ms) alone 306.
PREFILL_STALL_FACTOR = 3.0


@dataclass(frozen=True)
class BindingTarget:
    """Of a fleet sized on both a TTFT and a TPOT target: the fewest replicas each target alone needs on the same
    group (``binding_target``), so a plan can say which one sets the fleet and at what cost."""

    ttft_alone: int
    tpot_alone: int
    #: the fewest replicas each below its simulated capacity, no target (``fewest_replicas`` without targets); 0: not
    #: known (a capacity alone is not compared)
    capacity_alone: int = 0

    @property
    def binding(self) -> str:
        """ "capacity" where capacity alone needs as many replicas as either target alone: neither target binds, as
        fewer replicas would be past a replica's capacity whatever their latency (trial 28 F3: 3 replicas for 40
        requests/s at 16.5 each, p99 TTFT 246 ms against 2 s, TPOT 23.9 ms against 60 ms, read "both alike"); else
        "TTFT" or "TPOT", whichever alone needs more replicas; "both" where they need as many (and capacity alone
        fewer); "none" where each alone needs one replica, the fewest a fleet has (nothing sets more)."""
        if self.capacity_alone and max(self.ttft_alone, self.tpot_alone, self.capacity_alone) == 1:
            return "none"
        if self.capacity_alone and self.capacity_alone >= max(self.ttft_alone, self.tpot_alone):
            return "capacity"
        if self.ttft_alone == self.tpot_alone:
            return "both"
        return "TTFT" if self.ttft_alone > self.tpot_alone else "TPOT"

    @property
    def prefill_stalls(self) -> bool:
        """Whether TPOT alone needs ``PREFILL_STALL_FACTOR`` x TTFT's replicas or more: each replica is kept far
        below what its prompts need so that their prefill, in the same steps as the decodes, stretches those less."""
        return self.tpot_alone >= PREFILL_STALL_FACTOR * self.ttft_alone


def binding_target(
    replica: Replica, prompt_tokens: float, output_tokens: float, rate_per_s: float, **kwargs: Any
) -> BindingTarget | None:
    """The fewest replicas each target alone needs, and capacity alone: ``fewest_replicas(replica, prompt_tokens,
    output_tokens, rate_per_s, **kwargs)`` once with the TPOT target dropped, once with the TTFT target dropped and
    once with both dropped (sized on capacity: its runs memoized, ``capacity_per_s``); three more searches, whose
    simulated runs the sizing has mostly memoized. None unless both targets are given (finite)."""
    ttft, tpot = kwargs.get("ttft_target_s", math.inf), kwargs.get("tpot_target_s", math.inf)
    if not (math.isfinite(ttft) and math.isfinite(tpot)):
        return None
    args = (replica, prompt_tokens, output_tokens, rate_per_s)
    alone = [
        fewest_replicas(*args, **(kwargs | {drop: math.inf})).replicas for drop in ("tpot_target_s", "ttft_target_s")
    ]
    try:
        capacity = fewest_replicas(*args, **(kwargs | {"ttft_target_s": math.inf, "tpot_target_s": math.inf}))
    except InvalidInputError:  # a burst (every request at once) has no rate to size on capacity: not compared
        return BindingTarget(*alone)
    return BindingTarget(*alone, capacity.replicas)


def _doubled_then_bisected(meets: Any, lo: int, hi: int, most: int, refuse: Any) -> int:
    """The fewest replicas k in (lo, most] that ``meets`` (latency falls as k grows): ``hi`` doubled until one meets,
    then bisection between the last miss and it; ``refuse(k)`` raises where even ``most`` misses."""
    while not meets(hi):
        if hi >= most:
            refuse(hi)
        lo, hi = hi, min(2 * hi, most)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi


def fewest_replicas_for_burst(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    arrivals_s: Any,
    lengths: list[tuple[int, int]],
    *,
    percentile: float = 95,
    ttft_target_s: float = math.inf,
    tpot_target_s: float = math.inf,
    max_replicas: int = MAX_REPLICAS,
    prefix_hit_rate: float = 0.0,
) -> Sizing:
    """The fewest replicas k that serve a burst (a trace whose N requests all arrive at the same time) within the
    targets: each of k replicas takes one request in k, as ``fewest_replicas`` deals a trace (the first replica's
    ceil(N / k) simulated, all at time 0), k doubled from 1 until one meets, then bisection (the share, and so its
    queue, shrinks as k grows). A burst has no rate, so there is no capacity to size on: without a target it is
    refused (``InvalidInputError``), and the queue it leaves drains (no replica is past a capacity). More than N
    replicas serve nothing more: where even one request a replica misses, ``OutOfRangeError`` says by how much."""
    if not (math.isfinite(ttft_target_s) or math.isfinite(tpot_target_s)):
        raise InvalidInputError(
            "a burst (every request at the same time) has no rate to size on capacity; give a TTFT or TPOT target"
        )
    no_tpot = _one_token_without_tpot_target(output_tokens, lengths, tpot_target_s)
    arrivals = np.asarray(arrivals_s, dtype=float)
    n = min(len(arrivals), len(lengths))
    most = max(1, min(int(max_replicas), n))  # past one request a replica, more replicas serve nothing more
    runs: dict[int, LoadResult] = {}

    def run_at(k: int) -> LoadResult:
        if k not in runs:
            runs[k] = latency_under_load(
                replica, prompt_tokens, output_tokens, arrivals_s=arrivals[:n:k], lengths=lengths[:n:k],
                prefix_hit_rate=prefix_hit_rate,
            )  # fmt: skip
        return runs[k]

    def meets(k: int) -> bool:
        return within_targets(run_at(k), percentile, ttft_target_s, tpot_target_s)

    def refuse(hi: int) -> None:
        misses = idle_misses(
            replica, prompt_tokens, output_tokens, percentile, ttft_target_s, tpot_target_s, lengths[:n],
            prefix_hit_rate,
        )  # fmt: skip
        if misses:  # each request alone already misses: no number of replicas helps
            raise NoFleetMeetsError("; ".join(m.text() for m in misses), misses)
        r = run_at(hi)
        raise NoFleetMeetsError(
            f"no fleet of up to {most:,} replicas meets the targets for a burst of {n:,} requests: at "
            f"{counted(-(-n // hi), 'request')} each, "
            + _figures_against_targets(r, percentile, ttft_target_s, tpot_target_s, no_tpot)
        )

    hi = _doubled_then_bisected(meets, 0, 1, most, refuse)
    return Sizing(
        hi, math.nan, run_at(hi), float(percentile), float(ttft_target_s), float(tpot_target_s),
        burst_requests_per_replica=-(-n // hi),
    )  # fmt: skip


@dataclass(frozen=True)
class GroupTried:
    """One GPU group ``fewest_gpus`` sized a fleet on: its replicas, or why none meets (``replicas`` 0)."""

    gpus_per_replica: int
    replicas: int = 0  # 0: no fleet of this group meets the targets (``reason``) or it was not needed
    reason: str = ""
    #: skipped: its KV cache cannot hold the longest request (``RequestLongerThanCacheError``; ``reason`` its note)
    skipped: bool = False

    @property
    def gpus(self) -> int:
        return self.replicas * self.gpus_per_replica


@dataclass(frozen=True)
class GroupChoice:
    """The group whose fleet needs the fewest GPUs, its sizing, and every group tried in order."""

    gpus_per_replica: int
    sizing: Sizing
    tried: tuple[GroupTried, ...]


def fewest_gpus(replicas: dict[int, Replica], *args: Any, **kwargs: Any) -> GroupChoice:
    """Of one deployment on GPU groups of several sizes (``replicas``: by GPUs per replica), the group whose fleet
    needs the fewest GPUs in all, replicas x group (ties: the smaller group), each sized by ``fewest_replicas(replica,
    *args, **kwargs)``. A bigger group holds more KV cache per GPU once the weights are paid, so it can need fewer
    GPUs: Llama 3.1 70B in fp8 at 60 requests/s of 800 / 400 tokens (p95 TTFT <= 1.5 s, TPOT <= 50 ms) needs 413 x
    1 H100 (one holds one 4,096-token sequence), 11 x 2 = 22 (two hold 53), 7 x 4 = 28. Groups are tried from the
    smallest; one of at least the best total so far is not (it cannot need fewer GPUs). A group whose KV cache
    cannot hold the longest request (``RequestLongerThanCacheError``: no number of its replicas serves it) is
    skipped, its ``GroupTried.reason`` the one-line note that says so (trial 28 F1: 2 x H100 holds 10,144 tokens of
    Llama-3.3-70B, the longest drawn request 11,919, while 4 and 8 GPUs run them). Raises ``OutOfRangeError``
    naming each group's reason where none meets (``no_group_error``)."""
    tried: list[GroupTried] = []
    failed: list[tuple[int, OutOfRangeError]] = []
    best: tuple[int, Sizing] | None = None
    for n in sorted(replicas):
        if best is not None and n >= best[1].replicas * best[0]:
            tried.append(GroupTried(n, 0, f"not tried: one replica is already {n} GPUs"))
            continue
        try:
            s = fewest_replicas(replicas[n], *args, **kwargs)
        except RequestLongerThanCacheError as exc:
            tried.append(GroupTried(n, 0, exc.skip_note, skipped=True))
            failed.append((n, exc))
            continue
        except OutOfRangeError as exc:
            tried.append(GroupTried(n, 0, str(exc)))
            failed.append((n, exc))
            continue
        tried.append(GroupTried(n, s.replicas))
        if best is None or s.replicas * n < best[1].replicas * best[0]:
            best = (n, s)
    if best is None:
        raise no_group_error(failed)
    return GroupChoice(best[0], best[1], tuple(tried))


def no_group_error(failed: list[tuple[int, OutOfRangeError]]) -> OutOfRangeError:
    """Why no group of ``failed`` ((GPUs a replica, its refusal), every group tried) meets the targets, in one
    sentence: one group tried, its own refusal; a target that an idle replica of every group misses
    (``IdleMiss``), that target with each group's idle figure and the lowest of them (what any fleet reaches at
    best), as ``IdleMiss.text`` says it of one group; where every group's KV cache is shorter than the longest
    request (``RequestLongerThanCacheError``), each group's cache and the longest request and the levers
    (``longer_than_every_cache``); else each group's refusal after "no group of GPUs tried meets the targets"."""
    if len(failed) == 1:
        return failed[0][1]
    if all(isinstance(exc, RequestLongerThanCacheError) for _, exc in failed):
        return longer_than_every_cache([exc for _, exc in failed])
    misses = [getattr(exc, "idle_misses", ()) for _, exc in failed]
    common = [m.metric for m in misses[0] if all(any(o.metric == m.metric for o in others) for others in misses)]
    if common:
        each = [[next(m for m in ms if m.metric == metric) for ms in misses] for metric in common]
        return NoFleetMeetsError("; ".join(IdleMiss.text_of_groups(ms) for ms in each), tuple(sum(each, [])))
    sizes = [n for n, _ in failed]
    groups = ", ".join(f"{n:,}" for n in sizes[:-1]) + f" and {sizes[-1]:,}"
    return NoFleetMeetsError(
        f"no group of GPUs tried ({groups} GPUs a replica) meets the targets: "
        + "; ".join(f"{n:,} per replica: {exc}" for n, exc in failed)
    )


def longer_than_every_cache(refusals: list[RequestLongerThanCacheError]) -> RequestLongerThanCacheError:
    """The refusal where no group tried can run the requests: each group's KV cache against the longest request
    (each group's own ``RequestLongerThanCacheError``, ``refusals``, of the same requests), and the levers; the
    largest group's figures ride on it. One group: its own refusal."""
    if len(refusals) == 1:
        return refusals[0]
    last = max(refusals, key=lambda e: (e.gpus, e.cache_tokens))
    caches = "; ".join(f"{e.group}: {e.cache_tokens:,}" for e in refusals)
    return RequestLongerThanCacheError(
        gpus=last.gpus, gpu=last.gpu, model=last.model, longest_tokens=last.longest_tokens,
        cache_tokens=last.cache_tokens, ranks=last.ranks,
        message=f"{last.model}: no group of GPUs tried can run the requests: the longest is {last.longest_tokens:,} "
        f"tokens (prompt + output), longer than each group's KV cache ({caches} tokens); give "
        f"{LONGER_THAN_CACHE_LEVERS}",
    )  # fmt: skip


def sweep_within_capacity(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rates_per_s: Any,
    *,
    burstiness: float = 1.0,
    prefix_hit_rate: float = 0.0,
    replicas: int = 1,
    routing: str = "random",
    lengths: list[tuple[int, int]] | None = None,
) -> list[LoadResult | None]:
    """One replica's simulated run (``latency_under_load``, 1,000 requests of fixed lengths; ``lengths``: those
    requests, as ``replica_run`` takes them) at each rate of
    ``rates_per_s`` (requests/s a replica), one of ``replicas`` taking traffic whose gaps are gamma of
    ``burstiness`` dealt by ``routing`` (each replica's gaps at ``replica_burstiness``, as ``replica_run``), None
    where the rate is past the replica's simulated capacity (``past_capacity``): there the queue grows without bound and a finite run's
    figures only say how long it ran. ``prefix_hit_rate``: the share of each prompt the prefix cache holds. Runs are
    memoized (``latency_under_load``)."""
    rates = np.asarray(rates_per_s, dtype=float).ravel()
    if not ((rates > 0) & np.isfinite(rates)).all():
        raise InvalidInputError(f"rates {rates_per_s!r} must be positive finite numbers of requests per second")
    over = past_capacity(replica, prompt_tokens, output_tokens, rates, prefix_hit_rate)
    return [
        latency_under_load(
            replica,
            prompt_tokens,
            output_tokens,
            rate_per_s=float(r),
            burstiness=replica_burstiness(burstiness, replicas, routing),
            prefix_hit_rate=prefix_hit_rate,
            requests_per_rank=True,
            num_requests=len(lengths) if lengths else DEFAULT_REQUESTS,
            lengths=lengths,
        )  # fmt: skip
        if not past
        else None
        for r, past in zip(rates, over, strict=True)
    ]


#: Traffic multipliers (of a fleet's rate) at which ``headroom_over`` looks for the first miss: the review's
#: latency-against-load view (0.25x to 2x the planned peak), and how finely the headroom is bisected.
LOAD_CURVE = (0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)
HEADROOM_STEP = 0.02


def headroom_over(meets_at: Any, multiples: tuple[float, ...] = LOAD_CURVE, step: float = HEADROOM_STEP) -> float:
    """The most traffic, as a multiple of a fleet's rate less 1, at which its replicas (fixed) still meet their
    targets (``meets_at(multiple)``; latency grows with the traffic): where 1x meets, bisected to ``step`` between 1
    and the first of ``multiples`` above 1 that misses (``math.inf`` where none to their end does: more than 2x under
    ``LOAD_CURVE``); where 1x misses, between the largest below 1 that meets and the next (a negative headroom, the
    shortfall), -1 where even the smallest misses. The review's headroom (``planner.export.evaluate.load_curve``) and
    ``planner plan --replicas``'."""
    if meets_at(1.0):
        lo, hi = 1.0, next((m for m in multiples if m > 1 and not meets_at(m)), None)
        if hi is None:
            return math.inf
    else:
        below = sorted((m for m in multiples if m < 1), reverse=True)
        hi, lo = 1.0, 0.0
        for m in below:
            if meets_at(m):
                lo = m
                break
            hi = m
        if lo == 0.0:
            return -1.0
    while hi - lo > step:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if meets_at(mid) else (lo, mid)
    return lo - 1.0


@dataclass(frozen=True)
class FleetCheck:
    """A given fleet at a rate (``check_fleet``): one replica's simulated run, whether it meets the targets, its
    capacity and the headroom over the rate; ``one_lost``: the same rate on one replica fewer (None for one replica)."""

    replicas: int
    rate_per_s: float  # the fleet's requests per second
    percentile: float
    ttft_target_s: float  # inf: no target
    tpot_target_s: float
    result: LoadResult | None  # one replica's run; None past its capacity (the queue grows without bound)
    capacity_per_s: float  # one replica's steady-state capacity (``capacity_per_s``, Excel CAPACITY_RPS)
    #: The most traffic, as a multiple of ``rate_per_s`` less 1, the replicas take within the targets
    #: (``headroom_over``; without targets: within the capacity, replicas x capacity / rate - 1, as CAPACITY_RPS sizes)
    headroom: float
    one_lost: FleetCheck | None = None
    #: A recorded traffic (``check_fleet``'s ``arrivals_s``): the headroom's multiples replay it faster, not at a rate.
    replayed: bool = False
    #: The fleet's rate its capacity is judged at, requests/s: ``rate_per_s``, or a trace's mean with outlier gaps
    #: shortened (``planner.serving.load.active_rate_per_s``); NaN: ``rate_per_s``.
    judged_rate_per_s: float = math.nan
    #: A trace's busiest ``CAPACITY_WINDOW_S``'s rate, requests/s (``planner.serving.load.busiest_rate_per_s``),
    #: warned about where past the capacity; NaN: a rate (its minutes: ``minutes_past``).
    busiest_rate_per_s: float = math.nan
    #: At a rate: the share of its minutes past each replica's capacity (``poisson_minutes_past``, at the shape
    #: each replica sees); NaN for a trace.
    minutes_past: float = math.nan

    @property
    def rate_per_replica_s(self) -> float:
        return self.rate_per_s / self.replicas

    @property
    def judged_rate_per_replica_s(self) -> float:
        """Each replica's share of the rate its capacity is judged at (a trace's mean, else the rate)."""
        return (self.rate_per_s if math.isnan(self.judged_rate_per_s) else self.judged_rate_per_s) / self.replicas

    @property
    def busiest_rate_per_replica_s(self) -> float:
        """Each replica's share of a trace's busiest window's rate (NaN at a rate)."""
        return self.busiest_rate_per_s / self.replicas

    @property
    def busy_window_past(self) -> bool:
        """Whether a trace's busiest window is at or past each replica's capacity (its mean below it): the replay's
        queue builds there and drains, simulated, and a surface warns."""
        return self.busiest_rate_per_replica_s >= self.capacity_per_s and self.result is not None

    @property
    def on_capacity(self) -> bool:
        """Whether no target was given: the fleet is judged on its capacity alone."""
        return not (math.isfinite(self.ttft_target_s) or math.isfinite(self.tpot_target_s))

    @property
    def meets(self) -> bool:
        """Below each replica's capacity and, with targets, within them at ``percentile``."""
        return self.result is not None and within_targets(
            self.result, self.percentile, self.ttft_target_s, self.tpot_target_s
        )

    @property
    def rate_within_targets_per_replica_s(self) -> float:
        """The most requests per second one replica takes within the targets: (1 + headroom) x its share (to
        ``HEADROOM_STEP``; inf past ``LOAD_CURVE``'s end); without targets, its capacity."""
        if self.on_capacity:
            return self.capacity_per_s
        return (1.0 + self.headroom) * self.rate_per_replica_s


def check_fleet(
    replica: Replica,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: float,
    replicas: int,
    *,
    percentile: float = 95,
    ttft_target_s: float = math.inf,
    tpot_target_s: float = math.inf,
    burstiness: float = 1.0,
    lengths: list[tuple[int, int]] | None = None,
    prefix_hit_rate: float = 0.0,
    lose_one: bool = True,
    routing: str = "random",
    arrivals_s: Any = None,
) -> FleetCheck:
    """``replicas`` replicas taking ``rate_per_s`` (``replica_run``: the traffic's gamma gaps of ``burstiness`` dealt
    by ``routing``, at random by default), as ``fewest_replicas`` runs a count: one replica's run (None at or past its capacity,
    ``past_capacity``), each replica's capacity (``capacity_per_s``, the Excel CAPACITY_RPS) and the headroom over the
    rate: with targets, ``headroom_over`` (the review's rule; a negative one is a shortfall), without, replicas x
    capacity / rate - 1; with ``lose_one`` and more than one replica, the same on one replica fewer
    (``FleetCheck.one_lost``: does the fleet hold its targets when one fails?).
    ``arrivals_s``: a recorded traffic's arrivals, with its ``lengths`` (``planner.serving.load.TraceLoad``;
    ``rate_per_s`` its mean rate), dealt over the replicas as ``fewest_replicas`` deals it (``replica_run``); the
    headroom's m x the rate is the same trace replayed m times as fast (each arrival time / m: its bursts and lulls
    kept, squeezed), and the capacity is judged at the mean lengths and the trace's mean rate, outlier gaps
    shortened (``planner.serving.load.active_rate_per_s``), as ``fewest_replicas`` judges it; its busiest window's
    rate is kept (``FleetCheck.busiest_rate_per_s``) to warn where past the capacity. At a rate, the share of its
    minutes past the capacity (``poisson_minutes_past``) is kept likewise. A burst (every
    arrival at one time) has no rate to take a multiple of: refused (``InvalidInputError``)."""
    if percentile not in PERCENTILES:
        raise percentile_error(percentile)
    arrivals = None if arrivals_s is None else np.asarray(arrivals_s, dtype=float)
    if arrivals is not None and (not len(arrivals) or np.ptp(arrivals) == 0):
        raise InvalidInputError(
            "a burst (every request at the same time) has no rate, so no capacity or headroom over it to judge a "
            "given fleet by; size the fleet on the burst instead (without a replica count)"
        )
    k, rate = int(replicas), float(rate_per_s)
    if k < 1:
        raise InvalidInputError(f"replicas {replicas!r} is not a whole number of 1 or more")
    if not 0 < rate < math.inf:
        raise InvalidInputError(f"rate {rate_per_s!r} is not a positive finite number of requests per second")
    cap = capacity_per_s(replica, prompt_tokens, output_tokens, prefix_hit_rate)
    judged = rate if arrivals is None else active_rate_per_s(arrivals)  # as ``fewest_replicas`` judges it
    runs: dict[float, LoadResult | None] = {}

    def run(multiple: float) -> LoadResult | None:
        if multiple not in runs:
            at = judged * multiple
            past = at / k >= cap or bool(
                past_capacity(replica, prompt_tokens, output_tokens, [at / k], prefix_hit_rate)[0]
            )
            runs[multiple] = None if past else replica_run(
                replica, prompt_tokens, output_tokens, rate * multiple, k, burstiness=burstiness, lengths=lengths,
                prefix_hit_rate=prefix_hit_rate, routing=routing,
                arrivals_s=None if arrivals is None else arrivals / multiple,
            )  # fmt: skip
        return runs[multiple]

    def meets_at(multiple: float) -> bool:
        r = run(multiple)
        return r is not None and within_targets(r, percentile, ttft_target_s, tpot_target_s)

    targets = math.isfinite(ttft_target_s) or math.isfinite(tpot_target_s)
    headroom = headroom_over(meets_at) if targets else k * cap / judged - 1.0
    one_lost = None
    if lose_one and k > 1:
        one_lost = check_fleet(
            replica, prompt_tokens, output_tokens, rate, k - 1, percentile=percentile, ttft_target_s=ttft_target_s,
            tpot_target_s=tpot_target_s, burstiness=burstiness, lengths=lengths, prefix_hit_rate=prefix_hit_rate,
            lose_one=False, routing=routing, arrivals_s=arrivals,
        )  # fmt: skip
    busiest = math.nan if arrivals is None else busiest_rate_per_s(arrivals)
    minutes = (
        poisson_minutes_past(rate / k, cap, replica_burstiness(burstiness, k, routing))
        if arrivals is None
        else math.nan
    )
    return FleetCheck(
        k, rate, float(percentile), float(ttft_target_s), float(tpot_target_s), run(1.0), cap, headroom, one_lost,
        arrivals is not None, judged, busiest, minutes,
    )  # fmt: skip


def load_percentile(
    gpu: Any,
    model: Any,
    rate_per_s: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    metric: str = "ttft",
    percentile: float = 99,
    speculative_tokens: Any = None,
    acceptance_length: Any = None,
    prefix_hit_rate: Any = None,
    speculative_method: Any = None,
    burstiness: Any = None,
    replicas: Any = None,
    routing: Any = None,
    prompt_tokens_high: Any = None,
    output_tokens_high: Any = None,
    length_percentile: Any = None,
    context: Any = None,
    spreads: list | None = None,
    **options: Unpack[ReplicaOptions],
) -> Any:
    """One percentile of one latency, seconds, of a replica taking ``rate_per_s`` requests whose gaps are gamma of
    shape ``burstiness`` (None or blank: 1, Poisson; ``burstiness_shape``) of fixed lengths, 1,000 of them: one
    replica's ``replica_run`` (the traffic as it comes, as ``planner plan --rate --replicas 1 --burstiness`` runs
    it), ``.<metric>_s.p<percentile>``. With ``replicas`` (a whole number; None or blank: the replica takes the
    traffic as it comes), ``burstiness`` is the fleet's incoming traffic's, as REPLICAS takes it, and the replica
    sees the shape ``routing`` (``routing_name``) leaves over that many (``replica_burstiness``), so the percentiles
    of a fleet REPLICAS sized read as ``planner plan --rate --replicas`` gives them (trial 24 F6). ``prompt_tokens`` and
    ``output_tokens`` are mean lengths (207.5 is taken, ``planner.checks.mean_tokens_or_mask``); each request sends the
    mean in whole tokens (``fixed_length_tokens``: 207.5 -> 208), as ``planner plan --rate`` does. Arguments broadcast (one
    simulation per scenario, ~0.05 s each, and the capacity runs once per replica and lengths, ~0.2-1.8 s); ``errors="coerce"`` gives NaN where a scenario has no answer, as
    where the rate is past the replica's simulated capacity (``capacity_per_s``; "raise":
    ``OutOfRangeError``, #NUM! in a cell): there a finite run's percentiles only say how long it ran.
    ``speculative_tokens`` and ``acceptance_length``: the replica decodes speculatively
    (``planner.serving.speculative.speculation_for``; both or neither; their help: ``planner.options.
    SPECULATION_OPTIONS``), with ``speculative_method``'s draft (None or blank: the model's default, ``planner.
    serving.speculative.default_method``). ``prefix_hit_rate``: the share of each prompt the prefix cache holds, 0 or more and below
    1 (None: 0; ``latency_under_load``). TPOT and ITL of one output token (``one_output_token``) are refused
    (``OutOfRangeError``, #NUM!): no token comes after the first. Options (the group and its split, precisions,
    the engine, catalog, errors): ``planner.options.ReplicaOptions``. ``prompt_tokens_high`` / ``output_tokens_high``
    (None or blank: every request at the means) and ``length_percentile`` (None or blank: 95, plan's default
    ``--percentile``): each request's lengths drawn as ``planner plan --rate --replicas 1 --prompt-tokens-high
    --output-tokens-high`` draws them (``drawn_lengths`` at plan's default --percentile 95: 1,000 requests), cut to
    ``context`` (plan's --context; None or blank: the model's trained context, no cut below it). ``spreads``: a list
    each scenario's ``sampling_spread`` of the same run is appended to (None: not run; PLANNER_WHY's, not the cell's:
    five draws more)."""
    if metric not in METRICS:
        raise InvalidInputError(f"metric {metric!r} is not known; use one of {', '.join(METRICS)}")
    if percentile not in PERCENTILES:
        raise percentile_error(percentile)

    def one(
        replica: Replica,
        rate: float,
        prompt: float,
        output: float,
        hit: float,
        shape: Any,
        k: Any,
        how: Any,
        p_high: Any,
        o_high: Any,
        length_q: Any,
        limit: Any,
    ) -> float:
        if metric in ("tpot", "itl") and one_output_token(output):
            raise OutOfRangeError(f"{NO_TPOT_WITH_ONE_TOKEN}; give output_tokens of 2 or more")
        if math.isfinite(rate) and past_capacity(replica, prompt, output, [rate], hit)[0]:
            cap = capacity_per_s(replica, prompt, output, hit)
            raise OutOfRangeError(
                f"{rate:g} requests/s is past one replica's capacity ({cap:.3g} requests/s, simulated steady state):"
                " its queue grows without bound, so no percentile holds; use more replicas"
            )
        seen = burstiness_shape(shape)
        if k is not None and not (isinstance(k, str) and not k.strip()):
            seen = replica_burstiness(seen, _replica_count(k), routing_name(how))
        # drawn as plan --rate --replicas 1 draws them at its default --percentile (95)
        lengths = drawn_lengths(replica, prompt, output, p_high, o_high, length_q, 95.0, limit)
        r = replica_run(replica, prompt, output, rate, 1, burstiness=seen, prefix_hit_rate=hit, lengths=lengths)
        if spreads is not None:  # the same run over the arrival draws (seed 0's is the one above)
            spreads.append(
                sampling_spread(
                    replica,
                    prompt,
                    output,
                    rate,
                    1,
                    percentile=percentile,
                    burstiness=seen,
                    lengths=lengths,
                    prefix_hit_rate=hit,
                )  # fmt: skip
            )
        return getattr(r, f"{metric}_s").at(percentile)

    args = (gpu, model, rate_per_s, prompt_tokens, output_tokens, speculative_tokens, acceptance_length)
    o = Options.read(ReplicaOptions, options, load_percentile)
    each = (burstiness, replicas, routing, prompt_tokens_high, output_tokens_high, length_percentile, context)
    return _each_replica(one, *args, prefix_hit_rate, o, per_scenario=each, method=speculative_method)


def _replica_count(value: Any) -> int:
    """A replica count as a cell gives it: a whole number of 1 or more, else ``OutOfRangeError`` (#NUM!) or, text,
    ``InvalidInputError`` (#VALUE!)."""
    try:
        k = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(
            f"replicas {value!r} is not a number; give a whole number of replicas, e.g. 18"
        ) from None
    if not (k >= 1 and k == int(k)):
        raise OutOfRangeError(f"replicas {value!r} is not a whole number of 1 or more; e.g. 18")
    return int(k)


def replicas_needed(
    gpu: Any,
    model: Any,
    rate_per_s: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    ttft_target_s: Any = None,
    tpot_target_s: Any = None,
    percentile: float = 95,
    prefix_hit_rate: Any = None,
    burstiness: Any = None,
    routing: Any = None,
    prompt_tokens_high: Any = None,
    output_tokens_high: Any = None,
    length_percentile: Any = None,
    context: Any = None,
    sizings: list | None = None,
    edges: list | None = None,
    **options: Unpack[ReplicaOptions],
) -> Any:
    """The fewest replicas whose simulated ``percentile`` TTFT and TPOT meet the targets (seconds; None: no target)
    at ``rate_per_s`` requests of the mean lengths, the traffic's gaps gamma of shape ``burstiness`` (None or blank:
    Poisson) dealt over the replicas by ``routing`` (``routing_name``: None or blank "random", or "round-robin"):
    ``fewest_replicas``, as ``planner plan --rate --burstiness --routing`` sizes a fleet (the Excel function
    REPLICAS). Without targets, the fewest replicas each below its capacity; one output
    token: sized on TTFT alone, a TPOT target refused (``fewest_replicas``). Broadcasts as ``load_percentile`` (the
    targets too); a few simulations per scenario (~0.2-2 s). Raises (NaN with ``errors="coerce"``) where no number of
    replicas meets them. ``sizings``: a list each scenario's ``Sizing`` is appended to (REPLICAS' PLANNER_WHY);
    ``edges``: one each scenario's ``DrawsEdge`` is appended to (``draws_edge``, as ``planner plan --rate`` warns).
    ``prompt_tokens_high`` / ``output_tokens_high`` (None or blank: the mean, every request alike) and
    ``length_percentile`` (None or blank: ``percentile``): each request's lengths drawn as ``planner plan --rate
    --prompt-tokens-high --output-tokens-high --length-percentile`` draws them, cut to ``context`` as ``--context``
    cuts them (None or blank: the model's trained context, no cut below it; ``drawn_lengths``)."""

    def size(
        replica: Replica, prompt: float, output: float, rate: float, percentile: float, ttft_s: float, tpot_s: float,
        hit: float, shape: float, routing: str, lengths: list[tuple[int, int]],
    ) -> Sizing:  # fmt: skip
        return fewest_replicas(  # refuses an infinite rate (all at once) itself
            replica, prompt, output, rate, percentile=percentile, ttft_target_s=ttft_s, tpot_target_s=tpot_s,
            prefix_hit_rate=hit, burstiness=shape, routing=routing, lengths=lengths,
        )  # fmt: skip

    return _each_fleet_sizing(
        size, lambda sized: float(sized.replicas), sizings, replicas_needed, options, gpu, model, rate_per_s,
        prompt_tokens, output_tokens, ttft_target_s, tpot_target_s, percentile, prefix_hit_rate, burstiness, routing,
        prompt_tokens_high, output_tokens_high, length_percentile, context, edges,
    )  # fmt: skip


def fleet_gpus_needed(
    gpu: Any,
    model: Any,
    rate_per_s: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    ttft_target_s: Any = None,
    tpot_target_s: Any = None,
    percentile: float = 95,
    prefix_hit_rate: Any = None,
    burstiness: Any = None,
    routing: Any = None,
    prompt_tokens_high: Any = None,
    output_tokens_high: Any = None,
    length_percentile: Any = None,
    context: Any = None,
    choices: list | None = None,
    edges: list | None = None,
    **options: Unpack[ReplicaOptions],
) -> Any:
    """The fewest GPUs in all whose fleet's simulated ``percentile`` TTFT and TPOT meet the targets at ``rate_per_s``
    requests (gaps gamma of shape ``burstiness``, None: Poisson, dealt by ``routing`` as ``replicas_needed``): each
    group of ``planner.deploy.groups_to_try`` from the smallest that holds a request (prompt +
    output tokens, ``planner.api.min_gpus``) sized by ``fewest_replicas``, the fewest replicas x group kept
    (``group_choice``), as ``planner plan --rate`` without ``--gpus`` sizes a fleet (the Excel function FLEET_GPUS). A
    given ``gpus`` sizes that group alone (REPLICAS x gpus). ``choices``: a list each scenario's ``GroupChoice`` is
    appended to (the group kept and each group tried: FLEET_GPUS' PLANNER_WHY); ``edges``: as ``replicas_needed``'s,
    on the group kept. Broadcasts as ``replicas_needed``; a
    few simulations per group. Raises (NaN with ``errors="coerce"``) where no group meets them. The high lengths and
    their percentile: as ``replicas_needed`` (every group sized on the same drawn requests, as ``planner plan``)."""
    return _each_fleet_sizing(
        group_choice, lambda choice: float(choice.sizing.replicas * choice.gpus_per_replica), choices,
        fleet_gpus_needed, options, gpu, model, rate_per_s, prompt_tokens, output_tokens, ttft_target_s, tpot_target_s,
        percentile, prefix_hit_rate, burstiness, routing, prompt_tokens_high, output_tokens_high, length_percentile,
        context, edges,
    )  # fmt: skip


def _each_fleet_sizing(
    size: Callable[..., Any], figure: Callable[[Any], float], seen: list | None, function: Callable[..., Any],
    options: dict[str, Any], gpu: Any, model: Any, rate_per_s: Any, prompt_tokens: Any, output_tokens: Any,
    ttft_target_s: Any, tpot_target_s: Any, percentile: float, prefix_hit_rate: Any, burstiness: Any, routing: Any,
    prompt_tokens_high: Any, output_tokens_high: Any, length_percentile: Any, context: Any, edges: list | None = None,
) -> Any:  # fmt: skip
    """What ``replicas_needed`` (REPLICAS) and ``fleet_gpus_needed`` (FLEET_GPUS) share: each broadcast scenario
    (``_each_replica``) read as ``planner plan --rate`` reads it, each request's lengths drawn at ``percentile``
    (``drawn_lengths``), the targets in seconds (``_target_s``), the burstiness a gamma shape (``burstiness_shape``),
    the routing a name (``routing_name``), then sized by ``size(replica, prompt, output, rate, percentile, ttft_s,
    tpot_s, hit, burstiness, routing, lengths)`` (``group_choice``'s arguments, in its order). Each scenario's sizing
    is appended to ``seen`` (None: kept nowhere) and answers ``figure(sizing)``. ``function``: the public function
    whose ``options`` these are (``Options.read`` names it in a refusal); a percentile outside ``PERCENTILES`` is
    refused first. ``edges``: a list each scenario's ``draws_edge`` at the fleet sized is appended to (None: not run;
    the replica on the group kept where ``size`` chose one)."""
    if percentile not in PERCENTILES:
        raise percentile_error(percentile)

    def one(
        replica: Replica, rate: float, prompt: float, output: float, hit: float, ttft: Any, tpot: Any, shape: Any,
        dealt: Any, p_high: Any, o_high: Any, length_q: Any, limit: Any,
    ) -> float:  # fmt: skip
        lengths = drawn_lengths(replica, prompt, output, p_high, o_high, length_q, percentile, limit)
        sized = size(
            replica, prompt, output, rate, percentile, _target_s(ttft, "ttft_target_s"),
            _target_s(tpot, "tpot_target_s"), hit, burstiness_shape(shape), routing_name(dealt), lengths,
        )  # fmt: skip
        if seen is not None:
            seen.append(sized)
        if edges is not None:  # the fleet's edge, as planner plan --rate warns of it
            on = replace(replica, gpus=sized.gpus_per_replica) if isinstance(sized, GroupChoice) else replica
            fleet = sized.sizing if isinstance(sized, GroupChoice) else sized
            edges.append(
                draws_edge(
                    on,
                    prompt,
                    output,
                    rate,
                    fleet.replicas,
                    percentile=percentile,
                    ttft_target_s=fleet.ttft_target_s,
                    tpot_target_s=fleet.tpot_target_s,
                    burstiness=burstiness_shape(shape),
                    lengths=lengths,
                    prefix_hit_rate=hit,
                    routing=routing_name(dealt),
                )  # fmt: skip
            )
        return figure(sized)

    args = (gpu, model, rate_per_s, prompt_tokens, output_tokens, None, None)
    o = Options.read(ReplicaOptions, options, function)
    each = (ttft_target_s, tpot_target_s, burstiness, routing, prompt_tokens_high, output_tokens_high)
    return _each_replica(one, *args, prefix_hit_rate, o, per_scenario=each + (length_percentile, context))


def group_choice(
    replica: Replica, prompt: float, output: float, rate: float, percentile: float, ttft_s: float, tpot_s: float,
    hit: float = 0.0, burstiness: float = 1.0, routing: str = "random", lengths: list[tuple[int, int]] | None = None,
) -> GroupChoice:  # fmt: skip
    """``fewest_gpus`` for a replica whose group is not given (``replica.gpus`` None): its groups from the smallest
    that holds one request of ``prompt`` + ``output`` tokens (``groups_to_try``), both under the replica's engine's
    rules (as ``planner plan --engine``); a given group alone. The traffic's gaps gamma of ``burstiness``, dealt by
    ``routing`` (``ROUTINGS``)."""
    from planner import api

    if replica.gpus is not None:
        groups: tuple[int, ...] = (int(replica.gpus),)
    else:
        fits = dict(weight_precision=replica.weight_precision, kv_precision=replica.kv_precision)
        layout, engine = check_parallelism(replica.parallelism), replica.engine
        least = int(
            api.min_gpus(
                replica.gpu, replica.model, prompt + output, parallelism=layout, engine=engine,
                catalog=replica.catalog, **fits,
            )
        )  # fmt: skip
        tried = api.groups_to_try(replica.model, catalog=replica.catalog, parallelism=layout, engine=engine)
        groups = tuple(n for n in tried if n >= least) or (least,)
    replicas = {n: replace(replica, gpus=n) for n in groups}
    return fewest_gpus(
        replicas, prompt, output, rate, percentile=percentile, ttft_target_s=ttft_s, tpot_target_s=tpot_s,
        prefix_hit_rate=hit, burstiness=burstiness, routing=routing, lengths=lengths,
    )  # fmt: skip


#: How the shared refusals (``planner.serving.length_options``) name the values where a cell or the Python API gave
#: them: the arguments' own names (``planner plan`` names its options, ``PLAN_NAMES``).
ARGUMENT_NAMES = {
    "prompt_tokens_high": "prompt_tokens_high",
    "output_tokens_high": "output_tokens_high",
    "prompt_tokens": "prompt_tokens",
    "output_tokens": "output_tokens",
    "percentile": "percentile",
    "length_percentile": "length_percentile",
    "rate": "rate_per_s",
}


def _blank(value: Any) -> bool:
    """Whether an optional argument is left out: None, NaN or blank text (an empty cell)."""
    if isinstance(value, str):
        return not value.strip()
    return value is None or (isinstance(value, float) and math.isnan(value))


def _whole_tokens_given(value: Any, name: str, least: int = 1) -> int | None:
    """A whole count of tokens as a cell or caller gives it (``planner plan --prompt-tokens-high`` / ``--context``):
    None or blank None, else whole tokens of at least ``least`` (text as ``--context`` reads it: "30k", "30,000");
    ``InvalidInputError`` (#VALUE!) for text that is no count, ``OutOfRangeError`` (#NUM!) for a number that is no
    whole count in range."""
    if _blank(value):
        return None
    if isinstance(value, str):
        try:
            value = parse_token_count(value)
        except ValueError as exc:
            raise InvalidInputError(f"{name}: {exc}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise InvalidInputError(
            f"{name} {value!r} is not a number of tokens, e.g. 30000 or 30k; leave it blank for none"
        )
    tokens = float(value)
    if not (least <= tokens <= MAX_CONTEXT_TOKENS and tokens == int(tokens)):
        raise OutOfRangeError(
            f"{name} {value!r} is not a whole number of tokens from {least} to {MAX_CONTEXT_TOKENS:,}, e.g. 30000"
        )
    return int(tokens)


def _length_percentile(value: Any) -> float | None:
    """A length percentile as a cell gives it (90, 95 or 99; "p95" and "95%" read as ``plan --length-percentile``
    reads them); None or blank None; ``InvalidInputError`` (#VALUE!) for text or a logical that is no number."""
    if _blank(value):
        return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        try:
            return parse_percent(value, share=False)  # the one reading of "95%" and "p95" (planner.units)
        except ValueError:
            pass
    elif not isinstance(value, bool):
        return float(value)
    raise InvalidInputError(f"length_percentile {value!r} is not a percentile; use 90, 95 or 99, or leave it blank")


def drawn_lengths(
    replica: Replica, prompt: float, output: float, prompt_high: Any, output_high: Any, length_percentile: Any,
    percentile: float, context: Any = None,
) -> list[tuple[int, int]] | None:  # fmt: skip
    """Each simulated request's (prompt, output) tokens where a high length is given, checked and drawn by the code
    ``planner plan --rate --prompt-tokens-high --output-tokens-high --length-percentile --context`` runs
    (``planner.serving.length_options``: ``check_length_percentile``, ``check_high_lengths`` with the arguments'
    names, ``sized_lengths`` around the means in whole tokens, ``prompt``, ``output``, capped at the model's trained
    context as plan caps them; then ``planner.serving.load.cut_to_context`` at ``context``, plan's --context, where
    given: blank, the model's trained context, no cut below it). ``length_percentile`` blank is the targets'
    ``percentile``, as ``--length-percentile`` defaults to ``--percentile``. None where neither high length is
    given: every request at the means, as before (a ``context`` then only refuses means longer than it, as plan
    does). Refused as plan refuses: a high length below its mean, a length percentile without a high length, or one
    that is not 90, 95 or 99 (``InvalidInputError``: #VALUE!)."""
    p_high = _whole_tokens_given(prompt_high, "prompt_tokens_high")
    o_high = _whole_tokens_given(output_high, "output_tokens_high")
    length_q = _length_percentile(length_percentile)
    limit = _whole_tokens_given(context, "context", least=2)
    check_length_percentile(length_q, p_high, o_high, names=ARGUMENT_NAMES)
    q = length_percentile_of(percentile, length_q)
    by = "percentile" if length_q is None else "length_percentile"
    check_high_lengths(p_high, o_high, prompt, output, q, at_rate=True, by=by, names=ARGUMENT_NAMES)
    if limit is not None and prompt + output > limit:
        raise InvalidInputError(
            f"prompt_tokens {prompt:,g} + output_tokens {output:,g} are more than context {limit:,} (the tokens one "
            f"sequence may hold, prompt + output); give context {math.ceil(prompt + output):,} or more"
        )
    cat = replica.catalog or default_catalog()
    model = replica.model if hasattr(replica.model, "max_context") else cat.model(replica.model)
    lengths = sized_lengths(int(prompt), int(output), p_high, o_high, q, percentile, model.max_context)
    return cut_to_context(lengths, limit)[0] if lengths and limit is not None else lengths


def replica_capacity_per_s(
    gpu: Any,
    model: Any,
    prompt_tokens: Any,
    output_tokens: Any,
    *,
    prefix_hit_rate: Any = None,
    **options: Unpack[ReplicaOptions],
) -> Any:
    """Requests per second one replica completes in steady state at the mean lengths (``capacity_per_s``: the rule
    every surface judges capacity by; the Excel function CAPACITY_RPS). Broadcasts as ``load_percentile``."""

    def one(replica: Replica, rate: float, prompt: float, output: float, hit: float) -> float:
        return capacity_per_s(replica, prompt, output, hit)

    args = (gpu, model, 1.0, prompt_tokens, output_tokens, None, None)
    return _each_replica(one, *args, prefix_hit_rate, Options.read(ReplicaOptions, options, replica_capacity_per_s))


def _target_s(value: Any, name: str) -> float:
    """A latency target in seconds above 0, or inf for none (None or blank), read as ``planner plan --ttft-target``
    and a scenario read it (``planner.units.parse_seconds``): a number is seconds, text carries its unit ("800 ms"),
    and a bare number above ``BARE_TTFT_MAX_S`` / ``BARE_TPOT_MAX_S`` is refused as milliseconds typed as seconds
    (OutOfRangeError: #NUM!; REPLICAS took 1500 for 1,500 s where plan refused it)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.inf
    ttft = name.startswith("ttft")
    if isinstance(value, np.number):
        value = float(value)
    try:
        t = parse_seconds(value, BARE_TTFT_MAX_S if ttft else BARE_TPOT_MAX_S, name, 1.5 if ttft else 0.05)
    except UnitSlipError as exc:
        raise OutOfRangeError(f"{name}: {exc}") from None
    except ValueError:
        t = math.nan
    if not 0 < t < math.inf:
        shown = repr(t) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else repr(value)
        kind = InvalidInputError if math.isnan(t) else OutOfRangeError  # text: #VALUE!; a number out of range: #NUM!
        raise kind(f"{name} {shown} is not a number of seconds above 0, e.g. 1.5; leave it blank for none")
    return t


def _each_replica(
    body, gpu, model, rate_per_s, prompt_tokens, output_tokens, spec_tokens, acceptance, hit, o, per_scenario=(),
    method=None,
) -> Any:  # fmt: skip
    """``body(replica, rate, prompt, output, hit, *more)`` for each scenario of the broadcast arguments: the replica on
    its GPU, model, group, precisions and layout (speculating where ``spec_tokens`` and ``acceptance`` are given), each
    mean length in whole tokens as ``planner plan --rate`` sends it, the prefix hit a share (``prefix_hit_share``),
    and ``more`` the scenario's value of each of ``per_scenario`` (broadcast with the rest, as given: REPLICAS'
    targets, one a row of a range). NaN (with the reason noted, ``errors="coerce"``) where a scenario has no answer;
    ``o``: the read options."""
    errors = o.errors
    layout = check_parallelism(o.parallelism)
    if _named(method) and not np.any([_named(x) for x in np.ravel(np.asarray(spec_tokens, dtype=object))]):
        raise InvalidInputError(  # planner plan's words for --speculative-method without --speculative-tokens
            "speculative_method names the draft of speculative decoding; give speculative_tokens and "
            "acceptance_length with it"
        )
    accepted = "rate_per_s must be a number of requests per second above 0 (inf: all at once)"
    rate = _numbers(rate_per_s, accepted, errors)
    with np.errstate(invalid="ignore"):
        rate, bad_rate = _checked(rate, np.isnan(rate) | (rate <= 0), accepted, errors, 1.0)
    prompt, bad_p = mean_tokens_or_mask(prompt_tokens, "prompt_tokens", MAX_CONTEXT_TOKENS, errors)
    output, bad_o = mean_tokens_or_mask(output_tokens, "output_tokens", MAX_CONTEXT_TOKENS, errors)
    items = np.broadcast_arrays(
        *(np.asarray(x, dtype=object) for x in (gpu, model, rate, prompt, output, o.gpus, o.weight_precision)),
        np.asarray(o.kv_precision, dtype=object),
        np.asarray(bad_rate | bad_p | bad_o, dtype=bool),
        np.asarray(spec_tokens, dtype=object),
        np.asarray(acceptance, dtype=object),
        np.asarray(hit, dtype=object),
        np.asarray(method, dtype=object),
        *(np.asarray(x, dtype=object) for x in per_scenario),
    )
    shape = items[0].shape
    flat = [a.ravel() for a in items]
    out = np.full(len(flat[0]), math.nan)
    for i in range(len(out)):
        if flat[8][i]:
            continue
        try:
            replica = Replica(
                flat[0][i], flat[1][i], flat[5][i], weight_precision=flat[6][i], kv_precision=flat[7][i],
                engine=o.engine, parallelism=layout,
            )  # fmt: skip
            spec = speculation_for(flat[1][i], flat[9][i], flat[10][i], catalog=o.catalog, method=flat[12][i])
            replica = replace(replica, catalog=o.catalog, speculative=spec)
            # each request the mean in whole tokens, as `planner plan --rate` runs a fixed-length mean (207.5 -> 208)
            p_i, o_i = float(fixed_length_tokens(flat[3][i])), float(fixed_length_tokens(flat[4][i]))
            more = (a[i] for a in flat[13:])
            out[i] = body(replica, float(flat[2][i]), p_i, o_i, prefix_hit_share(flat[11][i]), *more)
        except Exception as exc:  # a scenario without an answer: NaN and its reason (errors="coerce")
            if errors == "raise":
                raise
            mask = np.zeros(len(out), dtype=bool)
            mask[i] = True
            failures.note_each(mask.reshape(shape), (), lambda *_, e=exc: e)
    out = out.reshape(shape)
    return out.item() if out.ndim == 0 else out


def _named(value: Any) -> bool:
    """Whether an argument is given: not None, NaN or blank text (an empty cell), anywhere in an array."""
    return not all(_blank(v) for v in np.ravel(np.asarray(value, dtype=object)))


def burstiness_shape(value: Any) -> float:
    """The incoming traffic's gamma shape as a cell or caller gives it (``planner plan --burstiness``): None or blank
    1 (Poisson), else a number above 0 (below 1 burstier, inf evenly spaced); text is ``InvalidInputError``
    (#VALUE!), 0 or less ``OutOfRangeError`` (#NUM!)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return 1.0
    if isinstance(value, bool):
        value = math.nan
    try:
        shape = float(value)
    except (TypeError, ValueError):
        shape = math.nan
    if not shape > 0:
        raise (InvalidInputError if math.isnan(shape) else OutOfRangeError)(
            f"burstiness {value!r} is not a gamma shape above 0; use 1 for Poisson, below 1 burstier, e.g. 0.5"
        )
    return shape


def prefix_hit_share(value: Any) -> float:
    """A prefix cache hit as a cell or caller gives it: None or blank 0, else a share of 0 or more and below 1."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return 0.0
    try:
        hit = float(value)
    except (TypeError, ValueError):
        hit = math.nan
    if not 0.0 <= hit < 1.0:
        raise (InvalidInputError if math.isnan(hit) else OutOfRangeError)(
            f"prefix_hit_rate {value!r} is not a share of each prompt cached; use 0 or more and below 1, e.g. 0.25"
        )
    return hit


def _target(target_s: float) -> str:
    """A target as a refusal names it: "target 50 ms", or "no target" for one not given (inf)."""
    return f"target {ms_words(target_s)}" if math.isfinite(target_s) else "no target"


def _figures_against_targets(
    r: LoadResult, percentile: float, ttft_target_s: float, tpot_target_s: float, no_tpot: bool
) -> str:
    """A run's percentile TTFT and TPOT beside their targets, in ms: "p95 TTFT 42.5 ms (target 40 ms), TPOT 7.47 ms
    (target 30 ms)"."""
    tpot = "n/a (one output token)" if no_tpot else ms_words(r.tpot_s.at(percentile))
    return (
        f"p{percentile:g} TTFT {ms_words(r.ttft_s.at(percentile))} ({_target(ttft_target_s)}), TPOT {tpot} "
        f"({_target(tpot_target_s)})"
    )


#: Requests in flight -> requests/s on a fleet sized under load: the fixed point R = N / latency(R) is taken as
#: found when one more step moves the rate by less than this share, so rate x the simulated mean time a request
#: takes is the requests in flight within it.
IN_FLIGHT_TOLERANCE = 0.01
#: Steps of that fixed point at most (trial 24's case settles in three); past them the last rate is kept and the
#: Assumptions row's check (rate x mean latency) shows how far it is from the requests in flight given.
IN_FLIGHT_STEPS = 8


def in_flight_rate(in_flight: float, first_rate_per_s: float, latency_s: Callable[[float], float]) -> float:
    """Little's law's rate for ``in_flight`` requests, R = N / L(R), by the fixed-point steps R <- N / L(R) from
    ``first_rate_per_s`` until a step moves R by less than ``IN_FLIGHT_TOLERANCE`` (the rate last asked), else after
    ``IN_FLIGHT_STEPS`` steps the last step's. The one conversion of a review's ``peak_concurrent_requests``
    (``planner.export.evaluate``) and of ``planner plan --concurrency`` (trial 32 F2)."""
    rate = first_rate_per_s
    for _ in range(IN_FLIGHT_STEPS):
        step = in_flight / latency_s(rate)
        if abs(step / rate - 1.0) < IN_FLIGHT_TOLERANCE:
            break
        rate = step
    return rate
