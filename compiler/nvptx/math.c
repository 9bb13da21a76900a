/* math.c: the math functions on the GPU, one gen_math_fn per MATH_OP row of
 * ops.def (a row without one fails to build).
 * - exp, exp2, log, log2, sqrt, rsqrt: the approximations Triton uses
 *   (ex2/lg2.approx), or with --precise-math the IEEE-rounded sqrt and 1/sqrt.
 *   ex2 flushes subnormal results to zero, as Triton's: without .ftz ptxas
 *   wraps each MUFU.EX2 in a range test and two multiplies (4 instructions
 *   instead of 1, a softmax's largest cost); --precise-math keeps them.
 * - floor, ceil, trunc, rint, round: exact, one instruction each (cvt.rmi...).
 * - tanh, sigmoid, erf, expm1, log1p, sin, cos: blk's own library. The same IEEE
 *   operations in the same order as compiler/numeric.c, so that the GPU and
 *   the interpreter give the same bits. No instruction here carries the
 *   `contract` flag; each branch of the C code is computed and selected. */
#include <math.h>

#include "gen.h"
#include "mathlib.h"

static LLVMValueRef ex2(Gen *g, LLVMValueRef x) {
    return nvptx_call(g, g->m->opt->precise_math ? "llvm.nvvm.ex2.approx.f" : "llvm.nvvm.ex2.approx.ftz.f", g->m->t.f32, &x, 1);
}
static LLVMValueRef lg2(Gen *g, LLVMValueRef x) { return nvptx_call(g, "llvm.nvvm.lg2.approx.f", g->m->t.f32, &x, 1); }
LLVMValueRef gen_math_exp(Gen *g, LLVMValueRef x) { /* ex2.approx(x * log2 e), as Triton */
    return ex2(g, fp_contract(g, LLVMBuildFMul(g->b, x, LLVMConstReal(g->m->t.f32, 1.4426950408889634), "")));
}
LLVMValueRef gen_math_exp2(Gen *g, LLVMValueRef x) { return ex2(g, x); }
LLVMValueRef gen_math_log(Gen *g, LLVMValueRef x) {
    return fp_contract(g, LLVMBuildFMul(g->b, lg2(g, x), LLVMConstReal(g->m->t.f32, 0.6931471805599453), ""));
}
LLVMValueRef gen_math_log2(Gen *g, LLVMValueRef x) { return lg2(g, x); }
/* An LLVM intrinsic of one operand, on f64 operands in f64 (blk_math_has_f64). */
static bool is_f64(Gen *g, LLVMValueRef x) { return LLVMTypeOf(x) == g->m->t.f64; }
static LLVMValueRef exact(Gen *g, const char *name, LLVMValueRef x) {
    char full[32];
    snprintf(full, sizeof full, "llvm.%s.%s", name, is_f64(g, x) ? "f64" : "f32");
    return nvptx_call(g, full, LLVMTypeOf(x), &x, 1);
}

LLVMValueRef gen_math_sqrt(Gen *g, LLVMValueRef x) {
    if (is_f64(g, x) || g->m->opt->precise_math) return exact(g, "sqrt", x); /* sqrt.rn */
    return nvptx_call(g, "llvm.nvvm.sqrt.approx.f", g->m->t.f32, &x, 1);
}
LLVMValueRef gen_math_rsqrt(Gen *g, LLVMValueRef x) {
    if (g->m->opt->precise_math)
        return LLVMBuildFDiv(g->b, LLVMConstReal(g->m->t.f32, 1.0), nvptx_call(g, "llvm.sqrt.f32", g->m->t.f32, &x, 1), "");
    return nvptx_call(g, "llvm.nvvm.rsqrt.approx.f", g->m->t.f32, &x, 1);
}
LLVMValueRef gen_math_floor(Gen *g, LLVMValueRef x) { return exact(g, "floor", x); }
LLVMValueRef gen_math_ceil(Gen *g, LLVMValueRef x) { return exact(g, "ceil", x); }
LLVMValueRef gen_math_trunc(Gen *g, LLVMValueRef x) { return exact(g, "trunc", x); }
LLVMValueRef gen_math_rint(Gen *g, LLVMValueRef x) { return exact(g, "rint", x); }
LLVMValueRef gen_math_round(Gen *g, LLVMValueRef x) { return exact(g, "round", x); }

