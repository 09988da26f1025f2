"""Issue 21 (s99): an MLA model's attention + attention GEMMs timed by aiconfigurator's measured vLLM 0.24.0 MLA module
(``planner.engines.kernel_floor.mla_module_time_s``) on engine profiles whose ``mla_module_table`` is on (vLLM V1 releases:
the table is vLLM's kernels; SGLang and TensorRT-LLM run their own MLA backends). s83/s85's 462dbc2, restricted."""

from __future__ import annotations

import functools
import numpy as np

from planner.model import operators

_GPU_BY_BW = {3.35e12: "H100 SXM 80GB", 4.8e12: "H200 SXM 141GB", 8.0e12: "B200 180GB"}


@functools.cache
def _mla_params():
    from planner.catalog import default_catalog
    from planner.engines.architecture import _attention_params_per_layer, mixer_layers

    out = {}
    for m in default_catalog().models.entries:
        if m.mla is not None and m.sparse_attention is None:
            out[(m.hidden_size, m.num_attention_heads, mixer_layers(m))] = _attention_params_per_layer(m)
    return out


def correction_s(gpu, model, precision, limits, *, prefill, rows, gpus, dense_bytes, expert_bytes, attention_bytes,
                 attention_flop, batch, context):  # fmt: skip
    """module time - the planner's MLA attention and projection time, or 0.0."""
    table = np.asarray(getattr(limits, "mla_module_table", 0.0), float)
    if not table.any():
        return 0.0
    hs, nh, nl, bw, g, kvb, topk = np.broadcast_arrays(*(np.asarray(v, float) for v in (
        model.hidden_size, model.num_attention_heads, model.num_layers, gpu.bandwidth_bytes_per_s, gpus,
        precision.kv_bytes_per_element, model.attended_tokens_max)))  # fmt: skip
    shape = hs.shape
    params = np.zeros(shape)
    coef = np.zeros(shape + (3,))
    from planner.engines.kernel_floor import read_mla_rows

    rows_csv = read_mla_rows()
    op = "context" if prefill else "generation"
    for i in np.ndindex(shape):
        p = _mla_params().get((int(hs[i]), int(nh[i]), int(nl[i])))
        name = _GPU_BY_BW.get(float(bw[i]))
        if p is None or name is None or topk[i] != np.inf:
            continue
        kv = "fp8" if kvb[i] <= 1.0 else "bfloat16"
        heads = nh[i] / g[i]
        cands = [r for r in rows_csv if (r["gpu"], r["op"], r["kv_cache_dtype"]) == (name, op, kv)]
        r = min(cands, key=lambda r: abs(np.log2(float(r["num_heads"])) - np.log2(max(heads, 1.0))))
        params[i] = p
        coef[i] = (float(r["floor_ms"]) * 1e-3, float(r["per_row_us"]) * 1e-6, float(r["per_row_token_ns"]) * 1e-9)
    if not params.any():
        return 0.0
    on = params > 0
    proj_bytes = model.num_layers * params * precision.weight_bytes_per_param
    full = operators.forward_kernels_time_s(
        gpu, model, limits, prefill=prefill, rows=rows, gpus=gpus, dense_bytes=dense_bytes, expert_bytes=expert_bytes,
        attention_bytes=attention_bytes, attention_flop=attention_flop)  # fmt: skip
    without = operators.forward_kernels_time_s(
        gpu, model, limits, prefill=prefill, rows=rows, gpus=gpus, dense_bytes=dense_bytes - proj_bytes,
        expert_bytes=expert_bytes, attention_bytes=0.0 * attention_bytes, attention_flop=0.0 * attention_flop)  # fmt: skip
    floor = limits.prefill_attention_floor_s if prefill else limits.attention_floor_s
    planner_mla = full - without + model.num_layers * floor
    b, c = np.asarray(batch, float), np.asarray(context, float)
    if prefill:
        per_layer = coef[..., 0] + coef[..., 1] * b * c + coef[..., 2] * b * c * c
    else:
        per_layer = coef[..., 0] + coef[..., 1] * b + coef[..., 2] * b * c
    on = on & (np.broadcast_to(table, on.shape) > 0) if table.shape else on & bool(table)
    out = np.where(on, model.num_layers * per_layer - planner_mla, 0.0)
    return out if out.shape else float(out)
