/* dot.c: the matrix product on the FMA path: both operands go through
 * shared memory (a as [M, K], b as [K, N], row-major), then every thread
 * computes the outputs its layout holds as acc + a[m, k] * b[k, n] over k in
 * increasing order, one f32 fma per term — the interpreter's order, so the
 * result is bit-exact with it (products of f16, bf16 and tf32 values are
 * exact in f32). "tf32" rounds each operand to TF32 first; "tf32x3" adds
 * the lo*hi, hi*lo and hi*hi passes in that order. */
#include "gen.h"

int64_t nvptx_dot_smem_bytes(Gen *g, const BirOp *op) {
    BlkType at = vtype(g, op->operands[0]), bt = vtype(g, op->operands[1]);
    return (type_numel(at) + type_numel(bt)) * dtype_bytes(at.dtype);
}

/* Every thread stores the elements it holds of v, row-major at `at`. */
static void store_block(Gen *g, int v, int64_t at) {
    BlkType t = vtype(g, v);
    const Layout *l = &g->plan->layouts[v];
    int es = dtype_bytes(t.dtype);
    for (int r = 0; r < l->nregs; r++) {
        LLVMValueRef row = nvptx_coord(g, l, 0, r), col = nvptx_coord(g, l, 1, r);
        LLVMValueRef idx = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, row, ci32(g, t.shape[1]), ""), col, "");
        LLVMValueRef st = LLVMBuildStore(g->b, g->regs[v][r], nvptx_smem_ptr(g, at, idx, es));
        LLVMSetAlignment(st, (unsigned)es);
    }
}

/* x rounded to TF32 as cvt.rna.tf32.f32 does (ties away from zero), by
 * integer arithmetic; infinities and NaN unchanged. */
static LLVMValueRef to_tf32(Gen *g, LLVMValueRef x) {
    LLVMValueRef u = LLVMBuildBitCast(g->b, x, g->i32, "");
    LLVMValueRef rounded = LLVMBuildAnd(g->b, LLVMBuildAdd(g->b, u, ci32(g, 0x1000), ""), ci32(g, ~0x1fff), "");
    LLVMValueRef finite = LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, u, ci32(g, 0x7f800000), ""),
                                        ci32(g, 0x7f800000), "");
    return LLVMBuildBitCast(g->b, LLVMBuildSelect(g->b, finite, rounded, u, ""), g->f32, "");
}

/* An operand element as the precision wants it: part 0 as is, 1 the TF32
 * high part, 2 the TF32 low part. */
static LLVMValueRef operand_part(Gen *g, LLVMValueRef x, int part) {
    if (part == 0) return x;
    LLVMValueRef hi = to_tf32(g, x);
    return part == 1 ? hi : to_tf32(g, LLVMBuildFSub(g->b, x, hi, ""));
}

bool nvptx_gen_dot(Gen *g, const BirOp *op, int64_t smem_at) {
    int a = op->operands[0], b = op->operands[1], acc = op->operands[2], r = op->results[0];
    BlkType at = vtype(g, a), bt = vtype(g, b);
    int32_t K = at.shape[1], N = bt.shape[1];
    DType d = at.dtype;
    int es = dtype_bytes(d);
    int64_t b_at = smem_at + type_numel(at) * es;
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    store_block(g, a, smem_at);
    store_block(g, b, b_at);
    nvptx_barrier(g);

    const Layout *l = &g->plan->layouts[r];
    int n = l->nregs;
    LLVMValueRef *rows = arena_alloc(&g->arena, (size_t)n * sizeof *rows);
    LLVMValueRef *cols = arena_alloc(&g->arena, (size_t)n * sizeof *cols);
    for (int i = 0; i < n; i++) {
        rows[i] = LLVMBuildMul(g->b, nvptx_coord(g, l, 0, i), ci32(g, K), "");
        cols[i] = nvptx_coord(g, l, 1, i);
    }
    static const int ieee[1][2] = {{0, 0}}, tf32[1][2] = {{1, 1}}, tf32x3[3][2] = {{2, 1}, {1, 2}, {1, 1}};
    const int(*passes)[2] = op->attr == DOT_TF32 ? tf32 : op->attr == DOT_TF32X3 ? tf32x3 : ieee;
    int npasses = op->attr == DOT_TF32X3 ? 3 : 1;
    LLVMValueRef *c = arena_alloc(&g->arena, (size_t)n * sizeof *c);
    for (int i = 0; i < n; i++) c[i] = g->regs[acc][i];
    LLVMTypeRef et = ty(g, d);
    for (int p = 0; p < npasses; p++) {
        /* for k = 0 .. K-1 (K >= 16): one fma per output element */
        LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
        LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dot.k");
        LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "dot.end");
        LLVMBuildBr(g->b, body);
        LLVMPositionBuilderAtEnd(g->b, body);
        LLVMValueRef k = LLVMBuildPhi(g->b, g->i32, "k");
        LLVMValueRef zero = ci32(g, 0);
        LLVMAddIncoming(k, &zero, &pre, 1);
        LLVMValueRef *phis = arena_alloc(&g->arena, (size_t)n * sizeof *phis), *next = arena_alloc(&g->arena, (size_t)n * sizeof *next);
        for (int i = 0; i < n; i++) {
            phis[i] = LLVMBuildPhi(g->b, g->f32, "");
            LLVMAddIncoming(phis[i], &c[i], &pre, 1);
        }
        LLVMValueRef kn = LLVMBuildMul(g->b, k, ci32(g, N), "");
        for (int i = 0; i < n; i++) {
            LLVMValueRef ai = LLVMBuildAdd(g->b, rows[i], k, ""), bi = LLVMBuildAdd(g->b, kn, cols[i], "");
            LLVMValueRef x = LLVMBuildLoad2(g->b, et, nvptx_smem_ptr(g, smem_at, ai, es), "");
            LLVMValueRef y = LLVMBuildLoad2(g->b, et, nvptx_smem_ptr(g, b_at, bi, es), "");
            x = operand_part(g, nvptx_convert_dtype(g, x, d, DT_F32), passes[p][0]);
            y = operand_part(g, nvptx_convert_dtype(g, y, d, DT_F32), passes[p][1]);
            LLVMValueRef args[3] = {x, y, phis[i]};
            next[i] = nvptx_call(g, "llvm.fma.f32", g->f32, args, 3);
        }
        LLVMValueRef k1 = LLVMBuildAdd(g->b, k, ci32(g, 1), "");
        LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
        LLVMAddIncoming(k, &k1, &latch, 1);
        for (int i = 0; i < n; i++) LLVMAddIncoming(phis[i], &next[i], &latch, 1);
        LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, k1, ci32(g, K), ""), body, done);
        LLVMPositionBuilderAtEnd(g->b, done);
        for (int i = 0; i < n; i++) c[i] = next[i];
    }
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int i = 0; i < n; i++) out[i] = c[i];
    return true;
}
