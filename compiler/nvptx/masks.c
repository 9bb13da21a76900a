/* masks.c: masks that hold over a whole block, tested once.
 *
 * `where(cols[None, :] < N, qk, -inf)` compares every column with N, but in
 * a loop over blocks of columns only the last block has columns past N.
 * When a mask compares integers built from scalars and `arange` by + and -,
 * the least and greatest element of each side are scalars, and one uniform
 * test of them says whether the mask holds everywhere; a select then
 * branches on that test and skips its per-element compares and selects in
 * the blocks where it does (attention: 32 compares and 64 selects a thread
 * an iteration), where x comes from a dot (below). */
#include "gen.h"

/* MIN_SELECTS: below this many elements a thread LLVM folds the branch
 * back into selects (both sides, and one more select each), a loss. */
enum { MAX_DEPTH = 16, MIN_SELECTS = 8 };

/* The least and greatest element of an integer value. */
typedef struct {
    LLVMValueRef lo, hi;
} Range;

/* v's range, when v is a scalar, an arange, or their sums and differences
 * (splat, expand_dims and broadcast keep the elements). *exact collects
 * what makes it exact: a sum whose greatest element wrapped past the type's
 * end and whose least did not shows as lo > hi, so lo <= hi is tested at
 * every step (the spans are far below 2^31, so both cannot be off). */
static bool range_of(Gen *g, int v, Range *out, LLVMValueRef *exact, int depth) {
    BlkType t = vtype(g, v);
    if (!dtype_is_int(t.dtype) || dtype_is_unsigned(t.dtype) || depth > MAX_DEPTH) return false;
    if (t.rank == 0) {
        if (!g->regs[v] || !g->regs[v][0]) return false;
        out->lo = out->hi = g->regs[v][0];
        return true;
    }
    const BirOp *op = g->f->values[v].def;
    if (!op) return false;
    switch (op->code) {
    case BIR_SPLAT: case BIR_EXPAND_DIMS: case BIR_BROADCAST:
        return range_of(g, op->operands[0], out, exact, depth + 1);
    case BIR_ARANGE: {
        LLVMTypeRef it = ty(g, t.dtype);
        out->lo = LLVMConstInt(it, (unsigned long long)op->attr, 1);
        out->hi = LLVMConstInt(it, (unsigned long long)(op->attr + t.shape[0] - 1), 1);
        return true;
    }
    case BIR_ADD: case BIR_SUB: {
        Range a, b;
        if (!range_of(g, op->operands[0], &a, exact, depth + 1) || !range_of(g, op->operands[1], &b, exact, depth + 1))
            return false;
        bool add = op->code == BIR_ADD;
        out->lo = add ? LLVMBuildAdd(g->b, a.lo, b.lo, "") : LLVMBuildSub(g->b, a.lo, b.hi, "");
        out->hi = add ? LLVMBuildAdd(g->b, a.hi, b.hi, "") : LLVMBuildSub(g->b, a.hi, b.lo, "");
        *exact = LLVMBuildAnd(g->b, *exact, LLVMBuildICmp(g->b, LLVMIntSLE, out->lo, out->hi, ""), "");
        return true;
    }
    default: return false;
    }
}

/* An i1 scalar, true when every element of mask m is true; NULL when m is
 * not a compare of ranges (or an `&` of such). */
static LLVMValueRef all_true(Gen *g, int m, int depth) {
    const BirOp *op = g->f->values[m].def;
    if (!op || depth > MAX_DEPTH || vtype(g, m).dtype != DT_I1) return NULL;
    switch (op->code) {
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: return all_true(g, op->operands[0], depth + 1);
    case BIR_AND: {
        LLVMValueRef a = all_true(g, op->operands[0], depth + 1), b = a ? all_true(g, op->operands[1], depth + 1) : NULL;
        return b ? LLVMBuildAnd(g->b, a, b, "") : NULL;
    }
    case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: {
        Range x, y;
        LLVMValueRef exact = LLVMConstInt(g->m->t.i1, 1, 0);
        if (!range_of(g, op->operands[0], &x, &exact, depth + 1) || !range_of(g, op->operands[1], &y, &exact, depth + 1))
            return NULL;
        if (LLVMTypeOf(x.lo) != LLVMTypeOf(y.lo)) return NULL;
        /* x < y everywhere: x's greatest below y's least; and so on */
        LLVMValueRef holds = op->code == BIR_LT ? LLVMBuildICmp(g->b, LLVMIntSLT, x.hi, y.lo, "")
                             : op->code == BIR_LE ? LLVMBuildICmp(g->b, LLVMIntSLE, x.hi, y.lo, "")
                             : op->code == BIR_GT ? LLVMBuildICmp(g->b, LLVMIntSGT, x.lo, y.hi, "")
                                                  : LLVMBuildICmp(g->b, LLVMIntSGE, x.lo, y.hi, "");
        return LLVMBuildAnd(g->b, exact, holds, "");
    }
    default: return NULL;
    }
}

/* Is v a dot's result, or made from one elementwise (attention's qk)? Its
 * registers are all live at once anyway, as the branch below keeps them.
 * Not so a block computed element by element from loads (layer norm's
 * `where(cols < N, x - mean, 0.0)`: kept across the branch, its 64 elements
 * a thread took the kernel from 103 registers to 242). */
static bool from_dot(Gen *g, int v, int depth) {
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > MAX_DEPTH || vtype(g, v).rank == 0) return false;
    if (op->code == BIR_DOT) return true;
    if (!bir_is_elementwise(op->code)) return false;
    for (int i = 0; i < op->noperands; i++)
        if (from_dot(g, op->operands[i], depth + 1)) return true;
    return false;
}

/* select(mask, x, y) where the mask has a uniform test: a branch on it,
 * x itself where the mask holds everywhere, else the select per element
 * (the mask's own compares, used there alone, sink into that branch). The
 * test is on scalars, the same in every thread, so the branch is uniform. */
bool nvptx_gen_tested_select(Gen *g, const BirOp *op, int64_t slot) {
    const int *a = op->operands;
    int r = op->results[0];
    const Layout *l = &g->s->plan->layouts[r];
    if (nregs(g, r) < MIN_SELECTS || !from_dot(g, a[1], 0)) return false;
    LLVMValueRef holds = all_true(g, a[0], 0);
    if (!holds) return false;
    LLVMValueRef *x[3] = {NULL, nvptx_operand(g, a[1], l, slot), nvptx_operand(g, a[2], l, slot)};
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef merge = nvptx_begin_if(g, LLVMBuildNot(g->b, holds, ""));
    x[0] = nvptx_operand(g, a[0], l, slot);
    int n = nregs(g, r);
    LLVMValueRef *each = arena_alloc(&g->arena, (size_t)n * sizeof *each);
    nvptx_elementwise_regs(g, op, x, each);
    LLVMBasicBlockRef masked = LLVMGetInsertBlock(g->b);
    nvptx_end_if(g, merge);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int k = 0; k < n; k++) {
        out[k] = LLVMBuildPhi(g->b, LLVMTypeOf(each[k]), "");
        LLVMValueRef in[2] = {x[1][k], each[k]};
        LLVMBasicBlockRef blocks[2] = {from, masked};
        LLVMAddIncoming(out[k], in, blocks, 2);
    }
    return true;
}
