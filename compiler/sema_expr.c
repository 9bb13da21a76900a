/* sema_expr.c: expressions (docs/language.md §4-§5): names, operators with
 * their dtype rules and constant folding, Triton's quotient and None and
 * string habits, casts, indexing, and calls (builtins, helpers, or the
 * Python spellings that blk writes otherwise). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

static void check_name(Sema *S, Expr *e) {
    Symbol *sym = sema_lookup(S, e->u.name.name);
    if (!sym) {
        if (strcmp(e->u.name.name, "inf") == 0 || strcmp(e->u.name.name, "nan") == 0) {
            e->type = type_scalar(DT_F32);
            e->weak = true;
            e->is_const = true;
            e->cv.f = e->u.name.name[0] == 'i' ? INFINITY : NAN;
            return;
        }
        if (sema_find_helper(S, e->u.name.name)) { /* a combine argument; require_value refuses it elsewhere */
            e->type = type_scalar(DT_HELPER);
            return;
        }
        if (strcmp(e->u.name.name, "None") == 0) {
            error(S, e->span, "'None' is only allowed inside an index such as x[:, None], or compared with a "
                  "pointer parameter ('p != None')");
            return;
        }
        sema_report_unknown_name(S, e->u.name.name, e->span);
        return;
    }
    if (sym->kind == SYM_PARAM && sym->param->is_none) {
        error(S, e->span, "'%s' is None in this build (passed None): use it only where '%s != None' is tested "
              "first ('if %s != None { ... }' is checked only where it is not None)", sym->name, sym->name, sym->name);
        return;
    }
    e->u.name.sym = sym;
    e->type = sym->type;
    e->weak = sym->weak;
    e->is_const = sym->is_const;
    e->cv = sym->cv;
}

static DType arith_dtype_error(Sema *S, Expr *e, const Expr *l, const Expr *r) {
    error(S, e->span, "invalid operands to '%s': %s and %s", op_name(e->u.binary.op),
          sema_tstr(S, l->type), sema_tstr(S, r->type));
    return DT_ERROR;
}

static bool is_comparison(OpKind op) {
    return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
}

/* A binary expression of two constants, folded with the interpreter's own
 * arithmetic (scalar_binary, numeric.c), so a folded value is the one the
 * program would compute. What the program would wrap or clamp is an error
 * here: a signed overflow (a weak literal widens to i64 instead, if that
 * holds it), a division by zero, a shift out of range. */
static void fold_binary(Sema *S, Expr *e, const Expr *l, const Expr *r) {
    if (!l->is_const || !r->is_const || e->type.rank != 0) return;
    DType od = e->u.binary.operand_dtype;
    OpKind op = e->u.binary.op;
    ConstVal a, b;
    if (!sema_fold_convert((Expr *)l, l->type, od, &a) || !sema_fold_convert((Expr *)r, r->type, od, &b))
        return;
    BirOpcode code = op_kind_opcode(op);
    if (is_comparison(op)) {
        sema_set_const_int(e, scalar_compare(code, a, b, od));
        return;
    }
    if (op == OP_LAND || op == OP_LOR) {
        if (!dtype_is_float(od)) sema_set_const_int(e, op == OP_LAND ? a.i && b.i : a.i || b.i);
        return;
    }
    bool is_float = dtype_is_float(od);
    if (is_float && op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV && op != OP_MOD) return;
    unsigned flags = 0;
    ConstVal v = scalar_binary(code, a, b, od, &flags);
    if (is_float) {
        sema_set_const_float(e, v.f);
        return;
    }
    if (flags & SCALAR_DIVIDE_BY_ZERO) {
        error(S, e->span, "division by zero in a constant expression");
        e->type.dtype = DT_ERROR;
        return;
    }
    if (flags & SCALAR_SHIFT_OUT_OF_RANGE) {
        error(S, e->span, "shift amount %lld is out of range for %s", (long long)b.i, dtype_name(od));
        e->type.dtype = DT_ERROR;
        return;
    }
    if (flags & SCALAR_SIGNED_OVERFLOW) {
        unsigned wide_flags = 0;
        ConstVal wide = e->weak ? scalar_binary(code, a, b, DT_I64, &wide_flags) : v;
        if (!e->weak || (wide_flags & SCALAR_SIGNED_OVERFLOW)) {
            error(S, e->span, "integer overflow in a constant expression of type %s", dtype_name(e->type.dtype));
            e->type.dtype = DT_ERROR;
            return;
        }
        e->type.dtype = DT_I64; /* literals widen as needed */
        v = wide;
    }
    sema_set_const_int(e, v.i);
}

