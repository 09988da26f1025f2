"""Reading figures stated in README.md and docs/ for the tests that compare them with what the code gives
(issue 26: every figure in the docs checked by a test)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


def stated(doc: str, pattern: str) -> tuple:
    """The groups of ``pattern`` in ``doc`` (a path under the repository; exactly one match; line breaks and runs of
    spaces read as one space), numbers as ints ("four" -> 4, "1,205" -> 1205), other text as it stands ("0.300")."""
    hits = re.findall(pattern, " ".join((ROOT / doc).read_text(encoding="utf-8").split()))
    assert len(hits) == 1, f"{doc}: {pattern!r} matches {len(hits)} times; update the test with the text"
    groups = hits[0] if isinstance(hits[0], tuple) else (hits[0],)
    return tuple(_number(g) for g in groups)


def _number(text: str) -> int | str:
    if text in WORDS:
        return WORDS[text]
    return int(text.replace(",", "")) if text.replace(",", "").isdigit() else text
