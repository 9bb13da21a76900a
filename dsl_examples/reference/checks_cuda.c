/* checks_cuda.c: the GPU launcher for the example checks (checks.h): JIT the
 * kernel to PTX in process, copy the host buffers to the device, launch,
 * copy them back. */
#define _POSIX_C_SOURCE 200809L
#include "checks_cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *msgf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *msgf(const char *fmt, ...) {
    char *m = malloc(1024);
    if (!m) return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, 1024, fmt, ap);
    va_end(ap);
    return m;
}

bool cuda_launch_init(CudaLaunchCtx *c, char *err, size_t err_size) {
    if (!cuda_driver_load(&c->drv, err, err_size)) return false;
    char buf[256];
    CUresult r = c->drv.Init(0);
    int n = 0;
    if (r == CUDA_SUCCESS) r = c->drv.DeviceGetCount(&n);
    if (r != CUDA_SUCCESS || n == 0) {
        snprintf(err, err_size, "no CUDA device: %s", r ? cuda_error_text(&c->drv, r, buf, sizeof buf) : "none found");
        cuda_driver_unload(&c->drv);
        return false;
    }
    if ((r = c->drv.DeviceGet(&c->dev, 0)) || (r = c->drv.DevicePrimaryCtxRetain(&c->cu_ctx, c->dev)) ||
        (r = c->drv.CtxSetCurrent(c->cu_ctx))) {
        snprintf(err, err_size, "cannot open the CUDA device: %s", cuda_error_text(&c->drv, r, buf, sizeof buf));
        cuda_driver_unload(&c->drv);
        return false;
    }
    int major = 0, minor = 0;
    c->drv.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->dev);
    c->drv.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->dev);
    snprintf(c->arch, sizeof c->arch, "sm_%d%d", major, minor);
    if (!backend_arch_features(c->arch)) snprintf(c->arch, sizeof c->arch, "sm_90");
    c->drv.DeviceGetName(c->device_name, sizeof c->device_name, c->dev);
    return true;
}

void cuda_launch_close(CudaLaunchCtx *c) {
    if (c->drv.lib) c->drv.DevicePrimaryCtxRelease(c->dev);
    cuda_driver_unload(&c->drv);
}

char *cuda_load_kernel(CudaLaunchCtx *c, const ExampleKernel *k, const int64_t *param_div, LoadedKernel *out) {
    memset(out, 0, sizeof *out);
    Compilation *comp = NULL;
    BirFunction *fn = NULL;
    char *msg = example_compile(c->examples_dir, k, &comp, &fn);
    if (!msg) msg = cuda_load_compiled(c, comp, fn, param_div, out);
    compilation_free(comp);
    return msg;
}

char *cuda_load_compiled(CudaLaunchCtx *c, Compilation *comp, const BirFunction *fn, const int64_t *param_div,
                         LoadedKernel *out) {
    char err[1024], ebuf[256];
    BackendOptions bo = c->backend;
    bo.arch = c->arch;
    bo.param_div = param_div;
    BackendModule *bm = codegen_module(comp->bir, fn->name, &bo, err, sizeof err);
    char *ptx = bm ? backend_emit(bm, false, err, sizeof err) : NULL;
    out->warps = bm ? backend_kernel_num_warps(bm, fn->name) : 0;
    backend_module_free(bm);
    if (!ptx) return msgf("%s", err);
    out->ptx_bytes = strlen(ptx);
    CUresult r = c->drv.ModuleLoadDataEx(&out->mod, ptx, 0, NULL, NULL);
    free(ptx);
    if (!r) r = c->drv.ModuleGetFunction(&out->fn, out->mod, fn->name);
    if (r) return msgf("kernel '%s': loading its PTX: %s", fn->name, cuda_error_text(&c->drv, r, ebuf, sizeof ebuf));
    return NULL;
}

