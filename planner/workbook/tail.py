"""The Inputs' latency percentile and high lengths as ``planner plan --rate`` takes them (``Tail``), checked as plan
checks its options (``tail_of``), and each request's prompt (``prompt_of``): what the Load sheet simulates and the
workbook reader checks, kept apart from the Load sheet's figures so the reader needs none of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from planner.catalog import Catalog
from planner.serving.length_options import (
    check_high_lengths,
    check_length_percentile,
    length_percentile_of,
    sized_lengths,
)
from planner.workbook.layout import BUDGET_FIELDS, DEFAULT_PERCENTILE, LENGTH_KEYS

#: The percentile the sheet reports beside the median, and sizes the "needed" replicas on, where the Inputs' latency
#: percentile is blank: ``planner export``'s default (``Workload.high_percentile``) and ``planner plan``'s
#: ``--percentile``, so that all three size the same fleet for the same traffic and targets.
HIGH_PERCENTILE = DEFAULT_PERCENTILE


def _number(value: Any) -> float | None:
    """An optional numeric input: None when blank or not a positive number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        return None
    return float(value)


def prompt_of(inputs: dict[str, Any]) -> int | None:
    """Each request's prompt (Calc's prompt row): the Inputs' prompt tokens, else context - output tokens (what the
    context leaves beside the output, as the Load sheet and ``planner export`` always sent it); None without output
    tokens or a prompt."""
    typed, output = _number(inputs.get("prompt_tokens")), _number(inputs.get("output_tokens"))
    if typed is not None:
        return int(typed)
    if output is None or not isinstance(inputs.get("context"), (int, float)):
        return None
    return int(inputs["context"]) - int(output)


@dataclass(frozen=True)
class Tail:
    """The percentile the targets hold at (``percentile``) and the high lengths at ``length_percentile``, as
    ``planner plan --rate`` takes them (``--percentile``, ``--prompt-tokens-high``, ``--output-tokens-high``,
    ``--length-percentile``); the defaults: p95, every request at the means."""

    percentile: float = HIGH_PERCENTILE
    length_percentile: float = HIGH_PERCENTILE
    prompt_tokens_high: int | None = None
    output_tokens_high: int | None = None

    def lengths(self, key: str, prompt: int, output: int, max_tokens: float) -> list[tuple[int, int]] | None:
        """A scenario's requests (``sized_lengths``, plan's draw): around its prompt and the output tokens; the
        Prompt-halved lever's high prompt halved with its mean (at least that mean)."""
        high = self.prompt_tokens_high
        if key == "context_half" and high is not None:
            high = max(prompt, high // 2)
        return sized_lengths(
            prompt, output, high, self.output_tokens_high, self.length_percentile, self.percentile, max_tokens
        )


#: How a refusal of the Inputs' percentile or high lengths names them (their labels; ``check_high_lengths``).
CELL_NAMES = {
    **{f.key: f"the Inputs' {f.label}" for f in BUDGET_FIELDS},
    "rate": "the Inputs' Peak traffic",
    "percentile": "the Inputs' Latency percentile",
}


#: How ``build_whatif`` names them: the Inputs' keys, as its ``inputs`` and a scenario's [workload] take them.
KEY_NAMES = {**{k: k for k in (*LENGTH_KEYS, "prompt_tokens", "output_tokens")}, "rate": "peak_requests_per_s"}
KEY_NAMES["percentile"] = "latency_percentile"


def tail_of(inputs: dict[str, Any], names: dict[str, str] = CELL_NAMES, catalog: Catalog | None = None) -> Tail:
    """The Inputs' ``Tail`` (blank latency percentile: 95; blank length percentile: the latency one), checked as
    ``planner plan`` checks its options (``check_length_percentile``, ``check_high_lengths``; ``names``: how the
    message names each value, the Inputs' labels by default, ``PLAN_NAMES`` for plan's options), the highs against
    the means the Load sheet simulates (``prompt_of``, the output tokens). With ``catalog``, the baseline's requests
    drawn once (``sized_lengths``, as plan draws them: its ``LongTailError`` where no lognormal fit holds a high
    length). Raises their InvalidInputError."""
    q = float(inputs.get("latency_percentile") or HIGH_PERCENTILE)
    lq = inputs.get("length_percentile")
    highs = [None if inputs.get(k) is None else int(inputs[k]) for k in ("prompt_tokens_high", "output_tokens_high")]
    check_length_percentile(lq, *highs, names=names)
    output, prompt = _number(inputs.get("output_tokens")), prompt_of(inputs)
    at_rate = output is not None and prompt is not None and _number(inputs.get("peak_requests_per_s")) is not None
    by = "percentile" if lq is None else "length_percentile"
    check_high_lengths(*highs, prompt, output, length_percentile_of(q, lq), at_rate=at_rate, by=by, names=names)
    tail = Tail(q, length_percentile_of(q, lq), *highs)
    if catalog is not None and at_rate and any(h is not None for h in highs):
        tail.lengths("base", int(prompt), int(output), catalog.model(inputs["model"]).max_context)
    return tail
