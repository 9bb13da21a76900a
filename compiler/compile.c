/* compile.c: the pipeline as a list of passes, shared by the blkc driver, the
 * runtime API and the benchmarks: source -> tokens -> AST -> checked AST ->
 * block IR -> PTX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"

static void init_source(Compilation *c, const CompileRequest *req) {
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

/* The front end's diagnostics are held and given in source order: the parser
 * reports before sema, and sema checks a helper at its calls, so the order of
 * reporting is not the order of the file. A note stays after the diagnostic
 * it explains (the one reported just before it in the same pass); diagnostics
 * about the whole file (line 0: -D values, "no kernel", the error cap) come
 * last. If holding one fails for memory, it is given at once instead. */
typedef struct {
    Diagnostic d;
    uint64_t place; /* its leader's offset (the leader: itself, or the error a note explains) */
    size_t leader;  /* the leader's order of reporting */
    size_t seq;     /* order of reporting, which breaks ties */
} HeldDiag;

typedef struct {
    HeldDiag *items;
    size_t len, cap;
    bool note_may_attach; /* the last held one began a group in this pass */
    DiagCallback forward;
    void *forward_user;
} DiagHold;

static void hold_diag(void *user, const Diagnostic *d) {
    DiagHold *h = user;
    size_t n = strlen(d->message) + 1;
    char *msg = malloc(n);
    if (msg) memcpy(msg, d->message, n);
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        HeldDiag *grown = msg ? realloc(h->items, cap * sizeof *grown) : NULL;
        if (grown) h->items = grown, h->cap = cap;
    }
    if (!msg || h->len == h->cap) {
        free(msg);
        if (h->forward) h->forward(h->forward_user, d);
        return;
    }
    HeldDiag *held = &h->items[h->len];
    held->d = *d;
    held->d.message = msg;
    held->seq = h->len;
    bool attaches = d->severity == DIAG_NOTE && h->note_may_attach && h->len > 0;
    held->leader = attaches ? h->items[h->len - 1].leader : h->len;
    held->place = attaches ? h->items[h->len - 1].place : d->span.line == 0 ? UINT64_MAX : d->span.offset;
    h->note_may_attach = d->severity != DIAG_NOTE || attaches;
    h->len++;
}

static int by_place(const void *pa, const void *pb) {
    const HeldDiag *a = pa, *b = pb;
    if (a->place != b->place) return a->place < b->place ? -1 : 1;
    if (a->leader != b->leader) return a->leader < b->leader ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void release_held(DiagHold *h) {
    if (h->len) qsort(h->items, h->len, sizeof *h->items, by_place);
    for (size_t i = 0; i < h->len; i++) {
        if (h->forward) h->forward(h->forward_user, &h->items[i].d);
        free((char *)h->items[i].d.message);
    }
    free(h->items);
    *h = (DiagHold){0};
}

static void run_front(Compilation *c, const CompileRequest *req) {
    DiagHold hold = {.forward = req->diag, .forward_user = req->diag_user};
    jmp_buf oom;
    c->arena.on_oom = &oom;
    c->de.callback = hold_diag;
    c->de.user = &hold;
    if (setjmp(oom)) {
        out_of_memory(c);
    } else {
        init_source(c, req);
        c->module = parse_module(&c->arena, &c->src, &c->de);
        hold.note_may_attach = false; /* sema's first note explains nothing of the parser's */
        /* Check even after syntax errors: the parser recovered, and more
         * errors per run help. Sema tolerates the holes the parser left. */
        sema_check_module(&c->arena, c->module, &c->de, req->defs, req->ndefs);
    }
    c->ok = c->de.errors == 0;
    c->arena.on_oom = NULL;
    release_held(&hold);
    c->de.callback = req->diag;
    c->de.user = req->diag_user;
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
    c->de.callback = req->diag; /* the lexer reports in source order */
    c->de.user = req->diag_user;
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

const BlkIntOption blk_int_options[] = {
#define BLK_INT(name, cli, lo, hi, rule, value, help) {#name, cli, lo, hi, rule, value, help},
#include "options.def"
#undef BLK_INT
};
const int blk_num_int_options = (int)(sizeof blk_int_options / sizeof *blk_int_options);

bool blk_int_option_ok(const BlkIntOption *o, long v, bool cli) {
    if (!cli && (v == 0 || (v == -1 && o->rule == BLK_INT_OR_NONE))) return true;
    return v >= o->lo && v <= o->hi && (o->rule != BLK_INT_POW2 || (v & (v - 1)) == 0);
}

const char *blk_int_option_range(const BlkIntOption *o, bool cli, char *buf, size_t size) {
    if (cli)
        snprintf(buf, size, "%s%d to %d%s", o->rule == BLK_INT_POW2 ? "a power of two from " : "", o->lo, o->hi,
                 o->rule == BLK_INT_OR_NONE ? " or none" : "");
    else if (o->rule == BLK_INT_POW2)
        snprintf(buf, size, "0 or a power of two up to %d", o->hi);
    else
        snprintf(buf, size, "%s%d to %d", o->rule == BLK_INT_OR_NONE ? "-1 (none), 0 (the default) or " : "0 or ", o->lo,
                 o->hi);
    return buf;
}
