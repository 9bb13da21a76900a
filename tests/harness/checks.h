/* checks.h: each example run at a given shape and compared with its C
 * reference (reference.h), with the tolerance stated in checks.c. The
 * launch is a callback over host buffers, so the same checks run on the
 * interpreter (example_launch_interp) and, through the runtime, on a GPU. */
#ifndef BLK_CHECKS_H
#define BLK_CHECKS_H

#include <stdbool.h>

#include "compile.h"
#include "interp/interp.h"
#include "reference.h"

enum { EXAMPLE_MAX_DEFS = 9 };

typedef struct {
    const char *file;      /* in the examples directory, e.g. "softmax.blk" */
    const char *kernel;
    const char *defs[EXAMPLE_MAX_DEFS + 1]; /* "NAME=VALUE", NULL-terminated */
} ExampleKernel;

/* The harness's own argument and buffer types, which each launcher maps to
 * its backend's (the interpreter's InterpArg and InterpBuffer, the runtime's
 * blk_arg): a kernel argument in the kernel's parameter order, integers in
 * .i, f32 in .f, pointers in .p; host memory a launch may touch, named for
 * messages (NULL: after a pointer argument into it). */
typedef union {
    int64_t i;
    double f;
    void *p;
} ExampleArg;

typedef struct {
    void *base;
    size_t bytes;
    const char *name;
} ExampleBuffer;

/* Runs a kernel over host buffers (pointer args point into them); returns
 * NULL or a malloc'ed error message. */
typedef char *(*ExampleLaunch)(void *ctx, const ExampleKernel *k, const ExampleArg *args, int nargs,
                               const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs);

typedef struct {
    ExampleLaunch launch;
    void *ctx;
    const char *only; /* run only the checks whose call holds this text ("attention_fp8"); NULL: all */
} ExampleRunner;

/* Front end and block IR of an example's kernel (diagnostics to stderr):
 * NULL, or a malloc'ed message. *comp is the caller's to free either way. */
char *example_compile(const char *dir, const ExampleKernel *k, Compilation **comp, BirFunction **fn);

/* The interpreter as a launcher; ctx is an InterpLaunchCtx. */
typedef struct {
    const char *examples_dir;
    InterpOptions options;
} InterpLaunchCtx;
char *example_launch_interp(void *ctx, const ExampleKernel *k, const ExampleArg *args, int nargs,
                            const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs);

typedef struct {
    char name[96];      /* "softmax M=1823 N=781 f32" */
    bool ok;
    double max_err;     /* the largest error, in the unit of the tolerance */
    char tolerance[64]; /* "rel 1e-05", "atol 0.01", "exact" */
    double seconds;     /* wall time of the launches */
    char detail[768];   /* the first mismatch or the launch error */
} CheckResult;

/* dtype: DT_F32 or DT_F16 (the kernels' T). */
CheckResult check_add(const ExampleRunner *r, int n, DType dtype, int block);
CheckResult check_softmax(const ExampleRunner *r, int M, int N, int stride, DType dtype, int block, bool online);
CheckResult check_rms_norm(const ExampleRunner *r, int M, int N, int stride, DType dtype, int block);
CheckResult check_group_norm(const ExampleRunner *r, int batch, int C, int HW, int groups, DType dtype, int block);
CheckResult check_quantize(const ExampleRunner *r, int M, int N, int stride, DType dtype, int block);
CheckResult check_cumsum(const ExampleRunner *r, int M, int N, int stride, DType dtype, int block);
CheckResult check_cross_entropy(const ExampleRunner *r, int M, int N, int stride, DType dtype, int block);
/* Which of layer norm's W and B the launch passes (the others None: no term) */
typedef enum { LN_AFFINE, LN_NO_BIAS, LN_NO_AFFINE } LayerNormTerms;
CheckResult check_layer_norm_fwd(const ExampleRunner *r, LayerNormTerms terms, int M, int N, int stride, DType dtype,
                                 int block);
/* dx kernel with the lock, then the dW/dB kernel; block_n >= N */
CheckResult check_layer_norm_bwd(const ExampleRunner *r, int M, int N, int stride, DType dtype,
                                 int block_n, int group_m, bool deterministic);
CheckResult check_activation(const ExampleRunner *r, Activation act, int n, DType dtype, int block);
CheckResult check_dropout(const ExampleRunner *r, int n, float p, int32_t seed, DType dtype, int block);
/* histogram.blk (exact) and topk_sampling.blk (the picks, near ties allowed) */
CheckResult check_histogram(const ExampleRunner *r, int n, int nbins, int block);
CheckResult check_topk_sample(const ExampleRunner *r, int M, int N, int stride, int k, int block);
/* C = A B, dtype DT_F16 or DT_BF16; A row-major, B row-major or (trans_b)
 * column-major; every row (column for a column-major B) pad elements longer
 * than the matrix: NaN in A and B, a sentinel in C. */
