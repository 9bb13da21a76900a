/* test_interp.c: the interpreter's semantics, op by op, against expectations
 * computed here in C (with _Float16 as the independent f16 reference), and
 * its errors: out-of-bounds accesses, spins that cannot end, bad launches.
 * A test's kernels are tests/interp/TEST.blk (TEST_2.blk, ... for more). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <criterion/criterion.h>
#include <math.h>

#include "support.h"

typedef struct {
    Captured cap;
    Compilation *c;
    BirFunction *f;
} Prog;

static Prog *build_named(const char *name, const char *src, const char *const *defs) {
    Prog *p = calloc(1, sizeof *p);
    p->c = compile_to_bir(name, src, defs, &p->cap);
    cr_assert(p->c && p->c->ok, "%s: compile failed:\n%s", name, p->cap.text);
    p->f = p->c->bir->kernels[0];
    return p;
}

/* A kernel made in the test (its sizes or types vary), named t.blk. */
static Prog *build(const char *src, const char *const *defs) { return build_named("t.blk", src, defs); }

/* tests/interp/NAME: a test's kernels as written (errors name the file). */
static Prog *build_file(const char *name, const char *const *defs) {
    char *src = test_file(BLK_INTERP_DIR, name);
    Prog *p = build_named(name, src, defs);
    free(src);
    return p;
}

static void drop(Prog *p) {
    compilation_free(p->c);
    free(p);
}

/* Runs with one buffer per pointer argument (sizes in bytes, in order). */
static char *run(Prog *p, InterpArg *args, uint32_t programs, InterpBuffer *bufs, int nbufs) {
    uint32_t grid[3] = {programs, 1, 1};
    return interp_launch(p->f, args, p->f->nparams, grid, bufs, nbufs, NULL);
}

#define BUF(ptr, count) {(ptr), sizeof((ptr)[0]) * (count), NULL}

Test(interp, integer_division_remainder_and_shifts_follow_c_and_ptx) {
    Prog *p = build_file("integer_division_remainder_and_shifts_follow_c_and_ptx.blk", NULL);
    int32_t a[8] = {-7, 7, -7, INT32_MIN, 5, -1, 1, -8}, b[8] = {2, -2, 0, -1, 31, 3, 32, 40};
    int32_t q[8], r[8], sl[8], sr[8];
    uint32_t ur[8];
    InterpBuffer bufs[] = {BUF(a, 8), BUF(b, 8), BUF(q, 8), BUF(r, 8), BUF(sl, 8), BUF(sr, 8), BUF(ur, 8)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = q}, {.p = r}, {.p = sl}, {.p = sr}, {.p = ur}};
    char *err = run(p, args, 1, bufs, 7);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 8; k++) {
        int32_t eq, er;
        if (b[k] == 0) eq = -1, er = a[k];           /* documented: x/0 all ones, x%0 = x */
        else if (b[k] == -1) eq = a[k] == INT32_MIN ? INT32_MIN : -a[k], er = 0;
        else eq = a[k] / b[k], er = a[k] % b[k];     /* C truncation */
        cr_expect_eq(q[k], eq, "q[%d] = %d, want %d", k, q[k], eq);
        cr_expect_eq(r[k], er, "r[%d] = %d, want %d", k, r[k], er);
        /* amounts out of range (negative ones read as unsigned) clamp to the width */
        bool big = (uint32_t)b[k] >= 32;
        int32_t esl = big ? 0 : (int32_t)((uint32_t)a[k] << b[k]);
        int32_t esr = big ? (a[k] < 0 ? -1 : 0) : a[k] >> b[k];
        uint32_t eur = big ? 0 : (uint32_t)a[k] >> b[k];
        cr_expect_eq(sl[k], esl, "sl[%d]", k);
        cr_expect_eq(sr[k], esr, "sr[%d]", k);
        cr_expect_eq(ur[k], eur, "ur[%d]", k);
    }
    drop(p);
}

Test(interp, integer_arithmetic_wraps_in_its_type) {
    Prog *p = build_file("integer_arithmetic_wraps_in_its_type.blk", NULL);
    int32_t a[4] = {1, -1, 1000000000, INT32_MIN}, o[4];
    uint32_t u[4] = {0, 4, 5, 0xffffffffu}, ou[4];
    InterpBuffer bufs[] = {BUF(a, 4), BUF(u, 4), BUF(o, 4), BUF(ou, 4)};
    InterpArg args[] = {{.p = a}, {.p = u}, {.p = o}, {.p = ou}};
    char *err = run(p, args, 1, bufs, 4);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 4; k++) {
        cr_expect_eq(o[k], (int32_t)((uint32_t)a[k] * 3u + 2147483647u), "o[%d]", k);
        cr_expect_eq(ou[k], u[k] - 5u, "ou[%d]", k);
    }
    drop(p);
}

Test(interp, f16_arithmetic_rounds_once_like_float16) {
    Prog *p = build_file("f16_arithmetic_rounds_once_like_float16.blk", NULL);
    uint16_t a[1024], b[1024], s[1024], m[1024], d[1024];
    uint64_t st = 1;
    for (int k = 0; k < 1024; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        a[k] = (uint16_t)(st >> 48);
        b[k] = (uint16_t)(st >> 32);
    }
    InterpBuffer bufs[] = {BUF(a, 1024), BUF(b, 1024), BUF(s, 1024), BUF(m, 1024), BUF(d, 1024)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = s}, {.p = m}, {.p = d}};
    char *err = run(p, args, 1, bufs, 5);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 1024; k++) {
        _Float16 x, y;
        memcpy(&x, &a[k], 2);
        memcpy(&y, &b[k], 2);
        _Float16 es = x + y, em = x * y, ed = x / y;
        uint16_t bs, bm, bd;
        memcpy(&bs, &es, 2);
        memcpy(&bm, &em, 2);
        memcpy(&bd, &ed, 2);
        bool nan_s = es != es, nan_m = em != em, nan_d = ed != ed;
        /* NaN payloads may differ; NaN-ness may not */
        cr_expect(nan_s ? (s[k] & 0x7fff) > 0x7c00 : s[k] == bs, "%04x + %04x: %04x, want %04x", a[k], b[k], s[k], bs);
        cr_expect(nan_m ? (m[k] & 0x7fff) > 0x7c00 : m[k] == bm, "%04x * %04x: %04x, want %04x", a[k], b[k], m[k], bm);
        cr_expect(nan_d ? (d[k] & 0x7fff) > 0x7c00 : d[k] == bd, "%04x / %04x: %04x, want %04x", a[k], b[k], d[k], bd);
    }
    drop(p);
}

/* Rounds a double to bfloat16 (8 significant bits) directly, to nearest even. */
static float bf16_of_double(double x) {
    if (x == 0 || !isfinite(x)) return (float)x;
    int e;
    frexp(x, &e);
    double scale = ldexp(1.0, 8 - e);
    return (float)(nearbyint(x * scale) / scale);
}

Test(interp, casts_truncate_saturate_and_round_once) {
    Prog *p = build_file("casts_truncate_saturate_and_round_once.blk", NULL);
    float f[8] = {2.9f, -2.9f, 3e9f, -3e9f, NAN, INFINITY, -0.5f, 65519.0f};
    int64_t big[8] = {16777217, 16777219 + 2, 33554435, -33554437, (1LL << 40) + (1LL << 32) + 1,
                      65519, 65520, 2049};
    int32_t i[8];
    uint32_t u[8];
    uint16_t b[8], h[8];
    InterpBuffer bufs[] = {BUF(f, 8), BUF(i, 8), BUF(u, 8), BUF(big, 8), BUF(b, 8), BUF(h, 8)};
    InterpArg args[] = {{.p = f}, {.p = i}, {.p = u}, {.p = big}, {.p = b}, {.p = h}};
    char *err = run(p, args, 1, bufs, 6);
    cr_assert_null(err, "%s", err);
    int32_t ei[8] = {2, -2, INT32_MAX, INT32_MIN, 0, INT32_MAX, 0, 65519};
    uint32_t eu[8] = {2, 0, 3000000000u, 0, 0, UINT32_MAX, 0, 65519};
    for (int k = 0; k < 8; k++) {
        cr_expect_eq(i[k], ei[k], "(%g as i32) = %d, want %d", f[k], i[k], ei[k]);
        cr_expect_eq(u[k], eu[k], "(%g as u32) = %u, want %u", f[k], u[k], eu[k]);
        float want_b = bf16_of_double((double)big[k]);
        cr_expect_eq(bf16_to_f32(b[k]), want_b, "%lld as bf16 = %g, want %g", (long long)big[k],
                     bf16_to_f32(b[k]), want_b);
        _Float16 want_h = (_Float16)(double)big[k];
        cr_expect_eq(f16_to_f32(h[k]), (float)want_h, "%lld as f16", (long long)big[k]);
    }
    drop(p);
}

/* An f64 sum adds in double, pairwise: 1 + 2^-40 keeps its low bit (in f32 it
 * would round it away). Until 2026-12-08 each add was rounded to f32. */