/* Triton's '/' on two integers gives a float; blk's truncates toward zero,
 * as C's does. The two differ wherever the quotient then reaches a float
 * through integer arithmetic (`x * (i / n)`, `-(1 / n) * v`, `let q = i / n;
 * ... x * q`): the truncating division on that path, or NULL (none, a
 * constant that divides exactly, or an 'as' on the way, which says what is
 * meant). */
static const Expr *truncating_quotient(const Expr *e) {
    if (!e || !dtype_is_int((DType)e->type.dtype)) return NULL;
    switch (e->kind) {
    case E_NAME: return e->u.name.sym ? e->u.name.sym->quotient : NULL;
    case E_UNARY: return e->u.binary.op == OP_NEG ? truncating_quotient(e->u.binary.lhs) : NULL;
    case E_BINARY: {
        OpKind op = e->u.binary.op;
        const Expr *a = e->u.binary.lhs, *b = e->u.binary.rhs;
        if (op == OP_DIV && !(a->is_const && b->is_const && b->cv.i != 0 && a->cv.i % b->cv.i == 0)) return e;
        if (op != OP_DIV && op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_MOD) return NULL;
        const Expr *q = truncating_quotient(a);
        return q ? q : truncating_quotient(b);
    }
    default: return NULL;
    }
}

/* The quotient a binding keeps for the check above: only a constant divided by
 * an integer (`let inv_n = 1 / n`, Triton's habit for a reciprocal, which
 * blk makes 0 or 1). A binding of a runtime quotient (`let channels = C /
 * groups`) is an integer count in a port (Triton's would be a float that
 * could not index) and stays one, whatever it later divides. */
const Expr *sema_held_quotient(const Expr *v) {
    const Expr *q = truncating_quotient(v);
    return q && q->u.binary.lhs->is_const ? q : NULL;
}

static bool span_contains(Span outer, Span inner) {
    return inner.offset >= outer.offset && inner.offset + inner.len <= outer.offset + outer.len;
}

/* An error where an integer quotient becomes a float implicitly: Triton would
 * compute something else there, and blk never compiles a Triton spelling to a
 * different result silently. */
void sema_reject_truncating_quotient(Sema *S, const Expr *v, DType to) {
    if (!dtype_is_float(to)) return;
    const Expr *q = truncating_quotient(v);
    if (!q) return;
    bool here = span_contains(v->span, q->span);
    error(S, here ? q->span : v->span, "integer division truncates in blk, and %s quotient then becomes %s (Triton's "
          "'/' gives the exact quotient): write 'a as %s / b' for that, or '(a / b) as %s' to keep the truncation",
          here ? "the" : "this", dtype_name(to), dtype_name(to), dtype_name(to));
    if (!here) note(S, q->span, "the integer division is here");
}

static bool is_none_literal(const Expr *e) { return e->kind == E_NAME && strcmp(e->u.name.name, "None") == 0; }

/* `p == None` / `p != None` on a pointer parameter: a compile-time constant,
 * whether p was passed None in this build (Triton's `p is None` on a
 * pointer argument, which its specialization makes a constexpr). */
