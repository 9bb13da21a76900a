/* layout.c: facts the NVPTX backend needs before it emits code.
 *
 * Axis analysis: for each value, along its fastest dimension, how long its
 * runs of consecutive integers are (contiguity), what divides the first
 * element of each run (divisibility; bytes for pointers), and how long its
 * runs of equal elements are (constancy). From arange, constants and the
 * @align / @multiple_of attributes these prove when a block access is a run
 * of aligned, contiguous elements under one mask bit: a vector access.
 *
 * Layouts: one blocked layout per block shape, so elementwise ops never
 * move data between threads. The fastest dimension gets as many elements
 * per thread as the widest vector access on that shape allows (16 bytes),
 * without making the CTA tile larger than the shape. */
#include <string.h>

#include "gen.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The largest power of two dividing v (0 is divisible by everything). */
static int64_t pow2_div(int64_t v) {
    if (v == 0) return AXIS_MAX_DIV;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return (int64_t)min64((int64_t)(u & (0 - u)), AXIS_MAX_DIV);
}

static int64_t dim_size(BlkType t, int d) { return t.rank ? t.shape[d] : 1; }
static int dims_of(BlkType t) { return t.rank ? t.rank : 1; }

typedef struct {
    const BirFunction *f;
    AxisInfo *ax;
} Analysis;

/* The same facts along every dimension. */
static AxisInfo uniform(int64_t contig, int64_t div, int64_t constancy, bool one) {
    AxisInfo x = {.one = one};
    for (int d = 0; d < BLK_MAX_RANK; d++) x.contig[d] = contig, x.div[d] = div, x.constancy[d] = constancy;
    return x;
}

static AxisInfo unknown(void) { return uniform(1, 1, 1, false); }

static void set(Analysis *A, int v, AxisInfo info) {
    BlkType t = A->f->values[v].type;
    for (int d = 0; d < BLK_MAX_RANK; d++) {
        int64_t n = d < dims_of(t) ? dim_size(t, d) : 1;
        info.contig[d] = min64(max64(info.contig[d], 1), n);
        info.constancy[d] = min64(max64(info.constancy[d], 1), n);
        info.div[d] = max64(min64(info.div[d], AXIS_MAX_DIV), 1);
    }
    A->ax[v] = info;
}

/* Along each dimension, from the operands' facts along it. */
static AxisInfo add_facts(AxisInfo x, AxisInfo y, int64_t scale, bool integer) {
    AxisInfo o = {.one = false};
    for (int d = 0; d < BLK_MAX_RANK; d++) {
        o.contig[d] = max64(min64(x.contig[d], y.constancy[d]), min64(y.contig[d], x.constancy[d]));
        o.div[d] = min64(x.div[d], y.div[d] * scale);
        o.constancy[d] = min64(x.constancy[d], y.constancy[d]);
        if (!integer) o.contig[d] = o.div[d] = 1;
    }
    return o;
}

/* What divides every element of x along d: a run's first element's
 * divisor holds only for it where x runs. */
static int64_t each_div(AxisInfo x, int d) { return x.contig[d] > 1 ? 1 : x.div[d]; }

static AxisInfo equal_runs(AxisInfo x, AxisInfo y) {
    AxisInfo o = unknown();
    for (int d = 0; d < BLK_MAX_RANK; d++) o.constancy[d] = min64(x.constancy[d], y.constancy[d]);
    return o;
}

static void analyze_block(Analysis *A, const BirBlock *b);

