/* split3d.c: blocks of three dimensions for a backend that builds blocks of
 * one or two. A value [A, M, N] becomes A values [M, N], its parts. Most ops
 * apply part by part; an op along the first dimension becomes elementwise
 * ops across the parts (a sum a tree of adds, flip a reordering, gather a
 * chain of selects), and an op that moves elements between the first
 * dimension and the others takes rows or columns out of the parts and puts
 * them back with selects on an index block. The result is ordinary block
 * IR, which the interpreter runs too (tests compare it with the original).
 *
 * A take of a value computed from arange, constants and elementwise ops is
 * sunk to its leaves (a take of arange is a constant), so the index
 * arithmetic of a 3-D block (arange(0, A)[:, None, None] * s + ...) costs
 * nothing more than its 2-D parts. */
#include "blkc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int value, axis, index, result;
} TakeMemo;

typedef struct {
    const BirFunction *in;
    BirFunction *out;
    BirBlock *at;      /* where new ops go */
    int **parts;       /* per value of in: its values in out (A of a 3-D value, else 1) */
    Span span;         /* the op being split: every op made for it has its source */
    const BirOp *op;
    const BirOp *failed;
    char *why;
    size_t why_size;
    TakeMemo *memo;    /* takes made, by (value, axis, index): an open-addressing table */
    int memo_cap, memo_len;
} Split;

static bool split_region(Split *S, const BirBlock *b, BirBlock **out);
static bool fail(Split *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Split *S, const char *fmt, ...) {
    if (S->failed) return false;
    S->failed = S->op;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(S->why, S->why_size, fmt, ap);
    va_end(ap);
    return false;
}

static BlkType otype(const Split *S, int v) { return S->out->values[v].type; }
static BlkType itype(const Split *S, int v) { return S->in->values[v].type; }
static bool is3(const Split *S, int v) { return v != BIR_NONE && itype(S, v).rank == 3; }

/* t without its first dimension: the type of a part */
static BlkType part_type(BlkType t) { return type_with_shape(t, t.rank - 1, t.shape + 1); }

static BirOp *emit(Split *S, BirOpcode code, const int *operands, int n, BlkType type) {
    BirOp *op = bir_append(S->out, S->at, code, operands, n, type.dtype == DT_VOID ? NULL : &type);
    op->span = S->span;
    return op;
}

static int emit1(Split *S, BirOpcode code, int x, BlkType type) { return emit(S, code, &x, 1, type)->results[0]; }
static int emit2(Split *S, BirOpcode code, int x, int y, BlkType type) {
    return emit(S, code, (int[]){x, y}, 2, type)->results[0];
}
static int select3(Split *S, int c, int a, int b) { return emit(S, BIR_SELECT, (int[]){c, a, b}, 3, otype(S, a))->results[0]; }

static int const_int(Split *S, DType d, int64_t i) {
    BirOp *op = emit(S, BIR_CONST, NULL, 0, type_scalar(d));
    op->value.i = i;
    return op->results[0];
}

static int splat_to(Split *S, int scalar, BlkType t) {
    t = type_with_shape(otype(S, scalar), t.rank, t.shape);
    return t.rank ? emit1(S, BIR_SPLAT, scalar, t) : scalar;
}

/* v (rank 0, or t's rank with size-1 dimensions) made t's shape */
static int broadcast_to(Split *S, int v, BlkType t) {
    BlkType vt = otype(S, v);
    if (shape_equal(vt, t)) return v;
    if (vt.rank == 0) return splat_to(S, v, t);
    return emit1(S, BIR_BROADCAST, v, type_with_shape(vt, t.rank, t.shape));
}

/* a dimension of size 1 at axis (a scalar becomes [1]) */
static int expand(Split *S, int v, int axis) {
    BlkType t = otype(S, v);
    if (t.rank == 0) return emit1(S, BIR_SPLAT, v, type_with_shape(t, 1, (int32_t[]){1}));
    BirOp *op = emit(S, BIR_EXPAND_DIMS, &v, 1, bir_axis_shape(BIR_EXPAND_DIMS, t, axis));
    op->attr = axis;
    return op->results[0];
}

/* i32 indices 0 .. n - 1 along axis of t's shape */
static int indices_along(Split *S, BlkType t, int axis) {
    int32_t n = t.shape[axis];
    BirOp *ar = emit(S, BIR_ARANGE, NULL, 0, type_with_shape(type_scalar(DT_I32), 1, &n));
    int v = ar->results[0];
    for (int d = 0; d < t.rank; d++)
        if (d != axis) v = expand(S, v, d);
    return broadcast_to(S, v, type_with_shape(type_scalar(DT_I32), t.rank, t.shape));
}

