"""The Python package on a GPU with PyTorch CUDA tensors (run on the GPU
machine: BLK_LIBRARY=libblk.so.0 PYTHONPATH=python python3 tests/gpu/python_cuda.py).
Checks add and softmax against PyTorch, a launch on a side stream, the
errors for a tensor of the wrong dtype and for host memory on the GPU, and
CPU tensors on the cpu device.
Exit status 0 when every check holds."""
import os
import sys

import numpy as np
import torch

import blk

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "dsl_examples")
failures = 0


def expect(cond, what):
    global failures
    print(f"{'ok' if cond else 'FAIL':4} {what}")
    failures += not cond


print("device:", torch.cuda.get_device_name())
add = blk.compile(os.path.join(EXAMPLES, "add.blk"))["add"]  # device None: the GPU
for dtype, t in ((torch.float32, "f32"), (torch.float16, "f16")):
    n = 98432
    x, y = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
    out = torch.empty_like(x)
    add[(blk.cdiv(n, 1024),)](x, y, out, n, T=t, BLOCK=1024)
    torch.cuda.synchronize()
    expect(torch.equal(out, x + y), f"add {t}: equal to x + y (one IEEE addition per element)")

softmax = blk.compile(os.path.join(EXAMPLES, "softmax.blk")).softmax
x = torch.randn(1823, 781, device="cuda")
y = torch.empty_like(x)
softmax[(x.shape[0],)](y, x, x.stride(0), y.stride(0), x.shape[1], BLOCK=blk.next_power_of_2(x.shape[1]))
torch.cuda.synchronize()
err = (y - torch.softmax(x, dim=1)).abs().max().item()
expect(err <= 1e-6, f"softmax 1823x781 f32 within 1e-6 of torch.softmax (max error {err:.2g})")

side = torch.cuda.Stream()
x = torch.randn(4096, device="cuda")
with torch.cuda.stream(side):
    out = torch.empty_like(x)
    add[(4,)](x, x, out, 4096, BLOCK=1024)
side.synchronize()
expect(torch.equal(out, 2 * x), "a launch on a side stream (the current stream) is ordered with it")

try:
    add[(1,)](x.half(), x, x, 16, T="f32", BLOCK=1024)
    expect(False, "a float16 tensor for *f32 is refused")
except TypeError as err:
    expect("torch.float16 where the kernel takes *f32" in str(err), f"a float16 tensor for *f32: {err}")
try:  # T not given: the first *T argument's dtype (f16), so the f32 one after it is refused
    add[(1,)](x.half(), x, x, 16, BLOCK=1024)
    expect(False, "tensors of two dtypes for *T are refused")
except TypeError as err:
    expect("argument 1 ('y'): a tensor of torch.float32 where the kernel takes *f16" in str(err),
           f"tensors of two dtypes for *T: {err}")
# and T taken from the tensors, runtime arguments by keyword, a grid callable with the defaults
for dt in (torch.float16, torch.bfloat16):
    h, out = x.to(dt), torch.empty(4096, device="cuda", dtype=dt)
    add[lambda meta: (blk.cdiv(meta["n"], meta["BLOCK"]),)](h, h, out=out, n=4096)
    torch.cuda.synchronize()
    expect(torch.equal(out, h + h), f"add on {dt} tensors with T inferred, keywords and the default BLOCK")
try:
    add[(1,)](np.ones(16, np.float32), x, x, 16, BLOCK=1024)
    expect(False, "a NumPy array on the GPU is refused")
except TypeError as err:
    expect("a host array, but the module runs on the GPU" in str(err), f"a NumPy array on the GPU: {err}")

# CPU tensors on the cpu device (the interpreter): read and written through
# their NumPy views, bf16 included
add_cpu = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")["add"]
for dtype, t in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
    x = torch.randn(1000, dtype=dtype)
    out = torch.zeros_like(x)
    add_cpu[(4,)](x, x, out, 1000, T=t, BLOCK=256)
    expect(torch.equal(out, x + x), f"add {t} on CPU tensors on the cpu device: equal to x + x")
try:
    add_cpu[(4,)](x.cuda(), x, out, 1000, T="bf16", BLOCK=256)
    expect(False, "a CUDA tensor on the cpu device is refused")
except TypeError as err:
    expect("compiled for the cpu device" in str(err), f"a CUDA tensor on the cpu device: {err}")

