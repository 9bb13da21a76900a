/* libFuzzer harness for the front end: lex, parse and check arbitrary bytes,
 * formatting every diagnostic; what checks cleanly is lowered to the block
 * IR, which must verify (a verifier failure aborts), printed, and compiled to
 * PTX. Any crash, hang, leak or sanitizer report is a
 * bug; each one found becomes a test in tests/diagnostics or test_parser.c.
 * Build: CC=clang-19 cmake -B build-fuzz -DBLK_FUZZ=ON; see docs/testing.md. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "compile.h"

static void format_and_drop(void *user, const Diagnostic *d) {
    (void)user;
    free(diag_format(d));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* A first byte below 8 (never the start of a program) binds BLOCK to one of
     * these and is dropped; any other input is compiled as it is, so the corpus's
     * real programs reach lowering and code generation. */
    static const char *const values[] = {"64", "f16", "0", "-1", "1e3", "abc", "2147483648", ""};
    bool bind = size && data[0] < 8;
    ConstDef defs[1] = {{"BLOCK", values[bind ? data[0] : 0], false}};
    CompileRequest req = {
        .name = "fuzz.blk", .text = (const char *)data + bind, .len = size - bind, .defs = defs,
        .ndefs = bind ? 1 : 0, .diag = format_and_drop,
    };
    Compilation *c = compile_front(&req);
    if (c && c->ok) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) ast_dump_module(sink, c->module, NULL);
        if (!compile_lower(c)) abort(); /* checked programs always lower to valid IR */
        for (int i = 0; sink && i < c->bir->nkernels; i++) bir_print(sink, c->bir->kernels[i]);
        if (sink) fclose(sink);
        /* the backend too: it may refuse a program (a located error), never crash */
        NvptxOptions opt = {.arch = "sm_90"};
        NvptxOutput out;
        compile_ptx(c, &opt, &out);
        nvptx_output_free(&out);
    }
    compilation_free(c);
    return 0;
}
