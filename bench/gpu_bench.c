/* gpu_bench.c: kernel times of the examples on the GPU at the shapes of the
 * Triton tutorials' benchmarks, from C (no Python or PyTorch needed), with
 * each kernel's cold JIT time. Peers are compared in one run, timed alike,
 * by bench/side_by_side.py; this prints only what it measures. Timed like
 * triton.testing.do_bench: the L2 cache is flushed (a 256 MB memset) before
 * each run, each run is timed with events, the median is reported. GB/s
 * counts bytes as the tutorials do. Kernels are compiled, loaded and launched
 * through the runtime API (include/blk.h), so they are specialized for their
 * arguments (16-byte aligned pointers, integers divisible by 16) as Triton's
 * are; the CUDA driver is used directly only for the events. Also the JIT
 * time of each kernel (the disk cache is off, so it is cold).
 * Usage: gpu_bench [examples-dir [num-warps]] (num-warps: force it, 0 = the default) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"
#include "blkc.h" /* f32_to_f16 */
#include "cuda_driver.h"
#include "reference.h"

enum { RUNS = 25, MAX_ARGS = 16 };

typedef struct {
    blk_context *ctx;
    const char *examples_dir;
    int num_warps;
    CudaDriver drv; /* the events only: everything else goes through the runtime */
    CUevent start, stop;
    blk_ptr flush;
    size_t flush_bytes;
} Bench;

static void check(blk_status s, const char *what) {
    if (s == BLK_SUCCESS) return;
    fprintf(stderr, "gpu_bench: %s: %s\n", what, blk_last_error());
    exit(1);
}

static void check_cu(Bench *b, CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return;
    char buf[256];
    fprintf(stderr, "gpu_bench: %s: %s\n", what, blk_cuda_error_text(&b->drv, r, buf, sizeof buf));
    exit(1);
}

static blk_ptr dev_random(Bench *b, size_t n, DType dt, double mean, double scale, uint64_t seed) {
    size_t es = dt == DT_F16 ? 2 : 4;
    void *host = malloc(n * es);
    RefRng rng = {seed};
    for (size_t i = 0; i < n; i++) {
        double v = mean + scale * ref_normal(&rng);
        if (dt == DT_F16) ((uint16_t *)host)[i] = f32_to_f16((float)v);
        else ((float *)host)[i] = (float)v;
    }
    blk_ptr d;
    check(blk_malloc(b->ctx, n * es, &d), "alloc");
    check(blk_memcpy_to_device(b->ctx, d, host, n * es), "copy");
    free(host);
    return d;
}

static blk_ptr dev_zeros(Bench *b, size_t bytes) {
    blk_ptr d;
    check(blk_malloc(b->ctx, bytes, &d), "alloc");
    check(blk_memset(b->ctx, d, 0, bytes), "memset");
    return d;
}

typedef struct {
    blk_module *module;
    blk_kernel *k;
    blk_arg args[MAX_ARGS];
    int nargs;
    uint32_t grid;
    double compile_ms;
    size_t ptx_bytes;
} Launch;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void launch(Launch *l) { check(blk_launch(l->k, l->grid, 1, 1, l->args, l->nargs, NULL), "launch"); }

/* Compiles the kernel with its arguments set: source to a finished first
 * launch, which compiles and loads its specialization. */
static void prepare(Bench *b, Launch *l, const char *kernel, const char *const *defs) {
    const char *file = strncmp(kernel, "layer_norm", 10) == 0 ? "layernorm.blk"
                     : strcmp(kernel, "softmax") == 0        ? "softmax.blk"
                     : strcmp(kernel, "dropout") == 0        ? "dropout.blk"
                                                             : "add.blk";
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", b->examples_dir, file);
    int ndefs = 0;
    while (defs[ndefs]) ndefs++;
    blk_compile_options opt = {.defines = defs, .num_defines = ndefs, .num_warps = b->num_warps};
    double t0 = now_ms();
    check(blk_module_create_from_file(b->ctx, path, &opt, &l->module), kernel);
    check(blk_module_get_kernel(l->module, kernel, &l->k), kernel);
    launch(l);
    check(blk_synchronize(b->ctx), kernel);
    l->compile_ms = now_ms() - t0;
    const char *ptx;
    check(blk_kernel_ptx(l->k, &ptx), kernel);
    l->ptx_bytes = strlen(ptx);
}

