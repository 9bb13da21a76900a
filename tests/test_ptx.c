/* test_ptx.c: the NVPTX backend. Every example, at several -D
 * configurations, compiles for sm_80, sm_90 and sm_90a and ptxas assembles it with
 * no error or warning; aligned block accesses are vectorized; reductions
 * use warp shuffles; the PTX carries source lines; layouts cover shapes. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <unistd.h>

#include "nvptx/gen.h" /* white-box: the layouts */
#include "dot_sources.h"
#include "support.h"

/* The backend's output for a source text with these options; fails the
 * test on errors. The caller frees it (nvptx_output_free). */
static NvptxOutput output_of(const char *src, const char *const *defs, NvptxOptions opt) {
    Captured cap = {0};
    Compilation *c = compile_to_bir("t.blk", src, defs, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    NvptxOutput out;
    cr_assert(compile_ptx(c, &opt, &out), "%s", cap.text);
    compilation_free(c);
    return out;
}

/* PTX for a source text (all kernels) under options opt; fails the test on errors. */
static char *ptx_with(const char *src, const char *const *defs, NvptxOptions opt) {
    NvptxOutput out = output_of(src, defs, opt);
    char *text = out.text; /* the caller frees it */
    out.text = NULL;
    nvptx_output_free(&out);
    return text;
}

static char *ptx_of(const char *src, const char *const *defs, const char *arch, int num_warps) {
    return ptx_with(src, defs, (NvptxOptions){.arch = arch, .num_warps = num_warps});
}

/* The PTX of one kernel of c, with launch facts div (NULL: none); the caller frees it. */
static char *kernel_ptx_with_facts(Compilation *c, const char *kernel, int num_warps, const int64_t *div) {
    NvptxOptions opt = {.arch = "sm_90", .num_warps = num_warps, .only_kernel = kernel, .param_div = div};
    NvptxOutput out;
    cr_assert(compile_ptx(c, &opt, &out));
    char *text = out.text;
    out.text = NULL;
    nvptx_output_free(&out);
    return text;
}

/* Runs ptxas on the PTX; returns its exit status, its output in out. */
static int ptxas(const char *ptx, const char *arch, char *out, size_t size) {
    char path[] = "/tmp/blk_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t len = strlen(ptx);
    cr_assert_eq(write(fd, ptx, len), (ssize_t)len);
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -arch=%s -o /dev/null %s 2>&1", BLK_PTXAS, arch, path);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    int status = pclose(p);
    unlink(path);
    return status;
}

typedef struct {
    const char *file;
    const char *defs[8];
} Config;

static const Config configs[] = {
    {"add.blk", {NULL}},
    {"add.blk", {"T=f16", "BLOCK=256", NULL}},
    {"add.blk", {"T=bf16", "BLOCK=4096", NULL}},
    {"softmax.blk", {NULL}},
    {"softmax.blk", {"T=f16", "BLOCK=4096", NULL}},
    {"softmax.blk", {"BLOCK=16384", NULL}},
    {"dropout.blk", {NULL}},
    {"dropout.blk", {"T=f16", "BLOCK=512", NULL}},
    {"activations.blk", {NULL}},
    {"softmax_online.blk", {NULL}},
    {"softmax_online.blk", {"T=bf16", "BLOCK=4096", NULL}},
    {"rmsnorm.blk", {NULL}},
    {"groupnorm.blk", {"T=bf16", NULL}},
    {"cross_entropy.blk", {"T=f16", NULL}},
    {"quantize.blk", {NULL}},
    {"quantize.blk", {"T=bf16", "BLOCK=256", NULL}},
    {"cumsum.blk", {NULL}},
    {"cumsum.blk", {"T=f16", "BLOCK=4096", NULL}},
    {"histogram.blk", {NULL}},
    {"histogram.blk", {"NBINS=2048", "BLOCK=1024", NULL}},
    {"topk_sampling.blk", {"K=8", "BLOCK=1024", NULL}},
    {"activations.blk", {"T=bf16", "APPROX_TANH=true", "BLOCK=512", NULL}},
    {"layernorm.blk", {NULL}},
    {"layernorm.blk", {"T=f32", "BLOCK_SIZE=4096", "BLOCK_SIZE_N=2048", "BLOCK_SIZE_M=8", NULL}},
    {"layernorm.blk", {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", NULL}},
    {"matmul.blk", {NULL}},
    {"matmul.blk", {"T=bf16", "BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=16", "GROUP_M=1", NULL}},
    {"attention.blk", {NULL}},
    {"attention.blk", {"CAUSAL=true", "HEAD_DIM=128", "BLOCK_M=64", "BLOCK_N=32", "T=bf16", NULL}},
    {"attention_bwd.blk", {NULL}},
    {"attention_bwd.blk", {"CAUSAL=true", "HEAD_DIM=128", "BLOCK_M=32", "BLOCK_N=64", "T=bf16", NULL}},
    {"attention_bwd.blk", {"GROUP=4", "HEAD_DIM=128", NULL}},
    {"attention_bwd.blk", {"HEAD_DIM=96", "BLOCK_D=128", "CAUSAL=true", NULL}},
    {"attention.blk", {"CAUSAL=true", "WINDOW=100", "GROUP=2", NULL}},
    {"attention.blk", {"HEAD_DIM=96", "BLOCK_D=128", "T=bf16", NULL}},
    {"attention_varlen.blk", {NULL}},
    {"attention_varlen.blk", {"CAUSAL=true", "HEAD_DIM=128", "GROUP=2", "T=bf16", NULL}},
    {"attention_decode.blk", {NULL}},
    {"attention_decode.blk", {"T=bf16", "HEAD_DIM=64", "GROUP=4", "BLOCK_N=32", "SPLIT=128", NULL}},
    {"matmul_fp8.blk", {NULL}},
    {"matmul_fp8.blk", {"TA=f8e5m2", "T=f16", "BLOCK_M=64", "BLOCK_N=64", "BLOCK_K=32", NULL}},
    {"matmul_int8.blk", {NULL}},
    {"matmul_int8.blk", {"TA=u8", "BLOCK_M=64", "BLOCK_N=32", "BLOCK_K=64", NULL}},
    {"matmul_fp8_blockwise.blk", {NULL}},
    {"matmul_fp8_blockwise.blk", {"TB=f8e5m2", "T=f32", "BLOCK_M=64", "BLOCK_N=64", NULL}},
};


/* Loops whose loads are copied by cp.async (16-byte accesses need launch
 * facts, which the configurations above have not): a matmul, one with a
 * column-major B, the MoE kernel with gathered rows. The copies' zero-fill
 * form depends on the PTX ISA (ignore-src from 7.5; sm_80's PTX is 7.0), so
 * each arch's PTX must assemble. */
Test(ptx, cp_async_loops_assemble_for_every_arch, .timeout = 200) {
    static const NvptxAssume row_major[] = {{"stride_ak", NVPTX_PARAM_ONE}, {"stride_bn", NVPTX_PARAM_ONE},
                                            {"stride_cn", NVPTX_PARAM_ONE}, {"K", 16}, {"N", 16},
                                            {"stride_am", 16}, {"stride_bk", 16}, {"stride_cm", 16}};
    static const NvptxAssume b_trans[] = {{"stride_ak", NVPTX_PARAM_ONE}, {"stride_bk", NVPTX_PARAM_ONE},
                                          {"stride_cn", NVPTX_PARAM_ONE}, {"K", 16}, {"N", 16},
                                          {"stride_am", 16}, {"stride_bn", 16}, {"stride_cm", 16}};
    static const NvptxAssume moe[] = {{"K", 16}, {"N", 16}, {"stride_am", 16}, {"stride_be", 16},
                                      {"stride_bn", 16}, {"stride_cm", 16}};
    static const struct {
        const char *file;
        const NvptxAssume *facts;
        int nfacts;
    } cases[] = {{"matmul.blk", row_major, 8}, {"matmul.blk", b_trans, 8}, {"moe_matmul.blk", moe, 6}};
    const char *archs[] = {"sm_80", "sm_90", "sm_90a"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, cases[i].file);
        for (int a = 0; a < 3; a++) {
            const char *no_defs[] = {NULL};
            NvptxOptions opt = {.arch = archs[a], .assume = cases[i].facts, .nassume = cases[i].nfacts, .no_tma = true};
            char *ptx = ptx_with(src, no_defs, opt);
            cr_expect(strstr(ptx, "cp.async.cg.shared.global") != NULL, "case %zu %s: no cp.async copies", i, archs[a]);
            char out[4096];
            cr_expect_eq(ptxas(ptx, archs[a], out, sizeof out), 0, "case %zu %s: ptxas failed:\n%s", i, archs[a], out);
            free(ptx);
        }
        free(src);
    }
}

Test(ptx, every_example_assembles_cleanly_for_sm80_sm90_and_sm90a, .timeout = 400) {
    const char *archs[] = {"sm_80", "sm_90", "sm_90a"};
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, configs[i].file);
        for (int a = 0; a < 3; a++) {
            char *ptx = ptx_of(src, configs[i].defs, archs[a], 0);
            char out[4096];
            int status = ptxas(ptx, archs[a], out, sizeof out);
            cr_expect_eq(status, 0, "%s config %zu %s: ptxas failed:\n%s", configs[i].file, i, archs[a], out);
            cr_expect_str_eq(out, "", "%s config %zu %s: ptxas said:\n%s", configs[i].file, i, archs[a], out);
            free(ptx);
        }
        free(src);
    }
}

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* 8-bit dots, by path: on sm_90a with b K-major (B column-major: its k stride 1), fp8 on
 * wgmma's k32 form from TMA rings, each k-block waited for and added in f32 (no group in
 * flight), int8 with i32 accumulators left in flight as f16's, u8 x i8 too, its module
 * declaring PTX ISA 8.4 (the first with mixed integer wgmma; the others keep the arch's 8.0);
 * sm_80 runs integers on mma.sync's k32 form and multiplies fp8 as f16 (exact conversions). */
Test(ptx, dot_8bit_lowers_by_path, .timeout = 120) {
    enum { ONE = NVPTX_PARAM_ONE };
    /* a, b, c, scale_a, scale_b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, ... */
    static const int64_t fp8_facts[16] = {16, 16, 16, 0, 0, 16, 16, 16, 16, ONE, ONE, 16, 16, ONE, 0, 0};
    /* a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn */
    static const int64_t int8_facts[12] = {16, 16, 16, 16, 16, 16, 16, ONE, ONE, 16, 16, ONE};
    struct {
        const char *file, *kernel, *arch, *defs[3];
        const int64_t *facts;
        const char *want, *not_want;
        bool in_flight;
        const char *version;
    } cases[] = {
        {"matmul_fp8.blk", "matmul_fp8", "sm_90a", {NULL}, fp8_facts,
         "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", "mma.sync", false, ".version 8.0"},
        {"matmul_fp8.blk", "matmul_fp8", "sm_90a", {"TB=f8e5m2", NULL}, fp8_facts,
         "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2", "mma.sync", false, ".version 8.0"},
        {"matmul_int8.blk", "matmul_int8", "sm_90a", {NULL}, int8_facts,
         "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8", "mma.sync", true, ".version 8.0"},
        {"matmul_int8.blk", "matmul_int8", "sm_90a", {"TA=u8", NULL}, int8_facts,
         "wgmma.mma_async.sync.aligned.m64n128k32.s32.u8.s8", "mma.sync", true, ".version 8.4"},
        {"matmul_int8.blk", "matmul_int8", "sm_90a", {"TB=u8", NULL}, int8_facts,
         "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.u8", "mma.sync", true, ".version 8.4"},
        {"matmul_int8.blk", "matmul_int8", "sm_80", {NULL}, int8_facts,
         "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", "wgmma", false, ".version 7.0"},
        {"matmul_int8.blk", "matmul_int8", "sm_80", {"TA=u8", NULL}, int8_facts,
         "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32", "wgmma", false, ".version 7.0"},
        {"matmul_fp8.blk", "matmul_fp8", "sm_80", {NULL}, fp8_facts,
         "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "wgmma", false, ".version 7.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, cases[i].file);
        NvptxOptions opt = {.arch = cases[i].arch, .num_warps = 8, .only_kernel = cases[i].kernel,
                            .param_div = cases[i].facts};
        NvptxOutput out = output_of(src, cases[i].defs, opt);
        const char *ptx = out.text;
        cr_expect(strstr(ptx, cases[i].want), "case %zu: no %s", i, cases[i].want);
        cr_expect(!strstr(ptx, cases[i].not_want), "case %zu: %s", i, cases[i].not_want);
        bool wgmma = strstr(cases[i].want, "wgmma") != NULL;
        /* the wgmma cases' tiles come by TMA, 8-bit maps */
        cr_expect_eq(!!strstr(ptx, "cp.async.bulk.tensor"), wgmma, "case %zu", i);
        for (int m = 0; wgmma && m < out.kernels[0].tensor_maps.count; m++)
            cr_expect_eq(out.kernels[0].tensor_maps.map[m].elem_bytes, 1, "case %zu map %d", i, m);
        cr_expect_eq(!!strstr(ptx, "wgmma.wait_group.sync.aligned 1"), cases[i].in_flight, "case %zu", i);
        cr_expect(strstr(ptx, cases[i].version), "case %zu: not %s", i, cases[i].version);
        char said[4096];
        cr_expect_eq(ptxas(ptx, cases[i].arch, said, sizeof said), 0, "case %zu: %s", i, said);
        nvptx_output_free(&out);
        free(src);
    }
}

/* An fp8 dot of K = 256 promotes every 128 terms: on wgmma its two runs are
 * two groups into two sets of sums; the first is waited for (wait_group 1)
 * and added while the second runs, the second after wait_group 0, and a set
 * is fenced before the next iteration's wgmmas write it again. PROMOTE=256
 * (max_num_imprecise_acc) is one run: one group, one wait. */
Test(ptx, dot_fp8_promotes_in_turn, .timeout = 120) {
    enum { ONE = NVPTX_PARAM_ONE };
    static const int64_t facts[16] = {16, 16, 16, 0, 0, 16, 16, 16, 16, ONE, ONE, 16, 16, ONE, 0, 0};
    const char *in_turn[] = {"BLOCK_K=256", NULL}, *one_run[] = {"BLOCK_K=256", "PROMOTE=256", NULL};
    const char *const *defs[2] = {in_turn, one_run};
    for (int i = 0; i < 2; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, "matmul_fp8.blk");
        NvptxOptions opt = {.arch = "sm_90a", .num_warps = 8, .only_kernel = "matmul_fp8", .param_div = facts};
        NvptxOutput out = output_of(src, defs[i], opt);
        const char *ptx = out.text;
        const char *first = strstr(ptx, "wgmma.commit_group.sync.aligned");
        cr_assert(first, "case %d: no commit", i);
        const char *second = strstr(first + 1, "wgmma.commit_group.sync.aligned");
        const char *wait1 = strstr(first, "wgmma.wait_group.sync.aligned 1");
        if (i == 0) {
            cr_assert(second && wait1 && second < wait1, "two groups, then the wait for the first");
            const char *add = strstr(wait1, "add.rn.f32");
            const char *wait0 = strstr(wait1, "wgmma.wait_group.sync.aligned 0");
            cr_expect(add && wait0 && add < wait0, "the first sum added before the last wait");
            const char *fence = strstr(first, "wgmma.fence.sync.aligned");
            cr_expect(!fence || fence > wait0, "no fence between the two groups (the second set is fresh)");
        } else {
            cr_expect(!wait1, "one run: no wait for an earlier group");
            cr_expect(!second || second > strstr(first, "wgmma.wait_group.sync.aligned 0"), "one group an iteration");
        }
        char said[4096];
        cr_expect_eq(ptxas(ptx, "sm_90a", said, sizeof said), 0, "case %d: %s", i, said);
        nvptx_output_free(&out);
        free(src);
    }
}

