/* main.c: the blkc driver. Reads one .blk file, runs the pipeline and writes
 * the requested form. Exit status: 0 success, 1 compile errors, 2 usage. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile.h"
#include "cuda_tools.h"
#include "launch.h"

enum { EXIT_COMPILE_ERROR = 1, EXIT_USAGE = 2 };
enum { MAX_DEFS = 256, MAX_VARIANTS = 8 };

typedef enum { EMIT_TOKENS, EMIT_AST, EMIT_BIR, EMIT_PLAN, EMIT_LLVM, EMIT_PTX, EMIT_LAUNCH, EMIT_C, EMIT_H,
               EMIT_EXPLORE } EmitKind;

typedef struct {
    const char *input;
    const char *output; /* NULL: stdout */
    EmitKind emit;
    const char *kernel;
    NvptxOptions backend;
    bool annotate;
    bool stats;
    ConstDef defs[MAX_DEFS];
    int ndefs;
    NvptxAssume assume[NVPTX_MAX_ASSUME];
    int nassume;
    char *variants[MAX_VARIANTS]; /* --variant FACTS, as given (or "div16") */
    int nvariants;
    const char *prefix;           /* --prefix: starts the names a C launcher defines */
    bool no_hints;                /* --no-hints: no note that a faster build exists */
    int colour;                   /* --color: 1 always, 0 never, -1 auto (a terminal, NO_COLOR unset) */
    bool no_target;               /* --min-blocks-per-sm none: no automatic occupancy target (--emit=c/h) */
    char *explore_diff;           /* --explore-diff OPTIONS: build B's options over build A's, or NULL */
} Options;

/* A flag's --help entry: the flag, then its lines from column 20 (on the next line where the
 * flag is too long to leave a space). */
static void flag_help(FILE *out, const char *flag, const char *help) {
    int at = fprintf(out, "  %s", flag);
    for (const char *line = help; *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        if (at >= 19) fputc('\n', out), at = 0;
        fprintf(out, "%*s%.*s\n", 19 - at, "", len, line);
        at = 0;
        line += len + (end != NULL);
    }
}

/* each row's help has a line (flag_help ends an entry with its last one) */
#define BLK_FLAG(name, cli, help) _Static_assert(sizeof(help) > 1, "options.def: " cli " has no help");
#define BLK_INT(name, cli, lo, hi, rule, value, help) BLK_FLAG(name, cli, help)
#include "options.def"
#undef BLK_INT
#undef BLK_FLAG

