/* lower.c: checked AST -> block IR.
 * Variables become SSA values: the lowering keeps, per symbol, the value it
 * holds now. A loop or branch that assigns a variable declared outside it
 * carries that variable: as a region argument and a yield for loops, as a
 * result of the `if` for branches. Every implicit conversion sema decided
 * (promotion, weak literals, broadcasting, f16 math in f32) becomes an
 * explicit op here, so the backends see only same-typed operands. */
#include <string.h>

#include "blkc.h"

typedef struct {
    Arena *a;
    BirFunction *f;
    BirBlock *block; /* where ops are appended */
    int *env;        /* symbol id -> value id, or -1 */
    int env_len;
    bool terminated; /* a `return` ended the current block */
    Span at;         /* source position given to new ops */
    int *values;     /* the several values of the last builtin that gives them (split, reduce of a tuple) */
} Lower;

static int lower_expr(Lower *L, const Expr *e);
static int lower_random(Lower *L, const Expr *e);
static void lower_stmt(Lower *L, const Stmt *s);

/* ------------------------------------------------------------ environment */

static int env_get(Lower *L, const Symbol *s) { return s->id < L->env_len ? L->env[s->id] : -1; }

static void env_set(Lower *L, const Symbol *s, int v) {
    if (s->id >= L->env_len) {
        int n = L->env_len ? L->env_len : 64;
        while (n <= s->id) n *= 2;
        int *env = arena_alloc(L->a, (size_t)n * sizeof(int));
        memset(env, 0xff, (size_t)n * sizeof(int)); /* all -1 */
        if (L->env_len) memcpy(env, L->env, (size_t)L->env_len * sizeof(int));
        L->env = env;
        L->env_len = n;
    }
    L->env[s->id] = v;
    /* name the value after the first binding that gives it one */
    if (!L->f->values[v].name) L->f->values[v].name = s->name;
}

static int *env_save(Lower *L) {
    int *copy = arena_alloc(L->a, (size_t)(L->env_len ? L->env_len : 1) * sizeof(int));
    if (L->env_len) memcpy(copy, L->env, (size_t)L->env_len * sizeof(int));
    return copy;
}

static void env_restore(Lower *L, const int *saved, int len) {
    memcpy(L->env, saved, (size_t)len * sizeof(int));
    if (L->env_len > len) memset(L->env + len, 0xff, (size_t)(L->env_len - len) * sizeof(int));
}

/* ----------------------------------------------------------------- emit */

static BirOp *emit_op(Lower *L, BirOpcode code, const int *ops, int n, const BlkType *t) {
    BirOp *op = bir_append(L->f, L->block, code, ops, n, t);
    op->span = L->at;
    return op;
}

static int emit(Lower *L, BirOpcode code, const int *ops, int n, BlkType t) {
    return emit_op(L, code, ops, n, &t)->results[0];
}

static int emit1(Lower *L, BirOpcode code, int a, BlkType t) { return emit(L, code, &a, 1, t); }

static int emit2(Lower *L, BirOpcode code, int a, int b, BlkType t) {
    int ops[2] = {a, b};
    return emit(L, code, ops, 2, t);
}

static BlkType vtype(Lower *L, int v) { return L->f->values[v].type; }

static int emit_const(Lower *L, DType d, ConstVal cv) {
    BlkType t = type_scalar(d);
    BirOp *op = emit_op(L, BIR_CONST, NULL, 0, &t);
    op->value = cv;
    return op->results[0];
}

static int const_int(Lower *L, DType d, int64_t v) { return emit_const(L, d, (ConstVal){.i = v}); }

/* Numeric conversion of each element; constants fold. */
static int convert(Lower *L, int v, DType to) {
    BlkType t = vtype(L, v);
    if (t.dtype == to || t.dtype == DT_PTR) return v;
    const BirOp *def = L->f->values[v].def;
    if (def && def->code == BIR_CONST)
        return emit_const(L, to, convert_scalar(def->value, t.dtype, to));
    BlkType r = t;
    r.dtype = to;
    return emit1(L, BIR_CONVERT, v, r);
}

/* An op of one operand along axis (its attr), its result's type from ops.def's AXIS rule;
 * value is partner's xor or take's index (0 for the others). */
static int emit_axis_op(Lower *L, BirOpcode code, int x, int axis, int64_t value) {
    BlkType t = bir_axis_shape(code, vtype(L, x), axis);
    BirOp *op = emit_op(L, code, &x, 1, &t);
    op->attr = axis;
    op->value.i = value;
    return op->results[0];
}

/* v with a dimension of size 1 inserted at axis; a scalar becomes a [1] block (the block IR's
 * expand_dims takes blocks). */
static int expand_at(Lower *L, int v, int axis) {
    BlkType t = vtype(L, v);
    if (t.rank == 0) return emit1(L, BIR_SPLAT, v, type_with_shape(t, 1, (int32_t[]){1}));
    return emit_axis_op(L, BIR_EXPAND_DIMS, v, axis, 0);
}

/* Broadcast v to the shape of `to`: splat a scalar; add leading size-1
 * dimensions (shapes align on the right); then widen size-1 dimensions. */
static int broadcast(Lower *L, int v, BlkType to) {
    BlkType t = vtype(L, v);
    if (shape_equal(t, to)) return v;
    if (t.rank == 0) return emit1(L, BIR_SPLAT, v, type_with_shape(t, to.rank, to.shape));
    while (t.rank < to.rank) {
        v = expand_at(L, v, 0);
        t = vtype(L, v);
    }
    if (shape_equal(t, to)) return v;
    return emit1(L, BIR_BROADCAST, v, type_with_shape(t, to.rank, to.shape));
}

/* v as dtype d with the shape of `shape`. */
static int coerce(Lower *L, int v, DType d, BlkType shape) { return broadcast(L, convert(L, v, d), shape); }

static bool is_const_scalar(const Expr *e) {
    DType d = e->type.dtype;
    return e->is_const && e->type.rank == 0 && (dtype_is_int(d) || dtype_is_float(d) || d == DT_I1);
}

/* e as dtype d with the shape of `shape`; a constant is made in d directly. */
/* A float literal's value in f64: the literal itself, not its f32 rounding
 * (a negated literal too); anything else as folded. */
static ConstVal const_in(const Expr *e, DType d) {
    const Expr *lit = e->kind == E_UNARY && e->u.binary.op == OP_NEG ? e->u.binary.lhs : e;
    if (d == DT_F64 && e->weak && lit->kind == E_FLOAT)
        return (ConstVal){.f = lit == e ? lit->u.float_lit : -lit->u.float_lit};
    return convert_scalar(e->cv, e->type.dtype, d);
}

static int lower_as(Lower *L, const Expr *e, DType d, BlkType shape) {
    if (is_const_scalar(e) && d != DT_PTR) {
        Span saved = L->at;
        L->at = e->span;
        int c = emit_const(L, d, const_in(e, d));
        L->at = saved;
        return broadcast(L, c, shape);
    }
    return coerce(L, lower_expr(L, e), d, shape);
}

/* ---------------------------------------------------------- carried values */

/* Every variable assigned in s, including in inlined helper bodies. */
static void collect_assigned_expr(Lower *L, const Expr *e, PtrVec *out);

