/* sema_builtins.c: each builtin's rules (docs/language.md §6-§9), one
 * checker per class of builtins.def (the reductions, dot, atomics, combine
 * and scan, sort, topk, gather, histogram have checkers of their own), and
 * sema_check_builtin, which binds a call's arguments and sends it to its
 * class's checker. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

static void check_reduction(Sema *S, Expr *e, BuiltinId id) {
    Expr *x = sema_arg(e, 0), *ax = sema_arg(e, 1);
    if (!sema_require_value(S, x)) return;
    if (x->type.rank == 0) {
        error(S, x->span, "'%s' reduces a block, got the scalar %s", e->u.call.name, sema_tstr(S, x->type));
        return;
    }
    if (x->type.dtype == DT_PTR) {
        error(S, x->span, "'%s' cannot reduce pointers", e->u.call.name);
        return;
    }
    if (sema_reject_fp8(S, x, e->u.call.name)) return;
    int64_t axis;
    if (!sema_axis_arg(S, e, ax, x->type, &axis)) return;
    DType d = x->type.dtype;
    bool scan = id == BI_CUMSUM || id == BI_CUMPROD;
    /* keep_dims (sum, max, min, argmax, argmin) or reverse (cumsum, cumprod): a const i1; dtype
     * (sum, cumsum, cumprod): the type x is converted to first, as Triton's */
    Expr *flag = sema_arg(e, 2), *to = sema_arg(e, 3);
    if (flag && (!flag->is_const || flag->type.dtype != DT_I1 || flag->type.rank != 0)) {
        error(S, flag->span, "'%s' of '%s' must be a compile-time i1 (true or false)", scan ? "reverse" : "keep_dims",
              e->u.call.name);
        return;
    }
    if (to) {
        if (to->type.dtype != DT_TYPE || !to->is_const) {
            error(S, to->span, "'dtype' of '%s' must be a type (f32, i64, a const type parameter, ...)",
                  e->u.call.name);
            return;
        }
        if (!sema_is_numeric(to->cv.dtype) || dtype_is_fp8(to->cv.dtype)) {
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

/* dot(a, b, acc, input_precision, max_num_imprecise_acc): [M, K] x [K, N]
 * (+ [M, N] f32 or i32) -> [M, N] f32 (f16, bf16, f32 and fp8 operands) or
 * i32 (i8 and u8). */
static void check_dot(Sema *S, Expr *e) {
    Expr *a = sema_arg(e, 0), *b = sema_arg(e, 1), *acc = sema_arg(e, 2), *prec = sema_arg(e, 3);
    Expr *imprecise = sema_arg(e, 4);
    if (!sema_require_value(S, a) || !sema_require_value(S, b) || (acc && !sema_require_value(S, acc))) return;
    const char *names[2] = {"a", "b"};
    Expr *ops[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        if (ops[i]->type.rank < 2) {
            error(S, ops[i]->span, "'dot' multiplies 2-D (or batched 3-D) blocks, but %s is %s", names[i],
                  sema_tstr(S, ops[i]->type));
            return;
        }
    }
    if (a->type.rank != b->type.rank || (a->type.rank == 3 && a->type.shape[0] != b->type.shape[0])) {
        error(S, e->span, "a batched 'dot' takes [B, M, K] and [B, K, N] with the same B, got %s and %s",
              sema_tstr(S, a->type), sema_tstr(S, b->type));
        return;
    }
    /* a batched dot is one [M, K] x [K, N] product per index of its first dimension */
    int batched = a->type.rank - 2;
    DType d = a->type.dtype, out = dot_result_dtype(d, b->type.dtype);
    if (out == DT_VOID) {
        error(S, e->span,
              "'dot' takes two f16, two bf16, two f32, two fp8 (f8e4m3, f8e5m2) or two 8-bit integer (i8, u8) "
              "blocks, got %s and %s; convert with 'as'",
              sema_tstr(S, a->type), sema_tstr(S, b->type));
        return;
    }
    int32_t M = a->type.shape[batched], K = a->type.shape[batched + 1], N = b->type.shape[batched + 1];
    if (b->type.shape[batched] != K) {
        error(S, e->span, "'dot' needs as many columns in a as rows in b: a is %s, b is %s", sema_tstr(S, a->type),
              sema_tstr(S, b->type));
        return;
    }
    /* tensor cores multiply 16 x 16 tiles of 16-bit elements, 16 x 32 of 8-bit ones */
    int32_t min_k = dot_k_step(d);
    for (int i = 0; i < 2; i++) {
        for (int dim = 0; dim < 2; dim++) {
            int32_t least = dim == 1 - i ? min_k : 16; /* k: a's columns, b's rows */
            if (ops[i]->type.shape[batched + dim] >= least) continue;
            error(S, ops[i]->span,
                  "'dot' needs %s to be at least %d (tensor cores multiply %s), but %s is %s; use %d and mask "
                  "off the rows or columns you do not need",
                  least == 16 ? "every dimension" : "k", least, min_k == 32 ? "16 x 32 tiles of 8-bit elements" : "16 x 16 tiles",
                  names[i], sema_tstr(S, ops[i]->type), least);
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
    if (imprecise) {
        int64_t n;
        if (!sema_const_int_arg(S, e, imprecise, "max_num_imprecise_acc", &n)) return;
        if (!dtype_is_fp8(d)) {
            error(S, imprecise->span,
                  "max_num_imprecise_acc is for fp8 operands, whose sums the tensor cores keep narrow; %s sums "
                  "are f32 or exact throughout",
                  dtype_name(d));
            return;
        }
        if (n != DOT_NOT_PROMOTED && (n < dot_k_step(d) || n > DOT_IMPRECISE_MAX || (n & (n - 1)))) {
            error(S, imprecise->span,
                  "max_num_imprecise_acc must be a power of two from %d (one tensor-core step) to %d, or 2**30 "
                  "(not promoted: the tensor cores sum into acc, Triton's default on Hopper), got %lld",
                  dot_k_step(d), DOT_IMPRECISE_MAX, (long long)n);
            return;
        }
    }
    int32_t product[3] = {a->type.shape[0], M, N};
    BlkType result = type_with_shape(type_scalar(out), 2 + batched, product + 1 - batched);
    if (acc && !type_equal(acc->type, result)) {
        error(S, acc->span, "the accumulator of 'dot' must be %s (the product's shape, in %s), got %s",
              sema_tstr(S, result), dtype_name(out), sema_tstr(S, acc->type));
        return;
    }
    e->type = result;
}

static void check_atomic(Sema *S, Expr *e, BuiltinId id) {
    Expr *p = sema_arg(e, 0);
    if (!sema_require_value(S, p) || !sema_pointer_arg(S, e, p)) return;
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
        Expr *v = sema_arg(e, i);
        if (!sema_value_fits(S, e, v, shape, "the value")) return;
        if (v->type.dtype != elem && !(v->weak && sema_is_numeric(v->type.dtype) &&
                                       dtype_promote(v->type.dtype, true, elem, false) == elem)) {
            error(S, v->span, "'%s' on %s elements needs a value of type %s, got %s; convert with 'as %s'",
                  e->u.call.name, dtype_name(elem), dtype_name(elem), sema_tstr(S, v->type),
                  dtype_name(elem));
            return;
        }
        if (!sema_check_literal_fits(S, v, elem)) return;
    }
    if (id != BI_ATOMIC_CAS && !sema_mask_arg(S, e, sema_arg(e, 2), shape)) return;
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
        Expr *s = sema_arg(e, 3 + i);
        if (!s) continue;
        if (s->kind != E_STRING) {
            error(S, s->span, "'%s' of '%s' is a string: %s", named[i].name, e->u.call.name,
                  sema_choices_text(S, named[i].names, named[i].n));
            return;
        }
        if (named[i].parse(s->u.str.text, s->u.str.len) < 0) {
            error(S, s->span, "unknown %s \"%.*s\" (expected %s)", named[i].name, (int)s->u.str.len, s->u.str.text,
                  sema_choices_text(S, named[i].names, named[i].n));
            return;
        }
    }
    e->type = shape;
}

/* reduce(x, axis, f) and associative_scan(x, axis, f, reverse): x a block or
 * a tuple (a, b, ...) of blocks of one shape, f a helper taking the left
 * and the right partial results (2n scalars) and returning n values of
 * their types. */
static void check_combine(Sema *S, Expr *e, BuiltinId id) {
    Expr *x = sema_arg(e, 0), *ax = sema_arg(e, 1), *fn = sema_arg(e, 2), *rev = sema_arg(e, 3);
    const char *name = e->u.call.name;
    Expr *inputs[MAX_COMBINED] = {0};
    int n = sema_tuple_items(S, x, inputs, name, "combines at most %d blocks, got %d");
    if (n < 0) return;
    for (int i = 0; i < n; i++) {
        Expr *v = inputs[i];
        if (!sema_require_value(S, v)) return;
        if (v->type.rank == 0) {
            error(S, v->span, "'%s' takes blocks, got %s", name, sema_tstr(S, v->type));
            return;
        }
        if (!shape_equal(v->type, inputs[0]->type)) {
            error(S, v->span, "the blocks '%s' combines must have one shape: %s and %s", name,
                  sema_tstr(S, inputs[0]->type), sema_tstr(S, v->type));
            return;
        }
        if (v->type.dtype == DT_PTR || dtype_is_fp8(v->type.dtype)) {
            error(S, v->span, "'%s' combines numbers and i1, got %s", name, sema_tstr(S, v->type));
            return;
        }
    }
    int64_t axis;
    bool reverse;
    if (!sema_axis_arg(S, e, ax, inputs[0]->type, &axis) || !sema_flag_arg(S, rev, "'reverse'", &reverse)) return;
    if (fn->type.dtype != DT_HELPER) {
        if (fn->type.dtype != DT_ERROR)
            error(S, fn->span, "the combine of '%s' is the name of a helper, 'fn f(a, b) { return ...; }'", name);
        return;
    }
    HelperDef *h = sema_find_helper(S, fn->u.name.name);
    if (h->params.len != 2 * n) {
        error(S, fn->span, "'%s' takes %d argument%s, but combining %d value%s needs %d: the left's, then the "
              "right's", h->name, h->params.len, h->params.len == 1 ? "" : "s", n, n == 1 ? "" : "s", 2 * n);
        note(S, h->name_span, "'%s' is defined here", h->name);
        return;
    }
    Expr *call = sema_scalar_call(S, fn->span, h, inputs, n);
    if (!sema_may_inline(S, fn->span, h, "use as a combine of")) return;
    int errors_before = S->de->errors;
    sema_check_combine_result(S, e, call, h, inputs, n);
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
    if (x->kind == E_TUPLE) sema_set_values(S, e, ts, n);
    else e->type = ts[0];
}

/* sort(x, axis, descending): numbers and i1 along one axis; NaN sorts as
 * the largest. */
static void check_sort(Sema *S, Expr *e) {
    Expr *x = sema_arg(e, 0);
    int64_t axis;
    bool descending;
    if (!sema_require_value(S, x)) return;
    if (x->type.rank == 0 || x->type.dtype == DT_PTR || dtype_is_fp8(x->type.dtype)) {
        error(S, x->span, "'sort' takes a block of numbers or i1, got %s", sema_tstr(S, x->type));
        return;
    }
    if (!sema_axis_arg(S, e, sema_arg(e, 1), x->type, &axis) ||
        !sema_flag_arg(S, sema_arg(e, 2), "'descending'", &descending))
        return;
    e->type = x->type;
}

/* topk(x, k, axis): Triton's tl.topk, the k largest along the axis (the last
 * by default), in descending order. */
static void check_topk(Sema *S, Expr *e) {
    Expr *x = sema_arg(e, 0), *k = sema_arg(e, 1), *ax = sema_arg(e, 2);
    int64_t axis = x->type.rank - 1, n;
    if (!sema_require_value(S, x)) return;
    if (x->type.rank == 0 || x->type.dtype == DT_PTR || dtype_is_fp8(x->type.dtype)) {
        error(S, x->span, "'topk' takes a block of numbers or i1, got %s", sema_tstr(S, x->type));
        return;
    }
    if (ax && !sema_axis_arg(S, e, ax, x->type, &axis)) return;
    if (!sema_const_int_arg(S, e, k, "k", &n)) return;
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
    Expr *src = sema_arg(e, 0), *index = sema_arg(e, 1);
    int64_t axis;
    if (!sema_require_value(S, src) || !sema_require_value(S, index)) return;
    if (src->type.rank == 0 || src->type.dtype == DT_PTR) {
        error(S, src->span, "'gather' takes a block of numbers or i1 to gather from, got %s", sema_tstr(S, src->type));
        return;
    }
    if (!dtype_is_int(index->type.dtype) || index->type.rank != src->type.rank) {
        error(S, index->span, "the index of 'gather' is a block of integers of the source's rank (%d), got %s",
              src->type.rank, sema_tstr(S, index->type));
        return;
    }
    if (!sema_axis_arg(S, e, sema_arg(e, 2), src->type, &axis)) return;
    for (int d = 0; d < src->type.rank; d++)
        if (d != axis && index->type.shape[d] != src->type.shape[d]) {
            error(S, index->span, "the index of 'gather' (%s) must match the source (%s) on every axis but %lld",
                  sema_sstr(S, index->type), sema_sstr(S, src->type), (long long)axis);
            return;
        }
    e->type = type_with_shape(type_scalar(src->type.dtype), index->type.rank, index->type.shape);
}

/* histogram(input, num_bins, mask): Triton's tl.histogram of a 1-D integer
 * block; [num_bins] i32 counts of 0 .. num_bins - 1. */
static void check_histogram(Sema *S, Expr *e) {
    Expr *x = sema_arg(e, 0), *bins = sema_arg(e, 1), *mask = sema_arg(e, 2);
    int64_t n;
    if (!sema_require_value(S, x)) return;
    if (x->type.rank != 1 || !dtype_is_int(x->type.dtype)) {
        error(S, x->span, "'histogram' counts a 1-D block of integers, got %s", sema_tstr(S, x->type));
        return;
    }
    if (!sema_const_int_arg(S, e, bins, "the number of bins", &n)) return;
    if (n < 1 || n > BLK_MAX_NUMEL || (n & (n - 1))) {
        error(S, bins->span, "the number of bins of 'histogram' is a block size: a power of two up to %d, got %lld",
              BLK_MAX_NUMEL, (long long)n);
        return;
    }
    if (mask && (!sema_require_value(S, mask) || mask->type.dtype != DT_I1 || !sema_fits_shape(mask->type, x->type))) {
        if (mask->type.dtype != DT_ERROR)
            error(S, mask->span, "the mask of 'histogram' is an i1 block of the input's shape %s, got %s",
                  sema_sstr(S, x->type), sema_tstr(S, mask->type));
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
        if (!sema_is_numeric(a->type.dtype) && a->type.dtype != DT_I1) {
            error(S, a->span, "'%s' takes numbers and i1, got %s", name, sema_tstr(S, a->type));
            return DT_ERROR;
        }
    }
    DType d = dtype_promote(a0->type.dtype, a0->weak, a1->type.dtype, a1->weak);
    sema_reject_truncating_quotient(S, a0, d);
    sema_reject_truncating_quotient(S, a1, d);
    if (!sema_check_literal_fits(S, a0, d) || !sema_check_literal_fits(S, a1, d)) return DT_ERROR;
    if (type_numel(shape) * 2 > BLK_MAX_NUMEL) {
        error(S, e->span, "'%s' of two %s blocks would exceed the limit of %d elements", name, sema_sstr(S, shape),
              BLK_MAX_NUMEL);
        return DT_ERROR;
    }
    return d;
}

/* LEAF: the program's coordinates (program_id, num_programs), its counters (globaltimer,
 * clock, smid) and arange */
static void check_leaf(Sema *S, Expr *e, BuiltinId id) {
    const BuiltinSig *sig = builtin_sig(id);
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1);
    switch (id) {
    case BI_PROGRAM_ID:
    case BI_NUM_PROGRAMS: {
        int64_t axis;
        if (!sema_const_int_arg(S, e, a0, "the axis", &axis)) return;
        if (axis < 0 || axis > 2) {
            error(S, a0->span, "axis of '%s' must be 0, 1 or 2, got %lld", sig->name, (long long)axis);
            return;
        }
        e->type = type_scalar(DT_I32);
        return;
    }
    case BI_ARANGE: {
        int64_t lo, hi;
        if (!sema_const_int_arg(S, e, a0, "the start", &lo) || !sema_const_int_arg(S, e, a1, "the end", &hi))
            return;
        if (hi <= lo || !is_pow2(hi - lo) || hi - lo > BLK_MAX_NUMEL) {
            error(S, e->span,
                  "arange(%lld, %lld) has %lld elements; the count must be a power of two "
                  "between 1 and %d",
                  (long long)lo, (long long)hi, (long long)(hi - lo), BLK_MAX_NUMEL);
            return;
        }
        if (!sema_int_fits(DT_I32, lo) || !sema_int_fits(DT_I32, hi)) {
            error(S, e->span, "arange bounds must fit in i32");
            return;
        }
        int32_t n = (int32_t)(hi - lo);
        e->type = type_with_shape(type_scalar(DT_I32), 1, &n);
        return;
    }
    case BI_GLOBALTIMER: case BI_CLOCK: case BI_SMID:
        e->type = type_scalar(id == BI_SMID ? DT_U32 : DT_U64);
        return;
#define THIS_BUILTIN_CLASS_LEAF
#include "builtins_other_classes.inc"
        return;
    }
}

/* SHAPE_CTOR: a block of one value (zeros, full) */
static void check_shape_ctor(Sema *S, Expr *e, BuiltinId id) {
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1), *a2 = sema_arg(e, 2);
    switch (id) {
    case BI_ZEROS:
    case BI_FULL: {
        DType dt;
        Expr *dtype_e = id == BI_ZEROS ? a1 : a2;
        if (!sema_dtype_arg(S, dtype_e, &dt)) return;
        BlkType t = type_scalar(dt);
        if (!sema_shape_arg(S, a0, &t)) return;
        if (id == BI_FULL) {
            if (!sema_require_value(S, a1)) return;
            if (a1->type.rank != 0 || !dtype_is_numeric_elem(a1->type.dtype)) {
                error(S, a1->span, "the value of 'full' must be a number, got %s", sema_tstr(S, a1->type));
                return;
            }
            if (!sema_check_literal_fits(S, a1, dt)) return;
        }
        e->type = t;
        return;
    }
#define THIS_BUILTIN_CLASS_SHAPE_CTOR
#include "builtins_other_classes.inc"
        return;
    }
}

