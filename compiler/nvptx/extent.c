/* extent.c: the part of a tensor-core dot that matters.
 *
 * A head dim of 96 computed in blocks of 128 (attention.blk's BLOCK_D)
 * loads its 32 extra columns as zeros and never stores them: a quarter of
 * each dot's tensor-core work adds zeros or makes columns nobody reads.
 * Two facts say how much of a dot to issue (NvptxDotSchedule.k_used and
 * n_used; mma.sync dots of floats, fp8 run as f16 included, take the first only), both exact,
 * neither changing a result that can be observed:
 * - k: where a's columns and b's rows from k on are all +0 (a masked load
 *   with other = 0 and a term `arange < constant` along that axis, through
 *   trans and conversions), the products of those k-steps are +0 x +0 = +0
 *   and add nothing: they are not issued. Both operands must be zero there
 *   (0 x inf would be NaN). (A sum that is exactly zero may keep the sign
 *   -0 that adding +0 would have made +0.)
 * - n: where no use ever observes the result's columns from n on (the
 *   stores and atomics that take them mask those columns off by a term
 *   `arange < constant`, through elementwise ops, transposes, broadcasts
 *   and loop-carried values), the wgmma is issued with N = n, rounded up
 *   to whole swizzle atoms of b (an N-major b's atom is its slab, 64 f16
 *   columns at 128 bytes: attention's V at D = 96 keeps N = 128); those
 *   registers keep the accumulator's values, which nothing reads.
 * The second is a backward "which columns are live" analysis over the
 * whole kernel, iterated to a fixed point through loops; any use it does
 * not model (reductions, shape ops, inline asm, prints, while loops, ...)
 * makes every column live. */
#include "gen.h"

/* MAX_ROUNDS: walks of the kernel before the liveness gives up (each carried value's demand
 * takes a walk or two to go round its loop) */
enum { MAX_DEPTH = 16, MAX_ROUNDS = 64 };

/* ------------------------------------------------------------ mask terms */

/* For term t, `X < B` or `B > X` with X an arange along axis (not a
 * one-element arange broadcast over it: 0 in every column) and B an integer
 * constant: the number of leading indices along that axis where it can be
 * true (0 to n); else -1. */
static int64_t term_bound(Gen *g, int t, int axis) {
    int along, b;
    const BirOp *range;
    if (!nvptx_arange_term(g, t, &along, &range, &b) || along != axis) return -1;
    int64_t n = vtype(g, t).shape[axis];
    const BirOp *c = g->f->values[nvptx_spread_scalar(g, b)].def;
    if (vtype(g, range->results[0]).shape[0] != n || !c || c->code != BIR_CONST || !dtype_is_int(vtype(g, b).dtype))
        return -1;
    int64_t bound = c->value.i - range->attr;
    return bound < 0 ? 0 : bound > n ? n : bound;
}

/* The leading indices along axis where mask m (an & of terms, through
 * broadcasts that keep the rank) can be true: the least bound of its
 * terms. */
static int64_t mask_bound(Gen *g, int m, int axis, int depth) {
    int64_t n = vtype(g, m).shape[axis];
    const BirOp *op = g->f->values[m].def;
    if (!op || depth > MAX_DEPTH) return n;
    if (op->code == BIR_AND) {
        int64_t a = mask_bound(g, op->operands[0], axis, depth + 1), b = mask_bound(g, op->operands[1], axis, depth + 1);
        return a < b ? a : b;
    }
    if (op->code == BIR_BROADCAST && vtype(g, op->operands[0]).rank == 2) {
        if (vtype(g, op->operands[0]).shape[axis] == 1) return n; /* the same along axis */
        return mask_bound(g, op->operands[0], axis, depth + 1);
    }
    int64_t b = term_bound(g, m, axis);
    return b < 0 ? n : b;
}

/* The leading rows and columns of pointer block p (rank 2) that mask m, or
 * none (BIR_NONE), lets a memory op reach. */
static void mask_reach(Gen *g, int p, int m, int32_t w[2]) {
    for (int d = 0; d < 2; d++) w[d] = (int32_t)(m == BIR_NONE ? vtype(g, p).shape[d] : mask_bound(g, m, d, 0));
}

/* ------------------------------------------------------- zeros: the k-steps */

/* The first index along axis of block v (rank 2) from which every element
 * is +0 (its length where none is known). */
