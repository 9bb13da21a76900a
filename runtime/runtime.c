/* runtime.c: the blk runtime API (include/blk.h) over the compiler, the
 * reference interpreter (the cpu device) and the CUDA driver, which is loaded
 * with dlopen at run time (cuda_driver.c). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#include "compile.h"
#include "interp/interp.h"
#include "cache.h"
#include "cuda_driver.h"

/* ---------------------------------------------------------------- errors */

static _Thread_local char last_error[16384];

const char *blk_last_error(void) { return last_error; }

static blk_status fail(blk_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static blk_status fail(blk_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

static blk_status ok(void) {
    last_error[0] = 0;
    return BLK_SUCCESS;
}

const char *blk_status_string(blk_status s) {
    switch (s) {
    case BLK_SUCCESS: return "BLK_SUCCESS: no error";
    case BLK_ERROR_INVALID_VALUE: return "BLK_ERROR_INVALID_VALUE: an invalid argument to the API";
    case BLK_ERROR_NO_DRIVER: return "BLK_ERROR_NO_DRIVER: no CUDA driver";
    case BLK_ERROR_NO_DEVICE: return "BLK_ERROR_NO_DEVICE: no such CUDA device";
    case BLK_ERROR_COMPILE: return "BLK_ERROR_COMPILE: the source did not compile";
    case BLK_ERROR_NOT_FOUND: return "BLK_ERROR_NOT_FOUND: no kernel by that name";
    case BLK_ERROR_BAD_ARGUMENT: return "BLK_ERROR_BAD_ARGUMENT: a launch argument does not fit the kernel";
    case BLK_ERROR_BAD_GRID: return "BLK_ERROR_BAD_GRID: an empty or oversized grid";
    case BLK_ERROR_OUT_OF_MEMORY: return "BLK_ERROR_OUT_OF_MEMORY: out of memory";
    case BLK_ERROR_CUDA: return "BLK_ERROR_CUDA: a CUDA call failed";
    case BLK_ERROR_KERNEL_FAULT: return "BLK_ERROR_KERNEL_FAULT: the kernel faulted";
    case BLK_ERROR_CONTEXT_LOST: return "BLK_ERROR_CONTEXT_LOST: the context is unusable after a fault";
    }
    return "BLK_ERROR: unknown status";
}

/* --------------------------------------------------------------- context */

typedef struct {
    void *base;
    size_t bytes;
} Allocation;

struct blk_context {
    bool is_cuda;
    bool lost;             /* a kernel faulted: the CUDA context is unusable */
    char device[192];
    pthread_mutex_t lock;  /* the allocation list (cpu) */
    Allocation *allocs;
    int nallocs, cap;
    CudaDriver drv;
    CUdevice dev;
    CUcontext cu;
    char arch[16];
    int max_grid[3];
    int driver_version;
    char last_kernel[128]; /* named when a later synchronize reports a fault */
};

static bool is_fault(CUresult r) {
    /* errors after which the CUDA context cannot be used again */
    return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
           r == CUDA_ERROR_INVALID_ADDRESS_SPACE || r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
           r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_ASSERT;
}

/* A failed CUDA call: BLK_ERROR_KERNEL_FAULT (and the context lost) for the
 * errors that poison it, else BLK_ERROR_CUDA. */
static blk_status cuda_fail(blk_context *ctx, CUresult r, const char *what) {
    char text[256];
    cuda_error_text(&ctx->drv, r, text, sizeof text);
    if (is_fault(r)) {
        ctx->lost = true;
        return fail(BLK_ERROR_KERNEL_FAULT, "%s: %s; the CUDA context is unusable now: destroy it", what, text);
    }
    return fail(BLK_ERROR_CUDA, "%s: %s", what, text);
}

static blk_status enter(blk_context *ctx) {
    if (!ctx) return fail(BLK_ERROR_INVALID_VALUE, "the context is NULL");
    if (ctx->lost) return fail(BLK_ERROR_CONTEXT_LOST, "this context hit a kernel fault earlier; destroy it");
    if (ctx->is_cuda) {
        CUresult r = ctx->drv.CtxSetCurrent(ctx->cu);
        if (r) return cuda_fail(ctx, r, "making the CUDA context current");
    }
    return BLK_SUCCESS;
}

blk_status blk_context_create_cpu(blk_context **out) {
    if (!out) return fail(BLK_ERROR_INVALID_VALUE, "out is NULL");
    blk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    pthread_mutex_init(&ctx->lock, NULL);
    snprintf(ctx->device, sizeof ctx->device, "cpu (reference interpreter)");
    *out = ctx;
    return ok();
}

blk_status blk_context_create_cuda(int ordinal, blk_context **out) {
    if (!out) return fail(BLK_ERROR_INVALID_VALUE, "out is NULL");
    *out = NULL;
    blk_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    ctx->is_cuda = true;
    pthread_mutex_init(&ctx->lock, NULL);
    char err[512], text[256];
    if (!cuda_driver_load(&ctx->drv, err, sizeof err)) {
        free(ctx);
        return fail(BLK_ERROR_NO_DRIVER, "%s", err);
    }
    CUresult r = ctx->drv.Init(0);
    int count = 0;
    if (!r) r = ctx->drv.DeviceGetCount(&count);
    if (r || ordinal < 0 || ordinal >= count) {
        if (r) cuda_error_text(&ctx->drv, r, text, sizeof text);
        else snprintf(text, sizeof text, "the driver sees %d device%s", count, count == 1 ? "" : "s");
        cuda_driver_unload(&ctx->drv);
        free(ctx);
        return fail(BLK_ERROR_NO_DEVICE, "no CUDA device %d: %s", ordinal, text);
    }
    if ((r = ctx->drv.DeviceGet(&ctx->dev, ordinal)) || (r = ctx->drv.DevicePrimaryCtxRetain(&ctx->cu, ctx->dev))) {
        cuda_error_text(&ctx->drv, r, text, sizeof text);
        cuda_driver_unload(&ctx->drv);
        free(ctx);
        return fail(BLK_ERROR_CUDA, "opening CUDA device %d: %s", ordinal, text);
    }
    int major = 0, minor = 0;
    ctx->drv.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ctx->dev);
    ctx->drv.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ctx->dev);
    ctx->drv.DeviceGetAttribute(&ctx->max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, ctx->dev);
    ctx->drv.DeviceGetAttribute(&ctx->max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, ctx->dev);
    ctx->drv.DeviceGetAttribute(&ctx->max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, ctx->dev);
    ctx->drv.DriverGetVersion(&ctx->driver_version);
    const NvptxArch *arch = nvptx_arch_for_device(major, minor);
    if (!arch) {
        cuda_driver_unload(&ctx->drv);
        free(ctx);
        return fail(BLK_ERROR_NO_DEVICE, "CUDA device %d has compute capability %d.%d; blkc needs 8.0 or newer", ordinal,
                    major, minor);
    }
    snprintf(ctx->arch, sizeof ctx->arch, "%s", arch->name);
    char name[128] = "";
    ctx->drv.DeviceGetName(name, sizeof name, ctx->dev);
    snprintf(ctx->device, sizeof ctx->device, "%s (%s)", name, ctx->arch);
    *out = ctx;
    return ok();
}

