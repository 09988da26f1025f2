"""Configurations the time model has no measured basis for (issue 21, h-worst; docs/hypotheses/worst-rows.md).

One rule so far, off by default until judged (``bench/switch_bootstrap.py unmeasured-sparse-attention``): a model
with DeepSeek Sparse Attention (catalog ``sparse_attention``: DeepSeek-V3.2, GLM-5) on an engine and GPU for which
no sparse-attention kernel was measured. The time model times such attention through the engine's measured sparse
MLA kernel (``planner.model.operators.sparse_mla_applies``: ``EngineProfile.sparse_mla_kernel`` and
``planner.engines.kernel_curves.SPARSE_MLA_TOKEN_S``, vLLM's and TensorRT-LLM's on Hopper, from
``catalogs/reference/dsa_decode_aic.csv``); without one it falls back to dense MLA over the top-k tokens, a form no
measurement of that engine's kernel supports. With the switch on, a published row of such a configuration gets no
prediction (``planner.accuracy.predict.release_refusal``) and a user's time range for it is widened as an engine
without held-out figures is (``planner.accuracy.ranges.region_residuals``), its note saying why.
"""

from __future__ import annotations

from typing import Any

#: EXPERIMENT (h-worst, off): refuse a published row, and widen a user's range, where a DSA model's attention has no
#: measured kernel for its engine and GPU (``sparse_attention_gap``).
UNMEASURED_SPARSE_ATTENTION = False


def sparse_attention_gap(gpu: Any, engine: Any, model: Any, catalog: Any = None) -> str:
    """Why ``model``'s DeepSeek Sparse Attention has no measured kernel on ``engine`` (a profile or its name) and
    ``gpu`` (a catalog GPU or its name), one sentence; "" for a model without DSA or a measured engine and GPU."""
    if getattr(model, "sparse_attention", None) is None:
        return ""
    from planner.catalog import default_catalog
    from planner.engines.kernel_curves import SPARSE_MLA_TOKEN_S, sparse_mla_token_for
    from planner.engines.profiles import engine_profile

    cat = catalog or default_catalog()
    g = cat.gpu(gpu) if isinstance(gpu, str) else gpu
    eng = engine_profile(engine)
    if sparse_mla_token_for(g, cat, eng.sparse_mla_kernel) > 0.0:
        return ""
    measured = "; ".join(f"{name} on {', '.join(gpus)}" for name, gpus in SPARSE_MLA_TOKEN_S.items())
    return (
        f"no measured sparse-attention (DSA) kernel of engine {eng.name} on {g.name} for {model.name}: its attention "
        f"would be timed as dense MLA over the top-k tokens, with no basis (measured: {measured}; "
        "catalogs/reference/dsa_decode_aic.csv)"
    )
