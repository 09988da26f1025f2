"""A dated SGLang build of main read as the release it ran (h-loadres, off; docs/hypotheses/sglang-dated-main-build.md).

sglang-pr-4918's rows (LD095-097) name their build "main at 2025-03-30": no version number, so the shipped reading
gives them the newest rule (sglang-0.5.20, graphed prompt steps). PyPI's upload times for ``sglang`` put that date
between 0.4.4.post3 (2025-03-29T06:21) and 0.4.5 (2025-04-07T07:35); ``SGLANG_DATED_MAIN`` reads it as 0.4.4.post3,
whose profile (the sglang-0.4.0 rule, 0.4.0-0.4.5) runs prompt steps eagerly and decode graphs to 160."""

from __future__ import annotations

import pytest

from planner.accuracy import predict
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.engines.profiles import SGLANG_HOST_LAYER_S, SGLANG_HOST_MOE_LAYER_S, sglang_prefill_host_s

LD095_CELL = (
    "main at 2025-03-30 (not a release: sgl-project/sglang PR 4918's branch run with --disable-shared-experts-fusion)"
)


def test_a_dated_main_is_the_release_uploaded_on_or_before_its_date():
    """0.4.4.post3 was uploaded 2025-03-29 and 0.4.5 2025-04-07 (PyPI), so main of 2025-03-30 ran 0.4.4.post3's code;
    an upload day is that release's."""
    assert predict.dated_main_release("sglang", LD095_CELL) == "0.4.4.post3"
    assert predict.dated_main_release("sglang", "main at 2025-04-07") == "0.4.5"
    assert predict.dated_main_release("sglang", "main at 2025-01-15") == "0.4.0"


def test_other_cells_are_not_resolved():
    """A versioned cell, another engine, a cell without a "main at" date and a date outside the 0.4 line's table keep
    today's reading."""
    assert predict.dated_main_release("sglang", "0.5.6 (the page)") is None
    assert predict.dated_main_release("vllm", "main at 2025-03-30") is None
    assert (
        predict.dated_main_release("sglang", "not logged (lmsysorg/sglang:latest, results committed 2024-12-14)")
        is None
    )
    assert predict.dated_main_release("sglang", "main at 2024-11-01") is None
    assert predict.dated_main_release("sglang", "main at 2025-09-01") is None


def _ld095():
    return next(r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id == "LD095")


def test_off_ld095_is_read_as_the_newest_rule():
    """Shipped reading: no version number, the newest rule, no eager floor on NVIDIA."""
    p = predict._profile_for(_ld095(), None)
    assert p.memory_fraction_rule == "sglang-0.5.20"
    assert sglang_prefill_host_s(p, "NVIDIA", 61, 58) == 0.0


def test_on_ld095_takes_the_04_lines_eager_prompt_steps(monkeypatch):
    """With the switch, the 0.4.0-0.4.5 rule: DeepSeek-V3's 3 dense and 58 MoE layers launched from Python, 0.29 ms and
    0.946 ms each (sgl-project/sglang PR 1401's eager steps), 55.7 ms a prompt step; decode graphs to 160."""
    monkeypatch.setattr(predict, "SGLANG_DATED_MAIN", True)
    p = predict._profile_for(_ld095(), None)
    assert p.memory_fraction_rule == "sglang-0.4.0"
    assert p.decode_graph_max_batch == 160.0
    host = sglang_prefill_host_s(p, "NVIDIA", 61, 58)
    assert host == pytest.approx(3 * SGLANG_HOST_LAYER_S + 58 * SGLANG_HOST_MOE_LAYER_S)
    assert host == pytest.approx(0.0557, abs=1e-4)
