/* reference.c: see reference.h. */
#include "reference.h"

#include <math.h>
#include <stdlib.h>

#include "blkc.h" /* philox_rand: checked bit for bit against Triton (tests/test_numeric.c) */

double ref_uniform(RefRng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

double ref_normal(RefRng *r) {
    double u1 = ref_uniform(r), u2 = ref_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

void ref_add(const float *x, const float *y, double *out, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = (double)x[i] + (double)y[i];
}

void ref_softmax(const float *x, int M, int N, int stride, double *out) {
    for (int r = 0; r < M; r++) {
        const float *row = x + (size_t)r * stride;
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; c++) mx = row[c] > mx ? row[c] : mx;
        for (int c = 0; c < N; c++) sum += exp(row[c] - mx);
        for (int c = 0; c < N; c++) out[(size_t)r * N + c] = exp(row[c] - mx) / sum;
    }
}

static void row_stats(const float *row, int N, double eps, double *mean, double *rstd) {
    double s = 0, v = 0;
    for (int c = 0; c < N; c++) s += row[c];
    double m = s / N;
    for (int c = 0; c < N; c++) v += (row[c] - m) * (row[c] - m);
    *mean = m;
    *rstd = 1.0 / sqrt(v / N + eps);
}

void ref_rms_norm_fwd(const float *x, const float *w, int M, int N, int stride, double eps, double *y, double *rstd) {
    for (int r = 0; r < M; r++) {
        const float *row = x + (size_t)r * stride;
        double ss = 0;
        for (int c = 0; c < N; c++) ss += (double)row[c] * row[c];
        rstd[r] = 1 / sqrt(ss / N + eps);
        for (int c = 0; c < N; c++) y[(size_t)r * N + c] = row[c] * rstd[r] * w[c];
    }
}

void ref_group_norm_fwd(const float *x, const float *w, const float *b, int batch, int C, int HW, int groups,
                        double eps, double *y, double *mean, double *rstd) {
    int channels = C / groups;
    size_t size = (size_t)channels * HW;
    for (int p = 0; p < batch * groups; p++) {
        const float *g = x + p * size;
        double s = 0, v = 0;
        for (size_t i = 0; i < size; i++) s += g[i];
        mean[p] = s / (double)size;
        for (size_t i = 0; i < size; i++) v += (g[i] - mean[p]) * (g[i] - mean[p]);
        rstd[p] = 1 / sqrt(v / (double)size + eps);
        for (size_t i = 0; i < size; i++) {
            int c = (p % groups) * channels + (int)(i / (size_t)HW);
            y[p * size + i] = (g[i] - mean[p]) * rstd[p] * w[c] + b[c];
        }
    }
}

void ref_cross_entropy(const float *logits, const int32_t *target, int M, int N, int stride, double *loss,
                       double *lse) {
    for (int r = 0; r < M; r++) {
        const float *row = logits + (size_t)r * stride;
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < N; c++) mx = row[c] > mx ? row[c] : mx;
        for (int c = 0; c < N; c++) sum += exp(row[c] - mx);
        lse[r] = mx + log(sum);
        loss[r] = lse[r] - row[target[r]];
    }
}

void ref_layer_norm_fwd(const float *x, const float *w, const float *b, int M, int N, int stride,
                        double eps, double *y, double *mean, double *rstd) {
    for (int r = 0; r < M; r++) {
        const float *row = x + (size_t)r * stride;
        row_stats(row, N, eps, &mean[r], &rstd[r]);
        for (int c = 0; c < N; c++)
            y[(size_t)r * N + c] = (row[c] - mean[r]) * rstd[r] * w[c] + b[c];
    }
}

void ref_layer_norm_bwd(const float *x, const float *dy, const float *w, int M, int N, int stride,
                        double eps, double *dx, double *dw, double *db) {
    for (int c = 0; c < N; c++) dw[c] = db[c] = 0;
    for (int r = 0; r < M; r++) {
        const float *xr = x + (size_t)r * stride, *dyr = dy + (size_t)r * stride;
        double mean, rstd, c1 = 0, c2 = 0;
        row_stats(xr, N, eps, &mean, &rstd);
        /* d/dx of (x - mean) * rstd * w: dx = rstd * (w dy - mean(xhat w dy) xhat - mean(w dy)) */
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean) * rstd, wdy = (double)w[c] * dyr[c];
            c1 += xhat * wdy;
            c2 += wdy;
            dw[c] += dyr[c] * xhat;
            db[c] += dyr[c];
        }
        c1 /= N;
        c2 /= N;
        for (int c = 0; c < N; c++) {
            double xhat = (xr[c] - mean) * rstd, wdy = (double)w[c] * dyr[c];
            dx[(size_t)r * N + c] = (wdy - (xhat * c1 + c2)) * rstd;
        }
    }
}

void ref_activation(Activation act, const float *x, size_t n, double *out) {
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        if (act == ACT_GELU) out[i] = 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
        else if (act == ACT_GELU_TANH) out[i] = 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
        else out[i] = v / (1.0 + exp(-v));
    }
}

