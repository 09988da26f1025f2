"""Turn a Hugging Face ``config.json`` into a catalog model entry.

Pure: a dict in, a validated ``Model`` out. Multimodal configs use their ``text_config``; fields a config
does not state take the transformers defaults named in the code (each default is reported as a note).
Every value is checked before use: a size must be a whole number (32.7 layers is refused, not truncated),
a flag a boolean, a table an object; anything else is an ``InvalidInputError`` naming the key.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import ValidationError

from planner.catalog.schema import Model
from planner.engines.architecture import param_counts
from planner.errors import InvalidInputError

_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float8_e4m3fn": "fp8"}
#: Gemma 3's text config leaves out what takes ``Gemma3TextConfig``'s defaults (transformers
#: models/gemma3/configuration_gemma3.py: vocab_size=262_208, max_position_embeddings=131_072,
#: sliding_window_pattern=6: five sliding layers, then one global), as google/gemma-3-27b-it's config.json does.
GEMMA3_TEXT_DEFAULTS = {"vocab_size": 262_208, "max_position_embeddings": 131_072, "sliding_window_pattern": 6}
#: Packed or scaled weight formats a ``quantization_config`` names, as planner's precisions (the checkpoint's own
#: bytes): vLLM's quant_method names; compressed-tensors and ModelOpt state the scheme inside (``_quantized``).
_QUANT_METHODS = {"fp8": "fp8", "fbgemm_fp8": "fp8", "mxfp4": "mxfp4"}
#: Largest size any config field may state (2^31 - 1): larger is a typo or an attack, not a model.
_MAX_SIZE = 2**31 - 1
#: Largest parameter count accepted (10^15): the entry must fit a TOML integer and mean something.
_MAX_PARAMS = 10**15
_MISSING = object()


def _describe(value: Any) -> str:
    text = repr(value) if isinstance(value, (str, int, float, bool)) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _int(cfg: dict, key: str, default: Any = _MISSING, minimum: int = 1) -> int:
    """``cfg[key]`` as a whole number >= ``minimum``; a float is accepted only when it is whole (32.0)."""
    value = cfg.get(key)
    if value is None:
        if default is _MISSING:
            raise InvalidInputError(f"config.json lacks {key}; is it a decoder-only language model config?")
        return default
    ok = isinstance(value, int) and not isinstance(value, bool)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value, ok = int(value), True
    if not ok or not minimum <= value <= _MAX_SIZE:
        raise InvalidInputError(
            f"config.json: {key} must be a whole number from {minimum} to {_MAX_SIZE:,}, got {_describe(value)}"
        )
    return value


def _typed(cfg: dict, key: str, kind: type, default: Any, accepted: str) -> Any:
    """``cfg[key]`` if it is a ``kind`` (``default`` when absent or null), else a one-line refusal."""
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, kind):
        raise InvalidInputError(f"config.json: {key} must be {accepted}, got {_describe(value)}")
    return value


def _bool(cfg: dict, key: str, default: bool) -> bool:
    return _typed(cfg, key, bool, default, "true or false")


def _str(cfg: dict, key: str, default: str = "") -> str:
    """``cfg[key]`` as text; JSON's ``\\ud800`` escapes decode to lone surrogates that no file can hold: refused."""
    value = _typed(cfg, key, str, default, "a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"config.json: {key} is not valid Unicode text (a lone surrogate such as \\ud800); "
            "give plain text, e.g. 'llama'"
        ) from None
    return value


def _dict(cfg: dict, key: str) -> dict:
    return _typed(cfg, key, dict, {}, "an object")


def _first_int(cfg: dict, keys: tuple[str, ...], default: Any = _MISSING, minimum: int = 1) -> int:
    for key in keys:
        if cfg.get(key) is not None:
            return _int(cfg, key, minimum=minimum)
    if default is _MISSING:
        raise InvalidInputError(f"config.json lacks {keys[0]}; is it a decoder-only language model config?")
    return default


#: model_types whose MLP is two matrices (up, down: GELU), not a gated SwiGLU/GeGLU's three, each from its
#: transformers modeling file (Starcoder2MLP c_fc/c_proj, GPTNeoXMLP dense_h_to_4h/4h_to_h, PhiMLP fc1/fc2,
#: FalconMLP, GPTBigCodeMLP, GPT2MLP, OPT fc1/fc2, BloomMLP, MptMLP, GPTJMLP, CodeGenMLP).
NON_GATED_MLP = frozenset(
    {"starcoder2", "gpt_neox", "phi", "falcon", "gpt_bigcode", "gpt2", "opt", "bloom", "mpt", "gptj", "codegen"}
)


