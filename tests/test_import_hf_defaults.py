"""``catalog import-hf`` reading what real configs leave out or state elsewhere (trial s196): Gemma 3's text-config
defaults, float32 checkpoints, quantized checkpoints, a MoE's top-k, packed safetensors counts."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.catalog.hf import model_from_hf_config
from planner.engines.architecture import param_counts

#: google/gemma-3-27b-it's config.json as published (its text_config omits vocab_size, max_position_embeddings and
#: sliding_window_pattern: Gemma3TextConfig's defaults); the shipped Gemma-3-27B entry is the same model.
GEMMA3_27B_IT = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": {
        "head_dim": 128, "hidden_size": 5376, "intermediate_size": 21504, "model_type": "gemma3_text",
        "num_attention_heads": 32, "num_hidden_layers": 62, "num_key_value_heads": 16,
        "query_pre_attn_scalar": 168, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024,
    },
    "torch_dtype": "bfloat16",
}  # fmt: skip

LLAMA_8B = {
    "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 131072,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}  # fmt: skip


def test_a_gemma3_multimodal_config_imports_as_the_shipped_entry():
    """It was refused ("lacks vocab_size"), and with vocab_size added every layer was windowed and the context 4,096:
    a KV cache ~6x too small at 32K. Now: 52 sliding layers of 62 (pattern 6), 131,072 tokens, 262,208 vocab, the
    shipped Gemma-3-27B's KV per token and parameter count."""
    model, notes = model_from_hf_config(GEMMA3_27B_IT, "My-Gemma-3-27B")
    shipped = default_catalog().model("Gemma-3-27B")
    assert (model.sliding_window, model.sliding_window_layers) == (1024, 52)
    assert (model.sliding_window_layers, model.max_context, model.vocab_size) == (
        shipped.sliding_window_layers, shipped.max_context, shipped.vocab_size
    )  # fmt: skip
    assert param_counts(model)[0] == param_counts(shipped)[0] - shipped.extra_params  # the decoder (no vision tower)
    assert "vocab_size absent: 262,208 (Gemma3TextConfig's default)" in notes


def test_a_missing_trained_context_is_said_not_silent():
    cfg = {k: v for k, v in LLAMA_8B.items() if k != "max_position_embeddings"}
    model, notes = model_from_hf_config(cfg, "x")
    assert model.max_context == 4096 and any(
        n.startswith("max_position_embeddings absent: a trained context") for n in notes
    )


@pytest.mark.parametrize(("model_type", "served"), [("llama", "fp16"), ("gemma2", "bf16")])
def test_a_float32_checkpoint_is_served_in_16_bits(model_type, served):
    """google/gemma-2-9b declares float32; vLLM's --dtype auto serves it in 16 bits ("FP16 precision for FP32 and
    FP16 models"; Gemma 2 and 3 in BF16). It was planned with fp32 weights and KV: 44 L40S against 28."""
    model, notes = model_from_hf_config({**LLAMA_8B, "model_type": model_type, "torch_dtype": "float32"}, "x")
    assert model.native_precision == served
    assert any(n.startswith(f"torch_dtype float32: served in 16 bits ({served})") for n in notes)


@pytest.mark.parametrize(
    ("quant", "precision"),
    [
        ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
            "weights": {"num_bits": 8, "type": "float"}, "input_activations": {"num_bits": 8, "type": "float"}}}},
         "fp8"),  # RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8
        ({"quant_method": "compressed-tensors", "config_groups": {"group_0": {
            "weights": {"num_bits": 4, "type": "int"}}}}, "int4"),  # W4A16
        ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "nvfp4"),
        ({"quant_method": "modelopt", "quant_algo": "FP8"}, "fp8"),
        ({"quant_method": "fbgemm_fp8"}, "fp8"),
        ({"quant_method": "gptq", "bits": 4, "group_size": 128}, "int4"),
        ({"quant_method": "awq", "bits": 4, "group_size": 128}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "w8a16"),
    ],
)  # fmt: skip
def test_a_quantized_checkpoint_is_planned_in_its_format(quant, precision):
    """These imported as 16-bit weights with a note: an FP8 model at twice its memory unless -w fp8 was given."""
    model, _ = model_from_hf_config({**LLAMA_8B, "quantization_config": quant}, "x")
    assert model.native_precision == precision


def test_a_packed_safetensors_count_is_not_recorded_as_the_parameters():
    """An AWQ folder's safetensors hold int32 words of eight 4-bit weights: 1,984,696,320 elements for an 8B model,
    recorded as its parameters (a review would print 1.985 billion)."""
    cfg = {**LLAMA_8B, "quantization_config": {"quant_method": "awq", "bits": 4}}
    model, notes = model_from_hf_config(cfg, "x", published_params=1_984_696_320, published_params_source="safetensors")
    assert model.published_params_total == param_counts(model)[0] == 8_030_261_248
    assert any("counts packed int4 weights, not parameters" in n for n in notes)


def test_a_moe_top_k_is_read_or_said_assumed():
    moe = {**LLAMA_8B, "model_type": "qwen3_moe", "num_experts": 128, "moe_intermediate_size": 768}
    read, _ = model_from_hf_config({**moe, "moe_top_k": 8}, "x")
    assumed, notes = model_from_hf_config(moe, "y")
    assert read.moe.experts_per_token == 8 and assumed.moe.experts_per_token == 2
    assert "num_experts_per_tok absent: 2 experts per token assumed (Mixtral's); give the model's own" in notes


