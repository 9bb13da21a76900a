/* attention.c: JIT dsl_examples/attention.blk from C and run fused attention
 * on f16 q, k, v of shape [Z, H, N_CTX, 64]: Out = softmax(q k^T sm_scale) v
 * for each batch and head (with --causal, query i sees keys j <= i only), and
 * LSE, each row's log2-sum-exp2 of the scaled scores. One program per 128
 * query rows of a head. Checks both against attention in C, in double, and
 * prints the largest errors and the time.
 *   attention [--device auto|cuda|cpu] [--causal] [Z H N_CTX]
 * Uses only blk.h and the C library; f16 data as the compiler's _Float16. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#define HOST_NAME "attention"
#include "host_common.h"

typedef _Float16 f16;
enum { D = 64, BLOCK_M = 128 }; /* HEAD_DIM and the query rows per program */

/* The reference for one query row of one head (q: the row; k, v: the head's
 * N x D keys and values; keys: how many the row sees): out[d] = sum_j w_j v_jd
 * with w = softmax(q k_j * scale); wabs[d] = sum_j w_j |v_jd|, the size of
 * the terms behind out[d]; returns log2 sum_j exp(q k_j * scale). */
static double attention_row(const f16 *q, const f16 *k, const f16 *v, int keys, double scale, double *w,
                            double *out, double *wabs) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < keys; j++) {
        double s = 0;
        for (int d = 0; d < D; d++) s += (double)q[d] * k[(size_t)j * D + d];
        w[j] = s * scale;
        mx = fmax(mx, w[j]);
    }
    for (int j = 0; j < keys; j++) sum += (w[j] = exp(w[j] - mx));
    for (int d = 0; d < D; d++) out[d] = wabs[d] = 0;
    for (int j = 0; j < keys; j++) {
        for (int d = 0; d < D; d++) {
            out[d] += w[j] / sum * v[(size_t)j * D + d];
            wabs[d] += w[j] / sum * fabs((double)v[(size_t)j * D + d]);
        }
    }
    return (mx + log(sum)) / log(2.0);
}

