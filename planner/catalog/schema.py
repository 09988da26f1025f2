"""Catalog entries: frozen pydantic models that forbid unknown keys.

Units are in the field names and are base units: bytes, bytes per second, FLOP per second, watts,
US dollars. "80 GB" cards carry ``memory_bytes = 80 * 2**30`` (the HBM stacks are binary-sized);
display code converts to SI (1 GB = 1e9 B) at the edges.

Every entry has a ``source`` for its numbers; a number with a different source names it in an extra
``*_source`` field beside it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, model_validator

#: Keys of ``Gpu.peak_flop_per_s``: dense (not 2:4-sparse) tensor-core peaks, except fp32 (CUDA cores).
PeakKey = Literal["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "int4"]


def normalize_name(name: str) -> str:
    """Matching key for catalog names: case, spaces, hyphens and underscores do not count.

    Dots do: "qwen2.5-7b" and "qwen2-57b" must stay apart.
    """
    return re.sub(r"[\s\-_]+", "", str(name)).lower()


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="canonical display name")
    aliases: tuple[str, ...] = ()
    source: str = Field(min_length=3, description="where the entry's numbers come from (URL or document)")
    notes: str = ""

    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class Price(BaseModel):
    """A price with its date and source; either a purchase price, a cloud rate, or both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    purchase_usd: PositiveFloat | None = None
    cloud_usd_per_gpu_hour: PositiveFloat | None = None
    date: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$", description="YYYY-MM or YYYY-MM-DD")
    source: str = Field(min_length=3)

    @model_validator(mode="after")
    def _has_a_price(self) -> Price:
        if self.purchase_usd is None and self.cloud_usd_per_gpu_hour is None:
            raise ValueError("give purchase_usd, cloud_usd_per_gpu_hour or both")
        return self


class Gpu(_Entry):
    """One accelerator SKU."""

    vendor: Literal["NVIDIA", "AMD", "Intel", "Google", "other"]
    architecture: str = ""
    memory_bytes: PositiveInt = Field(description="physical device memory, exact bytes (80 GiB for an '80 GB' card)")
    memory_type: str = ""
    engine_visible_memory_bytes: PositiveInt | None = Field(
        default=None,
        description="total that torch.cuda.mem_get_info / vLLM reports; smaller than nvidia-smi's total",
    )
    engine_visible_memory_source: str = ""
    hbm_bandwidth_bytes_per_s: PositiveFloat = Field(description="peak DRAM bandwidth, SI (3.35e12 for 3.35 TB/s)")
    peak_flop_per_s: dict[PeakKey, PositiveFloat] = Field(
        description="dense peak per math precision (FLOP/s, or OP/s for integer formats)"
    )
    interconnect: str = ""
    interconnect_bytes_per_s: PositiveFloat | None = Field(
        default=None, description="GPU-to-GPU bandwidth per GPU, one direction (NVLink, Infinity Fabric or PCIe)"
    )
    tdp_w: PositiveFloat
    price: Price | None = None
    form_factor: str = ""

    @model_validator(mode="after")
    def _check(self) -> Gpu:
        if "fp16" not in self.peak_flop_per_s and "bf16" not in self.peak_flop_per_s:
            raise ValueError("peak_flop_per_s needs an fp16 or bf16 entry")
        if self.engine_visible_memory_bytes is not None:
            if self.engine_visible_memory_bytes > self.memory_bytes:
                raise ValueError("engine_visible_memory_bytes exceeds memory_bytes")
            if not self.engine_visible_memory_source:
                raise ValueError("engine_visible_memory_bytes needs engine_visible_memory_source")
        return self


class Moe(BaseModel):
    """Mixture-of-experts shape of the MLP blocks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_experts: PositiveInt
    experts_per_token: PositiveInt
    expert_intermediate_size: PositiveInt
    num_shared_experts: int = Field(default=0, ge=0)
    shared_expert_intermediate_size: int = Field(default=0, ge=0, description="per shared expert")
    dense_layers: int = Field(
        default=0, ge=0, description="leading layers with a dense MLP (DeepSeek first_k_dense_replace)"
    )
    expert_bias: bool = Field(default=False, description="expert projections carry biases (gpt-oss)")
    router_bias: bool = False

    @model_validator(mode="after")
    def _check(self) -> Moe:
        if self.experts_per_token > self.num_experts:
            raise ValueError("experts_per_token exceeds num_experts")
        return self


class Mla(BaseModel):
    """Multi-head latent attention (DeepSeek-V2/V3): the KV cache holds a compressed latent per layer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: int | None = Field(default=None, ge=1)


