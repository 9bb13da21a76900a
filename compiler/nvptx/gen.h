/* gen.h: what the files of compiler/nvptx/ share, and nothing outside the
 * folder includes: the layouts (layout.c), the code generator's state (Gen)
 * and the functions one file of the generator calls in another.
 *
 *   layout.c      axis analysis and blocked layouts (KernelPlan)
 *   util.c        LLVM helpers, thread-0 sections, shared memory, coordinates
 *   elementwise.c one element of an elementwise op; math; rand
 *   shapes.c      expand_dims, broadcast
 *   memory.c      load, store, atomics
 *   reduce.c      reductions
 *   dot.c         dot
 *   print.c       device_print
 *   control.c     for, while, if
 *   kernel.c      op dispatch, shared memory plan, one kernel's function
 *   nvptx.c       the module, nvptx_compile()
 *   emit.c        LLVM's O3 pipeline and PTX emission
 *   annotate.c    --annotate
 *   target.c      the arch table */
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
/* What the backend knows before emitting code: per value, facts along its
 * fastest (last) dimension (Triton's AxisInfo), and how each block shape is
 * spread over the threads of a CTA (Triton's blocked layout). */
enum { AXIS_MAX_DIV = 1 << 30 };

typedef struct {
    int64_t contig;    /* runs of this many consecutive elements increase by 1 */
    int64_t div;       /* the first element of each run is divisible by this (bytes for pointers) */
    int64_t constancy; /* runs of this many consecutive elements are equal */
} AxisInfo;

/* A blocked layout of a rank-1 or rank-2 shape. Dimension rank-1 is the
 * fastest. A thread holds spt[d] consecutive elements per dimension, lanes
 * of a warp tile tpw[d], warps tile wpc[d]; the CTA tile repeats reps[d]
 * times to cover the shape, or wraps (threads hold copies) when larger. */
typedef struct {
    int rank;
    int32_t shape[BLK_MAX_RANK];
    int32_t spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], reps[BLK_MAX_RANK];
    int32_t nregs; /* elements each thread holds */
} Layout;

typedef struct {
    int num_warps;
    AxisInfo *axis;   /* per value */
    Layout *layouts;  /* per value; rank 0 for scalars */
} KernelPlan;

/* Analyzes f; num_warps 0 picks the default from the largest block.
 * param_div (NULL, or one entry per runtime parameter) adds facts known at
 * launch, as Triton specializes: a pointer's alignment in bytes, an
 * integer's divisibility; 0 adds nothing. */
KernelPlan *nvptx_plan_kernel(Arena *a, const BirFunction *f, int num_warps, const int64_t *param_div);
/* Elements (not bytes) one access of a load/store/atomic may cover. */
int nvptx_access_width(const KernelPlan *p, const BirFunction *f, const BirOp *op);
/* The parts of register r: its repetition and in-thread index along d. */
void nvptx_layout_reg_parts(const Layout *l, int r, int32_t rep[BLK_MAX_RANK], int32_t j[BLK_MAX_RANK]);
/* The coordinate along dimension d of register r of thread (warp, lane). */
int32_t nvptx_layout_coord(const Layout *l, int d, int r, int warp, int lane);

/* ----------------------------------------------------------------- nvptx.c */
/* The LLVM module being built, shared by its kernels. */
typedef struct {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMDIBuilderRef di;
    LLVMMetadataRef di_file;
    LLVMValueRef shared; /* dynamic shared memory, extern [0 x i8] addrspace(3); made on first use */
    const NvptxArch *arch;
    const NvptxOptions *opt;
    DiagEngine *de;
} NvptxModule;

