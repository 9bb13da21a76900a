/* gpu_ops.c: the NVPTX backend against the interpreter, op by op. Small
 * kernels cover what the examples do not (reductions over both axes of 2-D
 * blocks, argmax/argmin, i64 sums, integer division and shifts, saturating
 * casts, the narrow and wide dtypes, block atomics, loops and branches, a layout change through shared
 * memory (a transpose through 128 KiB, above the 48 KiB a launch gets
 * without opting in),
 * NaN propagation, rand with 64-bit offsets, the approximate math, blocks of
 * three dimensions).
 * Each runs on the interpreter and on the GPU over the same inputs; outputs
 * must be equal bit for bit (the kernels avoid a * b + c, which the GPU
 * contracts, and float sums, whose order differs), except the approximate
 * math: relative 1e-5 plus 1e-6 absolute (lg2.approx near 1), see
 * docs/language.md §8. A standalone program (no test framework), so it
 * runs on the GPU machine from the static build; exit status 0 when all pass.
 * Usage: gpu_ops [--device cuda|cpu-vs-cpu] [--only TEXT] [--persistent] (cpu-vs-cpu: a
 * self-check of the harness; --only: the cases whose name contains TEXT; --persistent:
 * every kernel built persistent, each GPU program running many program ids) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dot_sources.h"
#include "checks_runtime.h"
#include "reference.h"

typedef struct {
    const char *name;
    const char *src;       /* kernel `k` */
    int nbufs;
    DType dt[6];           /* element type of each buffer; each is also argument i */
    int count[6];
    bool output[6];        /* compared after the run */
    int nscalars;
    int64_t scalars[4];    /* integer arguments after the buffers */
    uint32_t programs;
    double rtol;           /* 0 (and atol 0): bit for bit */
    double atol;           /* with rtol: |gpu - cpu| <= rtol |cpu| + atol (0: 1e-6) */
    uint32_t grid_y, grid_z; /* the grid's other sizes (0: 1) */
} OpCase;

