/* codegen.c: block IR -> LLVM IR for the NVPTX backend, through the LLVM-C API.
 *
 * Every block value lives in registers: the thread holds the elements its
 * layout (layout.c) gives it, one LLVM value each; a scalar is one LLVM
 * value, the same in every thread (control flow is uniform in a program).
 * Shape changes (expand_dims, broadcast) recompute the operand's elements
 * where they are needed when it is a pure function of arange and scalars,
 * and go through shared memory otherwise. Reductions combine within a
 * thread, then across lanes with shfl.sync.bfly, then across warps through
 * shared memory, leaving the result in every thread. A scalar memory op runs
 * on thread 0 and its result is broadcast through shared memory; a scalar
 * atomic also waits at a barrier and a GPU-scope fence for every earlier
 * access of the program (docs/language.md §9). */
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

enum { MAX_KERNELS = 64 };

struct BackendModule {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    char arch[16];
    const char *features;
    int nkernels;
    const char *kernel_names[MAX_KERNELS]; /* owned by the BirModule */
    int num_warps[MAX_KERNELS];
    int64_t smem_bytes[MAX_KERNELS];
};

typedef struct {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMMetadataRef di_sub;
    const BirFunction *f;
    const KernelPlan *plan;
    const BackendOptions *opt;
    Arena arena;
    LLVMValueRef fn;
    LLVMValueRef **regs; /* per value: its registers */
    LLVMValueRef tid, lane, warp;
    LLVMValueRef smem;   /* the kernel's shared memory, [smem_size x i8] addrspace(3) */
    int64_t smem_size;   /* the most any op needs: every op that uses it starts
                            with a barrier, so they all share one region */
    bool terminated;     /* the current LLVM block ended in `ret` */
    char *err;
    size_t err_size;
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, void_t, gptr, genptr;
} Gen;

static bool gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g->err[0] == 0)
        snprintf(g->err, g->err_size, "%s:%u: error: %s (kernel '%s')", g->f->src ? g->f->src->name : "?",
                 op ? op->line : 0, msg, g->f->name);
    return false;
}

/* ------------------------------------------------------------- helpers */

static LLVMTypeRef ty(Gen *g, DType d) {
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

static LLVMValueRef ci32(Gen *g, int64_t v) { return LLVMConstInt(g->i32, (unsigned long long)v, 1); }
static LLVMValueRef ci64(Gen *g, int64_t v) { return LLVMConstInt(g->i64, (unsigned long long)v, 1); }

static BlkType vtype(Gen *g, int v) { return g->f->values[v].type; }
static int nregs(Gen *g, int v) {
    const Layout *l = &g->plan->layouts[v];
    return l->rank ? l->nregs : 1;
}

static LLVMValueRef *new_regs(Gen *g, int v) {
    int n = nregs(g, v);
    g->regs[v] = arena_alloc(&g->arena, (size_t)n * sizeof(LLVMValueRef));
    return g->regs[v];
}

/* An intrinsic or external function by name, declared on first use. */
static LLVMValueRef call(Gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n) {
    LLVMTypeRef params[8];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
    if (!fn) fn = LLVMAddFunction(g->mod, name, fty);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

static LLVMValueRef call0(Gen *g, const char *name, LLVMTypeRef ret) { return call(g, name, ret, NULL, 0); }

static LLVMValueRef asm_call(Gen *g, LLVMTypeRef ret, const char *text, const char *constraints,
                             LLVMValueRef *args, int n, bool side_effects) {
    LLVMTypeRef params[24];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints,
                                       strlen(constraints), side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

static void barrier(Gen *g) { call0(g, "llvm.nvvm.barrier0", g->void_t); }

static LLVMValueRef fp_contract(Gen *g, LLVMValueRef inst) {
    if (!g->opt->no_fma && LLVMIsAInstruction(inst)) LLVMSetFastMathFlags(inst, LLVMFastMathAllowContract);
    return inst;
}

/* Runs `then` code on thread 0 only: returns the merge block after setting
 * up the branch; the caller emits into the then-block and calls end_if_t0. */
static LLVMBasicBlockRef begin_if(Gen *g, LLVMValueRef cond) {
    LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0");
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0.end");
    LLVMBuildCondBr(g->b, cond, then_bb, merge);
    LLVMPositionBuilderAtEnd(g->b, then_bb);
    return merge;
}

static void end_if(Gen *g, LLVMBasicBlockRef merge) {
    LLVMBuildBr(g->b, merge);
    LLVMPositionBuilderAtEnd(g->b, merge);
}

static LLVMValueRef is_thread0(Gen *g) { return LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 0), ""); }

/* A pointer into the kernel's shared memory. */
static LLVMValueRef smem_ptr(Gen *g, int64_t offset, LLVMValueRef index, int elem_size) {
    LLVMValueRef off = ci32(g, offset);
    if (index) off = LLVMBuildAdd(g->b, off, LLVMBuildMul(g->b, index, ci32(g, elem_size), ""), "");
    return LLVMBuildGEP2(g->b, g->i8, g->smem, &off, 1, "");
}

/* Values are kept in shared memory in a type of whole bytes (i1 as i8). */
static LLVMValueRef to_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildZExt(g->b, v, g->i8, "") : v;
}
static LLVMTypeRef mem_ty(Gen *g, DType d) { return d == DT_I1 ? g->i8 : ty(g, d); }
static LLVMValueRef from_mem(Gen *g, LLVMValueRef v, DType d) {
    return d == DT_I1 ? LLVMBuildICmp(g->b, LLVMIntNE, v, LLVMConstInt(g->i8, 0, 0), "") : v;
}

/* ---------------------------------------------------------- coordinates */

/* The coordinate of register r along dimension d of layout l, and whether
 * this thread is the first holder of it (layouts wider than the shape wrap). */
static LLVMValueRef thread_base(Gen *g, const Layout *l, int d) {
    int fast = l->rank - 1;
    LLVMValueRef lane_d = d == fast ? LLVMBuildURem(g->b, g->lane, ci32(g, l->tpw[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->lane, ci32(g, l->tpw[fast]), "");
    LLVMValueRef warp_d = d == fast ? LLVMBuildURem(g->b, g->warp, ci32(g, l->wpc[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->warp, ci32(g, l->wpc[fast]), "");
    LLVMValueRef t = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, warp_d, ci32(g, l->tpw[d]), ""), lane_d, "");
    return LLVMBuildMul(g->b, t, ci32(g, l->spt[d]), "");
}

static LLVMValueRef coord(Gen *g, const Layout *l, int d, int r) {
    int32_t rep[BLK_MAX_RANK], j[BLK_MAX_RANK];
    layout_reg_parts(l, r, rep, j);
    int64_t tile = (int64_t)l->spt[d] * l->tpw[d] * l->wpc[d];
    LLVMValueRef c = LLVMBuildAdd(g->b, thread_base(g, l, d), ci32(g, rep[d] * tile + j[d]), "");
    return LLVMBuildAnd(g->b, c, ci32(g, l->shape[d] - 1), "");
}

/* Does this thread hold the first copy of its elements along every dimension? */
static LLVMValueRef owner(Gen *g, const Layout *l) {
    LLVMValueRef ok = LLVMConstInt(g->i1, 1, 0);
    for (int d = 0; d < l->rank; d++) {
        int64_t tile = (int64_t)l->spt[d] * l->tpw[d] * l->wpc[d];
        if (tile <= l->shape[d]) continue;
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntULT, thread_base(g, l, d), ci32(g, l->shape[d]), ""), "");
    }
    return ok;
}

/* --------------------------------------------------------- elementwise */

/* Shifts by the width or more act as shifts by the width, as PTX's do
 * (LLVM would make them poison). */
static LLVMValueRef shift(Gen *g, bool left, LLVMValueRef x, LLVMValueRef amt, DType d) {
    int bits = dtype_bits(d);
    LLVMTypeRef t = ty(g, d);
    LLVMValueRef width = LLVMConstInt(t, (unsigned long long)bits, 0);
    LLVMValueRef big = LLVMBuildICmp(g->b, LLVMIntUGE, amt, width, "");
    LLVMValueRef safe = LLVMBuildAnd(g->b, amt, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
    if (left) return LLVMBuildSelect(g->b, big, LLVMConstInt(t, 0, 0), LLVMBuildShl(g->b, x, safe, ""), "");
    if (dtype_is_signed(d)) {
        LLVMValueRef fill = LLVMBuildAShr(g->b, x, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
        return LLVMBuildSelect(g->b, big, fill, LLVMBuildAShr(g->b, x, safe, ""), "");
    }
    return LLVMBuildSelect(g->b, big, LLVMConstInt(t, 0, 0), LLVMBuildLShr(g->b, x, safe, ""), "");
}

static LLVMValueRef fdiv(Gen *g, LLVMValueRef a, LLVMValueRef b, DType d) {
    if (d == DT_F32 && !g->opt->precise_math) {
        /* Triton's default: div.full.f32 (2 ulp), not the IEEE-rounded div.rn */
        LLVMValueRef args[2] = {a, b};
        return asm_call(g, g->f32, "div.full.f32 $0, $1, $2;", "=f,f,f", args, 2, false);
    }
    return LLVMBuildFDiv(g->b, a, b, "");
}

static LLVMValueRef minmax(Gen *g, bool is_max, LLVMValueRef a, LLVMValueRef b, DType d) {
    if (dtype_is_float(d)) {
        /* NaN propagates: max.NaN / min.NaN */
        const char *name = d == DT_F32 ? (is_max ? "llvm.maximum.f32" : "llvm.minimum.f32")
                         : d == DT_F16 ? (is_max ? "llvm.maximum.f16" : "llvm.minimum.f16")
                                       : (is_max ? "llvm.maximum.bf16" : "llvm.minimum.bf16");
        LLVMValueRef args[2] = {a, b};
        return call(g, name, ty(g, d), args, 2);
    }
    LLVMIntPredicate p = dtype_is_signed(d) ? (is_max ? LLVMIntSGT : LLVMIntSLT) : (is_max ? LLVMIntUGT : LLVMIntULT);
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, p, a, b, ""), a, b, "");
}