static void analyze_op(Analysis *A, const BirOp *op) {
    const BirFunction *f = A->f;
    const int *a = op->operands;
    AxisInfo x = op->noperands > 0 && a[0] >= 0 ? A->ax[a[0]] : unknown();
    AxisInfo y = op->noperands > 1 && a[1] >= 0 ? A->ax[a[1]] : unknown();
    int r = op->nresults == 1 ? op->results[0] : -1;
    BlkType rt = r >= 0 ? f->values[r].type : type_scalar(DT_VOID);
    bool integer = dtype_is_int(rt.dtype) || rt.dtype == DT_PTR;
    switch (op->code) {
    case BIR_CONST:
        set(A, r, uniform(1, dtype_is_int(rt.dtype) ? pow2_div(op->value.i) : 1, 1,
                          dtype_is_int(rt.dtype) && op->value.i == 1));
        return;
    case BIR_ARANGE: {
        AxisInfo o = unknown();
        o.contig[0] = rt.shape[0], o.div[0] = pow2_div(op->attr);
        set(A, r, o);
        return;
    }
    case BIR_SPLAT: {
        AxisInfo o = uniform(1, x.div[0], 1, x.one);
        for (int d = 0; d < rt.rank; d++) o.constancy[d] = rt.shape[d];
        set(A, r, o);
        return;
    }
    case BIR_EXPAND_DIMS: {
        /* the new dimension has size 1: each element its own run, divisible
         * by what divides every element of x */
        BlkType xt = f->values[a[0]].type;
        int64_t each = AXIS_MAX_DIV;
        for (int d = 0; d < dims_of(xt); d++) each = min64(each, each_div(x, d));
        AxisInfo o = x;
        for (int d = 0; d < rt.rank; d++) {
            int from = d < op->attr ? d : d - 1;
            if (d == op->attr) o.contig[d] = 1, o.div[d] = each, o.constancy[d] = 1;
            else o.contig[d] = x.contig[from], o.div[d] = x.div[from], o.constancy[d] = x.constancy[from];
        }
        set(A, r, o);
        return;
    }
    case BIR_BROADCAST: {
        BlkType xt = f->values[a[0]].type;
        AxisInfo o = x;
        for (int d = 0; d < rt.rank; d++)
            if (dim_size(xt, d) == 1 && rt.shape[d] > 1) o.contig[d] = 1, o.constancy[d] = rt.shape[d];
        set(A, r, o);
        return;
    }
    case BIR_TRANS: { /* a view: the facts along each dimension move with it */
        AxisInfo o = x;
        o.contig[0] = x.contig[1], o.div[0] = x.div[1], o.constancy[0] = x.constancy[1];
        o.contig[1] = x.contig[0], o.div[1] = x.div[0], o.constancy[1] = x.constancy[0];
        set(A, r, o);
        return;
    }
    case BIR_CONVERT:
        set(A, r, dtype_is_int(rt.dtype) && dtype_is_int(f->values[a[0]].type.dtype) ? x : unknown());
        return;
    case BIR_PTR_CAST: { /* runs count elements: of another size, none are known */
        AxisInfo o = x;
        if (dtype_bytes(rt.elem) != dtype_bytes(f->values[a[0]].type.elem))
            for (int d = 0; d < BLK_MAX_RANK; d++) o.contig[d] = 1;
        set(A, r, o);
        return;
    }
    case BIR_ADD: case BIR_PTR_ADD:
        set(A, r, add_facts(x, y, op->code == BIR_PTR_ADD ? dtype_bytes(rt.elem) : 1, integer));
        return;
    case BIR_SUB: {
        AxisInfo o = add_facts(x, y, 1, integer);
        for (int d = 0; d < BLK_MAX_RANK; d++) o.contig[d] = integer ? min64(x.contig[d], y.constancy[d]) : 1;
        set(A, r, o);
        return;
    }
    case BIR_MUL: {
        if (x.one || y.one) { /* times one: the other operand */
            set(A, r, x.one ? y : x);
            return;
        }
        /* the product's elements are each their own run, divisible by what
         * divides every element of each operand */
        AxisInfo o = equal_runs(x, y);
        for (int d = 0; dtype_is_int(rt.dtype) && d < BLK_MAX_RANK; d++) o.div[d] = each_div(x, d) * each_div(y, d);
        set(A, r, o);
        return;
    }
    case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: case BIR_EQ: case BIR_NE: {
        /* Equal operands-runs give equal results; and `offs < n` is constant
         * over aligned runs of offs no longer than what divides n. */
        AxisInfo o = equal_runs(x, y);
        bool ordered = op->code != BIR_EQ && op->code != BIR_NE;
        for (int d = 0; ordered && d < BLK_MAX_RANK; d++) {
            int64_t k = o.constancy[d];
            if (y.constancy[d] >= x.contig[d]) k = max64(k, min64(x.contig[d], min64(x.div[d], y.div[d])));
            if (x.constancy[d] >= y.contig[d]) k = max64(k, min64(y.contig[d], min64(y.div[d], x.div[d])));
            o.constancy[d] = k;
        }
        set(A, r, o);
        return;
    }
    case BIR_MIN: case BIR_MAX: { /* each element is one operand's: divisible by what divides both
                                    * (a split's end, min(start + len, K), of multiples of 16) */
        AxisInfo o = equal_runs(x, y);
        for (int d = 0; integer && d < BLK_MAX_RANK; d++) o.div[d] = min64(each_div(x, d), each_div(y, d));
        set(A, r, o);
        return;
    }
    case BIR_AND: case BIR_OR: case BIR_XOR: case BIR_UMULHI: case BIR_POW:
        set(A, r, equal_runs(x, y));
        return;
    case BIR_SELECT:
        set(A, r, equal_runs(x, equal_runs(y, A->ax[a[2]])));
        return;
    case BIR_FOR: {
        /* the loop variable: start + k * step; a carried value: what holds of
         * its start and of every value the body yields (a pointer advanced
         * by a multiple of 16 stays aligned), found by iterating to a fixed
         * point from the start */
        const BirBlock *body = op->regions[0];
        set(A, body->args[0], uniform(1, min64(A->ax[a[0]].div[0], A->ax[a[2]].div[0]), 1, false));
        for (int i = 1; i < body->nargs; i++) set(A, body->args[i], A->ax[a[2 + i]]);
        bool settled = false;
        for (int round = 0; round < 8 && !settled; round++) {
            analyze_block(A, body);
            const BirOp *yield = bir_block_terminator(body);
            bool changed = false;
            for (int i = 1; yield && i < body->nargs && i - 1 < yield->noperands; i++) {
                AxisInfo old = A->ax[body->args[i]], next = A->ax[yield->operands[i - 1]], join = old;
                join.one = old.one && next.one;
                bool differs = join.one != old.one;
                for (int d = 0; d < BLK_MAX_RANK; d++) {
                    join.contig[d] = min64(old.contig[d], next.contig[d]);
                    join.div[d] = min64(old.div[d], next.div[d]);
                    join.constancy[d] = min64(old.constancy[d], next.constancy[d]);
                    differs |= join.contig[d] != old.contig[d] || join.div[d] != old.div[d] ||
                               join.constancy[d] != old.constancy[d];
                }
                if (differs) {
                    set(A, body->args[i], join);
                    changed = true;
                }
            }
            settled = !changed;
        }
        if (!settled) { /* no fixed point in 8 rounds: nothing is known of the carried values */
            for (int i = 1; i < body->nargs; i++) set(A, body->args[i], unknown());
            analyze_block(A, body);
        }
        for (int i = 0; i < op->nresults; i++) set(A, op->results[i], A->ax[body->args[1 + i]]);
        return;
    }
    default:
        for (int reg = 0; reg < op->nregions; reg++) {
            const BirBlock *b = op->regions[reg];
            for (int i = 0; i < b->nargs; i++) set(A, b->args[i], unknown());
            analyze_block(A, b);
        }
        for (int i = 0; i < op->nresults; i++) set(A, op->results[i], unknown());
        return;
    }
}

static void analyze_block(Analysis *A, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) analyze_op(A, b->ops.items[i]);
}

/* ------------------------------------------------------------- layouts */

static int log2i(int64_t v) {
    int n = 0;
    while ((INT64_C(1) << n) < v) n++;
    return n;
}

/* A basis along d of value v (v a power of two), or zero when the shape is
 * smaller: the layout wraps and those threads or registers hold copies. */
static void set_basis(int32_t *basis, const Layout *l, int d, int64_t v) {
    for (int k = 0; k < l->rank; k++) basis[k] = 0;
    if (v < l->shape[d]) basis[d] = (int32_t)v;
}

static void add_reg_bit(Layout *l, int d, int64_t v) {
    set_basis(l->reg[l->nreg_bits++], l, d, v);
    l->nregs = 1 << l->nreg_bits;
}

static Layout empty_layout(int rank, const int32_t *shape, int num_warps) {
    Layout l = {0};
    l.rank = rank;
    for (int d = 0; d < rank; d++) l.shape[d] = shape[d];
    l.nregs = 1;
    l.nwarp_bits = log2i(num_warps);
    return l;
}

