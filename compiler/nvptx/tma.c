/* tma.c: which loads of a pipelined loop Hopper's tensor memory accelerator
 * (TMA) can copy, and the tensor maps the runtime makes for them.
 *
 * A load qualifies when its pointers are, in every iteration,
 *     P(r, c) = P(0, 0) + r * stride + c        (elements; c along the rows)
 * with P(0, 0) anywhere after a pointer parameter `base`, and stride a
 * constant times at most one integer parameter: an affine form the analysis
 * below proves from the ops (arange, splat, expand_dims, broadcast, +, -, *
 * by a uniform, ptr_add, and loop-carried values that keep their form). The
 * map is then a 2-D view of `base` with rows `stride` apart, 2^31
 * elements a row (rows may overlap: TMA computes each address as the
 * pointer would) and exactly the box's rows. The copy's box starts at
 * column P(0, 0) - base of row 0, so it reads exactly the load's
 * addresses; there is no bound in the map.
 * Integer index arithmetic is taken as exact: the forms admit signed i32
 * and i64 values only (an unsigned offset zero-extends and wraps), and a
 * signed one that overflows gives the program's own pointers addresses
 * that no tile of the tensor has (the same class of bug as reading past
 * it). Loops whose bodies can return are not pipelined (pipeline.c), so no
 * program leaves with copies in flight into its shared memory.
 * Masks are kept by a runtime test: an iteration whose masks are all true
 * (and whose offset fits the 2^31) is copied by TMA, any other by the
 * cp.async fallback; the test rides on the barrier before the refill
 * (bar.red.and), so every thread takes the same branch.
 *
 * Edges, where a mask's term is a bound: with `other` zero (or none), a
 * term X < B of the mask's & (through broadcasts), where X steps by one
 * along one of the tile's dimensions and not the other and B is a
 * parameter or a constant, is what TMA's out-of-bounds fill does along
 * that dimension of a map whose extent there is B and whose box starts
 * at coordinate X(0, 0): element i reads zero exactly where X(0, 0) + i >= B.
 * So is X < B - U for a uniform integer U (the K tail, rk < K - k), at
 * coordinate X(0, 0) + U, where the kernel's B - U did not wrap (checked).
 * So the map takes B as its extent (rows or columns), the copy takes
 * X(0, 0) as its coordinate and the rest of the offset as the other
 * coordinate (thread 0 checks that they are the pointer's: both within
 * [0, 2^31), the pointer exactly row * stride + column), and only the other
 * terms need be all true. A tile on the edge of a ragged matrix is then a
 * TMA copy like the others, not the fallback. (Below zero TMA reads zeros
 * too where the mask would not: the coordinate check keeps those to the
 * fallback.) A term X < B true everywhere (X an arange from S >= 0 of n
 * elements, B a constant >= S + n: a head dimension padded to BLOCK_D,
 * where it is not) is dropped: no bound, no test. Where the columns alone
 * are bounded, the row is the offset divided by the stride, on thread 0
 * between the loop's wgmma wait and its next wgmma: every iteration that
 * cost matmul 8% on the H100. Such a load gets a second map (schedule.c),
 * the first without the bound: a tile within it (X(0, 0) + its columns <=
 * B) takes that one with the unbounded coordinates, and only an edge tile
 * divides.
 *
 * The runtime may find a map it cannot make (a stride of 0 or negative, an
 * old driver): the kernel's last parameter has bit j set when map j is
 * usable, and without it the iterations all take the fallback.
 *
 * This file decides (the schedule's TMA loads and maps, and why not);
 * async.c has the instructions. */

#include "gen.h"

/* k times the value of integer parameter `param` (-1: times 1). */
typedef struct {
    int64_t k;
    int param;
} Sym;

typedef struct {
    bool ok;
    int base;                  /* pointers: the parameter index they start from */
    Sym coef[BLK_MAX_RANK];    /* elements per step along each dimension */
} Affine;

typedef struct TmaMemo {
    Affine *aff;
    char *state;               /* 0 not known, 1 known, 2 being worked out */
    int *log, nlog;            /* values made known, in order (to roll back a disproved assumption) */
    const BirOp **arg_loop;    /* per block argument: the loop whose body it is an argument of */
    int *arg_index;
} TmaMemo;

