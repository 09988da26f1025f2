"""Which MoE and attention kernels an engine release runs an MXFP4-expert model (gpt-oss) with, per GPU architecture.

Read from the engines' own sources at the releases gpustack's gpt-oss runs name (docs/accuracy.md, "gpt-oss kernel
paths by release"):

- vLLM 0.11.0 (the wheel): ``get_mxfp4_backend`` (``vllm/model_executor/layers/quantization/mxfp4.py`` lines
  59-102) takes Marlin when the compute capability is below 9 ("Using Marlin backend") and triton_kernels'
  ``matmul_ogs`` on Hopper when triton_kernels and torch >= 2.8 are installed (FlashInfer's MXFP4 paths only with
  an opt-in environment variable, or on SM100). Attention: ``CudaPlatform.get_attn_backend_cls``
  (``vllm/platforms/cuda.py`` lines 356-366): a model with attention sinks on any GPU but SM 9.0 takes
  ``TRITON_ATTN``; on SM 9.0 FlashAttention (its FA3 build carries the sinks).
- SGLang 0.5.3 and 0.5.4.post2 (the wheels): ``ServerArgs`` for ``GptOssForCausalLM`` (0.5.4.post2
  ``sglang/srt/server_args.py`` lines 915-973; 0.5.3 lines 734-784) picks the attention backend ``trtllm_mha`` on
  SM100, ``fa3`` on SM90, else ``triton``; the MoE runner ``flashinfer_mxfp4`` on Blackwell, else ``triton_kernel``
  when ep_size is 1 and triton_kernels is installed. ``Mxfp4MoEMethod.process_weights_after_loading``
  (0.5.4.post2 ``sglang/srt/layers/quantization/mxfp4.py`` lines 539-584) keeps the experts in MXFP4 for that
  runner (swizzled by ``_swizzle_mxfp4``) and upcasts them to bf16 at load (``upcast_from_mxfp``, itself imported
  from triton_kernels) for any other runner: with expert parallelism (ep_size > 1) off Blackwell the experts are
  loaded at 2 B per weight, not 0.53. A run at ep_size 1 that loaded at all had triton_kernels, so its experts
  stay MXFP4 on A100 too.
- TensorRT-LLM 1.x (PyTorch backend, the CUTLASS MoE backend by default): ``WFP4A16FusedMoEMethod.create_weights``
  (``tensorrt_llm/_torch/modules/fused_moe/quantization.py``, NVIDIA/TensorRT-LLM) accepts ``sm_version == 90``
  only, else raises ``NotImplementedError(f"WFP4A16 MoE is unsupported on SM{sm_version}.")``; gpustack's
  1.2.0rc1 run of gpt-oss-20b on an A100 printed exactly that (docs/performance-lab/gpt-oss-20b/a100.md at
  gpustack/gpustack 47277d7, "NotImplementedError: WFP4A16 MoE is unsupported on SM80.").

vLLM and SGLang (every release with MXFP4): ``Mxfp4Config.get_min_capability`` returns 80, so below SM 8.0 (a T4)
neither loads an MXFP4 checkpoint ("The quantization method mxfp4 is not supported for the current GPU. Minimum
capability: 80. Current capability: 75.", ``VllmConfig._get_quantization_config``).

The capacity model times every path from the GPU's measured kernel curves (no per-kernel rates per engine yet):
this module says which path runs and where a release cannot load the model at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.engines.profiles import parse_version

#: GPU architectures (catalog ``architecture``) by CUDA compute capability major.minor.
ARCHITECTURE_SM = {
    "Turing": 75, "Ampere": 80, "Ada Lovelace": 89, "Hopper": 90, "Blackwell": 100, "Blackwell Ultra": 103,
}  # fmt: skip
#: The oldest compute capability vLLM and SGLang load an MXFP4 checkpoint on: each one's ``Mxfp4Config.
#: get_min_capability`` returns 80, and vLLM checks it before choosing a kernel (``VllmConfig._get_quantization_config``
#: raises the ValueError of ``min_capability_refusal``; a T4 run printed it: "Minimum capability: 80. Current
#: capability: 75."). Their MXFP4 kernels from SM 8.0 were read; below it nothing loads.
MXFP4_MIN_CAPABILITY = 80
#: vLLM's and SGLang's MXFP4 engine families, which share that floor.
MIN_CAPABILITY_FAMILIES = ("vllm", "sglang")
_MIN_CAPABILITY_SOURCE = (
    "vllm/model_executor/layers/quantization/mxfp4.py Mxfp4Config.get_min_capability (80) and vllm/config/vllm.py "
    "VllmConfig._get_quantization_config; sglang/srt/layers/quantization/mxfp4.py Mxfp4Config.get_min_capability (80)"
)
#: What each refusal's floor is, as ``refusal_message`` says it (keyed by the start of the engine's own error).
_FLOORS = {
    "The quantization method mxfp4": "its Mxfp4Config needs compute capability 8.0 (Ampere) or newer",
    "WFP4A16 MoE": "its WFP4A16 MoE runs on SM 9.0 only",
}


@dataclass(frozen=True)
class KernelPath:
    """The kernels one engine release runs an MXFP4-expert model with on one architecture.

    ``moe``/``attention``: the engine's name for the kernel ("" where the release cannot load the model);
    ``expert_bytes_per_param``: the routed experts as loaded (0.53125: MXFP4's 4 bits + one 8-bit scale per 32);
    ``refusal``: the error the release raises at load ("" where it loads); ``source``: file and lines read."""

    moe: str
    attention: str
    expert_bytes_per_param: float
    refusal: str
    source: str


MXFP4_BYTES_PER_PARAM = 4.25 / 8
#: EXPERIMENT switch (h-tpotcls, ``bench/switch_bootstrap.py vllm-hopper-mxfp4-marlin``; read at call time): True
#: times a published row of vLLM 0.10.0-0.11.0 with MXFP4 routed experts on SM 9.0 with Marlin's FLOP rate
#: (``vllm_hopper_mxfp4_marlin``); "ceiling" (``vllm-hopper-mxfp4-marlin:ceiling``): Marlin's fraction as a ceiling on
#: the grouped GEMM's fraction (its rate flattens there from 64 rows per expert on), not a factor; False: triton_kernels'
#: measured Hopper calls, as before.
VLLM_HOPPER_MXFP4_MARLIN = False
#: vLLM's first release with gpt-oss's MXFP4 experts (0.10.0, V1) and its first that depends on triton_kernels
#: (vllm-project/vllm pull request 27370, "[Misc] Add triton_kernels dependency", merged 2025-10-22, after 0.11.0:
#: "At the moment, users have to install `triton_kernels` manually to access this code-path").
VLLM_MXFP4_FIRST = (0, 10)
VLLM_TRITON_KERNELS_DEPENDENCY = (0, 11, 1)
VLLM_HOPPER_MARLIN_SOURCE = (
    "vLLM get_mxfp4_backend (vllm/model_executor/layers/quantization/mxfp4.py, 0.11.x): Marlin when "
    "`not has_triton_kernels()`; vllm-project/vllm pull request 27370 (triton_kernels a dependency only after 0.11.0)"
)
_VLLM_SOURCE = "vLLM 0.11.0 wheel: quantization/mxfp4.py get_mxfp4_backend lines 59-102; platforms/cuda.py 356-366"
_SGLANG_SOURCE = "SGLang 0.5.4.post2 wheel: server_args.py lines 915-973, layers/quantization/mxfp4.py lines 539-584"
_TRTLLM_SOURCE = (
    "TensorRT-LLM tensorrt_llm/_torch/modules/fused_moe/quantization.py WFP4A16FusedMoEMethod.create_weights; "
    "gpustack docs/performance-lab/gpt-oss-20b/a100.md (47277d7): 'WFP4A16 MoE is unsupported on SM80.'"
)


def mxfp4_kernel_path(engine: str, version: str, architecture: str, expert_parallel: bool = False) -> KernelPath | None:
    """The MoE and attention kernels of ``engine`` ``version`` for MXFP4 experts with attention sinks (gpt-oss) on
    ``architecture`` (catalog name), or None where no source was read for that engine, release or architecture.

    vLLM 0.11.x: Marlin + Triton attention below SM 9.0, triton_kernels + FlashAttention on SM 9.0. SGLang
    0.5.1-0.5.9 (read in 0.5.3 and 0.5.4.post2): triton_kernels + Triton attention on Ampere/Ada, triton_kernels + FA3
    on Hopper, FlashInfer MXFP4 + trtllm_mha on Blackwell; with ``expert_parallel`` off Blackwell the Triton fused-MoE
    runner over experts upcast to bf16 at load. TensorRT-LLM 1.x: CUTLASS W4A16 MXFP4 on Hopper, refused below it."""
    parsed = parse_version(version)
    sm = ARCHITECTURE_SM.get(architecture)
    if parsed is None or sm is None:
        return None
    v = parsed.release
    name = engine.strip().lower().replace("_", "-")
    if name in MIN_CAPABILITY_FAMILIES and sm < MXFP4_MIN_CAPABILITY:
        return KernelPath("", "", MXFP4_BYTES_PER_PARAM, min_capability_refusal(sm), _MIN_CAPABILITY_SOURCE)
    if name == "vllm" and v[:2] == (0, 11):
        if sm < 90:
            return KernelPath("marlin", "triton_attn", MXFP4_BYTES_PER_PARAM, "", _VLLM_SOURCE)
        if sm == 90:
            return KernelPath("triton_kernels", "flash_attn", MXFP4_BYTES_PER_PARAM, "", _VLLM_SOURCE)
        return None  # SM100: FlashInfer paths chosen by environment variables, not read here
    if name == "sglang" and (0, 5, 1) <= v[:3] < (0, 5, 10):
        if sm >= 100:
            return KernelPath("flashinfer_mxfp4", "trtllm_mha", MXFP4_BYTES_PER_PARAM, "", _SGLANG_SOURCE)
        attention = "fa3" if sm == 90 else "triton"
        if expert_parallel:
            return KernelPath("triton", attention, 2.0, "", _SGLANG_SOURCE)
        return KernelPath("triton_kernels", attention, MXFP4_BYTES_PER_PARAM, "", _SGLANG_SOURCE)
    if name in ("tensorrt-llm", "trtllm") and v[:1] == (1,):
        if sm < 90:
            return KernelPath("", "", MXFP4_BYTES_PER_PARAM, f"WFP4A16 MoE is unsupported on SM{sm}", _TRTLLM_SOURCE)
        if sm == 90:
            return KernelPath("cutlass_wfp4a16", "trtllm", MXFP4_BYTES_PER_PARAM, "", _TRTLLM_SOURCE)
    return None


def refusal_message(release: str, experts: str, where: str, refusal: str, source: str = "") -> str:
    """The one wording of a release that cannot load MXFP4 experts: "{release} cannot load {experts} on {where}:
    {refusal} (its WFP4A16 MoE runs on SM 9.0 only[; {source}])", ``refusal`` the engine's own error
    (``KernelPath.refusal``). TensorRT-LLM 1.x's ``WFP4A16FusedMoEMethod.create_weights`` is the only refusal read,
    hence its kernel and SM in the words."""
    tail = f"; {source}" if source else ""
    floor = next((f for start, f in _FLOORS.items() if refusal.startswith(start)), "")
    return f"{release} cannot load {experts} on {where}: {refusal} ({floor}{tail})"


def min_capability_refusal(sm: int) -> str:
    """vLLM's own error (and SGLang's floor) for an MXFP4 checkpoint on compute capability ``sm`` below 80."""
    return (
        f"The quantization method mxfp4 is not supported for the current GPU. Minimum capability: "
        f"{MXFP4_MIN_CAPABILITY}. Current capability: {sm}."
    )


def mxfp4_refusal(engine: str, version: str, architecture: str) -> str:
    """The one-line reason ``engine`` ``version`` cannot load MXFP4 experts on ``architecture`` (``refusal_message``,
    with the source read), or "" (it loads, or no source was read for it)."""
    path = mxfp4_kernel_path(engine, version, architecture)
    if path is None or not path.refusal:
        return ""
    release = ".".join(map(str, parse_version(version).release))
    return refusal_message(f"{engine} {release}", "MXFP4 experts", architecture, path.refusal, path.source)


@dataclass(frozen=True)
class ProfileRelease:
    """The engine release an engine profile (``planner.engines.profiles.ENGINES``) stands for where its MXFP4 path was
    read: ``engine`` and ``version`` as ``mxfp4_kernel_path`` takes them, ``label`` as an error names the release."""

    engine: str
    version: str
    label: str


#: Profiles whose release ``mxfp4_kernel_path`` knows: "tensorrt-llm" is TensorRT-LLM 1.x's PyTorch backend
#: (``tensorrt_llm_for_version``: every 1.x release), "sglang-0.5.1" SGLang 0.5.1-0.5.2, "sglang-0.5.3"
#: 0.5.3-0.5.4 and "sglang-0.5.5" 0.5.5-0.5.9
#: (``planner.engines.sglang.SGLANG_RULES``). The other profiles' releases load MXFP4 experts as stored or were not read.
PROFILE_RELEASES = {
    "tensorrt-llm": ProfileRelease("tensorrt-llm", "1.0", "TensorRT-LLM 1.x"),
    "sglang-0.5.1": ProfileRelease("sglang", "0.5.1", "SGLang 0.5.1-0.5.2"),
    "sglang-0.5.3": ProfileRelease("sglang", "0.5.3", "SGLang 0.5.3-0.5.4"),
    "sglang-0.5.5": ProfileRelease("sglang", "0.5.5", "SGLang 0.5.5-0.5.9"),
}
#: Where each release's expert-parallel upcast was read (the wheels): ``ServerArgs`` picks the triton_kernel MoE runner
#: for gpt-oss only at ep_size 1, and ``Mxfp4MoEMethod.process_weights_after_loading`` upcasts the experts to bf16
#: (``upcast_from_mxfp``) for any other runner.
SGLANG_EP_UPCAST_SOURCE = (
    "SGLang wheels, sglang/srt/layers/quantization/mxfp4.py upcast_from_mxfp and server_args.py 'Triton kernel MoE is "
    "only supported when ep_size == 1': 0.5.1 lines 578-583 and 2263-2267; 0.5.4.post2 569-584 and 957-966; 0.5.5 "
    "575-580 and 987-996; 0.5.9 705-713 and 1390-1403"
)


def profile_mxfp4_refusal(profile: str, architecture: str) -> str:
    """The engine's own error where the release engine profile ``profile`` stands for cannot load MXFP4 experts on
    ``architecture`` (``mxfp4_kernel_path``'s refusal: TensorRT-LLM 1.x below SM 9.0; ``refusal_message`` words it),
    or "" (it loads, or no source was read for it)."""
    release = PROFILE_RELEASES.get(profile)
    if release is None:  # any vLLM or SGLang release: the capability floor holds for each one that loads MXFP4
        sm = ARCHITECTURE_SM.get(architecture)
        family = next((f for f in MIN_CAPABILITY_FAMILIES if profile.startswith(f)), None)
        return min_capability_refusal(sm) if family and sm is not None and sm < MXFP4_MIN_CAPABILITY else ""
    path = mxfp4_kernel_path(release.engine, release.version, architecture)
    return path.refusal if path is not None else ""


def profile_expert_parallel_bytes_per_param(profile: str, architecture: str) -> float:
    """Bytes per routed-expert weight as the release ``profile`` stands for loads MXFP4 experts spread over more than
    one GPU (expert parallelism) on ``architecture``, where that differs from the stored 0.53125; 0.0 where it does
    not or was not read. SGLang 0.5.1-0.5.9 off Blackwell: 2.0 (upcast to bf16 at load, ``SGLANG_EP_UPCAST_SOURCE``)."""
    release = PROFILE_RELEASES.get(profile)
    if release is None:
        return 0.0
    path = mxfp4_kernel_path(release.engine, release.version, architecture, expert_parallel=True)
    if path is None or path.refusal or path.expert_bytes_per_param == MXFP4_BYTES_PER_PARAM:
        return 0.0
    return path.expert_bytes_per_param


def vllm_hopper_mxfp4_marlin(engine: str, version: str | None, architecture: str) -> bool:
    """Whether ``engine`` ``version`` on ``architecture`` ran MXFP4 routed experts on Marlin, installed the ordinary
    way: vLLM 0.10.0-0.11.0 on SM 9.0, whose ``get_mxfp4_backend`` takes Marlin without the ``triton_kernels`` package
    ("If FlashInfer is not available, try either Marlin or Triton": ``... or not has_triton_kernels() ...`` ->
    "Using Marlin backend"), which vLLM made a dependency only after 0.11.0 (``VLLM_HOPPER_MARLIN_SOURCE``). Below
    SM 9.0 every release takes Marlin anyway (``mxfp4_kernel_path``); only SM 9.0 differs from the Triton path the
    planner's Hopper curves were measured on. EXPERIMENT (h-tpotcls): docs/hypotheses/vllm-hopper-mxfp4-marlin.md."""
    parsed = parse_version(str(version or ""))
    if parsed is None or engine.strip().lower() != "vllm" or ARCHITECTURE_SM.get(architecture) != 90:
        return False
    v = tuple(parsed.release[:3]) + (0,) * max(0, 3 - len(parsed.release))
    return VLLM_MXFP4_FIRST <= v[:2] and v < VLLM_TRITON_KERNELS_DEPENDENCY
