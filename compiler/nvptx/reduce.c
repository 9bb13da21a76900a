/* reduce.c: reductions over one axis: within the thread, across lanes with
 * shfl.sync.bfly, then across warps through shared memory. */
#include "gen.h"

/* ---------------------------------------------------------- reductions */

typedef struct {
    BirOpcode code;
    DType d;      /* the dtype combined: f32 for f16/bf16 max/min */
    bool is_arg;  /* argmax/argmin: (value, index) pairs */
} Reduction;

static LLVMValueRef identity(Gen *g, const Reduction *R) {
    bool is_max = R->code == BIR_REDUCE_MAX || R->code == BIR_ARGMAX;
    LLVMTypeRef t = ty(g, R->d);
    if (R->code == BIR_REDUCE_SUM) return LLVMConstNull(t);
    if (dtype_is_float(R->d)) return LLVMConstReal(t, is_max ? -__builtin_inf() : __builtin_inf());
    int bits = dtype_bits(R->d);
    if (!dtype_is_signed(R->d)) return is_max ? LLVMConstNull(t) : LLVMConstAllOnes(t);
    unsigned long long min = 1ull << (bits - 1);
    return LLVMConstInt(t, is_max ? min : min - 1, 0);
}

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

static LLVMValueRef shuffle_xor(Gen *g, LLVMValueRef v, int mask, DType d) {
    if (d == DT_I64) {
        LLVMValueRef lo = LLVMBuildTrunc(g->b, v, g->i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, v, ci64(g, 32), ""), g->i32, "");
        lo = LLVMBuildZExt(g->b, shuffle_xor(g, lo, mask, DT_I32), g->i64, "");
        hi = LLVMBuildZExt(g->b, shuffle_xor(g, hi, mask, DT_I32), g->i64, "");
        return LLVMBuildOr(g->b, lo, LLVMBuildShl(g->b, hi, ci64(g, 32), ""), "");
    }
    bool fl = d == DT_F32;
    LLVMValueRef args[4] = {ci32(g, -1), v, ci32(g, mask), ci32(g, 31)};
    return nvptx_call(g, fl ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32", fl ? g->f32 : g->i32, args, 4);
}

int64_t nvptx_reduce_smem_bytes(Gen *g, const BirOp *op) {
    BlkType xt = vtype(g, op->operands[0]);
    const Layout *l = &g->plan->layouts[op->operands[0]];
    int a = (int)op->attr;
    int64_t others = xt.rank == 2 ? xt.shape[1 - a] : 1;
    DType d = xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype;
    bool is_arg = op->code == BIR_ARGMAX || op->code == BIR_ARGMIN;
    return (int64_t)l->wpc[a] * others * (dtype_bytes(d) + (is_arg ? 4 : 0));
}

