"""The blk package on the cpu device (the reference interpreter) with NumPy:
the examples against NumPy references, the launch's conveniences, and the
errors a user meets. Run: BLK_LIBRARY=build/libblk.so.0 PYTHONPATH=python
python3 -m unittest discover -s python/tests (CTest does)."""
import os
import unittest

import numpy as np

import blk

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "dsl_examples")


def example(name):
    return blk.compile(os.path.join(EXAMPLES, name), device="cpu")


class Examples(unittest.TestCase):
    def test_add_f32_and_f16_equal_numpy(self):
        add = example("add.blk")["add"]
        rng = np.random.default_rng(0)
        for dtype, t in ((np.float32, "f32"), (np.float16, "f16")):
            n = 1000  # not a multiple of the block: the mask matters
            x, y = (rng.standard_normal(n).astype(dtype) for _ in range(2))
            out = np.full(n, 7, dtype)
            add[(blk.cdiv(n, 256),)](x, y, out, n, T=t, BLOCK=256)
            # one IEEE addition per element, in the array's type: exact
            np.testing.assert_array_equal(out, x + y)

    def test_softmax_matches_numpy(self):
        softmax = example("softmax.blk").softmax  # attribute access too
        rng = np.random.default_rng(1)
        m, n = 37, 300
        x = rng.standard_normal((m, n)).astype(np.float32)
        y = np.zeros_like(x)
        softmax[(m,)](y, x, x.shape[1], y.shape[1], n, BLOCK=blk.next_power_of_2(n))
        ref = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        ref /= ref.sum(axis=1, keepdims=True)
        # f32 softmax: exp and the sums round in f32, relative error well below 1e-5
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)

    def test_grid_callable_and_one_array_passed_twice(self):
        add = example("add.blk")["add"]
        x = np.arange(300, dtype=np.float32)
        # x as input twice and as output: one buffer, so x doubles
        add[lambda meta: (blk.cdiv(300, meta["BLOCK"]),)](x, x, x, 300, BLOCK=128)
        np.testing.assert_array_equal(x, 2 * np.arange(300, dtype=np.float32))

    def test_each_const_combination_compiled_once(self):
        mod = example("add.blk")
        add = mod["add"]
        x = np.ones(64, np.float32)
        for _ in range(3):
            add[(1,)](x, x, np.zeros(64, np.float32), 64, BLOCK=64)
        add[(1,)](x, x, np.zeros(64, np.float32), 64, BLOCK=128)
        self.assertEqual(len(mod._compiled), 2)

    def test_source_text_signature_and_ptx(self):
        mod = blk.compile("kernel k(o: *i32, v: i64, h: f16) { store(o, (v as f32 + h as f32) as i32); }\n",
                          device="cpu")
        self.assertEqual(mod["k"].signature(), [("o", "*i32"), ("v", "i64"), ("h", "f16")])
        out = np.zeros(1, np.int32)
        mod["k"][(1,)](out, 40, 2.25)  # f16 rounds 2.25 exactly
        self.assertEqual(out[0], 42)
        self.assertIn(".entry k", mod["k"].ptx())

    def test_helpers(self):
        self.assertEqual([blk.cdiv(a, 4) for a in (0, 1, 4, 5)], [0, 1, 1, 2])
        self.assertEqual([blk.next_power_of_2(a) for a in (0, 1, 3, 64, 65)], [1, 1, 4, 64, 128])


class Errors(unittest.TestCase):
    def setUp(self):
        self.add = example("add.blk")["add"]
        self.x = np.ones(64, np.float32)

    def test_wrong_count(self):
        with self.assertRaisesRegex(TypeError, r"kernel 'add' takes 4 arguments \(x, y, out, n\), got 3"):
            self.add[(1,)](self.x, self.x, self.x)

    def test_wrong_dtype(self):
        with self.assertRaisesRegex(TypeError, r"argument 1 \('y'\): an array of float64 where the kernel takes \*f32"):
            self.add[(1,)](self.x, np.ones(64), self.x, 64)

    def test_non_contiguous(self):
        with self.assertRaisesRegex(TypeError, r"argument 2 \('out'\): a non-contiguous array"):
            self.add[(1,)](self.x, self.x, np.ones(128, np.float32)[::2], 64)

    def test_scalar_for_pointer_and_float_for_integer(self):
        with self.assertRaisesRegex(TypeError, r"argument 0 \('x'\): expects an array or tensor \(\*f32\), got int"):
            self.add[(1,)](3, self.x, self.x, 64)
        with self.assertRaisesRegex(TypeError, r"argument 3 \('n'\): expects an integer \(i32\), got float"):
            self.add[(1,)](self.x, self.x, self.x, 64.0)

    def test_out_of_range_integer_is_the_runtimes_error(self):
        with self.assertRaisesRegex(blk.BlkError, r"argument 3 \('n'\): 1099511627776 does not fit i32"):
            self.add[(1,)](self.x, self.x, self.x, 1 << 40)

    def test_out_of_bounds_is_a_kernel_fault_and_nothing_is_copied_back(self):
        out = np.full(64, 5, np.float32)
        with self.assertRaisesRegex(blk.BlkError, r"out-of-bounds load"):
            self.add[(1,)](self.x, self.x, out, 128, BLOCK=128)  # n past the arrays' ends
        np.testing.assert_array_equal(out, 5)

    def test_missing_const_and_compile_errors_name_the_line(self):
        mod = blk.compile("kernel k(x: *f32, const B: i32) {\n  store(x + arange(0, B), 1.0);\n}\n", device="cpu")
        with self.assertRaisesRegex(blk.BlkError, r"'B'"):
            mod["k"][(1,)](self.x)
        bad = blk.compile("kernel k(x: *f32) {\n  store(x, nope);\n}\n", device="cpu", name="bad.blk")
        with self.assertRaisesRegex(blk.BlkError, r"bad.blk:2:\d+: error: .*nope"):
            bad["k"][(1,)](self.x)

    def test_unknown_kernel_and_device(self):
        with self.assertRaisesRegex(blk.BlkError, r"add"):
            example("add.blk")["nope"][(1,)](self.x)
        with self.assertRaises(ValueError):
            blk.compile("kernel k() {}", device="tpu")


if __name__ == "__main__":
    unittest.main()