/* f32 to fp8 by cvt.rn.satfinite where the PTX has it (sm_90 on), else by integer operations;
 * gpu_ops checks both against the interpreter bit for bit */
Test(ptx, fp8_conversions_by_the_hardware_from_sm90) {
    char *src = test_file(BLK_PTX_DIR, "fp8_conversions_by_the_hardware_from_sm90.blk");
    const char *arch[3] = {"sm_80", "sm_89", "sm_90"};
    for (int i = 0; i < 3; i++) {
        char *ptx = ptx_of(src, NULL, arch[i], 4);
        bool hw = strstr(ptx, "cvt.rn.satfinite.e4m3x2.f32") && strstr(ptx, "cvt.rn.satfinite.e5m2x2.f32");
        cr_expect_eq(hw, i == 2, "%s: %s", arch[i], hw ? "cvt.rn.satfinite" : "no cvt.rn.satfinite");
        char said[4096];
        cr_expect_eq(ptxas(ptx, arch[i], said, sizeof said), 0, "%s: %s", arch[i], said);
        free(ptx);
    }
    free(src);
}

Test(ptx, dot_lowers_to_tensor_core_instructions, .timeout = 120) {
    /* the examples, at the launch facts of contiguous tensors (as the runtime
     * specializes them): mma.sync m16n8k16, ldmatrix, and cp.async in the loops */
    const char *files[] = {"matmul.blk", "attention.blk"}, *kernels[] = {"matmul", "attn_fwd"};
    static const int64_t facts[2][12] = {
        {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE}, /* row-major */
        {16, 16, 16, 16, 16, 0, 16},
    };
    for (int f = 0; f < 2; f++) {
        char *src = test_file(BLK_EXAMPLES_DIR, files[f]);
        for (int variant = 0; variant < 4; variant++) { /* f16 and bf16, sm_80 and sm_90 */
            bool bf = variant & 1;
            const char *arch = variant & 2 ? "sm_90" : "sm_80";
            const char *defs[] = {bf ? "T=bf16" : "T=f16", NULL};
            Captured cap = {0};
            Compilation *c = compile_to_bir("t.blk", src, defs, &cap);
            cr_assert(c && c->ok, "%s", cap.text);
            NvptxOptions opt = {.arch = arch, .only_kernel = kernels[f], .param_div = facts[f]};
            NvptxOutput out;
            cr_assert(compile_ptx(c, &opt, &out), "%s", cap.text);
            const char *ptx = out.text;
            cr_expect(strstr(ptx, bf ? "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
                                     : "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
                      "%s %s %s: no mma", files[f], defs[0], arch);
            cr_expect(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4"), "%s: no ldmatrix", files[f]);
            cr_expect(strstr(ptx, "cp.async.cg.shared.global"), "%s: no cp.async", files[f]);
            nvptx_output_free(&out);
            compilation_free(c);
        }
        free(src);
    }
    /* f32: "ieee" is fma in k order, no tensor cores; "tf32" one m16n8k8 per
     * 16 x 8 tile of a warp's part and k-step of 8, "tf32x3" three */
    const char *fmt = "kernel k(a: *f32, b: *f32, o: *f32) {\n"
                      "  let i = arange(0, 32); let j = arange(0, 16);\n"
                      "  let x = load(a + i[:, None] * 32 + i[None, :]);\n"
                      "  let y = load(b + i[:, None] * 16 + j[None, :]);\n"
                      "  store(o + i[:, None] * 16 + j[None, :], dot(x, y%s));\n"
                      "}\n";
    const char *precisions[] = {"", ", input_precision = \"tf32\"", ", input_precision = \"tf32x3\""};
    int want[] = {0, 2 * 32 / 8, 3 * 2 * 32 / 8}; /* a warp's 16 x 16: two tiles */
    for (int p = 0; p < 3; p++) {
        char src[1024];
        snprintf(src, sizeof src, fmt, precisions[p]);
        char *ptx = ptx_of(src, NULL, "sm_80", 2); /* 2 warps: each 16 x 16, no copies */
        cr_expect_eq(count_of(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), want[p], "precision %d", p);
        if (p == 0) cr_expect(strstr(ptx, "fma.rn.f32") && !strstr(ptx, "mma"), "%s", ptx);
        char out[4096];
        cr_expect_eq(ptxas(ptx, "sm_80", out, sizeof out), 0, "%s", out);
        free(ptx);
    }
}

/* sm_90a: the examples' dots on wgmma, read from the loops' rings (TMA
 * copies, cp.async where masks are not all true, fenced for the async
 * proxy) through descriptors (a too, for matmul; attention's q from the
 * resident region, p from registers); ptxas assembles it without a
 * warning (no serialized wgmma, no injected warpgroup.arrive). Where the
 * shape does not fit warpgroups, mma.sync, and --stats says why. A dot
 * that only feeds itself (matmul's) waits for the group before the last;
 * attention's last dot is waited for by the next iteration's first. */
Test(ptx, dot_lowers_to_wgmma_on_sm90a, .timeout = 120) {
    static const int64_t mm_facts[12] = {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16,
                                         NVPTX_PARAM_ONE};
    static const int64_t attn_facts[7] = {16, 16, 16, 16, 16, 0, 16};
    struct {
        const char *file, *kernel, *defs[6];
        const int64_t *facts;
        int warps, wgmmas; /* wgmma.mma_async instructions in the PTX */
        const char *want, *not_want;
        int64_t shared; /* bytes: the ring (its stages x its tiles) above what the loop's ops need */
    } cases[] = {
        /* 2 tiles of 64 rows x 4 k-steps, n128, both operands by descriptor; b row-major: N-major
         * (transposed); 4 stages of 16 + 16 KiB and a producer warpgroup's 64 bytes (mbarriers and
         * record); the epilogue's 32 KiB inside them */
        {"matmul.blk", "matmul", {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64", NULL}, mm_facts, 4, 8,
         "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "ldmatrix", 4 * (32768 + 64)},
        /* 2 warpgroups, one tile each, n256; 4 stages of 16 + 32 KiB */
        {"matmul.blk", "matmul", {"T=bf16", "BLOCK_M=128", "BLOCK_N=256", "BLOCK_K=64", NULL}, mm_facts, 8, 4,
         "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "ldmatrix", 4 * (49152 + 64)},
        /* q K^T (4 k-steps) and p V (4), 2 tiles each; 3 stages of 8 + 8 KiB from 0 (p V's group
         * runs on into the next iteration, and its slot is refilled after q K^T's wait: no stage
         * more; cp.async: the two dots feed one another in one warpgroup), and above them q's
         * 16 KiB, staged once before the loop and read by descriptor: only p V's a from registers */
        {"attention.blk", "attn_fwd", {"HEAD_DIM=64", "BLOCK_M=128", "BLOCK_N=64", NULL}, attn_facts, 4, 16,
         "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {", NULL, 3 * 16384 + 16384},
        /* the same in two warpgroups, one tile each: the slot is refilled at the top, with a
         * stage more (4); cp.async, 16 KiB an iteration being below TMA's threshold */
        {"attention.blk", "attn_fwd", {"HEAD_DIM=64", "BLOCK_M=128", "BLOCK_N=64", NULL}, attn_facts, 8, 8,
         "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {", NULL, 4 * 16384 + 16384},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, cases[i].file);
        NvptxOptions opt = {.arch = "sm_90a", .num_warps = cases[i].warps, .only_kernel = cases[i].kernel,
                            .param_div = cases[i].facts};
        NvptxOutput out = output_of(src, cases[i].defs, opt);
        const char *ptx = out.text;
        cr_expect_eq(count_of(ptx, "wgmma.mma_async"), cases[i].wgmmas, "case %zu", i);
        /* a from registers (the register form's "}, {%r"): attention's p V only, never the
         * loop-invariant q (dot.c says why) */
        bool matmul = strcmp(cases[i].kernel, "matmul") == 0;
        cr_expect_eq(count_of(ptx, "}, {%r"), matmul ? 0 : cases[i].wgmmas / 2, "case %zu", i);
        cr_expect_eq(!!strstr(out.kernels[0].notes, "a staged once before its loop (descriptor"), !matmul, "case %zu: %s",
                     i, out.kernels[0].notes);
        cr_expect(strstr(ptx, cases[i].want), "case %zu: no %s", i, cases[i].want);
        if (cases[i].not_want) cr_expect(!strstr(ptx, cases[i].not_want), "case %zu: %s", i, cases[i].not_want);
        cr_expect(strstr(ptx, "fence.proxy.async.shared::cta") && strstr(ptx, "wgmma.wait_group.sync.aligned 0"),
                  "case %zu", i);
        cr_expect(strstr(ptx, ".extern .shared .align 1024"), "case %zu: shared memory not 1024-aligned", i);
        /* matmul's dot only feeds itself: one group stays in flight through the loop */
        cr_expect_eq(!!strstr(ptx, "wgmma.wait_group.sync.aligned 1"), matmul, "case %zu", i);
        cr_expect_eq(!!strstr(out.kernels[0].notes, "one group left in flight"), matmul, "case %zu", i);
        /* attention's p V is waited for by the next iteration's q K^T */
        cr_expect_eq(!!strstr(out.kernels[0].notes, "waited for by the next iteration's first dot"), !matmul,
                     "case %zu: %s", i, out.kernels[0].notes);
        cr_expect(strstr(out.kernels[0].notes, "wgmma.m64n"), "case %zu: %s", i, out.kernels[0].notes);
        cr_expect_eq(out.kernels[0].shared_bytes, cases[i].shared, "case %zu: %lld bytes of shared memory", i,
                     (long long)out.kernels[0].shared_bytes);
        char said[4096];
        cr_expect_eq(ptxas(ptx, "sm_90a", said, sizeof said), 0, "case %zu: %s", i, said);
        cr_expect_str_eq(said, "", "case %zu: ptxas said:\n%s", i, said);
        /* plain sm_90 has no wgmma: mma.sync, and no reason given (none was possible) */
        nvptx_output_free(&out);
        opt.arch = "sm_90";
        out = output_of(src, cases[i].defs, opt);
        cr_expect(!strstr(out.text, "wgmma") && strstr(out.text, "mma.sync.aligned.m16n8k16"), "case %zu", i);
        cr_expect(!strstr(out.kernels[0].notes, "not wgmma"), "case %zu: %s", i, out.kernels[0].notes);
        nvptx_output_free(&out);
        free(src);
    }
    /* 64 rows on 8 warps: two warpgroups cannot each take 64 rows; mma.sync, said so */
    char *src = test_file(BLK_PTX_DIR, "dot_lowers_to_wgmma_on_sm90a.blk");
    NvptxOutput out = output_of(src, NULL, (NvptxOptions){.arch = "sm_90a", .num_warps = 8});
    cr_expect(!strstr(out.text, "wgmma.mma_async"), "%s", out.text);
    cr_expect(strstr(out.kernels[0].notes, "not wgmma: its 64 rows do not give each of 2 warpgroups 64-row tiles"),
              "%s", out.kernels[0].notes);
    nvptx_output_free(&out);
    out = output_of(src, NULL, (NvptxOptions){.arch = "sm_90a", .num_warps = 4});
    cr_expect_eq(count_of(out.text, "wgmma.mma_async"), 4, "%s", out.kernels[0].notes); /* 4 k-steps of one n64 tile */
    nvptx_output_free(&out);
    free(src);
}

/* q of attention D = 256 in 128 x 128 blocks takes 64 KiB of the resident
 * region, leaving no room for 2 stages of k and v (64 KiB each): an error at
 * the loop, where the loop had been taken as pipelined while shared memory
 * was laid out (an internal compiler error once; without a producer, the
 * dots would have staged k and v over q). */
Test(ptx, a_loop_without_room_for_its_ring_is_an_error) {
    char *src = test_file(BLK_EXAMPLES_DIR, "attention.blk");
    static const int64_t attn_facts[7] = {16, 16, 16, 16, 16, 0, 16};
    const char *defs[] = {"HEAD_DIM=256", "BLOCK_M=128", "BLOCK_N=128", NULL};
    Captured cap = {0};
    Compilation *c = compile_to_bir("attention.blk", src, defs, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    for (int warps = 4; warps <= 8; warps += 4) {
        NvptxOptions opt = {.arch = "sm_90a", .num_warps = warps, .param_div = attn_facts};
        NvptxOutput out;
        cr_expect_not(compile_ptx(c, &opt, &out), "%d warps", warps);
        cr_expect(strstr(cap.text, "no room for 2 stages in shared memory") && strstr(cap.text, "65536 bytes of "
                                                                                              "loop-invariant"),
                  "%d warps: %s", warps, cap.text);
    }
    compilation_free(c);
    free(src);
}

/* A load of an outer loop that feeds a dot in an inner loop is not staged
 * in the outer loop's ring (the inner loop's ring is in the same place):
 * the inner loop loads it once, from registers. (It was staged, and had no
 * registers to load from: the compiler crashed.) */
Test(ptx, a_load_feeding_an_inner_loops_dot_stays_out_of_the_outer_ring) {
    const char *src = NESTED_LOOP_DOT_KERNEL;
    const char *archs[] = {"sm_80", "sm_90a"};
    for (int i = 0; i < 2; i++) {
        NvptxOutput out = output_of(src, NULL, (NvptxOptions){.arch = archs[i]});
        const char *notes = out.kernels[0].notes;
        /* (wgmma: into shared memory, read by descriptor) */
        cr_expect(strstr(notes, i ? "a staged once before its loop" : "a loaded once before its loop") &&
                      strstr(notes, "b from its loop's ring"),
                  "%s: %s", archs[i], notes);
        char said[4096];
        cr_expect_eq(ptxas(out.text, archs[i], said, sizeof said), 0, "%s", said);
        nvptx_output_free(&out);
    }
}

/* A kernel with one TMA-eligible loop of 64 x 128 and 128 x 64 tiles (its
 * dot only feeds itself; 4 stages of 32 KB, one program an SM, so a
 * producer pays), with `before` and `after` the loop and `in_loop` at the
 * end of its body; into buf. */
static const char *tile_loop_kernel(char *buf, size_t size, const char *before, const char *in_loop, const char *after) {
    snprintf(buf, size,
             "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32 @align(16), n: i32) {\n"
             "  let i = arange(0, 64);\n"
             "  let j = arange(0, 128);\n"
             "  var pa = a + i[:, None] * 512 + j[None, :];\n"
             "  var pb = b + j[:, None] * 64 + i[None, :];\n"
             "  var acc = zeros([64, 64], f32);\n"
             "%s"
             "  for k in range(0, 4, 1) {\n"
             "    acc = dot(load(pa), load(pb), acc);\n"
             "    pa += 128;\n"
             "    pb += 8192;\n"
             "%s"
             "  }\n"
             "%s"
             "  store(o + i[:, None] * 64 + i[None, :], acc);\n"
             "}\n",
             before, in_loop, after);
    return buf;
}

/* The matmul example on sm_90a with facts: which loads TMA copies, the maps
 * the launcher gets, the kernel's extra parameters, and why not where not. */
enum { MATMUL_NO_TMA = 1, MATMUL_NO_WS = 2, MATMUL_OCCUPANCY_3 = 4 };
static NvptxOutput matmul_sm90a(const int64_t *facts, int flags, const char *src) {
    static const char *defs[] = {"BLOCK_M=128", "BLOCK_N=128", "BLOCK_K=64", NULL};
    char *text = src ? NULL : test_file(BLK_EXAMPLES_DIR, "matmul.blk");
    NvptxOptions opt = {.arch = "sm_90a", .num_warps = 4, .param_div = facts, .only_kernel = src ? NULL : "matmul",
                        .no_tma = flags & MATMUL_NO_TMA, .no_warp_specialize = flags & MATMUL_NO_WS,
                        .min_blocks_per_sm = flags & MATMUL_OCCUPANCY_3 ? 3 : 0};
    NvptxOutput out = output_of(src ? src : text, src ? NULL : defs, opt);
    free(text);
    return out;
}

Test(ptx, pipelined_loads_are_tma_copies_on_sm90a, .timeout = 60) {
    /* a, b, c, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn */
    int64_t facts[12] = {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE};
    NvptxOutput out = matmul_sm90a(facts, MATMUL_NO_WS, NULL); /* thread 0 issues the copies */
    const NvptxKernel *k = &out.kernels[0];
    cr_assert_eq(k->tensor_maps.count, 2, "%s", k->notes);
    /* a [128, 64]: one 64 x 128 box a tile, M rows and K columns (its mask's rm < M and rk < K - k,
     * the column k + rk); b [64, 128]: two 64 x 64 boxes, K rows and N columns */
    NvptxTensorMap want[2] = {{0, 6, 1, 64, 128, 128, .rows_param = 3, .rows_scale = 1, .cols_param = 5, .cols_scale = 1},
                              {1, 8, 1, 64, 64, 128, .rows_param = 5, .rows_scale = 1, .cols_param = 4, .cols_scale = 1}};
    for (int j = 0; j < 2; j++) {
        const NvptxTensorMap *m = &k->tensor_maps.map[j];
        cr_expect(m->base_param == want[j].base_param && m->stride_param == want[j].stride_param &&
                      m->stride_scale == want[j].stride_scale && m->box_inner == want[j].box_inner &&
                      m->box_rows == want[j].box_rows && m->swizzle_bytes == want[j].swizzle_bytes && m->elem_bytes == 2 &&
                      m->rows_param == want[j].rows_param && m->rows_scale == want[j].rows_scale &&
                      m->cols_param == want[j].cols_param && m->cols_scale == want[j].cols_scale,
                  "map %d: %d %d %lld %d %d %d rows %d x %lld cols %d x %lld", j, m->base_param, m->stride_param,
                  (long long)m->stride_scale, m->box_inner, m->box_rows, m->swizzle_bytes, m->rows_param,
                  (long long)m->rows_scale, m->cols_param, (long long)m->cols_scale);
    }
    /* the maps and their validity bits after the 12 parameters; 1 + 2 boxes an iteration, in the
     * prologue's 2 iterations and the loop's */
    cr_expect(strstr(out.text, ".param .align 64 .b8 matmul_param_12[128]") &&
                  strstr(out.text, ".param .align 64 .b8 matmul_param_13[128]") &&
                  strstr(out.text, ".param .u32 matmul_param_14"), "%s", out.text);
    cr_expect_eq(count_of(out.text, "cp.async.bulk.tensor.2d"), 3 * 3);
    cr_expect_eq(count_of(out.text, "prefetch.tensormap"), 2, "each map fetched ahead of the first copy");
    cr_expect(strstr(out.text, "mbarrier.try_wait.parity") && strstr(out.text, "mbarrier.arrive.expect_tx") &&
                  strstr(out.text, "bar.red.and.pred") && strstr(out.text, "cvta.param"), "%s", out.text);
    cr_expect(strstr(k->notes, "line 28: load [128, 64] f16: a 4-stage ring, copied by TMA (map 0: from a, rows "
                               "stride_am elements apart, 128 x 64 boxes, 128-byte swizzle)"), "%s", k->notes);
    nvptx_output_free(&out);

    /* --no-tma: cp.async, no maps, no extra parameters */
    out = matmul_sm90a(facts, MATMUL_NO_TMA, NULL);
    cr_expect(out.kernels[0].tensor_maps.count == 0 && !strstr(out.text, "cp.async.bulk") && !strstr(out.text, "mbarrier") &&
                  !strstr(out.text, "matmul_param_12") && strstr(out.kernels[0].notes, "copied by cp.async; not TMA: --no-tma"),
              "%s", out.kernels[0].notes);
    nvptx_output_free(&out);

    /* a's columns not known to be unit-stride: a is not vectorized, so not pipelined; b alone is in
     * the ring, the dot (a staged by itself) waits each iteration, and in one warpgroup that stays
     * with cp.async */
    facts[7] = 16;
    out = matmul_sm90a(facts, 0, NULL);
    cr_expect(out.kernels[0].tensor_maps.count == 0 && strstr(out.kernels[0].notes, "a through shared memory") &&
                  strstr(out.kernels[0].notes, "not TMA: its loop's dot does not stay in flight across iterations and "
                                               "its program is one warpgroup"), "%s", out.kernels[0].notes);
    nvptx_output_free(&out);

    /* rows gathered through indices: not a parameter plus multiples of arange and parameters, so
     * cp.async for that load and, since a loop's loads go one way, for the other */
    char *gather = test_file(BLK_PTX_DIR, "pipelined_loads_are_tma_copies_on_sm90a.blk");
    out = matmul_sm90a(NULL, 0, gather);
    cr_expect(out.kernels[0].tensor_maps.count == 0 &&
                  strstr(out.kernels[0].notes, "line 8: load [64, 64] f16: a 4-stage ring, copied by cp.async; not "
                                               "TMA: its pointers are not a parameter plus multiples of arange and "
                                               "parameters") &&
                  strstr(out.kernels[0].notes, "copied by cp.async; not TMA: another load of its loop cannot be"),
              "%s", out.kernels[0].notes);
    nvptx_output_free(&out);
    /* the same rows by arange: both loads by TMA, the carried pointers keeping their form */
    char *affine = strdup(gather);
    memcpy(strstr(affine, "rows[:, None]"), "   i[:, None]", 13);
    out = matmul_sm90a(NULL, 0, affine);
    cr_expect(out.kernels[0].tensor_maps.count == 2 && strstr(out.kernels[0].notes, "rows 64 elements apart"), "%s",
              out.kernels[0].notes);
    char said[4096];
    cr_expect_eq(ptxas(out.text, "sm_90a", said, sizeof said), 0, "%s", said);
    nvptx_output_free(&out);
    free(affine);

    /* rows a while loop's carried value moves, and columns through u32 (zero-extended: not the
     * integers' sum): cp.async */
    const char *not_affine[] = {
        WHILE_CARRIED_ROWS_KERNEL,
        "kernel k(a: *f16 @align(16), b: *f16 @align(16), o: *f32 @align(16)) {\n"
        "  let i = arange(0, 64);\n"
        "  let c = (i - 32) as u32;\n"
        "  var pa = a + i[:, None] * 64 + c[None, :];\n"
        "  var pb = b + i[:, None] * 64 + i[None, :];\n"
        "  var acc = zeros([64, 64], f32);\n"
        "  for k in range(0, 4, 1) {\n"
        "    acc = dot(load(pa), load(pb), acc);\n"
        "    pa += 64;\n"
        "    pb += 4096;\n"
        "  }\n"
        "  store(o + i[:, None] * 64 + i[None, :], acc);\n"
        "}\n",
    };
    for (int i = 0; i < 2; i++) {
        out = matmul_sm90a(NULL, 0, not_affine[i]);
        cr_expect(out.kernels[0].tensor_maps.count == 0 &&
                      strstr(out.kernels[0].notes, "not TMA: its pointers are not a parameter plus multiples"),
                  "case %d: %s", i, out.kernels[0].notes);
        nvptx_output_free(&out);
    }
    /* a loop holding a pipelined loop, or a return, gets no ring: the inner loop's would be in the
     * same place, and no program may leave with copies in flight */
    out = matmul_sm90a(NULL, 0, NESTED_RINGS_KERNEL);
    cr_expect(strstr(out.kernels[0].notes, "line 12: load") && !strstr(out.kernels[0].notes, "line 7: load"), "%s",
              out.kernels[0].notes);
    nvptx_output_free(&out);
    /* attention's loop: TMA with 64 KiB of k and v an iteration in two warpgroups (D = 128,
     * 128 x 128; p V's group runs on into the next iteration, so a producer warpgroup issues the
     * copies), cp.async in one warpgroup at any size (D = 64 and 128, 64 x 64) and with 16 KiB
     * (D = 64, 128 x 64, two warpgroups), and --stats says why */
    char *attn = test_file(BLK_EXAMPLES_DIR, "attention.blk");
    static const int64_t attn_facts[7] = {16, 16, 16, 16, 16, 0, 16};
    struct { const char *defs[4]; int warps, maps; const char *why; } attn_cases[] = {
        {{"HEAD_DIM=128", "BLOCK_M=128", "BLOCK_N=128", NULL}, 8, 2, NULL},
        {{"HEAD_DIM=64", "BLOCK_M=64", "BLOCK_N=64", NULL}, 4, 0, "its program is one warpgroup"},
        {{"HEAD_DIM=128", "BLOCK_M=64", "BLOCK_N=64", NULL}, 4, 0, "its program is one warpgroup"},
        {{"HEAD_DIM=64", "BLOCK_M=128", "BLOCK_N=64", NULL}, 8, 0, "its tiles are 16384 bytes an iteration"},
    };
    for (int i = 0; i < 4; i++) {
        out = output_of(attn, attn_cases[i].defs,
                        (NvptxOptions){.arch = "sm_90a", .num_warps = attn_cases[i].warps, .param_div = attn_facts});
        cr_expect_eq(out.kernels[0].tensor_maps.count, attn_cases[i].maps, "case %d: %s", i, out.kernels[0].notes);
        char why[160];
        snprintf(why, sizeof why, "not TMA: its loop's dots feed one another and %s", attn_cases[i].why ? attn_cases[i].why : "");
        if (attn_cases[i].why) cr_expect(strstr(out.kernels[0].notes, why), "case %d: %s", i, out.kernels[0].notes);
        else
            cr_expect(out.kernels[0].num_warps == 12 &&
                          strstr(out.kernels[0].notes, "loop: a producer warpgroup issues its TMA copies"), "%s",
                      out.kernels[0].notes);
        nvptx_output_free(&out);
    }
    free(attn);
    char src[2048]; /* a loop that may return from inside */
    out = matmul_sm90a(NULL, 0, tile_loop_kernel(src, sizeof src, "",
                                                 "    if k == 1 { store(o + i[:, None] * 64 + i[None, :], acc); return; }\n", ""));
    cr_expect(!strstr(out.kernels[0].notes, "ring") && !strstr(out.text, "cp.async"), "%s", out.kernels[0].notes);
    nvptx_output_free(&out);
    free(gather);
}

/* A TMA loop whose dot stays in flight (matmul) gets a producer warpgroup:
 * one more warpgroup launched, which alone issues the copies (one fill site:
 * 1 + 2 boxes), full/empty mbarriers instead of the refill's bar.red, the
 * consumers' barriers counting only their threads (no plain bar.sync 0),
 * named barrier 1 counting every thread, setmaxnreg where the producer's
 * registers are worth giving back (8 warps: 384 threads start with 168), and
 * ptxas without a warning. Where a producer is not used, --stats says why. */
Test(ptx, a_producer_warpgroup_issues_the_tma_copies_of_a_loop_with_a_dot_in_flight, .timeout = 60) {
    int64_t facts[12] = {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE};
    NvptxOutput out = matmul_sm90a(facts, 0, NULL);
    const NvptxKernel *k = &out.kernels[0];
    cr_expect_eq(k->num_warps, 8, "%s", k->notes);
    cr_expect(strstr(k->notes, "line 27: loop: a producer warpgroup issues its TMA copies (warp specialization: 8 warps "
                               "launched)"), "%s", k->notes);
    cr_expect(strstr(out.text, ".maxntid 256, 1, 1") && strstr(out.text, ".minnctapersm 1"), "%s", out.text);
    cr_expect_eq(count_of(out.text, "cp.async.bulk.tensor.2d"), 3);
    cr_expect_eq(count_of(out.text, "mbarrier.arrive.expect_tx"), 1);
    cr_expect_eq(count_of(out.text, "mbarrier.init"), 2 * 4); /* full and empty, 4 stages */
    cr_expect(!strstr(out.text, "bar.red") && !strstr(out.text, "bar.sync \t0;") && !strstr(out.text, "setmaxnreg") &&
                  strstr(out.text, "barrier.sync \t1, 256;") && strstr(out.text, "vote.sync.all.pred"), "%s", out.text);
    char said[4096];
    cr_expect_eq(ptxas(out.text, "sm_90a", said, sizeof said), 0, "%s", said);
    cr_expect_str_eq(said, "", "ptxas said:\n%s", said);
    nvptx_output_free(&out);

    /* 8 warps: the producer's registers go to the consumers */
    static const char *defs[] = {"BLOCK_M=128", "BLOCK_N=256", "BLOCK_K=64", NULL};
    char *text = test_file(BLK_EXAMPLES_DIR, "matmul.blk");
    out = output_of(text, defs, (NvptxOptions){.arch = "sm_90a", .num_warps = 8, .param_div = facts, .only_kernel = "matmul"});
    cr_expect(out.kernels[0].num_warps == 12 && strstr(out.text, "setmaxnreg.dec.sync.aligned.u32 40;") &&
                  strstr(out.text, "setmaxnreg.inc.sync.aligned.u32 232;") && strstr(out.text, "barrier.sync \t1, 384;"),
              "%s", out.kernels[0].notes);
    cr_expect_eq(ptxas(out.text, "sm_90a", said, sizeof said), 0, "%s", said);
    cr_expect_str_eq(said, "", "ptxas said:\n%s", said);
    nvptx_output_free(&out);
    free(text);

    /* asked not to; a loop that may not run exactly once; attention's loop in one warpgroup, whose
     * p V slot is refilled after q K^T's wait: pipelined_loads_are_tma_copies_on_sm90a */
    out = matmul_sm90a(facts, MATMUL_NO_WS, NULL);
    cr_expect(out.kernels[0].num_warps == 4 && !strstr(out.text, "barrier.sync") &&
                  strstr(out.kernels[0].notes, "line 27: loop: thread 0 issues its TMA copies; no producer warp: "
                                               "--no-warp-specialize"), "%s", out.kernels[0].notes);
    nvptx_output_free(&out);
    const char *refused[][2] = {
        {"  if n > 0 {\n", "the loop is inside another statement"},
        {"", "its occupancy target is 3 programs an SM (a producer is used at one)"},
    };
    for (int i = 0; i < 2; i++) {
        char src[2048];
        out = matmul_sm90a(NULL, i == 1 ? MATMUL_OCCUPANCY_3 : 0,
                           tile_loop_kernel(src, sizeof src, refused[i][0], "", i == 0 ? "  }\n" : ""));
        cr_expect(out.kernels[0].tensor_maps.count == 2 && out.kernels[0].num_warps == 4 &&
                      strstr(out.kernels[0].notes, refused[i][1]), "case %d: %s", i, out.kernels[0].notes);
        nvptx_output_free(&out);
    }
    /* a kernel that returns before or after the loop keeps its producer: every return goes to the
     * release that stops it (two sites: the return's and the end's, each one lane a warp) */
    const char *returns[][2] = {{"  if n > 0 { return; }\n", ""}, {"", "  if n > 0 { return; }\n"}};
    for (int i = 0; i < 2; i++) {
        char src[2048];
        out = matmul_sm90a(NULL, 0, tile_loop_kernel(src, sizeof src, returns[i][0], "", returns[i][1]));
        cr_expect(out.kernels[0].num_warps == 8 && strstr(out.kernels[0].notes, "a producer warpgroup"), "case %d: %s", i,
                  out.kernels[0].notes);
        cr_expect_eq(ptxas(out.text, "sm_90a", said, sizeof said), 0, "%s", said);
        nvptx_output_free(&out);
    }
}

/* --persistent: the grid's three sizes after every other parameter (the
 * tensor maps' included), program ids from them in a loop stepping by
 * nctaid.x, num_programs the grid's, and with a producer its ring's
 * mbarriers made once for all program ids; ptxas without a warning. The
 * interpreter's results of such kernels are checked on the GPU (gpu_ops). */
Test(ptx, a_persistent_kernel_loops_over_the_grids_program_ids, .timeout = 60) {
    int64_t facts[12] = {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE};
    static const char *defs[] = {"BLOCK_M=128", "BLOCK_N=256", "BLOCK_K=64", NULL};
    char said[4096];
    char *text = test_file(BLK_EXAMPLES_DIR, "matmul.blk");
    for (int ws = 0; ws < 2; ws++) {
        NvptxOutput out = output_of(text, defs, (NvptxOptions){.arch = "sm_90a", .num_warps = 8, .param_div = facts,
                                                               .only_kernel = "matmul", .persistent = true,
                                                               .no_warp_specialize = !ws});
        const NvptxKernel *k = &out.kernels[0];
        cr_expect(k->persistent && k->num_warps == (ws ? 12 : 8), "%s", k->notes);
        /* 12 parameters, 2 maps, their bits, then the grid */
        cr_expect(strstr(out.text, ".param .u32 matmul_param_15,\n\t.param .u32 matmul_param_16,\n\t.param .u32 "
                                   "matmul_param_17\n)"), "%s", out.text);
        cr_expect(strstr(out.text, "%nctaid.x") && !strstr(out.text, "%ctaid.y"), "%s", out.text);
        cr_expect_eq(count_of(out.text, "mbarrier.init"), ws ? 2 * 4 : 4, "%s", k->notes);
        cr_expect_eq(ptxas(out.text, "sm_90a", said, sizeof said), 0, "%s", said);
        cr_expect_str_eq(said, "", "ptxas said:\n%s", said);
        nvptx_output_free(&out);
    }
    free(text);
    /* num_programs and program_id on every axis, and a return, in a kernel without a loop */
    char *ids = test_file(BLK_PTX_DIR, "a_persistent_kernel_loops_over_the_grids_program_ids.blk");
    NvptxOutput out = output_of(ids, NULL, (NvptxOptions){.arch = "sm_80", .persistent = true});
    cr_expect(out.kernels[0].persistent && !strstr(out.text, "%ctaid.y") && !strstr(out.text, "%nctaid.y") &&
                  strstr(out.text, ".param .u32 ids_param_3\n)"), "%s", out.text);
    cr_expect_eq(ptxas(out.text, "sm_80", said, sizeof said), 0, "%s", said);
    nvptx_output_free(&out);
    free(ids);
}

Test(ptx, aligned_block_accesses_are_vectorized) {
    char *f32 = test_file(BLK_PTX_DIR, "aligned_block_accesses_are_vectorized_f32.blk");
    char *ptx = ptx_of(f32, NULL, "sm_90", 4);
    /* unmasked: plain 128-bit accesses; masked with n a multiple of 16: predicated ones */
    cr_expect(strstr(ptx, "ld.global.v4.f32"), "%s", ptx);
    cr_expect(strstr(ptx, "st.global.v4.f32"), "%s", ptx);
    cr_expect(strstr(ptx, "ld.global.v4.b32 {"), "masked load not vectorized:\n%s", ptx);
    cr_expect(strstr(ptx, "st.global.v4.b32 ["), "masked store not vectorized:\n%s", ptx);
    free(ptx);
    char *f16 = test_file(BLK_PTX_DIR, "aligned_block_accesses_are_vectorized_f16.blk");
    ptx = ptx_of(f16, NULL, "sm_90", 4);
    /* 8 halves per 16-byte access */
    cr_expect(strstr(ptx, "ld.global.v4.b32") || strstr(ptx, "ld.global.v4.u32"), "%s", ptx);
    cr_expect(strstr(ptx, "st.global.v4.b32") || strstr(ptx, "st.global.v4.u32"), "%s", ptx);
    free(ptx);
    free(f16), free(f32);
}

Test(ptx, unaligned_or_unknown_accesses_are_not_vectorized) {
    char *src = test_file(BLK_PTX_DIR, "unaligned_or_unknown_accesses_are_not_vectorized.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 4);
    cr_expect_not(strstr(ptx, ".v4."), "vectorized without proof of alignment:\n%s", ptx);
    cr_expect(strstr(ptx, "ld.global.b32"), "%s", ptx);
    free(ptx);
    free(src);
}

/* A dot's accumulator (two adjacent columns a register pair) goes to the
 * store's blocked layout through shared memory: pairs as 4-byte stores,
 * rows as 16-byte loads (LLVM alone, unable to prove the alignment, kept
 * most stores at 2 bytes). */
Test(ptx, conversions_through_shared_memory_use_vector_accesses, .timeout = 60) {
    char *src = test_file(BLK_PTX_DIR, "conversions_through_shared_memory_use_vector_accesses.blk");
    const char *arch[] = {"sm_80", "sm_90a"};
    for (int i = 0; i < 2; i++) {
        char *ptx = ptx_of(src, NULL, arch[i], 4);
        cr_expect_not(strstr(ptx, "st.shared.b16") || strstr(ptx, "st.shared.u16"), "%s: 2-byte stores:\n%s", arch[i], ptx);
        cr_expect(strstr(ptx, "st.shared.b32"), "%s", ptx);
        cr_expect(strstr(ptx, "ld.shared.v4.b32"), "%s", ptx);
        free(ptx);
    }
    free(src);
}

Test(ptx, reductions_use_warp_shuffles_and_shared_memory) {
    char *src = test_file(BLK_EXAMPLES_DIR, "softmax.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 4);
    cr_expect(strstr(ptx, "shfl.sync.bfly.b32"), "%s", ptx);
    cr_expect(strstr(ptx, "bar.sync"), "%s", ptx);
    cr_expect(strstr(ptx, "st.shared"), "%s", ptx);
    cr_expect(strstr(ptx, "ex2.approx.ftz.f32"), "exp lowers to ex2.approx, subnormal results flushed:\n%s", ptx);
    cr_expect(strstr(ptx, ".maxntid 128, 1, 1"), "4 warps by default for a 1024 block:\n%s", ptx);
    free(ptx);
    free(src);
}

/* LLVM 19 turns every f16/bf16 bitcast into a ProxyReg instruction and erases
 * those in time quadratic in the function's size (a minute for a large f16
 * sort): 16-bit floats cross lanes as f32, converted exactly both ways. */
Test(ptx, sixteen_bit_float_shuffles_go_through_f32) {
    char *src = test_file(BLK_PTX_DIR, "sixteen_bit_float_shuffles_go_through_f32.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 4);
    int shuffles = count_of(ptx, "shfl.sync.bfly.b32");
    cr_expect_gt(shuffles, 0, "%s", ptx);
    cr_expect_eq(count_of(ptx, "cvt.f32.f16"), count_of(ptx, "cvt.rn.f16.f32"), "%s", ptx);
    cr_expect_eq(count_of(ptx, "cvt.f32.f16") + count_of(ptx, "cvt.f32.bf16"), shuffles,
                 "each shuffle widens one 16-bit float:\n%s", ptx);
    free(ptx);
    free(src);
}

Test(ptx, source_lines_are_in_the_ptx_and_annotated) {
    char *src = test_file(BLK_EXAMPLES_DIR, "softmax.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 0);
    cr_expect(strstr(ptx, ".file\t1 \"") && strstr(ptx, "t.blk\""), "%s", ptx);
    cr_expect(strstr(ptx, ".loc\t1 13 "), "no .loc for line 13:\n%s", ptx);
    Source s = {"t.blk", src, strlen(src)};
    char *annotated = nvptx_annotate(ptx, &s);
    cr_expect(strstr(annotated, "\t// 13: let y = num / sum(num, axis = 0);\n"), "%s", annotated);
    cr_expect_not(strstr(annotated, ".loc\t"), "the .loc lines are replaced");
    free(annotated);
    free(ptx);
    free(src);
}

Test(ptx, scalar_atomics_are_acquire_release_after_a_barrier) {
    char *src = test_file(BLK_EXAMPLES_DIR, "layernorm.blk");
    const char *defs[] = {"BLOCK_SIZE_N=1024", NULL};
    char *ptx = ptx_of(src, defs, "sm_90", 0);
    const char *entry = strstr(ptx, ".entry layer_norm_bwd_dx(");
    cr_assert_not_null(entry, "%s", ptx);
    const char *cas = strstr(entry, "atom.acq_rel.gpu.global.cas.b32");
    cr_assert_not_null(cas, "%s", ptx);
    /* the atomic is the release: a barrier orders the program's earlier
     * accesses before it, and no fence doubles it */
    const char *barrier = NULL;
    for (const char *at = strstr(entry, "bar.sync"); at && at < cas; at = strstr(at + 1, "bar.sync")) barrier = at;
    cr_expect(barrier, "%s", ptx);
    cr_expect_not(strstr(ptx, "fence."), "%s", ptx);
    /* the two xchg results are unused: thread 0 broadcasts only the cas's */
    const char *release = strstr(cas, "atom.acq_rel.gpu.global.exch.b32");
    cr_assert_not_null(release, "%s", ptx);
    release = strstr(release + 1, "atom.acq_rel.gpu.global.exch.b32");
    cr_assert_not_null(release, "%s", ptx);
    const char *end = strstr(release, "ret;");
    cr_assert_not_null(end);
    for (const char *at = strstr(release, "bar.sync"); at; at = strstr(at + 1, "bar.sync"))
        cr_expect(at > end, "a barrier after the lock's release:\n%s", ptx);
    free(ptx);
    free(src);
}

Test(ptx, scalar_loads_run_in_every_thread_without_barriers) {
    char *src = test_file(BLK_PTX_DIR, "scalar_loads_run_in_every_thread_without_barriers.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 4);
    cr_expect_not(strstr(ptx, "bar.sync"), "%s", ptx);
    cr_expect_not(strstr(ptx, "st.shared"), "%s", ptx);
    free(ptx);
    free(src);
}

Test(ptx, a_compare_constant_over_a_vector_is_computed_once_per_vector) {
    /* with N % 16 == 0, `cols < N` is the same for each thread's 4 (f32)
     * consecutive columns: one setp per vector, not per element, so fewer
     * predicates stay live (layer_norm_bwd_dx went from 255 registers and
     * 120 bytes of spills to none at 16384 columns) */
    char *src = test_file(BLK_PTX_DIR, "a_compare_constant_over_a_vector_is_computed_once_per_vector.blk");
    Captured cap = {0};
    Compilation *c = compile_to_bir("t.blk", src, NULL, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    int64_t div[2] = {16, 16};
    int compares[2];
    for (int spec = 0; spec < 2; spec++) {
        char *ptx = kernel_ptx_with_facts(c, "k", 4, spec ? div : NULL);
        compares[spec] = count_of(ptx, "setp.lt.s32");
        free(ptx);
    }
    /* 1024 elements, 128 threads: 8 a thread, two vectors of 4 */
    cr_expect_eq(compares[0], 8, "no facts: a compare per element, got %d", compares[0]);
    cr_expect_eq(compares[1], 2, "N %% 16 == 0: a compare per vector, got %d", compares[1]);
    compilation_free(c);
    free(src);
}

/* masks.c: a select of a dot's result whose mask compares scalar-and-arange
 * ranges branches on one test of the ranges' ends and selects per element
 * only where that fails; a mask of the data stays per element, with no
 * branch, and so does a select of loaded data (its elements would all stay
 * live across the branch). */
Test(ptx, a_mask_over_arange_ranges_is_tested_once_per_block) {
    const char *masks[3] = {"i[None, :] < n", "s > 0.0", "i[None, :] < n"};
    const char *data[3] = {"dot(x, x)", "dot(x, x)", "x as f32"};
    for (int m = 0; m < 3; m++) {
        char src[384];
        snprintf(src, sizeof src,
                 "kernel k(a: *f16, o: *f32, n: i32) {\n"
                 "  let i = arange(0, 64);\n"
                 "  let x = load(a + i[:, None] * 64 + i[None, :]);\n"
                 "  let s = %s;\n"
                 "  store(o + i[:, None] * 64 + i[None, :], where(%s, s, 1.0));\n"
                 "}\n",
                 data[m], masks[m]);
        NvptxOutput out = output_of(src, NULL, (NvptxOptions){.arch = "sm_80", .num_warps = 4});
        cr_expect_eq(!!strstr(out.text, " bra"), m == 0, "%s, %s: %s", data[m], masks[m], out.text);
        cr_expect(strstr(out.text, "selp.f32"), "%s, %s: no per-element select left: %s", data[m], masks[m], out.text);
        nvptx_output_free(&out);
    }
}

/* The deterministic layer-norm backward holds w, dW and dB through its row
 * loop: at 16384 columns and 16 warps (128 registers a thread) they move to
 * shared memory and ptxas spills nothing (in registers it spilled 508 bytes);
 * at 4096 columns they fit and stay. */
Test(ptx, loop_blocks_over_the_registers_are_kept_in_shared_memory, .timeout = 120) {
    char *src = test_file(BLK_EXAMPLES_DIR, "layernorm.blk");
    const int64_t div[] = {16, 16, 16, 16, 16, 16, 0, 0, 16, 16, 0}; /* pointers aligned, stride and N % 16 */
    for (int wide = 0; wide <= 1; wide++) {
        const char *defs[] = {wide ? "BLOCK_SIZE_N=16384" : "BLOCK_SIZE_N=4096", NULL};
        Captured cap = {0};
        Compilation *c = compile_to_bir("layernorm.blk", src, defs, &cap);
        cr_assert(c && c->ok, "%s", cap.text);
        NvptxOptions opt = {.arch = "sm_90", .num_warps = 16, .only_kernel = "layer_norm_bwd_dx_det", .param_div = div};
        NvptxOutput out;
        cr_assert(compile_ptx(c, &opt, &out));
        const char *notes = out.kernels[0].notes ? out.kernels[0].notes : "";
        int kept = count_of(notes, "kept in shared memory");
        cr_expect_eq(kept, wide ? 3 : 0, "w, dW and dB kept only when they do not fit:\n%s", notes);
        cr_expect_eq(out.kernels[0].shared_bytes >= 3 * 65536, wide, "%lld bytes", (long long)out.kernels[0].shared_bytes);
        cr_expect_eq(count_of(out.text, "st.shared.v4.f32") > 0, wide, "16-byte slots:\n%s", out.text);
        char said[4096];
        int status = ptxas(out.text, "sm_90", said, sizeof said);
        cr_expect_eq(status, 0, "%s", said);
        nvptx_output_free(&out);
        compilation_free(c);
    }
    free(src);
}

Test(ptx, options_change_the_code) {
    char *src = test_file(BLK_PTX_DIR, "options_change_the_code.blk");
    char *fast = ptx_of(src, NULL, "sm_90", 1);
    cr_expect(strstr(fast, "div.full.f32"), "%s", fast);
    cr_expect(strstr(fast, "ex2.approx.ftz.f32"), "%s", fast);
    cr_expect(strstr(fast, "sqrt.approx"), "%s", fast);
    cr_expect(strstr(fast, "fma.rn.f32"), "contracted by default:\n%s", fast);
    free(fast);
    Captured cap = {0};
    Compilation *c = compile_to_bir("t.blk", src, NULL, &cap);
    NvptxOptions opt = {.arch = "sm_80", .precise_math = true, .no_fma = true};
    NvptxOutput out;
    cr_assert(compile_ptx(c, &opt, &out), "%s", cap.text);
    char *precise = out.text;
    cr_expect(strstr(precise, "div.rn.f32"), "%s", precise);
    cr_expect(strstr(precise, "sqrt.rn.f32"), "%s", precise);
    cr_expect(strstr(precise, "ex2.approx.f32"), "subnormal results kept:\n%s", precise);
    cr_expect_not(strstr(precise, "fma.rn.f32"), "%s", precise);
    cr_expect(strstr(precise, ".target sm_80"), "%s", precise);
    cr_expect_not(strstr(precise, ".minnctapersm"), "no occupancy target unless asked:\n%s", precise);
    nvptx_output_free(&out);
    /* an occupancy target is a directive of the kernel, after its thread count */
    opt = (NvptxOptions){.arch = "sm_90", .num_warps = 8, .min_blocks_per_sm = 3};
    cr_assert(compile_ptx(c, &opt, &out), "%s", cap.text);
    cr_expect(strstr(out.text, ".maxntid 256, 1, 1\n.minnctapersm 3\n"), "%s", out.text);
    char said[4096];
    cr_expect_eq(ptxas(out.text, "sm_90", said, sizeof said), 0, "%s", said);
    nvptx_output_free(&out);
    compilation_free(c);
    free(src);
}

Test(ptx, layouts_cover_each_shape_once_per_copy) {
    /* every element of a shape is held by some thread; with a layout no
     * larger than the shape, by exactly one */
    int32_t shapes[][2] = {{1024, 0}, {128, 0}, {8192, 0}, {32, 128}, {64, 64}, {4, 8}};
    int ranks[] = {1, 1, 1, 2, 2, 2};
    for (size_t s = 0; s < sizeof ranks / sizeof ranks[0]; s++) {
        BlkType t = type_with_shape(type_scalar(DT_F32), ranks[s], shapes[s]);
        Captured cap = {0};
        char src[256];
        if (ranks[s] == 1)
            snprintf(src, sizeof src, "kernel k(x: *f32 @align(16)) { let o = arange(0, %d); store(x + o, load(x + o)); }", shapes[s][0]);
        else
            snprintf(src, sizeof src, "kernel k(x: *f32 @align(16)) { let o = arange(0, %d)[:, None] * %d + arange(0, %d)[None, :]; store(x + o, load(x + o)); }",
                     shapes[s][0], shapes[s][1], shapes[s][1]);
        Compilation *c = compile_to_bir("t.blk", src, NULL, &cap);
        cr_assert(c && c->ok, "%s", cap.text);
        const BirFunction *f = c->bir->kernels[0];
        for (int warps = 1; warps <= 8; warps *= 2) {
            Arena a = {0};
            KernelPlan *p = nvptx_plan_kernel(&a, f, warps, NULL, false);
            const Layout *l = NULL;
            for (int v = 0; v < f->nvalues && !l; v++)
                if (shape_equal(f->values[v].type, t)) l = &p->layouts[v];
            cr_assert_not_null(l);
            int64_t n = type_numel(t);
            int *hits = calloc((size_t)n, sizeof *hits);
            for (int w = 0; w < warps; w++)
                for (int lane = 0; lane < 32; lane++)
                    for (int r = 0; r < l->nregs; r++) {
                        int64_t lin = nvptx_layout_coord(l, 0, r, w, lane);
                        if (l->rank == 2) lin = lin * t.shape[1] + nvptx_layout_coord(l, 1, r, w, lane);
                        hits[lin]++;
                    }
            int64_t copies = (int64_t)32 * warps * l->nregs / n;
            for (int64_t e = 0; e < n; e++)
                cr_expect_eq(hits[e], copies > 0 ? copies : 1, "shape %zu, %d warps: element %lld held %d times",
                             s, warps, (long long)e, hits[e]);
            free(hits);
            arena_free(&a);
        }
        compilation_free(c);
    }
}

Test(ptx, launch_facts_specialize_masked_loads_into_vectors) {
    char *src = test_file(BLK_EXAMPLES_DIR, "softmax.blk");
    Captured cap = {0};
    Compilation *c = compile_to_bir("t.blk", src, NULL, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    /* out, input, in_stride, out_stride, n_cols: aligned and divisible by 16 */
    int64_t div[5] = {16, 16, 16, 16, 16};
    char *ptx[2];
    for (int spec = 0; spec < 2; spec++) ptx[spec] = kernel_ptx_with_facts(c, "softmax", 0, spec ? div : NULL);
    cr_expect_not(strstr(ptx[0], "ld.global.v4"), "no facts, no vectors:\n%s", ptx[0]);
    cr_expect(strstr(ptx[1], "ld.global.v4.b32"), "%s", ptx[1]);
    cr_expect(strstr(ptx[1], "st.global.v4.b32"), "%s", ptx[1]);
    free(ptx[0]);
    free(ptx[1]);
    compilation_free(c);
    free(src);
}

/* Out of memory anywhere in the pipeline (front end, lowering, backend) is
 * an "out of memory" error, never a crash or an exit: the Nth arena chunk
 * fails, for every N until the compile no longer needs that many. Under
 * ASan this also shows the failed paths leak nothing. */
Test(ptx, every_out_of_memory_path_reports_an_error) {
    char *src = test_file(BLK_EXAMPLES_DIR, "layernorm.blk");
    int failures = 0;
    for (long n = 1; n < 1000; n++) {
        Captured cap = {0};
        CompileRequest req = {"layernorm.blk", src, strlen(src), NULL, 0, capture_diag, &cap};
        blk_arena_fail_countdown = n;
        Compilation *c = compile_front(&req);
        cr_assert(c, "N=%ld: no compilation", n);
        NvptxOptions opt = {.arch = "sm_90"};
        NvptxOutput out;
        bool ok = compile_ptx(c, &opt, &out);
        bool injected = blk_arena_fail_countdown == 0;
        blk_arena_fail_countdown = 0;
        if (ok) {
            cr_expect_not(injected, "N=%ld: a failed allocation went unnoticed", n);
            cr_expect(strstr(out.text, ".entry layer_norm_fwd"), "N=%ld", n);
            nvptx_output_free(&out);
            compilation_free(c);
            break;
        }
        failures++;
        cr_expect(injected, "N=%ld: failed without an injected failure:\n%s", n, cap.text);
        cr_expect(strstr(cap.text, "out of memory"), "N=%ld: %s", n, cap.text);
        compilation_free(c);
    }
    cr_expect_gt(failures, 3, "only %d allocation points were reached", failures);
    cr_log_info("%d out-of-memory points, each reported", failures);
    free(src);
}

/* The arch table: what a device of each compute capability builds for. */
Test(ptx, arch_for_a_device) {
    struct { int major, minor; const char *want; } cases[] = {
        {8, 0, "sm_80"}, {8, 6, "sm_86"}, {8, 7, "sm_86"}, {8, 9, "sm_89"}, {9, 0, "sm_90a"},
        {10, 0, "sm_90"}, {12, 0, "sm_90"}, {7, 5, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const NvptxArch *a = nvptx_arch_for_device(cases[i].major, cases[i].minor);
        if (!cases[i].want) cr_expect_null(a, "%d.%d", cases[i].major, cases[i].minor);
        else cr_expect(a && strcmp(a->name, cases[i].want) == 0, "%d.%d gave %s", cases[i].major, cases[i].minor,
                       a ? a->name : "none");
    }
    cr_expect_eq(nvptx_arch("sm_90")->max_shared_bytes, 227 * 1024);
    cr_expect_null(nvptx_arch("sm_75"));
}

/* Occupancy as the CUDA occupancy calculator counts it: registers given a
 * warp 256 at a time, 1 KiB of shared memory reserved per program. */
Test(ptx, programs_per_sm_and_the_registers_they_allow) {
    const NvptxArch *h = nvptx_arch("sm_90"), *a = nvptx_arch("sm_86");
    const char *limit;
    struct { const NvptxArch *a; int warps, regs; int64_t shared; int want; const char *why; } cases[] = {
        {h, 8, 103, 128, 2, "registers"},    /* 104 x 256 threads: two fit, not three */
        {h, 8, 128, 0, 2, "registers"},
        {h, 8, 129, 0, 1, "registers"},      /* 136 once rounded */
        {h, 4, 25, 128, 16, "warps"},
        {h, 1, 16, 0, 32, "programs"},
        {h, 4, 32, 100 * 1024, 2, "shared memory"},
        {a, 4, 32, 0, 12, "warps"},          /* 48 warps an SM */
        {a, 1, 16, 0, 16, "programs"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = nvptx_programs_per_sm(cases[i].a, cases[i].warps, cases[i].regs, cases[i].shared, &limit);
        cr_expect(n == cases[i].want && strcmp(limit, cases[i].why) == 0, "case %zu: %d (%s), expected %d (%s)", i, n,
                  limit, cases[i].want, cases[i].why);
    }
    cr_expect_eq(nvptx_registers_for(NVPTX_SM_REGISTERS, 2, 8), 128);
    cr_expect_eq(nvptx_registers_for(NVPTX_SM_REGISTERS, 1, 8), 255);
    cr_expect_eq(nvptx_registers_for(NVPTX_SM_REGISTERS, 32, 1), 64);
    cr_expect_eq(nvptx_registers_for(NVPTX_SM_REGISTERS, 3, 8), 80); /* 85 rounded down to 8 */
    /* the automatic target: room of 8 or more registers under 2 or more programs (2 is all the
     * shared memory allows here) */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 2, 8, 103, 0, false), 2);  /* 104 of 128 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 2, 8, 120, 0, false), 2);  /* 120 + 8 = 128: the edge */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 2, 8, 121, 0, false), 0);  /* 128 of 128 once rounded */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 1, 1, 8, 40, 0, false), 0);   /* one program an SM */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 16, 16, 4, 25, 0, false), 0); /* 32 of 32 */
    /* or one program more, where registers alone stop it and ptxas is at most 8 over */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 3, 4, 4, 136, 0, false), 4);  /* 136: 128 give 4 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 3, 4, 4, 137, 0, false), 3);  /* 9 over: room under 3 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 3, 8, 103, 0, false), 2);  /* layer_norm_fwd: 23 over 80 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 3, 3, 4, 136, 0, false), 3);  /* shared memory stops a 4th */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 1, 2, 8, 130, 0, false), 2);  /* 130: 128 give 2 */
    /* a persistent kernel: up to a third over */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 3, 4, 4, 144, 0, true), 4);   /* attention D = 64: 16 over */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 1, 2, 8, 170, 0, true), 2);   /* 42 over 128 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 1, 2, 8, 171, 0, true), 0);   /* 43 */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 3, 8, 107, 0, true), 2);   /* 27 over 80: room under 2 */
    /* never below the registers a wgmma needs (a gpu_ops kernel, m64n32k16: 10 programs of 44
     * registers; 11 allow 40, and ptxas refused it under 42) */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 10, 16, 4, 44, 0, false), 11);
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 10, 16, 4, 44, 42, false), 0);
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 10, 16, 4, 44, 40, false), 11); /* the edge */
    cr_expect_eq(nvptx_occupancy_target(NVPTX_SM_REGISTERS, 2, 2, 8, 103, 129, false), 0); /* the same for room under 2 */
    char names[128];
    cr_expect_str_eq(nvptx_arch_names(names, sizeof names), "sm_80, sm_86, sm_89, sm_90 or sm_90a");
}

