/* nvptx.h: the NVPTX backend's one public entry: block IR in, PTX (or LLVM
 * IR) out, with everything a launcher needs about each kernel returned as
 * data. Also the table of the GPU architectures blkc targets. The files of
 * compiler/nvptx/ share gen.h, which nothing outside this folder includes. */
#ifndef BLK_NVPTX_H
#define BLK_NVPTX_H

#include "blkc.h"

/* ---------------------------------------------------------------- target.c */
/* One row per architecture blkc can emit code for. */
typedef struct {
    const char *name;         /* "sm_90" */
    int sm;                   /* 90: compute capability x 10 */
    bool arch_specific;       /* sm_90a: runs on that GPU only, chosen only for a device of exactly that capability */
    bool wgmma;               /* has wgmma.mma_async (warpgroup tensor cores): dot uses it */
    bool tma;                 /* pipelined loads may be TMA copies (cp.async.bulk.tensor) */
    bool grid_dependency;     /* griddepcontrol (sm_90 up): gdc_wait and gdc_launch_dependents act; before,
                                 a grid starts only after the one before it ends and they do nothing */
    bool fp8_cvt;             /* f32 -> fp8 by cvt.rn.satfinite (PTX 7.8 has it from sm_89; taken where it was
                                 checked on a GPU, sm_90), its saturation then undone; else integer operations */
    const char *ptx_features; /* the PTX ISA that introduced it, so the PTX loads on the oldest driver that knows it */
    int64_t max_shared_bytes; /* shared memory one program may use (the opt-in maximum) */
    int64_t sm_shared_bytes;  /* shared memory of a multiprocessor (1 KiB of it reserved per program) */
    int sm_warps, sm_programs; /* the most warps and programs a multiprocessor holds */
} NvptxArch;

enum { NVPTX_SM_REGISTERS = 65536 }; /* 32-bit registers of a multiprocessor, sm_80 to sm_90 */

#define NVPTX_DEFAULT_ARCH "sm_90"

/* The PTX ISA version an arch's PTX declares, times ten (its ptx_features): 70 for sm_80. */
int nvptx_ptx_isa(const NvptxArch *a);
/* Whether kernel f built for arch a may start while the grid before it on its stream ends
 * (programmatic dependent launch: cuLaunchKernelEx with programmatic stream serialization):
 * it has a gdc_wait, and a's code keeps it. The runtime, the C launchers and the contract
 * all ask this. */
bool nvptx_launches_after_previous(const NvptxArch *a, const BirFunction *f);

const NvptxArch *nvptx_arch(const char *name); /* NULL if blkc does not know it */
/* The registers a thread may have (at most 255) when `programs` programs of
 * `warps` warps share `sm_registers` registers, which a warp gets 256 at a time. */
int nvptx_registers_for(int64_t sm_registers, int programs, int warps);
/* The occupancy target worth giving ptxas for a kernel built without one
 * that reached `programs` programs an SM with `regs` registers a thread,
 * where its shared memory and warps would allow `most`: one program more
 * when registers alone stop it and ptxas went at most 8 registers a thread
 * over what that allows (attention's D = 64 loop took 136 where 128 give
 * 4 programs instead of 3; with the target it fits 128 without spilling),
 * or, `persistent` (NvptxKernel.persistent), at most a third over (ptxas
 * gives the loop around a persistent body 16 to 34 more: 144 there; a
 * third for every kernel cost layer_norm_fwd 23%, 3 programs of 80
 * registers instead of 2 of 128);
 * else `programs` when that is two or more and leaves 8 or more registers
 * a thread unused; else 0 (one program an SM: the thread count bounds the
 * registers as a target would). Never a target that allows fewer than
 * `min_regs` registers a thread (NvptxKernel.min_regs). The runtime's
 * automatic target and --stats. */
int nvptx_occupancy_target(int64_t sm_registers, int programs, int most, int warps, int regs, int min_regs,
                           bool persistent);
