/* device_cuda.c: the CUDA device, over the driver API loaded with dlopen
 * (cuda_driver.c). A context is the device's primary context. A kernel
 * specialization's PTX is loaded through the driver's JIT and kept in the
 * disk cache (cache.c), so a warm load skips the compiler (and the driver's
 * own cache skips its JIT). Launches pass the kernel's shared memory as dynamic
 * shared memory, and the tensor maps of kernels that copy by TMA after their
 * arguments. A fault (an illegal address and the like) makes the context
 * lost: CUDA cannot use it again. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cuda_driver.h"
#include "device.h"

/* The dynamic shared memory a kernel gets without opting in. */
enum { DEFAULT_SHARED_BYTES = 48 * 1024 };

typedef struct {
    CudaDriver drv;
    CUdevice dev;
    CUcontext cu;
    int driver_version;
    int max_shared_optin;  /* shared memory per block with the opt-in attribute */
    int regs_per_sm;       /* 32-bit registers of a multiprocessor */
    int sms;               /* multiprocessors */
    char last_kernel[128]; /* named when a later synchronize reports a fault */
} CudaState;

/* A loaded specialization. */
typedef struct {
    CUmodule mod;
    CUfunction fn;
    int warps;
    int64_t shared_bytes;
    NvptxTensorMaps tensor_maps;
    unsigned at_once;   /* persistent: the programs a launch makes (those that run at once on the device) */
    bool after_previous; /* the kernel has a gdc_wait: launched with programmatic stream serialization,
                          * so it may start while the grid before it finishes */
    char *ptx;          /* the PTX loaded, its launch contract at the top (blk_kernel_launch_ptx) */
} CudaCode;

static bool is_fault(CUresult r) {
    /* errors after which the CUDA context cannot be used again */
    return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
           r == CUDA_ERROR_INVALID_ADDRESS_SPACE || r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
           r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_ASSERT;
}

/* A failed CUDA call: BLK_ERROR_KERNEL_FAULT (and the context lost) for the
 * errors that poison it, else BLK_ERROR_CUDA. */
static blk_status cuda_fail(blk_context *ctx, CUresult r, const char *what) {
    CudaState *st = ctx->state;
    char text[256];
    blk_cuda_error_text(&st->drv, r, text, sizeof text);
    if (is_fault(r)) {
        ctx->lost = true;
        return blk_fail(BLK_ERROR_KERNEL_FAULT, "%s: %s; the CUDA context is unusable now: destroy it", what, text);
    }
    return blk_fail(BLK_ERROR_CUDA, "%s: %s", what, text);
}

/* Opens the driver and device `ordinal`, or fails with the state freed. */
static blk_status cuda_open(blk_context *ctx, int ordinal) {
    CudaState *st = calloc(1, sizeof *st);
    if (!st) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    CudaDriver *d = &st->drv;
    char err[512], text[256];
    if (!blk_cuda_driver_load(d, err, sizeof err)) {
        free(st);
        return blk_fail(BLK_ERROR_NO_DRIVER, "%s", err);
    }
    CUresult r = d->Init(0);
    int count = 0;
    if (!r) r = d->DeviceGetCount(&count);
    if (r || ordinal < 0 || ordinal >= count) {
        if (r) blk_cuda_error_text(d, r, text, sizeof text);
        else snprintf(text, sizeof text, "the driver sees %d device%s", count, count == 1 ? "" : "s");
        blk_cuda_driver_unload(d);
        free(st);
        return blk_fail(BLK_ERROR_NO_DEVICE, "no CUDA device %d: %s", ordinal, text);
    }
    if ((r = d->DeviceGet(&st->dev, ordinal)) || (r = d->DevicePrimaryCtxRetain(&st->cu, st->dev))) {
        blk_cuda_error_text(d, r, text, sizeof text);
        blk_cuda_driver_unload(d);
        free(st);
        return blk_fail(BLK_ERROR_CUDA, "opening CUDA device %d: %s", ordinal, text);
    }
    int major = 0, minor = 0;
    d->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, st->dev);
    d->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, st->dev);
    d->DeviceGetAttribute(&ctx->max_grid[0], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, st->dev);
    d->DeviceGetAttribute(&ctx->max_grid[1], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, st->dev);
    d->DeviceGetAttribute(&ctx->max_grid[2], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, st->dev);
    d->DeviceGetAttribute(&st->max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, st->dev);
    d->DeviceGetAttribute(&st->regs_per_sm, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, st->dev);
    d->DeviceGetAttribute(&st->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, st->dev);
    d->DriverGetVersion(&st->driver_version);
    /* the one place that picks the arch for a device: the compiler's table */
    const char *arch = blk_jit_device_arch(major, minor);
    if (!arch) {
        d->DevicePrimaryCtxRelease(st->dev);
        blk_cuda_driver_unload(d);
        free(st);
        return blk_fail(BLK_ERROR_NO_DEVICE, "CUDA device %d has compute capability %d.%d; blkc needs 8.0 or newer",
                        ordinal, major, minor);
    }
    snprintf(ctx->arch, sizeof ctx->arch, "%s", arch);
    char name[128] = "";
    d->DeviceGetName(name, sizeof name, st->dev);
    snprintf(ctx->device, sizeof ctx->device, "%s (%s)", name, ctx->arch);
    ctx->state = st;
    return BLK_SUCCESS;
}

