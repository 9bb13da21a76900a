/* layer_norm.c: JIT dsl_examples/layernorm.blk from C and run layer norm on
 * M x N f16 rows: the forward kernel, then the backward in two stages (dX,
 * with partial dW and dB summed per group under a lock; then the groups'
 * sums). Checks each against layer norm in C, in double: absolute 1e-2 as
 * the Triton tutorial tests (dW and dB, sums over the rows of f16 partial
 * sums, also get relative 2^-9 and an absolute part that grows with M), and
 * prints the maximum errors and the times.
 *   layer_norm [--device auto|cuda|cpu] [M N]   (N <= 16384)
 * Uses only blk.h and the C library; f16 data as the compiler's _Float16. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"
#define HOST_NAME "layer_norm"
#include "host_common.h"

typedef _Float16 f16;

/* The reference, in double: y = (x - mean) * rstd * w + b per row, and its
 * gradients dx, dw = sum over rows of dy * xhat, db = sum of dy. */
static void layer_norm_ref(const f16 *x, const f16 *w, const f16 *b, const f16 *dy, int M, int N, double eps,
                           double *y, double *dx, double *dw, double *db) {
    for (int c = 0; c < N; c++) dw[c] = db[c] = 0;
    for (int r = 0; r < M; r++) {
        const f16 *xr = x + (size_t)r * N, *dyr = dy + (size_t)r * N;
        double mean = 0, var = 0, c1 = 0, c2 = 0;
        for (int c = 0; c < N; c++) mean += xr[c];
        mean /= N;
        for (int c = 0; c < N; c++) var += (xr[c] - mean) * (xr[c] - mean);
        double rstd = 1.0 / sqrt(var / N + eps);
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean) * rstd, wdy = (double)w[c] * dyr[c];
            y[(size_t)r * N + c] = xhat * w[c] + b[c];
            c1 += xhat * wdy / N;
            c2 += wdy / N;
            dw[c] += dyr[c] * xhat;
            db[c] += dyr[c];
        }
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean) * rstd, wdy = (double)w[c] * dyr[c];
            dx[(size_t)r * N + c] = (wdy - (xhat * c1 + c2)) * rstd;
        }
    }
}

/* The largest error of got against want, in units of the tolerance
 * atol + rtol * |want| (at most 1 passes); NaN counts as infinitely wrong. */
static double worst(const f16 *got, const double *want, size_t n, double atol, double rtol) {
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]) / (atol + rtol * fabs(want[i]));
        w = fmax(w, e == e ? e : INFINITY);
    }
    return w;
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

