/* device_cpu.c: the cpu device: blkc's reference interpreter. Memory is host
 * memory, 256-byte aligned like cuMemAlloc's and zeroed; every allocation is
 * recorded, so copies must stay inside one and a launch's pointers must
 * point into one, and the interpreter checks each access against them.
 * Launches run the kernel's block IR before returning; there is no code to
 * load, and a fault leaves the device usable. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "interp/interp.h"

typedef struct {
    void *base;
    size_t bytes;
} Allocation;

typedef struct {
    pthread_mutex_t lock; /* the allocation list */
    Allocation *allocs;
    int nallocs, cap;
} CpuState;

static blk_status cpu_open(blk_context *ctx, int ordinal) {
    (void)ordinal;
    CpuState *st = calloc(1, sizeof *st);
    if (!st) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    pthread_mutex_init(&st->lock, NULL);
    ctx->state = st;
    snprintf(ctx->device, sizeof ctx->device, "cpu (reference interpreter)");
    snprintf(ctx->arch, sizeof ctx->arch, "sm_90"); /* blkc's default, for blk_kernel_ptx */
    return BLK_SUCCESS;
}

static void cpu_close(blk_context *ctx) {
    CpuState *st = ctx->state;
    for (int i = 0; i < st->nallocs; i++) free(st->allocs[i].base);
    free(st->allocs);
    pthread_mutex_destroy(&st->lock);
    free(st);
}

static blk_status cpu_enter(blk_context *ctx) {
    (void)ctx;
    return BLK_SUCCESS;
}

/* The allocation holding [p, p + bytes), or -1. Caller holds the lock. */
static int find_alloc(const CpuState *st, blk_ptr p, size_t bytes) {
    for (int i = 0; i < st->nallocs; i++) {
        uint64_t base = (uint64_t)(uintptr_t)st->allocs[i].base;
        if (p >= base && p <= base + st->allocs[i].bytes && bytes <= base + st->allocs[i].bytes - p) return i;
    }
    return -1;
}

static blk_status cpu_alloc(blk_context *ctx, size_t bytes, blk_ptr *out) {
    CpuState *st = ctx->state;
    void *p = NULL;
    size_t rounded = (bytes + 255) / 256 * 256; /* like cuMemAlloc: 256-byte aligned */
    if (rounded < bytes || posix_memalign(&p, 256, rounded)) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "blk_malloc(%zu): out of memory", bytes);
    memset(p, 0, rounded);
    pthread_mutex_lock(&st->lock);
    if (st->nallocs == st->cap) {
        int cap = st->cap ? st->cap * 2 : 16;
        Allocation *grown = realloc(st->allocs, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&st->lock);
            free(p);
            return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
        }
        st->allocs = grown;
        st->cap = cap;
    }
    st->allocs[st->nallocs++] = (Allocation){p, bytes};
    pthread_mutex_unlock(&st->lock);
    *out = (blk_ptr)(uintptr_t)p;
    return BLK_SUCCESS;
}

static blk_status cpu_free(blk_context *ctx, blk_ptr ptr) {
    CpuState *st = ctx->state;
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->nallocs; i++) {
        if ((blk_ptr)(uintptr_t)st->allocs[i].base == ptr) {
            free(st->allocs[i].base);
            st->allocs[i] = st->allocs[--st->nallocs];
            pthread_mutex_unlock(&st->lock);
            return BLK_SUCCESS;
        }
    }
    pthread_mutex_unlock(&st->lock);
    return blk_fail(BLK_ERROR_INVALID_VALUE, "blk_free: 0x%llx is not memory from blk_malloc", (unsigned long long)ptr);
}

/* A copy must stay inside one allocation. */
static blk_status in_range(blk_context *ctx, blk_ptr p, size_t bytes, const char *what) {
    CpuState *st = ctx->state;
    pthread_mutex_lock(&st->lock);
    int i = find_alloc(st, p, bytes);
    pthread_mutex_unlock(&st->lock);
    if (i < 0)
        return blk_fail(BLK_ERROR_INVALID_VALUE, "%s: [0x%llx, +%zu) is not inside memory from blk_malloc", what,
                        (unsigned long long)p, bytes);
    return BLK_SUCCESS;
}

static blk_status cpu_copy_to_device(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes) {
    blk_status s = in_range(ctx, dst, bytes, "blk_memcpy_to_device");
    if (!s) memcpy((void *)(uintptr_t)dst, src, bytes);
    return s;
}

static blk_status cpu_copy_to_host(blk_context *ctx, void *dst, blk_ptr src, size_t bytes) {
    blk_status s = in_range(ctx, src, bytes, "blk_memcpy_to_host");
    if (!s) memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return s;
}

static blk_status cpu_memset(blk_context *ctx, blk_ptr dst, int byte, size_t bytes) {
    blk_status s = in_range(ctx, dst, bytes, "blk_memset");
    if (!s) memset((void *)(uintptr_t)dst, byte, bytes);
    return s;
}

static blk_status cpu_synchronize(blk_context *ctx) {
    (void)ctx; /* launches finish before they return */
    return BLK_SUCCESS;
}

static blk_status cpu_load(blk_context *ctx, const BlkVariantSpec *spec, void **code) {
    (void)ctx, (void)spec; /* the interpreter runs the block IR itself */
    *code = NULL;
    return BLK_SUCCESS;
}

static void cpu_unload(blk_context *ctx, void *code) { (void)ctx, (void)code; }