static void cuda_close(blk_context *ctx) {
    CudaState *st = ctx->state;
    /* Never reset the primary context, even after a fault: others in the
     * process (PyTorch, another blk context) may hold it, and a reset would
     * free their memory under them. (Nor would it help: CUDA keeps a fault
     * for the rest of the process.) */
    st->drv.DevicePrimaryCtxRelease(st->dev);
    blk_cuda_driver_unload(&st->drv);
    free(st);
}

static blk_status cuda_enter(blk_context *ctx) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.CtxSetCurrent(st->cu);
    return r ? cuda_fail(ctx, r, "making the CUDA context current") : BLK_SUCCESS;
}

static blk_status cuda_alloc(blk_context *ctx, size_t bytes, blk_ptr *out) {
    CudaState *st = ctx->state;
    CUdeviceptr p;
    CUresult r = st->drv.MemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc(%zu): out of device memory", bytes);
    if (r) return cuda_fail(ctx, r, "blk_malloc");
    *out = p;
    return BLK_SUCCESS;
}

static blk_status cuda_free(blk_context *ctx, blk_ptr ptr) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.MemFree(ptr);
    return r ? cuda_fail(ctx, r, "blk_free") : BLK_SUCCESS;
}

static blk_status cuda_copy_to_device(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.MemcpyHtoD(dst, src, bytes);
    return r ? cuda_fail(ctx, r, "blk_memcpy_to_device") : BLK_SUCCESS;
}

static blk_status cuda_copy_to_host(blk_context *ctx, void *dst, blk_ptr src, size_t bytes) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.MemcpyDtoH(dst, src, bytes);
    return r ? cuda_fail(ctx, r, "blk_memcpy_to_host") : BLK_SUCCESS;
}

static blk_status cuda_memset(blk_context *ctx, blk_ptr dst, int byte, size_t bytes) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.MemsetD8(dst, (unsigned char)byte, bytes);
    return r ? cuda_fail(ctx, r, "blk_memset") : BLK_SUCCESS;
}

static blk_status cuda_synchronize(blk_context *ctx) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.CtxSynchronize();
    if (!r) return BLK_SUCCESS;
    char what[256];
    snprintf(what, sizeof what, "blk_synchronize: a kernel launched earlier failed (the last launched: '%s')",
             st->last_kernel[0] ? st->last_kernel : "none");
    return cuda_fail(ctx, r, what);
}

/* The module of an entry: its PTX, which the driver's JIT compiles as a
 * whole program (and keeps in its own cache, ~/.nv/ComputeCache). The
 * runtime stores no cubin: the driver's linker
 * (cuLink) compiles PTX as relocatable code, which on the H100 took 146
 * registers a thread instead of 103 for layer_norm_fwd (BLOCK_SIZE=16384, 8
 * warps; ptxas -c against ptxas) and ran it 1.3 to 1.5 times slower
 * (docs/performance.md). *mod stays NULL unless it loaded. */
