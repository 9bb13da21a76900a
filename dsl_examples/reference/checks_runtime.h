/* checks_runtime.h: the example checks through the runtime API (see checks_runtime.c). */
#ifndef BLK_CHECKS_RUNTIME_H
#define BLK_CHECKS_RUNTIME_H

#include "blk.h"
#include "checks.h"

typedef struct {
    const char *examples_dir;
    blk_context *ctx;
} RuntimeLaunchCtx;

char *example_launch_runtime(void *ctx, const ExampleKernel *k, const InterpArg *args, int nargs,
                             const uint32_t grid[3], const InterpBuffer *bufs, int nbufs);

#endif