static void usage(FILE *out) {
    char archs[128];
    fprintf(out, "usage: blkc FILE.blk [-o OUT] [-D NAME=VALUE]... [--emit=ptx|launch|plan|explore|c|h|llvm|bir|ast|tokens]\n"
          "            [--arch ARCH]");
#define BLK_INT(name, cli, lo, hi, rule, value, help) fputs(" [" cli " " value "]", out);
#include "options.def"
#undef BLK_INT
    fputs("\n           ", out);
#define BLK_FLAG(name, cli, help) fputs(" [" cli "]", out);
#include "options.def"
#undef BLK_FLAG
    fprintf(out, " [--assume FACTS] [--remarks] [--annotate] [--stats] [--no-hints]\n"
          "            [--variant FACTS]... [--prefix NAME] [--kernel NAME] [--color=auto|always|never]\n"
          "            [--help] [--version]\n"
          "\n"
          "  -o OUT           write the output to OUT ('-' for stdout): a file is replaced\n"
          "                   atomically, only when the compile succeeds; OUT may not be\n"
          "                   the input\n"
          "  -D NAME=VALUE    set a const parameter of every kernel that declares NAME\n"
          "  --emit=ptx       PTX for the GPU (the default), its launch contract at the top:\n"
          "                   the block, dynamic shared memory and parameters a launch needs\n"
          "  --emit=launch    the launch contract alone, as JSON\n"
          "  --emit=c         a C launcher: the PTX embedded and, per kernel, a typed\n"
          "                   NAME_launch(stream, args..., grid_x, grid_y, grid_z) that checks\n"
          "                   its arguments against the facts the code assumes (cuda.h, -lcuda)\n"
          "  --emit=h         the C launcher's header\n"
          "  --variant FACTS  with --emit=c/h: also build each kernel under these facts (as\n"
          "                   --assume takes them, or 'div16': every pointer 16-byte aligned\n"
          "                   and every integer a multiple of 16, the runtime's specialization);\n"
          "                   a launch runs the first variant its arguments satisfy, else the\n"
          "                   build without them (up to 8)\n"
          "  --prefix NAME    with --emit=c/h: start every name the launcher defines with NAME\n"
          "  --no-hints       no note at a kernel whose build another --arch or launch facts\n"
          "                   would make faster (wgmma, TMA, wider accesses), naming them\n"
          "  --emit=llvm      the optimized LLVM IR the PTX is made from\n"
          "  --emit=plan      every decision the backend makes per kernel: the block IR\n"
          "                   with each value's layout, the shared-memory map, pipelined\n"
          "                   loops, dots, access widths and what limits each\n"
          "                   (docs/internals.md reads one)\n"
          "  --emit=explore   one HTML page to study the kernels: source, plan, PTX and\n"
          "                   SASS (where ptxas and nvdisasm or cuobjdump are installed;\n"
          "                   $BLKC_NVDISASM, $BLKC_CUOBJDUMP) in columns, each line tied to\n"
          "                   its source line (hover or click); per source line its\n"
          "                   instructions by kind and the plan's notes; each kernel's\n"
          "                   registers, spills and what limits its programs an SM\n"
          "  --explore FILE   the same as --emit=explore -o FILE\n"
          "  --explore-diff OPTIONS\n"
          "                   with --explore: compare this build (A) with one whose options\n"
          "                   are A's and then OPTIONS (space-separated: a -D there replaces\n"
          "                   A's), both side by side, the plan lines only one has marked\n"
          "                   and the source lines whose instructions differ counted\n"
          "  --emit=bir       the verified block IR, one op per line with its type and\n"
          "                   source line\n"
          "  --emit=ast       the checked AST with the type and shape of every expression\n"
          "  --emit=tokens    the token stream\n"
          "  --arch ARCH      %s (default " NVPTX_DEFAULT_ARCH ")\n"
          , nvptx_arch_names(archs, sizeof archs));
    /* options.def's options, as the other options: the name, then the help from column 20 */
#define BLK_INT(name, cli, lo, hi, rule, value, help) flag_help(out, cli " " value, help);
#define BLK_FLAG(name, cli, help) flag_help(out, cli, help);
#include "options.def"
#undef BLK_FLAG
#undef BLK_INT
    fprintf(out,
          "  --assume FACTS   compile as if every launch had these facts, comma-separated:\n"
          "                   NAME%%K (K a power of two): integer NAME is a multiple of K,\n"
          "                   pointer NAME is aligned to K bytes; NAME=1: integer NAME is 1.\n"
          "                   For each kernel with a runtime parameter NAME; a launch that\n"
          "                   breaks one is undefined (the runtime states them per launch)\n"
          "  -R, --remarks    a remark at each block load and store not vectorized as\n"
          "                   widely as its shape allows: what limits it, and the\n"
          "                   --assume facts that would widen it\n"
          "  --annotate       with --emit=ptx: each source line as a comment above its PTX\n"
          "  --stats          registers, spills, shared memory and programs an SM per\n"
          "                   kernel, from ptxas ($BLKC_PTXAS, on the PATH or in\n"
          "                   /usr/local/cuda/bin), on stderr; without ptxas a warning,\n"
          "                   and the PTX is written all the same\n"
          "  --kernel NAME    only this kernel\n"
          "  --color=WHEN     colour the diagnostics: auto (the default: when stderr is a\n"
          "                   terminal and NO_COLOR is not set), always or never\n"
          "  --help, --version\n"
          "\n"
          "examples:\n"
          "  blkc add.blk -o add.ptx                 PTX, its launch contract at the top\n"
          "  blkc matmul.blk --arch sm_90a --emit=plan --assume K%%16,N%%16\n"
          "                                          what the backend decided, and why\n"
          "  blkc add.blk --annotate --stats         PTX under its source lines; registers\n"
          "  blkc matmul.blk --arch sm_90a --explore matmul.html   study it in a browser\n"
          "  blkc matmul.blk --arch sm_90a --explore m.html --explore-diff '--assume stride_ak=1,stride_bn=1'\n"
          "                                          what two launch facts change\n"
          "  blkc add.blk --emit=c -o add.c          a C launcher with the PTX embedded\n"
          "  blkc softmax.blk -D T=f16 -D BLOCK=1024 -R   remarks on narrow accesses\n"
          "docs: docs/language.md (the language), docs/runtime.md (launching)\n");
}

static int usage_error(const char *fmt, const char *arg) {
    fputs("blkc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(run 'blkc --help' for usage)\n", stderr);
    return EXIT_USAGE;
}

static int add_define(Options *o, char *text) {
    char *eq = strchr(text, '=');
    if (!eq || eq == text) return usage_error("-D expects NAME=VALUE, got '%s'", text);
    if (o->ndefs == MAX_DEFS) return usage_error("too many -D options (limit %s)", "256");
    *eq = 0;
    for (int i = 0; i < o->ndefs; i++)
        if (strcmp(o->defs[i].name, text) == 0) return usage_error("-D %s is given twice", text);
    o->defs[o->ndefs++] = (ConstDef){text, eq + 1, false};
    return 0;
}

/* --assume N%16,X%16,S=1 (and --variant's facts) into facts[*n]. */
static int parse_facts(char *text, NvptxAssume *facts, int *n, const char *option) {
    for (char *spec = strtok(text, ","); spec; spec = strtok(NULL, ",")) {
        char *mod = strchr(spec, '%'), *eq = strchr(spec, '=');
        char *sep = mod ? mod : eq;
        if (!sep || sep == spec || (mod && eq))
            return usage_error(strcmp(option, "--assume") == 0 ? "--assume expects NAME%%K or NAME=1, got '%s'"
                                                                : "--variant expects NAME%%K or NAME=1, or div16, got '%s'", spec);
        char *end;
        long long k = strtoll(sep + 1, &end, 10);
        if (*end || end == sep + 1 || (mod && (k < 1 || k > (1ll << 30) || (k & (k - 1)))))
            return usage_error("--assume NAME%%K takes a power of two K from 1 to 2^30, got '%s'", spec);
        if (eq && k != 1) return usage_error("--assume NAME=V knows only V = 1 (Triton's specialization), got '%s'", spec);
        *sep = 0;
        for (int i = 0; i < *n; i++)
            if (strcmp(facts[i].name, spec) == 0)
                return usage_error(strcmp(option, "--assume") == 0 ? "--assume names '%s' twice"
                                                                   : "--variant names '%s' already assumed", spec);
        if (*n == NVPTX_MAX_ASSUME) return usage_error("too many facts (limit %s)", "64");
        facts[(*n)++] = (NvptxAssume){spec, mod ? k : NVPTX_PARAM_ONE};
    }
    return 0;
}

