/* fake_cuda.c: a CUDA driver without a GPU, built as libcuda.so.1 for
 * tests/test_launcher.c. It keeps what a real driver would check of a
 * launch — the kernel's parameter list as its PTX declares it, the block
 * against .maxntid, dynamic shared memory over 48 KiB against the
 * attribute that allows it — and records each launch (the function's PTX,
 * grid, block, shared memory and every parameter's bytes), so that a test
 * can compare the launches of blk's runtime (which dlopens libcuda.so.1)
 * with those of a C launcher blkc generated (linked against it). Memory is
 * addresses only: nothing is read or written. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "fake_cuda.h"

enum { MAX_MODULES = 256, MAX_FUNCTIONS = 256 };

struct CUmod_st {
    char *ptx;
};

struct CUfunc_st {
    struct CUmod_st *module;
    char name[128];
    int nparams;
    int param_bytes[FAKE_MAX_PARAMS];
    int maxntid;
    int shared_allowed;
};

static struct CUctx_st {
    int unused;
} the_context;
static CUcontext current;
static CUdeviceptr next_address = 0x7f0000000000ull;
static FakeLaunch last;
static int launches;

const FakeLaunch *fake_cuda_last_launch(void) { return launches ? &last : NULL; }
int fake_cuda_launches(void) { return launches; }

CUresult cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void)d;
    snprintf(name, (size_t)len, "fake H100 (tests/launcher/fake_cuda.c)");
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = FAKE_SMS; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    (void)d;
    *c = &the_context;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active) {
    (void)d;
    *flags = 0, *active = 1;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
CUresult cuCtxGetId(CUcontext c, unsigned long long *id) {
    if (c != &the_context) return CUDA_ERROR_INVALID_CONTEXT;
    *id = 1;
    return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *d) { *d = 0; return current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult cuCtxSynchronize(void) { return CUDA_SUCCESS; }

CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    const char *ptx = image;
    if (!strstr(ptx, ".version") || !strstr(ptx, ".entry")) return CUDA_ERROR_INVALID_PTX;
    struct CUmod_st *mod = calloc(1, sizeof *mod);
    if (!mod || !(mod->ptx = strdup(ptx))) {
        free(mod);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *m = mod;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
    if (m) free(m->ptx);
    free(m);
    return CUDA_SUCCESS;
}

/* The bytes of one `.param` declaration: ".param .u32 name", ".param .align 64 .b8 name[128]". */
static int param_size(const char *decl) {
    const char *br = strchr(decl, '[');
    const char *end = strpbrk(decl, ",)");
    if (br && (!end || br < end)) return atoi(br + 1);
    if (strstr(decl, ".u64") == decl || strstr(decl, ".b64") == decl || strstr(decl, ".f64") == decl) return 8;
    if (strstr(decl, ".u32") == decl || strstr(decl, ".b32") == decl || strstr(decl, ".f32") == decl) return 4;
    if (strstr(decl, ".u16") == decl || strstr(decl, ".b16") == decl) return 2;
    return 1;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule m, const char *name) {
    char want[160];
    snprintf(want, sizeof want, ".entry %s(", name);
    const char *at = strstr(m->ptx, want);
    if (!at) return CUDA_ERROR_NOT_FOUND;
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f) return CUDA_ERROR_OUT_OF_MEMORY;
    f->module = m;
    snprintf(f->name, sizeof f->name, "%s", name);
    const char *p = at + strlen(want);
    const char *close = strchr(p, ')');
    while ((p = strstr(p, ".param ")) && p < close && f->nparams < FAKE_MAX_PARAMS) {
        p += 7;
        const char *type = p;
        if (strncmp(type, ".align ", 7) == 0) type = strchr(type + 7, ' ') + 1;
        f->param_bytes[f->nparams++] = param_size(type);
    }
    const char *ntid = strstr(close, ".maxntid ");
    f->maxntid = ntid ? atoi(ntid + 9) : 1024;
    *fn = f;
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
    if (v > 232448) return CUDA_ERROR_INVALID_VALUE;
    f->shared_allowed = v;
    return CUDA_SUCCESS;
}
/* Registers and local memory: made up (no ptxas); the tests turn the occupancy target off. */
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    (void)f;
    if (a == CU_FUNC_ATTRIBUTE_NUM_REGS) *v = 32;
    else if (a == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) *v = 0;
    else return CUDA_ERROR_NOT_SUPPORTED;
    return CUDA_SUCCESS;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunction f, int threads, size_t shared) {
    (void)f, (void)threads, (void)shared;
    *blocks = FAKE_BLOCKS_PER_SM;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
    *p = next_address;
    next_address += (bytes + 0xfffff) & ~(CUdeviceptr)0xfffff; /* 1 MiB apart: every pointer 16-byte aligned */
    return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) { (void)p; return CUDA_SUCCESS; }
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) { (void)d, (void)s, (void)n; return CUDA_SUCCESS; }
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
    (void)s;
    memset(d, 0, n);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD8(CUdeviceptr d, unsigned char c, size_t n) { (void)d, (void)c, (void)n; return CUDA_SUCCESS; }

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void **params, void **extra, int after_previous) {
    if (extra || !params) return CUDA_ERROR_INVALID_VALUE;
    if (!gx || !gy || !gz || bx * by * bz > (unsigned)f->maxntid) return CUDA_ERROR_INVALID_VALUE;
    if (shared > 48 * 1024 && (int)shared > f->shared_allowed) return CUDA_ERROR_INVALID_VALUE;
    FakeLaunch l = {.grid = {gx, gy, gz}, .block = {bx, by, bz}, .shared = shared, .nparams = f->nparams,
                    .after_previous = after_previous};
    snprintf(l.name, sizeof l.name, "%s", f->name);
    l.ptx = f->module->ptx;
    size_t off = 0;
    for (int i = 0; i < f->nparams; i++) {
        l.param_bytes[i] = f->param_bytes[i];
        if (off + (size_t)f->param_bytes[i] > sizeof l.params) return CUDA_ERROR_INVALID_VALUE;
        memcpy(l.params + off, params[i], (size_t)f->param_bytes[i]);
        off += (size_t)f->param_bytes[i];
    }
    l.params_len = off;
    last = l;
    launches++;
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void **params, void **extra) {
    (void)stream;
    return launch(f, gx, gy, gz, bx, by, bz, shared, params, extra, 0);
}

