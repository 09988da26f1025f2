"""``planner calibrate --measure``: time a random-weight decoder of a catalog shape with PyTorch, nothing downloaded.

Two measurements on the local device:

- achieved memory bandwidth: ``y.copy_(x)`` of a large tensor (bytes read + written / time);
- decode steps of a random-weight decoder with the catalog model's shape (QKV, attention over a KV cache,
  output projection, gated MLP, LM head; norms and rotary left out: they move little memory) for a few batch
  sizes and contexts. Each step time becomes a ``DecodeRow`` (``output_len = 0``: steady-state decode at one
  context) and ``planner.accuracy.fit`` fits the GPU's efficiency factors to them, as for a measurements file.

On a CPU (or with ``tiny=True``) the shape is shrunk to a few layers so the tests run anywhere, and the
"GPU" is a synthetic catalog entry whose bandwidth and peak are the ones measured here. PyTorch is an
optional extra: ``pip install 'planner[gpu]'``.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from planner.accuracy.predict import DecodeRow
from planner.catalog import Catalog, Gpu, Model, default_catalog
from planner.catalog.loader import Table
from planner.errors import InvalidInputError, PlannerError

DEFAULT_BATCHES = (1, 8, 32)
DEFAULT_CONTEXTS = (512, 2048)
TINY_SHAPE = dict(
    num_layers=2,
    hidden_size=256,
    num_attention_heads=4,
    num_kv_heads=2,
    head_dim=64,
    intermediate_size=512,
    vocab_size=2048,
)


class TorchMissingError(PlannerError):
    """Raised when ``--measure`` runs without PyTorch installed."""

    exit_code = 1


def _torch():
    try:
        import torch
    except ImportError:
        raise TorchMissingError("measuring needs PyTorch: pip install 'planner[gpu]' (or torch)") from None
    return torch


@dataclass
class MeasureResult:
    """What was measured, as decode rows the fitter takes, and the catalog that names the shapes."""

    device_name: str
    gpu: str  # catalog name of the device
    model: str  # catalog name of the (possibly shrunk) shape
    bandwidth_bytes_per_s: float
    peak_bandwidth_bytes_per_s: float
    rows: list[DecodeRow] = field(default_factory=list)
    catalog: Catalog | None = None

    def summary(self) -> str:
        lines = [
            f"{self.device_name}: copy bandwidth {self.bandwidth_bytes_per_s / 1e9:,.1f} GB/s "
            f"({self.bandwidth_bytes_per_s / self.peak_bandwidth_bytes_per_s:.0%} of {self.gpu}'s "
            f"{self.peak_bandwidth_bytes_per_s / 1e9:,.0f} GB/s)"
        ]
        lines += [
            f"  {self.model} batch {r.batch:>3} context {r.input_len:>6,}: step {r.tpot_s * 1e3:8.3f} ms"
            for r in self.rows
        ]
        return "\n".join(lines)


def _time(fn, sync, repeats: int) -> float:
    """Median wall time of ``fn`` over ``repeats`` runs after two warm-up runs, seconds."""
    for _ in range(2):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def copy_bandwidth(torch: Any, device: Any, nbytes: int, repeats: int = 5) -> float:
    """Achieved bandwidth of a device-to-device copy: 2 x bytes / time (read + write), bytes/s."""
    x = torch.empty(nbytes // 4, dtype=torch.float32, device=device).uniform_()
    y = torch.empty_like(x)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    return 2.0 * x.numel() * 4 / _time(lambda: y.copy_(x), sync, repeats)


def matmul_flops(torch: Any, device: Any, n: int, dtype: Any, repeats: int = 5) -> float:
    """Achieved FLOP/s of an n x n matrix multiply (2 n^3 FLOP)."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    return 2.0 * n**3 / _time(lambda: a @ b, sync, repeats)


