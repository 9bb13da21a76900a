"""Where a wrapper's user time goes: blk's softmax wrapper
(dsl_examples/python/softmax.py) against Triton's tutorial function at 4096 x
256 f32, in one process on one GPU.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python:bench:dsl_examples/python taskset -c 3 \
        python3 bench/wrapper_timeline.py DIR

DIR holds Triton's python/tutorials/02-fused-softmax.py (triton-lang/triton), loaded by
dot_bench.load_triton_tutorial: its softmax(x) is Triton's wrapper here.

Prints, per wrapper: the user time (CUDA events around one call after an L2
flush and a synchronize, as bench/launch_overhead.py --wrappers measures it),
the host time of that call (perf_counter around it) and of calls back to
back; then, under torch.profiler (CUPTI), the time from the driver's launch
call to the kernel's start and the kernel's duration. When the GPU finishes
the kernel before the host records the closing event, the user time is the
host's time: that is what the 2026-11-27 notebook entry found."""
import os
import statistics
import sys
import time

import torch
from torch.profiler import profile, ProfilerActivity

import softmax as blk_softmax
from dot_bench import load_triton_tutorial

tri = load_triton_tutorial(os.path.join(sys.argv[1], "02-fused-softmax.py"), "triton_tutorial_02")

x = torch.randn(4096, 256, device="cuda")
flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")
wrappers = (("blk", lambda: blk_softmax.softmax(x)), ("triton", lambda: tri.softmax(x)))


def flushed_calls(f, n):
    """(user us, host us) of n calls, each after a flush and a synchronize."""
    user, host = [], []
    for _ in range(n):
        flush.zero_()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        e.record()
        e.synchronize()
        user.append(s.elapsed_time(e) * 1000)
        host.append((t1 - t0) * 1e6)
    return user, host


for _, f in wrappers:
    for _ in range(10):
        f()  # compiled, tuned
torch.cuda.synchronize()
print("| round | wrapper | user time (median) | host time after a flush (median) | host time back to back (median) |")
print("|---|---|---|---|---|")
for rnd in range(3):
    for name, f in wrappers:
        user, host = flushed_calls(f, 40)
        torch.cuda.synchronize()
        back = []
        for _ in range(200):
            t0 = time.perf_counter()
            f()
            back.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        print(f"| {rnd} | {name} | {statistics.median(user):.1f} | {statistics.median(host):.1f} | "
              f"{statistics.median(back):.1f} |")
print()
print("| wrapper (profiled) | user time | launch call to kernel start | kernel | launch call |")
print("|---|---|---|---|---|")
for name, f in wrappers:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        user, _ = flushed_calls(f, 30)
    kernels = sorted([e for e in prof.events() if e.device_type.name == "CUDA" and "softmax" in e.name.lower()],
                     key=lambda e: e.time_range.start)
    launches = [e for e in prof.events() if e.device_type.name == "CPU" and e.name.startswith("cuLaunchKernel")]
    starts = []
    for call in launches:
        after = [k for k in kernels if k.time_range.start >= call.time_range.start]
        if after:
            starts.append(after[0].time_range.start - call.time_range.start)
    print(f"| {name} | {statistics.median(user):.1f} | {statistics.median(starts):.1f} | "
          f"{statistics.median([k.time_range.end - k.time_range.start for k in kernels]):.2f} | "
          f"{statistics.median([c.time_range.end - c.time_range.start for c in launches]):.1f} |")
