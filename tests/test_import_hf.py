"""``planner catalog import-hf`` on local Hugging Face models: folders, cache entries, safetensors counts,
and hostile configs (one line, exit 2, nothing written).

The fake models are written the way the safetensors format documents files: an 8-byte little-endian
header length, a JSON header naming each tensor's dtype, shape and byte offsets, then the data.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.catalog import load_catalog
from planner.cli import main
from planner.engines.architecture import param_counts

# A Llama-shaped model small enough to write out: 2 layers, hidden 64, 4 heads of 16, 2 KV heads.
TINY = {
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "intermediate_size": 128,
    "vocab_size": 100,
    "max_position_embeddings": 2048,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def tensor_shapes(cfg: dict, with_lm_head: bool = True) -> dict[str, list[int]]:
    """Tensor names and shapes of a Llama checkpoint (as transformers' LlamaForCausalLM stores them)."""
    h, inter, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    kv = cfg["num_key_value_heads"] * h // cfg["num_attention_heads"]
    shapes = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes |= {
            p + "self_attn.q_proj.weight": [h, h],
            p + "self_attn.k_proj.weight": [kv, h],
            p + "self_attn.v_proj.weight": [kv, h],
            p + "self_attn.o_proj.weight": [h, h],
            p + "mlp.gate_proj.weight": [inter, h],
            p + "mlp.up_proj.weight": [inter, h],
            p + "mlp.down_proj.weight": [h, inter],
            p + "input_layernorm.weight": [h],
            p + "post_attention_layernorm.weight": [h],
        }
    if with_lm_head:
        shapes["lm_head.weight"] = [v, h]
    return shapes


def write_safetensors(path: Path, shapes: dict[str, list[int]]) -> int:
    """Write a BF16 safetensors file (zeros) in the documented layout; return its element count."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in shapes.items():
        size = 2 * math.prod(shape)
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)  # the format pads the header to 8 bytes
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(offset))
    return sum(math.prod(s) for s in shapes.values())


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


class TestLocalFolders:
    def test_a_model_folder_gives_the_stored_parameter_count(self, tmp_path):
        """config.json + model.safetensors: the entry records the header's element count, equal to the computed one."""
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        stored = write_safetensors(tmp_path / "model.safetensors", tensor_shapes(TINY))
        out = tmp_path / "cat"
        r = run("catalog", "import-hf", tmp_path, "--name", "Tiny", "--to", out)
        assert r.exit_code == 0, r.output
        assert "vs stored in safetensors" in r.output and "(+0.00%)" in r.output
        m = load_catalog(out, use_env=False).model("Tiny")
        assert m.published_params_total == stored == param_counts(m)[0]
        assert "header of model.safetensors" in m.published_params_source

    def test_a_cache_entry_reads_the_revision_refs_main_names_and_all_shards(self, tmp_path):
        """models--org--name/snapshots/<rev>/ with an index over two shards; the repo id comes from the path."""
        entry = tmp_path / "hub" / "models--acme--Tiny-Chat"
        snap = entry / "snapshots" / "abc123"
        snap.mkdir(parents=True)
        (entry / "snapshots" / "old999").mkdir()
        (entry / "refs").mkdir()
        (entry / "refs" / "main").write_text("abc123")
        (snap / "config.json").write_text(json.dumps(TINY))
        shapes = tensor_shapes(TINY)
        names = sorted(shapes)
        half = {n: shapes[n] for n in names[: len(names) // 2]}
        rest = {n: shapes[n] for n in names[len(names) // 2 :]}
        stored = write_safetensors(snap / "model-00001-of-00002.safetensors", half)
        stored += write_safetensors(snap / "model-00002-of-00002.safetensors", rest)
        weight_map = {n: "model-00001-of-00002.safetensors" for n in half}
        weight_map |= {n: "model-00002-of-00002.safetensors" for n in rest}
        (snap / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
        r = run("catalog", "import-hf", entry, "--name", "Tiny-Chat", "--to", tmp_path / "cat")
        assert r.exit_code == 0, r.output
        m = load_catalog(tmp_path / "cat", use_env=False).model("Tiny-Chat")
        assert m.hf_id == "acme/Tiny-Chat" and m.published_params_total == stored
        assert "headers of 2 safetensors shards" in m.published_params_source

    def test_the_index_total_parameters_is_used_when_stated(self, tmp_path):
        """transformers writes metadata.total_parameters into the index; no shard needs to be present."""
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        total = param_counts(load_tiny(tmp_path))[0]
        index = {"metadata": {"total_parameters": total}, "weight_map": {"x": "model-00001-of-00001.safetensors"}}
        (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
        r = run("catalog", "import-hf", tmp_path, "--name", "Tiny")
        assert r.exit_code == 0, r.output
        assert f"published_params_total = {total}" in r.output and "total_parameters" in r.output

    def test_a_stored_copy_of_a_tied_head_is_recognised(self, tmp_path):
        """Qwen3-0.6B's case: tied embeddings, yet lm_head.weight stored; the count is kept and flagged."""
        cfg = dict(TINY, tie_word_embeddings=True)
        (tmp_path / "config.json").write_text(json.dumps(cfg))
        stored = write_safetensors(tmp_path / "model.safetensors", tensor_shapes(cfg, with_lm_head=True))
        r = run("catalog", "import-hf", tmp_path, "--name", "Tiny-Tied", "--to", tmp_path / "cat")
        assert r.exit_code == 0, r.output
        m = load_catalog(tmp_path / "cat", use_env=False).model("Tiny-Tied")
        assert m.published_total_includes_tied_copy and m.published_params_total == stored
        assert stored - param_counts(m)[0] == 100 * 64

    def test_absent_shards_leave_the_computed_count_with_a_note(self, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
        (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
        r = run("catalog", "import-hf", tmp_path, "--name", "Tiny")
        assert r.exit_code == 0, r.output
        assert "2 of 2 safetensors shards absent" in r.output and "computed by planner" in r.output


def load_tiny(folder: Path):
    from planner.catalog.hf import model_from_hf_config

    return model_from_hf_config(json.loads((folder / "config.json").read_text()), "t")[0]


HOSTILE = {
    "zero heads": {"num_attention_heads": 0},
    "zero KV heads": {"num_key_value_heads": 0},
    "size as text": {"hidden_size": "4096"},
    "size as null": {"num_hidden_layers": None, "n_layer": None},
    "size as a list": {"vocab_size": [100]},
    "size as an object": {"intermediate_size": {"value": 128}},
    "fractional layers": {"num_hidden_layers": 32.7},
    "negative size": {"hidden_size": -64},
    "boolean size": {"hidden_size": True},
    "huge size": {"vocab_size": 10**30},
    "quantization_config as a string": {"quantization_config": "fp8"},
    "kv_lora_rank without the qk dims": {"kv_lora_rank": 512},
    "text_config as a list": {"text_config": [1, 2]},
    "flag as text": {"tie_word_embeddings": "yes"},
    "layer_types of the wrong length": {"sliding_window": 16, "layer_types": ["sliding_attention"]},
    "heads not a multiple of KV heads": {"num_key_value_heads": 3},
}


class TestHostileConfigs:
    """Issue 13: each becomes one line and exit 2; nothing is written."""

    @pytest.mark.parametrize("change", HOSTILE.values(), ids=HOSTILE.keys())
    def test_a_hostile_value_is_refused_in_one_line(self, change, tmp_path):
        cfg = {k: v for k, v in {**TINY, **change}.items() if v is not None}
        (tmp_path / "config.json").write_text(json.dumps(cfg))
        self._refused(tmp_path)

    @pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e400"])
    def test_non_finite_numbers_are_refused(self, text, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(TINY).replace('"hidden_size": 64', f'"hidden_size": {text}'))
        self._refused(tmp_path)

    def test_deep_nesting_is_refused(self, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(TINY)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
        self._refused(tmp_path, "nested too deeply")

    def test_a_fractional_layer_count_is_not_truncated(self, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(dict(TINY, num_hidden_layers=32.7)))
        self._refused(tmp_path, "num_hidden_layers must be a whole number")
        (tmp_path / "config.json").write_text(json.dumps(dict(TINY, num_hidden_layers=32.0)))
        assert run("catalog", "import-hf", tmp_path / "config.json", "--name", "X").exit_code == 0

    def test_a_safetensors_header_longer_than_its_file_is_refused(self, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 2**40) + b"{}")
        self._refused(tmp_path, "header length")

    def test_a_shard_outside_the_folder_is_refused(self, tmp_path):
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        index = {"weight_map": {"a": "../../etc/passwd.safetensors"}}
        (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
        self._refused(tmp_path, "not a .safetensors file in the folder")

    @staticmethod
    def _refused(folder: Path, expect: str = ""):
        out = folder / "out"
        r = run("catalog", "import-hf", folder, "--name", "X", "--to", out)
        assert r.exit_code == 2, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("planner: error: "), r.output
        assert "Traceback" not in r.output and expect in r.output
        assert not out.exists()


class TestAliasTakenByAnotherModel:
    def test_an_alias_that_names_another_model_is_refused_before_writing(self, tmp_path):
        """A user trial (s195): --alias llama3.1-70b on another model was written, and loading the folder replaced
        the shipped Llama-3.1-70B with it (plan --model Llama-3.1-70B planned a 4B model). The import now refuses it,
        names the model the alias belongs to and writes nothing."""
        (tmp_path / "config.json").write_text(json.dumps(TINY))
        out = tmp_path / "mine"
        result = run("catalog", "import-hf", str(tmp_path / "config.json"), "--name", "Odd-4B", "--alias",
                     "llama3.1-70b", "--to", str(out))  # fmt: skip
        assert result.exit_code == 2, result.output
        assert "--alias 'llama3.1-70b' already names the catalog's 'Llama-3.1-70B'" in result.output
        assert not out.exists()

    def test_a_folder_whose_alias_is_another_models_name_is_refused_on_load(self, tmp_path):
        """Written by hand, the same entry is refused when the folder is loaded, naming the clash; the shipped model
        is never silently replaced. Named as that model, an entry replaces it (the documented override)."""
        from planner.catalog import default_catalog
        from planner.catalog.hf import model_from_hf_config
        from planner.cli.catalog import entry_to_toml
        from planner.errors import CatalogError

        model, _ = model_from_hf_config(TINY, "Odd-4B", "", aliases=("llama3.1-70b",))
        (tmp_path / "odd.toml").write_text(entry_to_toml("model", model))
        with pytest.raises(CatalogError, match="alias 'llama3.1-70b' is the name of the catalog's 'Llama-3.1-70B'"):
            load_catalog(tmp_path, use_env=False)
        renamed, _ = model_from_hf_config(TINY, "Llama-3.1-70B", "")
        (tmp_path / "odd.toml").write_text(entry_to_toml("model", renamed))
        cat = load_catalog(tmp_path, use_env=False)
        assert (
            cat.model("llama3.1-70b").hidden_size
            == TINY["hidden_size"]
            != default_catalog().model("llama3.1-70b").hidden_size
        )