void ref_dropout(const float *x, size_t n, float p, int32_t seed, double *out, uint8_t *keep) {
    float scale_div = 1.0f - p;
    for (size_t i = 0; i < n; i++) {
        keep[i] = philox_rand(seed, (uint32_t)i) > p;
        out[i] = keep[i] ? (double)(x[i] / scale_div) : 0.0;
    }
}

static double bits_value(uint16_t h, bool bf16) { return bf16 ? bf16_to_f32(h) : f16_to_f32(h); }

bool ref_matmul(const uint16_t *a, const uint16_t *b, bool bf16, int M, int N, int K, int64_t sam, int64_t sak,
                int64_t sbk, int64_t sbn, double *c, double *mag) {
    /* a row of A and all of B transposed, as doubles, so the k loop reads both in order */
    double *arow = malloc((size_t)(K ? K : 1) * sizeof *arow);
    double *bt = malloc((size_t)N * (size_t)(K ? K : 1) * sizeof *bt);
    if (!arow || !bt) {
        free(arow), free(bt);
        return false;
    }
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++) bt[(size_t)j * K + k] = bits_value(b[k * sbk + j * sbn], bf16);
    for (int i = 0; i < M; i++) {
        for (int k = 0; k < K; k++) arow[k] = bits_value(a[i * sam + k * sak], bf16);
        for (int j = 0; j < N; j++) {
            const double *bj = bt + (size_t)j * K;
            double s = 0, m = 0; /* each product of two f16 or bf16 values is exact in double */
            for (int k = 0; k < K; k++) {
                double p = arow[k] * bj[k];
                s += p;
                m += fabs(p);
            }
            c[(size_t)i * N + j] = s;
            mag[(size_t)i * N + j] = m;
        }
    }
    free(arow), free(bt);
    return true;
}

bool ref_attention(const uint16_t *q, const uint16_t *k, const uint16_t *v, bool bf16, int heads, int N, int D,
                   bool causal, int window, double sm_scale, double *out, double *lse, RefAttentionMags *mags) {
    size_t total = (size_t)heads * N * D;
    double *qd = malloc(total * sizeof *qd), *kd = malloc(total * sizeof *kd), *vd = malloc(total * sizeof *vd);
    double *x = malloc((size_t)N * sizeof *x);
    bool ok = qd && kd && vd && x;
    for (size_t i = 0; ok && i < total; i++) {
        qd[i] = bits_value(q[i], bf16);
        kd[i] = bits_value(k[i], bf16);
        vd[i] = bits_value(v[i], bf16);
    }
    for (int h = 0; ok && h < heads; h++) {
        const double *qh = qd + (size_t)h * N * D, *kh = kd + (size_t)h * N * D, *vh = vd + (size_t)h * N * D;
        for (int i = 0; i < N; i++) {
            int keys = causal ? i + 1 : N; /* keys j <= i under the causal mask */
            int first = window > 0 && i - window + 1 > 0 ? i - window + 1 : 0; /* and j > i - window */
            size_t row = (size_t)h * N + i;
            double mx = -INFINITY, smag = 0, sum = 0;
            for (int j = first; j < keys; j++) {
                double s = 0, m = 0;
                for (int d = 0; d < D; d++) {
                    double p = qh[(size_t)i * D + d] * kh[(size_t)j * D + d];
                    s += p;
                    m += fabs(p);
                }
                x[j] = s * sm_scale;
                mx = fmax(mx, x[j]);
                smag = fmax(smag, m);
            }
            for (int j = first; j < keys; j++) sum += (x[j] = exp(x[j] - mx));
            /* the weighted sums, key by key, so v is read along its rows */
            double *o = out + row * D, *vmag = mags ? mags->v_mag + row * D : NULL;
            double *vabs = mags ? mags->v_abs + row * D : NULL;
            for (int d = 0; d < D; d++) {
                o[d] = 0;
                if (mags) vmag[d] = vabs[d] = 0;
            }
            for (int j = first; j < keys; j++) {
                double w = x[j] / sum;
                const double *vj = vh + (size_t)j * D;
                for (int d = 0; d < D; d++) o[d] += w * vj[d];
                for (int d = 0; mags && d < D; d++) vmag[d] += w * fabs(vj[d]), vabs[d] += fabs(vj[d]);
            }
            lse[row] = (mx + log(sum)) * 1.4426950408889634; /* log2 e */
            if (mags) mags->score_mag[row] = smag;
        }
    }
    free(qd), free(kd), free(vd), free(x);
    return ok;
}

