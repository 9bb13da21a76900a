/* sema_args.c: a builtin's arguments: binding them to its signature, and
 * the checks its checker asks of each (a constant, a type, a shape, a
 * pointer, a mask, an axis, a choice of names, cache controls), and the
 * combine helpers of reduce/scan/sort-like builtins called on scalars. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

static const char *param_list(Sema *S, const BuiltinSig *sig) {
    const char *s = "";
    for (int i = 0; i < BUILTIN_MAX_PARAMS && sig->params[i]; i++)
        s = arena_printf(S->a, "%s%s%s", s, i ? ", " : "", sig->params[i]);
    return s;
}

/* Put named and positional arguments into parameter order. */
bool sema_bind_builtin_args(Sema *S, Expr *e, const BuiltinSig *sig) {
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
            if (i >= sig->max_args && sig->max_args > 0 && sig->params[sig->max_args - 1] &&
                !strcmp(sig->params[sig->max_args - 1], "dims")) {
                /* Triton's trans(x, 0, 2, 1) */
                error(S, arg->span, "'%s' takes the order as one list: write '%s(x, [0, 2, 1])'", sig->name, sig->name);
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

Expr *sema_arg(Expr *e, int i) { return i < e->u.call.args.len ? e->u.call.args.items[i] : NULL; }

bool sema_const_int_arg(Sema *S, Expr *call, Expr *a, const char *what, int64_t *out) {
    if (!a->is_const || !(dtype_is_int(a->type.dtype) || a->type.dtype == DT_I1) || a->type.rank) {
        error(S, a->span, "%s of '%s' must be a compile-time integer constant", what,
              call->u.call.name);
        return false;
    }
    *out = a->cv.i;
    return true;
}

bool sema_dtype_arg(Sema *S, Expr *a, DType *out) {
    if (a->type.dtype != DT_TYPE) {
        if (a->type.dtype != DT_ERROR) error(S, a->span, "expected a type such as f32 here");
        return false;
    }
    *out = a->cv.dtype;
    return true;
}

bool sema_shape_arg(Sema *S, Expr *a, BlkType *out) {
    if (a->kind != E_SHAPE) {
        error(S, a->span, "expected a shape list such as [BLOCK] or [M, N]");
        return false;
    }
    int n = a->u.shape.dims.len;
    if (n < 1 || n > BLK_MAX_RANK) {
        error(S, a->span, "a block has 1 to %d dimensions, this shape has %d", BLK_MAX_RANK, n);
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

bool sema_permutation_arg(Sema *S, Expr *a, int rank, int *from) {
    if (a->kind != E_SHAPE || a->u.shape.dims.len != rank) {
        error(S, a->span, "expected the order of the %d dimensions as a list, such as %s", rank,
              rank == 2 ? "[1, 0]" : "[0, 2, 1]");
        return false;
    }
    unsigned seen = 0;
    for (int d = 0; d < rank; d++) {
        Expr *x = a->u.shape.dims.items[d];
        if (x->type.dtype == DT_ERROR) return false;
        if (!x->is_const || !dtype_is_int(x->type.dtype) || x->type.rank || x->cv.i < 0 || x->cv.i >= rank ||
            (seen & 1u << x->cv.i)) {
            error(S, x->span, "the order lists each dimension 0 to %d once, as compile-time integers", rank - 1);
            return false;
        }
        seen |= 1u << x->cv.i;
        from[d] = (int)x->cv.i;
    }
    return true;
}

/* A pointer (scalar or block) argument; reports otherwise. */
bool sema_pointer_arg(Sema *S, Expr *call, Expr *p) {
    if (p->type.dtype != DT_PTR) {
        error(S, p->span, "'%s' needs a pointer or a block of pointers, got %s", call->u.call.name,
              sema_tstr(S, p->type));
        return false;
    }
    return true;
}

/* An optional mask that must broadcast to `target`'s shape. */
bool sema_mask_arg(Sema *S, Expr *call, Expr *m, BlkType target) {
    if (!m) return true;
    if (!sema_require_value(S, m)) return false;
    if (m->type.dtype != DT_I1) {
        error(S, m->span, "the mask of '%s' must be i1, got %s", call->u.call.name, sema_tstr(S, m->type));
        return false;
    }
    if (!sema_fits_shape(m->type, target)) {
        error(S, m->span, "a mask of shape %s does not fit the pointer's shape %s in '%s'",
              sema_sstr(S, m->type), sema_sstr(S, target), call->u.call.name);
        return false;
    }
    return true;
}

bool sema_value_fits(Sema *S, Expr *call, Expr *v, BlkType target, const char *what) {
    if (!sema_require_value(S, v)) return false;
    if (!sema_fits_shape(v->type, target)) {
        error(S, v->span, "%s of shape %s does not fit the pointer's shape %s in '%s'", what,
              sema_sstr(S, v->type), sema_sstr(S, target), call->u.call.name);
        return false;
    }
    return true;
}

/* The axis argument ax of a builtin on block x: optional for rank 1. */
bool sema_axis_arg(Sema *S, Expr *e, Expr *ax, BlkType x, int64_t *axis) {
    *axis = 0;
    if (ax) {
        if (!sema_const_int_arg(S, e, ax, "the axis", axis)) return false;
    } else if (x.rank > 1) {
        error(S, e->span, "'%s' of a rank-%d block needs an axis", e->u.call.name, x.rank);
        return false;
    }
    if (*axis < 0 || *axis >= x.rank) {
        error(S, ax ? ax->span : e->span, "axis %lld is out of range for the %s block", (long long)*axis,
              sema_tstr(S, x));
        return false;
    }
    return true;
}

/* A string argument's choices as an error lists them, from its table: "a"
 * (the default), "b", "c" or "d". */
const char *sema_choices_text(Sema *S, const char *const *names, int n) {
    char *t = arena_printf(S->a, "\"%s\" (the default)", names[0]);
    for (int i = 1; i < n; i++) t = arena_printf(S->a, "%s%s\"%s\"", t, i + 1 == n ? " or " : ", ", names[i]);
    return t;
}

/* A compile-time i1 flag (sort's descending, a scan's reverse); absent: false. */
bool sema_flag_arg(Sema *S, Expr *a, const char *what, bool *out) {
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
        error(S, a->span, "'%s' of '%s' is a string: %s", what, call->u.call.name,
              sema_choices_text(S, choices, nallowed));
    else
        error(S, a->span, "'%s' takes no %s \"%.*s\" (expected %s)", call->u.call.name, what, (int)a->u.str.len,
              a->u.str.text, sema_choices_text(S, choices, nallowed));
    return false;
}

/* load's and store's cache_modifier, eviction_policy and (loads) volatile,
 * Triton's spellings, in the combinations PTX has: a cache operator other
 * than the default or an eviction priority, and volatile alone. */
bool sema_cache_controls_ok(Sema *S, Expr *e, bool is_load) {
    static const int load_caches[] = {CACHE_DEFAULT, CACHE_CA, CACHE_CG, CACHE_CV},
                     store_caches[] = {CACHE_DEFAULT, CACHE_WB, CACHE_CG, CACHE_CS, CACHE_WT},
                     evictions[] = {EVICT_NORMAL, EVICT_FIRST, EVICT_LAST};
    Expr *cache = sema_arg(e, 3), *evict = sema_arg(e, 4), *vol = is_load ? sema_arg(e, 5) : NULL;
    int c, ev;
    bool is_volatile;
    if (!name_arg(S, e, cache, "cache_modifier", cache_modifier_names, is_load ? load_caches : store_caches,
                  is_load ? 4 : 5, cache_modifier_from_name, &c) ||
        !name_arg(S, e, evict, "eviction_policy", eviction_policy_names, evictions, 3, eviction_policy_from_name,
                  &ev) ||
        !sema_flag_arg(S, vol, "'volatile' of 'load'", &is_volatile))
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
void sema_set_values(Sema *S, Expr *e, const BlkType *ts, int n) {
    Expr *t = expr_new(S->a, E_TUPLE, e->span);
    for (int i = 0; i < n; i++) ptrvec_push(S->a, &t->u.shape.dims, typed_placeholder(S, e->span, "value", ts[i]));
    e->u.call.inline_result = t;
    e->type = type_scalar(DT_TUPLE);
}

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
              sema_tstr(S, e->type));
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

/* The combine helper inlined on scalars: what it does, and that it returns
 * n values of the combined types. */
void sema_check_combine_result(Sema *S, Expr *e, Expr *call, HelperDef *h, Expr *const *inputs, int n) {
    sema_inline_helper(S, call, h);
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
        bool converts =
            r->weak && sema_is_numeric(r->type.dtype) && dtype_promote(r->type.dtype, true, want, false) == want;
        if (r->type.dtype != want && !converts) {
            error(S, r->span, "the combine '%s' must return %s here (the type of what it combines), got %s; convert "
                  "with 'as %s'", h->name, dtype_name(want), sema_tstr(S, r->type), dtype_name(want));
            return;
        }
        if (!sema_check_literal_fits(S, (Expr *)r, want)) return;
    }
}

/* A made-up call of helper h on scalars of the types of inputs[0 .. n - 1],
 * repeated over h's parameters (a combine's 2n: the left's, then the right's). */
Expr *sema_scalar_call(Sema *S, Span at, HelperDef *h, Expr *const *inputs, int n) {
    Expr *call = expr_new(S->a, E_CALL, at);
    call->u.call.name = h->name;
    call->u.call.name_span = at;
    call->u.call.builtin = -1;
    for (int i = 0; i < h->params.len; i++) {
        Param *prm = h->params.items[i];
        ptrvec_push(S->a, &call->u.call.args,
                    typed_placeholder(S, at, prm->name, type_scalar(inputs[i % n]->type.dtype)));
        ptrvec_push(S->a, &call->u.call.arg_names, NULL);
    }
    return call;
}

/* The values of x, a tuple (a, b, ...) of at most MAX_COMBINED or one value,
 * into items; their count, or -1 after an error ("'name' " then too_many). */
int sema_tuple_items(Sema *S, Expr *x, Expr **items, const char *name, const char *too_many) {
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
