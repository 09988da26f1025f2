"""Columns of a decode CSV and keys of a benchmark client's result that ``planner validate`` does not read.

A column the reader does not know is dropped from every row; when it was a misspelt figure (``ttft_p99ms`` for
``ttft_p99_ms``) the figure leaves the table, and a FAIL can turn into a PASS (trial 15 F2). Each such column or key
is an ``Unread``: named with the closest name the reader does read, and marked ``judged`` where the verdict of
``validate --check`` would have covered it had it been spelt right (a figure, or a likely misspelling of a read
column), so that --check refuses the file instead of passing it without it.

What is known, and so never named here:

- a decode CSV's columns: ``published.DECODE_READ_COLUMNS`` (read), ``published.DECODE_KEPT_COLUMNS`` (the shipped
  files' columns left unread on purpose: ``quote``, ``num_gpus`` ...) and ``published.OTHER_STATISTIC_COLUMN``
  (ttft_p95_ms: a known statistic, not compared, named in validate's own note);
- a result file's keys: only keys that look like a figure (``looks_like_figure``) are considered, since the clients
  write many that are legitimately not read (``date``, ``tokenizer_id``, ``duration``, ``--metadata`` pairs); of
  those, the read ones (``serving_results.FIGURE_KEYS``) and the known unread ones
  (``serving_results.KNOWN_STATISTIC_KEY``, ``serving_results.KNOWN_UNREAD_FIGURE_KEYS``) are not named.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from planner.accuracy.published import DECODE_KEPT_COLUMNS, DECODE_READ_COLUMNS, OTHER_STATISTIC_COLUMN
from planner.accuracy.serving_results import FIGURE_KEYS, KNOWN_STATISTIC_KEY, KNOWN_UNREAD_FIGURE_KEYS

#: The words of a name that holds a latency or a throughput (matched whole, between underscores or other
#: punctuation, with a plural "s": "ttfts"), as the clients and the decode columns name them.
FIGURE_WORDS = frozenset({"ttft", "tpot", "itl", "e2el", "e2e", "latency", "throughput"})

#: How alike (``difflib.SequenceMatcher.ratio``, case ignored) a name must be to a read one to be taken as its
#: misspelling: ttft_p99ms / ttft_p99_ms 0.95, ttft_medain_ms / ttft_median_ms 0.93, tpot_p99 / tpot_p99_ms 0.84,
#: kv_cache_dtpye / kv_cache_dtype 0.93; not date / dataset (0.73) or model_name / model (0.67).
MISSPELLING_RATIO = 0.75


@dataclass(frozen=True)
class Unread:
    """A column (or key) that is not read: its ``name``, the read name it most looks like (``closest``, "" when
    none is alike), and whether ``validate --check``'s verdict would have covered it (``judged``: a figure, or a
    misspelling of a read column)."""

    name: str
    closest: str
    judged: bool

    def warning(self, what: str, where: str) -> str:
        """ "unknown column 'ttft_p99ms' in runs.csv, not read; did you mean ttft_p99_ms?" """
        hint = f"; did you mean {self.closest}?" if self.closest else ""
        return f"unknown {what} {self.name!r} in {where}, not read{hint}"


def refusal(unread: Iterable[Unread], what: str, where: str) -> str:
    """The one line ``validate --check`` refuses a file with, naming its ``judged`` unread columns (or keys):
    "runs.csv: unknown column 'ttft_p99ms' (did you mean ttft_p99_ms?): --check would judge the file without it; ..."
    """
    judged = [u for u in unread if u.judged]
    names = ", ".join(f"{u.name!r}" + (f" (did you mean {u.closest}?)" if u.closest else "") for u in judged)
    many = len(judged) > 1
    return (
        f"{where}: unknown {what}{'s' if many else ''} {names}: --check would judge the file without "
        f"{'them' if many else 'it'}; rename {'each' if many else 'it'} to a {what} validate reads, or remove "
        f"{'them' if many else 'it'}"
    )


def looks_like_figure(name: str) -> bool:
    """Whether a column or key names a latency or throughput figure: one of its words (split at anything but a letter
    or digit) is a ``FIGURE_WORDS`` word, or its plural ("medain_ttft_ms", "tpot_p99", "ttfts"; not "title")."""
    words = re.split(r"[^a-z0-9]+", name.lower())
    return any(w in FIGURE_WORDS or (w.endswith("s") and w[:-1] in FIGURE_WORDS) for w in words)


def closest(name: str, read: Iterable[str]) -> str:
    """The read name ``name`` most looks like (case ignored), at least ``MISSPELLING_RATIO`` alike; "" when none is."""
    lowered = {r.lower(): r for r in read}
    hits = difflib.get_close_matches(name.strip().lower(), lowered, n=1, cutoff=MISSPELLING_RATIO)
    return lowered[hits[0]] if hits else ""


def unknown_columns(header: Iterable[str]) -> list[Unread]:
    """The columns of a decode CSV's ``header`` that its reader does not read and does not know (module docstring),
    in file order; each ``judged`` when it looks like a figure or like a read column's misspelling. A blank column
    name (a trailing comma) is no column."""
    out = []
    for column in dict.fromkeys(str(c) for c in header if c is not None and str(c).strip()):
        if column in DECODE_READ_COLUMNS or column in DECODE_KEPT_COLUMNS or OTHER_STATISTIC_COLUMN.fullmatch(column):
            continue
        near = closest(column, DECODE_READ_COLUMNS)
        out.append(Unread(column, near, judged=bool(near) or looks_like_figure(column)))
    return out


def unknown_result_keys(results: Iterable[dict[str, Any]]) -> list[Unread]:
    """The keys of a benchmark client's results that look like a figure (``looks_like_figure``) and are neither read
    (``FIGURE_KEYS``) nor known and unread (``KNOWN_STATISTIC_KEY``, ``KNOWN_UNREAD_FIGURE_KEYS``), in file order;
    every one ``judged`` (a figure the verdict would have covered)."""
    keys = dict.fromkeys(str(k) for r in results if isinstance(r, dict) for k in r)
    return [
        Unread(k, closest(k, FIGURE_KEYS), judged=True)
        for k in keys
        if looks_like_figure(k)
        and k not in FIGURE_KEYS
        and k not in KNOWN_UNREAD_FIGURE_KEYS
        and not KNOWN_STATISTIC_KEY.fullmatch(k)
    ]