bool ref_attention_bwd(const uint16_t *q, const uint16_t *k, const uint16_t *v, const uint16_t *dout, bool bf16,
                       int heads, int N, int D, bool causal, double sm_scale, double u, double sub,
                       const double *out, const double *lse, RefAttentionGrads *g) {
    size_t total = (size_t)heads * N * D;
    double *qd = malloc(total * sizeof *qd), *kd = malloc(total * sizeof *kd), *vd = malloc(total * sizeof *vd);
    double *dod = malloc(total * sizeof *dod);
    /* the magnitudes of the f32 sums: sum |ds q|, |ds k|, |p dout| */
    double *mag_dq = calloc(total, sizeof *mag_dq), *mag_dk = calloc(total, sizeof *mag_dk);
    double *mag_dv = calloc(total, sizeof *mag_dv);
    bool ok = qd && kd && vd && dod && mag_dq && mag_dk && mag_dv;
    for (size_t i = 0; ok && i < total; i++) {
        qd[i] = bits_value(q[i], bf16);
        kd[i] = bits_value(k[i], bf16);
        vd[i] = bits_value(v[i], bf16);
        dod[i] = bits_value(dout[i], bf16);
        g->dq[i] = g->dk[i] = g->dv[i] = 0;
        g->bound_dq[i] = g->bound_dk[i] = g->bound_dv[i] = 0;
    }
    const double ln2 = 0.6931471805599453, c = sm_scale * 1.4426950408889634, e23 = 0x1p-23;
    int npad = 16; /* the f32 sums' length, rounded up to whole blocks of 128 */
    while (npad < N) npad *= 2;
    npad = npad < 128 ? 128 : npad;
    for (int h = 0; ok && h < heads; h++) {
        size_t at = (size_t)h * N * D;
        const double *qh = qd + at, *kh = kd + at, *vh = vd + at, *doh = dod + at, *oh = out + at;
        for (int i = 0; i < N; i++) {
            size_t row = (size_t)h * N + i;
            const double *qi = qh + (size_t)i * D, *doi = doh + (size_t)i * D, *oi = oh + (size_t)i * D;
            double delta = 0, A = 0;
            for (int d = 0; d < D; d++) delta += doi[d] * oi[d], A += fabs(doi[d] * oi[d]);
            g->delta[row] = delta;
            /* the kernel's delta: out rounded to T, then an f32 sum */
            double e_delta = (u + (D + 1) * e23) * A;
            g->bound_delta[row] = e_delta;
            int keys = causal ? i + 1 : N;
            for (int j = 0; j < keys; j++) {
                const double *kj = kh + (size_t)j * D, *vj = vh + (size_t)j * D;
                double s = 0, S = 0, dp = 0, DP = 0;
                for (int d = 0; d < D; d++) {
                    s += qi[d] * kj[d], S += fabs(qi[d] * kj[d]);
                    dp += doi[d] * vj[d], DP += fabs(doi[d] * vj[d]);
                }
                double p = exp(s * sm_scale - lse[row] * ln2), ds = p * (dp - delta);
                /* p's relative error: the score's dot and scaling, lse in f32
                 * and the subtraction, exp2 (2 ulp) */
                double e_p = ln2 * (c * (D + 3) * e23 * S + e23 * fabs(lse[row])) + 0x1p-22;
                /* ds's absolute error before its rounding to T: dp's dot,
                 * delta, p's error, the subtraction and product */
                double e_ds = p * (D * e23 * DP + e_delta) + (e_p + e23) * fabs(ds);
                double ds_err = e_ds * (1 + u) + u * fabs(ds) + sub; /* then rounded to T */
                double p_err = (e_p + u + 0x1p-24) * p + sub;        /* p rounded to T */
                double *dqi = g->dq + at + (size_t)i * D, *dkj = g->dk + at + (size_t)j * D;
                double *dvj = g->dv + at + (size_t)j * D;
                for (int d = 0; d < D; d++) {
                    size_t ei = at + (size_t)i * D + d, ej = at + (size_t)j * D + d;
                    dqi[d] += ds * kj[d];
                    g->bound_dq[ei] += ds_err * fabs(kj[d]);
                    mag_dq[ei] += fabs(ds * kj[d]);
                    dkj[d] += ds * qi[d];
                    g->bound_dk[ej] += ds_err * fabs(qi[d]);
                    mag_dk[ej] += fabs(ds * qi[d]);
                    dvj[d] += p * doi[d];
                    g->bound_dv[ej] += p_err * fabs(doi[d]);
                    mag_dv[ej] += fabs(p * doi[d]);
                }
            }
        }
    }
    /* the dots' f32 sums (twice the sequential bound: tensor cores add in
     * an order of their own), the scaling by sm_scale, the rounding to T */
    for (size_t e = 0; ok && e < total; e++) {
        g->dq[e] *= sm_scale;
        g->dk[e] *= sm_scale;
        g->bound_dq[e] = sm_scale * (g->bound_dq[e] + 2 * npad * e23 * mag_dq[e]) * (1 + e23);
        g->bound_dk[e] = sm_scale * (g->bound_dk[e] + 2 * npad * e23 * mag_dk[e]) * (1 + e23);
        g->bound_dv[e] += 2 * npad * e23 * mag_dv[e];
        g->bound_dq[e] = (1 + u) * g->bound_dq[e] + u * fabs(g->dq[e]) + sub;
        g->bound_dk[e] = (1 + u) * g->bound_dk[e] + u * fabs(g->dk[e]) + sub;
        g->bound_dv[e] = (1 + u) * g->bound_dv[e] + u * fabs(g->dv[e]) + sub;
    }
    free(qd), free(kd), free(vd), free(dod), free(mag_dq), free(mag_dk), free(mag_dv);
    return ok;
}
