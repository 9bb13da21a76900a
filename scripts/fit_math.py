#!/usr/bin/python3
"""Fits the polynomial coefficients of blk's f32 math library and prints
compiler/mathlib.h (run: /usr/bin/python3 scripts/fit_math.py > compiler/mathlib.h).

Each polynomial is a least-squares fit on Chebyshev points (in double, with
NumPy), weighted for relative error, then rounded to f32. The functions that
use them are written once in C (compiler/numeric.c, for the interpreter and
constant folding) and once as LLVM IR (compiler/nvptx/mathlib.c), with the
same f32 operations in the same order, so the GPU and the interpreter agree
bit for bit; tests/test_numeric.c measures each function's error in ulp
against a double-precision reference."""
import math
from decimal import Decimal, getcontext

import numpy as np


def cheb_points(lo, hi, n=2000):
    k = np.arange(n)
    return (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n)


def fit(xs, ys, weights, degree):
    """Coefficients c0..cd (lowest first) of sum c_i xs^i ~ ys."""
    a = np.vander(xs, degree + 1, increasing=True) * weights[:, None]
    c, *_ = np.linalg.lstsq(a, ys * weights, rcond=None)
    return [float(np.float32(v)) for v in c]


def emit(name, coeffs, what):
    body = ", ".join(f"{c!r}f" if "e" in repr(c) or "." in repr(c) else f"{c!r}.0f" for c in coeffs)
    print(f"/* {what} */")
    print(f"static const float {name}[{len(coeffs)}] = {{{body}}};")


print("/* mathlib.h: coefficients of blk's f32 math library, lowest degree first,")
print(" * made by scripts/fit_math.py (do not edit; rerun it). Horner with fma. */")
print("#ifndef BLK_MATHLIB_H\n#define BLK_MATHLIB_H\n")
# ln 2 in two parts: the high part's low 12 bits are zero, so k * LN2_HI is exact for |k| < 2^12
ln2_hi = float(np.float32(0.693145751953125))
print(f"#define MATHLIB_LN2_HI {ln2_hi!r}f")
print(f"#define MATHLIB_LN2_LO {float(np.float32(math.log(2) - ln2_hi))!r}f")
print(f"#define MATHLIB_LOG2E {float(np.float32(1 / math.log(2)))!r}f")
print(f"#define MATHLIB_SQRT2 {float(np.float32(math.sqrt(2)))!r}f")
# pi/2 in three f32 parts, each the rounded remainder of the one before (in 50 digits)
getcontext().prec = 60
pio2 = Decimal("3.14159265358979323846264338327950288419716939937510") / 2
p1 = float(np.float32(float(pio2)))
p2 = float(np.float32(float(pio2 - Decimal(p1))))
p3 = float(np.float32(float(pio2 - Decimal(p1) - Decimal(p2))))
print(f"#define MATHLIB_2_OVER_PI {float(np.float32(2 / math.pi))!r}f")
print(f"#define MATHLIB_PIO2_1 {p1!r}f\n#define MATHLIB_PIO2_2 {p2!r}f\n#define MATHLIB_PIO2_3 {p3!r}f\n")

# exp(r) on [-ln2/2, ln2/2]: 1 + r + ... as Taylor's coefficients (error < 1e-9)
emit("MATHLIB_EXP", [float(np.float32(1 / math.factorial(i))) for i in range(8)],
     "exp(r) = sum c_i r^i for |r| <= ln2/2")

# tanh(x) = x + x^3 P(x^2) for |x| < 0.625
x = cheb_points(1e-4, 0.625)
emit("MATHLIB_TANH_SMALL", fit(x * x, (np.tanh(x) - x) / x ** 3, np.ones_like(x), 7),
     "tanh(x) = x + x^3 P(x^2) for |x| < 0.625")

# erf(x) = x P(x^2) for |x| < 1
x = cheb_points(1e-4, 1.0)
erf = np.vectorize(math.erf)
emit("MATHLIB_ERF_SMALL", fit(x * x, erf(x) / x, np.ones_like(x), 7), "erf(x) = x P(x^2) for |x| < 1")

# erfc(x) exp(x^2) = P(x - 2.5) for 1 <= x < 4 (erf(x) = 1 - exp(-x^2) P)
x = cheb_points(1.0, 4.0)
erfc = np.vectorize(math.erfc)
r = erfc(x) * np.exp(x * x)
emit("MATHLIB_ERFC_SCALED", fit(x - 2.5, r, 1 / r, 14), "erfc(x) exp(x^2) = P(x - 2.5) for 1 <= x < 4")

# expm1(x) = x + x^2 P(x) for |x| < 0.5 (Taylor: 1/2!, 1/3!, ...)
emit("MATHLIB_EXPM1_SMALL", [float(np.float32(1 / math.factorial(i + 2))) for i in range(9)],
     "expm1(x) = x + x^2 P(x) for |x| < 0.5")

# log(m) for m in [sqrt(1/2), sqrt(2)): s = (m-1)/(m+1), |s| < 0.1716, log m = 2s + s^3 P(s^2)
# with atanh's series, 2/3, 2/5, ..., 2/11 (the next term is below 1e-10 of the sum)
emit("MATHLIB_LOG", [float(np.float32(2 / (2 * i + 3))) for i in range(5)],
     "log(m) = 2s + s^3 P(s^2), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2))")

# sin(r) = r + r^3 P(r^2) and cos(r) = 1 + r^2 (-1/2 + r^2 Q(r^2)) for |r| <= pi/4 (Taylor)
emit("MATHLIB_SIN", [float(np.float32((-1) ** (i + 1) / math.factorial(2 * i + 3))) for i in range(5)],
     "sin(r) = r + r^3 P(r^2) for |r| <= pi/4")
emit("MATHLIB_COS", [float(np.float32((-1) ** i / math.factorial(2 * i + 4))) for i in range(5)],
     "cos(r) = 1 + r^2 (-1/2 + r^2 P(r^2)) for |r| <= pi/4")

# pow: log and exp in double (Taylor), so x^y = exp(y log x) rounds once to f32
def emit_double(name, coeffs, what):
    print(f"/* {what} */")
    print(f"static const double {name}[{len(coeffs)}] = {{{', '.join(repr(c) for c in coeffs)}}};")


emit_double("MATHLIB_LOG_D", [2 / (2 * i + 3) for i in range(10)],
            "log(m) = 2s + s^3 P(s^2) in double, s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2))")
emit_double("MATHLIB_EXP_D", [1 / math.factorial(i) for i in range(13)], "exp(r) in double for |r| <= ln2/2")
getcontext().prec = 60
ln2 = Decimal("0.693147180559945309417232121458176568075500134360255254120680")
ln2_hi = float(ln2)
print(f"#define MATHLIB_LN2_D_HI {ln2_hi!r}\n#define MATHLIB_LN2_D_LO {float(ln2 - Decimal(ln2_hi))!r}")

print("\n#endif")
