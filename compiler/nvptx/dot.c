/* dot.c: the matrix product, two ways.
 *
 * Tensor cores (f16 and bf16 operands): mma.sync.aligned.m16n8k16 with f32
 * accumulation. The accumulator lives in its m16n8 layout (layout.c); the
 * operands are brought into the layouts the instruction reads (from the
 * thread's own registers when they are there already, as attention's p from
 * the first dot's accumulator, else through shared memory), and every warp
 * issues one mma per 16 x 8 tile of its part of the result and 16-wide step
 * of k. fp8 operands are converted to f16 in registers (exactly: every e4m3
 * and e5m2 value is an f16) and multiplied as f16 into zeros, the sum then
 * added to the accumulator (language.md §7: a dot's k-block is promoted).
 * 8-bit integers: mma.sync.aligned.m16n8k32 with s32 accumulation, four
 * elements a register, exact (wrapping at 2^32 as the interpreter does).
 *
 * TF32 (f32 operands, "tf32" or "tf32x3"): mma.sync.aligned.m16n8k8 on
 * operands rounded to TF32, read from shared memory (rows padded so that a
 * fragment's 32 loads hit 32 banks) one element per register; "tf32x3"
 * issues the lo*hi, hi*lo and hi*hi products of each k-step.
 *
 * FMA (f32 operands, "ieee"): both operands go through shared memory (a as
 * [M, K], b as [K, N], row-major), then every thread computes the outputs its
 * layout holds as acc + a[m, k] * b[k, n] over k in increasing order, one f32
 * fma per term — the interpreter's order, so the result is bit-exact with it. */
#include "gen.h"

static bool on_tensor_cores(Gen *g, const BirOp *op) {
    DType d = vtype(g, op->operands[0]).dtype;
    return d == DT_F16 || d == DT_BF16 || dtype_bits(d) == 8;
}

/* 8-bit operands: mma.sync reads them from registers only (ldmatrix's
 * fragments are 16-bit), wgmma from shared memory only, both K-major. */
static bool is_8bit(Gen *g, const BirOp *op) { return dtype_bits(vtype(g, op->operands[0]).dtype) == 8; }

static bool is_tf32(Gen *g, const BirOp *op) {
    return vtype(g, op->operands[0]).dtype == DT_F32 && (op->attr & DOT_PRECISION_MASK) != DOT_IEEE;
}

/* TF32 staging: a [M, K] with rows of K + 4 elements and b [K, N] with rows
 * of N + 8: lane (g, t) reads a[g][t] and b[t][g], banks 4g + t and 8t + g. */
enum { TF32_PAD_A = 4, TF32_PAD_B = 8 };

static int64_t tf32_smem_bytes(BlkType at, BlkType bt) {
    return ((int64_t)at.shape[0] * (at.shape[1] + TF32_PAD_A) + (int64_t)bt.shape[0] * (bt.shape[1] + TF32_PAD_B)) * 4;
}

/* The shared memory dot op needs, its operands where elsewhere[w] staged
 * by someone else (a ring, or before its loop). */
static int64_t smem_bytes(Gen *g, const BirOp *op, const bool elsewhere[2]) {
    if (on_tensor_cores(g, op) && !nvptx_wgmma_refusal(g, op)) return nvptx_wgmma_smem_bytes(g, op, elsewhere);
    BlkType at = vtype(g, op->operands[0]), bt = vtype(g, op->operands[1]);
    int64_t acc = nvptx_operand_smem_bytes(g, op->operands[2], &g->s->plan->layouts[op->results[0]]);
    if (!on_tensor_cores(g, op)) {
        int64_t both = is_tf32(g, op) ? tf32_smem_bytes(at, bt) : (type_numel(at) + type_numel(bt)) * dtype_bytes(at.dtype);
        return both > acc ? both : acc;
    }
    int64_t need = acc, staged = 0, other = 0;
    for (int which = 0; which < 2; which++) {
        int v = op->operands[which];
        Layout l = nvptx_dot_operand_layout(g, op, which);
        if (elsewhere[which]) continue; /* staged by its loop's ring */
        if (nvptx_dot_in_registers(g, op, which)) continue;
        if (!is_8bit(g, op) && nvptx_contiguous_dim(g, v) >= 0) staged += type_numel(vtype(g, v)) * 2;
        else if (nvptx_operand_smem_bytes(g, v, &l) > other) other = nvptx_operand_smem_bytes(g, v, &l);
    }
    /* staged operands stay while the other converts, above them */
    if (staged + other > need) need = staged + other;
    return need;
}

int64_t nvptx_dot_smem_bytes(Gen *g, const BirOp *op) {
    bool ring[2];
    for (int w = 0; w < 2; w++) ring[w] = g->s->in_ring && g->s->in_ring[op->operands[w]];
    return smem_bytes(g, op, ring);
}

/* Every thread stores the elements it holds of v, row-major at `at`, rows
 * `pad` elements longer than the block's. */
