/* compile.h: the pipeline, one call per stage, shared by the blkc driver,
 * the runtime and the benchmarks:
 *   source -> tokens -> AST -> checked AST    compile_front
 *          -> block IR (verified)             compile_lower
 *          -> PTX and per-kernel launch facts compile_ptx
 * The interpreter (interp/interp.h) runs the block IR of compile_lower. */
#ifndef BLK_COMPILE_H
#define BLK_COMPILE_H

#include "blkc.h"
#include "nvptx/nvptx.h"

/* One compilation: the front end's passes over one source text, and what
 * they produced. Everything is owned by the compilation's arena. */
typedef struct {
    Arena arena;
    Source src;
    DiagEngine de;
    Module *module;
    BirModule *bir; /* after compile_lower */
    bool ok;
} Compilation;

typedef struct {
    const char *name;  /* shown in diagnostics */
    const char *text;  /* need not be NUL-terminated */
    size_t len;
    ConstDef *defs;    /* -D values; `used` is set on the ones that matched */
    int ndefs;
    DiagCallback diag;
    void *diag_user;
} CompileRequest;

/* Lex, parse and check. Returns NULL only if the request is malformed. */
Compilation *compile_front(const CompileRequest *req);
/* Lower the checked module to BIR and verify every kernel; a verifier
 * failure is a compiler bug, reported as an internal error. */
bool compile_lower(Compilation *c);
BirFunction *compilation_kernel(const Compilation *c, const char *name); /* after compile_lower */
void compilation_free(Compilation *c);
/* Lower if needed, then the NVPTX backend (compiler/nvptx/nvptx.h): block IR
 * -> PTX, its errors reported with the compilation's diagnostics. False
 * when any pass failed; out then holds nothing. */
bool compile_ptx(Compilation *c, const NvptxOptions *opt, NvptxOutput *out);
/* source_file.c: the text of a source file (malloc'ed into *text, *len
 * bytes), or of standard input where from_stdin; anything else but
 * SOURCE_READ leaves *text NULL and the reason in err, starting with the
 * path ("'x' is not a regular file (a FIFO)"). */
typedef enum { SOURCE_READ, SOURCE_UNREADABLE, SOURCE_NOT_REGULAR, SOURCE_TOO_LARGE, SOURCE_OUT_OF_MEMORY } SourceStatus;
SourceStatus source_read(const char *path, bool from_stdin, char **text, size_t *len, char *err, size_t err_size);
/* build_id.c: the running build's identity (the GNU build-id, in hex, of the
 * object this code is linked into: blkc, libblk.so, a program linking
 * libblk.a), for the runtime's cache keys and blkc --version; false, and
 * "none", without one. */
bool blk_build_id(char *buf, size_t size);
/* options.def's integer options (BLK_INT rows), for the command line, the
 * runtime and the Python package alike. */
typedef enum { BLK_INT_ANY, BLK_INT_POW2, BLK_INT_OR_NONE } BlkIntRule;
typedef struct {
    const char *name, *cli;
    int lo, hi;
    BlkIntRule rule;
    const char *value, *help; /* the usage line's name of the value; --help's text */
} BlkIntOption;
extern const BlkIntOption blk_int_options[];
extern const int blk_num_int_options;
enum { /* each one's index in blk_int_options */
#define BLK_INT(name, cli, lo, hi, rule, value, help) BLK_INT_AT_##name,
#include "options.def"
#undef BLK_INT
    BLK_NUM_INT_OPTIONS
};
/* Whether v is one of o's values: on the command line (`cli`) LO to HI (the
 * caller reads "none"), in blk_compile_options also 0 (the default) and -1
 * where o has none. */
bool blk_int_option_ok(const BlkIntOption *o, long v, bool cli);
/* What o takes, as an error message says it: "a power of two from 1 to 32",
 * "2 to 8", "1 to 32 or none" (cli); "0 or a power of two up to 32", "0 or 2 to
 * 8", "-1 (none), 0 (the default) or 1 to 32". Written into buf. */
const char *blk_int_option_range(const BlkIntOption *o, bool cli, char *buf, size_t size);

/* explore.c: --explore: one self-contained HTML page of the source, the
 * kernels' plans and the PTX (its launch contract first), every line tied
 * to its source line; with a second build (--explore-diff), both side by
 * side, the plan lines only one has marked and the source lines whose
 * instructions differ counted. False if writing failed. */
/* What ptxas made of one kernel (cuda_tools.h reads it from `ptxas -v`). */
typedef struct {
    char *kernel;
    int registers, spill_stores, spill_loads, stack; /* registers a thread; bytes */
    char *advice;                                    /* its numbered advisories, "  ptxas: ..." lines ("": none) */
} KernelResources;
typedef struct {
    const char *ptx;            /* its launch contract first */
    const char *const *plans;   /* one per kernel */
    int nplans;
    const char *stats;          /* --stats' text, or NULL where ptxas is not installed */
    const char *label;          /* what the build is (with two), or NULL */
    const KernelResources *resources; /* ptxas's, per kernel (NULL where not installed); the chart
                                         takes each one's warps and shared memory from the contract */
    int nresources;
    const char *sass;           /* the disassembler's text, or NULL */
    const char *sass_tool;      /* "nvdisasm" (lines tied by its //## File comments) or "cuobjdump" */
} ExploreBuild;
bool explore_page(FILE *out, const Source *src, const ExploreBuild *a, const ExploreBuild *b);
/* --emit=tokens; returns the number of errors. */
int dump_tokens(FILE *out, const CompileRequest *req);

#endif