char *example_launch_cuda(void *ctx, const ExampleKernel *k, const InterpArg *args, int nargs,
                          const uint32_t grid[3], const InterpBuffer *bufs, int nbufs) {
    CudaLaunchCtx *c = ctx;
    const CudaDriver *d = &c->drv;
    char ebuf[256];
    Compilation *comp = NULL;
    BirFunction *fn = NULL;
    char *result = example_compile(c->examples_dir, k, &comp, &fn);
    if (result) {
        compilation_free(comp);
        return result;
    }
    /* specialize as Triton does: 16-byte aligned pointers and integers
     * divisible by 16 are facts the code may use */
    int64_t param_div[64] = {0};
    for (int i = 0; i < nargs && i < 64; i++) {
        BlkType t = fn->params[i].type;
        if (t.dtype == DT_PTR) { /* device buffers are 256-byte aligned: the offset decides */
            for (int b = 0; b < nbufs; b++) {
                const char *hp = args[i].p, *base = bufs[b].base;
                if (hp >= base && hp <= base + bufs[b].bytes) param_div[i] = (hp - base) % 16 == 0 ? 16 : 0;
            }
        }
        else if (dtype_is_int(t.dtype)) param_div[i] = args[i].i % 16 == 0 ? 16 : 0;
    }
    LoadedKernel lk;
    CUdeviceptr dptr[32] = {0};
    CUresult r;
    result = cuda_load_compiled(c, comp, fn, c->specialize ? param_div : NULL, &lk);
    CUmodule mod = lk.mod;
    CUfunction func = lk.fn;
    int warps = lk.warps;
    if (result) goto done;
    for (int b = 0; b < nbufs && b < 32; b++) {
        if ((r = d->MemAlloc(&dptr[b], bufs[b].bytes ? bufs[b].bytes : 1)) ||
            (r = d->MemcpyHtoD(dptr[b], bufs[b].base, bufs[b].bytes))) {
            result = msgf("kernel '%s': buffer %s: %s", k->kernel, bufs[b].name, cuda_error_text(d, r, ebuf, sizeof ebuf));
            goto done;
        }
    }
    /* arguments: host pointers into a buffer become device pointers at the same offset */
    union { CUdeviceptr p; int32_t i32; int64_t i64; float f32; uint8_t u8; } vals[64];
    void *params[64];
    for (int i = 0; i < nargs && i < 64; i++) {
        BlkType t = fn->params[i].type;
        if (t.dtype == DT_PTR) {
            const char *hp = args[i].p;
            vals[i].p = 0;
            for (int b = 0; b < nbufs; b++) {
                const char *base = bufs[b].base;
                if (hp >= base && hp <= base + bufs[b].bytes) vals[i].p = dptr[b] + (CUdeviceptr)(hp - base);
            }
            if (!vals[i].p) {
                result = msgf("kernel '%s': pointer argument '%s' is in no buffer", k->kernel, fn->params[i].name);
                goto done;
            }
        } else if (t.dtype == DT_F32) {
            vals[i].f32 = (float)args[i].f;
        } else if (t.dtype == DT_I64) {
            vals[i].i64 = args[i].i;
        } else if (t.dtype == DT_I1) {
            vals[i].u8 = args[i].i != 0;
        } else {
            vals[i].i32 = (int32_t)args[i].i;
        }
        params[i] = &vals[i];
    }
    r = d->LaunchKernel(func, grid[0], grid[1], grid[2], 32u * (unsigned)warps, 1, 1, 0, NULL, params, NULL);
    if (!r) r = d->CtxSynchronize();
    if (r) {
        result = msgf("kernel '%s': %s", k->kernel, cuda_error_text(d, r, ebuf, sizeof ebuf));
        goto done;
    }
    for (int b = 0; b < nbufs && b < 32; b++) {
        if ((r = d->MemcpyDtoH(bufs[b].base, dptr[b], bufs[b].bytes))) {
            result = msgf("kernel '%s': copying back %s: %s", k->kernel, bufs[b].name, cuda_error_text(d, r, ebuf, sizeof ebuf));
            goto done;
        }
    }
done:
    for (int b = 0; b < nbufs && b < 32; b++)
        if (dptr[b]) d->MemFree(dptr[b]);
    if (mod) d->ModuleUnload(mod);
    compilation_free(comp);
    return result;
}
