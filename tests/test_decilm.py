"""NAS-pruned transformers (DeciLM / vLLM ``DeciLMForCausalLM``): NVIDIA Llama-3.3-Nemotron-Super-49B-v1, whose
layers differ in KV heads and MLP width and may skip attention (catalogs/models.toml ``[model.nas]``).

The shapes are config.json's ``block_configs`` (https://huggingface.co/nvidia/Llama-3_3-Nemotron-Super-49B-v1,
as copied in NVIDIA/NeMo nemo/collections/llm/gpt/model/llama_nemotron_config.py, commit c819727e, read 2026-12-04):
80 layers, hidden 8192, 64 query heads of 128; attention ``no_op`` in layers 6, 7, 11, 42-51 and 53-70 (31 layers),
``n_heads_in_group`` 8 (8 KV heads) in the other 49; every FFN a SwiGLU MLP, ``ffn_mult`` 0.5 to 5.25, of width
``int(2 x ffn_mult x 8192 / 3)`` rounded up to a multiple of 256 (vLLM vllm/model_executor/models/nemotron_nas.py
``_ffn_mult_to_intermediate_size``, commit 00bd1493).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

import planner
from planner.catalog import default_catalog
from planner.catalog.hf import decilm_ffn_width, model_from_hf_config
from planner.catalog.schema import Model
from planner.engines.architecture import (
    full_attention_layers,
    kv_elements_per_token_per_layer,
    model_facts,
    param_breakdown,
    tp_split_widths,
)
from planner.errors import InvalidInputError

CAT = default_catalog()
NAME = "nvidia/Llama-3_3-Nemotron-Super-49B-v1"
REPO = Path(__file__).parents[1]

#: config.json block_configs: the layers whose attention is a no_op (no weights, no norm, no KV cache).
NO_OP_ATTENTION = [6, 7, 11, *range(42, 52), *range(53, 71)]
#: ffn_mult per layer (80 entries), as config.json lists them.
FFN_MULT = (
    [2.625, *[5.25] * 5, 2.625, 2.625, 5.25, 5.25, 5.25, 3.28125]
    + [5.25] * 30
    + [1.3125, 2.625, 2.625, 1.3125, 5.25, 1.3125, 2.625, 1.3125, 1.3125, 1.3125, 5.25, 1.3125, 1.0, 1.0, 1.3125]
    + [1.0, 1.0, 1.0, 1.3125, 1.3125, 0.5, 0.5, 1.0, 1.0, 0.5, 0.5, 1.0, 0.5, 0.5]
    + [5.25] * 9
)


def _ffn_width(ffn_mult: float, hidden: int = 8192) -> int:
    """DeciLM's rule (vLLM nemotron_nas.py ``_ffn_mult_to_intermediate_size`` / ``_find_multiple``)."""
    width = int(2 * ffn_mult * hidden / 3)
    return width if width % 256 == 0 else width + 256 - width % 256


