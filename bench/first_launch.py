#!/usr/bin/env python3
"""first_launch.py: how long a kernel's first launch takes, source to a
finished run, blk against Triton, in one process on one GPU: softmax, layer
norm forward, matmul and attention forward, each with one config, the same
for both (Triton's kernels as bench/triton_tutorials.py and bench/dot_bench.py
write the tutorials', compiled for that config alone, not autotuned).

    CUDA_CACHE_DISABLE=1 python3 bench/first_launch.py LIBBLK_SO [--out FILE]

Cold for both: blk's disk cache off (BLK_CACHE_DISABLE) and Triton's in a
fresh directory; CUDA_CACHE_DISABLE=1 keeps the driver from caching blk's
PTX-to-SASS compile (Triton compiles to SASS with its own ptxas). A launch is
timed from nothing compiled to the end of the run (torch.cuda.synchronize);
then a second launch of it, for the overhead that stays. The CUDA context
and PyTorch are warm before the first; the kernels run in a fixed order, blk
first, and each output is checked against PyTorch. The first, a vector add,
carries each compiler's setup in the process; then blk once more without
its automatic occupancy target (min_blocks_per_sm -1), whose second build
is a second load by the driver."""
import argparse
import math
import os
import sys
import tempfile
import time

os.environ["BLK_CACHE_DISABLE"] = "1"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="first_launch_triton_")

import torch  # noqa: E402
import triton  # noqa: E402  (after TRITON_CACHE_DIR is set)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dot_bench as db  # noqa: E402
import triton_tutorials as tt  # noqa: E402
from dot_bench import F32, I32, PTR  # noqa: E402


