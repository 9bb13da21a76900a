/* ast.c: AST construction, deep copies (for inlining helpers) and the
 * --emit=ast dump, which shows the dtype and shape sema gave each node. */
#include <string.h>

#include "blkc.h"

Expr *expr_new(Arena *a, ExprKind kind, Span span) {
    Expr *e = arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->span = span;
    if (kind == E_CALL) e->u.call.builtin = -1;
    return e;
}

Stmt *stmt_new(Arena *a, StmtKind kind, Span span) {
    Stmt *s = arena_alloc(a, sizeof *s);
    s->kind = kind;
    s->span = span;
    return s;
}

static PtrVec clone_exprs(Arena *a, const PtrVec *v) {
    PtrVec out = {0};
    for (int i = 0; i < v->len; i++) ptrvec_push(a, &out, expr_clone(a, v->items[i]));
    return out;
}

static PtrVec copy_vec(Arena *a, const PtrVec *v) {
    PtrVec out = {0};
    for (int i = 0; i < v->len; i++) ptrvec_push(a, &out, v->items[i]);
    return out;
}

/* Copies syntax only: sema annotations are recomputed on the copy. */
Expr *expr_clone(Arena *a, const Expr *e) {
    if (!e) return NULL;
    Expr *c = expr_new(a, e->kind, e->span);
    c->u = e->u;
    switch (e->kind) {
    case E_NAME: c->u.name.sym = NULL; break;
    case E_UNARY:
    case E_BINARY:
        c->u.binary.lhs = expr_clone(a, e->u.binary.lhs);
        c->u.binary.rhs = expr_clone(a, e->u.binary.rhs);
        break;
    case E_CAST: c->u.cast.operand = expr_clone(a, e->u.cast.operand); break;
    case E_CALL:
        c->u.call.args = clone_exprs(a, &e->u.call.args);
        c->u.call.arg_names = copy_vec(a, &e->u.call.arg_names);
        c->u.call.builtin = -1;
        c->u.call.helper = NULL;
        memset(&c->u.call.inline_params, 0, sizeof c->u.call.inline_params);
        c->u.call.inline_body = NULL;
        c->u.call.inline_result = NULL;
        c->u.call.combine = NULL;
        break;
    case E_INDEX:
        c->u.index.operand = expr_clone(a, e->u.index.operand);
        for (int i = 0; i < e->u.index.n; i++) {
            c->u.index.lo[i] = expr_clone(a, e->u.index.lo[i]);
            c->u.index.hi[i] = expr_clone(a, e->u.index.hi[i]);
        }
        break;
    case E_SHAPE: case E_TUPLE: c->u.shape.dims = clone_exprs(a, &e->u.shape.dims); break;
    default: break;
    }
    return c;
}

Stmt *ast_const_if_taken(const Stmt *s) { return s->u.if_.cond->cv.i ? s->u.if_.then_ : s->u.if_.else_; }

Stmt *stmt_clone(Arena *a, const Stmt *s) {
    if (!s) return NULL;
    Stmt *c = stmt_new(a, s->kind, s->span);
    c->u = s->u;
    switch (s->kind) {
    case S_LET:
        c->u.let.init = expr_clone(a, s->u.let.init);
        c->u.let.sym = NULL;
        memset(&c->u.let.parts, 0, sizeof c->u.let.parts);
        for (int i = 0; i < s->u.let.parts.len; i++)
            ptrvec_push(a, &c->u.let.parts, stmt_clone(a, s->u.let.parts.items[i]));
        break;
    case S_ASSIGN:
        c->u.assign.value = expr_clone(a, s->u.assign.value);
        c->u.assign.sym = NULL;
        break;
    case S_FOR:
        c->u.for_.start = expr_clone(a, s->u.for_.start);
        c->u.for_.end = expr_clone(a, s->u.for_.end);
        c->u.for_.step = expr_clone(a, s->u.for_.step);
        c->u.for_.unroll = expr_clone(a, s->u.for_.unroll);
        c->u.for_.body = stmt_clone(a, s->u.for_.body);
        c->u.for_.sym = NULL;
        c->u.for_.unrolled = NULL;
        break;
    case S_WHILE:
        c->u.while_.cond = expr_clone(a, s->u.while_.cond);
        c->u.while_.body = stmt_clone(a, s->u.while_.body);
        break;
    case S_IF:
        c->u.if_.cond = expr_clone(a, s->u.if_.cond);
        c->u.if_.then_ = stmt_clone(a, s->u.if_.then_);
        c->u.if_.else_ = stmt_clone(a, s->u.if_.else_);
        break;
    case S_RETURN: c->u.ret.value = expr_clone(a, s->u.ret.value); break;
    case S_EXPR: c->u.expr.expr = expr_clone(a, s->u.expr.expr); break;
    case S_BLOCK: {
        PtrVec stmts = {0};
        for (int i = 0; i < s->u.block.stmts.len; i++)
            ptrvec_push(a, &stmts, stmt_clone(a, s->u.block.stmts.items[i]));
        c->u.block.stmts = stmts;
        break;
    }
    }
    return c;
}