static int add_assume(Options *o, char *text) { return parse_facts(text, o->assume, &o->nassume, "--assume"); }

static int add_variant(Options *o, char *v) {
    if (o->nvariants == MAX_VARIANTS) return usage_error("too many --variant options (limit %s)", "8");
    o->variants[o->nvariants++] = v;
    return 0;
}

static int set_prefix(Options *o, const char *v) {
    bool ok = (v[0] == '_' || (v[0] >= 'a' && v[0] <= 'z') || (v[0] >= 'A' && v[0] <= 'Z')) && strlen(v) < 64;
    for (const char *c = v; ok && *c; c++)
        ok = *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
    if (!ok) return usage_error("--prefix expects a C identifier (letters, digits, '_'), got '%s'", v);
    o->prefix = v;
    return 0;
}

static int set_emit(Options *o, const char *v) {
    if (strcmp(v, "tokens") == 0) o->emit = EMIT_TOKENS;
    else if (strcmp(v, "ast") == 0) o->emit = EMIT_AST;
    else if (strcmp(v, "bir") == 0) o->emit = EMIT_BIR;
    else if (strcmp(v, "plan") == 0) o->emit = EMIT_PLAN;
    else if (strcmp(v, "llvm") == 0) o->emit = EMIT_LLVM;
    else if (strcmp(v, "ptx") == 0) o->emit = EMIT_PTX;
    else if (strcmp(v, "launch") == 0) o->emit = EMIT_LAUNCH;
    else if (strcmp(v, "c") == 0) o->emit = EMIT_C;
    else if (strcmp(v, "h") == 0) o->emit = EMIT_H;
    else if (strcmp(v, "explore") == 0) o->emit = EMIT_EXPLORE;
    else return usage_error("unknown --emit kind '%s' (expected ptx, launch, plan, explore, c, h, llvm, bir, ast or "
                            "tokens)", v);
    return 0;
}

static int set_arch(Options *o, const char *v) {
    if (!nvptx_arch(v)) {
        char names[128];
        fprintf(stderr, "blkc: error: unknown --arch '%s' (expected %s)\n(run 'blkc --help' for usage)\n", v,
                nvptx_arch_names(names, sizeof names));
        return EXIT_USAGE;
    }
    o->backend.arch = v;
    return 0;
}

/* v as a whole decimal integer from lo to hi into *n; false otherwise. */
static bool int_in(const char *v, long lo, long hi, int *n) {
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi) return false;
    *n = (int)x;
    return true;
}

/* The integer option of options.def whose command-line name `a` is (with
 * its value after '=' where `a` holds one: *value then points there); NULL for none. */
static const BlkIntOption *int_option(const char *a, const char **value) {
    for (int i = 0; i < blk_num_int_options; i++) {
        const BlkIntOption *io = &blk_int_options[i];
        size_t n = strlen(io->cli);
        if (strncmp(a, io->cli, n) != 0 || (a[n] && a[n] != '=')) continue;
        *value = a[n] == '=' ? a + n + 1 : NULL;
        return io;
    }
    return NULL;
}

