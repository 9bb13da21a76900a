/* sema.c: names, constants, dtypes and shapes (docs/language.md §3-§6).
 * Every expression gets a BlkType; constant scalars are folded; helper calls
 * are inlined as checked copies; const parameters are bound from -D values
 * or defaults. An expression whose type is DT_ERROR already produced an
 * error, so its users stay quiet instead of cascading. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

typedef struct Scope Scope;
struct Scope {
    Scope *parent;
    PtrVec syms;    /* Symbol*, in declaration order */
    Symbol **table; /* open addressing by name once the scope is large, else NULL */
    int table_cap;  /* a power of two, at least twice syms.len */
};

typedef struct {
    const char *name;
    Span span;
} DeclSite;

typedef struct {
    Arena *a;
    Module *m;
    DiagEngine *de;
    const Source *src;
    Scope *scope;
    int next_sym_id;
    ConstDef *defs;
    int ndefs;
    PtrVec decls;     /* DeclSite* of the body being checked: for "used before definition" */
    int helper_depth; /* > 0 while checking an inlined helper body */
    int misplaced_returns;
    int inlined_calls; /* helper calls inlined into the kernel being checked */
    int static_copies; /* copies of static_range bodies made for that kernel, nested ones included */
    const KernelDef *kernel;
    /* how many runtime loops and branches, and compile-time branches taken, enclose the
     * statement being checked: a var may change its type in a compile-time branch with no
     * runtime one between it and the declaration (rebind_var) */
    int runtime_depth, const_if_depth;
} Sema;

/* Helpers are inlined at every call, so helpers that each call the next twice
 * grow a kernel exponentially: the budget turns that into an error at the
 * call, long before memory runs out. */
enum { MAX_INLINE_DEPTH = 32, MAX_INLINED_CALLS = 10000 };
/* static_range copies its body once per value, at most 1024 times a loop and 16384 times a
 * kernel (nested loops multiply: 1024 inside 1024 would be a million copies); an unroll
 * factor beyond 64 only grows code */
enum { MAX_STATIC_ITERATIONS = 1024, MAX_STATIC_COPIES = 16384, MAX_UNROLL = 64 };

/* Every diagnostic of sema; error() and note() name the severity (sema has
 * no warnings: a Triton spelling that means something else in blk is an error). */
static void report(Sema *S, DiagSeverity severity, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(Sema *S, DiagSeverity severity, Span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(S->de, severity, S->src, span, fmt, ap);
    va_end(ap);
}
#define error(S, ...) report(S, DIAG_ERROR, __VA_ARGS__)
#define note(S, ...) report(S, DIAG_NOTE, __VA_ARGS__)

/* Shape only, for messages: "[16]", "[4, 8]" or "scalar". */
static const char *sstr(Sema *S, BlkType t) {
    char buf[32];
    shape_str(t, buf, sizeof buf);
    return arena_strndup(S->a, buf, strlen(buf));
}

static const char *tstr(Sema *S, BlkType t) {
    char buf[64];
    type_str(t, buf, sizeof buf);
    return arena_strndup(S->a, buf, strlen(buf));
}

/* ---------------------------------------------------------------- scopes */

static void push_scope(Sema *S) {
    Scope *sc = arena_alloc(S->a, sizeof *sc);
    sc->parent = S->scope;
    S->scope = sc;
}

static void pop_scope(Sema *S) { S->scope = S->scope->parent; }

/* Scopes of a few names are scanned; a large one (a generated kernel may hold
 * 100k lets) gets a hash table, so checking stays linear in the program. */
enum { SCOPE_SCAN_MAX = 16 };

/* The slot for name: its symbol's, or the empty one where it would go. */
static Symbol **table_slot(Scope *sc, const char *name) {
    uint32_t mask = (uint32_t)sc->table_cap - 1;
    for (uint32_t i = str_hash(name) & mask;; i = (i + 1) & mask)
        if (!sc->table[i] || strcmp(sc->table[i]->name, name) == 0) return &sc->table[i];
}

static void table_insert_all(Sema *S, Scope *sc) {
    int cap = sc->table_cap ? sc->table_cap : 4 * SCOPE_SCAN_MAX;
    while (cap < 2 * sc->syms.len) cap *= 2;
    sc->table = arena_alloc(S->a, (size_t)cap * sizeof *sc->table); /* zeroed */
    sc->table_cap = cap;
    for (int i = 0; i < sc->syms.len; i++) { /* in order: a later redefinition wins, as in the scan */
        Symbol *sym = sc->syms.items[i];
        *table_slot(sc, sym->name) = sym;
    }
}

static Symbol *lookup_in(Scope *sc, const char *name) {
    if (sc->table) return *table_slot(sc, name);
    for (int i = sc->syms.len - 1; i >= 0; i--) {
        Symbol *s = sc->syms.items[i];
        if (strcmp(s->name, name) == 0) return s;
    }
    return NULL;
}

static Symbol *lookup(Sema *S, const char *name) {
    for (Scope *sc = S->scope; sc; sc = sc->parent) {
        Symbol *s = lookup_in(sc, name);
        if (s) return s;
    }
    return NULL;
}

static Symbol *declare(Sema *S, SymbolKind kind, const char *name, Span span, BlkType type) {
    Symbol *prev = lookup_in(S->scope, name);
    if (prev) {
        error(S, span, "redefinition of '%s' in the same scope", name);
        note(S, prev->decl, "'%s' was declared here", name);
    }
    Symbol *s = arena_alloc(S->a, sizeof *s);
    s->kind = kind;
    s->name = name;
    s->decl = span;
    s->type = type;
    s->id = S->next_sym_id++;
    s->runtime_depth = S->runtime_depth;
    s->const_if_depth = S->const_if_depth;
    Scope *sc = S->scope;
    ptrvec_push(S->a, &sc->syms, s);
    if (sc->table && 2 * sc->syms.len <= sc->table_cap) *table_slot(sc, name) = s;
    else if (sc->syms.len > SCOPE_SCAN_MAX) table_insert_all(S, sc);
    return s;
}

/* Collect every declaration in a body, so a failed lookup can tell "used
 * before its definition" and "out of scope" from "undeclared". */
static void collect_decls(Sema *S, const Stmt *s) {
    if (!s) return;
    switch (s->kind) {
    case S_LET:
        for (int i = 0; i < s->u.let.parts.len; i++) collect_decls(S, s->u.let.parts.items[i]);
        if (s->u.let.name && !s->u.let.parts.len) {
            DeclSite *d = arena_alloc(S->a, sizeof *d);
            d->name = s->u.let.name;
            d->span = s->u.let.name_span;
            ptrvec_push(S->a, &S->decls, d);
        }
        break;
    case S_FOR:
        if (s->u.for_.var) {
            DeclSite *d = arena_alloc(S->a, sizeof *d);
            d->name = s->u.for_.var;
            d->span = s->u.for_.var_span;
            ptrvec_push(S->a, &S->decls, d);
        }
        collect_decls(S, s->u.for_.body);
        break;
    case S_WHILE: collect_decls(S, s->u.while_.body); break;
    case S_IF:
        collect_decls(S, s->u.if_.then_);
        collect_decls(S, s->u.if_.else_);
        break;
    case S_BLOCK:
        for (int i = 0; i < s->u.block.stmts.len; i++) collect_decls(S, s->u.block.stmts.items[i]);
        break;
    default: break;
    }
}

/* Where `name` is declared in the body being checked (if not in scope here), or NULL. */
static const DeclSite *find_decl(Sema *S, const char *name) {
    for (int i = 0; i < S->decls.len; i++)
        if (strcmp(((DeclSite *)S->decls.items[i])->name, name) == 0) return S->decls.items[i];
    return NULL;
}

static void report_unknown_name(Sema *S, const char *name, Span use) {
    const DeclSite *d = find_decl(S, name);
    if (d) {
        if (d->span.offset > use.offset) {
            error(S, use, "'%s' is used before its definition", name);
            note(S, d->span, "'%s' is defined here", name);
        } else {
            error(S, use, "'%s' is not in scope here", name);
            note(S, d->span, "'%s' is defined here, in a block that has ended", name);
        }
        return;
    }
    const char *blk_name = dtype_name_for_triton(name);
    if (blk_name) error(S, use, "use of undeclared name '%s': the type is called '%s' in blk", name, blk_name);
    else error(S, use, "use of undeclared name '%s'", name);
}

/* ------------------------------------------------------------- constants */

static bool int_fits(DType t, int64_t v) { return !dtype_is_int(t) && t != DT_I1 ? true : dtype_fits_int(t, v); }

static void set_const_int(Expr *e, int64_t v) {
    e->is_const = true;
    e->cv.i = v;
}

static void set_const_float(Expr *e, double v) {
    e->is_const = true;
    e->cv.f = (double)(float)v;
}

/* Convert a constant to dtype `to` (for casts and weak-literal adoption),
 * with the semantics of `as` at run time (convert_scalar, shared with the
 * interpreter): float to integer truncates and saturates. Only f32 floats
 * are folded; f16 and bf16 stay runtime values. */
static bool fold_convert(Expr *e, BlkType from, DType to, ConstVal *out) {
    if ((dtype_is_float(to) && to != DT_F32) || dtype_is_fp8(to)) return false;
    *out = convert_scalar(e->cv, from.dtype, to);
    return true;
}

/* `v` rounded to the narrow float type `to` (f16, bf16, an fp8 type) as `as`
 * rounds it, through f32; `v` itself for f32 and f64. */
static double round_to_float_type(double v, DType to) {
    float f = (float)v;
    if (to == DT_F16) return f16_to_f32(f32_to_f16(f));
    if (to == DT_BF16) return bf16_to_f32(f32_to_bf16(f));
    const Fp8Format *fmt = fp8_format(to);
    return fmt ? fp8_to_f32(f32_to_fp8(f, fmt), fmt) : v;
}

/* A weak numeric literal (or a constant folded from weak literals) used as
 * the float type `to`: a finite value that rounds to infinity or NaN there
 * (70000.0 as f16) is an error. `inf` and `nan` themselves are fine. f32's
 * own range is the lexer's rule (parse_float_literal), f64 holds all. */
static bool check_float_literal_fits(Sema *S, Expr *lit, DType to) {
    double v;
    char text[64];
    bool is_int = dtype_is_int(lit->type.dtype), above_i64 = lit->type.dtype == DT_U64 && lit->cv.i < 0;
    if (is_int) {
        v = above_i64 ? (double)(uint64_t)lit->cv.i : (double)lit->cv.i;
        if (above_i64) snprintf(text, sizeof text, "%llu", (unsigned long long)lit->cv.i);
        else snprintf(text, sizeof text, "%lld", (long long)lit->cv.i);
    } else if (dtype_holds_float(lit->type.dtype)) {
        v = lit->cv.f;
        snprintf(text, sizeof text, "%.7g", v); /* an f32's digits: 3.4e+38, not 3.39999995e+38 */
    } else {
        return true;
    }
    if (!isfinite(v) || isfinite(round_to_float_type(v, to))) return true;
    const Fp8Format *fmt = fp8_format(to);
    double largest = to == DT_F16 ? (double)f16_to_f32(0x7bff)
                     : to == DT_BF16 ? (double)bf16_to_f32(0x7f7f)
                     : fmt ? (double)fp8_to_f32((uint8_t)fmt->max_finite, fmt) : (double)FLT_MAX;
    error(S, lit->span, "literal %s does not fit in %s: it would be %s (the largest %s is %.7g)", text, dtype_name(to),
          fmt && !fmt->ieee ? "NaN" : "infinity", dtype_name(to), largest);
    return false;
}

/* A weak literal used as dtype `to`: its value must fit. */
static bool check_literal_fits(Sema *S, Expr *lit, DType to) {
    if (lit->weak && lit->is_const && (dtype_is_float(to) || dtype_is_fp8(to)))
        return check_float_literal_fits(S, lit, to);
    if (!lit->weak || !lit->is_const || !dtype_is_int(lit->type.dtype)) return true;
    bool above_i64 = lit->type.dtype == DT_U64 && lit->cv.i < 0; /* its bits, 2^63 or more */
    if (above_i64 ? to != DT_U64 : dtype_is_int(to) && !int_fits(to, lit->cv.i)) {
        if (above_i64) {
            error(S, lit->span, "literal %llu does not fit in %s", (unsigned long long)lit->cv.i, dtype_name(to));
            return false;
        }
        error(S, lit->span, "literal %lld does not fit in %s", (long long)lit->cv.i, dtype_name(to));
        return false;
    }
    return true;
}

/* ----------------------------------------------------------- type helpers */

/* Reports a non-value (string, type, shape, void) used as a value. */
static bool require_value(Sema *S, const Expr *e) {
    switch (e->type.dtype) {
    case DT_ERROR: return false;
    case DT_VOID: error(S, e->span, "this call produces no value"); return false;
    case DT_TYPE: error(S, e->span, "a type is not a value here"); return false;
    case DT_STRING:
        error(S, e->span, e->kind == E_STRING ? "a string literal is not allowed here"
                                             : "a string is only compared, with == or != at compile time");
        return false;
    case DT_SHAPE:
        error(S, e->span, "a shape list is only allowed as the shape of zeros or full");
        return false;
    case DT_TUPLE:
        error(S, e->span, "several values are taken apart with 'let (a, b) = f(...)'; they are not one value");
        return false;
    case DT_HELPER:
        error(S, e->span, "'%s' is a helper: call it, or pass it as the combine of 'reduce' or "
              "'associative_scan'", e->kind == E_NAME ? e->u.name.name : "this");
        return false;
    default: return true;
    }
}

static bool is_numeric(DType d) { return dtype_is_int(d) || dtype_is_float(d); }

/* fp8 values only move and convert; arithmetic on them is refused here,
 * with the conversion to write. */
static bool reject_fp8(Sema *S, const Expr *x, const char *what) {
    if (!dtype_is_fp8((DType)x->type.dtype)) return false;
    error(S, x->span, "'%s' on %s: fp8 types are for storage and conversion; convert first ('x as f32', or f16)",
          what, tstr(S, x->type));
    return true;
}

static bool broadcast_or_error(Sema *S, Span span, BlkType a, BlkType b, BlkType *out) {
    if (!shape_broadcast(a, b, out)) {
        error(S, span, "shapes of %s and %s cannot be broadcast together", tstr(S, a), tstr(S, b));
        return false;
    }
    if (type_numel(*out) > BLK_MAX_NUMEL) {
        error(S, span, "a block of %lld elements exceeds the limit of %d",
              (long long)type_numel(*out), BLK_MAX_NUMEL);
        return false;
    }
    return true;
}

/* `value` broadcasts to exactly `target`'s shape (stores, masks, assignment). */
static bool fits_shape(BlkType value, BlkType target) {
    BlkType out = target;
    return shape_broadcast(value, target, &out) && shape_equal(out, target);
}

/* Resolve parsed type syntax; `allow_type_kw` for const parameter declarations. */
static bool resolve_type(Sema *S, const TypeSyntax *ts, BlkType *out) {
    if (ts->is_type_kw) {
        *out = type_scalar(DT_TYPE);
        return true;
    }
    DType dt = ts->dtype;
    if (ts->name && !ts->is_ptr && strcmp(ts->name, "str") == 0 && !lookup(S, "str")) {
        *out = type_scalar(DT_STRING); /* a const parameter's only (bind_const_param) */
        return true;
    }
    if (ts->name) {
        Symbol *sym = lookup(S, ts->name);
        if (!sym || sym->type.dtype != DT_TYPE) {
            const char *blk_name = dtype_name_for_triton(ts->name);
            if (sym) error(S, ts->span, "'%s' is not a type", ts->name);
            else if (blk_name) error(S, ts->span, "unknown type '%s': blk calls it '%s'", ts->name, blk_name);
            else error(S, ts->span, "unknown type '%s' (the types are %s, and the const type parameters in scope)",
                       ts->name, dtype_name_list());
            return false;
        }
        dt = sym->cv.dtype;
    }
    if (dt == DT_ERROR) return false;
    *out = ts->is_ptr ? type_ptr(dt) : type_scalar(dt);
    return true;
}

/* ------------------------------------------------------------ expressions */

static void check_expr(Sema *S, Expr *e);
static void check_stmt(Sema *S, Stmt *s);
static void check_block_in_scope(Sema *S, Stmt *block);

static HelperDef *find_helper(Sema *S, const char *name);
static void inline_helper(Sema *S, Expr *e, HelperDef *h);
static bool may_inline(Sema *S, Span at, HelperDef *h, const char *what);

static void check_name(Sema *S, Expr *e) {
    Symbol *sym = lookup(S, e->u.name.name);
    if (!sym) {
        if (strcmp(e->u.name.name, "inf") == 0 || strcmp(e->u.name.name, "nan") == 0) {
            e->type = type_scalar(DT_F32);
            e->weak = true;
            e->is_const = true;
            e->cv.f = e->u.name.name[0] == 'i' ? INFINITY : NAN;
            return;
        }
        if (find_helper(S, e->u.name.name)) { /* a combine argument; require_value refuses it elsewhere */
            e->type = type_scalar(DT_HELPER);
            return;
        }
        if (strcmp(e->u.name.name, "None") == 0) {
            error(S, e->span, "'None' is only allowed inside an index such as x[:, None], or compared with a "
                  "pointer parameter ('p != None')");
            return;
        }
        report_unknown_name(S, e->u.name.name, e->span);
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
          tstr(S, l->type), tstr(S, r->type));
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
    if (!fold_convert((Expr *)l, l->type, od, &a) || !fold_convert((Expr *)r, r->type, od, &b))
        return;
    BirOpcode code = op_kind_opcode(op);
    if (is_comparison(op)) {
        set_const_int(e, scalar_compare(code, a, b, od));
        return;
    }
    if (op == OP_LAND || op == OP_LOR) {
        if (!dtype_is_float(od)) set_const_int(e, op == OP_LAND ? a.i && b.i : a.i || b.i);
        return;
    }
    bool is_float = dtype_is_float(od);
    if (is_float && op != OP_ADD && op != OP_SUB && op != OP_MUL && op != OP_DIV && op != OP_MOD) return;
    unsigned flags = 0;
    ConstVal v = scalar_binary(code, a, b, od, &flags);
    if (is_float) {
        set_const_float(e, v.f);
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
    set_const_int(e, v.i);
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
static const Expr *held_quotient(const Expr *v) {
    const Expr *q = truncating_quotient(v);
    return q && q->u.binary.lhs->is_const ? q : NULL;
}

static bool span_contains(Span outer, Span inner) {
    return inner.offset >= outer.offset && inner.offset + inner.len <= outer.offset + outer.len;
}

/* An error where an integer quotient becomes a float implicitly: Triton would
 * compute something else there, and blk never compiles a Triton spelling to a
 * different result silently. */
static void reject_truncating_quotient(Sema *S, const Expr *v, DType to) {
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
    Symbol *sym = p->kind == E_NAME ? lookup(S, p->u.name.name) : NULL;
    if ((op != OP_EQ && op != OP_NE) || !sym || sym->kind != SYM_PARAM || sym->type.dtype != DT_PTR) {
        error(S, e->span, "'None' compares only with a pointer parameter of the kernel, by '==' or '!=' (a "
              "pointer passed None is absent in that build)");
        return;
    }
    p->u.name.sym = sym; /* the name is not a use of the pointer: no load, nothing to pass */
    p->type = sym->type;
    e->type = type_scalar(DT_I1);
    e->u.binary.operand_dtype = DT_PTR;
    set_const_int(e, sym->param->is_none == (op == OP_EQ));
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
    set_const_int(e, equal == (op == OP_EQ));
}

static void check_binary(Sema *S, Expr *e) {
    Expr *l = e->u.binary.lhs, *r = e->u.binary.rhs;
    if (is_none_literal(l) || is_none_literal(r)) {
        check_none_comparison(S, e);
        return;
    }
    check_expr(S, l);
    check_expr(S, r);
    OpKind op = e->u.binary.op;
    if (is_comparison(op) && (l->type.dtype == DT_STRING || r->type.dtype == DT_STRING)) {
        check_string_comparison(S, e);
        return;
    }
    if (l->type.dtype == DT_ERROR || r->type.dtype == DT_ERROR) return;
    if (!require_value(S, l) || !require_value(S, r)) return;
    if (reject_fp8(S, l, op_name(op)) || reject_fp8(S, r, op_name(op))) return;
    BlkType shape = {0};
    if (!broadcast_or_error(S, e->span, l->type, r->type, &shape)) return;
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
    reject_truncating_quotient(S, l, operand);
    reject_truncating_quotient(S, r, operand);
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
                  op_name(op), tstr(S, l->type), tstr(S, r->type));
            return;
        }
        result = DT_I1;
        break;
    case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
        result = DT_I1;
        break;
    default: return;
    }
    if (!check_literal_fits(S, l, operand) || !check_literal_fits(S, r, operand)) return;
    e->type = type_with_shape(type_scalar(result), shape.rank, shape.shape);
    e->u.binary.operand_dtype = operand;
    e->weak = l->weak && r->weak && result != DT_I1;
    fold_binary(S, e, l, r);
}

