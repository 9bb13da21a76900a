/* sema_stmt.c: statements (docs/language.md §5): let, var and assignment
 * (a var may change type only in a compile-time branch), if with its
 * compile-time pruning, for and while, static_range's copies, return. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

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
bool sema_assignable(Sema *S, Expr *v, BlkType t, const char *name, Span span) {
    if (!sema_require_value(S, v)) return false;
    bool dtype_ok = v->type.dtype == t.dtype && (t.dtype != DT_PTR || v->type.elem == t.elem);
    if (!dtype_ok && v->weak && sema_is_numeric(t.dtype) &&
        dtype_promote(v->type.dtype, true, t.dtype, false) == t.dtype) {
        if (!sema_check_literal_fits(S, v, t.dtype)) return false; /* said: the literal, not the type, is wrong */
        dtype_ok = true;
    }
    if (!dtype_ok || !sema_fits_shape(v->type, t)) {
        BlkType want_dtype = type_with_shape(t, 0, NULL);
        if (!dtype_ok)
            error(S, span, "cannot assign a value of type %s to '%s' of type %s; convert with 'as %s'",
                  sema_tstr(S, v->type), name, sema_tstr(S, t), sema_tstr(S, want_dtype));
        else
            error(S, span, "cannot assign a value of shape %s to '%s' of shape %s: a variable "
                  "keeps the shape it was declared with", sema_sstr(S, v->type), name, sema_sstr(S, t));
        return false;
    }
    return true;
}