static CUresult load_module(const CudaDriver *d, const BlkCacheEntry *e, CUmodule *mod) {
    CUmodule m = NULL;
    CUresult r = d->ModuleLoadData(&m, e->ptx);
    *mod = r ? NULL : m;
    return r;
}

/* A kernel that needs more shared memory than a launch gets by default must
 * opt in, up to the device's limit. */
static blk_status allow_shared(blk_context *ctx, const char *name, const CudaCode *c) {
    CudaState *st = ctx->state;
    if (c->shared_bytes <= DEFAULT_SHARED_BYTES) return BLK_SUCCESS;
    if (c->shared_bytes > st->max_shared_optin)
        return blk_fail(BLK_ERROR_OUT_OF_MEMORY,
                        "kernel '%s' needs %lld bytes of shared memory per program, more than the %d the device "
                        "allows (%s); use smaller blocks",
                        name, (long long)c->shared_bytes, st->max_shared_optin, ctx->device);
    CUresult r = st->drv.FuncSetAttribute(c->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->shared_bytes);
    if (!r) return BLK_SUCCESS;
    char what[300];
    snprintf(what, sizeof what, "kernel '%s': allowing it %lld bytes of shared memory", name, (long long)c->shared_bytes);
    return cuda_fail(ctx, r, what);
}

/* A loaded module's kernel: its function, with the shared memory it needs allowed. */
static blk_status get_function(blk_context *ctx, const char *name, CudaCode *c) {
    CudaState *st = ctx->state;
    CUresult r = st->drv.ModuleGetFunction(&c->fn, c->mod, name);
    if (r) {
        char what[300];
        snprintf(what, sizeof what, "kernel '%s': loading its code", name);
        return cuda_fail(ctx, r, what);
    }
    return allow_shared(ctx, name, c);
}

/* A kernel's registers a thread, local memory bytes and programs an SM. */
typedef struct {
    int regs, local, blocks;
} Occupancy;

static bool occupancy(const CudaState *st, const CudaCode *c, Occupancy *o) {
    const CudaDriver *d = &st->drv;
    return !d->FuncGetAttribute(&o->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, c->fn) &&
           !d->FuncGetAttribute(&o->local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, c->fn) &&
           !d->OccupancyMaxActiveBlocksPerMultiprocessor(&o->blocks, c->fn, 32 * c->warps, (size_t)c->shared_bytes);
}

/* The automatic occupancy target (min_blocks_per_sm 0; docs/runtime.md).
 * Without a target ptxas often stops well below the registers its own
 * occupancy allows: layer_norm_fwd with BLOCK_SIZE=16384 and 8 warps took 103
 * of the 128 that two programs an SM allow and kept two of a thread's eight
 * 16-byte loads in flight; with .minnctapersm 2 it took 128 and ran faster
 * (docs/performance.md). So a kernel built without a target, where that
 * leaves 8 or more registers a thread unused, is built again with the
 * occupancy it reached as its target; and one that registers alone keep
 * from one program more, by at most 8 registers a thread (a third of them
 * for a persistent kernel), for that one more (nvptx_occupancy_target),
 * never for fewer registers than its wgmma instructions need (min_regs:
 * ptxas would refuse it). "Built again" is the first build's PTX with the
 * target added, or a new compile for a kernel with a producer warpgroup.
 * The new build replaces the first (module and entry) when it reaches its
 * target with no more local memory. Any failure keeps the first build. */
