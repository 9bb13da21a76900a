/* gen.h: what the files of compiler/nvptx/ share, and nothing outside the
 * folder includes: the layouts (layout.c), the backend's state (the module,
 * a kernel's schedule, the code generator's Gen) and the functions one file
 * calls in another, in the order of this map:
 *
 *   layout.c      axis analysis and layouts (KernelPlan)
 *   nvptx.c       the module, nvptx_compile(); each kernel scheduled, then emitted
 *   schedule.c    every decision about a kernel, before its function exists:
 *                 the shared-memory map, TMA and the producer, the loops' and
 *                 dots' schedules (NvptxSchedule)
 *   schedule_print.c  the schedule as text (--emit=plan) and --stats' notes
 *   util.c        errors at an op; LLVM helpers, thread-0 sections, shared
 *                 memory, coordinates
 *   facts.c       launch facts (--assume) and --remarks on access widths
 *   elementwise.c one element of an elementwise op; masks.c a select's
 *                 uniform test; math.c the math functions
 *   convert.c     a value in another layout
 *   shapes.c      expand_dims, broadcast, trans; flip, reshape, take, partner
 *   memory.c      load, store, atomics
 *   bulk.c        a block atomic_add as one bulk reduction: when, and its code
 *   reduce.c      reductions
 *   scan.c        scans, and reductions with a combine function
 *   print.c       device_print
 *   staging.c     a dot's operands: registers, staged slabs, ldmatrix
 *                 fragments, staged once before a loop
 *   dot.c         dot: mma.sync, tf32, fma; which path and where its
 *                 operands come from (the dot schedules)
 *   wgmma.c       dot on sm_90a's warpgroup tensor cores
 *   pipeline.c    the rings of loops that feed dots: planned (the loop
 *                 schedules), then cp.async and TMA copies issued
 *   tma.c         which loads TMA copies, their tensor maps
 *   async.c       mbarrier and TMA instructions
 *   warpspec.c    the producer warpgroup: when, and its code
 *   control.c     for, while, if
 *   carried.c     loop-carried blocks kept in shared memory
 *   kernel.c      one kernel's function from its schedule: the op dispatch
 *   persistent.c  the code around the body: returns, the loop over program ids
 *   emit.c        LLVM's O3 pipeline and PTX emission
 *   annotate.c    --annotate
 *   target.c      the arch table
 *
 * The only call cycle among the files is the region walk: kernel.c emits an op, control.c and scan.c the ops of
 * its regions through kernel.c, and pipeline.c a loop body's address
 * arithmetic again for later iterations (scripts/backend-calls.py checks). */
#ifndef BLK_NVPTX_GEN_H
#define BLK_NVPTX_GEN_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvptx.h"

/* ---------------------------------------------------------------- layout.c */
/* What the backend knows before emitting code: per value, facts along each
 * of its dimensions (Triton's AxisInfo; a scalar's at index 0), and how each
 * block shape is spread over the threads of a CTA (Triton's blocked layout). */
enum { AXIS_MAX_DIV = 1 << 30 };

typedef struct {
    /* along dimension d (the other dimensions' coordinates fixed): */
    int64_t contig[BLK_MAX_RANK];    /* runs of this many consecutive elements increase by 1 */
    int64_t div[BLK_MAX_RANK];       /* the first element of each run is divisible by this (bytes for pointers) */
    int64_t constancy[BLK_MAX_RANK]; /* runs of this many consecutive elements are equal */
    bool one;                        /* the value is the integer 1 (a parameter specialized so) */
} AxisInfo;

/* A layout says which elements of a block each thread holds: register r of
 * the thread (lane, warp) holds the element at coordinates that are a sum
 * of powers of two, one per set bit of r, lane and warp (Triton's linear
 * layouts, for power-of-two shapes). A bit's basis may be zero: then the
 * threads (or registers) that differ in it hold copies of the same elements.
 * Blocked layouts (elements per thread, then lanes, then warps, fastest
 * dimension first), the tensor cores' accumulator and operand layouts, and
 * their slices and transposes are all of this form. */
enum { LAYOUT_MAX_REG_BITS = 20, LAYOUT_LANE_BITS = 5, LAYOUT_MAX_WARP_BITS = 5 };

typedef struct {
    int rank;
    int32_t shape[BLK_MAX_RANK];
    int nreg_bits, nwarp_bits;
    int32_t nregs; /* 1 << nreg_bits */
    int32_t reg[LAYOUT_MAX_REG_BITS][BLK_MAX_RANK];
    int32_t lane[LAYOUT_LANE_BITS][BLK_MAX_RANK];
    int32_t warp[LAYOUT_MAX_WARP_BITS][BLK_MAX_RANK];
} Layout;

/* Where each dimension of a value comes from in the coordinates of a use:
 * from[d] is the use's dimension that gives the value's dimension d, or -1
 * for coordinate 0 (a broadcast size-1 dimension). */
typedef struct {
    int from[BLK_MAX_RANK];
} Projection;

typedef struct {
    int num_warps;
    AxisInfo *axis;   /* per value */
    Layout *layouts;  /* per value; rank 0 for scalars */
    int ndots;
    bool wgmma;       /* the arch has wgmma: dots that can use it get its accumulator layout */
} KernelPlan;

/* Analyzes f and gives every block value a layout; num_warps 0 picks the
 * default. param_div (NULL, or one entry per runtime parameter) adds facts
 * known at launch, as Triton specializes: a pointer's alignment in bytes, an
 * integer's divisibility; 0 adds nothing. */
KernelPlan *nvptx_plan_kernel(Arena *a, const BirFunction *f, int num_warps, const int64_t *param_div, bool wgmma);
/* The layout a memory op computes in: its pointers', or an atomic's result's
 * (layout.c: an atomic of a dot's result computes in the result's). */
const Layout *nvptx_memory_layout(const KernelPlan *p, const BirOp *op);
/* Runs of equal elements of value v within a thread (Triton's constancy,
 * as far as its vector reaches): register k holds what register
 * k & ~(run - 1) holds, so elementwise code computes it once. */
int nvptx_equal_run(const KernelPlan *p, int v);
/* Elements (not bytes) one access of a load/store/atomic may cover. */
int nvptx_access_width(const KernelPlan *p, const BirFunction *f, const BirOp *op);
/* The same, and in why what limits it (--emit=plan). */
int nvptx_access_limit(const KernelPlan *p, const BirFunction *f, const BirOp *op, char *why, size_t size);
/* "{regs 1x8, lanes 4x8, warps 8x1; 8 consecutive a thread}": over how many
 * elements along each dimension a layout's registers, lanes and warps
 * spread a block ("" for a scalar). */
void nvptx_layout_describe(const Layout *l, char *buf, size_t size);

/* Triton's blocked layout: vec elements a thread along dimension fast, then
 * lanes and warps along it first. */
Layout nvptx_layout_blocked(BlkType t, int num_warps, int vec, int fast);
/* The tensor cores' m16n8 accumulator layout of an [M, N] block, warps
 * tiling wm along M and wn along N. */
Layout nvptx_layout_mma(int32_t M, int32_t N, int num_warps, int wm);
/* The layout a dot's operand (0: a [M, K], 1: b [K, N]) needs for mma.sync
 * m16n8k16 with accumulator layout acc. */
Layout nvptx_layout_dot_operand(const Layout *acc, int which, int32_t K, int elem_bytes);
/* Why a dot [M, K] x [K, N] of dtype d cannot run as wgmma m64nNk16 on
 * num_warps warps (each warpgroup of 4 taking whole 64-row tiles, so the
 * accumulator is nvptx_layout_mma's with every warp along M); NULL: it can. */
const char *nvptx_wgmma_shape_refusal(int32_t M, int32_t N, int32_t K, DType d, int num_warps);
/* One dimension removed (its bases dropped; register bits left without a
 * basis go); a size-1 dimension inserted; the dimensions swapped. */