Layout nvptx_layout_blocked(BlkType t, int num_warps, int vec, int fast) {
    Layout l = empty_layout(t.rank, t.shape, num_warps);
    if (t.rank < 2) fast = 0;
    /* the dimensions, fastest first (Triton's order) */
    int order[BLK_MAX_RANK] = {fast, 1 - fast}, slow = t.rank == 2 ? 1 - fast : fast;
    int32_t spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], reps[BLK_MAX_RANK];
    for (int d = 0; d < t.rank; d++) spt[d] = tpw[d] = wpc[d] = 1;
    /* vec elements per thread along the fastest dimension, but no wider
     * than keeps all threads busy on distinct elements */
    int64_t per_thread = t.rank == 1 ? t.shape[0] / (32 * num_warps) : t.shape[fast];
    spt[fast] = (int32_t)max64(1, min64(vec, per_thread));
    if (t.rank == 1) {
        tpw[0] = 32;
        wpc[0] = num_warps;
    } else {
        /* lanes, then warps, fill the fastest dimension first */
        tpw[fast] = (int32_t)min64(32, max64(1, t.shape[fast] / spt[fast]));
        tpw[slow] = 32 / tpw[fast];
        wpc[fast] = (int32_t)min64(num_warps, max64(1, t.shape[fast] / ((int64_t)spt[fast] * tpw[fast])));
        wpc[slow] = num_warps / wpc[fast];
    }
    for (int d = 0; d < t.rank; d++) reps[d] = (int32_t)max64(1, t.shape[d] / ((int64_t)spt[d] * tpw[d] * wpc[d]));
    /* registers: the elements along the fastest dimension, then (rank 2)
     * along the other, then the repetitions of the CTA tile, fastest first */
    for (int i = 0; i < t.rank; i++)
        for (int b = 0; (1 << b) < spt[order[i]]; b++) add_reg_bit(&l, order[i], INT64_C(1) << b);
    for (int i = 0; i < t.rank; i++) {
        int d = order[i];
        for (int b = 0; (1 << b) < reps[d]; b++) add_reg_bit(&l, d, (int64_t)spt[d] * tpw[d] * wpc[d] << b);
    }
    int bit = 0;
    for (int i = 0; i < t.rank; i++)
        for (int b = 0; (1 << b) < tpw[order[i]]; b++) set_basis(l.lane[bit++], &l, order[i], (int64_t)spt[order[i]] << b);
    bit = 0;
    for (int i = 0; i < t.rank; i++) {
        int d = order[i];
        for (int b = 0; (1 << b) < wpc[d]; b++) set_basis(l.warp[bit++], &l, d, (int64_t)spt[d] * tpw[d] << b);
    }
    return l;
}

/* The PTX ISA's fragments of mma.m16n8k16 (f32 accumulator): lane t holds
 * (t/4, 2(t%4) + {0,1}) and (t/4 + 8, the same columns) of each 16 x 8 tile. */
Layout nvptx_layout_mma(int32_t M, int32_t N, int num_warps, int wm) {
    Layout l = empty_layout(2, (int32_t[]){M, N}, num_warps);
    int wn = num_warps / wm;
    add_reg_bit(&l, 1, 1);
    add_reg_bit(&l, 0, 8);
    for (int64_t v = 8 * wn; v < N; v *= 2) add_reg_bit(&l, 1, v);
    for (int64_t v = 16 * wm; v < M; v *= 2) add_reg_bit(&l, 0, v);
    set_basis(l.lane[0], &l, 1, 2);
    set_basis(l.lane[1], &l, 1, 4);
    for (int b = 0; b < 3; b++) set_basis(l.lane[2 + b], &l, 0, 1 << b);
    int bit = 0;
    for (int64_t v = 16; v < 16 * wm; v *= 2) set_basis(l.warp[bit++], &l, 0, v);
    for (int64_t v = 8; v < 8 * wn; v *= 2) set_basis(l.warp[bit++], &l, 1, v);
    return l;
}

/* Operand a [M, K] of 16-bit elements: a0..a3 of each 16 x 16 tile are
 * (t/4, 2(t%4) + {0,1}), (t/4 + 8, ...), (t/4, 8 + ...), (t/4 + 8, 8 + ...).
 * Operand b [K, N]: b0, b1 of each 16 x 8 tile are (2(t%4) + {0,1}, t/4)
 * and (8 + ..., t/4). 8-bit elements (k-steps of 32): the same with 4
 * elements a register, (t/4, 4(t%4) + {0..3}) and 16 further along k. The
 * warps tile M and N as the accumulator's; warps along the other operand's
 * dimension hold copies. */
Layout nvptx_layout_dot_operand(const Layout *acc, int which, int32_t K, int elem_bytes) {
    int32_t M = acc->shape[0], N = acc->shape[1];
    int per_reg = 4 / elem_bytes; /* elements of one 32-bit operand register, along k */
    int kd = which == 0 ? 1 : 0, od = which == 0 ? 0 : 1; /* k's and the other dimension */
    Layout l = empty_layout(2, which == 0 ? (int32_t[]){M, K} : (int32_t[]){K, N}, 1 << acc->nwarp_bits);
    l.nwarp_bits = acc->nwarp_bits;
    for (int v = 1; v < per_reg; v *= 2) add_reg_bit(&l, kd, v);
    if (which == 0) add_reg_bit(&l, od, 8);
    add_reg_bit(&l, kd, 4 * per_reg);
    for (int64_t v = 8 * per_reg; v < K; v *= 2) add_reg_bit(&l, kd, v);
    /* the accumulator's repetitions along this operand's other dimension */
    for (int b = 0; b < acc->nreg_bits; b++) {
        int32_t v = acc->reg[b][od];
        if (v >= (which == 0 ? 16 : 8)) add_reg_bit(&l, od, v);
    }
    set_basis(l.lane[0], &l, kd, per_reg);
    set_basis(l.lane[1], &l, kd, 2 * per_reg);
    for (int b = 0; b < 3; b++) set_basis(l.lane[2 + b], &l, od, 1 << b);
    for (int b = 0; b < acc->nwarp_bits; b++) set_basis(l.warp[b], &l, od, acc->warp[b][od] ? acc->warp[b][od] : l.shape[od]);
    return l;
}

const char *nvptx_wgmma_shape_refusal(int32_t M, int32_t N, int32_t K, DType d, int num_warps) {
    static _Thread_local char why[96]; /* compiles run on several threads (the runtime's) */
    if (d != DT_F16 && d != DT_BF16 && dtype_bits(d) != 8) return "its operands are not f16, bf16, fp8 or 8-bit integers";
    if (num_warps % 4) {
        snprintf(why, sizeof why, "its %d warps are not whole warpgroups of 4", num_warps);
        return why;
    }
    if (M % (16 * num_warps)) {
        snprintf(why, sizeof why, "its %d rows do not give each of %d warpgroups 64-row tiles", M, num_warps / 4);
        return why;
    }
    if (N % 8 || (N > 256 && N % 256)) {
        snprintf(why, sizeof why, "its %d columns are not a multiple of 8 up to 256, or of 256", N);
        return why;
    }
    if (K % dot_k_step(d)) {
        snprintf(why, sizeof why, "its k is not a multiple of %d", dot_k_step(d));
        return why;
    }
    return NULL;
}

