#!/usr/bin/env python3
"""Split-K matmul on the GPU (matmul_splitk.blk: the partials of K's splits added by each
tile's last program, counted by an atomic) at edge sizes (1, 15, 17, 1000, 4095 in each
dimension), more splits than K has blocks, f16 and bf16, launched twice on the same counts
(the first launch must leave them zero); each C checked against torch in f32. Run plain and
under compute-sanitizer's memcheck and racecheck on the GPU machine:

    compute-sanitizer --tool memcheck python3 tests/gpu/matmul_splitk_memcheck.py"""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import blk  # noqa: E402


def cdiv(x, y):
    return -(-x // y)


def main():
    kernel = blk.compile(os.path.join(HERE, "..", "..", "dsl_examples", "matmul_splitk.blk"))["matmul_splitk"]
    torch.manual_seed(3)
    bad = 0
    # (M, N, K, dtype, BLOCK_M, BLOCK_N, BLOCK_K, warps, splits)
    for M, N, K, dt, bm, bn, bk, w, splits in [(1, 4095, 1000, torch.float16, 16, 64, 64, 4, 4),
                                                (15, 17, 4095, torch.bfloat16, 16, 64, 64, 4, 8),
                                                (17, 1000, 15, torch.float16, 16, 128, 64, 4, 4),
                                                (1000, 15, 17, torch.float16, 64, 64, 64, 4, 2),
                                                (256, 4096, 4096, torch.float16, 128, 128, 64, 8, 4),
                                                (64, 1024, 1000, torch.bfloat16, 64, 128, 64, 4, 16)]:
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(K, N, device="cuda", dtype=dt)
        ref = a.float() @ b.float()
        grid = (cdiv(N, bn), cdiv(M, bm), splits)
        partial = torch.empty(grid[0] * grid[1] * splits * bm * bn, device="cuda", dtype=torch.float32)
        count = torch.zeros(grid[0] * grid[1], device="cuda", dtype=torch.int32)
        k_split = cdiv(cdiv(K, splits), bk) * bk
        for launch in range(2):
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
            kernel[grid](a, b, c, partial, count, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), k_split, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w)
            err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
            left = int(count.abs().sum().item())
            print(f"matmul_splitk {M}x{N}x{K} {dt} {bm}x{bn}x{bk} w{w} split {splits} launch {launch}: "
                  f"relative error {err:.1e}, counts left {left}")
            bad += not err < 1e-2 or left != 0
    torch.cuda.synchronize()
    print("WRONG" if bad else "all match")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
