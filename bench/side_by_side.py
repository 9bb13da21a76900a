"""blkc beside Triton 3.6 and PyTorch, in one process on one GPU, every
provider timed the same two ways:

- kernel: the GPU time of the kernels alone. Each provider's call is
  captured 20 times in a CUDA graph, each time after a 256 MiB memset that
  flushes L2; a graph of the memsets alone is timed too, and the difference
  divided by 20 is the time of one call. No host overhead counts.
- user: what a caller waits for: L2 flushed, the GPU idle, a CUDA event,
  the Python call (argument checks, launch), an event after its kernels
  finish. Median of 50.

blk runs through its Python package and the example host code in
dsl_examples/python (what a user calls); PyTorch its own ops. Triton runs
its own published tutorial files, as a user of each calls them: --tutorials
DIR is a folder holding triton-lang/triton's python/tutorials/
01-vector-add.py, 02-fused-softmax.py, 04-low-memory-dropout.py and
05-layer-norm.py, byte for byte (the GPU machine's Triton package ships no
tutorials, so the files travel with the command; DIR/SOURCES.txt names each
file's commit). Each is loaded as a module by dot_bench.load_triton_tutorial
(the file as published less its top-level expression statements: its prints,
test calls and benchmark.run; its assignments run, so each file's own small
check runs once at load, before anything here is timed). Timed: 01's
add(x, y); 02's softmax(x) (the persistent kernel, programs sized from the
GPU's occupancy, compiled through its warmup on every call as the file does);
04's seeded_dropout(x, p, seed); 05's layer_norm(x, (N,), w, b, eps) (its
LayerNorm.apply) for the forward and, for the backward, its
LayerNorm.backward(ctx, dy) called on the ctx its forward saved (dX, dW, dB
from dY; its buffers allocated and locks zeroed on every call as the file
does; no autograd engine, no .grad accumulation). Without --tutorials the
Triton columns are "-" (not measured) and dropout, whose reference is
otherwise Triton's own Philox stream (blk's rand is tl.rand bit for bit), is
checked only for its kept elements (x / (1 - p)) and the share it drops.
Every measured provider's output is checked against PyTorch's (dropout: see
above) before it is timed.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/side_by_side.py [OUT_DIR] [--tutorials DIR]
        [--only softmax,add,...]

Writes OUT_DIR/side_by_side.md (tables), OUT_DIR/side_by_side.json (every
number) and, where matplotlib is installed, OUT_DIR/side_by_side_KERNEL.png
(GB/s against size, per provider, as the tutorials plot it; also made from
the JSON by bench/plot_side_by_side.py). OUT_DIR defaults to the current
directory."""
import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "dsl_examples", "python"))
import blk  # noqa: E402
import dropout as blk_dropout  # noqa: E402
import layer_norm as blk_layer_norm  # noqa: E402
import softmax as blk_softmax  # noqa: E402
from _common import module as blk_module  # noqa: E402

# Triton's tutorial files (--tutorials DIR), by what they hold: modules once loaded, else absent
TUTORIAL_FILES = {"add": "01-vector-add.py", "softmax": "02-fused-softmax.py", "dropout": "04-low-memory-dropout.py",
                  "layer_norm": "05-layer-norm.py"}
TUT = {}

FLUSH = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")
PER_GRAPH = 20


def event_ms(run, reps):
    """Median of CUDA-event times of run() over reps calls, each after a
    flush with the GPU idle."""
    times = []
    for _ in range(reps):
        FLUSH.zero_()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def user_ms(fn):
    return event_ms(fn, 50)


def kernel_ms(fn):
    def captured(with_fn):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(PER_GRAPH):
                FLUSH.zero_()
                if with_fn:
                    fn()
        graph.replay()
        torch.cuda.synchronize()
        return graph
    work, flush = captured(True), captured(False)
    ms = (event_ms(work.replay, 10) - event_ms(flush.replay, 10)) / PER_GRAPH
    del work, flush
    return ms


