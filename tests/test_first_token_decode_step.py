"""LMDeploy TurboMind before 0.1.0a2 samples a prompt's first token in a decode step after prefilling the rest.

Source: InternLM/lmdeploy at tag v0.1.0a1 (commit 9c46b27, 2023-11-29), src/turbomind/models/llama/LlamaBatch.cc:
``ContextDecode`` sets ``h_input_length_buf_[i] = missing - 1`` ("subtract input/context len by 1 to skip last input
token (will process with decoder later)") only where ``missing > 1``, and ``Generate`` (``decoderForward`` +
``dynamicDecode``) samples the first token; pull request 775 ("Unify prefill & decode passes", 2023-12-04, in
v0.1.0a2) ended it. Published: docs/en/benchmark/a100_fp16.md at commit ebe90bc ("The tested lmdeploy version is
`v0.1.0a1`"), Llama-2-7B on one A100-80G, batch 1, FTL(ave) 0.011 / 0.022 / 0.14 s at 1 / 128 / 2048 prompt tokens
(catalogs/reference/perf_public.csv LMD010-001, -003, -005).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner import api
from planner.accuracy.predict import load_decode_rows, predict_decode_rows
from planner.engines.profiles import LMDEPLOY, first_token_from_decode_step
from planner.errors import InvalidInputError
from planner.serving.benchmark import predict_benchmark

GPU, MODEL = "A100 SXM 80GB", "Llama-2-7B"


class TestWhichReleases:
    @pytest.mark.parametrize(
        "engine, version, expected",
        [
            ("lmdeploy", "v0.1.0a1", True),
            ("lmdeploy", "0.0.14", True),
            ("turbomind", "0.1.0a0", True),
            ("lmdeploy", "0.1.0a2", False),
            ("lmdeploy", "v0.1.0", False),
            ("lmdeploy", "0.6.5", False),
            ("lmdeploy", "not stated", False),
            ("vllm", "0.1.0a1", False),
        ],
    )
    def test_turbomind_before_the_unified_pass(self, engine, version, expected):
        """Only LMDeploy releases before 0.1.0a2 (pull request 775) take their first token from a decode step."""
        assert first_token_from_decode_step(engine, version) is expected


class TestStaticTtft:
    def test_one_token_prompt_is_one_decode_step(self):
        """A one-token prompt has no prefill (``missing > 1`` is false): its TTFT is the decode step alone."""
        run = predict_benchmark(GPU, MODEL, 1, 128, 1, engine="lmdeploy", first_token_decode_step=True)
        step = api.decode_step(GPU, MODEL, 1, batch=1, engine="lmdeploy", check_fit=False).step_s
        assert float(run.ttft_s) == pytest.approx(float(step), rel=1e-12)

    def test_longer_prompt_is_its_prefill_less_one_token_and_a_decode_step(self):
        """TTFT = prefill of L - 1 tokens + a decode step at context L, above the plain prefill of L tokens."""
        run = predict_benchmark(GPU, MODEL, 128, 128, 1, engine="lmdeploy", first_token_decode_step=True)
        pre = api.prefill(GPU, MODEL, 127, batch=1, engine="lmdeploy").ttft_s
        step = api.decode_step(GPU, MODEL, 128, batch=1, engine="lmdeploy", check_fit=False).step_s
        assert float(run.ttft_s) == pytest.approx(float(pre + step), rel=1e-12)
        plain = predict_benchmark(GPU, MODEL, 128, 128, 1, engine="lmdeploy")
        assert float(run.ttft_s) > float(plain.ttft_s)

    def test_a_serving_run_refuses_it(self):
        """The rule is read for static batches only: a serving run given it is refused in one line."""
        with pytest.raises(InvalidInputError, match="static"):
            predict_benchmark(GPU, MODEL, 128, 128, 1, kind="serving", first_token_decode_step=True)

    def test_published_v010a1_first_token_latencies(self):
        """LMDeploy v0.1.0a1's published Llama-2-7B FTL on one A100 (11, 22, 140 ms at 1, 128, 2048 tokens) within 10%
        with the engine costs refitted under the rule (docs/history.md, s106: per layer 11.5 us, prefill
        latency 1.2 ms); read as a plain prefill with those costs, the 128-token prompt is 40% or more under."""
        refit = LMDEPLOY.with_(layer_overhead_s=11.5e-6, prefill_latency_s=0.0012)
        published = np.array([0.011, 0.022, 0.140])
        tokens = np.array([1.0, 128.0, 2048.0])
        rule = predict_benchmark(GPU, MODEL, tokens, 128, 1, engine=refit, first_token_decode_step=True)
        errors = np.asarray(rule.ttft_s) / published - 1.0
        assert np.all(np.abs(errors) < 0.10), errors
        plain = predict_benchmark(GPU, MODEL, tokens, 128, 1, engine=refit)
        assert float(np.asarray(plain.ttft_s)[1]) / published[1] - 1.0 < -0.40

    def test_loso_reads_the_rule_only_when_asked(self, monkeypatch):
        """predict_decode_rows reads a v0.1.0a1 row as a plain prefill unless FIRST_TOKEN_FROM_DECODE_STEP is on."""
        import planner.accuracy.predict as predict

        rows = [r for r in load_decode_rows() if r.record_id == "LMD010-003"]
        off = float(predict_decode_rows(rows).ttft_s[0])
        monkeypatch.setattr(predict, "FIRST_TOKEN_FROM_DECODE_STEP", True)
        on = float(predict_decode_rows(rows).ttft_s[0])
        step = api.decode_step(GPU, MODEL, 128, batch=1, engine="lmdeploy", check_fit=False).step_s
        pre127 = api.prefill(GPU, MODEL, 127, batch=1, engine="lmdeploy").ttft_s
        assert on == pytest.approx(float(pre127 + step), rel=1e-9)
        assert not math.isclose(on, off)
