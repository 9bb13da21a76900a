#!/usr/bin/env python3
"""dot_bench.py: blkc's matmul and fused attention beside cuBLAS (torch.matmul),
Triton and PyTorch's scaled_dot_product_attention: one run, one GPU, one timer.

    python3 bench/dot_bench.py LIBBLK_SO [--tutorial PATH] [--quick] [--only matmul|ragged|skinny|attention|attention_bwd]
        [--out FILE] [--min-blocks-per-sm N]
    ncu --section SpeedOfLight ... python3 bench/dot_bench.py LIBBLK_SO --profile

LIBBLK_SO is the runtime as a shared library (libblk.so, target blk_shared;
for the GPU machine, from the static build -DBLK_STATIC_LLVM=ON); blkc's kernels are JIT-compiled through it for their
arguments, as a C program's would be, and launched on PyTorch's stream.

Two times per provider and shape, both with the L2 cache flushed (a 256 MB
write) before every run:
  kernel: R runs captured in a CUDA graph, minus a graph of the R flushes
          alone, divided by R (no launch overhead);
  user:   events around each launch, as triton.testing.do_bench times it
          (launch overhead included), median of R.
TFLOP/s: matmul 2MNK; attention 4·B·H·S²·D, half of that when causal.
Each provider's output is checked against torch's before it is timed.

Triton in the matmul tables is its python/tutorials/03-matrix-multiplication.py as published
(--tutorial PATH, the triton-lang/triton repository's file loaded as a module by
load_triton_tutorial below, its matmul(a, b) timed as it is: the autotuned kernel over its own
configurations, C allocated in fp16 each call); without --tutorial that column is "-". The
attention tables' Triton column is tutorial 06's forward kernel as written below (attention
against the tutorial file itself: attention_bench.py --tutorial). fp8_bench.py and
attention_bench.py load their tutorial files through load_triton_tutorial below."""
import argparse
import ast
import ctypes
import importlib.util
import math
import os
import statistics
import sys
import types

import torch
import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "dsl_examples")
R = 20

# ------------------------------------------------------------------ blkc


class BlkArg(ctypes.Structure):
    class Value(ctypes.Union):
        _fields_ = [("ptr", ctypes.c_uint64), ("i", ctypes.c_int64), ("f", ctypes.c_float)]

    _fields_ = [("kind", ctypes.c_int), ("value", Value)]


def compile_options_type(lib):
    """blk_compile_options as library `lib` lays it out: its integer options, then an int per flag
    its blk_compile_flags() names (python/blk/_lib.py does the same; here per library, since
    compare_builds.py loads two). A library from before blk_compile_flags had these four."""
    try:
        lib.blk_compile_flags.restype = ctypes.c_char_p
        flags = lib.blk_compile_flags().decode().split()
    except AttributeError:
        flags = ["no_tma", "no_warp_specialize", "persistent", "debug"]

    class BlkCompileOptions(ctypes.Structure):
        _fields_ = [("defines", ctypes.POINTER(ctypes.c_char_p)), ("num_defines", ctypes.c_int),
                    ("num_warps", ctypes.c_int), ("arch", ctypes.c_char_p), ("name", ctypes.c_char_p),
                    ("num_stages", ctypes.c_int), ("min_blocks_per_sm", ctypes.c_int)] + [(f, ctypes.c_int) for f in flags]
    return BlkCompileOptions


PTR, I32, F32 = 0, 1, 4


