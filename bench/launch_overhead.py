"""Launch overhead from Python, beside Triton's, PyTorch's and the C API's, in
one run on one GPU: time per launch of a tiny kernel (1024 f32 additions, one
program), two ways, the launch paths taking turns within each round:
  host: BURST launches on an idle GPU, timing only the calls (not the
    synchronize after them), median of BURST_ROUNDS: what a caller waits for;
  sustained: LAUNCHES back-to-back launches then one synchronize, wall time /
    LAUNCHES, median of ROUNDS: the rate of a loop of small kernels, which the
    GPU's own pace bounds once the launch queue is full.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python:bench taskset -c 3 python3 bench/launch_overhead.py \
        [launch_overhead-binary] [--breakdown] [--wrappers [--parts] [--tutorials DIR]]

The binary is bench/launch_overhead.c (the C API and cuLaunchKernel on the
same PTX, timed the same ways). Pinning the process to one core (taskset)
steadies the numbers. Prints Markdown tables: the launch paths; with
--breakdown, the parts of blk's Python launch; with --wrappers, the example
wrappers a user calls beside Triton's tutorial functions and PyTorch's ops,
back to back, one call on an idle GPU and one after an L2 flush (--parts: the
softmax call's parts too), then cProfile of blk's. Triton's functions are its
published tutorial files' (--tutorials DIR: 02-fused-softmax.py's softmax,
05-layer-norm.py's layer_norm, loaded by dot_bench.load_triton_tutorial);
without --tutorials their rows are left out."""
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl

import blk

LAUNCHES, ROUNDS, BURST, BURST_ROUNDS, N = 20000, 7, 64, 101, 1024
HERE = os.path.dirname(os.path.abspath(__file__))


@triton.jit
def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def sustained_us(launch):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(LAUNCHES):
        launch()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / LAUNCHES * 1e6


def host_us(launch):
    for _ in range(BURST):  # after another path ran: its caches warm again, untimed
        launch()
    per = []
    for _ in range(BURST_ROUNDS):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(BURST):
            launch()
        per.append((time.perf_counter() - t0) / BURST * 1e6)
    torch.cuda.synchronize()
    return statistics.median(per)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def breakdown(add, x, out):
    """Host time of the parts of blk's Python launch, each alone (--breakdown)."""
    from blk import _args
    run = add[(1,)]
    run(x, x, out, N, BLOCK=1024)
    launch = next(iter(add._launches.values()))
    m = launch._marshal((x, x, out, N))
    packed = m.pack((x, x, out, N), launch.layout)
    stream = m.stream
    record = launch.record.pack(launch.kernel.value, stream or 0, 1, 1, 1, 4, *launch._tensor_values((x, x, out, N)))
    pydll_launch = ctypes.PyDLL(blk._lib.lib._name).blk_launch
    pydll_launch.restype, pydll_launch.argtypes = blk._lib.lib.blk_launch.restype, blk._lib.lib.blk_launch.argtypes
    parts = {
        "whole launch: add[(1,)](x, x, out, N, BLOCK=1024)": lambda: add[(1,)](x, x, out, N, BLOCK=1024),
        "Kernel.run with the grid given": lambda: add.run((1,), x, x, out, N, BLOCK=1024),
        "_Launch.launch_tensors (check, pack, blk_launch_record_run)": lambda: launch.launch_tensors((1,), (x, x, out, N)),
        "Marshal + pack alone": lambda: launch._marshal((x, x, out, N)).pack((x, x, out, N), launch.layout),
        "blk_launch through ctypes, arguments packed": lambda: blk._lib.lib.blk_launch(
            launch.kernel, 1, 1, 1, packed, 4, stream),
        "current stream (torch._C._cuda_getCurrentRawStream)": lambda: _args._current_stream(0),
        "_Launch._tensor_values alone": lambda: launch._tensor_values((x, x, out, N)),
        "blk_launch_record_run through ctypes, record packed": lambda: blk._lib.lib.blk_launch_record_run(record),
        "ctypes call of a trivial function (blk_kernel_num_args)": lambda: blk._lib.lib.blk_kernel_num_args(
            launch.kernel),
        "blk_launch through ctypes.PyDLL (the GIL kept)": lambda: pydll_launch(launch.kernel, 1, 1, 1, packed, 4, stream),
    }
    print("| part | host us per call |\n|---|---|")
    for name, f in parts.items():
        print(f"| {name} | {statistics.median(host_us(f) for _ in range(5)):.2f} |")


