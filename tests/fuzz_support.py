"""The tally of the hostile-input fuzz suite: inputs tried and held, per class of issue 26.

``trial(cls)`` wraps one input: it counts as held when the block ends without an assertion failing. With
``PLANNER_FUZZ_TABLE=FILE`` every trial is appended to FILE as one JSON line, which ``bench/fuzz_table.py``
turns into the table of the closing note. ``PLANNER_FUZZ_EXAMPLES=N`` multiplies the examples per class
(CI runs the default: the whole suite within a minute).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections import Counter

from hypothesis import HealthCheck, settings

TABLE_ENV = "PLANNER_FUZZ_TABLE"
TRIED: Counter = Counter()
HELD: Counter = Counter()


def examples(n: int):
    """Hypothesis settings for ``n`` examples (x PLANNER_FUZZ_EXAMPLES / 10 when set), no deadline."""
    scale = int(os.environ.get("PLANNER_FUZZ_EXAMPLES", "10")) / 10
    return settings(
        max_examples=max(1, round(n * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _record(cls: str, held: bool) -> None:
    TRIED[cls] += 1
    HELD[cls] += held
    path = os.environ.get(TABLE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"class": cls, "held": held}) + "\n")


@contextlib.contextmanager
def trial(*classes: str):
    """One input of each of ``classes``: held unless the block raises (an assertion of the law it checks)."""
    try:
        yield
    except BaseException as exc:
        if type(exc).__module__.startswith("hypothesis"):  # its own control flow (data exhausted, assume): no trial
            raise
        for cls in classes:
            _record(cls, False)
        raise
    for cls in classes:
        _record(cls, True)


def tallied(*classes: str):
    """Decorator (below ``@given``): every example of the test is one trial of ``classes``."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            with trial(*classes):
                return test(*args, **kwargs)

        return run

    return wrap
