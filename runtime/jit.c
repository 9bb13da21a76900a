/* jit.c: the runtime's only calls into the compiler's pipeline
 * (compiler/compile.h) and its arch table, one function per concern (see
 * device.h). The cpu device also runs the interpreter (device_cpu.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "launch.h"

bool blk_jit_arch_known(const char *arch) { return nvptx_arch(arch) != NULL; }

const char *blk_jit_arch_names(char *buf, size_t size) { return nvptx_arch_names(buf, size); }

bool blk_jit_launches_after_previous(const char *arch, const BirFunction *f) {
    return nvptx_launches_after_previous(nvptx_arch(arch), f);
}

int blk_jit_occupancy_target(const char *arch, int sm_registers, int programs, int warps, int regs, int64_t shared,
                             int min_regs, bool persistent) {
    const NvptxArch *a = nvptx_arch(arch);
    int most = a ? nvptx_programs_per_sm(a, warps, 0, shared, NULL) : programs; /* registers aside */
    return nvptx_occupancy_target(sm_registers, programs, most, warps, regs, min_regs, persistent);
}

char *blk_jit_with_occupancy_target(const char *ptx, int target) { return nvptx_with_occupancy_target(ptx, target); }

const char *blk_jit_device_arch(int major, int minor) {
    const NvptxArch *a = nvptx_arch_for_device(major, minor);
    return a ? a->name : NULL;
}

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
        *diags = t.text; /* its notes and warnings, or NULL */
        comp->de = (DiagEngine){0}; /* t is gone; blk_jit_emit sets its own */
        return comp;
    }
    compilation_free(comp);
    *diags = t.text;
    return NULL;
}

void blk_jit_release(Compilation *comp) { compilation_free(comp); }

char *blk_jit_emit(Compilation *comp, const char *kernel, const NvptxOptions *opt, bool llvm_ir, NvptxKernel *info,
                   char *err, size_t err_size) {
    NvptxOptions o = *opt;
    o.only_kernel = kernel;
    o.llvm_ir = llvm_ir;
    TextBuf t = {0};
    comp->de = (DiagEngine){collect_diag, &t, 0, false};
    NvptxOutput out;
    bool ok = compile_ptx(comp, &o, &out);
    comp->de = (DiagEngine){0};
    if (!ok) {
        snprintf(err, err_size, "%s", t.text ? t.text : "the backend failed");
        free(t.text);
        return NULL;
    }
    free(t.text);
    if (info) {
        *info = out.kernels[0];
        info->notes = NULL;         /* freed with out */
        out.kernels[0].plan = NULL; /* the caller's (with opt->plan) */
    }
    char *text = out.text;
    out.text = NULL;
    nvptx_output_free(&out);
    return text;
}

char *blk_jit_plan(Compilation *comp, const char *kernel, const NvptxOptions *opt, char *err, size_t err_size) {
    NvptxOptions o = *opt;
    o.plan = o.decisions_only = true; /* the text is "": no code is built */
    NvptxKernel info;
    char *text = blk_jit_emit(comp, kernel, &o, false, &info, err, err_size);
    free(text);
    return text ? info.plan : NULL; /* (a compile asked for its plan fails without one) */
}

char *blk_jit_contract(Compilation *comp, const NvptxOptions *opt, const NvptxKernel *k, bool json, const char *ptx) {
    NvptxOutput one = {"", (NvptxKernel *)k, 1};
    LaunchBuild b = {comp->bir, &one, opt->arch ? opt->arch : NVPTX_DEFAULT_ARCH, opt, NULL, 0, NULL};
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    if (json) launch_contract_json(out, &b);
    else launch_contract_comment(out, &b);
    if (ptx) fputs(ptx, out);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
