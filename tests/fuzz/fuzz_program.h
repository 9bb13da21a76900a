/* fuzz_program.h: how the program fuzzers read an input (shared by
 * fuzz_frontend.c and fuzz_interp.c). A first byte below 8 (never the start
 * of a program) binds -D BLOCK to one of eight values and is dropped; any
 * other input is compiled as it is, so the corpus's real programs (the
 * examples start with "//") reach lowering, the backends and the interpreter. */
#ifndef BLK_FUZZ_PROGRAM_H
#define BLK_FUZZ_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "compile.h"

/* Errors reported with a source position so far: a backend that refuses a
 * program must say where. */
static unsigned long fuzz_located_errors;

static void fuzz_drop_diagnostic(void *user, const Diagnostic *d) {
    (void)user;
    if (d->severity == DIAG_ERROR && d->span.line > 0) fuzz_located_errors++;
    free(diag_format(d)); /* formatted, so the formatter is fuzzed too */
}

/* Where dumps and device_print output go: /dev/null, opened once (NULL if
 * it cannot be, and then nothing is written). */
static FILE *fuzz_sink(void) {
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    return sink;
}

/* The input checked by the front end (lexer, parser, sema). */
static Compilation *fuzz_compile_front(const uint8_t *data, size_t size) {
    static const char *const values[] = {"64", "f16", "16", "-1", "1e3", "abc", "2147483648", ""};
    bool bind = size && data[0] < 8;
    ConstDef defs[1] = {{"BLOCK", values[bind ? data[0] : 0], false}};
    CompileRequest req = {
        .name = "fuzz.blk", .text = (const char *)data + bind, .len = size - bind, .defs = defs,
        .ndefs = bind ? 1 : 0, .diag = fuzz_drop_diagnostic,
    };
    return compile_front(&req);
}

#endif
