/* checks_runtime.c: the example checks through the public runtime API
 * (include/blk.h), on whichever device the context has: the buffers are
 * blk_malloc'ed and copied, the kernel JIT-compiled with its defines and
 * launched with typed arguments, the buffers copied back. */
#define _POSIX_C_SOURCE 200809L
#include "checks_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *message(const char *what) {
    const char *detail = blk_last_error();
    size_t n = strlen(what) + strlen(detail) + 4;
    char *m = malloc(n);
    if (m) snprintf(m, n, "%s%s%s", what, *detail ? ": " : "", detail);
    return m;
}

char *example_launch_runtime(void *ctx_, const ExampleKernel *k, const ExampleArg *args, int nargs,
                             const uint32_t grid[3], const ExampleBuffer *bufs, int nbufs) {
    RuntimeLaunchCtx *c = ctx_;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", c->examples_dir, k->file);
    int ndefs = 0;
    while (ndefs < EXAMPLE_MAX_DEFS && k->defs[ndefs]) ndefs++;
    blk_compile_options opt = {.defines = k->defs, .num_defines = ndefs, .arch = c->arch, .persistent = c->persistent};
    blk_module *mod = NULL;
    blk_kernel *kern = NULL;
    blk_ptr dev[32] = {0};
    char *err = NULL;
    if (blk_module_create_from_file(c->ctx, path, &opt, &mod) || blk_module_get_kernel(mod, k->kernel, &kern)) {
        err = message(k->kernel);
        goto done;
    }
    for (int b = 0; b < nbufs && b < 32; b++) {
        if (blk_malloc(c->ctx, bufs[b].bytes ? bufs[b].bytes : 1, &dev[b]) ||
            blk_memcpy_to_device(c->ctx, dev[b], bufs[b].base, bufs[b].bytes)) {
            err = message("copying the inputs");
            goto done;
        }
    }
    /* host pointers into a buffer become device pointers at the same offset;
     * the kinds follow the kernel's parameter types, as a caller would write them */
    blk_arg a[64];
    for (int i = 0; i < nargs && i < 64; i++) {
        const char *hp = args[i].p;
        int b = -1;
        for (int j = 0; j < nbufs && b < 0; j++)
            if (hp >= (const char *)bufs[j].base && hp <= (const char *)bufs[j].base + bufs[j].bytes) b = j;
        int kind = blk_kernel_arg_kind(kern, i);
        if (kind == BLK_ARG_PTR) a[i] = b >= 0 ? blk_arg_ptr(dev[b] + (blk_ptr)(hp - (const char *)bufs[b].base)) : blk_arg_ptr(0);
        else if (kind == BLK_ARG_F32) a[i] = blk_arg_f32((float)args[i].f);
        else a[i] = blk_arg_i64(args[i].i);
    }
    if (blk_launch(kern, grid[0], grid[1], grid[2], a, nargs, NULL) || blk_synchronize(c->ctx)) {
        err = message("launch");
        goto done;
    }
    for (int b = 0; b < nbufs && b < 32; b++) {
        if (blk_memcpy_to_host(c->ctx, bufs[b].base, dev[b], bufs[b].bytes)) {
            err = message("copying the results back");
            goto done;
        }
    }
done:
    for (int b = 0; b < nbufs && b < 32; b++)
        if (dev[b]) blk_free(c->ctx, dev[b]);
    blk_module_destroy(mod);
    return err;
}

bool example_open_device(const char *device, RuntimeLaunchCtx *rt) {
    rt->ctx = NULL;
    if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto")) {
        fprintf(stderr, "error: unknown device '%s' (expected auto, cuda or cpu)\n", device);
        return false;
    }
    if (strcmp(device, "cpu") != 0 && blk_context_create_cuda(0, &rt->ctx) != BLK_SUCCESS) {
        rt->ctx = NULL;
        if (strcmp(device, "cuda") == 0) {
            fprintf(stderr, "error: %s\n", blk_last_error());
            return false;
        }
        printf("no GPU here (%s): running on the interpreter\n", blk_last_error());
    }
    if (!rt->ctx && blk_context_create_cpu(&rt->ctx) != BLK_SUCCESS) {
        fprintf(stderr, "error: %s\n", blk_last_error());
        return false;
    }
    return true;
}

const char *example_parse_args(int argc, char **argv, int64_t *nums, int max_nums) {
    const char *device = "auto";
    for (int i = 1, k = 0; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
        else if (k < max_nums) nums[k++] = strtoll(argv[i], NULL, 0);
    }
    return device;
}
