/* test_gpu.c: every example on a CUDA GPU through the runtime API, at every
 * shape of the interpreter suite, against the C references (the same checks
 * and tolerances as test_examples.c; dropout's keep mask compared bit for
 * bit with rand > p, as the interpreter computes it). Skips, saying why,
 * where there is no driver or device — as in CI. The GPU machine runs the
 * same checks from the static build (run_examples --device cuda
 * --all-shapes), since it has no test framework installed. */
#include <criterion/criterion.h>

#include "checks_runtime.h"

static RuntimeLaunchCtx gpu = {.examples_dir = BLK_EXAMPLES_DIR};

static void open_gpu(void) {
    if (blk_context_create_cuda(0, &gpu.ctx) != BLK_SUCCESS) gpu.ctx = NULL;
}

static void close_gpu(void) { blk_context_destroy(gpu.ctx); }

TestSuite(gpu, .init = open_gpu, .fini = close_gpu);

Test(gpu, every_example_at_every_shape, .timeout = 600) {
    if (!gpu.ctx) {
        char reason[600];
        blk_context *probe;
        blk_context_create_cuda(0, &probe);
        snprintf(reason, sizeof reason, "skipped: %s", blk_last_error());
        cr_skip_test("%s", reason);
    }
    ExampleRunner run = {example_launch_runtime, &gpu, NULL};
    CheckResult results[EXAMPLE_SUITE_MAX];
    int n = run_example_suite(&run, 2, results, EXAMPLE_SUITE_MAX);
    cr_expect_geq(n, 20);
    for (int i = 0; i < n; i++) cr_expect(results[i].ok, "%s: %s", results[i].name, results[i].detail);
}
