/* memory.c: loads, stores and atomics: vector accesses up to 16 bytes,
 * predicated inline PTX when masked, scalar memory ops on thread 0 with the
 * result broadcast through shared memory, acquire-release atomics. */
#include "gen.h"

/* -------------------------------------------------------------- memory */


/* Packs w elements of dtype d into 32-bit words (w * size >= 4 bytes). */
static void pack_words(Gen *g, LLVMValueRef *elems, int w, DType d, LLVMValueRef *words, int nwords) {
    LLVMTypeRef et = mem_ty(g, d);
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(et, (unsigned)w));
    for (int i = 0; i < w; i++) vec = LLVMBuildInsertElement(g->b, vec, to_mem(g, elems[i], d), ci32(g, i), "");
    LLVMValueRef wv = LLVMBuildBitCast(g->b, vec, LLVMVectorType(g->m->t.i32, (unsigned)nwords), "");
    for (int i = 0; i < nwords; i++) words[i] = LLVMBuildExtractElement(g->b, wv, ci32(g, i), "");
}

static void unpack_words(Gen *g, LLVMValueRef *words, int nwords, DType d, int w, LLVMValueRef *elems) {
    LLVMValueRef wv = LLVMGetUndef(LLVMVectorType(g->m->t.i32, (unsigned)nwords));
    for (int i = 0; i < nwords; i++) wv = LLVMBuildInsertElement(g->b, wv, words[i], ci32(g, i), "");
    LLVMValueRef vec = LLVMBuildBitCast(g->b, wv, LLVMVectorType(mem_ty(g, d), (unsigned)w), "");
    for (int i = 0; i < w; i++) elems[i] = from_mem(g, LLVMBuildExtractElement(g->b, vec, ci32(g, i), ""), d);
}

/* Under 4 bytes, w elements (one 16-bit, or one or two 8-bit ones) as one
 * integer of their bytes, and back: a masked access moves them through one
 * 32-bit register. */
static LLVMValueRef pack_subword(Gen *g, LLVMValueRef *elems, int w, DType d, LLVMTypeRef word) {
    if (w == 1) return LLVMBuildBitCast(g->b, to_mem(g, elems[0], d), word, "");
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(mem_ty(g, d), (unsigned)w));
    for (int i = 0; i < w; i++) vec = LLVMBuildInsertElement(g->b, vec, to_mem(g, elems[i], d), ci32(g, i), "");
    return LLVMBuildBitCast(g->b, vec, word, "");
}

static void unpack_subword(Gen *g, LLVMValueRef v, int w, DType d, LLVMValueRef *elems) {
    if (w == 1) {
        elems[0] = from_mem(g, LLVMBuildBitCast(g->b, v, mem_ty(g, d), ""), d);
        return;
    }
    LLVMValueRef vec = LLVMBuildBitCast(g->b, v, LLVMVectorType(mem_ty(g, d), (unsigned)w), "");
    for (int i = 0; i < w; i++) elems[i] = from_mem(g, LLVMBuildExtractElement(g->b, vec, ci32(g, i), ""), d);
}

static const char *vsuffix(int n) { return n == 4 ? ".v4" : n == 2 ? ".v2" : ""; }

static void reg_list(char *buf, size_t size, int first, int n) {
    size_t at = 0;
    at += (size_t)snprintf(buf + at, size - at, n > 1 ? "{" : "");
    for (int i = 0; i < n; i++) at += (size_t)snprintf(buf + at, size - at, "%s$%d", i ? ", " : "", first + i);
    snprintf(buf + at, size - at, n > 1 ? "}" : "");
}

/* The instruction an access of op is, with its cache controls (the op's
 * attr): "ld.global", "ld.global.cg", "st.global.L1::evict_first",
 * "ld.volatile.global", ... */