static int *memo_slot(Split *S, int value, int axis, int index) {
    if (2 * (S->memo_len + 1) > S->memo_cap) {
        int cap = S->memo_cap ? 2 * S->memo_cap : 256;
        TakeMemo *old = S->memo, *m = arena_alloc(S->out->arena, (size_t)cap * sizeof *m);
        for (int i = 0; i < cap; i++) m[i].value = -1;
        int old_cap = S->memo_cap;
        S->memo = m, S->memo_cap = cap, S->memo_len = 0;
        for (int i = 0; i < old_cap; i++)
            if (old[i].value >= 0) *memo_slot(S, old[i].value, old[i].axis, old[i].index) = old[i].result;
    }
    unsigned h = ((unsigned)value * 2654435761u) ^ ((unsigned)axis * 40503u) ^ ((unsigned)index * 97u);
    for (int i = (int)(h & (unsigned)(S->memo_cap - 1));; i = (i + 1) & (S->memo_cap - 1)) {
        TakeMemo *m = &S->memo[i];
        if (m->value == value && m->axis == axis && m->index == index) return &m->result;
        if (m->value < 0) {
            *m = (TakeMemo){value, axis, index, -1};
            S->memo_len++;
            return &m->result;
        }
    }
}

static bool sinkable(BirOpcode code) {
    return bir_is_elementwise(code) || code == BIR_SELECT || code == BIR_CONVERT || code == BIR_PTR_ADD ||
           code == BIR_PTR_CAST;
}

/* Whether v is index arithmetic: made of arange, scalars (parameters,
 * constants) and shape and elementwise ops on them, within a few steps; a
 * take of it is sunk to the leaves, where it costs nothing. Other values
 * are taken as they are (a copy of a long chain per index would cost more
 * than the take). */
static bool index_arithmetic(const Split *S, int v, int depth) {
    if (otype(S, v).rank == 0) return true;
    const BirOp *def = S->out->values[v].def;
    if (!def || depth > 12) return false;
    switch (def->code) {
    case BIR_ARANGE: case BIR_SPLAT: return true;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: return index_arithmetic(S, def->operands[0], depth + 1);
    default:
        if (!sinkable(def->code) || def->nregions) return false;
        for (int k = 0; k < def->noperands; k++)
            if (def->operands[k] != BIR_NONE && !index_arithmetic(S, def->operands[k], depth + 1)) return false;
        return true;
    }
}

/* Index `index` of v's dimension `axis`, that dimension gone: sunk through
 * ops that keep the element's place, else a take op. */
static int take(Split *S, int v, int axis, int index) {
    int *memo = memo_slot(S, v, axis, index);
    if (*memo >= 0) return *memo;
    BlkType t = otype(S, v);
    BlkType rt = bir_axis_shape(BIR_TAKE, t, axis);
    const BirOp *def = S->out->values[v].def;
    int r = -1;
    if (def && def->code == BIR_ARANGE) {
        r = const_int(S, DT_I32, def->attr + index);
    } else if (def && def->code == BIR_SPLAT) {
        r = splat_to(S, def->operands[0], rt);
    } else if (def && def->code == BIR_EXPAND_DIMS) {
        int a = (int)def->attr, y = def->operands[0];
        if (axis == a) r = y;
        else r = expand(S, take(S, y, axis < a ? axis : axis - 1, index), axis < a ? a - 1 : a);
    } else if (def && def->code == BIR_BROADCAST) {
        int y = def->operands[0];
        r = broadcast_to(S, take(S, y, axis, otype(S, y).shape[axis] == 1 ? 0 : index), rt);
    } else if (def && sinkable(def->code) && def->nregions == 0 && index_arithmetic(S, v, 0)) {
        int ops[3];
        for (int k = 0; k < def->noperands; k++) {
            int x = def->operands[k];
            ops[k] = x == BIR_NONE || otype(S, x).rank == 0 ? x : take(S, x, axis, index);
        }
        BirOp *op = emit(S, def->code, ops, def->noperands, type_with_shape(t, rt.rank, rt.shape));
        op->attr = def->attr;
        op->value = def->value;
        r = op->results[0];
    } else {
        BirOp *op = emit(S, BIR_TAKE, &v, 1, rt);
        op->attr = axis;
        op->value.i = index;
        r = op->results[0];
    }
    *memo_slot(S, v, axis, index) = r; /* the table may have moved */
    return r;
}

