/* wgmma.c: dot on Hopper's warpgroup tensor cores (sm_90a).
 *
 * wgmma.mma_async.m64nNk16 (f16 or bf16 operands, f32 accumulation): the
 * four warps of a warpgroup multiply a 64 x 16 tile of a by a 16 x N tile
 * of b into a 64 x N accumulator, which they hold as mma.sync's m16n8
 * fragments repeated along N, warp w of the group holding rows 16w to
 * 16w + 15. With every warp of the program along M (layout.c gives dots
 * that can use wgmma that layout), warpgroup q takes rows 64q + 64 *
 * groups * i of the block, i counting its tiles. The accumulator is
 * nvptx_layout_mma's, so everything around the dot is unchanged.
 *
 * 8-bit operands (fp8 into f32, i8/u8 into s32): m64nNk32, 32 bytes of k
 * a step as the 16-bit forms, both operands K-major from shared memory
 * (the only forms PTX has for them). An fp8 dot's sum starts from zero and
 * is added to its accumulator in f32 after its wait (the promotion,
 * language.md §7), so it never leaves its group in flight.
 *
 * b, and a unless it is in registers already, are read from shared memory
 * through 64-bit descriptors. dot.c's staging is the layout the hardware
 * reads: slabs of 128, 64 or 32 bytes of each row, 16-byte chunks swizzled
 * by the row, are wgmma's 128-, 64- and 32-byte swizzle modes. An operand
 * is K-major when its rows run along k (a [M, K] row-major), else MN-major
 * (the instruction's transpose flag); staged from a pipelined loop's
 * ring (pipeline.c: cp.async or TMA), once before its loop where it is
 * loop-invariant (dot.c's resident region: attention's q), or by the dot
 * itself. a may instead come from registers in mma.sync's a-fragment layout
 * (attention's p): wgmma's register form. Never a loop-invariant a kept in
 * registers through its loop (dot.c says why).
 *
 * LLVM 19 has no wgmma intrinsics: inline PTX. Each wgmma takes its
 * accumulator registers as outputs tied to its inputs, and the final
 * wgmma.wait_group does too, so LLVM keeps them in place and ptxas sees
 * one chain of accumulations (no serialization). A dot's group is waited
 * for before its result is used, except the one a pipelined loop leaves in
 * flight (pipeline.c's async_dot) until the next, and a loop's last dot
 * whose carried result the next iteration's first dot waits for
 * (deferred_dot: the registers are tied through that wait). Shared memory that threads
 * wrote (st.shared, cp.async) is made visible to wgmma, which reads through
 * the async proxy, by fence.proxy.async before the barrier that publishes it. */
#include <math.h>

#include "gen.h"

enum { WG_MAX_N = 256, WG_WAIT_CHUNK = 128 };
/* Registers a wgmma needs besides the accumulators and a-fragments it
 * holds: ptxas 13.0 refused m64n32k16 (16 accumulators) under 42 and
 * m64n64k16 (32) under 58 (C7602, "register target of ... or higher") */
enum { WGMMA_OTHER_REGS = 26 };


/* A staged operand wgmma can read: rows of at least 16 elements (a 32-byte
 * slab, the narrowest swizzle), stored a run of 2 to 8 elements at a time
 * (attention backward's dSᵀ, converted from an accumulator, runs in pairs). */
bool nvptx_wgmma_readable(Gen *g, int v) {
    int cd = nvptx_stageable_dim(g, v);
    return cd >= 0 && vtype(g, v).shape[cd] * dtype_bytes(vtype(g, v).dtype) >= 32;
}

int nvptx_wgmma_isa(Gen *g, const BirOp *op) {
    DType a = vtype(g, op->operands[0]).dtype, b = vtype(g, op->operands[1]).dtype;
    return dtype_is_int(a) && a != b ? 84 : 0; /* (older: ptxas's "WGMMA with mixed integer types") */
}

