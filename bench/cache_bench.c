/* cache_bench.c: how long it takes from source to a kernel that has run
 * once, per example kernel, through the runtime API on a GPU: cold (empty
 * disk cache: front end, LLVM, PTX, the driver's PTX-to-cubin) and warm (a
 * new module of the same source in the same process, its cubin from the
 * disk cache). Each launch is a single program over a zeroed buffer.
 * Usage: cache_bench [examples-dir] */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Source to one finished launch; returns ms, or -1. */
static double load_and_run(blk_context *ctx, const char *path, const char *kernel, blk_ptr buf) {
    double t0 = now_ms();
    blk_module *m;
    blk_kernel *k;
    if (blk_module_create_from_file(ctx, path, NULL, &m) || blk_module_get_kernel(m, kernel, &k)) return -1;
    blk_arg args[16];
    int n = blk_kernel_num_args(k);
    for (int i = 0; i < n && i < 16; i++) {
        int kind = blk_kernel_arg_kind(k, i);
        args[i] = kind == BLK_ARG_PTR ? blk_arg_ptr(buf) : kind == BLK_ARG_F32 ? blk_arg_f32(0.5f) : blk_arg_i32(16);
    }
    bool ok = blk_launch(k, 1, 1, 1, args, n, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS;
    double t = now_ms() - t0;
    blk_module_destroy(m);
    return ok ? t : -1;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR;
    char cache[] = "/tmp/blk-cache-bench-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("BLK_CACHE_DIR", cache, 1);
    blk_context *ctx;
    if (blk_context_create_cuda(0, &ctx)) {
        fprintf(stderr, "cache_bench: %s\n", blk_last_error());
        return 1;
    }
    blk_ptr buf;
    if (blk_malloc(ctx, 64u << 20, &buf) || blk_memset(ctx, buf, 0, 64u << 20)) return 1;
    struct { const char *file, *kernel; } ks[] = {
        {"add.blk", "add"}, {"softmax.blk", "softmax"}, {"dropout.blk", "dropout"},
        {"layernorm.blk", "layer_norm_fwd"}, {"layernorm.blk", "layer_norm_bwd_dx"},
        {"layernorm.blk", "layer_norm_bwd_dwdb"},
    };
    printf("%s: source to a first finished launch, through the runtime API (ms)\n\n", blk_context_device(ctx));
    printf("| %-22s | %8s | %8s |\n", "kernel", "cold", "warm");
    printf("|------------------------|----------|----------|\n");
    int status = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, ks[i].file);
        double cold = load_and_run(ctx, path, ks[i].kernel, buf);
        double warm = load_and_run(ctx, path, ks[i].kernel, buf);
        if (cold < 0 || warm < 0) {
            fprintf(stderr, "cache_bench: %s: %s\n", ks[i].kernel, blk_last_error());
            status = 1;
        }
        printf("| %-22s | %8.1f | %8.1f |\n", ks[i].kernel, cold, warm);
    }
    blk_free(ctx, buf);
    blk_context_destroy(ctx);
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    return system(cmd) != 0 || status;
}