/* n values of one type (a scalar or rank 1) put side by side along a new
 * dimension at pos: [n, L] (pos 0) or [L, n] (pos 1), by selects on the
 * index along it. */
static int assemble(Split *S, const int *parts, int n, int pos) {
    BlkType pt = otype(S, parts[0]);
    int32_t shape[2] = {0}, k = 0;
    for (int d = 0; d <= pt.rank; d++) shape[d] = d == pos ? n : pt.shape[k++];
    BlkType rt = type_with_shape(pt, pt.rank + 1, shape);
    int r = broadcast_to(S, expand(S, parts[0], pos), rt);
    if (n == 1) return r;
    int idx = indices_along(S, rt, pos);
    BlkType cond = type_with_shape(type_scalar(DT_I1), rt.rank, rt.shape);
    for (int i = 1; i < n; i++) {
        int at = emit2(S, BIR_EQ, idx, splat_to(S, const_int(S, DT_I32, i), rt), cond);
        r = select3(S, at, broadcast_to(S, expand(S, parts[i], pos), rt), r);
    }
    return r;
}

/* ------------------------------------------------------- flat reshapes */

static int flatten(Split *S, int v) {
    BlkType t = otype(S, v);
    int32_t n = (int32_t)type_numel(t);
    return t.rank == 1 ? v : emit1(S, BIR_RESHAPE, v, type_with_shape(t, 1, &n));
}

/* a and b ([P] each) one after the other ([2P]): joined side by side,
 * transposed, read row by row */
static int cat2(Split *S, int a, int b) {
    BlkType t = otype(S, a);
    int32_t p = t.shape[0];
    BlkType joined = type_with_shape(t, 2, (int32_t[]){p, 2});
    BlkType cond = type_with_shape(type_scalar(DT_I1), 2, joined.shape);
    int first = emit2(S, BIR_EQ, indices_along(S, joined, 1), splat_to(S, const_int(S, DT_I32, 0), joined), cond);
    int j = select3(S, first, broadcast_to(S, expand(S, a, 1), joined), broadcast_to(S, expand(S, b, 1), joined));
    int tr = emit1(S, BIR_TRANS, j, type_with_shape(t, 2, (int32_t[]){2, p}));
    return emit1(S, BIR_RESHAPE, tr, type_with_shape(t, 1, (int32_t[]){2 * p}));
}

/* the elements of a split value, row-major, as one [A * M * N] block */
static int flat_of_parts(Split *S, const int *parts, int n) {
    int *level = arena_alloc(S->out->arena, (size_t)n * sizeof *level);
    for (int i = 0; i < n; i++) level[i] = flatten(S, parts[i]);
    for (; n > 1; n /= 2)
        for (int i = 0; i < n / 2; i++) level[i] = cat2(S, level[2 * i], level[2 * i + 1]);
    return level[0];
}

/* elements lo .. lo + len - 1 of a rank-1 block */
static int flat_slice(Split *S, int flat, int32_t lo, int32_t len) {
    BlkType t = otype(S, flat);
    if (lo == 0 && len == t.shape[0]) return flat;
    BlkType it = type_with_shape(type_scalar(DT_I32), 1, &len);
    int index = emit2(S, BIR_ADD, indices_along(S, it, 0), splat_to(S, const_int(S, DT_I32, lo), it), it);
    BirOp *op = emit(S, BIR_GATHER, (int[]){flat, index}, 2, type_with_shape(t, 1, &len));
    op->attr = 0;
    return op->results[0];
}

/* ------------------------------------------------------------- the ops */

static int *new_parts(Split *S, int n) { return arena_alloc(S->out->arena, (size_t)n * sizeof(int)); }

static void set_parts(Split *S, int old, int *parts) { S->parts[old] = parts; }

static int single(Split *S, int old) { return old == BIR_NONE ? BIR_NONE : S->parts[old][0]; }

/* operand k of op for part i: the part of a 3-D value, else the value */
static int operand_part(Split *S, const BirOp *op, int k, int i) {
    int v = op->operands[k];
    return is3(S, v) ? S->parts[v][i] : single(S, v);
}

static const char *part_name(Split *S, int old, int i) {
    const char *name = S->in->values[old].name;
    return name ? arena_printf(S->out->arena, "%s_%d", name, i) : NULL;
}

