"""Time SGLang's fused-MoE Triton kernels at five models' MoE layers on one GPU (run on the device machine).

    # here: copy the kernel file and the tuned configs out of the SGLang wheel (Apache-2.0), then on an H200:
    PYTHONPATH=. python bench/h200_moe_measure.py --extract /tmp/sgl/x0.5.12 --to .sgl
    PYTHONUNBUFFERED=1 python3 bench/h200_moe_measure.py --kernels .sgl --out "$OUT"   # writes moe_measured.csv
    python bench/h200_moe_measure.py --kernels .sgl --dry-run                          # here: routing and layout only

Why: a DeepSeek-R1 decode step on 8 x H200 (TP 8, experts split over the group) spends half its predicted time in
the routed experts' two grouped GEMMs (``bench/step_operators.py``: 339 us a layer at 64 sequences), and the
tables the planner's kernel curves come from disagree with each other there: aiconfigurator 0.12.0's H200 fused-MoE
tables give 249 us (SGLang 0.5.14), 473 us (SGLang 0.5.10), 271 us (vLLM 0.24.0) and 507 us (TensorRT-LLM
1.3.0rc20) for the same call, the fastest of them under the time that reading the 1.41 GB of expert weights a GPU
holds takes at the H200's 4.8 TB/s. This times the kernel an SGLang 0.5.x server runs, on the GPU, against the
GPU's own measured read rate, for the layers of ``SHAPES`` (block-FP8 and bf16; 8 to 256 experts).

What it times (CUDA-graph replays of ``--layers`` distinct layers' weights in turn, so no layer's experts sit in L2):
- ``moe_gemms``: SGLang 0.5.12's ``fused_moe_kernel`` twice per layer as ``invoke_fused_moe_kernel`` launches it
  (``sglang/srt/layers/moe/moe_runner/triton_utils/fused_moe_triton_kernels.py``): gate/up over the routed tokens,
  then down (routed weights applied), with the tuned H200 config SGLang picks for the token count (from the newest
  Triton version's folder that has the shape, as SGLang falls back on newer Triton) and, for block FP8, ``swap_ab``
  where SGLang sets it on SM90 (BLOCK_SIZE_M < 64 and BLOCK_SIZE_N >= 64). The activation's FP8 quantization, the
  router, the block alignment, SiLU-and-mul and the top-k sum run outside the graph (they are not the weights' read).
  The gate/up output at 4 tokens is checked against the (dequantized) product before any timing.
- routing "balanced" (token i's j-th expert is (k i + j) mod E, aiconfigurator's collector's distribution) and
  "random" (k distinct experts drawn uniformly per token, seed 0);
- ``read``: a sum over a 4 GiB bf16 tensor (the HBM read rate the expert reads are bounded by).

Nothing here imports planner: ``bench/h200_moe_kernels.py`` compares these times with the model's MoE term.
"""

from __future__ import annotations

import argparse
import ast
import csv
import importlib.util
import json
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

BLOCK = 128
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
KERNEL_FILE = "fused_moe_triton_kernels.py"
WHEEL_DIR = "sglang/srt/layers/moe/moe_runner/triton_utils"
FIELDS = ["kind", "shape", "routing", "tokens", "experts_touched", "expert_bytes", "latency_s", "config", "note"]


@dataclass(frozen=True)
class Shape:
    """One MoE layer on one GPU: experts, top-k, hidden size, each expert's MLP width on this GPU (its width / TP),
    weight format ("fp8_block": block-FP8 weights and activations, 128 x 128 blocks; "bf16")."""

    experts: int
    top_k: int
    hidden: int
    width: int
    dtype: str

    @property
    def config_file(self) -> str:
        """SGLang's tuned-config file name for it on an H200 (``get_config_file_name``)."""
        dtype = ",dtype=fp8_w8a8,block_shape=[128, 128]" if self.dtype == "fp8_block" else ""
        return f"E={self.experts},N={self.width},device_name=NVIDIA_H200{dtype}.json"

    @property
    def expert_bytes(self) -> int:
        """One expert's gate, up and down weights on this GPU, bytes."""
        return 3 * self.width * self.hidden * (1 if self.dtype == "fp8_block" else 2)


