/* lexer.re: tokens with spans, generated into lexer.c by re2c at build time.
 * The source is NUL-terminated, so the NUL acts as the sentinel. */
#include <string.h>

#include "blkc.h"

void lexer_init(Lexer *lx, const Source *src, DiagEngine *de) {
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->de = de;
    lx->cursor = src->text;
    lx->line = 1;
    lx->line_start = src->text;
    lx->last.kind = TOK_EOF;
}

static Token lex_token(Lexer *lx);

Token lexer_next(Lexer *lx) {
    lx->last = lex_token(lx);
    return lx->last;
}

static Span span_at(const Lexer *lx, const char *start, const char *end) {
    Span s;
    s.offset = (uint32_t)(start - lx->src->text);
    s.len = (uint32_t)(end - start);
    s.line = lx->line;
    s.col = (uint32_t)(start - lx->line_start) + 1;
    return s;
}

static Token make(const Lexer *lx, TokenKind k, const char *start) {
    Token t;
    t.kind = k;
    t.span = span_at(lx, start, lx->cursor);
    t.text = start;
    return t;
}

/* A `//` right after an operand on the same line: in Triton that is floor
 * division, in blk a comment that swallows the rest of the line. */
static void note_slashes(Lexer *lx, const char *start) {
    TokenKind k = lx->last.kind;
    bool operand = k == TOK_IDENT || k == TOK_INT || k == TOK_FLOAT || k == TOK_RPAREN || k == TOK_RBRACKET;
    if (operand && lx->last.span.line == lx->line) lx->slashes_after_operand = span_at(lx, start, start + 2);
}

/* Keep line/column right across a block comment. */
static void count_newlines(Lexer *lx, const char *start, const char *end) {
    for (const char *p = start; p < end; p++) {
        if (*p == '\n') {
            lx->line++;
            lx->line_start = p + 1;
        }
    }
}

static TokenKind keyword_or_ident(const char *s, size_t n) {
    static const struct { const char *word; TokenKind kind; } keywords[] = {
        {"kernel", TOK_KERNEL}, {"fn", TOK_FN},         {"const", TOK_CONST},
        {"let", TOK_LET},       {"var", TOK_VAR},       {"for", TOK_FOR},
        {"in", TOK_IN},         {"while", TOK_WHILE},   {"if", TOK_IF},
        {"else", TOK_ELSE},     {"return", TOK_RETURN}, {"as", TOK_AS},
        {"true", TOK_TRUE},     {"false", TOK_FALSE},   {"None", TOK_NONE},
        {"type", TOK_TYPE},
    };
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, s, n) == 0)
            return keywords[i].kind;
    DType dt;
    if (dtype_from_name(s, n, &dt)) return TOK_DTYPE;
    return TOK_IDENT;
}

