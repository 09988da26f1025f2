"""The engine release a measurement row is predicted with, where the row does not state one.

A row's release decides parts of its prediction (``planner.accuracy.predict._profile_for``): vLLM's host loop above
all, synchronous before 0.14 (59 us a sequence, added to the step) and asynchronous from it (21.5 us a sequence,
hidden behind the step; ``planner.engines.profiles.with_vllm_host_loop``). A row states its release in its
``engine_version`` column, in its ``engine`` cell ("vllm==0.15.0", ``published.release_in_engine_cell``) or, in a
``vllm bench serve`` result, through ``--metadata engine_version=X``. Where it states none:

- the shipped reference rows (``catalogs/reference/``) keep the reading their sources' dates give them: every such
  published vLLM row predates 0.14, so it runs the synchronous loop (held-out figures are computed so);
- a release given on validate's ``--engine`` ("vllm==0.15.0", ``engine_release``) stands for the release of every row
  of that engine that states none (``with_release``);
- a user's own file's vLLM rows (``planner validate --decode FILE``) are predicted as ``planner plan`` predicts: with
  the release the bare ``vllm`` profile models (``PLAN_VLLM_RELEASE``; ``assume_plan_release``), and validate says so
  on standard error (``assumed_release_note``).

Pure functions over ``DecodeRow``s; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from planner.accuracy.published import DecodeRow, _engine_name, release_in_engine_cell
from planner.engines.profiles import (
    ENGINE_ALIASES,
    ENGINES,
    NEWEST_LOGGED_VLLM,
    engine_profile,
    parse_version,
    vllm_batching_release,
)

#: The vLLM release a plan with the bare name ``vllm`` models: the newest release whose start-up logs the ``vllm``
#: profile was fitted to (12 vLLM 0.19.0 logs, ``profiles.VLLM_VERSION_PROFILES``), past 0.14, so with the
#: asynchronous host loop. ``engine_for_version("vllm", PLAN_VLLM_RELEASE)`` is ``engine_profile("vllm")`` field for
#: field (tests/test_trial10_validate.py checks it).
PLAN_VLLM_RELEASE = ".".join(map(str, NEWEST_LOGGED_VLLM))


def states_release(row: DecodeRow) -> bool:
    """Whether the row states its engine's release: a version number in its ``engine_version`` (or ``engine``) cell,
    or a cell that marks vLLM's V0 engine ("VLLM_USE_V1=0", ``vllm_batching_release``)."""
    text = row.engine_version
    return parse_version(text) is not None or (row.engine == "vllm" and bool(vllm_batching_release(text)[0]))


def engine_release(engine: str | None) -> tuple[str, str] | None:
    """(engine, release) of an ``--engine`` value that names a release ("vllm==0.15.0": ("vllm", "0.15.0"), the
    engine as a row's ``engine`` cell is read); None for a profile name ("vllm", "sglang-0.4") or None."""
    text = str(engine or "").strip()
    key = text.lower().replace("_", "-").replace(" ", "-")
    if key in ENGINES or key in ENGINE_ALIASES or not (version := release_in_engine_cell(text)):
        return None  # a profile's own name ("vllm-0.10", "sglang-0.4"), or no release
    engine_profile(text)  # an engine no profile has: UnknownNameError, as --engine's own check
    name, _ = _engine_name(text)
    return name, version


def with_release(rows: Sequence[DecodeRow], engine: str, version: str) -> tuple[list[DecodeRow], list[str]]:
    """``rows`` with ``version`` as the release of each row of ``engine`` that states none (``states_release``), and
    the record IDs of those rows."""
    out, given = [], []
    for r in rows:
        if r.engine == engine and not states_release(r):
            r = replace(r, engine_version=version)
            given.append(r.record_id)
        out.append(r)
    return out, given


def assume_plan_release(rows: Sequence[DecodeRow]) -> tuple[list[DecodeRow], list[str]]:
    """A user's rows with ``PLAN_VLLM_RELEASE`` as the release of each vLLM row that states none: predicted as
    ``planner plan`` predicts the same run (its ``vllm`` profile, asynchronous host loop), and the IDs of those rows."""
    return with_release(rows, "vllm", PLAN_VLLM_RELEASE)


def assumed_release_note(where: str, ids: Sequence[str], result_file: bool) -> str:
    """The note validate prints where it assumed ``PLAN_VLLM_RELEASE`` for rows of ``where`` (one line): which rows,
    what it means, and the three ways to state another release."""
    shown = ", ".join(ids[:4]) + (f" and {len(ids) - 4} more" if len(ids) > 4 else "")
    state = (
        "vllm bench serve --metadata engine_version=X in the run"
        if result_file
        else "an engine_version column (or vllm==X in the engine cell)"
    )
    return (
        f"{where}: {len(ids)} vLLM run{'s' if len(ids) != 1 else ''} state{'' if len(ids) != 1 else 's'} no release "
        f"({shown}); predicted as vLLM {PLAN_VLLM_RELEASE}, the release planner plan models (asynchronous host loop "
        f"from 0.14: 21.5 us a sequence, hidden behind the step); to state another, give {state}, or --engine vllm==X"
    )
