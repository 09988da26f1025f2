"""Budget-review scenarios: the TOML schema (frozen pydantic, unknown keys refused) and its loader.

A scenario names the workload (traffic, prompt and output lengths, latency targets, growth) and the options to
compare (GPU, model, precisions, how the GPUs are paid for). ``examples/budget-review.toml`` is a commented
example; ``docs/export.md`` lists every field.

    [workload]    traffic, token lengths, targets
    [defaults]    any option field, shared by every [[option]] that does not set it
    [[option]]    one deployment choice each; at least one
    [levers]      what the levers change (optional)
    [finance]     ownership horizon, cost of capital, residual value, stress case, grid (optional)
    [[mix]]       a fleet serving several options at once, each a share of the traffic: one budget line (optional)

Every error is one line naming the file and the field (``option #2 (H200 rented).gpu``; options count from 1).
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from planner.api import (
    GPU_GROUPS,
    LARGEST_GROUP_TRIED,
    check_parallelism,
    engine_vendor_refused,
    layout_error,
    release_cannot_run,
    tp_size_error,
    uneven_experts,
    valid_tp_sizes,
    vendor_error,
)
from planner.catalog import Catalog
from planner.catalog.resolve import kv_formats
from planner.engines.profiles import ENGINES, engine_profile
from planner.errors import InvalidInputError, PlannerError, closest_names, typed_name
from planner.export.quality import DEFAULT_SIGN_OFF
from planner.export.sizing import SECONDS_PER_MONTH, packs_into_nodes
from planner.io.limits import MAX_OPTIONS, MAX_SCENARIO_BYTES, read_text_bounded
from planner.io.toml_text import loads_toml, toml_repr
from planner.model.layouts import is_pipeline, spreads_experts
from planner.serving.fleet import ROUTINGS, routing_name
from planner.serving.load import HIGH_PERCENTILES, PERCENTILES
from planner.serving.speculative import SPECULATION_OPTIONS
from planner.units import (
    BARE_TPOT_MAX_S,
    BARE_TTFT_MAX_S,
    counted,
    parse_percent,
    parse_seconds,
    parse_token_count,
    rent_usd_per_gpu_hour,
    whole_count,
)

#: Unknown keys refused; numbers of the right type (``true`` is not 1) and finite (no inf or nan).
_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)

#: Upper bounds that keep every product finite; each is beyond any real deployment.
MAX_REQUESTS_PER_S = 1e6  # a million requests a second: above the largest public services
MAX_CONCURRENT = 1e8
MAX_REQUESTS_PER_MONTH = MAX_REQUESTS_PER_S * SECONDS_PER_MONTH  # the same bound, as a month's count
MAX_TOKENS = 2**24  # planner.api.MAX_CONTEXT_TOKENS
MAX_TARGET_S = 3600.0
MAX_GROWTH = 1000.0  # traffic x1001 over the horizon
MAX_MONTHS = 1200
MAX_NODE_USD = 1e8  # per node bought, beside its GPUs (host server, network)


def months_field(default: int | None, description: str | None = None) -> Any:
    """A count of months (a horizon, a write-off period): a whole number from 1 to ``MAX_MONTHS``."""
    return Field(default=default, gt=0, le=MAX_MONTHS, description=description)


def node_usd_field(description: str) -> Any:
    """A price paid per node bought besides its GPUs (a host server, its network), US$: 0 to ``MAX_NODE_USD``."""
    return Field(default=None, ge=0, le=MAX_NODE_USD, description=description)


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


#: Why a length other than a mean is whole tokens, said when a fraction is refused.
WHOLE_LENGTH_BECAUSE = (
    "a *_tokens_high length is one request's and sizes the KV cache, so whole tokens; only the *_tokens_mean "
    "lengths, means, may have a fraction"
)


def _token_count(value: Any) -> Any:
    """A token count as people write it (8192, "8,192", 1e4, "8k"): ``planner.units.parse_token_count``."""
    return parse_token_count(value, whole_because=WHOLE_LENGTH_BECAUSE)


def _mean_token_count(value: Any) -> Any:
    """A mean length as datasets and benchmarks print it (800.5, "1.3k", "8k"): a fraction is kept (a float), a whole
    count stays an int (``planner.units.parse_token_count(whole=False)``)."""
    count = parse_token_count(value, whole=False)
    return int(count) if isinstance(count, float) and count.is_integer() else count


#: Decimal suffixes a request count is written with in prose ("2M requests"): said back as the number to write.
_COUNT_SUFFIXES = {"": 1, "k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9}


def _monthly_count(value: Any) -> Any:
    """``average_requests_per_month`` as TOML writes a number (8000000, 8_000_000, 8e6); text such as "2M" or
    "8,000,000" is refused with the number to write (a token count's "1M" is 1,048,576, no request count's), anything
    else returned for the field's own check."""
    if not isinstance(value, str):
        return value
    hit = re.fullmatch(r"([0-9][0-9,_]*(?:\.[0-9]*)?)\s*([a-z]*)", value.strip().lower())
    if hit and hit.group(2) in _COUNT_SUFFIXES:
        n = float(hit.group(1).replace(",", "").replace("_", "")) * _COUNT_SUFFIXES[hit.group(2)]
        raise ValueError(f"{value[:40]!r} is text; write the count as a number: {n:.0f} (or {n:_.0f})")
    raise ValueError(f"{value[:40]!r} is text; write the count as a number, such as 2000000 (or 2_000_000)")


#: A rent per GPU-hour, US$: its bound and wording are ``planner.units.rent_usd_per_gpu_hour``'s, every surface's.
Rent = Annotated[float, AfterValidator(rent_usd_per_gpu_hour)]
#: A whole number of tokens, written as a number or as text ("8k", "8,192"); the range is the field's.
Tokens = Annotated[int, BeforeValidator(_token_count)]
#: A mean number of tokens, which may have a fraction (800.5); whole ones stay ints. The range is the field's.
MeanTokens = Annotated[int | float, BeforeValidator(_mean_token_count)]


def _tpot_seconds(value: Any) -> Any:
    """tpot_target_s in seconds; 50 (ms typed as seconds) is refused with the way out: 0.05 or "50 ms"."""
    return parse_seconds(value, BARE_TPOT_MAX_S, "tpot_target_s")


def _ttft_seconds(value: Any) -> Any:
    """ttft_target_s in seconds; 1500 (ms typed as seconds) is refused with the way out: 1.5 or "1500 ms"."""
    return parse_seconds(value, BARE_TTFT_MAX_S, "ttft_target_s", example_s=1.5)


#: A bare growth_over_horizon above this (x6 traffic) is refused as a percentage typed as a fraction (50 for +50%),
#: with the way out; written as a percentage ("600%") any growth up to MAX_GROWTH is taken.
BARE_GROWTH_MAX = 5.0


def read_growth(value: Any) -> Any:
    """growth_over_horizon as a fraction (0.5 = +50%) or a percentage string ("50%", "+50 %"); a bare number above
    ``BARE_GROWTH_MAX`` (``growth_over_horizon = 50``, +5,000%: a fleet sized for 51 times the traffic) is refused
    with the way out, as ``ttft_target_s = 1500`` is."""
    if isinstance(value, str):
        hit = re.fullmatch(r"\s*\+?\s*([0-9]*\.?[0-9]+)\s*%\s*", value)
        if hit is None:
            raise ValueError(f'{value[:40]!r} is not a growth; write a fraction (0.5 = +50%) or a percentage ("50%")')
        return float(hit.group(1)) / 100
    if isinstance(value, int | float) and not isinstance(value, bool) and BARE_GROWTH_MAX < value <= MAX_GROWTH:
        raise ValueError(
            f"{value:g} looks like a percentage typed as a fraction (it reads as x{value + 1:g} the traffic); write "
            f'{value / 100:g} or "{value:g}%", or "{value * 100:.0f}%" if you do mean x{value + 1:g}'
        )
    return value


def read_share_text(value: Any) -> Any:
    """A share written as a percentage string ("20%", "20 %") as its fraction, 0.2; a number is returned as it is
    for the field's range check (trial 30 F16: every share field takes the text ``cost_of_capital`` takes)."""
    return parse_percent(value, share=True) if isinstance(value, str) else value


def read_share(value: Any) -> Any:
    """A rate or share as a fraction (0.08) or a percentage string ("8%", "8 %"); a bare number from 1 to 100
    other than 1 itself (``cost_of_capital = 8``) is refused with the way out, as a growth of 50 is."""
    if isinstance(value, str):
        return parse_percent(value, share=True)
    if isinstance(value, int | float) and not isinstance(value, bool) and 1 < value <= 100:
        raise ValueError(f'{value:g} looks like a percentage; write {value / 100:g} or "{value:g}%"')
    return value


def read_percentile(value: Any) -> Any:
    """A percentile as people write it: 95, "95", "p95", "P95" or "95%" are all 95. A fraction (0.95) is refused
    with the way out rather than read as the 0.95th percentile or silently as the 95th; other values are returned
    for the range check."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is not a percentile; write it as 95 (p95 and 95% read the same)")
    number = value
    if isinstance(value, str):
        try:
            number = parse_percent(value, share=False)
        except ValueError:
            raise ValueError(
                f"{value[:40]!r} is not a percentile; write it as 95 (p95 and 95% read the same)"
            ) from None
    if isinstance(number, int | float) and 0 < number < 1:
        raise ValueError(
            f"{number:g} reads as a fraction; write the percentile as {number * 100:g} (p{number * 100:g} and "
            f"{number * 100:g}% read the same)"
        )
    return number


#: How finance people write the price kinds (trial 23 F12: "on demand" was refused): any case, with a space, a hyphen,
#: an underscore or nothing between "on" and "demand"; each is read as the kind's own spelling.
_KIND_SPELLINGS = {"ondemand": "on-demand", "reserved": "reserved", "spot": "spot", "purchase": "purchase"}


def read_price_kind(value: Any) -> Any:
    """A price kind as people write it: "on demand", "On-Demand", "ondemand", "on_demand" are "on-demand";
    "Reserved" is "reserved". Anything else is returned for the field's own check, which names the accepted kinds."""
    if not isinstance(value, str):
        return value
    key = re.sub(r"[\s_-]+", "", value).lower()
    return _KIND_SPELLINGS.get(key, value)


#: The percentiles a scenario's ``high_percentile`` may be: those the serving simulation reports and sizes on
#: (``planner.serving.load.PERCENTILES``) above the median, since the spread of output lengths needs the high length
#: above the mean one (``planner.export.sizing.output_length_spread``): 90, 95 and 99.


