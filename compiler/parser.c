/* parser.c: recursive descent over the grammar of docs/language.md §2, with
 * precedence climbing for binary operators. Each function is headed by the
 * rule it parses. On a syntax error the parser reports once, then skips to
 * the next `;`, `}` or statement keyword and goes on (panic mode). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

enum { MAX_NESTING = 500 }; /* bounds recursion on hostile input: every later pass recurses over the tree */

typedef struct {
    Arena *arena;
    const Source *src;
    DiagEngine *de;
    Lexer lx;
    Token tok;  /* current */
    Token next; /* one token of lookahead */
    Token prev; /* last consumed */
    bool panic;
    int depth;
    bool in_to_call; /* inside Triton's x.to(...): its tl.float32 is named in the one error for .to */
} Parser;

static void advance(Parser *p) {
    p->prev = p->tok;
    p->tok = p->next;
    if (p->tok.kind != TOK_EOF) p->next = lexer_next(&p->lx);
}

static bool check(const Parser *p, TokenKind k) { return p->tok.kind == k; }

static bool accept(Parser *p, TokenKind k) {
    if (!check(p, k)) return false;
    advance(p);
    return true;
}

static void error_at(Parser *p, Span span, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void error_at(Parser *p, Span span, const char *fmt, ...) {
    if (p->panic) return; /* one error per broken construct */
    p->panic = true;
    if (p->tok.kind == TOK_ERROR) return; /* the lexer already said what is wrong */
    /* A `//` after the last good token, before the error: Triton's floor
     * division read as a comment. The error itself would land on a later line. */
    Span c = p->lx.slashes_after_operand;
    if (c.len && c.offset >= p->prev.span.offset + p->prev.span.len && c.offset < span.offset) {
        diag_report(p->de, DIAG_ERROR, p->src, c,
                    "'//' starts a comment in blk, so the rest of the line is ignored; integer division "
                    "is '/' (it rounds toward zero, as Triton's '//' does for non-negative operands)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(p->de, DIAG_ERROR, p->src, span, fmt, ap);
    va_end(ap);
}

static const char *tok_desc(Parser *p, Token t) {
    if (t.kind == TOK_IDENT || t.kind == TOK_DTYPE || t.kind == TOK_INT || t.kind == TOK_FLOAT)
        return arena_printf(p->arena, "'%.*s'", (int)t.span.len, t.text);
    return token_kind_name(t.kind);
}

static bool expect(Parser *p, TokenKind k, const char *context) {
    if (accept(p, k)) return true;
    if (context)
        error_at(p, p->tok.span, "expected %s %s, found %s", token_kind_name(k), context,
                 tok_desc(p, p->tok));
    else
        error_at(p, p->tok.span, "expected %s, found %s", token_kind_name(k), tok_desc(p, p->tok));
    return false;
}

static const char *tok_str(Parser *p, Token t) { return arena_strndup(p->arena, t.text, t.span.len); }

static Span span_from(const Parser *p, Span start) { return span_join(start, p->prev.span); }

static bool enter(Parser *p) {
    if (++p->depth > MAX_NESTING) {
        error_at(p, p->tok.span, "nesting too deep (limit %d)", MAX_NESTING);
        return false;
    }
    return true;
}
static void leave(Parser *p) { p->depth--; }

/* ---- types ---- */

/* Triton's `tl.float16` or `tl.constexpr` where blk wants a type (after a
 * parameter's ':', after 'as'): one error with blk's spelling, and parsing
 * goes on as if it had been written (tl.constexpr as i32; the parameter is
 * made const by parse_param), without the parser's panic, so the rest of a
 * parameter list is still read. */
static TypeSyntax parse_triton_type(Parser *p, TypeSyntax t) {
    advance(p); /* the '.' */
    if (!check(p, TOK_IDENT) && !check(p, TOK_DTYPE)) {
        error_at(p, p->tok.span, "expected a type after 'tl.', found %s (blk's types have no 'tl.' prefix)",
                 tok_desc(p, p->tok));
        return t;
    }
    const char *name = tok_str(p, p->tok);
    advance(p);
    t.span = span_from(p, t.span);
    t.name = NULL;
    const char *type = dtype_name_for_triton(name);
    if (type) {
        diag_report(p->de, DIAG_ERROR, p->src, t.span, "blk's type names are short and have no 'tl.' prefix: "
                    "write '%s'", type);
        dtype_from_name(type, strlen(type), &t.dtype);
    } else if (strcmp(name, "constexpr") == 0) {
        diag_report(p->de, DIAG_ERROR, p->src, t.span, "a compile-time parameter is written 'const NAME: TYPE' in "
                    "blk (Triton's tl.constexpr), e.g. 'const BLOCK: i32 = 128' or 'const T: type = f16'");
        t.dtype = DT_I32;
        t.triton_constexpr = true;
    } else {
        diag_report(p->de, DIAG_ERROR, p->src, t.span, "unknown type 'tl.%s' (blk's types have no 'tl.' prefix)",
                    name);
    }
    return t;
}

/* type = "*" scalar_type | "*" IDENT | scalar_type | IDENT | "type" */
static TypeSyntax parse_type(Parser *p) {
    TypeSyntax t = {0};
    t.span = p->tok.span;
    t.dtype = DT_ERROR;
    if (accept(p, TOK_TYPE)) {
        t.is_type_kw = true;
        return t;
    }
    if (accept(p, TOK_STAR)) t.is_ptr = true;
    if (accept(p, TOK_DTYPE)) {
        DType dt = DT_ERROR;
        dtype_from_name(p->prev.text, p->prev.span.len, &dt);
        t.dtype = dt;
    } else if (accept(p, TOK_IDENT)) {
        t.name = tok_str(p, p->prev);
        if (strcmp(t.name, "tl") == 0 && check(p, TOK_DOT)) return parse_triton_type(p, t);
    } else {
        error_at(p, p->tok.span, "expected a type, found %s", tok_desc(p, p->tok));
        return t;
    }
    t.span = span_from(p, t.span);
    return t;
}

/* ---- expressions ---- */

static Expr *parse_expr(Parser *p);

/* Stands in for a malformed expression; sema leaves it DT_ERROR. */
static Expr *error_expr(Parser *p, Span span) {
    Expr *e = expr_new(p->arena, E_INT, span);
    e->u.int_lit.invalid = true;
    return e;
}

static Expr *parse_int_literal_token(Parser *p, Token t) {
    Expr *e = expr_new(p->arena, E_INT, t.span);
    const char *why;
    if (!parse_int_literal(t.text, t.span.len, &e->u.int_lit.value, &e->u.int_lit.is_u64, &why)) {
        diag_report(p->de, DIAG_ERROR, p->src, t.span, "integer literal '%.*s%s' %s",
                    t.span.len > 40 ? 40 : (int)t.span.len, t.text, t.span.len > 40 ? "..." : "",
                    why);
        return error_expr(p, t.span);
    }
    return e;
}

static Expr *parse_float_literal_token(Parser *p, Token t) {
    Expr *e = expr_new(p->arena, E_FLOAT, t.span);
    const char *why;
    if (!parse_float_literal(t.text, t.span.len, &e->u.float_lit, &why)) {
        diag_report(p->de, DIAG_ERROR, p->src, t.span, "float literal '%.*s%s' %s",
                    t.span.len > 40 ? 40 : (int)t.span.len, t.text, t.span.len > 40 ? "..." : "",
                    why);
        return error_expr(p, t.span);
    }
    return e;
}

static Expr *parse_string_literal(Parser *p, Token t) {
    Expr *e = expr_new(p->arena, E_STRING, t.span);
    char *out = arena_alloc(p->arena, t.span.len);
    size_t n = 0;
    for (uint32_t i = 1; i + 1 < t.span.len; i++) {
        char c = t.text[i];
        if (c == '\\') {
            char esc = t.text[++i];
            switch (esc) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            default: {
                Span s = t.span;
                s.offset += i - 1;
                s.col += i - 1;
                s.len = 2;
                diag_report(p->de, DIAG_ERROR, p->src, s, "unknown escape sequence '\\%c'", esc);
                c = esc;
            }
            }
        }
        out[n++] = c;
    }
    e->u.str.text = out;
    e->u.str.len = n;
    return e;
}

/* arg = [ IDENT "=" ] expr
 * call = IDENT "(" [ arg { "," arg } [ "," ] ] ")" */
static Expr *parse_call(Parser *p, Token name) {
    Expr *e = expr_new(p->arena, E_CALL, name.span);
    e->u.call.name = tok_str(p, name);
    e->u.call.name_span = name.span;
    advance(p); /* ( */
    while (!check(p, TOK_RPAREN) && !check(p, TOK_EOF)) {
        const char *arg_name = NULL;
        if (check(p, TOK_IDENT) && p->next.kind == TOK_ASSIGN) {
            arg_name = tok_str(p, p->tok);
            advance(p);
            advance(p);
        }
        Expr *arg = parse_expr(p);
        ptrvec_push(p->arena, &e->u.call.args, arg);
        ptrvec_push(p->arena, &e->u.call.arg_names, (void *)arg_name);
        if (!accept(p, TOK_COMMA)) break;
    }
    expect(p, TOK_RPAREN, "to close the argument list");
    e->span = span_from(p, name.span);
    return e;
}

/* primary = INT | FLOAT | STRING | "true" | "false" | scalar_type
 *         | IDENT [ call ] | "(" expr ")" | "[" expr { "," expr } "]" */
static Expr *parse_primary(Parser *p) {
    Token t = p->tok;
    switch (t.kind) {
    case TOK_INT: advance(p); return parse_int_literal_token(p, t);
    case TOK_FLOAT: advance(p); return parse_float_literal_token(p, t);
    case TOK_STRING: advance(p); return parse_string_literal(p, t);
    case TOK_TRUE:
    case TOK_FALSE: {
        advance(p);
        Expr *e = expr_new(p->arena, E_BOOL, t.span);
        e->u.bool_lit = t.kind == TOK_TRUE;
        return e;
    }
    case TOK_DTYPE: {
        advance(p);
        Expr *e = expr_new(p->arena, E_DTYPE, t.span);
        DType dt = DT_ERROR;
        dtype_from_name(t.text, t.span.len, &dt);
        e->u.dtype_lit = dt;
        return e;
    }
    case TOK_IDENT: {
        if (p->next.kind == TOK_LPAREN) {
            advance(p);
            return parse_call(p, t);
        }
        advance(p);
        Expr *e = expr_new(p->arena, E_NAME, t.span);
        e->u.name.name = tok_str(p, t);
        return e;
    }
    case TOK_LPAREN: {
        advance(p);
        Expr *e = parse_expr(p);
        if (check(p, TOK_COMMA)) { /* (a, b, ...): a helper's values */
            Expr *t = expr_new(p->arena, E_TUPLE, e->span);
            ptrvec_push(p->arena, &t->u.shape.dims, e);
            while (accept(p, TOK_COMMA) && !check(p, TOK_RPAREN)) ptrvec_push(p->arena, &t->u.shape.dims, parse_expr(p));
            e = t;
        }
        expect(p, TOK_RPAREN, "to close '('");
        e->parenthesized = true;
        if (e->kind == E_TUPLE) e->span = span_from(p, t.span);
        return e;
    }
    case TOK_LBRACKET: {
        advance(p);
        Expr *e = expr_new(p->arena, E_SHAPE, t.span);
        do {
            ptrvec_push(p->arena, &e->u.shape.dims, parse_expr(p));
        } while (accept(p, TOK_COMMA) && !check(p, TOK_RBRACKET));
        expect(p, TOK_RBRACKET, "to close the shape");
        e->span = span_from(p, t.span);
        return e;
    }
    case TOK_NONE: { /* sema allows it where a pointer parameter is compared with it */
        advance(p);
        Expr *e = expr_new(p->arena, E_NAME, t.span);
        e->u.name.name = "None";
        return e;
    }
    default:
        error_at(p, t.span, "expected an expression, found %s", tok_desc(p, t));
        return error_expr(p, t.span);
    }
}

static Expr *dtype_expr(Parser *p, const char *blk_name, Span span) {
    Expr *e = expr_new(p->arena, E_DTYPE, span);
    e->u.dtype_lit = DT_ERROR;
    dtype_from_name(blk_name, strlen(blk_name), &e->u.dtype_lit);
    return e;
}

static const char *source_text(Parser *p, Span s) {
    return arena_strndup(p->arena, p->src->text + s.offset, s.len);
}

/* Triton's conversion of x to `to` (x.to(T), tl.cast(x, T)), spanning `all`:
 * one error giving blk's 'x as T', read on as that cast (x NULL: none given). */
static Expr *triton_conversion(Parser *p, Expr *x, const Expr *to, Span all) {
    bool typed = x && to && to->kind == E_DTYPE && to->u.dtype_lit != DT_ERROR;
    error_at(p, all, "blk converts with 'as': write '%s as %s'", x ? source_text(p, x->span) : "x",
             typed ? dtype_name((DType)to->u.dtype_lit) : "TYPE");
    if (!typed) return error_expr(p, all);
    Expr *c = expr_new(p->arena, E_CAST, all);
    c->u.cast.operand = x;
    c->u.cast.to.span = to->span;
    c->u.cast.to.dtype = to->u.dtype_lit;
    return c;
}

/* Triton's tl.cast(x, tl.float16). */
static Expr *parse_triton_cast(Parser *p, Token member, Span whole) {
    bool outer = p->in_to_call;
    p->in_to_call = true; /* its tl.float16 is named in the conversion's one error */
    Expr *args = parse_call(p, member);
    p->in_to_call = outer;
    Expr *x = args->u.call.args.len >= 1 ? args->u.call.args.items[0] : NULL;
    const Expr *to = args->u.call.args.len == 2 ? args->u.call.args.items[1] : NULL;
    return triton_conversion(p, x, to, span_join(whole, p->prev.span));
}

/* member = "." IDENT [ call ]: not blk, but what Triton code says (x.to(T),
 * tl.program_id(0), v.shape[0], x.sum()). Each gets one error that gives the
 * blk spelling, and parsing goes on as if it had been written that way. */
static Expr *parse_member(Parser *p, Expr *base) {
    Token dot = p->tok;
    advance(p);
    if (!check(p, TOK_IDENT) && !check(p, TOK_DTYPE)) {
        error_at(p, dot.span, "blk has no '.' operator (no methods or attributes)");
        return error_expr(p, dot.span);
    }
    Token member = p->tok;
    const char *name = tok_str(p, member);
    bool call = p->next.kind == TOK_LPAREN;
    Span whole = span_join(base->span, member.span);
    advance(p);
    if (base->kind == E_NAME && strcmp(base->u.name.name, "tl") == 0) {
        const char *type = dtype_name_for_triton(name);
        if (type) {
            if (!p->in_to_call)
                error_at(p, whole, "blk's type names are short and have no 'tl.' prefix: write '%s'", type);
            return dtype_expr(p, type, whole);
        }
        if (call && strcmp(name, "cast") == 0) return parse_triton_cast(p, member, whole);
        error_at(p, whole, "blk's builtins have no 'tl.' prefix: write '%s'", name);
        if (call) return parse_call(p, member);
        Expr *e = expr_new(p->arena, E_NAME, member.span);
        e->u.name.name = name;
        return e;
    }
    bool outer = p->in_to_call;
    p->in_to_call = strcmp(name, "to") == 0;
    Expr *args = call ? parse_call(p, member) : NULL;
    p->in_to_call = outer;
    if (strcmp(name, "to") == 0 && args && args->u.call.args.len == 1)
        return triton_conversion(p, base, args->u.call.args.items[0], span_from(p, base->span));
    if (strcmp(name, "shape") == 0)
        error_at(p, whole, "blocks have no '.shape' in blk: write 'shape(x, axis)' (a compile-time constant)");
    else if (strcmp(name, "dtype") == 0)
        error_at(p, whole, "blocks have no '.dtype' in blk: name the type (a const type parameter such as T)");
    else if (strcmp(name, "T") == 0)
        error_at(p, whole, "blocks have no '.T' in blk: write 'trans(%s)'", source_text(p, base->span));
    else
        error_at(p, whole, "blk has no methods or attributes: for '.%s', call the builtin with the block "
                           "as its first argument ('%s(x, ...)')", name, name);
    return error_expr(p, span_from(p, base->span));
}

/* postfix = primary { "[" index { "," index } "]" | member }
 * index   = ":" | "None" | [ expr ] ":" [ expr ]          (a slice lo:hi, either optional) */
static Expr *parse_postfix(Parser *p) {
    Expr *e = parse_primary(p);
    int levels = 0;
    while (check(p, TOK_DOT)) e = parse_member(p, e);
    while (check(p, TOK_LBRACKET)) {
        levels++;
        if (!enter(p)) break;
        Span start = e->span;
        advance(p);
        Expr *ix = expr_new(p->arena, E_INDEX, start);
        ix->u.index.operand = e;
        bool bad = false;
        do {
            if (ix->u.index.n > BLK_MAX_RANK) {
                error_at(p, p->tok.span, "too many indices (a block has at most %d dimensions)",
                         BLK_MAX_RANK);
                break;
            }
            int at = ix->u.index.n;
            if (accept(p, TOK_NONE)) {
                ix->u.index.is_none[ix->u.index.n++] = true;
                continue;
            }
            Expr *lo = NULL;
            if (!check(p, TOK_COLON)) {
                Token first = p->tok;
                lo = parse_expr(p);
                if (!check(p, TOK_COLON)) {
                    error_at(p, span_from(p, first.span),
                             "blk has no element indexing: an index is ':', 'None' or a slice 'lo:hi' with "
                             "constant bounds (use load with a pointer block for one element)");
                    bad = true;
                    break;
                }
            }
            advance(p); /* the ':' */
            Expr *hi = check(p, TOK_COMMA) || check(p, TOK_RBRACKET) ? NULL : parse_expr(p);
            ix->u.index.is_slice[at] = lo || hi;
            ix->u.index.lo[at] = lo;
            ix->u.index.hi[at] = hi;
            ix->u.index.n++;
        } while (accept(p, TOK_COMMA));
        if (bad) {
            e = error_expr(p, start);
            break;
        }
        expect(p, TOK_RBRACKET, "to close the index");
        ix->span = span_from(p, start);
        e = ix;
    }
    p->depth -= levels;
    return e;
}

/* unary = ( "-" | "!" | "~" ) unary | postfix */
static Expr *parse_unary(Parser *p) {
    if (!enter(p)) {
        Expr *e = error_expr(p, p->tok.span);
        leave(p);
        return e;
    }
    Expr *e;
    Token t = p->tok;
    OpKind op;
    if (t.kind == TOK_MINUS || t.kind == TOK_BANG || t.kind == TOK_TILDE) {
        op = t.kind == TOK_MINUS ? OP_NEG : t.kind == TOK_BANG ? OP_NOT : OP_BITNOT;
        advance(p);
        Expr *operand = parse_unary(p);
        e = expr_new(p->arena, E_UNARY, span_join(t.span, operand->span));
        e->u.binary.op = op;
        e->u.binary.lhs = operand;
    } else {
        e = parse_postfix(p);
    }
    leave(p);
    return e;
}

/* cast_expr = unary { "as" type } */
static Expr *parse_cast(Parser *p) {
    Expr *e = parse_unary(p);
    int levels = 0; /* each cast deepens the tree that later passes recurse over */
    while (accept(p, TOK_AS)) {
        levels++;
        if (!enter(p)) break;
        Expr *c = expr_new(p->arena, E_CAST, e->span);
        c->u.cast.operand = e;
        c->u.cast.to = parse_type(p);
        c->span = span_from(p, e->span);
        e = c;
    }
    p->depth -= levels;
    return e;
}

static int binary_prec(TokenKind k, OpKind *op) {
    static const struct { TokenKind tok; OpKind op; int prec; } table[] = {
        {TOK_OROR, OP_LOR, 1},  {TOK_ANDAND, OP_LAND, 2}, {TOK_PIPE, OP_OR, 3},
        {TOK_CARET, OP_XOR, 4}, {TOK_AMP, OP_AND, 5},     {TOK_EQ, OP_EQ, 6},
        {TOK_NE, OP_NE, 6},     {TOK_LT, OP_LT, 7},       {TOK_LE, OP_LE, 7},
        {TOK_GT, OP_GT, 7},     {TOK_GE, OP_GE, 7},       {TOK_SHL, OP_SHL, 8},
        {TOK_SHR, OP_SHR, 8},   {TOK_PLUS, OP_ADD, 9},    {TOK_MINUS, OP_SUB, 9},
        {TOK_STAR, OP_MUL, 10}, {TOK_SLASH, OP_DIV, 10},  {TOK_PERCENT, OP_MOD, 10},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        if (table[i].tok == k) {
            *op = table[i].op;
            return table[i].prec;
        }
    }
    return 0;
}

static bool is_comparison(OpKind op) {
    return op == OP_EQ || op == OP_NE || op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE;
}

static bool is_chain_link(const Expr *e) {
    return e->kind == E_BINARY && is_comparison(e->u.binary.op) && !e->parenthesized;
}

/* `0 <= o < n` is Python's chain; in blk (as in C) it is `(0 <= o) < n`,
 * which compares a boolean and masks nothing. Say so, with the `&` form. */
static void report_chain(Parser *p, Span op_span, const Expr *lhs, OpKind op, const Expr *rhs) {
    const Expr *a, *b, *c;
    OpKind first, second;
    if (is_chain_link(lhs)) a = lhs->u.binary.lhs, b = lhs->u.binary.rhs, c = rhs, first = lhs->u.binary.op, second = op;
    else a = lhs, b = rhs->u.binary.lhs, c = rhs->u.binary.rhs, first = op, second = rhs->u.binary.op;
    const char *ta = source_text(p, a->span), *tb = source_text(p, b->span), *tc = source_text(p, c->span);
    error_at(p, op_span, "comparisons do not chain in blk: '%s %s %s %s %s' compares the result of one "
             "comparison with '%s'; write '(%s %s %s) & (%s %s %s)'", ta, op_name(first), tb, op_name(second), tc,
             is_chain_link(lhs) ? tc : ta, ta, op_name(first), tb, tb, op_name(second), tc);
}

/* binary = cast_expr { binary_op cast_expr }, by precedence climbing:
 * operators at or above min_prec bind here, all left-associative. */
static Expr *parse_binary(Parser *p, int min_prec) {
    Expr *lhs = parse_cast(p);
    int levels = 0; /* a chain a+b+c+... nests to the left: count it as depth */
    for (;;) {
        OpKind op;
        int prec = binary_prec(p->tok.kind, &op);
        if (prec == 0 || prec < min_prec || p->panic) break;
        advance(p);
        levels++;
        if (!enter(p)) break;
        Span op_span = p->prev.span;
        Expr *rhs = parse_binary(p, prec + 1);
        if (is_comparison(op) && (is_chain_link(lhs) || is_chain_link(rhs))) report_chain(p, op_span, lhs, op, rhs);
        Expr *e = expr_new(p->arena, E_BINARY, span_join(lhs->span, rhs->span));
        e->u.binary.op = op;
        e->u.binary.lhs = lhs;
        e->u.binary.rhs = rhs;
        lhs = e;
    }
    p->depth -= levels;
    return lhs;
}

/* expr = binary */
static Expr *parse_expr(Parser *p) { return parse_binary(p, 1); }

/* ---- statements ---- */

static Stmt *parse_stmt(Parser *p);

static bool is_stmt_start(TokenKind k) {
    return k == TOK_LET || k == TOK_VAR || k == TOK_FOR || k == TOK_WHILE || k == TOK_IF ||
           k == TOK_RETURN;
}

/* Skip to a point where a statement can start again. */
static void synchronize(Parser *p) {
    while (!check(p, TOK_EOF)) {
        if (accept(p, TOK_SEMI)) break;
        if (check(p, TOK_RBRACE) || check(p, TOK_LBRACE) || is_stmt_start(p->tok.kind) ||
            check(p, TOK_KERNEL) || check(p, TOK_FN))
            break;
        advance(p);
    }
    p->panic = false;
}

/* block = "{" { stmt } "}" */
static Stmt *parse_block(Parser *p) {
    Stmt *b = stmt_new(p->arena, S_BLOCK, p->tok.span);
    if (!expect(p, TOK_LBRACE, NULL)) return b;
    if (!enter(p)) {
        /* Too deep: skip the rest of this block by brace counting. */
        int open = 1;
        while (open > 0 && !check(p, TOK_EOF)) {
            if (check(p, TOK_LBRACE)) open++;
            if (check(p, TOK_RBRACE)) open--;
            advance(p);
        }
        leave(p);
        return b;
    }
    while (!check(p, TOK_RBRACE) && !check(p, TOK_EOF)) {
        if (check(p, TOK_KERNEL) || check(p, TOK_FN)) break; /* missing '}' */
        Token before = p->tok;
        Stmt *s = parse_stmt(p);
        if (s) ptrvec_push(p->arena, &b->u.block.stmts, s);
        if (p->panic) synchronize(p);
        if (p->tok.span.offset == before.span.offset && p->tok.kind == before.kind &&
            !check(p, TOK_RBRACE) && !check(p, TOK_EOF))
            advance(p); /* guarantee progress */
    }
    leave(p);
    expect(p, TOK_RBRACE, "to close the block");
    b->span = span_from(p, b->span);
    return b;
}

static int assign_op(TokenKind k) {
    switch (k) {
    case TOK_ASSIGN: return ASSIGN_PLAIN;
    case TOK_PLUS_ASSIGN: return OP_ADD;
    case TOK_MINUS_ASSIGN: return OP_SUB;
    case TOK_STAR_ASSIGN: return OP_MUL;
    case TOK_SLASH_ASSIGN: return OP_DIV;
    case TOK_PERCENT_ASSIGN: return OP_MOD;
    case TOK_AMP_ASSIGN: return OP_AND;
    case TOK_PIPE_ASSIGN: return OP_OR;
    case TOK_CARET_ASSIGN: return OP_XOR;
    case TOK_SHL_ASSIGN: return OP_SHL;
    case TOK_SHR_ASSIGN: return OP_SHR;
    default: return NOT_AN_ASSIGNMENT;
    }
}

/* let_stmt = ( "let" | "var" ) IDENT [ ":" type ] "=" expr ";" */
static Stmt *parse_let(Parser *p) {
    Token kw = p->tok;
    advance(p);
    Stmt *s = stmt_new(p->arena, S_LET, kw.span);
    s->u.let.is_var = kw.kind == TOK_VAR;
    if (accept(p, TOK_LPAREN)) { /* let (a, b) = helper(...) */
        do {
            if (!expect(p, TOK_IDENT, "in 'let (...)': the names the values are bound to")) return s;
            Stmt *part = stmt_new(p->arena, S_LET, p->prev.span);
            part->u.let.is_var = s->u.let.is_var;
            part->u.let.name = tok_str(p, p->prev);
            part->u.let.name_span = p->prev.span;
            ptrvec_push(p->arena, &s->u.let.parts, part);
        } while (accept(p, TOK_COMMA) && !check(p, TOK_RPAREN));
        if (!expect(p, TOK_RPAREN, "to close the names")) return s;
        Stmt *first = s->u.let.parts.items[0];
        s->u.let.name = first->u.let.name; /* for messages; each part is declared */
        s->u.let.name_span = span_from(p, first->u.let.name_span);
        if (!expect(p, TOK_ASSIGN, "in a declaration (every binding needs an initial value)")) return s;
        s->u.let.init = parse_expr(p);
        expect(p, TOK_SEMI, "after the declaration");
        s->span = span_from(p, kw.span);
        return s;
    }
    if (!expect(p, TOK_IDENT, kw.kind == TOK_VAR ? "after 'var'" : "after 'let'")) return s;
    s->u.let.name = tok_str(p, p->prev);
    s->u.let.name_span = p->prev.span;
    if (accept(p, TOK_COLON)) {
        s->u.let.has_type = true;
        s->u.let.type = parse_type(p);
    }
    if (!expect(p, TOK_ASSIGN, "in a declaration (every binding needs an initial value)"))
        return s;
    s->u.let.init = parse_expr(p);
    expect(p, TOK_SEMI, "after the declaration");
    s->span = span_from(p, kw.span);
    return s;
}

/* for_stmt = "for" IDENT "in" ( "range" | "static_range" )
 *            "(" expr "," expr [ "," expr ] { "," IDENT "=" expr } ")" block
 * The named options after the bounds: `unroll = N` (range only). */
static Stmt *parse_for(Parser *p) {
    Token kw = p->tok;
    advance(p);
    Stmt *s = stmt_new(p->arena, S_FOR, kw.span);
    if (!expect(p, TOK_IDENT, "after 'for'")) return s;
    s->u.for_.var = tok_str(p, p->prev);
    s->u.for_.var_span = p->prev.span;
    if (!expect(p, TOK_IN, "after the loop variable")) return s;
    bool is_range = check(p, TOK_IDENT) && p->tok.span.len == 5 && memcmp(p->tok.text, "range", 5) == 0;
    bool is_static = check(p, TOK_IDENT) && p->tok.span.len == 12 && memcmp(p->tok.text, "static_range", 12) == 0;
    if (!is_range && !is_static) {
        error_at(p, p->tok.span, "expected 'range(start, end[, step])' or 'static_range(...)' after 'in', found %s",
                 tok_desc(p, p->tok));
        return s;
    }
    s->u.for_.is_static = is_static;
    const char *what = is_static ? "static_range" : "range";
    advance(p);
    if (!expect(p, TOK_LPAREN, is_static ? "after 'static_range'" : "after 'range'")) return s;
    s->u.for_.start = parse_expr(p);
    if (!expect(p, TOK_COMMA, is_static ? "between static_range bounds (static_range takes start, end[, step])"
                                        : "between range bounds (range takes start, end[, step])"))
        return s;
    s->u.for_.end = parse_expr(p);
    while (accept(p, TOK_COMMA)) {
        if (check(p, TOK_IDENT) && p->next.kind == TOK_ASSIGN) {
            Token name = p->tok;
            advance(p);
            advance(p);
            Expr *value = parse_expr(p);
            if (!is_static && name.span.len == 6 && memcmp(name.text, "unroll", 6) == 0) {
                s->u.for_.unroll = value;
            } else if (name.span.len == 10 && memcmp(name.text, "num_stages", 10) == 0) {
                error_at(p, name.span, "'%s' takes no 'num_stages': the stages of every pipelined loop are the "
                         "compile option num_stages (blkc --num-stages N)", what);
            } else if (name.span.len == 18 && memcmp(name.text, "loop_unroll_factor", 18) == 0 && !is_static) {
                error_at(p, name.span, "the unroll factor of a loop is spelt 'unroll = N' in blk");
            } else {
                error_at(p, name.span, "'%s' has no option '%.*s'%s", what, (int)name.span.len, name.text,
                         is_static ? "" : " (it takes 'unroll = N')");
            }
            continue;
        }
        if (s->u.for_.step || s->u.for_.unroll) {
            error_at(p, p->tok.span, "'%s' takes start, end and step, then named options ('unroll = N')", what);
            return s;
        }
        s->u.for_.step = parse_expr(p);
    }
    if (!expect(p, TOK_RPAREN, is_static ? "to close 'static_range'" : "to close 'range'")) return s;
    s->u.for_.body = parse_block(p);
    s->span = span_from(p, kw.span);
    return s;
}

/* if_stmt = "if" expr block [ "else" ( block | if_stmt ) ] */
static Stmt *parse_if(Parser *p) {
    Token kw = p->tok;
    advance(p);
    Stmt *s = stmt_new(p->arena, S_IF, kw.span);
    s->u.if_.cond = parse_expr(p);
    s->u.if_.then_ = parse_block(p);
    if (accept(p, TOK_ELSE)) {
        if (check(p, TOK_IF)) {
            if (enter(p)) s->u.if_.else_ = parse_if(p);
            leave(p);
        } else {
            s->u.if_.else_ = parse_block(p);
        }
    }
    s->span = span_from(p, kw.span);
    return s;
}

/* stmt = let_stmt | IDENT assign_op expr ";" | for_stmt | "while" expr block
 *      | if_stmt | "return" [ expr ] ";" | expr ";" | block */
static Stmt *parse_stmt(Parser *p) {
    Token t = p->tok;
    switch (t.kind) {
    case TOK_LET:
    case TOK_VAR: return parse_let(p);
    case TOK_FOR: return parse_for(p);
    case TOK_IF: return parse_if(p);
    case TOK_LBRACE: return parse_block(p);
    case TOK_WHILE: {
        advance(p);
        Stmt *s = stmt_new(p->arena, S_WHILE, t.span);
        s->u.while_.cond = parse_expr(p);
        s->u.while_.body = parse_block(p);
        s->span = span_from(p, t.span);
        return s;
    }
    case TOK_RETURN: {
        advance(p);
        Stmt *s = stmt_new(p->arena, S_RETURN, t.span);
        if (!check(p, TOK_SEMI)) s->u.ret.value = parse_expr(p);
        expect(p, TOK_SEMI, "after 'return'");
        s->span = span_from(p, t.span);
        return s;
    }
    case TOK_SEMI:
        advance(p);
        return NULL; /* empty statement */
    default: break;
    }
    if (t.kind == TOK_IDENT && assign_op(p->next.kind) != NOT_AN_ASSIGNMENT) {
        advance(p);
        Stmt *s = stmt_new(p->arena, S_ASSIGN, t.span);
        s->u.assign.name = tok_str(p, t);
        s->u.assign.name_span = t.span;
        s->u.assign.op = assign_op(p->tok.kind);
        advance(p);
        s->u.assign.value = parse_expr(p);
        expect(p, TOK_SEMI, "after the assignment");
        s->span = span_from(p, t.span);
        return s;
    }
    Stmt *s = stmt_new(p->arena, S_EXPR, t.span);
    s->u.expr.expr = parse_expr(p);
    if (!p->panic && assign_op(p->tok.kind) != NOT_AN_ASSIGNMENT) {
        error_at(p, p->tok.span, "only a plain name can be assigned to");
        return NULL; /* dropped: checking it would only repeat the error */
    }
    expect(p, TOK_SEMI, "after the expression");
    s->span = span_from(p, t.span);
    return s;
}

/* ---- items ---- */

/* attribute = "@" IDENT "(" INT ")" */
static void parse_attribute(Parser *p, Param *prm) {
    Token at = p->tok;
    advance(p);
    if (!expect(p, TOK_IDENT, "after '@'")) return;
    Token name = p->prev;
    int64_t *slot = NULL;
    bool equal = false;
    if (name.span.len == 5 && memcmp(name.text, "align", 5) == 0) slot = &prm->align;
    else if (name.span.len == 11 && memcmp(name.text, "multiple_of", 11) == 0)
        slot = &prm->multiple_of;
    else if (name.span.len == 5 && memcmp(name.text, "equal", 5) == 0)
        equal = true;
    else
        error_at(p, name.span, "unknown attribute '%s' (expected @align, @multiple_of or @equal)",
                 tok_str(p, name));
    if (!expect(p, TOK_LPAREN, "after the attribute name")) return;
    if (!expect(p, TOK_INT, "as the attribute's value")) return;
    Expr *v = parse_int_literal_token(p, p->prev);
    expect(p, TOK_RPAREN, "to close the attribute");
    Span span = span_from(p, at.span);
    if ((!slot && !equal) || v->u.int_lit.invalid) return;
    if (v->u.int_lit.is_u64) {
        error_at(p, span, "the attribute's value is too large");
        return;
    }
    if (equal) { /* the backend specializes on 1 only, as Triton does; any other value is a const's job */
        if (v->u.int_lit.value != 1)
            diag_report(p->de, DIAG_ERROR, p->src, span, "@equal takes only 1 (a unit stride), got %lld; "
                        "for another fixed value make the parameter const", (long long)v->u.int_lit.value);
        else if (prm->equal_one)
            diag_report(p->de, DIAG_ERROR, p->src, span, "duplicate attribute '@equal'");
        prm->equal_one = true;
        return;
    }
    if (v->u.int_lit.value <= 0 || (slot == &prm->align && !is_pow2(v->u.int_lit.value))) {
        diag_report(p->de, DIAG_ERROR, p->src, span, "@%s needs a %s value, got %lld",
                    slot == &prm->align ? "align" : "multiple_of",
                    slot == &prm->align ? "power-of-two" : "positive",
                    (long long)v->u.int_lit.value);
        return;
    }
    if (*slot)
        diag_report(p->de, DIAG_ERROR, p->src, span, "duplicate attribute '@%s'",
                    slot == &prm->align ? "align" : "multiple_of");
    *slot = v->u.int_lit.value;
}

/* param = [ "const" ] IDENT ":" type { attribute } [ "=" expr ] */
static Param *parse_param(Parser *p) {
    Param *prm = arena_alloc(p->arena, sizeof *prm);
    prm->span = p->tok.span;
    prm->is_const = accept(p, TOK_CONST);
    if (!expect(p, TOK_IDENT, "for a parameter name")) return prm;
    prm->name = tok_str(p, p->prev);
    prm->name_span = p->prev.span;
    if (!expect(p, TOK_COLON, "after the parameter name (parameters need a type)")) return prm;
    prm->type = parse_type(p);
    prm->is_const = prm->is_const || prm->type.triton_constexpr; /* said: read on as if written const */
    while (check(p, TOK_AT)) parse_attribute(p, prm);
    if (accept(p, TOK_ASSIGN)) {
        Span eq = p->prev.span;
        prm->default_value = parse_expr(p);
        if (!prm->is_const)
            diag_report(p->de, DIAG_ERROR, p->src, eq,
                        "only const parameters can have a default value");
    }
    prm->span = span_from(p, prm->span);
    return prm;
}

/* Parameter lists: "(" [ X { "," X } [ "," ] ] ")" */
static void parse_param_list(Parser *p, PtrVec *params, bool helper) {
    if (!expect(p, TOK_LPAREN, "to start the parameter list")) return;
    while (!check(p, TOK_RPAREN) && !check(p, TOK_EOF) && !p->panic) {
        if (helper) {
            Param *prm = arena_alloc(p->arena, sizeof *prm);
            if (!expect(p, TOK_IDENT, "for a helper parameter name")) break;
            prm->name = tok_str(p, p->prev);
            prm->name_span = prm->span = p->prev.span;
            if (check(p, TOK_COLON))
                error_at(p, p->tok.span,
                         "helper parameters are untyped: each call is checked with its "
                         "arguments' types");
            ptrvec_push(p->arena, params, prm);
        } else {
            ptrvec_push(p->arena, params, parse_param(p));
        }
        if (!accept(p, TOK_COMMA)) break;
    }
    expect(p, TOK_RPAREN, "to close the parameter list");
}

/* kernel_def = "kernel" IDENT param_list block
 * helper_def = "fn" IDENT "(" [ IDENT { "," IDENT } ] ")" block */
static void parse_item(Parser *p, Module *m) {
    Token kw = p->tok;
    bool helper = kw.kind == TOK_FN;
    advance(p);
    if (!expect(p, TOK_IDENT, helper ? "after 'fn'" : "after 'kernel'")) return;
    Token name = p->prev;
    PtrVec params = {0};
    parse_param_list(p, &params, helper);
    if (p->panic) {
        /* skip to the body so that it is still checked for syntax */
        while (!check(p, TOK_LBRACE) && !check(p, TOK_EOF) && !check(p, TOK_KERNEL) &&
               !check(p, TOK_FN))
            advance(p);
        p->panic = false;
    }
    Stmt *body = parse_block(p);
    if (helper) {
        HelperDef *h = arena_alloc(p->arena, sizeof *h);
        h->span = span_from(p, kw.span);
        h->name = tok_str(p, name);
        h->name_span = name.span;
        h->params = params;
        h->body = body;
        ptrvec_push(p->arena, &m->helpers, h);
    } else {
        KernelDef *k = arena_alloc(p->arena, sizeof *k);
        k->span = span_from(p, kw.span);
        k->name = tok_str(p, name);
        k->name_span = name.span;
        k->params = params;
        k->body = body;
        ptrvec_push(p->arena, &m->kernels, k);
    }
}

/* module = { kernel_def | helper_def } EOF */
Module *parse_module(Arena *a, const Source *src, DiagEngine *de) {
    Parser p = {0};
    p.arena = a;
    p.src = src;
    p.de = de;
    lexer_init(&p.lx, src, de);
    p.next = lexer_next(&p.lx);
    advance(&p);
    Module *m = arena_alloc(a, sizeof *m);
    m->src = src;
    while (!check(&p, TOK_EOF)) {
        if (check(&p, TOK_KERNEL) || check(&p, TOK_FN)) {
            parse_item(&p, m);
            p.panic = false;
            continue;
        }
        error_at(&p, p.tok.span, "expected 'kernel' or 'fn' at top level, found %s",
                 tok_desc(&p, p.tok));
        while (!check(&p, TOK_EOF) && !check(&p, TOK_KERNEL) && !check(&p, TOK_FN)) advance(&p);
        p.panic = false;
    }
    return m;
}