static void check_none_comparison(Sema *S, Expr *e) {
    Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    Expr *p = is_none_literal(l) ? r : l;
    OpKind op = e->u.binary.op;
    Symbol *sym = p->kind == E_NAME ? sema_lookup(S, p->u.name.name) : NULL;
    if ((op != OP_EQ && op != OP_NE) || !sym || sym->kind != SYM_PARAM || sym->type.dtype != DT_PTR) {
        error(S, e->span, "'None' compares only with a pointer parameter of the kernel, by '==' or '!=' (a "
              "pointer passed None is absent in that build)");
        return;
    }
    p->u.name.sym = sym; /* the name is not a use of the pointer: no load, nothing to pass */
    p->type = sym->type;
    e->type = type_scalar(DT_I1);
    e->u.binary.operand_dtype = DT_PTR;
    sema_set_const_int(e, sym->param->is_none == (op == OP_EQ));
}

/* A string literal's or a const str parameter's text, or NULL. */
static const char *const_string(const Expr *e, size_t *len) {
    if (e->kind == E_STRING) {
        *len = e->u.str.len;
        return e->u.str.text;
    }
    if (e->type.dtype == DT_STRING && e->is_const && e->cv.str) {
        *len = strlen(e->cv.str);
        return e->cv.str;
    }
    return NULL;
}

/* `MODE == "mean"` with MODE a const str parameter (Triton's string
 * constexpr): a compile-time i1, so `if MODE == "mean"` keeps one branch. */
static void check_string_comparison(Sema *S, Expr *e) {
    const Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    OpKind op = e->u.binary.op;
    if (l->type.dtype == DT_ERROR || r->type.dtype == DT_ERROR) return;
    size_t ln = 0, rn = 0;
    const char *ls = const_string(l, &ln), *rs = const_string(r, &rn);
    if ((op != OP_EQ && op != OP_NE) || !ls || !rs) {
        error(S, e->span, "strings compare only with each other, by '==' or '!=' (a const str parameter with a "
              "literal: MODE == \"mean\")");
        return;
    }
    e->type = type_scalar(DT_I1);
    e->u.binary.operand_dtype = DT_STRING;
    bool equal = ln == rn && memcmp(ls, rs, ln) == 0;
    sema_set_const_int(e, equal == (op == OP_EQ));
}