/* SHAPE_OP: views and rearrangements of blocks */
static void check_shape_op(Sema *S, Expr *e, BuiltinId id) {
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1), *a2 = sema_arg(e, 2);
    switch (id) {
    case BI_SHAPE: case BI_EXPAND_DIMS: { /* shape(x, axis): a block's size, a constant */
        int64_t axis;
        if (!sema_require_value(S, a0) || !sema_const_int_arg(S, e, a1, "the axis", &axis)) return;
        int rank = a0->type.rank, limit = id == BI_SHAPE ? rank : rank + 1;
        if (id == BI_SHAPE && rank == 0) {
            error(S, a0->span, "'shape' of a scalar: it has no dimensions");
            return;
        }
        if (id == BI_EXPAND_DIMS && rank + 1 > BLK_MAX_RANK) {
            error(S, a0->span, "'expand_dims' of a %s block would have more than %d dimensions", sema_tstr(S, a0->type),
                  BLK_MAX_RANK);
            return;
        }
        if (axis < 0 || axis >= limit) {
            error(S, a1->span, "axis %lld is out of range for %s", (long long)axis, sema_tstr(S, a0->type));
            return;
        }
        if (id == BI_SHAPE) {
            e->type = type_scalar(DT_I32);
            sema_set_const_int(e, a0->type.shape[axis]);
            return;
        }
        int32_t shape[BLK_MAX_RANK];
        for (int i = 0, src = 0; i < rank + 1; i++) shape[i] = i == axis ? 1 : a0->type.shape[src++];
        e->type = type_with_shape(a0->type, rank + 1, shape);
        return;
    }
    case BI_BROADCAST_TO: {
        BlkType target = a0->type, out;
        if (!sema_require_value(S, a0) || !sema_shape_arg(S, a1, &target)) return;
        if (!sema_broadcast_or_error(S, e->span, a0->type, target, &out)) return;
        if (!shape_equal(out, target)) {
            error(S, e->span, "'broadcast_to' cannot shrink %s to %s", sema_tstr(S, a0->type), sema_tstr(S, target));
            return;
        }
        e->type = target;
        return;
    }
    case BI_FLIP: {
        int64_t axis;
        if (!sema_require_value(S, a0)) return;
        if (a0->type.rank == 0) {
            error(S, a0->span, "'flip' takes a block, got %s", sema_tstr(S, a0->type));
            return;
        }
        if (!sema_axis_arg(S, e, a1, a0->type, &axis)) return;
        e->type = a0->type;
        return;
    }
    case BI_RESHAPE: {
        BlkType t = a0->type;
        if (!sema_require_value(S, a0) || !sema_shape_arg(S, a1, &t)) return;
        if (a0->type.rank == 0 || type_numel(t) != type_numel(a0->type)) {
            error(S, e->span, "'reshape' keeps the number of elements: %s cannot become %s", sema_tstr(S, a0->type),
                  sema_sstr(S, t));
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
        if (!sema_require_value(S, a0) || !sema_require_value(S, a1) || sema_reject_fp8(S, a0, name) ||
            sema_reject_fp8(S, a1, name))
            return;
        if (cat && a2 && (!a2->is_const || a2->type.dtype != DT_I1)) {
            error(S, a2->span, "'can_reorder' of 'cat' is a compile-time i1 (blk keeps the order either way)");
            return;
        }
        if (cat ? !shape_equal(a0->type, a1->type) : !sema_broadcast_or_error(S, e->span, a0->type, a1->type, &shape)) {
            if (cat)
                error(S, e->span, "'cat' takes two blocks of one shape, got %s and %s", sema_sstr(S, a0->type),
                      sema_sstr(S, a1->type));
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
        if (!sema_require_value(S, a0) || !sema_require_value(S, a1) || sema_reject_fp8(S, a0, "join") ||
            sema_reject_fp8(S, a1, "join"))
            return;
        if (!sema_broadcast_or_error(S, e->span, a0->type, a1->type, &shape)) return;
        if (shape.rank + 1 > BLK_MAX_RANK) {
            error(S, e->span, "'join' adds a dimension of 2, and %s would have more than %d", sema_sstr(S, shape),
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
        if (!sema_require_value(S, a0)) return;
        BlkType t = a0->type;
        if (t.rank == 0 || t.shape[t.rank - 1] != 2) {
            error(S, a0->span, "'split' takes a block whose last dimension is 2 (as 'join' makes), got %s",
                  sema_tstr(S, t));
            return;
        }
        BlkType half = type_with_shape(t, t.rank - 1, t.shape), ts[2] = {half, half};
        sema_set_values(S, e, ts, 2);
        return;
    }
    case BI_TRANS: case BI_PERMUTE: { /* trans(x): the last two dimensions swapped; dims: any order */
        int from[BLK_MAX_RANK];
        if (!sema_require_value(S, a0)) return;
        int rank = a0->type.rank;
        if (rank < 2) {
            error(S, a0->span, "'%s' reorders the dimensions of a 2-D or 3-D block, got %s", e->u.call.name,
                  sema_tstr(S, a0->type));
            return;
        }
        for (int d = 0; d < rank; d++) from[d] = trans_from(0, rank, d);
        if (a1 && !sema_permutation_arg(S, a1, rank, from)) return;
        int32_t shape[BLK_MAX_RANK];
        for (int d = 0; d < rank; d++) shape[d] = a0->type.shape[from[d]];
        e->type = type_with_shape(a0->type, rank, shape);
        return;
    }
#define THIS_BUILTIN_CLASS_SHAPE_OP
#include "builtins_other_classes.inc"
        return;
    }
}

/* MEMORY: load and store */
static void check_memory(Sema *S, Expr *e, BuiltinId id) {
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1), *a2 = sema_arg(e, 2);
    switch (id) {
    case BI_LOAD: {
        if (!sema_require_value(S, a0) || !sema_pointer_arg(S, e, a0)) return;
        BlkType t = type_with_shape(type_scalar(a0->type.elem), a0->type.rank, a0->type.shape);
        if (!sema_mask_arg(S, e, a1, t)) return;
        if (a2) {
            if (!sema_value_fits(S, e, a2, t, "other")) return;
            if (!dtype_is_numeric_elem(a2->type.dtype)) {
                error(S, a2->span, "'other' must be a number, got %s", sema_tstr(S, a2->type));
                return;
            }
            if (!sema_check_literal_fits(S, a2, t.dtype)) return;
        }
        if (!sema_cache_controls_ok(S, e, true)) return;
        e->type = t;
        return;
    }
    case BI_STORE: {
        if (!sema_require_value(S, a0) || !sema_pointer_arg(S, e, a0)) return;
        BlkType t = type_with_shape(type_scalar(a0->type.elem), a0->type.rank, a0->type.shape);
        if (!sema_value_fits(S, e, a1, t, "a value")) return;
        if (!dtype_is_numeric_elem(a1->type.dtype)) {
            error(S, a1->span, "'store' needs a numeric value, got %s", sema_tstr(S, a1->type));
            return;
        }
        if (!sema_check_literal_fits(S, a1, t.dtype) || !sema_mask_arg(S, e, a2, t) ||
            !sema_cache_controls_ok(S, e, false))
            return;
        e->type = type_scalar(DT_VOID);
        return;
    }
#define THIS_BUILTIN_CLASS_MEMORY
#include "builtins_other_classes.inc"
        return;
    }
}

/* ELEMENTWISE: where, abs and the math functions (the MATH_OP rows of ops.def), and
 * the n-ary ones (minimum, maximum, fma, cdiv, clamp, umulhi, pow) */
static void check_elementwise(Sema *S, Expr *e, BuiltinId id) {
    const BuiltinSig *sig = builtin_sig(id);
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1), *a2 = sema_arg(e, 2);
    switch (id) {
    case BI_WHERE: {
        if (!sema_require_value(S, a0) || !sema_require_value(S, a1) || !sema_require_value(S, a2)) return;
        if (a0->type.dtype != DT_I1) {
            error(S, a0->span, "the condition of 'where' must be i1, got %s", sema_tstr(S, a0->type));
            return;
        }
        BlkType shape = {0};
        if (!sema_broadcast_or_error(S, e->span, a0->type, a1->type, &shape) ||
            !sema_broadcast_or_error(S, e->span, shape, a2->type, &shape))
            return;
        BlkType t;
        if (a1->type.dtype == DT_PTR || a2->type.dtype == DT_PTR) {
            if (a1->type.dtype != a2->type.dtype || a1->type.elem != a2->type.elem) {
                error(S, e->span, "'where' cannot choose between %s and %s", sema_tstr(S, a1->type),
                      sema_tstr(S, a2->type));
                return;
            }
            t = type_ptr(a1->type.elem);
        } else {
            t = type_scalar(dtype_promote(a1->type.dtype, a1->weak, a2->type.dtype, a2->weak));
            sema_reject_truncating_quotient(S, a1, t.dtype);
            sema_reject_truncating_quotient(S, a2, t.dtype);
            if (!sema_check_literal_fits(S, a1, t.dtype) || !sema_check_literal_fits(S, a2, t.dtype)) return;
        }
        e->type = type_with_shape(t, shape.rank, shape.shape);
        return;
    }
    case BI_ABS:
#define BIR_OP(...)
#define MATH_OP(ID, fn) case BI_##ID: /* the math functions: the MATH_OP rows of ops.def */
#include "ops.def"
    {
        if (!sema_require_value(S, a0)) return;
        DType d = a0->type.dtype;
        if (sema_reject_fp8(S, a0, sig->name)) return;
        if (!sema_is_numeric(d)) {
            error(S, a0->span, "'%s' needs a number, got %s", sig->name, sema_tstr(S, a0->type));
            return;
        }
        if (id != BI_ABS && d == DT_F64 && !blk_math_has_f64((BirOpcode)sig->math_op)) {
            error(S, a0->span, "'%s' computes in f32 and has no f64 version yet: write '%s(x as f32)' (in f64 there "
                  "are sqrt, floor, ceil, trunc, rint and round)", sig->name, sig->name);
            return;
        }
        if (id != BI_ABS && dtype_is_int(d)) {
            d = DT_F32;
            sema_reject_truncating_quotient(S, a0, d);
        }
        e->type = type_with_shape(type_scalar(d), a0->type.rank, a0->type.shape);
        if (a0->is_const && a0->type.rank == 0 && d == DT_F32 && id != BI_ABS) {
            /* the interpreter's f32 semantics, so a folded call equals a computed one */
            float x = (float)convert_scalar(a0->cv, a0->type.dtype, DT_F32).f;
            sema_set_const_float(e, blk_math_f32((BirOpcode)sig->math_op, x));
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
            if (!sema_require_value(S, ops[i]) || sema_reject_fp8(S, ops[i], sig->name)) return;
            if (!sema_is_numeric(ops[i]->type.dtype)) {
                error(S, ops[i]->span, "'%s' needs numbers, got %s", sig->name, sema_tstr(S, ops[i]->type));
                return;
            }
            if (!sema_broadcast_or_error(S, e->span, shape, ops[i]->type, &shape)) return;
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
            sema_reject_truncating_quotient(S, ops[i], d);
            if (!sema_check_literal_fits(S, ops[i], d)) return;
        }
        e->type = type_with_shape(type_scalar(d), shape.rank, shape.shape);
        if (id == BI_CDIV && a0->is_const && a1->is_const && shape.rank == 0) {
            if (a1->cv.i <= 0) {
                error(S, a1->span, "'cdiv' by %lld in a constant expression", (long long)a1->cv.i);
                e->type.dtype = DT_ERROR;
                return;
            }
            e->weak = weak;
            sema_set_const_int(e, (a0->cv.i + a1->cv.i - 1) / a1->cv.i);
        }
        return;
    }
#define THIS_BUILTIN_CLASS_ELEMENTWISE
#include "builtins_other_classes.inc"
        return;
    }
}

/* RANDOM: Philox streams, one or four values an element */
static void check_random(Sema *S, Expr *e, BuiltinId id) {
    const BuiltinSig *sig = builtin_sig(id);
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1);
    switch (id) {
    case BI_RAND: case BI_RANDINT: case BI_RANDN: case BI_RAND4X: case BI_RANDINT4X: case BI_RANDN4X: {
        if (!sema_require_value(S, a0) || !sema_require_value(S, a1)) return;
        if (a0->type.rank != 0 || !dtype_is_int(a0->type.dtype)) {
            error(S, a0->span, "the seed of '%s' must be a scalar integer, got %s", sig->name,
                  sema_tstr(S, a0->type));
            return;
        }
        if (!dtype_is_int(a1->type.dtype)) {
            error(S, a1->span, "the offset of '%s' must be integers, got %s", sig->name,
                  sema_tstr(S, a1->type));
            return;
        }
        BlkType t = type_with_shape(type_scalar(id == BI_RANDINT || id == BI_RANDINT4X ? DT_U32 : DT_F32),
                                    a1->type.rank, a1->type.shape);
        if (id == BI_RAND4X || id == BI_RANDINT4X || id == BI_RANDN4X) {
            BlkType ts[4] = {t, t, t, t}; /* let (a, b, c, d) = randint4x(seed, offset) */
            sema_set_values(S, e, ts, 4);
        } else {
            e->type = t;
        }
        return;
    }
#define THIS_BUILTIN_CLASS_RANDOM
#include "builtins_other_classes.inc"
        return;
    }
}

