/* bulk.c: a block atomic_add whose old value nothing reads, added to memory
 * by one bulk reduction (cp.reduce.async.bulk: sm_90 with PTX 8.0) instead
 * of a red an element.
 *
 * Where the block's pointers cover one contiguous range of memory, starting
 * at a 16-byte boundary (its rows consecutive: attention backward's dQ share
 * of a step, [64, 32] f32 on 4 warps), every thread stores its elements in
 * a staging area of shared memory as they lie in memory, and one thread
 * hands the whole range to the copy engine, which adds it to memory: one
 * instruction a block instead of one an element, with its address and mask
 * (docs/notebook.md, 2026-11-27: attention backward's main kernel at D = 64
 * took 4.45 ms against 5.45; a reduction a row took more than the reds,
 * each one's overhead in the copy engine).
 *
 * The reduction is asynchronous: the copy engine reads the staging after
 * the instruction and adds to memory later still. Two stagings take turns,
 * so that one barrier a run suffices. Run n of the op:
 *   every thread stores its elements in staging n % 2 (run n - 2's reads of
 *   it ended before run n - 1's barrier, below) and runs fence.proxy.async
 *   (the copy engine reads through the async proxy); the thread holding the
 *   block's first element waits for run n - 1's reads (wait_group.read 0);
 *   a barrier that also votes whether every mask is true;
 *   if so, that thread issues the reduction of staging n % 2 (its group
 *   committed); else every thread adds its elements by reds, as without.
 * Before the program ends, the same wait (nvptx_bulk_drain: the staging
 * must outlive the reads). Each reduction is relaxed at GPU scope, so the
 * op must be too; and the sums arrive by the end of the launch, not in
 * program order, so nothing else in the kernel may read or write through
 * the op's pointer parameter (other relaxed adds commute with it).
 *
 * The refusal (schedule.c asks, the plan prints it) and the code are here;
 * memory.c calls the code with the op's operands in its layout, and emits
 * the reds of the other way itself. */
#include "gen.h"

/* Below this a red an element is kept: the staging's barrier is not worth
 * it for a few elements a thread (not measured). */
enum { BULK_MIN_ELEMS_A_THREAD = 8 };

/* Does another op reach memory through parameter p, other than a relaxed
 * add that commutes with op's? The first such op (or one whose pointers'
 * parameter is not known), else NULL. */
static const BirOp *other_access(Gen *g, const BirBlock *b, const BirOp *op, int p, DType d) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *o = b->ops.items[i];
        BirOpcode c = o->code;
        if (o != op && (c == BIR_LOAD || c == BIR_STORE || bir_is_atomic(c))) {
            bool commutes = c == BIR_ATOMIC_ADD && atomic_sem_of(o->attr) == ATOMIC_RELAXED &&
                            !nvptx_value_used(g->f->body, o->results[0]) && vtype(g, o->operands[0]).elem == d;
            int q = nvptx_pointer_param(g, o->operands[0]);
            if (q < 0 || (q == p && !commutes)) return o;
        }
        for (int r = 0; r < o->nregions; r++) {
            const BirOp *found = other_access(g, o->regions[r], op, p, d);
            if (found) return found;
        }
    }
    return NULL;
}

