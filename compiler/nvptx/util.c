/* util.c: what the files of the NVPTX backend share: errors at an op,
 * questions about the block IR, LLVM-C helpers (intrinsic and inline-PTX
 * calls, thread-0 sections, shared memory addressing), and the coordinates
 * a thread's registers hold in a layout. */
#include "gen.h"

#include <math.h>

/* ------------------------------------------------------------- errors */

bool nvptx_error(NvptxModule *m, const BirFunction *f, const BirOp *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(m->de, DIAG_ERROR, f->src, op ? op->span : f->span, fmt, ap);
    va_end(ap);
    return false;
}

bool nvptx_gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nvptx_error(g->m, g->f, op, "%s", msg);
}

/* ------------------------------------------------------------ the IR */

static bool region_returns(const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++)
        if (nvptx_op_ends_block(b->ops.items[i])) return true;
    return false;
}

bool nvptx_op_ends_block(const BirOp *op) {
    return op->code == BIR_RETURN || (op->code == BIR_IF && region_returns(op->regions[0]) && region_returns(op->regions[1]));
}

LLVMIntPredicate nvptx_loop_continues(Gen *g, const BirOp *loop) {
    DType d = vtype(g, loop->operands[0]).dtype;
    return loop->attr & FOR_DESCENDING ? LLVMIntSGT : dtype_is_signed(d) ? LLVMIntSLT : LLVMIntULT; /* attr: a negative step */
}

bool nvptx_value_used(const BirBlock *b, int v) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->noperands; k++) if (op->operands[k] == v) return true;
        for (int k = 0; k < op->nregions; k++) if (nvptx_value_used(op->regions[k], v)) return true;
    }
    return false;
}

int nvptx_spread_scalar(Gen *g, int v) {
    for (const BirOp *op; (op = g->f->values[v].def) &&
                          (op->code == BIR_SPLAT || op->code == BIR_BROADCAST || op->code == BIR_EXPAND_DIMS);)
        v = op->operands[0];
    return v;
}

bool nvptx_arange_term(Gen *g, int t, int *axis, const BirOp **range, int *bound) {
    const BirOp *op = g->f->values[t].def;
    if (!op || (op->code != BIR_LT && op->code != BIR_GT) || vtype(g, t).rank != 2) return false;
    const BirOp *x = g->f->values[op->operands[op->code == BIR_LT ? 0 : 1]].def;
    while (x && x->code == BIR_BROADCAST && vtype(g, x->operands[0]).rank == 2) x = g->f->values[x->operands[0]].def;
    if (!x || x->code != BIR_EXPAND_DIMS) return false;
    *range = g->f->values[x->operands[0]].def;
    if (!*range || (*range)->code != BIR_ARANGE) return false;
    *axis = x->attr == 0 ? 1 : 0; /* [n] -> [1, n] (axis 0 added) runs along dimension 1 */
    *bound = op->operands[op->code == BIR_LT ? 1 : 0];
    return true;
}

bool nvptx_plus_zero(Gen *g, int v) {
    const BirOp *op = g->f->values[nvptx_spread_scalar(g, v)].def;
    if (!op || op->code != BIR_CONST) return false;
    return dtype_holds_float(vtype(g, v).dtype) ? op->value.f == 0 && !signbit(op->value.f) : op->value.i == 0;
}

bool nvptx_zero_value(Gen *g, int v) {
    const BirOp *op = g->f->values[v].def;
    if (op && op->code == BIR_SPLAT) op = g->f->values[op->operands[0]].def;
    return op && op->code == BIR_CONST && (dtype_holds_float(vtype(g, v).dtype) ? op->value.f == 0.0 : op->value.i == 0);
}

int nvptx_dot_run_steps(Gen *g, const NvptxDotSchedule *ds, int k_step, int ksteps) {
    if (!ds->promote_every) return 0;
    int steps = ds->promote_every / k_step;
    if (steps < 1 || ksteps % steps) {
        nvptx_gen_fail(g, ds->op, "internal compiler error: K is not a whole number of %d-term sums",
                       ds->promote_every);
        return -1;
    }
    return steps;
}