/* EFFECT: no value (barriers, launch ordering, assertions, assume, print) */
static void check_effect(Sema *S, Expr *e, BuiltinId id) {
    Expr *a0 = sema_arg(e, 0), *a1 = sema_arg(e, 1), *a2 = sema_arg(e, 2);
    switch (id) {
    case BI_DEBUG_BARRIER: case BI_GDC_WAIT: case BI_GDC_LAUNCH_DEPENDENTS:
        e->type = type_scalar(DT_VOID);
        return;
    case BI_STATIC_ASSERT: {
        if (a1 && a1->kind != E_STRING) {
            error(S, a1->span, "the message of 'static_assert' must be a string literal");
            return;
        }
        if (!sema_require_value(S, a0)) return;
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
        if (!sema_require_value(S, a0)) return;
        if (a0->type.dtype != DT_I1) {
            error(S, a0->span, "the condition of 'device_assert' must be i1 (a comparison such as 'x != 0'), got %s",
                  sema_tstr(S, a0->type));
            return;
        }
        if (a1 && a1->kind != E_STRING) {
            error(S, a1->span, "the message of 'device_assert' must be a string literal");
            return;
        }
        if (a2) {
            BlkType both;
            if (!sema_require_value(S, a2)) return;
            if (a2->type.dtype != DT_I1) {
                error(S, a2->span, "the mask of 'device_assert' must be i1, got %s", sema_tstr(S, a2->type));
                return;
            }
            if (!sema_broadcast_or_error(S, a2->span, a0->type, a2->type, &both)) return;
        }
        e->type = type_scalar(DT_VOID);
        return;
    }
    case BI_ASSUME:
        if (!sema_require_value(S, a0)) return;
        if (a0->type.dtype != DT_I1 || a0->type.rank) {
            error(S, a0->span, "the condition of 'assume' must be a scalar i1 (a comparison such as 'n %% 16 == 0'), "
                  "got %s", sema_tstr(S, a0->type));
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
            if (!sema_require_value(S, e->u.call.args.items[i])) return;
        e->type = type_scalar(DT_VOID);
        return;
    }
#define THIS_BUILTIN_CLASS_EFFECT
#include "builtins_other_classes.inc"
        return;
    }
}

