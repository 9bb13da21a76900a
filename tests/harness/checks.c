/* checks.c: each example against its C reference (see checks.h).
 *
 * Tolerances, and why:
 * - add: exact. Each output is one IEEE addition, so the kernel's result
 *   must equal the reference rounded once to the output type.
 * - dropout: the keep mask exactly (rand is bit-exact with Triton); the
 *   kept values x / (1 - p) within relative 2^-22 for f32: 2 ulp, the
 *   error bound of the GPU's div.full.f32 (Triton's default division; the
 *   interpreter's division is exact), and 2^-10 for f16 (that error may
 *   move a value across an f16 rounding boundary: one f16 ulp).
 * - softmax f32: relative 1e-5. exp is within 2 ulp (C library on the
 *   interpreter, ex2.approx on the GPU), the f32 sum of <= 2^14 terms adds
 *   at most a few 1e-7, one division; 1e-5 leaves a 10x margin.
 *   f16 output: relative 2^-10 (one f16 rounding is 2^-11) plus 2^-24 absolute
 *   (the f16 subnormal spacing, for tiny probabilities).
 * - layer norm, f16: absolute 1e-2 for y, dx, dw and db, as the Triton
 *   tutorial tests (f16 outputs of magnitude up to ~8 carry 2^-8 rounding;
 *   dw and db also sum f16 partial rows). Mean and rstd (f32 outputs):
 *   relative 1e-5.
 *   dw and db, which reach magnitudes near 13 at the tutorial's shape (an f16
 *   ulp there is 2^-7), also get relative 2^-9: each is a sum of f16
 *   partial rows (about M / GROUP_SIZE_M f16 additions each, in an order the
 *   lock decides) rounded to f16 once more; 2^-9 allows four f16 roundings.
 *   Their absolute part grows with the rows: the error of a recursive f16
 *   sum grows, at worst, linearly with its number of terms, so 1e-2 (the
 *   tutorial's, at M = 1151) becomes 1e-2 * M / 1151 for larger M. At
 *   M = 4096, N = 15872 the largest error is 0.0335 (tolerance 0.036 plus
 *   the relative part), the same on the interpreter and on the H100: it is
 *   the f16 partial buffers of the algorithm, not a race.
 *   f32: absolute 1e-5 for y, dx, dw, db (magnitudes up to ~8): the f32
 *   sums over N (and over M for dw/db) leave errors near 1e-6 on the
 *   interpreter; the GPU's approximate rsqrt and division add ~1e-7.
 * - matmul (f16 or bf16 in, f32 accumulation, C in the input type T): per
 *   element |got - c| <= (1 + u) K 2^-23 S + u |c| + s, with c the exact
 *   product and S = sum_k |a b| (both from the reference, in double), u the
 *   unit roundoff of T (2^-11 f16, 2^-8 bf16) and s half its smallest
 *   subnormal spacing (2^-25 for f16). Why: f16 and bf16 products are exact
 *   in f32. The interpreter adds them with one f32 fma each in increasing k
 *   (masked terms add an exact 0), so its sum is within (K - 1) 2^-24 S;
 *   tensor cores add in an order and with roundings of their own, within
 *   K 2^-23 S (docs/language.md, dot), which the bound allows on both
 *   devices. Then `acc as T` rounds once: at most u |c32| + s, and
 *   |c32| <= |c| + K 2^-23 S. The bound is rigorous and its rounding part is
 *   tight: on the interpreter errors reach 0.75-0.97 of it (the f32 part is
 *   small in practice, and a value just above a power of two can round by
 *   nearly u |c|). A relative bound alone would fail near c = 0, an absolute
 *   one would be loose for large c; this one scales with both.
 * - matmul_int8 (i8/u8 in, C in i32): exact, compared as integers (the sums
 *   wrap modulo 2^32 on both devices, and the reference wraps the same way).
 * - matmul_fp8_blockwise: per element ((4 2^-12 + (3 KB + 2) 2^-24) S
 *   + u |c|) (1 + 2^-20) + s, S = sum over the KB k-blocks of their sum|ab|
 *   times |their scales|: each k-block's tensor-core sum as matmul_fp8's
 *   (128 terms: four k-steps), then its scaling and add, three f32
 *   roundings a block, then one rounding to T.
 * - matmul_fp8 (fp8 in, C = (A B) sa sb in T): per element
 *   ((BK/32) 2^-12 + (K + 2) 2^-23) S |sa sb| + u |c sa sb|, a hair over
 *   (1 + 2^-20), plus s. Why: fp8 products are exact; each dot (k-block of
 *   BK) sums its terms on the tensor cores, which on wgmma keep about 13
 *   bits (docs/language.md, dot), at most 2^-12 S a 32-wide k-step, before
 *   the f32 promotion adds it (K 2^-23 S for all the f32 adds, as matmul's);
 *   two f32 roundings of the scaling, one rounding to T. Measured on the
 *   H100: errors reach 0.09-0.65 of it with bf16 or f16 output, 5e-5 with
 *   f32 (there the sums dominate and the 2^-12 part is loose: the sums' real
 *   error is about 2^-16 S, docs/performance.md).
 * - attention (Out in T, LSE in f32): per element of Out,
 *   (1 + u) E + u |o| + s, with E = A (u + 2 eps / (1 - eps) + 2 n 2^-23)
 *   + s V + 2^-22 |o|, where o is the exact output, A = sum_j w_j |v_j| (w
 *   the softmax weights), V = sum_j |v_j| over the row's keys, n the keys
 *   the row's program walks through (its blocks times BLOCK_N), and eps the
 *   relative error of one weight: eps = ln 2 delta (1 + delta)
 *   + (blocks + 1) 2^-22, delta = c S (D + 2) 2^-23 the absolute error of a
 *   base-2 score t - m, c = sm_scale log2(e), S = max_j sum_d |q_d k_jd|.
 *   Why, term by term: p is rounded to T before the second dot while l sums
 *   the unrounded p, so Out moves by up to u A (plus s per key for f16
 *   subnormals, since l >= 1: the row's maximum has p = exp2(0) = 1). An
 *   error that a weight carries into both sums moves the weights and Out by
 *   at most 2 eps / (1 - eps) A. A score's error delta: the first dot, as
 *   matmul, within D 2^-23 S, two roundings of the scaling and one of t - m
 *   (|t - m| <= 2 c S); through exp2 a relative ln 2 delta (1 + delta). exp2
 *   of p and of each block's alpha: 2 ulp, 2^-22, each (ex2.approx on the
 *   GPU; the interpreter's C library is within 1 ulp). The second dot's and
 *   l's f32 sums and the rescalings by alpha: 2 n 2^-23 A. The division:
 *   2^-22 |o|. Then the rounding of Out to T. In numbers, for f16 with
 *   D = 64 and N_CTX = 256 (S about 14): 2 eps is about 0.23 u and 2 n 2^-23
 *   about 0.13 u, so the bound is about u (1.4 A + |o|); at D = 128 about
 *   u (1.9 A + |o|). Errors on the interpreter reach 0.2-0.65 of it: the
 *   rounding of p and of Out dominate, as they should.
 *   LSE = m + log2(l) is log2 sum_j exp2(t_j) of the computed scores, so it
 *   is within delta + 1.01 (eps + eps_l) / ln 2 + 2^-22 (log2 n + 1 + |lse|),
 *   eps_l = (log2 BLOCK_N + 2 blocks) 2^-23 being l's f32 sum (pairwise in a
 *   block, then two roundings per block), the last term log2's 2 ulp and the
 *   addition: about 1e-4 at D = 64, set by the worst case of the first dot.
 * Attention backward (ref_attention_bwd sums the bounds, term by term): the
 *   kernels get Out rounded to T, so delta = sum_d dO O is off by up to
 *   (u + (D + 1) 2^-23) sum_d |dO O| (the rounding, then its f32 sum); each
 *   recomputed p carries the relative error e_p of its score (as above:
 *   c (D + 3) 2^-23 S through exp2, lse in f32, exp2's 2 ulp); dp = dO v^T
 *   errs by D 2^-23 sum |dO v|; so ds = p (dp - delta), before its rounding
 *   to T, errs by p (that + delta's) + (e_p + 2^-23) |ds|. dV sums p rounded
 *   to T (error (e_p + u) p + sub) times dO; dK and dQ sum ds rounded to T
 *   (its error, plus u |ds| + sub) times q or k; each of those f32 sums adds
 *   2 n 2^-23 of its magnitude (n the keys or queries, padded), then the
 *   scaling by sm_scale and the rounding to T (u |x| + sub).
 * Inputs follow the Triton tutorials: x ~ N(0,1) for add, softmax and
 * dropout; layer norm x = -2.3 + 0.5 N(0,1), w and b ~ U(0,1), dy = 0.1 N(0,1);
 * matmul a, b ~ N(0,1); attention q, k, v ~ N(0, 0.5^2) and sm_scale 0.5, as
 * Triton's attention test. Each row of matmul's A and B (column, for a
 * transposed B) is padded with NaN and each row of C with a sentinel; the
 * attention's Out and LSE end in a block of sentinels.
 * Rows of strided inputs are padded with NaN and strided outputs with a
 * sentinel, so a read past N shows up as NaN and a write past N as a changed
 * sentinel. */
#define _POSIX_C_SOURCE 200809L
#include "checks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference.h"

/* ------------------------------------------------------- typed buffers */

typedef struct {
    DType dt;
    int64_t n;
    void *data;
} TBuf;

static size_t elem_bytes(DType dt) { return (size_t)dtype_bytes(dt); }
static size_t tb_elem_bytes(const TBuf *b) { return elem_bytes(b->dt); }

static TBuf tb_new(DType dt, int64_t n) {
    TBuf b = {dt, n, calloc((size_t)(n ? n : 1), elem_bytes(dt))};
    return b;
}

static void tb_set(TBuf *b, int64_t i, double v) {
    switch (b->dt) {
    case DT_F16: ((uint16_t *)b->data)[i] = f32_to_f16((float)v); break;
    case DT_BF16: ((uint16_t *)b->data)[i] = f32_to_bf16((float)v); break;
    case DT_I32: ((int32_t *)b->data)[i] = (int32_t)v; break;
    case DT_I8: ((int8_t *)b->data)[i] = (int8_t)v; break;
    case DT_U8: ((uint8_t *)b->data)[i] = (uint8_t)v; break;
    case DT_F8E4M3: case DT_F8E5M2: ((uint8_t *)b->data)[i] = f32_to_fp8((float)v, fp8_format(b->dt)); break;
    default: ((float *)b->data)[i] = (float)v; break;
    }
}

static double tb_get(const TBuf *b, int64_t i) {
    switch (b->dt) {
    case DT_F16: return f16_to_f32(((uint16_t *)b->data)[i]);
    case DT_BF16: return bf16_to_f32(((uint16_t *)b->data)[i]);
    case DT_I32: return ((int32_t *)b->data)[i];
    case DT_I8: return ((int8_t *)b->data)[i];
    case DT_U8: return ((uint8_t *)b->data)[i];
    case DT_F8E4M3: case DT_F8E5M2: return fp8_to_f32(((uint8_t *)b->data)[i], fp8_format(b->dt));
    default: return ((float *)b->data)[i];
    }
}

static ExampleBuffer tb_buf(TBuf *b, const char *name) {
    return (ExampleBuffer){b->data, (size_t)b->n * elem_bytes(b->dt), name};
}

/* The values as f32, as the kernel sees them, for the references. */
static float *tb_floats(const TBuf *b) {
    float *f = malloc((size_t)(b->n ? b->n : 1) * sizeof *f);
    for (int64_t i = 0; f && i < b->n; i++) f[i] = (float)tb_get(b, i);
    return f;
}

static void tb_free(TBuf *b) {
    free(b->data);
    b->data = NULL;
}

/* A value rounded once to the dtype. */
static double round_to(double v, DType dt) {
    float f = (float)v;
    return dt == DT_F16 ? f16_to_f32(f32_to_f16(f)) : dt == DT_BF16 ? bf16_to_f32(f32_to_bf16(f)) : f;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------- results */

static void set_name(CheckResult *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_name(CheckResult *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->name, sizeof r->name, fmt, ap);
    va_end(ap);
    r->ok = true;
}

static void failf(CheckResult *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(CheckResult *r, const char *fmt, ...) {
    if (!r->ok) return; /* keep the first failure */
    r->ok = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

static bool launch_grid(const ExampleRunner *run, CheckResult *r, const ExampleKernel *k, const ExampleArg *args,
                        int nargs, const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs) {
    double t0 = now_seconds();
    char *err = run->launch(run->ctx, k, args, nargs, grid, bufs, nbufs);
    r->seconds += now_seconds() - t0;
    if (err) {
        failf(r, "%s", err);
        free(err);
        return false;
    }
    return true;
}

static bool launch(const ExampleRunner *run, CheckResult *r, const ExampleKernel *k, const ExampleArg *args,
                   int nargs, uint32_t programs, const ExampleBuffer *bufs, int nbufs) {
    uint32_t grid[3] = {programs, 1, 1};
    return launch_grid(run, r, k, args, nargs, grid, bufs, nbufs);
}

typedef enum { TOL_EXACT, TOL_ABS, TOL_REL } TolKind;

/* got[r * stride + c] against ref[r * cols + c]; NaN matches NaN only.
 * The outputs the table reports (primary) record their worst error in
 * r->max_err, in the tolerance's unit; secondary ones (layer norm's saved
 * mean and rstd) only have to pass. */
static void compare(CheckResult *r, const char *what, const TBuf *got, int64_t stride, const double *ref,
                    int64_t rows, int64_t cols, TolKind kind, double atol, double rtol, bool primary) {
    char tol[64];
    if (kind == TOL_EXACT) snprintf(tol, sizeof tol, "exact");
    else if (kind == TOL_ABS) snprintf(tol, sizeof tol, "abs %g", atol);
    else if (atol > 0) snprintf(tol, sizeof tol, "rel %g + abs %g", rtol, atol);
    else snprintf(tol, sizeof tol, "rel %g", rtol);
    if (primary) memcpy(r->tolerance, tol, sizeof tol);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t c = 0; c < cols; c++) {
            double g = tb_get(got, i * stride + c), want = ref[i * cols + c];
            if (kind == TOL_EXACT) want = round_to(want, got->dt);
            bool both_nan = g != g && want != want;
            double err = both_nan ? 0 : fabs(g - want);
            if (err != err) err = INFINITY;
            /* reported in the unit of the tolerance: relative, or absolute when it has an absolute part */
            double unit = kind == TOL_REL && atol == 0 ? err / (fabs(want) > 0 ? fabs(want) : 1) : err;
            if (primary && unit > r->max_err) r->max_err = unit;
            bool ok = kind == TOL_EXACT ? err == 0 : err <= atol + rtol * fabs(want);
            if (!ok)
                failf(r, "%s[%lld, %lld] = %.9g, reference %.9g (error %.3g, tolerance %s)", what,
                      (long long)i, (long long)c, g, want, err, tol);
        }
    }
}

/* Padding past N in each row of a strided output must keep its sentinel. */
static void check_padding(CheckResult *r, const char *what, const TBuf *b, int64_t rows, int64_t cols,
                          int64_t stride, double sentinel) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t c = cols; c < stride; c++)
            if (tb_get(b, i * stride + c) != sentinel)
                failf(r, "%s[%lld, %lld] (padding past N) was written", what, (long long)i, (long long)c);
}

static const char *tname(DType dt) { return dtype_name(dt); }

/* got[r * stride + c] against ref[r * cols + c] with a bound of its own for
 * each element (bound[r * cols + c]); the worst error is recorded in units
 * of the bound (1 = at the bound), the tolerance as `tol`. NaN never passes. */
static void compare_bound(CheckResult *r, const char *what, const TBuf *got, int64_t stride, const double *ref,
                          const double *bound, int64_t rows, int64_t cols, const char *tol, bool primary) {
    if (primary) snprintf(r->tolerance, sizeof r->tolerance, "%s", tol);
    for (int64_t i = 0; i < rows; i++) {
        for (int64_t c = 0; c < cols; c++) {
            double g = tb_get(got, i * stride + c), want = ref[i * cols + c], b = bound[i * cols + c];
            double err = fabs(g - want);
            if (err != err) err = INFINITY;
            if (primary && err / b > r->max_err) r->max_err = err / b;
            if (!(err <= b))
                failf(r, "%s[%lld, %lld] = %.9g, reference %.9g (error %.3g, bound %.3g: %s)", what, (long long)i,
                      (long long)c, g, want, err, b, tol);
        }
    }
}

/* Whatever lies past `from` in b must keep its sentinel. */
static void check_tail(CheckResult *r, const char *what, const TBuf *b, int64_t from, double sentinel) {
    for (int64_t i = from; i < b->n; i++)
        if (tb_get(b, i) != sentinel) {
            failf(r, "%s[%lld] (past the end) was written", what, (long long)i);
            return;
        }
}

/* ------------------------------------------------------------- checks */

/* The unit roundoff of the 16-bit types (half an ulp, relative), and half
 * their smallest subnormal spacing: the error of one rounding to T is at
 * most u |x| + sub. */
static double unit_roundoff(DType dt) { return dt == DT_BF16 ? 0x1p-8 : 0x1p-11; }
static double subnormal_half(DType dt) { return dt == DT_BF16 ? 0x1p-134 : 0x1p-25; }

CheckResult check_add(const ExampleRunner *run, int n, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "add n=%d %s BLOCK=%d", n, tname(dt), block);
    RefRng rng = {1};
    TBuf x = tb_new(dt, n), y = tb_new(dt, n), out = tb_new(dt, n);
    for (int i = 0; i < n; i++) {
        tb_set(&x, i, ref_normal(&rng));
        tb_set(&y, i, ref_normal(&rng));
    }
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"add.blk", "add", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "x"), tb_buf(&y, "y"), tb_buf(&out, "out")};
    ExampleArg args[] = {{.p = x.data}, {.p = y.data}, {.p = out.data}, {.i = n}};
    if (launch(run, &r, &k, args, 4, (uint32_t)((n + block - 1) / block), bufs, 3)) {
        float *xf = tb_floats(&x), *yf = tb_floats(&y);
        double *ref = malloc((size_t)n * sizeof *ref);
        ref_add(xf, yf, ref, (size_t)n);
        compare(&r, "out", &out, n, ref, 1, n, TOL_EXACT, 0, 0, true);
        free(xf), free(yf), free(ref);
    }
    tb_free(&x), tb_free(&y), tb_free(&out);
    return r;
}