Layout nvptx_layout_slice(const Layout *l, int axis);
Layout nvptx_layout_expand(const Layout *l, int axis);
Layout nvptx_layout_trans(const Layout *l);
bool nvptx_layout_equal(const Layout *a, const Layout *b);
/* The coordinate along d of register r of thread (warp, lane), on the host. */
int32_t nvptx_layout_coord(const Layout *l, int d, int r, int warp, int lane);
/* Registers 0 .. vec-1 hold consecutive elements along dimension vec_dim
 * (the last where register 0 runs along none). */
int nvptx_layout_vec(const Layout *l);
int nvptx_layout_vec_dim(const Layout *l);
/* Register bits (a mask of r) whose basis is zero: those registers copy others. */
int32_t nvptx_layout_copy_regs(const Layout *l);
/* Can a thread find, for each register of `to`, the element of a value of
 * layout `from` at the projected coordinates among its own registers? Then
 * map[r] is that register (map may be NULL to just ask). */
bool nvptx_layout_local_map(const Layout *from, const Layout *to, Projection proj, int32_t *map);
/* Warps that hold different elements along d (1 << the count of warp bits
 * with a basis along d). */
int nvptx_layout_warps_along(const Layout *l, int d);
/* The partial results a thread keeps while reducing a value of layout l along
 * axis: one per register with its bits along the axis (and copy bits) cleared. */
int nvptx_layout_partials(const Layout *l, int axis);

/* ----------- the state: the module, a kernel's schedule, the code generator */
/* The LLVM types the generator uses (fp8 as i8; gptr: global memory, genptr: generic). */
typedef struct {
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, void_t, gptr, genptr;
} NvptxTypes;

/* The LLVM module being built, shared by its kernels. */
typedef struct {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMDIBuilderRef di;
    LLVMMetadataRef di_file;
    LLVMValueRef shared; /* dynamic shared memory, extern [0 x i8] addrspace(3); made on first use */
    NvptxTypes t;        /* in its context */
    const NvptxArch *arch;
    const NvptxOptions *opt;
    DiagEngine *de;
    uint64_t assume_used; /* bit k: opt->assume[k] named a parameter of a kernel compiled */
    int ptx_isa;          /* the PTX ISA the module declares, times ten: its arch's, or newer where a kernel's
                             code needs it (a u8 x i8 wgmma: 84); set while the kernels are planned */
} NvptxModule;

/* A loop body's argument whose block is kept in shared memory (carried.c):
 * loaded from the slots of the loop's result when the body first uses it. */
typedef struct {
    int value, result;
    LLVMValueRef *saved; /* a block made before the loop: its registers outside it */
} LazyCarried;

/* A warp-specialized loop's ring (pipeline.c), as its producer warp and
 * the consumers' side of the protocol see it (warpspec.c). */
enum { NVPTX_WS_SLOT_SYNC_BYTES = 64 };
/* Named barriers: 0 the consumers', 1 every warp's, then one a consumer warpgroup for ping-pong's turns. */
enum { NVPTX_WS_TURN_BARRIER = 2 };

typedef struct {
    int stages, nloads;
    int64_t slots_at, slot_bytes; /* slot s at slots_at + s * slot_bytes */
    int64_t sync_at;              /* per slot NVPTX_WS_SLOT_SYNC_BYTES: its mbarriers and record */
    int64_t tile_at[NVPTX_MAX_TENSOR_MAPS]; /* each load's tile within a slot */
    int map[NVPTX_MAX_TENSOR_MAPS];         /* its tensor map */
    int edge_map[NVPTX_MAX_TENSOR_MAPS];    /* the one its tiles at its columns' bound take, or -1 */
    int boxes[NVPTX_MAX_TENSOR_MAPS], box_inner[NVPTX_MAX_TENSOR_MAPS];
    int64_t box_bytes[NVPTX_MAX_TENSOR_MAPS];
    bool bounded[NVPTX_MAX_TENSOR_MAPS];    /* its maps have a bound: the record carries its row too */
    int64_t fill_bytes;           /* one iteration's tiles */
} NvptxWsRing;

/* How a pipelined `for` loop runs (pipeline.c decides, once the shared
 * memory is laid out). */
enum { NVPTX_MAX_PIPE_LOADS = 4, NVPTX_MAX_READ_AHEAD = 8 };

/* A TMA load's mask as its copies take it (see tma.c's top): the terms
 * whose bounds are the map's extents, and the rest. */
enum { NVPTX_TMA_MAX_TERMS = 8 };
typedef struct NvptxTmaMask {
    int coord[2];  /* per axis of the map (0 rows, 1 columns): the block whose element (0, 0) is the copy's
                      coordinate there, its extent a bound of the mask; or -1 */
    int shift[2];  /* a uniform integer the coordinate adds (the mask's bound was the extent minus it), or -1 */
    int shifted_bound[2]; /* then that difference as the kernel computes it (checked not to wrap), else -1 */
    int nrest;
    int rest[NVPTX_TMA_MAX_TERMS]; /* the other terms: a TMA copy needs each all true */
} NvptxTmaMask;

typedef struct NvptxLoopSchedule {
    const BirOp *loop;
    const BirOp *async_dot; /* a wgmma dot that leaves its group in flight across iterations, or NULL */
    const BirOp *deferred_dot; /* one whose group the next iteration's first dot waits for, or NULL */
    bool refill_late;       /* with it: the refill comes after that wait, with no stage more */
    bool deferred_on;       /* deferred_dot's group runs on past the refill (its test, before the stages) */
    int deferred_arg;       /* the body argument that dot's result becomes */
    bool dot_alone;         /* the loop's one dot only feeds itself (async_dot's test, before the stages) */
    bool promoted_alone;    /* that dot, but its fp8 sums promoted: it waits in every iteration to add them */
    int ahead;              /* iterations copies are issued ahead: stages - 1, or stages - 2 with a dot in
                               flight at the refill */
    int nloads;
    const BirOp *loads[NVPTX_MAX_PIPE_LOADS];
    int views[NVPTX_MAX_PIPE_LOADS];  /* a transpose of the load the dot reads instead, or -1 */
    int64_t tile_bytes[NVPTX_MAX_PIPE_LOADS];
    int stages;
    bool tma;               /* TMA copies and an mbarrier per slot (after the slots) */
    bool ws;                /* TMA copies issued by a producer warp (warpspec.c; its mbarriers and records after the slots) */
    int lead;               /* with ws: iteration i releases the slot of fill i + lead */
    bool ping_pong;         /* with ws, a deferred dot and two or more consumer warpgroups: they take turns to
                               issue the loop's wgmma dots (warpspec.c), one's other work beside the other's dots */
    const BirOp *overlap_after; /* with a deferred dot whose a is in registers (--overlap-dots): the
                                   body's first dot, right after whose group the deferred dot is issued in
                                   the next iteration (its a-words and accumulator carried instead of its
                                   result), so the first dot's wait leaves it running; or NULL */
    const BirOp *deferred_wait_at; /* with overlap_after: the first op after it that reads the deferred
                                      dot's result, before which that dot's group is waited for */
    int64_t slot_bytes;     /* one iteration's tiles */
    int64_t ring_bytes;     /* the slots, and the mbarriers */
    const char *carried_ok; /* per body argument: the copies' addresses need its next value, computed ahead */
    int nread_ahead;        /* loads the copies' addresses need, read for a later iteration (pipeline.c) */
    const BirOp *read_ahead[NVPTX_MAX_READ_AHEAD]; /* the first of them */
    /* why not faster (NULL: it is): */
    const char *why_not_tma;               /* the loop's reason, whatever its loads */
    const char *load_not_tma[NVPTX_MAX_PIPE_LOADS]; /* each load's own */
    const char *why_no_producer;           /* a TMA loop's copies issued by thread 0 */
} NvptxLoopSchedule;

/* Would a producer warpgroup pay (nvptx_ws_refusal)? A dot's group runs on past the refill, or
 * the lone dot waits in every iteration to promote its fp8 sums. */
static inline bool nvptx_loop_wants_producer(const NvptxLoopSchedule *ls) {
    return ls->dot_alone || ls->deferred_on || ls->promoted_alone;
}

/* A loop with a dot in its body that is not pipelined, and why (for the plan). */
typedef struct {
    const BirOp *loop;
    const char *why;
} NvptxLoopRefusal;

