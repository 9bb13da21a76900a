/* The blkc driver: exit codes (0 ok, 1 compile error, 2 usage), atomic -o,
 * no partial output, existing output kept on failure, -D, --kernel, --emit. Runs the real binary. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

static char workdir[512];

static void make_workdir(void) {
    snprintf(workdir, sizeof workdir, "/tmp/blkc-driver-XXXXXX");
    cr_assert(mkdtemp(workdir));
}

static void remove_workdir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(driver, .init = make_workdir, .fini = remove_workdir);

typedef struct {
    int status;
    char *out, *err;
} Run;

/* Runs `blkc ARGS` in the work directory, capturing stdout and stderr. */
static Run run_blkc(const char *args) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s > stdout.txt 2> stderr.txt", workdir, BLKC_PATH,
             args);
    int rc = system(cmd);
    Run r = {.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128};
    char path[600];
    snprintf(path, sizeof path, "%s/stdout.txt", workdir);
    r.out = slurp(path);
    snprintf(path, sizeof path, "%s/stderr.txt", workdir);
    r.err = slurp(path);
    return r;
}

static int count_lines_with(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *eol = strchr(p, '\n'), *at = strstr(p, what);
        n += at && (!eol || at < eol);
    }
    return n;
}

static void free_run(Run *r) {
    free(r->out);
    free(r->err);
}

static void write_file(const char *name, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *name) {
    char path[600];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    return stat(path, &st) == 0;
}

/* No temporary file of an atomic write is left behind. */
static int count_temp_files(void) {
    DIR *d = opendir(workdir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static const char *good = "kernel k(x: *f32, const B: i32 = 64) {\n"
                          "    let a = load(x + arange(0, B));\n"
                          "}\n";
static const char *bad = "kernel k(x: *f32) {\n    let a = y;\n}\n";

Test(driver, version_and_help_exit_zero) {
    Run r = run_blkc("--version");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "blkc " BLKC_VERSION "\n"), "%s", r.out);
    /* the LLVM it was built with, the targets, and the build's identity (the runtime's cache keys on it) */
    cr_expect(strstr(r.out, "\nLLVM 19.") && strstr(r.out, "\ntargets: sm_80, sm_86, sm_89, sm_90, sm_90a\n"), "%s",
              r.out);
    const char *id = strstr(r.out, "\nbuild-id: ");
    cr_expect(id && strspn(id + 11, "0123456789abcdef") >= 16, "%s", r.out);
    free_run(&r);
    r = run_blkc("--help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "usage: blkc"));
    free_run(&r);
}

/* Colours on request (--color=always), never when stderr is a file (auto) or with --color=never;
 * the text between the escapes is the plain diagnostic's. */
Test(driver, diagnostics_are_coloured_on_request) {
    write_file("bad.blk", bad);
    Run r = run_blkc("bad.blk --color=always");
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect(strstr(r.err, "\033[1mbad.blk:2:13: \033[1;31merror:\033[0m \033[1muse of undeclared name 'y'\033[0m\n") &&
                  strstr(r.err, "\033[1;32m^\033[0m\n"), "%s", r.err);
    free_run(&r);
    const char *plain[] = {"bad.blk", "bad.blk --color=never", "bad.blk --color=auto"};
    for (int i = 0; i < 3; i++) {
        r = run_blkc(plain[i]);
        cr_expect_eq(r.status, 1);
        cr_expect(!strchr(r.err, '\033') && strstr(r.err, "bad.blk:2:13: error: use of undeclared name 'y'\n"), "%s: %s",
                  plain[i], r.err);
        free_run(&r);
    }
    r = run_blkc("bad.blk --color=sometimes");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--color takes auto, always or never, not 'sometimes'"), "%s", r.err);
    free_run(&r);
}

Test(driver, usage_errors_exit_two) {
    const char *cases[] = {"", "--frobnicate k.blk", "k.blk --emit=bogus", "k.blk -o",
                           "a.blk b.blk", "k.blk -D NOEQUALS", "k.blk -D A=1 -D A=2"};
    write_file("k.blk", good);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        Run r = run_blkc(cases[i]);
        cr_expect_eq(r.status, 2, "'%s' gave %d", cases[i], r.status);
        cr_expect(strstr(r.err, "blkc: error: "), "'%s': %s", cases[i], r.err);
        free_run(&r);
    }
}

Test(driver, emit_ast_prints_the_typed_ast) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk --emit=ast");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "kernel k"));
    cr_expect(strstr(r.out, "call load : [64] f32"), "%s", r.out);
    cr_expect_str_eq(r.err, "");
    free_run(&r);
}

Test(driver, compile_errors_exit_one_with_position_and_caret) {
    write_file("bad.blk", bad);
    Run r = run_blkc("bad.blk");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "bad.blk:2:13: error: use of undeclared name 'y'\n"
                            "    let a = y;\n"
                            "            ^\n");
    cr_expect_str_eq(r.out, "");
    free_run(&r);
}

