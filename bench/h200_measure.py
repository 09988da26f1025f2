"""Measure kernels and whole decode steps on one GPU with PyTorch (run on the device machine; needs torch + CUDA).

    PYTHONUNBUFFERED=1 python3 bench/h200_measure.py --out "$OUT"          # on an H200: writes kernels_measured.csv
    python bench/h200_measure.py --dry-run                                   # here, CPU torch: tiny shapes, no timing

What it times (each a median of ``triton.testing.do_bench`` or of CUDA-graph replays, L2 flushed between GEMM reps):
- ``gemm``: ``torch.nn.functional.linear`` in bf16 and ``torch._scaled_mm`` in fp8 (e4m3, per-tensor scales, bf16 out)
  at m = 1..8192 rows over weight shapes of aiconfigurator's grid (n x k), so the shipped GEMM curve and
  aiconfigurator's own table can both be compared at the same points;
- ``decode_attention``: ``scaled_dot_product_attention`` with one query token per sequence over a filled bf16 cache
  (32 query / 8 KV heads, head dim 128: Llama 3.1 8B's layer), batch x context;
- ``read``: a sum over a 4 GiB bf16 tensor (HBM read rate);
- ``decode_step``: a Llama-3.1-8B-shaped decode step in bf16 with random weights (32 layers: RMSNorm, QKV, rotary,
  cache write, attention over the context, O, RMSNorm, gate/up, SiLU x up, down; final norm, LM head, argmax),
  captured as one CUDA graph and replayed; ``decode_step_gemms`` and ``decode_step_attention`` replay the same
  step's GEMMs alone and attention alone, so the rest (norms, rotary, element-wise, cache writes) is their difference.

Nothing here imports planner: the comparison against the model is ``bench/h200_kernels.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import subprocess
import sys
import time
from functools import partial

import torch
import torch.nn.functional as F

FIELDS = ["kind", "dtype", "m", "n", "k", "batch", "context", "latency_s", "note"]
GEMM_M = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
#: (n, k) weight shapes on aiconfigurator's H200 vLLM grid (its n and k values), spanning small to layer-sized weights
GEMM_NK = [
    (4096, 4096),
    (6144, 4096),
    (16384, 4096),
    (4096, 16384),
    (8192, 8192),
    (65536, 8192),
    (2048, 7168),
    (1024, 1024),
]
ATTN_CASES = [(b, c) for b in (1, 8, 32, 64, 128, 256) for c in (1024, 4096)] + [(1, 16384), (8, 16384)]
STEP_CASES = [(1, 1024), (8, 1024), (32, 1024), (64, 1024), (128, 1024), (256, 1024), (1, 4096), (16, 4096), (64, 4096)]
LLAMA8B = dict(hidden=4096, heads=32, kv_heads=8, head_dim=128, inter=14336, layers=32, vocab=128256)


def bench(fn, dry: bool, flush: bool = True) -> float:
    """Median seconds of ``fn`` (do_bench on CUDA, which flushes L2 before each rep; one call on the CPU)."""
    if dry:
        fn()
        return float("nan")
    from triton.testing import do_bench

    return do_bench(fn, warmup=5, rep=25, return_mode="median") * 1e-3


def graph_time(fn, dry: bool, replays: int = 20) -> float:
    """Median seconds of one replay of ``fn`` captured as a CUDA graph (a call on the CPU)."""
    if dry:
        fn()
        return float("nan")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    del g
    times.sort()
    return times[len(times) // 2]


def gemms(dev, dry, write):
    fp8 = getattr(torch, "float8_e4m3fn", None)
    for n, k in GEMM_NK:
        nn_, kk = (n // 64, k // 64) if dry else (n, k)
        w = torch.randn(nn_, kk, device=dev, dtype=torch.bfloat16) * 0.02
        w8 = w.to(fp8) if fp8 is not None and dev == "cuda" else None
        one = torch.ones((), device=dev, dtype=torch.float32)
        for m in GEMM_M:
            mm = max(1, m // 64) if dry else m
            x = torch.randn(mm, kk, device=dev, dtype=torch.bfloat16)
            write(kind="gemm", dtype="bf16", m=m, n=n, k=k, latency_s=bench(partial(F.linear, x, w), dry))
            if w8 is None:
                continue
            x8 = x.to(fp8)
            try:
                t = bench(
                    partial(torch._scaled_mm, x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), dry
                )
                write(kind="gemm", dtype="fp8", m=m, n=n, k=k, latency_s=t)
            except Exception as e:  # e.g. rows not a multiple of 16 on some builds: pad to 16 and say so
                pad = -(-m // 16) * 16
                xp = torch.randn(pad, kk, device=dev, dtype=torch.bfloat16).to(fp8)
                try:
                    t = bench(
                        partial(torch._scaled_mm, xp, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16), dry
                    )
                    write(kind="gemm", dtype="fp8", m=m, n=n, k=k, latency_s=t, note=f"rows padded to {pad}")
                except Exception as e2:
                    write(
                        kind="gemm",
                        dtype="fp8",
                        m=m,
                        n=n,
                        k=k,
                        latency_s=float("nan"),
                        note=f"{type(e).__name__}; {type(e2).__name__}: {str(e2)[:80]}",
                    )
            del x8
        del w, w8
        if dev == "cuda":
            torch.cuda.empty_cache()


def attention(dev, dry, write):
    c = LLAMA8B
    for b, ctx in ATTN_CASES:
        cc = max(8, ctx // 256) if dry else ctx
        q = torch.randn(b, c["heads"], 1, c["head_dim"], device=dev, dtype=torch.bfloat16)
        kc = torch.randn(b, c["kv_heads"], cc, c["head_dim"], device=dev, dtype=torch.bfloat16)
        vc = torch.randn_like(kc)
        t = bench(partial(F.scaled_dot_product_attention, q, kc, vc, enable_gqa=True), dry)
        write(
            kind="decode_attention",
            dtype="bf16",
            batch=b,
            context=ctx,
            latency_s=t,
            note="sdpa enable_gqa, 32/8 heads, dim 128",
        )
        del q, kc, vc


def read_rate(dev, dry, write):
    n = (1 << 20) if dry else (2 << 30)  # 2 Gi bf16 values = 4 GiB
    x = torch.randn(n, device=dev, dtype=torch.bfloat16)
    t = bench(partial(x.sum, dtype=torch.float32), dry)
    write(kind="read", dtype="bf16", n=n * 2, latency_s=t, note="sum over n bytes")
    del x


class Step:
    """A Llama-3.1-8B-shaped decode step with random weights (bf16), its cache filled to ``context`` tokens."""

    def __init__(self, dev, dry, batch, context, weights=None):
        c = dict(LLAMA8B)
        if dry:
            c.update(hidden=256, heads=4, kv_heads=2, head_dim=64, inter=512, layers=2, vocab=1000)
        self.c, self.b, self.ctx = c, batch, context
        h, d = c["hidden"], c["head_dim"]
        qkv = (c["heads"] + 2 * c["kv_heads"]) * d
        if weights is None:

            def r(*s):
                return torch.randn(*s, device=dev, dtype=torch.bfloat16) * 0.02

            weights = [
                dict(
                    qkv=r(qkv, h),
                    o=r(h, c["heads"] * d),
                    gu=r(2 * c["inter"], h),
                    down=r(h, c["inter"]),
                    n1=torch.ones(h, device=dev, dtype=torch.bfloat16),
                    n2=torch.ones(h, device=dev, dtype=torch.bfloat16),
                )
                for _ in range(c["layers"])
            ]
            weights.append(dict(head=r(c["vocab"], h), norm=torch.ones(h, device=dev, dtype=torch.bfloat16)))
        self.w = weights
        shape = (batch, c["kv_heads"], context, d)
        self.k = [torch.randn(shape, device=dev, dtype=torch.bfloat16) for _ in range(c["layers"])]
        self.v = [torch.randn(shape, device=dev, dtype=torch.bfloat16) for _ in range(c["layers"])]
        self.x = torch.randn(batch, h, device=dev, dtype=torch.bfloat16)
        self.cos = torch.randn(batch, 1, d, device=dev, dtype=torch.bfloat16)
        self.sin = torch.randn(batch, 1, d, device=dev, dtype=torch.bfloat16)
        self.pos = context - 1
        self.attn_out = torch.randn(batch, c["heads"] * d, device=dev, dtype=torch.bfloat16)  # GEMM-only inputs
        self.act = torch.randn(batch, c["inter"], device=dev, dtype=torch.bfloat16)

    def rope(self, t):
        half = t.shape[-1] // 2
        rot = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
        return t * self.cos + rot * self.sin

    def full(self):
        c, b = self.c, self.b
        h, d, nh, nk = c["hidden"], c["head_dim"], c["heads"], c["kv_heads"]
        x = self.x
        for i in range(c["layers"]):
            w = self.w[i]
            a = F.rms_norm(x, (h,), w["n1"])
            q, k, v = F.linear(a, w["qkv"]).split([nh * d, nk * d, nk * d], dim=-1)
            q = self.rope(q.reshape(b, nh, d)).unsqueeze(2)
            k = self.rope(k.reshape(b, nk, d))
            self.k[i][:, :, self.pos] = k
            self.v[i][:, :, self.pos] = v.reshape(b, nk, d)
            o = F.scaled_dot_product_attention(q, self.k[i], self.v[i], enable_gqa=True)
            x = x + F.linear(o.reshape(b, nh * d), w["o"])
            a = F.rms_norm(x, (h,), w["n2"])
            g, u = F.linear(a, w["gu"]).chunk(2, dim=-1)
            x = x + F.linear(F.silu(g) * u, w["down"])
        last = self.w[-1]
        return torch.argmax(F.linear(F.rms_norm(x, (h,), last["norm"]), last["head"]), dim=-1)

    def gemms_only(self):
        c = self.c
        x = self.x
        for i in range(c["layers"]):
            w = self.w[i]
            F.linear(x, w["qkv"])
            F.linear(self.attn_out, w["o"])
            F.linear(x, w["gu"])
            F.linear(self.act, w["down"])
        return F.linear(x, self.w[-1]["head"])

    def attention_only(self):
        c, b = self.c, self.b
        q = self.x[:, : c["heads"] * c["head_dim"]].reshape(b, c["heads"], 1, c["head_dim"])
        for i in range(c["layers"]):
            F.scaled_dot_product_attention(q, self.k[i], self.v[i], enable_gqa=True)


def steps(dev, dry, write):
    weights = None
    for b, ctx in STEP_CASES:
        s = Step(dev, dry, b, max(8, ctx // 256) if dry else ctx, weights)
        weights = s.w
        for kind, fn in (
            ("decode_step", s.full),
            ("decode_step_gemms", s.gemms_only),
            ("decode_step_attention", s.attention_only),
        ):
            try:
                write(
                    kind=kind,
                    dtype="bf16",
                    batch=b,
                    context=ctx,
                    latency_s=graph_time(fn, dry),
                    note="llama-3.1-8b shape, CUDA graph",
                )
            except Exception as e:
                write(
                    kind=kind,
                    dtype="bf16",
                    batch=b,
                    context=ctx,
                    latency_s=float("nan"),
                    note=f"{type(e).__name__}: {str(e)[:100]}",
                )
        del s
        if dev == "cuda":
            torch.cuda.empty_cache()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".", help="folder for kernels_measured.csv and meta.json")
    ap.add_argument("--dry-run", action="store_true", help="tiny shapes on the CPU: checks the script runs")
    ap.add_argument("--only", nargs="*", default=["read", "gemm", "attention", "step"])
    a = ap.parse_args(argv)
    dry = a.dry_run
    dev = "cpu" if dry else "cuda"
    os.makedirs(a.out, exist_ok=True)
    meta = dict(torch=torch.__version__, python=platform.python_version(), started=time.strftime("%Y-%m-%d %H:%M:%S"))
    if not dry:
        p = torch.cuda.get_device_properties(0)
        meta.update(gpu=p.name, sms=p.multi_processor_count, memory_bytes=p.total_memory, cuda=torch.version.cuda)
        try:
            meta["nvidia_smi"] = subprocess.run(
                [
                    "nvidia-smi",
                    "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu",
                    "--format=csv",
                ],
                capture_output=True,
                text=True,
                timeout=20,
            ).stdout
        except Exception as e:
            meta["nvidia_smi"] = repr(e)
    path = os.path.join(a.out, "kernels_measured.csv")
    f = open(path, "w", newline="")
    out = csv.DictWriter(f, FIELDS, lineterminator="\n")
    out.writeheader()

    def write(**row):
        row = {k: row.get(k, "") for k in FIELDS}
        if isinstance(row["latency_s"], float) and not math.isnan(row["latency_s"]):
            row["latency_s"] = f"{row['latency_s']:.4e}"
        out.writerow(row)
        f.flush()
        print(",".join(str(row[k]) for k in FIELDS), flush=True)

    sections = dict(read=read_rate, gemm=gemms, attention=attention, step=steps)
    for name in a.only:
        t0 = time.time()
        try:
            sections[name](dev, dry, write)
        except Exception as e:  # keep what the other sections measure
            print(f"section {name} failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            meta[f"failed_{name}"] = f"{type(e).__name__}: {e}"
        meta[f"seconds_{name}"] = round(time.time() - t0, 1)
    f.close()
    meta["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    with open(os.path.join(a.out, "meta.json"), "w") as m:
        json.dump(meta, m, indent=1)
    print(json.dumps(meta, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
