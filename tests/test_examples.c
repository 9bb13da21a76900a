/* test_examples.c: every example on the interpreter at the shapes the
 * issue tracker and the Triton tutorials use, compared with the C
 * references. The checks and their tolerances (with the reasons) live in
 * dsl_examples/reference/checks.c, shared with the main job's runner. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "checks.h"

static InterpLaunchCtx sequential = {BLK_EXAMPLES_DIR, {0}};
static InterpLaunchCtx shuffled = {BLK_EXAMPLES_DIR, {.shuffle = true, .shuffle_seed = 7}};
static const ExampleRunner on_interp = {example_launch_interp, &sequential};
static const ExampleRunner on_interp_shuffled = {example_launch_interp, &shuffled};

static void expect_ok(CheckResult r) {
    cr_expect(r.ok, "%s: %s", r.name, r.detail);
    cr_log_info("%s: max error %.3g (%s), %.2f s", r.name, r.max_err, r.tolerance, r.seconds);
}

Test(examples, add) {
    expect_ok(check_add(&on_interp, 98432, DT_F32, 1024));   /* the tutorial's size */
    expect_ok(check_add(&on_interp, 1, DT_F32, 1024));
    expect_ok(check_add(&on_interp, 1000, DT_F32, 256));     /* n not a multiple of the block */
    expect_ok(check_add(&on_interp, 4097, DT_F16, 512));
}

Test(examples, softmax) {
    expect_ok(check_softmax(&on_interp, 1823, 781, 781, DT_F32, 1024)); /* the tutorial's test shape */
    expect_ok(check_softmax(&on_interp, 1, 1024, 1024, DT_F32, 1024));  /* M = 1, N = the block */
    expect_ok(check_softmax(&on_interp, 33, 1000, 1100, DT_F32, 1024)); /* stride > N */
    expect_ok(check_softmax(&on_interp, 7, 5, 5, DT_F32, 8));           /* tiny rows */
    expect_ok(check_softmax(&on_interp, 64, 300, 320, DT_F16, 512));
}

Test(examples, layer_norm_forward) {
    expect_ok(check_layer_norm_fwd(&on_interp, 1151, 8192, 8192, DT_F16, 1024)); /* tutorial; N > block */
    expect_ok(check_layer_norm_fwd(&on_interp, 37, 781, 781, DT_F16, 1024));     /* N < block, not 2^k */
    expect_ok(check_layer_norm_fwd(&on_interp, 50, 500, 640, DT_F16, 256));      /* stride > N */
    expect_ok(check_layer_norm_fwd(&on_interp, 1, 3000, 3000, DT_F32, 512));     /* M = 1, f32 */
    expect_ok(check_layer_norm_fwd(&on_interp, 20, 1000, 1024, DT_F32, 128));
}

Test(examples, layer_norm_backward_sequential) {
    expect_ok(check_layer_norm_bwd(&on_interp, 1151, 8192, 8192, DT_F16, 8192, 96)); /* tutorial */
    expect_ok(check_layer_norm_bwd(&on_interp, 37, 781, 800, DT_F32, 1024, 8));
    expect_ok(check_layer_norm_bwd(&on_interp, 1, 100, 100, DT_F16, 128, 4));
}

Test(examples, layer_norm_backward_shuffled_through_the_lock) {
    expect_ok(check_layer_norm_bwd(&on_interp_shuffled, 1151, 8192, 8192, DT_F16, 8192, 96));
    expect_ok(check_layer_norm_bwd(&on_interp_shuffled, 200, 781, 800, DT_F32, 1024, 16));
}

Test(examples, dropout) {
    expect_ok(check_dropout(&on_interp, 100003, 0.5f, 123, DT_F32, 1024));
    expect_ok(check_dropout(&on_interp, 5000, 0.2f, -7, DT_F32, 1024));   /* negative seed */
    expect_ok(check_dropout(&on_interp, 4099, 0.75f, 42, DT_F16, 512));
}
