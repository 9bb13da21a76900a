/* libFuzzer harness for the front end: lex, parse and check arbitrary bytes,
 * formatting every diagnostic; what checks cleanly is lowered to the block
 * IR, which must verify (a verifier failure aborts), and printed. Any crash, hang, leak or sanitizer report is a
 * bug; each one found becomes a test in tests/diagnostics or test_parser.c.
 * Build: CC=clang-19 cmake -B build-fuzz -DBLK_FUZZ=ON; see docs/testing.md. */
#include <stdint.h>
#include <stdlib.h>

#include "compile.h"

static void format_and_drop(void *user, const Diagnostic *d) {
    (void)user;
    free(diag_format(d));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* Bind one const from the input's first byte, to reach the -D paths. */
    static const char *const values[] = {"64", "f16", "0", "-1", "1e3", "abc", "2147483648", ""};
    ConstDef defs[1] = {{"BLOCK", values[size ? data[0] % 8 : 0], false}};
    CompileRequest req = {
        .name = "fuzz.blk", .text = (const char *)data, .len = size, .defs = defs,
        .ndefs = size && (data[0] & 8) ? 1 : 0, .diag = format_and_drop,
    };
    Compilation *c = compile_front(&req);
    if (c && c->ok) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) ast_dump_module(sink, c->module, NULL);
        if (!compile_lower(c)) abort(); /* checked programs always lower to valid IR */
        for (int i = 0; sink && i < c->bir->nkernels; i++) bir_print(sink, c->bir->kernels[i]);
        if (sink) fclose(sink);
    }
    compilation_free(c);
    return 0;
}