const char *op_name(OpKind op) {
    static const char *const names[] = {
        [OP_ADD] = "+",  [OP_SUB] = "-",  [OP_MUL] = "*",   [OP_DIV] = "/",  [OP_MOD] = "%",
        [OP_AND] = "&",  [OP_OR] = "|",   [OP_XOR] = "^",   [OP_SHL] = "<<", [OP_SHR] = ">>",
        [OP_LAND] = "&&", [OP_LOR] = "||", [OP_EQ] = "==",  [OP_NE] = "!=",  [OP_LT] = "<",
        [OP_LE] = "<=",  [OP_GT] = ">",   [OP_GE] = ">=",   [OP_NEG] = "-",  [OP_NOT] = "!",
        [OP_BITNOT] = "~",
    };
    return names[op];
}

BirOpcode op_kind_opcode(OpKind op) {
    switch (op) {
    case OP_ADD: return BIR_ADD;
    case OP_SUB: return BIR_SUB;
    case OP_MUL: return BIR_MUL;
    case OP_DIV: return BIR_DIV;
    case OP_MOD: return BIR_REM;
    case OP_AND: case OP_LAND: return BIR_AND; /* && and || of i1 values, when both sides run */
    case OP_OR: case OP_LOR: return BIR_OR;
    case OP_XOR: return BIR_XOR;
    case OP_SHL: return BIR_SHL;
    case OP_SHR: return BIR_SHR;
    case OP_EQ: return BIR_EQ;
    case OP_NE: return BIR_NE;
    case OP_LT: return BIR_LT;
    case OP_LE: return BIR_LE;
    case OP_GT: return BIR_GT;
    case OP_GE: return BIR_GE;
    case OP_NEG: return BIR_NEG;
    case OP_NOT: case OP_BITNOT: return BIR_NOT; /* ! of an i1 is its bitwise not */
    }
    return BIR_NOT; /* not reached: the switch covers OpKind (-Werror=switch) */
}

/* ---- dump ---- */

static void indent(FILE *out, int depth) {
    for (int i = 0; i < depth; i++) fputs("  ", out);
}

static void dump_type_suffix(FILE *out, const Expr *e) {
    char buf[64];
    if (e->type.dtype == DT_ERROR) return; /* unchecked (e.g. an uncalled helper) */
    if (e->type.dtype == DT_VOID) { fputs(" : void", out); return; }
    if (e->type.dtype == DT_STRING || e->type.dtype == DT_SHAPE) return;
    if (e->type.dtype == DT_TYPE) {
        fprintf(out, " : type = %s", dtype_name(e->cv.dtype));
        return;
    }
    fprintf(out, " : %s", type_str(e->type, buf, sizeof buf));
    if (e->is_const && e->type.rank == 0) {
        if (dtype_is_float(e->type.dtype)) fprintf(out, " = %g", e->cv.f);
        else fprintf(out, " = %lld", (long long)e->cv.i);
    }
}

static void dump_stmt(FILE *out, const Stmt *s, int depth);

