"""``planner plan`` says what an fp8 KV cache buys where the engine reads it slower than a bf16 one (s186).

Expected rates: catalogs/reference/kernel_curves_aic.csv, fitted by bench/kernel_extract.py to aiconfigurator 0.12.0's
vLLM 0.24.0 FlashAttention-3 decode tables (bf16 / fp8 cache: H100 2.815 / 1.826, H200 3.783 / 1.901, B200 6.826 / 6.162
TB/s), over the catalog's datasheet bandwidths (3.35, 4.8, 8 TB/s).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from planner.catalog import default_catalog
from planner.cli import main
from planner.deploy import fp8_kv_note
from planner.engines.profiles import engine_profile

CAT = default_catalog()


def _note(gpu: str, model: str = "llama3.1-70b", engine: str = "vllm", kv: str = "fp8") -> str:
    p = CAT.precision(kv)
    return fp8_kv_note(CAT.gpu(gpu), CAT.model(model), engine_profile(engine), p.name, p.bytes_per_element)


@pytest.mark.parametrize("gpu, fp8, bf16, falls", [("H100", "1.83", "2.81", "23%"), ("H200", "1.90", "3.78", "0%")])
def test_hopper_under_vllm_states_the_two_rates_and_what_attention_saves(gpu, fp8, bf16, falls):
    """1 - 0.5 x bf16 / fp8: H100 1 - 0.5 x 2.815 / 1.826 = 23%; H200 1 - 0.5 x 3.783 / 1.901 = 0.5%, shown 0%."""
    note = _note(gpu)
    assert f"reads it at {fp8} TB/s" in note and f"against {bf16} for bf16" in note
    assert note.startswith("fp8 KV cache: 2x the tokens fit") and note.endswith(f"falls {falls}, not 50%")


@pytest.mark.parametrize(
    "gpu, model, engine, kv",
    [
        ("B200", "llama3.1-70b", "vllm", "fp8"),  # 6.16 of 6.83 TB/s: above 0.75 of the bf16 rate
        ("H200", "llama3.1-70b", "tensorrt-llm", "fp8"),  # XQA reads fp8 at its bf16 rate
        ("H200", "deepseek-v3", "vllm", "fp8"),  # MLA latents: the 16-bit rate
        ("H200", "llama3.1-70b", "vllm", "bf16"),
        ("H200", "llama3.1-70b", "ideal", "fp8"),  # no kernel curves
    ],
)
def test_no_note_where_an_fp8_cache_is_read_at_about_the_bf16_rate(gpu, model, engine, kv):
    assert _note(gpu, model, engine, kv) == ""


def test_plan_prints_it():
    out = CliRunner().invoke(
        main, ["plan", "--gpu", "H200", "--model", "llama3.1-70b", "--context", "8192", "--kv-precision", "fp8"]
    )
    assert out.exit_code == 0
    assert "fp8 KV cache: 2x the tokens fit, but vllm's decode attention reads it at 1.90 TB/s" in out.output


def test_export_warns_for_an_option_with_an_fp8_cache(tmp_path):
    """The review's Warnings carry the option's note in plan's words (planner.deploy.fp8_kv_note)."""
    scenario = tmp_path / "fp8.toml"
    scenario.write_text(
        "[workload]\npeak_requests_per_s = 10\naverage_requests_per_s = 5\nprompt_tokens_mean = 1000\n"
        "prompt_tokens_high = 2000\noutput_tokens_mean = 200\noutput_tokens_high = 400\nhigh_percentile = 95\n"
        "ttft_target_s = 2\ntpot_target_s = 0.1\n[[option]]\ngpu = 'H200'\nmodel = 'llama3.1-8b'\nkv_precision = 'fp8'\n",
        encoding="utf-8",
    )
    out = CliRunner().invoke(main, ["export", str(scenario), "-o", str(tmp_path / "r.md")])
    assert out.exit_code == 0, out.output
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert f"H200, llama3.1-8b, KV fp8, cloud: {_note('H200', 'llama3.1-8b')}" in " ".join(text.split())
