/* scan.c: cumsum and cumprod along one axis, in shared memory, in the
 * order the language defines (docs/language.md §7): log2(n) steps, step d
 * combining each element with the one d before it (Hillis and Steele), so
 * the GPU's floats equal the interpreter's bit for bit. Every thread keeps
 * its elements' partials; each step reads them all, then a barrier, then
 * writes them all. Copies of an element write the same value. */
#include "gen.h"

int64_t nvptx_scan_smem_bytes(Gen *g, const BirOp *op) {
    BlkType t = vtype(g, op->results[0]);
    return type_numel(t) * dtype_bytes(t.dtype);
}

bool nvptx_gen_scan(Gen *g, const BirOp *op, int64_t slot) {
    int r = op->results[0], axis = (int)op->attr;
    BlkType t = vtype(g, r);
    const Layout *l = &g->plan->layouts[r];
    LLVMValueRef *x = nvptx_operand(g, op->operands[0], l, slot);
    int n = l->nregs, es = dtype_bytes(t.dtype);
    int32_t len = t.shape[axis], stride = t.rank == 2 && axis == 0 ? t.shape[1] : 1;
    LLVMValueRef *v = nvptx_new_regs(g, r), *index = arena_alloc(&g->arena, (size_t)n * sizeof *index);
    LLVMValueRef *along = arena_alloc(&g->arena, (size_t)n * sizeof *along);
    LLVMTypeRef et = ty(g, t.dtype);
    bool fl = dtype_is_float(t.dtype), mul = op->code == BIR_CUMPROD;
    for (int k = 0; k < n; k++) {
        along[k] = nvptx_coord(g, l, axis, k);
        index[k] = t.rank == 2 ? LLVMBuildAdd(g->b, LLVMBuildMul(g->b, nvptx_coord(g, l, 0, k), ci32(g, t.shape[1]), ""),
                                              nvptx_coord(g, l, 1, k), "")
                               : along[k];
        v[k] = x[k];
    }
    nvptx_barrier(g); /* earlier users of the shared region are done */
    for (int k = 0; k < n; k++) LLVMBuildStore(g->b, v[k], nvptx_smem_ptr(g, slot, index[k], es));
    for (int32_t d = 1; d < len; d *= 2) {
        nvptx_barrier(g);
        for (int k = 0; k < n; k++) {
            LLVMValueRef has = LLVMBuildICmp(g->b, LLVMIntSGE, along[k], ci32(g, d), "");
            LLVMValueRef at = LLVMBuildSelect(g->b, has, LLVMBuildSub(g->b, index[k], ci32(g, d * stride), ""), index[k], "");
            LLVMValueRef before = LLVMBuildLoad2(g->b, et, nvptx_smem_ptr(g, slot, at, es), "");
            LLVMValueRef c = mul ? (fl ? LLVMBuildFMul(g->b, before, v[k], "") : LLVMBuildMul(g->b, before, v[k], ""))
                                 : (fl ? LLVMBuildFAdd(g->b, before, v[k], "") : LLVMBuildAdd(g->b, before, v[k], ""));
            v[k] = LLVMBuildSelect(g->b, has, c, v[k], "");
        }
        nvptx_barrier(g);
        for (int k = 0; k < n; k++) LLVMBuildStore(g->b, v[k], nvptx_smem_ptr(g, slot, index[k], es));
    }
    return true;
}