static bool sym_add(Sym a, Sym b, Sym *out) {
    if (a.k == 0 || b.k == 0) return *out = a.k ? a : b, true;
    if (a.param != b.param) return false;
    *out = (Sym){a.k + b.k, a.param};
    if (out->k == 0) out->param = -1;
    return true;
}

static bool sym_mul(Sym a, Sym b, Sym *out) {
    if (a.k == 0 || b.k == 0) return *out = (Sym){0, -1}, true;
    if (a.param >= 0 && b.param >= 0) return false;
    int64_t k;
    if (__builtin_mul_overflow(a.k, b.k, &k)) return false;
    *out = (Sym){k, a.param >= 0 ? a.param : b.param};
    return true;
}

static int param_index(Gen *g, int v) {
    for (int i = 0; i < g->f->nparams; i++)
        if (g->f->params[i].value == v) return i;
    return -1;
}

/* The value of a uniform integer as a Sym, when it is one: a constant, an
 * integer parameter (1 when launch facts say so), or products of those. */
static bool sym_of(Gen *g, int v, Sym *out) {
    const BirOp *op = g->f->values[v].def;
    BlkType t = vtype(g, v);
    if (!dtype_is_int(t.dtype)) return false;
    if (!op) {
        int p = param_index(g, v);
        if (p < 0) return false;
        *out = g->s->facts && g->s->facts[p] == NVPTX_PARAM_ONE ? (Sym){1, -1} : (Sym){1, p};
        return true;
    }
    Sym a, b;
    switch (op->code) {
    case BIR_CONST: *out = (Sym){op->value.i, -1}; return true;
    case BIR_SPLAT: case BIR_BROADCAST: case BIR_EXPAND_DIMS: return sym_of(g, op->operands[0], out);
    case BIR_CONVERT:
        return dtype_is_int(vtype(g, op->operands[0]).dtype) &&
               dtype_bits(t.dtype) >= dtype_bits(vtype(g, op->operands[0]).dtype) && sym_of(g, op->operands[0], out);
    case BIR_MUL: return sym_of(g, op->operands[0], &a) && sym_of(g, op->operands[1], &b) && sym_mul(a, b, out);
    default: return false;
    }
}

static Affine affine(Gen *g, TmaMemo *M, int v);

static bool uniform(const Affine *a) {
    for (int d = 0; d < BLK_MAX_RANK; d++)
        if (a->coef[d].k) return false;
    return true;
}

static Affine fail(void) { return (Affine){.ok = false}; }

static Affine plain(void) {
    Affine a = {.ok = true, .base = -1};
    for (int d = 0; d < BLK_MAX_RANK; d++) a.coef[d] = (Sym){0, -1};
    return a;
}

