"""A chat endpoint's template tokens on each prompt, beyond what ``vllm bench serve`` counts (h-r2; off as shipped:
docs/hypotheses/chat-template-tokens.md)."""

from __future__ import annotations

import pytest

from planner.accuracy import datasets
from planner.accuracy.predict import load_decode_rows


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in load_decode_rows()}


@pytest.fixture
def switched_on(monkeypatch):
    monkeypatch.setattr(datasets, "CHAT_TEMPLATE_ON", True)


def test_off_as_shipped(rows):
    """Off (the experiment was not shipped): no row's prompts change."""
    assert datasets.CHAT_TEMPLATE_ON is False
    assert datasets.chat_template_tokens(rows["GPUSTACK-166"]) == 0


def test_qwen3_chatml_adds_eight_tokens_to_a_chat_run(rows, switched_on):
    """gpustack's Qwen3-14B run (``vllm bench serve --backend openai-chat``): ChatML's 8 tokens around each prompt."""
    row = rows["GPUSTACK-166"]
    assert datasets.answers_in_full(row)
    assert datasets.chat_template_tokens(row) == 8


def test_gpt_oss_harmony_estimate(rows, switched_on):
    """gpt-oss's Harmony system and developer messages: the stated estimate, 68 tokens."""
    row = next(r for r in rows.values() if r.source_group == "gpustack-performance-lab" and "gpt-oss" in r.model)
    assert datasets.chat_template_tokens(row) == 68


def test_a_completions_run_adds_none(rows, switched_on):
    """A run whose client sent raw text (dstack's ``sglang.bench_serving``) prefills what it counted."""
    row = next(r for r in rows.values() if r.source_group.startswith("dstack"))
    assert datasets.chat_template_tokens(row) == 0


def test_each_sampled_prompt_carries_the_template(rows, monkeypatch):
    """A ShareGPT run's requests: each prompt 8 tokens longer, outputs unchanged."""
    row = next(
        r
        for r in rows.values()
        if r.source_group == "gpustack-performance-lab" and "Qwen3" in r.model and "sharegpt" in r.dataset.lower()
    )
    off = datasets.run_requests(row)
    monkeypatch.setattr(datasets, "CHAT_TEMPLATE_ON", True)
    on = datasets.run_requests(row)
    assert off is not None and len(on) == len(off)
    assert [p for p, _ in on] == [p + 8 for p, _ in off]
    assert [o for _, o in on] == [o for _, o in off]