static Token lex_token(Lexer *lx) {
    const char *start;
    const char *YYMARKER = lx->cursor;
loop:
    start = lx->cursor;
#define YYCURSOR lx->cursor
    /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;

    dec   = [0-9]+;
    hex   = "0" [xX] [0-9a-fA-F]+;
    exp   = [eE] [+-]? [0-9]+;
    ident = [a-zA-Z_] [a-zA-Z0-9_]*;

    "\x00" {
        if ((size_t)(start - lx->src->text) >= lx->src->len) {
            lx->cursor = start;
            return make(lx, TOK_EOF, start);
        }
        diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                    "null character in source");
        goto loop;
    }
    [ \t\r\f\v]+ { goto loop; }
    "\n"         { lx->line++; lx->line_start = lx->cursor; goto loop; }
    "//" [^\n\x00]* { note_slashes(lx, start); goto loop; }
    "/*" {
        /* Scan by hand to the end of the source: a comment may hold any byte, NUL too. */
        const char *limit = lx->src->text + lx->src->len, *end = NULL;
        for (const char *c = lx->cursor; c + 1 < limit; c++)
            if (c[0] == '*' && c[1] == '/') {
                end = c;
                break;
            }
        if (!end) {
            diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, start + 2),
                        "unterminated block comment");
            count_newlines(lx, lx->cursor, limit);
            lx->cursor = limit;
            goto loop;
        }
        count_newlines(lx, lx->cursor, end);
        lx->cursor = end + 2;
        goto loop;
    }

    ident { return make(lx, keyword_or_ident(start, (size_t)(lx->cursor - start)), start); }
    hex | dec { return make(lx, TOK_INT, start); }
    dec "." [0-9]* exp? | dec exp { return make(lx, TOK_FLOAT, start); }
    "." [0-9]+ exp? {
        diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                    "a float literal starts with a digit in blk: write '0%.*s'", (int)(lx->cursor - start), start);
        return make(lx, TOK_FLOAT, start); /* strtod reads it: parsing goes on with its value */
    }
    dec ident {
        diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                    "invalid numeric literal '%.*s'", (int)(lx->cursor - start), start);
        return make(lx, TOK_ERROR, start);
    }
    ["] ([^"\\\n\x00] | "\\" [^\n\x00])* ["] { return make(lx, TOK_STRING, start); }
    ["] ([^"\\\n\x00] | "\\" [^\n\x00])* {
        diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, start + 1),
                    "unterminated string literal");
        return make(lx, TOK_ERROR, start);
    }

    "(" { return make(lx, TOK_LPAREN, start); }
    ")" { return make(lx, TOK_RPAREN, start); }
    "[" { return make(lx, TOK_LBRACKET, start); }
    "]" { return make(lx, TOK_RBRACKET, start); }
    "{" { return make(lx, TOK_LBRACE, start); }
    "}" { return make(lx, TOK_RBRACE, start); }
    "," { return make(lx, TOK_COMMA, start); }
    ";" { return make(lx, TOK_SEMI, start); }
    ":" { return make(lx, TOK_COLON, start); }
    "@" { return make(lx, TOK_AT, start); }
    "->" { return make(lx, TOK_ARROW, start); }
    "." { return make(lx, TOK_DOT, start); }
    "+" { return make(lx, TOK_PLUS, start); }
    "-" { return make(lx, TOK_MINUS, start); }
    "*" { return make(lx, TOK_STAR, start); }
    "/" { return make(lx, TOK_SLASH, start); }
    "%" { return make(lx, TOK_PERCENT, start); }
    "&" { return make(lx, TOK_AMP, start); }
    "|" { return make(lx, TOK_PIPE, start); }
    "^" { return make(lx, TOK_CARET, start); }
    "~" { return make(lx, TOK_TILDE, start); }
    "!" { return make(lx, TOK_BANG, start); }
    "<<" { return make(lx, TOK_SHL, start); }
    ">>" { return make(lx, TOK_SHR, start); }
    "&&" { return make(lx, TOK_ANDAND, start); }
    "||" { return make(lx, TOK_OROR, start); }
    "==" { return make(lx, TOK_EQ, start); }
    "!=" { return make(lx, TOK_NE, start); }
    "<"  { return make(lx, TOK_LT, start); }
    "<=" { return make(lx, TOK_LE, start); }
    ">"  { return make(lx, TOK_GT, start); }
    ">=" { return make(lx, TOK_GE, start); }
    "="  { return make(lx, TOK_ASSIGN, start); }
    "+=" { return make(lx, TOK_PLUS_ASSIGN, start); }
    "-=" { return make(lx, TOK_MINUS_ASSIGN, start); }
    "*=" { return make(lx, TOK_STAR_ASSIGN, start); }
    "/=" { return make(lx, TOK_SLASH_ASSIGN, start); }
    "%=" { return make(lx, TOK_PERCENT_ASSIGN, start); }
    "&=" { return make(lx, TOK_AMP_ASSIGN, start); }
    "|=" { return make(lx, TOK_PIPE_ASSIGN, start); }
    "^=" { return make(lx, TOK_CARET_ASSIGN, start); }
    "<<=" { return make(lx, TOK_SHL_ASSIGN, start); }
    ">>=" { return make(lx, TOK_SHR_ASSIGN, start); }

    [\x80-\xff]+ {
        diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                    "non-ASCII characters outside a comment or string");
        return make(lx, TOK_ERROR, start);
    }
    * {
        unsigned char c = (unsigned char)*start;
        if (c >= 0x20 && c < 0x7f)
            diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                        "unexpected character '%c'", c);
        else
            diag_report(lx->de, DIAG_ERROR, lx->src, span_at(lx, start, lx->cursor),
                        "unexpected character 0x%02x", c);
        return make(lx, TOK_ERROR, start);
    }
    */
