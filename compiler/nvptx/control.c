/* control.c: structured control flow (for, while, if) as LLVM blocks and
 * phis; control flow is uniform within a program, so barriers inside are safe. */
#include "gen.h"

/* -------------------------------------------------------- control flow */

static void bind(Gen *g, int v, LLVMValueRef *vals) {
    int n = nregs(g, v);
    LLVMValueRef *out = nvptx_new_regs(g, v);
    memcpy(out, vals, (size_t)n * sizeof *out);
}

/* Registers a loop result flows through: none when it is kept in shared memory (carried.c). */
static int phi_regs(Gen *g, int v) { return g->s->carried_at[v] >= 0 ? 0 : nregs(g, v); }

/* Phis for a list of values (each with its registers), in block bb. */
static LLVMValueRef **make_phis(Gen *g, const int *like, int n) {
    LLVMValueRef **phis = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *phis);
    for (int i = 0; i < n; i++) {
        int m = phi_regs(g, like[i]);
        phis[i] = arena_alloc(&g->arena, (size_t)m * sizeof(LLVMValueRef));
        for (int k = 0; k < m; k++) phis[i][k] = LLVMBuildPhi(g->b, ty(g, vtype(g, like[i]).dtype), "");
    }
    return phis;
}

/* Values flowing into results `like` (an init or a yield), converted here
 * into the results' layouts (the shared region at 0, see smem_size). */
static LLVMValueRef **carried_in(Gen *g, const int *like, int n, const int *vals) {
    LLVMValueRef **regs = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *regs);
    for (int i = 0; i < n; i++) regs[i] = nvptx_operand(g, vals[i], &g->s->plan->layouts[like[i]], 0);
    return regs;
}

static void add_incoming(Gen *g, LLVMValueRef **phis, const int *like, int n, LLVMValueRef **from_regs,
                         LLVMBasicBlockRef from) {
    for (int i = 0; i < n; i++) {
        int m = phi_regs(g, like[i]);
        for (int k = 0; k < m; k++) LLVMAddIncoming(phis[i][k], &from_regs[i][k], &from, 1);
    }
}

/* `range(..., unroll = N)`: the back edge carries the loop's llvm.loop
 * metadata, unroll.count N (N = 1: unroll.disable, which the NVPTX backend
 * also passes on to ptxas as .pragma "nounroll"). The node names itself, as
 * loop metadata must, through a temporary node replaced by it. */
static void mark_unroll(Gen *g, LLVMValueRef backedge, int unroll) {
    LLVMContextRef c = g->m->ctx;
    LLVMMetadataRef hint;
    if (unroll == 1) {
        LLVMMetadataRef name = LLVMMDStringInContext2(c, "llvm.loop.unroll.disable", 24);
        hint = LLVMMDNodeInContext2(c, &name, 1);
    } else {
        LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(c, "llvm.loop.unroll.count", 22),
                                  LLVMValueAsMetadata(LLVMConstInt(g->m->t.i32, (unsigned long long)unroll, 0))};
        hint = LLVMMDNodeInContext2(c, ops, 2);
    }
    LLVMMetadataRef self = LLVMTemporaryMDNode(c, NULL, 0);
    LLVMMetadataRef ops[2] = {self, hint};
    LLVMMetadataRef loop = LLVMMDNodeInContext2(c, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, loop);
    LLVMSetMetadata(backedge, LLVMGetMDKindIDInContext(c, "llvm.loop", 9), LLVMMetadataAsValue(c, loop));
}

