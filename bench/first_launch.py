#!/usr/bin/env python3
"""first_launch.py: how long a kernel's first launch takes, source to a
finished run, blk against Triton, in one process on one GPU: vector add,
softmax, layer norm forward, matmul and attention forward.

    CUDA_CACHE_DISABLE=1 python3 bench/first_launch.py LIBBLK_SO [--tutorials DIR] [--out FILE]

blk: one config a kernel, compiled through the runtime library. Triton: its
own published tutorial files, as a user of each calls them. --tutorials DIR
is a folder holding triton-lang/triton's python/tutorials/01-vector-add.py,
02-fused-softmax.py, 03-matrix-multiplication.py, 05-layer-norm.py and
06-fused-attention.py (the GPU machine's Triton package ships no tutorials,
so they travel with the command; DIR/SOURCES.txt names each file's commit),
each loaded as a module by dot_bench.load_triton_tutorial (the file less its
top-level expression statements: prints, test calls, benchmark.run). Without
--tutorials the Triton columns are "-". What Triton's first launch holds:
- add: loading 01 and calling its add(x, y). Loading it runs its own check
  (add on 98432 floats, the same specialization as 2^20: the compile and the
  first run are there); this is the process's first Triton kernel, so its
  time holds Triton's setup (driver, its C helpers built) too.
- softmax: 02 is loaded first, untimed (its check compiles softmax_kernel for
  1823 x 781, in a throwaway cache directory); then the module's
  softmax_kernel is a fresh triton.jit of the file's own function and
  Triton's cache a fresh directory, so the timed softmax(x) compiles from
  nothing as the file does it: warmup (compile) for the occupancy, then the
  persistent launch (8 warps, its own num_stages).
- layer norm: 05 loaded untimed (it compiles nothing at load); timed
  layer_norm(x, (N,), w, b, eps) (its LayerNorm.apply: BLOCK_SIZE 1024,
  4 warps here).
- matmul: 03 loaded untimed; timed matmul(a, b) with its autotuner's config
  list cut to blk's one config (128 x 128 x 32, 8 warps, 4 stages): one
  compile each, no benchmarking of configs (the file as published autotunes
  over 16 configs on its first call, compiling and timing each).
- attention: 06 loaded untimed; timed attention(q, k, v, False, 1/sqrt(D))
  (on sm_90 its TMA forward) with each forward kernel's autotuner cut to its
  first 128 x 64, 4-warp config, blk's blocks and warps. Z = 1: the file's
  TMA forward reads the wrong rows when a batch holds more than one sequence.

Cold for both: blk's disk cache off (BLK_CACHE_DISABLE) and Triton's in a
fresh directory; CUDA_CACHE_DISABLE=1 keeps the driver from caching blk's
PTX-to-SASS compile (Triton compiles to SASS with its own ptxas). A launch is
timed from nothing compiled to the end of the run (torch.cuda.synchronize);
then a second launch of it, for the overhead that stays (Triton: the host
function called again). The CUDA context and PyTorch are warm before the
first; the kernels run in a fixed order, blk first, and each output is
checked against PyTorch. The first, a vector add, carries each compiler's
setup in the process; then blk once more without its automatic occupancy
target (min_blocks_per_sm -1), whose second build is a second load by the
driver."""
import argparse
import math
import os
import sys
import tempfile
import time

os.environ["BLK_CACHE_DISABLE"] = "1"
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="first_launch_triton_")

import torch  # noqa: E402
import triton  # noqa: E402  (after TRITON_CACHE_DIR is set)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dot_bench as db  # noqa: E402
from dot_bench import F32, I32, PTR  # noqa: E402


class Tutorial:
    """Triton's side of one kernel: tutorial file `file` of folder `folder`, loaded by
    prep() (untimed) or by the first launch itself (load_in_first), then `call(module)`.
    fresh: names of the file's kernels that its load compiles (its own check); prep()
    loads it into a throwaway cache directory, then makes each a fresh triton.jit of the
    file's function and points Triton's cache at a fresh directory, so the first launch
    compiles from nothing."""

    def __init__(self, folder, file, call, load_in_first=False, fresh=()):
        self.path, self.name = os.path.join(folder, file), "triton_tutorial_" + file[:2]
        self.call, self.load_in_first, self.fresh = call, load_in_first, fresh
        self.mod, self.out = None, None

    def load(self):
        self.mod = db.load_triton_tutorial(self.path, self.name)

    def prep(self):
        if self.load_in_first:
            return
        if self.fresh:
            os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="first_launch_triton_load_")
        self.load()
        for kernel in self.fresh:
            setattr(self.mod, kernel, triton.jit(getattr(self.mod, kernel).fn))
        if self.fresh:
            os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="first_launch_triton_")

    def first(self):
        if self.load_in_first:
            self.load()
        self.again()

    def again(self):
        self.out = self.call(self.mod)


