/* Sema: the types and shapes of every example, the promotion rules, constant
 * folding, const parameters and helper inlining. A test's kernel, where it is
 * written out, is tests/sema/TEST.blk. */
#include <criterion/criterion.h>

#include "support.h"

static Compilation *compile_example(const char *file, ConstDef *defs, int ndefs, Captured *cap) {
    char *src = test_file(BLK_EXAMPLES_DIR, file);
    CompileRequest req = {.name = file, .text = src, .len = strlen(src), .defs = defs,
                          .ndefs = ndefs, .diag = capture_diag, .diag_user = cap};
    Compilation *c = compile_front(&req);
    free(src);
    cr_assert(c);
    return c;
}

#define EXPECT_TYPE(c, kernel, name, want)                                                       \
    do {                                                                                         \
        char buf_[64];                                                                           \
        cr_expect_str_eq(let_type(c, kernel, name, buf_, sizeof buf_), want, "%s.%s", kernel,    \
                         name);                                                                  \
    } while (0)

Test(sema_examples, add) {
    Captured cap = {0};
    Compilation *c = compile_example("add.blk", NULL, 0, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "add", "offs", "[1024] i32");
    EXPECT_TYPE(c, "add", "mask", "[1024] i1");
    EXPECT_TYPE(c, "add", "a", "[1024] f32");
    compilation_free(c);
}

Test(sema_examples, softmax) {
    Captured cap = {0};
    Compilation *c = compile_example("softmax.blk", NULL, 0, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "softmax", "row", "i32");
    EXPECT_TYPE(c, "softmax", "x", "[1024] f32");
    EXPECT_TYPE(c, "softmax", "num", "[1024] f32");
    EXPECT_TYPE(c, "softmax", "y", "[1024] f32");
    compilation_free(c);
}

Test(sema_examples, dropout) {
    Captured cap = {0};
    Compilation *c = compile_example("dropout.blk", NULL, 0, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "dropout", "keep", "[1024] i1");
    EXPECT_TYPE(c, "dropout", "y", "[1024] f32");
    compilation_free(c);
}

Test(sema_examples, layernorm_all_four_kernels) {
    Captured cap = {0};
    Compilation *c = compile_example("layernorm.blk", NULL, 0, &cap);
    cr_assert(c->ok, "%s", cap.text);
    cr_expect_eq(c->module->kernels.len, 4);
    EXPECT_TYPE(c, "layer_norm_fwd", "X", "*f16");
    EXPECT_TYPE(c, "layer_norm_fwd", "acc", "[1024] f32");
    EXPECT_TYPE(c, "layer_norm_fwd", "mean", "f32");
    EXPECT_TYPE(c, "layer_norm_fwd", "rstd", "f32");
    EXPECT_TYPE(c, "layer_norm_fwd", "y", "[1024] f32");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "Count", "*i32");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "DW", "[1024] *f16");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "wdy", "[1024] f32");
    EXPECT_TYPE(c, "layer_norm_bwd_dx_det", "dw", "[1024] f32");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "partial_dw", "[1024] f16");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "count", "i32");
    EXPECT_TYPE(c, "layer_norm_bwd_dwdb", "mask", "[32, 128] i1");
    EXPECT_TYPE(c, "layer_norm_bwd_dwdb", "offs", "[32, 128] i32");
    EXPECT_TYPE(c, "layer_norm_bwd_dwdb", "dw", "[32, 128] f32");
    compilation_free(c);
}

Test(sema_examples, defines_respecialize_types_and_shapes) {
    Captured cap = {0};
    ConstDef defs[] = {{"T", "f32", false}, {"BLOCK_SIZE", "4096", false},
                       {"BLOCK_SIZE_M", "16", false}};
    Compilation *c = compile_example("layernorm.blk", defs, 3, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "layer_norm_fwd", "acc", "[4096] f32");
    EXPECT_TYPE(c, "layer_norm_fwd", "X", "*f32");
    EXPECT_TYPE(c, "layer_norm_bwd_dx", "partial_dw", "[1024] f32");
    EXPECT_TYPE(c, "layer_norm_bwd_dwdb", "dw", "[16, 128] f32");
    for (int i = 0; i < 3; i++) cr_expect(defs[i].used);
    compilation_free(c);
}