/* How many values v becomes where it is carried whole (a block argument, a
 * control op's result): A of a 3-D [A, M, N], else 1; and part i's type and
 * name (v's own when it is not split). */
static int part_count(const Split *S, int v) { return is3(S, v) ? itype(S, v).shape[0] : 1; }

static BlkType carried_type(const Split *S, int v) { return is3(S, v) ? part_type(itype(S, v)) : itype(S, v); }

static const char *carried_name(Split *S, int v, int i) { return is3(S, v) ? part_name(S, v, i) : S->in->values[v].name; }

/* op applied to each of nparts parts, its axis attr (when it has one) one
 * less; each result a part of the op's (nparts 0: the op copied) */
static bool split_by_part(Split *S, const BirOp *op, bool axis_op, int nparts) {
    bool copy = nparts == 0;
    if (copy) nparts = 1;
    int **res = arena_alloc(S->out->arena, (size_t)(op->nresults ? op->nresults : 1) * sizeof *res);
    for (int r = 0; r < op->nresults; r++) res[r] = new_parts(S, nparts);
    int *ops = new_parts(S, op->noperands ? op->noperands : 1);
    for (int i = 0; i < nparts; i++) {
        for (int k = 0; k < op->noperands; k++) ops[k] = operand_part(S, op, k, i);
        BirOp *n = bir_append(S->out, S->at, op->code, ops, op->noperands, NULL);
        n->span = S->span;
        n->attr = axis_op ? op->attr - 1 : op->attr;
        n->value = op->value;
        n->text = op->text;
        n->asm_constraints = op->asm_constraints;
        if (op->nresults) {
            n->results = arena_alloc(S->out->arena, (size_t)op->nresults * sizeof(int));
            n->nresults = op->nresults;
        }
        for (int r = 0; r < op->nresults; r++) {
            BlkType t = itype(S, op->results[r]);
            n->results[r] = bir_value_new(S->out, copy ? t : part_type(t),
                                          copy ? S->in->values[op->results[r]].name : part_name(S, op->results[r], i));
            S->out->values[n->results[r]].def = n;
            res[r][i] = n->results[r];
        }
        for (int g = 0; g < op->nregions; g++) {
            BirBlock *saved = S->at;
            if (!split_region(S, op->regions[g], &n->regions[n->nregions++])) return false;
            S->at = saved;
        }
    }
    for (int r = 0; r < op->nresults; r++) set_parts(S, op->results[r], res[r]);
    return true;
}

/* A reduction's or take's results per part have one dimension: put back
 * as rows of one 2-D value. */
static bool rows_of_parts(Split *S, const BirOp *op) {
    int n = itype(S, op->operands[0]).shape[0];
    if (!split_by_part(S, op, true, n)) return false;
    for (int r = 0; r < op->nresults; r++) {
        int *one = new_parts(S, 1);
        one[0] = assemble(S, S->parts[op->results[r]], n, 0);
        set_parts(S, op->results[r], one);
    }
    return true;
}

/* combine's region applied to block values (the combine of reduce or scan
 * along the first dimension): its scalar ops made elementwise on a's and
 * b's shape. out receives the n values it yields. */
static bool apply_combine(Split *S, const BirBlock *region, const int *a, const int *b, int n, int *out) {
    int *map = arena_alloc(S->out->arena, (size_t)S->in->nvalues * sizeof *map);
    for (int i = 0; i < S->in->nvalues; i++) map[i] = -1;
    for (int i = 0; i < n; i++) map[region->args[i]] = a[i], map[region->args[n + i]] = b[i];
    BlkType shape = otype(S, a[0]);
    for (int k = 0; k < region->ops.len; k++) {
        const BirOp *op = region->ops.items[k];
        if (op->code == BIR_YIELD) {
            for (int i = 0; i < n; i++) out[i] = map[op->operands[i]];
            return true;
        }
        if (op->code == BIR_CONST) {
            BirOp *c = emit(S, BIR_CONST, NULL, 0, itype(S, op->results[0]));
            c->value = op->value;
            map[op->results[0]] = splat_to(S, c->results[0], shape);
            continue;
        }
        if (!sinkable(op->code) || op->nresults != 1 || op->nregions)
            return fail(S, "the combine of a %s along the first dimension of a 3-D block uses '%s', which the GPU "
                           "backend cannot apply to blocks yet; reduce along another dimension",
                        bir_opcode_name(S->op->code), bir_opcode_name(op->code));
        int ops[3];
        for (int i = 0; i < op->noperands; i++) {
            int x = op->operands[i];
            ops[i] = x == BIR_NONE ? x : map[x] >= 0 ? map[x] : splat_to(S, single(S, x), shape);
        }
        BirOp *e = emit(S, op->code, ops, op->noperands, type_with_shape(itype(S, op->results[0]), shape.rank, shape.shape));
        e->attr = op->attr;
        e->value = op->value;
        map[op->results[0]] = e->results[0];
    }
    return fail(S, "internal: a combine without a yield");
}

