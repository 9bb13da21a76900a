/* dropout.c: JIT dsl_examples/dropout.blk from C and drop out n f32 elements
 * with probability p and a seed; check it against dropout in C (the keep
 * mask rand(seed, i) > p bit for bit, the kept values x / (1 - p) within
 * 2 ulp) and print the maximum error and the time.
 *   dropout [--device auto|cuda|cpu] [n seed]
 * Uses only blk.h and the C library, like vector_add.c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#define HOST_NAME "dropout"
#include "host_common.h"

/* blk's rand(seed, offset), as Triton's tl.rand: Philox 4x32-10 keyed by the
 * seed, counting from the offset; the first word as a uniform in [0, 1). */
static float rand_ref(int32_t seed, uint32_t offset) {
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)((uint64_t)(int64_t)seed >> 32);
    uint32_t c0 = offset, c1 = 0, c2 = 0, c3 = 0;
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p2 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p2 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p2, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    int32_t x = (int32_t)c0;
    return (float)(x < 0 ? ~x : x) * 4.6566127342e-10f;
}

int main(int argc, char **argv) {
    const char *device = "auto";
    int nums[2] = {1 << 20, 123}, nnums = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (nnums < 2) nums[nnums++] = atoi(argv[i]);
    }
    int n = nums[0], seed = nums[1];
    const float p = 0.5f;
    if (n <= 0) {
        fprintf(stderr, "usage: dropout [--device auto|cuda|cpu] [n seed]\n");
        return 2;
    }
    blk_context *ctx;
    CHECK(open_context(device, &ctx));

    const char *defines[] = {"T=f32", "BLOCK=1024"};
    blk_compile_options opt = {.defines = defines, .num_defines = 2};
    blk_module *module;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/dropout.blk", &opt, &module));
    blk_kernel *dropout;
    CHECK(blk_module_get_kernel(module, "dropout", &dropout));

    float *x = malloc(n * sizeof *x), *out = malloc(n * sizeof *out);
    /* no zeros (|x| >= 0.5), so a zero output means dropped */
    for (int i = 0; i < n; i++) x[i] = (i % 7 ? 1.0f : -1.0f) * (0.5f + sinf((float)i) * sinf((float)i));
    blk_ptr dx, dout;
    CHECK(blk_malloc(ctx, n * sizeof *x, &dx));
    CHECK(blk_malloc(ctx, n * sizeof *out, &dout));
    CHECK(blk_memcpy_to_device(ctx, dx, x, n * sizeof *x));

    blk_arg args[] = {blk_arg_ptr(dx), blk_arg_ptr(dout), blk_arg_i32(n), blk_arg_f32(p), blk_arg_i32(seed)};
    unsigned programs = (unsigned)((n + 1023) / 1024);
    double ms; /* the first launch compiles; the second is timed */
    CHECK(launch_timed(ctx, dropout, programs, 1, args, 5, &ms));

    /* kept where rand > p, scaled by 1 / (1 - p): within 2 ulp, the GPU's
     * f32 division's error bound (the interpreter's is exact) */
    CHECK(blk_memcpy_to_host(ctx, out, dout, n * sizeof *out));
    double max_err = 0;
    int wrong_mask = -1, kept = 0;
    for (int i = 0; i < n; i++) {
        bool keep = rand_ref(seed, (uint32_t)i) > p;
        kept += keep;
        if (keep != (out[i] != 0) && wrong_mask < 0) wrong_mask = i;
        double want = keep ? (double)(x[i] / (1.0f - p)) : 0, err = keep ? fabs(out[i] - want) / fabs(want) : 0;
        max_err = fmax(max_err, err == err ? err : INFINITY);
    }
    bool ok = wrong_mask < 0 && max_err <= 0x1p-22;
    double us = ms * 1e3;
    printf("dropout n=%d p=%g seed=%d f32 on %s: kept %.4f, max relative error %.3g (tolerance 2^-22), "
           "%.1f us per launch; %s\n",
           n, p, seed, blk_context_device(ctx), (double)kept / n, max_err, us, ok ? "ok" : "WRONG");
    if (wrong_mask >= 0)
        fprintf(stderr, "dropout: out[%d] = %g but rand(%d, %d) = %.9g against p = %g\n", wrong_mask,
                out[wrong_mask], seed, wrong_mask, rand_ref(seed, (uint32_t)wrong_mask), p);

    blk_free(ctx, dx);
    blk_free(ctx, dout);
    blk_module_destroy(module);
    blk_context_destroy(ctx);
    free(x), free(out);
    return ok ? 0 : 1;
}