bool nvptx_gen_reduce(Gen *g, const BirOp *op, int64_t slot) {
    int x = op->operands[0], r = op->results[0];
    BlkType xt = vtype(g, x), rt = vtype(g, r);
    const Layout *l = &g->plan->layouts[x];
    int a = (int)op->attr, rank = xt.rank, other = rank == 2 ? 1 - a : -1, fast = rank - 1;
    Reduction R = {op->code, xt.dtype == DT_F16 || xt.dtype == DT_BF16 ? DT_F32 : xt.dtype,
                   op->code == BIR_ARGMAX || op->code == BIR_ARGMIN};
    /* 1. within the thread: one partial per position along the other axis */
    int nkeys = other < 0 ? 1 : l->reps[other] * l->spt[other];
    LLVMValueRef acc[256], idx[256];
    int key_reg[256];
    if (nkeys > 256) {
        char shape[48];
        return nvptx_gen_fail(g, op, "this %s of a %s block leaves each thread %d partial results, more than the 256 "
                              "it can hold; use a smaller block along the kept axis, or more warps (--num-warps)",
                              bir_opcode_name(op->code), shape_str(xt, shape, sizeof shape), nkeys);
    }
    for (int k = 0; k < nkeys; k++) acc[k] = NULL, key_reg[k] = -1;
    int64_t tile_a = (int64_t)l->spt[a] * l->tpw[a] * l->wpc[a];
    LLVMValueRef base_a = nvptx_thread_base(g, l, a);
    for (int k = 0; k < l->nregs; k++) {
        int32_t rep[BLK_MAX_RANK], j[BLK_MAX_RANK];
        nvptx_layout_reg_parts(l, k, rep, j);
        int key = other < 0 ? 0 : rep[other] * l->spt[other] + j[other];
        LLVMValueRef v = nvptx_convert(g, g->regs[x][k], xt.dtype, R.d);
        LLVMValueRef i = nvptx_coord(g, l, a, k);
        if (tile_a > xt.shape[a]) { /* the layout wraps: only the first copy counts */
            LLVMValueRef unwrapped = LLVMBuildAdd(g->b, base_a, ci32(g, rep[a] * tile_a + j[a]), "");
            LLVMValueRef first = LLVMBuildICmp(g->b, LLVMIntULT, unwrapped, ci32(g, xt.shape[a]), "");
            v = LLVMBuildSelect(g->b, first, v, identity(g, &R), "");
        }
        if (!acc[key]) {
            acc[key] = v, idx[key] = i, key_reg[key] = k;
        } else {
            combine(g, &R, &acc[key], &idx[key], v, i);
        }
    }
    /* 2. across the lanes along the axis: a butterfly */
    int lanes = l->tpw[a], stride = a == fast ? 1 : l->tpw[fast];
    for (int m = lanes / 2; m >= 1; m /= 2) {
        for (int k = 0; k < nkeys; k++) {
            LLVMValueRef ov = shuffle_xor(g, acc[k], m * stride, R.d);
            LLVMValueRef oi = R.is_arg ? shuffle_xor(g, idx[k], m * stride, DT_I32) : NULL;
            combine(g, &R, &acc[k], &idx[k], ov, oi);
        }
    }
    /* 3. across warps, through shared memory; every thread then combines the
     * warps' partials for the elements its result layout holds */
    int64_t others = rank == 2 ? xt.shape[other] : 1;
    int warps_a = l->wpc[a], es = dtype_bytes(R.d);
    int64_t idx_at = slot + (int64_t)warps_a * others * es;
    LLVMValueRef lane_a = a == fast ? LLVMBuildURem(g->b, g->lane, ci32(g, l->tpw[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->lane, ci32(g, l->tpw[fast]), "");
    LLVMValueRef warp_a = rank == 1 ? g->warp
                        : a == fast ? LLVMBuildURem(g->b, g->warp, ci32(g, l->wpc[fast]), "")
                                    : LLVMBuildUDiv(g->b, g->warp, ci32(g, l->wpc[fast]), "");
    nvptx_barrier(g);
    LLVMBasicBlockRef merge = nvptx_begin_if(g, LLVMBuildICmp(g->b, LLVMIntEQ, lane_a, ci32(g, 0), ""));
    for (int k = 0; k < nkeys; k++) {
        LLVMValueRef oc = other < 0 ? ci32(g, 0) : nvptx_coord(g, l, other, key_reg[k]);
        LLVMValueRef at = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, warp_a, ci32(g, (int32_t)others), ""), oc, "");
        LLVMBuildStore(g->b, acc[k], nvptx_smem_ptr(g, slot, at, es));
        if (R.is_arg) LLVMBuildStore(g->b, idx[k], nvptx_smem_ptr(g, idx_at, at, 4));
    }
    nvptx_end_if(g, merge);
    nvptx_barrier(g);
    const Layout *lr = &g->plan->layouts[r];
    int n_out = rt.rank ? lr->nregs : 1;
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int k = 0; k < n_out; k++) {
        LLVMValueRef c = rt.rank ? nvptx_coord(g, lr, 0, k) : ci32(g, 0);
        LLVMValueRef v = NULL, vi = NULL;
        for (int w = 0; w < warps_a; w++) {
            LLVMValueRef at = LLVMBuildAdd(g->b, c, ci32(g, (int32_t)(w * others)), "");
            LLVMValueRef pv = LLVMBuildLoad2(g->b, ty(g, R.d), nvptx_smem_ptr(g, slot, at, es), "");
            LLVMValueRef pi = R.is_arg ? LLVMBuildLoad2(g->b, g->i32, nvptx_smem_ptr(g, idx_at, at, 4), "") : NULL;
            if (!v) v = pv, vi = pi;
            else combine(g, &R, &v, &vi, pv, pi);
        }
        out[k] = R.is_arg ? vi : nvptx_convert(g, v, R.d, rt.dtype);
    }
    return true;
}