static void collect_assigned(Lower *L, const Stmt *s, PtrVec *out) {
    if (!s) return;
    switch (s->kind) {
    case S_LET: collect_assigned_expr(L, s->u.let.init, out); return;
    case S_ASSIGN: {
        collect_assigned_expr(L, s->u.assign.value, out);
        for (int i = 0; i < out->len; i++)
            if (out->items[i] == s->u.assign.sym) return;
        ptrvec_push(L->a, out, s->u.assign.sym);
        return;
    }
    case S_FOR:
        if (s->u.for_.is_static) { /* only the checked copies exist */
            collect_assigned(L, s->u.for_.unrolled, out);
            return;
        }
        collect_assigned_expr(L, s->u.for_.start, out);
        collect_assigned_expr(L, s->u.for_.end, out);
        collect_assigned_expr(L, s->u.for_.step, out);
        collect_assigned(L, s->u.for_.body, out);
        return;
    case S_WHILE:
        collect_assigned_expr(L, s->u.while_.cond, out);
        collect_assigned(L, s->u.while_.body, out);
        return;
    case S_IF:
        if (s->u.if_.cond->is_const) { /* only the branch taken exists (and was checked) */
            collect_assigned(L, ast_const_if_taken(s), out);
            return;
        }
        collect_assigned_expr(L, s->u.if_.cond, out);
        collect_assigned(L, s->u.if_.then_, out);
        collect_assigned(L, s->u.if_.else_, out);
        return;
    case S_RETURN: collect_assigned_expr(L, s->u.ret.value, out); return;
    case S_EXPR: collect_assigned_expr(L, s->u.expr.expr, out); return;
    case S_BLOCK:
        for (int i = 0; i < s->u.block.stmts.len; i++) collect_assigned(L, s->u.block.stmts.items[i], out);
        return;
    }
}

static void collect_assigned_expr(Lower *L, const Expr *e, PtrVec *out) {
    if (!e) return;
    switch (e->kind) {
    case E_UNARY: case E_BINARY:
        collect_assigned_expr(L, e->u.binary.lhs, out);
        collect_assigned_expr(L, e->u.binary.rhs, out);
        return;
    case E_CAST: collect_assigned_expr(L, e->u.cast.operand, out); return;
    case E_INDEX: collect_assigned_expr(L, e->u.index.operand, out); return;
    case E_CALL:
        for (int i = 0; i < e->u.call.args.len; i++) collect_assigned_expr(L, e->u.call.args.items[i], out);
        collect_assigned(L, e->u.call.inline_body, out);
        collect_assigned_expr(L, e->u.call.inline_result, out);
        return;
    case E_TUPLE:
        for (int i = 0; i < e->u.shape.dims.len; i++) collect_assigned_expr(L, e->u.shape.dims.items[i], out);
        return;
    default: return;
    }
}

/* The assigned symbols that already hold a value: those flow through the
 * region. (Ones declared inside it start afresh on every entry.) */
static int carried_symbols(Lower *L, PtrVec *assigned, const Symbol **out) {
    int n = 0;
    for (int i = 0; i < assigned->len; i++) {
        const Symbol *s = assigned->items[i];
        if (env_get(L, s) >= 0) out[n++] = s;
    }
    return n;
}

/* Lower `body` into a new region. A loop's region takes the loop variable
 * (iv, when given) and one argument per carried symbol; a branch takes none.
 * Unless a return ended it, the region yields the carried symbols' values
 * as they stand at its end. */
static BirBlock *lower_region(Lower *L, const Stmt *body, const Symbol *const *carried, int n,
                              bool carried_args, const Symbol *iv, BlkType iv_type) {
    BirBlock *saved_block = L->block;
    bool saved_term = L->terminated;
    BirBlock *b = bir_block_new(L->f);
    if (iv) env_set(L, iv, bir_block_add_arg(L->f, b, iv_type, iv->name));
    for (int i = 0; carried_args && i < n; i++)
        env_set(L, carried[i], bir_block_add_arg(L->f, b, carried[i]->type, carried[i]->name));
    L->block = b;
    L->terminated = false;
    lower_stmt(L, body);
    if (!L->terminated) {
        int *ys = arena_alloc(L->a, (size_t)(n ? n : 1) * sizeof(int));
        for (int i = 0; i < n; i++) ys[i] = env_get(L, carried[i]);
        emit_op(L, BIR_YIELD, ys, n, NULL);
    }
    L->block = saved_block;
    L->terminated = saved_term;
    return b;
}

/* Results of a control-flow op become the carried symbols' new values. */
static void bind_results(Lower *L, BirOp *op, const Symbol *const *carried, int n) {
    op->results = arena_alloc(L->a, (size_t)(n ? n : 1) * sizeof(int));
    op->nresults = n;
    for (int i = 0; i < n; i++) {
        op->results[i] = bir_value_new(L->f, carried[i]->type, NULL);
        L->f->values[op->results[i]].def = op;
        env_set(L, carried[i], op->results[i]);
    }
}

/* ------------------------------------------------------------ expressions */

/* Could evaluating e fault or have an effect? Then a scalar `&&`/`||`
 * must not evaluate it unconditionally. */
static bool may_trap(const Expr *e) {
    if (!e) return false;
    switch (e->kind) {
    case E_UNARY: return may_trap(e->u.binary.lhs);
    case E_BINARY:
        if ((e->u.binary.op == OP_DIV || e->u.binary.op == OP_MOD) &&
            dtype_is_int(e->u.binary.operand_dtype))
            return true;
        return may_trap(e->u.binary.lhs) || may_trap(e->u.binary.rhs);
    case E_CAST: return may_trap(e->u.cast.operand);
    case E_INDEX: return may_trap(e->u.index.operand);
    case E_CALL:
        if (e->u.call.helper) return true;
        if (e->u.call.builtin == BI_CDIV || (e->u.call.builtin >= 0 && builtin_has_effect((BuiltinId)e->u.call.builtin)))
            return true; /* cdiv: an integer division */
        for (int i = 0; i < e->u.call.args.len; i++)
            if (may_trap(e->u.call.args.items[i])) return true;
        return false;
    case E_SHAPE: case E_TUPLE:
        for (int i = 0; i < e->u.shape.dims.len; i++)
            if (may_trap(e->u.shape.dims.items[i])) return true;
        return false;
    case E_INT: case E_FLOAT: case E_BOOL: case E_STRING: case E_NAME: case E_DTYPE: return false;
    }
    return false;
}

/* Scalar a && b / a || b evaluating b only when needed: an `if` op. */
static int lower_short_circuit(Lower *L, const Expr *e) {
    int cond = lower_expr(L, e->u.binary.lhs);
    bool is_and = e->u.binary.op == OP_LAND;
    BirOp *op = emit_op(L, BIR_IF, &cond, 1, NULL);
    BirBlock *saved = L->block;
    for (int r = 0; r < 2; r++) {
        L->block = op->regions[r] = bir_block_new(L->f);
        /* and: then evaluates b, else yields false; or: then yields true */
        int v = (r == 0) == is_and ? lower_expr(L, e->u.binary.rhs) : const_int(L, DT_I1, !is_and);
        emit_op(L, BIR_YIELD, &v, 1, NULL);
    }
    op->nregions = 2;
    L->block = saved;
    op->results = arena_alloc(L->a, sizeof(int));
    op->results[0] = bir_value_new(L->f, type_scalar(DT_I1), NULL);
    L->f->values[op->results[0]].def = op;
    op->nresults = 1;
    return op->results[0];
}

static int lower_binary(Lower *L, const Expr *e) {
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    OpKind op = e->u.binary.op;
    if ((op == OP_LAND || op == OP_LOR) && e->type.rank == 0 && may_trap(r))
        return lower_short_circuit(L, e);
    if (e->type.dtype == DT_PTR) {
        /* ptr + int, int + ptr, ptr - int: offsets in elements */
        bool lp = l->type.dtype == DT_PTR;
        int p = broadcast(L, lower_expr(L, lp ? l : r), e->type);
        int off = lower_as(L, lp ? r : l, e->u.binary.operand_dtype, e->type);
        if (op == OP_SUB) off = emit1(L, BIR_NEG, off, vtype(L, off));
        return emit2(L, BIR_PTR_ADD, p, off, e->type);
    }
    DType d = e->u.binary.operand_dtype;
    int a = lower_as(L, l, d, e->type), b = lower_as(L, r, d, e->type);
    return emit2(L, op_kind_opcode(op), a, b, e->type);
}