static const char *access_instruction(Gen *g, const BirOp *op) {
    bool load = op->code == BIR_LOAD;
    if (op->attr & MEMORY_VOLATILE) return "ld.volatile.global";
    CacheModifier c = memory_cache_of(op->attr);
    EvictionPolicy e = memory_eviction_of(op->attr);
    const char *cache = cache_is_default(c) ? "" : cache_modifier_names[c];
    /* eviction priorities came with PTX 7.4: sm_80's and sm_86's PTX (7.0, 7.1, for the oldest
     * drivers) has none, and there the hint goes (it never changes a result) */
    if (nvptx_ptx_isa(g->m->arch) < 74) e = EVICT_NORMAL;
    const char *evict = e == EVICT_FIRST ? ".L1::evict_first" : e == EVICT_LAST ? ".L1::evict_last" : "";
    return arena_printf(&g->arena, "%s.global%s%s", load ? "ld" : "st", cache, evict);
}

/* Whether op's access is PTX's plain one (LLVM may emit it as it likes). */
static bool plain_access(const BirOp *op) {
    return !(op->attr & MEMORY_VOLATILE) && memory_eviction_of(op->attr) == EVICT_NORMAL &&
           cache_is_default(memory_cache_of(op->attr));
}

/* A predicated load of w elements at p by instruction `ld` (access_instruction);
 * masked-off gives `other`. */
static void masked_load(Gen *g, const char *ld, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *other, int w, DType d,
                        LLVMValueRef *out) {
    int bytes = w * dtype_bytes(d);
    if (bytes < 4) { /* sub-word elements: through a 32-bit register */
        LLVMTypeRef word = bytes == 2 ? g->m->t.i16 : g->m->t.i8;
        LLVMValueRef init = LLVMBuildZExt(g->b, pack_subword(g, other, w, d, word), g->m->t.i32, "");
        LLVMValueRef args[3] = {pred, addr_i64(g, p), init};
        char text[96];
        snprintf(text, sizeof text, "@$1 %s.u%d $0, [$2];", ld, bytes * 8);
        LLVMValueRef v = nvptx_asm_call(g, g->m->t.i32, text, "=r,b,l,0", args, 3, true);
        unpack_subword(g, LLVMBuildTrunc(g->b, v, word, ""), w, d, out);
        return;
    }
    int nwords = bytes / 4;
    LLVMValueRef words[4], args[8];
    pack_words(g, other, w, d, words, nwords);
    args[0] = pred;
    args[1] = addr_i64(g, p);
    char regs[48], text[160], cons[64];
    reg_list(regs, sizeof regs, 0, nwords);
    snprintf(text, sizeof text, "@$%d %s%s.b32 %s, [$%d];", nwords, ld, vsuffix(nwords), regs, nwords + 1);
    size_t at = 0;
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, "=r,");
    at += (size_t)snprintf(cons + at, sizeof cons - at, "b,l");
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, ",%d", i);
    for (int i = 0; i < nwords; i++) args[2 + i] = words[i];
    LLVMTypeRef ret = g->m->t.i32;
    if (nwords > 1) {
        LLVMTypeRef fields[4] = {g->m->t.i32, g->m->t.i32, g->m->t.i32, g->m->t.i32};
        ret = LLVMStructTypeInContext(g->m->ctx, fields, (unsigned)nwords, 0);
    }
    LLVMValueRef v = nvptx_asm_call(g, ret, text, cons, args, 2 + nwords, true);
    for (int i = 0; i < nwords; i++) words[i] = nwords > 1 ? LLVMBuildExtractValue(g->b, v, (unsigned)i, "") : v;
    unpack_words(g, words, nwords, d, w, out);
}

static void masked_store(Gen *g, const char *st, LLVMValueRef p, LLVMValueRef pred, LLVMValueRef *vals, int w,
                         DType d) {
    int bytes = w * dtype_bytes(d);
    if (bytes < 4) { /* sub-word elements: through a 32-bit register */
        LLVMValueRef v = LLVMBuildZExt(g->b, pack_subword(g, vals, w, d, bytes == 2 ? g->m->t.i16 : g->m->t.i8), g->m->t.i32, "");
        LLVMValueRef args[3] = {pred, addr_i64(g, p), v};
        char text[96];
        snprintf(text, sizeof text, "@$0 %s.u%d [$1], $2;", st, bytes * 8);
        nvptx_asm_call(g, g->m->t.void_t, text, "b,l,r,~{memory}", args, 3, true);
        return;
    }
    int nwords = bytes / 4;
    LLVMValueRef words[4], args[8];
    pack_words(g, vals, w, d, words, nwords);
    args[0] = pred;
    args[1] = addr_i64(g, p);
    for (int i = 0; i < nwords; i++) args[2 + i] = words[i];
    char regs[48], text[160], cons[64];
    reg_list(regs, sizeof regs, 2, nwords);
    snprintf(text, sizeof text, "@$0 %s%s.b32 [$1], %s;", st, vsuffix(nwords), regs);
    size_t at = (size_t)snprintf(cons, sizeof cons, "b,l");
    for (int i = 0; i < nwords; i++) at += (size_t)snprintf(cons + at, sizeof cons - at, ",r");
    snprintf(cons + at, sizeof cons - at, ",~{memory}");
    nvptx_asm_call(g, g->m->t.void_t, text, cons, args, 2 + nwords, true);
}

