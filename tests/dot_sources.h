/* dot_sources.h: kernels that both the PTX tests (test_ptx.c: how they
 * compile) and the GPU checks (gpu/gpu_ops.c: that they compute what the
 * interpreter does) use. */
#ifndef BLK_TESTS_DOT_SOURCES_H
#define BLK_TESTS_DOT_SOURCES_H

/* An outer loop's load feeding a dot in an inner loop whose own load is
 * pipelined: 4 x 2 dots of K = 32 into one [64, 64] accumulator. */
#define NESTED_LOOP_DOT_KERNEL                                                                          \
    "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32) {\n"                                   \
    "  let m = arange(0, 64); let n = arange(0, 64); let kk = arange(0, 32);\n"                        \
    "  var acc = zeros([64, 64], f32);\n"                                                              \
    "  for i in range(0, 4, 1) {\n"                                                                    \
    "    let x = load(a + m[:, None] * 128 + (i * 32 + kk)[None, :]);\n"                                \
    "    for j in range(0, 2, 1) {\n"                                                                  \
    "      acc = dot(x, load(b + (i * 32 + kk)[:, None] * 128 + (j * 64 + n)[None, :]), acc);\n"        \
    "    }\n"                                                                                          \
    "  }\n"                                                                                            \
    "  store(o + m[:, None] * 64 + n[None, :], acc);\n"                                                \
    "}\n"

/* Two dots of a loop reading one operand made before it (x, ROWS x 64, ROWS
 * a string: "64" takes wgmma on sm_90a, "32" mma.sync). */
#define SHARED_OPERAND_DOTS_KERNEL(ROWS)                                                               \
    "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32 @align(16), n: i32) {\n"                 \
    "  let i = arange(0, 64); let r = arange(0, " ROWS ");\n"                                          \
    "  let x = load(a + r[:, None] * 64 + i[None, :]);\n"                                              \
    "  var acc = zeros([" ROWS ", 64], f32);\n"                                                        \
    "  for s in range(0, n, 64) {\n"                                                                   \
    "    let y = load(b + (s + i)[:, None] * 64 + i[None, :]);\n"                                      \
    "    acc = dot(x, y, acc);\n"                                                                      \
    "    acc = dot(x, trans(y), acc);\n"                                                               \
    "  }\n"                                                                                            \
    "  store(o + r[:, None] * 64 + i[None, :], acc);\n"                                                \
    "}\n"

/* An outer loop with a dot of its own around an inner loop that pipelines:
 * only the inner loop gets a ring (the outer one's would be in the same
 * place; both had one, and the inner copies overwrote the outer's tiles). */
#define NESTED_RINGS_KERNEL                                                                             \
    "kernel k(a: *f16 @align(16), b: *f16 @align(16), c: *f16 @align(16), d: *f16 @align(16), o: *f32) {\n" \
    "  let i = arange(0, 64);\n"                                                                        \
    "  var pa = a + i[:, None] * 64 + i[None, :];\n"                                                    \
    "  var pb = b + i[:, None] * 64 + i[None, :];\n"                                                    \
    "  var acc = zeros([64, 64], f32);\n"                                                               \
    "  for k in range(0, 4, 1) {\n"                                                                     \
    "    acc = dot(load(pa), load(pb), acc);\n"                                                         \
    "    var pc = c + i[:, None] * 64 + i[None, :];\n"                                                  \
    "    var pd = d + i[:, None] * 64 + i[None, :];\n"                                                  \
    "    var acc2 = zeros([64, 64], f32);\n"                                                            \
    "    for m in range(0, 4, 1) {\n"                                                                   \
    "      acc2 = dot(load(pc), load(pd), acc2);\n"                                                     \
    "      pc += 64;\n"                                                                                 \
    "      pd += 4096;\n"                                                                               \
    "    }\n"                                                                                           \
    "    acc += acc2;\n"                                                                                \
    "    pa += 64;\n"                                                                                   \
    "    pb += 4096;\n"                                                                                 \
    "  }\n"                                                                                             \
    "  store(o + i[:, None] * 64 + i[None, :], acc);\n"                                                 \
    "}\n"