CheckResult check_softmax(const ExampleRunner *run, int M, int N, int stride, DType dt, int block, bool online) {
    CheckResult r = {0};
    set_name(&r, "softmax%s M=%d N=%d stride=%d %s BLOCK=%d", online ? " (online)" : "", M, N, stride, tname(dt), block);
    RefRng rng = {2};
    TBuf in = tb_new(dt, (int64_t)M * stride), out = tb_new(dt, (int64_t)M * N);
    for (int64_t i = 0; i < (int64_t)M * stride; i++)
        tb_set(&in, i, i % stride < N ? ref_normal(&rng) : NAN);
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {online ? "softmax_online.blk" : "softmax.blk", online ? "softmax_online" : "softmax", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&out, "out"), tb_buf(&in, "input")};
    ExampleArg args[] = {{.p = out.data}, {.p = in.data}, {.i = stride}, {.i = N}, {.i = N}};
    if (launch(run, &r, &k, args, 5, (uint32_t)M, bufs, 2)) {
        float *xf = tb_floats(&in);
        double *ref = malloc((size_t)M * N * sizeof *ref);
        ref_softmax(xf, M, N, stride, ref);
        if (dt == DT_F32) compare(&r, "out", &out, N, ref, M, N, TOL_REL, 0, 1e-5, true);
        else compare(&r, "out", &out, N, ref, M, N, TOL_REL, 0x1p-24, 0x1p-10, true);
        free(xf), free(ref);
    }
    tb_free(&in), tb_free(&out);
    return r;
}

/* RMSNorm: x = 1 + 2 N(0,1), w ~ U(0,1). The sum of squares and 1/sqrt
 * (rsqrt.approx on the GPU, 2 ulp) are f32: 1e-5 relative covers them; a
 * 16-bit Y rounds once more (unit roundoff u) and may be subnormal. */
CheckResult check_rms_norm(const ExampleRunner *run, int M, int N, int stride, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "rms_norm_fwd M=%d N=%d stride=%d %s BLOCK=%d", M, N, stride, tname(dt), block);
    RefRng rng = {10};
    TBuf x = tb_new(dt, (int64_t)M * stride), y = tb_new(dt, (int64_t)M * stride), w = tb_new(dt, N);
    TBuf rstd = tb_new(DT_F32, M);
    for (int64_t i = 0; i < x.n; i++) tb_set(&x, i, i % stride < N ? 1 + 2 * ref_normal(&rng) : NAN);
    for (int i = 0; i < N; i++) tb_set(&w, i, ref_uniform(&rng));
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"rmsnorm.blk", "rms_norm_fwd", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&y, "Y"), tb_buf(&w, "W"), tb_buf(&rstd, "Rstd")};
    ExampleArg args[] = {{.p = x.data}, {.p = y.data}, {.p = w.data}, {.p = rstd.data}, {.i = stride}, {.i = N}, {.f = 1e-6}};
    if (launch(run, &r, &k, args, 7, (uint32_t)M, bufs, 4)) {
        float *xf = tb_floats(&x), *wf = tb_floats(&w);
        double *ry = malloc((size_t)M * N * sizeof *ry), *rr = malloc((size_t)M * sizeof *rr);
        ref_rms_norm_fwd(xf, wf, M, N, stride, (double)1e-6f, ry, rr);
        double u = dt == DT_F32 ? 0 : unit_roundoff(dt);
        compare(&r, "Y", &y, stride, ry, M, N, TOL_REL, dt == DT_F32 ? 0 : subnormal_half(dt), 1e-5 + u, true);
        compare(&r, "Rstd", &rstd, 1, rr, M, 1, TOL_REL, 0, 1e-5, false);
        free(xf), free(wf), free(ry), free(rr);
    }
    tb_free(&x), tb_free(&y), tb_free(&w), tb_free(&rstd);
    return r;
}

/* GroupNorm: x = 3 + 2 N(0,1), w, b ~ U(0,1). Sums over a group in f32
 * (sizes to 2^18: relative error below 1e-6 in lane-wise then pairwise
 * order), rsqrt.approx (2 ulp): y within 2e-5 absolute of values up to ~5;
 * a 16-bit Y adds one rounding. */
CheckResult check_group_norm(const ExampleRunner *run, int batch, int C, int HW, int groups, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "group_norm_fwd batch=%d C=%d HW=%d groups=%d %s BLOCK=%d", batch, C, HW, groups, tname(dt), block);
    RefRng rng = {12};
    int64_t total = (int64_t)batch * C * HW;
    TBuf x = tb_new(dt, total), y = tb_new(dt, total), w = tb_new(dt, C), b = tb_new(dt, C);
    TBuf mean = tb_new(DT_F32, batch * groups), rstd = tb_new(DT_F32, batch * groups);
    for (int64_t i = 0; i < total; i++) tb_set(&x, i, 3 + 2 * ref_normal(&rng));
    for (int c = 0; c < C; c++) tb_set(&w, c, ref_uniform(&rng)), tb_set(&b, c, ref_uniform(&rng));
    char t[16], bl[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(bl, sizeof bl, "BLOCK=%d", block);
    ExampleKernel k = {"groupnorm.blk", "group_norm_fwd", {t, bl, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&y, "Y"), tb_buf(&w, "W"), tb_buf(&b, "B"), tb_buf(&mean, "Mean"),
                           tb_buf(&rstd, "Rstd")};
    ExampleArg args[] = {{.p = x.data}, {.p = y.data},   {.p = w.data}, {.p = b.data},     {.p = mean.data},
                        {.p = rstd.data}, {.i = C}, {.i = HW}, {.i = groups}, {.f = 1e-5}};
    if (launch(run, &r, &k, args, 10, (uint32_t)(batch * groups), bufs, 6)) {
        float *xf = tb_floats(&x), *wf = tb_floats(&w), *bf = tb_floats(&b);
        double *ry = malloc((size_t)total * sizeof *ry), *rm = malloc((size_t)batch * groups * sizeof *rm);
        double *rr = malloc((size_t)batch * groups * sizeof *rr);
        ref_group_norm_fwd(xf, wf, bf, batch, C, HW, groups, (double)1e-5f, ry, rm, rr);
        double u = dt == DT_F32 ? 0 : unit_roundoff(dt);
        compare(&r, "Y", &y, total, ry, 1, total, TOL_REL, 2e-5, u, true);
        compare(&r, "Mean", &mean, batch * groups, rm, 1, batch * groups, TOL_REL, 0, 1e-5, false);
        compare(&r, "Rstd", &rstd, batch * groups, rr, 1, batch * groups, TOL_REL, 0, 1e-5, false);
        free(xf), free(wf), free(bf), free(ry), free(rm), free(rr);
    }
    TBuf *all[] = {&x, &y, &w, &b, &mean, &rstd};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
    return r;
}

/* Row-wise int8 quantization: x = 4 N(0,1), with one all-zero row (its
 * scale 0, its q 0) when M > 2. Scale = max |x| / 127: the division is
 * div.full on the GPU (2 ulp), so 2.5e-7 relative. q is checked against
 * x / scale rounded to nearest even with the scale the kernel stored:
 * exact, except that the quotient's own 2 ulp may move a value within
 * 3 ulp of a tie to the other side (then q differs by 1). Dequantized:
 * q * scale rounds once in f32 and once to T, exactly as here. */
CheckResult check_quantize(const ExampleRunner *run, int M, int N, int stride, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "quantize_rows + dequantize_rows M=%d N=%d stride=%d %s BLOCK=%d", M, N, stride, tname(dt), block);
    RefRng rng = {14};
    TBuf x = tb_new(dt, (int64_t)M * stride), q = tb_new(DT_I8, (int64_t)M * stride), scale = tb_new(DT_F32, M);
    TBuf y = tb_new(dt, (int64_t)M * stride);
    for (int64_t i = 0; i < x.n; i++) tb_set(&x, i, M > 2 && i / stride == 1 ? 0.0 : 4 * ref_normal(&rng));
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel kq = {"quantize.blk", "quantize_rows", {t, b, NULL}}, kd = {"quantize.blk", "dequantize_rows", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&q, "Q"), tb_buf(&scale, "Scale"), tb_buf(&y, "Y")};
    ExampleArg qargs[] = {{.p = x.data}, {.p = q.data}, {.p = scale.data}, {.i = stride}, {.i = N}};
    ExampleArg dargs[] = {{.p = q.data}, {.p = scale.data}, {.p = y.data}, {.i = stride}, {.i = N}};
    if (launch(run, &r, &kq, qargs, 5, (uint32_t)M, bufs, 3) &&
        launch(run, &r, &kd, dargs, 5, (uint32_t)M, (ExampleBuffer[]){bufs[1], bufs[2], bufs[3]}, 3)) {
        double *rs = malloc((size_t)M * sizeof *rs), *ry = malloc((size_t)M * N * sizeof *ry);
        for (int i = 0; i < M; i++) {
            double amax = 0;
            for (int c = 0; c < N; c++) amax = fmax(amax, fabs(tb_get(&x, (int64_t)i * stride + c)));
            rs[i] = (float)(amax / 127.0);
            double s = tb_get(&scale, i);
            for (int c = 0; c < N; c++) {
                int64_t at = (int64_t)i * stride + c;
                double quot = s > 0 ? tb_get(&x, at) / s : 0, want = nearbyint(quot), got = tb_get(&q, at);
                bool near_tie = fabs(fabs(quot - trunc(quot)) - 0.5) <= 3 * 0x1p-24 * fabs(quot);
                if (got != want && !(near_tie && fabs(got - want) == 1))
                    failf(&r, "Q[%d, %d] = %g, reference %g (x / scale = %.9g)", i, c, got, want, quot);
                if (fabs(got) > 127) failf(&r, "Q[%d, %d] = %g is beyond 127", i, c, got);
                ry[(int64_t)i * N + c] = (float)(got * s); /* f32 product, rounded to T by compare */
            }
        }
        compare(&r, "Scale", &scale, 1, rs, M, 1, TOL_REL, 0, 2.5e-7, true);
        compare(&r, "Y", &y, stride, ry, M, N, TOL_EXACT, 0, 0, false);
        free(rs), free(ry);
    }
    tb_free(&x), tb_free(&q), tb_free(&scale), tb_free(&y);
    return r;
}

/* Prefix sums along rows: x ~ N(0,1). Each block's scan adds along a tree
 * of depth log2(BLOCK), the carry one addition per block before, the sum
 * for the carry log2(BLOCK) more: the f32 error is at most
 * (log2(BLOCK) + 2 + 2 k) 2^-24 times the sum of |x| so far (k: the block's
 * index), plus the rounding to T. */
CheckResult check_cumsum(const ExampleRunner *run, int M, int N, int stride, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "cumsum_rows M=%d N=%d stride=%d %s BLOCK=%d", M, N, stride, tname(dt), block);
    RefRng rng = {15};
    TBuf x = tb_new(dt, (int64_t)M * stride), y = tb_new(dt, (int64_t)M * stride);
    for (int64_t i = 0; i < x.n; i++) tb_set(&x, i, ref_normal(&rng));
    for (int64_t i = 0; i < y.n; i++) tb_set(&y, i, -7.0); /* the padding past N keeps it */
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"cumsum.blk", "cumsum_rows", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&y, "Y")};
    ExampleArg args[] = {{.p = x.data}, {.p = y.data}, {.i = stride}, {.i = N}};
    if (launch(run, &r, &k, args, 4, (uint32_t)M, bufs, 2)) {
        double *ref = malloc((size_t)M * N * sizeof *ref), *bound = malloc((size_t)M * N * sizeof *bound);
        int depth = 0;
        while ((1 << depth) < block) depth++;
        double u = dt == DT_F32 ? 0 : unit_roundoff(dt);
        for (int i = 0; i < M; i++) {
            double s = 0, abs_s = 0;
            for (int c = 0; c < N; c++) {
                double v = tb_get(&x, (int64_t)i * stride + c);
                s += v, abs_s += fabs(v);
                ref[(int64_t)i * N + c] = s;
                bound[(int64_t)i * N + c] = (depth + 2 + 2 * (c / block)) * 0x1p-24 * abs_s + u * fabs(s) + 0x1p-30;
            }
        }
        char tol[64];
        snprintf(tol, sizeof tol, "f32 scan bound%s", dt == DT_F32 ? "" : " + u |y|");
        compare_bound(&r, "Y", &y, stride, ref, bound, M, N, tol, true);
        check_padding(&r, "Y", &y, M, N, stride, -7.0);
        free(ref), free(bound);
    }
    tb_free(&x), tb_free(&y);
    return r;
}

/* Cross-entropy: logits 2 N(0,1), targets uniform. Per lane the running sum
 * adds N / BLOCK terms in f32 with exp.approx (2 ulp) on the GPU: its
 * relative error stays below 1e-5 for these sizes, an absolute 1e-5 in the
 * log; 2e-5 on LSE and loss. */
CheckResult check_cross_entropy(const ExampleRunner *run, int M, int N, int stride, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "cross_entropy_fwd M=%d N=%d stride=%d %s BLOCK=%d", M, N, stride, tname(dt), block);
    RefRng rng = {11};
    TBuf logits = tb_new(dt, (int64_t)M * stride), targets = tb_new(DT_I32, M);
    TBuf loss = tb_new(DT_F32, M), lse = tb_new(DT_F32, M);
    for (int64_t i = 0; i < logits.n; i++) tb_set(&logits, i, i % stride < N ? 2 * ref_normal(&rng) : NAN);
    int32_t *tgt = malloc((size_t)M * sizeof *tgt);
    for (int i = 0; i < M; i++) {
        tgt[i] = (int32_t)(ref_uniform(&rng) * N) % N;
        tb_set(&targets, i, tgt[i]);
    }
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"cross_entropy.blk", "cross_entropy_fwd", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&logits, "logits"), tb_buf(&targets, "targets"), tb_buf(&loss, "loss"),
                           tb_buf(&lse, "lse")};
    ExampleArg args[] = {{.p = logits.data}, {.p = targets.data}, {.p = loss.data}, {.p = lse.data}, {.i = stride},
                        {.i = N}};
    if (launch(run, &r, &k, args, 6, (uint32_t)M, bufs, 4)) {
        float *lf = tb_floats(&logits);
        double *rl = malloc((size_t)M * sizeof *rl), *rs = malloc((size_t)M * sizeof *rs);
        ref_cross_entropy(lf, tgt, M, N, stride, rl, rs);
        compare(&r, "loss", &loss, 1, rl, M, 1, TOL_ABS, 2e-5, 0, true);
        compare(&r, "lse", &lse, 1, rs, M, 1, TOL_ABS, 2e-5, 0, false);
        free(lf), free(rl), free(rs);
    }
    free(tgt);
    tb_free(&logits), tb_free(&targets), tb_free(&loss), tb_free(&lse);
    return r;
}

/* terms: W and B given, or B (or both) passed None, which the build leaves
 * out; the reference then uses 1 and 0 for them. */
