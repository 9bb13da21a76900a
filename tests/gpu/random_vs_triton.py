"""blk's Philox family against Triton's own on the GPU, in one process: randint4x and rand4x
(every word, bit for bit), randn and randn4x (Box-Muller of those words: both compute log,
sqrt, cos and sin in f32 with their own approximations, so the largest difference is
reported and bounded), over 2^20 offsets a seed, 32- and 64-bit offsets, negative seeds.
Run on the GPU machine:
    BLK_LIBRARY=build-static/libblk.so.0 PYTHONPATH=python python3 tests/gpu/random_vs_triton.py
Exits non-zero on any difference in the words or uniforms, or a normal off by more than 1e-4
(absolute, |x| < 6)."""
import sys

import torch
import triton
import triton.language as tl

import blk

N = 1 << 20

BLK = blk.compile("""
kernel draws(w: *i32, u: *f32, n: *f32, seed: i64, base: i64, const BLOCK: i32 = 1024) {
    let i = program_id(0) * BLOCK + arange(0, BLOCK);
    let off = base + (i as i64);
    let (a, b, c, d) = randint4x(seed, off);
    store(w + i * 4, a as i32); store(w + i * 4 + 1, b as i32); store(w + i * 4 + 2, c as i32); store(w + i * 4 + 3, d as i32);
    let (u0, u1, u2, u3) = rand4x(seed, off);
    store(u + i * 4, u0); store(u + i * 4 + 1, u1); store(u + i * 4 + 2, u2); store(u + i * 4 + 3, u3);
    let (n0, n1, n2, n3) = randn4x(seed, off);
    store(n + i * 5, n0); store(n + i * 5 + 1, n1); store(n + i * 5 + 2, n2); store(n + i * 5 + 3, n3);
    store(n + i * 5 + 4, randn(seed, off));
}
""", device="cuda", name="draws.blk")["draws"]


@triton.jit
def tl_draws(w, u, n, seed, base, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    off = base + i.to(tl.int64)
    a, b, c, d = tl.randint4x(seed, off)
    tl.store(w + i * 4, a)
    tl.store(w + i * 4 + 1, b)
    tl.store(w + i * 4 + 2, c)
    tl.store(w + i * 4 + 3, d)
    u0, u1, u2, u3 = tl.rand4x(seed, off)
    tl.store(u + i * 4, u0)
    tl.store(u + i * 4 + 1, u1)
    tl.store(u + i * 4 + 2, u2)
    tl.store(u + i * 4 + 3, u3)
    n0, n1, n2, n3 = tl.randn4x(seed, off)
    tl.store(n + i * 5, n0)
    tl.store(n + i * 5 + 1, n1)
    tl.store(n + i * 5 + 2, n2)
    tl.store(n + i * 5 + 3, n3)
    tl.store(n + i * 5 + 4, tl.randn(seed, off))


def buffers():
    return (torch.empty(4 * N, dtype=torch.int32, device="cuda"), torch.empty(4 * N, dtype=torch.float32, device="cuda"),
            torch.empty(5 * N, dtype=torch.float32, device="cuda"))


print(f"# {torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}; {N} offsets a case")
print("| seed | first offset | words equal | uniforms equal | normals: largest difference | normals equal |")
print("|---|---|---|---|---|---|")
bad = 0
for seed, base in ((123, 0), (-1, 2**32 - 5), (-123456789, 2**40 + 7), (2**40 + 5, 0)):
    bw, bu, bn = buffers()
    tw, tu, tn = buffers()
    BLK[(N // 1024,)](bw, bu, bn, seed, base)
    tl_draws[(N // 1024,)](tw, tu, tn, seed, base, BLOCK=1024)
    torch.cuda.synchronize()
    words = (bw == tw).sum().item()
    unif = (bu.view(torch.int32) == tu.view(torch.int32)).sum().item()
    diff = (bn - tn).abs()
    big = (tn.abs() < 6)
    worst = diff[big].max().item()
    same = (bn.view(torch.int32) == tn.view(torch.int32)).sum().item()
    print(f"| {seed} | {base:#x} | {words}/{4 * N} | {unif}/{4 * N} | {worst:.3g} | {same}/{5 * N} |", flush=True)
    bad += words != 4 * N or unif != 4 * N or not worst <= 1e-4
sys.exit(1 if bad else 0)
