"""int8 row quantization, dequantization and row cumsum beside PyTorch in one
run on one GPU, through the blk Python package. PyTorch's quantization is
what users write: s = x.abs().amax(1) / 127; torch.round(x / s).to(int8)
(several kernels); its cumsum is torch.cumsum. Median kernel time
(blk.testing.do_bench: CUDA events, L2 flushed before each call) and GB/s
of the bytes each must move.
    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/quant_scan_bench.py
Prints a Markdown table."""
import os

import torch

import blk

EX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dsl_examples")
T = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
qm = blk.compile(os.path.join(EX, "quantize.blk"))
cm = blk.compile(os.path.join(EX, "cumsum.blk"))


CUMSUM_CONFIGS = ((512, 8), (1024, 2), (1024, 4), (2048, 2), (2048, 4))


def row(name, shape, dtype, blk_fn, torch_fn, nbytes):
    tb, tt = blk.testing.do_bench(blk_fn) * 1e3, blk.testing.do_bench(torch_fn) * 1e3
    print(f"| {name} | {shape} | {str(dtype)[6:]} | {tb:.1f} | {tt:.1f} | {nbytes / tb / 1e3:.0f} | "
          f"{nbytes / tt / 1e3:.0f} |", flush=True)


def torch_quantize(x):
    s = x.float().abs().amax(1) / 127
    return torch.round(x.float() / s[:, None]).to(torch.int8), s


def main():
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}\n")
    print("| kernel | shape | dtype | blk µs | PyTorch µs | blk GB/s | PyTorch GB/s |")
    print("|---|---|---|---|---|---|---|")
    for m, n, dtype in ((4096, 4096, torch.float16), (8192, 8192, torch.bfloat16), (4096, 14336, torch.float16)):
        x = torch.randn(m, n, device="cuda", dtype=dtype)
        q, s, y = torch.empty(m, n, dtype=torch.int8, device="cuda"), torch.empty(m, device="cuda"), torch.empty_like(x)
        blk_q = lambda: qm.quantize_rows[(m,)](x, q, s, n, n, T=T[dtype], BLOCK=4096, num_warps=8)
        row("quantize (int8, absmax rows)", f"{m}x{n}", dtype, blk_q, lambda: torch_quantize(x),
            2 * x.numel() * x.element_size() + x.numel())
        blk_q()
        tq, ts = torch_quantize(x)
        blk_d = lambda: qm.dequantize_rows[(m,)](q, s, y, n, n, T=T[dtype], BLOCK=4096, num_warps=8)
        row("dequantize", f"{m}x{n}", dtype, blk_d, lambda: (tq.float() * ts[:, None]).to(dtype),
            x.numel() * (1 + x.element_size()))
    for m, n, dtype in ((4096, 4096, torch.float32), (1024, 32768, torch.float32), (8192, 2048, torch.float16)):
        x = torch.randn(m, n, device="cuda", dtype=dtype)
        y = torch.empty_like(x)
        # the scan's speed depends on BLOCK and warps (log2(BLOCK) barrier steps): the best of a few, as autotune picks
        fns = {(b, w): (lambda b=b, w=w: cm.cumsum_rows[(m,)](x, y, n, n, T=T[dtype], BLOCK=b, num_warps=w))
               for b, w in CUMSUM_CONFIGS}
        best = min(fns, key=lambda c: blk.testing.do_bench(fns[c]))
        row(f"cumsum (rows), BLOCK={best[0]} warps={best[1]}", f"{m}x{n}", dtype, fns[best], lambda: torch.cumsum(x, 1),
            2 * x.numel() * x.element_size())


if __name__ == "__main__":
    main()
