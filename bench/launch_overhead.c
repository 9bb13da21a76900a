/* launch_overhead.c: host time per launch of a tiny kernel (add.blk on 1024
 * f32 elements, one program) through the C runtime API (blk_launch), beside
 * cuLaunchKernel called directly on the same PTX with the same arguments:
 * the floor any runtime pays. Two measures, as bench/launch_overhead.py
 * takes them for Python:
 *   sustained: LAUNCHES back-to-back launches, then one synchronize; wall
 *     time / LAUNCHES, median of ROUNDS. A loop of small kernels runs at this
 *     rate; once the launch queue fills, the GPU's own pace (a few us a
 *     kernel) bounds it, whatever the host costs.
 *   host: BURST launches on an idle GPU, timing only the calls (the
 *     synchronize after them is not timed); median of BURST_ROUNDS. What a
 *     caller waits for before its next line runs.
 * Usage: launch_overhead [examples-dir]; prints "NAME MICROSECONDS" lines. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"
#include "cuda_driver.h"

enum { LAUNCHES = 20000, ROUNDS = 7, BURST = 64, BURST_ROUNDS = 201, N = 1024 };

static void check(blk_status s, const char *what) {
    if (s == BLK_SUCCESS) return;
    fprintf(stderr, "launch_overhead: %s: %s\n", what, blk_last_error());
    exit(1);
}

static void check_cu(CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return;
    fprintf(stderr, "launch_overhead: %s: CUDA error %d\n", what, (int)r);
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

/* One way to launch the kernel once, and a way to wait for the GPU. */
typedef struct {
    void (*launch)(void *state);
    void (*sync)(void *state);
    void *state;
} Way;

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

static double sustained_us(const Way *w) {
    double per[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        w->sync(w->state);
        double t0 = now_us();
        for (int i = 0; i < LAUNCHES; i++) w->launch(w->state);
        w->sync(w->state);
        per[r] = (now_us() - t0) / LAUNCHES;
    }
    return median(per, ROUNDS);
}

static double host_us(const Way *w) {
    double per[BURST_ROUNDS];
    for (int r = 0; r < BURST_ROUNDS; r++) {
        w->sync(w->state);
        double t0 = now_us();
        for (int i = 0; i < BURST; i++) w->launch(w->state);
        per[r] = (now_us() - t0) / BURST;
    }
    w->sync(w->state);
    return median(per, BURST_ROUNDS);
}

typedef struct {
    blk_context *ctx;
    blk_kernel *kernel;
    blk_arg args[4];
} BlkWay;

static void blk_way_launch(void *s) {
    BlkWay *b = s;
    check(blk_launch(b->kernel, 1, 1, 1, b->args, 4, NULL), "launch");
}

static void blk_way_sync(void *s) { check(blk_synchronize(((BlkWay *)s)->ctx), "sync"); }

typedef struct {
    CudaDriver drv;
    CUfunction fn;
    CUcontext ctx; /* set current before each launch, as the runtime does, in the third way */
    unsigned threads;
    void *params[4];
    CUdeviceptr x, out;
    int n;
} CudaWay;

static void cuda_way_launch(void *s) {
    CudaWay *c = s;
    check_cu(c->drv.LaunchKernel(c->fn, 1, 1, 1, c->threads, 1, 1, 0, NULL, c->params, NULL), "cuLaunchKernel");
}

static void cuda_ctx_way_launch(void *s) {
    CudaWay *c = s;
    check_cu(c->drv.CtxSetCurrent(c->ctx), "cuCtxSetCurrent");
    cuda_way_launch(s);
}

static void cuda_way_sync(void *s) { check_cu(((CudaWay *)s)->drv.CtxSynchronize(), "cuCtxSynchronize"); }

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR;
    char path[1024];
    snprintf(path, sizeof path, "%s/add.blk", dir);
    BlkWay b = {0};
    check(blk_context_create_cuda(0, &b.ctx), "context");
    const char *defines[] = {"BLOCK=1024"};
    blk_compile_options opt = {.defines = defines, .num_defines = 1};
    blk_module *m;
    check(blk_module_create_from_file(b.ctx, path, &opt, &m), "compile");
    check(blk_module_get_kernel(m, "add", &b.kernel), "kernel");
    blk_ptr x, out;
    check(blk_malloc(b.ctx, N * 4, &x), "alloc");
    check(blk_malloc(b.ctx, N * 4, &out), "alloc");
    check(blk_memset(b.ctx, x, 0, N * 4), "memset");
    b.args[0] = blk_arg_ptr(x), b.args[1] = blk_arg_ptr(x), b.args[2] = blk_arg_ptr(out), b.args[3] = blk_arg_i32(N);
    check(blk_launch(b.kernel, 1, 1, 1, b.args, 4, NULL), "launch"); /* loads the code */
    check(blk_synchronize(b.ctx), "sync");

    /* The same PTX loaded into the same (primary) context, launched by hand
     * with the block its launch contract states. */
    CudaWay c = {.x = x, .out = out, .n = N};
    char err[256];
    if (!blk_cuda_driver_load(&c.drv, err, sizeof err)) {
        fprintf(stderr, "launch_overhead: %s\n", err);
        return 1;
    }
    const char *ptx;
    check(blk_kernel_launch_ptx(b.kernel, b.args, 4, &ptx), "launch PTX");
    const char *block = strstr(ptx, "//   block: ");
    if (!block || sscanf(block, "//   block: %u threads", &c.threads) != 1) {
        fprintf(stderr, "launch_overhead: no block size in the launch contract\n");
        return 1;
    }
    CUdevice dev;
    check_cu(c.drv.DeviceGet(&dev, 0), "cuDeviceGet");
    check_cu(c.drv.DevicePrimaryCtxRetain(&c.ctx, dev), "cuDevicePrimaryCtxRetain");
    CUmodule mod;
    check_cu(c.drv.ModuleLoadData(&mod, ptx), "cuModuleLoadData");
    check_cu(c.drv.ModuleGetFunction(&c.fn, mod, "add"), "cuModuleGetFunction");
    c.params[0] = &c.x, c.params[1] = &c.x, c.params[2] = &c.out, c.params[3] = &c.n;

    Way ways[] = {{blk_way_launch, blk_way_sync, &b}, {cuda_way_launch, cuda_way_sync, &c},
                  {cuda_ctx_way_launch, cuda_way_sync, &c}};
    const char *names[] = {"c_api", "cuda", "cuda_set_context"};
    enum { NWAYS = sizeof ways / sizeof *ways };
    double sustained[NWAYS][3], host[NWAYS][3];
    for (int t = 0; t < 3; t++) /* the ways take turns, so drift hits all */
        for (int w = 0; w < NWAYS; w++) {
            sustained[w][t] = sustained_us(&ways[w]);
            host[w][t] = host_us(&ways[w]);
        }
    for (int w = 0; w < NWAYS; w++) {
        printf("%s_sustained %.2f\n", names[w], median(sustained[w], 3));
        printf("%s_host %.2f\n", names[w], median(host[w], 3));
    }
    c.drv.ModuleUnload(mod);
    c.drv.DevicePrimaryCtxRelease(dev);
    blk_cuda_driver_unload(&c.drv);
    blk_free(b.ctx, x);
    blk_free(b.ctx, out);
    blk_module_destroy(m);
    blk_context_destroy(b.ctx);
    return 0;
}