/* The PTX of one kernel built without an occupancy target, as it would be
 * built with `target` (malloc'ed): the same text and a `.minnctapersm`
 * directive, which is all a target changes in a kernel without a producer
 * warpgroup. NULL where that does not hold (a producer: the text has the
 * directive already; not one kernel) or out of memory: build it again. */
char *nvptx_with_occupancy_target(const char *ptx, int target);
/* Programs of a kernel that fit one multiprocessor of `a` (with `regs`
 * registers a thread, 0 where not known yet, and `shared` bytes of shared memory a program), and
 * what limits them: "registers", "shared memory", "warps" or "programs". */
int nvptx_programs_per_sm(const NvptxArch *a, int warps, int regs, int64_t shared, const char **limit);
/* What one program takes of each of a multiprocessor's resources (programs,
 * warps, registers, shared memory: the order nvptx_programs_per_sm breaks
 * ties in) and how many programs each allows; returns the limiting one's index. */
typedef struct {
    const char *what;
    int64_t used, total; /* a program's share and the multiprocessor's */
    int allows;          /* the programs it leaves room for */
} NvptxSmShare;
enum { NVPTX_SHARE_PROGRAMS, NVPTX_SHARE_WARPS, NVPTX_SHARE_REGISTERS, NVPTX_SHARE_SHARED, NVPTX_SM_RESOURCES };
int nvptx_sm_shares(const NvptxArch *a, int warps, int regs, int64_t shared, NvptxSmShare share[NVPTX_SM_RESOURCES]);
/* "sm_80, sm_86, sm_89, sm_90 or sm_90a", for messages; written into buf. */
const char *nvptx_arch_names(char *buf, size_t size);
/* The LLVM blkc was built with ("19.1.7"). */
const char *nvptx_llvm_version(char *buf, size_t size);
/* The arch to build for on a device of compute capability major.minor: its
 * own (the arch-specific one where there is one: sm_90a on a 9.0 GPU, for
 * wgmma), else the newest older portable one blkc knows (its PTX is
 * JIT-compiled forward); NULL when the device is older than every arch. */
const NvptxArch *nvptx_arch_for_device(int major, int minor);

/* ---------------------------------------------------------------- nvptx.c */
/* A launch fact stated by name (blkc --assume), for every kernel with a
 * runtime parameter of that name. */
typedef struct {
    const char *name;
    int64_t fact; /* a power of two: the integer is a multiple of it, the pointer aligned to it in bytes;
                     or NVPTX_PARAM_ONE: the integer is 1 */
} NvptxAssume;

enum { NVPTX_MAX_ASSUME = 64 };

/* A fact as --assume spells it: "N%16", "S=1" (facts.c). */
void nvptx_fact_spelling(const NvptxAssume *a, char *buf, size_t size);

typedef struct {
    const char *arch;         /* NULL: NVPTX_DEFAULT_ARCH */
    /* the integer options (options.def): num_warps (0: chosen from the largest block), num_stages
     * (a pipelined loop's ring: 0 as many as fit), min_blocks_per_sm (0: no occupancy target; else
     * .minnctapersm); each 0 or within its row's range */
#define BLK_INT(name, cli, lo, hi, rule, value, help) int name;
#include "options.def"
#undef BLK_INT
    const char *only_kernel;  /* NULL: every kernel of the module */
    const int64_t *param_div; /* with only_kernel: launch-time facts, one per runtime parameter
                                 (a pointer's alignment, an integer's divisibility; 0: none;
                                 NVPTX_PARAM_ONE: the integer is 1, as Triton specializes) */
    const NvptxAssume *assume; /* facts by parameter name (at most NVPTX_MAX_ASSUME), added to param_div's */
    int nassume;
    bool remarks;             /* a remark at each block load or store narrower than facts could make it,
                                 naming the facts (as --assume would state them) */
    bool llvm_ir;             /* the optimized LLVM IR instead of PTX */
    bool decisions_only;      /* the kernels' decisions (NvptxKernel) without running LLVM's passes and
                                 code generation: NvptxOutput.text is "" (what a build would do, cheaply) */
    bool plan;                /* NvptxKernel.plan: each kernel's schedule as text (--emit=plan) */
#define BLK_FLAG(name, cli, help) bool name; /* the compiler's flags: options.def */
#include "options.def"
#undef BLK_FLAG
} NvptxOptions;