static void retarget(blk_context *ctx, const BlkVariantSpec *spec, BlkCacheEntry *e, CudaCode *c, int min_regs) {
    CudaState *st = ctx->state;
    const CudaDriver *d = &st->drv;
    Occupancy first;
    int target = occupancy(st, c, &first) ? blk_jit_occupancy_target(ctx->arch, st->regs_per_sm, first.blocks, c->warps,
                                                                     first.regs, c->shared_bytes, min_regs,
                                                                     spec->persistent) : 0;
    if (!target) return;
    BlkKernelCode kc = {blk_jit_with_occupancy_target(e->ptx, target), c->warps, c->shared_bytes, c->tensor_maps, min_regs};
    if (!kc.ptx && blk_kernel_code(spec, target, &kc)) return; /* a producer's target changes its code */
    /* the new build may launch other warps, with other shared memory (sm_90a's producer warpgroup
     * is only used at one program an SM) */
    CudaCode again = *c;
    again.warps = kc.warps, again.shared_bytes = kc.shared_bytes, again.tensor_maps = kc.tensor_maps;
    Occupancy second;
    if (!d->ModuleLoadData(&again.mod, kc.ptx)) {
        if (!get_function(ctx, spec->name, &again) && occupancy(st, &again, &second) &&
            second.blocks >= target && second.local <= first.local) {
            d->ModuleUnload(c->mod);
            *c = again;
            free(e->ptx);
            e->ptx = kc.ptx;
            e->ptx_len = strlen(kc.ptx);
            e->warps = kc.warps, e->shared_bytes = kc.shared_bytes, e->tensor_maps = kc.tensor_maps;
            return;
        }
        d->ModuleUnload(again.mod);
    }
    free(kc.ptx);
}

static blk_status cuda_load(blk_context *ctx, const BlkVariantSpec *spec, void **code) {
    CudaState *st = ctx->state;
    const CudaDriver *d = &st->drv;
    CudaCode *c = calloc(1, sizeof *c);
    if (!c) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    /* the entry's key: the module's, the kernel, its facts and the driver */
    char dirbuf[1024], tail[512];
    bool dir_too_long;
    const char *dir = blk_cache_dir(dirbuf, sizeof dirbuf, &dir_too_long);
    if (dir_too_long) {
        free(c);
        return blk_fail(BLK_ERROR_INVALID_VALUE, "kernel '%s': the cache directory path is longer than %zu bytes "
                        "(set BLK_CACHE_DIR shorter, or BLK_CACHE_DISABLE=1)", spec->name, sizeof dirbuf - 1);
    }
    /* "image ptx": entries of the runtime that stored cuLink's cubins are not reused */
    int tail_len = snprintf(tail, sizeof tail, "\nkernel %s\nfacts %llx %llx %llx %llx\ndriver %d\nimage ptx\n",
                            spec->name, (unsigned long long)spec->facts.div16, (unsigned long long)spec->facts.div8,
                            (unsigned long long)spec->facts.div4, (unsigned long long)spec->facts.one,
                            st->driver_version);
    size_t key_len = spec->key_len + (size_t)tail_len;
    char *key = malloc(key_len);
    if (key) {
        memcpy(key, spec->key, spec->key_len);
        memcpy(key + spec->key_len, tail, (size_t)tail_len);
    }
    /* the disk cache first: its PTX loads without the compiler (its occupancy target set) */
    blk_status s = BLK_SUCCESS;
    BlkCacheEntry entry = {0};
    CUresult r = CUDA_ERROR_NOT_FOUND;
    if (dir && key && blk_cache_load(dir, key, key_len, &entry)) {
        r = load_module(d, &entry, &c->mod);
        if (r) blk_cache_entry_free(&entry); /* unusable (another driver?): rebuild it */
    }
    bool built = false;
    int min_regs = 0;
    if (r) {
        BlkKernelCode kc;
        s = blk_kernel_code(spec, 0, &kc);
        if (!s) {
            entry.ptx = kc.ptx;
            entry.ptx_len = strlen(kc.ptx);
            entry.warps = kc.warps;
            entry.shared_bytes = kc.shared_bytes;
            entry.tensor_maps = kc.tensor_maps;
            min_regs = kc.min_regs;
            r = load_module(d, &entry, &c->mod);
            built = true;
        }
    }
    c->warps = entry.warps;
    c->shared_bytes = entry.shared_bytes;
    c->tensor_maps = entry.tensor_maps;
    if (!s && r) {
        char what[300];
        snprintf(what, sizeof what, "kernel '%s': loading its code", spec->name);
        s = cuda_fail(ctx, r, what);
    }
    if (!s) s = get_function(ctx, spec->name, c);
    if (!s && built) {
        if (spec->auto_occupancy) retarget(ctx, spec, &entry, c, min_regs);
        if (dir && key) blk_cache_store(dir, key, key_len, &entry);
    }
    if (!s) { /* what runs, for blk_kernel_launch_ptx and $BLK_DUMP_DIR */
        BlkKernelCode kc = {entry.ptx, entry.warps, entry.shared_bytes, entry.tensor_maps, min_regs};
        c->ptx = blk_variant_contract(spec, &kc, false);
        blk_dump_variant(spec, &kc, c->ptx);
    }
    c->after_previous = !s && st->drv.LaunchKernelEx && spec->after_previous; /* of the module's arch, not the device's */
    Occupancy o;
    if (!s && spec->persistent) /* (a kernel that fits no program an SM fails at its launch) */
        c->at_once = (unsigned)(st->sms > 0 ? st->sms : 1) * (unsigned)(occupancy(st, c, &o) && o.blocks > 0 ? o.blocks : 1);
    blk_cache_entry_free(&entry);
    free(key);
    if (s) {
        if (c->mod && !ctx->lost) d->ModuleUnload(c->mod);
        free(c->ptx);
        free(c);
        return s;
    }
    *code = c;
    return BLK_SUCCESS;
}

