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

#endif