int main(int argc, char **argv) {
    const char *device = "auto";
    int dims[2] = {1151, 8192}, ndims = 0; /* the Triton tutorial's test shape */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (ndims < 2) dims[ndims++] = atoi(argv[i]);
    }
    int M = dims[0], N = dims[1];
    if (M <= 0 || N <= 0 || N > 16384) {
        fprintf(stderr, "usage: layer_norm [--device auto|cuda|cpu] [M N]   (N <= 16384)\n");
        return 2;
    }
    blk_context *ctx;
    CHECK(open_context(device, &ctx));

    /* the tutorial's choices: the forward loops over a row in blocks of up to
     * 1024; the backward holds a whole row, and sums dW and dB in GROUP rows */
    int block_n = 1;
    while (block_n < N) block_n *= 2;
    int group = N <= 1024 ? 256 : N <= 4096 ? 128 : N <= 8192 ? 96 : 64;
    char d_fwd[32], d_group[32], d_bwd[32];
    snprintf(d_fwd, sizeof d_fwd, "BLOCK_SIZE=%d", block_n < 1024 ? block_n : 1024);
    snprintf(d_group, sizeof d_group, "GROUP_SIZE_M=%d", group);
    snprintf(d_bwd, sizeof d_bwd, "BLOCK_SIZE_N=%d", block_n);
    const char *defines[] = {"T=f16", d_fwd, d_group, d_bwd};
    blk_compile_options opt = {.defines = defines, .num_defines = 4};
    blk_compile_options opt_dwdb = {.defines = defines, .num_defines = 1}; /* its own block sizes */
    blk_module *module, *module_dwdb;
    blk_kernel *fwd, *bwd_dx, *bwd_dwdb;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/layernorm.blk", &opt, &module));
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/layernorm.blk", &opt_dwdb, &module_dwdb));
    CHECK(blk_module_get_kernel(module, "layer_norm_fwd", &fwd));
    CHECK(blk_module_get_kernel(module, "layer_norm_bwd_dx", &bwd_dx));
    CHECK(blk_module_get_kernel(module_dwdb, "layer_norm_bwd_dwdb", &bwd_dwdb));

    size_t mn = (size_t)M * N, rows = mn * sizeof(f16), row = N * sizeof(f16);
    f16 *x = malloc(rows), *dy = malloc(rows), *y = malloc(rows), *dx = malloc(rows);
    f16 *w = malloc(row), *b = malloc(row), *dw = malloc(row), *db = malloc(row);
    double *ry = malloc(mn * sizeof *ry), *rdx = malloc(mn * sizeof *rdx);
    double *rdw = malloc(N * sizeof *rdw), *rdb = malloc(N * sizeof *rdb);
    uint64_t seed = 3; /* the tutorial's data: x ~ -2.3 + 0.5 N(0, 1), dy ~ 0.1 N(0, 1), w and b uniform */
    for (size_t i = 0; i < mn; i++) x[i] = (f16)(-2.3 + 0.5 * normal(&seed)), dy[i] = (f16)(0.1 * normal(&seed));
    for (int c = 0; c < N; c++) w[c] = (f16)uniform(&seed), b[c] = (f16)uniform(&seed);
    blk_ptr d_x, d_y, d_w, d_b, d_mean, d_rstd, d_dy, d_dx, d_pdw, d_pdb, d_lock, d_dw, d_db;
    CHECK(blk_malloc(ctx, rows, &d_x));
    CHECK(blk_malloc(ctx, rows, &d_y));
    CHECK(blk_malloc(ctx, row, &d_w));
    CHECK(blk_malloc(ctx, row, &d_b));
    CHECK(blk_malloc(ctx, M * sizeof(float), &d_mean));
    CHECK(blk_malloc(ctx, M * sizeof(float), &d_rstd));
    CHECK(blk_malloc(ctx, rows, &d_dy));
    CHECK(blk_malloc(ctx, rows, &d_dx));
    CHECK(blk_malloc(ctx, group * row, &d_pdw)); /* a partial dW and dB per group */
    CHECK(blk_malloc(ctx, group * row, &d_pdb));
    CHECK(blk_malloc(ctx, 2 * group * sizeof(int32_t), &d_lock)); /* a lock and a count per group */
    CHECK(blk_malloc(ctx, row, &d_dw));
    CHECK(blk_malloc(ctx, row, &d_db));
    CHECK(blk_memcpy_to_device(ctx, d_x, x, rows));
    CHECK(blk_memcpy_to_device(ctx, d_w, w, row));
    CHECK(blk_memcpy_to_device(ctx, d_b, b, row));
    CHECK(blk_memcpy_to_device(ctx, d_dy, dy, rows));
    CHECK(blk_memset(ctx, d_lock, 0, 2 * group * sizeof(int32_t)));

    /* forward: one program per row; it saves each row's mean and rstd */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    blk_arg fwd_args[] = {blk_arg_ptr(d_x), blk_arg_ptr(d_y), blk_arg_ptr(d_w), blk_arg_ptr(d_b), blk_arg_ptr(d_mean),
                          blk_arg_ptr(d_rstd), blk_arg_i32(N), blk_arg_i32(N), blk_arg_f32(1e-5f)};
    CHECK(blk_launch(fwd, (unsigned)M, 1, 1, fwd_args, 9, NULL));
    CHECK(blk_synchronize(ctx));
    double fwd_ms = ms_since(&t0);
    /* backward: dX per row (and the partial sums), then dW and dB per 128 columns */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    blk_arg dx_args[] = {blk_arg_ptr(d_dx), blk_arg_ptr(d_dy), blk_arg_ptr(d_pdw), blk_arg_ptr(d_pdb),
                         blk_arg_ptr(d_x), blk_arg_ptr(d_w), blk_arg_ptr(d_mean), blk_arg_ptr(d_rstd),
                         blk_arg_ptr(d_lock), blk_arg_i32(N), blk_arg_i32(N)};
    blk_arg dwdb_args[] = {blk_arg_ptr(d_pdw), blk_arg_ptr(d_pdb), blk_arg_ptr(d_dw), blk_arg_ptr(d_db),
                           blk_arg_i32(group), blk_arg_i32(N)};
    CHECK(blk_launch(bwd_dx, (unsigned)M, 1, 1, dx_args, 11, NULL));
    CHECK(blk_launch(bwd_dwdb, (unsigned)(N + 127) / 128, 1, 1, dwdb_args, 6, NULL));
    CHECK(blk_synchronize(ctx));
    double bwd_ms = ms_since(&t0);

    CHECK(blk_memcpy_to_host(ctx, y, d_y, rows));
    CHECK(blk_memcpy_to_host(ctx, dx, d_dx, rows));
    CHECK(blk_memcpy_to_host(ctx, dw, d_dw, row));
    CHECK(blk_memcpy_to_host(ctx, db, d_db, row));
    layer_norm_ref(x, w, b, dy, M, N, 1e-5, ry, rdx, rdw, rdb);
    double sum_atol = 1e-2 * (M > 1151 ? M / 1151.0 : 1); /* an f16 sum's error grows with its terms */
    double e_y = worst(y, ry, mn, 1e-2, 0), e_dx = worst(dx, rdx, mn, 1e-2, 0);
    double e_dw = worst(dw, rdw, N, sum_atol, 0x1p-9), e_db = worst(db, rdb, N, sum_atol, 0x1p-9);
    bool ok = e_y <= 1 && e_dx <= 1 && e_dw <= 1 && e_db <= 1;
    printf("layer_norm M=%d N=%d f16 on %s: errors in units of the tolerance: Y %.3g, DX %.3g, DW %.3g, DB %.3g; "
           "forward %.1f ms, backward %.1f ms (the first launches, with JIT); %s\n",
           M, N, blk_context_device(ctx), e_y, e_dx, e_dw, e_db, fwd_ms, bwd_ms, ok ? "ok" : "WRONG");

    blk_ptr all[] = {d_x, d_y, d_w, d_b, d_mean, d_rstd, d_dy, d_dx, d_pdw, d_pdb, d_lock, d_dw, d_db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) blk_free(ctx, all[i]);
    blk_module_destroy(module);
    blk_module_destroy(module_dwdb);
    blk_context_destroy(ctx);
    free(x), free(dy), free(y), free(dx), free(w), free(b), free(dw), free(db);
    free(ry), free(rdx), free(rdw), free(rdb);
    return ok ? 0 : 1;
}