def timed(fn):
    """Seconds from the call to the end of its GPU work."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def cases(blk):
    """(name, blk launch, Triton launch, check) per kernel, tensors made."""
    dev = "cuda"
    out = []
    # vector add, the first kernel each compiles in the process: its time holds the compilers' setup
    xa = torch.randn(1 << 20, device=dev)
    za, zt = torch.empty_like(xa), torch.empty_like(xa)

    def blk_add():
        k = blk.kernel("add.blk", "add", ["T=f32", "BLOCK=1024"], 4)
        blk.launch(k, (xa.numel() // 1024, 1, 1), [(PTR, xa.data_ptr()), (PTR, xa.data_ptr()), (PTR, za.data_ptr()),
                                                    (I32, xa.numel())])

    def tl_add():
        tt.add_kernel[(xa.numel() // 1024,)](xa, xa, zt, xa.numel(), BLOCK_SIZE=1024, num_warps=4)

    out.append(("add [2^20] f32 (each compiler's first kernel)", blk_add, tl_add,
                lambda: [torch.testing.assert_close(o, 2 * xa) for o in (za, zt)]))
    # softmax: 4096 rows of 1000 f32, BLOCK 1024, 4 warps
    x = torch.randn(4096, 1000, device=dev)
    ys, yt = torch.empty_like(x), torch.empty_like(x)

    def blk_softmax():
        k = blk.kernel("softmax.blk", "softmax", ["T=f32", "BLOCK=1024"], 4)
        blk.launch(k, (x.shape[0], 1, 1), [(PTR, ys.data_ptr()), (PTR, x.data_ptr()), (I32, x.stride(0)),
                                           (I32, ys.stride(0)), (I32, x.shape[1])])

    def tl_softmax():
        tt.softmax_kernel[(x.shape[0],)](yt, x, x.stride(0), yt.stride(0), x.shape[1], BLOCK_SIZE=1024, num_warps=4)

    ref = torch.softmax(x, 1)
    out.append(("softmax [4096, 1000] f32", blk_softmax, tl_softmax,
                lambda: [torch.testing.assert_close(o, ref, atol=1e-5, rtol=1e-4) for o in (ys, yt)]))
    # layer norm forward: 4096 rows of 1024 f16, BLOCK_SIZE 1024, 4 warps
    M, N = 4096, 1024
    xh = torch.randn(M, N, device=dev, dtype=torch.float16)
    w, b = torch.rand(N, device=dev, dtype=torch.float16), torch.rand(N, device=dev, dtype=torch.float16)
    outs = [(torch.empty_like(xh), torch.empty(M, device=dev), torch.empty(M, device=dev)) for _ in range(2)]

    def blk_ln():
        y, mean, rstd = outs[0]
        k = blk.kernel("layernorm.blk", "layer_norm_fwd", ["T=f16", "BLOCK_SIZE=1024"], 4)
        blk.launch(k, (M, 1, 1), [(PTR, xh.data_ptr()), (PTR, y.data_ptr()), (PTR, w.data_ptr()), (PTR, b.data_ptr()),
                                  (PTR, mean.data_ptr()), (PTR, rstd.data_ptr()), (I32, xh.stride(0)), (I32, N),
                                  (F32, 1e-5)])

    def tl_ln():
        y, mean, rstd = outs[1]
        tt._layer_norm_fwd_fused[(M,)](xh, y, w, b, mean, rstd, xh.stride(0), N, 1e-5, BLOCK_SIZE=1024, num_warps=4)

    ref_ln = torch.nn.functional.layer_norm(xh.float(), (N,), w.float(), b.float(), 1e-5).half()
    out.append(("layer_norm_fwd [4096, 1024] f16", blk_ln, tl_ln,
                lambda: [torch.testing.assert_close(o[0], ref_ln, atol=2e-2, rtol=1e-2) for o in outs]))
    # matmul: 2048^3 f16, 128 x 128 x 32 blocks, 8 warps, 4 stages
    a = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    bb = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    cs, ct = torch.empty_like(a), torch.empty_like(a)

    def blk_mm():
        db.blk_matmul(blk, a, bb, cs, 128, 128, 32, 8, 4)()

    def tl_mm():
        grid = (triton.cdiv(2048, 128) * triton.cdiv(2048, 128),)
        db.tl_matmul_kernel.fn[grid](a, bb, ct, 2048, 2048, 2048, a.stride(0), a.stride(1), bb.stride(0), bb.stride(1),
                                     ct.stride(0), ct.stride(1), BM=128, BN=128, BK=32, GM=8, num_warps=8, num_stages=4)

    ref_mm = a @ bb
    out.append(("matmul 2048^3 f16", blk_mm, tl_mm,
                lambda: [torch.testing.assert_close(o, ref_mm, atol=0.5, rtol=2e-2) for o in (cs, ct)]))
    # attention forward: Z 4, H 16, S 1024, D 64 f16, 128 x 64 blocks, 4 warps, 3 stages
    Z, H, S, D = 4, 16, 1024, 64
    q, k, v = (torch.randn(Z, H, S, D, device=dev, dtype=torch.float16) for _ in range(3))
    os_, ot = torch.empty_like(q), torch.empty_like(q)
    lse = torch.empty(Z, H, S, device=dev)

    def blk_attn():
        db.blk_attention(blk, q, k, v, os_, lse, False, 128, 64, 4)()

    def tl_attn():
        grid = (triton.cdiv(S, 128), Z * H)
        db.tl_attn_kernel.fn[grid](q, k, v, ot, 1.0 / math.sqrt(D), S, D=D, CAUSAL=False, BM=128, BN=64, num_warps=4,
                                   num_stages=3)

    ref_attn = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    out.append(("attention fwd Z4 H16 S1024 D64 f16", blk_attn, tl_attn,
                lambda: [torch.testing.assert_close(o, ref_attn, atol=2e-2, rtol=1e-2) for o in (os_, ot)]))
    return out



def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--out")
    args = ap.parse_args()
    if os.environ.get("CUDA_CACHE_DISABLE") != "1":
        sys.exit("first_launch.py: run with CUDA_CACHE_DISABLE=1 (the driver would cache blk's SASS)")
    blk = db.Blk(args.lib)
    blk_none = db.Blk(args.lib, min_blocks_per_sm=-1)  # no automatic occupancy target: one driver compile
    torch.zeros(1, device="cuda").add_(1)  # PyTorch's kernels and context warm
    name = torch.cuda.get_device_name()
    lines = [f"GPU: {name}; torch {torch.__version__}, triton {triton.__version__}; seconds: a cold first launch "
             f"(compile, load, run), the same in blk without the automatic occupancy target (which may load "
             f"the kernel twice), and a second launch", "",
             "| kernel | blk first | Triton first | blk / Triton | blk first, no target | blk second | Triton second |",
             "|---|---|---|---|---|---|---|"]
    mine = cases(blk)
    untargeted = cases(blk_none)
    for (label, blk_fn, tl_fn, check), (_, blk_none_fn, _, _) in zip(mine, untargeted):
        b1, t1 = timed(blk_fn), timed(tl_fn)
        b2, t2 = timed(blk_fn), timed(tl_fn)
        check()
        n1 = timed(blk_none_fn)
        lines.append(f"| {label} | {b1:.3f} | {t1:.3f} | {b1 / t1:.2f} | {n1:.3f} | {b2:.4f} | {t2:.4f} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