def choices_text(numbers: tuple[float, ...]) -> str:
    """(90, 95, 99) -> "90, 95 or 99"."""
    words = [f"{q:g}" for q in numbers]
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def reported_percentile(value: Any, accepted: tuple[float, ...] = PERCENTILES) -> float:
    """A percentile as people write it (``read_percentile``) that is one of ``accepted`` (by default every percentile
    the serving simulation reports, ``planner.serving.load.PERCENTILES``); a fraction or another percentile (97,
    "p99.9") is refused naming the value and the accepted ones, rather than sized at the next reported one."""
    try:
        number = read_percentile(value)
    except ValueError as exc:
        raise ValueError(f"{exc}; accepted: {choices_text(accepted)}") from None
    if isinstance(number, int | float) and number in accepted:
        return float(number)
    given = repr(value[:40]) if isinstance(value, str) else f"{value}"[:40]
    reported = ", ".join(f"p{q:g}" for q in PERCENTILES[:-1]) + f" and p{PERCENTILES[-1]:g}"
    above = "" if set(accepted) == set(PERCENTILES) else " (the *_high lengths are above the median)"
    raise ValueError(f"{given}: the simulation reports {reported}; give {choices_text(accepted)}{above}")


def _high_percentile(value: Any) -> float:
    """``high_percentile``: one of ``HIGH_PERCENTILES``."""
    return reported_percentile(value, HIGH_PERCENTILES)


def _latency_percentile(value: Any) -> float | None:
    """``latency_percentile``: one the simulation reports (``PERCENTILES``, the median included), or left out."""
    return None if value is None else reported_percentile(value)


#: The largest latency margin a scenario may set: +1,000%. The model's own range reaches +202% (DeepSeek-R1 on H200 +
#: SGLang, heldout_serving_residuals.csv) and a review sized on its deployment's own runs advises the runs' median
#: ratio - 1 (planner.export.own_runs), which may be 1 or more (trial 26 F18: 1.84x -> 0.84); below 1 was refused.
MAX_LATENCY_MARGIN = 10.0


#: Largest tensor-parallel group an option may fix, GPUs: the largest group the review tries (64).
MAX_GPUS_PER_REPLICA = max(GPU_GROUPS)


def _replica_gpus(value: Any) -> int:
    """gpus_per_replica: ``planner.units.whole_count``'s bound and wording, as the what-if workbook's reader says it."""
    return whole_count(value, "GPUs", MAX_GPUS_PER_REPLICA)


#: A fixed tensor-parallel group: a whole number of GPUs from 1 to ``MAX_GPUS_PER_REPLICA``.
ReplicaGpus = Annotated[int, BeforeValidator(_replica_gpus)]

#: A Literal of whole numbers: ``True == 1`` in Python, so a TOML ``true`` is refused first.
GpuGroup = Annotated[Literal[1, 2, 4, 8, 16], BeforeValidator(_not_bool)]


def _layout(name: str) -> str:
    """A layout name as ``planner.deploy.check_parallelism`` takes it (its message when it does not)."""
    try:
        return check_parallelism(name)
    except PlannerError as exc:
        raise ValueError(str(exc)) from None


def _routing(value: Any) -> str:
    """routing as ``planner plan --routing`` reads it (``planner.serving.fleet.routing_name``: any case), else its
    refusal naming the accepted values; blank text is refused (leave the key out for the default, random)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"routing {toml_repr(value)} is not known; use one of {', '.join(ROUTINGS)}")
    try:
        return routing_name(value)
    except InvalidInputError as exc:
        raise ValueError(str(exc)) from None


#: The length fields a ``lengths_file`` (or a dataset's means) stands in for.
_LENGTH_FIELDS = ("prompt_tokens_mean", "prompt_tokens_high", "output_tokens_mean", "output_tokens_high")


def _lengths_path(name: str, base_dir: Path | str | None) -> Path:
    """A scenario's ``lengths_file`` as a path: as written where absolute, else relative to ``base_dir`` (the
    scenario file's folder; None: the working folder)."""
    path = Path(name).expanduser()
    return path if path.is_absolute() or base_dir is None else Path(base_dir) / path


@functools.lru_cache(maxsize=16)
def _read_lengths_at(path: str, shown: str):
    """``planner.io.lengths.read_lengths`` of ``path``, errors naming it ``shown`` (as the scenario writes it)."""
    from planner.io.lengths import read_lengths

    return read_lengths(path, shown)


def _scenario_lengths(name: str, base_dir: Path | str | None):
    """A scenario's ``lengths_file`` read (``_read_lengths_at``); a missing file names where it was looked for and
    what is accepted; every error a ValueError "lengths_file ..." (the scenario's line of it named)."""
    from planner.io.lengths import LENGTHS_ACCEPTED

    path = _lengths_path(name, base_dir)
    if not path.is_file():
        raise ValueError(
            f"lengths_file {name!r}: no such file ({path}; a path is relative to the scenario file's folder); "
            f"{LENGTHS_ACCEPTED}"
        )
    try:
        return _read_lengths_at(str(path), name)
    except InvalidInputError as exc:
        raise ValueError(f"lengths_file {exc}") from None


class ScenarioError(InvalidInputError):
    """Raised when a scenario file cannot be read, or a field is missing, unknown, of the wrong type or out of range."""


