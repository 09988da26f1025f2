"""A file of measured request lengths: (prompt_tokens, output_tokens) a row, no arrival times (trial 28 F9).

What an SRE has from a gateway's logs is a sample of lengths, not a trace. ``read_lengths`` reads and checks one
(``planner plan --lengths FILE``, a scenario's ``lengths_file``); ``planner.serving.load.resampled_lengths`` draws
the simulated requests from its rows. The format is strict, and said in every error:

- a CSV (UTF-8, a BOM allowed) whose header names the columns ``prompt_tokens`` and ``output_tokens``; other
  columns are ignored (a trace's ``arrival_s`` too), so a trace file reads as its lengths;
- one row a request, each length a whole number of tokens, 1 or more (a thousands comma inside quotes is read:
  "1,024");
- blank lines and lines whose first character is ``#`` (comments) skipped; at least one row, at most
  ``MAX_LENGTH_ROWS``.

Every error is a ``LengthsFileError`` (an ``InvalidInputError``: the CLI prints its one line and exits 2) naming the
file, the line where one is at fault, and what is accepted.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from planner.errors import InvalidInputError
from planner.io.limits import MAX_MEASUREMENTS_BYTES, read_text_bounded

#: The columns a lengths file must have (other columns are ignored).
LENGTH_COLUMNS = ("prompt_tokens", "output_tokens")
#: The most rows a lengths file holds (as a trace: the most requests a run is simulated with).
MAX_LENGTH_ROWS = 100_000
#: What a lengths file is, as each error says it.
LENGTHS_ACCEPTED = (
    "a lengths file is a CSV with the columns prompt_tokens, output_tokens (one row a request, whole tokens of 1 or "
    "more; other columns ignored)"
)


class LengthsFileError(InvalidInputError):
    """Raised when a lengths file is missing, unreadable, empty, lacks a column or holds a length that is not a whole
    number of tokens of 1 or more; the message names the file (and the line) and what is accepted."""


@dataclass(frozen=True)
class LengthSample:
    """The rows of a lengths file: each request's prompt and output tokens (whole, 1 or more), in file order, and
    each row's line in the file (for errors that name a row, such as a request past the context)."""

    name: str
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    lines: tuple[int, ...]

    @property
    def rows(self) -> int:
        return len(self.prompt_tokens)

    @property
    def prompt_mean_tokens(self) -> float:
        return float(np.mean(self.prompt_tokens))

    @property
    def output_mean_tokens(self) -> float:
        return float(np.mean(self.output_tokens))

    def high_tokens(self, percentile: float) -> tuple[int, int]:
        """The prompt's and the output's length at ``percentile`` (numpy's linear rule), rounded up to whole tokens:
        the file's high lengths, as a scenario's prompt_tokens_high and output_tokens_high."""
        return tuple(  # type: ignore[return-value]
            int(math.ceil(np.percentile(x, percentile))) for x in (self.prompt_tokens, self.output_tokens)
        )

    def slot_tokens(self, percentile: float) -> int:
        """The sequence memory is sized for, as for lengths drawn around a mean and a high length: the high prompt +
        the high output at ``percentile`` (``planner.export.scenario.Workload.sizing_context_tokens``)."""
        return sum(self.high_tokens(percentile))

    @property
    def longest_tokens(self) -> int:
        """The longest request, prompt + output tokens."""
        return int((self.prompt_tokens + self.output_tokens).max())

    @property
    def longest_line(self) -> int:
        """The line of the (first) longest request."""
        return self.lines[int(np.argmax(self.prompt_tokens + self.output_tokens))]

    @property
    def half_second_moment_output_tokens(self) -> float:
        """E[o^2] / (2 E[o]) over the rows: the output's mean part done in flight, each request in flight in proportion
        to its output (docs/export.md "Two contexts"), the sample's own, not a fit's."""
        o = self.output_tokens.astype(float)
        return float(np.mean(o * o) / (2.0 * np.mean(o)))


def _whole_tokens(text: str) -> int | None:
    """A cell's whole number of tokens of 1 or more ("1,024" read as 1024; "800.0" as 800), else None."""
    try:
        x = float(text.replace(",", "").strip())
    except ValueError:
        return None
    return int(x) if math.isfinite(x) and x >= 1 and x.is_integer() else None


def read_lengths(path: str | Path, shown: str | None = None) -> LengthSample:
    """The rows of the lengths file at ``path`` (``shown``: how errors name it, default the path), checked as the
    module says; ``LengthsFileError`` in one line otherwise."""
    path = Path(path)
    name = shown if shown is not None else str(path)
    if not path.is_file():
        raise LengthsFileError(f"{name}: no such file; {LENGTHS_ACCEPTED}")
    try:
        text = read_text_bounded(path, MAX_MEASUREMENTS_BYTES, "a lengths file", encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise LengthsFileError(f"{name}: not UTF-8 text; save it as a UTF-8 CSV ({LENGTHS_ACCEPTED})") from None
    except InvalidInputError as exc:
        raise LengthsFileError(str(exc)) from None
    except OSError as exc:
        raise LengthsFileError(f"{name}: cannot be read ({exc.strerror or exc}); {LENGTHS_ACCEPTED}") from None
    numbered = [(n, x) for n, x in enumerate(text.splitlines(), start=1) if x.strip() and not x.startswith("#")]
    if not numbered:
        raise LengthsFileError(f"{name}: empty (no header, no rows); {LENGTHS_ACCEPTED}")
    try:
        cells = list(csv.reader(io.StringIO("\n".join(x for _, x in numbered))))
    except csv.Error as exc:
        raise LengthsFileError(f"{name}: cannot be read as CSV ({exc}); {LENGTHS_ACCEPTED}") from None
    if len(cells) != len(numbered):  # a quoted cell over several lines: no row a line
        raise LengthsFileError(f"{name}: a quoted cell runs over several lines; {LENGTHS_ACCEPTED}")
    header = [h.strip() for h in cells[0]]
    missing = [c for c in LENGTH_COLUMNS if c not in header]
    if missing:
        raise LengthsFileError(
            f"{name} line {numbered[0][0]}: no column {', '.join(missing)} in the header "
            f"({', '.join(header)[:120]}); {LENGTHS_ACCEPTED}"
        )
    at = [header.index(c) for c in LENGTH_COLUMNS]
    if len(cells) == 1:
        raise LengthsFileError(f"{name}: a header and no rows; {LENGTHS_ACCEPTED}")
    if len(cells) - 1 > MAX_LENGTH_ROWS:
        raise LengthsFileError(f"{name}: {len(cells) - 1:,} rows; a lengths file holds at most {MAX_LENGTH_ROWS:,}")
    prompts, outputs, lines = [], [], []
    for (line, _), row in zip(numbered[1:], cells[1:], strict=True):
        got = [row[i] if i < len(row) else "" for i in at]
        p, o = (_whole_tokens(x) for x in got)
        if p is None or o is None:
            col, bad = (LENGTH_COLUMNS[0], got[0]) if p is None else (LENGTH_COLUMNS[1], got[1])
            raise LengthsFileError(
                f"{name} line {line}: {col} {bad.strip()!r} is not a whole number of tokens of 1 or more; "
                f"{LENGTHS_ACCEPTED}"
            )
        prompts.append(p)
        outputs.append(o)
        lines.append(line)
    return LengthSample(name, np.asarray(prompts, dtype=np.int64), np.asarray(outputs, dtype=np.int64), tuple(lines))