/* An interpreter budget from the environment: unset or empty leaves *out
 * alone (the default), anything but a positive integer is an error. */
/* A positive integer from the environment variable `var`, into *out; unset
 * or empty leaves *out as it is. */
static blk_status positive_from_env(const BirFunction *f, const char *var, uint64_t *out) {
    const char *text = getenv(var);
    if (!text || !*text) return BLK_SUCCESS;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end || errno || v == 0 || text[0] == '-')
        return blk_fail(BLK_ERROR_INVALID_VALUE, "kernel '%s': %s='%s' is not a positive integer", f->name, var, text);
    *out = v;
    return BLK_SUCCESS;
}

/* The most programs one launch runs on the cpu device unless
 * BLK_CPU_MAX_PROGRAMS says otherwise (docs/interpreter.md): the programs run
 * one after another, so a grid far past this is minutes or hours of work, most
 * likely a grid computed wrongly (a negative size read as unsigned). */
#define CPU_MAX_PROGRAMS (UINT64_C(1) << 24)

static blk_status cpu_launch(blk_context *ctx, const BlkLaunch *l) {
    CpuState *st = ctx->state;
    const BirFunction *f = l->f;
    uint64_t max_programs = CPU_MAX_PROGRAMS;
    blk_status grid_env = positive_from_env(f, "BLK_CPU_MAX_PROGRAMS", &max_programs);
    if (grid_env != BLK_SUCCESS) return grid_env;
    /* each dimension is below 2^32, so the product of two fits; the third
     * is checked by division */
    uint64_t xy = (uint64_t)l->grid[0] * l->grid[1];
    if (xy > max_programs || (l->grid[2] && xy > max_programs / l->grid[2]))
        return blk_fail(BLK_ERROR_BAD_GRID,
                        "kernel '%s': the grid (%u, %u, %u) has more programs than the cpu device runs in one launch "
                        "(%llu; BLK_CPU_MAX_PROGRAMS sets another limit)",
                        f->name, l->grid[0], l->grid[1], l->grid[2], (unsigned long long)max_programs);
    InterpArg iargs[64];
    for (int i = 0; i < f->nparams; i++) {
        DType d = f->params[i].type.dtype;
        if (d == DT_PTR) iargs[i].p = (void *)(uintptr_t)l->args[i].value.ptr;
        else if (dtype_is_float(d)) iargs[i].f = l->args[i].value.d; /* the interpreter rounds to the type */
        else iargs[i].i = l->args[i].value.i;
    }
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < f->nparams; i++) {
        if (f->params[i].type.dtype != DT_PTR || f->params[i].is_none || find_alloc(st, l->args[i].value.ptr, 0) >= 0)
            continue; /* (a pointer passed None is null, never read: the runtime checked it) */
        pthread_mutex_unlock(&st->lock);
        return blk_fail(BLK_ERROR_BAD_ARGUMENT, "kernel '%s', argument %d ('%s'): 0x%llx is not memory from blk_malloc",
                        f->name, i, f->params[i].name, (unsigned long long)l->args[i].value.ptr);
    }
    InterpBuffer *bufs = calloc((size_t)st->nallocs + 1, sizeof *bufs);
    for (int i = 0; bufs && i < st->nallocs; i++) bufs[i] = (InterpBuffer){st->allocs[i].base, st->allocs[i].bytes, NULL};
    int nbufs = st->nallocs;
    pthread_mutex_unlock(&st->lock);
    if (!bufs) return blk_fail(BLK_ERROR_OUT_OF_MEMORY, "out of memory");
    InterpOptions opt = {0};
    blk_status st_env = positive_from_env(f, "BLK_CPU_MAX_LOOP_ITERATIONS", &opt.max_loop_iterations);
    if (st_env == BLK_SUCCESS) st_env = positive_from_env(f, "BLK_CPU_MAX_STEPS", &opt.max_steps);
    if (st_env == BLK_SUCCESS) st_env = positive_from_env(f, "BLK_CPU_MAX_BYTES", &opt.max_bytes);
    opt.shuffle_seed = ctx->shuffle_seed;
    if (st_env == BLK_SUCCESS && !opt.shuffle_seed) st_env = positive_from_env(f, "BLK_CPU_SHUFFLE", &opt.shuffle_seed);
    opt.shuffle = opt.shuffle_seed != 0;
    if (st_env != BLK_SUCCESS) {
        free(bufs);
        return st_env;
    }
    InterpReport report = {0};
    opt.report = &report;
    char *err = interp_launch(f, iargs, f->nparams, l->grid, bufs, nbufs, &opt);
    free(bufs);
    if (report.outcome == INTERP_OK && !err) return BLK_SUCCESS;
    /* the values outgrowing the limit (or the host) is not the kernel's fault;
     * either way the device stays usable */
    blk_status s = report.outcome == INTERP_OUT_OF_MEMORY ? BLK_ERROR_OUT_OF_MEMORY : BLK_ERROR_KERNEL_FAULT;
    if (err) s = blk_fail(s, "%s", err);
    else s = blk_fail(s, "kernel '%s': out of memory in the interpreter", f->name);
    free(err);
    return s;
}

const BlkDevice blk_device_cpu = {
    .open = cpu_open,
    .close = cpu_close,
    .enter = cpu_enter,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy_to_device,
    .copy_to_host = cpu_copy_to_host,
    .memset = cpu_memset,
    .synchronize = cpu_synchronize,
    .load = cpu_load,
    .unload = cpu_unload,
    .launch = cpu_launch,
};