/* exp, log, sqrt...: integers and f16/bf16 compute in f32 (language.md §6). */
static int lower_math(Lower *L, BirOpcode code, const Expr *x, BlkType result) {
    if (result.dtype == DT_F64) return emit1(L, code, lower_expr(L, x), result); /* blk_math_has_f64 */
    int v = convert(L, lower_expr(L, x), DT_F32);
    v = emit1(L, code, v, type_with_shape(type_scalar(DT_F32), result.rank, result.shape));
    return convert(L, v, result.dtype);
}

static const Expr *arg(const Expr *e, int i) {
    return i < e->u.call.args.len ? e->u.call.args.items[i] : NULL;
}

static int lower_reduction(Lower *L, const Expr *e, BirOpcode code) {
    int x = lower_expr(L, arg(e, 0));
    if (arg(e, 3)) x = convert(L, x, arg(e, 3)->cv.dtype); /* sum's dtype: x in it first */
    DType d = vtype(L, x).dtype;
    if (code == BIR_REDUCE_SUM && (d == DT_F16 || d == DT_BF16)) x = convert(L, x, DT_F32);
    /* the backends reduce 32- and 64-bit values: an i1 block reduces as 0/1
     * in i32 (max is "any", min "all"), 8- and 16-bit integers in (u)i32;
     * max and min convert back, exactly */
    DType wide = d == DT_I1 || dtype_is_signed(d) ? DT_I32 : DT_U32;
    bool narrow = d == DT_I1 || (dtype_is_int(d) && dtype_bits(d) < 32);
    if (narrow) x = convert(L, x, wide);
    int axis = arg(e, 1) ? (int)arg(e, 1)->cv.i : 0;
    bool keep = arg(e, 2) && arg(e, 2)->cv.i; /* keep_dims: the reduced axis stays, of size 1 */
    BlkType shape = bir_axis_shape(code, vtype(L, x), axis); /* without the axis, kept or not */
    DType rd = narrow && (code == BIR_REDUCE_MAX || code == BIR_REDUCE_MIN) ? wide : e->type.dtype;
    BlkType t = type_with_shape(type_scalar(rd), shape.rank, shape.shape);
    BirOp *op = emit_op(L, code, &x, 1, &t);
    op->attr = axis;
    int r = convert(L, op->results[0], e->type.dtype);
    if (!keep) return r;
    return t.rank ? expand_at(L, r, axis) : broadcast(L, r, e->type); /* a scalar: splat to [1] */
}

/* One op with several results, of types ts. */
static BirOp *emit_multi(Lower *L, BirOpcode code, const int *ops, int n, const BlkType *ts, int nresults) {
    BirOp *op = emit_op(L, code, ops, n, NULL);
    op->results = arena_alloc(L->a, (size_t)nresults * sizeof(int));
    for (int i = 0; i < nresults; i++) {
        op->results[i] = bir_value_new(L->f, ts[i], NULL);
        L->f->values[op->results[i]].def = op;
    }
    op->nresults = nresults;
    return op;
}

/* reduce / associative_scan: the combine helper, inlined once on scalars,
 * becomes the op's region (a reverse scan flips before and after). */
static int lower_combine(Lower *L, const Expr *e) {
    const Expr *x = arg(e, 0), *call = e->u.call.combine, *rev = arg(e, 3);
    bool scan = e->u.call.builtin == BI_ASSOCIATIVE_SCAN, reverse = scan && rev && rev->cv.i;
    int axis = (int)arg(e, 1)->cv.i, n = x->kind == E_TUPLE ? x->u.shape.dims.len : 1;
    int *ops = arena_alloc(L->a, (size_t)n * sizeof(int));
    BlkType *ts = arena_alloc(L->a, (size_t)n * sizeof *ts);
    for (int i = 0; i < n; i++) {
        ops[i] = lower_expr(L, n == 1 && x->kind != E_TUPLE ? x : x->u.shape.dims.items[i]);
        if (reverse) ops[i] = emit_axis_op(L, BIR_FLIP, ops[i], axis, 0);
        ts[i] = x->kind == E_TUPLE ? ((const Expr *)e->u.call.inline_result->u.shape.dims.items[i])->type : e->type;
    }
    Span at = L->at; /* the region's ops take the helper's lines; the ops after it the call's */
    BirOp *op = emit_multi(L, scan ? BIR_SCAN : BIR_REDUCE, ops, n, ts, n);
    op->attr = axis;
    BirBlock *saved = L->block, *region = op->regions[0] = bir_block_new(L->f);
    op->nregions = 1;
    L->block = region;
    for (int i = 0; i < 2 * n; i++) {
        int v = bir_block_add_arg(L->f, region, type_scalar(ts[i % n].dtype), NULL);
        env_set(L, call->u.call.inline_params.items[i], v);
    }
    lower_stmt(L, call->u.call.inline_body);
    const Expr *res = call->u.call.inline_result;
    int *yields = arena_alloc(L->a, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        BlkType s = type_scalar(ts[i].dtype);
        yields[i] = lower_as(L, n == 1 && res->kind != E_TUPLE ? res : res->u.shape.dims.items[i], s.dtype, s);
    }
    emit_op(L, BIR_YIELD, yields, n, NULL);
    L->block = saved;
    L->at = at;
    L->values = arena_alloc(L->a, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        int r = op->results[i];
        L->values[i] = reverse ? emit_axis_op(L, BIR_FLIP, r, axis, 0) : r;
    }
    return n == 1 && x->kind != E_TUPLE ? L->values[0] : BIR_NONE;
}

/* inline_asm_elementwise: the arguments broadcast to the result's shape;
 * the reference helper, inlined once on scalars, becomes the op's region. */
static int lower_inline_asm(Lower *L, const Expr *e) {
    const Expr *args = arg(e, 2), *call = e->u.call.combine, *pure = arg(e, 4), *pack = arg(e, 5);
    int n = args->kind == E_TUPLE ? args->u.shape.dims.len : 1;
    int *ops = arena_alloc(L->a, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        const Expr *a = args->kind == E_TUPLE ? args->u.shape.dims.items[i] : args;
        ops[i] = broadcast(L, lower_expr(L, a), type_with_shape(a->type, e->type.rank, e->type.shape));
    }
    Span at = L->at;
    BlkType t = e->type;
    BirOp *op = emit_op(L, BIR_INLINE_ASM, ops, n, &t);
    op->text = arena_strndup(L->a, arg(e, 0)->u.str.text, arg(e, 0)->u.str.len);
    op->asm_constraints = arena_strndup(L->a, arg(e, 1)->u.str.text, arg(e, 1)->u.str.len);
    op->attr = (pure->cv.i != 0 ? ASM_PURE : 0) | (pack ? pack->cv.i : 1) << ASM_PACK_SHIFT;
    if (call) {
        BirBlock *saved = L->block, *region = op->regions[0] = bir_block_new(L->f);
        op->nregions = 1;
        L->block = region;
        for (int i = 0; i < n; i++)
            env_set(L, call->u.call.inline_params.items[i],
                    bir_block_add_arg(L->f, region, type_scalar(vtype(L, ops[i]).dtype), NULL));
        lower_stmt(L, call->u.call.inline_body);
        int y = lower_as(L, call->u.call.inline_result, t.dtype, type_scalar(t.dtype));
        emit_op(L, BIR_YIELD, &y, 1, NULL);
        L->block = saved;
        L->at = at;
    }
    return op->results[0];
}

/* i32 indices along `axis`, in the shape of t. */
static int indices_along(Lower *L, BlkType t, int axis) {
    int32_t n = t.shape[axis];
    BlkType it = type_with_shape(type_scalar(DT_I32), 1, &n);
    BirOp *ar = emit_op(L, BIR_ARANGE, NULL, 0, &it);
    ar->attr = 0;
    int v = ar->results[0];
    for (int d = 0; d < t.rank; d++) /* [n, 1] along axis 0, [1, n] along axis 1 ... */
        if (d != axis) v = expand_at(L, v, d);
    return broadcast(L, v, type_with_shape(it, t.rank, t.shape));
}