#undef YYCURSOR
}

const char *token_kind_name(TokenKind k) {
    static const char *const names[TOK_COUNT] = {
        [TOK_EOF] = "end of file", [TOK_ERROR] = "invalid token", [TOK_IDENT] = "identifier",
        [TOK_INT] = "integer literal", [TOK_FLOAT] = "float literal",
        [TOK_STRING] = "string literal", [TOK_KERNEL] = "'kernel'", [TOK_FN] = "'fn'",
        [TOK_CONST] = "'const'", [TOK_LET] = "'let'", [TOK_VAR] = "'var'",
        [TOK_FOR] = "'for'", [TOK_IN] = "'in'", [TOK_WHILE] = "'while'", [TOK_IF] = "'if'",
        [TOK_ELSE] = "'else'", [TOK_RETURN] = "'return'", [TOK_AS] = "'as'",
        [TOK_TRUE] = "'true'", [TOK_FALSE] = "'false'", [TOK_NONE] = "'None'",
        [TOK_TYPE] = "'type'", [TOK_DTYPE] = "type name", [TOK_LPAREN] = "'('",
        [TOK_RPAREN] = "')'", [TOK_LBRACKET] = "'['", [TOK_RBRACKET] = "']'",
        [TOK_LBRACE] = "'{'", [TOK_RBRACE] = "'}'", [TOK_COMMA] = "','", [TOK_SEMI] = "';'",
        [TOK_COLON] = "':'", [TOK_AT] = "'@'", [TOK_ARROW] = "'->'", [TOK_DOT] = "'.'", [TOK_PLUS] = "'+'",
        [TOK_MINUS] = "'-'", [TOK_STAR] = "'*'", [TOK_SLASH] = "'/'", [TOK_PERCENT] = "'%'",
        [TOK_AMP] = "'&'", [TOK_PIPE] = "'|'", [TOK_CARET] = "'^'", [TOK_TILDE] = "'~'",
        [TOK_BANG] = "'!'", [TOK_SHL] = "'<<'", [TOK_SHR] = "'>>'", [TOK_ANDAND] = "'&&'",
        [TOK_OROR] = "'||'", [TOK_EQ] = "'=='", [TOK_NE] = "'!='", [TOK_LT] = "'<'",
        [TOK_LE] = "'<='", [TOK_GT] = "'>'", [TOK_GE] = "'>='", [TOK_ASSIGN] = "'='",
        [TOK_PLUS_ASSIGN] = "'+='", [TOK_MINUS_ASSIGN] = "'-='", [TOK_STAR_ASSIGN] = "'*='",
        [TOK_SLASH_ASSIGN] = "'/='", [TOK_PERCENT_ASSIGN] = "'%='",
        [TOK_AMP_ASSIGN] = "'&='", [TOK_PIPE_ASSIGN] = "'|='", [TOK_CARET_ASSIGN] = "'^='",
        [TOK_SHL_ASSIGN] = "'<<='", [TOK_SHR_ASSIGN] = "'>>='",
    };
    return (unsigned)k < TOK_COUNT && names[k] ? names[k] : "token";
}
