/* numeric.c: bit-exact scalar semantics shared by the interpreter and the C
 * references: Triton's tl.rand (Philox4x32-10), f16/bf16/fp8 conversions with
 * round-to-nearest-even, and the conversions of `as` between all dtypes. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

static uint32_t mulhi32(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }

void philox_randint4x(int64_t seed, uint64_t offset, uint32_t out[4]) {
    /* design-notes §2: key from the (sign-extended) seed, counter from the offset */
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)((uint64_t)seed >> 32);
    uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32), c2 = 0, c3 = 0;
    for (int round = 0; round < 10; round++) {
        uint32_t n0 = mulhi32(0xCD9E8D57u, c2) ^ c1 ^ k0;
        uint32_t n2 = mulhi32(0xD2511F53u, c0) ^ c3 ^ k1;
        uint32_t n1 = 0xCD9E8D57u * c2;
        uint32_t n3 = 0xD2511F53u * c0;
        c0 = n0;
        c1 = n1;
        c2 = n2;
        c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

uint32_t philox_word(int64_t seed, uint64_t offset, int word) {
    uint32_t w[4];
    philox_randint4x(seed, offset, w);
    return w[word & 3];
}

uint32_t philox_randint(int64_t seed, uint64_t offset) { return philox_word(seed, offset, 0); }

float philox_uniform(uint32_t word) {
    int32_t x = (int32_t)word;
    if (x < 0) x = ~x; /* -x - 1, without overflow at INT32_MIN */
    return (float)x * 4.6566127342e-10f;
}

float philox_rand(int64_t seed, uint64_t offset) { return philox_uniform(philox_randint(seed, offset)); }

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant << 13)); /* inf, NaN */
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in f32 */
        float v = (float)mant * 5.9604644775390625e-08f;
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t exp = (u >> 23) & 0xff, mant = u & 0x7fffff;
    if (exp == 0xff) return sign | 0x7c00 | (mant ? 0x200 | (uint16_t)(mant >> 13) : 0);
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f) return sign | 0x7c00; /* overflow to inf */
    if (e <= 0) {
        /* subnormal or zero in f16: shift the full significand, round to even */
        if (e < -10) return sign;
        uint32_t m = mant | 0x800000;
        int shift = 14 - e;
        uint32_t half = 1u << (shift - 1);
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t r = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++; /* may carry into inf: correct */
    return sign | (uint16_t)r;
}

float bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

/* fp8 (OCP formats, as PyTorch's float8_e4m3fn and float8_e5m2). e4m3 has
 * no infinities: 0x7f is NaN and everything beyond 448 converts to NaN;
 * e5m2 is IEEE-like (inf 0x7c, NaNs above). nvptx/elementwise.c issues the
 * same integer operations on the GPU. */
static const Fp8Format fp8_formats[] = {
    {DT_F8E4M3, 3, 7, 0x7e, false},
    {DT_F8E5M2, 2, 15, 0x7b, true},
};

const Fp8Format *fp8_format(DType d) {
    for (size_t i = 0; i < sizeof fp8_formats / sizeof *fp8_formats; i++)
        if (fp8_formats[i].dtype == d) return &fp8_formats[i];
    return NULL;
}

uint8_t f32_to_fp8(float f, const Fp8Format *fmt) {
    uint32_t u = f32_bits(f), a = u & 0x7fffffffu;
    uint8_t sign = (uint8_t)((u >> 24) & 0x80);
    int drop = 23 - fmt->man_bits, emin = 1 - fmt->bias;
    uint32_t code;
    if (a < (uint32_t)(emin + 127) << 23) {
        /* below the smallest normal: the code is |f| in units of the smallest
         * subnormal, rounded to even (exact scaling; 2^man_bits is the smallest normal) */
        code = (uint32_t)rintf(bits_f32(a) * ldexpf(1.0f, fmt->man_bits - emin));
    } else {
        /* round the dropped mantissa bits to even, then rebase the exponent */
        uint32_t r = a + ((1u << (drop - 1)) - 1) + ((a >> drop) & 1);
        code = (r >> drop) - ((uint32_t)(127 - fmt->bias) << fmt->man_bits);
    }
    if (a > 0x7f800000u) code = 0x7f; /* NaN */
    else if (code > fmt->max_finite) code = fmt->ieee ? fmt->max_finite + 1u : 0x7fu; /* inf, or NaN for e4m3 */
    return (uint8_t)(sign | code);
}

