/* dump_outputs.c: runs the examples on the GPU through the runtime API and
 * writes their inputs and outputs as raw little-endian arrays, with a
 * manifest (one line per array: name dtype count file), for
 * tests/gpu/torch_compare.py to check against PyTorch and Triton.
 * Usage: dump_outputs OUT-DIR [examples-dir] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blk.h"
#include "blkc.h"
#include "reference.h"

static blk_context *ctx;
static FILE *manifest;
static const char *out_dir, *ex_dir;

static void die(const char *what) {
    fprintf(stderr, "dump_outputs: %s: %s\n", what, blk_last_error());
    exit(1);
}

static void save(const char *name, const char *dtype, const void *data, size_t count, size_t elem) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.bin", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, elem, count, f) != count) die(path);
    fclose(f);
    fprintf(manifest, "%s %s %zu %s.bin\n", name, dtype, count, name);
}

static blk_ptr upload(const void *host, size_t bytes) {
    blk_ptr p;
    if (blk_malloc(ctx, bytes, &p) || blk_memcpy_to_device(ctx, p, host, bytes)) die("upload");
    return p;
}

static void download(void *host, blk_ptr p, size_t bytes) {
    if (blk_memcpy_to_host(ctx, host, p, bytes)) die("download");
}

static blk_kernel *kernel(const char *file, const char *name, const char *const *defs, int ndefs) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ex_dir, file);
    blk_compile_options opt = {.defines = defs, .num_defines = ndefs};
    blk_module *m;
    blk_kernel *k;
    if (blk_module_create_from_file(ctx, path, &opt, &m) || blk_module_get_kernel(m, name, &k)) die(name);
    return k; /* the modules live until the process ends */
}

static void launch(blk_kernel *k, unsigned grid, const blk_arg *args, int n) {
    if (blk_launch(k, grid, 1, 1, args, n, NULL) || blk_synchronize(ctx)) die(blk_kernel_name(k));
}

