"""blk from NumPy on the reference interpreter (no GPU needed): vector add,
softmax, dropout and a layer norm's forward and backward, each checked
against NumPy. A kernel's bounds errors would be reported with its source
line, which is what this device is for: debugging a kernel on a laptop.

    python3 dsl_examples/python/numpy_example.py     (exit 0 when all match)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blk  # noqa: E402
import layer_norm  # noqa: E402
from _common import EXAMPLES  # noqa: E402
from dropout import dropout  # noqa: E402
from softmax import softmax  # noqa: E402

rng = np.random.default_rng(0)
failures = 0


def check(name, ok, detail):
    global failures
    print(f"{'ok' if ok else 'FAIL':4} {name}: {detail}")
    failures += not ok


# vector add: one IEEE addition per element, so equal
n = 5000
x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
out = np.empty_like(x)
add = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")["add"]
add[lambda meta: (blk.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=1024)
check("add", np.array_equal(out, x + y), f"{n} elements equal to x + y")

# softmax, f32: exp and the sums round in f32: relative error well under 1e-5
x = rng.standard_normal((50, 333)).astype(np.float32)
ref = np.exp(x - x.max(axis=1, keepdims=True))
ref /= ref.sum(axis=1, keepdims=True)
err = np.abs(softmax(x) - ref).max()
check("softmax", err < 1e-6, f"50x333 f32, max error {err:.2g} (bound 1e-6)")

# dropout: kept elements are x / (1 - p), the others 0; the same seed drops the same ones
x = rng.standard_normal(10000).astype(np.float32) + 3  # never 0, so a zero means dropped
a, b = dropout(x, 0.3, seed=123), dropout(x, 0.3, seed=123)
kept = a != 0
check("dropout", np.array_equal(a, b) and np.allclose(a[kept], x[kept] / 0.7, rtol=1e-6)
      and abs(kept.mean() - 0.7) < 0.02, f"keep fraction {kept.mean():.3f} (p = 0.3), same seed same mask")

# layer norm forward and backward, f32, against float64 NumPy
m, n = 33, 200
x = rng.standard_normal((m, n)).astype(np.float32)
w, bias = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
dy = rng.standard_normal((m, n)).astype(np.float32)
yb, mean, rstd = layer_norm.forward(x, w, bias, 1e-5)
dx, dw, db = layer_norm.backward(dy, x, w, mean, rstd)
x64 = x.astype(np.float64)
mu = x64.mean(axis=1, keepdims=True)
rs = 1 / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
xhat = (x64 - mu) * rs
wdy = w * dy.astype(np.float64)
ref_dx = (wdy - xhat * (xhat * wdy).mean(axis=1, keepdims=True) - wdy.mean(axis=1, keepdims=True)) * rs
errs = {"y": np.abs(yb - (xhat * w + bias)).max(), "dx": np.abs(dx - ref_dx).max(),
        "dw": np.abs(dw - (dy * xhat).sum(axis=0)).max(), "db": np.abs(db - dy.sum(axis=0)).max()}
# f32 sums of 200 (rows) and 33 (columns) terms of size ~1-3: errors ~1e-5; bound 1e-4
check("layer_norm", max(errs.values()) < 1e-4, ", ".join(f"{k} {v:.2g}" for k, v in errs.items()) + " (bound 1e-4)")

print(f"{failures} failure{'s' * (failures != 1)}")
sys.exit(failures != 0)
