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
#include <time.h>

#include "blk.h"

#define CHECK(call)                                                                    \
    do {                                                                               \
        blk_status s_ = (call);                                                        \
        if (s_ != BLK_SUCCESS) {                                                       \
            fprintf(stderr, "softmax: %s\n%s\n", blk_status_string(s_), blk_last_error()); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* Test data: normally distributed, from a fixed seed (splitmix64, Box-Muller). */
static double uniform(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
static double normal(uint64_t *state) {
    double u = uniform(state);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * uniform(state));
}

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
    blk_context *ctx = NULL;
    if (strcmp(device, "cpu") != 0 && blk_context_create_cuda(0, &ctx) != BLK_SUCCESS) {
        if (strcmp(device, "cuda") == 0) CHECK(BLK_ERROR_NO_DEVICE);
        printf("no GPU (%s): using the cpu device\n", blk_last_error());
    }
    if (!ctx) CHECK(blk_context_create_cpu(&ctx));

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
    CHECK(blk_launch(softmax, (unsigned)M, 1, 1, args, 5, NULL)); /* the first launch compiles */
    CHECK(blk_synchronize(ctx));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(blk_launch(softmax, (unsigned)M, 1, 1, args, 5, NULL));
    CHECK(blk_synchronize(ctx));
    clock_gettime(CLOCK_MONOTONIC, &t1);

    CHECK(blk_memcpy_to_host(ctx, y, dy, bytes));
    softmax_ref(x, M, N, want);
    double max_err = 0; /* relative: exp and the f32 sum round, 1e-5 leaves a 10x margin */
    for (size_t i = 0; i < n; i++) {
        double err = fabs(y[i] - want[i]) / want[i];
        max_err = fmax(max_err, err == err ? err : INFINITY); /* NaN is an error too */
    }
    double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) * 1e-3;
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