def test_a_name_that_is_a_shipped_models_says_it_replaces_it(tmp_path):
    """`import-hf --name mixtral-8x7b` wrote an entry that, loaded, replaced the shipped Mixtral-8x7B and its aliases
    without a word (trial s196); an alias clash is refused (s195), a name is the documented way to override."""
    import json

    from click.testing import CliRunner

    from planner.cli import main

    (tmp_path / "config.json").write_text(json.dumps(LLAMA_8B))
    result = CliRunner().invoke(main, ["catalog", "import-hf", str(tmp_path), "--name", "mixtral-8x7b"])
    assert result.exit_code == 0, result.output
    assert "note: 'mixtral-8x7b' names the catalog's 'Mixtral-8x7B': loaded, this entry replaces it" in result.output
    other = CliRunner().invoke(main, ["catalog", "import-hf", str(tmp_path), "--name", "My-8B"])
    assert "replaces it" not in other.output


@pytest.mark.parametrize(
    "quant",
    [
        {"quant_method": "modelopt", "quantization": "FP8"},
        {"quant_method": "compressed-tensors", "config_groups": {"g": "weights"}},
        {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": [8, "float"]}}},
        {"quant_method": "gptq", "bits": "4"},
    ],
)
def test_a_quantization_table_of_the_wrong_shape_is_not_read_nor_a_traceback(quant):
    model, notes = model_from_hf_config({**LLAMA_8B, "quantization_config": quant}, "x")
    assert model.native_precision == "bf16" and any("is not modelled" in n for n in notes)


#: bigcode/starcoder2-15b's config.json shape (hidden 6,144, 40 layers, 48 heads, 4 KV heads, a 24,576-wide GELU MLP
#: c_fc / c_proj, biases, untied); its safetensors hold 15,957,889,024 parameters (trial s197 F1's arithmetic).
STARCODER2_15B = {
    "model_type": "starcoder2", "num_hidden_layers": 40, "hidden_size": 6144, "num_attention_heads": 48,
    "num_key_value_heads": 4, "intermediate_size": 24576, "vocab_size": 49152, "max_position_embeddings": 16384,
    "use_bias": True, "hidden_act": "gelu_pytorch_tanh", "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}  # fmt: skip
#: tiiuae/falcon-7b's config.json shape: 4,544 x 32 layers, 71 heads, multi_query (one KV head), no intermediate_size
#: (4 x hidden, GELU); 6.92 billion parameters (its model card).
FALCON_7B = {
    "model_type": "falcon", "num_hidden_layers": 32, "hidden_size": 4544, "num_attention_heads": 71,
    "multi_query": True, "parallel_attn": True, "vocab_size": 65024, "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}  # fmt: skip


def test_a_two_matrix_mlp_model_is_counted_with_two_matrices():
    """import-hf read every config as a gated (three-matrix) MLP: Starcoder2-15B came out 22.0 billion parameters
    (+38%), and every plan budgeted 44 GB of weights for 32. Within 0.1% of the checkpoint's count now (biases of the
    MLP and norms aside)."""
    model, notes = model_from_hf_config(STARCODER2_15B, "My-Starcoder2")
    assert not model.gated_mlp and param_counts(model)[0] == pytest.approx(15_957_889_024, rel=1e-3)
    assert "model_type starcoder2: a two-matrix MLP (not gated), as its transformers model has" in notes


def test_falcon_multi_query_caches_one_kv_head():
    """Falcon-7B's multi_query attention has one KV head: it was imported with 71 (a KV cache 71x too large, 581,632
    against 8,192 bytes a token in 16 bits: 2 x 32 layers x 1 x 64 x 2)."""
    model, _ = model_from_hf_config(FALCON_7B, "My-Falcon-7B")
    assert model.num_kv_heads == 1
    assert 2 * model.num_layers * model.num_kv_heads * model.head_dim * 2 == 8192
    assert param_counts(model)[0] == pytest.approx(6.92e9, rel=0.05)


def test_a_count_far_from_the_checkpoints_is_warned(tmp_path):
    """An architecture planner does not read (model_type 'weirdnet', shaped as Starcoder2 but read as gated): with
    the checkpoint's 15,957,889,024 given, the computed 21,995,427,840 (+38%) was a note; a budget built on it pays
    for 44 GB of weights. Past 10% it is a warning saying so."""
    import json

    from cli_support import run

    path = tmp_path / "config.json"
    path.write_text(json.dumps({**STARCODER2_15B, "model_type": "weirdnet"}))
    result = run("catalog", "import-hf", str(path), "--name", "Weird", "--params", "15957889024")
    assert result.exit_code == 0, result.output
    assert "warning: the config's shape, as planner reads it (model_type weirdnet), gives +38% the parameters" in (
        result.stderr
    )
    path.write_text(json.dumps(STARCODER2_15B))  # read as it is: within 0.1%, no warning
    known = run("catalog", "import-hf", str(path), "--name", "Sc2", "--params", "15957889024")
    assert known.exit_code == 0 and "warning:" not in known.stderr
