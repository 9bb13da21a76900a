"""8-bit integer matmuls of mixed signs: u8 x i8 (and i8 x u8) against i8 x i8, blkc's
dsl_examples/matmul_int8.blk with B column-major (K-major, as wgmma reads 8-bit b), one or
more libblk builds in one process, each result checked exactly against PyTorch's f64 product
(PyTorch's own int8 matmul, torch._int_mm, takes i8 x i8 only). Kernel time, TOP/s.
    python3 bench/int8_mixed_bench.py LIBBLK [LIBBLK_B ...]     # on the GPU machine"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dot_bench as db  # noqa: E402

CONFIGS = [(128, 128, 128, 8), (128, 256, 128, 8), (128, 128, 64, 4)]


def matmul(blk, a, b, c, ta, tb, bm, bn, bk, warps):
    M, K = a.shape
    N = b.shape[1]
    k = blk.kernel("matmul_int8.blk", "matmul_int8",
                   [f"TA={ta}", f"TB={tb}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}", "GROUP_M=8"], warps)
    args = [(db.PTR, a.data_ptr()), (db.PTR, b.data_ptr()), (db.PTR, c.data_ptr()), (db.I32, M), (db.I32, N),
            (db.I32, K), (db.I32, a.stride(0)), (db.I32, a.stride(1)), (db.I32, b.stride(0)), (db.I32, b.stride(1)),
            (db.I32, c.stride(0)), (db.I32, c.stride(1))]
    grid = ((M + bm - 1) // bm * ((N + bn - 1) // bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def main():
    db.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    libs = sys.argv[1:]
    print(f"device: {torch.cuda.get_device_name()}")
    print("| build | M = N = K | a x b | TOP/s | config |\n|---|---|---|---|---|")
    for n in (2048, 4096, 8192):
        a8 = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8)
        b8 = torch.randint(-128, 128, (n, n), device="cuda", dtype=torch.int8).t()  # column-major
        au = torch.randint(0, 256, (n, n), device="cuda", dtype=torch.uint8)
        bu = torch.randint(0, 256, (n, n), device="cuda", dtype=torch.uint8).t()
        c = torch.empty(n, n, device="cuda", dtype=torch.int32)
        for name, a, b, ta, tb in [("i8 x i8", a8, b8, "i8", "i8"), ("u8 x i8", au, b8, "u8", "i8"),
                                   ("i8 x u8", a8, bu, "i8", "u8")]:
            ref = (a.double() @ b.double()).to(torch.int64)  # exact: |sums| < 2^53

            def check(ref=ref):
                if not torch.equal(c.to(torch.int64), ref):
                    raise RuntimeError(f"wrong: {(c.to(torch.int64) != ref).sum().item()} elements differ")
            for lib in libs:
                blk = db.Blk(lib)
                best = db.best_of([(f"{bm}x{bn}x{bk} w{w}", matmul(blk, a, b, c, ta, tb, bm, bn, bk, w))
                                   for bm, bn, bk, w in CONFIGS], check)
                tops = 2 * n ** 3 / (best[0] * 1e-3) / 1e12 if best else float("nan")
                print(f"| {lib} | {n} | {name} | {tops:.0f} | "
                      f"{best[1] if best else '-'} |", flush=True)


if __name__ == "__main__":
    main()
