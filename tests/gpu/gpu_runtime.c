/* gpu_runtime.c: the runtime API's CUDA paths, which need a GPU: a launch
 * through the API, a kernel that faults (its context then reports itself
 * unusable instead of carrying on), and a device that does not exist.
 * Standalone, for the static build on the GPU machine; exit 0 when all hold. */
#include <stdio.h>
#include <string.h>

#include "blk.h"

static int failures;

static void expect(int cond, const char *what) {
    printf("%-4s %s\n", cond ? "ok" : "FAIL", what);
    if (!cond) {
        printf("     last error: %s\n", blk_last_error());
        failures++;
    }
}

int main(void) {
    blk_context *ctx;
    if (blk_context_create_cuda(0, &ctx)) {
        printf("no GPU: %s\n", blk_last_error());
        return 1;
    }
    printf("device: %s\n\n", blk_context_device(ctx));
    const char *src = "kernel k(x: *i32, n: i32, far: i64) {\n"
                      "    let o = program_id(0) * 128 + arange(0, 128);\n"
                      "    store(x + far + o, o * 2, o < n);\n"
                      "}\n";
    blk_compile_options opt = {.name = "k.blk"};
    blk_module *m;
    blk_kernel *k;
    expect(blk_module_create(ctx, src, strlen(src), &opt, &m) == BLK_SUCCESS, "compile through the API");
    expect(blk_module_get_kernel(m, "k", &k) == BLK_SUCCESS, "get the kernel");
    blk_ptr x;
    int host[300];
    expect(blk_malloc(ctx, sizeof host, &x) == BLK_SUCCESS, "blk_malloc");
    expect(blk_memset(ctx, x, 0, sizeof host) == BLK_SUCCESS, "blk_memset");
    blk_arg args[] = {blk_arg_ptr(x), blk_arg_i32(300), blk_arg_i64(0)};
    expect(blk_launch(k, 3, 1, 1, args, 3, NULL) == BLK_SUCCESS, "launch");
    expect(blk_synchronize(ctx) == BLK_SUCCESS, "synchronize");
    expect(blk_memcpy_to_host(ctx, host, x, sizeof host) == BLK_SUCCESS, "copy back");
    int right = 1;
    for (int i = 0; i < 300; i++) right &= host[i] == 2 * i;
    expect(right, "results equal 2 * index");
    blk_arg odd[] = {blk_arg_ptr(x + 4), blk_arg_i32(17), blk_arg_i64(0)};
    expect(blk_launch(k, 1, 1, 1, odd, 3, NULL) == BLK_SUCCESS && blk_synchronize(ctx) == BLK_SUCCESS,
           "a second specialization (unaligned pointer, odd n)");
    expect(blk_launch(k, 1, 1, 1, args, 2, NULL) == BLK_ERROR_BAD_ARGUMENT, "wrong argument count");
    /* a store 2^40 elements away: an illegal address */
    blk_arg wild[] = {blk_arg_ptr(x), blk_arg_i32(128), blk_arg_i64(1LL << 40)};
    blk_status s = blk_launch(k, 1, 1, 1, wild, 3, NULL);
    if (s == BLK_SUCCESS) s = blk_synchronize(ctx);
    expect(s == BLK_ERROR_KERNEL_FAULT, "a wild store is a kernel fault");
    printf("     (%s)\n", blk_last_error());
    expect(blk_launch(k, 3, 1, 1, args, 3, NULL) == BLK_ERROR_CONTEXT_LOST, "then the context reports itself lost");
    blk_module_destroy(m);
    blk_context_destroy(ctx);
    blk_context *none;
    expect(blk_context_create_cuda(99, &none) == BLK_ERROR_NO_DEVICE, "device 99 does not exist");
    /* CUDA keeps an illegal address sticky for the whole process: a new
     * context on the device must fail cleanly, naming the error, or work */
    s = blk_context_create_cuda(0, &ctx);
    expect(s == BLK_SUCCESS || strstr(blk_last_error(), "illegal memory access"),
           "a new context after a fault works, or reports the process-wide CUDA error");
    printf("     (%s)\n", s == BLK_SUCCESS ? "it works" : blk_last_error());
    if (s == BLK_SUCCESS) blk_context_destroy(ctx);
    printf("\n%d failure%s\n", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