static void check_unary(Sema *S, Expr *e) {
    Expr *x = e->u.binary.lhs;
    check_expr(S, x);
    if (!require_value(S, x)) return;
    DType d = x->type.dtype;
    OpKind op = e->u.binary.op;
    if (reject_fp8(S, x, op_name(op))) return;
    bool ok = op == OP_NEG ? is_numeric(d) : op == OP_NOT ? d == DT_I1 : dtype_is_int(d) || d == DT_I1;
    if (!ok) {
        const char *need = op == OP_NEG ? "a number" : op == OP_NOT ? "an i1" : "an integer";
        error(S, e->span, "operand of unary '%s' must be %s, got %s", op_name(op), need,
              tstr(S, x->type));
        return;
    }
    e->type = x->type;
    e->weak = x->weak;
    e->u.binary.operand_dtype = d;
    if (!x->is_const || x->type.rank != 0) return;
    if (dtype_is_float(d)) {
        if (d == DT_F32) set_const_float(e, -x->cv.f);
        return;
    }
    int64_t v = x->cv.i;
    /* the result wrapped to d, as convert_scalar normalizes integers */
    if (op == OP_NOT) v = !v;
    else if (op == OP_BITNOT) v = d == DT_I1 ? !v : convert_scalar((ConstVal){.i = ~v}, DT_I64, d).i;
    else if (v == INT64_MIN || (!x->weak && dtype_is_signed(d) && !int_fits(d, -v))) {
        error(S, e->span, "integer overflow in a constant expression");
        e->type.dtype = DT_ERROR;
        return;
    } else v = convert_scalar((ConstVal){.i = (int64_t)(0 - (uint64_t)v)}, DT_I64, d).i;
    set_const_int(e, v);
}

static void check_cast(Sema *S, Expr *e) {
    Expr *x = e->u.cast.operand;
    check_expr(S, x);
    BlkType to;
    bool ok_to = resolve_type(S, &e->u.cast.to, &to);
    if (!require_value(S, x) || !ok_to) return;
    if (to.dtype == DT_TYPE) {
        error(S, e->u.cast.to.span, "cannot cast to 'type'");
        return;
    }
    bool from_ptr = x->type.dtype == DT_PTR, to_ptr = to.dtype == DT_PTR;
    if (from_ptr != to_ptr) {
        error(S, e->span, "cannot cast %s to %s: only pointer-to-pointer and number-to-number casts exist",
              tstr(S, x->type), tstr(S, to));
        return;
    }
    e->type = type_with_shape(to, x->type.rank, x->type.shape);
    if (!to_ptr && x->is_const && x->type.rank == 0) {
        ConstVal v;
        if (fold_convert(x, x->type, to.dtype, &v)) {
            e->is_const = true;
            e->cv = v;
        }
    }
}

static void check_index(Sema *S, Expr *e) {
    Expr *x = e->u.index.operand;
    check_expr(S, x);
    if (!require_value(S, x)) return;
    int n = e->u.index.n, nones = 0, slices = 0;
    for (int i = 0; i < n; i++) nones += e->u.index.is_none[i], slices += e->u.index.is_slice[i];
    if (nones > 1 || (nones == 0 && slices == 0) || n - nones != x->type.rank || n > BLK_MAX_RANK) {
        error(S, e->span,
              "an index has one ':' or slice 'lo:hi' per dimension of the %s value, and 'None' at most once "
              "(x[:, None], x[2:6], x[:, 0:8]); the result may have at most %d dimensions",
              tstr(S, x->type), BLK_MAX_RANK);
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
            check_expr(S, b[k]);
            if (!require_value(S, b[k])) return;
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

static const char *param_list(Sema *S, const BuiltinSig *sig) {
    const char *s = "";
    for (int i = 0; i < BUILTIN_MAX_PARAMS && sig->params[i]; i++)
        s = arena_printf(S->a, "%s%s%s", s, i ? ", " : "", sig->params[i]);
    return s;
}

/* Put named and positional arguments into parameter order. */
static bool bind_builtin_args(Sema *S, Expr *e, const BuiltinSig *sig) {
    int nargs = e->u.call.args.len;
    if (sig->max_args < 0) {
        for (int i = 0; i < nargs; i++) {
            if (e->u.call.arg_names.items[i]) {
                error(S, ((Expr *)e->u.call.args.items[i])->span, "'%s' takes no named arguments",
                      sig->name);
                return false;
            }
        }
        if (nargs < sig->min_args) {
            error(S, e->span, "'%s' needs at least %d argument", sig->name, sig->min_args);
            return false;
        }
        return true;
    }
    Expr *slots[BUILTIN_MAX_PARAMS] = {0};
    bool seen_named = false;
    for (int i = 0; i < nargs; i++) {
        Expr *arg = e->u.call.args.items[i];
        const char *name = e->u.call.arg_names.items[i];
        int slot = -1;
        if (name) {
            seen_named = true;
            for (int k = 0; k < sig->max_args; k++)
                if (strcmp(sig->params[k], name) == 0) slot = k;
            if (slot < 0) {
                error(S, arg->span, "'%s' has no parameter named '%s' (parameters: %s)", sig->name,
                      name, param_list(S, sig));
                return false;
            }
        } else {
            if (seen_named) {
                error(S, arg->span, "a positional argument cannot follow a named one");
                return false;
            }
            if (i >= sig->max_args) {
                error(S, arg->span, "too many arguments to '%s': it takes %s%d (%s), got %d",
                      sig->name, sig->min_args == sig->max_args ? "" : "at most ", sig->max_args,
                      param_list(S, sig), nargs);
                return false;
            }
            slot = i;
        }
        if (slots[slot]) {
            error(S, arg->span, "argument '%s' of '%s' is given twice", sig->params[slot], sig->name);
            return false;
        }
        slots[slot] = arg;
    }
    for (int k = 0; k < sig->min_args; k++) {
        if (!slots[k]) {
            error(S, e->span, "'%s' needs argument '%s' (parameters: %s)", sig->name,
                  sig->params[k], param_list(S, sig));
            return false;
        }
    }
    PtrVec args = {0}, names = {0};
    for (int k = 0; k < sig->max_args; k++) {
        ptrvec_push(S->a, &args, slots[k]);
        ptrvec_push(S->a, &names, NULL);
    }
    e->u.call.args = args;
    e->u.call.arg_names = names;
    return true;
}

static Expr *arg(Expr *e, int i) { return i < e->u.call.args.len ? e->u.call.args.items[i] : NULL; }

static bool const_int_arg(Sema *S, Expr *call, Expr *a, const char *what, int64_t *out) {
    if (!a->is_const || !(dtype_is_int(a->type.dtype) || a->type.dtype == DT_I1) || a->type.rank) {
        error(S, a->span, "%s of '%s' must be a compile-time integer constant", what,
              call->u.call.name);
        return false;
    }
    *out = a->cv.i;
    return true;
}

static bool dtype_arg(Sema *S, Expr *a, DType *out) {
    if (a->type.dtype != DT_TYPE) {
        if (a->type.dtype != DT_ERROR) error(S, a->span, "expected a type such as f32 here");
        return false;
    }
    *out = a->cv.dtype;
    return true;
}

static bool shape_arg(Sema *S, Expr *a, BlkType *out) {
    if (a->kind != E_SHAPE) {
        error(S, a->span, "expected a shape list such as [BLOCK] or [M, N]");
        return false;
    }
    int n = a->u.shape.dims.len;
    if (n < 1 || n > BLK_MAX_RANK) {
        error(S, a->span, "a block has 1 or 2 dimensions, this shape has %d", n);
        return false;
    }
    int32_t dims[BLK_MAX_RANK];
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        Expr *d = a->u.shape.dims.items[i];
        if (d->type.dtype == DT_ERROR) return false;
        if (!d->is_const || !dtype_is_int(d->type.dtype) || d->type.rank) {
            error(S, d->span, "block dimensions must be compile-time integer constants");
            return false;
        }
        if (!is_pow2(d->cv.i)) {
            error(S, d->span, "block dimension %lld is not a power of two", (long long)d->cv.i);
            return false;
        }
        if (d->cv.i > BLK_MAX_NUMEL || (numel *= d->cv.i) > BLK_MAX_NUMEL) {
            error(S, a->span, "a block of this shape exceeds the limit of %d elements",
                  BLK_MAX_NUMEL);
            return false;
        }
        dims[i] = (int32_t)d->cv.i;
    }
    *out = type_with_shape(*out, n, dims);
    return true;
}

/* A pointer (scalar or block) argument; reports otherwise. */
static bool pointer_arg(Sema *S, Expr *call, Expr *p) {
    if (p->type.dtype != DT_PTR) {
        error(S, p->span, "'%s' needs a pointer or a block of pointers, got %s", call->u.call.name,
              tstr(S, p->type));
        return false;
    }
    return true;
}

/* An optional mask that must broadcast to `target`'s shape. */
static bool mask_arg(Sema *S, Expr *call, Expr *m, BlkType target) {
    if (!m) return true;
    if (!require_value(S, m)) return false;
    if (m->type.dtype != DT_I1) {
        error(S, m->span, "the mask of '%s' must be i1, got %s", call->u.call.name, tstr(S, m->type));
        return false;
    }
    if (!fits_shape(m->type, target)) {
        error(S, m->span, "a mask of shape %s does not fit the pointer's shape %s in '%s'",
              sstr(S, m->type), sstr(S, target), call->u.call.name);
        return false;
    }
    return true;
}

static bool value_fits(Sema *S, Expr *call, Expr *v, BlkType target, const char *what) {
    if (!require_value(S, v)) return false;
    if (!fits_shape(v->type, target)) {
        error(S, v->span, "%s of shape %s does not fit the pointer's shape %s in '%s'", what,
              sstr(S, v->type), sstr(S, target), call->u.call.name);
        return false;
    }
    return true;
}

/* The axis argument ax of a builtin on block x: optional for rank 1. */
static bool axis_arg(Sema *S, Expr *e, Expr *ax, BlkType x, int64_t *axis) {
    *axis = 0;
    if (ax) {
        if (!const_int_arg(S, e, ax, "the axis", axis)) return false;
    } else if (x.rank > 1) {
        error(S, e->span, "'%s' of a rank-%d block needs an axis", e->u.call.name, x.rank);
        return false;
    }
    if (*axis < 0 || *axis >= x.rank) {
        error(S, ax ? ax->span : e->span, "axis %lld is out of range for the %s block", (long long)*axis,
              tstr(S, x));
        return false;
    }
    return true;
}

static void check_reduction(Sema *S, Expr *e, BuiltinId id) {
    Expr *x = arg(e, 0), *ax = arg(e, 1);
    if (!require_value(S, x)) return;
    if (x->type.rank == 0) {
        error(S, x->span, "'%s' reduces a block, got the scalar %s", e->u.call.name, tstr(S, x->type));
        return;
    }
    if (x->type.dtype == DT_PTR) {
        error(S, x->span, "'%s' cannot reduce pointers", e->u.call.name);
        return;
    }
    if (reject_fp8(S, x, e->u.call.name)) return;
    int64_t axis;
    if (!axis_arg(S, e, ax, x->type, &axis)) return;
    DType d = x->type.dtype;
    bool scan = id == BI_CUMSUM || id == BI_CUMPROD;
    /* keep_dims (sum, max, min, argmax, argmin) or reverse (cumsum, cumprod): a const i1; dtype
     * (sum, cumsum, cumprod): the type x is converted to first, as Triton's */
    Expr *flag = arg(e, 2), *to = arg(e, 3);
    if (flag && (!flag->is_const || flag->type.dtype != DT_I1 || flag->type.rank != 0)) {
        error(S, flag->span, "'%s' of '%s' must be a compile-time i1 (true or false)", scan ? "reverse" : "keep_dims",
              e->u.call.name);
        return;
    }
    if (to) {
        if (to->type.dtype != DT_TYPE || !to->is_const) {
            error(S, to->span, "'dtype' of '%s' must be a type (f32, i64, a const type parameter, ...)", e->u.call.name);
            return;
        }
        if (!is_numeric(to->cv.dtype) || dtype_is_fp8(to->cv.dtype)) {
            error(S, to->span, "'%s' cannot compute in %s", e->u.call.name, dtype_name(to->cv.dtype));
            return;
        }
        d = to->cv.dtype;
    }
    if (id == BI_SUM || scan) { /* as Triton: f16/bf16 sum in f32, integers narrower than 32 bits in (u)i32 */
        if (d == DT_F16 || d == DT_BF16) d = DT_F32;
        if (d == DT_I1 || (dtype_is_int(d) && dtype_bits(d) < 32)) d = dtype_is_unsigned(d) ? DT_U32 : DT_I32;
    } else if (id == BI_ARGMAX || id == BI_ARGMIN) {
        d = DT_I32;
    }
    bool keep = !scan && flag && flag->cv.i;
    int32_t shape[BLK_MAX_RANK];
    int n = 0;
    for (int i = 0; i < x->type.rank; i++)
        if (i != axis || scan || keep) shape[n++] = i == axis && keep ? 1 : x->type.shape[i];
    e->type = type_with_shape(type_scalar(d), n, shape);
}

/* dot(a, b, acc, input_precision): [M, K] x [K, N] (+ [M, N] f32 or i32) ->
 * [M, N] f32 (f16, bf16, f32 and fp8 operands) or i32 (i8 and u8). */
static void check_dot(Sema *S, Expr *e) {
    Expr *a = arg(e, 0), *b = arg(e, 1), *acc = arg(e, 2), *prec = arg(e, 3);
    if (!require_value(S, a) || !require_value(S, b) || (acc && !require_value(S, acc))) return;
    const char *names[2] = {"a", "b"};
    Expr *ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (ops[i]->type.rank != 2) {
            error(S, ops[i]->span, "'dot' multiplies 2-D blocks, but %s is %s", names[i], tstr(S, ops[i]->type));
            return;
        }
    }
    DType d = a->type.dtype, out = dot_result_dtype(d, b->type.dtype);
    if (out == DT_VOID) {
        error(S, e->span,
              "'dot' takes two f16, two bf16, two f32, two fp8 (f8e4m3, f8e5m2) or two 8-bit integer (i8, u8) "
              "blocks, got %s and %s; convert with 'as'",
              tstr(S, a->type), tstr(S, b->type));
        return;
    }
    int32_t M = a->type.shape[0], K = a->type.shape[1], N = b->type.shape[1];
    if (b->type.shape[0] != K) {
        error(S, e->span, "'dot' needs as many columns in a as rows in b: a is %s, b is %s", tstr(S, a->type),
              tstr(S, b->type));
        return;
    }
    /* tensor cores multiply 16 x 16 tiles of 16-bit elements, 16 x 32 of 8-bit ones */
    int32_t min_k = dot_k_step(d);
    for (int i = 0; i < 2; i++) {
        for (int dim = 0; dim < 2; dim++) {
            int32_t least = dim == 1 - i ? min_k : 16; /* k: a's columns, b's rows */
            if (ops[i]->type.shape[dim] >= least) continue;
            error(S, ops[i]->span,
                  "'dot' needs %s to be at least %d (tensor cores multiply %s), but %s is %s; use %d and mask "
                  "off the rows or columns you do not need",
                  least == 16 ? "every dimension" : "k", least, min_k == 32 ? "16 x 32 tiles of 8-bit elements" : "16 x 16 tiles",
                  names[i], tstr(S, ops[i]->type), least);
            return;
        }
    }
    int precision = DOT_IEEE;
    if (prec) {
        if (prec->kind != E_STRING) {
            error(S, prec->span, "'input_precision' is a string: \"ieee\", \"tf32\" or \"tf32x3\"");
            return;
        }
        precision = dot_precision_from_name(prec->u.str.text, prec->u.str.len);
        if (precision < 0) {
            error(S, prec->span, "unknown input_precision \"%.*s\" (expected \"ieee\", \"tf32\" or \"tf32x3\")",
                  (int)prec->u.str.len, prec->u.str.text);
            return;
        }
        if (precision != DOT_IEEE && d != DT_F32) {
            error(S, prec->span, "input_precision \"%.*s\" is for f32 operands; %s products are exact on tensor cores",
                  (int)prec->u.str.len, prec->u.str.text, dtype_name(d));
            return;
        }
    }
    BlkType result = type_with_shape(type_scalar(out), 2, (int32_t[]){M, N});
    if (acc && !type_equal(acc->type, result)) {
        error(S, acc->span, "the accumulator of 'dot' must be %s (the product's shape, in %s), got %s",
              tstr(S, result), dtype_name(out), tstr(S, acc->type));
        return;
    }
    e->type = result;
}

