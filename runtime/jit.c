/* jit.c: the runtime's only calls into the compiler (compiler/blkc.h): the
 * front end, the block IR and the NVPTX backend, one function per concern
 * (see device.h). The cpu device also runs the interpreter (device_cpu.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "device.h"

bool blk_jit_arch_known(const char *arch) { return backend_arch_features(arch) != NULL; }

typedef struct {
    char *text;
    size_t len, cap;
} TextBuf;

static void collect_diag(void *user, const Diagnostic *d) {
    TextBuf *t = user;
    char *s = diag_format(d);
    size_t n = s ? strlen(s) : 0;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *grown = realloc(t->text, cap);
        if (!grown) {
            free(s);
            return;
        }
        t->text = grown;
        t->cap = cap;
    }
    if (n) memcpy(t->text + t->len, s, n + 1);
    t->len += n;
    free(s);
}

Compilation *blk_jit_compile(const char *name, const char *text, size_t len, ConstDef *defs, int ndefs, char **diags) {
    TextBuf t = {0};
    CompileRequest req = {name, text, len, defs, ndefs, collect_diag, &t};
    Compilation *comp = compile_front(&req);
    if (comp && compile_lower(comp)) {
        free(t.text);
        *diags = NULL;
        return comp;
    }
    compilation_free(comp);
    *diags = t.text;
    return NULL;
}

void blk_jit_release(Compilation *comp) { compilation_free(comp); }

char *blk_jit_emit(const Compilation *comp, const char *kernel, const BackendOptions *opt, bool llvm_ir, int *warps,
                   int64_t *shared_bytes, char *err, size_t err_size) {
    BackendModule *bm = codegen_module(comp->bir, kernel, opt, err, err_size);
    char *text = bm ? backend_emit(bm, llvm_ir, err, err_size) : NULL;
    if (warps) *warps = bm ? backend_kernel_num_warps(bm, kernel) : 0;
    if (shared_bytes) *shared_bytes = bm ? backend_kernel_shared_bytes(bm, kernel) : 0;
    backend_module_free(bm);
    return text;
}