/* Sets an integer option of options.def to v, as the command line spells it. */
static int set_int_option(Options *o, const BlkIntOption *io, const char *v) {
    int n = 0;
    bool none = io->rule == BLK_INT_OR_NONE && strcmp(v, "none") == 0;
    if (!none && (!int_in(v, io->lo, io->hi, &n) || !blk_int_option_ok(io, n, true))) {
        char range[64], said[512];
        snprintf(said, sizeof said, "%s expects %s, got '%.400s'", io->cli,
                 blk_int_option_range(io, true, range, sizeof range), v);
        return usage_error("%s", said);
    }
#define BLK_INT(name, cli, lo, hi, rule, value, help) \
    if (io == &blk_int_options[BLK_INT_AT_##name]) o->backend.name = n; /* (0 for none) */
#include "options.def"
#undef BLK_INT
    if (io == &blk_int_options[BLK_INT_AT_min_blocks_per_sm])
        o->no_target = none; /* none: no automatic occupancy target either (--emit=c/h) */
    return 0;
}

/* Sets the flag of options.def that `a` names; false when it names none. */
static bool set_flag(Options *o, const char *a) {
#define BLK_FLAG(name, cli, help) \
    if (strcmp(a, cli) == 0) return o->backend.name = true;
#include "options.def"
#undef BLK_FLAG
    return false;
}

/* Returns -1 to go on, else an exit status. */
static int parse_args(Options *o, int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        const BlkIntOption *io;
        const char *value;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            char llvm[32], archs[128], build[128];
            blk_build_id(build, sizeof build);
            nvptx_arch_names(archs, sizeof archs);
            char *or = strstr(archs, " or ");
            if (or) memmove(or + 1, or + 3, strlen(or + 3) + 1), or[0] = ','; /* a list, not a choice */
            printf("blkc %s\nLLVM %s\ntargets: %s\nbuild-id: %s\n", BLKC_VERSION,
                   nvptx_llvm_version(llvm, sizeof llvm), archs, build);
            return 0;
        }
        if (set_flag(o, a)) {
        } else if (strcmp(a, "--no-hints") == 0) {
            o->no_hints = true;
        } else if (strncmp(a, "--color=", 8) == 0) {
            const char *w = a + 8;
            if (strcmp(w, "always") == 0) o->colour = 1;
            else if (strcmp(w, "never") == 0) o->colour = 0;
            else if (strcmp(w, "auto") == 0) o->colour = -1;
            else return usage_error("--color takes auto, always or never, not '%s'", w);
        } else if (strcmp(a, "--annotate") == 0) {
            o->annotate = true;
        } else if (strcmp(a, "--stats") == 0) {
            o->stats = true;
        } else if (strcmp(a, "--remarks") == 0 || strcmp(a, "-R") == 0) {
            o->backend.remarks = true;
        } else if ((io = int_option(a, &value))) {
            if (!value && i + 1 >= argc) return usage_error("%s needs a value", a);
            int rc = set_int_option(o, io, value ? value : argv[++i]);
            if (rc) return rc;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "-D") == 0 || strcmp(a, "--kernel") == 0 ||
            strcmp(a, "--emit") == 0 || strcmp(a, "--arch") == 0 || strcmp(a, "--assume") == 0 ||
            strcmp(a, "--variant") == 0 || strcmp(a, "--prefix") == 0 || strcmp(a, "--explore") == 0 ||
            strcmp(a, "--explore-diff") == 0) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            char *v = argv[++i];
            int rc = 0;
            if (a[1] == 'o') o->output = v;
            else if (strcmp(a, "--explore") == 0) o->emit = EMIT_EXPLORE, o->output = v;
            else if (strcmp(a, "--explore-diff") == 0) o->emit = EMIT_EXPLORE, o->explore_diff = v;
            else if (a[1] == 'D') rc = add_define(o, v);
            else if (strcmp(a, "--kernel") == 0) o->kernel = v;
            else if (strcmp(a, "--arch") == 0) rc = set_arch(o, v);
            else if (strcmp(a, "--assume") == 0) rc = add_assume(o, v);
            else if (strcmp(a, "--variant") == 0) rc = add_variant(o, v);
            else if (strcmp(a, "--prefix") == 0) rc = set_prefix(o, v);
            else rc = set_emit(o, v);
            if (rc) return rc;
        } else if (strncmp(a, "-D", 2) == 0) {
            int rc = add_define(o, a + 2);
            if (rc) return rc;
        } else if (strncmp(a, "--emit=", 7) == 0) {
            int rc = set_emit(o, a + 7);
            if (rc) return rc;
        } else if (strncmp(a, "--assume=", 9) == 0) {
            int rc = add_assume(o, a + 9);
            if (rc) return rc;
        } else if (strncmp(a, "--kernel=", 9) == 0) {
            o->kernel = a + 9;
        } else if (strncmp(a, "--arch=", 7) == 0) {
            int rc = set_arch(o, a + 7);
            if (rc) return rc;
        } else if (a[0] == '-' && a[1] != 0) {
            return usage_error("unknown option '%s'", a);
        } else {
            if (o->input) return usage_error("more than one input file ('%s')", a);
            o->input = a;
        }
    }
    if (!o->input) return usage_error("%s", "no input file");
    if ((o->nvariants || o->prefix) && o->emit != EMIT_C && o->emit != EMIT_H)
        return usage_error("%s", o->nvariants ? "--variant is for --emit=c and --emit=h" : "--prefix is for --emit=c and --emit=h");
    return -1;
}

/* The whole input (source_read: a regular file, or standard input for
 * "-"); NULL with the reason printed. */
static char *read_file(const char *path, size_t *len) {
    char *text, err[1200];
    SourceStatus s = source_read(path, strcmp(path, "-") == 0, &text, len, err, sizeof err);
    if (s) fprintf(stderr, "blkc: error: %s%s\n", err,
                   s == SOURCE_NOT_REGULAR ? "; give a .blk file, or '-' for standard input" : "");
    return text;
}

static bool write_all(int fd, const char *data, size_t len);

/* ptxas's registers, spills and stack per kernel (its report), with the
 * shared memory, the programs an SM and the occupancy target that follow,
 * written to `to` (stderr for --stats; the page for --explore). */
static void print_stats_of(const NvptxOutput *out, const char *arch, int min_blocks_per_sm, FILE *to,
                           const KernelResources *report, int nreport) {
    for (int r = 0; r < nreport; r++) {
        const KernelResources *kr = &report[r];
        unsigned regs = (unsigned)kr->registers;
        long long smem = 0;
        int warps = 0, min_regs = 0;
        bool persistent = false;
        const char *notes = "";
        for (int i = 0; i < out->nkernels; i++)
            if (strcmp(out->kernels[i].name, kr->kernel) == 0) {
                const NvptxKernel *k = &out->kernels[i];
                smem = k->shared_bytes, warps = k->num_warps, min_regs = k->min_regs, persistent = k->persistent;
                if (k->notes) notes = k->notes;
            }
        const char *limit;
        int programs = warps ? nvptx_programs_per_sm(nvptx_arch(arch), warps, (int)regs, smem, &limit) : 0;
        fprintf(to, "%s: %d warps, %u registers, %d bytes spill stores, %d bytes spill loads, %d bytes stack, "
                        "%lld bytes shared memory, %d program%s an SM (limit: %s)\n%s", kr->kernel, warps, regs,
                kr->spill_stores, kr->spill_loads, kr->stack, smem, programs, programs == 1 ? "" : "s",
                programs ? limit : "none", notes);
        fputs(kr->advice, to);
        /* the runtime's automatic occupancy target (docs/runtime.md), said for the CLI's PTX */
        int most = warps ? nvptx_programs_per_sm(nvptx_arch(arch), warps, 0, smem, NULL) : 0;
        int target = min_blocks_per_sm ? 0 : nvptx_occupancy_target(NVPTX_SM_REGISTERS, programs, most, warps, (int)regs,
                                                                             min_regs, persistent);
        if (target > programs)
            fprintf(to, "  ptxas used %u registers a thread, %u more than the %d that %d programs an SM allow: "
                            "--min-blocks-per-sm %d asks it to fit them (the runtime sets this target itself)\n",
                    regs, regs - (unsigned)nvptx_registers_for(NVPTX_SM_REGISTERS, target, warps),
                    nvptx_registers_for(NVPTX_SM_REGISTERS, target, warps), target, target);
        else if (target)
            fprintf(to, "  ptxas used %u of the %d registers a thread that %d programs an SM allow: "
                            "--min-blocks-per-sm %d lets it use them (the runtime sets this target itself)\n",
                    regs, nvptx_registers_for(NVPTX_SM_REGISTERS, programs, warps), programs, programs);
    }
}

