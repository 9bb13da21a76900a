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
dsl_examples/python (what a user calls); Triton runs the tutorials' kernels
and host functions (bench/triton_tutorials.py); PyTorch its own ops. Every
provider's output is checked against PyTorch's before it is timed.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/side_by_side.py [OUT_DIR] [--only softmax,add,...]

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

import triton_tutorials as tri  # noqa: E402

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

    def run(self, kernel, size, nbytes, reference, providers, tolerance):
        want = reference()
        for name, fn in providers:
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


def bench_softmax(suite, m, n):
    x = torch.randn(m, n, device="cuda")
    suite.run("softmax", f"{m}x{n} f32", 2 * m * n * 4, lambda: torch.softmax(x, -1),
              [("blk", lambda: blk_softmax.softmax(x)), ("triton", lambda: tri.softmax(x)),
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
               ("triton", lambda: tri.layer_norm_fwd(x, w, b, 1e-5)[0]),
               ("torch", lambda: F.layer_norm(x, (n,), w, b, 1e-5))], 1e-2)


def bench_layer_norm_bwd(suite, m, n):
    x, w, b, dy = ln_inputs(m, n)
    _, mean, rstd = blk_layer_norm.forward(x, w, b, 1e-5)
    _, _, _, block, warps = tri.layer_norm_fwd(x, w, b, 1e-5)
    mean_t, rstd_t = mean.view(m, 1), rstd.view(m, 1)

    def torch_bwd():
        return torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean_t, rstd_t, w, b, [True, True, True])

    # dW and dB sum 4096 f16 products: the tutorial's test allows 1e-2 on
    # its shapes; sums of up to 4096 terms of |dy * xhat| ~ 0.3 round to
    # f16 steps of 0.0156 at |dW| ~ 20, hence the looser bound
    suite.run("layer_norm_bwd", f"{m}x{n} f16", 3 * m * n * 2, torch_bwd,
              [("blk", lambda: blk_layer_norm.backward(dy, x, w, mean, rstd)),
               ("blk lock", lambda: blk_layer_norm.backward(dy, x, w, mean, rstd, deterministic=False)),
               ("triton", lambda: tri.layer_norm_bwd(dy, x, w, mean, rstd, block, warps)),
               ("torch", torch_bwd)], 0.1)


def bench_add(suite, n):
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    add = blk_module("add.blk", x).add

    def blk_add():
        out = torch.empty_like(x)
        add[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return out
    suite.run("add", f"n={n} f32", 3 * n * 4, lambda: x + y,
              [("blk", blk_add), ("triton", lambda: tri.add(x, y)), ("torch", lambda: x + y)], 0.0)


def bench_dropout(suite, n):
    x = torch.randn(n, device="cuda")
    want = tri.seeded_dropout(x, 0.5, 123)  # the same Philox stream: blk's rand is Triton's tl.rand, bit for bit
    suite.run("dropout", f"n={n} f32", 2 * n * 4, lambda: want,
              [("blk", lambda: blk_dropout.dropout(x, 0.5, 123)), ("triton", lambda: tri.seeded_dropout(x, 0.5, 123))],
              0.0)


def geomean(xs):
    return statistics.geometric_mean(xs) if xs else float("nan")


def markdown(suite, ceiling_gbs):
    out = [f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}, triton {tri.triton.__version__}; "
           f"copy ceiling {ceiling_gbs:.0f} GB/s (the faster of cudaMemcpy and an elementwise copy kernel, 1 GiB, "
           f"kernel time)\n"]
    kernels = []
    for r in suite.rows:
        if r["kernel"] != "copy" and r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    for kernel in kernels:
        rows = [r for r in suite.rows if r["kernel"] == kernel]
        providers = list(dict.fromkeys(r["provider"] for r in rows))
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
                cells.append("–" if r is None else
                             f"{r['bytes'] / r['kernel_us'] / 1e3:.0f} / {r['bytes'] / r['user_us'] / 1e3:.0f}")
            ratio = at["triton"]["kernel_us"] / at["blk"]["kernel_us"] if "triton" in at else float("nan")
            ratios.append(ratio)
            share = at["blk"]["bytes"] / at["blk"]["kernel_us"] / 1e3 / ceiling_gbs
            out.append(f"| {size} | " + " | ".join(cells) + f" | {ratio:.2f} | {share:.0%} |")
        out.append(f"\nblk / triton, geometric mean over the shapes (kernel time): {geomean(ratios):.2f}\n")
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
    out_dir = args[0] if args else "."
    os.makedirs(out_dir, exist_ok=True)
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
                   "triton": tri.triton.__version__, "rows": suite.rows}, f, indent=1)
    text = markdown(suite, ceiling)
    with open(os.path.join(out_dir, "side_by_side.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    plot(suite, out_dir)


if __name__ == "__main__":
    main()