Test(sema_examples, bad_define_values_are_errors) {
    Captured cap = {0};
    ConstDef defs[] = {{"BLOCK", "abc", false}};
    Compilation *c = compile_example("add.blk", defs, 1, &cap);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap.text, "-D BLOCK=abc: 'abc' is not a valid i32 value"), "%s", cap.text);
    compilation_free(c);

    Captured cap2 = {0};
    ConstDef defs2[] = {{"BLOCK", "1000", false}}; /* not a power of two: arange says so */
    c = compile_example("add.blk", defs2, 1, &cap2);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap2.text, "arange(0, 1000)"), "%s", cap2.text);
    compilation_free(c);

    Captured cap3 = {0};
    ConstDef defs3[] = {{"BLCK", "64", false}};
    c = compile_example("add.blk", defs3, 1, &cap3);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap3.text, "add.blk: error: -D BLCK: no kernel"), "%s", cap3.text);
    compilation_free(c);
}

Test(sema_rules, promotion_table) {
    /* (a, a weak, b, b weak) -> result, per docs/language.md §5 */
    struct { DType a; bool aw; DType b; bool bw; DType want; } rows[] = {
        {DT_F16, 0, DT_F32, 0, DT_F32},  {DT_BF16, 0, DT_F16, 0, DT_F32},
        {DT_F16, 0, DT_BF16, 0, DT_F32}, {DT_I32, 0, DT_F16, 0, DT_F16},
        {DT_I64, 0, DT_F32, 0, DT_F32},  {DT_I32, 0, DT_I64, 0, DT_I64},
        {DT_I32, 0, DT_U32, 0, DT_U32},  {DT_U32, 0, DT_I64, 0, DT_I64},
        {DT_I1, 0, DT_I32, 0, DT_I32},   {DT_I32, 1, DT_F16, 0, DT_F16},
        {DT_F32, 1, DT_F16, 0, DT_F16},  {DT_F32, 1, DT_I32, 0, DT_F32},
        {DT_I32, 1, DT_U32, 0, DT_U32},  {DT_I64, 1, DT_I32, 0, DT_I32},
        {DT_I32, 1, DT_F32, 1, DT_F32},  {DT_I32, 0, DT_I32, 1, DT_I32},
        {DT_BF16, 0, DT_F32, 1, DT_BF16},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        cr_expect_eq(dtype_promote(rows[i].a, rows[i].aw, rows[i].b, rows[i].bw), rows[i].want,
                     "row %zu", i);
}

Test(sema_rules, literal_and_mixed_types_in_context) {
    char *src = test_file(BLK_SEMA_DIR, "literal_and_mixed_types_in_context.blk");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "k", "a", "f16");
    EXPECT_TYPE(c, "k", "b", "f16");
    EXPECT_TYPE(c, "k", "c", "f32");
    EXPECT_TYPE(c, "k", "d", "u32");
    EXPECT_TYPE(c, "k", "e", "i64");
    EXPECT_TYPE(c, "k", "g", "i64");
    EXPECT_TYPE(c, "k", "i", "i1");
    EXPECT_TYPE(c, "k", "j", "f32");
    EXPECT_TYPE(c, "k", "s", "f32"); /* f16 sums accumulate and return f32 */
    EXPECT_TYPE(c, "k", "t", "f16");
    EXPECT_TYPE(c, "k", "am", "[4] i32");
    EXPECT_TYPE(c, "k", "bc", "[16, 32] i32");
    EXPECT_TYPE(c, "k", "cs", "[16] i64");
    EXPECT_TYPE(c, "k", "ex", "f32");
    EXPECT_TYPE(c, "k", "eh", "f16");
    EXPECT_TYPE(c, "k", "r", "[8] f32");
    EXPECT_TYPE(c, "k", "ri", "[8] u32");
    EXPECT_TYPE(c, "k", "wh", "[4] f16");
    EXPECT_TYPE(c, "k", "fm", "f16");
    compilation_free(c);
    free(src);
}

