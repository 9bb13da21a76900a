/* sema_internal.h: what the checker's files share (sema.c, sema_expr.c,
 * sema_args.c, sema_builtins.c, sema_asm.c, sema_stmt.c): the checker's
 * state, its limits, its diagnostics, and the functions one file calls in
 * another. Not for the rest of the compiler: sema_check_module (blkc.h) is
 * the checker's one entry. */
#ifndef BLKC_SEMA_INTERNAL_H
#define BLKC_SEMA_INTERNAL_H

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
void sema_report(Sema *S, DiagSeverity severity, Span span, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define error(S, ...) sema_report(S, DIAG_ERROR, __VA_ARGS__)
#define note(S, ...) sema_report(S, DIAG_NOTE, __VA_ARGS__)

enum { MAX_COMBINED = 8 };

/* sema.c: diagnostics' type names, scopes, constants, type helpers, helpers' inlining */
bool sema_broadcast_or_error(Sema *S, Span span, BlkType a, BlkType b, BlkType *out);
void sema_check_helper_call(Sema *S, Expr *e, HelperDef *h);
bool sema_check_literal_fits(Sema *S, Expr *lit, DType to);
Symbol *sema_declare(Sema *S, SymbolKind kind, const char *name, Span span, BlkType type);
const DeclSite *sema_find_decl(Sema *S, const char *name);
HelperDef *sema_find_helper(Sema *S, const char *name);
bool sema_fits_shape(BlkType value, BlkType target);
bool sema_fold_convert(Expr *e, BlkType from, DType to, ConstVal *out);
void sema_inline_helper(Sema *S, Expr *e, HelperDef *h);
bool sema_int_fits(DType t, int64_t v);
bool sema_is_kernel_name(Sema *S, const char *name);
bool sema_is_numeric(DType d);
Symbol *sema_lookup(Sema *S, const char *name);
Symbol *sema_lookup_in(Scope *sc, const char *name);
bool sema_may_inline(Sema *S, Span at, HelperDef *h, const char *what);
void sema_pop_scope(Sema *S);
void sema_push_scope(Sema *S);
bool sema_reject_fp8(Sema *S, const Expr *x, const char *what);
void sema_report_unknown_name(Sema *S, const char *name, Span use);
bool sema_require_value(Sema *S, const Expr *e);
bool sema_resolve_type(Sema *S, const TypeSyntax *ts, BlkType *out);
void sema_set_const_float(Expr *e, double v);
void sema_set_const_int(Expr *e, int64_t v);
const char *sema_sstr(Sema *S, BlkType t);
void sema_table_insert_all(Sema *S, Scope *sc);
Symbol **sema_table_slot(Scope *sc, const char *name);
const char *sema_tstr(Sema *S, BlkType t);

/* sema_expr.c: expressions and calls */
void sema_check_expr(Sema *S, Expr *e);
const Expr *sema_held_quotient(const Expr *v);
void sema_reject_truncating_quotient(Sema *S, const Expr *v, DType to);

/* sema_args.c: a builtin's arguments, combine helpers */
Expr *sema_arg(Expr *e, int i); /* argument i of a call, NULL where absent */
bool sema_axis_arg(Sema *S, Expr *e, Expr *ax, BlkType x, int64_t *axis);
bool sema_bind_builtin_args(Sema *S, Expr *e, const BuiltinSig *sig);
bool sema_cache_controls_ok(Sema *S, Expr *e, bool is_load);
void sema_check_combine_result(Sema *S, Expr *e, Expr *call, HelperDef *h, Expr *const *inputs, int n);
const char *sema_choices_text(Sema *S, const char *const *names, int n);
bool sema_const_int_arg(Sema *S, Expr *call, Expr *a, const char *what, int64_t *out);
bool sema_dtype_arg(Sema *S, Expr *a, DType *out);
bool sema_flag_arg(Sema *S, Expr *a, const char *what, bool *out);
bool sema_mask_arg(Sema *S, Expr *call, Expr *m, BlkType target);
bool sema_pointer_arg(Sema *S, Expr *call, Expr *p);
Expr *sema_scalar_call(Sema *S, Span at, HelperDef *h, Expr *const *inputs, int n);
void sema_set_values(Sema *S, Expr *e, const BlkType *ts, int n);
bool sema_shape_arg(Sema *S, Expr *a, BlkType *out);
/* a permutation of rank dimensions as a list [0, 2, 1]: from[d] is the operand dimension result dimension d takes */
bool sema_permutation_arg(Sema *S, Expr *a, int rank, int *from);
int sema_tuple_items(Sema *S, Expr *x, Expr **items, const char *name, const char *too_many);
bool sema_value_fits(Sema *S, Expr *call, Expr *v, BlkType target, const char *what);

/* sema_builtins.c: builtins */
void sema_check_builtin(Sema *S, Expr *e, BuiltinId id);

/* sema_asm.c: inline asm */
void sema_check_inline_asm(Sema *S, Expr *e);

/* sema_stmt.c: statements */
bool sema_assignable(Sema *S, Expr *v, BlkType t, const char *name, Span span);
void sema_check_block_in_scope(Sema *S, Stmt *block);
void sema_check_stmt(Sema *S, Stmt *s);

#endif