Test(interp, an_f64_sum_adds_in_double) {
    Prog *p = build_file("an_f64_sum_adds_in_double.blk", NULL);
    double x[4] = {1.0, 0x1p-40, 0.25, -0.25}, o[3];
    InterpBuffer bufs[] = {BUF(x, 4), BUF(o, 3)};
    InterpArg args[] = {{.p = x}, {.p = o}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    double want = (x[0] + x[2]) + (x[1] + x[3]);
    cr_expect_eq(o[0], want, "sum %a, want %a", o[0], want);
    cr_expect_eq(o[1], want - 1.0, "a row's sum %a", o[1]);
    cr_expect_eq(o[2], want - 1.0);
    cr_expect_neq(o[0], 1.0);
    drop(p);
}

Test(interp, sum_is_pairwise_max_propagates_nan_argmax_takes_the_first) {
    Prog *p = build_file("sum_is_pairwise_max_propagates_nan_argmax_takes_the_first.blk", NULL);
    /* sequentially ((1e8 + 1) - 1e8) + 1 = 1 in f32; pairwise (1e8 - 1e8) + (1 + 1) = 2 */
    float x[8] = {1e8f, 1.0f, -1e8f, 1.0f, 3.0f, 7.0f, -1.0f, 7.0f}, o[4];
    int32_t oi[3];
    InterpBuffer bufs[] = {BUF(x, 8), BUF(o, 4), BUF(oi, 3)};
    InterpArg args[] = {{.p = x}, {.p = o}, {.p = oi}};
    char *err = run(p, args, 1, bufs, 3);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(o[0], 2.0f, "pairwise sum %g", o[0]);
    cr_expect_eq(o[1], 1e8f);
    cr_expect_eq(o[2], -1e8f);
    cr_expect_eq(o[3], 7.0f);
    cr_expect_eq(oi[0], 1, "argmax takes the first of equal maxima");
    cr_expect_eq(oi[1], 2);
    cr_expect_eq(oi[2], 3, "sum of an i1 block counts the trues");
    x[5] = NAN;
    err = run(p, args, 1, bufs, 3);
    cr_assert_null(err, "%s", err);
    cr_expect(isnan(o[3]), "max propagates NaN");
    cr_expect_eq(oi[0], 1, "a NaN is the extreme for argmax");
    drop(p);
}

/* i1 blocks reduce as 0/1: max is "any", min is "all" (a fuzzer found max
 * of a comparison accepted by sema and refused by the IR verifier) */
Test(interp, reductions_of_i1_blocks_are_any_all_and_first_index) {
    Prog *p = build_file("reductions_of_i1_blocks_are_any_all_and_first_index.blk", NULL);
    /* column 0 is x == 0: true at 2 and 5; column 1 is x == 1: never */
    float x[8] = {3, 2, 0, 4, 5, 0, 6, 7};
    int32_t o[9];
    InterpBuffer bufs[] = {BUF(x, 8), BUF(o, 9)};
    InterpArg args[] = {{.p = x}, {.p = o}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    int32_t want[9] = {1, 0, 0, 0, 2, 0, 0, 0, 1};
    for (int k = 0; k < 9; k++) cr_expect_eq(o[k], want[k], "o[%d] = %d, want %d", k, o[k], want[k]);
    drop(p);
}

Test(interp, clamp_umulhi_and_the_math_library) {
    Prog *p = build_file("clamp_umulhi_and_the_math_library.blk", NULL);
    float x[8] = {-3.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.75f, 9.0f, NAN}, o[33];
    int32_t a[8] = {1, -1, 7, -7, INT32_MAX, INT32_MIN, 100, 0}, oi[16];
    uint32_t b[8] = {1, 2, 3, 4000000000u, UINT32_MAX, 65536, 0, 123456789}, ou[8];
    InterpBuffer bufs[] = {BUF(x, 8), BUF(o, 33), BUF(a, 8), BUF(b, 8), BUF(oi, 16), BUF(ou, 8)};
    InterpArg args[] = {{.p = x}, {.p = o}, {.p = a}, {.p = b}, {.p = oi}, {.p = ou}};
    char *err = run(p, args, 1, bufs, 6);
    cr_assert_null(err, "%s", err);
    float want_clamp[8] = {-1, -1, -0.25f, 0, 0.5f, 1.75f, 2, NAN};
    for (int k = 0; k < 8; k++) {
        cr_expect(o[k] == want_clamp[k] || (isnan(o[k]) && isnan(want_clamp[k])), "clamp(%g) = %g", x[k], o[k]);
        cr_expect(o[8 + k] == blk_math_f32(BIR_TANH, x[k]) || isnan(x[k]), "tanh(%g) as blk_math_f32 says", x[k]);
        cr_expect(o[16 + k] == blk_math_f32(BIR_ERF, x[k]) || isnan(x[k]), "erf(%g)", x[k]);
        cr_expect(o[24 + k] == floorf(x[k]) || isnan(x[k]), "floor(%g)", x[k]);
        /* the high word of the unsigned 64-bit product of the 32-bit patterns */
        uint32_t hi = (uint32_t)(((uint64_t)(uint32_t)a[k] * (uint32_t)-3) >> 32);
        cr_expect_eq((uint32_t)oi[k], hi, "umulhi(%d, -3) = %d", a[k], oi[k]);
        cr_expect_eq(ou[k], (uint32_t)(((uint64_t)b[k] * 4000000000u) >> 32), "umulhi(%u, 4e9)", b[k]);
        int32_t c = a[k] < -5 ? -5 : a[k] > 5 ? 5 : a[k];
        cr_expect_eq(oi[8 + k], c, "clamp(%d, -5, 5)", a[k]);
    }
    cr_expect(isnan(o[15]) && isnan(o[23]), "NaN through tanh and erf");
    float folded = (float)(blk_math_f32(BIR_SIGMOID, 0.5f) + blk_math_f32(BIR_LOG1P, 0.25f));
    cr_expect_eq(o[32], folded, "constant folding uses the same functions: %a vs %a", o[32], folded);
    drop(p);
}

/* sem= and scope= change how the GPU orders an atomic, not what it computes:
 * the interpreter runs each atomic as it runs the default one. */
Test(interp, atomic_sem_and_scope_compute_the_same) {
    Prog *p = build_file("atomic_sem_and_scope_compute_the_same.blk", NULL);
    float x[8] = {0};
    uint32_t c[2] = {0};
    InterpBuffer bufs[] = {BUF(x, 8), BUF(c, 2)};
    InterpArg args[] = {{.p = x}, {.p = c}};
    char *err = run(p, args, 5, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int o = 0; o < 8; o++) cr_expect_eq(x[o], o < 6 ? (float)(10 + 5 * o) : 0.0f, "x[%d]", o);
    cr_expect_eq(c[0], 5u, "a count from 5 programs");
    cr_expect_eq(c[1], 4u, "the largest program id");
    drop(p);
}

/* atomic_max/min/and/or/xor from several programs, masked, on every type
 * they take; each returns the value it found */
Test(interp, read_modify_write_atomics) {
    Prog *p = build_file("read_modify_write_atomics.blk", NULL);
    int32_t i[12] = {-100, -100, -100, -100, 100, 100, 100, 100, 0, 0, 0, 0}, old[12];
    uint32_t u[8] = {~0u, ~0u, ~0u, ~0u, 0, 0, 0, 0};
    int64_t l[4] = {0};
    float f[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    InterpBuffer bufs[] = {BUF(i, 12), BUF(u, 8), BUF(l, 4), BUF(f, 8), BUF(old, 12)};
    InterpArg args[] = {{.p = i}, {.p = u}, {.p = l}, {.p = f}, {.p = old}};
    char *err = run(p, args, 3, bufs, 5);
    cr_assert_null(err, "%s", err);
    for (int o = 0; o < 4; o++) {
        int32_t mx = INT32_MIN, mn = 100, fmn = 100;
        uint32_t an = ~0u, orr = 0;
        int64_t x = 0;
        for (int pid = 0; pid < 3; pid++) {
            int32_t v = (pid * 4 + o) * 7 % 11 - 5;
            mx = v > mx ? v : mx;
            if (o != 3) mn = v < mn ? v : mn;
            fmn = v < fmn ? v : fmn;
            an &= (uint32_t)(v + 8);
            orr |= 1u << (v + 5);
            x ^= (int64_t)((uint64_t)(int64_t)v << 40); /* blk's << wraps; C's on a negative is undefined */
        }
        cr_expect_eq(i[o], mx, "atomic_max i32[%d]", o);
        cr_expect_eq(i[4 + o], mn, "atomic_min i32[%d], masked", o);
        cr_expect_eq(u[o], an, "atomic_and u32[%d]", o);
        cr_expect_eq(u[4 + o], orr, "atomic_or u32[%d]", o);
        cr_expect_eq(l[o], x, "atomic_xor i64[%d]", o);
        cr_expect_eq(f[o], mx * 0.5f, "atomic_max f32[%d]", o);
        cr_expect_eq(f[4 + o], fmn * 0.5f, "atomic_min f32[%d]", o);
        cr_expect_eq(i[8 + o], 2, "the last program's max");
        for (int pid = 0; pid < 3; pid++) cr_expect_eq(old[pid * 4 + o], pid == 0 ? 0 : pid - 1, "the value found");
    }
    drop(p);
}

/* a helper returning two values (an online-softmax state), taken apart by
 * let (a, b) in a loop, and three constants folded */
/* f16 and bf16 atomic_add: each addition rounds to the type, as the GPU's
 * atom.add.noftz does; sums of halves stay exact here */
Test(interp, half_precision_atomic_add) {
    Prog *p = build_file("half_precision_atomic_add.blk", NULL);
    uint16_t h[5] = {0}, b[4] = {0};
    InterpBuffer bufs[] = {BUF(h, 5), BUF(b, 4)};
    InterpArg args[] = {{.p = h}, {.p = b}};
    char *err = run(p, args, 2, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 4; k++) {
        float want = 0; /* elements k, k + 4, k + 8, k + 12, from 2 programs */
        for (int o = k; o < 16; o += 4) want += 2 * 0.5f * o;
        cr_expect_eq(f16_to_f32(h[k]), want, "h[%d] = %g, want %g", k, f16_to_f32(h[k]), want);
        int kept = 0;
        for (int o = k; o < 10; o += 4) kept++;
        cr_expect_eq(bf16_to_f32(b[k]), 2 * 1.5f * kept, "b[%d]", k);
    }
    cr_expect_eq(f16_to_f32(h[4]), 4096.0f, "each addition rounds in f16: (2048 + 2048) + 1 + 1 = 4096");
    drop(p);
}

/* shape(x, axis) folds to a constant a helper can use; expand_dims and
 * broadcast_to give the same blocks as x[None, :] and broadcasting */
Test(interp, shape_expand_dims_and_broadcast_to) {
    Prog *p = build_file("shape_expand_dims_and_broadcast_to.blk", NULL);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, o[49];
    InterpBuffer bufs[] = {BUF(x, 8), BUF(o, 49)};
    InterpArg args[] = {{.p = x}, {.p = o}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 8; c++) cr_expect_eq(o[r * 8 + c], x[c], "row %d of the broadcast row", r);
    for (int r = 0; r < 8; r++)
        for (int c = 0; c < 2; c++) cr_expect_eq(o[32 + r * 2 + c], x[r], "column %d of the broadcast column", c);
    float w = 0;
    for (int i = 0; i < 8; i++) w += i * x[i];
    cr_expect_eq(o[48], w + 4000, "shape(v, 0) = 8 inside the helper, shape(m, 0) = 4");
    drop(p);
}

Test(interp, helpers_return_several_values) {
    Prog *p = build_file("helpers_return_several_values.blk", NULL);
    float x[10] = {0.5f, -1, 2, 0, 3, 1, -2, 0.25f, 1.5f, -0.5f}, o[8];
    InterpBuffer bufs[] = {BUF(x, 10), BUF(o, 8)};
    InterpArg args[] = {{.p = x}, {.p = o}, {.i = 10}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int lane = 0; lane < 4; lane++) { /* lane j saw x[j], x[j + 4], x[j + 8] (while < 10) */
        double mx = -INFINITY, sum = 0;
        for (int i = lane; i < 10; i += 4) mx = x[i] > mx ? x[i] : mx;
        for (int i = lane; i < 10; i += 4) sum += exp(x[i] - mx);
        cr_expect_eq(o[4 + lane], (float)mx, "lane %d max", lane);
        cr_expect(fabs(o[lane] - sum) <= 1e-6 * sum, "lane %d sum %g, want %g", lane, o[lane], sum);
    }
    drop(p);
}

Test(interp, two_d_blocks_broadcast_and_reduce_over_either_axis) {
    Prog *p = build_file("two_d_blocks_broadcast_and_reduce_over_either_axis.blk", NULL);
    int32_t a[4] = {1, 2, 3, 4}, b[8] = {0, 1, 2, 3, 4, 5, 6, -7}, rows[4], cols[8], full[32];
    InterpBuffer bufs[] = {BUF(a, 4), BUF(b, 8), BUF(rows, 4), BUF(cols, 8), BUF(full, 32)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = rows}, {.p = cols}, {.p = full}};
    char *err = run(p, args, 1, bufs, 5);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 4; i++) {
        int32_t s = 0;
        for (int j = 0; j < 8; j++) {
            cr_expect_eq(full[i * 8 + j], a[i] * 100 + b[j], "m[%d, %d]", i, j);
            s += a[i] * 100 + b[j];
        }
        cr_expect_eq(rows[i], s, "row %d", i);
    }
    for (int j = 0; j < 8; j++) cr_expect_eq(cols[j], 400 + b[j], "col %d", j);
    drop(p);
}

Test(interp, rand_in_a_kernel_matches_numeric_for_32_and_64_bit_offsets) {
    Prog *p = build_file("rand_in_a_kernel_matches_numeric_for_32_and_64_bit_offsets.blk", NULL);
    float o[256];
    uint32_t oi[256];
    InterpBuffer bufs[] = {BUF(o, 256), BUF(oi, 256)};
    InterpArg args[] = {{.p = o}, {.p = oi}, {.i = -123}, {.i = (1LL << 40) + 5}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 256; k++) {
        cr_expect_eq(o[k], philox_rand(-123, (uint64_t)k), "rand %d", k);
        cr_expect_eq(oi[k], philox_randint(-123, (1ULL << 40) + 5 + (uint64_t)k), "randint %d", k);
    }
    drop(p);
}

/* randint4x / rand4x: the four words of each draw; randn / randn4x: Box-Muller
 * of words (0, 1) and (2, 3), against the same in f64 (the interpreter's f32
 * log, sqrt, cos and sin round; near a zero crossing the error is absolute). */
Test(interp, the_four_words_of_a_philox_draw_and_normals_from_them) {
    Prog *p = build_file("the_four_words_of_a_philox_draw_and_normals_from_them.blk", NULL);
    static uint32_t w[512];
    static float u[512], n[128], n4[512];
    InterpBuffer bufs[] = {BUF(w, 512), BUF(u, 512), BUF(n, 128), BUF(n4, 512)};
    InterpArg args[] = {{.p = w}, {.p = u}, {.p = n}, {.p = n4}, {.i = 77}};
    char *err = run(p, args, 1, bufs, 4);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 128; k++) {
        uint32_t want[4];
        philox_randint4x(77, (uint64_t)k, want);
        double normal[4];
        for (int pair = 0; pair < 2; pair++) {
            double u1 = fmax(1e-7, philox_uniform(want[2 * pair])), th = 6.283185307179586 * philox_uniform(want[2 * pair + 1]);
            double r = sqrt(-2.0 * log(u1));
            normal[2 * pair] = r * cos(th), normal[2 * pair + 1] = r * sin(th);
        }
        for (int i = 0; i < 4; i++) {
            cr_expect_eq(w[128 * i + k], want[i], "randint4x word %d at %d", i, k);
            cr_expect_eq(u[128 * i + k], philox_uniform(want[i]), "rand4x word %d at %d", i, k);
            cr_expect(fabs(n4[128 * i + k] - normal[i]) <= 2e-6 * (1 + fabs(normal[i])), "randn4x %d at %d: %.9g, f64 %.9g",
                      i, k, n4[128 * i + k], normal[i]);
        }
        cr_expect_eq(n[k], n4[k], "randn is randn4x's first at %d", k);
    }
    drop(p);
}

/* cat: a then b along axis 0; interleave: a and b alternating along the last
 * axis; rank 1 and 2, an i32 operand promoted to f32. */
Test(interp, cat_and_interleave_keep_their_order) {
    Prog *p = build_file("cat_and_interleave_keep_their_order.blk", NULL);
    float x[8], o1[16], o2[16], o3[16], o4[16];
    int32_t y[8];
    for (int i = 0; i < 8; i++) x[i] = (float)i + 0.5f, y[i] = 100 + i;
    InterpBuffer bufs[] = {BUF(x, 8), BUF(y, 8), BUF(o1, 16), BUF(o2, 16), BUF(o3, 16), BUF(o4, 16)};
    InterpArg args[] = {{.p = x}, {.p = y}, {.p = o1}, {.p = o2}, {.p = o3}, {.p = o4}};
    char *err = run(p, args, 1, bufs, 6);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 16; i++) {
        float a = x[i % 8], b = (float)y[i % 8];
        cr_expect_eq(o1[i], i < 8 ? a : b, "cat [%d]", i);
        cr_expect_eq(o2[i], i % 2 ? (float)y[i / 2] : x[i / 2], "interleave [%d]", i);
        /* [4, 2] and [4, 2]: cat gives rows 0-3 of x, then rows 0-3 of y, as [8, 2] */
        cr_expect_eq(o3[i], i < 8 ? a : b, "cat 2-D [%d, %d]", i / 2, i % 2);
        /* interleave along the last axis: row r is x[r, 0], y[r, 0], x[r, 1], y[r, 1] */
        int r = i / 4, c = i % 4;
        cr_expect_eq(o4[i], c % 2 ? (float)y[r * 2 + c / 2] : x[r * 2 + c / 2], "interleave 2-D [%d, %d]", r, c);
    }
    drop(p);
}

/* Triton's reduction arguments: keep_dims (the axis stays, of size 1), dtype (x
 * converted first: an i32 sum in i64 does not wrap), cumsum's reverse. */
