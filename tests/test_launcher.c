/* test_launcher.c: the PTX blkc writes ahead of time launches as the
 * runtime's JIT launches it. A CUDA driver without a GPU
 * (launcher/fake_cuda.c, loaded as libcuda.so.1 by the runtime and linked
 * by the generated launchers) records each launch; for the same arguments,
 * the runtime (blk_launch) and the C launcher blkc generated (--emit=c,
 * compiled into this test by tests/CMakeLists.txt) must launch the same
 * code (the PTX, its contract comment aside) with the same grid, block,
 * dynamic shared memory and parameter bytes, tensor maps and a persistent
 * kernel's grid included. Also: the launchers' checks of their arguments,
 * blk_kernel_launch_ptx and $BLK_DUMP_DIR, and every example's launcher
 * compiling with -Werror. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blk.h"
#include "fake_cuda.h"
#include "launcher_attn.h"
#include "launcher_dependent.h"
#include "launcher_layernorm.h"
#include "launcher_matmul.h"
#include "launcher_matmul_persistent.h"
#include "launcher_softmax.h"
#include "launcher_softmax_assume.h"

static blk_context *ctx;

static void open_fake_device(void) {
    setenv("BLK_CACHE_DISABLE", "1", 1); /* every specialization built here, by this compiler */
    unsetenv("BLK_DUMP_DIR");
    cr_assert_eq(blk_context_create_cuda(0, &ctx), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert(strstr(blk_context_device(ctx), "fake H100"), "%s", blk_context_device(ctx));
}

static void close_fake_device(void) { blk_context_destroy(ctx); }

TestSuite(launcher, .init = open_fake_device, .fini = close_fake_device);

/* An example's kernel in the runtime, as the launchers were generated: the
 * occupancy target off on both sides (the CLI's --min-blocks-per-sm none). */
static blk_kernel *runtime_kernel(blk_module **m, const char *file, const char *kernel, const char *const *defines,
                                  int ndefines, int persistent) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", BLK_EXAMPLES_DIR, file);
    blk_compile_options o = {.defines = defines, .num_defines = ndefines, .arch = "sm_90a", .min_blocks_per_sm = -1,
                             .persistent = persistent};
    cr_assert_eq(blk_module_create_from_file(ctx, path, &o, m), BLK_SUCCESS, "%s", blk_last_error());
    blk_kernel *k;
    cr_assert_eq(blk_module_get_kernel(*m, kernel, &k), BLK_SUCCESS, "%s", blk_last_error());
    return k;
}

/* The PTX without the comment lines blkc puts above it (the contract). */
static const char *code_of(const char *ptx) {
    while (ptx[0] == '/' && ptx[1] == '/') {
        const char *nl = strchr(ptx, '\n');
        if (!nl) break;
        ptx = nl + 1;
    }
    return ptx;
}

static FakeLaunch take_launch(int *count) {
    const FakeLaunch *l = fake_cuda_last_launch();
    cr_assert(l && fake_cuda_launches() == *count + 1, "no launch was made");
    *count = fake_cuda_launches();
    return *l;
}

static void expect_same_launch(const FakeLaunch *jit, const FakeLaunch *aot, const char *what) {
    cr_expect_str_eq(jit->name, aot->name, "%s", what);
    for (int d = 0; d < 3; d++) {
        cr_expect_eq(jit->grid[d], aot->grid[d], "%s: grid[%d] %u vs %u", what, d, jit->grid[d], aot->grid[d]);
        cr_expect_eq(jit->block[d], aot->block[d], "%s: block[%d] %u vs %u", what, d, jit->block[d], aot->block[d]);
    }
    cr_expect_eq(jit->shared, aot->shared, "%s: shared %u vs %u", what, jit->shared, aot->shared);
    cr_expect_eq(jit->nparams, aot->nparams, "%s: %d vs %d parameters", what, jit->nparams, aot->nparams);
    cr_expect_eq(jit->params_len, aot->params_len, "%s", what);
    cr_expect(jit->params_len == aot->params_len && memcmp(jit->params, aot->params, jit->params_len) == 0,
              "%s: the parameters' bytes differ", what);
    cr_expect_str_eq(code_of(jit->ptx), code_of(aot->ptx), "%s: the PTX differs", what);
}

