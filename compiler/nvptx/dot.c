/* dot.c: the matrix product, two ways.
 *
 * Tensor cores (f16 and bf16 operands): mma.sync.aligned.m16n8k16 with f32
 * accumulation. The accumulator lives in its m16n8 layout (layout.c); the
 * operands are brought into the layouts the instruction reads (from the
 * thread's own registers when they are there already, as attention's p from
 * the first dot's accumulator, else through shared memory), and every warp
 * issues one mma per 16 x 8 tile of its part of the result and 16-wide step
 * of k.
 *
 * FMA (f32 operands): both operands go through shared memory (a as [M, K],
 * b as [K, N], row-major), then every thread computes the outputs its layout
 * holds as acc + a[m, k] * b[k, n] over k in increasing order, one f32 fma
 * per term — the interpreter's order, so the result is bit-exact with it.
 * "tf32" rounds each operand to TF32 first; "tf32x3" adds the lo*hi, hi*lo
 * and hi*hi passes in that order. */
#include "gen.h"

static bool on_tensor_cores(Gen *g, const BirOp *op) {
    DType d = vtype(g, op->operands[0]).dtype;
    return d == DT_F16 || d == DT_BF16;
}

static Layout operand_layout(Gen *g, const BirOp *op, int which) {
    return nvptx_layout_dot_operand(&g->plan->layouts[op->results[0]], which, vtype(g, op->operands[0]).shape[1]);
}

int64_t nvptx_dot_smem_bytes(Gen *g, const BirOp *op) {
    BlkType at = vtype(g, op->operands[0]), bt = vtype(g, op->operands[1]);
    int64_t acc = nvptx_operand_smem_bytes(g, op->operands[2], &g->plan->layouts[op->results[0]]);
    if (!on_tensor_cores(g, op)) {
        int64_t both = (type_numel(at) + type_numel(bt)) * dtype_bytes(at.dtype);
        return both > acc ? both : acc;
    }
    int64_t need = acc;
    for (int which = 0; which < 2; which++) {
        Layout l = operand_layout(g, op, which);
        int64_t n = nvptx_operand_smem_bytes(g, op->operands[which], &l);
        if (n > need) need = n;
    }
    return need;
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

/* Two f16 or bf16 elements as one 32-bit operand register of mma. */
static LLVMValueRef pack(Gen *g, LLVMValueRef lo, LLVMValueRef hi, DType d) {
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(ty(g, d), 2));
    v = LLVMBuildInsertElement(g->b, v, lo, ci32(g, 0), "");
    v = LLVMBuildInsertElement(g->b, v, hi, ci32(g, 1), "");
    return d == DT_F16 ? v : LLVMBuildBitCast(g->b, v, g->i32, "");
}

/* Register bits of a layout along dimension d from basis `from` up: the
 * repetitions of a tile of that size. */
static int rep_bits(const Layout *l, int d, int32_t from) {
    int n = 0;
    for (int b = 0; b < l->nreg_bits; b++) n += l->reg[b][d] >= from;
    return n;
}

static bool gen_mma(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0];
    const Layout *lc = &g->plan->layouts[r];
    Layout la = operand_layout(g, op, 0), lb = operand_layout(g, op, 1);
    DType d = vtype(g, op->operands[0]).dtype;
    int32_t K = vtype(g, op->operands[0]).shape[1];
    LLVMValueRef *A = nvptx_operand(g, op->operands[0], &la, smem_at);
    LLVMValueRef *B = nvptx_operand(g, op->operands[1], &lb, smem_at);
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    int kbits = 0;
    while ((16 << kbits) < K) kbits++;
    int nbits = rep_bits(lc, 1, 8), mreps = 1 << rep_bits(lc, 0, 16), nreps = 1 << nbits;
    LLVMTypeRef f4[4] = {g->f32, g->f32, g->f32, g->f32};
    LLVMTypeRef ret = LLVMStructTypeInContext(g->ctx, f4, 4, 0);
    const char *name = d == DT_F16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" : "llvm.nvvm.mma.m16n8k16.row.col.bf16";
    for (int ki = 0; ki < 1 << kbits; ki++) {
        for (int mi = 0; mi < mreps; mi++) {
            LLVMValueRef args[10];
            for (int p = 0; p < 4; p++) { /* a0..a3: (row, k), (row + 8, k), (row, k + 8), (row + 8, k + 8) */
                int base = (p & 1) << 1 | (p >> 1) << 2 | ki << 3 | mi << (3 + kbits);
                args[p] = pack(g, A[base], A[base + 1], d);
            }
            for (int ni = 0; ni < nreps; ni++) {
                for (int q = 0; q < 2; q++) { /* b0, b1: k and k + 8 */
                    int base = q << 1 | ki << 2 | ni << (2 + kbits);
                    args[4 + q] = pack(g, B[base], B[base + 1], d);
                }
                int cbase = ni << 2 | mi << (2 + nbits); /* c0, c1: row; c2, c3: row + 8 */
                for (int j = 0; j < 4; j++) args[6 + j] = out[cbase + j];
                LLVMValueRef res = nvptx_call(g, name, ret, args, 10);
                for (int j = 0; j < 4; j++) out[cbase + j] = LLVMBuildExtractValue(g->b, res, (unsigned)j, "");
            }
        }
    }
    return true;
}

bool nvptx_gen_dot(Gen *g, const BirOp *op, int64_t smem_at) {
    if (on_tensor_cores(g, op)) return gen_mma(g, op, smem_at);
    int a = op->operands[0], b = op->operands[1], acc = op->operands[2], r = op->results[0];
    BlkType at = vtype(g, a), bt = vtype(g, b);
    int32_t K = at.shape[1], N = bt.shape[1];
    DType d = at.dtype;
    int es = dtype_bytes(d);
    int64_t b_at = smem_at + type_numel(at) * es;
    const Layout *l = &g->plan->layouts[r];
    LLVMValueRef *acc_regs = nvptx_operand(g, acc, l, smem_at); /* before a and b take the region */
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    store_block(g, a, smem_at);
    store_block(g, b, b_at);
    nvptx_barrier(g);

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
    for (int i = 0; i < n; i++) c[i] = acc_regs[i];
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
