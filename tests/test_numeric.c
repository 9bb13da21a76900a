/* numeric.c: Philox rand bit-exact with Triton, f16/bf16 rounding. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>

#include "support.h"

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* tests/gpu/triton_rand_values.txt holds what Triton 3.6's tl.rand and
 * tl.randint returned on an H100 (tests/gpu/triton_rand_reference.py):
 * seeds 123, 0, -1, -123456789, 2^40+5; offsets 0..3, 2^32+0..3, 2^40+7..10. */
Test(numeric, rand_matches_triton_bit_for_bit) {
    FILE *f = fopen(BLK_GPU_DIR "/triton_rand_values.txt", "r");
    cr_assert(f);
    char line[256];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        int64_t seed;
        uint64_t offset;
        uint32_t rand_bits, randint_bits;
        cr_assert_eq(sscanf(line, "%" SCNd64 " %" SCNx64 " %" SCNx32 " %" SCNx32, &seed, &offset,
                            &rand_bits, &randint_bits), 4, "bad line: %s", line);
        cr_expect_eq(philox_randint(seed, offset), randint_bits,
                     "randint(%" PRId64 ", %#" PRIx64 ")", seed, offset);
        cr_expect_eq(bits(philox_rand(seed, offset)), rand_bits,
                     "rand(%" PRId64 ", %#" PRIx64 ")", seed, offset);
        rows++;
    }
    fclose(f);
    cr_expect_eq(rows, 60);
}

/* Random123's known-answer vector for Philox4x32-10 (key 0, counter 0: seed 0,
 * offset 0), all four words: randint4x is that draw, randint its first word. */
Test(numeric, philox_4x32_10_matches_random123s_known_answer) {
    uint32_t w[4];
    philox_randint4x(0, 0, w);
    const uint32_t want[4] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
    for (int i = 0; i < 4; i++) cr_expect_eq(w[i], want[i], "word %d: %#x", i, w[i]);
    for (int i = 0; i < 4; i++) cr_expect_eq(philox_word(0, 0, i), want[i]);
    cr_expect_eq(philox_randint(0, 0), want[0]);
    cr_expect_eq(bits(philox_uniform(want[0])), bits(philox_rand(0, 0)));
}

Test(numeric, rand_check_values_from_the_design_notes) {
    const uint32_t want[4] = {0x3e091be6, 0x3f387fd6, 0x3eb06d6a, 0x3e7336a6};
    for (int i = 0; i < 4; i++) cr_expect_eq(bits(philox_rand(123, (uint64_t)i)), want[i]);
}

Test(numeric, rand_stays_in_unit_interval) {
    double sum = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        float r = philox_rand(42, i);
        cr_assert(r >= 0.0f && r < 1.0f, "rand(42, %" PRIu64 ") = %g", i, r);
        sum += r;
    }
    /* mean of 1e5 uniforms: sd 0.29/sqrt(1e5) = 0.0009; 0.005 is > 5 sd */
    cr_expect(fabs(sum / 100000 - 0.5) < 0.005, "mean %g", sum / 100000);
}

/* The compiler's own _Float16 conversion (round to nearest even) is an
 * independent reference for f32 -> f16. */
Test(numeric, f16_round_trips_every_value) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = f16_to_f32((uint16_t)h);
        _Float16 ref = (_Float16)f;
        if (isnan(f)) {
            cr_expect(isnan((float)ref));
            cr_expect_eq(f32_to_f16(f) & 0x7c00, 0x7c00);
            continue;
        }
        cr_expect_eq((float)ref, f, "f16 %#x widens to %a", h, f);
        cr_expect_eq(f32_to_f16(f), (uint16_t)h, "f16 %#x", h);
    }
}

Test(numeric, f32_to_f16_rounds_like_the_hardware) {
    uint32_t state = 1;
    for (int i = 0; i < 2000000; i++) {
        state = state * 1664525u + 1013904223u;
        /* focus on exponents near the f16 range, incl. subnormals and overflow */
        uint32_t u = (state & 0x807fffff) | ((uint32_t)(100 + (state >> 8) % 60) << 23);
        if (i % 7 == 0) u = state; /* and anything at all */
        float f = from_bits(u);
        if (isnan(f)) continue;
        _Float16 ref = (_Float16)f;
        uint16_t ref_bits;
        memcpy(&ref_bits, &ref, 2);
        cr_assert_eq(f32_to_f16(f), ref_bits, "f32 %#x (%a)", u, f);
    }
}

