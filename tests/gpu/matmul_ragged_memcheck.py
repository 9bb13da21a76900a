#!/usr/bin/env python3
"""One ragged matmul down each TMA path with bounds (issue 38): a's rows bounded
by M, b's columns by N (its edge map), B^T's rows by N; under compute-sanitizer's
memcheck on the GPU machine, results checked against torch in f32:

    compute-sanitizer --tool memcheck python3 tests/gpu/matmul_ragged_memcheck.py [LIBBLK_SO]"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import dot_bench as d  # noqa: E402


def main():
    blk = d.Blk(sys.argv[1] if len(sys.argv) > 1 else "build-static/libblk.so.0")
    bad = 0
    for M, N, K, transposed in [(1000, 1000, 1000, False), (3000, 520, 1000, True), (17, 4088, 72, False)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K, device="cuda", dtype=torch.float16).t() if transposed else \
            torch.randn(K, N, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        d.blk_matmul(blk, a, b, c, 128, 128, 64, 8)()
        torch.cuda.synchronize()
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        ok = err < 0.2  # f16 output rounding of sums ~ N(0, K): |c| < 150, half an ulp 0.06
        bad += not ok
        print(M, N, K, "B^T" if transposed else "B", "max error", err, "ok" if ok else "WRONG")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