static int64_t const_of(Compilation *c, const char *name) {
    Stmt *s = find_let(find_kernel(c->module, "k")->body, name);
    cr_assert(s && s->u.let.sym && s->u.let.sym->is_const, "%s not constant", name);
    return s->u.let.sym->cv.i;
}

Test(sema_rules, constant_folding_follows_c) {
    char *src = test_file(BLK_SEMA_DIR, "constant_folding_follows_c.blk");
    Captured cap = {0};
    ConstDef defs[] = {{"B", "64", false}};
    Compilation *c = compile_defs(src, defs, 1, &cap);
    cr_assert(c->ok, "%s", cap.text);
    cr_expect_eq(const_of(c, "a"), 13);
    cr_expect_eq(const_of(c, "b"), -3);
    cr_expect_eq(const_of(c, "m"), -1);
    cr_expect_eq(const_of(c, "d"), 3);
    cr_expect_eq(const_of(c, "e"), 128);
    cr_expect_eq(const_of(c, "f"), 0x10f);
    cr_expect_eq(const_of(c, "g"), 0);
    cr_expect_eq(const_of(c, "h"), 2);
    cr_expect_eq(const_of(c, "hs"), INT32_MAX); /* saturates, as at run time (issue 9) */
    cr_expect_eq(const_of(c, "us"), 0);
    cr_expect_eq(const_of(c, "u"), 0x0fffffff);
    cr_expect_eq(const_of(c, "w"), 1); /* u32 wraps: (2^32-1)^2 mod 2^32 */
    cr_expect_eq(const_of(c, "nan_ne"), 1);
    cr_expect_eq(const_of(c, "nan_le"), 0);
    compilation_free(c);
    free(src);
}

Test(sema_rules, helpers_are_inlined_per_call_site_types) {
    char *src = test_file(BLK_SEMA_DIR, "helpers_are_inlined_per_call_site_types.blk");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "k", "a", "i32");
    EXPECT_TYPE(c, "k", "b", "[16] f32");
    cr_expect_eq(const_of(c, "c"), 9);
    Expr *call = find_let(find_kernel(c->module, "k")->body, "b")->u.let.init;
    cr_expect(call->u.call.inline_body);
    cr_expect(call->u.call.inline_result);
    compilation_free(c);
    free(src);
}

Test(sema_rules, variables_keep_their_type_through_loops) {
    char *src = test_file(BLK_SEMA_DIR, "variables_keep_their_type_through_loops.blk");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_assert(c->ok, "%s", cap.text);
    EXPECT_TYPE(c, "k", "acc", "[64] f32");
    EXPECT_TYPE(c, "k", "count", "i32");
    EXPECT_TYPE(c, "k", "p", "*f16");
    compilation_free(c);
    free(src);
}

/* A scope of more than 16 names is looked up through a hash table: it must
 * resolve, shadow and report redefinitions exactly as a small scope does. */