/* ---- blk's library: IEEE operations, no contraction ---- */
static LLVMValueRef cf(Gen *g, float v) { return LLVMConstReal(g->m->t.f32, v); }
static LLVMValueRef fmul(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFMul(g->b, a, b, ""); }
static LLVMValueRef fadd(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFAdd(g->b, a, b, ""); }
static LLVMValueRef fsub(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFSub(g->b, a, b, ""); }
static LLVMValueRef fdiv_rn(Gen *g, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildFDiv(g->b, a, b, ""); }
static LLVMValueRef fma3(Gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    return nvptx_call(g, "llvm.fma.f32", g->m->t.f32, args, 3);
}
static LLVMValueRef fabs1(Gen *g, LLVMValueRef x) { return nvptx_call(g, "llvm.fabs.f32", g->m->t.f32, &x, 1); }
static LLVMValueRef copy_sign(Gen *g, LLVMValueRef mag, LLVMValueRef sign) {
    LLVMValueRef args[2] = {mag, sign};
    return nvptx_call(g, "llvm.copysign.f32", g->m->t.f32, args, 2);
}
static LLVMValueRef fcmp(Gen *g, LLVMRealPredicate p, LLVMValueRef a, float b) {
    return LLVMBuildFCmp(g->b, p, a, cf(g, b), "");
}
static LLVMValueRef sel(Gen *g, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) { return LLVMBuildSelect(g->b, c, a, b, ""); }
static LLVMValueRef is_nan(Gen *g, LLVMValueRef x) { return LLVMBuildFCmp(g->b, LLVMRealUNO, x, x, ""); }
/* y, but x itself where x is ±0: the odd functions keep -0 (numeric.c returns x early) */
static LLVMValueRef zero_as_is(Gen *g, LLVMValueRef x, LLVMValueRef y) {
    return sel(g, fcmp(g, LLVMRealOEQ, x, 0.0f), x, y);
}

