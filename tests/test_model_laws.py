"""Laws the capacity model obeys for every GPU, model, precision and size (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import planner
from planner.catalog import default_catalog
from planner.engines.architecture import local_attention_span
from planner.engines.profiles import engine_profile
from planner.errors import DoesNotFitError, OutOfRangeError

CAT = default_catalog()
GPUS = st.sampled_from(CAT.gpus.names())
MODELS = st.sampled_from(CAT.models.names())
#: KV formats the default engine (vLLM) caches; int8/int4 KV are refused there (tests/test_issue9_core.py)
KV = st.sampled_from([p.name for p in CAT.precisions if p.kv_cache and engine_profile(None).accepts_kv(p.name)])
CONTEXT = st.integers(min_value=1, max_value=256_000)
COUNTS = st.sampled_from([1, 2, 4, 8, 16])
settings.register_profile("planner", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("planner")


def up_to_8(model) -> int:
    """The largest tensor-parallel group of at most 8 GPUs that vLLM runs the model on."""
    return max(n for n in planner.valid_tp_sizes(model) if n <= 8)


def batch_or_none(gpu, model, context, kv, gpus, **options):
    """Max batch, or None where it does not fit or vLLM refuses the tensor-parallel group."""
    try:
        return planner.max_batch(gpu, model, context, kv_precision=kv, gpus=gpus, **options)
    except (DoesNotFitError, OutOfRangeError):
        return None


class TestKvCache:
    @given(MODELS, KV, st.integers(1, 100_000), st.integers(1, 100_000))
    def test_kv_bytes_are_linear_in_tokens_until_a_window_caps_them(self, model, kv, a, b):
        _, span = local_attention_span(CAT.model(model))  # a sliding window or an attention chunk (Llama 4)
        assume(a + b <= span)
        assert planner.kv_bytes(model, a + b, kv_precision=kv) == pytest.approx(
            planner.kv_bytes(model, a, kv_precision=kv) + planner.kv_bytes(model, b, kv_precision=kv)
        )

    @given(MODELS, KV, CONTEXT, st.integers(1, 512))
    def test_kv_bytes_scale_with_batch(self, model, kv, tokens, batch):
        assert planner.kv_bytes(model, tokens, kv_precision=kv, batch=batch) == pytest.approx(
            batch * planner.kv_bytes(model, tokens, kv_precision=kv)
        )

    @given(st.sampled_from([m.name for m in CAT.models if local_attention_span(m)[0]]), st.integers(1, 200_000))
    def test_past_the_window_only_full_attention_layers_grow(self, model, extra):
        """Gemma 2/3, gpt-oss, Llama 4: beyond the window (or chunk), each token adds KV in the global layers only."""
        m = CAT.model(model)
        local_layers, span = local_attention_span(m)
        w = int(span)
        per_layer_token = planner.kv_bytes_per_token(model, kv_precision="bf16") / m.num_layers
        growth = planner.kv_bytes(model, w + extra, kv_precision="bf16") - planner.kv_bytes(
            model, w, kv_precision="bf16"
        )
        assert growth == pytest.approx(extra * (m.num_layers - local_layers) * per_layer_token)


class TestMaxBatch:
    @given(GPUS, MODELS, KV, CONTEXT, CONTEXT, COUNTS)
    def test_never_grows_with_context(self, gpu, model, kv, c1, c2, n):
        short, long_ = sorted((c1, c2))
        b_short, b_long = batch_or_none(gpu, model, short, kv, n), batch_or_none(gpu, model, long_, kv, n)
        assume(b_long is not None)
        assert b_short >= b_long

    @given(GPUS, MODELS, KV, CONTEXT, st.sampled_from([1, 2, 4, 8]))
    def test_never_shrinks_with_more_gpus(self, gpu, model, kv, context, n):
        fewer = batch_or_none(gpu, model, context, kv, n)
        assume(fewer is not None and 2 * n in planner.valid_tp_sizes(model))
        assert batch_or_none(gpu, model, context, kv, 2 * n) >= fewer

    @given(GPUS, MODELS, CONTEXT, COUNTS)
    def test_never_shrinks_with_a_smaller_kv_precision(self, gpu, model, context, n):
        wide = batch_or_none(gpu, model, context, "bf16", n)
        assume(wide is not None)
        assert batch_or_none(gpu, model, context, "fp8", n) >= wide
        ideal = dict(engine="ideal")  # int4 KV: a what-if only the ideal engine computes
        assert batch_or_none(gpu, model, context, "int4", n, **ideal) >= batch_or_none(
            gpu, model, context, "fp8", n, **ideal
        )

    @given(GPUS, MODELS, CONTEXT)
    def test_without_a_gpu_count_uses_the_smallest_group_that_fits(self, gpu, model, context):
        try:
            auto = planner.memory_plan(gpu, model, context)
        except (DoesNotFitError, OutOfRangeError):  # does not fit, or refused (a T4 has no fp8 for DeepSeek-V3)
            return
        n = int(auto.gpus)
        assert batch_or_none(gpu, model, context, None, n) == int(auto.max_batch) >= 1
        if n > 1:
            assert batch_or_none(gpu, model, context, None, n // 2) is None

    @given(GPUS, MODELS, CONTEXT, COUNTS)
    def test_ideal_engine_is_an_upper_bound_on_the_vllm_budget(self, gpu, model, context, n):
        vllm = batch_or_none(gpu, model, context, None, n)
        assume(vllm is not None)
        assert batch_or_none(gpu, model, context, None, n, engine="ideal") >= vllm


class TestDecodeTime:
    @given(GPUS, MODELS, st.integers(1, 32_768), st.integers(1, 64))
    def test_tpot_is_at_least_weight_bytes_over_bandwidth(self, gpu, model, context, batch):
        try:
            step = planner.decode_step(gpu, model, context, batch=batch)
        except (DoesNotFitError, OutOfRangeError):  # not a deployment: no law to hold
            return
        g = CAT.gpu(gpu)
        m = CAT.model(model)
        # a dense model streams every weight but the embedding lookup; MoE at least the active experts
        from planner.engines.architecture import model_facts

        facts = model_facts(m)
        floor_bytes = facts.params_read_per_step * CAT.precision(m.native_precision).bytes_per_element
        assert step.step_s >= floor_bytes / (float(step.gpus) * g.hbm_bandwidth_bytes_per_s) * (1 - 1e-12)

    @given(GPUS, MODELS, st.integers(1, 32_768), st.integers(1, 32))
    def test_throughput_is_batch_over_tpot_and_grows_with_batch(self, gpu, model, context, batch):
        try:
            one = planner.decode_step(gpu, model, context, batch=batch, gpus=up_to_8(model), check_fit=False)
            two = planner.decode_step(gpu, model, context, batch=2 * batch, gpus=up_to_8(model), check_fit=False)
        except (DoesNotFitError, OutOfRangeError):  # not a deployment: no law to hold
            return
        assert one.throughput_tokens_per_s == pytest.approx(batch / one.step_s)
        assert two.throughput_tokens_per_s >= one.throughput_tokens_per_s
        assert two.step_s >= one.step_s

    @given(GPUS, MODELS, st.integers(1, 32_768), st.integers(1, 64))
    def test_mfu_and_mbu_are_fractions(self, gpu, model, context, batch):
        try:
            step = planner.decode_step(gpu, model, context, batch=batch, gpus=up_to_8(model), check_fit=False)
        except OutOfRangeError:  # a deployment refused (a T4 has no fp8 for DeepSeek-V3.2's weights): no law to hold
            return
        assert 0 < step.mfu <= 1 and 0 < step.mbu <= 1

    def test_batch_token_time_is_tpot_over_batch_not_tpot(self):
        """The second seed's (weights + KV) / bandwidth x 1/B is time per token of the whole batch."""
        tpot = planner.tpot("H100", "llama2-70b", 4096, batch=4, gpus=2)
        assert planner.batch_token_time("H100", "llama2-70b", 4096, batch=4, gpus=2) == pytest.approx(tpot / 4)
        assert planner.throughput("H100", "llama2-70b", 4096, batch=4, gpus=2) == pytest.approx(4 / tpot)