Test(driver, missing_input_exits_one) {
    Run r = run_blkc("nope.blk");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "cannot read 'nope.blk'"));
    free_run(&r);
}

/* Only a regular file or standard input is a source: a FIFO with no writer
 * would block forever, /dev/zero never end; and at most 64 MiB. */
Test(driver, inputs_that_are_not_sources_are_refused_at_once, .timeout = 30) {
    char path[600];
    snprintf(path, sizeof path, "%s/f.blk", workdir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    const struct { const char *args, *err; } bad[] = {
        {"f.blk", "blkc: error: 'f.blk' is not a regular file (a FIFO); give a .blk file, or '-' for standard input"},
        {"/dev/zero", "blkc: error: '/dev/zero' is not a regular file (a device or socket)"},
        {".", "blkc: error: '.' is not a regular file (a directory)"},
        {"big.blk", "blkc: error: 'big.blk' is larger than 64 MiB: not a blk source"},
        {"- < big.blk", "blkc: error: '-' is larger than 64 MiB: not a blk source"},
    };
    snprintf(path, sizeof path, "%s/big.blk", workdir);
    FILE *big = fopen(path, "w");
    cr_assert(big);
    cr_assert_eq(ftruncate(fileno(big), (off_t)(65 << 20)), 0);
    fclose(big);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        Run r = run_blkc(bad[i].args);
        cr_expect_eq(r.status, 1, "%s: %d", bad[i].args, r.status);
        cr_expect(strstr(r.err, bad[i].err), "%s: %s", bad[i].args, r.err);
        free_run(&r);
    }
    write_file("k.blk", "kernel k(x: *f32) { store(x, 1.0); }\n");
    Run r = run_blkc("- --no-hints < k.blk");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ".entry k("), "standard input is still a source");
    free_run(&r);
}

Test(driver, output_file_is_written_whole) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk -o out.ast");
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "");
    Run s = run_blkc("k.blk -o -");
    char path[600];
    snprintf(path, sizeof path, "%s/out.ast", workdir);
    char *written = slurp(path);
    cr_assert(written);
    cr_expect_str_eq(written, s.out);
    cr_expect_eq(count_temp_files(), 0);
    free(written);
    free_run(&r);
    free_run(&s);
}

/* issue 15: blkc used to delete whatever -o named when a compile failed */
Test(driver, failed_compile_leaves_an_existing_output_as_it_was) {
    write_file("bad.blk", bad);
    write_file("notes.txt", "the user's notes\n");
    Run r = run_blkc("bad.blk -o notes.txt");
    cr_expect_eq(r.status, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/notes.txt", workdir);
    char *kept = slurp(path);
    cr_expect(kept && strcmp(kept, "the user's notes\n") == 0, "notes.txt changed: %s", kept ? kept : "(deleted)");
    free(kept);
    cr_expect_eq(count_temp_files(), 0);
    free_run(&r);
    r = run_blkc("missing.blk -o notes.txt");
    cr_expect_eq(r.status, 1);
    cr_expect(exists("notes.txt"), "a missing input deleted the output");
    free_run(&r);
    r = run_blkc("bad.blk -o new.ptx");
    cr_expect_not(exists("new.ptx"), "a failed compile created its output");
    free_run(&r);
}

Test(driver, output_onto_the_input_or_a_device) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk -o k.blk");
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "is the input file"), "%s", r.err);
    char path[600];
    snprintf(path, sizeof path, "%s/k.blk", workdir);
    char *src = slurp(path);
    cr_expect(src && strcmp(src, good) == 0, "the source was replaced");
    free(src);
    free_run(&r);
    /* a FIFO (like /dev/null or a pipe) is written to, never replaced by a regular file */
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkfifo pipe && { timeout 20 cat pipe > piped.ast & "
             "'%s' k.blk --emit=ast -o pipe; status=$?; wait; exit $status; }",
             workdir, BLKC_PATH);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "blkc -o pipe failed: %d", rc);
    struct stat st;
    snprintf(path, sizeof path, "%s/pipe", workdir);
    cr_expect(stat(path, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    snprintf(path, sizeof path, "%s/piped.ast", workdir);
    char *piped = slurp(path);
    cr_expect(piped && strstr(piped, "kernel"), "nothing came through the FIFO: %s", piped ? piped : "(none)");
    free(piped);
    /* a new output gets the mode the umask gives new files, not 0600 */
    r = run_blkc("k.blk --emit=ast -o mode.ast");
    snprintf(path, sizeof path, "%s/mode.ast", workdir);
    mode_t mask = umask(0);
    umask(mask);
    cr_expect(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask), "mode %o", (unsigned)(st.st_mode & 0777));
    free_run(&r);
}