enum { NVPTX_PARAM_ONE = -1 };

#define NVPTX_TMA_COLUMNS ((int64_t)1 << 31)

/* A tensor map (CUtensorMap, 128 bytes) the launcher makes for a kernel
 * that copies tiles by TMA: a 2-D view of 16-bit or 8-bit elements (UINT16,
 * UINT8) from a pointer argument, rows `stride` elements apart (rows may
 * overlap). Its extents:
 *   columns: cols_scale x argument cols_param where the kernel's mask
 *            bounds them (the copy's out-of-bounds columns read as zeros,
 *            as the masked-off elements do), else NVPTX_TMA_COLUMNS;
 *   rows:    rows_scale x argument rows_param where the mask bounds them;
 *            else, with bounded columns, NVPTX_TMA_COLUMNS / stride (the
 *            rows within the 2^31 elements); else box_rows (the copy's
 *            offset is all in its column).
 * A kernel with maps takes them after its own parameters, in order
 * (.param .align 64 .b8[128], grid constants), then a u32 whose bit j says
 * map j could be made (an extent from 1 to 2^32); a clear bit makes the
 * kernel copy by cp.async instead. */
typedef struct {
    int base_param;       /* the pointer parameter the view starts at */
    int stride_param;     /* the integer parameter the row stride scales, or -1 */
    int64_t stride_scale; /* row stride in elements: stride_scale x that argument (x 1 without one) */
    int box_inner;        /* elements a box takes of a row: 16 to 128 bytes of them */
    int box_rows;         /* rows a box takes: 8 to 256 */
    int swizzle_bytes;    /* 128, 64 or 32 (the box's row), or 0: none */
    int rows_param, cols_param;     /* the integer parameters the bounds scale, or -1 */
    int64_t rows_scale, cols_scale; /* 0: no bound; else as stride_scale */
    int elem_bytes;                 /* 2, or 1 (8-bit tiles) */
} NvptxTensorMap;

/* Map m's row stride and extents for the arguments of its parameters
 * (stride_arg: argument stride_param's value, and so on; ignored where the
 * parameter is -1); false when the map cannot be made: a stride not from 1
 * element to below TMA's 2^40 bytes, an extent not from 1 to 2^32.
 * The C launcher computes the same (launcher.c). */
static inline bool nvptx_tma_extents(const NvptxTensorMap *m, int64_t stride_arg, int64_t rows_arg, int64_t cols_arg,
                                     uint64_t *stride, uint64_t *rows, uint64_t *cols) {
    int64_t s, r, c;
    if (__builtin_mul_overflow(m->stride_scale, m->stride_param >= 0 ? stride_arg : 1, &s) || s <= 0 ||
        s >= ((int64_t)1 << 40) / m->elem_bytes)
        return false;
    c = NVPTX_TMA_COLUMNS;
    if (m->cols_scale && __builtin_mul_overflow(m->cols_scale, m->cols_param >= 0 ? cols_arg : 1, &c)) return false;
    r = m->cols_scale ? NVPTX_TMA_COLUMNS / s : m->box_rows;
    if (m->rows_scale && __builtin_mul_overflow(m->rows_scale, m->rows_param >= 0 ? rows_arg : 1, &r)) return false;
    *stride = (uint64_t)s, *rows = (uint64_t)r, *cols = (uint64_t)c;
    return c >= 1 && c <= (int64_t)1 << 32 && r >= 1 && r <= (int64_t)1 << 32;
}