static LLVMValueRef convert(Gen *g, LLVMValueRef x, DType from, DType to) {
    if (from == to) return x;
    LLVMTypeRef t = ty(g, to);
    bool ff = dtype_is_float(from), tf = dtype_is_float(to);
    if (to == DT_I1)
        return ff ? LLVMBuildFCmp(g->b, LLVMRealUNE, x, LLVMConstNull(ty(g, from)), "")
                  : LLVMBuildICmp(g->b, LLVMIntNE, x, LLVMConstNull(ty(g, from)), "");
    if (ff && tf) {
        if (dtype_bits(to) > dtype_bits(from)) return LLVMBuildFPExt(g->b, x, t, "");
        if (dtype_bits(to) < dtype_bits(from)) return LLVMBuildFPTrunc(g->b, x, t, "");
        /* f16 <-> bf16: through f32 (exact), then one rounding */
        return LLVMBuildFPTrunc(g->b, LLVMBuildFPExt(g->b, x, g->f32, ""), t, "");
    }
    if (tf) {
        return from == DT_I1 || from == DT_U32 ? LLVMBuildUIToFP(g->b, x, t, "") : LLVMBuildSIToFP(g->b, x, t, "");
    }
    if (ff) {
        /* truncate toward zero, saturating, NaN -> 0: the .sat intrinsics */
        char name[48];
        const char *fn = to == DT_U32 ? "fptoui" : "fptosi";
        const char *src = from == DT_F32 ? "f32" : from == DT_F16 ? "f16" : "bf16";
        snprintf(name, sizeof name, "llvm.%s.sat.%s.%s", fn, to == DT_I64 ? "i64" : "i32", src);
        return call(g, name, t, &x, 1);
    }
    int fb = dtype_bits(from), tb = dtype_bits(to);
    if (tb > fb) return from == DT_I1 || from == DT_U32 ? LLVMBuildZExt(g->b, x, t, "") : LLVMBuildSExt(g->b, x, t, "");
    if (tb < fb) return LLVMBuildTrunc(g->b, x, t, "");
    return x; /* i32 <-> u32: the same bits */
}

static LLVMValueRef math(Gen *g, BirOpcode code, LLVMValueRef x) {
    bool precise = g->opt->precise_math;
    switch (code) {
    case BIR_EXP: /* ex2.approx(x * log2 e), as Triton */
        x = fp_contract(g, LLVMBuildFMul(g->b, x, LLVMConstReal(g->f32, 1.4426950408889634), ""));
        /* fall through */
    case BIR_EXP2: return call(g, "llvm.nvvm.ex2.approx.f", g->f32, &x, 1);
    case BIR_LOG:
        return fp_contract(g, LLVMBuildFMul(g->b, call(g, "llvm.nvvm.lg2.approx.f", g->f32, &x, 1),
                                            LLVMConstReal(g->f32, 0.6931471805599453), ""));
    case BIR_LOG2: return call(g, "llvm.nvvm.lg2.approx.f", g->f32, &x, 1);
    case BIR_SQRT: return call(g, precise ? "llvm.sqrt.f32" : "llvm.nvvm.sqrt.approx.f", g->f32, &x, 1);
    default: /* rsqrt */
        if (precise) return LLVMBuildFDiv(g->b, LLVMConstReal(g->f32, 1.0), call(g, "llvm.sqrt.f32", g->f32, &x, 1), "");
        return call(g, "llvm.nvvm.rsqrt.approx.f", g->f32, &x, 1);
    }
}

static LLVMValueRef mulhi(Gen *g, uint32_t a, LLVMValueRef b) {
    LLVMValueRef args[2] = {LLVMConstInt(g->i32, a, 0), b};
    return call(g, "llvm.nvvm.mulhi.ui", g->i32, args, 2);
}

/* Philox4x32-10 of (seed, offset) -> the first output word (design-notes §2). */
static LLVMValueRef philox(Gen *g, LLVMValueRef seed, LLVMValueRef offset, DType off_dt) {
    LLVMValueRef k0 = LLVMBuildTrunc(g->b, seed, g->i32, "");
    LLVMValueRef k1 = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, seed, ci64(g, 32), ""), g->i32, "");
    LLVMValueRef c0, c1, c2 = ci32(g, 0), c3 = ci32(g, 0);
    if (off_dt == DT_I64) {
        c0 = LLVMBuildTrunc(g->b, offset, g->i32, "");
        c1 = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, offset, ci64(g, 32), ""), g->i32, "");
    } else {
        c0 = offset;
        c1 = ci32(g, 0);
    }
    for (int round = 0; round < 10; round++) {
        LLVMValueRef n0 = LLVMBuildXor(g->b, LLVMBuildXor(g->b, mulhi(g, 0xCD9E8D57u, c2), c1, ""), k0, "");
        LLVMValueRef n2 = LLVMBuildXor(g->b, LLVMBuildXor(g->b, mulhi(g, 0xD2511F53u, c0), c3, ""), k1, "");
        LLVMValueRef n1 = LLVMBuildMul(g->b, ci32(g, (int32_t)0xCD9E8D57u), c2, "");
        LLVMValueRef n3 = LLVMBuildMul(g->b, ci32(g, (int32_t)0xD2511F53u), c0, "");
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 = LLVMBuildAdd(g->b, k0, ci32(g, (int32_t)0x9E3779B9u), "");
        k1 = LLVMBuildAdd(g->b, k1, ci32(g, (int32_t)0xBB67AE85u), "");
    }
    return c0;
}

static LLVMValueRef rand_float(Gen *g, LLVMValueRef word) {
    /* x = (int32) word; x < 0 ? -x - 1 : x; then x * 2^-31 as f32 (one rounding each) */
    LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, word, ci32(g, 0), "");
    LLVMValueRef x = LLVMBuildSelect(g->b, neg, LLVMBuildNot(g->b, word, ""), word, "");
    LLVMValueRef f = LLVMBuildSIToFP(g->b, x, g->f32, "");
    return LLVMBuildFMul(g->b, f, LLVMConstReal(g->f32, 4.6566127342e-10f), "");
}

