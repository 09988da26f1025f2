"""Units: exact binary sizes inside, SI (1 GB = 1e9 B) for display."""

from __future__ import annotations

import decimal
import math
import re

from planner.errors import shown_name

KiB, MiB, GiB = 2**10, 2**20, 2**30
KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12

#: Largest rent per GPU-hour the public functions, a scenario and `planner plan --price` take, US$: the dearest
#: catalog rent is a few dollars; above this a figure is a typo or a whole node's price (1e308 overflowed to inf).
MAX_RENT_USD_PER_GPU_HOUR = 1e4
#: What a rent per GPU-hour may be, as every surface says it (``planner plan --price``, ``price_per_gpu_hour`` of the
#: public functions and Excel, a scenario's ``cloud_usd_per_gpu_hour``, the what-if workbook's price cell).
RENT_ACCEPTED = f"above 0 and at most {MAX_RENT_USD_PER_GPU_HOUR:,.0f} US$ per GPU-hour"
#: A typed rent per GPU-hour this many times the GPU's highest catalog rental quote or more is warned of, not refused:
#: an instance's hourly price typed per GPU (trial 22 F10: an 8-GPU instance's $31.92 is 5.2x H100's highest quote,
#: $6.155). ``planner export`` warns of a scenario's price (``evaluate._implausible_rate``) and the what-if workbook's
#: Inputs of the typed one (``planner.workbook.inputs.price_warning``) by this one bound.
RENT_IMPLAUSIBLE_FACTOR = 4.0


def rent_usd_per_gpu_hour(value: float) -> float:
    """``value`` if it is a rent per GPU-hour planner takes, US$: 0 < value <= ``MAX_RENT_USD_PER_GPU_HOUR``. A rent
    of 0 prices every token at nothing (a cell typed 0 for "unknown"; leaving the price out takes the catalog's), so
    it is refused, as a scenario always refused it. ValueError "must be above 0 and at most 10,000 US$ per GPU-hour;
    got 0" otherwise: the one bound and wording of every surface (``RENT_ACCEPTED``)."""
    number = float(value)
    if not 0 < number <= MAX_RENT_USD_PER_GPU_HOUR:  # NaN fails too
        raise ValueError(f"must be {RENT_ACCEPTED}; got {number:g}")
    return number


