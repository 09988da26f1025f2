"""InferenceX's single-node DeepSeek-R1 concurrency sweeps as rows of ``catalogs/reference/load_public.csv`` (issue 22:
published loaded runs the project was never given, judged only).

    python bench/inferencex_rows.py benchmarks.json            # the rows, as CSV lines in load_public.csv's columns
    python bench/inferencex_rows.py benchmarks.json --check    # exit 1 unless the shipped rows are exactly these

``benchmarks.json`` is InferenceX's public results API as the InferenceX app's end-to-end tests replay it:
``packages/app/cypress/fixtures/api/benchmarks.json`` at SemiAnalysisAI/InferenceX-app commit ``FIXTURE_COMMIT`` (pull
request 458, "refresh Cypress fixtures", 2026-06-14; ``git show 528c4146:packages/app/cypress/fixtures/api/benchmarks.json``
in a clone). Each entry is one benchmark run: hardware, framework, precision, parallelism, ISL / OSL, concurrency, the
container image and the client's metrics (seconds), with the GitHub Actions run that produced it.

Kept: runs on one node, not disaggregated, without speculative decoding, of the engines the planner models (SGLang,
TensorRT-LLM) with their image named (the engine version), on a GPU the catalog has, and a launch script read here
(``LAUNCH``): FP8 weights (the checkpoint's block FP8) and FP4 (NVIDIA's NVFP4 and AMD's MXFP4 checkpoints of the same
model, ``CHECKPOINTS``). Each is read as its script at the last InferenceX commit on or before the run's date ran it:
the server command of ``benchmarks/single_node/dsr1_<precision>_<gpu>[_trt].sh`` for the run's TP, expert parallel
size, attention data parallelism, ISL / OSL and concurrency, and the client of
``benchmarks/benchmark_lib.sh`` ``run_benchmark_serving``: ``utils/bench_serving/benchmark_serving.py --dataset-name
random --random-range-ratio 0.8 --num-prompts 10 x C --max-concurrency C --request-rate inf --ignore-eos
--num-warmups 2 x C`` (``RANDOM_RANGE_RATIO: 0.8`` in ``.github/workflows/benchmark-tmpl.yml``; that client's
``sample_uniform`` draws each length from int(L x 0.8) to L, so the means are 921.5 and 7,372.5 tokens for L = 1,024
and 8,192). Compared: median and p99 TTFT and TPOT; ITL where the server streams every token (SGLang's and
TensorRT-LLM's ``stream_interval`` above 1 send a chunk of tokens at a time, so a gap between chunks is not one
token's).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy.published import PERCENTILE_COLUMNS, reference_dir  # noqa: E402

FIXTURE_COMMIT = "528c4146b8f502fcbce8df7870a935a970cbae25"
FIXTURE_URL = f"https://github.com/SemiAnalysisAI/InferenceX-app/blob/{FIXTURE_COMMIT}/packages/app/cypress/fixtures/api/benchmarks.json"
SCRIPTS_URL = "https://github.com/SemiAnalysisAI/InferenceX/blob/{commit}/benchmarks/{path}"
GROUP = "inferencex-app-dsr1-single-node"
ID_PREFIX = "IXA"
MODEL = "deepseek-ai/DeepSeek-R1-0528"
#: InferenceX hardware label -> the catalog's GPU, as the row's ``gpu`` cell names it.
GPUS = {
    "h200": "H200 SXM 141GB",
    "b200": "B200 180GB",
    "b300": "B300 288GB",
    "mi300x": "MI300X",
    "mi325x": "MI325X",
    "mi355x": "MI355X",
}
ENGINES = {"sglang": "SGLang", "trt": "TensorRT-LLM"}
RANGE_RATIO = 0.8


def _sglang_h200(run: dict) -> str:
    tp, isl, osl = run["decode_tp"], run["isl"], run["osl"]
    limit = 512 if (isl, osl) == (1024, 1024) else 256
    return (
        f"python3 -m sglang.launch_server --model-path $MODEL --trust-remote-code --tensor-parallel-size={tp} "
        f"--data-parallel-size=1 --disable-radix-cache --max-running-requests {limit} --cuda-graph-max-bs {limit} "
        "--chunked-prefill-size 32768 --max-prefill-tokens 32768 --mem-fraction-static 0.82 --attention-backend "
        "flashinfer --stream-interval 10 --decode-log-interval 1"
    )


def _sglang_blackwell(run: dict) -> str:
    tp, conc = run["decode_tp"], run["conc"]
    if tp == 8:
        limit, mem, chunk, recv = 128, 0.82, 32768, (30 if conc >= 16 else 10)
    else:  # the script's TP 4 branch (8,192 / 1,024 only)
        limit, mem, chunk, recv = 32, 0.95, 8192, 10
    return (
        "SGL_ENABLE_JIT_DEEPGEMM=false SGLANG_ENABLE_FLASHINFER_GEMM=true python3 -m sglang.launch_server "
        f"--model-path=$MODEL --tensor-parallel-size={tp} --data-parallel-size=1 --cuda-graph-max-bs {limit} "
        f"--max-running-requests {limit} --mem-fraction-static {mem} --kv-cache-dtype fp8_e4m3 --chunked-prefill-size "
        f"{chunk} --max-prefill-tokens {chunk} --enable-flashinfer-allreduce-fusion --scheduler-recv-interval {recv} "
        "--disable-radix-cache --attention-backend trtllm_mla --stream-interval 30 --ep-size 1 --moe-runner-backend "
        "flashinfer_trtllm --quantization fp8"
    )


def _sglang_mi30x(run: dict) -> str:
    tp = run["decode_tp"]
    return (
        "SGLANG_USE_AITER=1 SGLANG_AITER_MLA_PERSIST=1 python3 -m sglang.launch_server --model-path=$MODEL "
        f"--trust-remote-code --tensor-parallel-size={tp} --mem-fraction-static=0.8 --cuda-graph-max-bs=128 "
        "--chunked-prefill-size=131072 --num-continuous-decode-steps=4 --max-prefill-tokens=131072 --kv-cache-dtype "
        "fp8_e4m3 --attention-backend aiter --disable-radix-cache"
    )


def _sglang_mi355x(steps: int):
    def command(run: dict) -> str:
        tp, conc = run["decode_tp"], run["conc"]
        return (
            "SGLANG_USE_AITER=1 RCCL_MSCCL_ENABLE=0 ROCM_QUICK_REDUCE_QUANTIZATION=INT4 python3 -m sglang.launch_server "
            f"--attention-backend aiter --model-path $MODEL --tensor-parallel-size {tp} --trust-remote-code "
            "--chunked-prefill-size 196608 --mem-fraction-static 0.8 --disable-radix-cache --num-continuous-decode-steps "
            f"{steps} --max-prefill-tokens 196608 --kv-cache-dtype fp8_e4m3 --cuda-graph-max-bs {conc}"
        )

    return command


def _trt_command(run: dict, ep: int, yaml: str) -> str:
    """``trtllm-serve`` as the TensorRT-LLM scripts start it, with the extra options YAML they write."""
    tp, isl, conc = run["decode_tp"], run["isl"], run["conc"]
    tokens = max((conc + isl + 64 + 63) // 64 * 64, 8192)
    return (
        "trtllm-serve $MODEL --trust_remote_code --backend=pytorch --max_seq_len=$MAX_MODEL_LEN (at least 8192) "
        f"--max_num_tokens={tokens} --tp_size={tp} --ep_size={ep} --extra_llm_api_options=dsr1-fp8.yml, the YAML: "
        + yaml
    )


def _trt_h200(run: dict) -> str:
    return _trt_command(
        run, run["decode_tp"],
        "cuda_graph_config: {enable_padding: true, max_batch_size: 128}; enable_attention_dp: false; kv_cache_config: "
        "{dtype: fp8, free_gpu_memory_fraction: 0.75, enable_block_reuse: false}; stream_interval: 10; moe_config: "
        "{backend: CUTLASS}",
    )  # fmt: skip


def _trt_b200(run: dict) -> str:
    """The B200 script's branches: piecewise CUDA graphs from 64 in flight (and delayed batching at 1,024 / 1,024),
    a KV share of 0.75 at TP 4 and 8,192 / 1,024, else 0.8; the experts split (its runs here set EP 1)."""
    tp, isl, osl, conc = run["decode_tp"], run["isl"], run["osl"], run["conc"]
    share = 0.75 if (tp, isl, osl) == (4, 8192, 1024) else 0.8
    extra = ""
    if conc >= 64:
        extra = "; torch_compile_config: {enable_piecewise_cuda_graph: true}"
        extra += "; batch_wait_timeout_iters: 40; batch_wait_max_tokens_ratio: 0.8" if isl == 1024 else ""
    return "TLLM_OVERRIDE_LAYER_NUM=61 " + _trt_command(
        run, 1,
        f"cuda_graph_config: {{enable_padding: true, max_batch_size: {conc}}}; enable_attention_dp: false; "
        f"kv_cache_config: {{dtype: fp8, free_gpu_memory_fraction: {share}, enable_block_reuse: false}}; "
        f"stream_interval: 10; moe_config: {{backend: TRTLLM}}{extra}",
    )  # fmt: skip


def _sglang_blackwell_fp4(run: dict) -> str:
    """``dsr1_fp4_b200.sh`` and ``dsr1_fp4_b300.sh`` (one recipe): the experts spread (``--ep-size`` = TP in these runs),
    ModelOpt FP4, the receive interval 30 from 16 in flight, else 10."""
    tp, recv = run["decode_tp"], 30 if run["conc"] >= 16 else 10
    return (
        "python3 -m sglang.launch_server --model-path $MODEL --trust-remote-code "
        f"--tensor-parallel-size={tp} --data-parallel-size=1 --cuda-graph-max-bs 256 --max-running-requests 256 "
        "--mem-fraction-static 0.85 --kv-cache-dtype fp8_e4m3 --chunked-prefill-size 16384 "
        f"--ep-size {tp} --quantization modelopt_fp4 --enable-flashinfer-allreduce-fusion --scheduler-recv-interval "
        f"{recv} --enable-symm-mem --disable-radix-cache --attention-backend trtllm_mla --moe-runner-backend "
        "flashinfer_trtllm --stream-interval 10"
    )


def _sglang_mi355x_fp4(run: dict) -> str:
    """``dsr1_fp4_mi355x.sh``: the prefill budget 196,608 tokens, 32,768 at 8,192 / 1,024 above 32 in flight."""
    tp, isl, osl, conc = run["decode_tp"], run["isl"], run["osl"], run["conc"]
    chunk = 32768 if (isl, osl) == (8192, 1024) and conc > 32 else 196608
    return (
        "SGLANG_USE_AITER=1 ROCM_QUICK_REDUCE_QUANTIZATION=INT4 python3 -m sglang.launch_server --model-path=$MODEL "
        f"--trust-remote-code --tensor-parallel-size={tp} --chunked-prefill-size={chunk} --mem-fraction-static=0.8 "
        f"--disable-radix-cache --num-continuous-decode-steps=4 --max-prefill-tokens={chunk} --cuda-graph-max-bs=128 "
        "--attention-backend aiter --kv-cache-dtype fp8_e4m3"
    )


def _trt_b200_fp4(run: dict) -> str:
    """``dsr1_fp4_b200_trt.sh``: attention data parallelism (CUTLASS MoE, graphs to C / 4) where the run sets it, else
    the TRTLLM MoE backend and graphs to C; piecewise graphs at TP 8 / EP 8 and 1,024 / 1,024."""
    tp, ep, dp, isl, conc = run["decode_tp"], run["decode_ep"], run["decode_dp_attention"], run["isl"], run["conc"]
    graphs = (conc if conc < 4 else conc // 4) if dp else conc
    extra = "; torch_compile_config: {enable_piecewise_cuda_graph: true}" if (tp, ep, isl) == (8, 8, 1024) else ""
    extra += "; attention_dp_config: {batching_wait_iters: 0, enable_balance: true, timeout_iters: 60}" if dp else ""
    return _trt_command(
        run, ep,
        f"cuda_graph_config: {{enable_padding: true, max_batch_size: {graphs}}}; enable_attention_dp: "
        f"{str(dp).lower()}; kv_cache_config: {{dtype: fp8, free_gpu_memory_fraction: 0.8, enable_block_reuse: false}}; "
        f"stream_interval: 10; moe_config: {{backend: {'CUTLASS' if dp else 'TRTLLM'}}}{extra}",
    )  # fmt: skip


class Launch(NamedTuple):
    """How InferenceX started the server of one (GPU, engine, precision, image): the commit and script read, and the
    server command for a run (``command(run)``)."""

    commit: str
    path: str
    command: Callable[[dict], str]


#: A server command's streaming interval (SGLang ``--stream-interval``, TensorRT-LLM ``stream_interval:``).
STREAM_INTERVAL = re.compile(r"stream[-_]interval[ :=]+(\d+)")


def streams_every_token(command: str) -> bool:
    """Whether the server sends each token as it is made: no streaming interval above 1 in its command."""
    hit = STREAM_INTERVAL.search(command)
    return hit is None or int(hit.group(1)) <= 1


def kv_cell(command: str) -> str:
    """The row's ``kv_cache_dtype`` cell as the command sets it: TensorRT-LLM's YAML ``dtype: fp8``, SGLang's
    ``--kv-cache-dtype fp8_e4m3``, else the engine's default."""
    if "kv_cache_config: {dtype: fp8" in command:
        return "fp8 (kv_cache_config dtype fp8)"
    return "fp8_e4m3" if "--kv-cache-dtype fp8_e4m3" in command else "auto (not set)"


