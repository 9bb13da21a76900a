/* compile.c: the pipeline as a list of passes, shared by the blkc driver, the
 * runtime API and the benchmarks: source -> tokens -> AST -> checked AST ->
 * block IR -> PTX. */
#include <stdlib.h>
#include <string.h>

#include "compile.h"

static void init_source(Compilation *c, const CompileRequest *req) {
    c->de.callback = req->diag;
    c->de.user = req->diag_user;
    /* The lexer wants a NUL sentinel; copy so callers may pass any buffer. */
    char *text = arena_alloc(&c->arena, req->len + 1);
    memcpy(text, req->text, req->len);
    text[req->len] = 0;
    c->src.name = arena_strndup(&c->arena, req->name, strlen(req->name));
    c->src.text = text;
    c->src.len = req->len;
}

/* Each pass runs with the arena's out-of-memory handler set to here: a
 * failed allocation ends the pass with an error instead of the process. */
static void out_of_memory(Compilation *c) {
    c->arena.on_oom = NULL;
    c->ok = false;
    diag_report(&c->de, DIAG_ERROR, c->src.name ? &c->src : NULL, (Span){0}, "out of memory");
}

static void run_front(Compilation *c, const CompileRequest *req) {
    jmp_buf oom;
    c->arena.on_oom = &oom;
    if (setjmp(oom)) {
        out_of_memory(c);
        return;
    }
    init_source(c, req);
    c->module = parse_module(&c->arena, &c->src, &c->de);
    /* Check even after syntax errors: the parser recovered, and more
     * errors per run help. Sema tolerates the holes the parser left. */
    sema_check_module(&c->arena, c->module, &c->de, req->defs, req->ndefs);
    c->ok = c->de.errors == 0;
    c->arena.on_oom = NULL;
}

Compilation *compile_front(const CompileRequest *req) {
    if (!req || !req->name || (!req->text && req->len)) return NULL;
    Compilation *c = calloc(1, sizeof *c);
    if (c) run_front(c, req);
    return c;
}

bool compile_lower(Compilation *c) {
    if (!c->ok) return false;
    if (c->bir) return true;
    jmp_buf oom;
    c->arena.on_oom = &oom;
    if (setjmp(oom)) {
        out_of_memory(c);
        return false;
    }
    c->bir = lower_module(&c->arena, c->module);
    for (int i = 0; i < c->bir->nkernels; i++) {
        char err[512];
        if (!bir_verify(c->bir->kernels[i], err, sizeof err)) {
            diag_report(&c->de, DIAG_ERROR, &c->src, (Span){0},
                        "internal compiler error: the block IR failed verification: %s", err);
            c->ok = false;
        }
    }
    c->arena.on_oom = NULL;
    return c->ok;
}

bool compile_ptx(Compilation *c, const NvptxOptions *opt, NvptxOutput *out) {
    *out = (NvptxOutput){0};
    if (!compile_lower(c)) return false;
    return nvptx_compile(c->bir, opt, &c->de, out);
}

BirFunction *compilation_kernel(const Compilation *c, const char *name) {
    for (int i = 0; c->bir && i < c->bir->nkernels; i++)
        if (strcmp(c->bir->kernels[i]->name, name) == 0) return c->bir->kernels[i];
    return NULL;
}

void compilation_free(Compilation *c) {
    if (!c) return;
    arena_free(&c->arena);
    free(c);
}

int dump_tokens(FILE *out, const CompileRequest *req) {
    Compilation *c = calloc(1, sizeof *c);
    if (!c) return 1;
    jmp_buf oom;
    c->arena.on_oom = &oom;
    if (!setjmp(oom)) {
        init_source(c, req);
        Lexer lx;
        lexer_init(&lx, &c->src, &c->de);
        for (;;) {
            Token t = lexer_next(&lx);
            fprintf(out, "%u:%u %s", t.span.line, t.span.col, token_kind_name(t.kind));
            if (t.kind != TOK_EOF) fprintf(out, " '%.*s'", (int)t.span.len, t.text);
            fputc('\n', out);
            if (t.kind == TOK_EOF) break;
        }
    } else {
        out_of_memory(c);
    }
    int errors = c->de.errors;
    compilation_free(c);
    return errors;
}
