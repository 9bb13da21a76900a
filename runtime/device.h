/* device.h: the runtime's internal interface to a device. runtime.c is the
 * device-independent API (include/blk.h); each device implements BlkDevice:
 * device_cpu.c (the reference interpreter) and device_cuda.c (the CUDA
 * driver). Not installed: nothing outside runtime/ includes it. */
#ifndef BLK_DEVICE_H
#define BLK_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blk.h"
#include "compile.h"

typedef struct BlkDevice BlkDevice;

/* A context: the common part, which runtime.c reads, and the device's own
 * state. A device fills device, arch and max_grid when it opens, and sets
 * lost when a fault leaves the context unusable. */
struct blk_context {
    const BlkDevice *dev;
    void *state;          /* the device's own */
    bool lost;            /* every later call reports BLK_ERROR_CONTEXT_LOST */
    char device[192];     /* blk_context_device's text */
    char arch[16];        /* the PTX target of modules without opt->arch */
    int max_grid[3];      /* the largest grid per dimension; 0: no limit */
    uint64_t shuffle_seed; /* cpu device: programs in a seeded random order; 0: in order */
};

/* What a launch's arguments let the code assume (Triton's specialization,
 * finer): bit i of div16 when argument i is a 16-byte aligned pointer or an
 * integer divisible by 16; of div8 / div4 when it is an integer divisible by
 * 8 / 4 and no more (so a 16-byte row of f16 / f32 elements is a fact, as a
 * ragged matmul's strides need for TMA and wide accesses); of one when it is
 * the integer 1. */
typedef struct {
    uint64_t div16, div8, div4, one;
} BlkFacts;

static inline bool blk_facts_equal(BlkFacts a, BlkFacts b) {
    return a.div16 == b.div16 && a.div8 == b.div8 && a.div4 == b.div4 && a.one == b.one;
}

/* One specialization of a kernel to load: the kernel, the launch facts, and the module's cache key (compiler version, arch, warps, defines,
 * source: everything the code depends on but the kernel, facts and device). */
typedef struct {
    blk_kernel *kernel;
    const char *name;
    BlkFacts facts;
    const char *key;
    size_t key_len;
    bool auto_occupancy; /* the module leaves the occupancy target (.minnctapersm) to the device */
    bool persistent;     /* built --persistent: a launch passes the grid (nvptx.h's NvptxKernel.persistent) */
    bool after_previous; /* may start while the grid before it ends (nvptx_launches_after_previous):
                            a CUDA launch allows programmatic dependent launch */
} BlkVariantSpec;

/* A specialization's code as the compiler makes it. */
typedef struct {
    char *ptx;            /* malloc'ed */
    int warps;            /* the launch's block is 32 x warps threads */
    int64_t shared_bytes; /* dynamic shared memory per program */
    NvptxTensorMaps tensor_maps; /* the TMA maps a launch makes (nvptx.h) */
    int min_regs;         /* registers a thread it cannot be built with fewer of (nvptx.h), or 0 */
} BlkKernelCode;

/* A checked launch. */
typedef struct {
    const BirFunction *f; /* the kernel: its parameters' types */
    const blk_arg *args;  /* one per parameter, checked against it: pointers, floats as F64 (value.d),
                           * integers as I64 (value.i, normalized to the parameter's type) */
    uint32_t grid[3];     /* not empty, within max_grid */
    void *stream;         /* a CUstream or NULL */
    void *code;           /* the specialization's, from load */
} BlkLaunch;

/* The device interface. Every call but open gets an open context that is
 * not lost; a failing call sets the error (blk_fail) and returns its status. */
struct BlkDevice {
    /* Opens device `ordinal` into ctx (state, device, arch, max_grid). */
    blk_status (*open)(blk_context *ctx, int ordinal);
    /* Frees what open made (a lost context included). */
    void (*close)(blk_context *ctx);
    /* Makes the context usable from the calling thread. */
    blk_status (*enter)(blk_context *ctx);
    blk_status (*alloc)(blk_context *ctx, size_t bytes, blk_ptr *out);
    blk_status (*free)(blk_context *ctx, blk_ptr ptr);
    /* Copies and memset get non-NULL pointers and a nonzero size. */
    blk_status (*copy_to_device)(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes);
    blk_status (*copy_to_host)(blk_context *ctx, void *dst, blk_ptr src, size_t bytes);
    blk_status (*memset)(blk_context *ctx, blk_ptr dst, int byte, size_t bytes);
    blk_status (*synchronize)(blk_context *ctx);
    /* Loads one specialization (on its first launch, under the module's
     * lock) into *code, the device's handle for launch and unload. */
    blk_status (*load)(blk_context *ctx, const BlkVariantSpec *spec, void **code);
    /* Frees a loaded specialization (the context may be lost; NULL when it
     * was destroyed first: then only host memory is freed). */
    void (*unload)(blk_context *ctx, void *code);
    /* The PTX a loaded specialization runs, its launch contract at the top
     * (owned by the code), or NULL where the device runs no PTX. */
    const char *(*code_ptx)(void *code);
    blk_status (*launch)(blk_context *ctx, const BlkLaunch *launch);
};