SGLANG_CU130 = "lmsysorg/sglang:v0.5.{}-cu130"
SGLANG_MI30X = "lmsysorg/sglang:v0.5.{}-rocm700-mi30x"
SGLANG_MI35X = "lmsysorg/sglang:v0.5.{}-rocm700-mi35x"
TRTLLM_13 = "nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc14"

#: (hardware, framework, precision, image) -> its ``Launch``, each script read at the last InferenceX commit on or
#: before the runs of that image (module docstring).
LAUNCH = {
    ("h200", "sglang", "fp8", SGLANG_CU130.format(9)): Launch(
        "12ba0ae07", "single_node/dsr1_fp8_h200.sh", _sglang_h200),
    ("h200", "sglang", "fp8", SGLANG_CU130.format(12)): Launch(
        "2fc18b759", "single_node/dsr1_fp8_h200.sh", _sglang_h200),
    ("h200", "trt", "fp8", TRTLLM_13): Launch(
        "f3dbc40c9", "single_node/dsr1_fp8_h200_trt.sh", _trt_h200),
    ("b200", "trt", "fp8", TRTLLM_13): Launch(
        "f3dbc40c9", "single_node/dsr1_fp8_b200_trt.sh", _trt_b200),
    ("b200", "sglang", "fp8", SGLANG_CU130.format(9)): Launch(
        "12ba0ae07", "single_node/dsr1_fp8_b200.sh", _sglang_blackwell),
    ("b200", "sglang", "fp8", SGLANG_CU130.format(12)): Launch(
        "d4948f993", "single_node/dsr1_fp8_b200.sh", _sglang_blackwell),
    ("b300", "sglang", "fp8", SGLANG_CU130.format(12)): Launch(
        "d4948f993", "single_node/dsr1_fp8_b300.sh", _sglang_blackwell),
    ("mi300x", "sglang", "fp8", SGLANG_MI30X.format(9)): Launch(
        "f267602ff", "single_node/dsr1_fp8_mi300x.sh", _sglang_mi30x),
    ("mi300x", "sglang", "fp8", SGLANG_MI30X.format(12)): Launch(
        "f3dbc40c9", "single_node/dsr1_fp8_mi300x.sh", _sglang_mi30x),
    ("mi325x", "sglang", "fp8", SGLANG_MI30X.format(9)): Launch(
        "f267602ff", "single_node/dsr1_fp8_mi325x.sh", _sglang_mi30x),
    ("mi325x", "sglang", "fp8", SGLANG_MI30X.format(12)): Launch(
        "f3dbc40c9", "single_node/dsr1_fp8_mi325x.sh", _sglang_mi30x),
    ("mi355x", "sglang", "fp8", SGLANG_MI35X.format(9)): Launch(
        "ade7c0015", "single_node/dsr1_fp8_mi355x.sh", _sglang_mi355x(4)),
    ("mi355x", "sglang", "fp8", SGLANG_MI35X.format(12)): Launch(
        "bfad6df76", "single_node/dsr1_fp8_mi355x.sh", _sglang_mi355x(8)),
    ("b200", "sglang", "fp4", SGLANG_CU130.format(9)): Launch(
        "12ba0ae07", "single_node/dsr1_fp4_b200.sh", _sglang_blackwell_fp4),
    ("b200", "sglang", "fp4", SGLANG_CU130.format(12)): Launch(
        "d4948f993", "single_node/dsr1_fp4_b200.sh", _sglang_blackwell_fp4),
    ("b300", "sglang", "fp4", SGLANG_CU130.format(12)): Launch(
        "d4948f993", "single_node/dsr1_fp4_b300.sh", _sglang_blackwell_fp4),
    ("b200", "trt", "fp4", TRTLLM_13): Launch(
        "475218b64", "single_node/dsr1_fp4_b200_trt.sh", _trt_b200_fp4),
    ("mi355x", "sglang", "fp4", SGLANG_MI35X.format(9)): Launch(
        "f267602ff", "single_node/dsr1_fp4_mi355x.sh", _sglang_mi355x_fp4),
    ("mi355x", "sglang", "fp4", SGLANG_MI35X.format(12)): Launch(
        "263aace86", "single_node/fixed_seq_len/dsr1_fp4_mi355x.sh", _sglang_mi355x_fp4),
}  # fmt: skip