def _si(value: float, unit: str, prefixes=((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")), digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    for scale, prefix in prefixes:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def counted(n: float, noun: str, spec: str = ",") -> str:
    """A count and its noun, plural unless the count reads 1: (1, "GPU") -> '1 GPU', (1024, "GPU") -> '1,024 GPUs',
    (3, "replica") -> '3 replicas'. ``spec``: the number's format spec (",": thousands separators; "" as written;
    ">4,": right-aligned in 4 characters); the noun is chosen by the number as printed (1.0 with ",.0f" is 1)."""
    text = format(n, spec)
    return f"{text} {noun}" if text.strip() == "1" else f"{text} {noun}s"


def fixed_half_up(x: float, digits: int = 1) -> str:
    """``x`` to ``digits`` decimals, a tie rounded away from zero as a hand check rounds it, for display only (trial
    25 F10: B200's ridge 2.25e15 / 8e12 = 281.25 FLOP/B printed "281.2" under Python's half-even "{:.1f}"; this gives
    "281.3"). The tie is the number as Python writes it (``repr``: the shortest decimal that reads back as ``x``), so
    0.15 is "0.2" although its binary value is a hair below 0.15. Separators as ",": 1,234.6."""
    if not math.isfinite(x):
        return f"{x:.{digits}f}"
    exact = decimal.Decimal(repr(float(x))).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP)
    return f"{exact:,.{digits}f}"


def fmt_bytes(n: float) -> str:
    """SI bytes: 137953296384 -> '138 GB', 327680 -> '328 kB'."""
    return _si(n, "B")


def fmt_gb(n: float, digits: int = 2) -> str:
    """Bytes as GB with fixed decimals: 137953296384 -> '137.95 GB'."""
    return f"{n / GB:,.{digits}f} GB"


def gpu_memory_words(memory_bytes: float) -> str:
    """A GPU's memory in SI GB with its binary size beside it, as sold: "85.90 GB = 80 GiB" for an "80GB" H100
    (trial 30 F13: 85.90 GB read as a different number from the vendor's 80 GB)."""
    return f"{fmt_gb(memory_bytes)} = {round(memory_bytes / GiB, 1):g} GiB"


def gb_unit_with_gib(memory_bytes: float) -> str:
    """The unit of a GPU's memory shown in SI GB, with its binary size: "GB (80 GiB)", so an H100's 85.90 reads
    "85.90 GB (80 GiB)" beside the vendor's "80GB" (trial 30 F13; ``gpu_memory_words``'s figure)."""
    return f"GB ({round(memory_bytes / GiB, 1):g} GiB)"


def is_gb_unit(unit: str) -> bool:
    """Whether an Assumptions unit is SI GB, bare or with its GiB beside it (``gb_unit_with_gib``)."""
    return unit == "GB" or unit.startswith("GB (")


def fmt_seconds(s: float) -> str:
    """0.0213 -> '21.3 ms'; 1.5 -> '1.50 s'."""
    if s is None or math.isnan(s):
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def ms_words(seconds: float) -> str:
    """A latency in milliseconds, the one unit a refusal gives a TTFT, a TPOT and their targets alike: 42.5 ms, 1 ms,
    1,250 ms (3 significant figures, never in scientific notation)."""
    v = float(seconds) * 1e3
    if v >= 100:
        return f"{v:,.0f} ms"
    if v >= 0.01:
        return f"{v:.3g} ms"
    return f"{v:.6f}".rstrip("0").rstrip(".") + " ms"


def rate_words(per_s: float) -> str:
    """A rate of requests, never in scientific notation: "3.81 requests/s", "1,250 requests/s", or below one a
    minute its gap ("one request every 7.29 hours")."""
    if per_s >= 100:
        return f"{per_s:,.0f} requests/s"
    if per_s >= 1 / 60:
        return f"{per_s:.3g} requests/s"
    gap_s = 1 / per_s
    return (
        f"one request every {gap_s / 60:,.3g} minutes"
        if gap_s < 3600
        else f"one request every {gap_s / 3600:,.3g} hours"
    )


def fmt_rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.0f} tokens/s" if tokens_per_s >= 100 else f"{tokens_per_s:.3g} tokens/s"


def fmt_percent(x: float) -> str:
    return f"{x * 100:.2f}%" if x < 0.1 else f"{x * 100:.1f}%"


def fmt_usd(x: float) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"${x:,.2f}" if x >= 0.1 else f"${x:.4f}"


def fmt_usd_per_gpu_hour(x: float) -> str:
    """A price per GPU-hour, US$, to the cent and as many more digits as it has, up to four: "$3.595" (the median of
    3.20 and 3.99, which "$3.60" hid, so that GPUs x price x 730 h did not reproduce a monthly cost: trial 19 F4),
    "$2.50"."""
    if x is None or math.isnan(x):
        return "n/a"
    text = f"{x:,.4f}".rstrip("0")
    return "$" + (text if len(text.split(".")[1]) >= 2 else f"{x:,.2f}")


#: The spreadsheet number format of a price per GPU-hour, as ``fmt_usd_per_gpu_hour`` writes it.
USD_PER_GPU_HOUR_FORMAT = '"$"#,##0.00##'


def count_accepted(unit: str, most: int) -> str:
    """What a count input takes, as every surface says it: "a whole number of GPUs from 1 to 4,096" (``unit`` ""
    leaves the unit out). The wording of ``whole_count`` and of the public functions' count checks
    (``planner.checks``)."""
    return f"a whole number{' of ' + unit if unit else ''} from 1 to {most:,}"


def whole_count(value: object, unit: str, most: int, typed: object = None) -> int:
    """``value`` as an int if it is a whole number from 1 to ``most`` (8.0 is 8); else ValueError "must be a whole
    number of GPUs from 1 to 64; got 128": the one wording of a count's bound, for the what-if workbook's reader and a
    scenario alike (``count_accepted``). True and False are not counts. ``typed``: the value as the user wrote it
    (text in a cell), shown in the message instead of ``value``."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not (math.isfinite(number) and number == int(number) and 1 <= number <= most):
        shown = "true or false" if isinstance(value, bool) else shown_name(value if typed is None else typed)
        raise ValueError(f"must be {count_accepted(unit, most)}; got {shown}")
    return int(number)


#: Suffixes of a token count as model cards write them: an "8K context" is 8,192 tokens, "128k" 131,072.
TOKEN_SUFFIXES = {"k": 2**10, "m": 2**20}
_TOKEN_COUNT = re.compile(r"(?P<number>[0-9][0-9,_]*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]{1,3})?)\s*(?P<suffix>[kKmM]?)")


def token_count_accepted(whole: bool = True, least: int | None = None) -> str:
    """What a token count takes, as every refusal of one says it: "a whole number of tokens such as 8192, 8,192, 1e4
    or 8k (k = 1,024 tokens)"; ``whole`` False: a mean, "a number of tokens such as 207.5, ..."; ``least``: with its
    lower bound ("a number of tokens of 1 or more, such as 207.5, ...")."""
    kind = "a whole number of tokens" if whole else "a number of tokens"
    bound = f" of {least:,} or more," if least is not None else ""
    example = "8192" if whole else "207.5"
    return f"{kind}{bound} such as {example}, 8,192, 1e4 or 8k (k = 1,024 tokens)"


def parse_percent(text: str, share: bool) -> float:
    """A percentage as people type it, the one reading of "30%" every cell and call shares: with ``share`` a share
    ("30%", "30 %" -> 0.3, as a scenario's ``growth_over_horizon = "30%"`` reads), else a percentile ("95%", "p95",
    "P 95" -> 95, as ``high_percentile = "95%"`` and ``plan --length-percentile p95`` read). ``ValueError`` for
    other text (a bare number is the caller's: a share's 0.3 and a percentile's 95 are both plain numbers)."""
    pattern = r"\s*([0-9]*\.?[0-9]+)\s*%\s*" if share else r"\s*[pP]?\s*([0-9]*\.?[0-9]+)\s*%?\s*"
    hit = re.fullmatch(pattern, text)
    if hit is None:
        kind = 'a share; write a fraction (0.3) or a percentage ("30%")' if share else "a percentile (95, p95, 95%)"
        raise ValueError(f"{text[:40]!r} is not {kind}")
    return float(hit.group(1)) / 100 if share else float(hit.group(1))


def parse_token_count(value: object, whole: bool = True, whole_because: str = "") -> int:
    """A token count as people write it: 8192, "8192", "8,192", "8_192", "1e4" (10,000), "8k" / "8K" (8,192 =
    8 x 1,024, as model cards mean an 8K context), "1.5k" (1,536), "1M" (1,048,576).

    Raises ValueError saying what is accepted for anything else: text that is not a count, a fraction of a
    token, true/false, inf or NaN. A thousands comma must group three digits ("8,19" is refused).
    ``whole=False`` (a run's mean length, "207.5" or "1.3k"): a fraction is kept, returned as a float.
    ``whole_because``: why the count must be whole (a context sizes memory), said when a fraction is refused.
    """
    accepted = token_count_accepted(whole)
    if isinstance(value, bool):
        raise ValueError(f"expected {accepted}, not true or false")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not (math.isfinite(value) and (value.is_integer() or not whole)):
            if whole_because and math.isfinite(value):
                raise ValueError(f"{value!r} is not a whole number ({whole_because}); expected {accepted}")
            raise ValueError(f"{value!r} is not {accepted}")
        return int(value) if whole else value
    if not isinstance(value, str):
        raise ValueError(f"expected {accepted}; got {type(value).__name__}")
    hit = _TOKEN_COUNT.fullmatch(value.strip())
    if hit is None:
        raise ValueError(f"{value[:40]!r} is not {accepted}")
    number = hit["number"]
    if "," in number and not re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?([eE][+-]?[0-9]+)?", number):
        raise ValueError(f"{value[:40]!r}: a comma must separate groups of three digits; expected {accepted}")
    count = decimal.Decimal(number.replace(",", "").replace("_", "")) * TOKEN_SUFFIXES.get(hit["suffix"].lower(), 1)
    if count > 2**63:  # before int(): 1e999999999 would be a billion digits
        raise ValueError(f"{value[:40]!r} is more tokens than any context holds; expected {accepted}")
    if not whole:
        return float(count)
    if count != count.to_integral_value():
        because = f" ({whole_because})" if whole_because else ""
        raise ValueError(f"{value[:40]!r} is {count:f} tokens, not a whole number{because}; expected {accepted}")
    return int(count)


#: Largest target written as a bare number of seconds; above it, the unit must be written ("2 s"). A token
#: every second is slower than anyone reads (about 5 tokens/s); a first token after a minute is no chat.
BARE_TPOT_MAX_S = 1.0
BARE_TTFT_MAX_S = 60.0


class UnitSlipError(ValueError):
    """A bare number of seconds above what the quantity plausibly takes: milliseconds typed as seconds."""


#: Units a duration may be written in, in seconds, lower case as written ("1.5 s", "60 msec", "1.5 secs").
TIME_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1.0),
    **dict.fromkeys(("ms", "msec", "msecs", "millisecond", "milliseconds"), 1e-3),
    **dict.fromkeys(("us", "µs", "usec", "usecs", "microsecond", "microseconds"), 1e-6),
}
#: A number (a sign allowed, so that a negative duration is refused as negative, not as no duration) and one of
#: ``TIME_UNITS``, longest first so that "ms" is not read as "m" + "s".
_DURATION = re.compile(
    r"(?P<number>[-+]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]{1,3})?)\s*(?P<unit>"
    + "|".join(re.escape(u) for u in sorted(TIME_UNITS, key=len, reverse=True))
    + ")"
)


