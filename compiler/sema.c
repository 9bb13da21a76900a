/* sema.c: the checker (docs/language.md §3-§6): sema_check_module, scopes
 * and names, constants, type helpers, helpers inlined as checked copies, and
 * const parameters bound from -D values or defaults. Expressions, builtins'
 * arguments, builtins, inline asm and statements are checked in sema_expr.c,
 * sema_args.c, sema_builtins.c, sema_asm.c and sema_stmt.c (their shared
 * state: sema_internal.h). Every expression gets a BlkType; constant
 * scalars are folded. An expression whose type is DT_ERROR already produced
 * an error, so its users stay quiet instead of cascading. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

/* ------------------------------------------------------------ diagnostics */

void sema_report(Sema *S, DiagSeverity severity, Span span, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(S->de, severity, S->src, span, fmt, ap);
    va_end(ap);
}
/* Shape only, for messages: "[16]", "[4, 8]" or "scalar". */
const char *sema_sstr(Sema *S, BlkType t) {
    char buf[32];
    shape_str(t, buf, sizeof buf);
    return arena_strndup(S->a, buf, strlen(buf));
}

const char *sema_tstr(Sema *S, BlkType t) {
    char buf[64];
    type_str(t, buf, sizeof buf);
    return arena_strndup(S->a, buf, strlen(buf));
}

/* ---------------------------------------------------------------- scopes */

void sema_push_scope(Sema *S) {
    Scope *sc = arena_alloc(S->a, sizeof *sc);
    sc->parent = S->scope;
    S->scope = sc;
}

void sema_pop_scope(Sema *S) { S->scope = S->scope->parent; }

/* Scopes of a few names are scanned; a large one (a generated kernel may hold
 * 100k lets) gets a hash table, so checking stays linear in the program. */
enum { SCOPE_SCAN_MAX = 16 };

/* The slot for name: its symbol's, or the empty one where it would go. */
Symbol **sema_table_slot(Scope *sc, const char *name) {
    uint32_t mask = (uint32_t)sc->table_cap - 1;
    for (uint32_t i = str_hash(name) & mask;; i = (i + 1) & mask)
        if (!sc->table[i] || strcmp(sc->table[i]->name, name) == 0) return &sc->table[i];
}

void sema_table_insert_all(Sema *S, Scope *sc) {
    int cap = sc->table_cap ? sc->table_cap : 4 * SCOPE_SCAN_MAX;
    while (cap < 2 * sc->syms.len) cap *= 2;
    sc->table = arena_alloc(S->a, (size_t)cap * sizeof *sc->table); /* zeroed */
    sc->table_cap = cap;
    for (int i = 0; i < sc->syms.len; i++) { /* in order: a later redefinition wins, as in the scan */
        Symbol *sym = sc->syms.items[i];
        *sema_table_slot(sc, sym->name) = sym;
    }
}

Symbol *sema_lookup_in(Scope *sc, const char *name) {
    if (sc->table) return *sema_table_slot(sc, name);
    for (int i = sc->syms.len - 1; i >= 0; i--) {
        Symbol *s = sc->syms.items[i];
        if (strcmp(s->name, name) == 0) return s;
    }
    return NULL;
}

Symbol *sema_lookup(Sema *S, const char *name) {
    for (Scope *sc = S->scope; sc; sc = sc->parent) {
        Symbol *s = sema_lookup_in(sc, name);
        if (s) return s;
    }
    return NULL;
}

