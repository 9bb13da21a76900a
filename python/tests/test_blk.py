"""The blk package on the cpu device (the reference interpreter) with NumPy:
the examples against NumPy references, the launch's conveniences, and the
errors a user meets. Run: BLK_LIBRARY=build/libblk.so.0 PYTHONPATH=python
python3 -m unittest discover -s python/tests (CTest does)."""
import ctypes
import json
import os
import tempfile
import threading
import unittest
import warnings

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

    def test_a_type_const_takes_numpy_dtypes_and_a_path_object_names_the_file(self):
        import pathlib
        add = blk.compile(pathlib.Path(EXAMPLES) / "add.blk", device="cpu")["add"]
        x = np.arange(300, dtype=np.float16)
        for t in (np.float16, np.dtype("float16"), "f16"):
            out = np.zeros_like(x)
            add[(2,)](x, x, out, 300, T=t, BLOCK=256)
            np.testing.assert_array_equal(out, x + x)
        # one build for the three spellings: the same defines
        self.assertEqual(len({k[0] for k in add.module._compiled}), 1, add.module._compiled.keys())
        with self.assertRaises(blk.BlkError):  # a dtype blk has no name for is not silently a string
            add[(2,)](x, x, np.zeros_like(x), 300, T=np.complex64, BLOCK=256)

    def test_a_launch_reads_the_source_once_per_kernel_not_per_launch(self):
        # the declaration is parsed from the source text; doing it at every launch cost 57 us of a
        # 74 us launch on the GPU (docs/notebook.md, 2026-11-27)
        module = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")
        reads = []
        declaration = module._declaration
        module._declaration = lambda kernel: reads.append(kernel) or declaration(kernel)
        x = np.arange(300, dtype=np.float32)
        for launch in range(5):
            out = np.zeros_like(x)
            module["add"][(2,)](x, x, out, 300, BLOCK=256)  # T from x's dtype, looked up each time
            np.testing.assert_array_equal(out, x + x)
            module.add[(2,)](x, y=x, out=out, n=300, BLOCK=256)  # runtime arguments by keyword
        self.assertLessEqual(len(reads), 2, reads)  # the Kernel's first look, nothing per launch
        self.assertIs(module["add"], module.add)

    def test_a_grid_callable_sees_the_arguments_and_the_const_defaults(self):
        add = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")["add"]
        x = np.arange(1000, dtype=np.float32)
        out = np.zeros_like(x)
        seen = {}

        def grid(meta):
            seen.update(meta)
            return (blk.cdiv(meta["n"], meta["BLOCK"]),)  # BLOCK: add.blk's default, not given here
        add[grid](x, x, out, 1000)
        np.testing.assert_array_equal(out, x + x)
        self.assertEqual(seen["n"], 1000)
        self.assertIs(seen["x"], x)
        self.assertEqual(seen["T"], "f32")
        self.assertIsInstance(seen["BLOCK"], int)
        seen.clear()
        add[grid](x, x, out, 1000, BLOCK=128)  # a keyword wins over the default
        self.assertEqual(seen["BLOCK"], 128)

    def test_a_type_const_is_taken_from_the_arrays_when_not_given(self):
        add = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")["add"]
        for dtype in (np.float16, np.float32, np.float64):
            x = np.arange(300).astype(dtype)
            out = np.zeros_like(x)
            add[(2,)](x, x, out, 300, BLOCK=256)  # T from x's dtype, not add.blk's default f32
            np.testing.assert_array_equal(out, x + x)
        # given, it wins: f32 arrays under T=f16 are the dtype error they were
        x = np.arange(300, dtype=np.float32)
        with self.assertRaisesRegex(TypeError, r"an array of float32 where the kernel takes \*f16"):
            add[(2,)](x, x, np.zeros_like(x), 300, T="f16", BLOCK=256)

    def test_runtime_arguments_by_keyword(self):
        add = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu")["add"]
        x = np.arange(300, dtype=np.float32)
        for call in (lambda out: add[(2,)](x, x, out=out, n=300, BLOCK=256),
                     lambda out: add[(2,)](x=x, y=x, out=out, n=300, BLOCK=256),
                     lambda out: add[(2,)](n=300, out=out, y=x, x=x, BLOCK=256)):
            out = np.zeros_like(x)
            call(out)
            np.testing.assert_array_equal(out, x + x)
        with self.assertRaisesRegex(TypeError, r"argument 'x' given by position and by keyword"):
            add[(2,)](x, x, np.zeros_like(x), 300, x=x)
        with self.assertRaisesRegex(TypeError, r"argument 'out' is missing \(before 'n'\)"):
            add[(2,)](x, x, n=300)

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

    def test_grid_as_a_numpy_integer(self):
        add = example("add.blk")["add"]
        x = np.ones(300, np.float32)
        out = np.zeros(300, np.float32)
        add[np.int64(3)](x, x, out, 300, BLOCK=128)  # a grid of 3 programs, given as a NumPy integer
        np.testing.assert_array_equal(out, 2)

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

    def test_no_tma_no_warp_specialize_persistent_and_debug_are_compile_options_of_their_own(self):
        # the module's default, and per launch as num_stages is: each value its own build
        for at, option in ((4, "no_tma"), (5, "no_warp_specialize"), (6, "persistent"), (7, "debug")):
            mod = example("add.blk")
            self.assertFalse(getattr(mod, option))
            add = mod["add"]
            x = np.ones(64, np.float32)
            for value in (False, True, True):
                out = np.zeros(64, np.float32)
                add[(1,)](x, x, out, 64, BLOCK=64, **{option: value})
                np.testing.assert_array_equal(out, 2 * x)
            self.assertEqual(sorted(k[at] for k in mod._compiled), [False, True], option)
            self.assertTrue(getattr(blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu", **{option: True}),
                                    option))

    def test_the_compiler_flags_come_from_the_library(self):
        # blk.FLAGS is blk_compile_flags(): the struct the package passes is the library's, and every
        # flag is a compile option and a module attribute, with an error that lists them for a typo
        self.assertEqual(blk.FLAGS[:4], ("no_tma", "no_warp_specialize", "persistent", "debug"))
        self.assertIn("precise_math", blk.FLAGS)
        mod = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu", precise_math=True, no_fma=1)
        self.assertEqual((mod.precise_math, mod.no_fma, mod.debug), (True, True, False))
        # each flag reaches the compile: a module of each differs from the default's build in its key
        add = mod["add"]
        x = np.ones(64, np.float32)
        add[(1,)](x, x, np.zeros(64, np.float32), 64, BLOCK=64)
        add[(1,)](x, x, np.zeros(64, np.float32), 64, BLOCK=64, precise_math=False)
        self.assertEqual(sorted(k[1 + len(blk.INT_OPTIONS) + blk.FLAGS.index("precise_math")] for k in mod._compiled),
                         [False, True])
        # a precise division's PTX is div.rn, the default's div.full (through the library's struct)
        div = blk.compile("kernel d(x: *f32, y: *f32) { store(y, load(x) / load(y)); }\n", device="cpu")["d"]
        self.assertIn("div.full.f32", div.ptx())
        self.assertIn("div.rn.f32", div.ptx(precise_math=True))
        with self.assertRaisesRegex(TypeError, r"blk.compile: no option 'fast_math' \(the compiler's options: "
                                               r"num_warps, num_stages, min_blocks_per_sm, no_tma, "):
            blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu", fast_math=True)
        # the integer options too (blk_compile_int_options): module defaults, launch consts, the key
        self.assertEqual(blk.INT_OPTIONS[:3], ("num_warps", "num_stages", "min_blocks_per_sm"))
        mod = blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu", num_warps=2)
        self.assertEqual((mod.num_warps, mod.num_stages, mod.min_blocks_per_sm), (2, 0, 0))
        self.assertIn(".maxntid 64, 1, 1", mod["add"].ptx(BLOCK=64))
        self.assertIn(".maxntid 128, 1, 1", mod["add"].ptx(BLOCK=64, num_warps=4))
        with self.assertRaisesRegex(blk.BlkError, r"num_stages must be 0 or 2 to 8, got 9"):
            mod["add"].ptx(BLOCK=64, num_stages=9)
        with self.assertRaisesRegex(blk.BlkError, r"min_blocks_per_sm must be -1 \(none\), 0 \(the default\) or "
                                                  r"1 to 32, got -2"):
            mod["add"].ptx(BLOCK=64, min_blocks_per_sm=-2)

    def test_source_text_signature_and_ptx(self):
        mod = blk.compile("kernel k(o: *i32, v: i64, h: f16) { store(o, (v as f32 + h as f32) as i32); }\n",
                          device="cpu")
        self.assertEqual(mod["k"].signature(), [("o", "*i32"), ("v", "i64"), ("h", "f16")])
        out = np.zeros(1, np.int32)
        mod["k"][(1,)](out, 40, 2.25)  # f16 rounds 2.25 exactly
        self.assertEqual(out[0], 42)
        self.assertIn(".entry k", mod["k"].ptx())

    def test_ptx_of_a_launch_is_its_specialization_with_its_contract(self):
        add = example("add.blk")["add"]
        general = add.ptx(BLOCK=256)
        self.assertIn("// kernel add\n", general)
        self.assertIn("block: 32 threads (1 warp), 1, 1", general)
        x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
        tidy = add.ptx(x, x, out, 1024, BLOCK=256)   # n a multiple of 16: that launch's build knows it
        ragged = add.ptx(x, x, out, 1000, BLOCK=256)
        self.assertIn("3 n            i32    .u32  a multiple of 16 (compiled assuming it)", tidy)
        self.assertNotIn("a multiple of 16", ragged)
        self.assertIn("ld.global.v4.b32", tidy)
        self.assertNotEqual(tidy, ragged)
        np.testing.assert_array_equal(out, 0)  # nothing ran
        with self.assertRaisesRegex(blk.BlkError, "argument 3 .'n'.: 2147483648 does not fit i32|does not fit"):
            add.ptx(x, x, out, 2**31, BLOCK=256)

    def test_plan_of_a_kernel_and_of_a_launch(self):
        add = example("add.blk")["add"]
        general = add.plan(BLOCK=256)
        self.assertIn("kernel add on sm_90: ", general)
        self.assertIn("facts: none", general)
        x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
        tidy = add.plan(x, x, out, 1024, BLOCK=256)  # n a multiple of 16: 16-byte accesses
        self.assertIn("n%16", tidy)
        self.assertRegex(tidy, r"load line \d+ \[256\] f32: 16 bytes \(4 elements\) an access")
        self.assertNotRegex(general, r"16 bytes \(4 elements\)")
        np.testing.assert_array_equal(out, 0)  # nothing ran
        with self.assertRaisesRegex(TypeError, "takes 4 arguments"):
            add.plan(x, x, BLOCK=256)

    def test_explore_writes_the_page_of_a_kernel_and_of_a_launch(self):
        add = example("add.blk")["add"]
        with tempfile.TemporaryDirectory() as d:
            general = add.explore(os.path.join(d, "add.html"), BLOCK=256)
            with open(general) as f:
                page = f.read()
            self.assertTrue(page.startswith("<!DOCTYPE html>"))
            self.assertIn("facts: none", page)
            self.assertRegex(page, r'<span class="i mem" data-l="\d+"')  # the loads and stores, tied to lines
            x, out = np.ones(1000, np.float32), np.zeros(1000, np.float32)
            with open(add.explore(os.path.join(d, "tidy.html"), x, x, out, 1024, BLOCK=256)) as f:
                tidy = f.read()
            self.assertIn("n%16", tidy)  # the launch's specialization: its facts and its PTX
            self.assertIn("ld.global.v4.b32", tidy)
            self.assertNotIn("ld.global.v4.b32", page)
            np.testing.assert_array_equal(out, 0)  # nothing ran

    def test_a_declared_unit_stride_is_checked_at_launch(self):
        k = blk.compile("kernel k(o: *f32, s: i32 @equal(1)) { store(o + arange(0, 16) * s, 1.0); }\n",
                        device="cpu")["k"]
        out = np.zeros(16, np.float32)
        k[(1,)](out, 1)
        np.testing.assert_array_equal(out, 1)
        with self.assertRaisesRegex(blk.BlkError, r"argument 1 \('s'\): declared @equal\(1\) but is 2"):
            k[(1,)](out, 2)

    def test_compile_options_struct_is_the_headers(self):
        # the ctypes struct is the fixed fields written here and the library's blk_compile_flags():
        # read blk.h's declaration and compare field by field, so that a field added to the header
        # and not to the library's table (or reordered) fails here, not at a launch
        import ctypes
        import re
        with open(os.path.join(EXAMPLES, "..", "include", "blk.h")) as f:
            header = f.read()
        body = re.search(r"typedef struct blk_compile_options \{(.*?)\} blk_compile_options;", header, re.S).group(1)
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        declared = [re.match(r"\s*(.*?)\s*(\w+)$", d).groups() for d in body.split(";") if d.strip()]
        ctypes_of = {"int": ctypes.c_int, "const char *": ctypes.c_char_p,
                     "const char *const *": ctypes.POINTER(ctypes.c_char_p)}
        fields = blk._lib.CompileOptions._fields_
        self.assertEqual([name for _, name in declared], [name for name, _ in fields])
        for (ctype, name), (_, pytype) in zip(declared, fields):
            self.assertIs(ctypes_of[ctype], pytype, name)

    def test_version_is_the_runtimes(self):
        with open(os.path.join(EXAMPLES, "..", "include", "blk.h")) as f:
            header = f.read()
        self.assertIn(f'#define BLK_VERSION "{blk.__version__}"', header)

    def test_programs_run_shuffled_on_request(self):
        k = blk.compile("kernel k(c: *i32, order: *i32) {\n  store(order + atomic_add(c, 1), program_id(0));\n}\n",
                        device="cpu")["k"]
        orders = []
        for seed in (0, 7, 7, 0):
            blk.shuffle_programs(seed)
            order = np.zeros(32, np.int32)
            k[(32,)](np.zeros(1, np.int32), order)
            orders.append(order)
        self.assertEqual(orders[0].tolist(), list(range(32)))
        self.assertNotEqual(orders[1].tolist(), list(range(32)))
        self.assertEqual(sorted(orders[1].tolist()), list(range(32)))
        self.assertEqual(orders[1].tolist(), orders[2].tolist())  # the same seed, the same order
        self.assertEqual(orders[3].tolist(), list(range(32)))

    def test_int8_quantization_and_the_new_scalar_types(self):
        q_mod = example("quantize.blk")
        rng = np.random.default_rng(3)
        x = (rng.standard_normal((4, 300)) * 4).astype(np.float32)
        q, scale, y = np.zeros((4, 300), np.int8), np.zeros(4, np.float32), np.zeros((4, 300), np.float32)
        q_mod.quantize_rows[(4,)](x, q, scale, 300, 300, T="f32", BLOCK=128)
        q_mod.dequantize_rows[(4,)](q, scale, y, 300, 300, T="f32", BLOCK=128)
        want_scale = (np.abs(x).max(1) / np.float32(127)).astype(np.float32)
        np.testing.assert_array_equal(scale, want_scale)  # the interpreter divides exactly
        np.testing.assert_array_equal(q, np.rint(x / scale[:, None]).astype(np.int8))
        np.testing.assert_array_equal(y, q.astype(np.float32) * scale[:, None])
        # u64 and f64 scalars keep their full range and precision; fp8 arrays hold the bits
        k = blk.compile("kernel k(a: *u64, b: *f64, c: *f8e4m3, u: u64, d: f64) {\n"
                        "  store(a, u / 3); store(b, d * 3.0); store(c, d as f8e4m3);\n}\n", device="cpu")["k"]
        a, b, c = np.zeros(1, np.uint64), np.zeros(1, np.float64), np.zeros(1, np.uint8)
        k[(1,)](a, b, c, 2 ** 64 - 1, 0.1)
        self.assertEqual(int(a[0]), (2 ** 64 - 1) // 3)
        self.assertEqual(b[0], 0.1 * 3.0)
        self.assertEqual(c[0], 0x1d)  # 0.1 in e4m3: 1.625 * 2^-4 = 0.1015625
        with self.assertRaises(TypeError):  # the bits of an fp8 array are uint8, not int8
            k[(1,)](a, b, np.zeros(1, np.int8), 1, 0.1)

    def test_8bit_matmuls_from_numpy(self):
        # int8 exactly as NumPy's int64 product wrapped to i32; B column-major, as torch._int_mm and
        # torch._scaled_mm take it (the examples load it as [N, K])
        rng = np.random.default_rng(5)
        M, N, K = 33, 40, 100
        a = rng.integers(-128, 128, (M, K), dtype=np.int8)
        bt = rng.integers(-128, 128, (N, K), dtype=np.int8)  # B^T, row-major: B column-major
        c = np.zeros((M, N), np.int32)
        mm = example("matmul_int8.blk")["matmul_int8"]
        grid = lambda meta: (blk.cdiv(M, meta["BLOCK_M"]) * blk.cdiv(N, meta["BLOCK_N"]),)
        mm[grid](a, bt, c, M, N, K, K, 1, 1, K, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        np.testing.assert_array_equal(c, (a.astype(np.int64) @ bt.T.astype(np.int64)).astype(np.int32))
        # fp8 arrays hold the bits (uint8), so TA and TB are given (a torch tensor's dtype would say);
        # 0x38 is 1.0 in e4m3, 0x40 is 2.0; per-tensor scales
        af = np.full((M, K), 0x38, np.uint8)
        bf = np.full((N, K), 0x40, np.uint8)
        out = np.zeros((M, N), np.float32)
        f8 = example("matmul_fp8.blk")["matmul_fp8"]
        sa, sb = np.array([0.5], np.float32), np.array([3.0], np.float32)
        f8[grid](af, bf, out, sa, sb, M, N, K, K, 1, 1, K, N, 1, 0, 0, TA="f8e4m3", TB="f8e4m3", T="f32",
                 BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        np.testing.assert_array_equal(out, np.full((M, N), 2.0 * K * 0.5 * 3.0, np.float32))

    def test_blocks_of_three_dimensions_along_each_axis_match_numpy(self):
        # every op along an axis, on each of a [2, 4, 8] block's three, and a batched matmul
        src = """
        fn add(a, b) { return a + b; }
        kernel k(x: *f32, ix: *i32, o: *f32, const AX: i32 = 0) {
          let i = arange(0, 2)[:, None, None] * 32 + arange(0, 4)[None, :, None] * 8 + arange(0, 8)[None, None, :];
          let v = load(x + i);
          store(o + i, sort(v, AX));
          store(o + 64 + i, associative_scan(v, AX, add));
          store(o + 128 + i, flip(v, AX));
          store(o + 192 + i, gather(v, load(ix + i), AX));
          store(o + 256 + i, cumsum(v, AX, reverse = true));
          store(o + 320 + i, where(v > 0.0, v, broadcast_to(min(v, AX, keep_dims = true), [2, 4, 8])));
          store(o + 384 + i, v - broadcast_to(expand_dims(reduce(v, AX, add), AX) * 0.0 + expand_dims(max(v, AX), AX),
                                               [2, 4, 8]));
          store(o + 448 + arange(0, 4)[:, None, None] * 32 + arange(0, 4)[None, :, None] * 8
                + arange(0, 8)[None, None, :], cat(v, v * 2.0));
          store(o + 576 + arange(0, 2)[:, None, None] * 64 + arange(0, 4)[None, :, None] * 16
                + arange(0, 16)[None, None, :], interleave(v, -v));
        }
        kernel bmm(a: *f32, b: *f32, c: *f32, const B: i32 = 4, const M: i32 = 16, const K: i32 = 32, const N: i32 = 16) {
          let bi = arange(0, B)[:, None, None];
          let ma = load(a + bi * (M * K) + arange(0, M)[None, :, None] * K + arange(0, K)[None, None, :]);
          let mb = load(b + bi * (K * N) + arange(0, K)[None, :, None] * N + arange(0, N)[None, None, :]);
          store(c + bi * (M * N) + arange(0, M)[None, :, None] * N + arange(0, N)[None, None, :], dot(ma, mb));
        }
        """
        mod = blk.compile(src, device="cpu")
        rng = np.random.default_rng(7)
        x = rng.standard_normal((2, 4, 8)).astype(np.float32)
        for ax in range(3):
            ix = rng.integers(0, x.shape[ax], size=x.shape).astype(np.int32)
            o = np.zeros(704, np.float32)
            mod["k"][(1,)](x, ix, o, AX=ax)
            part = lambda at, shape=(2, 4, 8): o[at:at + int(np.prod(shape))].reshape(shape)
            np.testing.assert_array_equal(part(0), np.sort(x, ax))
            np.testing.assert_allclose(part(64), np.cumsum(x, ax), rtol=0, atol=1e-5)
            np.testing.assert_array_equal(part(128), np.flip(x, ax))
            np.testing.assert_array_equal(part(192), np.take_along_axis(x, ix, ax))
            np.testing.assert_allclose(part(256), np.flip(np.cumsum(np.flip(x, ax), ax), ax), rtol=0, atol=1e-5)
            np.testing.assert_array_equal(part(320), np.where(x > 0, x, x.min(ax, keepdims=True)))
            np.testing.assert_array_equal(part(384), x - x.max(ax, keepdims=True))
            np.testing.assert_array_equal(part(448, (4, 4, 8)), np.concatenate([x, 2 * x], 0))
            np.testing.assert_array_equal(part(576, (2, 4, 16)), np.stack([x, -x], -1).reshape(2, 4, 16))
        a = rng.standard_normal((4, 16, 32)).astype(np.float32)
        b = rng.standard_normal((4, 32, 16)).astype(np.float32)
        c = np.zeros((4, 16, 16), np.float32)
        mod["bmm"][(1,)](a, b, c, B=4, M=16, K=32, N=16)
        # f32 fmas in k order against a float64 product: within K * 2^-23 of the sum of magnitudes
        bound = 32 * 2.0**-23 * (np.abs(a) @ np.abs(b))
        self.assertTrue(np.all(np.abs(c - a.astype(np.float64) @ b) <= bound))

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

    def test_a_triton_integer_division_is_an_error_not_a_different_result(self):
        # Triton's '/' of two integers is a float; blk's truncates, so -(1 / n) * v is refused
        bad = blk.compile("kernel k(x: *f32, n: i32) {\n  store(x, -(1 / n) * load(x));\n}\n", device="cpu",
                          name="mean.blk")
        with self.assertRaisesRegex(blk.BlkError, r"mean.blk:2:\d+: error: integer division truncates in blk"):
            bad["k"][(1,)](self.x, 4)

    def test_a_helper_with_a_builtins_name_wins_and_says_so(self):
        src = "fn tanh(v) {\n  return 2.0 * v;\n}\nkernel k(x: *f32) {\n  store(x, tanh(load(x)) + 1.0);\n}\n"
        x = np.array([3.0], np.float32)
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            blk.compile(src, device="cpu", name="mine.blk")["k"][(1,)](x)
        self.assertEqual(x[0], 7.0)  # the helper's 2 v + 1, not the builtin tanh
        notes = [w for w in said if issubclass(w.category, blk.BlkWarning)]
        self.assertEqual(len(notes), 1)
        self.assertRegex(str(notes[0].message), r"mine.blk:1:4: note: helper 'tanh' hides the builtin of that name")

    def test_a_pointer_given_none_is_absent_from_that_build(self):
        # Triton's optional pointer: `if b != None` is decided at compile time, per build
        src = ("kernel k(x: *f32, b: *f32, y: *f32, n: i32) {\n  let o = arange(0, 64);\n"
               "  var v = load(x + o, o < n) * 2.0;\n  if b != None {\n    v += load(b + o, o < n);\n  }\n"
               "  store(y + o, v, o < n);\n}\n")
        k = blk.compile(src, device="cpu", name="bias.blk")["k"]
        x = np.arange(50, dtype=np.float32)
        b = np.full(50, 0.5, np.float32)
        y = np.zeros(50, np.float32)
        k[(1,)](x, None, y, 50)
        np.testing.assert_array_equal(y, 2 * x)
        k[(1,)](x, b, y, 50)
        np.testing.assert_array_equal(y, 2 * x + 0.5)
        self.assertIn("null: built with it None", k.ptx(x, None, y, 50))
        with self.assertRaisesRegex(TypeError, r"argument 3 \('n'\): expects an integer"):
            k[(1,)](x, b, y, None)  # None is for pointers only

    def test_a_string_const_picks_the_branch(self):
        src = ("kernel k(x: *f32, const ACT: str = \"relu\") {\n  var v = load(x + arange(0, 4));\n"
               "  if ACT == \"relu\" {\n    v = maximum(v, 0.0);\n  } else if ACT == \"neg\" {\n    v = -v;\n  }\n"
               "  store(x + arange(0, 4), v);\n}\n")
        k = blk.compile(src, device="cpu", name="act.blk")["k"]
        for act, want in ((None, [0, 0, 1, 2]), ("neg", [1, 0, -1, -2]), ("none", [-1, 0, 1, 2])):
            x = np.array([-1, 0, 1, 2], np.float32)
            k[(1,)](x) if act is None else k[(1,)](x, ACT=act)
            np.testing.assert_array_equal(x, want)

    def test_unknown_kernel_and_device(self):
        with self.assertRaisesRegex(blk.BlkError, r"add"):
            example("add.blk")["nope"][(1,)](self.x)
        # a misspelt name is said when it is looked up, with the nearest, not at the first launch
        with self.assertRaisesRegex(blk.BlkError, r"no kernel named 'ad' \(its kernels: add\); did you mean 'add'\?"):
            example("add.blk")["ad"]
        with self.assertRaisesRegex(AttributeError, r"did you mean 'softmax'"):
            example("softmax.blk").softmx
        mod = blk.compile("// kernel ghost(\nkernel k(x: *f32) {\n}\n", device="cpu")
        with self.assertRaisesRegex(blk.BlkError, r"its kernels: k\)"):  # a commented-out one is not a kernel
            mod["ghost"]
        with self.assertRaises(ValueError):
            blk.compile("kernel k() {}", device="tpu")

    def test_a_grid_past_the_cpu_devices_limit_is_refused_before_it_runs(self):
        import time
        for grid in ((1 << 24) + 1, (1 << 12, 1 << 12, 2), (1, 1, 1 << 31)):
            start = time.monotonic()
            with self.assertRaisesRegex(blk.BlkError, r"kernel 'add': the grid \(.*\) has more programs than the cpu "
                                                      r"device runs in one launch \(16777216; BLK_CPU_MAX_PROGRAMS"):
                self.add[grid](self.x, self.x, self.x, 64)
            self.assertLess(time.monotonic() - start, 5.0)  # refused, not run

    def test_grid_values_are_integers_that_fit_u32_never_converted(self):
        out = np.full(64, 5, np.float32)
        launch = lambda grid: self.add[grid](self.x, self.x, out, 64, BLOCK=64)
        for grid in ((2**32 + 1,), (-1,), 2**32, -1, (1, 2**32), (1, 1, -5), (np.int64(-1),), [2**40]):
            with self.assertRaisesRegex(OverflowError, r"kernel 'add': grid dimension [xyz] is -?\d+, outside 0 to "
                                                       r"4294967295"):
                launch(grid)
        for grid in ((3.9,), 3.9, (True,), True, np.True_, (1, np.float64(2.0)), (1, None), np.array(2.0), ("12",)):
            with self.assertRaisesRegex(TypeError, r"kernel 'add': grid dimension [xyz] must be an integer, got "):
                launch(grid)
        for grid in ("12", None, {1: 2}, 2.5j):
            with self.assertRaisesRegex(TypeError, r"kernel 'add': a grid is an int or a tuple of 1 to 3 ints, got"):
                launch(grid)
        with self.assertRaisesRegex(TypeError, r"kernel 'add': a grid \(from the grid callable\) is an int or a "
                                               r"tuple of 1 to 3 ints, got NoneType"):
            launch(lambda meta: None)
        with self.assertRaisesRegex(OverflowError, r"kernel 'add': grid dimension x \(from the grid callable\) is "
                                                   r"4294967297"):
            launch(lambda meta: (2**32 + 1,))
        with self.assertRaisesRegex(ValueError, r"kernel 'add': a grid has 1 to 3 dimensions, got 4"):
            launch((1, 1, 1, 1))
        np.testing.assert_array_equal(out, 5)  # nothing ran
        for grid in (1, np.int32(1), (np.uint64(1),), [1], np.array(1), np.array([1, 1]), lambda meta: [1, 1, 1]):
            launch(grid)
            np.testing.assert_array_equal(out, 2)
            out[:] = 5

    def test_integer_options_are_integers_that_fit_a_c_int(self):
        for name in ("num_warps", "num_stages", "min_blocks_per_sm"):
            for value in (2**32 + 4, -2**31 - 1, 2**63):
                with self.assertRaisesRegex(OverflowError, rf"kernel 'add': {name}={value} does not fit a C int"):
                    self.add[(1,)](self.x, self.x, self.x, 64, BLOCK=64, **{name: value})
                with self.assertRaisesRegex(OverflowError, rf"blk.compile \(.*add.blk\): {name}={value} does not "
                                                           r"fit a C int"):
                    blk.compile(os.path.join(EXAMPLES, "add.blk"), device="cpu", **{name: value})
            for value in (True, 4.0, "4", None, np.float32(4)):
                with self.assertRaisesRegex(TypeError, rf"kernel 'add': {name} must be an integer, got "):
                    self.add[(1,)](self.x, self.x, self.x, 64, BLOCK=64, **{name: value})
        for name in ("no_tma", "no_warp_specialize", "persistent", "debug"):
            with self.assertRaisesRegex(TypeError, rf"kernel 'add': {name} must be True or False, got 'yes'"):
                self.add[(1,)](self.x, self.x, self.x, 64, BLOCK=64, **{name: "yes"})
        # in range for a C int, out of the option's: the runtime's rule, with the kernel named
        with self.assertRaisesRegex(blk.BlkError, r"kernel 'add': num_warps must be 0 or a power of two up to 32, got 3"):
            self.add[(1,)](self.x, self.x, self.x, 64, BLOCK=64, num_warps=3)
        self.add[(1,)](self.x, self.x, self.x, 64, BLOCK=64, num_warps=np.int64(4), num_stages=np.int8(3))

    def test_bool_and_non_integers_are_refused_for_integer_parameters(self):
        for value in (True, False, np.True_, np.array(True), 3.9, "12", np.float64(64.0), np.array(64.0), None):
            with self.assertRaisesRegex(TypeError, r"kernel 'add', argument 3 \('n'\): expects an integer \(i32\), "
                                                   r"got (bool_?|float|str|float64|NoneType|a 0-d ndarray of (bool|float64))$"):
                self.add[(1,)](self.x, self.x, self.x, value, BLOCK=64)
        out = np.zeros(64, np.float32)
        for value in (np.int16(64), np.array(64), np.array(64, np.uint8)):
            self.add[(1,)](self.x, self.x, out, value, BLOCK=64)  # NumPy integers and 0-d integer arrays are integers
            np.testing.assert_array_equal(out, 2)
        flag = blk.compile("kernel k(x: *i32, f: i1) {\n  store(x, f as i32);\n}\n", device="cpu")["k"]
        y = np.zeros(1, np.int32)
        flag[(1,)](y, True)  # an i1 parameter takes a bool
        self.assertEqual(y[0], 1)

    def test_float_parameters_take_numbers_that_fit_their_type(self):
        mod = blk.compile("kernel k(x: *f64, a: f32, b: f16, c: bf16, d: f64) {\n"
                          "  store(x, a as f64 + b as f64 + c as f64 + d);\n}\n", device="cpu", name="floats.blk")
        x = np.zeros(1, np.float64)
        k = mod["k"]
        good = [1.0, 2.0, 3.0, 4.0]
        k[(1,)](x, *good)
        self.assertEqual(x[0], 10.0)
        cases = [(0, 2**128, "f32"), (0, -2**128 + 2**103, "f32"), (1, 65520, "f16"), (1, -70000, "f16"),
                 (2, 2**128, "bf16"), (3, 2**1024, "f64"), (0, 2**200, "f32"), (0, 1e39, "f32"), (1, 70000.0, "f16"),
                 (1, np.float32(-1e5), "f16"), (2, -3.4e38 * 1.001, "bf16"), (0, np.array(1e300), "f32")]
        for i, value, t in cases:
            args = list(good)
            args[i] = value
            with self.assertRaisesRegex(OverflowError, rf"kernel 'k', argument {i + 1} \('{'abcd'[i]}'\): \S+ does "
                                                       rf"not fit {t}"):
                k[(1,)](x, *args)
        for value in (True, np.True_, "1.5", None, 1j):
            with self.assertRaisesRegex(TypeError, r"kernel 'k', argument 1 \('a'\): expects a number \(f32\)"):
                k[(1,)](x, value, *good[1:])
        k[(1,)](x, 2**127, 65519, np.float32(3.0), np.array(4.0))  # 65519 rounds to f16's largest, 65504
        self.assertEqual(x[0], 2.0**127 + 65504 + 3.0 + 4.0)
        k[(1,)](x, float("inf"), float("-inf"), 0.0, 0.0)  # infinity itself is a number every float type has
        self.assertTrue(np.isnan(x[0]))

    def test_a_read_only_array_the_kernel_writes_is_an_error(self):
        def read_only(a):
            a.setflags(write=False)
            return a
        x = read_only(np.arange(64, dtype=np.float32))
        for out in (read_only(np.zeros(64, np.float32)), np.frombuffer(bytes(256), np.float32)):
            with self.assertRaisesRegex(ValueError, r"kernel 'add', argument 2 \('out'\): a read-only array, and the "
                                                    r"kernel wrote to it"):
                self.add[(1,)](x, x, out, 64, BLOCK=64)
        # an atomic counts as a write, as does writing through the second of two arguments
        acc = blk.compile("kernel acc(x: *f32, total: *f32) {\n  atomic_add(total, load(x));\n}\n"
                          "kernel copy(x: *f32, y: *f32) {\n  store(y, load(x));\n}\n", device="cpu")
        with self.assertRaisesRegex(ValueError, r"kernel 'acc', argument 1 \('total'\): a read-only array"):
            acc["acc"][(1,)](np.ones(1, np.float32), read_only(np.zeros(1, np.float32)))
        with self.assertRaisesRegex(ValueError, r"kernel 'copy', argument 1 \('y'\): a read-only array"):
            acc["copy"][(1,)](np.ones(1, np.float32), read_only(np.zeros(1, np.float32)))
        # read-only inputs are fine, and so is an output that already holds what the kernel writes
        out = np.zeros(64, np.float32)
        self.add[(1,)](x, x, out, 64, BLOCK=64)
        np.testing.assert_array_equal(out, 2 * x)
        self.add[(1,)](x, x, read_only(out), 64, BLOCK=64)
        empty = read_only(np.zeros(0, np.float32))
        self.add[(1,)](empty, empty, empty, 0, BLOCK=64)

    def test_integer_past_64_bits(self):
        with self.assertRaisesRegex(OverflowError, r"argument 3 \('n'\): 1180591620717411303424 does not fit i32"):
            self.add[(1,)](self.x, self.x, self.x, 1 << 70)


class DLPackOnly:
    """Memory reachable only through the DLPack protocol (no NumPy interface)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class DLPack(unittest.TestCase):
    def test_capsule_is_read_as_numpy_laid_it_out(self):
        from blk import _dlpack
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        v = _dlpack.view(a.__dlpack__())
        self.assertEqual((v.address, v.dtype, v.shape), (a.ctypes.data, (_dlpack.FLOAT, 32), (4, 6)))
        self.assertTrue(v.contiguous())
        w = _dlpack.view(a[:, ::2].__dlpack__())
        self.assertFalse(w.contiguous())
        self.assertEqual(_dlpack.view(a[1:].__dlpack__()).address, a.ctypes.data + 24)

    def test_dlpack_arrays_on_the_cpu_device_are_read_and_written(self):
        add = example("add.blk")["add"]
        x, out = np.arange(100, dtype=np.float32), np.zeros(100, np.float32)
        add[(1,)](DLPackOnly(x), x, DLPackOnly(out), 100, BLOCK=128)
        np.testing.assert_array_equal(out, 2 * x)

    def test_dlpack_dtype_is_checked(self):
        add = example("add.blk")["add"]
        x = np.zeros(8, np.float32)
        with self.assertRaisesRegex(TypeError, r"argument 0 \('x'\): a DLPack tensor of type int32 where the kernel "
                                               r"takes \*f32"):
            add[(1,)](DLPackOnly(np.zeros(8, np.int32)), x, x, 8, BLOCK=8)


class FakeClock:
    """A do_bench that says each config's time from its BLOCK, so the choice is known."""

    def __init__(self, times):
        self.times, self.calls = times, 0

    def __call__(self, fn, warmup, rep):
        fn()
        self.calls += 1
        return self.times[self.block]


class Autotune(unittest.TestCase):
    CONFIGS = [blk.Config(BLOCK=64), blk.Config({"BLOCK": 128}, num_warps=2), blk.Config(BLOCK=256)]

    def setUp(self):
        self.cache = tempfile.TemporaryDirectory()
        self.env = {k: os.environ.get(k) for k in ("BLK_CACHE_DIR", "BLK_CACHE_DISABLE")}
        os.environ["BLK_CACHE_DIR"] = self.cache.name
        os.environ.pop("BLK_CACHE_DISABLE", None)

    def tearDown(self):
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.cache.cleanup()

    def tuned_add(self, clock, configs=None):
        add = example("add.blk")["add"]
        tuned = blk.autotune(configs=configs or self.CONFIGS, key=["n"], do_bench=clock)(add)
        # the fake clock learns which config it is timing from the grid callable
        def grid(meta):
            clock.block = meta["BLOCK"]
            return (blk.cdiv(meta["n"], meta["BLOCK"]),)
        return tuned, grid

    def launch(self, tuned, grid, n):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros(n, np.float32)
        tuned[lambda meta: grid(dict(meta, n=n))](x, x, out, n)
        np.testing.assert_array_equal(out, 2 * x)  # every config computes the same sum

    def test_picks_the_fastest_and_caches_it_per_key(self):
        clock = FakeClock({64: 3.0, 128: 1.0, 256: 2.0})
        tuned, grid = self.tuned_add(clock)
        self.launch(tuned, grid, 1000)
        self.assertEqual(tuned.best_config, blk.Config(BLOCK=128, num_warps=2))
        self.assertEqual((tuned.tunings, clock.calls), (1, 3))
        self.launch(tuned, grid, 1000)  # same key: no timing
        self.assertEqual((tuned.tunings, clock.calls), (1, 3))
        clock.times = {64: 1.0, 128: 3.0, 256: 2.0}
        self.launch(tuned, grid, 999)  # a new n is a new key
        self.assertEqual((tuned.tunings, tuned.best_config), (2, blk.Config(BLOCK=64)))
        self.launch(tuned, grid, 1000)
        self.assertEqual(tuned.best_config, blk.Config(BLOCK=128, num_warps=2))

    def test_an_array_in_the_key_selects_by_dtype(self):
        clock = FakeClock({64: 3.0, 128: 1.0, 256: 2.0})
        add = example("add.blk")["add"]
        tuned = blk.autotune(self.CONFIGS, key=["x", "n"], do_bench=clock)(add)
        for dtype, t in ((np.float32, "f32"), (np.float32, "f32"), (np.float16, "f16")):
            x = np.ones(100, dtype)
            tuned[lambda meta: (setattr(clock, "block", meta["BLOCK"]), blk.cdiv(100, meta["BLOCK"]))[1:]](
                x, x, np.zeros(100, dtype), np.int64(100), T=t)
        self.assertEqual(tuned.tunings, 2)  # float32 once, float16 once; a NumPy integer is a number
        self.assertEqual(sorted(k[0] for k in tuned.cache), ["float16", "float32"])

    def test_the_choice_is_kept_on_disk_for_the_next_process(self):
        tuned, grid = self.tuned_add(FakeClock({64: 3.0, 128: 2.0, 256: 1.0}))
        self.launch(tuned, grid, 500)
        files = os.listdir(os.path.join(self.cache.name, "autotune"))
        self.assertEqual(len(files), 1)
        clock = FakeClock({64: 1.0, 128: 2.0, 256: 3.0})  # would choose otherwise if it timed
        again, grid = self.tuned_add(clock)
        self.launch(again, grid, 500)
        self.assertEqual((again.tunings, clock.calls, again.best_config), (0, 0, blk.Config(BLOCK=256)))
        other, grid = self.tuned_add(clock, configs=self.CONFIGS[:2])  # other configs: another file
        self.launch(other, grid, 500)
        self.assertEqual((other.tunings, other.best_config), (1, blk.Config(BLOCK=64)))
        with open(os.path.join(self.cache.name, "autotune", files[0]), "w") as f:
            f.write("{damaged")
        fresh, grid = self.tuned_add(clock)
        self.launch(fresh, grid, 500)  # a damaged file means tuning again, not an error
        self.assertEqual((fresh.tunings, fresh.best_config), (1, blk.Config(BLOCK=64)))
        os.environ["BLK_CACHE_DISABLE"] = "1"
        off, grid = self.tuned_add(clock)
        self.launch(off, grid, 500)
        self.assertEqual(off.tunings, 1)

    def tuned_file(self):
        """Tunes n=500 once (BLOCK=256 chosen) and gives the choice file's path and text."""
        tuned, grid = self.tuned_add(FakeClock({64: 3.0, 128: 2.0, 256: 1.0}))
        self.launch(tuned, grid, 500)
        directory = os.path.join(self.cache.name, "autotune")
        (name,) = os.listdir(directory)
        path = os.path.join(directory, name)
        with open(path) as f:
            return path, f.read()

    def retuned(self, path):
        """Whether a new tuner times again (a miss) for n=500 with `path` as it is now, within 10 seconds."""
        import signal
        def too_long(signum, frame):
            raise AssertionError("reading the choice file blocked")
        old = signal.signal(signal.SIGALRM, too_long)
        signal.alarm(10)
        try:
            tuned, grid = self.tuned_add(FakeClock({64: 1.0, 128: 2.0, 256: 3.0}))
            self.launch(tuned, grid, 500)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        self.assertEqual(tuned.best_config, blk.Config(BLOCK=64) if tuned.tunings else blk.Config(BLOCK=256))
        return tuned.tunings == 1

    def test_a_choice_file_that_is_not_a_small_regular_json_file_is_a_miss(self):
        path, text = self.tuned_file()
        self.assertFalse(self.retuned(path))  # the file as written is a hit
        other = os.path.join(self.cache.name, "elsewhere.json")
        with open(other, "w") as f:
            f.write(text)
        damaged = ["{damaged", "", "[" * 100000 + "]" * 100000, '{"a": ' * 100000, "[1, 2]", "\xff\xfe",
                   text.replace(": 2", ": true"), text.replace(": 2", ": 2.0"), text.replace(": 2", ": -1"),
                   text.replace(": 2", ": 3"), text.replace(": 2", ': "2"'), text + " " * (getattr(blk._autotune, "MAX_CACHE_FILE", 1 << 20))]
        for content in damaged:
            os.unlink(path)
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(content)
            self.assertTrue(self.retuned(path), content[:40])  # timed again: a miss, never an error
        # at the size limit it is still read
        os.unlink(path)
        with open(path, "w") as f:
            f.write(text + " " * (getattr(blk._autotune, "MAX_CACHE_FILE", 1 << 20) - len(text)))
        self.assertFalse(self.retuned(path))
        # not a regular file, or not one reached directly: a FIFO (which would block), links to a good
        # file and to /dev/zero (read forever), a directory
        for make in (lambda: os.mkfifo(path), lambda: os.symlink(other, path), lambda: os.symlink("/dev/zero", path),
                     lambda: os.mkdir(path)):
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            elif os.path.lexists(path):
                os.unlink(path)
            make()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a directory there cannot be replaced: said, as a warning
                self.assertTrue(self.retuned(path))

    def test_the_choice_file_is_written_through_a_fresh_temporary_file(self):
        path, text = self.tuned_file()
        victim = os.path.join(self.cache.name, "victim")
        with open(victim, "w") as f:
            f.write("precious")
        # links planted where a predictable temporary file or the choice file would be are not written through
        os.unlink(path)
        for pid in range(os.getpid() - 2, os.getpid() + 3):
            os.symlink(victim, f"{path}.tmp.{pid}")
        os.symlink(victim, path)
        self.assertTrue(self.retuned(path))  # the link is not read, and the choice is written
        with open(victim) as f:
            self.assertEqual(f.read(), "precious")
        self.assertFalse(os.path.islink(path))  # the link was replaced by the new file
        with open(path) as f:
            self.assertEqual(list(json.load(f).values()), [0])  # which holds the new choice, BLOCK=64
        leftovers = [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")]
        self.assertEqual(leftovers, [])

    def test_a_cache_directory_that_cannot_be_used_is_said_once(self):
        not_a_dir = os.path.join(self.cache.name, "file")
        with open(not_a_dir, "w") as f:
            f.write("not a directory")
        os.environ["BLK_CACHE_DIR"] = not_a_dir
        tuned, grid = self.tuned_add(FakeClock({64: 3.0, 128: 1.0, 256: 2.0}))
        with self.assertWarnsRegex(RuntimeWarning, r"blk.autotune: cannot keep choices in .*/file \(.*file' is not a directory\).*memory only"):
            self.launch(tuned, grid, 100)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a second miss in that directory says nothing more
            self.launch(tuned, grid, 101)
        self.assertEqual((tuned.tunings, tuned.best_config), (2, blk.Config(BLOCK=128, num_warps=2)))
        with open(not_a_dir) as f:
            self.assertEqual(f.read(), "not a directory")

    def test_threads_sharing_a_tuner_tune_each_key_once(self):
        add = example("add.blk")["add"]
        keys = (300, 301, 302, 303)
        for attempt in range(4):  # the race it guards against showed in most runs, not all
            if attempt < 3:
                os.environ["BLK_CACHE_DISABLE"] = "1"  # each attempt tunes anew
            else:
                os.environ.pop("BLK_CACHE_DISABLE")  # and the last one writes the disk cache too
            calls = []
            def bench(fn, warmup, rep):
                fn()
                calls.append(1)
                return 1.0 + len(calls) % 3
            tuned = blk.autotune(self.CONFIGS, key=["n"], do_bench=bench)(add)
            errors = []
            def work(seed):
                try:
                    for i in range(12):
                        n = keys[(seed + i) % len(keys)]
                        x = np.arange(n, dtype=np.float32) + seed
                        out = np.zeros(n, np.float32)
                        tuned[lambda meta: (blk.cdiv(n, meta["BLOCK"]),)](x, x, out, n)
                        np.testing.assert_array_equal(out, 2 * x)
                except BaseException as err:  # noqa: B902 (reported below)
                    errors.append(repr(err))
            threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            self.assertEqual(sorted(k[0] for k in tuned.cache), list(keys))
            self.assertEqual(tuned.tunings, len(keys))  # each key timed once, by one thread
            self.assertEqual(len(calls), len(keys) * len(self.CONFIGS))
        (name,) = os.listdir(os.path.join(self.cache.name, "autotune"))
        with open(os.path.join(self.cache.name, "autotune", name)) as f:
            self.assertEqual(len(json.load(f)), len(keys))  # every thread's choice kept

    def test_a_config_that_does_not_compile_is_ruled_out(self):
        clock = FakeClock({64: 2.0, 128: 1.0, 100: 0.1})
        configs = [blk.Config(BLOCK=64), blk.Config(BLOCK=100), blk.Config(BLOCK=128)]  # not a power of two
        tuned, grid = self.tuned_add(clock, configs)
        self.launch(tuned, grid, 300)
        self.assertEqual(tuned.best_config, blk.Config(BLOCK=128))
        self.assertIsNone(tuned.timings[configs[1]])
        self.assertIn("BLOCK", tuned.unfit[configs[1]])

    def test_reset_to_zero_and_restore_value(self):
        mod = blk.compile("kernel acc(x: *f32, total: *f32, n: i32, const BLOCK: i32) {\n"
                          "  let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                          "  atomic_add(total + offs * 0, load(x + offs, offs < n), offs < n);\n"
                          "}\n"
                          "kernel twice(x: *f32, n: i32, const BLOCK: i32) {\n"
                          "  let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                          "  store(x + offs, 2.0 * load(x + offs, offs < n), offs < n);\n"
                          "}\n", device="cpu")
        configs = [blk.Config(BLOCK=32), blk.Config(BLOCK=64)]
        bench = lambda fn, warmup, rep: (fn(), fn(), 1.0)[2]  # two timed launches per config
        grid = lambda meta: (blk.cdiv(100, meta["BLOCK"]),)
        x = np.ones(100, np.float32)
        total = np.full(1, 5.0, np.float32)
        seen = []
        acc = blk.autotune(configs, key=["n"], reset_to_zero=["total"],
                           do_bench=lambda fn, warmup, rep: (fn(), seen.append(total[0]), fn(), 1.0)[3])(mod["acc"])
        acc[grid](x, total, 100)
        self.assertEqual(seen, [100.0, 100.0])  # zeroed before each timed launch
        self.assertEqual(total[0], 105.0)  # put back after tuning: the real launch adds to what was given
        y = np.ones(100, np.float32)
        tw = blk.autotune(configs, key=["n"], restore_value=["x"], do_bench=bench)(mod["twice"])
        tw[grid](y, 100)
        np.testing.assert_array_equal(y, 2.0)  # restored after tuning: doubled once, by the real launch

    def test_errors(self):
        tuned, grid = self.tuned_add(FakeClock({}))
        x = np.zeros(8, np.float32)
        with self.assertRaisesRegex(TypeError, r"BLOCK given at the launch and by the autotuner's configs"):
            tuned[(1,)](x, x, x, 8, BLOCK=8)
        bad = blk.autotune(self.CONFIGS, key=["m"])(example("add.blk")["add"])
        with self.assertRaisesRegex(TypeError, r"no parameter 'm' \(it has x, y, out, n\)"):
            bad[(1,)](x, x, x, 8)
        with self.assertRaises(ValueError):
            blk.autotune([], key=["n"])


class Bench(unittest.TestCase):
    def test_do_bench_times_the_callable(self):
        import time
        calls = []
        ms = blk.testing.do_bench(lambda: (calls.append(1), time.sleep(0.002)), warmup=5, rep=20, device="cpu")
        self.assertGreaterEqual(ms, 2.0)  # it slept 2 ms each time
        self.assertLess(ms, 200.0)
        self.assertGreaterEqual(len(calls), 1 + 1 + 5)  # the first call, warm-up, at least five timed
        lo, mid, hi = blk.testing.do_bench(lambda: time.sleep(0.001), warmup=1, rep=10, quantiles=[0.2, 0.5, 0.8],
                                           device="cpu")
        self.assertTrue(1.0 <= lo <= mid <= hi)


if __name__ == "__main__":
    unittest.main()
