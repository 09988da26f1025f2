"""Trial 29 (a RAG assistant: Llama-3.3-70B in fp16 on rented H100s today, against Qwen3-235B-A22B and gpt-oss-120b).

F12: fp16 weights of a model published as bf16 are no quantization (both 16-bit): no sign-off "before this saving is
booked"; fp8 weights keep it. F16: the review caps Qwen3-235B-A22B's replica at what memory holds at p95 prompt +
output (8 sequences of 30,900 tokens on 8 x H100, no preemption) where ``planner plan`` sizes at vLLM's default
max_num_seqs 1,024 with the KV cache admitting by tokens; the option's note now names the cap and plan's fleet,
computed by plan's own search, and an option whose cap does not set its fleet gets no such note.
"""

from __future__ import annotations

import math
import re
import tomllib

import pytest
from trial29_workload import LLAMA_TODAY, RAG_WORKLOAD

from planner.catalog import default_catalog
from planner.catalog.resolve import weights_words
from planner.export import build_review
from planner.export.evaluate import engine_limit_fleet
from planner.export.markdown import render_markdown
from planner.export.quality import QualityNote, SixteenBitSwap, lever_quality_text, quality_notes
from planner.export.review import sized
from planner.export.scenario import parse_scenario
from planner.export.tables import cap_note, options_table
from planner.report import plan, replica_of
from planner.serving.fleet import fewest_replicas, sequences_memory_holds
from planner.serving.load import sizing_requests, spread_lengths

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("export_quality_cap")

#: The trial's workload (/tmp/trial29/mine/rag.toml): 6 requests/s of 12,000 / p95 30,000 prompt and 350 / p95 900
#: output tokens, p95 TTFT 3 s and TPOT 50 ms.
WORKLOAD = RAG_WORKLOAD
QWEN = """
[[option]]
name = "Qwen3-235B-A22B, H100 rented"
gpu = "H100"
pricing = "cloud"
model = "Qwen3-235B-A22B"
"""
LLAMA_FP16 = LLAMA_TODAY


@pytest.fixture(scope="module")
def cat():
    return default_catalog()


@pytest.fixture(scope="module")
def qwen_review(cat):
    """The trial's MoE option alone (its levers too: about 12 s)."""
    return build_review(parse_scenario(tomllib.loads(WORKLOAD + QWEN)), cat, source="rag.toml", date="2026-12-07")


def plans_fleet(cat, model: str, gpus: int) -> int:
    """The serving replicas ``planner plan --gpu H100 --model <model> --gpus <gpus> --rate 6 --prompt-tokens 12000
    --prompt-tokens-high 30000 --output-tokens 350 --output-tokens-high 900 --ttft-target 3 --tpot-target 50ms``
    sizes: its own calls (planner.cli.plan: ``replica_of`` of the plan, ``spread_lengths`` at p95, ``fewest_replicas``
    at the engine's max_num_seqs)."""
    p = plan("H100", model, 32768, gpus=gpus, catalog=cat)
    lengths = spread_lengths(12000, 30000, 350, 900, 95, sizing_requests(95.0), p.model.max_context)
    replica = replica_of(p, cat)
    s = fewest_replicas(replica, 12000, 350, 6, percentile=95.0, ttft_target_s=3, tpot_target_s=0.05, lengths=lengths)
    return s.replicas


