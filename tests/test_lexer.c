/* Lexer: token kinds, spans (line and column), literals, comments, errors. */
#include <criterion/criterion.h>

#include "support.h"

typedef struct {
    Token toks[256];
    int n;
    Captured cap;
    Source src;
    DiagEngine de;
} Lexed;

static void lex(Lexed *l, const char *text) {
    memset(l, 0, sizeof *l);
    l->src = (Source){"t.blk", text, strlen(text)};
    l->de = (DiagEngine){.callback = capture_diag, .user = &l->cap};
    Lexer lx;
    lexer_init(&lx, &l->src, &l->de);
    do {
        l->toks[l->n] = lexer_next(&lx);
    } while (l->toks[l->n++].kind != TOK_EOF && l->n < 256);
}

Test(lexer, keywords_types_and_identifiers) {
    Lexed l;
    lex(&l, "kernel fn const let var for in while if else return as true false None type "
            "i1 bool i32 i64 u32 f16 bf16 f32 kernels _x9");
    TokenKind want[] = {TOK_KERNEL, TOK_FN, TOK_CONST, TOK_LET, TOK_VAR, TOK_FOR, TOK_IN,
                        TOK_WHILE, TOK_IF, TOK_ELSE, TOK_RETURN, TOK_AS, TOK_TRUE, TOK_FALSE,
                        TOK_NONE, TOK_TYPE, TOK_DTYPE, TOK_DTYPE, TOK_DTYPE, TOK_DTYPE,
                        TOK_DTYPE, TOK_DTYPE, TOK_DTYPE, TOK_DTYPE, TOK_IDENT, TOK_IDENT, TOK_EOF};
    cr_assert_eq(l.n, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < l.n; i++) cr_expect_eq(l.toks[i].kind, want[i], "token %d", i);
    cr_expect_eq(l.cap.count, 0);
}

Test(lexer, operators_longest_match) {
    Lexed l;
    lex(&l, "<<= >>= << >> <= >= == != && || += -= *= /= %= &= |= ^= -> < > = ! ~ @");
    TokenKind want[] = {TOK_SHL_ASSIGN, TOK_SHR_ASSIGN, TOK_SHL, TOK_SHR, TOK_LE, TOK_GE,
                        TOK_EQ, TOK_NE, TOK_ANDAND, TOK_OROR, TOK_PLUS_ASSIGN,
                        TOK_MINUS_ASSIGN, TOK_STAR_ASSIGN, TOK_SLASH_ASSIGN,
                        TOK_PERCENT_ASSIGN, TOK_AMP_ASSIGN, TOK_PIPE_ASSIGN,
                        TOK_CARET_ASSIGN, TOK_ARROW, TOK_LT, TOK_GT, TOK_ASSIGN, TOK_BANG,
                        TOK_TILDE, TOK_AT, TOK_EOF};
    cr_assert_eq(l.n, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < l.n; i++) cr_expect_eq(l.toks[i].kind, want[i], "token %d", i);
}

Test(lexer, numbers) {
    Lexed l;
    lex(&l, "0 42 0x7F 1.0 2. 1e-5 3.5E+2 7e3");
    TokenKind want[] = {TOK_INT, TOK_INT, TOK_INT, TOK_FLOAT, TOK_FLOAT, TOK_FLOAT,
                        TOK_FLOAT, TOK_FLOAT, TOK_EOF};
    cr_assert_eq(l.n, 9);
    for (int i = 0; i < l.n; i++) cr_expect_eq(l.toks[i].kind, want[i], "token %d", i);
    cr_expect_eq(l.toks[2].span.len, 4);
}

Test(lexer, spans_track_lines_columns_and_comments) {
    Lexed l;
    lex(&l, "let a\n  /* two\nlines */ b // tail\n\tc");
    cr_assert_eq(l.n, 5);
    cr_expect_eq(l.toks[0].span.line, 1);
    cr_expect_eq(l.toks[0].span.col, 1);
    cr_expect_eq(l.toks[1].span.col, 5);
    cr_expect_eq(l.toks[2].span.line, 3); /* b, after a two-line comment */
    cr_expect_eq(l.toks[2].span.col, 10);
    cr_expect_eq(l.toks[3].span.line, 4);
    cr_expect_eq(l.toks[3].span.col, 2); /* a tab counts as one column */
    cr_expect_eq(l.toks[3].span.offset, (uint32_t)(strchr(l.src.text, 'c') - l.src.text));
}

Test(lexer, strings_and_errors) {
    Lexed l;
    lex(&l, "\"a\\\"b\" $ \"open");
    cr_expect_eq(l.toks[0].kind, TOK_STRING);
    cr_expect_eq(l.toks[0].span.len, 6);
    cr_expect_eq(l.toks[1].kind, TOK_ERROR);
    cr_expect_eq(l.toks[2].kind, TOK_ERROR);
    cr_expect_eq(l.cap.count, 2);
    cr_expect(strstr(l.cap.text, "unexpected character '$'"));
    cr_expect(strstr(l.cap.text, "unterminated string literal"));
}

/* Lexes text of len bytes (NULs included) to the end; returns the token count. */
static int count_tokens(const char *text, size_t len, Captured *cap) {
    Source src = {"t.blk", text, len};
    DiagEngine de = {.callback = capture_diag, .user = cap};
    Lexer lx;
    lexer_init(&lx, &src, &de);
    int n = 0;
    while (lexer_next(&lx).kind != TOK_EOF) n++;
    return n;
}

Test(lexer, embedded_nul_is_an_error_not_the_end) {
    const char text[] = "let a\0 b";
    Captured cap = {0};
    cr_expect_eq(count_tokens(text, sizeof text - 1, &cap), 3); /* let a b */
    cr_expect(strstr(cap.text, "null character"));
}

Test(lexer, a_closed_block_comment_may_hold_a_nul) {
    const char text[] = "let /* a\0b */ c";
    Captured cap = {0};
    cr_expect_eq(count_tokens(text, sizeof text - 1, &cap), 2); /* let c */
    cr_expect_eq(cap.count, 0, "%s", cap.text);
}
