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

static int64_t last_dim(BlkType t) { return t.rank ? t.shape[t.rank - 1] : 1; }

typedef struct {
    const BirFunction *f;
    AxisInfo *ax;
} Analysis;

static AxisInfo unknown(void) { return (AxisInfo){1, 1, 1}; }

static void set(Analysis *A, int v, AxisInfo info) {
    BlkType t = A->f->values[v].type;
    int64_t n = last_dim(t);
    info.contig = min64(max64(info.contig, 1), n);
    info.constancy = min64(max64(info.constancy, 1), n);
    info.div = max64(min64(info.div, AXIS_MAX_DIV), 1);
    A->ax[v] = info;
}

static void analyze_block(Analysis *A, const BirBlock *b);

static void analyze_op(Analysis *A, const BirOp *op) {
    const BirFunction *f = A->f;
    const int *a = op->operands;
    AxisInfo x = op->noperands > 0 && a[0] >= 0 ? A->ax[a[0]] : unknown();
    AxisInfo y = op->noperands > 1 && a[1] >= 0 ? A->ax[a[1]] : unknown();
    int r = op->nresults == 1 ? op->results[0] : -1;
    BlkType rt = r >= 0 ? f->values[r].type : type_scalar(DT_VOID);
    switch (op->code) {
    case BIR_CONST:
        set(A, r, (AxisInfo){1, dtype_is_int(rt.dtype) ? pow2_div(op->value.i) : 1, 1});
        return;
    case BIR_ARANGE:
        set(A, r, (AxisInfo){rt.shape[0], pow2_div(op->attr), 1});
        return;
    case BIR_SPLAT:
        set(A, r, (AxisInfo){1, x.div, last_dim(rt)});
        return;
    case BIR_EXPAND_DIMS:
        if (op->attr == rt.rank - 1) /* a new last dimension of size 1: each element its own run */
            set(A, r, (AxisInfo){1, x.contig > 1 ? 1 : x.div, 1});
        else
            set(A, r, x);
        return;
    case BIR_BROADCAST: {
        BlkType xt = f->values[a[0]].type;
        if (last_dim(xt) == 1 && last_dim(rt) > 1) set(A, r, (AxisInfo){1, x.div, last_dim(rt)});
        else set(A, r, x);
        return;
    }
    case BIR_CONVERT:
        set(A, r, dtype_is_int(rt.dtype) && dtype_is_int(f->values[a[0]].type.dtype) ? x : unknown());
        return;
    case BIR_PTR_CAST:
        set(A, r, x);
        return;
    case BIR_ADD: case BIR_PTR_ADD: {
        int64_t scale = op->code == BIR_PTR_ADD ? dtype_bytes(rt.elem) : 1;
        AxisInfo o = {
            max64(min64(x.contig, y.constancy), min64(y.contig, x.constancy)),
            min64(x.div, y.div * scale),
            min64(x.constancy, y.constancy),
        };
        if (!dtype_is_int(rt.dtype) && rt.dtype != DT_PTR) o = (AxisInfo){1, 1, o.constancy};
        set(A, r, o);
        return;
    }
    case BIR_SUB:
        set(A, r, dtype_is_int(rt.dtype) ? (AxisInfo){min64(x.contig, y.constancy), min64(x.div, y.div),
                                                      min64(x.constancy, y.constancy)}
                                         : (AxisInfo){1, 1, min64(x.constancy, y.constancy)});
        return;
    case BIR_MUL:
        set(A, r, dtype_is_int(rt.dtype) ? (AxisInfo){1, x.div * y.div, min64(x.constancy, y.constancy)}
                                         : (AxisInfo){1, 1, min64(x.constancy, y.constancy)});
        return;
    case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: case BIR_EQ: case BIR_NE: {
        /* Equal operands-runs give equal results; and `offs < n` is constant
         * over aligned runs of offs no longer than what divides n. */
        int64_t k = min64(x.constancy, y.constancy);
        bool ordered = op->code != BIR_EQ && op->code != BIR_NE;
        if (ordered && y.constancy >= x.contig) k = max64(k, min64(x.contig, min64(x.div, y.div)));
        if (ordered && x.constancy >= y.contig) k = max64(k, min64(y.contig, min64(y.div, x.div)));
        set(A, r, (AxisInfo){1, 1, k});
        return;
    }
    case BIR_AND: case BIR_OR: case BIR_XOR:
        set(A, r, (AxisInfo){1, 1, min64(x.constancy, y.constancy)});
        return;
    case BIR_SELECT: {
        AxisInfo z = A->ax[a[2]];
        set(A, r, (AxisInfo){1, 1, min64(x.constancy, min64(y.constancy, z.constancy))});
        return;
    }
    case BIR_FOR: {
        /* the loop variable: start + k * step */
        const BirBlock *body = op->regions[0];
        set(A, body->args[0], (AxisInfo){1, min64(A->ax[a[0]].div, A->ax[a[2]].div), 1});
        for (int i = 1; i < body->nargs; i++) set(A, body->args[i], unknown());
        analyze_block(A, body);
        for (int i = 0; i < op->nresults; i++) set(A, op->results[i], unknown());
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

static bool is_memory(BirOpcode c) { return bir_op_info(c)->kind == BIR_KIND_MEMORY; }

static int mask_operand(const BirOp *op) {
    int at = bir_op_info(op->code)->mask_at;
    return at >= 0 && at < op->noperands ? op->operands[at] : BIR_NONE;
}

/* The widest access the facts allow: contiguous, aligned, one mask bit,
 * at most 16 bytes. Atomics are per element. */
static int access_width(const AxisInfo *ax, const BirFunction *f, const BirOp *op) {
    int p = op->operands[0];
    BlkType pt = f->values[p].type;
    if (pt.rank == 0 || op->code == BIR_ATOMIC_CAS || op->code == BIR_ATOMIC_XCHG || op->code == BIR_ATOMIC_ADD)
        return 1;
    int es = dtype_bytes(pt.elem);
    int64_t w = min64(ax[p].contig, min64(ax[p].div / es, 16 / es));
    int m = mask_operand(op);
    if (m != BIR_NONE) w = min64(w, ax[m].constancy);
    int64_t p2 = 1;
    while (p2 * 2 <= w) p2 *= 2;
    return (int)max64(p2, 1);
}

typedef struct {
    BlkType shape;
    int vec;
} ShapeVec;

static void collect_shapes(const BirFunction *f, const AxisInfo *ax, const BirBlock *b, ShapeVec *sv, int *n,
                           int cap, int64_t *max_numel) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->nresults; k++) {
            BlkType t = f->values[op->results[k]].type;
            if (t.rank) *max_numel = max64(*max_numel, type_numel(t));
        }
        if (is_memory(op->code)) {
            BlkType pt = f->values[op->operands[0]].type;
            if (pt.rank) {
                int w = access_width(ax, f, op), j = 0;
                while (j < *n && !shape_equal(sv[j].shape, pt)) j++;
                if (j == *n && *n < cap) sv[(*n)++] = (ShapeVec){pt, 1};
                if (j < *n && w > sv[j].vec) sv[j].vec = w;
            }
        }
        for (int r = 0; r < op->nregions; r++) collect_shapes(f, ax, op->regions[r], sv, n, cap, max_numel);
    }
}

