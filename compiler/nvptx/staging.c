/* staging.c: a dot's operands as its instructions read them: in the thread's
 * registers (the mma.sync operand layouts), staged in shared memory (the
 * swizzled slabs ldmatrix and wgmma's descriptors read), as mma.sync
 * fragments loaded by ldmatrix, and staged once before a loop where the
 * schedule says so (loop-invariant operands: mma.sync's fragments kept in
 * registers, wgmma's resident copy). dot.c and wgmma.c use them; so do
 * pipeline.c (ring slots are staged tiles) and tma.c (a map's box is a
 * slab). */
#include "gen.h"

Layout nvptx_dot_operand_layout(Gen *g, const BirOp *op, int which) {
    DType d = vtype(g, op->operands[0]).dtype; /* fp8 is multiplied as f16 on mma.sync: 16-bit fragments */
    return nvptx_layout_dot_operand(&g->s->plan->layouts[op->results[0]], which, vtype(g, op->operands[0]).shape[1],
                                    dtype_is_int(d) ? 1 : 2);
}

bool nvptx_dot_in_registers(Gen *g, const BirOp *op, int which) {
    Layout l = nvptx_dot_operand_layout(g, op, which);
    return nvptx_layout_local_map(&g->s->plan->layouts[op->operands[which]], &l, (Projection){{0, 1}}, NULL);
}

int nvptx_dot_a_reg(int p, int k, int tile, int kbits) { return (p & 1) << 1 | (p >> 1) << 2 | k << 3 | tile << (3 + kbits); }

/* ------------------------------------------------ operands through ldmatrix
 * An operand that is not in the thread's registers already is staged in
 * shared memory and read with ldmatrix (or, on sm_90a, by wgmma through a
 * descriptor: wgmma.c). Staged row-major along the dimension its registers
 * run along (cd), in slabs of at most 128 bytes of each row,
 * slab after slab; in a slab, 16-byte chunks of a row XORed with the row
 * (Triton's swizzle: rows of fewer than 128 bytes share a 128-byte line,
 * perPhase of them, and maxPhase line patterns repeat), so that the 8 rows
 * one ldmatrix reads fall in 8 different groups of banks. Slabs of 128, 64
 * and 32 bytes are exactly wgmma's 128-, 64- and 32-byte swizzled layouts. */

/* The elements of value v's runs (2^bits of them, consecutive along one
 * dimension in each thread's first registers), up to 16 bytes of them; 1
 * where it has none. 16-bit and 8-bit elements only. */
static int run_length(Gen *g, int v, int *dim) {
    const Layout *l = &g->s->plan->layouts[v];
    BlkType t = vtype(g, v);
    int es = dtype_bytes(t.dtype);
    if (t.rank != 2 || (es != 2 && es != 1)) return 1;
    int most = es == 2 ? 3 : 4; /* log2 of the elements in 16 bytes */
    for (int d = 0; d < 2; d++) {
        int bits = 0;
        while (bits < most && bits < l->nreg_bits && l->reg[bits][d] == 1 << bits && l->reg[bits][1 - d] == 0) bits++;
        if (bits) {
            *dim = d;
            return 1 << bits;
        }
    }
    return 1;
}

int nvptx_contiguous_dim(Gen *g, int v) {
    int d = -1;
    return run_length(g, v, &d) * dtype_bytes(vtype(g, v).dtype) == 16 ? d : -1;
}

int nvptx_stageable_dim(Gen *g, int v) {
    int d = -1;
    return run_length(g, v, &d) >= 2 ? d : -1;
}

/* Elements of a 16-byte chunk, the unit the swizzle moves. */
static int chunk_elems(const Staged *st) { return 16 / st->es; }

Staged nvptx_staging(Gen *g, int v, LLVMValueRef base) {
    BlkType t = vtype(g, v);
    int cd = nvptx_stageable_dim(g, v), es = dtype_bytes(t.dtype);
    Staged st = {.base = base, .cd = cd, .rows = t.shape[1 - cd], .es = es};
    st.slab = t.shape[cd] < 128 / es ? t.shape[cd] : 128 / es;
    int slab_bytes = st.slab * es;
    st.per_phase = slab_bytes >= 128 ? 1 : 128 / slab_bytes;
    int chunks = slab_bytes / 16;
    st.max_phase = chunks < 8 ? chunks : 8;
    return st;
}