Test(sema_rules, large_scopes_resolve_like_small_ones) {
    static char src[8000];
    int n = sprintf(src, "kernel k(x: *f32) {\n    let v0 = 1;\n");
    for (int i = 1; i < 100; i++) n += sprintf(src + n, "    let v%d = v%d + 1;\n", i, i - 1);
    n += sprintf(src + n, "    let total = v99 + v50;\n"          /* 100 + 51 */
                          "    { let v50 = 1000; let inner = v50 + v99; }\n"); /* shadowed: 1100 */
    sprintf(src + n, "}\n");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_assert(c->ok, "%s", cap.text);
    cr_expect_eq(const_of(c, "total"), 151);
    cr_expect_eq(const_of(c, "v99"), 100);
    compilation_free(c);
    /* a redefinition late in a large scope, and a use of a name never declared */
    n = sprintf(src, "kernel k(x: *f32) {\n");
    for (int i = 0; i < 40; i++) n += sprintf(src + n, "    let v%d = %d;\n", i, i);
    sprintf(src + n, "    let v7 = 0;\n    let w = v40;\n}\n");
    cap = (Captured){0};
    c = compile_str(src, &cap);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap.text, "42:9: error: redefinition of 'v7' in the same scope"), "%s", cap.text);
    cr_expect(strstr(cap.text, "9: note: 'v7' was declared here"), "%s", cap.text);
    cr_expect(strstr(cap.text, "'v40'"), "%s", cap.text);
    compilation_free(c);
}

/* src compiled with -D name=value (no define when value is NULL): it must
 * compile when error is NULL, else fail with `error` among its diagnostics. */
static void expect_compile_with(const char *src, const char *name, const char *value, const char *error) {
    static Captured cap; /* large: not on the stack */
    memset(&cap, 0, sizeof cap);
    ConstDef def = {name, value, false};
    Compilation *c = compile_defs(src, &def, value ? 1 : 0, &cap);
    if (!error) cr_expect(c->ok, "%s=%s: %s", name, value ? value : "(default)", cap.text);
    else cr_expect(!c->ok && strstr(cap.text, error), "%s=%s: %s", name, value ? value : "(default)", cap.text);
    compilation_free(c);
}

/* An `if` on a compile-time condition checks only the branch taken (Triton
 * prunes a constexpr `if` before checking it): the other may name what does
 * not exist in this specialization, and a static_assert there does not fire. */
Test(sema, a_compile_time_if_checks_only_the_branch_taken) {
    char *src = test_file(BLK_SEMA_DIR, "a_compile_time_if_checks_only_the_branch_taken.blk");
    struct { const char *name, *value, *error; } cases[] = {
        {"MODE", "0", NULL},
        {"HAS_B", "true", "5:19: error: use of undeclared name 'bias'"},
        {"MODE", "1", "10:17: error: a string literal is not allowed here"},
        {"MODE", "2", "12:23: error: static assertion failed: mode 2 is not supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_compile_with(src, cases[i].name, cases[i].value, cases[i].error);
    free(src);
}

/* A const str parameter (Triton's string constexpr): compared with a literal
 * at compile time, so each value keeps its own branch; from its default or
 * -D. */
Test(sema, a_const_str_parameter_picks_a_branch_at_compile_time) {
    char *src = test_file(BLK_SEMA_DIR, "a_const_str_parameter_picks_a_branch_at_compile_time.blk");
    const char *unknown = "6:23: error: static assertion failed: unknown activation";
    struct { const char *value, *error; } cases[] = {{NULL, NULL}, {"silu", NULL}, {"gelu", unknown}, {"relu", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_compile_with(src, "ACT", cases[i].value, cases[i].error);
    free(src);
}

/* -D NAME=None that names no pointer: an error naming what is missing. */
Test(sema, a_none_define_without_its_pointer_is_an_error) {
    char *src = test_file(BLK_SEMA_DIR, "a_none_define_without_its_pointer_is_an_error.blk");
    struct { const char *name, *error; } cases[] = {
        {"k.b", NULL},
        {"k.c", "-D k.c=None: the module has no kernel 'k' with a pointer parameter 'c'"},
        {"other.b", "-D other.b=None: the module has no kernel 'other' with a pointer parameter 'b'"},
        {"zz", "-D zz=None: no kernel in this module has a pointer parameter named 'zz'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_compile_with(src, cases[i].name, "None", cases[i].error);
    free(src);
}
