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
    cr_expect(parse_int_literal("0", 1, &i, &why) && i == 0);
    cr_expect(parse_int_literal("9223372036854775807", 19, &i, &why) && i == INT64_MAX);
    cr_expect_not(parse_int_literal("9223372036854775808", 19, &i, &why));
    cr_expect(strstr(why, "too large"));
    cr_expect(parse_int_literal("0x7FFFFFFFFFFFFFFF", 18, &i, &why) && i == INT64_MAX);
    cr_expect_not(parse_int_literal("0x8000000000000000", 18, &i, &why));
    cr_expect_not(parse_int_literal("0777", 4, &i, &why));
    cr_expect(strstr(why, "octal"));
    cr_expect(parse_int_literal("1234xyz", 4, &i, &why) && i == 1234, "text need not end at len");
    cr_expect_not(parse_int_literal("0x", 2, &i, &why));
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
