"""``planner plan --lengths FILE``: a file of measured request lengths at a rate (trial 28 F9).

The file is read and checked by ``planner.io.lengths.read_lengths``; the simulated requests are drawn from its rows by
``planner.serving.load.resampled_lengths`` (a scenario's ``lengths_file`` takes the same two functions). Here: which
options it leaves out, its check against ``--context``, and the "lengths:" line under "Under load".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from planner.errors import InvalidInputError
from planner.export.scenario import HIGH_PERCENTILES
from planner.io.lengths import LengthSample, read_lengths
from planner.units import counted

#: The options ``--lengths`` stands in for or cannot go with, as the error names them.
LENGTHS_CONFLICTS = (
    "--prompt-tokens",
    "--output-tokens",
    "--prompt-tokens-high",
    "--output-tokens-high",
    "--dataset",
    "--trace",
)

#: ``--help`` of ``--lengths``.
LENGTHS_HELP = (
    "With --rate, instead of --prompt-tokens and --output-tokens (and their -high): measured request lengths, e.g. a "
    "gateway log's, no arrival times: a CSV with the columns prompt_tokens, output_tokens (one row a request, whole "
    "tokens of 1 or more; other columns ignored; blank lines and lines starting with # skipped). Each simulated "
    "request is a row drawn at random with replacement (seeded), its prompt and output together; arrivals as --rate "
    "and --burstiness make them. Memory's slot is the file's high prompt + high output at --percentile (p95 below "
    "p90), as a review's high lengths; every row must fit --context. A scenario's lengths_file is the same."
)


def slot_percentile(percentile: float) -> float:
    """The percentile a lengths file's high lengths (the slot memory is sized for) are taken at: ``--percentile``
    where it is a high one (``HIGH_PERCENTILES``: 90, 95, 99, as a review's high_percentile), else 95 (the
    review's default)."""
    return float(percentile) if float(percentile) in HIGH_PERCENTILES else 95.0


def plan_lengths(path: Path, rate_per_s: float | None, context: int, given: dict[str, object]) -> LengthSample:
    """``--lengths``' sample: refused (``InvalidInputError``, exit 2) with any option of ``LENGTHS_CONFLICTS`` that
    ``given`` (option -> value, None where not given) holds, without ``--rate``, or where a row is longer than
    ``context`` tokens (prompt + output: the file's line named); else the file's rows (``read_lengths``, whose
    errors name the file, the line and what is accepted)."""
    clash = [name for name in LENGTHS_CONFLICTS if given.get(name) is not None]
    if clash:
        raise InvalidInputError(
            f"--lengths {path} gives the requests' lengths; leave out {' and '.join(clash)} (give one of --lengths, "
            "--prompt-tokens and --output-tokens, --dataset, --trace)"
        )
    if rate_per_s is None:
        raise InvalidInputError(
            f"--lengths {path} is the traffic's lengths under load, with no arrival times; give --rate with it"
        )
    sample = read_lengths(path)
    if sample.longest_tokens > context:
        raise InvalidInputError(
            f"{sample.name} line {sample.longest_line}: a request of {sample.longest_tokens:,} tokens (prompt + "
            f"output), more than --context {context:,}; give --context {sample.longest_tokens:,} or more, or leave "
            "out the longer rows (recorded requests are the traffic as sent, refused whole; drawn lengths are cut to "
            "--context)"
        )
    return sample


def lengths_line(sample: LengthSample, drawn: list[tuple[int, int]], percentile: float) -> str:
    """The line under "Under load" for ``--lengths``: the file, its rows, means, high lengths and longest request,
    the slot memory is sized for, and the drawn requests' means."""
    q = slot_percentile(percentile)
    hp, ho = sample.high_tokens(q)
    d = np.asarray(drawn, dtype=float)
    return (
        f"  lengths: {counted(len(drawn), 'request')} drawn from {sample.name} ({counted(sample.rows, 'row')}, at "
        f"random with replacement, seeded; each row's prompt and output together): file means "
        f"{sample.prompt_mean_tokens:,.0f} / {sample.output_mean_tokens:,.0f}, p{q:g} {hp:,} / {ho:,} tokens, longest "
        f"{sample.longest_tokens:,} (prompt + output); drawn means {d[:, 0].mean():,.0f} / {d[:, 1].mean():,.0f}; "
        f"memory's slot p{q:g} prompt + p{q:g} output = {hp + ho:,} tokens"
    )


def lengths_as_dict(sample: LengthSample, percentile: float) -> dict:
    """``--lengths``' sample for --json: the file, rows, means, high lengths (at ``slot_percentile``), longest."""
    q = slot_percentile(percentile)
    hp, ho = sample.high_tokens(q)
    return {
        "file": sample.name,
        "rows": sample.rows,
        "prompt_mean_tokens": sample.prompt_mean_tokens,
        "output_mean_tokens": sample.output_mean_tokens,
        "high_percentile": q,
        "prompt_high_tokens": hp,
        "output_high_tokens": ho,
        "slot_tokens": hp + ho,
        "longest_tokens": sample.longest_tokens,
    }
