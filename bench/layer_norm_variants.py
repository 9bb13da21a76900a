"""Kernel time (side_by_side.py's "kernel" timer) of blk's layer-norm
kernels at one launch configuration each, beside Triton's tutorial kernels
at the same configuration: the forward at several block sizes and warps,
the backward's lock kernel (blk's and Triton's, dX stage alone), the
deterministic kernel, and each library's host code. M = 4096, f16.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/layer_norm_variants.py

Prints "N | variant | µs | GB/s" lines (docs/results/layer_norm_variants_h100.txt
holds the runs behind docs/performance.md, each from a build of the commit
then being made)."""
import sys
import torch
import side_by_side as sbs
from side_by_side import blk, blk_layer_norm, ln_inputs, tri

M = 4096


def variants(n):
    x, w, b, dy = ln_inputs(M, n)
    y, mean, rstd = torch.empty_like(x), torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
    mod = blk_layer_norm.module("layernorm.blk", x)
    full = blk.next_power_of_2(n)
    for block, warps in ((4096, 4), (4096, 8), (4096, 16), (8192, 8), (full, 8), (full, 16)):
        if block <= full:
            yield (f"fwd B={block} w={warps}", 2, lambda block=block, warps=warps: mod.layer_norm_fwd[(M,)](
                x, y, w, b, mean, rstd, n, n, 1e-5, T="f16", BLOCK_SIZE=block, num_warps=warps))
    yield "fwd triton", 2, lambda: tri.layer_norm_fwd(x, w, b, 1e-5)
    dx = torch.empty_like(x)
    group = 64 if n > 8192 else 96 if n > 4096 else 128
    pdw, pdb = torch.zeros(group, n, device="cuda").half(), torch.zeros(group, n, device="cuda").half()
    locks = torch.zeros(2 * group, dtype=torch.int32, device="cuda")
    for nw in (8, 16):
        yield (f"bwd lock dx w={nw}", 3, lambda nw=nw: mod.layer_norm_bwd_dx[(M,)](
            dx, dy, pdw, pdb, x, w, mean, rstd, locks, n, n, T="f16", GROUP_SIZE_M=group, BLOCK_SIZE_N=full,
            num_warps=nw))
    tlocks = torch.zeros(2 * group, dtype=torch.int32, device="cuda")
    tw = min(max(full // 256, 1), 8)
    yield "bwd lock dx triton", 3, lambda: tri._layer_norm_bwd_dx_fused[(M,)](
        dx, dy, pdw, pdb, x, w, mean, rstd, tlocks, n, n, BLOCK_SIZE_N=full, GROUP_SIZE_M=group, num_warps=tw)
    for programs, nw in ((132, 8), (132, 16), (264, 8)):
        pdw2, pdb2 = torch.empty(programs, n, device="cuda").half(), torch.empty(programs, n, device="cuda").half()
        yield (f"bwd det p={programs} w={nw}", 3, lambda programs=programs, nw=nw, pdw2=pdw2, pdb2=pdb2:
               mod.layer_norm_bwd_dx_det[(programs,)](dx, dy, pdw2, pdb2, x, w, mean, rstd, n, n, M, T="f16",
                                                      BLOCK_SIZE_N=full, num_warps=nw))
    yield "bwd blk lock (host)", 3, lambda: blk_layer_norm.backward(dy, x, w, mean, rstd, deterministic=False)
    yield "bwd blk det (host)", 3, lambda: blk_layer_norm.backward(dy, x, w, mean, rstd)
    yield "bwd triton (host)", 3, lambda: tri.layer_norm_bwd(dy, x, w, mean, rstd, full, tw)


def main():
    for n in (4096, 8192, 10000, 12288, 15872):
        for name, arrays, fn in variants(n):
            fn()
            torch.cuda.synchronize()
            us = sbs.kernel_ms(fn) * 1e3
            print(f"{n} | {name} | {us:.1f} us | {arrays * M * n * 2 / us / 1e3:.0f} GB/s", flush=True)


if __name__ == "__main__":
    main()