static blk_ptr alloc(size_t bytes) {
    blk_ptr p;
    cr_assert_eq(blk_malloc(ctx, bytes, &p), BLK_SUCCESS, "%s", blk_last_error());
    return p;
}

Test(launcher, softmax_launches_as_the_runtime) {
    const char *defs[] = {"T=f32", "BLOCK=1024"};
    blk_module *m;
    blk_kernel *k = runtime_kernel(&m, "softmax.blk", "softmax", defs, 2, 0);
    blk_ptr out = alloc(4 << 20), in = alloc(4 << 20);
    int count = fake_cuda_launches();
    /* a tidy launch (the div16 variant) and a ragged one, odd (the build without facts: the runtime's
     * finer facts, multiples of 8 or 4, would give an even width a build the launcher lacks) */
    int cols[] = {1024, 999};
    for (int i = 0; i < 2; i++) {
        blk_arg args[] = {blk_arg_ptr(out), blk_arg_ptr(in), blk_arg_i32(cols[i]), blk_arg_i32(cols[i]),
                          blk_arg_i32(cols[i])};
        cr_assert_eq(blk_launch(k, 300, 1, 1, args, 5, NULL), BLK_SUCCESS, "%s", blk_last_error());
        FakeLaunch jit = take_launch(&count);
        cr_assert_eq(softmax_softmax_launch(NULL, out, in, cols[i], cols[i], cols[i], 300, 1, 1), CUDA_SUCCESS, "%s",
                     softmax_softmax_last_error());
        FakeLaunch aot = take_launch(&count);
        expect_same_launch(&jit, &aot, i ? "softmax, 999 columns" : "softmax, 1024 columns");
        cr_expect_gt(jit.shared, 0, "softmax uses dynamic shared memory: the launch must pass it");
        /* the PTX a launch runs, as the runtime gives it, with its contract at the top */
        const char *ptx;
        cr_assert_eq(blk_kernel_launch_ptx(k, args, 5, &ptx), BLK_SUCCESS, "%s", blk_last_error());
        cr_expect_str_eq(code_of(ptx), code_of(jit.ptx));
        char line[128];
        snprintf(line, sizeof line, "//   dynamic shared memory: %u bytes", jit.shared);
        cr_expect(strstr(ptx, line), "the contract does not say the launch's %u bytes:\n%.2000s", jit.shared, ptx);
        cr_expect_eq(fake_cuda_launches(), count, "blk_kernel_launch_ptx launched");
    }
    blk_module_destroy(m);
}

/* A kernel with gdc_wait (tests/launcher/dependent_step.blk): the runtime launches it with
 * programmatic stream serialization allowed (cuLaunchKernelEx), so that it may start while the
 * grid before it ends, and its C launcher does the same; softmax, without gdc_wait, is launched
 * plainly by both. */
