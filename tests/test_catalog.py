"""The shipped catalog: complete, sourced, consistent with published facts; user folders extend it."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import tomli_w

from planner.catalog import Gpu, Model, Precision, default_catalog, load_catalog, reload_catalog
from planner.catalog.loader import ENV_VAR
from planner.catalog.schema import normalize_name
from planner.cli.catalog import entry_to_toml
from planner.engines.architecture import param_breakdown
from planner.errors import CatalogError, UnknownNameError

CAT = default_catalog()
REFERENCE = Path(__file__).parents[1] / "catalogs" / "reference"
GiB = 2**30


class TestShippedCatalog:
    def test_has_the_gpus_and_models_the_issue_lists(self):
        """At least 15 GPUs and 60 models, with the named SKUs and models present."""
        assert len(CAT.gpus) >= 15 and len(CAT.models) >= 60
        for name in [
            "A100-40GB",
            "A100-80GB",
            "A100-PCIe",
            "H100",
            "H100-PCIe",
            "H100-NVL",
            "H200",
            "B200",
            "L4",
            "L40S",
            "A10G",
            "RTX 4090",
            "MI300X",
            "MI325X",
        ]:
            assert name in CAT.gpus, name
        for name in [
            "llama-65b",
            "llama2-7b",
            "llama2-13b",
            "llama2-70b",
            "llama3.1-8b",
            "llama3.1-70b",
            "llama3.1-405b",
            "mistral-7b",
            "mixtral-8x7b",
            "mixtral-8x22b",
            "qwen2.5-7b",
            "qwen2.5-32b",
            "qwen2.5-72b",
            "qwen3-0.6b",
            "qwen3-8b",
            "qwen3-14b",
            "qwen3-32b",
            "qwen3-30b-a3b",
            "qwen3-235b-a22b",
            "deepseek-v3",
            "gemma2-27b",
            "gpt-oss-20b",
            "gpt-oss-120b",
            # issue 12: the names a new user types first
            "llama3.3-70b",
            "deepseek-r1",
            "llama-4-maverick",
            "llama-4-scout",
            "kimi-k2",
            "gemma-3-27b",
            "qwen2-72b",
            "glm-4.5",
            "glm-4.5-air",
            "qwen3-coder-480b-a35b",
            "qwen2.5-14b",
            "qwen2.5-0.5b",
            "gemma-3-4b",
            "gemma-3-12b",
            "phi-4",
            "mistral-large-2",
            "mistral-small-3.1",
            "mistral-nemo",
            "command-r",
            "deepseek-v3.1",
        ]:
            assert name in CAT.models, name

    @pytest.mark.parametrize(
        "alias, canonical",
        [
            ("H100", "H100 SXM 80GB"),
            ("A100", "A100 SXM 80GB"),
            ("A100-80GB", "A100 SXM 80GB"),
            ("A100-40GB", "A100 SXM 40GB"),
            ("h100 ", "H100 SXM 80GB"),
            ("  h-1-0-0", "H100 SXM 80GB"),
            ("NVIDIA H100 80GB HBM3", "H100 SXM 80GB"),
            ("H200", "H200 SXM 141GB"),
            ("mi300x", "MI300X"),
        ],
    )
    def test_gpu_aliases_ignore_case_spaces_and_hyphens(self, alias, canonical):
        assert CAT.gpu(alias).name == canonical

    @pytest.mark.parametrize(
        "alias, canonical",
        [
            ("llama2-70b", "Llama-2-70B"),
            ("Llama2-70B", "Llama-2-70B"),
            ("LLAMA 2 70B", "Llama-2-70B"),
            ("llama-65b", "LLaMA-65B"),
            ("llama3.1-8b", "Llama-3.1-8B"),
            ("qwen3-32b", "Qwen3-32B"),
            ("gpt-oss-120b", "gpt-oss-120b"),
            ("meta-llama/Llama-2-70b-hf", "Llama-2-70B"),
            ("llama3.3-70b", "Llama-3.3-70B"),
            ("Llama 4 Maverick", "Llama-4-Maverick"),
            ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout"),
            ("DeepSeek R1", "DeepSeek-R1"),
            ("deepseek-ai/DeepSeek-V3.1", "DeepSeek-V3"),
            ("kimi k2", "Kimi-K2"),
            ("google/gemma-3-27b-it", "Gemma-3-27B"),
            ("qwen2-72b", "Qwen2-72B"),
            ("Qwen/Qwen2.5-14B-Instruct", "Qwen2.5-14B"),
            ("mistral-small-3.1", "Mistral-Small-3.2-24B"),
        ],
    )
    def test_model_aliases_as_people_type_them(self, alias, canonical):
        assert CAT.model(alias).name == canonical

    def test_every_name_and_alias_is_unique_across_gpus_models_and_precisions(self):
        """A name typed anywhere (a GPU, model or precision argument) means one entry of the whole catalog."""
        owners: dict[str, str] = {}
        for table in (CAT.gpus, CAT.models, CAT.precisions):
            for entry in table:
                for alias in entry.all_names():
                    key = normalize_name(alias)
                    assert owners.setdefault(key, entry.name) == entry.name, (
                        f"{alias!r}: {owners[key]} and {entry.name}"
                    )
        assert len(owners) > 350

    def test_dots_in_names_are_significant(self):
        """'qwen2.5-7b' and a hypothetical 'qwen2-57b' must not collide."""
        assert normalize_name("qwen2.5-7b") != normalize_name("qwen2-57b")

    def test_every_entry_names_its_source(self):
        for table in (CAT.gpus, CAT.models, CAT.precisions):
            for entry in table:
                assert len(entry.source) > 10, entry.name
        for g in CAT.gpus:
            for p in g.prices:
                assert p.source and p.provider and re.match(r"\d{4}-\d{2}", p.date), g.name

    def test_hbm_cards_hold_binary_gigabytes(self):
        """'80 GB' cards have 80 GiB (the HBM stacks are binary-sized); nvidia-smi shows slightly less."""
        assert CAT.gpu("H100").memory_bytes == 80 * GiB
        assert CAT.gpu("A100-40GB").memory_bytes == 40 * GiB
        assert CAT.gpu("MI300X").memory_bytes == 192 * GiB

    def test_engine_visible_totals_match_the_published_reference(self):
        """Torch/vLLM totals from ../shared/reference/gpu_memory_totals.csv (rows SMI021, SMI023, SMI025; SMI027 H200
        and SMI028 MI325X, torch's OOM messages, trial 27 F8)."""
        with (REFERENCE / "gpu_memory_totals.csv").open(encoding="utf-8") as f:
            rows = {r["record_id"]: r for r in csv.DictReader(f)}
        expect = {
            "SMI023": ("H100", 79.18),
            "SMI021": ("A100-40GB", 39.38),
            "SMI025": ("RTX A6000", 47.54),
            "SMI027": ("H200", 139.80),
            "SMI028": ("MI325X", 255.98),
        }
        for rid, (gpu, gib) in expect.items():
            assert rows[rid]["total_memory"].startswith(str(gib))
            assert CAT.gpu(gpu).engine_visible_memory_bytes / GiB == pytest.approx(gib, abs=0.005)

    def test_engine_visible_total_is_below_what_nvidia_smi_shows(self):
        """H100: nvidia-smi 81,559 MiB (SMI001) > torch 79.18 GiB; both below the physical 80 GiB."""
        h100 = CAT.gpu("H100")
        assert h100.engine_visible_memory_bytes < 81559 * 2**20 < h100.memory_bytes

    def test_dense_peaks_are_not_sparse_figures(self):
        """H100 SXM dense BF16 is 989.4 TFLOP/s (the datasheet's 1,979 is with 2:4 sparsity)."""
        assert CAT.gpu("H100").peak_flop_per_s["bf16"] == pytest.approx(989.4e12)
        assert CAT.gpu("A100").peak_flop_per_s["bf16"] == pytest.approx(312e12)


class TestParameterCounts:
    @pytest.mark.parametrize("model", CAT.models.entries, ids=lambda m: m.name)
    def test_computed_total_matches_the_published_count(self, model: Model):
        """Within 1%; no exceptions. Rounded published figures: LLaMA-65B, Command-R, Mistral-Large-2, Qwen3-Coder-480B.

        A safetensors total that also stores the tied output head (Qwen3-0.6B, Qwen3-1.7B) is compared
        after taking that copy out (published_total_includes_tied_copy).
        """
        b = param_breakdown(model)
        published = model.published_params_total - (b.embedding if model.published_total_includes_tied_copy else 0)
        assert b.total == pytest.approx(published, rel=0.01)

    def test_most_published_counts_are_matched_exactly(self):
        """Exact safetensors totals are reproduced to the parameter, FP8 scale tensors aside (DeepSeek, Kimi)."""
        exact = [m for m in CAT.models if m.published_params_total % 10**8]  # rounded figures end in zeros
        assert len(exact) >= 50
        for m in exact:
            b = param_breakdown(m)
            published = m.published_params_total - (b.embedding if m.published_total_includes_tied_copy else 0)
            assert abs(b.total / published - 1) < 1e-4, m.name

    @pytest.mark.parametrize("model", [m for m in CAT.models if m.published_params_active], ids=lambda m: m.name)
    def test_computed_active_count_matches_the_published_one(self, model: Model):
        """Within 2%: model cards round active counts (Mixtral 12.9B, DeepSeek-V3 37B, Qwen3-30B-A3B 3.3B)."""
        b = param_breakdown(model)
        active = b.active - (b.embedding if model.published_active_excludes_embedding else 0)
        assert active == pytest.approx(model.published_params_active, rel=0.02)

    def test_untied_output_layer_is_counted(self):
        """Llama 2 7B: 32000 x 4096 embedding and a separate lm_head of the same size (a classic miss)."""
        b = param_breakdown(CAT.model("llama2-7b"))
        assert b.lm_head == b.embedding == 32000 * 4096

    def test_head_dim_is_taken_from_the_config_not_hidden_over_heads(self):
        """Gemma 2 27B: head_dim 128 although hidden 4608 / 32 heads = 144."""
        g = CAT.model("gemma2-27b")
        assert g.head_dim == 128 != g.hidden_size // g.num_attention_heads


class TestRoundTrip:
    @pytest.mark.parametrize("entry", [*CAT.gpus, *CAT.models, *CAT.precisions], ids=lambda e: e.name)
    def test_entries_survive_a_dump_and_validate_round_trip(self, entry, tmp_path):
        kind = {Gpu: "gpu", Model: "model", Precision: "precision"}[type(entry)]
        (tmp_path / "x.toml").write_text(entry_to_toml(kind, entry))
        if kind == "model":  # a model's precisions must be in its catalog (an unknown native_precision is refused)
            (tmp_path / "p.toml").write_text("\n".join(entry_to_toml("precision", p) for p in CAT.precisions))
        again = load_catalog(tmp_path, shipped=False, use_env=False).table(kind).get(entry.name)
        assert again == entry


class TestUserFolders:
    def test_user_folder_overrides_a_price_and_adds_a_gpu(self, tmp_path):
        h100 = CAT.gpu("H100").model_dump(mode="json", exclude_none=True)
        h100["prices"] = [
            {
                "kind": "on-demand",
                "usd_per_gpu_hour": 1.23,
                "provider": "us",
                "date": "2026-11",
                "source": "our contract",
            }
        ]
        mine = dict(h100, name="My H100", aliases=["myh100"])
        (tmp_path / "gpus.toml").write_text(tomli_w.dumps({"gpu": [h100, mine]}))
        cat = load_catalog(tmp_path, use_env=False)
        assert cat.gpu("H100").price("on-demand").usd_per_gpu_hour == 1.23
        assert cat.gpu("myh100").name == "My H100"
        assert len(cat.gpus) == len(CAT.gpus) + 1

    def test_the_shipped_files_are_read_once_while_unchanged_and_again_when_one_changes(self, tmp_path, monkeypatch):
        """load_catalog over a user folder reads the shipped folder's files once per process (the entries are
        frozen; each catalog gets its own lists); a shipped file whose size or time changed is read again."""
        import shutil

        from planner.catalog import loader

        shipped = tmp_path / "shipped"
        shutil.copytree(loader.shipped_catalog_dir(), shipped, ignore=shutil.ignore_patterns("reference"))
        monkeypatch.setattr(loader, "shipped_catalog_dir", lambda: shipped)
        reads = []
        real = loader._read_folder  # read_folder's entries with their files (trial 18 F6)
        monkeypatch.setattr(loader, "_read_folder", lambda folder: reads.append(Path(folder)) or real(folder))
        (tmp_path / "mine").mkdir()
        (tmp_path / "mine" / "none.toml").write_text("# no entries\n")  # s174: a folder without *.toml is refused
        first = load_catalog(tmp_path / "mine", use_env=False)
        second = load_catalog(tmp_path / "mine", use_env=False)
        assert reads.count(shipped) == 1 and len(reads) == 3  # the user folder each time
        assert second.gpus.entries == first.gpus.entries and second.gpu("H100") is first.gpu("H100")
        gpus = next(p for p in sorted(shipped.glob("*.toml")) if "[[gpu]]" in p.read_text(encoding="utf-8"))
        gpus.write_text(gpus.read_text(encoding="utf-8").replace('name = "H100 SXM 80GB"', 'name = "H100 SXM 80 GB"'))
        assert load_catalog(tmp_path / "mine", use_env=False).gpu("H100").name == "H100 SXM 80 GB"
        assert reads.count(shipped) == 2

    def test_environment_variable_names_extra_folders(self, tmp_path, monkeypatch):
        model = CAT.model("llama2-7b").model_dump(mode="json", exclude_none=True)
        model.update(name="Team-7B", aliases=["team-7b"], hf_id="")
        (tmp_path / "models.toml").write_text(tomli_w.dumps({"model": [model]}))
        monkeypatch.setenv(ENV_VAR, str(tmp_path))
        reload_catalog()
        try:
            assert default_catalog().model("team-7b").name == "Team-7B"
        finally:
            monkeypatch.delenv(ENV_VAR)
            reload_catalog()
        with pytest.raises(UnknownNameError):
            default_catalog().model("team-7b")

    def test_a_broken_entry_is_rejected_in_one_line_naming_file_entry_and_field(self, tmp_path):
        bad = CAT.gpu("H100").model_dump(mode="json", exclude_none=True)
        bad["hbm_bandwidth_bytes_per_s"] = -1
        (tmp_path / "gpus.toml").write_text(tomli_w.dumps({"gpu": [bad]}))
        with pytest.raises(CatalogError) as info:
            load_catalog(tmp_path, use_env=False)
        msg = str(info.value)
        assert "\n" not in msg
        assert "gpus.toml" in msg and "'H100 SXM 80GB'" in msg and "hbm_bandwidth_bytes_per_s" in msg
        assert "greater than 0" in msg

    def test_a_misspelled_key_is_an_error_not_a_silent_default(self, tmp_path):
        bad = CAT.gpu("H100").model_dump(mode="json", exclude_none=True)
        bad["hbm_bandwith_bytes_per_s"] = bad.pop("hbm_bandwidth_bytes_per_s")
        (tmp_path / "gpus.toml").write_text(tomli_w.dumps({"gpu": [bad]}))
        with pytest.raises(
            CatalogError, match="unknown field 'hbm_bandwith_bytes_per_s'; did you mean 'hbm_bandwidth_bytes_per_s'"
        ):
            load_catalog(tmp_path, use_env=False)

    def test_an_alias_claimed_by_two_entries_is_an_error(self, tmp_path):
        a = CAT.gpu("H100").model_dump(mode="json", exclude_none=True)
        b = dict(CAT.gpu("H200").model_dump(mode="json", exclude_none=True), aliases=["H100"])
        (tmp_path / "gpus.toml").write_text(tomli_w.dumps({"gpu": [a, b]}))
        with pytest.raises(CatalogError, match="already belongs to"):
            load_catalog(tmp_path, shipped=False, use_env=False)

    def test_unknown_table_and_bad_toml_are_reported_with_the_file(self, tmp_path):
        (tmp_path / "x.toml").write_text("[[gpus]]\nname='x'\n")
        with pytest.raises(CatalogError, match=r"x\.toml: unknown table 'gpus'"):
            load_catalog(tmp_path, use_env=False)
        (tmp_path / "x.toml").write_text("[[gpu]\n")
        with pytest.raises(CatalogError, match=r"x\.toml: not valid TOML"):
            load_catalog(tmp_path, use_env=False)

    def test_a_missing_folder_is_reported(self, tmp_path):
        with pytest.raises(CatalogError, match="catalog folder not found"):
            load_catalog(tmp_path / "nope", use_env=False)


class TestUnknownNames:
    def test_unknown_gpu_suggests_the_closest_names(self):
        with pytest.raises(UnknownNameError) as info:
            CAT.gpu("H10")
        assert str(info.value).startswith("unknown GPU 'H10'; did you mean H100")

    def test_unknown_model_suggests_the_closest_names(self):
        with pytest.raises(
            UnknownNameError,
            match=r"unknown model 'llama2-7' ; did you mean|unknown model 'llama2-7'; did you mean .*llama2-7b",
        ):
            CAT.model("llama2-7")

    def test_unknown_precision_lists_what_is_known(self):
        with pytest.raises(UnknownNameError, match="unknown precision 'fp12'"):
            CAT.precision("fp12")


class TestNameReadsAreRemembered:
    """A frozen catalog remembers how it read a published name (the accuracy fits read the same names thousands of
    times); a catalog made from it by ``dataclasses.replace`` reads them afresh."""

    def test_a_published_name_is_read_once_and_means_the_same_entry(self):
        """The name in catalogs/reference/gpu_memory_totals.csv row SMI001 (an nvidia-smi table, github.com/wilicc/
        gpu-burn/issues/114) is the catalog's "H100 SXM 80GB", on the first read and from the memo."""
        import dataclasses

        cat = dataclasses.replace(CAT)
        assert not cat.name_reads
        assert cat.gpu("NVIDIA H100 80GB HBM3 (SXM)").name == "H100 SXM 80GB"
        assert cat.name_reads == {("gpu", "NVIDIA H100 80GB HBM3 (SXM)"): "H100 SXM 80GB"}
        assert cat.gpu("NVIDIA H100 80GB HBM3 (SXM)").name == "H100 SXM 80GB"

    def test_a_replaced_catalog_does_not_inherit_the_reads(self):
        import dataclasses

        cat = dataclasses.replace(CAT)
        cat.gpu("NVIDIA H100 80GB HBM3 (SXM)")
        only_a100 = dataclasses.replace(cat, gpus=type(cat.gpus)("gpu", (cat.gpu("A100 SXM 80GB"),)))
        assert not only_a100.name_reads
        with pytest.raises(UnknownNameError):
            only_a100.gpu("NVIDIA H100 80GB HBM3 (SXM)")
