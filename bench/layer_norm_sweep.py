"""The choices behind blk's layer-norm host code and the compiler's warp
default, measured: kernel time (as bench/side_by_side.py's "kernel" timer)
of blk's forward for each block size and warp count, and of the
deterministic backward for each number of programs and warp count, with
Triton's tutorial kernels at the same shapes for scale.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/layer_norm_sweep.py [--fwd] [N...]
        (--fwd: the forward only; N: these row lengths, default 1024 4096 8192 15872)
    ... layer_norm_sweep.py --profile N [VARIANT...]   # one launch of each,
        between cudaProfilerStart/Stop, for ncu --profile-from-start off
Prints a table; M = 4096, f16."""
import sys

import torch

import side_by_side as sbs
from side_by_side import blk, blk_layer_norm, ln_inputs, tri

M = 4096


def fwd_variants(n):
    x, w, b, _ = ln_inputs(M, n)
    y, mean, rstd = torch.empty_like(x), torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
    mod = blk_layer_norm.module("layernorm.blk", x)
    full = blk.next_power_of_2(n)
    for block in sorted({1024, 2048, 4096, 8192, full}):
        if block > full:
            continue
        for warps in (0, 4, 8, 16):
            for target in (0, -1):  # the runtime's occupancy target (automatic), none
                yield (f"blk fwd BLOCK_SIZE={block} warps={warps or 'default'}" + (" no-target" if target else ""),
                       lambda block=block, warps=warps, target=target: mod.layer_norm_fwd[(M,)](
                           x, y, w, b, mean, rstd, n, n, 1e-5, T="f16", BLOCK_SIZE=block, num_warps=warps,
                           min_blocks_per_sm=target))
    yield "blk fwd (example host code)", lambda: blk_layer_norm.forward(x, w, b, 1e-5)
    yield "triton fwd (tutorial)", lambda: tri.layer_norm_fwd(x, w, b, 1e-5)


def bwd_variants(n):
    x, w, b, dy = ln_inputs(M, n)
    _, mean, rstd = blk_layer_norm.forward(x, w, b, 1e-5)
    _, _, _, block, warps = tri.layer_norm_fwd(x, w, b, 1e-5)
    mod = blk_layer_norm.module("layernorm.blk", x)
    full = blk.next_power_of_2(n)
    dx = torch.empty_like(x)
    for programs in (66, 132, 264, 396, 528, 1056):
        pdw, pdb = torch.empty(programs, n, device="cuda").half(), torch.empty(programs, n, device="cuda").half()
        for nw in (0, 4, 8, 16):
            yield (f"blk bwd dx_det programs={programs} warps={nw or 'default'}",
                   lambda programs=programs, nw=nw, pdw=pdw, pdb=pdb: mod.layer_norm_bwd_dx_det[(programs,)](
                       dx, dy, pdw, pdb, x, w, mean, rstd, n, n, M, T="f16", BLOCK_SIZE_N=full, num_warps=nw))
        yield (f"blk bwd dwdb programs={programs}",
               lambda programs=programs, pdw=pdw, pdb=pdb: mod.layer_norm_bwd_dwdb[(blk.cdiv(n, 128),)](
                   pdw, pdb, torch.empty(n, device="cuda").half(), torch.empty(n, device="cuda").half(), programs, n,
                   T="f16", BLOCK_SIZE_M=32, BLOCK_SIZE_N=128))
    yield "blk bwd (example host code)", lambda: blk_layer_norm.backward(dy, x, w, mean, rstd)
    yield "triton bwd (tutorial)", lambda: tri.layer_norm_bwd(dy, x, w, mean, rstd, block, warps)


def profile(n, names):
    """One launch of each variant named (all of blk's and Triton's host-code
    versions if none), at row length n, for ncu --profile-from-start off."""
    runs = [v for v in list(fwd_variants(n)) + list(bwd_variants(n))
            if (v[0] in names if names else "host code" in v[0] or "triton" in v[0])]
    for _, fn in runs:
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for name, fn in runs:
        torch.cuda.nvtx.range_push(name)
        fn()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--profile":
        profile(int(sys.argv[2]), sys.argv[3:])
        return
    args = sys.argv[1:]
    fwd_only = "--fwd" in args
    sizes = [int(a) for a in args if a != "--fwd"] or [1024, 4096, 8192, 15872]
    print(f"GPU: {torch.cuda.get_device_name()}; M = {M}, f16; kernel time (CUDA graph, L2 flushed)\n")
    print("| N | variant | µs | GB/s |")
    print("|---|---|---|---|")
    for n in sizes:
        passes = [(2 * M * n * 2, fwd_variants(n))] + ([] if fwd_only else [(3 * M * n * 2, bwd_variants(n))])
        for nbytes, variants in passes:
            for name, fn in variants:
                try:
                    fn()  # compiles and loads
                    torch.cuda.synchronize()
                    us = sbs.kernel_ms(fn) * 1e3
                except Exception as e:  # a variant that does not fit (registers, threads) is reported, not fatal
                    print(f"| {n} | {name} | failed: {str(e).splitlines()[0][:80]} | |", flush=True)
                    continue
                print(f"| {n} | {name} | {us:.1f} | {nbytes / us / 1e3:.0f} |", flush=True)


if __name__ == "__main__":
    main()
