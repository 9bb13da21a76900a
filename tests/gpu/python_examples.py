"""The Python examples (dsl_examples/python) on a GPU against PyTorch, and
the package's GPU-only paths (run on the GPU machine:
BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 tests/gpu/python_examples.py).

- softmax (f32, f16, bf16; autotuned) against torch.softmax;
- dropout against Triton's tl.rand (the same mask, bit for bit) and its
  backward against the mask applied to the gradient;
- layer norm forward and backward against torch.nn.functional.layer_norm,
  and a training step of a small model with F.layer_norm replaced by blk's:
  the same loss, gradients and updated weights;
- DLPack CUDA memory, a second GPU when there is one, the autotuner's disk
  cache and do_bench.
Exit status 0 when every check holds."""
import os
import subprocess
import sys
import tempfile

import torch
import torch.nn.functional as F
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_compare import triton_dropout  # noqa: E402  (Triton's tutorial dropout, with tl.rand)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tests"))
from test_blk import DLPackOnly  # noqa: E402  (memory reachable only through __dlpack__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "dsl_examples", "python"))
import blk  # noqa: E402
import layer_norm  # noqa: E402
from dropout import dropout  # noqa: E402
from softmax import softmax  # noqa: E402

failures = 0


def expect(cond, what):
    global failures
    print(f"{'ok' if cond else 'FAIL':4} {what}", flush=True)
    failures += not cond


def max_err(a, b):
    return (a.double() - b.double()).abs().max().item()


print("device:", blk.device_name(), "| torch", torch.__version__, "| triton", triton.__version__)
torch.manual_seed(0)

# softmax: computed in f32, rounded once to the output type
for dtype, bound in ((torch.float32, 1e-6), (torch.float16, 2 ** -11), (torch.bfloat16, 2 ** -8)):
    for m, n in ((1823, 781), (4096, 4096), (7, 12000)):
        x = torch.randn(m, n, device="cuda", dtype=dtype)
        ref = torch.softmax(x.float(), dim=-1)
        err = max_err(softmax(x), ref)
        expect(err <= bound, f"softmax {m}x{n} {dtype}: max error {err:.2g} (bound {bound:.2g}: one rounding "
                             "of values <= 1)")


for n, p, seed in ((98432, 0.5, 123), (1 << 20, 0.1, 7), (1000, 0.9, 2 ** 31 - 1)):
    x = torch.randn(n, device="cuda")
    ours = dropout(x, p, seed)
    theirs = torch.empty_like(x)
    triton_dropout[(triton.cdiv(n, 1024),)](x, theirs, n, p, seed, BLOCK=1024)
    expect(torch.equal(ours, theirs), f"dropout n={n} p={p} seed={seed}: equal to Triton's tl.rand dropout")
x = torch.randn(4096, device="cuda", requires_grad=True)
y = dropout(x, 0.25, seed=5)
g = torch.randn_like(x)
y.backward(g)
keep = (y != 0).float()
expect(torch.allclose(x.grad, g * keep / 0.75, rtol=1e-6, atol=0), "dropout backward: the same mask on the gradient")

# layer norm against F.layer_norm. Tolerances: f32 math throughout for y and
# dx (f32 noise, 1e-4 for values of a few units); f16 output rounds once more
# (2^-11 relative of values up to ~8) and dW/dB add partial rows in f16 as the
# tutorial does (Triton's tutorial checks them at atol 1e-2 scaled likewise).
for dtype, tol_y, tol_w in ((torch.float32, 1e-4, 1e-3), (torch.float16, 1e-2, 0.5)):
    for m, n in ((4096, 1024), (1151, 8192), (333, 100)):
        x = (torch.randn(m, n, device="cuda", dtype=dtype) * 2 + 1).requires_grad_()
        w = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
        b = torch.randn(n, device="cuda", dtype=dtype, requires_grad=True)
        dy = torch.randn(m, n, device="cuda", dtype=dtype)
        y = layer_norm.layer_norm(x, (n,), w, b, 1e-5)
        y.backward(dy)
        ours = [y.detach(), x.grad, w.grad, b.grad]
        x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
        ref_y = F.layer_norm(x64, (n,), w64, b64, 1e-5)
        ref_y.backward(dy.double())
        refs = [ref_y.detach(), x64.grad, w64.grad, b64.grad]
        errs = [max_err(o, r) for o, r in zip(ours, refs)]
        # dW and dB sum m rows: their bound grows with the sums' size
        scale = max(1.0, refs[2].abs().max().item() / 64)
        ok = errs[0] <= tol_y and errs[1] <= tol_y * 10 and errs[2] <= tol_w * scale and errs[3] <= tol_w * scale
        expect(ok, f"layer_norm {m}x{n} {dtype}: y {errs[0]:.2g}, dx {errs[1]:.2g}, dw {errs[2]:.2g}, "
                   f"db {errs[3]:.2g} (bounds {tol_y:g}, {tol_y * 10:g}, {tol_w * scale:.3g})")


