/* run_examples.c: the main job's runner. Runs every example in dsl_examples/
 * at the Triton tutorials' shapes through the runtime API
 * (include/blk.h: JIT from C) and compares each with its C reference
 * (checks.c states the tolerances), printing a table. Devices:
 * "cuda", the GPU, or "cpu", the reference interpreter; by default the GPU
 * when there is one. Exit status 0 when every example matches. */
#include <stdio.h>
#include <string.h>

#include "checks_runtime.h"

static void usage(FILE *out) {
    fputs("usage: run_examples [--device auto|cuda|cpu] [--arch ARCH] [--persistent] [--all-shapes] [--shuffle]\n"
          "                    [--only TEXT] [--examples DIR]\n"
          "  --device auto    the GPU if there is one, else the interpreter (the default)\n"
          "  --device cuda    the GPU; fails when there is none\n"
          "  --device cpu     the reference interpreter\n"
          "  --arch ARCH      on the GPU, build for ARCH instead of the device's own (sm_90 on\n"
          "                   an H100 checks the mma.sync path that sm_90a's wgmma replaces)\n"
          "  --persistent     build every kernel persistent: on the GPU each program runs\n"
          "                   many program ids (blk_compile_options.persistent)\n"
          "  --all-shapes     every shape the test suite checks, not one per example (on a\n"
          "                   GPU also M = 4096 with N up to 16384, matmul 1024^3 and\n"
          "                   attention at N_CTX = 1024)\n"
          "  --shuffle        on the interpreter, run programs in a shuffled order\n"
          "  --only TEXT      only the checks whose call in tests/harness/checks.c holds TEXT\n"
          "                   (attention_fp8, DT_BF16, ...)\n"
          "  --examples DIR   where the .blk files are\n",
          out);
}

int main(int argc, char **argv) {
    InterpLaunchCtx shuffled = {BLK_EXAMPLES_DIR, {.shuffle = true, .shuffle_seed = 1}};
    RuntimeLaunchCtx rt = {BLK_EXAMPLES_DIR, NULL, NULL, false};
    const char *device = "auto";
    bool all_shapes = false, shuffle = false;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all-shapes") == 0) {
            all_shapes = true;
        } else if (strcmp(argv[i], "--shuffle") == 0) {
            shuffle = true;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            device = argv[++i];
            if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto")) {
                fprintf(stderr, "run_examples: error: unknown device '%s' (expected auto, cuda or cpu)\n", device);
                return 2;
            }
        } else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc) {
            rt.arch = argv[++i];
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--persistent") == 0) {
            rt.persistent = true;
        } else if (strcmp(argv[i], "--examples") == 0 && i + 1 < argc) {
            rt.examples_dir = shuffled.examples_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (shuffle && strcmp(device, "cuda") == 0) {
        fputs("run_examples: error: --shuffle is for the interpreter (--device cpu)\n", stderr);
        return 2;
    }
    if (!example_open_device(shuffle ? "cpu" : device, &rt)) return 1;
    ExampleRunner run = {example_launch_runtime, &rt, only};
    if (shuffle) run = (ExampleRunner){example_launch_interp, &shuffled, only};
    CheckResult results[EXAMPLE_SUITE_MAX];
    bool on_gpu = strncmp(blk_context_device(rt.ctx), "cpu", 3) != 0;
    int nresults = run_example_suite(&run, all_shapes ? (on_gpu ? 2 : 1) : 0, results, EXAMPLE_SUITE_MAX);
    if (only && nresults == 0) {
        fprintf(stderr, "run_examples: error: no check's call holds '%s' (tests/harness/checks.c)\n", only);
        return 2;
    }
    printf("device: %s%s%s%s%s\n\n", blk_context_device(rt.ctx), shuffle ? ", shuffled program order" : "",
           rt.arch ? ", built for " : "", rt.arch ? rt.arch : "", rt.persistent ? ", persistent kernels" : "");
    printf("| %-68s | %-10s | %-16s | %8s | %-6s |\n", "example and shape", "max error", "tolerance",
           "seconds", "result");
    printf("|%.70s|%.12s|%.18s|%.10s|%.8s|\n", "------------------------------------------------------------------------",
           "------------", "------------------", "----------", "--------");
    int failed = 0;
    for (int i = 0; i < nresults; i++) {
        const CheckResult *r = &results[i];
        printf("| %-68s | %-10.3g | %-16s | %8.3f | %-6s |\n", r->name, r->max_err, r->tolerance, r->seconds,
               r->ok ? "ok" : "WRONG");
        if (!r->ok) {
            fprintf(stderr, "%s: %s\n", r->name, r->detail);
            failed++;
        }
    }
    printf("\n%s\n", failed ? "some examples did NOT match their references" : "all examples match their references");
    blk_context_destroy(rt.ctx);
    return failed ? 1 : 0;
}