/* One element of an elementwise op, from its operands' elements. */
static LLVMValueRef elementwise(Gen *g, const BirOp *op, LLVMValueRef *x) {
    const BirFunction *f = g->f;
    BlkType rt = f->values[op->results[0]].type;
    DType d = rt.dtype, od = op->noperands ? f->values[op->operands[0]].type.dtype : d;
    bool fl = dtype_is_float(d);
    LLVMBuilderRef b = g->b;
    switch (op->code) {
    case BIR_CONVERT: return convert(g, x[0], od, d);
    case BIR_PTR_CAST: return x[0];
    case BIR_PTR_ADD: {
        DType offd = f->values[op->operands[1]].type.dtype;
        LLVMValueRef off = offd == DT_I64 ? x[1] : offd == DT_U32 ? LLVMBuildZExt(b, x[1], g->i64, "")
                                                                   : LLVMBuildSExt(b, x[1], g->i64, "");
        return LLVMBuildGEP2(b, mem_ty(g, rt.elem), x[0], &off, 1, "");
    }
    case BIR_ADD: return fl ? fp_contract(g, LLVMBuildFAdd(b, x[0], x[1], "")) : LLVMBuildAdd(b, x[0], x[1], "");
    case BIR_SUB: return fl ? fp_contract(g, LLVMBuildFSub(b, x[0], x[1], "")) : LLVMBuildSub(b, x[0], x[1], "");
    case BIR_MUL: return fl ? fp_contract(g, LLVMBuildFMul(b, x[0], x[1], "")) : LLVMBuildMul(b, x[0], x[1], "");
    case BIR_DIV:
        if (fl) return fdiv(g, x[0], x[1], d);
        return dtype_is_signed(d) ? LLVMBuildSDiv(b, x[0], x[1], "") : LLVMBuildUDiv(b, x[0], x[1], "");
    case BIR_REM:
        if (fl) return LLVMBuildFRem(b, x[0], x[1], "");
        return dtype_is_signed(d) ? LLVMBuildSRem(b, x[0], x[1], "") : LLVMBuildURem(b, x[0], x[1], "");
    case BIR_AND: return LLVMBuildAnd(b, x[0], x[1], "");
    case BIR_OR: return LLVMBuildOr(b, x[0], x[1], "");
    case BIR_XOR: return LLVMBuildXor(b, x[0], x[1], "");
    case BIR_SHL: return shift(g, true, x[0], x[1], d);
    case BIR_SHR: return shift(g, false, x[0], x[1], d);
    case BIR_MIN: return minmax(g, false, x[0], x[1], d);
    case BIR_MAX: return minmax(g, true, x[0], x[1], d);
    case BIR_EQ: case BIR_NE: case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: {
        int k = op->code - BIR_EQ;
        if (dtype_is_float(od)) {
            static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
            return LLVMBuildFCmp(b, fp[k], x[0], x[1], "");
        }
        static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
        static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
        return LLVMBuildICmp(b, dtype_is_signed(od) ? sp[k] : up[k], x[0], x[1], "");
    }
    case BIR_NEG: return fl ? LLVMBuildFNeg(b, x[0], "") : LLVMBuildNeg(b, x[0], "");
    case BIR_NOT: return LLVMBuildNot(b, x[0], "");
    case BIR_ABS:
        if (fl) {
            char name[24];
            snprintf(name, sizeof name, "llvm.fabs.%s", d == DT_F32 ? "f32" : d == DT_F16 ? "f16" : "bf16");
            return call(g, name, ty(g, d), x, 1);
        }
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x[0], LLVMConstNull(ty(g, d)), ""),
                               LLVMBuildNeg(b, x[0], ""), x[0], "");
    case BIR_EXP: case BIR_EXP2: case BIR_LOG: case BIR_LOG2: case BIR_SQRT: case BIR_RSQRT:
        return math(g, op->code, x[0]);
    case BIR_SELECT: return LLVMBuildSelect(b, x[0], x[1], x[2], "");
    case BIR_FMA: return call(g, "llvm.fma.f32", g->f32, x, 3);
    case BIR_RAND: case BIR_RANDINT: {
        LLVMValueRef w = philox(g, x[0], x[1], f->values[op->operands[1]].type.dtype);
        return op->code == BIR_RAND ? rand_float(g, w) : w;
    }
    default: return NULL;
    }
}

static bool is_elementwise(BirOpcode c) { return c >= BIR_CONVERT && c <= BIR_RANDINT; }

/* ------------------------------------------------------- shape changes */

/* Can v's elements be recomputed anywhere from arange and scalars alone? */
static bool can_remat(Gen *g, int v, int depth) {
    if (vtype(g, v).rank == 0) return true;
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > 64) return false;
    switch (op->code) {
    case BIR_ARANGE: case BIR_SPLAT: return true;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: return can_remat(g, op->operands[0], depth + 1);
    default:
        if (!is_elementwise(op->code) || op->code == BIR_RAND || op->code == BIR_RANDINT) return false;
        for (int i = 0; i < op->noperands; i++)
            if (!can_remat(g, op->operands[i], depth + 1)) return false;
        return true;
    }
}

/* v's element at coordinates c (one per dimension of v). */
static LLVMValueRef remat(Gen *g, int v, LLVMValueRef *c) {
    BlkType t = vtype(g, v);
    if (t.rank == 0) return g->regs[v][0];
    const BirOp *op = g->f->values[v].def;
    switch (op->code) {
    case BIR_ARANGE: return LLVMBuildAdd(g->b, c[0], ci32(g, op->attr), "");
    case BIR_SPLAT: return g->regs[op->operands[0]][0];
    case BIR_EXPAND_DIMS: {
        LLVMValueRef xc[BLK_MAX_RANK];
        for (int d = 0, k = 0; d < t.rank; d++)
            if (d != op->attr) xc[k++] = c[d];
        return remat(g, op->operands[0], xc);
    }
    case BIR_BROADCAST: {
        BlkType xt = vtype(g, op->operands[0]);
        LLVMValueRef xc[BLK_MAX_RANK];
        for (int d = 0; d < t.rank; d++) xc[d] = xt.shape[d] == 1 ? ci32(g, 0) : c[d];
        return remat(g, op->operands[0], xc);
    }
    default: {
        LLVMValueRef x[3];
        for (int i = 0; i < op->noperands; i++) x[i] = remat(g, op->operands[i], c);
        return elementwise(g, op, x);
    }
    }
}

/* Linear (row-major) index of coordinates c in a shape. */
static LLVMValueRef linear(Gen *g, BlkType t, LLVMValueRef *c) {
    if (t.rank == 1) return c[0];
    return LLVMBuildAdd(g->b, LLVMBuildMul(g->b, c[0], ci32(g, t.shape[1]), ""), c[1], "");
}

static void coords_of(Gen *g, const Layout *l, int r, LLVMValueRef *c) {
    for (int d = 0; d < l->rank; d++) c[d] = coord(g, l, d, r);
}

/* expand_dims and broadcast: recompute the operand where it is cheap,
 * else move it through shared memory (every thread writes what it holds,
 * then reads what it needs). */
static bool gen_reshape(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0], x = op->operands[0];
    const Layout *lr = &g->plan->layouts[r];
    BlkType rt = vtype(g, r), xt = vtype(g, x);
    LLVMValueRef *out = new_regs(g, r);
    if (can_remat(g, r, 0)) {
        for (int k = 0; k < lr->nregs; k++) {
            LLVMValueRef c[BLK_MAX_RANK];
            coords_of(g, lr, k, c);
            out[k] = remat(g, r, c);
        }
        return true;
    }
    DType d = xt.dtype;
    int es = d == DT_PTR ? 8 : dtype_bytes(d);
    const Layout *lx = &g->plan->layouts[x];
    LLVMTypeRef mt = d == DT_PTR ? g->gptr : mem_ty(g, d);
    barrier(g); /* earlier readers of this buffer are done */
    for (int k = 0; k < lx->nregs; k++) {
        LLVMValueRef c[BLK_MAX_RANK];
        coords_of(g, lx, k, c);
        LLVMBuildStore(g->b, to_mem(g, g->regs[x][k], d), smem_ptr(g, smem_at, linear(g, xt, c), es));
    }
    barrier(g);
    for (int k = 0; k < lr->nregs; k++) {
        LLVMValueRef c[BLK_MAX_RANK], xc[BLK_MAX_RANK];
        coords_of(g, lr, k, c);
        if (op->code == BIR_EXPAND_DIMS) {
            for (int dd = 0, j = 0; dd < rt.rank; dd++)
                if (dd != op->attr) xc[j++] = c[dd];
        } else {
            for (int dd = 0; dd < rt.rank; dd++) xc[dd] = xt.shape[dd] == 1 ? ci32(g, 0) : c[dd];
        }
        LLVMValueRef v = LLVMBuildLoad2(g->b, mt, smem_ptr(g, smem_at, linear(g, xt, xc), es), "");
        out[k] = from_mem(g, v, d);
    }
    return true;
}

/* -------------------------------------------------------------- memory */

static LLVMValueRef addr_i64(Gen *g, LLVMValueRef p) { return LLVMBuildPtrToInt(g->b, p, g->i64, ""); }

/* Packs w elements of dtype d into 32-bit words (w * size >= 4 bytes). */
static void pack_words(Gen *g, LLVMValueRef *elems, int w, DType d, LLVMValueRef *words, int nwords) {
    LLVMTypeRef et = mem_ty(g, d);
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(et, (unsigned)w));
    for (int i = 0; i < w; i++) vec = LLVMBuildInsertElement(g->b, vec, to_mem(g, elems[i], d), ci32(g, i), "");
    LLVMValueRef wv = LLVMBuildBitCast(g->b, vec, LLVMVectorType(g->i32, (unsigned)nwords), "");
    for (int i = 0; i < nwords; i++) words[i] = LLVMBuildExtractElement(g->b, wv, ci32(g, i), "");
}

static void unpack_words(Gen *g, LLVMValueRef *words, int nwords, DType d, int w, LLVMValueRef *elems) {
    LLVMValueRef wv = LLVMGetUndef(LLVMVectorType(g->i32, (unsigned)nwords));
    for (int i = 0; i < nwords; i++) wv = LLVMBuildInsertElement(g->b, wv, words[i], ci32(g, i), "");
    LLVMValueRef vec = LLVMBuildBitCast(g->b, wv, LLVMVectorType(mem_ty(g, d), (unsigned)w), "");
    for (int i = 0; i < w; i++) elems[i] = from_mem(g, LLVMBuildExtractElement(g->b, vec, ci32(g, i), ""), d);
}

static const char *vsuffix(int n) { return n == 4 ? ".v4" : n == 2 ? ".v2" : ""; }

static void reg_list(char *buf, size_t size, int first, int n) {
    size_t at = 0;
    at += (size_t)snprintf(buf + at, size - at, n > 1 ? "{" : "");
    for (int i = 0; i < n; i++) at += (size_t)snprintf(buf + at, size - at, "%s$%d", i ? ", " : "", first + i);
    snprintf(buf + at, size - at, n > 1 ? "}" : "");
}

