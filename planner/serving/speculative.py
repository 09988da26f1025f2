"""Speculative decoding (EAGLE/EAGLE-3, MTP, n-gram, a draft model) in the serving simulation, as the engines run it.

Each decode step of a running batch of b sequences (``SpeculativeDecoding``):

- **Draft.** The draft runs ``draft_steps`` (k) forward passes over b x ``topk`` tokens. SGLang
  (``python/sglang/srt/speculative/eagle_worker.py``, ``EAGLEWorker.draft_forward``: "we get 1 token from draft
  prefill and (#spec steps - 1) tokens here", then ``forward_draft_extend_after_decode`` over the accepted tokens)
  and vLLM (``vllm/v1/spec_decode/eagle.py``, ``EagleProposer.propose``: one pass over the accepted tokens, then
  ``for _ in range(self.num_speculative_tokens - 1)`` one token each) both run k passes a step. N-gram drafting
  is a CPU lookup: no draft pass (``draft_params`` 0).
- **Verify.** The target runs one forward pass over b x ``verify_tokens`` tokens (SGLang
  ``--speculative-num-draft-tokens``, the tree's nodes; vLLM k + 1): the decode step of b sequences plus the extra
  tokens' work as a prefill's beyond what both share (``verify_step_s``).
- **Emit.** A sequence gains ``acceptance_length`` tokens a step on average: the accepted draft tokens plus the
  target's own (bonus) token, so 1 <= acceptance length <= k + 1. It is an input: it depends on the draft, the
  data and the sampling, and no formula gives it.

TPOT = step time / acceptance length. A step's tokens reach the client as one streamed chunk (SGLang and vLLM
stream each step's new tokens together), and ``vllm bench serve`` records one inter-token latency per chunk
(``vllm/benchmarks/lib/endpoint_request_func.py``, ``async_request_openai_chat_completions``:
``output.itl.append(timestamp - most_recent_timestamp)`` for each chunk with content): ITL is the step time.

The simulation (``planner.serving.simulate.simulate``, ``tokens_per_step`` and ``draft_steps``) counts a request's
output in steps: each step emits 1 + the drafted tokens accepted, at most k + 1, each drafted token accepted with the
probability alpha that gives the acceptance length as the mean, (1 - alpha^(k + 1)) / (1 - alpha) (Leviathan et al.,
ICML 2023, arXiv 2211.17192, section 3.3; ``simulate.acceptance_draws``, seeded), so a short output can take a step a token and its TPOT is
the step (a fixed ceil((output - 1) / acceptance length) gave every request nearly the mean). It divides each
request's decode time by its own output - 1 and counts the acceptance length's tokens of KV a step (held, free slots,
SGLang's and TensorRT-LLM's reservations).

Memory (``served_model``): the draft's weights and KV cache are charged where the deployment's KV budget and max batch
are computed (``planner.model.memory.memory_plan``): MTP layers' weights at the weight precision (``with_mtp_loaded``)
and their KV, one more attention layer of the model's per MTP layer and token; an EAGLE-3 head's weights at its own
precision and its one layer's KV (``with_draft_held``); n-gram nothing. Limits: the tree's scratch slots are not
charged, nor the KV of a draft named only by its parameter count (a published run's EAGLE head: its weights only);
acceptance is drawn alike for every step, request and tree shape (a published acceptance is capped at the
run's steps + 1, not scaled to its tree); the token budget a step
takes counts one token per decoding request; the group and batch ``planner export`` keeps are chosen without
speculation (only the replica count is simulated with it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.errors import InvalidInputError, OutOfRangeError
from planner.options import SPECULATION_OPTIONS
from planner.serving.simulate import StepTable

#: Speculative methods: EAGLE and EAGLE-3 draft heads, MTP (the model's own multi-token-prediction layer), n-gram
#: lookup (prompt lookup; no draft model) and a separate small draft model.
METHODS = ("eagle", "eagle3", "mtp", "ngram", "draft_model")

#: The draft vocabulary of an EAGLE-3 head when only the target is named: SpecForge's EAGLE-3 configs
#: (``configs/llama3-8B-eagle3.json``, ``configs/qwen3-8b-eagle3.json``: "draft_vocab_size": 32000).
EAGLE3_DRAFT_VOCAB = 32000

#: SGLang's ``--speculative-num-steps``, ``--speculative-eagle-topk``, ``--speculative-num-draft-tokens`` when none is
#: given, for every architecture but DeepSeek's (``python/sglang/srt/server_args.py``, ``auto_choose_speculative_params``:
#: ``return (5, 4, 8)``; DeepSeek-V2/V3 ``(3, 1, 4)``).
SGLANG_DEFAULT_STEPS_TOPK_TOKENS = (5, 4, 8)


@dataclass(frozen=True)
class SpeculativeDecoding:
    """How an engine speculates (module docstring): ``draft_steps`` draft passes of ``topk`` tokens per sequence, one
    verify pass of ``verify_tokens`` per sequence (None: draft_steps + 1, a chain), ``acceptance_length`` tokens
    emitted per sequence per step (the bonus token included), and a draft of ``draft_params`` parameters at
    ``draft_bytes_per_param`` bytes each, streamed once per draft pass (0: n-gram, nothing to stream)."""

    method: str
    draft_steps: int
    acceptance_length: float
    topk: int = 1
    verify_tokens: int | None = None
    draft_params: float = 0.0
    draft_bytes_per_param: float = 2.0
    source: str = ""
    #: MTP: the checkpoint's multi-token-prediction layers a draft pass runs (``Model.mtp_layers``); its time is that
    #: many decoder layers' share of the target's decode step (``draft_ratio``)
    draft_layers: int = 0
    #: a separate draft's KV values per token, all its layers (an EAGLE-3 head shaped like the model: one layer,
    #: 2 x KV heads x head dim), cached at the deployment's KV precision (``served_model``); 0: none charged. MTP
    #: layers' KV follows from the model (``planner.engines.architecture.draft_facts``)
    draft_kv_elements_per_token: float = 0.0
    #: that draft's KV heads, split or replicated over the group as the model's are (0: as the model's)
    draft_kv_heads: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InvalidInputError(f"speculative method {self.method!r} is not known; use one of {', '.join(METHODS)}")
        for name in ("draft_steps", "topk"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise InvalidInputError(f"{name} {v!r} is not a whole number of 1 or more")
            if not (v >= 1 and v == int(v)) or math.isinf(v):  # a number out of range: #NUM! in a cell
                raise OutOfRangeError(f"{name} {v!r} is not a whole number of 1 or more")
        a = self.acceptance_length
        if isinstance(a, bool) or not isinstance(a, int | float) or not 1.0 <= float(a) <= self.draft_steps + 1:
            kind = InvalidInputError if isinstance(a, bool) or not isinstance(a, int | float) else OutOfRangeError
            raise kind(
                f"acceptance_length {a!r} must be a number of tokens from 1 to the draft tokens per step + 1 "
                f"({self.draft_steps + 1}): the accepted draft tokens plus the target's own"
            )
        if self.verify_tokens is not None and not (
            isinstance(self.verify_tokens, int) and self.verify_tokens >= 2 and not isinstance(self.verify_tokens, bool)
        ):
            raise InvalidInputError(f"verify_tokens {self.verify_tokens!r} is not a whole number of 2 or more")
        for name in ("draft_params", "draft_bytes_per_param", "draft_kv_elements_per_token"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= float(v) < math.inf:
                raise InvalidInputError(f"{name} {v!r} is not a finite number of 0 or more")
        if self.method == "mtp" and not (isinstance(self.draft_layers, int) and self.draft_layers >= 1):
            raise InvalidInputError("an mtp draft needs the MTP layers it runs (draft_layers, 1 or more)")
        if self.method in ("eagle", "eagle3", "draft_model") and not self.draft_params > 0:
            raise InvalidInputError(
                f"a {self.method} draft needs its parameter count (draft_params), the bytes each draft pass reads"
            )

    @property
    def tokens_per_sequence(self) -> int:
        """Tokens per sequence in the target's verify pass: ``verify_tokens``, else draft_steps + 1."""
        return int(self.verify_tokens or self.draft_steps + 1)

    @property
    def draft_bytes(self) -> float:
        """Bytes one draft pass streams: draft_params x draft_bytes_per_param."""
        return float(self.draft_params) * float(self.draft_bytes_per_param)

    @property
    def held(self) -> str:
        """What the draft holds in GPU memory, in words, as the plan prints it beside the draft: charged before the KV
        budget and max batch (``served_model``)."""
        if self.method == "ngram":
            return "the n-gram lookup holds no GPU memory"
        if self.method == "mtp":
            layers = "layer" if self.draft_layers == 1 else "layers"
            return (
                f"its {self.draft_layers} {layers}' weights ({self.draft_params / 1e9:.2f}B parameters at the weight "
                f"precision) and KV cache ({self.draft_layers} more {layers} of the model's per token) come out of the "
                "KV budget"
            )
        kv = (
            f" and its KV cache ({self.draft_kv_elements_per_token:,.0f} values per token at the KV precision)"
            if self.draft_kv_elements_per_token
            else ""
        )
        return f"its weights ({self.draft_bytes / 1e9:.2f} GB){kv} come out of the KV budget"

    @property
    def draft(self) -> str:
        """The draft in words, as the surfaces print it (``planner plan --rate``, ``planner export``)."""
        if self.method == "mtp":
            layers = "layer" if self.draft_layers == 1 else "layers"
            return (
                f"MTP (the checkpoint's own {self.draft_layers} {layers}, {self.draft_params / 1e9:.2f}B parameters "
                "loaded)"
            )
        if self.method == "ngram":
            return "n-gram prompt lookup (no draft model)"
        name = {"eagle3": "EAGLE-3 head", "eagle": "EAGLE head", "draft_model": "draft model"}[self.method]
        bits = {2.0: "bf16", 1.0: "fp8"}.get(
            float(self.draft_bytes_per_param), f"{self.draft_bytes_per_param:g} B/param"
        )
        shaped = " shaped like the model" if self.method == "eagle3" and not self.source else ""
        return f"{name}{shaped} ({self.draft_params / 1e9:.2f}B parameters, {bits})"


