"""Fuzz ``planner catalog import-hf`` with hostile config.json files (issue 13).

Each input is a valid small config (Llama, DeepSeek-style MLA + MoE, Gemma-3-style hybrid, Llama-4-style
chunked MoE) with one to three keys replaced by hostile values (text, null, lists, objects, booleans, negative,
fractional, huge or non-finite numbers, deep nesting), or its JSON text cut or corrupted. The laws: the command
either writes one loadable entry (exit 0) or prints one line and exits 1 or 2; never a traceback; a refused
input leaves no file behind. ``pytest -s tests/test_fuzz_import_hf.py`` prints how many inputs were tried.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from fuzz_support import examples, tallied
from hypothesis import given
from hypothesis import strategies as st
from test_import_hf import TINY

from planner.catalog import load_catalog
from planner.cli import main

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_fuzz_import_hf")

LLAMA = TINY  # a 2-layer Llama config (tests/test_import_hf.py)
DEEPSEEK = {
    **LLAMA,
    "model_type": "deepseek_v3",
    "kv_lora_rank": 32,
    "q_lora_rank": 48,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 16,
    "v_head_dim": 16,
    "n_routed_experts": 8,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "moe_intermediate_size": 32,
    "first_k_dense_replace": 1,
    "topk_method": "noaux_tc",
    "quantization_config": {"quant_method": "fp8"},
}
GEMMA3 = {
    "model_type": "gemma3",
    "text_config": {**LLAMA, "model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 16},
    "sliding_window": 16,
    "sliding_window_pattern": 6,
}
LLAMA4 = {
    "model_type": "llama4",
    "text_config": {
        **LLAMA,
        "model_type": "llama4_text",
        "num_hidden_layers": 4,
        "intermediate_size_mlp": 256,
        "num_local_experts": 4,
        "num_experts_per_tok": 1,
        "interleave_moe_layer_step": 2,
        "attention_chunk_size": 32,
        "no_rope_layers": [1, 1, 1, 0],
    },
}
BASES = (LLAMA, DEEPSEEK, GEMMA3, LLAMA4)
KEYS = sorted(
    {k for b in BASES for k in b}
    | set(LLAMA4["text_config"])
    | {"head_dim", "layer_types", "use_sliding_window", "max_window_layers", "mlp_only_layers", "moe_layer_freq"}
    | {"decoder_sparse_step", "shared_expert_intermediate_size", "num_local_experts", "dtype", "text_config"}
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.integers(min_value=2**31, max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 32.7, 64.0, -0.0, 1e308]),
    st.text(max_size=12),
)


def _containers(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)


hostile = st.recursive(scalars, _containers, max_leaves=8)


def _deeply_nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def configs(draw) -> str:
    """JSON text of a hostile config."""
    base = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    target = base["text_config"] if "text_config" in base and draw(st.booleans()) else base
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True)):
        if draw(st.integers(0, 9)) == 0:
            target.pop(key, None)
        else:
            target[key] = draw(hostile)
    text = json.dumps(base)  # NaN and Infinity come out as the bare tokens some config writers emit
    kind = draw(st.integers(0, 19))
    if kind == 0:
        text = text[: draw(st.integers(0, len(text)))]
    elif kind == 1:
        text = text[:-1] + ', "deep": ' + _deeply_nested(draw(st.sampled_from([50, 5_000, 200_000]))) + "}"
    elif kind == 2:
        text = text.replace(
            ": 64", ": " + draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000])), 1
        )
    return text


TALLY = {"tried": 0, "held": 0, "accepted": 0, "refused": 0}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print(
        f"\nimport-hf fuzz: {TALLY['tried']} inputs tried, {TALLY['held']} held "
        f"({TALLY['accepted']} accepted and written, {TALLY['refused']} refused in one line)"
    )


@examples(200)  # x PLANNER_FUZZ_EXAMPLES / 10 (tests/fuzz_support.py)
@given(text=configs())
@tallied("import-hf config.json (issue 13)")
def test_hostile_configs_give_an_entry_or_one_line(text):
    TALLY["tried"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "config.json").write_text(text, encoding="utf-8")
        out = folder / "out"
        r = CliRunner().invoke(main, ["catalog", "import-hf", str(folder), "--name", "Fuzz", "--to", str(out)])
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert "Traceback" not in r.output
        if r.exit_code == 0:
            written = list(out.iterdir())
            assert len(written) == 1 and load_catalog(out, use_env=False).model("Fuzz")
            TALLY["accepted"] += 1
        else:
            assert r.exit_code in (1, 2), r.output
            lines = r.output.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("planner: error: "), r.output
            assert not out.exists() or not any(out.iterdir())
            assert sorted(p.name for p in folder.iterdir()) == ["config.json"]
            TALLY["refused"] += 1
    TALLY["held"] += 1