/* (idx & bit) == 0 for a power of two bit, on the indices idx. */
static int bit_clear(Lower *L, int idx, int64_t bit) {
    BlkType t = vtype(L, idx), b = type_with_shape(type_scalar(DT_I1), t.rank, t.shape);
    int masked = emit2(L, BIR_AND, idx, broadcast(L, const_int(L, DT_I32, bit), t), t);
    return emit2(L, BIR_EQ, masked, broadcast(L, const_int(L, DT_I32, 0), t), b);
}

/* sort: a bitonic network along the axis (log2(n)(log2(n)+1)/2 steps);
 * each step compares every element with its partner (index xor j) and keeps
 * the smaller or the larger. NaN counts as larger than any number. */
/* One step of a bitonic network: every element of x meets its partner
 * (index xor j along the axis) and keeps the smaller where keep_min is true,
 * else the larger; NaN counts as larger than any number. */
static int compare_exchange(Lower *L, int x, int axis, int32_t j, int keep_min) {
    BlkType wt = vtype(L, x), bt = type_with_shape(type_scalar(DT_I1), wt.rank, wt.shape);
    int y = emit_axis_op(L, BIR_PARTNER, x, axis, j);
    int x_gt = emit2(L, BIR_GT, x, y, bt), y_gt = emit2(L, BIR_GT, y, x, bt);
    if (dtype_is_float(wt.dtype)) { /* NaN is the largest */
        int x_nan = emit2(L, BIR_NE, x, x, bt), y_nan = emit2(L, BIR_NE, y, y, bt);
        int x_num = emit1(L, BIR_NOT, x_nan, bt), y_num = emit1(L, BIR_NOT, y_nan, bt);
        x_gt = emit2(L, BIR_OR, x_gt, emit2(L, BIR_AND, x_nan, y_num, bt), bt);
        y_gt = emit2(L, BIR_OR, y_gt, emit2(L, BIR_AND, y_nan, x_num, bt), bt);
    }
    int take_y = emit(L, BIR_SELECT, (int[]){keep_min, x_gt, y_gt}, 3, bt);
    return emit(L, BIR_SELECT, (int[]){take_y, y, x}, 3, wt);
}

/* Sorts every run of `run` elements along the axis, runs alternating
 * ascending and descending (all descending when descending_last and the
 * run is the whole axis). */
static int sort_runs(Lower *L, int x, int axis, int idx, int32_t run, bool descending) {
    BlkType t = vtype(L, x), bt = type_with_shape(type_scalar(DT_I1), t.rank, t.shape);
    for (int32_t k = 2; k <= run; k *= 2) {
        int ascending_run = bit_clear(L, idx, k); /* runs of k alternate direction; the last is one run */
        for (int32_t j = k / 2; j >= 1; j /= 2)
            x = compare_exchange(L, x, axis, j, emit2(L, descending ? BIR_NE : BIR_EQ, bit_clear(L, idx, j), ascending_run, bt));
    }
    return x;
}

static int lower_sort(Lower *L, const Expr *e) {
    const Expr *ax = arg(e, 1), *desc = arg(e, 2);
    int axis = ax ? (int)ax->cv.i : 0;
    BlkType t = e->type;
    DType d = t.dtype == DT_I1 ? DT_I32 : t.dtype; /* i1 sorts as 0 and 1 */
    int x = convert(L, lower_expr(L, arg(e, 0)), d);
    x = sort_runs(L, x, axis, indices_along(L, t, axis), t.shape[axis], desc && desc->cv.i);
    return convert(L, x, t.dtype);
}

/* topk(x, k, axis): the k largest along the axis, in descending order, by a
 * partial bitonic network: runs of k sorted in alternating directions; then,
 * for each distance m = k, 2k, ..., n/2, every element keeps the larger of
 * itself and its partner m away (each run then holds the top k of two runs,
 * as a bitonic sequence) and the runs are merged again, in the direction the
 * next distance needs (descending at the last); finally the first k
 * elements. log2(k)(log2(k)+1)/2 + log2(n/k)(log2(k)+1) steps, against
 * sort's log2(n)(log2(n)+1)/2. */
static int lower_topk(Lower *L, const Expr *e) {
    const Expr *ax = arg(e, 2);
    int axis = ax ? (int)ax->cv.i : arg(e, 0)->type.rank - 1; /* Triton's default: the last */
    BlkType xt = arg(e, 0)->type, t = e->type;
    DType d = t.dtype == DT_I1 ? DT_I32 : t.dtype;
    BlkType wt = type_with_shape(type_scalar(d), xt.rank, xt.shape), bt = type_with_shape(type_scalar(DT_I1), xt.rank, xt.shape);
    int32_t n = xt.shape[axis], k = t.shape[axis];
    int x = convert(L, lower_expr(L, arg(e, 0)), d);
    int idx = indices_along(L, wt, axis);
    x = sort_runs(L, x, axis, idx, k, k == n);
    for (int32_t m = k; m < n; m *= 2) {
        int keep_max = broadcast(L, const_int(L, DT_I1, 0), bt);
        x = compare_exchange(L, x, axis, m, keep_max);
        int ascending = 2 * m < n ? bit_clear(L, idx, 2 * m) : keep_max; /* the last merge: descending */
        for (int32_t j = k / 2; j >= 1; j /= 2)
            x = compare_exchange(L, x, axis, j, emit2(L, BIR_EQ, bit_clear(L, idx, j), ascending, bt));
    }
    if (k < n) {
        int ops[2] = {x, indices_along(L, type_with_shape(type_scalar(d), t.rank, t.shape), axis)};
        BlkType gt = type_with_shape(type_scalar(d), t.rank, t.shape);
        BirOp *op = emit_op(L, BIR_GATHER, ops, 2, &gt);
        op->attr = axis;
        x = op->results[0];
    }
    return convert(L, x, t.dtype);
}

/* join(a, b): [..., 2], a at index 0 of the new last dimension, b at 1. */
static int lower_join(Lower *L, const Expr *e) {
    BlkType t = e->type, base = type_with_shape(t, t.rank - 1, t.shape);
    int ab[2];
    for (int i = 0; i < 2; i++) {
        int v = lower_as(L, arg(e, i), t.dtype, base);
        ab[i] = broadcast(L, base.rank ? expand_at(L, v, base.rank) : v, t);
    }
    int first = bit_clear(L, indices_along(L, t, t.rank - 1), 1);
    return emit(L, BIR_SELECT, (int[]){first, ab[0], ab[1]}, 3, t);
}

/* cat and interleave, through join on the operands made flat: joining a and
 * b of n elements gives [n, 2], a and b side by side; read row by row that
 * interleaves them (reshaped to [..., 2N]), and transposed first ([2, n]) it
 * is a, then b (reshaped to [2M, ...]). */
static int lower_cat_or_interleave(Lower *L, const Expr *e) {
    BlkType t = e->type;
    bool cat = e->u.call.builtin == BI_CAT;
    int32_t dims[BLK_MAX_RANK];
    for (int i = 0; i < t.rank; i++) dims[i] = t.shape[i];
    dims[cat ? 0 : t.rank - 1] /= 2;
    BlkType base = type_with_shape(t, t.rank, dims);
    int64_t n = type_numel(base);
    BlkType flat = type_with_shape(t, 1, (int32_t[]){(int32_t)n});
    BlkType joined = type_with_shape(t, 2, (int32_t[]){(int32_t)n, 2});
    int ab[2];
    for (int i = 0; i < 2; i++) {
        int v = lower_as(L, arg(e, i), t.dtype, base);
        if (base.rank != 1) v = emit1(L, BIR_RESHAPE, v, flat);
        ab[i] = broadcast(L, expand_at(L, v, 1), joined);
    }
    int first = bit_clear(L, indices_along(L, joined, 1), 1);
    int j = emit(L, BIR_SELECT, (int[]){first, ab[0], ab[1]}, 3, joined);
    if (cat) j = emit1(L, BIR_TRANS, j, type_with_shape(t, 2, (int32_t[]){2, (int32_t)n}));
    return emit1(L, BIR_RESHAPE, j, t);
}

