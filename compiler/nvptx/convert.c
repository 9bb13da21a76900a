/* convert.c: a value's elements in another layout. Every op asks for its
 * operands in the layout it computes in (an elementwise op in its result's,
 * a store in its pointers'); the value comes, cheapest first:
 *   - from the thread's own registers, when its layout holds the same
 *     elements in the same threads (nvptx_layout_local_map): no code;
 *   - recomputed in the new layout from operands that are themselves local
 *     or recomputable: arange and scalars, and the shape and elementwise ops
 *     over them (index arithmetic and masks, or a row maximum broadcast over
 *     the columns of the accumulator it was taken from);
 *   - through shared memory: every thread writes what it holds, barrier,
 *     every thread reads what it needs. */
#include "gen.h"

static Projection identity(void) { return (Projection){{0, 1}}; }

/* The projection of an op's operand x from the coordinates of the op's
 * result r, itself projected by p from the coordinates of a use. */
static Projection through(const BirOp *op, BlkType xt, BlkType rt, Projection p) {
    Projection q = {{-1, -1}};
    switch (op->code) {
    case BIR_EXPAND_DIMS:
        for (int d = 0, k = 0; d < rt.rank; d++)
            if (d != op->attr) q.from[k++] = p.from[d];
        return q;
    case BIR_BROADCAST:
        for (int d = 0; d < xt.rank; d++) q.from[d] = xt.shape[d] == 1 && rt.shape[d] > 1 ? -1 : p.from[d];
        return q;
    case BIR_TRANS:
        q.from[0] = p.from[1], q.from[1] = p.from[0];
        return q;
    default:
        return p;
    }
}

static bool recomputable(Gen *g, int v, const Layout *to, Projection p, int depth) {
    BlkType t = vtype(g, v);
    if (t.rank == 0) return true;
    if (nvptx_layout_local_map(&g->plan->layouts[v], to, p, NULL)) return true;
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > 64) return false;
    switch (op->code) {
    case BIR_ARANGE: case BIR_SPLAT: return true;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        return recomputable(g, op->operands[0], to, through(op, vtype(g, op->operands[0]), t, p), depth + 1);
    default:
        if (!bir_is_elementwise(op->code) || op->code == BIR_RAND || op->code == BIR_RANDINT) return false;
        for (int i = 0; i < op->noperands; i++)
            if (!recomputable(g, op->operands[i], to, p, depth + 1)) return false;
        return true;
    }
}

/* The coordinate along v's dimension d for register r of `to`. */
static LLVMValueRef projected_coord(Gen *g, const Layout *to, Projection p, int d, int r) {
    return p.from[d] < 0 ? ci32(g, 0) : nvptx_coord(g, to, p.from[d], r);
}

/* v's element for register r of `to` (recomputable(v) holds). */
static LLVMValueRef element(Gen *g, int v, const Layout *to, Projection p, int r) {
    BlkType t = vtype(g, v);
    if (t.rank == 0) return g->regs[v][0];
    const Layout *from = &g->plan->layouts[v];
    int32_t *map = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *map);
    if (g->regs[v] && nvptx_layout_local_map(from, to, p, map)) return g->regs[v][map[r]];
    const BirOp *op = g->f->values[v].def;
    switch (op->code) {
    case BIR_ARANGE: return LLVMBuildAdd(g->b, projected_coord(g, to, p, 0, r), ci32(g, op->attr), "");
    case BIR_SPLAT: return g->regs[op->operands[0]][0];
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        return element(g, op->operands[0], to, through(op, vtype(g, op->operands[0]), t, p), r);
    default: {
        LLVMValueRef x[3];
        for (int i = 0; i < op->noperands; i++) x[i] = element(g, op->operands[i], to, p, r);
        return nvptx_elementwise(g, op, x);
    }
    }
}

static int mem_bytes(DType d) { return d == DT_PTR ? 8 : dtype_bytes(d); }

