/* support.h: helpers shared by the test suites. */
#ifndef BLK_TEST_SUPPORT_H
#define BLK_TEST_SUPPORT_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "interp/interp.h"

/* Diagnostics captured through the callback, formatted as the driver shows them. */
typedef struct {
    char text[1 << 16];
    size_t len;
    int count;
} Captured;

static void capture_diag(void *user, const Diagnostic *d) {
    Captured *c = user;
    char *s = diag_format(d);
    size_t n = strlen(s);
    if (c->len + n < sizeof c->text) {
        memcpy(c->text + c->len, s, n + 1);
        c->len += n;
    }
    c->count++;
    free(s);
}

static inline Compilation *compile_defs(const char *src, ConstDef *defs, int ndefs, Captured *cap) {
    CompileRequest req = {
        .name = "test.blk", .text = src, .len = strlen(src), .defs = defs, .ndefs = ndefs,
        .diag = capture_diag, .diag_user = cap,
    };
    return compile_front(&req);
}

static inline Compilation *compile_str(const char *src, Captured *cap) {
    return compile_defs(src, NULL, 0, cap);
}

/* Reads a whole file; NULL on failure. Caller frees. */
static inline char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* DIR/NAME read whole (an example, a test's kernel file); the test fails
 * when it cannot be. Caller frees. */
static inline char *test_file(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *src = slurp(path);
    cr_assert(src, "cannot read %s", path);
    return src;
}

static inline KernelDef *find_kernel(Module *m, const char *name) {
    for (int i = 0; i < m->kernels.len; i++) {
        KernelDef *k = m->kernels.items[i];
        if (strcmp(k->name, name) == 0) return k;
    }
    return NULL;
}

/* The first let/var named `name` anywhere in a statement tree. */
static inline Stmt *find_let(Stmt *s, const char *name) {
    if (!s) return NULL;
    switch (s->kind) {
    case S_LET: return strcmp(s->u.let.name, name) == 0 ? s : NULL;
    case S_FOR: return find_let(s->u.for_.body, name);
    case S_WHILE: return find_let(s->u.while_.body, name);
    case S_IF: {
        Stmt *r = find_let(s->u.if_.then_, name);
        return r ? r : find_let(s->u.if_.else_, name);
    }
    case S_BLOCK:
        for (int i = 0; i < s->u.block.stmts.len; i++) {
            Stmt *r = find_let(s->u.block.stmts.items[i], name);
            if (r) return r;
        }
        return NULL;
    default: return NULL;
    }
}

/* Type of binding `name` in `kernel`, as text ("[1024] f32"); "?" if absent. */
static inline const char *let_type(Compilation *c, const char *kernel, const char *name, char *buf,
                                   size_t size) {
    KernelDef *k = c && c->module ? find_kernel(c->module, kernel) : NULL;
    Stmt *s = k ? find_let(k->body, name) : NULL;
    if (!s || !s->u.let.sym) return "?";
    return type_str(s->u.let.sym->type, buf, size);
}

/* Front end, lowering and verifier; NULL-terminated "NAME=VALUE" defs.
 * Fails the test (with the diagnostics) when the source does not compile. */
static inline Compilation *compile_to_bir(const char *name, const char *src, const char *const *defs,
                                          Captured *cap) {
    ConstDef d[32];
    char texts[32][128];
    int n = 0;
    for (; defs && defs[n] && n < 32; n++) {
        snprintf(texts[n], sizeof texts[n], "%s", defs[n]);
        char *eq = strchr(texts[n], '=');
        *eq = 0;
        d[n] = (ConstDef){texts[n], eq + 1, false};
    }
    CompileRequest req = {
        .name = name, .text = src, .len = strlen(src), .defs = d, .ndefs = n,
        .diag = capture_diag, .diag_user = cap,
    };
    Compilation *c = compile_front(&req);
    if (c && c->ok) compile_lower(c);
    return c;
}

/* An example of dsl_examples/, e.g. "softmax.blk". Caller frees. */
static inline Compilation *compile_example_bir(const char *file, const char *const *defs, Captured *cap) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", BLK_EXAMPLES_DIR, file);
    char *src = slurp(path);
    if (!src) return NULL;
    Compilation *c = compile_to_bir(file, src, defs, cap);
    free(src);
    return c;
}

#endif