/* A map's bound as the contract and the plan both write it: "N" (the
 * argument), "N x 2" (scale times it) or "64" (a constant: param_name NULL). */
static inline void nvptx_tma_bound_text(const char *param_name, int64_t scale, char *buf, size_t size) {
    if (!param_name) snprintf(buf, size, "%lld", (long long)scale);
    else if (scale == 1) snprintf(buf, size, "%s", param_name);
    else snprintf(buf, size, "%s x %lld", param_name, (long long)scale);
}

enum { NVPTX_MAX_TENSOR_MAPS = 8 };
/* The swizzle of a box whose rows are box_inner elements of elem_bytes:
 * the row's bytes (staging.c's slabs), 0 for a 16-byte row. */
static inline int nvptx_tma_swizzle_bytes(int box_inner, int elem_bytes) {
    return box_inner * elem_bytes >= 32 ? box_inner * elem_bytes : 0;
}

/* A kernel's maps, in parameter order. */
typedef struct {
    int count;
    NvptxTensorMap map[NVPTX_MAX_TENSOR_MAPS];
} NvptxTensorMaps;

/* What a launcher needs to know about one compiled kernel. */
typedef struct {
    const char *name;     /* the BirFunction's */
    int num_warps;        /* the launch's block is 32 x num_warps threads */
    int64_t shared_bytes; /* dynamic shared memory to launch with (0: none) */
    NvptxTensorMaps tensor_maps; /* the TMA maps its launches make */
    char *notes;          /* how each dot was lowered and which loop blocks live in shared memory, a line each ("" when none); malloc'ed */
    /* Persistent (NvptxOptions.persistent): the kernel takes the grid of a
     * launch (its x, y and z sizes, three u32) after all its other
     * parameters and runs, in each program launched, the programs of that
     * grid numbered ctaid.x, ctaid.x + nctaid.x, ... (x fastest, as a launch
     * numbers them) below its size; program_id and num_programs are that
     * grid's. A launcher makes as many programs as run at once. */
    bool persistent;
    /* Registers a thread below which ptxas cannot build the kernel at all, or
     * 0: a wgmma's accumulators and a-fragments, which it cannot spill, and
     * what the instruction needs besides (an occupancy target allowing fewer
     * fails with C7602). */
    int min_regs;
    /* The launch facts it was compiled under, one per runtime parameter (as
     * NvptxOptions.param_div: 0 none, a power of two, NVPTX_PARAM_ONE): the
     * launch's (param_div), --assume's and @equal(1)'s together; a launch
     * must satisfy them and the parameters' declared attributes (launch.h). */
    int64_t facts[BLK_MAX_KERNEL_ARGS];
    /* With NvptxOptions.plan: every decision the backend made about the
     * kernel (its schedule: layouts, shared memory, pipelined loops, dots,
     * access widths), as blkc --emit=plan prints it; malloc'ed. Else NULL. */
    char *plan;
} NvptxKernel;

typedef struct {
    char *text;           /* PTX or LLVM IR, NUL-terminated */
    NvptxKernel *kernels; /* in module order */
    int nkernels;
} NvptxOutput;

/* Compiles the kernels of m. Errors the program caused (shared memory over
 * the architecture's limit, a layout too wide) go to de at the op's source
 * location, internal ones as "internal compiler error"; then it returns
 * false and out holds nothing. */
bool nvptx_compile(const BirModule *m, const NvptxOptions *opt, DiagEngine *de, NvptxOutput *out);
void nvptx_output_free(NvptxOutput *out);

/* --------------------------------------------------------------- annotate.c */
/* The PTX with each source line as a comment above the instructions it
 * produced (--annotate). Malloc'ed; NULL when out of memory. */
char *nvptx_annotate(const char *ptx, const Source *src);

#endif