float fp8_to_f32(uint8_t c, const Fp8Format *fmt) {
    uint32_t sign = (uint32_t)(c & 0x80) << 24, mag = c & 0x7fu;
    uint32_t e = mag >> fmt->man_bits, m = mag & ((1u << fmt->man_bits) - 1);
    int shift = 23 - fmt->man_bits;
    /* NaN as PyTorch on the GPU gives it: e4m3's 0x7f as 0x7ff00000, e5m2's NaNs all as 0x7fffffff */
    if (!fmt->ieee && mag == 0x7f) return bits_f32(sign | 0x7ff00000u);
    if (fmt->ieee && e == (1u << (7 - fmt->man_bits)) - 1) return bits_f32(sign | (m ? 0x7fffffffu : 0x7f800000u));
    if (e == 0) { /* zero or subnormal: m units of 2^(1 - bias - man_bits), exact */
        float v = ldexpf((float)m, 1 - fmt->bias - fmt->man_bits);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((e + 127 - (uint32_t)fmt->bias) << 23) | (m << shift));
}

/* An integer as an f32 rounded to odd: exact when it fits in 24 bits, else
 * its top 24 bits with the lowest one set if any bit below was dropped. A
 * second rounding of this to f16 or bf16 then equals rounding the integer
 * once (f32 keeps more than two extra bits), which a plain (float) would not. */
static float magnitude_to_f32_round_odd(uint64_t m, bool negative) {
    int bits = 64 - __builtin_clzll(m | 1);
    if (bits <= 24) return negative ? -(float)m : (float)m;
    int shift = bits - 24;
    uint64_t top = m >> shift;
    if (m & ((UINT64_C(1) << shift) - 1)) top |= 1;
    float f = ldexpf((float)top, shift);
    return negative ? -f : f;
}

/* v of integer dtype `from` (u64 held as its bits) as an f32, rounded to odd */
static float int_to_f32_round_odd(int64_t x, DType from) {
    if (dtype_is_unsigned(from)) return magnitude_to_f32_round_odd((uint64_t)x, false);
    return magnitude_to_f32_round_odd(x < 0 ? 0 - (uint64_t)x : (uint64_t)x, x < 0);
}

static float int_to_f32(int64_t x, DType from) { return dtype_is_unsigned(from) ? (float)(uint64_t)x : (float)x; }

/* An integer of dtype `from` as the nearest double (one rounding) */
static double int_to_double(int64_t x, DType from) { return dtype_is_unsigned(from) ? (double)(uint64_t)x : (double)x; }

/* An f32 as a value of the float or fp8 dtype `to` (rounded to nearest even) */
static double narrow_float(float f, DType to) {
    if (to == DT_F16) return f16_to_f32(f32_to_f16(f));
    if (to == DT_BF16) return bf16_to_f32(f32_to_bf16(f));
    const Fp8Format *fmt = fp8_format(to);
    if (fmt) return fp8_to_f32(f32_to_fp8(f, fmt), fmt);
    return f;
}

int64_t int_wrap(int64_t v, DType to) {
    int bits = dtype_bits(to);
    if (bits >= 64) return v;
    uint64_t low = (uint64_t)v & ((UINT64_C(1) << bits) - 1);
    if (dtype_is_signed(to) && (low >> (bits - 1))) return (int64_t)(low | ~((UINT64_C(1) << bits) - 1));
    return (int64_t)low;
}

/* ------------------------------------------------------ scalar arithmetic */

/* A double rounded to the float dtype d (once, to nearest even). */
static double round_to(double x, DType d) {
    if (d == DT_F64) return x;
    float f = (float)x;
    if (d == DT_F16) return f16_to_f32(f32_to_f16(f));
    if (d == DT_BF16) return bf16_to_f32(f32_to_bf16(f));
    return f;
}

