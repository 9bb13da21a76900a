"""Launch overhead from Python, beside Triton's and the C API's, in one run on
one GPU: host time per launch of a tiny kernel (1024 f32 additions, one
program), LAUNCHES back-to-back launches then one synchronize, wall time /
LAUNCHES, median of ROUNDS, the ways taking turns within each round.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/launch_overhead.py [launch_overhead-binary]

The binary is bench/launch_overhead.c (the C API, timed the same way). The
kernel's own time is about 2 us, so a launch path slower than that is what a
loop of small kernels waits for. Prints a Markdown table."""
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

LAUNCHES, ROUNDS, N = 20000, 7, 1024
HERE = os.path.dirname(os.path.abspath(__file__))


@triton.jit
def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def per_launch_us(launch):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(LAUNCHES):
        launch()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / LAUNCHES * 1e6


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    x = torch.randn(N, device="cuda")
    out = torch.empty_like(x)
    add = blk.compile(os.path.join(HERE, "..", "dsl_examples", "add.blk"))["add"]
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
    times = {name: [] for name in ways}
    for _ in range(ROUNDS):
        for name, launch in ways.items():
            times[name].append(per_launch_us(launch))
    rows = [(name, statistics.median(t), min(t), max(t)) for name, t in times.items()]
    if len(sys.argv) > 1:
        c = [float(subprocess.run([sys.argv[1], os.path.join(HERE, "..", "dsl_examples")], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.split()[1]) for _ in range(3)]
        rows.append(("blk C API (blk_launch, bench/launch_overhead.c)", statistics.median(c), min(c), max(c)))
    print(f"GPU: {torch.cuda.get_device_name()}; CPU: {cpu_name()}; Python {platform.python_version()}, "
          f"PyTorch {torch.__version__}, Triton {triton.__version__}")
    print(f"{LAUNCHES} launches back to back, then a synchronize; median (min-max) of {ROUNDS} rounds\n")
    print("| launch path | us per launch | min-max |\n|---|---|---|")
    for name, med, lo, hi in rows:
        print(f"| {name} | {med:.2f} | {lo:.2f}-{hi:.2f} |")


if __name__ == "__main__":
    main()
