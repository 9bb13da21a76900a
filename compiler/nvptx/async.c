/* async.c: the instructions of asynchronous copies, as inline PTX (LLVM 19
 * has neither cp.async.bulk.tensor nor mbarrier.try_wait or expect_tx):
 * mbarriers at shared-memory offsets, TMA copies of a tensor map's box, the
 * maps' prefetch, and thread 0's test that a copy stays within its map.
 * pipeline.c and warpspec.c issue them where tma.c's plan says. */
#include "gen.h"

static LLVMValueRef smem_addr(Gen *g, LLVMValueRef byte_off) {
    return LLVMBuildAdd(g->b, LLVMBuildPtrToInt(g->b, g->smem, g->t.i32, ""), byte_off, "");
}

void nvptx_mbarrier_init(Gen *g, LLVMValueRef at, int count) {
    LLVMValueRef args[2] = {smem_addr(g, at), ci32(g, count)};
    nvptx_asm_call(g, g->t.void_t, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", args, 2, true);
}

void nvptx_mbarrier_inval(Gen *g, LLVMValueRef at) {
    LLVMValueRef a = smem_addr(g, at);
    nvptx_asm_call(g, g->t.void_t, "mbarrier.inval.shared::cta.b64 [$0];", "r", &a, 1, true);
}

void nvptx_mbarrier_arrive(Gen *g, LLVMValueRef at) {
    LLVMValueRef a = smem_addr(g, at);
    nvptx_asm_call(g, g->t.void_t, "{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [$0]; }", "r,~{memory}", &a, 1,
                   true);
}

void nvptx_mbarrier_expect(Gen *g, LLVMValueRef at, int64_t bytes) {
    LLVMValueRef args[2] = {smem_addr(g, at), ci32(g, bytes)};
    nvptx_asm_call(g, g->t.void_t, "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1; }",
                   "r,r,~{memory}", args, 2, true);
}

/* Has the phase of the given parity (0 or 1, an i32) completed? try_wait
 * suspends the thread a while before it says no. */
static LLVMValueRef try_wait(Gen *g, LLVMValueRef at, LLVMValueRef parity) {
    LLVMValueRef args[2] = {smem_addr(g, at), parity};
    LLVMValueRef ok = nvptx_asm_call(g, g->t.i32,
                                     "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
                                     "selp.u32 $0, 1, 0, p; }",
                                     "=r,r,r,~{memory}", args, 2, true);
    return LLVMBuildICmp(g->b, LLVMIntNE, ok, ci32(g, 0), "");
}

/* Waits until that phase has completed: a try_wait loop in LLVM's control
 * flow (no labels inside the asm, which LLVM may duplicate). */
void nvptx_mbarrier_wait(Gen *g, LLVMValueRef at, LLVMValueRef parity) {
    LLVMBasicBlockRef spin = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "mbar.wait");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "mbar.done");
    LLVMBuildBr(g->b, spin);
    LLVMPositionBuilderAtEnd(g->b, spin);
    LLVMBuildCondBr(g->b, try_wait(g, at, parity), done, spin);
    LLVMPositionBuilderAtEnd(g->b, done);
}

/* Tensor map `map`: its parameter's address, as PTX takes it. */
static LLVMValueRef map_address(Gen *g, int map) {
    return LLVMBuildPtrToInt(g->b, LLVMGetParam(g->fn, (unsigned)(g->f->nparams + map)), g->t.i64, "");
}

/* Could the launch make map `map`? Its bit in the parameter after the maps. */
static LLVMValueRef map_made(Gen *g, int map) {
    LLVMValueRef valid = LLVMGetParam(g->fn, (unsigned)(g->f->nparams + g->s->tma.count));
    LLVMValueRef bit = LLVMBuildAnd(g->b, valid, ci32(g, 1 << map), "");
    return LLVMBuildICmp(g->b, LLVMIntNE, bit, ci32(g, 0), "");
}

void nvptx_tma_prefetch_maps(Gen *g) {
    LLVMValueRef first = LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 0), "");
    for (int map = 0; map < g->s->tma.count; map++) { /* the maps the launch could make */
        LLVMValueRef go = LLVMBuildAnd(g->b, first, map_made(g, map), "");
        LLVMValueRef args[2] = {map_address(g, map), LLVMBuildZExt(g->b, go, g->t.i32, "")};
        nvptx_asm_call(g, g->t.void_t, "{ .reg .pred p; setp.ne.u32 p, $1, 0; @p prefetch.tensormap [$0]; }", "l,r", args,
                       2, true);
    }
}

void nvptx_tma_load(Gen *g, int map, LLVMValueRef dst, LLVMValueRef col, LLVMValueRef row, LLVMValueRef bar) {
    LLVMValueRef args[5] = {smem_addr(g, dst), map_address(g, map), col, row, smem_addr(g, bar)};
    nvptx_asm_call(g, g->t.void_t,
                   "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
                   "r,l,r,r,r,~{memory}", args, 5, true);
}

/* Thread 0's part of the iteration test for one load: its tile's offset
 * from the map's base fits the map's columns. Then *col is that offset. */
LLVMValueRef nvptx_tma_offset_ok(Gen *g, const BirOp *ld, LLVMValueRef p00, LLVMValueRef *col) {
    const NvptxTensorMap *map = &g->s->tma.map[g->s->tma_of[ld->results[0]] - 1];
    LLVMValueRef base = g->regs[g->f->params[map->base_param].value][0];
    LLVMValueRef off = LLVMBuildSub(g->b, addr_i64(g, p00), addr_i64(g, base), "");
    off = LLVMBuildAShr(g->b, off, ci64(g, 1), ""); /* 16-bit elements */
    BlkType t = vtype(g, ld->results[0]);
    int64_t last = NVPTX_TMA_COLUMNS - t.shape[nvptx_contiguous_dim(g, ld->results[0])];
    LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntULE, off, ci64(g, last), ""); /* unsigned: also off >= 0 */
    LLVMValueRef made = map_made(g, g->s->tma_of[ld->results[0]] - 1);
    *col = LLVMBuildTrunc(g->b, off, g->t.i32, "");
    return LLVMBuildAnd(g->b, ok, made, "");
}