/* reduce, the reductions by name, cumsum, cumprod and scan along the first
 * dimension: across the parts, in the interpreter's orders (language.md
 * §6): sums pairwise by halves, a combine's reduce as a tree of neighbours,
 * scans in log2 steps, max and min and the arg reductions first to last. */
static bool along_first(Split *S, const BirOp *op) {
    int A = itype(S, op->operands[0]).shape[0], n = op->noperands;
    int **cur = arena_alloc(S->out->arena, (size_t)A * sizeof *cur);
    for (int i = 0; i < A; i++) {
        cur[i] = new_parts(S, n);
        for (int k = 0; k < n; k++) cur[i][k] = S->parts[op->operands[k]][i];
    }
    BlkType pt = otype(S, cur[0][0]);
    switch (op->code) {
    case BIR_REDUCE_SUM:
        for (int half = A / 2; half >= 1; half /= 2)
            for (int i = 0; i < half; i++) cur[i][0] = emit2(S, BIR_ADD, cur[i][0], cur[i + half][0], pt);
        break;
    case BIR_REDUCE_MAX: case BIR_REDUCE_MIN:
        for (int i = 1; i < A; i++)
            cur[0][0] = emit2(S, op->code == BIR_REDUCE_MAX ? BIR_MAX : BIR_MIN, cur[0][0], cur[i][0], pt);
        break;
    case BIR_ARGMAX: case BIR_ARGMIN: { /* the first index of the extreme; a NaN is extreme */
        BlkType cond = type_with_shape(type_scalar(DT_I1), pt.rank, pt.shape);
        BlkType it = type_with_shape(type_scalar(DT_I32), pt.rank, pt.shape);
        int best = cur[0][0], at = splat_to(S, const_int(S, DT_I32, 0), it);
        for (int i = 1; i < A; i++) {
            int c = cur[i][0];
            int better = emit2(S, op->code == BIR_ARGMAX ? BIR_GT : BIR_LT, c, best, cond);
            if (dtype_is_float(pt.dtype)) {
                int c_nan = emit2(S, BIR_NE, c, c, cond), best_nan = emit2(S, BIR_NE, best, best, cond);
                better = emit2(S, BIR_AND, emit1(S, BIR_NOT, best_nan, cond), emit2(S, BIR_OR, c_nan, better, cond), cond);
            }
            best = select3(S, better, c, best);
            at = select3(S, better, splat_to(S, const_int(S, DT_I32, i), it), at);
        }
        cur[0][0] = at;
        break;
    }
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN: case BIR_REDUCE: {
        bool scan = op->code != BIR_REDUCE;
        for (int d = 1; d < A; d *= 2) {
            int **prev = arena_alloc(S->out->arena, (size_t)A * sizeof *prev);
            memcpy(prev, cur, (size_t)A * sizeof *prev);
            for (int i = 0; i < A; i++) {
                const int *x, *y;
                if (scan && i >= d) x = prev[i - d], y = prev[i];
                else if (!scan && i % (2 * d) == 0 && i + d < A) x = prev[i], y = prev[i + d];
                else continue;
                cur[i] = new_parts(S, n);
                if (op->code == BIR_CUMSUM || op->code == BIR_CUMPROD)
                    cur[i][0] = emit2(S, op->code == BIR_CUMSUM ? BIR_ADD : BIR_MUL, x[0], y[0], pt);
                else if (!apply_combine(S, op->regions[0], x, y, n, cur[i]))
                    return false;
            }
        }
        if (scan) {
            for (int k = 0; k < op->nresults; k++) {
                int *parts = new_parts(S, A);
                for (int i = 0; i < A; i++) parts[i] = cur[i][k];
                set_parts(S, op->results[k], parts);
            }
            return true;
        }
        break;
    }
    default: return fail(S, "internal: '%s' is no reduction", bir_opcode_name(op->code));
    }
    for (int k = 0; k < op->nresults; k++) {
        int *one = new_parts(S, 1);
        one[0] = cur[0][k];
        set_parts(S, op->results[k], one);
    }
    return true;
}