static void drop_dim(int32_t *basis, int axis, int rank) {
    for (int k = axis; k + 1 < rank; k++) basis[k] = basis[k + 1];
    basis[rank - 1] = 0;
}

Layout nvptx_layout_slice(const Layout *l, int axis) {
    Layout s = *l;
    s.rank = l->rank - 1;
    for (int k = axis; k < s.rank; k++) s.shape[k] = l->shape[k + 1];
    s.shape[s.rank] = 0;
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) drop_dim(s.lane[b], axis, l->rank);
    for (int b = 0; b < l->nwarp_bits; b++) drop_dim(s.warp[b], axis, l->rank);
    s.nreg_bits = 0;
    for (int b = 0; b < l->nreg_bits; b++) {
        if (l->reg[b][axis]) continue; /* a register bit along the axis: gone */
        for (int k = 0; k < BLK_MAX_RANK; k++) s.reg[s.nreg_bits][k] = l->reg[b][k];
        drop_dim(s.reg[s.nreg_bits++], axis, l->rank);
    }
    s.nregs = 1 << s.nreg_bits;
    return s;
}

static void insert_dim(int32_t *basis, int axis, int rank) {
    for (int k = rank; k > axis; k--) basis[k] = basis[k - 1];
    basis[axis] = 0;
}

Layout nvptx_layout_expand(const Layout *l, int axis) {
    Layout e = *l;
    e.rank = l->rank + 1;
    for (int k = l->rank; k > axis; k--) e.shape[k] = l->shape[k - 1];
    e.shape[axis] = 1;
    for (int b = 0; b < l->nreg_bits; b++) insert_dim(e.reg[b], axis, l->rank);
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) insert_dim(e.lane[b], axis, l->rank);
    for (int b = 0; b < l->nwarp_bits; b++) insert_dim(e.warp[b], axis, l->rank);
    return e;
}

static void swap2(int32_t *basis) {
    int32_t t = basis[0];
    basis[0] = basis[1], basis[1] = t;
}

Layout nvptx_layout_trans(const Layout *l) {
    Layout t = *l;
    swap2(t.shape);
    for (int b = 0; b < l->nreg_bits; b++) swap2(t.reg[b]);
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) swap2(t.lane[b]);
    for (int b = 0; b < l->nwarp_bits; b++) swap2(t.warp[b]);
    return t;
}

bool nvptx_layout_equal(const Layout *a, const Layout *b) {
    if (a->rank != b->rank || a->nreg_bits != b->nreg_bits || a->nwarp_bits != b->nwarp_bits) return false;
    for (int d = 0; d < a->rank; d++) {
        if (a->shape[d] != b->shape[d]) return false;
        for (int i = 0; i < a->nreg_bits; i++) if (a->reg[i][d] != b->reg[i][d]) return false;
        for (int i = 0; i < LAYOUT_LANE_BITS; i++) if (a->lane[i][d] != b->lane[i][d]) return false;
        for (int i = 0; i < a->nwarp_bits; i++) if (a->warp[i][d] != b->warp[i][d]) return false;
    }
    return true;
}

int32_t nvptx_layout_coord(const Layout *l, int d, int r, int warp, int lane) {
    int32_t c = 0;
    for (int b = 0; b < l->nreg_bits; b++) if (r >> b & 1) c |= l->reg[b][d];
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) if (lane >> b & 1) c |= l->lane[b][d];
    for (int b = 0; b < l->nwarp_bits; b++) if (warp >> b & 1) c |= l->warp[b][d];
    return c;
}

int nvptx_layout_vec_dim(const Layout *l) {
    for (int d = 0; l->nreg_bits && d < l->rank; d++) {
        bool unit = l->reg[0][d] == 1;
        for (int k = 0; k < l->rank; k++) unit &= k == d || l->reg[0][k] == 0;
        if (unit) return d;
    }
    return l->rank ? l->rank - 1 : 0;
}

int nvptx_layout_vec(const Layout *l) {
    int along = nvptx_layout_vec_dim(l), n = 0;
    while (n < l->nreg_bits && l->reg[n][along] == (1 << n)) {
        bool only_along = true;
        for (int d = 0; d < l->rank; d++) only_along &= d == along || l->reg[n][d] == 0;
        if (!only_along) break;
        n++;
    }
    return 1 << n;
}

static bool is_zero(const int32_t *basis, int rank) {
    for (int d = 0; d < rank; d++) if (basis[d]) return false;
    return true;
}

int32_t nvptx_layout_copy_regs(const Layout *l) {
    int32_t mask = 0;
    for (int b = 0; b < l->nreg_bits; b++) if (is_zero(l->reg[b], l->rank)) mask |= 1 << b;
    return mask;
}

int nvptx_layout_partials(const Layout *l, int axis) {
    int32_t along = nvptx_layout_copy_regs(l);
    for (int b = 0; b < l->nreg_bits; b++)
        if (l->reg[b][axis]) along |= 1 << b;
    return l->nregs >> __builtin_popcount((unsigned)along);
}

int nvptx_layout_warps_along(const Layout *l, int d) {
    int n = 0;
    for (int b = 0; b < l->nwarp_bits; b++) n += l->warp[b][d] != 0;
    return 1 << n;
}

static void project(const int32_t *use_basis, Projection proj, int rank, int32_t *out) {
    for (int d = 0; d < rank; d++) out[d] = proj.from[d] >= 0 ? use_basis[proj.from[d]] : 0;
}

static bool same_basis(const int32_t *a, const int32_t *b, int rank) {
    for (int d = 0; d < rank; d++) if (a[d] != b[d]) return false;
    return true;
}

bool nvptx_layout_local_map(const Layout *from, const Layout *to, Projection proj, int32_t *map) {
    if (from->nwarp_bits != to->nwarp_bits) return false;
    int32_t p[BLK_MAX_RANK];
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) {
        project(to->lane[b], proj, from->rank, p);
        if (!same_basis(p, from->lane[b], from->rank)) return false;
    }
    for (int b = 0; b < to->nwarp_bits; b++) {
        project(to->warp[b], proj, from->rank, p);
        if (!same_basis(p, from->warp[b], from->rank)) return false;
    }
    int32_t bit_of[LAYOUT_MAX_REG_BITS]; /* the `from` register bit for each `to` bit, or -1 */
    for (int b = 0; b < to->nreg_bits; b++) {
        project(to->reg[b], proj, from->rank, p);
        bit_of[b] = -1;
        if (is_zero(p, from->rank)) continue;
        for (int k = 0; k < from->nreg_bits && bit_of[b] < 0; k++)
            if (same_basis(p, from->reg[k], from->rank)) bit_of[b] = k;
        if (bit_of[b] < 0) return false;
    }
    if (map)
        for (int r = 0; r < to->nregs; r++) {
            int32_t m = 0;
            for (int b = 0; b < to->nreg_bits; b++)
                if (r >> b & 1 && bit_of[b] >= 0) m |= 1 << bit_of[b];
            map[r] = m;
        }
    return true;
}