void blk_context_destroy(blk_context *ctx) {
    if (!ctx) return;
    if (ctx->is_cuda) {
        /* A fault poisons the device's primary context, which every context
         * on that device shares: reset it, so that a new one starts clean. */
        if (ctx->lost) ctx->drv.DevicePrimaryCtxReset(ctx->dev);
        ctx->drv.DevicePrimaryCtxRelease(ctx->dev);
        cuda_driver_unload(&ctx->drv);
    } else {
        for (int i = 0; i < ctx->nallocs; i++) free(ctx->allocs[i].base);
    }
    free(ctx->allocs);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

const char *blk_context_device(const blk_context *ctx) { return ctx ? ctx->device : ""; }

/* ---------------------------------------------------------------- memory */

/* The cpu allocation holding [p, p + bytes), or -1. Caller holds the lock. */
static int find_alloc(blk_context *ctx, blk_ptr p, size_t bytes) {
    for (int i = 0; i < ctx->nallocs; i++) {
        uint64_t base = (uint64_t)(uintptr_t)ctx->allocs[i].base;
        if (p >= base && p <= base + ctx->allocs[i].bytes && bytes <= base + ctx->allocs[i].bytes - p) return i;
    }
    return -1;
}

blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_ptr *out) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!out || bytes == 0) return fail(BLK_ERROR_INVALID_VALUE, "blk_malloc needs a size and an out pointer");
    if (ctx->is_cuda) {
        CUdeviceptr p;
        CUresult r = ctx->drv.MemAlloc(&p, bytes);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc(%zu): out of device memory", bytes);
        if (r) return cuda_fail(ctx, r, "blk_malloc");
        *out = p;
        return ok();
    }
    void *p = NULL;
    size_t rounded = (bytes + 255) / 256 * 256; /* like cuMemAlloc: 256-byte aligned */
    if (posix_memalign(&p, 256, rounded)) return fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc(%zu): out of memory", bytes);
    memset(p, 0, rounded);
    pthread_mutex_lock(&ctx->lock);
    if (ctx->nallocs == ctx->cap) {
        int cap = ctx->cap ? ctx->cap * 2 : 16;
        Allocation *grown = realloc(ctx->allocs, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&ctx->lock);
            free(p);
            return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        }
        ctx->allocs = grown;
        ctx->cap = cap;
    }
    ctx->allocs[ctx->nallocs++] = (Allocation){p, bytes};
    pthread_mutex_unlock(&ctx->lock);
    *out = (blk_ptr)(uintptr_t)p;
    return ok();
}