#: The checkpoint each precision's runs load (``.github/configs/{nvidia,amd}-master.yaml``'s ``model``) and how the
#: row names it and its weights: the catalog's DeepSeek-R1 at that weight format.
CHECKPOINTS = {
    ("fp8", "nvidia"): (MODEL, "fp8 (the checkpoint's native block FP8)"),
    ("fp8", "amd"): (MODEL, "fp8 (the checkpoint's native block FP8)"),
    ("fp4", "nvidia"): (
        f"{MODEL} (checkpoint nvidia/DeepSeek-R1-0528-FP4-V2)",
        "nvfp4 (nvidia/DeepSeek-R1-0528-FP4-V2, ModelOpt NVFP4)",
    ),
    ("fp4", "amd"): (
        f"{MODEL} (checkpoint amd/DeepSeek-R1-0528-MXFP4-Preview)",
        "mxfp4 (amd/DeepSeek-R1-0528-MXFP4-Preview)",
    ),
}


def launch_of(run: dict) -> Launch | None:
    """The run's ``Launch``, None when none was read for it."""
    return LAUNCH.get((run["hardware"], run["framework"], run["precision"], run.get("image")))


#: load_public.csv's columns, in its order: the run's description, its percentile figures, then where they are from.
COLUMNS = (
    *("record_id", "source_group", "kind", "engine", "engine_version", "gpu", "num_gpus", "tensor_parallel_size"),
    *("pipeline_parallel_size", "model", "weight_dtype", "kv_cache_dtype", "batching", "dataset", "prefix_cache"),
    *("batch_size_or_concurrency", "num_prompts", "request_rate", "input_len", "output_len", "statistic"),
    *PERCENTILE_COLUMNS,
    *("notes", "source", "quote"),
)
#: The row's figure columns and the metric each is read from (seconds in the API, milliseconds in the row).
FIGURES = {column: "_".join(column.split("_")[1::-1]) for column in PERCENTILE_COLUMNS}  # ttft_median_ms: median_ttft