/* Reports an error at an op (the kernel's name when op is NULL). Returns false. */
bool nvptx_error(NvptxModule *m, const BirFunction *f, const BirOp *op, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------- kernel.c */
/* The code generator's state for one kernel. Every block value lives in
 * registers: the thread holds the elements its layout gives it, one LLVM
 * value each; a scalar is one LLVM value, the same in every thread. */
typedef struct {
    NvptxModule *m;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMMetadataRef di_sub;
    const BirFunction *f;
    const KernelPlan *plan;
    const NvptxOptions *opt;
    Arena arena;
    LLVMValueRef fn;
    LLVMValueRef **regs; /* per value: its registers */
    LLVMValueRef tid, lane, warp;
    LLVMValueRef smem;   /* the module's dynamic shared memory (NvptxModule.shared) */
    int64_t smem_size;   /* the most any op needs: every op that uses it starts
                            with a barrier, so they all share one region */
    bool terminated;     /* the current LLVM block ended in `ret` */
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, void_t, gptr, genptr;
} Gen;

/* Builds one kernel's function into m; fills info. False after reporting an error. */
bool nvptx_gen_kernel(NvptxModule *m, const BirFunction *f, NvptxKernel *info);
bool nvptx_gen_block(Gen *g, const BirBlock *b);
bool nvptx_gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ util.c */
static inline LLVMTypeRef ty(Gen *g, DType d) {
    switch (d) {
    case DT_I1: return g->i1;
    case DT_I32: case DT_U32: return g->i32;
    case DT_I64: return g->i64;
    case DT_F16: return g->f16;
    case DT_BF16: return g->bf16;
    case DT_F32: return g->f32;
    default: return g->gptr;
    }
}
static inline LLVMValueRef ci32(Gen *g, int64_t v) { return LLVMConstInt(g->i32, (unsigned long long)v, 1); }
static inline LLVMValueRef ci64(Gen *g, int64_t v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }
static inline BlkType vtype(Gen *g, int v) { return g->f->values[v].type; }
static inline int nregs(Gen *g, int v) {
    const Layout *l = &g->plan->layouts[v];
    return l->rank ? l->nregs : 1;
}
static inline LLVMValueRef fp_contract(Gen *g, LLVMValueRef inst) {
    if (!g->opt->no_fma && LLVMIsAInstruction(inst)) LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
    return inst;
}
static inline LLVMValueRef is_thread0(Gen *g) { return LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 0), ""); }
/* Values are kept in memory in a type of whole bytes (i1 as i8). */
static inline LLVMValueRef to_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildZExt(g->b, v, g->i8, "") : v;
}
static inline LLVMTypeRef mem_ty(Gen *g, DType d) { return d == DT_I1 ? g->i8 : ty(g, d); }
static inline LLVMValueRef from_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->i8, 0, 0), "") : v;
}
static inline LLVMValueRef addr_i64(Gen *g, LLVMValueRef p) { return LLVMBuildPtrToInt(g->b, p, g->i64, ""); }

LLVMValueRef *nvptx_new_regs(Gen *g, int v);
/* An intrinsic or external function by name, declared on first use. */
LLVMValueRef nvptx_call(Gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n);
LLVMValueRef nvptx_call0(Gen *g, const char *name, LLVMTypeRef ret);
LLVMValueRef nvptx_asm_call(Gen *g, LLVMTypeRef ret, const char *text, const char *constraints, LLVMValueRef *args,
                            int n, bool side_effects);
void nvptx_barrier(Gen *g);
/* Code under cond: returns the merge block; the caller emits the then-part and calls nvptx_end_if. */
LLVMBasicBlockRef nvptx_begin_if(Gen *g, LLVMValueRef cond);
void nvptx_end_if(Gen *g, LLVMBasicBlockRef merge);
/* A pointer into the kernel's shared memory: offset + index * elem_size bytes. */
LLVMValueRef nvptx_smem_ptr(Gen *g, int64_t offset, LLVMValueRef index, int elem_size);
/* This thread's first coordinate along d, the coordinate of register r,
 * and whether the thread holds the first copy of its elements. */
LLVMValueRef nvptx_thread_base(Gen *g, const Layout *l, int d);
LLVMValueRef nvptx_coord(Gen *g, const Layout *l, int d, int r);
LLVMValueRef nvptx_owner(Gen *g, const Layout *l);

/* ----------------------------------------------------------- elementwise.c */
/* One element of an elementwise op, from its operands' elements. */
LLVMValueRef nvptx_elementwise(Gen *g, const BirOp *op, LLVMValueRef *x);
LLVMValueRef nvptx_convert(Gen *g, LLVMValueRef x, DType from, DType to);
LLVMValueRef nvptx_minmax(Gen *g, bool is_max, LLVMValueRef a, LLVMValueRef b, DType d);

/* ------------------------------------------------- shapes.c, memory.c, ... */
bool nvptx_can_remat(Gen *g, int v, int depth);
void nvptx_coords_of(Gen *g, const Layout *l, int r, LLVMValueRef *c);
bool nvptx_gen_reshape(Gen *g, const BirOp *op, int64_t smem_at);
bool nvptx_gen_memory(Gen *g, const BirOp *op, int64_t slot);
int64_t nvptx_reduce_smem_bytes(Gen *g, const BirOp *op);
bool nvptx_gen_reduce(Gen *g, const BirOp *op, int64_t slot);
bool nvptx_gen_print(Gen *g, const BirOp *op);
int64_t nvptx_dot_smem_bytes(Gen *g, const BirOp *op);
bool nvptx_gen_dot(Gen *g, const BirOp *op, int64_t smem_at);
bool nvptx_gen_for(Gen *g, const BirOp *op);
bool nvptx_gen_while(Gen *g, const BirOp *op);
bool nvptx_gen_if(Gen *g, const BirOp *op);

/* ------------------------------------------------------------------ emit.c */
/* Optimizes the module and writes PTX (or the LLVM IR); malloc'ed, or NULL
 * after reporting an internal error. */
char *nvptx_emit(NvptxModule *m, bool llvm_ir);

#endif