int main(int argc, char **argv) {
    const char *device = "auto";
    bool causal = false;
    int dims[3] = {1, 2, 1024}, ndims = 0; /* Z, H, N_CTX: a shape of Triton's test */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (strcmp(argv[i], "--causal") == 0) causal = true;
        else if (ndims < 3) dims[ndims++] = atoi(argv[i]);
    }
    int Z = dims[0], H = dims[1], N = dims[2];
    if (Z <= 0 || H <= 0 || N <= 0) {
        fprintf(stderr, "usage: attention [--device auto|cuda|cpu] [--causal] [Z H N_CTX]\n");
        return 2;
    }
    blk_context *ctx;
    CHECK(open_context(device, &ctx));

    const char *defines[] = {"T=f16", "HEAD_DIM=64", "BLOCK_M=128", "BLOCK_N=64", causal ? "CAUSAL=true" : "CAUSAL=false"};
    blk_compile_options opt = {.defines = defines, .num_defines = 5};
    blk_module *module;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/attention.blk", &opt, &module));
    blk_kernel *attn;
    CHECK(blk_module_get_kernel(module, "attn_fwd", &attn));

    size_t rows = (size_t)Z * H * N, n = rows * D, bytes = n * sizeof(f16);
    f16 *q = malloc(bytes), *k = malloc(bytes), *v = malloc(bytes), *out = malloc(bytes);
    float *lse = malloc(rows * sizeof *lse);
    uint64_t seed = 7; /* normal with standard deviation 0.5, as Triton's attention test */
    for (size_t i = 0; i < n; i++) {
        q[i] = (f16)(0.5 * normal(&seed));
        k[i] = (f16)(0.5 * normal(&seed));
        v[i] = (f16)(0.5 * normal(&seed));
    }
    blk_ptr dq, dk, dv, dout, dlse;
    CHECK(blk_malloc(ctx, bytes, &dq));
    CHECK(blk_malloc(ctx, bytes, &dk));
    CHECK(blk_malloc(ctx, bytes, &dv));
    CHECK(blk_malloc(ctx, bytes, &dout));
    CHECK(blk_malloc(ctx, rows * sizeof(float), &dlse));
    CHECK(blk_memcpy_to_device(ctx, dq, q, bytes));
    CHECK(blk_memcpy_to_device(ctx, dk, k, bytes));
    CHECK(blk_memcpy_to_device(ctx, dv, v, bytes));

    /* Q, K, V, Out, LSE, sm_scale, N_CTX; programs: (query blocks, batch x head) */
    const float sm_scale = 0.5f;
    blk_arg args[] = {blk_arg_ptr(dq), blk_arg_ptr(dk),   blk_arg_ptr(dv),       blk_arg_ptr(dout),
                      blk_arg_ptr(dlse), blk_arg_f32(sm_scale), blk_arg_i32(N)};
    unsigned blocks = (unsigned)((N + BLOCK_M - 1) / BLOCK_M);
    double ms; /* the first launch compiles; the second is timed */
    CHECK(launch_timed(ctx, attn, blocks, (unsigned)(Z * H), args, 7, &ms));
    CHECK(blk_memcpy_to_host(ctx, out, dout, bytes));
    CHECK(blk_memcpy_to_host(ctx, lse, dlse, rows * sizeof(float)));

    /* Out's bound, in the sizes of its terms: Out is rounded to f16 (2^-11
     * |out|); the weights p are rounded to f16 before they multiply v
     * (2^-11, or 2^-25 absolute below f16's normal range), and the scores'
     * f32 errors and exp2 move them by less than another 2^-11 at HEAD_DIM
     * 64; the f32 sums over the keys add up to 2 N_CTX 2^-23. Errors are
     * measured in units of the bound (at most 1 passes). LSE (f32):
     * absolute 1e-3, 10x the bound tests/harness/checks.c derives. */
    double *w = malloc(N * sizeof *w), ref[D], wabs[D], vmax = 0, worst = 0, worst_lse = 0;
    for (size_t i = 0; i < n; i++) vmax = fmax(vmax, fabs((double)v[i]));
    for (size_t r = 0; r < rows; r++) {
        size_t head = r / N * (size_t)N * D;
        int i = (int)(r % N), keys = causal ? i + 1 : N;
        double want_lse = attention_row(q + r * D, k + head, v + head, keys, sm_scale, w, ref, wabs);
        for (int d = 0; d < D; d++) {
            double bound = 0x1p-11 * fabs(ref[d]) + (0x1p-10 + 2 * N * 0x1p-23) * wabs[d] + keys * 0x1p-25 * vmax;
            double err = fabs(out[r * D + d] - ref[d]) / bound;
            worst = fmax(worst, err == err ? err : INFINITY); /* NaN is an error too */
        }
        double err = fabs(lse[r] - want_lse);
        worst_lse = fmax(worst_lse, err == err ? err : INFINITY);
    }
    double flops = 4.0 * Z * H * N * N * D * (causal ? 0.5 : 1);
    bool ok = worst <= 1 && worst_lse <= 1e-3;
    printf("attention Z=%d H=%d N_CTX=%d HEAD_DIM=%d f16%s on %s: largest error of Out %.3g of the bound, of LSE "
           "%.3g (tolerance 1e-3); %.3f ms per launch (%.1f GFLOP/s); %s\n",
           Z, H, N, D, causal ? " causal" : "", blk_context_device(ctx), worst, worst_lse, ms, flops / (ms * 1e6),
           ok ? "ok" : "WRONG");

    blk_ptr all[] = {dq, dk, dv, dout, dlse};
    for (int b = 0; b < 5; b++) blk_free(ctx, all[b]);
    blk_module_destroy(module);
    blk_context_destroy(ctx);
    free(q), free(k), free(v), free(out), free(lse), free(w);
    return ok ? 0 : 1;
}
