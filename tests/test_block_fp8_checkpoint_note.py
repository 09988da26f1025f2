"""Which fp8 a plan is, where the makers' block-FP8 checkpoint would not load on its layout (trial 22 F2).

Expected values, each from a source:
- Qwen/Qwen3-235B-A22B-FP8 and the other Qwen3 "-FP8" checkpoints are 128 x 128 block FP8: the Qwen3 model cards'
  "Note on FP8": "The quantization method is fine-grained fp8 quantization with block size of 128" (catalogs/models.toml,
  [model.block_fp8_checkpoint] of each entry, with the cards' copy it was read in).
- Expert widths from each config.json (the catalog's source): moe_intermediate_size 1,536 (Qwen3-235B-A22B), 768
  (Qwen3-30B-A3B); Qwen3-Next-80B-A3B's shared expert 512; Qwen3-32B's intermediate_size 25,600.
- vLLM refuses 1,536 / 8 = 192 per GPU: "The output_size of gate's and up's weight = 192 is not divisible by weight
  quantization block_n = 128" (https://github.com/vllm-project/vllm/issues/17569); its Qwen3 guide's way out:
  "Consider --tensor-parallel-size 4 or --tensor-parallel-size 8 --enable-expert-parallel"
  (https://github.com/vllm-project/vllm/issues/17327). Qwen/Qwen3-30B-A3B-FP8 at TP 4 (768 / 4 = 192): vLLM issue
  #25292. Qwen3-Next-80B-A3B-Instruct-FP8 at TP 8: SGLang splits the 512-wide shared expert even with expert
  parallelism, "output_size of gate's and up's weight = 64" (https://github.com/sgl-project/sglang/issues/10852).
"""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.catalog.names import checkpoint_block_size
from planner.deploy import block_checkpoint_note
from planner.errors import CatalogError
from tests.cli_support import run

CAT = default_catalog()


def _note(model: str, gpus: int, layout: str = "tp", weights: str = "fp8", engine: str = "vllm") -> str:
    return block_checkpoint_note(CAT.model(model), weights, gpus, layout, engine)


class TestTheCatalogRecordsTheCheckpoints:
    @pytest.mark.parametrize(
        ("model", "checkpoint"),
        [
            ("Qwen3-235B-A22B", "Qwen/Qwen3-235B-A22B-FP8"),
            ("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-FP8"),
            ("Qwen3-32B", "Qwen/Qwen3-32B-FP8"),
            ("Qwen3-Next-80B-A3B", "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8"),
        ],
    )
    def test_each_record_agrees_with_the_checkpoint_name(self, model, checkpoint):
        """The record's block is what the checkpoint's own name gives (``names.checkpoint_block_size``), and that name
        is the entry with that block, as ``Catalog.model`` reads it."""
        ck = CAT.model(model).block_fp8_checkpoint
        assert ck.hf_id == checkpoint and ck.weight_block_size == 128 == checkpoint_block_size(checkpoint)
        named = CAT.model(checkpoint)
        assert named.name == model and named.weight_block_size == 128
        assert "http" in ck.source

    def test_a_natively_fp8_model_cannot_name_one(self, tmp_path):
        """DeepSeek-V3's own weights are block FP8 (weight_block_size 128): a second checkpoint record is refused."""
        entry = CAT.model("DeepSeek-V3").model_dump()
        entry["block_fp8_checkpoint"] = {"hf_id": "x/y-FP8", "weight_block_size": 128, "source": "https://x.org"}
        with pytest.raises(ValueError, match="block_fp8_checkpoint names the block-FP8 checkpoint of a 16-bit model"):
            type(CAT.model("DeepSeek-V3")).model_validate(entry)

    def test_a_placeholder_source_is_refused(self):
        entry = CAT.model("Qwen3-235B-A22B").model_dump()
        entry["block_fp8_checkpoint"]["source"] = "TBD"
        with pytest.raises((ValueError, CatalogError), match="placeholder"):
            type(CAT.model("Qwen3-235B-A22B")).model_validate(entry)