/* bf16 reference: of the two bf16 neighbours of f (truncation and the next
 * one up in magnitude), the nearer in double arithmetic; ties to even. */
static uint16_t bf16_reference(float f) {
    uint32_t u = bits(f);
    uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
    double dl = fabs((double)f - (double)bf16_to_f32(lo));
    double dh = fabs((double)bf16_to_f32(hi) - (double)f);
    if ((hi & 0x7f80) == 0x7f80 && (lo & 0x7f80) != 0x7f80) /* next up is inf */
        dh = fabs(ldexp(1.0, 128) - fabs((double)f));
    if (dl < dh) return lo;
    if (dh < dl) return hi;
    return (lo & 1) ? hi : lo;
}

Test(numeric, f32_to_bf16_rounds_to_nearest_even) {
    uint32_t state = 7;
    for (int i = 0; i < 2000000; i++) {
        state = state * 1664525u + 1013904223u;
        float f = from_bits(state);
        if (isnan(f) || isinf(f)) continue;
        cr_assert_eq(f32_to_bf16(f), bf16_reference(f), "f32 %#x", state);
    }
    cr_expect_eq(f32_to_bf16(1.0f), 0x3f80);
    cr_expect_eq(f32_to_bf16(from_bits(0x3f808000)), 0x3f80); /* tie: stays even */
    cr_expect_eq(f32_to_bf16(from_bits(0x3f818000)), 0x3f82); /* tie: rounds up to even */
    cr_expect(isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

Test(numeric, literal_rules) {
    int64_t i;
    double f;
    const char *why;
    cr_expect(parse_int_literal("0", 1, &i, NULL, &why) && i == 0);
    cr_expect(parse_int_literal("9223372036854775807", 19, &i, NULL, &why) && i == INT64_MAX);
    cr_expect_not(parse_int_literal("9223372036854775808", 19, &i, NULL, &why));
    cr_expect(strstr(why, "too large"));
    cr_expect(parse_int_literal("0x7FFFFFFFFFFFFFFF", 18, &i, NULL, &why) && i == INT64_MAX);
    cr_expect_not(parse_int_literal("0x8000000000000000", 18, &i, NULL, &why));
    bool big;
    cr_expect(parse_int_literal("0x8000000000000000", 18, &i, &big, &why) && big && (uint64_t)i == UINT64_C(1) << 63,
              "a literal may take u64's range where asked");
    cr_expect(parse_int_literal("18446744073709551615", 20, &i, &big, &why) && big && i == -1);
    cr_expect_not(parse_int_literal("18446744073709551616", 20, &i, &big, &why));
    cr_expect(parse_int_literal("5", 1, &i, &big, &why) && !big);
    cr_expect_not(parse_int_literal("0777", 4, &i, NULL, &why));
    cr_expect(strstr(why, "octal"));
    cr_expect(parse_int_literal("1234xyz", 4, &i, NULL, &why) && i == 1234, "text need not end at len");
    cr_expect_not(parse_int_literal("0x", 2, &i, NULL, &why));
    cr_expect(parse_float_literal("0.5e1", 5, &f, &why) && f == 5.0);
    cr_expect(parse_float_literal("0.0", 3, &f, &why) && f == 0.0, "zero itself is fine");
    cr_expect(parse_float_literal("1e-45", 5, &f, &why), "the smallest f32 subnormal rounds to nonzero");
    cr_expect_not(parse_float_literal("1e-46", 5, &f, &why));
    cr_expect(parse_float_literal("3.4028234e38", 12, &f, &why));
    cr_expect_not(parse_float_literal("3.5e38", 6, &f, &why));
}

/* ---- blk's math library (numeric.c), which the GPU reproduces bit for bit ---- */

/* |got - ref| in units of the f32 spacing at ref (2^-149 below the normals);
 * 0 when got is ref rounded to f32 (an infinity included). */
static double ulp_error(float got, double ref) {
    if ((float)ref == got || (isnan(ref) && isnan(got))) return 0;
    double a = fabs(ref);
    int e;
    frexp(a, &e);
    double ulp = a < 0x1p-126 ? 0x1p-149 : ldexp(1, e - 24);
    return fabs((double)got - ref) / ulp;
}

typedef struct {
    BirOpcode op;
    const char *name;
    double (*ref)(double);
    double lo, hi; /* the range sampled: evenly, and log-spaced in magnitude */
    double bound;  /* the largest error allowed, in ulp (docs/language.md §8) */
} MathCase;

static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }

Test(numeric, math_library_errors_in_ulp_within_their_bounds) {
    const MathCase cases[] = {
        {BIR_TANH, "tanh", tanh, -12, 12, 1.5},
        {BIR_SIGMOID, "sigmoid", ref_sigmoid, -110, 110, 2.5},
        {BIR_ERF, "erf", erf, -6, 6, 2.5},
        {BIR_EXPM1, "expm1", expm1, -30, 88.7, 1.5},
        {BIR_LOG1P, "log1p", log1p, -0.9999, 3e38, 2.5},
        {BIR_SIN, "sin", sin, -1e5, 1e5, 1.5},
        {BIR_COS, "cos", cos, -1e5, 1e5, 1.5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const MathCase *m = &cases[c];
        double worst = 0, at = 0;
        for (int i = 0; i <= 400000; i++) {
            double t = i / 400000.0;
            float xs[3] = {(float)(m->lo + (m->hi - m->lo) * t), /* even */
                           (float)(m->hi * pow(1e-30 / (m->hi > 1 ? m->hi : 1), t)),
                           (float)(m->lo < 0 ? -fmin(-m->lo, 1e30) * pow(1e-30, t) : m->lo)};
            for (int k = 0; k < 3; k++) {
                double err = ulp_error(blk_math_f32(m->op, xs[k]), m->ref(xs[k]));
                if (err > worst) worst = err, at = xs[k];
            }
        }
        cr_expect(worst <= m->bound, "%s: %.3f ulp at %a, more than the %.1f stated", m->name, worst, at, m->bound);
    }
}

/* pow rounds exp(y log|x|), computed in double, once to f32: within half an
 * ulp of the exact power (it would take a double error near 1e-14 on a tie
 * to miss), over x across 2^-20..2^20 and y in [-20, 20] */
Test(numeric, pow_is_correctly_rounded_and_keeps_c_special_cases) {
    uint32_t s = 7;
    double worst = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 1103515245u + 12345u;
        float x = ldexpf((float)(s >> 8) / 16777216.0f + 0.5f, (int)((s >> 3) % 40) - 20);
        s = s * 1103515245u + 12345u;
        float y = ((float)(s >> 8) / 16777216.0f - 0.5f) * 40.0f;
        double err = ulp_error(blk_pow_f32(x, y), pow((double)x, (double)y));
        worst = err > worst ? err : worst;
    }
    cr_expect(worst <= 0.5, "pow: %.4f ulp", worst);
    const float cases[][3] = {
        {-2, 3, -8}, {-2, 2, 4}, {0, -1, INFINITY}, {-0.0f, -3, -INFINITY}, {-0.0f, 3, -0.0f}, {-0.0f, 2, 0},
        {2, INFINITY, INFINITY}, {0.5f, INFINITY, 0}, {0.5f, -INFINITY, INFINITY}, {-1, INFINITY, 1}, {NAN, 0, 1},
        {1, NAN, 1}, {-INFINITY, 3, -INFINITY}, {-INFINITY, -3, -0.0f}, {INFINITY, -2, 0}, {2, 0.5f, 1.41421354f},
        {10, 39, INFINITY}, {2, -149, 0x1p-149f}, {0x1p-149f, 0.5f, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float got = blk_pow_f32(cases[i][0], cases[i][1]), want = cases[i][2];
        if (i == sizeof cases / sizeof *cases - 1) want = (float)pow(0x1p-149, 0.5);
        cr_expect(got == want && signbit(got) == signbit(want), "pow(%g, %g) = %g, want %g", cases[i][0], cases[i][1],
                  got, want);
    }
    cr_expect(isnan(blk_pow_f32(-8, 1.0f / 3)) && isnan(blk_pow_f32(NAN, 1)) && isnan(blk_pow_f32(2, NAN)),
              "NaN for a negative base and a fractional power, and for NaN operands");
}

Test(numeric, math_library_special_values) {
    struct { BirOpcode op; float x, want; } cases[] = {
        {BIR_TANH, INFINITY, 1}, {BIR_TANH, -INFINITY, -1}, {BIR_TANH, -0.0f, -0.0f},
        {BIR_SIGMOID, INFINITY, 1}, {BIR_SIGMOID, -INFINITY, 0}, {BIR_SIGMOID, 0, 0.5f},
        {BIR_ERF, INFINITY, 1}, {BIR_ERF, -INFINITY, -1}, {BIR_ERF, -0.0f, -0.0f},
        {BIR_EXPM1, INFINITY, INFINITY}, {BIR_EXPM1, -INFINITY, -1}, {BIR_EXPM1, -0.0f, -0.0f},
        {BIR_LOG1P, INFINITY, INFINITY}, {BIR_LOG1P, -1, -INFINITY}, {BIR_LOG1P, -0.0f, -0.0f},
        {BIR_SIN, -0.0f, -0.0f}, {BIR_COS, 0, 1}, {BIR_SIN, 0x1p-100f, 0x1p-100f}, {BIR_COS, -0.0f, 1},
        {BIR_FLOOR, -2.5f, -3}, {BIR_CEIL, -2.5f, -2}, {BIR_TRUNC, -2.7f, -2}, {BIR_RINT, 2.5f, 2},
        {BIR_RINT, 3.5f, 4}, {BIR_ROUND, 2.5f, 3}, {BIR_ROUND, -2.5f, -3}, {BIR_FLOOR, -0.0f, -0.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float got = blk_math_f32(cases[i].op, cases[i].x);
        cr_expect(got == cases[i].want && signbit(got) == signbit(cases[i].want), "case %zu: f(%g) = %g, want %g", i,
                  cases[i].x, got, cases[i].want);
    }
    BirOpcode all[] = {BIR_TANH, BIR_SIGMOID, BIR_ERF, BIR_EXPM1, BIR_LOG1P, BIR_FLOOR, BIR_ROUND};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) cr_expect(isnan(blk_math_f32(all[i], NAN)), "NaN in, NaN out");
    cr_expect(isnan(blk_math_f32(BIR_LOG1P, -2)), "log1p below -1 is NaN");
    cr_expect(isnan(blk_math_f32(BIR_SIN, INFINITY)) && isnan(blk_math_f32(BIR_COS, -INFINITY)), "sin/cos of inf: NaN");
}

/* ------------------------------------------------------------------ fp8 */
/* An independent reference: a code's value from the format's definition,
 * and f32 -> fp8 by searching every finite code for the nearest (ties to
 * the even code), with one code past the largest for overflow: e4m3 (no
 * inf) gives NaN there, e5m2 inf, as PyTorch's float8_e4m3fn and
 * float8_e5m2 conversions do. */
typedef struct {
    DType d;
    int man, bias;
    bool ieee;
} RefFormat;

static const RefFormat ref_formats[] = {{DT_F8E4M3, 3, 7, false}, {DT_F8E5M2, 2, 15, true}};

static double ref_value(const RefFormat *f, int code) { /* code without the sign; NaN for the NaN codes */
    int e = code >> f->man, m = code & ((1 << f->man) - 1), top = (1 << (7 - f->man)) - 1;
    if (!f->ieee && code == 0x7f) return NAN;
    if (f->ieee && e == top) return m ? NAN : INFINITY;
    return e == 0 ? ldexp(m, 1 - f->bias - f->man) : ldexp(1.0 + ldexp(m, -f->man), e - f->bias);
}

static uint8_t ref_encode(const RefFormat *f, float x) {
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (x != x) return sign | 0x7f;
    double a = fabs((double)x);
    int best = -1, max_code = 0;
    for (int c = 0; c < 0x80; c++)
        if (isfinite(ref_value(f, c))) max_code = c;
    /* one past the largest finite value: the next value of its binade */
    double past = ref_value(f, max_code) + ldexp(1.0, (max_code >> f->man) - f->bias - f->man);
    if (a >= past) return sign | (f->ieee ? 0x7c : 0x7f);
    double best_err = INFINITY;
    for (int c = 0; c <= max_code + 1; c++) {
        double v = c <= max_code ? ref_value(f, c) : past;
        double err = fabs(a - v);
        if (err < best_err || (err == best_err && !(c & 1))) best = c, best_err = err;
    }
    if (best > max_code) return sign | (f->ieee ? 0x7c : 0x7f);
    return sign | (uint8_t)best;
}

Test(numeric, fp8_decodes_every_code_as_the_format_defines) {
    for (size_t k = 0; k < 2; k++) {
        const RefFormat *rf = &ref_formats[k];
        const Fp8Format *fmt = fp8_format(rf->d);
        cr_assert(fmt);
        for (int c = 0; c < 256; c++) {
            double want = ref_value(rf, c & 0x7f);
            if (c & 0x80) want = -want;
            float got = fp8_to_f32((uint8_t)c, fmt);
            if (want != want) cr_expect(got != got, "%s code %#x: NaN, got %g", dtype_name(rf->d), c, got);
            else cr_expect_eq(got, want, "%s code %#x: %g, got %g", dtype_name(rf->d), c, want, got);
        }
        /* PyTorch's NaN bits on the GPU: e4m3's 0x7f decodes to 0x7ff00000, e5m2's NaNs to 0x7fffffff */
        cr_expect_eq(bits(fp8_to_f32(0x7f, fp8_format(DT_F8E4M3))), 0x7ff00000u);
        cr_expect_eq(bits(fp8_to_f32(0xfd, fp8_format(DT_F8E5M2))), 0xffffffffu);
    }
}

Test(numeric, f32_to_fp8_rounds_to_nearest_even_and_overflows_as_pytorch) {
    for (size_t k = 0; k < 2; k++) {
        const RefFormat *rf = &ref_formats[k];
        const Fp8Format *fmt = fp8_format(rf->d);
        int checked = 0, wrong = 0;
        /* every f16 value (all exponents fp8 can reach and beyond), each code's
         * value, the midpoints between codes and one f32 ulp either side */
        for (uint32_t h = 0; h < 0x10000; h++) {
            float x = f16_to_f32((uint16_t)h);
            float xs[] = {x, nextafterf(x, INFINITY), nextafterf(x, -INFINITY)};
            for (int j = 0; j < 3; j++, checked++)
                if (f32_to_fp8(xs[j], fmt) != ref_encode(rf, xs[j])) wrong++;
        }
        for (int c = 0; c < 0x7f; c++) {
            float lo = (float)ref_value(rf, c), hi = (float)ref_value(rf, c + 1);
            if (!isfinite(hi)) continue;
            float mid = (lo + hi) / 2; /* exact: few bits */
            float xs[] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), -mid, 1e-30f, -1e-45f, 1e30f, -INFINITY};
            for (int j = 0; j < 8; j++, checked++) {
                uint8_t got = f32_to_fp8(xs[j], fmt), want = ref_encode(rf, xs[j]);
                if (got != want) wrong++;
                cr_expect_eq(got, want, "%s(%a): %#x, want %#x", dtype_name(rf->d), xs[j], got, want);
            }
        }
        cr_expect_eq(wrong, 0, "%s: %d of %d conversions differ from the reference", dtype_name(rf->d), wrong, checked);
    }
    /* the edges, as PyTorch gives them */
    const Fp8Format *e4 = fp8_format(DT_F8E4M3), *e5 = fp8_format(DT_F8E5M2);
    cr_expect_eq(f32_to_fp8(448.0f, e4), 0x7e);
    cr_expect_eq(f32_to_fp8(464.0f, e4), 0x7e, "the tie beyond 448 rounds to even, 448");
    cr_expect_eq(f32_to_fp8(464.5f, e4), 0x7f, "beyond: NaN, e4m3 has no inf");
    cr_expect_eq(f32_to_fp8(-INFINITY, e4), 0xff);
    cr_expect_eq(f32_to_fp8(57344.0f, e5), 0x7b);
    cr_expect_eq(f32_to_fp8(61440.0f, e5), 0x7c, "the tie beyond the largest goes to the even code, inf");
    cr_expect_eq(f32_to_fp8(-INFINITY, e5), 0xfc);
    cr_expect_eq(f32_to_fp8(NAN, e5), 0x7f);
}

