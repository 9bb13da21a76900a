/* reduce.c: reductions over one axis: within the thread, across lanes with
 * shfl.sync.bfly, then across warps through shared memory. */
#include "gen.h"

/* ---------------------------------------------------------- reductions */

typedef struct {
    BirOpcode code;
    DType d;      /* the dtype combined: f32 for f16/bf16 max/min */
    bool is_arg;  /* argmax/argmin: (value, index) pairs */
} Reduction;

/* Combines (a, ia) with (b, ib); indices only for arg reductions, where
 * the larger (smaller) value wins, a NaN beats any number, and ties go to
 * the smaller index. */
static void combine(Gen *g, const Reduction *R, LLVMValueRef *a, LLVMValueRef *ia, LLVMValueRef b, LLVMValueRef ib) {
    LLVMBuilderRef bl = g->b;
    if (R->code == BIR_REDUCE_SUM) {
        *a = dtype_is_float(R->d) ? LLVMBuildFAdd(bl, *a, b, "") : LLVMBuildAdd(bl, *a, b, "");
        return;
    }
    bool is_max = R->code == BIR_REDUCE_MAX || R->code == BIR_ARGMAX;
    if (!R->is_arg) {
        *a = nvptx_minmax(g, is_max, *a, b, R->d);
        return;
    }
    LLVMValueRef better, tie;
    if (dtype_is_float(R->d)) {
        LLVMValueRef b_nan = LLVMBuildFCmp(bl, LLVMRealUNO, b, b, ""), a_nan = LLVMBuildFCmp(bl, LLVMRealUNO, *a, *a, "");
        better = LLVMBuildFCmp(bl, is_max ? LLVMRealOGT : LLVMRealOLT, b, *a, "");
        better = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, b_nan, LLVMBuildNot(bl, a_nan, ""), ""), "");
        tie = LLVMBuildOr(bl, LLVMBuildFCmp(bl, LLVMRealOEQ, b, *a, ""), LLVMBuildAnd(bl, a_nan, b_nan, ""), "");
    } else {
        LLVMIntPredicate p = dtype_is_signed(R->d) ? (is_max ? LLVMIntSGT : LLVMIntSLT) : (is_max ? LLVMIntUGT : LLVMIntULT);
        better = LLVMBuildICmp(bl, p, b, *a, "");
        tie = LLVMBuildICmp(bl, LLVMIntEQ, b, *a, "");
    }
    better = LLVMBuildOr(bl, better, LLVMBuildAnd(bl, tie, LLVMBuildICmp(bl, LLVMIntSLT, ib, *ia, ""), ""), "");
    *a = LLVMBuildSelect(bl, better, b, *a, "");
    *ia = LLVMBuildSelect(bl, better, ib, *ia, "");
}

/* The operand's layout seen as the result's after the lanes along the axis
 * have combined (they hold the same results then): its slice. */
static Layout reduced_view(const Layout *l, int a) {
    Layout kept = *l;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) kept.lane[b][a] = 0;
    return l->rank == 2 ? nvptx_layout_slice(&kept, a) : kept;
}

/* In registers alone: no warps divide the axis, and the result's layout
 * holds each thread's own results. */
static bool in_registers(Gen *g, const BirOp *op) {
    const Layout *l = &g->s->plan->layouts[op->operands[0]];
    int a = (int)op->attr;
    if (nvptx_layout_warps_along(l, a) != 1) return false;
    if (vtype(g, op->results[0]).rank == 0) return true;
    Layout seen = reduced_view(l, a);
    return nvptx_layout_local_map(&seen, &g->s->plan->layouts[op->results[0]], (Projection){{0, 1}}, NULL);
}

int64_t nvptx_reduce_smem_bytes(Gen *g, const BirOp *op) {
    BlkType xt = vtype(g, op->operands[0]);
    const Layout *l = &g->s->plan->layouts[op->operands[0]];
    int a = (int)op->attr;
    int warps_a = nvptx_layout_warps_along(l, a);
    if (in_registers(g, op)) return 0;
    int64_t others = xt.rank == 2 ? xt.shape[1 - a] : 1;
    DType d = xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype;
    bool is_arg = op->code == BIR_ARGMAX || op->code == BIR_ARGMIN;
    return (int64_t)warps_a * others * (dtype_bytes(d) + (is_arg ? 4 : 0));
}

/* Reduces along axis a: registers that differ only along a combine within
 * the thread, lanes that differ along a with butterfly shuffles, and warps
 * that differ along a through shared memory (when there are any). Bits of
 * the layout without a basis hold copies and take no part. */