const char *nvptx_wgmma_refusal(Gen *g, const BirOp *op) {
    if (!g->s->plan->wgmma) return "the arch has no wgmma";
    BlkType at = vtype(g, op->operands[0]), rt = vtype(g, op->results[0]);
    const char *shape = nvptx_wgmma_shape_refusal(rt.shape[0], rt.shape[1], at.shape[1], at.dtype, g->s->plan->num_warps);
    if (shape) return shape;
    const Layout *lc = &g->s->plan->layouts[op->results[0]];
    if (nvptx_layout_warps_along(lc, 0) != g->s->plan->num_warps) return "its accumulator's warps are not all along M";
    int b = op->operands[1]; /* (a is read from registers where it cannot be from shared memory) */
    if (!nvptx_wgmma_readable(g, b))
        return nvptx_stageable_dim(g, b) < 0 ? "b has no runs of 2 elements a thread holds to stage"
                                              : "b has rows shorter than 32 bytes";
    /* (u8 x i8, mixed: PTX ISA 8.4 on; the module declares it, nvptx_wgmma_needs_isa) */
    if (dtype_bits(at.dtype) == 8) { /* K-major both, from shared memory: the only 8-bit forms */
        if (!nvptx_wgmma_readable(g, op->operands[0]) || nvptx_stageable_dim(g, op->operands[0]) != 1)
            return "a's elements do not run along k (8-bit wgmma reads a K-major: [M, K] with K contiguous)";
        if (nvptx_stageable_dim(g, b) != 0)
            return "b's elements do not run along k (8-bit wgmma reads b K-major: load b as [N, K], K contiguous, "
                   "and pass trans(...) of it)";
    }
    return NULL;
}

/* a already in mma.sync's a-fragment layout, 16-bit: blkc's register form
 * takes no 8-bit a (an 8-bit a is staged, even where its registers would
 * fit the 16-bit fragments fp8 uses on mma.sync). */
bool nvptx_wgmma_a_in_registers(Gen *g, const BirOp *op) {
    return dtype_bits(vtype(g, op->operands[0]).dtype) != 8 && nvptx_dot_in_registers(g, op, 0);
}

int64_t nvptx_wgmma_staged_bytes(Gen *g, int v) {
    BlkType t = vtype(g, v); /* rounded up to where descriptors assume the next one starts */
    return nvptx_round_up(type_numel(t) * dtype_bytes(t.dtype), NVPTX_SWIZZLE_PERIOD);
}

int64_t nvptx_wgmma_smem_bytes(Gen *g, const BirOp *op, const bool elsewhere[2]) {
    int64_t need = nvptx_operand_smem_bytes(g, op->operands[2], &g->s->plan->layouts[op->results[0]]);
    int64_t staged = 0, other = 0;
    for (int which = 0; which < 2; which++) {
        int v = op->operands[which];
        if (elsewhere[which]) continue;
        if (which == 0 && nvptx_wgmma_a_in_registers(g, op)) continue;
        if (nvptx_wgmma_readable(g, v)) staged += nvptx_wgmma_staged_bytes(g, v);
        else { /* a only: b unstaged is refused */
            Layout l = nvptx_dot_operand_layout(g, op, which);
            other += nvptx_operand_smem_bytes(g, v, &l);
        }
    }
    return staged + other > need ? staged + other : need;
}

/* ------------------------------------------------------------ descriptors
 * Bits 0-13: the start address / 16; 16-29: the leading byte offset / 16;
 * 32-45: the stride byte offset / 16; 62-63: the swizzle (1: 128 bytes,
 * 2: 64, 3: 32). K-major: rows of 8 at the slab width apart, groups of 8
 * rows the stride apart, k within the row (the leading offset unused).
 * MN-major: 8 rows along k a slab width apart, groups of 8 the stride
 * apart, and along M or N the next slab the leading offset away. */

static LLVMValueRef descriptor(Gen *g, LLVMValueRef byte_off, int64_t lead, int64_t stride, int slab_bytes) {
    int mode = slab_bytes == 128 ? 1 : slab_bytes == 64 ? 2 : 3;
    uint64_t fixed = ((uint64_t)(lead >> 4) & 0x3fff) << 16 | ((uint64_t)(stride >> 4) & 0x3fff) << 32 |
                     (uint64_t)mode << 62;
    LLVMValueRef p = nvptx_smem_at(g, byte_off);
    LLVMValueRef addr = LLVMBuildLShr(g->b, addr_i64(g, p), ci64(g, 4), "");
    addr = LLVMBuildAnd(g->b, addr, ci64(g, 0x3fff), "");
    return LLVMBuildOr(g->b, addr, LLVMConstInt(g->m->t.i64, fixed, 0), "");
}

/* The descriptor of operand `which`'s tile starting at mn0 along M (a) or N
 * (b), k-step kk: k-step 0's, made once, plus kk's constant byte offset / 16
 * in the address field (exact: an address in shared memory is below 2^18
 * bytes, so the field, 14 bits of address / 16, does not carry). */
