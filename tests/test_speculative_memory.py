"""The memory a speculating deployment's draft holds, charged before the KV budget and max batch
(``planner.serving.speculative.served_model``, ``planner.model.memory.memory_plan``), and the under-load Excel
functions' ``speculative_method`` argument.

Every expected value is derived from its source: the catalog entry's config.json fields (MLA ``kv_lora_rank`` +
``qk_rope_head_dim``, ``num_key_value_heads`` x ``head_dim``, ``num_nextn_predict_layers`` as ``mtp_layers``), the
engines' rule (vLLM ``EagleProposer.load_model`` + ``GPUModelRunner.get_kv_cache_spec``: the draft's attention layers
cached as the target's, one cache of the target's tokens; SGLang ``profile_max_num_token``: the draft worker's cells
over ``num_nextn_predict_layers`` layers) and ``eagle3_draft_params`` (SGLang ``llama_eagle3.py``).
"""

from __future__ import annotations

import math

import pytest

from planner import api
from planner.catalog import default_catalog
from planner.excel import functions as xf
from planner.serving.speculative import eagle3_draft_params, served_model, speculation_for

CAT = default_catalog()


def _plans(model: str, gpu: str, gpus: int, method: str, context: int = 8192):
    """(plan without speculation, plan of the model as a run speculating with ``method`` serves it)."""
    spec = speculation_for(model, 3, 2.5, catalog=CAT, method=method)
    plain = api.memory_plan(gpu, model, context, gpus=gpus)
    drafting = api.memory_plan(gpu, served_model(model, spec, CAT), context, gpus=gpus)
    return plain, drafting, spec


