/* checks_cuda.c: raw driver access for the GPU benchmarks: JIT an example's
 * kernel to a loaded CUfunction, so gpu_bench can time launches with events
 * and flush the L2 between them. (The example checks run on the GPU through
 * the runtime API: checks_runtime.c.) */
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
    const NvptxArch *arch = nvptx_arch_for_device(major, minor);
    snprintf(c->arch, sizeof c->arch, "%s", arch ? arch->name : NVPTX_DEFAULT_ARCH);
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
    char ebuf[256];
    NvptxOptions bo = c->backend;
    bo.arch = c->arch;
    bo.only_kernel = fn->name;
    bo.param_div = param_div;
    NvptxOutput res;
    if (!compile_ptx(comp, &bo, &res)) return msgf("kernel '%s': the compile failed", fn->name);
    out->warps = res.kernels[0].num_warps;
    out->shared_bytes = res.kernels[0].shared_bytes;
    char *ptx = res.text;
    free(res.kernels);
    out->ptx_bytes = strlen(ptx);
    CUresult r = c->drv.ModuleLoadDataEx(&out->mod, ptx, 0, NULL, NULL);
    free(ptx);
    if (!r) r = c->drv.ModuleGetFunction(&out->fn, out->mod, fn->name);
    if (r) return msgf("kernel '%s': loading its PTX: %s", fn->name, cuda_error_text(&c->drv, r, ebuf, sizeof ebuf));
    return NULL;
}