/* A string argument's choices as an error lists them, from its table: "a"
 * (the default), "b", "c" or "d". */
static const char *choices_text(Sema *S, const char *const *names, int n) {
    char *t = arena_printf(S->a, "\"%s\" (the default)", names[0]);
    for (int i = 1; i < n; i++) t = arena_printf(S->a, "%s%s\"%s\"", t, i + 1 == n ? " or " : ", ", names[i]);
    return t;
}

static void check_atomic(Sema *S, Expr *e, BuiltinId id) {
    Expr *p = arg(e, 0);
    if (!require_value(S, p) || !pointer_arg(S, e, p)) return;
    DType elem = p->type.elem;
    /* f32: add, exchange, max and min; f16 and bf16: add; the bitwise ones and cas on integers only */
    bool f32_ok = id == BI_ATOMIC_XCHG || id == BI_ATOMIC_ADD || id == BI_ATOMIC_MAX || id == BI_ATOMIC_MIN;
    bool half_ok = id == BI_ATOMIC_ADD;
    bool ok = elem == DT_I32 || elem == DT_U32 || elem == DT_I64 || elem == DT_U64 || (f32_ok && elem == DT_F32) ||
              (half_ok && (elem == DT_F16 || elem == DT_BF16));
    if (!ok) {
        error(S, p->span, "'%s' does not support elements of type %s (supported: i32, u32, i64, u64%s%s)",
              e->u.call.name, dtype_name(elem), f32_ok ? ", f32" : "", half_ok ? ", f16, bf16" : "");
        return;
    }
    BlkType shape = type_with_shape(type_scalar(elem), p->type.rank, p->type.shape);
    int nvals = id == BI_ATOMIC_CAS ? 2 : 1;
    for (int i = 1; i <= nvals; i++) {
        Expr *v = arg(e, i);
        if (!value_fits(S, e, v, shape, "the value")) return;
        if (v->type.dtype != elem && !(v->weak && is_numeric(v->type.dtype) &&
                                       dtype_promote(v->type.dtype, true, elem, false) == elem)) {
            error(S, v->span, "'%s' on %s elements needs a value of type %s, got %s; convert with 'as %s'",
                  e->u.call.name, dtype_name(elem), dtype_name(elem), tstr(S, v->type),
                  dtype_name(elem));
            return;
        }
        if (!check_literal_fits(S, v, elem)) return;
    }
    if (id != BI_ATOMIC_CAS && !mask_arg(S, e, arg(e, 2), shape)) return;
    static const struct {
        const char *name;
        const char *const *names; /* the first the default */
        int n;
        int (*parse)(const char *, size_t);
    } named[2] = {
        {"sem", atomic_sem_names, 4, atomic_sem_from_name},
        {"scope", atomic_scope_names, 3, atomic_scope_from_name},
    };
    for (int i = 0; i < 2; i++) {
        Expr *s = arg(e, 3 + i);
        if (!s) continue;
        if (s->kind != E_STRING) {
            error(S, s->span, "'%s' of '%s' is a string: %s", named[i].name, e->u.call.name,
                  choices_text(S, named[i].names, named[i].n));
            return;
        }
        if (named[i].parse(s->u.str.text, s->u.str.len) < 0) {
            error(S, s->span, "unknown %s \"%.*s\" (expected %s)", named[i].name, (int)s->u.str.len, s->u.str.text,
                  choices_text(S, named[i].names, named[i].n));
            return;
        }
    }
    e->type = shape;
}

/* A compile-time i1 flag (sort's descending, a scan's reverse); absent: false. */
static bool flag_arg(Sema *S, Expr *a, const char *what, bool *out) {
    *out = false;
    if (!a) return true;
    if (!a->is_const || a->type.dtype != DT_I1 || a->type.rank) {
        error(S, a->span, "%s must be a compile-time i1 constant (true or false)", what);
        return false;
    }
    *out = a->cv.i != 0;
    return true;
}

/* A named string argument among `allowed` (a subset of names, by index);
 * sets *out to its index (absent: 0, the default). */
static bool name_arg(Sema *S, Expr *call, Expr *a, const char *what, const char *const *names, const int *allowed,
                     int nallowed, int (*parse)(const char *, size_t), int *out) {
    *out = 0;
    if (!a) return true;
    const char *choices[8];
    for (int i = 0; i < nallowed; i++) choices[i] = names[allowed[i]];
    int found = a->kind == E_STRING ? parse(a->u.str.text, a->u.str.len) : -1;
    for (int i = 0; i < nallowed; i++)
        if (allowed[i] == found) {
            *out = found;
            return true;
        }
    if (a->kind != E_STRING)
        error(S, a->span, "'%s' of '%s' is a string: %s", what, call->u.call.name, choices_text(S, choices, nallowed));
    else
        error(S, a->span, "'%s' takes no %s \"%.*s\" (expected %s)", call->u.call.name, what, (int)a->u.str.len,
              a->u.str.text, choices_text(S, choices, nallowed));
    return false;
}

/* load's and store's cache_modifier, eviction_policy and (loads) volatile,
 * Triton's spellings, in the combinations PTX has: a cache operator other
 * than the default or an eviction priority, and volatile alone. */
static bool cache_controls_ok(Sema *S, Expr *e, bool is_load) {
    static const int load_caches[] = {CACHE_DEFAULT, CACHE_CA, CACHE_CG, CACHE_CV},
                     store_caches[] = {CACHE_DEFAULT, CACHE_WB, CACHE_CG, CACHE_CS, CACHE_WT},
                     evictions[] = {EVICT_NORMAL, EVICT_FIRST, EVICT_LAST};
    Expr *cache = arg(e, 3), *evict = arg(e, 4), *vol = is_load ? arg(e, 5) : NULL;
    int c, ev;
    bool is_volatile;
    if (!name_arg(S, e, cache, "cache_modifier", cache_modifier_names, is_load ? load_caches : store_caches,
                  is_load ? 4 : 5, cache_modifier_from_name, &c) ||
        !name_arg(S, e, evict, "eviction_policy", eviction_policy_names, evictions, 3, eviction_policy_from_name, &ev) ||
        !flag_arg(S, vol, "'volatile' of 'load'", &is_volatile))
        return false;
    if (!cache_is_default((CacheModifier)c) && ev != EVICT_NORMAL) {
        error(S, evict->span, "a %s takes a cache_modifier or an eviction_policy, not both: PTX has no access with "
              "both a cache operator and an eviction priority", is_load ? "load" : "store");
        return false;
    }
    if (is_volatile && (c != CACHE_DEFAULT || ev != EVICT_NORMAL)) {
        error(S, vol->span, "a volatile load takes no cache_modifier or eviction_policy (PTX's ld.volatile has none)");
        return false;
    }
    return true;
}

/* A made-up expression of type t (a combine's argument, one of a builtin's
 * several values): it only carries the type. */
static Expr *typed_placeholder(Sema *S, Span span, const char *name, BlkType t) {
    Expr *p = expr_new(S->a, E_NAME, span);
    p->u.name.name = name;
    p->type = t;
    return p;
}

/* e's several values, of types ts, for 'let (a, b) = ...'. */
static void set_values(Sema *S, Expr *e, const BlkType *ts, int n) {
    Expr *t = expr_new(S->a, E_TUPLE, e->span);
    for (int i = 0; i < n; i++) ptrvec_push(S->a, &t->u.shape.dims, typed_placeholder(S, e->span, "value", ts[i]));
    e->u.call.inline_result = t;
    e->type = type_scalar(DT_TUPLE);
}

/* What a combine function may not do: it runs as often, and on whichever
 * partial results, the compiler's order needs, one element at a time. */
static bool combine_expr_ok(Sema *S, const Expr *e, const char *fn);

static bool combine_stmt_ok(Sema *S, const Stmt *s, const char *fn) {
    if (!s) return true;
    switch (s->kind) {
    case S_LET: return combine_expr_ok(S, s->u.let.init, fn);
    case S_ASSIGN: return combine_expr_ok(S, s->u.assign.value, fn);
    case S_FOR:
        if (s->u.for_.is_static) return combine_stmt_ok(S, s->u.for_.unrolled, fn);
        return combine_expr_ok(S, s->u.for_.start, fn) && combine_expr_ok(S, s->u.for_.end, fn) &&
               combine_expr_ok(S, s->u.for_.step, fn) && combine_stmt_ok(S, s->u.for_.body, fn);
    case S_WHILE: return combine_expr_ok(S, s->u.while_.cond, fn) && combine_stmt_ok(S, s->u.while_.body, fn);
    case S_IF:
        if (s->u.if_.cond && s->u.if_.cond->is_const) return combine_stmt_ok(S, ast_const_if_taken(s), fn);
        return combine_expr_ok(S, s->u.if_.cond, fn) && combine_stmt_ok(S, s->u.if_.then_, fn) &&
               combine_stmt_ok(S, s->u.if_.else_, fn);
    case S_RETURN: return combine_expr_ok(S, s->u.ret.value, fn);
    case S_EXPR: return combine_expr_ok(S, s->u.expr.expr, fn);
    case S_BLOCK:
        for (int i = 0; i < s->u.block.stmts.len; i++)
            if (!combine_stmt_ok(S, s->u.block.stmts.items[i], fn)) return false;
        return true;
    }
    return true;
}