static Affine derive(Gen *g, TmaMemo *M, int v) {
    const BirOp *op = g->f->values[v].def;
    BlkType t = vtype(g, v);
    if (!op) {
        int p = param_index(g, v);
        if (p >= 0) {
            Affine a = plain();
            if (t.dtype == DT_PTR) a.base = p;
            return a;
        }
        const BirOp *loop = M->arg_loop[v];
        int k = M->arg_index[v];
        if (!loop) return fail();
        if (t.rank == 0 && t.dtype != DT_PTR) return plain(); /* a uniform integer (a for loop's variable too) */
        if (loop->code != BIR_FOR || k == 0) return fail();  /* a while loop's values: not followed */
        /* a carried value: assume it keeps its first form and check that
         * the next iteration's value has it again (then every one does) */
        Affine first = affine(g, M, loop->operands[3 + k - 1]);
        if (!first.ok) return fail();
        int mark = M->nlog;
        M->aff[v] = first, M->state[v] = 1;
        const BirOp *y = bir_block_terminator(loop->regions[0]);
        Affine next = affine(g, M, y->operands[k - 1]);
        bool same = next.ok && next.base == first.base;
        for (int d = 0; same && d < BLK_MAX_RANK; d++)
            same = next.coef[d].k == first.coef[d].k && next.coef[d].param == first.coef[d].param;
        if (same) return first;
        while (M->nlog > mark) M->state[M->log[--M->nlog]] = 0; /* what followed from the assumption */
        return fail();
    }
    const int *o = op->operands;
    Affine a = plain(), x, y;
    switch (op->code) {
    case BIR_CONST: case BIR_PROGRAM_ID: case BIR_NUM_PROGRAMS: return a;
    case BIR_ARANGE: a.coef[0] = (Sym){1, -1}; return a;
    case BIR_SPLAT: x = affine(g, M, o[0]); a.base = x.base; return x.ok ? a : fail();
    case BIR_EXPAND_DIMS:
        x = affine(g, M, o[0]);
        for (int d = 0, s = 0; d < t.rank; d++) a.coef[d] = d == op->attr ? (Sym){0, -1} : x.coef[s++];
        a.base = x.base;
        return x.ok ? a : fail();
    case BIR_BROADCAST: {
        BlkType xt = vtype(g, o[0]);
        x = affine(g, M, o[0]);
        if (!x.ok || xt.rank != t.rank) return fail();
        for (int d = 0; d < t.rank; d++) a.coef[d] = xt.shape[d] == 1 ? (Sym){0, -1} : x.coef[d];
        a.base = x.base;
        return a;
    }
    case BIR_ADD: case BIR_SUB: case BIR_PTR_ADD:
        x = affine(g, M, o[0]), y = affine(g, M, o[1]);
        if (!x.ok || !y.ok || y.base >= 0 || (op->code == BIR_PTR_ADD) != (x.base >= 0)) return fail();
        a.base = x.base;
        for (int d = 0; d < t.rank; d++) {
            Sym b = y.coef[d];
            if (op->code == BIR_SUB) b.k = -b.k;
            if (!sym_add(x.coef[d], b, &a.coef[d])) return fail();
        }
        return a;
    case BIR_MUL: {
        x = affine(g, M, o[0]), y = affine(g, M, o[1]);
        if (!x.ok || !y.ok || x.base >= 0 || y.base >= 0) return fail();
        if (uniform(&x) && uniform(&y)) return a;
        Sym s;
        const Affine *blk = uniform(&x) ? &y : &x;
        if (!sym_of(g, uniform(&x) ? o[0] : o[1], &s)) return fail();
        for (int d = 0; d < t.rank; d++)
            if (!sym_mul(blk->coef[d], s, &a.coef[d])) return fail();
        return a;
    }
    case BIR_CONVERT:
        x = affine(g, M, o[0]);
        if (!dtype_is_int(t.dtype) || !dtype_is_int(vtype(g, o[0]).dtype) ||
            dtype_bits(t.dtype) < dtype_bits(vtype(g, o[0]).dtype))
            return t.rank == 0 && dtype_is_int(t.dtype) ? a : fail();
        return x;
    default: return t.rank == 0 && dtype_is_int(t.dtype) ? a : fail(); /* any uniform integer */
    }
}

/* Integers that vary across a block may only be signed i32 or i64: their
 * arithmetic is then the integers' (see the top). */
static bool exact_int(DType d) { return d == DT_I32 || d == DT_I64; }

static Affine affine(Gen *g, TmaMemo *M, int v) {
    if (v < 0) return fail();
    if (M->state[v] == 1) return M->aff[v];
    if (M->state[v] == 2) return fail(); /* a cycle not through a loop's carried value */
    M->state[v] = 2;
    Affine a = derive(g, M, v);
    DType d = vtype(g, v).dtype;
    if (a.ok && d != DT_PTR && !uniform(&a) && !exact_int(d)) a = fail();
    M->aff[v] = a, M->state[v] = 1;
    M->log[M->nlog++] = v;
    return a;
}

static void note_args(TmaMemo *M, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) {
            const BirBlock *body = op->regions[r];
            for (int k = 0; k < body->nargs; k++) M->arg_loop[body->args[k]] = op, M->arg_index[body->args[k]] = k;
            note_args(M, body);
        }
    }
}

