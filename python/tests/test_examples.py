"""The Python examples (dsl_examples/python) on the cpu device with NumPy:
the NumPy example script as a user runs it, and the drop-in functions at
other shapes and in f16. On the GPU, tests/gpu/python_examples.py checks
them against PyTorch."""
import os
import subprocess
import sys
import unittest

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "dsl_examples", "python")
sys.path.insert(0, HERE)
import layer_norm  # noqa: E402
from dropout import dropout  # noqa: E402
from softmax import softmax  # noqa: E402


class NumpyExample(unittest.TestCase):
    def test_the_script_passes(self):
        done = subprocess.run([sys.executable, os.path.join(HERE, "numpy_example.py")], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.assertEqual(done.returncode, 0, done.stdout)
        self.assertIn("0 failures", done.stdout)


class DropIns(unittest.TestCase):
    rng = np.random.default_rng(7)

    def test_softmax_on_a_3d_array_in_f16(self):
        x = self.rng.standard_normal((3, 5, 70)).astype(np.float16)
        x64 = x.astype(np.float64)
        ref = np.exp(x64 - x64.max(axis=-1, keepdims=True))
        ref /= ref.sum(axis=-1, keepdims=True)
        y = softmax(x)
        self.assertEqual((y.shape, y.dtype), (x.shape, np.float16))
        # computed in f32 and rounded once to f16: within f16's half ulp (2^-11 relative) plus f32 noise
        np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2 ** -11 + 1e-5, atol=1e-7)
        with self.assertRaises(ValueError):
            softmax(x, dim=0)

    def test_dropout_p0_is_the_identity_and_seeds_differ(self):
        x = self.rng.standard_normal(3000).astype(np.float32) + 5
        np.testing.assert_array_equal(dropout(x, 0.0, seed=1), x)
        a, b = dropout(x, 0.5, seed=1) != 0, dropout(x, 0.5, seed=2) != 0
        self.assertGreater((a != b).mean(), 0.3)  # independent masks differ in about half the places
        with self.assertRaises(ValueError):
            dropout(x, 1.0, seed=1)

    def test_layer_norm_f16_and_a_3d_input(self):
        m, n = 24, 96
        x = self.rng.standard_normal((2, m // 2, n)).astype(np.float16)
        w = self.rng.standard_normal(n).astype(np.float16)
        b = self.rng.standard_normal(n).astype(np.float16)
        y = layer_norm.layer_norm(x, (n,), w, b)
        x64 = x.astype(np.float64)
        ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5) * w + b
        # f32 math, one rounding to f16 of values up to ~8: 2^-11 * 8 = 0.004, plus f32 noise
        np.testing.assert_allclose(y.astype(np.float64), ref, atol=5e-3, rtol=0)
        with self.assertRaises(ValueError):
            layer_norm.layer_norm(x, (2, n), w, b)

    def test_layer_norm_backward_f16(self):
        m, n = 40, 130
        x = self.rng.standard_normal((m, n)).astype(np.float16)
        w = self.rng.standard_normal(n).astype(np.float16)
        dy = self.rng.standard_normal((m, n)).astype(np.float16)
        _, mean, rstd = layer_norm.forward(x, w, np.zeros(n, np.float16), 1e-5)
        for deterministic in (True, False):
            with self.subTest(deterministic=deterministic):
                self.check_layer_norm_backward(x, w, dy, mean, rstd, deterministic)

    def check_layer_norm_backward(self, x, w, dy, mean, rstd, deterministic):
        dx, dw, db = layer_norm.backward(dy, x, w, mean, rstd, deterministic=deterministic, programs=7)
        x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
        xhat = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
        wdy = w * dy64
        ref_dx = (wdy - xhat * (xhat * wdy).mean(1, keepdims=True) - wdy.mean(1, keepdims=True)) \
            / np.sqrt(x64.var(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(dx.astype(np.float64), ref_dx, atol=2e-2, rtol=0)
        # dW and dB add the rows in f16 (as the tutorial does; the deterministic version in
        # f32, then 7 partial rows in f16, within the same bound): 40 additions, each rounding
        # by at most half an ulp of a partial sum below 32 (2^-6): worst case 40 * 2^-6 = 0.625,
        # while a lost or doubled row moves some of the 130 columns by 2 or more
        np.testing.assert_allclose(dw.astype(np.float64), (dy64 * xhat).sum(0), atol=0.625, rtol=0)
        np.testing.assert_allclose(db.astype(np.float64), dy64.sum(0), atol=0.625, rtol=0)
        self.assertLess(max(np.abs(dw).max(), np.abs(db).max()), 32)  # what the bound assumes


if __name__ == "__main__":
    unittest.main()