def measure(fn):
    fn()  # compiles and loads, outside any timing
    torch.cuda.synchronize()
    return {"kernel_us": kernel_ms(fn) * 1e3, "user_us": user_ms(fn) * 1e3}


def max_diff(got, want):
    return max((g.float() - w.float()).abs().max().item() for g, w in zip(got, want))


class Suite:
    def __init__(self):
        self.rows = []  # dicts: kernel, size, provider, bytes, kernel_us, user_us, max_diff
        self.columns = {}  # kernel: its providers in order, those not measured (fn None) too

    def run(self, kernel, size, nbytes, reference, providers, tolerance):
        want = reference()
        for name, fn in providers:
            self.columns.setdefault(kernel, {})[name] = None
            if fn is None:
                print(f"{kernel:16} {size:>22} {name:10} not measured (no --tutorials)", flush=True)
                continue
            got = fn()
            diff = max_diff(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,))
            if not diff <= tolerance:
                raise SystemExit(f"{kernel} {size} {name}: max difference {diff} from PyTorch over {tolerance}")
            t = measure(fn)
            self.rows.append(dict(kernel=kernel, size=size, provider=name, bytes=nbytes, max_diff=diff, **t))
            print(f"{kernel:16} {size:>22} {name:10} kernel {t['kernel_us']:9.1f} us "
                  f"{nbytes / t['kernel_us'] / 1e3:6.0f} GB/s   user {t['user_us']:9.1f} us   diff {diff:.2g}",
                  flush=True)


def copy_ceiling(suite):
    """What a memory-bound kernel can reach: a device-to-device copy of 1 GiB,
    by cudaMemcpy (the copy engines) and by an elementwise kernel (the SMs:
    torch.neg, one read and one write per element); the faster is the ceiling."""
    n = 1 << 28
    src, dst = torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
    suite.run("copy", "n=2^28 f32", 2 * n * 4, lambda: src, [("memcpy", lambda: dst.copy_(src))], 0.0)
    suite.run("copy", "n=2^28 f32", 2 * n * 4, lambda: -src, [("kernel", lambda: torch.neg(src, out=dst))], 0.0)


def tutorial(key, call):
    """call(module) as a provider's function where tutorial file `key` is loaded, else None ("-")."""
    mod = TUT.get(key)
    return None if mod is None else (lambda: call(mod))


def bench_softmax(suite, m, n):
    x = torch.randn(m, n, device="cuda")
    suite.run("softmax", f"{m}x{n} f32", 2 * m * n * 4, lambda: torch.softmax(x, -1),
              [("blk", lambda: blk_softmax.softmax(x)), ("triton", tutorial("softmax", lambda t: t.softmax(x))),
               ("torch", lambda: torch.softmax(x, -1))], 1e-6)


def ln_inputs(m, n):
    x = (-2.3 + 0.5 * torch.randn(m, n, device="cuda")).half()
    w, b = torch.rand(n, device="cuda").half(), torch.rand(n, device="cuda").half()
    dy = (0.1 * torch.randn(m, n, device="cuda")).half()
    return x, w, b, dy


def bench_layer_norm_fwd(suite, m, n):
    x, w, b, _ = ln_inputs(m, n)
    suite.run("layer_norm_fwd", f"{m}x{n} f16", 2 * m * n * 2, lambda: F.layer_norm(x, (n,), w, b, 1e-5),
              [("blk", lambda: blk_layer_norm.forward(x, w, b, 1e-5)[0]),
               ("triton", tutorial("layer_norm", lambda t: t.layer_norm(x, (n,), w, b, 1e-5))),
               ("torch", lambda: F.layer_norm(x, (n,), w, b, 1e-5))], 1e-2)