TmaMemo *nvptx_tma_memo(Gen *g) {
    size_t n = (size_t)g->f->nvalues + 1;
    TmaMemo *M = arena_alloc(&g->arena, sizeof *M);
    M->aff = arena_alloc(&g->arena, n * sizeof *M->aff);
    M->state = arena_alloc(&g->arena, n);
    M->log = arena_alloc(&g->arena, n * sizeof *M->log);
    M->arg_loop = arena_alloc(&g->arena, n * sizeof *M->arg_loop);
    M->arg_index = arena_alloc(&g->arena, n * sizeof *M->arg_index);
    note_args(M, g->f->body);
    return M;
}

bool nvptx_pointer_steps(Gen *g, int v, int64_t steps[2]) {
    if (vtype(g, v).rank != 2) return false;
    Affine a = affine(g, g->s->tma_memo, v);
    if (!a.ok) return false;
    for (int d = 0; d < 2; d++) {
        if (a.coef[d].param >= 0) return false;
        steps[d] = a.coef[d].k;
    }
    return true;
}

/* The walk of nvptx_pointer_param: v's parameter, -1 (not known) or -2 (v
 * is `self`, the loop-carried value being asked about: its next value is
 * itself plus offsets). */
static int param_from(Gen *g, int v, int self, int depth) {
    if (v < 0 || depth > 64) return -1;
    if (v == self) return -2;
    const BirOp *op = g->f->values[v].def;
    if (!op) {
        int p = param_index(g, v);
        if (p >= 0) return vtype(g, v).dtype == DT_PTR ? p : -1;
        const BirOp *loop = g->s->tma_memo->arg_loop[v];
        int k = g->s->tma_memo->arg_index[v];
        if (!loop || loop->code != BIR_FOR || k == 0 || self >= 0) return -1; /* one carried value at a time */
        int first = param_from(g, loop->operands[3 + k - 1], -1, depth + 1);
        int next = param_from(g, bir_block_terminator(loop->regions[0])->operands[k - 1], v, depth + 1);
        return next == first || next == -2 ? first : -1;
    }
    switch (op->code) {
    case BIR_PTR_ADD: case BIR_SPLAT: case BIR_BROADCAST: case BIR_EXPAND_DIMS: case BIR_TRANS: case BIR_RESHAPE:
        return param_from(g, op->operands[0], self, depth + 1);
    case BIR_SELECT: {
        int a = param_from(g, op->operands[1], self, depth + 1), b = param_from(g, op->operands[2], self, depth + 1);
        return a == b || b == -2 ? a : a == -2 ? b : -1;
    }
    default: return -1;
    }
}

int nvptx_pointer_param(Gen *g, int v) {
    int p = param_from(g, v, -1, 0);
    return p >= 0 ? p : -1;
}

/* What a multiple of, in bytes for a pointer parameter (launch facts and
 * attributes included). */
static int64_t param_div(Gen *g, int p) { return g->s->plan->axis[g->f->params[p].value].div[0]; }

/* The terms of mask m, an & of them through broadcasts that keep the rank. */
static bool mask_terms(Gen *g, int m, NvptxTmaMask *out) {
    const BirOp *op = g->f->values[m].def;
    if (op && op->code == BIR_AND) return mask_terms(g, op->operands[0], out) && mask_terms(g, op->operands[1], out);
    if (op && op->code == BIR_BROADCAST && vtype(g, op->operands[0]).rank == vtype(g, m).rank)
        return mask_terms(g, op->operands[0], out);
    if (out->nrest == NVPTX_TMA_MAX_TERMS) return false;
    out->rest[out->nrest++] = m;
    return true;
}

/* Is term t `X < B` or `B > X` with X stepping by one along dimension *dim
 * of the load (and not along the other) and B a constant or a parameter
 * (times one: the kernel's arithmetic and the launcher's then agree), or
 * such a bound minus a uniform integer U (matmul's `rk < K - k`: then the
 * bound is K and the coordinate X(0, 0) + U, *shift = U; else -1)? */