Test(interp, reductions_keep_dims_take_a_dtype_and_scans_run_in_reverse) {
    Prog *p = build_file("reductions_keep_dims_take_a_dtype_and_scans_run_in_reverse.blk", NULL);
    float x[32], o[73];
    int32_t n[32], am[4];
    int64_t oi[4];
    for (int i = 0; i < 32; i++) x[i] = (float)((i * 7) % 11) - 3.0f, n[i] = 2000000000 - i;
    InterpBuffer bufs[] = {BUF(x, 32), BUF(n, 32), BUF(o, 73), BUF(oi, 4), BUF(am, 4)};
    InterpArg args[] = {{.p = x}, {.p = n}, {.p = o}, {.p = oi}, {.p = am}};
    char *err = run(p, args, 1, bufs, 5);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 4; i++) {
        float m = -INFINITY;
        int at = 0;
        int64_t s = 0;
        for (int j = 0; j < 8; j++) {
            if (x[i * 8 + j] > m) m = x[i * 8 + j], at = j;
            s += n[i * 8 + j];
        }
        for (int j = 0; j < 8; j++) {
            cr_expect_eq(o[i * 8 + j], x[i * 8 + j] - m, "x - max [%d, %d]", i, j);
            float tail = 0; /* integers: exact in any order */
            for (int k = j; k < 8; k++) tail += x[i * 8 + k];
            cr_expect_eq(o[40 + i * 8 + j], tail, "reverse cumsum [%d, %d]", i, j);
        }
        cr_expect_eq(oi[i], s, "i64 sum of row %d: %lld", i, (long long)oi[i]);
        cr_expect_eq(am[i], at, "argmax of row %d", i);
    }
    for (int j = 0; j < 8; j++) {
        float c = 0;
        for (int i = 0; i < 4; i++) c += x[i * 8 + j];
        cr_expect_eq(o[32 + j], c, "column sum %d", j);
    }
    float first = 0;
    for (int j = 0; j < 8; j++) first += x[j];
    cr_expect_eq(o[72], first, "sum of [8] kept as [1]");
    drop(p);
}

/* static_range: the loop variable is a constant in each copy of the body (an axis, a
 * compile-time `if`), a var assigned in it is carried through an enclosing runtime loop;
 * `unroll = N` changes no result, whatever the trip count's remainder. */
Test(interp, static_range_copies_the_body_with_a_constant_and_unroll_keeps_results) {
    Prog *p = build_file("static_range_copies_the_body_with_a_constant_and_unroll_keeps_results.blk", NULL);
    float x[64], o[18];
    for (int i = 0; i < 64; i++) x[i] = (float)(i % 7) + (float)i / 64.0f;
    InterpBuffer bufs[] = {BUF(x, 64), BUF(o, 18)};
    for (int n = 0; n < 7; n++) {
        memset(o, 0, sizeof o);
        InterpArg args[] = {{.p = x}, {.p = o}, {.i = n}};
        char *err = run(p, args, 1, bufs, 2);
        cr_assert_null(err, "%s", err);
        for (int i = 0; i < 8; i++) {
            float col = 0, row = 0; /* axis 0 sums a column, axis 1 a row (pairwise, exact here) */
            for (int k = 0; k < 8; k++) col += x[k * 8 + i], row += x[i * 8 + k];
            cr_expect_float_eq(o[i], col, 1e-5f, "axis 0 [%d]", i);
            cr_expect_float_eq(o[8 + i], row, 1e-5f, "axis 1 [%d]", i);
        }
        /* s = 3, 1, -1: 100 + 1 - 1 per trip */
        cr_expect_eq(o[16], 100.0f * (float)n, "n = %d", n);
        int u = n; /* the descending loop adds one per trip */
        for (int t = 0; t < n; t++) u += t * t;
        cr_expect_eq(o[17], (float)u, "n = %d", n);
    }
    drop(p);
}

/* device_assert names the first failing element (masked-off ones pass) and its message;
 * a false assume is an error here (undefined behaviour on the GPU); true ones change nothing. */
Test(interp, device_assert_and_assume_are_checked) {
    Prog *p = build_file("device_assert_and_assume_are_checked.blk", NULL);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 100};
    InterpBuffer bufs[] = {BUF(x, 8)};
    /* n = 4: the element beyond n would fail, but it is masked off */
    InterpArg ok[] = {{.p = x}, {.i = 4}, {.f = 10}};
    char *err = run(p, ok, 1, bufs, 1);
    cr_assert_null(err, "%s", err);
    cr_expect(x[0] == 2 && x[3] == 8 && x[4] == 5, "the kernel ran on");
    InterpArg bad[] = {{.p = x}, {.i = 8}, {.f = 10}};
    err = run(p, bad, 1, bufs, 1);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "device assertion failed at element [7]: \"v below the limit\""), "%s", err);
    cr_expect(strstr(err, "device_assert_and_assume_are_checked.blk:5"), "%s", err);
    free(err);
    InterpArg unaligned[] = {{.p = x}, {.i = 6}, {.f = 1000}};
    err = run(p, unaligned, 1, bufs, 1);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "the condition of 'assume' is false"), "%s", err);
    free(err);
    drop(p);
}

/* Cache controls change how the caches keep data, never a value: every form reads and
 * writes what the plain access does. */
Test(interp, cache_controls_change_no_result) {
    Prog *p = build_file("cache_controls_change_no_result.blk", NULL);
    float x[16], y[32] = {0};
    int32_t f = 3;
    for (int i = 0; i < 16; i++) x[i] = (float)i * 0.25f;
    InterpBuffer bufs[] = {BUF(x, 16), BUF(y, 32), BUF(&f, 1)};
    InterpArg args[] = {{.p = x}, {.p = y}, {.p = &f}, {.i = 10}};
    char *err = run(p, args, 1, bufs, 3);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 16; i++) {
        float b = i < 10 ? x[i] : -1.0f;
        cr_expect_eq(y[i], i < 10 ? x[i] + b : 0.0f, "[%d]", i);
        cr_expect_eq(y[16 + i], b * 3.0f, "[%d]", 16 + i);
    }
    drop(p);
}

/* gather against C indexing along either axis (and an out-of-range index is an error
 * naming the element); histogram against C counting, negative and too-large values and
 * masked-off elements not counted. */
Test(interp, gather_and_histogram) {
    Prog *p = build_file("gather_and_histogram.blk", NULL);
    float x[32], o[48];
    int32_t ix[80], h[16];
    for (int i = 0; i < 32; i++) x[i] = (float)i * 1.5f - 7.0f;
    for (int i = 0; i < 32; i++) ix[i] = (i * 5 + 3) % 8;        /* along axis 1: 0 .. 7 */
    for (int i = 32; i < 48; i++) ix[i] = (i * 3) % 4;           /* along axis 0: 0 .. 3 */
    for (int i = 48; i < 80; i++) ix[i] = (i * 7) % 21 - 3;      /* -3 .. 17: some outside 0 .. 15 */
    InterpBuffer bufs[] = {BUF(x, 32), BUF(ix, 80), BUF(o, 48), BUF(h, 16)};
    InterpArg args[] = {{.p = x}, {.p = ix}, {.p = o}, {.p = h}, {.i = 27}};
    char *err = run(p, args, 1, bufs, 4);
    cr_assert_null(err, "%s", err);
    for (int rr = 0; rr < 4; rr++)
        for (int cc = 0; cc < 8; cc++)
            cr_expect_eq(o[rr * 8 + cc], x[rr * 8 + ix[rr * 8 + cc]], "axis 1 [%d, %d]", rr, cc);
    for (int rr = 0; rr < 2; rr++)
        for (int cc = 0; cc < 8; cc++)
            cr_expect_eq(o[32 + rr * 8 + cc], x[ix[32 + rr * 8 + cc] * 8 + cc], "axis 0 [%d, %d]", rr, cc);
    int want[16] = {0};
    for (int i = 0; i < 27; i++)
        if (ix[48 + i] >= 0 && ix[48 + i] < 16) want[ix[48 + i]]++;
    for (int b = 0; b < 16; b++) cr_expect_eq(h[b], want[b], "bin %d", b);
    ix[5] = 8; /* one past axis 1 */
    err = run(p, args, 1, bufs, 4);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "gather: index 8 at element [0, 5] is outside the source's axis 1 of size 8"), "%s", err);
    free(err);
    drop(p);
}

static int descending_nan_first(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    if (isnan(x) || isnan(y)) return isnan(x) ? (isnan(y) ? 0 : -1) : 1;
    return x > y ? -1 : x < y;
}

/* topk against C's qsort of each row and column (descending, NaN first as sort's
 * largest), for k = 1, 4 and the whole axis, along either axis; i32 too. */
Test(interp, topk_gives_the_k_largest_in_descending_order) {
    Prog *p = build_file("topk_gives_the_k_largest_in_descending_order.blk", NULL);
    float x[256], o[360];
    int32_t xi[64], oi[16];
    uint32_t state = 77;
    for (int i = 0; i < 256; i++) { /* many ties */
        state = state * 1664525u + 1013904223u;
        x[i] = (float)((int)(state >> 24) % 17 - 8) * 0.5f;
    }
    x[37] = NAN, x[200] = -INFINITY;
    for (int i = 0; i < 64; i++) {
        state = state * 1664525u + 1013904223u;
        xi[i] = (int32_t)(state >> 8) - (1 << 23);
    }
    InterpBuffer bufs[] = {BUF(x, 256), BUF(xi, 64), BUF(o, 360), BUF(oi, 16)};
    InterpArg args[] = {{.p = x}, {.p = xi}, {.p = o}, {.p = oi}};
    char *err = run(p, args, 1, bufs, 4);
    cr_assert_null(err, "%s", err);
    for (int rr = 0; rr < 8; rr++) {
        float row[32];
        memcpy(row, x + rr * 32, sizeof row);
        qsort(row, 32, sizeof row[0], descending_nan_first);
        for (int i = 0; i < 32; i++) {
            if (i < 4) cr_expect(o[rr * 4 + i] == row[i] || (isnan(row[i]) && isnan(o[rr * 4 + i])), "k=4 [%d, %d]", rr, i);
            cr_expect(o[40 + rr * 32 + i] == row[i] || (isnan(row[i]) && isnan(o[40 + rr * 32 + i])), "k=32 [%d, %d]", rr, i);
        }
        cr_expect(o[32 + rr] == row[0] || (isnan(row[0]) && isnan(o[32 + rr])), "k=1 [%d]", rr);
    }
    for (int cc = 0; cc < 32; cc++) {
        float col[8];
        for (int rr = 0; rr < 8; rr++) col[rr] = x[rr * 32 + cc];
        qsort(col, 8, sizeof col[0], descending_nan_first);
        for (int i = 0; i < 2; i++)
            cr_expect(o[296 + i * 32 + cc] == col[i] || (isnan(col[i]) && isnan(o[296 + i * 32 + cc])), "axis 0 [%d, %d]", i, cc);
    }
    int32_t sorted[64];
    memcpy(sorted, xi, sizeof sorted);
    for (int i = 0; i < 64; i++) /* insertion sort, descending */
        for (int j = i; j > 0 && sorted[j] > sorted[j - 1]; j--) {
            int32_t t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    for (int i = 0; i < 16; i++) cr_expect_eq(oi[i], sorted[i], "i32 [%d]", i);
    drop(p);
}

/* Register slices with constant bounds, against C indexing: rank 1 (open ends too), both
 * axes of a 2-D block at once, a slice then a new axis, and a slice of pointers. */
Test(interp, slices_with_constant_bounds) {
    Prog *p = build_file("slices_with_constant_bounds.blk", NULL);
    float x[32], o[44];
    for (int i = 0; i < 32; i++) x[i] = (float)i * 0.5f + 1.0f;
    for (int i = 0; i < 44; i++) o[i] = -1.0f;
    InterpBuffer bufs[] = {BUF(x, 32), BUF(o, 44)};
    InterpArg args[] = {{.p = x}, {.p = o}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 8; i++) cr_expect_eq(o[i], x[4 + i], "[4:12] %d", i);
    for (int i = 0; i < 16; i++) cr_expect_eq(o[8 + i], x[16 + i], "[16:] %d", i);
    for (int i = 0; i < 4; i++) cr_expect_eq(o[24 + i], x[i], "[:4] %d", i);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) cr_expect_eq(o[28 + r * 2 + c], x[(6 + r) * 4 + 1 + c], "[6:8, 1:3] %d %d", r, c);
    for (int i = 0; i < 4; i++) cr_expect_eq(o[32 + i], x[28 + i], "[28:32, None] %d", i);
    for (int i = 0; i < 8; i++) cr_expect_eq(o[36 + i], i >= 2 && i < 6 ? x[i - 2] : -1.0f, "pointers [2:6] %d", i);
    drop(p);
}

/* A var that takes another type in a compile-time branch (Triton's `x = x.to(tl.float32)`
 * under a constexpr): f32 from there on, carried as f32 through a later loop; the build
 * without the branch keeps f16 (its sums round to f16 at each step). */
Test(interp, a_var_changes_type_in_a_compile_time_branch) {
    static const char src[] = "kernel k(x: *f16, o: *f32, n: i32, const UPCAST: bool = true) {\n"
                              "  let i = arange(0, 8);\n"
                              "  var v = load(x + i);\n"
                              "  if UPCAST { v = v as f32; }\n"
                              "  for t in range(0, n) { v = v + 0.001; }\n"
                              "  store(o + i, v as f32);\n"
                              "}\n";
    for (int upcast = 0; upcast < 2; upcast++) {
        const char *defs[] = {upcast ? "UPCAST=true" : "UPCAST=false", NULL};
        Prog *p = build(src, defs);
        uint16_t x[8];
        float o[8];
        for (int i = 0; i < 8; i++) {
            _Float16 h = (_Float16)(1.0f + (float)i);
            memcpy(&x[i], &h, 2);
        }
        InterpBuffer bufs[] = {BUF(x, 8), BUF(o, 8)};
        InterpArg args[] = {{.p = x}, {.p = o}, {.i = 10}};
        char *err = run(p, args, 1, bufs, 2);
        cr_assert_null(err, "%s", err);
        for (int i = 0; i < 8; i++) {
            float want32 = 1.0f + (float)i;
            _Float16 want16 = (_Float16)(1.0f + (float)i);
            for (int t = 0; t < 10; t++) want32 += 0.001f, want16 = (_Float16)((float)want16 + 0.001f);
            cr_expect_eq(o[i], upcast ? want32 : (float)want16, "UPCAST=%d [%d]: %.9g", upcast, i, o[i]);
        }
        drop(p);
    }
}

/* inline_asm_elementwise on the interpreter runs its reference helper (it cannot run
 * PTX); without one, the run fails saying so. */
