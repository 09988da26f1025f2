"""The exceptions `planner` raises, drawn once.

    PlannerError                 base: every error a user can cause
    ├── UnknownNameError         a GPU, model, precision or engine name not in the catalog (+ closest names)
    ├── InvalidInputError        a value of the wrong kind (+ what is accepted)
    │   ├── OutOfRangeError      a number of the right kind outside what makes sense (+ the range)
    │   │   └── NoFleetMeetsError  latency targets no number of replicas meets (+ what an idle replica reaches)
    │   └── MissingDataError     the catalog lacks a number the question needs (e.g. a price)
    ├── DoesNotFitError          a configuration whose weights (or one sequence) do not fit in memory
    ├── CatalogError             a catalog file or entry that does not validate (file, entry, field, problem)
    │   └── EmptyCatalogFolderError  a catalog folder that holds no *.toml file (a wrong folder named)
    ├── OutputExistsError        a file that would be overwritten without --force
    └── WriteError               a file the system would not let us write (read-only folder, name too long, ...)

Each surface translates them: the CLI prints one line and exits 2 (bad usage) or 1 (failure); the Excel
functions return #N/A, #VALUE! or #NUM!.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable


class PlannerError(Exception):
    """Base class; ``str(error)`` is a complete, user-facing sentence."""

    #: The Excel error value a spreadsheet function shows for this error.
    excel_error = "#VALUE!"
    #: The CLI exit code: 2 for bad usage, 1 for a failure.
    exit_code = 1


class UnknownNameError(PlannerError, KeyError):
    """Raised when a GPU, model, precision or engine name matches no catalog entry or alias."""

    excel_error = "#N/A"
    exit_code = 2

    def __init__(self, kind: str, name: object, known: Iterable[str], same: Callable[[str], object] | None = None):
        self.kind, self.name = kind, name
        known = sorted(set(known), key=lambda k: (k.lower(), k))  # ties by case too: the same order every run
        self.suggestions = closest_names(str(name), known)
        if same is not None:  # one name per entry, the names holding every typed word next (trial 32 F4: "rtx 6000"
            # gave RTX A6000 first and no RTX PRO 6000; now RTX 6000 Ada, RTX PRO 6000 SE, RTX PRO 6000 WS)
            near = closest_names(str(name), known, n=12)
            words = str(name).lower().split()
            holding = sorted((k for k in known if words and set(words) <= set(k.lower().split())), key=len)
            order = list(dict.fromkeys([*(k for k in near if _prefixed(str(name), k)), *holding, *near]))
            firsts = {same(s): s for s in reversed(order)}
            self.suggestions = list(dict.fromkeys(firsts[same(s)] for s in order))[:3]
        first = bit_width_precision(str(name), known) if kind == "precision" else None
        if first is not None:  # "8-bit": fp8 first, the 8-bit format KV caches and weights are served in (trial 30 F8)
            self.suggestions = [first, *(s for s in self.suggestions if s != first)][:3]
        hint = f"did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        if isinstance(name, bytes):  # an 'S' array (h5py, np.loadtxt): names are text
            hint = "names must be text (str), not bytes: decode them first (array.astype(str), series.str.decode())"
        listing = "" if hint else f"known: {', '.join(known[:12])}{', ...' if len(known) > 12 else ''}"
        super().__init__(f"unknown {kind} {shown_name(name)}; {hint or listing}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class InvalidInputError(PlannerError, ValueError):
    """Raised when an argument has the wrong type or lies outside what is accepted."""

    excel_error = "#VALUE!"
    exit_code = 2


class UnknownKeywordError(PlannerError, TypeError):
    """Raised when a Python function gets a keyword argument it does not take: the message names the nearest one it
    takes and lists them all (its own keywords first, then its options); a ``TypeError`` too, as Python raises."""

    excel_error = "#VALUE!"
    exit_code = 2


class OutOfRangeError(InvalidInputError):
    """Raised when a number is of the right kind but outside what makes sense (context 0, utilization 1.5)."""

    excel_error = "#NUM!"


class NoFleetMeetsError(OutOfRangeError):
    """Raised when no number of replicas (up to the search's limit) meets latency targets. ``idle_misses``: the
    targets that one request alone on an idle replica already misses (``planner.serving.fleet.IdleMiss``), which no
    number of replicas can meet; empty where the fleet needed is past the search's limit instead."""

    def __init__(self, message: str, idle_misses: tuple = ()):
        self.idle_misses = tuple(idle_misses)
        super().__init__(message)


class MissingDataError(InvalidInputError):
    """Raised when the catalog has no value for something the question needs (a GPU without a price)."""

    excel_error = "#N/A"


class DoesNotFitError(PlannerError, ValueError):
    """Raised when weights plus one sequence of KV cache do not fit on the GPUs given."""

    excel_error = "#NUM!"
    exit_code = 1

    def __init__(self, message: str, shortfall_bytes: float | None = None, smallest_gpus: int | None = None):
        self.shortfall_bytes = shortfall_bytes
        self.smallest_gpus = smallest_gpus
        super().__init__(message)


class CatalogError(PlannerError):
    """Raised when a catalog file cannot be read or an entry does not validate."""

    exit_code = 2  # the user's file is bad input


class EmptyCatalogFolderError(CatalogError):
    """Raised when a catalog folder (``--catalog``, ``$PLANNER_CATALOG``, the xlwings config, =PLANNER_RELOAD) holds
    no ``*.toml`` file: nothing would be read from it, so the folder named is most likely the wrong one."""

    def __init__(self, folder: object):
        self.folder = folder
        super().__init__(
            f"{folder}: no *.toml catalog files in this folder; give the folder that holds your *.toml catalog files "
            "(with [[gpu]], [[model]] or [[precision]] tables)"
        )


class OutputExistsError(PlannerError):
    """Raised when writing would overwrite an existing file and overwriting was not asked for."""

    exit_code = 1


class WriteError(PlannerError):
    """Raised when the operating system refuses a write (read-only folder, path below a file, name too long)."""

    exit_code = 1


#: Characters of a name an error message quotes; a longer one (a pasted paragraph) is cut there, its length said.
SHOWN_NAME_CHARS = 60


def shown_name(value: object) -> str:
    """A value as an error message quotes it, the one rule every surface uses: text as ``repr`` writes it (in quotes,
    ``'H10'``), any other value as Python writes it (``1e+300``, ``True``); over ``SHOWN_NAME_CHARS`` characters, its
    start, "..." and its length: ``'ééé...' (5,000 characters)``, so a message stays one readable line (and fits an
    Excel cell)."""
    if isinstance(value, str):
        if len(value) <= SHOWN_NAME_CHARS:
            return repr(value)
        return f"{value[:SHOWN_NAME_CHARS] + '...'!r} ({len(value):,} characters)"
    text = repr(value)
    if len(text) <= SHOWN_NAME_CHARS:
        return text
    return f"{text[:SHOWN_NAME_CHARS]}... ({len(text):,} characters)"


def typed_name(given: object, canonical: str) -> str:
    """A name as the user typed it, quoted, with the catalog's name it was read as when they differ: ``'fp4' (read
    as nvfp4)``; an entry given (not text) or the canonical name itself: just ``'nvfp4'``. Errors about a name the
    user gave quote it this way, so the message echoes their input rather than an alias's resolution."""
    if isinstance(given, str) and given != canonical:
        return f"{shown_name(given)} (read as {canonical})"
    return shown_name(canonical)


#: The precision a bare bit width names first among its formats ("8-bit": fp8, not w8a8-int8 or gptq-8bit, which
#: difflib finds nearer): the one planner reads the bit width as elsewhere (fp8 KV cache, bf16 weights).
BIT_WIDTH_PRECISIONS = {8: "fp8", 16: "bf16", 4: "int4"}


def bit_width_precision(name: str, known: Iterable[str]) -> str | None:
    """The precision ``BIT_WIDTH_PRECISIONS`` names for a bare bit width ("8-bit", "8 bit", "8bit", "8 bits"), where
    ``known`` has it; None for any other name."""
    match = re.fullmatch(r"\s*(\d+)\s*[-_ ]?\s*bits?\s*", name, re.IGNORECASE)
    first = BIT_WIDTH_PRECISIONS.get(int(match.group(1))) if match else None
    return first if first is not None and first in set(known) else None


def _prefixed(name: str, known: str) -> bool:
    """Whether one of ``name`` and ``known`` begins the other (case-insensitive), ``closest_names``' first rule."""
    a, b = name.strip().lower(), known.lower()
    return bool(a) and (b.startswith(a) or a.startswith(b))


def closest_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Up to ``n`` known names that look like ``name`` (case-insensitive, prefix matches first)."""
    known = list(known)
    lowered = {k.lower(): k for k in known}
    key = name.strip().lower()
    hits = difflib.get_close_matches(key, lowered, n=n, cutoff=0.5)
    if key:
        prefixed = [k for k in lowered if k.startswith(key) or key.startswith(k)]
        hits = list(dict.fromkeys(sorted(prefixed, key=len)[:n] + hits))[:n]
    return [lowered[h] for h in hits]