/* Where a dot reads an operand from. */
typedef enum {
    NVPTX_FROM_RING,     /* its loop's ring slot (a pipelined load) */
    NVPTX_FROM_RESIDENT, /* staged once before its loop, kept there (wgmma: the resident region) */
    NVPTX_FROM_HOISTED,  /* mma.sync fragments loaded once before its loop */
    NVPTX_FROM_REGS,     /* the thread's registers already hold it in the layout the instruction reads */
    NVPTX_FROM_STAGE,    /* staged by the dot in shared memory (ldmatrix, or a wgmma descriptor) */
    NVPTX_FROM_CONVERT,  /* through shared memory into the registers the instruction reads */
    NVPTX_FROM_SHARED,   /* read from shared memory element by element (tf32, fma) */
} NvptxOperandSource;

typedef enum { NVPTX_DOT_WGMMA, NVPTX_DOT_MMA, NVPTX_DOT_TF32, NVPTX_DOT_TF32X3, NVPTX_DOT_FMA } NvptxDotPath;

/* How one dot runs (dot.c decides). */
typedef struct {
    const BirOp *op;
    NvptxDotPath path;
    const char *not_wgmma;      /* f16 and bf16 dots not on wgmma: why (NULL on an arch without it) */
    NvptxOperandSource from[2]; /* a's and b's */
    const NvptxLoopSchedule *loop; /* the pipelined loop it is in, or NULL */
    bool before_loop[2];        /* a, b staged before the loop whose body the dot is in runs (mma.sync:
                                   fragments loaded; wgmma: the resident copy, where no dot did it already) */
    bool ends_deferred;         /* the first dot of a loop with a deferred dot: its wait ends that one's too */
    bool in_flight;             /* wgmma: its group left running across iterations (the loop's async_dot) */
    bool deferred;              /* wgmma: its group waited for by the next iteration's first dot (or, with
                                   the loop's ahead_dot, before the first op reading its result) */
    bool then_deferred;         /* wgmma: the loop's overlap_after: the iteration before's deferred dot is
                                   issued right after its group, which it waits for with that one running */
    int held_regs;              /* wgmma: registers its accumulators and a-fragments hold (and a deferred
                                   dot's still in flight) */
    int promote_every;          /* fp8: k terms one sum covers, from zero, before it is added to the
                                   accumulator in f32 (dot_promote_every, at most K); 0: none */
    bool promote_in_turn;       /* wgmma, more than one sum: two sets take turns, one added while the
                                   next one's group runs (else each is waited for before the next) */
    bool takes_turns;           /* wgmma in a ping_pong loop: its warpgroup waits for its turn to issue it,
                                   then passes the turn to the next warpgroup */
    int k_used;                 /* wgmma, mma.sync of floats: the k its instructions cover (K, or less
                                   where both operands are +0 from there on: extent.c) */
    int n_used;                 /* wgmma: the result's columns they make (N, or less where no use observes
                                   the rest) */
} NvptxDotSchedule;

/* A block a for loop keeps in shared memory instead of registers (carried.c). */
typedef struct {
    int value;
    const BirOp *loop;
    int64_t at, bytes;   /* its slots: at bytes from the blocks' base */
    bool carried;        /* a loop-carried block (else one made before the loop and read in it) */
    int64_t demand, without, cap; /* the loop's register estimate a thread with it and without it, of cap */
} NvptxKeptBlock;

/* Every decision the backend makes about one kernel, made before its LLVM
 * function exists (nvptx_schedule) and only read while it is emitted: the
 * layouts, the shared-memory map, which loads TMA copies, the producer
 * warpgroup, the blocks kept in shared memory, the resource bounds. */
/* An atomic's schedule (schedule.c): whether it is a red (nothing reads its
 * old value and its sem is relaxed or release: no result to wait for), and
 * for a block whose pointers step by constants, each register's byte offset
 * from register 0's address (memory.c then computes one address a thread and
 * writes the offsets into the instructions; NULL: an address each). */
typedef struct {
    const BirOp *op;
    bool red;
    const int64_t *offsets;
    struct NvptxBulkReduce *bulk; /* added by a bulk reduction (bulk.c), or NULL */
    const char *not_bulk;  /* a block red on sm_90 or newer that is not: why */
} NvptxAtomicSchedule;

/* A block atomic_add added by a bulk reduction (bulk.c): the block, one
 * contiguous range of memory, staged in shared memory as it lies there (two
 * stagings taking turns), and added to memory by one cp.reduce.async.bulk. */
typedef struct NvptxBulkReduce {
    int cd;             /* the dimension its pointers run along */
    int64_t bytes;      /* the block's: one staging, and the reduction's size */
    int64_t at;         /* the first staging; the second follows it */
} NvptxBulkReduce;

typedef struct NvptxSchedule {
    const KernelPlan *plan;  /* layouts and axis facts per value (layout.c) */
    const int64_t *facts;    /* launch facts per runtime parameter (facts.c), or NULL */
    bool split_3d;           /* the kernel's 3-D blocks are built as their 2-D parts (split3d.c) */
    /* shared memory, in bytes from the start of the dynamic shared memory */
    int64_t smem_size;       /* all of it: the launch's dynamic shared memory */
    int64_t region_bytes;    /* [0, region_bytes): the region ops share, each starting with a barrier */
    const BirOp *region_op;  /* the op that needs the most of it */
    int64_t ring_at;         /* where pipelined loops' rings start (after the region ops share); -1 while planning */
    char *in_ring;           /* per value: staged by a pipelined loop's ring (nvptx_pipeline_marks) */
    char *address_only;      /* per value: only the ring's addresses use it (nvptx_pipeline_marks) */
    int64_t *resident_off;   /* per value: a loop-invariant wgmma operand's place in the resident region, or -1 */
    int64_t resident_at, resident_bytes; /* that region: above the rings, kept through the loops (dot.c) */
    int64_t *carried_at;     /* per value: kept in shared memory through a for loop (a result of it, or
                                made before it), its offset from carried_base (carried.c); else -1 */
    const BirOp **kept_in;   /* per value: that loop */
    int64_t carried_base, carried_bytes;
    NvptxKeptBlock *kept;    /* those blocks, in the order chosen */
    int nkept;
    /* TMA and the producer warpgroup */
    struct TmaMemo *tma_memo; /* tma.c's analysis of pointers */
    int *tma_of;             /* per value: 1 + the tensor map of a load TMA copies, or 0 */
    int *tma_edge_of;        /* per value: 1 + the map its tiles at its columns' bound take, or 0 (tma.c) */
    NvptxTmaMask tma_mask[NVPTX_MAX_TENSOR_MAPS]; /* per map a load's copies take (tma_of): its mask's terms */
    NvptxTensorMaps tma;     /* parameters after the kernel's own, then their validity bits */
    const BirOp *ws_loop;    /* the loop whose copies a producer warp issues (warpspec.c), or NULL */
    NvptxWsRing ws_ring;     /* its ring */
    /* block loads and stores (with --remarks or --emit=plan): each one's remark, or NULL */
    int naccesses;
    const BirOp **accesses;
    const char **access_advice;
    /* every atomic: one red instruction an element, or atom; a block's
     * addresses at constant offsets from one a thread, or each its own */
    int natomics, nbulk;     /* nbulk: those added by bulk reductions */
    NvptxAtomicSchedule *atomics;
    /* loops and dots */
    int nloops, ndots;
    NvptxLoopSchedule *loops; /* the pipelined ones, in program order */
    int nrefusals;
    NvptxLoopRefusal *refusals; /* loops with a dot not pipelined (made for the plan only) */
    NvptxDotSchedule *dots;   /* in program order */
    /* resources */
    int launch_warps;        /* the program's warps and a producer warpgroup */
    int wgmma_min_regs;      /* the kernel's register floor (NvptxKernel.min_regs): wgmma.c */
    const char *notes;       /* how each dot was lowered and which loop blocks went to shared memory, for --stats */
} NvptxSchedule;

/* The schedule of an atomic op. */
static inline const NvptxAtomicSchedule *nvptx_atomic_schedule(const NvptxSchedule *s, const BirOp *op) {
    for (int i = 0; i < s->natomics; i++)
        if (s->atomics[i].op == op) return &s->atomics[i];
    return NULL;
}