/* trans and permute: the identity is no op; the last two dimensions swapped
 * is attr 0, any other order spelled out (trans_from). */
static int lower_trans(Lower *L, const Expr *e) {
    const Expr *x = arg(e, 0), *dims = arg(e, 1);
    int rank = x->type.rank, v = lower_expr(L, x);
    int64_t attr = 0;
    bool identity = true, swap = true;
    for (int d = 0; d < rank; d++) {
        int from = dims ? (int)((const Expr *)dims->u.shape.dims.items[d])->cv.i : trans_from(0, rank, d);
        identity &= from == d;
        swap &= from == trans_from(0, rank, d);
        attr |= (int64_t)from << (TRANS_FROM_SHIFT + 2 * d);
    }
    if (identity) return v;
    BirOp *op = emit_op(L, BIR_TRANS, &v, 1, &e->type);
    op->attr = swap ? 0 : attr | TRANS_PERMUTED;
    return op->results[0];
}

/* A load's or store's cache controls (checked by sema) as its op's attr. */
static int64_t cache_attr(const Expr *e) {
    const PtrVec *args = &e->u.call.args;
    const Expr *cache = args->len > 3 ? args->items[3] : NULL, *evict = args->len > 4 ? args->items[4] : NULL,
               *vol = args->len > 5 ? args->items[5] : NULL;
    int64_t attr = 0;
    if (cache) attr |= cache_modifier_from_name(cache->u.str.text, cache->u.str.len);
    if (evict) attr |= (int64_t)eviction_policy_from_name(evict->u.str.text, evict->u.str.len) << 3;
    if (vol && vol->cv.i) attr |= MEMORY_VOLATILE;
    return attr;
}

