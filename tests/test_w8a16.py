"""w8a16: weight-only 8-bit (GPTQ 8-bit, compressed-tensors W8A16), not the catalog's int8 (W8A8).

Known values: vLLM's gptq_marlin.py (commit 00161ce) runs a GPTQ checkpoint with bits 8, sym true as uint8b128 with
one scale of the activation dtype (fp16/bf16) per group; a GPTQ 8-bit checkpoint's quantize_config.json
(Qwen/Qwen-7B-Chat-Int8 @ ce1512e) states bits 8, group_size 128, sym true. So a weight is 8 bits plus 16 / 128
bits of scale, (8 + 0.125) / 8 = 1.015625 B, and the matrix math is fp16 (dequantized), as int4 = W4A16's.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

import planner
from planner.accuracy.published import checkpoint_precision
from planner.catalog import default_catalog
from planner.cli import main
from planner.excel import functions as xf

CAT = default_catalog()


class TestCatalogEntry:
    def test_bytes_and_math_are_gptq_8bit_group_128_in_fp16(self):
        p = CAT.precision("w8a16")
        assert (p.bits_per_element, p.scale_bits, p.scale_block) == (8, 16, 128)
        assert p.bytes_per_element == (8 + 16 / 128) / 8 == 1.015625
        assert p.math == "fp16" and p.quantizes == "linear-layers"
        assert not p.kv_cache  # a weight format: an 8-bit KV cache is int8 or fp8
        assert "00161ce01fe64fdae0ec8ff1ae198c7b9befbdad" in p.source and "group_size 128" in p.source

    @pytest.mark.parametrize("alias", ["W8A16", "gptq-int8", "GPTQ-8bit", "int8-weight-only", "int8-g128"])
    def test_aliases_name_w8a16(self, alias):
        assert CAT.precision(alias).name == "w8a16"

    @pytest.mark.parametrize("alias", ["int8", "w8a8", "w8a8-int8", "i8"])
    def test_int8_stays_w8a8_with_int8_math(self, alias):
        assert CAT.precision(alias).name == "int8" and CAT.precision(alias).math == "int8"

    def test_weights_are_the_linear_layers_at_1_015625_bytes_and_the_rest_at_2(self):
        """Qwen3-8B: bf16 and int4 fix the quantized params q and the kept 16-bit ones k (2q' = bf16 - int4 ...);
        w8a16 must then be 1.015625 q + 2 k."""
        bf16, int4 = (planner.weight_bytes("qwen3-8b", precision=w) for w in ("bf16", "int4"))
        quantized = (bf16 - int4) / (2 - 0.515625)
        kept_bytes = bf16 - 2 * quantized
        assert planner.weight_bytes("qwen3-8b", precision="w8a16") == pytest.approx(
            1.015625 * quantized + kept_bytes, rel=1e-9
        )

    @pytest.mark.parametrize(
        "published, precision",
        [
            ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "w8a16"),
            ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a16", "w8a16"),  # read int4 before w8a16 existed
            ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "int8"),
            ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "int4"),
        ],
    )
    def test_checkpoint_names_state_the_weight_format(self, published, precision):
        assert checkpoint_precision(published) == precision


class TestTiming:
    def test_prefill_runs_at_the_weight_only_rate_not_int8_gemms(self):
        """s140's weight_only_flop_scale (weights under 1.5 B, 16-bit math) takes w8a16 as it takes int4: a
        4,096-token prefill on an A100 is compute-bound, so w8a16 and int4 take the same time, slower than bf16
        (Marlin at 0.574 of the bf16 GEMM rate), and int8 (624 TOPS int8 GEMMs) is faster than all three."""
        ttft = {w: xf.TTFT("A100", "Qwen3-8B", 4096.0, None, w) for w in ("bf16", "int4", "w8a16", "int8")}
        assert ttft["w8a16"] == pytest.approx(ttft["int4"], rel=1e-9)
        assert ttft["int8"] < ttft["bf16"] < ttft["w8a16"]


class TestSurfaces:
    def test_cli_plan_takes_w8a16(self):
        r = CliRunner().invoke(
            main, ["plan", "--gpu", "A100", "--model", "qwen3-8b", "--context", "4096", "-w", "w8a16"]
        )
        assert r.exit_code == 0, r.output
        assert "Qwen3-8B on 1 x A100 SXM 80GB, context 4,096 tokens (weights w8a16, KV bf16" in r.output
        gb = planner.weight_bytes("qwen3-8b", precision="w8a16") / 1e9
        assert re.search(rf"- weights\s+{gb:.2f} GB", r.output)

    def test_excel_functions_take_w8a16(self):
        assert xf.WEIGHT_BYTES("Qwen3-8B", "gptq-int8") == planner.weight_bytes("qwen3-8b", precision="w8a16")
        assert isinstance(xf.TPOT("A100", "Qwen3-8B", 4096.0, 64.0, None, None, "w8a16"), float)
        assert xf.MAX_BATCH("A100", "Qwen3-8B", 4096.0, None, None, "w8a16") > 0
        assert xf.MAX_BATCH("A100", "Qwen3-8B", 4096.0, "w8a16") == "#NUM!"  # not a KV-cache format
        assert ["w8a16"] in xf.PLANNER_PRECISIONS()
        assert xf.PLANNER_INFO("w8a16", "math") == "fp16"