class TestVectorized:
    def test_arrays_give_the_same_answers_as_scalar_calls(self):
        gpus = ["H100", "A100", "H200", "L40S", "MI300X"]
        models = ["llama2-70b", "llama3.1-8b", "qwen3-30b-a3b", "gemma2-27b", "deepseek-v3"]
        contexts = [8192, 4096, 32768, 2048, 16384]
        got = planner.tpot(gpus, models, contexts, batch=4, errors="coerce")
        for i, (g, m, c) in enumerate(zip(gpus, models, contexts, strict=True)):
            try:
                want = planner.tpot(g, m, c, batch=4)
            except DoesNotFitError:
                assert np.isnan(got[i])
            else:
                assert got[i] == pytest.approx(want, rel=1e-12)

    def test_arrays_broadcast_and_series_keep_their_index(self):
        ctx = pd.Series([1024, 8192, 65536], index=["short", "mid", "long"])
        out = planner.max_batch("H200", "llama3.1-8b", ctx)
        assert isinstance(out, pd.Series) and list(out.index) == ["short", "mid", "long"]
        assert out["short"] > out["mid"] > out["long"]
        grid = planner.max_batch(np.array(["H100", "H200"])[:, None], "llama3.1-70b", np.array([[4096, 8192, 16384]]))
        assert grid.shape == (2, 3)

    def test_coerce_gives_nan_only_for_the_failing_scenarios(self):
        out = planner.max_batch(
            ["H100", "H10", "H100"],
            "llama2-70b",
            [8192, 8192, 8192],
            kv_precision="fp16",
            gpus=[2, 2, 1],
            errors="coerce",
        )
        assert out[0] >= 1 and np.isnan(out[1]) and np.isnan(out[2])


