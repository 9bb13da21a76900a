#!/usr/bin/env python3
"""fp8_bench.py: blkc's 8-bit matmuls beside their peers, one run, one GPU, one
timer (dot_bench.py's: kernel time from CUDA graphs, L2 flushed before every run).

    python3 bench/fp8_bench.py LIBBLK_SO [--tutorial PATH] [--quick] [--only fp8|int8|accuracy]
        [--out FILE] [--no-warp-specialize]

fp8 (e4m3 x e4m3, B column-major, C in bf16):
  cuBLAS   torch._scaled_mm with per-tensor scales, use_fast_accum False (its
           sums promoted to f32 along k, as blkc's are) and True;
  Triton   Triton's python/tutorials/03-matrix-multiplication.py as published
           (--tutorial PATH: the triton-lang/triton repository's file; the GPU
           machine's Triton package has no tutorials, so it travels with the
           command), loaded as a module by dot_bench.load_triton_tutorial, its
           matmul(a, b) timed as it is (its autotuned kernel over its own CUDA
           configurations, fp8 ones included; C allocated in fp16, no scales).
           Without --tutorial the column is "-";
  blkc     dsl_examples/matmul_fp8.blk, per-tensor scales (a scale stride of 0), its
           sums promoted every 128 terms (k128, k256), every 256 (p256) and never
           (fast: PROMOTE = 2^30, as cuBLAS's fast mode and Triton's kernel), and
           matmul_fp8_blockwise.blk (1 x 128 and 128 x 128 scales, as DeepGEMM's).
int8 (i8 x i8 -> i32, B column-major): torch._int_mm (cuBLAS) against
  dsl_examples/matmul_int8.blk.
accuracy: fp8 products summed over K up to 16384, C in f32, against an f64
  (Triton's row: tutorial 03's kernel as dot_bench.py writes it, C in f32 -- the
  file's own kernel rounds C to fp16 -- to show what tl.dot's fp8 sums keep);
  reference: the largest |C - ref| / sum_k |a b| (the sums' error relative to
  the terms' magnitude) and the largest |C - ref| / |ref| over the output's
  elements whose |ref| is at least 1% of its largest."""
import argparse
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dot_bench  # noqa: E402  (its runtime wrapper, timers and Triton's tutorial kernel)
from dot_bench import F32, I32, PTR, Blk, best_of, kernel_time, user_time  # noqa: E402


