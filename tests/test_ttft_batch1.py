"""bench/ttft_batch1.py: a batch-1 TTFT row's operator terms add up to the prediction they break down."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ttft_batch1 as tb  # noqa: E402

from planner.accuracy import predict as acc  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in acc.load_decode_rows()}


class TestTerms:
    def test_terms_add_up_to_the_prefill_predicted(self, rows):
        """A TensorRT-LLM 0.5 row (TRT061-053, Llama-2-7B, 2,048 tokens, one A100): the terms sum to the static run's
        predicted TTFT with the shipped profile (no front end, no first-token decode step)."""
        r = rows["TRT061-053"]
        terms = tb.operator_terms(r)
        assert terms["first-token decode"] == 0.0
        assert sum(terms.values()) == pytest.approx(float(acc.predict_decode_rows([r]).ttft_s[0]), rel=1e-9)

    def test_lmdeploy_terms_follow_the_release_when_asked(self, rows, monkeypatch):
        """LMD010-003 (LMDeploy v0.1.0a1, 128 tokens): with FIRST_TOKEN_FROM_DECODE_STEP on, a prefill of 127 tokens
        and a decode step, summing to that prediction; off, the plain prefill of 128."""
        r = rows["LMD010-003"]
        off = tb.operator_terms(r)
        assert off["first-token decode"] == 0.0
        assert sum(off.values()) == pytest.approx(float(acc.predict_decode_rows([r]).ttft_s[0]), rel=1e-9)
        monkeypatch.setattr(acc, "FIRST_TOKEN_FROM_DECODE_STEP", True)
        assert tb.operator_terms(r) == off  # the terms follow their argument, not the predictions' switch
        on = tb.operator_terms(r, first_token_decode_step=True)
        assert on["first-token decode"] > 0.0
        assert sum(on.values()) == pytest.approx(float(acc.predict_decode_rows([r]).ttft_s[0]), rel=1e-9)


class TestInterpolation:
    @pytest.mark.parametrize(
        "x, expected",
        [(128, [(128, 1.0)]), (192, [(128, 0.5), (256, 0.5)]), (64, [(128, 1.0)]), (4096, [(2048, 1.0)])],
    )
    def test_between(self, x, expected):
        """Linear weights between the measured points around x; the end point beyond the range."""
        assert tb._between([128, 256, 2048], x) == expected