def wrappers():
    """Host time per call of the example wrappers a user calls (dsl_examples/python) beside Triton's
    tutorial functions and PyTorch's ops, on small inputs where the host is what a caller waits for
    (--wrappers), then where blk's time goes (cProfile)."""
    import cProfile
    import pstats
    sys.path.insert(0, os.path.join(HERE, "..", "dsl_examples", "python"))
    import layer_norm as blk_layer_norm
    import softmax as blk_softmax
    from dot_bench import load_triton_tutorial
    folder = sys.argv[sys.argv.index("--tutorials") + 1] if "--tutorials" in sys.argv else None
    t02 = folder and load_triton_tutorial(os.path.join(folder, "02-fused-softmax.py"), "triton_tutorial_02")
    t05 = folder and load_triton_tutorial(os.path.join(folder, "05-layer-norm.py"), "triton_tutorial_05")
    x = torch.randn(4096, 256, device="cuda")
    h = (-2.3 + 0.5 * torch.randn(4096, 1024, device="cuda")).half()
    w, b = torch.rand(1024, device="cuda").half(), torch.rand(1024, device="cuda").half()
    calls = {
        "softmax 4096x256 f32: blk (dsl_examples/python/softmax.py)": lambda: blk_softmax.softmax(x),
        "softmax 4096x256 f32: Triton tutorial 02": t02 and (lambda: t02.softmax(x)),
        "softmax 4096x256 f32: torch.softmax": lambda: torch.softmax(x, -1),
        "layer norm 4096x1024 f16: blk (dsl_examples/python/layer_norm.py)": lambda: blk_layer_norm.forward(
            h, w, b, 1e-5),
        "layer norm 4096x1024 f16: Triton tutorial 05": t05 and (lambda: t05.layer_norm(h, (1024,), w, b, 1e-5)),
        "layer norm 4096x1024 f16: F.layer_norm": lambda: torch.nn.functional.layer_norm(h, (1024,), w, b, 1e-5),
    }
    if "--parts" in sys.argv:  # the softmax call's parts, to see which one a flush slows
        rows_out = torch.empty_like(x)
        blk_softmax.softmax(x)
        tuned = blk_softmax._tuned[blk_softmax.module("softmax.blk", x)]
        kernel = tuned.kernel
        args = (rows_out, x, 256, 256, 256)
        consts = dict(T="f32", BLOCK=256, **tuned.best_config.all())
        kernel[(4096,)](*args, **consts)
        launch = next(iter(kernel._launches.values()))
        record = launch.record.pack(launch.kernel.value, 0, 4096, 1, 1, 5, *launch._tensor_values(args))
        calls.update({
            "softmax parts: torch.empty_like": lambda: torch.empty_like(x),
            "softmax parts: autotuned kernel[grid](...)": lambda: tuned[(4096,)](*args, T="f32", BLOCK=256),
            "softmax parts: kernel[grid](...) with the config": lambda: kernel[(4096,)](*args, **consts),
            "softmax parts: blk_launch_record_run, record packed": lambda: blk._lib.lib.blk_launch_record_run(record),
            # tutorial 02's kernel, a program a row (its softmax() launches fewer, persistent)
            "softmax parts: Triton's kernel[grid](...)": t02 and (lambda: t02.softmax_kernel[(4096,)](
                rows_out, x, 256, 256, 4096, 256, num_warps=4, BLOCK_SIZE=256, num_stages=2)),
            "softmax parts: empty_like, then the autotuned kernel[grid](...)": lambda: tuned[(4096,)](
                torch.empty_like(x), x, 256, 256, 256, T="f32", BLOCK=256),
            "softmax parts: empty_like, then kernel[grid](...) with the config": lambda: kernel[(4096,)](
                torch.empty_like(x), x, 256, 256, 256, **consts),
            "softmax parts: empty_like, then Triton's kernel[grid](...)": t02 and (lambda: t02.softmax_kernel[(4096,)](
                torch.empty_like(x), x, 256, 256, 4096, 256, num_warps=4, BLOCK_SIZE=256, num_stages=2)),
        })
        print("softmax's config:", tuned.best_config)
    calls = {name: f for name, f in calls.items() if f}  # Triton's rows need --tutorials
    for f in calls.values():
        f()
    torch.cuda.synchronize()
    flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")

    def idle_us(f, flushed):
        """Host time of one call with the GPU idle (after a synchronize; flushed: after a 256 MiB
        memset too, as bench/side_by_side.py's user time), median of 101."""
        per = []
        for _ in range(101):
            if flushed:
                flush.zero_()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            f()
            per.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        return statistics.median(per)

    def user_us(f):
        """bench/side_by_side.py's user time: CUDA events around one call after an L2 flush with the
        GPU idle, so the host's call and the GPU's work both count; median of 51."""
        per = []
        for _ in range(51):
            flush.zero_()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            f()
            end.record()
            end.synchronize()
            per.append(start.elapsed_time(end) * 1e3)
        return statistics.median(per)

    print("| call | host us per call, back to back | one call, GPU idle | one call after an L2 flush | "
          "user time (events) |\n|---|---|---|---|---|")
    for name, f in calls.items():
        print(f"| {name} | {statistics.median(host_us(f) for _ in range(5)):.2f} | {idle_us(f, False):.2f} | "
              f"{idle_us(f, True):.2f} | {user_us(f):.2f} |")
    for name in ("softmax 4096x256 f32: blk (dsl_examples/python/softmax.py)",
                 "layer norm 4096x1024 f16: blk (dsl_examples/python/layer_norm.py)"):
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(2000):
            calls[name]()
        profile.disable()
        torch.cuda.synchronize()
        print(f"\n{name}: cProfile, 2000 calls")
        pstats.Stats(profile).sort_stats("tottime").print_stats(14)