Test(launcher, a_kernel_with_gdc_wait_may_start_early_from_both) {
    char path[512];
    snprintf(path, sizeof path, "%s/dependent_step.blk", BLK_LAUNCHER_DIR); /* as the launcher's (its .file) */
    blk_compile_options o = {.arch = "sm_90a", .min_blocks_per_sm = -1};
    blk_module *m;
    blk_kernel *k;
    cr_assert_eq(blk_module_create_from_file(ctx, path, &o, &m), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_module_get_kernel(m, "step", &k), BLK_SUCCESS, "%s", blk_last_error());
    blk_ptr x = alloc(1 << 20), y = alloc(1 << 20);
    int count = fake_cuda_launches();
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_i32(4096)};
    cr_assert_eq(blk_launch(k, 4, 1, 1, args, 3, NULL), BLK_SUCCESS, "%s", blk_last_error());
    FakeLaunch jit = take_launch(&count);
    cr_assert_eq(dependent_step_launch(NULL, x, y, 4096, 4, 1, 1), CUDA_SUCCESS, "%s", dependent_step_last_error());
    FakeLaunch aot = take_launch(&count);
    expect_same_launch(&jit, &aot, "step");
    cr_expect(jit.after_previous, "the runtime launched a kernel with gdc_wait in stream order");
    cr_expect(aot.after_previous, "the C launcher launched a kernel with gdc_wait in stream order");
    blk_module_destroy(m);
    /* built for sm_80 (no griddepcontrol: its gdc_wait waits for nothing), on this sm_90 device it
     * must keep stream order, or it could read the previous grid's output before it is written */
    o.arch = "sm_80";
    cr_assert_eq(blk_module_create_from_file(ctx, path, &o, &m), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_module_get_kernel(m, "step", &k), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_launch(k, 4, 1, 1, args, 3, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(!take_launch(&count).after_previous, "an sm_80 build of a kernel with gdc_wait may not start early");
    blk_module_destroy(m);
    blk_ptr out = alloc(4 << 20), in = alloc(4 << 20);
    cr_assert_eq(softmax_softmax_launch(NULL, out, in, 1024, 1024, 1024, 30, 1, 1), CUDA_SUCCESS, "%s",
                 softmax_softmax_last_error());
    cr_expect(!take_launch(&count).after_previous, "softmax (no gdc_wait) may not start early");
}

/* A, B and C of a row-major f16 matmul, and matmul.blk's arguments for them. */
static void contiguous_matmul(int M, int N, int K, blk_ptr *a, blk_ptr *b, blk_ptr *c, blk_arg args[12]) {
    *a = alloc((size_t)M * K * 2), *b = alloc((size_t)K * N * 2), *c = alloc((size_t)M * N * 2);
    const blk_arg all[12] = {blk_arg_ptr(*a), blk_arg_ptr(*b), blk_arg_ptr(*c), blk_arg_i32(M), blk_arg_i32(N),
                             blk_arg_i32(K), blk_arg_i32(K), blk_arg_i32(1), blk_arg_i32(N), blk_arg_i32(1),
                             blk_arg_i32(N), blk_arg_i32(1)};
    memcpy(args, all, sizeof all);
}

Test(launcher, matmul_with_tensor_maps_launches_as_the_runtime) {
    blk_module *m;
    blk_kernel *k = runtime_kernel(&m, "matmul.blk", "matmul", NULL, 0, 0);
    int M = 512, N = 256, K = 384;
    blk_ptr a, b, c;
    blk_arg args[12];
    contiguous_matmul(M, N, K, &a, &b, &c, args);
    int count = fake_cuda_launches();
    unsigned grid = (unsigned)(M / 128 * (N / 128));
    cr_assert_eq(blk_launch(k, grid, 1, 1, args, 12, NULL), BLK_SUCCESS, "%s", blk_last_error());
    FakeLaunch jit = take_launch(&count);
    cr_assert_eq(matmul_matmul_launch(NULL, a, b, c, M, N, K, K, 1, N, 1, N, 1, grid, 1, 1), CUDA_SUCCESS, "%s",
                 matmul_matmul_last_error());
    FakeLaunch aot = take_launch(&count);
    expect_same_launch(&jit, &aot, "matmul 512x256x384");
    cr_expect_gt(jit.nparams, 12, "the tidy build takes tensor maps: %d parameters", jit.nparams);
    cr_expect(strstr(jit.ptx, "cp.async.bulk.tensor"), "the tidy build copies by TMA");
    cr_expect_gt(jit.shared, 48 * 1024, "over 48 KiB: the launcher must have allowed it");

    /* a ragged launch: the launcher falls back to the build without the variant's facts */
    cr_assert_eq(matmul_matmul_launch(NULL, a, b, c, 100, N, K, K, 1, N, 1, N, 1, 2, 1, 1), CUDA_SUCCESS, "%s",
                 matmul_matmul_last_error());
    FakeLaunch ragged = take_launch(&count);
    cr_expect_eq(ragged.nparams, 12, "the general build takes no tensor maps");
    cr_expect(!strstr(ragged.ptx, "cp.async.bulk.tensor"));
    blk_module_destroy(m);
}

Test(launcher, persistent_matmul_launches_as_the_runtime) {
    blk_module *m;
    blk_kernel *k = runtime_kernel(&m, "matmul.blk", "matmul", NULL, 0, 1);
    int M = 1024, N = 1024, K = 256;
    blk_ptr a, b, c;
    blk_arg args[12];
    contiguous_matmul(M, N, K, &a, &b, &c, args);
    int count = fake_cuda_launches();
    /* more programs than run at once (132 SMs x 2), then fewer */
    unsigned grids[] = {1000, 40};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(blk_launch(k, grids[i], 1, 1, args, 12, NULL), BLK_SUCCESS, "%s", blk_last_error());
        FakeLaunch jit = take_launch(&count);
        cr_assert_eq(matmul_persistent_matmul_launch(NULL, a, b, c, M, N, K, K, 1, N, 1, N, 1, grids[i], 1, 1),
                     CUDA_SUCCESS, "%s", matmul_persistent_matmul_last_error());
        FakeLaunch aot = take_launch(&count);
        expect_same_launch(&jit, &aot, "persistent matmul");
        unsigned want = grids[i] < FAKE_SMS * FAKE_BLOCKS_PER_SM ? grids[i] : FAKE_SMS * FAKE_BLOCKS_PER_SM;
        cr_expect_eq(aot.grid[0], want, "launched %u programs for a grid of %u", aot.grid[0], grids[i]);
    }
    blk_module_destroy(m);
}