/* CUSTOM: builtins with rules of their own */
static void check_custom(Sema *S, Expr *e, BuiltinId id) {
    switch (id) {
    case BI_SORT: check_sort(S, e); return;
    case BI_GATHER: check_gather(S, e); return;
    case BI_TOPK: check_topk(S, e); return;
    case BI_INLINE_ASM_ELEMENTWISE: sema_check_inline_asm(S, e); return;
    case BI_HISTOGRAM: check_histogram(S, e); return;
    case BI_DOT: check_dot(S, e); return;
#define THIS_BUILTIN_CLASS_CUSTOM
#include "builtins_other_classes.inc"
        return;
    }
}

void sema_check_builtin(Sema *S, Expr *e, BuiltinId id) {
    for (int i = 0; i < e->u.call.args.len; i++) sema_check_expr(S, e->u.call.args.items[i]);
    for (int i = 0; i < e->u.call.args.len; i++)
        if (((Expr *)e->u.call.args.items[i])->type.dtype == DT_ERROR) return;
    /* min(a, b) and max(a, b) of two scalars, as in Python (and Triton's
     * kernels): the elementwise minimum and maximum */
    if ((id == BI_MIN || id == BI_MAX) && e->u.call.args.len == 2 && !e->u.call.arg_names.items[0] &&
        !e->u.call.arg_names.items[1] && ((Expr *)e->u.call.args.items[0])->type.rank == 0)
        id = id == BI_MIN ? BI_MINIMUM : BI_MAXIMUM;
    const BuiltinSig *sig = builtin_sig(id);
    if (!sema_bind_builtin_args(S, e, sig)) return;
    e->u.call.builtin = id;
    /* one checker per class of builtins.def */
    static void (*const check_class[BC_COUNT])(Sema *, Expr *, BuiltinId) = {
        [BC_LEAF] = check_leaf,       [BC_SHAPE_CTOR] = check_shape_ctor, [BC_SHAPE_OP] = check_shape_op,
        [BC_MEMORY] = check_memory,   [BC_ELEMENTWISE] = check_elementwise, [BC_REDUCTION] = check_reduction,
        [BC_COMBINE] = check_combine, [BC_ATOMIC] = check_atomic,          [BC_RANDOM] = check_random,
        [BC_EFFECT] = check_effect,   [BC_CUSTOM] = check_custom,
    };
    check_class[sig->cls](S, e, id);
}