Test(driver, unwritable_output_is_an_error) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk -o no/such/dir/out.ast");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "cannot create"), "%s", r.err);
    free_run(&r);
}

Test(driver, defines_set_consts_and_unknown_ones_fail) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk --emit=bir -D B=256");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "[256] f32"));
    free_run(&r);
    r = run_blkc("k.blk --emit=bir -DB=128");
    cr_expect(strstr(r.out, "[128] f32"));
    free_run(&r);
    r = run_blkc("k.blk -D C=1");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "k.blk: error: -D C: no kernel in this module has a const parameter"),
              "%s", r.err);
    free_run(&r);
    r = run_blkc("k.blk -D B=many");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "'many' is not a valid i32 value"), "%s", r.err);
    free_run(&r);
    /* -D values follow the literal rules: no octal, hex and a sign allowed */
    r = run_blkc("k.blk -D B=0100");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "'0100' is not a valid i32 value"), "%s", r.err);
    free_run(&r);
    write_file("empty.blk", "// nothing to compile\n");
    r = run_blkc("empty.blk -o empty.ptx");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "empty.blk: error: no kernel in this module"), "%s", r.err);
    cr_expect_not(exists("empty.ptx"));
    free_run(&r);
    r = run_blkc("k.blk --emit=bir -D B=0x40");
    cr_expect(strstr(r.out, "[64] f32"), "%s", r.err);
    free_run(&r);
}

Test(driver, kernel_selects_one_and_unknown_fails) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/layernorm.blk --emit=ast --kernel layer_norm_bwd_dwdb", BLK_EXAMPLES_DIR);
    Run r = run_blkc(cmd);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "kernel layer_norm_bwd_dwdb"));
    cr_expect_not(strstr(r.out, "kernel layer_norm_fwd"));
    free_run(&r);
    snprintf(cmd, sizeof cmd, "%s/layernorm.blk --kernel nope", BLK_EXAMPLES_DIR);
    r = run_blkc(cmd);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "no kernel named 'nope'"));
    free_run(&r);
}

Test(driver, emit_bir_prints_ops_with_types_and_lines) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/layernorm.blk --emit=bir --kernel layer_norm_bwd_dwdb", BLK_EXAMPLES_DIR);
    Run r = run_blkc(cmd);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "kernel @layer_norm_bwd_dwdb("), "%s", r.out);
    cr_expect_not(strstr(r.out, "kernel @layer_norm_fwd"));
    /* the source line as a comment, then its ops with types and line numbers */
    cr_expect(strstr(r.out, "// 117: let mask = (rows[:, None] < M) & (cols[None, :] < N);"), "%s", r.out);
    cr_expect(strstr(r.out, "= expand_dims %rows, axis 1 : [32, 1] i32"), "%s", r.out);
    cr_expect(strstr(r.out, "; line 117"), "%s", r.out);
    free_run(&r);
}

