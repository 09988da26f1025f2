"""Columns of a decode or start-up CSV and keys of a benchmark client's result that ``planner validate`` (and
``planner calibrate``) does not read.

A column the reader does not know is dropped from every row; when it was a misspelt figure (``ttft_p99ms`` for
``ttft_p99_ms``) the figure leaves the table, and a FAIL can turn into a PASS (trial 15 F2). Each such column or key
is an ``Unread``: named with the closest name the reader does read, and marked ``judged`` where the verdict of
``validate --check`` would have covered it had it been spelt right (a figure, or a likely misspelling of a read
column), so that --check refuses the file instead of passing it without it.

What is known, and so never named here:

- a decode CSV's columns: ``published.DECODE_READ_COLUMNS`` (read), ``published.DECODE_COLUMN_ALIASES`` (read as the
  column each names: vLLM's ``mean_ttft_ms``, ``ttft_mean_ms``), ``published.DECODE_KEPT_COLUMNS`` (the shipped
  files' columns left unread on purpose: ``quote``, ``num_gpus`` ...) and ``published.OTHER_STATISTIC_COLUMN``
  (ttft_p95_ms: a known statistic, not compared, named in validate's own note), and the clients' own names of such
  figures (``mean_itl_ms``, ``request_throughput``: ``known_unread_figure``);
- a start-up (``validate --memory``) CSV's columns: ``predict.STARTUP_READ_COLUMNS`` (read) and
  ``predict.STARTUP_KEPT_COLUMNS`` (the shipped files' columns left unread on purpose: ``notes``, ``quote``, the
  log's other figures ...); an unknown one is ``judged`` where it is a read column's misspelling or names a figure
  the memory table compares (``STARTUP_FIGURE_WORDS``: "kv", "concurrency"), and is then named with the figure
  column it shares the most words with where no read column is alike;
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

from planner.accuracy.predict import STARTUP_FIGURE_COLUMNS, STARTUP_KEPT_COLUMNS, STARTUP_READ_COLUMNS
from planner.accuracy.published import (
    DECODE_COLUMN_ALIASES,
    DECODE_KEPT_COLUMNS,
    DECODE_READ_COLUMNS,
    OTHER_STATISTIC_COLUMN,
)
from planner.accuracy.serving_results import FIGURE_KEYS, KNOWN_STATISTIC_KEY, KNOWN_UNREAD_FIGURE_KEYS

#: The words of a name that holds a latency or a throughput (matched whole, between underscores or other
#: punctuation, with a plural "s": "ttfts"), as the clients and the decode columns name them.
FIGURE_WORDS = frozenset({"ttft", "tpot", "itl", "e2el", "e2e", "latency", "throughput"})
#: The words of a start-up CSV's column that names a figure the memory table compares: vLLM's log lines "Available
#: KV cache memory", "GPU KV cache size" and "Maximum concurrency" (``kv_cache_gib``, ``kv_tokens``, ``concurrency``).
STARTUP_FIGURE_WORDS = frozenset({"kv", "concurrency"})

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


def refusal(
    unread: Iterable[Unread],
    what: str,
    where: str,
    without: str = "--check would judge the file",
    reader: str = "validate",
) -> str:
    """The one line a file is refused with, naming its ``judged`` unread columns (or keys) and what would have gone on
    ``without`` them (validate --check's verdict; calibrate's fit: ``without``, ``reader``): "runs.csv: unknown column
    'ttft_p99ms' (did you mean ttft_p99_ms?): --check would judge the file without it; ..."
    """
    judged = [u for u in unread if u.judged]
    names = ", ".join(f"{u.name!r}" + (f" (did you mean {u.closest}?)" if u.closest else "") for u in judged)
    many = len(judged) > 1
    return (
        f"{where}: unknown {what}{'s' if many else ''} {names}: {without} without "
        f"{'them' if many else 'it'}; rename {'each' if many else 'it'} to a {what} {reader} reads, or remove "
        f"{'them' if many else 'it'}"
    )


def looks_like_figure(name: str, figure_words: frozenset[str] = FIGURE_WORDS) -> bool:
    """Whether a column or key names a figure: one of its words (split at anything but a letter or digit) is one of
    ``figure_words`` (latency and throughput words unless given), or its plural ("medain_ttft_ms", "tpot_p99",
    "ttfts"; not "title")."""
    words = _words(name)
    return any(w in figure_words or (w.endswith("s") and w[:-1] in figure_words) for w in words)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]


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
    read = DECODE_READ_COLUMNS | set(DECODE_COLUMN_ALIASES)  # vLLM's mean_ttft_ms is read (trial 29 F8)
    for column in _named(header):
        if column in read or column in DECODE_KEPT_COLUMNS or known_unread_figure(column):
            continue
        near = closest(column, read) or with_unit(column, read)
        out.append(Unread(column, near, judged=bool(near) or looks_like_figure(column)))
    return out


def known_unread_figure(column: str) -> bool:
    """Whether a decode CSV's column is a known figure that is not compared: another statistic of a compared latency
    as planner names it (``ttft_p75_ms``, ``itl_mean_ms``: ``OTHER_STATISTIC_COLUMN``) or as the clients name it
    (``mean_itl_ms``, ``std_ttft_ms``: ``KNOWN_STATISTIC_KEY``), or another throughput a client writes
    (``request_throughput``: ``KNOWN_UNREAD_FIGURE_KEYS``). ``planner validate`` names these in a note."""
    if column in DECODE_COLUMN_ALIASES:
        return False
    return bool(
        OTHER_STATISTIC_COLUMN.fullmatch(column)
        or KNOWN_STATISTIC_KEY.fullmatch(column)
        or column in KNOWN_UNREAD_FIGURE_KEYS
    )


def with_unit(name: str, read: Iterable[str]) -> str:
    """The read column that is ``name`` with its unit added ("tpot": tpot_ms), "" when none is: a figure written
    without its unit is too short to be alike (``MISSPELLING_RATIO``) to its column."""
    lowered = {r.lower(): r for r in read}
    return next((lowered[f"{name.lower()}_{u}"] for u in ("ms", "s", "tok_s") if f"{name.lower()}_{u}" in lowered), "")


def unknown_startup_columns(header: Iterable[str]) -> list[Unread]:
    """The columns of a start-up CSV's ``header`` (``validate --memory``) that its reader does not read and does not
    know, in file order: each named with the read column it most looks like, else, where it names a compared figure
    (``STARTUP_FIGURE_WORDS``), the figure column it shares the most words with (``kv_cache_gibb``:
    available_kv_cache_memory_gib); ``judged`` in either case. A blank column name is no column."""
    out = []
    for column in _named(header):
        if column in STARTUP_READ_COLUMNS or column in STARTUP_KEPT_COLUMNS:
            continue
        near = closest(column, STARTUP_READ_COLUMNS)
        figure = looks_like_figure(column, STARTUP_FIGURE_WORDS)
        if not near and figure:
            near = most_words_shared(column, STARTUP_FIGURE_COLUMNS)
        out.append(Unread(column, near, judged=bool(near) or figure))
    return out


def most_words_shared(name: str, columns: Iterable[str]) -> str:
    """The one of ``columns`` that has the most words alike (``MISSPELLING_RATIO``: gibb / gib) to ``name``'s; ""
    where none shares a word or two share the most."""
    words = _words(name)

    def shared(column: str) -> int:
        theirs = _words(column)
        return sum(any(difflib.SequenceMatcher(None, w, t).ratio() >= MISSPELLING_RATIO for t in theirs) for w in words)

    counts = sorted(((shared(c), c) for c in columns), reverse=True)
    if not counts or counts[0][0] == 0 or (len(counts) > 1 and counts[1][0] == counts[0][0]):
        return ""
    return counts[0][1]


def _named(header: Iterable[str]) -> list[str]:
    """A header's column names as written, once each, blanks (a trailing comma) left out."""
    return list(dict.fromkeys(str(c) for c in header if c is not None and str(c).strip()))


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