class SpeedNotTimeError(ValueError):
    """A speed in tokens a second ("20 tokens/s") where a time is asked: refused with the time it stands for."""


#: A speed as people write it for a chat's feel: "20 tokens/s", "20 tok/s", "20 tokens per second" (trial 34 F6).
_TOKEN_SPEED = re.compile(
    r"(?P<number>[0-9]*\.?[0-9]+)\s*(?:tokens?|toks?)\s*(?:/|per|a)\s*(?:s|sec|secs|second)", re.IGNORECASE
)


def _speed_words(text: str, bare_max_s: float, example_s: float) -> str | None:
    """The refusal of a speed given for a time (trial 34 F6: a product manager's "answers feel fast" is 20 tokens a
    second), or None where ``text`` is no speed. A per-token time (``bare_max_s`` at most ``BARE_TPOT_MAX_S``: the
    TPOT) is its inverse, said with the number to write; another time (a TTFT) has no such inverse."""
    hit = _TOKEN_SPEED.fullmatch(text.strip())
    if hit is None:
        return None
    speed = float(hit["number"])
    head = f"{text.strip()[:40]!r} is a speed, not a time"
    if bare_max_s <= BARE_TPOT_MAX_S and speed > 0:
        per = 1 / speed
        return (
            f"{head}: {speed:g} tokens a second is one token every {per:.4g} s; write {per:.4g} (seconds) or "
            f'"{per * 1e3:.4g} ms"'
        )
    return f'{head}: give the wait in seconds, e.g. {example_s:g} or "{example_s * 1e3:g} ms"'