class TestTheCatalogEntryIsConfigJson:
    def test_per_layer_tables_follow_block_configs(self):
        m = CAT.model(NAME)
        assert len(FFN_MULT) == m.num_layers == 80
        assert m.nas.ffn_intermediate == tuple(_ffn_width(x) for x in FFN_MULT)
        assert m.nas.kv_heads == tuple(0 if i in NO_OP_ATTENTION else 64 // 8 for i in range(80))
        assert (m.nas.attention_linear, m.nas.ffn_linear) == ((), ())  # no replace_with_linear in this model
        assert (m.hidden_size, m.num_attention_heads, m.head_dim, m.vocab_size) == (8192, 64, 128, 128256)

    def test_the_fp8_checkpoint_is_the_same_model(self):
        assert CAT.model("nvidia/Llama-3_3-Nemotron-Super-49B-v1-FP8").name == "Llama-3.3-Nemotron-Super-49B-v1"


class TestParameters:
    def test_total_summed_layer_by_layer(self):
        """49 x (2 x 8192^2 + 2 x 8192 x 1024) attention + sum(3 x 8192 x width) MLP + 130 RMSNorms of 8192 (49
        input norms, 80 post-attention norms, the final norm) + untied embedding and lm_head of 128,256 x 8192."""
        h = 8192
        attention = (80 - len(NO_OP_ATTENTION)) * (2 * h * h + 2 * h * 8 * 128)
        mlp = sum(3 * h * _ffn_width(x) for x in FFN_MULT)
        norms = (80 - len(NO_OP_ATTENTION) + 80 + 1) * h
        expected = attention + mlp + norms + 2 * 128256 * h
        assert expected == 49_867_145_216
        assert param_breakdown(CAT.model(NAME)).total == expected

    def test_against_the_published_figure(self):
        """The Hugging Face model page: 'Model size: 49.9B params' (the safetensors total to 0.1B; listed as '49.9B
        params' by jakemanger/whatmodel pages/model/llama-3-3-nemotron-super-49b-v1.md)."""
        total = param_breakdown(CAT.model(NAME)).total
        assert round(total / 1e9, 1) == 49.9
        assert CAT.model(NAME).published_params_total == 49_900_000_000

    def test_bf16_weights_are_two_bytes_a_parameter(self):
        assert planner.weight_bytes(NAME, precision="bf16") == pytest.approx(2 * 49_867_145_216)


class TestKvCache:
    def test_bytes_per_token_by_hand(self):
        """Only the 49 attention layers cache: 49 x 2 (K, V) x 8 KV heads x 128 x 2 B = 200,704 B per token in bf16
        (100,352 in fp8), against 327,680 for Llama-3.3-70B's 80 layers."""
        attention_layers = 80 - len(NO_OP_ATTENTION)
        assert attention_layers == 49
        assert planner.kv_bytes_per_token(NAME, kv_precision="fp16") == attention_layers * 2 * 8 * 128 * 2 == 200_704
        assert planner.kv_bytes_per_token(NAME, kv_precision="fp8") == 100_352
        assert planner.kv_bytes(NAME, 4096, kv_precision="fp16") == 4096 * 200_704

    def test_facts_carry_the_exact_total(self):
        m = CAT.model(NAME)
        f = model_facts(m)
        assert full_attention_layers(m) == f.full_attention_layers == 49
        assert kv_elements_per_token_per_layer(m) == f.kv_elements_per_token_per_layer == 2_048
        assert f.full_attention_layers * f.kv_elements_per_token_per_layer == 100_352

    def test_memory_plan_counts_the_caching_layers_only(self):
        """The KV pool's bytes per token per GPU (vLLM's page rule) and its split over 2 GPUs (8 KV heads)."""
        one = planner.memory_plan("B200", NAME, 2560, gpus=1, weight_precision="fp8")
        two = planner.memory_plan("B200", NAME, 2560, gpus=2, weight_precision="fp8")
        assert one.kv_bytes_per_token_per_gpu == 200_704
        assert two.kv_bytes_per_token_per_gpu == 100_352


class TestTimingFacts:
    def test_mean_mlp_width_and_layer_count(self):
        """ModelFacts: the mean SwiGLU width (1,642,496 / 80) for width-dependent terms, (49 + 80) / 2 = 64.5 layers
        for per-layer costs (one all-reduce per attention and per MLP block under TP)."""
        f = model_facts(CAT.model(NAME))
        assert f.intermediate_size == pytest.approx(sum(_ffn_width(x) for x in FFN_MULT) / 80) == 20_531.2
        assert f.num_layers == 64.5

    def test_tensor_parallel_splits(self):
        """gcd of the MLP widths (2,816 = 11 x 256 ... 28,672 = 112 x 256) is 256; 64 heads, 8 KV heads."""
        assert tp_split_widths(CAT.model(NAME)) == (256, 0)
        assert planner.valid_tp_sizes(NAME)[:4] == (1, 2, 4, 8)

    def test_decode_is_faster_than_the_70b_it_was_pruned_from(self):
        ours = planner.tpot("B200", NAME, 2304, batch=8, weight_precision="fp8")
        parent = planner.tpot("B200", "llama3.3-70b", 2304, batch=8, weight_precision="fp8")
        assert ours < parent


class TestBadNasTables:
    def _data(self, **nas):
        data = CAT.model(NAME).model_dump()
        data["nas"].update(nas)
        return data

    def test_a_table_shorter_than_the_layers_is_refused(self):
        data = self._data(kv_heads=[8] * 79, ffn_intermediate=[28672] * 79)
        with pytest.raises(ValidationError, match="have 79 entries but num_layers is 80: one entry per layer"):
            Model(**data)

    def test_the_two_lists_must_have_the_same_length(self):
        with pytest.raises(ValidationError, match="nas.kv_heads has 80 layers but nas.ffn_intermediate has 79"):
            Model(**self._data(ffn_intermediate=[28672] * 79))

    def test_negative_values_are_refused(self):
        widths = list(CAT.model(NAME).nas.ffn_intermediate)
        widths[3] = -256
        with pytest.raises(ValidationError, match=r"nas.ffn_intermediate has negative values at layers \[3\]"):
            Model(**self._data(ffn_intermediate=widths))

    def test_kv_heads_must_divide_the_query_heads(self):
        heads = list(CAT.model(NAME).nas.kv_heads)
        heads[0] = 6
        with pytest.raises(ValidationError, match=r"nas.kv_heads at layers \[0\] do not divide num_attention_heads"):
            Model(**self._data(kv_heads=heads))

    def test_a_linear_layer_has_no_heads_of_its_own(self):
        with pytest.raises(ValidationError, match=r"nas.attention_linear \[0\]: not layers"):
            Model(**self._data(attention_linear=[0]))

    def test_a_linear_replacement_counts_one_square_matrix(self):
        """Layer 6's no_op attention made replace_with_linear: one hidden x hidden matrix and an input norm more."""
        m = Model(**self._data(attention_linear=[6]))
        assert param_breakdown(m).total - 49_867_145_216 == 8192 * 8192 + 8192
        assert full_attention_layers(m) == 49  # a linear attention caches nothing


def _config_json() -> dict:
    """config.json's fields that matter, block_configs as published (num_key_value_heads and intermediate_size null)."""
    blocks = [
        {
            "attention": {"n_heads_in_group": None, "no_op": True, "replace_with_linear": False}
            if i in NO_OP_ATTENTION
            else {"n_heads_in_group": 8, "no_op": False, "replace_with_linear": False, "window_length": None},
            "ffn": {"ffn_mult": mult, "no_op": False, "replace_with_linear": False, "sparsify": None},
        }
        for i, mult in enumerate(FFN_MULT)
    ]
    return {
        "architectures": ["DeciLMForCausalLM"],
        "model_type": "nemotron-nas",
        "hidden_size": 8192,
        "num_hidden_layers": 80,
        "num_attention_heads": 64,
        "num_key_value_heads": None,
        "intermediate_size": None,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "block_configs": blocks,
    }


class TestImportHf:
    def test_block_configs_give_the_catalog_entry(self):
        m, notes = model_from_hf_config(_config_json(), "imported", hf_id=NAME)
        ours = CAT.model(NAME)
        assert m.nas == ours.nas
        assert (m.num_kv_heads, m.intermediate_size, m.head_dim) == (8, 28672, 128)
        assert m.published_params_total == 49_867_145_216
        assert any("49 of 80 layers with attention" in n for n in notes)
        assert not any("intermediate_size absent" in n for n in notes)

    def test_the_width_rule(self):
        """vLLM nemotron_nas.py: 0.5 x 8192 x 2 / 3 = 2,730.67 -> 2,730 -> 2,816; 5.25 -> 28,672 exactly."""
        assert (decilm_ffn_width(0.5, 8192), decilm_ffn_width(5.25, 8192), decilm_ffn_width(3.28125, 8192)) == (
            2816,
            28672,
            17920,
        )

    def test_a_block_count_that_is_not_the_layer_count_is_refused(self):
        cfg = _config_json()
        cfg["block_configs"] = cfg["block_configs"][:10]
        with pytest.raises(InvalidInputError, match="block_configs has 10 entries but num_hidden_layers is 80"):
            model_from_hf_config(cfg, "bad")

    def test_a_bad_block_names_its_index(self):
        cfg = _config_json()
        cfg["block_configs"][3]["attention"]["n_heads_in_group"] = 7
        with pytest.raises(
            InvalidInputError, match=r"block_configs\[3\]: attention.n_heads_in_group 7 does not divide"
        ):
            model_from_hf_config(cfg, "bad")

    def test_a_per_layer_window_is_not_modelled(self):
        cfg = _config_json()
        cfg["block_configs"][0]["attention"]["window_length"] = 4096
        with pytest.raises(InvalidInputError, match=r"block_configs\[0\]: attention.window_length = 4096 is not"):
            model_from_hf_config(cfg, "bad")


def test_heldout_predicts_the_vultr_rows():
    """bench/heldout.py --source vultr: VUL-010..018 (vLLM 0.16.0, one B200, fp8) are predicted, no longer refused
    as 'a NAS-pruned model ... not modelled'."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "bench/heldout.py", "--source", "vultr", "--why", "--worst", "TPOT", "40"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert not [line for line in run.stdout.splitlines() if line.startswith("VUL-01") and "not modelled" in line]
    assert "not run yet" not in run.stdout  # aiconfigurator and llm-analysis are not asked about a NAS model
    listed = {line.split()[0] for line in run.stdout.splitlines() if line.startswith("VUL-01")}
    assert {f"VUL-01{i}" for i in range(9)} <= listed