def eagle3_draft_params(
    hidden_size: int, intermediate_size: int, heads: int, kv_heads: int, head_dim: int, draft_vocab: int
) -> int:
    """Parameters an EAGLE-3 head streams each pass (SGLang ``python/sglang/srt/models/llama_eagle3.py``): the fusion
    fc (3h x h), one decoder layer whose attention reads [embedding, fused hidden] (2h wide: q 2h x heads x d, k and v
    2h x kv_heads x d, o heads x d x h), a gated MLP (3 x h x intermediate), the draft-vocabulary head (V_draft x h)
    and four h-wide norms; the embedding is the target's (gathered, not streamed)."""
    h, d = int(hidden_size), int(head_dim)
    attention = 2 * h * heads * d + 2 * (2 * h * kv_heads * d) + heads * d * h
    return 3 * h * h + attention + 3 * h * int(intermediate_size) + int(draft_vocab) * h + 4 * h


def eagle3_kv_elements_per_token(kv_heads: int, head_dim: int) -> float:
    """KV values per token an EAGLE-3 head caches: its one decoder layer's K and V, 2 x KV heads x head dim (SGLang
    ``llama_eagle3.py``: one ``LlamaDecoderLayer``, the draft worker's pool ``num_nextn_predict_layers`` = 1 layer;
    vLLM ``EagleProposer.load_model``: the head's attention layer joins the KV cache). Llama 3.3 70B: 2 x 8 x 128 =
    2,048, one more layer of its 80."""
    return float(2 * int(kv_heads) * int(head_dim))


