/* blk.h: JIT-compile blk kernels and launch them from C, on a CUDA GPU or on
 * blkc's reference interpreter (the "cpu" device). docs/runtime.md is the guide.
 *
 * Ownership: every object you create (context, module, device memory) you
 * destroy or free; a kernel and the strings the API returns belong to their
 * module and live until it is destroyed. Modules and kernels may be used
 * from several threads; a context's launches are ordered as issued. A second
 * destroy does nothing; a call on a destroyed handle is
 * BLK_ERROR_INVALID_VALUE (docs/runtime.md says what stays undefined). */
#ifndef BLK_H
#define BLK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLK_VERSION "0.1.0"

typedef enum blk_status {
    BLK_SUCCESS = 0,
    BLK_ERROR_INVALID_VALUE,  /* a NULL or out-of-range argument to the API itself */
    BLK_ERROR_NO_DRIVER,      /* libcuda.so.1 could not be loaded */
    BLK_ERROR_NO_DEVICE,      /* the driver has no such device */
    BLK_ERROR_COMPILE,        /* the source did not compile: blk_last_error() has the diagnostics */
    BLK_ERROR_NOT_FOUND,      /* no kernel by that name */
    BLK_ERROR_BAD_ARGUMENT,   /* a launch argument does not fit the kernel's parameter */
    BLK_ERROR_BAD_GRID,       /* an empty grid, or one larger than the device allows */
    BLK_ERROR_OUT_OF_MEMORY,
    BLK_ERROR_CUDA,           /* a CUDA call failed: blk_last_error() has cuGetErrorString's text */
    BLK_ERROR_KERNEL_FAULT,   /* the kernel faulted (an illegal address on the GPU, an out-of-bounds
                                 access on the cpu device); a GPU context is unusable after it */
    BLK_ERROR_CONTEXT_LOST,   /* an earlier fault made this context unusable: destroy it. CUDA
                                 keeps such a fault for the rest of the process, so new contexts
                                 on that device fail too (with the driver's error text). blk never
                                 resets the primary context it shares with PyTorch */
} blk_status;

/* "BLK_ERROR_COMPILE: the source did not compile", never NULL. */
const char *blk_status_string(blk_status status);
/* What the last failing call on this thread said, in full: compile errors as
 * file:line:col with the source line and a caret; launch errors naming the
 * kernel and the argument; CUDA errors with the driver's text. Valid until
 * the next blk_ call on this thread. "" when there was none. */
const char *blk_last_error(void);

typedef struct blk_context blk_context;
typedef struct blk_module blk_module;
typedef struct blk_kernel blk_kernel;

/* Device memory: a device address on a GPU, a host address on the cpu device. */
typedef uint64_t blk_ptr;

/* A context on CUDA device `ordinal`. BLK_ERROR_NO_DRIVER / BLK_ERROR_NO_DEVICE
 * where there is none (the cpu device still works). */
blk_status blk_context_create_cuda(int ordinal, blk_context **out);
/* A context on the reference interpreter: programs run one at a time on
 * this thread, every access is bounds-checked against blk_malloc'ed memory. */
blk_status blk_context_create_cpu(blk_context **out);
void blk_context_destroy(blk_context *ctx);
/* On the cpu device: run the programs of each later launch in an order
 * shuffled by `seed` (0: in order, 0, 1, 2, ..., the default), so that a
 * kernel whose result depends on the order programs run in shows it there
 * rather than on a GPU. $BLK_CPU_SHUFFLE=seed does the same for contexts
 * left at 0. BLK_ERROR_INVALID_VALUE on a GPU context, whose order is the
 * hardware's. */
blk_status blk_context_shuffle_programs(blk_context *ctx, uint64_t seed);
/* "NVIDIA H100 80GB HBM3 (sm_90a)" or "cpu (reference interpreter)"; owned by the context. */
const char *blk_context_device(const blk_context *ctx);

