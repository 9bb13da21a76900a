/* softmax.c: JIT dsl_examples/softmax.blk through the runtime API, run it on
 * an M x N matrix, compare with the C reference (relative 1e-5), print the
 * maximum error and the time.   softmax [--device auto|cuda|cpu] [M N] */
#include <stdio.h>

#include "checks_runtime.h"

int main(int argc, char **argv) {
    int64_t a[2] = {1823, 781}; /* the Triton tutorial's test shape */
    RuntimeLaunchCtx rt = {BLK_EXAMPLES_DIR, NULL};
    if (!example_open_device(example_parse_args(argc, argv, a, 2), &rt)) return 1;
    int block = 1;
    while (block < a[1]) block *= 2;
    ExampleRunner run = {example_launch_runtime, &rt};
    CheckResult r = check_softmax(&run, (int)a[0], (int)a[1], (int)a[1], DT_F32, block);
    printf("%s on %s: max error %.3g (%s), %.3f s with copies and JIT; %s\n", r.name, blk_context_device(rt.ctx),
           r.max_err, r.tolerance, r.seconds, r.ok ? "ok" : r.detail);
    blk_context_destroy(rt.ctx);
    return r.ok ? 0 : 1;
}