class Workload(BaseModel):
    """Traffic and targets. Give the peak and average load as request rates OR as concurrent requests, not both."""

    model_config = _CONFIG

    peak_requests_per_s: float | None = Field(
        default=None, gt=0, le=MAX_REQUESTS_PER_S, description="requests arriving per second at the busiest time"
    )
    average_requests_per_s: float | None = Field(
        default=None, gt=0, le=MAX_REQUESTS_PER_S, description="requests per second averaged over the month"
    )
    average_requests_per_month: Annotated[float | None, BeforeValidator(_monthly_count)] = Field(
        default=None,
        gt=0,
        le=MAX_REQUESTS_PER_MONTH,
        description="instead of average_requests_per_s: the requests in a month (8_000_000), read as "
        f"average_requests_per_s = N / {SECONDS_PER_MONTH:,.0f} s (730 h x 3,600 s; trial 34 F1)",
    )
    peak_concurrent_requests: float | None = Field(
        default=None, gt=0, le=MAX_CONCURRENT, description="requests in flight at the busiest time"
    )
    average_concurrent_requests: float | None = Field(
        default=None, gt=0, le=MAX_CONCURRENT, description="requests in flight on average"
    )
    dataset: str | None = Field(
        default=None,
        min_length=1,
        description="a named dataset whose lengths stand in for the *_tokens_* fields "
        "(planner.serving.load.DATASETS: sharegpt, alpaca, sonnet, random, generated-shared-prefix; its shared prefix "
        "is cached); a dataset of means only (sharegpt, alpaca) still needs prompt_tokens_high and output_tokens_high",
    )
    lengths_file: str | None = Field(
        default=None,
        min_length=1,
        description="a CSV of measured request lengths, columns prompt_tokens and output_tokens (one row a request; "
        "a path relative to the scenario file), standing in for the *_tokens_* fields: its means, its lengths at "
        "high_percentile (the slot memory is sized for: high prompt + high output), and each simulated request a row "
        "drawn with replacement, seeded (planner plan --lengths)",
    )
    prompt_tokens_mean: MeanTokens = Field(
        gt=0, le=MAX_TOKENS, description="mean prompt length, tokens; a fraction such as 800.5 is kept"
    )
    prompt_tokens_high: Tokens = Field(
        gt=0,
        le=MAX_TOKENS,
        description="high-percentile prompt length, tokens (sizes TTFT and KV); left out, the mean: every prompt "
        "alike, as planner plan's --prompt-tokens-high",
    )
    output_tokens_mean: MeanTokens = Field(
        gt=0, le=MAX_TOKENS, description="mean output length, tokens; a fraction such as 400.5 is kept"
    )
    output_tokens_high: Tokens = Field(
        gt=0,
        le=MAX_TOKENS,
        description="high-percentile output length, tokens (sizes KV); left out, the mean: every output alike",
    )
    context: Tokens | None = Field(
        default=None,
        ge=2,
        le=MAX_TOKENS,
        description="the longest request the engine serves, prompt + output tokens (its --max-model-len; planner plan "
        '--context; 16384 or "16k"): drawn requests longer are cut to it as plan cuts them (the prompt shortened), '
        "and the slot memory is sized for is at most it; left out, no cut",
    )
    high_percentile: Annotated[float, BeforeValidator(_high_percentile)] = Field(
        default=95,
        description="which percentile the *_high lengths are; it sets the spread of output "
        "lengths, so the mean context in flight, and the percentile the fleet is sized on unless latency_percentile "
        "says another",
    )
    latency_percentile: Annotated[float | None, BeforeValidator(_latency_percentile)] = Field(
        default=None,
        description="the percentile of TTFT and TPOT the targets are (50, 90, 95 or 99); left out, high_percentile "
        "(trial 24 F8: a p99 SLO with p95 lengths from the logs)",
    )
    ttft_target_s: Annotated[float, BeforeValidator(_ttft_seconds)] = Field(
        gt=0, le=MAX_TARGET_S, description='time to first token of a high-percentile prompt, seconds (or "800 ms")'
    )
    tpot_target_s: Annotated[float, BeforeValidator(_tpot_seconds)] = Field(
        gt=0, le=MAX_TARGET_S, description='time per output token, seconds (or "50 ms")'
    )
    growth_over_horizon: Annotated[float, BeforeValidator(read_growth)] = Field(
        default=0.0, ge=0, le=MAX_GROWTH, description='traffic growth by the end of the horizon (0.5 or "50%" = +50%)'
    )
    #: the months the traffic grows over; written ``growth_months`` in a scenario (``horizon_months``, its old name,
    #: still read: ``_growth_months``), apart from [finance] horizon_months, the months the cost covers (trial 33 F9)
    horizon_months: int = months_field(
        12, "growth_months: the months growth_over_horizon takes, then flat (old name: horizon_months)"
    )
    burstiness: float = Field(
        default=1.0,
        gt=0,
        le=100,
        description="how the peak's requests arrive: the gamma shape of their gaps (1: Poisson; below 1 burstier; "
        "vllm bench serve --burstiness)",
    )
    routing: Annotated[str, BeforeValidator(_routing)] = Field(
        default="random",
        description='how the load balancer deals the peak\'s requests over the replicas in the simulation: "random" '
        '(default: each to a replica drawn at random, the burstier share) or "round-robin" (each in turn: smoother, so '
        "it can need fewer replicas), as planner plan --routing",
    )
    prefix_hit_rate: Annotated[float, BeforeValidator(read_share_text)] = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="share of each prompt the prefix cache holds, not computed again: a system prompt every request "
        "shares, over the mean prompt (0.25: 200 of 800 tokens); default 0, or a named dataset's shared prefix; "
        'with sizing "simulated"',
    )
    sizing: Literal["simulated", "littles-law"] = Field(
        default="simulated",
        description='"simulated" (default): the fewest replicas whose simulated high-percentile TTFT and TPOT at the '
        'peak meet the targets (planner.serving.load); "littles-law": requests in flight by Little\'s law and a '
        "standalone prefill per prompt (planner 0.x)",
    )
    sizing_lengths: Literal["means", "spread"] = Field(
        default="spread",
        description='with sizing "simulated", the lengths of the simulated requests: "spread" (default: each prompt '
        "and output drawn lognormal around the mean and high lengths, seeded; a named dataset sends its own requests; "
        'planner plan --rate with --prompt-tokens-high and --output-tokens-high draws the same) or "means" (every '
        "request at the mean lengths: the percentiles of a workload without a spread)",
    )
    latency_margin: Literal["model-range"] | float = Field(
        default="model-range",
        description='"model-range" (default: the pessimistic end of the model\'s predicted range meets the '
        "targets) or a fraction from 0 to 10, e.g. 0.1 (predictions + 10% meet them; 0: no margin; 1.4: +140%)",
    )

    #: ``lengths_file`` resolved against the scenario's folder (``parse_scenario``'s context "base_dir"), or None
    _lengths_path: Path | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _file_lengths(cls, data: Any, info: ValidationInfo) -> Any:
        """``lengths_file``'s sample (``planner.io.lengths.read_lengths``, its path relative to the scenario's folder)
        as the *_tokens_* fields: its means (to 0.1 token) and its lengths at ``high_percentile`` (rounded up), so
        the slot memory is sized for is the file's high prompt + high output, as for lengths given; refused beside a
        dataset or any *_tokens_* field, and where the file is missing or bad (its line and what is accepted)."""
        if not isinstance(data, dict) or not isinstance(data.get("lengths_file"), str):
            return data
        given = [f for f in ("dataset", *_LENGTH_FIELDS) if f in data]
        if given:
            raise ValueError(
                f"lengths_file gives the lengths; leave out {' and '.join(given)} (give one of lengths_file, "
                "dataset, or the *_tokens_* fields)"
            )
        try:
            q = _high_percentile(data.get("high_percentile", 95))
        except ValueError:
            return data  # the field's own check names it; the lengths then wait for a good percentile
        sample = _scenario_lengths(data["lengths_file"], (info.context or {}).get("base_dir"))
        p, o = sample.high_tokens(q)
        return dict(
            data,
            prompt_tokens_mean=round(sample.prompt_mean_tokens, 1),
            prompt_tokens_high=p,
            output_tokens_mean=round(sample.output_mean_tokens, 1),
            output_tokens_high=o,
        )

    @model_validator(mode="before")
    @classmethod
    def _monthly_rate(cls, data: Any) -> Any:
        """``average_requests_per_month`` N as ``average_requests_per_s`` = N / ``SECONDS_PER_MONTH`` (trial 34 F1: a
        product manager knows a month's count); both given: refused, naming both. A bad N is left to its field's
        check."""
        if not isinstance(data, dict) or data.get("average_requests_per_month") is None:
            return data
        n, per_s = data["average_requests_per_month"], data.get("average_requests_per_s")
        if per_s is not None and not (isinstance(n, int | float) and per_s == n / SECONDS_PER_MONTH):
            # (equal: a validated workload's own fields again, as model_dump() gives them back)
            raise ValueError(
                "average_requests_per_month and average_requests_per_s are the same figure (N a month is N / "
                f"{SECONDS_PER_MONTH:,.0f} requests/s); give one of them, not both"
            )
        if isinstance(n, int | float) and not isinstance(n, bool) and 0 < n <= MAX_REQUESTS_PER_MONTH:
            return {**data, "average_requests_per_s": n / SECONDS_PER_MONTH}
        return data

    @model_validator(mode="before")
    @classmethod
    def _growth_months(cls, data: Any) -> Any:
        """``growth_months``, the months the traffic grows over, is the key; ``horizon_months``, its old name (the
        same name as [finance] horizon_months, the months the cost covers: trial 33 F9), is still read. Both given:
        refused."""
        if not isinstance(data, dict) or "growth_months" not in data:
            return data
        if "horizon_months" in data:
            raise ValueError(
                "growth_months and horizon_months are one key (horizon_months is growth_months' old name); give "
                "growth_months only"
            )
        out = {k: v for k, v in data.items() if k != "growth_months"}
        out["horizon_months"] = data["growth_months"]
        return out

    @model_validator(mode="before")
    @classmethod
    def _highs_at_the_means(cls, data: Any) -> Any:
        """A high length left out is its mean (a fraction rounded up, a high length being at least the mean):
        fixed-length requests, as ``planner plan --rate`` takes them without ``--prompt-tokens-high`` /
        ``--output-tokens-high`` (trial 33 F8: export refused a workload of means only). A dataset or lengths_file
        gives its own."""
        if not isinstance(data, dict) or "dataset" in data or "lengths_file" in data:
            return data
        out = dict(data)
        for high, mean in (("prompt_tokens_high", "prompt_tokens_mean"), ("output_tokens_high", "output_tokens_mean")):
            v = data.get(mean)
            if high not in data and v is not None:
                out[high] = math.ceil(v) if isinstance(v, float) and math.isfinite(v) else v
        return out

    @model_validator(mode="after")
    def _file_path(self, info: ValidationInfo) -> Workload:
        """Where ``lengths_file`` is, for ``lengths_sample``: against the scenario's folder."""
        if self.lengths_file is not None:
            self._lengths_path = _lengths_path(self.lengths_file, (info.context or {}).get("base_dir"))
        return self

    @property
    def lengths_sample(self):
        """``lengths_file``'s rows (``planner.io.lengths.LengthSample``, read once), or None without one."""
        if self.lengths_file is None:
            return None
        return _read_lengths_at(str(self._lengths_path or _lengths_path(self.lengths_file, None)), self.lengths_file)

    @property
    def lengths_file_note(self) -> str:
        """What ``lengths_file`` gave, said in the export command's summary and the review's Assumptions: the file,
        its rows, means, high lengths and longest request, how requests are drawn and the slot; "" without one."""
        sample = self.lengths_sample
        if sample is None:
            return ""
        q = f"p{self.high_percentile:g}"
        return (
            f"lengths_file {sample.name}: {counted(sample.rows, 'row')}, means {sample.prompt_mean_tokens:,.0f} / "
            f"{sample.output_mean_tokens:,.0f} tokens (prompt / output), {q} {self.prompt_tokens_high:,} / "
            f"{self.output_tokens_high:,}, longest {sample.longest_tokens:,} (prompt + output); each simulated request "
            f"a row drawn at random with replacement (seeded), memory's slot {q} prompt + {q} output = "
            f"{self.sizing_context_tokens:,} tokens"
        )

    @model_validator(mode="before")
    @classmethod
    def _dataset_lengths(cls, data: Any) -> Any:
        """``dataset``'s lengths as the *_tokens_* fields: its means (its client's, ``planner.serving.load.
        dataset_load``), and, for a benchmark's fixed lengths (every request alike), the high lengths too; a
        dataset's means given beside it, or a dataset without a published mean, are refused."""
        if not isinstance(data, dict) or data.get("dataset") is None:
            return data
        from planner.serving.load import (
            DEFAULT_REQUESTS,
            NoPublishedLengthError,
            dataset_load,
            dataset_statistics,
            shared_prefix_hit_rate,
        )

        name = data["dataset"]
        if not isinstance(name, str):
            return data  # the field's own check names the type
        given = [f for f in ("prompt_tokens_mean", "output_tokens_mean") if f in data]
        if given:
            raise ValueError(f"dataset {name!r} gives the mean lengths; leave out {' and '.join(given)}")
        try:
            t = dataset_load(name)
        except NoPublishedLengthError as exc:
            raise ValueError(
                f"dataset {exc.name!r} publishes no mean {' or '.join(exc.missing)} length; give prompt_tokens_mean, "
                "prompt_tokens_high, output_tokens_mean and output_tokens_high instead of dataset"
            ) from None
        out = dict(data, prompt_tokens_mean=round(t.prompt_mean_tokens), output_tokens_mean=round(t.output_mean_tokens))
        stats = dataset_statistics(t.name, t.client)
        if stats.prefix_tokens and "prefix_hit_rate" in data:
            raise ValueError(
                f"dataset {name!r} sets prefix_hit_rate from its shared prefix of {stats.prefix_tokens:,} tokens; "
                "leave it out"
            )
        if "prefix_hit_rate" not in data:  # the share its shared prefix has cached over a run (0 without one)
            out["prefix_hit_rate"] = shared_prefix_hit_rate(name, out["prompt_tokens_mean"], DEFAULT_REQUESTS)
        if stats.kind == "fixed":
            for f, v in (("prompt_tokens_high", t.prompt_mean_tokens), ("output_tokens_high", t.output_mean_tokens)):
                if f in data and data[f] != round(v):
                    raise ValueError(f"dataset {name!r} sends every request alike ({round(v):,} tokens); leave out {f}")
                out[f] = round(v)
        elif not all(f in data for f in ("prompt_tokens_high", "output_tokens_high")):
            raise ValueError(
                f"dataset {name!r} publishes its means only; give prompt_tokens_high and output_tokens_high with it"
            )
        return out

    @property
    def sizing_percentile(self) -> float:
        """The percentile of TTFT and TPOT the targets are and the fleet is sized on: ``latency_percentile`` where
        given, else ``high_percentile`` (the lengths' percentile, the one a review of one percentile states)."""
        return self.high_percentile if self.latency_percentile is None else self.latency_percentile

    def target_labels(self, prompt: str = "prompt") -> tuple[str, str]:
        """The TTFT and TPOT targets' labels: "TTFT target (p95 prompt)" and "TPOT target" for a review of one
        percentile, as before ``latency_percentile``; with it, each says its own percentile ("TTFT target (p99 of
        requests; one p95 prompt alone)", "TPOT target (p99)"). ``prompt``: the words after the prompt's percentile."""
        high = f"p{self.high_percentile:g} {prompt}"
        if self.latency_percentile is None:
            return f"TTFT target ({high})", "TPOT target"
        q = f"p{self.latency_percentile:g}"
        return f"TTFT target ({q} of requests; one {high} alone)", f"TPOT target ({q})"

    @property
    def request_tokens(self) -> tuple[int, int]:
        """(prompt, output) whole tokens of a request at the mean lengths: what the simulation's fixed-length run sends
        and a prefill at the mean prompt prices, each mean rounded to whole tokens as validation reads a benchmark's
        printed mean (``planner.serving.load.fixed_length_tokens``: 800.5 -> 800). Sums over requests (Little's law,
        tokens a month) take the means as given."""
        from planner.serving.load import fixed_length_tokens

        return fixed_length_tokens(self.prompt_tokens_mean), fixed_length_tokens(self.output_tokens_mean)

    def at_request_lengths(self) -> Workload:
        """This workload with its mean lengths in whole tokens (``request_tokens``), what the model computes with:
        a review of 800.5-token prompts is the review of 800-token ones, as validation reads a benchmark's mean of
        800.5. Itself when the means are whole already."""
        p, o = self.request_tokens
        if (p, o) == (self.prompt_tokens_mean, self.output_tokens_mean):
            return self
        return self.model_copy(update={"prompt_tokens_mean": p, "output_tokens_mean": o})

    @property
    def simulated_lengths_kind(self) -> str:
        """Where ``simulated_lengths`` takes the requests from: "means" (every request at the means: ``sizing_lengths =
        "means"``, or each high length equal to its mean), else "dataset" (a named dataset's own: a
        shipped sample or a benchmark's uniform draw) or "spread" (drawn around the means and the high lengths)."""
        from planner.serving.load import dataset_load, dataset_statistics

        if self.sizing_lengths == "means":
            return "means"
        if self.lengths_file is not None:
            return "file"
        if self.dataset is not None:
            t = dataset_load(self.dataset)
            stats = dataset_statistics(t.name, t.client)
            if stats.kind == "uniform" or stats.sample_file:
                return "dataset"
        if self.prompt_tokens_high <= self.prompt_tokens_mean and self.output_tokens_high <= self.output_tokens_mean:
            return "means"
        return "spread"

    def simulated_lengths(self, max_tokens: float = math.inf) -> list[tuple[int, int]] | None:
        """``_drawn_lengths``, each request longer than ``context`` (where the scenario sets one) cut to it as
        ``planner plan --context`` cuts them (``planner.serving.load.cut_to_context``: the prompt shortened)."""
        from planner.serving.load import cut_to_context

        lengths = self._drawn_lengths(max_tokens)
        if lengths and self.context is not None:
            return cut_to_context(lengths, self.context)[0]
        return lengths

    def _drawn_lengths(self, max_tokens: float = math.inf) -> list[tuple[int, int]] | None:
        """Each simulated request's (prompt, output) tokens in the sizing simulation (docs/export.md step 5), with
        ``sizing_lengths = "spread"``, the default (``simulated_lengths_kind``; "means": None): a named
        dataset's own requests where it has them (sharegpt's shipped sample, a benchmark's uniform draw:
        ``planner.serving.load.dataset_load``), else drawn lognormal around the means and the high percentile
        (``planner.serving.load.spread_lengths``: seeded, so the same workload gives the same requests; each
        request's prompt + output within ``max_tokens``, the model's context). None (every request at the means,
        ``request_tokens``) where each high length equals its mean: a benchmark's fixed lengths, a what-if
        workbook's requests."""
        from planner.serving.load import dataset_load, resampled_lengths, sizing_requests, spread_lengths

        kind = self.simulated_lengths_kind
        if kind == "means":
            return None
        if kind == "dataset":
            return list(dataset_load(self.dataset).lengths)
        if kind == "file":  # the file's rows drawn with replacement, seeded, as planner plan --lengths draws them
            sample = self.lengths_sample
            if sample.longest_tokens > max_tokens:
                raise InvalidInputError(
                    f"lengths_file {sample.name} line {sample.longest_line}: a request of {sample.longest_tokens:,} "
                    f"tokens (prompt + output), more than the model's context of {max_tokens:,.0f}; leave out the "
                    "longer rows, or choose a model with a longer context"
                )
            return resampled_lengths(
                sample.prompt_tokens, sample.output_tokens, sizing_requests(self.sizing_percentile)
            )
        p, o = self.request_tokens
        return spread_lengths(
            p, self.prompt_tokens_high, o, self.output_tokens_high, self.high_percentile,
            sizing_requests(self.sizing_percentile), max_tokens,
        )  # fmt: skip

    @model_validator(mode="after")
    def _check(self) -> Workload:
        rates = (self.peak_requests_per_s, self.average_requests_per_s)
        users = (self.peak_concurrent_requests, self.average_concurrent_requests)
        if any(v is not None for v in rates) and any(v is not None for v in users):
            raise ValueError("give the load as requests per second or as concurrent requests, not both")
        pair = rates if any(v is not None for v in rates) else users
        kind = "requests_per_s" if pair is rates else "concurrent_requests"
        if pair[0] is None or pair[1] is None:
            raise ValueError(
                f"give both peak_{kind} and average_{kind} "
                "(or peak_concurrent_requests and average_concurrent_requests)"
            )
        if pair is rates and pair[1] > pair[0] and self.average_requests_per_month is not None:
            raise ValueError(
                f"average_requests_per_month ({self.average_requests_per_month:,.0f}, {pair[1]:.3g} requests/s) is "
                f"above peak_requests_per_s ({pair[0]:g})"
            )
        if pair[1] > pair[0]:
            raise ValueError(f"average_{kind} ({pair[1]:g}) is above peak_{kind} ({pair[0]:g})")
        if self.sizing == "littles-law" and self.routing != "random":
            raise ValueError(
                f'routing "{self.routing}" needs sizing = "simulated" (Little\'s law counts requests in flight, not '
                "how a balancer deals them over the replicas)"
            )
        if (
            self.sizing == "littles-law"
            and self.sizing_lengths != "means"
            and "sizing_lengths" in self.model_fields_set
        ):
            raise ValueError(
                f'sizing_lengths "{self.sizing_lengths}" needs sizing = "simulated" (Little\'s law sizes on the means)'
            )
        if self.sizing == "littles-law" and self.prefix_hit_rate > 0 and self.dataset is None:
            raise ValueError(
                'prefix_hit_rate needs sizing = "simulated" (Little\'s law charges every prompt its whole prefill)'
            )
        if not isinstance(self.latency_margin, str) and not 0 <= self.latency_margin <= MAX_LATENCY_MARGIN:
            raise ValueError(
                f"latency_margin must be 0 to {MAX_LATENCY_MARGIN:g} (a fraction: 0.25 = +25%, 1.4 = +140%, what a "
                f"review advises where its own runs are 2.4x the prediction); got {self.latency_margin!r}"
            )
        if self.context is not None and sum(self.request_tokens) > self.context:  # as plan --context refuses it
            p, o = self.request_tokens
            raise ValueError(
                f"context ({self.context:,}) is shorter than prompt_tokens_mean {p:,g} + output_tokens_mean {o:,g} "
                f"(the tokens one request holds, prompt + output); give context {math.ceil(p + o):,} or more"
            )
        for which in ("prompt", "output"):  # the high percentile's length holds at least the mean's
            high, mean = getattr(self, f"{which}_tokens_high"), getattr(self, f"{which}_tokens_mean")
            if high < mean:
                raise ValueError(
                    f"{which}_tokens_high ({high:,}) is below {which}_tokens_mean ({mean:,g}); the high-percentile "
                    "length is at least the mean"
                )
        from planner.serving.load import LongTailError, length_fit

        drawn = self.prompt_fitted
        means = dict(zip(("prompt", "output"), self.request_tokens, strict=True))  # as the review computes with them
        fitted = () if self.lengths_file is not None else ("output", "prompt") if drawn else ("output",)
        for which in fitted:  # the output's fit times decode (step 1); a lengths file's sample is its own
            try:
                length_fit(
                    means[which], getattr(self, f"{which}_tokens_high"), self.high_percentile,
                    self.sizing_context_tokens, which,
                )  # fmt: skip
            except LongTailError as e:
                raise ValueError(f"{which}_tokens_high / {which}_tokens_mean: {e}") from None
        return self

    @property
    def by_rate(self) -> bool:
        return self.peak_requests_per_s is not None

    @property
    def monthly_rate_note(self) -> str:
        """How ``average_requests_per_month`` became the average rate ("average 3.04 requests/s (8,000,000 a month /
        2,628,000 s)"); "" when the rate was given per second."""
        n = self.average_requests_per_month
        if n is None:
            return ""
        return f"average {self.average_requests_per_s:.3g} requests/s ({n:,.0f} a month / {SECONDS_PER_MONTH:,.0f} s)"

    @property
    def growth_factor(self) -> float:
        return 1.0 + self.growth_over_horizon

    @property
    def sizing_context_tokens(self) -> int:
        """Tokens one sequence holds at most, what memory is sized for: high-percentile prompt + output, at most
        ``context`` where the scenario sets one (trial 30 F11)."""
        slot = self.prompt_tokens_high + self.output_tokens_high
        return slot if self.context is None else min(slot, self.context)

    def context_cut_count(self, max_tokens: float = math.inf) -> int:
        """How many of the simulated requests (``simulated_lengths`` before the cut) are longer than ``context`` and
        cut to it (``planner.serving.load.cut_to_context``); 0 without a context."""
        from planner.serving.load import cut_to_context

        if self.context is None:
            return 0
        return cut_to_context(self._drawn_lengths(max_tokens), self.context)[1]

    @property
    def inflight_context_tokens(self) -> int:
        """Mean context a decode step reads under continuous batching, whole tokens (``planner.export.sizing``'s rule),
        at the mean lengths in whole tokens (``request_tokens``)."""
        from planner.export.sizing import inflight_context_tokens

        if self.lengths_file is not None:  # the sample's own E[o^2] / (2 E[o]), no fit (docs/export.md "Two contexts")
            return max(1, round(self.request_tokens[0] + self.lengths_sample.half_second_moment_output_tokens))
        exact = inflight_context_tokens(
            *self.request_tokens, self.output_tokens_high, self.high_percentile, self.sizing_context_tokens
        )
        return max(1, round(exact))

    @property
    def prompt_fitted(self) -> bool:
        """Whether the prompt's length is drawn from a fit of its mean and high length (the sizing simulation on the
        spread, no named dataset: ``simulated_lengths``); the output's fit always sets the context in flight."""
        return (
            self.sizing == "simulated"
            and self.sizing_lengths == "spread"
            and self.dataset is None
            and self.lengths_file is None
        )

    @property
    def batch_cap_context_tokens(self) -> int:
        """The sequence length a replica's batch cap (``Candidate.slots``) is what memory holds at: the larger of
        ``sizing_context_tokens`` (each batch slot holds a high-percentile sequence) and ``inflight_context_tokens``
        (the review takes each batch's TPOT at that context, and a batch whose KV cache does not fit there has none:
        ``evaluate._candidates``). The first, unless an output's lognormal (p95 / mean near its 3.87) runs far past the
        slot and the prompt is short: 100 / p95 100 prompt, 1,000 / p95 3,800 output: s = 1.4563,
        100 + 1,000 x exp(2.1209) / 2 = 4,269 tokens in flight against a 3,900-token slot (trial 27 F12: 23,444
        against 16,000 while a long tail was fitted with s = z)."""
        return max(self.sizing_context_tokens, self.inflight_context_tokens)

    @property
    def spread_fit_note(self) -> str:
        """Where a length's high / mean is beyond any lognormal's (3.87 at p95), what the review fits instead and
        where it holds it (``planner.serving.load.spread_fit_note``: a two-part mixture within the slot memory is
        sized for, ``planner.serving.length_mixture``);
        and where an untruncated output lognormal's context in flight is past the slot (``batch_cap_context_tokens``:
        a slot too close to the high output for a truncated fit, 100 / p95 100 prompt, 1,000 / p95 3,800 output:
        4,269 tokens against 3,900; 1,000 / 3,000 / p95 11,600 in 15,600 tokens is truncated, 4,736), that; ""
        where neither. Said in the
        review's Warnings and Assumptions and the export command's summary (trial 27 F12)."""
        from planner.serving.load import spread_fit_note

        if self.lengths_file is not None:  # a measured sample, drawn as it is: no fit to state
            return ""
        p, o = self.request_tokens
        prompt_high = self.prompt_tokens_high if self.prompt_fitted else p  # a prompt not drawn has no fit to state
        said = spread_fit_note(
            p, prompt_high, o, self.output_tokens_high, self.high_percentile, self.sizing_context_tokens
        )
        if self.inflight_context_tokens > self.sizing_context_tokens:  # a lognormal near its bound, a short slot
            q = f"p{self.high_percentile:g}"
            drawn = (  # a truncated prompt's draw caps each request at the slot (spread_lengths)
                ""
                if said
                else ", and drawn requests run past the slot to the model's context (a lognormal is not truncated)"
            )
            said += "; " * bool(said) + (
                f"the output's lognormal ({q} / mean {self.output_tokens_high / o:.2f}, within any lognormal's "
                f"reach) has a tail so long that the mean context a decode step reads, "
                f"{self.inflight_context_tokens:,} tokens, is past the {self.sizing_context_tokens:,}-token slot: "
                f"decode is timed there and each replica's batch cap is what memory holds there{drawn}"
            )
        return said