/* The schedule of a pipelined loop (NULL: it does not pipeline), of a dot. */
static inline const NvptxLoopSchedule *nvptx_loop_schedule(const NvptxSchedule *s, const BirOp *loop) {
    for (int i = 0; i < s->nloops; i++)
        if (s->loops[i].loop == loop) return &s->loops[i];
    return NULL;
}

static inline const NvptxDotSchedule *nvptx_dot_schedule(const NvptxSchedule *s, const BirOp *op) {
    for (int i = 0; i < s->ndots; i++)
        if (s->dots[i].op == op) return &s->dots[i];
    return NULL;
}

/* The code generator's state for one kernel. Every block value lives in
 * registers: the thread holds the elements its layout gives it, one LLVM
 * value each; a scalar is one LLVM value, the same in every thread. */
typedef struct Gen {
    NvptxModule *m;      /* its context, module, arch and options */
    LLVMBuilderRef b;
    LLVMMetadataRef di_sub;
    const BirFunction *f;
    NvptxSchedule *s;    /* what to emit (written only by nvptx_schedule and the planning it calls) */
    Arena arena;
    LLVMValueRef fn;
    LLVMValueRef **regs; /* per value: its registers */
    LLVMValueRef tid, lane, warp;
    bool terminated;     /* the current LLVM block ended in `ret` (or a return's branch: persistent.c) */
    struct Staged **staged; /* per value: a pipelined load's ring slot (pipeline.c), or NULL */
    struct HoistedFrags **hoisted; /* per value: a loop-invariant dot operand's fragments (dot.c) */
    struct {
        LazyCarried *item; /* the blocks kept in shared memory (carried.c) not loaded yet, */
        int n;             /* loaded where a loop body first uses them */
    } lazy;
    struct NvptxPipeline *deferred_due; /* while a loop's deferred dot is still to be waited for in this
                                           iteration (by its first dot): the loop's pipeline (pipeline.c) */
    LLVMValueRef ws_fills; /* the producer ring's fills released so far (i32): the next one's number */
    LLVMValueRef ahead_live; /* while a pipelined loop computes a later iteration's addresses (pipeline.c):
                                whether that iteration runs (i1); the loads read there are predicated on it */
    struct {
        LLVMValueRef divisor, inverse;
    } tma_rows[NVPTX_MAX_TENSOR_MAPS]; /* maps whose columns alone are bounded: their stride as a 32-bit
                                          divisor (1 where it is not one) and (2^32 - 1) / it, made at the
                                          entry (async.c) */
    struct BodyFrame *frame; /* the code around the body (persistent.c), or NULL: a return is `ret` */
} Gen;

/* ------------------------------------------------------------------ nvptx.c */
/* nvptx.c: builds one kernel's function into m; fills info. False after reporting an error. */
bool nvptx_gen_kernel(NvptxModule *m, const BirFunction *f, NvptxKernel *info);

/* --------------------------------------------------------------- schedule.c */
/* Makes g->s, g's schedule, from g->f and the facts g->s holds (every
 * field above). False after reporting an error: shared memory or code
 * over the arch's limits. */
bool nvptx_schedule(struct Gen *g);

/* --------------------------------------------------------- schedule_print.c */
/* schedule_print.c: the schedule as --emit=plan prints it (malloc'ed; NULL:
 * out of memory); its notes, --stats' lines (NvptxSchedule.notes; in the
 * arena, NULL: out of memory). */
char *nvptx_schedule_text(struct Gen *g);
const char *nvptx_schedule_notes(struct Gen *g);

/* ------------------------------------------------------------------- util.c */
/* Reports an error at an op (the kernel's name when op is NULL). Returns false. */
bool nvptx_error(NvptxModule *m, const BirFunction *f, const BirOp *op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Does op end its block's code (a return, an if whose branches both return)?
 * What follows it is not emitted. */
bool nvptx_op_ends_block(const BirOp *op);
/* The ops of b with this code (BIR_OPCODE_COUNT: every op), its regions' included. */
int nvptx_ops_in(const BirBlock *b, BirOpcode code);
/* The k-steps (of k_step terms; ksteps in the dot) one of ds's promoted runs
 * takes: 0 where it is not promoted; -1, reported as an internal error,
 * where runs do not tile K (the plan's are powers of two up to K). */
int nvptx_dot_run_steps(Gen *g, const NvptxDotSchedule *ds, int k_step, int ksteps);
/* Is value v zero everywhere: a zero constant, or a splat of one (-0.0 too)? */
bool nvptx_zero_value(Gen *g, int v);
/* The scalar a splat, broadcast or expand_dims of v spreads (through any
 * number of them), or v. */
int nvptx_spread_scalar(Gen *g, int v);
/* Is mask term t (rank 2) `X < B` or `B > X` with X an arange made a block by
 * expand_dims and broadcasts? Then *axis is the dimension expand_dims put it
 * along (a broadcast may still spread a one-element arange over it), *range
 * the arange and *bound B (tma.c's TMA bounds, extent.c's dot extents). */
bool nvptx_arange_term(Gen *g, int t, int *axis, const BirOp **range, int *bound);
/* Is v, through splats, broadcasts and expand_dims, the constant zero, +0.0
 * for floats (what TMA's out-of-bounds fill and masked copies write)? */
bool nvptx_plus_zero(Gen *g, int v);
/* Does an op of b (or of its regions) read value v? */
bool nvptx_value_used(const BirBlock *b, int v);
/* nvptx_error at op of g's kernel. */
bool nvptx_gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A value's LLVM type: integers by width (fp8 as its i8 code), floats by width */
static inline LLVMTypeRef ty(Gen *g, DType d) {
    if (d == DT_PTR || !dtype_is_numeric_elem(d)) return g->m->t.gptr;
    switch (dtype_bits(d)) {
    case 1: return g->m->t.i1;
    case 8: return g->m->t.i8;
    case 16: return d == DT_F16 ? g->m->t.f16 : d == DT_BF16 ? g->m->t.bf16 : g->m->t.i16;
    case 32: return d == DT_F32 ? g->m->t.f32 : g->m->t.i32;
    default: return d == DT_F64 ? g->m->t.f64 : g->m->t.i64;
    }
}
static inline LLVMValueRef ci32(Gen *g, int64_t v) { return LLVMConstInt(g->m->t.i32, (unsigned long long)v, 1); }
static inline LLVMValueRef ci64(Gen *g, int64_t v) { return LLVMConstInt(g->m->t.i64, (unsigned long long)v, 1); }
static inline BlkType vtype(Gen *g, int v) { return g->f->values[v].type; }
static inline int nregs(Gen *g, int v) {
    const Layout *l = &g->s->plan->layouts[v];
    return l->rank ? l->nregs : 1;
}
static inline LLVMValueRef fp_contract(Gen *g, LLVMValueRef inst) {
    if (!g->m->opt->no_fma && LLVMIsAInstruction(inst)) LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
    return inst;
}
static inline LLVMValueRef is_thread0(Gen *g) { return LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 0), ""); }
/* Values are kept in memory in a type of whole bytes (i1 as i8). */
static inline LLVMValueRef to_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildZExt(g->b, v, g->m->t.i8, "") : v;
}
static inline LLVMTypeRef mem_ty(Gen *g, DType d) { return d == DT_I1 ? g->m->t.i8 : ty(g, d); }
static inline LLVMValueRef from_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->m->t.i8, 0, 0), "") : v;
}
static inline LLVMValueRef addr_i64(Gen *g, LLVMValueRef p) { return LLVMBuildPtrToInt(g->b, p, g->m->t.i64, ""); }
static inline int64_t nvptx_round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }
/* wgmma reads swizzled tiles from 1024-byte boundaries: the 128-byte swizzle's period */
enum { NVPTX_SWIZZLE_PERIOD = 1024 };
/* fence.proxy.async: this thread's shared-memory writes (st.shared, cp.async),
 * made through the generic proxy, visible to wgmma's async proxy */