def bench_layer_norm_bwd(suite, m, n):
    x, w, b, dy = ln_inputs(m, n)
    _, mean, rstd = blk_layer_norm.forward(x, w, b, 1e-5)
    mean_t, rstd_t = mean.view(m, 1), rstd.view(m, 1)
    tri_bwd = None
    if TUT.get("layer_norm") is not None:
        tut = TUT["layer_norm"]
        # the tutorial's forward, through autograd (inputs that need grad, as its test has them): its
        # ctx (y's grad_fn, alive while y is) holds what its backward reads (x, w, b, mean, rstd
        # saved; BLOCK_SIZE, num_warps)
        xg, wg, bg = (t.detach().requires_grad_() for t in (x, w, b))
        y_tri = tut.layer_norm(xg, (n,), wg, bg, 1e-5)

        def tri_bwd():
            # (dx, None, dw, db, None), as autograd gets it
            dx, _, dw, db, _ = tut.LayerNorm.backward(y_tri.grad_fn, dy)
            return dx, dw, db

    def torch_bwd():
        return torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean_t, rstd_t, w, b, [True, True, True])

    # dW and dB sum 4096 f16 products: the tutorial's test allows 1e-2 on
    # its shapes; sums of up to 4096 terms of |dy * xhat| ~ 0.3 round to
    # f16 steps of 0.0156 at |dW| ~ 20, hence the looser bound
    suite.run("layer_norm_bwd", f"{m}x{n} f16", 3 * m * n * 2, torch_bwd,
              [("blk", lambda: blk_layer_norm.backward(dy, x, w, mean, rstd)),
               ("blk lock", lambda: blk_layer_norm.backward(dy, x, w, mean, rstd, deterministic=False)),
               ("triton", tri_bwd),
               ("torch", torch_bwd)], 0.1)


def bench_add(suite, n):
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    add = blk_module("add.blk", x).add

    def blk_add():
        out = torch.empty_like(x)
        add[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out
    suite.run("add", f"n={n} f32", 3 * n * 4, lambda: x + y,
              [("blk", blk_add), ("triton", tutorial("add", lambda t: t.add(x, y))), ("torch", lambda: x + y)], 0.0)


def bench_dropout(suite, n):
    x = torch.randn(n, device="cuda")
    if TUT.get("dropout") is not None:
        # the same Philox stream: blk's rand is Triton's tl.rand, bit for bit
        want = TUT["dropout"].seeded_dropout(x, 0.5, 123)
    else:
        # no Triton to draw the stream: blk's kept elements must be x / (1 - p), and about p of them dropped
        kept = blk_dropout.dropout(x, 0.5, 123) != 0
        share = 1 - kept.float().mean().item()
        if not abs(share - 0.5) < 0.01:
            raise SystemExit(f"dropout n={n} blk: dropped {share:.4f} of the elements, p = 0.5")
        want = torch.where(kept, x / (1 - 0.5), 0.0)
    suite.run("dropout", f"n={n} f32", 2 * n * 4, lambda: want,
              [("blk", lambda: blk_dropout.dropout(x, 0.5, 123)),
               ("triton", tutorial("dropout", lambda t: t.seeded_dropout(x, 0.5, 123)))], 0.0)


def geomean(xs):
    return statistics.geometric_mean(xs) if xs else float("nan")


def triton_version():
    if not TUT:
        return "not measured (no --tutorials)"
    import triton
    return f"{triton.__version__} (its tutorial files)"


def markdown(suite, ceiling_gbs, tutorials):
    out = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton_version()}; "
           f"copy ceiling {ceiling_gbs:.0f} GB/s (the faster of cudaMemcpy and an elementwise copy kernel, 1 GiB, "
           f"kernel time)\n"]
    if tutorials:
        out.append(f"Triton: its published tutorial files in {tutorials} (" + ", ".join(TUTORIAL_FILES.values())
                   + "; commits in SOURCES.txt there), each host function called as the file has it\n")
    kernels = []
    for r in suite.rows:
        if r["kernel"] != "copy" and r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    for kernel in kernels:
        rows = [r for r in suite.rows if r["kernel"] == kernel]
        providers = list(suite.columns[kernel])  # those not measured too: "-"
        sizes = list(dict.fromkeys(r["size"] for r in rows))
        out.append(f"### {kernel}\n")
        out.append("| shape | " + " | ".join(f"{p} GB/s (kernel / user)" for p in providers) +
                   " | blk / triton (kernel) | blk of copy |")
        out.append("|---" * (len(providers) + 3) + "|")
        ratios = []
        for size in sizes:
            at = {r["provider"]: r for r in rows if r["size"] == size}
            cells = []
            for p in providers:
                r = at.get(p)
                cells.append("-" if r is None else
                             f"{r['bytes'] / r['kernel_us'] / 1e3:.0f} / {r['bytes'] / r['user_us'] / 1e3:.0f}")
            ratio = "-"
            if "triton" in at:
                ratios.append(at["triton"]["kernel_us"] / at["blk"]["kernel_us"])
                ratio = f"{ratios[-1]:.2f}"
            share = at["blk"]["bytes"] / at["blk"]["kernel_us"] / 1e3 / ceiling_gbs
            out.append(f"| {size} | " + " | ".join(cells) + f" | {ratio} | {share:.0%} |")
        mean = f"{geomean(ratios):.2f}" if ratios else "- (Triton not measured)"
        out.append(f"\nblk / triton, geometric mean over the shapes (kernel time): {mean}\n")
    return "\n".join(out)