Test(launcher, attention_and_layer_norm_launch_as_the_runtime) {
    blk_module *m;
    blk_kernel *k = runtime_kernel(&m, "attention.blk", "attn_fwd", NULL, 0, 0);
    int Z = 2, H = 4, S = 1024, D = 64;
    size_t n = (size_t)Z * H * S * D * 2;
    blk_ptr q = alloc(n), kk = alloc(n), v = alloc(n), o = alloc(n), lse = alloc((size_t)Z * H * S * 4);
    int count = fake_cuda_launches();
    blk_arg args[] = {blk_arg_ptr(q), blk_arg_ptr(kk), blk_arg_ptr(v), blk_arg_ptr(o), blk_arg_ptr(lse),
                      blk_arg_f32(0.125f), blk_arg_i32(S)};
    cr_assert_eq(blk_launch(k, S / 128, Z * H, 1, args, 7, NULL), BLK_SUCCESS, "%s", blk_last_error());
    FakeLaunch jit = take_launch(&count);
    cr_assert_eq(attn_attn_fwd_launch(NULL, q, kk, v, o, lse, 0.125f, S, S / 128, Z * H, 1), CUDA_SUCCESS, "%s",
                 attn_attn_fwd_last_error());
    FakeLaunch aot = take_launch(&count);
    expect_same_launch(&jit, &aot, "attention forward");
    blk_module_destroy(m);

    const char *defs[] = {"T=f16", "BLOCK_SIZE=4096"};
    k = runtime_kernel(&m, "layernorm.blk", "layer_norm_fwd", defs, 2, 0);
    int rows = 64, cols = 4000;
    blk_ptr x = alloc((size_t)rows * cols * 2), y = alloc((size_t)rows * cols * 2), w = alloc((size_t)cols * 2),
            bias = alloc((size_t)cols * 2), mean = alloc((size_t)rows * 4), rstd = alloc((size_t)rows * 4);
    blk_arg ln[] = {blk_arg_ptr(x), blk_arg_ptr(y), blk_arg_ptr(w), blk_arg_ptr(bias), blk_arg_ptr(mean),
                    blk_arg_ptr(rstd), blk_arg_i32(cols), blk_arg_i32(cols), blk_arg_f32(1e-5f)};
    cr_assert_eq(blk_launch(k, (unsigned)rows, 1, 1, ln, 9, NULL), BLK_SUCCESS, "%s", blk_last_error());
    jit = take_launch(&count);
    cr_assert_eq(layernorm_layer_norm_fwd_launch(NULL, x, y, w, bias, mean, rstd, cols, cols, 1e-5f, (unsigned)rows, 1, 1),
                 CUDA_SUCCESS, "%s", layernorm_layer_norm_fwd_last_error());
    aot = take_launch(&count);
    expect_same_launch(&jit, &aot, "layer-norm forward, f16 eps rounded alike");
    blk_module_destroy(m);
}

