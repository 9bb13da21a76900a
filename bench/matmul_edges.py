#!/usr/bin/env python3
"""matmul_edges.py: what a ragged edge costs blkc's matmul. Pairs of shapes with
the same tiles, one a multiple of them and one not (3072 x 5120 against 3000 x
5000 at 128 x 256 tiles: 24 x 20 programs each), K a multiple of the block or
not, beside cuBLAS (torch.matmul), one process, kernel times (CUDA graphs, L2
flushed: dot_bench.py's timer); each result checked against torch's in f32.

    BLK_LIBRARY=... python3 bench/matmul_edges.py LIBBLK_SO

Prints a line a shape: cuBLAS and three blkc configurations (BLOCK_M, BLOCK_N,
BLOCK_K, warps[, ring stages]) in TFLOP/s, with the largest error."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dot_bench as d  # noqa: E402


def main():
    d.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    blk = d.Blk(sys.argv[1] if len(sys.argv) > 1 else "build-static/libblk.so.0")
    print(f"GPU: {torch.cuda.get_device_name()}; TFLOP/s from the kernel time")
    for M, N, K in [(3072, 5120, 4096), (3000, 5000, 4096), (3072, 5120, 4000), (3000, 5000, 4000),
                    (3072, 5120, 4032), (4096, 4096, 4096), (4104, 4104, 4104), (4096, 4096, 4104),
                    (4104, 4104, 4096)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        ref = a.float() @ b.float()
        flops = 2 * M * N * K
        tc = d.kernel_time(lambda: torch.matmul(a, b, out=c))
        row = [f"{M}x{N}x{K}", f"cublas {flops / tc / 1e9:.0f}"]
        for cfg in [(128, 256, 64, 8), (128, 128, 64, 8), (128, 256, 64, 8, 3)]:
            fn = d.blk_matmul(blk, a, b, c, *cfg)
            fn()
            torch.cuda.synchronize()
            err = (c.float() - ref).abs().max().item()
            if not err < 0.5:
                raise RuntimeError(f"{M}x{N}x{K} {cfg}: wrong result, max error {err}")
            row.append(f"{cfg} {flops / d.kernel_time(fn) / 1e9:.0f} err {err:.2g}")
        print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