static bool combine_expr_ok(Sema *S, const Expr *e, const char *fn) {
    if (!e) return true;
    if (e->type.rank > 0) {
        error(S, e->span, "the combine '%s' works on single elements, but this is %s; it may not make blocks", fn,
              tstr(S, e->type));
        return false;
    }
    switch (e->kind) {
    case E_UNARY: case E_BINARY:
        return combine_expr_ok(S, e->u.binary.lhs, fn) && combine_expr_ok(S, e->u.binary.rhs, fn);
    case E_CAST: return combine_expr_ok(S, e->u.cast.operand, fn);
    case E_INDEX: return combine_expr_ok(S, e->u.index.operand, fn);
    case E_TUPLE:
        for (int i = 0; i < e->u.shape.dims.len; i++)
            if (!combine_expr_ok(S, e->u.shape.dims.items[i], fn)) return false;
        return true;
    case E_CALL:
        if (e->u.call.builtin >= 0 && builtin_has_effect((BuiltinId)e->u.call.builtin)) {
            error(S, e->span, "the combine '%s' may not call '%s': it runs as many times as the compiler's order "
                  "needs, on partial results, so it must compute a value and nothing else", fn, e->u.call.name);
            return false;
        }
        for (int i = 0; i < e->u.call.args.len; i++)
            if (!combine_expr_ok(S, e->u.call.args.items[i], fn)) return false;
        return combine_stmt_ok(S, e->u.call.inline_body, fn) && combine_expr_ok(S, e->u.call.inline_result, fn) &&
               combine_expr_ok(S, e->u.call.combine, fn);
    default: return true;
    }
}

enum { MAX_COMBINED = 8 };

/* The combine helper inlined on scalars: what it does, and that it returns
 * n values of the combined types. */
static void check_combine_result(Sema *S, Expr *e, Expr *call, HelperDef *h, Expr *const *inputs, int n) {
    inline_helper(S, call, h);
    if (call->type.dtype == DT_ERROR) return;
    const Expr *res = call->u.call.inline_result;
    if (!combine_stmt_ok(S, call->u.call.inline_body, h->name) || !combine_expr_ok(S, res, h->name)) return;
    int got = call->type.dtype == DT_TUPLE ? res->u.shape.dims.len : call->type.dtype == DT_VOID ? 0 : 1;
    if (got != n) {
        error(S, res ? res->span : h->name_span, "the combine '%s' returns %d value%s; combining %d value%s with "
              "'%s' needs %d", h->name, got, got == 1 ? "" : "s", n, n == 1 ? "" : "s", e->u.call.name, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        const Expr *r = n == 1 ? res : res->u.shape.dims.items[i];
        DType want = inputs[i]->type.dtype;
        bool converts = r->weak && is_numeric(r->type.dtype) && dtype_promote(r->type.dtype, true, want, false) == want;
        if (r->type.dtype != want && !converts) {
            error(S, r->span, "the combine '%s' must return %s here (the type of what it combines), got %s; convert "
                  "with 'as %s'", h->name, dtype_name(want), tstr(S, r->type), dtype_name(want));
            return;
        }
        if (!check_literal_fits(S, (Expr *)r, want)) return;
    }
}

/* A made-up call of helper h on scalars of the types of inputs[0 .. n - 1],
 * repeated over h's parameters (a combine's 2n: the left's, then the right's). */
static Expr *scalar_call(Sema *S, Span at, HelperDef *h, Expr *const *inputs, int n) {
    Expr *call = expr_new(S->a, E_CALL, at);
    call->u.call.name = h->name;
    call->u.call.name_span = at;
    call->u.call.builtin = -1;
    for (int i = 0; i < h->params.len; i++) {
        Param *prm = h->params.items[i];
        ptrvec_push(S->a, &call->u.call.args, typed_placeholder(S, at, prm->name, type_scalar(inputs[i % n]->type.dtype)));
        ptrvec_push(S->a, &call->u.call.arg_names, NULL);
    }
    return call;
}

/* The values of x, a tuple (a, b, ...) of at most MAX_COMBINED or one value,
 * into items; their count, or -1 after an error ("'name' " then too_many). */
static int tuple_items(Sema *S, Expr *x, Expr **items, const char *name, const char *too_many) {
    if (x->kind != E_TUPLE) {
        items[0] = x;
        return 1;
    }
    if (x->u.shape.dims.len > MAX_COMBINED) {
        char *what = arena_printf(S->a, too_many, MAX_COMBINED, x->u.shape.dims.len);
        error(S, x->span, "'%s' %s", name, what);
        return -1;
    }
    for (int i = 0; i < x->u.shape.dims.len; i++) items[i] = x->u.shape.dims.items[i];
    return x->u.shape.dims.len;
}

/* reduce(x, axis, f) and associative_scan(x, axis, f, reverse): x a block or
 * a tuple (a, b, ...) of blocks of one shape, f a helper taking the left
 * and the right partial results (2n scalars) and returning n values of
 * their types. */
static void check_combine(Sema *S, Expr *e, BuiltinId id) {
    Expr *x = arg(e, 0), *ax = arg(e, 1), *fn = arg(e, 2), *rev = arg(e, 3);
    const char *name = e->u.call.name;
    Expr *inputs[MAX_COMBINED] = {0};
    int n = tuple_items(S, x, inputs, name, "combines at most %d blocks, got %d");
    if (n < 0) return;
    for (int i = 0; i < n; i++) {
        Expr *v = inputs[i];
        if (!require_value(S, v)) return;
        if (v->type.rank == 0) {
            error(S, v->span, "'%s' takes blocks, got %s", name, tstr(S, v->type));
            return;
        }
        if (!shape_equal(v->type, inputs[0]->type)) {
            error(S, v->span, "the blocks '%s' combines must have one shape: %s and %s", name,
                  tstr(S, inputs[0]->type), tstr(S, v->type));
            return;
        }
        if (v->type.dtype == DT_PTR || dtype_is_fp8(v->type.dtype)) {
            error(S, v->span, "'%s' combines numbers and i1, got %s", name, tstr(S, v->type));
            return;
        }
    }
    int64_t axis;
    bool reverse;
    if (!axis_arg(S, e, ax, inputs[0]->type, &axis) || !flag_arg(S, rev, "'reverse'", &reverse)) return;
    if (fn->type.dtype != DT_HELPER) {
        if (fn->type.dtype != DT_ERROR)
            error(S, fn->span, "the combine of '%s' is the name of a helper, 'fn f(a, b) { return ...; }'", name);
        return;
    }
    HelperDef *h = find_helper(S, fn->u.name.name);
    if (h->params.len != 2 * n) {
        error(S, fn->span, "'%s' takes %d argument%s, but combining %d value%s needs %d: the left's, then the "
              "right's", h->name, h->params.len, h->params.len == 1 ? "" : "s", n, n == 1 ? "" : "s", 2 * n);
        note(S, h->name_span, "'%s' is defined here", h->name);
        return;
    }
    Expr *call = scalar_call(S, fn->span, h, inputs, n);
    if (!may_inline(S, fn->span, h, "use as a combine of")) return;
    int errors_before = S->de->errors;
    check_combine_result(S, e, call, h, inputs, n);
    if (S->de->errors != errors_before) {
        note(S, fn->span, "'%s' is the combine of '%s' here", h->name, name);
        return;
    }
    e->u.call.combine = call;
    BlkType ts[MAX_COMBINED];

    for (int i = 0; i < n; i++) {
        BlkType t = inputs[i]->type;
        if (id == BI_REDUCE) {
            int32_t shape[BLK_MAX_RANK];
            int k = 0;
            for (int d = 0; d < t.rank; d++)
                if (d != axis) shape[k++] = t.shape[d];
            t = type_with_shape(t, k, shape);
        }
        ts[i] = t;
    }
    if (x->kind == E_TUPLE) set_values(S, e, ts, n);
    else e->type = ts[0];
}

/* sort(x, axis, descending): numbers and i1 along one axis; NaN sorts as
 * the largest. */
static void check_sort(Sema *S, Expr *e) {
    Expr *x = arg(e, 0);
    int64_t axis;
    bool descending;
    if (!require_value(S, x)) return;
    if (x->type.rank == 0 || x->type.dtype == DT_PTR || dtype_is_fp8(x->type.dtype)) {
        error(S, x->span, "'sort' takes a block of numbers or i1, got %s", tstr(S, x->type));
        return;
    }
    if (!axis_arg(S, e, arg(e, 1), x->type, &axis) || !flag_arg(S, arg(e, 2), "'descending'", &descending)) return;
    e->type = x->type;
}

/* The LLVM constraint letter an asm operand of dtype d may take: h for
 * 16-bit values, r for 32-bit integers and f32 (its bits), l for 64-bit
 * integers, f for f32, d for f64. */
static bool asm_letter_fits(char c, DType d) {
    switch (c) {
    case 'h': return dtype_bits(d) == 16 && !dtype_is_fp8(d);
    case 'r': return d == DT_I32 || d == DT_U32 || d == DT_F32;
    case 'l': return d == DT_I64 || d == DT_U64;
    case 'f': return d == DT_F32;
    case 'd': return d == DT_F64;
    default: return false;
    }
}

/* inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack,
 * reference): Triton's escape hatch, one output an element; args a value or
 * a tuple of them (broadcast to one shape), constraints one output ("=r")
 * then one per argument. reference (blk's): a helper computing the same on
 * scalars, which the interpreter runs (it cannot run PTX). */
static void check_inline_asm(Sema *S, Expr *e) {
    Expr *text = arg(e, 0), *cons = arg(e, 1), *args = arg(e, 2), *pure = arg(e, 4), *pack = arg(e, 5),
         *ref = arg(e, 6);
    const char *name = e->u.call.name;
    if (text->kind != E_STRING || cons->kind != E_STRING) {
        error(S, (text->kind != E_STRING ? text : cons)->span, "the asm and the constraints of '%s' are string literals",
              name);
        return;
    }
    Expr *inputs[MAX_COMBINED];
    int n = tuple_items(S, args, inputs, name, "takes at most %d arguments, got %d");
    if (n < 0) return;
    BlkType shape = type_scalar(DT_VOID);
    for (int i = 0; i < n; i++) {
        if (!require_value(S, inputs[i])) return;
        if (i == 0) shape = inputs[i]->type;
        else if (!broadcast_or_error(S, inputs[i]->span, shape, inputs[i]->type, &shape)) return;
    }
    DType out;
    bool is_pure;
    int64_t packed = 1;
    if (!dtype_arg(S, arg(e, 3), &out) || !flag_arg(S, pure, "'is_pure'", &is_pure)) return;
    if (pack && !const_int_arg(S, e, pack, "pack", &packed)) return;
    if (packed < 1 || packed > 16 || (packed & (packed - 1))) {
        error(S, pack->span, "pack = %lld: '%s' runs its asm on 1, 2, 4, 8 or 16 elements at a time", (long long)packed,
              name);
        return;
    }
    /* the operands' registers: the output's, then each argument's (pack
     * elements of a narrow type share 32-bit registers) */
    int regs_of[MAX_COMBINED + 1], bits_of[MAX_COMBINED + 1], nentries = 0;
    for (int i = 0; i <= n; i++) {
        DType d = i == 0 ? out : inputs[i - 1]->type.dtype;
        if (!asm_pack_registers(d, (int)packed, &regs_of[i], &bits_of[i])) {
            error(S, pack->span, "pack = %lld: %lld elements of %s make %lld bits, no register (pack 8-bit elements by "
                  "at least 4, 16-bit ones by at least 2)", (long long)packed, (long long)packed, dtype_name(d),
                  (long long)packed * dtype_bits(d));
            return;
        }
        nentries += regs_of[i];
    }
    /* the constraints: "=X" per output register, then one letter per argument register */
    const char *c = cons->u.str.text, *end = c + cons->u.str.len;
    int entry = 0, outputs = regs_of[0], given = 1;
    for (const char *p = c; p < end; p++) given += *p == ',';
    if (packed > 1 && given != nentries) {
        error(S, cons->span, "the constraints \"%.*s\" have %d entr%s; with pack = %lld the output takes %d register%s "
              "and the argument%s %d, %d in all", (int)cons->u.str.len, c, given, given == 1 ? "y" : "ies",
              (long long)packed, outputs, outputs == 1 ? "" : "s", n == 1 ? "" : "s", nentries - outputs, nentries);
        return;
    }
    for (const char *p = c; p <= end; entry++) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        if (!q) q = end;
        bool output = entry < outputs;
        int operand = 0; /* 0 the output, i the argument i */
        for (int e2 = entry; operand <= n && e2 >= regs_of[operand]; operand++) e2 -= regs_of[operand];
        size_t len = (size_t)(q - p);
        char letter = len == (output ? 2u : 1u) && (!output || p[0] == '=') ? p[output] : 0;
        DType want = operand == 0 ? out : operand <= n ? inputs[operand - 1]->type.dtype : DT_ERROR;
        bool shared = operand <= n && bits_of[operand] != dtype_bits(want); /* several elements a register */
        bool fits = shared ? letter == (bits_of[operand] == 32 ? 'r' : 'h') : asm_letter_fits(letter, want);
        if (entry >= nentries || !letter || !fits) {
            if (entry >= nentries)
                error(S, cons->span, "the constraints \"%.*s\" name more operands than one output and the %d argument%s",
                      (int)cons->u.str.len, c, n, n == 1 ? "" : "s");
            else if (shared)
                error(S, cons->span, "constraint %d (\"%.*s\") does not fit %d %s elements packed in a %d-bit register "
                      "(%s)", entry + 1, (int)len, p, bits_of[operand] / dtype_bits(want), dtype_name(want),
                      bits_of[operand], bits_of[operand] == 32 ? (output ? "\"=r\"" : "\"r\"")
                                                               : (output ? "\"=h\"" : "\"h\""));
            else
                error(S, cons->span, "constraint %d (\"%.*s\") does not fit the %s %s (%s; the letters: h 16-bit, r "
                      "32-bit integers and f32's bits, l 64-bit integers, f f32, d f64)", entry + 1, (int)len, p,
                      output ? "output's type" : "argument's type", dtype_name(want),
                      output ? "the output's is '=' and one letter" : "an argument's is one letter");
            return;
        }
        p = q + 1;
    }
    if (entry != nentries) {
        error(S, cons->span, "the constraints \"%.*s\" have %d entr%s; one output and %d argument%s need %d",
              (int)cons->u.str.len, c, entry, entry == 1 ? "y" : "ies", n, n == 1 ? "" : "s", n + 1);
        return;
    }
    /* the asm's operand references, which LLVM would otherwise reject by aborting: $$ (a '$'),
     * $N or ${N} with N an operand register (the output's first, then the arguments'; no modifiers) */
    const char *t = text->u.str.text, *tend = t + text->u.str.len;
    for (const char *p = t; p < tend; p++) {
        if (*p != '$') continue;
        const char *at = p++;
        if (p < tend && *p == '$') continue;
        bool braced = p < tend && *p == '{';
        if (braced) p++;
        long operand = -1;
        if (p < tend && *p >= '0' && *p <= '9') {
            operand = 0;
            while (p < tend && *p >= '0' && *p <= '9' && operand < nentries) operand = operand * 10 + (*p++ - '0');
        }
        bool closed = !braced || (p < tend && *p == '}');
        if (operand < 0 || operand >= nentries || !closed) {
            if (packed == 1)
                error(S, text->span, "the asm's '%.*s' is no operand: write $0 for the output, $1 to $%d for the "
                      "argument%s, $$ for a '$'", (int)(p - at) + (braced && p < tend), at, n, n == 1 ? "" : "s");
            else
                error(S, text->span, "the asm's '%.*s' is no operand: with pack = %lld write $0 to $%d for the "
                      "output's registers, $%d to $%d for the arguments', $$ for a '$'",
                      (int)(p - at) + (braced && p < tend), at, (long long)packed, outputs - 1, outputs, nentries - 1);
            return;
        }
        if (!braced) p--; /* the loop's p++ moves past the last digit */
    }
    if (ref) {
        if (ref->type.dtype != DT_HELPER) {
            if (ref->type.dtype != DT_ERROR)
                error(S, ref->span, "the reference of '%s' is the name of a helper computing the same on scalars", name);
            return;
        }
        HelperDef *h = find_helper(S, ref->u.name.name);
        if (h->params.len != n) {
            error(S, ref->span, "'%s' takes %d argument%s, but the asm has %d", h->name, h->params.len,
                  h->params.len == 1 ? "" : "s", n);
            note(S, h->name_span, "'%s' is defined here", h->name);
            return;
        }
        Expr *call = scalar_call(S, ref->span, h, inputs, n);
        if (!may_inline(S, ref->span, h, "use as the reference of")) return;
        Expr want = {.type = type_scalar(out)}, *wants[1] = {&want};
        int errors_before = S->de->errors;
        check_combine_result(S, e, call, h, wants, 1);
        if (S->de->errors != errors_before) {
            note(S, ref->span, "'%s' is the reference of '%s' here", h->name, name);
            return;
        }
        e->u.call.combine = call;
    }
    e->type = type_with_shape(type_scalar(out), shape.rank, shape.shape);
}

