"""Prints Triton's own tl.rand / tl.randint bits for the seeds and offsets that
tests/test_numeric.c pins (run on the GPU machine: python3 triton_rand_reference.py).
Output lines: seed offset rand_bits randint_bits, all in hex except seed."""
import struct
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def rand_kernel(rand_out, randint_out, seed, base, N: tl.constexpr):
    offs = base + tl.arange(0, N)
    tl.store(rand_out + tl.arange(0, N), tl.rand(seed, offs))
    tl.store(randint_out + tl.arange(0, N), tl.randint(seed, offs))


SEEDS = [123, 0, -1, -123456789, 2**40 + 5]
BASES = [0, 2**32, 2**40 + 7]  # 64-bit offsets beyond the first two

print(f"# triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
for seed in SEEDS:
    for base in BASES:
        r = torch.empty(4, dtype=torch.float32, device="cuda")
        ri = torch.empty(4, dtype=torch.int32, device="cuda")
        rand_kernel[(1,)](r, ri, seed, base, N=4)
        for i in range(4):
            rb = struct.unpack("<I", struct.pack("<f", r[i].item()))[0]
            print(f"{seed} {base + i:#x} {rb:#010x} {ri[i].item() & 0xffffffff:#010x}")
sys.stdout.flush()