/* `as` between the integer types and from floats: wrap, saturate, NaN to 0;
 * f64 to f16 and to fp8 go through f32 (PyTorch's rule). */
Test(numeric, conversions_between_all_widths) {
    struct { DType from, to; ConstVal v; int64_t want; } ints[] = {
        {DT_I32, DT_I8, {.i = 200}, -56},         {DT_I32, DT_U8, {.i = -1}, 255},
        {DT_I64, DT_I16, {.i = 70000}, 4464},     {DT_I8, DT_U16, {.i = -2}, 65534},
        {DT_U8, DT_I8, {.i = 255}, -1},           {DT_I32, DT_U64, {.i = -1}, -1 /* all ones */},
        {DT_U64, DT_I32, {.i = -1}, -1},          {DT_F32, DT_I8, {.f = 300.7}, 127},
        {DT_F32, DT_I8, {.f = -300.7}, -128},     {DT_F32, DT_U8, {.f = -5.0}, 0},
        {DT_F32, DT_U16, {.f = 65535.9}, 65535},  {DT_F32, DT_I16, {.f = NAN}, 0},
        {DT_F64, DT_U64, {.f = 1e19}, (int64_t)UINT64_C(10000000000000000000)},
        {DT_F64, DT_U64, {.f = 1e30}, -1},        {DT_F64, DT_I64, {.f = -1e30}, INT64_MIN},
        {DT_F8E4M3, DT_I8, {.f = -448.0}, -128},
    };
    for (size_t k = 0; k < sizeof ints / sizeof *ints; k++) {
        int64_t got = convert_scalar(ints[k].v, ints[k].from, ints[k].to).i;
        cr_expect_eq(got, ints[k].want, "%s -> %s: %lld, want %lld", dtype_name(ints[k].from), dtype_name(ints[k].to),
                     (long long)got, (long long)ints[k].want);
    }
    /* u64 to floats: the unsigned value, one rounding */
    cr_expect_eq(convert_scalar((ConstVal){.i = -1}, DT_U64, DT_F64).f, 18446744073709551616.0);
    cr_expect_eq(convert_scalar((ConstVal){.i = -1}, DT_U64, DT_F32).f, 18446744073709551616.0);
    cr_expect_eq(convert_scalar((ConstVal){.i = -1}, DT_U64, DT_F16).f, INFINITY);
    /* 1 + 2^-11 + 2^-40: f16 rounds it up once, but through f32 it is the tie 1 + 2^-11, to even: 1 */
    double x = 1.0 + ldexp(1, -11) + ldexp(1, -40);
    cr_expect_eq(convert_scalar((ConstVal){.f = x}, DT_F64, DT_F16).f, 1.0);
    cr_expect_eq(convert_scalar((ConstVal){.f = x}, DT_F64, DT_F32).f, 1.0 + ldexp(1, -11));
    cr_expect_eq(convert_scalar((ConstVal){.f = x}, DT_F64, DT_F64).f, x);
    cr_expect_eq(convert_scalar((ConstVal){.i = 300}, DT_I32, DT_F8E4M3).f, 288.0);
    cr_expect_eq(convert_scalar((ConstVal){.f = -0.09375}, DT_F8E5M2, DT_F32).f, -0.09375, "fp8 to f32 keeps the value");
}