class Blk:
    def __init__(self, path, min_blocks_per_sm=0, no_tma=False, no_warp_specialize=False, persistent=False):
        self.lib = ctypes.CDLL(path)
        self.options_type = compile_options_type(self.lib)
        self.min_blocks_per_sm, self.no_tma, self.no_ws = min_blocks_per_sm, int(no_tma), int(no_warp_specialize)
        self.persistent = bool(persistent)  # every kernel's, unless a kernel() call says
        self.lib.blk_last_error.restype = ctypes.c_char_p
        self.ctx = ctypes.c_void_p()
        self.check(self.lib.blk_context_create_cuda(0, ctypes.byref(self.ctx)))
        self.modules = {}

    def check(self, status):
        if status:
            raise RuntimeError(self.lib.blk_last_error().decode())

    def kernel(self, file, name, defines, num_warps=0, num_stages=0, persistent=None):
        persistent = self.persistent if persistent is None else persistent
        key = (file, name, tuple(defines), num_warps, num_stages, persistent)
        if key not in self.modules:
            arr = (ctypes.c_char_p * len(defines))(*[d.encode() for d in defines])
            opt = self.options_type(arr, len(defines), num_warps, None, None, num_stages, self.min_blocks_per_sm,
                                    no_tma=self.no_tma, no_warp_specialize=self.no_ws, persistent=int(persistent))
            mod, k = ctypes.c_void_p(), ctypes.c_void_p()
            self.check(self.lib.blk_module_create_from_file(self.ctx, os.path.join(EXAMPLES, file).encode(),
                                                            ctypes.byref(opt), ctypes.byref(mod)))
            self.check(self.lib.blk_module_get_kernel(mod, name.encode(), ctypes.byref(k)))
            self.modules[key] = k
        return self.modules[key]

    def launch(self, kernel, grid, args):
        arr = (BlkArg * len(args))()
        for i, (kind, v) in enumerate(args):
            arr[i].kind = kind
            if kind == PTR:
                arr[i].value.ptr = v
            elif kind == F32:
                arr[i].value.f = v
            else:
                arr[i].value.i = v
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.blk_launch(kernel, grid[0], grid[1], grid[2], arr, len(args), stream))


def blk_matmul(blk, a, b, c, bm, bn, bk, warps, stages=0, persistent=None):
    M, K = a.shape
    N = b.shape[1]
    t = {torch.float16: "f16", torch.bfloat16: "bf16"}[a.dtype]
    k = blk.kernel("matmul.blk", "matmul", [f"T={t}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}", "GROUP_M=8"],
                   warps, stages, persistent)
    args = [(PTR, a.data_ptr()), (PTR, b.data_ptr()), (PTR, c.data_ptr()), (I32, M), (I32, N), (I32, K),
            (I32, a.stride(0)), (I32, a.stride(1)), (I32, b.stride(0)), (I32, b.stride(1)),
            (I32, c.stride(0)), (I32, c.stride(1))]
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn), 1, 1)
    return lambda: blk.launch(k, grid, args)