CheckResult check_layer_norm_fwd(const ExampleRunner *run, LayerNormTerms terms, int M, int N, int stride, DType dt,
                                 int block) {
    CheckResult r = {0};
    bool has_w = terms != LN_NO_AFFINE, has_b = terms == LN_AFFINE;
    set_name(&r, "layer_norm_fwd M=%d N=%d stride=%d %s BLOCK=%d%s", M, N, stride, tname(dt), block,
             terms == LN_NO_BIAS ? " B=None" : terms == LN_NO_AFFINE ? " W=B=None" : "");
    RefRng rng = {3};
    const double sentinel = 1234.0, eps = 1e-5;
    int64_t total = (int64_t)M * stride;
    TBuf x = tb_new(dt, total), y = tb_new(dt, total), w = tb_new(dt, N), b = tb_new(dt, N);
    TBuf mean = tb_new(DT_F32, M), rstd = tb_new(DT_F32, M);
    for (int64_t i = 0; i < total; i++) {
        tb_set(&x, i, i % stride < N ? -2.3 + 0.5 * ref_normal(&rng) : NAN);
        tb_set(&y, i, sentinel);
    }
    for (int c = 0; c < N; c++) {
        double wc = ref_uniform(&rng), bc = ref_uniform(&rng);
        tb_set(&w, c, has_w ? wc : 1.0);
        tb_set(&b, c, has_b ? bc : 0.0);
    }
    char t[16], bs[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(bs, sizeof bs, "BLOCK_SIZE=%d", block);
    ExampleKernel k = {"layernorm.blk", "layer_norm_fwd",
                       {t, bs, has_b ? NULL : "layer_norm_fwd.B=None", has_w ? NULL : "layer_norm_fwd.W=None", NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&y, "Y"), tb_buf(&mean, "Mean"), tb_buf(&rstd, "Rstd"),
                           tb_buf(&w, "W"), tb_buf(&b, "B")};
    /* a term passed None: a null pointer, and its buffer is not the kernel's */
    ExampleArg args[] = {{.p = x.data}, {.p = y.data}, {.p = has_w ? w.data : NULL}, {.p = has_b ? b.data : NULL},
                        {.p = mean.data}, {.p = rstd.data}, {.i = stride}, {.i = N}, {.f = eps}};
    if (launch(run, &r, &k, args, 9, (uint32_t)M, bufs, 4 + has_w + has_b)) {
        float *xf = tb_floats(&x), *wf = tb_floats(&w), *bf = tb_floats(&b);
        double *ry = malloc((size_t)M * N * sizeof *ry), *rm = malloc((size_t)M * sizeof *rm);
        double *rr = malloc((size_t)M * sizeof *rr);
        ref_layer_norm_fwd(xf, wf, bf, M, N, stride, eps, ry, rm, rr);
        double atol = dt == DT_F16 ? 1e-2 : 1e-5;
        compare(&r, "Mean", &mean, 1, rm, M, 1, TOL_REL, 0, 1e-5, false);
        compare(&r, "Rstd", &rstd, 1, rr, M, 1, TOL_REL, 0, 1e-5, false);
        compare(&r, "Y", &y, stride, ry, M, N, TOL_ABS, atol, 0, true);
        check_padding(&r, "Y", &y, M, N, stride, sentinel);
        free(xf), free(wf), free(bf), free(ry), free(rm), free(rr);
    }
    tb_free(&x), tb_free(&y), tb_free(&w), tb_free(&b), tb_free(&mean), tb_free(&rstd);
    return r;
}

/* deterministic: layer_norm_bwd_dx_det on group_m programs (no lock), run
 * twice, and dW and dB must be the same bits both times. */
CheckResult check_layer_norm_bwd(const ExampleRunner *run, int M, int N, int stride, DType dt,
                                 int block_n, int group_m, bool deterministic) {
    CheckResult r = {0};
    set_name(&r, "layer_norm_bwd%s M=%d N=%d stride=%d %s BLOCK_N=%d GROUP_M=%d", deterministic ? " (deterministic)" : "",
             M, N, stride, tname(dt), block_n, group_m);
    RefRng rng = {4};
    const double sentinel = 1234.0, eps = 1e-5;
    int64_t total = (int64_t)M * stride;
    TBuf x = tb_new(dt, total), dy = tb_new(dt, total), dx = tb_new(dt, total), w = tb_new(dt, N);
    TBuf mean = tb_new(DT_F32, M), rstd = tb_new(DT_F32, M), lock = tb_new(DT_I32, 2 * group_m);
    TBuf pdw = tb_new(dt, (int64_t)group_m * N), pdb = tb_new(dt, (int64_t)group_m * N);
    TBuf dw = tb_new(dt, N), db = tb_new(dt, N);
    for (int64_t i = 0; i < total; i++) {
        bool in_row = i % stride < N;
        tb_set(&x, i, in_row ? -2.3 + 0.5 * ref_normal(&rng) : NAN);
        tb_set(&dy, i, in_row ? 0.1 * ref_normal(&rng) : NAN);
        tb_set(&dx, i, sentinel);
    }
    for (int c = 0; c < N; c++) tb_set(&w, c, ref_uniform(&rng));
    float *xf = tb_floats(&x), *dyf = tb_floats(&dy), *wf = tb_floats(&w);
    /* the forward pass's saved statistics, computed here in double and stored as f32 */
    double *ry = malloc((size_t)M * N * sizeof *ry), *rm = malloc((size_t)M * sizeof *rm);
    double *rr = malloc((size_t)M * sizeof *rr);
    ref_layer_norm_fwd(xf, wf, wf, M, N, stride, eps, ry, rm, rr);
    for (int i = 0; i < M; i++) {
        tb_set(&mean, i, rm[i]);
        tb_set(&rstd, i, rr[i]);
    }
    char t[16], g[32], bn[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(g, sizeof g, "GROUP_SIZE_M=%d", group_m);
    snprintf(bn, sizeof bn, "BLOCK_SIZE_N=%d", block_n);
    ExampleKernel kdx = {"layernorm.blk", "layer_norm_bwd_dx", {t, g, bn, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&dx, "DX"), tb_buf(&dy, "DY"), tb_buf(&pdw, "DW"), tb_buf(&pdb, "DB"),
                           tb_buf(&x, "X"), tb_buf(&w, "W"), tb_buf(&mean, "Mean"), tb_buf(&rstd, "Rstd"),
                           tb_buf(&lock, "Lock"), tb_buf(&dw, "FINAL_DW"), tb_buf(&db, "FINAL_DB")};
    ExampleArg args[] = {{.p = dx.data}, {.p = dy.data}, {.p = pdw.data}, {.p = pdb.data}, {.p = x.data},
                        {.p = w.data}, {.p = mean.data}, {.p = rstd.data}, {.p = lock.data},
                        {.i = stride}, {.i = N}};
    ExampleKernel kdw = {"layernorm.blk", "layer_norm_bwd_dwdb", {t, "BLOCK_SIZE_M=32", "BLOCK_SIZE_N=128", NULL}};
    ExampleArg args2[] = {{.p = pdw.data}, {.p = pdb.data}, {.p = dw.data}, {.p = db.data}, {.i = group_m}, {.i = N}};
    ExampleKernel kdet = {"layernorm.blk", "layer_norm_bwd_dx_det", {t, bn, NULL}};
    ExampleArg args_det[] = {{.p = dx.data}, {.p = dy.data}, {.p = pdw.data}, {.p = pdb.data}, {.p = x.data},
                            {.p = w.data}, {.p = mean.data}, {.p = rstd.data}, {.i = stride}, {.i = N}, {.i = M}};
    ExampleBuffer bufs_det[] = {bufs[0], bufs[1], bufs[2], bufs[3], bufs[4], bufs[5], bufs[6], bufs[7]};
    ExampleBuffer bufs_dw[] = {bufs[2], bufs[3], bufs[9], bufs[10]};
    uint32_t dw_grid = (uint32_t)((N + 127) / 128);
    bool ran = deterministic ? launch(run, &r, &kdet, args_det, 11, (uint32_t)group_m, bufs_det, 8)
                             : launch(run, &r, &kdx, args, 11, (uint32_t)M, bufs, 9);
    ran = ran && launch(run, &r, &kdw, args2, 6, dw_grid, bufs_dw, 4);
    if (ran && deterministic) { /* again, from scratch: the same bits */
        TBuf first_dw = tb_new(dt, N), first_db = tb_new(dt, N);
        memcpy(first_dw.data, dw.data, (size_t)N * tb_elem_bytes(&dw));
        memcpy(first_db.data, db.data, (size_t)N * tb_elem_bytes(&db));
        ran = launch(run, &r, &kdet, args_det, 11, (uint32_t)group_m, bufs_det, 8) &&
              launch(run, &r, &kdw, args2, 6, dw_grid, bufs_dw, 4);
        if (ran && (memcmp(first_dw.data, dw.data, (size_t)N * tb_elem_bytes(&dw)) != 0 ||
                    memcmp(first_db.data, db.data, (size_t)N * tb_elem_bytes(&db)) != 0))
            failf(&r, "dW or dB differ between two runs of the deterministic backward");
        tb_free(&first_dw), tb_free(&first_db);
    }
    if (ran) {
        double *rdx = malloc((size_t)M * N * sizeof *rdx), *rdw = malloc((size_t)N * sizeof *rdw);
        double *rdb = malloc((size_t)N * sizeof *rdb);
        ref_layer_norm_bwd(xf, dyf, wf, M, N, stride, eps, rdx, rdw, rdb);
        double atol = dt == DT_F16 ? 1e-2 : 1e-5;
        compare(&r, "DX", &dx, stride, rdx, M, N, TOL_ABS, atol, 0, true);
        check_padding(&r, "DX", &dx, M, N, stride, sentinel);
        double rtol = dt == DT_F16 ? 0x1p-9 : 0;
        double watol = dt == DT_F16 && M > 1151 ? atol * (M / 1151.0) : atol;
        compare(&r, "DW", &dw, N, rdw, 1, N, rtol ? TOL_REL : TOL_ABS, watol, rtol, true);
        compare(&r, "DB", &db, N, rdb, 1, N, rtol ? TOL_REL : TOL_ABS, watol, rtol, true);
        for (int i = 0; i < group_m && !deterministic; i++)
            if (tb_get(&lock, i) != 0) failf(&r, "Lock[%d] = %g: a lock was left taken", i, tb_get(&lock, i));
        free(rdx), free(rdw), free(rdb);
    }
    free(xf), free(dyf), free(wf), free(ry), free(rm), free(rr);
    TBuf *all[] = {&x, &dy, &dx, &w, &mean, &rstd, &lock, &pdw, &pdb, &dw, &db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_free(all[i]);
    return r;
}

/* Tolerance, per element: the library's functions are within 2.5 ulp and
 * each of the kernel's other f32 operations rounds once (at most 8 of them,
 * the GPU contracting some): 8e-7 |ref|. 1 + erf and 1 + tanh cancel for
 * negative x, turning the function's absolute error near -1 (2.5 ulp of 1,
 * 1.5e-7) into 0.5 |x| 1.5e-7: allow 1e-7 |x|. Storing in f16/bf16 adds one
 * rounding (unit roundoff u) and its subnormal spacing. Inputs x ~ 4 N(0,1)
 * reach the tails; they are exact in T, and the reference reads them from T. */
CheckResult check_activation(const ExampleRunner *run, Activation act, int n, DType dt, int block) {
    static const char *const names[] = {"gelu", "gelu (tanh)", "silu"};
    CheckResult r = {0};
    set_name(&r, "%s n=%d %s BLOCK=%d", names[act], n, tname(dt), block);
    RefRng rng = {9};
    TBuf x = tb_new(dt, n), out = tb_new(dt, n);
    for (int i = 0; i < n; i++) tb_set(&x, i, 4 * ref_normal(&rng));
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"activations.blk", act == ACT_SILU ? "silu" : "gelu",
                       {t, b, act == ACT_GELU_TANH ? "APPROX_TANH=true" : NULL, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "x"), tb_buf(&out, "out")};
    ExampleArg args[] = {{.p = x.data}, {.p = out.data}, {.i = n}};
    if (launch(run, &r, &k, args, 3, (uint32_t)((n + block - 1) / block), bufs, 2)) {
        float *xf = tb_floats(&x);
        double *ref = malloc((size_t)n * sizeof *ref), *bound = malloc((size_t)n * sizeof *bound);
        ref_activation(act, xf, (size_t)n, ref);
        double u = dt == DT_F32 ? 0 : unit_roundoff(dt), sub = dt == DT_F32 ? 0 : subnormal_half(dt);
        for (int i = 0; i < n; i++)
            bound[i] = (8e-7 + u) * fabs(ref[i]) + 1e-7 * fabs(xf[i]) + sub + 1e-44;
        compare_bound(&r, "out", &out, n, ref, bound, 1, n, "8e-7 |ref| + 1e-7 |x| (+ one rounding to T)", true);
        free(xf), free(ref), free(bound);
    }
    tb_free(&x), tb_free(&out);
    return r;
}

CheckResult check_dropout(const ExampleRunner *run, int n, float p, int32_t seed, DType dt, int block) {
    CheckResult r = {0};
    set_name(&r, "dropout n=%d p=%g seed=%d %s BLOCK=%d", n, p, seed, tname(dt), block);
    RefRng rng = {5};
    TBuf x = tb_new(dt, n), out = tb_new(dt, n);
    for (int i = 0; i < n; i++) {
        double v = ref_normal(&rng);
        tb_set(&x, i, v == 0 ? 1.0 : v); /* nonzero, so a zero output means dropped */
    }
    char t[16], b[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"dropout.blk", "dropout", {t, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "x"), tb_buf(&out, "out")};
    ExampleArg args[] = {{.p = x.data}, {.p = out.data}, {.i = n}, {.f = p}, {.i = seed}};
    if (launch(run, &r, &k, args, 5, (uint32_t)((n + block - 1) / block), bufs, 2)) {
        float *xf = tb_floats(&x);
        double *ref = malloc((size_t)n * sizeof *ref);
        uint8_t *keep = malloc((size_t)n);
        ref_dropout(xf, (size_t)n, p, seed, ref, keep);
        compare(&r, "out", &out, n, ref, 1, n, TOL_REL, 0, dt == DT_F32 ? 0x1p-22 : 0x1p-10, true);
        /* the keep mask is rand(seed, i) > p: kept exactly where the output is nonzero */
        int64_t kept = 0;
        for (int i = 0; i < n; i++) {
            bool nonzero = tb_get(&out, i) != 0;
            kept += nonzero;
            if (nonzero != (philox_rand(seed, (uint32_t)i) > p))
                failf(&r, "out[%d] is %s but rand(%d, %d) = %.9g against p = %g", i, nonzero ? "kept" : "dropped",
                      seed, i, philox_rand(seed, (uint32_t)i), p);
        }
        /* and the fraction kept is 1 - p within 6 binomial standard deviations */
        double sd = sqrt(p * (1.0 - p) / n), frac = (double)kept / n;
        if (fabs(frac - (1.0 - p)) > 6 * sd + 1.0 / n)
            failf(&r, "kept %.5f of the elements, expected %.5f +- %.5f", frac, 1.0 - p, 6 * sd);
        free(xf), free(ref), free(keep);
    }
    tb_free(&x), tb_free(&out);
    return r;
}

/* A histogram of n values spread over -16 .. nbins + 15 (some outside the
 * bins), against C counting: exact. */
CheckResult check_histogram(const ExampleRunner *run, int n, int nbins, int block) {
    CheckResult r = {0};
    set_name(&r, "histogram n=%d NBINS=%d BLOCK=%d", n, nbins, block);
    RefRng rng = {21};
    TBuf x = tb_new(DT_I32, n), bins = tb_new(DT_I32, nbins);
    int32_t *want = calloc((size_t)nbins, sizeof *want);
    for (int i = 0; i < n; i++) {
        int32_t v = (int32_t)floor(ref_uniform(&rng) * (nbins + 32)) - 16;
        tb_set(&x, i, v);
        if (v >= 0 && v < nbins) want[v]++;
    }
    char nb[32], b[32];
    snprintf(nb, sizeof nb, "NBINS=%d", nbins);
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"histogram.blk", "histogram_kernel", {nb, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&x, "X"), tb_buf(&bins, "BINS")};
    ExampleArg args[] = {{.p = x.data}, {.p = bins.data}, {.i = n}};
    if (launch(run, &r, &k, args, 3, (uint32_t)((n + block - 1) / block), bufs, 2)) {
        double *ref = malloc((size_t)nbins * sizeof *ref);
        for (int i = 0; i < nbins; i++) ref[i] = want[i];
        compare(&r, "BINS", &bins, nbins, ref, 1, nbins, TOL_EXACT, 0, 0, true);
        free(ref);
    }
    free(want);
    tb_free(&x), tb_free(&bins);
    return r;
}

/* Top-k sampling of M rows of N logits (2 N(0,1), ties made by rounding to
 * 1/8): the reference in double keeps the logits at or above the k-th
 * largest, weighs them by exp((x - max) inv_temp), and picks the first
 * token whose cumulative weight exceeds u = rand(seed, row) times the total.
 * The kernel's exp is approximate on the GPU, so a pick may differ where u
 * times the total lies within 1e-5 of the total from a boundary; every pick
 * must be a kept token, and the others must be the reference's. */
CheckResult check_topk_sample(const ExampleRunner *run, int M, int N, int stride, int topk, int block) {
    CheckResult r = {0};
    set_name(&r, "topk_sample M=%d N=%d stride=%d K=%d BLOCK=%d", M, N, stride, topk, block);
    RefRng rng = {22};
    const int32_t seed = 4321;
    const float inv_temp = 1.25f;
    TBuf logits = tb_new(DT_F32, (int64_t)M * stride), tokens = tb_new(DT_I32, M);
    for (int64_t i = 0; i < logits.n; i++) tb_set(&logits, i, i % stride < N ? round(16 * ref_normal(&rng)) / 8 : NAN);
    char kk[32], b[32];
    snprintf(kk, sizeof kk, "K=%d", topk);
    snprintf(b, sizeof b, "BLOCK=%d", block);
    ExampleKernel k = {"topk_sampling.blk", "topk_sample", {kk, b, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&logits, "L"), tb_buf(&tokens, "TOKENS")};
    ExampleArg args[] = {{.p = logits.data}, {.p = tokens.data}, {.i = stride}, {.i = N}, {.i = seed}, {.f = inv_temp}};
    if (launch(run, &r, &k, args, 6, (uint32_t)M, bufs, 2)) {
        float *x = tb_floats(&logits), *sorted = malloc((size_t)N * sizeof *sorted);
        double *cum = malloc((size_t)N * sizeof *cum);
        int near = 0;
        for (int row = 0; row < M && r.ok; row++) {
            const float *xr = x + (int64_t)row * stride;
            memcpy(sorted, xr, (size_t)N * sizeof *sorted);
            for (int i = 1; i < N; i++) /* insertion sort, descending: N is small */
                for (int j = i; j > 0 && sorted[j] > sorted[j - 1]; j--) {
                    float t = sorted[j];
                    sorted[j] = sorted[j - 1], sorted[j - 1] = t;
                }
            float threshold = sorted[(topk < N ? topk : N) - 1], top = sorted[0];
            double total = 0;
            for (int i = 0; i < N; i++) {
                total += xr[i] >= threshold ? exp(((double)xr[i] - top) * inv_temp) : 0.0;
                cum[i] = total;
            }
            double target = philox_rand(seed, (uint64_t)row) * total;
            int want = 0;
            while (want < N - 1 && cum[want] <= target) want++;
            int got = (int)tb_get(&tokens, row);
            double tol = 1e-5 * total;
            bool ok = got == want ||
                      (got >= 0 && got < N && xr[got] >= threshold &&
                       (got < want ? cum[got] >= target - tol : cum[got - 1] <= target + tol));
            if (!ok)
                failf(&r, "row %d: token %d (logit %g, cumulative %.9g), the reference's %d (cumulative %.9g) for %.9g",
                      row, got, got >= 0 && got < N ? xr[got] : NAN, got >= 0 && got < N ? cum[got] : NAN, want,
                      cum[want], target);
            near += got != want;
        }
        if (near > M / 100 + 1) failf(&r, "%d of %d picks differ from the reference's (near ties allowed: 1%%)", near, M);
        snprintf(r.tolerance, sizeof r.tolerance, "picks; ties 1e-5");
        r.max_err = near;
        free(x), free(sorted), free(cum);
    }
    tb_free(&logits), tb_free(&tokens);
    return r;
}

/* matmul's and matmul_splitk's operands: A row-major with rows K + pad apart;
 * B row-major (rows N + pad apart) or, transposed, column-major (columns K +
 * pad apart); C rows N + pad apart, all sentinels; NaN in the padding */
typedef struct {
    TBuf a, b, c;
    int64_t sam, sak, sbk, sbn, scm;
} MatmulOperands;

static const double matmul_sentinel = 1280.0; /* exact in f16 and bf16 */

static MatmulOperands matmul_operands(int M, int N, int K, DType dt, bool trans_b, int pad, RefRng *rng) {
    MatmulOperands o = {.sam = K + pad, .sak = 1, .sbk = trans_b ? 1 : N + pad, .sbn = trans_b ? K + pad : 1,
                        .scm = N + pad};
    o.a = tb_new(dt, (int64_t)M * o.sam);
    o.b = tb_new(dt, trans_b ? (int64_t)N * o.sbn : (int64_t)K * o.sbk);
    o.c = tb_new(dt, (int64_t)M * o.scm);
    for (int64_t i = 0; i < o.a.n; i++) tb_set(&o.a, i, i % o.sam < K ? ref_normal(rng) : NAN);
    for (int64_t i = 0; i < o.b.n; i++)
        tb_set(&o.b, i, i % (trans_b ? o.sbn : o.sbk) < (trans_b ? K : N) ? ref_normal(rng) : NAN);
    for (int64_t i = 0; i < o.c.n; i++) tb_set(&o.c, i, matmul_sentinel);
    return o;
}

/* C against the product in double: the f32 sum's error, at most K 2^-23
 * sum|ab| (tensor cores, or f32 partial sums added; the interpreter's is
 * half that), then one rounding to T; the padding untouched */
static void compare_matmul(CheckResult *r, MatmulOperands *o, DType dt, int M, int N, int K) {
    size_t mn = (size_t)M * N;
    double *ref = malloc(mn * sizeof *ref), *mag = malloc(mn * sizeof *mag), *bound = malloc(mn * sizeof *bound);
    if (ref && mag && bound &&
        ref_matmul(o->a.data, o->b.data, dt == DT_BF16, M, N, K, o->sam, o->sak, o->sbk, o->sbn, ref, mag)) {
        double u = unit_roundoff(dt);
        for (size_t i = 0; i < mn; i++) bound[i] = (1 + u) * K * 0x1p-23 * mag[i] + u * fabs(ref[i]) + subnormal_half(dt);
        compare_bound(r, "c", &o->c, o->scm, ref, bound, M, N, dt == DT_BF16 ? "K2^-23S+2^-8|c|" : "K2^-23S+2^-11|c|",
                      true);
        check_padding(r, "c", &o->c, M, N, o->scm, matmul_sentinel);
    } else {
        failf(r, "out of memory for the reference");
    }
    free(ref), free(mag), free(bound);
}

CheckResult check_matmul(const ExampleRunner *run, int M, int N, int K, DType dt, int block_m, int block_n,
                         int block_k, int group_m, bool trans_b, int pad) {
    CheckResult r = {0};
    set_name(&r, "matmul %dx%dx%d %s%s pad=%d BLOCK=%d/%d/%d GROUP_M=%d", M, N, K, tname(dt), trans_b ? " B^T" : "",
             pad, block_m, block_n, block_k, group_m);
    RefRng rng = {6};
    MatmulOperands o = matmul_operands(M, N, K, dt, trans_b, pad, &rng);
    char t[16], bm[32], bn[32], bk[32], gm[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(bm, sizeof bm, "BLOCK_M=%d", block_m);
    snprintf(bn, sizeof bn, "BLOCK_N=%d", block_n);
    snprintf(bk, sizeof bk, "BLOCK_K=%d", block_k);
    snprintf(gm, sizeof gm, "GROUP_M=%d", group_m);
    ExampleKernel k = {"matmul.blk", "matmul", {t, bm, bn, bk, gm, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&o.a, "a"), tb_buf(&o.b, "b"), tb_buf(&o.c, "c")};
    ExampleArg args[] = {{.p = o.a.data}, {.p = o.b.data}, {.p = o.c.data}, {.i = M}, {.i = N}, {.i = K},
                        {.i = o.sam}, {.i = o.sak}, {.i = o.sbk}, {.i = o.sbn}, {.i = o.scm}, {.i = 1}};
    uint32_t programs = (uint32_t)(((M + block_m - 1) / block_m) * ((N + block_n - 1) / block_n));
    if (launch(run, &r, &k, args, 12, programs, bufs, 3)) compare_matmul(&r, &o, dt, M, N, K);
    tb_free(&o.a), tb_free(&o.b), tb_free(&o.c);
    return r;
}

CheckResult check_matmul_splitk(const ExampleRunner *run, int M, int N, int K, DType dt, int block_m, int block_n,
                                int block_k, int splits, bool trans_b, int pad) {
    CheckResult r = {0};
    set_name(&r, "matmul_splitk %dx%dx%d %s%s pad=%d BLOCK=%d/%d/%d split %d", M, N, K, tname(dt),
             trans_b ? " B^T" : "", pad, block_m, block_n, block_k, splits);
    RefRng rng = {7};
    MatmulOperands o = matmul_operands(M, N, K, dt, trans_b, pad, &rng);
    /* keys a split: K / splits rounded up to whole blocks (the last splits may get fewer, or none) */
    int k_split = ((K + splits - 1) / splits + block_k - 1) / block_k * block_k;
    uint32_t grid[3] = {(uint32_t)((N + block_n - 1) / block_n), (uint32_t)((M + block_m - 1) / block_m),
                        (uint32_t)splits};
    int64_t tiles = (int64_t)grid[0] * grid[1];
    TBuf partial = tb_new(DT_F32, tiles * splits * block_m * block_n), count = tb_new(DT_I32, tiles);
    for (int64_t i = 0; i < count.n; i++) tb_set(&count, i, 0);
    char t[16], bm[32], bn[32], bk[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(bm, sizeof bm, "BLOCK_M=%d", block_m);
    snprintf(bn, sizeof bn, "BLOCK_N=%d", block_n);
    snprintf(bk, sizeof bk, "BLOCK_K=%d", block_k);
    ExampleKernel k = {"matmul_splitk.blk", "matmul_splitk", {t, bm, bn, bk, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&o.a, "a"), tb_buf(&o.b, "b"), tb_buf(&o.c, "c"), tb_buf(&partial, "Partial"),
                           tb_buf(&count, "Count")};
    ExampleArg args[] = {{.p = o.a.data},  {.p = o.b.data},  {.p = o.c.data}, {.p = partial.data}, {.p = count.data},
                        {.i = M},         {.i = N},         {.i = K},        {.i = o.sam},        {.i = o.sak},
                        {.i = o.sbk},     {.i = o.sbn},     {.i = o.scm},    {.i = 1},            {.i = k_split}};
    /* twice: the first launch must leave the counts zero for the second */
    for (int run_no = 0; run_no < 2 && launch_grid(run, &r, &k, args, 15, grid, bufs, 5); run_no++) {
        compare_matmul(&r, &o, dt, M, N, K);
        for (int64_t i = 0; i < count.n; i++)
            if (tb_get(&count, i) != 0) {
                failf(&r, "Count[%lld] = %g after the launch, not 0", (long long)i, tb_get(&count, i));
                break;
            }
        for (int64_t i = 0; i < o.c.n; i++) tb_set(&o.c, i, matmul_sentinel);
    }
    tb_free(&o.a), tb_free(&o.b), tb_free(&o.c), tb_free(&partial), tb_free(&count);
    return r;
}

CheckResult check_moe_matmul(const ExampleRunner *run, int tokens, int experts, int top_k, int N, int K, DType dt,
                             int block_m, int block_n, int block_k, bool mul_weight, int pad) {
    CheckResult r = {0};
    set_name(&r, "moe_matmul %d tokens x top %d of %d experts, N=%d K=%d %s%s pad=%d BLOCK=%d/%d/%d", tokens, top_k,
             experts, N, K, tname(dt), mul_weight ? " weighted" : "", pad, block_m, block_n, block_k);
    RefRng rng = {11};
    const double sentinel = 1280.0;
    int rows = tokens * top_k; /* routed rows: (token, choice) */
    int64_t sam = K + pad, sbn = K + pad, sbe = (int64_t)N * sbn, scm = N + pad;
    /* routing: top_k distinct experts a token, and a weight each; the last
     * expert gets none where there are more than top_k (an idle expert) */
    int pool = experts > top_k ? experts - 1 : experts;
    int *expert_of = malloc((size_t)rows * sizeof *expert_of);
    for (int t = 0; expert_of && t < tokens; t++)
        for (int j = 0; j < top_k; j++) {
            int e, dup;
            do {
                e = (int)(ref_uniform(&rng) * pool);
                dup = 0;
                for (int i = 0; i < j; i++) dup |= expert_of[t * top_k + i] == e;
            } while (dup);
            expert_of[t * top_k + j] = e;
        }
    /* the rows sorted by expert, each expert's run padded to BLOCK_M with the
     * id `rows` (vLLM's moe_align_block_size), then two blocks of padding
     * past the count the kernel is given (their programs return at once) */
    int64_t cap = (int64_t)rows + (int64_t)experts * block_m + 2 * block_m, padded = 0;
    TBuf ids = tb_new(DT_I32, cap), eids = tb_new(DT_I32, cap / block_m + 1), count = tb_new(DT_I32, 1);
    for (int64_t i = 0; i < ids.n; i++) tb_set(&ids, i, rows);
    for (int64_t i = 0; i < eids.n; i++) tb_set(&eids, i, 0);
    for (int e = 0; expert_of && e < experts; e++) {
        int64_t start = padded;
        for (int i = 0; i < rows; i++)
            if (expert_of[i] == e) tb_set(&ids, padded++, i);
        if (padded == start) continue;
        padded = (padded + block_m - 1) / block_m * block_m;
        for (int64_t b = start / block_m; b < padded / block_m; b++) tb_set(&eids, b, e);
    }
    tb_set(&count, 0, (double)padded);
    int em = (int)padded + 2 * block_m;
    /* C ends in a row of sentinels: a padding id (rows) written through is a changed sentinel
     * on the GPU too, where the interpreter would report the store out of bounds */
    TBuf a = tb_new(dt, (int64_t)tokens * sam), b = tb_new(dt, experts * sbe), c = tb_new(dt, (int64_t)(rows + 1) * scm);
    TBuf w = tb_new(DT_F32, rows);
    for (int64_t i = 0; i < a.n; i++) tb_set(&a, i, i % sam < K ? ref_normal(&rng) : NAN);
    for (int64_t i = 0; i < b.n; i++) tb_set(&b, i, i % sbn < K ? ref_normal(&rng) : NAN);
    for (int64_t i = 0; i < c.n; i++) tb_set(&c, i, sentinel);
    for (int64_t i = 0; i < w.n; i++) tb_set(&w, i, ref_uniform(&rng));
    char t[16], tk[32], mw[32], bm[32], bn[32], bk[32];
    snprintf(t, sizeof t, "T=%s", tname(dt));
    snprintf(tk, sizeof tk, "TOP_K=%d", top_k);
    snprintf(mw, sizeof mw, "MUL_WEIGHT=%s", mul_weight ? "true" : "false");
    snprintf(bm, sizeof bm, "BLOCK_M=%d", block_m);
    snprintf(bn, sizeof bn, "BLOCK_N=%d", block_n);
    snprintf(bk, sizeof bk, "BLOCK_K=%d", block_k);
    ExampleKernel k = {"moe_matmul.blk", "moe_matmul", {t, tk, mw, bm, bn, bk, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&a, "a"),       tb_buf(&b, "b"),          tb_buf(&c, "c"),
                           tb_buf(&ids, "sorted_ids"), tb_buf(&eids, "expert_ids"), tb_buf(&w, "weights"),
                           tb_buf(&count, "padded")};
    ExampleArg args[] = {{.p = a.data}, {.p = b.data}, {.p = c.data}, {.p = ids.data}, {.p = eids.data},
                        {.p = w.data}, {.p = count.data}, {.i = N}, {.i = K}, {.i = em}, {.i = rows},
                        {.i = sam}, {.i = sbe}, {.i = sbn}, {.i = scm}};
    uint32_t programs = (uint32_t)(((em + block_m - 1) / block_m) * ((N + block_n - 1) / block_n));
    if (expert_of && launch(run, &r, &k, args, 15, programs, bufs, 7)) {
        size_t mn = (size_t)rows * N;
        double *ref = malloc(mn * sizeof *ref), *bound = malloc(mn * sizeof *bound);
        if (ref && bound) {
            /* as matmul's: the f32 sum's error (K 2^-23 sum|ab|), the weight's
             * f32 product (2^-24), one rounding to T */
            double u = unit_roundoff(dt);
            for (int i = 0; i < rows; i++)
                for (int n = 0; n < N; n++) {
                    double sum = 0, mag = 0, wi = mul_weight ? tb_get(&w, i) : 1;
                    for (int kk = 0; kk < K; kk++) {
                        double x = tb_get(&a, (int64_t)(i / top_k) * sam + kk) *
                                   tb_get(&b, expert_of[i] * sbe + (int64_t)n * sbn + kk);
                        sum += x, mag += fabs(x);
                    }
                    ref[(size_t)i * N + n] = sum * wi;
                    bound[(size_t)i * N + n] =
                        (1 + u) * (K * 0x1p-23 * mag * wi + 0x1p-24 * fabs(sum * wi)) + u * fabs(sum * wi) +
                        subnormal_half(dt);
                }
            compare_bound(&r, "c", &c, scm, ref, bound, rows, N, dt == DT_BF16 ? "K2^-23S+2^-8|c|" : "K2^-23S+2^-11|c|",
                          true);
            check_padding(&r, "c", &c, rows, N, scm, sentinel);
            check_tail(&r, "c", &c, (int64_t)rows * scm, sentinel);
        } else {
            failf(&r, "out of memory for the reference");
        }
        free(ref), free(bound);
    } else if (!expert_of) {
        failf(&r, "out of memory for the routing");
    }
    free(expert_of);
    tb_free(&a), tb_free(&b), tb_free(&c), tb_free(&w), tb_free(&ids), tb_free(&eids), tb_free(&count);
    return r;
}

/* A matrix of 8-bit operands in row-major rows `stride` apart (or, trans,
 * column-major columns `stride` apart): every 8-bit integer alike, or fp8
 * roundings of N(0, 1); NaN (fp8) or -1 (integers) in the padding. */
static void fill_8bit(TBuf *m, RefRng *rng, int64_t inner, int64_t stride) {
    bool fp8 = dtype_is_fp8(m->dt);
    for (int64_t i = 0; i < m->n; i++) {
        double byte = floor(ref_uniform(rng) * 256); /* 0 .. 255 */
        double v = m->dt == DT_U8 ? byte : m->dt == DT_I8 ? byte - 128 : ref_normal(rng);
        tb_set(m, i, i % stride < inner ? v : fp8 ? NAN : m->dt == DT_U8 ? 255 : -1);
    }
}

CheckResult check_matmul_8bit(const ExampleRunner *run, int M, int N, int K, DType ta, DType tb, DType out,
                              int block_m, int block_n, int block_k, bool trans_b, bool per_tensor, int pad) {
    CheckResult r = {0};
    bool fp8 = dtype_is_fp8(ta);
    set_name(&r, "matmul_%s %dx%dx%d %s x %s -> %s%s%s pad=%d BLOCK=%d/%d/%d", fp8 ? "fp8" : "int8", M, N, K,
             tname(ta), tname(tb), tname(out), trans_b ? " B^T" : "", fp8 ? per_tensor ? " per-tensor" : " row-wise" : "",
             pad, block_m, block_n, block_k);
    RefRng rng = {21};
    const double sentinel = fp8 ? 1280.0 : 12345.0;
    int64_t sam = K + pad, sbk = trans_b ? 1 : N + pad, sbn = trans_b ? K + pad : 1, scm = N + pad;
    TBuf a = tb_new(ta, (int64_t)M * sam), b = tb_new(tb, trans_b ? (int64_t)N * sbn : (int64_t)K * sbk);
    TBuf c = tb_new(out, (int64_t)M * scm), sa = tb_new(DT_F32, M), sb = tb_new(DT_F32, N);
    fill_8bit(&a, &rng, K, sam);
    fill_8bit(&b, &rng, trans_b ? K : N, trans_b ? sbn : sbk);
    for (int64_t i = 0; i < c.n; i++) tb_set(&c, i, sentinel);
    for (int i = 0; i < M; i++) tb_set(&sa, i, 0.5 + ref_uniform(&rng) * 1.5);
    for (int i = 0; i < N; i++) tb_set(&sb, i, 0.5 + ref_uniform(&rng) * 1.5);
    char d[6][32];
    snprintf(d[0], sizeof d[0], "TA=%s", tname(ta));
    snprintf(d[1], sizeof d[1], "TB=%s", tname(tb));
    snprintf(d[2], sizeof d[2], "BLOCK_M=%d", block_m);
    snprintf(d[3], sizeof d[3], "BLOCK_N=%d", block_n);
    snprintf(d[4], sizeof d[4], "BLOCK_K=%d", block_k);
    snprintf(d[5], sizeof d[5], "T=%s", tname(out));
    ExampleKernel k = {fp8 ? "matmul_fp8.blk" : "matmul_int8.blk", fp8 ? "matmul_fp8" : "matmul_int8",
                       {d[0], d[1], d[2], d[3], d[4], fp8 ? d[5] : NULL, NULL}};
    ExampleBuffer bufs[] = {tb_buf(&a, "a"), tb_buf(&b, "b"), tb_buf(&c, "c"), tb_buf(&sa, "scale_a"), tb_buf(&sb, "scale_b")};
    int64_t ssa = per_tensor ? 0 : 1, ssb = per_tensor ? 0 : 1;
    ExampleArg fargs[] = {{.p = a.data}, {.p = b.data}, {.p = c.data}, {.p = sa.data}, {.p = sb.data},
                         {.i = M}, {.i = N}, {.i = K}, {.i = sam}, {.i = 1}, {.i = sbk}, {.i = sbn},
                         {.i = scm}, {.i = 1}, {.i = ssa}, {.i = ssb}};
    ExampleArg iargs[] = {{.p = a.data}, {.p = b.data}, {.p = c.data}, {.i = M}, {.i = N}, {.i = K},
                         {.i = sam}, {.i = 1}, {.i = sbk}, {.i = sbn}, {.i = scm}, {.i = 1}};
    uint32_t programs = (uint32_t)(((M + block_m - 1) / block_m) * ((N + block_n - 1) / block_n));
    if (launch(run, &r, &k, fp8 ? fargs : iargs, fp8 ? 16 : 12, programs, bufs, fp8 ? 5 : 3)) {
        size_t mn = (size_t)M * N;
        double *ref = malloc(mn * sizeof *ref), *bound = malloc(mn * sizeof *bound);
        for (int i = 0; ref && bound && i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0, mag = 0; /* exact in double: products of fp8 values, sums of 8-bit ones */
                for (int kk = 0; kk < K; kk++) {
                    double p = tb_get(&a, (int64_t)i * sam + kk) * tb_get(&b, (int64_t)kk * sbk + (int64_t)j * sbn);
                    s += p, mag += fabs(p);
                }
                if (!fp8) {
                    ref[(size_t)i * N + j] = (double)(int32_t)(uint32_t)(int64_t)s; /* modulo 2^32 */
                    continue;
                }
                double scale = tb_get(&sa, per_tensor ? 0 : i) * tb_get(&sb, per_tensor ? 0 : j);
                ref[(size_t)i * N + j] = s * scale;
                /* each k-block's sum on the tensor cores (wgmma's fp8 sums keep about 13 bits: at most
                   2^-12 S a 32-wide k-step, language.md §7), the f32 sums (K 2^-23 S), two f32 roundings
                   of the scaling, one rounding to T */
                double u = out == DT_F32 ? 0x1p-24 : unit_roundoff(out);
                double sums = (block_k / 32) * 0x1p-12 + (K + 2) * 0x1p-23;
                bound[(size_t)i * N + j] = (sums * mag * scale + u * fabs(s * scale)) * (1 + 0x1p-20) +
                                           (out == DT_F32 ? 0x1p-149 : subnormal_half(out));
            }
        if (!ref || !bound) failf(&r, "out of memory for the reference");
        else if (fp8) {
            compare_bound(&r, "c", &c, scm, ref, bound, M, N, "(BK/32 2^-12+K2^-23)S|s|+u|c|", true);
        } else {
            snprintf(r.tolerance, sizeof r.tolerance, "exact");
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double g = tb_get(&c, (int64_t)i * scm + j), want = ref[(size_t)i * N + j];
                    if (g != want) failf(&r, "c[%d, %d] = %.0f, reference %.0f (exact)", i, j, g, want);
                }
        }
        check_padding(&r, "c", &c, M, N, scm, sentinel);
        free(ref), free(bound);
    }
    tb_free(&a), tb_free(&b), tb_free(&c), tb_free(&sa), tb_free(&sb);
    return r;
}

CheckResult check_matmul_fp8_blockwise(const ExampleRunner *run, int M, int N, int K, DType ta, DType tb, DType out,
                                       int block_m, int block_n, int pad) {
    CheckResult r = {0};
    set_name(&r, "matmul_fp8_blockwise %dx%dx%d %s x %s -> %s pad=%d BLOCK=%d/%d", M, N, K, tname(ta), tname(tb),
             tname(out), pad, block_m, block_n);
    RefRng rng = {22};
    const double sentinel = 1280.0;
    int kb = (K + 127) / 128, nb = (N + 127) / 128;
    int64_t sam = K + pad, sbn = K + pad, scm = N + pad, ssa = kb + 1, ssb = kb + 2; /* the scales padded too */
    TBuf a = tb_new(ta, (int64_t)M * sam), b = tb_new(tb, (int64_t)N * sbn), c = tb_new(out, (int64_t)M * scm);
    TBuf sa = tb_new(DT_F32, (int64_t)M * ssa), sb = tb_new(DT_F32, (int64_t)nb * ssb);
    fill_8bit(&a, &rng, K, sam);
    fill_8bit(&b, &rng, K, sbn);
    for (int64_t i = 0; i < c.n; i++) tb_set(&c, i, sentinel);
    for (int64_t i = 0; i < sa.n; i++) tb_set(&sa, i, i % ssa < kb ? ldexp(0.5 + ref_uniform(&rng), (int)(i % 5) - 2) : NAN);
    for (int64_t i = 0; i < sb.n; i++) tb_set(&sb, i, i % ssb < kb ? ldexp(0.5 + ref_uniform(&rng), (int)(i % 3) - 1) : NAN);
    char d[6][32];
    snprintf(d[0], sizeof d[0], "TA=%s", tname(ta));
    snprintf(d[1], sizeof d[1], "TB=%s", tname(tb));
    snprintf(d[2], sizeof d[2], "T=%s", tname(out));
    snprintf(d[3], sizeof d[3], "BLOCK_M=%d", block_m);
    snprintf(d[4], sizeof d[4], "BLOCK_N=%d", block_n);
    ExampleKernel k = {"matmul_fp8_blockwise.blk", "matmul_fp8_blockwise", {d[0], d[1], d[2], d[3], d[4], NULL}};
    ExampleBuffer bufs[] = {tb_buf(&a, "a"), tb_buf(&b, "b"), tb_buf(&c, "c"), tb_buf(&sa, "scale_a"), tb_buf(&sb, "scale_b")};
    ExampleArg args[] = {{.p = a.data}, {.p = b.data}, {.p = c.data}, {.p = sa.data}, {.p = sb.data},
                        {.i = M}, {.i = N}, {.i = K}, {.i = sam}, {.i = sbn}, {.i = scm}, {.i = ssa}, {.i = ssb}};
    uint32_t programs = (uint32_t)(((M + block_m - 1) / block_m) * ((N + block_n - 1) / block_n));
    if (launch(run, &r, &k, args, 13, programs, bufs, 5)) {
        size_t mn = (size_t)M * N;
        double *ref = malloc(mn * sizeof *ref), *bound = malloc(mn * sizeof *bound);
        for (int i = 0; ref && bound && i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0, mag = 0; /* per k-block: the exact sum, scaled (in double) */
                for (int q = 0; q < kb; q++) {
                    double part = 0, pmag = 0;
                    for (int kk = q * 128; kk < K && kk < (q + 1) * 128; kk++) {
                        double p = tb_get(&a, (int64_t)i * sam + kk) * tb_get(&b, (int64_t)j * sbn + kk);
                        part += p, pmag += fabs(p);
                    }
                    double scale = tb_get(&sa, (int64_t)i * ssa + q) * tb_get(&sb, (int64_t)(j / 128) * ssb + q);
                    s += part * scale, mag += pmag * fabs(scale);
                }
                ref[(size_t)i * N + j] = s;
                /* each k-block's sum on the tensor cores (4 k-steps of 32, 2^-12 S each: matmul_fp8's), its
                   scaling (two f32 roundings) and add (one) in f32 for every k-block, one rounding to T */
                double u = out == DT_F32 ? 0x1p-24 : unit_roundoff(out);
                bound[(size_t)i * N + j] = ((4 * 0x1p-12 + (3 * kb + 2) * 0x1p-24) * mag + u * fabs(s)) * (1 + 0x1p-20) +
                                           (out == DT_F32 ? 0x1p-149 : subnormal_half(out));
            }
        if (!ref || !bound) failf(&r, "out of memory for the reference");
        else compare_bound(&r, "c", &c, scm, ref, bound, M, N, "(4 2^-12+3KB 2^-24)S+u|c|", true);
        check_padding(&r, "c", &c, M, N, scm, sentinel);
        free(ref), free(bound);
    }
    tb_free(&a), tb_free(&b), tb_free(&c), tb_free(&sa), tb_free(&sb);
    return r;
}

/* The const parameters the attention examples take (and GROUP, WINDOW and BLOCK_D, those
 * three only where set: BLOCK_D where D is not a power of two). */
typedef struct {
    char text[8][32];
} AttentionDefs;

static AttentionDefs attention_defs(DType dt, int D, int block_m, int block_n, bool causal) {
    AttentionDefs d;
    snprintf(d.text[0], sizeof d.text[0], "T=%s", tname(dt));
    snprintf(d.text[1], sizeof d.text[1], "HEAD_DIM=%d", D);
    snprintf(d.text[2], sizeof d.text[2], "BLOCK_M=%d", block_m);
    snprintf(d.text[3], sizeof d.text[3], "BLOCK_N=%d", block_n);
    snprintf(d.text[4], sizeof d.text[4], "CAUSAL=%s", causal ? "true" : "false");
    d.text[5][0] = d.text[6][0] = d.text[7][0] = 0;
    int block_d = 1;
    while (block_d < D) block_d *= 2;
    if (block_d != D) snprintf(d.text[7], sizeof d.text[7], "BLOCK_D=%d", block_d); /* D = 96: blocks of 128 */
    return d;
}

static ExampleKernel attention_kernel(const char *file, const char *kernel, const AttentionDefs *d) {
    ExampleKernel k = {file, kernel, {d->text[0], d->text[1], d->text[2], d->text[3], d->text[4], NULL}};
    for (int i = 5, n = 5; i < 8; i++)
        if (d->text[i][0]) k.defs[n++] = d->text[i];
    return k;
}

/* Grouped-query attention: element i of a tensor shaped as Q ([heads, N, D],
 * heads of N x D elements) is element kv_index(i) of K and V, which have one
 * head for each `group` query heads. */
static int64_t kv_index(int64_t i, int64_t head_elems, int group) {
    return i / head_elems / group * head_elems + i % head_elems;
}

/* K and V repeated per query head, for references written for multi-head attention. */
static void repeat_kv(TBuf *k_rep, TBuf *v_rep, const TBuf *k, const TBuf *v, int64_t head_elems, int group) {
    for (int64_t i = 0; i < k_rep->n; i++) {
        int64_t from = kv_index(i, head_elems, group);
        ((uint16_t *)k_rep->data)[i] = ((uint16_t *)k->data)[from];
        ((uint16_t *)v_rep->data)[i] = ((uint16_t *)v->data)[from];
    }
}

/* How an attention forward's arithmetic errs, beyond check_attention's f16
 * model (the header comment): the first dot's error per unit of S (D 2^-23
 * for f32 sums; fp8's tensor-core runs add D/32 2^-12), p's rounding before
 * the second dot (T's unit roundoff and half its smallest subnormal), that
 * dot's own error per unit of A (fp8: BLOCK_N/32 2^-12), and the roundings
 * between the sums and Out (2^-22 for the division; fp8's scale, one more). */
typedef struct {
    double score_rel, p_u, p_sub, pv_rel, out_rel;
    const char *tol; /* the tolerance as the table shows it */
} AttentionErrors;

/* The errors of attention.blk's forward and its variants in T = dt: f32 sums, p rounded to T. */
static AttentionErrors forward_errors(int D, DType dt) {
    return (AttentionErrors){D * 0x1p-23, unit_roundoff(dt), subnormal_half(dt), 0, 0x1p-22,
                             dt == DT_BF16 ? "2^-8(|o|+A)+.." : "2^-11(|o|+A)+.."};
}

/* Out and LSE of a forward over `heads` slices against ref_attention on q,
 * k, v (f16 or bf16 bits, K and V per query head), each element within its
 * bound; Out rounded to dt; nothing written past either (sentinels). */
static void compare_attention_forward(CheckResult *r, const TBuf *out, const TBuf *lse, const void *q, const void *k,
                                      const void *v, bool bf16, int heads, int N, int D, bool causal, int window,
                                      double sm_scale, int block_m, int block_n, DType dt, const AttentionErrors *m,
                                      double sentinel) {
    size_t rows = (size_t)heads * N, total = rows * (size_t)D;
    double *ref = malloc(total * sizeof *ref), *ref_lse = malloc(rows * sizeof *ref_lse);
    double *bound = malloc(total * sizeof *bound), *bound_lse = malloc(rows * sizeof *bound_lse);
    RefAttentionMags mags = {malloc(rows * sizeof(double)), malloc(total * sizeof(double)), malloc(total * sizeof(double))};
    if (ref && ref_lse && bound && bound_lse && mags.score_mag && mags.v_mag && mags.v_abs &&
        ref_attention(q, k, v, bf16, heads, N, D, causal, window, sm_scale, ref, ref_lse, &mags)) {
        double u = unit_roundoff(dt), sub = subnormal_half(dt), c = sm_scale * 1.4426950408889634;
        for (size_t row = 0; row < rows; row++) {
            int i = (int)(row % (size_t)N);
            /* the blocks of keys the kernel's program walks through */
            int hi = causal ? ((i / block_m + 1) * block_m < N ? (i / block_m + 1) * block_m : N) : N;
            int nblk = (hi + block_n - 1) / block_n, npad = nblk * block_n;
            /* delta: the absolute error of a base-2 score (t - m): the
             * first dot's, two roundings of the scaling and one of
             * the subtraction (|t - m| <= 2 c S) */
            double delta = c * mags.score_mag[row] * (m->score_rel + 2 * 0x1p-23);
            /* eps: the relative error of each weight: delta through exp2, the
             * exp2 of p and of each block's alpha (2 ulp each) */
            double eps = 0.6931471805599453 * delta * (1 + delta) + (nblk + 1) * 0x1p-22;
            /* the log2-sum-exp2: delta, eps and l's f32 sum (in log2: / ln 2),
             * log2 and the last addition (2 ulp of their sizes) */
            double eps_l = (log2(block_n) + 2 * nblk) * 0x1p-23;
            bound_lse[row] = delta + 1.01 * (eps + eps_l) / 0.6931471805599453 +
                             0x1p-22 * (log2(npad) + 1 + fabs(ref_lse[row]));
            for (int d = 0; d < D; d++) {
                size_t e = row * (size_t)D + d;
                double A = mags.v_mag[e], o = fabs(ref[e]);
                /* moved weights (2 eps A), p rounded before the second dot
                 * (p_u A, and p_sub per key since l >= 1), that dot's error,
                 * its and l's f32 sums and the rescalings (2 npad 2^-23 A),
                 * the roundings after; then the rounding of Out to T */
                double err = A * (m->p_u + 2 * eps / (1 - eps) + m->pv_rel + 2 * npad * 0x1p-23) +
                             m->p_sub * mags.v_abs[e] + m->out_rel * o;
                bound[e] = (1 + u) * err + u * o + sub;
            }
        }
        compare_bound(r, "Out", out, D, ref, bound, (int64_t)rows, D, m->tol, true);
        compare_bound(r, "LSE", lse, 1, ref_lse, bound_lse, (int64_t)rows, 1, "delta+2^-22..", false);
        check_tail(r, "Out", out, (int64_t)total, sentinel);
        check_tail(r, "LSE", lse, (int64_t)rows, sentinel);
    } else {
        failf(r, "out of memory for the reference");
    }
    free(ref), free(ref_lse), free(bound), free(bound_lse);
    free(mags.score_mag), free(mags.v_mag), free(mags.v_abs);
}

CheckResult check_attention(const ExampleRunner *run, int Z, int H, int N, int D, bool causal, DType dt,
                            int block_m, int block_n, int group, int window) {
    CheckResult r = {0};
    set_name(&r, "attention Z=%d H=%d N_CTX=%d D=%d %s%s BLOCK_M/N=%d/%d", Z, H, N, D, tname(dt),
             causal ? " causal" : "", block_m, block_n);
    if (group > 1) snprintf(r.name + strlen(r.name), sizeof r.name - strlen(r.name), " GROUP=%d", group);
    if (window > 0) snprintf(r.name + strlen(r.name), sizeof r.name - strlen(r.name), " WINDOW=%d", window);
    RefRng rng = {7};
    const double sentinel = 1280.0;
    const float sm_scale = 0.5f; /* as Triton's test */
    int heads = Z * H;
    int64_t total = (int64_t)heads * N * D, kv_total = total / group;
    /* Out and LSE have a block of sentinels past their end: nothing may land there. With
     * GROUP query heads a K/V head, K and V have H / GROUP heads; the reference gets them
     * repeated, head h / GROUP as head h (multi-head attention on the copies) */
    TBuf q = tb_new(dt, total), kk = tb_new(dt, kv_total), v = tb_new(dt, kv_total);
    TBuf kk_rep = tb_new(dt, total), v_rep = tb_new(dt, total);
    TBuf out = tb_new(dt, total + (int64_t)block_m * D), lse = tb_new(DT_F32, (int64_t)heads * N + block_m);
    for (int64_t i = 0; i < total; i++) {
        tb_set(&q, i, 0.5 * ref_normal(&rng));
        if (i < kv_total) {
            tb_set(&kk, i, 0.5 * ref_normal(&rng));
            tb_set(&v, i, 0.5 * ref_normal(&rng));
        }
    }
    repeat_kv(&kk_rep, &v_rep, &kk, &v, (int64_t)N * D, group);
    for (int64_t i = 0; i < out.n; i++) tb_set(&out, i, sentinel);
    for (int64_t i = 0; i < lse.n; i++) tb_set(&lse, i, sentinel);
    AttentionDefs defs = attention_defs(dt, D, block_m, block_n, causal);
    if (group > 1) snprintf(defs.text[5], sizeof defs.text[5], "GROUP=%d", group);
    if (window > 0) snprintf(defs.text[6], sizeof defs.text[6], "WINDOW=%d", window);
    ExampleKernel k = attention_kernel("attention.blk", "attn_fwd", &defs);
    ExampleBuffer bufs[] = {tb_buf(&q, "Q"), tb_buf(&kk, "K"), tb_buf(&v, "V"), tb_buf(&out, "Out"), tb_buf(&lse, "LSE")};
    ExampleArg args[] = {{.p = q.data}, {.p = kk.data}, {.p = v.data}, {.p = out.data}, {.p = lse.data},
                        {.f = sm_scale}, {.i = N}};
    uint32_t grid[3] = {(uint32_t)((N + block_m - 1) / block_m), (uint32_t)heads, 1};
    if (launch_grid(run, &r, &k, args, 7, grid, bufs, 5)) {
        AttentionErrors m = forward_errors(D, dt);
        compare_attention_forward(&r, &out, &lse, q.data, kk_rep.data, v_rep.data, dt == DT_BF16,
                                  heads, N, D, causal, window, sm_scale, block_m, block_n, dt, &m, sentinel);
    }
    tb_free(&q), tb_free(&kk), tb_free(&v), tb_free(&kk_rep), tb_free(&v_rep), tb_free(&out), tb_free(&lse);
    return r;
}

/* attention_varlen.blk: B sequences of lengths lens[] packed without padding (Q and Out
 * [total, H, D], K and V [total, H / group, D], LSE [H, total]); each sequence's Out and
 * LSE, its heads gathered, against ref_attention on that sequence alone, so that a key of
 * another sequence in a program's blocks would show; nothing written past either end. */
CheckResult check_attention_varlen(const ExampleRunner *run, int B, const int *lens, int H, int D, bool causal,
                                   DType dt, int block_m, int block_n, int group) {
    CheckResult r = {0};
    set_name(&r, "attention varlen B=%d H=%d D=%d %s%s BLOCK_M/N=%d/%d", B, H, D, tname(dt), causal ? " causal" : "",
             block_m, block_n);
    if (group > 1) snprintf(r.name + strlen(r.name), sizeof r.name - strlen(r.name), " GROUP=%d", group);
    RefRng rng = {11};
    const double sentinel = 1280.0;
    const float sm_scale = 0.5f;
    int h_kv = H / group, longest = 0;
    TBuf cu = tb_new(DT_I32, B + 1); /* the cumulative lengths, the first 0 */
    int32_t *cu_at = cu.data;
    for (int b = 0; b < B; b++) {
        cu_at[b + 1] = cu_at[b] + lens[b];
        if (lens[b] > longest) longest = lens[b];
    }
    int64_t total = cu_at[B], q_elems = total * H * D, kv_elems = total * h_kv * D;
    TBuf q = tb_new(dt, q_elems), kk = tb_new(dt, kv_elems), v = tb_new(dt, kv_elems);
    TBuf out = tb_new(dt, q_elems + (int64_t)block_m * D), lse = tb_new(DT_F32, total * H + block_m);
    for (int64_t i = 0; i < q_elems; i++) tb_set(&q, i, 0.5 * ref_normal(&rng));
    for (int64_t i = 0; i < kv_elems; i++) {
        tb_set(&kk, i, 0.5 * ref_normal(&rng));
        tb_set(&v, i, 0.5 * ref_normal(&rng));
    }
    for (int64_t i = 0; i < out.n; i++) tb_set(&out, i, sentinel);
    for (int64_t i = 0; i < lse.n; i++) tb_set(&lse, i, sentinel);
    AttentionDefs defs = attention_defs(dt, D, block_m, block_n, causal);
    if (group > 1) snprintf(defs.text[5], sizeof defs.text[5], "GROUP=%d", group);
    ExampleKernel k = attention_kernel("attention_varlen.blk", "attn_fwd_varlen", &defs);
    ExampleBuffer bufs[] = {tb_buf(&q, "Q"),     tb_buf(&kk, "K"),  tb_buf(&v, "V"),
                           tb_buf(&out, "Out"), tb_buf(&lse, "LSE"), tb_buf(&cu, "CuSeqlens")};
    ExampleArg args[] = {{.p = q.data},   {.p = kk.data},  {.p = v.data},     {.p = out.data},
                        {.p = lse.data}, {.p = cu.data}, {.f = sm_scale}, {.i = H}};
    uint32_t grid[3] = {(uint32_t)((longest + block_m - 1) / block_m), (uint32_t)H, (uint32_t)B};
    if (launch_grid(run, &r, &k, args, 8, grid, bufs, 6)) {
        AttentionErrors m = forward_errors(D, dt);
        for (int b = 0; b < B && r.ok; b++) {
            int64_t n = lens[b], first = cu_at[b], slice = H * n * D;
            if (n == 0) continue;
            /* sequence b as [H, n, D] (K and V per query head) and its Out and LSE likewise */
            TBuf qs = tb_new(dt, slice), ks = tb_new(dt, slice), vs = tb_new(dt, slice);
            TBuf os = tb_new(dt, slice), ls = tb_new(DT_F32, H * n);
            for (int64_t h = 0; h < H; h++)
                for (int64_t t = 0; t < n; t++) {
                    for (int64_t d = 0; d < D; d++) {
                        int64_t at = (h * n + t) * D + d, q_at = ((first + t) * H + h) * D + d;
                        int64_t kv_at = ((first + t) * h_kv + h / group) * D + d;
                        ((uint16_t *)qs.data)[at] = ((uint16_t *)q.data)[q_at];
                        ((uint16_t *)ks.data)[at] = ((uint16_t *)kk.data)[kv_at];
                        ((uint16_t *)vs.data)[at] = ((uint16_t *)v.data)[kv_at];
                        ((uint16_t *)os.data)[at] = ((uint16_t *)out.data)[q_at];
                    }
                    tb_set(&ls, h * n + t, tb_get(&lse, h * total + first + t));
                }
            compare_attention_forward(&r, &os, &ls, qs.data, ks.data, vs.data, dt == DT_BF16, H, (int)n, D, causal,
                                      0, sm_scale, block_m, block_n, dt, &m, sentinel);
            if (!r.ok) /* name the sequence the indices count in */
                snprintf(r.detail + strlen(r.detail), sizeof r.detail - strlen(r.detail), " (sequence %d)", b);
            tb_free(&qs), tb_free(&ks), tb_free(&vs), tb_free(&os), tb_free(&ls);
        }
        check_tail(&r, "Out", &out, q_elems, sentinel);
        check_tail(&r, "LSE", &lse, total * H, sentinel);
    }
    tb_free(&cu), tb_free(&q), tb_free(&kk), tb_free(&v), tb_free(&out), tb_free(&lse);
    return r;
}

/* attention_fp8.blk: Q, K, V rounded to e4m3 (V stored transposed) with power-of-two scales, so
 * the values the kernel means (x8 * scale) are exact in f16 and ref_attention takes them. */
CheckResult check_attention_fp8(const ExampleRunner *run, int Z, int H, int N, int D, bool causal, int block_m,
                                int block_n) {
    CheckResult r = {0};
    set_name(&r, "attention_fp8 Z=%d H=%d N_CTX=%d D=%d f8e4m3 -> bf16%s BLOCK_M/N=%d/%d", Z, H, N, D,
             causal ? " causal" : "", block_m, block_n);
    RefRng rng = {11};
    const double sentinel = 1280.0;
    /* q_scale * k_scale * sm_scale as Triton's test's sm_scale 0.5 on N(0, 0.5^2) operands;
     * V's values around 0.5 (mean 1 before its scale), so a lost scale or key shows */
    const float q_scale = 0.5f, k_scale = 0.5f, v_scale = 0.5f, sm_scale = 0.5f;
    const DType dt = DT_BF16;
    int heads = Z * H;
    int64_t total = (int64_t)heads * N * D;
    TBuf q = tb_new(DT_F8E4M3, total), kk = tb_new(DT_F8E4M3, total), vt = tb_new(DT_F8E4M3, total);
    TBuf q16 = tb_new(DT_F16, total), k16 = tb_new(DT_F16, total), v16 = tb_new(DT_F16, total);
    TBuf out = tb_new(dt, total + (int64_t)block_m * D), lse = tb_new(DT_F32, (int64_t)heads * N + block_m);
    for (int64_t i = 0; i < total; i++) {
        tb_set(&q, i, ref_normal(&rng));
        tb_set(&kk, i, ref_normal(&rng));
        tb_set(&vt, i, 1 + ref_normal(&rng));
        tb_set(&q16, i, tb_get(&q, i) * q_scale);
        tb_set(&k16, i, tb_get(&kk, i) * k_scale);
    }
    for (int64_t h = 0; h < heads; h++) /* Vt [heads, D, N] -> V [heads, N, D] */
        for (int64_t d = 0; d < D; d++)
            for (int64_t j = 0; j < N; j++)
                tb_set(&v16, (h * N + j) * D + d, tb_get(&vt, (h * D + d) * N + j) * v_scale);
    for (int64_t i = 0; i < out.n; i++) tb_set(&out, i, sentinel);
    for (int64_t i = 0; i < lse.n; i++) tb_set(&lse, i, sentinel);
    AttentionDefs defs = attention_defs(dt, D, block_m, block_n, causal);
    ExampleKernel k = attention_kernel("attention_fp8.blk", "attn_fwd_fp8", &defs);
    ExampleBuffer bufs[] = {tb_buf(&q, "Q"), tb_buf(&kk, "K"), tb_buf(&vt, "Vt"), tb_buf(&out, "Out"),
                           tb_buf(&lse, "LSE")};
    ExampleArg args[] = {{.p = q.data},      {.p = kk.data},     {.p = vt.data},     {.p = out.data},
                        {.p = lse.data},    {.f = q_scale},     {.f = k_scale},     {.f = v_scale},
                        {.f = sm_scale},    {.i = N}};
    uint32_t grid[3] = {(uint32_t)((N + block_m - 1) / block_m), (uint32_t)heads, 1};
    if (launch_grid(run, &r, &k, args, 10, grid, bufs, 5)) {
        /* p rounded to e4m3 (u 2^-4, half its smallest subnormal 2^-10); each dot's run summed on
         * the tensor cores (k/32 2^-12 of its magnitude, matmul_fp8's); the scores' scale a product
         * of four (two roundings more); v_scale / l, then times */
        AttentionErrors m = {D / 32.0 * 0x1p-12 + (D + 2) * 0x1p-23, 0x1p-4, 0x1p-10, block_n / 32.0 * 0x1p-12, 0x1p-21,
                             "2^-4 A+2^-8|o|+.."};
        compare_attention_forward(&r, &out, &lse, q16.data, k16.data, v16.data, false, heads, N, D, causal, 0,
                                  sm_scale, block_m, block_n, dt, &m, sentinel);
    }
    tb_free(&q), tb_free(&kk), tb_free(&vt), tb_free(&q16), tb_free(&k16), tb_free(&v16), tb_free(&out),
        tb_free(&lse);
    return r;
}

CheckResult check_attention_bwd(const ExampleRunner *run, int Z, int H, int N, int D, bool causal, DType dt,
                                int block_m, int block_n, bool fused, int group) {
    CheckResult r = {0};
    set_name(&r, "attention bwd%s Z=%d H=%d N_CTX=%d D=%d %s%s BLOCK_M/N=%d/%d", fused ? " (dQ by atomics)" : "", Z, H,
             N, D, tname(dt), causal ? " causal" : "", block_m, block_n);
    if (group > 1) snprintf(r.name + strlen(r.name), sizeof r.name - strlen(r.name), " GROUP=%d", group);
    RefRng rng = {11};
    const double sentinel = 1280.0;
    const float sm_scale = 0.5f;
    int heads = Z * H;
    int64_t total = (int64_t)heads * N * D, rows = (int64_t)heads * N, kv_total = total / group;
    int64_t tail = (int64_t)(block_m > block_n ? block_m : block_n) * D; /* sentinels past the ends */
    /* K and V have heads / group heads; the reference gets them repeated per query head, and
     * its dK and dV (per query head: each head's share) summed over each group */
    TBuf q = tb_new(dt, total), kk = tb_new(dt, kv_total), v = tb_new(dt, kv_total), dout = tb_new(dt, total);
    TBuf kk_rep = tb_new(dt, total), v_rep = tb_new(dt, total);
    TBuf out = tb_new(dt, total), lse = tb_new(DT_F32, rows), delta = tb_new(DT_F32, rows + block_m);
    TBuf dq = tb_new(dt, total + tail), dk = tb_new(dt, total + tail), dv = tb_new(dt, total + tail);
    TBuf dq_acc = tb_new(DT_F32, total + tail); /* the fused kernels' f32 sums: attn_bwd_prepare zeroes them */
    TBuf dk_sum = tb_new(dt, kv_total + tail), dv_sum = tb_new(dt, kv_total + tail); /* attn_bwd_group_sum's */
    for (int64_t i = 0; i < total; i++) {
        tb_set(&q, i, 0.5 * ref_normal(&rng));
        if (i < kv_total) {
            tb_set(&kk, i, 0.5 * ref_normal(&rng));
            tb_set(&v, i, 0.5 * ref_normal(&rng));
        }
        tb_set(&dout, i, 0.5 * ref_normal(&rng));
    }
    repeat_kv(&kk_rep, &v_rep, &kk, &v, (int64_t)N * D, group);
    TBuf *outputs[] = {&delta, &dq, &dk, &dv, &dq_acc, &dk_sum, &dv_sum};
    for (int b = 0; b < 7; b++)
        for (int64_t i = 0; i < outputs[b]->n; i++) tb_set(outputs[b], i, sentinel);
    double *ref_out = malloc(total * sizeof(double)), *ref_lse = malloc(rows * sizeof(double));
    double *arrays[8];
    bool ok = ref_out && ref_lse;
    for (int a = 0; a < 8; a++) ok &= (arrays[a] = malloc((a == 3 || a == 7 ? rows : total) * sizeof(double))) != NULL;
    RefAttentionGrads g = {arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5], arrays[6], arrays[7]};
    bool bf16 = dt == DT_BF16;
    double u = unit_roundoff(dt), sub = subnormal_half(dt);
    /* the forward's outputs as the backward gets them: Out in T, LSE in f32 */
    ok = ok &&
         ref_attention(q.data, kk_rep.data, v_rep.data, bf16, heads, N, D, causal, 0, sm_scale, ref_out, ref_lse, NULL) &&
         ref_attention_bwd(q.data, kk_rep.data, v_rep.data, dout.data, bf16, heads, N, D, causal, sm_scale, u, sub,
                           ref_out, ref_lse, &g);
    if (!ok) failf(&r, "out of memory for the reference");
    for (int64_t i = 0; ok && i < total; i++) tb_set(&out, i, ref_out[i]);
    for (int64_t i = 0; ok && i < rows; i++) tb_set(&lse, i, ref_lse[i]);
    AttentionDefs defs = attention_defs(dt, D, block_m, block_n, causal);
    if (group > 1) snprintf(defs.text[5], sizeof defs.text[5], "GROUP=%d", group);
    ExampleKernel kd = attention_kernel("attention_bwd.blk", fused ? "attn_bwd_prepare" : "attn_bwd_delta", &defs);
    ExampleKernel ksum = attention_kernel("attention_bwd.blk", "attn_bwd_group_sum", &defs);
    ExampleKernel kkv = attention_kernel("attention_bwd.blk", fused ? "attn_bwd_dkdvdq" : "attn_bwd_dkdv", &defs);
    ExampleKernel kq = attention_kernel("attention_bwd.blk", fused ? "attn_bwd_dq_convert" : "attn_bwd_dq", &defs);
    ExampleBuffer bufs[] = {tb_buf(&q, "Q"), tb_buf(&kk, "K"), tb_buf(&v, "V"), tb_buf(&out, "Out"),
                           tb_buf(&dout, "dOut"), tb_buf(&lse, "LSE"), tb_buf(&delta, "Delta"), tb_buf(&dq, "dQ"),
                           tb_buf(&dk, "dK"), tb_buf(&dv, "dV"), tb_buf(&dq_acc, "dQacc"), tb_buf(&dk_sum, "dK (summed)"),
                           tb_buf(&dv_sum, "dV (summed)")};
    uint32_t grid_m[3] = {(uint32_t)((N + block_m - 1) / block_m), (uint32_t)heads, 1};
    uint32_t grid_n[3] = {(uint32_t)((N + block_n - 1) / block_n), (uint32_t)heads, 1};
    ExampleArg delta_args[] = {{.p = out.data}, {.p = dout.data}, {.p = delta.data}, {.i = N}};
    ExampleArg dkdv_args[] = {{.p = q.data}, {.p = kk.data}, {.p = v.data}, {.p = dout.data}, {.p = lse.data},
                             {.p = delta.data}, {.p = dk.data}, {.p = dv.data}, {.f = sm_scale}, {.i = N}};
    ExampleArg dq_args[] = {{.p = q.data}, {.p = kk.data}, {.p = v.data}, {.p = dout.data}, {.p = lse.data},
                           {.p = delta.data}, {.p = dq.data}, {.f = sm_scale}, {.i = N}};
    ExampleArg prepare_args[] = {{.p = out.data}, {.p = dout.data}, {.p = delta.data}, {.p = dq_acc.data}, {.i = N}};
    ExampleArg fused_args[] = {{.p = q.data}, {.p = kk.data}, {.p = v.data}, {.p = dout.data}, {.p = lse.data},
                              {.p = delta.data}, {.p = dk.data}, {.p = dv.data}, {.p = dq_acc.data}, {.f = sm_scale},
                              {.i = N}};
    ExampleArg convert_args[] = {{.p = dq_acc.data}, {.p = dq.data}, {.f = sm_scale}, {.i = N}};
    bool ran = ok && (fused ? launch_grid(run, &r, &kd, prepare_args, 5, grid_m, bufs, 13) &&
                                  launch_grid(run, &r, &kkv, fused_args, 11, grid_n, bufs, 13) &&
                                  launch_grid(run, &r, &kq, convert_args, 4, grid_m, bufs, 13)
                            : launch_grid(run, &r, &kd, delta_args, 4, grid_m, bufs, 13) &&
                                  launch_grid(run, &r, &kkv, dkdv_args, 10, grid_n, bufs, 13) &&
                                  launch_grid(run, &r, &kq, dq_args, 9, grid_m, bufs, 13));
    /* the group's shares of dK and dV summed into the K/V heads' */
    uint32_t grid_kv[3] = {(uint32_t)((N + block_m - 1) / block_m), (uint32_t)(heads / group), 1};
    ExampleArg sum_k_args[] = {{.p = dk.data}, {.p = dk_sum.data}, {.i = N}};
    ExampleArg sum_v_args[] = {{.p = dv.data}, {.p = dv_sum.data}, {.i = N}};
    ran = ran && (group == 1 || (launch_grid(run, &r, &ksum, sum_k_args, 3, grid_kv, bufs, 13) &&
                                 launch_grid(run, &r, &ksum, sum_v_args, 3, grid_kv, bufs, 13)));
    if (ran) {
        const char *tol = bf16 ? "2^-8 per term+.." : "2^-11 per term+..";
        compare_bound(&r, "dQ", &dq, D, g.dq, g.bound_dq, rows, D, tol, true);
        if (group == 1) {
            compare_bound(&r, "dK", &dk, D, g.dk, g.bound_dk, rows, D, tol, true);
            compare_bound(&r, "dV", &dv, D, g.dv, g.bound_dv, rows, D, tol, true);
        } else {
            /* each share's bound (its rounding to T included), the f32 sum's group
             * roundings of the shares' sizes, and the sum's rounding to T */
            double *sums[4] = {g.dk, g.bound_dk, g.dv, g.bound_dv};
            for (int w = 0; w < 4; w += 2) {
                double *ref_sum = calloc((size_t)kv_total, sizeof *ref_sum), *bound_sum = calloc((size_t)kv_total, sizeof *bound_sum);
                if (!ref_sum || !bound_sum) {
                    failf(&r, "out of memory for the reference");
                    free(ref_sum), free(bound_sum);
                    break;
                }
                for (int64_t i = 0; i < total; i++) {
                    int64_t to = kv_index(i, (int64_t)N * D, group);
                    ref_sum[to] += sums[w][i];
                    bound_sum[to] += sums[w + 1][i] + group * 0x1p-23 * fabs(sums[w][i]);
                }
                for (int64_t i = 0; i < kv_total; i++) bound_sum[i] += u * fabs(ref_sum[i]) + sub;
                compare_bound(&r, w ? "dV (summed)" : "dK (summed)", w ? &dv_sum : &dk_sum, D, ref_sum, bound_sum,
                              kv_total / D, D, tol, true);
                check_tail(&r, w ? "dV (summed)" : "dK (summed)", w ? &dv_sum : &dk_sum, kv_total, sentinel);
                free(ref_sum), free(bound_sum);
            }
        }
        compare_bound(&r, "Delta", &delta, 1, g.delta, g.bound_delta, rows, 1, tol, false);
        check_tail(&r, "Delta", &delta, rows, sentinel);
        check_tail(&r, "dQ", &dq, total, sentinel);
        check_tail(&r, "dK", &dk, total, sentinel);
        check_tail(&r, "dV", &dv, total, sentinel);
        if (fused) check_tail(&r, "dQacc", &dq_acc, total, sentinel);
    }
    for (int a = 0; a < 8; a++) free(arrays[a]);
    free(ref_out), free(ref_lse);
    TBuf *all[] = {&q, &kk, &v, &kk_rep, &v_rep, &dout, &out, &lse, &delta, &dq, &dk, &dv, &dq_acc, &dk_sum, &dv_sum};
    for (int b = 0; b < 15; b++) tb_free(all[b]);
    return r;
}

CheckResult check_attention_decode(const ExampleRunner *run, int B, int H_KV, int group, int max_ctx, int D, DType dt,
                                   int block_n, int split, int page_size) {
    CheckResult r = {0};
    char paged[24] = "";
    if (page_size) snprintf(paged, sizeof paged, " paged by %d", page_size);
    set_name(&r, "attention decode B=%d H_KV=%d GROUP=%d CTX=%d D=%d %s BLOCK_N=%d SPLIT=%d%s", B, H_KV, group, max_ctx, D,
             tname(dt), block_n, split, paged);
    RefRng rng = {13};
    const double sentinel = 1280.0;
    const float sm_scale = 0.125f;
    int H = H_KV * group, parts = (max_ctx + split - 1) / split, max_parts = 1;
    while (max_parts < parts) max_parts *= 2;
    int64_t nq = (int64_t)B * H * D, nkv = (int64_t)B * H_KV * max_ctx * D;
    TBuf q = tb_new(dt, nq), kk = tb_new(dt, nkv), v = tb_new(dt, nkv), lens = tb_new(DT_I32, B);
    TBuf part_out = tb_new(DT_F32, (int64_t)B * H * parts * D), part_lse = tb_new(DT_F32, (int64_t)B * H * parts);
    TBuf out = tb_new(dt, nq + D); /* a row of sentinels past the end */
    for (int64_t i = 0; i < nq; i++) tb_set(&q, i, 0.5 * ref_normal(&rng));
    for (int64_t i = 0; i < nkv; i++) {
        tb_set(&kk, i, 0.5 * ref_normal(&rng));
        tb_set(&v, i, 0.5 * ref_normal(&rng));
    }
    /* lengths: the whole cache, one token, and ends inside a part and a block */
    for (int b = 0; b < B; b++) {
        int len = b == 0 ? max_ctx : b == 1 ? 1 : max_ctx / 2 + 3 + 37 * b;
        tb_set(&lens, b, len < max_ctx ? len : max_ctx - 5);
    }
    for (int64_t i = 0; i < out.n; i++) tb_set(&out, i, sentinel);
    /* paged: the same keys and values in a pool of pages [pages, PAGE_SIZE, H_KV, D], the pages
     * of all sequences shuffled, one page more than they need; a slot no sequence's first len
     * tokens use holds NaN (read unmasked, it would poison an output), and a table entry past
     * a sequence's pages is -1 (used, it would read before the pool) */
    int per_seq = page_size ? (max_ctx + page_size - 1) / page_size : 1, pages = B * per_seq + 1;
    TBuf pool_k = tb_new(dt, page_size ? (int64_t)pages * page_size * H_KV * D : 1), pool_v = tb_new(dt, pool_k.n);
    TBuf table = tb_new(DT_I32, page_size ? (int64_t)B * per_seq : 1);
    if (page_size) {
        int *order = malloc((size_t)pages * sizeof *order);
        for (int i = 0; order && i < pages; i++) order[i] = i;
        for (int i = pages - 1; order && i > 0; i--) { /* Fisher-Yates */
            int j = (int)(ref_uniform(&rng) * (i + 1)), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        for (int64_t i = 0; i < pool_k.n; i++) tb_set(&pool_k, i, NAN), tb_set(&pool_v, i, NAN);
        for (int b = 0; order && b < B; b++) {
            int len = (int)tb_get(&lens, b);
            for (int j = 0; j < per_seq; j++) tb_set(&table, (int64_t)b * per_seq + j, j * page_size < len ? order[b * per_seq + j] : -1);
            for (int t = 0; t < len; t++) {
                int64_t page = order[b * per_seq + t / page_size];
                for (int h = 0; h < H_KV; h++)
                    for (int d = 0; d < D; d++) {
                        int64_t from = (((int64_t)b * H_KV + h) * max_ctx + t) * D + d;
                        int64_t to = ((page * page_size + t % page_size) * H_KV + h) * D + d;
                        tb_set(&pool_k, to, tb_get(&kk, from));
                        tb_set(&pool_v, to, tb_get(&v, from));
                    }
            }
        }
        if (!order) failf(&r, "out of memory for the pages");
        free(order);
    }
    char defs[7][32];
    snprintf(defs[0], sizeof defs[0], "T=%s", tname(dt));
    snprintf(defs[1], sizeof defs[1], "HEAD_DIM=%d", D);
    snprintf(defs[2], sizeof defs[2], "GROUP=%d", group);
    snprintf(defs[3], sizeof defs[3], "BLOCK_N=%d", block_n);
    snprintf(defs[4], sizeof defs[4], "SPLIT=%d", split);
    snprintf(defs[5], sizeof defs[5], "MAX_PARTS=%d", max_parts);
    snprintf(defs[6], sizeof defs[6], "PAGE_SIZE=%d", page_size);
    ExampleKernel kpart = {"attention_decode.blk", "attn_decode_part", {defs[0], defs[1], defs[2], defs[3], defs[4], NULL}};
    ExampleKernel kpaged = {"attention_decode.blk", "attn_decode_paged_part",
                            {defs[0], defs[1], defs[2], defs[3], defs[4], defs[6], NULL}};
    ExampleKernel kcomb = {"attention_decode.blk", "attn_decode_combine", {defs[0], defs[1], defs[5], NULL}};
    ExampleBuffer bufs[] = {tb_buf(&q, "Q"),         tb_buf(&kk, "K"),         tb_buf(&v, "V"),
                           tb_buf(&lens, "SeqLen"), tb_buf(&part_out, "PartOut"), tb_buf(&part_lse, "PartLse"),
                           tb_buf(&out, "Out"),     tb_buf(&pool_k, "K pages"),   tb_buf(&pool_v, "V pages"),
                           tb_buf(&table, "BlockTable")};
    ExampleArg part_args[] = {{.p = q.data}, {.p = kk.data}, {.p = v.data}, {.p = lens.data}, {.p = part_out.data},
                             {.p = part_lse.data}, {.f = sm_scale}, {.i = max_ctx}, {.i = H_KV}, {.i = parts}};
    ExampleArg paged_args[] = {{.p = q.data}, {.p = pool_k.data}, {.p = pool_v.data}, {.p = table.data},
                              {.p = lens.data}, {.p = part_out.data}, {.p = part_lse.data}, {.f = sm_scale},
                              {.i = per_seq}, {.i = H_KV}, {.i = parts}};
    ExampleArg comb_args[] = {{.p = part_out.data}, {.p = part_lse.data}, {.p = out.data}, {.i = parts}};
    uint32_t grid_part[3] = {(uint32_t)parts, (uint32_t)H_KV, (uint32_t)B}, grid_comb[3] = {(uint32_t)(B * H), 1, 1};
    bool parted = page_size ? launch_grid(run, &r, &kpaged, paged_args, 11, grid_part, bufs, 10)
                            : launch_grid(run, &r, &kpart, part_args, 10, grid_part, bufs, 10);
    if (parted && launch_grid(run, &r, &kcomb, comb_args, 4, grid_comb, bufs, 10)) {
        /* the reference in double: each query head against its K/V head's first len keys */
        double *ref = malloc((size_t)nq * sizeof *ref), *bound = malloc((size_t)nq * sizeof *bound);
        double *w = malloc((size_t)max_ctx * sizeof *w);
        double u = unit_roundoff(dt), sub = subnormal_half(dt);
        for (int64_t row = 0; ref && bound && w && row < (int64_t)B * H; row++) {
            int b = (int)(row / H), h = (int)(row % H), len = (int)tb_get(&lens, b);
            int64_t kv = ((int64_t)b * H_KV + h / group) * max_ctx * D;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < len; j++) {
                double s = 0;
                for (int d = 0; d < D; d++) s += tb_get(&q, row * D + d) * tb_get(&kk, kv + (int64_t)j * D + d);
                w[j] = s * sm_scale;
                mx = fmax(mx, w[j]);
            }
            for (int j = 0; j < len; j++) sum += (w[j] = exp(w[j] - mx));
            for (int d = 0; d < D; d++) {
                double o = 0, a = 0;
                for (int j = 0; j < len; j++) {
                    double x = tb_get(&v, kv + (int64_t)j * D + d);
                    o += w[j] / sum * x;
                    a += w[j] / sum * fabs(x);
                }
                /* p rounded to T before its product (u A), Out's rounding (u |o|), the f32
                 * sums, exp2's and the parts' weights' few ulp (2^-20 A) */
                ref[row * D + d] = o;
                bound[row * D + d] = 2 * u * (fabs(o) + a) + 0x1p-20 * a + sub;
            }
        }
        if (ref && bound && w) {
            compare_bound(&r, "Out", &out, D, ref, bound, (int64_t)B * H, D, "2u(|o|+A)+..", true);
            check_tail(&r, "Out", &out, nq, sentinel);
        } else {
            failf(&r, "out of memory for the reference");
        }
        free(ref), free(bound), free(w);
    }
    TBuf *all[] = {&q, &kk, &v, &lens, &part_out, &part_lse, &out, &pool_k, &pool_v, &table};
    for (int b = 0; b < 10; b++) tb_free(all[b]);
    return r;
}

/* --------------------------------------------------------------- suite */

int run_example_suite(const ExampleRunner *r, int level, CheckResult *out, int max) {
    bool all = level >= 1;
    int n = 0;
#define CHECK(call)                                                                          \
    do {                                                                                     \
        if (n >= max) { /* never drop a check silently */                                    \
            fprintf(stderr, "run_example_suite: more checks than the %d there is room for\n", max); \
            abort();                                                                         \
        }                                                                                    \
        if (!r->only || strstr(#call, r->only)) out[n++] = (call);                          \
    } while (0)
    CHECK(check_add(r, 98432, DT_F32, 1024)); /* the tutorial's size */
    CHECK(check_softmax(r, 1823, 781, 781, DT_F32, 1024, false)); /* the tutorial's test shape */
    CHECK(check_layer_norm_fwd(r, LN_AFFINE, 1151, 8192, 8192, DT_F16, 1024)); /* the tutorial's; N > block */
    CHECK(check_layer_norm_fwd(r, LN_NO_BIAS, 37, 781, 781, DT_F16, 1024));     /* B passed None */
    CHECK(check_layer_norm_fwd(r, LN_NO_AFFINE, 20, 1000, 1024, DT_F32, 128)); /* W and B passed None */
    CHECK(check_layer_norm_bwd(r, 1151, 8192, 8192, DT_F16, 8192, 96, false));
    CHECK(check_dropout(r, 1 << 20, 0.5f, 123, DT_F32, 1024));
    CHECK(check_softmax(r, 64, 20000, 20000, DT_F32, 1024, true)); /* rows longer than the block */
    CHECK(check_rms_norm(r, 1151, 8192, 8192, DT_F16, 1024));
    CHECK(check_layer_norm_bwd(r, 1151, 8192, 8192, DT_F16, 8192, 96, true));
    CHECK(check_cross_entropy(r, 64, 32000, 32000, DT_F32, 1024)); /* a vocabulary's width */
    CHECK(check_group_norm(r, 4, 64, 1024, 32, DT_F32, 1024)); /* 2 channels of 32x32 per group */
    CHECK(check_quantize(r, 64, 4096, 4096, DT_F16, 1024));
    CHECK(check_cumsum(r, 16, 5000, 5000, DT_F32, 1024));
    CHECK(check_histogram(r, 100000, 256, 4096));
    CHECK(check_topk_sample(r, 64, 1000, 1024, 64, 1024));
    CHECK(check_activation(r, ACT_GELU, 98432, DT_F32, 1024));
    CHECK(check_activation(r, ACT_GELU_TANH, 98432, DT_F32, 1024));
    CHECK(check_activation(r, ACT_SILU, 98432, DT_F32, 1024));
    CHECK(check_matmul(r, 256, 256, 256, DT_F16, 128, 128, 32, 8, false, 0));
    CHECK(check_matmul_splitk(r, 16, 256, 1000, DT_F16, 16, 64, 64, 4, false, 0));
    CHECK(check_matmul_8bit(r, 100, 70, 200, DT_F8E4M3, DT_F8E4M3, DT_BF16, 64, 64, 64, true, false, 3));
    CHECK(check_matmul_8bit(r, 100, 70, 200, DT_I8, DT_I8, DT_I32, 64, 64, 64, false, false, 5));
    CHECK(check_matmul_fp8_blockwise(r, 100, 200, 300, DT_F8E4M3, DT_F8E4M3, DT_BF16, 64, 64, 3));
    CHECK(check_moe_matmul(r, 50, 6, 2, 96, 80, DT_F16, 16, 32, 32, true, 0));
    CHECK(check_attention(r, 1, 2, 256, 64, false, DT_F16, 128, 64, 1, 0));
    CHECK(check_attention_fp8(r, 1, 2, 256, 64, false, 128, 64));
    CHECK(check_attention_bwd(r, 1, 2, 128, 64, false, DT_F16, 64, 64, false, 1));
    CHECK(check_attention_bwd(r, 1, 2, 128, 64, false, DT_F16, 64, 64, true, 1));
    CHECK(check_attention_varlen(r, 3, (const int[]){100, 37, 200}, 2, 64, false, DT_F16, 64, 64, 1));
    CHECK(check_attention_decode(r, 3, 2, 4, 300, 64, DT_F16, 64, 128, 0));
    CHECK(check_attention_decode(r, 3, 2, 4, 300, 64, DT_F16, 64, 128, 16)); /* paged */
    if (all) {
        CHECK(check_add(r, 1, DT_F32, 1024));
        CHECK(check_add(r, 1000, DT_F32, 256)); /* n not a multiple of the block */
        CHECK(check_add(r, 4097, DT_F16, 512));
        CHECK(check_softmax(r, 1, 1024, 1024, DT_F32, 1024, false)); /* M = 1, N = the block */
        CHECK(check_softmax(r, 33, 1000, 1100, DT_F32, 1024, false)); /* stride > N */
        CHECK(check_softmax(r, 7, 5, 5, DT_F32, 8, false)); /* tiny rows */
        CHECK(check_softmax(r, 64, 300, 320, DT_F16, 512, false));
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 37, 781, 781, DT_F16, 1024)); /* N < block, not 2^k */
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 50, 500, 640, DT_F16, 256)); /* stride > N */
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 1, 3000, 3000, DT_F32, 512)); /* M = 1, f32 */
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 20, 1000, 1024, DT_F32, 128));
        CHECK(check_layer_norm_bwd(r, 37, 781, 800, DT_F32, 1024, 8, false));
        CHECK(check_layer_norm_bwd(r, 1, 100, 100, DT_F16, 128, 4, false));
        CHECK(check_layer_norm_bwd(r, 200, 781, 800, DT_F32, 1024, 16, false));
        CHECK(check_dropout(r, 100003, 0.5f, 123, DT_F32, 1024));
        CHECK(check_dropout(r, 5000, 0.2f, -7, DT_F32, 1024)); /* negative seed */
        CHECK(check_dropout(r, 4099, 0.75f, 42, DT_F16, 512));
        CHECK(check_softmax(r, 3, 5000, 5100, DT_F16, 512, true)); /* stride > N, N not a multiple */
        CHECK(check_softmax(r, 5, 100, 100, DT_F32, 1024, true)); /* N below the block: padding lanes */
        CHECK(check_rms_norm(r, 37, 781, 800, DT_F32, 256));
        CHECK(check_layer_norm_bwd(r, 37, 781, 800, DT_F32, 1024, 8, true));
        CHECK(check_layer_norm_bwd(r, 5, 100, 100, DT_F16, 128, 8, true)); /* more programs than rows */
        CHECK(check_rms_norm(r, 1, 3000, 3000, DT_BF16, 1024));
        CHECK(check_cross_entropy(r, 7, 1000, 1024, DT_F16, 256));
        CHECK(check_group_norm(r, 2, 12, 49, 3, DT_F32, 128)); /* 7x7 maps, 4 channels a group */
        CHECK(check_group_norm(r, 1, 32, 100, 32, DT_BF16, 64)); /* one channel a group */
        CHECK(check_cross_entropy(r, 3, 50, 50, DT_BF16, 1024)); /* N below the block */
        CHECK(check_quantize(r, 5, 1000, 1040, DT_F32, 256)); /* a zero row, stride > N */
        CHECK(check_quantize(r, 3, 77, 77, DT_BF16, 128));
        CHECK(check_cumsum(r, 3, 1, 1, DT_F32, 16));
        CHECK(check_cumsum(r, 7, 3000, 3100, DT_F16, 512)); /* stride > N: the padding is kept */
        CHECK(check_cumsum(r, 2, 100, 100, DT_BF16, 128));
        CHECK(check_histogram(r, 1, 16, 128));      /* one value, one program */
        CHECK(check_histogram(r, 70001, 1024, 1024)); /* a ragged last block, more bins than threads */
        CHECK(check_topk_sample(r, 3, 5, 8, 4, 8));   /* k close to N */
        CHECK(check_topk_sample(r, 24, 4000, 4000, 8, 4096));
        CHECK(check_activation(r, ACT_GELU, 1, DT_F32, 1024));
        CHECK(check_activation(r, ACT_GELU, 5000, DT_F16, 512));
        CHECK(check_activation(r, ACT_GELU_TANH, 4099, DT_BF16, 256));
        CHECK(check_activation(r, ACT_SILU, 3000, DT_F16, 1024));
        CHECK(check_activation(r, ACT_SILU, 777, DT_BF16, 128));
        /* matmul: sizes not multiples of the blocks, K below BLOCK_K, M below
         * the block (1, 7, 16 rows), transposed B, padded rows, both 16-bit
         * types, GROUP_M 1, 4 and 8 (and a last group of fewer tile rows) */
        CHECK(check_matmul(r, 37, 53, 45, DT_F16, 32, 32, 16, 4, false, 0));
        CHECK(check_matmul(r, 37, 53, 45, DT_BF16, 64, 64, 32, 1, true, 3));
        CHECK(check_matmul(r, 129, 67, 250, DT_BF16, 64, 64, 32, 1, true, 5));
        CHECK(check_matmul(r, 129, 67, 250, DT_F16, 128, 128, 32, 8, false, 0));
        CHECK(check_matmul(r, 300, 200, 128, DT_F16, 64, 32, 32, 4, false, 7));
        CHECK(check_matmul(r, 100, 100, 64, DT_F16, 32, 32, 16, 1, true, 3));
        CHECK(check_matmul(r, 1, 77, 96, DT_BF16, 16, 32, 16, 4, false, 2));
        CHECK(check_matmul(r, 7, 50, 64, DT_F16, 32, 16, 16, 1, true, 0));
        CHECK(check_matmul(r, 16, 40, 33, DT_F16, 64, 64, 32, 8, false, 0));
        CHECK(check_matmul(r, 20, 30, 5, DT_BF16, 16, 16, 16, 4, false, 1));
        CHECK(check_matmul(r, 70, 48, 1000, DT_F16, 64, 32, 32, 4, true, 0)); /* long sums */
        /* split-K: one row, ragged N and K, B^T, more splits than K has blocks (idle splits), bf16 */
        CHECK(check_matmul_splitk(r, 1, 77, 500, DT_BF16, 16, 32, 32, 3, false, 2));
        CHECK(check_matmul_splitk(r, 37, 100, 333, DT_F16, 16, 64, 32, 5, true, 3));
        CHECK(check_matmul_splitk(r, 20, 64, 64, DT_F16, 16, 64, 32, 4, false, 0));
        CHECK(check_matmul_splitk(r, 130, 96, 700, DT_BF16, 64, 32, 64, 2, false, 0));
        /* MoE: B [experts, N, K] read as [K, N] tiles (K contiguous), A's rows
         * gathered; ragged N and K, one expert with no tokens, BLOCK_M = BLOCK_K
         * (A and B tiles of one shape, laid out along different dimensions) */
        CHECK(check_moe_matmul(r, 37, 8, 2, 100, 72, DT_BF16, 32, 64, 32, false, 8));
        CHECK(check_moe_matmul(r, 1, 4, 2, 64, 64, DT_F16, 16, 64, 64, true, 0));
        CHECK(check_moe_matmul(r, 200, 8, 2, 256, 256, DT_F16, 64, 128, 64, true, 0));
        CHECK(check_moe_matmul(r, 129, 16, 4, 136, 200, DT_F16, 64, 64, 64, false, 0));
        /* strides TMA can take (sm_90a): partial tiles along M, N and K go to
         * the cp.async fallback, and would read the NaN padding if not; B^T's
         * tiles run along K (columns of the map) */
        CHECK(check_matmul(r, 200, 144, 112, DT_F16, 128, 128, 64, 8, false, 16));
        CHECK(check_matmul(r, 256, 128, 128, DT_F16, 128, 128, 64, 8, false, 32));
        CHECK(check_matmul(r, 96, 160, 80, DT_BF16, 64, 64, 32, 4, true, 0));
        /* a's 32-element rows: its TMA copies land with the 64-byte swizzle, and
         * 64 rows on 8 warps take mma.sync, which reads them with ldmatrix */
        CHECK(check_matmul(r, 200, 1104, 104, DT_F16, 64, 512, 32, 4, false, 8));
        /* 8-bit dots: every operand pair, B either way, sizes off the blocks, M = 1, K below BLOCK_K */
        CHECK(check_matmul_8bit(r, 37, 53, 45, DT_F8E5M2, DT_F8E4M3, DT_F16, 32, 32, 32, false, true, 3));
        CHECK(check_matmul_8bit(r, 129, 67, 250, DT_F8E4M3, DT_F8E5M2, DT_F32, 64, 64, 64, true, false, 0));
        CHECK(check_matmul_8bit(r, 1, 77, 96, DT_F8E5M2, DT_F8E5M2, DT_BF16, 16, 32, 32, false, false, 2));
        CHECK(check_matmul_8bit(r, 300, 200, 128, DT_F8E4M3, DT_F8E4M3, DT_BF16, 128, 128, 128, true, false, 16));
        CHECK(check_matmul_8bit(r, 37, 53, 45, DT_U8, DT_I8, DT_I32, 32, 32, 32, true, false, 3));
        CHECK(check_matmul_8bit(r, 129, 67, 250, DT_I8, DT_U8, DT_I32, 64, 64, 64, false, false, 0));
        CHECK(check_matmul_8bit(r, 1, 77, 96, DT_U8, DT_U8, DT_I32, 16, 32, 32, true, false, 2));
        CHECK(check_matmul_8bit(r, 300, 200, 128, DT_I8, DT_I8, DT_I32, 128, 128, 128, false, false, 16));
        CHECK(check_matmul_fp8_blockwise(r, 1, 130, 129, DT_F8E5M2, DT_F8E4M3, DT_F32, 16, 32, 0));
        CHECK(check_matmul_fp8_blockwise(r, 257, 384, 512, DT_F8E4M3, DT_F8E4M3, DT_F16, 128, 128, 16));
        /* attention: causal and not, N_CTX not a multiple of the blocks (and
         * below them), HEAD_DIM 64 and 128, bf16, blocks in both orders */
        CHECK(check_attention(r, 1, 2, 100, 64, true, DT_F16, 64, 32, 1, 0));
        CHECK(check_attention(r, 2, 1, 257, 64, false, DT_BF16, 64, 32, 1, 0));
        CHECK(check_attention(r, 1, 1, 257, 128, true, DT_F16, 128, 64, 1, 0));
        CHECK(check_attention(r, 1, 1, 130, 128, true, DT_BF16, 32, 64, 1, 0));
        /* fp8: causal with N_CTX ragged (Vt's rows then not 16-byte multiples), both blocks of 128 */
        CHECK(check_attention_fp8(r, 1, 2, 257, 128, true, 128, 128));
        CHECK(check_attention_fp8(r, 2, 1, 100, 64, false, 64, 32));
        CHECK(check_attention_fp8(r, 1, 1, 1024, 128, false, 128, 128));
        CHECK(check_attention(r, 1, 1, 77, 128, false, DT_BF16, 32, 16, 1, 0));
        CHECK(check_attention(r, 2, 3, 300, 64, false, DT_F16, 128, 128, 1, 0));
        CHECK(check_attention(r, 1, 1, 1, 64, true, DT_F16, 16, 16, 1, 0));
        CHECK(check_attention(r, 1, 2, 16, 64, false, DT_BF16, 16, 16, 1, 0));
        /* grouped-query: 2 and 4 query heads a K/V head, and multi-query (all 4) */
        CHECK(check_attention(r, 2, 4, 130, 64, true, DT_F16, 64, 32, 2, 0));
        CHECK(check_attention(r, 1, 4, 100, 128, false, DT_BF16, 64, 64, 4, 0));
        /* HEAD_DIM 96 in blocks of 128 (BLOCK_D), its 32 extra columns zeros */
        CHECK(check_attention(r, 1, 2, 200, 96, true, DT_F16, 64, 32, 1, 0));
        CHECK(check_attention(r, 1, 4, 130, 96, false, DT_BF16, 128, 64, 2, 0));
        /* HEAD_DIM 256: FlashAttention's widest head; q, K and V tiles of 256 columns */
        CHECK(check_attention(r, 1, 2, 200, 256, true, DT_F16, 64, 32, 1, 0));
        CHECK(check_attention(r, 1, 2, 130, 256, false, DT_BF16, 128, 64, 2, 0));
        /* a causal sliding window: shorter than a block, and spanning several */
        CHECK(check_attention(r, 1, 2, 300, 64, true, DT_F16, 64, 32, 1, 50));
        CHECK(check_attention(r, 1, 2, 257, 128, true, DT_BF16, 64, 64, 2, 100));
        /* variable lengths: an empty sequence, one of a single token, lengths across and
         * below the blocks; causal; grouped-query; bf16 and D 128 */
        CHECK(check_attention_varlen(r, 4, (const int[]){130, 0, 1, 64}, 2, 64, true, DT_F16, 64, 32, 1));
        CHECK(check_attention_varlen(r, 3, (const int[]){77, 200, 16}, 4, 64, true, DT_F16, 32, 64, 2));
        CHECK(check_attention_varlen(r, 2, (const int[]){257, 100}, 2, 128, false, DT_BF16, 128, 64, 2));
        /* the backward: causal and not, N_CTX not a multiple of the blocks,
         * blocks of queries and keys of different sizes, D 128, bf16 */
        for (int fused = 0; fused < 2; fused++) {
            CHECK(check_attention_bwd(r, 1, 1, 100, 64, true, DT_F16, 32, 64, fused, 1));
            CHECK(check_attention_bwd(r, 2, 1, 77, 64, false, DT_BF16, 64, 32, fused, 1));
            CHECK(check_attention_bwd(r, 1, 1, 130, 128, true, DT_BF16, 64, 64, fused, 1));
            CHECK(check_attention_bwd(r, 1, 1, 1, 64, true, DT_F16, 16, 16, fused, 1));
            /* grouped-query: 2 query heads a K/V head, and multi-query */
            CHECK(check_attention_bwd(r, 2, 4, 100, 64, true, DT_F16, 32, 64, fused, 2));
            CHECK(check_attention_bwd(r, 1, 4, 77, 128, false, DT_BF16, 64, 64, fused, 4));
            /* HEAD_DIM 96 in blocks of 128 (BLOCK_D), grouped */
            CHECK(check_attention_bwd(r, 1, 2, 100, 96, true, DT_F16, 32, 64, fused, 2));
        }
        /* decode: multi-head (GROUP 1), multi-query-like (GROUP 8), bf16, D 128, one part */
        CHECK(check_attention_decode(r, 2, 3, 1, 200, 64, DT_F16, 32, 64, 0));
        CHECK(check_attention_decode(r, 4, 1, 8, 517, 128, DT_BF16, 64, 256, 0));
        CHECK(check_attention_decode(r, 2, 2, 2, 60, 64, DT_F16, 64, 512, 0));
        /* paged: pages smaller and larger than a block of keys, one token a page, and a
         * sequence longer than its part */
        CHECK(check_attention_decode(r, 2, 3, 1, 200, 64, DT_F16, 32, 64, 8));
        CHECK(check_attention_decode(r, 4, 1, 8, 517, 128, DT_BF16, 64, 256, 128));
        CHECK(check_attention_decode(r, 2, 2, 2, 60, 64, DT_F16, 16, 32, 1));
        CHECK(check_attention_decode(r, 5, 2, 5, 1000, 128, DT_F16, 64, 512, 16));
    }
    if (level >= 2) { /* the GPU's: M = 4096 with N up to 16384 */
        CHECK(check_softmax(r, 4096, 16384, 16384, DT_F32, 16384, false));
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 4096, 15872, 15872, DT_F16, 16384));
        CHECK(check_layer_norm_fwd(r, LN_AFFINE, 4096, 16384, 16384, DT_F16, 1024));
        CHECK(check_layer_norm_bwd(r, 4096, 15872, 15872, DT_F16, 16384, 64, false));
        CHECK(check_layer_norm_bwd(r, 4096, 16384, 16384, DT_F16, 16384, 64, false));
        /* deterministic at 16384 columns: w, dW and dB kept in shared memory through the row loop */
        CHECK(check_layer_norm_bwd(r, 4096, 15872, 15872, DT_F16, 16384, 132, true));
        CHECK(check_layer_norm_bwd(r, 1000, 10000, 10008, DT_F16, 16384, 132, true));
        CHECK(check_layer_norm_bwd(r, 4096, 4096, 4096, DT_F32, 4096, 128, false));
        CHECK(check_matmul(r, 1024, 1024, 1024, DT_F16, 128, 128, 32, 8, false, 0));
        CHECK(check_matmul(r, 1024, 1024, 1024, DT_BF16, 128, 128, 32, 8, true, 0));
        CHECK(check_matmul(r, 2048, 512, 1024, DT_F16, 128, 128, 32, 8, true, 8));
        CHECK(check_matmul(r, 2048, 512, 1024, DT_BF16, 128, 128, 32, 8, false, 0));
        /* ragged (issue 38): rows of multiples of 8 elements, so TMA copies them, the edges by its
         * out-of-bounds fill (the maps' extents M and N, the NaN padding beyond them never read),
         * at the edge sizes 1, 15, 17, 1000 and 4095 (odd strides: no TMA for that operand) */
        CHECK(check_matmul(r, 1000, 1000, 1000, DT_F16, 128, 256, 64, 8, false, 8));
        CHECK(check_matmul_8bit(r, 1024, 1024, 4096, DT_F8E4M3, DT_F8E4M3, DT_BF16, 128, 128, 128, true, false, 0));
        CHECK(check_matmul_8bit(r, 1000, 1000, 1000, DT_F8E4M3, DT_F8E5M2, DT_F16, 128, 128, 128, true, true, 16));
        /* k-blocks of 256 (promoted half as often; fp8_bench's fastest), K ragged at the last one */
        CHECK(check_matmul_8bit(r, 1000, 1000, 4000, DT_F8E4M3, DT_F8E4M3, DT_BF16, 128, 128, 256, true, false, 0));
        CHECK(check_matmul_8bit(r, 1024, 1024, 4096, DT_I8, DT_I8, DT_I32, 128, 128, 128, true, false, 0));
        CHECK(check_matmul_8bit(r, 1000, 1000, 1000, DT_U8, DT_I8, DT_I32, 128, 128, 128, false, false, 16));
        CHECK(check_matmul_fp8_blockwise(r, 1024, 768, 2048, DT_F8E4M3, DT_F8E4M3, DT_BF16, 128, 128, 0));
        CHECK(check_matmul(r, 3000, 1000, 1000, DT_F16, 128, 128, 64, 8, true, 0));
        CHECK(check_matmul(r, 17, 1000, 4000, DT_BF16, 128, 128, 64, 8, false, 0));
        CHECK(check_matmul(r, 1000, 17, 1000, DT_F16, 128, 128, 64, 8, false, 7));
        CHECK(check_matmul(r, 1000, 1000, 15, DT_F16, 128, 128, 64, 8, false, 1));
        CHECK(check_matmul(r, 4095, 1000, 1000, DT_F16, 128, 256, 64, 8, false, 0));
        CHECK(check_matmul(r, 1000, 4095, 1000, DT_BF16, 128, 128, 64, 8, false, 1));
        CHECK(check_matmul(r, 1, 1000, 1000, DT_F16, 128, 128, 64, 8, true, 8));
        for (int causal = 0; causal <= 1; causal++)
            for (int d = 64; d <= 128; d *= 2)
                CHECK(check_attention(r, 2, 4, 1024, d, causal, DT_F16, 128, d == 64 ? 64 : 32, 1, 0));
        CHECK(check_attention(r, 2, 4, 1024, 64, true, DT_BF16, 128, 64, 1, 0));
    }
