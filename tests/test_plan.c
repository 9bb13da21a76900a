#define _DEFAULT_SOURCE /* scandir, alphasort, popen */
/* The backend's decisions as text: each tests/plan/NAME.blk is a small
 * kernel whose schedule (blkc --emit=plan) must contain, in this order,
 * a line holding each
 *     // expect: TEXT
 * and no line holding any
 *     // expect-not: TEXT
 * built with the options of its `// args: ...` line (blkc's: --arch,
 * --assume, -D, --num-warps, ...). One test per file; and every example on
 * every arch has a plan, a schedule per kernel. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include "blk_files.h"
#include "support.h"

ParameterizedTestParameters(plan, decisions) { return blk_file_params(BLK_PLAN_DIR); }

/* blkc's output for a command line, and its exit status. */
static char *run_blkc(const char *args, int *status) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s --emit=plan --no-hints -o - 2>&1", BLKC_PATH, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "popen %s", cmd);
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, p)) > 0) {
        len += got;
        if (cap - len < 4096) text = realloc(text, cap *= 2);
    }
    text[len] = 0;
    *status = pclose(p);
    return text;
}

/* A line holding s, at or after *from (which moves past it). */
static bool find_line(const char **from, const char *s) {
    const char *hit = strstr(*from, s);
    if (!hit) return false;
    const char *end = strchr(hit, '\n');
    *from = end ? end + 1 : hit + strlen(hit);
    return true;
}

ParameterizedTest(int *index, plan, decisions) {
    char name[256], path[1024];
    cr_assert(blk_file_name(BLK_PLAN_DIR, *index, name, sizeof name));
    snprintf(path, sizeof path, "%s/%s", BLK_PLAN_DIR, name);
    char *src = slurp(path);
    cr_assert(src, "%s: cannot read", path);
    char args[2048];
    snprintf(args, sizeof args, "'%s'", path);
    const char *text;
    int len, nexpect = 0;
    for (const char *at = src; blk_directive(&at, "args", &text, &len);)
        snprintf(args + strlen(args), sizeof args - strlen(args), " %.*s", len, text);
    for (const char *at = src; blk_directive(&at, "expect", &text, &len);) nexpect++;
    cr_assert(nexpect > 0, "%s: no // expect: line", name);
    int status;
    char *plan = run_blkc(args, &status);
    cr_assert_eq(status, 0, "%s: blkc failed:\n%s", name, plan);
    const char *from = plan;
    char want[512];
    for (const char *at = src; blk_directive(&at, "expect", &text, &len);) {
        snprintf(want, sizeof want, "%.*s", len, text);
        cr_expect(find_line(&from, want), "%s: no line holds \"%s\" (after the previous one) in:\n%s", name, want,
                  plan);
    }
    for (const char *at = src; blk_directive(&at, "expect-not", &text, &len);) {
        snprintf(want, sizeof want, "%.*s", len, text);
        cr_expect(!strstr(plan, want), "%s: a line holds \"%s\" in:\n%s", name, want, plan);
    }
    free(plan);
    free(src);
}

/* Every example, on every arch: a schedule per kernel. */
Test(plan, every_example_every_arch) {
    static const char *const examples[] = {"activations", "add", "attention", "attention_bwd", "attention_decode",
                                           "cross_entropy", "cumsum", "dropout", "groupnorm", "layernorm", "matmul",
                                           "quantize", "rmsnorm", "softmax", "softmax_online"};
    static const char *const archs[] = {"sm_80", "sm_90", "sm_90a"};
    for (size_t e = 0; e < sizeof examples / sizeof *examples; e++)
        for (size_t a = 0; a < 3; a++) {
            char args[1024], path[512];
            snprintf(path, sizeof path, "%s/%s.blk", BLK_EXAMPLES_DIR, examples[e]);
            snprintf(args, sizeof args, "'%s' --arch %s", path, archs[a]);
            int status;
            char *plan = run_blkc(args, &status);
            cr_expect_eq(status, 0, "%s: %s", args, plan);
            /* one header per kernel of the file */
            char *src = slurp(path);
            int kernels = 0, headers = 0;
            for (const char *k = src; (k = strstr(k, "\nkernel ")); k++) kernels++;
            if (strncmp(src, "kernel ", 7) == 0) kernels++;
            for (const char *h = plan; (h = strstr(h, " on ")); h++) {
                const char *bol = h;
                while (bol > plan && bol[-1] != '\n') bol--;
                headers += strncmp(bol, "kernel ", 7) == 0 && strncmp(h + 4, archs[a], strlen(archs[a])) == 0 &&
                           h[4 + strlen(archs[a])] == ':';
            }
            cr_expect_eq(headers, kernels, "%s: %d schedules for %d kernels", args, headers, kernels);
            free(src);
            free(plan);
        }
}
