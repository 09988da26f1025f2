"""Every surface refuses (or sizes) an engine release's MXFP4 experts through the one model: TensorRT-LLM 1.x cannot
load gpt-oss's experts below SM 9.0, SGLang 0.5.1-0.5.9 upcasts them to bf16 under expert parallelism off Blackwell
(planner.engines.kernel_paths; model.mxfp4_experts_refused, model.experts_as_loaded; deploy.release_error).

Sources: TensorRT-LLM ``WFP4A16FusedMoEMethod.create_weights`` (tensorrt_llm/_torch/modules/fused_moe/quantization.py)
accepts ``sm_version == 90`` only, else raises "WFP4A16 MoE is unsupported on SM{sm_version}."; gpustack's
TensorRT-LLM 1.2.0rc1 run of gpt-oss-20b on an A100 printed "WFP4A16 MoE is unsupported on SM80."
(docs/performance-lab/gpt-oss-20b/a100.md at gpustack/gpustack 47277d7). SGLang wheels 0.5.1, 0.5.4.post2, 0.5.5 and
0.5.9: ``server_args.py`` gives gpt-oss the triton_kernel MoE runner only at ep_size 1 ("Triton kernel MoE is only
supported when ep_size == 1") and ``layers/quantization/mxfp4.py`` upcasts the experts with ``upcast_from_mxfp`` to
bf16 for any other runner (kernel_paths.SGLANG_EP_UPCAST_SOURCE has the lines).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cli_support import one_line, run

from planner import api
from planner.catalog import default_catalog
from planner.deploy import release_error
from planner.engines.kernel_paths import (
    PROFILE_RELEASES,
    mxfp4_kernel_path,
    profile_expert_parallel_bytes_per_param,
    profile_mxfp4_refusal,
)
from planner.engines.profiles import ENGINES, engine_for_version
from planner.errors import OutOfRangeError
from planner.excel.cells import failure_from
from planner.model import failures

A100, H100, B200, L40S = "A100 SXM 80GB", "H100 SXM 80GB", "B200 180GB", "L40S"
#: The error line's start, engine release and GPU named (the refusal's own words follow).
REFUSED_A100 = "TensorRT-LLM 1.x (engine 'tensorrt-llm') cannot load gpt-oss-20b's MXFP4 experts on A100 SXM 80GB"


class TestProfileReleases:
    @pytest.mark.parametrize("profile", sorted(PROFILE_RELEASES))
    def test_each_profile_stands_for_the_release_it_names(self, profile):
        """The release each profile is taken for maps back to that profile (engine_for_version), so the refusal and
        the upcast are those of the releases the profile models."""
        release = PROFILE_RELEASES[profile]
        assert engine_for_version(release.engine, release.version)[0].name == profile
        assert profile in ENGINES

    def test_tensorrt_llm_1_refuses_below_hopper_only(self):
        """sm_version == 90 only: Turing (7.5), Ampere (8.0) and Ada (8.9) are refused, Hopper is not; Blackwell's MoE
        backend was not read, so it is not refused."""
        refused = {a: bool(profile_mxfp4_refusal("tensorrt-llm", a)) for a in ("Turing", "Ampere", "Ada Lovelace")}
        assert refused == {"Turing": True, "Ampere": True, "Ada Lovelace": True}
        assert profile_mxfp4_refusal("tensorrt-llm", "Hopper") == ""
        assert profile_mxfp4_refusal("tensorrt-llm", "Blackwell") == ""
        assert profile_mxfp4_refusal("tensorrt-llm-0", "Ampere") == ""  # 0.x: not read
        assert profile_mxfp4_refusal("Turing", "Ampere") == ""  # not a profile

    def test_turing_is_refused_by_vllm_and_sglang_with_vllms_own_error(self):
        """Below SM 8.0 no kernel path is claimed: vLLM's and SGLang's ``Mxfp4Config.get_min_capability`` return 80
        (vllm/model_executor/layers/quantization/mxfp4.py, sglang/srt/layers/quantization/mxfp4.py), and vLLM
        raises before choosing a kernel; a T4 run printed "The quantization method mxfp4 is not supported for the
        current GPU. Minimum capability: 80. Current capability: 75." Every vLLM and SGLang profile takes it."""
        for engine, version in (("vllm", "0.11.0"), ("sglang", "0.5.3")):
            path = mxfp4_kernel_path(engine, version, "Turing")
            assert path is not None and not path.moe and not path.attention
            assert path.refusal == (
                "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80. "
                "Current capability: 75."
            )
        for profile in ("vllm", "vllm-0.10", "sglang", "sglang-0.5.5"):
            assert "Minimum capability: 80" in profile_mxfp4_refusal(profile, "Turing")
            assert profile_mxfp4_refusal(profile, "Ampere") == ""

    @pytest.mark.parametrize(
        ("profile", "architecture", "width"),
        [
            ("sglang-0.5.1", "Ampere", 2.0),
            ("sglang-0.5.5", "Hopper", 2.0),
            ("sglang-0.5.1", "Blackwell", 0.0),  # flashinfer_mxfp4 keeps them MXFP4
            ("sglang-0.5.10", "Hopper", 0.0),  # not read
            ("vllm", "Hopper", 0.0),
            ("tensorrt-llm", "Ampere", 0.0),  # refused, not upcast
        ],
    )
    def test_expert_parallel_width(self, profile, architecture, width):
        """SGLang 0.5.1-0.5.9 off Blackwell loads spread MXFP4 experts at 2 B per weight (bf16); nothing else changes."""
        assert profile_expert_parallel_bytes_per_param(profile, architecture) == width