const char *nvptx_bulk_refusal(Gen *g, const BirOp *op, bool red, NvptxBulkReduce *out) {
    const int *a = op->operands;
    BlkType pt = vtype(g, a[0]);
    const NvptxArch *arch = g->m->arch;
    if (arch->sm < 90 || nvptx_ptx_isa(arch) < 80)
        return arena_printf(&g->arena, "bulk reductions need PTX 8.0, which blkc emits for sm_90a (%s's is %d.%d)",
                            arch->name, nvptx_ptx_isa(arch) / 10, nvptx_ptx_isa(arch) % 10);
    if (op->code != BIR_ATOMIC_ADD) return "only atomic_add adds by bulk reductions";
    if (!red || atomic_sem_of(op->attr) != ATOMIC_RELAXED)
        return "its sem is not \"relaxed\" or its old value is read (a bulk reduction orders nothing and returns nothing)";
    if (atomic_scope_of(op->attr) == ATOMIC_SYS) return "its scope is \"sys\" (a bulk reduction's is the GPU)";
    if (pt.rank > 2) return "its block has more than 2 dimensions";
    const AxisInfo *ax = &g->s->plan->axis[a[0]];
    int cd = -1;
    for (int d = 0; d < pt.rank; d++)
        if (ax->contig[d] >= pt.shape[d] && (cd < 0 || pt.shape[d] > pt.shape[cd])) cd = d;
    int64_t steps[2];
    bool rows_follow = pt.rank == 1 || (cd >= 0 && nvptx_pointer_steps(g, a[0], steps) && steps[cd] == 1 &&
                                        steps[1 - cd] == pt.shape[cd]);
    if (cd < 0 || !rows_follow) return "its pointers are not one contiguous range (rows following one another)";
    int64_t elems = 1;
    for (int d = 0; d < pt.rank; d++) elems *= pt.shape[d];
    int64_t bytes = elems * dtype_bytes(pt.elem);
    if (ax->div[cd] % 16 || bytes % 16)
        return arena_printf(&g->arena, "its range (%lld bytes) is not known to start at a 16-byte boundary and be a "
                            "multiple of 16 bytes", (long long)bytes);
    if (g->s->plan->num_warps > 4)
        return "its program has more than one warpgroup (measured slower there: attention backward on 8 warps took "
               "1.1 times the reds' time, one program an SM waiting at the staging's barrier)";
    if (elems < (int64_t)BULK_MIN_ELEMS_A_THREAD * 32 * g->s->plan->num_warps)
        return arena_printf(&g->arena, "fewer than %d elements a thread (the staging's barrier would cost more than "
                            "their reds)", BULK_MIN_ELEMS_A_THREAD);
    int p = nvptx_pointer_param(g, a[0]);
    if (p < 0) return "its pointers' parameter is not known";
    const BirOp *other = other_access(g, g->f->body, op, p, pt.elem);
    if (other) {
        int q = nvptx_pointer_param(g, other->operands[0]);
        if (q < 0)
            return arena_printf(&g->arena, "the %s at line %u reaches memory through a parameter not known (it could "
                                "be %s, whose sums arrive only by the launch's end)", bir_opcode_name(other->code),
                                other->span.line, g->f->params[p].name);
        return arena_printf(&g->arena, "the %s at line %u reaches %s too (the sums arrive only by the launch's end)",
                            bir_opcode_name(other->code), other->span.line, g->f->params[p].name);
    }
    if (g->m->opt->no_bulk_reduce) return "--no-bulk-reduce"; /* (last: it could be one) */
    *out = (NvptxBulkReduce){.cd = cd, .bytes = bytes, .at = -1};
    return NULL;
}

/* How many registers from a multiple of n on hold consecutive elements
 * along d, starting at a multiple of n there (at most max). */
static int run_along(const Layout *l, int d, int max) {
    int32_t threads = 0;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) threads |= l->lane[b][d];
    for (int b = 0; b < l->nwarp_bits; b++) threads |= l->warp[b][d];
    int n = 1;
    for (int b = 0; b < l->nreg_bits && (1 << (b + 1)) <= max; b++) {
        bool next = l->reg[b][d] == (1 << b) && !(threads & (1 << b));
        for (int e = 0; e < l->rank; e++) next &= e == d || l->reg[b][e] == 0;
        if (!next) break;
        n <<= 1;
    }
    return n;
}

/* Which staging this run of the op writes: a variable of the function,
 * flipped at each run (LLVM keeps it in a register). */
static LLVMValueRef take_turn(Gen *g) {
    LLVMBuilderRef entry = LLVMCreateBuilderInContext(g->m->ctx);
    LLVMPositionBuilderBefore(entry, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(g->fn)));
    LLVMValueRef turn_var = LLVMBuildAlloca(entry, g->m->t.i32, "bulk.turn");
    LLVMBuildStore(entry, ci32(g, 0), turn_var);
    LLVMDisposeBuilder(entry);
    LLVMValueRef turn = LLVMBuildLoad2(g->b, g->m->t.i32, turn_var, "");
    LLVMBuildStore(g->b, LLVMBuildXor(g->b, turn, ci32(g, 1), ""), turn_var);
    return turn;
}

/* Where register k's element lies in the staging at base: as in memory. */
static LLVMValueRef staged_at(Gen *g, const NvptxBulkReduce *bk, BlkType pt, const Layout *l, int k, LLVMValueRef base) {
    int es = dtype_bytes(pt.elem), cd = bk->cd;
    LLVMValueRef off = LLVMBuildMul(g->b, nvptx_coord(g, l, cd, k), ci32(g, es), "");
    if (pt.rank == 2)
        off = LLVMBuildAdd(g->b, off, LLVMBuildMul(g->b, nvptx_coord(g, l, 1 - cd, k), ci32(g, pt.shape[cd] * es), ""), "");
    return nvptx_smem_at(g, LLVMBuildAdd(g->b, base, off, ""));
}