def parse_seconds(value: object, bare_max_s: float, name: str, example_s: float = 0.05) -> float:
    """A duration in seconds: a number is seconds, text carries its unit ("50 ms", "0.05 s", "800us", "60 msec":
    ``TIME_UNITS``). A negative duration is returned as read ("-1s" -> -1.0): the caller refuses it as not positive.

    A bare number above ``bare_max_s`` is refused as a likely unit slip (``tpot_target_s = 50`` is 50 ms typed
    as seconds) with the way out: the number in seconds, or the same value written with its unit, which is
    taken as written. ValueError for anything else, with ``example_s`` as the example of what is accepted (a
    realistic value of the quantity: 0.05 for a TPOT, 1.5 for a TTFT).
    """
    example = f'{example_s:g} or "{example_s * 1e3:g} ms"'
    if isinstance(value, bool):
        raise ValueError(f"expected seconds, e.g. {example}; not true or false")
    if isinstance(value, (int, float)):
        seconds = float(value)
        if math.isfinite(seconds) and seconds > bare_max_s:
            raise UnitSlipError(
                f"{value:g} seconds looks like milliseconds typed as seconds; write {value / 1e3:g} "
                f'(seconds) or "{value:g} ms", or "{value:g} s" if you do mean seconds'
            )
        return seconds
    if not isinstance(value, str):
        raise ValueError(f"expected seconds, e.g. {example}; got {type(value).__name__}")
    hit = _DURATION.fullmatch(value.strip())
    if hit is None and (speed := _speed_words(value, bare_max_s, example_s)) is not None:
        raise SpeedNotTimeError(speed)
    if hit is None:
        raise ValueError(
            f'{value[:40]!r} is not a duration; write {name} = {example_s:g} (seconds) or "{example_s * 1e3:g} ms"'
        )
    return float(hit["number"]) * TIME_UNITS[hit["unit"]]