static LLVMValueRef plain_load(Gen *g, LLVMValueRef p, DType d, int align) {
    LLVMValueRef v = LLVMBuildLoad2(g->b, mem_ty(g, d), p, "");
    LLVMSetAlignment(v, (unsigned)align);
    return from_mem(g, v, d);
}

/* How an atomic is ordered (its op's attr: the language's sem and scope),
 * and whether it may be a red: nothing reads its old value, and its sem
 * has no acquire (red is relaxed or release). */
typedef struct {
    int64_t attr;
    bool red;
} AtomicOrder;

/* One atom instruction (or red, where `order` allows): `op` and `type` as
 * PTX spells them; a and b (cas) in the registers of their LLVM type. f16
 * and bf16 travel as their 16 bits, in "h" registers. A red gives no value
 * (NULL). */
static LLVMValueRef atom(Gen *g, const char *op, const char *type, AtomicOrder order, LLVMValueRef pred, LLVMValueRef p,
                         int64_t off, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    if (t == g->m->t.f16 || t == g->m->t.bf16) {
        LLVMValueRef old = atom(g, op, type, order, pred, p, off, LLVMBuildBitCast(g->b, a, g->m->t.i16, ""), NULL);
        return old ? LLVMBuildBitCast(g->b, old, t, "") : NULL;
    }
    const char *rc = t == g->m->t.f32 ? "f" : t == g->m->t.i64 ? "l" : t == g->m->t.i16 ? "h" : "r";
    const char *sem = atomic_sem_names[atomic_sem_of(order.attr)], *scope = atomic_scope_names[atomic_scope_of(order.attr)];
    char text[160], cons[64], at[32] = "";
    if (off) snprintf(at, sizeof at, "+%lld", (long long)off); /* the address's immediate offset */
    if (order.red) {
        LLVMValueRef args[3] = {pred, addr_i64(g, p), a};
        snprintf(text, sizeof text, "@$0 red.%s.%s.global.%s.%s [$1%s], $2;", sem, scope, op, type, at);
        snprintf(cons, sizeof cons, "b,l,%s,~{memory}", rc);
        nvptx_asm_call(g, LLVMVoidTypeInContext(g->m->ctx), text, cons, args, 3, true);
        return NULL;
    }
    LLVMValueRef args[5] = {pred, addr_i64(g, p), a, b, NULL};
    if (b) {
        snprintf(text, sizeof text, "@$1 atom.%s.%s.global.%s.%s $0, [$2%s], $3, $4;", sem, scope, op, type, at);
        snprintf(cons, sizeof cons, "=%s,b,l,%s,%s,0,~{memory}", rc, rc, rc);
        args[4] = LLVMConstNull(t);
        return nvptx_asm_call(g, t, text, cons, args, 5, true);
    }
    snprintf(text, sizeof text, "@$1 atom.%s.%s.global.%s.%s $0, [$2%s], $3;", sem, scope, op, type, at);
    snprintf(cons, sizeof cons, "=%s,b,l,%s,0,~{memory}", rc, rc);
    args[3] = LLVMConstNull(t);
    return nvptx_asm_call(g, t, text, cons, args, 4, true);
}

/* One atomic of the block IR on one element (b: cas's new value); NULL
 * where it is a red. */