#: The methods a deployment names (``speculation_for``): MTP, an EAGLE-3 head shaped like the model, n-gram lookup.
#: EAGLE-1/2 heads and separate draft models need their parameter count (``SpeculativeDecoding``).
NAMED_METHODS = ("mtp", "eagle3", "ngram")


def models_with_mtp(catalog=None) -> list[str]:
    """The catalog's models whose checkpoints ship MTP layers (``Model.mtp_layers``), in catalog order."""
    from planner.catalog import default_catalog

    return [m.name for m in (catalog or default_catalog()).models if m.mtp_layers > 0]


def default_method(model, catalog=None) -> str:
    """The draft a deployment of ``model`` speculates with when none is named: its own MTP layers where its checkpoint
    ships them (DeepSeek-V3/R1, GLM-4.5, Qwen3.5: what vLLM ``--speculative-config '{"method": "mtp", ...}'``, SGLang
    ``--speculative-algorithm EAGLE`` with the NextN weights and TensorRT-LLM's MTP run), else an EAGLE-3 head."""
    from planner.catalog import default_catalog

    return "mtp" if (catalog or default_catalog()).model(model).mtp_layers > 0 else "eagle3"


_MTP_VARIANTS: dict[int, tuple[object, object]] = {}


def with_mtp_loaded(model, catalog=None):
    """``model`` as a run speculating with MTP serves it: the same Model with its MTP layers loaded
    (``Model.mtp_loaded``: weights hold ``mtp_params`` less the embedding and output head copies shared with the target,
    ``planner.engines.architecture.mtp_held_params``, more, at the weight precision). One object per model, so the
    serving setups it keys are reused."""
    from planner.catalog import default_catalog

    m = (catalog or default_catalog()).model(model)
    if m.mtp_loaded:
        return m
    hit = _MTP_VARIANTS.get(id(m))
    if hit is None or hit[0] is not m:
        hit = _MTP_VARIANTS[id(m)] = (m, m.model_copy(update={"mtp_loaded": True}))
    return hit[1]


