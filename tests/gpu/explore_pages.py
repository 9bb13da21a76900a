"""kernel.explore on the GPU machine, after real launches: the page of the build each launch ran,
with the SASS and ptxas's resources from the CUDA toolkit installed there (run there:
BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 tests/gpu/explore_pages.py [OUT_DIR]).
Checks, for softmax and a 1024^3 f16 matmul: the launch is right against PyTorch; its page shows
that launch's specialization (the matmul's wgmma, its SASS HGMMA tied to the dot's source line),
the SASS column from nvdisasm with every instruction tied to a source line (or its kernel's
first ones), and the chart of programs an SM with its limit. Exit status 0 when all hold."""
import os
import re
import shutil
import sys

import torch

import blk

HERE = os.path.dirname(__file__)
EXAMPLES = os.path.join(HERE, "..", "..", "dsl_examples")
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
failures = 0


def expect(cond, what):
    global failures
    print(f"{'ok' if cond else 'FAIL':4} {what}")
    failures += not cond


def line_of(path, text):
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def check_page(name, page, kernel):
    with open(os.path.join(OUT, name + ".html"), "w") as f:
        f.write(page)
    has_disassembler = shutil.which("nvdisasm") or os.access("/usr/local/cuda/bin/nvdisasm", os.X_OK)
    sass = re.findall(r'<span class="x (\w+)" data-l="(\d+)"', page)
    unlinked = sum(1 for _, l in sass if l == "0")
    print(f"     {name}: {len(sass)} SASS instructions, {unlinked} in no line; "
          f"{len(re.findall(r'<span class=.i ', page))} PTX instructions")
    expect(has_disassembler, "nvdisasm is installed here (the check is of its SASS)")
    expect("<h2>SASS (nvdisasm)</h2>" in page and len(sass) > 20, f"{name}: the SASS column")
    expect(unlinked <= 8, f"{name}: SASS instructions tied to source lines ({unlinked} in no line)")
    chart = re.search(kernel + r": (\d+) programs? an SM on sm_90a \(limit: ([a-z ]+)\)", page)
    expect(chart is not None, f"{name}: the chart ({chart.group(0) if chart else 'missing'})")
    return sass


print("device:", torch.cuda.get_device_name())
softmax = blk.compile(os.path.join(EXAMPLES, "softmax.blk")).softmax
x = torch.randn(1823, 781, device="cuda")
y = torch.empty_like(x)
args = (y, x, x.stride(0), y.stride(0), x.shape[1])
softmax[(x.shape[0],)](*args, BLOCK=1024)
torch.cuda.synchronize()
expect((y - torch.softmax(x, dim=1)).abs().max().item() < 1e-6, "softmax: equal to PyTorch's within 1e-6")
softmax.explore(os.path.join(OUT, "softmax_launch.html"), *args, BLOCK=1024)
with open(os.path.join(OUT, "softmax_launch.html")) as f:
    check_page("softmax", f.read(), "softmax")

matmul_path = os.path.join(EXAMPLES, "matmul.blk")
matmul = blk.compile(matmul_path).matmul
n = 1024
a, b = (torch.randn(n, n, device="cuda", dtype=torch.float16) for _ in range(2))
c = torch.empty_like(a)
margs = (a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
consts = dict(T="f16", BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8)
matmul[(blk.cdiv(n, 128) * blk.cdiv(n, 256),)](*margs, num_warps=8, **consts)
torch.cuda.synchronize()
err = (c.float() - a.float() @ b.float()).abs().max().item()
expect(err < 0.1, f"matmul 1024^3 f16: max error {err:.3g} against PyTorch's f32 product (< 0.1)")
page_path = matmul.explore(os.path.join(OUT, "matmul_launch.html"), *margs, num_warps=8, **consts)
with open(page_path) as f:
    page = f.read()
expect("wgmma.mma_async" in page, "matmul: the page is the launch's build (wgmma in its PTX)")
sass = check_page("matmul", page, "matmul")
dot_line = str(line_of(matmul_path, "acc = dot("))
expect(any(kind == "tc" and l == dot_line for kind, l in sass), f"matmul: HGMMA in the SASS, tied to the dot's line {dot_line}")
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