Test(interp, inline_asm_runs_its_reference_here) {
    Prog *p = build_file("inline_asm_runs_its_reference_here.blk", NULL);
    int32_t x[16], o[16];
    for (int i = 0; i < 16; i++) x[i] = i - 5;
    InterpBuffer bufs[] = {BUF(x, 16), BUF(o, 16)};
    InterpArg args[] = {{.p = x}, {.p = o}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 16; i++) cr_expect_eq(o[i], x[i] * x[i] + 7, "[%d]", i);
    drop(p);
    p = build_file("inline_asm_runs_its_reference_here_2.blk", NULL);
    err = run(p, args, 1, bufs, 2);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "inline_asm_elementwise has no reference: the interpreter cannot run PTX"), "%s", err);
    free(err);
    drop(p);
}

/* gdc_wait and gdc_launch_dependents: the interpreter runs launches one after the other,
 * so both have nothing to do; the kernel computes as without them. */
Test(interp, grid_dependency_control_changes_nothing_here) {
    Prog *p = build_file("grid_dependency_control_changes_nothing_here.blk", NULL);
    float x[8], y[8];
    for (int i = 0; i < 8; i++) x[i] = (float)i - 2.5f;
    InterpBuffer bufs[] = {BUF(x, 8), BUF(y, 8)};
    InterpArg args[] = {{.p = x}, {.p = y}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 8; i++) cr_expect_eq(y[i], x[i] * 3.0f, "[%d]", i);
    drop(p);
}

/* The hardware counters on the interpreter: one SM (0), and clocks that do not
 * go back between two reads. */
Test(interp, counters_read_on_the_interpreter) {
    Prog *p = build_file("counters_read_on_the_interpreter.blk", NULL);
    uint64_t t[4] = {0};
    uint32_t s[3] = {7, 7, 7};
    InterpBuffer bufs[] = {BUF(t, 4), BUF(s, 3)};
    InterpArg args[] = {{.p = t}, {.p = s}};
    char *err = run(p, args, 3, bufs, 2);
    cr_assert_null(err, "%s", err);
    cr_expect(t[0] > 0 && t[1] >= t[0], "globaltimer: %llu then %llu", (unsigned long long)t[0], (unsigned long long)t[1]);
    cr_expect(t[2] > 0 && t[3] >= t[2], "clock: %llu then %llu", (unsigned long long)t[2], (unsigned long long)t[3]);
    for (int i = 0; i < 3; i++) cr_expect_eq(s[i], 0u, "smid of program %d", i);
    drop(p);
}

Test(interp, loops_branches_early_return_and_short_circuit) {
    Prog *p = build_file("loops_branches_early_return_and_short_circuit.blk", NULL);
    int32_t o[4 * 6];
    for (int k = 0; k < 24; k++) o[k] = 0;
    InterpBuffer bufs[] = {BUF(o, 24)};
    InterpArg args[] = {{.p = o}, {.i = 5}};
    char *err = run(p, args, 6, bufs, 1);
    cr_assert_null(err, "%s", err);
    for (int pid = 0; pid < 6; pid++) {
        cr_expect_eq(o[pid * 4], 10070401, "descending loop, program %d", pid);
        cr_expect_eq(o[pid * 4 + 1], 2187, "while");
        cr_expect_eq(o[pid * 4 + 2], pid % 2 == 0 ? 1 : pid == 3 ? 3 : -1, "if/else if");
        int want = pid >= 5 ? 0 : pid * (pid + 1) / 2 + (pid < 2 ? 1000 : 0);
        cr_expect_eq(o[pid * 4 + 3], want, "program %d: %d, want %d", pid, o[pid * 4 + 3], want);
    }
    drop(p);
}

Test(interp, atomics_return_the_old_value) {
    Prog *p = build_file("atomics_return_the_old_value.blk", NULL);
    int32_t c[2] = {5, 0}, o[16];
    float f[4] = {0, 0, 0, 0};
    InterpBuffer bufs[] = {BUF(c, 2), BUF(f, 4), BUF(o, 16)};
    InterpArg args[] = {{.p = c}, {.p = f}, {.p = o}};
    char *err = run(p, args, 8, bufs, 3);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(c[0], 5 + 16);
    cr_expect_eq(c[1], 8, "each cas succeeds in order");
    for (int k = 0; k < 8; k++) {
        cr_expect_eq(o[k], 5 + 2 * k);
        cr_expect_eq(o[8 + k], k);
    }
    cr_expect_eq(f[0], 4.0f);
    cr_expect_eq(f[3], 0.0f, "masked-off lane untouched");
    drop(p);
}

Test(interp, out_of_bounds_load_names_kernel_line_program_and_element) {
    Prog *p = build_file("out_of_bounds_load_names_kernel_line_program_and_element.blk", NULL);
    float src[100], dst[100];
    InterpBuffer bufs[] = {BUF(src, 100), BUF(dst, 100)};
    InterpArg ok_args[] = {{.p = src}, {.p = dst}, {.i = 100}};
    char *err = run(p, ok_args, 2, bufs, 2);
    cr_expect_null(err, "masked-off lanes make no access: %s", err);
    free(err);
    InterpArg bad_args[] = {{.p = src}, {.p = dst}, {.i = 104}};
    err = run(p, bad_args, 2, bufs, 2);
    cr_assert_not_null(err);
    cr_expect_str_eq(err, "kernel 'copy', out_of_bounds_load_names_kernel_line_program_and_element.blk:"
                          "3: program (1, 0, 0): out-of-bounds load: block "
                          "element [36] accesses src[100], past the end of src (100 elements of f32)\n"
                          "    let v = load(src + offs, offs < n);");
    free(err);
    drop(p);
}

Test(interp, out_of_bounds_store_before_the_start_and_misaligned_access) {
    Prog *p = build_file("out_of_bounds_store_before_the_start_and_misaligned_access.blk", NULL);
    int32_t x[8];
    InterpBuffer bufs[] = {BUF(x, 8)};
    InterpArg args[] = {{.p = x}, {.i = -2}};
    char *err = run(p, args, 1, bufs, 1);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "out-of-bounds store: block element [0] accesses x[-2], before the start of x"), "%s", err);
    free(err);
    BirFunction *m = p->c->bir->kernels[1];
    uint32_t grid[3] = {1, 1, 1};
    InterpArg margs[] = {{.p = x}};
    err = interp_launch(m, margs, 1, grid, bufs, 1, NULL);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "misaligned store"), "%s", err);
    free(err);
    drop(p);
}

/* An i64 offset that moves a pointer outside the address space (the byte
 * offset overflowing 64 bits, or the address leaving [0, 2^48)) must not
 * wrap back into the buffer: x + 2^62 on an f32 pointer is x again modulo
 * 2^64, x + 2^46 modulo 2^48. Each is out of bounds, for loads, stores and
 * atomics, through further arithmetic and casts; masked-off lanes make no
 * access. */
Test(interp, pointer_arithmetic_that_leaves_the_address_space_is_out_of_bounds) {
    Prog *p = build_file("pointer_arithmetic_that_leaves_the_address_space_is_out_of_bounds.blk", NULL);
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t xi[4] = {0};
    InterpBuffer bufs[] = {BUF(x, 4), BUF(y, 4), BUF(xi, 4)};
    uint32_t grid[3] = {1, 1, 1};
    const int64_t offs[] = {INT64_C(1) << 62, INT64_C(1) << 46, -(INT64_C(1) << 60), INT64_MIN, INT64_MAX,
                            (INT64_C(1) << 62) + (INT64_C(1) << 46)};
    for (int t = 0; t < 6; t++) {
        InterpArg args[] = {{.p = x}, {.p = y}, {.i = offs[t]}, {.i = 4}};
        char *err = run(p, args, 1, bufs, 3);
        cr_assert_not_null(err, "offset %lld read x[0] without a fault", (long long)offs[t]);
        cr_expect_str_eq(err, "kernel 'k', pointer_arithmetic_that_leaves_the_address_space_is_out_of_bounds.blk:"
                              "4: program (0, 0, 0): out-of-bounds load: block element [3] "
                              "accesses x at an offset outside the address space (the pointer arithmetic "
                              "overflowed), far outside x (4 elements of f32)\n"
                              "    store(y + i, load(x + o, i < m), i < m);", "offset %lld", (long long)offs[t]);
        free(err);
        InterpArg masked[] = {{.p = x}, {.p = y}, {.i = offs[t]}, {.i = 3}}; /* lane 3 masked off */
        err = run(p, masked, 1, bufs, 3);
        cr_expect_null(err, "%s", err);
        free(err);
        InterpArg sargs[] = {{.p = x}, {.i = offs[t]}};
        err = interp_launch(p->c->bir->kernels[1], sargs, 2, grid, bufs, 3, NULL);
        cr_expect(err && strstr(err, "out-of-bounds store: block element (scalar) accesses x at an offset outside the "
                                     "address space"), "%s", err ? err : "no fault");
        free(err);
        /* through further arithmetic (+1), and a cast, even one that adds the offset back */
        InterpArg aargs[] = {{.p = xi}, {.i = offs[t]}};
        err = interp_launch(p->c->bir->kernels[2], aargs, 2, grid, bufs, 3, NULL);
        cr_expect(err && strstr(err, "out-of-bounds atomic: block element (scalar) accesses x at an offset outside"),
                  "%s", err ? err : "no fault");
        free(err);
        err = interp_launch(p->c->bir->kernels[3], sargs, 2, grid, bufs, 3, NULL);
        cr_expect(err && strstr(err, "outside the address space"), "%s", err ? err : "no fault");
        free(err);
    }
    cr_expect(x[0] == 1 && xi[0] == 0 && xi[1] == 0, "nothing written through a wrapped pointer");
    /* an offset that stays inside the address space keeps the usual message */
    InterpArg near[] = {{.p = x}, {.p = y}, {.i = 1000}, {.i = 4}};
    char *err = run(p, near, 1, bufs, 3);
    cr_expect(err && strstr(err, "accesses x[1000], past the end of x"), "%s", err ? err : "no fault");
    free(err);
    drop(p);
}

Test(interp, a_spin_that_cannot_end_is_reported_not_hung) {
    Prog *p = build_file("a_spin_that_cannot_end_is_reported_not_hung.blk", NULL);
    int32_t lock = 0; /* program 0 takes the lock and never releases it */
    InterpBuffer bufs[] = {BUF(&lock, 1)};
    InterpArg args[] = {{.p = &lock}};
    char *err = run(p, args, 2, bufs, 1);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "kernel 'k', a_spin_that_cannot_end_is_reported_not_hung.blk:"
                          "2: program (1, 0, 0): this while loop can never end"), "%s", err);
    free(err);
    drop(p);
}

Test(interp, loops_past_the_iteration_budget_are_reported) {
    /* this spin writes memory each time (an exchange), so only the budget can stop it */
    Prog *p = build_file("loops_past_the_iteration_budget_are_reported.blk", NULL);
    int32_t mem[2] = {0, 0};
    InterpBuffer bufs[] = {BUF(mem, 2)};
    InterpArg args[] = {{.p = mem}, {.i = 1000}};
    uint32_t one[3] = {1, 1, 1}, two[3] = {2, 1, 1};
    InterpOptions opt = {.max_loop_iterations = 1000};
    char *err = interp_launch(p->f, args, 2, one, bufs, 1, &opt);
    cr_expect_null(err, "1000 iterations are within a budget of 1000: %s", err);
    cr_expect_eq(mem[1], 1000);
    free(err);
    args[1].i = 1001, mem[0] = 0;
    err = interp_launch(p->f, args, 2, one, bufs, 1, &opt);
    cr_expect(err && strstr(err, "kernel 'k', loops_past_the_iteration_budget_are_reported.blk:"
                                 "4: program (0, 0, 0): this for loop ran 1000 iterations without ending"),
              "%s", err);
    free(err);
    args[1].i = 1, mem[0] = 0;
    err = interp_launch(p->f, args, 2, two, bufs, 1, &opt); /* program 1 spins on program 0's lock */
    cr_expect(err && strstr(err, "kernel 'k', loops_past_the_iteration_budget_are_reported.blk:"
                                 "2: program (1, 0, 0): this while loop ran 1000 iterations"),
              "%s", err);
    free(err);
    drop(p);
}

Test(interp, the_step_budget_bounds_nested_loops_the_loop_budget_cannot) {
    /* each loop stays within its own budget; only the launch's total stops them */
    Prog *p = build_file("the_step_budget_bounds_nested_loops_the_loop_budget_cannot.blk", NULL);
    int32_t out = 0;
    InterpBuffer bufs[] = {BUF(&out, 1)};
    InterpArg args[] = {{.p = &out}, {.i = 100}};
    uint32_t one[3] = {1, 1, 1};
    InterpOptions opt = {.max_loop_iterations = 1000, .max_steps = 1000000};
    char *err = interp_launch(p->f, args, 2, one, bufs, 1, &opt);
    cr_expect_null(err, "10^4 iterations fit a million steps: %s", err);
    cr_expect_eq(out, 10000);
    free(err);
    args[1].i = 1000, out = -1;
    err = interp_launch(p->f, args, 2, one, bufs, 1, &opt);
    cr_expect(err && strstr(err, "kernel 'k', the_step_budget_bounds_nested_loops_the_loop_budget_cannot.blk:"
                                 "4: program (0, 0, 0): the launch ran past its budget of 1000000 "
                                 "element operations"),
              "%s", err);
    cr_expect_eq(out, -1, "nothing stored");
    free(err);
    /* a block op counts its elements, a dot its inner products */
    drop(p);
    p = build_file("the_step_budget_bounds_nested_loops_the_loop_budget_cannot_2.blk", NULL);
    float row[32];
    InterpBuffer rb[] = {BUF(row, 32)};
    InterpArg ra[] = {{.p = row}};
    opt.max_steps = 32 * 32 * 32;
    err = interp_launch(p->f, ra, 1, one, rb, 1, &opt);
    cr_expect(err && strstr(err, "the_step_budget_bounds_nested_loops_the_loop_budget_cannot_2.blk:"
                                 "3: program (0, 0, 0): the launch ran past its budget of 32768"), "%s", err);
    free(err);
    opt.max_steps = 32 * 32 * 32 + 4096;
    err = interp_launch(p->f, ra, 1, one, rb, 1, &opt);
    cr_expect_null(err, "%s", err);
    cr_expect_eq(row[0], 1024.0f);
    free(err);
    drop(p);
}