static LLVMValueRef operand_descriptor(Gen *g, const Staged *st, int which, LLVMValueRef mn0, int kk) {
    int kd = which == 0 ? 1 : 0, sb = st->slab * st->es;
    LLVMValueRef off;
    int64_t lead, kk_off;
    if (st->cd == kd) { /* K-major: rows along M or N */
        int steps = sb / 32; /* k-steps (32 bytes of k) in a slab */
        off = LLVMBuildMul(g->b, mn0, ci32(g, sb), "");
        kk_off = (int64_t)(kk / steps) * st->rows * sb + (kk % steps) * 32;
        lead = 16;
    } else { /* MN-major: rows along k; mn0 starts a slab */
        LLVMValueRef slab = LLVMBuildUDiv(g->b, mn0, ci32(g, st->slab), "");
        off = LLVMBuildMul(g->b, slab, ci32(g, (int64_t)st->rows * sb), "");
        kk_off = (int64_t)kk * 16 * sb;
        lead = (int64_t)st->rows * sb;
    }
    LLVMValueRef d0 = descriptor(g, LLVMBuildAdd(g->b, st->base, off, ""), lead, 8 * sb, sb);
    return kk_off ? LLVMBuildAdd(g->b, d0, ci64(g, kk_off >> 4), "") : d0;
}


/* ------------------------------------------------------------ emission */

/* A struct of n of t: what an asm returning n accumulators gives. */
static LLVMTypeRef acc_struct(Gen *g, LLVMTypeRef t, int n) {
    LLVMTypeRef *fields = arena_alloc(&g->arena, (size_t)n * sizeof *fields);
    for (int j = 0; j < n; j++) fields[j] = t;
    return LLVMStructTypeInContext(g->m->ctx, fields, (unsigned)n, 0);
}

/* The PTX names of a dot's operand types. */
static const char *wgmma_type(DType d) {
    switch (d) {
    case DT_F16: return "f16";
    case DT_BF16: return "bf16";
    case DT_F8E4M3: return "e4m3";
    case DT_F8E5M2: return "e5m2";
    case DT_U8: return "u8";
    default: return "s8";
    }
}

/* One wgmma on the n/2 accumulators at acc (updated in place): a by
 * descriptor (a_desc) or as four registers (a_regs), b by descriptor;
 * add_acc 0: acc's values are not read (d = a b). 16-bit operands:
 * m64nNk16, either operand transposed; 8-bit: m64nNk32, K-major only,
 * integers with no scale operands. */
