/* test_runtime.c: the runtime API (include/blk.h) on the cpu device, and
 * every error it reports without a GPU. The CUDA paths are exercised on the
 * GPU machine (docs/performance.md); here a CUDA context must fail cleanly. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
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
    teardown(&fx);
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
    cr_expect_eq(blk_module_create_from_file(ctx, "/nonexistent.blk", NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_eq(blk_module_create_from_file(ctx, "/tmp", NULL, &m), BLK_ERROR_INVALID_VALUE);
    cr_expect_str_eq(blk_last_error(), "cannot read '/tmp': Is a directory");
    opt = (blk_compile_options){.name = "empty.blk"};
    cr_expect_eq(blk_module_create(ctx, "// nothing\n", 11, &opt, &m), BLK_ERROR_COMPILE);
    cr_expect_str_eq(blk_last_error(), "empty.blk: error: no kernel in this module\n"); /* as blkc prints it */
    cr_expect_null(m);
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
static blk_kernel *kernel_k(const char *src, const char *name, blk_context **ctx, blk_module **m) {
    cr_assert_eq(blk_context_create_cpu(ctx), BLK_SUCCESS, "%s", blk_last_error());
    blk_compile_options opt = {.name = name};
    cr_assert_eq(blk_module_create(*ctx, src, strlen(src), &opt, m), BLK_SUCCESS, "%s", blk_last_error());
    blk_kernel *k;
    cr_assert_eq(blk_module_get_kernel(*m, "k", &k), BLK_SUCCESS);
    return k;
}

Test(runtime, a_spin_on_the_cpu_device_ends_at_the_loop_budget) {
    blk_context *ctx;
    blk_module *m;
    /* the exchange writes memory every time: only the budget stops program 1 */
    blk_kernel *k = kernel_k("kernel k(lock: *i32) {\n    while atomic_xchg(lock, 1) == 1 {}\n}\n", "spin.blk", &ctx, &m);
    blk_ptr lock;
    blk_malloc(ctx, sizeof(int32_t), &lock);
    blk_arg args[] = {blk_arg_ptr(lock)};
    setenv("BLK_CPU_MAX_LOOP_ITERATIONS", "5000", 1);
    cr_expect_eq(blk_launch(k, 2, 1, 1, args, 1, NULL), BLK_ERROR_KERNEL_FAULT);
    cr_expect(strstr(blk_last_error(), "kernel 'k', spin.blk:2: program (1, 0, 0): this while loop ran 5000 iterations"),
              "%s", blk_last_error());
    setenv("BLK_CPU_MAX_LOOP_ITERATIONS", "lots", 1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 1, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "BLK_CPU_MAX_LOOP_ITERATIONS='lots'"), "%s", blk_last_error());
    unsetenv("BLK_CPU_MAX_LOOP_ITERATIONS");
    /* the per-launch step budget (the lock is still held from the launches above) */
    setenv("BLK_CPU_MAX_STEPS", "2000", 1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 1, NULL), BLK_ERROR_KERNEL_FAULT);
    cr_expect(strstr(blk_last_error(), "spin.blk:2: program (0, 0, 0): the launch ran past its budget of 2000 element"),
              "%s", blk_last_error());
    setenv("BLK_CPU_MAX_STEPS", "-3", 1);
    cr_expect_eq(blk_launch(k, 1, 1, 1, args, 1, NULL), BLK_ERROR_INVALID_VALUE);
    cr_expect(strstr(blk_last_error(), "BLK_CPU_MAX_STEPS='-3' is not a positive integer"), "%s", blk_last_error());
    unsetenv("BLK_CPU_MAX_STEPS");
    blk_free(ctx, lock);
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
