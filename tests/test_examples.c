/* test_examples.c: every example on the interpreter at the shapes the
 * issue tracker and the Triton tutorials use (run_example_suite), compared
 * with the C references. The checks and their tolerances (with the reasons)
 * live in tests/harness/checks.c, shared with the main job's runner
 * and the GPU runs. */
#include <criterion/criterion.h>

#include "checks.h"

static InterpLaunchCtx sequential = {BLK_EXAMPLES_DIR, {0}};
static InterpLaunchCtx shuffled = {BLK_EXAMPLES_DIR, {.shuffle = true, .shuffle_seed = 7}};
static const ExampleRunner on_interp = {example_launch_interp, &sequential, NULL};
static const ExampleRunner on_interp_shuffled = {example_launch_interp, &shuffled, NULL};

static void expect_ok(CheckResult r) {
    cr_expect(r.ok, "%s: %s", r.name, r.detail);
    cr_log_info("%s: max error %.3g (%s), %.2f s", r.name, r.max_err, r.tolerance, r.seconds);
}

Test(examples, every_example_at_every_shape, .timeout = 600) {
    CheckResult results[EXAMPLE_SUITE_MAX];
    int n = run_example_suite(&on_interp, 1, results, EXAMPLE_SUITE_MAX);
    cr_expect_geq(n, 20);
    for (int i = 0; i < n; i++) expect_ok(results[i]);
}

Test(examples, layer_norm_backward_shuffled_through_the_lock) {
    expect_ok(check_layer_norm_bwd(&on_interp_shuffled, 1151, 8192, 8192, DT_F16, 8192, 96, false));
    expect_ok(check_layer_norm_bwd(&on_interp_shuffled, 200, 781, 800, DT_F32, 1024, 16, false));
    expect_ok(check_layer_norm_bwd(&on_interp_shuffled, 200, 781, 800, DT_F32, 1024, 16, true));
}