bool nvptx_gen_reduce(Gen *g, const BirOp *op, int64_t slot) {
    int x = op->operands[0], r = op->results[0];
    BlkType xt = vtype(g, x), rt = vtype(g, r);
    const Layout *l = &g->s->plan->layouts[x];
    int a = (int)op->attr, rank = xt.rank, other = rank == 2 ? 1 - a : -1;
    Reduction R = {op->code, xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype,
                   op->code == BIR_ARGMAX || op->code == BIR_ARGMIN};
    /* 1. within the thread: one partial per register "key", the register
     * index with its bits along a (and copy bits) cleared */
    int32_t along_a = 0, copies = nvptx_layout_copy_regs(l);
    for (int b = 0; b < l->nreg_bits; b++)
        if (l->reg[b][a]) along_a |= 1 << b;
    int nkeys = nvptx_layout_partials(l, a); /* at most 256: the schedule refuses more */
    LLVMValueRef *acc = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *acc); /* by key register */
    LLVMValueRef *idx = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *idx);
    int *keys = arena_alloc(&g->arena, (size_t)nkeys * sizeof *keys);
    int nk = 0;
    for (int k = 0; k < l->nregs; k++) {
        if (k & copies) continue;
        int key = k & ~along_a;
        LLVMValueRef v = nvptx_convert_dtype(g, g->regs[x][k], xt.dtype, R.d);
        LLVMValueRef i = R.is_arg ? nvptx_coord(g, l, a, k) : NULL;
        if (!acc[key]) {
            acc[key] = v, idx[key] = i, keys[nk++] = key;
        } else {
            combine(g, &R, &acc[key], &idx[key], v, i);
        }
    }
    /* 2. across the lanes along the axis: a butterfly, highest lane bit first */
    for (int b = LAYOUT_LANE_BITS - 1; b >= 0; b--) {
        if (!l->lane[b][a]) continue;
        for (int k = 0; k < nk; k++) {
            LLVMValueRef ov = nvptx_shuffle_xor(g, acc[keys[k]], 1 << b, R.d);
            LLVMValueRef oi = R.is_arg ? nvptx_shuffle_xor(g, idx[keys[k]], 1 << b, DT_I32) : NULL;
            combine(g, &R, &acc[keys[k]], &idx[keys[k]], ov, oi);
        }
    }
    LLVMValueRef *out = nvptx_new_regs(g, r);
    const Layout *lr = &g->s->plan->layouts[r];
    int n_out = rt.rank ? lr->nregs : 1;
    int warps_a = nvptx_layout_warps_along(l, a);
    if (in_registers(g, op)) {
        /* every thread holds whole results: the result's layout is the
         * operand's without the axis, so its registers are the keys' */
        Layout seen = reduced_view(l, a);
        int32_t *map = arena_alloc(&g->arena, (size_t)n_out * sizeof *map);
        Projection same = {{0, 1}};
        /* the slice drops the register bits along a: put them back as zeros */
        int32_t bits_kept[LAYOUT_MAX_REG_BITS];
        int nkept = 0;
        for (int b = 0; b < l->nreg_bits; b++)
            if (!(along_a >> b & 1)) bits_kept[nkept++] = b;
        if (rt.rank) nvptx_layout_local_map(&seen, lr, same, map);
        for (int k = 0; k < n_out; k++) {
            int32_t sr = rt.rank ? map[k] : 0, key = 0;
            for (int b = 0; b < nkept; b++)
                if (sr >> b & 1) key |= 1 << bits_kept[b];
            key &= ~copies;
            out[k] = R.is_arg ? idx[key] : nvptx_convert_dtype(g, acc[key], R.d, rt.dtype);
        }
        return true;
    }
    /* 3. across warps, through shared memory; every thread then combines the
     * warps' partials for the elements its result layout holds */
    int64_t others = rank == 2 ? xt.shape[other] : 1;
    int es = dtype_bytes(R.d);
    int64_t idx_at = slot + (int64_t)warps_a * others * es;
    int32_t lanes_a = 0, low_warp_a = 0;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++)
        if (l->lane[b][a]) lanes_a |= 1 << b;
    for (int b = l->nwarp_bits - 1; b >= 0; b--)
        if (l->warp[b][a]) low_warp_a = l->warp[b][a];
    /* this warp's index among those along a: its coordinate part over the lowest one */
    Layout warps_only = *l;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++)
        for (int d = 0; d < rank; d++) warps_only.lane[b][d] = 0;
    int shift = 0;
    while ((1 << shift) < low_warp_a) shift++;
    LLVMValueRef warp_a = LLVMBuildLShr(g->b, nvptx_thread_base(g, &warps_only, a), ci32(g, shift), "");
    nvptx_barrier(g);
    LLVMValueRef first_lane = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, g->lane, ci32(g, lanes_a), ""), ci32(g, 0), "");
    LLVMBasicBlockRef merge = nvptx_begin_if(g, first_lane);
    for (int k = 0; k < nk; k++) {
        LLVMValueRef oc = other < 0 ? ci32(g, 0) : nvptx_coord(g, l, other, keys[k]);
        LLVMValueRef at = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, warp_a, ci32(g, (int32_t)others), ""), oc, "");
        LLVMBuildStore(g->b, acc[keys[k]], nvptx_smem_ptr(g, slot, at, es));
        if (R.is_arg) LLVMBuildStore(g->b, idx[keys[k]], nvptx_smem_ptr(g, idx_at, at, 4));
    }
    nvptx_end_if(g, merge);
    nvptx_barrier(g);
    for (int k = 0; k < n_out; k++) {
        LLVMValueRef c = rt.rank ? nvptx_coord(g, lr, 0, k) : ci32(g, 0);
        LLVMValueRef v = NULL, vi = NULL;
        for (int w = 0; w < warps_a; w++) {
            LLVMValueRef at = LLVMBuildAdd(g->b, c, ci32(g, (int32_t)(w * others)), "");
            LLVMValueRef pv = LLVMBuildLoad2(g->b, ty(g, R.d), nvptx_smem_ptr(g, slot, at, es), "");
            LLVMValueRef pi = R.is_arg ? LLVMBuildLoad2(g->b, g->m->t.i32, nvptx_smem_ptr(g, idx_at, at, 4), "") : NULL;
            if (!v) v = pv, vi = pi;
            else combine(g, &R, &v, &vi, pv, pi);
        }
        out[k] = R.is_arg ? vi : nvptx_convert_dtype(g, v, R.d, rt.dtype);
    }
    return true;
}