/* The runtime adds an occupancy target to a kernel's PTX without compiling
 * it again (nvptx_with_occupancy_target): for every kernel of the
 * examples, on sm_80 and sm_90a, that text is exactly what compiling with
 * the target gives; a kernel with a producer warpgroup (which a target of
 * more than one program drops) or a bulk reduction (whose stagings the
 * target may refuse) is refused, and built again. */
Test(ptx, an_occupancy_target_added_to_the_ptx_is_the_ptx_built_with_it, .timeout = 400) {
    const char *archs[] = {"sm_80", "sm_90a"};
    int patched = 0;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        char *src = test_file(BLK_EXAMPLES_DIR, configs[i].file);
        Captured cap = {0};
        Compilation *c = compile_to_bir("t.blk", src, configs[i].defs, &cap);
        cr_assert(c && c->ok, "%s", cap.text);
        for (int a = 0; a < 2; a++)
            for (int k = 0; k < c->bir->nkernels; k++) {
                const char *name = c->bir->kernels[k]->name;
                NvptxOptions opt = {.arch = archs[a], .only_kernel = name};
                NvptxOutput plain, built;
                cr_assert(compile_ptx(c, &opt, &plain));
                opt.min_blocks_per_sm = 3;
                cr_assert(compile_ptx(c, &opt, &built));
                char *added = nvptx_with_occupancy_target(plain.text, 3);
                /* a bulk reduction's stagings depend on the target, and a producer's code (its .minnctapersm
                 * 1): built again */
                if (strstr(plain.text, "cp.reduce.async.bulk") || strstr(plain.text, ".minnctapersm"))
                    cr_expect_null(added, "%s %s %s", configs[i].file, archs[a], name);
                else
                    cr_expect(added && strcmp(added, built.text) == 0, "%s %s %s", configs[i].file, archs[a], name);
                patched += added != NULL;
                free(added);
                nvptx_output_free(&plain);
                nvptx_output_free(&built);
            }
        compilation_free(c);
        free(src);
    }
    cr_expect_geq(patched, 40);
    int64_t facts[12] = {16, 16, 16, 16, 16, 16, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE, 16, NVPTX_PARAM_ONE};
    NvptxOutput out = matmul_sm90a(facts, 0, NULL); /* a producer warpgroup */
    cr_expect(strstr(out.kernels[0].notes, "a producer warpgroup"), "%s", out.kernels[0].notes);
    cr_expect_null(nvptx_with_occupancy_target(out.text, 2));
    nvptx_output_free(&out);
}