static void wgmma(Gen *g, DType da, DType db, int n, LLVMValueRef a_desc, LLVMValueRef *a_regs, LLVMValueRef b_desc,
                  int trans_a, int trans_b, int add_acc, LLVMValueRef *acc, LLVMValueRef issue) {
    int nacc = n / 2, nin = a_regs ? 4 : 1;
    bool ints = dtype_is_int(da), wide = dtype_bits(da) == 16;
    char *text = arena_alloc(&g->arena, (size_t)nacc * 6 + 320);
    char *cons = arena_alloc(&g->arena, (size_t)nacc * 8 + 64);
    int at = sprintf(text, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; ", nacc + nin + 1);
    /* issue: a predicate the warpgroup holds alike (as .aligned asks); where false, the accumulators,
       tied, keep their values */
    if (issue) at += sprintf(text + at, ".reg .pred q; setp.ne.b32 q, $%d, 0; @q ", nacc + nin + 2);
    at += sprintf(text + at, "wgmma.mma_async.sync.aligned.m64n%dk%d.%s.%s.%s {", n, dot_k_step(da),
                  ints ? "s32" : "f32", wgmma_type(da), wgmma_type(db));
    int ct = 0;
    for (int j = 0; j < nacc; j++) {
        at += sprintf(text + at, "%s$%d", j ? ", " : "", j);
        ct += sprintf(cons + ct, ints ? "=r," : "=f,");
    }
    const char *scales = ints ? "" : ", 1, 1";
    if (a_regs) {
        at += sprintf(text + at, "}, {$%d, $%d, $%d, $%d}, $%d, p%s, %d; }", nacc, nacc + 1, nacc + 2, nacc + 3,
                      nacc + 4, scales, trans_b);
        ct += sprintf(cons + ct, "r,r,r,r,l,r");
    } else {
        if (wide) at += sprintf(text + at, "}, $%d, $%d, p%s, %d, %d; }", nacc, nacc + 1, scales, trans_a, trans_b);
        else at += sprintf(text + at, "}, $%d, $%d, p%s; }", nacc, nacc + 1, scales);
        ct += sprintf(cons + ct, "l,l,r");
    }
    if (issue) ct += sprintf(cons + ct, ",r");
    for (int j = 0; j < nacc; j++) ct += sprintf(cons + ct, ",%d", j);
    LLVMValueRef *args = arena_alloc(&g->arena, (size_t)(nacc + 7) * sizeof *args);
    int k = 0;
    if (a_regs)
        for (int i = 0; i < 4; i++) args[k++] = a_regs[i];
    else
        args[k++] = a_desc;
    args[k++] = b_desc;
    args[k++] = ci32(g, add_acc);
    if (issue) args[k++] = LLVMBuildZExt(g->b, issue, g->m->t.i32, "");
    for (int j = 0; j < nacc; j++) args[k++] = acc[j];
    LLVMValueRef res = nvptx_asm_call(g, acc_struct(g, ints ? g->m->t.i32 : g->m->t.f32, nacc), text, cons, args, k, true);
    for (int j = 0; j < nacc; j++) acc[j] = LLVMBuildExtractValue(g->b, res, (unsigned)j, "");
}

/* The accumulators are tied through the wait (in chunks): their values are
 * the ones it makes final, and LLVM cannot read them before it. */
void nvptx_wgmma_wait(Gen *g, LLVMValueRef *acc, int n, int pending) {
    char text[48];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", pending);
    for (int at = 0; at < n; at += WG_WAIT_CHUNK) {
        int c = n - at < WG_WAIT_CHUNK ? n - at : WG_WAIT_CHUNK;
        char *cons = arena_alloc(&g->arena, (size_t)c * 8 + 8);
        int ct = 0;
        LLVMTypeRef *fields = arena_alloc(&g->arena, (size_t)c * sizeof *fields);
        for (int j = 0; j < c; j++) { /* f32, or i32 (8-bit integer dots) */
            fields[j] = LLVMTypeOf(acc[at + j]);
            ct += sprintf(cons + ct, "%s=%c", j ? "," : "", fields[j] == g->m->t.i32 ? 'r' : 'f');
        }
        for (int j = 0; j < c; j++) ct += sprintf(cons + ct, ",%d", j);
        LLVMTypeRef ret = LLVMStructTypeInContext(g->m->ctx, fields, (unsigned)c, 0);
        LLVMValueRef res = nvptx_asm_call(g, ret, text, cons, acc + at, c, true);
        for (int j = 0; j < c; j++) acc[at + j] = LLVMBuildExtractValue(g->b, res, (unsigned)j, "");
    }
}

static bool is_zero(LLVMValueRef v) {
    LLVMBool lost;
    if (LLVMIsAConstantInt(v)) return LLVMConstIntGetZExtValue(v) == 0;
    return LLVMIsAConstantFP(v) && LLVMConstRealGetDouble(v, &lost) == 0.0 && !signbit(LLVMConstRealGetDouble(v, &lost));
}



/* The accumulator layout's register for register j of the wgmma of tile mi
 * at column n0: (j & 3) | (8-column tile << 2) | (mi << (2 + nbits)). */
static int acc_reg(int j, int n0, int mi, int nbits) { return (j & 3) | ((n0 / 8 + (j >> 2)) << 2) | (mi << (2 + nbits)); }

/* What one dot's wgmma instructions share: shapes, operands, the scratch
 * accumulator fragment of one n-chunk. */
typedef struct {
    DType d, db;
    int N, nchunk, nbits, mreps, groups, ksteps, trans_a, trans_b;
    int n_used, k_steps_used; /* the columns and k-steps issued (NvptxDotSchedule.n_used, k_used) */
    LLVMValueRef (*words)[4]; /* a's registers as 32-bit words [tile][k-step][4], or NULL */
    const Staged *st;
    LLVMValueRef wg64, *acc;
    LLVMValueRef issue; /* an i1 each wgmma is predicated on, or NULL */
} WgmmaIssue;

/* The wgmmas of k-steps [k0, k1) into the accumulator registers out, every
 * tile of the warpgroup's rows and every n-chunk up to n_used. */
static void issue(Gen *g, const WgmmaIssue *is, LLVMValueRef *out, int k0, int k1) {
    for (int mi = 0; mi < is->mreps; mi++) {
        LLVMValueRef m0 = LLVMBuildAdd(g->b, is->wg64, ci32(g, (int64_t)mi * 64 * is->groups), "");
        for (int n0 = 0; n0 < is->n_used; n0 += is->nchunk) {
            int n = is->n_used - n0 < is->nchunk ? is->n_used - n0 : is->nchunk;
            bool zero = true;
            for (int j = 0; j < n / 2; j++) {
                is->acc[j] = out[acc_reg(j, n0, mi, is->nbits)];
                zero &= is_zero(is->acc[j]);
            }
            if (zero) /* starting from zeros: the first wgmma does not add, and its inputs need no registers */
                for (int j = 0; j < n / 2; j++) is->acc[j] = LLVMGetUndef(LLVMTypeOf(is->acc[j]));
            for (int kk = k0; kk < k1; kk++) {
                LLVMValueRef a_desc = is->words ? NULL : operand_descriptor(g, &is->st[0], 0, m0, kk);
                LLVMValueRef b_desc = operand_descriptor(g, &is->st[1], 1, ci32(g, n0), kk);
                wgmma(g, is->d, is->db, n, a_desc, is->words ? is->words[mi * is->ksteps + kk] : NULL, b_desc,
                      is->trans_a, is->trans_b, !(zero && kk == k0), is->acc, is->issue);
            }
            for (int j = 0; j < n / 2; j++) out[acc_reg(j, n0, mi, is->nbits)] = is->acc[j];
        }
    }
}

/* An fp8 dot: its k-steps a sum at a time (promote_every terms), each sum
 * from zero, waited for and added to the accumulator C in f32; with
 * promote_in_turn two sets of sums take turns, and a sum is added while
 * the next one's group runs (wait_group 1), all but the last. The
 * accumulator ends in out. */
static bool promoted(Gen *g, const NvptxDotSchedule *ds, const WgmmaIssue *is, LLVMValueRef *C, LLVMValueRef *out,
                     int n) {
    int steps = nvptx_dot_run_steps(g, ds, dot_k_step(is->d), is->ksteps);
    if (steps < 0) return false;
    int sums = is->ksteps / steps;
    LLVMValueRef *set[2] = {out, ds->promote_in_turn ? arena_alloc(&g->arena, (size_t)n * sizeof *out) : out};
    LLVMValueRef *total = memcpy(arena_alloc(&g->arena, (size_t)n * sizeof *C), C, (size_t)n * sizeof *C);
    for (int c = 0; c < sums; c++) {
        LLVMValueRef *s = set[c & 1];
        for (int i = 0; i < n; i++) s[i] = LLVMConstReal(g->m->t.f32, 0.0);
        if (c >= (ds->promote_in_turn ? 2 : 1))
            nvptx_asm_void(g, "wgmma.fence.sync.aligned;"); /* the set's registers were read by the adds */
        issue(g, is, s, c * steps, (c + 1) * steps);
        nvptx_asm_void(g, "wgmma.commit_group.sync.aligned;");
        LLVMValueRef *done = ds->promote_in_turn ? (c ? set[(c - 1) & 1] : NULL) : s;
        if (!done) continue;
        nvptx_wgmma_wait(g, done, n, ds->promote_in_turn ? 1 : 0);
        for (int i = 0; i < n; i++) total[i] = LLVMBuildFAdd(g->b, total[i], done[i], "");
    }
    if (ds->promote_in_turn) {
        LLVMValueRef *last = set[(sums - 1) & 1];
        nvptx_wgmma_wait(g, last, n, 0);
        for (int i = 0; i < n; i++) total[i] = LLVMBuildFAdd(g->b, total[i], last[i], "");
    }
    memcpy(out, total, (size_t)n * sizeof *out);
    return true;
}

/* A dot's 64-row tiles a warpgroup takes and its k-steps. */
static void tiles_and_steps(Gen *g, const BirOp *op, int *mreps, int *ksteps) {
    int32_t M = vtype(g, op->results[0]).shape[0], K = vtype(g, op->operands[0]).shape[1];
    *mreps = M / (64 * (g->s->plan->num_warps / 4));
    *ksteps = K / dot_k_step(vtype(g, op->operands[0]).dtype);
}

/* What dot op's wgmmas share, its operands staged as st (a from words,
 * when not NULL). */
static WgmmaIssue issue_of(Gen *g, const BirOp *op, const Staged *st, LLVMValueRef (*words)[4]) {
    DType d = vtype(g, op->operands[0]).dtype, db = vtype(g, op->operands[1]).dtype;
    int32_t N = vtype(g, op->results[0]).shape[1];
    int nchunk = N < WG_MAX_N ? N : WG_MAX_N, nbits = 0, mreps, ksteps;
    while ((8 << nbits) < N) nbits++;
    tiles_and_steps(g, op, &mreps, &ksteps);
    const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
    return (WgmmaIssue){.d = d, .db = db, .N = N, .nchunk = nchunk, .nbits = nbits, .mreps = mreps,
                        .n_used = ds->n_used, .k_steps_used = ds->k_used / dot_k_step(d),
                        .groups = g->s->plan->num_warps / 4, .ksteps = ksteps, .words = words, .st = st,
                        .trans_a = words ? 0 : st[0].cd != 1, .trans_b = st[1].cd != 0,
                        .wg64 = LLVMBuildMul(g->b, nvptx_warpgroup(g), ci32(g, 64), ""),
                        .acc = arena_alloc(&g->arena, (size_t)(nchunk / 2) * sizeof(LLVMValueRef))};
}

/* a's registers as 32-bit words [tile][k-step][4], from a_regs (a in the
 * a-fragment layout), all made before the fence: a word written between two
 * wgmmas would make ptxas insert a wait for the first (C7519). */
static LLVMValueRef (*a_words(Gen *g, const BirOp *op, LLVMValueRef *a_regs))[4] {
    DType d = vtype(g, op->operands[0]).dtype;
    int mreps, ksteps, kbits = 0;
    tiles_and_steps(g, op, &mreps, &ksteps);
    while ((1 << kbits) < ksteps) kbits++;
    LLVMValueRef(*words)[4] = arena_alloc(&g->arena, (size_t)(mreps * ksteps) * sizeof *words);
    for (int mi = 0; mi < mreps; mi++)
        for (int kk = 0; kk < ksteps; kk++)
            for (int p = 0; p < 4; p++) {
                int base = nvptx_dot_a_reg(p, kk, mi, kbits);
                words[mi * ksteps + kk][p] =
                    LLVMBuildBitCast(g->b, nvptx_dot_pack(g, a_regs[base], a_regs[base + 1], d), g->m->t.i32, "");
            }
    return words;
}

int nvptx_wgmma_a_words(Gen *g, const BirOp *op) {
    int mreps, ksteps;
    tiles_and_steps(g, op, &mreps, &ksteps);
    return mreps * ksteps * 4;
}

LLVMValueRef *nvptx_wgmma_hold(Gen *g, const BirOp *op, int64_t smem_at, LLVMValueRef *words) {
    const Layout *lc = &g->s->plan->layouts[op->results[0]];
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at);
    Layout lo = nvptx_dot_operand_layout(g, op, 0);
    LLVMValueRef(*w)[4] = a_words(g, op, nvptx_operand(g, op->operands[0], &lo, smem_at));
    memcpy(words, w, (size_t)nvptx_wgmma_a_words(g, op) * sizeof *words);
    return C;
}