void nvptx_proxy_fence(Gen *g);
LLVMValueRef *nvptx_new_regs(Gen *g, int v);
/* An intrinsic or external function by name, declared on first use. */
LLVMValueRef nvptx_call(Gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n);
LLVMValueRef nvptx_call0(Gen *g, const char *name, LLVMTypeRef ret);
LLVMValueRef nvptx_asm_call(Gen *g, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args,
                            int n, bool side_effects);
/* A barrier of the program's threads (the consumer warps' with a producer warp). */
void nvptx_barrier(Gen *g);
/* The same barrier, voting: whether vote (i1) is true in every one of those threads. */
LLVMValueRef nvptx_barrier_and(Gen *g, LLVMValueRef vote);
void nvptx_asm_void(Gen *g, const char *text); /* inline PTX with no operands, kept in place */
/* v from the lane whose id is this one's xor mask (shfl.sync.bfly), any dtype but pointers. */
LLVMValueRef nvptx_shuffle_xor(Gen *g, LLVMValueRef v, int mask, DType d);
/* Code under cond: returns the merge block; the caller emits the then-part and calls nvptx_end_if. */
LLVMBasicBlockRef nvptx_begin_if(Gen *g, LLVMValueRef cond);
void nvptx_end_if(Gen *g, LLVMBasicBlockRef merge);
/* A pointer into the kernel's shared memory: offset + index * elem_size bytes. */
LLVMValueRef nvptx_smem_ptr(Gen *g, int64_t offset, LLVMValueRef index, int elem_size);
/* The kernel's shared memory at byte offset byte_off (i32): a pointer, and
 * the 32-bit shared-window address inline PTX takes. */
LLVMValueRef nvptx_smem_at(Gen *g, LLVMValueRef byte_off);
LLVMValueRef nvptx_smem_addr(Gen *g, LLVMValueRef byte_off);
/* The type an add of d names in PTX's atom, red and cp.reduce.async.bulk. */
const char *nvptx_add_type(DType d);
/* w consecutive elements of dtype d at ptr, aligned to their w * size bytes, as one access. */
void nvptx_vector_load(Gen *g, LLVMValueRef ptr, int w, DType d, LLVMValueRef *out);
void nvptx_vector_store(Gen *g, LLVMValueRef ptr, const LLVMValueRef *vals, int w, DType d);
/* This thread's first coordinate along d, the coordinate of register r,
 * and whether the thread holds the first copy of its elements. */
LLVMValueRef nvptx_thread_base(Gen *g, const Layout *l, int d);
LLVMValueRef nvptx_coord(Gen *g, const Layout *l, int d, int r);
LLVMValueRef nvptx_owner(Gen *g, const Layout *l);
/* This thread's warpgroup (four warps) among the program's. */
LLVMValueRef nvptx_warpgroup(Gen *g);
/* The warps' part of a layout's coordinate along d (the lanes' left out). */
LLVMValueRef nvptx_warp_base(Gen *g, const Layout *l, int d);
/* How a for loop's variable compares with its bound while it runs (above
 * it for a negative step). */
LLVMIntPredicate nvptx_loop_continues(Gen *g, const BirOp *loop);

/* ------------------------------------------------------------------ facts.c */
/* The facts f is compiled under, one per runtime parameter (NULL: none):
 * the runtime's param_div and --assume's by name. False after reporting an
 * assumption that cannot hold of its parameter. */
bool nvptx_kernel_facts(NvptxModule *m, const BirFunction *f, Arena *a, const int64_t **facts);
/* False after reporting an --assume that named no parameter of a kernel compiled. */
bool nvptx_check_assume_used(NvptxModule *m);
/* The block loads and stores of g's kernel in source order (*ops), and per
 * access (*advice) for one narrower than it could be, what limits it and the
 * facts that would widen it (--remarks' text), else NULL; how many. */
int nvptx_access_advice(Gen *g, const int64_t *given, const BirOp ***ops, const char ***advice);

/* ------------------------------------------------------------ elementwise.c */
/* One element of an elementwise op, from its operands' elements. */
LLVMValueRef nvptx_elementwise(Gen *g, const BirOp *op, LLVMValueRef *x);
/* All the elements of an elementwise op, into out: x[i] holds operand i in
 * the result's layout (NULL: a scalar, in its one register). */
void nvptx_elementwise_regs(Gen *g, const BirOp *op, LLVMValueRef **x, LLVMValueRef *out);
LLVMValueRef nvptx_convert_dtype(Gen *g, LLVMValueRef x, DType from, DType to);
LLVMValueRef nvptx_minmax(Gen *g, bool is_max, LLVMValueRef a, LLVMValueRef b, DType d);

/* ------------------------------------------------------------------ masks.c */
/* masks.c: a select whose mask has a uniform "holds everywhere" test,
 * branching on it; false (nothing emitted) when the mask has none. */
bool nvptx_gen_tested_select(Gen *g, const BirOp *op, int64_t slot);

/* ------------------------------------------------------------------- math.c */
/* The math functions (math.c), one per MATH_OP row of ops.def. */
#define BIR_OP(...)
#define MATH_OP(ID, fn) LLVMValueRef gen_math_##fn(Gen *g, LLVMValueRef x);
#include "ops.def"
LLVMValueRef nvptx_pow(Gen *g, LLVMValueRef x, LLVMValueRef y); /* math.c: numeric.c's blk_pow_f32 */

/* ---------------------------------------------------------------- convert.c */
/* v's elements in layout `to` (for register r of `to`, v's element at the
 * projected coordinates): from the thread's registers, recomputed, or
 * through shared memory at smem_at. */
LLVMValueRef *nvptx_convert(Gen *g, int v, const Layout *to, Projection p, int64_t smem_at);
int64_t nvptx_convert_smem_bytes(Gen *g, int v, const Layout *to, Projection p);
/* An operand (same shape, or a scalar) in the layout the op computes in. */
LLVMValueRef *nvptx_operand(Gen *g, int v, const Layout *to, int64_t smem_at);
int64_t nvptx_operand_smem_bytes(Gen *g, int v, const Layout *to);
/* How a shape op's operand's coordinates come from its result's. */
Projection nvptx_shape_projection(Gen *g, const BirOp *op);
/* A block in shared memory at smem_at, row-major: barrier, every element
 * written once, barrier; its size; one element of dtype d written or read
 * at an index (i1 as a byte, pointers as 8 bytes). */
void nvptx_smem_write_value(Gen *g, int v, int64_t smem_at);
int64_t nvptx_smem_value_bytes(Gen *g, int v);
void nvptx_smem_write(Gen *g, DType d, int64_t smem_at, LLVMValueRef index, LLVMValueRef v);
LLVMValueRef nvptx_smem_read(Gen *g, DType d, int64_t smem_at, LLVMValueRef index);
LLVMValueRef nvptx_row_major(Gen *g, BlkType t, LLVMValueRef *c); /* the row-major index of coordinates c */

/* ----------------------------------------------------------------- shapes.c */
bool nvptx_gen_reshape(Gen *g, const BirOp *op, int64_t smem_at);
int64_t nvptx_reshape_smem_bytes(Gen *g, const BirOp *op);
bool nvptx_gen_rearrange(Gen *g, const BirOp *op, int64_t smem_at); /* flip, reshape, take, partner */
/* Per register of l, the element at index xor j along axis, from the
 * thread's own registers or a lane shuffle; NULL when it is in another
 * warp (then it goes through shared memory). */
LLVMValueRef *nvptx_partner_local(Gen *g, const Layout *l, int axis, int32_t j, LLVMValueRef *vals, DType d);
/* The bit of layout l whose basis moves exactly j along axis, a register
 * bit (*reg) or a lane bit; -1 when none does (the partner is in another
 * warp, or a basis mixes dimensions). */
int nvptx_partner_bit(const Layout *l, int axis, int32_t j, bool *reg);
int64_t nvptx_rearrange_smem_bytes(Gen *g, const BirOp *op);
/* gather: the source staged in shared memory, each result element read at its index */
bool nvptx_gen_gather(Gen *g, const BirOp *op, int64_t smem_at);
int64_t nvptx_gather_smem_bytes(Gen *g, const BirOp *op);