_DRAFT_VARIANTS: dict[tuple[int, float, float, int], tuple[object, object]] = {}


def with_draft_held(model, weight_bytes: float, kv_elements_per_token: float = 0.0, kv_heads: int = 0, catalog=None):
    """``model`` as a run speculating with a separate draft serves it: the same Model holding the draft's
    ``weight_bytes`` beside its weights and caching ``kv_elements_per_token`` more KV values per token
    in ``kv_heads`` heads (``Model.draft_weight_bytes``, ``draft_kv_elements_per_token``, ``draft_kv_heads``;
    ``planner.model.memory.memory_plan`` charges them before the max batch). One object per model and draft, so the
    serving setups it keys are reused; the model as given when the draft holds nothing."""
    from planner.catalog import default_catalog

    m = (catalog or default_catalog()).model(model)
    w, kv, heads = float(weight_bytes), float(kv_elements_per_token), int(kv_heads)
    if w == 0.0 and kv == 0.0:
        return m
    key = (id(m), w, kv, heads)
    hit = _DRAFT_VARIANTS.get(key)
    if hit is None or hit[0] is not m:
        update = {"draft_weight_bytes": w, "draft_kv_elements_per_token": kv, "draft_kv_heads": heads}
        variant = m.model_copy(update=update)
        hit = _DRAFT_VARIANTS[key] = (m, variant)
    return hit[1]


def served_model(model, speculative, catalog=None):
    """The model a replica serves, holding its draft's memory: with its MTP layers loaded (weights and KV,
    ``with_mtp_loaded``) when ``speculative`` drafts with them; with a separate draft's weights (its parameters x its
    bytes each) and KV (``SpeculativeDecoding.draft_kv_elements_per_token``) held (``with_draft_held``) for an EAGLE
    head or draft model; as given for n-gram lookup or no speculation."""
    method = getattr(speculative, "method", None)
    if method is None or method == "ngram":
        return model
    if method == "mtp":
        return with_mtp_loaded(model, catalog)
    return with_draft_held(
        model, speculative.draft_bytes, speculative.draft_kv_elements_per_token, speculative.draft_kv_heads, catalog
    )