static void store_block(Gen *g, int v, int64_t at, int pad) {
    BlkType t = vtype(g, v);
    const Layout *l = &g->s->plan->layouts[v];
    int es = dtype_bytes(t.dtype);
    for (int r = 0; r < l->nregs; r++) {
        LLVMValueRef row = nvptx_coord(g, l, 0, r), col = nvptx_coord(g, l, 1, r);
        LLVMValueRef idx = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, row, ci32(g, t.shape[1] + pad), ""), col, "");
        LLVMValueRef st = LLVMBuildStore(g->b, g->regs[v][r], nvptx_smem_ptr(g, at, idx, es));
        LLVMSetAlignment(st, (unsigned)es);
    }
}

/* x rounded to TF32 as cvt.rna.tf32.f32 does (ties away from zero), by
 * integer arithmetic; infinities and NaN unchanged. */
static LLVMValueRef to_tf32(Gen *g, LLVMValueRef x) {
    LLVMValueRef u = LLVMBuildBitCast(g->b, x, g->m->t.i32, "");
    LLVMValueRef rounded = LLVMBuildAnd(g->b, LLVMBuildAdd(g->b, u, ci32(g, 0x1000), ""), ci32(g, ~0x1fff), "");
    LLVMValueRef finite = LLVMBuildICmp(g->b, LLVMIntNE, LLVMBuildAnd(g->b, u, ci32(g, 0x7f800000), ""),
                                        ci32(g, 0x7f800000), "");
    return LLVMBuildBitCast(g->b, LLVMBuildSelect(g->b, finite, rounded, u, ""), g->m->t.f32, "");
}

/* An f32 element of shared memory at `at` + 4 idx as mma's tf32 operand
 * registers: its TF32 high part, and (lo not NULL) the TF32 of the rest. */
static void tf32_operand(Gen *g, int64_t at, LLVMValueRef idx, LLVMValueRef *hi, LLVMValueRef *lo) {
    LLVMValueRef x = LLVMBuildLoad2(g->b, g->m->t.f32, nvptx_smem_ptr(g, at, idx, 4), "");
    LLVMValueRef h = to_tf32(g, x);
    *hi = LLVMBuildBitCast(g->b, h, g->m->t.i32, "");
    if (lo) *lo = LLVMBuildBitCast(g->b, to_tf32(g, LLVMBuildFSub(g->b, x, h, "")), g->m->t.i32, "");
}

/* One mma on the four accumulator registers at acc (args[6..9] are filled
 * from them), which then hold its result. */
static void mma_accumulate(Gen *g, const char *name, LLVMValueRef args[10], LLVMValueRef *acc) {
    LLVMTypeRef f4[4] = {g->m->t.f32, g->m->t.f32, g->m->t.f32, g->m->t.f32};
    LLVMTypeRef ret = LLVMStructTypeInContext(g->m->ctx, f4, 4, 0);
    for (int j = 0; j < 4; j++) args[6 + j] = acc[j];
    LLVMValueRef res = nvptx_call(g, name, ret, args, 10);
    for (int j = 0; j < 4; j++) acc[j] = LLVMBuildExtractValue(g->b, res, (unsigned)j, "");
}