/* let (a, b) = helper(...): each name takes one of the helper's values. */
static void check_let_parts(Sema *S, Stmt *s) {
    Expr *init = s->u.let.init;
    sema_check_expr(S, init);
    const PtrVec *parts = &s->u.let.parts;
    const Expr *values = init->type.dtype == DT_TUPLE && init->kind == E_CALL ? init->u.call.inline_result : NULL;
    if (!values && init->type.dtype != DT_ERROR)
        error(S, init->span,
              "'let (...)' takes apart several values (a helper's 'return (a, b)', split, reduce of a tuple); this is one value");
    else if (values && values->u.shape.dims.len != parts->len)
        error(S, s->u.let.name_span, "%d names for the %d values '%s' returns", parts->len, values->u.shape.dims.len,
              init->u.call.name);
    bool ok = values && values->u.shape.dims.len == parts->len;
    for (int i = 0; i < parts->len; i++) {
        Stmt *part = parts->items[i];
        const Expr *v = ok ? values->u.shape.dims.items[i] : NULL;
        Symbol *sym = sema_declare(S, part->u.let.is_var ? SYM_VAR : SYM_LET, part->u.let.name, part->u.let.name_span,
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
    sema_check_expr(S, init);
    BlkType t = init->type;
    bool ok = sema_require_value(S, init);
    if (ok && s->u.let.has_type) {
        BlkType want;
        if (!sema_resolve_type(S, &s->u.let.type, &want)) ok = false;
        else if (want.dtype == DT_TYPE) {
            error(S, s->u.let.type.span, "'type' is only for const parameters");
            ok = false;
        } else {
            want = type_with_shape(want, init->type.rank, init->type.shape);
            ok = sema_assignable(S, init, want, s->u.let.name, init->span);
            t = want;
        }
    }
    if (!ok) t = type_scalar(DT_ERROR);
    Symbol *sym = sema_declare(S, s->u.let.is_var ? SYM_VAR : SYM_LET, s->u.let.name,
                          s->u.let.name_span, t);
    s->u.let.sym = sym;
    if (ok) sym->quotient = sema_held_quotient(init);
    if (!s->u.let.is_var && ok) {
        sym->is_const = init->is_const && !s->u.let.has_type;
        sym->weak = init->weak && !s->u.let.has_type;
        sym->cv = init->cv;
    } else if (ok && init->weak && !s->u.let.has_type && t.dtype == DT_I32 && init->is_const &&
               !sema_int_fits(DT_I32, init->cv.i)) {
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
    if (type_equal(type_with_shape(v->type, 0, NULL), type_with_shape(sym->type, 0, NULL)) &&
        shape_equal(v->type, sym->type))
        return false;
    if (S->const_if_depth <= sym->const_if_depth || S->runtime_depth != sym->runtime_depth || v->weak ||
        !sema_require_value(S, s->u.assign.value) || v->type.dtype == DT_VOID)
        return false;
    Scope *home = S->scope;
    while (home && sema_lookup_in(home, sym->name) != sym) home = home->parent;
    if (!home) return false;
    Symbol *rebound = arena_alloc(S->a, sizeof *rebound);
    *rebound = *sym;
    rebound->type = v->type;
    rebound->weak = false;
    rebound->quotient = sema_held_quotient(v);
    rebound->id = S->next_sym_id++;
    ptrvec_push(S->a, &home->syms, rebound); /* a later symbol of the name wins the scan */
    if (home->table) {
        if (2 * home->syms.len <= home->table_cap) *sema_table_slot(home, rebound->name) = rebound;
        else sema_table_insert_all(S, home);
    }
    s->u.assign.sym = rebound;
    return true;
}

static void check_assign(Sema *S, Stmt *s) {
    Symbol *sym = sema_lookup(S, s->u.assign.name);
    if (!sym) {
        sema_check_expr(S, s->u.assign.value);
        const Expr *v = s->u.assign.value;
        if (s->u.assign.op == ASSIGN_PLAIN && !sema_find_decl(S, s->u.assign.name)) {
            /* Python's `x = ...`: one error, and x is known from here on (no error at each use) */
            error(S, s->u.assign.name_span, "'%s' is not declared: blk declares a name with 'let %s = ...' (or "
                  "'var %s = ...' to assign it again)", s->u.assign.name, s->u.assign.name, s->u.assign.name);
            sema_declare(S, SYM_VAR, s->u.assign.name, s->u.assign.name_span,
                    v->type.dtype == DT_VOID ? type_scalar(DT_ERROR) : v->type);
            return;
        }
        sema_report_unknown_name(S, s->u.assign.name, s->u.assign.name_span);
        return;
    }
    s->u.assign.sym = sym;
    if (sym->kind != SYM_VAR) {
        sema_check_expr(S, s->u.assign.value);
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
    sema_check_expr(S, s->u.assign.value);
    if (sym->type.dtype == DT_ERROR || s->u.assign.value->type.dtype == DT_ERROR) return;
    if (rebind_var(S, s, sym)) return;
    if (!sema_assignable(S, s->u.assign.value, sym->type, sym->name, s->span)) {
        if (S->const_if_depth > sym->const_if_depth && S->runtime_depth != sym->runtime_depth)
            note(S, sym->decl, "'%s' may take another type in a compile-time branch only where no runtime loop or "
                 "branch lies between it and this declaration", sym->name);
        return;
    }
    if (!sym->quotient) sym->quotient = sema_held_quotient(s->u.assign.value);
}

static bool check_condition(Sema *S, Expr *cond, const char *what) {
    sema_check_expr(S, cond);
    if (!sema_require_value(S, cond)) return false;
    if (cond->type.dtype != DT_I1 || cond->type.rank != 0) {
        if (cond->type.rank != 0)
            error(S, cond->span, "the condition of '%s' must be a scalar i1, got a %s block (use "
                  "where() to choose per element)", what, sema_tstr(S, cond->type));
        else if (cond->type.dtype == DT_PTR)
            error(S, cond->span, "the condition of '%s' must be i1, got the pointer %s: for Triton's 'if ptr is not "
                  "None', write 'if %s != None' (a pointer passed None is absent from that build)", what,
                  sema_tstr(S, cond->type), cond->kind == E_NAME ? cond->u.name.name : "ptr");
        else
            error(S, cond->span, "the condition of '%s' must be i1, got %s (compare it, e.g. x != 0)",
                  what, sema_tstr(S, cond->type));
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
        sema_push_scope(S);
        Symbol *sym = sema_declare(S, SYM_LOOP, s->u.for_.var, s->u.for_.var_span, type_scalar(d));
        sym->is_const = true;
        sym->weak = weak;
        sym->cv.i = iv;
        sema_check_block_in_scope(S, body);
        sema_pop_scope(S);
        ptrvec_push(S->a, &copies->u.block.stmts, body);
        if (S->de->errors != errors_before) {
            if (count > 1) note(S, s->u.for_.var_span, "in the copy of the body where %s = %lld", s->u.for_.var,
                                (long long)iv);
            return; /* the other copies would repeat it */
        }
        int64_t next;
        if (__builtin_add_overflow(iv, step, &next) || !sema_int_fits(d, next)) break;
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
        sema_check_expr(S, b);
        if (!sema_require_value(S, b)) {
            ok = false;
            continue;
        }
        if (b->type.rank != 0 || !dtype_is_int(b->type.dtype)) {
            error(S, b->span, "range bounds must be scalar integers, got %s", sema_tstr(S, b->type));
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
        sema_check_expr(S, u);
        if (sema_require_value(S, u) &&
            (!u->is_const || u->type.rank || !dtype_is_int(u->type.dtype) || u->cv.i < 1 || u->cv.i > MAX_UNROLL))
            error(S, u->span, "'unroll' takes a compile-time integer from 1 (no unrolling) to %d", MAX_UNROLL);
    }
    if (s->u.for_.is_static) {
        if (ok) check_static_for(S, s, d, weak);
        return;
    }
    sema_push_scope(S);
    Symbol *sym = sema_declare(S, SYM_LOOP, s->u.for_.var, s->u.for_.var_span,
                          type_scalar(ok ? d : DT_ERROR));
    s->u.for_.sym = sym;
    S->runtime_depth++;
    sema_check_block_in_scope(S, s->u.for_.body);
    S->runtime_depth--;
    sema_pop_scope(S);
}

void sema_check_stmt(Sema *S, Stmt *s) {
    switch (s->kind) {
    case S_LET: check_let(S, s); return;
    case S_ASSIGN: check_assign(S, s); return;
    case S_FOR: check_for(S, s); return;
    case S_WHILE:
        if (s->u.while_.cond) check_condition(S, s->u.while_.cond, "while");
        S->runtime_depth++;
        if (s->u.while_.body) sema_check_stmt(S, s->u.while_.body);
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
            if (taken) sema_check_stmt(S, taken);
            S->const_if_depth--;
            return;
        }
        S->runtime_depth++;
        if (s->u.if_.then_) sema_check_stmt(S, s->u.if_.then_);
        if (s->u.if_.else_) sema_check_stmt(S, s->u.if_.else_);
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
            sema_check_expr(S, s->u.ret.value);
            error(S, s->u.ret.value->span, "a kernel returns no value; store results through a pointer");
        }
        return;
    case S_EXPR: {
        Expr *e = s->u.expr.expr;
        sema_check_expr(S, e);
        if (e->kind != E_CALL && e->type.dtype != DT_ERROR)
            error(S, e->span, "this expression has no effect; a statement must be a call or an "
                  "assignment");
        return;
    }
    case S_BLOCK:
        sema_push_scope(S);
        sema_check_block_in_scope(S, s);
        sema_pop_scope(S);
        return;
    }
}

void sema_check_block_in_scope(Sema *S, Stmt *block) {
    if (block->kind != S_BLOCK) {
        sema_check_stmt(S, block);
        return;
    }
    for (int i = 0; i < block->u.block.stmts.len; i++) sema_check_stmt(S, block->u.block.stmts.items[i]);
}

/* ------------------------------------------------------------ parameters */