/* A wgmma kernel's register floor (NvptxKernel.min_regs): ptxas builds it at
 * the occupancy target that allows that many registers. Two of gpu_ops'
 * kernels, which the runtime's automatic target once asked for one program
 * an SM more than that allows, and ptxas refused (C7602): an m64n32 dot at
 * 11 programs an SM (40 registers), two pipelined m64n64 loops at 9 (56).
 * An mma.sync build has no floor. */
Test(ptx, a_wgmma_kernels_register_floor_is_what_ptxas_needs, .timeout = 60) {
    static const struct {
        const char *src;
        int floor, at, below; /* the targets allowing the floor, and fewer registers */
    } cases[] = {{TENSOR_CORE_DOTS_KERNEL, 16 + 26, 10, 11}, {PIPELINED_DOT_LOOPS_KERNEL, 32 + 26, 8, 9}};
    static const int64_t aligned[5] = {16, 16, 16, 16, 16}; /* as gpu_ops launches them */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        NvptxOutput out = output_of(cases[i].src, NULL,
                                    (NvptxOptions){.arch = "sm_90a", .num_warps = 4, .only_kernel = "k", .param_div = aligned});
        cr_expect_eq(out.kernels[0].min_regs, cases[i].floor, "case %zu: %s", i, out.kernels[0].notes);
        cr_expect(strstr(out.kernels[0].notes, "wgmma"), "case %zu: %s", i, out.kernels[0].notes);
        nvptx_output_free(&out);
        cr_expect_geq(nvptx_registers_for(NVPTX_SM_REGISTERS, cases[i].at, 4), cases[i].floor);
        cr_expect_lt(nvptx_registers_for(NVPTX_SM_REGISTERS, cases[i].below, 4), cases[i].floor);
        char said[4096];
        for (int below = 0; below < 2; below++) {
            int target = below ? cases[i].below : cases[i].at;
            out = output_of(cases[i].src, NULL, (NvptxOptions){.arch = "sm_90a", .num_warps = 4, .only_kernel = "k",
                                                                 .param_div = aligned, .min_blocks_per_sm = target});
            int status = ptxas(out.text, "sm_90a", said, sizeof said);
            cr_expect(below ? status != 0 && strstr(said, "C7602") : status == 0, "case %zu, %d programs an SM: %s", i,
                      target, said);
            nvptx_output_free(&out);
        }
        out = output_of(cases[i].src, NULL, (NvptxOptions){.arch = "sm_80", .num_warps = 4, .only_kernel = "k",
                                                            .param_div = aligned});
        cr_expect_eq(out.kernels[0].min_regs, 0);
        nvptx_output_free(&out);
    }
}