/* A launch with attributes: only programmatic stream serialization is known here. */
CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
    int after_previous = 0;
    for (unsigned i = 0; i < c->numAttrs; i++) {
        if (c->attrs[i].id != CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) return CUDA_ERROR_NOT_SUPPORTED;
        after_previous = c->attrs[i].value.programmaticStreamSerializationAllowed != 0;
    }
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                  c->sharedMemBytes, params, extra, after_previous);
}

/* A map's 128 bytes: what it was made from, so two launchers' maps compare equal exactly when
 * they asked for the same. Strides must be multiples of 16 bytes, as the driver requires. */
CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *base,
                                const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                const cuuint32_t *steps, CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill) {
    if (rank != 2 || strides[0] % 16 || (uintptr_t)base % 16) return CUDA_ERROR_INVALID_VALUE;
    uint64_t words[16] = {(uint64_t)type, rank, (uint64_t)(uintptr_t)base, dims[0], dims[1], strides[0], box[0], box[1],
                          steps[0], steps[1], (uint64_t)interleave, (uint64_t)swizzle, (uint64_t)l2, (uint64_t)fill,
                          0x6d61702d66616b65ull, 0};
    memcpy(map, words, sizeof words);
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_INVALID_VALUE ? "invalid argument (fake driver)" : "an error (fake driver)";
    return CUDA_SUCCESS;
}

/* the rest of what blk's runtime resolves: unused by the tests */
CUresult cuEventCreate(CUevent *e, unsigned f) { (void)e, (void)f; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e, (void)s; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)ms, (void)a, (void)b; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuEventDestroy(CUevent e) { (void)e; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuLinkCreate(unsigned n, CUjit_option *o, void **v, CUlinkState *s) {
    (void)n, (void)o, (void)v, (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuLinkAddData(CUlinkState s, CUjitInputType t, void *d, size_t n, const char *name, unsigned k, CUjit_option *o,
                       void **v) {
    (void)s, (void)t, (void)d, (void)n, (void)name, (void)k, (void)o, (void)v;
    return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuLinkComplete(CUlinkState s, void **c, size_t *n) { (void)s, (void)c, (void)n; return CUDA_ERROR_NOT_SUPPORTED; }
CUresult cuLinkDestroy(CUlinkState s) { (void)s; return CUDA_ERROR_NOT_SUPPORTED; }