typedef struct blk_compile_options {
    const char *const *defines; /* "NAME=VALUE", like blkc -D */
    int num_defines;
    int num_warps;              /* 0: blkc's default */
    const char *arch;           /* NULL: the device's (sm_80 ... sm_90a) */
    const char *name;           /* the file name diagnostics show; NULL: "<source>" */
    int num_stages;             /* shared buffers of a loop whose loads feed dots; 0: blkc's default */
    int min_blocks_per_sm;      /* occupancy target (PTX .minnctapersm, blkc --min-blocks-per-sm):
                                 * 0: automatic (a CUDA device builds a kernel without one, then again
                                 * with the occupancy that build reached, where ptxas left registers
                                 * unused under it; docs/runtime.md), -1: none, 1 to 32: this one */
    int no_tma;                 /* 1: pipelined loads by cp.async even where TMA could copy them (sm_90a) */
    int no_warp_specialize;     /* 1: no producer warpgroup for a TMA loop (sm_90a; docs/runtime.md) */
    int persistent;             /* 1: a CUDA launch makes as many programs as run at once, each running the
                                 * work of many program ids in turn (docs/runtime.md); results are the same */
    int debug;                  /* 1: device_assert and assume checked on the GPU too (blkc --debug); also
                                 * $BLK_DEBUG=1. The interpreter always checks them */
    int precise_math;           /* 1: IEEE-rounded division, sqrt and rsqrt (blkc --precise-math; docs/language.md §8) */
    int no_fma;                 /* 1: a * b + c not contracted into one fma (blkc --no-fma) */
    int no_bulk_reduce;         /* 1: relaxed block atomic_adds by reds even where one bulk reduction could
                                 * add them (sm_90a; blkc --no-bulk-reduce) */
    int ping_pong;              /* 1: a producer loop's consumer warpgroups take turns to issue their dots
                                 * (sm_90a; blkc --ping-pong) */
    int overlap_dots;           /* 1: a loop's deferred dot issued in the next iteration right after the
                                 * first dot, the work between under it (sm_90a; blkc --overlap-dots) */
    /* num_warps, num_stages and min_blocks_per_sm are the compiler's integer options (0: the
     * default; blk_compile_int_options() names them); a new one would follow min_blocks_per_sm.
     * The int fields from no_tma on are its flags (off: 0), in the order blk_compile_flags()
     * names them; a new one is added last. So the struct grows: build a program against the
     * blk.h of the libblk it loads. */
} blk_compile_options;

/* The names of blk_compile_options' flag fields (no_tma onwards), in order, separated by
 * spaces, and of its integer options (num_warps first): how a binding lays the struct out and
 * names its options (the Python package reads them). blk_compile_options_size() is the
 * struct's size in this library, for a binding to check its own layout against. */
const char *blk_compile_flags(void);
const char *blk_compile_int_options(void);
size_t blk_compile_options_size(void);

/* Compiles every kernel of a source (opt may be NULL). Compile errors give
 * BLK_ERROR_COMPILE with the diagnostics in blk_last_error(). */
blk_status blk_module_create(blk_context *ctx, const char *source, size_t length, const blk_compile_options *opt,
                             blk_module **out);
blk_status blk_module_create_from_file(blk_context *ctx, const char *path, const blk_compile_options *opt,
                                       blk_module **out);
void blk_module_destroy(blk_module *module);
/* The notes and warnings a successful compile gave, as blkc prints them
 * ("file:line:col: note: ..." with the line and a caret), or NULL when there
 * were none; owned by the module. Python raises them as a BlkWarning. */
const char *blk_module_diagnostics(const blk_module *module);

blk_status blk_module_get_kernel(blk_module *module, const char *name, blk_kernel **out);
const char *blk_kernel_name(const blk_kernel *kernel);
int blk_kernel_num_args(const blk_kernel *kernel); /* its runtime (non-const) parameters */
/* The const parameters this build of the kernel took, defaults included, as blkc --emit=bir prints
 * them ("T = f16, BLOCK = 1024, ACT = \"relu\""); "" without any. Owned by the kernel. */
const char *blk_kernel_consts(const blk_kernel *kernel);
/* The kernel's PTX and LLVM IR, without launch specialization; owned by the kernel. */
blk_status blk_kernel_ptx(blk_kernel *kernel, const char **ptx);
blk_status blk_kernel_llvm_ir(blk_kernel *kernel, const char **llvm_ir);

typedef enum blk_arg_kind {
    BLK_ARG_PTR, BLK_ARG_I32, BLK_ARG_U32, BLK_ARG_I64, BLK_ARG_F32, BLK_ARG_U64, BLK_ARG_F64
} blk_arg_kind;

typedef struct blk_arg {
    blk_arg_kind kind;
    union {
        blk_ptr ptr;
        int64_t i;  /* I32, U32 and I64: for any integer parameter the value fits */
        uint64_t u; /* U64 */
        float f;    /* F32: for f32, f16 and bf16 parameters (rounded to those at launch), or f64 */
        double d;   /* F64: for f64 parameters, or the others (rounded at launch) */
    } value;
} blk_arg;