Test(ptx, device_print_prefix_is_text_not_format) {
    char *ptx = ptx_of("kernel k(x: *f32) { device_print(\"50%s \", load(x)); }", NULL, "sm_90", 0);
    /* "50%%s " in the format string's bytes: vprintf prints "50%s " and reads one argument */
    cr_expect(strstr(ptx, "53, 48, 37, 37, 115, 32"), "%s", ptx);
    cr_expect_not(strstr(ptx, "48, 37, 115"), "%s", ptx);
    free(ptx);
}

/* Every one of the NUL-separated `words` (ending in an empty one) is in text. */
static void expect_all_in(const char *text, const char *words, const char *what) {
    for (const char *w = words; *w; w += strlen(w) + 1) cr_expect(strstr(text, w), "%s: %s", what, w);
}

static void expect_assembles(const char *ptx, const char *arch) {
    char log[4096];
    cr_expect_eq(ptxas(ptx, arch, log, sizeof log), 0, "%s: ptxas: %s", arch, log);
}

/* Each read-modify-write atomic is one atom instruction of its type; f32
 * max/min split on the sign into integer max and min. */
Test(ptx, atomics_lower_to_their_instructions, .timeout = 60) {
    char *src = test_file(BLK_PTX_DIR, "atomics_lower_to_their_instructions_src.blk");
    char *ptx = ptx_of(src, NULL, "sm_80", 4);
    expect_all_in(ptx, "atom.acq_rel.gpu.global.max.s32\0atom.acq_rel.gpu.global.min.u32\0"
                       "atom.acq_rel.gpu.global.max.s64\0atom.acq_rel.gpu.global.and.b32\0"
                       "atom.acq_rel.gpu.global.or.b32\0atom.acq_rel.gpu.global.xor.b64\0",
                  "sm_80");
    expect_assembles(ptx, "sm_80");
    free(ptx);
    /* f16 and bf16 add (bf16 from sm_90 on) */
    char *half = test_file(BLK_PTX_DIR, "atomics_lower_to_their_instructions_half.blk");
    char *half_ptx = ptx_of(half, NULL, "sm_90", 4);
    expect_all_in(half_ptx, "atom.acq_rel.gpu.global.add.noftz.f16\0atom.acq_rel.gpu.global.add.noftz.bf16\0", "sm_90");
    expect_assembles(half_ptx, "sm_90");
    free(half_ptx);
    free(src); free(half);
}