static int lower_builtin(Lower *L, const Expr *e) {
    const Expr *a0 = arg(e, 0), *a1 = arg(e, 1), *a2 = arg(e, 2);
    BlkType t = e->type;
    switch ((BuiltinId)e->u.call.builtin) {
    case BI_PROGRAM_ID: case BI_NUM_PROGRAMS: {
        BirOp *op = emit_op(L, e->u.call.builtin == BI_PROGRAM_ID ? BIR_PROGRAM_ID : BIR_NUM_PROGRAMS,
                            NULL, 0, &t);
        op->attr = a0->cv.i;
        return op->results[0];
    }
    case BI_ARANGE: {
        BirOp *op = emit_op(L, BIR_ARANGE, NULL, 0, &t);
        op->attr = a0->cv.i;
        return op->results[0];
    }
    case BI_ZEROS: return broadcast(L, emit_const(L, t.dtype, convert_scalar((ConstVal){.i = 0}, DT_I32, t.dtype)), t);
    case BI_FULL: return lower_as(L, a1, t.dtype, t);
    case BI_LOAD: {
        int ops[3] = {broadcast(L, lower_expr(L, a0), t), BIR_NONE, BIR_NONE};
        if (a1) ops[1] = lower_as(L, a1, DT_I1, t);
        if (a2 && a1) ops[2] = lower_as(L, a2, t.dtype, t); /* without a mask, other is moot */
        int r = emit(L, BIR_LOAD, ops, 3, t);
        L->f->values[r].def->attr = cache_attr(e);
        return r;
    }
    case BI_STORE: {
        int p = lower_expr(L, a0);
        BlkType vt = type_with_shape(type_scalar(a0->type.elem), a0->type.rank, a0->type.shape);
        int ops[3] = {p, lower_as(L, a1, vt.dtype, vt), a2 ? lower_as(L, a2, DT_I1, vt) : BIR_NONE};
        emit_op(L, BIR_STORE, ops, 3, NULL)->attr = cache_attr(e);
        return BIR_NONE;
    }
    case BI_SUM: return lower_reduction(L, e, BIR_REDUCE_SUM);
    case BI_CUMSUM: case BI_CUMPROD: { /* in the result's dtype (f32 for f16, i32 for i8 ...) */
        int axis = a1 ? (int)a1->cv.i : 0;
        bool reverse = a2 && a2->cv.i; /* from the end: flipped, scanned, flipped back */
        int x = convert(L, lower_expr(L, a0), t.dtype);
        if (reverse) x = emit_axis_op(L, BIR_FLIP, x, axis, 0);
        int r = emit_axis_op(L, e->u.call.builtin == BI_CUMSUM ? BIR_CUMSUM : BIR_CUMPROD, x, axis, 0);
        return reverse ? emit_axis_op(L, BIR_FLIP, r, axis, 0) : r;
    }
    case BI_MAX: return lower_reduction(L, e, BIR_REDUCE_MAX);
    case BI_MIN: return lower_reduction(L, e, BIR_REDUCE_MIN);
    case BI_ARGMAX: return lower_reduction(L, e, BIR_ARGMAX);
    case BI_ARGMIN: return lower_reduction(L, e, BIR_ARGMIN);
    case BI_REDUCE: case BI_ASSOCIATIVE_SCAN: return lower_combine(L, e);
    case BI_SORT: return lower_sort(L, e);
    case BI_TOPK: return lower_topk(L, e);
    case BI_INLINE_ASM_ELEMENTWISE: return lower_inline_asm(L, e);
    case BI_GATHER: {
        int ops[2] = {lower_expr(L, a0), lower_expr(L, a1)};
        BirOp *op = emit_op(L, BIR_GATHER, ops, 2, &t);
        op->attr = a2->cv.i;
        return op->results[0];
    }
    case BI_HISTOGRAM: {
        int ops[2] = {lower_expr(L, a0), a2 ? lower_as(L, a2, DT_I1, a0->type) : BIR_NONE};
        BirOp *op = emit_op(L, BIR_HISTOGRAM, ops, 2, &t);
        op->attr = a1->cv.i;
        return op->results[0];
    }
    case BI_FLIP: return emit_axis_op(L, BIR_FLIP, lower_expr(L, a0), a1 ? (int)a1->cv.i : 0, 0);
    case BI_RESHAPE: {
        int x = lower_expr(L, a0);
        return shape_equal(vtype(L, x), t) ? x : emit1(L, BIR_RESHAPE, x, t);
    }
    case BI_JOIN: return lower_join(L, e);
    case BI_CAT: case BI_INTERLEAVE: return lower_cat_or_interleave(L, e);
    case BI_SPLIT: {
        int x = lower_expr(L, a0), last = a0->type.rank - 1;
        L->values = arena_alloc(L->a, 2 * sizeof(int));
        for (int i = 0; i < 2; i++) L->values[i] = emit_axis_op(L, BIR_TAKE, x, last, i);
        return BIR_NONE;
    }
    case BI_WHERE: {
        int ops[3] = {lower_as(L, a0, DT_I1, t), lower_as(L, a1, t.dtype, t), lower_as(L, a2, t.dtype, t)};
        return emit(L, BIR_SELECT, ops, 3, t);
    }
    case BI_ABS: return emit1(L, BIR_ABS, lower_expr(L, a0), t);
    case BI_DOT: {
        int ops[3] = {lower_expr(L, a0), lower_expr(L, a1),
                      a2 ? lower_expr(L, a2) : broadcast(L, emit_const(L, t.dtype, (ConstVal){0}), t)};
        const Expr *prec = arg(e, 3), *imprecise = arg(e, 4);
        BirOp *op = emit_op(L, BIR_DOT, ops, 3, &t);
        op->attr = prec ? dot_precision_from_name(prec->u.str.text, prec->u.str.len) : DOT_IEEE;
        if (imprecise) op->attr |= imprecise->cv.i << DOT_IMPRECISE_SHIFT;
        return op->results[0];
    }
    case BI_TRANS: case BI_PERMUTE: return lower_trans(L, e);
    case BI_EXPAND_DIMS: return expand_at(L, lower_expr(L, a0), (int)a1->cv.i);
    case BI_BROADCAST_TO: return broadcast(L, lower_expr(L, a0), t);
    case BI_SHAPE: return BIR_NONE; /* a constant: sema folded it */
    case BI_MINIMUM: case BI_MAXIMUM:
        return emit2(L, e->u.call.builtin == BI_MINIMUM ? BIR_MIN : BIR_MAX,
                     lower_as(L, a0, t.dtype, t), lower_as(L, a1, t.dtype, t), t);
    case BI_CLAMP: /* maximum then minimum: NaN propagates as through both */
        return emit2(L, BIR_MIN, emit2(L, BIR_MAX, lower_as(L, a0, t.dtype, t), lower_as(L, a1, t.dtype, t), t),
                     lower_as(L, a2, t.dtype, t), t);
    case BI_UMULHI: return emit2(L, BIR_UMULHI, lower_as(L, a0, t.dtype, t), lower_as(L, a1, t.dtype, t), t);
    case BI_POW: { /* in f32, like the math functions */
        BlkType f32 = type_with_shape(type_scalar(DT_F32), t.rank, t.shape);
        return convert(L, emit2(L, BIR_POW, lower_as(L, a0, DT_F32, t), lower_as(L, a1, DT_F32, t), f32), t.dtype);
    }
    case BI_FMA: { /* in f32 (f64 in f64), one rounding */
        DType d = t.dtype == DT_F64 ? DT_F64 : DT_F32;
        BlkType ft = type_with_shape(type_scalar(d), t.rank, t.shape);
        int ops[3] = {lower_as(L, a0, d, t), lower_as(L, a1, d, t), lower_as(L, a2, d, t)};
        return convert(L, emit(L, BIR_FMA, ops, 3, ft), t.dtype);
    }
    case BI_CDIV: {
        /* (a + b - 1) / b */
        int a = lower_as(L, a0, t.dtype, t), b = lower_as(L, a1, t.dtype, t);
        int one = broadcast(L, const_int(L, t.dtype, 1), t);
        int num = emit2(L, BIR_SUB, emit2(L, BIR_ADD, a, b, t), one, t);
        return emit2(L, BIR_DIV, num, b, t);
    }
    case BI_ATOMIC_CAS: case BI_ATOMIC_RMW_CASES: {
        static const struct { BuiltinId builtin; BirOpcode op; } atomics[] = {
            {BI_ATOMIC_CAS, BIR_ATOMIC_CAS}, {BI_ATOMIC_XCHG, BIR_ATOMIC_XCHG}, {BI_ATOMIC_ADD, BIR_ATOMIC_ADD},
            {BI_ATOMIC_MAX, BIR_ATOMIC_MAX}, {BI_ATOMIC_MIN, BIR_ATOMIC_MIN},   {BI_ATOMIC_AND, BIR_ATOMIC_AND},
            {BI_ATOMIC_OR, BIR_ATOMIC_OR},   {BI_ATOMIC_XOR, BIR_ATOMIC_XOR},
        };
        BirOpcode code = BIR_ATOMIC_CAS;
        for (size_t i = 0; i < sizeof atomics / sizeof *atomics; i++)
            if (atomics[i].builtin == (BuiltinId)e->u.call.builtin) code = atomics[i].op;
        int p = lower_expr(L, a0);
        DType el = t.dtype;
        int ops[3] = {p, lower_as(L, a1, el, t), BIR_NONE};
        if (code == BIR_ATOMIC_CAS) ops[2] = lower_as(L, a2, el, t);
        else if (a2) ops[2] = lower_as(L, a2, DT_I1, t);
        BirOp *op = emit_op(L, code, ops, 3, &t);
        Expr *sem = e->u.call.args.len > 3 ? e->u.call.args.items[3] : NULL;
        Expr *scope = e->u.call.args.len > 4 ? e->u.call.args.items[4] : NULL;
        op->attr = (sem ? atomic_sem_from_name(sem->u.str.text, sem->u.str.len) : ATOMIC_ACQ_REL) |
                   (scope ? atomic_scope_from_name(scope->u.str.text, scope->u.str.len) : ATOMIC_GPU) << 2;
        return op->results[0];
    }
    case BI_RAND: case BI_RANDINT: case BI_RANDN: case BI_RAND4X: case BI_RANDINT4X: case BI_RANDN4X:
        return lower_random(L, e);
    case BI_DEBUG_BARRIER: emit_op(L, BIR_BARRIER, NULL, 0, NULL); return BIR_NONE;
    case BI_GDC_WAIT: case BI_GDC_LAUNCH_DEPENDENTS:
        emit_op(L, BIR_GRID_DEPENDENCY, NULL, 0, NULL)->attr =
            e->u.call.builtin == BI_GDC_WAIT ? GRID_WAIT : GRID_LAUNCH_DEPENDENTS;
        return BIR_NONE;
    case BI_GLOBALTIMER: case BI_CLOCK: case BI_SMID: {
        BirOp *op = emit_op(L, BIR_READ_COUNTER, NULL, 0, &t);
        op->attr = e->u.call.builtin == BI_GLOBALTIMER ? COUNTER_GLOBALTIMER
                   : e->u.call.builtin == BI_CLOCK     ? COUNTER_CLOCK
                                                       : COUNTER_SMID;
        return op->results[0];
    }
    case BI_STATIC_ASSERT: return BIR_NONE; /* checked by sema */
    case BI_DEVICE_ASSERT: {
        BlkType shape = a0->type;
        if (a2) shape_broadcast(a0->type, a2->type, &shape);
        int ops[2] = {lower_as(L, a0, DT_I1, shape), a2 ? lower_as(L, a2, DT_I1, shape) : BIR_NONE};
        BirOp *op = emit_op(L, BIR_ASSERT, ops, 2, NULL);
        op->text = a1 ? arena_strndup(L->a, a1->u.str.text, a1->u.str.len) : "";
        return BIR_NONE;
    }
    case BI_ASSUME: {
        int c = lower_expr(L, a0);
        emit_op(L, BIR_ASSUME, &c, 1, NULL);
        return BIR_NONE;
    }
    case BI_DEVICE_PRINT: {
        int n = e->u.call.args.len - 1;
        int *ops = arena_alloc(L->a, (size_t)(n ? n : 1) * sizeof(int));
        for (int i = 0; i < n; i++) ops[i] = lower_expr(L, e->u.call.args.items[i + 1]);
        BirOp *op = emit_op(L, BIR_PRINT, ops, n, NULL);
        op->text = arena_strndup(L->a, a0->u.str.text, a0->u.str.len);
        return BIR_NONE;
    }
    /* the math functions: the MATH_OP rows of ops.def */
#define BIR_OP(...)
#define MATH_OP(ID, fn) case BI_##ID: return lower_math(L, BIR_##ID, a0, t);
#include "ops.def"
    case BI_COUNT: break;
    }
    return BIR_NONE;
}

/* x[...]: each slice lo:hi a gather of the indices lo .. hi - 1 along its
 * axis (through shared memory on the GPU), then a dimension of size 1 at
 * each None, left to right (each at its place in the result). */
