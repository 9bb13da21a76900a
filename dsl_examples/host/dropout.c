/* dropout.c: JIT dsl_examples/dropout.blk through the runtime API, drop out n
 * elements with probability p and a seed, compare with the C reference
 * (keep mask rand > p bit for bit; values within 2 ulp), print the maximum
 * error and the time.   dropout [--device auto|cuda|cpu] [n seed] */
#include <stdio.h>

#include "checks_runtime.h"

int main(int argc, char **argv) {
    int64_t a[2] = {1 << 20, 123};
    RuntimeLaunchCtx rt = {BLK_EXAMPLES_DIR, NULL};
    if (!example_open_device(example_parse_args(argc, argv, a, 2), &rt)) return 1;
    ExampleRunner run = {example_launch_runtime, &rt};
    CheckResult r = check_dropout(&run, (int)a[0], 0.5f, (int32_t)a[1], DT_F32, 1024);
    printf("%s on %s: max error %.3g (%s), %.3f s with copies and JIT; %s\n", r.name, blk_context_device(rt.ctx),
           r.max_err, r.tolerance, r.seconds, r.ok ? "ok" : r.detail);
    blk_context_destroy(rt.ctx);
    return r.ok ? 0 : 1;
}