Test(driver, ptx_is_the_default_and_backend_options_apply) {
    write_file("k.blk", good);
    Run r = run_blkc("k.blk -o k.ptx");
    cr_expect_eq(r.status, 0, "%s", r.err);
    char path[600];
    snprintf(path, sizeof path, "%s/k.ptx", workdir);
    char *ptx = slurp(path);
    cr_assert_not_null(ptx);
    cr_expect(strstr(ptx, ".target sm_90"), "%s", ptx);
    cr_expect(strstr(ptx, ".visible .entry k("), "%s", ptx);
    free(ptx);
    free_run(&r);
    write_file("s.blk", "kernel s(x: *f32) {\n    store(x + arange(0, 64), 1.0);\n}\n");
    r = run_blkc("s.blk --arch sm_80 --num-warps 2 --annotate");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ".target sm_80"), "%s", r.out);
    cr_expect(strstr(r.out, ".maxntid 64, 1, 1"), "%s", r.out);
    cr_expect(strstr(r.out, "\t// 2: "), "annotated source lines:\n%s", r.out);
    free_run(&r);
    /* LLVM's markers around each inline PTX instruction are left out of the annotated PTX, and
     * only they: the same instructions as the plain build (here matmul's mbarriers and wgmma) */
    char mm[1024];
    snprintf(mm, sizeof mm, "%s/matmul.blk --arch sm_90a --no-hints --assume K%%16,N%%16,stride_am%%16,stride_bk%%16,"
             "stride_cm%%16,stride_ak=1,stride_bn=1,stride_cn=1", BLK_EXAMPLES_DIR);
    Run plain = run_blkc(mm);
    strncat(mm, " --annotate", sizeof mm - strlen(mm) - 1);
    r = run_blkc(mm);
    cr_expect(plain.status == 0 && r.status == 0, "%s%s", plain.err, r.err);
    cr_expect(strstr(plain.out, "// begin inline asm") && !strstr(r.out, "inline asm"), "%.2000s", r.out);
    cr_expect_eq(count_lines_with(plain.out, "wgmma.mma_async"), count_lines_with(r.out, "wgmma.mma_async"));
    cr_expect_eq(count_lines_with(plain.out, "mbarrier."), count_lines_with(r.out, "mbarrier."));
    free_run(&plain);
    free_run(&r);
    r = run_blkc("s.blk --stats -o s.ptx");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "s: ") && strstr(r.err, " registers, 0 bytes spill stores"), "%s", r.err);
    cr_expect(strstr(r.err, "programs an SM (limit: "), "%s", r.err);
    cr_expect(!strstr(r.err, "ptxas: "), "%s", r.err);
    free_run(&r);
    /* without ptxas the PTX is still written, and --stats says why it says nothing more */
    char none[2048];
    snprintf(none, sizeof none, "cd '%s' && BLKC_PTXAS= '%s' s.blk --stats -o s2.ptx 2> stderr.txt", workdir, BLKC_PATH);
    cr_expect_eq(system(none), 0);
    snprintf(none, sizeof none, "%s/stderr.txt", workdir);
    char *said = slurp(none);
    cr_expect(said && strstr(said, "blkc: warning: --stats needs ptxas") && !strstr(said, " registers, "), "%s", said);
    free(said);
    snprintf(none, sizeof none, "%s/s2.ptx", workdir);
    char *written = slurp(none);
    cr_expect(written && strstr(written, ".visible .entry s("), "the PTX was not written without ptxas");
    free(written);
    /* ptxas's numbered advisories (here from a stand-in ptxas ahead on the
     * PATH that adds one) reach --stats, under the kernel they name */
    char bin[600], cmd[2048];
    snprintf(bin, sizeof bin, "%s/bin", workdir);
    mkdir(bin, 0755);
    write_file("bin/ptxas", "#!/bin/sh\n"
                            "echo \"ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions "
                            "are serialized in the function 's'\"\n"
                            "PATH=${PATH#*:} exec ptxas \"$@\"\n");
    snprintf(cmd, sizeof cmd, "chmod +x '%s/ptxas' && cd '%s' && PATH='%s':\"$PATH\":/usr/local/cuda/bin '%s' s.blk --stats "
             "-o s.ptx 2> stderr.txt", bin, workdir, bin, BLKC_PATH);
    cr_expect_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/stderr.txt", workdir);
    char *err = slurp(cmd);
    cr_assert_not_null(err);
    char *summary = strstr(err, "s: "), *advice = strstr(err, "  ptxas: (C7514) Potential Performance Loss");
    cr_expect(summary && advice && advice > summary, "%s", err);
    free(err);
    r = run_blkc("k.blk --emit=llvm");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "target triple = \"nvptx64-nvidia-cuda\""), "%s", r.out);
    free_run(&r);
    r = run_blkc("k.blk --num-stages 4 --num-stages=2");
    cr_expect_eq(r.status, 0, "%s", r.err);
    free_run(&r);
    /* rings over the arch's shared memory (8 stages of 48 KiB): an error at the kernel, no output */
    snprintf(path, sizeof path, "%s/matmul.blk", BLK_EXAMPLES_DIR);
    char cmdline[1024];
    snprintf(cmdline, sizeof cmdline, "'%s' -D BLOCK_N=256 -D BLOCK_K=64 --num-warps 8 --num-stages 8 --assume "
             "M%%16,N%%16,K%%16,stride_ak=1,stride_bn=1,stride_am%%16,stride_bk%%16 -o big.ptx", path);
    r = run_blkc(cmdline);
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect(strstr(r.err, "error: the pipelined loops of 'matmul' need 393216 bytes of shared memory"), "%s", r.err);
    snprintf(path, sizeof path, "%s/big.ptx", workdir);
    cr_expect(access(path, F_OK) != 0, "output written despite the error");
    free_run(&r);
    r = run_blkc("k.blk --min-blocks-per-sm 2 -o -");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ".minnctapersm 2"), "%s", r.out);
    free_run(&r);
    const char *bad[] = {"k.blk --arch sm_70", "k.blk --num-warps 3", "k.blk --num-warps 64", "k.blk --num-stages 1",
                         "k.blk --num-stages 9", "k.blk --min-blocks-per-sm 0", "k.blk --min-blocks-per-sm=33"};
    for (int i = 0; i < 7; i++) {
        r = run_blkc(bad[i]);
        cr_expect_eq(r.status, 2, "%s: %d", bad[i], r.status);
        free_run(&r);
    }
}

/* --assume states launch facts for the CLI's PTX; --remarks names the facts
 * an access lacks. The remark must name exactly the facts that widen it:
 * stating them must leave no remark and give 16-byte accesses. */