bool nvptx_gen_for(Gen *g, const BirOp *op) {
    const BirBlock *body = op->regions[0];
    int n = op->nresults;
    DType d = vtype(g, op->operands[0]).dtype;
    LLVMValueRef lb = g->regs[op->operands[0]][0], ub = g->regs[op->operands[1]][0], step = g->regs[op->operands[2]][0];
    LLVMValueRef **init = carried_in(g, op->results, n, op->operands + 3);
    int nlazy = g->lazy.n;
    for (int i = 0; i < n; i++)
        if (!phi_regs(g, op->results[i])) nvptx_carried_store(g, op->results[i], init[i]);
    nvptx_carried_enter(g, op);
    nvptx_dot_hoist(g, body);
    NvptxPipeline *pipe = nvptx_pipeline_begin(g, op, init, lb, ub, step);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "for");
    LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "for.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "for.end");
    LLVMBuildBr(g->b, header);
    LLVMPositionBuilderAtEnd(g->b, header);
    LLVMValueRef iv = LLVMBuildPhi(g->b, ty(g, d), "");
    LLVMAddIncoming(iv, &lb, &pre, 1);
    if (pipe) nvptx_pipeline_header(g, pipe, pre);
    LLVMValueRef **carried = make_phis(g, op->results, n);
    add_incoming(g, carried, op->results, n, init, pre);
    LLVMIntPredicate lt = nvptx_loop_continues(g, op);
    /* the values leaving by each exit edge (a dot's wait on the way may replace one) */
    LLVMValueRef **out_header = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *out_header), **out_latch = NULL;
    memcpy(out_header, carried, (size_t)n * sizeof *out_header);
    LLVMBasicBlockRef exit_from_header = pipe ? nvptx_pipeline_exit(g, pipe, op, exit, out_header, false) : exit,
                      exit_from_latch = NULL;
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, lt, iv, ub, ""), body_bb, exit_from_header);
    LLVMPositionBuilderAtEnd(g->b, body_bb);
    bind(g, body->args[0], &iv);
    for (int i = 0; i < n; i++) {
        if (phi_regs(g, op->results[i])) bind(g, body->args[1 + i], carried[i]);
        else g->lazy.item[g->lazy.n++] = (LazyCarried){body->args[1 + i], op->results[i], NULL}; /* loaded at first use */
    }
    if (pipe) nvptx_pipeline_iteration(g, op, pipe, carried, iv);
    if (!nvptx_gen_block(g, body)) return false;
    LLVMBasicBlockRef latch = NULL;
    const BirOp *y = bir_block_terminator(body);
    LLVMValueRef **next_vals = NULL;
    if (!g->terminated) {
        next_vals = carried_in(g, op->results, n, y->operands);
        for (int i = 0; i < n; i++)
            if (!phi_regs(g, op->results[i])) nvptx_carried_store(g, op->results[i], next_vals[i]);
        /* the loop ends rather than wrap when iv + step overflows (as on the interpreter) */
        char name[48];
        snprintf(name, sizeof name, "llvm.%s.with.overflow.i%d", dtype_is_signed(d) ? "sadd" : "uadd", dtype_bits(d));
        LLVMTypeRef fields[2] = {ty(g, d), g->m->t.i1};
        LLVMValueRef args[2] = {iv, step};
        LLVMValueRef res = nvptx_call(g, name, LLVMStructTypeInContext(g->m->ctx, fields, 2, 0), args, 2);
        LLVMValueRef next = LLVMBuildExtractValue(g->b, res, 0, "");
        LLVMValueRef ovf = LLVMBuildExtractValue(g->b, res, 1, "");
        if (pipe) nvptx_pipeline_latch(g, op, pipe);
        latch = LLVMGetInsertBlock(g->b);
        LLVMAddIncoming(iv, &next, &latch, 1);
        add_incoming(g, carried, op->results, n, next_vals, latch);
        out_latch = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *out_latch);
        memcpy(out_latch, next_vals, (size_t)n * sizeof *out_latch);
        exit_from_latch = pipe ? nvptx_pipeline_exit(g, pipe, op, exit, out_latch, true) : exit;
        LLVMValueRef backedge = LLVMBuildCondBr(g->b, ovf, exit_from_latch, header);
        if (for_unroll_of(op->attr)) mark_unroll(g, backedge, for_unroll_of(op->attr));
    }
    g->terminated = false;
    LLVMPositionBuilderAtEnd(g->b, exit);
    LLVMValueRef **res = make_phis(g, op->results, n);
    /* the exit's predecessors: header and latch, or the blocks on the way */
    LLVMBasicBlockRef from_header = exit_from_header == exit ? header : exit_from_header;
    LLVMBasicBlockRef from_latch = !latch ? NULL : exit_from_latch == exit ? latch : exit_from_latch;
    if (pipe) nvptx_pipeline_exited(g, pipe, from_header, from_latch);
    nvptx_dot_unhoist(g, body);
    add_incoming(g, res, op->results, n, out_header, from_header);
    if (latch) add_incoming(g, res, op->results, n, out_latch, from_latch);
    for (int i = 0; i < n; i++) {
        if (phi_regs(g, op->results[i])) bind(g, op->results[i], res[i]);
        else nvptx_carried_load(g, op->results[i], op->results[i]);
    }
    if (pipe) nvptx_pipeline_end(g, pipe);
    nvptx_carried_leave(g, nlazy);
    return true;
}