LLVMValueRef nvptx_staged_offset(Gen *g, const Staged *st, LLVMValueRef row, LLVMValueRef col) {
    int ce = chunk_elems(st), ce_bits = ce == 16 ? 4 : 3;
    LLVMValueRef in_slab = LLVMBuildAnd(g->b, col, ci32(g, st->slab - 1), "");
    LLVMValueRef chunk = LLVMBuildLShr(g->b, in_slab, ci32(g, ce_bits), "");
    LLVMValueRef phase = LLVMBuildURem(g->b, LLVMBuildUDiv(g->b, row, ci32(g, st->per_phase), ""), ci32(g, st->max_phase), "");
    chunk = LLVMBuildXor(g->b, chunk, phase, "");
    LLVMValueRef slab = LLVMBuildUDiv(g->b, col, ci32(g, st->slab), "");
    LLVMValueRef e = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, slab, ci32(g, st->rows * st->slab), ""),
                                  LLVMBuildMul(g->b, row, ci32(g, st->slab), ""), "");
    e = LLVMBuildAdd(g->b, e, LLVMBuildAdd(g->b, LLVMBuildShl(g->b, chunk, ci32(g, ce_bits), ""),
                                           LLVMBuildAnd(g->b, col, ci32(g, ce - 1), ""), ""), "");
    return LLVMBuildAdd(g->b, st->base, LLVMBuildMul(g->b, e, ci32(g, st->es), ""), "");
}

LLVMValueRef nvptx_staged_offset_of(Gen *g, const Staged *st, const Layout *l, int r) {
    return nvptx_staged_offset(g, st, nvptx_coord(g, l, 1 - st->cd, r), nvptx_coord(g, l, st->cd, r));
}

/* Every thread stores its registers a run at a time: 16 bytes where it
 * holds runs of 16 bytes (loads), 4 bytes where it holds pairs of 16-bit
 * elements (a dot's accumulator converted: wgmma's or mma.sync's
 * fragments). A run never crosses a 16-byte chunk, which the swizzle moves
 * whole. */
void nvptx_stage_store(Gen *g, int v, const Staged *st) {
    const Layout *l = &g->s->plan->layouts[v];
    BlkType t = vtype(g, v);
    int cd = -1, run = run_length(g, v, &cd);
    int32_t copies = nvptx_layout_copy_regs(l);
    LLVMTypeRef vt = LLVMVectorType(ty(g, t.dtype), (unsigned)run);
    for (int r = 0; r < l->nregs; r += run) {
        if (r & copies) continue;
        LLVMValueRef vec = LLVMGetUndef(vt);
        for (int i = 0; i < run; i++) vec = LLVMBuildInsertElement(g->b, vec, g->regs[v][r + i], ci32(g, i), "");
        LLVMValueRef off = nvptx_staged_offset_of(g, st, l, r);
        LLVMValueRef store = LLVMBuildStore(g->b, vec, nvptx_smem_at(g, off));
        LLVMSetAlignment(store, (unsigned)(run * st->es));
    }
}

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: four 8 x 8 matrices,
 * lane l giving the address of row l % 8 of matrix l / 8. */
static void ldmatrix_x4(Gen *g, LLVMValueRef byte_off, bool trans, LLVMValueRef out[4]) {
    const char *name = trans ? "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16" : "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMTypeRef ptr_ty = LLVMPointerTypeInContext(g->m->ctx, 3);
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(g->m->mod, id, &ptr_ty, 1);
    LLVMTypeRef fty = LLVMIntrinsicGetType(g->m->ctx, id, &ptr_ty, 1);
    LLVMValueRef p = nvptx_smem_at(g, byte_off);
    LLVMValueRef res = LLVMBuildCall2(g->b, fty, fn, &p, 1, "");
    for (int i = 0; i < 4; i++) out[i] = LLVMBuildExtractValue(g->b, res, (unsigned)i, "");
}

/* x = fptrunc of an f32: that f32, else NULL. */
static LLVMValueRef rounded_from_f32(Gen *g, LLVMValueRef x) {
    if (!LLVMIsAInstruction(x) || LLVMGetInstructionOpcode(x) != LLVMFPTrunc) return NULL;
    LLVMValueRef src = LLVMGetOperand(x, 0);
    return LLVMTypeOf(src) == g->m->t.f32 ? src : NULL;
}

/* Two f16 or bf16 elements as one 32-bit operand register of mma. Two f32
 * rounded to nearest (attention's p as f16) become one cvt.rn.f16x2.f32
 * instead of two conversions and a pack; it puts its first operand in the
 * high half. */