/* --stats: ptxas's report over the PTX, printed; false when ptxas failed. */
static bool print_stats(const NvptxOutput *out, const char *arch, int min_blocks_per_sm, FILE *to) {
    const char *ptxas = cuda_tool("ptxas");
    if (!ptxas) { /* the PTX is still written: statistics are extra */
        fputs("blkc: warning: --stats needs ptxas ($BLKC_PTXAS, on the PATH or in /usr/local/cuda/bin): no "
              "statistics\n", stderr);
        return true;
    }
    KernelResources *report;
    int n;
    char *errors;
    bool ok = ptxas_report(ptxas, out->text, arch, NULL, &report, &n, &errors);
    print_stats_of(out, arch, min_blocks_per_sm, to, report, n);
    if (errors) fputs(errors, stderr);
    free(errors);
    ptxas_report_free(report, n);
    return ok;
}

/* Write via a temporary file in the same directory and rename, so readers
 * never see a partial file. */
static bool write_all(int fd, const char *data, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        off += (size_t)w;
    }
    return true;
}

/* Writes the output. A regular file (or a new one) is replaced atomically:
 * written to a temporary file beside it, given the mode a new file would get
 * (the umask's), and renamed over it, so readers never see a partial file.
 * Anything else (a FIFO, a device such as /dev/null) is written in place,
 * never replaced or deleted. */