/* topk(x, k, axis): Triton's tl.topk, the k largest along the axis (the last
 * by default), in descending order. */
static void check_topk(Sema *S, Expr *e) {
    Expr *x = arg(e, 0), *k = arg(e, 1), *ax = arg(e, 2);
    int64_t axis = x->type.rank - 1, n;
    if (!require_value(S, x)) return;
    if (x->type.rank == 0 || x->type.dtype == DT_PTR || dtype_is_fp8(x->type.dtype)) {
        error(S, x->span, "'topk' takes a block of numbers or i1, got %s", tstr(S, x->type));
        return;
    }
    if (ax && !axis_arg(S, e, ax, x->type, &axis)) return;
    if (!const_int_arg(S, e, k, "k", &n)) return;
    if (n < 1 || n > x->type.shape[axis] || (n & (n - 1))) {
        error(S, k->span, "k of 'topk' is a power of two from 1 to the axis' size %d, got %lld", x->type.shape[axis],
              (long long)n);
        return;
    }
    int32_t shape[BLK_MAX_RANK];
    memcpy(shape, x->type.shape, sizeof shape);
    shape[axis] = (int32_t)n;
    e->type = type_with_shape(x->type, x->type.rank, shape);
}

/* gather(src, index, axis): Triton's tl.gather; the result has index's shape
 * and src's type, and matches src's shape on every other axis. */
static void check_gather(Sema *S, Expr *e) {
    Expr *src = arg(e, 0), *index = arg(e, 1);
    int64_t axis;
    if (!require_value(S, src) || !require_value(S, index)) return;
    if (src->type.rank == 0 || src->type.dtype == DT_PTR) {
        error(S, src->span, "'gather' takes a block of numbers or i1 to gather from, got %s", tstr(S, src->type));
        return;
    }
    if (!dtype_is_int(index->type.dtype) || index->type.rank != src->type.rank) {
        error(S, index->span, "the index of 'gather' is a block of integers of the source's rank (%d), got %s",
              src->type.rank, tstr(S, index->type));
        return;
    }
    if (!axis_arg(S, e, arg(e, 2), src->type, &axis)) return;
    for (int d = 0; d < src->type.rank; d++)
        if (d != axis && index->type.shape[d] != src->type.shape[d]) {
            error(S, index->span, "the index of 'gather' (%s) must match the source (%s) on every axis but %lld",
                  sstr(S, index->type), sstr(S, src->type), (long long)axis);
            return;
        }
    e->type = type_with_shape(type_scalar(src->type.dtype), index->type.rank, index->type.shape);
}

/* histogram(input, num_bins, mask): Triton's tl.histogram of a 1-D integer
 * block; [num_bins] i32 counts of 0 .. num_bins - 1. */
static void check_histogram(Sema *S, Expr *e) {
    Expr *x = arg(e, 0), *bins = arg(e, 1), *mask = arg(e, 2);
    int64_t n;
    if (!require_value(S, x)) return;
    if (x->type.rank != 1 || !dtype_is_int(x->type.dtype)) {
        error(S, x->span, "'histogram' counts a 1-D block of integers, got %s", tstr(S, x->type));
        return;
    }
    if (!const_int_arg(S, e, bins, "the number of bins", &n)) return;
    if (n < 1 || n > BLK_MAX_NUMEL || (n & (n - 1))) {
        error(S, bins->span, "the number of bins of 'histogram' is a block size: a power of two up to %d, got %lld",
              BLK_MAX_NUMEL, (long long)n);
        return;
    }
    if (mask && (!require_value(S, mask) || mask->type.dtype != DT_I1 || !fits_shape(mask->type, x->type))) {
        if (mask->type.dtype != DT_ERROR)
            error(S, mask->span, "the mask of 'histogram' is an i1 block of the input's shape %s, got %s",
                  sstr(S, x->type), tstr(S, mask->type));
        return;
    }
    int32_t shape[1] = {(int32_t)n};
    e->type = type_with_shape(type_scalar(DT_I32), 1, shape);
}

/* The element type join, cat and interleave give two blocks of numbers or i1
 * (promoted like where), whose result has twice the elements of `shape`;
 * DT_ERROR after an error. */
static DType pair_dtype(Sema *S, const Expr *e, Expr *a0, Expr *a1, BlkType shape, const char *name) {
    for (int i = 0; i < 2; i++) {
        const Expr *a = i ? a1 : a0;
        if (!is_numeric(a->type.dtype) && a->type.dtype != DT_I1) {
            error(S, a->span, "'%s' takes numbers and i1, got %s", name, tstr(S, a->type));
            return DT_ERROR;
        }
    }
    DType d = dtype_promote(a0->type.dtype, a0->weak, a1->type.dtype, a1->weak);
    reject_truncating_quotient(S, a0, d);
    reject_truncating_quotient(S, a1, d);
    if (!check_literal_fits(S, a0, d) || !check_literal_fits(S, a1, d)) return DT_ERROR;
    if (type_numel(shape) * 2 > BLK_MAX_NUMEL) {
        error(S, e->span, "'%s' of two %s blocks would exceed the limit of %d elements", name, sstr(S, shape),
              BLK_MAX_NUMEL);
        return DT_ERROR;
    }
    return d;
}

