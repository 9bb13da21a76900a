/* vector_add.c: JIT a blk kernel from C and run it — the whole runtime API
 * in one small program (docs/runtime.md walks through it).
 *   vector_add [--device cpu|cuda] [n]
 * Compiles dsl_examples/add.blk, adds two vectors on the device, checks the
 * result against C and prints the maximum error and the kernel time. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"

#define CHECK(call)                                                                    \
    do {                                                                               \
        blk_status s_ = (call);                                                        \
        if (s_ != BLK_SUCCESS) {                                                       \
            fprintf(stderr, "vector_add: %s\n%s\n", blk_status_string(s_), blk_last_error()); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    const char *device = "auto";
    int n = 98432; /* the Triton tutorial's size */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else n = atoi(argv[i]);
    }
    if (n <= 0) {
        fprintf(stderr, "usage: vector_add [--device cpu|cuda] [n]\n");
        return 2;
    }

    /* 1. a context: the GPU, or the reference interpreter */
    blk_context *ctx = NULL;
    if (strcmp(device, "cpu") != 0 && blk_context_create_cuda(0, &ctx) != BLK_SUCCESS) {
        if (strcmp(device, "cuda") == 0) CHECK(BLK_ERROR_NO_DEVICE);
        printf("no GPU (%s): using the cpu device\n", blk_last_error());
    }
    if (!ctx) CHECK(blk_context_create_cpu(&ctx));

    /* 2. compile the module, with const parameters as -D would set them */
    const char *defines[] = {"T=f32", "BLOCK=1024"};
    blk_compile_options opt = {.defines = defines, .num_defines = 2};
    blk_module *module;
    CHECK(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/add.blk", &opt, &module));
    blk_kernel *add;
    CHECK(blk_module_get_kernel(module, "add", &add));

    /* 3. device memory and inputs */
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *out = malloc(n * sizeof *out);
    for (int i = 0; i < n; i++) x[i] = sinf((float)i), y[i] = cosf((float)i);
    blk_ptr dx, dy, dout;
    CHECK(blk_malloc(ctx, n * sizeof *x, &dx));
    CHECK(blk_malloc(ctx, n * sizeof *y, &dy));
    CHECK(blk_malloc(ctx, n * sizeof *out, &dout));
    CHECK(blk_memcpy_to_device(ctx, dx, x, n * sizeof *x));
    CHECK(blk_memcpy_to_device(ctx, dy, y, n * sizeof *y));

    /* 4. launch: one program per 1024 elements; arguments are checked against the kernel */
    blk_arg args[] = {blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(dout), blk_arg_i32(n)};
    unsigned programs = (unsigned)((n + 1023) / 1024);
    CHECK(blk_launch(add, programs, 1, 1, args, 4, NULL)); /* the first launch compiles */
    CHECK(blk_synchronize(ctx));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(blk_launch(add, programs, 1, 1, args, 4, NULL));
    CHECK(blk_synchronize(ctx));
    clock_gettime(CLOCK_MONOTONIC, &t1);

    /* 5. results, checked against C: one f32 addition each, so exactly equal */
    CHECK(blk_memcpy_to_host(ctx, out, dout, n * sizeof *out));
    double max_err = 0;
    for (int i = 0; i < n; i++) max_err = fmax(max_err, fabs((double)out[i] - (double)(x[i] + y[i])));
    double us = (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) * 1e-3;
    printf("vector_add n=%d on %s: max error %g, %.1f us per launch (with synchronize)\n", n,
           blk_context_device(ctx), max_err, us);

    blk_free(ctx, dx);
    blk_free(ctx, dy);
    blk_free(ctx, dout);
    blk_module_destroy(module);
    blk_context_destroy(ctx);
    free(x), free(y), free(out);
    return max_err == 0 ? 0 : 1;
}
