# Matmul at one size: cuBLAS, Triton's tutorial kernel (autotuned) and blkc's 128x256x64 kernel
# built several ways (ring stages, no producer warpgroup, cp.async instead of TMA, 256x128 tiles,
# persistent), f16 and bf16, in one process with dot_bench.py's timer (kernel time through CUDA
# graphs, L2 flushed), three rounds.
#   BLK_CACHE_DISABLE=1 python3 bench/matmul_variants.py LIBBLK [N]      (N = 2048 by default)
#   ... --exp 0,1,2 LIBBLK [N]: instead of the variants, the default build with the environment's
#   BLK_EXP set to each value in turn, for a build patched to read it (an experiment's patch in
#   docs/results; main's code reads no BLK_EXP)
import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import dot_bench as db
db.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
args = sys.argv[1:]
exps = []
if args[:1] == ["--exp"]:
    exps, args = args[1].split(","), args[2:]
lib = args[0]
n = int(args[1]) if len(args) > 1 else 2048
B = db.Blk(lib)
no_ws = db.Blk(lib, no_warp_specialize=True)
no_tma = db.Blk(lib, no_tma=True)


def exp_build(e, a, b, c):
    os.environ["BLK_EXP"] = e  # read when the kernel compiles, which blk_matmul does
    return db.blk_matmul(db.Blk(lib), a, b, c, 128, 256, 64, 8)

for dtype in (torch.float16, torch.bfloat16):
    a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
    c = torch.empty_like(a)
    ref = torch.matmul(a, b)
    cases = [("cublas", lambda: torch.matmul(a, b, out=c)), ("triton", db.tl_matmul(a, b, c))]
    if exps:
        cases += [(f"blkc 128x256x64 w8 BLK_EXP={e}", exp_build(e, a, b, c)) for e in exps]
    else:
        cases += [
            ("blkc 128x256x64 w8", db.blk_matmul(B, a, b, c, 128, 256, 64, 8)),
            ("blkc 128x256x64 w8 s3", db.blk_matmul(B, a, b, c, 128, 256, 64, 8, 3)),
            ("blkc 128x256x64 w8 no producer", db.blk_matmul(no_ws, a, b, c, 128, 256, 64, 8)),
            ("blkc 128x256x64 w8 no producer s3", db.blk_matmul(no_ws, a, b, c, 128, 256, 64, 8, 3)),
            ("blkc 128x256x64 w8 cp.async s3", db.blk_matmul(no_tma, a, b, c, 128, 256, 64, 8, 3)),
            ("blkc 256x128x64 w8", db.blk_matmul(B, a, b, c, 256, 128, 64, 8)),
            ("blkc 128x256x64 w8 persistent", db.blk_matmul(B, a, b, c, 128, 256, 64, 8, 0, True)),
            ("blkc 128x128x64 w8 persistent", db.blk_matmul(B, a, b, c, 128, 128, 64, 8, 0, True))]
    ok = []
    # as dot_bench checks: the output's rounding twice, plus f32 sum-order error
    tol = (2 ** -10 if dtype == torch.float16 else 2 ** -7) * ref.float().abs().max().item() + n * 2 ** -20
    for name, fn in cases:
        try:
            fn()
            torch.cuda.synchronize()
            err = (c.float() - ref.float()).abs().max().item()
            if not err <= tol:
                raise RuntimeError(f"wrong result: max error {err:.3g} > {tol:.3g}")
            ok.append((name, fn))
        except Exception as e:  # a configuration that does not fit: say why
            print(f"{name}: {str(e).splitlines()[0][:150]}", flush=True)
    for rep in range(3):
        for name, fn in ok:
            t = db.kernel_time(fn)
            print(f"{str(dtype)[6:]:8s} {n} {name:34s} rep {rep}: {t * 1e3:7.1f} us {2 * n ** 3 / t / 1e9:4.0f} TFLOP/s",
                  flush=True)