/* A predicated load of w elements at p; masked-off gives `other`. */
static void masked_load(Gen *g, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *other, int w, DType d,
                        LLVMValueRef *out) {
    int bytes = w * dtype_bytes(d);
    if (bytes < 4) { /* one sub-word element: through a 32-bit register */
        LLVMValueRef init = LLVMBuildZExt(g->b, LLVMBuildBitCast(g->b, to_mem(g, other[0], d),
                                                                  bytes == 2 ? g->i16 : g->i8, ""), g->i32, "");
        LLVMValueRef args[3] = {pred, addr_i64(g, p), init};
        LLVMValueRef v = asm_call(g, g->i32, bytes == 2 ? "@$1 ld.global.u16 $0, [$2];" : "@$1 ld.global.u8 $0, [$2];",
                                  "=r,b,l,0", args, 3, true);
        v = LLVMBuildTrunc(g->b, v, bytes == 2 ? g->i16 : g->i8, "");
        out[0] = from_mem(g, LLVMBuildBitCast(g->b, v, mem_ty(g, d), ""), d);
        return;
    }
    int nwords = bytes / 4;
    LLVMValueRef words[4], args[8];
    pack_words(g, other, w, d, words, nwords);
    args[0] = pred;
    args[1] = addr_i64(g, p);
    char regs[48], text[128], cons[64];
    reg_list(regs, sizeof regs, 0, nwords);
    snprintf(text, sizeof text, "@$%d ld.global%s.b32 %s, [$%d];", nwords, vsuffix(nwords), regs, nwords + 1);
    size_t at = 0;
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, "=r,");
    at += (size_t)snprintf(cons + at, sizeof cons - at, "b,l");
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, ",%d", i);
    for (int i = 0; i < nwords; i++) args[2 + i] = words[i];
    LLVMTypeRef ret = g->i32;
    if (nwords > 1) {
        LLVMTypeRef fields[4] = {g->i32, g->i32, g->i32, g->i32};
        ret = LLVMStructTypeInContext(g->ctx, fields, (unsigned)nwords, 0);
    }
    LLVMValueRef v = asm_call(g, ret, text, cons, args, 2 + nwords, true);
    for (int i = 0; i < nwords; i++) words[i] = nwords > 1 ? LLVMBuildExtractValue(g->b, v, (unsigned)i, "") : v;
    unpack_words(g, words, nwords, d, w, out);
}

static void masked_store(Gen *g, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *vals, int w, DType d) {
    int bytes = w * dtype_bytes(d);
    if (bytes < 4) {
        LLVMValueRef v = LLVMBuildZExt(g->b, LLVMBuildBitCast(g->b, to_mem(g, vals[0], d), bytes == 2 ? g->i16 : g->i8, ""),
                                       g->i32, "");
        LLVMValueRef args[3] = {pred, addr_i64(g, p), v};
        asm_call(g, g->void_t, bytes == 2 ? "@$0 st.global.u16 [$1], $2;" : "@$0 st.global.u8 [$1], $2;",
                 "b,l,r,~{memory}", args, 3, true);
        return;
    }
    int nwords = bytes / 4;
    LLVMValueRef words[4], args[8];
    pack_words(g, vals, w, d, words, nwords);
    args[0] = pred;
    args[1] = addr_i64(g, p);
    for (int i = 0; i < nwords; i++) args[2 + i] = words[i];
    char regs[48], text[128], cons[64];
    reg_list(regs, sizeof regs, 2, nwords);
    snprintf(text, sizeof text, "@$0 st.global%s.b32 [$1], %s;", vsuffix(nwords), regs);
    size_t at = (size_t)snprintf(cons, sizeof cons, "b,l");
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, ",r");
    snprintf(cons + at, sizeof cons - at, ",~{memory}");
    asm_call(g, g->void_t, text, cons, args, 2 + nwords, true);
}

static LLVMValueRef plain_load(Gen *g, LLVMValueRef p, DType d, int align) {
    LLVMValueRef v = LLVMBuildLoad2(g->b, mem_ty(g, d), p, "");
    LLVMSetAlignment(v, (unsigned)align);
    return from_mem(g, v, d);
}

/* One GPU-scope acquire-release atomic on one element. */
static LLVMValueRef atomic(Gen *g, BirOpcode code, LLVMValueRef pred, LLVMValueRef p, LLVMValueRef a,
                           LLVMValueRef b, DType d) {
    bool wide = d == DT_I64, fl = d == DT_F32;
    const char *op = code == BIR_ATOMIC_CAS ? "cas" : code == BIR_ATOMIC_XCHG ? "exch" : "add";
    const char *type = code == BIR_ATOMIC_ADD ? (fl ? "f32" : wide ? "u64" : "u32") : (wide ? "b64" : "b32");
    const char *rc = fl ? "f" : wide ? "l" : "r";
    char text[128], cons[64];
    LLVMValueRef args[5] = {pred, addr_i64(g, p), a, b, NULL};
    LLVMTypeRef t = ty(g, d);
    if (code == BIR_ATOMIC_CAS) {
        snprintf(text, sizeof text, "@$1 atom.acq_rel.gpu.global.%s.%s $0, [$2], $3, $4;", op, type);
        snprintf(cons, sizeof cons, "=%s,b,l,%s,%s,0,~{memory}", rc, rc, rc);
        args[4] = LLVMConstNull(t);
        return asm_call(g, t, text, cons, args, 5, true);
    }
    snprintf(text, sizeof text, "@$1 atom.acq_rel.gpu.global.%s.%s $0, [$2], $3;", op, type);
    snprintf(cons, sizeof cons, "=%s,b,l,%s,0,~{memory}", rc, rc);
    args[3] = LLVMConstNull(t);
    return asm_call(g, t, text, cons, args, 4, true);
}

/* A scalar load or atomic runs on thread 0, and every thread reads its
 * result back through a shared-memory slot: barrier (earlier readers of the
 * slot are done, and for an atomic every earlier access of the program is),
 * thread 0 works and writes, barrier, all read. A scalar store is thread 0's. */
static bool gen_scalar_memory(Gen *g, const BirOp *op, int64_t slot) {
    const int *a = op->operands;
    DType d = vtype(g, a[0]).elem;
    LLVMValueRef p = g->regs[a[0]][0];
    int mask_at = op->code == BIR_LOAD ? 1 : op->code == BIR_ATOMIC_CAS ? -1 : 2;
    LLVMValueRef mask = mask_at >= 0 && a[mask_at] != BIR_NONE ? g->regs[a[mask_at]][0] : NULL;
    if (op->code == BIR_STORE) {
        LLVMValueRef cond = is_thread0(g);
        if (mask) cond = LLVMBuildAnd(g->b, cond, mask, "");
        LLVMBasicBlockRef merge = begin_if(g, cond);
        LLVMValueRef st = LLVMBuildStore(g->b, to_mem(g, g->regs[a[1]][0], d), p);
        LLVMSetAlignment(st, (unsigned)dtype_bytes(d));
        end_if(g, merge);
        return true;
    }
    bool is_atomic = op->code != BIR_LOAD;
    barrier(g); /* an atomic waits for every earlier access of the program; the slot's readers are done */
    LLVMValueRef slot_p = smem_ptr(g, slot, NULL, 0);
    LLVMValueRef init = op->code == BIR_LOAD && a[2] != BIR_NONE ? g->regs[a[2]][0] : LLVMConstNull(ty(g, d));
    LLVMBasicBlockRef t0 = begin_if(g, is_thread0(g));
    LLVMValueRef v = init;
    if (is_atomic) asm_call(g, g->void_t, "fence.acq_rel.gpu;", "~{memory}", NULL, 0, true);
    LLVMValueRef pred = mask ? mask : LLVMConstInt(g->i1, 1, 0);
    if (op->code == BIR_LOAD) {
        if (mask) {
            LLVMValueRef out;
            masked_load(g, p, pred, &init, 1, d, &out);
            v = out;
        } else {
            v = plain_load(g, p, d, dtype_bytes(d));
        }
    } else {
        LLVMValueRef x = g->regs[a[1]][0], y = a[2] != BIR_NONE && op->code == BIR_ATOMIC_CAS ? g->regs[a[2]][0] : NULL;
        v = atomic(g, op->code, pred, p, x, y, d);
    }
    LLVMValueRef st = LLVMBuildStore(g->b, to_mem(g, v, d), slot_p);
    LLVMSetAlignment(st, 8);
    end_if(g, t0);
    barrier(g);
    LLVMValueRef ld = LLVMBuildLoad2(g->b, mem_ty(g, d), smem_ptr(g, slot, NULL, 0), "");
    LLVMSetAlignment(ld, 8);
    new_regs(g, op->results[0])[0] = from_mem(g, ld, d);
    return true;
}