static bool split_trans(Split *S, const BirOp *op) {
    int x = op->operands[0];
    BlkType xt = itype(S, x);
    int A = xt.shape[0], from[3];
    for (int d = 0; d < 3; d++) from[d] = trans_from(op->attr, 3, d);
    if (from[0] == 0) { /* the last two swapped in each part (or none: the identity) */
        int *parts = new_parts(S, A);
        for (int i = 0; i < A; i++) {
            BlkType pt = otype(S, S->parts[x][i]);
            parts[i] = from[1] == 1 ? S->parts[x][i]
                                    : emit1(S, BIR_TRANS, S->parts[x][i],
                                            type_with_shape(pt, 2, (int32_t[]){pt.shape[1], pt.shape[0]}));
        }
        set_parts(S, op->results[0], parts);
        return true;
    }
    /* part j of the result is index j of x's dimension from[0]: from each of
     * x's parts a row or column, put where x's first dimension went */
    int R = xt.shape[from[0]], pos = from[1] == 0 ? 0 : 1;
    int *parts = new_parts(S, R), *pieces = new_parts(S, A);
    for (int j = 0; j < R; j++) {
        for (int b = 0; b < A; b++) pieces[b] = take(S, S->parts[x][b], from[0] - 1, j);
        parts[j] = assemble(S, pieces, A, pos);
    }
    set_parts(S, op->results[0], parts);
    return true;
}

static bool split_reshape(Split *S, const BirOp *op) {
    int x = op->operands[0], r = op->results[0];
    BlkType rt = itype(S, r);
    if (is3(S, x) && rt.rank == 3 && rt.shape[0] == itype(S, x).shape[0]) {
        /* the same first dimension: row-major, each part keeps its elements */
        int *parts = new_parts(S, rt.shape[0]);
        for (int i = 0; i < rt.shape[0]; i++) {
            int xp = S->parts[x][i];
            parts[i] = shape_equal(otype(S, xp), part_type(rt)) ? xp : emit1(S, BIR_RESHAPE, xp, part_type(rt));
        }
        set_parts(S, r, parts);
        return true;
    }
    int flat = is3(S, x) ? flat_of_parts(S, S->parts[x], itype(S, x).shape[0]) : flatten(S, single(S, x));
    if (rt.rank < 3) {
        int *one = new_parts(S, 1);
        one[0] = rt.rank == 1 ? flat : emit1(S, BIR_RESHAPE, flat, rt);
        set_parts(S, r, one);
        return true;
    }
    BlkType pt = part_type(rt);
    int32_t size = (int32_t)type_numel(pt);
    int *parts = new_parts(S, rt.shape[0]);
    for (int i = 0; i < rt.shape[0]; i++) {
        int piece = flat_slice(S, flat, i * size, size);
        parts[i] = pt.rank == 1 ? piece : emit1(S, BIR_RESHAPE, piece, pt);
    }
    set_parts(S, r, parts);
    return true;
}

/* gather along the first dimension: a select a part (an index outside the
 * dimension picks part 0: some element of the row, which is what the GPU
 * promises; the interpreter reports it) */
static bool split_gather_first(Split *S, const BirOp *op) {
    int src = op->operands[0], index = op->operands[1];
    int A = itype(S, src).shape[0], R = itype(S, index).shape[0];
    DType id = itype(S, index).dtype;
    int *parts = new_parts(S, R);
    for (int i = 0; i < R; i++) {
        int ix = S->parts[index][i], r = S->parts[src][0];
        BlkType it = otype(S, ix), cond = type_with_shape(type_scalar(DT_I1), it.rank, it.shape);
        for (int s = 1; s < A; s++)
            r = select3(S, emit2(S, BIR_EQ, ix, splat_to(S, const_int(S, id, s), it), cond), S->parts[src][s], r);
        parts[i] = r;
    }
    set_parts(S, op->results[0], parts);
    return true;
}

static bool split_expand(Split *S, const BirOp *op) {
    int y = single(S, op->operands[0]), axis = (int)op->attr;
    BlkType rt = itype(S, op->results[0]);
    int *parts = new_parts(S, rt.shape[0]);
    if (axis == 0) parts[0] = y;
    for (int i = 0; axis && i < rt.shape[0]; i++) parts[i] = expand(S, take(S, y, 0, i), axis - 1);
    set_parts(S, op->results[0], parts);
    return true;
}