class RandomDecoder:
    """A decoder with random weights in the shape of a catalog ``Model`` (dense MLP; MoE models use their experts'
    active width, which moves the same bytes as the experts one token routes to)."""

    def __init__(self, torch: Any, shape: Model, device: Any, dtype: Any, max_batch: int, max_context: int):
        self.torch, self.shape, self.device, self.dtype = torch, shape, device, dtype
        h, hd = shape.hidden_size, shape.head_dim
        nh, nkv = shape.num_attention_heads, shape.num_kv_heads
        inter = (
            shape.intermediate_size
            if shape.moe is None
            else shape.moe.expert_intermediate_size * shape.moe.experts_per_token
        )

        def w(*dims):
            return torch.randn(*dims, device=device, dtype=dtype) * (dims[0] ** -0.5)

        self.layers = [
            dict(qkv=w(h, (nh + 2 * nkv) * hd), o=w(nh * hd, h), gate_up=w(h, 2 * inter), down=w(inter, h))
            for _ in range(shape.num_layers)
        ]
        self.lm_head = w(h, shape.vocab_size)
        self.k = [torch.randn(max_batch, nkv, max_context, hd, device=device, dtype=dtype) for _ in self.layers]
        self.v = [torch.randn(max_batch, nkv, max_context, hd, device=device, dtype=dtype) for _ in self.layers]

    def step(self, batch: int, context: int):
        """One decode step: ``batch`` new tokens attending to ``context`` cached tokens each; returns next tokens."""
        torch, s = self.torch, self.shape
        nh, nkv, hd = s.num_attention_heads, s.num_kv_heads, s.head_dim
        x = torch.randn(batch, s.hidden_size, device=self.device, dtype=self.dtype)
        for i, layer in enumerate(self.layers):
            qkv = x @ layer["qkv"]
            q = qkv[:, : nh * hd].view(batch, nh, 1, hd)
            k_new = qkv[:, nh * hd : (nh + nkv) * hd].view(batch, nkv, 1, hd)
            self.k[i][:batch, :, context - 1 : context] = k_new
            self.v[i][:batch, :, context - 1 : context] = qkv[:, (nh + nkv) * hd :].view(batch, nkv, 1, hd)
            att = torch.nn.functional.scaled_dot_product_attention(
                q, self.k[i][:batch, :, :context], self.v[i][:batch, :, :context], enable_gqa=nh != nkv
            )
            x = x + att.reshape(batch, nh * hd) @ layer["o"]
            g, u = (x @ layer["gate_up"]).chunk(2, dim=-1)
            x = x + (torch.nn.functional.silu(g) * u) @ layer["down"]
        return (x @ self.lm_head).argmax(dim=-1)


def tiny_shape(model: Model) -> Model:
    """The model shrunk to ``TINY_SHAPE`` (dense, no sliding window), named ``tiny-<name>``."""
    return model.model_copy(
        update=dict(
            name=f"tiny-{model.name}",
            aliases=(),
            moe=None,
            mla=None,
            sliding_window=None,
            sliding_window_layers=0,
            attention_chunk_size=None,
            chunked_attention_layers=0,
            extra_params=0,
            native_expert_precision=None,
            native_precision="fp32",
            tie_word_embeddings=False,
            **TINY_SHAPE,
        )
    )


def measure(
    gpu: str | None = None,
    model: str = "Llama-3.1-8B",
    *,
    device: str | None = None,
    batches: tuple[int, ...] = DEFAULT_BATCHES,
    contexts: tuple[int, ...] = DEFAULT_CONTEXTS,
    tiny: bool | None = None,
    repeats: int = 5,
    catalog: Catalog | None = None,
) -> MeasureResult:
    """Measure bandwidth and decode step times on ``device``; ``tiny`` (default: on CPU) shrinks the shape."""
    torch = _torch()
    cat = catalog or default_catalog()
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidInputError(f"device {device!r} asked for, but torch sees no CUDA device")
    tiny = dev.type != "cuda" if tiny is None else tiny
    shape = cat.model(model)
    if shape.mla is not None:
        raise InvalidInputError(
            f"{shape.name} uses MLA attention, which the measuring decoder does not model; "
            "pick a GQA/MHA model (e.g. Llama-3.1-8B)"
        )
    if tiny:
        shape = tiny_shape(shape)
    dtype = torch.float32 if dev.type == "cpu" else torch.bfloat16
    bw = copy_bandwidth(torch, dev, (256 if dev.type == "cpu" else 2048) * 2**20, repeats)
    if dev.type == "cuda":
        device_name = torch.cuda.get_device_name(dev)
        g = cat.gpu(gpu or device_name)
    else:
        device_name = "CPU"
        flops = matmul_flops(torch, dev, 1024, dtype, repeats)
        g = Gpu.model_validate(  # a CPU's rates lie below a GPU's plausible ones (schema.GPU_BOUNDS)
            {
                "name": gpu or "CPU (measured)",
                "vendor": "other",
                "memory_bytes": 2**36,
                "hbm_bandwidth_bytes_per_s": bw,
                "peak_flop_per_s": {"fp32": flops, "fp16": flops, "bf16": flops},
                "tdp_w": 100,
                "source": "measured by planner calibrate --measure (copy bandwidth, 1024^3 fp32 matmul)",
            },
            context={"plausible": False},
        )
    cat = Catalog(
        Table("gpu", (*cat.gpus.entries, g)), Table("model", (*cat.models.entries, shape)), cat.precisions, cat.folders
    )
    net = RandomDecoder(torch, shape, dev, dtype, max(batches), max(contexts))
    sync = (lambda: torch.cuda.synchronize(dev)) if dev.type == "cuda" else (lambda: None)
    rows = []
    with torch.inference_mode():
        for c in contexts:
            for b in batches:
                t = _time(lambda b=b, c=c: net.step(b, c), sync, repeats)
                kv = "fp32" if dtype == torch.float32 else "bf16"
                rows.append(
                    DecodeRow(
                        record_id=f"measure-b{b}-c{c}",
                        gpu=g.name,
                        model=shape.name,
                        gpus=1,
                        batch=b,
                        input_len=c,
                        output_len=0,
                        weight_precision=kv,
                        kv_precision=kv,
                        tpot_s=t,
                        source=f"planner calibrate --measure on {device_name}",
                    )
                )
    return MeasureResult(device_name, g.name, shape.name, bw, g.hbm_bandwidth_bytes_per_s, rows, cat)
