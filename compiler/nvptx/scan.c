/* scan.c: the ops that combine elements along an axis in an order the
 * language defines (docs/language.md §6), so the GPU's floats equal the
 * interpreter's bit for bit:
 *   - cumsum, cumprod and associative_scan: log2(n) steps, step d combining
 *     each element with the one d before it (Hillis and Steele), in shared
 *     memory: each step reads all partials, a barrier, writes them all;
 *   - reduce with a combine function: the pairwise tree (step d combines
 *     element k, a multiple of 2d, with k + d) as butterfly steps through
 *     registers, shuffles, and shared memory only between warps.
 * Every thread keeps its elements' partials (n values each for an op over
 * n blocks); copies of an element write the same value. A combine function
 * is the op's region, emitted on scalars at each use. */
#include "gen.h"

enum { MAX_VALUES = 8 }; /* sema's MAX_COMBINED */

/* A value's array in the shared region, rounded up to 8 bytes so that the
 * next array (of any type) is aligned. */
static int64_t array_bytes(Gen *g, int v) { return (nvptx_smem_value_bytes(g, v) + 7) / 8 * 8; }

/* The shared memory of the op's values, one array per value, row-major. */
int64_t nvptx_scan_smem_bytes(Gen *g, const BirOp *op) {
    int64_t total = 0;
    for (int i = 0; i < op->noperands; i++) total += array_bytes(g, op->operands[i]);
    return total;
}

/* left (+) right: cumsum's add, cumprod's multiply, or the op's region. */
static bool combine(Gen *g, const BirOp *op, LLVMValueRef *left, LLVMValueRef *right, LLVMValueRef *out) {
    if (op->code == BIR_CUMSUM || op->code == BIR_CUMPROD) {
        bool fl = dtype_is_float(vtype(g, op->operands[0]).dtype), mul = op->code == BIR_CUMPROD;
        out[0] = mul ? (fl ? LLVMBuildFMul(g->b, left[0], right[0], "") : LLVMBuildMul(g->b, left[0], right[0], ""))
                     : (fl ? LLVMBuildFAdd(g->b, left[0], right[0], "") : LLVMBuildAdd(g->b, left[0], right[0], ""));
        return true;
    }
    const BirBlock *c = op->regions[0];
    int n = op->noperands;
    for (int i = 0; i < n; i++) {
        nvptx_new_regs(g, c->args[i])[0] = left[i];
        nvptx_new_regs(g, c->args[n + i])[0] = right[i];
    }
    if (!nvptx_gen_block(g, c)) return false;
    const BirOp *y = bir_block_terminator(c);
    for (int i = 0; i < n; i++) out[i] = g->regs[y->operands[i]][0];
    return true;
}

typedef struct {
    int n;                      /* values per element */
    DType d[MAX_VALUES];
    int64_t at[MAX_VALUES];     /* each value's array in the shared region */
    LLVMValueRef *v[MAX_VALUES]; /* each value's partials, per register of l */
    const Layout *l;
    LLVMValueRef *index, *along; /* per register: row-major index, coordinate along the axis */
    int32_t len, stride;         /* the axis' size, and its stride in the row-major index */
} Partials;

/* The op's operands in layout l, their indices, and their arrays. */
static Partials partials(Gen *g, const BirOp *op, const Layout *l, int64_t slot) {
    Partials P = {.n = op->noperands, .l = l};
    int axis = (int)op->attr, nr = l->nregs;
    BlkType t = vtype(g, op->operands[0]);
    P.len = t.shape[axis];
    P.stride = t.rank == 2 && axis == 0 ? t.shape[1] : 1;
    int64_t at = slot;
    for (int i = 0; i < P.n; i++) {
        int x = op->operands[i];
        P.d[i] = vtype(g, x).dtype;
        P.at[i] = at;
        at += array_bytes(g, x);
        LLVMValueRef *src = nvptx_operand(g, x, l, slot);
        P.v[i] = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
        memcpy(P.v[i], src, (size_t)nr * sizeof(LLVMValueRef));
    }
    P.index = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
    P.along = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
    for (int k = 0; k < nr; k++) {
        LLVMValueRef c[BLK_MAX_RANK];
        for (int d = 0; d < t.rank; d++) c[d] = nvptx_coord(g, l, d, k);
        P.along[k] = c[axis];
        P.index[k] = nvptx_row_major(g, t, c);
    }
    return P;
}

static void store_all(Gen *g, const Partials *P) {
    for (int k = 0; k < P->l->nregs; k++)
        for (int i = 0; i < P->n; i++) nvptx_smem_write(g, P->d[i], P->at[i], P->index[k], P->v[i][k]);
}

static LLVMValueRef load_value(Gen *g, const Partials *P, int i, LLVMValueRef index) {
    return nvptx_smem_read(g, P->d[i], P->at[i], index);
}

/* Each register's element combined with a partner's (before it for a scan,
 * after it for a reduce's tree) where `has`, else kept. */
static bool step(Gen *g, const BirOp *op, Partials *P, int k, LLVMValueRef has, LLVMValueRef partner, bool partner_left) {
    LLVMValueRef other[MAX_VALUES], mine[MAX_VALUES], out[MAX_VALUES];
    for (int i = 0; i < P->n; i++) other[i] = load_value(g, P, i, partner), mine[i] = P->v[i][k];
    if (!combine(g, op, partner_left ? other : mine, partner_left ? mine : other, out)) return false;
    for (int i = 0; i < P->n; i++) P->v[i][k] = LLVMBuildSelect(g->b, has, out[i], P->v[i][k], "");
    return true;
}

