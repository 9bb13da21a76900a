/* launch_overhead.c: host time per launch of a tiny kernel through the C
 * runtime API (blk_launch), the baseline for bench/launch_overhead.py, which
 * times the same kernel launched from Python (blk and Triton) the same way:
 * LAUNCHES back-to-back launches of add.blk on 1024 f32 elements (one
 * program), then one synchronize; time per launch = wall time / LAUNCHES,
 * median of ROUNDS. The kernel takes about as long as a launch, so this is
 * what a loop of small launches costs a user.
 * Usage: launch_overhead [examples-dir]; prints "c_api <microseconds>". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "blk.h"

enum { LAUNCHES = 20000, ROUNDS = 7, N = 1024 };

static void check(blk_status s, const char *what) {
    if (s == BLK_SUCCESS) return;
    fprintf(stderr, "launch_overhead: %s: %s\n", what, blk_last_error());
    exit(1);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR;
    char path[1024];
    snprintf(path, sizeof path, "%s/add.blk", dir);
    blk_context *ctx;
    check(blk_context_create_cuda(0, &ctx), "context");
    const char *defines[] = {"BLOCK=1024"};
    blk_compile_options opt = {.defines = defines, .num_defines = 1};
    blk_module *m;
    blk_kernel *k;
    check(blk_module_create_from_file(ctx, path, &opt, &m), "compile");
    check(blk_module_get_kernel(m, "add", &k), "kernel");
    blk_ptr x, out;
    check(blk_malloc(ctx, N * 4, &x), "alloc");
    check(blk_malloc(ctx, N * 4, &out), "alloc");
    check(blk_memset(ctx, x, 0, N * 4), "memset");
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_ptr(x), blk_arg_ptr(out), blk_arg_i32(N)};
    check(blk_launch(k, 1, 1, 1, args, 4, NULL), "launch"); /* loads the code */
    check(blk_synchronize(ctx), "sync");
    double per[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_us();
        for (int i = 0; i < LAUNCHES; i++) check(blk_launch(k, 1, 1, 1, args, 4, NULL), "launch");
        check(blk_synchronize(ctx), "sync");
        per[r] = (now_us() - t0) / LAUNCHES;
    }
    qsort(per, ROUNDS, sizeof per[0], by_value);
    printf("c_api %.2f\n", per[ROUNDS / 2]);
    blk_free(ctx, x);
    blk_free(ctx, out);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
    return 0;
}
