/* reference.c: see reference.h. */
#include "reference.h"

#include <math.h>

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

void ref_dropout(const float *x, size_t n, float p, int32_t seed, double *out, uint8_t *keep) {
    float scale_div = 1.0f - p;
    for (size_t i = 0; i < n; i++) {
        keep[i] = philox_rand(seed, (uint32_t)i) > p;
        out[i] = keep[i] ? (double)(x[i] / scale_div) : 0.0;
    }
}