#: The layers timed (config.json of each model; each has a tuned H200 config in SGLang 0.5.12): DeepSeek-R1 at TP 8
#: in its native block FP8; Qwen3-235B-A22B at TP 8 (bf16) and TP 4 (its FP8 checkpoint, block FP8); Qwen3-30B-A3B on
#: one GPU (bf16); Mixtral-8x7B on one GPU (bf16).
SHAPES = {
    "deepseek-r1-tp8-fp8": Shape(256, 8, 7168, 2048 // 8, "fp8_block"),
    "qwen3-235b-a22b-tp8-bf16": Shape(128, 8, 4096, 1536 // 8, "bf16"),
    "qwen3-235b-a22b-tp4-fp8": Shape(128, 8, 4096, 1536 // 4, "fp8_block"),
    "qwen3-30b-a3b-tp1-bf16": Shape(128, 8, 2048, 768, "bf16"),
    "mixtral-8x7b-tp1-bf16": Shape(8, 2, 4096, 14336, "bf16"),
}


def extract(wheel_root: Path, to: Path) -> None:
    """Copy the kernel file and each shape's H200 config out of an unpacked SGLang wheel into ``to`` (the files are
    Apache-2.0, sgl-project/sglang). A config comes from the newest Triton version's folder that has it, as SGLang
    falls back when its own Triton version has none (``get_moe_configs``)."""
    src = wheel_root / WHEEL_DIR
    to.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / KERNEL_FILE, to / KERNEL_FILE)
    folders = sorted((src / "configs").glob("triton_*"), key=lambda d: tuple(map(int, d.name[7:].split("_"))))
    for shape in SHAPES.values():
        found = [d / shape.config_file for d in reversed(folders) if (d / shape.config_file).exists()]
        if not found:
            raise SystemExit(f"no H200 config {shape.config_file} in {src / 'configs'}")
        shutil.copy(found[0], to / shape.config_file)
    (to / "SOURCE").write_text(f"Copied from {src} (SGLang, Apache-2.0, https://github.com/sgl-project/sglang)\n")
    print(f"wrote {to}")


def load_kernel(kernels: Path):
    """The ``fused_moe_kernel`` Triton function (and the helper it calls) of SGLang's kernel file, loaded as a module
    of its own: only those two functions' source, under ``import triton`` / ``triton.language as tl``."""
    text = (kernels / KERNEL_FILE).read_text()
    tree = ast.parse(text)
    wanted = {"write_zeros_to_output", "fused_moe_kernel"}
    starts = {n.name: n.decorator_list[0].lineno for n in tree.body if getattr(n, "name", "") in wanted}
    lines = text.splitlines()
    parts = ["\n".join(lines[starts[n.name] - 1 : n.end_lineno]) for n in tree.body if getattr(n, "name", "") in wanted]
    if len(parts) != 2:
        raise SystemExit(f"{kernels / KERNEL_FILE}: expected write_zeros_to_output and fused_moe_kernel")
    path = Path(tempfile.mkdtemp()) / "sgl_fused_moe.py"
    path.write_text("import triton\nimport triton.language as tl\n\n\n" + "\n\n\n".join(parts) + "\n")
    spec = importlib.util.spec_from_file_location("sgl_fused_moe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.fused_moe_kernel


def config_for(configs: dict[int, dict], m: int) -> dict:
    """SGLang's pick: the tuned entry whose token count is nearest ``m`` (``try_get_optimal_moe_config``)."""
    return configs[min(configs, key=lambda x: abs(x - m))]


def routing(kind: str, m: int, shape: Shape, device) -> torch.Tensor:
    """[m, k] int32 expert ids: "balanced" (k i + j) mod E (aiconfigurator's collector's distribution), or "random"
    (k distinct uniform experts a token, seed 0)."""
    e, k = shape.experts, shape.top_k
    if kind == "balanced":
        ids = (torch.arange(m)[:, None] * k + torch.arange(k)[None, :]) % e
    else:
        g = torch.Generator().manual_seed(0)
        ids = torch.stack([torch.randperm(e, generator=g)[:k] for _ in range(m)])
    return ids.to(torch.int32).to(device)


def align(topk_ids: torch.Tensor, block_m: int, experts: int):
    """SGLang's ``moe_align_block_size`` in torch: sorted token slots per expert, each expert's run padded to a
    multiple of ``block_m`` with the invalid slot ``numel``, the buffer sized as SGLang allocates it."""
    flat = topk_ids.flatten().long()
    numel = flat.numel()
    if numel < experts + 1:
        size = numel * block_m
    else:
        size = numel + (experts + 1) * (block_m - 1)
    counts = torch.bincount(flat, minlength=experts)
    padded = (counts + block_m - 1) // block_m * block_m
    starts = torch.cumsum(padded, 0) - padded
    order = torch.argsort(flat, stable=True)
    rank = torch.arange(numel, device=flat.device) - (torch.cumsum(counts, 0) - counts)[flat[order]]
    sorted_ids = torch.full((size,), numel, dtype=torch.int32, device=flat.device)
    sorted_ids[starts[flat[order]] + rank] = order.to(torch.int32)
    blocks = (size + block_m - 1) // block_m
    expert_ids = torch.full((blocks,), -1, dtype=torch.int32, device=flat.device)
    block_expert = torch.repeat_interleave(torch.arange(experts, device=flat.device), padded // block_m)
    expert_ids[: block_expert.numel()] = block_expert.to(torch.int32)
    post = torch.tensor([int(padded.sum())], dtype=torch.int32, device=flat.device)
    return sorted_ids, expert_ids, post


def quant_groups(x: torch.Tensor, shape: Shape):
    """Per-token, per-128-column FP8 (e4m3) quantization with float32 scales, as SGLang's activation quantizer for
    block-FP8 weights; bf16 weights take the activations as they are (no scales)."""
    if shape.dtype != "fp8_block":
        return x.contiguous(), None
    g = x.float().view(x.shape[0], -1, BLOCK)
    scale = (g.abs().amax(-1).clamp(min=1e-10) / 448.0).float()
    q = (g / scale[..., None]).clamp(-448, 448).to(torch.float8_e4m3fn).view(x.shape)
    return q.contiguous(), scale.contiguous()


def launch(kernel, a, a_scale, b, b_scale, c, weights, sorted_ids, expert_ids, post, top_k, mul_weight, cfg, numel):
    """One ``fused_moe_kernel`` launch with the arguments ``invoke_fused_moe_kernel`` passes (block-FP8 weights where
    scales are given, bf16 otherwise)."""
    import triton
    import triton.language as tl

    fp8 = b_scale is not None
    swap_ab = fp8 and cfg["BLOCK_SIZE_M"] < 64 and cfg["BLOCK_SIZE_N"] >= 64  # should_enable_swap_ab on SM90
    n, k = b.shape[1], b.shape[2]
    grid = (triton.cdiv(sorted_ids.shape[0], cfg["BLOCK_SIZE_M"]) * triton.cdiv(n, cfg["BLOCK_SIZE_N"]),)
    a_strides = (a_scale.stride(0), a_scale.stride(1)) if fp8 else (0, 0)
    b_strides = (b_scale.stride(0), b_scale.stride(2), b_scale.stride(1)) if fp8 else (0, 0, 0)
    kernel[grid](
        a, None, b, None, None, c, a_scale, b_scale, weights, sorted_ids, expert_ids, post, None,
        n, k, sorted_ids.shape[0], numel,
        a.stride(0), a.stride(1), b.stride(0), b.stride(2), b.stride(1), 0, 0, c.stride(-2), c.stride(-1),
        *a_strides, *b_strides,
        BLOCK if fp8 else 0, BLOCK if fp8 else 0,
        MUL_ROUTED_WEIGHT=mul_weight, top_k=top_k, compute_type=tl.bfloat16, use_fp8_w8a8=fp8,
        use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False, even_Ks=k % cfg["BLOCK_SIZE_K"] == 0,
        c_sorted=False, filter_expert=True, swap_ab=swap_ab, FUSE_ADD_TO_OUTPUT=False, FUSE_SUM_ALL_REDUCE=False,
        ROUTER_TOPK=1, **cfg,
    )  # fmt: skip


def layer_weights(shape: Shape, device, layers: int):
    """``layers`` distinct layers' expert weights (random) and, for block FP8, block scales, as SGLang lays them:
    w13 [E, 2 x width, hidden], w2 [E, hidden, width], scales [E, N / 128, K / 128]."""
    e, w, h = shape.experts, shape.width, shape.hidden
    out = []
    for _ in range(layers):
        w13 = torch.randn(e, 2 * w, h, device=device, dtype=torch.bfloat16) * 0.05
        w2 = torch.randn(e, h, w, device=device, dtype=torch.bfloat16) * 0.05
        if shape.dtype == "fp8_block":
            w13, w2 = w13.to(torch.float8_e4m3fn), w2.to(torch.float8_e4m3fn)
            s13 = torch.rand(e, 2 * w // BLOCK, h // BLOCK, device=device) * 0.01 + 0.001
            s2 = torch.rand(e, h // BLOCK, -(-w // BLOCK), device=device) * 0.01 + 0.001
        else:
            s13 = s2 = None
        out.append((w13, s13, w2, s2))
    return out


def check_gate_up(a, a_s, layer, ids, inter) -> None:
    """The kernel's gate/up output for each routed (token, expert) pair against the (dequantized) product in
    float32: a timing of a kernel that computed the wrong thing (or nothing) stops here."""
    w13, s13 = layer[0], layer[1]
    a_deq = a.float() if a_s is None else a.float() * a_s.repeat_interleave(BLOCK, dim=1)
    for t_i in range(ids.shape[0]):
        for j in range(ids.shape[1]):
            e = int(ids[t_i, j])
            w = w13[e].float()
            if s13 is not None:
                w = w * s13[e].repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)
            ref = a_deq[t_i] @ w.T
            err = float((inter[t_i, j].float() - ref).abs().max() / ref.abs().max())
            if err > 0.02:
                raise SystemExit(f"gate/up of token {t_i}, expert {e}: max relative error {err:.3g}")


def time_moe(kernel, configs, shape: Shape, weights, m: int, kind: str, device, reps: int):
    """Seconds per layer of the two grouped GEMMs at ``m`` tokens, and the experts the routing touches."""
    cfg = config_for(configs, m)
    k = shape.top_k
    ids = routing(kind, m, shape, device)
    sorted_ids, expert_ids, post = align(ids, cfg["BLOCK_SIZE_M"], shape.experts)
    topk_w = torch.rand(m, k, device=device, dtype=torch.float32)
    a, a_s = quant_groups(torch.randn(m, shape.hidden, device=device, dtype=torch.bfloat16), shape)
    inter = torch.empty(m, k, 2 * shape.width, device=device, dtype=torch.bfloat16)
    a2, a2_s = quant_groups(torch.randn(m * k, shape.width, device=device, dtype=torch.bfloat16), shape)
    out = torch.empty(m, k, shape.hidden, device=device, dtype=torch.bfloat16)
    numel = ids.numel()

    def step():
        for w13, s13, w2, s2 in weights:
            launch(kernel, a, a_s, w13, s13, inter, topk_w, sorted_ids, expert_ids, post, k, False, cfg, numel)
            launch(kernel, a2, a2_s, w2, s2, out, topk_w, sorted_ids, expert_ids, post, 1, True, cfg, numel)

    step()  # compile
    torch.cuda.synchronize()
    if m == 4:
        check_gate_up(a, a_s, weights[-1], ids, inter)  # the last layer wrote it
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        step()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / len(weights))
    times.sort()
    touched = int(torch.unique(ids).numel())
    return times[len(times) // 2], touched, cfg


def read_rate(device) -> float:
    """Seconds to sum a 4 GiB bf16 tensor (median of 10 after 3)."""
    x = torch.ones(2 * 1024**3, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        x.sum()
    torch.cuda.synchronize()
    times = []
    for _ in range(10):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        x.sum()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    del x
    return times[5]


def read_configs(kernels: Path, shape: Shape) -> dict[int, dict]:
    return {int(k): v for k, v in json.loads((kernels / shape.config_file).read_text()).items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extract", type=Path, help="an unpacked SGLang wheel to copy the kernel file and configs from")
    ap.add_argument("--to", type=Path, default=Path(".sgl"), help="where --extract writes (default .sgl)")
    ap.add_argument("--kernels", type=Path, help="the folder --extract wrote")
    ap.add_argument("--out", type=Path, help="folder for moe_measured.csv and env.json")
    ap.add_argument("--shapes", nargs="*", choices=sorted(SHAPES), help="the layers to time (default: all)")
    ap.add_argument("--layers", type=int, default=4, help="distinct layers' weights replayed in turn (default 4)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dry-run", action="store_true", help="check routing and alignment on the CPU; no timing")
    args = ap.parse_args(argv)
    if args.extract:
        extract(args.extract, args.to)
        return 0
    if args.kernels is None:
        ap.error("--kernels is required (or --extract)")
    shapes = {name: SHAPES[name] for name in (args.shapes or SHAPES)}
    if args.dry_run:
        for name, shape in shapes.items():
            configs = read_configs(args.kernels, shape)
            for m in (1, 4, 64):
                ids = routing("random", m, shape, "cpu")
                sorted_ids, expert_ids, post = align(ids, config_for(configs, m)["BLOCK_SIZE_M"], shape.experts)
                valid = sorted_ids[sorted_ids < ids.numel()]
                assert sorted(valid.tolist()) == list(range(ids.numel())), "every routed slot once"
                print(f"{name} m={m}: {int(post)} padded slots, {int((expert_ids >= 0).sum())} blocks")
        return 0
    kernel = load_kernel(args.kernels)
    device = torch.device("cuda")
    rows = []
    seconds = read_rate(device)
    rows.append(dict(kind="read", shape="", routing="", tokens=0, experts_touched=0, expert_bytes=4 * 1024**3,
                     latency_s=seconds, config="", note="sum over a 4 GiB bf16 tensor"))  # fmt: skip
    print(f"read 4 GiB: {seconds * 1e3:.3f} ms = {4 * 1024**3 / seconds / 1e12:.2f} TB/s", flush=True)
    for name, shape in shapes.items():
        configs = read_configs(args.kernels, shape)
        weights = layer_weights(shape, device, args.layers)
        for kind in ("balanced", "random"):
            for m in TOKENS:
                t, touched, cfg = time_moe(kernel, configs, shape, weights, m, kind, device, args.reps)
                rows.append(dict(kind="moe_gemms", shape=name, routing=kind, tokens=m, experts_touched=touched,
                                 expert_bytes=touched * shape.expert_bytes, latency_s=t,
                                 config=json.dumps(cfg, sort_keys=True),
                                 note=f"SGLang 0.5.12 fused_moe_kernel x2, {shape.dtype}"))  # fmt: skip
                print(f"{name} {kind:8s} m={m:5d}: {t * 1e6:8.1f} us, {touched:3d} experts, "
                      f"{touched * shape.expert_bytes / t / 1e12:.2f} TB/s", flush=True)  # fmt: skip
        del weights
        torch.cuda.empty_cache()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "moe_measured.csv", "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS)
            w.writeheader()
            w.writerows(rows)
        import triton

        env = dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, cuda=torch.version.cuda,
                   triton=triton.__version__, python=platform.python_version(), layers=args.layers, reps=args.reps)  # fmt: skip
        (args.out / "env.json").write_text(json.dumps(env, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
