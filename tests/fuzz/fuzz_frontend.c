/* libFuzzer harness for the front end: lex, parse and check arbitrary bytes,
 * formatting every diagnostic; what checks cleanly is lowered to the block
 * IR, which must verify (a verifier failure aborts), printed, and compiled to
 * PTX under backend options the input's hash picks (backend_options), so the
 * sm_90a paths — wgmma, TMA copies, producer warpgroups, persistent
 * programs — are reached, not only sm_90's defaults. Any crash, hang, leak or sanitizer report is a
 * bug; each one found becomes a test in tests/diagnostics or test_parser.c.
 * Inputs are read as fuzz_program.h says.
 * Build: CC=clang-19 cmake -B build-fuzz -DBLK_FUZZ=ON; see docs/testing.md. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_program.h"
#include "launch.h"

static uint64_t hash_of(const uint8_t *data, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
    return h ^ h >> 29;
}

/* The backend options an input is compiled under, from its hash (so every
 * input has one configuration, and a mutation may land on another): the
 * arch (sm_90a half the time: wgmma, TMA and producers live there), warps,
 * stages, the option flags, and half the time the launch facts of a tidy
 * launch for its first kernel (launch_tidy_facts: every pointer 16-byte
 * aligned, every integer a multiple of 16, and 1 for the unit strides its
 * remarks ask for), which TMA copies and producer warpgroups need; a
 * quarter of the time the schedule's text (--emit=plan) too. */
static NvptxOptions backend_options(Compilation *c, uint64_t h, int64_t *facts) {
    static const char *const archs[] = {"sm_90a", "sm_90", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_90a", "sm_90a"};
    static const int warps[] = {0, 0, 0, 1, 2, 4, 8, 16};
    static const int stages[] = {0, 0, 2, 3};
    NvptxOptions o = {.arch = archs[h & 7], .num_warps = warps[h >> 3 & 7], .num_stages = stages[h >> 6 & 3],
                      .no_tma = (h >> 8 & 7) == 0, .no_warp_specialize = (h >> 11 & 7) == 0,
                      .persistent = (h >> 14 & 3) == 0, .precise_math = (h >> 16 & 7) == 0,
                      .no_fma = (h >> 19 & 7) == 0, .min_blocks_per_sm = (h >> 22 & 7) == 0 ? 2 : 0,
                      .plan = (h >> 26 & 3) == 0, /* the schedule as text, with every access's advice */
                      .debug = (h >> 28 & 7) == 0, .no_bulk_reduce = (h >> 31 & 7) == 0};
    if ((h >> 25 & 1) && c->bir->nkernels) {
        const BirFunction *f = c->bir->kernels[0];
        o.only_kernel = f->name;
        if (f->nparams <= BLK_MAX_KERNEL_ARGS && launch_tidy_facts(c, &o, f, facts)) o.param_div = facts;
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Compilation *c = fuzz_compile_front(data, size);
    if (c && c->ok) {
        FILE *sink = fuzz_sink();
        if (sink) ast_dump_module(sink, c->module, NULL);
        if (!compile_lower(c)) abort(); /* checked programs always lower to valid IR */
        for (int i = 0; sink && i < c->bir->nkernels; i++) bir_print(sink, c->bir->kernels[i]);
        /* the backend too: it may refuse a program (a located error), never crash */
        int64_t facts[BLK_MAX_KERNEL_ARGS] = {0};
        NvptxOptions opt = backend_options(c, hash_of(data, size), facts);
        NvptxOutput out;
        unsigned long before = fuzz_located_errors;
        if (!compile_ptx(c, &opt, &out)) {
            if (fuzz_located_errors == before) abort();
        } else {
            for (int i = 0; sink && opt.plan && i < out.nkernels; i++) {
                if (!out.kernels[i].plan) abort(); /* asked for, and the compile succeeded */
                fputs(out.kernels[i].plan, sink);
            }
            nvptx_output_free(&out);
        }
    }
    compilation_free(c);
    return 0;
}