/* scalar_binary's and scalar_compare's switches name each op of the TYPES
 * rules (ops.def) they take and take every other op's label from
 * ops_cases.inc: a new op of those rules that one does not name is a build
 * error, an op of another rule needs nothing here. */

static double float_binary(BirOpcode op, double a, double b, DType d) {
    double v = NAN;
    switch (op) {
    case BIR_ADD: v = a + b; break;
    case BIR_SUB: v = a - b; break;
    case BIR_MUL: v = a * b; break;
    case BIR_DIV: v = a / b; break;
    case BIR_REM: v = fmod(a, b); break;
    /* NaN propagates through min and max */
    case BIR_MIN: v = a != a || b != b ? NAN : a < b ? a : b; break;
    case BIR_MAX: v = a != a || b != b ? NAN : a > b ? a : b; break;
    case BIR_POW: v = blk_pow_f32((float)a, (float)b); break;
    case BIR_NEG: case BIR_ABS: break; /* of one operand */
#define OPS_TAKES_TYPES_NUMBER
#define OPS_TAKES_TYPES_F32
#include "ops_cases.inc"
    case BIR_OPCODE_COUNT: break;
    }
    return round_to(v, d);
}

/* a < b for integers of dtype d (u64 compares its bits unsigned) */
static bool int_less(int64_t a, int64_t b, DType d) { return dtype_is_unsigned(d) ? (uint64_t)a < (uint64_t)b : a < b; }

/* v wrapped to d; *flags gets SCALAR_SIGNED_OVERFLOW where d is signed and
 * the exact result (v, unless overflowed64) is not one of its values. */
static int64_t wrap_exact(int64_t v, bool overflowed64, DType d, unsigned *flags) {
    if (dtype_is_signed(d) && (overflowed64 || !dtype_fits_int(d, v))) *flags |= SCALAR_SIGNED_OVERFLOW;
    return int_wrap(v, d);
}

static int64_t int_binary(BirOpcode op, int64_t a, int64_t b, DType d, unsigned *flags) {
    int64_t v;
    bool unsigned_ = dtype_is_unsigned(d);
    switch (op) {
    case BIR_ADD: return wrap_exact((int64_t)((uint64_t)a + (uint64_t)b), !unsigned_ && __builtin_add_overflow(a, b, &v), d, flags);
    case BIR_SUB: return wrap_exact((int64_t)((uint64_t)a - (uint64_t)b), !unsigned_ && __builtin_sub_overflow(a, b, &v), d, flags);
    case BIR_MUL: return wrap_exact((int64_t)((uint64_t)a * (uint64_t)b), !unsigned_ && __builtin_mul_overflow(a, b, &v), d, flags);
    case BIR_DIV:
    case BIR_REM: {
        /* x / 0 is undefined on the GPU: all ones (and x % 0 gives x) rather
         * than a trap, since masked-off lanes may divide by anything. MIN / -1
         * wraps. Unsigned values are normalized (zero-extended), so dividing
         * their bits as uint64 is right for all widths. */
        bool rem = op == BIR_REM;
        if (b == 0) {
            *flags |= SCALAR_DIVIDE_BY_ZERO;
            return rem ? a : int_wrap(-1, d);
        }
        if (unsigned_) return (int64_t)(rem ? (uint64_t)a % (uint64_t)b : (uint64_t)a / (uint64_t)b);
        if (b == -1) return rem ? 0 : wrap_exact((int64_t)(0 - (uint64_t)a), a == INT64_MIN, d, flags);
        return rem ? a % b : a / b;
    }
    case BIR_AND: return a & b;
    case BIR_OR: return a | b;
    case BIR_XOR: return a ^ b;
    case BIR_SHL:
    case BIR_SHR: {
        int bits = dtype_bits(d);
        if (b < 0 || b >= bits) { /* clamped to the width, as PTX's shl/shr do */
            *flags |= SCALAR_SHIFT_OUT_OF_RANGE;
            return op == BIR_SHL || !dtype_is_signed(d) ? 0 : a < 0 ? -1 : 0;
        }
        if (op == BIR_SHL) return wrap_exact((int64_t)((uint64_t)a << b), false, d, flags);
        return dtype_is_signed(d) ? a >> b : (int64_t)((uint64_t)a >> b);
    }
    case BIR_UMULHI: /* the high word of the unsigned product of the 32-bit patterns */
        return int_wrap((int64_t)(((uint64_t)(uint32_t)a * (uint32_t)b) >> 32), d);
    case BIR_MIN: return int_less(a, b, d) ? a : b;
    case BIR_MAX: return int_less(b, a, d) ? a : b;
    case BIR_NEG: case BIR_ABS: case BIR_NOT: return 0; /* of one operand */
#define OPS_TAKES_TYPES_NUMBER
#define OPS_TAKES_TYPES_BITS
#define OPS_TAKES_TYPES_INTEGER
#define OPS_TAKES_TYPES_INT32
#include "ops_cases.inc"
    case BIR_OPCODE_COUNT: return 0;
    }
    return 0;
}