class Model(_Entry):
    """A decoder-only transformer, as its published config.json describes it."""

    hf_id: str = ""
    family: str = ""
    num_layers: PositiveInt
    hidden_size: PositiveInt
    num_attention_heads: PositiveInt
    num_kv_heads: PositiveInt
    head_dim: PositiveInt = Field(description="from config.json; not always hidden_size / heads")
    intermediate_size: PositiveInt = Field(description="dense MLP width")
    vocab_size: PositiveInt
    tie_word_embeddings: bool
    max_context: PositiveInt
    native_precision: str = Field(description="precision the published weights are stored in")
    native_expert_precision: str | None = Field(
        default=None, description="MoE expert weights stored in another format (gpt-oss: mxfp4)"
    )
    gated_mlp: bool = Field(default=True, description="SwiGLU/GeGLU (3 matrices) rather than 2")
    attention_bias: bool = Field(default=False, description="q, k, v projections carry biases (Qwen2)")
    attention_output_bias: bool = False
    qk_norm: bool = Field(default=False, description="per-head RMSNorm on q and k (Qwen3)")
    attention_sinks: bool = Field(default=False, description="one learned sink logit per head (gpt-oss)")
    norms_per_layer: PositiveInt = Field(default=2, description="RMSNorm/LayerNorm vectors per layer (Gemma 2: 4)")
    moe: Moe | None = None
    mla: Mla | None = None
    sliding_window: PositiveInt | None = Field(default=None, description="tokens a sliding-window layer attends to")
    sliding_window_layers: int = Field(default=0, ge=0, description="how many layers use the window")
    sliding_window_pattern: str = Field(default="", description="which layers, in words (e.g. 'every other layer')")
    extra_params: int = Field(default=0, ge=0, description="parameters outside the decoder (vision encoder, MTP)")
    extra_params_note: str = ""
    published_params_total: PositiveInt
    published_params_active: PositiveInt | None = None
    published_params_source: str = Field(min_length=3)
    published_active_excludes_embedding: bool = Field(
        default=False, description="the published active count leaves out the input embedding (gpt-oss)"
    )

    @model_validator(mode="after")
    def _check(self) -> Model:
        if self.num_attention_heads % self.num_kv_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) is not a multiple of num_kv_heads ({self.num_kv_heads})"
            )
        if self.sliding_window_layers > self.num_layers:
            raise ValueError("sliding_window_layers exceeds num_layers")
        if self.sliding_window_layers and self.sliding_window is None:
            raise ValueError("sliding_window_layers needs sliding_window")
        if self.moe is not None and self.moe.dense_layers > self.num_layers:
            raise ValueError("moe.dense_layers exceeds num_layers")
        return self

    @property
    def attention_kind(self) -> Literal["MHA", "GQA", "MQA", "MLA"]:
        if self.mla is not None:
            return "MLA"
        if self.num_kv_heads == self.num_attention_heads:
            return "MHA"
        return "MQA" if self.num_kv_heads == 1 else "GQA"


class Precision(_Entry):
    """A number format for weights or KV cache, with its block-scale overhead folded into bytes per element."""

    bits_per_element: PositiveFloat = Field(description="payload bits of one value")
    scale_bits: float = Field(default=0, ge=0, description="bits of one block scale (0 when none)")
    scale_block: PositiveInt | None = Field(default=None, description="values sharing one scale")
    math: PeakKey = Field(description="which peak of the GPU matrix math runs at (weight-only formats: fp16)")
    math_fallback: PeakKey = Field(default="fp16", description="peak used where the GPU lacks `math`")
    kv_cache: bool = Field(default=True, description="usable for the KV cache")

    @model_validator(mode="after")
    def _check(self) -> Precision:
        if (self.scale_bits > 0) != (self.scale_block is not None):
            raise ValueError("scale_bits and scale_block go together")
        return self

    @property
    def bytes_per_element(self) -> float:
        """(payload bits + scale bits / block) / 8, e.g. int4 with a 16-bit scale per 128: 0.515625 B."""
        per_block = self.scale_bits / self.scale_block if self.scale_block else 0.0
        return (self.bits_per_element + per_block) / 8.0