blk_status blk_free(blk_context *ctx, blk_ptr ptr) {
    if (!ctx) return fail(BLK_ERROR_INVALID_VALUE, "the context is NULL");
    if (ptr == 0) return ok();
    if (ctx->is_cuda) {
        if (ctx->lost) return ok(); /* the context's memory goes with it */
        blk_status s = enter(ctx);
        if (s) return s;
        CUresult r = ctx->drv.MemFree(ptr);
        return r ? cuda_fail(ctx, r, "blk_free") : ok();
    }
    pthread_mutex_lock(&ctx->lock);
    for (int i = 0; i < ctx->nallocs; i++) {
        if ((blk_ptr)(uintptr_t)ctx->allocs[i].base == ptr) {
            free(ctx->allocs[i].base);
            ctx->allocs[i] = ctx->allocs[--ctx->nallocs];
            pthread_mutex_unlock(&ctx->lock);
            return ok();
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return fail(BLK_ERROR_INVALID_VALUE, "blk_free: 0x%llx is not memory from blk_malloc", (unsigned long long)ptr);
}

/* On the cpu device, a copy must stay inside one allocation. */
static blk_status cpu_range(blk_context *ctx, blk_ptr p, size_t bytes, const char *what) {
    pthread_mutex_lock(&ctx->lock);
    int i = find_alloc(ctx, p, bytes);
    pthread_mutex_unlock(&ctx->lock);
    if (i < 0)
        return fail(BLK_ERROR_INVALID_VALUE, "%s: [0x%llx, +%zu) is not inside memory from blk_malloc", what,
                    (unsigned long long)p, bytes);
    return BLK_SUCCESS;
}

blk_status blk_memcpy_to_device(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if ((!src || !dst) && bytes) return fail(BLK_ERROR_INVALID_VALUE, "blk_memcpy_to_device: a NULL pointer");
    if (bytes == 0) return ok();
    if (ctx->is_cuda) {
        CUresult r = ctx->drv.MemcpyHtoD(dst, src, bytes);
        return r ? cuda_fail(ctx, r, "blk_memcpy_to_device") : ok();
    }
    if ((s = cpu_range(ctx, dst, bytes, "blk_memcpy_to_device"))) return s;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return ok();
}

blk_status blk_memcpy_to_host(blk_context *ctx, void *dst, blk_ptr src, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if ((!src || !dst) && bytes) return fail(BLK_ERROR_INVALID_VALUE, "blk_memcpy_to_host: a NULL pointer");
    if (bytes == 0) return ok();
    if (ctx->is_cuda) {
        CUresult r = ctx->drv.MemcpyDtoH(dst, src, bytes);
        return r ? cuda_fail(ctx, r, "blk_memcpy_to_host") : ok();
    }
    if ((s = cpu_range(ctx, src, bytes, "blk_memcpy_to_host"))) return s;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return ok();
}

blk_status blk_memset(blk_context *ctx, blk_ptr dst, int byte, size_t bytes) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!dst && bytes) return fail(BLK_ERROR_INVALID_VALUE, "blk_memset: a NULL pointer");
    if (bytes == 0) return ok();
    if (ctx->is_cuda) {
        CUresult r = ctx->drv.MemsetD8(dst, (unsigned char)byte, bytes);
        return r ? cuda_fail(ctx, r, "blk_memset") : ok();
    }
    if ((s = cpu_range(ctx, dst, bytes, "blk_memset"))) return s;
    memset((void *)(uintptr_t)dst, byte, bytes);
    return ok();
}