static void set_args(Launch *l, const blk_arg *args, int n) {
    memcpy(l->args, args, (size_t)n * sizeof *args);
    l->nargs = n;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median time in ms of running `n` launches in order (plus an optional lock reset). */
static double time_launches(Bench *b, Launch *ls, int n, blk_ptr reset, size_t reset_bytes) {
    double t[RUNS];
    for (int run = -3; run < RUNS; run++) {
        check(blk_memset(b->ctx, b->flush, 0, b->flush_bytes), "flush");
        check_cu(b, b->drv.EventRecord(b->start, NULL), "event");
        if (reset) check(blk_memset(b->ctx, reset, 0, reset_bytes), "memset");
        for (int i = 0; i < n; i++) launch(&ls[i]);
        check_cu(b, b->drv.EventRecord(b->stop, NULL), "event");
        check_cu(b, b->drv.EventSynchronize(b->stop), "sync");
        float ms;
        check_cu(b, b->drv.EventElapsedTime(&ms, b->start, b->stop), "elapsed");
        if (run >= 0) t[run] = ms;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    return t[RUNS / 2];
}

static int next_pow2(int n) {
    int p = 1;
    while (p < n) p *= 2;
    return p;
}

static void row(const char *name, double ms, double bytes, double compile_ms, size_t ptx) {
    printf("| %-34s | %8.1f | %6.2f | %8.1f | %7zu |\n", name, ms * 1e3, bytes / (ms * 1e-3) / 1e12, compile_ms, ptx);
}

int main(int argc, char **argv) {
    setenv("BLK_CACHE_DISABLE", "1", 1); /* cold JIT times */
    Bench b = {.examples_dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR, .num_warps = argc > 2 ? atoi(argv[2]) : 0,
               .flush_bytes = 256u << 20};
    check(blk_context_create_cuda(0, &b.ctx), "opening the GPU");
    char err[512];
    if (!blk_cuda_driver_load(&b.drv, err, sizeof err)) {
        fprintf(stderr, "gpu_bench: %s\n", err);
        return 1;
    }
    check(blk_malloc(b.ctx, b.flush_bytes, &b.flush), "alloc"); /* and the context is current on this thread */
    check_cu(&b, b.drv.EventCreate(&b.start, 0), "event");
    check_cu(&b, b.drv.EventCreate(&b.stop, 0), "event");
    int driver = 0;
    b.drv.DriverGetVersion(&driver);
    printf("GPU: %s, driver API %d.%d; median of %d runs, L2 flushed before each\n\n", blk_context_device(b.ctx),
           driver / 1000, driver % 1000 / 10, RUNS);
    printf("| %-34s | %8s | %6s | %8s | %7s |\n", "kernel and shape", "us", "TB/s", "JIT ms", "PTX B");
    printf("|------------------------------------|----------|--------|----------|---------|\n");

    const int M = 4096;
    /* softmax, f32 */
    const int sm_n[] = {1024, 4096, 16384};
    for (int i = 0; i < 3; i++) {
        int N = sm_n[i];
        char block[32], name[64];
        snprintf(block, sizeof block, "BLOCK=%d", next_pow2(N));
        const char *defs[] = {block, NULL};
        Launch l = {.grid = (uint32_t)M};
        blk_ptr in = dev_random(&b, (size_t)M * N, DT_F32, 0, 1, 1), out = dev_zeros(&b, (size_t)M * N * 4);
        set_args(&l, (blk_arg[]){blk_arg_ptr(out), blk_arg_ptr(in), blk_arg_i32(N), blk_arg_i32(N), blk_arg_i32(N)}, 5);
        prepare(&b, &l, "softmax", defs);
        double ms = time_launches(&b, &l, 1, 0, 0);
        snprintf(name, sizeof name, "softmax f32 M=%d N=%d", M, N);
        row(name, ms, 2.0 * M * N * 4, l.compile_ms, l.ptx_bytes);
        blk_free(b.ctx, in), blk_free(b.ctx, out), blk_module_destroy(l.module);
    }
    /* layer norm forward and backward, f16 */
    const int ln_n[] = {1024, 4096, 8192, 15872};
    for (int i = 0; i < 4; i++) {
        int N = ln_n[i], block = next_pow2(N);
        char bs[32], name[64];
        snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", block);
        const char *defs[] = {"T=f16", bs, NULL};
        Launch l = {.grid = (uint32_t)M};
        size_t mn = (size_t)M * N;
        blk_ptr x = dev_random(&b, mn, DT_F16, -2.3, 0.5, 2), y = dev_zeros(&b, mn * 2);
        blk_ptr w = dev_random(&b, (size_t)N, DT_F16, 0.5, 0.2, 3), bb = dev_random(&b, (size_t)N, DT_F16, 0.5, 0.2, 4);
        blk_ptr mean = dev_zeros(&b, (size_t)M * 4), rstd = dev_zeros(&b, (size_t)M * 4);
        set_args(&l, (blk_arg[]){blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_ptr(w), blk_arg_ptr(bb), blk_arg_ptr(mean),
                                 blk_arg_ptr(rstd), blk_arg_i32(N), blk_arg_i32(N), blk_arg_f32(1e-5f)}, 9);
        prepare(&b, &l, "layer_norm_fwd", defs);
        double ms = time_launches(&b, &l, 1, 0, 0);
        snprintf(name, sizeof name, "layer_norm_fwd f16 M=%d N=%d", M, N);
        row(name, ms, 2.0 * M * N * 2, l.compile_ms, l.ptx_bytes);
        blk_module_destroy(l.module);

        /* backward: the dx kernel with the lock, then the dW/dB kernel */
        int group = N <= 1024 ? 256 : N <= 4096 ? 128 : N <= 8192 ? 96 : 64;
        char g[32], bn[32];
        snprintf(g, sizeof g, "GROUP_SIZE_M=%d", group);
        snprintf(bn, sizeof bn, "BLOCK_SIZE_N=%d", block);
        const char *dx_defs[] = {"T=f16", g, bn, NULL};
        const char *dw_defs[] = {"T=f16", "BLOCK_SIZE_M=32", "BLOCK_SIZE_N=128", NULL};
        Launch ls[2] = {{.grid = (uint32_t)M}, {.grid = (uint32_t)((N + 127) / 128)}};
        blk_ptr dy = dev_random(&b, mn, DT_F16, 0, 0.1, 5), dx = dev_zeros(&b, mn * 2);
        blk_ptr pdw = dev_zeros(&b, (size_t)group * N * 2), pdb = dev_zeros(&b, (size_t)group * N * 2);
        blk_ptr lock = dev_zeros(&b, (size_t)group * 2 * 4);
        blk_ptr dw = dev_zeros(&b, (size_t)N * 2), db = dev_zeros(&b, (size_t)N * 2);
        set_args(&ls[0], (blk_arg[]){blk_arg_ptr(dx), blk_arg_ptr(dy), blk_arg_ptr(pdw), blk_arg_ptr(pdb),
                                     blk_arg_ptr(x), blk_arg_ptr(w), blk_arg_ptr(mean), blk_arg_ptr(rstd),
                                     blk_arg_ptr(lock), blk_arg_i32(N), blk_arg_i32(N)}, 11);
        set_args(&ls[1], (blk_arg[]){blk_arg_ptr(pdw), blk_arg_ptr(pdb), blk_arg_ptr(dw), blk_arg_ptr(db),
                                     blk_arg_i32(group), blk_arg_i32(N)}, 6);
        prepare(&b, &ls[0], "layer_norm_bwd_dx", dx_defs);
        prepare(&b, &ls[1], "layer_norm_bwd_dwdb", dw_defs);
        ms = time_launches(&b, ls, 2, lock, (size_t)group * 2 * 4);
        snprintf(name, sizeof name, "layer_norm_bwd f16 M=%d N=%d", M, N);
        row(name, ms, 3.0 * M * N * 2, ls[0].compile_ms + ls[1].compile_ms,
            ls[0].ptx_bytes + ls[1].ptx_bytes);
        blk_ptr all[] = {x, y, w, bb, mean, rstd, dy, dx, pdw, pdb, lock, dw, db};
        for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) blk_free(b.ctx, all[j]);
        blk_module_destroy(ls[0].module), blk_module_destroy(ls[1].module);
    }
    /* dropout and add, f32, 2^26 elements */
    {
        int n = 1 << 26;
        const char *defs[] = {"BLOCK=1024", NULL};
        Launch l = {.grid = (uint32_t)(n / 1024)};
        blk_ptr x = dev_random(&b, (size_t)n, DT_F32, 0, 1, 6), out = dev_zeros(&b, (size_t)n * 4);
        set_args(&l, (blk_arg[]){blk_arg_ptr(x), blk_arg_ptr(out), blk_arg_i32(n), blk_arg_f32(0.5f), blk_arg_i32(123)}, 5);
        prepare(&b, &l, "dropout", defs);
        double ms = time_launches(&b, &l, 1, 0, 0);
        row("dropout f32 n=2^26", ms, 2.0 * n * 4, l.compile_ms, l.ptx_bytes);
        blk_module_destroy(l.module);
        Launch a = {.grid = (uint32_t)(n / 1024)};
        blk_ptr y = dev_random(&b, (size_t)n, DT_F32, 0, 1, 7);
        set_args(&a, (blk_arg[]){blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_ptr(out), blk_arg_i32(n)}, 4);
        prepare(&b, &a, "add", defs);
        ms = time_launches(&b, &a, 1, 0, 0);
        row("add f32 n=2^26", ms, 3.0 * n * 4, a.compile_ms, a.ptx_bytes);
        blk_free(b.ctx, x), blk_free(b.ctx, y), blk_free(b.ctx, out), blk_module_destroy(a.module);
    }
    printf("\nTB/s: bytes moved / kernel time (layer norm fwd 2MN, bwd 3MN elements, softmax 2MN,\n"
           "dropout 2n, add 3n). Peers, timed in the same run: bench/side_by_side.py.\n"
           "JIT ms: blk source to a first finished launch through the runtime API (front end, LLVM,\n"
           "PTX, the driver's PTX-to-cubin, the first run), cold. PTX B: without launch specialization.\n");
    b.drv.EventDestroy(b.start), b.drv.EventDestroy(b.stop);
    blk_free(b.ctx, b.flush);
    blk_context_destroy(b.ctx);
    blk_cuda_driver_unload(&b.drv);
    return 0;
}