static bool gen_mma(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0];
    const Layout *lc = &g->s->plan->layouts[r];
    Layout lo[2] = {nvptx_dot_operand_layout(g, op, 0), nvptx_dot_operand_layout(g, op, 1)};
    DType d = vtype(g, op->operands[0]).dtype;
    int32_t K = vtype(g, op->operands[0]).shape[1];
    int kbits = 0;
    while ((16 << kbits) < K) kbits++;
    int ksteps = 1 << kbits;
    int nbits = nvptx_rep_bits(lc, 1, 8), mreps = 1 << nvptx_rep_bits(lc, 0, 16), nreps = 1 << nbits;
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at);
    /* operands: from the thread's registers when there, else staged for
     * ldmatrix, else through a plain conversion */
    Frags F[2] = {{0}};
    Staged st[2];
    bool staged[2] = {false, false}, fresh = false;
    int64_t at = smem_at;
    const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
    for (int w = 0; w < 2; w++) {
        int v = op->operands[w];
        const Frags *h = nvptx_dot_hoisted(g, op, w);
        if (ds->from[w] == NVPTX_FROM_HOISTED) { /* loaded before the loop */
            if (!h) return nvptx_gen_fail(g, op, "internal compiler error: operand %d was not loaded before its loop", w);
            F[w] = *h;
            staged[w] = true;
            continue;
        }
        if (ds->from[w] == NVPTX_FROM_RING) { /* in a ring slot of a pipelined loop, ready */
            if (!g->staged || !g->staged[v])
                return nvptx_gen_fail(g, op, "internal compiler error: operand %d is not in its loop's ring", w);
            st[w] = *g->staged[v];
            staged[w] = true;
            continue;
        }
        if (ds->from[w] != NVPTX_FROM_STAGE) continue;
        if (!fresh) nvptx_barrier(g); /* earlier readers of the region are done */
        st[w] = nvptx_staging(g, v, ci32(g, at));
        at += type_numel(vtype(g, v)) * 2;
        nvptx_stage_store(g, v, &st[w]);
        staged[w] = fresh = true;
    }
    if (fresh) nvptx_barrier(g);
    bool fp8 = dtype_is_fp8(d);
    for (int w = 0; w < 2; w++) {
        if (staged[w]) continue;
        F[w].regs = nvptx_operand(g, op->operands[w], &lo[w], at);
        DType wd = vtype(g, op->operands[w]).dtype;
        if (!fp8) continue;
        LLVMValueRef *h = arena_alloc(&g->arena, (size_t)lo[w].nregs * sizeof *h);
        for (int i = 0; i < lo[w].nregs; i++) h[i] = nvptx_convert_dtype(g, F[w].regs[i], wd, DT_F16);
        F[w].regs = h;
    }
    if (fp8) d = DT_F16;
    LLVMValueRef *out = nvptx_new_regs(g, r);
    /* promoted (fp8): each promote_every k terms summed from zero, then added to the accumulator in f32 */
    int promote_steps = nvptx_dot_run_steps(g, ds, dot_k_step(d), ksteps);
    if (promote_steps < 0) return false;
    if (promote_steps) {
        C = memcpy(arena_alloc(&g->arena, (size_t)lc->nregs * sizeof *C), C, (size_t)lc->nregs * sizeof *C);
        for (int i = 0; i < lc->nregs; i++) out[i] = LLVMConstReal(g->m->t.f32, 0.0);
    } else {
        memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    }
    const char *name = d == DT_F16 ? "llvm.nvvm.mma.m16n8k16.row.col.f32.f32" : "llvm.nvvm.mma.m16n8k16.row.col.bf16";
    LLVMTypeRef word = d == DT_F16 ? LLVMVectorType(g->m->t.f16, 2) : g->m->t.i32;
    int ksteps_used = ds->k_used / 16; /* past them a's and b's k are zeros (extent.c) */
    for (int ki = 0; ki < ksteps_used; ki++) {
        /* one k-step's fragments at a time: fewer registers live */
        for (int w = 0; w < 2; w++)
            if (staged[w] && !F[w].frag_done)
                nvptx_load_frags(g, &st[w], &lo[w], w, w == 0 ? mreps : nreps, ksteps, ki, ki + 1, &F[w]);
        for (int mi = 0; mi < mreps; mi++) {
            LLVMValueRef args[10];
            for (int p = 0; p < 4; p++) { /* a0..a3: (row, k), (row + 8, k), (row, k + 8), (row + 8, k + 8) */
                int base = nvptx_dot_a_reg(p, ki, mi, kbits);
                args[p] = staged[0] ? LLVMBuildBitCast(g->b, F[0].frag[mi * ksteps + ki][p], word, "")
                                    : nvptx_dot_pack(g, F[0].regs[base], F[0].regs[base + 1], d);
            }
            for (int ni = 0; ni < nreps; ni++) {
                for (int q = 0; q < 2; q++) { /* b0, b1: k and k + 8 */
                    int base = q << 1 | ki << 2 | ni << (2 + kbits);
                    args[4 + q] = staged[1] ? LLVMBuildBitCast(g->b, F[1].frag[ni * ksteps + ki][q], word, "")
                                            : nvptx_dot_pack(g, F[1].regs[base], F[1].regs[base + 1], d);
                }
                /* c0, c1: row; c2, c3: row + 8 */
                mma_accumulate(g, name, args, out + (ni << 2 | mi << (2 + nbits)));
            }
        }
        if (promote_steps && (ki + 1) % promote_steps == 0)
            for (int i = 0; i < lc->nregs; i++) {
                C[i] = LLVMBuildFAdd(g->b, C[i], out[i], "");
                out[i] = LLVMConstReal(g->m->t.f32, 0.0);
            }
    }
    if (promote_steps) memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    return true;
}

/* Four 8-bit elements as one 32-bit operand register, the first in the low byte. */
static LLVMValueRef pack4(Gen *g, LLVMValueRef *x) {
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(g->m->t.i8, 4));
    for (int i = 0; i < 4; i++) v = LLVMBuildInsertElement(g->b, v, x[i], ci32(g, i), "");
    return LLVMBuildBitCast(g->b, v, g->m->t.i32, "");
}

/* 8-bit integers: per 16 x 8 tile of the accumulator and 32-wide k-step,
 * a0..a3 of the a tile and b0, b1 of the b tile, four elements each, in
 * the operand layouts (layout.c), read from the thread's registers (a
 * conversion where they are not there). */
