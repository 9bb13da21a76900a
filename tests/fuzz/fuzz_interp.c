/* libFuzzer harness for the interpreter: every program that checks and lowers
 * is run, kernel by kernel, on a 2 x 2 grid with small buffers and tight
 * budgets (64 iterations per loop, 200,000 element operations per launch),
 * twice, and must do the same thing both times (memory too, unless the kernel
 * reads a clock). An error (out of bounds, a budget, a spin) is a fine
 * outcome; a crash, a sanitizer report, a hang or two runs that differ (an
 * uninitialized read) is a bug. Inputs are read as
 * fuzz_program.h says.
 * Build: CC=clang-19 cmake -B build-fuzz -DBLK_FUZZ=ON; see docs/testing.md. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_program.h"
#include "interp/interp.h"

enum { BUF_ELEMS = 256, MAX_PARAMS = 16 };
/* the interpreter keeps every value whole: skip kernels that would need more */
#define MAX_VALUE_BYTES ((int64_t)64 << 20)

/* Each buffer gets the same recognizable pattern, so two runs start equal. */
static void fill(unsigned char *buf, size_t bytes, int which) {
    for (size_t i = 0; i < bytes; i++) buf[i] = (unsigned char)(i * 7 + (size_t)which * 13 + 1);
}

/* Runs f once; returns the error (or NULL) and leaves memory in bufs. */
static char *run_once(const BirFunction *f, unsigned char (*mem)[BUF_ELEMS * 8], const InterpArg *args,
                      FILE *print_sink) {
    InterpBuffer bufs[MAX_PARAMS];
    int nbufs = 0;
    for (int p = 0; p < f->nparams; p++) {
        if (f->params[p].type.dtype != DT_PTR) continue;
        fill(mem[p], sizeof mem[p], p);
        bufs[nbufs++] = (InterpBuffer){mem[p], sizeof mem[p], NULL};
    }
    uint32_t grid[3] = {2, 2, 1};
    InterpOptions opt = {.max_loop_iterations = 64, .max_steps = 200000, .print_out = print_sink};
    return interp_launch(f, args, f->nparams, grid, bufs, nbufs, &opt);
}

/* Equal but for the addresses they print (the two runs use different
 * memory): hex numbers after "0x" are skipped in both. */
static bool same_message(const char *a, const char *b) {
    while (*a && *a == *b) {
        if (a[0] == '0' && a[1] == 'x' && b[1] == 'x') {
            for (a += 2; isxdigit((unsigned char)*a); a++) {}
            for (b += 2; isxdigit((unsigned char)*b); b++) {}
            continue;
        }
        a++, b++;
    }
    return *a == *b;
}

/* Does block b (nested regions too) read a clock or the SM's id? Then two
 * runs may store different values, and only their outcomes must agree. */
static bool reads_counter(const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_READ_COUNTER) return true;
        for (int r = 0; r < op->nregions; r++)
            if (reads_counter(op->regions[r])) return true;
    }
    return false;
}

static void run_kernel(const BirFunction *f, const uint8_t *data, size_t size, FILE *print_sink) {
    if (f->nparams > MAX_PARAMS) return;
    int64_t bytes = 0;
    for (int v = 0; v < f->nvalues; v++)
        if (f->values[v].type.dtype != DT_VOID) bytes += type_numel(f->values[v].type) * 8;
    if (bytes > MAX_VALUE_BYTES) return;
    /* integers from a small set that includes the usual sizes, zero and a
     * negative, picked by the input so the mutator can steer them */
    static const int64_t ints[] = {16, 1, 0, 7, -1, 64, 3, 256};
    static unsigned char mem_a[MAX_PARAMS][BUF_ELEMS * 8], mem_b[MAX_PARAMS][BUF_ELEMS * 8];
    InterpArg args[MAX_PARAMS];
    for (int p = 0; p < f->nparams; p++) {
        DType d = f->params[p].type.dtype;
        uint8_t pick = size ? data[(size_t)p % size] : 0;
        if (d == DT_PTR) args[p].p = NULL; /* set per run: each run has its own memory */
        else if (dtype_is_float(d)) args[p].f = 0.5 * (double)(pick % 8);
        else args[p].i = ints[pick % 8];
    }
    for (int p = 0; p < f->nparams; p++)
        if (f->params[p].type.dtype == DT_PTR) args[p].p = mem_a[p];
    char *first = run_once(f, mem_a, args, print_sink);
    for (int p = 0; p < f->nparams; p++)
        if (f->params[p].type.dtype == DT_PTR) args[p].p = mem_b[p];
    char *second = run_once(f, mem_b, args, print_sink);
    if (first && strncmp(first, "kernel '", 8) != 0) abort(); /* every error names the kernel */
    /* the same launch twice: the same outcome and the same memory (but for what clocks wrote) */
    if (!first != !second || (first && !same_message(first, second))) abort();
    bool clocked = reads_counter(f->body);
    for (int p = 0; p < f->nparams && !clocked; p++)
        if (f->params[p].type.dtype == DT_PTR && memcmp(mem_a[p], mem_b[p], sizeof mem_a[p]) != 0) abort();
    free(first);
    free(second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Compilation *c = fuzz_compile_front(data, size);
    if (c && c->ok) {
        if (!compile_lower(c)) abort(); /* checked programs always lower to valid IR */
        FILE *sink = fuzz_sink();
        for (int i = 0; sink && i < c->bir->nkernels && i < 4; i++) run_kernel(c->bir->kernels[i], data, size, sink);
    }
    compilation_free(c);
    return 0;
}