blk_status blk_synchronize(blk_context *ctx) {
    blk_status s = enter(ctx);
    if (s || !ctx->is_cuda) return s ? s : ok();
    CUresult r = ctx->drv.CtxSynchronize();
    if (!r) return ok();
    char what[256];
    snprintf(what, sizeof what, "blk_synchronize: a kernel launched earlier failed (the last launched: '%s')",
             ctx->last_kernel[0] ? ctx->last_kernel : "none");
    return cuda_fail(ctx, r, what);
}

/* --------------------------------------------------------------- modules */

typedef struct {
    uint64_t facts;   /* bit i: argument i is 16-byte aligned / divisible by 16 */
    CUmodule mod;
    CUfunction fn;
    int warps;
} Variant;

struct blk_kernel {
    blk_module *module;
    const BirFunction *f;
    char *ptx, *llvm_ir; /* unspecialized, made on request */
    Variant *variants;
    int nvariants, cap;
};

struct blk_module {
    blk_context *ctx;
    Compilation *comp;
    NvptxOptions backend;
    char arch[16];
    blk_kernel *kernels;
    int nkernels;
    char *cache_key;      /* what the code depends on: compiler, options, defines, source */
    size_t cache_key_len;
    pthread_mutex_t lock; /* variants and the lazily made texts */
};

typedef struct {
    char *text;
    size_t len, cap;
} TextBuf;

static void collect_diag(void *user, const Diagnostic *d) {
    TextBuf *t = user;
    char *s = diag_format(d);
    size_t n = s ? strlen(s) : 0;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc(t->text, cap);
        if (!grown) {
            free(s);
            return;
        }
        t->text = grown;
        t->cap = cap;
    }
    if (n) memcpy(t->text + t->len, s, n + 1);
    t->len += n;
    free(s);
}