class Block(torch.nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.up, self.down = torch.nn.Linear(256, 512), torch.nn.Linear(512, 10)
        self.ln = torch.nn.LayerNorm(512)
        self.norm = norm

    def forward(self, x):
        h = torch.relu(self.up(x))
        return self.down(self.norm(h, (512,), self.ln.weight, self.ln.bias, self.ln.eps))


torch.backends.cuda.matmul.allow_tf32 = False  # the comparison is of the layer norms, not of the matmuls
models = {}
for name, norm in (("torch", F.layer_norm), ("blk", layer_norm.layer_norm)):
    torch.manual_seed(1)
    model = Block(norm).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(2)
    data, target = torch.randn(2048, 256, device="cuda"), torch.randint(0, 10, (2048,), device="cuda")
    losses = []
    for _ in range(3):  # three steps: the second and third use weights the first one updated
        opt.zero_grad()
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    models[name] = (model, losses)
(ta, t_losses), (bm, bl) = models["torch"], models["blk"]
loss_err = max(abs(a - b) for a, b in zip(t_losses, bl))
param_err = max(max_err(p, q) for p, q in zip(ta.parameters(), bm.parameters()))
expect(loss_err < 1e-5 and param_err < 1e-5, f"3 training steps, F.layer_norm replaced by blk's: losses "
       f"{', '.join(f'{v:.6f}' for v in bl)}, max loss difference {loss_err:.2g}, max weight difference "
       f"{param_err:.2g} (bound 1e-5: f32 sum order)")


add = blk.compile(os.path.join(HERE, "..", "..", "dsl_examples", "add.blk"))["add"]
x = torch.randn(5000, device="cuda")
out = torch.zeros_like(x)
add[(5,)](DLPackOnly(x), DLPackOnly(x), DLPackOnly(out), 5000, BLOCK=1024)
torch.cuda.synchronize()
expect(torch.equal(out, 2 * x), "DLPack CUDA tensors (only __dlpack__) as arguments")
try:
    add[(5,)](DLPackOnly(x.half()), x, out, 5000, BLOCK=1024)
    expect(False, "a DLPack float16 tensor for *f32 is refused")
except TypeError as err:
    expect("float16 where the kernel takes *f32" in str(err), f"a DLPack tensor of the wrong type: {err}")

if torch.cuda.device_count() > 1:
    x1 = torch.randn(5000, device="cuda:1")
    out1 = torch.zeros_like(x1)
    add[(5,)](x1, x1, out1, 5000, BLOCK=1024)
    torch.cuda.synchronize(1)
    expect(torch.equal(out1, 2 * x1), f"a tensor on cuda:1 launches on {blk.device_name('cuda', 1)}")
    try:
        add[(5,)](x1, x, out1, 5000, BLOCK=1024)
        expect(False, "tensors on two GPUs in one launch are refused")
    except TypeError as err:
        expect("all tensors of a launch must be on one device" in str(err), f"tensors on two GPUs: {err}")
else:
    print("skip a second GPU: this machine has one")

# the autotuner on the GPU: a choice, kept on disk, read by a new process
with tempfile.TemporaryDirectory() as cache:
    script = f"""
import os, sys, torch
sys.path.insert(0, {os.path.join(HERE, '..', '..', 'dsl_examples', 'python')!r})
import blk, softmax as s
x = torch.randn(4096, 2048, device="cuda")
y = s.softmax(x)
t = s._tuned[next(iter(s._tuned))]
assert torch.allclose(y, torch.softmax(x, -1), atol=1e-6)
print(t.tunings, t.best_config, sorted((str(c), round(v, 4)) for c, v in t.timings.items() if v))
"""
    env = dict(os.environ, BLK_CACHE_DIR=cache)
    first = subprocess.run([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True).stdout
    second = subprocess.run([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True).stdout
    expect(first.startswith("1 ") and second.startswith("0 ") and first.split()[1] == second.split()[1],
           f"softmax autotuned in one process ({first.strip()}), the choice read from disk in the next "
           f"({second.strip()[:40]})")

ms = blk.testing.do_bench(lambda: softmax(torch.randn(4096, 4096, device="cuda")))
expect(0 < ms < 10, f"do_bench with PyTorch's events: {ms:.3f} ms")

print(f"\n{failures} failure{'s' * (failures != 1)}")
sys.exit(failures != 0)
