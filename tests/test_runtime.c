/* test_runtime.c: the runtime API (include/blk.h) on the cpu device, and
 * every error it reports without a GPU. The CUDA paths are exercised on the
 * GPU machine (docs/performance.md); here a CUDA context must fail cleanly. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

#include "blk.h"
#include "blkc.h" /* f16 conversions for the f16 check */

#include <stdio.h>

static const char *add_src =
    "kernel add(x: *T @align(16), y: *T @align(16), out: *T @align(16), n: i32,\n"
    "           const T: type = f32, const BLOCK: i32 = 256) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
    "}\n";

typedef struct {
    blk_context *ctx;
    blk_module *mod;
    blk_kernel *add;
    blk_ptr x, y, out;
} Fixture;

static Fixture setup_add(const char *const *defines, int ndefines, size_t n, size_t elem) {
    Fixture fx = {0};
    cr_assert_eq(blk_context_create_cpu(&fx.ctx), BLK_SUCCESS, "%s", blk_last_error());
    blk_compile_options opt = {.defines = defines, .num_defines = ndefines, .name = "add.blk"};
    cr_assert_eq(blk_module_create(fx.ctx, add_src, strlen(add_src), &opt, &fx.mod), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_module_get_kernel(fx.mod, "add", &fx.add), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_malloc(fx.ctx, n * elem, &fx.x), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(fx.ctx, n * elem, &fx.y), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(fx.ctx, n * elem, &fx.out), BLK_SUCCESS);
    return fx;
}

static void teardown(Fixture *fx) {
    cr_expect_eq(blk_free(fx->ctx, fx->x), BLK_SUCCESS);
    cr_expect_eq(blk_free(fx->ctx, fx->y), BLK_SUCCESS);
    cr_expect_eq(blk_free(fx->ctx, fx->out), BLK_SUCCESS);
    blk_module_destroy(fx->mod);
    blk_context_destroy(fx->ctx);
}