/* A for loop's loads inside a while loop whose first carried value moves
 * a's rows (2i, then 63 - i + i): not the arange-and-parameter form TMA
 * needs (a while loop's values were once taken for uniform ones). */
#define WHILE_CARRIED_ROWS_KERNEL                                                                       \
    "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32 @align(16), n: i32) {\n"                  \
    "  let i = arange(0, 64);\n"                                                                        \
    "  var c = i;\n"                                                                                    \
    "  var j = 0;\n"                                                                                    \
    "  while j < n {\n"                                                                                 \
    "    var pa = a + (i[:, None] + c[:, None]) * 64 + i[None, :];\n"                                   \
    "    var pb = b + i[:, None] * 64 + i[None, :];\n"                                                  \
    "    var acc = zeros([64, 64], f32);\n"                                                             \
    "    for k in range(0, 4, 1) {\n"                                                                   \
    "      acc = dot(load(pa), load(pb), acc);\n"                                                       \
    "      pa += 64;\n"                                                                                 \
    "      pb += 4096;\n"                                                                               \
    "    }\n"                                                                                           \
    "    store(o + j * 4096 + i[:, None] * 64 + i[None, :], acc);\n"                                    \
    "    c = flip(c, 0);\n"                                                                             \
    "    j += 1;\n"                                                                                     \
    "  }\n"                                                                                             \
    "}\n"

/* Two dots on tensor cores, the second adding the first's result, with a
 * transposed operand (64 x 32 out of K = 16; wgmma m64n32 on sm_90a where
 * the pointers are 16-byte aligned). */
#define TENSOR_CORE_DOTS_KERNEL                                                 \
    "kernel k(a: *f16, b: *f16, c: *bf16, o: *f32, t: *f16) {\n"                \
    "  let m = arange(0, 64); let n = arange(0, 32); let kk = arange(0, 16);\n" \
    "  let x = load(a + m[:, None] * 16 + kk[None, :]);\n"                      \
    "  let y = load(b + kk[:, None] * 32 + n[None, :]);\n"                      \
    "  let acc = dot(x, y);\n"                                                  \
    "  let xb = load(c + m[:, None] * 16 + kk[None, :]);\n"                     \
    "  let yb = load(c + 1024 + n[:, None] * 16 + kk[None, :]);\n"              \
    "  store(o + m[:, None] * 32 + n[None, :], dot(xb, trans(yb), acc));\n"     \
    "  store(t + kk[:, None] * 64 + m[None, :], trans(x));\n"                   \
    "}\n"

/* Two pipelined dot loops (wgmma m64n64 on sm_90a): one running down, its
 * dot in flight across iterations; one whose b the dot stages itself. */
#define PIPELINED_DOT_LOOPS_KERNEL                                                     \
    "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32, p: *f32) {\n"           \
    "  let m = arange(0, 64); let n = arange(0, 64); let kk = arange(0, 32);\n"        \
    "  var acc = zeros([64, 64], f32);\n"                                              \
    "  for k0 in range(96, -1, -32) {\n"                                               \
    "    let x = load(a + m[:, None] * 128 + (k0 + kk)[None, :]);\n"                   \
    "    acc = dot(x, load(b + (k0 + kk)[:, None] * 64 + n[None, :]), acc);\n"         \
    "  }\n"                                                                            \
    "  store(o + m[:, None] * 64 + n[None, :], acc);\n"                                \
    "  var acc2 = zeros([64, 64], f32);\n"                                             \
    "  for k0 in range(0, 128, 32) {\n"                                                \
    "    let x = load(a + m[:, None] * 128 + (k0 + kk)[None, :]);\n"                   \
    "    acc2 = dot(x, load(b + (k0 + kk)[:, None] * 64 + n[None, :]) * 2.0, acc2);\n" \
    "  }\n"                                                                            \
    "  store(p + m[:, None] * 64 + n[None, :], acc2);\n"                               \
    "}\n"

#endif