/* ----------------------------------------------------------------- memory.c */
bool nvptx_gen_memory(Gen *g, const BirOp *op, int64_t slot);

/* ------------------------------------------------------------------- bulk.c */
/* Why block atomic op (red: nothing reads its old value and its sem allows a
 * red) cannot be added by a bulk reduction (NULL: it can, and *out says how,
 * but for its place in shared memory). */
const char *nvptx_bulk_refusal(Gen *g, const BirOp *op, bool red, NvptxBulkReduce *out);
/* Block atomic op by a bulk reduction, vals and mask (or NULL) in layout l,
 * the op's, and first its pointer register 0: where every element's mask
 * is true. Leaves the builder in the other way, where the caller adds the
 * elements by reds (their values from nvptx_bulk_staged), then calls
 * nvptx_bulk_reduce_end. */
typedef struct {
    LLVMValueRef base;       /* this run's staging (i32 offset) */
    LLVMBasicBlockRef done;  /* where both ways meet */
} NvptxBulkRun;
NvptxBulkRun nvptx_bulk_reduce_begin(Gen *g, const BirOp *op, const Layout *l, LLVMValueRef first,
                                     LLVMValueRef *vals, LLVMValueRef *mask);
LLVMValueRef *nvptx_bulk_staged(Gen *g, const BirOp *op, const Layout *l, const NvptxBulkRun *run);
void nvptx_bulk_reduce_end(Gen *g, const NvptxBulkRun *run);
/* Before the program ends: its bulk reductions have read their staging. */
void nvptx_bulk_drain(Gen *g);

/* ----------------------------------------------------------------- reduce.c */
int64_t nvptx_reduce_smem_bytes(Gen *g, const BirOp *op);
bool nvptx_gen_reduce(Gen *g, const BirOp *op, int64_t slot);
/* histogram: bins in shared memory, counted by shared atomics */
bool nvptx_gen_histogram(Gen *g, const BirOp *op, int64_t slot);
int64_t nvptx_histogram_smem_bytes(Gen *g, const BirOp *op);

/* ------------------------------------------------------------------- scan.c */
/* scan.c: cumsum, cumprod, scan (nvptx_gen_scan) and reduce (tree_reduce) */
int64_t nvptx_scan_smem_bytes(Gen *g, const BirOp *op);
bool nvptx_gen_scan(Gen *g, const BirOp *op, int64_t slot);
bool nvptx_gen_tree_reduce(Gen *g, const BirOp *op, int64_t slot);
int64_t nvptx_tree_reduce_smem_bytes(Gen *g, const BirOp *op);

/* ------------------------------------------------------------------ print.c */
bool nvptx_gen_print(Gen *g, const BirOp *op);
bool nvptx_gen_check(Gen *g, const BirOp *op);
/* inline_asm_elementwise: the user's PTX once per element (asm.c) */
bool nvptx_gen_inline_asm(Gen *g, const BirOp *op, int64_t slot);

/* ---------------------------------------------------------------- staging.c */
/* Before and after a loop: fragments of its dots' loop-invariant operands. */
void nvptx_dot_hoist(Gen *g, const BirBlock *body);
void nvptx_dot_unhoist(Gen *g, const BirBlock *body);
/* Operand `which` of a wgmma dot as staged once before its loop into the
 * resident region (*out; false: it is not there). */
bool nvptx_dot_resident(Gen *g, const BirOp *op, int which, struct Staged *out);
/* The value whose resident copy a wgmma operand v reads: v, or x where v is
 * trans(x) (or trans of trans...), read along the other dimension (*flipped). */
int nvptx_resident_root(Gen *g, int v, bool *flipped);
/* The layout mma.sync reads operand `which` of dot op in (wgmma's a in registers too). */
Layout nvptx_dot_operand_layout(Gen *g, const BirOp *op, int which);
/* Is operand `which` in its thread's registers in that layout already? */
bool nvptx_dot_in_registers(Gen *g, const BirOp *op, int which);
/* The first of the two registers of that layout (for a: 2^kbits k-steps)
 * that a-fragment word p (a0..a3: (row, k), (row + 8, k), (row, k + 8),
 * (row + 8, k + 8)) of k-step k of 16-row tile `tile` packs. */
int nvptx_dot_a_reg(int p, int k, int tile, int kbits);
/* Two f16 or bf16 elements as one 32-bit operand register (<2 x half> for f16, i32 for bf16). */
LLVMValueRef nvptx_dot_pack(Gen *g, LLVMValueRef lo, LLVMValueRef hi, DType d);
/* A dot operand staged in shared memory for ldmatrix (dot.c). */
typedef struct Staged {
    LLVMValueRef base;  /* the block's byte offset in the shared region (i32) */
    int cd;             /* the dimension rows are stored along (contiguous) */
    int32_t rows;       /* rows (the other dimension's size) */
    int32_t slab;       /* elements of a row per slab: the row's length, at most 128 bytes of it */
    int es;             /* bytes an element: 2, or 1 (8-bit dots) */
    int per_phase, max_phase;
} Staged;
/* An operand's fragments, as mma wants them: 32-bit registers, two elements
 * each. frag(which, tile, kstep, i): A's a0..a3 of 16 x 16 tile (mi, ki);
 * B's b0, b1 of 16 x 8 tile (ni, ki). */
typedef struct Frags {
    LLVMValueRef *regs; /* in the operand layout (from registers or a conversion) */
    LLVMValueRef **frag; /* [tile * ksteps + ki][i], from ldmatrix */
    bool frag_done;      /* all k-steps loaded already (before a loop) */
} Frags;
/* Operand `which` of dot op as fragments loaded before its loop (the
 * schedule's before_loop), or NULL. */
const Frags *nvptx_dot_hoisted(Gen *g, const BirOp *op, int which);
/* Loads k-steps k0 .. k1-1 of a staged operand's fragments (ldmatrix.x4)
 * into f: ntiles tiles along M (a) or N (b) of operand layout lo. */
void nvptx_load_frags(Gen *g, const Staged *st, const Layout *lo, int which, int ntiles, int ksteps, int k0, int k1,
                      Frags *f);
/* Register bits of a layout along dimension d from basis `from` up: the
 * repetitions of a tile of that size. */
int nvptx_rep_bits(const Layout *l, int d, int32_t from);
/* The dimension a value's registers run along in eights (16-byte chunks), or -1. */
int nvptx_contiguous_dim(Gen *g, int v);
/* The dimension a value's registers run along in pairs at least (what
 * nvptx_stage_store can write), or -1. */
int nvptx_stageable_dim(Gen *g, int v);
Staged nvptx_staging(Gen *g, int v, LLVMValueRef base);
/* Byte offset of element (row, col) of a staged block; row along the other
 * dimension, col along cd. */
LLVMValueRef nvptx_staged_offset(Gen *g, const Staged *st, LLVMValueRef row, LLVMValueRef col);
/* The same for register r of a value of layout l (rows across st's contiguous dimension). */
LLVMValueRef nvptx_staged_offset_of(Gen *g, const Staged *st, const Layout *l, int r);
/* Every thread stores its registers of v (a run of 2 to 8 elements at a time) where st says. */
void nvptx_stage_store(Gen *g, int v, const Staged *st);

/* -------------------------------------------------------------------- dot.c */
int64_t nvptx_dot_smem_bytes(Gen *g, const BirOp *op);
/* Code a caller has run right after a dot's group is committed, before its
 * wait (a wgmma dot's): the deferred dot issued late (pipeline.c). */
typedef void (*NvptxAfterCommit)(Gen *g);
bool nvptx_gen_dot(Gen *g, const BirOp *op, int64_t smem_at, NvptxAfterCommit after_commit);
/* The shared memory dot op needs in the loop whose body is `body`: without
 * the loop-invariant operands nvptx_dot_hoist stages once before it. */
int64_t nvptx_dot_smem_bytes_in_loop(Gen *g, const BirOp *op, const BirBlock *body);
/* Places each loop-invariant wgmma operand in the resident region
 * (resident_off, per value; -1 for the others) and returns the region's size. */