def blk_matmul_fp8(blk, a, b, c, sa, sb, bm, bn, bk, warps, stages=0, per_tensor=True, promote=128):
    """a [M, K], b [K, N] (any strides), c [M, N]; scales sa, sb (f32 tensors, one
    element each when per_tensor); sums promoted every `promote` k terms."""
    M, K = a.shape
    N = b.shape[1]
    names = {torch.float8_e4m3fn: "f8e4m3", torch.float8_e5m2: "f8e5m2", torch.bfloat16: "bf16",
             torch.float16: "f16", torch.float32: "f32"}
    k = blk.kernel("matmul_fp8.blk", "matmul_fp8",
                   [f"TA={names[a.dtype]}", f"TB={names[b.dtype]}", f"T={names[c.dtype]}", f"BLOCK_M={bm}",
                    f"BLOCK_N={bn}", f"BLOCK_K={bk}", "GROUP_M=8", f"PROMOTE={promote}"], warps, stages)
    ss = 0 if per_tensor else 1
    args = [(PTR, a.data_ptr()), (PTR, b.data_ptr()), (PTR, c.data_ptr()), (PTR, sa.data_ptr()),
            (PTR, sb.data_ptr()), (I32, M), (I32, N), (I32, K), (I32, a.stride(0)), (I32, a.stride(1)),
            (I32, b.stride(0)), (I32, b.stride(1)), (I32, c.stride(0)), (I32, c.stride(1)), (I32, ss), (I32, ss)]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def blk_matmul_fp8_blockwise(blk, a, bt, c, sa, sb, bm, bn, warps, stages=0):
    """a [M, K], bt [N, K] (both k-contiguous), sa [M, K/128], sb [N/128, K/128] (f32), c [M, N]."""
    M, K = a.shape
    N = bt.shape[0]
    k = blk.kernel("matmul_fp8_blockwise.blk", "matmul_fp8_blockwise",
                   ["TA=f8e4m3", "TB=f8e4m3", "T=bf16", f"BLOCK_M={bm}", f"BLOCK_N={bn}", "GROUP_M=8"], warps, stages)
    args = [(PTR, a.data_ptr()), (PTR, bt.data_ptr()), (PTR, c.data_ptr()), (PTR, sa.data_ptr()),
            (PTR, sb.data_ptr()), (I32, M), (I32, N), (I32, K), (I32, a.stride(0)), (I32, bt.stride(0)),
            (I32, c.stride(0)), (I32, sa.stride(0)), (I32, sb.stride(0))]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def blk_matmul_int8(blk, a, b, c, bm, bn, bk, warps, stages=0):
    M, K = a.shape
    N = b.shape[1]
    k = blk.kernel("matmul_int8.blk", "matmul_int8",
                   ["TA=i8", "TB=i8", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}", "GROUP_M=8"], warps, stages)
    args = [(PTR, a.data_ptr()), (PTR, b.data_ptr()), (PTR, c.data_ptr()), (I32, M), (I32, N), (I32, K),
            (I32, a.stride(0)), (I32, a.stride(1)), (I32, b.stride(0)), (I32, b.stride(1)),
            (I32, c.stride(0)), (I32, c.stride(1))]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def tl_fp8_configs():
    """Tutorial 03's CUDA configurations, its fp8 ones included."""
    out = dot_bench.matmul_configs()
    for bm, bn, bk, s, w in [(128, 256, 128, 3, 8), (256, 128, 128, 3, 8), (256, 64, 128, 4, 4),
                             (64, 256, 128, 4, 4), (128, 128, 128, 4, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4),
                             (128, 32, 64, 4, 4)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GM": 8}, num_stages=s, num_warps=w))
    return out


TL_FP8 = triton.autotune(configs=tl_fp8_configs(), key=["M", "N", "K"])(dot_bench.tl_matmul_kernel.fn)


def tl_matmul_fp8(a, b, c):
    return dot_bench.tl_matmul(a, b, c, TL_FP8)


# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages; 0: blkc's choice). An fp8 dot adds its sums to the
# accumulator in f32 every 128 terms (as DeepGEMM and cuBLAS's default mode) whatever BLOCK_K;
# at 256 a dot's two sums take turns (one added while the next one's wgmmas run): timed apart
FP8_CONFIGS = [(128, 128, 128, 8, 0), (128, 256, 128, 8, 0), (128, 128, 64, 8, 0), (128, 256, 64, 8, 0),
               (64, 128, 128, 4, 0), (128, 64, 128, 4, 0), (128, 128, 128, 8, 4)]
FP8_K256_CONFIGS = [(128, 128, 256, 8, 0), (128, 128, 256, 8, 2), (64, 128, 256, 4, 0)]
# promoted every 256 terms (max_num_imprecise_acc = 256): fewer waits, twice the error
FP8_P256_CONFIGS = [(128, 128, 256, 8, 0)]
# never promoted (max_num_imprecise_acc = 2^30, Triton's default on Hopper): the tensor cores sum into
# the accumulator, as cuBLAS's fast-accumulation mode and Triton's kernel do
FAST = 1 << 30
FP8_FAST_CONFIGS = [(128, 128, 128, 8, 0), (128, 256, 128, 8, 0), (128, 256, 64, 8, 0), (128, 128, 64, 8, 0),
                    (128, 256, 128, 8, 3)]


def lazy(make):
    """A launch built on its first call, so that best_of's try sees a configuration that does not
    compile (too much shared memory) as one to skip, not as the benchmark's end."""
    built = []

    def run():
        if not built:
            built.append(make())
        return built[0]()
    return run


def tflops(flops, t):
    return flops / (t[0] * 1e-3) / 1e12 if t else float("nan")


def fp8_table(blk, shapes, lines, tut):
    lines += ["## fp8 matmul: e4m3 x e4m3, B column-major, C in bf16", "",
              "blkc k128 / k256: its best configuration with BLOCK_K 128 / 256 (sums promoted to f32 every 128 "
              "terms in both); p256: BLOCK_K 256 promoted every 256 terms (PROMOTE=256, twice the error); fast: "
              "never promoted (PROMOTE=2^30: the tensor cores sum into the accumulator, as cuBLAS's fast-accumulation "
              "mode and Triton's kernel do)", "",
              "| M | N | K | cuBLAS TFLOP/s | cuBLAS fast-accum TFLOP/s | Triton tutorial 03 TFLOP/s | blkc k128 TFLOP/s (config) | "
              "blkc k256 TFLOP/s (config) | blkc p256 TFLOP/s | k128 / cuBLAS | k256 / cuBLAS | p256 / cuBLAS | "
              "k256 / fast-accum | k256 / Triton | cuBLAS ms kernel / user | blkc k256 ms kernel / user | "
              "blkc block-scaled TFLOP/s (config) | blkc fast TFLOP/s (config) | fast / cuBLAS fast-accum | "
              "fast / Triton |",
              "|" + "---|" * 20]
    for M, N, K in shapes:
        a = (torch.randn(M, K, device="cuda") * 0.5).to(torch.float8_e4m3fn)
        b = (torch.randn(N, K, device="cuda") * 0.5).to(torch.float8_e4m3fn).t()  # [K, N], column-major
        one = torch.ones((), device="cuda", dtype=torch.float32)
        ref = (a.float() @ b.float())
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

        # the sums' order differs (f32; in cuBLAS's fast mode and inside a wgmma, fewer bits), then one bf16
        # rounding: 2^-7 of the largest output plus 2^-9 of sum |a b| for the sums
        mag = (a.float().abs() @ b.float().abs()).max().item()

        def check(c=c, ref=ref, mag=mag):
            err = (c.float() - ref).abs().max().item()
            tol = 2 ** -7 * ref.abs().max().item() + 2 ** -9 * mag
            if not err <= tol:
                raise RuntimeError(f"wrong result: max error {err:.3g} > {tol:.3g}")

        flops = 2 * M * N * K
        tc = best_of([("cublas", lambda: torch._scaled_mm(a, b, one, one, out=c, out_dtype=torch.bfloat16))], check)
        tf = best_of([("cublas fast", lambda: torch._scaled_mm(a, b, one, one, out=c, out_dtype=torch.bfloat16,
                                                                use_fast_accum=True))], check)
        tt = dot_bench.triton_matmul_best(tut, a, b, c, check)
        def cands(configs, promote=128):
            return [(f"{bm}x{bn}x{bk} w{w}" + (f" s{s}" if s else ""),
                     lazy(lambda bm=bm, bn=bn, bk=bk, w=w, s=s: blk_matmul_fp8(blk, a, b, c, one, one, bm, bn, bk, w,
                                                                                s, promote=promote)))
                    for bm, bn, bk, w, s in configs]
        tk = best_of(cands(FP8_CONFIGS), check)
        tb = best_of(cands(FP8_K256_CONFIGS), check)
        tp = best_of(cands(FP8_P256_CONFIGS, 256), check)
        tfa = best_of(cands(FP8_FAST_CONFIGS, FAST), check)
        uc, ub = user_time(tc[2]) if tc else float("nan"), user_time(tb[2]) if tb else float("nan")
        # block-wise scales (1 x 128 on A, 128 x 128 on B), all 1: the same product, checked the same way
        sa = torch.ones(M, triton.cdiv(K, 128), device="cuda")
        sbw = torch.ones(triton.cdiv(N, 128), triton.cdiv(K, 128), device="cuda")
        bt = b.t()  # [N, K], k-contiguous
        blockwise = [(128, 128, 8), (64, 128, 4), (128, 64, 4), (64, 64, 4)]
        tw = best_of([(f"{bm}x{bn} w{w}",
                       lazy(lambda bm=bm, bn=bn, w=w: blk_matmul_fp8_blockwise(blk, a, bt, c, sa, sbw, bm, bn, w)))
                      for bm, bn, w in blockwise], check)
        r = [tflops(flops, t) for t in (tc, tf, tt, tk, tb, tw, tp, tfa)]
        lines.append(f"| {M} | {N} | {K} | {r[0]:.0f} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.0f} ({tk[1] if tk else '-'}) | "
                     f"{r[4]:.0f} ({tb[1] if tb else '-'}) | {r[6]:.0f} | {r[3] / r[0]:.0%} | {r[4] / r[0]:.0%} | "
                     f"{r[6] / r[0]:.0%} | {r[4] / r[1]:.0%} | {r[4] / r[2]:.0%} | "
                     f"{tc[0] if tc else float('nan'):.3f} / {uc:.3f} | "
                     f"{tb[0] if tb else float('nan'):.3f} / {ub:.3f} | {r[5]:.0f} ({tw[1] if tw else '-'}) | "
                     f"{r[7]:.0f} ({tfa[1] if tfa else '-'}) | {r[7] / r[1]:.0%} | {r[7] / r[2]:.0%} |")
        print(lines[-1], flush=True)


def int8_table(blk, shapes, lines):
    lines += ["", "## int8 matmul: i8 x i8 -> i32, B column-major (exact: compared bit for bit)", "",
              "| M | N | K | cuBLAS TOP/s | blkc TOP/s | blkc / cuBLAS | blkc config | cuBLAS ms | blkc ms |",
              "|" + "---|" * 9]
    for M, N, K in shapes:
        a = torch.randint(-128, 128, (M, K), device="cuda", dtype=torch.int8)
        b = torch.randint(-128, 128, (N, K), device="cuda", dtype=torch.int8).t()
        ref = torch._int_mm(a, b)
        c = torch.empty_like(ref)

        def check(c=c, ref=ref):
            if not torch.equal(c, ref):
                raise RuntimeError(f"wrong result: {(c != ref).sum().item()} elements differ")

        ops = 2 * M * N * K
        tc = best_of([("cublas", lambda: torch._int_mm(a, b, out=c))], check)
        cands = [(f"{bm}x{bn}x{bk} w{w}" + (f" s{s}" if s else ""),
                  lazy(lambda bm=bm, bn=bn, bk=bk, w=w, s=s: blk_matmul_int8(blk, a, b, c, bm, bn, bk, w, s)))
                 for bm, bn, bk, w, s in FP8_CONFIGS + FP8_K256_CONFIGS]
        tb = best_of(cands, check)
        r = [tflops(ops, t) for t in (tc, tb)]
        lines.append(f"| {M} | {N} | {K} | {r[0]:.0f} | {r[1]:.0f} | {r[1] / r[0]:.0%} | {tb[1] if tb else '-'} | "
                     f"{tc[0] if tc else float('nan'):.3f} | {tb[0] if tb else float('nan'):.3f} |")
        print(lines[-1], flush=True)


def accuracy_table(blk, lines):
    lines += ["", "## fp8 accuracy: e4m3 x e4m3 ~ N(0, 1) rounded, M = N = 512, C in f32, against f64", "",
              "| K | provider | max err / sum\\|ab\\| | max err / \\|ref\\| (\\|ref\\| >= 1% of max) |", "|---|---|---|---|"]
    for K in (1024, 4096, 16384):
        M = N = 512
        a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
        b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn).t()
        one = torch.ones((), device="cuda", dtype=torch.float32)
        ref = a.double() @ b.double()
        mag = a.double().abs() @ b.double().abs()
        big = ref.abs() >= 0.01 * ref.abs().max()
        c = torch.empty(M, N, device="cuda", dtype=torch.float32)
        runs = [("cuBLAS", lambda: torch._scaled_mm(a, b, one, one, out=c, out_dtype=torch.float32)),
                ("cuBLAS fast-accum", lambda: torch._scaled_mm(a, b, one, one, out=c, out_dtype=torch.float32,
                                                               use_fast_accum=True)),
                ("Triton tl.dot (tutorial 03's kernel)", tl_matmul_fp8(a, b, c)),
                ("blkc 128x128x128", lazy(lambda: blk_matmul_fp8(blk, a, b, c, one, one, 128, 128, 128, 8))),
                ("blkc 128x128x256", lazy(lambda: blk_matmul_fp8(blk, a, b, c, one, one, 128, 128, 256, 8))),
                ("blkc 128x128x256, PROMOTE=256",
                 lazy(lambda: blk_matmul_fp8(blk, a, b, c, one, one, 128, 128, 256, 8, promote=256))),
                ("blkc 128x256x128, PROMOTE=2^30",
                 lazy(lambda: blk_matmul_fp8(blk, a, b, c, one, one, 128, 256, 128, 8, promote=FAST)))]
        for name, fn in runs:
            try:
                fn()
                torch.cuda.synchronize()
            except Exception as err:
                print(f"    ({name}: {str(err).splitlines()[0][:120]})", file=sys.stderr)
                continue
            err = (c.double() - ref).abs()
            lines.append(f"| {K} | {name} | {(err / mag).max().item():.2e} | {(err[big] / ref.abs()[big]).max().item():.2e} |")
            print(lines[-1], flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libblk")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["fp8", "int8", "accuracy"])
    ap.add_argument("--tutorial", help="Triton's python/tutorials/03-matrix-multiplication.py (the Triton column)")
    ap.add_argument("--out")
    ap.add_argument("--no-warp-specialize", action="store_true",
                    help="no producer warpgroup for blkc's TMA loops (blk_compile_options.no_warp_specialize)")
    args = ap.parse_args()
    torch.manual_seed(0)
    dot_bench.FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    blk = Blk(args.libblk, no_warp_specialize=args.no_warp_specialize)
    lines = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; "
             "times in ms, TFLOP/s from the kernel time; L2 flushed before every run", ""]
    squares = [(n, n, n) for n in (2048, 4096, 8192)]
    llm = [(4096, 8192, 8192), (4096, 28672, 8192), (4096, 8192, 28672)]  # a 70B model's projections, 4096 tokens
    shapes = [(4096, 4096, 4096)] if args.quick else squares + llm
    if args.only in (None, "fp8"):
        fp8_table(blk, shapes, lines, dot_bench.load_tutorial_03(args.tutorial))
    if args.only in (None, "int8"):
        int8_table(blk, shapes, lines)
    if args.only in (None, "accuracy"):
        accuracy_table(blk, lines)
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