static void check_builtin(Sema *S, Expr *e, BuiltinId id) {
    for (int i = 0; i < e->u.call.args.len; i++) check_expr(S, e->u.call.args.items[i]);
    for (int i = 0; i < e->u.call.args.len; i++)
        if (((Expr *)e->u.call.args.items[i])->type.dtype == DT_ERROR) return;
    /* min(a, b) and max(a, b) of two scalars, as in Python (and Triton's
     * kernels): the elementwise minimum and maximum */
    if ((id == BI_MIN || id == BI_MAX) && e->u.call.args.len == 2 && !e->u.call.arg_names.items[0] &&
        !e->u.call.arg_names.items[1] && ((Expr *)e->u.call.args.items[0])->type.rank == 0)
        id = id == BI_MIN ? BI_MINIMUM : BI_MAXIMUM;
    const BuiltinSig *sig = builtin_sig(id);
    if (!bind_builtin_args(S, e, sig)) return;
    e->u.call.builtin = id;
    Expr *a0 = arg(e, 0), *a1 = arg(e, 1), *a2 = arg(e, 2);
    switch (id) {
    case BI_PROGRAM_ID:
    case BI_NUM_PROGRAMS: {
        int64_t axis;
        if (!const_int_arg(S, e, a0, "the axis", &axis)) return;
        if (axis < 0 || axis > 2) {
            error(S, a0->span, "axis of '%s' must be 0, 1 or 2, got %lld", sig->name, (long long)axis);
            return;
        }
        e->type = type_scalar(DT_I32);
        return;
    }
    case BI_ARANGE: {
        int64_t lo, hi;
        if (!const_int_arg(S, e, a0, "the start", &lo) || !const_int_arg(S, e, a1, "the end", &hi))
            return;
        if (hi <= lo || !is_pow2(hi - lo) || hi - lo > BLK_MAX_NUMEL) {
            error(S, e->span,
                  "arange(%lld, %lld) has %lld elements; the count must be a power of two "
                  "between 1 and %d",
                  (long long)lo, (long long)hi, (long long)(hi - lo), BLK_MAX_NUMEL);
            return;
        }
        if (!int_fits(DT_I32, lo) || !int_fits(DT_I32, hi)) {
            error(S, e->span, "arange bounds must fit in i32");
            return;
        }
        int32_t n = (int32_t)(hi - lo);
        e->type = type_with_shape(type_scalar(DT_I32), 1, &n);
        return;
    }
    case BI_SHAPE: case BI_EXPAND_DIMS: { /* shape(x, axis): a block's size, a constant */
        int64_t axis;
        if (!require_value(S, a0) || !const_int_arg(S, e, a1, "the axis", &axis)) return;
        int rank = a0->type.rank, limit = id == BI_SHAPE ? rank : rank + 1;
        if (id == BI_SHAPE && rank == 0) {
            error(S, a0->span, "'shape' of a scalar: it has no dimensions");
            return;
        }
        if (id == BI_EXPAND_DIMS && rank + 1 > BLK_MAX_RANK) {
            error(S, a0->span, "'expand_dims' of a %s block would have more than %d dimensions", tstr(S, a0->type),
                  BLK_MAX_RANK);
            return;
        }
        if (axis < 0 || axis >= limit) {
            error(S, a1->span, "axis %lld is out of range for %s", (long long)axis, tstr(S, a0->type));
            return;
        }
        if (id == BI_SHAPE) {
            e->type = type_scalar(DT_I32);
            set_const_int(e, a0->type.shape[axis]);
            return;
        }
        int32_t shape[BLK_MAX_RANK];
        for (int i = 0, src = 0; i < rank + 1; i++) shape[i] = i == axis ? 1 : a0->type.shape[src++];
        e->type = type_with_shape(a0->type, rank + 1, shape);
        return;
    }
    case BI_BROADCAST_TO: {
        BlkType target = a0->type, out;
        if (!require_value(S, a0) || !shape_arg(S, a1, &target)) return;
        if (!broadcast_or_error(S, e->span, a0->type, target, &out)) return;
        if (!shape_equal(out, target)) {
            error(S, e->span, "'broadcast_to' cannot shrink %s to %s", tstr(S, a0->type), tstr(S, target));
            return;
        }
        e->type = target;
        return;
    }
    case BI_ZEROS:
    case BI_FULL: {
        DType dt;
        Expr *dtype_e = id == BI_ZEROS ? a1 : a2;
        if (!dtype_arg(S, dtype_e, &dt)) return;
        BlkType t = type_scalar(dt);
        if (!shape_arg(S, a0, &t)) return;
        if (id == BI_FULL) {
            if (!require_value(S, a1)) return;
            if (a1->type.rank != 0 || !dtype_is_numeric_elem(a1->type.dtype)) {
                error(S, a1->span, "the value of 'full' must be a number, got %s", tstr(S, a1->type));
                return;
            }
            if (!check_literal_fits(S, a1, dt)) return;
        }
        e->type = t;
        return;
    }
    case BI_LOAD: {
        if (!require_value(S, a0) || !pointer_arg(S, e, a0)) return;
        BlkType t = type_with_shape(type_scalar(a0->type.elem), a0->type.rank, a0->type.shape);
        if (!mask_arg(S, e, a1, t)) return;
        if (a2) {
            if (!value_fits(S, e, a2, t, "other")) return;
            if (!dtype_is_numeric_elem(a2->type.dtype)) {
                error(S, a2->span, "'other' must be a number, got %s", tstr(S, a2->type));
                return;
            }
            if (!check_literal_fits(S, a2, t.dtype)) return;
        }
        if (!cache_controls_ok(S, e, true)) return;
        e->type = t;
        return;
    }
    case BI_STORE: {
        if (!require_value(S, a0) || !pointer_arg(S, e, a0)) return;
        BlkType t = type_with_shape(type_scalar(a0->type.elem), a0->type.rank, a0->type.shape);
        if (!value_fits(S, e, a1, t, "a value")) return;
        if (!dtype_is_numeric_elem(a1->type.dtype)) {
            error(S, a1->span, "'store' needs a numeric value, got %s", tstr(S, a1->type));
            return;
        }
        if (!check_literal_fits(S, a1, t.dtype) || !mask_arg(S, e, a2, t) || !cache_controls_ok(S, e, false)) return;
        e->type = type_scalar(DT_VOID);
        return;
    }
    case BI_SUM: case BI_MAX: case BI_MIN: case BI_ARGMAX: case BI_ARGMIN: case BI_CUMSUM: case BI_CUMPROD:
        check_reduction(S, e, id);
        return;
    case BI_REDUCE: case BI_ASSOCIATIVE_SCAN:
        check_combine(S, e, id);
        return;
    case BI_SORT: check_sort(S, e); return;
    case BI_GATHER: check_gather(S, e); return;
    case BI_TOPK: check_topk(S, e); return;
    case BI_INLINE_ASM_ELEMENTWISE: check_inline_asm(S, e); return;
    case BI_HISTOGRAM: check_histogram(S, e); return;
    case BI_FLIP: {
        int64_t axis;
        if (!require_value(S, a0)) return;
        if (a0->type.rank == 0) {
            error(S, a0->span, "'flip' takes a block, got %s", tstr(S, a0->type));
            return;
        }
        if (!axis_arg(S, e, a1, a0->type, &axis)) return;
        e->type = a0->type;
        return;
    }
    case BI_RESHAPE: {
        BlkType t = a0->type;
        if (!require_value(S, a0) || !shape_arg(S, a1, &t)) return;
        if (a0->type.rank == 0 || type_numel(t) != type_numel(a0->type)) {
            error(S, e->span, "'reshape' keeps the number of elements: %s cannot become %s", tstr(S, a0->type),
                  sstr(S, t));
            return;
        }
        e->type = t;
        return;
    }
    case BI_CAT: case BI_INTERLEAVE: {
        /* cat(a, b): a's elements, then b's, along axis 0 ([M, N] and [M, N] give [2M, N]);
         * interleave(a, b): a[..., 0], b[..., 0], a[..., 1], ... along the last axis */
        BlkType shape = {0};
        bool cat = id == BI_CAT;
        const char *name = cat ? "cat" : "interleave";
        if (!require_value(S, a0) || !require_value(S, a1) || reject_fp8(S, a0, name) || reject_fp8(S, a1, name))
            return;
        if (cat && a2 && (!a2->is_const || a2->type.dtype != DT_I1)) {
            error(S, a2->span, "'can_reorder' of 'cat' is a compile-time i1 (blk keeps the order either way)");
            return;
        }
        if (cat ? !shape_equal(a0->type, a1->type) : !broadcast_or_error(S, e->span, a0->type, a1->type, &shape)) {
            if (cat)
                error(S, e->span, "'cat' takes two blocks of one shape, got %s and %s", sstr(S, a0->type),
                      sstr(S, a1->type));
            return;
        }
        if (cat) shape = a0->type;
        if (shape.rank == 0) {
            error(S, e->span, "'%s' takes blocks, not scalars", name);
            return;
        }
        DType d = pair_dtype(S, e, a0, a1, shape, name);
        if (d == DT_ERROR) return;
        int32_t dims[BLK_MAX_RANK];
        for (int i = 0; i < shape.rank; i++) dims[i] = shape.shape[i];
        dims[cat ? 0 : shape.rank - 1] *= 2;
        e->type = type_with_shape(type_scalar(d), shape.rank, dims);
        return;
    }
    case BI_JOIN: {
        BlkType shape = {0};
        if (!require_value(S, a0) || !require_value(S, a1) || reject_fp8(S, a0, "join") || reject_fp8(S, a1, "join"))
            return;
        if (!broadcast_or_error(S, e->span, a0->type, a1->type, &shape)) return;
        if (shape.rank + 1 > BLK_MAX_RANK) {
            error(S, e->span, "'join' adds a dimension of 2, and %s would have more than %d", sstr(S, shape),
                  BLK_MAX_RANK);
            return;
        }
        DType d = pair_dtype(S, e, a0, a1, shape, "join");
        if (d == DT_ERROR) return;
        int32_t dims[BLK_MAX_RANK];
        for (int i = 0; i < shape.rank; i++) dims[i] = shape.shape[i];
        dims[shape.rank] = 2;
        e->type = type_with_shape(type_scalar(d), shape.rank + 1, dims);
        return;
    }
    case BI_SPLIT: {
        if (!require_value(S, a0)) return;
        BlkType t = a0->type;
        if (t.rank == 0 || t.shape[t.rank - 1] != 2) {
            error(S, a0->span, "'split' takes a block whose last dimension is 2 (as 'join' makes), got %s",
                  tstr(S, t));
            return;
        }
        BlkType half = type_with_shape(t, t.rank - 1, t.shape), ts[2] = {half, half};
        set_values(S, e, ts, 2);
        return;
    }
    case BI_WHERE: {
        if (!require_value(S, a0) || !require_value(S, a1) || !require_value(S, a2)) return;
        if (a0->type.dtype != DT_I1) {
            error(S, a0->span, "the condition of 'where' must be i1, got %s", tstr(S, a0->type));
            return;
        }
        BlkType shape = {0};
        if (!broadcast_or_error(S, e->span, a0->type, a1->type, &shape) ||
            !broadcast_or_error(S, e->span, shape, a2->type, &shape))
            return;
        BlkType t;
        if (a1->type.dtype == DT_PTR || a2->type.dtype == DT_PTR) {
            if (a1->type.dtype != a2->type.dtype || a1->type.elem != a2->type.elem) {
                error(S, e->span, "'where' cannot choose between %s and %s", tstr(S, a1->type),
                      tstr(S, a2->type));
                return;
            }
            t = type_ptr(a1->type.elem);
        } else {
            t = type_scalar(dtype_promote(a1->type.dtype, a1->weak, a2->type.dtype, a2->weak));
            reject_truncating_quotient(S, a1, t.dtype);
            reject_truncating_quotient(S, a2, t.dtype);
            if (!check_literal_fits(S, a1, t.dtype) || !check_literal_fits(S, a2, t.dtype)) return;
        }
        e->type = type_with_shape(t, shape.rank, shape.shape);
        return;
    }
    case BI_ABS:
    default: { /* abs, and the math functions: the MATH_OP rows of ops.def */
        if (id != BI_ABS && sig->math_op < 0) return; /* BI_COUNT: not a builtin */
        if (!require_value(S, a0)) return;
        DType d = a0->type.dtype;
        if (reject_fp8(S, a0, sig->name)) return;
        if (!is_numeric(d)) {
            error(S, a0->span, "'%s' needs a number, got %s", sig->name, tstr(S, a0->type));
            return;
        }
        if (id != BI_ABS && d == DT_F64 && !blk_math_has_f64((BirOpcode)sig->math_op)) {
            error(S, a0->span, "'%s' computes in f32 and has no f64 version yet: write '%s(x as f32)' (in f64 there "
                  "are sqrt, floor, ceil, trunc, rint and round)", sig->name, sig->name);
            return;
        }
        if (id != BI_ABS && dtype_is_int(d)) {
            d = DT_F32;
            reject_truncating_quotient(S, a0, d);
        }
        e->type = type_with_shape(type_scalar(d), a0->type.rank, a0->type.shape);
        if (a0->is_const && a0->type.rank == 0 && d == DT_F32 && id != BI_ABS) {
            /* the interpreter's f32 semantics, so a folded call equals a computed one */
            float x = (float)convert_scalar(a0->cv, a0->type.dtype, DT_F32).f;
            set_const_float(e, blk_math_f32((BirOpcode)sig->math_op, x));
        }
        return;
    }
    case BI_MINIMUM: case BI_MAXIMUM: case BI_FMA: case BI_CDIV: case BI_CLAMP: case BI_UMULHI: case BI_POW: {
        int n = id == BI_FMA || id == BI_CLAMP ? 3 : 2;
        Expr *ops[3] = {a0, a1, a2};
        BlkType shape = {0};
        DType d = DT_ERROR;
        bool weak = true;
        for (int i = 0; i < n; i++) {
            if (!require_value(S, ops[i]) || reject_fp8(S, ops[i], sig->name)) return;
            if (!is_numeric(ops[i]->type.dtype)) {
                error(S, ops[i]->span, "'%s' needs numbers, got %s", sig->name, tstr(S, ops[i]->type));
                return;
            }
            if (!broadcast_or_error(S, e->span, shape, ops[i]->type, &shape)) return;
            d = i == 0 ? ops[0]->type.dtype : dtype_promote(d, weak, ops[i]->type.dtype, ops[i]->weak);
            weak = weak && ops[i]->weak;
        }
        if (id == BI_CDIV && !dtype_is_int(d)) {
            error(S, e->span, "'cdiv' needs integers, got %s", dtype_name(d));
            return;
        }
        if (id == BI_UMULHI && d != DT_I32 && d != DT_U32) {
            error(S, e->span, "'umulhi' takes 32-bit integers (i32 or u32), got %s", dtype_name(d));
            return;
        }
        if ((id == BI_FMA || id == BI_POW) && !dtype_is_float(d)) d = DT_F32;
        if (id == BI_POW && d == DT_F64) {
            error(S, e->span, "'pow' computes in f32 and has no f64 version yet: convert its operands with 'as f32'");
            return;
        }
        for (int i = 0; i < n; i++) {
            reject_truncating_quotient(S, ops[i], d);
            if (!check_literal_fits(S, ops[i], d)) return;
        }
        e->type = type_with_shape(type_scalar(d), shape.rank, shape.shape);
        if (id == BI_CDIV && a0->is_const && a1->is_const && shape.rank == 0) {
            if (a1->cv.i <= 0) {
                error(S, a1->span, "'cdiv' by %lld in a constant expression", (long long)a1->cv.i);
                e->type.dtype = DT_ERROR;
                return;
            }
            e->weak = weak;
            set_const_int(e, (a0->cv.i + a1->cv.i - 1) / a1->cv.i);
        }
        return;
    }
    case BI_ATOMIC_CAS: case BI_ATOMIC_RMW_CASES:
        check_atomic(S, e, id);
        return;
    case BI_DOT:
        check_dot(S, e);
        return;
    case BI_TRANS:
        if (!require_value(S, a0)) return;
        if (a0->type.rank != 2) {
            error(S, a0->span, "'trans' swaps the dimensions of a 2-D block, got %s", tstr(S, a0->type));
            return;
        }
        e->type = type_with_shape(a0->type, 2, (int32_t[]){a0->type.shape[1], a0->type.shape[0]});
        return;
    case BI_RAND: case BI_RANDINT: case BI_RANDN: case BI_RAND4X: case BI_RANDINT4X: case BI_RANDN4X: {
        if (!require_value(S, a0) || !require_value(S, a1)) return;
        if (a0->type.rank != 0 || !dtype_is_int(a0->type.dtype)) {
            error(S, a0->span, "the seed of '%s' must be a scalar integer, got %s", sig->name,
                  tstr(S, a0->type));
            return;
        }
        if (!dtype_is_int(a1->type.dtype)) {
            error(S, a1->span, "the offset of '%s' must be integers, got %s", sig->name,
                  tstr(S, a1->type));
            return;
        }
        BlkType t = type_with_shape(type_scalar(id == BI_RANDINT || id == BI_RANDINT4X ? DT_U32 : DT_F32),
                                    a1->type.rank, a1->type.shape);
        if (id == BI_RAND4X || id == BI_RANDINT4X || id == BI_RANDN4X) {
            BlkType ts[4] = {t, t, t, t}; /* let (a, b, c, d) = randint4x(seed, offset) */
            set_values(S, e, ts, 4);
        } else {
            e->type = t;
        }
        return;
    }
    case BI_DEBUG_BARRIER: case BI_GDC_WAIT: case BI_GDC_LAUNCH_DEPENDENTS:
        e->type = type_scalar(DT_VOID);
        return;
    case BI_GLOBALTIMER: case BI_CLOCK: case BI_SMID:
        e->type = type_scalar(id == BI_SMID ? DT_U32 : DT_U64);
        return;
    case BI_STATIC_ASSERT: {
        if (a1 && a1->kind != E_STRING) {
            error(S, a1->span, "the message of 'static_assert' must be a string literal");
            return;
        }
        if (!require_value(S, a0)) return;
        if (!a0->is_const || a0->type.dtype != DT_I1 || a0->type.rank) {
            error(S, a0->span, "the condition of 'static_assert' must be a compile-time i1 constant");
            return;
        }
        if (!a0->cv.i) {
            if (a1)
                error(S, a0->span, "static assertion failed: %.*s", (int)a1->u.str.len, a1->u.str.text);
            else
                error(S, a0->span, "static assertion failed");
        }
        e->type = type_scalar(DT_VOID);
        return;
    }
    case BI_DEVICE_ASSERT: {
        if (!require_value(S, a0)) return;
        if (a0->type.dtype != DT_I1) {
            error(S, a0->span, "the condition of 'device_assert' must be i1 (a comparison such as 'x != 0'), got %s",
                  tstr(S, a0->type));
            return;
        }
        if (a1 && a1->kind != E_STRING) {
            error(S, a1->span, "the message of 'device_assert' must be a string literal");
            return;
        }
        if (a2) {
            BlkType both;
            if (!require_value(S, a2)) return;
            if (a2->type.dtype != DT_I1) {
                error(S, a2->span, "the mask of 'device_assert' must be i1, got %s", tstr(S, a2->type));
                return;
            }
            if (!broadcast_or_error(S, a2->span, a0->type, a2->type, &both)) return;
        }
        e->type = type_scalar(DT_VOID);
        return;
    }
    case BI_ASSUME:
        if (!require_value(S, a0)) return;
        if (a0->type.dtype != DT_I1 || a0->type.rank) {
            error(S, a0->span, "the condition of 'assume' must be a scalar i1 (a comparison such as 'n %% 16 == 0'), "
                  "got %s", tstr(S, a0->type));
            return;
        }
        if (a0->is_const && !a0->cv.i) error(S, a0->span, "this assumption is false at compile time");
        e->type = type_scalar(DT_VOID);
        return;
    case BI_DEVICE_PRINT: {
        if (a0->kind != E_STRING) {
            error(S, a0->span, "'device_print' starts with a string literal prefix");
            return;
        }
        for (int i = 1; i < e->u.call.args.len; i++)
            if (!require_value(S, e->u.call.args.items[i])) return;
        e->type = type_scalar(DT_VOID);
        return;
    }
    }
}

static HelperDef *find_helper(Sema *S, const char *name) {
    for (int i = 0; i < S->m->helpers.len; i++) {
        HelperDef *h = S->m->helpers.items[i];
        if (strcmp(h->name, name) == 0) return h;
    }
    return NULL;
}

static bool is_kernel_name(Sema *S, const char *name) {
    for (int i = 0; i < S->m->kernels.len; i++)
        if (strcmp(((KernelDef *)S->m->kernels.items[i])->name, name) == 0) return true;
    return false;
}

/* Inline a helper: a fresh copy of its body, checked with this call's
 * argument types, in a scope that sees only the helper's parameters. */
static void check_helper_call(Sema *S, Expr *e, HelperDef *h) {
    for (int i = 0; i < e->u.call.args.len; i++) {
        Expr *a = e->u.call.args.items[i];
        check_expr(S, a);
        if (e->u.call.arg_names.items[i]) {
            error(S, a->span, "helper arguments are positional");
            return;
        }
    }
    for (int i = 0; i < e->u.call.args.len; i++)
        if (!require_value(S, e->u.call.args.items[i])) return;
    if (e->u.call.args.len != h->params.len) {
        error(S, e->span, "helper '%s' takes %d argument%s, got %d", h->name, h->params.len,
              h->params.len == 1 ? "" : "s", e->u.call.args.len);
        note(S, h->name_span, "'%s' is defined here", h->name);
        return;
    }
    if (may_inline(S, e->span, h, "call to")) inline_helper(S, e, h);
}

/* The limits every inlining keeps (calls and combines alike): no recursion,
 * a bounded depth, a bounded number per kernel. */
static bool may_inline(Sema *S, Span at, HelperDef *h, const char *what) {
    if (h->expanding) {
        error(S, at, "recursive %s helper '%s': helpers are inlined and cannot recurse", what, h->name);
        return false;
    }
    if (S->helper_depth >= MAX_INLINE_DEPTH) {
        error(S, at, "helpers nested more than %d deep", MAX_INLINE_DEPTH);
        return false;
    }
    if (++S->inlined_calls > MAX_INLINED_CALLS) {
        if (S->inlined_calls == MAX_INLINED_CALLS + 1) /* once per kernel */
            error(S, at,
                  "inlining helper '%s' here goes over %d inlined calls in kernel '%s' (every call "
                  "is inlined: do helpers call each other more than once?)",
                  h->name, MAX_INLINED_CALLS, S->kernel->name);
        return false;
    }
    return true;
}

/* The inlining itself: call e's arguments are checked values (a combine's
 * are scalars made up for it). */