static inline blk_arg blk_arg_ptr(blk_ptr p) { blk_arg a; a.kind = BLK_ARG_PTR; a.value.ptr = p; return a; }
static inline blk_arg blk_arg_i32(int32_t v) { blk_arg a; a.kind = BLK_ARG_I32; a.value.i = v; return a; }
static inline blk_arg blk_arg_u32(uint32_t v) { blk_arg a; a.kind = BLK_ARG_U32; a.value.i = v; return a; }
static inline blk_arg blk_arg_i64(int64_t v) { blk_arg a; a.kind = BLK_ARG_I64; a.value.i = v; return a; }
static inline blk_arg blk_arg_f32(float v) { blk_arg a; a.kind = BLK_ARG_F32; a.value.f = v; return a; }
static inline blk_arg blk_arg_u64(uint64_t v) { blk_arg a; a.kind = BLK_ARG_U64; a.value.u = v; return a; }
static inline blk_arg blk_arg_f64(double v) { blk_arg a; a.kind = BLK_ARG_F64; a.value.d = v; return a; }

/* Argument i: its parameter's name, and the kind of blk_arg it takes (an
 * integer parameter takes any integer kind in range); NULL / -1 when i is
 * out of range. */
const char *blk_kernel_arg_name(const blk_kernel *kernel, int i);
int blk_kernel_arg_kind(const blk_kernel *kernel, int i);
/* Argument i's type as blk spells it: "*f16", "i32", "f32", ...; a static
 * string; NULL when i is out of range. */
const char *blk_kernel_arg_type(const blk_kernel *kernel, int i);

/* Launches grid_x * grid_y * grid_z programs. The arguments are checked
 * against the kernel's runtime parameters (count; pointer, integer or float;
 * integer range); a kernel is compiled once per set of launch facts (16-byte
 * aligned pointers, integers divisible by 16, 8 or 4) and kept. `stream` is a
 * CUstream or NULL; on the cpu device the launch runs before returning. */
blk_status blk_launch(blk_kernel *kernel, unsigned grid_x, unsigned grid_y, unsigned grid_z, const blk_arg *args,
                      int num_args, void *stream);
/* blk_launch with all it takes in one record, for bindings that pay for each
 * argument of a foreign call (Python's ctypes converts each one: a record
 * packed in one step saves about a microsecond a launch). The same checks,
 * the same launch. */
typedef struct {
    blk_kernel *kernel;
    void *stream;
    unsigned grid[3];
    int num_args;
    blk_arg args[]; /* num_args of them */
} blk_launch_record;
blk_status blk_launch_record_run(const blk_launch_record *record);
/* The PTX a launch with these arguments runs: the specialization for their
 * facts (compiled and loaded now if no launch has yet), with its launch
 * contract at the top (docs/runtime.md, "Ahead of time"); on the cpu device,
 * what a GPU of the module's arch would run. Owned by the kernel. Nothing is
 * launched; the arguments are checked as blk_launch checks them. */
blk_status blk_kernel_launch_ptx(blk_kernel *kernel, const blk_arg *args, int num_args, const char **ptx);
/* Every decision the compiler makes about the kernel (its schedule, as
 * blkc --emit=plan prints it: each value's layout, shared memory, pipelined
 * loops, dots, access widths and what limits them), for the facts of a
 * launch with these arguments (checked as blk_launch checks them), or with
 * args NULL and num_args 0 for the build without launch facts. Made without
 * LLVM's passes; nothing is compiled to code, loaded or launched. Owned by
 * the kernel. */
blk_status blk_kernel_plan(blk_kernel *kernel, const blk_arg *args, int num_args, const char **plan);
/* One self-contained HTML page to study the kernel, as blkc --explore writes
 * it: the source, the plan and the PTX side by side, each line tied to its
 * source line, PTX instructions counted by kind per line. For a launch's
 * facts (args as blk_kernel_launch_ptx takes them: the PTX that launch runs),
 * or with args NULL and num_args 0 for the build without them. Owned by the
 * kernel. */
blk_status blk_kernel_explore(blk_kernel *kernel, const blk_arg *args, int num_args, const char **html);

blk_status blk_malloc(blk_context *ctx, size_t bytes, blk_ptr *out);
blk_status blk_free(blk_context *ctx, blk_ptr ptr);
blk_status blk_memcpy_to_device(blk_context *ctx, blk_ptr dst, const void *src, size_t bytes);
blk_status blk_memcpy_to_host(blk_context *ctx, void *dst, blk_ptr src, size_t bytes);
blk_status blk_memset(blk_context *ctx, blk_ptr dst, int byte, size_t bytes);
/* Waits for every launch and copy; reports a kernel fault that happened meanwhile. */
blk_status blk_synchronize(blk_context *ctx);

/* The on-disk cache's directory ($BLK_CACHE_DIR, else ~/.cache/blk; created
 * if needed), so that tools built on blk (the Python autotuner) keep their
 * files beside the compiled kernels; NULL when the cache is off
 * (BLK_CACHE_DISABLE=1), or unusable: then blk_last_error() says why (a path
 * that is no directory or cannot be made, or is too long). Valid until the
 * next call on this thread. */
const char *blk_cache_directory(void);

#ifdef __cplusplus
}
#endif
#endif