Test(driver, assume_facts_and_vectorization_remarks) {
    write_file("v.blk", "kernel v(X: *f16, Y: *f16, N: i32, S: i32, const B: i32 = 1024) {\n"
                        "    let o = program_id(0) * S + arange(0, B);\n"
                        "    store(Y + o, load(X + o, o < N), o < N);\n"
                        "}\n");
    Run r = run_blkc("v.blk -R");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "v.blk:3:18: remark: load not vectorized: X not known to be 16-byte aligned, N not "
                            "known to be a multiple of 8, S not known to be a multiple of 8 (--assume "
                            "X%16,N%8,S%8 allows 16-byte accesses)"), "%s", r.err);
    cr_expect(strstr(r.err, "v.blk:3:5: remark: store not vectorized: Y not known to be 16-byte aligned"), "%s",
              r.err);
    cr_expect(strstr(r.err, "    store(Y + o, load(X + o, o < N), o < N);\n                 ^"), "caret:\n%s", r.err);
    cr_expect(!strstr(r.out, "ld.global.v4"), "%s", r.out);
    free_run(&r);
    r = run_blkc("v.blk --assume X%16,Y%16 --assume=N%8,S%16 --remarks");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_empty(r.err);
    /* the launch contract says what the code takes for granted, per parameter */
    cr_expect(strstr(r.out, "//      0 X            *f16   .u64  not null, aligned to 16 bytes (compiled assuming it)\n"),
              "%s", r.out);
    cr_expect(strstr(r.out, "//      2 N            i32    .u32  a multiple of 8 (compiled assuming it)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "//      3 S            i32    .u32  a multiple of 16 (compiled assuming it)\n"), "%s", r.out);
    cr_expect(strstr(r.out, "ld.global.v4.b32") && strstr(r.out, "st.global.v4.b32"), "%s", r.out);
    free_run(&r);
    r = run_blkc("v.blk --assume X%16,Y%16,N%4,S%4 -R"); /* half enough: 8-byte accesses */
    cr_expect(strstr(r.err, "remark: load in 8-byte accesses: N not known to be a multiple of 8, S not known to "
                            "be a multiple of 8 (--assume N%8,S%8 allows 16-byte accesses)"), "%s", r.err);
    free_run(&r);

    /* a unit stride, and a block spread too thin to vectorize */
    write_file("w.blk", "kernel w(X: *f32 @align(16), S: i32) {\n"
                        "    let a = load(X + arange(0, 256) * S);\n"
                        "    store(X + arange(0, 128), 1.0);\n"
                        "}\n");
    r = run_blkc("w.blk -R --num-warps 4 -o w.ptx");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "w.blk:2:13: remark: load not vectorized: S not known to be 1 (--assume S=1 allows "
                            "8-byte accesses)"), "%s", r.err);
    cr_expect(strstr(r.err, "w.blk:3:5: remark: store not vectorized: each thread holds 1 consecutive element of "
                            "the block (4 warps spread its 128 elements)"), "%s", r.err);
    free_run(&r);

    struct { const char *args; int status; const char *err; } bad[] = {
        {"v.blk --assume Q%16", 1, "--assume Q%16: no kernel compiled has a runtime parameter 'Q'"},
        {"v.blk --assume B%16", 1, "no kernel compiled has a runtime parameter 'B'"}, /* a const */
        {"v.blk --assume X=1", 1, "'X' of kernel 'v' is a pointer"},
        {"v.blk --assume N%3", 2, "a power of two K"},
        {"v.blk --assume N%16,N%8", 2, "names 'N' twice"},
        {"v.blk --assume N=2", 2, "only V = 1"},
        {"v.blk --assume N", 2, "expects NAME%K or NAME=1"},
        {"v.blk --assume %16", 2, "expects NAME%K or NAME=1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = run_blkc(bad[i].args);
        cr_expect_eq(r.status, bad[i].status, "%s: %d", bad[i].args, r.status);
        cr_expect(strstr(r.err, bad[i].err), "%s: %s", bad[i].args, r.err);
        free_run(&r);
    }
    write_file("f.blk", "kernel f(X: *f32, eps: f32) {\n    store(X + arange(0, 64), eps);\n}\n");
    r = run_blkc("f.blk --assume eps%16");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "f.blk:1:8: error: --assume eps%16: parameter 'eps' of kernel 'f' is f32"), "%s", r.err);
    free_run(&r);
}

Test(driver, emit_tokens) {
    write_file("k.blk", "let x = 1;");
    Run r = run_blkc("k.blk --emit=tokens");
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "1:1 'let' 'let'\n1:5 identifier 'x'\n1:7 '=' '='\n"
                            "1:9 integer literal '1'\n1:10 ';' ';'\n1:11 end of file\n");
    free_run(&r);
}

/* Compile time stays bounded at every warp count: a [256, 128] f32 and a
 * [256, 256] f16 transpose (every element through shared memory, 512 to
 * 2,048 shared accesses a thread in one basic block) took 48 s with 4 warps
 * and past 300 s with 1 in LLVM's instruction selection before the DAG
 * combiner's quadratic parts were bounded (compiler/nvptx/emit.c); now a
 * few seconds each (bench/transpose_compile_time.sh). The limit here only
 * catches a return to minutes. */
