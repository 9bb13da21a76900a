"""Compares blkc's GPU outputs (written by dump_outputs) with PyTorch and Triton
on the same GPU: softmax and layer norm (forward, and dX/dW/dB from autograd)
against PyTorch, dropout's keep masks against a Triton kernel that uses
tl.rand with the same seed. Tolerances as in tests/harness/checks.c.

    dump_outputs DIR dsl_examples && python3 tests/gpu/torch_compare.py DIR
"""
import sys

import numpy as np
import torch
import triton
import triton.language as tl

DTYPES = {"f32": np.float32, "f16": np.float16}


def load(directory):
    arrays, meta = {}, {}
    with open(f"{directory}/manifest.txt") as f:
        for line in f:
            parts = line.split()
            if parts[0] == "#":
                meta[parts[1]] = parts[2:]
                continue
            name, dtype, count, path = parts
            a = np.fromfile(f"{directory}/{path}", dtype=DTYPES[dtype], count=int(count))
            arrays[name] = torch.from_numpy(a.copy()).cuda()
    return arrays, meta


@triton.jit
def triton_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=inside)


rows = []


def check(name, got, want, atol, rtol):
    got, want = got.float(), want.float()
    err = (got - want).abs()
    bound = atol + rtol * want.abs()
    ok = bool((err <= bound).all())
    rows.append((name, err.max().item(), f"abs {atol:g} + rel {rtol:g}", ok))


def main(directory):
    a, meta = load(directory)
    torch.manual_seed(0)

    M, N = map(int, meta["softmax"])
    x = a["softmax_x"].view(M, N)
    check(f"softmax f32 {M}x{N} vs torch.softmax", a["softmax_y"].view(M, N), torch.softmax(x, dim=1), 1e-7, 1e-5)

    M, N = map(int, meta["layer_norm"])
    x = a["ln_x"].view(M, N).clone().requires_grad_(True)
    w = a["ln_w"].clone().requires_grad_(True)
    b = a["ln_b"].clone().requires_grad_(True)
    y = torch.nn.functional.layer_norm(x, (N,), w, b, eps=1e-5)
    y.backward(a["ln_dy"].view(M, N))
    check(f"layer norm fwd f16 {M}x{N}: y", a["ln_y"].view(M, N), y.detach(), 1e-2, 0)
    check(f"layer norm bwd f16 {M}x{N}: dX", a["ln_dx"].view(M, N), x.grad, 1e-2, 0)
    check(f"layer norm bwd f16 {M}x{N}: dW", a["ln_dw"], w.grad, 1e-2, 2 ** -9)
    check(f"layer norm bwd f16 {M}x{N}: dB", a["ln_db"], b.grad, 1e-2, 2 ** -9)

    dropout_meta = []
    with open(f"{directory}/manifest.txt") as f:
        for line in f:
            if line.startswith("# dropout"):
                _, _, n, p, seed = line.split()
                dropout_meta.append((int(n), float(p), int(seed)))
    for i, (n, p, seed) in enumerate(dropout_meta):
        x, ours = a[f"dropout{i}_x"], a[f"dropout{i}_y"]
        theirs = torch.empty_like(x)
        triton_dropout[(triton.cdiv(n, 1024),)](x, theirs, n, p, seed, BLOCK=1024)
        same_mask = bool(((ours != 0) == (theirs != 0)).all())
        rows.append((f"dropout n={n} seed={seed}: keep mask vs Triton tl.rand", 0.0 if same_mask else 1.0,
                     "bit for bit", same_mask))
        check(f"dropout n={n} seed={seed}: values vs Triton", ours, theirs, 0, 2 ** -22)

    print(f"GPU: {torch.cuda.get_device_name()}, PyTorch {torch.__version__}, Triton {triton.__version__}\n")
    print(f"| {'comparison':<56} | {'max error':>10} | {'tolerance':<22} | result |")
    print(f"|{'-' * 58}|{'-' * 12}|{'-' * 24}|--------|")
    for name, err, tol, ok in rows:
        print(f"| {name:<56} | {err:>10.3g} | {tol:<22} | {'ok' if ok else 'WRONG':<6} |")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