LLVMValueRef nvptx_dot_pack(Gen *g, LLVMValueRef lo, LLVMValueRef hi, DType d) {
    LLVMValueRef lo32 = rounded_from_f32(g, lo), hi32 = rounded_from_f32(g, hi);
    if (lo32 && hi32) {
        LLVMValueRef args[2] = {hi32, lo32};
        LLVMValueRef v = nvptx_call(g, d == DT_F16 ? "llvm.nvvm.ff2f16x2.rn" : "llvm.nvvm.ff2bf16x2.rn",
                                    LLVMVectorType(ty(g, d), 2), args, 2);
        return d == DT_F16 ? v : LLVMBuildBitCast(g->b, v, g->m->t.i32, "");
    }
    LLVMValueRef v = LLVMGetUndef(LLVMVectorType(ty(g, d), 2));
    v = LLVMBuildInsertElement(g->b, v, lo, ci32(g, 0), "");
    v = LLVMBuildInsertElement(g->b, v, hi, ci32(g, 1), "");
    return d == DT_F16 ? v : LLVMBuildBitCast(g->b, v, g->m->t.i32, "");
}

/* Register bits of a layout along dimension d from basis `from` up: the
 * repetitions of a tile of that size. */
int nvptx_rep_bits(const Layout *l, int d, int32_t from) {
    int n = 0;
    for (int b = 0; b < l->nreg_bits; b++) n += l->reg[b][d] >= from;
    return n;
}


/* Per value, a list: mma.sync's fragments are one dot's operand's (each
 * dot reading the value gets its own), wgmma's resident copy the value's. */
typedef struct HoistedFrags {
    const BirOp *dot;
    int which;
    Frags frags;      /* mma.sync's */
    bool resident;    /* wgmma's: staged in the resident region instead */
    Staged staged;
    struct HoistedFrags *next;
} HoistedFrags;

static HoistedFrags *hoisted_for(Gen *g, const BirOp *op, int which) {
    for (HoistedFrags *h = g->hoisted ? g->hoisted[op->operands[which]] : NULL; h; h = h->next)
        if (!h->resident && h->dot == op && h->which == which) return h;
    return NULL;
}

static HoistedFrags *resident_of(Gen *g, int v) {
    for (HoistedFrags *h = g->hoisted ? g->hoisted[v] : NULL; h; h = h->next)
        if (h->resident) return h;
    return NULL;
}


/* Loads the fragments of a staged operand with ldmatrix.x4: A one 16 x 16
 * tile each (matrices (m, k) at (0, 0), (8, 0), (0, 8), (8, 8)); B two 8-wide
 * tiles (k 0 and 8 of tile a, then of tile b). */
void nvptx_load_frags(Gen *g, const Staged *st, const Layout *lo, int which, int ntiles, int ksteps, int k0, int k1,
                      Frags *f) {
    int kd = which == 0 ? 1 : 0, od = 1 - kd;
    bool trans = st->cd != kd;
    LLVMValueRef lane = g->lane, j = LLVMBuildAnd(g->b, lane, ci32(g, 7), "");
    LLVMValueRef mat = LLVMBuildLShr(g->b, lane, ci32(g, 3), "");
    LLVMValueRef base = nvptx_warp_base(g, lo, od);
    if (!f->frag) f->frag = arena_alloc(&g->arena, (size_t)(ntiles * ksteps) * sizeof *f->frag);
    int kbits = 0;
    while ((1 << kbits) < ksteps) kbits++;
    for (int t = 0; t < ntiles; t += which == 0 ? 1 : 2) {
        /* the tiles' offsets along od (B: a pair; one tile alone repeats) */
        int tb = which == 1 && t + 1 < ntiles ? t + 1 : t;
        int32_t off_a = nvptx_layout_coord(lo, od, which == 0 ? t << (3 + kbits) : t << (2 + kbits), 0, 0);
        int32_t off_b = nvptx_layout_coord(lo, od, which == 0 ? t << (3 + kbits) : tb << (2 + kbits), 0, 0);
        LLVMValueRef od_off, kd_off;
        if (which == 0) { /* matrix: (m += 8 * (mat & 1), k += 8 * (mat >> 1)) */
            od_off = LLVMBuildAdd(g->b, ci32(g, off_a), LLVMBuildShl(g->b, LLVMBuildAnd(g->b, mat, ci32(g, 1), ""), ci32(g, 3), ""), "");
            kd_off = LLVMBuildShl(g->b, LLVMBuildLShr(g->b, mat, ci32(g, 1), ""), ci32(g, 3), "");
        } else { /* matrix: (k += 8 * (mat & 1), n: tile a for mat < 2, else tile b) */
            kd_off = LLVMBuildShl(g->b, LLVMBuildAnd(g->b, mat, ci32(g, 1), ""), ci32(g, 3), "");
            od_off = LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, LLVMIntULT, mat, ci32(g, 2), ""), ci32(g, off_a),
                                     ci32(g, off_b), "");
        }
        LLVMValueRef o = LLVMBuildAdd(g->b, base, od_off, "");
        for (int ki = k0; ki < k1; ki++) {
            LLVMValueRef k = LLVMBuildAdd(g->b, kd_off, ci32(g, ki * 16), "");
            /* lane j reads row j of its matrix: the stored row is along the
             * non-contiguous dimension */
            LLVMValueRef row, col;
            if (st->cd == kd) row = LLVMBuildAdd(g->b, o, j, ""), col = k;
            else row = LLVMBuildAdd(g->b, k, j, ""), col = o;
            LLVMValueRef r[4];
            ldmatrix_x4(g, nvptx_staged_offset(g, st, row, col), trans, r);
            if (which == 0) {
                LLVMValueRef *fr = f->frag[t * ksteps + ki] = arena_alloc(&g->arena, 4 * sizeof *fr);
                memcpy(fr, r, 4 * sizeof *fr);
            } else {
                LLVMValueRef *fa = f->frag[t * ksteps + ki] = arena_alloc(&g->arena, 2 * sizeof *fa);
                fa[0] = r[0], fa[1] = r[1];
                if (tb != t) {
                    LLVMValueRef *fb = f->frag[tb * ksteps + ki] = arena_alloc(&g->arena, 2 * sizeof *fb);
                    fb[0] = r[2], fb[1] = r[3];
                }
            }
        }
    }
}

