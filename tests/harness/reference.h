/* reference.h: C reference implementations of the examples in dsl_examples/,
 * written from the math (not from the kernels), accumulating in double.
 * Inputs are f32 arrays (f16 data is converted by the caller); outputs are
 * doubles, so a comparison sees only the kernel's own rounding. Also the
 * test-data generator every check uses, so data is the same everywhere. */
#ifndef BLK_REFERENCE_H
#define BLK_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

/* Deterministic test data: splitmix64 uniform and Box-Muller normal. */
typedef struct { uint64_t state; } RefRng;
double ref_uniform(RefRng *r);            /* [0, 1) */
double ref_normal(RefRng *r);             /* mean 0, variance 1 */

/* out[i] = x[i] + y[i] */
void ref_add(const float *x, const float *y, double *out, size_t n);

/* Row-wise softmax of an M x N matrix whose rows are `stride` apart; out is M x N dense. */
void ref_softmax(const float *x, int M, int N, int stride, double *out);

/* Layer norm forward over rows (stride apart): y = (x - mean) * rstd * w + b,
 * rstd = 1 / sqrt(var + eps) with the biased variance. y dense M x N. */
void ref_layer_norm_fwd(const float *x, const float *w, const float *b, int M, int N, int stride,
                        double eps, double *y, double *mean, double *rstd);

/* Layer norm backward: dx (dense M x N), dw and db (N each), from x, dy, w
 * and the forward's statistics recomputed here in double. */
void ref_layer_norm_bwd(const float *x, const float *dy, const float *w, int M, int N, int stride,
                        double eps, double *dx, double *dw, double *db);

/* Seeded dropout: keep[i] = rand(seed, i) > p (Triton's tl.rand, numeric.c);
 * out[i] = keep ? x[i] / (1 - p) : 0, the division in f32 as the kernel
 * writes it. */
void ref_dropout(const float *x, size_t n, float p, int32_t seed, double *out, uint8_t *keep);

#endif
