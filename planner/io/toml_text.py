"""Reading TOML that users write (scenarios, catalogs, calibration files) without a traceback on any input."""

from __future__ import annotations

import re
import tomllib

from planner.io.limits import MAX_TOML_KEY_PARTS

# What the key scan looks at: strings and comments (skipped whole), dots, and what ends a dotted key.
_TOKENS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|\.|[=\[\]{},\n]',
    re.DOTALL,
)


def longest_dotted_key(text: str) -> tuple[int, int]:
    """(parts, line) of the longest dotted key in TOML ``text`` (``a.b.c = 1``: 3), strings and comments skipped.

    One linear pass with a regular expression: dots outside strings are counted until ``=``, a bracket, a
    brace, a comma or a line break ends the key. A number such as ``1.5`` counts as two parts.
    """
    best, best_line, run, line = 0, 1, 0, 1
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok == ".":
            run += 1
            if run + 1 > best:
                best, best_line = run + 1, line
            continue
        if tok[0] in "\"'":
            line += tok.count("\n")
            continue
        if tok[0] != "#":
            run = 0
            line += tok == "\n"
    return best, best_line


def loads_toml(text: str) -> dict:
    """``tomllib.loads``; arrays or tables nested deeper than the parser can recurse are a TOMLDecodeError too.

    tomllib parses nested values recursively, so about 500 levels of ``[[[...]]]`` raise RecursionError; and its
    work grows with the square of a dotted key's parts (a 200 kB key of 100,000 parts took 23 GB), so a key
    of more than ``MAX_TOML_KEY_PARTS`` parts is refused before parsing.
    """
    parts, line = longest_dotted_key(text)
    if parts > MAX_TOML_KEY_PARTS:
        raise tomllib.TOMLDecodeError(
            f"a dotted key of {parts:,} parts at line {line}; keys have at most {MAX_TOML_KEY_PARTS} parts"
        )
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deeply") from None


def toml_repr(value: object, limit: int = 40) -> str:
    """A short, one-line rendering of a value a user wrote, for error messages: ``true``, ``inf``, ``'80 GB'``.

    Never longer than ``limit`` characters and never a raw control character (a NUL is shown as ``\\x00``).
    """
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, (dict, list, tuple)):
        text = {dict: "a table", list: "an array", tuple: "an array"}[type(value)]
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