/* scalar_binary: the arithmetic constant folding and the interpreter share.
 * Expected values are written from the language's rules (docs/language.md §8),
 * not from the function: wrap to the type, x / 0 all ones, x % 0 x, shifts
 * clamped; flags for what folding refuses. */
static int64_t int_op(BirOpcode op, int64_t a, int64_t b, DType d, unsigned *flags) {
    *flags = 0;
    return scalar_binary(op, (ConstVal){.i = a}, (ConstVal){.i = b}, d, flags).i;
}

Test(numeric, scalar_integer_arithmetic_wraps_and_flags_what_folding_refuses) {
    unsigned f;
    cr_expect_eq(int_op(BIR_ADD, INT32_MAX, 1, DT_I32, &f), INT32_MIN);
    cr_expect_eq(f, SCALAR_SIGNED_OVERFLOW);
    cr_expect_eq(int_op(BIR_ADD, UINT32_MAX, 1, DT_U32, &f), 0); /* unsigned wraps, as in C: no flag */
    cr_expect_eq(f, 0);
    cr_expect_eq(int_op(BIR_MUL, INT64_MAX, 2, DT_I64, &f), -2);
    cr_expect_eq(f, SCALAR_SIGNED_OVERFLOW);
    cr_expect_eq(int_op(BIR_SUB, -100, 28, DT_I8, &f), -128);
    cr_expect_eq(f, 0);
    cr_expect_eq(int_op(BIR_DIV, 7, 0, DT_I32, &f), -1); /* all ones */
    cr_expect_eq(f, SCALAR_DIVIDE_BY_ZERO);
    cr_expect_eq(int_op(BIR_DIV, 7, 0, DT_U16, &f), 0xffff);
    cr_expect_eq(int_op(BIR_REM, 7, 0, DT_I32, &f), 7);
    cr_expect_eq(f, SCALAR_DIVIDE_BY_ZERO);
    cr_expect_eq(int_op(BIR_DIV, INT32_MIN, -1, DT_I32, &f), INT32_MIN); /* MIN / -1 wraps */
    cr_expect_eq(f, SCALAR_SIGNED_OVERFLOW);
    cr_expect_eq(int_op(BIR_DIV, INT64_MIN, -1, DT_I64, &f), INT64_MIN);
    cr_expect_eq(f, SCALAR_SIGNED_OVERFLOW);
    cr_expect_eq(int_op(BIR_REM, INT64_MIN, -1, DT_I64, &f), 0); /* exact: no overflow */
    cr_expect_eq(f, 0);
    cr_expect_eq(int_op(BIR_DIV, -7, 2, DT_I32, &f), -3); /* toward zero */
    cr_expect_eq(int_op(BIR_REM, -7, 2, DT_I32, &f), -1);
    cr_expect_eq(int_op(BIR_DIV, 0xfffffff0, 16, DT_U32, &f), 0x0fffffff); /* unsigned division */
    cr_expect_eq(int_op(BIR_SHL, 1, 31, DT_I32, &f), INT32_MIN);
    cr_expect_eq(f, SCALAR_SIGNED_OVERFLOW);
    cr_expect_eq(int_op(BIR_SHL, 1, 32, DT_I32, &f), 0); /* out of range: clamped */
    cr_expect_eq(f, SCALAR_SHIFT_OUT_OF_RANGE);
    cr_expect_eq(int_op(BIR_SHR, -8, 40, DT_I32, &f), -1);
    cr_expect_eq(f, SCALAR_SHIFT_OUT_OF_RANGE);
    cr_expect_eq(int_op(BIR_SHR, -8, 1, DT_I32, &f), -4); /* arithmetic */
    cr_expect_eq(int_op(BIR_SHR, 0x80000000, 4, DT_U32, &f), 0x08000000); /* logical */
    cr_expect_eq(int_op(BIR_UMULHI, 0xffffffff, 0xffffffff, DT_U32, &f), 0xfffffffe);
    cr_expect_eq(int_op(BIR_MIN, -1, 1, DT_U64, &f), 1); /* u64's bits compare unsigned */
    cr_expect_eq(int_op(BIR_MAX, -1, 1, DT_I64, &f), 1);
}