/* An op none of whose values has three dimensions, copied; its regions split. */
static bool copy_op(Split *S, const BirOp *op) { return split_by_part(S, op, false, 0); }

/* for, while, if: each 3-D carried value, block argument, result and yield
 * becomes its parts, in order; out NULL: only how many */
static int expanded(Split *S, const int *vals, int n, int *out) {
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < part_count(S, vals[i]); p++, k++)
            if (out) out[k] = vals[i] == BIR_NONE ? BIR_NONE : S->parts[vals[i]][p];
    return k;
}

static bool split_control(Split *S, const BirOp *op) {
    int nops = expanded(S, op->operands, op->noperands, NULL);
    int *ops = new_parts(S, nops ? nops : 1);
    expanded(S, op->operands, op->noperands, ops);
    BirOp *n = bir_append(S->out, S->at, op->code, ops, nops, NULL);
    n->span = S->span;
    n->attr = op->attr;
    n->value = op->value;
    n->text = op->text;
    int nres = expanded(S, op->results, op->nresults, NULL);
    n->results = new_parts(S, nres ? nres : 1);
    n->nresults = nres;
    for (int r = 0, k = 0; r < op->nresults; r++) {
        int v = op->results[r], np = part_count(S, v), *parts = new_parts(S, np);
        for (int p = 0; p < np; p++, k++) {
            parts[p] = n->results[k] = bir_value_new(S->out, carried_type(S, v), carried_name(S, v, p));
            S->out->values[parts[p]].def = n;
        }
        set_parts(S, v, parts);
    }
    BirBlock *saved = S->at;
    for (int g = 0; g < op->nregions; g++)
        if (!split_region(S, op->regions[g], &n->regions[n->nregions++])) return false;
    S->at = saved;
    return true;
}

static bool has3(Split *S, const BirOp *op) {
    for (int k = 0; k < op->noperands; k++)
        if (is3(S, op->operands[k])) return true;
    for (int r = 0; r < op->nresults; r++)
        if (is3(S, op->results[r])) return true;
    return false;
}

static bool split_op(Split *S, const BirOp *op) {
    S->op = op;
    S->span = op->span;
    const BirOpInfo *info = bir_op_info(op->code);
    if (info->kind == BIR_KIND_CONTROL || info->kind == BIR_KIND_TERMINATOR) return split_control(S, op);
    if (!has3(S, op)) return copy_op(S, op);
    int x = op->operands[0];
    int A = is3(S, x) ? itype(S, x).shape[0] : 0;
    bool first = A && info->axis != BIR_AXIS_NONE && op->attr == 0;
    switch (op->code) {
    case BIR_SPLAT: {
        BlkType rt = itype(S, op->results[0]);
        int v = splat_to(S, single(S, x), part_type(rt)), *parts = new_parts(S, rt.shape[0]);
        for (int i = 0; i < rt.shape[0]; i++) parts[i] = v;
        set_parts(S, op->results[0], parts);
        return true;
    }
    case BIR_EXPAND_DIMS: return split_expand(S, op);
    case BIR_BROADCAST: {
        BlkType rt = itype(S, op->results[0]), pt = part_type(rt);
        int *parts = new_parts(S, rt.shape[0]);
        for (int i = 0; i < rt.shape[0]; i++) /* from one part: the same value for each */
            parts[i] = A == 1 && i ? parts[0] : broadcast_to(S, S->parts[x][A == 1 ? 0 : i], pt);
        set_parts(S, op->results[0], parts);
        return true;
    }
    case BIR_TRANS: return split_trans(S, op);
    case BIR_RESHAPE: return split_reshape(S, op);
    case BIR_FLIP: case BIR_PARTNER:
        if (first) {
            int *parts = new_parts(S, A);
            for (int i = 0; i < A; i++)
                parts[i] = S->parts[x][op->code == BIR_FLIP ? A - 1 - i : i ^ (int)op->value.i];
            set_parts(S, op->results[0], parts);
            return true;
        }
        return split_by_part(S, op, true, A);
    case BIR_TAKE:
        if (first) {
            int *one = new_parts(S, 1);
            one[0] = S->parts[x][op->value.i];
            set_parts(S, op->results[0], one);
            return true;
        }
        return rows_of_parts(S, op);
    case BIR_GATHER: return first ? split_gather_first(S, op) : split_by_part(S, op, true, A);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN: case BIR_REDUCE:
        return first ? along_first(S, op) : rows_of_parts(S, op);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN:
        return first ? along_first(S, op) : split_by_part(S, op, true, A);
    case BIR_PRINT:
        return fail(S, "device_print of a block of three dimensions cannot be built for the GPU yet; print its "
                       "[M, N] slices (reshape or a slice x[i:i + 1])");
    case BIR_HISTOGRAM:
        return fail(S, "internal: histogram of a 3-D block");
    default: { /* elementwise, memory, dot, asm, assert: part by part */
        int v = op->nresults ? op->results[0] : BIR_NONE;
        for (int k = 0; k < op->noperands && !is3(S, v); k++) v = op->operands[k];
        return split_by_part(S, op, false, itype(S, v).shape[0]);
    }
    }
}

