"""Trial 18 (a data maintainer keeps the catalog current): the importer, the ``--to`` folder, a private price and
the review's provenance.

F2: ``import-hf`` read hybrid / linear-attention configs as full attention; F3: ``--to DIR`` checked clashes against
the shipped catalog only; F4: a private price meant copying the whole GPU entry; F5: an internal quote's source text
and the catalog folders never reached the review; F12: no maintainer's guide; F13: weak provenance fields.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import planner
from planner.catalog import load_catalog
from planner.catalog.hf import model_from_hf_config
from planner.engines.architecture import state_bytes_per_sequence
from planner.errors import CatalogError, InvalidInputError
from tests.cli_support import run

ROOT = Path(__file__).resolve().parents[1]

#: moonshotai/Kimi-Linear-48B-A3B-Instruct config.json as published (the fields that shape the decoder): 27 layers,
#: hidden 2304, MLA (kv_lora_rank 512, qk_rope_head_dim 64, q_lora_rank null), 256 experts of 1024 with 8 per token
#: and num_shared_experts 1, first_k_dense_replace 1, model_max_length 1048576, and linear_attn_config: Kimi Delta
#: Attention on kda_layers (20 of the 27, 1-based), MLA on full_attn_layers [4, 8, 12, 16, 20, 24, 27], num_heads
#: 32, head_dim 128, short_conv_kernel_size 4.
KIMI_LINEAR = {
    "architectures": ["KimiLinearForCausalLM"],
    "model_type": "kimi_linear",
    "hidden_act": "silu",
    "q_lora_rank": None,
    "mla_use_nope": True,
    "moe_router_activation_func": "sigmoid",
    "num_expert_group": 1,
    "topk_group": 1,
    "moe_layer_freq": 1,
    "tie_word_embeddings": False,
    "hidden_size": 2304,
    "num_hidden_layers": 27,
    "vocab_size": 163840,
    "rms_norm_eps": 1e-05,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "head_dim": 72,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "num_experts": 256,
    "num_experts_per_token": 8,
    "num_shared_experts": 1,
    "moe_intermediate_size": 1024,
    "routed_scaling_factor": 2.446,
    "moe_renormalize": True,
    "first_k_dense_replace": 1,
    "intermediate_size": 9216,
    "model_max_length": 1048576,
    "torch_dtype": "bfloat16",
    "linear_attn_config": {
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
        "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
        "head_dim": 128,
        "num_heads": 32,
        "short_conv_kernel_size": 4,
    },
    "use_cache": True,
    "transformers_version": "4.56.0",
}

#: A Llama-shaped dense config (meta-llama/Llama-3.1-8B's config.json: 32 layers, hidden 4096, 32 heads, 8 KV heads
#: of 128, intermediate 14336, vocab 128256): the base the hybrid keys below are added to.
DENSE = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}


def kimi():
    return model_from_hf_config(copy.deepcopy(KIMI_LINEAR), "Kimi-Linear-Test", "moonshotai/Kimi-Linear-48B-A3B")


class TestKimiLinearImportsItsKdaLayersAsLinearAttention:
    """F2: Kimi Linear's KDA layers fit the catalog's linear-attention form (the Gated DeltaNet state shape with as
    many key as value heads: vLLM ``MambaStateShapeCalculator.kda_state_shape``), so it is imported, not refused."""

    def test_kv_bytes_per_token_count_only_the_seven_mla_layers(self):
        """By hand from config.json: 27 layers - 20 kda_layers = 7 MLA layers, each caching kv_lora_rank 512 +
        qk_rope_head_dim 64 = 576 values of 2 B (bf16): 7 x 576 x 2 = 8,064 B per token (as imported before the fix,
        all 27 layers: 31,104 B)."""
        model, _ = kimi()
        assert planner.api.kv_bytes_per_token(model) == 7 * (512 + 64) * 2 == 8064

    def test_the_kda_state_per_sequence_is_the_hand_computed_one(self):
        """Per KDA layer and sequence: a float32 recurrent state of num_heads x head_dim x head_dim = 32 x 128 x 128 x
        4 B = 2,097,152 B (vLLM ``MambaStateDtypeCalculator.kda_state_dtype``: torch.float32 for it) and q, k, v conv
        states of (short_conv_kernel_size 4 - 1) x 3 x 4,096 x 2 B = 73,728 B; x 20 layers = 43,417,600 B."""
        model, _ = kimi()
        a = model.linear_attention
        assert (a.layers, a.num_key_heads, a.num_value_heads, a.key_head_dim, a.conv_kernel) == (20, 32, 32, 128, 4)
        assert state_bytes_per_sequence(model) == 20 * (32 * 128 * 128 * 4 + 3 * 3 * 4096 * 2) == 43_417_600

    def test_shared_expert_and_context_are_read(self):
        """num_shared_experts 1 (of moe_intermediate_size 1024) and model_max_length 1,048,576, as config.json
        states them; the first layer dense (first_k_dense_replace 1)."""
        model, notes = kimi()
        assert (model.moe.num_shared_experts, model.moe.shared_expert_intermediate_size) == (1, 1024)
        assert model.moe.dense_layers == 1
        assert model.max_context == 1_048_576
        assert any("(Kimi Delta Attention) on 20 of 27 layers" in n for n in notes)

    def test_inconsistent_layer_lists_are_refused(self):
        cfg = copy.deepcopy(KIMI_LINEAR)
        cfg["linear_attn_config"]["kda_layers"] = [1, 2, 3, 4]  # 4 is also a full-attention layer
        with pytest.raises(InvalidInputError, match="share no layer"):
            model_from_hf_config(cfg, "K")


class TestHybridsTheImporterCannotReadAreRefused:
    """F2: a config whose layer layout the importer does not read is refused, naming the keys and what it reads;
    before, each came in as plain full attention with exit 0."""

    @pytest.mark.parametrize(
        ("extra", "key"),
        [
            # MiniMax-M1's config.json: attn_type_list, 0 = lightning (linear) attention, 1 = softmax attention
            ({"attn_type_list": [0] * 7 + [1] + [0] * 24}, "attn_type_list"),
            # tiiuae/Falcon-H1 config.json: parallel Mamba-2 heads in every layer (mamba_d_ssm, mamba_n_heads, ...)
            ({"mamba_d_ssm": 3072, "mamba_n_heads": 24, "mamba_d_state": 256}, "mamba_d_ssm"),
            # ai21labs/Jamba config.json: one attention layer every attn_layer_period (8) from attn_layer_offset (4)
            ({"attn_layer_period": 8, "attn_layer_offset": 4}, "attn_layer_period"),
            # Hunyuan-style shared experts under a key the importer does not read
            ({"num_shared_expert": 1}, "num_shared_expert"),
        ],
    )
    def test_unread_layout_keys_are_refused_by_name(self, extra, key):
        with pytest.raises(InvalidInputError) as err:
            model_from_hf_config({**DENSE, **extra}, "Hybrid")
        text = str(err.value)
        assert key in text and "cannot read this model's layer layout" in text
        assert "It reads decoder layers of full, sliding-window or chunked attention" in text

    def test_layer_types_other_than_attention_are_refused(self):
        """IBM Granite 4.0 hybrids' config.json: layer_types of "mamba" and "attention"."""
        types = ["mamba"] * 3 + ["attention"]
        with pytest.raises(InvalidInputError, match="layer_types 'mamba'"):
            model_from_hf_config({**DENSE, "layer_types": types * 8}, "Hybrid")

    def test_a_false_or_empty_layout_key_is_no_layout(self):
        """``add_cross_attention: false`` (old transformers dumps) and MiniMax's ``shared_intermediate_size: 0``
        state nothing: imported, with the keys listed as not read."""
        model, notes = model_from_hf_config({**DENSE, "add_cross_attention": False, "foo_bar": 3}, "Dense")
        assert model.linear_attention is None and model.mamba is None
        assert any("config keys not read" in n and "foo_bar" in n for n in notes)

    def test_the_cli_refuses_in_one_line_and_writes_nothing(self, tmp_path):
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text(json.dumps({**DENSE, "attn_type_list": [0, 1] * 16}))
        result = run("catalog", "import-hf", str(tmp_path / "m"), "--name", "MiniMax-Test", "--to", str(tmp_path / "o"))
        assert result.exit_code == 2 and "attn_type_list" in result.stderr
        assert not (tmp_path / "o").exists()