class TestPythonApi:
    def test_raises_one_line_naming_release_gpu_and_way_out(self):
        """errors="raise": OutOfRangeError (#NUM!, exit 2, as a refused GPU group) with the release, the GPU, the
        kernel's own error and what to do."""
        with pytest.raises(OutOfRangeError) as info:
            api.max_batch(A100, "gpt-oss-20b", 8192, engine="tensorrt-llm")
        text = str(info.value)
        assert text.startswith(REFUSED_A100 + " (Ampere, SM 8.0): WFP4A16 MoE is unsupported on SM80")
        assert text.endswith("use another engine (vllm, sglang) or a Hopper GPU (H100, H200)")
        assert "\n" not in text

    @pytest.mark.parametrize("function", ["memory_plan", "tpot", "ttft", "min_gpus", "throughput"])
    def test_every_deployment_function_refuses(self, function):
        """deploy checks it once for every function that sizes a deployment, a given group or a chosen one."""
        call = getattr(api, function)
        with pytest.raises(OutOfRangeError, match="WFP4A16 MoE is unsupported on SM80"):
            call(A100, "gpt-oss-120b", 4096, engine="tensorrt-llm", **({"gpus": 2} if function != "min_gpus" else {}))

    def test_hopper_other_engines_and_bf16_experts_load(self):
        """The same model on an H100, on A100 under vLLM (Marlin) or SGLang, or as a bf16 checkpoint is sized."""
        assert api.max_batch(H100, "gpt-oss-20b", 8192, engine="tensorrt-llm") > 0
        assert api.max_batch(A100, "gpt-oss-20b", 8192, engine="vllm") > 0
        assert api.max_batch(A100, "gpt-oss-20b", 8192, engine="sglang-0.5.1") > 0
        assert api.max_batch(A100, "gpt-oss-20b", 8192, engine="tensorrt-llm", weight_precision="bf16") > 0

    def test_a_coerced_sweep_marks_only_the_refused_scenarios(self):
        """errors="coerce" over GPUs x models: NaN exactly where TensorRT-LLM 1.x meets MXFP4 experts below SM 9.0
        (A100 and L40S with gpt-oss); a dense model on the A100 and gpt-oss on the H100 keep their numbers. Inside
        failures.collect() each refused scenario's reason is the error raise mode gives."""
        gpus = np.array([A100, H100, L40S, A100, H100, A100])
        models = np.array(["gpt-oss-20b", "gpt-oss-20b", "gpt-oss-20b", "Llama-3.1-8B", "gpt-oss-120b", "gpt-oss-120b"])
        with failures.collect() as notes:
            tpot = api.tpot(gpus, models, 4096, engine="tensorrt-llm", gpus=2, errors="coerce")
        assert np.isnan(tpot).tolist() == [True, False, True, False, False, True]
        why = notes.reasons(tpot.shape)
        assert [w is None for w in why] == [False, True, False, True, True, False]
        assert str(why[0]).startswith(REFUSED_A100)
        assert "on L40S (Ada Lovelace, SM 8.9): WFP4A16 MoE is unsupported on SM89" in str(why[2])
        assert "gpt-oss-120b's MXFP4 experts on A100" in str(why[5])

    def test_one_scenario_coerced_is_nan(self):
        """A single refused scenario under errors="coerce": NaN, no exception."""
        assert math.isnan(api.tpot(A100, "gpt-oss-20b", 4096, engine="tensorrt-llm", errors="coerce"))