static void cuda_unload(blk_context *ctx, void *code) {
    CudaCode *c = code;
    if (c && ctx && !ctx->lost) ((CudaState *)ctx->state)->drv.ModuleUnload(c->mod);
    if (c) free(c->ptx);
    free(c);
}

static const char *cuda_code_ptx(void *code) { return ((CudaCode *)code)->ptx; }

/* An integer parameter's argument, where p names one (-1: none, 0). */
static bool int_arg(const BlkLaunch *l, int p, int64_t *v) {
    *v = 0;
    if (p < 0) return true;
    if (p >= l->f->nparams || !dtype_is_int(l->f->params[p].type.dtype)) return false;
    *v = l->args[p].value.i;
    return true;
}

/* Tensor map j of a launch (nvptx.h's NvptxTensorMap), from its arguments;
 * false (the kernel then copies by cp.async) when the driver cannot make it:
 * a stride or an extent out of TMA's range (nvptx_tma_extents), a driver
 * without TMA. */
static bool make_tensor_map(const CudaDriver *d, const NvptxTensorMap *m, const BlkLaunch *l, CUtensorMap *out) {
    const BirFunction *f = l->f;
    /* a map from the cache names parameters of the kernel it was built for; never trust it further */
    int64_t stride_arg, rows_arg, cols_arg;
    if (m->base_param >= f->nparams || f->params[m->base_param].type.dtype != DT_PTR ||
        !int_arg(l, m->stride_param, &stride_arg) || !int_arg(l, m->rows_param, &rows_arg) ||
        !int_arg(l, m->cols_param, &cols_arg))
        return false;
    uint64_t stride, rows, cols;
    if (!d->TensorMapEncodeTiled || !nvptx_tma_extents(m, stride_arg, rows_arg, cols_arg, &stride, &rows, &cols))
        return false;
    cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)stride * (cuuint64_t)m->elem_bytes};
    cuuint32_t box[2] = {(cuuint32_t)m->box_inner, (cuuint32_t)m->box_rows}, steps[2] = {1, 1};
    CUtensorMapSwizzle swizzle = m->swizzle_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : m->swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                 : m->swizzle_bytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                          : CU_TENSOR_MAP_SWIZZLE_NONE;
    CUtensorMapDataType type = m->elem_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16;
    return d->TensorMapEncodeTiled(out, type, 2, (void *)(uintptr_t)l->args[m->base_param].value.ptr,
                                   dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

static blk_status cuda_launch(blk_context *ctx, const BlkLaunch *l) {
    CudaState *st = ctx->state;
    const CudaCode *c = l->code;
    const BirFunction *f = l->f;
    /* each parameter in its own bytes, little-endian: the low bytes of an integer */
    union { CUdeviceptr p; int64_t i64; double f64; float f32; uint16_t bits16; } vals[BLK_MAX_KERNEL_ARGS];
    void *params[BLK_MAX_KERNEL_ARGS + NVPTX_MAX_TENSOR_MAPS + 4];
    CUtensorMap maps[NVPTX_MAX_TENSOR_MAPS];
    uint32_t usable = 0;
    for (int i = 0; i < f->nparams; i++) {
        DType d = f->params[i].type.dtype;
        const blk_arg *a = &l->args[i];
        if (d == DT_PTR) vals[i].p = a->value.ptr;
        else if (d == DT_F64) vals[i].f64 = a->value.d;
        else if (d == DT_F32) vals[i].f32 = (float)a->value.d;
        else if (d == DT_F16) vals[i].bits16 = f32_to_f16((float)a->value.d);
        else if (d == DT_BF16) vals[i].bits16 = f32_to_bf16((float)a->value.d);
        else vals[i].i64 = a->value.i;
        params[i] = &vals[i];
    }
    for (int j = 0; j < c->tensor_maps.count; j++) {
        if (make_tensor_map(&st->drv, &c->tensor_maps.map[j], l, &maps[j])) usable |= 1u << j;
        else memset(&maps[j], 0, sizeof maps[j]);
        params[f->nparams + j] = &maps[j];
    }
    int n = f->nparams + c->tensor_maps.count;
    if (c->tensor_maps.count) params[n++] = &usable;
    uint32_t grid[3] = {l->grid[0], l->grid[1], l->grid[2]}, launched[3] = {grid[0], grid[1], grid[2]};
    if (c->at_once) { /* persistent: the grid is a parameter; as many programs as run at once */
        for (int a = 0; a < 3; a++) params[n++] = &grid[a];
        uint64_t programs = (uint64_t)grid[0] * grid[1] * grid[2]; /* below 2^64: runtime.c checks */
        launched[0] = programs < c->at_once ? (uint32_t)programs : c->at_once;
        launched[1] = launched[2] = 1;
    }
    if (strncmp(st->last_kernel, f->name, sizeof st->last_kernel) != 0) { /* a copy only when it changes */
        size_t n = strnlen(f->name, sizeof st->last_kernel - 1);
        memcpy(st->last_kernel, f->name, n);
        st->last_kernel[n] = 0;
    }
    CUresult r;
    if (c->after_previous) { /* its gdc_wait makes an early start safe: the previous grid's writes are seen after it */
        CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig config = {.gridDimX = launched[0], .gridDimY = launched[1], .gridDimZ = launched[2],
                                 .blockDimX = 32u * (unsigned)c->warps, .blockDimY = 1, .blockDimZ = 1,
                                 .sharedMemBytes = (unsigned)c->shared_bytes, .hStream = (CUstream)l->stream,
                                 .attrs = &attr, .numAttrs = 1};
        r = st->drv.LaunchKernelEx(&config, c->fn, params, NULL);
    } else {
        r = st->drv.LaunchKernel(c->fn, launched[0], launched[1], launched[2], 32u * (unsigned)c->warps, 1, 1,
                                 (unsigned)c->shared_bytes, (CUstream)l->stream, params, NULL);
    }
    if (!r) return BLK_SUCCESS;
    char what[300];
    snprintf(what, sizeof what, "kernel '%s': launch", f->name);
    return cuda_fail(ctx, r, what);
}

const BlkDevice blk_device_cuda = {
    .open = cuda_open,
    .close = cuda_close,
    .enter = cuda_enter,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_to_host = cuda_copy_to_host,
    .memset = cuda_memset,
    .synchronize = cuda_synchronize,
    .load = cuda_load,
    .unload = cuda_unload,
    .code_ptx = cuda_code_ptx,
    .launch = cuda_launch,
};