static const OpCase cases[] = {
    {"2-D reductions over both axes, f32", 
     "kernel k(x: *f32 @align(16), r: *f32, c: *f32, am: *i32, an: *i32) {\n"
     "  let i = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let v = load(x + i);\n"
     "  store(r + arange(0, 32), max(v, axis = 1));\n"
     "  store(c + arange(0, 64), min(v, axis = 0));\n"
     "  store(am + arange(0, 32), argmax(v, axis = 1));\n"
     "  store(an + arange(0, 64), argmin(v, axis = 0));\n"
     "}\n",
     5, {DT_F32, DT_F32, DT_F32, DT_I32, DT_I32}, {2048, 32, 64, 32, 64}, {0, 1, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"integer sums (i32 wrapping, i64) over both axes",
     "kernel k(x: *i32, s: *i32, t: *i32) {\n"
     "  let i = arange(0, 16)[:, None] * 128 + arange(0, 128)[None, :];\n"
     "  let v = load(x + i) * 65536;\n"
     "  store(s + arange(0, 128), sum(v, axis = 0));\n"
     "  store(t + arange(0, 16), (sum(v as i64, axis = 1) >> 16) as i32);\n"
     "}\n",
     3, {DT_I32, DT_I32, DT_I32}, {2048, 128, 16}, {0, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"integer division, remainder, shifts, u32 wrap",
     "kernel k(a: *i32, b: *i32, q: *i32, r: *i32, s: *i32, u: *u32) {\n"
     "  let i = program_id(0) * 256 + arange(0, 256);\n"
     "  let x = load(a + i); let y = load(b + i) | 1;\n"
     "  store(q + i, x / y); store(r + i, x % y);\n"
     "  store(s + i, (x << (y & 31)) ^ (x >> (y & 63)));\n"
     "  store(u + i, (x as u32) * 2654435761 + (y as u32));\n"
     "}\n",
     6, {DT_I32, DT_I32, DT_I32, DT_I32, DT_I32, DT_U32}, {1024, 1024, 1024, 1024, 1024, 1024}, {0, 0, 1, 1, 1, 1}, 0, {0}, 4, 0, 0, 0, 0},
    {"casts: saturating float to int, float to f16/bf16, int to float",
     "kernel k(x: *f32, i: *i32, h: *f16, b: *bf16, f: *f32) {\n"
     "  let o = arange(0, 512);\n"
     "  let v = load(x + o) * 1e9;\n"
     "  store(i + o, v as i32); store(h + o, v as f16); store(b + o, v as bf16);\n"
     "  store(f + o, (v as i32) as f32 + (o as f32));\n"
     "}\n",
     5, {DT_F32, DT_I32, DT_F16, DT_BF16, DT_F32}, {512, 512, 512, 512, 512}, {0, 1, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"block atomics from many programs, masked",
     "kernel k(c: *i32, f: *f32, x: *i32) {\n"
     "  let o = arange(0, 64);\n"
     "  atomic_add(c + o, program_id(0) + o, o < 50);\n"
     "  atomic_add(f + o % 8, 0.5, o < 40);\n"
     "  atomic_xchg(x + o, 7, o >= 60);\n"
     "}\n",
     3, {DT_I32, DT_F32, DT_I32}, {64, 8, 64}, {1, 1, 1}, 0, {0}, 37, 0, 0, 0, 0},
    /* max, min, and, or, xor commute: the final memory is the same in any
     * order (the values each atomic found are not, so they are not kept);
     * f32 max/min take Triton's sign split over integer atomics */
    {"atomic max, min (i32, u32, i64, f32 with both signs), and, or, xor from many programs",
     "kernel k(i: *i32, u: *u32, l: *i64, f: *f32) {\n"
     "  let o = arange(0, 64);\n"
     "  let v = (program_id(0) * 64 + o) * 2654435761 as u32;\n"
     "  let s = v as i32;\n"
     "  atomic_max(i + o % 16, s); atomic_min(i + 16 + o % 16, s, o < 50);\n"
     "  atomic_max(u + o % 16, v); atomic_min(u + 16 + o % 16, v);\n"
     "  atomic_and(u + 32 + o % 8, v | 0x0f0f0f0f); atomic_or(u + 40 + o % 8, v & 0x11111111);\n"
     "  atomic_xor(l + o % 8, (s as i64) << 20);\n"
     "  atomic_max(f + o % 16, (s >> 8) as f32); atomic_min(f + 16 + o % 16, (s >> 8) as f32);\n"
     "}\n",
     4, {DT_I32, DT_U32, DT_I64, DT_F32}, {32, 48, 8, 32}, {1, 1, 1, 1}, 0, {0}, 37, 0, 0, 0, 0},
    /* half-precision atomic adds of multiples of 1/4 that stay exact, so
     * any order gives the same bits (bf16 atomics need sm_90) */
    {"atomic_add on f16 and bf16 from many programs",
     "kernel k(h: *f16, b: *bf16) {\n"
     "  let o = arange(0, 64);\n"
     "  atomic_add(h + o % 16, ((program_id(0) + o) % 8) as f16 * 0.25);\n"
     "  atomic_add(b + o % 16, 0.5, o < 40);\n"
     "}\n",
     2, {DT_F16, DT_BF16}, {16, 16}, {1, 1}, 0, {0}, 9, 0, 0, 0, 0},
    /* relaxed block adds that sm_90a adds by bulk reductions through shared
     * memory (bulk.c): rows masked off, the staging reused in a loop, a
     * block whose rows run along its first dimension, f16, a 1-D block of
     * one row; small multiples of 1/4, so any order gives the same bits */
    {"atomic_add by bulk reductions: masked rows, in a loop, transposed, f16, one row",
     "kernel k(f: *f32 @align(16), i: *i32 @align(16), h: *f16 @align(16), w: *f32 @align(16), n: i32) {\n"
     "  let r = arange(0, 16); let c = arange(0, 64);\n"
     "  for s in range(0, 3) {\n"
     "    let v = ((program_id(0) + r[:, None] + c[None, :] + s) % 8) as f32 * 0.25;\n"
     "    atomic_add(f + r[:, None] * 64 + c[None, :], v, r[:, None] < n, sem = \"relaxed\");\n"
     "  }\n"
     "  atomic_add(i + c[:, None] + r[None, :] * 64, c[:, None] * r[None, :] + program_id(0), sem = \"relaxed\");\n"
     "  atomic_add(h + r[:, None] * 64 + c[None, :], ((r[:, None] + c[None, :]) % 4) as f16 * 0.25, sem = \"relaxed\");\n"
     "  let o = arange(0, 1024);\n"
     "  atomic_add(w + o, (o % 16) as f32 * 0.5, o < 1024, sem = \"relaxed\");\n"
     "}\n",
     4, {DT_F32, DT_I32, DT_F16, DT_F32}, {1024, 1024, 1024, 1024}, {1, 1, 1, 1}, 1, {11}, 9, 0, 0, 0, 0},
    /* a grid of 5 x 3 x 2 (launched persistent: fewer programs, each running
     * many of these ids); each program writes its ids and num_programs, and
     * one returns early */
    {"program ids and num_programs on three axes, an early return",
     "kernel k(o: *i32) {\n"
     "  let p = (program_id(2) * num_programs(1) + program_id(1)) * num_programs(0) + program_id(0);\n"
     "  if p == 7 { return; }\n"
     "  let i = arange(0, 8);\n"
     "  let ids = where(i == 0, program_id(0), where(i == 1, program_id(1), where(i == 2, program_id(2), 0)));\n"
     "  let n = where(i == 3, num_programs(0), where(i == 4, num_programs(1), where(i == 5, num_programs(2), -1)));\n"
     "  store(o + p * 8 + i, ids + n);\n"
     "}\n",
     1, {DT_I32}, {240}, {1}, 0, {0}, 5, 0, 0, 3, 2},
    {"loops, branches, early return, short circuit",
     "fn tri(n) { var t = 0; for j in range(0, n + 1) { t += j; } return t; }\n"
     "kernel k(o: *i32, n: i32) {\n"
     "  let pid = program_id(0);\n"
     "  var down = 0;\n"
     "  for i in range(10, 0, -3) { down = down * 100 + i; }\n"
     "  var w = 1;\n"
     "  while w < 1000 { w *= 3; }\n"
     "  var acc = arange(0, 32);\n"
     "  if pid % 2 == 0 { acc = acc * 2; } else { acc = acc + pid; }\n"
     "  store(o + pid * 40 + arange(0, 32), acc);\n"
     "  store(o + pid * 40 + 32, down); store(o + pid * 40 + 33, w);\n"
     "  if pid >= n { return; }\n"
     "  let far = pid < 2 && load(o + pid * 40 + 35) == 0;\n"
     "  store(o + pid * 40 + 34, tri(pid) + (far as i32) * 1000);\n"
     "}\n",
     1, {DT_I32}, {320}, {1}, 1, {5}, 8, 0, 0, 0, 0},
    /* two dots of a loop read one operand from before it: on sm_90a, with 64
     * rows, its one copy in the resident region; with 32, mma.sync, each dot
     * its own fragments (the second dot once staged it again, over the ring).
     * 512 products summed per output in an order of the GPU's own:
     * 2 K 2^-24 sum |ab| with K = 512, sum |ab| ~ 330: 2e-2, atol 3e-2 (a
     * stale or overwritten operand errs by about 10) */
    {"two wgmma dots of a loop reading one loop-invariant operand", SHARED_OPERAND_DOTS_KERNEL("64"),
     3, {DT_F16, DT_F16, DT_F32}, {64 * 64, 256 * 64, 64 * 64}, {0, 0, 1}, 1, {256}, 1, 0, 3e-2, 0, 0},
    {"two mma.sync dots of a loop reading one loop-invariant operand", SHARED_OPERAND_DOTS_KERNEL("32"),
     3, {DT_F16, DT_F16, DT_F32}, {32 * 64, 256 * 64, 32 * 64}, {0, 0, 1}, 1, {256}, 1, 0, 3e-2, 0, 0},
    /* masks.c: masks of scalar-and-arange compares over a dot's result are
     * tested once per block; the blocks hold them everywhere, nowhere and in
     * part (n = 150 ends in the last block of columns; the row and column
     * ranges cross), and a mask of the data (s > 0) stays per element. A
     * wrong branch errs by about 1 (the constants against s ~ N(0, 4)); the
     * dots' order of their own: 2 K 2^-24 sum |ab| with K = 16, sum |ab| ~ 10,
     * 2e-5 each, about 20 of them added into each output: atol 1e-3 */
    {"where with masks over arange ranges, tested once per block",
     "kernel k(a: *f16, b: *f16, o: *f32, n: i32) {\n"
     "  let rows = arange(0, 64); let kk = arange(0, 16);\n"
     "  let x = load(a + rows[:, None] * 16 + kk[None, :]);\n"
     "  var acc = zeros([64, 32], f32);\n"
     "  for start in range(0, 160, 32) {\n"
     "    let cols = start + arange(0, 32);\n"
     "    let s = dot(x, load(b + kk[:, None] * 160 + cols[None, :]));\n"
     "    acc += where(cols[None, :] < n, s, -1.0);\n"
     "    acc += where((rows[:, None] >= cols[None, :] - 40) & (cols[None, :] >= 8), s + s, 0.5);\n"
     "    acc += where(cols[None, :] - rows[:, None] <= n - 100, s, 0.25);\n"
     "    acc += where(s > 0.0, s, 0.0);\n"
     "  }\n"
     "  store(o + rows[:, None] * 32 + arange(0, 32)[None, :], acc);\n"
     "}\n",
     3, {DT_F16, DT_F16, DT_F32}, {64 * 16, 16 * 160, 64 * 32}, {0, 0, 1}, 1, {150}, 1, 0, 1e-3, 0, 0},
    {"a loaded block moved through shared memory (expand_dims, broadcast)",
     "kernel k(x: *f32 @align(16), y: *f32, z: *f32) {\n"
     "  let r = load(x + arange(0, 32));\n"
     "  let c = load(x + 32 + arange(0, 64));\n"
     "  let m = r[:, None] * 10.0 + c[None, :];\n"
     "  store(y + arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :], m);\n"
     "  store(z + arange(0, 64), max(m, axis = 0));\n"
     "}\n",
     3, {DT_F32, DT_F32, DT_F32}, {96, 2048, 64}, {0, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"where, minimum/maximum with NaN, abs, fma, f16 arithmetic",
     "kernel k(x: *f32, h: *f16, o: *f32, p: *f16) {\n"
     "  let i = arange(0, 256);\n"
     "  let v = load(x + i); let w = load(x + 255 - i);\n"
     "  let n = where(i % 17 == 0, nan, v);\n"
     "  store(o + i, minimum(n, w) - abs(maximum(v, w)));\n"
     "  store(o + 256 + i, fma(v, w, 1.0));\n"
     "  let a = load(h + i);\n"
     "  store(p + i, a * a); store(p + 256 + i, a - a / 3.0);\n"
     "}\n",
     4, {DT_F32, DT_F16, DT_F32, DT_F16}, {256, 256, 512, 512}, {0, 0, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"rand and randint with 64-bit offsets, negative seed",
     "kernel k(o: *f32, r: *u32, seed: i32, base: i64) {\n"
     "  let i = program_id(0) * 256 + arange(0, 256);\n"
     "  store(o + i, rand(seed, i));\n"
     "  store(r + i, randint(seed, base + (i as i64)));\n"
     "}\n",
     2, {DT_F32, DT_U32}, {1024, 1024}, {1, 1}, 2, {-98765, 0x10000000005LL}, 4, 0, 0, 0, 0},
    {"randint4x and rand4x (bit for bit), cat and interleave of them, in rank 1 and 2",
     "kernel k(x: *f32, w: *u32, u: *f32, seed: i32) {\n"
     "  let i = program_id(0) * 128 + arange(0, 128);\n"
     "  let (a, b, c, d) = randint4x(seed, i);\n"
     "  store(w + i, a); store(w + 512 + i, b); store(w + 1024 + i, c); store(w + 1536 + i, d);\n"
     "  let (u0, u1, u2, u3) = rand4x(seed, i);\n"
     "  let j = program_id(0) * 256 + arange(0, 256);\n"
     "  store(u + j, cat(u0, u3)); store(u + 1024 + j, interleave(u1, u2));\n"
     "  let m = load(x + (program_id(0) * 8 + arange(0, 8))[:, None] * 16 + arange(0, 16)[None, :]);\n"
     "  let rows = program_id(0) * 16 + arange(0, 16);\n"
     "  store(u + 2048 + rows[:, None] * 16 + arange(0, 16)[None, :], cat(m, m * 2.0));\n"
     "  store(u + 3072 + (program_id(0) * 8 + arange(0, 8))[:, None] * 32 + arange(0, 32)[None, :], interleave(m, m + 1.0));\n"
     "}\n",
     3, {DT_F32, DT_U32, DT_F32}, {512, 2048, 4096}, {0, 1, 1}, 1, {-4321}, 4, 0, 0, 0, 0},
    /* issue 40's gather and histogram (negative values: not counted), static_range, an unrolled
     * loop over a trip count not a multiple of 4, and cache controls (no a * b + c: bit for bit) */
    {"gather along both axes, a masked histogram, static_range, unroll and cache controls",
     "kernel k(x: *f32, ix: *i32, o: *f32, h: *i32, n: i32) {\n"
     "  let r = arange(0, 16)[:, None];\n"
     "  let c = arange(0, 32)[None, :];\n"
     "  let s = load(x + r * 32 + c, cache_modifier = \".cg\");\n"
     "  let i = load(ix + r * 32 + c, eviction_policy = \"evict_first\");\n"
     "  store(o + r * 32 + c, gather(s, i & 31, 1));\n"
     "  let rows = load(ix + arange(0, 8)[:, None] * 32 + c) & 15;\n"
     "  store(o + 512 + arange(0, 8)[:, None] * 32 + c, gather(s, rows, 0), cache_modifier = \".cs\");\n"
     "  let v = load(ix + arange(0, 1024), volatile = false) % 64;\n"
     "  store(h + arange(0, 64), histogram(v, 64, arange(0, 1024) < n));\n"
     "  var acc = zeros([32], f32);\n"
     "  for t in static_range(0, 4) { acc += load(x + t * 32 + arange(0, 32)) + (t as f32); }\n"
     "  for t in range(0, n / 128, unroll = 4) { acc += load(x + t * 32 + arange(0, 32)); }\n"
     "  store(o + 768 + arange(0, 32), acc);\n"
     "}\n",
     4, {DT_F32, DT_I32, DT_F32, DT_I32}, {512, 1024, 800, 64}, {0, 0, 1, 1}, 1, {1000}, 1, 0, 0, 0, 0},
    /* the GPU runs the asm, the interpreter the reference helper: equal bit for bit */
    {"inline_asm_elementwise: lop3 on u32, f32 through its bits ('r'), a scalar argument",
     "fn lop3_ref(a, b, c) { return (a & b) ^ c; }\n"
     "fn abs_ref(x) { return abs(x); }\n"
     "kernel k(x: *i32, y: *f32, o: *i32, p: *f32) {\n"
     "  let i = program_id(0) * 256 + arange(0, 256);\n"
     "  let a = load(x + i) as u32;\n"
     "  store(o + i, inline_asm_elementwise(\"lop3.b32 $0, $1, $2, $3, 0x6a;\", \"=r,r,r,r\",\n"
     "                                     (a, a >> 3, 12345 as u32), u32, true, 1, lop3_ref) as i32);\n"
     "  store(p + i, inline_asm_elementwise(\"and.b32 $0, $1, 0x7fffffff;\", \"=r,r\", load(y + i), f32, true,\n"
     "                                     reference = abs_ref));\n"
     "}\n",
     4, {DT_I32, DT_F32, DT_I32, DT_F32}, {1024, 1024, 1024, 1024}, {0, 0, 1, 1}, 0, {0}, 4, 0, 0, 0, 0},
    {"inline_asm_elementwise with pack: 4 u8 a 32-bit register, 2 i16, 2 f32 an asm (two outputs)",
     "fn shift_ref(x) { return ((x & 31) << 3) as i8; }\n"
     "fn xor_ref(a, b) { return a ^ b; }\n"
     "fn mul_ref(a, b) { return a * b; }\n"
     "kernel k(x: *i32, y: *f32, o: *i32, p: *f32) {\n"
     "  let i = program_id(0) * 256 + arange(0, 256);\n"
     "  let v = load(x + i);\n"
     "  store(o + i, inline_asm_elementwise(\"and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;\", \"=r,r\", v as u8, i8,\n"
     "                                     true, 4, shift_ref) as i32);\n"
     "  store(o + 1024 + i, inline_asm_elementwise(\"xor.b32 $0, $1, $2;\", \"=r,r,r\", (v as i16, (v >> 7) as i16), i16,\n"
     "                                            true, 2, xor_ref) as i32);\n"
     "  let f = load(y + i);\n"
     "  store(p + i, inline_asm_elementwise(\"mul.f32 $0, $2, $4; mul.f32 $1, $3, $5;\", \"=f,=f,f,f,f,f\",\n"
     "                                     (f, f + 1.0), f32, true, 2, mul_ref));\n"
     "}\n",
     4, {DT_I32, DT_F32, DT_I32, DT_F32}, {1024, 1024, 2048, 1024}, {0, 0, 1, 1}, 0, {0}, 4, 0, 0, 0, 0},
    {"register slices: rank 1 and both axes of a 2-D block, with a new axis, of pointers",
     "kernel k(x: *f32, o: *f32) {\n"
     "  let v = load(x + arange(0, 1024));\n"
     "  store(o + arange(0, 256), v[512:768]);\n"
     "  let m = load(x + arange(0, 32)[:, None] * 32 + arange(0, 32)[None, :]);\n"
     "  store(o + 256 + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :], m[8:16, 16:32]);\n"
     "  store(o + 384 + arange(0, 64)[:, None] + arange(0, 1)[None, :], v[64:128, None]);\n"
     "  store((o + 448 + arange(0, 128))[32:96], v[:64]);\n"
     "}\n",
     2, {DT_F32, DT_F32}, {1024, 576}, {0, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"topk along both axes (partial bitonic networks, then a gather), k = 1, 8 and the whole row",
     "kernel k(x: *f32, o: *f32, oi: *i32) {\n"
     "  let r = (program_id(0) * 16 + arange(0, 16))[:, None];\n"
     "  let v = load(x + r * 128 + arange(0, 128)[None, :]);\n"
     "  store(o + r * 8 + arange(0, 8)[None, :], topk(v, 8));\n"
     "  store(o + 512 + r + arange(0, 1)[None, :], topk(v, 1));\n"
     "  store(o + 1024 + r * 128 + arange(0, 128)[None, :], topk(v, 128, axis = 1));\n"
     "  store(o + 9216 + program_id(0) * 512 + arange(0, 4)[:, None] * 128 + arange(0, 128)[None, :], topk(v, 4, axis = 0));\n"
     "  store(oi + program_id(0) * 32 + arange(0, 32), topk(load(x + program_id(0) * 2048 + arange(0, 2048)) as i32, 32));\n"
     "}\n",
     3, {DT_F32, DT_F32, DT_I32}, {8192, 11264, 128}, {0, 1, 1}, 0, {0}, 4, 0, 0, 0, 0},
    /* sum adds in its layout's order (lanes, then warps), the interpreter in its own: within 1e-6 */
    {"reductions with keep_dims and dtype, a reverse cumsum, along both axes",
     "kernel k(x: *f32, n: *i32, o: *f32, oi: *i64) {\n"
     "  let r = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let v = load(x + r);\n"
     "  store(o + r, v - max(v, axis = 1, keep_dims = true));\n"
     "  store(o + 2048 + r, v * sum(v, 0, true));\n"
     "  store(o + 4096 + r, cumsum(v, axis = 1, reverse = true));\n"
     "  store(o + 6144 + r, cumsum(v, axis = 0, reverse = true) + (argmin(v, 0, keep_dims = true) as f32));\n"
     "  store(oi + arange(0, 32), sum(load(n + r) * 1000, axis = 1, dtype = i64));\n"
     "}\n",
     4, {DT_F32, DT_I32, DT_F32, DT_I64}, {2048, 2048, 8192, 32}, {0, 0, 1, 1}, 0, {0}, 1, 1e-6, 1e-6, 0, 0},
    /* 8 warps (the f32 block's), so the [512] i8 blocks are two bytes a thread: masked u16
     * accesses (the store to q and the loads of p: a program reading back what its other
     * threads stored would race, without debug_barrier) */
    {"masked i8 loads and stores of two elements a thread",
     "kernel k(x: *f32, p: *i8, q: *i8, o: *f32, n: i32) {\n"
     "  let i = arange(0, 2048);\n"
     "  let v = load(x + i);\n"
     "  let j = arange(0, 512);\n"
     "  store(q + j, (load(x + j, j < n) * 20.0) as i8, j < n);\n"
     "  store(o + i, v + (load(p + i / 4, i / 4 < n, other = 5) as f32));\n"
     "  store(o + 2048 + j, load(p + j, j < n, other = 9) as f32);\n"
     "}\n",
     4, {DT_F32, DT_I8, DT_I8, DT_F32}, {2048, 512, 512, 2560}, {0, 0, 1, 1}, 1, {400}, 1, 0, 0, 0, 0},
    {"randn and randn4x (Box-Muller through the approximate log and sqrt)",
     "kernel k(o: *f32, seed: i32, base: i64) {\n"
     "  let i = program_id(0) * 256 + arange(0, 256);\n"
     "  let off = base + (i as i64);\n"
     "  store(o + i, randn(seed, off));\n"
     "  let (n0, n1, n2, n3) = randn4x(seed, off);\n"
     "  store(o + 1024 + i, n0); store(o + 2048 + i, n1); store(o + 3072 + i, n2); store(o + 4096 + i, n3);\n"
     "}\n",
     1, {DT_F32}, {5120}, {1}, 2, {77, 0x10000000005LL}, 4, 1e-5, 1e-5, 0, 0},
    {"approximate math: exp, exp2, log, log2, sqrt, rsqrt, division",
     "kernel k(x: *f32, o: *f32) {\n"
     "  let i = arange(0, 512);\n"
     "  let v = abs(load(x + i)) + 0.01;\n"
     "  store(o + i, exp(v - 1.0)); store(o + 512 + i, exp2(v));\n"
     "  store(o + 1024 + i, log(v)); store(o + 1536 + i, log2(v));\n"
     "  store(o + 2048 + i, sqrt(v)); store(o + 2560 + i, rsqrt(v));\n"
     "  store(o + 3072 + i, 1.0 / v);\n"
     "}\n",
     2, {DT_F32, DT_F32}, {512, 3584}, {0, 1}, 0, {0}, 1, 1e-5, 0, 0, 0},
    /* blk's own math library: IEEE operations only, so bit for bit (tolerance 0);
     * inputs spread over each function's regions (v is N(0,1)); no a * b + c */
    {"math library (tanh, sigmoid, erf, expm1, log1p, sin, cos, pow), rounding, clamp, umulhi",
     "kernel k(x: *f32, o: *f32, u: *u32) {\n"
     "  let i = program_id(0) * 512 + arange(0, 512);\n"
     "  let v = load(x + i);\n"
     "  store(o + i, tanh(v * 3.0)); store(o + 2048 + i, sigmoid(v * 30.0));\n"
     "  store(o + 4096 + i, erf(v * 2.5)); store(o + 6144 + i, expm1(v * 20.0));\n"
     "  store(o + 8192 + i, log1p(abs(v) - 0.95)); store(o + 10240 + i, log1p(abs(v) * 1e6));\n"
     "  store(o + 12288 + i, floor(v * 7.0)); store(o + 14336 + i, ceil(v * 7.0));\n"
     "  store(o + 16384 + i, trunc(v * 7.0)); store(o + 18432 + i, rint(v * 7.0));\n"
     "  store(o + 20480 + i, round(v * 7.0)); store(o + 22528 + i, clamp(v, -0.5, 0.75));\n"
     "  store(u + i, umulhi(randint(7, i), 2654435761));\n"
     "  store(o + 24576 + i, sin(v * 100.0)); store(o + 26624 + i, cos(v * 1000.0));\n"
     "  store(o + 28672 + i, pow(abs(v) * 10.0, v * 8.0)); store(o + 30720 + i, pow(v, 3.0));\n"
     "}\n",
     3, {DT_F32, DT_F32, DT_U32}, {2048, 32768, 2048}, {0, 1, 1}, 0, {0}, 4, 0, 0, 0, 0},
    /* f16 and bf16 dots run on tensor cores, which add a k-group's exact
     * products in an order of their own: |gpu - cpu| <= 2 K 2^-24 sum |ab|;
     * here K = 32 in all (two chained dots of 16) and sum |ab| ~ 32 E|ab| =
     * 20 for N(0,1) inputs, so 8e-5: atol 1e-4. trans is exact. */
    {"dot f16 and bf16 with an accumulator on tensor cores, trans",
     TENSOR_CORE_DOTS_KERNEL,
     5, {DT_F16, DT_F16, DT_BF16, DT_F32, DT_F16}, {1024, 512, 1536, 2048, 1024}, {0, 0, 0, 1, 1}, 0, {0}, 1, 0, 1e-4, 0, 0},
    /* pipelined dot loops (on sm_90a, wgmma): one running down (a negative step: its copies must
     * still be issued), its dot left in flight across iterations; and one whose b is computed
     * from the loaded tile (staged by the dot itself, so its group must be waited for before the
     * next iteration restages it). The bound above at K = 128: 2 K 2^-24 sum |ab|, sum |ab| ~ 128
     * E|ab| = 82 (164 with b doubled): 2.5e-3, atol 3e-3 (a lost k-step errs by about 10) */
    {"pipelined dot loops: a negative step, and a b the dot stages itself",
     PIPELINED_DOT_LOOPS_KERNEL,
     4, {DT_F16, DT_F16, DT_F32, DT_F32}, {8192, 8192, 4096, 4096}, {0, 0, 1, 1}, 0, {0}, 1, 0, 3e-3, 0, 0},
    /* an outer loop's load feeding an inner loop's dot (loaded once before the inner loop), the
     * inner loop's load pipelined; 4 x 2 x 32 = 256 terms: the bound above is 5e-3, atol 1e-2 */
    {"a dot in an inner loop with an operand loaded by the outer loop",
     NESTED_LOOP_DOT_KERNEL,
     3, {DT_F16, DT_F16, DT_F32}, {8192, 16384, 4096}, {0, 0, 1}, 0, {0}, 1, 0, 1e-2, 0, 0},
    /* an outer loop's dot around an inner pipelined loop: 4 x (64 + 4 x 64) = 1280 terms; the bound
     * above is about 0.1, atol 0.1 (the rings in one place erred by about 60) */
    {"a dot in an outer loop around an inner pipelined loop", NESTED_RINGS_KERNEL,
     5, {DT_F16, DT_F16, DT_F16, DT_F16, DT_F32}, {4352, 16384, 4352, 16384, 4096}, {0, 0, 0, 0, 1}, 0, {0}, 1, 0, 0.1, 0, 0},
    /* rows moved by a while loop's carried value (TMA read the wrong rows: errors about 80); 256 terms */
    {"pipelined loads whose rows a while loop moves", WHILE_CARRIED_ROWS_KERNEL,
     3, {DT_F16, DT_F16, DT_F32}, {8448, 16384, 8192}, {0, 0, 1}, 1, {2}, 1, 0, 1e-2, 0, 0},
    /* an "ieee" f32 dot takes the FMA path, the interpreter's order: bit for bit */
    {"dot f32 ieee",
     "kernel k(a: *f32, b: *f32, o: *f32) {\n"
     "  let i = arange(0, 32); let j = arange(0, 16);\n"
     "  let x = load(a + i[:, None] * 32 + i[None, :]);\n"
     "  let y = load(b + i[:, None] * 16 + j[None, :]);\n"
     "  store(o + i[:, None] * 16 + j[None, :], dot(x, y));\n"
     "}\n",
     3, {DT_F32, DT_F32, DT_F32}, {1024, 512, 512}, {0, 0, 1}, 0, {0}, 1, 0, 0, 0, 0},
    /* tf32 and tf32x3 run on tensor cores (m16n8k8): the operands are rounded
     * (split) as the interpreter does, so the products are exact, and only
     * the order of the f32 sums differs, as for f16 above: K = 32, atol 1e-4.
     * A dropped low part (tf32x3 computed as tf32) errs by about
     * 2^-11 sum |ab| ~ 1e-2, far outside it. */
    {"dot f32 tf32 and tf32x3 on tensor cores",
     "kernel k(a: *f32, b: *f32, o: *f32) {\n"
     "  let i = arange(0, 32); let j = arange(0, 16);\n"
     "  let x = load(a + i[:, None] * 32 + i[None, :]);\n"
     "  let y = load(b + i[:, None] * 16 + j[None, :]);\n"
     "  store(o + i[:, None] * 16 + j[None, :], dot(x, y, input_precision = \"tf32\"));\n"
     "  store(o + 512 + i[:, None] * 16 + j[None, :], dot(x, y, input_precision = \"tf32x3\"));\n"
     "}\n",
     3, {DT_F32, DT_F32, DT_F32}, {1024, 512, 1024}, {0, 0, 1}, 0, {0}, 1, 0, 1e-4, 0, 0},
    /* an fp8 dot of K = 256 promotes every 128 terms (language.md §7), on sm_90a
     * by two sets of sums taking turns: 128 products of 2^8 x 2^9 sum to 2^24
     * (exact in any accumulator), 128 of 1 x 1 to 128, and 2^24 + 128 is exact
     * in f32; summed as one run by wgmma (about 13 bits) the ones would be lost.
     * The operands are written by the kernel, then copied by the loop's ring. */
    {"fp8 dot promoting every 128 terms (wgmma's two sets of sums on sm_90a)",
     "kernel k(x: *f32, a: *f8e5m2 @align(16), bt: *f8e5m2 @align(16), o: *f32) {\n"
     "  let i = arange(0, 64); let j = arange(0, 256);\n"
     "  let first = j[None, :] < 128;\n"
     "  store(a + i[:, None] * 256 + j[None, :], where(first, 256.0, 1.0) + zeros([64, 256], f32));\n"
     "  store(bt + i[:, None] * 256 + j[None, :], where(first, 512.0, 1.0) + zeros([64, 256], f32));\n"
     "  debug_barrier();\n"
     "  var acc = zeros([64, 64], f32);\n"
     "  for k in range(0, 256, 256) {\n"
     "    let fa = load(a + i[:, None] * 256 + (k + j)[None, :]);\n"
     "    let fb = load(bt + i[:, None] * 256 + (k + j)[None, :]);\n"
     "    acc = dot(fa, trans(fb), acc);\n"
     "  }\n"
     "  store(o + i[:, None] * 64 + i[None, :], acc);\n"
     "}\n",
     4, {DT_F32, DT_F8E5M2, DT_F8E5M2, DT_F32}, {16, 16384, 16384, 4096}, {0, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    /* 8-bit integer dots of mixed signs (u8 x i8 and i8 x u8) on sm_90a's wgmma (both K-major:
     * b transposed; the module's PTX declares ISA 8.4): bytes over their whole ranges, so a u8
     * read as i8 (or the reverse) would change the sums; exact i32, bit for bit */
    {"8-bit integer dots of mixed signs (u8 x i8, i8 x u8; wgmma on sm_90a)",
     "kernel k(x: *f32, a: *u8 @align(16), b: *i8 @align(16), o: *i32 @align(16)) {\n"
     "  let i = arange(0, 128); let j = arange(0, 64); let n = arange(0, 64);\n"
     "  store(a + i[:, None] * 64 + j[None, :], ((i[:, None] * 37 + j[None, :] * 11) % 256) as u8);\n"
     "  store(b + i[:, None] * 64 + j[None, :], ((i[:, None] * 13 + j[None, :] * 29) % 256 - 128) as i8);\n"
     "  debug_barrier();\n"
     "  let ua = load(a + i[:, None] * 64 + j[None, :]);\n"
     "  store(o + i[:, None] * 64 + n[None, :], dot(ua, trans(load(b + n[:, None] * 64 + j[None, :]))));\n"
     "  let sa = load(b + i[:, None] * 64 + j[None, :]);\n"
     "  store(o + 8192 + i[:, None] * 64 + n[None, :], dot(sa, trans(load(a + n[:, None] * 64 + j[None, :]))));\n"
     "}\n",
     4, {DT_F32, DT_U8, DT_I8, DT_I32}, {16, 8192, 8192, 16384}, {0, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    /* the same promotion on mma.sync (b not K-major: wgmma refuses it), whose f32
     * sums take 16 products a step: 128 products of 2^8 x 2^9 sum to 2^24, then
     * one 1 x 1 a step; summed on as one run each 1 would round away (2^24 + 1),
     * while the second run's own sum, 8, is kept: 2^24 + 8 */
    {"fp8 dot promoting every 128 terms on mma.sync",
     "kernel k(x: *f32, a: *f8e5m2, b: *f8e5m2, o: *f32) {\n"
     "  let i = arange(0, 64); let j = arange(0, 256); let n = arange(0, 32);\n"
     "  let first = j < 128;\n"
     "  let av = where(first, 256.0, where(j % 16 == 0, 1.0, 0.0));\n"
     "  store(a + i[:, None] * 256 + j[None, :], av[None, :] + zeros([64, 256], f32));\n"
     "  store(b + j[:, None] * 32 + n[None, :], where(first, 512.0, 1.0)[:, None] + zeros([256, 32], f32));\n"
     "  debug_barrier();\n"
     "  let fa = load(a + i[:, None] * 256 + j[None, :]);\n"
     "  let fb = load(b + j[:, None] * 32 + n[None, :]);\n"
     "  store(o + i[:, None] * 32 + n[None, :], dot(fa, fb));\n"
     "}\n",
     4, {DT_F32, DT_F8E5M2, DT_F8E5M2, DT_F32}, {16, 16384, 8192, 2048}, {0, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    /* 128 KiB of dynamic shared memory: over the 48 KiB a launch gets without
     * opting in, under sm_90's 227 KiB (issue 9) */
    /* fp8 p converted from an accumulator as a dot's a (attention's p V; on sm_90a staged in
     * shared memory for wgmma): small integers, so every sum is exact on any accumulator and the
     * GPU equals the interpreter bit for bit; not promoted (into zeros, and 2^30), and promoted
     * (into ones) */
    {"fp8 dot with a converted from an accumulator (attention's p), promoted and not",
     "kernel k(x: *f32, a: *f16 @align(16), b: *f16 @align(16), vt: *f8e4m3 @align(16), o: *f32) {\n"
     "  let i = arange(0, 64); let j = arange(0, 32); let n = arange(0, 64);\n"
     "  store(a + i[:, None] * 32 + j[None, :], ((i[:, None] * 7 + j[None, :] * 5) % 3 - 1) as f16);\n"
     "  store(b + j[:, None] * 64 + n[None, :], ((j[:, None] * 3 + n[None, :] * 2) % 3 - 1) as f16);\n"
     "  store(vt + n[:, None] * 64 + n[None, :], ((n[:, None] * 5 + n[None, :] * 7) % 3 - 1) as f8e4m3);\n"
     "  debug_barrier();\n"
     "  let p = dot(load(a + i[:, None] * 32 + j[None, :]), load(b + j[:, None] * 64 + n[None, :])) as f8e4m3;\n"
     "  let v = load(vt + n[:, None] * 64 + n[None, :]);\n"
     "  let at = i[:, None] * 64 + n[None, :];\n"
     "  store(o + at, dot(p, trans(v)));\n"
     "  store(o + 4096 + at, dot(p, trans(v), max_num_imprecise_acc = 1073741824));\n"
     "  store(o + 8192 + at, dot(p, trans(v), full([64, 64], 1.0, f32)));\n"
     "}\n",
     5, {DT_F32, DT_F16, DT_F16, DT_F8E4M3, DT_F32}, {16, 2048, 2048, 4096, 12288}, {0, 1, 1, 1, 1}, 0, {0}, 1, 0, 0,
     0, 0},
    /* f32 to fp8 (cvt.rn.satfinite from sm_90, then the codes saturation hides): every multiple of
     * 1/16 below 256 (each tie of both formats among them) at 2^-140 (f32 subnormals), 2^-12
     * (fp8 subnormals), 2^-4 and 2^4 (e4m3's overflow at 464, a tie that stays), times 256 for
     * e5m2's (61440, a tie that goes up); signs alternating; inf, NaN and zero of both signs */
    {"f32 to f8e4m3 and f8e5m2 on ties, subnormals, the overflow boundary, inf and NaN (bit for bit)",
     "kernel k(e4: *f8e4m3, e5: *f8e5m2) {\n"
     "  let o = program_id(0) * 1024 + arange(0, 1024);\n"
     "  let s = o / 4096;\n"
     "  let scale = where(s == 0, 7.174648137343064e-43, where(s == 1, 0.000244140625, where(s == 2, 0.0625, 16.0)));\n"
     "  var v = ((o % 4096) as f32) * 0.0625 * scale;\n"
     "  v = where(o % 4096 >= 4094, inf, where(o % 4096 >= 4092, nan, where(o % 4096 == 1, 0.0, v)));\n"
     "  v = where(o % 2 == 1, -v, v);\n"
     "  store(e4 + o, v as f8e4m3); store(e5 + o, v as f8e5m2); store(e5 + 16384 + o, (v * 256.0) as f8e5m2);\n"
     "}\n",
     2, {DT_F8E4M3, DT_F8E5M2}, {16384, 32768}, {1, 1}, 0, {0}, 16, 0, 0, 0, 0},
    {"narrow and wide dtypes: fp8, i8, u8, i16, u16, u64, f64 conversions (saturating, through f32) and arithmetic",
     "kernel k(x: *f32, e4: *f8e4m3, e5: *f8e5m2, n: *i8, w: *f64, u: *u64) {\n"
     "  let o = program_id(0) * 1024 + arange(0, 1024);\n"
     "  let v = load(x + o) * ((1 << (o % 24)) as f32) * 0.0009765625;\n" /* exact powers of two: 2^-10 .. 2^13 */
     "  store(e4 + o, v as f8e4m3); store(e5 + o, v);\n"
     "  store(e4 + 4096 + o, ((v as f8e4m3) as f32 * 0.5) as f8e4m3);\n"
     "  store(n + o, v as i8); store(n + 4096 + o, ((v as u8) / 3) as i8 + (v as i16 >> 3) as i8);\n"
     "  store(n + 8192 + o, ((v as u16) % 1000) as i8);\n"
     "  let d = v as f64;\n"
     "  store(w + o, d * 0.1 + (v as f16) as f64); store(w + 4096 + o, (d as f16) as f64 + (d as f8e5m2) as f64);\n"
     "  let q = (v as i64) as u64 * 0x9E3779B97F4A7C15;\n"
     "  store(u + o, q / 7 + (q >> 3) + (q > 0x8000000000000000) as u64);\n"
     "}\n",
     6, {DT_F32, DT_F8E4M3, DT_F8E5M2, DT_I8, DT_F64, DT_U64}, {4096, 8192, 4096, 12288, 8192, 4096}, {0, 1, 1, 1, 1, 1},
     0, {0}, 4, 0, 0, 0, 0},
    {"reductions of i8, u16, u64 and f64 (max, min, integer sums) over both axes",
     "kernel k(x: *f32, a: *i8, b: *u16, c: *u64, d: *f64) {\n"
     "  let i = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let v = load(x + i) * 100.0;\n"
     "  store(a + arange(0, 32), max(v as i8, axis = 1)); store(a + 32 + arange(0, 64), min(v as i8, axis = 0));\n"
     "  store(b + arange(0, 64), (sum(v as u16, axis = 0) & 65535) as u16);\n"
     "  store(c + arange(0, 32), max((v as i64) as u64, axis = 1));\n"
     "  store(d + arange(0, 64), max(v as f64, axis = 0)); store(d + 64 + arange(0, 32), min(v as f64 * 0.3, axis = 1));\n"
     "}\n",
     5, {DT_F32, DT_I8, DT_U16, DT_U64, DT_F64}, {2048, 96, 64, 32, 96}, {0, 1, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"cumsum and cumprod over both axes (f32 bit for bit: the same log2 steps), i32, f64",
     "kernel k(x: *f32, a: *f32, b: *f32, c: *i32, d: *f64) {\n"
     "  let r = arange(0, 1024);\n"
     "  let v = load(x + r);\n"
     "  store(a + r, cumsum(v));\n"
     "  let i = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let w = load(x + i);\n"
     "  store(b + i, cumsum(w, axis = 0)); store(b + 2048 + i, cumprod(where(w > 0.0, 1.01, 0.99), axis = 1));\n"
     "  store(c + i, cumsum((w * 1000.0) as i32, axis = 1));\n"
     "  store(d + i, cumsum(w as f64, axis = 0) * 3.0);\n"
     "}\n",
     5, {DT_F32, DT_F32, DT_F32, DT_I32, DT_F64}, {2048, 1024, 4096, 2048, 2048}, {0, 1, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"flip, reshape, join and split, sort (bitonic: partner exchanges) along both axes and descending",
     "kernel k(x: *f32, n: *i32, a: *f32, b: *f32, c: *i32) {\n"
     "  let i = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let w = load(x + i);\n"
     "  store(a + i, flip(w, 0)); store(a + 2048 + i, flip(w, 1));\n"
     "  store(a + 4096 + arange(0, 2048), reshape(w, [2048]));\n"
     "  let (p, q) = split(reshape(w, [1024, 2]));\n"
     "  store(a + 6144 + arange(0, 2048), reshape(join(q, p), [2048]));\n"
     "  store(b + i, sort(w, 1)); store(b + 2048 + i, sort(w, 0, true));\n"
     "  store(b + 4096 + arange(0, 1024), sort(load(x + arange(0, 1024))));\n"
     "  store(c + arange(0, 2048), sort(load(n + arange(0, 2048)), descending = true));\n"
     "}\n",
     5, {DT_F32, DT_I32, DT_F32, DT_F32, DT_I32}, {2048, 2048, 8192, 5120, 2048}, {0, 0, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"reduce and associative_scan with combine helpers: tuples, reverse, f32 in the defined orders",
     "fn compose(a1, b1, a2, b2) { return (a1 * a2, b1 * a2 + b2); }\n"
     "fn add(x, y) { return x + y; }\n"
     "fn first_max(va, ia, vb, ib) { let b_wins = vb > va; return (where(b_wins, vb, va), where(b_wins, ib, ia)); }\n"
     "kernel k(x: *f32, n: *i32, f: *f32, g: *i32, h: *i32) {\n"
     "  let i = arange(0, 32)[:, None] * 64 + arange(0, 64)[None, :];\n"
     "  let w = load(x + i); let v = load(n + i);\n"
     "  store(f + arange(0, 32), reduce(w, 1, add)); store(f + 32 + arange(0, 64), reduce(w, 0, add));\n"
     "  store(f + 96 + i, associative_scan(w, 0, add)); store(f + 2144 + i, associative_scan(w, 1, add, true));\n"
     "  let r = arange(0, 1024);\n"
     "  let l = load(x + r);\n"
     "  store(f + 4192, reduce(l, 0, add)); store(f + 4193 + r, associative_scan(l, 0, add));\n"
     "  let (m, mi) = reduce((l, r), 0, first_max);\n"
     "  store(f + 5217, m); store(g, mi);\n"
     "  let (pa, pb) = reduce((v % 5, v), 1, compose);\n"
     "  store(g + 1 + arange(0, 32), pa); store(g + 33 + arange(0, 32), pb);\n"
     "  let (sa, sb) = associative_scan((v % 5, v), 1, compose);\n"
     "  store(h + i, sb);\n"
     "  let (ta, tb) = associative_scan((v % 3, v), 0, compose, reverse = true);\n"
     "  store(h + 2048 + i, tb);\n"
     "}\n",
     5, {DT_F32, DT_I32, DT_F32, DT_I32, DT_I32}, {2048, 2048, 5218, 65, 4096}, {0, 0, 1, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"sort and reduce on narrow and wide types (register swaps, shuffles of 1, 8, 16 and 64 bits, shared memory)",
     "fn either(a, b) { return a | b; }\n"
     "fn add(a, b) { return a + b; }\n"
     "fn larger(a, b) { return maximum(a, b); }\n"
     "kernel k(x: *f32, h: *f16, i: *i8, d: *f64, u: *u64, b: *i32) {\n"
     "  let r = arange(0, 2048);\n"
     "  let v = load(x + r);\n"
     "  store(h + r, sort(v as f16, descending = true)); store(i + r, sort((v * 40.0) as i8));\n"
     "  store(d + r, sort(v as f64)); store(u + r, sort(((v * 1e9) as i64) as u64));\n"
     "  let m = reshape(v, [16, 128]);\n"
     "  store(b + arange(0, 16), reduce(m > 2.0, 1, either) as i32);\n"
     "  store(b + 16 + arange(0, 128), reduce((m * 100.0) as i16, 0, larger) as i32);\n"
     "  store(d + 2048 + arange(0, 16), reduce(m as f64, 1, add)); store(d + 2064, reduce(v as f64, 0, add));\n"
     "}\n",
     6, {DT_F32, DT_F16, DT_I8, DT_F64, DT_U64, DT_I32}, {2048, 2048, 2048, 2065, 2048, 144}, {0, 1, 1, 1, 1, 1},
     0, {0}, 1, 0, 0, 0, 0},
    {"f64 sqrt, floor, ceil, trunc, rint and round (exact: bit for bit), on ties too",
     "kernel k(x: *f32, y: *f64) {\n"
     "  let o = arange(0, 1024);\n"
     "  let v = load(x + o) as f64 * 3.0;\n"
     "  let h = rint(v * 4.0) * 0.5;\n"
     "  store(y + o, sqrt(abs(v))); store(y + 1024 + o, floor(h) + ceil(v) * 1000.0);\n"
     "  store(y + 2048 + o, trunc(h) + trunc(v) * 1000.0); store(y + 3072 + o, rint(h) + rint(v) * 1000.0);\n"
     "  store(y + 4096 + o, round(h) + round(v) * 1000.0); store(y + 5120 + o, sqrt(v));\n"
     "}\n",
     2, {DT_F32, DT_F64}, {1024, 6144}, {0, 1}, 0, {0}, 1, 0, 0, 0, 0},
    {"a segmented scan over (i1, f64) and a reduce over (i8, f64, i16): arrays of mixed widths in shared memory",
     "fn seg(fa, va, fb, vb) { return (fa | fb, where(fb, vb, va + vb)); }\n"
     "fn pick(ca, va, ia, cb, vb, ib) { let b_wins = vb > va; return (where(b_wins, cb, ca), maximum(va, vb), where(b_wins, ib, ia)); }\n"
     "kernel k(x: *f32, y: *f64, z: *i32) {\n"
     "  let o = arange(0, 1024);\n"
     "  let v = load(x + o);\n"
     "  let (f, s) = associative_scan((v > 1.0, v as f64), 0, seg);\n"
     "  store(y + o, s);\n"
     "  let (c, m, i) = reduce(((v * 50.0) as i8, v as f64, o as i16), 0, pick);\n"
     "  store(y + 1024, m); store(z, c as i32); store(z + 1, i as i32);\n"
     "}\n",
     3, {DT_F32, DT_F64, DT_I32}, {1024, 1025, 2}, {0, 1, 1}, 0, {0}, 1, 0, 0, 0, 0},
    /* blocks of three dimensions, built as their 2-D parts (split3d.c); integers, so every
     * sum is exact in any order: bit for bit */
    {"3-D blocks: index math, reductions and scans along each axis, flip, gather, trans, permute, reshape",
     "fn add(a, b) { return a + b; }\n"
     "kernel k(x: *i32, o: *i32, r: *i32) {\n"
     "  let i = arange(0, 4)[:, None, None] * 128 + arange(0, 8)[None, :, None] * 16 + arange(0, 16)[None, None, :];\n"
     "  let v = load(x + program_id(0) * 512 + i) % 1000;\n"
     "  let at = o + program_id(0) * 4096 + i;\n"
     "  store(at, flip(v, 0) + flip(v, 2) * 7);\n"
     "  store(at + 512, cumsum(v, 0) + cumsum(v, 1) * 3 + associative_scan(v, 2, add) * 5);\n"
     "  store(at + 1024, gather(v, v & 3, 0) + gather(v, v & 15, 2));\n"
     "  store(at + 1536, reshape(permute(v, [2, 0, 1]), [4, 8, 16]));\n"
     "  store(at + 2048, reshape(permute(v, [1, 2, 0]), [4, 8, 16]) + reshape(trans(v), [4, 8, 16]) * 3);\n"
     "  store(at + 2560, reshape(reshape(v, [32, 16]) * 2, [4, 8, 16]) + sort(v, 1));\n"
     "  store(at + 3072, broadcast_to(expand_dims(sum(v, 0), 0), [4, 8, 16]) + broadcast_to(max(v, 1, keep_dims = true), [4, 8, 16]));\n"
     "  let (lo, hi) = split(reshape(v, [4, 64, 2]));\n"
     "  store(o + program_id(0) * 4096 + 3584 + arange(0, 4)[:, None] * 64 + arange(0, 64)[None, :], lo - hi * 3);\n"
     "  let j = program_id(0) * 256 + arange(0, 8)[:, None] * 16 + arange(0, 16)[None, :];\n"
     "  store(r + j, argmax(v, 0) + argmin(v, 0) * 4 + sum(v, 0) * 16);\n"
     "  let base = r + program_id(0) * 256;\n"
     "  store(base + 128 + arange(0, 32), reshape(argmax(v, 2) + min(v, 2) * 16, [32]));\n"
     "  store(base + 160 + arange(0, 64), reshape(reduce(v, 1, add) + argmin(v, 1) * 3, [64]));\n"
     "}\n",
     3, {DT_I32, DT_I32, DT_I32}, {1024, 8192, 512}, {0, 1, 1}, 0, {0}, 2, 0, 0, 0, 0},
    /* a batched dot: f16 products are exact and the sums are f32 in the tensor cores' order,
     * not the interpreter's: within 1e-5 relative of the magnitudes (K = 32) */
    {"3-D blocks: a batched f16 dot [4, 32, 32] x [4, 32, 16] and a loop carrying a 3-D accumulator",
     "kernel k(a: *f16, b: *f16, c: *f32) {\n"
     "  let bi = arange(0, 4)[:, None, None];\n"
     "  let ma = load(a + bi * 1024 + arange(0, 32)[None, :, None] * 32 + arange(0, 32)[None, None, :]);\n"
     "  let mb = load(b + bi * 512 + arange(0, 32)[None, :, None] * 16 + arange(0, 16)[None, None, :]);\n"
     "  var acc = zeros([4, 32, 16], f32);\n"
     "  for t in range(0, 2) { acc = dot(ma, mb, acc); }\n"
     "  store(c + bi * 512 + arange(0, 32)[None, :, None] * 16 + arange(0, 16)[None, None, :], acc);\n"
     "}\n",
     3, {DT_F16, DT_F16, DT_F32}, {4096, 2048, 2048}, {0, 0, 1}, 0, {0}, 1, 1e-5, 1e-4, 0, 0},
    {"a [256, 128] f32 transpose through 128 KiB of shared memory, from 2 programs",
     "kernel k(x: *f32, o: *f32) {\n"
     "  let r = arange(0, 256); let c = arange(0, 128);\n"
     "  let tile = load(x + program_id(0) * 32768 + r[:, None] * 128 + c[None, :]) - 3.0;\n"
     "  store(o + program_id(0) * 32768 + c[:, None] * 256 + r[None, :], trans(tile) + 1.0);\n"
     "}\n",
     2, {DT_F32, DT_F32}, {65536, 65536}, {0, 1}, 0, {0}, 2, 0, 0, 0, 0},
};

static size_t esize(DType d) { return (size_t)dtype_bytes(d); }

static void fill(void *p, DType d, int n, RefRng *rng) {
    for (int i = 0; i < n; i++) {
        double v = ref_normal(rng);
        switch (d) {
        case DT_F32: ((float *)p)[i] = (float)v; break;
        case DT_F16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
        case DT_BF16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); break;
        case DT_I32: case DT_U32: ((int32_t *)p)[i] = (int32_t)(v * 1e6); break;
        case DT_I8: ((int8_t *)p)[i] = (int8_t)(v * 40); break;
        default: /* the cases fill only the types above */
            memset((char *)p + (size_t)i * esize(d), 0, esize(d));
            break;
        }
    }
}

static double as_double(const void *p, DType d, int i) {
    const Fp8Format *fp8 = fp8_format(d);
    if (fp8) return fp8_to_f32(((const uint8_t *)p)[i], fp8);
    switch (d) {
    case DT_F32: return ((const float *)p)[i];
    case DT_F64: return ((const double *)p)[i];
    case DT_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    case DT_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    case DT_I16: return ((const int16_t *)p)[i];
    case DT_U16: return ((const uint16_t *)p)[i];
    case DT_U32: return ((const uint32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    case DT_U64: return (double)((const uint64_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

/* Runs one case with a launcher; buffers get the same deterministic inputs. */
static char *run_case(const ExampleRunner *run, const char *dir, const OpCase *c, void **bufs) {
    char path[512];
    snprintf(path, sizeof path, "%s/k.blk", dir);
    FILE *f = fopen(path, "w");
    if (!f) return strdup("cannot write the kernel");
    fputs(c->src, f);
    fclose(f);
    RefRng rng = {42};
    ExampleBuffer ib[6];
    ExampleArg args[10];
    for (int b = 0; b < c->nbufs; b++) {
        size_t bytes = esize(c->dt[b]) * (size_t)c->count[b];
        bufs[b] = calloc(1, bytes);
        if (!c->output[b] || b == 0) fill(bufs[b], c->dt[b], c->count[b], &rng);
        if (c->output[b] && c->nbufs > 1) memset(bufs[b], 0, bytes);
        ib[b] = (ExampleBuffer){bufs[b], bytes, NULL};
        args[b].p = bufs[b];
    }
    for (int s = 0; s < c->nscalars; s++) args[c->nbufs + s].i = c->scalars[s];
    ExampleKernel k = {"k.blk", "k", {NULL}};
    uint32_t grid[3] = {c->programs, c->grid_y ? c->grid_y : 1, c->grid_z ? c->grid_z : 1};
    return run->launch(run->ctx, &k, args, c->nbufs + c->nscalars, grid, ib, c->nbufs);
}

int main(int argc, char **argv) {
    char dir[] = "/tmp/blk_gpu_ops_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    InterpLaunchCtx ictx = {dir, {0}};
    ExampleRunner cpu = {example_launch_interp, &ictx, NULL}, other = cpu;
    RuntimeLaunchCtx gpu = {dir, NULL, NULL, false};
    bool on_gpu = true;
    const char *only = NULL; /* run the cases whose name contains this */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--persistent") == 0) gpu.persistent = true;
        else if (i + 1 < argc && strcmp(argv[i], "--device") == 0) on_gpu = strcmp(argv[++i], "cpu-vs-cpu") != 0;
        else if (i + 1 < argc && strcmp(argv[i], "--only") == 0) only = argv[++i];
    }
    if (on_gpu) {
        if (blk_context_create_cuda(0, &gpu.ctx)) {
            fprintf(stderr, "gpu_ops: %s\n", blk_last_error());
            return 1;
        }
        other = (ExampleRunner){example_launch_runtime, &gpu, NULL};
        printf("interpreter vs %s, through the runtime API%s\n\n", blk_context_device(gpu.ctx),
               gpu.persistent ? ", kernels built persistent" : "");
    }
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const OpCase *c = &cases[i];
        if (only && !strstr(c->name, only)) continue;
        ran++;
        void *a[6] = {0}, *b[6] = {0};
        char *e1 = run_case(&cpu, dir, c, a), *e2 = run_case(&other, dir, c, b);
        char detail[256] = "";
        if (e1 || e2) snprintf(detail, sizeof detail, "%s", e1 ? e1 : e2);
        for (int k = 0; k < c->nbufs && !detail[0]; k++) {
            if (!c->output[k]) continue;
            for (int j = 0; j < c->count[k] && !detail[0]; j++) {
                double x = as_double(a[k], c->dt[k], j), y = as_double(b[k], c->dt[k], j);
                bool same = memcmp((char *)a[k] + j * esize(c->dt[k]), (char *)b[k] + j * esize(c->dt[k]),
                                   esize(c->dt[k])) == 0 || (x != x && y != y);
                if (!same && (c->rtol > 0 || c->atol > 0)) same = fabs(x - y) <= c->rtol * fabs(x) + (c->atol > 0 ? c->atol : 1e-6);
                if (!same)
                    snprintf(detail, sizeof detail, "buffer %d element %d: interpreter %.9g, GPU %.9g", k, j, x, y);
            }
        }
        printf("%-4s %s%s%s\n", detail[0] ? "FAIL" : "ok", c->name, detail[0] ? ": " : "", detail);
        failed += detail[0] != 0;
        free(e1), free(e2);
        for (int k = 0; k < 6; k++) free(a[k]), free(b[k]);
    }
    printf("\n%d of %d cases differ\n", failed, ran);
    blk_context_destroy(gpu.ctx);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return failed ? 1 : 0;
}