def speculation_for(
    model,
    speculative_tokens,
    acceptance_length,
    *,
    catalog=None,
    draft_params: float | None = None,
    method: str | None = None,
) -> SpeculativeDecoding | None:
    """The speculation a deployment states (``SPECULATION_OPTIONS``): None when neither is given; ``InvalidInputError``
    naming the missing one when only one is. The draft is a chain (one token per pass, k + 1 verified, as vLLM runs
    EAGLE and MTP), by ``method`` (None or blank: ``default_method``):

    - "mtp": the checkpoint's own MTP layers (``Model.mtp_layers``, ``mtp_params``), loaded into memory
      (``served_model``) and each draft pass timed as that many of the target's decoder layers
      (``planner.serving.benchmark.speculative_setup``); refused for a model without them, naming those with them.
    - "eagle3": an EAGLE-3 head shaped like ``model`` (``eagle3_draft_params`` of its hidden size, heads, head dim and
      MLP width, ``EAGLE3_DRAFT_VOCAB``), as SpecForge trains them, or of ``draft_params``.
    - "ngram": prompt lookup, no draft pass."""
    blank = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (speculative_tokens, acceptance_length)]
    if all(blank):
        return None
    if any(blank):
        missing = "acceptance_length" if blank[1] else "speculative_tokens"
        raise InvalidInputError(
            f"speculative decoding needs both speculative_tokens and acceptance_length; {missing} is missing "
            f"({SPECULATION_OPTIONS[missing]})"
        )
    k = float(speculative_tokens)
    if not (k >= 1 and k == int(k)) or math.isinf(k):
        raise OutOfRangeError(f"speculative_tokens {speculative_tokens!r} is not a whole number of 1 or more")
    try:
        a = float(acceptance_length)
    except (TypeError, ValueError):
        raise InvalidInputError(f"acceptance_length {acceptance_length!r} is not a number of tokens") from None
    from planner.catalog import default_catalog

    cat = catalog or default_catalog()
    m = cat.model(model)  # a Model as it is (a lever's hypothetical variant)
    blank_method = method is None or (isinstance(method, float) and math.isnan(method)) or str(method).strip() == ""
    name = default_method(m, cat) if blank_method else str(method).strip().lower().replace("-", "")
    if name not in NAMED_METHODS:
        raise InvalidInputError(
            f"speculative method {method!r} is not known; use one of {', '.join(NAMED_METHODS)} (blank: mtp where "
            "the checkpoint ships MTP layers, else eagle3)"
        )
    if name == "mtp":
        if m.mtp_layers < 1:
            raise InvalidInputError(
                f"{m.name}'s checkpoint ships no multi-token-prediction (MTP) layers; speculative method mtp needs "
                f"them. Models with MTP layers: {', '.join(models_with_mtp(cat))}. Use eagle3 or ngram for {m.name}"
            )
        from planner.engines.architecture import mtp_held_params

        # the parameters the MTP layers hold: the stored embedding and head copies are the target's
        held = float(mtp_held_params(m))
        return SpeculativeDecoding("mtp", int(k), a, draft_params=held, draft_layers=int(m.mtp_layers))
    if name == "ngram":
        return SpeculativeDecoding("ngram", int(k), a)
    if draft_params is None:
        draft_params = eagle3_draft_params(
            m.hidden_size, m.intermediate_size, m.num_attention_heads, m.num_kv_heads, m.head_dim, EAGLE3_DRAFT_VOCAB
        )
    if m.mla is not None:  # vLLM's deepseek_eagle3.py: "Eagle3 ... for DeepseekV2/V3": its one layer is MLA
        kv, heads = float(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim), 0  # the latent, on every GPU as the model's
    else:
        kv, heads = eagle3_kv_elements_per_token(m.num_kv_heads, m.head_dim), int(m.num_kv_heads)
    return SpeculativeDecoding(
        "eagle3", int(k), a, draft_params=float(draft_params), draft_kv_elements_per_token=kv, draft_kv_heads=heads
    )


def sglang_speculation(steps: int | None, topk: int | None, draft_tokens: int | None) -> tuple[int, int, int]:
    """(num_steps, eagle_topk, num_draft_tokens) as SGLang runs them: ``SGLANG_DEFAULT_STEPS_TOPK_TOKENS`` when none is
    given, and with topk 1 the draft tokens set to num_steps + 1 (``server_args.py``: "speculative_num_draft_tokens is
    adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1")."""
    if steps is None and topk is None and draft_tokens is None:
        steps, topk, draft_tokens = SGLANG_DEFAULT_STEPS_TOPK_TOKENS
    steps = int(steps or SGLANG_DEFAULT_STEPS_TOPK_TOKENS[0])
    topk = int(topk or SGLANG_DEFAULT_STEPS_TOPK_TOKENS[1])
    draft_tokens = int(draft_tokens or SGLANG_DEFAULT_STEPS_TOPK_TOKENS[2])
    if topk == 1:
        draft_tokens = steps + 1
    return steps, topk, draft_tokens


