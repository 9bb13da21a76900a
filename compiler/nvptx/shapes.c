/* shapes.c: expand_dims, broadcast and trans, and flip, reshape, take and
 * partner. For the first three the result's registers are the
 * operand's elements at the projected coordinates, in the result's layout
 * (convert.c: from the thread's own registers when the layouts agree, as a
 * row maximum broadcast over its accumulator's columns; recomputed, as
 * index arithmetic; else through shared memory). */
#include "gen.h"

bool nvptx_gen_reshape(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0];
    LLVMValueRef *x = nvptx_convert(g, op->operands[0], &g->s->plan->layouts[r], nvptx_shape_projection(g, op), smem_at);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    memcpy(out, x, (size_t)nregs(g, r) * sizeof *out);
    return true;
}

int64_t nvptx_reshape_smem_bytes(Gen *g, const BirOp *op) {
    return nvptx_convert_smem_bytes(g, op->operands[0], &g->s->plan->layouts[op->results[0]], nvptx_shape_projection(g, op));
}

int nvptx_partner_bit(const Layout *l, int axis, int32_t j, bool *reg) {
    int32_t want[BLK_MAX_RANK] = {0};
    want[axis] = j;
    size_t n = (size_t)l->rank * sizeof(int32_t);
    for (int b = 0; b < l->nreg_bits; b++)
        if (memcmp(l->reg[b], want, n) == 0) return *reg = true, b;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++)
        if (memcmp(l->lane[b], want, n) == 0) return *reg = false, b;
    return -1;
}

LLVMValueRef *nvptx_partner_local(Gen *g, const Layout *l, int axis, int32_t j, LLVMValueRef *vals, DType d) {
    bool reg;
    int b = nvptx_partner_bit(l, axis, j, &reg);
    if (b < 0) return NULL;
    LLVMValueRef *out = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *out);
    for (int k = 0; k < l->nregs; k++) out[k] = reg ? vals[k ^ (1 << b)] : nvptx_shuffle_xor(g, vals[k], 1 << b, d);
    return out;
}

static bool partner_is_local(Gen *g, const BirOp *op) {
    bool reg;
    return nvptx_partner_bit(&g->s->plan->layouts[op->results[0]], (int)op->attr, (int32_t)op->value.i, &reg) >= 0;
}

/* flip, reshape, take, partner: every thread writes what it holds of the
 * operand (row-major), barrier, and reads each of its result's elements
 * from where the op says it comes from. */
int64_t nvptx_rearrange_smem_bytes(Gen *g, const BirOp *op) {
    if (op->code == BIR_PARTNER && partner_is_local(g, op))
        return nvptx_operand_smem_bytes(g, op->operands[0], &g->s->plan->layouts[op->results[0]]);
    return nvptx_smem_value_bytes(g, op->operands[0]);
}

bool nvptx_gen_rearrange(Gen *g, const BirOp *op, int64_t smem_at) {
    int x = op->operands[0], r = op->results[0], axis = (int)op->attr;
    if (op->code == BIR_PARTNER && partner_is_local(g, op)) { /* a register of its own, or a shuffle */
        const Layout *l = &g->s->plan->layouts[r];
        LLVMValueRef *p = nvptx_partner_local(g, l, axis, (int32_t)op->value.i, nvptx_operand(g, x, l, smem_at),
                                              vtype(g, x).dtype);
        memcpy(nvptx_new_regs(g, r), p, (size_t)l->nregs * sizeof *p);
        return true;
    }
    BlkType xt = vtype(g, x), rt = vtype(g, r);
    const Layout *to = &g->s->plan->layouts[r];
    nvptx_smem_write_value(g, x, smem_at);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int k = 0; k < nregs(g, r); k++) {
        LLVMValueRef c[BLK_MAX_RANK], src[BLK_MAX_RANK];
        for (int i = 0; i < rt.rank; i++) c[i] = nvptx_coord(g, to, i, k);
        LLVMValueRef index;
        switch (op->code) {
        case BIR_RESHAPE: index = nvptx_row_major(g, rt, c); break; /* the same place in the row-major order */
        case BIR_TAKE:
            for (int i = 0, j = 0; i < xt.rank; i++) src[i] = i == axis ? ci32(g, op->value.i) : c[j++];
            index = nvptx_row_major(g, xt, src);
            break;
        default: /* flip, partner */
            memcpy(src, c, sizeof src);
            src[axis] = op->code == BIR_FLIP ? LLVMBuildSub(g->b, ci32(g, xt.shape[axis] - 1), c[axis], "")
                                             : LLVMBuildXor(g->b, c[axis], ci32(g, op->value.i), "");
            index = nvptx_row_major(g, xt, src);
            break;
        }
        out[k] = nvptx_smem_read(g, xt.dtype, smem_at, index);
    }
    return true;
}

/* ---------------------------------------------------------------- gather */

int64_t nvptx_gather_smem_bytes(Gen *g, const BirOp *op) {
    int64_t index = nvptx_operand_smem_bytes(g, op->operands[1], &g->s->plan->layouts[op->results[0]]);
    int64_t src = nvptx_smem_value_bytes(g, op->operands[0]);
    return index > src ? index : src;
}

/* Each result element reads the source, staged row-major, at its own
 * coordinates with the axis' one replaced by its index; the index is masked
 * to the axis (a power of two), so one out of range reads some element of
 * the axis rather than memory beyond the block (the interpreter reports it). */
bool nvptx_gen_gather(Gen *g, const BirOp *op, int64_t smem_at) {
    int x = op->operands[0], r = op->results[0], axis = (int)op->attr;
    BlkType xt = vtype(g, x), rt = vtype(g, r);
    DType it = vtype(g, op->operands[1]).dtype;
    const Layout *to = &g->s->plan->layouts[r];
    LLVMValueRef *index = nvptx_operand(g, op->operands[1], to, smem_at); /* before the source takes the region */
    nvptx_smem_write_value(g, x, smem_at);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int k = 0; k < nregs(g, r); k++) {
        LLVMValueRef c[BLK_MAX_RANK];
        for (int i = 0; i < rt.rank; i++) c[i] = nvptx_coord(g, to, i, k);
        LLVMValueRef i32 = it == DT_I32 || it == DT_U32 ? index[k] : nvptx_convert_dtype(g, index[k], it, DT_I32);
        c[axis] = LLVMBuildAnd(g->b, i32, ci32(g, xt.shape[axis] - 1), "");
        out[k] = nvptx_smem_read(g, xt.dtype, smem_at, nvptx_row_major(g, xt, c));
    }
    return true;
}