class _OptionFields(BaseModel):
    """Fields an [[option]] sets, or [defaults] sets for all of them. None: not given here."""

    model_config = _CONFIG

    gpu: str | None = Field(default=None, min_length=1, description="GPU name or alias from the catalog")
    model: str | None = Field(default=None, min_length=1, description="model name or alias from the catalog")
    weight_precision: str | None = Field(
        default=None, description="bf16, fp16, fp8, int8, int4 ... (default: as published)"
    )
    kv_precision: str | None = Field(default=None, description="KV-cache precision (default: the activation dtype)")
    engine: str | None = Field(default=None, description=f"memory budgeting rule: {', '.join(ENGINES)}")
    memory_utilization: Annotated[float | None, BeforeValidator(read_share_text)] = Field(
        default=None, gt=0, le=1, description="share of GPU memory the engine may use"
    )
    pricing: Literal["purchase", "cloud"] | None = Field(
        default=None, description="buy the GPUs or rent them by the hour"
    )
    purchase_usd: float | None = Field(
        default=None, gt=0, le=1e8, description="price of one GPU (default: the catalog's)"
    )
    cloud_usd_per_gpu_hour: Rent | None = Field(default=None, description="rent per GPU-hour (default: the catalog's)")
    amortization_months: int | None = months_field(None, "months a purchase is written off over")
    power_usd_per_kwh: float | None = Field(
        default=None, ge=0, le=100, description="electricity price, $/kWh (default: catalogs/costs/ownership.toml)"
    )
    pue: float | None = Field(
        default=None,
        ge=1,
        le=10,
        description="power usage effectiveness of the data centre, 1.0-2.0 (default: the catalog's)",
    )
    price_kind: Annotated[Literal["on-demand", "spot", "reserved"], BeforeValidator(read_price_kind)] | None = Field(
        default=None,
        description='which catalog rent a cloud option pays: on-demand (default; "on demand" reads the same), spot or '
        "reserved",
    )
    price_basis: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description='which catalog quote of the kind is paid: "median" (default: the median of the dated quotes) '
        'or a provider\'s name, e.g. "Hyperstack" (its quote where it has one, else the median); set it in '
        "[defaults] to price every option on one basis",
    )
    host_server_usd: float | None = node_usd_field(
        "host server per node bought, US$ (default: catalogs/costs/ownership.toml)"
    )
    networking_usd: float | None = node_usd_field(
        "network (switches, cables) per node bought, US$ (default: the catalog's)"
    )
    host_power_w: float | None = Field(
        default=None, ge=0, le=1e6, description="host power per node beyond the GPUs, W (default: the catalog's)"
    )
    colocation_usd_per_kw_month: float | None = Field(
        default=None, ge=0, le=1e5, description="colocation rent per kW of IT load a month, US$ (0: your own building)"
    )
    node_size: int | None = Field(
        default=None, gt=0, le=4096, description="GPUs are bought or rented in whole nodes of this size"
    )
    spare_replicas: int | None = Field(
        default=None, ge=0, le=10_000, description="replicas beyond the peak need (N+1: 1)"
    )
    parallelism: Annotated[str, AfterValidator(_layout)] | None = Field(
        default=None,
        description="how a replica's GPUs split the model: tp (tensor parallel, default), tp-ep (experts spread "
        "whole), dp-ep (data-parallel attention + expert parallel: MoE models), pp (pipeline parallel, one GPU per "
        "stage), pp2, pp4 ... (that many stages, each a tensor-parallel group of the replica's GPUs / stages)",
    )
    max_gpus_per_replica: GpuGroup | None = Field(default=None, description="largest tensor-parallel group tried")
    gpus_per_replica: ReplicaGpus | None = Field(
        default=None,
        description="use exactly this tensor-parallel group (default: try 1, 2, 4, 8 up to max_gpus_per_replica)",
    )
    speculative_tokens: int | None = Field(
        default=None, ge=1, le=64, description=SPECULATION_OPTIONS["speculative_tokens"]
    )
    acceptance_length: float | None = Field(
        default=None, ge=1, le=65, description=SPECULATION_OPTIONS["acceptance_length"]
    )
    speculative_method: Literal["mtp", "eagle3", "ngram"] | None = Field(
        default=None, description=SPECULATION_OPTIONS["speculative_method"]
    )