/* --------------------------------------------------- loop-invariant operands */

void nvptx_dot_hoist(Gen *g, const BirBlock *body) {
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        if (op->code != BIR_DOT) continue;
        const Layout *lc = &g->s->plan->layouts[op->results[0]];
        int32_t K = vtype(g, op->operands[0]).shape[1];
        int ksteps = K / 16, mreps = 1 << nvptx_rep_bits(lc, 0, 16), nreps = 1 << nvptx_rep_bits(lc, 1, 8);
        const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
        for (int w = 0; w < 2; w++) {
            bool resident = ds->path == NVPTX_DOT_WGMMA;
            int v = resident ? nvptx_resident_root(g, op->operands[w], NULL) : op->operands[w];
            if (!ds->before_loop[w]) continue;
            HoistedFrags *h = arena_alloc(&g->arena, sizeof *h);
            h->dot = op, h->which = w;
            h->resident = resident;
            nvptx_barrier(g); /* earlier readers of the region are done */
            Staged st = nvptx_staging(g, v, ci32(g, h->resident ? g->s->resident_at + g->s->resident_off[v] : 0));
            nvptx_stage_store(g, v, &st);
            if (h->resident) nvptx_proxy_fence(g); /* the stores, visible to wgmma */
            nvptx_barrier(g);
            if (h->resident) h->staged = st;
            else {
                Layout lo = nvptx_dot_operand_layout(g, op, w);
                nvptx_load_frags(g, &st, &lo, w, w == 0 ? mreps : nreps, ksteps, 0, ksteps, &h->frags);
                h->frags.frag_done = true;
            }
            h->next = g->hoisted[v];
            g->hoisted[v] = h;
        }
    }
}

const Frags *nvptx_dot_hoisted(Gen *g, const BirOp *op, int which) {
    HoistedFrags *h = hoisted_for(g, op, which);
    return h ? &h->frags : NULL;
}

/* Any dot of the loop (or of a loop inside it) that reads the value reads
 * its resident copy: the staging depends on the value alone, and a second
 * reader staging it again would write shared memory the plan does not count. */
bool nvptx_dot_resident(Gen *g, const BirOp *op, int which, Staged *out) {
    bool flipped;
    HoistedFrags *h = resident_of(g, nvptx_resident_root(g, op->operands[which], &flipped));
    if (!h) return false;
    *out = h->staged;
    if (flipped) out->cd = 1 - out->cd; /* the same rows and slabs, read along the other dimension */
    return true;
}

int nvptx_resident_root(Gen *g, int v, bool *flipped) {
    bool f = false;
    for (const BirOp *d = g->f->values[v].def; d && d->code == BIR_TRANS; d = g->f->values[v].def) {
        v = d->operands[0];
        f = !f;
    }
    if (flipped) *flipped = f;
    return v;
}

void nvptx_dot_unhoist(Gen *g, const BirBlock *body) {
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        if (op->code != BIR_DOT) continue;
        for (int w = 0; w < 2; w++)
            for (HoistedFrags **h = &g->hoisted[op->operands[w]]; *h;)
                if ((*h)->dot == op) *h = (*h)->next;
                else h = &(*h)->next;
    }
}
