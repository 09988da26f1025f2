"""Bounds on what planner reads, so that no file or cell makes it hang or exhaust memory.

Each bound is far above any real input (the shipped catalog's largest file is 0.1 MB, the largest published
measurements file 1.4 MB, a real scenario a few kB with a handful of options) and low enough that the work
behind it stays in seconds and megabytes. A file over its bound is refused before it is read, in one line
that names the file, its size and the bound.
"""

from __future__ import annotations

import os
from pathlib import Path

from planner.errors import InvalidInputError

#: A scenario TOML file (a real one: 2-5 kB).
MAX_SCENARIO_BYTES = 1_000_000
#: One catalog or calibration TOML file (the shipped gpus.toml: 0.1 MB).
MAX_CATALOG_FILE_BYTES = 4_000_000
#: Catalog files read from one folder.
MAX_CATALOG_FILES = 1_000
#: Entries of one kind (GPUs, models, precisions) over all catalog files.
MAX_CATALOG_ENTRIES = 2_000
#: A measurements file for validate or calibrate: CSV, benchmark JSON, vLLM log (perf_public.csv: 1.4 MB).
MAX_MEASUREMENTS_BYTES = 64_000_000
#: Rows of a measurements file that validate and calibrate evaluate.
MAX_MEASUREMENT_ROWS = 10_000  # calibrate: 18 s of CPU for 20,000 rows, 2.6 s for 2,000
#: Options in one scenario (each is sized at several traffic levels).
MAX_OPTIONS = 500
#: An xlwings config file (xlwings.conf: a few lines of "KEY","VALUE").
MAX_XLWINGS_CONFIG_BYTES = 1_000_000
#: Parts of one dotted TOML key (``a.b.c`` has 3); tomllib's work grows with the square of the count.
MAX_TOML_KEY_PARTS = 64


def _size_text(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n:,} bytes"


def read_bytes_bounded(path: str | os.PathLike, max_bytes: int, what: str) -> bytes:
    """The bytes of ``path``; InvalidInputError, before reading it all, when it holds more than ``max_bytes``.

    Reads at most ``max_bytes + 1`` bytes, so a device or pipe that never ends is refused too. OSError passes
    through for the caller to word.
    """
    with open(path, "rb") as f:
        data = f.read(max_bytes + 1)
        if len(data) > max_bytes:
            size = max(os.fstat(f.fileno()).st_size, len(data))
            more = "" if os.fstat(f.fileno()).st_size else " or more"
            raise InvalidInputError(
                f"{Path(path)}: {_size_text(size)}{more}; {what} is read up to {_size_text(max_bytes)}"
            )
    return data


def read_text_bounded(path: str | os.PathLike, max_bytes: int, what: str, encoding: str = "utf-8") -> str:
    """``read_bytes_bounded`` decoded (UnicodeDecodeError passes through)."""
    return read_bytes_bounded(path, max_bytes, what).decode(encoding)


def read_config_text(path: str | os.PathLike, max_bytes: int, what: str) -> str:
    """A small text file as editors save it: UTF-8 (with or without a BOM) or UTF-16 with its BOM (Windows Notepad's
    "Unicode"); anything else is an InvalidInputError in one line, not a UnicodeDecodeError."""
    data = read_bytes_bounded(path, max_bytes, what)
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{Path(path)}: {what} is not UTF-8 or UTF-16 text; save it as UTF-8") from None


def check_count(count: int, limit: int, what: str, where: str = "") -> None:
    """InvalidInputError when ``count`` exceeds ``limit``: '<where>: 60,000 options; at most 500 are accepted'."""
    if count > limit:
        prefix = f"{where}: " if where else ""
        raise InvalidInputError(f"{prefix}{count:,} {what}; at most {limit:,} are accepted")


__all__ = [
    "MAX_CATALOG_ENTRIES",
    "MAX_CATALOG_FILES",
    "MAX_CATALOG_FILE_BYTES",
    "MAX_MEASUREMENTS_BYTES",
    "MAX_MEASUREMENT_ROWS",
    "MAX_OPTIONS",
    "MAX_SCENARIO_BYTES",
    "MAX_TOML_KEY_PARTS",
    "MAX_XLWINGS_CONFIG_BYTES",
    "check_count",
    "read_bytes_bounded",
    "read_config_text",
    "read_text_bounded",
]