static LLVMValueRef atomic(Gen *g, BirOpcode code, AtomicOrder o, LLVMValueRef pred, LLVMValueRef p, int64_t off,
                           LLVMValueRef a, LLVMValueRef b, DType d) {
    bool wide = dtype_bits(d) == 64;
    const char *bits = wide ? "b64" : "b32";
    switch (code) {
    case BIR_ATOMIC_CAS: return atom(g, "cas", bits, o, pred, p, off, a, b);
    case BIR_ATOMIC_XCHG: return atom(g, "exch", bits, o, pred, p, off, a, NULL);
    case BIR_ATOMIC_ADD: return atom(g, "add", nvptx_add_type(d), o, pred, p, off, a, NULL);
    case BIR_ATOMIC_AND: return atom(g, "and", bits, o, pred, p, off, a, NULL);
    case BIR_ATOMIC_OR: return atom(g, "or", bits, o, pred, p, off, a, NULL);
    case BIR_ATOMIC_XOR: return atom(g, "xor", bits, o, pred, p, off, a, NULL);
    default: break; /* max, min */
    }
    bool is_max = code == BIR_ATOMIC_MAX;
    if (d != DT_F32)
        return atom(g, is_max ? "max" : "min", dtype_is_unsigned(d) ? (wide ? "u64" : "u32") : (wide ? "s64" : "s32"), o,
                    pred, p, off, a, NULL);
    /* f32 has no atom.max: on the bits, a value >= +0 orders as a signed
     * integer among all floats, and a negative one as an unsigned integer
     * the other way round (Triton's way; NaN is not supported) */
    LLVMValueRef ibits = LLVMBuildBitCast(g->b, a, g->m->t.i32, "");
    LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, ibits, ci32(g, 0), "");
    LLVMValueRef pos_pred = LLVMBuildAnd(g->b, pred, LLVMBuildNot(g->b, neg, ""), "");
    LLVMValueRef neg_pred = LLVMBuildAnd(g->b, pred, neg, "");
    LLVMValueRef old_pos = atom(g, is_max ? "max" : "min", "s32", o, pos_pred, p, off, ibits, NULL);
    LLVMValueRef old_neg = atom(g, is_max ? "min" : "max", "u32", o, neg_pred, p, off, ibits, NULL);
    if (!old_pos) return NULL;
    return LLVMBuildBitCast(g->b, LLVMBuildSelect(g->b, neg, old_neg, old_pos, ""), g->m->t.f32, "");
}

static AtomicOrder atomic_order(Gen *g, const BirOp *op) {
    return (AtomicOrder){op->attr, nvptx_atomic_schedule(g->s, op)->red};
}

/* A scalar load runs in every thread (one address: the hardware fetches it
 * once per warp), so it costs no barrier. A scalar atomic runs on thread 0,
 * and every thread reads its result back through a shared-memory slot:
 * barrier (earlier readers of the slot are done, and every earlier access of
 * the program is), thread 0 works and writes, barrier, all read. A scalar
 * store is thread 0's. */
