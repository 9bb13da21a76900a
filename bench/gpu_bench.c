/* gpu_bench.c: kernel times of the examples on the GPU at the shapes of the
 * Triton tutorials' benchmarks, beside the Triton 3.6 and PyTorch numbers of
 * ../shared/design-notes.md §1 (H100 80GB HBM3). Timed like
 * triton.testing.do_bench: the L2 cache is flushed (a 256 MB memset) before
 * each run, each run is timed with events, the median is reported. GB/s
 * counts bytes as the tutorials do. Kernels are specialized for their
 * arguments (16-byte aligned pointers, integers divisible by 16), as Triton's
 * are. Also the compile and module-load times of each kernel.
 * Usage: gpu_bench [examples-dir [num-warps]] (num-warps: force it, 0 = the default) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checks_cuda.h"
#include "reference.h"

enum { RUNS = 25, MAX_ARGS = 16 };

typedef struct {
    CudaLaunchCtx *c;
    CUdeviceptr flush;
    size_t flush_bytes;
    CUevent start, stop;
} Bench;

static void check(Bench *b, CUresult r, const char *what) {
    if (r == CUDA_SUCCESS) return;
    char buf[256];
    fprintf(stderr, "gpu_bench: %s: %s\n", what, cuda_error_text(&b->c->drv, r, buf, sizeof buf));
    exit(1);
}

static CUdeviceptr dev_random(Bench *b, size_t n, DType dt, double mean, double scale, uint64_t seed) {
    size_t es = dt == DT_F16 ? 2 : 4;
    void *host = malloc(n * es);
    RefRng rng = {seed};
    for (size_t i = 0; i < n; i++) {
        double v = mean + scale * ref_normal(&rng);
        if (dt == DT_F16) ((uint16_t *)host)[i] = f32_to_f16((float)v);
        else ((float *)host)[i] = (float)v;
    }
    CUdeviceptr d;
    check(b, b->c->drv.MemAlloc(&d, n * es), "alloc");
    check(b, b->c->drv.MemcpyHtoD(d, host, n * es), "copy");
    free(host);
    return d;
}

static CUdeviceptr dev_zeros(Bench *b, size_t bytes) {
    CUdeviceptr d;
    check(b, b->c->drv.MemAlloc(&d, bytes), "alloc");
    check(b, b->c->drv.MemsetD8(d, 0, bytes), "memset");
    return d;
}

typedef struct {
    LoadedKernel k;
    void *params[MAX_ARGS];
    uint32_t grid;
    double compile_ms;
} Launch;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void prepare(Bench *b, Launch *l, const char *kernel, const char *const *defs, int nparams) {
    ExampleKernel k = {"layernorm.blk", kernel, {NULL}};
    if (strncmp(kernel, "layer_norm", 10) != 0) k.file = strcmp(kernel, "softmax") == 0 ? "softmax.blk"
                                                      : strcmp(kernel, "dropout") == 0 ? "dropout.blk" : "add.blk";
    for (int i = 0; defs[i]; i++) k.defs[i] = defs[i];
    int64_t div[MAX_ARGS];
    for (int i = 0; i < MAX_ARGS; i++) div[i] = 16; /* every argument here is aligned / divisible */
    (void)nparams;
    double t0 = now_ms();
    char *err = cuda_load_kernel(b->c, &k, div, &l->k);
    l->compile_ms = now_ms() - t0;
    if (err) {
        fprintf(stderr, "gpu_bench: %s\n", err);
        exit(1);
    }
}