extern const BlkDevice blk_device_cpu;  /* device_cpu.c */
extern const BlkDevice blk_device_cuda; /* device_cuda.c */

/* handles.c: the live handles, so that a destroyed one is an error, not a
 * read of freed memory. add is false when out of memory; remove is false
 * when p was no live handle of that kind. */
typedef enum { BLK_HANDLE_CONTEXT = 1, BLK_HANDLE_MODULE, BLK_HANDLE_KERNEL } BlkHandleKind;
bool blk_handle_add(const void *p, BlkHandleKind kind);
bool blk_handle_remove(const void *p, BlkHandleKind kind);
bool blk_handle_live(const void *p, BlkHandleKind kind);

/* runtime.c: the error of the calling thread (blk_last_error); returns s. */
blk_status blk_fail(blk_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* runtime.c: the code of a specialization (a device's load calls it when it
 * has no cached code), with this occupancy target (0: the module's);
 * BLK_ERROR_COMPILE with the error set on failure. */
blk_status blk_kernel_code(const BlkVariantSpec *spec, int min_blocks_per_sm, BlkKernelCode *out);

/* runtime.c: a loaded specialization's launch contract (compiler/launch.h)
 * as JSON, or as PTX comments above its PTX (code->ptx); malloc'ed, NULL
 * when out of memory. */
char *blk_variant_contract(const BlkVariantSpec *spec, const BlkKernelCode *code, bool json);
/* runtime.c: with $BLK_DUMP_DIR set, writes the PTX a specialization runs
 * (its contract at the top, `ptx_with_contract`) and its contract as JSON
 * into that directory (docs/runtime.md); failures are silent. */
void blk_dump_variant(const BlkVariantSpec *spec, const BlkKernelCode *code, const char *ptx_with_contract);

/* jit.c: the runtime's only calls into the compiler's front end and NVPTX backend. */
/* Is this PTX target one the backend knows? The list of those, for messages
 * (into buf); the one to build for on a device of compute capability
 * major.minor (NULL: the device is older than every one). */
bool blk_jit_arch_known(const char *arch);
/* nvptx_launches_after_previous for a kernel built for arch */
bool blk_jit_launches_after_previous(const char *arch, const BirFunction *f);
const char *blk_jit_arch_names(char *buf, size_t size);
const char *blk_jit_device_arch(int major, int minor);
/* The occupancy target to build a kernel again with, or 0 (the compiler's
 * rule: nvptx_occupancy_target). */
int blk_jit_occupancy_target(const char *arch, int sm_registers, int programs, int warps, int regs, int64_t shared,
                             int min_regs, bool persistent);
/* A kernel's PTX with an occupancy target added, without compiling again,
 * or NULL: compile it again (nvptx_with_occupancy_target). */
char *blk_jit_with_occupancy_target(const char *ptx, int target);
/* Front end and block IR of a source (name: what diagnostics show; defs:
 * the -D values): the compilation, or NULL. *diags (malloc'ed, the caller's
 * to free; file:line:col with the line and a caret) holds the errors, or a
 * successful compile's notes and warnings; NULL when there are none. */
Compilation *blk_jit_compile(const char *name, const char *text, size_t len, ConstDef *defs, int ndefs, char **diags);
void blk_jit_release(Compilation *comp);
/* PTX (or optimized LLVM IR) of one kernel of a compilation, malloc'ed; with
 * what a launch needs to know in *info (notes NULL; with opt->plan, the
 * schedule's text, the caller's to free) when it is not NULL. NULL with the
 * diagnostics (file:line:col, the line and a caret) in err on failure. The
 * caller serializes calls on one compilation. */
char *blk_jit_emit(Compilation *comp, const char *kernel, const NvptxOptions *opt, bool llvm_ir, NvptxKernel *info,
                   char *err, size_t err_size);
/* The kernel's schedule as blkc --emit=plan prints it (malloc'ed), made
 * without LLVM's passes; NULL with the reason in err. */
char *blk_jit_plan(Compilation *comp, const char *kernel, const NvptxOptions *opt, char *err, size_t err_size);
/* The launch contract (compiler/launch.h) of kernel k of a compilation built
 * under opt: PTX comments, or JSON; followed by ptx where it is not NULL (the
 * PTX as blkc writes it); malloc'ed, NULL when out of memory. */
char *blk_jit_contract(Compilation *comp, const NvptxOptions *opt, const NvptxKernel *k, bool json, const char *ptx);

#endif