int nvptx_ops_in(const BirBlock *b, BirOpcode code) {
    int n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        n += code == BIR_OPCODE_COUNT || op->code == code;
        for (int r = 0; r < op->nregions; r++) n += nvptx_ops_in(op->regions[r], code);
    }
    return n;
}

/* ------------------------------------------------------------- helpers */

LLVMValueRef *nvptx_new_regs(Gen *g, int v) {
    int n = nregs(g, v);
    g->regs[v] = arena_alloc(&g->arena, (size_t)n * sizeof(LLVMValueRef));
    return g->regs[v];
}

/* An intrinsic or external function by name, declared on first use. */
LLVMValueRef nvptx_call(Gen *g, const char *name, LLVMTypeRef ret, LLVMValueRef *args, int n) {
    LLVMTypeRef params[16];
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->m->mod, name);
    if (!fn) fn = LLVMAddFunction(g->m->mod, name, fty);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

LLVMValueRef nvptx_call0(Gen *g, const char *name, LLVMTypeRef ret) { return nvptx_call(g, name, ret, NULL, 0); }

LLVMValueRef nvptx_asm_call(Gen *g, LLVMTypeRef ret, const char *text, const char *constraints,
                             LLVMValueRef *args, int n, bool side_effects) {
    LLVMTypeRef *params = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *params);
    for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, params, (unsigned)n, 0);
    LLVMValueRef fn = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)constraints,
                                       strlen(constraints), side_effects, 0, LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(g->b, fty, fn, args, (unsigned)n, "");
}

void nvptx_barrier(Gen *g) {
    if (!g->s->ws_loop) {
        nvptx_call0(g, "llvm.nvvm.barrier0", g->m->t.void_t);
        return;
    }
    LLVMValueRef args[2] = {ci32(g, 0), ci32(g, 32 * g->s->plan->num_warps)}; /* the producer warp never joins */
    nvptx_call(g, "llvm.nvvm.barrier", g->m->t.void_t, args, 2);
}

LLVMValueRef nvptx_barrier_and(Gen *g, LLVMValueRef vote) {
    LLVMValueRef v = LLVMBuildZExt(g->b, vote, g->m->t.i32, "");
    if (!g->s->ws_loop)
        return LLVMBuildICmp(g->b, LLVMIntNE, nvptx_call(g, "llvm.nvvm.barrier0.and", g->m->t.i32, &v, 1), ci32(g, 0), "");
    LLVMValueRef args[2] = {v, ci32(g, 32 * g->s->plan->num_warps)}; /* the producer warps never join */
    LLVMValueRef all = nvptx_asm_call(g, g->m->t.i32,
                                      "{ .reg .pred q, p; setp.ne.u32 q, $1, 0; bar.red.and.pred p, 0, $2, q; "
                                      "selp.u32 $0, 1, 0, p; }", "=r,r,r,~{memory}", args, 2, true);
    return LLVMBuildICmp(g->b, LLVMIntNE, all, ci32(g, 0), "");
}

void nvptx_asm_void(Gen *g, const char *text) { nvptx_asm_call(g, g->m->t.void_t, text, "", NULL, 0, true); }

void nvptx_proxy_fence(Gen *g) { nvptx_asm_void(g, "fence.proxy.async.shared::cta;"); }

/* Code under cond (thread 0, an owner of copies): returns the merge block
 * after setting up the branch; the caller emits into the then-block and
 * calls nvptx_end_if. */
LLVMBasicBlockRef nvptx_begin_if(Gen *g, LLVMValueRef cond) {
    LLVMBasicBlockRef then_bb = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "if");
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "if.end");
    LLVMBuildCondBr(g->b, cond, then_bb, merge);
    LLVMPositionBuilderAtEnd(g->b, then_bb);
    return merge;
}

void nvptx_end_if(Gen *g, LLVMBasicBlockRef merge) {
    LLVMBuildBr(g->b, merge);
    LLVMPositionBuilderAtEnd(g->b, merge);
}