class TestImportToAFolderChecksThatFolderAndTheCatalogFolders:
    """F3: ``--to DIR`` and ``--catalog DIR`` entries are checked before anything is written."""

    def _seed(self, folder: Path) -> None:
        folder.mkdir(exist_ok=True)
        model, _ = model_from_hf_config(DENSE, "Seed-Test-8B", aliases=("seed-test",))
        from planner.cli.catalog import entry_to_toml

        (folder / "Seed-Test-8B.toml").write_text(entry_to_toml("model", model))

    def _config(self, tmp_path: Path) -> Path:
        (tmp_path / "cfg").mkdir(exist_ok=True)
        (tmp_path / "cfg" / "config.json").write_text(json.dumps(DENSE))
        return tmp_path / "cfg"

    def test_an_alias_of_an_entry_in_the_to_folder_is_refused_before_writing(self, tmp_path):
        out = tmp_path / "out"
        self._seed(out)
        result = run("catalog", "import-hf", str(self._config(tmp_path)), "--name", "Seed-Z", "--alias", "seed-test",
                     "--to", str(out))  # fmt: skip
        assert result.exit_code == 2 and "already names the catalog's 'Seed-Test-8B'" in result.stderr
        assert sorted(p.name for p in out.iterdir()) == ["Seed-Test-8B.toml"]  # nothing written beside it
        load_catalog(out)  # the folder still loads

    def test_an_alias_of_a_catalog_folder_entry_is_refused(self, tmp_path):
        mine = tmp_path / "mine"
        self._seed(mine)
        result = run("catalog", "import-hf", str(self._config(tmp_path)), "--name", "Seed-Z", "--alias", "seed-test",
                     "--catalog", str(mine), "--to", str(tmp_path / "out"))  # fmt: skip
        assert result.exit_code == 2 and "seed-test" in result.stderr
        assert not (tmp_path / "out").exists()

    def test_a_name_that_an_alias_in_the_folder_holds_is_refused(self, tmp_path):
        """The loader's rule (an entry's name may not be another entry's alias) is checked too."""
        out = tmp_path / "out"
        self._seed(out)
        result = run("catalog", "import-hf", str(self._config(tmp_path)), "--name", "seed-test", "--to", str(out))
        assert result.exit_code == 2 and "not written" in result.stderr
        assert sorted(p.name for p in out.iterdir()) == ["Seed-Test-8B.toml"]

    def test_a_clean_import_lands_and_the_folder_loads(self, tmp_path):
        out = tmp_path / "out"
        self._seed(out)
        result = run("catalog", "import-hf", str(self._config(tmp_path)), "--name", "Other-8B", "--to", str(out))
        assert result.exit_code == 0, result.output
        assert "Other-8B" in load_catalog(out).models