/* ------------------------------------------------------- layout choice */

typedef struct {
    BlkType shape;
    int vec[BLK_MAX_RANK]; /* the widest access to blocks of this shape along each dimension */
} ShapeVec;

enum { MAX_SHAPES = 64, MAX_DOT_LAYOUTS = 16 };

typedef struct {
    const BirFunction *f;
    const AxisInfo *ax;
    KernelPlan *p;
    ShapeVec sv[MAX_SHAPES];
    int nshapes;
    int64_t max_numel, max_dot;
    bool chained;                    /* more than one dot: warps along M, as far as its 16-row tiles go */
    Layout dots[MAX_DOT_LAYOUTS];    /* the accumulator layouts, for broadcasts */
    int ndots;
    bool changed;
    int8_t *dim_of;  /* per value: the dimension its default layout runs along, where not its shape's (-1) */
    const BirOp **loop_of; /* per loop-carried block argument: its loop */
    Layout *wanted;  /* per value: the layout a row (or column) load's consumers compute in, if any */
    bool *has_wanted;
    bool new_wants;  /* a want recorded in this pass: the loads take it in the next */
    Arena *arena;
    struct BlockedMemo *blocked; /* the blocked layouts made so far: value_layout asks again and again */
} Chooser;

/* One blocked layout, by what makes it (the chooser's warps are fixed). */
typedef struct BlockedMemo {
    BlkType t;
    int vec, dim;
    Layout l;
    struct BlockedMemo *next;
} BlockedMemo;

static bool is_memory(BirOpcode c) { return bir_op_info(c)->kind == BIR_KIND_MEMORY; }

static int mask_operand(const BirOp *op) {
    int at = bir_op_info(op->code)->mask_at;
    return at >= 0 && at < op->noperands ? op->operands[at] : BIR_NONE;
}

/* The widest access the facts allow along dimension d of the block:
 * contiguous, aligned, one mask bit, at most 16 bytes. Atomics are per
 * element. */
static int access_width(const AxisInfo *ax, const BirFunction *f, const BirOp *op, int d) {
    int p = op->operands[0];
    BlkType pt = f->values[p].type;
    if (pt.rank == 0 || (op->code != BIR_LOAD && op->code != BIR_STORE)) return 1;
    int es = dtype_bytes(pt.elem);
    int64_t w = min64(ax[p].contig[d], min64(ax[p].div[d] / es, 16 / es));
    int m = mask_operand(op);
    if (m != BIR_NONE) w = min64(w, ax[m].constancy[d]);
    int64_t p2 = 1;
    while (p2 * 2 <= w) p2 *= 2;
    if (p2 * es < 4) p2 = 1; /* below a word, one element per access (memory.c's sub-word path) */
    return (int)max64(p2, 1);
}

static void collect_shapes(Chooser *C, const BirBlock *b) {
    const BirFunction *f = C->f;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->nresults; k++) {
            BlkType t = f->values[op->results[k]].type;
            if (t.rank) C->max_numel = max64(C->max_numel, type_numel(t));
        }
        if (op->code == BIR_DOT) {
            C->max_dot = max64(C->max_dot, type_numel(f->values[op->results[0]].type));
            C->p->ndots++;
        }
        if (is_memory(op->code)) {
            BlkType pt = f->values[op->operands[0]].type;
            int j = 0;
            while (pt.rank && j < C->nshapes && !shape_equal(C->sv[j].shape, pt)) j++;
            if (pt.rank && j == C->nshapes && C->nshapes < MAX_SHAPES) C->sv[C->nshapes++] = (ShapeVec){pt, {1, 1, 1}};
            for (int d = 0; j < C->nshapes && d < pt.rank; d++)
                C->sv[j].vec[d] = (int)max64(C->sv[j].vec[d], access_width(C->ax, f, op, d));
        }
        if (op->code == BIR_FOR)
            for (int k = 1; k < op->regions[0]->nargs; k++) C->loop_of[op->regions[0]->args[k]] = op;
        for (int r = 0; r < op->nregions; r++) collect_shapes(C, op->regions[r]);
    }
}

static const ShapeVec *shape_vec(Chooser *C, BlkType t) {
    for (int s = 0; s < C->nshapes; s++)
        if (shape_equal(C->sv[s].shape, t)) return &C->sv[s];
    return NULL;
}

/* The dimension blocks of shape t run along: the last, or the first where
 * accesses along it are wider (a column-major tile, B^T's [K, N]). */
static int shape_dim(Chooser *C, BlkType t) {
    const ShapeVec *sv = shape_vec(C, t);
    return t.rank == 2 && sv && sv->vec[0] > sv->vec[1] ? 0 : t.rank - 1;
}

static const Layout *blocked_along(Chooser *C, BlkType t, int dim) {
    const ShapeVec *sv = shape_vec(C, t);
    int vec = sv ? sv->vec[dim] : 1;
    for (BlockedMemo *m = C->blocked; m; m = m->next)
        if (m->vec == vec && m->dim == dim && shape_equal(m->t, t)) return &m->l;
    BlockedMemo *m = arena_alloc(C->arena, sizeof *m);
    *m = (BlockedMemo){t, vec, dim, nvptx_layout_blocked(t, C->p->num_warps, vec, dim), C->blocked};
    C->blocked = m;
    return &m->l;
}

/* The layout of block value v when no op asks anything special of it:
 * blocked along its shape's dimension, or along the dimension of the
 * accesses it feeds where those run along the other one (mark_accesses). */
static const Layout *default_layout(Chooser *C, int v) {
    BlkType t = C->f->values[v].type;
    return blocked_along(C, t, C->dim_of[v] >= 0 ? C->dim_of[v] : shape_dim(C, t));
}

static Layout value_layout(Chooser *C, int v) { return *default_layout(C, v); }

static bool is_default(Chooser *C, int v) { return nvptx_layout_equal(&C->p->layouts[v], default_layout(C, v)); }