static void launch(Bench *b, Launch *l) {
    check(b, b->c->drv.LaunchKernel(l->k.fn, l->grid, 1, 1, 32u * (unsigned)l->k.warps, 1, 1, (unsigned)l->k.shared_bytes, NULL, l->params, NULL),
          "launch");
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median time in ms of running `n` launches in order (plus an optional lock reset). */
static double time_launches(Bench *b, Launch *ls, int n, CUdeviceptr reset, size_t reset_bytes) {
    double t[RUNS];
    for (int run = -3; run < RUNS; run++) {
        check(b, b->c->drv.MemsetD8(b->flush, 0, b->flush_bytes), "flush");
        check(b, b->c->drv.EventRecord(b->start, NULL), "event");
        if (reset) check(b, b->c->drv.MemsetD8(reset, 0, reset_bytes), "memset");
        for (int i = 0; i < n; i++) launch(b, &ls[i]);
        check(b, b->c->drv.EventRecord(b->stop, NULL), "event");
        check(b, b->c->drv.EventSynchronize(b->stop), "sync");
        float ms;
        check(b, b->c->drv.EventElapsedTime(&ms, b->start, b->stop), "elapsed");
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

static void row(const char *name, double ms, double bytes, const char *triton, const char *torch,
                double compile_ms, size_t ptx) {
    printf("| %-34s | %8.1f | %6.2f | %6s | %6s | %8.1f | %7zu |\n", name, ms * 1e3, bytes / (ms * 1e-3) / 1e12,
           triton, torch, compile_ms, ptx);
}

int main(int argc, char **argv) {
    CudaLaunchCtx c = {.examples_dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR};
    c.backend.num_warps = argc > 2 ? atoi(argv[2]) : 0;
    char err[512];
    if (!cuda_launch_init(&c, err, sizeof err)) {
        fprintf(stderr, "gpu_bench: %s\n", err);
        return 1;
    }
    Bench b = {&c, 0, 256u << 20, NULL, NULL};
    check(&b, c.drv.MemAlloc(&b.flush, b.flush_bytes), "alloc");
    check(&b, c.drv.EventCreate(&b.start, 0), "event");
    check(&b, c.drv.EventCreate(&b.stop, 0), "event");
    int driver = 0;
    c.drv.DriverGetVersion(&driver);
    printf("GPU: %s (%s), driver API %d.%d; median of %d runs, L2 flushed before each\n\n", c.device_name, c.arch,
           driver / 1000, driver % 1000 / 10, RUNS);
    printf("| %-34s | %8s | %6s | %6s | %6s | %8s | %7s |\n", "kernel and shape", "us", "TB/s", "Triton", "torch",
           "JIT ms", "PTX B");
    printf("|------------------------------------|----------|--------|--------|--------|----------|---------|\n");

    const int M = 4096;
    /* softmax, f32 */
    const int sm_n[] = {1024, 4096, 16384};
    const char *sm_triton[] = {"2.04", "2.71", "2.93"}, *sm_torch[] = {"1.95", "2.09", "2.45"};
    for (int i = 0; i < 3; i++) {
        int N = sm_n[i];
        char block[32], name[64];
        snprintf(block, sizeof block, "BLOCK=%d", next_pow2(N));
        const char *defs[] = {block, NULL};
        Launch l = {.grid = (uint32_t)M};
        prepare(&b, &l, "softmax", defs, 5);
        CUdeviceptr in = dev_random(&b, (size_t)M * N, DT_F32, 0, 1, 1), out = dev_zeros(&b, (size_t)M * N * 4);
        int32_t stride = N;
        l.params[0] = &out, l.params[1] = &in, l.params[2] = &stride, l.params[3] = &stride, l.params[4] = &stride;
        double ms = time_launches(&b, &l, 1, 0, 0);
        snprintf(name, sizeof name, "softmax f32 M=%d N=%d", M, N);
        row(name, ms, 2.0 * M * N * 4, sm_triton[i], sm_torch[i], l.compile_ms, l.k.ptx_bytes);
        c.drv.MemFree(in), c.drv.MemFree(out), c.drv.ModuleUnload(l.k.mod);
    }
    /* layer norm forward and backward, f16 */
    const int ln_n[] = {1024, 4096, 8192, 15872};
    const char *fwd_triton[] = {"1.11", "2.04", "2.08", "2.57"}, *fwd_torch[] = {"1.07", "1.75", "1.72", "1.66"};
    const char *bwd_triton[] = {"0.23", "0.93", "1.42", "1.57"}, *bwd_torch[] = {"0.20", "0.60", "0.80", "0.81"};
    for (int i = 0; i < 4; i++) {
        int N = ln_n[i], block = next_pow2(N);
        char bs[32], name[64];
        snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", block);
        const char *defs[] = {"T=f16", bs, NULL};
        Launch l = {.grid = (uint32_t)M};
        prepare(&b, &l, "layer_norm_fwd", defs, 9);
        size_t mn = (size_t)M * N;
        CUdeviceptr x = dev_random(&b, mn, DT_F16, -2.3, 0.5, 2), y = dev_zeros(&b, mn * 2);
        CUdeviceptr w = dev_random(&b, (size_t)N, DT_F16, 0.5, 0.2, 3), bb = dev_random(&b, (size_t)N, DT_F16, 0.5, 0.2, 4);
        CUdeviceptr mean = dev_zeros(&b, (size_t)M * 4), rstd = dev_zeros(&b, (size_t)M * 4);
        int32_t stride = N, n = N;
        float eps = 1e-5f;
        void *p[] = {&x, &y, &w, &bb, &mean, &rstd, &stride, &n, &eps};
        memcpy(l.params, p, sizeof p);
        double ms = time_launches(&b, &l, 1, 0, 0);
        snprintf(name, sizeof name, "layer_norm_fwd f16 M=%d N=%d", M, N);
        row(name, ms, 2.0 * M * N * 2, fwd_triton[i], fwd_torch[i], l.compile_ms, l.k.ptx_bytes);
        c.drv.ModuleUnload(l.k.mod);

        /* backward: the dx kernel with the lock, then the dW/dB kernel */
        int group = N <= 1024 ? 256 : N <= 4096 ? 128 : N <= 8192 ? 96 : 64;
        char g[32], bn[32];
        snprintf(g, sizeof g, "GROUP_SIZE_M=%d", group);
        snprintf(bn, sizeof bn, "BLOCK_SIZE_N=%d", block);
        const char *dx_defs[] = {"T=f16", g, bn, NULL};
        const char *dw_defs[] = {"T=f16", "BLOCK_SIZE_M=32", "BLOCK_SIZE_N=128", NULL};
        Launch ls[2] = {{.grid = (uint32_t)M}, {.grid = (uint32_t)((N + 127) / 128)}};
        prepare(&b, &ls[0], "layer_norm_bwd_dx", dx_defs, 11);
        prepare(&b, &ls[1], "layer_norm_bwd_dwdb", dw_defs, 6);
        CUdeviceptr dy = dev_random(&b, mn, DT_F16, 0, 0.1, 5), dx = dev_zeros(&b, mn * 2);
        CUdeviceptr pdw = dev_zeros(&b, (size_t)group * N * 2), pdb = dev_zeros(&b, (size_t)group * N * 2);
        CUdeviceptr lock = dev_zeros(&b, (size_t)group * 2 * 4);
        CUdeviceptr dw = dev_zeros(&b, (size_t)N * 2), db = dev_zeros(&b, (size_t)N * 2);
        int32_t groups = group;
        void *p1[] = {&dx, &dy, &pdw, &pdb, &x, &w, &mean, &rstd, &lock, &stride, &n};
        void *p2[] = {&pdw, &pdb, &dw, &db, &groups, &n};
        memcpy(ls[0].params, p1, sizeof p1);
        memcpy(ls[1].params, p2, sizeof p2);
        ms = time_launches(&b, ls, 2, lock, (size_t)group * 2 * 4);
        snprintf(name, sizeof name, "layer_norm_bwd f16 M=%d N=%d", M, N);
        row(name, ms, 3.0 * M * N * 2, bwd_triton[i], bwd_torch[i], ls[0].compile_ms + ls[1].compile_ms,
            ls[0].k.ptx_bytes + ls[1].k.ptx_bytes);
        CUdeviceptr all[] = {x, y, w, bb, mean, rstd, dy, dx, pdw, pdb, lock, dw, db};
        for (size_t j = 0; j < sizeof all / sizeof all[0]; j++) c.drv.MemFree(all[j]);
        c.drv.ModuleUnload(ls[0].k.mod), c.drv.ModuleUnload(ls[1].k.mod);
    }
    /* dropout and add, f32, 2^26 elements */
    {
        int n = 1 << 26;
        const char *defs[] = {"BLOCK=1024", NULL};
        Launch l = {.grid = (uint32_t)(n / 1024)};
        prepare(&b, &l, "dropout", defs, 5);
        CUdeviceptr x = dev_random(&b, (size_t)n, DT_F32, 0, 1, 6), out = dev_zeros(&b, (size_t)n * 4);
        float p = 0.5f;
        int32_t seed = 123;
        void *pp[] = {&x, &out, &n, &p, &seed};
        memcpy(l.params, pp, sizeof pp);
        double ms = time_launches(&b, &l, 1, 0, 0);
        row("dropout f32 n=2^26", ms, 2.0 * n * 4, "2.55", "2.24", l.compile_ms, l.k.ptx_bytes);
        c.drv.ModuleUnload(l.k.mod);
        Launch a = {.grid = (uint32_t)(n / 1024)};
        prepare(&b, &a, "add", defs, 4);
        CUdeviceptr y = dev_random(&b, (size_t)n, DT_F32, 0, 1, 7);
        void *pa[] = {&x, &y, &out, &n};
        memcpy(a.params, pa, sizeof pa);
        ms = time_launches(&b, &a, 1, 0, 0);
        row("add f32 n=2^26", ms, 3.0 * n * 4, "", "", a.compile_ms, a.k.ptx_bytes);
        c.drv.MemFree(x), c.drv.MemFree(y), c.drv.MemFree(out), c.drv.ModuleUnload(a.k.mod);
    }
    printf("\nTB/s: bytes moved / kernel time (layer norm fwd 2MN, bwd 3MN elements, softmax 2MN,\n"
           "dropout 2n, add 3n); Triton and torch columns: design-notes §1, same GPU model.\n"
           "JIT ms: blk source to a loaded module (front end, LLVM, PTX, driver JIT), cold.\n");
    cuda_launch_close(&c);
    return 0;
}
