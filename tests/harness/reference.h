/* reference.h: C reference implementations of the examples in dsl_examples/,
 * written from the math (not from the kernels), accumulating in double.
 * Inputs are f32 arrays (f16 data is converted by the caller); outputs are
 * doubles, so a comparison sees only the kernel's own rounding. Also the
 * test-data generator every check uses, so data is the same everywhere. */
#ifndef BLK_REFERENCE_H
#define BLK_REFERENCE_H

#include <stdbool.h>
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
/* RMSNorm: y = x / sqrt(mean(x^2) + eps) * w; rstd[r] = 1 / sqrt(mean + eps). */
void ref_rms_norm_fwd(const float *x, const float *w, int M, int N, int stride, double eps, double *y, double *rstd);
/* GroupNorm on x [batch, C, HW]: per (sample, group) mean and rstd over the
 * group's C / groups channels; y = (x - mean) rstd w[c] + b[c]. */
void ref_group_norm_fwd(const float *x, const float *w, const float *b, int batch, int C, int HW, int groups,
                        double eps, double *y, double *mean, double *rstd);
/* Cross-entropy: lse[r] = log sum exp(row), loss[r] = lse[r] - row[target[r]]. */
void ref_cross_entropy(const float *logits, const int32_t *target, int M, int N, int stride, double *loss,
                       double *lse);

/* Layer norm forward over rows (stride apart): y = (x - mean) * rstd * w + b,
 * rstd = 1 / sqrt(var + eps) with the biased variance. y dense M x N. */
void ref_layer_norm_fwd(const float *x, const float *w, const float *b, int M, int N, int stride,
                        double eps, double *y, double *mean, double *rstd);

/* Layer norm backward: dx (dense M x N), dw and db (N each), from x, dy, w
 * and the forward's statistics recomputed here in double. */
void ref_layer_norm_bwd(const float *x, const float *dy, const float *w, int M, int N, int stride,
                        double eps, double *dx, double *dw, double *db);

/* Activations in double: GELU exact (0.5 x (1 + erf(x / sqrt 2))) or with the
 * tanh approximation, and SiLU (x / (1 + e^-x)). */
typedef enum { ACT_GELU, ACT_GELU_TANH, ACT_SILU } Activation;
void ref_activation(Activation act, const float *x, size_t n, double *out);

/* Seeded dropout: keep[i] = rand(seed, i) > p (Triton's tl.rand, numeric.c);
 * out[i] = keep ? x[i] / (1 - p) : 0, the division in f32 as the kernel
 * writes it. */
void ref_dropout(const float *x, size_t n, float p, int32_t seed, double *out, uint8_t *keep);

/* The matrix product C = A B (M x K times K x N) of f16 data, or bf16 when
 * bf16 is true, held as their bits: A[i, k] at a[i * sam + k * sak], B[k, j]
 * at b[k * sbk + j * sbn]. c (dense M x N) gets the exact product, which
 * rounded to the input type is what a C in that type should hold; mag
 * (dense M x N) gets sum_k |A[i, k] B[k, j]|, the scale of any rounding
 * error of the sum. False when out of memory. */
bool ref_matmul(const uint16_t *a, const uint16_t *b, bool bf16, int M, int N, int K, int64_t sam, int64_t sak,
                int64_t sbk, int64_t sbn, double *c, double *mag);

/* The magnitudes an attention error bound needs, per query row (and column
 * d of the output), over the keys the row attends to. */
typedef struct {
    double *score_mag; /* [heads * N]: max_j sum_d |q_id k_jd| */
    double *v_mag;     /* [heads * N * D]: sum_j w_ij |v_jd|, w the softmax weights */
    double *v_abs;     /* [heads * N * D]: sum_j |v_jd| */
} RefAttentionMags;

/* Attention forward on `heads` (batch x head) slices of N x D, contiguous
 * [heads, N, D] f16 (or bf16) bits: out = softmax(q k^T sm_scale) v, row by
 * row; causal: query i attends to keys j <= i only, and with window > 0
 * only to the window latest of them (j > i - window). lse[row] = log2 of
 * sum_j exp(s_ij sm_scale), i.e. (max + ln sum exp(s sm_scale - max)) in
 * base-2 units. out dense [heads, N, D]; lse [heads, N]; mags may be NULL.
 * False when out of memory. */
bool ref_attention(const uint16_t *q, const uint16_t *k, const uint16_t *v, bool bf16, int heads, int N, int D,
                   bool causal, int window, double sm_scale, double *out, double *lse, RefAttentionMags *mags);

/* Attention backward, for q, k, v and dout as in ref_attention (dout the
 * gradient of out): with s = q k^T sm_scale, p = softmax(s) row by row,
 * delta_i = sum_d dout_id out_id, ds = p (dout v^T - delta):
 * dq = ds k sm_scale, dk = ds^T q sm_scale, dv = p^T dout (dense [heads, N, D];
 * delta [heads, N]). The bound_* arrays get, element by element, a bound on
 * the error of attention_bwd.blk's computation of each, which needs the
 * per-(query, key) terms and so is summed here: the kernels are given out
 * rounded to the input type (unit roundoff u, half its smallest subnormal
 * spacing sub) and lse in f32, and round p and ds to the input type before
 * their dots; the derivation is at the top of checks.c. False when out of
 * memory. */
typedef struct {
    double *dq, *dk, *dv, *delta;
    double *bound_dq, *bound_dk, *bound_dv, *bound_delta;
} RefAttentionGrads;
bool ref_attention_bwd(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *dout, bool bf16,
                       int heads, int N, int D, bool causal, double sm_scale, double u, double sub,
                       const double *out, const double *lse, RefAttentionGrads *g);

#endif
