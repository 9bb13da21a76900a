/* compile_bench.c: how long blkc takes from .blk source to PTX, per example
 * kernel and arch, in process (as the runtime JIT does; LLVM already
 * initialized by a first compile), best of 5: the front end, the backend's
 * schedule and LLVM IR, and the whole (LLVM's O3 and code generation the
 * rest); and how large the PTX is. Triton 3.6 takes 0.4-1.7 s cold for
 * these (design-notes §1).
 * Usage: compile_bench [examples-dir] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Source to PTX for one kernel; returns the PTX size, or 0 on failure.
 * front: lexing to block IR; plan: that and the backend's decisions and
 * LLVM IR (NvptxOptions.decisions_only); total: to PTX. */
static size_t compile_once(const char *path, const char *text, size_t len, const char *kernel, const char *arch,
                           double *front_ms, double *plan_ms, double *total_ms) {
    size_t n = 0;
    for (int decisions_only = 1; decisions_only >= 0; decisions_only--) {
        double t0 = now_ms();
        CompileRequest req = {path, text, len, NULL, 0, diag_print_to_file, stderr};
        Compilation *c = compile_front(&req);
        bool ok = c && compile_lower(c);
        double t1 = now_ms();
        NvptxOptions opt = {.arch = arch, .only_kernel = kernel, .decisions_only = decisions_only};
        NvptxOutput out = {0};
        ok = ok && compile_ptx(c, &opt, &out);
        double t2 = now_ms();
        n = ok ? strlen(out.text) : 0;
        if (!ok) fprintf(stderr, "compile_bench: %s: the compile failed\n", kernel);
        nvptx_output_free(&out);
        compilation_free(c);
        *front_ms = t1 - t0;
        *(decisions_only ? plan_ms : total_ms) = t2 - t0;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : BLK_EXAMPLES_DIR;
    struct { const char *file, *kernel; } ks[] = {
        {"add.blk", "add"}, {"softmax.blk", "softmax"}, {"dropout.blk", "dropout"},
        {"layernorm.blk", "layer_norm_fwd"}, {"layernorm.blk", "layer_norm_bwd_dx"},
        {"layernorm.blk", "layer_norm_bwd_dwdb"}, {"matmul.blk", "matmul"}, {"attention.blk", "attn_fwd"},
        {"attention_bwd.blk", "attn_bwd_dkdv"}, {"attention_bwd.blk", "attn_bwd_dq"},
    };
    static const char *const archs[] = {"sm_90", "sm_90a"};
    printf("source -> PTX in process, default -D values; best of 5 (ms)\n\n");
    printf("| %-18s | %-20s | %-6s | %9s | %9s | %9s | %9s |\n", "file", "kernel", "arch", "front+BIR", "+schedule",
           "total", "PTX bytes");
    printf("|--------------------|----------------------|--------|-----------|-----------|-----------|-----------|\n");
    int status = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, ks[i].file);
        size_t len;
        char *text = slurp(path, &len);
        if (!text) {
            fprintf(stderr, "compile_bench: cannot read %s\n", path);
            return 1;
        }
        for (int a = 0; a < 2; a++) {
            double best_front = 1e9, best_plan = 1e9, best_total = 1e9, f, p, t;
            size_t bytes = compile_once(path, text, len, ks[i].kernel, archs[a], &f, &p, &t); /* warm: LLVM's setup */
            for (int rep = 0; rep < 5; rep++) {
                bytes = compile_once(path, text, len, ks[i].kernel, archs[a], &f, &p, &t);
                if (f < best_front) best_front = f;
                if (p < best_plan) best_plan = p;
                if (t < best_total) best_total = t;
            }
            if (!bytes) status = 1;
            printf("| %-18s | %-20s | %-6s | %9.2f | %9.1f | %9.1f | %9zu |\n", ks[i].file, ks[i].kernel, archs[a],
                   best_front, best_plan, best_total, bytes);
        }
        free(text);
    }
    return status;
}