NvptxBulkRun nvptx_bulk_reduce_begin(Gen *g, const BirOp *op, const Layout *l, LLVMValueRef first_ptr,
                                     LLVMValueRef *vals, LLVMValueRef *mask) {
    const NvptxBulkReduce *bk = nvptx_atomic_schedule(g->s, op)->bulk;
    BlkType pt = vtype(g, op->operands[0]);
    int es = dtype_bytes(pt.elem);
    LLVMValueRef base = LLVMBuildAdd(g->b, ci32(g, (int32_t)bk->at),
                                     LLVMBuildMul(g->b, take_turn(g), ci32(g, (int32_t)bk->bytes), ""), "");
    /* every thread its elements (the first copy of each), where they lie in memory */
    int32_t copies = nvptx_layout_copy_regs(l);
    LLVMValueRef own = nvptx_owner(g, l);
    LLVMBasicBlockRef owned = nvptx_begin_if(g, own);
    int run = run_along(l, bk->cd, 16 / es);
    for (int k = 0; k < l->nregs; k += run)
        if (!(k & copies)) nvptx_vector_store(g, staged_at(g, bk, pt, l, k, base), vals + k, run, pt.elem);
    nvptx_end_if(g, owned);
    nvptx_proxy_fence(g); /* the staging, written through the generic proxy, to the copy engine */
    /* the first element's thread (its register 0) issues; the last run's reads are done before the barrier */
    LLVMValueRef first = own;
    for (int d = 0; d < pt.rank; d++)
        first = LLVMBuildAnd(g->b, first, LLVMBuildICmp(g->b, LLVMIntEQ, nvptx_thread_base(g, l, d), ci32(g, 0), ""), "");
    LLVMBasicBlockRef waited = nvptx_begin_if(g, first);
    nvptx_asm_call(g, g->m->t.void_t, "cp.async.bulk.wait_group.read 0;", "~{memory}", NULL, 0, true);
    nvptx_end_if(g, waited);
    LLVMValueRef vote = LLVMConstInt(g->m->t.i1, 1, 0);
    for (int k = 0; mask && k < l->nregs; k++) vote = LLVMBuildAnd(g->b, vote, mask[k], "");
    LLVMValueRef every = nvptx_barrier_and(g, vote);
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "bulk.done");
    LLVMBasicBlockRef whole = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "bulk.reduce");
    LLVMBasicBlockRef reds = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "bulk.reds");
    LLVMBuildCondBr(g->b, every, whole, reds);
    LLVMPositionBuilderAtEnd(g->b, whole);
    LLVMBasicBlockRef issued = nvptx_begin_if(g, first);
    char text[160];
    snprintf(text, sizeof text, "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.%s [$0], [$1], %lld;",
             nvptx_add_type(pt.elem), (long long)bk->bytes);
    LLVMValueRef args[2] = {LLVMBuildPtrToInt(g->b, first_ptr, g->m->t.i64, ""),
                            nvptx_smem_addr(g, base)};
    nvptx_asm_call(g, g->m->t.void_t, text, "l,r,~{memory}", args, 2, true);
    nvptx_asm_call(g, g->m->t.void_t, "cp.async.bulk.commit_group;", "~{memory}", NULL, 0, true);
    nvptx_end_if(g, issued);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, reds);
    return (NvptxBulkRun){base, done};
}

LLVMValueRef *nvptx_bulk_staged(Gen *g, const BirOp *op, const Layout *l, const NvptxBulkRun *r) {
    const NvptxBulkReduce *bk = nvptx_atomic_schedule(g->s, op)->bulk;
    BlkType pt = vtype(g, op->operands[0]);
    LLVMValueRef *vals = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *vals);
    int run = run_along(l, bk->cd, 16 / dtype_bytes(pt.elem));
    for (int k = 0; k < l->nregs; k += run) nvptx_vector_load(g, staged_at(g, bk, pt, l, k, r->base), run, pt.elem, vals + k);
    return vals;
}

void nvptx_bulk_reduce_end(Gen *g, const NvptxBulkRun *r) {
    LLVMBuildBr(g->b, r->done);
    LLVMPositionBuilderAtEnd(g->b, r->done);
}

void nvptx_bulk_drain(Gen *g) {
    if (g->s->nbulk) nvptx_asm_call(g, g->m->t.void_t, "cp.async.bulk.wait_group.read 0;", "~{memory}", NULL, 0, true);
}
