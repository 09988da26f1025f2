"""The MoE and attention kernels each engine release runs gpt-oss's MXFP4 experts with, per GPU architecture, as
read in the engines' sources (planner.engines.kernel_paths; docs/accuracy.md, "gpt-oss kernel paths by release")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner import api
from planner.accuracy import predict as acc
from planner.catalog import default_catalog
from planner.engines.kernel_paths import MXFP4_BYTES_PER_PARAM, mxfp4_kernel_path, mxfp4_refusal
from planner.errors import OutOfRangeError


class TestVllm011:
    def test_ampere_runs_marlin_and_triton_attention(self):
        """vLLM 0.11.0: get_mxfp4_backend returns MARLIN below capability 9 (quantization/mxfp4.py lines 95-99) and
        a model with sinks takes TRITON_ATTN off SM 9.0 (platforms/cuda.py lines 358-361)."""
        path = mxfp4_kernel_path("vllm", "v0.11.0", "Ampere")
        assert (path.moe, path.attention, path.refusal) == ("marlin", "triton_attn", "")

    def test_hopper_runs_triton_kernels_and_flash_attention(self):
        """vLLM 0.11.0 on SM 9.0: the Triton (triton_kernels) MXFP4 backend (line 101) and FlashAttention (line 362)."""
        path = mxfp4_kernel_path("vllm", "0.11.0", "Hopper")
        assert (path.moe, path.attention) == ("triton_kernels", "flash_attn")

    def test_an_unread_release_has_no_path(self):
        """vLLM 0.10.2's selection was not read: no path is claimed for it."""
        assert mxfp4_kernel_path("vllm", "0.10.2", "Hopper") is None


class TestSglang05:
    @pytest.mark.parametrize(("architecture", "attention"), [("Ampere", "triton"), ("Hopper", "fa3")])
    def test_attention_backend_by_architecture(self, architecture, attention):
        """SGLang 0.5.4.post2 server_args.py lines 921-926 (0.5.3: 737-741): fa3 on SM90, else triton (trtllm_mha on
        SM100); the MoE runner triton_kernel at ep_size 1 (lines 960-968), experts kept MXFP4."""
        path = mxfp4_kernel_path("sglang", "v0.5.4.post2", architecture)
        assert (path.moe, path.attention) == ("triton_kernels", attention)
        assert path.expert_bytes_per_param == MXFP4_BYTES_PER_PARAM

    def test_expert_parallel_upcasts_experts_to_bf16(self):
        """mxfp4.py lines 569-584 (0.5.4.post2): a runner other than triton_kernel (ep_size > 1 off Blackwell) gets
        the experts upcast to bf16 at load: 2 B per weight."""
        path = mxfp4_kernel_path("sglang", "0.5.3", "Hopper", expert_parallel=True)
        assert (path.moe, path.expert_bytes_per_param) == ("triton", 2.0)

    def test_blackwell_runs_flashinfer_mxfp4(self):
        """server_args.py lines 951-952: flashinfer_mxfp4 on Blackwell, attention trtllm_mha (line 922)."""
        path = mxfp4_kernel_path("sglang", "0.5.4", "Blackwell")
        assert (path.moe, path.attention) == ("flashinfer_mxfp4", "trtllm_mha")


class TestTensorRtLlm1:
    def test_hopper_runs_cutlass_w4a16(self):
        """WFP4A16FusedMoEMethod.create_weights accepts sm_version 90."""
        path = mxfp4_kernel_path("tensorrt-llm", "v1.2.0rc1", "Hopper")
        assert (path.moe, path.refusal) == ("cutlass_wfp4a16", "")

    @pytest.mark.parametrize("architecture", ["Ampere", "Ada Lovelace"])
    def test_below_sm90_is_refused(self, architecture):
        """It raises NotImplementedError "WFP4A16 MoE is unsupported on SM{sm_version}" for any other SM; gpustack's
        1.2.0rc1 run on an A100 printed it (gpt-oss-20b/a100.md at 47277d7)."""
        why = mxfp4_refusal("tensorrt-llm", "1.2.0rc1", architecture)
        assert why.startswith(f"tensorrt-llm 1.2.0 cannot load MXFP4 experts on {architecture}: WFP4A16 MoE")

    def test_a_rows_reason_and_the_api_error_word_the_refusal_alike(self):
        """A validation row's reason (``mxfp4_refusal``) and the API's error (``deploy.release_error``) say the
        engine's error and what its kernel needs in the same words (``refusal_message``)."""
        said = ": WFP4A16 MoE is unsupported on SM80 (its WFP4A16 MoE runs on SM 9.0 only"
        assert said + "; TensorRT-LLM tensorrt_llm/" in mxfp4_refusal("tensorrt-llm", "1.2.0rc1", "Ampere")
        with pytest.raises(OutOfRangeError) as refused:
            api.max_batch("A100", "gpt-oss-20b", 4096, engine="tensorrt-llm")
        assert f"on A100 SXM 80GB (Ampere, SM 8.0){said}); use another engine" in str(refused.value)

    def test_other_engines_and_hopper_are_not_refused(self):
        """Only TensorRT-LLM 1.x below SM 9.0 refuses."""
        assert mxfp4_refusal("tensorrt-llm", "1.0.0", "Hopper") == ""
        assert mxfp4_refusal("vllm", "0.11.0", "Ampere") == ""
        assert mxfp4_refusal("tensorrt-llm", "0.21.0", "Ampere") == ""


class TestRowsOnARefusedPath:
    def test_a_tensorrt_llm_gpt_oss_row_on_a100_gets_no_prediction_and_the_reason(self):
        """GPUSTACK-145 (TensorRT-LLM 1.2.0rc1, gpt-oss-20b, H100) moved to an A100: the run gpustack could not make;
        no prediction, and why_not_predicted names the kernel's refusal."""
        cat = default_catalog()
        row = next(r for r in acc.load_decode_rows() if r.record_id == "GPUSTACK-145")
        assert acc.release_refusal(row, cat) == ""
        on_a100 = replace(row, gpu="A100 SXM 80GB")
        assert "WFP4A16 MoE is unsupported on SM80" in acc.why_not_predicted(on_a100, catalog=cat)
        p = acc.predict_decode(on_a100, catalog=cat)
        assert p.tpot_s != p.tpot_s and p.ttft_s != p.ttft_s  # NaN
