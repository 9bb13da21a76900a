/* gpu_runtime.c: the runtime API's CUDA paths, which need a GPU: a launch
 * through the API, a kernel that faults (its context then reports itself
 * unusable instead of carrying on), a device that does not exist, and the
 * on-disk cache (an entry written, reused by a new module, a corrupt one
 * rebuilt), and the automatic occupancy target (a kernel built again with
 * .minnctapersm where ptxas left registers unused).
 * Standalone, for the static build on the GPU machine; exit 0 when all hold. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blk.h"
#include "cache.h"
#include "cuda_driver.h"

static int failures;

static void expect(int cond, const char *what) {
    printf("%-4s %s\n", cond ? "ok" : "FAIL", what);
    if (!cond) {
        printf("     last error: %s\n", blk_last_error());
        failures++;
    }
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".blkc") && !strstr(e->d_name, ".tmp");
    if (d) closedir(d);
    return n;
}

/* Compile, launch once (which loads the code), check the result. */
static int run_once(blk_context *ctx, const char *src, blk_ptr x) {
    blk_compile_options opt = {.name = "c.blk"};
    blk_module *m;
    blk_kernel *k;
    if (blk_module_create(ctx, src, strlen(src), &opt, &m) || blk_module_get_kernel(m, "c", &k)) return 0;
    blk_arg args[] = {blk_arg_ptr(x)};
    int ok = blk_launch(k, 1, 1, 1, args, 1, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS;
    int v = 0;
    ok = ok && blk_memcpy_to_host(ctx, &v, x + 5 * 4, 4) == BLK_SUCCESS && v == 15;
    blk_module_destroy(m);
    return ok;
}

/* Does a cache entry of `kernel` hold `text`? */
/* CUDA graphs: blk launches recorded by stream capture and replayed. The
 * driver's graph calls are the test's own (the runtime has no use for them). */
typedef struct {
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamBeginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*StreamEndCapture)(CUstream, CUgraph *);
    CUresult (*GraphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    CUresult (*GraphDestroy)(CUgraph);
} GraphApi;

static bool graph_api(GraphApi *g) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    struct { void **slot; const char *name; } syms[] = {
        {(void **)&g->StreamCreate, "cuStreamCreate"}, {(void **)&g->StreamDestroy, "cuStreamDestroy_v2"},
        {(void **)&g->StreamBeginCapture, "cuStreamBeginCapture_v2"},
        {(void **)&g->StreamEndCapture, "cuStreamEndCapture"},
        {(void **)&g->GraphInstantiate, "cuGraphInstantiateWithFlags"}, {(void **)&g->GraphLaunch, "cuGraphLaunch"},
        {(void **)&g->StreamSynchronize, "cuStreamSynchronize"},
        {(void **)&g->GraphExecDestroy, "cuGraphExecDestroy"}, {(void **)&g->GraphDestroy, "cuGraphDestroy"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
        if (!(*syms[i].slot = dlsym(lib, syms[i].name))) return false;
    return true; /* the library stays loaded: the process's driver */
}

/* k stores 2 * o at x + far + o for o < n (main's first kernel); its
 * specialization for args has run once, so its code is loaded. */
static void graph_capture(blk_context *ctx, blk_kernel *k, blk_ptr x, const blk_arg *args) {
    GraphApi g;
    if (!graph_api(&g)) {
        expect(0, "the driver's graph calls");
        return;
    }
    CUstream s;
    CUgraph graph = NULL;
    CUgraphExec exec = NULL;
    expect(!g.StreamCreate(&s, 0), "a stream to capture");
    expect(!g.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin a capture (global mode)");
    expect(blk_launch(k, 3, 1, 1, args, 3, s) == BLK_SUCCESS, "blk_launch while capturing records the launch");
    expect(!g.StreamEndCapture(s, &graph) && graph, "end the capture: a graph");
    expect(graph && !g.GraphInstantiate(&exec, graph, 0), "instantiate it");
    int host[300];
    int right = 1;
    for (int replay = 0; replay < 2 && exec; replay++) {
        expect(blk_memset(ctx, x, 0, sizeof host) == BLK_SUCCESS, "clear the output");
        expect(!g.GraphLaunch(exec, s) && !g.StreamSynchronize(s), "replay the graph");
        expect(blk_memcpy_to_host(ctx, host, x, sizeof host) == BLK_SUCCESS, "copy back");
        for (int i = 0; i < 300; i++) right &= host[i] == 2 * i;
    }
    expect(right, "each replay writes 2 * index, as the launch did");
    if (exec) g.GraphExecDestroy(exec);
    if (graph) g.GraphDestroy(graph);

    /* a specialization never launched: its code would load inside the capture */
    blk_arg fresh[] = {args[0], blk_arg_i32(12), blk_arg_i64(0)}; /* n divisible by 4: new facts */
    graph = NULL;
    expect(!g.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), "begin a second capture");
    blk_status st = blk_launch(k, 1, 1, 1, fresh, 3, s);
    printf("     first launch of a specialization inside a capture: %s\n",
           st == BLK_SUCCESS ? "recorded" : blk_last_error());
    CUresult end = g.StreamEndCapture(s, &graph);
    printf("     end of that capture: CUDA result %d\n", (int)end);
    if (graph) g.GraphDestroy(graph);
    expect(st == BLK_SUCCESS || strstr(blk_last_error(), "launch it once before"),
           "a first launch inside a capture works or says to launch once before capturing");
    expect(blk_launch(k, 3, 1, 1, args, 3, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS,
           "the context still launches after that capture");
    g.StreamDestroy(s);
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Programmatic dependent launch: a chain of STEPS launches, each adding one
 * to what the one before wrote. With gdc_wait the runtime lets each start
 * while the one before finishes, and the wait must still see its writes:
 * the chain ends at STEPS exactly. The same chain without gdc_wait (plain
 * stream order) is timed beside it; the times are printed, not checked. */
static void dependent_launch_chain(blk_context *ctx) {
    enum { N = 1 << 20, STEPS = 200 };
    const char *src = "kernel step(x: *f32, y: *f32, n: i32, const WAIT: bool = true) {\n"
                      "    let i = program_id(0) * 1024 + arange(0, 1024);\n"
                      "    if WAIT { gdc_wait(); }\n"
                      "    let v = load(x + i, i < n);\n"
                      "    if WAIT { gdc_launch_dependents(); }\n"
                      "    store(y + i, v + 1.0, i < n);\n"
                      "}\n";
    blk_ptr buf[2];
    float *host = malloc(N * sizeof *host);
    expect(host && !blk_malloc(ctx, N * 4, &buf[0]) && !blk_malloc(ctx, N * 4, &buf[1]), "two buffers");
    for (int wait = 1; wait >= 0; wait--) {
        const char *defs[] = {wait ? "WAIT=true" : "WAIT=false"};
        blk_compile_options opt = {.name = "pdl.blk", .defines = defs, .num_defines = 1};
        blk_module *m;
        blk_kernel *k;
        if (blk_module_create(ctx, src, strlen(src), &opt, &m) || blk_module_get_kernel(m, "step", &k)) {
            expect(0, blk_last_error());
            break;
        }
        double best = 1e9;
        bool right = true;
        for (int rep = 0; rep < 3; rep++) {
            expect(!blk_memset(ctx, buf[0], 0, N * 4), "zero the first buffer");
            blk_synchronize(ctx);
            double t0 = seconds();
            for (int s = 0; s < STEPS; s++) {
                blk_arg a[] = {blk_arg_ptr(buf[s & 1]), blk_arg_ptr(buf[(s + 1) & 1]), blk_arg_i32(N)};
                if (blk_launch(k, N / 1024, 1, 1, a, 3, NULL)) right = false;
            }
            if (blk_synchronize(ctx)) right = false;
            double t = seconds() - t0;
            best = t < best ? t : best;
            if (blk_memcpy_to_host(ctx, host, buf[STEPS & 1], N * 4)) right = false;
            for (int i = 0; i < N && right; i++) right = host[i] == (float)STEPS;
        }
        printf("     %d dependent launches of a 4 MiB step %s: %.1f us each (best of 3)\n", STEPS,
               wait ? "with gdc_wait (programmatic dependent launch)" : "without (stream order)", best / STEPS * 1e6);
        expect(right, wait ? "the chain with gdc_wait ends at STEPS: every wait saw the write before it"
                           : "the chain without ends at STEPS");
        blk_module_destroy(m);
    }
    blk_free(ctx, buf[0]), blk_free(ctx, buf[1]);
    free(host);
}

static int entry_has(const char *dir, const char *kernel, const char *text) {
    DIR *d = opendir(dir);
    int found = 0;
    for (struct dirent *e; d && (e = readdir(d)) && !found;) {
        if (!strstr(e->d_name, ".blkc") || strstr(e->d_name, ".tmp")) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        char *buf = malloc(1 << 20);
        size_t n = f && buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
        if (f) fclose(f);
        if (buf) {
            for (size_t i = 0; i < n; i++) if (!buf[i]) buf[i] = '\n'; /* the binary fields */
            buf[n] = 0;
            char want[160];
            snprintf(want, sizeof want, "kernel %s\n", kernel);
            found = strstr(buf, want) && strstr(buf, text);
        }
        free(buf);
    }
    if (d) closedir(d);
    return found;
}

/* layer_norm_fwd with a whole row of 15872 halves in a block of 16384 and 8
 * warps, from examples/layernorm.blk, with this occupancy target option, into
 * y (rows x 15872 halves; x, w, b beside it). */
static int layer_norm_rows(blk_context *ctx, const char *path, int target, blk_ptr x, blk_ptr y, blk_ptr wb,
                           blk_ptr stats, int rows) {
    const char *defs[] = {"BLOCK_SIZE=16384"};
    blk_compile_options opt = {.defines = defs, .num_defines = 1, .num_warps = 8, .min_blocks_per_sm = target};
    blk_module *m;
    blk_kernel *k;
    if (blk_module_create_from_file(ctx, path, &opt, &m)) return 0;
    int n = 15872;
    blk_arg a[] = {blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_ptr(wb), blk_arg_ptr(wb + 2 * n), blk_arg_ptr(stats),
                   blk_arg_ptr(stats + 4 * rows), blk_arg_i32(n), blk_arg_i32(n), blk_arg_f32(1e-5f)};
    int ok = !blk_module_get_kernel(m, "layer_norm_fwd", &k) && !blk_launch(k, (unsigned)rows, 1, 1, a, 9, NULL) &&
             !blk_synchronize(ctx);
    blk_module_destroy(m);
    return ok;
}

int main(int argc, char **argv) {
    const char *examples = argc > 1 ? argv[1] : "dsl_examples";
    char cache[] = "/tmp/blk-gpu-cache-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("BLK_CACHE_DIR", cache, 1);
    unsetenv("BLK_CACHE_DISABLE"); /* it checks the cache, in a directory of its own */
    blk_context *ctx;
    if (blk_context_create_cuda(0, &ctx)) {
        printf("no GPU: %s\n", blk_last_error());
        return 1;
    }
    printf("device: %s\n\n", blk_context_device(ctx));
    const char *src = "kernel k(x: *i32, n: i32, far: i64) {\n"
                      "    let o = program_id(0) * 128 + arange(0, 128);\n"
                      "    store(x + far + o, o * 2, o < n);\n"
                      "}\n";
    blk_compile_options opt = {.name = "k.blk"};
    blk_module *m;
    blk_kernel *k;
    expect(blk_module_create(ctx, src, strlen(src), &opt, &m) == BLK_SUCCESS, "compile through the API");
    expect(blk_module_get_kernel(m, "k", &k) == BLK_SUCCESS, "get the kernel");
    blk_ptr x;
    int host[300];
    expect(blk_malloc(ctx, sizeof host, &x) == BLK_SUCCESS, "blk_malloc");
    expect(blk_memset(ctx, x, 0, sizeof host) == BLK_SUCCESS, "blk_memset");
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_i32(300), blk_arg_i64(0)};
    expect(blk_launch(k, 3, 1, 1, args, 3, NULL) == BLK_SUCCESS, "launch");
    expect(blk_synchronize(ctx) == BLK_SUCCESS, "synchronize");
    expect(blk_memcpy_to_host(ctx, host, x, sizeof host) == BLK_SUCCESS, "copy back");
    int right = 1;
    for (int i = 0; i < 300; i++) right &= host[i] == 2 * i;
    expect(right, "results equal 2 * index");
    blk_arg odd[] = {blk_arg_ptr(x + 4), blk_arg_i32(17), blk_arg_i64(0)};
    expect(blk_launch(k, 1, 1, 1, odd, 3, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS,
           "a second specialization (unaligned pointer, odd n)");
    expect(blk_launch(k, 1, 1, 1, args, 2, NULL) == BLK_ERROR_BAD_ARGUMENT, "wrong argument count");
    expect(blk_launch(k, 1, 70000, 1, args, 3, NULL) == BLK_ERROR_BAD_GRID &&
           strstr(blk_last_error(), "grid dimension y is 70000"), "a grid larger than the device allows");

    graph_capture(ctx, k, x, args);
    dependent_launch_chain(ctx);

    /* every scalar parameter type reaches the kernel with its value */
    const char *psrc = "kernel p(out: *f32, a: i32, b: u32, c: i64, d: f32, e: f16, f: bf16, g: bool) {\n"
                       "    store(out, a as f32); store(out + 1, b as f32); store(out + 2, c as f32);\n"
                       "    store(out + 3, d); store(out + 4, e as f32); store(out + 5, f as f32);\n"
                       "    store(out + 6, g as f32);\n"
                       "}\n";
    blk_module *pm;
    blk_kernel *pk;
    expect(blk_module_create(ctx, psrc, strlen(psrc), &opt, &pm) == BLK_SUCCESS &&
           blk_module_get_kernel(pm, "p", &pk) == BLK_SUCCESS, "compile a kernel of every scalar type");
    blk_arg pargs[] = {blk_arg_ptr(x), blk_arg_i32(-7), blk_arg_u32(4000000000u), blk_arg_i64(-(1LL << 40)),
                       blk_arg_f32(0.1f), blk_arg_f32(0.1f), blk_arg_f32(0.1f), blk_arg_i32(1)};
    float got[7] = {0};
    expect(blk_launch(pk, 1, 1, 1, pargs, 8, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS &&
           blk_memcpy_to_host(ctx, got, x, sizeof got) == BLK_SUCCESS, "launch it");
    uint32_t bits;
    float tenth = 0.1f, bf16_tenth;
    memcpy(&bits, &tenth, 4);
    bits = (bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff0000u; /* to bf16, nearest even */
    memcpy(&bf16_tenth, &bits, 4);
    float want[7] = {-7.0f, 4000000000.0f, -1099511627776.0f, 0.1f, (float)(_Float16)0.1f, bf16_tenth, 1.0f};
    int same = 1;
    for (int i = 0; i < 7; i++) {
        same &= got[i] == want[i];
        if (got[i] != want[i]) printf("     parameter %d: got %.9g, expected %.9g\n", i + 1, got[i], want[i]);
    }
    expect(same, "i32, u32, i64, f32, f16 (0.1 rounded), bf16 (0.1 rounded) and bool arrive as passed");
    blk_module_destroy(pm);

    /* the disk cache */
    const char *csrc = "kernel c(x: *i32 @align(16)) { store(x + arange(0, 64), arange(0, 64) * 3); }\n";
    int before = count_entries(cache);
    expect(run_once(ctx, csrc, x), "a kernel runs with the cache on");
    expect(count_entries(cache) == before + 1, "its entry is written");
    expect(run_once(ctx, csrc, x), "a new module of the same source runs from the cache");
    expect(count_entries(cache) == before + 1, "and adds no entry");
    DIR *d = opendir(cache);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strstr(e->d_name, ".blkc")) continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
        FILE *f = fopen(path, "r+b");
        if (f) {
            fseek(f, 40, SEEK_SET);
            fputs("garbage", f);
            fclose(f);
        }
    }
    if (d) closedir(d);
    expect(run_once(ctx, csrc, x), "a corrupt entry is rebuilt, and the kernel runs");

    /* The automatic occupancy target: without one ptxas gives this forward
     * fewer registers than two programs an SM allow (103 of 128 on the
     * H100), so the runtime builds it again with .minnctapersm 2; the
     * results are the same bits as the build without a target. */
    char lpath[512];
    snprintf(lpath, sizeof lpath, "%s/layernorm.blk", examples);
    enum { ROWS = 64, COLS = 15872 };
    uint16_t *lx = malloc(sizeof(uint16_t) * ROWS * COLS * 3);
    blk_ptr dx = 0, dy = 0, dwb = 0, dstats = 0;
    int made = lx && !blk_malloc(ctx, 2 * ROWS * COLS, &dx) && !blk_malloc(ctx, 2 * 2 * ROWS * COLS, &dy) &&
               !blk_malloc(ctx, 2 * 2 * COLS, &dwb) && !blk_malloc(ctx, 2 * 4 * ROWS, &dstats);
    if (made) {
        uint32_t seed = 12345;
        for (int i = 0; i < ROWS * COLS + 2 * COLS; i++) {
            seed = seed * 1664525u + 1013904223u;
            _Float16 h = (_Float16)((float)(int)(seed >> 20) / 1024.0f - 2.0f); /* exact in f16 */
            memcpy(&lx[i], &h, 2);
        }
        made = !blk_memcpy_to_device(ctx, dx, lx, 2 * ROWS * COLS) &&
               !blk_memcpy_to_device(ctx, dwb, lx + ROWS * COLS, 2 * 2 * COLS);
    }
    expect(made, "layer-norm data");
    expect(layer_norm_rows(ctx, lpath, 0, dx, dy, dwb, dstats, ROWS), "layer_norm_fwd, automatic occupancy target");
    expect(entry_has(cache, "layer_norm_fwd", ".minnctapersm 2\n"),
           "its cached PTX was built again with .minnctapersm 2");
    expect(layer_norm_rows(ctx, lpath, -1, dx, dy + 2 * ROWS * COLS, dwb, dstats, ROWS), "and with none (-1)");
    uint16_t *ya = lx, *yb = lx + ROWS * COLS;
    expect(made && !blk_memcpy_to_host(ctx, ya, dy, 2 * ROWS * COLS) &&
           !blk_memcpy_to_host(ctx, yb, dy + 2 * ROWS * COLS, 2 * ROWS * COLS) &&
           memcmp(ya, yb, 2 * ROWS * COLS) == 0, "the two builds give the same bits");
    blk_free(ctx, dx), blk_free(ctx, dy), blk_free(ctx, dwb), blk_free(ctx, dstats);
    free(lx);
    /* Another user of the device's primary context (PyTorch does this):
     * blk must not reset it from under them, fault or not. */
    CudaDriver drv;
    char derr[256];
    CUdevice dev = 0;
    CUcontext held = NULL;
    int holding = blk_cuda_driver_load(&drv, derr, sizeof derr) && !drv.Init(0) && !drv.DeviceGet(&dev, 0) &&
                  !drv.DevicePrimaryCtxRetain(&held, dev);
    expect(holding, "a second holder retains the primary context");
    /* a store 2^40 elements away: an illegal address */
    blk_arg wild[] = {blk_arg_ptr(x), blk_arg_i32(128), blk_arg_i64(1LL << 40)};
    blk_status s = blk_launch(k, 1, 1, 1, wild, 3, NULL);
    if (s == BLK_SUCCESS) s = blk_synchronize(ctx);
    expect(s == BLK_ERROR_KERNEL_FAULT && strstr(blk_last_error(), "'k'") && strstr(blk_last_error(), "illegal"),
           "a wild store is a kernel fault, named with the driver's text");
    printf("     (%s)\n", blk_last_error());
    expect(blk_launch(k, 3, 1, 1, args, 3, NULL) == BLK_ERROR_CONTEXT_LOST, "then the context reports itself lost");
    blk_module_destroy(m);
    blk_context_destroy(ctx);
    if (holding) {
        unsigned flags = 0;
        int active = 0;
        CUcontext again = NULL;
        expect(!drv.DevicePrimaryCtxGetState(dev, &flags, &active) && active,
               "destroying the faulted context leaves the shared primary context alive");
        expect(!drv.DevicePrimaryCtxRetain(&again, dev) && again == held,
               "and it is the same context the other holder has (not reset and recreated)");
        if (again) drv.DevicePrimaryCtxRelease(dev);
        drv.DevicePrimaryCtxRelease(dev);
        blk_cuda_driver_unload(&drv);
    }
    blk_context *none;
    expect(blk_context_create_cuda(99, &none) == BLK_ERROR_NO_DEVICE, "device 99 does not exist");
    /* CUDA keeps an illegal address for the whole process, even after the
     * last holder released the primary context: a new context on the
     * device must fail cleanly, naming the error, or work */
    s = blk_context_create_cuda(0, &ctx);
    expect(s == BLK_SUCCESS || strstr(blk_last_error(), "illegal memory access"),
           "a new context after a fault works, or reports the process-wide CUDA error");
    printf("     (%s)\n", s == BLK_SUCCESS ? "it works" : blk_last_error());
    if (s == BLK_SUCCESS) blk_context_destroy(ctx);
    char cmd[100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0) failures++;
    printf("\n%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