bool nvptx_gen_scan(Gen *g, const BirOp *op, int64_t slot) {
    const Layout *l = &g->s->plan->layouts[op->results[0]];
    Partials P = partials(g, op, l, slot);
    nvptx_barrier(g); /* earlier users of the shared region are done */
    store_all(g, &P);
    for (int32_t d = 1; d < P.len; d *= 2) {
        nvptx_barrier(g);
        for (int k = 0; k < l->nregs; k++) {
            LLVMValueRef has = LLVMBuildICmp(g->b, LLVMIntSGE, P.along[k], ci32(g, d), "");
            LLVMValueRef at = LLVMBuildSelect(g->b, has, LLVMBuildSub(g->b, P.index[k], ci32(g, d * P.stride), ""),
                                              P.index[k], "");
            if (!step(g, op, &P, k, has, at, true)) return false;
        }
        nvptx_barrier(g);
        store_all(g, &P);
    }
    for (int i = 0; i < P.n; i++) {
        LLVMValueRef *out = nvptx_new_regs(g, op->results[i]);
        memcpy(out, P.v[i], (size_t)l->nregs * sizeof *out);
    }
    return true;
}

/* The operand's layout once every element holds its row's result: the
 * axis' bases cleared (those bits now hold copies), then the axis dropped.
 * Clearing first keeps every register bit through the slice (it drops the
 * bits along the axis), so registers keep the operand's numbers. */
static Layout reduced_layout(const Layout *l, int axis) {
    Layout kept = *l;
    for (int b = 0; b < kept.nreg_bits; b++) kept.reg[b][axis] = 0;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) kept.lane[b][axis] = 0;
    for (int b = 0; b < kept.nwarp_bits; b++) kept.warp[b][axis] = 0;
    return nvptx_layout_slice(&kept, axis);
}

/* Can the result's registers be read from the operand's, all reduced? */
static bool result_local(Gen *g, const BirOp *op, int32_t *map) {
    const Layout *rl = &g->s->plan->layouts[op->results[0]];
    if (vtype(g, op->results[0]).rank == 0) {
        if (map) map[0] = 0;
        return true;
    }
    Layout seen = reduced_layout(&g->s->plan->layouts[op->operands[0]], (int)op->attr);
    return nvptx_layout_local_map(&seen, rl, (Projection){{0, 1}}, map);
}

int64_t nvptx_tree_reduce_smem_bytes(Gen *g, const BirOp *op) {
    const Layout *l = &g->s->plan->layouts[op->operands[0]];
    int axis = (int)op->attr;
    bool all_local = result_local(g, op, NULL);
    bool reg;
    for (int32_t d = 1; d < vtype(g, op->operands[0]).shape[axis]; d *= 2)
        all_local = all_local && nvptx_partner_bit(l, axis, d, &reg) >= 0;
    return all_local ? 0 : nvptx_scan_smem_bytes(g, op);
}

/* reduce: butterfly steps, step d pairing each element with the one at
 * index xor d along the axis (a register of its own, a lane, or through
 * shared memory for another warp) and combining them lower index first, so
 * both end up with their aligned group's value in the pairwise tree's
 * order; after log2(n) steps every element holds its row's result. */
bool nvptx_gen_tree_reduce(Gen *g, const BirOp *op, int64_t slot) {
    const Layout *l = &g->s->plan->layouts[op->operands[0]];
    Partials P = partials(g, op, l, slot);
    int nr = l->nregs;
    for (int32_t d = 1; d < P.len; d *= 2) {
        LLVMValueRef *other[MAX_VALUES];
        for (int i = 0; i < P.n; i++) other[i] = nvptx_partner_local(g, l, (int)op->attr, d, P.v[i], P.d[i]);
        if (!other[0]) { /* in another warp */
            nvptx_barrier(g);
            store_all(g, &P);
            nvptx_barrier(g);
            for (int i = 0; i < P.n; i++) {
                other[i] = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
                for (int k = 0; k < nr; k++)
                    other[i][k] = load_value(g, &P, i, LLVMBuildXor(g->b, P.index[k], ci32(g, d * P.stride), ""));
            }
        }
        for (int k = 0; k < nr; k++) {
            LLVMValueRef low = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildAnd(g->b, P.along[k], ci32(g, d), ""), ci32(g, 0), "");
            LLVMValueRef lo[MAX_VALUES], hi[MAX_VALUES], out[MAX_VALUES];
            for (int i = 0; i < P.n; i++) {
                lo[i] = LLVMBuildSelect(g->b, low, P.v[i][k], other[i][k], "");
                hi[i] = LLVMBuildSelect(g->b, low, other[i][k], P.v[i][k], "");
            }
            if (!combine(g, op, lo, hi, out)) return false;
            for (int i = 0; i < P.n; i++) P.v[i][k] = out[i];
        }
    }
    int axis = (int)op->attr;
    BlkType xt = vtype(g, op->operands[0]);
    int32_t *map = arena_alloc(&g->arena, (size_t)(nregs(g, op->results[0]) + 1) * sizeof *map);
    bool local = result_local(g, op, map);
    if (!local) { /* each row's result from its first element */
        nvptx_barrier(g);
        store_all(g, &P);
        nvptx_barrier(g);
    }
    for (int i = 0; i < P.n; i++) {
        int r = op->results[i];
        const Layout *rl = &g->s->plan->layouts[r];
        LLVMValueRef *out = nvptx_new_regs(g, r);
        for (int k = 0; k < nregs(g, r); k++) {
            if (local) {
                out[k] = P.v[i][map[k]];
                continue;
            }
            LLVMValueRef c[BLK_MAX_RANK]; /* the kept coordinate, and 0 along the axis */
            for (int d = 0, j = 0; d < xt.rank; d++) c[d] = d == axis ? ci32(g, 0) : nvptx_coord(g, rl, j++, k);
            out[k] = load_value(g, &P, i, nvptx_row_major(g, xt, c));
        }
    }
    return true;
}