static LLVMValueRef horner(Gen *g, const float *c, int n, LLVMValueRef x) {
    LLVMValueRef p = cf(g, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = fma3(g, p, x, cf(g, c[i]));
    return p;
}

/* 2^k for an i32 k in [-126, 127], from its bits */
static LLVMValueRef pow2i(Gen *g, LLVMValueRef k) {
    LLVMValueRef bits = LLVMBuildShl(g->b, LLVMBuildAdd(g->b, k, ci32(g, 127), ""), ci32(g, 23), "");
    return LLVMBuildBitCast(g->b, bits, g->m->t.f32, "");
}

static LLVMValueRef lib_exp(Gen *g, LLVMValueRef x) {
    LLVMValueRef xc = sel(g, fcmp(g, LLVMRealOGT, x, 89.0f), cf(g, 89.0f), x);
    xc = sel(g, fcmp(g, LLVMRealOLT, xc, -104.0f), cf(g, -104.0f), xc);
    LLVMValueRef t = fmul(g, xc, cf(g, MATHLIB_LOG2E));
    LLVMValueRef k = nvptx_call(g, "llvm.rint.f32", g->m->t.f32, &t, 1);
    LLVMValueRef nk = LLVMBuildFNeg(g->b, k, "");
    LLVMValueRef r = fma3(g, nk, cf(g, MATHLIB_LN2_HI), xc);
    r = fma3(g, nk, cf(g, MATHLIB_LN2_LO), r);
    LLVMValueRef p = horner(g, MATHLIB_EXP, 8, r);
    LLVMValueRef ki = LLVMBuildFPToSI(g->b, k, g->m->t.i32, ""); /* k is NaN only for a NaN x, selected away */
    LLVMValueRef k1 = LLVMBuildSDiv(g->b, ki, ci32(g, 2), "");
    LLVMValueRef y = fmul(g, fmul(g, p, pow2i(g, k1)), pow2i(g, LLVMBuildSub(g->b, ki, k1, "")));
    return sel(g, is_nan(g, x), x, y);
}

LLVMValueRef gen_math_tanh(Gen *g, LLVMValueRef x) {
    LLVMValueRef a = fabs1(g, x);
    LLVMValueRef x2 = fmul(g, x, x);
    LLVMValueRef small = fma3(g, fmul(g, x, x2), horner(g, MATHLIB_TANH_SMALL, 8, x2), x);
    LLVMValueRef e = lib_exp(g, fmul(g, cf(g, 2.0f), a));
    LLVMValueRef mid = copy_sign(g, fsub(g, cf(g, 1.0f), fdiv_rn(g, cf(g, 2.0f), fadd(g, e, cf(g, 1.0f)))), x);
    LLVMValueRef big = sel(g, fcmp(g, LLVMRealOGE, a, 9.0f), copy_sign(g, cf(g, 1.0f), x), mid);
    LLVMValueRef y = sel(g, fcmp(g, LLVMRealOLT, a, 0.625f), small, big);
    return zero_as_is(g, x, y);
}

LLVMValueRef gen_math_sigmoid(Gen *g, LLVMValueRef x) {
    LLVMValueRef e = lib_exp(g, LLVMBuildFNeg(g->b, fabs1(g, x), ""));
    LLVMValueRef d = fadd(g, cf(g, 1.0f), e);
    return sel(g, fcmp(g, LLVMRealOGE, x, 0.0f), fdiv_rn(g, cf(g, 1.0f), d), fdiv_rn(g, e, d));
}

LLVMValueRef gen_math_erf(Gen *g, LLVMValueRef x) {
    LLVMValueRef a = fabs1(g, x);
    LLVMValueRef small = fmul(g, x, horner(g, MATHLIB_ERF_SMALL, 8, fmul(g, x, x)));
    LLVMValueRef a2 = fmul(g, a, a), lo = fma3(g, a, a, LLVMBuildFNeg(g->b, a2, ""));
    LLVMValueRef e = lib_exp(g, LLVMBuildFNeg(g->b, a2, ""));
    e = fma3(g, e, LLVMBuildFNeg(g->b, lo, ""), e);
    LLVMValueRef q = fmul(g, e, horner(g, MATHLIB_ERFC_SCALED, 15, fsub(g, a, cf(g, 2.5f))));
    LLVMValueRef mid = copy_sign(g, fsub(g, cf(g, 1.0f), q), x);
    LLVMValueRef y = sel(g, fcmp(g, LLVMRealOLT, a, 1.0f), small,
                         sel(g, fcmp(g, LLVMRealOGE, a, 4.0f), copy_sign(g, cf(g, 1.0f), x), mid));
    return sel(g, is_nan(g, x), x, y);
}

LLVMValueRef gen_math_expm1(Gen *g, LLVMValueRef x) {
    LLVMValueRef small = fma3(g, fmul(g, x, x), horner(g, MATHLIB_EXPM1_SMALL, 9, x), x);
    LLVMValueRef big = fsub(g, lib_exp(g, x), cf(g, 1.0f));
    LLVMValueRef y = sel(g, fcmp(g, LLVMRealOLT, fabs1(g, x), 0.5f), small, big);
    return zero_as_is(g, x, y);
}

static LLVMValueRef reduce_pio2(Gen *g, LLVMValueRef x, LLVMValueRef *quadrant) {
    LLVMValueRef t = fmul(g, x, cf(g, MATHLIB_2_OVER_PI));
    LLVMValueRef k = nvptx_call(g, "llvm.rint.f32", g->m->t.f32, &t, 1);
    LLVMValueRef nk = LLVMBuildFNeg(g->b, k, "");
    LLVMValueRef r = fma3(g, nk, cf(g, MATHLIB_PIO2_1), x);
    r = fma3(g, nk, cf(g, MATHLIB_PIO2_2), r);
    r = fma3(g, nk, cf(g, MATHLIB_PIO2_3), r);
    LLVMValueRef quarter = fmul(g, k, cf(g, 0.25f));
    LLVMValueRef fl = nvptx_call(g, "llvm.floor.f32", g->m->t.f32, &quarter, 1);
    *quadrant = fsub(g, k, fmul(g, cf(g, 4.0f), fl));
    return r;
}

static LLVMValueRef sin_poly(Gen *g, LLVMValueRef r) {
    LLVMValueRef r2 = fmul(g, r, r);
    return fma3(g, fmul(g, r, r2), horner(g, MATHLIB_SIN, 5, r2), r);
}

static LLVMValueRef cos_poly(Gen *g, LLVMValueRef r) {
    LLVMValueRef r2 = fmul(g, r, r);
    return fma3(g, r2, fma3(g, r2, horner(g, MATHLIB_COS, 5, r2), cf(g, -0.5f)), cf(g, 1.0f));
}

static LLVMValueRef by_quadrant(Gen *g, LLVMValueRef q, LLVMValueRef s, LLVMValueRef c) {
    LLVMValueRef neg_c = LLVMBuildFNeg(g->b, c, "");
    LLVMValueRef y = sel(g, fcmp(g, LLVMRealOEQ, q, 2.0f), LLVMBuildFNeg(g->b, s, ""), neg_c);
    y = sel(g, fcmp(g, LLVMRealOEQ, q, 1.0f), c, y);
    return sel(g, fcmp(g, LLVMRealOEQ, q, 0.0f), s, y);
}

LLVMValueRef gen_math_sin(Gen *g, LLVMValueRef x) {
    LLVMValueRef q, r = reduce_pio2(g, x, &q);
    LLVMValueRef y = by_quadrant(g, q, sin_poly(g, r), cos_poly(g, r));
    return zero_as_is(g, x, y);
}

LLVMValueRef gen_math_cos(Gen *g, LLVMValueRef x) {
    LLVMValueRef q, r = reduce_pio2(g, x, &q);
    LLVMValueRef next = sel(g, fcmp(g, LLVMRealOEQ, q, 3.0f), cf(g, 0.0f), fadd(g, q, cf(g, 1.0f)));
    return by_quadrant(g, next, sin_poly(g, r), cos_poly(g, r));
}

LLVMValueRef gen_math_log1p(Gen *g, LLVMValueRef x) {
    LLVMValueRef one = cf(g, 1.0f);
    LLVMValueRef u = fadd(g, one, x);
    LLVMValueRef c = fdiv_rn(g, fsub(g, x, fsub(g, u, one)), u);
    LLVMValueRef bits = LLVMBuildBitCast(g->b, u, g->m->t.i32, "");
    LLVMValueRef e = LLVMBuildSub(g->b, LLVMBuildLShr(g->b, bits, ci32(g, 23), ""), ci32(g, 127), "");
    LLVMValueRef mbits = LLVMBuildOr(g->b, LLVMBuildAnd(g->b, bits, ci32(g, 0x7fffff), ""), ci32(g, 0x3f800000), "");
    LLVMValueRef m = LLVMBuildBitCast(g->b, mbits, g->m->t.f32, "");
    LLVMValueRef halve = fcmp(g, LLVMRealOGT, m, MATHLIB_SQRT2);
    m = sel(g, halve, fmul(g, m, cf(g, 0.5f)), m);
    e = sel(g, halve, LLVMBuildAdd(g->b, e, ci32(g, 1), ""), e);
    LLVMValueRef s = fdiv_rn(g, fsub(g, m, one), fadd(g, m, one)), s2 = fmul(g, s, s);
    LLVMValueRef log_m = fma3(g, fmul(g, s, s2), horner(g, MATHLIB_LOG, 5, s2), fmul(g, cf(g, 2.0f), s));
    LLVMValueRef fe = LLVMBuildSIToFP(g->b, e, g->m->t.f32, "");
    LLVMValueRef y = fadd(g, fadd(g, fmul(g, fe, cf(g, MATHLIB_LN2_HI)), fma3(g, fe, cf(g, MATHLIB_LN2_LO), log_m)), c);
    y = zero_as_is(g, x, y);
    y = sel(g, fcmp(g, LLVMRealOEQ, x, -1.0f), cf(g, -INFINITY), y);
    y = sel(g, fcmp(g, LLVMRealOLT, x, -1.0f), cf(g, NAN), y);
    return sel(g, LLVMBuildOr(g->b, is_nan(g, x), fcmp(g, LLVMRealOEQ, x, INFINITY), ""), x, y);
}

/* ---- pow: numeric.c's blk_pow_f32, the core in double ---- */
static LLVMValueRef cd(Gen *g, double v) { return LLVMConstReal(g->m->t.f64, v); }
static LLVMValueRef fma_d(Gen *g, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    return nvptx_call(g, "llvm.fma.f64", g->m->t.f64, args, 3);
}
static LLVMValueRef horner_d(Gen *g, const double *c, int n, LLVMValueRef x) {
    LLVMValueRef p = cd(g, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = fma_d(g, p, x, cd(g, c[i]));
    return p;
}

static LLVMValueRef pow_core(Gen *g, LLVMValueRef ax, LLVMValueRef y) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef d = LLVMBuildFPExt(b, ax, g->m->t.f64, "");
    LLVMValueRef bits = LLVMBuildBitCast(b, d, g->m->t.i64, "");
    LLVMValueRef e = LLVMBuildSub(b, LLVMBuildLShr(b, bits, ci64(g, 52), ""), ci64(g, 1023), "");
    LLVMValueRef mbits = LLVMBuildOr(b, LLVMBuildAnd(b, bits, ci64(g, 0xfffffffffffffLL), ""),
                                     ci64(g, 0x3ff0000000000000LL), "");
    LLVMValueRef m = LLVMBuildBitCast(b, mbits, g->m->t.f64, "");
    LLVMValueRef halve = LLVMBuildFCmp(b, LLVMRealOGT, m, cd(g, 1.4142135623730951), "");
    m = sel(g, halve, LLVMBuildFMul(b, m, cd(g, 0.5), ""), m);
    e = sel(g, halve, LLVMBuildAdd(b, e, ci64(g, 1), ""), e);
    LLVMValueRef s = LLVMBuildFDiv(b, LLVMBuildFSub(b, m, cd(g, 1.0), ""), LLVMBuildFAdd(b, m, cd(g, 1.0), ""), "");
    LLVMValueRef s2 = LLVMBuildFMul(b, s, s, "");
    LLVMValueRef log_m = fma_d(g, LLVMBuildFMul(b, s, s2, ""), horner_d(g, MATHLIB_LOG_D, 10, s2),
                               LLVMBuildFMul(b, cd(g, 2.0), s, ""));
    LLVMValueRef fe = LLVMBuildSIToFP(b, e, g->m->t.f64, "");
    LLVMValueRef lx = fma_d(g, fe, cd(g, MATHLIB_LN2_D_HI), fma_d(g, fe, cd(g, MATHLIB_LN2_D_LO), log_m));
    LLVMValueRef t = LLVMBuildFMul(b, LLVMBuildFPExt(b, y, g->m->t.f64, ""), lx, "");
    t = sel(g, LLVMBuildFCmp(b, LLVMRealOGT, t, cd(g, 90.0), ""), cd(g, 90.0), t);
    t = sel(g, LLVMBuildFCmp(b, LLVMRealOLT, t, cd(g, -110.0), ""), cd(g, -110.0), t);
    LLVMValueRef q = LLVMBuildFMul(b, t, cd(g, 1.4426950408889634), "");
    LLVMValueRef k = nvptx_call(g, "llvm.rint.f64", g->m->t.f64, &q, 1);
    LLVMValueRef nk = LLVMBuildFNeg(b, k, "");
    LLVMValueRef r = fma_d(g, nk, cd(g, MATHLIB_LN2_D_HI), t);
    r = fma_d(g, nk, cd(g, MATHLIB_LN2_D_LO), r);
    /* k is NaN or huge only for inputs the callers select away: the saturating conversion keeps it defined */
    LLVMValueRef ki = nvptx_call(g, "llvm.fptosi.sat.i64.f64", g->m->t.i64, &k, 1);
    LLVMValueRef scale = LLVMBuildShl(b, LLVMBuildAdd(b, ki, ci64(g, 1023), ""), ci64(g, 52), "");
    LLVMValueRef y_d = LLVMBuildFMul(b, horner_d(g, MATHLIB_EXP_D, 13, r), LLVMBuildBitCast(b, scale, g->m->t.f64, ""), "");
    return LLVMBuildFPTrunc(b, y_d, g->m->t.f32, "");
}

LLVMValueRef nvptx_pow(Gen *g, LLVMValueRef x, LLVMValueRef y) {
    LLVMValueRef zero = cf(g, 0.0f), one = cf(g, 1.0f), inf = cf(g, INFINITY);
    LLVMValueRef ax = fabs1(g, x), half = fmul(g, y, cf(g, 0.5f));
    LLVMValueRef ty_ = nvptx_call(g, "llvm.trunc.f32", g->m->t.f32, &y, 1), th = nvptx_call(g, "llvm.trunc.f32", g->m->t.f32, &half, 1);
    LLVMValueRef y_int = LLVMBuildFCmp(g->b, LLVMRealOEQ, ty_, y, "");
    LLVMValueRef y_odd = LLVMBuildAnd(g->b, y_int, LLVMBuildFCmp(g->b, LLVMRealUNE, th, half, ""), "");
    LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, LLVMBuildBitCast(g->b, x, g->m->t.i32, ""), ci32(g, 0), "");
    LLVMValueRef sign = sel(g, LLVMBuildAnd(g->b, neg, y_odd, ""), cf(g, -1.0f), one);
    LLVMValueRef y_neg = fcmp(g, LLVMRealOLT, y, 0.0f);
    /* from the last case of numeric.c's to the first: each select overrides the ones before */
    LLVMValueRef out = copy_sign(g, pow_core(g, ax, y), sign);
    out = sel(g, fcmp(g, LLVMRealOEQ, ax, INFINITY), copy_sign(g, sel(g, y_neg, zero, inf), sign), out);
    out = sel(g, fcmp(g, LLVMRealOEQ, ax, 0.0f), copy_sign(g, sel(g, y_neg, inf, zero), sign), out);
    out = sel(g, LLVMBuildAnd(g->b, fcmp(g, LLVMRealOLT, x, 0.0f), LLVMBuildNot(g->b, y_int, ""), ""), cf(g, NAN), out);
    LLVMValueRef small = fcmp(g, LLVMRealOLT, ax, 1.0f);
    LLVMValueRef inf_y = sel(g, fcmp(g, LLVMRealOEQ, ax, 1.0f), one,
                             sel(g, LLVMBuildICmp(g->b, LLVMIntEQ, small, y_neg, ""), inf, zero));
    out = sel(g, fcmp(g, LLVMRealOEQ, fabs1(g, y), INFINITY), inf_y, out);
    out = sel(g, LLVMBuildOr(g->b, is_nan(g, x), is_nan(g, y), ""), cf(g, NAN), out);
    return sel(g, LLVMBuildOr(g->b, fcmp(g, LLVMRealOEQ, y, 0.0f), fcmp(g, LLVMRealOEQ, x, 1.0f), ""), one, out);
}