static int lower_index(Lower *L, const Expr *e) {
    int x = lower_expr(L, e->u.index.operand);
    for (int i = 0, axis = 0; i < e->u.index.n; i++) {
        if (e->u.index.is_none[i]) continue;
        BlkType t = vtype(L, x);
        int64_t size = t.shape[axis], lo = e->u.index.lo[i] ? e->u.index.lo[i]->cv.i : 0,
                hi = e->u.index.hi[i] ? e->u.index.hi[i]->cv.i : size;
        if (e->u.index.is_slice[i] && hi - lo < size) {
            BlkType rt = t;
            rt.shape[axis] = (int32_t)(hi - lo);
            BlkType it = type_with_shape(type_scalar(DT_I32), rt.rank, rt.shape);
            int index = emit2(L, BIR_ADD, indices_along(L, it, axis), broadcast(L, const_int(L, DT_I32, lo), it), it);
            BirOp *op = emit_op(L, BIR_GATHER, (int[]){x, index}, 2, &rt);
            op->attr = axis;
            x = op->results[0];
        }
        axis++;
    }
    for (int i = 0; i < e->u.index.n; i++)
        if (e->u.index.is_none[i]) x = expand_at(L, x, i);
    return x;
}

/* An inlined helper's body, its parameters bound to the argument values. */
static void lower_helper_body(Lower *L, const Expr *e) {
    for (int i = 0; i < e->u.call.inline_params.len; i++)
        env_set(L, e->u.call.inline_params.items[i], lower_expr(L, e->u.call.args.items[i]));
    lower_stmt(L, e->u.call.inline_body);
}

static int lower_call(Lower *L, const Expr *e) {
    if (!e->u.call.helper) return lower_builtin(L, e);
    lower_helper_body(L, e);
    return e->u.call.inline_result ? lower_expr(L, e->u.call.inline_result) : BIR_NONE;
}

static int lower_expr_at(Lower *L, const Expr *e) {
    if (is_const_scalar(e)) return emit_const(L, e->type.dtype, e->cv);
    switch (e->kind) {
    case E_NAME: return env_get(L, e->u.name.sym);
    case E_UNARY: {
        int x = lower_expr(L, e->u.binary.lhs);
        return emit1(L, e->u.binary.op == OP_NEG ? BIR_NEG : BIR_NOT, x, e->type);
    }
    case E_BINARY: return lower_binary(L, e);
    case E_CAST: {
        int x = lower_expr(L, e->u.cast.operand);
        if (e->type.dtype != DT_PTR) return convert(L, x, e->type.dtype);
        if (type_equal(vtype(L, x), e->type)) return x;
        return emit1(L, BIR_PTR_CAST, x, e->type);
    }
    case E_INDEX: return lower_index(L, e);
    case E_CALL: return lower_call(L, e);
    default: return BIR_NONE; /* strings, types and shapes are arguments, not values */
    }
}

/* Word `word` of the Philox draw at (seed, offset): a u32, or as a uniform f32 (rand). */
static int random_word(Lower *L, bool uniform, int seed, int off, int word, BlkType t) {
    int ops[2] = {seed, off};
    BirOp *op = emit_op(L, uniform ? BIR_RAND : BIR_RANDINT, ops, 2, &t);
    op->attr = word;
    return op->results[0];
}

/* Two normal samples from the uniforms u1, u2 (Box-Muller, as Triton's
 * pair_uniform_to_normal): r cos(2 pi u2) and r sin(2 pi u2), r = sqrt(-2 log(max(u1, 1e-7))). */
static void pair_to_normal(Lower *L, int u1, int u2, BlkType t, int out[2]) {
    int lo = broadcast(L, emit_const(L, DT_F32, (ConstVal){.f = 1.0e-7}), t);
    int two_pi = broadcast(L, emit_const(L, DT_F32, (ConstVal){.f = 6.283185307179586}), t);
    int minus_two = broadcast(L, emit_const(L, DT_F32, (ConstVal){.f = -2.0}), t);
    int th = emit2(L, BIR_MUL, two_pi, u2, t);
    int r = emit1(L, BIR_SQRT, emit2(L, BIR_MUL, minus_two, emit1(L, BIR_LOG, emit2(L, BIR_MAX, lo, u1, t), t), t), t);
    out[0] = emit2(L, BIR_MUL, r, emit1(L, BIR_COS, th, t), t);
    out[1] = emit2(L, BIR_MUL, r, emit1(L, BIR_SIN, th, t), t);
}

/* rand, randint, randn and their 4-wide forms (Triton's tl.random): words of
 * one Philox4x32-10 draw per offset. randn is words 0 and 1 through
 * Box-Muller; randn4x words 0-1 and 2-3. */
static int lower_random(Lower *L, const Expr *e) {
    BuiltinId id = (BuiltinId)e->u.call.builtin;
    const Expr *a1 = e->u.call.args.items[1];
    int seed = convert(L, lower_expr(L, e->u.call.args.items[0]), DT_I64);
    int off = lower_expr(L, a1);
    bool ints = id == BI_RANDINT || id == BI_RANDINT4X;
    BlkType t = type_with_shape(type_scalar(ints ? DT_U32 : DT_F32), a1->type.rank, a1->type.shape);
    if (id == BI_RAND || id == BI_RANDINT) return random_word(L, !ints, seed, off, 0, t);
    int u[4];
    int words = id == BI_RANDN ? 2 : 4;
    for (int w = 0; w < words; w++) u[w] = random_word(L, !ints, seed, off, w, t);
    if (id == BI_RANDN) {
        int n[2];
        pair_to_normal(L, u[0], u[1], t, n);
        return n[0];
    }
    L->values = arena_alloc(L->a, 4 * sizeof(int));
    if (id == BI_RANDN4X) {
        pair_to_normal(L, u[0], u[1], t, L->values);
        pair_to_normal(L, u[2], u[3], t, L->values + 2);
    } else {
        memcpy(L->values, u, sizeof u);
    }
    return BIR_NONE;
}

static int lower_expr(Lower *L, const Expr *e) {
    Span saved = L->at;
    L->at = e->span;
    int v = lower_expr_at(L, e);
    L->at = saved;
    return v;
}

/* ------------------------------------------------------------- statements */

static void lower_for(Lower *L, const Stmt *s) {
    if (s->u.for_.is_static) { /* the copies in order, each with its constant loop variable */
        lower_stmt(L, s->u.for_.unrolled);
        return;
    }
    DType d = s->u.for_.sym->type.dtype;
    int ops_fixed[3] = {
        convert(L, lower_expr(L, s->u.for_.start), d),
        convert(L, lower_expr(L, s->u.for_.end), d),
        s->u.for_.step ? convert(L, lower_expr(L, s->u.for_.step), d) : const_int(L, d, 1),
    };
    PtrVec assigned = {0};
    collect_assigned(L, s->u.for_.body, &assigned);
    const Symbol **carried = arena_alloc(L->a, (size_t)(assigned.len + 1) * sizeof *carried);
    int n = carried_symbols(L, &assigned, carried);
    int *ops = arena_alloc(L->a, (size_t)(n + 3) * sizeof(int));
    memcpy(ops, ops_fixed, sizeof ops_fixed);
    for (int i = 0; i < n; i++) ops[3 + i] = env_get(L, carried[i]);
    L->at = s->span;
    BirOp *op = emit_op(L, BIR_FOR, ops, n + 3, NULL);
    const Expr *step = s->u.for_.step;
    op->attr = (step && step->is_const && step->cv.i < 0 && dtype_is_signed(d) ? FOR_DESCENDING : 0) |
               (s->u.for_.unroll ? s->u.for_.unroll->cv.i << FOR_UNROLL_SHIFT : 0);
    int env_len = L->env_len;
    int *saved = env_save(L);
    op->regions[0] = lower_region(L, s->u.for_.body, carried, n, true, s->u.for_.sym, type_scalar(d));
    op->nregions = 1;
    env_restore(L, saved, env_len);
    bind_results(L, op, carried, n);
}

