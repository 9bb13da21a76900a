/* consumer.c: a program outside the blkc tree that uses the installed
 * runtime: compile a kernel from a string and run it on the cpu device. It
 * defines functions named like the compiler's internal ones, which must not
 * clash with them (libblk.a keeps only its blk_ symbols global). */
#include <blk.h>
#include <stdio.h>
#include <string.h>

/* the same names as functions inside blkc */
int parse_module(void) { return 0; }
int arena_alloc(void) { return 0; }
int type_str(void) { return 0; }

int main(void) {
    if (parse_module() + arena_alloc() + type_str()) return 1;
    const char *src = "kernel twice(x: *i32) { let o = arange(0, 32); store(x + o, o * 2); }\n";
    blk_context *ctx;
    blk_module *m;
    blk_kernel *k;
    blk_ptr x;
    int out[32];
    if (blk_context_create_cpu(&ctx) || blk_module_create(ctx, src, strlen(src), NULL, &m) ||
        blk_module_get_kernel(m, "twice", &k) || blk_malloc(ctx, sizeof out, &x)) {
        fprintf(stderr, "consumer: %s\n", blk_last_error());
        return 1;
    }
    blk_arg args[] = {blk_arg_ptr(x)};
    if (blk_launch(k, 1, 1, 1, args, 1, NULL) || blk_memcpy_to_host(ctx, out, x, sizeof out)) {
        fprintf(stderr, "consumer: %s\n", blk_last_error());
        return 1;
    }
    for (int i = 0; i < 32; i++)
        if (out[i] != 2 * i) return 1;
    printf("consumer: ok\n");
    blk_free(ctx, x);
    blk_module_destroy(m);
    blk_context_destroy(ctx);
    return 0;
}