static void check_binary(Sema *S, Expr *e) {
    Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    if (is_none_literal(l) || is_none_literal(r)) {
        check_none_comparison(S, e);
        return;
    }
    sema_check_expr(S, l);
    sema_check_expr(S, r);
    OpKind op = e->u.binary.op;
    if (is_comparison(op) && (l->type.dtype == DT_STRING || r->type.dtype == DT_STRING)) {
        check_string_comparison(S, e);
        return;
    }
    if (l->type.dtype == DT_ERROR || r->type.dtype == DT_ERROR) return;
    if (!sema_require_value(S, l) || !sema_require_value(S, r)) return;
    if (sema_reject_fp8(S, l, op_name(op)) || sema_reject_fp8(S, r, op_name(op))) return;
    BlkType shape = {0};
    if (!sema_broadcast_or_error(S, e->span, l->type, r->type, &shape)) return;
    DType ld = l->type.dtype, rd = r->type.dtype;
    bool lp = ld == DT_PTR, rp = rd == DT_PTR;
    DType result = DT_ERROR, operand = DT_ERROR;

    if (lp || rp) {
        /* pointer arithmetic and pointer equality */
        if ((op == OP_ADD && ((lp && dtype_is_int(rd)) || (rp && dtype_is_int(ld)))) ||
            (op == OP_SUB && lp && dtype_is_int(rd))) {
            BlkType t = type_ptr(lp ? l->type.elem : r->type.elem);
            e->type = type_with_shape(t, shape.rank, shape.shape);
            e->u.binary.operand_dtype = lp ? rd : ld; /* the offset's type */
            return;
        }
        if ((op == OP_EQ || op == OP_NE) && lp && rp) {
            e->type = type_with_shape(type_scalar(DT_I1), shape.rank, shape.shape);
            e->u.binary.operand_dtype = DT_PTR;
            return;
        }
        if (op == OP_SUB && lp && rp)
            error(S, e->span, "pointers cannot be subtracted; keep integer offsets instead");
        else
            arith_dtype_error(S, e, l, r);
        return;
    }

    operand = dtype_promote(ld, l->weak, rd, r->weak);
    sema_reject_truncating_quotient(S, l, operand);
    sema_reject_truncating_quotient(S, r, operand);
    switch (op) {
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD:
        if (ld == DT_I1 || rd == DT_I1) {
            error(S, e->span, "arithmetic '%s' on i1 values; convert with 'as i32' first",
                  op_name(op));
            return;
        }
        result = operand;
        break;
    case OP_AND: case OP_OR: case OP_XOR:
        if (dtype_is_float(operand)) {
            arith_dtype_error(S, e, l, r);
            return;
        }
        result = operand;
        break;
    case OP_SHL: case OP_SHR:
        if (!dtype_is_int(operand)) {
            arith_dtype_error(S, e, l, r);
            return;
        }
        result = operand;
        break;
    case OP_LAND: case OP_LOR:
        if (ld != DT_I1 || rd != DT_I1) {
            error(S, e->span, "'%s' needs i1 operands, got %s and %s (compare with != 0 first)",
                  op_name(op), sema_tstr(S, l->type), sema_tstr(S, r->type));
            return;
        }
        result = DT_I1;
        break;
    case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
        result = DT_I1;
        break;
    default: return;
    }
    if (!sema_check_literal_fits(S, l, operand) || !sema_check_literal_fits(S, r, operand)) return;
    e->type = type_with_shape(type_scalar(result), shape.rank, shape.shape);
    e->u.binary.operand_dtype = operand;
    e->weak = l->weak && r->weak && result != DT_I1;
    fold_binary(S, e, l, r);
}

static void check_unary(Sema *S, Expr *e) {
    Expr *x = e->u.binary.lhs;
    sema_check_expr(S, x);
    if (!sema_require_value(S, x)) return;
    DType d = x->type.dtype;
    OpKind op = e->u.binary.op;
    if (sema_reject_fp8(S, x, op_name(op))) return;
    bool ok = op == OP_NEG ? sema_is_numeric(d) : op == OP_NOT ? d == DT_I1 : dtype_is_int(d) || d == DT_I1;
    if (!ok) {
        const char *need = op == OP_NEG ? "a number" : op == OP_NOT ? "an i1" : "an integer";
        error(S, e->span, "operand of unary '%s' must be %s, got %s", op_name(op), need,
              sema_tstr(S, x->type));
        return;
    }
    e->type = x->type;
    e->weak = x->weak;
    e->u.binary.operand_dtype = d;
    if (!x->is_const || x->type.rank != 0) return;
    if (dtype_is_float(d)) {
        if (d == DT_F32) sema_set_const_float(e, -x->cv.f);
        return;
    }
    int64_t v = x->cv.i;
    /* the result wrapped to d, as convert_scalar normalizes integers */
    if (op == OP_NOT) v = !v;
    else if (op == OP_BITNOT) v = d == DT_I1 ? !v : convert_scalar((ConstVal){.i = ~v}, DT_I64, d).i;
    else if (v == INT64_MIN || (!x->weak && dtype_is_signed(d) && !sema_int_fits(d, -v))) {
        error(S, e->span, "integer overflow in a constant expression");
        e->type.dtype = DT_ERROR;
        return;
    } else v = convert_scalar((ConstVal){.i = (int64_t)(0 - (uint64_t)v)}, DT_I64, d).i;
    sema_set_const_int(e, v);
}

