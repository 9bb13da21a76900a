/* ptx.c: LLVM IR -> PTX with LLVM's NVPTX backend, in process; and the
 * annotated form of the PTX that shows each source line above its code. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

LLVMModuleRef backend_llvm_module(BackendModule *bm, const char **arch, const char **features);

/* Each arch with the PTX ISA version that introduced it, so the PTX loads
 * on the oldest driver that knows the GPU. */
const char *backend_arch_features(const char *arch) {
    static const struct { const char *arch, *features; } known[] = {
        {"sm_80", "+ptx70"}, {"sm_86", "+ptx71"}, {"sm_89", "+ptx78"}, {"sm_90", "+ptx78"}, {"sm_90a", "+ptx80"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].arch, arch) == 0) return known[i].features;
    return NULL;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

char *backend_emit(BackendModule *bm, bool llvm_ir, char *err, size_t err_size) {
    pthread_once(&init_once, init_nvptx);
    const char *arch, *features;
    LLVMModuleRef mod = backend_llvm_module(bm, &arch, &features);
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        snprintf(err, err_size, "internal compiler error: invalid LLVM IR: %s", msg);
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg)) {
        snprintf(err, err_size, "the NVPTX target is missing from this LLVM: %s", msg);
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", arch, features,
                                                      LLVMCodeGenLevelAggressive, LLVMRelocDefault,
                                                      LLVMCodeModelDefault);
    LLVMPassBuilderOptionsRef popt = LLVMCreatePassBuilderOptions();
    LLVMErrorRef perr = LLVMRunPasses(mod, "default<O3>", tm, popt);
    LLVMDisposePassBuilderOptions(popt);
    char *out = NULL;
    if (perr) {
        char *m = LLVMGetErrorMessage(perr);
        snprintf(err, err_size, "internal compiler error: LLVM passes failed: %s", m);
        LLVMDisposeErrorMessage(m);
    } else if (llvm_ir) {
        char *text = LLVMPrintModuleToString(mod);
        out = malloc(strlen(text) + 1);
        if (out) strcpy(out, text);
        LLVMDisposeMessage(text);
    } else {
        LLVMMemoryBufferRef buf = NULL;
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &buf)) {
            snprintf(err, err_size, "internal compiler error: PTX emission failed: %s", msg);
            LLVMDisposeMessage(msg);
        } else {
            size_t n = LLVMGetBufferSize(buf);
            out = malloc(n + 1);
            if (out) {
                memcpy(out, LLVMGetBufferStart(buf), n);
                out[n] = 0;
            }
            LLVMDisposeMemoryBuffer(buf);
        }
    }
    LLVMDisposeTargetMachine(tm);
    return out;
}

/* ------------------------------------------------------------- annotate */

/* Line `line` of the source, trimmed, or NULL. */
static const char *source_line(const Source *src, uint32_t line, int *len) {
    if (!src || line == 0) return NULL;
    const char *s = src->text, *end = src->text + src->len;
    for (uint32_t l = 1; l < line && s < end; s++) l += *s == '\n';
    if (s >= end) return NULL;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *e = s;
    while (e < end && *e != '\n') e++;
    *len = (int)(e - s);
    return s;
}

char *ptx_annotate(const char *ptx, const Source *src) {
    size_t cap = strlen(ptx) * 2 + 4096, at = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    uint32_t last = 0;
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
        const char *t = p;
        while (*t == ' ' || *t == '\t') t++;
        unsigned file, line;
        if (strncmp(t, ".loc", 4) == 0 && sscanf(t, ".loc %u %u", &file, &line) == 2) {
            /* a source line comment where the line changes; the .loc itself
             * goes. Line 0 (code of no line) keeps the current one. */
            if (line == 0) {
                p += n;
                continue;
            }
            int len = 0;
            const char *s = source_line(src, line, &len);
            if (line != last && s) {
                size_t need = (size_t)len + 64;
                if (at + need >= cap) {
                    char *grown = realloc(out, cap = (cap + need) * 2);
                    if (!grown) { free(out); return NULL; }
                    out = grown;
                }
                at += (size_t)snprintf(out + at, cap - at, "\t// %u: %.*s\n", line, len, s);
            }
            last = line;
        } else {
            if (at + n + 1 >= cap) {
                char *grown = realloc(out, cap = (cap + n) * 2);
                if (!grown) { free(out); return NULL; }
                out = grown;
            }
            memcpy(out + at, p, n);
            at += n;
        }
        p += n;
    }
    out[at] = 0;
    return out;
}