blk_status blk_module_create(blk_context *ctx, const char *source, size_t length, const blk_compile_options *opt,
                             blk_module **out) {
    blk_status s = enter(ctx);
    if (s) return s;
    if (!out || (!source && length)) return fail(BLK_ERROR_INVALID_VALUE, "blk_module_create: NULL source or out");
    *out = NULL;
    blk_compile_options none = {0};
    if (!opt) opt = &none;
    if (opt->num_defines < 0 || opt->num_defines > 256 || (opt->num_defines && !opt->defines))
        return fail(BLK_ERROR_INVALID_VALUE, "blk_compile_options: bad defines");
    if (opt->num_warps < 0 || opt->num_warps > 32 || (opt->num_warps & (opt->num_warps - 1)))
        return fail(BLK_ERROR_INVALID_VALUE, "num_warps must be 0 or a power of two up to 32, got %d", opt->num_warps);
    const char *arch = opt->arch ? opt->arch : ctx->is_cuda ? ctx->arch : NVPTX_DEFAULT_ARCH;
    if (!nvptx_arch(arch)) {
        char names[128];
        return fail(BLK_ERROR_INVALID_VALUE, "unknown arch '%s' (expected %s)", arch, nvptx_arch_names(names, sizeof names));
    }
    /* -D values, split into name and value */
    ConstDef defs[256];
    char *def_text[256] = {0};
    int ndefs = 0;
    for (int i = 0; i < opt->num_defines; i++) {
        const char *d = opt->defines[i];
        const char *eq = d ? strchr(d, '=') : NULL;
        if (!eq || eq == d) {
            for (int k = 0; k < ndefs; k++) free(def_text[k]);
            return fail(BLK_ERROR_INVALID_VALUE, "define %d ('%s') is not NAME=VALUE", i, d ? d : "(null)");
        }
        size_t n = strlen(d);
        def_text[ndefs] = malloc(n + 1);
        memcpy(def_text[ndefs], d, n + 1);
        def_text[ndefs][eq - d] = 0;
        defs[ndefs] = (ConstDef){def_text[ndefs], def_text[ndefs] + (eq - d) + 1, false};
        ndefs++;
    }
    TextBuf diags = {0};
    CompileRequest req = {opt->name ? opt->name : "<source>", source ? source : "", length, defs, ndefs,
                          collect_diag, &diags};
    Compilation *comp = compile_front(&req);
    bool compiled = comp && compile_lower(comp);
    /* the disk cache's key: everything the generated code depends on */
    TextBuf key = {0};
    char line[512];
    snprintf(line, sizeof line, "blkc %s\narch %s\nwarps %d\n", BLKC_VERSION, arch, opt->num_warps);
    size_t key_cap = strlen(line) + length + 64;
    for (int k = 0; k < ndefs; k++) key_cap += strlen(defs[k].name) + strlen(defs[k].value) + 8;
    key.text = malloc(key_cap);
    if (key.text) {
        key.len = (size_t)snprintf(key.text, key_cap, "%s", line);
        for (int k = 0; k < ndefs; k++)
            key.len += (size_t)snprintf(key.text + key.len, key_cap - key.len, "define %s=%s\n", defs[k].name, defs[k].value);
        key.len += (size_t)snprintf(key.text + key.len, key_cap - key.len, "source %zu\n", length);
        if (length) memcpy(key.text + key.len, source, length);
        key.len += length;
    }
    for (int k = 0; k < ndefs; k++) free(def_text[k]);
    if (!compiled) {
        s = fail(BLK_ERROR_COMPILE, "%s", diags.text ? diags.text : "the source did not compile");
        free(diags.text);
        free(key.text);
        compilation_free(comp);
        return s;
    }
    free(diags.text);
    blk_module *m = calloc(1, sizeof *m);
    if (!m || !key.text) {
        free(m);
        free(key.text);
        compilation_free(comp);
        return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    m->cache_key = key.text;
    m->cache_key_len = key.len;
    m->ctx = ctx;
    m->comp = comp;
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    m->backend.arch = m->arch;
    m->backend.num_warps = opt->num_warps;
    pthread_mutex_init(&m->lock, NULL);
    m->nkernels = comp->bir->nkernels;
    m->kernels = calloc((size_t)(m->nkernels ? m->nkernels : 1), sizeof *m->kernels);
    for (int i = 0; i < m->nkernels; i++) {
        m->kernels[i].module = m;
        m->kernels[i].f = comp->bir->kernels[i];
    }
    *out = m;
    return ok();
}

blk_status blk_module_create_from_file(blk_context *ctx, const char *path, const blk_compile_options *opt,
                                       blk_module **out) {
    if (!path) return fail(BLK_ERROR_INVALID_VALUE, "the path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return fail(BLK_ERROR_INVALID_VALUE, "cannot open '%s'", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *grown = realloc(text, cap = cap ? cap * 2 : 16384);
            if (!grown) break;
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (!got) break;
    }
    fclose(f);
    blk_compile_options o = opt ? *opt : (blk_compile_options){0};
    if (!o.name) o.name = path;
    blk_status s = blk_module_create(ctx, text, len, &o, out);
    free(text);
    return s;
}

void blk_module_destroy(blk_module *m) {
    if (!m) return;
    for (int i = 0; i < m->nkernels; i++) {
        blk_kernel *k = &m->kernels[i];
        for (int v = 0; v < k->nvariants; v++)
            if (m->ctx->is_cuda && !m->ctx->lost) m->ctx->drv.ModuleUnload(k->variants[v].mod);
        free(k->variants);
        free(k->ptx);
        free(k->llvm_ir);
    }
    free(m->kernels);
    free(m->cache_key);
    compilation_free(m->comp);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

blk_status blk_module_get_kernel(blk_module *m, const char *name, blk_kernel **out) {
    if (!m || !name || !out) return fail(BLK_ERROR_INVALID_VALUE, "blk_module_get_kernel: a NULL argument");
    for (int i = 0; i < m->nkernels; i++) {
        if (strcmp(m->kernels[i].f->name, name) == 0) {
            *out = &m->kernels[i];
            return ok();
        }
    }
    char names[512] = "";
    for (int i = 0; i < m->nkernels; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", m->kernels[i].f->name);
    return fail(BLK_ERROR_NOT_FOUND, "no kernel named '%s' in the module (it has: %s)", name, names);
}

const char *blk_kernel_name(const blk_kernel *k) { return k ? k->f->name : ""; }
int blk_kernel_num_args(const blk_kernel *k) { return k ? k->f->nparams : 0; }

const char *blk_kernel_arg_name(const blk_kernel *k, int i) {
    return k && i >= 0 && i < k->f->nparams ? k->f->params[i].name : NULL;
}

int blk_kernel_arg_kind(const blk_kernel *k, int i) {
    if (!k || i < 0 || i >= k->f->nparams) return -1;
    switch (k->f->params[i].type.dtype) {
    case DT_PTR: return BLK_ARG_PTR;
    case DT_F32: return BLK_ARG_F32;
    case DT_I64: return BLK_ARG_I64;
    case DT_U32: return BLK_ARG_U32;
    default: return BLK_ARG_I32;
    }
}

/* PTX or LLVM IR of a kernel, with the given launch facts (NULL: none);
 * its launch facts in info. The caller holds the module's lock: the
 * compilation's diagnostics go to a buffer of this call. */
static char *emit(blk_kernel *k, const int64_t *param_div, bool llvm_ir, NvptxKernel *info) {
    blk_module *m = k->module;
    NvptxOptions opt = m->backend;
    opt.only_kernel = k->f->name;
    opt.param_div = param_div;
    opt.llvm_ir = llvm_ir;
    TextBuf diags = {0};
    DiagEngine saved = m->comp->de;
    m->comp->de = (DiagEngine){collect_diag, &diags, 0, false};
    NvptxOutput out;
    bool compiled = compile_ptx(m->comp, &opt, &out);
    m->comp->de = saved;
    if (!compiled) {
        fail(BLK_ERROR_COMPILE, "kernel '%s': %s", k->f->name, diags.text ? diags.text : "the backend failed");
        free(diags.text);
        return NULL;
    }
    free(diags.text);
    if (info) *info = out.kernels[0];
    char *text = out.text;
    out.text = NULL;
    nvptx_output_free(&out);
    return text;
}

static blk_status kernel_text(blk_kernel *k, bool llvm_ir, const char **out) {
    if (!k || !out) return fail(BLK_ERROR_INVALID_VALUE, "a NULL argument");
    pthread_mutex_lock(&k->module->lock);
    char **slot = llvm_ir ? &k->llvm_ir : &k->ptx;
    if (!*slot) *slot = emit(k, NULL, llvm_ir, NULL);
    *out = *slot;
    pthread_mutex_unlock(&k->module->lock);
    return *out ? ok() : BLK_ERROR_COMPILE;
}

blk_status blk_kernel_ptx(blk_kernel *k, const char **ptx) { return kernel_text(k, false, ptx); }
blk_status blk_kernel_llvm_ir(blk_kernel *k, const char **ir) { return kernel_text(k, true, ir); }

/* ---------------------------------------------------------------- launch */

static const char *arg_kind_name(blk_arg_kind k) {
    switch (k) {
    case BLK_ARG_PTR: return "a pointer";
    case BLK_ARG_I32: return "an i32";
    case BLK_ARG_U32: return "a u32";
    case BLK_ARG_I64: return "an i64";
    case BLK_ARG_F32: return "an f32";
    }
    return "an unknown kind";
}

/* Checks one argument against its parameter. */
static blk_status check_arg(const blk_kernel *k, int i, const blk_arg *a) {
    const BirParam *p = &k->f->params[i];
    DType d = p->type.dtype;
    char want[32];
    type_str(p->type, want, sizeof want);
    if ((unsigned)a->kind > BLK_ARG_F32)
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): unknown argument kind %d", k->f->name,
                    i, p->name, (int)a->kind);
    bool is_int_kind = a->kind == BLK_ARG_I32 || a->kind == BLK_ARG_U32 || a->kind == BLK_ARG_I64;
    if (d == DT_PTR) {
        if (a->kind != BLK_ARG_PTR)
            return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects a pointer (%s), got %s",
                        k->f->name, i, p->name, want, arg_kind_name(a->kind));
        if (a->value.ptr == 0)
            return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): a null pointer", k->f->name, i, p->name);
        int es = dtype_bytes(p->type.elem);
        if (a->value.ptr % (uint64_t)es)
            return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): 0x%llx is not aligned to its %s elements",
                        k->f->name, i, p->name, (unsigned long long)a->value.ptr, dtype_name(p->type.elem));
        if (p->align && a->value.ptr % (uint64_t)p->align)
            return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): declared @align(%lld) but 0x%llx is not",
                        k->f->name, i, p->name, (long long)p->align, (unsigned long long)a->value.ptr);
        return BLK_SUCCESS;
    }
    if (d == DT_F32) {
        if (a->kind != BLK_ARG_F32)
            return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects an f32 (blk_arg_f32), got %s",
                        k->f->name, i, p->name, arg_kind_name(a->kind));
        return BLK_SUCCESS;
    }
    if (!is_int_kind)
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): expects an integer (%s), got %s",
                    k->f->name, i, p->name, want, arg_kind_name(a->kind));
    int64_t v = a->value.i;
    bool fits = d == DT_I32 ? v >= INT32_MIN && v <= INT32_MAX
              : d == DT_U32 ? v >= 0 && v <= (int64_t)UINT32_MAX
              : d == DT_I1 ? v == 0 || v == 1 : true;
    if (!fits)
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): %lld does not fit %s", k->f->name, i,
                    p->name, (long long)v, want);
    if (p->multiple_of && v % p->multiple_of)
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): declared @multiple_of(%lld) but is %lld",
                    k->f->name, i, p->name, (long long)p->multiple_of, (long long)v);
    return BLK_SUCCESS;
}