class TestTheNote:
    def test_tp8_of_qwen3_235b_says_which_fp8_and_where_the_checkpoint_loads(self):
        """1,536 / 8 = 192 (vLLM #17569); the checkpoint loads at TP 1, 2, 4 (1,536 / 4 = 384 = 3 blocks; 12 blocks
        do not split 3 or 6 ways over 64 heads) and at TP 8 with expert parallelism (vLLM #17327)."""
        note = _note("qwen3-235b-a22b", 8)
        assert note.startswith("fp8 weights here are per-tensor FP8: the bf16 weights quantized online")
        assert "Qwen/Qwen3-235B-A22B-FP8 does not load as TP8: each expert's width 1,536 / 8 = 192 per GPU" in note
        assert note.endswith(
            "it loads at TP 1, 2, 4, or on these 8 GPUs with expert parallelism (--parallelism tp-ep: routed experts "
            "whole)"
        )

    @pytest.mark.parametrize(("gpus", "layout"), [(1, "tp"), (2, "tp"), (4, "tp"), (8, "tp-ep"), (8, "dp-ep")])
    def test_layouts_the_checkpoint_loads_on_carry_no_note(self, gpus, layout):
        assert _note("qwen3-235b-a22b", gpus, layout) == ""

    def test_only_fp8_weights_and_only_the_models_own_name(self):
        assert _note("qwen3-235b-a22b", 8, weights="bf16") == ""
        # named by the checkpoint itself: the block is the entry's, and TP 8 is refused instead (test_trial9_catalog)
        assert _note("Qwen/Qwen3-235B-A22B-FP8", 8) == ""
        # a model without a recorded checkpoint (Qwen3-30B-A3B-2507: none sourced)
        assert _note("Qwen3-30B-A3B-2507", 4) == ""

    def test_qwen3_30b_at_tp4(self):
        """768 / 4 = 192 (vLLM #25292); 768 = 6 blocks: TP 1, 2."""
        note = _note("qwen3-30b-a3b", 4)
        assert "each expert's width 768 / 4 = 192 per GPU" in note and "it loads at TP 1, 2, or on these 4 GPUs" in note

    def test_expert_parallelism_does_not_save_a_split_shared_expert(self):
        """Qwen3-Next's 512-wide shared expert is split over TP even with EP: 512 / 8 = 64 (SGLang #10852)."""
        note = _note("Qwen3-Next-80B-A3B", 8, "tp-ep")
        assert "does not load as TEP8: its dense and shared-expert MLP width 512 / 8 = 64 per GPU" in note
        assert note.endswith("it loads at TP 1, 2, 4")

    def test_a_dense_model(self):
        """Qwen3-32B: 25,600 / 16 = 1,600 per GPU = 12.5 blocks; 25,600 / 8 = 3,200 = 25 blocks loads."""
        assert _note("qwen3-32b", 8) == ""
        assert "its MLP width 25,600 / 16 = 1,600 per GPU, not a whole number of 128-wide blocks" in _note(
            "qwen3-32b", 16
        )


def test_plan_prints_it_and_json_carries_it():
    args = ("plan", "--gpu", "H200", "--model", "qwen3-235b-a22b", "--context", "8k", "-w", "fp8", "--gpus")
    out = run(*args, "8")
    assert out.exit_code == 0, out.output
    line = next(x for x in out.output.splitlines() if "per-tensor FP8" in x)
    assert line.startswith("warning: fp8 weights here are per-tensor FP8") and "Qwen/Qwen3-235B-A22B-FP8" in line
    assert "per-tensor FP8" not in run(*args, "4").output


def test_export_states_it_for_the_option(tmp_path):
    """The review's Warnings carry the option's note in plan's words, for the group the option keeps (8 GPUs here)."""
    scenario = tmp_path / "qwen.toml"
    scenario.write_text(
        "[workload]\npeak_requests_per_s = 10\naverage_requests_per_s = 5\nprompt_tokens_mean = 1000\n"
        "prompt_tokens_high = 2000\noutput_tokens_mean = 200\noutput_tokens_high = 400\nhigh_percentile = 95\n"
        "ttft_target_s = 2\ntpot_target_s = 0.1\nsizing = 'littles-law'\n[[option]]\nname = 'qwen fp8'\ngpu = 'H200'\n"
        "model = 'qwen3-235b-a22b'\nweight_precision = 'fp8'\ngpus_per_replica = 8\n",
        encoding="utf-8",
    )
    out = run("export", str(scenario), "-o", str(tmp_path / "r.md"))
    assert out.exit_code == 0, out.output
    text = " ".join((tmp_path / "r.md").read_text(encoding="utf-8").split())
    assert "qwen fp8: fp8 weights here are per-tensor FP8" in text and "does not load as TP8" in text