#undef CHECK
    return n;
}

/* ------------------------------------------------------ interp launch */

char *example_compile(const char *dir, const ExampleKernel *k, Compilation **comp, BirFunction **fn) {
    char path[1024], *msg = NULL;
    *comp = NULL;
    *fn = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, k->file);
    FILE *f = fopen(path, "rb");
    if (!f) {
        if ((msg = malloc(1200))) snprintf(msg, 1200, "cannot open %s", path);
        return msg;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            char *grown = realloc(text, cap = cap ? cap * 2 : 8192);
            if (!grown) break;
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    ConstDef defs[EXAMPLE_MAX_DEFS];
    char def_text[EXAMPLE_MAX_DEFS][64];
    int ndefs = 0;
    for (; ndefs < EXAMPLE_MAX_DEFS && k->defs[ndefs]; ndefs++) {
        snprintf(def_text[ndefs], sizeof def_text[ndefs], "%s", k->defs[ndefs]);
        char *eq = strchr(def_text[ndefs], '=');
        if (eq) *eq = 0;
        defs[ndefs] = (ConstDef){def_text[ndefs], eq ? eq + 1 : "", false};
    }
    /* diagnostics go to stderr: a broken example shows its errors */
    CompileRequest req = {path, text, len, defs, ndefs, diag_print_to_file, stderr};
    *comp = compile_front(&req);
    free(text);
    *fn = *comp && compile_lower(*comp) ? compilation_kernel(*comp, k->kernel) : NULL;
    if (!*fn && (msg = malloc(1200))) snprintf(msg, 1200, "%s: kernel %s did not compile", path, k->kernel);
    return msg;
}

char *example_launch_interp(void *ctx, const ExampleKernel *k, const ExampleArg *args, int nargs,
                            const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs) {
    const InterpLaunchCtx *c = ctx;
    Compilation *comp;
    BirFunction *fn;
    char *msg = example_compile(c->examples_dir, k, &comp, &fn);
    if (!msg) {
        InterpArg *iargs = calloc((size_t)nargs + 1, sizeof *iargs);
        InterpBuffer *ibufs = calloc((size_t)nbufs + 1, sizeof *ibufs);
        if (!iargs || !ibufs) msg = strdup("out of host memory");
        _Static_assert(sizeof(InterpArg) == sizeof(ExampleArg), "the two unions are one size (checks.h: the same members)");
        if (!msg && nargs) memcpy(iargs, args, (size_t)nargs * sizeof *iargs); /* whichever member each holds */
        for (int i = 0; !msg && i < nbufs; i++) ibufs[i] = (InterpBuffer){bufs[i].base, bufs[i].bytes, bufs[i].name};
        if (!msg) msg = interp_launch(fn, iargs, nargs, grid, ibufs, nbufs, &c->options);
        free(iargs);
        free(ibufs);
    }
    compilation_free(comp);
    return msg;
}
