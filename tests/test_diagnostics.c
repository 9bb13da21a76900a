#define _DEFAULT_SOURCE /* scandir, alphasort */
/* Golden diagnostics: each tests/diagnostics/NAME.blk is a malformed program
 * whose expected diagnostics stand at its top as
 *     // expect: LINE:COL: SEVERITY: MESSAGE
 * The compiler must report exactly those, in that order, and show the source
 * line with a caret under the column. One test per file. Files named
 * backend_*.blk are correct programs the NVPTX backend rejects: they go
 * through the whole pipeline (compile_ptx), for the arch a `// arch: sm_NN`
 * line names (default sm_90) and the warps a `// num-warps: N` line names. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>

#include "blk_files.h"
#include "support.h"

ParameterizedTestParameters(diagnostics, golden) { return blk_file_params(BLK_DIAG_DIR); }

typedef struct {
    char lines[64][512]; /* "L:C: severity: message" */
    int n;
    int first_line, first_col;
} DiagList;

static void record(void *user, const Diagnostic *d) {
    DiagList *l = user;
    static const char *const sev[] = {"error", "warning", "note"};
    if (l->n == 0) {
        l->first_line = (int)d->span.line;
        l->first_col = (int)d->span.col;
    }
    if (l->n < 64)
        snprintf(l->lines[l->n], sizeof l->lines[0], "%u:%u: %s: %s", d->span.line, d->span.col,
                 sev[d->severity], d->message);
    l->n++;
}

ParameterizedTest(int *index, diagnostics, golden) {
    char name[256];
    cr_assert(blk_file_name(BLK_DIAG_DIR, *index, name, sizeof name));
    char *src = test_file(BLK_DIAG_DIR, name);

    DiagList want = {0}, got = {0};
    const char *text;
    int len;
    for (const char *at = src; want.n < 64 && blk_directive(&at, "expect", &text, &len);)
        snprintf(want.lines[want.n++], sizeof want.lines[0], "%.*s", len, text);
    cr_assert(want.n > 0, "%s states no expected diagnostic", name);

    bool backend = strncmp(name, "backend_", 8) == 0;
    char arch[16] = "sm_90";
    const char *at = src;
    if (blk_directive(&at, "arch", &text, &len)) snprintf(arch, sizeof arch, "%.*s", len, text);
    int num_warps = 0;
    at = src;
    if (blk_directive(&at, "num-warps", &text, &len)) num_warps = atoi(text);

    CompileRequest req = {.name = name, .text = src, .len = strlen(src), .diag = record,
                          .diag_user = &got};
    Compilation *c = compile_front(&req);
    cr_assert(c);
    if (backend) {
        cr_assert(c->ok, "%s: the front end should accept it: %s", name, got.n ? got.lines[0] : "");
        NvptxOptions opt = {.arch = arch, .num_warps = num_warps};
        NvptxOutput out;
        cr_expect_not(compile_ptx(c, &opt, &out), "%s compiled for %s without error", name, arch);
        nvptx_output_free(&out);
        /* the decisions alone (--emit=plan, the CLI's hints) find the same errors: no code is built there */
        DiagList decided = {0};
        DiagEngine full = c->de;
        c->de = (DiagEngine){full.callback, &decided, 0, false};
        opt.decisions_only = true;
        cr_expect_not(compile_ptx(c, &opt, &out), "%s: its decisions alone pass for %s", name, arch);
        nvptx_output_free(&out);
        c->de = full;
        cr_expect_eq(decided.n, want.n, "%s: the decisions alone give %d diagnostics, expected %d", name, decided.n,
                     want.n);
        for (int i = 0; i < want.n && i < decided.n; i++)
            cr_expect_str_eq(decided.lines[i], want.lines[i], "%s, the decisions alone: diagnostic %d", name, i + 1);
    } else {
        /* a file that expects only warnings must compile; one with an error must not */
        bool wants_error = false;
        for (int i = 0; i < want.n; i++) wants_error |= strstr(want.lines[i], ": error: ") != NULL;
        if (wants_error) cr_expect_not(c->ok, "%s compiled without error", name);
        else cr_expect(c->ok, "%s: only warnings are expected, but it did not compile", name);
    }
    cr_expect_eq(got.n, want.n, "%s: %d diagnostics, expected %d (first: %s)", name, got.n, want.n,
                 got.n ? got.lines[0] : "none");
    for (int i = 0; i < want.n && i < got.n; i++)
        cr_expect_str_eq(got.lines[i], want.lines[i], "%s, diagnostic %d", name, i + 1);

    /* The formatted form: header, the source line, a caret under the column. */
    Captured cap = {0};
    Compilation *c2 = compile_str(src, &cap);
    if (backend) {
        NvptxOptions opt = {.arch = arch, .num_warps = num_warps};
        NvptxOutput out;
        compile_ptx(c2, &opt, &out);
        nvptx_output_free(&out);
    }
    const char *nl1 = strchr(cap.text, '\n');
    cr_assert(nl1, "%s", cap.text);
    const char *src_line = src;
    for (int l = 1; l < got.first_line; l++) src_line = strchr(src_line, '\n') + 1;
    size_t src_len = strcspn(src_line, "\n");
    const char *echo = nl1 + 1;
    size_t echo_len = strcspn(echo, "\n");
    const char *caret_line = echo + echo_len + 1;
    size_t caret = strcspn(caret_line, "^");
    if (src_len <= 160) {
        cr_expect(echo_len == src_len && strncmp(echo, src_line, src_len) == 0, "%s: source line missing:\n%s",
                  name, cap.text);
        cr_expect_eq(caret, (size_t)got.first_col - 1, "%s: caret not under column %d:\n%s", name,
                     got.first_col, cap.text);
    } else { /* a long line is echoed as a window around the caret */
        cr_expect(echo_len <= 166 && caret < echo_len && echo[caret] == src_line[got.first_col - 1],
                  "%s: the window does not show column %d under the caret:\n%s", name, got.first_col, cap.text);
    }
    compilation_free(c2);
    compilation_free(c);
    free(src);
}

Test(diagnostics, long_lines_are_windowed_and_control_bytes_inert) {
    /* a 100,000-byte line with a terminal escape, a NUL and an error in the middle */
    size_t n = 100000;
    char *src = malloc(n + 64);
    int k = sprintf(src, "kernel k(x: *f32) {\n    let a = 1");
    while ((size_t)k < n / 2) k += sprintf(src + k, " + 1");
    k += sprintf(src + k, " + \x1b[31m $ ");
    src[k++] = 0;
    while ((size_t)k < n) k += sprintf(src + k, " + 1");
    k += sprintf(src + k, ";\n}\n");
    Source s = {"long.blk", src, (size_t)k};
    Captured cap = {0};
    DiagEngine de = {.callback = capture_diag, .user = &cap};
    Lexer lx;
    lexer_init(&lx, &s, &de);
    while (lexer_next(&lx).kind != TOK_EOF) {}
    cr_assert(strstr(cap.text, "unexpected character '$'"), "%s", cap.text);
    cr_expect_lt(strlen(cap.text), 2000, "the echo is not bounded");
    cr_expect_null(strchr(cap.text, 0x1b), "a terminal escape was echoed");
    const char *echo = strchr(strstr(cap.text, "unexpected character '$'"), '\n') + 1;
    size_t caret = strcspn(echo + strcspn(echo, "\n") + 1, "^");
    cr_expect_eq(echo[caret], '$', "%s", cap.text);
    cr_expect(strstr(cap.text, "null character"), "the NUL cut the output short: %s", cap.text);
    free(src);
}
