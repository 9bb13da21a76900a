/* matmul.c: JIT dsl_examples/matmul.blk from C and multiply two f16
 * matrices, C = A B (M x K times K x N, row-major; f32 accumulation, C in
 * f16), one program per 128 x 128 tile of C; check C against the product in
 * C, in double, and print the largest error and the time.
 *   matmul [--device auto|cuda|cpu] [M N K]
 * Uses only blk.h and the C library; f16 data as the compiler's _Float16. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#define HOST_NAME "matmul"
#include "host_common.h"

typedef _Float16 f16;

int main(int argc, char **argv) {
    const char *device = "auto";
    int dims[3] = {512, 512, 512}, ndims = 0; /* the Triton tutorial's test shape */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (ndims < 3) dims[ndims++] = atoi(argv[i]);
    }
    int M = dims[0], N = dims[1], K = dims[2];
    if (M <= 0 || N <= 0 || K <= 0) {
        fprintf(stderr, "usage: matmul [--device auto|cuda|cpu] [M N K]\n");
        return 2;
    }
    blk_context *ctx;
    CHECK(open_context(device, &ctx));

    /* the kernel's defaults: f16, 128 x 128 tiles of C, K in steps of 32, groups of 8 tile rows */
    const int BLOCK_M = 128, BLOCK_N = 128;
    const char *defines[] = {"T=f16"};
    blk_compile_options opt = {.defines = defines, .num_defines = 1};
    blk_module *module;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/matmul.blk", &opt, &module));
    blk_kernel *matmul;
    CHECK(blk_module_get_kernel(module, "matmul", &matmul));

    size_t a_bytes = (size_t)M * K * sizeof(f16), b_bytes = (size_t)K * N * sizeof(f16);
    size_t c_bytes = (size_t)M * N * sizeof(f16);
    f16 *a = malloc(a_bytes), *b = malloc(b_bytes), *c = malloc(c_bytes);
    uint64_t seed = 6;
    for (size_t i = 0; i < (size_t)M * K; i++) a[i] = (f16)normal(&seed);
    for (size_t i = 0; i < (size_t)K * N; i++) b[i] = (f16)normal(&seed);
    blk_ptr da, db, dc;
    CHECK(blk_malloc(ctx, a_bytes, &da));
    CHECK(blk_malloc(ctx, b_bytes, &db));
    CHECK(blk_malloc(ctx, c_bytes, &dc));
    CHECK(blk_memcpy_to_device(ctx, da, a, a_bytes));
    CHECK(blk_memcpy_to_device(ctx, db, b, b_bytes));

    /* a, b, c, M, N, K, then the strides (in elements) of A, B and C along each axis */
    blk_arg args[] = {blk_arg_ptr(da), blk_arg_ptr(db), blk_arg_ptr(dc), blk_arg_i32(M), blk_arg_i32(N),
                      blk_arg_i32(K), blk_arg_i32(K), blk_arg_i32(1), blk_arg_i32(N), blk_arg_i32(1),
                      blk_arg_i32(N), blk_arg_i32(1)};
    unsigned programs = (unsigned)(((M + BLOCK_M - 1) / BLOCK_M) * ((N + BLOCK_N - 1) / BLOCK_N));
    double ms; /* the first launch compiles; the second is timed */
    CHECK(launch_timed(ctx, matmul, programs, 1, args, 12, &ms));
    CHECK(blk_memcpy_to_host(ctx, c, dc, c_bytes));

    /* The reference, in double, element by element. The kernel's f32 sum may
     * differ from the exact one by K 2^-23 sum_k |a b| (tensor cores add in an
     * order of their own), then C is rounded to f16 (relative 2^-11, or 2^-25
     * below f16's normal range): the error, in units of that bound, must be at most 1. */
    double worst = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double sum = 0, mag = 0;
            for (int k = 0; k < K; k++) {
                double p = (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
                sum += p;
                mag += fabs(p);
            }
            double err = fabs(c[(size_t)i * N + j] - sum) / (K * 0x1p-23 * mag + 0x1p-11 * fabs(sum) + 0x1p-25);
            worst = fmax(worst, err == err ? err : INFINITY); /* NaN is an error too */
        }
    }
    bool ok = worst <= 1;
    printf("matmul M=%d N=%d K=%d f16 on %s: largest error %.3g of the bound, %.3f ms per launch (%.1f GFLOP/s); %s\n",
           M, N, K, blk_context_device(ctx), worst, ms, 2.0 * M * N * K / (ms * 1e6), ok ? "ok" : "WRONG");

    blk_free(ctx, da);
    blk_free(ctx, db);
    blk_free(ctx, dc);
    blk_module_destroy(module);
    blk_context_destroy(ctx);
    free(a), free(b), free(c);
    return ok ? 0 : 1;
}
