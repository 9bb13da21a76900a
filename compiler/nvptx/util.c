/* util.c: LLVM-C helpers the NVPTX code generator shares: intrinsic and
 * inline-PTX calls, thread-0 sections, shared memory addressing, and the
 * coordinates a thread's registers hold in a blocked layout. */
#include "gen.h"

/* ------------------------------------------------------------- helpers */

LLVMValueRef *nvptx_new_regs(Gen *g, int v) {
    int n = nregs(g, v);
    g->regs[v] = arena_alloc(&g->arena, (size_t)n * sizeof(LLVMValueRef));
    return g->regs[v];
}

/* An intrinsic or external function by name, declared on first use. */
LLVMValueRef nvptx_call(Gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n) {
    LLVMTypeRef params[8];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->mod, name);
    if (!fn) fn = LLVMAddFunction(g->mod, name, fty);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

LLVMValueRef nvptx_call0(Gen *g, const char *name, LLVMTypeRef ret) { return nvptx_call(g, name, ret, NULL, 0); }

LLVMValueRef nvptx_asm_call(Gen *g, LLVMTypeRef ret, const char *text, const char *constraints,
                             LLVMValueRef *args, int n, bool side_effects) {
    LLVMTypeRef params[24];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints,
                                       strlen(constraints), side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

void nvptx_barrier(Gen *g) { nvptx_call0(g, "llvm.nvvm.barrier0", g->void_t); }

/* Runs `then` code on thread 0 only: returns the merge block after setting
 * up the branch; the caller emits into the then-block and calls end_if_t0. */
LLVMBasicBlockRef nvptx_begin_if(Gen *g, LLVMValueRef cond) {
    LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0");
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "t0.end");
    LLVMBuildCondBr(g->b, cond, then_bb, merge);
    LLVMPositionBuilderAtEnd(g->b, then_bb);
    return merge;
}

void nvptx_end_if(Gen *g, LLVMBasicBlockRef merge) {
    LLVMBuildBr(g->b, merge);
    LLVMPositionBuilderAtEnd(g->b, merge);
}

/* A pointer into the kernel's shared memory. */
LLVMValueRef nvptx_smem_ptr(Gen *g, int64_t offset, LLVMValueRef index, int elem_size) {
    LLVMValueRef off = ci32(g, offset);
    if (index) off = LLVMBuildAdd(g->b, off, LLVMBuildMul(g->b, index, ci32(g, elem_size), ""), "");
    return LLVMBuildGEP2(g->b, g->i8, g->smem, &off, 1, "");
}

/* ---------------------------------------------------------- coordinates */

/* The coordinate of register r along dimension d of layout l, and whether
 * this thread is the first holder of it (layouts wider than the shape wrap). */
LLVMValueRef nvptx_thread_base(Gen *g, const Layout *l, int d) {
    int fast = l->rank - 1;
    LLVMValueRef lane_d = d == fast ? LLVMBuildURem(g->b, g->lane, ci32(g, l->tpw[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->lane, ci32(g, l->tpw[fast]), "");
    LLVMValueRef warp_d = d == fast ? LLVMBuildURem(g->b, g->warp, ci32(g, l->wpc[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->warp, ci32(g, l->wpc[fast]), "");
    LLVMValueRef t = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, warp_d, ci32(g, l->tpw[d]), ""), lane_d, "");
    return LLVMBuildMul(g->b, t, ci32(g, l->spt[d]), "");
}

LLVMValueRef nvptx_coord(Gen *g, const Layout *l, int d, int r) {
    int32_t rep[BLK_MAX_RANK], j[BLK_MAX_RANK];
    nvptx_layout_reg_parts(l, r, rep, j);
    int64_t tile = (int64_t)l->spt[d] * l->tpw[d] * l->wpc[d];
    LLVMValueRef c = LLVMBuildAdd(g->b, nvptx_thread_base(g, l, d), ci32(g, rep[d] * tile + j[d]), "");
    return LLVMBuildAnd(g->b, c, ci32(g, l->shape[d] - 1), "");
}

/* Does this thread hold the first copy of its elements along every dimension? */
LLVMValueRef nvptx_owner(Gen *g, const Layout *l) {
    LLVMValueRef ok = LLVMConstInt(g->i1, 1, 0);
    for (int d = 0; d < l->rank; d++) {
        int64_t tile = (int64_t)l->spt[d] * l->tpw[d] * l->wpc[d];
        if (tile <= l->shape[d]) continue;
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntULT, nvptx_thread_base(g, l, d), ci32(g, l->shape[d]), ""), "");
    }
    return ok;
}