Test(interp, shuffled_order_is_a_seeded_permutation) {
    Prog *p = build_file("shuffled_order_is_a_seeded_permutation.blk", NULL);
    enum { N = 64 };
    int32_t order[N], first[N], counter;
    InterpBuffer bufs[] = {BUF(&counter, 1), BUF(order, N)};
    InterpArg args[] = {{.p = &counter}, {.p = order}};
    uint32_t grid[3] = {N, 1, 1};
    counter = 0;
    char *err = interp_launch(p->f, args, 2, grid, bufs, 2, NULL);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < N; k++) cr_expect_eq(order[k], k, "sequential by default");
    InterpOptions opt = {.shuffle = true, .shuffle_seed = 42};
    for (int rep = 0; rep < 2; rep++) {
        counter = 0;
        err = interp_launch(p->f, args, 2, grid, bufs, 2, &opt);
        cr_assert_null(err, "%s", err);
        if (rep == 0) memcpy(first, order, sizeof order);
        else cr_expect_arr_eq(order, first, sizeof order, "the same seed gives the same order");
    }
    bool seen[N] = {0}, identity = true;
    for (int k = 0; k < N; k++) {
        cr_assert(first[k] >= 0 && first[k] < N && !seen[first[k]], "a permutation");
        seen[first[k]] = true;
        identity &= first[k] == k;
    }
    cr_expect_not(identity, "shuffled");
    drop(p);
}

Test(interp, device_print_shows_the_program_and_element) {
    Prog *p = build_file("device_print_shows_the_program_and_element.blk", NULL);
    int32_t x[2] = {3, -4};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    InterpBuffer bufs[] = {BUF(x, 2)};
    InterpArg args[] = {{.p = x}};
    uint32_t grid[3] = {2, 1, 1};
    InterpOptions opt = {.print_out = out};
    char *err = interp_launch(p->f, args, 1, grid, bufs, 1, &opt);
    fclose(out);
    cr_assert_null(err, "%s", err);
    cr_expect_str_eq(text, "pid (0, 0, 0) idx [0] v 6\npid (0, 0, 0) idx [1] v -8\npid (0, 0, 0) pid 0\n"
                           "pid (1, 0, 0) idx [0] v 6\npid (1, 0, 0) idx [1] v -8\npid (1, 0, 0) pid 1\n");
    free(text);
    drop(p);
}

Test(interp, bad_launches_are_errors) {
    Prog *p = build_file("bad_launches_are_errors.blk", NULL);
    int32_t x;
    InterpBuffer bufs[] = {BUF(&x, 1)};
    InterpArg args[] = {{.p = &x}, {.i = 1}};
    uint32_t grid[3] = {1, 1, 1}, empty[3] = {4, 0, 1};
    char *err = interp_launch(p->f, args, 1, grid, bufs, 1, NULL);
    cr_expect_str_eq(err, "kernel 'k': takes 2 runtime arguments, got 1");
    free(err);
    err = interp_launch(p->f, args, 2, empty, bufs, 1, NULL);
    cr_expect_str_eq(err, "kernel 'k': the grid (4, 0, 1) is empty");
    free(err);
    uint32_t huge[3] = {1u << 31, 1u << 31, 1u << 31}; /* 2^93 programs: must not wrap to 0 */
    err = interp_launch(p->f, args, 2, huge, bufs, 1, NULL);
    cr_expect_str_eq(err, "kernel 'k': the grid (2147483648, 2147483648, 2147483648) has 2^64 programs or more");
    free(err);
    err = interp_launch(p->f, args, 2, grid, NULL, 0, NULL);
    cr_expect(err && strstr(err, "which is in no buffer passed to the kernel"), "%s", err);
    free(err);
    drop(p);
}

/* Regression (issue 9): constant folding used to wrap float -> integer
 * conversions (3e9 as i32 gave -1294967296) where the run time saturates.
 * A folded conversion or math call must equal the same one computed at run
 * time, and both the documented saturating values (docs/language.md §5). */
Test(interp, folded_conversions_and_math_equal_run_time_ones) {
    Prog *p = build_file("folded_conversions_and_math_equal_run_time_ones.blk", NULL);
    int32_t oi[6];
    uint32_t ou[4];
    int64_t ol[2];
    float of[8];
    InterpBuffer bufs[] = {BUF(oi, 6), BUF(ou, 4), BUF(ol, 2), BUF(of, 8)};
    InterpArg args[] = {{.f = 3e9}, {.f = -3e9}, {.f = -1.0}, {.f = NAN}, {.f = 2.0}, {.f = 1.0},
                        {.p = oi}, {.p = ou}, {.p = ol}, {.p = of}};
    char *err = run(p, args, 1, bufs, 4);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(oi[0], INT32_MAX, "3e9 as i32 folded to %d", oi[0]);
    cr_expect_eq(oi[2], INT32_MIN, "-3e9 as i32 folded to %d", oi[2]);
    cr_expect_eq(oi[4], 0, "nan as i32 folded to %d", oi[4]);
    cr_expect_eq(ou[0], 0u, "-1.0 as u32 folded to %u", ou[0]);
    cr_expect_eq(ou[2], UINT32_MAX, "3e10 as u32 folded to %u", ou[2]);
    cr_expect_eq(ol[0], INT64_MAX, "1e20 as i64 folded to %lld", (long long)ol[0]);
    for (int k = 0; k < 6; k += 2) cr_expect_eq(oi[k], oi[k + 1], "i32 %d: folded %d, run time %d", k, oi[k], oi[k + 1]);
    for (int k = 0; k < 4; k += 2) cr_expect_eq(ou[k], ou[k + 1], "u32 %d: folded %u, run time %u", k, ou[k], ou[k + 1]);
    cr_expect_eq(ol[0], ol[1], "i64: folded %lld, run time %lld", (long long)ol[0], (long long)ol[1]);
    for (int k = 0; k < 8; k += 2)
        cr_expect(memcmp(&of[k], &of[k + 1], 4) == 0, "math %d: folded %a, run time %a", k, of[k], of[k + 1]);
    drop(p);
}

/* dot against a double-precision reference: f16 and bf16 operands (exact
 * products, f32 sums), f32 with IEEE precision (one fma per term), with and
 * without an accumulator; trans. Tolerance: f32 accumulation of K terms in
 * order errs by at most K * 2^-24 * sum |a*b| (each add rounds once), plus
 * the accumulator's own term. */
static void dot_case(const char *T, int M, int N, int K, bool with_acc) {
    char src[1024];
    snprintf(src, sizeof src,
             "kernel k(a: *%s, b: *%s, c: *f32, o: *f32, t: *%s) {\n"
             "  let m = arange(0, %d); let n = arange(0, %d); let kk = arange(0, %d);\n"
             "  let x = load(a + m[:, None] * %d + kk[None, :]);\n"
             "  let y = load(b + kk[:, None] * %d + n[None, :]);\n"
             "  let acc = load(c + m[:, None] * %d + n[None, :]);\n"
             "  store(o + m[:, None] * %d + n[None, :], %s);\n"
             "  store(t + kk[:, None] * %d + m[None, :], trans(x));\n"
             "}\n",
             T, T, T, M, N, K, K, N, N, N, with_acc ? "dot(x, y, acc)" : "dot(x, y)", M);
    Prog *p = build(src, NULL);
    DType d = strcmp(T, "f16") == 0 ? DT_F16 : strcmp(T, "bf16") == 0 ? DT_BF16 : DT_F32;
    int es = d == DT_F32 ? 4 : 2;
    unsigned char *a = malloc((size_t)M * K * 4), *b = malloc((size_t)K * N * 4), *t = malloc((size_t)M * K * 4);
    float *af = malloc(sizeof(float) * M * K), *bf = malloc(sizeof(float) * K * N), *c = malloc(sizeof(float) * M * N),
          *o = malloc(sizeof(float) * M * N);
    uint32_t seed = 12345;
    for (int i = 0; i < M * K + K * N; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = ((int32_t)(seed >> 8) % 20000) / 10000.0f - 1.0f;
        bool in_a = i < M * K;
        int j = in_a ? i : i - M * K;
        unsigned char *dst = in_a ? a : b;
        float *f = in_a ? af : bf;
        if (d == DT_F16) { uint16_t h = f32_to_f16(v); memcpy(dst + 2 * j, &h, 2); f[j] = f16_to_f32(h); }
        else if (d == DT_BF16) { uint16_t h = f32_to_bf16(v); memcpy(dst + 2 * j, &h, 2); f[j] = bf16_to_f32(h); }
        else { memcpy(dst + 4 * j, &v, 4); f[j] = v; }
    }
    for (int i = 0; i < M * N; i++) c[i] = with_acc ? (float)(i % 7) - 3.0f : 0.0f;
    InterpBuffer bufs[] = {{a, (size_t)M * K * es, "a"}, {b, (size_t)K * N * es, "b"}, BUF(c, M * N), BUF(o, M * N),
                           {t, (size_t)M * K * es, "t"}};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = c}, {.p = o}, {.p = t}};
    char *err = run(p, args, 1, bufs, 5);
    cr_assert_null(err, "%s", err);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double want = c[m * N + n], mag = fabs(want);
            for (int k = 0; k < K; k++) want += (double)af[m * K + k] * bf[k * N + n], mag += fabs((double)af[m * K + k] * bf[k * N + n]);
            double tol = (K + 1) * ldexp(1.0, -24) * mag;
            cr_expect(fabs(o[m * N + n] - want) <= tol, "%s %dx%dx%d [%d,%d]: %.9g, want %.9g (tol %.3g)", T, M, N,
                      K, m, n, o[m * N + n], want, tol);
        }
    for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++)
            cr_expect(memcmp(t + ((size_t)k * M + m) * es, a + ((size_t)m * K + k) * es, (size_t)es) == 0,
                      "trans [%d,%d]", k, m);
    free(a), free(b), free(t), free(af), free(bf), free(c), free(o);
    drop(p);
}

Test(interp, dot_and_trans_against_double) {
    dot_case("f16", 16, 32, 64, true);
    dot_case("bf16", 32, 16, 16, false);
    dot_case("f32", 16, 16, 128, true);
}

/* Small integers make every product and sum exact: all precisions agree
 * with the exact result. Values with low mantissa bits show what tf32
 * rounding drops, and that tf32x3 gets it back. */
Test(interp, dot_precisions) {
    Prog *p = build_file("dot_precisions.blk", NULL);
    float a[256], b[256], o[768];
    for (int i = 0; i < 256; i++) a[i] = 1.0f + ldexpf(1.0f, -20) * (float)(i % 3), b[i] = (i / 16 == i % 16) ? 1.0f : 0.0f;
    InterpBuffer bufs[] = {BUF(a, 256), BUF(b, 256), BUF(o, 768)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = o}};
    char *err = run(p, args, 1, bufs, 3);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 256; i++) {
        /* b is the identity: ieee and tf32x3 give a exactly; tf32 rounds a to 10 bits */
        cr_expect_eq(o[i], a[i], "ieee [%d]: %a vs %a", i, o[i], a[i]);
        cr_expect_eq(o[256 + i], 1.0f, "tf32 [%d]: %a", i, o[256 + i]);
        cr_expect_eq(o[512 + i], a[i], "tf32x3 [%d]: %a vs %a", i, o[512 + i], a[i]);
    }
    cr_expect_eq(f32_to_tf32(1.0f + ldexpf(1.0f, -11)), 1.0f + ldexpf(1.0f, -10), "ties away from zero");
    cr_expect_eq(f32_to_tf32(-(1.0f + ldexpf(1.0f, -11))), -(1.0f + ldexpf(1.0f, -10)));
    cr_expect_eq(f32_to_tf32(1.0f + ldexpf(1.0f, -12)), 1.0f);
    drop(p);
}

/* 8-bit dots (language.md §7): fp8's k-block is summed from zero and then
 * added to the accumulator, so 32 ones added to 2^24 all count (one at a
 * time into 2^24 each would round away); integer sums wrap modulo 2^32. */
Test(interp, dot_8bit_promotion_and_wrap) {
    Prog *p = build_file("dot_8bit_promotion_and_wrap.blk", NULL);
    uint8_t a[512], u[512];
    int8_t x[512];
    float acc[256], o[256];
    int32_t iacc[256], io[256];
    uint8_t one = f32_to_fp8(1.0f, fp8_format(DT_F8E4M3));
    for (int i = 0; i < 512; i++) a[i] = one, x[i] = -128, u[i] = 255;
    for (int i = 0; i < 256; i++) acc[i] = 16777216.0f, iacc[i] = i % 2 ? INT32_MIN + 100 : 0;
    InterpBuffer bufs[] = {{a, sizeof a, "a"}, {x, sizeof x, "x"}, {u, sizeof u, "u"}, BUF(acc, 256), BUF(iacc, 256),
                           BUF(o, 256), BUF(io, 256)};
    InterpArg args[] = {{.p = a}, {.p = x}, {.p = u}, {.p = acc}, {.p = iacc}, {.p = o}, {.p = io}};
    char *err = run(p, args, 1, bufs, 7);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 256; i++) {
        cr_expect_eq(o[i], 16777216.0f + 32.0f, "[%d]: %.1f", i, o[i]);
        /* 32 x (-128 x 255) = -1044480: from INT32_MIN + 100 it wraps to INT32_MAX - 1044379 */
        int32_t want = (int32_t)((uint32_t)iacc[i] - 1044480u);
        cr_expect_eq(io[i], want, "[%d]: %d, want %d", i, io[i], want);
    }
    drop(p);
}

/* An fp8 dot of K = 256 promotes every 128 terms (dot_promote_terms): its
 * first 128 products of 2^8 x 2^9 sum to 2^24, its last 128 of 1 x 1 to 128,
 * and 2^24 + 128 is exact in f32; summed as one run (max_num_imprecise_acc =
 * 256, the whole K), each 1 added to 2^24 rounds away (ties to even) and
 * leaves 2^24; runs of 32 keep them (each run's sum and each add exact).
 * Ones into an accumulator of 2^24: promoted, 2^24 + 256, also at
 * max_num_imprecise_acc = 512 (a bound: runs of K keep it); with 2^30 (not
 * promoted: summed into the accumulator, Triton's default on Hopper) each
 * 1 rounds away: 2^24. */