def kept(run: dict) -> bool:
    """Whether a run is one of the kind read here (module docstring)."""
    return (
        not run["disagg"]
        and not run["is_multinode"]
        and run["spec_method"] == "none"
        and run["model"] == "dsr1"
        and launch_of(run) is not None
    )


def mean_length(top: int) -> float:
    """The mean of ``benchmark_serving.py``'s ``sample_uniform`` draw: integers from int(top x 0.8) to top."""
    return (int(top * RANGE_RATIO) + top) / 2.0


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def row_of(run: dict, record_id: str) -> dict[str, str]:
    """One load_public.csv row for an InferenceX run (``kept``)."""
    commit, path, build = launch_of(run)
    command = build(run)
    every_token = streams_every_token(command)
    model, weights = CHECKPOINTS[(run["precision"], "amd" if run["hardware"].startswith("mi") else "nvidia")]
    tp, ep, conc, isl, osl = run["decode_tp"], run["decode_ep"], run["conc"], run["isl"], run["osl"]
    m = run["metrics"]
    figures = {col: (_ms(m[key]) if every_token or not col.startswith("itl") else "") for col, key in FIGURES.items()}
    version = run["image"].split(":")[-1].split("-")[0]
    quoted = {
        k: run[k]
        for k in (
            "hardware",
            "framework",
            "precision",
            "decode_tp",
            "decode_ep",
            "decode_dp_attention",
            "isl",
            "osl",
            "conc",
            "image",
            "date",
            "run_url",
        )
    }
    quoted["metrics"] = {key: m[key] for key in FIGURES.values()}
    return {
        "record_id": record_id,
        "source_group": GROUP,
        "kind": "serving_concurrency",
        "engine": ENGINES[run["framework"]],
        "engine_version": f"{version} (image {run['image']})",
        "gpu": GPUS[run["hardware"]],
        "num_gpus": str(tp),
        "tensor_parallel_size": str(tp),
        "pipeline_parallel_size": "1",
        "model": model,
        "weight_dtype": weights,
        "kv_cache_dtype": kv_cell(command),
        "batching": f"InferenceX benchmark_serving.py, max concurrency {conc}, {10 * conc} prompts after {2 * conc} "
        "warm-up requests, --request-rate inf --ignore-eos",
        "dataset": f"random, --random-range-ratio {RANGE_RATIO} (benchmark_serving.py sample_uniform: each length "
        f"uniform from int(L x 0.8) to L for ISL {isl} / OSL {osl}); input_len / output_len are that draw's "
        "expected means",
        "prefix_cache": "cold",
        "batch_size_or_concurrency": str(conc),
        "num_prompts": str(10 * conc),
        "request_rate": "",
        "input_len": f"{mean_length(isl):g}",
        "output_len": f"{mean_length(osl):g}",
        "statistic": "median and p99 over requests (TTFT, TPOT) and tokens or chunks (ITL), as benchmark_serving.py "
        "reports them",
        **figures,
        "notes": f"InferenceX run {run['run_url']} of {run['date']} (expert parallel size {ep}, attention DP "
        f"{str(run['decode_dp_attention']).lower()}); server as benchmarks/{path} at InferenceX {commit} "
        f"({SCRIPTS_URL.format(commit=commit, path=path)}) starts it: {command}"
        + ("" if every_token else "; ITL not compared: the server streams several tokens a chunk"),
        "source": f"{FIXTURE_URL}#{run['run_url'].split('/runs/')[1].split('/')[0]}",
        "quote": json.dumps(quoted, separators=(",", ":")),
    }


