"""GELU (exact and tanh) and SiLU: dsl_examples/activations.blk beside
PyTorch's F.gelu / F.silu, in one run on one GPU, through the blk Python
package. For each size and dtype: the result against PyTorch's (max abs
error, in units of the output type's ulp at 1), then times in microseconds,
median of blk.testing.do_bench (CUDA events around each call, L2 flushed
before it: what a caller sees, launch included) and per call of a CUDA
graph of 50 calls (kernel time). GB/s counts one read and one write.

    BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 bench/activation_bench.py
Prints a Markdown table."""
import os

import torch
import torch.nn.functional as F

import blk

HERE = os.path.dirname(os.path.abspath(__file__))
mod = blk.compile(os.path.join(HERE, "..", "dsl_examples", "activations.blk"))
T = {torch.float32: "f32", torch.bfloat16: "bf16", torch.float16: "f16"}
BLOCK = 1024


def blk_op(name):
    def run(x, out):
        kernel = mod.silu if name == "silu" else mod.gelu
        consts = dict(T=T[x.dtype], BLOCK=BLOCK, num_warps=4)
        if name != "silu":
            consts["APPROX_TANH"] = name == "gelu_tanh"
        kernel[(blk.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), **consts)
    return run


def torch_op(name):
    def run(x, out):
        if name == "silu":
            torch.nn.functional.silu(x)
        else:
            F.gelu(x, approximate="tanh" if name == "gelu_tanh" else "none")
    return run


def graph_us(fn, x, out, calls=50):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(x, out)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn(x, out)
    return blk.testing.do_bench(lambda: g.replay()) * 1e3 / calls


def main():
    print(f"GPU: {torch.cuda.get_device_name()}; torch {torch.__version__}\n")
    print("| op | n | dtype | max err vs PyTorch (ulp of 1) | blk µs (events / graph) | PyTorch µs (events / graph) "
          "| blk GB/s (graph) | PyTorch GB/s (graph) |")
    print("|---|---|---|---|---|---|---|---|")
    torch.manual_seed(0)
    for name in ("gelu", "gelu_tanh", "silu"):
        for n in (1 << 16, 1 << 20, 1 << 24, 1 << 26):
            for dtype in (torch.float32, torch.bfloat16):
                x = torch.randn(n, device="cuda", dtype=dtype) * 3
                out = torch.empty_like(x)
                blk_op(name)(x, out)
                ref = F.silu(x.double()) if name == "silu" else \
                    F.gelu(x.double(), approximate="tanh" if name == "gelu_tanh" else "none")
                ulp1 = torch.finfo(dtype).eps
                err = ((out.double() - ref).abs().max() / ulp1).item()
                b_ev = blk.testing.do_bench(lambda: blk_op(name)(x, out)) * 1e3
                t_ev = blk.testing.do_bench(lambda: torch_op(name)(x, out)) * 1e3
                b_gr, t_gr = graph_us(blk_op(name), x, out), graph_us(torch_op(name), x, out)
                gb = 2 * n * x.element_size() / 1e9
                print(f"| {name} | 2^{n.bit_length() - 1} | {str(dtype)[6:]} | {err:.2f} | {b_ev:.1f} / {b_gr:.1f} | "
                      f"{t_ev:.1f} / {t_gr:.1f} | {gb / (b_gr * 1e-6):.0f} | {gb / (t_gr * 1e-6):.0f} |", flush=True)


if __name__ == "__main__":
    main()