static bool gen_scalar_memory(Gen *g, const BirOp *op, int64_t slot) {
    const int *a = op->operands;
    DType d = vtype(g, a[0]).elem;
    LLVMValueRef p = g->regs[a[0]][0];
    int mask_at = bir_op_info(op->code)->mask_at;
    LLVMValueRef mask = mask_at >= 0 && a[mask_at] != BIR_NONE ? g->regs[a[mask_at]][0] : NULL;
    if (op->code == BIR_LOAD && g->ahead_live) mask = mask ? LLVMBuildAnd(g->b, mask, g->ahead_live, "") : g->ahead_live;
    if (op->code == BIR_STORE && !plain_access(op)) {
        LLVMValueRef cond = is_thread0(g), v = g->regs[a[1]][0];
        masked_store(g, access_instruction(g, op), p, mask ? LLVMBuildAnd(g->b, cond, mask, "") : cond, &v, 1, d);
        return true;
    }
    if (op->code == BIR_STORE) {
        LLVMValueRef cond = is_thread0(g);
        if (mask) cond = LLVMBuildAnd(g->b, cond, mask, "");
        LLVMBasicBlockRef merge = nvptx_begin_if(g, cond);
        LLVMValueRef st = LLVMBuildStore(g->b, to_mem(g, g->regs[a[1]][0], d), p);
        LLVMSetAlignment(st, (unsigned)dtype_bytes(d));
        nvptx_end_if(g, merge);
        return true;
    }
    if (op->code == BIR_LOAD) {
        LLVMValueRef v;
        if (mask || !plain_access(op)) {
            LLVMValueRef init = mask && a[2] != BIR_NONE ? g->regs[a[2]][0] : LLVMConstNull(ty(g, d));
            masked_load(g, access_instruction(g, op), p, mask ? mask : LLVMConstInt(g->m->t.i1, 1, 0), &init, 1, d, &v);
        } else {
            v = plain_load(g, p, d, dtype_bytes(d));
        }
        nvptx_new_regs(g, op->results[0])[0] = v;
        return true;
    }
    nvptx_barrier(g); /* an atomic waits for every earlier access of the program; the slot's readers are done */
    LLVMValueRef slot_p = nvptx_smem_ptr(g, slot, NULL, 0);
    LLVMBasicBlockRef t0 = nvptx_begin_if(g, is_thread0(g));
    /* atom.acq_rel (or .release) is the release: the barrier orders the
     * other threads' accesses before it (PTX causality order), so no fence
     * is needed */
    LLVMValueRef pred = mask ? mask : LLVMConstInt(g->m->t.i1, 1, 0);
    LLVMValueRef x = g->regs[a[1]][0], y = a[2] != BIR_NONE && op->code == BIR_ATOMIC_CAS ? g->regs[a[2]][0] : NULL;
    LLVMValueRef v = atomic(g, op->code, atomic_order(g, op), pred, p, 0, x, y, d);
    if (!nvptx_value_used(g->f->body, op->results[0])) { /* e.g. a lock's release: nothing to broadcast */
        nvptx_end_if(g, t0);
        nvptx_new_regs(g, op->results[0])[0] = LLVMGetUndef(ty(g, d));
        return true;
    }
    LLVMValueRef st = LLVMBuildStore(g->b, to_mem(g, v, d), slot_p);
    LLVMSetAlignment(st, 8);
    nvptx_end_if(g, t0);
    nvptx_barrier(g);
    LLVMValueRef ld = LLVMBuildLoad2(g->b, mem_ty(g, d), nvptx_smem_ptr(g, slot, NULL, 0), "");
    LLVMSetAlignment(ld, 8);
    nvptx_new_regs(g, op->results[0])[0] = from_mem(g, ld, d);
    return true;
}

/* A block atomic, an instruction an element (in[0]: the values, in[1]: cas's
 * new ones), all in layout l; out: the old values (undefined for a red). */
static void block_atomics(Gen *g, const BirOp *op, const Layout *l, LLVMValueRef *ptr, LLVMValueRef **in,
                          LLVMValueRef *mask, LLVMValueRef *out) {
    DType d = vtype(g, op->operands[0]).elem;
    int32_t copies = nvptx_layout_copy_regs(l);
    LLVMValueRef own = nvptx_owner(g, l); /* copies of an element must not each add */
    AtomicOrder order = atomic_order(g, op);
    const int64_t *imm = nvptx_atomic_schedule(g->s, op)->offsets; /* one address a thread, offsets in the instructions */
    for (int k = 0; k < l->nregs; k++) {
        int canon = k & ~copies;
        if (canon != k) {
            out[k] = out[canon];
            continue;
        }
        LLVMValueRef pred = mask ? LLVMBuildAnd(g->b, own, mask[k], "") : own;
        LLVMValueRef y = op->code == BIR_ATOMIC_CAS ? in[1][k] : NULL;
        out[k] = imm ? atomic(g, op->code, order, pred, ptr[0], imm[k], in[0][k], y, d)
                     : atomic(g, op->code, order, pred, ptr[k], 0, in[0][k], y, d);
        if (!out[k]) out[k] = LLVMGetUndef(ty(g, d)); /* a red: its value is never read */
    }
}

/* A block atomic_add by a bulk reduction where every mask is true (bulk.c),
 * else by reds, whose pointers and masks are computed in their own branch
 * and whose values are read back from the staging: nothing but the vote is
 * kept through the barrier. */