static void check_cast(Sema *S, Expr *e) {
    Expr *x = e->u.cast.operand;
    sema_check_expr(S, x);
    BlkType to;
    bool ok_to = sema_resolve_type(S, &e->u.cast.to, &to);
    if (!sema_require_value(S, x) || !ok_to) return;
    if (to.dtype == DT_TYPE) {
        error(S, e->u.cast.to.span, "cannot cast to 'type'");
        return;
    }
    bool from_ptr = x->type.dtype == DT_PTR, to_ptr = to.dtype == DT_PTR;
    if (from_ptr != to_ptr) {
        error(S, e->span, "cannot cast %s to %s: only pointer-to-pointer and number-to-number casts exist",
              sema_tstr(S, x->type), sema_tstr(S, to));
        return;
    }
    e->type = type_with_shape(to, x->type.rank, x->type.shape);
    if (!to_ptr && x->is_const && x->type.rank == 0) {
        ConstVal v;
        if (sema_fold_convert(x, x->type, to.dtype, &v)) {
            e->is_const = true;
            e->cv = v;
        }
    }
}

static void check_index(Sema *S, Expr *e) {
    Expr *x = e->u.index.operand;
    sema_check_expr(S, x);
    if (!sema_require_value(S, x)) return;
    int n = e->u.index.n, nones = 0, slices = 0;
    for (int i = 0; i < n; i++) nones += e->u.index.is_none[i], slices += e->u.index.is_slice[i];
    if ((nones == 0 && slices == 0) || n - nones != x->type.rank || n > BLK_MAX_RANK) {
        error(S, e->span,
              "an index has one ':' or slice 'lo:hi' per dimension of the %s value, and 'None' where a "
              "dimension of size 1 is added (x[:, None], x[2:6], x[:, 0:8]); the result may have at most %d "
              "dimensions",
              sema_tstr(S, x->type), BLK_MAX_RANK);
        return;
    }
    int32_t shape[BLK_MAX_RANK];
    for (int i = 0, src = 0; i < n; i++) {
        if (e->u.index.is_none[i]) {
            shape[i] = 1;
            continue;
        }
        int64_t size = x->type.shape[src++], bound[2] = {0, size};
        if (!e->u.index.is_slice[i]) {
            shape[i] = (int32_t)size;
            continue;
        }
        if (x->type.rank == 0) return; /* reported above */
        Expr *b[2] = {e->u.index.lo[i], e->u.index.hi[i]};
        for (int k = 0; k < 2; k++) {
            if (!b[k]) continue;
            sema_check_expr(S, b[k]);
            if (!sema_require_value(S, b[k])) return;
            if (!b[k]->is_const || b[k]->type.rank || !dtype_is_int(b[k]->type.dtype)) {
                error(S, b[k]->span, "a slice's bounds are compile-time integers (literals and const parameters)");
                return;
            }
            bound[k] = b[k]->cv.i;
        }
        int64_t len = bound[1] - bound[0];
        if (bound[0] < 0 || bound[1] > size || len <= 0 || (len & (len - 1))) {
            error(S, e->span, "the slice %lld:%lld of an axis of %lld elements must lie inside it and hold a power of "
                  "two of them (a block's size)", (long long)bound[0], (long long)bound[1], (long long)size);
            return;
        }
        shape[i] = (int32_t)len;
    }
    e->type = type_with_shape(x->type, n, shape);
}

/* ---- builtins ---- */

/* Python's functions in Triton code (`float("inf")`, `int(x)`, `tl.cast` once
 * its prefix is gone, `len(x)`): an error with blk's spelling. False for
 * other names. */
