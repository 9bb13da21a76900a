/* interp.h: the reference interpreter, the backend that runs a kernel's block
 * IR on host memory, one program at a time (docs/interpreter.md). The "cpu"
 * device of the runtime. */
#ifndef BLK_INTERP_H
#define BLK_INTERP_H

#include "blkc.h"

/* The reference interpreter: runs a kernel's BIR on host memory, one program
 * at a time (docs/interpreter.md). The "cpu" device of the runtime. */

/* A runtime argument, in the kernel's parameter order: integers in .i,
 * f32 in .f, pointers in .p. */
typedef union {
    int64_t i;
    double f;
    void *p;
} InterpArg;

/* Host memory the kernel may touch; any access outside these is an error. */
typedef struct {
    void *base;
    size_t bytes;
    const char *name; /* for messages; NULL: named after a pointer argument into it */
} InterpBuffer;

/* How a launch ended, and what it used (InterpOptions.report). */
typedef enum {
    INTERP_OK,
    INTERP_FAULT,         /* the kernel faulted, or the launch was refused (bad arguments, grid) */
    INTERP_OUT_OF_MEMORY, /* the values a program holds passed max_bytes, or malloc failed */
} InterpOutcome;

typedef struct {
    InterpOutcome outcome;
    uint64_t peak_bytes; /* the most bytes of value storage held at once (live values and
                          * freed buffers kept for reuse) */
} InterpReport;

typedef struct {
    bool shuffle;          /* programs in a random order (seeded) instead of 0, 1, 2, ... */
    uint64_t shuffle_seed;
    FILE *print_out;       /* device_print output; NULL: stdout */
    uint64_t max_loop_iterations; /* per loop, per program; 0: INTERP_MAX_LOOP_ITERATIONS */
    uint64_t max_steps; /* element operations per launch (an op on a block of n counts n,
                         * a dot M*N*K); 0: no limit. Bounds nested loops and large grids,
                         * which the per-loop budget does not. */
    uint64_t max_bytes; /* value storage a launch may hold at once; 0: INTERP_MAX_BYTES */
    InterpReport *report; /* NULL, or filled in by interp_launch */
} InterpOptions;

/* A loop that runs longer than this in one program is reported, not run on:
 * the interpreter runs one program at a time, so a spin waiting for another
 * program never ends. About a second or two of a scalar loop. */
#define INTERP_MAX_LOOP_ITERATIONS ((uint64_t)1 << 24)

/* A value's storage lives from its definition to its last use; the bytes
 * held at once (8 per element of each live value, plus freed buffers kept
 * for reuse) may not pass this, so a kernel of many large blocks fails with
 * INTERP_OUT_OF_MEMORY instead of exhausting the host. */
#define INTERP_MAX_BYTES ((uint64_t)4 << 30)

/* Runs grid[0] x grid[1] x grid[2] programs of f. Returns NULL, or a
 * malloc'ed message naming the kernel, the source line, the program and
 * what went wrong (an out-of-bounds access, a spin that cannot end, bad
 * arguments, out of memory); opt->report, if given, says which kind. */
char *interp_launch(const BirFunction *f, const InterpArg *args, int nargs, const uint32_t grid[3],
                    const InterpBuffer *bufs, int nbufs, const InterpOptions *opt);

#endif