static bool bound_term(Gen *g, int t, int *x, int *shift, int *dim, Sym *bound) {
    const BirOp *op = g->f->values[t].def;
    if (!op || (op->code != BIR_LT && op->code != BIR_GT) || vtype(g, t).rank != 2) return false;
    *x = op->operands[op->code == BIR_LT ? 0 : 1];
    int b = op->operands[op->code == BIR_LT ? 1 : 0];
    Affine a = affine(g, g->s->tma_memo, *x);
    if (!a.ok || a.base >= 0) return false;
    *shift = -1;
    if (!sym_of(g, b, bound)) {
        const BirOp *sub = g->f->values[nvptx_spread_scalar(g, b)].def;
        if (!sub || sub->code != BIR_SUB || vtype(g, sub->results[0]).rank != 0 ||
            !sym_of(g, sub->operands[0], bound) || !exact_int(vtype(g, sub->operands[1]).dtype))
            return false;
        *shift = sub->operands[1];
    }
    if (bound->param >= 0 && bound->k != 1) return false;
    for (int d = 0; d < 2; d++)
        if (a.coef[d].k == 1 && a.coef[d].param < 0 && a.coef[1 - d].k == 0) return *dim = d, true;
    return false;
}

/* Is term t `X < B` or `B > X` true everywhere: X an arange from S >= 0 of n elements (through
 * expand_dims and broadcasts) and B a constant >= S + n? attention.blk's `d < HEAD_DIM` where its
 * blocks are HEAD_DIM wide: a term that bounds nothing, and no test. */
static bool always_true(Gen *g, int t) {
    int axis, b;
    const BirOp *range;
    Sym bound;
    if (!nvptx_arange_term(g, t, &axis, &range, &b) || !sym_of(g, b, &bound) || bound.param >= 0) return false;
    int64_t start = range->attr, n = vtype(g, range->results[0]).shape[0];
    return start >= 0 && start + n <= bound.k;
}

/* Load ld's mask terms; sets map's bounds from them (its rows_/cols_ fields). Made once per
 * map, at planning: the schedule keeps it (NvptxSchedule.tma_mask) for the copies to read. */
static bool tma_mask(Gen *g, const BirOp *ld, NvptxTensorMap *map, NvptxTmaMask *out) {
    *out = (NvptxTmaMask){.coord = {-1, -1}, .shift = {-1, -1}, .shifted_bound = {-1, -1}};
    map->rows_param = map->cols_param = -1;
    map->rows_scale = map->cols_scale = 0;
    int m = ld->operands[1];
    if (m == BIR_NONE) return true;
    if (!mask_terms(g, m, out)) {
        *out = (NvptxTmaMask){.coord = {-1, -1}, .shift = {-1, -1}, .shifted_bound = {-1, -1}, .nrest = 1, .rest = {m}};
        return true;
    }
    if (ld->operands[2] != BIR_NONE && !nvptx_plus_zero(g, ld->operands[2])) return true; /* the fill would differ */
    int cd = nvptx_contiguous_dim(g, ld->results[0]);
    for (int i = 0; i < out->nrest;) {
        if (always_true(g, out->rest[i])) {
            out->rest[i] = out->rest[--out->nrest];
            continue;
        }
        int x, shift, dim;
        Sym bound;
        bool is_bound = bound_term(g, out->rest[i], &x, &shift, &dim, &bound);
        int axis = is_bound && dim == cd; /* the map's: 0 rows, 1 columns */
        if (!is_bound || out->coord[axis] >= 0) { /* a second bound on one axis is a plain term */
            i++;
            continue;
        }
        out->coord[axis] = x;
        out->shift[axis] = shift;
        out->shifted_bound[axis] = shift >= 0 ? nvptx_spread_scalar(g, g->f->values[out->rest[i]].def->operands[
                                                    g->f->values[out->rest[i]].def->code == BIR_LT ? 1 : 0])
                                              : -1;
        if (axis) map->cols_param = bound.param, map->cols_scale = bound.k;
        else map->rows_param = bound.param, map->rows_scale = bound.k;
        out->rest[i] = out->rest[--out->nrest];
    }
    return true;
}

