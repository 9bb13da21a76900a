"""Issue 40's loop, check and cache controls on a GPU, against PyTorch (run on
the GPU machine: BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3
tests/gpu/language_controls.py). static_range (a constant axis per copy),
range(..., unroll = N), assume(N % 16 == 0) as a launch fact, the cache
controls (cache_modifier, eviction_policy, volatile: the same values as plain
accesses; a volatile flag another program sets ends a spin), and
device_assert: free without debug, checked with debug = True, and a failing
one in a child process with $BLK_DEBUG=1 stops the kernel with
CUDA_ERROR_ASSERT, the kernel named and the message printed.
Exit status 0 when every check holds."""
import os
import subprocess
import sys

import torch

import blk

failures = 0


def expect(cond, what):
    global failures
    print(f"{'ok' if cond else 'FAIL':4} {what}")
    failures += not cond


SOURCE = r"""
kernel axes(x: *f32, out: *f32) {
    let m = load(x + arange(0, 64)[:, None] * 64 + arange(0, 64)[None, :]);
    for ax in static_range(0, 2) {
        store(out + ax * 64 + arange(0, 64), sum(m, axis = ax));
    }
}

kernel unrolled(x: *f32, out: *f32, n: i32, const UNROLL: i32 = 4) {
    let i = program_id(0) * 256 + arange(0, 256);
    var acc = zeros([256], f32);
    for t in range(0, n, unroll = UNROLL) { acc += load(x + t * 65536 + i) * (t + 1) as f32; }
    store(out + i, acc);
}

kernel cached(x: *f32 @align(16), y: *f32 @align(16), n: i32) {
    assume(n % 16 == 0);
    let i = program_id(0) * 1024 + arange(0, 1024);
    let a = load(x + i, i < n, cache_modifier = ".cg");
    let b = load(x + i, i < n, eviction_policy = "evict_first");
    let c = load(x + i, i < n, cache_modifier = ".cv");
    store(y + i, a + 2.0 * b - c, i < n, cache_modifier = ".cs");
    store(y + n + i, a, i < n, eviction_policy = "evict_last");
}

kernel checked(x: *f32, y: *f32, n: i32) {
    let i = program_id(0) * 1024 + arange(0, 1024);
    let v = load(x + i, i < n);
    device_assert(v >= 0.0, "inputs are non-negative", i < n);
    store(y + i, sqrt(v), i < n);
}

kernel handoff(flag: *i32, out: *i32) {
    if program_id(0) == 1 {
        store(out + 1, 42);
        atomic_xchg(flag, 1, sem = "release");
    } else {
        var seen = 0;
        var spins = 0;
        while seen == 0 && spins < 100000000 {
            seen = load(flag, volatile = true);
            spins += 1;
        }
        store(out, seen);
    }
}
"""

mod = blk.compile(SOURCE)
print("device:", torch.cuda.get_device_name())

x = torch.randn(64, 64, device="cuda")
out = torch.empty(128, device="cuda")
mod.axes[(1,)](x, out)
torch.cuda.synchronize()
ref = torch.cat([x.sum(0), x.sum(1)])
expect(torch.allclose(out, ref, rtol=1e-5, atol=1e-5), f"static_range: sum over axis 0 then 1 (max err {(out - ref).abs().max().item():.2e})")

for n, unroll in ((0, 4), (7, 4), (13, 1), (16, 8)):
    xs = torch.randn(max(n, 1) * 65536, device="cuda")
    o = torch.empty(65536, device="cuda")
    mod.unrolled[(256,)](xs, o, n, UNROLL=unroll)
    torch.cuda.synchronize()
    w = torch.arange(1, n + 1, device="cuda", dtype=torch.float32)[:, None]
    r = (xs[:n * 65536].view(n, 65536) * w).sum(0) if n else torch.zeros(65536, device="cuda")
    expect(torch.allclose(o, r, rtol=1e-5, atol=1e-4), f"range(0, {n}, unroll = {unroll}) (max err {(o - r).abs().max().item():.2e})")

n = 1 << 20
xs = torch.randn(n, device="cuda")
y = torch.zeros(2 * n, device="cuda")
mod.cached[(n // 1024,)](xs, y, n)
torch.cuda.synchronize()
expect(torch.equal(y[:n], xs + 2.0 * xs - xs) and torch.equal(y[n:], xs), "cache controls: the values of plain accesses")
ptx = mod.cached.ptx(xs, y, n)
expect(all(q in ptx for q in ("ld.global.cg.v4", "L1::evict_first.v4", "ld.global.cv.v4", "st.global.cs.v4",
                              "L1::evict_last.v4")),
       "cache controls: their qualifiers in the PTX that ran, 16 bytes an access (assume's fact)")

xs = torch.rand(100000, device="cuda")
y = torch.empty_like(xs)
mod.checked[(blk.cdiv(xs.numel(), 1024),)](xs, y, xs.numel())
dbg = blk.compile(SOURCE, debug=True)
y2 = torch.empty_like(xs)
dbg.checked[(blk.cdiv(xs.numel(), 1024),)](xs, y2, xs.numel())
torch.cuda.synchronize()
# (sqrt is sqrt.approx by default, as Triton's: within 2 ulp of PyTorch's IEEE one)
expect(torch.allclose(y, torch.sqrt(xs), rtol=3e-7, atol=0) and torch.equal(y2, y),
       "device_assert that holds: the same results, debug or not")

flag = torch.zeros(1, device="cuda", dtype=torch.int32)
got = torch.zeros(2, device="cuda", dtype=torch.int32)
mod.handoff[(2,)](flag, got)
torch.cuda.synchronize()
expect(got.tolist() == [1, 42], f"volatile load: program 0 saw program 1's flag ({got.tolist()})")

child = r"""
import torch, blk, sys
src = open(sys.argv[1]).read()
x = -torch.ones(5000, device="cuda")
y = torch.empty_like(x)
k = blk.compile(src).checked
k[(5,)](x, y, 5000)
try:
    torch.cuda.synchronize()
    print("NO FAULT")
except Exception as e:
    print("FAULT:", e)
"""
with open("/tmp/language_controls.blk", "w") as f:
    f.write(SOURCE)
env = dict(os.environ, BLK_DEBUG="1")
res = subprocess.run([sys.executable, "-c", child, "/tmp/language_controls.blk"], env=env, capture_output=True,
                     text=True, timeout=300)
text = res.stdout + res.stderr
print("  child said:", " | ".join(line for line in text.splitlines() if line.strip())[:900])
expect("inputs are non-negative" in text, "BLK_DEBUG=1: the failing device_assert printed its message")
expect("CUDA_ERROR_ASSERT" in text or "device-side assert" in text, "and stopped the kernel with CUDA_ERROR_ASSERT")
sys.exit(1 if failures else 0)