PRICE = """
[[price]]
gpu = "H100"
kind = "reserved"
usd_per_gpu_hour = 1.89
provider = "OurCloud"
date = "2026-10-01"
source = "Contract C-7781 with OurCloud, signed 2026-10-01, 3-year term (internal, procurement wiki)"
"""


class TestAPriceOnlyEntryAddsAQuoteToAShippedGpu:
    """F4: ``[[price]]`` with ``gpu = "H100"`` adds a quote to the shipped H100 entry without copying it."""

    def test_the_quote_is_added_and_the_entry_is_otherwise_the_shipped_one(self, tmp_path):
        (tmp_path / "prices.toml").write_text(PRICE)
        cat = load_catalog(tmp_path)
        shipped = load_catalog().gpu("H100")
        mine = cat.gpu("H100")
        assert mine.prices[:-1] == shipped.prices and mine.prices[-1].provider == "OurCloud"
        assert mine.hbm_bandwidth_bytes_per_s == shipped.hbm_bandwidth_bytes_per_s
        assert cat.replaced == ()  # adding a quote replaces nothing
        assert cat.added_prices == (("H100 SXM 80GB", "OurCloud", "reserved", str(tmp_path)),)

    def test_a_price_for_an_unknown_gpu_is_refused_with_the_file(self, tmp_path):
        (tmp_path / "prices.toml").write_text(PRICE.replace('gpu = "H100"', 'gpu = "H1000"'))
        with pytest.raises(CatalogError, match=r"prices.toml: \[\[price\]\] for gpu 'H1000'"):
            load_catalog(tmp_path)

    def test_a_broken_quote_names_its_field(self, tmp_path):
        (tmp_path / "prices.toml").write_text(PRICE.replace('date = "2026-10-01"\n', ""))
        with pytest.raises(CatalogError, match=r"price 1 \(gpu 'H100'\): missing field 'date'"):
            load_catalog(tmp_path)

    def test_plan_costs_at_the_chosen_quote(self, tmp_path):
        """$1.89 per GPU-hour, the contract's rate, replaces the on-demand median ($3.60, catalogs/gpus.toml)."""
        (tmp_path / "prices.toml").write_text(PRICE)
        args = ("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--catalog", str(tmp_path))
        result = run(*args, "--price-kind", "reserved", "--price-basis", "OurCloud")
        assert result.exit_code == 0, result.output
        assert "$1.89/GPU-hour: reserved, OurCloud, 2026-10-01" in result.stdout
        refused = run(*args, "--price-kind", "reserved", "--price-basis", "NoSuchCloud")
        assert refused.exit_code == 2 and "no reserved quote from a provider named 'NoSuchCloud'" in refused.stderr