static blk_status launch_cpu(blk_kernel *k, const uint32_t grid[3], const blk_arg *args) {
    blk_context *ctx = k->module->ctx;
    const BirFunction *f = k->f;
    InterpArg iargs[64];
    for (int i = 0; i < f->nparams; i++) {
        DType d = f->params[i].type.dtype;
        if (d == DT_PTR) iargs[i].p = (void *)(uintptr_t)args[i].value.ptr;
        else if (d == DT_F32) iargs[i].f = args[i].value.f;
        else iargs[i].i = args[i].value.i;
    }
    pthread_mutex_lock(&ctx->lock);
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].type.dtype != DT_PTR || find_alloc(ctx, args[i].value.ptr, 0) >= 0) continue;
        pthread_mutex_unlock(&ctx->lock);
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): 0x%llx is not memory from blk_malloc",
                    f->name, i, f->params[i].name, (unsigned long long)args[i].value.ptr);
    }
    InterpBuffer *bufs = calloc((size_t)ctx->nallocs + 1, sizeof *bufs);
    for (int i = 0; bufs && i < ctx->nallocs; i++) bufs[i] = (InterpBuffer){ctx->allocs[i].base, ctx->allocs[i].bytes, NULL};
    int nbufs = ctx->nallocs;
    pthread_mutex_unlock(&ctx->lock);
    if (!bufs) return fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    char *err = interp_launch(f, iargs, f->nparams, grid, bufs, nbufs, NULL);
    free(bufs);
    if (err) {
        blk_status s = fail(BLK_ERROR_KERNEL_FAULT, "%s", err);
        free(err);
        return s;
    }
    return ok();
}