def blk_matmul_splitk(blk, a, b, c, bm, bn, bk, warps, splits):
    """matmul_splitk.blk: K split `splits` ways, the partials added by each tile's last program."""
    M, K = a.shape
    N = b.shape[1]
    t = {torch.float16: "f16", torch.bfloat16: "bf16"}[a.dtype]
    k = blk.kernel("matmul_splitk.blk", "matmul_splitk", [f"T={t}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"BLOCK_K={bk}"],
                   warps)
    grid = (triton.cdiv(N, bn), triton.cdiv(M, bm), splits)
    partial = torch.empty(grid[0] * grid[1] * splits * bm * bn, device="cuda", dtype=torch.float32)
    count = torch.zeros(grid[0] * grid[1], device="cuda", dtype=torch.int32)
    k_split = triton.cdiv(triton.cdiv(K, splits), bk) * bk
    args = [(PTR, a.data_ptr()), (PTR, b.data_ptr()), (PTR, c.data_ptr()), (PTR, partial.data_ptr()),
            (PTR, count.data_ptr()), (I32, M), (I32, N), (I32, K), (I32, a.stride(0)), (I32, a.stride(1)),
            (I32, b.stride(0)), (I32, b.stride(1)), (I32, c.stride(0)), (I32, c.stride(1)), (I32, k_split)]

    def run(keep=(partial, count)):  # (the buffers live as long as the launch)
        blk.launch(k, grid, args)
    return run


def skinny(blk, quick, tut):
    """Matmuls with few rows (M 1 to 256) against large N and K: cuBLAS, Triton's tutorial 03 file,
    blkc's matmul.blk and matmul_splitk.blk, each at its fastest configuration; kernel time."""
    lines = ["## skinny matmuls, f16, f32 accumulation (row-major A, B, C)", "",
             "| M | N | K | cuBLAS TFLOP/s | Triton TFLOP/s | blkc matmul | blkc split-K | best blkc / cuBLAS | "
             "matmul config | split-K config |", "|" + "---|" * 10]
    shapes = [(m, n, n) for n in (4096, 8192) for m in (1, 16, 32, 64, 128, 256)]
    if quick:
        shapes = [(16, 4096, 4096), (128, 8192, 8192)]
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(K, N, device="cuda", dtype=torch.float16)
        ref = torch.matmul(a.float(), b.float())
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)

        def check(c=c, ref=ref, K=K):
            err = (c.float() - ref).abs().max().item()
            tol = 2 ** -10 * ref.abs().max().item() + K * 2 ** -20
            if not err <= tol:
                raise RuntimeError(f"wrong result: max error {err:.3g} > {tol:.3g}")
        flops = 2 * M * N * K
        tc = best_of([("cublas", lambda: torch.matmul(a, b, out=c))], check)
        tt = triton_matmul_best(tut, a, b, c, check)
        plain = best_of([(f"{bm}x{bn}x{bk} w{w}", blk_matmul(blk, a, b, c, bm, bn, bk, w))
                         for bm, bn, bk, w in [(16, 64, 64, 4), (16, 128, 64, 4), (64, 64, 64, 4), (64, 128, 64, 4),
                                               (64, 128, 128, 4), (128, 64, 64, 4), (128, 128, 64, 4),
                                               (128, 128, 64, 8), (128, 256, 64, 8)] if bm <= max(M, 16) * 8], check)
        split = best_of([(f"{bm}x{bn}x{bk} w{w} split {sp}", blk_matmul_splitk(blk, a, b, c, bm, bn, bk, w, sp))
                         for bm, bn, bk, w in [(16, 64, 64, 4), (16, 128, 64, 4), (64, 64, 64, 4), (64, 128, 64, 4),
                                               (64, 128, 128, 4), (128, 128, 64, 4), (128, 128, 64, 8)]
                         if bm <= max(M, 16) * 2
                         for sp in (2, 4, 8, 16)], check)
        tf = [flops / (t[0] * 1e-3) / 1e12 if t else float("nan") for t in (tc, tt, plain, split)]
        lines.append(f"| {M} | {N} | {K} | {tf[0]:.1f} | {num(tf[1], '.1f')} | {tf[2]:.1f} | {tf[3]:.1f} | "
                     f"{max(tf[2], tf[3]) / tf[0]:.2f} | {plain[1] if plain else '-'} | {split[1] if split else '-'} |")
        print(lines[-1], flush=True)
    return lines


def padded_head(D):
    """attention.blk's and attention_bwd.blk's BLOCK_D for a head dim that is not a power of two (96:
    blocks of 128, the extra columns zeros), as keyword arguments; none otherwise, so that files
    from before BLOCK_D still take the call."""
    return {"BLOCK_D": 1 << (D - 1).bit_length()} if D & (D - 1) else {}


def padded_head_defs(D):
    """The same as -D definitions."""
    return [f"{k}={v}" for k, v in padded_head(D).items()]