static bool gen_memory(Gen *g, const BirOp *op, int64_t slot) {
    const int *a = op->operands;
    BlkType pt = vtype(g, a[0]);
    if (pt.rank == 0) return gen_scalar_memory(g, op, slot);
    DType d = pt.elem;
    const Layout *l = &g->plan->layouts[a[0]];
    int w = plan_access_width(g->plan, g->f, op);
    int es = dtype_bytes(d);
    LLVMValueRef *ptr = g->regs[a[0]];
    int mask_at = op->code == BIR_LOAD ? 1 : op->code == BIR_ATOMIC_CAS ? -1 : 2;
    LLVMValueRef *mask = mask_at >= 0 && a[mask_at] != BIR_NONE ? g->regs[a[mask_at]] : NULL;
    LLVMValueRef *out = op->nresults ? new_regs(g, op->results[0]) : NULL;
    if (op->code == BIR_ATOMIC_CAS || op->code == BIR_ATOMIC_XCHG || op->code == BIR_ATOMIC_ADD) {
        LLVMValueRef own = owner(g, l); /* copies of an element must not each add */
        for (int k = 0; k < l->nregs; k++) {
            LLVMValueRef pred = mask ? LLVMBuildAnd(g->b, own, mask[k], "") : own;
            LLVMValueRef y = op->code == BIR_ATOMIC_CAS ? g->regs[a[2]][k] : NULL;
            out[k] = atomic(g, op->code, pred, ptr[k], g->regs[a[1]][k], y, d);
        }
        return true;
    }
    for (int k = 0; k < l->nregs; k += w) {
        if (op->code == BIR_LOAD) {
            if (mask) {
                LLVMValueRef other[16];
                for (int i = 0; i < w; i++)
                    other[i] = a[2] != BIR_NONE ? g->regs[a[2]][k + i] : LLVMConstNull(ty(g, d));
                masked_load(g, ptr[k], mask[k], other, w, d, out + k);
            } else if (w == 1) {
                out[k] = plain_load(g, ptr[k], d, es);
            } else {
                LLVMTypeRef vt = LLVMVectorType(mem_ty(g, d), (unsigned)w);
                LLVMValueRef v = LLVMBuildLoad2(g->b, vt, ptr[k], "");
                LLVMSetAlignment(v, (unsigned)(w * es));
                for (int i = 0; i < w; i++) out[k + i] = from_mem(g, LLVMBuildExtractElement(g->b, v, ci32(g, i), ""), d);
            }
        } else {
            LLVMValueRef *vals = g->regs[a[1]] + k;
            if (mask) {
                masked_store(g, ptr[k], mask[k], vals, w, d);
            } else if (w == 1) {
                LLVMValueRef st = LLVMBuildStore(g->b, to_mem(g, vals[0], d), ptr[k]);
                LLVMSetAlignment(st, (unsigned)es);
            } else {
                LLVMTypeRef vt = LLVMVectorType(mem_ty(g, d), (unsigned)w);
                LLVMValueRef v = LLVMGetUndef(vt);
                for (int i = 0; i < w; i++) v = LLVMBuildInsertElement(g->b, v, to_mem(g, vals[i], d), ci32(g, i), "");
                LLVMValueRef st = LLVMBuildStore(g->b, v, ptr[k]);
                LLVMSetAlignment(st, (unsigned)(w * es));
            }
        }
    }
    return true;
}

/* ---------------------------------------------------------- reductions */

typedef struct {
    BirOpcode code;
    DType d;      /* the dtype combined: f32 for f16/bf16 max/min */
    bool is_arg;  /* argmax/argmin: (value, index) pairs */
} Reduction;

static LLVMValueRef identity(Gen *g, const Reduction *R) {
    bool is_max = R->code == BIR_REDUCE_MAX || R->code == BIR_ARGMAX;
    LLVMTypeRef t = ty(g, R->d);
    if (R->code == BIR_REDUCE_SUM) return LLVMConstNull(t);
    if (dtype_is_float(R->d)) return LLVMConstReal(t, is_max ? -__builtin_inf() : __builtin_inf());
    int bits = dtype_bits(R->d);
    if (!dtype_is_signed(R->d)) return is_max ? LLVMConstNull(t) : LLVMConstAllOnes(t);
    unsigned long long min = 1ull << (bits - 1);
    return LLVMConstInt(t, is_max ? min : min - 1, 0);
}

/* Combines (a, ia) with (b, ib); indices only for arg reductions, where
 * the larger (smaller) value wins, a NaN beats any number, and ties go to
 * the smaller index. */
static void combine(Gen *g, const Reduction *R, LLVMValueRef *a, LLVMValueRef *ia, LLVMValueRef b, LLVMValueRef ib) {
    LLVMBuilderRef bl = g->b;
    if (R->code == BIR_REDUCE_SUM) {
        *a = dtype_is_float(R->d) ? LLVMBuildFAdd(bl, *a, b, "") : LLVMBuildAdd(bl, *a, b, "");
        return;
    }
    bool is_max = R->code == BIR_REDUCE_MAX || R->code == BIR_ARGMAX;
    if (!R->is_arg) {
        *a = minmax(g, is_max, *a, b, R->d);
        return;
    }
    LLVMValueRef better, tie;
    if (dtype_is_float(R->d)) {
        LLVMValueRef b_nan = LLVMBuildFCmp(bl, LLVMRealUNO, b, b, ""), a_nan = LLVMBuildFCmp(bl, LLVMRealUNO, *a, *a, "");
        better = LLVMBuildFCmp(bl, is_max ? LLVMRealOGT : LLVMRealOLT, b, *a, "");
        better = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, b_nan, LLVMBuildNot(bl, a_nan, ""), ""), "");
        tie = LLVMBuildOr(bl, LLVMBuildFCmp(bl, LLVMRealOEQ, b, *a, ""), LLVMBuildAnd(bl, a_nan, b_nan, ""), "");
    } else {
        LLVMIntPredicate p = dtype_is_signed(R->d) ? (is_max ? LLVMIntSGT : LLVMIntSLT) : (is_max ? LLVMIntUGT : LLVMIntULT);
        better = LLVMBuildICmp(bl, p, b, *a, "");
        tie = LLVMBuildICmp(bl, LLVMIntEQ, b, *a, "");
    }
    better = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, tie, LLVMBuildICmp(bl, LLVMIntSLT, ib, *ia, ""), ""), "");
    *a = LLVMBuildSelect(bl, better, b, *a, "");
    *ia = LLVMBuildSelect(bl, better, ib, *ia, "");
}

static LLVMValueRef shuffle_xor(Gen *g, LLVMValueRef v, int mask, DType d) {
    if (d == DT_I64) {
        LLVMValueRef lo = LLVMBuildTrunc(g->b, v, g->i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, v, ci64(g, 32), ""), g->i32, "");
        lo = LLVMBuildZExt(g->b, shuffle_xor(g, lo, mask, DT_I32), g->i64, "");
        hi = LLVMBuildZExt(g->b, shuffle_xor(g, hi, mask, DT_I32), g->i64, "");
        return LLVMBuildOr(g->b, lo, LLVMBuildShl(g->b, hi, ci64(g, 32), ""), "");
    }
    bool fl = d == DT_F32;
    LLVMValueRef args[4] = {ci32(g, -1), v, ci32(g, mask), ci32(g, 31)};
    return call(g, fl ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32", fl ? g->f32 : g->i32, args, 4);
}

static int64_t reduce_smem_bytes(Gen *g, const BirOp *op) {
    BlkType xt = vtype(g, op->operands[0]);
    const Layout *l = &g->plan->layouts[op->operands[0]];
    int a = (int)op->attr;
    int64_t others = xt.rank == 2 ? xt.shape[1 - a] : 1;
    DType d = xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype;
    bool is_arg = op->code == BIR_ARGMAX || op->code == BIR_ARGMIN;
    return (int64_t)l->wpc[a] * others * (dtype_bytes(d) + (is_arg ? 4 : 0));
}