static bool write_output(const char *path, const char *data, size_t len) {
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        int fd = open(path, O_WRONLY);
        bool ok = fd >= 0 && write_all(fd, data, len);
        if (fd >= 0 && close(fd) != 0) ok = false;
        if (!ok) fprintf(stderr, "blkc: error: cannot write '%s': %s\n", path, strerror(errno));
        return ok;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) return false;
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "blkc: error: cannot create '%s': %s\n", tmp, strerror(errno));
        free(tmp);
        return false;
    }
    mode_t mask = umask(0);
    umask(mask);
    bool ok = write_all(fd, data, len) && fchmod(fd, 0666 & ~mask) == 0;
    if (close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        fprintf(stderr, "blkc: error: cannot write '%s': %s\n", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}

/* The facts of --variant div16: every pointer parameter 16-byte aligned and
 * every integer one a multiple of 16 (but those declared @equal(1)), of the
 * kernels compiled; NULL-terminated names in the compilation's arena. */
static int div16_facts(const Compilation *c, const char *only, NvptxAssume *facts, int *n) {
    for (int k = 0; k < c->bir->nkernels; k++) {
        const BirFunction *f = c->bir->kernels[k];
        if (only && strcmp(f->name, only) != 0) continue;
        for (int p = 0; p < f->nparams; p++) {
            const BirParam *prm = &f->params[p];
            if (prm->type.dtype != DT_PTR && (!dtype_is_int(prm->type.dtype) || prm->equal_one)) continue;
            bool known = false;
            for (int i = 0; i < *n; i++) known |= strcmp(facts[i].name, prm->name) == 0;
            if (known) continue;
            if (*n == NVPTX_MAX_ASSUME) return usage_error("--variant div16: more than %s facts", "64");
            facts[(*n)++] = (NvptxAssume){prm->name, 16};
        }
    }
    return 0;
}

/* Whether a fact can hold of a parameter: a multiple for integers and
 * pointers, =1 for integers. A launcher's kernels are built one at a time,
 * each with the facts that fit its own parameters of those names. */
static bool fact_fits(const NvptxAssume *a, const BirParam *p) {
    if (dtype_is_int(p->type.dtype)) return true;
    return p->type.dtype == DT_PTR && a->fact != NVPTX_PARAM_ONE;
}

/* The occupancy target the runtime would give a kernel built without one
 * (docs/runtime.md), from ptxas's registers instead of the driver's: its
 * PTX with .minnctapersm added, or built again with the target where it has
 * a producer warpgroup; kept when ptxas reaches the target with no more
 * stack. res holds one kernel; nothing changes on any failure. */
static void automatic_target(const char *ptxas, Compilation *c, const NvptxOptions *opt, NvptxOutput *res) {
    const NvptxKernel *k = &res->kernels[0];
    const NvptxArch *a = nvptx_arch(opt->arch);
    int regs, stack;
    if (!a || !ptxas_usage(ptxas, res->text, opt->arch, &regs, &stack)) return;
    int programs = nvptx_programs_per_sm(a, k->num_warps, regs, k->shared_bytes, NULL);
    int most = nvptx_programs_per_sm(a, k->num_warps, 0, k->shared_bytes, NULL);
    int target = nvptx_occupancy_target(NVPTX_SM_REGISTERS, programs, most, k->num_warps, regs, k->min_regs,
                                        k->persistent);
    if (!target) return;
    NvptxOutput again = {0};
    char *text = nvptx_with_occupancy_target(res->text, target);
    if (text) {
        again = *res; /* the same kernel, the text with the directive */
        again.text = text;
    } else { /* a producer warpgroup: its code depends on the target */
        NvptxOptions o = *opt;
        o.min_blocks_per_sm = target;
        DiagEngine saved = c->de;
        c->de = (DiagEngine){0};
        bool built = compile_ptx(c, &o, &again);
        c->de = saved;
        if (!built) return;
    }
    int regs2, stack2;
    const NvptxKernel *k2 = &again.kernels[0];
    bool better = ptxas_usage(ptxas, again.text, opt->arch, &regs2, &stack2) && stack2 <= stack &&
                  nvptx_programs_per_sm(a, k2->num_warps, regs2, k2->shared_bytes, NULL) >= target;
    if (text) {
        if (better) free(res->text), res->text = text;
        else free(text);
        return;
    }
    if (better) {
        nvptx_output_free(res);
        *res = again;
    } else {
        nvptx_output_free(&again);
    }
}

/* A C launcher's builds: per variant, each kernel compiled alone (its PTX
 * holds it only) with the occupancy target the runtime would give it where
 * ptxas is installed and no --min-blocks-per-sm was given, so that the
 * launcher runs what the JIT runs. */
static bool launcher_source(Options *o, Compilation *c, const NvptxOptions *opts, int nbuilds, FILE *out) {
    int nk = 0;
    for (int i = 0; i < c->bir->nkernels; i++) nk += !o->kernel || strcmp(c->bir->kernels[i]->name, o->kernel) == 0;
    NvptxOutput *res = calloc((size_t)(nbuilds * nk + 1), sizeof *res);
    NvptxKernel *kinfo = calloc((size_t)(nbuilds * nk + 1), sizeof *kinfo);
    const char **texts = calloc((size_t)(nbuilds * nk + 1), sizeof *texts);
    NvptxOutput *joined = calloc((size_t)nbuilds, sizeof *joined);
    LaunchBuild *builds = calloc((size_t)nbuilds, sizeof *builds);
    bool ok = res && kinfo && texts && joined && builds;
    if (!ok) fputs("blkc: error: out of memory\n", stderr);
    const char *ptxas = o->backend.min_blocks_per_sm || o->no_target ? NULL : cuda_tool("ptxas");
    for (int v = 0; ok && v < nbuilds; v++) {
        for (int i = 0, j = 0; ok && i < c->bir->nkernels; i++) {
            const char *name = c->bir->kernels[i]->name;
            if (o->kernel && strcmp(name, o->kernel) != 0) continue;
            NvptxOptions one = opts[v];
            one.only_kernel = name;
            /* the facts about this kernel's parameters (emit_backend checked that each names one) */
            NvptxAssume mine[NVPTX_MAX_ASSUME];
            one.assume = mine;
            one.nassume = 0;
            for (int a = 0; a < opts[v].nassume; a++)
                for (int p = 0; p < c->bir->kernels[i]->nparams; p++)
                    if (strcmp(opts[v].assume[a].name, c->bir->kernels[i]->params[p].name) == 0 &&
                        fact_fits(&opts[v].assume[a], &c->bir->kernels[i]->params[p]))
                        mine[one.nassume++] = opts[v].assume[a];
            NvptxOutput *r = &res[v * nk + j];
            ok = compile_ptx(c, &one, r);
            if (!ok) break;
            if (ptxas) automatic_target(ptxas, c, &one, r);
            kinfo[v * nk + j] = r->kernels[0];
            texts[v * nk + j] = r->text;
            j++;
        }
        joined[v] = (NvptxOutput){"", &kinfo[v * nk], nk};
        builds[v] = (LaunchBuild){c->bir, &joined[v], opts[v].arch, &opts[v], o->defs, o->ndefs, &texts[v * nk]};
    }
    if (ok) {
        char err[256];
        ok = launch_c_source(out, builds, nbuilds, o->prefix ? o->prefix : "", o->emit == EMIT_H, err, sizeof err);
        if (!ok) fprintf(stderr, "blkc: error: %s\n", err);
    }
    for (int i = 0; res && i < nbuilds * nk; i++) nvptx_output_free(&res[i]);
    free(res), free(kinfo), free(texts), free(joined), free(builds);
    return ok;
}

/* The backend's options the command line gives (--emit's own added by each caller). */
static NvptxOptions backend_options(const Options *o) {
    NvptxOptions opt = o->backend;
    opt.only_kernel = o->kernel;
    opt.assume = o->assume;
    opt.nassume = o->nassume;
    if (!opt.arch) opt.arch = NVPTX_DEFAULT_ARCH;
    return opt;
}

/* One build for --explore: its PTX with the contract, plans, ptxas's
 * resources and the SASS, where the tools are installed. */
typedef struct {
    NvptxOptions opt;
    NvptxOutput res;
    char *ptx, *stats, *sass;
    const char **plans;
    KernelResources *resources;
    int nresources;
    ExploreBuild view;
} ExploreParts;

static bool explore_build(Options *o, Compilation *c, ExploreParts *e, const char *label) {
    *e = (ExploreParts){.opt = backend_options(o)};
    e->opt.plan = true;
    if (!compile_lower(c) || !compile_ptx(c, &e->opt, &e->res)) return false;
    LaunchBuild b = {c->bir, &e->res, e->opt.arch, &e->opt, o->defs, o->ndefs, NULL};
    size_t len = 0;
    FILE *f = open_memstream(&e->ptx, &len);
    if (f) launch_contract_comment(f, &b), fputs(e->res.text, f);
    bool ok = f && fclose(f) == 0;
    /* ptxas's resources and the SASS, where they are installed: extra, so a failure leaves them out */
    const char *sass_tool = NULL;
    char *failed = NULL;
    if (ok) cuda_explore_facts(e->res.text, e->opt.arch, &e->resources, &e->nresources, &e->sass, &sass_tool, &failed);
    FILE *sf = e->resources ? open_memstream(&e->stats, &len) : NULL;
    if (sf) print_stats_of(&e->res, e->opt.arch, e->opt.min_blocks_per_sm, sf, e->resources, e->nresources), fclose(sf);
    if (!sf) e->stats = failed; /* what ptxas said when it failed, or NULL */
    else free(failed);
    e->plans = calloc((size_t)e->res.nkernels + 1, sizeof *e->plans);
    for (int i = 0; e->plans && i < e->res.nkernels; i++) e->plans[i] = e->res.kernels[i].plan;
    e->view = (ExploreBuild){e->ptx, e->plans, e->res.nkernels, e->stats, label, e->resources, e->nresources,
                             e->sass, sass_tool};
    if (!ok || !e->plans) fputs("blkc: error: out of memory\n", stderr);
    return ok && e->plans;
}

static void explore_free(ExploreParts *e) {
    nvptx_output_free(&e->res);
    free(e->ptx), free(e->stats), free(e->sass), free(e->plans);
    ptxas_report_free(e->resources, e->nresources);
}

/* --explore: the page of this build, or (--explore-diff) of it and a second
 * one, whose options are this one's and then the words given. */
static bool explore(Options *o, Compilation *c, FILE *out) {
    ExploreParts a, b;
    char *label_b = NULL;
    bool ok = explore_build(o, c, &a, o->explore_diff ? "A: as the command line says" : NULL);
    if (ok && !o->no_hints) launch_faster_hints(c, &a.opt, &c->de);
    if (!ok || !o->explore_diff) {
        ok = ok && explore_page(out, &c->src, &a.view, NULL);
        explore_free(&a);
        return ok;
    }
    /* build B: A's options, then the words (a -D replaces A's of that name) */
    Options ob = *o;
    char *words = malloc(strlen(o->explore_diff) + 1), *argv[130] = {"blkc"};
    int argc = 1;
    if (words) strcpy(words, o->explore_diff);
    for (char *w = words ? strtok(words, " ") : NULL; w && argc < 129; w = strtok(NULL, " ")) argv[argc++] = w;
    for (int i = 1; i + 1 < argc; i++) {
        const char *eq = strcmp(argv[i], "-D") == 0 ? strchr(argv[i + 1], '=') : NULL;
        for (int d = 0; eq && d < ob.ndefs; d++)
            if (strlen(ob.defs[d].name) == (size_t)(eq - argv[i + 1]) &&
                strncmp(ob.defs[d].name, argv[i + 1], (size_t)(eq - argv[i + 1])) == 0)
                ob.defs[d--] = ob.defs[--ob.ndefs];
    }
    ok = words && parse_args(&ob, argc, argv) == -1;
    Compilation *cb = NULL;
    if (ok) {
        CompileRequest req = {.name = c->src.name, .text = c->src.text, .len = c->src.len, .defs = ob.defs,
                              .ndefs = ob.ndefs, .diag = diag_print_to_file, .diag_user = stderr};
        cb = compile_front(&req);
        ok = cb && cb->ok;
    }
    if (ok && (label_b = malloc(strlen(o->explore_diff) + 16))) sprintf(label_b, "B: A and %s", o->explore_diff);
    bool built_b = ok && label_b;
    ok = built_b && explore_build(&ob, cb, &b, label_b);
    ok = ok && explore_page(out, &c->src, &a.view, &b.view);
    if (built_b) explore_free(&b);
    explore_free(&a);
    compilation_free(cb);
    free(label_b);
    free(words);
    return ok;
}

/* PTX (with its launch contract), LLVM IR, the contract as JSON, or a C
 * launcher over the build and its --variant builds, into out. */
static bool emit_backend(Options *o, Compilation *c, FILE *out) {
    if (o->emit == EMIT_EXPLORE) return explore(o, c, out);
    NvptxOptions opt = backend_options(o);
    opt.llvm_ir = o->emit == EMIT_LLVM;
    opt.plan = o->emit == EMIT_PLAN;
    opt.decisions_only = o->emit == EMIT_PLAN; /* every decision is made before any code is built */
    /* the variants first, then the build under --assume alone */
    int nbuilds = o->nvariants + 1;
    NvptxAssume facts[MAX_VARIANTS + 1][NVPTX_MAX_ASSUME];
    NvptxOptions opts[MAX_VARIANTS + 1];
    bool ok = compile_lower(c);
    for (int v = 0; ok && v < nbuilds; v++) {
        opts[v] = opt;
        if (v == nbuilds - 1) continue;
        int n = o->nassume;
        memcpy(facts[v], o->assume, (size_t)n * sizeof *facts[v]);
        char *spec = o->variants[v];
        int rc = strcmp(spec, "div16") == 0 ? div16_facts(c, o->kernel, facts[v], &n)
                                            : parse_facts(spec, facts[v], &n, "--variant");
        ok = rc == 0;
        opts[v].assume = facts[v];
        opts[v].nassume = n;
    }
    bool launcher = o->emit == EMIT_C || o->emit == EMIT_H;
    for (int v = 0; ok && launcher && v < nbuilds; v++) /* each kernel is built alone: say here a fact no kernel takes */
        for (int a = 0; ok && a < opts[v].nassume; a++) {
            bool named = false;
            for (int i = 0; i < c->bir->nkernels && !named; i++) {
                const BirFunction *f = c->bir->kernels[i];
                for (int p = 0; (!o->kernel || strcmp(f->name, o->kernel) == 0) && p < f->nparams; p++)
                    named |= strcmp(f->params[p].name, opts[v].assume[a].name) == 0 &&
                             fact_fits(&opts[v].assume[a], &f->params[p]);
            }
            if (!named) {
                const NvptxAssume *f = &opts[v].assume[a];
                char spelled[96];
                nvptx_fact_spelling(f, spelled, sizeof spelled);
                fprintf(stderr, "blkc: error: %s %s: no kernel compiled has a runtime parameter '%s' it fits (an "
                        "integer; a pointer takes NAME%%K only)\n", v == nbuilds - 1 ? "--assume" : "--variant", spelled,
                        f->name);
                ok = false;
            }
        }
    if (ok && launcher) {
        ok = launcher_source(o, c, opts, nbuilds, out);
        if (ok && !o->nvariants && !o->no_hints) launch_faster_hints(c, &opt, &c->de);
        return ok;
    }
    NvptxOutput res;
    if (!ok || !compile_ptx(c, &opt, &res)) return false;
    LaunchBuild b = {c->bir, &res, opt.arch, &opt, o->defs, o->ndefs, NULL};
    /* said once, at the kernel: what keeps the PTX from the build a tidy launch would get */
    if (!o->no_hints && o->emit != EMIT_LLVM) launch_faster_hints(c, &opt, &c->de);
    if (o->stats && o->emit == EMIT_PTX) ok = print_stats(&res, opt.arch, opt.min_blocks_per_sm, stderr);
    if (ok && o->emit == EMIT_LAUNCH) launch_contract_json(out, &b);
    for (int i = 0; ok && o->emit == EMIT_PLAN && i < res.nkernels; i++)
        fprintf(out, "%s%s", i ? "\n" : "", res.kernels[i].plan);
    if (ok && o->emit == EMIT_PTX) {
        char *text = res.text;
        if (o->annotate) {
            text = nvptx_annotate(res.text, &c->src);
            if (!text) fputs("blkc: error: out of memory\n", stderr), ok = false;
        }
        if (ok) launch_contract_comment(out, &b), fputs(text, out);
        if (text != res.text) free(text);
    }
    if (ok && o->emit == EMIT_LLVM) {
        if (o->nassume) { /* whoever reads the IR must know what it takes for granted */
            fputs("; compiled assuming", out);
            for (int i = 0; i < o->nassume; i++)
                if (o->assume[i].fact == NVPTX_PARAM_ONE) fprintf(out, "%s %s == 1", i ? "," : "", o->assume[i].name);
                else fprintf(out, "%s %s %% %lld == 0", i ? "," : "", o->assume[i].name, (long long)o->assume[i].fact);
            fputs(" (--assume)\n", out);
        }
        fputs(res.text, out);
    }
    nvptx_output_free(&res);
    return ok;
}

/* Is -o the input file itself (a name or a link to it)? */
static bool same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int main(int argc, char **argv) {
    Options o = {0};
    o.emit = EMIT_PTX;
    o.colour = -1;
    int rc = parse_args(&o, argc, argv);
    if (rc >= 0) return rc;
    bool to_file = o.output && strcmp(o.output, "-") != 0;
    if (to_file && strcmp(o.input, "-") != 0 && same_file(o.input, o.output))
        return usage_error("-o '%s' is the input file; choose another output", o.output);

    size_t len = 0;
    char *text = read_file(o.input, &len);
    if (!text) return EXIT_COMPILE_ERROR;

    const char *no_colour = getenv("NO_COLOR"), *term = getenv("TERM");
    bool colour = o.colour == 1 || (o.colour == -1 && isatty(STDERR_FILENO) && !(no_colour && no_colour[0]) &&
                                    !(term && strcmp(term, "dumb") == 0));
    /* Build the whole output in memory first: nothing is written on failure. */
    char *out_buf = NULL;
    size_t out_len = 0;
    FILE *out = open_memstream(&out_buf, &out_len);
    CompileRequest req = {
        .name = o.input, .text = text, .len = len, .defs = o.defs, .ndefs = o.ndefs,
        .diag = colour ? diag_print_colour_to_file : diag_print_to_file, .diag_user = stderr,
    };
    bool ok;
    if (o.emit == EMIT_TOKENS) {
        ok = dump_tokens(out, &req) == 0;
    } else {
        Compilation *c = compile_front(&req);
        ok = c && c->ok;
        if (ok && o.kernel) {
            bool found = false;
            for (int i = 0; i < c->module->kernels.len; i++)
                found |= strcmp(((KernelDef *)c->module->kernels.items[i])->name, o.kernel) == 0;
            if (!found) {
                fprintf(stderr, "%s: error: no kernel named '%s'\n", o.input, o.kernel);
                ok = false;
            }
        }
        if (ok && o.emit == EMIT_AST) ast_dump_module(out, c->module, o.kernel);
        if (ok && o.emit != EMIT_AST && o.emit != EMIT_BIR) ok = emit_backend(&o, c, out);
        if (ok && o.emit == EMIT_BIR && (ok = compile_lower(c))) {
            for (int i = 0; i < c->bir->nkernels; i++) {
                const BirFunction *f = c->bir->kernels[i];
                if (o.kernel && strcmp(f->name, o.kernel) != 0) continue;
                if (i) fputc('\n', out);
                bir_print(out, f);
            }
        }
        compilation_free(c);
    }
    fclose(out);
    free(text);

    if (ok) {
        if (to_file) ok = write_output(o.output, out_buf, out_len);
        else ok = fwrite(out_buf, 1, out_len, stdout) == out_len && fflush(stdout) == 0;
    }
    /* on failure an existing output stays exactly as it was: it may not be ours */
    free(out_buf);
    return ok ? 0 : EXIT_COMPILE_ERROR;
}