static void lower_while(Lower *L, const Stmt *s) {
    PtrVec assigned = {0};
    collect_assigned(L, s->u.while_.body, &assigned);
    const Symbol **carried = arena_alloc(L->a, (size_t)(assigned.len + 1) * sizeof *carried);
    int n = carried_symbols(L, &assigned, carried);
    int *ops = arena_alloc(L->a, (size_t)(n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) ops[i] = env_get(L, carried[i]);
    BirOp *op = emit_op(L, BIR_WHILE, ops, n, NULL);
    int env_len = L->env_len;
    int *saved = env_save(L);
    /* cond region: evaluates the condition on the carried values */
    BirBlock *cond = bir_block_new(L->f);
    for (int i = 0; i < n; i++)
        env_set(L, carried[i], bir_block_add_arg(L->f, cond, carried[i]->type, carried[i]->name));
    BirBlock *outer = L->block;
    L->block = cond;
    int c = lower_expr(L, s->u.while_.cond);
    L->at = s->u.while_.cond->span;
    emit_op(L, BIR_CONDITION, &c, 1, NULL);
    L->block = outer;
    op->regions[0] = cond;
    env_restore(L, saved, env_len);
    op->regions[1] = lower_region(L, s->u.while_.body, carried, n, true, NULL, type_scalar(DT_VOID));
    op->nregions = 2;
    env_restore(L, saved, env_len);
    bind_results(L, op, carried, n);
}

static void lower_if(Lower *L, const Stmt *s) {
    const Expr *cond = s->u.if_.cond;
    if (cond->is_const) {
        /* a compile-time condition: only the branch taken exists */
        const Stmt *taken = ast_const_if_taken(s);
        if (taken) lower_stmt(L, taken);
        return;
    }
    int c = lower_expr(L, cond);
    PtrVec assigned = {0};
    collect_assigned(L, s->u.if_.then_, &assigned);
    collect_assigned(L, s->u.if_.else_, &assigned);
    const Symbol **carried = arena_alloc(L->a, (size_t)(assigned.len + 1) * sizeof *carried);
    int n = carried_symbols(L, &assigned, carried);
    L->at = s->span;
    BirOp *op = emit_op(L, BIR_IF, &c, 1, NULL);
    int env_len = L->env_len;
    int *saved = env_save(L);
    static const Stmt empty = {.kind = S_BLOCK};
    for (int r = 0; r < 2; r++) {
        const Stmt *branch = r == 0 ? s->u.if_.then_ : s->u.if_.else_;
        op->regions[r] = lower_region(L, branch ? branch : &empty, carried, n, false, NULL,
                                      type_scalar(DT_VOID));
        env_restore(L, saved, env_len);
    }
    op->nregions = 2;
    bind_results(L, op, carried, n);
}

static void lower_stmt(Lower *L, const Stmt *s) {
    if (!s || L->terminated) return;
    L->at = s->span;
    switch (s->kind) {
    case S_LET: {
        if (s->u.let.parts.len) { /* let (a, b) = f(...): the body (or builtin) once, then each value */
            const Expr *init = s->u.let.init, *values = init->u.call.inline_result;
            bool helper = init->u.call.helper != NULL;
            if (helper) lower_helper_body(L, init);
            else lower_expr(L, init);
            int *builtin_values = L->values;
            for (int i = 0; i < s->u.let.parts.len; i++) {
                const Symbol *part = ((const Stmt *)s->u.let.parts.items[i])->u.let.sym;
                if (part->is_const) continue;
                int v = helper ? lower_expr(L, values->u.shape.dims.items[i]) : builtin_values[i];
                env_set(L, part, coerce(L, v, part->type.dtype, part->type));
            }
            return;
        }
        const Symbol *sym = s->u.let.sym;
        if (sym->is_const) return; /* its uses fold to constants */
        int v = lower_expr(L, s->u.let.init);
        env_set(L, sym, coerce(L, v, sym->type.dtype, sym->type));
        return;
    }
    case S_ASSIGN: {
        int v = lower_expr(L, s->u.assign.value);
        const Symbol *sym = s->u.assign.sym;
        L->at = s->span;
        env_set(L, sym, coerce(L, v, sym->type.dtype, sym->type));
        return;
    }
    case S_FOR: lower_for(L, s); return;
    case S_WHILE: lower_while(L, s); return;
    case S_IF: lower_if(L, s); return;
    case S_RETURN:
        emit_op(L, BIR_RETURN, NULL, 0, NULL);
        L->terminated = true;
        return;
    case S_EXPR: lower_expr(L, s->u.expr.expr); return;
    case S_BLOCK:
        for (int i = 0; i < s->u.block.stmts.len && !L->terminated; i++)
            lower_stmt(L, s->u.block.stmts.items[i]);
        return;
    }
}

/* ---------------------------------------------------------------- kernels */

static const char *describe_consts(Arena *a, const KernelDef *k) {
    const char *text = "";
    for (int i = 0; i < k->params.len; i++) {
        const Param *p = k->params.items[i];
        if (!p->is_const || !p->sym) continue;
        const Symbol *s = p->sym;
        const char *sep = *text ? ", " : "";
        DType d = s->type.dtype;
        if (d == DT_TYPE) text = arena_printf(a, "%s%s%s = %s", text, sep, p->name, dtype_name(s->cv.dtype));
        else if (d == DT_STRING) text = arena_printf(a, "%s%s%s = \"%s\"", text, sep, p->name, s->cv.str);
        else if (dtype_is_float(d)) text = arena_printf(a, "%s%s%s = %.9g", text, sep, p->name, s->cv.f);
        else if (d == DT_I1) text = arena_printf(a, "%s%s%s = %s", text, sep, p->name, s->cv.i ? "true" : "false");
        else text = arena_printf(a, "%s%s%s = %lld", text, sep, p->name, (long long)s->cv.i);
    }
    return text;
}

static BirFunction *lower_kernel(Arena *a, const Module *m, const KernelDef *k) {
    BirFunction *f = arena_alloc(a, sizeof *f);
    f->arena = a;
    f->name = k->name;
    f->span = k->name_span;
    f->src = m->src;
    f->consts = describe_consts(a, k);
    f->body = bir_block_new(f);
    Lower L = {.a = a, .f = f, .block = f->body};
    int nruntime = 0;
    for (int i = 0; i < k->params.len; i++) nruntime += !((Param *)k->params.items[i])->is_const;
    f->params = arena_alloc(a, (size_t)(nruntime ? nruntime : 1) * sizeof *f->params);
    for (int i = 0; i < k->params.len; i++) {
        const Param *p = k->params.items[i];
        if (p->is_const) continue;
        BirParam *bp = &f->params[f->nparams++];
        bp->name = p->name;
        bp->type = p->sym->type;
        bp->align = p->align;
        bp->multiple_of = p->multiple_of;
        bp->equal_one = p->equal_one;
        bp->is_none = p->is_none;
        bp->value = bir_block_add_arg(f, f->body, p->sym->type, p->name);
        env_set(&L, p->sym, bp->value);
    }
    lower_stmt(&L, k->body);
    if (!L.terminated) {
        /* the implicit return sits at the closing brace */
        const char *c = m->src->text + k->body->span.offset;
        const char *end = c + k->body->span.len;
        L.at = (Span){.offset = k->body->span.offset, .len = 1, .line = k->body->span.line, .col = k->body->span.col};
        for (; c + 1 < end; c++, L.at.offset++, L.at.col++)
            if (*c == '\n') L.at.line++, L.at.col = 0;
        emit_op(&L, BIR_RETURN, NULL, 0, NULL);
    }
    return f;
}

BirModule *lower_module(Arena *a, const Module *m) {
    BirModule *bm = arena_alloc(a, sizeof *bm);
    bm->kernels = arena_alloc(a, (size_t)(m->kernels.len ? m->kernels.len : 1) * sizeof(BirFunction *));
    for (int i = 0; i < m->kernels.len; i++)
        bm->kernels[bm->nkernels++] = lower_kernel(a, m, m->kernels.items[i]);
    for (int i = 0; i < bm->nkernels; i++) {
        bir_remove_dead_ops(bm->kernels[i]);
        bir_hoist_invariant_shapes(bm->kernels[i]);
    }
    return bm;
}