/* A pointer into the kernel's shared memory. */
LLVMValueRef nvptx_smem_at(Gen *g, LLVMValueRef byte_off) { return LLVMBuildGEP2(g->b, g->m->t.i8, g->m->shared, &byte_off, 1, ""); }

LLVMValueRef nvptx_smem_addr(Gen *g, LLVMValueRef byte_off) {
    return LLVMBuildAdd(g->b, LLVMBuildPtrToInt(g->b, g->m->shared, g->m->t.i32, ""), byte_off, "");
}

LLVMValueRef nvptx_smem_ptr(Gen *g, int64_t offset, LLVMValueRef index, int elem_size) {
    LLVMValueRef off = ci32(g, offset);
    if (index) off = LLVMBuildAdd(g->b, off, LLVMBuildMul(g->b, index, ci32(g, elem_size), ""), "");
    return nvptx_smem_at(g, off);
}

/* w consecutive elements of dtype d at ptr (any address space, aligned to
 * their w * size bytes) as one access: a plain load or store, or a vector. */
void nvptx_vector_load(Gen *g, LLVMValueRef ptr, int w, DType d, LLVMValueRef *out) {
    LLVMTypeRef t = w == 1 ? mem_ty(g, d) : LLVMVectorType(mem_ty(g, d), (unsigned)w);
    LLVMValueRef v = LLVMBuildLoad2(g->b, t, ptr, "");
    LLVMSetAlignment(v, (unsigned)(w * dtype_bytes(d)));
    if (w == 1) out[0] = from_mem(g, v, d);
    for (int i = 0; i < w && w > 1; i++) out[i] = from_mem(g, LLVMBuildExtractElement(g->b, v, ci32(g, i), ""), d);
}

void nvptx_vector_store(Gen *g, LLVMValueRef ptr, const LLVMValueRef *vals, int w, DType d) {
    LLVMValueRef v = to_mem(g, vals[0], d);
    if (w > 1) {
        v = LLVMGetUndef(LLVMVectorType(mem_ty(g, d), (unsigned)w));
        for (int i = 0; i < w; i++) v = LLVMBuildInsertElement(g->b, v, to_mem(g, vals[i], d), ci32(g, i), "");
    }
    LLVMSetAlignment(LLVMBuildStore(g->b, v, ptr), (unsigned)(w * dtype_bytes(d)));
}

/* ---------------------------------------------------------- coordinates */

/* What the bits of `id` (lane or warp) add to the coordinate along d: runs
 * of bits whose bases double along d become one shift-and-mask each. */
static LLVMValueRef id_part(Gen *g, LLVMValueRef id, const int32_t (*basis)[BLK_MAX_RANK], int nbits, int d,
                            LLVMValueRef sum) {
    for (int b = 0; b < nbits;) {
        if (!basis[b][d]) {
            b++;
            continue;
        }
        int len = 1;
        while (b + len < nbits && basis[b + len][d] == basis[b][d] << len) len++;
        LLVMValueRef field = b ? LLVMBuildLShr(g->b, id, ci32(g, b), "") : id;
        if (b + len < 32) field = LLVMBuildAnd(g->b, field, ci32(g, (1 << len) - 1), "");
        int shift = 0;
        while ((1 << shift) < basis[b][d]) shift++;
        if (shift) field = LLVMBuildShl(g->b, field, ci32(g, shift), "");
        sum = sum ? LLVMBuildOr(g->b, sum, field, "") : field;
        b += len;
    }
    return sum;
}

LLVMValueRef nvptx_thread_base(Gen *g, const Layout *l, int d) {
    LLVMValueRef c = id_part(g, g->lane, l->lane, LAYOUT_LANE_BITS, d, NULL);
    c = id_part(g, g->warp, l->warp, l->nwarp_bits, d, c);
    return c ? c : ci32(g, 0);
}

LLVMValueRef nvptx_coord(Gen *g, const Layout *l, int d, int r) {
    return LLVMBuildOr(g->b, nvptx_thread_base(g, l, d), ci32(g, nvptx_layout_coord(l, d, r, 0, 0)), "");
}