class Defaults(_OptionFields):
    """[defaults]: any option field, applied to every [[option]] that leaves it out."""


#: What an option gets when neither it nor [defaults] says. Sources are stated on the Assumptions sheet.
BUILTIN_DEFAULTS: dict[str, Any] = {
    "engine": "vllm",
    "pricing": "cloud",
    "amortization_months": 36,
    "spare_replicas": 1,
    "max_gpus_per_replica": LARGEST_GROUP_TRIED,
}


class Option(_OptionFields):
    """One deployment choice, with [defaults] and the built-in defaults applied."""

    name: str = Field(default="", description="label in the review (default: 'GPU, model, pricing')")
    gpu: str = Field(min_length=1, description="GPU name or alias from the catalog")
    model: str = Field(min_length=1, description="model name or alias from the catalog")
    engine: str = BUILTIN_DEFAULTS["engine"]
    pricing: Literal["purchase", "cloud"] = BUILTIN_DEFAULTS["pricing"]
    amortization_months: int = months_field(BUILTIN_DEFAULTS["amortization_months"])
    spare_replicas: int = Field(default=BUILTIN_DEFAULTS["spare_replicas"], ge=0, le=10_000)
    max_gpus_per_replica: GpuGroup = BUILTIN_DEFAULTS["max_gpus_per_replica"]

    @property
    def nodes_of(self) -> int:
        """Node size: as given, else 8 GPUs when bought (a standard 8-GPU server), 1 when rented."""
        return self.node_size or (8 if self.pricing == "purchase" else 1)


class Levers(BaseModel):
    """[levers]: what each lever changes in the baseline option (every field optional)."""

    model_config = _CONFIG

    gpus_per_replica: Annotated[Literal[2, 4, 8, 16], BeforeValidator(_not_bool)] | None = Field(
        default=None,
        description="more GPUs: the tensor-parallel group (default: the next one above the baseline's that the engine "
        "runs the model on, twice it for most models)",
    )
    prompt_tokens_high: Tokens | None = Field(
        default=None,
        gt=0,
        le=MAX_TOKENS,
        description="shorter context: the capped prompt (default: half the high percentile)",
    )
    gqa_model: str | None = Field(
        default=None, min_length=1, description="a GQA model to compare (default: the baseline model with/without GQA)"
    )
    kv_precision: str = Field(default="fp8", description="KV-cache quantization: the precision to try")
    prefix_hit_rate: Annotated[float | None, BeforeValidator(read_share_text)] = Field(
        default=None,
        gt=0,
        lt=1,
        strict=False,
        description="prefix cache: the share of each prompt it holds, as [workload] prefix_hit_rate (0.3: a shared "
        "3,600-token system prompt of 12,000); sized by the same simulation (default: not evaluated, the row says "
        "how to set it)",
    )


PriceKindName = Annotated[Literal["purchase", "reserved", "on-demand", "spot"], BeforeValidator(read_price_kind)]


#: The reserved terms ``[finance] reserved_term_months`` accepts, months: the 1- and 3-year commitments AWS, Azure and
#: Google Cloud sell, and the 6-, 24-, 48- and 60-month ones GPU clouds add (F17: a reserved rate commits a number of
#: GPUs for a term).
RESERVED_TERMS_MONTHS = (6, 12, 24, 36, 48, 60)


def read_reserved_term(value: Any) -> Any:
    """A reserved contract's term in months, one of ``RESERVED_TERMS_MONTHS``; anything else is refused naming them,
    and a count of years (1 to 5) is told the months to write, as amortization_months is (trial 23 F6)."""
    accepted = ", ".join(str(t) for t in RESERVED_TERMS_MONTHS)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        shown = (
            str(value).lower() if isinstance(value, bool) else repr(value if not isinstance(value, str) else value[:40])
        )
        raise ValueError(f"{shown} is not a term; write a whole number of months: {accepted}")
    months = int(value)
    if months in RESERVED_TERMS_MONTHS:
        return months
    years = f"; {months} looks like years: write {months * 12}" if months * 12 in RESERVED_TERMS_MONTHS else ""
    raise ValueError(f"{months} months is not a reserved term the review models; write one of {accepted}{years}")


