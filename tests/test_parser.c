/* Parser: precedence, postfix forms, named arguments, error recovery and
 * robustness on hostile input. */
#include <criterion/criterion.h>

#include "support.h"

/* Parse `let v = EXPR;` inside a kernel and return the init expression. */
static Expr *parse_init(Compilation **c, Captured *cap, const char *expr) {
    static char src[4096];
    snprintf(src, sizeof src, "kernel k(a: i32, b: i32, c: i32, x: f32) {\n    let v = %s;\n}\n", expr);
    *c = compile_str(src, cap);
    cr_assert(*c);
    KernelDef *k = find_kernel((*c)->module, "k");
    cr_assert(k);
    Stmt *s = find_let(k->body, "v");
    cr_assert(s);
    return s->u.let.init;
}

Test(parser, multiplication_binds_tighter_than_addition) {
    Captured cap = {0};
    Compilation *c;
    Expr *e = parse_init(&c, &cap, "a + b * c");
    cr_assert_eq(e->kind, E_BINARY);
    cr_expect_eq(e->u.binary.op, OP_ADD);
    cr_expect_eq(e->u.binary.rhs->u.binary.op, OP_MUL);
    compilation_free(c);
}

Test(parser, binary_operators_are_left_associative) {
    Captured cap = {0};
    Compilation *c;
    Expr *e = parse_init(&c, &cap, "a - b - c");
    cr_expect_eq(e->u.binary.op, OP_SUB);
    cr_expect_eq(e->u.binary.lhs->kind, E_BINARY);
    cr_expect_eq(e->u.binary.rhs->kind, E_NAME);
    cr_expect_eq(e->is_const, false);
    compilation_free(c);
}

Test(parser, bitwise_and_is_looser_than_comparison_as_in_c) {
    Captured cap = {0};
    Compilation *c;
    Expr *e = parse_init(&c, &cap, "a & b == c");
    cr_expect_eq(e->u.binary.op, OP_AND);
    cr_expect_eq(e->u.binary.rhs->u.binary.op, OP_EQ);
    compilation_free(c);
}

Test(parser, full_precedence_ladder) {
    /* || < && < | < ^ < & < == < < < << < + < * < as < unary */
    Captured cap = {0};
    Compilation *c;
    Expr *e = parse_init(&c, &cap, "a < b || a < c && b << 1 < c + a * -b as i32");
    cr_assert_eq(e->u.binary.op, OP_LOR);
    Expr *land = e->u.binary.rhs;
    cr_assert_eq(land->u.binary.op, OP_LAND);
    Expr *lt = land->u.binary.rhs;
    cr_assert_eq(lt->u.binary.op, OP_LT);
    cr_expect_eq(lt->u.binary.lhs->u.binary.op, OP_SHL);
    Expr *add = lt->u.binary.rhs;
    cr_assert_eq(add->u.binary.op, OP_ADD);
    Expr *mul = add->u.binary.rhs;
    cr_assert_eq(mul->u.binary.op, OP_MUL);
    cr_assert_eq(mul->u.binary.rhs->kind, E_CAST); /* (-b) as i32 */
    cr_expect_eq(mul->u.binary.rhs->u.cast.operand->kind, E_UNARY);
    cr_expect_eq(cap.count, 0, "%s", cap.text);
    compilation_free(c);
}

Test(parser, index_forms_and_named_arguments) {
    Captured cap = {0};
    Compilation *c = compile_str(
        "kernel k(p: *f32, n: i32) {\n"
        "    let r = arange(0, 8);\n"
        "    let m = r[:, None] < r[None, :];\n"
        "    let v = load(p + r, mask = r < n, other = 0.0);\n"
        "}\n",
        &cap);
    cr_assert(c->ok, "%s", cap.text);
    KernelDef *k = find_kernel(c->module, "k");
    Expr *m = find_let(k->body, "m")->u.let.init;
    cr_expect_eq(m->u.binary.lhs->kind, E_INDEX);
    cr_expect(m->u.binary.lhs->u.index.is_none[1]);
    cr_expect(m->u.binary.rhs->u.index.is_none[0]);
    Expr *v = find_let(k->body, "v")->u.let.init;
    cr_expect_eq(v->u.call.builtin, BI_LOAD);
    cr_expect_eq(v->u.call.args.len, 6); /* every parameter of load has its slot, absent ones NULL */
    compilation_free(c);
}

