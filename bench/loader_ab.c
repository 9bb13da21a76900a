/* loader_ab.c: does the way the driver turns PTX into machine code change
 * a kernel's speed? Compiles layer_norm_fwd (f16, launch facts as the
 * runtime gives them) and times the same PTX loaded two ways, alike:
 * cuModuleLoadData on the PTX (the driver's JIT), and cuLink to a cubin then
 * cuModuleLoadData on the cubin (what the runtime does, so that it can keep
 * the cubin in its disk cache). Median of 25, L2 flushed before each run.
 * Usage: loader_ab [EXAMPLES_DIR]   (on a GPU machine) */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cuda_driver.h"

static CudaDriver d;

static void check(CUresult r, const char *what) {
    if (!r) return;
    char text[256];
    fprintf(stderr, "loader_ab: %s: %s\n", what, blk_cuda_error_text(&d, r, text, sizeof text));
    exit(1);
}

static char *ptx_of(const char *dir, int block, NvptxKernel *info) {
    char path[1024], bs[32];
    snprintf(path, sizeof path, "%s/layernorm.blk", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char src[1 << 16];
    size_t n = fread(src, 1, sizeof src, f);
    fclose(f);
    snprintf(bs, sizeof bs, "%d", block);
    ConstDef defs[] = {{"T", "f16", false}, {"BLOCK_SIZE", bs, false}};
    CompileRequest req = {path, src, n, defs, 2, diag_print_to_file, stderr};
    Compilation *c = compile_front(&req);
    int64_t div[9] = {16, 16, 16, 16, 16, 16, 16, 16, 0}; /* pointers aligned, stride and N divisible */
    NvptxOptions opt = {.arch = "sm_90", .only_kernel = "layer_norm_fwd", .param_div = div};
    NvptxOutput out;
    char *ptx = c && compile_ptx(c, &opt, &out) ? out.text : NULL;
    if (ptx) {
        *info = out.kernels[0];
        info->notes = NULL; /* freed with the output */
        out.text = NULL;
        nvptx_output_free(&out);
    }
    compilation_free(c);
    return ptx;
}

static int cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "dsl_examples";
    char err[512];
    if (!blk_cuda_driver_load(&d, err, sizeof err)) return fprintf(stderr, "loader_ab: %s\n", err), 1;
    CUdevice dev;
    CUcontext ctx;
    check(d.Init(0), "init");
    check(d.DeviceGet(&dev, 0), "device");
    check(d.DevicePrimaryCtxRetain(&ctx, dev), "context");
    check(d.CtxSetCurrent(ctx), "context");
    CUevent e0, e1;
    check(d.EventCreate(&e0, 0), "event");
    check(d.EventCreate(&e1, 0), "event");
    CUdeviceptr flush;
    check(d.MemAlloc(&flush, 256 << 20), "alloc");
    const int M = 4096, ns[] = {4096, 8192, 15872};
    printf("layer_norm_fwd f16, M=%d: median of 25 kernel times (us), L2 flushed before each\n\n", M);
    printf("| N | cuModuleLoadData(PTX) | cuLink -> cubin | cubin / PTX |\n|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++) {
        int N = ns[s], block = 1;
        while (block < N) block *= 2;
        NvptxKernel info;
        char *ptx = ptx_of(dir, block, &info);
        if (!ptx) return fprintf(stderr, "loader_ab: cannot compile %s/layernorm.blk\n", dir), 1;
        size_t mn = (size_t)M * N;
        CUdeviceptr x, y, w, b, mean, rstd;
        check(d.MemAlloc(&x, mn * 2), "alloc");
        check(d.MemAlloc(&y, mn * 2), "alloc");
        check(d.MemAlloc(&w, (size_t)N * 2), "alloc");
        check(d.MemAlloc(&b, (size_t)N * 2), "alloc");
        check(d.MemAlloc(&mean, (size_t)M * 4), "alloc");
        check(d.MemAlloc(&rstd, (size_t)M * 4), "alloc");
        check(d.MemsetD8(x, 0x3c, mn * 2), "memset"); /* 1.0009765625 in f16 halves */
        check(d.MemsetD8(w, 0x3c, (size_t)N * 2), "memset");
        check(d.MemsetD8(b, 0, (size_t)N * 2), "memset");
        double us[2];
        for (int how = 0; how < 2; how++) {
            CUmodule mod;
            if (how == 0) {
                check(d.ModuleLoadData(&mod, ptx), "load PTX");
            } else {
                CUlinkState link;
                void *cubin;
                size_t cubin_len;
                check(d.LinkCreate(0, NULL, NULL, &link), "link");
                check(d.LinkAddData(link, CU_JIT_INPUT_PTX, ptx, strlen(ptx) + 1, "layer_norm_fwd", 0, NULL, NULL), "link");
                check(d.LinkComplete(link, &cubin, &cubin_len), "link");
                check(d.ModuleLoadData(&mod, cubin), "load cubin");
                check(d.LinkDestroy(link), "link");
            }
            CUfunction fn;
            check(d.ModuleGetFunction(&fn, mod, "layer_norm_fwd"), "function");
            int32_t stride = N, n32 = N;
            float eps = 1e-5f;
            void *args[] = {&x, &y, &w, &b, &mean, &rstd, &stride, &n32, &eps};
            float t[25];
            for (int run = -3; run < 25; run++) {
                check(d.MemsetD8(flush, 0, 256 << 20), "flush");
                check(d.EventRecord(e0, NULL), "event");
                check(d.LaunchKernel(fn, (unsigned)M, 1, 1, 32u * (unsigned)info.num_warps, 1, 1,
                                     (unsigned)info.shared_bytes, NULL, args, NULL), "launch");
                check(d.EventRecord(e1, NULL), "event");
                check(d.EventSynchronize(e1), "sync");
                float ms;
                check(d.EventElapsedTime(&ms, e0, e1), "elapsed");
                if (run >= 0) t[run] = ms;
            }
            qsort(t, 25, sizeof t[0], cmp);
            us[how] = t[12] * 1e3;
            check(d.ModuleUnload(mod), "unload");
        }
        printf("| %d | %.1f | %.1f | %.2f |\n", N, us[0], us[1], us[1] / us[0]);
        CUdeviceptr all[] = {x, y, w, b, mean, rstd};
        for (int i = 0; i < 6; i++) d.MemFree(all[i]);
        free(ptx);
    }
    return 0;
}