static bool gen_mma_int8(Gen *g, const BirOp *op, int64_t smem_at) {
    int r = op->results[0];
    const Layout *lc = &g->s->plan->layouts[r];
    DType da = vtype(g, op->operands[0]).dtype, db = vtype(g, op->operands[1]).dtype;
    int32_t K = vtype(g, op->operands[0]).shape[1];
    int kbits = 0;
    while ((dot_k_step(da) << kbits) < K) kbits++;
    int ksteps = 1 << kbits, nbits = nvptx_rep_bits(lc, 1, 8), mreps = 1 << nvptx_rep_bits(lc, 0, 16), nreps = 1 << nbits;
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at);
    LLVMValueRef *regs[2];
    for (int w = 0; w < 2; w++) {
        Layout lo = nvptx_dot_operand_layout(g, op, w);
        regs[w] = nvptx_operand(g, op->operands[w], &lo, smem_at);
    }
    LLVMValueRef *out = nvptx_new_regs(g, r);
    memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    char text[192];
    snprintf(text, sizeof text,
             "mma.sync.aligned.m16n8k32.row.col.s32.%s.%s.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, "
             "{$10, $11, $12, $13};",
             da == DT_U8 ? "u8" : "s8", db == DT_U8 ? "u8" : "s8");
    LLVMTypeRef i4[4] = {g->m->t.i32, g->m->t.i32, g->m->t.i32, g->m->t.i32};
    LLVMTypeRef ret = LLVMStructTypeInContext(g->m->ctx, i4, 4, 0);
    for (int ki = 0; ki < ksteps; ki++)
        for (int mi = 0; mi < mreps; mi++) {
            LLVMValueRef args[10];
            for (int p = 0; p < 4; p++) /* a0..a3: (row, k), (row + 8, k), (row, k + 16), (row + 8, k + 16) */
                args[p] = pack4(g, regs[0] + ((p & 1) << 2 | (p >> 1) << 3 | ki << 4 | mi << (4 + kbits)));
            for (int ni = 0; ni < nreps; ni++) {
                for (int q = 0; q < 2; q++) /* b0, b1: k and k + 16 */
                    args[4 + q] = pack4(g, regs[1] + (q << 2 | ki << 3 | ni << (3 + kbits)));
                LLVMValueRef *acc = out + (ni << 2 | mi << (2 + nbits));
                for (int j = 0; j < 4; j++) args[6 + j] = acc[j];
                LLVMValueRef res = nvptx_asm_call(g, ret, text, "=r,=r,=r,=r,r,r,r,r,r,r,r,r,r,r", args, 10, false);
                for (int j = 0; j < 4; j++) acc[j] = LLVMBuildExtractValue(g->b, res, (unsigned)j, "");
            }
        }
    return true;
}

/* f32 operands on tensor cores: per 16 x 8 tile of the accumulator and
 * 8-wide k-step, a0..a3 = a[g][t], a[g + 8][t], a[g][t + 4], a[g + 8][t + 4]
 * and b0, b1 = b[t][g], b[t + 4][g] of the tile (g = lane / 4, t = lane % 4),
 * each rounded to TF32 (and, for tf32x3, split into high and low parts). */