static bool gen_reduce(Gen *g, const BirOp *op, int64_t slot) {
    int x = op->operands[0], r = op->results[0];
    BlkType xt = vtype(g, x), rt = vtype(g, r);
    const Layout *l = &g->plan->layouts[x];
    int a = (int)op->attr, rank = xt.rank, other = rank == 2 ? 1 - a : -1, fast = rank - 1;
    Reduction R = {op->code, xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype,
                   op->code == BIR_ARGMAX || op->code == BIR_ARGMIN};
    /* 1. within the thread: one partial per position along the other axis */
    int nkeys = other < 0 ? 1 : l->reps[other] * l->spt[other];
    LLVMValueRef acc[256], idx[256];
    int key_reg[256];
    if (nkeys > 256) return gen_fail(g, op, "reduction of a %d-register-per-thread layout is too wide", nkeys);
    for (int k = 0; k < nkeys; k++) acc[k] = NULL, key_reg[k] = -1;
    int64_t tile_a = (int64_t)l->spt[a] * l->tpw[a] * l->wpc[a];
    LLVMValueRef base_a = thread_base(g, l, a);
    for (int k = 0; k < l->nregs; k++) {
        int32_t rep[BLK_MAX_RANK], j[BLK_MAX_RANK];
        layout_reg_parts(l, k, rep, j);
        int key = other < 0 ? 0 : rep[other] * l->spt[other] + j[other];
        LLVMValueRef v = convert(g, g->regs[x][k], xt.dtype, R.d);
        LLVMValueRef i = coord(g, l, a, k);
        if (tile_a > xt.shape[a]) { /* the layout wraps: only the first copy counts */
            LLVMValueRef unwrapped = LLVMBuildAdd(g->b, base_a, ci32(g, rep[a] * tile_a + j[a]), "");
            LLVMValueRef first = LLVMBuildICmp(g->b, LLVMIntULT, unwrapped, ci32(g, xt.shape[a]), "");
            v = LLVMBuildSelect(g->b, first, v, identity(g, &R), "");
        }
        if (!acc[key]) {
            acc[key] = v, idx[key] = i, key_reg[key] = k;
        } else {
            combine(g, &R, &acc[key], &idx[key], v, i);
        }
    }
    /* 2. across the lanes along the axis: a butterfly */
    int lanes = l->tpw[a], stride = a == fast ? 1 : l->tpw[fast];
    for (int m = lanes / 2; m >= 1; m /= 2) {
        for (int k = 0; k < nkeys; k++) {
            LLVMValueRef ov = shuffle_xor(g, acc[k], m * stride, R.d);
            LLVMValueRef oi = R.is_arg ? shuffle_xor(g, idx[k], m * stride, DT_I32) : NULL;
            combine(g, &R, &acc[k], &idx[k], ov, oi);
        }
    }
    /* 3. across warps, through shared memory; every thread then combines the
     * warps' partials for the elements its result layout holds */
    int64_t others = rank == 2 ? xt.shape[other] : 1;
    int warps_a = l->wpc[a], es = dtype_bytes(R.d);
    int64_t idx_at = slot + (int64_t)warps_a * others * es;
    LLVMValueRef lane_a = a == fast ? LLVMBuildURem(g->b, g->lane, ci32(g, l->tpw[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->lane, ci32(g, l->tpw[fast]), "");
    LLVMValueRef warp_a = rank == 1 ? g->warp
                        : a == fast ? LLVMBuildURem(g->b, g->warp, ci32(g, l->wpc[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->warp, ci32(g, l->wpc[fast]), "");
    barrier(g);
    LLVMBasicBlockRef merge = begin_if(g, LLVMBuildICmp(g->b, LLVMIntEQ, lane_a, ci32(g, 0), ""));
    for (int k = 0; k < nkeys; k++) {
        LLVMValueRef oc = other < 0 ? ci32(g, 0) : coord(g, l, other, key_reg[k]);
        LLVMValueRef at = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, warp_a, ci32(g, (int32_t)others), ""), oc, "");
        LLVMBuildStore(g->b, acc[k], smem_ptr(g, slot, at, es));
        if (R.is_arg) LLVMBuildStore(g->b, idx[k], smem_ptr(g, idx_at, at, 4));
    }
    end_if(g, merge);
    barrier(g);
    const Layout *lr = &g->plan->layouts[r];
    int n_out = rt.rank ? lr->nregs : 1;
    LLVMValueRef *out = new_regs(g, r);
    for (int k = 0; k < n_out; k++) {
        LLVMValueRef c = rt.rank ? coord(g, lr, 0, k) : ci32(g, 0);
        LLVMValueRef v = NULL, vi = NULL;
        for (int w = 0; w < warps_a; w++) {
            LLVMValueRef at = LLVMBuildAdd(g->b, c, ci32(g, (int32_t)(w * others)), "");
            LLVMValueRef pv = LLVMBuildLoad2(g->b, ty(g, R.d), smem_ptr(g, slot, at, es), "");
            LLVMValueRef pi = R.is_arg ? LLVMBuildLoad2(g->b, g->i32, smem_ptr(g, idx_at, at, 4), "") : NULL;
            if (!v) v = pv, vi = pi;
            else combine(g, &R, &v, &vi, pv, pi);
        }
        out[k] = R.is_arg ? vi : convert(g, v, R.d, rt.dtype);
    }
    return true;
}

/* ------------------------------------------------------------ printing */

/* device_print: each thread prints the elements it holds first (one line
 * each, like the interpreter: "pid (x, y, z) idx [i] prefix value"); a
 * scalar prints from thread 0. Through vprintf, which the driver links. */
static bool gen_print(Gen *g, const BirOp *op) {
    LLVMValueRef pid[3];
    for (int i = 0; i < 3; i++) {
        char name[40];
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.ctaid.%c", "xyz"[i]);
        pid[i] = call0(g, name, g->i32);
    }
    LLVMTypeRef vp_params[2] = {g->genptr, g->genptr};
    LLVMTypeRef vp_ty = LLVMFunctionType(g->i32, vp_params, 2, 0);
    LLVMValueRef vprintf = LLVMGetNamedFunction(g->mod, "vprintf");
    if (!vprintf) vprintf = LLVMAddFunction(g->mod, "vprintf", vp_ty);
    for (int a = 0; a < (op->noperands ? op->noperands : 1); a++) {
        int v = op->noperands ? op->operands[a] : -1;
        BlkType t = v >= 0 ? vtype(g, v) : type_scalar(DT_VOID);
        const Layout *l = v >= 0 ? &g->plan->layouts[v] : NULL;
        int n = t.rank ? l->nregs : 1;
        LLVMValueRef cond = t.rank ? owner(g, l) : is_thread0(g);
        LLVMBasicBlockRef merge = begin_if(g, cond);
        for (int k = 0; k < n; k++) {
            char fmt[256];
            const char *vf = v < 0 ? "" : dtype_is_float(t.dtype) ? " %.9g" : t.dtype == DT_PTR ? " 0x%llx" : " %lld";
            if (t.rank == 2) snprintf(fmt, sizeof fmt, "pid (%%d, %%d, %%d) idx [%%d, %%d] %s%s\n", op->text, vf);
            else if (t.rank == 1) snprintf(fmt, sizeof fmt, "pid (%%d, %%d, %%d) idx [%%d] %s%s\n", op->text, vf);
            else snprintf(fmt, sizeof fmt, "pid (%%d, %%d, %%d) %s%s\n", op->text, vf);
            LLVMValueRef fields[6];
            int nf = 0;
            for (int i = 0; i < 3; i++) fields[nf++] = pid[i];
            for (int d = 0; d < t.rank; d++) fields[nf++] = coord(g, l, d, k);
            if (v >= 0) {
                LLVMValueRef x = g->regs[v][k];
                if (dtype_is_float(t.dtype)) x = LLVMBuildFPExt(g->b, convert(g, x, t.dtype, DT_F32), g->f64, "");
                else if (t.dtype == DT_PTR) x = addr_i64(g, x);
                else x = convert(g, x, t.dtype, DT_I64);
                fields[nf++] = x;
            }
            LLVMTypeRef ftys[6];
            for (int i = 0; i < nf; i++) ftys[i] = LLVMTypeOf(fields[i]);
            LLVMTypeRef st = LLVMStructTypeInContext(g->ctx, ftys, (unsigned)nf, 0);
            /* the argument buffer lives in the entry block, so loops do not grow the stack */
            LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
            LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(g->fn);
            LLVMPositionBuilderBefore(g->b, LLVMGetFirstInstruction(entry));
            LLVMValueRef buf = LLVMBuildAlloca(g->b, st, "");
            LLVMPositionBuilderAtEnd(g->b, here);
            for (int i = 0; i < nf; i++) LLVMBuildStore(g->b, fields[i], LLVMBuildStructGEP2(g->b, st, buf, (unsigned)i, ""));
            LLVMValueRef args[2] = {LLVMBuildGlobalStringPtr(g->b, fmt, ""), buf};
            LLVMBuildCall2(g->b, vp_ty, vprintf, args, 2, "");
        }
        end_if(g, merge);
    }
    return true;
}

/* -------------------------------------------------------- control flow */

static bool gen_block(Gen *g, const BirBlock *b);

static void bind(Gen *g, int v, LLVMValueRef *vals) {
    int n = nregs(g, v);
    LLVMValueRef *out = new_regs(g, v);
    memcpy(out, vals, (size_t)n * sizeof *out);
}

/* Phis for a list of values (each with its registers), in block bb. */
static LLVMValueRef **make_phis(Gen *g, const int *like, int n) {
    LLVMValueRef **phis = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *phis);
    for (int i = 0; i < n; i++) {
        int m = nregs(g, like[i]);
        phis[i] = arena_alloc(&g->arena, (size_t)m * sizeof(LLVMValueRef));
        for (int k = 0; k < m; k++) phis[i][k] = LLVMBuildPhi(g->b, ty(g, vtype(g, like[i]).dtype), "");
    }
    return phis;
}

static void add_incoming(Gen *g, LLVMValueRef **phis, const int *like, int n, const int *from_values,
                         LLVMValueRef **from_regs, LLVMBasicBlockRef from) {
    for (int i = 0; i < n; i++) {
        int m = nregs(g, like[i]);
        for (int k = 0; k < m; k++) {
            LLVMValueRef v = from_values ? g->regs[from_values[i]][k] : from_regs[i][k];
            LLVMAddIncoming(phis[i][k], &v, &from, 1);
        }
    }
}

static bool gen_for(Gen *g, const BirOp *op) {
    const BirBlock *body = op->regions[0];
    int n = op->nresults;
    DType d = vtype(g, op->operands[0]).dtype;
    LLVMValueRef lb = g->regs[op->operands[0]][0], ub = g->regs[op->operands[1]][0], step = g->regs[op->operands[2]][0];
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for");
    LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "for.end");
    LLVMBuildBr(g->b, header);
    LLVMPositionBuilderAtEnd(g->b, header);
    LLVMValueRef iv = LLVMBuildPhi(g->b, ty(g, d), "");
    LLVMAddIncoming(iv, &lb, &pre, 1);
    LLVMValueRef **carried = make_phis(g, op->results, n);
    add_incoming(g, carried, op->results, n, op->operands + 3, NULL, pre);
    LLVMIntPredicate lt = op->attr ? LLVMIntSGT : dtype_is_signed(d) ? LLVMIntSLT : LLVMIntULT;
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, iv, ub, ""), body_bb, exit);
    LLVMPositionBuilderAtEnd(g->b, body_bb);
    bind(g, body->args[0], &iv);
    for (int i = 0; i < n; i++) bind(g, body->args[1 + i], carried[i]);
    if (!gen_block(g, body)) return false;
    LLVMBasicBlockRef latch = NULL;
    const BirOp *y = bir_block_terminator(body);
    if (!g->terminated) {
        /* the loop ends rather than wrap when iv + step overflows (as on the interpreter) */
        char name[48];
        const char *bits = d == DT_I64 ? "i64" : "i32";
        snprintf(name, sizeof name, "llvm.%s.with.overflow.%s", dtype_is_signed(d) ? "sadd" : "uadd", bits);
        LLVMTypeRef fields[2] = {ty(g, d), g->i1};
        LLVMValueRef args[2] = {iv, step};
        LLVMValueRef res = call(g, name, LLVMStructTypeInContext(g->ctx, fields, 2, 0), args, 2);
        LLVMValueRef next = LLVMBuildExtractValue(g->b, res, 0, "");
        LLVMValueRef ovf = LLVMBuildExtractValue(g->b, res, 1, "");
        latch = LLVMGetInsertBlock(g->b);
        LLVMAddIncoming(iv, &next, &latch, 1);
        add_incoming(g, carried, op->results, n, y->operands, NULL, latch);
        LLVMBuildCondBr(g->b, ovf, exit, header);
    }
    g->terminated = false;
    LLVMPositionBuilderAtEnd(g->b, exit);
    LLVMValueRef **res = make_phis(g, op->results, n);
    add_incoming(g, res, op->results, n, NULL, carried, header);
    if (latch) add_incoming(g, res, op->results, n, y->operands, NULL, latch);
    for (int i = 0; i < n; i++) bind(g, op->results[i], res[i]);
    return true;
}