def main():
    x = torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    add = blk.compile(os.path.join(HERE, "..", "dsl_examples", "add.blk"))["add"]
    if "--wrappers" in sys.argv:
        return wrappers()
    if "--breakdown" in sys.argv:
        return breakdown(add, x, out)
    ways = {
        "blk (Python), grid tuple": lambda: add[(1,)](x, x, out, N, BLOCK=1024),
        "blk (Python), grid callable": lambda: add[lambda m: (triton.cdiv(N, m["BLOCK"]),)](x, x, out, N, BLOCK=1024),
        "Triton 3.6 (Python), grid tuple": lambda: triton_add[(1,)](x, x, out, N, BLOCK=1024),
        "Triton 3.6 (Python), grid callable": lambda: triton_add[lambda m: (triton.cdiv(N, m["BLOCK"]),)](
            x, x, out, N, BLOCK=1024),
        "PyTorch torch.add(out=) (for scale)": lambda: torch.add(x, x, out=out),
    }
    for launch in ways.values():  # compile, load and check each once
        out.zero_()
        launch()
        torch.cuda.synchronize()
        assert torch.equal(out, x + x)
    host = {name: [] for name in ways}
    sustained = {name: [] for name in ways}
    for _ in range(ROUNDS):
        for name, launch in ways.items():
            host[name].append(host_us(launch))
            sustained[name].append(sustained_us(launch))
    rows = [(name, host[name], sustained[name]) for name in ways]
    if len(sys.argv) > 1:
        c = {}
        for _ in range(3):
            out = subprocess.run([sys.argv[1], os.path.join(HERE, "..", "dsl_examples")], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            for line in out.splitlines():
                name, value = line.split()
                c.setdefault(name, []).append(float(value))
        rows.append(("blk C API (blk_launch, bench/launch_overhead.c)", c["c_api_host"], c["c_api_sustained"]))
        rows.append(("cuLaunchKernel on the same PTX (the floor)", c["cuda_host"], c["cuda_sustained"]))
        rows.append(("cuCtxSetCurrent + cuLaunchKernel", c["cuda_set_context_host"], c["cuda_set_context_sustained"]))
    print(f"GPU: {torch.cuda.get_device_name()}; CPU: {cpu_name()}; Python {platform.python_version()}, "
          f"PyTorch {torch.__version__}, Triton {triton.__version__}")
    print(f"host: {BURST} launches on an idle GPU, calls timed; sustained: {LAUNCHES} launches back to back, then "
          f"a synchronize; median (min-max) of {ROUNDS} rounds (C: of 3 runs)\n")
    print("| launch path | host us per launch | min-max | sustained us per launch | min-max |\n|---|---|---|---|---|")
    for name, h, s in rows:
        print(f"| {name} | {statistics.median(h):.2f} | {min(h):.2f}-{max(h):.2f} | {statistics.median(s):.2f} | "
              f"{min(s):.2f}-{max(s):.2f} |")


if __name__ == "__main__":
    main()