class TestSglangExpertParallelUpcast:
    def test_spread_experts_weigh_what_the_bf16_checkpoint_does(self):
        """SGLang 0.5.1 with experts spread over 4 H100s: the experts as loaded are bf16 (2 B each, no MXFP4 padding),
        so the whole model is 233,658,313,344 B, api.weight_bytes of gpt-oss-120b at bf16 (114.7e9 routed params x 2 B
        + the rest), not the 69.25 GB of MXFP4 experts padded to 3,072 (tensor parallelism, same engine)."""
        bf16 = api.weight_bytes("gpt-oss-120b", precision="bf16")
        assert bf16 == 233_658_313_344
        for layout in ("tp-ep", "dp-ep"):
            plan = api.memory_plan(H100, "gpt-oss-120b", 8192, engine="sglang-0.5.1", gpus=4, parallelism=layout)
            assert plan.weight_bytes == bf16
        tp = api.memory_plan(H100, "gpt-oss-120b", 8192, engine="sglang-0.5.1", gpus=4)
        assert tp.weight_bytes == pytest.approx(69.25e9, rel=1e-3)

    @pytest.mark.parametrize(
        ("gpu", "engine", "gpus"),
        [
            (B200, "sglang-0.5.1", 4),  # Blackwell: flashinfer_mxfp4, MXFP4 kept
            (H100, "sglang", 4),  # 0.5.20: not read, as stored
            (H100, "vllm", 4),
            (H100, "sglang-0.5.5", 1),  # one GPU: ep_size 1, the triton_kernel runner
        ],
    )
    def test_elsewhere_the_experts_stay_mxfp4(self, gpu, engine, gpus):
        """Off that path the expert-parallel plan weighs what the tensor-parallel one does."""
        ep = api.memory_plan(gpu, "gpt-oss-120b", 8192, engine=engine, gpus=gpus, parallelism="tp-ep")
        tp = api.memory_plan(gpu, "gpt-oss-120b", 8192, engine=engine, gpus=gpus)
        assert ep.weight_bytes == tp.weight_bytes < 70e9

    def test_decode_reads_the_experts_as_loaded(self):
        """The decode step reads the bf16 experts: more bytes per step than the same layout would with MXFP4 experts
        (the 0.5.20 profile, which keeps them), the step slower."""
        old = api.decode_step(H100, "gpt-oss-120b", 8192, engine="sglang-0.5.5", gpus=4, parallelism="tp-ep", batch=8)
        new = api.decode_step(H100, "gpt-oss-120b", 8192, engine="sglang", gpus=4, parallelism="tp-ep", batch=8)
        assert old.bytes_moved > 2 * new.bytes_moved
        assert old.step_s > new.step_s

    def test_a_coerced_sweep_upcasts_only_the_spread_groups(self):
        """Over groups of 1, 2 and 4 on H100 and B200: only H100 groups above 1 load bf16 experts, and 233.66 GB does
        not fit on 2 H100s (NaN under errors="coerce"), where the MXFP4 experts (the B200 row, vLLM) fit on one."""
        plan = api.memory_plan(
            np.array([[H100], [B200]]), "gpt-oss-120b", 8192, engine="sglang-0.5.1", gpus=np.array([1, 2, 4]),
            parallelism="tp-ep", errors="coerce",
        )  # fmt: skip
        weights = np.asarray(plan.weight_bytes)
        bf16 = api.weight_bytes("gpt-oss-120b", precision="bf16")
        assert np.isnan(weights).tolist() == [[False, True, False], [False, False, False]]
        assert (weights == bf16).tolist() == [[False, False, True], [False, False, False]]
        assert api.max_batch(H100, "gpt-oss-120b", 8192, engine="vllm", gpus=2, parallelism="tp-ep") > 0