/* ------------------------------------------------------------- histogram */

int64_t nvptx_histogram_smem_bytes(Gen *g, const BirOp *op) {
    int64_t bins = op->attr * 4, mask = 0;
    if (op->operands[1] != BIR_NONE)
        mask = nvptx_operand_smem_bytes(g, op->operands[1], &g->s->plan->layouts[op->operands[0]]);
    return bins > mask ? bins : mask;
}

/* The bins live in shared memory: zeroed by the threads in turn, then each
 * element a thread owns (not a copy, not masked off, inside 0 .. bins - 1)
 * adds one to its bin with a shared atomic, then each thread reads the
 * bins its registers of the result hold. */
bool nvptx_gen_histogram(Gen *g, const BirOp *op, int64_t slot) {
    int x = op->operands[0], r = op->results[0];
    DType d = vtype(g, x).dtype;
    const Layout *l = &g->s->plan->layouts[x], *to = &g->s->plan->layouts[r];
    LLVMValueRef *mask = op->operands[1] != BIR_NONE ? nvptx_operand(g, op->operands[1], l, slot) : NULL;
    int threads = g->s->plan->num_warps * 32;
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    /* zero: bin i by thread i % threads, in a loop when there are more bins than threads */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "bins.zero");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "bins.zeroed");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, g->tid, ci32(g, (int32_t)op->attr), ""), loop, done);
    LLVMPositionBuilderAtEnd(g->b, loop);
    LLVMValueRef i = LLVMBuildPhi(g->b, g->m->t.i32, "");
    LLVMAddIncoming(i, &g->tid, &pre, 1);
    nvptx_smem_write(g, DT_I32, slot, i, ci32(g, 0));
    LLVMValueRef next = LLVMBuildAdd(g->b, i, ci32(g, threads), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
    LLVMAddIncoming(i, &next, &latch, 1);
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, next, ci32(g, (int32_t)op->attr), ""), loop, done);
    LLVMPositionBuilderAtEnd(g->b, done);
    nvptx_barrier(g);
    LLVMValueRef own = nvptx_owner(g, l);
    int32_t copies = nvptx_layout_copy_regs(l);
    LLVMTypeRef wide = dtype_bits(d) == 64 ? g->m->t.i64 : g->m->t.i32;
    for (int k = 0; k < l->nregs; k++) {
        if (k & copies) continue;
        LLVMValueRef v = g->regs[x][k];
        if (LLVMTypeOf(v) != wide) v = dtype_is_signed(d) ? LLVMBuildSExt(g->b, v, wide, "") : LLVMBuildZExt(g->b, v, wide, "");
        /* unsigned compare: a negative value is out of range too */
        LLVMValueRef in = LLVMBuildICmp(g->b, LLVMIntULT, v, LLVMConstInt(wide, (unsigned long long)op->attr, 0), "");
        in = LLVMBuildAnd(g->b, in, own, "");
        if (mask) in = LLVMBuildAnd(g->b, in, mask[k], "");
        LLVMBasicBlockRef merge = nvptx_begin_if(g, in);
        LLVMValueRef bin = wide == g->m->t.i32 ? v : LLVMBuildTrunc(g->b, v, g->m->t.i32, "");
        LLVMBuildAtomicRMW(g->b, LLVMAtomicRMWBinOpAdd, nvptx_smem_ptr(g, slot, bin, 4), ci32(g, 1),
                           LLVMAtomicOrderingMonotonic, 0);
        nvptx_end_if(g, merge);
    }
    nvptx_barrier(g);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int k = 0; k < to->nregs; k++) out[k] = nvptx_smem_read(g, DT_I32, slot, nvptx_coord(g, to, 0, k));
    return true;
}