def blk_attention(blk, q, k, v, o, lse, causal, bm, bn, warps, persistent=None):
    Z, H, S, D = q.shape
    kern = blk.kernel("attention.blk", "attn_fwd",
                      [f"HEAD_DIM={D}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"CAUSAL={'true' if causal else 'false'}"]
                      + padded_head_defs(D), warps, 0, persistent)
    args = [(PTR, q.data_ptr()), (PTR, k.data_ptr()), (PTR, v.data_ptr()), (PTR, o.data_ptr()), (PTR, lse.data_ptr()),
            (F32, 1.0 / math.sqrt(D)), (I32, S)]
    grid = (triton.cdiv(S, bm), Z * H, 1)
    return lambda: blk.launch(kern, grid, args)

def blk_attention_bwd(blk, q, k, v, o, do, lse, delta, dq, dk, dv, causal, bm, bn, warps):
    """attention_bwd.blk's three kernels: Delta, then dK/dV, then dQ."""
    Z, H, S, D = q.shape
    defs = [f"HEAD_DIM={D}", f"BLOCK_M={bm}", f"BLOCK_N={bn}", f"CAUSAL={'true' if causal else 'false'}"] + padded_head_defs(D)
    kd = blk.kernel("attention_bwd.blk", "attn_bwd_delta", defs, warps)
    kkv = blk.kernel("attention_bwd.blk", "attn_bwd_dkdv", defs, warps)
    kq = blk.kernel("attention_bwd.blk", "attn_bwd_dq", defs, warps)
    scale = 1.0 / math.sqrt(D)
    p = lambda t: (PTR, t.data_ptr())
    a_delta = [p(o), p(do), p(delta), (I32, S)]
    a_dkdv = [p(q), p(k), p(v), p(do), p(lse), p(delta), p(dk), p(dv), (F32, scale), (I32, S)]
    a_dq = [p(q), p(k), p(v), p(do), p(lse), p(delta), p(dq), (F32, scale), (I32, S)]

    def run():
        blk.launch(kd, (triton.cdiv(S, bm), Z * H, 1), a_delta)
        blk.launch(kkv, (triton.cdiv(S, bn), Z * H, 1), a_dkdv)
        blk.launch(kq, (triton.cdiv(S, bm), Z * H, 1), a_dq)
    return run


# ---------------------------------------------------------------- Triton
# The tutorials' kernels, written here the way tutorials 03 (matmul with
# grouped ordering, autotuned) and 06 (fused attention forward) write them.


def matmul_configs():
    out = []
    # the tutorial's CUDA fp16 configurations
    for bm, bn, bk, s, w in [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                             (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]:
        out.append(triton.Config({"BM": bm, "BN": bn, "BK": bk, "GM": 8}, num_stages=s, num_warps=w))
    return out


@triton.autotune(configs=matmul_configs(), key=["M", "N", "K"])
@triton.jit
def tl_matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                     BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr):
    pid = tl.program_id(0)
    npm = tl.cdiv(M, BM)
    npn = tl.cdiv(N, BN)
    in_group = GM * npn
    first_m = pid // in_group * GM
    size_m = min(npm - first_m, GM)
    pm = first_m + (pid % in_group) % size_m
    pn = (pid % in_group) // size_m
    rm = (pm * BM + tl.arange(0, BM)) % M
    rn = (pn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    ap = a + rm[:, None] * sam + rk[None, :] * sak
    bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap, mask=rk[None, :] < K - kk * BK, other=0.0)
        y = tl.load(bp, mask=rk[:, None] < K - kk * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        ap += BK * sak
        bp += BK * sbk
    cm = pm * BM + tl.arange(0, BM)
    cn = pn * BN + tl.arange(0, BN)
    tl.store(c + cm[:, None] * scm + cn[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def tl_matmul(a, b, c, kernel=None):
    """The tutorial's kernel (or `kernel`, the same autotuned over other configurations) on a, b into c."""
    kernel = kernel or tl_matmul_kernel
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    return lambda: kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1))


def load_triton_tutorial(path, name):
    """A file of Triton's python/tutorials (the triton-lang/triton repository; the GPU machine's
    Triton package ships none, so the file travels with the command) loaded as module `name`, as
    published, less its top-level expression statements: the calls that print, run its tests and
    its benchmarks (`benchmark.run(...)`) at import. Its assignments still run (a tutorial's small
    correctness check among them). Modules it imports for its tests only (pytest, tabulate) are
    stubbed where missing."""
    if path is None:
        return None
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    tree.body = [node for node in tree.body if not isinstance(node, ast.Expr)]
    for missing in ("pytest", "tabulate"):
        if importlib.util.find_spec(missing) is None:
            sys.modules[missing] = types.SimpleNamespace(
                mark=types.SimpleNamespace(parametrize=lambda *a, **k: (lambda f: f)), tabulate=lambda *a, **k: "")
    mod = types.ModuleType(name)
    mod.__file__ = path
    exec(compile(tree, path, "exec"), mod.__dict__)
    return mod


def load_tutorial_03(path):
    """Tutorial 03 (03-matrix-multiplication.py): its matmul_kernel and matmul wrapper as published."""
    return load_triton_tutorial(path, "triton_tutorial_03")


def triton_matmul_best(tut, a, b, c, check):
    """The Triton column: tutorial 03's matmul(a, b) as published (it allocates its C, fp16, each
    call; the last one checked) when the file is loaded, else nothing ("-")."""
    if tut is None:
        return None
    held = []

    def run():
        held[:] = [tut.matmul(a, b)]
    return best_of([("triton", run)], lambda: check(held[0]))


def attn_configs():
    return [triton.Config({"BM": bm, "BN": bn}, num_stages=s, num_warps=w)
            for bm, bn, s, w in [(128, 64, 3, 4), (128, 64, 3, 8), (128, 128, 3, 8), (128, 32, 4, 4), (64, 64, 3, 4),
                                 (64, 32, 4, 4), (128, 64, 2, 8), (128, 128, 2, 8)]]


@triton.autotune(configs=attn_configs(), key=["S", "D", "CAUSAL"])
@triton.jit
def tl_attn_kernel(Q, K, V, O, scale, S, D: tl.constexpr, CAUSAL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    sm = tl.program_id(0)
    hz = tl.program_id(1)
    base = hz.to(tl.int64) * S * D
    rows = sm * BM + tl.arange(0, BM)
    d = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * D + d[None, :], mask=rows[:, None] < S, other=0.0)
    qk_scale = scale * 1.4426950408889634
    m_i = tl.zeros([BM], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BM], dtype=tl.float32)
    acc = tl.zeros([BM, D], dtype=tl.float32)
    hi = S
    if CAUSAL:
        hi = tl.minimum((sm + 1) * BM, S)
    for start in range(0, hi, BN):
        cols = start + tl.arange(0, BN)
        k = tl.load(K + base + cols[None, :] * D + d[:, None], mask=cols[None, :] < S, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where(cols[None, :] < S, qk, float("-inf"))
        if CAUSAL:
            qk = tl.where(rows[:, None] >= cols[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + cols[:, None] * D + d[None, :], mask=cols[:, None] < S, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(O + base + rows[:, None] * D + d[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=rows[:, None] < S)


def tl_attention(q, k, v, o, causal):
    Z, H, S, D = q.shape
    grid = lambda meta: (triton.cdiv(S, meta["BM"]), Z * H)
    return lambda: tl_attn_kernel[grid](q, k, v, o, 1.0 / math.sqrt(D), S, D=D, CAUSAL=causal)

# ---------------------------------------------------------------- timing


FLUSH = None


def flush():
    FLUSH.zero_()


def user_time(fn):
    """ms per run with launch overhead, as triton.testing.do_bench: events
    around each launch, the L2 flushed before each."""
    fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(R):
        flush()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


def graph_ms(body):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(R):
            body()
    g.replay()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        best = min(best, s.elapsed_time(e))
    return best


def kernel_time(fn):
    """ms per run without launch overhead: a graph of R (flush, run) pairs
    minus a graph of R flushes, over R."""
    fn()
    torch.cuda.synchronize()
    both = graph_ms(lambda: (flush(), fn()))
    alone = graph_ms(flush)
    return max(both - alone, 1e-6) / R


def num(x, spec):
    """x formatted, or "-" where it was not measured (NaN)."""
    return "-" if x != x else format(x, spec)


def write_report(lines, out):
    """The table on stdout, and in `out` if given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def best_of(candidates, check):
    """The fastest of several configurations (kernel time), each checked."""
    best = None
    for label, fn in candidates:
        try:
            fn()
            torch.cuda.synchronize()
            check()
            t = kernel_time(fn)
        except Exception as err:  # a configuration that does not fit: skip it, say why
            print(f"    ({label}: {str(err).splitlines()[0][:120]})", file=sys.stderr)
            continue
        if best is None or t < best[0]:
            best = (t, label, fn)
    return best


def main():
    global FLUSH
    ap = argparse.ArgumentParser()
    ap.add_argument("libblk")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["matmul", "ragged", "skinny", "attention", "attention_bwd"],
                    help="ragged: matmuls whose dimensions are no multiple of a tile (some of 16 or 8); skinny: M "
                         "from 1 to 256 against N = K = 4096 and 8192, with matmul_splitk.blk")
    ap.add_argument("--profile", action="store_true",
                    help="run blkc's matmul (4096^3, 128x256x64, 8 warps) and attention (S=4096, D=128, 128x128, "
                         "8 warps; D=64, 64x64, 4 warps) once each, for ncu")
    ap.add_argument("--tutorial", help="Triton's python/tutorials/03-matrix-multiplication.py: the matmul tables' "
                                       "Triton column (without it the column is '-')")
    ap.add_argument("--out")
    ap.add_argument("--min-blocks-per-sm", type=int, default=0,
                    help="blkc's occupancy target (blk_compile_options): 0 automatic (the default), -1 none")
    ap.add_argument("--no-tma", action="store_true",
                    help="blkc copies pipelined loads by cp.async even where TMA could (blk_compile_options.no_tma)")
    ap.add_argument("--persistent", action="store_true",
                    help="also blkc's persistent builds (blk_compile_options.persistent): configs marked p")
    ap.add_argument("--no-warp-specialize", action="store_true",
                    help="no producer warpgroup for blkc's TMA loops (blk_compile_options.no_warp_specialize)")
    args = ap.parse_args()
    torch.manual_seed(0)
    FLUSH = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    blk = Blk(args.libblk, args.min_blocks_per_sm, args.no_tma, args.no_warp_specialize)
    tut = load_tutorial_03(args.tutorial)
    if args.profile:
        a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.float16) for _ in range(2))
        c = torch.empty_like(a)
        q, k, v = (torch.randn(4, 16, 4096, 128, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        o, lse = torch.empty_like(q), torch.empty(4, 16, 4096, device="cuda", dtype=torch.float32)
        q64, k64, v64 = (torch.randn(4, 32, 4096, 64, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        o64, lse64 = torch.empty_like(q64), torch.empty(4, 32, 4096, device="cuda", dtype=torch.float32)
        # the configurations the benchmark picks on the H100 (sm_90a, wgmma)
        for fn in (blk_matmul(blk, a, b, c, 128, 256, 64, 8), blk_attention(blk, q, k, v, o, lse, False, 128, 128, 8),
                   blk_attention(blk, q64, k64, v64, o64, lse64, False, 64, 64, 4)):
            fn()
        torch.cuda.synchronize()
        return
    name = torch.cuda.get_device_name()
    lines = [f"GPU: {name}; torch {torch.__version__}, triton {triton.__version__}; times in ms, "
             f"TFLOP/s from the kernel time; L2 flushed before every run", ""]
    if args.only == "skinny":
        return write_report(lines + skinny(blk, args.quick, tut), args.out)

    squares = [(n, n, n) for n in (1024, 2048, 4096, 8192)]
    shapes = [(torch.float16, s) for s in [(512, 512, 512)] + squares + [(16, 4096, 4096)]]
    shapes += [(torch.bfloat16, s) for s in squares]
    if args.quick:
        shapes = [(torch.float16, (4096, 4096, 4096))]
    if args.only == "ragged":
        # no dimension a multiple of the tiles: rows of 16 bytes' multiples (8 f16: TMA can copy them),
        # of 8 bytes (4100), and odd (4095: no 16-byte access at all)
        ragged = [(3000, 5000, 4000), (1000, 1000, 1000), (2000, 3000, 1500), (4104, 4104, 4104), (4100, 4100, 4100),
                  (4095, 4095, 4095), (8000, 6000, 2000), (520, 1000, 4000)]
        shapes = [(torch.float16, s) for s in ragged] + [(torch.bfloat16, (3000, 5000, 4000))]
    if args.only in ("attention", "attention_bwd"):
        shapes = []
    if shapes:
        lines += ["## matmul, f32 accumulation, output in the input type (row-major A, B, C)", "",
                  "| dtype | M | N | K | cuBLAS TFLOP/s | Triton TFLOP/s | blkc TFLOP/s | blkc / cuBLAS | blkc / Triton | "
                  "blkc config | cuBLAS ms kernel / user | Triton ms | blkc ms |", "|" + "---|" * 13]
    for dtype, (M, N, K) in shapes:
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        ref = torch.matmul(a, b)
        c = torch.empty_like(ref)
        # the output's rounding (half an ulp: 2^-11 f16, 2^-8 bf16, relative), twice, plus f32 sum-order error
        out_eps = 2 ** -10 if dtype == torch.float16 else 2 ** -7

        def check(c=c, ref=ref, K=K, out_eps=out_eps):
            err = (c.float() - ref.float()).abs().max().item()
            tol = out_eps * ref.float().abs().max().item() + K * 2 ** -20
            if not err <= tol:
                raise RuntimeError(f"wrong result: max error {err:.3g} > {tol:.3g}")

        flops = 2 * M * N * K
        tc = best_of([("cublas", lambda: torch.matmul(a, b, out=c))], check)
        tt = triton_matmul_best(tut, a, b, c, check)
        # (BLOCK_M, BLOCK_N, BLOCK_K, warps, ring stages: 0 as many as fit, persistent)
        cands = [(f"{bm}x{bn}x{bk} w{w}" + (f" s{s}" if s else "") + (" p" if p else ""),
                  blk_matmul(blk, a, b, c, bm, bn, bk, w, s, bool(p) or None))
                 for bm, bn, bk, w, s, p in [(128, 128, 32, 4, 0, 0), (128, 128, 32, 8, 0, 0), (128, 256, 32, 8, 0, 0),
                                             (128, 128, 64, 8, 0, 0), (128, 128, 64, 4, 0, 0), (128, 128, 64, 4, 3, 0),
                                             (128, 256, 64, 8, 0, 0), (128, 256, 64, 8, 3, 0), (128, 128, 128, 8, 0, 0),
                                             (128, 128, 128, 4, 0, 0), (64, 64, 32, 4, 0, 0), (64, 64, 64, 4, 0, 0),
                                             (64, 128, 128, 4, 0, 0),
                                             (64, 128, 32, 4, 0, 0), (64, 128, 64, 4, 0, 0), (16, 64, 64, 4, 0, 0),
                                             (128, 256, 64, 8, 0, 1), (128, 128, 64, 8, 0, 1), (128, 128, 64, 4, 0, 1)]
                 if bm <= max(M, 16) * 8 and (not p or args.persistent)]
        tb = best_of(cands, check)
        u = [user_time(t[2]) if t else float("nan") for t in (tc, tt, tb)]
        tf = [flops / (t[0] * 1e-3) / 1e12 if t else float("nan") for t in (tc, tt, tb)]
        ms = [t[0] if t else float("nan") for t in (tc, tt, tb)]
        lines.append(f"| {str(dtype)[6:]} | {M} | {N} | {K} | {num(tf[0], '.0f')} | {num(tf[1], '.0f')} | "
                     f"{num(tf[2], '.0f')} | {num(tf[2] / tf[0], '.0%')} | {num(tf[2] / tf[1], '.0%')} | "
                     f"{tb[1] if tb else '-'} | {num(ms[0], '.3f')} / {num(u[0], '.3f')} | "
                     f"{num(ms[1], '.3f')} / {num(u[1], '.3f')} | {num(ms[2], '.3f')} / {num(u[2], '.3f')} |")
        print(lines[-1], flush=True)

    cases = [(S, D, c) for D in (64, 128) for S in (4096, 16384) for c in (False, True)]
    if args.quick:
        cases = [(4096, 128, False), (4096, 128, True)]
    if args.only in ("matmul", "ragged", "attention_bwd"):
        cases = []
    if cases:
        lines += ["", "## attention forward, fp16, batch 4 (H=32 for D=64, H=16 for D=128)", "",
                  "| S | D | causal | SDPA TFLOP/s | Triton TFLOP/s | blkc TFLOP/s | blkc / SDPA | blkc / Triton | "
                  "blkc config | SDPA ms kernel / user | Triton ms | blkc ms |", "|" + "---|" * 12]
    for S, D, causal in cases:
        Z, H = 4, 32 if D == 64 else 16
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o = torch.empty_like(ref)
        lse = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)

        # right builds err at most 2.4e-4 here (attention_check.py); a miscompile that reused q's
        # registers erred 0.015-0.043 and had passed the 2e-2 this was
        def check(o=o, ref=ref):
            err = (o.float() - ref.float()).abs().max().item()
            if not err <= 2e-3:
                raise RuntimeError(f"wrong result: max error {err:.3g}")

        flops = 4 * Z * H * S * S * D / (2 if causal else 1)
        sdpa = lambda: o.copy_(torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
        ts = best_of([("sdpa", sdpa)], check)
        tt = best_of([("triton", tl_attention(q, k, v, o, causal))], check)
        cands = [(f"{bm}x{bn} w{w}" + (" p" if p else ""), blk_attention(blk, q, k, v, o, lse, causal, bm, bn, w, bool(p) or None))
                 for bm, bn, w, p in [(128, 64, 4, 0), (128, 64, 8, 0), (128, 128, 8, 0), (64, 64, 4, 0), (64, 128, 4, 0),
                                      (128, 32, 4, 0), (128, 128, 4, 0), (128, 128, 8, 1), (128, 64, 8, 1)]
                 if not p or args.persistent]
        tb = best_of(cands, check)
        u = [user_time(t[2]) if t else float("nan") for t in (ts, tt, tb)]
        tf = [flops / (t[0] * 1e-3) / 1e12 if t else float("nan") for t in (ts, tt, tb)]
        lines.append(f"| {S} | {D} | {'yes' if causal else 'no'} | {tf[0]:.0f} | {tf[1]:.0f} | {tf[2]:.0f} | "
                     f"{tf[2] / tf[0]:.0%} | {tf[2] / tf[1]:.0%} | {tb[1] if tb else '-'} | {ts[0]:.3f} / {u[0]:.3f} | {tt[0]:.3f} / {u[1]:.3f} | "
                     f"{tb[0] if tb else float('nan'):.3f} / {u[2]:.3f} |")
        print(lines[-1], flush=True)

    cases = [(4096, D, c) for D in (64, 128) for c in (False, True)]
    if args.quick:
        cases = [(4096, 128, False)]
    if args.only in ("matmul", "ragged", "attention"):
        cases = []
    if cases:
        lines += ["", "## attention backward, fp16, batch 4 (H=32 for D=64, H=16 for D=128): dQ, dK, dV from dOut",
                  "", "TFLOP/s count the 5 products of the backward (2.5 times the forward's flops), as Triton's "
                  "tutorial does; blkc recomputes Q K^T in both its kernels. PyTorch's backward (autograd through "
                  "SDPA, flash kernels) is timed with its launch overhead only: its grads are copied into the "
                  "outputs, a copy of 3 tensors included in its time.", "",
                  "| S | D | causal | SDPA bwd TFLOP/s (user) | blkc TFLOP/s (kernel / user) | blkc config | "
                  "SDPA bwd ms user | blkc ms kernel / user |", "|" + "---|" * 8]
    for S, D, causal in cases:
        Z, H = 4, 32 if D == 64 else 16
        q, k, v = (torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        do = torch.randn(Z, H, S, D, device="cuda", dtype=torch.float16)
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        out = torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
        ref = torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True)
        o = out.detach()
        # the forward's LSE in blkc's convention (log2 of the sum of exp of the scaled scores)
        s = torch.matmul(q.float(), k.float().transpose(-1, -2)) / math.sqrt(D)
        if causal:
            s = s.masked_fill(torch.ones(S, S, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
        lse = (torch.logsumexp(s, dim=-1) * 1.4426950408889634).contiguous()
        del s
        delta = torch.empty(Z, H, S, device="cuda", dtype=torch.float32)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(q), torch.empty_like(q)

        def check(ref=ref, outs=(dq, dk, dv)):
            for name, got, want in zip(("dQ", "dK", "dV"), outs, ref):
                err = (got.float() - want.float()).abs().max().item()
                if not err <= 2e-2 + 1e-2 * want.float().abs().max().item():
                    raise RuntimeError(f"wrong {name}: max error {err:.3g}")

        flops = 2.5 * 4 * Z * H * S * S * D / (2 if causal else 1)

        def sdpa_bwd(out=out, qg=qg, kg=kg, vg=vg, do=do):
            g = torch.autograd.grad(out, (qg, kg, vg), do, retain_graph=True)
            dq.copy_(g[0]), dk.copy_(g[1]), dv.copy_(g[2])
        sdpa_bwd()
        check()
        us = user_time(sdpa_bwd)
        cands = [(f"{bm}x{bn} w{w}", blk_attention_bwd(blk, q, k, v, o, do, lse, delta, dq, dk, dv, causal, bm, bn, w))
                 for bm, bn, w in [(64, 64, 4), (32, 64, 4), (64, 64, 8), (64, 128, 8), (128, 64, 8)]]
        tb = best_of(cands, check)
        ub = user_time(tb[2]) if tb else float("nan")
        tfs = flops / (us * 1e-3) / 1e12
        tfb = [flops / (t * 1e-3) / 1e12 for t in ((tb[0] if tb else float("nan")), ub)]
        lines.append(f"| {S} | {D} | {'yes' if causal else 'no'} | {tfs:.0f} | {tfb[0]:.0f} / {tfb[1]:.0f} | "
                     f"{tb[1] if tb else '-'} | {us:.3f} | {tb[0] if tb else float('nan'):.3f} / {ub:.3f} |")
        print(lines[-1], flush=True)

    write_report(lines, args.out)


if __name__ == "__main__":
    main()