/* The compiled variant for these arguments' facts, made on first use. */
static blk_status variant_for(blk_kernel *k, const blk_arg *args, Variant *out) {
    const BirFunction *f = k->f;
    uint64_t facts = 0;
    int64_t div[64] = {0};
    for (int i = 0; i < f->nparams && i < 64; i++) {
        bool fact = f->params[i].type.dtype == DT_PTR ? args[i].value.ptr % 16 == 0
                  : dtype_is_int(f->params[i].type.dtype) && args[i].value.i % 16 == 0;
        if (fact) facts |= UINT64_C(1) << i, div[i] = 16;
    }
    blk_module *m = k->module;
    pthread_mutex_lock(&m->lock);
    for (int v = 0; v < k->nvariants; v++) {
        if (k->variants[v].facts == facts) {
            *out = k->variants[v];
            pthread_mutex_unlock(&m->lock);
            return BLK_SUCCESS;
        }
    }
    blk_status s = BLK_SUCCESS;
    Variant nv = {facts, NULL, NULL, 0};
    const CudaDriver *d = &m->ctx->drv;
    /* the disk cache first: its cubin loads without the driver's JIT */
    char dirbuf[1024], tail[512];
    const char *dir = cache_dir(dirbuf, sizeof dirbuf);
    int tail_len = snprintf(tail, sizeof tail, "\nkernel %s\nfacts %llx\ndriver %d\n", f->name,
                            (unsigned long long)facts, m->ctx->driver_version);
    size_t key_len = m->cache_key_len + (size_t)tail_len;
    char *key = malloc(key_len);
    if (key) {
        memcpy(key, m->cache_key, m->cache_key_len);
        memcpy(key + m->cache_key_len, tail, (size_t)tail_len);
    }
    CacheEntry entry = {0};
    CUresult r = CUDA_ERROR_NOT_FOUND;
    if (dir && key && cache_load(dir, key, key_len, &entry)) {
        r = d->ModuleLoadData(&nv.mod, entry.cubin);
        nv.warps = entry.warps;
        if (r) cache_entry_free(&entry); /* unusable (another driver?): rebuild it */
    }
    if (r) {
        NvptxKernel info = {0};
        entry.ptx = emit(k, div, false, &info);
        nv.warps = info.num_warps;
        entry.warps = nv.warps;
        if (!entry.ptx) s = BLK_ERROR_COMPILE;
        else entry.ptx_len = strlen(entry.ptx);
        /* PTX -> cubin through the driver's linker, so the cubin can be kept */
        CUlinkState link = NULL;
        void *cubin = NULL;
        size_t cubin_len = 0;
        if (!s) r = d->LinkCreate(0, NULL, NULL, &link);
        if (!s && !r) r = d->LinkAddData(link, CU_JIT_INPUT_PTX, entry.ptx, entry.ptx_len + 1, f->name, 0, NULL, NULL);
        if (!s && !r) r = d->LinkComplete(link, &cubin, &cubin_len);
        if (!s && !r && (entry.cubin = malloc(cubin_len))) {
            memcpy(entry.cubin, cubin, cubin_len);
            entry.cubin_len = cubin_len;
        }
        if (link) d->LinkDestroy(link);
        if (!s && !r) r = entry.cubin ? d->ModuleLoadData(&nv.mod, entry.cubin) : CUDA_ERROR_OUT_OF_MEMORY;
        if (!s && !r && dir && key) cache_store(dir, key, key_len, &entry);
    }
    if (!s && !r) r = d->ModuleGetFunction(&nv.fn, nv.mod, f->name);
    cache_entry_free(&entry);
    free(key);
    if (!s && r) {
        char what[300];
        snprintf(what, sizeof what, "kernel '%s': loading its code", f->name);
        s = cuda_fail(m->ctx, r, what);
    }
    if (!s && k->nvariants == k->cap) {
        int cap = k->cap ? k->cap * 2 : 4;
        Variant *grown = realloc(k->variants, (size_t)cap * sizeof *grown);
        if (!grown) s = fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        else k->variants = grown, k->cap = cap;
    }
    if (!s) {
        k->variants[k->nvariants++] = nv;
        *out = nv;
    }
    pthread_mutex_unlock(&m->lock);
    return s;
}