static bool split_region(Split *S, const BirBlock *b, BirBlock **out) {
    BirBlock *nb = bir_block_new(S->out);
    *out = nb;
    for (int i = 0; i < b->nargs; i++) {
        int v = b->args[i], np = part_count(S, v), *parts = new_parts(S, np);
        for (int p = 0; p < np; p++) parts[p] = bir_block_add_arg(S->out, nb, carried_type(S, v), carried_name(S, v, p));
        set_parts(S, v, parts);
    }
    /* takes made in the region are defined only there: it works on a copy
     * of the memo, which the region's end drops (the outer takes stay usable) */
    TakeMemo *outer = S->memo;
    int outer_cap = S->memo_cap, outer_len = S->memo_len;
    if (outer_cap) {
        S->memo = arena_alloc(S->out->arena, (size_t)outer_cap * sizeof *S->memo);
        memcpy(S->memo, outer, (size_t)outer_cap * sizeof *S->memo);
    }
    bool ok = true;
    for (int i = 0; ok && i < b->ops.len; i++) {
        S->at = nb;
        ok = split_op(S, b->ops.items[i]);
    }
    S->memo = outer, S->memo_cap = outer_cap, S->memo_len = outer_len;
    return ok;
}

/* The most parts a value may have: each is a block of its own, and ops
 * across the first dimension take a step a part. */
enum { MAX_PARTS = 64 };

/* Whether f has a 3-D value; the first one with too many parts (defined by
 * an op) in *wide, else -1. */
static bool any3(const BirFunction *f, int *wide) {
    bool any = false;
    *wide = -1;
    for (int v = 0; v < f->nvalues; v++) {
        BlkType t = f->values[v].type;
        if (t.rank != 3) continue;
        any = true;
        if (t.shape[0] > MAX_PARTS && *wide < 0 && f->values[v].def) *wide = v;
    }
    return any;
}

BirFunction *bir_split_3d(const BirFunction *f, Arena *a, const BirOp **failed_at, char *why, size_t why_size) {
    *failed_at = NULL;
    int wide;
    if (!any3(f, &wide)) return (BirFunction *)f;
    if (wide >= 0) {
        char type[64];
        *failed_at = f->values[wide].def;
        snprintf(why, why_size,
                 "the GPU builds a block of three dimensions as the parts along its first dimension, at most %d, "
                 "and this is %s; put a dimension of at most %d first",
                 MAX_PARTS, type_str(f->values[wide].type, type, sizeof type), MAX_PARTS);
        return NULL;
    }
    BirFunction *out = arena_alloc(a, sizeof *out);
    *out = (BirFunction){.name = f->name, .span = f->span, .src = f->src, .consts = f->consts, .arena = a};
    Split S = {.in = f, .out = out, .why = why, .why_size = why_size};
    S.parts = arena_alloc(a, (size_t)f->nvalues * sizeof *S.parts);
    if (!split_region(&S, f->body, &out->body)) {
        *failed_at = S.failed;
        return NULL;
    }
    out->params = arena_alloc(a, (size_t)(f->nparams ? f->nparams : 1) * sizeof *out->params);
    out->nparams = f->nparams;
    for (int i = 0; i < f->nparams; i++) {
        out->params[i] = f->params[i];
        out->params[i].value = S.parts[f->params[i].value][0];
    }
    bir_remove_dead_ops(out);
    bir_hoist_invariant_shapes(out);
    char err[256];
    if (!bir_verify(out, err, sizeof err)) {
        snprintf(why, why_size, "internal compiler error: splitting its blocks of three dimensions: %s", err);
        *failed_at = NULL;
        return NULL;
    }
    return out;
}