Test(numeric, scalar_float_arithmetic_rounds_once_to_the_type) {
    unsigned f = 0;
    ConstVal a = {.f = 1.0}, b = {.f = 1.0 / 4096}; /* 1 + 2^-12 is between two f16 values: ties to even */
    cr_expect_eq(scalar_binary(BIR_ADD, a, b, DT_F16, &f).f, 1.0);
    cr_expect_eq(scalar_binary(BIR_ADD, a, b, DT_F32, &f).f, 1.0 + 1.0 / 4096);
    ConstVal third = scalar_binary(BIR_DIV, a, (ConstVal){.f = 3.0}, DT_F32, &f);
    cr_expect_eq(third.f, (double)(1.0f / 3.0f));
    cr_expect(isnan(scalar_binary(BIR_MAX, a, (ConstVal){.f = NAN}, DT_F32, &f).f));
    cr_expect_eq(f, 0);
    cr_expect(scalar_compare(BIR_NE, (ConstVal){.f = NAN}, (ConstVal){.f = NAN}, DT_F32));
    cr_expect_not(scalar_compare(BIR_EQ, (ConstVal){.f = NAN}, (ConstVal){.f = NAN}, DT_F32));
    cr_expect(scalar_compare(BIR_LT, (ConstVal){.i = 1}, (ConstVal){.i = -1}, DT_U64));
    cr_expect(scalar_compare(BIR_GT, (ConstVal){.i = 1}, (ConstVal){.i = -1}, DT_I64));
}