void nvptx_wgmma_issue_late(Gen *g, const BirOp *op, LLVMValueRef *words, const Staged *b, LLVMValueRef *acc,
                            LLVMValueRef when) {
    Staged st[2] = {{0}, *b};
    WgmmaIssue is = issue_of(g, op, st, (LLVMValueRef(*)[4])words);
    is.issue = when;
    nvptx_asm_void(g, "wgmma.fence.sync.aligned;"); /* the accumulators and a's registers are written */
    issue(g, &is, acc, 0, is.k_steps_used);
}

bool nvptx_gen_wgmma(Gen *g, const BirOp *op, int64_t smem_at, NvptxAfterCommit after_commit) {
    int r = op->results[0];
    const Layout *lc = &g->s->plan->layouts[r];
    const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
    LLVMValueRef *C = nvptx_operand(g, op->operands[2], lc, smem_at);
    /* fp8: runs of k terms summed from zero, each added to the accumulator in f32 (the tensor cores'
       fp8 sums keep fewer bits: language.md §7), as the schedule says */
    bool promote = ds->promote_every != 0;
    if (promote && (ds->in_flight || ds->deferred || ds->ends_deferred))
        return nvptx_gen_fail(g, op, "internal compiler error: a promoted dot left in flight");
    const NvptxOperandSource *src = ds->from;
    Staged st[2] = {{0}};
    int64_t at = smem_at;
    bool fresh = false;
    for (int w = 0; w < 2; w++) {
        int v = op->operands[w];
        if (src[w] == NVPTX_FROM_RING) {
            if (!g->staged || !g->staged[v])
                return nvptx_gen_fail(g, op, "internal compiler error: operand %d is not in its loop's ring", w);
            st[w] = *g->staged[v];
        }
        if (src[w] == NVPTX_FROM_RESIDENT) {
            if (!nvptx_dot_resident(g, op, w, &st[w]))
                return nvptx_gen_fail(g, op, "internal compiler error: operand %d is not resident", w);
        }
        if (src[w] != NVPTX_FROM_STAGE) continue;
        if (!fresh) nvptx_barrier(g); /* earlier readers of the region are done */
        st[w] = nvptx_staging(g, v, ci32(g, at));
        at += nvptx_wgmma_staged_bytes(g, v);
        nvptx_stage_store(g, v, &st[w]);
        fresh = true;
    }
    if (fresh) {
        nvptx_proxy_fence(g); /* the stores, visible to wgmma */
        nvptx_barrier(g);
    }
    /* a in registers: the a-fragment layout's */
    LLVMValueRef *a_regs = NULL;
    if (src[0] == NVPTX_FROM_REGS || src[0] == NVPTX_FROM_CONVERT) {
        Layout lo = nvptx_dot_operand_layout(g, op, 0);
        a_regs = nvptx_operand(g, op->operands[0], &lo, at);
    }
    LLVMValueRef *out = nvptx_new_regs(g, r);
    if (!promote) memcpy(out, C, (size_t)lc->nregs * sizeof *out);
    LLVMValueRef(*words)[4] = a_regs ? a_words(g, op, a_regs) : NULL;
    WgmmaIssue is = issue_of(g, op, st, words);
    if (ds->takes_turns) nvptx_ws_take_turn(g); /* ping-pong: warpspec.c */
    nvptx_asm_void(g, "wgmma.fence.sync.aligned;"); /* the accumulators and a's registers are written */
    if (promote) return promoted(g, ds, &is, C, out, lc->nregs);
    issue(g, &is, out, 0, is.k_steps_used);
    nvptx_asm_void(g, "wgmma.commit_group.sync.aligned;");
    if (after_commit) after_commit(g); /* the deferred dot issued late: its group after this one's */
    if (ds->takes_turns) nvptx_ws_pass_turn(g);
    if (ds->deferred) return true; /* the next iteration's first dot waits for it */
    if (ds->then_deferred) { /* this one's group, with the deferred dot's, issued after it, still running */
        nvptx_wgmma_wait(g, out, lc->nregs, 1);
        return true;
    }
    if (ds->in_flight) { /* leaves this group in flight: the wait for the one before lets the pipeline refill its slot */
        nvptx_wgmma_wait(g, out, lc->nregs, 1);
        return true;
    }
    if (!ds->ends_deferred) {
        nvptx_wgmma_wait(g, out, lc->nregs, 0);
        return true;
    }
    /* this wait also ends the last iteration's deferred dot: its result, the
     * carried registers, is tied through it and read from here on (the
     * caller then lets the pipeline refill the slot that dot read) */
    int v = ds->loop->deferred_arg, n = nregs(g, v);
    LLVMValueRef *both = arena_alloc(&g->arena, (size_t)(lc->nregs + n) * sizeof *both);
    memcpy(both, out, (size_t)lc->nregs * sizeof *both);
    memcpy(both + lc->nregs, g->regs[v], (size_t)n * sizeof *both);
    nvptx_wgmma_wait(g, both, lc->nregs + n, 0);
    memcpy(out, both, (size_t)lc->nregs * sizeof *out);
    g->regs[v] = both + lc->nregs; /* the arena's: lives as long as the kernel's registers */
    return true;
}

int nvptx_wgmma_register_floor(const NvptxSchedule *s) {
    int floor = 0;
    for (int i = 0; i < s->ndots; i++)
        if (s->dots[i].path == NVPTX_DOT_WGMMA && s->dots[i].held_regs + WGMMA_OTHER_REGS > floor)
            floor = s->dots[i].held_regs + WGMMA_OTHER_REGS;
    return floor;
}