static void inline_helper(Sema *S, Expr *e, HelperDef *h) {
    e->u.call.helper = h;
    Stmt *body = stmt_clone(S->a, h->body);
    /* Only a final `return` is allowed: it becomes the call's value. */
    PtrVec *stmts = &body->u.block.stmts;
    Expr *result = NULL;
    if (stmts->len > 0) {
        Stmt *last = stmts->items[stmts->len - 1];
        if (last->kind == S_RETURN) {
            result = last->u.ret.value;
            stmts->len--;
        }
    }
    h->expanding = true;
    S->helper_depth++;
    Scope *saved_scope = S->scope;
    PtrVec saved_decls = S->decls;
    S->scope = NULL;
    memset(&S->decls, 0, sizeof S->decls);
    collect_decls(S, body);
    push_scope(S);
    for (int i = 0; i < h->params.len; i++) {
        Param *prm = h->params.items[i];
        Expr *a = e->u.call.args.items[i];
        Symbol *sym = declare(S, SYM_LET, prm->name, prm->name_span, a->type);
        sym->quotient = held_quotient(a);
        sym->is_const = a->is_const;
        sym->weak = a->weak;
        sym->cv = a->cv;
        ptrvec_push(S->a, &e->u.call.inline_params, sym);
    }
    int misplaced_before = S->misplaced_returns;
    for (int i = 0; i < stmts->len; i++) check_stmt(S, stmts->items[i]);
    if (S->misplaced_returns != misplaced_before) {
        e->type = type_scalar(DT_ERROR); /* its value is unknowable; already reported */
    } else if (result && result->kind == E_TUPLE) {
        check_expr(S, result);
        bool ok = true;
        for (int i = 0; i < result->u.shape.dims.len; i++) ok &= require_value(S, result->u.shape.dims.items[i]);
        e->type = type_scalar(ok ? DT_TUPLE : DT_ERROR);
    } else if (result) {
        check_expr(S, result);
        if (require_value(S, result)) {
            e->type = result->type;
            e->is_const = result->is_const;
            e->weak = result->weak;
            e->cv = result->cv;
        }
    } else {
        e->type = type_scalar(DT_VOID);
    }
    pop_scope(S);
    S->scope = saved_scope;
    S->decls = saved_decls;
    S->helper_depth--;
    h->expanding = false;
    e->u.call.inline_body = body;
    e->u.call.inline_result = result;
}

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
    HelperDef *h = find_helper(S, e->u.call.name);
    if (h) {
        check_helper_call(S, e, h);
        return;
    }
    int id = builtin_find(e->u.call.name);
    if (id >= 0) {
        check_builtin(S, e, (BuiltinId)id);
        return;
    }
    for (int i = 0; i < e->u.call.args.len; i++) check_expr(S, e->u.call.args.items[i]);
    if (is_kernel_name(S, e->u.call.name))
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

static void check_expr(Sema *S, Expr *e) {
    switch (e->kind) {
    case E_INT:
        if (e->u.int_lit.invalid) return; /* the parser reported it */
        e->type = type_scalar(e->u.int_lit.is_u64 ? DT_U64 : int_fits(DT_I32, e->u.int_lit.value) ? DT_I32 : DT_I64);
        e->weak = true;
        set_const_int(e, e->u.int_lit.value);
        return;
    case E_FLOAT:
        e->type = type_scalar(DT_F32);
        e->weak = true;
        set_const_float(e, e->u.float_lit);
        return;
    case E_BOOL:
        e->type = type_scalar(DT_I1);
        set_const_int(e, e->u.bool_lit);
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
        for (int i = 0; i < e->u.shape.dims.len; i++) check_expr(S, e->u.shape.dims.items[i]);
        e->type = type_scalar(DT_SHAPE);
        return;
    case E_TUPLE: /* a helper's values; check_helper_call takes them, anywhere else it is an error */
        for (int i = 0; i < e->u.shape.dims.len; i++) check_expr(S, e->u.shape.dims.items[i]);
        e->type = type_scalar(DT_TUPLE);
        return;
    }
}

/* ------------------------------------------------------------- statements */

static const char *symbol_kind_desc(SymbolKind k) {
    switch (k) {
    case SYM_PARAM: return "a parameter";
    case SYM_CONST: return "a const parameter";
    case SYM_LET: return "an immutable 'let' binding";
    case SYM_VAR: return "a variable";
    case SYM_LOOP: return "a loop variable";
    }
    return "a name";
}

/* Can `v` be stored in a variable of type `t`? Same element type (a weak
 * literal converts), shape broadcasting to t's. */
static bool assignable(Sema *S, Expr *v, BlkType t, const char *name, Span span) {
    if (!require_value(S, v)) return false;
    bool dtype_ok = v->type.dtype == t.dtype && (t.dtype != DT_PTR || v->type.elem == t.elem);
    if (!dtype_ok && v->weak && is_numeric(t.dtype) &&
        dtype_promote(v->type.dtype, true, t.dtype, false) == t.dtype) {
        if (!check_literal_fits(S, v, t.dtype)) return false; /* said: the literal, not the type, is wrong */
        dtype_ok = true;
    }
    if (!dtype_ok || !fits_shape(v->type, t)) {
        BlkType want_dtype = type_with_shape(t, 0, NULL);
        if (!dtype_ok)
            error(S, span, "cannot assign a value of type %s to '%s' of type %s; convert with 'as %s'",
                  tstr(S, v->type), name, tstr(S, t), tstr(S, want_dtype));
        else
            error(S, span, "cannot assign a value of shape %s to '%s' of shape %s: a variable "
                  "keeps the shape it was declared with", sstr(S, v->type), name, sstr(S, t));
        return false;
    }
    return true;
}

/* let (a, b) = helper(...): each name takes one of the helper's values. */
static void check_let_parts(Sema *S, Stmt *s) {
    Expr *init = s->u.let.init;
    check_expr(S, init);
    const PtrVec *parts = &s->u.let.parts;
    const Expr *values = init->type.dtype == DT_TUPLE && init->kind == E_CALL ? init->u.call.inline_result : NULL;
    if (!values && init->type.dtype != DT_ERROR)
        error(S, init->span, "'let (...)' takes apart several values (a helper's 'return (a, b)', split, reduce of a tuple); this is one value");
    else if (values && values->u.shape.dims.len != parts->len)
        error(S, s->u.let.name_span, "%d names for the %d values '%s' returns", parts->len, values->u.shape.dims.len,
              init->u.call.name);
    bool ok = values && values->u.shape.dims.len == parts->len;
    for (int i = 0; i < parts->len; i++) {
        Stmt *part = parts->items[i];
        const Expr *v = ok ? values->u.shape.dims.items[i] : NULL;
        Symbol *sym = declare(S, part->u.let.is_var ? SYM_VAR : SYM_LET, part->u.let.name, part->u.let.name_span,
                              v ? v->type : type_scalar(DT_ERROR));
        part->u.let.sym = sym;
        if (v && !part->u.let.is_var) {
            sym->is_const = v->is_const;
            sym->weak = v->weak;
            sym->cv = v->cv;
        }
    }
}

static void check_let(Sema *S, Stmt *s) {
    Expr *init = s->u.let.init;
    if (!init || !s->u.let.name) return; /* parse error already reported */
    if (s->u.let.parts.len) {
        check_let_parts(S, s);
        return;
    }
    check_expr(S, init);
    BlkType t = init->type;
    bool ok = require_value(S, init);
    if (ok && s->u.let.has_type) {
        BlkType want;
        if (!resolve_type(S, &s->u.let.type, &want)) ok = false;
        else if (want.dtype == DT_TYPE) {
            error(S, s->u.let.type.span, "'type' is only for const parameters");
            ok = false;
        } else {
            want = type_with_shape(want, init->type.rank, init->type.shape);
            ok = assignable(S, init, want, s->u.let.name, init->span);
            t = want;
        }
    }
    if (!ok) t = type_scalar(DT_ERROR);
    Symbol *sym = declare(S, s->u.let.is_var ? SYM_VAR : SYM_LET, s->u.let.name,
                          s->u.let.name_span, t);
    s->u.let.sym = sym;
    if (ok) sym->quotient = held_quotient(init);
    if (!s->u.let.is_var && ok) {
        sym->is_const = init->is_const && !s->u.let.has_type;
        sym->weak = init->weak && !s->u.let.has_type;
        sym->cv = init->cv;
    } else if (ok && init->weak && !s->u.let.has_type && t.dtype == DT_I32 && init->is_const &&
               !int_fits(DT_I32, init->cv.i)) {
        sym->type.dtype = DT_I64;
    }
}

/* Triton rebinds a name to a value of another type in a constexpr branch
 * (`if UPCAST: x = x.to(tl.float32)`). blk lets a var do that in a
 * compile-time branch taken after its declaration, with no runtime loop or
 * branch in between: the code is straight-line there, so from this
 * assignment on the name is a new var of the value's type, in the scope of
 * the old one (uses before it keep the old). */
static bool rebind_var(Sema *S, Stmt *s, Symbol *sym) {
    const Expr *v = s->u.assign.value;
    if (type_equal(type_with_shape(v->type, 0, NULL), type_with_shape(sym->type, 0, NULL)) && shape_equal(v->type, sym->type))
        return false;
    if (S->const_if_depth <= sym->const_if_depth || S->runtime_depth != sym->runtime_depth || v->weak ||
        !require_value(S, s->u.assign.value) || v->type.dtype == DT_VOID)
        return false;
    Scope *home = S->scope;
    while (home && lookup_in(home, sym->name) != sym) home = home->parent;
    if (!home) return false;
    Symbol *rebound = arena_alloc(S->a, sizeof *rebound);
    *rebound = *sym;
    rebound->type = v->type;
    rebound->weak = false;
    rebound->quotient = held_quotient(v);
    rebound->id = S->next_sym_id++;
    ptrvec_push(S->a, &home->syms, rebound); /* a later symbol of the name wins the scan */
    if (home->table) {
        if (2 * home->syms.len <= home->table_cap) *table_slot(home, rebound->name) = rebound;
        else table_insert_all(S, home);
    }
    s->u.assign.sym = rebound;
    return true;
}

static void check_assign(Sema *S, Stmt *s) {
    Symbol *sym = lookup(S, s->u.assign.name);
    if (!sym) {
        check_expr(S, s->u.assign.value);
        const Expr *v = s->u.assign.value;
        if (s->u.assign.op == ASSIGN_PLAIN && !find_decl(S, s->u.assign.name)) {
            /* Python's `x = ...`: one error, and x is known from here on (no error at each use) */
            error(S, s->u.assign.name_span, "'%s' is not declared: blk declares a name with 'let %s = ...' (or "
                  "'var %s = ...' to assign it again)", s->u.assign.name, s->u.assign.name, s->u.assign.name);
            declare(S, SYM_VAR, s->u.assign.name, s->u.assign.name_span,
                    v->type.dtype == DT_VOID ? type_scalar(DT_ERROR) : v->type);
            return;
        }
        report_unknown_name(S, s->u.assign.name, s->u.assign.name_span);
        return;
    }
    s->u.assign.sym = sym;
    if (sym->kind != SYM_VAR) {
        check_expr(S, s->u.assign.value);
        error(S, s->u.assign.name_span, "cannot assign to '%s': it is %s; declare it with 'var' to "
              "make it mutable", sym->name, symbol_kind_desc(sym->kind));
        note(S, sym->decl, "'%s' is declared here", sym->name);
        return;
    }
    if (s->u.assign.op != ASSIGN_PLAIN) {
        /* x op= e  ==>  x = x op e */
        Expr *target = expr_new(S->a, E_NAME, s->u.assign.name_span);
        target->u.name.name = s->u.assign.name;
        Expr *bin = expr_new(S->a, E_BINARY, s->span);
        bin->u.binary.op = (OpKind)s->u.assign.op;
        bin->u.binary.lhs = target;
        bin->u.binary.rhs = s->u.assign.value;
        s->u.assign.value = bin;
        s->u.assign.op = ASSIGN_PLAIN;
    }
    check_expr(S, s->u.assign.value);
    if (sym->type.dtype == DT_ERROR || s->u.assign.value->type.dtype == DT_ERROR) return;
    if (rebind_var(S, s, sym)) return;
    if (!assignable(S, s->u.assign.value, sym->type, sym->name, s->span)) {
        if (S->const_if_depth > sym->const_if_depth && S->runtime_depth != sym->runtime_depth)
            note(S, sym->decl, "'%s' may take another type in a compile-time branch only where no runtime loop or "
                 "branch lies between it and this declaration", sym->name);
        return;
    }
    if (!sym->quotient) sym->quotient = held_quotient(s->u.assign.value);
}

static bool check_condition(Sema *S, Expr *cond, const char *what) {
    check_expr(S, cond);
    if (!require_value(S, cond)) return false;
    if (cond->type.dtype != DT_I1 || cond->type.rank != 0) {
        if (cond->type.rank != 0)
            error(S, cond->span, "the condition of '%s' must be a scalar i1, got a %s block (use "
                  "where() to choose per element)", what, tstr(S, cond->type));
        else if (cond->type.dtype == DT_PTR)
            error(S, cond->span, "the condition of '%s' must be i1, got the pointer %s: for Triton's 'if ptr is not "
                  "None', write 'if %s != None' (a pointer passed None is absent from that build)", what,
                  tstr(S, cond->type), cond->kind == E_NAME ? cond->u.name.name : "ptr");
        else
            error(S, cond->span, "the condition of '%s' must be i1, got %s (compare it, e.g. x != 0)",
                  what, tstr(S, cond->type));
        return false;
    }
    return true;
}

/* static_range: every bound a constant; the body is checked once per value of
 * the loop variable, on a copy in which the variable is that constant (as
 * Triton's static_range makes it a constexpr), and lowered as those copies in
 * order. */
static void check_static_for(Sema *S, Stmt *s, DType d, bool weak) {
    Expr *bounds[3] = {s->u.for_.start, s->u.for_.end, s->u.for_.step};
    for (int i = 0; i < 3; i++)
        if (bounds[i] && !bounds[i]->is_const) {
            error(S, bounds[i]->span, "the bounds of 'static_range' must be compile-time constants (literals and "
                  "const parameters); 'range' takes values known only at run time");
            return;
        }
    int64_t start = bounds[0]->cv.i, end = bounds[1]->cv.i, step = bounds[2] ? bounds[2]->cv.i : 1;
    Stmt *copies = stmt_new(S->a, S_BLOCK, s->span);
    int64_t count = 0;
    for (int64_t iv = start; step > 0 ? iv < end : iv > end;) {
        if (++count > MAX_STATIC_ITERATIONS) {
            error(S, s->span, "this static_range runs more than %d times: each time is a copy of the body "
                  "(use 'range', with 'unroll = N' if it should unroll)", MAX_STATIC_ITERATIONS);
            return;
        }
        if (++S->static_copies > MAX_STATIC_COPIES) {
            error(S, s->span, "the static_range loops of kernel '%s' make more than %d copies of their bodies "
                  "(nested ones multiply); use 'range' for the outer ones", S->kernel ? S->kernel->name : "?",
                  MAX_STATIC_COPIES);
            return;
        }
        Stmt *body = stmt_clone(S->a, s->u.for_.body);
        int errors_before = S->de->errors;
        push_scope(S);
        Symbol *sym = declare(S, SYM_LOOP, s->u.for_.var, s->u.for_.var_span, type_scalar(d));
        sym->is_const = true;
        sym->weak = weak;
        sym->cv.i = iv;
        check_block_in_scope(S, body);
        pop_scope(S);
        ptrvec_push(S->a, &copies->u.block.stmts, body);
        if (S->de->errors != errors_before) {
            if (count > 1) note(S, s->u.for_.var_span, "in the copy of the body where %s = %lld", s->u.for_.var, (long long)iv);
            return; /* the other copies would repeat it */
        }
        int64_t next;
        if (__builtin_add_overflow(iv, step, &next) || !int_fits(d, next)) break;
        iv = next;
    }
    s->u.for_.unrolled = copies;
}