CheckResult check_matmul(const ExampleRunner *r, int M, int N, int K, DType dtype, int block_m, int block_n,
                         int block_k, int group_m, bool trans_b, int pad);
/* matmul_splitk.blk's C the same way, K split `splits` ways (the splits'
 * f32 partials added by the tile's last program), launched twice: the first
 * launch must leave its per-tile counts zero */
CheckResult check_matmul_splitk(const ExampleRunner *r, int M, int N, int K, DType dtype, int block_m, int block_n,
                                int block_k, int splits, bool trans_b, int pad);
/* The MoE example: tokens routed to top_k of `experts` (distinct, random),
 * their rows sorted by expert and padded to BLOCK_M (vLLM's alignment); C's
 * routed rows against a C reference, weighted by the router if mul_weight.
 * A's and B's rows pad elements longer (NaN), C's (a sentinel). */
CheckResult check_moe_matmul(const ExampleRunner *r, int tokens, int experts, int top_k, int N, int K, DType dtype,
                             int block_m, int block_n, int block_k, bool mul_weight, int pad);
/* The fp8 example (row-wise or per-tensor scales, C in `out`) or the int8
 * one (C in i32, exact) on random operands of types ta and tb; B
 * column-major if trans_b; rows (columns) pad elements longer, padded with
 * NaN or -1, and C's with a sentinel. */
CheckResult check_matmul_8bit(const ExampleRunner *r, int M, int N, int K, DType ta, DType tb, DType out,
                              int block_m, int block_n, int block_k, bool trans_b, bool per_tensor, int pad);
/* The block-scaled fp8 example: A [M, K] with a scale per row and 128-wide
 * k-block, B [N, K] with one per 128 x 128 block, C in `out`; rows, C's and
 * the scales' padded (NaN, a sentinel). */
CheckResult check_matmul_fp8_blockwise(const ExampleRunner *r, int M, int N, int K, DType ta, DType tb, DType out,
                                       int block_m, int block_n, int pad);
/* attention_fp8.blk: e4m3 Q, K and V (V transposed) with scales, Out in bf16. */
CheckResult check_attention_fp8(const ExampleRunner *r, int Z, int H, int N_CTX, int head_dim, bool causal,
                                int block_m, int block_n);
/* Out and LSE of attention on [Z, H, N_CTX, head_dim] q, k, v ~ N(0, 0.5^2),
 * sm_scale 0.5; group query heads a K/V head (k and v [Z, H / group, ...]);
 * window > 0 (causal): each query sees its window latest keys */
CheckResult check_attention(const ExampleRunner *r, int Z, int H, int N_CTX, int head_dim, bool causal, DType dtype,
                            int block_m, int block_n, int group, int window);

/* Out and LSE of attention_varlen.blk: B sequences of lengths lens[] (0 allowed) packed
 * without padding, H query heads, group of them a K/V head; data as check_attention's */
CheckResult check_attention_varlen(const ExampleRunner *r, int B, const int *lens, int H, int head_dim, bool causal,
                                   DType dtype, int block_m, int block_n, int group);

/* dQ, dK, dV (and Delta) of attention_bwd.blk on the same data plus dOut ~
 * N(0, 0.5^2), given the forward's Out and LSE from the C reference; fused:
 * its five-product kernels (dQ added into f32 sums), else its seven-product
 * ones; group query heads a K/V head (dK and dV summed over each group) */
CheckResult check_attention_bwd(const ExampleRunner *r, int Z, int H, int N_CTX, int head_dim, bool causal,
                                DType dtype, int block_m, int block_n, bool fused, int group);

/* Out of attention_decode.blk (flash-decoding): one query token a sequence
 * for B sequences of lengths from 1 to max_ctx, H_KV K/V heads each shared by
 * group query heads, the cache split into parts of `split` keys; page_size > 0:
 * the cache in shuffled pages of that many tokens (attn_decode_paged_part) */
CheckResult check_attention_decode(const ExampleRunner *r, int B, int H_KV, int group, int max_ctx, int head_dim,
                                   DType dtype, int block_n, int split, int page_size);

/* The example checks: level 0, one tutorial shape per example (matmul
 * 256^3 f16, attention Z=1 H=2 N_CTX=256 D=64); 1, every shape the
 * interpreter tests (plus N not a power of two, N below and above the block,
 * strides larger than N, M = 1, f32, f16 and bf16; matmul and attention
 * sizes that are not multiples of the blocks, transposed B, causal); 2, also
 * the GPU's large ones (M = 4096, N up to 16384; matmul 1024^3 and
 * 2048x512x1024; attention Z=2 H=4 N_CTX=1024). Fills up to max results;
 * returns how many. */
/* Room for every check of the suite (more than max aborts it). */
#define EXAMPLE_SUITE_MAX 256
int run_example_suite(const ExampleRunner *r, int level, CheckResult *out, int max);

#endif