#: Launches read after IXA001-IXA056 were numbered: their runs are numbered after those, so no id moves.
LATER = (
    ("b200", "trt", "fp8", TRTLLM_13),
    *(k for k in LAUNCH if k[2] == "fp4"),
)


def rows_of(runs: list[dict]) -> list[dict[str, str]]:
    """The kept runs as rows, in a stable order (launches read later last, then GPU, engine, version, ISL / OSL, TP,
    concurrency), numbered."""

    def order(r: dict) -> tuple:
        launch = (r["hardware"], r["framework"], r["precision"], r["image"])
        later = 1 + (launch[2] == "fp4") if launch in LATER else 0  # the fp8 TensorRT-LLM B200 runs, then the FP4 ones
        return (later, launch[0], launch[1], launch[3], r["isl"], r["osl"], r["decode_tp"], r["conc"])

    chosen = sorted((r for r in runs if kept(r)), key=order)
    return [row_of(r, f"{ID_PREFIX}{i:03d}") for i, r in enumerate(chosen, start=1)]


def csv_lines(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS)  # load_public.csv ends its lines with \r\n, as csv writes them
    writer.writerows(rows)
    return out.getvalue()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixture", type=Path, help="InferenceX-app's packages/app/cypress/fixtures/api/benchmarks.json")
    parser.add_argument("--check", action="store_true", help="compare with catalogs/reference/load_public.csv")
    args = parser.parse_args(argv)
    rows = rows_of(json.loads(args.fixture.read_text()))
    if not args.check:
        sys.stdout.write(csv_lines(rows))
        return 0
    with open(reference_dir() / "load_public.csv", newline="") as f:
        shipped = [{c: r[c] for c in COLUMNS} for r in csv.DictReader(f) if r["source_group"] == GROUP]
    if shipped == rows:
        print(f"{len(rows)} rows, as shipped")
        return 0
    print(f"shipped {len(shipped)} rows differ from the {len(rows)} derived here")
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
