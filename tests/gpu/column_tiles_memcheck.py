#!/usr/bin/env python3
"""Column-major tiles on the GPU: the MoE example (A's rows gathered, B read as
[K, N] tiles of a K-contiguous [E, N, K] weight) at edge sizes, and matmul.blk
with a column-major B (B^T: its [K, N] tiles copied into the loop's ring along
K, by cp.async or TMA), each checked against torch in f32. Run plain and under
compute-sanitizer's memcheck and racecheck on the GPU machine:

    compute-sanitizer --tool memcheck python3 tests/gpu/column_tiles_memcheck.py [LIBBLK_SO]"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import dot_bench  # noqa: E402
import moe_bench  # noqa: E402


def main():
    blk = dot_bench.Blk(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BLK_LIBRARY", "libblk.so.0"))
    torch.manual_seed(1)
    bad = 0
    # (tokens, N, K, (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages))
    for tokens, N, K, cfg in [(1, 100, 72, (16, 64, 32, 8, 4, 0)), (15, 136, 200, (32, 64, 64, 8, 4, 0)),
                              (17, 4095, 1000, (64, 128, 64, 8, 4, 0)), (300, 256, 4096, (128, 256, 64, 16, 8, 0))]:
        experts, top_k = 8, 2
        w = torch.randn(experts, N, K, dtype=torch.float16, device="cuda")
        a = torch.randn(tokens, K, dtype=torch.float16, device="cuda")
        tw, ti = torch.topk(torch.softmax(torch.randn(tokens, experts, device="cuda"), -1), top_k, dim=-1)
        tw, ti = tw.contiguous(), ti.to(torch.int32)
        ids, eids, total = moe_bench.align(ti, experts, cfg[0])
        c = torch.zeros(tokens, top_k, N, dtype=torch.float16, device="cuda")
        moe_bench.blk_launch(blk, a, w, c, tw, ids, eids, total, top_k, cfg, True)()
        ref = moe_bench.reference(a, w, ti, tw, True, top_k)
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        print(f"moe_matmul tokens={tokens} N={N} K={K} config={cfg}: relative error {err:.1e}")
        bad += err > 1e-2
    for M, N, K in [(1000, 1000, 72), (4095, 17, 1000), (256, 256, 4096), (15, 4095, 64)]:
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        bt = torch.randn(N, K, dtype=torch.float16, device="cuda")
        c = torch.zeros(M, N, dtype=torch.float16, device="cuda")
        dot_bench.blk_matmul(blk, a, bt.T, c, 128, 128, 64, 8)()
        ref = a.float() @ bt.float().T
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        print(f"matmul B^T {M}x{N}x{K}: relative error {err:.1e}")
        bad += err > 1e-2
    torch.cuda.synchronize()
    print("WRONG" if bad else "all match")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
