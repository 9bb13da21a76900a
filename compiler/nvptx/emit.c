/* emit.c: LLVM IR -> PTX with LLVM's NVPTX backend, in process, after LLVM's
 * default<O3> pipeline. */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_nvptx(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* Two parts of the DAG combiner are quadratic in the memory operations
     * of a basic block: merging consecutive stores, and inlining the chains a
     * TokenFactor joins (up to 2048 of them by default). A [256, 128] f32
     * transpose with 4 warps (512 shared-memory stores a thread in one
     * block) spent 21 of 22 s of instruction selection in the first; with 2
     * warps, 9 of 10 s in the second; with 1, over 300 s in both. The
     * backend writes its vector accesses itself, so the merging gains
     * nothing, and 4 chains keep TokenFactors small: every example's PTX is
     * the same without them (scripts/ptx-snapshot.sh). GVN without memory
     * dependence analysis: blkc emits each load once, so GVN found no load
     * to remove in any example (the same PTX), and the analysis was half of
     * matmul's O3 time on sm_90a (docs/performance.md, "Compile time"). */
    const char *const args[] = {"blkc", "-combiner-store-merging=false", "-combiner-tokenfactor-inline-limit=4",
                                "-enable-gvn-memdep=false"};
    LLVMParseCommandLineOptions(4, args, NULL);
}

/* An internal error: not the program's fault, so it has no location. */
static char *internal_error(NvptxModule *m, const char *what, const char *msg) {
    diag_report(m->de, DIAG_ERROR, NULL, (Span){0}, "internal compiler error: %s: %s", what, msg);
    return NULL;
}

char *nvptx_emit(NvptxModule *m, bool llvm_ir) {
    pthread_once(&init_once, init_nvptx);
    LLVMModuleRef mod = m->mod;
    char *msg = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
        internal_error(m, "invalid LLVM IR", msg);
        LLVMDisposeMessage(msg);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    LLVMTargetRef target;
    if (LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &msg)) {
        internal_error(m, "the NVPTX target is missing from this LLVM", msg);
        LLVMDisposeMessage(msg);
        return NULL;
    }
    /* code generation at -O2: -O3 adds only GVN twice to NVPTX's IR passes
     * (EarlyCSE at -O2), which changed no example's PTX and took a third of
     * the code generator's time on the dot examples */
    char features[16]; /* the arch's PTX ISA, or the newer one a kernel's code needs */
    snprintf(features, sizeof features, "+ptx%d", m->ptx_isa);
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, "nvptx64-nvidia-cuda", m->arch->name,
                                                      features, LLVMCodeGenLevelDefault,
                                                      LLVMRelocDefault, LLVMCodeModelDefault);
    LLVMPassBuilderOptionsRef popt = LLVMCreatePassBuilderOptions();
    LLVMErrorRef perr = LLVMRunPasses(mod, "default<O3>", tm, popt);
    LLVMDisposePassBuilderOptions(popt);
    char *out = NULL;
    if (perr) {
        char *e = LLVMGetErrorMessage(perr);
        internal_error(m, "LLVM passes failed", e);
        LLVMDisposeErrorMessage(e);
    } else if (llvm_ir) {
        char *text = LLVMPrintModuleToString(mod);
        out = malloc(strlen(text) + 1);
        if (out) strcpy(out, text);
        else internal_error(m, "emitting LLVM IR", "out of memory");
        LLVMDisposeMessage(text);
    } else {
        LLVMMemoryBufferRef buf = NULL;
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &msg, &buf)) {
            internal_error(m, "PTX emission failed", msg);
            LLVMDisposeMessage(msg);
        } else {
            size_t n = LLVMGetBufferSize(buf);
            out = malloc(n + 1);
            if (out) {
                memcpy(out, LLVMGetBufferStart(buf), n);
                out[n] = 0;
            } else {
                internal_error(m, "emitting PTX", "out of memory");
            }
            LLVMDisposeMemoryBuffer(buf);
        }
    }
    LLVMDisposeTargetMachine(tm);
    return out;
}
