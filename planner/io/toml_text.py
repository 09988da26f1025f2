"""Reading TOML that users write (scenarios, catalogs, calibration files) without a traceback on any input."""

from __future__ import annotations

import tomllib


def loads_toml(text: str) -> dict:
    """``tomllib.loads``; arrays or tables nested deeper than the parser can recurse are a TOMLDecodeError too.

    tomllib parses nested values recursively, so about 500 levels of ``[[[...]]]`` raise RecursionError.
    """
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
