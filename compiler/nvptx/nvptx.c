/* nvptx.c: the backend's entry: one LLVM module for the kernels asked for,
 * built by kernel.c, then optimized and emitted as PTX by emit.c. */
#include "gen.h"

bool nvptx_error(NvptxModule *m, const BirFunction *f, const BirOp *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vreport(m->de, DIAG_ERROR, f->src, op ? op->span : f->span, fmt, ap);
    va_end(ap);
    return false;
}

static void module_init(NvptxModule *m, const BirModule *bir) {
    m->ctx = LLVMContextCreate();
    const char *src_name = bir->nkernels && bir->kernels[0]->src ? bir->kernels[0]->src->name : "kernel.blk";
    m->mod = LLVMModuleCreateWithNameInContext(src_name, m->ctx);
    LLVMSetTarget(m->mod, "nvptx64-nvidia-cuda");
    LLVMSetDataLayout(m->mod, "e-i64:64-i128:128-v16:16-v32:32-n16:32:64");
    /* Source lines: a compile unit that emits only .file/.loc directives
     * (DICompileUnit's DebugDirectivesOnly, 3, which the C enum lacks). */
    m->di = LLVMCreateDIBuilder(m->mod);
    const char *slash = strrchr(src_name, '/');
    const char *base = slash ? slash + 1 : src_name;
    size_t dir_len = slash ? (size_t)(slash - src_name) : 1;
    m->di_file = LLVMDIBuilderCreateFile(m->di, base, strlen(base), slash ? src_name : ".", dir_len);
    const char *producer = "blkc " BLKC_VERSION;
    LLVMDIBuilderCreateCompileUnit(m->di, LLVMDWARFSourceLanguageC, m->di_file, producer, strlen(producer), 1, "", 0, 0,
                                   "", 0, (LLVMDWARFEmissionKind)3, 0, 0, 0, "", 0, "", 0);
    LLVMTypeRef i32 = LLVMInt32TypeInContext(m->ctx);
    LLVMAddModuleFlag(m->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(m->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(i32, 2, 0)));
}

static void module_dispose(NvptxModule *m) {
    if (m->di) LLVMDisposeDIBuilder(m->di);
    if (m->mod) LLVMDisposeModule(m->mod);
    if (m->ctx) LLVMContextDispose(m->ctx);
}

bool nvptx_compile(const BirModule *bir, const NvptxOptions *opt, DiagEngine *de, NvptxOutput *out) {
    *out = (NvptxOutput){0};
    NvptxOptions o = *opt;
    if (!o.arch) o.arch = NVPTX_DEFAULT_ARCH;
    if (!o.only_kernel) o.param_div = NULL; /* launch facts belong to one kernel */
    NvptxModule m = {.arch = nvptx_arch(o.arch), .opt = &o, .de = de};
    if (!m.arch) {
        char names[128];
        diag_report(de, DIAG_ERROR, NULL, (Span){0}, "unknown arch '%s' (expected %s)", o.arch,
                    nvptx_arch_names(names, sizeof names));
        return false;
    }
    NvptxKernel *kernels = calloc((size_t)(bir->nkernels ? bir->nkernels : 1), sizeof *kernels);
    if (!kernels) {
        diag_report(de, DIAG_ERROR, NULL, (Span){0}, "out of memory");
        return false;
    }
    module_init(&m, bir);
    int n = 0;
    bool ok = true;
    for (int i = 0; i < bir->nkernels && ok; i++) {
        const BirFunction *f = bir->kernels[i];
        if (o.only_kernel && strcmp(f->name, o.only_kernel) != 0) continue;
        ok = nvptx_gen_kernel(&m, f, &kernels[n++]);
    }
    if (ok) ok = nvptx_check_assume_used(&m);
    LLVMDIBuilderFinalize(m.di);
    char *text = !ok ? NULL : o.decisions_only ? calloc(1, 1) : nvptx_emit(&m, o.llvm_ir);
    module_dispose(&m);
    if (!text) {
        for (int i = 0; i < n; i++) free(kernels[i].notes), free(kernels[i].plan);
        free(kernels);
        return false;
    }
    *out = (NvptxOutput){text, kernels, n};
    return true;
}

void nvptx_output_free(NvptxOutput *out) {
    if (!out) return;
    for (int i = 0; i < out->nkernels; i++) free(out->kernels[i].notes), free(out->kernels[i].plan);
    free(out->text);
    free(out->kernels);
    *out = (NvptxOutput){0};
}
