/* softmax.c: JIT dsl_examples/softmax.blk from C and take the softmax of
 * each row of an M x N f32 matrix, one program per row; check it against a
 * softmax in C (relative 1e-5) and print the maximum error and the time.
 *   softmax [--device auto|cuda|cpu] [M N]
 * Uses only blk.h and the C library, like vector_add.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#define HOST_NAME "softmax"
#include "host_common.h"

/* The reference: each row's softmax, in double. */
static void softmax_ref(const float *x, int M, int N, double *out) {
    for (int r = 0; r < M; r++) {
        const float *row = x + (size_t)r * N;
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; c++) mx = fmax(mx, row[c]);
        for (int c = 0; c < N; c++) sum += exp(row[c] - mx);
        for (int c = 0; c < N; c++) out[(size_t)r * N + c] = exp(row[c] - mx) / sum;
    }
}

int main(int argc, char **argv) {
    const char *device = "auto";
    int dims[2] = {1823, 781}, ndims = 0; /* the Triton tutorial's test shape */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (ndims < 2) dims[ndims++] = atoi(argv[i]);
    }
    int M = dims[0], N = dims[1];
    if (M <= 0 || N <= 0 || N > 16384) {
        fprintf(stderr, "usage: softmax [--device auto|cuda|cpu] [M N]   (N <= 16384)\n");
        return 2;
    }
    blk_context *ctx;
    CHECK(open_context(device, &ctx));

    /* one program holds a whole row: BLOCK is N rounded up to a power of two */
    int block = 1;
    while (block < N) block *= 2;
    char block_def[32];
    snprintf(block_def, sizeof block_def, "BLOCK=%d", block);
    const char *defines[] = {"T=f32", block_def};
    blk_compile_options opt = {.defines = defines, .num_defines = 2};
    blk_module *module;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/softmax.blk", &opt, &module));
    blk_kernel *softmax;
    CHECK(blk_module_get_kernel(module, "softmax", &softmax));

    size_t n = (size_t)M * N, bytes = n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    double *want = malloc(n * sizeof *want);
    uint64_t seed = 2;
    for (size_t i = 0; i < n; i++) x[i] = (float)normal(&seed);
    blk_ptr dx, dy;
    CHECK(blk_malloc(ctx, bytes, &dx));
    CHECK(blk_malloc(ctx, bytes, &dy));
    CHECK(blk_memcpy_to_device(ctx, dx, x, bytes));

    /* out, input, in_stride, out_stride, n_cols; one program per row */
    blk_arg args[] = {blk_arg_ptr(dy), blk_arg_ptr(dx), blk_arg_i32(N), blk_arg_i32(N), blk_arg_i32(N)};
    double ms; /* the first launch compiles; the second is timed */
    CHECK(launch_timed(ctx, softmax, (unsigned)M, 1, args, 5, &ms));

    CHECK(blk_memcpy_to_host(ctx, y, dy, bytes));
    softmax_ref(x, M, N, want);
    double max_err = 0; /* relative: exp and the f32 sum round, 1e-5 leaves a 10x margin */
    for (size_t i = 0; i < n; i++) {
        double err = fabs(y[i] - want[i]) / want[i];
        max_err = fmax(max_err, err == err ? err : INFINITY); /* NaN is an error too */
    }
    double us = ms * 1e3;
    bool ok = max_err <= 1e-5;
    printf("softmax M=%d N=%d f32 on %s: max relative error %.3g (tolerance 1e-05), %.1f us per launch; %s\n", M, N,
           blk_context_device(ctx), max_err, us, ok ? "ok" : "WRONG");

    blk_free(ctx, dx);
    blk_free(ctx, dy);
    blk_module_destroy(module);
    blk_context_destroy(ctx);
    free(x), free(y), free(want);
    return ok ? 0 : 1;
}