Test(parser, recovers_and_reports_several_errors) {
    Captured cap = {0};
    Compilation *c = compile_str("kernel a(x: *f32) {\n"
                                 "    let p = ;\n"
                                 "    let q = 1 +* 2;\n"
                                 "    let r = 3;\n"
                                 "}\n"
                                 "kernel b(y: *f32) {\n"
                                 "    let s = ;\n"
                                 "}\n",
                                 &cap);
    cr_expect_not(c->ok);
    cr_expect_eq(c->de.errors, 3, "%s", cap.text);
    cr_expect_eq(c->module->kernels.len, 2);
    cr_expect(find_let(find_kernel(c->module, "a")->body, "r"), "statement after errors kept");
    compilation_free(c);
}

Test(parser, deep_nesting_is_an_error_not_a_stack_overflow) {
    static char src[200000];
    int n = 0;
    n += sprintf(src + n, "kernel k(x: *f32) {\n    let a = ");
    for (int i = 0; i < 50000; i++) src[n++] = '(';
    n += sprintf(src + n, "1");
    for (int i = 0; i < 50000; i++) src[n++] = ')';
    n += sprintf(src + n, ";\n    let b = ");
    for (int i = 0; i < 50000; i++) src[n++] = '-';
    sprintf(src + n, "1;\n}\n");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap.text, "nesting too deep"), "%s", cap.text);
    compilation_free(c);
}

Test(parser, long_operator_cast_and_index_chains_are_bounded) {
    /* Each of these builds a left-deep tree in a parser loop; later passes
     * recurse over it, so it counts against the nesting limit too. */
    static const char *const parts[] = {"\n + 1", "\n as i32", "\n[:, None][:, :]"};
    for (int p = 0; p < 3; p++) {
        static char src[400000];
        int n = sprintf(src, "kernel k(x: *f32) {\n    let a = arange(0, 4)");
        for (int i = 0; i < 20000; i++) n += sprintf(src + n, "%s", parts[p]);
        sprintf(src + n, ";\n}\n");
        Captured cap = {0};
        Compilation *c = compile_str(src, &cap);
        cr_expect_not(c->ok);
        cr_expect(strstr(cap.text, "nesting too deep"), "chain %d: %.200s", p, cap.text);
        compilation_free(c);
    }
}

Test(parser, a_long_flat_sum_is_not_too_deep) {
    /* 400 terms: a left-deep tree of 399 levels, under the limit (regression: 200 was refused) */
    static char src[8000];
    int n = sprintf(src, "kernel k(x: *f32) {\n    let a = 1");
    for (int i = 0; i < 399; i++) n += sprintf(src + n, " + 1");
    sprintf(src + n, ";\n    static_assert(a == 400);\n}\n");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_expect(c->ok, "%s", cap.text);
    compilation_free(c);
}

Test(parser, deep_blocks_are_an_error_not_a_stack_overflow) {
    static char src[100000];
    int n = sprintf(src, "kernel k(x: *f32) {\n");
    for (int i = 0; i < 20000; i++) src[n++] = '{';
    for (int i = 0; i < 20000; i++) src[n++] = '}';
    sprintf(src + n, "\n}\n");
    Captured cap = {0};
    Compilation *c = compile_str(src, &cap);
    cr_expect_not(c->ok);
    cr_expect(strstr(cap.text, "nesting too deep"));
    compilation_free(c);
}

/* Deterministic garbage built from the language's own tokens: the front end
 * must report errors, never crash or hang (the fuzzer goes further). */
Test(parser, random_token_soup_never_crashes) {
    static const char *const words[] = {
        "kernel", "fn", "k", "(", ")", "{", "}", "[", "]", ",", ";", ":", "let", "var", "x",
        "=", "+", "*", "<", "1", "2.0", "f32", "*f16", "load", "store", "arange", "None", "as",
        "for", "in", "range", "if", "else", "while", "return", "@align(16)", "const", "\"s\"",
        "sum", "where", "&&", "-", "!", "type", "T", "zeros", "0x10", "rand"};
    unsigned seed = 12345;
    char src[2048];
    for (int iter = 0; iter < 3000; iter++) {
        int n = 0;
        int len = 1 + iter % 60;
        for (int i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            n += snprintf(src + n, sizeof src - (size_t)n, "%s ",
                          words[(seed >> 16) % (sizeof words / sizeof *words)]);
        }
        Captured cap = {0};
        Compilation *c = compile_str(src, &cap);
        cr_assert(c);
        compilation_free(c);
    }
}