/* Value v and the same-shaped values it is computed from, through
 * elementwise ops and loop-carried values, take blocked layouts along d. */
static void mark_along(Chooser *C, int v, int d, int depth) {
    const BirFunction *f = C->f;
    if (v < 0 || f->values[v].type.rank != 2 || C->dim_of[v] >= 0 || depth > 64) return;
    BlkType t = f->values[v].type;
    C->dim_of[v] = (int8_t)d;
    const BirOp *op = f->values[v].def;
    if (!op && C->loop_of[v]) { /* a carried value: its start and what the body yields */
        const BirOp *loop = C->loop_of[v];
        const BirBlock *body = loop->regions[0];
        const BirOp *y = bir_block_terminator(body);
        for (int i = 1; i < body->nargs; i++)
            if (body->args[i] == v) {
                mark_along(C, loop->operands[2 + i], d, depth + 1);
                if (y && i - 1 < y->noperands) mark_along(C, y->operands[i - 1], d, depth + 1);
            }
        return;
    }
    if (!op || !bir_is_elementwise(op->code)) return;
    for (int i = 0; i < op->noperands; i++)
        if (op->operands[i] >= 0 && shape_equal(f->values[op->operands[i]].type, t))
            mark_along(C, op->operands[i], d, depth + 1);
}

/* Loads and stores whose accesses are wider along the other dimension than
 * their shape's: their operands are computed along theirs (so a [K, N] tile
 * of a column-major B and a row-major [M, N] result of one shape both get
 * 16-byte accesses). */
static void mark_accesses(Chooser *C, const BirBlock *b) {
    const BirFunction *f = C->f;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) mark_accesses(C, op->regions[r]);
        if (op->code != BIR_LOAD && op->code != BIR_STORE) continue;
        BlkType pt = f->values[op->operands[0]].type;
        if (pt.rank != 2) continue;
        int along = access_width(C->ax, f, op, 0) > access_width(C->ax, f, op, 1) ? 0 : 1;
        if (along == shape_dim(C, pt)) continue;
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] >= 0) mark_along(C, op->operands[k], along, 0);
    }
}

/* The accumulator layout of an [M, N] dot: as Triton's warpsPerTileV2, warps
 * go to whichever dimension has more 16 x 8 tiles per warp left; with
 * chained dots (attention) along M, so that a row's softmax stays in one
 * warp, but only while each warp still gets rows of its own: the rest go
 * along N (a decode's 16 query rows on 2 or 4 warps), where they would
 * otherwise each compute the same rows. */
static Layout dot_layout(Chooser *C, const BirOp *op) {
    const BirFunction *f = C->f;
    BlkType at = f->values[op->operands[0]].type, rt = f->values[op->results[0]].type;
    int32_t M = rt.shape[0], N = rt.shape[1];
    int warps = C->p->num_warps, wm = 1, wn = 1;
    /* wgmma: each warpgroup takes whole 64-row tiles (warps all along M) */
    if (C->p->wgmma && !nvptx_wgmma_shape_refusal(M, N, at.shape[1], at.dtype, warps)) wm = warps;
    while (wm * wn < warps) {
        if (C->chained ? M >= 32 * wm || N < 16 * wn : M / (16 * wm) >= N / (8 * wn)) wm *= 2;
        else wn *= 2;
    }
    Layout l = nvptx_layout_mma(M, N, warps, wm);
    if (C->ndots < MAX_DOT_LAYOUTS) C->dots[C->ndots++] = l;
    return l;
}

static void set_layout(Chooser *C, int v, Layout l) {
    if (!nvptx_layout_equal(&C->p->layouts[v], &l)) C->changed = true;
    C->p->layouts[v] = l;
}

static void choose_block(Chooser *C, const BirBlock *b);

/* An operand in the default layout of an elementwise op computing in a layout
 * of its own (a dot's accumulator): where it is a row (column) load broadcast
 * along the other dimension, through expand_dims and elementwise ops on
 * [M, 1] ([1, N]) blocks, that load may take the slice of l (each thread the
 * rows it needs), so the operand meets l in the threads' registers instead of
 * through shared memory (block-scaled fp8's row scales). */
static void want_rows(Chooser *C, int v, const Layout *l, int depth) {
    const BirOp *op = C->f->values[v].def;
    if (!op || depth > 8) return;
    if (op->code == BIR_BROADCAST || (bir_is_elementwise(op->code) && op->code != BIR_RAND && op->code != BIR_RANDINT)) {
        for (int i = 0; i < op->noperands; i++)
            if (op->operands[i] >= 0 && C->f->values[op->operands[i]].type.rank == 2) want_rows(C, op->operands[i], l, depth + 1);
        return;
    }
    if (op->code != BIR_EXPAND_DIMS) return;
    int x = op->operands[0];
    const BirOp *ld = C->f->values[x].def;
    if (!ld || ld->code != BIR_LOAD || C->f->values[x].type.rank != 1 || C->has_wanted[x]) return;
    C->wanted[x] = nvptx_layout_slice(l, (int)op->attr);
    C->has_wanted[x] = true;
    C->new_wants = true;
}

/* A broadcast of a layout with zero bases along its size-1 dimensions: an
 * accumulator layout that holds the same rows (or columns) in the same
 * threads, so the broadcast moves nothing; else the default. */
static Layout broadcast_layout(Chooser *C, const Layout *x, int r) {
    BlkType rt = C->f->values[r].type;
    Projection proj = {{0, 1}};
    for (int d = 0; d < rt.rank; d++) proj.from[d] = x->shape[d] == 1 && rt.shape[d] > 1 ? -1 : d;
    for (int i = 0; i < C->ndots; i++)
        if (shape_equal(type_with_shape(rt, 2, C->dots[i].shape), rt) &&
            nvptx_layout_local_map(x, &C->dots[i], proj, NULL))
            return C->dots[i];
    return value_layout(C, r);
}