class TestMtpMemory:
    def test_mtp_layer_caches_one_more_layer_per_token(self):
        """DeepSeek-R1 with MTP on 8 x H200: each MTP layer adds one MLA layer's KV per token, the latent
        (kv_lora_rank + qk_rope_head_dim values, bf16 cache) on every GPU as the model's own layers hold it."""
        m = CAT.model("DeepSeek-R1")
        plain, drafting, _ = _plans("DeepSeek-R1", "H200", 8, "mtp")
        per_layer = (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * 2  # bytes, bf16: the checkpoint's default cache
        assert drafting.kv_bytes_per_token_per_gpu - plain.kv_bytes_per_token_per_gpu == m.mtp_layers * per_layer

    def test_mtp_weights_and_kv_shrink_the_batch(self):
        """The MTP layers' weights (mtp_params less the embedding and head copies shared with the target, at the
        checkpoint's fp8, one byte each) and KV both come out of the budget: fewer cached tokens than the weights
        alone leave, and no more sequences than without them."""
        m = CAT.model("DeepSeek-R1")
        plain, drafting, _ = _plans("DeepSeek-R1", "H200", 8, "mtp")
        assert drafting.weight_bytes - plain.weight_bytes == pytest.approx((m.mtp_params - m.mtp_shared_params) * 1.0)
        budget = float(drafting.kv_budget_bytes_per_gpu)
        block = 16  # vLLM's block of tokens (README: "KV in blocks of 16 tokens")
        expected = math.floor(budget / (float(drafting.kv_bytes_per_token_per_gpu) * block)) * block
        assert drafting.kv_cache_tokens == expected
        weights_only = math.floor(budget / (float(plain.kv_bytes_per_token_per_gpu) * block)) * block
        assert drafting.kv_cache_tokens < weights_only
        assert drafting.max_batch < plain.max_batch


class TestEagle3Memory:
    def test_head_weights_are_held_beside_the_model(self):
        """Llama 3.3 70B with an EAGLE-3 head on 4 x H100: the head's parameters (eagle3_draft_params of the model's
        shape, draft vocabulary 32,000) at bf16 are loaded beside the weights, split over the group."""
        m = CAT.model("Llama-3.3-70B")
        plain, drafting, spec = _plans("Llama-3.3-70B", "H100", 4, "eagle3")
        head = eagle3_draft_params(m.hidden_size, m.intermediate_size, m.num_attention_heads, m.num_kv_heads,
                                   m.head_dim, 32000)  # fmt: skip
        assert spec.draft_params == head
        assert drafting.weight_bytes - plain.weight_bytes == pytest.approx(head * 2.0)
        assert plain.kv_budget_bytes_per_gpu - drafting.kv_budget_bytes_per_gpu == pytest.approx(head * 2.0 / 4)

    def test_head_layer_caches_its_kv(self):
        """The head's one decoder layer caches 2 x num_key_value_heads x head_dim values a token (bf16), its 8 KV
        heads split over 4 GPUs as the model's are; the max batch falls."""
        m = CAT.model("Llama-3.3-70B")
        plain, drafting, _ = _plans("Llama-3.3-70B", "H100", 4, "eagle3")
        added = 2 * m.num_kv_heads * m.head_dim * 2 / 4
        assert drafting.kv_bytes_per_token_per_gpu - plain.kv_bytes_per_token_per_gpu == pytest.approx(added)
        assert drafting.max_batch < plain.max_batch

    def test_ngram_holds_nothing(self):
        """n-gram lookup has no draft on the GPU: the plan is the model's own."""
        plain, drafting, _ = _plans("Llama-3.3-70B", "H100", 4, "ngram")
        assert (drafting.weight_bytes, drafting.max_batch) == (plain.weight_bytes, plain.max_batch)


class TestExcelSpeculativeMethod:
    ARGS = ("H100", "llama3.1-8b", 1.0, 800.0, 200.0, 1.0, None, None, 3.0, 2.5)

    def test_blank_method_is_todays_default(self):
        """A blank speculative_method gives the figure the function gave without the argument, to the last digit."""
        assert xf.TTFT_P50(*self.ARGS) == xf.TTFT_P50(*self.ARGS, None, None, None, "")

    def test_named_method_is_the_fleet_functions(self):
        """TPOT_P50 with "ngram" is planner.serving.fleet's load_percentile with speculative_method="ngram"."""
        from planner.serving.fleet import load_percentile

        want = load_percentile(*self.ARGS[:5], metric="tpot", percentile=50, speculative_tokens=3.0,
                               acceptance_length=2.5, speculative_method="ngram", gpus=1.0) * 1e3  # fmt: skip
        assert xf.TPOT_P50(*self.ARGS, None, None, None, "ngram") == pytest.approx(want)

    def test_refusals_give_plans_words(self):
        """mtp for a model without MTP layers, an unknown method, or a method without speculative_tokens: #VALUE!, and
        PLANNER_WHY gives speculation_for's (plan's) reason."""
        assert xf.TTFT_P50(*self.ARGS, None, None, None, "mtp") == "#VALUE!"
        assert "ships no multi-token-prediction" in xf.PLANNER_WHY("TTFT_P50", *self.ARGS, None, None, None, "mtp")
        assert "'medusa' is not known" in xf.PLANNER_WHY("TTFT_P50", *self.ARGS, None, None, None, "medusa")
        bare = (*self.ARGS[:8], None, None, None, None, None, "ngram")
        assert xf.TTFT_P50(*bare) == "#VALUE!"
        assert "give speculative_tokens" in xf.PLANNER_WHY("TTFT_P50", *bare)


def test_an_eagle3_head_on_an_mla_model_caches_the_latent():
    """vLLM's EAGLE-3 head for DeepSeek-V2/V3 (vllm/model_executor/models/deepseek_eagle3.py: "Eagle3 speculative
    decoding model for DeepseekV2/V3 with MLP (no MoE)") is one DeepSeek decoder layer: MLA attention, so its cache
    is the latent, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 values a token (deepseek-ai/DeepSeek-R1 config.json),
    on every GPU as the model's (draft_kv_heads 0), not 128 heads x 192 split over the group."""
    from planner.serving.speculative import speculation_for

    spec = speculation_for("deepseek-r1", 3, 2.4, method="eagle3")
    assert spec.draft_kv_elements_per_token == 512 + 64
    assert spec.draft_kv_heads == 0
