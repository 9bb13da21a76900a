/* shapes.c: expand_dims, broadcast and trans: the operand recomputed in the
 * result's layout when it is a pure function of arange and scalars, else
 * moved through shared memory. */
#include "gen.h"

/* ------------------------------------------------------- shape changes */

/* Can v's elements be recomputed anywhere from arange and scalars alone? */
bool nvptx_can_remat(Gen *g, int v, int depth) {
    if (vtype(g, v).rank == 0) return true;
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > 64) return false;
    switch (op->code) {
    case BIR_ARANGE: case BIR_SPLAT: return true;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS: return nvptx_can_remat(g, op->operands[0], depth + 1);
    default:
        if (!bir_is_elementwise(op->code) || op->code == BIR_RAND || op->code == BIR_RANDINT) return false;
        for (int i = 0; i < op->noperands; i++)
            if (!nvptx_can_remat(g, op->operands[i], depth + 1)) return false;
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
    case BIR_TRANS: {
        LLVMValueRef xc[BLK_MAX_RANK] = {c[1], c[0]};
        return remat(g, op->operands[0], xc);
    }
    default: {
        LLVMValueRef x[3];
        for (int i = 0; i < op->noperands; i++) x[i] = remat(g, op->operands[i], c);
        return nvptx_elementwise(g, op, x);
    }
    }
}

/* Linear (row-major) index of coordinates c in a shape. */
static LLVMValueRef linear(Gen *g, BlkType t, LLVMValueRef *c) {
    if (t.rank == 1) return c[0];
    return LLVMBuildAdd(g->b, LLVMBuildMul(g->b, c[0], ci32(g, t.shape[1]), ""), c[1], "");
}

void nvptx_coords_of(Gen *g, const Layout *l, int r, LLVMValueRef *c) {
    for (int d = 0; d < l->rank; d++) c[d] = nvptx_coord(g, l, d, r);
}

/* expand_dims and broadcast: recompute the operand where it is cheap,
 * else move it through shared memory (every thread writes what it holds,
 * then reads what it needs). */
bool nvptx_gen_reshape(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0], x = op->operands[0];
    const Layout *lr = &g->plan->layouts[r];
    BlkType rt = vtype(g, r), xt = vtype(g, x);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    if (nvptx_can_remat(g, r, 0)) {
        for (int k = 0; k < lr->nregs; k++) {
            LLVMValueRef c[BLK_MAX_RANK];
            nvptx_coords_of(g, lr, k, c);
            out[k] = remat(g, r, c);
        }
        return true;
    }
    DType d = xt.dtype;
    int es = d == DT_PTR ? 8 : dtype_bytes(d);
    const Layout *lx = &g->plan->layouts[x];
    LLVMTypeRef mt = d == DT_PTR ? g->gptr : mem_ty(g, d);
    nvptx_barrier(g); /* earlier readers of this buffer are done */
    for (int k = 0; k < lx->nregs; k++) {
        LLVMValueRef c[BLK_MAX_RANK];
        nvptx_coords_of(g, lx, k, c);
        LLVMBuildStore(g->b, to_mem(g, g->regs[x][k], d), nvptx_smem_ptr(g, smem_at, linear(g, xt, c), es));
    }
    nvptx_barrier(g);
    for (int k = 0; k < lr->nregs; k++) {
        LLVMValueRef c[BLK_MAX_RANK], xc[BLK_MAX_RANK];
        nvptx_coords_of(g, lr, k, c);
        if (op->code == BIR_EXPAND_DIMS) {
            for (int dd = 0, j = 0; dd < rt.rank; dd++)
                if (dd != op->attr) xc[j++] = c[dd];
        } else if (op->code == BIR_TRANS) {
            xc[0] = c[1], xc[1] = c[0];
        } else {
            for (int dd = 0; dd < rt.rank; dd++) xc[dd] = xt.shape[dd] == 1 ? ci32(g, 0) : c[dd];
        }
        LLVMValueRef v = LLVMBuildLoad2(g->b, mt, nvptx_smem_ptr(g, smem_at, linear(g, xt, xc), es), "");
        out[k] = from_mem(g, v, d);
    }
    return true;
}