static void choose_op(Chooser *C, const BirOp *op) {
    const BirFunction *f = C->f;
    Layout *L = C->p->layouts;
    const int *a = op->operands;
    int r = op->nresults == 1 ? op->results[0] : -1;
    BlkType rt = r >= 0 ? f->values[r].type : type_scalar(DT_VOID);
    switch (op->code) {
    case BIR_DOT:
        set_layout(C, r, dot_layout(C, op));
        return;
    case BIR_TRANS: /* a view: the same threads hold the same elements */
        set_layout(C, r, nvptx_layout_trans(&L[a[0]]));
        return;
    case BIR_EXPAND_DIMS:
        set_layout(C, r, is_default(C, a[0]) ? value_layout(C, r) : nvptx_layout_expand(&L[a[0]], (int)op->attr));
        return;
    case BIR_BROADCAST:
        set_layout(C, r, is_default(C, a[0]) ? value_layout(C, r) : broadcast_layout(C, &L[a[0]], r));
        return;
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN: {
        if (rt.rank == 0) return;
        /* in registers and shuffles alone when no warps divide the axis */
        const Layout *x = &L[a[0]];
        bool local = nvptx_layout_warps_along(x, (int)op->attr) == 1 && !is_default(C, a[0]);
        set_layout(C, r, local ? nvptx_layout_slice(x, (int)op->attr) : value_layout(C, r));
        return;
    }
    case BIR_GATHER: /* the index's: its elements need not move */
        set_layout(C, r, is_default(C, a[1]) ? value_layout(C, r) : L[a[1]]);
        return;
    case BIR_CUMSUM: case BIR_CUMPROD: /* each thread scans what it holds of the operand */
        set_layout(C, r, is_default(C, a[0]) ? value_layout(C, r) : L[a[0]]);
        return;
    case BIR_FOR: case BIR_WHILE: {
        /* carried values take the layout their loop yields (an accumulator's
         * rather than the zeros it starts from); the body runs until stable */
        const BirBlock *body = op->regions[op->code == BIR_FOR ? 0 : 1];
        int first_arg = op->code == BIR_FOR ? 1 : 0, first_init = op->code == BIR_FOR ? 3 : 0;
        for (int i = 0; i < op->nresults; i++) {
            int init = a[first_init + i];
            if (f->values[init].type.rank) set_layout(C, op->results[i], L[init]);
        }
        for (int round = 0; round < 4; round++) {
            bool changed = C->changed;
            C->changed = false;
            for (int reg = 0; reg < op->nregions; reg++) {
                const BirBlock *blk = op->regions[reg];
                int first = reg == 0 ? first_arg : 0;
                for (int i = 0; i < op->nresults; i++)
                    if (f->values[op->results[i]].type.rank) set_layout(C, blk->args[first + i], L[op->results[i]]);
                choose_block(C, blk);
            }
            const BirOp *y = bir_block_terminator(body);
            bool moved = false;
            for (int i = 0; y && i < op->nresults && i < y->noperands; i++) {
                int v = y->operands[i];
                if (f->values[v].type.rank && !is_default(C, v) && !nvptx_layout_equal(&L[op->results[i]], &L[v])) {
                    set_layout(C, op->results[i], L[v]);
                    moved = true;
                }
            }
            C->changed = changed || C->changed;
            if (!moved) break;
        }
        return;
    }
    case BIR_IF: {
        for (int reg = 0; reg < op->nregions; reg++) choose_block(C, op->regions[reg]);
        for (int i = 0; i < op->nresults; i++) {
            if (!f->values[op->results[i]].type.rank) continue;
            Layout l = value_layout(C, op->results[i]);
            for (int reg = 0; reg < 2; reg++) {
                const BirOp *y = bir_block_terminator(op->regions[reg]);
                if (y && y->code == BIR_YIELD && !is_default(C, y->operands[i])) l = L[y->operands[i]];
            }
            set_layout(C, op->results[i], l);
        }
        return;
    }
    default:
        break;
    }
    if (r < 0 || rt.rank == 0) return;
    if (op->code == BIR_LOAD && C->has_wanted[r]) { /* its consumers' rows: no conversion where they meet */
        set_layout(C, r, C->wanted[r]);
        return;
    }
    if (is_memory(op->code)) {
        /* loads and atomics: the pointers' layout; but an atomic of a value
         * with a layout of its own (a dot's accumulator: attention
         * backward's dQ) where the pointers have the default one computes
         * in the value's, its addresses recomputed there from their aranges
         * (convert.c), where the value would go through shared memory; an
         * atomic is one element an instruction either way, and a dot's
         * fragments keep neighbouring lanes on neighbouring addresses */
        bool value_led = op->code != BIR_LOAD && op->code != BIR_ATOMIC_CAS && is_default(C, a[0]) && !is_default(C, a[1]);
        set_layout(C, r, value_led ? L[a[1]] : L[a[0]]);
        return;
    }
    /* elementwise ops: the first operand with a layout of its own (an
     * accumulator's, say) sets the result's; else the default */
    Layout l = value_layout(C, r);
    bool elementwise = bir_is_elementwise(op->code);
    for (int i = 0; elementwise && i < op->noperands; i++) {
        if (a[i] < 0 || !shape_equal(f->values[a[i]].type, rt) || f->values[a[i]].type.rank == 0) continue;
        if (!is_default(C, a[i])) {
            l = L[a[i]];
            break;
        }
    }
    set_layout(C, r, l);
    for (int i = 0; elementwise && rt.rank == 2 && !is_default(C, r) && i < op->noperands; i++)
        if (a[i] >= 0 && f->values[a[i]].type.rank == 2 && is_default(C, a[i])) want_rows(C, a[i], &l, 0);
}

static void choose_block(Chooser *C, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) choose_op(C, b->ops.items[i]);
}

KernelPlan *nvptx_plan_kernel(Arena *a, const BirFunction *f, int num_warps, const int64_t *param_div, bool wgmma) {
    KernelPlan *p = arena_alloc(a, sizeof *p);
    p->wgmma = wgmma;
    p->axis = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *p->axis);
    p->layouts = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *p->layouts);
    Analysis A = {f, p->axis};
    for (int i = 0; i < f->nparams; i++) {
        const BirParam *prm = &f->params[i];
        AxisInfo info = unknown();
        if (prm->type.dtype == DT_PTR) info.div[0] = prm->align ? prm->align : dtype_bytes(prm->type.elem);
        else if (prm->multiple_of) info.div[0] = pow2_div(prm->multiple_of);
        if (param_div && param_div[i] > 0) info.div[0] = max64(info.div[0], pow2_div(param_div[i]));
        if (param_div && param_div[i] == NVPTX_PARAM_ONE && dtype_is_int(prm->type.dtype)) info.one = true;
        if (prm->equal_one) info.one = true;
        set(&A, prm->value, info);
    }
    analyze_block(&A, f->body);

    Chooser *C = arena_alloc(a, sizeof *C);
    *C = (Chooser){.f = f, .ax = p->axis, .p = p, .max_numel = 1, .arena = a};
    C->loop_of = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *C->loop_of);
    collect_shapes(C, f->body);
    C->chained = p->ndots > 1;
    /* Triton's tutorials' rule, a warp per 256 elements, 1 to 8 warps; and
     * 16 from 16384 elements, where the layer-norm backward's 64 elements a
     * thread at 8 warps spill (309 us against 278 at 16 warps on the H100,
     * bench/layer_norm_sweep.py; docs/performance.md). With a dot: Triton's
     * default of 4 warps, 8 for accumulators of 128 x 128 or more. */
    if (num_warps <= 0) {
        if (p->ndots) num_warps = C->max_dot >= 128 * 128 ? 8 : 4;
        else num_warps = C->max_numel >= 16384 ? 16 : (int)min64(8, max64(1, C->max_numel / 256));
    }
    p->num_warps = num_warps;
    C->dim_of = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *C->dim_of);
    memset(C->dim_of, -1, (size_t)(f->nvalues + 1) * sizeof *C->dim_of);
    mark_accesses(C, f->body);
    for (int v = 0; v < f->nvalues; v++)
        if (f->values[v].type.rank) p->layouts[v] = value_layout(C, v);
    C->wanted = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *C->wanted);
    C->has_wanted = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *C->has_wanted);
    choose_block(C, f->body);
    if (C->new_wants) choose_block(C, f->body); /* the loads wanted in other layouts take them */
    return p;
}

