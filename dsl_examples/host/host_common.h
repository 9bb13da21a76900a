/* host_common.h: what the host programs share, so each shows only its
 * kernel: CHECK, the seeded test data, opening the device that --device
 * names, and a timed launch. Uses only blk.h and the C library. A program defines
 * HOST_NAME (its name, for messages) before including this.
 * (vector_add.c stays self-contained: docs/runtime.md walks through it.) */
#ifndef HOST_COMMON_H
#define HOST_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "blk.h"

/* Ends main with status 1 and the runtime's message when a call fails. */
#define CHECK(call)                                                                         \
    do {                                                                                    \
        blk_status s_ = (call);                                                             \
        if (s_ != BLK_SUCCESS) {                                                            \
            fprintf(stderr, "%s: %s\n%s\n", HOST_NAME, blk_status_string(s_), blk_last_error()); \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

/* Test data from a fixed seed: uniform in [0, 1) (splitmix64) and standard
 * normal (Box-Muller), as the Triton tests' torch.rand and torch.randn. */
static inline double uniform(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}
static inline double normal(uint64_t *state) {
    double u = uniform(state);
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * uniform(state));
}

/* A context on the device named by --device: "cuda" (an error without a
 * GPU), "cpu", or "auto" (the GPU if there is one, else the cpu device, saying so). */
static inline blk_status open_context(const char *device, blk_context **ctx) {
    *ctx = NULL;
    if (strcmp(device, "cpu") != 0) {
        if (blk_context_create_cuda(0, ctx) == BLK_SUCCESS) return BLK_SUCCESS;
        if (strcmp(device, "cuda") == 0) return BLK_ERROR_NO_DEVICE;
        printf("no GPU (%s): using the cpu device\n", blk_last_error());
    }
    return blk_context_create_cpu(ctx);
}

/* Launches kernel on a gx x gy grid twice, waiting for each: the first
 * compiles it; *ms is the second's wall time, launch overhead included. */
static inline blk_status launch_timed(blk_context *ctx, blk_kernel *kernel, unsigned gx, unsigned gy,
                                      const blk_arg *args, int nargs, double *ms) {
    blk_status s = blk_launch(kernel, gx, gy, 1, args, nargs, NULL);
    if (!s) s = blk_synchronize(ctx);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!s) s = blk_launch(kernel, gx, gy, 1, args, nargs, NULL);
    if (!s) s = blk_synchronize(ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    return s;
}

#endif