class TestSixteenBitIsNoQuantization:
    def test_the_catalog_publishes_llama_3_3_70b_as_bf16(self, cat):
        """catalogs/models.toml, Llama-3.3-70B: native_precision = "bf16" (its config.json's torch_dtype)."""
        model = cat.model("Llama-3.3-70B")
        assert model.native_precision == "bf16"
        assert weights_words(cat, model) == "bf16"

    def test_fp16_gets_a_neutral_line_without_sign_off_or_saving(self, cat):
        model = cat.model("Llama-3.3-70B")
        (note,) = quality_notes([("today", model.name, "fp16", weights_words(cat, model))], "the model owner")
        assert isinstance(note, SixteenBitSwap)
        assert note.text == (
            "Quality: Llama-3.3-70B with fp16 weights (published as bf16; today): both are 16-bit, so no "
            "quantization and no saving; fp16 has the narrower range (largest value 65,504, against bf16's about "
            "3.4e38) and the finer steps (10 mantissa bits against 7)."
        )
        assert "sign-off" not in note.text and "booked" not in note.text and "evaluate it first" not in note.text
        # the what-if workbook's lever caveat follows the same rule: nothing to sign off
        assert lever_quality_text("Weights", model.name, "fp16", "bf16") == ""

    def test_fp8_keeps_the_sign_off(self, cat):
        model = cat.model("Llama-3.3-70B")
        notes = quality_notes(
            [("today", model.name, "fp16", "bf16"), ("fp8", model.name, "fp8", weights_words(cat, model))], "Ana"
        )
        assert [type(n) for n in notes] == [SixteenBitSwap, QualityNote]
        assert notes[1].text.startswith("Quality: Llama-3.3-70B with fp8 weights (published as bf16; fp8): ")
        assert notes[1].text.endswith(
            "sign-off by Ana on an evaluation of your own traffic before this saving is booked."
        )
        assert lever_quality_text("Weights fp8", model.name, "fp8", "bf16", "Ana") == notes[1].text.replace(
            "fp8)", "Weights fp8)"
        )

    def test_experts_kept_apart_count_too(self):
        """gpt-oss's label: fp16 + mxfp4 experts against bf16 + mxfp4 experts is the same 16 bits a value."""
        (note,) = quality_notes([("A", "gpt-oss-120b", "fp16 + mxfp4 experts", "bf16 + mxfp4 experts")], "x")
        assert isinstance(note, SixteenBitSwap)


class TestTheBatchCapSaysWhereItSetsTheFleet:
    def test_qwen_caps_at_what_memory_holds_at_p95(self, qwen_review):
        """8 sequences of 12,000 + ... p95 30,000 + 900 = 30,900 tokens on 8 x H100 (the trial's plan line: "30,900
        tokens here: 8"), against vLLM's 1,024 there."""
        (r,) = qwen_review.results
        assert int(r.replica.gpus) == 8 and r.batch_per_replica == 8
        e = r.engine_limit
        assert e is not None and (e.cap, e.limit, e.engine) == (8, 1024, "vLLM")
        assert e.cap_words == "p95 prompt + p95 output, 30,900 tokens"

    def test_the_default_limit_fleet_is_plans(self, qwen_review, cat):
        """plan's own calls give the figure the note states: 9 x 8 = 72 GPUs (the trial's lever-qwen.txt: "9 x 8 x
        H100 SXM 80GB = 72 GPUs"), against the review's 12 serving replicas at the cap without its margin (13 with
        the spare: the trial's "104 without the margin")."""
        (r,) = qwen_review.results
        e = r.engine_limit
        assert e.replicas == plans_fleet(cat, "qwen3-235b-a22b", 8) == 9
        assert e.gpus == 72 and e.cap_replicas == 12 and e.cap_gpus == 96
        assert r.gpus == 120  # the review's own fleet is unchanged: 14 serving + 1 spare at the +25% margin

    def test_the_note_beside_the_option(self, qwen_review):
        text = "max batch 8, no preemption; at vLLM's default 1,024: 72 GPUs before the margin, not 96 (planner plan)"
        (r,) = qwen_review.results
        assert cap_note(r) == text
        table = options_table(qwen_review)
        assert table.rows[0][[c.key for c in table.columns].index("batch_cap")] == text
        assert text not in table.rows[0][[c.key for c in table.columns].index("note")]  # Options' Note prints short
        md = render_markdown(qwen_review)  # the Markdown's Options table: the same note in its row
        row = next(line for line in md.splitlines() if line.startswith("| 1 | Qwen3-235B-A22B, H100 rented |"))
        assert "72 GPUs before the margin, not 96 (planner plan)" in row

    def test_a_cap_that_does_not_bind_gets_no_note(self, cat):
        """Llama-3.3-70B fp16 holds 43 sequences of 30,900 tokens on 8 x H100 (the trial: "30,900 tokens here: 43")
        and plan's 9 replicas at the engine's 1,024 are the review's 9 without the margin: no note."""
        s = parse_scenario(tomllib.loads(WORKLOAD + LLAMA_FP16))
        result, bare = sized(s.option[0], s, cat)
        assert result.batch_per_replica == 43 and int(result.replica.gpus) == 8
        assert bare.under_load.replicas == plans_fleet(cat, "llama3.3-70b", 8) == 9
        assert engine_limit_fleet(result, bare, s.workload, cat) is None
        assert (
            sequences_memory_holds(replica_of(plan("H100", "llama3.3-70b", 32768, gpus=8, catalog=cat), cat), 1) == 1024
        )
        assert math.isfinite(result.monthly_usd)
        assert not re.search("max batch 43", cap_note(result))