int64_t nvptx_dot_plan_resident(Gen *g, int64_t *resident_off);
/* Are dot op's fp8 sums promoted (summed apart, then added in f32 after a wait)? */
bool nvptx_dot_promoted(Gen *g, const BirOp *op);
/* Once the loops are scheduled: every dot's schedule, in program order (*dots); how many. */
int nvptx_dot_schedule_all(Gen *g, NvptxDotSchedule **dots);

/* ------------------------------------------------------------------ extent.c */
/* Sets each dot's k_used and n_used: the k-steps whose operands are not all
 * +0 (wgmma, and mma.sync of floats), the result's columns some use
 * observes (wgmma); K and N elsewhere. */
void nvptx_dot_extents(Gen *g, NvptxDotSchedule *dots, int n);

/* ------------------------------------------------------------------ wgmma.c */
/* wgmma.c: why dot op cannot use wgmma (NULL: it can), its shared memory,
 * and its code. */
const char *nvptx_wgmma_refusal(Gen *g, const BirOp *op);
/* The PTX ISA (times ten) a dot on wgmma needs: 84 for u8 x i8 (mixed signs), else 0. */
int nvptx_wgmma_isa(Gen *g, const BirOp *op);
int64_t nvptx_wgmma_smem_bytes(Gen *g, const BirOp *op, const bool elsewhere[2]);
/* Does dot op's wgmma read a from the thread's registers (its register form)? */
bool nvptx_wgmma_a_in_registers(Gen *g, const BirOp *op);
/* Can wgmma read value v staged (rows of at least 16 elements), and the
 * bytes that takes (kept 1024-aligned, the 128-byte swizzle's period). */
bool nvptx_wgmma_readable(Gen *g, int v);
int64_t nvptx_wgmma_staged_bytes(Gen *g, int v);
bool nvptx_gen_wgmma(Gen *g, const BirOp *op, int64_t smem_at, NvptxAfterCommit after_commit);
/* A deferred dot issued late (pipeline.c): */
int nvptx_wgmma_a_words(Gen *g, const BirOp *op); /* the 32-bit words its a takes from registers */
/* at its line: its a-words (into words) and its accumulator (returned), made as for its issue */
LLVMValueRef *nvptx_wgmma_hold(Gen *g, const BirOp *op, int64_t smem_at, LLVMValueRef *words);
/* in the next iteration or on the way out: its fence and wgmmas from those words and b staged as
 * given (each predicated on `issue`, an i1, unless NULL) into the accumulators acc (in flight after);
 * the caller commits the group */
void nvptx_wgmma_issue_late(Gen *g, const BirOp *op, LLVMValueRef *words, const Staged *b, LLVMValueRef *acc,
                            LLVMValueRef issue);
/* The registers a thread needs at least for the kernel's wgmma dots (0: none). */
int nvptx_wgmma_register_floor(const NvptxSchedule *s);
/* wgmma.wait_group pending, the n accumulator registers at acc tied through
 * it (replaced by its outputs). */
void nvptx_wgmma_wait(Gen *g, LLVMValueRef *acc, int n, int pending);

/* --------------------------------------------------------------- pipeline.c */
typedef struct NvptxPipeline NvptxPipeline;
/* The shared memory the kernel's pipelined loops' rings take (at ring_at). */
int64_t nvptx_pipeline_ring_bytes(Gen *g);
/* A loop whose loads were taken as pipelined while shared memory was laid
 * out but that has no room for 2 stages at ring_at, or NULL. */
const BirOp *nvptx_pipeline_lost(Gen *g);
bool nvptx_pipeline_loop(Gen *g, const BirOp *loop); /* does this for loop pipeline? */
/* Once shared memory is laid out: every pipelined loop's schedule, in program order (*loops); how many. */
int nvptx_pipeline_schedule(Gen *g, NvptxLoopSchedule **loops);
/* Loops whose bodies hold a dot but that are not pipelined, each with why; how many. */
int nvptx_pipeline_refusals(Gen *g, NvptxLoopRefusal **out);
/* Per value, for the pipelined loops: in_ring 1 for the loads (and their
 * transposes) they will stage in their rings, which dots then need no shared
 * memory of their own for; address_only 1 for the values of their bodies that
 * only those loads' pointers and masks use (the body does not compute them:
 * the copies' addresses are computed ahead). */
void nvptx_pipeline_marks(Gen *g, char **in_ring, char **address_only);
/* For a `for` loop that pipelines (else NULL): the prologue, in the block
 * before the loop, given the carried values' initial registers. */
NvptxPipeline *nvptx_pipeline_begin(Gen *g, const BirOp *loop, LLVMValueRef **init, LLVMValueRef lb,
                                    LLVMValueRef ub, LLVMValueRef step);
void nvptx_pipeline_header(Gen *g, NvptxPipeline *p, LLVMBasicBlockRef pre); /* in the loop header */
/* Among the phis of the loop's exit block, whose predecessors on the
 * header's and the latch's exit edges (NULL: none) are given: with a
 * producer, the fills released so far (g->ws_fills). */
void nvptx_pipeline_exited(Gen *g, NvptxPipeline *p, LLVMBasicBlockRef from_header, LLVMBasicBlockRef from_latch);
/* At the top of the body: refill a slot, wait for this iteration's. */
void nvptx_pipeline_iteration(Gen *g, const BirOp *loop, NvptxPipeline *p, LLVMValueRef **carried, LLVMValueRef iv);
void nvptx_pipeline_latch(Gen *g, const BirOp *loop, NvptxPipeline *p); /* before the back edge */
/* A loop with a deferred dot (g->deferred_due), once its first dot has
 * waited for that one too: the late refill, if it has one. */
void nvptx_pipeline_deferred_waited(Gen *g);
/* A loop whose deferred dot is issued late (its overlap_after, g->deferred_due's loop): */
void nvptx_pipeline_issue_deferred(Gen *g); /* right after the first dot's group: the iteration before's */
void nvptx_pipeline_hold_deferred(Gen *g, const BirOp *op); /* at that dot: its a-words and accumulator kept */
void nvptx_pipeline_before(Gen *g, const BirOp *op); /* before each op of the body: the deferred dot's wait */
/* The block an exit edge of the loop goes to: exit, or one on the way
 * that waits for a dot left in flight; vals (the carried values leaving by
 * that edge, per loop result; a copy the caller may change) then get the
 * accumulator as the wait leaves it. */
LLVMBasicBlockRef nvptx_pipeline_exit(Gen *g, NvptxPipeline *p, const BirOp *loop, LLVMBasicBlockRef exit,
                                      LLVMValueRef **vals, bool from_latch);
void nvptx_pipeline_end(Gen *g, NvptxPipeline *p); /* after the loop */
bool nvptx_pipelined_load(Gen *g, const BirOp *op);   /* a load the ring does */
/* The loads a for loop's ring would copy (at most max; 0 when it does not
 * pipeline), the bytes of one iteration's tiles, and whether its one dot
 * only feeds itself. */
int nvptx_pipeline_loads(Gen *g, const BirOp *loop, const BirOp **loads, int max, int64_t *tile_bytes, bool *dot_alone);
/* pipeline.c: the ring of g->ws_loop; whether a dot of a loop leaves its
 * wgmma group in flight past the refill (matmul's lone dot, or a deferred
 * dot refilled at the top: attention's p V in two or more warpgroups). */
bool nvptx_pipeline_ws_ring(Gen *g, NvptxWsRing *r);
bool nvptx_pipeline_wants_producer(Gen *g, const BirOp *loop); /* the loop's plan: nvptx_loop_wants_producer */

/* -------------------------------------------------------------------- tma.c */
/* The loads of one pipelined loop: TMA copies them all if every one can be
 * (returns n, their maps in maps), else none (0). */
int nvptx_tma_plan_loop(Gen *g, const BirOp **loads, int n, NvptxTensorMap *maps, NvptxTmaMask *masks);
/* The pointer analysis tma.c keeps for a kernel (NvptxSchedule.tma_memo). */
struct TmaMemo *nvptx_tma_memo(Gen *g);
/* Are pointers v (a 2-D block) P(0, 0) + r * steps[0] + c * steps[1]
 * elements, with constant steps (the analysis TMA's maps use)? */