class Finance(BaseModel):
    """[finance]: how the review prices time: the ownership horizon, the cost of capital, residual value, the grid."""

    model_config = _CONFIG

    horizon_months: int = months_field(36, "months the cost of ownership covers (default 36: three years)")
    cost_of_capital: Annotated[float, BeforeValidator(read_share)] = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="annual rate future cash is discounted at, e.g. 0.08 (default 0: undiscounted; use your treasury's)",
    )
    residual_value_share: Annotated[float, BeforeValidator(read_share)] = Field(
        default=0.0,
        ge=0,
        le=1,
        description="share of the capex bought hardware is worth at the horizon's end (default 0: written off; "
        "not given, an option amortized past the horizon is worth its book value then); taken off the monthly cost "
        "too where the horizon is the amortization",
    )
    stress_multiplier: float = Field(
        default=2.0, gt=1, le=100, description="the high demand case: planned peak traffic x this (default 2)"
    )
    grid_price_kinds: tuple[PriceKindName, ...] = Field(
        default=("purchase", "reserved", "on-demand"),
        strict=False,
        description="price kinds the like-for-like grid tries for every GPU (spot is added when an option asks for it)",
    )
    reserved_term_months: Annotated[int, BeforeValidator(read_reserved_term)] | None = Field(
        default=None,
        description="a reserved contract's term: each step up of the fleet signs one for the GPUs added, paid for "
        "the whole term (default: the term the quote's source states, else not modelled)",
    )
    quality_sign_off: str = Field(
        default=DEFAULT_SIGN_OFF,
        min_length=1,
        max_length=200,
        description="who signs off answer quality when weights are quantized",
    )


#: How far a mix's shares may sum from 1 (float sums: 0.7 + 0.2 + 0.1 is 0.9999999999999999).
SHARE_SUM_TOLERANCE = 1e-9


class MixPart(BaseModel):
    """One part of a [[mix]]: an option serving a share of the scenario's traffic."""

    model_config = _CONFIG

    option: str = Field(min_length=1, description="the name of an [[option]] of the scenario")
    share: Annotated[float, BeforeValidator(read_share)] = Field(
        gt=0, le=1, description='the share of the traffic this option serves, a fraction (0.7) or "70%"'
    )


class Mix(BaseModel):
    """A [[mix]]: one fleet in which several options each serve a share of the traffic (two models behind one
    gateway); each part is sized alone at its share, the mix's figures are their sums (``planner.export.mix``)."""

    model_config = _CONFIG

    name: str = Field(min_length=1, max_length=200, description="the mix's name, as the review prints it")
    parts: tuple[MixPart, ...] = Field(
        min_length=1,
        max_length=MAX_OPTIONS,
        strict=False,
        description='the options and their shares: [{option = "...", share = 0.7}, ...], shares summing to 1',
    )


def mix_label(index: int, name: str | None) -> str:
    """A mix as errors name it: "mix #1 (Gateway)" (mixes count from 1)."""
    return f"mix #{index + 1}" + (f" ({name})" if name else "")


def _check_mixes(mixes: tuple[Mix, ...], names: list[str]) -> None:
    """Each part names an option of the scenario, once per mix; the shares sum to 1; mix names differ."""
    for i, mix in enumerate(mixes):
        label = mix_label(i, mix.name)
        seen: set[str] = set()
        for k, part in enumerate(mix.parts):
            if part.option not in names:
                near = closest_names(part.option, names)
                raise ValueError(
                    f"{label}.parts #{k + 1}.option: {part.option!r} is not an option name; "
                    + (f"did you mean {', '.join(repr(n) for n in near)}? " if near else "")
                    + "options: "
                    + ", ".join(repr(n) for n in names)
                )
            if part.option in seen:
                raise ValueError(
                    f"{label}.parts #{k + 1}.option: {part.option!r} is in this mix twice; give it one part with "
                    "the shares added"
                )
            seen.add(part.option)
        total = math.fsum(p.share for p in mix.parts)
        if abs(total - 1) > SHARE_SUM_TOLERANCE:
            terms = " + ".join(f"{p.share:g}" for p in mix.parts)
            raise ValueError(
                f"{label}.parts: the shares sum to {total:.10g} ({terms}), not 1; each part's share is the fraction "
                "of the scenario's traffic that option serves, and together they serve all of it"
            )
    parts = sum(len(m.parts) for m in mixes)
    if parts > MAX_OPTIONS:  # each part is sized as an option is: the same bound
        raise ValueError(
            f"mix: {parts:,} parts in all; a scenario's mixes hold at most {MAX_OPTIONS:,} (split it into several "
            "reviews)"
        )
    mix_names = [m.name for m in mixes]
    dupes = sorted({n for n in mix_names if mix_names.count(n) > 1})
    if dupes:
        raise ValueError(f"mix names must differ; {dupes[0]!r} is used twice")


class Scenario(BaseModel):
    """A whole budget-review scenario file."""

    model_config = _CONFIG

    title: str = Field(default="Inference budget review", min_length=1)
    baseline: str | None = Field(
        default=None, description="option name the levers start from (default: the recommended one)"
    )
    traffic_change: Annotated[float, BeforeValidator(read_share_text)] = Field(
        default=0.2, gt=0, lt=1, description="sensitivity: traffic -x and +x (0.2 = -20% / +20%)"
    )
    workload: Workload
    defaults: Defaults = Defaults()
    option: tuple[Option, ...] = Field(min_length=1, strict=False, description="the [[option]] tables")
    levers: Levers = Levers()
    finance: Finance = Finance()
    mix: tuple[Mix, ...] = Field(
        default=(), max_length=MAX_OPTIONS, strict=False, description="the [[mix]] tables (optional)"
    )

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        for o in self.option:  # speculative decoding: both settings, and the simulation that models it
            given = (o.speculative_tokens is not None, o.acceptance_length is not None)
            if any(given) and not all(given):
                missing = "acceptance_length" if given[0] else "speculative_tokens"
                raise ValueError(
                    f"option {o.name or o.gpu + ' ' + o.model!r}: speculative decoding needs speculative_tokens and "
                    f"acceptance_length; {missing} is missing ({SPECULATION_OPTIONS[missing]})"
                )
            if o.speculative_method is not None and not all(given):
                raise ValueError(
                    f"option {o.name or o.gpu + ' ' + o.model!r}: speculative_method {o.speculative_method!r} names "
                    "the draft of speculative decoding; give speculative_tokens and acceptance_length with it"
                )
            if all(given) and o.acceptance_length > o.speculative_tokens + 1:
                raise ValueError(
                    f"option {o.name or o.gpu + ' ' + o.model!r}: acceptance_length {o.acceptance_length:g} is more "
                    f"than speculative_tokens + 1 ({o.speculative_tokens + 1}), the most a step can emit"
                )
            if all(given) and self.workload.sizing != "simulated":
                raise ValueError(
                    f"option {o.name or o.gpu + ' ' + o.model!r}: speculative decoding is modelled only by the "
                    'serving simulation; set [workload] sizing = "simulated"'
                )
            if o.gpus_per_replica and not packs_into_nodes(o.gpus_per_replica, o.node_size):
                raise ValueError(
                    f"option {o.name or o.gpu + ' ' + o.model!r}: a replica of {o.gpus_per_replica} GPUs does not "
                    f"fit in a node of {o.node_size} nor span whole ones: it would straddle a node boundary, its "
                    "tensor-parallel traffic over the network, which planner does not time; give a node_size of at "
                    f"least {o.gpus_per_replica} (or one it is a multiple of), or leave gpus_per_replica out to try "
                    "the groups that fit"
                )
        names = [o.name for o in self.option]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"option names must differ; {dupes[0]!r} is used twice")
        if self.baseline is not None and self.baseline not in names:
            raise ValueError(f"baseline {self.baseline!r} is not an option name; options: {', '.join(names)}")
        _check_mixes(self.mix, names)
        return self


# -- loading --------------------------------------------------------------------------------------------


def _option_label(raw_options: list, index: int) -> str:
    raw = raw_options[index] if 0 <= index < len(raw_options) and isinstance(raw_options[index], dict) else {}
    name = raw.get("name")
    return f"option #{index + 1}" + (f" ({name})" if isinstance(name, str) and name else "")


def _where(loc: tuple, raw_options: list) -> str:
    parts: list[str] = []
    i = 0
    while i < len(loc):
        key = loc[i]
        if key == "option" and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            parts.append(_option_label(raw_options, loc[i + 1]))
            i += 2
            continue
        if key == "mix" and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            parts.append(mix_label(loc[i + 1], None))
            i += 2
            continue
        if key == "parts" and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            parts.append(f"parts #{loc[i + 1] + 1}")
            i += 2
            continue
        parts.append(str(key))
        i += 1
    return ".".join(parts)


def _accepted(model: type[BaseModel], field: str) -> str:
    info = model.model_fields.get(field)
    return info.description if info is not None and info.description else ""


def _field_model(loc: tuple) -> type[BaseModel] | None:
    top = loc[0] if loc else None
    if top == "mix":  # [[mix]] name, parts; a part's option, share
        return MixPart if "parts" in loc[:-1] and len(loc) > 4 else Mix
    tables = {"workload": Workload, "defaults": Defaults, "option": Option, "levers": Levers, "finance": Finance}
    return tables.get(top, Scenario)


#: pydantic's error kinds for a number out of its field's bounds, and for a value that is not a number of the field's
#: kind: both said in planner's words with the field's bounds (``_number_accepted``; a trial: "Input should be
#: greater than 0" with no upper bound beside the rent's "must be above 0 and at most 10,000 US$ per GPU-hour").
_BOUND_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})
_NOT_A_NUMBER_ERRORS = frozenset({"float_type", "float_parsing", "int_type", "int_parsing", "int_from_float",
                                  "finite_number"})  # fmt: skip
#: What a growth below 0 is told: the review plans growth, not a decline.
NO_DECLINE = (
    "a traffic decline is not modelled; give the lower traffic itself as today's peak and average, with growth 0"
)