Symbol *sema_declare(Sema *S, SymbolKind kind, const char *name, Span span, BlkType type) {
    Symbol *prev = sema_lookup_in(S->scope, name);
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
    if (sc->table && 2 * sc->syms.len <= sc->table_cap) *sema_table_slot(sc, name) = s;
    else if (sc->syms.len > SCOPE_SCAN_MAX) sema_table_insert_all(S, sc);
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
const DeclSite *sema_find_decl(Sema *S, const char *name) {
    for (int i = 0; i < S->decls.len; i++)
        if (strcmp(((DeclSite *)S->decls.items[i])->name, name) == 0) return S->decls.items[i];
    return NULL;
}

void sema_report_unknown_name(Sema *S, const char *name, Span use) {
    const DeclSite *d = sema_find_decl(S, name);
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

bool sema_int_fits(DType t, int64_t v) { return !dtype_is_int(t) && t != DT_I1 ? true : dtype_fits_int(t, v); }

void sema_set_const_int(Expr *e, int64_t v) {
    e->is_const = true;
    e->cv.i = v;
}

void sema_set_const_float(Expr *e, double v) {
    e->is_const = true;
    e->cv.f = (double)(float)v;
}

/* Convert a constant to dtype `to` (for casts and weak-literal adoption),
 * with the semantics of `as` at run time (convert_scalar, shared with the
 * interpreter): float to integer truncates and saturates. Only f32 floats
 * are folded; f16 and bf16 stay runtime values. */
bool sema_fold_convert(Expr *e, BlkType from, DType to, ConstVal *out) {
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
bool sema_check_literal_fits(Sema *S, Expr *lit, DType to) {
    if (lit->weak && lit->is_const && (dtype_is_float(to) || dtype_is_fp8(to)))
        return check_float_literal_fits(S, lit, to);
    if (!lit->weak || !lit->is_const || !dtype_is_int(lit->type.dtype)) return true;
    bool above_i64 = lit->type.dtype == DT_U64 && lit->cv.i < 0; /* its bits, 2^63 or more */
    if (above_i64 ? to != DT_U64 : dtype_is_int(to) && !sema_int_fits(to, lit->cv.i)) {
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
bool sema_require_value(Sema *S, const Expr *e) {
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

bool sema_is_numeric(DType d) { return dtype_is_int(d) || dtype_is_float(d); }

/* fp8 values only move and convert; arithmetic on them is refused here,
 * with the conversion to write. */
bool sema_reject_fp8(Sema *S, const Expr *x, const char *what) {
    if (!dtype_is_fp8((DType)x->type.dtype)) return false;
    error(S, x->span, "'%s' on %s: fp8 types are for storage and conversion; convert first ('x as f32', or f16)",
          what, sema_tstr(S, x->type));
    return true;
}

bool sema_broadcast_or_error(Sema *S, Span span, BlkType a, BlkType b, BlkType *out) {
    if (!shape_broadcast(a, b, out)) {
        error(S, span, "shapes of %s and %s cannot be broadcast together", sema_tstr(S, a), sema_tstr(S, b));
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
bool sema_fits_shape(BlkType value, BlkType target) {
    BlkType out = target;
    return shape_broadcast(value, target, &out) && shape_equal(out, target);
}

/* Resolve parsed type syntax; `allow_type_kw` for const parameter declarations. */
bool sema_resolve_type(Sema *S, const TypeSyntax *ts, BlkType *out) {
    if (ts->is_type_kw) {
        *out = type_scalar(DT_TYPE);
        return true;
    }
    DType dt = ts->dtype;
    if (ts->name && !ts->is_ptr && strcmp(ts->name, "str") == 0 && !sema_lookup(S, "str")) {
        *out = type_scalar(DT_STRING); /* a const parameter's only (bind_const_param) */
        return true;
    }
    if (ts->name) {
        Symbol *sym = sema_lookup(S, ts->name);
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

HelperDef *sema_find_helper(Sema *S, const char *name) {
    for (int i = 0; i < S->m->helpers.len; i++) {
        HelperDef *h = S->m->helpers.items[i];
        if (strcmp(h->name, name) == 0) return h;
    }
    return NULL;
}

bool sema_is_kernel_name(Sema *S, const char *name) {
    for (int i = 0; i < S->m->kernels.len; i++)
        if (strcmp(((KernelDef *)S->m->kernels.items[i])->name, name) == 0) return true;
    return false;
}

/* Inline a helper: a fresh copy of its body, checked with this call's
 * argument types, in a scope that sees only the helper's parameters. */
void sema_check_helper_call(Sema *S, Expr *e, HelperDef *h) {
    for (int i = 0; i < e->u.call.args.len; i++) {
        Expr *a = e->u.call.args.items[i];
        sema_check_expr(S, a);
        if (e->u.call.arg_names.items[i]) {
            error(S, a->span, "helper arguments are positional");
            return;
        }
    }
    for (int i = 0; i < e->u.call.args.len; i++)
        if (!sema_require_value(S, e->u.call.args.items[i])) return;
    if (e->u.call.args.len != h->params.len) {
        error(S, e->span, "helper '%s' takes %d argument%s, got %d", h->name, h->params.len,
              h->params.len == 1 ? "" : "s", e->u.call.args.len);
        note(S, h->name_span, "'%s' is defined here", h->name);
        return;
    }
    if (sema_may_inline(S, e->span, h, "call to")) sema_inline_helper(S, e, h);
}

/* The limits every inlining keeps (calls and combines alike): no recursion,
 * a bounded depth, a bounded number per kernel. */
bool sema_may_inline(Sema *S, Span at, HelperDef *h, const char *what) {
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
void sema_inline_helper(Sema *S, Expr *e, HelperDef *h) {
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
    sema_push_scope(S);
    for (int i = 0; i < h->params.len; i++) {
        Param *prm = h->params.items[i];
        Expr *a = e->u.call.args.items[i];
        Symbol *sym = sema_declare(S, SYM_LET, prm->name, prm->name_span, a->type);
        sym->quotient = sema_held_quotient(a);
        sym->is_const = a->is_const;
        sym->weak = a->weak;
        sym->cv = a->cv;
        ptrvec_push(S->a, &e->u.call.inline_params, sym);
    }
    int misplaced_before = S->misplaced_returns;
    for (int i = 0; i < stmts->len; i++) sema_check_stmt(S, stmts->items[i]);
    if (S->misplaced_returns != misplaced_before) {
        e->type = type_scalar(DT_ERROR); /* its value is unknowable; already reported */
    } else if (result && result->kind == E_TUPLE) {
        sema_check_expr(S, result);
        bool ok = true;
        for (int i = 0; i < result->u.shape.dims.len; i++) ok &= sema_require_value(S, result->u.shape.dims.items[i]);
        e->type = type_scalar(ok ? DT_TUPLE : DT_ERROR);
    } else if (result) {
        sema_check_expr(S, result);
        if (sema_require_value(S, result)) {
            e->type = result->type;
            e->is_const = result->is_const;
            e->weak = result->weak;
            e->cv = result->cv;
        }
    } else {
        e->type = type_scalar(DT_VOID);
    }
    sema_pop_scope(S);
    S->scope = saved_scope;
    S->decls = saved_decls;
    S->helper_depth--;
    h->expanding = false;
    e->u.call.inline_body = body;
    e->u.call.inline_result = result;
}

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
    return sema_int_fits(t, v);
}

static void bind_const_param(Sema *S, KernelDef *k, Param *prm) {
    BlkType t = type_scalar(DT_ERROR);
    bool ok = true;
    if (prm->type.is_ptr) {
        error(S, prm->type.span, "a const parameter cannot be a pointer");
        ok = false;
    } else if (!sema_resolve_type(S, &prm->type, &t)) {
        ok = false;
    } else if (!(t.dtype == DT_TYPE || t.dtype == DT_I1 || dtype_is_int(t.dtype) || t.dtype == DT_F32 ||
                 t.dtype == DT_STRING)) {
        error(S, prm->type.span, "const parameters must be an integer type, i1, f32, str or type; got %s",
              sema_tstr(S, t));
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
        sema_check_expr(S, d);
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
        } else if (!sema_assignable(S, d, t, prm->name, d->span) || !sema_fold_convert(d, d->type, t.dtype, &cv)) {
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
    Symbol *sym = sema_declare(S, SYM_CONST, prm->name, prm->name_span, ok ? t : type_scalar(DT_ERROR));
    sym->is_const = ok;
    sym->cv = cv;
    sym->param = prm;
    prm->sym = sym;
}

static void bind_runtime_param(Sema *S, Param *prm) {
    BlkType t = type_scalar(DT_ERROR);
    bool ok = sema_resolve_type(S, &prm->type, &t);
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
        error(S, prm->span, "@align applies to pointer parameters; '%s' is %s", prm->name, sema_tstr(S, t));
        ok = false;
    }
    if (ok && prm->equal_one && !dtype_is_int(t.dtype)) {
        error(S, prm->span, "@equal applies to integer parameters; '%s' is %s", prm->name, sema_tstr(S, t));
        ok = false;
    }
    if (ok && prm->equal_one && prm->multiple_of > 1) { /* 1 is a multiple of nothing but 1 */
        error(S, prm->span, "'%s' cannot be both @equal(1) and @multiple_of(%lld)", prm->name,
              (long long)prm->multiple_of);
        ok = false;
    }
    if (ok && prm->multiple_of && !dtype_is_int(t.dtype)) {
        error(S, prm->span, "@multiple_of applies to integer parameters; '%s' is %s", prm->name,
              sema_tstr(S, t));
        ok = false;
    }
    /* -D [KERNEL.]NAME=None on a pointer: passed None in this build (Python does it for a None argument) */
    ConstDef *def = ok && t.dtype == DT_PTR ? find_none_def(S, prm->name) : NULL;
    prm->is_none = def != NULL;
    if (def) def->used = true;
    Symbol *sym = sema_declare(S, SYM_PARAM, prm->name, prm->name_span, ok ? t : type_scalar(DT_ERROR));
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
    sema_push_scope(S); /* parameters */
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
    sema_push_scope(S); /* body */
    sema_check_block_in_scope(S, k->body);
    sema_pop_scope(S);
    sema_pop_scope(S);
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
        if (sema_is_kernel_name(&S, h->name))
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