Test(interp, dot_fp8_promotes_every_128_terms) {
    Prog *p = build_file("dot_fp8_promotes_every_128_terms.blk", NULL);
    uint8_t a[16 * 256], b[256 * 16];
    float o[1792];
    const Fp8Format *e5m2 = fp8_format(DT_F8E5M2);
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 256; k++) {
            a[i * 256 + k] = f32_to_fp8(k < 128 ? 256.0f : 1.0f, e5m2);
            b[k * 16 + i] = f32_to_fp8(k < 128 ? 512.0f : 1.0f, e5m2);
        }
    InterpBuffer bufs[] = {{a, sizeof a, "a"}, {b, sizeof b, "b"}, BUF(o, 1792)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = o}};
    char *err = run(p, args, 1, bufs, 3);
    cr_assert_null(err, "%s", err);
    for (int i = 0; i < 256; i++) {
        cr_expect_eq(o[1024 + i], 16777216.0f + 256.0f, "promoted into 2^24: [%d]: %.1f", i, o[1024 + i]);
        cr_expect_eq(o[1280 + i], 16777216.0f, "not promoted: [%d]: %.1f", i, o[1280 + i]);
        cr_expect_eq(o[1536 + i], 16777216.0f + 256.0f, "512 > K: [%d]: %.1f", i, o[1536 + i]);
        cr_expect_eq(o[i], 16777216.0f + 128.0f, "128: [%d]: %.1f", i, o[i]);
        cr_expect_eq(o[256 + i], 16777216.0f, "256: [%d]: %.1f", i, o[256 + i]);
        cr_expect_eq(o[512 + i], 16777216.0f + 128.0f, "32: [%d]: %.1f", i, o[512 + i]);
        /* gpu_ops' mma.sync case: a second run of eight ones, kept whole */
        cr_expect_eq(o[768 + i], 16777216.0f + 8.0f, "ones: [%d]: %.1f", i, o[768 + i]);
    }
    drop(p);
}

Test(interp, min_and_max_of_two_scalars) {
    Prog *p = build_file("min_and_max_of_two_scalars.blk", NULL);
    int32_t o[3] = {0};
    InterpBuffer bufs[] = {BUF(o, 3)};
    InterpArg args[] = {{.p = o}, {.i = 7}, {.i = -3}};
    char *err = run(p, args, 1, bufs, 1);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(o[0], -3);
    cr_expect_eq(o[1], 7);
    cr_expect_eq(o[2], 0, "min of a block over axis 0 is still a reduction");
    drop(p);
}

/* The narrow and wide types: 8- and 16-bit integers wrap in their width,
 * sum in (u)i32 and keep their type under max; u64 divides, compares and
 * shifts unsigned; f64 keeps double precision (a literal too); fp8 loads,
 * converts and stores (values from numeric.c's tested conversions). */
Test(interp, narrow_and_wide_dtypes) {
    Prog *p = build_file("narrow_and_wide_dtypes.blk", NULL);
    int8_t a[4] = {100, -100, 5, -128}, mx[2];
    uint8_t b[4] = {200, 10, 155, 0};
    int16_t c[4] = {20000, -3, 7, -20000};
    uint16_t d[4] = {65535, 2, 3, 0};
    uint64_t e[4] = {UINT64_MAX, 3, 6, UINT64_C(1) << 63}, ue[4];
    double f[4] = {1.0, 3.0, -0.5, 1e300}, fo[4];
    uint8_t g[4] = {0x7e, 0x01, 0xb8, 0x7f}, h[4] = {0x7b, 0x3c, 0x01, 0x80}, ho[4];
    int32_t sums[1];
    uint32_t usum[1];
    bool lt[4];
    float go[4];
    InterpBuffer bufs[] = {BUF(a, 4),  BUF(b, 4),  BUF(c, 4),  BUF(d, 4),   BUF(e, 4),  BUF(f, 4),
                           BUF(g, 4),  BUF(h, 4),  BUF(sums, 1), BUF(usum, 1), BUF(mx, 2), BUF(ue, 4),
                           BUF(lt, 4), BUF(fo, 4), BUF(go, 4), BUF(ho, 4)};
    InterpArg args[16];
    for (int i = 0; i < 16; i++) args[i].p = bufs[i].base;
    char *err = run(p, args, 1, bufs, 16);
    cr_assert_null(err, "%s", err);
    int8_t a0[4] = {100, -100, 5, -128};
    uint8_t b0[4] = {200, 10, 155, 0};
    int16_t c0[4] = {20000, -3, 7, -20000};
    uint16_t d0[4] = {65535, 2, 3, 0};
    uint64_t e0[4] = {UINT64_MAX, 3, 6, UINT64_C(1) << 63};
    double f0[4] = {1.0, 3.0, -0.5, 1e300};
    for (int k = 0; k < 4; k++) {
        cr_expect_eq(a[k], (int8_t)(uint8_t)(a0[k] * 3), "i8 wraps: %d", a[k]);
        cr_expect_eq(b[k], (uint8_t)(b0[k] + 100), "u8 wraps");
        cr_expect_eq(c[k], (int16_t)(uint16_t)(c0[k] * 2), "i16 wraps");
        cr_expect_eq(d[k], d0[k] >> 1, "u16 shifts logically");
        cr_expect_eq(ue[k], e0[k] / 3, "u64 divides unsigned");
        cr_expect_eq(lt[k], e0[k] > 5, "u64 compares unsigned");
        cr_expect_eq(fo[k], f0[k] * 0.1 + 1.0, "f64 keeps double precision and the literal 0.1 as a double");
    }
    cr_expect_eq(sums[0], 100 - 100 + 5 - 128, "an i8 sum is an i32, without wrapping");
    cr_expect_eq(usum[0], 200 + 10 + 155 + 0u, "a u8 sum is a u32");
    cr_expect_eq(mx[0], 100);
    cr_expect_eq(mx[1], -128);
    cr_expect_eq(go[0], 448.0f);
    cr_expect_eq(go[1], 0x1p-9f, "the smallest subnormal");
    cr_expect_eq(go[2], -1.0f);
    cr_expect(go[3] != go[3], "0x7f is NaN");
    cr_expect_eq(ho[0], 0x7c, "57344 * 2 overflows e5m2 to inf");
    cr_expect_eq(ho[1], 0x40, "1.0 * 2");
    cr_expect_eq(ho[2], 0x02, "a subnormal doubles");
    cr_expect_eq(ho[3], 0x80, "-0 stays -0");
    drop(p);
}

/* cumsum and cumprod: integers exactly as sequential prefix sums (any order
 * gives them); f32 in the defined order: step d adds the element d before,
 * for d = 1, 2, 4, ..., computed here the same way in float. */
Test(interp, cumsum_and_cumprod_along_either_axis) {
    Prog *p = build_file("cumsum_and_cumprod_along_either_axis.blk", NULL);
    int32_t x[32], a[32], b[32], d[32];
    float f[32], c[32];
    for (int k = 0; k < 32; k++) x[k] = (k * 37) % 11 - 5, f[k] = 1.0f / (float)(k + 3);
    InterpBuffer bufs[] = {BUF(x, 32), BUF(f, 32), BUF(a, 32), BUF(b, 32), BUF(c, 32), BUF(d, 32)};
    InterpArg args[] = {{.p = x}, {.p = f}, {.p = a}, {.p = b}, {.p = c}, {.p = d}};
    char *err = run(p, args, 1, bufs, 6);
    cr_assert_null(err, "%s", err);
    for (int r = 0; r < 4; r++)
        for (int col = 0; col < 8; col++) {
            int32_t row_sum = 0, col_sum = 0, prod = 1;
            for (int k = 0; k <= col; k++) row_sum += x[r * 8 + k], prod *= x[r * 8 + k] % 3 + 1;
            for (int k = 0; k <= r; k++) col_sum += x[k * 8 + col];
            cr_expect_eq(a[r * 8 + col], row_sum, "cumsum axis 1 [%d, %d]", r, col);
            cr_expect_eq(b[r * 8 + col], col_sum, "cumsum axis 0 [%d, %d]", r, col);
            cr_expect_eq(d[r * 8 + col], prod, "cumprod [%d, %d]", r, col);
        }
    float s[32], prev[32];
    memcpy(s, f, sizeof s);
    for (int step = 1; step < 32; step *= 2) {
        memcpy(prev, s, sizeof s);
        for (int k = step; k < 32; k++) s[k] = prev[k - step] + prev[k];
    }
    double exact = 0;
    for (int k = 0; k < 32; k++) {
        exact += f[k];
        cr_expect_eq(c[k], s[k], "f32 cumsum [%d] in the defined order: %a, want %a", k, c[k], s[k]);
        cr_expect(fabs(c[k] - exact) <= 6 * 0x1p-24 * exact, "and close to the exact sum");
    }
    drop(p);
}

/* flip, reshape, join, split and trans, against index arithmetic here. */
Test(interp, flip_reshape_join_and_split_move_elements) {
    Prog *p = build_file("flip_reshape_join_and_split_move_elements.blk", NULL);
    int32_t x[32], f0[32], f1[32], r[32];
    float y[16], j[32], s[8], t[16];
    for (int k = 0; k < 32; k++) x[k] = k * 7 - 50;
    for (int k = 0; k < 16; k++) y[k] = (float)k + 0.5f;
    InterpBuffer bufs[] = {BUF(x, 32), BUF(y, 16), BUF(f0, 32), BUF(f1, 32), BUF(r, 32), BUF(j, 32), BUF(s, 8), BUF(t, 16)};
    InterpArg args[] = {{.p = x}, {.p = y}, {.p = f0}, {.p = f1}, {.p = r}, {.p = j}, {.p = s}, {.p = t}};
    char *err = run(p, args, 1, bufs, 8);
    cr_assert_null(err, "%s", err);
    for (int row = 0; row < 4; row++)
        for (int col = 0; col < 8; col++) {
            cr_expect_eq(f0[row * 8 + col], x[(3 - row) * 8 + col], "flip axis 0 [%d, %d]", row, col);
            cr_expect_eq(f1[row * 8 + col], x[row * 8 + 7 - col], "flip axis 1 [%d, %d]", row, col);
        }
    for (int k = 0; k < 32; k++) cr_expect_eq(r[k], x[k], "reshape keeps the row-major order");
    for (int k = 0; k < 16; k++) {
        cr_expect_eq(j[2 * k], y[k], "join puts a at index 0 of the new dimension");
        cr_expect_eq(j[2 * k + 1], -y[k], "and b at index 1");
        cr_expect_eq(t[k], y[(k % 4) * 4 + k / 4], "trans through reshape");
    }
    for (int k = 0; k < 8; k++) cr_expect_eq(s[k], y[2 * k] * 10.0f + y[2 * k + 1], "split takes the pairs apart");
    drop(p);
}

static bool expect_split_computes_the_same(Prog *p, InterpArg *args, InterpBuffer *bufs, int nbufs);

/* Blocks of three dimensions against C indexing: Nones that add two
 * dimensions, reductions along each axis (keep_dims too), argmax, cumsum
 * along the middle axis, trans (the last two swapped) and permute, slices,
 * join/split of a 2-D block, flip, and a batched dot of f16 (small integers:
 * every sum is exact). */
Test(interp, blocks_of_three_dimensions_index_reduce_reorder_and_dot) {
    Prog *p = build_file("blocks_of_three_dimensions_index_reduce_reorder_and_dot.blk", NULL);
    enum { B = 2, M = 4, N = 8 };
    float x[B * M * N], out[B * M * N], sums[56], t[B * M * N], pm[B * M * N], d[2 * 256], misc[124];
    int32_t maxes[B * M];
    uint16_t a[2 * 256], b[2 * 256];
    for (int k = 0; k < B * M * N; k++) x[k] = (float)((k * 37) % 23 - 11);
    for (int k = 0; k < 2 * 256; k++) {
        _Float16 ha = (_Float16)((k * 5) % 7 - 3), hb = (_Float16)((k * 3) % 5 - 2);
        memcpy(&a[k], &ha, 2);
        memcpy(&b[k], &hb, 2);
    }
    InterpBuffer bufs[] = {BUF(x, B * M * N), BUF(a, 512), BUF(b, 512), BUF(out, B * M * N), BUF(sums, 56),
                           BUF(maxes, B * M), BUF(t, B * M * N), BUF(pm, B * M * N), BUF(d, 512), BUF(misc, 124)};
    InterpArg args[] = {{.p = x}, {.p = a}, {.p = b}, {.p = out}, {.p = sums},
                        {.p = maxes}, {.p = t}, {.p = pm}, {.p = d}, {.p = misc}};
    char *err = run(p, args, 1, bufs, 10);
    cr_assert_null(err, "%s", err);
#define X(i, j, k) x[((i) * M + (j)) * N + (k)]
    for (int i = 0; i < B; i++)
        for (int j = 0; j < M; j++)
            for (int k = 0; k < N; k++) {
                int at = (i * M + j) * N + k;
                cr_expect_eq(out[at], X(i, j, k) * 2 + 1, "[%d, %d, %d]", i, j, k);
                cr_expect_eq(t[(i * N + k) * M + j], X(i, j, k), "trans [%d, %d, %d]", i, k, j);
                cr_expect_eq(pm[(k * B + i) * M + j], X(i, j, k), "permute [%d, %d, %d]", k, i, j);
                float run = 0, top = -INFINITY;
                for (int jj = 0; jj < M; jj++) top = fmaxf(top, X(i, jj, k));
                for (int jj = 0; jj <= j; jj++) run += X(i, jj, k);
                cr_expect_eq(misc[at], run - top + (float)j, "cumsum - max + row [%d, %d, %d]", i, j, k);
            }
    for (int j = 0; j < M; j++)
        for (int k = 0; k < N; k++) {
            float s0 = 0;
            for (int i = 0; i < B; i++) s0 += X(i, j, k);
            cr_expect_eq(sums[j * N + k], s0, "sum axis 0 [%d, %d]", j, k);
            cr_expect_eq(misc[68 + j * N + k], 2 * s0, "split(join(s0, 3 s0)) [%d, %d]", j, k);
        }
    for (int i = 0; i < B; i++)
        for (int k = 0; k < N; k++) {
            float s1 = 0;
            for (int j = 0; j < M; j++) s1 += X(i, j, k);
            cr_expect_eq(sums[32 + i * N + k], s1, "sum axis 1 [%d, %d]", i, k);
        }
    for (int i = 0; i < B; i++)
        for (int j = 0; j < M; j++) {
            float s2 = 0;
            int best = 0;
            for (int k = 0; k < N; k++) {
                s2 += X(i, j, k);
                if (X(i, j, k) > X(i, j, best)) best = k;
            }
            cr_expect_eq(sums[48 + i * M + j], s2, "sum axis 2 [%d, %d]", i, j);
            cr_expect_eq(misc[100 + i * M + j], s2, "expand_dims then reshape [%d, %d]", i, j);
            cr_expect_eq(maxes[i * M + j], best, "argmax axis 2 [%d, %d]", i, j);
            if (j < 2)
                for (int k = 0; k < 4; k++)
                    cr_expect_eq(misc[108 + (i * 2 + j) * 4 + k], X(i, j, 3 - k), "flip of a slice [%d, %d, %d]", i,
                                 j, k);
        }
    for (int j = 0; j < M; j++) {
        float s = 0;
        for (int i = 0; i < B; i++)
            for (int k = 2; k < 6; k++) s += X(i, j, k);
        cr_expect_eq(misc[64 + j], s, "sum of a slice [%d]", j);
    }
#undef X
    for (int i = 0; i < 2; i++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 16; n++) {
                float want = 0;
                for (int k = 0; k < 16; k++) {
                    _Float16 ha, hb;
                    memcpy(&ha, &a[i * 256 + m * 16 + k], 2);
                    memcpy(&hb, &b[i * 256 + k * 16 + n], 2);
                    want += (float)ha * (float)hb;
                }
                cr_expect_eq(d[i * 256 + m * 16 + n], want, "batched dot [%d, %d, %d]", i, m, n);
            }
    expect_split_computes_the_same(p, args, bufs, 10); /* and what the GPU builds of it */
    drop(p);
}