static Layout make_layout(BlkType t, int num_warps, int vec) {
    Layout l = {0};
    l.rank = t.rank;
    int fast = t.rank - 1;
    for (int d = 0; d < t.rank; d++) {
        l.shape[d] = t.shape[d];
        l.spt[d] = l.tpw[d] = l.wpc[d] = 1;
    }
    /* vec elements per thread along the fastest dimension, but no wider
     * than keeps all threads busy on distinct elements */
    int64_t per_thread = t.rank == 1 ? t.shape[0] / (32 * num_warps) : t.shape[fast];
    l.spt[fast] = (int32_t)max64(1, min64(vec, per_thread));
    if (t.rank == 1) {
        l.tpw[0] = 32;
        l.wpc[0] = num_warps;
    } else {
        /* lanes, then warps, fill the fastest dimension first (Triton's order) */
        l.tpw[1] = (int32_t)min64(32, max64(1, t.shape[1] / l.spt[1]));
        l.tpw[0] = 32 / l.tpw[1];
        l.wpc[1] = (int32_t)min64(num_warps, max64(1, t.shape[1] / ((int64_t)l.spt[1] * l.tpw[1])));
        l.wpc[0] = num_warps / l.wpc[1];
    }
    l.nregs = 1;
    for (int d = 0; d < t.rank; d++) {
        int64_t tile = (int64_t)l.spt[d] * l.tpw[d] * l.wpc[d];
        l.reps[d] = (int32_t)max64(1, t.shape[d] / tile);
        l.nregs *= l.reps[d] * l.spt[d];
    }
    return l;
}

