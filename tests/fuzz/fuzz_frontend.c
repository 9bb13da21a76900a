/* libFuzzer harness for the front end: lex, parse and check arbitrary bytes,
 * formatting every diagnostic; what checks cleanly is lowered to the block
 * IR, which must verify (a verifier failure aborts), printed, and compiled to
 * PTX. Any crash, hang, leak or sanitizer report is a
 * bug; each one found becomes a test in tests/diagnostics or test_parser.c.
 * Inputs are read as fuzz_program.h says.
 * Build: CC=clang-19 cmake -B build-fuzz -DBLK_FUZZ=ON; see docs/testing.md. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_program.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Compilation *c = fuzz_compile_front(data, size);
    if (c && c->ok) {
        FILE *sink = fuzz_sink();
        if (sink) ast_dump_module(sink, c->module, NULL);
        if (!compile_lower(c)) abort(); /* checked programs always lower to valid IR */
        for (int i = 0; sink && i < c->bir->nkernels; i++) bir_print(sink, c->bir->kernels[i]);
        /* the backend too: it may refuse a program (a located error), never crash */
        NvptxOptions opt = {.arch = "sm_90"};
        NvptxOutput out;
        unsigned long before = fuzz_located_errors;
        if (!compile_ptx(c, &opt, &out) && fuzz_located_errors == before) abort();
        nvptx_output_free(&out);
    }
    compilation_free(c);
    return 0;
}