static void dump_expr(FILE *out, const Expr *e, int depth, const char *label) {
    indent(out, depth);
    if (label) fprintf(out, "%s: ", label);
    switch (e->kind) {
    case E_INT: fprintf(out, "int %lld", (long long)e->u.int_lit.value); break;
    case E_FLOAT: fprintf(out, "float %g", e->u.float_lit); break;
    case E_BOOL: fprintf(out, "bool %s", e->u.bool_lit ? "true" : "false"); break;
    case E_STRING: fprintf(out, "string \"%.*s\"", (int)e->u.str.len, e->u.str.text); break;
    case E_NAME: fprintf(out, "name %s", e->u.name.name); break;
    case E_DTYPE: fprintf(out, "dtype %s", dtype_name(e->u.dtype_lit)); break;
    case E_UNARY: fprintf(out, "unary %s", op_name(e->u.binary.op)); break;
    case E_BINARY: fprintf(out, "binary %s", op_name(e->u.binary.op)); break;
    case E_CAST: fputs("cast", out); break;
    case E_CALL: fprintf(out, "call %s", e->u.call.name); break;
    case E_INDEX:
        fputs("index [", out);
        for (int i = 0; i < e->u.index.n; i++) {
            fputs(i ? ", " : "", out);
            if (e->u.index.is_none[i]) fputs("None", out);
            else if (!e->u.index.is_slice[i]) fputs(":", out);
            else if (e->u.index.lo[i] && e->u.index.lo[i]->is_const && e->u.index.hi[i] && e->u.index.hi[i]->is_const)
                fprintf(out, "%lld:%lld", (long long)e->u.index.lo[i]->cv.i, (long long)e->u.index.hi[i]->cv.i);
            else fputs("lo:hi", out);
        }
        fputs("]", out);
        break;
    case E_SHAPE: fputs("shape", out); break;
    case E_TUPLE: fputs("tuple", out); break;
    }
    dump_type_suffix(out, e);
    fputs("\n", out);
    switch (e->kind) {
    case E_UNARY: dump_expr(out, e->u.binary.lhs, depth + 1, NULL); break;
    case E_BINARY:
        dump_expr(out, e->u.binary.lhs, depth + 1, NULL);
        dump_expr(out, e->u.binary.rhs, depth + 1, NULL);
        break;
    case E_CAST: dump_expr(out, e->u.cast.operand, depth + 1, NULL); break;
    case E_INDEX: dump_expr(out, e->u.index.operand, depth + 1, NULL); break;
    case E_SHAPE: case E_TUPLE:
        for (int i = 0; i < e->u.shape.dims.len; i++)
            dump_expr(out, e->u.shape.dims.items[i], depth + 1, NULL);
        break;
    case E_CALL:
        for (int i = 0; i < e->u.call.args.len; i++)
            if (e->u.call.args.items[i]) /* else an absent optional builtin argument */
                dump_expr(out, e->u.call.args.items[i], depth + 1,
                          e->u.call.builtin >= 0
                              ? builtin_sig((BuiltinId)e->u.call.builtin)->params[i]
                              : e->u.call.arg_names.items[i]);
        if (e->u.call.inline_body) {
            indent(out, depth + 1);
            fputs("inlined:\n", out);
            for (int i = 0; i < e->u.call.inline_params.len; i++) {
                const Symbol *p = e->u.call.inline_params.items[i];
                char buf[64];
                indent(out, depth + 2);
                fprintf(out, "param %s : %s\n", p->name, type_str(p->type, buf, sizeof buf));
            }
            dump_stmt(out, e->u.call.inline_body, depth + 2);
            if (e->u.call.inline_result)
                dump_expr(out, e->u.call.inline_result, depth + 2, "result");
        }
        if (e->u.call.combine) dump_expr(out, e->u.call.combine, depth + 1, "combine");
        break;
    default: break;
    }
}