Test(driver, a_large_transpose_compiles_in_bounded_time_at_every_warp_count, .timeout = 400) {
    write_file("t32.blk", "kernel t(x: *f32, y: *f32) {\n"
                          "    let r = arange(0, 256);\n"
                          "    let c = arange(0, 128);\n"
                          "    let v = load(x + r[:, None] * 128 + c[None, :]);\n"
                          "    store(y + c[:, None] * 256 + r[None, :], trans(v));\n"
                          "}\n");
    write_file("t16.blk", "kernel t(x: *f16, y: *f16) {\n"
                          "    let r = arange(0, 256);\n"
                          "    let c = arange(0, 256);\n"
                          "    let v = load(x + r[:, None] * 256 + c[None, :]);\n"
                          "    store(y + c[:, None] * 256 + r[None, :], trans(v));\n"
                          "}\n");
    const char *runs[] = {"t32.blk --num-warps 4", "t32.blk --num-warps 2", "t32.blk --num-warps 1",
                          "t16.blk --num-warps 2", "t16.blk --num-warps 1"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "cd '%s' && timeout 60 '%s' %s --no-hints -o out.ptx", workdir, BLKC_PATH, runs[i]);
        int rc = system(cmd);
        cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "blkc %s: %s", runs[i],
                  WIFEXITED(rc) && WEXITSTATUS(rc) == 124 ? "still compiling after 60 s" : "failed");
    }
}

/* --explore: one self-contained page; every PTX instruction tied to a source
 * line (or the prologue, line 0), the source and plan lines too. */
Test(driver, explore_writes_one_page_that_ties_every_instruction_to_a_line) {
    write_file("r.blk", "kernel k(x: *f32, y: *f32, n: i32) {\n"
                        "    let i = arange(0, 128);\n"
                        "    let v = load(x + i, i < n);\n"
                        "    store(y + i, v * 2.0 + max(v, axis = 0), i < n);\n"
                        "}\n");
    Run r = run_blkc("r.blk --explore r.html --no-hints");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char path[600];
    snprintf(path, sizeof path, "%s/r.html", workdir);
    char *page = slurp(path);
    cr_assert(page);
    cr_expect(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    cr_expect(strstr(page, "launch contract"), "the contract heads the page");
    cr_expect(strstr(page, " an SM"), "ptxas's resources, or why they are missing");
    cr_expect(!strstr(page, "src=\"http") && !strstr(page, "href=\"http"), "nothing from the network");
    /* the source's lines, the plan's entries of line 3 and 4, instructions of each */
    cr_expect(strstr(page, "<span class=\"s\" data-l=\"3\""), "source line 3");
    cr_expect(strstr(page, "<span class=\"p\" data-l=\"4\""), "a plan entry of line 4");
    cr_expect(strstr(page, "<span class=\"i mem\" data-l=\"3\""), "line 3's load");
    cr_expect(strstr(page, "<span class=\"i mem\" data-l=\"4\""), "line 4's store");
    cr_expect(strstr(page, "<span class=\"i warp\" data-l=\"4\""), "line 4's max: a warp shuffle");
    int instructions = 0, unattributed = 0;
    for (const char *p = page; (p = strstr(p, "<span class=\"i ")); p++) {
        instructions++;
        const char *close = strchr(p, '>');
        const char *attr = strstr(p, "data-l=\"");
        unattributed += !attr || attr > close;
    }
    cr_expect_gt(instructions, 20);
    cr_expect_eq(unattributed, 0);
    free(page);
    free_run(&r);
    /* --emit=explore to stdout is the same page; a failed compile writes none */
    r = run_blkc("r.blk --emit=explore --no-hints");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "<span class=\"i mem\" data-l=\"3\""));
    free_run(&r);
    write_file("bad.blk", bad);
    r = run_blkc("bad.blk --explore bad.html");
    cr_expect_eq(r.status, 1);
    cr_expect(!exists("bad.html"));
    free_run(&r);
    /* two builds compared: B is A's options and then the words (a -D replaces A's) */
    write_file("b.blk", "kernel k(x: *f32, y: *f32, const B: i32 = 64) {\n"
                        "    let i = arange(0, B);\n"
                        "    store(y + i, load(x + i) * 2.0);\n"
                        "}\n");
    r = run_blkc("b.blk -D B=64 --no-hints --explore d.html --explore-diff '-D B=256 --num-warps 2'");
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(path, sizeof path, "%s/d.html", workdir);
    page = slurp(path);
    cr_assert(page);
    cr_expect(strstr(page, "B: A and -D B=256 --num-warps 2") && strstr(page, "plan A") && strstr(page, "plan B"));
    cr_expect(strstr(page, "B = 64") && strstr(page, "B = 256"), "each plan has its own const");
    cr_expect(strstr(page, "class=\"p changed\""), "the plans' differing lines are marked");
    cr_expect(strstr(page, "<th>PTX A</th><th>PTX B</th>"), "the instruction counts, A against B");
    free(page);
    free_run(&r);
    r = run_blkc("b.blk --explore d2.html --explore-diff '--no-such-option'");
    cr_expect_neq(r.status, 0);
    cr_expect(strstr(r.err, "unknown option '--no-such-option'"), "%s", r.err);
    cr_expect(!exists("d2.html"));
    free_run(&r);
}