static bool gen_mma_tf32(Gen *g, const BirOp *op, int64_t smem_at) {
    int a = op->operands[0], b = op->operands[1], r = op->results[0];
    BlkType at = vtype(g, a), bt = vtype(g, b);
    int32_t K = at.shape[1], lda = K + TF32_PAD_A, ldb = bt.shape[1] + TF32_PAD_B;
    int64_t b_at = smem_at + (int64_t)at.shape[0] * lda * 4;
    const Layout *lc = &g->s->plan->layouts[r];
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at); /* before a and b take the region */
    nvptx_barrier(g); /* earlier readers of the region are done */
    store_block(g, a, smem_at, TF32_PAD_A);
    store_block(g, b, b_at, TF32_PAD_B);
    nvptx_barrier(g);
    LLVMValueRef gi = LLVMBuildLShr(g->b, g->lane, ci32(g, 2), ""), ti = LLVMBuildAnd(g->b, g->lane, ci32(g, 3), "");
    LLVMValueRef m0 = LLVMBuildAdd(g->b, nvptx_warp_base(g, lc, 0), gi, ""), n0 = LLVMBuildAdd(g->b, nvptx_warp_base(g, lc, 1), gi, "");
    int nbits = nvptx_rep_bits(lc, 1, 8), mreps = 1 << nvptx_rep_bits(lc, 0, 16), nreps = 1 << nbits;
    bool x3 = (op->attr & DOT_PRECISION_MASK) == DOT_TF32X3;
    LLVMValueRef *out = nvptx_new_regs(g, r);
    memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    /* [tile][part][i]: part 0 the TF32 high part, 1 the low part */
    LLVMValueRef(*fa)[2][4] = arena_alloc(&g->arena, (size_t)mreps * sizeof *fa);
    LLVMValueRef(*fb)[2][2] = arena_alloc(&g->arena, (size_t)nreps * sizeof *fb);
    for (int k0 = 0; k0 < K; k0 += 8) {
        LLVMValueRef kt = LLVMBuildAdd(g->b, ti, ci32(g, k0), "");
        for (int mi = 0; mi < mreps; mi++) {
            int cbase = mi << (2 + nbits);
            LLVMValueRef row = LLVMBuildAdd(g->b, m0, ci32(g, nvptx_layout_coord(lc, 0, cbase, 0, 0)), "");
            for (int i = 0; i < 4; i++) { /* (row + 8 (i & 1), k + 4 (i >> 1)) */
                LLVMValueRef idx = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, LLVMBuildAdd(g->b, row, ci32(g, 8 * (i & 1)), ""), ci32(g, lda), ""),
                                                LLVMBuildAdd(g->b, kt, ci32(g, 4 * (i >> 1)), ""), "");
                tf32_operand(g, smem_at, idx, &fa[mi][0][i], x3 ? &fa[mi][1][i] : NULL);
            }
        }
        for (int ni = 0; ni < nreps; ni++) {
            LLVMValueRef col = LLVMBuildAdd(g->b, n0, ci32(g, nvptx_layout_coord(lc, 1, ni << 2, 0, 0)), "");
            for (int i = 0; i < 2; i++) { /* (k + 4 i, col) */
                LLVMValueRef idx = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, LLVMBuildAdd(g->b, kt, ci32(g, 4 * i), ""), ci32(g, ldb), ""), col, "");
                tf32_operand(g, b_at, idx, &fb[ni][0][i], x3 ? &fb[ni][1][i] : NULL);
            }
        }
        /* tf32x3: lo*hi, hi*lo, then hi*hi, as the interpreter's passes */
        static const int one[1][2] = {{0, 0}}, three[3][2] = {{1, 0}, {0, 1}, {0, 0}};
        const int(*passes)[2] = x3 ? three : one;
        for (int mi = 0; mi < mreps; mi++)
            for (int ni = 0; ni < nreps; ni++)
                for (int p = 0; p < (x3 ? 3 : 1); p++) {
                    LLVMValueRef args[10];
                    for (int i = 0; i < 4; i++) args[i] = fa[mi][passes[p][0]][i];
                    for (int i = 0; i < 2; i++) args[4 + i] = fb[ni][passes[p][1]][i];
                    mma_accumulate(g, "llvm.nvvm.mma.m16n8k8.row.col.tf32", args, out + (ni << 2 | mi << (2 + nbits)));
                }
    }
    return true;
}



bool nvptx_gen_dot(Gen *g, const BirOp *op, int64_t smem_at, NvptxAfterCommit after_commit) {
    const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
    if (!ds) return nvptx_gen_fail(g, op, "internal compiler error: a dot the schedule does not know");
    switch (ds->path) {
    case NVPTX_DOT_WGMMA: return nvptx_gen_wgmma(g, op, smem_at, after_commit);
    case NVPTX_DOT_MMA:
        return dtype_is_int(vtype(g, op->operands[0]).dtype) ? gen_mma_int8(g, op, smem_at) : gen_mma(g, op, smem_at);
    case NVPTX_DOT_TF32: case NVPTX_DOT_TF32X3: return gen_mma_tf32(g, op, smem_at);
    case NVPTX_DOT_FMA: break;
    }
    int a = op->operands[0], b = op->operands[1], acc = op->operands[2], r = op->results[0];
    BlkType at = vtype(g, a), bt = vtype(g, b);
    int32_t K = at.shape[1], N = bt.shape[1];
    DType d = at.dtype;
    int es = dtype_bytes(d);
    int64_t b_at = smem_at + type_numel(at) * es;
    const Layout *l = &g->s->plan->layouts[r];
    LLVMValueRef *acc_regs = nvptx_operand(g, acc, l, smem_at); /* before a and b take the region */
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    store_block(g, a, smem_at, 0);
    store_block(g, b, b_at, 0);
    nvptx_barrier(g);

    int n = l->nregs;
    LLVMValueRef *rows = arena_alloc(&g->arena, (size_t)n * sizeof *rows);
    LLVMValueRef *cols = arena_alloc(&g->arena, (size_t)n * sizeof *cols);
    for (int i = 0; i < n; i++) {
        rows[i] = LLVMBuildMul(g->b, nvptx_coord(g, l, 0, i), ci32(g, K), "");
        cols[i] = nvptx_coord(g, l, 1, i);
    }
    LLVMTypeRef et = ty(g, d);
    /* for k = 0 .. K-1 (K >= 16): one fma per output element */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "dot.k");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "dot.end");
    LLVMBuildBr(g->b, body);
    LLVMPositionBuilderAtEnd(g->b, body);
    LLVMValueRef k = LLVMBuildPhi(g->b, g->m->t.i32, "k");
    LLVMValueRef zero = ci32(g, 0);
    LLVMAddIncoming(k, &zero, &pre, 1);
    LLVMValueRef *phis = arena_alloc(&g->arena, (size_t)n * sizeof *phis), *c = arena_alloc(&g->arena, (size_t)n * sizeof *c);
    for (int i = 0; i < n; i++) {
        phis[i] = LLVMBuildPhi(g->b, g->m->t.f32, "");
        LLVMAddIncoming(phis[i], &acc_regs[i], &pre, 1);
    }
    LLVMValueRef kn = LLVMBuildMul(g->b, k, ci32(g, N), "");
    for (int i = 0; i < n; i++) {
        LLVMValueRef ai = LLVMBuildAdd(g->b, rows[i], k, ""), bi = LLVMBuildAdd(g->b, kn, cols[i], "");
        LLVMValueRef x = LLVMBuildLoad2(g->b, et, nvptx_smem_ptr(g, smem_at, ai, es), "");
        LLVMValueRef y = LLVMBuildLoad2(g->b, et, nvptx_smem_ptr(g, b_at, bi, es), "");
        LLVMValueRef args[3] = {x, y, phis[i]};
        c[i] = nvptx_call(g, "llvm.fma.f32", g->m->t.f32, args, 3);
    }
    LLVMValueRef k1 = LLVMBuildAdd(g->b, k, ci32(g, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
    LLVMAddIncoming(k, &k1, &latch, 1);
    for (int i = 0; i < n; i++) LLVMAddIncoming(phis[i], &c[i], &latch, 1);
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntSLT, k1, ci32(g, K), ""), body, done);
    LLVMPositionBuilderAtEnd(g->b, done);
    LLVMValueRef *out = nvptx_new_regs(g, r);
    for (int i = 0; i < n; i++) out[i] = c[i];
    return true;
}