# the hardware counters: each program's SM, and the time and cycles of a loop it runs
timers = blk.compile("""
kernel k(x: *f32, t: *i64, s: *i32, n: i32) {
    let t0 = globaltimer();
    let c0 = clock();
    var acc = 0.0;
    for i in range(0, n) {
        acc += load(x + i);
    }
    store(x + program_id(0) + n, acc);
    store(t + program_id(0) * 2, (globaltimer() - t0) as i64);
    store(t + program_id(0) * 2 + 1, (clock() - c0) as i64);
    store(s + program_id(0), smid() as i32);
}
""", name="timers.blk")["k"]
xs = torch.ones(2000 + 264, device="cuda")
ts = torch.zeros(2 * 264, dtype=torch.int64, device="cuda")
sm = torch.full((264,), -1, dtype=torch.int32, device="cuda")
timers[(264,)](xs, ts, sm, 2000)
torch.cuda.synchronize()
sms = torch.cuda.get_device_properties(0).multi_processor_count
expect(bool(((sm >= 0) & (sm < sms)).all()) and len(set(sm.tolist())) > 1,
       f"smid(): every program's SM in [0, {sms}), {len(set(sm.tolist()))} distinct")
ns, cycles = ts[0::2], ts[1::2]
expect(bool(((ns > 0) & (ns < 10**9)).all()), f"globaltimer(): a loop of 2000 loads took {ns.min().item()}-{ns.max().item()} ns")
expect(bool((cycles > 2000).all()), f"clock(): {cycles.min().item()}-{cycles.max().item()} cycles (more than one a load)")
expect(bool((xs[2000:] == 2000).all()), "the loop's sums, with the counters read around it")

# CUDA graphs: blk launches captured by torch.cuda.graph, then replayed on new inputs. Each
# specialization is launched once before the capture (it loads its code then), as with Triton.
n = 1 << 16
x, y, out = torch.randn(n, device="cuda"), torch.randn(n, device="cuda"), torch.empty(n, device="cuda")
rows = torch.randn(777, 1000, device="cuda")
srows = torch.empty_like(rows)
M = N = K = 512
a, b = torch.randn(M, K, device="cuda", dtype=torch.float16), torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
matmul = blk.compile(os.path.join(EXAMPLES, "matmul.blk")).matmul


def captured_work():
    add[(blk.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    softmax[(rows.shape[0],)](srows, rows, rows.stride(0), srows.stride(0), rows.shape[1], BLOCK=1024)
    matmul[(blk.cdiv(M, 128) * blk.cdiv(N, 128),)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0),
                                                   b.stride(1), c.stride(0), c.stride(1))


captured_work()  # loads the three kernels' code
torch.cuda.synchronize()
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    captured_work()
for replay in range(2):
    for t in (x, y, rows, a, b):
        t.copy_(torch.randn_like(t))
    for t in (out, srows, c):
        t.zero_()
    graph.replay()
    torch.cuda.synchronize()
    soft_err = (srows - torch.softmax(rows, dim=1)).abs().max().item()
    mm_err = ((c.float() - a.float() @ b.float()).abs().max() / (a.float().abs() @ b.float().abs()).max()).item()
    expect(torch.equal(out, x + y) and soft_err <= 1e-6 and mm_err <= 1e-3,
           f"CUDA graph replay {replay}: add, softmax and matmul (TMA maps captured) on new inputs "
           f"(softmax error {soft_err:.2g}, matmul error {mm_err:.2g} of sum |a||b|)")

# a first launch inside a capture: the code would load there, which a capture forbids
add2 = blk.compile(os.path.join(EXAMPLES, "add.blk"))["add"]
graph = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(graph):
        add2[(blk.cdiv(n, 512),)](x, y, out, n, BLOCK=512)
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    expect(torch.equal(out, x + y), "a first launch inside a capture loads its code and replays")
except Exception as err:  # noqa: BLE001 (what it raises is the finding)
    print(f"     first launch inside a capture: {type(err).__name__}: {err}")
    expect("capture" in str(err) and "launch it once before" in str(err),
           "a first launch inside a capture fails saying to launch it once before capturing")
torch.cuda.synchronize()

print(f"\n{failures} failure{'s' * (failures != 1)}")
sys.exit(failures != 0)
