/* checks_runtime.h: the example checks through the runtime API (see checks_runtime.c). */
#ifndef BLK_CHECKS_RUNTIME_H
#define BLK_CHECKS_RUNTIME_H

#include "blk.h"
#include "checks.h"

typedef struct {
    const char *examples_dir;
    blk_context *ctx;
    const char *arch; /* NULL: the device's own */
    bool persistent;  /* build the kernels persistent (blk_compile_options.persistent) */
} RuntimeLaunchCtx;

/* Opens "cuda", "cpu" or "auto" (the GPU if there is one, saying so when
 * there is none) into rt->ctx; false with the reason on stderr. */
bool example_open_device(const char *device, RuntimeLaunchCtx *rt);
/* `--device D` and positional integers from argv, for the host programs. */
const char *example_parse_args(int argc, char **argv, int64_t *nums, int max_nums);

char *example_launch_runtime(void *ctx, const ExampleKernel *k, const ExampleArg *args, int nargs,
                             const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs);

#endif