int nvptx_equal_run(const KernelPlan *p, int v) {
    const Layout *l = &p->layouts[v];
    if (!l->rank) return 1;
    int64_t c = p->axis[v].constancy[nvptx_layout_vec_dim(l)], vec = nvptx_layout_vec(l);
    int run = 1;
    while (run * 2 <= vec && c % (run * 2) == 0) run *= 2; /* runs start at multiples of c */
    return run;
}

const Layout *nvptx_memory_layout(const KernelPlan *p, const BirOp *op) {
    /* (a load's is its pointers' but where its consumers wanted their own: want_rows) */
    bool own = (bir_is_atomic(op->code) || op->code == BIR_LOAD) && p->layouts[op->results[0]].rank;
    return own ? &p->layouts[op->results[0]] : &p->layouts[op->operands[0]];
}

int nvptx_access_width(const KernelPlan *p, const BirFunction *f, const BirOp *op) {
    const Layout *l = nvptx_memory_layout(p, op);
    int w = access_width(p->axis, f, op, nvptx_layout_vec_dim(l));
    int vec = nvptx_layout_vec(l);
    if (l->rank && w > vec) w = vec;
    return w;
}

/* ------------------------------------------------------------ printing */

/* Per dimension, how many of the block's elements a kind of bit spreads it
 * over: bits whose basis lies along one dimension count there; a zero basis
 * makes copies; one along several dimensions is counted as mixed. */
static void spread(const int32_t (*basis)[BLK_MAX_RANK], int nbits, int rank, int64_t *along, int *copies,
                   int *mixed) {
    for (int d = 0; d < rank; d++) along[d] = 1;
    *copies = 1, *mixed = 0;
    for (int b = 0; b < nbits; b++) {
        int dims = 0, at = -1;
        for (int d = 0; d < rank; d++)
            if (basis[b][d]) dims++, at = d;
        if (dims == 0) *copies *= 2;
        else if (dims == 1) along[at] *= 2;
        else (*mixed)++;
    }
}

static void put_spread(char *buf, size_t size, size_t *at, const char *kind, const int32_t (*basis)[BLK_MAX_RANK],
                       int nbits, int rank) {
    int64_t along[BLK_MAX_RANK];
    int copies, mixed;
    spread(basis, nbits, rank, along, &copies, &mixed);
    if (*at < size) *at += (size_t)snprintf(buf + *at, size - *at, "%s%s ", *at > 1 ? ", " : "", kind);
    for (int d = 0; d < rank && *at < size; d++)
        *at += (size_t)snprintf(buf + *at, size - *at, "%s%lld", d ? "x" : "", (long long)along[d]);
    if (copies > 1 && *at < size) *at += (size_t)snprintf(buf + *at, size - *at, " (%d copies)", copies);
    if (mixed && *at < size) *at += (size_t)snprintf(buf + *at, size - *at, " (%d mixed)", mixed);
}

void nvptx_layout_describe(const Layout *l, char *buf, size_t size) {
    size_t at = 0;
    if (!size) return;
    buf[0] = 0;
    if (!l->rank) return;
    at += (size_t)snprintf(buf, size, "{");
    put_spread(buf, size, &at, "regs", (const int32_t(*)[BLK_MAX_RANK])l->reg, l->nreg_bits, l->rank);
    put_spread(buf, size, &at, "lanes", (const int32_t(*)[BLK_MAX_RANK])l->lane, LAYOUT_LANE_BITS, l->rank);
    put_spread(buf, size, &at, "warps", (const int32_t(*)[BLK_MAX_RANK])l->warp, l->nwarp_bits, l->rank);
    int vec = nvptx_layout_vec(l);
    if (vec > 1 && at < size) at += (size_t)snprintf(buf + at, size - at, "; %d consecutive a thread", vec);
    if (vec > 1 && nvptx_layout_vec_dim(l) != l->rank - 1 && at < size)
        at += (size_t)snprintf(buf + at, size - at, " down dimension %d", nvptx_layout_vec_dim(l));
    if (at < size) snprintf(buf + at, size - at, "}");
}

int nvptx_access_limit(const KernelPlan *p, const BirFunction *f, const BirOp *op, char *why, size_t size) {
    int w = nvptx_access_width(p, f, op);
    int ptr = op->operands[0];
    BlkType pt = f->values[ptr].type;
    int es = dtype_bytes(pt.elem);
    const AxisInfo *ax = &p->axis[ptr];
    const Layout *l = nvptx_memory_layout(p, op);
    int m = mask_operand(op), vec = nvptx_layout_vec(l), d = nvptx_layout_vec_dim(l);
    /* the terms of access_width, then the layout's: the first that stops it */
    if (w * es >= 16) snprintf(why, size, "the widest access there is");
    else if (ax->contig[d] <= w)
        snprintf(why, size, "addresses known consecutive in runs of %lld", (long long)ax->contig[d]);
    else if (ax->div[d] / es <= w) snprintf(why, size, "pointers known %lld-byte aligned", (long long)ax->div[d]);
    else if (m != BIR_NONE && p->axis[m].constancy[d] <= w)
        snprintf(why, size, "the mask known constant in runs of %lld", (long long)p->axis[m].constancy[d]);
    else if (vec <= w) snprintf(why, size, "each thread holds %d consecutive element%s", vec, vec == 1 ? "" : "s");
    else snprintf(why, size, "accesses below a word are made an element at a time");
    return w;
}
