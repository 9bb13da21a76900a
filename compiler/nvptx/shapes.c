/* shapes.c: expand_dims, broadcast and trans: the result's registers are the
 * operand's elements at the projected coordinates, in the result's layout
 * (convert.c: from the thread's own registers when the layouts agree, as a
 * row maximum broadcast over its accumulator's columns; recomputed, as
 * index arithmetic; else through shared memory). */
#include "gen.h"

bool nvptx_gen_reshape(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0];
    LLVMValueRef *x = nvptx_convert(g, op->operands[0], &g->plan->layouts[r], nvptx_shape_projection(g, op), smem_at);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    memcpy(out, x, (size_t)nregs(g, r) * sizeof *out);
    return true;
}

int64_t nvptx_reshape_smem_bytes(Gen *g, const BirOp *op) {
    return nvptx_convert_smem_bytes(g, op->operands[0], &g->plan->layouts[op->results[0]], nvptx_shape_projection(g, op));
}