def timed(fn):
    """Seconds from the call to the end of its GPU work."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def cases(blk, tutorials):
    """(name, blk launch, Triton (a Tutorial, or None without --tutorials), check) per kernel,
    tensors made. check(triton_out) checks blk's output and Triton's (None: not run)."""
    dev = "cuda"
    out = []

    def tut(file, call, **kw):
        return Tutorial(tutorials, file, call, **kw) if tutorials else None

    def close(outs, ref, **tol):
        for o in outs:
            if o is not None:
                torch.testing.assert_close(o, ref, **tol)

    # vector add, the first kernel each compiles in the process: its time holds the compilers' setup
    xa = torch.randn(1 << 20, device=dev)
    za = torch.empty_like(xa)

    def blk_add():
        k = blk.kernel("add.blk", "add", ["T=f32", "BLOCK=1024"], 4)
        blk.launch(k, (xa.numel() // 1024, 1, 1), [(PTR, xa.data_ptr()), (PTR, xa.data_ptr()), (PTR, za.data_ptr()),
                                                    (I32, xa.numel())])

    out.append(("add [2^20] f32 (each compiler's first kernel)", blk_add,
                tut("01-vector-add.py", lambda m: m.add(xa, xa), load_in_first=True),
                lambda t: close((za, t), 2 * xa)))
    # softmax: 4096 rows of 1000 f32, BLOCK 1024, 4 warps
    x = torch.randn(4096, 1000, device=dev)
    ys = torch.empty_like(x)

    def blk_softmax():
        k = blk.kernel("softmax.blk", "softmax", ["T=f32", "BLOCK=1024"], 4)
        blk.launch(k, (x.shape[0], 1, 1), [(PTR, ys.data_ptr()), (PTR, x.data_ptr()), (I32, x.stride(0)),
                                           (I32, ys.stride(0)), (I32, x.shape[1])])

    ref = torch.softmax(x, 1)
    out.append(("softmax [4096, 1000] f32", blk_softmax,
                tut("02-fused-softmax.py", lambda m: m.softmax(x), fresh=("softmax_kernel",)),
                lambda t: close((ys, t), ref, atol=1e-5, rtol=1e-4)))
    # layer norm forward: 4096 rows of 1024 f16, BLOCK_SIZE 1024, 4 warps
    M, N = 4096, 1024
    xh = torch.randn(M, N, device=dev, dtype=torch.float16)
    w, b = torch.rand(N, device=dev, dtype=torch.float16), torch.rand(N, device=dev, dtype=torch.float16)
    y, mean, rstd = torch.empty_like(xh), torch.empty(M, device=dev), torch.empty(M, device=dev)

    def blk_ln():
        k = blk.kernel("layernorm.blk", "layer_norm_fwd", ["T=f16", "BLOCK_SIZE=1024"], 4)
        blk.launch(k, (M, 1, 1), [(PTR, xh.data_ptr()), (PTR, y.data_ptr()), (PTR, w.data_ptr()), (PTR, b.data_ptr()),
                                  (PTR, mean.data_ptr()), (PTR, rstd.data_ptr()), (I32, xh.stride(0)), (I32, N),
                                  (F32, 1e-5)])

    ref_ln = torch.nn.functional.layer_norm(xh.float(), (N,), w.float(), b.float(), 1e-5).half()
    out.append(("layer_norm_fwd [4096, 1024] f16", blk_ln,
                tut("05-layer-norm.py", lambda m: m.layer_norm(xh, (N,), w, b, 1e-5)),
                lambda t: close((y, t), ref_ln, atol=2e-2, rtol=1e-2)))
    # matmul: 2048^3 f16, 128 x 128 x 32 blocks, 8 warps, 4 stages, for both
    a = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    bb = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    cs = torch.empty_like(a)

    def blk_mm():
        db.blk_matmul(blk, a, bb, cs, 128, 128, 32, 8, 4)()

    ref_mm = a @ bb
    def tl_mm(m):  # the file's matmul, its autotuner's list cut to blk's config: one compile, as blk's
        m.matmul_kernel.configs = [triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32,
                                                  "GROUP_SIZE_M": 8}, num_stages=4, num_warps=8)]
        return m.matmul(a, bb)

    out.append(("matmul 2048^3 f16", blk_mm, tut("03-matrix-multiplication.py", tl_mm),
                lambda t: close((cs, t), ref_mm, atol=0.5, rtol=2e-2)))
    # attention forward: Z 1, H 64, S 1024, D 64 f16 (one sequence: tutorial 06's TMA forward is wrong for
    # more); 128 x 64 blocks, 4 warps, for both (Triton: its autotuner's first such config)
    Z, H, S, D = 1, 64, 1024, 64
    q, k, v = (torch.randn(Z, H, S, D, device=dev, dtype=torch.float16) for _ in range(3))
    os_ = torch.empty_like(q)
    lse = torch.empty(Z, H, S, device=dev)

    def blk_attn():
        db.blk_attention(blk, q, k, v, os_, lse, False, 128, 64, 4)()

    ref_attn = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    def tl_attn(m):  # the file's attention, each forward kernel's autotuner cut to its first 128 x 64, 4-warp config
        for kernel in (m._attn_fwd, m._attn_fwd_tma):
            kernel.configs = [next(c for c in kernel.configs if c.kwargs["BLOCK_M"] == 128 and c.kwargs["BLOCK_N"] == 64
                                   and c.num_warps == 4)]
        return m.attention(q, k, v, False, 1.0 / math.sqrt(D))

    out.append(("attention fwd Z1 H64 S1024 D64 f16", blk_attn, tut("06-fused-attention.py", tl_attn),
                lambda t: close((os_, t), ref_attn, atol=2e-2, rtol=1e-2)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--tutorials", help="folder of Triton's tutorial files 01, 02, 03, 05, 06 (else Triton is '-')")
    ap.add_argument("--out")
    args = ap.parse_args()
    if os.environ.get("CUDA_CACHE_DISABLE") != "1":
        sys.exit("first_launch.py: run with CUDA_CACHE_DISABLE=1 (the driver would cache blk's SASS)")
    blk = db.Blk(args.lib)
    blk_none = db.Blk(args.lib, min_blocks_per_sm=-1)  # no automatic occupancy target: one driver compile
    torch.zeros(1, device="cuda").add_(1)  # PyTorch's kernels and context warm
    name = torch.cuda.get_device_name()
    lines = [f"GPU: {name}; torch {torch.__version__}, triton {triton.__version__}; seconds: a cold first launch "
             f"(compile, load, run), the same in blk without the automatic occupancy target (which may load "
             f"the kernel twice), and a second launch", ""]
    if args.tutorials:
        sources = os.path.join(args.tutorials, "SOURCES.txt")
        lines += [f"Triton: its published tutorial files in {args.tutorials}, their host functions called as a user "
                  f"does (add: loading 01, whose own check compiles and runs add, then add(x, y); softmax: 02's "
                  f"softmax(x), its kernel fresh; layer norm: 05's layer_norm; matmul: 03's matmul(a, b), its autotuner's "
                  f"list cut to blk's one config; attention: 06's attention(q, k, v, False, scale), its autotuners "
                  f"cut to one 128 x 64, 4-warp config). Files: "
                  + ("; ".join(l.strip() for l in open(sources) if l.strip()) if os.path.exists(sources) else "-"), ""]
    else:
        lines += ["Triton: not measured (no --tutorials)", ""]
    lines += ["| kernel | blk first | Triton first | blk / Triton | blk first, no target | blk second "
              "| Triton second |", "|---|---|---|---|---|---|---|"]
    mine = cases(blk, args.tutorials)
    untargeted = cases(blk_none, None)
    for (label, blk_fn, tl, check), (_, blk_none_fn, _, _) in zip(mine, untargeted):
        t1 = t2 = None
        b1 = timed(blk_fn)
        if tl is not None:
            try:
                tl.prep()  # untimed: loads its tutorial file (except add's, whose load is its first launch)
                t1 = timed(tl.first)
            except Exception as e:  # Triton's compile errors are of several kinds: that column is "-"
                print(f"Triton {label}: {type(e).__name__}: {str(e).splitlines()[-1][:200] if str(e) else ''}",
                      file=sys.stderr, flush=True)
                tl = None
        b2 = timed(blk_fn)
        if tl is not None:
            t2 = timed(tl.again)
        check(tl.out if tl is not None else None)
        n1 = timed(blk_none_fn)
        cell = (lambda t, f: "-" if t is None else f.format(t))
        lines.append(f"| {label} | {b1:.3f} | {cell(t1, '{:.3f}')} | {cell(t1 and b1 / t1, '{:.2f}')} | {n1:.3f} | "
                     f"{b2:.4f} | {cell(t2, '{:.4f}')} |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