ConstVal scalar_binary(BirOpcode op, ConstVal a, ConstVal b, DType d, unsigned *flags) {
    if (dtype_is_float(d)) return (ConstVal){.f = float_binary(op, a.f, b.f, d)};
    return (ConstVal){.i = int_binary(op, a.i, b.i, d, flags)};
}

bool scalar_compare(BirOpcode op, ConstVal a, ConstVal b, DType d) {
    bool lt, eq, gt;
    if (dtype_is_float(d)) lt = a.f < b.f, eq = a.f == b.f, gt = a.f > b.f;
    else lt = int_less(a.i, b.i, d), eq = a.i == b.i, gt = int_less(b.i, a.i, d);
    switch (op) {
    case BIR_EQ: return eq;
    case BIR_NE: return !eq;
    case BIR_LT: return lt;
    case BIR_LE: return lt || eq;
    case BIR_GT: return gt;
    case BIR_GE: return gt || eq;
#define OPS_TAKES_TYPES_COMPARE
#include "ops_cases.inc"
    case BIR_OPCODE_COUNT: return false;
    }
    return false;
}

/* A float truncated toward zero into the integer dtype `to`, saturating; NaN gives 0 (PTX cvt.rzi) */
static int64_t float_to_int(double f, DType to) {
    if (f != f) return 0;
    int bits = dtype_bits(to);
    if (dtype_is_unsigned(to)) {
        double top = ldexp(1.0, bits); /* 2^bits: the first value out of range */
        if (f <= 0) return 0;
        if (f >= top) return bits == 64 ? -1 : (int64_t)((UINT64_C(1) << bits) - 1); /* all ones */
        return (int64_t)(uint64_t)f;
    }
    double top = ldexp(1.0, bits - 1);
    if (f >= top) return (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    if (f <= -top) return bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    return (int64_t)f;
}

ConstVal convert_scalar(ConstVal v, DType from, DType to) {
    ConstVal out = {0};
    bool from_float = dtype_is_float(from) || dtype_is_fp8(from);
    if (to == DT_F64) {
        out.f = from_float ? v.f : int_to_double(v.i, from);
        return out;
    }
    if (dtype_is_float(to) || dtype_is_fp8(to)) {
        /* f64 to f16/bf16 and anything to fp8 go through f32, as in PyTorch */
        float f = from_float ? (float)v.f
                  : to == DT_F32 || dtype_is_fp8(to) ? int_to_f32(v.i, from) /* one rounding */
                  : int_to_f32_round_odd(v.i, from);
        out.f = narrow_float(f, to);
        return out;
    }
    if (to == DT_I1) {
        out.i = from_float ? v.f != 0.0 : v.i != 0;
        return out;
    }
    out.i = from_float ? float_to_int(v.f, to) : int_wrap(v.i, to);
    return out;
}

float f32_to_tf32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) { /* finite: round the 13 dropped bits, ties away from zero */
        u += 0x1000u;
        u &= ~0x1fffu;
    }
    memcpy(&f, &u, 4);
    return f;
}

/* ------------------------------------------------------------------ math */
/* blk's own f32 functions (tanh, sigmoid, erf, expm1, log1p): IEEE
 * operations only (fma, +, -, *, correctly rounded /, rint, comparisons,
 * bit moves), so that compiler/nvptx/mathlib.c, which issues the same
 * operations in the same order, gives the same bits on the GPU. Each
 * function's paths are all computed there and selected; here they branch,
 * which gives the same result. Coefficients: mathlib.h. */