static bool gen_while(Gen *g, const BirOp *op) {
    const BirBlock *cond = op->regions[0], *body = op->regions[1];
    int n = op->nresults;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while");
    LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "while.end");
    LLVMBuildBr(g->b, header);
    LLVMPositionBuilderAtEnd(g->b, header);
    LLVMValueRef **carried = make_phis(g, op->results, n);
    add_incoming(g, carried, op->results, n, op->operands, NULL, pre);
    for (int i = 0; i < n; i++) bind(g, cond->args[i], carried[i]);
    if (!gen_block(g, cond)) return false;
    if (g->terminated) return gen_fail(g, op, "a return in a loop condition");
    const BirOp *c = bir_block_terminator(cond);
    LLVMBuildCondBr(g->b, g->regs[c->operands[0]][0], body_bb, exit);
    LLVMPositionBuilderAtEnd(g->b, body_bb);
    for (int i = 0; i < n; i++) bind(g, body->args[i], carried[i]);
    if (!gen_block(g, body)) return false;
    if (!g->terminated) {
        const BirOp *y = bir_block_terminator(body);
        add_incoming(g, carried, op->results, n, y->operands, NULL, LLVMGetInsertBlock(g->b));
        LLVMBuildBr(g->b, header);
    }
    g->terminated = false;
    LLVMPositionBuilderAtEnd(g->b, exit);
    for (int i = 0; i < n; i++) bind(g, op->results[i], carried[i]);
    return true;
}

static bool gen_if(Gen *g, const BirOp *op) {
    int n = op->nresults;
    LLVMBasicBlockRef bbs[2] = {LLVMAppendBasicBlockInContext(g->ctx, g->fn, "then"),
                                LLVMAppendBasicBlockInContext(g->ctx, g->fn, "else")};
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "endif");
    LLVMBuildCondBr(g->b, g->regs[op->operands[0]][0], bbs[0], bbs[1]);
    LLVMBasicBlockRef ends[2] = {NULL, NULL};
    const BirOp *ys[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(g->b, bbs[r]);
        if (!gen_block(g, op->regions[r])) return false;
        if (!g->terminated) {
            ends[r] = LLVMGetInsertBlock(g->b);
            ys[r] = bir_block_terminator(op->regions[r]);
            LLVMBuildBr(g->b, merge);
        }
        g->terminated = false;
    }
    LLVMPositionBuilderAtEnd(g->b, merge);
    if (!ends[0] && !ends[1]) {
        LLVMBuildUnreachable(g->b);
        g->terminated = true;
        return true;
    }
    LLVMValueRef **res = make_phis(g, op->results, n);
    for (int r = 0; r < 2; r++)
        if (ends[r]) add_incoming(g, res, op->results, n, ys[r]->operands, NULL, ends[r]);
    for (int i = 0; i < n; i++) bind(g, op->results[i], res[i]);
    return true;
}

/* ------------------------------------------------------------------ ops */

/* Shared memory an op needs. */
static int64_t smem_need(Gen *g, const BirOp *op) {
    switch (op->code) {
    case BIR_LOAD: case BIR_ATOMIC_CAS: case BIR_ATOMIC_XCHG: case BIR_ATOMIC_ADD:
        return vtype(g, op->operands[0]).rank == 0 ? 8 : 0;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: {
        if (can_remat(g, op->results[0], 0)) return 0;
        BlkType xt = vtype(g, op->operands[0]);
        return type_numel(xt) * (xt.dtype == DT_PTR ? 8 : dtype_bytes(xt.dtype));
    }
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return reduce_smem_bytes(g, op);
    default: return 0;
    }
}

static void plan_smem(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        int64_t need = smem_need(g, op);
        if (need > g->smem_size) g->smem_size = need;
        for (int r = 0; r < op->nregions; r++) plan_smem(g, op->regions[r]);
    }
}

static void set_location(Gen *g, const BirOp *op) {
    LLVMMetadataRef loc = LLVMDIBuilderCreateDebugLocation(g->ctx, op->line ? op->line : 1, op->col, g->di_sub, NULL);
    LLVMSetCurrentDebugLocation2(g->b, loc);
}

static bool gen_op(Gen *g, const BirOp *op) {
    const int64_t slot = 0; /* the shared region (see smem_size) */
    set_location(g, op);
    const int *a = op->operands;
    int r = op->nresults == 1 ? op->results[0] : -1;
    switch (op->code) {
    case BIR_CONST: {
        DType d = vtype(g, r).dtype;
        LLVMValueRef c = dtype_is_float(d) ? LLVMConstReal(ty(g, d), op->value.f)
                                           : LLVMConstInt(ty(g, d), (unsigned long long)op->value.i, 1);
        new_regs(g, r)[0] = c;
        return true;
    }
    case BIR_PROGRAM_ID: case BIR_NUM_PROGRAMS: {
        char name[48];
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.%s.%c", op->code == BIR_PROGRAM_ID ? "ctaid" : "nctaid",
                 "xyz"[op->attr]);
        new_regs(g, r)[0] = call0(g, name, g->i32);
        return true;
    }
    case BIR_ARANGE: {
        const Layout *l = &g->plan->layouts[r];
        LLVMValueRef *out = new_regs(g, r);
        for (int k = 0; k < l->nregs; k++) out[k] = LLVMBuildAdd(g->b, coord(g, l, 0, k), ci32(g, op->attr), "");
        return true;
    }
    case BIR_SPLAT: {
        LLVMValueRef *out = new_regs(g, r);
        for (int k = 0; k < nregs(g, r); k++) out[k] = g->regs[a[0]][0];
        return true;
    }
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: return gen_reshape(g, op, slot);
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_XCHG: case BIR_ATOMIC_ADD:
        return gen_memory(g, op, slot);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return gen_reduce(g, op, slot);
    case BIR_FOR: return gen_for(g, op);
    case BIR_WHILE: return gen_while(g, op);
    case BIR_IF: return gen_if(g, op);
    case BIR_YIELD: case BIR_CONDITION: return true; /* read by the parent */
    case BIR_RETURN:
        LLVMBuildRetVoid(g->b);
        g->terminated = true;
        return true;
    case BIR_BARRIER: barrier(g); return true;
    case BIR_PRINT: return gen_print(g, op);
    default:
        if (is_elementwise(op->code)) {
            LLVMValueRef *out = new_regs(g, r);
            for (int k = 0; k < nregs(g, r); k++) {
                LLVMValueRef x[3];
                for (int i = 0; i < op->noperands; i++) {
                    /* a scalar operand of a block op only occurs for rand's seed */
                    x[i] = vtype(g, a[i]).rank ? g->regs[a[i]][k] : g->regs[a[i]][0];
                }
                out[k] = elementwise(g, op, x);
            }
            return true;
        }
        return gen_fail(g, op, "the NVPTX backend cannot lower '%s'", bir_opcode_name(op->code));
    }
}