/* What the GPU backend builds of a kernel with blocks of three dimensions
 * (bir_split_3d: each [A, M, N] value as A parts [M, N]) computes the same
 * bits on the interpreter as the kernel itself: the buffers after a launch
 * of each, from the same contents. */
static bool expect_split_computes_the_same(Prog *p, InterpArg *args, InterpBuffer *bufs, int nbufs) {
    Arena arena = {0};
    const BirOp *failed;
    char why[256];
    BirFunction *split = bir_split_3d(p->f, &arena, &failed, why, sizeof why);
    cr_assert(split, "split: %s", why);
    cr_assert(split != p->f, "the kernel has blocks of three dimensions to split");
    for (int v = 0; v < split->nvalues; v++) cr_assert(split->values[v].type.rank <= 2, "value %d is still 3-D", v);
    void *before[16], *after[16];
    cr_assert(nbufs <= 16);
    for (int b = 0; b < nbufs; b++) {
        before[b] = malloc(bufs[b].bytes);
        after[b] = malloc(bufs[b].bytes);
        memcpy(before[b], bufs[b].base, bufs[b].bytes);
    }
    uint32_t grid[3] = {1, 1, 1};
    char *err = interp_launch(p->f, args, p->f->nparams, grid, bufs, nbufs, NULL);
    cr_assert_null(err, "%s", err);
    for (int b = 0; b < nbufs; b++) {
        memcpy(after[b], bufs[b].base, bufs[b].bytes);
        memcpy(bufs[b].base, before[b], bufs[b].bytes);
    }
    err = interp_launch(split, args, split->nparams, grid, bufs, nbufs, NULL);
    cr_assert_null(err, "the split kernel: %s", err);
    bool same = true;
    for (int b = 0; b < nbufs; b++) {
        const unsigned char *want = after[b], *got = bufs[b].base;
        size_t at = 0;
        while (at < bufs[b].bytes && want[at] == got[at]) at++;
        cr_expect(at == bufs[b].bytes, "buffer %d differs from byte %zu (element %zu of 4 bytes)", b, at, at / 4);
        same &= at == bufs[b].bytes;
        free(before[b]);
        free(after[b]);
    }
    arena_free(&arena);
    return same;
}

Test(interp, three_dimensional_blocks_split_into_parts_compute_the_same) {
    Prog *p = build_file("three_dimensional_blocks_split_into_parts_compute_the_same.blk", NULL);
    float x[256], o[2784];
    int32_t ix[256], oi[192];
    for (int k = 0; k < 256; k++) {
        x[k] = (float)((k * 37) % 23 - 11);
        ix[k] = (k * 13) % 29;
    }
    x[77] = NAN;
    for (int k = 0; k < 2784; k++) o[k] = -7.0f;
    for (int k = 0; k < 192; k++) oi[k] = 0;
    for (int n = 250; n <= 600; n += 350) { /* a masked load, and a loop of two iterations */
        InterpBuffer bufs[] = {BUF(x, 256), BUF(ix, 256), BUF(o, 2784), BUF(oi, 192)};
        InterpArg args[] = {{.p = x}, {.p = ix}, {.p = o}, {.p = oi}, {.i = n}};
        expect_split_computes_the_same(p, args, bufs, 4);
    }
    drop(p);
    p = build_file("three_dimensional_blocks_split_takes_in_loops_and_branches.blk", NULL);
    float z[256], w[32], zo[288];
    for (int k = 0; k < 256; k++) z[k] = (float)((k * 29) % 31 - 15);
    for (int k = 0; k < 32; k++) w[k] = (float)(k % 7 - 3);
    for (int n = 1; n <= 3; n += 2) {
        InterpBuffer zb[] = {BUF(z, 256), BUF(w, 32), BUF(zo, 288)};
        InterpArg za[] = {{.p = z}, {.p = w}, {.p = zo}, {.i = n}};
        expect_split_computes_the_same(p, za, zb, 3);
    }
    drop(p);
}

/* A random program over [A, M, N] i32 blocks: each step makes a value of that
 * shape from earlier ones through one kind of op (along a random axis where
 * it has one), so that every op meets every axis and size (sizes of 1 too). */
