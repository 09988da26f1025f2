"""Expert layouts (issues 21 and 22, s126): a row's expert parallelism as its own server command states it, the
grouped GEMM at one expert's whole width where it is read (EXPERIMENT ``EXPERT_PARALLEL_FROM_ROWS``, off), and
TensorRT-LLM's grouped-GEMM half width and rows re-derived from its measured fused-MoE calls at both layouts
(shipped in s126: TensorRT-LLM 1.x on H100 / H200).

Known values: gpustack's performance-lab commands (catalogs/reference/perf_public.csv, load_public.csv notes);
aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 kernel database (Apache-2.0), kept in
catalogs/reference/moe_trtllm_aic.csv by ``bench/trtllm_moe_extract.py``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.accuracy import published
from planner.accuracy.predict import _profile_for
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.engines import kernel_curves, kernel_floor, profiles
from planner.model import operators
from planner.model.facts import EngineFacts, field_names

REFERENCE = Path(__file__).resolve().parents[1] / "catalogs" / "reference"


def _rows() -> dict:
    rows = load_decode_rows() + load_decode_rows(reference_dir() / "load_public.csv")
    return {r.record_id: r for r in rows}


class TestReading:
    @pytest.mark.parametrize(
        "record_id, spread",
        [
            ("GPUSTACK-003", True),  # trtllm-serve --tp_size 8 --ep_size 8
            ("LD038", True),  # trtllm-serve --tp_size 8 --ep_size 8 --pp_size 1
            ("LD037", False),  # trtllm-serve --tp_size 8: MappingBase's moe_tp = 8, moe_ep = 1
            ("GPUSTACK-074", True),  # vllm serve -tp 8 --enable-expert-parallel
            ("GPUSTACK-073", False),  # vllm serve -tp 8
            ("GPUSTACK-063", True),  # sglang --tp-size 2 --ep-size 2
            ("GPUSTACK-062", False),  # its own command is --tp-size 2; the note quotes the page's TP4 + EP4 one
            ("GPUSTACK-024", False),  # --enable-dp-attention without --ep-size: experts still split
            ("IX870-001", False),  # expert_parallel_size 1 (TP=8, EP=1)
        ],
    )
    def test_rows_as_their_commands_say(self, record_id, spread):
        assert _rows()[record_id].expert_parallel is spread

    def test_flags(self):
        assert published.expert_parallel_of({"notes": "serving script at line 1: sglang --tp 4 --ep 4"})
        assert published.expert_parallel_of({"notes": "x --expert-parallel-size 2"})
        assert not published.expert_parallel_of({"notes": "trtllm-serve m --tp_size 8 --ep_size 1"})
        assert published.expert_parallel_of({"expert_parallel_size": "8", "notes": ""})


def _limits(**values) -> EngineFacts:
    return EngineFacts(**{name: values.get(name, 0.0) for name in field_names(EngineFacts)})


class TestWholeExperts:
    def test_whole_width_where_read(self, monkeypatch):
        """With the switch on, LD038's profile holds whole experts and LD037's does not; off, neither."""
        rows = _rows()
        assert _profile_for(rows["LD038"], None).experts_whole == 0.0
        monkeypatch.setattr(profiles, "EXPERT_PARALLEL_FROM_ROWS", True)
        assert _profile_for(rows["LD038"], None).experts_whole == 1.0
        assert _profile_for(rows["LD037"], None).experts_whole == 0.0
        # one copy per profile (the facts caches key on the profile object), as the shipped per-row readings give
        assert _profile_for(rows["LD038"], None) is _profile_for(rows["LD038"], None)

    def test_the_grouped_gemm_takes_the_whole_width(self):
        """DeepSeek-V3's 2,048-wide experts on 8 GPUs: split, w = 256 (w / (w + 382) = 0.40 of the dense rate on
        H200); whole, w = 2,048 (0.84): the same time as the width given by hand."""
        from planner.deploy import deploy
        from planner.model.decode import experts_touched
        from planner.options import DecodeOptions, Options

        o = Options.read(DecodeOptions, dict(batch=1, gpus=8, check_fit=False, engine="vllm"), "decode_step")
        f = deploy("H200 SXM 141GB", "DeepSeek-R1", 1024, o).facts
        m, lim = f.model, f.limits
        tokens = 8192.0
        touched = experts_touched(m, tokens)
        experts = operators.expert_weight_bytes(m, f.precision, touched)
        whole = type(lim)(**{**lim.__dict__, "experts_whole": 1.0})
        split_s = operators.expert_layers_time_s(f.gpu, lim, experts, m, tokens, 1.0, 8.0, None, touched)
        whole_s = operators.expert_layers_time_s(f.gpu, whole, experts, m, tokens, 1.0, 8.0, None, touched)
        by_hand = operators.expert_layers_time_s(
            f.gpu, lim, experts, m, tokens, 1.0, 8.0, m.expert_split_width, touched
        )
        assert float(m.expert_split_width) == 2048.0
        assert whole_s == pytest.approx(by_hand, rel=1e-12)
        assert 1.8 < split_s / whole_s < 2.4


class TestTensorRtLlmHalves:
    @pytest.mark.parametrize("gpu", sorted(kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS))
    def test_shipped_halves_are_the_fit(self, gpu):
        """TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS / _ROWS re-derived from the shipped calls (both layouts), to the 0.1
        they are shipped at; the fit halves the calls' median error (19% -> 10%)."""
        path = REFERENCE / kernel_floor.TENSORRT_LLM_MOE_FILE_NAME
        w0, m0, before, after = kernel_floor.moe_gemm_halves(gpu, path)
        assert round(w0, 1) == pytest.approx(kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_WIDTHS[gpu], abs=0.06)
        assert round(m0, 1) == pytest.approx(kernel_curves.TENSORRT_LLM_MOE_GEMM_HALF_ROWS[gpu], abs=0.06)
        assert before > 0.15 and after < 0.11

    def test_the_split_layout_is_measured_slower(self):
        """DeepSeek-V3's MoE on H200 (fp8 block): at moe_tp 8 TensorRT-LLM's call of 1,024 tokens takes 1.086 ms,
        at moe_ep 8 0.445 ms (2.44x), the numbers the s126 History paragraph quotes."""
        with (REFERENCE / kernel_floor.TENSORRT_LLM_MOE_FILE_NAME).open(newline="") as fh:
            got = {
                (r["tp_size"], r["ep_size"]): float(r["latency_ms"])
                for r in csv.DictReader(fh)
                if r["gpu"] == "H200 SXM 141GB" and r["dtype"] == "fp8_block" and r["tokens"] == "1024"
                and (r["hidden_size"], r["inter_size"], r["topk"], r["num_experts"]) == ("7168", "2048", "8", "256")
            }  # fmt: skip
        assert got[("8", "1")] == pytest.approx(1.086, abs=0.001)
        assert got[("1", "8")] == pytest.approx(0.4454, abs=0.001)

    def test_only_tensorrt_llm_on_a_measured_gpu_takes_them(self):
        """TensorRT-LLM 1.x on H200 takes its own halves (572, 68.7); vLLM there and TensorRT-LLM on a GPU without
        TensorRT-LLM measurements (A100: the measured GPUs' mean, as vLLM's) keep vLLM's."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import gpu_numbers

        cat = default_catalog()
        trt = profiles.engine_profile("tensorrt-llm")
        h200 = gpu_numbers(cat.gpu("H200 SXM 141GB"), trt)
        assert (h200["moe_gemm_half_width"], h200["moe_gemm_half_rows"]) == (572.0, 68.7)
        assert gpu_numbers(cat.gpu("H200 SXM 141GB"), profiles.engine_profile("vllm"))["moe_gemm_half_width"] == 382.0
        a100 = gpu_numbers(cat.gpu("A100 SXM 80GB"), trt)["moe_gemm_half_width"]
        assert a100 == kernel_curves.MOE_GEMM_HALF_WIDTH_UNMEASURED

    @pytest.mark.parametrize("gpu", ["H800 SXM 80GB", "H100 PCIe 80GB", "H20 96GB", "GH200 96GB"])
    def test_a_hopper_that_borrows_the_h100s_curves_borrows_its_tensorrt_llm_halves(self, gpu):
        """A Hopper GPU without its own measurements takes H100 SXM's kernel curves, vLLM's halves among them
        (``kernel_curves.source_gpu``); TensorRT-LLM 1.x there takes H100 SXM's TensorRT-LLM halves (644.6, 81.6),
        not vLLM's Triton ones: the kernel is the engine's, the tiles' efficiency the architecture's. MI300X, which
        also borrows H100 SXM's curves, is not a Hopper and keeps them."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import gpu_numbers

        cat = default_catalog()
        trt = profiles.engine_profile("tensorrt-llm")
        got = gpu_numbers(cat.gpu(gpu), trt)
        assert (got["moe_gemm_half_width"], got["moe_gemm_half_rows"]) == (644.6, 81.6)
        vllm = gpu_numbers(cat.gpu(gpu), profiles.engine_profile("vllm"))["moe_gemm_half_width"]
        assert vllm == kernel_curves.MOE_GEMM_HALF_WIDTHS["H100 SXM 80GB"]
        mi300x = gpu_numbers(cat.gpu("MI300X"), trt)["moe_gemm_half_width"]
        assert mi300x == kernel_curves.MOE_GEMM_HALF_WIDTHS["H100 SXM 80GB"]