/* sem= and scope= name the instruction's qualifiers; an atomic whose old
 * value nothing reads and whose sem has no acquire is a red (no result
 * register, no wait for the value); acq_rel and acquire stay atom. */
Test(ptx, atomic_sem_and_scope, .timeout = 60) {
    char *src = test_file(BLK_PTX_DIR, "atomic_sem_and_scope_src.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 4);
    expect_all_in(ptx, "red.relaxed.gpu.global.add.f32 [\0red.release.cta.global.add.noftz.f16 [\0"
                       "red.relaxed.sys.global.max.s32 [\0red.relaxed.sys.global.min.u32 [\0"
                       "atom.acquire.gpu.global.or.b32 %\0atom.relaxed.gpu.global.add.u32 %\0"
                       "red.relaxed.gpu.global.add.u32 [\0atom.release.gpu.global.exch.b32 %\0",
                  "sm_90");
    cr_expect_null(strstr(ptx, "acq_rel"), "no atomic keeps the default order");
    expect_assembles(ptx, "sm_90");
    free(ptx);
    /* a 2-D block whose pointers step by constants: one address a thread,
     * each element's offset written into its instruction */
    char *grid = test_file(BLK_PTX_DIR, "atomic_sem_and_scope_grid.blk");
    char *grid_ptx = ptx_of(grid, NULL, "sm_90", 4);
    int offsets = 0, reds = 0;
    for (const char *p = strstr(grid_ptx, "red.relaxed"); p; p = strstr(p + 1, "red.relaxed")) {
        const char *close = strchr(p, ']'), *plus = strchr(p, '+');
        reds++;
        offsets += plus && close && plus < close;
    }
    cr_expect_eq(reds, 32 * 64 / 128, "one red an element");
    cr_expect_eq(offsets, reds - 1, "every red but the first at an immediate offset from one address");
    expect_assembles(grid_ptx, "sm_90");
    free(grid_ptx);
    free(src); free(grid);
}

/* The math library's functions are IEEE operations only (no .approx: that
 * is what makes them equal to the interpreter's bit for bit), the rounding
 * functions one cvt each, umulhi a mul.hi; ptxas accepts all of it. */
Test(ptx, math_builtins_lower_to_exact_instructions, .timeout = 60) {
    char *src = test_file(BLK_PTX_DIR, "math_builtins_lower_to_exact_instructions.blk");
    const char *arches[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        char *ptx = ptx_of(src, NULL, arches[a], 4);
        const char *lib = strstr(ptx, ".entry k"), *rounding = strstr(ptx, ".entry r");
        cr_assert(lib && rounding);
        char *lib_body = strndup(lib, (size_t)(rounding > lib ? rounding - lib : (long)strlen(lib)));
        cr_expect_eq(count_of(lib_body, ".approx"), 0, "%s: the library uses no approximate instruction", arches[a]);
        cr_expect_gt(count_of(lib_body, "fma.rn.f32"), 20, "%s: its polynomials are fma chains", arches[a]);
        cr_expect_gt(count_of(lib_body, "div.rn.f32"), 0, "%s: its divisions are IEEE-rounded", arches[a]);
        expect_all_in(rounding, "cvt.rmi.f32.f32\0cvt.rpi.f32.f32\0cvt.rzi.f32.f32\0cvt.rni.f32.f32\0mul.hi.u32\0",
                      arches[a]);
        expect_assembles(ptx, arches[a]);
        free(lib_body);
        free(ptx);
    }
    free(src);
}

/* Masked accesses of two 8-bit elements a thread (2 bytes): both move through
 * one 32-bit register as a u16. They once bitcast the first element alone to
 * i16 (invalid LLVM IR, an internal error: fuzz_frontend found it on
 * quantize.blk with 16 warps under launch facts; tests/fuzz/regressions). */
Test(ptx, masked_accesses_of_two_bytes_a_thread_pack_both) {
    char *src = test_file(BLK_PTX_DIR, "masked_accesses_of_two_bytes_a_thread_pack_both.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 16); /* 1024 elements over 512 threads: 2 a thread */
    cr_expect(strstr(ptx, "ld.global.u16"), "%s", ptx);
    cr_expect(strstr(ptx, "st.global.u16"), "%s", ptx);
    char out[4096];
    cr_expect_eq(ptxas(ptx, "sm_90", out, sizeof out), 0, "%s", out);
    free(ptx);
    free(src);
}

/* `range(..., unroll = N)` reaches LLVM as the loop's unroll count (the body
 * appears N times in the unrolled loop, plus a remainder loop) and `unroll = 1`
 * keeps the loop rolled, down to ptxas (.pragma "nounroll"). */
Test(ptx, a_loops_unroll_factor_reaches_llvm_and_ptxas) {
    char *src = test_file(BLK_PTX_DIR, "a_loops_unroll_factor_reaches_llvm_and_ptxas.blk");
    const char *four[] = {"UNROLL=4", NULL}, *one[] = {"UNROLL=1", NULL};
    char *ptx4 = ptx_of(src, four, "sm_90", 0), *ptx1 = ptx_of(src, one, "sm_90", 0);
    /* unrolled four times: four loads in the main loop, one in the remainder */
    cr_expect_eq(count_of(ptx4, "ld.global"), 5, "%s", ptx4);
    cr_expect_eq(count_of(ptx1, "ld.global"), 1, "%s", ptx1);
    cr_expect(strstr(ptx1, ".pragma \"nounroll\""), "%s", ptx1);
    expect_assembles(ptx4, "sm_90");
    expect_assembles(ptx1, "sm_90");
    free(ptx4);
    free(ptx1);
    free(src);
}

/* device_assert costs nothing without debug; with it, each thread calls
 * __assertfail (which the driver links) when an element it holds fails.
 * assume(N % K == 0) at the top of a body is a launch fact, as --assume N%K:
 * the masked accesses widen to 16 bytes; in a debug build it is checked too. */
Test(ptx, device_assert_in_debug_builds_and_assume_as_a_launch_fact) {
    const char *src = "kernel k(x: *f32 @align(16), y: *f32 @align(16), n: i32) {\n"
                      "  ASSUME\n"
                      "  let i = arange(0, 1024);\n"
                      "  let v = load(x + i, i < n);\n"
                      "  device_assert(v == v, \"not NaN\", i < n);\n"
                      "  store(y + i, v, i < n);\n"
                      "}\n";
    char with[512], without[512];
    snprintf(with, sizeof with, "%.*sassume(n %% 16 == 0);%s", (int)(strstr(src, "ASSUME") - src), src,
             strstr(src, "ASSUME") + 6);
    snprintf(without, sizeof without, "%.*s%s", (int)(strstr(src, "ASSUME") - src), src, strstr(src, "ASSUME") + 6);
    char *plain = ptx_with(without, NULL, (NvptxOptions){.arch = "sm_90"});
    char *debug = ptx_with(without, NULL, (NvptxOptions){.arch = "sm_90", .debug = true});
    char *assumed = ptx_with(with, NULL, (NvptxOptions){.arch = "sm_90"});
    char *assumed_debug = ptx_with(with, NULL, (NvptxOptions){.arch = "sm_90", .debug = true});
    cr_expect_null(strstr(plain, "__assertfail"), "%s", plain);
    cr_expect_eq(count_of(debug, "\t__assertfail,"), 1, "one call, after the thread's elements: %s", debug);
    cr_expect(strstr(debug, "device_assert: not NaN") || strstr(debug, "100, 101, 118, 105, 99, 101"), "%s", debug);
    /* without the fact the masked accesses are 4 bytes; with it, 16 */
    cr_expect_eq(count_of(plain, ".v4.f32") + count_of(plain, ".v4.b32"), 0, "%s", plain);
    cr_expect_gt(count_of(assumed, ".v4.f32") + count_of(assumed, ".v4.b32"), 0, "%s", assumed);
    cr_expect_eq(count_of(assumed_debug, "\t__assertfail,"), 2, "the assert and the assumption: %s", assumed_debug);
    expect_assembles(debug, "sm_90");
    expect_assembles(assumed_debug, "sm_90");
    free(plain), free(debug), free(assumed), free(assumed_debug);
}

/* Triton's cache_modifier, eviction_policy and volatile reach the PTX as its
 * qualifiers, masked or not, block or scalar; on sm_80 (PTX 7.0, before
 * eviction priorities) the eviction hint is left out and the PTX assembles. */
Test(ptx, cache_controls_become_ptx_qualifiers) {
    char *src = test_file(BLK_PTX_DIR, "cache_controls_become_ptx_qualifiers.blk");
    char *ptx = ptx_of(src, NULL, "sm_90", 0), *ptx80 = ptx_of(src, NULL, "sm_80", 0);
    expect_all_in(ptx, "ld.global.cg.v4.b32\0ld.global.L1::evict_last.v4.b32\0ld.volatile.global.b32\0"
                       "ld.global.cv.v4.b32\0st.global.cs.v4.b32\0st.global.L1::evict_first.v4.b32\0st.global.wt.b32\0",
                  "sm_90");
    cr_expect_null(strstr(ptx, ".wb"), ".wb is PTX's default store: %s", ptx);
    cr_expect_null(strstr(ptx80, "evict"), "%s", ptx80);
    cr_expect(strstr(ptx80, "ld.global.cg.v4.b32"), "%s", ptx80);
    expect_assembles(ptx, "sm_90");
    expect_assembles(ptx80, "sm_80");
    free(ptx);
    free(ptx80);
    free(src);
}

/* gdc_wait and gdc_launch_dependents are griddepcontrol on sm_90 (PTX 7.8), and the
 * contract says a launch may overlap the kernel with the grid before it; on sm_80 a grid
 * starts only after the one before it ends, so they compile to nothing. */
Test(ptx, grid_dependency_control_on_sm90_and_nothing_before) {
    char *src = test_file(BLK_PTX_DIR, "grid_dependency_control_on_sm90_and_nothing_before.blk");
    Captured cap = {0};
    Compilation *c = compile_to_bir("t.blk", src, NULL, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    cr_expect(bir_waits_on_grid(c->bir->kernels[0]));
    compilation_free(c);
    char *ptx90 = ptx_of(src, NULL, "sm_90", 0), *ptx80 = ptx_of(src, NULL, "sm_80", 0);
    cr_expect_eq(count_of(ptx90, "griddepcontrol.wait;"), 1, "%s", ptx90);
    cr_expect_eq(count_of(ptx90, "griddepcontrol.launch_dependents;"), 1, "%s", ptx90);
    cr_expect_null(strstr(ptx80, "griddepcontrol"), "%s", ptx80);
    expect_assembles(ptx90, "sm_90");
    expect_assembles(ptx80, "sm_80");
    free(ptx90), free(ptx80);
    free(src);
}

/* inline_asm_elementwise with pack: one asm statement for each `pack` of a
 * thread's elements (256 elements on 4 warps: 2 a thread, so 1 statement for
 * pack 2 and, padded, 1 for pack 4), 8-bit and 16-bit elements packed into
 * 32-bit registers, two f32 outputs; ptxas takes it on every arch. */
Test(ptx, inline_asm_packs_elements_into_registers) {
    char *src = test_file(BLK_PTX_DIR, "inline_asm_packs_elements_into_registers.blk");
    const char *archs[] = {"sm_80", "sm_90", "sm_90a"};
    for (int a = 0; a < 3; a++) {
        const char *no_defs[] = {NULL};
        char *ptx = ptx_with(src, no_defs, (NvptxOptions){.arch = archs[a], .num_warps = 4});
        cr_expect_eq(count_of(ptx, "0x1F1F1F1F"), 1, "%s: one and.b32 for the thread's 2 u8 (padded to 4)", archs[a]);
        cr_expect_eq(count_of(ptx, "xor.b32 %"), 1, "%s: one xor for the thread's 2 i16", archs[a]);
        cr_expect_eq(count_of(ptx, "mul.f32"), 2, "%s: one asm (two mul.f32) for the thread's 2 f32", archs[a]);
        char out[4096];
        cr_expect_eq(ptxas(ptx, archs[a], out, sizeof out), 0, "%s: %s", archs[a], out);
        free(ptx);
    }
    /* pack 16 of four u32 arguments: 80 operand registers (once past a fixed table) */
    char cons[512] = "", big[1024];
    for (int i = 0; i < 80; i++) strcat(cons, i < 16 ? "=r," : "r,");
    cons[strlen(cons) - 1] = 0;
    snprintf(big, sizeof big,
             "kernel k(x: *u32, o: *u32) {\n"
             "  let v = load(x + arange(0, 256));\n"
             "  store(o + arange(0, 256), inline_asm_elementwise(\"mov.b32 $0, $16;\", \"%s\", (v, v, v, v), u32, true, 16));\n"
             "}\n", cons);
    const char *no_defs[] = {NULL};
    char *ptx = ptx_with(big, no_defs, (NvptxOptions){.arch = "sm_90"});
    char out[4096];
    cr_expect_eq(ptxas(ptx, "sm_90", out, sizeof out), 0, "%s", out);
    free(ptx);
    free(src);
}