def _extrapolated(x: float, xs: tuple[float, ...], ys: tuple[float, ...]) -> float:
    """``np.interp`` within the table, straight-line beyond its last two points (more tokens than it covers)."""
    if x <= xs[-1] or len(xs) < 2:
        return float(np.interp(x, xs, ys))
    slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if xs[-1] > xs[-2] else 0.0
    return float(ys[-1] + slope * (x - xs[-1]))


def decode_at_s(table: StepTable, batch: float, mean_context: float) -> float:
    """A decode step of ``batch`` sequences (``StepTable.decode_s``), straight-line past the table's largest batch."""
    n = len(table.decode_lo_s)
    if batch <= n:
        return table.decode_s(max(int(round(batch)), 1), mean_context)
    last, before = table.decode_s(n, mean_context), table.decode_s(max(n - 1, 1), mean_context)
    return last + (last - before) * (batch - n)


def verify_step_s(table: StepTable, batch: int, mean_context: float, tokens_per_sequence: int) -> float:
    """The target's verify pass over ``batch`` x ``tokens_per_sequence`` tokens: the decode step of ``batch`` (one token
    each, the KV read once per sequence) with the other batch x (tokens - 1) tokens' work as a prefill's,
    max(decode, prefill, decode + prefill - shared) (``StepTable.step_s``'s mixed-step rule), the prefill straight-line
    past the table."""
    dec = table.decode_s(batch, mean_context)
    extra = batch * (tokens_per_sequence - 1)
    if extra <= 0:
        return dec
    pre = _extrapolated(extra, table.prefill_tokens, table.prefill_s)
    return max(dec, pre, dec + pre - table.shared_s)


def step_s(table: StepTable, spec: SpeculativeDecoding, draft_ratio: float, batch: int, mean_context: float) -> float:
    """One speculative step of ``batch`` sequences, seconds: verify (``verify_step_s``) + k draft passes, each the
    target's decode step over batch x topk rows scaled by ``draft_ratio`` (draft bytes / target weight bytes: a pass
    reads the draft's weights and runs the target's kinds of kernels)."""
    verify = verify_step_s(table, batch, mean_context, spec.tokens_per_sequence)
    draft = spec.draft_steps * draft_ratio * decode_at_s(table, batch * spec.topk, mean_context)
    return verify + draft


def speculative_table(table: StepTable, spec: SpeculativeDecoding, draft_ratio: float) -> StepTable:
    """The step table of a speculative run, in the simulation's units (``RunBehaviour.tokens_per_step``): decode rows
    are whole speculative steps (``step_s``) at the first and last context, the context axis counted in steps
    (prompt + output / acceptance length at the end), and each prefill step also runs the draft over the prompt
    (its time x (1 + draft_ratio): SGLang's ``forward_target_extend`` then the draft's extend)."""
    ratio = float(draft_ratio)
    if not 0.0 <= ratio < math.inf:
        raise InvalidInputError(f"draft_ratio {draft_ratio!r} is not a finite number of 0 or more")
    n = len(table.decode_lo_s)
    lo = tuple(step_s(table, spec, ratio, b, table.ctx_lo_tokens) for b in range(1, n + 1))
    hi = tuple(step_s(table, spec, ratio, b, table.ctx_hi_tokens) for b in range(1, n + 1))
    span = table.ctx_hi_tokens - table.ctx_lo_tokens  # the output, tokens
    return StepTable(
        decode_lo_s=lo,
        decode_hi_s=hi,
        ctx_lo_tokens=table.ctx_lo_tokens,
        ctx_hi_tokens=table.ctx_lo_tokens + span / spec.acceptance_length,
        prefill_tokens=table.prefill_tokens,
        prefill_s=tuple(p * (1.0 + ratio) for p in table.prefill_s),
        shared_s=table.shared_s,
        prefill_host_s=table.prefill_host_s,
        prefill_host_above_tokens=table.prefill_host_above_tokens,
    )