/* --------------------------------------------------- loop-invariant operands (planned here, staged by staging.c)
 * A dot in a loop whose a or b comes from before the loop (attention's q)
 * gets it once, before the loop: mma.sync its fragments, kept in registers;
 * wgmma the operand staged in the resident region, above everything else in
 * shared memory, which it reads by descriptor (as FlashAttention-3 reads q).
 * Not wgmma's a in registers: ptxas 12.4 to 13.0 may hand a loop-invariant
 * a's registers to a register-form wgmma's a in the same loop when the loop
 * branches (an `if` in attention's loop gave wrong results on the H100;
 * ptxas 13.1 and later do not), and it frees those registers. (An a wgmma
 * cannot read from shared memory, rows under 16 elements, is converted into
 * registers through shared memory in every iteration instead.) */

static void mark_defined(const BirBlock *b, char *in) {
    for (int i = 0; i < b->nargs; i++) in[b->args[i]] = 1;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nresults; r++) in[op->results[r]] = 1;
        for (int r = 0; r < op->nregions; r++) mark_defined(op->regions[r], in);
    }
}

/* Is operand w of dot op, right in a loop's body (`in`: the values the
 * body defines), staged once before the loop? */
static bool hoistable(Gen *g, const BirOp *op, int w, const char *in) {
    int v = op->operands[w];
    if (!on_tensor_cores(g, op)) return false;
    if (!nvptx_wgmma_refusal(g, op)) { /* from registers too; trans(x) reads x's copy the other way */
        int r = nvptx_resident_root(g, v, NULL);
        return !in[r] && nvptx_wgmma_readable(g, r);
    }
    return !is_8bit(g, op) && !in[v] && nvptx_contiguous_dim(g, v) >= 0 && !nvptx_dot_in_registers(g, op, w);
}

int64_t nvptx_dot_smem_bytes_in_loop(Gen *g, const BirOp *op, const BirBlock *body) {
    char *in = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
    mark_defined(body, in);
    /* counted as a ring's operands are: not staged by the dot (an operand
     * given twice counts once) */
    bool elsewhere[2];
    for (int w = 0; w < 2; w++) elsewhere[w] = g->s->in_ring[op->operands[w]];
    for (int w = 0; w < 2; w++)
        if (hoistable(g, op, w, in))
            for (int u = 0; u < 2; u++) elsewhere[u] |= op->operands[u] == op->operands[w];
    return smem_bytes(g, op, elsewhere);
}

/* Each value gets its own place, so loops nested in one another keep theirs. */
static void plan_resident_in(Gen *g, const BirBlock *b, int64_t *off, int64_t *bytes) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *loop = b->ops.items[i];
        for (int r = 0; r < loop->nregions; r++) plan_resident_in(g, loop->regions[r], off, bytes);
        if (loop->code != BIR_FOR) continue;
        const BirBlock *body = loop->regions[0];
        char *in = NULL;
        for (int j = 0; j < body->ops.len; j++) {
            const BirOp *op = body->ops.items[j];
            if (op->code != BIR_DOT || !on_tensor_cores(g, op) || nvptx_wgmma_refusal(g, op)) continue;
            if (!in) {
                in = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
                mark_defined(body, in);
            }
            for (int w = 0; w < 2; w++) {
                int v = nvptx_resident_root(g, op->operands[w], NULL);
                if (off[v] >= 0 || !hoistable(g, op, w, in)) continue;
                off[v] = *bytes;
                *bytes += nvptx_wgmma_staged_bytes(g, v);
            }
        }
    }
}