def plot(suite, out_dir):
    try:
        import plot_side_by_side
    except ImportError as e:
        print(f"no plots: {e}")
        return
    plot_side_by_side.plot(suite.rows, out_dir, torch.cuda.get_device_name())


def main():
    args = sys.argv[1:]
    only = None
    if "--only" in args:  # --only softmax,add: those kernels (and the copy ceiling) alone
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    tutorials = None
    if "--tutorials" in args:  # --tutorials DIR: Triton's tutorial files (else its columns are "-")
        i = args.index("--tutorials")
        tutorials = args[i + 1]
        del args[i:i + 2]
    out_dir = args[0] if args else "."
    os.makedirs(out_dir, exist_ok=True)
    if tutorials is not None:
        from dot_bench import load_triton_tutorial  # imports Triton
        for key, name in TUTORIAL_FILES.items():  # each runs its own small check once, here, untimed
            TUT[key] = load_triton_tutorial(os.path.join(tutorials, name), "triton_tutorial_" + name[:2])
    torch.manual_seed(0)
    suite = Suite()
    copy_ceiling(suite)
    runs = {
        "softmax": lambda: [bench_softmax(suite, 4096, n) for n in (256, 1024, 2048, 4096, 8192, 16384, 1000, 3000,
                                                                    12345)],
        "layer_norm_fwd": lambda: [bench_layer_norm_fwd(suite, 4096, n) for n in (1024, 2048, 4096, 6144, 8192, 12288,
                                                                                  15872, 1000, 5000, 10000)],
        "layer_norm_bwd": lambda: [bench_layer_norm_bwd(suite, 4096, n) for n in (1024, 2048, 4096, 6144, 8192, 12288,
                                                                                  15872, 1000, 5000, 10000)],
        "add": lambda: [bench_add(suite, n) for n in (1 << 16, 1 << 20, 1 << 24, 1 << 26, 100000, 10000000)],
        "dropout": lambda: [bench_dropout(suite, n) for n in (1 << 20, 1 << 24, 1 << 26, 10000000)],
    }
    for name, run in runs.items():
        if only is None or name in only:
            run()
    ceiling = max(r["bytes"] / r["kernel_us"] / 1e3 for r in suite.rows if r["kernel"] == "copy")
    with open(os.path.join(out_dir, "side_by_side.json"), "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "triton": triton_version(), "triton_tutorials": tutorials, "rows": suite.rows}, f, indent=1)
    text = markdown(suite, ceiling, tutorials)
    with open(os.path.join(out_dir, "side_by_side.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    plot(suite, out_dir)


if __name__ == "__main__":
    main()