Test(launcher, an_argument_that_breaks_a_fact_is_an_error_naming_it) {
    blk_ptr out = alloc(1 << 20), in = alloc(1 << 20);
    int count = fake_cuda_launches();
    /* declared @align(16) */
    cr_expect_eq(softmax_softmax_launch(NULL, out + 4, in, 1024, 1024, 1024, 4, 1, 1), CUDA_ERROR_INVALID_VALUE);
    cr_expect(strstr(softmax_softmax_last_error(), "kernel 'softmax', argument 0 ('out'): 0x") &&
              strstr(softmax_softmax_last_error(), "is not aligned to 16 bytes (as the kernel declares)"), "%s",
              softmax_softmax_last_error());
    cr_expect_eq(softmax_softmax_launch(NULL, 0, in, 1024, 1024, 1024, 4, 1, 1), CUDA_ERROR_INVALID_VALUE);
    cr_expect(strstr(softmax_softmax_last_error(), "argument 0 ('out'): a null pointer"), "%s",
              softmax_softmax_last_error());
    cr_expect_eq(softmax_softmax_launch(NULL, out, in, 1024, 1024, 1024, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
    cr_expect(strstr(softmax_softmax_last_error(), "the grid (0, 1, 1) is empty"), "%s", softmax_softmax_last_error());
    /* compiled --assume n_cols%16 and nothing more general */
    cr_expect_eq(softmax_assume_softmax_launch(NULL, out, in, 1000, 1000, 1000, 4, 1, 1), CUDA_ERROR_INVALID_VALUE);
    cr_expect(strstr(softmax_assume_softmax_last_error(), "kernel 'softmax', argument 4 ('n_cols'): 1000 is not a "
                                                          "multiple of 16 (the facts its most general variant was "
                                                          "compiled assuming"),
              "%s", softmax_assume_softmax_last_error());
    cr_expect_eq(fake_cuda_launches(), count, "a launch that breaks a fact ran");
    cr_expect_eq(softmax_assume_softmax_launch(NULL, out, in, 1024, 1024, 1024, 4, 1, 1), CUDA_SUCCESS, "%s",
                 softmax_assume_softmax_last_error());
    cr_expect_str_empty(softmax_assume_softmax_last_error());
}

Test(launcher, dump_dir_holds_the_ptx_that_ran_and_its_contract) {
    char dir[] = "/tmp/blk-dump-XXXXXX";
    cr_assert(mkdtemp(dir));
    setenv("BLK_DUMP_DIR", dir, 1);
    const char *defs[] = {"T=f32", "BLOCK=1024"};
    blk_module *m;
    blk_kernel *k = runtime_kernel(&m, "softmax.blk", "softmax", defs, 2, 0);
    blk_ptr out = alloc(1 << 20), in = alloc(1 << 20);
    blk_arg args[] = {blk_arg_ptr(out), blk_arg_ptr(in), blk_arg_i32(256), blk_arg_i32(256), blk_arg_i32(256)};
    cr_assert_eq(blk_launch(k, 4, 1, 1, args, 5, NULL), BLK_SUCCESS, "%s", blk_last_error());
    unsetenv("BLK_DUMP_DIR");
    const char *ptx;
    cr_assert_eq(blk_kernel_launch_ptx(k, args, 5, &ptx), BLK_SUCCESS, "%s", blk_last_error());
    DIR *d = opendir(dir);
    cr_assert(d);
    int nptx = 0, njson = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert(f);
        static char text[1 << 20];
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".ptx") == 0) {
            nptx++;
            cr_expect(strncmp(e->d_name, "softmax-", 8) == 0, "%s", e->d_name);
            cr_expect_str_eq(text, ptx, "the dumped PTX is not the PTX that ran");
        } else if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
            njson++;
            cr_expect(strstr(text, "\"name\": \"softmax\", \"threads\": "), "%s", text);
        }
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    cr_expect_eq(nptx, 1);
    cr_expect_eq(njson, 1);
    blk_module_destroy(m);
}

/* Every example's launcher compiles cleanly, for sm_80 and sm_90a, with a
 * variant, and one persistent. */
Test(launcher, every_example_launcher_compiles, .timeout = 600) {
    DIR *d = opendir(BLK_EXAMPLES_DIR);
    cr_assert(d);
    char dir[] = "/tmp/blk-launchers-XXXXXX";
    cr_assert(mkdtemp(dir));
    int compiled = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".blk") != 0) continue;
        const char *builds[] = {"--arch sm_80 --variant div16", "--arch sm_90a --variant div16",
                                "--arch sm_90a --persistent"};
        for (int b = 0; b < 3; b++) {
            if (b == 2 && strcmp(e->d_name, "matmul.blk") != 0 && strcmp(e->d_name, "attention.blk") != 0) continue;
            char cmd[2048];
            snprintf(cmd, sizeof cmd,
                     "%s %s/%s %s --no-hints --emit=c -o %s/l.c && %s %s/%s %s --no-hints --emit=h -o %s/l.h && "
                     "%s -std=c11 -Wall -Wextra -Werror -I%s -I%s -include %s/l.h -c %s/l.c -o %s/l.o",
                     BLKC_PATH, BLK_EXAMPLES_DIR, e->d_name, builds[b], dir, BLKC_PATH, BLK_EXAMPLES_DIR, e->d_name,
                     builds[b], dir, BLK_CC, BLK_CUDA_INCLUDE, dir, dir, dir, dir);
            cr_expect_eq(system(cmd), 0, "%s %s: the launcher did not compile", e->d_name, builds[b]);
            compiled++;
        }
    }
    closedir(d);
    char cleanup[256];
    snprintf(cleanup, sizeof cleanup, "rm -rf %s", dir);
    cr_expect_eq(system(cleanup), 0);
    cr_expect_geq(compiled, 30, "only %d launchers", compiled);
}