class TestCli:
    def test_plan_exits_2_with_the_refusal(self):
        """`planner plan` on a refused combination: exit 2 (as a refused GPU group), one line naming the release."""
        r = run("plan", "--gpu", A100, "--model", "gpt-oss-20b", "--engine", "tensorrt-llm", "--context", "8192")
        line = one_line(r, 2)
        assert REFUSED_A100 in line and "WFP4A16 MoE is unsupported on SM80" in line

    def test_plan_says_the_experts_are_upcast(self):
        """`planner plan` under SGLang 0.5.1-0.5.9 with experts spread: the header says they load as bf16 and the
        whole model weighs 233.66 GB."""
        r = run(
            "plan", "--gpu", H100, "--model", "gpt-oss-120b", "--engine", "sglang-0.5.1", "--context", "8192",
            "--gpus", "4", "--parallelism", "tp-ep",
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "mxfp4 experts upcast to bf16 at load" in r.output
        assert "whole model 233.66 GB" in r.output

    @pytest.mark.parametrize(
        "more, weights",
        [
            # ServerArgs: flashinfer_mxfp4 on Blackwell keeps the experts MXFP4 at any ep_size
            (("--gpu", "B200"), "weights bf16 + mxfp4 experts, KV"),
            # a bf16 checkpoint's experts (resolve.expert_precision): nothing MXFP4 to state or upcast
            (("--gpu", H100, "--weight-precision", "bf16"), "weights bf16, KV"),
            # ep_size 1: the triton_kernel runner keeps them MXFP4
            (("--gpu", H100, "--gpus", "1"), "weights bf16 + mxfp4 experts, KV"),
        ],
    )
    def test_plan_says_upcast_only_where_the_model_loads_them_so(self, more, weights):
        """The header states the experts' format as resolved (``resolve.expert_precision``) and "upcast" as
        ``model.experts_upcast``, the rule the memory plan sizes the weights by: not on Blackwell, not for bf16
        experts, not on one GPU (SGLANG_EP_UPCAST_SOURCE; ``ServerArgs`` lines 915-973)."""
        args = ("--model", "gpt-oss-120b", "--engine", "sglang-0.5.1", "--context", "8192", "--parallelism", "tp-ep")
        r = run("plan", *args, *(("--gpus", "4") if "--gpus" not in more else ()), *more)
        assert r.exit_code == 0, r.output
        assert f"({weights} bf16, sglang-0.5.1 memory budget" in r.output
        assert "upcast" not in r.output

    def test_export_refuses_the_option(self, tmp_path):
        """`planner export` with an option TensorRT-LLM cannot load: exit 2 and the same line."""
        toml = tmp_path / "trt.toml"
        toml.write_text(
            'title = "t"\n[workload]\npeak_requests_per_s = 4\naverage_requests_per_s = 2\nprompt_tokens_mean = 800\n'
            "prompt_tokens_high = 3000\noutput_tokens_mean = 400\noutput_tokens_high = 1200\nhigh_percentile = 95\n"
            'ttft_target_s = 1.5\ntpot_target_s = 0.05\n[defaults]\nmodel = "gpt-oss-20b"\nengine = "tensorrt-llm"\n'
            f'[[option]]\nname = "A100"\ngpu = "{A100}"\npricing = "cloud"\ncloud_usd_per_gpu_hour = 2.0\n'
        )
        r = run("export", str(toml), "-o", str(tmp_path / "out.md"))
        assert REFUSED_A100 in one_line(r, 2)
        assert not (tmp_path / "out.md").exists()


class TestExcelFunctions:
    def test_the_refusal_shows_as_num(self):
        """The Excel value of the refusal is #NUM!, as for a refused GPU group (OutOfRangeError)."""
        cat = default_catalog()
        err = release_error(cat.model("gpt-oss-20b"), cat.gpu(A100), "tensorrt-llm")
        assert failure_from(err).code == "#NUM!"
        assert failure_from(api.tp_size_error(cat.model("Qwen2-7B"), 8)).code == "#NUM!"

    def test_the_functions_refuse_the_engine_that_cannot_load_it(self):
        """The functions take an engine (their last argument, s198): blank sizes with vLLM's rules, under which gpt-oss
        loads on an A100 (Marlin MXFP4); "tensorrt-llm" is refused as plan refuses it, #NUM! and the same reason."""
        from planner.excel import functions as xf

        assert isinstance(xf.MAX_BATCH(A100, "gpt-oss-20b", 8192.0), (int, float))
        trt = (A100, "gpt-oss-20b", 8192.0, None, None, None, None, None, "tensorrt-llm")
        assert xf.MAX_BATCH(*trt) == "#NUM!"
        assert "cannot load gpt-oss-20b's MXFP4 experts on A100" in xf.PLANNER_WHY("MAX_BATCH", *trt)


def _refusal_book(engine: str = "tensorrt-llm"):
    from planner.workbook.build import build_whatif

    return build_whatif(gpus=[A100, H100], models=["gpt-oss-20b"], engine=engine, load=False)


class TestWhatIfWorkbook:
    @pytest.mark.parametrize(("engine", "want"), [("tensorrt-llm", [1, 0]), ("vllm", [0, 0])])
    def test_gpus_sheet_marks_where_the_engine_refuses(self, engine, want):
        """The GPUs sheet's gpu_mxfp4_refused column holds gpu_numbers' flag for the workbook's engine: 1 on the A100
        under TensorRT-LLM 1.x, 0 on the H100 and under vLLM."""
        import re

        spec = _refusal_book(engine)
        sheet, ref = spec.name("gpu_mxfp4_refused").ref.split("!")
        col, first, last = re.fullmatch(r"\$([A-Z]+)\$(\d+):\$[A-Z]+\$(\d+)", ref).groups()
        cells = spec.sheet(sheet).cells
        # the workbook's engine's: a cell the engines it offers differ in reads the one chosen on Inputs (trial 22 F13)
        from workbook_support import first_engine

        assert [first_engine(cells[f"{col}{r}"].value) for r in range(int(first), int(last) + 1)] == want

    @pytest.mark.libreoffice
    def test_recalculated_group_is_num_where_the_model_refuses(self, tmp_path):
        """Recalculated by LibreOffice, the Calc sheet's group and max batch are #NUM! for gpt-oss-20b on the A100
        (the Excel value of the model's OutOfRangeError) and equal the model's on the H100: the same refusal."""
        from workbook_support import recalculate_inputs, require_libreoffice

        require_libreoffice()
        spec = _refusal_book()
        books = recalculate_inputs(
            spec, {"a100": {"gpu": A100, "context": 4096}, "h100": {"gpu": H100, "context": 4096}}, tmp_path
        )
        probes = {p.quantity: p for p in spec.probes if p.scenario == "base"}
        for quantity in ("memory_plan.gpus", "memory_plan.max_batch"):
            p = probes[quantity]
            field = quantity.split(".")[1]
            with pytest.raises(OutOfRangeError) as info:
                api.memory_plan(A100, "gpt-oss-20b", 4096, engine="tensorrt-llm")
            assert books["a100"][p.sheet][p.ref].value == failure_from(info.value).code == "#NUM!"
            h100 = getattr(api.memory_plan(H100, "gpt-oss-20b", 4096, engine="tensorrt-llm"), field)
            assert books["h100"][p.sheet][p.ref].value == h100 * p.scale