blk_status blk_launch(blk_kernel *k, unsigned gx, unsigned gy, unsigned gz, const blk_arg *args, int nargs,
                      void *stream) {
    if (!k) return fail(BLK_ERROR_INVALID_VALUE, "the kernel is NULL");
    blk_context *ctx = k->module->ctx;
    blk_status s = enter(ctx);
    if (s) return s;
    const BirFunction *f = k->f;
    if (nargs != f->nparams || (nargs && !args)) {
        char names[512] = "";
        for (int i = 0; i < f->nparams; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", f->params[i].name);
        return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s' takes %d argument%s (%s), got %d", f->name, f->nparams,
                    f->nparams == 1 ? "" : "s", names, args ? nargs : 0);
    }
    if (nargs > 64) return fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s': more than 64 arguments", f->name);
    for (int i = 0; i < nargs; i++)
        if ((s = check_arg(k, i, &args[i]))) return s;
    uint32_t grid[3] = {gx, gy, gz};
    if (!gx || !gy || !gz) return fail(BLK_ERROR_BAD_GRID, "kernel '%s': the grid (%u, %u, %u) is empty", f->name, gx, gy, gz);
    if (!ctx->is_cuda) return launch_cpu(k, grid, args);
    for (int d = 0; d < 3; d++)
        if (ctx->max_grid[d] > 0 && grid[d] > (unsigned)ctx->max_grid[d])
            return fail(BLK_ERROR_BAD_GRID, "kernel '%s': grid dimension %c is %u, the device allows %d", f->name,
                        "xyz"[d], grid[d], ctx->max_grid[d]);
    Variant v;
    if ((s = variant_for(k, args, &v))) return s;
    union { CUdeviceptr p; int32_t i32; int64_t i64; float f32; uint8_t u8; } vals[64];
    void *params[64];
    for (int i = 0; i < nargs; i++) {
        DType d = f->params[i].type.dtype;
        if (d == DT_PTR) vals[i].p = args[i].value.ptr;
        else if (d == DT_F32) vals[i].f32 = args[i].value.f;
        else if (d == DT_I64) vals[i].i64 = args[i].value.i;
        else if (d == DT_I1) vals[i].u8 = (uint8_t)args[i].value.i;
        else vals[i].i32 = (int32_t)args[i].value.i;
        params[i] = &vals[i];
    }
    snprintf(ctx->last_kernel, sizeof ctx->last_kernel, "%s", f->name);
    CUresult r = ctx->drv.LaunchKernel(v.fn, gx, gy, gz, 32u * (unsigned)v.warps, 1, 1, 0, (CUstream)stream, params, NULL);
    if (r) {
        char what[300];
        snprintf(what, sizeof what, "kernel '%s': launch", f->name);
        return cuda_fail(ctx, r, what);
    }
    return ok();
}