/* r.blk's page for sm_90a, written to `name` in the work folder (malloc'ed). */
static char *explore_page_of_r(const char *name) {
    char args[200], path[700];
    snprintf(args, sizeof args, "r.blk --arch sm_90a --no-hints --explore %s", name);
    Run r = run_blkc(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    free_run(&r);
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    char *page = slurp(path);
    cr_assert(page);
    return page;
}

/* The page's SASS column and resources, from stand-ins for ptxas and nvdisasm
 * (then cuobjdump) so that what they print is known: every SASS instruction
 * tied to the line nvdisasm names (code before a kernel's first name: its
 * prologue), counted by kind per line; ptxas's registers and spills as the
 * chart; the plan's notes on each line in the table. */
Test(driver, explore_shows_sass_by_line_and_the_resources) {
    write_file("r.blk", "kernel k(x: *f32, y: *f32, n: i32) {\n"
                        "    let i = arange(0, 128);\n"
                        "    let v = load(x + i, i < n);\n"
                        "    store(y + i, v * 2.0 + max(v, axis = 0), i < n);\n"
                        "}\n");
    char bin[600], path[700];
    snprintf(bin, sizeof bin, "%s/fakebin", workdir);
    mkdir(bin, 0755);
    write_file("fakebin/ptxas", "#!/bin/sh\n"
                                "out=/dev/null\n"
                                "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                                "[ \"$out\" = /dev/null ] || echo cubin > \"$out\"\n"
                                "echo \"ptxas info    : Compiling entry function 'k' for 'sm_90a'\"\n"
                                "echo \"ptxas info    : Function properties for k\"\n"
                                "echo \"ptxas info    : Function properties for no_error_here\"\n"
                                "echo \"    8 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\"\n"
                                "echo \"ptxas info    : Used 200 registers, used 0 barriers\"\n");
    write_file("fakebin/nvdisasm", "#!/bin/sh\n"
                                   "[ -f \"$3\" ] || exit 1\n"
                                   "cat <<'X'\n"
                                   "//--------------------- .text.k --------------------------\n"
                                   "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                                   "\t//## File \"r.blk\", line 3\n"
                                   "        /*0010*/              @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;\n"
                                   "\t//## File \"r.blk\", line 4\n"
                                   "        /*0020*/                   SHFL.BFLY PT, R5, R4, 0x10, 0x1f ;\n"
                                   "        /*0030*/                   STG.E desc[UR4][R2.64], R5 ;\n"
                                   "        /*0040*/                   EXIT ;\n"
                                   ".L_x_0:\n"
                                   "//--------------------- .text.other --------------------------\n"
                                   "        /*0000*/                   BRA 0x0 ;\n"
                                   "X\n");
    write_file("fakebin/cuobjdump", "#!/bin/sh\n"
                                    "cat <<'X'\n"
                                    "\t\tFunction : k\n"
                                    "        /*0000*/                   LDC R1, c[0x0][0x28] ;    /* 0x00000a00ff017b82 */\n"
                                    "                                                             /* 0x000fe20000000800 */\n"
                                    "X\n");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "chmod +x '%s/ptxas' '%s/nvdisasm' '%s/cuobjdump'", bin, bin, bin);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/ptxas", bin), setenv("BLKC_PTXAS", path, 1);
    snprintf(path, sizeof path, "%s/nvdisasm", bin), setenv("BLKC_NVDISASM", path, 1);
    snprintf(path, sizeof path, "%s/cuobjdump", bin), setenv("BLKC_CUOBJDUMP", path, 1);
    char *page = explore_page_of_r("r.html");
    cr_expect(strstr(page, "<h2>SASS (nvdisasm)</h2>"), "the SASS column");
    cr_expect(strstr(page, "<span class=\"x mov\" data-l=\"0\">/*0000*/  LDC R1, c[0x0][0x28] ;\n</span>"),
              "before any line: the prologue, the padding after the address left out");
    cr_expect(strstr(page, "<span class=\"x mem\" data-l=\"3\" style=\"--h:201\">/*0010*/  @!P0 LDG.E.128"),
              "a predicated load of line 3");
    cr_expect(strstr(page, "<span class=\"x warp\" data-l=\"4\""), "line 4's shuffle");
    cr_expect(strstr(page, "<span class=\"x ctl\" data-l=\"4\" style=\"--h:268\">/*0040*/  EXIT ;"));
    cr_expect(strstr(page, "<span class=\"x ctl\" data-l=\"0\">/*0000*/  BRA 0x0 ;"),
              "a second kernel's code starts in no line");
    cr_expect(strstr(page, "<span class=\"d\" data-l=\"0\">.L_x_0:"), "a label is no instruction");
    cr_expect(!strstr(page, "//## File"), "nvdisasm's line comments are the colour, not lines");
    /* line 4: 3 SASS instructions (shuffle, store, exit) in the table, the store one of them */
    const char *row = strstr(page, "<tr data-l=\"4\"");
    cr_assert(row, "line 4's row");
    const char *eor = strstr(row, "</tr>");
    /* its cells: the line, PTX's total, SASS's total */
    const char *at = strstr(row, "><td>4</td><td>");
    at = at ? strstr(at + 15, "</td><td>") : NULL;
    cr_expect(at && at < eor && strncmp(at, "</td><td>3</td>", 15) == 0, "line 4: 3 SASS instructions: %.300s", row);
    at = strstr(row, "<td class=\"warp\">");
    const char *cell_end = at ? strstr(at, "</td>") : NULL;
    cr_expect(at && at < eor && cell_end - at > 4 && strncmp(cell_end - 4, " / 1", 4) == 0,
              "one SASS shuffle (PTX / SASS): %.400s", row);
    /* the plan's notes: line 3's load, its width and why, in line 3's row */
    row = strstr(page, "<tr data-l=\"3\"");
    cr_assert(row);
    at = strstr(row, "<td class=\"n\" title=\"load line 3 [128] f32: ");
    cr_expect(at && at < strstr(row, "</tr>"), "%.600s", row);
    /* ptxas's registers and spills: 200 registers a thread (6400 a warp) leave room for 10 programs of 1 warp */
    cr_expect(strstr(page, "k: 10 programs an SM on sm_90a (limit: registers)"), "the chart's head");
    cr_expect(strstr(page, "<tr class=\"lim\"><td>registers</td>"), "the limit marked");
    cr_expect(strstr(page, "200 registers, <span class=\"spill\">16 bytes spilled, 12 loaded back</span>; 8 bytes "
                           "stack"));
    free(page);
    /* without nvdisasm: cuobjdump's SASS, tied to no line, its encodings left out */
    setenv("BLKC_NVDISASM", "", 1);
    page = explore_page_of_r("r2.html");
    cr_expect(strstr(page, "<h2>SASS (cuobjdump)</h2>"));
    cr_expect(!strstr(page, "<th>SASS</th>"), "no lines, no SASS counts by line in the table");
    cr_expect(strstr(page, "<span class=\"x mov\" data-l=\"0\">/*0000*/  LDC R1, c[0x0][0x28] ;\n</span>"));
    cr_expect(!strstr(page, "0x000fe2"), "the encodings are left out");
    free(page);
    /* neither: no SASS column, and the page says where it would come from */
    setenv("BLKC_CUOBJDUMP", "", 1);
    page = explore_page_of_r("r3.html");
    cr_expect(!strstr(page, "<h2>SASS") && strstr(page, "SASS: this page shows it where ptxas and nvdisasm"));
    free(page);
    /* ptxas failing: the page says so, with what it said, and has no chart */
    write_file("fakebin/ptxas", "#!/bin/sh\necho \"ptxas fatal   : something went wrong\"\nexit 1\n");
    page = explore_page_of_r("r4.html");
    cr_expect(strstr(page, "ptxas failed on this PTX, so registers, spills and SASS are left out:\n"
                           "ptxas fatal   : something went wrong"), "%.3000s", page);
    cr_expect(!strstr(page, "programs an SM on"), "no chart");
    free(page);
}

/* The largest example's page stays a page: attention backward on sm_90a (about 0.6 MB and
 * 6,000 lines when this was written; a bound, so that a change that bloats it is seen). */
Test(driver, explore_page_of_the_largest_example_stays_readable) {
    char cmd[700], path[600];
    snprintf(cmd, sizeof cmd, "%s/attention_bwd.blk --arch sm_90a --no-hints --explore ab.html", BLK_EXAMPLES_DIR);
    Run r = run_blkc(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(path, sizeof path, "%s/ab.html", workdir);
    char *page = slurp(path);
    cr_assert(page);
    size_t bytes = strlen(page);
    int lines = count_lines_with(page, "");
    cr_expect_lt(bytes, (size_t)2 << 20, "%zu bytes", bytes);
    cr_expect_lt(lines, 30000, "%d lines", lines);
    cr_expect(strstr(page, "<span class=\"i tc\" data-l=\""), "its wgmmas, tied to their lines");
    free(page);
    free_run(&r);
}