const char *nvptx_tma_refusal(Gen *g, const BirOp *ld, NvptxTensorMap *map, NvptxTmaMask *mask) {
    if (!g->m->arch->tma) return "the arch has no TMA";
    if (g->m->opt->no_tma) return "--no-tma";
    int v = ld->results[0];
    BlkType t = vtype(g, v);
    int es = dtype_bytes(t.dtype);
    if (es != 2 && es != 1) return "its elements are not 16-bit or 8-bit";
    int cd = nvptx_contiguous_dim(g, v);
    if (cd < 0) return "its elements are not in 16-byte runs";
    Affine a = affine(g, g->s->tma_memo, ld->operands[0]);
    if (!a.ok || a.base < 0) return "its pointers are not a parameter plus multiples of arange and parameters";
    Sym inner = a.coef[cd], outer = a.coef[1 - cd];
    if (inner.k != 1 || inner.param >= 0) {
        return arena_printf(&g->arena, "its pointers do not step by one element along dimension %d (unit stride not known)", cd);
    }
    int64_t div = outer.param >= 0 ? param_div(g, outer.param) : 1;
    if (outer.k <= 0 || (outer.k * es * div) % 16 || outer.k > ((int64_t)1 << 38))
        return outer.param >= 0 ? "its row stride is not known to be a multiple of 16 bytes (launch facts)"
                                : "its row stride is not a positive multiple of 16 bytes";
    if (param_div(g, a.base) < 16) return "its base pointer is not known to be 16-byte aligned";
    Staged st = nvptx_staging(g, v, NULL);
    if (st.rows > 256 || st.rows % 8 || st.slab * es < 16) {
        return arena_printf(&g->arena, "its tile has %d rows of %d (TMA: at most 256, a multiple of 8)", st.rows, t.shape[cd]);
    }
    *map = (NvptxTensorMap){.base_param = a.base, .stride_param = outer.param, .stride_scale = outer.k,
                            .box_inner = st.slab, .box_rows = st.rows,
                            .swizzle_bytes = nvptx_tma_swizzle_bytes(st.slab, es), .elem_bytes = es};
    NvptxTmaMask unused;
    tma_mask(g, ld, map, mask ? mask : &unused);
    return NULL;
}

/* ------------------------------------------------------------ planning */

/* Measured on the H100 (performance.md): with a dot left in flight (matmul)
 * TMA won at every size, 24 to 48 KiB of tiles an iteration. Where the
 * loop's dots feed one another (attention) it won only in programs of two
 * warpgroups or more, with 32 KiB an iteration or more (D = 128, 128 x 128
 * blocks: 541 against 436 TFLOP/s); in one warpgroup cp.async won at every
 * size (D = 128, 128 x 64: 400 against 307), and with 16 KiB (D = 64) by
 * 15-25%, the loop then stalling more on the softmax's latencies. */
enum { TMA_MIN_TILE_BYTES = 32 * 1024, TMA_MIN_WARPS = 8 };

const char *nvptx_tma_loop_refusal(Gen *g, int64_t tile_bytes, bool dot_alone, int ndots) {
    if (dot_alone) return NULL;
    const char *dots = ndots > 1 ? "its loop's dots feed one another" : "its loop's dot does not stay in flight across iterations";
    if (g->s->plan->num_warps < TMA_MIN_WARPS)
        return arena_printf(&g->arena, "%s and its program is one warpgroup (cp.async is faster there below %d warps)",
                            dots, TMA_MIN_WARPS);
    if (tile_bytes < TMA_MIN_TILE_BYTES)
        return arena_printf(&g->arena, "%s and its tiles are %lld bytes an iteration (cp.async is faster there below "
                            "%d)", dots, (long long)tile_bytes, TMA_MIN_TILE_BYTES);
    return NULL;
}

/* The loads of one pipelined loop: TMA copies them all, a map each, if
 * every one qualifies; else none. */
int nvptx_tma_plan_loop(Gen *g, const BirOp **loads, int n, NvptxTensorMap *maps, NvptxTmaMask *masks) {
    for (int k = 0; k < n; k++)
        if (nvptx_tma_refusal(g, loads[k], &maps[k], &masks[k])) return 0;
    return n;
}