#include "mathlib.h"

static float horner(const float *c, int n, float x) {
    float p = c[n - 1];
    for (int i = n - 2; i >= 0; i--) p = fmaf(p, x, c[i]);
    return p;
}

/* 2^k for k in [-126, 127], from its bits */
static float pow2i(int32_t k) {
    uint32_t u = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float mathlib_exp(float x) {
    if (x != x) return x;
    float xc = x > 89.0f ? 89.0f : x;
    xc = xc < -104.0f ? -104.0f : xc;
    float k = rintf(xc * MATHLIB_LOG2E);
    float r = fmaf(-k, MATHLIB_LN2_HI, xc);
    r = fmaf(-k, MATHLIB_LN2_LO, r);
    float p = horner(MATHLIB_EXP, 8, r);
    int32_t ki = (int32_t)k, k1 = ki / 2; /* two steps: 2^k itself may not be a float */
    return p * pow2i(k1) * pow2i(ki - k1);
}

static float math_tanh(float x) {
    float a = fabsf(x);
    if (x == 0.0f) return x; /* -0 stays -0 */
    if (a < 0.625f) {
        float x2 = x * x;
        return fmaf(x * x2, horner(MATHLIB_TANH_SMALL, 8, x2), x);
    }
    if (a >= 9.0f) return copysignf(1.0f, x);
    return copysignf(1.0f - 2.0f / (mathlib_exp(2.0f * a) + 1.0f), x);
}

/* with e = exp(-|x|) <= 1, so nothing overflows: 1/(1+e) for x >= 0, e/(1+e) below */
static float math_sigmoid(float x) {
    float e = mathlib_exp(-fabsf(x));
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

static float math_erf(float x) {
    float a = fabsf(x);
    if (x != x) return x;
    if (a < 1.0f) return x * horner(MATHLIB_ERF_SMALL, 8, x * x);
    if (a >= 4.0f) return copysignf(1.0f, x);
    float a2 = a * a, lo = fmaf(a, a, -a2); /* a^2 = a2 + lo exactly */
    float e = mathlib_exp(-a2);
    e = fmaf(e, -lo, e); /* exp(-a2 - lo) */
    return copysignf(1.0f - e * horner(MATHLIB_ERFC_SCALED, 15, a - 2.5f), x);
}

static float math_expm1(float x) {
    if (x == 0.0f) return x; /* -0 stays -0 */
    if (fabsf(x) < 0.5f) return fmaf(x * x, horner(MATHLIB_EXPM1_SMALL, 9, x), x);
    return mathlib_exp(x) - 1.0f;
}

static float math_log1p(float x) {
    if (x != x || x == INFINITY) return x;
    if (x < -1.0f) return NAN;
    if (x == -1.0f) return -INFINITY;
    if (x == 0.0f) return x; /* -0 stays -0 */
    float u = 1.0f + x;
    float c = (x - (u - 1.0f)) / u; /* what rounding 1 + x lost, relative to u */
    uint32_t bits;
    memcpy(&bits, &u, 4);
    int32_t e = (int32_t)(bits >> 23) - 127;
    uint32_t mbits = (bits & 0x7fffffu) | 0x3f800000u;
    float m;
    memcpy(&m, &mbits, 4);
    if (m > MATHLIB_SQRT2) {
        m = m * 0.5f;
        e = e + 1;
    }
    float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    float log_m = fmaf(s * s2, horner(MATHLIB_LOG, 5, s2), 2.0f * s);
    float fe = (float)e;
    return fe * MATHLIB_LN2_HI + fmaf(fe, MATHLIB_LN2_LO, log_m) + c;
}

/* sin and cos: x = k pi/2 + r with |r| <= pi/4 (pi/2 in three parts, each
 * step one fma), then the polynomial of the quadrant k mod 4. Accurate while
 * k pi/2 is, for |x| up to about 1e5; NaN for infinities. */
static float reduce_pio2(float x, float *quadrant) {
    float k = rintf(x * MATHLIB_2_OVER_PI);
    float r = fmaf(-k, MATHLIB_PIO2_1, x);
    r = fmaf(-k, MATHLIB_PIO2_2, r);
    r = fmaf(-k, MATHLIB_PIO2_3, r);
    *quadrant = k - 4.0f * floorf(k * 0.25f); /* 0, 1, 2 or 3 (NaN for NaN) */
    return r;
}

static float sin_poly(float r) {
    float r2 = r * r;
    return fmaf(r * r2, horner(MATHLIB_SIN, 5, r2), r);
}

static float cos_poly(float r) {
    float r2 = r * r;
    return fmaf(r2, fmaf(r2, horner(MATHLIB_COS, 5, r2), -0.5f), 1.0f);
}

/* sin of quadrant q + r: sin r, cos r, -sin r, -cos r */
static float by_quadrant(float q, float s, float c) { return q == 0.0f ? s : q == 1.0f ? c : q == 2.0f ? -s : -c; }

static float math_sin(float x) {
    if (x == 0.0f) return x; /* -0 stays -0 */
    float q, r = reduce_pio2(x, &q);
    return by_quadrant(q, sin_poly(r), cos_poly(r));
}

static float math_cos(float x) {
    float q, r = reduce_pio2(x, &q);
    return by_quadrant(q == 3.0f ? 0.0f : q + 1.0f, sin_poly(r), cos_poly(r)); /* cos x = sin(x + pi/2) */
}

/* pow: |x|^y = exp(y log|x|) in double (IEEE double operations only, the
 * same on the GPU), rounded once to f32, so within 0.5 ulp plus the double
 * computation's ~1e-14; the special cases of C's powf around it. */
static double horner_d(const double *c, int n, double x) {
    double p = c[n - 1];
    for (int i = n - 2; i >= 0; i--) p = fma(p, x, c[i]);
    return p;
}

static const double SQRT2_D = 1.4142135623730951, INV_LN2_D = 1.4426950408889634;

/* |x|^y for a finite nonzero |x| and a finite y; its log is log1p's reduction, in double */
static double pow_core(float ax, float y) {
    double d = ax; /* exact, f32 subnormals included */
    uint64_t bits;
    memcpy(&bits, &d, 8);
    int64_t e = (int64_t)(bits >> 52) - 1023;
    uint64_t mbits = (bits & 0xfffffffffffffull) | 0x3ff0000000000000ull;
    double m;
    memcpy(&m, &mbits, 8);
    if (m > SQRT2_D) {
        m = m * 0.5;
        e = e + 1;
    }
    double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    double log_m = fma(s * s2, horner_d(MATHLIB_LOG_D, 10, s2), 2.0 * s);
    double fe = (double)e;
    double t = (double)y * fma(fe, MATHLIB_LN2_D_HI, fma(fe, MATHLIB_LN2_D_LO, log_m));
    t = t > 90.0 ? 90.0 : t; /* beyond, the f32 result is inf or 0 either way */
    t = t < -110.0 ? -110.0 : t;
    double k = rint(t * INV_LN2_D);
    double r = fma(-k, MATHLIB_LN2_D_HI, t);
    r = fma(-k, MATHLIB_LN2_D_LO, r);
    uint64_t scale = (uint64_t)((int64_t)k + 1023) << 52;
    double two_k;
    memcpy(&two_k, &scale, 8);
    return horner_d(MATHLIB_EXP_D, 13, r) * two_k;
}

float blk_pow_f32(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (x != x || y != y) return NAN;
    float ax = fabsf(x), half = y * 0.5f;
    bool y_int = truncf(y) == y, y_odd = y_int && truncf(half) != half;
    if (fabsf(y) == INFINITY) return ax == 1.0f ? 1.0f : (ax < 1.0f) == (y < 0.0f) ? INFINITY : 0.0f;
    if (x < 0.0f && !y_int) return NAN;
    float sign = signbit(x) && y_odd ? -1.0f : 1.0f;
    if (ax == 0.0f) return copysignf(y < 0.0f ? INFINITY : 0.0f, sign);
    if (ax == INFINITY) return copysignf(y < 0.0f ? 0.0f : INFINITY, sign);
    return copysignf((float)pow_core(ax, y), sign);
}

/* One function per MATH_OP row of ops.def; a row without one fails to build. */
static float math_exp(float x) { return expf(x); }
static float math_exp2(float x) { return exp2f(x); }
static float math_log(float x) { return logf(x); }
static float math_log2(float x) { return log2f(x); }
static float math_sqrt(float x) { return sqrtf(x); }
static float math_rsqrt(float x) { return 1.0f / sqrtf(x); }
static float math_floor(float x) { return floorf(x); }
static float math_ceil(float x) { return ceilf(x); }
static float math_trunc(float x) { return truncf(x); }
static float math_rint(float x) { return rintf(x); } /* to nearest, ties to even */
static float math_round(float x) { return roundf(x); } /* to nearest, ties away from zero */

/* indexed by opcode: an entry for each MATH_OP row, none for other ops (the
 * callers pass only MATH_OP opcodes) */
static float (*const math_f32[BIR_OPCODE_COUNT])(float) = {
#define BIR_OP(...)
#define MATH_OP(ID, fn) [BIR_##ID] = math_##fn,
#include "ops.def"
};

float blk_math_f32(BirOpcode code, float x) { return math_f32[code](x); }

/* The math functions exact in any precision (correctly rounded, or exact
 * by nature), which therefore also take f64: the table sema, the lowering,
 * the interpreter and the GPU all ask. */
static const struct {
    BirOpcode code;
    double (*fn)(double);
} exact_in_f64[] = {
    {BIR_SQRT, sqrt}, {BIR_FLOOR, floor}, {BIR_CEIL, ceil}, {BIR_TRUNC, trunc}, {BIR_RINT, rint}, {BIR_ROUND, round},
};

bool blk_math_has_f64(BirOpcode code) {
    for (size_t i = 0; i < sizeof exact_in_f64 / sizeof *exact_in_f64; i++)
        if (exact_in_f64[i].code == code) return true;
    return false;
}

double blk_math_f64(BirOpcode code, double x) {
    for (size_t i = 0; i < sizeof exact_in_f64 / sizeof *exact_in_f64; i++)
        if (exact_in_f64[i].code == code) return exact_in_f64[i].fn(x);
    return NAN; /* callers ask blk_math_has_f64 first */
}

bool parse_int_literal(const char *text, size_t len, int64_t *out, bool *above_i64, const char **why) {
    bool hex = len > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    size_t i = hex ? 2 : 0;
    if (i == len) {
        *why = "is not a number";
        return false;
    }
    if (!hex && len > 1 && text[0] == '0') {
        *why = "has a leading zero; blk has no octal literals (write it in decimal, or 0x for hex)";
        return false;
    }
    uint64_t v = 0, base = hex ? 16 : 10;
    for (; i < len; i++) {
        char c = text[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                              : -1;
        if (d < 0) {
            *why = "is not a number";
            return false;
        }
        uint64_t limit = above_i64 ? UINT64_MAX : (uint64_t)INT64_MAX;
        if (v > (limit - (uint64_t)d) / base) {
            *why = above_i64 ? "is too large for u64" : "is too large for i64";
            return false;
        }
        v = v * base + (uint64_t)d;
    }
    *out = (int64_t)v;
    if (above_i64) *above_i64 = v > (uint64_t)INT64_MAX;
    return true;
}

bool parse_float_literal(const char *text, size_t len, double *out, const char **why) {
    /* strtod needs a terminated copy; literals can be any length, so never cut one */
    char *copy = malloc(len + 1);
    if (!copy) {
        *why = "could not be read (out of memory)";
        return false;
    }
    memcpy(copy, text, len);
    copy[len] = 0;
    char *end;
    errno = 0;
    double v = strtod(copy, &end);
    bool whole = len > 0 && end == copy + len;
    free(copy);
    if (!whole) {
        *why = "is not a number";
        return false;
    }
    if (!(fabs(v) <= (double)FLT_MAX)) {
        *why = "is out of range for f32";
        return false;
    }
    /* strtod gives 0 with ERANGE for a nonzero literal below double's range */
    if ((v == 0 && errno == ERANGE) || (v != 0 && (float)v == 0)) {
        *why = "is too small for f32: it would round to zero";
        return false;
    }
    *out = v;
    return true;
}