class TestExpertsTouched:
    """model.experts_touched: E x (1 - (1 - k/E)^T) distinct experts per MoE layer for T tokens, uniform routing."""

    @staticmethod
    def facts(experts: float, per_token: float):
        from types import SimpleNamespace

        return SimpleNamespace(num_experts=experts, experts_per_token=per_token)

    def test_hand_worked_values(self):
        """Mixtral (8 experts, 2 per token; its config.json): one token 2, two tokens 8 x (1 - 0.75^2) = 3.5;
        DeepSeek-V3 (256 routed, 8 per token): one token 8; a dense model 0."""
        from planner.model import experts_touched

        assert experts_touched(self.facts(8.0, 2.0), 1.0) == pytest.approx(2.0, rel=1e-15)
        assert experts_touched(self.facts(8.0, 2.0), 2.0) == pytest.approx(3.5, rel=1e-15)
        assert experts_touched(self.facts(256.0, 8.0), 1.0) == pytest.approx(8.0, rel=1e-15)
        assert experts_touched(self.facts(0.0, 0.0), 64.0) == 0.0

    @given(
        experts=st.integers(1, 512),
        share=st.floats(0.0, 1.0),
        tokens=st.integers(1, 10_000_000),
    )
    def test_equals_the_power_form_within_bounds_scalar_and_array(self, experts, share, tokens):
        """The same number as E x (1 - (1 - k/E)^T) (computed via expm1 / log1p), between k and min(E, k x T),
        non-decreasing in T, and the array path gives the scalar path's value."""
        from planner.model import experts_touched

        k = float(max(1, round(share * experts)))
        f = self.facts(float(experts), k)
        got = experts_touched(f, float(tokens))
        want = experts * (1.0 - (1.0 - k / experts) ** tokens)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
        assert k * (1 - 1e-12) <= got <= min(experts, k * tokens) * (1 + 1e-12)
        assert experts_touched(f, float(tokens + 1)) >= got * (1 - 1e-15)
        arrays = self.facts(np.array([float(experts), 0.0]), np.array([k, 0.0]))
        assert experts_touched(arrays, np.array([float(tokens), float(tokens)])) == pytest.approx([got, 0.0], rel=1e-14)


class TestMeasuredAllReduce:
    def test_a_larger_message_never_takes_less_time(self):
        """The measured all-reduce table (catalogs/reference/allreduce_aic.csv) dips where vLLM's dispatch changes
        kernels, e.g. B200's 8-GPU graph row, 1.5x faster at 512 KiB than at 256 KiB as measured: read as it is, a
        step of LLaMA-65B on 8 x B200 took 11.84 ms at batch 11 and 11.79 ms at batch 22. Each row is read
        non-decreasing in size (isotonic regression), so twice the batch is never a shorter step."""
        from planner.engines.allreduce_table import read_allreduce_table

        log_s = read_allreduce_table().log_seconds
        steps = np.diff(log_s, axis=-1)
        assert np.all(steps[np.isfinite(steps)] >= 0)
        batches = np.arange(1, 513)
        for context in (1, 2_048, 16_384):
            step_s = [
                planner.decode_step("B200", "llama-65b", context, batch=int(b), gpus=8, check_fit=False).step_s
                for b in batches
            ]
            assert np.all(np.diff(step_s) >= 0), context