static uint16_t *f16_normal(size_t n, double mean, double scale, RefRng *r) {
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = f32_to_f16((float)(mean + scale * ref_normal(r)));
    return h;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: dump_outputs OUT-DIR [examples-dir]\n", stderr);
        return 2;
    }
    out_dir = argv[1];
    ex_dir = argc > 2 ? argv[2] : BLK_EXAMPLES_DIR;
    if (blk_context_create_cuda(0, &ctx)) die("no GPU");
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest.txt", out_dir);
    manifest = fopen(path, "w");
    if (!manifest) die(path);
    RefRng rng = {11};

    /* softmax, f32, the tutorial's test shape */
    {
        int M = 1823, N = 781;
        float *x = malloc((size_t)M * N * 4), *y = malloc((size_t)M * N * 4);
        for (size_t i = 0; i < (size_t)M * N; i++) x[i] = (float)ref_normal(&rng);
        blk_ptr dx = upload(x, (size_t)M * N * 4), dy = upload(y, (size_t)M * N * 4);
        const char *defs[] = {"T=f32", "BLOCK=1024"};
        blk_arg a[] = {blk_arg_ptr(dy), blk_arg_ptr(dx), blk_arg_i32(N), blk_arg_i32(N), blk_arg_i32(N)};
        launch(kernel("softmax.blk", "softmax", defs, 2), (unsigned)M, a, 5);
        download(y, dy, (size_t)M * N * 4);
        fprintf(manifest, "# softmax %d %d\n", M, N);
        save("softmax_x", "f32", x, (size_t)M * N, 4);
        save("softmax_y", "f32", y, (size_t)M * N, 4);
        free(x), free(y);
    }
    /* layer norm forward and backward, f16, the tutorial's test shape and inputs */
    {
        int M = 1151, N = 8192, group = 96;
        size_t mn = (size_t)M * N;
        uint16_t *x = f16_normal(mn, -2.3, 0.5, &rng), *dy = f16_normal(mn, 0, 0.1, &rng);
        uint16_t *w = malloc((size_t)N * 2), *b = malloc((size_t)N * 2), *y = malloc(mn * 2), *dx = malloc(mn * 2);
        for (int i = 0; i < N; i++) w[i] = f32_to_f16((float)ref_uniform(&rng)), b[i] = f32_to_f16((float)ref_uniform(&rng));
        blk_ptr px = upload(x, mn * 2), pdy = upload(dy, mn * 2), pw = upload(w, (size_t)N * 2), pb = upload(b, (size_t)N * 2);
        blk_ptr py, pmean, prstd, pdx, pdw, pdb, plock, pfdw, pfdb;
        if (blk_malloc(ctx, mn * 2, &py) || blk_malloc(ctx, (size_t)M * 4, &pmean) || blk_malloc(ctx, (size_t)M * 4, &prstd) ||
            blk_malloc(ctx, mn * 2, &pdx) || blk_malloc(ctx, (size_t)group * N * 2, &pdw) ||
            blk_malloc(ctx, (size_t)group * N * 2, &pdb) || blk_malloc(ctx, (size_t)group * 8, &plock) ||
            blk_malloc(ctx, (size_t)N * 2, &pfdw) || blk_malloc(ctx, (size_t)N * 2, &pfdb))
            die("alloc");
        blk_memset(ctx, pdw, 0, (size_t)group * N * 2);
        blk_memset(ctx, pdb, 0, (size_t)group * N * 2);
        blk_memset(ctx, plock, 0, (size_t)group * 8);
        const char *fdefs[] = {"T=f16", "BLOCK_SIZE=8192"};
        blk_arg fa[] = {blk_arg_ptr(px), blk_arg_ptr(py), blk_arg_ptr(pw), blk_arg_ptr(pb), blk_arg_ptr(pmean),
                        blk_arg_ptr(prstd), blk_arg_i32(N), blk_arg_i32(N), blk_arg_f32(1e-5f)};
        launch(kernel("layernorm.blk", "layer_norm_fwd", fdefs, 2), (unsigned)M, fa, 9);
        const char *ddefs[] = {"T=f16", "GROUP_SIZE_M=96", "BLOCK_SIZE_N=8192"};
        blk_arg da[] = {blk_arg_ptr(pdx), blk_arg_ptr(pdy), blk_arg_ptr(pdw), blk_arg_ptr(pdb), blk_arg_ptr(px),
                        blk_arg_ptr(pw), blk_arg_ptr(pmean), blk_arg_ptr(prstd), blk_arg_ptr(plock), blk_arg_i32(N),
                        blk_arg_i32(N)};
        launch(kernel("layernorm.blk", "layer_norm_bwd_dx", ddefs, 3), (unsigned)M, da, 11);
        const char *wdefs[] = {"T=f16", "BLOCK_SIZE_M=32", "BLOCK_SIZE_N=128"};
        blk_arg wa[] = {blk_arg_ptr(pdw), blk_arg_ptr(pdb), blk_arg_ptr(pfdw), blk_arg_ptr(pfdb), blk_arg_i32(group),
                        blk_arg_i32(N)};
        launch(kernel("layernorm.blk", "layer_norm_bwd_dwdb", wdefs, 3), (unsigned)((N + 127) / 128), wa, 6);
        uint16_t *fdw = malloc((size_t)N * 2), *fdb = malloc((size_t)N * 2);
        download(y, py, mn * 2);
        download(dx, pdx, mn * 2);
        download(fdw, pfdw, (size_t)N * 2);
        download(fdb, pfdb, (size_t)N * 2);
        fprintf(manifest, "# layer_norm %d %d\n", M, N);
        save("ln_x", "f16", x, mn, 2);
        save("ln_w", "f16", w, (size_t)N, 2);
        save("ln_b", "f16", b, (size_t)N, 2);
        save("ln_dy", "f16", dy, mn, 2);
        save("ln_y", "f16", y, mn, 2);
        save("ln_dx", "f16", dx, mn, 2);
        save("ln_dw", "f16", fdw, (size_t)N, 2);
        save("ln_db", "f16", fdb, (size_t)N, 2);
        free(x), free(dy), free(w), free(b), free(y), free(dx), free(fdw), free(fdb);
    }
    /* dropout, f32, two seeds (one negative) */
    int seeds[] = {123, -7};
    for (int s = 0; s < 2; s++) {
        int n = 1 << 20;
        float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
        for (int i = 0; i < n; i++) x[i] = (float)ref_normal(&rng);
        blk_ptr px = upload(x, (size_t)n * 4), py = upload(y, (size_t)n * 4);
        const char *defs[] = {"T=f32", "BLOCK=1024"};
        blk_arg a[] = {blk_arg_ptr(px), blk_arg_ptr(py), blk_arg_i32(n), blk_arg_f32(0.5f), blk_arg_i32(seeds[s])};
        launch(kernel("dropout.blk", "dropout", defs, 2), (unsigned)(n / 1024), a, 5);
        download(y, py, (size_t)n * 4);
        char name[64];
        fprintf(manifest, "# dropout %d 0.5 %d\n", n, seeds[s]);
        snprintf(name, sizeof name, "dropout%d_x", s);
        save(name, "f32", x, (size_t)n, 4);
        snprintf(name, sizeof name, "dropout%d_y", s);
        save(name, "f32", y, (size_t)n, 4);
        free(x), free(y);
    }
    fclose(manifest);
    printf("dump_outputs: wrote %s/manifest.txt on %s\n", out_dir, blk_context_device(ctx));
    return 0;
}