def model_from_hf_config(
    config: dict[str, Any],
    name: str,
    hf_id: str = "",
    source: str = "",
    aliases: tuple[str, ...] = (),
    published_params: int | None = None,
    published_params_source: str = "",
) -> tuple[Model, list[str]]:
    """A ``Model`` from a config.json dict, and the notes on what was assumed."""
    if not isinstance(config, dict):
        raise InvalidInputError("config.json must hold a JSON object")
    outer = config
    text = _dict(config, "text_config")
    cfg = _Tracked({**config, **text})
    notes: list[str] = []
    model_type = _str(cfg, "model_type", _str(outer, "model_type"))
    if model_type.startswith("gemma3") or _str(outer, "model_type").startswith("gemma3"):
        for key, value in GEMMA3_TEXT_DEFAULTS.items():
            if key not in cfg and not (key == "sliding_window_pattern" and "layer_types" in cfg):
                cfg[key] = value
                notes.append(f"{key} absent: {value:,} (Gemma3TextConfig's default)")
    missing = [k for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size") if k not in cfg]
    if missing:
        raise InvalidInputError(f"config.json lacks {', '.join(missing)}; is it a decoder-only language model config?")
    heads = _int(cfg, "num_attention_heads")
    hidden = _int(cfg, "hidden_size")
    layers = _int(cfg, "num_hidden_layers")
    if model_type == "falcon" and "num_key_value_heads" not in cfg:  # FalconConfig: num_kv_heads, multi_query
        if "num_kv_heads" in cfg:
            cfg["num_key_value_heads"] = cfg["num_kv_heads"]
        elif cfg.get("multi_query", True) and not cfg.get("new_decoder_architecture"):
            cfg["num_key_value_heads"] = 1
            notes.append("multi_query: one KV head (Falcon's multi-query attention)")
    if "num_key_value_heads" not in cfg:
        notes.append("num_key_value_heads absent: MHA (KV heads = attention heads)")
    kv_heads = _int(cfg, "num_key_value_heads", default=heads)
    head_dim = _int(cfg, "head_dim", default=None)
    if head_dim is None:
        head_dim = hidden // heads
        if cfg.get("kv_lora_rank") is None:  # MLA: qk_nope_head_dim + qk_rope_head_dim (``_mla``)
            notes.append(f"head_dim absent: hidden_size / heads = {head_dim}")
    dtype = _str(cfg, "torch_dtype", _str(cfg, "dtype", _str(outer, "torch_dtype", _str(outer, "dtype", "bfloat16"))))
    native = _DTYPES.get(dtype, "bf16")
    if dtype not in _DTYPES:
        notes.append(f"torch_dtype {dtype!r} not recognised: bf16 assumed")
    if native == "fp32":  # vLLM's --dtype auto: "FP16 precision for FP32 and FP16 models"; Gemma 2 and 3 in BF16
        native = "bf16" if model_type.startswith(("gemma2", "gemma3")) else "fp16"
        notes.append(
            f"torch_dtype float32: served in 16 bits ({native}), as vLLM's --dtype auto downcasts a float32 "
            "checkpoint (give -w fp32 to plan 32-bit weights)"
        )
    quant = _dict(outer, "quantization_config") or _dict(cfg, "quantization_config")
    method = _str(quant, "quant_method")
    expert_precision = None
    block_size = None
    quantized = _quantized(method, quant)
    if method == "mxfp4":
        expert_precision = "mxfp4"
    elif quantized is not None:
        native = quantized
        block = quant.get("weight_block_size")
        if isinstance(block, list) and block and all(isinstance(b, int) and b > 0 for b in block):
            block_size = max(block)  # [128, 128]: engines check both dims against the same 128
        if method != "fp8":
            notes.append(f"quantization_config {method}: weights in {native}")
    elif method:
        notes.append(f"quantization_config quant_method {method!r} is not modelled: weights counted at {native}")
    is_llama4 = model_type.startswith("llama4")
    dense_width_keys = ("intermediate_size_mlp", "intermediate_size") if is_llama4 else ("intermediate_size", "ffn_dim")
    if not any(cfg.get(k) is not None for k in dense_width_keys) and cfg.get("block_configs") is None:
        notes.append(f"intermediate_size absent: 4 x hidden_size = {4 * hidden}")
    entry: dict[str, Any] = {
        "name": name,
        "aliases": list(aliases),
        "hf_id": hf_id,
        "family": model_type,
        "num_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": _first_int(cfg, dense_width_keys, default=min(4 * hidden, _MAX_SIZE)),
        "vocab_size": _int(cfg, "vocab_size"),
        "tie_word_embeddings": _bool(cfg, "tie_word_embeddings", _bool(outer, "tie_word_embeddings", False)),
        "max_context": _first_int(cfg, _CONTEXT_KEYS, default=4096),
        "native_precision": native,
        "attention_bias": _bool(cfg, "attention_bias", model_type.startswith("qwen2")),
        "qk_norm": model_type.startswith(("qwen3", "gemma3"))
        or (model_type.startswith("glm4_moe") and _bool(cfg, "use_qk_norm", False)),
        "source": source or (f"https://huggingface.co/{hf_id}/blob/main/config.json" if hf_id else "config.json"),
    }
    if cfg.get("model_max_length") is not None and not any(cfg.get(k) is not None for k in _CONTEXT_KEYS[:3]):
        notes.append(
            f"max_position_embeddings absent: model_max_length {entry['max_context']:,} is the trained context"
        )
    if not any(k in cfg for k in _CONTEXT_KEYS):
        notes.append(
            "max_position_embeddings absent: a trained context of 4,096 tokens assumed (a longer context is flagged "
            "as past it); give the model's own in the entry's max_context"
        )
    if "tie_word_embeddings" not in cfg and "tie_word_embeddings" not in outer:
        default_tied = model_type.startswith(("gemma",))
        entry["tie_word_embeddings"] = default_tied
        notes.append(f"tie_word_embeddings absent: assumed {'tied (Gemma default)' if default_tied else 'untied'}")
    if expert_precision:
        entry["native_expert_precision"] = expert_precision
    if block_size:
        entry["weight_block_size"] = block_size
    if model_type in NON_GATED_MLP:
        entry["gated_mlp"] = False
        notes.append(f"model_type {model_type}: a two-matrix MLP (not gated), as its transformers model has")
    if model_type.startswith("gpt_oss"):
        entry.update(attention_output_bias=True, attention_sinks=True)
    if model_type.startswith(("gemma2", "gemma3")):
        entry["norms_per_layer"] = 4
    if model_type == "cohere":  # one LayerNorm feeds attention and MLP in parallel
        entry["norms_per_layer"] = 1
    _sliding(cfg, entry, layers, model_type, notes)
    _chunked(cfg, entry, layers, notes)
    _moe(cfg, entry, model_type, notes)
    _mla(cfg, entry)
    _linear_attention(cfg, entry, layers, model_type, notes)
    _kimi_delta_attention(cfg, entry, layers, notes)
    _mamba(cfg, entry, layers, notes)
    _nas(cfg, entry, layers, notes)
    _sparse_attention(cfg, entry, notes)
    _refuse_unread_layout(cfg, entry, notes)
    try:
        draft = Model(**entry, published_params_total=1, published_params_source="(computed)")
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(map(str, err["loc"])) or "(entry)"
        raise InvalidInputError(
            f"config.json gives an invalid model: field '{where}': {err['msg'].removeprefix('Value error, ')}"
        ) from None
    total, active = param_counts(draft)
    if total > _MAX_PARAMS:
        raise InvalidInputError(f"config.json describes {total:.3g} parameters; more than {_MAX_PARAMS:.0e} is refused")
    if published_params is not None and quantized in PACKED and abs(published_params / total - 1) > 0.02:
        notes.append(
            f"the stored element count ({published_params:,}) counts packed {quantized} weights, not parameters: the "
            "computed count is recorded"
        )
        entry["published_params_total"] = total
        entry["published_params_source"] = (
            f"computed by planner catalog import-hf from config.json (the safetensors hold packed {quantized} weights)"
        )
    elif published_params is None:
        entry["published_params_total"] = total
        entry["published_params_source"] = (
            "computed by planner catalog import-hf from config.json (no published count given)"
        )
        notes.append("no parameter count given (--params) or found in safetensors: the computed count is recorded")
    if "published_params_total" not in entry:
        entry["published_params_total"] = int(published_params)
        entry["published_params_source"] = published_params_source or "given to planner catalog import-hf --params"
        embedding = entry["vocab_size"] * hidden
        if entry["tie_word_embeddings"] and published_params == total + embedding:
            entry["published_total_includes_tied_copy"] = True
            notes.append("the stored count includes a copy of the tied output head (vocab x hidden)")
    if draft.moe is not None:
        entry["published_params_active"] = active
        if "computed" not in entry["published_params_source"]:  # the total was given; the active count was not
            entry["published_params_source"] += "; published_params_active computed from config.json by planner"
    return Model(**entry), notes


#: Formats whose safetensors store several weights in one element (int32 words of 4-bit values, uint8 of two FP4).
PACKED = ("int4", "w8a16", "nvfp4")


def _quantized(method: str, quant: dict) -> str | None:
    """The weight precision a ``quantization_config`` states, as planner names it, or None where it is not read:
    fp8 (``fp8``, ``fbgemm_fp8``; compressed-tensors with 8-bit float weights; ModelOpt ``FP8``), nvfp4
    (compressed-tensors 4-bit float, ModelOpt ``NVFP4``), int4 (GPTQ / AWQ 4 bits; compressed-tensors 4-bit int,
    W4A16), w8a16 (GPTQ 8 bits; compressed-tensors 8-bit int weights alone), int8 (compressed-tensors W8A8 int)."""
    if method in _QUANT_METHODS and method != "mxfp4":
        return _QUANT_METHODS[method]
    if method in ("gptq", "awq"):
        bits = quant.get("bits", quant.get("w_bit"))
        return {4: "int4", 8: "w8a16"}.get(bits) if isinstance(bits, int) else None

    def table(parent: Any, key: str) -> dict:  # a hostile config's table may be anything: not read then
        value = parent.get(key) if isinstance(parent, dict) else None
        return value if isinstance(value, dict) else {}

    if method == "modelopt":
        algo = str(quant.get("quant_algo", table(quant, "quantization").get("quant_algo", ""))).upper()
        return {"FP8": "fp8", "NVFP4": "nvfp4"}.get(algo)
    if method == "compressed-tensors":
        groups = table(quant, "config_groups")
        first = next(iter(groups.values()), {}) if groups else {}
        weights, acts = table(first, "weights"), table(first, "input_activations")
        bits, kind = weights.get("num_bits"), weights.get("type")
        if kind == "float":
            return {8: "fp8", 4: "nvfp4"}.get(bits)
        if kind == "int":
            return {4: "int4", 8: "int8" if acts else "w8a16"}.get(bits)
    return None


def _sliding(cfg: dict, entry: dict, layers: int, model_type: str, notes: list[str]) -> None:
    window = _int(cfg, "sliding_window", default=None)
    if not window or cfg.get("use_sliding_window") is False:
        return
    if window >= entry["max_context"]:
        notes.append(f"sliding_window {window} is not below max_position_embeddings: no layer is windowed")
        return
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        if len(layer_types) != layers or not all(isinstance(t, str) for t in layer_types):
            raise InvalidInputError(f"config.json: layer_types must list {layers} strings, one per layer")
        count = sum(1 for t in layer_types if "sliding" in t)
        pattern = "per config layer_types"
    elif cfg.get("sliding_window_pattern") is not None:
        every = _int(cfg, "sliding_window_pattern")
        count = layers - layers // every
        pattern = f"{every - 1} of every {every} layers (sliding_window_pattern {every})"
    elif model_type.startswith("gemma2"):
        count, pattern = layers // 2, "every other layer (Gemma 2)"
    elif cfg.get("max_window_layers") is not None and model_type.startswith("qwen"):
        first = _int(cfg, "max_window_layers", minimum=0)
        count = max(0, layers - first)
        pattern = f"layers from max_window_layers {first}"
    else:
        count, pattern = layers, "all layers"
    if count:
        entry.update(sliding_window=window, sliding_window_layers=count, sliding_window_pattern=pattern)
        notes.append(f"sliding window {window} on {count} of {layers} layers ({pattern})")


def _chunked(cfg: dict, entry: dict, layers: int, notes: list[str]) -> None:
    """Llama 4: layers that apply RoPE (no_rope_layers[i] == 1) use chunked attention; the NoPE layers are global."""
    chunk = _int(cfg, "attention_chunk_size", default=None)
    if not chunk:
        return
    flags = cfg.get("no_rope_layers")
    if isinstance(flags, list) and flags:
        if len(flags) != layers or any(f not in (0, 1) or isinstance(f, float) for f in flags):
            raise InvalidInputError(f"config.json: no_rope_layers must list {layers} values of 0 or 1")
        count = sum(1 for f in flags if f == 1)
        pattern = "layers with no_rope_layers 1 (RoPE) use chunked attention; the NoPE layers attend globally"
    else:
        every = _int(cfg, "no_rope_layer_interval", default=4)
        count = layers - layers // every
        pattern = f"{every - 1} of every {every} layers (no_rope_layer_interval {every}); every {every}th is global"
    if count:
        entry.update(attention_chunk_size=chunk, chunked_attention_layers=count, chunked_attention_pattern=pattern)
        notes.append(f"chunked attention ({chunk} tokens) on {count} of {layers} layers")


def _moe(cfg: dict, entry: dict, model_type: str, notes: list[str]) -> None:
    experts = _first_int(cfg, ("num_local_experts", "num_experts", "n_routed_experts"), default=0, minimum=0)
    if not experts:
        return
    top_k_keys = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_top_k", "top_k")
    if not any(cfg.get(k) is not None for k in top_k_keys):
        notes.append("num_experts_per_tok absent: 2 experts per token assumed (Mixtral's); give the model's own")
    per_token = _first_int(cfg, top_k_keys, default=2)
    if model_type.startswith("llama4"):
        expert_width = _int(cfg, "intermediate_size")
    else:
        expert_width = _int(cfg, "moe_intermediate_size", default=entry["intermediate_size"])
    only_dense = cfg.get("mlp_only_layers")
    if only_dense not in (None, []):
        raise InvalidInputError("config.json: mlp_only_layers lists dense layers; only an empty list is supported")
    moe: dict[str, Any] = {
        "num_experts": experts,
        "experts_per_token": per_token,
        "expert_intermediate_size": expert_width,
        "dense_layers": _int(cfg, "first_k_dense_replace", default=0, minimum=0),
        "layer_step": _first_int(cfg, ("interleave_moe_layer_step", "decoder_sparse_step"), default=1),
    }
    if _int(cfg, "moe_layer_freq", default=1) != 1:  # DeepSeek: MoE where i % freq == 0, not modelled
        raise InvalidInputError("config.json: moe_layer_freq other than 1 is not supported")
    shared = _first_int(cfg, ("n_shared_experts", "num_shared_experts"), default=0, minimum=0)
    shared_width = _int(cfg, "shared_expert_intermediate_size", default=0, minimum=0)
    if shared:
        moe.update(num_shared_experts=shared, shared_expert_intermediate_size=expert_width)
    elif shared_width:
        moe.update(num_shared_experts=1, shared_expert_intermediate_size=shared_width)
    elif model_type.startswith("llama4"):  # Llama4TextMoe always has one shared expert of the expert width
        moe.update(num_shared_experts=1, shared_expert_intermediate_size=expert_width)
    if model_type.startswith("gpt_oss"):
        moe.update(expert_bias=True, router_bias=True)
    if cfg.get("topk_method") == "noaux_tc" or model_type.startswith("glm4_moe"):
        moe["router_bias"] = True  # e_score_correction_bias
    dense_layers, step = moe["dense_layers"], moe["layer_step"]
    if (
        -(-(dense_layers + 1) // step) * step > entry["num_layers"]
    ):  # the first MoE layer i + 1 = k x step is past the end
        notes.append(
            f"{experts} experts stated but no layer is MoE (first_k_dense_replace {dense_layers}, "
            f"{entry['num_layers']} layers): imported as a dense model"
        )
        return
    entry["moe"] = moe
    notes.append(f"MoE: {experts} experts, {per_token} per token, expert width {expert_width}")


def _linear_attention(cfg: dict, entry: dict, layers: int, model_type: str, notes: list[str]) -> None:
    """Qwen3-Next / Qwen3.5 Gated DeltaNet layers: layer_types 'linear_attention' (else all but every
    full_attention_interval-th layer), linear_* heads and dims, mamba_ssm_dtype float32 -> a 4-byte state."""
    if cfg.get("linear_num_value_heads") is None:
        return
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        if len(layer_types) != layers or not all(isinstance(t, str) for t in layer_types):
            raise InvalidInputError(f"config.json: layer_types must list {layers} strings, one per layer")
        count, pattern = sum(1 for t in layer_types if "linear" in t), "per config layer_types"
    else:
        every = _int(cfg, "full_attention_interval", default=4)
        count, pattern = layers - layers // every, f"all but every {every}th layer (full_attention_interval)"
    if not count:
        return
    entry["linear_attention"] = {
        "layers": count,
        "pattern": pattern,
        "num_key_heads": _int(cfg, "linear_num_key_heads"),
        "num_value_heads": _int(cfg, "linear_num_value_heads"),
        "key_head_dim": _int(cfg, "linear_key_head_dim"),
        "value_head_dim": _int(cfg, "linear_value_head_dim"),
        "conv_kernel": _int(cfg, "linear_conv_kernel_dim", default=4),
        "state_bytes_per_element": 4 if cfg.get("mamba_ssm_dtype") == "float32" else 2,
    }
    entry["attention_output_gate"] = _bool(cfg, "attn_output_gate", model_type.startswith("qwen3_next"))
    moe = entry.get("moe")
    if moe is not None and moe.get("num_shared_experts"):  # Qwen2-MoE-style sigmoid gate on the shared expert
        moe["shared_expert_gate"] = True
    notes.append(f"linear attention (Gated DeltaNet) on {count} of {layers} layers: a fixed state per sequence")


def _kimi_delta_attention(cfg: dict, entry: dict, layers: int, notes: list[str]) -> None:
    """Kimi Linear (model_type kimi_linear): ``linear_attn_config`` lists the Kimi Delta Attention layers (``kda_layers``,
    1-based) and the full-attention (MLA) ones (``full_attn_layers``), with ``num_heads``, ``head_dim`` and
    ``short_conv_kernel_size``. A KDA layer keeps, per sequence, a recurrent state of heads x head dim x head dim and
    q, k and v short-conv states of (kernel - 1) x heads x head dim each (vLLM ``MambaStateShapeCalculator.
    kda_state_shape``): the Gated DeltaNet form with as many key as value heads, so it is written as
    ``linear_attention``. The recurrent state is float32 whatever the model's dtype (vLLM
    ``MambaStateDtypeCalculator.kda_state_dtype`` returns torch.float32 for it), the conv states the model's."""
    table = cfg.get("linear_attn_config")
    if table is None:
        return
    if not isinstance(table, dict):
        raise InvalidInputError(f"config.json: linear_attn_config must be an object, got {_describe(table)}")
    kda = table.get("kda_layers")
    full = table.get("full_attn_layers", [])
    for key, value in (("kda_layers", kda), ("full_attn_layers", full)):
        if not isinstance(value, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) and 1 <= i <= layers for i in value
        ):
            raise InvalidInputError(
                f"config.json: linear_attn_config.{key} must list layer numbers from 1 to {layers}, got {_describe(value)}"
            )
    if len(set(kda)) != len(kda) or set(kda) & set(full) or (full and len(kda) + len(full) != layers):
        raise InvalidInputError(
            f"config.json: linear_attn_config's kda_layers ({len(kda)}) and full_attn_layers ({len(full)}) must share no "
            f"layer and together list all {layers}"
        )
    if not kda:
        return
    try:
        heads, dim = _int(table, "num_heads"), _int(table, "head_dim")
        kernel = _int(table, "short_conv_kernel_size", default=4)
    except InvalidInputError as exc:
        raise InvalidInputError(f"config.json: linear_attn_config.{str(exc).removeprefix('config.json: ')}") from None
    shown = ", ".join(map(str, full[:3])) + (f", ..., {full[-1]}" if len(full) > 3 else "")
    entry["linear_attention"] = {
        "layers": len(kda),
        "pattern": f"Kimi Delta Attention on linear_attn_config.kda_layers; full attention on full_attn_layers {shown}",
        "num_key_heads": heads,
        "num_value_heads": heads,
        "key_head_dim": dim,
        "value_head_dim": dim,
        "conv_kernel": kernel,
        "state_bytes_per_element": 4,
    }
    notes.append(
        f"linear attention (Kimi Delta Attention) on {len(kda)} of {layers} layers: a fixed state per sequence "
        "(float32 recurrent state); its parameters are counted as Gated DeltaNet's (the same q, k, v, conv and output "
        "shapes; KDA's low-rank gates differ by well under 1% of the total)"
    )


#: Config keys that give the trained context, in the order they are read (``model_max_length``: Kimi Linear's).
_CONTEXT_KEYS = ("max_position_embeddings", "max_sequence_length", "seq_length", "model_max_length")


class _Tracked(dict):
    """A config dict that remembers which keys were looked at (``get``, ``[]``, ``in``): what the importer read."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.read: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(key)
        return super().__contains__(key)


#: Families of config keys that change a layer's mixer (attention, linear attention, a state-space model) or its MLP,
#: so its memory and time: a key of one the importer did not read means the layers are not the ones it would write
#: (a hybrid imported as full attention: trial 18 F2). A family counts as read where the entry holds what it maps to.
LAYOUT_KEY_FAMILIES: dict[str, tuple[str, str]] = {
    "linear attention (MiniMax lightning, Kimi Delta, RWKV, retention)": (
        r"linear_attn|linear_(num|key|value|conv)|attn_type|lightning|kda|rwkv|retention|time_mix|short_conv|"
        r"conv_l_cache",
        "linear_attention",
    ),
    "a state-space (Mamba) mixer": (r"mamba|ssm|d_state|d_conv|time_step|layers_block_type|hybrid", "mamba"),
    "an attention / mixer layer layout": (
        r"attn_layer_|attention_layer_|attn_layers|full_attn|global_attn|local_attn|swa_|layer_pattern|"
        r"block_type|kv_shared|kv_sharing|cross_layer|cross_attention",
        "",
    ),
    "shared or interleaved experts": (
        r"shared_expert|shared_intermediate|num_shared|expert_layer_|expert_interval",
        "",
    ),
}
#: ``layer_types`` values the importer maps (sliding and full attention; Llama 4's chunked; linear where it reads
#: the linear-attention keys); any other (mamba, conv, ...) is a layer it would plan as attention.
_MAPPED_LAYER_TYPES = {"full_attention", "attention", "sliding_attention", "chunked_attention", "global", "local"}
#: Keys read elsewhere or known not to change memory or time (token ids, norms' epsilons, RoPE, dropout, routing
#: rules, a multimodal config's other towers): not listed in the "not read" note.
_HARMLESS = re.compile(
    r"^(architectures|auto_map|model_type|transformers_version|_name_or_path|use_cache|torch_dtype|dtype|"
    r".*token_ids?|.*token_index|.*_eps(ilon)?|initializer_range|.*init.*|rope_.*|rotary_.*|partial_rotary_factor|"
    r"use_rope|.*dropout|.*pdrop|hidden_act|hidden_activation|activation_function|.*act_fn|tokenizer_class|"
    r"vision_config|audio_config|vision_.*|image_.*|video_.*|audio_.*|text_config|mm_.*|"
    r"router_.*|output_router_logits|norm_topk_prob|scoring_func|routed_scaling_factor|n_group|topk_group|"
    r"num_expert_group|moe_router_.*|moe_renormalize|ep_size|aux_loss.*|.*_loss_coef|"
    r"num_nextn_predict_layers|mtp_.*|tie_.*|pretraining_tp|is_.*|return_dict|torchscript|output_.*|"
    r"use_return_dict|chunk_size_feed_forward|bad_words_ids|max_length|min_length|.*logit.*|.*_multiplier|"
    r"attention_out_bias|mlp_bias|bias|use_bias|.*_scale|.*scaling.*|rms_norm.*|layer_norm.*|norm_.*|.*_norm|"
    r"postnorm|prenorm|mla_use_nope|qk_layernorm|use_qkv_bias|quantization_config|sliding_window.*|"
    r"use_sliding_window|max_window_layers|layer_types|task_specific_params|problem_type|id2label|label2id|"
    r"finetuning_task|prefix|suffix|.*_prefix|.*_suffix|architecture|name_or_path|model_name)$"
)


def _states(value: Any) -> bool:
    """Whether a config value states something: not null, false, 0 or empty (``add_cross_attention: false``, MiniMax's
    ``shared_intermediate_size: 0`` change nothing)."""
    return value not in (None, False, 0, "") and value != [] and value != {}


def _refuse_unread_layout(cfg: _Tracked, entry: dict, notes: list[str]) -> None:
    """Refuse a config whose layer layout the importer did not read (trial 18 F2: Kimi Linear's KDA layers,
    MiniMax's attn_type_list, Falcon-H1's parallel Mamba heads and Jamba's attn_layer_period came in as full
    attention, with no word); note the other keys it did not read."""
    unread = sorted(k for k in cfg if isinstance(k, str) and k not in cfg.read)
    layout: list[str] = []
    seen: set[str] = set()
    for family, (pattern, mapped) in LAYOUT_KEY_FAMILIES.items():
        if mapped and mapped in entry:
            continue
        hits = [k for k in unread if re.search(pattern, k.lower()) and _states(super(_Tracked, cfg).get(k))]
        hits = [k for k in hits if k not in seen]
        seen.update(hits)
        if hits:
            layout.append(f"{', '.join(hits)} ({family})")
    types = super(_Tracked, cfg).get("layer_types")
    if isinstance(types, list):
        mapped_types = _MAPPED_LAYER_TYPES | ({"linear_attention"} if "linear_attention" in entry else set())
        odd = sorted({str(t) for t in types if str(t) not in mapped_types})
        if odd:
            layout.append(f"layer_types {', '.join(repr(t) for t in odd)} (layers that are not attention)")
    if layout:
        raise InvalidInputError(
            "config.json: planner catalog import-hf cannot read this model's layer layout: "
            + "; ".join(layout)
            + ". It reads decoder layers of full, sliding-window or chunked attention (MHA, GQA, MQA or MLA), "
            "Gated DeltaNet linear attention (Qwen3-Next's linear_* keys), Kimi Delta Attention (linear_attn_config), "
            "Mamba-2 hybrids (Nemotron-H's hybrid_override_pattern), DeciLM block_configs and MoE MLPs "
            "(n_shared_experts / shared_expert_intermediate_size); imported, every layer would be planned as "
            "attention. Write the entry by hand (docs/catalog.md, 'Models the importer refuses')"
        )
    other = [k for k in unread if not _HARMLESS.match(k)]
    if other:
        shown = ", ".join(other[:12]) + (f" and {len(other) - 12} more" if len(other) > 12 else "")
        notes.append(f"config keys not read (none of them is a layer-layout key the importer knows of): {shown}")


def _mamba(cfg: dict, entry: dict, layers: int, notes: list[str]) -> None:
    """Nemotron-H Mamba-2 hybrids (model_type nemotron_h): hybrid_override_pattern (M, *, -, E per block),
    mamba_num_heads, mamba_head_dim, ssm_state_size, n_groups, conv_kernel; squared-ReLU MLPs (up and down), one norm
    per block; MoE blocks with moe_shared_expert_intermediate_size and an expert-bias router."""
    pattern = cfg.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or cfg.get("mamba_num_heads") is None:
        return
    if len(pattern) != layers:
        raise InvalidInputError(
            f"config.json: hybrid_override_pattern has {len(pattern)} blocks but num_hidden_layers is {layers}"
        )
    entry["mamba"] = {
        "pattern": pattern,
        "num_heads": _int(cfg, "mamba_num_heads"),
        "head_dim": _int(cfg, "mamba_head_dim"),
        "state_size": _int(cfg, "ssm_state_size"),
        "n_groups": _int(cfg, "n_groups", default=8),
        "conv_kernel": _int(cfg, "conv_kernel", default=4),
        "conv_bias": _bool(cfg, "use_conv_bias", True),
        "ssm_state_bytes_per_element": 4 if cfg.get("mamba_ssm_cache_dtype") == "float32" else 2,
    }
    entry.update(gated_mlp=False, norms_per_layer=1)
    moe = entry.get("moe")
    if moe is not None:
        shared = _int(cfg, "moe_shared_expert_intermediate_size", default=0, minimum=0)
        if shared:
            moe.update(num_shared_experts=1, shared_expert_intermediate_size=shared)
        moe.update(router_bias=True, dense_layers=0, layer_step=1)  # e_score_correction_bias; the pattern places E
    notes.append(
        f"Mamba-2 hybrid: {pattern.count('M')} Mamba-2, {pattern.count('*')} attention, {pattern.count('-')} MLP and "
        f"{pattern.count('E')} MoE blocks; only attention blocks cache tokens"
    )


def decilm_ffn_width(ffn_mult: float, hidden: int) -> int:
    """A DeciLM layer's SwiGLU width: int(2 x ffn_mult x hidden / 3) rounded up to a multiple of 256 (vLLM
    vllm/model_executor/models/nemotron_nas.py ``_ffn_mult_to_intermediate_size``, commit 00bd1493). 5.25 x 8192:
    28,672 (Llama-3.3-70B's width); 0.5 x 8192: 2,730 -> 2,816."""
    width = int(2 * ffn_mult * hidden / 3)
    return width if width % 256 == 0 else width + 256 - width % 256


def _nas(cfg: dict, entry: dict, layers: int, notes: list[str]) -> None:
    """DeciLM / NemotronNAS (model_type nemotron-nas: Llama-3.3-Nemotron-Super-49B-v1): ``block_configs``, one per
    layer, each with attention {no_op, replace_with_linear, n_heads_in_group} and ffn {no_op, replace_with_linear,
    ffn_mult (or intermediate_size)}; KV heads = num_attention_heads // n_heads_in_group (vLLM
    ``DeciLMDecoderLayer``). Per-layer windows, sinks and sparsity are refused (not modelled)."""
    blocks = cfg.get("block_configs")
    if blocks is None:
        return
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise InvalidInputError("config.json: block_configs must be a list of objects, one per layer")
    if len(blocks) != layers:
        raise InvalidInputError(
            f"config.json: block_configs has {len(blocks)} entries but num_hidden_layers is {layers}"
        )
    heads, hidden = entry["num_attention_heads"], entry["hidden_size"]
    kv_heads: list[int] = []
    widths: list[int] = []
    attention_linear: list[int] = []
    ffn_linear: list[int] = []
    for i, block in enumerate(blocks):
        where = f"block_configs[{i}]"
        try:
            attention, ffn = _dict(block, "attention"), _dict(block, "ffn")
            for part, table in (("attention", attention), ("ffn", ffn)):
                for key in ("window_length", "num_sink_tokens", "sparsify"):
                    if table.get(key) not in (None, False):
                        raise InvalidInputError(f"{part}.{key} = {_describe(table[key])} is not modelled")
            if _bool(attention, "no_op", False):
                kv_heads.append(0)
            elif _bool(attention, "replace_with_linear", False):
                kv_heads.append(0)
                attention_linear.append(i)
            else:
                group = _int(attention, "n_heads_in_group")
                if heads % group:
                    raise InvalidInputError(f"attention.n_heads_in_group {group} does not divide {heads} heads")
                kv_heads.append(heads // group)
            if _bool(ffn, "no_op", False):
                widths.append(0)
            elif _bool(ffn, "replace_with_linear", False):
                widths.append(0)
                ffn_linear.append(i)
            elif ffn.get("ffn_mult") is not None:
                mult = ffn["ffn_mult"]
                if isinstance(mult, bool) or not isinstance(mult, (int, float)) or not 0 < mult < 1e4:
                    raise InvalidInputError(f"ffn.ffn_mult must be a number above 0, got {_describe(mult)}")
                widths.append(decilm_ffn_width(float(mult), hidden))
            else:
                widths.append(_int(ffn, "intermediate_size"))
        except InvalidInputError as exc:
            raise InvalidInputError(f"config.json {where}: {str(exc).removeprefix('config.json: ')}") from None
    entry["nas"] = {
        "kv_heads": kv_heads,
        "ffn_intermediate": widths,
        "attention_linear": attention_linear,
        "ffn_linear": ffn_linear,
    }
    if any(kv_heads):
        entry["num_kv_heads"] = math.gcd(*kv_heads)
    if any(widths):
        entry["intermediate_size"] = max(widths)
    cached = sum(1 for k in kv_heads if k)
    notes.append(
        f"NAS-pruned (DeciLM block_configs): {cached} of {layers} layers with attention (a KV cache), "
        f"{len(attention_linear)} with a linear in its place; {sum(1 for w in widths if w)} SwiGLU MLPs of "
        f"{min((w for w in widths if w), default=0):,} to {max(widths, default=0):,}"
    )


def _sparse_attention(cfg: dict, entry: dict, notes: list[str]) -> None:
    """DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): index_topk, index_n_heads, index_head_dim on an MLA model."""
    if cfg.get("index_topk") is None or "mla" not in entry:
        return
    entry["sparse_attention"] = {
        "top_k": _int(cfg, "index_topk"),
        "index_n_heads": _int(cfg, "index_n_heads", default=64),
        "index_head_dim": _int(cfg, "index_head_dim", default=128),
    }
    notes.append(f"DeepSeek Sparse Attention: each query attends to {entry['sparse_attention']['top_k']} tokens")


def _mla(cfg: dict, entry: dict) -> None:
    if cfg.get("kv_lora_rank") is None:
        return
    missing = [k for k in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim") if cfg.get(k) is None]
    if missing:
        raise InvalidInputError(f"config.json gives kv_lora_rank (MLA) without {', '.join(missing)}")
    q_lora = _int(cfg, "q_lora_rank", default=None)
    entry["mla"] = {
        "kv_lora_rank": _int(cfg, "kv_lora_rank"),
        "qk_rope_head_dim": _int(cfg, "qk_rope_head_dim"),
        "qk_nope_head_dim": _int(cfg, "qk_nope_head_dim"),
        "v_head_dim": _int(cfg, "v_head_dim"),
        "q_lora_rank": q_lora,
    }
    entry["head_dim"] = entry["mla"]["qk_nope_head_dim"] + entry["mla"]["qk_rope_head_dim"]