static void check_for(Sema *S, Stmt *s) {
    if (!s->u.for_.var || !s->u.for_.start || !s->u.for_.end || !s->u.for_.body) return;
    Expr *bounds[3] = {s->u.for_.start, s->u.for_.end, s->u.for_.step};
    DType d = DT_ERROR;
    bool weak = true, ok = true;
    for (int i = 0; i < 3; i++) {
        Expr *b = bounds[i];
        if (!b) continue;
        check_expr(S, b);
        if (!require_value(S, b)) {
            ok = false;
            continue;
        }
        if (b->type.rank != 0 || !dtype_is_int(b->type.dtype)) {
            error(S, b->span, "range bounds must be scalar integers, got %s", tstr(S, b->type));
            ok = false;
            continue;
        }
        d = d == DT_ERROR ? b->type.dtype : dtype_promote(d, weak, b->type.dtype, b->weak);
        weak = weak && b->weak;
    }
    const char *what = s->u.for_.is_static ? "static_range" : "range";
    if (ok && s->u.for_.step && s->u.for_.step->is_const && s->u.for_.step->cv.i == 0) {
        error(S, s->u.for_.step->span, "the step of '%s' must not be zero", what);
        ok = false;
    }
    if (s->u.for_.unroll) {
        Expr *u = s->u.for_.unroll;
        check_expr(S, u);
        if (require_value(S, u) &&
            (!u->is_const || u->type.rank || !dtype_is_int(u->type.dtype) || u->cv.i < 1 || u->cv.i > MAX_UNROLL))
            error(S, u->span, "'unroll' takes a compile-time integer from 1 (no unrolling) to %d", MAX_UNROLL);
    }
    if (s->u.for_.is_static) {
        if (ok) check_static_for(S, s, d, weak);
        return;
    }
    push_scope(S);
    Symbol *sym = declare(S, SYM_LOOP, s->u.for_.var, s->u.for_.var_span,
                          type_scalar(ok ? d : DT_ERROR));
    s->u.for_.sym = sym;
    S->runtime_depth++;
    check_block_in_scope(S, s->u.for_.body);
    S->runtime_depth--;
    pop_scope(S);
}

static void check_stmt(Sema *S, Stmt *s) {
    switch (s->kind) {
    case S_LET: check_let(S, s); return;
    case S_ASSIGN: check_assign(S, s); return;
    case S_FOR: check_for(S, s); return;
    case S_WHILE:
        if (s->u.while_.cond) check_condition(S, s->u.while_.cond, "while");
        S->runtime_depth++;
        if (s->u.while_.body) check_stmt(S, s->u.while_.body);
        S->runtime_depth--;
        return;
    case S_IF: {
        const Expr *cond = s->u.if_.cond;
        if (cond && check_condition(S, s->u.if_.cond, "if") && cond->is_const) {
            /* a compile-time condition: only the branch taken is checked (and lowered), as
             * Triton prunes a constexpr `if` before checking it, so `if HAS_BIAS { ... }` may
             * use what exists only when HAS_BIAS is true */
            Stmt *taken = ast_const_if_taken(s);
            S->const_if_depth++;
            if (taken) check_stmt(S, taken);
            S->const_if_depth--;
            return;
        }
        S->runtime_depth++;
        if (s->u.if_.then_) check_stmt(S, s->u.if_.then_);
        if (s->u.if_.else_) check_stmt(S, s->u.if_.else_);
        S->runtime_depth--;
        return;
    }
    case S_RETURN:
        if (S->helper_depth > 0) {
            error(S, s->span, "a helper may 'return' only as its last statement (helpers are inlined)");
            S->misplaced_returns++;
            return;
        }
        if (s->u.ret.value) {
            check_expr(S, s->u.ret.value);
            error(S, s->u.ret.value->span, "a kernel returns no value; store results through a pointer");
        }
        return;
    case S_EXPR: {
        Expr *e = s->u.expr.expr;
        check_expr(S, e);
        if (e->kind != E_CALL && e->type.dtype != DT_ERROR)
            error(S, e->span, "this expression has no effect; a statement must be a call or an "
                  "assignment");
        return;
    }
    case S_BLOCK:
        push_scope(S);
        check_block_in_scope(S, s);
        pop_scope(S);
        return;
    }
}

static void check_block_in_scope(Sema *S, Stmt *block) {
    if (block->kind != S_BLOCK) {
        check_stmt(S, block);
        return;
    }
    for (int i = 0; i < block->u.block.stmts.len; i++) check_stmt(S, block->u.block.stmts.items[i]);
}

/* ------------------------------------------------------------ parameters */

static ConstDef *find_def(Sema *S, const char *name) {
    for (int i = 0; i < S->ndefs; i++)
        if (strcmp(S->defs[i].name, name) == 0) return &S->defs[i];
    return NULL;
}

/* -D KERNEL.NAME=None (this kernel's pointer only: the other kernels of a
 * module may use a parameter of the same name unconditionally), else -D
 * NAME=None (every kernel's). */
static ConstDef *find_none_def(Sema *S, const char *name) {
    for (int i = 0; i < S->ndefs; i++) {
        const char *d = S->defs[i].name, *dot = strchr(d, '.');
        if (dot && strcmp(dot + 1, name) == 0 && strlen(S->kernel->name) == (size_t)(dot - d) &&
            strncmp(d, S->kernel->name, (size_t)(dot - d)) == 0 && strcmp(S->defs[i].value, "None") == 0)
            return &S->defs[i];
    }
    ConstDef *def = find_def(S, name);
    return def && strcmp(def->value, "None") == 0 ? def : NULL;
}

/* Parse a -D value against the parameter's type. */
static bool parse_def_value(const char *text, DType t, ConstVal *out) {
    if (t == DT_TYPE) return dtype_from_name(text, strlen(text), &out->dtype);
    if (!*text) return false;
    const char *why;
    bool negative = text[0] == '-';
    const char *digits = text + (negative || text[0] == '+');
    if (t == DT_F32) {
        double v;
        if (!parse_float_literal(digits, strlen(digits), &v, &why)) return false;
        out->f = (double)(float)(negative ? -v : v);
        return true;
    }
    if (t == DT_I1 && (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)) {
        out->i = text[0] == 't';
        return true;
    }
    int64_t v;
    if (!parse_int_literal(digits, strlen(digits), &v, NULL, &why)) return false;
    if (negative) v = -v;
    out->i = v;
    return int_fits(t, v);
}

static void bind_const_param(Sema *S, KernelDef *k, Param *prm) {
    BlkType t = type_scalar(DT_ERROR);
    bool ok = true;
    if (prm->type.is_ptr) {
        error(S, prm->type.span, "a const parameter cannot be a pointer");
        ok = false;
    } else if (!resolve_type(S, &prm->type, &t)) {
        ok = false;
    } else if (!(t.dtype == DT_TYPE || t.dtype == DT_I1 || dtype_is_int(t.dtype) || t.dtype == DT_F32 ||
                 t.dtype == DT_STRING)) {
        error(S, prm->type.span, "const parameters must be an integer type, i1, f32, str or type; got %s",
              tstr(S, t));
        ok = false;
    }
    if (prm->align || prm->multiple_of || prm->equal_one) {
        error(S, prm->span, "attributes apply to runtime parameters, not to const '%s'", prm->name);
        ok = false;
    }
    ConstVal cv = {0};
    ConstDef *def = find_def(S, prm->name);
    if (ok && def && t.dtype == DT_STRING) {
        def->used = true;
        cv.str = arena_strndup(S->a, def->value, strlen(def->value));
    } else if (ok && def) {
        def->used = true;
        if (!parse_def_value(def->value, t.dtype, &cv)) {
            error(S, prm->name_span, "-D %s=%s: '%s' is not a valid %s value for kernel '%s'",
                  prm->name, def->value, def->value, dtype_name(t.dtype), k->name);
            ok = false;
        }
    } else if (ok && prm->default_value) {
        Expr *d = prm->default_value;
        check_expr(S, d);
        if (d->type.dtype == DT_ERROR) {
            ok = false;
        } else if (t.dtype == DT_TYPE) {
            if (d->type.dtype != DT_TYPE) {
                error(S, d->span, "the default of type parameter '%s' must be a type", prm->name);
                ok = false;
            }
            cv = d->cv;
        } else if (t.dtype == DT_STRING) {
            if (d->kind != E_STRING) {
                error(S, d->span, "the default of str parameter '%s' must be a string literal", prm->name);
                ok = false;
            } else {
                cv.str = arena_strndup(S->a, d->u.str.text, d->u.str.len);
            }
        } else if (!d->is_const || d->type.rank != 0) {
            error(S, d->span, "the default of const '%s' is not a compile-time constant", prm->name);
            ok = false;
        } else if (!assignable(S, d, t, prm->name, d->span) || !fold_convert(d, d->type, t.dtype, &cv)) {
            ok = false;
        }
    } else if (ok) {
        if (!prm->type.triton_constexpr) /* that error said how to write it */
            error(S, prm->name_span, "const parameter '%s' of kernel '%s' has no value: give it a "
                  "default or pass -D %s=...", prm->name, k->name, prm->name);
        ok = false;
    } else if (def) {
        def->used = true;
    }
    Symbol *sym = declare(S, SYM_CONST, prm->name, prm->name_span, ok ? t : type_scalar(DT_ERROR));
    sym->is_const = ok;
    sym->cv = cv;
    sym->param = prm;
    prm->sym = sym;
}

static void bind_runtime_param(Sema *S, Param *prm) {
    BlkType t = type_scalar(DT_ERROR);
    bool ok = resolve_type(S, &prm->type, &t);
    if (ok && t.dtype == DT_TYPE) {
        error(S, prm->type.span, "a 'type' parameter must be declared 'const'");
        ok = false;
    }
    if (ok && dtype_is_fp8(t.dtype)) {
        error(S, prm->type.span, "a scalar parameter cannot be %s: pass an f32 and convert it with 'as'",
              dtype_name(t.dtype));
        ok = false;
    }
    if (ok && prm->align && t.dtype != DT_PTR) {
        error(S, prm->span, "@align applies to pointer parameters; '%s' is %s", prm->name, tstr(S, t));
        ok = false;
    }
    if (ok && prm->equal_one && !dtype_is_int(t.dtype)) {
        error(S, prm->span, "@equal applies to integer parameters; '%s' is %s", prm->name, tstr(S, t));
        ok = false;
    }
    if (ok && prm->equal_one && prm->multiple_of > 1) { /* 1 is a multiple of nothing but 1 */
        error(S, prm->span, "'%s' cannot be both @equal(1) and @multiple_of(%lld)", prm->name,
              (long long)prm->multiple_of);
        ok = false;
    }
    if (ok && prm->multiple_of && !dtype_is_int(t.dtype)) {
        error(S, prm->span, "@multiple_of applies to integer parameters; '%s' is %s", prm->name,
              tstr(S, t));
        ok = false;
    }
    /* -D [KERNEL.]NAME=None on a pointer: passed None in this build (Python does it for a None argument) */
    ConstDef *def = ok && t.dtype == DT_PTR ? find_none_def(S, prm->name) : NULL;
    prm->is_none = def != NULL;
    if (def) def->used = true;
    Symbol *sym = declare(S, SYM_PARAM, prm->name, prm->name_span, ok ? t : type_scalar(DT_ERROR));
    sym->param = prm;
    prm->sym = sym;
}

static void check_kernel(Sema *S, KernelDef *k) {
    S->kernel = k;
    S->inlined_calls = 0;
    S->static_copies = 0;
    S->scope = NULL;
    S->next_sym_id = 0;
    memset(&S->decls, 0, sizeof S->decls);
    int errors_before = S->de->errors;
    push_scope(S); /* parameters */
    for (int i = 0; i < k->params.len; i++) {
        Param *p = k->params.items[i];
        if (p->name && p->is_const) bind_const_param(S, k, p);
    }
    int runtime_params = 0;
    for (int i = 0; i < k->params.len; i++) {
        Param *p = k->params.items[i];
        if (p->name && !p->is_const) {
            bind_runtime_param(S, p);
            /* the runtime's launch (and its argument checks) take at most this many */
            if (++runtime_params == BLK_MAX_KERNEL_ARGS + 1)
                error(S, p->name_span, "kernel '%s' has more than %d runtime parameters", k->name,
                      BLK_MAX_KERNEL_ARGS);
        }
    }
    collect_decls(S, k->body);
    push_scope(S); /* body */
    check_block_in_scope(S, k->body);
    pop_scope(S);
    pop_scope(S);
    k->checked_ok = S->de->errors == errors_before;
}

bool sema_check_module(Arena *a, Module *m, DiagEngine *de, ConstDef *defs, int ndefs) {
    Sema S = {0};
    S.a = a;
    S.m = m;
    S.de = de;
    S.src = m->src;
    S.defs = defs;
    S.ndefs = ndefs;
    int errors_before = de->errors;
    /* Module-level names: kernels and helpers must be unique. A helper may
     * take a builtin's name (calls in this file then call the helper), so a
     * builtin added to the language never breaks a kernel that already
     * defined one of that name. */
    for (int i = 0; i < m->helpers.len; i++) {
        HelperDef *h = m->helpers.items[i];
        if (builtin_find(h->name) >= 0)
            note(&S, h->name_span, "helper '%s' hides the builtin of that name: calls of '%s' in this file call the "
                 "helper", h->name, h->name);
        for (int j = 0; j < i; j++) {
            HelperDef *o = m->helpers.items[j];
            if (strcmp(o->name, h->name) == 0) {
                error(&S, h->name_span, "redefinition of helper '%s'", h->name);
                note(&S, o->name_span, "'%s' was first defined here", o->name);
            }
        }
        if (is_kernel_name(&S, h->name))
            error(&S, h->name_span, "'%s' is already the name of a kernel", h->name);
    }
    /* A kernel's name is a PTX symbol: it must not be one the PTX or the driver
     * already gives a meaning (ptxas rejects them), nor blkc's own. */
    static const char *const reserved_symbols[] = {"WARP_SZ", "vprintf", "malloc", "free", "__assertfail",
                                                   "blk_shared"};
    for (int i = 0; i < m->kernels.len; i++) {
        KernelDef *k = m->kernels.items[i];
        for (size_t r = 0; r < sizeof reserved_symbols / sizeof *reserved_symbols; r++)
            if (strcmp(k->name, reserved_symbols[r]) == 0)
                error(&S, k->name_span, "'%s' cannot name a kernel: PTX or blkc uses that symbol", k->name);
        for (int j = 0; j < i; j++) {
            KernelDef *o = m->kernels.items[j];
            if (strcmp(o->name, k->name) == 0) {
                error(&S, k->name_span, "redefinition of kernel '%s'", k->name);
                note(&S, o->name_span, "'%s' was first defined here", o->name);
            }
        }
    }
    for (int i = 0; i < m->kernels.len; i++) check_kernel(&S, m->kernels.items[i]);
    if (m->kernels.len == 0 && de->errors == 0) { /* after other errors it would be noise */
        /* nothing to compile or launch: empty PTX would only fail later, far from the cause */
        Span none = {0};
        error(&S, none, "no kernel in this module");
    }
    for (int i = 0; i < ndefs; i++) {
        if (!defs[i].used) {
            Span none = {0};
            const char *dot = strchr(defs[i].name, '.');
            if (strcmp(defs[i].value, "None") == 0 && dot)
                error(&S, none, "-D %s=None: the module has no kernel '%.*s' with a pointer parameter '%s'",
                      defs[i].name, (int)(dot - defs[i].name), defs[i].name, dot + 1);
            else if (strcmp(defs[i].value, "None") == 0)
                error(&S, none, "-D %s=None: no kernel in this module has a pointer parameter named '%s'",
                      defs[i].name, defs[i].name);
            else
                error(&S, none, "-D %s: no kernel in this module has a const parameter named '%s'",
                      defs[i].name, defs[i].name);
        }
    }
    return de->errors == errors_before;
}