int64_t nvptx_smem_value_bytes(Gen *g, int v) {
    BlkType t = vtype(g, v);
    return type_numel(t) * mem_bytes(t.dtype);
}

void nvptx_smem_write(Gen *g, DType d, int64_t smem_at, LLVMValueRef index, LLVMValueRef v) {
    LLVMBuildStore(g->b, to_mem(g, v, d), nvptx_smem_ptr(g, smem_at, index, mem_bytes(d)));
}

LLVMValueRef nvptx_smem_read(Gen *g, DType d, int64_t smem_at, LLVMValueRef index) {
    LLVMTypeRef mt = d == DT_PTR ? g->gptr : mem_ty(g, d);
    return from_mem(g, LLVMBuildLoad2(g->b, mt, nvptx_smem_ptr(g, smem_at, index, mem_bytes(d)), ""), d);
}

int64_t nvptx_convert_smem_bytes(Gen *g, int v, const Layout *to, Projection p) {
    return recomputable(g, v, to, p, 0) ? 0 : nvptx_smem_value_bytes(g, v);
}

LLVMValueRef nvptx_row_major(Gen *g, BlkType t, LLVMValueRef *c) {
    if (t.rank == 1) return c[0];
    return LLVMBuildAdd(g->b, LLVMBuildMul(g->b, c[0], ci32(g, t.shape[1]), ""), c[1], "");
}

void nvptx_smem_write_value(Gen *g, int v, int64_t smem_at) {
    const Layout *from = &g->plan->layouts[v];
    BlkType t = vtype(g, v);
    DType d = t.dtype;
    int32_t copies = nvptx_layout_copy_regs(from);
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    for (int r = 0; r < from->nregs; r++) {
        if (r & copies) continue;
        LLVMValueRef c[BLK_MAX_RANK];
        for (int k = 0; k < t.rank; k++) c[k] = nvptx_coord(g, from, k, r);
        nvptx_smem_write(g, d, smem_at, nvptx_row_major(g, t, c), g->regs[v][r]);
    }
    nvptx_barrier(g);
}

LLVMValueRef *nvptx_convert(Gen *g, int v, const Layout *to, Projection p, int64_t smem_at) {
    LLVMValueRef *out = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *out);
    BlkType t = vtype(g, v);
    if (recomputable(g, v, to, p, 0)) {
        for (int r = 0; r < to->nregs; r++) out[r] = element(g, v, to, p, r);
        return out;
    }
    /* through shared memory, row-major in v's shape */
    nvptx_smem_write_value(g, v, smem_at);
    for (int r = 0; r < to->nregs; r++) {
        LLVMValueRef c[BLK_MAX_RANK];
        for (int k = 0; k < t.rank; k++) c[k] = projected_coord(g, to, p, k, r);
        out[r] = nvptx_smem_read(g, t.dtype, smem_at, nvptx_row_major(g, t, c));
    }
    return out;
}

LLVMValueRef *nvptx_operand(Gen *g, int v, const Layout *to, int64_t smem_at) {
    if (to->rank == 0) return g->regs[v]; /* a scalar where a scalar is wanted */
    if (vtype(g, v).rank == 0) {
        LLVMValueRef *out = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *out);
        for (int r = 0; r < to->nregs; r++) out[r] = g->regs[v][0];
        return out;
    }
    if (nvptx_layout_equal(&g->plan->layouts[v], to)) return g->regs[v];
    return nvptx_convert(g, v, to, identity(), smem_at);
}

int64_t nvptx_operand_smem_bytes(Gen *g, int v, const Layout *to) {
    if (to->rank == 0 || vtype(g, v).rank == 0 || nvptx_layout_equal(&g->plan->layouts[v], to)) return 0;
    return nvptx_convert_smem_bytes(g, v, to, identity());
}

Projection nvptx_shape_projection(Gen *g, const BirOp *op) {
    return through(op, vtype(g, op->operands[0]), vtype(g, op->results[0]), identity());
}