static bool gen_block(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (g->terminated) break; /* after a return: dead code */
        if (!gen_op(g, op)) return false;
    }
    return true;
}

/* ------------------------------------------------------------- kernels */

static void add_annotation(Gen *g, const char *key, int value) {
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(ci32(g, value))};
    LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, md, 3)));
}

static bool gen_kernel(BackendModule *bm, const BirFunction *f, const BackendOptions *opt, LLVMDIBuilderRef di,
                       LLVMMetadataRef di_file, char *err, size_t err_size) {
    Gen gen = {.ctx = bm->ctx, .mod = bm->mod, .f = f, .opt = opt, .err = err,
               .err_size = err_size};
    Gen *g = &gen;
    g->b = LLVMCreateBuilderInContext(g->ctx);
    g->i1 = LLVMInt1TypeInContext(g->ctx);
    g->i8 = LLVMInt8TypeInContext(g->ctx);
    g->i16 = LLVMInt16TypeInContext(g->ctx);
    g->i32 = LLVMInt32TypeInContext(g->ctx);
    g->i64 = LLVMInt64TypeInContext(g->ctx);
    g->f16 = LLVMHalfTypeInContext(g->ctx);
    g->bf16 = LLVMBFloatTypeInContext(g->ctx);
    g->f32 = LLVMFloatTypeInContext(g->ctx);
    g->f64 = LLVMDoubleTypeInContext(g->ctx);
    g->void_t = LLVMVoidTypeInContext(g->ctx);
    g->gptr = LLVMPointerTypeInContext(g->ctx, 1);
    g->genptr = LLVMPointerTypeInContext(g->ctx, 0);
    g->plan = plan_kernel(&g->arena, f, opt->num_warps, opt->param_div);
    g->regs = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *g->regs);

    LLVMTypeRef params[64];
    if (f->nparams > 64) {
        arena_free(&g->arena);
        LLVMDisposeBuilder(g->b);
        return gen_fail(g, NULL, "more than 64 parameters");
    }
    for (int i = 0; i < f->nparams; i++) params[i] = f->params[i].type.dtype == DT_I1 ? g->i8 : ty(g, f->params[i].type.dtype);
    g->fn = LLVMAddFunction(g->mod, f->name, LLVMFunctionType(g->void_t, params, (unsigned)f->nparams, 0));
    add_annotation(g, "kernel", 1);
    add_annotation(g, "maxntidx", 32 * g->plan->num_warps);
    uint32_t line = f->body->ops.len ? ((BirOp *)f->body->ops.items[0])->line : 1;
    LLVMMetadataRef sub_ty = LLVMDIBuilderCreateSubroutineType(di, di_file, NULL, 0, LLVMDIFlagZero);
    g->di_sub = LLVMDIBuilderCreateFunction(di, di_file, f->name, strlen(f->name), f->name, strlen(f->name), di_file,
                                            line, sub_ty, 0, 1, line, LLVMDIFlagZero, 1);
    LLVMSetSubprogram(g->fn, g->di_sub);

    plan_smem(g, f->body);
    g->smem_size = (g->smem_size + 15) / 16 * 16;
    bool ok = true;
    if (g->smem_size > 48 * 1024)
        ok = gen_fail(g, NULL, "the kernel needs %lld bytes of shared memory (limit 49152); use smaller blocks",
                      (long long)g->smem_size);
    if (g->smem_size) {
        char name[160];
        snprintf(name, sizeof name, "%s_smem", f->name);
        LLVMTypeRef at = LLVMArrayType2(g->i8, (uint64_t)g->smem_size);
        g->smem = LLVMAddGlobalInAddressSpace(g->mod, at, name, 3);
        LLVMSetInitializer(g->smem, LLVMGetUndef(at));
        LLVMSetLinkage(g->smem, LLVMInternalLinkage);
        LLVMSetAlignment(g->smem, 16);
    }

    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry");
    LLVMPositionBuilderAtEnd(g->b, entry);
    LLVMSetCurrentDebugLocation2(g->b, LLVMDIBuilderCreateDebugLocation(g->ctx, line, 1, g->di_sub, NULL));
    g->tid = call0(g, "llvm.nvvm.read.ptx.sreg.tid.x", g->i32);
    g->lane = LLVMBuildAnd(g->b, g->tid, ci32(g, 31), "");
    g->warp = LLVMBuildLShr(g->b, g->tid, ci32(g, 5), "");
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(g->fn, (unsigned)i);
        LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        if (f->params[i].type.dtype == DT_I1) p = LLVMBuildICmp(g->b, LLVMIntNE, p, LLVMConstInt(g->i8, 0, 0), "");
        new_regs(g, f->params[i].value)[0] = p;
    }
    ok = ok && gen_block(g, f->body);
    if (ok && !g->terminated) LLVMBuildRetVoid(g->b);
    if (ok && bm->nkernels < MAX_KERNELS) {
        bm->kernel_names[bm->nkernels] = f->name;
        bm->num_warps[bm->nkernels] = g->plan->num_warps;
        bm->smem_bytes[bm->nkernels++] = g->smem_size;
    }
    LLVMDisposeBuilder(g->b);
    arena_free(&g->arena);
    return ok;
}

BackendModule *codegen_module(const BirModule *m, const char *only, const BackendOptions *opt, char *err,
                              size_t err_size) {
    err[0] = 0;
    const char *arch = opt->arch ? opt->arch : "sm_90";
    const char *features = backend_arch_features(arch);
    if (!features) {
        snprintf(err, err_size, "unknown --arch '%s' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)", arch);
        return NULL;
    }
    BackendModule *bm = calloc(1, sizeof *bm);
    if (!bm) return NULL;
    snprintf(bm->arch, sizeof bm->arch, "%s", arch);
    bm->features = features;
    bm->ctx = LLVMContextCreate();
    const char *src_name = m->nkernels && m->kernels[0]->src ? m->kernels[0]->src->name : "kernel.blk";
    bm->mod = LLVMModuleCreateWithNameInContext(src_name, bm->ctx);
    LLVMSetTarget(bm->mod, "nvptx64-nvidia-cuda");
    LLVMSetDataLayout(bm->mod, "e-i64:64-i128:128-v16:16-v32:32-n16:32:64");
    /* Source lines: a compile unit that emits only .file/.loc directives
     * (DICompileUnit's DebugDirectivesOnly, 3, which the C enum lacks). */
    LLVMDIBuilderRef di = LLVMCreateDIBuilder(bm->mod);
    const char *slash = strrchr(src_name, '/');
    const char *base = slash ? slash + 1 : src_name;
    size_t dir_len = slash ? (size_t)(slash - src_name) : 1;
    LLVMMetadataRef file = LLVMDIBuilderCreateFile(di, base, strlen(base), slash ? src_name : ".", dir_len);
    LLVMDIBuilderCreateCompileUnit(di, LLVMDWARFSourceLanguageC, file, "blkc " BLKC_VERSION, strlen("blkc " BLKC_VERSION), 1,
                                   "", 0, 0, "", 0, (LLVMDWARFEmissionKind)3, 0, 0, 0, "", 0, "", 0);
    LLVMAddModuleFlag(bm->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(bm->ctx), LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(bm->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(bm->ctx), 2, 0)));
    bool ok = true;
    BackendOptions per_kernel = *opt;
    if (!only) per_kernel.param_div = NULL; /* launch facts belong to one kernel */
    for (int i = 0; i < m->nkernels && ok; i++) {
        if (only && strcmp(m->kernels[i]->name, only) != 0) continue;
        ok = gen_kernel(bm, m->kernels[i], &per_kernel, di, file, err, err_size);
    }
    LLVMDIBuilderFinalize(di);
    LLVMDisposeDIBuilder(di);
    if (!ok) {
        backend_module_free(bm);
        return NULL;
    }
    return bm;
}

int backend_kernel_num_warps(const BackendModule *bm, const char *name) {
    for (int i = 0; i < bm->nkernels; i++)
        if (strcmp(bm->kernel_names[i], name) == 0) return bm->num_warps[i];
    return 0;
}

int64_t backend_kernel_shared_bytes(const BackendModule *bm, const char *name) {
    for (int i = 0; i < bm->nkernels; i++)
        if (strcmp(bm->kernel_names[i], name) == 0) return bm->smem_bytes[i];
    return 0;
}

void backend_module_free(BackendModule *bm) {
    if (!bm) return;
    if (bm->mod) LLVMDisposeModule(bm->mod);
    if (bm->ctx) LLVMContextDispose(bm->ctx);
    free(bm);
}

/* For ptx.c: the module and its target. */
LLVMModuleRef backend_llvm_module(BackendModule *bm, const char **arch, const char **features);
LLVMModuleRef backend_llvm_module(BackendModule *bm, const char **arch, const char **features) {
    *arch = bm->arch;
    *features = bm->features;
    return bm->mod;
}
