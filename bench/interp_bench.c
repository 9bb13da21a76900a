/* interp_bench.c: how long the reference interpreter takes for the examples
 * at the Triton tutorials' test shapes, on one core (it is single-threaded).
 * Each row times only the launches (compiling the .blk takes milliseconds),
 * best of three, and says whether the result matched its C reference.
 * Run: ./build/bench/interp_bench [examples-dir] */
#include <stdio.h>

#include "checks.h"

typedef CheckResult (*Bench)(const ExampleRunner *r);

static CheckResult ln_fwd(const ExampleRunner *r) { return check_layer_norm_fwd(r, LN_AFFINE, 1151, 8192, 8192, DT_F16, 1024); }
static CheckResult ln_bwd(const ExampleRunner *r) { return check_layer_norm_bwd(r, 1151, 8192, 8192, DT_F16, 8192, 96, false); }
static CheckResult softmax(const ExampleRunner *r) { return check_softmax(r, 1823, 781, 781, DT_F32, 1024, false); }
static CheckResult dropout(const ExampleRunner *r) { return check_dropout(r, 1 << 20, 0.5f, 123, DT_F32, 1024); }
static CheckResult add(const ExampleRunner *r) { return check_add(r, 1 << 20, DT_F32, 1024); }

int main(int argc, char **argv) {
    InterpLaunchCtx ctx = {argc > 1 ? argv[1] : BLK_EXAMPLES_DIR, {0}};
    ExampleRunner runner = {example_launch_interp, &ctx, NULL};
    Bench benches[] = {ln_fwd, ln_bwd, softmax, dropout, add};
    printf("reference interpreter, one core; launch time, best of 3\n\n");
    printf("| %-68s | %9s | %-6s |\n", "example and shape", "seconds", "result");
    printf("|%.70s|%.11s|%.8s|\n", "------------------------------------------------------------------------",
           "-----------", "--------");
    int status = 0;
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++) {
        double best = 1e30;
        CheckResult r = {0};
        for (int rep = 0; rep < 3; rep++) {
            r = benches[i](&runner);
            if (r.seconds < best) best = r.seconds;
        }
        printf("| %-68s | %9.3f | %-6s |\n", r.name, best, r.ok ? "ok" : "WRONG");
        if (!r.ok) {
            fprintf(stderr, "%s: %s\n", r.name, r.detail);
            status = 1;
        }
    }
    return status;
}