static void random_3d_program(char *src, size_t size, uint32_t *h, int A, int M, int N) {
    const int shape[3] = {A, M, N};
    size_t at = 0;
#define PUT(...) (at += (size_t)snprintf(src + at, size - at, __VA_ARGS__))
#define RND(n) (*h = *h * 1664525u + 1013904223u, (int)((*h >> 8) % (uint32_t)(n)))
    PUT("fn add(a, b) { return a + b; }\n"
        "kernel k(x: *i32, o: *i32, n: i32) {\n"
        "  let i = arange(0, %d)[:, None, None] * %d + arange(0, %d)[None, :, None] * %d + arange(0, %d)[None, None, :];\n"
        "  let v0 = load(x + i, mask = i < n, other = 5);\n",
        A, M * N, M, N, N);
    int steps = 3 + RND(4);
    for (int s = 1; s <= steps; s++) {
        int j = RND(s), l = RND(s), d = RND(3), kind = RND(15);
        char full[48];
        snprintf(full, sizeof full, "[%d, %d, %d]", A, M, N);
        if (kind == 11 && M * N >= 2)
            PUT("  let (p%d, q%d) = split(reshape(v%d, [%d, %d, 2]));\n", s, s, j, A, M * N / 2);
        if (kind == 14) /* control flow carrying 3-D values */
            PUT("  var c%d = v%d;\n  for t in range(0, n %% 3) { c%d = c%d * 2 + v%d; }\n"
                "  if n > 20 { c%d = flip(c%d, %d); }\n", s, j, s, s, l, s, s, d);
        PUT("  let v%d = ", s);
        switch (kind) {
        case 0: PUT("v%d * 3 + v%d - maximum(v%d, v%d)", j, l, j, l); break;
        case 1: PUT("v%d + broadcast_to(sum(v%d, %d, keep_dims = true), %s)", j, l, d, full); break;
        case 2: PUT("broadcast_to(expand_dims(max(v%d, %d) - min(v%d, %d), %d), %s)", j, d, l, d, d, full); break;
        case 3: PUT("broadcast_to(expand_dims(argmax(v%d, %d) + argmin(v%d, %d) * 7, %d), %s)", j, d, j, d, d, full); break;
        case 4: PUT("cumsum(v%d, %d, reverse = %s) + associative_scan(v%d, %d, add)", j, d, RND(2) ? "true" : "false", l, d); break;
        case 5: PUT("flip(v%d, %d) + broadcast_to(expand_dims(reduce(v%d, %d, add), %d), %s)", j, d, l, d, d, full); break;
        case 6: PUT("sort(v%d, %d, descending = %s)", j, d, RND(2) ? "true" : "false"); break;
        case 7: PUT("gather(v%d, v%d & %d, %d)", j, l, shape[d] - 1, d); break;
        case 8: {
            static const int perms[5][3] = {{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
            const int *q = perms[RND(5)];
            PUT("reshape(permute(v%d, [%d, %d, %d]), %s)", j, q[0], q[1], q[2], full);
            break;
        }
        case 9: PUT("reshape(trans(v%d), %s) - v%d", j, full, l); break;
        case 10: { /* another 3-D shape of the same size, and back */
            int total = A * M * N, a2 = 1 << RND(3), m2 = 1 << RND(4);
            while (a2 * m2 > total) m2 > 1 ? (m2 /= 2) : (a2 /= 2);
            PUT("reshape(flip(reshape(v%d, [%d, %d, %d]), %d), %s)", j, a2, m2, total / (a2 * m2), d, full);
            break;
        }
        case 11:
            if (M * N < 2) PUT("v%d", j);
            else PUT("reshape(join(q%d, p%d * 3), %s) + v%d", s, s, full, l);
            break;
        case 12: PUT("reshape(reshape(v%d, [%d, %d]) * 2, %s) + reshape(reshape(v%d, [%d]), %s)", j, A * M, N, full, l,
                     A * M * N, full); break;
        case 13: PUT("broadcast_to(v%d[:, 0:1, :] + v%d[0:1, :, :], %s)", j, l, full); break;
        default: PUT("c%d", s); break;
        }
        PUT(";\n");
    }
    PUT("  store(o + i, v%d);\n}\n", steps);
#undef PUT
#undef RND
}

/* 300 random programs over blocks of three dimensions (any sizes from 1 to
 * 16): the split block IR the GPU builds computes the kernel's bits. */
Test(interp, random_three_dimensional_programs_split_into_parts_compute_the_same) {
    uint32_t h = 2026;
    for (int trial = 0; trial < 300; trial++) {
        int A = 1 << (trial % 3), M = 1 << ((trial / 3) % 4), N = 1 << ((trial / 12) % 5);
        char src[8192];
        random_3d_program(src, sizeof src, &h, A, M, N);
        Prog *p = build(src, NULL);
        int total = A * M * N;
        int32_t *x = malloc((size_t)total * sizeof *x), *o = malloc((size_t)total * sizeof *o);
        for (int k = 0; k < total; k++) h = h * 1664525u + 1013904223u, x[k] = (int32_t)(h >> 20) - 2048, o[k] = -1;
        InterpBuffer bufs[] = {BUF(x, total), BUF(o, total)};
        InterpArg args[] = {{.p = x}, {.p = o}, {.i = total - (trial % 2)}};
        if (!expect_split_computes_the_same(p, args, bufs, 2)) cr_log_error("program %d:\n%s", trial, src);
        free(x);
        free(o);
        drop(p);
    }
}

static int cmp_float_nan_last(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    if (x != x) return y != y ? 0 : 1;
    if (y != y) return -1;
    return x < y ? -1 : x > y;
}

/* sort against qsort: f32 with NaNs (last ascending, first descending),
 * -0 and duplicates, along either axis; i32 descending. */
Test(interp, sort_agrees_with_qsort_with_nan_as_the_largest) {
    Prog *p = build_file("sort_agrees_with_qsort_with_nan_as_the_largest.blk", NULL);
    enum { R = 8, C = 64 };
    float x[R * C], a[R * C], b[R * C], c[R * C];
    int32_t n[256], d[256];
    uint32_t h = 12345;
    for (int k = 0; k < R * C; k++) {
        h = h * 1664525u + 1013904223u;
        x[k] = (float)((int)(h >> 24) % 17 - 8) * 0.25f;
        if (k % 37 == 5) x[k] = NAN;
        if (k % 41 == 7) x[k] = -0.0f;
    }
    for (int k = 0; k < 256; k++) h = h * 1664525u + 1013904223u, n[k] = (int32_t)h;
    InterpBuffer bufs[] = {BUF(x, R * C), BUF(n, 256), BUF(a, R * C), BUF(b, R * C), BUF(c, R * C), BUF(d, 256)};
    InterpArg args[] = {{.p = x}, {.p = n}, {.p = a}, {.p = b}, {.p = c}, {.p = d}};
    char *err = run(p, args, 1, bufs, 6);
    cr_assert_null(err, "%s", err);
    for (int row = 0; row < R; row++) {
        float want[C];
        memcpy(want, x + row * C, sizeof want);
        qsort(want, C, sizeof *want, cmp_float_nan_last);
        for (int k = 0; k < C; k++) {
            float got = a[row * C + k], down = c[row * C + C - 1 - k];
            if (want[k] != want[k]) {
                cr_expect(got != got && down != down, "NaN last ascending, first descending (row %d, %d)", row, k);
            } else {
                cr_expect(got == want[k], "row %d [%d] = %g, want %g", row, k, got, want[k]);
                cr_expect(down == want[k], "descending row %d [%d] = %g, want %g", row, C - 1 - k, down, want[k]);
            }
        }
    }
    for (int col = 0; col < C; col++) {
        float want[R];
        for (int r = 0; r < R; r++) want[r] = x[r * C + col];
        qsort(want, R, sizeof *want, cmp_float_nan_last);
        for (int r = 0; r < R; r++) {
            float got = b[r * C + col];
            cr_expect(want[r] != want[r] ? got != got : got == want[r], "axis 0 col %d [%d]", col, r);
        }
    }
    int32_t want_i[256];
    memcpy(want_i, n, sizeof want_i);
    for (int k = 1; k < 256; k++) /* insertion sort, descending */
        for (int m = k; m > 0 && want_i[m] > want_i[m - 1]; m--) {
            int32_t tmp = want_i[m];
            want_i[m] = want_i[m - 1];
            want_i[m - 1] = tmp;
        }
    for (int k = 0; k < 256; k++) cr_expect_eq(d[k], want_i[k], "i32 descending [%d]", k);
    drop(p);
}

/* reduce and associative_scan with combine helpers. Composing affine maps
 * (a, b): h -> a*h + b is associative but not commutative, so in integers
 * (exact, wrapping) the results are the sequential fold whatever the tree,
 * and wrong if an operand order were swapped. f32 sums follow the defined
 * orders, computed here the same way. */
Test(interp, reduce_and_associative_scan_with_combine_helpers) {
    Prog *p = build_file("reduce_and_associative_scan_with_combine_helpers.blk", NULL);
    int32_t a[64], b[64], ra[4], rb[4], h[64], hr[64], mi[1];
    float f[64], fs[1], fr[4], fc[64], m[1];
    uint32_t g = 99;
    for (int k = 0; k < 64; k++) {
        g = g * 1664525u + 1013904223u;
        a[k] = (int32_t)(g >> 16) % 7 - 3;
        b[k] = (int32_t)(g >> 8) % 101 - 50;
        f[k] = 1.0f / (float)(k + 1) + (k == 40 ? 3.0f : 0.0f) + (k == 50 ? 3.0f : 0.0f);
    }
    InterpBuffer bufs[] = {BUF(a, 64), BUF(b, 64), BUF(f, 64), BUF(ra, 4), BUF(rb, 4), BUF(h, 64), BUF(hr, 64),
                           BUF(fs, 1), BUF(fr, 4), BUF(fc, 64), BUF(m, 1), BUF(mi, 1)};
    InterpArg args[] = {{.p = a}, {.p = b}, {.p = f}, {.p = ra}, {.p = rb}, {.p = h}, {.p = hr},
                        {.p = fs}, {.p = fr}, {.p = fc}, {.p = m}, {.p = mi}};
    char *err = run(p, args, 1, bufs, 12);
    cr_assert_null(err, "%s", err);
    for (int r = 0; r < 4; r++) {
        uint32_t A = 1, B = 0; /* the identity map, then each map of the row in order */
        for (int k = 0; k < 16; k++) {
            uint32_t ak = (uint32_t)a[r * 16 + k], bk = (uint32_t)b[r * 16 + k];
            A = A * ak, B = B * ak + bk;
            cr_expect_eq(h[r * 16 + k], (int32_t)B, "scan: the recurrence h = a h + b [%d, %d]", r, k);
        }
        cr_expect_eq(ra[r], (int32_t)A, "reduce composes in order (a) row %d", r);
        cr_expect_eq(rb[r], (int32_t)B, "reduce composes in order (b) row %d", r);
        uint32_t Bs = 0; /* reverse: the maps from the end, the later one applied first */
        for (int k = 15; k >= 0; k--) {
            Bs = Bs * (uint32_t)a[r * 16 + k] + (uint32_t)b[r * 16 + k];
            cr_expect_eq(hr[r * 16 + k], (int32_t)Bs, "reverse scan [%d, %d]", r, k);
        }
    }
    /* f32: the tree (step d adds k + d into k) and the Hillis-Steele scan */
    float t[64], s[64], prev[64];
    memcpy(t, f, sizeof t);
    for (int d = 1; d < 64; d *= 2)
        for (int k = 0; k + d < 64; k += 2 * d) t[k] = t[k] + t[k + d];
    cr_expect_eq(fs[0], t[0], "f32 reduce in the pairwise tree: %a, want %a", fs[0], t[0]);
    for (int r = 0; r < 4; r++) {
        float q[16];
        memcpy(q, f + r * 16, sizeof q);
        for (int d = 1; d < 16; d *= 2)
            for (int k = 0; k + d < 16; k += 2 * d) q[k] = q[k] + q[k + d];
        cr_expect_eq(fr[r], q[0], "row %d", r);
    }
    memcpy(s, f, sizeof s);
    for (int d = 1; d < 64; d *= 2) {
        memcpy(prev, s, sizeof s);
        for (int k = d; k < 64; k++) s[k] = prev[k - d] + prev[k];
    }
    for (int k = 0; k < 64; k++) cr_expect_eq(fc[k], s[k], "f32 scan [%d]", k);
    cr_expect_eq(m[0], f[40], "argmax by a tuple reduce: the value");
    cr_expect_eq(mi[0], 40, "and the first index of the largest");
    drop(p);
}

/* The exact math functions in f64: against C's double functions, ties
 * included (rint to even, round away from zero), and sqrt of 2 to the
 * last bit, which f32 would lose. */
Test(interp, exact_math_functions_compute_in_f64) {
    Prog *p = build_file("exact_math_functions_compute_in_f64.blk", NULL);
    double x[8] = {2.0, -2.5, 2.5, 3.5, -0.5, 1e300, 0.1, -7.25}, y[48];
    InterpBuffer bufs[] = {BUF(x, 8), BUF(y, 48)};
    InterpArg args[] = {{.p = x}, {.p = y}};
    char *err = run(p, args, 1, bufs, 2);
    cr_assert_null(err, "%s", err);
    for (int k = 0; k < 8; k++) {
        cr_expect_eq(y[k], sqrt(fabs(x[k])), "sqrt(%g)", x[k]);
        cr_expect_eq(y[8 + k], floor(x[k]), "floor(%g)", x[k]);
        cr_expect_eq(y[16 + k], ceil(x[k]), "ceil(%g)", x[k]);
        cr_expect_eq(y[24 + k], trunc(x[k]), "trunc(%g)", x[k]);
        cr_expect_eq(y[32 + k], nearbyint(x[k]), "rint(%g)", x[k]);
        cr_expect_eq(y[40 + k], round(x[k]), "round(%g)", x[k]);
    }
    cr_expect_eq(y[0], 0x1.6a09e667f3bcdp+0, "sqrt(2) in double precision");
    cr_expect_eq(y[32 + 1], -2.0, "rint(-2.5) is -2 (to even)");
    cr_expect_eq(y[40 + 1], -3.0, "round(-2.5) is -3 (away from zero)");
    drop(p);
}

/* ---------------------------------------------------------------- memory */

enum { CHAIN_N = 1 << 20, CHAIN_STEPS = 30 };
#define BLOCK_BYTES ((uint64_t)CHAIN_N * 8) /* one 2^20-element value: 8 bytes an element */

/* CHAIN_STEPS steps of v = v * 1.5 - 0.25 on one 2^20-element block: each
 * step makes large temporaries (the product, the splatted constants) that
 * die at the next. */
static Prog *build_chain(void) {
    static char src[4096];
    int o = snprintf(src, sizeof src, "kernel k(x: *f32, out: *f32) {\n"
                                      "  let offs = arange(0, %d);\n"
                                      "  let v0 = load(x + offs);\n", CHAIN_N);
    for (int i = 1; i <= CHAIN_STEPS; i++)
        o += snprintf(src + o, sizeof src - (size_t)o, "  let v%d = v%d * 1.5 - 0.25;\n", i, i - 1);
    snprintf(src + o, sizeof src - (size_t)o, "  store(out + offs, v%d);\n}\n", CHAIN_STEPS);
    return build(src, NULL);
}

/* A value's storage lives from its definition to its last use: the chain
 * holds four blocks at once (offs, the value, the splatted constant, the
 * result), not the ~125 it defines (1 GB held before). */
Test(interp, values_live_only_until_their_last_use) {
    Prog *p = build_chain();
    float *x = malloc(CHAIN_N * sizeof *x), *out = malloc(CHAIN_N * sizeof *out);
    cr_assert(x && out);
    for (int k = 0; k < CHAIN_N; k++) x[k] = (float)(k % 1000) / 1000.0f;
    InterpBuffer bufs[] = {BUF(x, CHAIN_N), BUF(out, CHAIN_N)};
    InterpArg args[] = {{.p = x}, {.p = out}};
    uint32_t one[3] = {1, 1, 1};
    InterpReport rep = {INTERP_FAULT, 0};
    InterpOptions opt = {.report = &rep};
    char *err = interp_launch(p->f, args, 2, one, bufs, 2, &opt);
    cr_assert_null(err, "%s", err);
    cr_expect_eq(rep.outcome, INTERP_OK);
    cr_expect(rep.peak_bytes >= 3 * BLOCK_BYTES, "the counter counts: %llu", (unsigned long long)rep.peak_bytes);
    cr_expect(rep.peak_bytes <= 5 * BLOCK_BYTES, "peak %llu bytes: %.1f values of 2^20 elements",
              (unsigned long long)rep.peak_bytes, (double)rep.peak_bytes / (double)BLOCK_BYTES);
    int bad = 0;
    for (int k = 0; k < CHAIN_N; k++) {
        float v = x[k];
        for (int i = 0; i < CHAIN_STEPS; i++) v = v * 1.5f, v = v - 0.25f;
        if (memcmp(&v, &out[k], sizeof v) && bad++ < 5) cr_expect_eq(out[k], v, "out[%d]", k);
    }
    cr_expect_eq(bad, 0, "%d elements differ", bad);
    free(x);
    free(out);
    drop(p);
}

/* Past InterpOptions.max_bytes a launch ends out of memory (not a fault),
 * with a message naming the kernel, the op, the limit and how to raise it;
 * within it, the same launch runs. */
Test(interp, the_bytes_of_live_values_are_bounded) {
    Prog *p = build_chain();
    float *x = calloc(CHAIN_N, sizeof *x), *out = malloc(CHAIN_N * sizeof *out);
    cr_assert(x && out);
    InterpBuffer bufs[] = {BUF(x, CHAIN_N), BUF(out, CHAIN_N)};
    InterpArg args[] = {{.p = x}, {.p = out}};
    uint32_t two[3] = {2, 1, 1};
    out[0] = -1.0f;
    InterpReport rep = {INTERP_OK, 0};
    InterpOptions opt = {.max_bytes = 2 * BLOCK_BYTES + 4096, .report = &rep};
    char *err = interp_launch(p->f, args, 2, two, bufs, 2, &opt);
    cr_expect_eq(rep.outcome, INTERP_OUT_OF_MEMORY);
    char want[160];
    snprintf(want, sizeof want, "past the interpreter's limit of %llu bytes (a larger one: BLK_CPU_MAX_BYTES",
             (unsigned long long)opt.max_bytes);
    cr_expect(err && strstr(err, "kernel 'k', t.blk:") && strstr(err, "program (0, 0, 0): out of memory: ") &&
              strstr(err, want), "%s", err);
    cr_expect(rep.peak_bytes <= opt.max_bytes, "peak %llu", (unsigned long long)rep.peak_bytes);
    cr_expect_eq(out[0], -1.0f, "nothing stored");
    free(err);
    opt.max_bytes = 6 * BLOCK_BYTES;
    err = interp_launch(p->f, args, 2, two, bufs, 2, &opt);
    cr_expect_null(err, "%s", err);
    cr_expect_eq(rep.outcome, INTERP_OK);
    cr_expect(rep.peak_bytes <= opt.max_bytes);
    float want0 = 0.0f;
    for (int i = 0; i < CHAIN_STEPS; i++) want0 = want0 * 1.5f, want0 = want0 - 0.25f;
    cr_expect_eq(out[0], want0);
    /* a fault is still a fault */
    InterpBuffer small[] = {{x, 16, "x"}, BUF(out, CHAIN_N)};
    err = interp_launch(p->f, args, 2, two, small, 2, &opt);
    cr_expect(err && strstr(err, "out-of-bounds load"), "%s", err);
    cr_expect_eq(rep.outcome, INTERP_FAULT);
    free(err);
    free(x);
    free(out);
    drop(p);
}

/* Values from before a loop are used in every iteration, inside an if, in a
 * nested while and after the loop; values made in the body die each
 * iteration; program 1 returns from inside the loop, leaving values its
 * blocks never ended, and program 2 still computes the same as program 0. */
Test(interp, values_from_before_a_loop_live_through_it) {
    Prog *p = build_file("values_from_before_a_loop_live_through_it.blk", NULL);
    enum { N = 1000 };
    float x[64], out[3 * 64], b[64], want[3][64];
    for (int k = 0; k < 64; k++) x[k] = 1.0f / (float)(k + 3) - 0.125f, b[k] = x[k] * 2.0f;
    for (int prog = 0; prog < 3; prog++) {
        float acc[64] = {0};
        int j = 0, stop = prog == 1 ? N / 2 : N - 1;
        for (int i = 0; i <= stop; i++) {
            for (int k = 0; k < 64; k++) {
                float t = acc[k] + x[k];
                acc[k] = i % 3 == 0 ? t + b[k] : t * 0.5f;
            }
            while (j < i) j += 2;
        }
        for (int k = 0; k < 64; k++) want[prog][k] = prog == 1 ? acc[k] + b[k] : acc[k] + b[k] + (float)j;
    }
    InterpBuffer bufs[] = {BUF(x, 64), BUF(out, 3 * 64)};
    InterpArg args[] = {{.p = x}, {.p = out}, {.i = N}};
    uint32_t three[3] = {3, 1, 1};
    InterpReport rep;
    InterpOptions opt = {.report = &rep};
    char *err = interp_launch(p->f, args, 3, three, bufs, 2, &opt);
    cr_assert_null(err, "%s", err);
    for (int prog = 0; prog < 3; prog++)
        for (int k = 0; k < 64; k++)
            cr_expect_eq(out[prog * 64 + k], want[prog][k], "program %d, out[%d] = %.9g, want %.9g", prog, k,
                         out[prog * 64 + k], want[prog][k]);
    /* a 1000-iteration loop does not pile up its iterations' values */
    cr_expect(rep.peak_bytes < 64 * 64 * 8, "peak %llu bytes", (unsigned long long)rep.peak_bytes);
    drop(p);
}
