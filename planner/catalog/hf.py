"""Turn a Hugging Face ``config.json`` into a catalog model entry.

Pure: a dict in, a validated ``Model`` out. Multimodal configs use their ``text_config``; fields a config
does not state take the transformers defaults named in the code (each default is reported as a note).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from planner.architecture import param_counts
from planner.catalog.schema import Model
from planner.errors import InvalidInputError

_DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float8_e4m3fn": "fp8"}


def _first(cfg: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if cfg.get(k) is not None:
            return cfg[k]
    return default


def model_from_hf_config(
    config: dict[str, Any],
    name: str,
    hf_id: str = "",
    source: str = "",
    aliases: tuple[str, ...] = (),
    published_params: int | None = None,
) -> tuple[Model, list[str]]:
    """A ``Model`` from a config.json dict, and the notes on what was assumed."""
    if not isinstance(config, dict):
        raise InvalidInputError("config.json must hold a JSON object")
    outer = config
    cfg = {**config, **config["text_config"]} if isinstance(config.get("text_config"), dict) else dict(config)
    notes: list[str] = []
    model_type = str(cfg.get("model_type", outer.get("model_type", "")))
    missing = [k for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size") if k not in cfg]
    if missing:
        raise InvalidInputError(f"config.json lacks {', '.join(missing)}; is it a decoder-only language model config?")
    heads = int(cfg["num_attention_heads"])
    hidden = int(cfg["hidden_size"])
    layers = int(cfg["num_hidden_layers"])
    kv_heads = int(_first(cfg, "num_key_value_heads", default=heads))
    if "num_key_value_heads" not in cfg:
        notes.append("num_key_value_heads absent: MHA (KV heads = attention heads)")
    head_dim = _first(cfg, "head_dim")
    if head_dim is None:
        head_dim = hidden // heads
        notes.append(f"head_dim absent: hidden_size / heads = {head_dim}")
    dtype = str(_first(cfg, "torch_dtype", "dtype", default=_first(outer, "torch_dtype", "dtype", default="bfloat16")))
    native = _DTYPES.get(dtype, "bf16")
    quant = outer.get("quantization_config") or cfg.get("quantization_config") or {}
    expert_precision = None
    if quant.get("quant_method") == "mxfp4":
        expert_precision = "mxfp4"
    elif quant.get("quant_method") == "fp8":
        native = "fp8"
    entry: dict[str, Any] = {
        "name": name,
        "aliases": list(aliases),
        "hf_id": hf_id,
        "family": model_type,
        "num_layers": layers,
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_kv_heads": kv_heads,
        "head_dim": int(head_dim),
        "intermediate_size": int(_first(cfg, "intermediate_size", "ffn_dim", default=4 * hidden)),
        "vocab_size": int(cfg["vocab_size"]),
        "tie_word_embeddings": bool(cfg.get("tie_word_embeddings", outer.get("tie_word_embeddings", False))),
        "max_context": int(_first(cfg, "max_position_embeddings", "max_sequence_length", "seq_length", default=4096)),
        "native_precision": native,
        "attention_bias": bool(cfg.get("attention_bias", model_type.startswith("qwen2"))),
        "qk_norm": model_type.startswith("qwen3"),
        "source": source or (f"https://huggingface.co/{hf_id}/blob/main/config.json" if hf_id else "config.json"),
    }
    if "tie_word_embeddings" not in cfg and "tie_word_embeddings" not in outer:
        notes.append("tie_word_embeddings absent: assumed untied")
    if expert_precision:
        entry["native_expert_precision"] = expert_precision
    if model_type.startswith("gpt_oss"):
        entry.update(attention_output_bias=True, attention_sinks=True)
    if model_type.startswith(("gemma2", "gemma3")):
        entry["norms_per_layer"] = 4
    _sliding(cfg, entry, layers, model_type, notes)
    _moe(cfg, entry, notes)
    if cfg.get("kv_lora_rank"):
        entry["mla"] = {
            "kv_lora_rank": int(cfg["kv_lora_rank"]),
            "qk_rope_head_dim": int(cfg["qk_rope_head_dim"]),
            "qk_nope_head_dim": int(cfg["qk_nope_head_dim"]),
            "v_head_dim": int(cfg["v_head_dim"]),
            "q_lora_rank": int(cfg["q_lora_rank"]) if cfg.get("q_lora_rank") else None,
        }
        entry["head_dim"] = int(cfg["qk_nope_head_dim"]) + int(cfg["qk_rope_head_dim"])
    try:
        draft = Model(**entry, published_params_total=1, published_params_source="(computed)")
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InvalidInputError(
            f"config.json gives an invalid model: field '{'.'.join(map(str, err['loc']))}': {err['msg']}"
        ) from None
    total, active = param_counts(draft)
    if published_params is None:
        entry["published_params_total"] = total
        entry["published_params_source"] = (
            "computed by planner catalog import-hf from config.json (no published count given)"
        )
        notes.append("no published parameter count given (--params): the computed count is recorded in its place")
    else:
        entry["published_params_total"] = int(published_params)
        entry["published_params_source"] = "given to planner catalog import-hf --params"
    if draft.moe is not None:
        entry["published_params_active"] = active
    return Model(**entry), notes


def _sliding(cfg: dict, entry: dict, layers: int, model_type: str, notes: list[str]) -> None:
    window = cfg.get("sliding_window")
    if not window or cfg.get("use_sliding_window") is False:
        return
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        count = sum(1 for t in layer_types if "sliding" in str(t))
        pattern = "per config layer_types"
    elif cfg.get("sliding_window_pattern"):
        every = int(cfg["sliding_window_pattern"])
        count = layers - layers // every
        pattern = f"{every - 1} of every {every} layers (sliding_window_pattern {every})"
    elif model_type.startswith("gemma2"):
        count, pattern = layers // 2, "every other layer (Gemma 2)"
    elif cfg.get("max_window_layers") is not None and model_type.startswith("qwen"):
        count = max(0, layers - int(cfg["max_window_layers"]))
        pattern = f"layers from max_window_layers {cfg['max_window_layers']}"
    else:
        count, pattern = layers, "all layers"
    if count:
        entry.update(sliding_window=int(window), sliding_window_layers=count, sliding_window_pattern=pattern)
        notes.append(f"sliding window {window} on {count} of {layers} layers ({pattern})")


def _moe(cfg: dict, entry: dict, notes: list[str]) -> None:
    experts = _first(cfg, "num_local_experts", "num_experts", "n_routed_experts")
    if not experts:
        return
    per_token = int(_first(cfg, "num_experts_per_tok", "experts_per_token", "num_experts_per_token", default=2))
    expert_width = int(_first(cfg, "moe_intermediate_size", default=entry["intermediate_size"]))
    moe: dict[str, Any] = {
        "num_experts": int(experts),
        "experts_per_token": per_token,
        "expert_intermediate_size": expert_width,
        "dense_layers": int(cfg.get("first_k_dense_replace", 0) or 0),
    }
    shared = cfg.get("n_shared_experts")
    if shared:
        moe.update(num_shared_experts=int(shared), shared_expert_intermediate_size=expert_width)
    elif cfg.get("shared_expert_intermediate_size"):
        moe.update(num_shared_experts=1, shared_expert_intermediate_size=int(cfg["shared_expert_intermediate_size"]))
    if str(cfg.get("model_type", "")).startswith("gpt_oss"):
        moe.update(expert_bias=True, router_bias=True)
    if cfg.get("topk_method") == "noaux_tc":
        moe["router_bias"] = True  # e_score_correction_bias
    entry["moe"] = moe
    notes.append(f"MoE: {experts} experts, {per_token} per token, expert width {expert_width}")