static bool gen_bulk_atomic(Gen *g, const BirOp *op, const Layout *l, int64_t slot) {
    const int *a = op->operands;
    int mask_at = bir_op_info(op->code)->mask_at;
    bool masked = a[mask_at] != BIR_NONE;
    LLVMValueRef *vals = nvptx_operand(g, a[1], l, slot);
    LLVMValueRef *mask = masked ? nvptx_operand(g, a[mask_at], l, slot) : NULL;
    NvptxBulkRun run = nvptx_bulk_reduce_begin(g, op, l, nvptx_operand(g, a[0], l, slot)[0], vals, mask);
    LLVMValueRef *in[3] = {nvptx_bulk_staged(g, op, l, &run), NULL, NULL};
    block_atomics(g, op, l, nvptx_operand(g, a[0], l, slot), in, masked ? nvptx_operand(g, a[mask_at], l, slot) : NULL,
                  nvptx_new_regs(g, op->results[0]));
    nvptx_bulk_reduce_end(g, &run);
    return true;
}

bool nvptx_gen_memory(Gen *g, const BirOp *op, int64_t slot) {
    const int *a = op->operands;
    BlkType pt = vtype(g, a[0]);
    if (pt.rank == 0) return gen_scalar_memory(g, op, slot);
    DType d = pt.elem;
    const Layout *l = nvptx_memory_layout(g->s->plan, op);
    if (bir_is_atomic(op->code) && nvptx_atomic_schedule(g->s, op)->bulk) return gen_bulk_atomic(g, op, l, slot);
    int w = nvptx_access_width(g->s->plan, g->f, op);
    LLVMValueRef *ptr = nvptx_operand(g, a[0], l, slot); /* an atomic's may be recomputed in the value's layout */
    /* the other operands in the op's layout (the pointers', or an atomic value's) */
    LLVMValueRef *in[3] = {NULL, NULL, NULL};
    for (int i = 1; i < op->noperands && i < 4; i++)
        if (a[i] != BIR_NONE) in[i - 1] = nvptx_operand(g, a[i], l, slot);
    int mask_at = bir_op_info(op->code)->mask_at;
    LLVMValueRef *mask = mask_at >= 1 && a[mask_at] != BIR_NONE ? in[mask_at - 1] : NULL;
    if (op->code == BIR_LOAD && g->ahead_live) { /* a later iteration's load, read ahead: only where it runs */
        LLVMValueRef *guarded = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *guarded);
        for (int k = 0; k < l->nregs; k++) guarded[k] = mask ? LLVMBuildAnd(g->b, mask[k], g->ahead_live, "") : g->ahead_live;
        mask = guarded;
    }
    LLVMValueRef *out = op->nresults ? nvptx_new_regs(g, op->results[0]) : NULL;
    int32_t copies = nvptx_layout_copy_regs(l); /* registers that repeat others: written once */
    if (bir_is_atomic(op->code)) {
        block_atomics(g, op, l, ptr, in, mask, out);
        return true;
    }
    /* an access with cache controls is PTX written out, predicated on true where unmasked */
    const char *instruction = access_instruction(g, op);
    bool plain = plain_access(op);
    LLVMValueRef always = LLVMConstInt(g->m->t.i1, 1, 0);
    for (int k = 0; k < l->nregs; k += w) {
        if (op->code == BIR_STORE && (k & copies)) continue;
        if (op->code == BIR_LOAD) {
            if (mask || !plain) {
                LLVMValueRef other[16];
                for (int i = 0; i < w; i++) other[i] = in[1] ? in[1][k + i] : LLVMConstNull(ty(g, d));
                masked_load(g, instruction, ptr[k], mask ? mask[k] : always, other, w, d, out + k);
            } else {
                nvptx_vector_load(g, ptr[k], w, d, out + k);
            }
        } else {
            LLVMValueRef *vals = in[0] + k;
            if (mask || !plain) {
                masked_store(g, instruction, ptr[k], mask ? mask[k] : always, vals, w, d);
            } else {
                nvptx_vector_store(g, ptr[k], vals, w, d);
            }
        }
    }
    return true;
}