SCENARIO = """
title = "Contract check"
[workload]
peak_requests_per_s = 4
average_requests_per_s = 2
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 400
output_tokens_high = 1200
ttft_target_s = 1.5
tpot_target_s = 0.05
[[option]]
name = "H100, our contract"
gpu = "H100"
model = "llama3.1-8b"
pricing = "cloud"
price_kind = "reserved"
price_basis = "OurCloud"
"""


class TestTheReviewShowsTheQuoteSourceAndTheCatalogFolders:
    """F5: an internal quote (no URL) keeps its source text in the Assumptions sheet; a row names the folders."""

    def test_assumptions_carry_the_source_text_and_the_folders(self, tmp_path):
        (tmp_path / "cat").mkdir()
        (tmp_path / "cat" / "prices.toml").write_text(PRICE)
        (tmp_path / "review.toml").write_text(SCENARIO)
        result = run("export", str(tmp_path / "review.toml"), "-o", "-", "--format", "md",
                     "--catalog", str(tmp_path / "cat"), "--date", "2026-12-06")  # fmt: skip
        assert result.exit_code == 0, result.output
        rows = [line.replace("\\", "") for line in result.stdout.splitlines() if line.startswith("| ")]
        price = next(r for r in rows if "reserved price per GPU-hour (OurCloud, 2026-10-01)" in r)
        assert "Contract C-7781 with OurCloud" in price
        folders = next(r for r in rows if r.startswith("| Catalog folders"))
        assert f"shipped + {tmp_path / 'cat'}" in folders
        assert "OurCloud reserved quote for H100 SXM 80GB" in folders


class TestImporterProvenance:
    """F13: the source names the file read when there is no --hf-id; a computed active count says so; a --name
    that is not a file name is echoed as the file it becomes."""

    def test_source_and_counts_say_where_they_come_from(self, tmp_path):
        (tmp_path / "m").mkdir()
        (tmp_path / "m" / "config.json").write_text(json.dumps(KIMI_LINEAR))
        result = run("catalog", "import-hf", str(tmp_path / "m"), "--name", "Kimi/Linear 48B", "--params",
                     "49000000000", "--to", str(tmp_path / "out"))  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "is written to Kimi-Linear-48B.toml" in result.stderr
        entry = load_catalog(tmp_path / "out").model("Kimi/Linear 48B")
        assert str((tmp_path / "m" / "config.json").resolve()) in entry.source and "no --hf-id" in entry.source
        assert "published_params_active computed from config.json" in entry.published_params_source


class TestTheMaintainersGuide:
    """F12: docs/catalog.md covers a GPU, a model, a private price and folder stacking; README links it."""

    def test_the_guide_covers_the_tasks_and_is_linked(self):
        text = (ROOT / "docs" / "catalog.md").read_text()
        for needle in ("memory_bytes", "hbm_bandwidth_bytes_per_s", "peak_flop_per_s", "tdp_w", "[[price]]",
                       "import-hf", "--catalog", "planner catalog list", "planner/engines/", "Later wins"):  # fmt: skip
            assert needle in text, needle
        assert "docs/catalog.md" in (ROOT / "README.md").read_text()