Test(runtime, cpu_device_runs_a_kernel_end_to_end) {
    enum { N = 1000 };
    Fixture fx = setup_add(NULL, 0, N, 4);
    cr_expect_str_eq(blk_context_device(fx.ctx), "cpu (reference interpreter)");
    cr_expect_eq(blk_kernel_num_args(fx.add), 4);
    float x[N], y[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i * 0.5f, y[i] = 1.0f / (float)(i + 1);
    cr_assert_eq(blk_memcpy_to_device(fx.ctx, fx.x, x, sizeof x), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_device(fx.ctx, fx.y, y, sizeof y), BLK_SUCCESS);
    blk_arg args[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(N)};
    cr_assert_eq(blk_launch(fx.add, (N + 255) / 256, 1, 1, args, 4, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_synchronize(fx.ctx), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_host(fx.ctx, out, fx.out, sizeof out), BLK_SUCCESS);
    for (int i = 0; i < N; i++) cr_expect_eq(out[i], x[i] + y[i], "out[%d]", i);
    cr_expect_str_eq(blk_last_error(), "");
    teardown(&fx);
}

Test(runtime, a_launch_record_launches_as_blk_launch_does) {
    enum { N = 300 };
    Fixture fx = setup_add(NULL, 0, N, 4);
    float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i;
    cr_assert_eq(blk_memcpy_to_device(fx.ctx, fx.x, x, sizeof x), BLK_SUCCESS);
    blk_launch_record *r = malloc(sizeof *r + 4 * sizeof(blk_arg));
    cr_assert(r);
    *r = (blk_launch_record){.kernel = fx.add, .stream = NULL, .grid = {2, 1, 1}, .num_args = 4};
    r->args[0] = blk_arg_ptr(fx.x), r->args[1] = blk_arg_ptr(fx.x), r->args[2] = blk_arg_ptr(fx.out);
    r->args[3] = blk_arg_i32(N);
    cr_assert_eq(blk_launch_record_run(r), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_memcpy_to_host(fx.ctx, out, fx.out, sizeof out), BLK_SUCCESS);
    for (int i = 0; i < N; i++) cr_expect_eq(out[i], 2.0f * x[i], "out[%d]", i);
    /* checked as blk_launch checks: a wrong count, an empty grid, no record */
    r->num_args = 3;
    cr_expect_eq(blk_launch_record_run(r), BLK_ERROR_BAD_ARGUMENT);
    r->num_args = 4, r->grid[1] = 0;
    cr_expect_eq(blk_launch_record_run(r), BLK_ERROR_BAD_GRID);
    cr_expect_eq(blk_launch_record_run(NULL), BLK_ERROR_INVALID_VALUE);
    free(r);
    teardown(&fx);
}

/* Kernel `k` of src, compiled in ctx (the module into *m). */
static blk_kernel *compile_k(blk_context *ctx, const char *src, const char *name, blk_module **m) {
    blk_compile_options opt = {.name = name};
    cr_assert_eq(blk_module_create(ctx, src, strlen(src), &opt, m), BLK_SUCCESS, "%s", blk_last_error());
    blk_kernel *k;
    cr_assert_eq(blk_module_get_kernel(*m, "k", &k), BLK_SUCCESS);
    return k;
}

/* Each program takes the next slot of a counter and writes its id there: the
 * order the programs ran in. */
static void program_order(blk_context *ctx, int32_t order[64]) {
    const char *src = "kernel k(counter: *i32, order: *i32) {\n"
                      "  store(order + atomic_add(counter, 1), program_id(0));\n"
                      "}\n";
    blk_module *m;
    blk_kernel *k = compile_k(ctx, src, "order.blk", &m);
    blk_ptr counter, out;
    cr_assert_eq(blk_malloc(ctx, 4, &counter), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, 64 * 4, &out), BLK_SUCCESS);
    cr_assert_eq(blk_memset(ctx, counter, 0, 4), BLK_SUCCESS);
    blk_arg args[] = {blk_arg_ptr(counter), blk_arg_ptr(out)};
    cr_assert_eq(blk_launch(k, 64, 1, 1, args, 2, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_memcpy_to_host(ctx, order, out, 64 * 4), BLK_SUCCESS);
    blk_free(ctx, counter);
    blk_free(ctx, out);
    blk_module_destroy(m);
}

static bool in_order(const int32_t order[64]) {
    for (int i = 0; i < 64; i++)
        if (order[i] != i) return false;
    return true;
}

Test(runtime, programs_run_in_a_shuffled_order_on_request) {
    unsetenv("BLK_CPU_SHUFFLE");
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    int32_t a[64], b[64], c[64];
    program_order(ctx, a);
    cr_expect(in_order(a), "programs run 0, 1, 2, ... by default");
    cr_assert_eq(blk_context_shuffle_programs(ctx, 12345), BLK_SUCCESS);
    program_order(ctx, a);
    program_order(ctx, b);
    cr_expect_not(in_order(a), "a seed shuffles them");
    cr_expect_arr_eq(a, b, sizeof a, "the same seed gives the same order");
    bool seen[64] = {false};
    for (int i = 0; i < 64; i++) seen[a[i] & 63] = true;
    for (int i = 0; i < 64; i++) cr_expect(seen[i], "program %d ran", i);
    cr_assert_eq(blk_context_shuffle_programs(ctx, 0), BLK_SUCCESS);
    setenv("BLK_CPU_SHUFFLE", "999", 1);
    program_order(ctx, c);
    cr_expect_not(in_order(c), "BLK_CPU_SHUFFLE shuffles a context left at 0");
    cr_expect(memcmp(a, c, sizeof a) != 0, "another seed, another order");
    unsetenv("BLK_CPU_SHUFFLE");
    cr_expect_eq(blk_context_shuffle_programs(NULL, 1), BLK_ERROR_INVALID_VALUE);
    blk_context_destroy(ctx);
}

Test(runtime, defines_specialize_the_module) {
    const char *defs[] = {"T=f16", "BLOCK=64"};
    enum { N = 100 };
    Fixture fx = setup_add(defs, 2, N, 2);
    uint16_t x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = f32_to_f16((float)i);
    blk_memcpy_to_device(fx.ctx, fx.x, x, sizeof x);
    blk_memcpy_to_device(fx.ctx, fx.y, x, sizeof x);
    blk_arg args[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(N)};
    cr_assert_eq(blk_launch(fx.add, 2, 1, 1, args, 4, NULL), BLK_SUCCESS, "%s", blk_last_error());
    blk_memcpy_to_host(fx.ctx, out, fx.out, sizeof out);
    for (int i = 0; i < N; i++) cr_expect_eq(f16_to_f32(out[i]), 2.0f * (float)i, "out[%d]", i);
    const char *ptx;
    cr_assert_eq(blk_kernel_ptx(fx.add, &ptx), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strstr(ptx, ".visible .entry add(") && strstr(ptx, ".maxntid"), "%s", ptx);
    const char *ir;
    cr_assert_eq(blk_kernel_llvm_ir(fx.add, &ir), BLK_SUCCESS);
    cr_expect(strstr(ir, "define"), "%s", ir);
    cr_expect_str_eq(blk_kernel_consts(fx.add), "T = f16, BLOCK = 64");
    teardown(&fx);
    fx = setup_add(NULL, 0, N, 4); /* the defaults: a grid callable's meta has them too */
    cr_expect_str_eq(blk_kernel_consts(fx.add), "T = f32, BLOCK = 256");
    teardown(&fx);
}

/* blk_kernel_plan: the schedule without facts, and for a launch's (the
 * cpu device's arch, sm_90): n a multiple of 16 makes every access 16 bytes. */
Test(runtime, the_plan_of_a_kernel_and_of_a_launch) {
    enum { N = 1024 }; /* blocks of 256 */
    Fixture fx = setup_add(NULL, 0, N, 4);
    const char *general, *tidy, *again;
    cr_assert_eq(blk_kernel_plan(fx.add, NULL, 0, &general), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strstr(general, "kernel add on sm_90: ") && strstr(general, "facts: none"), "%s", general);
    cr_expect(strstr(general, "load line 5 [256] f32: 4 bytes (1 element) an access: the mask known constant in runs of 1"),
              "%s", general);
    blk_arg args[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(N)};
    cr_assert_eq(blk_kernel_plan(fx.add, args, 4, &tidy), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strstr(tidy, "facts: x%16 y%16 out%16 n%16"), "%s", tidy);
    cr_expect(strstr(tidy, "load line 5 [256] f32: 16 bytes (4 elements) an access: the widest access there is"), "%s",
              tidy);
    cr_assert_eq(blk_kernel_plan(fx.add, args, 4, &again), BLK_SUCCESS);
    cr_expect_eq(again, tidy, "one schedule per set of facts, kept");
    blk_arg wrong[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_f32(1.0f)};
    cr_expect_eq(blk_kernel_plan(fx.add, wrong, 4, &again), BLK_ERROR_BAD_ARGUMENT);
    cr_expect(strstr(blk_last_error(), "'n'"), "%s", blk_last_error());
    cr_expect_eq(blk_kernel_plan(fx.add, NULL, 4, &again), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_kernel_plan(NULL, NULL, 0, &again), BLK_ERROR_INVALID_VALUE);
    /* finer than Triton's: n a multiple of 8, or of 4, still makes f32 runs of 4 (16 bytes); of 2 does not */
    const int sizes[] = {1000, 1004, 1002};
    const char *fact[] = {"n%8", "n%4", NULL};
    for (int i = 0; i < 3; i++) {
        const char *plan;
        blk_arg ragged[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(sizes[i])};
        cr_assert_eq(blk_kernel_plan(fx.add, ragged, 4, &plan), BLK_SUCCESS, "%s", blk_last_error());
        char facts[64];
        snprintf(facts, sizeof facts, "facts: x%%16 y%%16 out%%16%s%s\n", fact[i] ? " " : "", fact[i] ? fact[i] : "");
        cr_expect(strstr(plan, facts), "n = %d: want '%s' in\n%s", sizes[i], facts, plan);
        cr_expect_eq(strstr(plan, "load line 5 [256] f32: 16 bytes (4 elements) an access") != NULL, fact[i] != NULL,
                     "n = %d:\n%s", sizes[i], plan);
    }
    teardown(&fx);
}

Test(runtime, the_explore_page_of_a_kernel_and_of_a_launch) {
    enum { N = 1024 };
    Fixture fx = setup_add(NULL, 0, N, 4);
    const char *general, *tidy, *again;
    cr_assert_eq(blk_kernel_explore(fx.add, NULL, 0, &general), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strncmp(general, "<!DOCTYPE html>", 15) == 0);
    cr_expect(strstr(general, "facts: none") && strstr(general, "<span class=\"i mem\" data-l=\"5\""),
              "the plan, and line 5's load tied to its line");
    blk_arg args[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(N)};
    cr_assert_eq(blk_kernel_explore(fx.add, args, 4, &tidy), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strstr(tidy, "facts: x%16 y%16 out%16 n%16") && strstr(tidy, "ld.global.v4.b32"),
              "the launch's specialization: its facts and 16-byte loads");
    cr_expect(!strstr(general, "ld.global.v4.b32"));
    cr_assert_eq(blk_kernel_explore(fx.add, args, 4, &again), BLK_SUCCESS);
    cr_expect_eq(again, tidy, "one page per build, kept");
    cr_expect_eq(blk_kernel_explore(fx.add, NULL, 4, &again), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_kernel_explore(NULL, NULL, 0, &again), BLK_ERROR_INVALID_VALUE);
    teardown(&fx);
}

/* The page the runtime gives has what the tools installed say, as blkc
 * --explore's does: here stand-ins for ptxas and nvdisasm whose output is known. */
Test(runtime, the_explore_page_has_ptxas_resources_and_sass_where_installed) {
    char dir[] = "/tmp/blk-tools-XXXXXX", path[256], cmd[1024];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ptxas", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("#!/bin/sh\nout=/dev/null\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
          "[ \"$out\" = /dev/null ] || echo cubin > \"$out\"\n"
          "echo \"ptxas info    : Compiling entry function 'add' for 'sm_90'\"\n"
          "echo \"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\"\n"
          "echo \"ptxas info    : Used 128 registers, used 0 barriers\"\n", f);
    fclose(f);
    setenv("BLKC_PTXAS", path, 1);
    snprintf(path, sizeof path, "%s/nvdisasm", dir);
    f = fopen(path, "w");
    cr_assert(f);
    fputs("#!/bin/sh\nprintf '\\t//## File \"add.blk\", line 5\\n        /*0000*/  LDG.E.128 R4, desc[UR4][R2.64] ;\\n'\n",
          f);
    fclose(f);
    setenv("BLKC_NVDISASM", path, 1);
    snprintf(cmd, sizeof cmd, "chmod +x %s/ptxas %s/nvdisasm", dir, dir);
    cr_assert_eq(system(cmd), 0);
    Fixture fx = setup_add(NULL, 0, 1024, 4);
    const char *page;
    cr_assert_eq(blk_kernel_explore(fx.add, NULL, 0, &page), BLK_SUCCESS, "%s", blk_last_error());
    /* 128 registers a thread: 4096 a warp, a program of 1 warp (BLOCK = 256): 16 programs an SM */
    cr_expect(strstr(page, "add: 16 programs an SM on sm_90 (limit: registers)"), "the chart");
    cr_expect(strstr(page, "<h2>SASS (nvdisasm)</h2>") &&
                  strstr(page, "<span class=\"x mem\" data-l=\"5\" style=\"--h:335\">/*0000*/  LDG.E.128"),
              "the SASS, tied to line 5");
    teardown(&fx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A ragged contiguous matmul (no dimension a multiple of 16, every row 16
 * bytes long) is specialized for its strides' multiples of 8, as TMA and
 * 16-byte f16 accesses need: wgmma and TMA copies, not the slow general build. */
Test(runtime, a_ragged_matmul_launch_gets_wgmma_and_tma) {
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_compile_options opt = {.arch = "sm_90a"};
    blk_module *m;
    blk_kernel *k;
    cr_assert_eq(blk_module_create_from_file(ctx, BLK_EXAMPLES_DIR "/matmul.blk", &opt, &m), BLK_SUCCESS, "%s",
                 blk_last_error());
    cr_assert_eq(blk_module_get_kernel(m, "matmul", &k), BLK_SUCCESS);
    blk_ptr a, b, c;
    int M = 3000, N = 5000, K = 4000; /* multiples of 8, not of 16 */
    cr_assert_eq(blk_malloc(ctx, 64, &a), BLK_SUCCESS); /* the plan reads no memory: only the pointers' alignment */
    cr_assert_eq(blk_malloc(ctx, 64, &b), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, 64, &c), BLK_SUCCESS);
    blk_arg args[] = {blk_arg_ptr(a), blk_arg_ptr(b), blk_arg_ptr(c), blk_arg_i32(M), blk_arg_i32(N), blk_arg_i32(K),
                      blk_arg_i32(K), blk_arg_i32(1), blk_arg_i32(N), blk_arg_i32(1), blk_arg_i32(N), blk_arg_i32(1)};
    const char *plan;
    cr_assert_eq(blk_kernel_plan(k, args, 12, &plan), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect(strstr(plan, "facts: a%16 b%16 c%16 M%8 N%8 K%16 stride_am%16 stride_ak=1 stride_bk%8 stride_bn=1 "
                           "stride_cm%8 stride_cn=1\n"), "%s", plan);
    cr_expect(strstr(plan, "f16: wgmma.m64n128k16, "), "%s", plan);
    cr_expect(strstr(plan, "load line 28 [128, 32] f16: ring slot +0, 8192 bytes; TMA, map 0") &&
              strstr(plan, "load line 29 [32, 128] f16: ring slot +8192, 8192 bytes; TMA, map 1"),
              "both loads copied by TMA:\n%s", plan);
    cr_expect(strstr(plan, "store line 35 [128, 128] f16: 16 bytes (8 elements) an access"), "%s", plan);
    for (int i = 0; i < 3; i++) cr_expect_eq(blk_free(ctx, i == 0 ? a : i == 1 ? b : c), BLK_SUCCESS);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

Test(runtime, a_successful_compile_keeps_its_notes_and_a_helper_may_take_a_builtins_name) {
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    const char *src = "fn tanh(v) {\n  return 2.0 * v;\n}\n"
                      "kernel k(x: *f32) {\n  store(x, tanh(load(x)) + 1.0);\n}\n";
    blk_module *m;
    blk_kernel *k = compile_k(ctx, src, "mine.blk", &m);
    const char *said = blk_module_diagnostics(m);
    cr_assert_not_null(said);
    cr_expect(strstr(said, "mine.blk:1:4: note: helper 'tanh' hides the builtin of that name"), "%s", said);
    blk_ptr x;
    float v = 3.0f;
    cr_assert_eq(blk_malloc(ctx, 4, &x), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_device(ctx, x, &v, 4), BLK_SUCCESS);
    blk_arg args[] = {blk_arg_ptr(x)};
    cr_assert_eq(blk_launch(k, 1, 1, 1, args, 1, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_memcpy_to_host(ctx, &v, x, 4), BLK_SUCCESS);
    cr_expect_eq(v, 7.0f, "the helper's 2 v + 1, not the builtin tanh: %g", v);
    blk_module *plain;
    compile_k(ctx, "kernel k(x: *f32) {\n  store(x, 1.0);\n}\n", "plain.blk", &plain);
    cr_expect_null(blk_module_diagnostics(plain), "a compile with nothing to say keeps nothing");
    blk_module_destroy(plain);
    blk_module_destroy(m);
    cr_expect_null(blk_module_diagnostics(m), "a destroyed module has none");
    blk_free(ctx, x);
    blk_context_destroy(ctx);
}

/* A pointer passed None (-D NAME=None, as Python does for a None argument):
 * 'b != None' is false at compile time, its argument must be null, and the
 * build with it given still refuses a null one. */
Test(runtime, a_pointer_passed_none_is_absent_from_its_build) {
    const char *src = "kernel k(x: *f32, b: *f32, y: *f32) {\n"
                      "    var v = load(x) * 2.0;\n"
                      "    if b != None { v += load(b); }\n"
                      "    store(y, v);\n"
                      "}\n";
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_ptr x, b, y;
    float three = 3.0f, ten = 10.0f, out = 0.0f;
    cr_assert_eq(blk_malloc(ctx, 4, &x), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, 4, &b), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, 4, &y), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_device(ctx, x, &three, 4), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_device(ctx, b, &ten, 4), BLK_SUCCESS);
    const char *none[] = {"k.b=None"};
    for (int absent = 0; absent < 2; absent++) {
        blk_compile_options opt = {.defines = none, .num_defines = absent, .name = "bias.blk"};
        blk_module *m;
        cr_assert_eq(blk_module_create(ctx, src, strlen(src), &opt, &m), BLK_SUCCESS, "%s", blk_last_error());
        blk_kernel *k;
        cr_assert_eq(blk_module_get_kernel(m, "k", &k), BLK_SUCCESS);
        blk_arg args[] = {blk_arg_ptr(x), blk_arg_ptr(absent ? 0 : b), blk_arg_ptr(y)};
        cr_assert_eq(blk_launch(k, 1, 1, 1, args, 3, NULL), BLK_SUCCESS, "%s", blk_last_error());
        cr_assert_eq(blk_memcpy_to_host(ctx, &out, y, 4), BLK_SUCCESS);
        cr_expect_eq(out, absent ? 6.0f : 16.0f, "absent %d: %g", absent, out);
        /* the other pointer value is refused, naming the argument */
        args[1] = blk_arg_ptr(absent ? b : 0);
        cr_expect_eq(blk_launch(k, 1, 1, 1, args, 3, NULL), BLK_ERROR_BAD_ARGUMENT);
        cr_expect(strstr(blk_last_error(), absent ? "argument 1 ('b'): the module was built with 'b' None (-D k.b=None)"
                                                  : "argument 1 ('b'): a null pointer"),
                  "%s", blk_last_error());
        const char *ptx;
        if (blk_kernel_ptx(k, &ptx) == BLK_SUCCESS) /* (the cpu device compiles PTX too, where LLVM is built in) */
            cr_expect(!absent || strstr(ptx, "null: built with it None, never read"), "%.600s", ptx);
        blk_module_destroy(m);
    }
    blk_free(ctx, x);
    blk_free(ctx, b);
    blk_free(ctx, y);
    blk_context_destroy(ctx);
}

Test(runtime, compile_errors_carry_the_diagnostics) {
    blk_context *ctx;
    blk_context_create_cpu(&ctx);
    blk_module *m = NULL;
    const char *bad = "kernel k(x: *f32) {\n    let a = y;\n}\n";
    blk_compile_options opt = {.name = "bad.blk"};
    cr_expect_eq(blk_module_create(ctx, bad, strlen(bad), &opt, &m), BLK_ERROR_COMPILE);
    cr_expect_null(m);
    cr_expect_str_eq(blk_last_error(), "bad.blk:2:13: error: use of undeclared name 'y'\n"
                                       "    let a = y;\n"
                                       "            ^\n");
    const char *defs[] = {"NOPE=1"};
    opt = (blk_compile_options){.defines = defs, .num_defines = 1};
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_ERROR_COMPILE);
    cr_expect(strstr(blk_last_error(), "-D NOPE"), "%s", blk_last_error());
    const char *malformed[] = {"BLOCK"};
    opt = (blk_compile_options){.defines = malformed, .num_defines = 1};
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_ERROR_INVALID_VALUE);
    opt = (blk_compile_options){.arch = "sm_70"};
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "unknown arch 'sm_70'"), "%s", blk_last_error());
    opt = (blk_compile_options){.min_blocks_per_sm = 33};
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "min_blocks_per_sm"), "%s", blk_last_error());
    opt = (blk_compile_options){.min_blocks_per_sm = -2};
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_module_create_from_file(ctx, "/nonexistent.blk", NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_module_create_from_file(ctx, "/tmp", NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_last_error(), "'/tmp' is not a regular file (a directory)");
    /* never block on a FIFO nor read a device that never ends, nor a file too large to be a source */
    char fifo[] = "/tmp/blk-fifo-XXXXXX";
    cr_assert(mkdtemp(fifo));
    char path[64];
    snprintf(path, sizeof path, "%s/f.blk", fifo);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_expect_eq(blk_module_create_from_file(ctx, path, NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "is not a regular file (a FIFO)"), "%s", blk_last_error());
    unlink(path);
    cr_expect_eq(blk_module_create_from_file(ctx, "/dev/zero", NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_last_error(), "'/dev/zero' is not a regular file (a device or socket)");
    snprintf(path, sizeof path, "%s/big.blk", fifo);
    FILE *big = fopen(path, "w");
    cr_assert(big);
    cr_assert_eq(ftruncate(fileno(big), (off_t)(65 << 20)), 0); /* sparse: nothing written */
    fclose(big);
    cr_expect_eq(blk_module_create_from_file(ctx, path, NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "is larger than 64 MiB: not a blk source"), "%s", blk_last_error());
    unlink(path);
    rmdir(fifo);
    opt = (blk_compile_options){.name = "empty.blk"};
    cr_expect_eq(blk_module_create(ctx, "// nothing\n", 11, &opt, &m), BLK_ERROR_COMPILE);
    cr_expect_str_eq(blk_last_error(), "empty.blk: error: no kernel in this module\n"); /* as blkc prints it */
    cr_expect_null(m);
    blk_context_destroy(ctx);
}

/* min_blocks_per_sm > 0 is the kernel's occupancy target in its PTX; 0
 * (automatic: set by a CUDA device after a first build) and -1 give none. */
Test(runtime, the_occupancy_target_option_reaches_the_ptx) {
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    const int targets[] = {4, 0, -1};
    for (int i = 0; i < 3; i++) {
        blk_compile_options opt = {.min_blocks_per_sm = targets[i]};
        blk_module *m;
        blk_kernel *k;
        const char *ptx;
        cr_assert_eq(blk_module_create(ctx, add_src, strlen(add_src), &opt, &m), BLK_SUCCESS, "%s", blk_last_error());
        cr_assert_eq(blk_module_get_kernel(m, "add", &k), BLK_SUCCESS);
        cr_assert_eq(blk_kernel_ptx(k, &ptx), BLK_SUCCESS, "%s", blk_last_error());
        cr_expect_eq(strstr(ptx, ".minnctapersm 4\n") != NULL, targets[i] == 4, "%d:\n%s", targets[i], ptx);
        cr_expect_eq(strstr(ptx, ".minnctapersm") != NULL, targets[i] == 4, "%d:\n%s", targets[i], ptx);
        blk_module_destroy(m);
    }
    blk_context_destroy(ctx);
}

/* The compiler's flags (compiler/options.def) reach the C API: blk_compile_flags names the
 * struct's flag fields in order, and precise_math and no_fma (once blkc's only) change the PTX. */
Test(runtime, the_compiler_flags_are_the_options_fields_and_reach_the_code) {
    cr_expect_str_eq(blk_compile_flags(), "no_tma no_warp_specialize persistent debug precise_math no_fma no_bulk_reduce ping_pong overlap_dots");
    cr_expect_eq(blk_compile_options_size(), sizeof(blk_compile_options));
    static const char src[] = "kernel k(x: *f32, y: *f32) { let a = load(x); let b = load(y); store(y, a / b + a * b); }\n";
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    struct {
        blk_compile_options opt;
        const char *has, *lacks;
    } cases[] = {{{.arch = "sm_90"}, "div.full.f32", "div.rn.f32"},
                 {{.arch = "sm_90", .precise_math = 1}, "div.rn.f32", "div.full.f32"},
                 {{.arch = "sm_90"}, "fma.rn.f32", NULL},
                 {{.arch = "sm_90", .no_fma = 1}, "mul.rn.f32", "fma.rn.f32"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blk_module *m;
        blk_kernel *k;
        const char *ptx;
        cr_assert_eq(blk_module_create(ctx, src, strlen(src), &cases[i].opt, &m), BLK_SUCCESS, "%s", blk_last_error());
        cr_assert_eq(blk_module_get_kernel(m, "k", &k), BLK_SUCCESS);
        cr_assert_eq(blk_kernel_ptx(k, &ptx), BLK_SUCCESS, "%s", blk_last_error());
        cr_expect(strstr(ptx, cases[i].has) != NULL, "case %zu: no %s in\n%s", i, cases[i].has, ptx);
        cr_expect(!cases[i].lacks || !strstr(ptx, cases[i].lacks), "case %zu: %s in\n%s", i, cases[i].lacks, ptx);
        blk_module_destroy(m);
    }
    blk_context_destroy(ctx);
}

/* The integer options (options.def's BLK_INT rows): blk_compile_int_options names them, each is
 * checked against its row's range with the row's words, and one in range reaches the code. */
Test(runtime, the_integer_options_are_named_checked_and_reach_the_code) {
    cr_expect_str_eq(blk_compile_int_options(), "num_warps num_stages min_blocks_per_sm");
    static const char src[] = "kernel k(x: *f32) { store(x + arange(0, 64), 1.0); }\n";
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    struct {
        blk_compile_options opt;
        const char *error; /* NULL: fine */
    } cases[] = {{{.num_warps = 3}, "num_warps must be 0 or a power of two up to 32, got 3"},
                 {{.num_warps = 64}, "num_warps must be 0 or a power of two up to 32, got 64"},
                 {{.num_stages = 1}, "num_stages must be 0 or 2 to 8, got 1"},
                 {{.num_stages = 9}, "num_stages must be 0 or 2 to 8, got 9"},
                 {{.min_blocks_per_sm = -2}, "min_blocks_per_sm must be -1 (none), 0 (the default) or 1 to 32, got -2"},
                 {{.min_blocks_per_sm = 33}, "min_blocks_per_sm must be -1 (none), 0 (the default) or 1 to 32, got 33"},
                 {{.num_warps = 2, .num_stages = 8, .min_blocks_per_sm = -1}, NULL},
                 {{.min_blocks_per_sm = 3}, NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blk_module *m = NULL;
        blk_status s = blk_module_create(ctx, src, strlen(src), &cases[i].opt, &m);
        if (cases[i].error) {
            cr_expect_eq(s, BLK_ERROR_INVALID_VALUE, "case %zu", i);
            cr_expect(strstr(blk_last_error(), cases[i].error), "case %zu: %s", i, blk_last_error());
            continue;
        }
        cr_assert_eq(s, BLK_SUCCESS, "case %zu: %s", i, blk_last_error());
        blk_kernel *k;
        const char *ptx;
        cr_assert_eq(blk_module_get_kernel(m, "k", &k), BLK_SUCCESS);
        cr_assert_eq(blk_kernel_ptx(k, &ptx), BLK_SUCCESS, "%s", blk_last_error());
        if (cases[i].opt.num_warps) cr_expect(strstr(ptx, ".maxntid 64, 1, 1"), "num_warps 2:\n%s", ptx);
        if (cases[i].opt.min_blocks_per_sm > 0) cr_expect(strstr(ptx, ".minnctapersm 3"), "%s", ptx);
        else cr_expect(!strstr(ptx, ".minnctapersm"), "-1: none\n%s", ptx);
        blk_module_destroy(m);
    }
    blk_context_destroy(ctx);
}

/* debug (and $BLK_DEBUG=1, as Triton's TRITON_DEBUG=1) compiles device_assert
 * into the PTX; without it the assertion is not there. */
Test(runtime, the_debug_option_and_blk_debug_compile_device_asserts) {
    static const char src[] = "kernel k(x: *f32) { device_assert(load(x) > 0.0, \"positive\"); }\n";
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    for (int i = 0; i < 3; i++) {
        blk_compile_options opt = {.debug = i == 1};
        if (i == 2) setenv("BLK_DEBUG", "1", 1);
        blk_module *m;
        blk_kernel *k;
        const char *ptx;
        cr_assert_eq(blk_module_create(ctx, src, strlen(src), &opt, &m), BLK_SUCCESS, "%s", blk_last_error());
        cr_assert_eq(blk_module_get_kernel(m, "k", &k), BLK_SUCCESS);
        cr_assert_eq(blk_kernel_ptx(k, &ptx), BLK_SUCCESS, "%s", blk_last_error());
        cr_expect_eq(strstr(ptx, "__assertfail") != NULL, i > 0, "build %d:\n%s", i, ptx);
        blk_module_destroy(m);
        unsetenv("BLK_DEBUG");
    }
    blk_context_destroy(ctx);
}

Test(runtime, launch_arguments_are_checked_against_the_signature) {
    Fixture fx = setup_add(NULL, 0, 64, 4);
    blk_arg good[] = {blk_arg_ptr(fx.x), blk_arg_ptr(fx.y), blk_arg_ptr(fx.out), blk_arg_i32(64)};
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, good, 3, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'add' takes 4 arguments (x, y, out, n), got 3");
    blk_arg a[4];
    memcpy(a, good, sizeof a);
    a[1] = blk_arg_i32(5);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'add', argument 1 ('y'): expects a pointer (*f32), got an i32");
    memcpy(a, good, sizeof a);
    a[0] = blk_arg_ptr(0);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'add', argument 0 ('x'): a null pointer");
    memcpy(a, good, sizeof a);
    a[3] = blk_arg_i64(1LL << 40);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'add', argument 3 ('n'): 1099511627776 does not fit i32");
    a[3] = blk_arg_f32(1.0f);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect(strstr(blk_last_error(), "expects an integer (i32), got an f32"), "%s", blk_last_error());
    memcpy(a, good, sizeof a);
    a[2] = blk_arg_ptr(fx.out + 4); /* declared @align(16) */
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect(strstr(blk_last_error(), "declared @align(16)"), "%s", blk_last_error());
    a[2] = blk_arg_ptr(fx.out + 2); /* not even f32-aligned */
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect(strstr(blk_last_error(), "is not aligned to its f32 elements"), "%s", blk_last_error());
    int host;
    a[2] = blk_arg_ptr((blk_ptr)(uintptr_t)&host & ~(blk_ptr)15);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, a, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect(strstr(blk_last_error(), "is not memory from blk_malloc"), "%s", blk_last_error());
    cr_expect_eq(blk_launch(fx.add, 0, 1, 1, good, 4, NULL), BLK_ERROR_BAD_GRID);
    cr_expect_str_eq(blk_last_error(), "kernel 'add': the grid (0, 1, 1) is empty");
    cr_expect_eq(blk_launch(fx.add, 1u << 31, 1u << 31, 1u << 31, good, 4, NULL), BLK_ERROR_BAD_GRID);
    cr_expect_str_eq(blk_last_error(),
                     "kernel 'add': the grid (2147483648, 2147483648, 2147483648) has 2^64 programs or more");
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, NULL, 4, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_eq(blk_launch(NULL, 1, 1, 1, good, 4, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_launch(fx.add, 1, 1, 1, good, 4, NULL), BLK_SUCCESS, "%s", blk_last_error());
    teardown(&fx);
}

/* The scalar types beyond i32: narrow integers take any integer kind in
 * range, u64 its whole range (blk_arg_u64), f64 a double (blk_arg_f64;
 * blk_arg_f32 widens exactly); the kinds a parameter takes say so. */
Test(runtime, narrow_and_wide_scalar_parameters) {
    blk_context *ctx;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_module *m;
    blk_kernel *k = compile_k(ctx, "kernel k(out: *u64, d: *f64, a: i8, b: u16, u: u64, x: f64) {\n"
                                   "  store(out, (a as i64) as u64); store(out + 1, b as u64); store(out + 2, u);\n"
                                   "  store(d, x);\n}\n", "scalars.blk", &m);
    cr_expect_eq(blk_kernel_arg_kind(k, 2), BLK_ARG_I32);
    cr_expect_eq(blk_kernel_arg_kind(k, 3), BLK_ARG_U32);
    cr_expect_eq(blk_kernel_arg_kind(k, 4), BLK_ARG_U64);
    cr_expect_eq(blk_kernel_arg_kind(k, 5), BLK_ARG_F64);
    cr_expect_str_eq(blk_kernel_arg_type(k, 0), "*u64");
    blk_ptr out, d;
    cr_assert_eq(blk_malloc(ctx, 24, &out), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, 8, &d), BLK_SUCCESS);
    blk_arg args[] = {blk_arg_ptr(out), blk_arg_ptr(d), blk_arg_i32(-128), blk_arg_i64(65535),
                      blk_arg_u64(UINT64_MAX), blk_arg_f64(0.1)};
    cr_assert_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_SUCCESS, "%s", blk_last_error());
    uint64_t o[3];
    double dv;
    cr_assert_eq(blk_memcpy_to_host(ctx, o, out, sizeof o), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_host(ctx, &dv, d, sizeof dv), BLK_SUCCESS);
    cr_expect_eq(o[0], (uint64_t)-128);
    cr_expect_eq(o[1], 65535);
    cr_expect_eq(o[2], UINT64_MAX);
    cr_expect_eq(dv, 0.1, "the double, not its f32 rounding");
    args[5] = blk_arg_f32(0.1f);
    cr_assert_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_assert_eq(blk_memcpy_to_host(ctx, &dv, d, sizeof dv), BLK_SUCCESS);
    cr_expect_eq(dv, (double)0.1f);
    args[2] = blk_arg_i32(200);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'k', argument 2 ('a'): 200 does not fit i8");
    args[2] = blk_arg_i32(0);
    args[4] = blk_arg_i64(-1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'k', argument 4 ('u'): -1 does not fit u64");
    args[4] = blk_arg_u64(1);
    args[3] = blk_arg_u64(UINT64_MAX);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'k', argument 3 ('b'): 18446744073709551615 does not fit u16");
    args[3] = blk_arg_i32(1);
    args[5] = blk_arg_i32(1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 6, NULL), BLK_ERROR_BAD_ARGUMENT);
    cr_expect_str_eq(blk_last_error(), "kernel 'k', argument 5 ('x'): expects a float (f64: blk_arg_f64), got an i32");
    blk_free(ctx, out);
    blk_free(ctx, d);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

Test(runtime, unknown_kernels_and_bad_memory_calls_are_errors) {
    Fixture fx = setup_add(NULL, 0, 16, 4);
    blk_kernel *k;
    cr_expect_eq(blk_module_get_kernel(fx.mod, "sub", &k), BLK_ERROR_NOT_FOUND);
    cr_expect_str_eq(blk_last_error(), "no kernel named 'sub' in the module (it has: add)");
    blk_ptr huge;
    cr_expect_eq(blk_malloc(fx.ctx, SIZE_MAX, &huge), BLK_ERROR_OUT_OF_MEMORY);
    float buf[32];
    cr_expect_eq(blk_memcpy_to_device(fx.ctx, fx.x, buf, sizeof buf), BLK_ERROR_INVALID_VALUE, "past the allocation");
    cr_expect(strstr(blk_last_error(), "is not inside memory from blk_malloc"), "%s", blk_last_error());
    cr_expect_eq(blk_memcpy_to_host(fx.ctx, buf, fx.x + 8, 64), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_memset(fx.ctx, fx.x, 0, 64), BLK_SUCCESS);
    cr_expect_eq(blk_free(fx.ctx, fx.x + 4), BLK_ERROR_INVALID_VALUE);
    blk_ptr p;
    cr_expect_eq(blk_malloc(fx.ctx, 0, &p), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_malloc(NULL, 16, &p), BLK_ERROR_INVALID_VALUE);
    teardown(&fx);
}

/* A cpu context with the module of src (named name) and its kernel 'k'. */
/* compile_k in a new cpu context. */
static blk_kernel *kernel_k(const char *src, const char *name, blk_context **ctx, blk_module **m) {
    cr_assert_eq(blk_context_create_cpu(ctx), BLK_SUCCESS, "%s", blk_last_error());
    return compile_k(*ctx, src, name, m);
}

/* With `var` set to `value`, a launch of `programs` programs fails with
 * `status` and an error that says `want`. */
static void expect_launch_under_env(blk_kernel *k, blk_arg *args, unsigned programs, const char *var,
                                    const char *value, blk_status status, const char *want) {
    setenv(var, value, 1);
    cr_expect_eq(blk_launch(k, programs, 1, 1, args, 1, NULL), status, "%s=%s", var, value);
    cr_expect(strstr(blk_last_error(), want), "%s", blk_last_error());
    unsetenv(var);
}

Test(runtime, a_spin_on_the_cpu_device_ends_at_the_loop_budget) {
    blk_context *ctx;
    blk_module *m;
    /* the exchange writes memory every time: only the budget stops program 1 */
    blk_kernel *k = kernel_k("kernel k(lock: *i32) {\n    while atomic_xchg(lock, 1) == 1 {}\n}\n", "spin.blk", &ctx, &m);
    blk_ptr lock;
    blk_malloc(ctx, sizeof(int32_t), &lock);
    blk_arg args[] = {blk_arg_ptr(lock)};
    expect_launch_under_env(k, args, 2, "BLK_CPU_MAX_LOOP_ITERATIONS", "5000", BLK_ERROR_KERNEL_FAULT,
                            "kernel 'k', spin.blk:2: program (1, 0, 0): this while loop ran 5000 iterations");
    expect_launch_under_env(k, args, 1, "BLK_CPU_MAX_LOOP_ITERATIONS", "lots", BLK_ERROR_INVALID_VALUE,
                            "BLK_CPU_MAX_LOOP_ITERATIONS='lots'");
    /* the per-launch step budget (the lock is still held from the launches above) */
    expect_launch_under_env(k, args, 1, "BLK_CPU_MAX_STEPS", "2000", BLK_ERROR_KERNEL_FAULT,
                            "spin.blk:2: program (0, 0, 0): the launch ran past its budget of 2000 element");
    expect_launch_under_env(k, args, 1, "BLK_CPU_MAX_STEPS", "-3", BLK_ERROR_INVALID_VALUE,
                            "BLK_CPU_MAX_STEPS='-3' is not a positive integer");
    blk_free(ctx, lock);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

/* ---- a property test of argument checking: random argument lists against a
 * model of the rules in docs/runtime.md, written from the docs, not the code */

typedef enum { P_PTR_F32_ALIGN16, P_PTR_F16, P_I32_MULT4, P_U32, P_I64, P_F32, P_F16, P_BOOL } ParamRule;
static const ParamRule prop_rules[] = {P_PTR_F32_ALIGN16, P_PTR_F16, P_I32_MULT4, P_U32, P_I64, P_F32, P_F16, P_BOOL};
static const char *const prop_names[] = {"x", "y", "n", "m", "big", "s", "h", "flag"};
enum { PROP_NPARAMS = 8, PROP_ELEMS = 64 };

static uint64_t prop_next(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Why the model rejects argument a for rule r, or NULL; *foreign is set for
 * a well-formed pointer outside blk_malloc memory (caught after the checks). */
static const char *prop_verdict(ParamRule r, blk_arg a, blk_ptr xbase, blk_ptr ybase, bool *foreign) {
    *foreign = false;
    if ((unsigned)a.kind > BLK_ARG_F32) return "unknown argument kind";
    bool is_int = a.kind == BLK_ARG_I32 || a.kind == BLK_ARG_U32 || a.kind == BLK_ARG_I64;
    switch (r) {
    case P_PTR_F32_ALIGN16: case P_PTR_F16: {
        if (a.kind != BLK_ARG_PTR) return "expects a pointer";
        if (a.value.ptr == 0) return "a null pointer";
        if (a.value.ptr % (r == P_PTR_F16 ? 2 : 4)) return "is not aligned to its";
        if (r == P_PTR_F32_ALIGN16 && a.value.ptr % 16) return "declared @align(16)";
        blk_ptr base = r == P_PTR_F16 ? ybase : xbase;
        *foreign = a.value.ptr < base || a.value.ptr >= base + 64;
        return NULL;
    }
    case P_F32: case P_F16: return a.kind == BLK_ARG_F32 ? NULL : "expects a float";
    default: break;
    }
    if (!is_int) return "expects an integer";
    int64_t v = a.value.i;
    if (r == P_I32_MULT4 && (v < INT32_MIN || v > INT32_MAX)) return "does not fit i32";
    if (r == P_U32 && (v < 0 || v > (int64_t)UINT32_MAX)) return "does not fit u32";
    if (r == P_BOOL && v != 0 && v != 1) return "does not fit i1";
    if (r == P_I32_MULT4 && v % 4) return "declared @multiple_of(4)";
    return NULL;
}

static blk_arg prop_random_arg(uint64_t *st, ParamRule r, blk_ptr xbase, blk_ptr ybase, blk_ptr foreign) {
    static const int64_t ints[] = {0, 1, 4, 16, 3, -8, 2147483648LL, INT32_MIN, 4294967295LL, -1, 1LL << 40, 1 << 20};
    static const float floats[] = {1.5f, 0.1f, 70000.0f, -2.25f};
    blk_ptr base = r == P_PTR_F16 ? ybase : xbase;
    blk_ptr ptrs[] = {base, base + 16, base + 4, base + 2, 0, foreign, base + 1};
    blk_arg_kind right = r <= P_PTR_F16 ? BLK_ARG_PTR
                       : r == P_F32 || r == P_F16 ? BLK_ARG_F32
                       : r == P_U32 ? BLK_ARG_U32 : r == P_I64 ? BLK_ARG_I64 : BLK_ARG_I32;
    uint64_t roll = prop_next(st) % 100;
    blk_arg a;
    memset(&a, 0, sizeof a);
    a.kind = roll < 75 ? right : roll < 98 ? (blk_arg_kind)(prop_next(st) % 5) : (blk_arg_kind)7;
    if (a.kind == BLK_ARG_PTR) a.value.ptr = ptrs[prop_next(st) % 7];
    else if (a.kind == BLK_ARG_F32) a.value.f = floats[prop_next(st) % 4];
    else a.value.i = ints[prop_next(st) % 12];
    return a;
}

/* An argument the rules accept for r. */
static blk_arg prop_valid_arg(uint64_t *st, ParamRule r, blk_ptr xbase, blk_ptr ybase) {
    static const int64_t n_values[] = {0, 4, 16, -8, 1 << 20}, u32_values[] = {0, 1, 16, 4294967295LL};
    static const int64_t i64_values[] = {-1, 5, 1LL << 40, INT64_MIN};
    static const float floats[] = {1.5f, 0.1f, 70000.0f, -2.25f};
    uint64_t pick = prop_next(st);
    switch (r) {
    case P_PTR_F32_ALIGN16: return blk_arg_ptr(xbase + 16 * (pick % 2));
    case P_PTR_F16: return blk_arg_ptr(ybase + 2 * (pick % 9));
    case P_I32_MULT4: return blk_arg_i32((int32_t)n_values[pick % 5]);
    case P_U32: return blk_arg_u32((uint32_t)u32_values[pick % 4]);
    case P_I64: return blk_arg_i64(i64_values[pick % 4]);
    case P_F32: case P_F16: return blk_arg_f32(floats[pick % 4]);
    case P_BOOL: return blk_arg_i32((int32_t)(pick % 2));
    }
    return blk_arg_i32(0);
}

Test(runtime, argument_checking_agrees_with_a_model_on_random_launches) {
    blk_context *ctx;
    blk_module *m;
    blk_kernel *k = kernel_k(
        "kernel k(x: *f32 @align(16), y: *f16, n: i32 @multiple_of(4), m: u32, big: i64, s: f32, h: f16,\n"
        "         flag: bool) {\n"
        "    let i = arange(0, 16);\n"
        "    let v = load(y + i, i < n) as f32 * s + h as f32 + (m & 7) as f32 + (big & 7) as f32 + flag as f32;\n"
        "    store(x + i, v, i < n);\n"
        "}\n", "args.blk", &ctx, &m);
    /* the signature as the API describes it (what the Python package checks arguments by) */
    static const char *const types[] = {"*f32", "*f16", "i32", "u32", "i64", "f32", "f16", "i1"};
    static const int kinds[] = {BLK_ARG_PTR, BLK_ARG_PTR, BLK_ARG_I32, BLK_ARG_U32, BLK_ARG_I64,
                                BLK_ARG_F32, BLK_ARG_F32, BLK_ARG_I32};
    cr_assert_eq(blk_kernel_num_args(k), PROP_NPARAMS);
    for (int i = 0; i < PROP_NPARAMS; i++) {
        cr_expect_str_eq(blk_kernel_arg_name(k, i), prop_names[i]);
        cr_expect_str_eq(blk_kernel_arg_type(k, i), types[i]);
        cr_expect_eq(blk_kernel_arg_kind(k, i), kinds[i], "argument %d", i);
    }
    cr_expect_null(blk_kernel_arg_type(k, PROP_NPARAMS));
    cr_expect_eq(blk_kernel_arg_kind(k, -1), -1);
    blk_ptr x, y;
    cr_assert_eq(blk_malloc(ctx, PROP_ELEMS * sizeof(float), &x), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, PROP_ELEMS * sizeof(uint16_t), &y), BLK_SUCCESS);
    _Float16 yh[PROP_ELEMS];
    for (int e = 0; e < PROP_ELEMS; e++) yh[e] = (_Float16)(e * 0.25f - 3.0f);
    cr_assert_eq(blk_memcpy_to_device(ctx, y, yh, sizeof yh), BLK_SUCCESS);
    static _Alignas(16) float host_memory[8];
    blk_ptr foreign = (blk_ptr)(uintptr_t)host_memory;
    uint64_t st = 2026;
    int outcomes[3] = {0, 0, 0}; /* launched, rejected by the checks, foreign memory */
    for (int trial = 0; trial < 3000; trial++) {
        uint64_t roll = prop_next(&st) % 100;
        int nargs = roll < 90 ? PROP_NPARAMS : (int)(prop_next(&st) % 10);
        /* a valid list with 0 to 2 arguments replaced by random ones */
        blk_arg args[10];
        for (int i = 0; i < nargs; i++) args[i] = prop_valid_arg(&st, prop_rules[i % PROP_NPARAMS], x, y);
        for (int r = (int)(prop_next(&st) % 3); r > 0 && nargs > 0; r--) {
            int i = (int)(prop_next(&st) % (uint64_t)nargs);
            args[i] = prop_random_arg(&st, prop_rules[i % PROP_NPARAMS], x, y, foreign);
        }
        float before[PROP_ELEMS], after[PROP_ELEMS];
        for (int e = 0; e < PROP_ELEMS; e++) before[e] = -7.0f - (float)e;
        cr_assert_eq(blk_memcpy_to_device(ctx, x, before, sizeof before), BLK_SUCCESS);
        blk_status s = blk_launch(k, 1, 1, 1, args, nargs, NULL);
        const char *err = blk_last_error();
        char prefix[96];
        if (nargs != PROP_NPARAMS) {
            cr_assert_eq(s, BLK_ERROR_BAD_ARGUMENT, "trial %d: %d arguments", trial, nargs);
            snprintf(prefix, sizeof prefix, "kernel 'k' takes 8 arguments (x, y, n, m, big, s, h, flag), got %d", nargs);
            cr_assert_str_eq(err, prefix, "trial %d", trial);
            outcomes[1]++;
            continue;
        }
        /* the model: the first argument that breaks a rule is the one reported */
        int bad = -1, first_foreign = -1;
        const char *why = NULL;
        for (int i = 0; i < PROP_NPARAMS && bad < 0; i++) {
            bool is_foreign;
            why = prop_verdict(prop_rules[i], args[i], x, y, &is_foreign);
            if (why) bad = i;
            else if (is_foreign && first_foreign < 0) first_foreign = i;
        }
        if (bad < 0 && first_foreign >= 0) bad = first_foreign, why = "is not memory from blk_malloc";
        if (bad >= 0) {
            cr_assert_eq(s, BLK_ERROR_BAD_ARGUMENT, "trial %d: argument %d should fail (%s): %s", trial, bad, why, err);
            snprintf(prefix, sizeof prefix, "kernel 'k', argument %d ('%s'): ", bad, prop_names[bad]);
            cr_assert(strncmp(err, prefix, strlen(prefix)) == 0 && strstr(err, why), "trial %d: expected %s%s..., got %s",
                      trial, prefix, why, err);
            outcomes[bad == first_foreign && !strcmp(why, "is not memory from blk_malloc") ? 2 : 1]++;
            continue;
        }
        cr_assert_eq(s, BLK_SUCCESS, "trial %d: %s", trial, err);
        outcomes[0]++;
        /* it ran with the values given: x[i] for i < n, nothing else */
        cr_assert_eq(blk_memcpy_to_host(ctx, after, x, sizeof after), BLK_SUCCESS);
        int xoff = (int)((args[0].value.ptr - x) / 4), yoff = (int)((args[1].value.ptr - y) / 2);
        int64_t n = args[2].value.i;
        float h = (float)(_Float16)args[6].value.f;
        for (int e = 0; e < PROP_ELEMS; e++) {
            int i = e - xoff;
            float want = before[e];
            if (i >= 0 && i < 16 && i < n)
                want = (float)yh[yoff + i] * args[5].value.f + h + (float)(args[3].value.i & 7) +
                       (float)(args[4].value.i & 7) + (float)args[7].value.i;
            cr_assert(after[e] == want || (isnan(after[e]) && isnan(want)), "trial %d: x[%d] = %g, expected %g", trial,
                      e, after[e], want);
        }
    }
    /* every outcome was exercised, so the model was tested on each */
    cr_expect(outcomes[0] > 50 && outcomes[1] > 500 && outcomes[2] > 20, "launched %d, rejected %d, foreign %d",
              outcomes[0], outcomes[1], outcomes[2]);
    blk_free(ctx, x);
    blk_free(ctx, y);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

Test(runtime, an_out_of_bounds_access_on_the_cpu_device_is_a_kernel_fault) {
    blk_context *ctx;
    blk_module *m;
    blk_kernel *k = kernel_k("kernel k(x: *f32, n: i32) {\n    store(x + arange(0, 64), 1.0, arange(0, 64) < n);\n}\n",
                             "k.blk", &ctx, &m);
    blk_ptr x;
    blk_malloc(ctx, 40 * sizeof(float), &x);
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_i32(64)};
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 2, NULL), BLK_ERROR_KERNEL_FAULT);
    cr_expect_str_eq(blk_last_error(), "kernel 'k', k.blk:2: program (0, 0, 0): out-of-bounds store: block element "
                                       "[40] accesses x[40], past the end of x (40 elements of f32)\n"
                                       "    store(x + arange(0, 64), 1.0, arange(0, 64) < n);");
    args[1] = blk_arg_i32(40); /* the cpu device stays usable */
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 2, NULL), BLK_SUCCESS, "%s", blk_last_error());
    blk_free(ctx, x);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

Test(runtime, a_cuda_context_without_a_driver_or_device_fails_cleanly) {
    blk_context *ctx = (blk_context *)0x1;
    blk_status s = blk_context_create_cuda(0, &ctx);
    if (s == BLK_SUCCESS) {
        /* a machine with a GPU: then a device that does not exist must fail */
        blk_context_destroy(ctx);
        cr_expect_eq(blk_context_create_cuda(999, &ctx), BLK_ERROR_NO_DEVICE);
        cr_expect_null(ctx);
        return;
    }
    cr_expect(s == BLK_ERROR_NO_DRIVER || s == BLK_ERROR_NO_DEVICE, "%s", blk_status_string(s));
    cr_expect_null(ctx);
    cr_expect(strstr(blk_last_error(), s == BLK_ERROR_NO_DRIVER ? "no CUDA driver" : "no CUDA device"), "%s",
              blk_last_error());
    /* and the cpu device still works */
    cr_expect_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_context_destroy(ctx);
}

Test(runtime, every_status_has_a_string) {
    for (int s = BLK_SUCCESS; s <= BLK_ERROR_CONTEXT_LOST; s++) {
        const char *text = blk_status_string((blk_status)s);
        cr_expect(strncmp(text, "BLK_", 4) == 0, "%d: %s", s, text);
    }
    cr_expect_eq(blk_context_create_cpu(NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_context_device(NULL), "");
}

/* Several threads compiling modules and generating PTX at once, sharing one
 * context: compilation is thread-safe. */
#include <pthread.h>

typedef struct {
    blk_context *ctx;
    int id;
    int ok;
} Worker;

static void *compile_worker(void *arg) {
    Worker *w = arg;
    char block[32];
    snprintf(block, sizeof block, "BLOCK=%d", 64 << (w->id % 4));
    const char *defs[] = {block};
    blk_compile_options opt = {.defines = defs, .num_defines = 1};
    w->ok = 1;
    for (int rep = 0; rep < 3 && w->ok; rep++) {
        blk_module *m;
        blk_kernel *k;
        const char *ptx;
        w->ok = blk_module_create(w->ctx, add_src, strlen(add_src), &opt, &m) == BLK_SUCCESS &&
                blk_module_get_kernel(m, "add", &k) == BLK_SUCCESS && blk_kernel_ptx(k, &ptx) == BLK_SUCCESS &&
                strstr(ptx, ".entry add(") != NULL;
        blk_module_destroy(m);
    }
    return NULL;
}

Test(runtime, compilation_is_thread_safe, .timeout = 120) {
    blk_context *ctx;
    blk_context_create_cpu(&ctx);
    enum { THREADS = 6 };
    pthread_t t[THREADS];
    Worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (Worker){ctx, i, 0};
        cr_assert_eq(pthread_create(&t[i], NULL, compile_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        cr_expect(w[i].ok, "worker %d", i);
    }
    blk_context_destroy(ctx);
}

/* The cpu device runs at most 2^24 programs a launch (BLK_CPU_MAX_PROGRAMS
 * sets another limit): a larger grid is BLK_ERROR_BAD_GRID naming the kernel,
 * before any program runs, in every dimension and at the limit's edge. */
Test(runtime, cpu_device_bounds_the_programs_of_a_launch) {
    blk_context *ctx;
    blk_module *m;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_kernel *k = compile_k(ctx, "kernel k(n: i32) {}\n", "empty.blk", &m);
    blk_arg a[] = {blk_arg_i32(1)};
    unsetenv("BLK_CPU_MAX_PROGRAMS");
    const unsigned over[][3] = {{(1u << 24) + 1, 1, 1}, {1, (1u << 24) + 1, 1}, {1, 1, (1u << 24) + 1},
                                {1u << 12, 1u << 12, 2}, {1u << 16, 1u << 16, 1u << 16}, {1u << 31, 1, 1}};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(blk_launch(k, over[i][0], over[i][1], over[i][2], a, 1, NULL), BLK_ERROR_BAD_GRID, "grid %d", i);
        char want[200];
        snprintf(want, sizeof want,
                 "kernel 'k': the grid (%u, %u, %u) has more programs than the cpu device runs in one launch "
                 "(16777216; BLK_CPU_MAX_PROGRAMS sets another limit)", over[i][0], over[i][1], over[i][2]);
        cr_expect_str_eq(blk_last_error(), want);
    }
    setenv("BLK_CPU_MAX_PROGRAMS", "100", 1);
    cr_expect_eq(blk_launch(k, 100, 1, 1, a, 1, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect_eq(blk_launch(k, 4, 5, 5, a, 1, NULL), BLK_SUCCESS, "%s", blk_last_error());
    cr_expect_eq(blk_launch(k, 101, 1, 1, a, 1, NULL), BLK_ERROR_BAD_GRID);
    cr_expect_eq(blk_launch(k, 10, 10, 2, a, 1, NULL), BLK_ERROR_BAD_GRID);
    cr_expect_eq(blk_launch(k, 3, 34, 1, a, 1, NULL), BLK_ERROR_BAD_GRID);
    setenv("BLK_CPU_MAX_PROGRAMS", "-5", 1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, a, 1, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_last_error(), "kernel 'k': BLK_CPU_MAX_PROGRAMS='-5' is not a positive integer");
    unsetenv("BLK_CPU_MAX_PROGRAMS");
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}

/* Handles used after they were destroyed, or destroyed twice, are errors
 * or no-ops, never reads of freed memory (ASan runs this suite in CI). */
Test(runtime, destroyed_handles_are_errors_not_crashes) {
    blk_context *ctx, *other;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    cr_assert_eq(blk_context_create_cpu(&other), BLK_SUCCESS); /* keeps ctx's address from being reused at once */
    blk_module *m;
    cr_assert_eq(blk_module_create(ctx, add_src, strlen(add_src), NULL, &m), BLK_SUCCESS, "%s", blk_last_error());
    blk_kernel *k;
    cr_assert_eq(blk_module_get_kernel(m, "add", &k), BLK_SUCCESS);
    blk_module_destroy(m);
    blk_module_destroy(m); /* twice: nothing */
    cr_expect_eq(blk_module_get_kernel(m, "add", &k), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "the module was destroyed"), "%s", blk_last_error());
    blk_arg args[4] = {blk_arg_ptr(16), blk_arg_ptr(16), blk_arg_ptr(16), blk_arg_i32(1)};
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 4, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "the kernel was destroyed with its module"), "%s", blk_last_error());
    const char *ptx;
    cr_expect_eq(blk_kernel_ptx(k, &ptx), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_kernel_name(k), "");
    cr_expect_str_eq(blk_kernel_consts(k), "");
    cr_expect_eq(blk_kernel_num_args(k), 0);
    cr_expect_null(blk_kernel_arg_type(k, 0));
    cr_expect_eq(blk_kernel_arg_kind(k, 0), -1);

    /* a module that outlives its context: destroying it still works, launching it is an error */
    cr_assert_eq(blk_module_create(ctx, add_src, strlen(add_src), NULL, &m), BLK_SUCCESS);
    cr_assert_eq(blk_module_get_kernel(m, "add", &k), BLK_SUCCESS);
    blk_context_destroy(ctx);
    blk_context_destroy(ctx); /* twice: nothing */
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 4, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "the context was destroyed"), "%s", blk_last_error());
    blk_ptr p;
    cr_expect_eq(blk_malloc(ctx, 64, &p), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_free(ctx, 16), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_synchronize(ctx), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_context_device(ctx), "");
    cr_expect_eq(blk_context_shuffle_programs(ctx, 1), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_module_create(ctx, add_src, strlen(add_src), NULL, &m), BLK_ERROR_INVALID_VALUE);
    blk_module_destroy(m);
    /* something that never was a handle */
    int junk = 0;
    cr_expect_eq(blk_malloc((blk_context *)&junk, 64, &p), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_kernel_name((blk_kernel *)&junk), "");
    blk_module_destroy((blk_module *)&junk);
    blk_context_destroy(other);
}