int64_t nvptx_dot_plan_resident(Gen *g, int64_t *off) {
    for (int v = 0; v <= g->f->nvalues; v++) off[v] = -1;
    int64_t bytes = 0;
    plan_resident_in(g, g->f->body, off, &bytes);
    return bytes;
}

/* ------------------------------------------------------------- schedule
 * Per dot: the path, why not wgmma, where each operand comes from (as the
 * code above finds it when it emits the dot: fragments hoisted before its
 * loop, the resident copy any dot inside that loop reads, the ring slot of
 * its pipelined loop, ...), and the registers a wgmma holds. */

typedef struct {
    const BirOp *op;
    int which;
} DotOperand;

typedef struct {
    Gen *g;
    int *resident;  /* per value: enclosing loops that keep its resident copy */
    NvptxDotSchedule *dots;
    int n;
    DotOperand *hoists; /* the operands staged before their loops */
    int nhoists;
} DotWalk;

static NvptxOperandSource source(DotWalk *W, const BirOp *op, int w, NvptxDotPath path, const char *in_body) {
    Gen *g = W->g;
    int v = op->operands[w];
    if (path == NVPTX_DOT_TF32 || path == NVPTX_DOT_TF32X3 || path == NVPTX_DOT_FMA) return NVPTX_FROM_SHARED;
    if (path == NVPTX_DOT_WGMMA) {
        if (W->resident[nvptx_resident_root(g, v, NULL)]) return NVPTX_FROM_RESIDENT;
        if (g->s->in_ring[v]) return NVPTX_FROM_RING;
        if (w == 0 && nvptx_wgmma_a_in_registers(g, op)) return NVPTX_FROM_REGS;
        return nvptx_wgmma_readable(g, v) ? NVPTX_FROM_STAGE : NVPTX_FROM_CONVERT;
    }
    if (in_body && hoistable(g, op, w, in_body)) return NVPTX_FROM_HOISTED;
    if (g->s->in_ring[v]) return NVPTX_FROM_RING;
    if (nvptx_dot_in_registers(g, op, w)) return NVPTX_FROM_REGS;
    return !is_8bit(g, op) && nvptx_contiguous_dim(g, v) >= 0 ? NVPTX_FROM_STAGE : NVPTX_FROM_CONVERT;
}

/* Registers a wgmma dot's instructions hold: its accumulators, a's
 * fragments when a is in registers, and (the first dot of a loop with a
 * deferred dot, whose wait also ends that one) the deferred accumulators. */
static int wgmma_held_regs(Gen *g, const NvptxDotSchedule *d, bool first_of_deferred) {
    const BirOp *op = d->op;
    int r = op->results[0];
    int32_t M = vtype(g, r).shape[0], K = vtype(g, op->operands[0]).shape[1];
    int mreps = M / (64 * (g->s->plan->num_warps / 4)), ksteps = K / 16;
    bool a_regs = d->from[0] == NVPTX_FROM_REGS || d->from[0] == NVPTX_FROM_CONVERT;
    return nregs(g, r) + (a_regs ? mreps * ksteps * 4 : 0) +
           (first_of_deferred ? nregs(g, d->loop->deferred_arg) : 0);
}

/* One run added to an accumulator of zeros is that run's sum as the tensor
 * cores leave it: summing into the accumulator gives the same (but for the
 * sign of an all-zero sum). */
bool nvptx_dot_promoted(Gen *g, const BirOp *op) {
    BlkType a = vtype(g, op->operands[0]);
    int64_t every = dot_promote_every(a.dtype, op->attr, a.shape[1]);
    if (every == a.shape[1] && nvptx_zero_value(g, op->operands[2])) return false;
    return every != 0;
}

/* An fp8 dot's sums (dot_promote_every): more than one a dot on wgmma take
 * turns in two sets of registers where three sets (the accumulator's and
 * the two) fit PROMOTE_IN_TURN_REGS; then the sums' wait hides behind the
 * next sum's wgmmas, all but the last (2026-11-27 notebook). */
enum { PROMOTE_IN_TURN_REGS = 192 };
static void plan_promotion(Gen *g, NvptxDotSchedule *d) {
    DType t = vtype(g, d->op->operands[0]).dtype;
    int64_t K = vtype(g, d->op->operands[0]).shape[1];
    if (!nvptx_dot_promoted(g, d->op)) return;
    d->promote_every = (int)dot_promote_every(t, d->op->attr, K);
    int sum_regs = nregs(g, d->op->results[0]);
    d->promote_in_turn = d->path == NVPTX_DOT_WGMMA && d->promote_every < K && 3 * sum_regs <= PROMOTE_IN_TURN_REGS;
    /* held: the accumulator, apart from the sums it is added from, and the second set of sums */
    if (d->path == NVPTX_DOT_WGMMA) d->held_regs += d->promote_in_turn ? 2 * sum_regs : sum_regs;
}