def _bound(x: float) -> str:
    """A bound as the messages write it: 1e8 -> "100,000,000", 0.5 -> "0.5"."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _number_accepted(owner: type[BaseModel], field: str) -> tuple[str, str] | None:
    """(kind, range) a numeric field takes, from its declared bounds: ("a whole number", "from 1 to 1,200") for a
    horizon, ("a number", "above 0 and at most 100,000,000") for a purchase price; the rent's own words
    (``planner.units.RENT_ACCEPTED``) for ``cloud_usd_per_gpu_hour``. None for a field that is not a number."""
    from typing import get_args

    from planner.units import RENT_ACCEPTED

    info = owner.model_fields.get(field)
    if info is None:
        return None
    if field == "cloud_usd_per_gpu_hour":
        return "a number", RENT_ACCEPTED
    args = get_args(info.annotation) or (info.annotation,)
    flat = {a for x in args for a in (get_args(x)[:1] or (x,))}  # Annotated[float, ...] -> float
    if not flat & {int, float}:
        return None
    whole = int in flat and float not in flat
    limits = {k: getattr(m, k) for m in info.metadata for k in ("gt", "ge", "lt", "le") if hasattr(m, k)}
    if whole and ("gt" in limits or "ge" in limits):
        low = limits["gt"] + 1 if "gt" in limits else limits["ge"]
        high = limits.get("le", limits["lt"] - 1 if "lt" in limits else None)
        return (
            "a whole number",
            f"from {_bound(low)} to {_bound(high)}" if high is not None else f"{_bound(low)} or more",
        )
    words = {"gt": "above", "ge": "at least", "lt": "below", "le": "at most"}
    return "a number", " and ".join(f"{words[k]} {_bound(v)}" for k, v in limits.items()) or "(any finite number)"


def _number_way_out(got: Any, field: str) -> str:
    """For text given where a number is wanted, the number to write where one can be read from it: "$2.50" -> "write
    2.5 (no currency sign or unit)"; "3 years" for a field in months -> "write 36 (months)". "" otherwise."""
    if not isinstance(got, str):
        return ""
    hit = re.fullmatch(r"\s*(?:US)?\$?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([A-Za-z$/-]*)\s*", got)
    if hit is None:
        return ""
    number, unit = float(hit.group(1).replace(",", "")), hit.group(2).lower()
    if field.endswith("_months") and unit in ("year", "years", "yr", "yrs", "y"):
        return f"; write {number * 12:g} (months)"
    if field.endswith("_months") and unit in ("month", "months", "mo"):
        return f"; write {number:g} (months)"
    return f"; write {number:g} (no currency sign or unit)" if unit in ("", "usd", "$", "us$", "dollars") else ""


def _message(err: dict, raw_options: list) -> str:
    loc = tuple(err.get("loc", ()))
    kind = err.get("type", "")
    where = _where(loc, raw_options)
    owner = _field_model(loc)
    field = next((x for x in reversed(loc) if isinstance(x, str)), "")
    if kind == "extra_forbidden":
        parent = owner if owner is not None else Scenario
        if loc and loc[0] in ("option", "defaults"):
            parent = Option
        known = sorted(parent.model_fields)
        if parent is Option and field in Workload.model_fields:  # trial 30 F2: not "did you mean speculative_tokens?"
            return (
                f"{where}: {field} is a [workload] field: one workload per scenario; for two services with different "
                "traffic, run one export each"
            )
        near = closest_names(field, known) if field else []
        hint = f"did you mean {', '.join(near)}? " if near else ""
        seconds = re.sub(r"_ms$", "_s", field)
        if seconds != field and seconds in known:  # a time in the wrong unit: the field in seconds takes "50 ms"
            got = err.get("input")
            ms = f"{got:g}" if isinstance(got, int | float) and not isinstance(got, bool) else "50"
            hint = f'did you mean {seconds}? (seconds, or "{ms} ms") '
        return f"{where or 'top level'}: unknown field; {hint}accepted fields: {', '.join(known)}"
    if kind == "missing" and loc in (("workload",), ("option",)):
        return f"missing the [{'[option]' if loc[0] == 'option' else 'workload'}] table" + (
            "s; give at least one" if loc[0] == "option" else ""
        )
    if loc and loc[0] == "mix" and kind in ("too_short", "too_long"):  # in planner's words, not pydantic's
        whats = "parts" if loc[-1] == "parts" else "[[mix]] tables"
        if kind == "too_short":
            return f'{where}: no part; give at least one, as parts = [{{option = "...", share = 1}}]'
        got = (err.get("ctx") or {}).get("actual_length")
        return f"{where}: {got:,} {whats}; a scenario holds at most {MAX_OPTIONS:,} (split it into several reviews)"
    if loc == ("option",) and kind == "too_short":
        return "option: no [[option]] table; give at least one"
    if kind == "missing":
        what = _accepted(owner, field) if owner else ""
        return f"{where}: missing" + (f" ({what})" if what else "")
    text = err.get("msg", "invalid").replace("Value error, ", "")
    got = err.get("input")
    if field == "pricing" and isinstance(got, str):  # a price kind or a word for renting or buying
        said = got.strip().lower()
        kind = read_price_kind(said)
        if kind in ("spot", "reserved", "on-demand"):
            text += (
                f'; {"an" if kind == "on-demand" else "a"} {kind} rent is pricing = "cloud" with price_kind = "{kind}"'
            )
        elif said in ("rent", "rented", "rental", "hourly", "hire", "lease"):
            text += '; renting by the hour is pricing = "cloud"'
        elif said in ("buy", "bought", "own", "owned", "capex", "purchased"):
            text += '; buying is pricing = "purchase"'
    accepted = _number_accepted(owner, field) if owner and field else None
    tail = ""  # after what was given: the way out
    if accepted is not None and kind in _BOUND_ERRORS:
        text = f"must be {accepted[1]}" if accepted[0] == "a number" else f"must be {' '.join(accepted)}"
        if field == "growth_over_horizon" and isinstance(got, int | float) and got < 0:
            tail = f"; {NO_DECLINE}"
    elif accepted is not None and kind in _NOT_A_NUMBER_ERRORS:
        text, tail = f"must be {' '.join(accepted)}", _number_way_out(got, field)
    what = _accepted(owner, field) if owner and field else ""
    show_got = kind not in ("value_error",) and not isinstance(got, dict)
    return (
        f"{where + ': ' if where else ''}{text}"
        + (f" ({what})" if what else "")
        + (f"; got {toml_repr(got)}" if show_got else "")
        + tail
    )


def parse_scenario(data: dict, source: str = "scenario") -> Scenario:
    """A Scenario from already-parsed TOML data; ScenarioError names ``source`` and the first bad field."""
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario is a TOML table")
    raw_options = data.get("option", [])
    if isinstance(raw_options, dict):  # [option] written instead of [[option]]
        raise ScenarioError(f"{source}: option: write each option as an [[option]] table (double brackets)")
    raw_options = raw_options if isinstance(raw_options, list) else []
    if isinstance(data.get("mix"), dict):  # [mix] written instead of [[mix]]
        raise ScenarioError(f"{source}: mix: write each mix as a [[mix]] table (double brackets)")
    if len(raw_options) > MAX_OPTIONS:
        raise ScenarioError(
            f"{source}: {len(raw_options):,} [[option]] tables; a scenario holds at most {MAX_OPTIONS:,} "
            "(split it into several reviews)"
        )
    defaults_raw = data.get("defaults", {})
    try:
        defaults = Defaults.model_validate(defaults_raw if defaults_raw is not None else {})
    except ValidationError as exc:
        err = dict(exc.errors()[0])
        err["loc"] = ("defaults", *err.get("loc", ()))
        raise ScenarioError(f"{source}: {_message(err, raw_options)}{_line_note(source, err['loc'])}") from None
    given = defaults.model_dump(exclude_none=True)
    merged = dict(data)
    if raw_options:
        merged["option"] = [_named({**given, **o}) if isinstance(o, dict) else o for o in raw_options]
    try:
        here = Path(source).parent if Path(source).is_file() else None  # lengths_file is relative to the scenario
        scenario = Scenario.model_validate(merged, context={"base_dir": here})
    except ValidationError as exc:
        err = _first_error(exc.errors())
        loc = _blamed_loc(err)
        raise ScenarioError(f"{source}: {_message(err, raw_options)}{_line_note(source, loc)}") from None
    return scenario


def _first_error(errors: list) -> Any:
    """The error to report: pydantic's first, except that a field missing from a table that also holds an unknown
    field is most likely that field misspelt or in another unit (``tpot_target_ms`` for ``tpot_target_s``), so the
    unknown one is named, with the field it should be."""
    first = errors[0]
    if first.get("type") == "missing":
        table = tuple(first.get("loc", ()))[:-1]
        for e in errors:
            if e.get("type") == "extra_forbidden" and tuple(e.get("loc", ()))[:-1] == table:
                return e
    return first


def _blamed_loc(err: Any) -> tuple:
    """pydantic's location of an error; for a check of the whole [workload] table whose message starts with one of
    its fields ("dataset 'sharegtp' has no ...") that field's, so that the line named is the one to edit."""
    loc = tuple(err.get("loc", ()))
    mix = re.match(r"(?:Value error, )?mix #(\d+)", str(err.get("msg", "")))
    if loc == () and mix:  # a [[mix]] checked with the options it names: its parts line
        return ("mix", int(mix.group(1)) - 1, "parts")
    first = re.match(r"(?:Value error, )?(\w+) ", str(err.get("msg", "")))
    if loc == ("workload",) and first and first.group(1) in Workload.model_fields:
        return (*loc, first.group(1))
    return loc


def _named(option: dict) -> dict:
    """The option with a readable default name: 'GPU, model[, weights][, KV kv], pricing'."""
    if option.get("name") or not all(isinstance(option.get(k), str) for k in ("gpu", "model")):
        return option
    parts = [option["gpu"], option["model"]]
    if isinstance(option.get("weight_precision"), str):
        parts.append(option["weight_precision"])
    if isinstance(option.get("kv_precision"), str):
        parts.append(f"KV {option['kv_precision']}")
    layout = option.get("parallelism")
    if isinstance(layout, str) and (spreads_experts(layout) or is_pipeline(layout)):
        parts.append({"tp-ep": "TP + EP", "dp-ep": "DP attention + EP"}.get(layout, layout.upper()))
    parts.append(str(option.get("pricing") or BUILTIN_DEFAULTS["pricing"]))
    return {**option, "name": ", ".join(parts)}


_TABLE_HEADER = re.compile(r"\[\[?\s*([A-Za-z_][\w.-]*)\s*\]\]?")


def field_line(text: str, loc: tuple) -> int | None:
    """The line (from 1) of scenario ``text`` that sets the field at ``loc`` (pydantic's location:
    ``("workload", "tpot_target_s")``, ``("option", 1, "gpu")``, ``("title",)``); the line of its table's
    header when the table does not set it (a missing field); None when neither is found."""
    tables = ("workload", "defaults", "option", "levers", "finance", "mix")
    arrays = ("option", "mix")  # [[option]], [[mix]]: the loc's index counts them
    table = loc[0] if loc and loc[0] in tables else None
    index = loc[1] if table in arrays and len(loc) > 1 and isinstance(loc[1], int) else 0
    if table == "mix":  # a part's field is on the line of its parts = [...]
        loc = loc[:3]
    key = next((str(x) for x in reversed(loc) if isinstance(x, str) and x != table), None)
    current, seen, header = None, -1, None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        head = _TABLE_HEADER.match(stripped) if stripped.startswith("[") else None
        if head:
            current = head.group(1)
            seen += current == table and table in arrays and stripped.startswith("[[")
            if current == table and (table not in arrays or seen == index):
                header = number
            continue
        here = current == table and (table not in arrays or seen == index)
        if key and here and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
        if key and table and current is None and re.match(rf"{table}\s*\.\s*{re.escape(key)}\s*=", stripped):
            return number
    return header