/* The cpu device bounds the bytes of the interpreter's live values
 * (BLK_CPU_MAX_BYTES, docs/interpreter.md): a launch past the limit is
 * BLK_ERROR_OUT_OF_MEMORY naming the kernel, the limit and the variable,
 * never a fault, and the context runs the next launch; a bad value of the
 * variable is BLK_ERROR_INVALID_VALUE. */
Test(runtime, cpu_device_bounds_the_interpreters_memory) {
    enum { N = 65536 }; /* 512 KiB a value in the interpreter */
    blk_context *ctx;
    blk_module *m;
    cr_assert_eq(blk_context_create_cpu(&ctx), BLK_SUCCESS);
    blk_kernel *k = compile_k(ctx,
                              "kernel k(x: *f32, out: *f32) {\n"
                              "  let offs = arange(0, 65536);\n"
                              "  let v = load(x + offs);\n"
                              "  store(out + offs, (v * v + v) * 2.0 - v);\n"
                              "}\n", "mem.blk", &m);
    static float x[N], out[N];
    for (int i = 0; i < N; i++) x[i] = (float)i / 64.0f;
    blk_ptr dx, dout;
    cr_assert_eq(blk_malloc(ctx, sizeof x, &dx), BLK_SUCCESS);
    cr_assert_eq(blk_malloc(ctx, sizeof out, &dout), BLK_SUCCESS);
    cr_assert_eq(blk_memcpy_to_device(ctx, dx, x, sizeof x), BLK_SUCCESS);
    blk_arg a[] = {blk_arg_ptr(dx), blk_arg_ptr(dout)};
    setenv("BLK_CPU_MAX_BYTES", "1000000", 1); /* under two values */
    cr_expect_eq(blk_launch(k, 1, 1, 1, a, 2, NULL), BLK_ERROR_OUT_OF_MEMORY);
    const char *e = blk_last_error();
    cr_expect(strstr(e, "kernel 'k', mem.blk:") && strstr(e, "out of memory") &&
              strstr(e, "past the interpreter's limit of 1000000 bytes (a larger one: BLK_CPU_MAX_BYTES"), "%s", e);
    const char *bad[] = {"0", "-1", "12abc", "99999999999999999999999"};
    for (int i = 0; i < 4; i++) {
        setenv("BLK_CPU_MAX_BYTES", bad[i], 1);
        cr_expect_eq(blk_launch(k, 1, 1, 1, a, 2, NULL), BLK_ERROR_INVALID_VALUE, "%s", bad[i]);
        char want[200];
        snprintf(want, sizeof want, "kernel 'k': BLK_CPU_MAX_BYTES='%s' is not a positive integer", bad[i]);
        cr_expect_str_eq(blk_last_error(), want);
    }
    setenv("BLK_CPU_MAX_BYTES", "4000000", 1);
    for (int run = 0; run < 2; run++) { /* the context is usable: with the limit raised, then the default */
        memset(out, 0, sizeof out);
        cr_expect_eq(blk_launch(k, 1, 1, 1, a, 2, NULL), BLK_SUCCESS, "%s", blk_last_error());
        cr_assert_eq(blk_memcpy_to_host(ctx, out, dout, sizeof out), BLK_SUCCESS);
        for (int i = 0; i < N; i++) {
            float v = x[i], w = v * v;
            w = w + v, w = w * 2.0f, w = w - v;
            if (out[i] != w) {
                cr_expect_eq(out[i], w, "run %d, out[%d]", run, i);
                break;
            }
        }
        unsetenv("BLK_CPU_MAX_BYTES");
    }
    cr_expect_eq(blk_free(ctx, dx), BLK_SUCCESS);
    cr_expect_eq(blk_free(ctx, dout), BLK_SUCCESS);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
}
