/* run_examples.c: the main job's runner. Runs every example in this
 * directory at the Triton tutorials' shapes and compares each with its C
 * reference (reference/checks.c states the tolerances), printing a table.
 * Devices: "cuda", the GPU (kernels compiled to PTX in process and launched
 * through the driver), or "cpu", the reference interpreter; by default the
 * GPU when there is one.
 * Exit status 0 when every example matches. */
#include <stdio.h>
#include <string.h>

#include "checks_cuda.h"

static void usage(FILE *out) {
    fputs("usage: run_examples [--device auto|cuda|cpu] [--all-shapes] [--no-specialize] [--shuffle] [--examples DIR]\n"
          "  --device auto    the GPU if there is one, else the interpreter (the default)\n"
          "  --device cuda    the GPU; fails when there is none\n"
          "  --device cpu     the reference interpreter\n"
          "  --all-shapes     every shape the test suite checks, not one per example\n"
          "  --no-specialize  on the GPU, compile without the facts of the arguments\n"
          "                   (16-byte alignment, divisibility by 16) that it uses by default\n"
          "  --shuffle        on the interpreter, run programs in a shuffled order\n"
          "  --examples DIR   where the .blk files are\n",
          out);
}

int main(int argc, char **argv) {
    InterpLaunchCtx ctx = {BLK_EXAMPLES_DIR, {0}};
    const char *device = "auto";
    bool all_shapes = false, specialize = true;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--all-shapes") == 0) {
            all_shapes = true;
        } else if (strcmp(argv[i], "--no-specialize") == 0) {
            specialize = false;
        } else if (strcmp(argv[i], "--shuffle") == 0) {
            ctx.options.shuffle = true;
            ctx.options.shuffle_seed = 1;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            device = argv[++i];
            if (strcmp(device, "cpu") && strcmp(device, "cuda") && strcmp(device, "auto")) {
                fprintf(stderr, "run_examples: error: unknown device '%s' (expected auto, cuda or cpu)\n", device);
                return 2;
            }
        } else if (strcmp(argv[i], "--examples") == 0 && i + 1 < argc) {
            ctx.examples_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    ExampleRunner run = {example_launch_interp, &ctx};
    CudaLaunchCtx gpu = {.examples_dir = ctx.examples_dir, .specialize = specialize};
    char device_line[256];
    snprintf(device_line, sizeof device_line, "cpu (reference interpreter%s)",
             ctx.options.shuffle ? ", shuffled program order" : "");
    if (strcmp(device, "cpu") != 0) {
        char err[512];
        if (cuda_launch_init(&gpu, err, sizeof err)) {
            run = (ExampleRunner){example_launch_cuda, &gpu};
            snprintf(device_line, sizeof device_line, "cuda (%s, %s)", gpu.device_name, gpu.arch);
        } else if (strcmp(device, "cuda") == 0) {
            fprintf(stderr, "run_examples: error: %s\n", err);
            return 1;
        } else {
            printf("no GPU here (%s): running on the interpreter\n", err);
        }
    }
    CheckResult results[64];
    int nresults = run_example_suite(&run, all_shapes, results, 64);
    printf("device: %s\n\n", device_line);
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
    if (run.launch == example_launch_cuda) cuda_launch_close(&gpu);
    return failed ? 1 : 0;
}