/* A launcher runs what the JIT runs: the occupancy target the runtime would
 * set (from ptxas's registers) is in its PTX, unless asked for none. */
Test(launcher, the_automatic_occupancy_target_is_in_the_launchers_ptx) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s/activations.blk --kernel silu --arch sm_90a --no-hints --emit=c -o - | grep -c "
                              "'[.]minnctapersm [0-9]'", BLKC_PATH, BLK_EXAMPLES_DIR);
    cr_expect_eq(system(cmd), 0, "silu (34 registers, 12 programs an SM) got no occupancy target");
    snprintf(cmd, sizeof cmd, "%s %s/activations.blk --kernel silu --arch sm_90a --no-hints --min-blocks-per-sm none "
                              "--emit=c -o - | grep -q '[.]minnctapersm'", BLKC_PATH, BLK_EXAMPLES_DIR);
    cr_expect_neq(system(cmd), 0, "--min-blocks-per-sm none still set a target");
}

/* The value after `"key": ` in a JSON text, or -1. */
static long long json_number(const char *json, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *at = strstr(json, pat);
    return at ? strtoll(at + strlen(pat), NULL, 10) : -1;
}

static char *run_capture(const char *cmd) {
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    while (out && (n += fread(out + n, 1, cap - n - 1, p)) == cap - 1) out = realloc(out, cap *= 2);
    if (out) out[n] = 0;
    if (pclose(p) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

/* For every kernel of every example on every arch, the contract blkc
 * writes (--emit=launch, with the facts of the launch) says what the
 * runtime's launch of it does: its block, its dynamic shared memory, its
 * parameters (appended ones included). */
Test(launcher, every_contract_says_what_the_runtime_launches, .timeout = 900) {
    static const char *const archs[] = {"sm_80", "sm_90", "sm_90a"};
    DIR *d = opendir(BLK_EXAMPLES_DIR);
    cr_assert(d);
    int checked = 0;
    blk_ptr mem = alloc(64 << 20);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".blk") != 0) continue;
        for (int a = 0; a < 3; a++) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", BLK_EXAMPLES_DIR, e->d_name);
            blk_compile_options o = {.arch = archs[a], .min_blocks_per_sm = -1};
            blk_module *m;
            cr_assert_eq(blk_module_create_from_file(ctx, path, &o, &m), BLK_SUCCESS, "%s", blk_last_error());
            /* the kernels' names from the contract of the whole module */
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "%s %s --arch %s --no-hints --emit=launch", BLKC_PATH, path, archs[a]);
            char *all = run_capture(cmd);
            cr_assert(all, "%s", cmd);
            for (const char *at = all; (at = strstr(at, "{\"name\": \""));) {
                at += 10;
                char name[128];
                sscanf(at, "%127[^\"]", name);
                at = strstr(at, "\"appended\"");
                blk_kernel *k;
                cr_assert_eq(blk_module_get_kernel(m, name, &k), BLK_SUCCESS, "%s", blk_last_error());
                /* a launch: pointers into one allocation, 16-byte aligned; integers 64; floats 0.5 */
                int n = blk_kernel_num_args(k);
                blk_arg args[64];
                char facts[2048] = "";
                for (int i = 0; i < n; i++) {
                    int kind = blk_kernel_arg_kind(k, i);
                    args[i] = kind == BLK_ARG_PTR ? blk_arg_ptr(mem + (blk_ptr)i * (1 << 20))
                              : kind == BLK_ARG_F32 ? blk_arg_f32(0.5f)
                              : kind == BLK_ARG_F64 ? blk_arg_f64(0.5)
                                                    : blk_arg_i64(64);
                    if (kind != BLK_ARG_F32 && kind != BLK_ARG_F64)
                        snprintf(facts + strlen(facts), sizeof facts - strlen(facts), "%s%s%%16", facts[0] ? "," : "",
                                 blk_kernel_arg_name(k, i));
                }
                int before = fake_cuda_launches();
                cr_assert_eq(blk_launch(k, 2, 1, 1, args, n, NULL), BLK_SUCCESS, "%s %s: %s", e->d_name, name,
                             blk_last_error());
                cr_assert_eq(fake_cuda_launches(), before + 1);
                FakeLaunch l = *fake_cuda_last_launch();
                snprintf(cmd, sizeof cmd, "%s %s --arch %s --kernel %s --no-hints --emit=launch%s%s", BLKC_PATH, path,
                         archs[a], name, facts[0] ? " --assume " : "", facts);
                char *json = run_capture(cmd);
                cr_assert(json, "%s", cmd);
                long long threads = json_number(json, "threads"), shared = json_number(json, "shared_bytes");
                int appended = 0;
                for (const char *p = strstr(json, "\"appended\""); p && (p = strstr(p, "{\"index\"")); p++) appended++;
                cr_expect_eq(threads, (long long)l.block[0], "%s %s %s: the contract says %lld threads, the runtime "
                             "launched %u", e->d_name, name, archs[a], threads, l.block[0]);
                cr_expect_eq(shared, (long long)l.shared, "%s %s %s: the contract says %lld bytes of shared memory, "
                             "the runtime launched with %u", e->d_name, name, archs[a], shared, l.shared);
                cr_expect_eq(n + appended, l.nparams, "%s %s %s: the contract has %d parameters, the launch %d",
                             e->d_name, name, archs[a], n + appended, l.nparams);
                free(json);
                checked++;
            }
            free(all);
            blk_module_destroy(m);
        }
    }
    closedir(d);
    cr_expect_geq(checked, 60, "only %d kernels checked", checked);
}