bool nvptx_pointer_steps(Gen *g, int v, int64_t steps[2]);
/* The pointer parameter pointers v are offsets from (through ptr_add,
 * splats, broadcasts, transposes, selects and loop-carried values), or -1
 * when that is not known. */
int nvptx_pointer_param(Gen *g, int v);
/* Why load ld cannot be TMA copies (NULL: it can, and *map is its map). */
const char *nvptx_tma_refusal(Gen *g, const BirOp *ld, NvptxTensorMap *map, NvptxTmaMask *mask);
/* Does a load with this map take two: one without its bound for the tiles within it, and this one
 * for those at the edge (its columns alone are bounded; tma.c says why)? */
static inline bool nvptx_tma_edge_twin(const NvptxTensorMap *m) { return m->cols_scale && !m->rows_scale; }
/* Why a pipelined loop with tile_bytes of tiles an iteration should not
 * copy by TMA whatever its loads (NULL: it may); dot_alone: its one dot
 * only feeds itself, so a group stays in flight across iterations. */
const char *nvptx_tma_loop_refusal(Gen *g, int64_t tile_bytes, bool dot_alone, int ndots);

/* ------------------------------------------------------------------ async.c */
/* Thread 0's test that a TMA copy of load ld, whose element (0, 0) is at
 * p00, reads the pointers' elements (within its map, at the coordinates of
 * its bounded axes: g->regs holds mk's blocks) and that the map is usable;
 * *col and *row get the coordinates the copy starts at. */
LLVMValueRef nvptx_tma_coords_ok(Gen *g, const BirOp *ld, const NvptxTmaMask *mk, LLVMValueRef p00, LLVMValueRef *col,
                                 LLVMValueRef *row, LLVMValueRef *edge);
/* Thread 0 asks for the kernel's tensor maps ahead of the first copy (prefetch.tensormap: the
 * copy otherwise waits for its map to be fetched); and the maps' constants the copies' coordinates
 * need, once (g->tma_row_inverse). At the kernel's entry. */
void nvptx_tma_prefetch_maps(Gen *g);
/* A 16-byte cp.async of global src into shared memory at byte offset
 * dst_off, zeros where ok is false (src then not read). */
void nvptx_cp_async_16(Gen *g, LLVMValueRef dst_off, LLVMValueRef src, LLVMValueRef ok);
/* A TMA copy of map's box at (col, row) to shared byte offset dst, completing on the mbarrier at bar. */
void nvptx_tma_load(Gen *g, LLVMValueRef map, LLVMValueRef dst, LLVMValueRef col, LLVMValueRef row, LLVMValueRef bar);
/* Tensor map `map`'s address, as the copies take it. */
LLVMValueRef nvptx_tma_map_address(Gen *g, int map);
/* mbarriers at shared byte offsets (i32): init with an arrival count, inval,
 * arrive, arrive expecting bytes of TMA, wait for the phase of a parity. */
void nvptx_mbarrier_init(Gen *g, LLVMValueRef at, int count);
void nvptx_mbarrier_inval(Gen *g, LLVMValueRef at);
void nvptx_mbarrier_arrive(Gen *g, LLVMValueRef at);
void nvptx_mbarrier_expect(Gen *g, LLVMValueRef at, int64_t bytes);
void nvptx_mbarrier_wait(Gen *g, LLVMValueRef at, LLVMValueRef parity);

/* --------------------------------------------------------------- warpspec.c */
/* Why a TMA loop gets no producer warp (NULL: it may), given whether a dot's
 * group runs on past its refill, how many loops of the kernel pipeline and
 * the bytes of one iteration's tiles (a stage of its ring). */
const char *nvptx_ws_refusal(Gen *g, const BirOp *loop, bool wanted, int pipelined_loops, int64_t stage_bytes);
/* The most stages pipeline.c gives a ring by default: 3, or 4 with a dot in flight past the refill. */
enum { NVPTX_RING_MOST_STAGES = 4 };
/* The warps a launch has: the program's, and a producer warpgroup. */
int nvptx_ws_launch_warps(Gen *g);
/* The registers a consumer thread gets back from the producer's (setmaxnreg),
 * or 0: none more than it starts with; the producer keeps these. */
int nvptx_ws_consumer_regs(Gen *g);
enum { NVPTX_WS_PRODUCER_REGS = 40 };
/* At the kernel's entry: the producer warp (the last) branches off to its
 * loop and returns; the builder continues in the consumers' code. */
void nvptx_ws_producer(Gen *g, const NvptxWsRing *r);
/* The consumers' side: at the kernel's entry, make the mbarriers and start
 * the producer; release the slot of fill `fill` (an i32) for an iteration
 * that runs, with this thread's vote that its tiles can be TMA copies and
 * thread 0's columns; at the top of iteration `it`, wait for its tiles and
 * say whether TMA copied them (else the consumers copy them); at the
 * kernel's end (every return goes there), tell the producer to stop at
 * fill `fill`. */
void nvptx_ws_begin(Gen *g, const NvptxWsRing *r);
void nvptx_ws_release(Gen *g, const NvptxWsRing *r, LLVMValueRef fill, LLVMValueRef vote, const LLVMValueRef *cols,
                      const LLVMValueRef *rows, const LLVMValueRef *edges);
LLVMValueRef nvptx_ws_wait(Gen *g, const NvptxWsRing *r, LLVMValueRef it);
void nvptx_ws_end(Gen *g, const NvptxWsRing *r, LLVMValueRef fill);
void nvptx_ws_take_turn(Gen *g);
void nvptx_ws_pass_turn(Gen *g);

/* ---------------------------------------------------------------- control.c */
bool nvptx_gen_for(Gen *g, const BirOp *op);
bool nvptx_gen_while(Gen *g, const BirOp *op);
bool nvptx_gen_if(Gen *g, const BirOp *op);

/* ---------------------------------------------------------------- carried.c */
/* Picks the for loops' blocks to keep in shared memory (at most free_bytes
 * of it) where the registers would not hold them, into kept (room for one
 * per value); returns how many. */
int nvptx_carried_plan(Gen *g, int64_t free_bytes, NvptxKeptBlock *kept);
/* Before a loop's header: stores the blocks made before it that it keeps,
 * to be loaded in its body where first used; after the loop, leave (with
 * the lazy count from before enter) gives them their registers back. */
void nvptx_carried_enter(Gen *g, const BirOp *loop);
void nvptx_carried_leave(Gen *g, int nlazy);
/* Stores a kept block's registers (in the loop result's layout) to its slots. */
void nvptx_carried_store(Gen *g, int result, LLVMValueRef *vals);
/* Binds v (the result, or the body's view of it) to registers loaded from result's slots. */
void nvptx_carried_load(Gen *g, int v, int result);
/* Before op: loads the kept blocks op uses that are not loaded yet. */
void nvptx_carried_load_uses(Gen *g, const BirOp *op);

/* ----------------------------------------------------------------- kernel.c */
/* kernel.c: emits g's kernel as its schedule says (the function, its parameters, the body). */
bool nvptx_emit_kernel(Gen *g);
bool nvptx_gen_block(Gen *g, const BirBlock *b);
bool nvptx_gen_op(Gen *g, const BirOp *op);

/* ------------------------------------------------------------- persistent.c */
/* Around the kernel's body: with a producer or --persistent, the block a
 * return goes to (the producer's stop; the next program id), and with
 * --persistent the loop over program ids. The builder is in the body's
 * first block after begin; end closes the kernel. */
void nvptx_body_begin(Gen *g);
void nvptx_body_end(Gen *g);
void nvptx_return(Gen *g);
/* program_id(axis), num_programs(axis) as the body sees them. */
LLVMValueRef nvptx_program_id(Gen *g, int axis);
LLVMValueRef nvptx_num_programs(Gen *g, int axis);

/* ------------------------------------------------------------------- emit.c */
/* Optimizes the module and writes PTX (or the LLVM IR); malloc'ed, or NULL
 * after reporting an internal error. */
char *nvptx_emit(NvptxModule *m, bool llvm_ir);

#endif