static int64_t zero_from(Gen *g, int v, int axis, int depth) {
    BlkType t = vtype(g, v);
    int64_t n = t.shape[axis];
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > MAX_DEPTH) return n;
    switch (op->code) {
    case BIR_SPLAT: return nvptx_plus_zero(g, v) ? 0 : n;
    case BIR_TRANS: return zero_from(g, op->operands[0], 1 - axis, depth + 1);
    case BIR_CONVERT: { /* +0 converts to +0 between numbers */
        DType from = vtype(g, op->operands[0]).dtype;
        return dtype_is_int(from) || dtype_holds_float(from) ? zero_from(g, op->operands[0], axis, depth + 1) : n;
    }
    case BIR_LOAD: /* masked off: other, all +0 */
        if (op->operands[1] == BIR_NONE || op->operands[2] == BIR_NONE || !nvptx_plus_zero(g, op->operands[2])) return n;
        return mask_bound(g, op->operands[1], axis, 0);
    default: return n;
    }
}

/* ---------------------------------------------- live columns: the result */

typedef struct {
    Gen *g;
    int32_t (*live)[2]; /* per value of rank 2: leading rows and columns some use may observe */
    bool changed;
} Liveness;

static void raise_live(Liveness *L, int v, const int32_t want[2]) {
    if (v < 0 || vtype(L->g, v).rank != 2) return;
    for (int d = 0; d < 2; d++) {
        int32_t w = want[d] < vtype(L->g, v).shape[d] ? want[d] : vtype(L->g, v).shape[d];
        if (w > L->live[v][d]) L->live[v][d] = w, L->changed = true;
    }
}

static void raise_all(Liveness *L, int v) {
    if (v >= 0 && vtype(L->g, v).rank == 2) raise_live(L, v, vtype(L->g, v).shape);
}

/* Every value a region's ops use, all of it (a region this analysis does not follow). */
static void all_live_in(Liveness *L, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->noperands; k++) raise_all(L, op->operands[k]);
        for (int r = 0; r < op->nregions; r++) all_live_in(L, op->regions[r]);
    }
}

static void walk(Liveness *L, const BirBlock *b);

/* The demand an op's result has, passed to its operands. */
static void uses(Liveness *L, const BirOp *op) {
    Gen *g = L->g;
    int r = op->nresults ? op->results[0] : -1;
    const int32_t none[2] = {0, 0};
    const int32_t *want = r >= 0 && vtype(g, r).rank == 2 ? L->live[r] : none;
    const BirOpInfo *info = bir_op_info(op->code);
    switch (op->code) {
    case BIR_TRANS: raise_live(L, op->operands[0], (int32_t[2]){want[1], want[0]}); return;
    case BIR_BROADCAST: {
        int x = op->operands[0];
        if (vtype(g, x).rank != 2) return;
        int32_t w[2];
        for (int d = 0; d < 2; d++) w[d] = vtype(g, x).shape[d] == 1 ? (want[d] > 0) : want[d];
        raise_live(L, x, w);
        return;
    }
    case BIR_DOT: { /* a: the result's rows, all of k; b: all of k, the result's columns; c: as the result */
        BlkType a = vtype(g, op->operands[0]), b = vtype(g, op->operands[1]);
        raise_live(L, op->operands[0], (int32_t[2]){want[0], a.shape[1]});
        raise_live(L, op->operands[1], (int32_t[2]){b.shape[0], want[1]});
        if (op->operands[2] >= 0) raise_live(L, op->operands[2], want);
        return;
    }
    case BIR_STORE: case BIR_ATOMIC_ADD: case BIR_ATOMIC_MAX: case BIR_ATOMIC_MIN: case BIR_ATOMIC_AND:
    case BIR_ATOMIC_OR: case BIR_ATOMIC_XOR: case BIR_ATOMIC_XCHG: {
        /* only what the mask lets through reaches memory */
        if (vtype(g, op->operands[0]).rank != 2) return;
        int32_t w[2];
        mask_reach(g, op->operands[0], op->operands[info->mask_at], w);
        for (int k = 0; k < op->noperands; k++) raise_live(L, op->operands[k], w);
        return;
    }
    case BIR_LOAD: { /* its addresses and mask wherever the mask may let it read (observed or not: a
                        read must not fault), its other as far as the result is observed */
        if (vtype(g, op->operands[0]).rank != 2) return;
        int32_t w[2];
        mask_reach(g, op->operands[0], op->operands[1], w);
        raise_live(L, op->operands[0], w);
        raise_live(L, op->operands[1], w);
        raise_live(L, op->operands[2], want);
        return;
    }
    case BIR_FOR: { /* carried value i: its result, body argument i + 1, the yield's operand i and its init */
        const BirBlock *body = op->regions[0];
        const BirOp *y = bir_block_terminator(body);
        for (int i = 0; i < op->nresults; i++) {
            int res = op->results[i], arg = body->args[i + 1];
            if (vtype(g, res).rank != 2) continue;
            int32_t w[2] = {L->live[res][0], L->live[res][1]};
            for (int d = 0; d < 2; d++)
                if (L->live[arg][d] > w[d]) w[d] = L->live[arg][d];
            raise_live(L, op->operands[3 + i], w);
            if (y && y->code == BIR_YIELD) raise_live(L, y->operands[i], w);
            else raise_all(L, op->operands[3 + i]);
        }
        walk(L, body);
        return;
    }
    case BIR_IF: /* result i: each branch's yield operand i */
        for (int k = 0; k < 2; k++) {
            const BirOp *y = bir_block_terminator(op->regions[k]);
            for (int i = 0; y && y->code == BIR_YIELD && i < op->nresults; i++)
                if (vtype(g, op->results[i]).rank == 2) raise_live(L, y->operands[i], L->live[op->results[i]]);
            walk(L, op->regions[k]);
        }
        return;
    case BIR_YIELD: return; /* its parent's */
    default:
        if (bir_is_elementwise(op->code) && op->nresults == 1) {
            for (int k = 0; k < op->noperands; k++) {
                int x = op->operands[k];
                if (x < 0 || vtype(g, x).rank != 2) continue;
                if (vtype(g, x).shape[0] == vtype(g, r).shape[0] && vtype(g, x).shape[1] == vtype(g, r).shape[1])
                    raise_live(L, x, want);
                else raise_all(L, x);
            }
            return;
        }
        /* anything else observes all of every operand */
        for (int k = 0; k < op->noperands; k++) raise_all(L, op->operands[k]);
        for (int k = 0; k < op->nregions; k++) all_live_in(L, op->regions[k]);
    }
}