bool nvptx_gen_while(Gen *g, const BirOp *op) {
    const BirBlock *cond = op->regions[0], *body = op->regions[1];
    int n = op->nresults;
    LLVMValueRef **init = carried_in(g, op->results, n, op->operands);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef header = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "while");
    LLVMBasicBlockRef body_bb = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "while.body");
    LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "while.end");
    LLVMBuildBr(g->b, header);
    LLVMPositionBuilderAtEnd(g->b, header);
    LLVMValueRef **carried = make_phis(g, op->results, n);
    add_incoming(g, carried, op->results, n, init, pre);
    for (int i = 0; i < n; i++) bind(g, cond->args[i], carried[i]);
    if (!nvptx_gen_block(g, cond)) return false;
    if (g->terminated) return nvptx_gen_fail(g, op, "a return in a loop condition");
    const BirOp *c = bir_block_terminator(cond);
    LLVMBuildCondBr(g->b, g->regs[c->operands[0]][0], body_bb, exit);
    LLVMPositionBuilderAtEnd(g->b, body_bb);
    for (int i = 0; i < n; i++) bind(g, body->args[i], carried[i]);
    if (!nvptx_gen_block(g, body)) return false;
    if (!g->terminated) {
        const BirOp *y = bir_block_terminator(body);
        LLVMValueRef **next_vals = carried_in(g, op->results, n, y->operands);
        add_incoming(g, carried, op->results, n, next_vals, LLVMGetInsertBlock(g->b));
        LLVMBuildBr(g->b, header);
    }
    g->terminated = false;
    LLVMPositionBuilderAtEnd(g->b, exit);
    for (int i = 0; i < n; i++) bind(g, op->results[i], carried[i]);
    return true;
}

bool nvptx_gen_if(Gen *g, const BirOp *op) {
    int n = op->nresults;
    LLVMBasicBlockRef bbs[2] = {LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "then"),
                                LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "else")};
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "endif");
    LLVMBuildCondBr(g->b, g->regs[op->operands[0]][0], bbs[0], bbs[1]);
    LLVMBasicBlockRef ends[2] = {NULL, NULL};
    LLVMValueRef **yields[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(g->b, bbs[r]);
        if (!nvptx_gen_block(g, op->regions[r])) return false;
        if (!g->terminated) {
            yields[r] = carried_in(g, op->results, n, bir_block_terminator(op->regions[r])->operands);
            ends[r] = LLVMGetInsertBlock(g->b);
            LLVMBuildBr(g->b, merge);
        }
        g->terminated = false;
    }
    LLVMPositionBuilderAtEnd(g->b, merge);
    if (!ends[0] && !ends[1]) {
        LLVMBuildUnreachable(g->b);
        g->terminated = true;
        return true;
    }
    LLVMValueRef **res = make_phis(g, op->results, n);
    for (int r = 0; r < 2; r++)
        if (ends[r]) add_incoming(g, res, op->results, n, yields[r], ends[r]);
    for (int i = 0; i < n; i++) bind(g, op->results[i], res[i]);
    return true;
}
