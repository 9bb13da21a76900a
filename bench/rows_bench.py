"""Row kernels beside PyTorch in one run on one GPU, through the blk Python
package: RMSNorm (F.rms_norm), softmax of rows longer than a block
(torch.softmax), cross-entropy per row (F.cross_entropy, reduction="none")
and GroupNorm (F.group_norm). For each shape: the largest difference from PyTorch's
result computed in f64, then the median kernel time (blk.testing.do_bench:
CUDA events, L2 flushed before each call) and GB/s (the bytes each must move).

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/rows_bench.py
Prints a Markdown table."""
import os

import torch
import torch.nn.functional as F

import blk

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dsl_examples")
T = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
rms = blk.compile(os.path.join(EX, "rmsnorm.blk")).rms_norm_fwd
soft = blk.compile(os.path.join(EX, "softmax_online.blk")).softmax_online
ce = blk.compile(os.path.join(EX, "cross_entropy.blk")).cross_entropy_fwd
gn = blk.compile(os.path.join(EX, "groupnorm.blk")).group_norm_fwd


def row(name, shape, dtype, err, blk_fn, torch_fn, nbytes):
    tb, tt = blk.testing.do_bench(blk_fn) * 1e3, blk.testing.do_bench(torch_fn) * 1e3
    print(f"| {name} | {shape} | {str(dtype)[6:]} | {err:.2g} | {tb:.1f} | {tt:.1f} | {nbytes / tb / 1e3:.0f} | "
          f"{nbytes / tt / 1e3:.0f} |", flush=True)


def main():
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}\n")
    print("| kernel | shape | dtype | max abs diff from f64 PyTorch | blk µs | PyTorch µs | blk GB/s | PyTorch GB/s |")
    print("|---|---|---|---|---|---|---|---|")
    for m, n, dtype in ((4096, 4096, torch.float16), (4096, 8192, torch.bfloat16), (1151, 8192, torch.float32)):
        x, w = torch.randn(m, n, device="cuda", dtype=dtype), torch.rand(n, device="cuda", dtype=dtype)
        y, rstd = torch.empty_like(x), torch.empty(m, device="cuda")
        fn = lambda: rms[(m,)](x, y, w, rstd, n, n, 1e-6, T=T[dtype], BLOCK=min(blk.next_power_of_2(n), 4096),
                               num_warps=8)
        fn()
        err = (y.double() - F.rms_norm(x.double(), (n,), w.double(), 1e-6)).abs().max().item()
        row("rms_norm", f"{m}x{n}", dtype, err, fn, lambda: F.rms_norm(x, (n,), w, 1e-6), 2 * x.numel() * x.element_size())
    for m, n, dtype in ((256, 65536, torch.float32), (1024, 32768, torch.bfloat16), (64, 262144, torch.float32)):
        x = torch.randn(m, n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        fn = lambda: soft[(m,)](y, x, n, n, n, T=T[dtype], BLOCK=4096, num_warps=8)
        fn()
        err = (y.double() - torch.softmax(x.double(), -1)).abs().max().item()
        row("softmax (online)", f"{m}x{n}", dtype, err, fn, lambda: torch.softmax(x, -1), 3 * x.numel() * x.element_size())
    for m, n, dtype in ((4096, 32000, torch.float32), (8192, 50257, torch.bfloat16), (2048, 128256, torch.bfloat16)):
        x = torch.randn(m, n, device="cuda", dtype=dtype) * 2
        t = torch.randint(0, n, (m,), device="cuda", dtype=torch.int32)
        loss, lse = torch.empty(m, device="cuda"), torch.empty(m, device="cuda")
        fn = lambda: ce[(m,)](x, t, loss, lse, n, n, T=T[dtype], BLOCK=4096, num_warps=8)
        fn()
        err = (loss.double() - F.cross_entropy(x.double(), t.long(), reduction="none")).abs().max().item()
        tl = t.long()
        row("cross_entropy", f"{m}x{n}", dtype, err, fn, lambda: F.cross_entropy(x, tl, reduction="none"),
            x.numel() * x.element_size())

    for b, c, hw, g, dtype in ((32, 256, 56 * 56, 32, torch.float16), (16, 512, 28 * 28, 32, torch.bfloat16),
                               (8, 128, 128 * 128, 32, torch.float32)):
        x = torch.randn(b, c, hw, device="cuda", dtype=dtype)
        w, bias = torch.rand(c, device="cuda", dtype=dtype), torch.rand(c, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        mean, rstd = torch.empty(b * g, device="cuda"), torch.empty(b * g, device="cuda")
        fn = lambda: gn[(b * g,)](x, y, w, bias, mean, rstd, c, hw, g, 1e-5, T=T[dtype], BLOCK=4096, num_warps=8)
        fn()
        err = (y.double() - F.group_norm(x.double(), g, w.double(), bias.double(), 1e-5)).abs().max().item()
        row("group_norm", f"{b}x{c}x{hw} G={g}", dtype, err, fn, lambda: F.group_norm(x, g, w, bias, 1e-5),
            2 * x.numel() * x.element_size())


if __name__ == "__main__":
    main()