/* Backwards through a region: a value's uses come after it. */
static void walk(Liveness *L, const BirBlock *b) {
    for (int i = b->ops.len - 1; i >= 0; i--) uses(L, b->ops.items[i]);
}

/* ------------------------------------------------------------ the extents */

void nvptx_dot_extents(Gen *g, NvptxDotSchedule *dots, int n) {
    Liveness L = {g, NULL, true};
    bool live_known = false;
    for (int i = 0; i < n; i++) {
        NvptxDotSchedule *d = &dots[i];
        BlkType a = vtype(g, d->op->operands[0]), c = vtype(g, d->op->results[0]);
        d->k_used = a.shape[1];
        d->n_used = c.shape[1];
        bool mma = d->path == NVPTX_DOT_MMA && !dtype_is_int(a.dtype); /* dot.c's gen_mma: k only */
        if ((d->path != NVPTX_DOT_WGMMA && !mma) || d->promote_every) continue;
        /* k: whole k-steps of zeros in both operands */
        int step = dot_k_step(a.dtype);
        int64_t za = zero_from(g, d->op->operands[0], 1, 0), zb = zero_from(g, d->op->operands[1], 0, 0);
        int64_t k = nvptx_round_up(za > zb ? za : zb, step);
        if (k < step) k = step;
        if (k < d->k_used) d->k_used = (int)k;
        if (mma) continue; /* its n-tiles' columns depend on the warp: all issued */
        /* n: the result's live columns, rounded up as below */
        if (!L.live) {
            L.live = arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof *L.live);
            memset(L.live, 0, (size_t)(g->f->nvalues + 1) * sizeof *L.live);
            for (int rounds = 0; L.changed && rounds < MAX_ROUNDS; rounds++) {
                L.changed = false;
                walk(&L, g->f->body);
            }
            live_known = !L.changed; /* else (a long chain of carried values) every column counts */
        }
        /* in whole swizzle atoms of b: an N-major b's are a slab wide along N (64 f16 elements in
           128-byte slabs; PTX's wgmma reads MN-major operands atom by atom); a K-major b's are 8
           rows, taken in steps of 16, an N that wgmma has for every operand type */
        Staged st = nvptx_staging(g, d->op->operands[1], NULL);
        int unit = st.cd == 1 && st.slab > 16 ? st.slab : 16;
        int64_t cols = nvptx_round_up(L.live[d->op->results[0]][1] > 0 ? L.live[d->op->results[0]][1] : 1, unit);
        if (live_known && cols < d->n_used) d->n_used = (int)cols;
    }
}