static bool python_call_hint(Sema *S, const Expr *e) {
    const char *name = e->u.call.name;
    const Expr *a0 = e->u.call.args.len == 1 ? e->u.call.args.items[0] : NULL;
    if (strcmp(name, "float") == 0 && a0 && a0->kind == E_STRING) {
        const char *t = a0->u.str.text;
        const char *blk = !strcmp(t, "inf") || !strcmp(t, "+inf") ? "inf" : !strcmp(t, "-inf") ? "-inf"
                          : !strcmp(t, "nan") ? "nan" : NULL;
        if (blk) {
            error(S, e->span, "'float(\"%s\")' is Python's: blk writes it '%s'", t, blk);
            return true;
        }
    }
    static const struct { const char *name, *hint; } hints[] = {
        {"float", "blk converts with 'as' ('x as f32') and writes the float constants 'inf', '-inf' and 'nan'"},
        {"int", "blk converts with 'as': write 'x as i32'"},
        {"cast", "blk converts with 'as': write 'x as TYPE'"},
        {"len", "a block's size along an axis is 'shape(x, axis)', a compile-time constant"},
    };
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++) {
        if (strcmp(name, hints[i].name) == 0) {
            error(S, e->u.call.name_span, "call to unknown function '%s': %s", name, hints[i].hint);
            return true;
        }
    }
    return false;
}

static void check_call(Sema *S, Expr *e) {
    HelperDef *h = sema_find_helper(S, e->u.call.name);
    if (h) {
        sema_check_helper_call(S, e, h);
        return;
    }
    int id = builtin_find(e->u.call.name);
    if (id >= 0) {
        sema_check_builtin(S, e, (BuiltinId)id);
        return;
    }
    for (int i = 0; i < e->u.call.args.len; i++) sema_check_expr(S, e->u.call.args.items[i]);
    if (sema_is_kernel_name(S, e->u.call.name))
        error(S, e->u.call.name_span, "kernel '%s' cannot be called; move shared code into a 'fn' helper",
              e->u.call.name);
    else if (python_call_hint(S, e))
        return;
    else if (builtin_nearest(e->u.call.name))
        error(S, e->u.call.name_span, "call to unknown function '%s'; did you mean '%s'?", e->u.call.name,
              builtin_nearest(e->u.call.name));
    else
        error(S, e->u.call.name_span, "call to unknown function '%s'", e->u.call.name);
}

void sema_check_expr(Sema *S, Expr *e) {
    switch (e->kind) {
    case E_INT:
        if (e->u.int_lit.invalid) return; /* the parser reported it */
        e->type = type_scalar(e->u.int_lit.is_u64                             ? DT_U64
                              : sema_int_fits(DT_I32, e->u.int_lit.value) ? DT_I32
                                                                          : DT_I64);
        e->weak = true;
        sema_set_const_int(e, e->u.int_lit.value);
        return;
    case E_FLOAT:
        e->type = type_scalar(DT_F32);
        e->weak = true;
        sema_set_const_float(e, e->u.float_lit);
        return;
    case E_BOOL:
        e->type = type_scalar(DT_I1);
        sema_set_const_int(e, e->u.bool_lit);
        return;
    case E_STRING: e->type = type_scalar(DT_STRING); return;
    case E_DTYPE:
        e->type = type_scalar(DT_TYPE);
        e->is_const = true;
        e->cv.dtype = e->u.dtype_lit;
        return;
    case E_NAME: check_name(S, e); return;
    case E_UNARY: check_unary(S, e); return;
    case E_BINARY: check_binary(S, e); return;
    case E_CAST: check_cast(S, e); return;
    case E_CALL: check_call(S, e); return;
    case E_INDEX: check_index(S, e); return;
    case E_SHAPE:
        for (int i = 0; i < e->u.shape.dims.len; i++) sema_check_expr(S, e->u.shape.dims.items[i]);
        e->type = type_scalar(DT_SHAPE);
        return;
    case E_TUPLE: /* a helper's values; check_helper_call takes them, anywhere else it is an error */
        for (int i = 0; i < e->u.shape.dims.len; i++) sema_check_expr(S, e->u.shape.dims.items[i]);
        e->type = type_scalar(DT_TUPLE);
        return;
    }
}

/* ------------------------------------------------------------- statements */
