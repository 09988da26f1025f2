"""The latency percentile and the high lengths a fleet is sized on under load, checked and drawn once for every
surface that takes them (``planner plan --rate``'s ``--percentile``, ``--length-percentile``,
``--prompt-tokens-high`` and ``--output-tokens-high``; ``planner workbook``'s same options and Inputs cells): the
refusals (``check_length_percentile``, ``check_high_lengths``) and the requests drawn (``sized_lengths``: a lognormal,
truncated at the slot, and past its reach a two-part mixture within the slot, ``planner.serving.load.spread_lengths``,
as many as ``sizing_requests`` at the percentile).

Imports: ``planner.serving.load`` and the scenario's percentile rules (``planner.export.scenario``), no surface.
"""

from __future__ import annotations

from planner.errors import InvalidInputError
from planner.serving.load import HIGH_PERCENTILES, sizing_requests, spread_lengths

#: How the refusals name each value: ``planner plan``'s options (the workbook's command takes the same ones).
PLAN_NAMES = {
    "prompt_tokens_high": "--prompt-tokens-high",
    "output_tokens_high": "--output-tokens-high",
    "prompt_tokens": "--prompt-tokens",
    "output_tokens": "--output-tokens",
    "percentile": "--percentile",
    "length_percentile": "--length-percentile",
    "rate": "--rate",
}


def length_percentile_of(percentile: float, length_percentile: float | None) -> float:
    """The high lengths' percentile (a review's high_percentile): ``length_percentile``, else the targets'
    ``percentile`` (trial 28 F5)."""
    return float(percentile if length_percentile is None else length_percentile)


def check_length_percentile(
    length_percentile: float | None,
    prompt_tokens_high: int | None,
    output_tokens_high: int | None,
    names: dict[str, str] = PLAN_NAMES,
) -> None:
    """A length percentile given with no high length is refused (it would set nothing)."""
    if length_percentile is not None and prompt_tokens_high is None and output_tokens_high is None:
        raise InvalidInputError(
            f"{names['length_percentile']} is the percentile of {names['prompt_tokens_high']} and "
            f"{names['output_tokens_high']}; give one of them (with {names['rate']} and the mean lengths), or leave "
            "it out"
        )


def check_high_lengths(
    prompt_tokens_high: int | None,
    output_tokens_high: int | None,
    prompt_tokens: float | None,
    output_tokens: float | None,
    percentile: float,
    at_rate: bool,
    by: str = "percentile",
    names: dict[str, str] = PLAN_NAMES,
) -> None:
    """The high prompt / output lengths, each where given: only at a rate with its mean length (``at_rate``: a rate
    with the mean lengths, not a dataset's or a trace's lengths), at least that mean, and at a high ``percentile``
    (``HIGH_PERCENTILES``: the length at it, as a review's high_percentile; ``by``: the key in ``names`` of what set
    it, "length_percentile" or "percentile"); else ``InvalidInputError`` naming the value (``names``: plan's options
    by default) and the way out."""
    highs = {"prompt_tokens_high": (prompt_tokens_high, prompt_tokens, "prompt_tokens"),
             "output_tokens_high": (output_tokens_high, output_tokens, "output_tokens")}  # fmt: skip
    for key, (high, mean, of) in highs.items():
        if high is None:
            continue
        name = names[key]
        if not at_rate:
            raise InvalidInputError(
                f"{name} spreads the lengths under load; give {names['rate']} and {names[of]} with it"
            )
        if high < mean:
            raise InvalidInputError(
                f"{name} {high:,} is below {names[of]} {mean:,g}; the high-percentile length is at least the mean"
            )
        if float(percentile) not in HIGH_PERCENTILES:
            raise InvalidInputError(
                f"{name} is the length at {names[by]}, which must then be a high one: "
                f"{', '.join(f'{q:g}' for q in HIGH_PERCENTILES)} (a review's high_percentile)"
                + (
                    f"; {names['length_percentile']} sets it apart from the targets' {names['percentile']}"
                    if by == "percentile"
                    else ""
                )
            )


def sized_lengths(
    prompt_tokens: int,
    output_tokens: int,
    prompt_tokens_high: int | None,
    output_tokens_high: int | None,
    length_percentile: float,
    percentile: float,
    max_tokens: float,
) -> list[tuple[int, int]] | None:
    """The requests a fleet sized at ``percentile`` is simulated with, where a high length is given: each request's
    (prompt, output) drawn around the means (whole tokens) at ``length_percentile`` (``spread_lengths``: a lognormal
    truncated at the high lengths' sum, past the lognormal's reach a two-part mixture within it, seeded),
    ``sizing_requests(percentile)`` of them (5,000 at p99), capped at ``max_tokens`` (the context the model admits);
    None where no high length is given or both equal their means (every request at the means). ``LongTailError`` where
    no fit holds a high length."""
    if prompt_tokens_high is None and output_tokens_high is None:
        return None
    return spread_lengths(
        prompt_tokens, prompt_tokens_high or prompt_tokens, output_tokens, output_tokens_high or output_tokens,
        length_percentile, sizing_requests(float(percentile)), max_tokens,
    )  # fmt: skip