def _line_note(source: str, loc: tuple) -> str:
    """' (line N)' when ``source`` is the scenario file and the field at ``loc`` is found in it, else ''."""
    path = Path(source)
    try:
        if not path.is_file():
            return ""
        line = field_line(read_text_bounded(path, MAX_SCENARIO_BYTES, "a scenario file"), tuple(loc))
    except (OSError, UnicodeDecodeError, PlannerError):
        return ""
    return f" (line {line})" if line else ""


def _where_loc(where: str) -> tuple:
    """``"option #2 (H100 rented).gpu"`` -> ``("option", 1, "gpu")``; ``"defaults.model"`` -> ``("defaults", "model")``."""
    option = re.fullmatch(r"option #(\d+) \(.*\)\.(\w+)", where, flags=re.S)
    if option:
        return ("option", int(option.group(1)) - 1, option.group(2))
    return tuple(where.split(".", 1))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario TOML file. Errors name the file and the field."""
    path = Path(path)
    try:
        text = read_text_bounded(path, MAX_SCENARIO_BYTES, "a scenario file")
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file") from None
    except InvalidInputError as exc:
        raise ScenarioError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot be read as UTF-8 text ({exc.__class__.__name__})") from None
    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML: {exc}") from None
    return parse_scenario(data, str(path))


def check_names(scenario: Scenario, catalog: Catalog, source: str = "scenario") -> None:
    """Every GPU, model, precision and engine name resolves in the catalog; else a one-line ScenarioError."""
    d = scenario.defaults  # checked first: a typo there is blamed on [defaults], not on option #1 that inherits it
    checks: list[tuple[str, Any, Any]] = [
        (f"defaults.{f}", lookup, getattr(d, f))
        for f, lookup in (
            ("gpu", catalog.gpu),
            ("model", catalog.model),
            ("engine", engine_profile),
            ("weight_precision", catalog.precision),
            ("kv_precision", catalog.precision),
        )
        if getattr(d, f) is not None
    ]
    for i, o in enumerate(scenario.option):
        label = f"option #{i + 1} ({o.name})"
        checks += [
            (f"{label}.gpu", catalog.gpu, o.gpu),
            (f"{label}.model", catalog.model, o.model),
            (f"{label}.engine", engine_profile, o.engine),
        ]
        checks += [
            (f"{label}.{f}", catalog.precision, getattr(o, f))
            for f in ("weight_precision", "kv_precision")
            if getattr(o, f) is not None
        ]
    if scenario.levers.gqa_model:
        checks.append(("levers.gqa_model", catalog.model, scenario.levers.gqa_model))
    checks.append(("levers.kv_precision", catalog.precision, scenario.levers.kv_precision))
    for where, lookup, name in checks:
        try:
            lookup(name)
        except PlannerError as exc:
            raise ScenarioError(f"{source}: {where}: {exc}{_line_note(source, _where_loc(where))}") from None
    sample = scenario.workload.lengths_sample
    for i, o in enumerate(scenario.option):  # a lengths_file's request longer than a model's context (trial 28 F9)
        model = catalog.model(o.model) if sample is not None and o.model else None
        if model is not None and sample.longest_tokens > model.max_context:
            loc = ("workload", "lengths_file")
            raise ScenarioError(
                f"{source}: workload.lengths_file: {sample.name} line {sample.longest_line}: a request of "
                f"{sample.longest_tokens:,} tokens (prompt + output), more than {model.name}'s context of "
                f"{model.max_context:,} (option #{i + 1}, {o.name}); leave out the longer rows, or choose a model "
                f"with a longer context{_line_note(source, loc)}"
            )
    for i, o in enumerate(scenario.option):  # an engine that does not run on the GPU's vendor (TensorRT-LLM on AMD)
        eng, gpu = engine_profile(o.engine), catalog.gpu(o.gpu)
        if engine_vendor_refused(eng, gpu):
            where = f"option #{i + 1} ({o.name}).engine"
            raise ScenarioError(f"{source}: {where}: {vendor_error(gpu, eng)}{_line_note(source, _where_loc(where))}")
        cannot = release_cannot_run(o.engine, catalog.model(o.model), o.parallelism or "tp") if o.model else ""
        if cannot:  # a pinned vLLM release without the model's architecture or the layout (trial 16, F7)
            where = f"option #{i + 1} ({o.name}).engine"
            raise ScenarioError(f"{source}: {where}: {cannot}{_line_note(source, _where_loc(where))}")
    options = [engine_profile(o.engine) for o in scenario.option]
    lever_from = [e for o, e in zip(scenario.option, options, strict=True) if scenario.baseline in (None, o.name)]
    for where, name, engines in [
        (f"option #{i + 1} ({o.name}).kv_precision", o.kv_precision, [e])
        for i, (o, e) in enumerate(zip(scenario.option, options, strict=True))
    ] + [("levers.kv_precision", scenario.levers.kv_precision, lever_from or options)]:
        if name is not None and not catalog.precision(name).kv_cache:
            raise ScenarioError(
                f"{source}: {where}: {typed_name(name, catalog.precision(name).name)} is not a KV-cache format; "
                "accepted: "
                + ", ".join(kv_formats(catalog.precisions, engines))
                + _line_note(source, _where_loc(where))
            )
    lever_kv = catalog.precision(scenario.levers.kv_precision).name
    for i, o in enumerate(scenario.option):  # a KV format the option's engine does not cache (vLLM and int4): the
        eng = engine_profile(o.engine)  # sizing's coerced arrays collapsed to one NaN and raised an IndexError
        kv = catalog.precision(o.kv_precision).name if o.kv_precision is not None else None
        where = f"option #{i + 1} ({o.name}).kv_precision"
        if (kv is None or eng.accepts_kv(kv)) and scenario.baseline in (None, o.name):  # the lever may start here
            kv, where = lever_kv, "levers.kv_precision"
        if kv is not None and not eng.accepts_kv(kv):
            way_out, whose = "", ""
            if where == "levers.kv_precision":  # the lever's default (fp8) too: say where to set another
                usable = [
                    p for p in kv_formats(catalog.precisions, [eng]) if catalog.precision(p).bytes_per_element < 2
                ]
                way_out = f' (the KV-cache lever: set [levers] kv_precision = "{usable[0]}")' if usable else ""
                if scenario.baseline is None:  # the lever starts from whichever option is recommended: any of them
                    way_out += (
                        '; or name the option the levers start from, baseline = "..." (the lever applies to it alone)'
                    )
                whose = f" of option #{i + 1} ({o.name})"
            raise ScenarioError(
                f"{source}: {where}: the {eng.name!r} engine{whose} cannot cache KV in {kv}; it caches "
                + ", ".join(eng.kv_precisions or ())
                + way_out
                + _line_note(source, _where_loc(where))
            )
    providers = sorted({p.provider for g in catalog.gpus for p in g.prices})
    bases = [("defaults.price_basis", d.price_basis)]  # [defaults] first: a typo there is blamed on it
    bases += [(f"option #{i + 1} ({o.name}).price_basis", o.price_basis) for i, o in enumerate(scenario.option)]
    for where, basis in bases:  # a provider no quote is from: every option would silently pay the median
        if basis and basis.strip().lower() != "median":
            if not any(p.lower().startswith(basis.strip().lower()) for p in providers):
                near = closest_names(basis, providers)
                raise ScenarioError(
                    f"{source}: {where}: no catalog quote is from {basis!r}; "
                    + (f"did you mean {', '.join(near)}? " if near else "")
                    + 'give "median" or a provider the catalog quotes (planner catalog show <GPU> lists them)'
                    + _line_note(source, _where_loc(where))
                )
    for i, o in enumerate(scenario.option):
        gpu = catalog.gpu(o.gpu)
        label = f"option #{i + 1} ({o.name})"
        if (
            spreads_experts(o.parallelism or "tp") and catalog.model(o.model).moe is None
        ):  # named with the option and line
            where = f"{label}.parallelism"
            raise ScenarioError(
                f"{source}: {where}: {layout_error(catalog.model(o.model), o.parallelism)}"
                + _line_note(source, _where_loc(where))
            )
        if o.gpus_per_replica is not None:  # a group the engine refuses: named here, with the option and line
            model, par = catalog.model(o.model), o.parallelism or "tp"
            if o.gpus_per_replica not in valid_tp_sizes(model, catalog=catalog, parallelism=par, engine=o.engine):
                where = f"{label}.gpus_per_replica"
                raise ScenarioError(
                    f"{source}: {where}: {tp_size_error(model, o.gpus_per_replica, par, o.engine)}"
                    + _line_note(source, _where_loc(where))
                )
            # SGLang refuses experts that do not divide over the ranks
            refused = uneven_experts(model, o.gpus_per_replica, par, o.engine)[0]
            if refused:
                where = f"{label}.gpus_per_replica"
                raise ScenarioError(f"{source}: {where}: {refused}" + _line_note(source, _where_loc(where)))
        if o.pricing == "purchase" and o.purchase_usd is None and gpu.price("purchase") is None:
            raise ScenarioError(
                f"{source}: {label}.purchase_usd: the catalog has no purchase price for "
                f'{catalog.gpu(o.gpu).name}; give purchase_usd (US$ per GPU) or use pricing = "cloud"'
                + (
                    f' (pricing = "purchase" with price_kind = "{o.price_kind}" contradict: '
                    "a price kind is a rental rate; drop one)"
                    if o.price_kind not in (None, "purchase")
                    else ""
                )
            )
        kind = o.price_kind or "on-demand"
        if o.pricing == "cloud" and o.cloud_usd_per_gpu_hour is None and gpu.price(kind) is None:
            have = [p.kind for p in gpu.prices if p.kind != "purchase"]
            raise ScenarioError(
                f"{source}: {label}.cloud_usd_per_gpu_hour: the catalog has no {kind} cloud price for "
                f"{gpu.name}; give cloud_usd_per_gpu_hour (US$ per GPU-hour)"
                + (f" or price_kind = one of {', '.join(dict.fromkeys(have))}" if have else "")
            )