/* Parameter names that C, C++, cuda.h or the launcher itself give meaning
 * to, and names long enough to have been cut, still give a launcher that
 * compiles (C with -Werror; the header as C++ where a C++ compiler is). */
Test(launcher, odd_parameter_names_still_compile) {
    char dir[] = "/tmp/blk-names-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s %s/../tests/launcher/odd_names.blk --no-hints --variant div16 --emit=c -o %s/l.c && "
             "%s %s/../tests/launcher/odd_names.blk --no-hints --emit=h -o %s/l.h && "
             "%s -std=c11 -Wall -Wextra -Werror -I%s -include %s/l.h -c %s/l.c -o %s/l.o",
             BLKC_PATH, BLK_EXAMPLES_DIR, dir, BLKC_PATH, BLK_EXAMPLES_DIR, dir, BLK_CC, BLK_CUDA_INCLUDE, dir, dir,
             dir);
    cr_expect_eq(system(cmd), 0, "the launcher of odd_names.blk did not compile");
    snprintf(cmd, sizeof cmd, "! command -v c++ > /dev/null || c++ -std=c++17 -Wall -Werror -fsyntax-only -I%s -x c++ %s/l.h",
             BLK_CUDA_INCLUDE, dir);
    cr_expect_eq(system(cmd), 0, "the header of odd_names.blk is no C++");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A module destroyed after its context frees what it holds (LSan checks it
 * in CI): the loaded code's host memory, without the driver. */
Test(launcher, a_module_outliving_its_context_frees_its_code) {
    blk_context *other;
    cr_assert_eq(blk_context_create_cuda(0, &other), BLK_SUCCESS, "%s", blk_last_error());
    char path[512];
    snprintf(path, sizeof path, "%s/add.blk", BLK_EXAMPLES_DIR);
    blk_module *m;
    cr_assert_eq(blk_module_create_from_file(other, path, NULL, &m), BLK_SUCCESS, "%s", blk_last_error());
    blk_kernel *k;
    cr_assert_eq(blk_module_get_kernel(m, "add", &k), BLK_SUCCESS);
    blk_ptr x = alloc(1 << 12);
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_ptr(x), blk_arg_ptr(x), blk_arg_i32(1024)};
    cr_assert_eq(blk_launch(k, 1, 1, 1, args, 4, NULL), BLK_SUCCESS, "%s", blk_last_error());
    blk_context_destroy(other);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 4, NULL), BLK_ERROR_INVALID_VALUE);
    blk_module_destroy(m);
}