static void dump_stmt(FILE *out, const Stmt *s, int depth) {
    indent(out, depth);
    switch (s->kind) {
    case S_LET:
        fprintf(out, "%s %s%s  (line %u)\n", s->u.let.is_var ? "var" : "let", s->u.let.name,
                s->u.let.parts.len ? ", ..." : "", s->span.line);
        dump_expr(out, s->u.let.init, depth + 1, NULL);
        break;
    case S_ASSIGN:
        fprintf(out, "assign %s  (line %u)\n", s->u.assign.name, s->span.line);
        dump_expr(out, s->u.assign.value, depth + 1, NULL);
        break;
    case S_FOR:
        fprintf(out, "for %s%s  (line %u)\n", s->u.for_.var, s->u.for_.is_static ? " static" : "", s->span.line);
        dump_expr(out, s->u.for_.start, depth + 1, "start");
        dump_expr(out, s->u.for_.end, depth + 1, "end");
        if (s->u.for_.step) dump_expr(out, s->u.for_.step, depth + 1, "step");
        if (s->u.for_.unroll) dump_expr(out, s->u.for_.unroll, depth + 1, "unroll");
        /* a static_range shows its checked copies (the body as written has no types) */
        dump_stmt(out, s->u.for_.unrolled ? s->u.for_.unrolled : s->u.for_.body, depth + 1);
        break;
    case S_WHILE:
        fprintf(out, "while  (line %u)\n", s->span.line);
        dump_expr(out, s->u.while_.cond, depth + 1, "cond");
        dump_stmt(out, s->u.while_.body, depth + 1);
        break;
    case S_IF: {
        fprintf(out, "if  (line %u)\n", s->span.line);
        dump_expr(out, s->u.if_.cond, depth + 1, "cond");
        /* a compile-time condition's other branch was not checked: it has no types to show */
        bool pruned = s->u.if_.cond && s->u.if_.cond->is_const;
        const Stmt *taken = pruned ? ast_const_if_taken(s) : NULL;
        if (!pruned || taken == s->u.if_.then_) dump_stmt(out, s->u.if_.then_, depth + 1);
        else indent(out, depth + 1), fputs("(not taken: the condition is false at compile time)\n", out);
        if (s->u.if_.else_) {
            indent(out, depth);
            fputs("else\n", out);
            if (!pruned || taken == s->u.if_.else_) dump_stmt(out, s->u.if_.else_, depth + 1);
            else indent(out, depth + 1), fputs("(not taken: the condition is true at compile time)\n", out);
        }
        break;
    }
    case S_RETURN:
        fprintf(out, "return  (line %u)\n", s->span.line);
        if (s->u.ret.value) dump_expr(out, s->u.ret.value, depth + 1, NULL);
        break;
    case S_EXPR:
        fprintf(out, "expr  (line %u)\n", s->span.line);
        dump_expr(out, s->u.expr.expr, depth + 1, NULL);
        break;
    case S_BLOCK:
        fputs("block\n", out);
        for (int i = 0; i < s->u.block.stmts.len; i++)
            dump_stmt(out, s->u.block.stmts.items[i], depth + 1);
        break;
    }
}

void ast_dump_module(FILE *out, const Module *m, const char *only_kernel) {
    char buf[64];
    for (int k = 0; k < m->kernels.len; k++) {
        const KernelDef *kd = m->kernels.items[k];
        if (only_kernel && strcmp(kd->name, only_kernel) != 0) continue;
        fprintf(out, "kernel %s  (line %u)\n", kd->name, kd->span.line);
        for (int i = 0; i < kd->params.len; i++) {
            const Param *p = kd->params.items[i];
            indent(out, 1);
            if (p->is_const) {
                fprintf(out, "const %s", p->name);
                if (p->sym && p->sym->type.dtype == DT_TYPE)
                    fprintf(out, " : type = %s", dtype_name(p->sym->cv.dtype));
                else if (p->sym && p->sym->type.dtype == DT_STRING)
                    fprintf(out, " : str = \"%s\"", p->sym->cv.str);
                else if (p->sym && dtype_is_float(p->sym->type.dtype))
                    fprintf(out, " : %s = %g", dtype_name(p->sym->type.dtype), p->sym->cv.f);
                else if (p->sym && p->sym->type.dtype != DT_ERROR)
                    fprintf(out, " : %s = %lld", dtype_name(p->sym->type.dtype),
                            (long long)p->sym->cv.i);
            } else {
                fprintf(out, "param %s", p->name);
                if (p->sym) fprintf(out, " : %s", type_str(p->sym->type, buf, sizeof buf));
            }
            if (p->align) fprintf(out, " @align(%lld)", (long long)p->align);
            if (p->multiple_of) fprintf(out, " @multiple_of(%lld)", (long long)p->multiple_of);
            if (p->equal_one) fputs(" @equal(1)", out);
            fputs("\n", out);
        }
        dump_stmt(out, kd->body, 1);
    }
    for (int h = 0; h < m->helpers.len && !only_kernel; h++) {
        const HelperDef *hd = m->helpers.items[h];
        fprintf(out, "fn %s  (line %u, inlined at each call)\n", hd->name, hd->span.line);
    }
}
