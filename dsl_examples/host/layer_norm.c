/* layer_norm.c: JIT dsl_examples/layernorm.blk through the runtime API and run
 * the forward kernel, then the two-stage backward (dX with its lock, then
 * dW/dB), on M x N f16 rows; compare with the C reference (absolute 1e-2,
 * as the Triton tutorial), print the maximum error and the time.
 *   layer_norm [--device auto|cuda|cpu] [M N]   (N <= 16384) */
#include <stdio.h>

#include "checks_runtime.h"

int main(int argc, char **argv) {
    int64_t a[2] = {1151, 8192}; /* the Triton tutorial's test shape */
    RuntimeLaunchCtx rt = {BLK_EXAMPLES_DIR, NULL};
    if (!example_open_device(example_parse_args(argc, argv, a, 2), &rt)) return 1;
    int N = (int)a[1], block = 1;
    while (block < N) block *= 2;
    int group = N <= 1024 ? 256 : N <= 4096 ? 128 : N <= 8192 ? 96 : 64; /* the tutorial's choice */
    ExampleRunner run = {example_launch_runtime, &rt};
    CheckResult r[2] = {check_layer_norm_fwd(&run, (int)a[0], N, N, DT_F16, block < 1024 ? block : 1024),
                        check_layer_norm_bwd(&run, (int)a[0], N, N, DT_F16, block, group)};
    int bad = 0;
    for (int i = 0; i < 2; i++) {
        printf("%s on %s: max error %.3g (%s), %.3f s with copies and JIT; %s\n", r[i].name,
               blk_context_device(rt.ctx), r[i].max_err, r[i].tolerance, r[i].seconds, r[i].ok ? "ok" : r[i].detail);
        bad += !r[i].ok;
    }
    blk_context_destroy(rt.ctx);
    return bad ? 1 : 0;
}