void nvptx_layout_reg_parts(const Layout *l, int r, int32_t rep[BLK_MAX_RANK], int32_t j[BLK_MAX_RANK]) {
    /* r = ((rep0 * reps1 + rep1) * spt0 + j0) * spt1 + j1; rank 1: r = rep0 * spt0 + j0 */
    if (l->rank == 1) {
        rep[0] = r / l->spt[0];
        j[0] = r % l->spt[0];
        return;
    }
    j[1] = r % l->spt[1];
    r /= l->spt[1];
    j[0] = r % l->spt[0];
    r /= l->spt[0];
    rep[1] = r % l->reps[1];
    rep[0] = r / l->reps[1];
}

int32_t nvptx_layout_coord(const Layout *l, int d, int r, int warp, int lane) {
    int32_t rep[BLK_MAX_RANK], j[BLK_MAX_RANK];
    nvptx_layout_reg_parts(l, r, rep, j);
    int fast = l->rank - 1;
    int lane_d = d == fast ? lane % l->tpw[fast] : lane / l->tpw[fast];
    int warp_d = d == fast ? warp % l->wpc[fast] : warp / l->wpc[fast];
    int64_t tile = (int64_t)l->spt[d] * l->tpw[d] * l->wpc[d];
    int64_t c = rep[d] * tile + ((int64_t)warp_d * l->tpw[d] + lane_d) * l->spt[d] + j[d];
    return (int32_t)(c & (l->shape[d] - 1)); /* shapes are powers of two: wrap */
}

KernelPlan *nvptx_plan_kernel(Arena *a, const BirFunction *f, int num_warps, const int64_t *param_div) {
    KernelPlan *p = arena_alloc(a, sizeof *p);
    p->axis = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *p->axis);
    p->layouts = arena_alloc(a, (size_t)(f->nvalues + 1) * sizeof *p->layouts);
    Analysis A = {f, p->axis};
    for (int i = 0; i < f->nparams; i++) {
        const BirParam *prm = &f->params[i];
        AxisInfo info = unknown();
        if (prm->type.dtype == DT_PTR) info.div = prm->align ? prm->align : dtype_bytes(prm->type.elem);
        else if (prm->multiple_of) info.div = pow2_div(prm->multiple_of);
        if (param_div && param_div[i] > 0) info.div = max64(info.div, pow2_div(param_div[i]));
        set(&A, prm->value, info);
    }
    analyze_block(&A, f->body);

    enum { MAX_SHAPES = 64 };
    ShapeVec sv[MAX_SHAPES];
    int nshapes = 0;
    int64_t max_numel = 1;
    collect_shapes(f, p->axis, f->body, sv, &nshapes, MAX_SHAPES, &max_numel);
    /* Triton's tutorials' rule, a warp per 256 elements, 1 to 8 warps; and
     * 16 from 16384 elements, where 8 warps need over 200 registers a thread
     * (measured on the H100: docs/performance.md) */
    if (num_warps <= 0) num_warps = max_numel >= 16384 ? 16 : (int)min64(8, max64(1, max_numel / 256));
    p->num_warps = num_warps;
    for (int v = 0; v < f->nvalues; v++) {
        BlkType t = f->values[v].type;
        if (t.rank == 0) continue;
        int vec = 1;
        for (int s = 0; s < nshapes; s++)
            if (shape_equal(sv[s].shape, t)) vec = sv[s].vec;
        p->layouts[v] = make_layout(t, num_warps, vec);
    }
    return p;
}

int nvptx_access_width(const KernelPlan *p, const BirFunction *f, const BirOp *op) {
    int w = access_width(p->axis, f, op);
    const Layout *l = &p->layouts[op->operands[0]];
    if (l->rank && w > l->spt[l->rank - 1]) w = l->spt[l->rank - 1];
    return w;
}