LLVMValueRef nvptx_warpgroup(Gen *g) { return LLVMBuildLShr(g->b, g->warp, ci32(g, 2), ""); }

/* Does this thread hold the first copy of its elements: is every lane and
 * warp bit without a basis zero? */
LLVMValueRef nvptx_owner(Gen *g, const Layout *l) {
    int32_t lanes = 0, warps = 0;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) {
        bool zero = true;
        for (int d = 0; d < l->rank; d++) zero &= l->lane[b][d] == 0;
        if (zero) lanes |= 1 << b;
    }
    for (int b = 0; b < l->nwarp_bits; b++) {
        bool zero = true;
        for (int d = 0; d < l->rank; d++) zero &= l->warp[b][d] == 0;
        if (zero) warps |= 1 << b;
    }
    LLVMValueRef ok = LLVMConstInt(g->m->t.i1, 1, 0);
    if (lanes) ok = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, g->lane, ci32(g, lanes), ""), ci32(g, 0), "");
    if (warps)
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, g->warp, ci32(g, warps), ""),
                                                  ci32(g, 0), ""), "");
    return ok;
}

LLVMValueRef nvptx_shuffle_xor(Gen *g, LLVMValueRef v, int mask, DType d) {
    if (d == DT_F64) /* as its bits */
        return LLVMBuildBitCast(g->b, nvptx_shuffle_xor(g, LLVMBuildBitCast(g->b, v, g->m->t.i64, ""), mask, DT_I64), g->m->t.f64, "");
    if (dtype_bits(d) == 64) {
        LLVMValueRef lo = LLVMBuildTrunc(g->b, v, g->m->t.i32, "");
        LLVMValueRef hi = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, v, ci64(g, 32), ""), g->m->t.i32, "");
        lo = LLVMBuildZExt(g->b, nvptx_shuffle_xor(g, lo, mask, DT_I32), g->m->t.i64, "");
        hi = LLVMBuildZExt(g->b, nvptx_shuffle_xor(g, hi, mask, DT_I32), g->m->t.i64, "");
        return LLVMBuildOr(g->b, lo, LLVMBuildShl(g->b, hi, ci64(g, 32), ""), "");
    }
    if (d == DT_F16 || d == DT_BF16) /* as f32, exactly (NaN payloads aside): LLVM 19 makes each 16-bit
                                       * float bitcast a ProxyReg and erases those in quadratic time */
        return LLVMBuildFPTrunc(g->b, nvptx_shuffle_xor(g, LLVMBuildFPExt(g->b, v, g->m->t.f32, ""), mask, DT_F32), ty(g, d), "");
    if (dtype_bits(d) < 32) { /* i1 and integers of 8 and 16 bits: widened to a word and back */
        LLVMTypeRef bits = LLVMIntTypeInContext(g->m->ctx, (unsigned)dtype_bits(d)), t = ty(g, d);
        LLVMValueRef w = LLVMBuildZExt(g->b, t == bits ? v : LLVMBuildBitCast(g->b, v, bits, ""), g->m->t.i32, "");
        LLVMValueRef back = LLVMBuildTrunc(g->b, nvptx_shuffle_xor(g, w, mask, DT_I32), bits, "");
        return t == bits ? back : LLVMBuildBitCast(g->b, back, t, "");
    }
    bool fl = d == DT_F32;
    LLVMValueRef args[4] = {ci32(g, -1), v, ci32(g, mask), ci32(g, 31)};
    return nvptx_call(g, fl ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32", fl ? g->m->t.f32 : g->m->t.i32, args, 4);
}

LLVMValueRef nvptx_warp_base(Gen *g, const Layout *l, int d) {
    Layout w = *l;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) w.lane[b][0] = w.lane[b][1] = 0;
    return nvptx_thread_base(g, &w, d);
}

const char *nvptx_add_type(DType d) {
    return d == DT_F32 ? "f32" : d == DT_F16 ? "noftz.f16" : d == DT_BF16 ? "noftz.bf16" : dtype_bits(d) == 64 ? "u64" : "u32";
}