static void walk_dots(DotWalk *W, const BirBlock *b, const NvptxLoopSchedule *ls, const char *in_body) {
    Gen *g = W->g;
    bool first = true; /* no dot of this block seen yet */
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_DOT) {
            NvptxDotSchedule *d = &W->dots[W->n++];
            d->op = op;
            d->loop = ls;
            const char *not_wgmma = on_tensor_cores(g, op) ? nvptx_wgmma_refusal(g, op) : NULL;
            d->not_wgmma = not_wgmma ? arena_strndup(&g->arena, not_wgmma, strlen(not_wgmma)) : NULL;
            d->path = on_tensor_cores(g, op) ? (not_wgmma ? NVPTX_DOT_MMA : NVPTX_DOT_WGMMA)
                    : is_tf32(g, op)         ? ((op->attr & DOT_PRECISION_MASK) == DOT_TF32 ? NVPTX_DOT_TF32 : NVPTX_DOT_TF32X3)
                                             : NVPTX_DOT_FMA;
            for (int w = 0; w < 2; w++) {
                d->from[w] = source(W, op, w, d->path, in_body);
                for (int k = 0; k < W->nhoists; k++) d->before_loop[w] |= W->hoists[k].op == op && W->hoists[k].which == w;
            }
            d->in_flight = ls && ls->async_dot == op;
            d->deferred = ls && ls->deferred_dot == op;
            /* the first dot of a loop with a deferred dot: its wait ends that one's group too */
            d->ends_deferred = first && in_body && ls && ls->deferred_dot && b == ls->loop->regions[0] && !ls->overlap_after;
            d->then_deferred = ls && ls->overlap_after == op;
            if (d->path == NVPTX_DOT_WGMMA) d->held_regs = wgmma_held_regs(g, d, d->ends_deferred);
            /* (waited for with the deferred dot running: its accumulators and a's registers held too) */
            if (d->then_deferred) d->held_regs += nregs(g, ls->deferred_arg) + nvptx_wgmma_a_words(g, ls->deferred_dot);
            int isa = d->path == NVPTX_DOT_WGMMA ? nvptx_wgmma_isa(g, op) : 0;
            if (isa > g->m->ptx_isa) g->m->ptx_isa = isa; /* the module's PTX declares what its dots need */
            plan_promotion(g, d);
            /* (with the deferred dot issued late, one turn spans the first dot and that one, issued after it) */
            d->takes_turns = d->path == NVPTX_DOT_WGMMA && ls && ls->ping_pong && !d->promote_every &&
                             (!ls->overlap_after || ls->overlap_after == op);
            first = false;
        }
        if (op->code == BIR_FOR) {
            const BirBlock *body = op->regions[0];
            const NvptxLoopSchedule *inner = nvptx_loop_schedule(g->s, op);
            char *in = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
            mark_defined(body, in);
            /* the operands the dots right in its body stage before it runs (nvptx_dot_hoist):
             * mma.sync's fragments, one dot's operand each; a wgmma operand's resident copy,
             * which every dot inside the loop reads, staged by the first dot reading it
             * unless an enclosing loop has it */
            int *kept = arena_alloc(&g->arena, (size_t)(2 * body->ops.len + 1) * sizeof *kept), nkept = 0;
            for (int j = 0; j < body->ops.len; j++) {
                const BirOp *d = body->ops.items[j];
                if (d->code != BIR_DOT || !on_tensor_cores(g, d)) continue;
                bool wgmma = !nvptx_wgmma_refusal(g, d);
                for (int w = 0; w < 2; w++) {
                    int v = wgmma ? nvptx_resident_root(g, d->operands[w], NULL) : d->operands[w];
                    if (!hoistable(g, d, w, in) || (wgmma && g->s->resident_off[v] < 0)) continue;
                    if (!wgmma || !W->resident[v]) W->hoists[W->nhoists++] = (DotOperand){d, w};
                    if (wgmma) W->resident[v]++, kept[nkept++] = v;
                }
            }
            walk_dots(W, body, inner ? inner : ls, in);
            for (int k = 0; k < nkept; k++) W->resident[kept[k]]--;
        } else
            for (int r = 0; r < op->nregions; r++) walk_dots(W, op->regions[r], ls, NULL);
        if (nvptx_op_ends_block(op)) break; /* what follows is not emitted */
    }
}

int nvptx_dot_schedule_all(Gen *g, NvptxDotSchedule **dots) {
    int most = nvptx_ops_in(g->f->body, BIR_DOT);
    DotWalk W = {g, arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof(int)),
                 arena_alloc(&g->arena, (size_t)(most ? most : 1) * sizeof(NvptxDotSchedule)), 0,
                 arena_alloc(&g->arena, (size_t)(2 * most + 1) * sizeof(DotOperand)), 0};
    walk_dots(&W, g->f->body, NULL, NULL);
    nvptx_dot_extents(g, W.dots, W.n);
    *dots = W.dots;
    return W.n;
}

