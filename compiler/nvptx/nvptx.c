/* nvptx.c: the backend's entry: one LLVM module for the kernels asked for,
 * each scheduled (schedule.c) and then built (kernel.c), then optimized and
 * emitted as PTX by emit.c. */
#include "gen.h"

/* One kernel: its schedule, then its code (kernel.c), then what a launcher needs. */
bool nvptx_gen_kernel(NvptxModule *m, const BirFunction *f, NvptxKernel *info) {
    /* on the heap: it changes between the setjmp and a longjmp back */
    Gen *g = calloc(1, sizeof *g);
    if (!g) return nvptx_error(m, f, NULL, "out of memory");
    *g = (Gen){.m = m, .f = f};
    g->b = LLVMCreateBuilderInContext(g->m->ctx);
    jmp_buf oom;
    g->arena.on_oom = &oom;
    if (setjmp(oom)) {
        LLVMDisposeBuilder(g->b);
        arena_free(&g->arena);
        free(g);
        return nvptx_error(m, f, NULL, "out of memory");
    }
    g->s = arena_alloc(&g->arena, sizeof *g->s);
    /* the layouts are planned for blocks of up to two dimensions: a 3-D
     * block is built as its 2-D parts (split3d.c) */
    const BirOp *unsplit;
    char why[320];
    const BirFunction *parts = bir_split_3d(f, &g->arena, &unsplit, why, sizeof why);
    bool ok = parts ? nvptx_kernel_facts(m, f, &g->arena, &g->s->facts) : nvptx_gen_fail(g, unsplit, "%s", why);
    if (parts) g->f = parts; /* f itself, for errors, stays the kernel as written */
    g->s->split_3d = parts && parts != f;
    if (ok) {
        g->regs = arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof *g->regs);
        g->staged = arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof *g->staged);
        g->hoisted = arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof *g->hoisted);
        g->lazy.item = arena_alloc(&g->arena, (size_t)(g->f->nvalues + 1) * sizeof *g->lazy.item);
        /* every decision is the schedule's: asked only for those, no code is built */
        ok = nvptx_schedule(g) && (m->opt->decisions_only || nvptx_emit_kernel(g));
        /* no plan: the kernel was refused before its layouts were planned */
        *info = (NvptxKernel){.name = g->f->name, .num_warps = g->s->plan ? nvptx_ws_launch_warps(g) : 0,
                              .shared_bytes = g->s->smem_size,
                              .tensor_maps = g->s->tma, .persistent = m->opt->persistent,
                              .min_regs = g->s->wgmma_min_regs};
        for (int i = 0; g->s->facts && i < g->f->nparams && i < BLK_MAX_KERNEL_ARGS; i++) info->facts[i] = g->s->facts[i];
        const char *notes = g->s->notes ? g->s->notes : ""; /* none when scheduling failed */
        info->notes = malloc(strlen(notes) + 1);
        if (info->notes) strcpy(info->notes, notes);
        if (ok && m->opt->plan && !(info->plan = nvptx_schedule_text(g))) ok = nvptx_error(m, f, NULL, "out of memory");
    }
    LLVMDisposeBuilder(g->b);
    arena_free(&g->arena);
    free(g);
    return ok;
}

static void module_init(NvptxModule *m, const BirModule *bir) {
    m->ctx = LLVMContextCreate();
    const char *src_name = bir->nkernels && bir->kernels[0]->src ? bir->kernels[0]->src->name : "kernel.blk";
    m->mod = LLVMModuleCreateWithNameInContext(src_name, m->ctx);
    m->t.i1 = LLVMInt1TypeInContext(m->ctx);
    m->t.i8 = LLVMInt8TypeInContext(m->ctx);
    m->t.i16 = LLVMInt16TypeInContext(m->ctx);
    m->t.i32 = LLVMInt32TypeInContext(m->ctx);
    m->t.i64 = LLVMInt64TypeInContext(m->ctx);
    m->t.f16 = LLVMHalfTypeInContext(m->ctx);
    m->t.bf16 = LLVMBFloatTypeInContext(m->ctx);
    m->t.f32 = LLVMFloatTypeInContext(m->ctx);
    m->t.f64 = LLVMDoubleTypeInContext(m->ctx);
    m->t.void_t = LLVMVoidTypeInContext(m->ctx);
    m->t.gptr = LLVMPointerTypeInContext(m->ctx, 1);
    m->t.genptr = LLVMPointerTypeInContext(m->ctx, 0);
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
    LLVMAddModuleFlag(m->mod, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                      LLVMValueAsMetadata(LLVMConstInt(m->t.i32, LLVMDebugMetadataVersion(), 0)));
    LLVMAddModuleFlag(m->mod, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                      LLVMValueAsMetadata(LLVMConstInt(m->t.i32, 2, 0)));
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
    if (m.arch) m.ptx_isa = nvptx_ptx_isa(m.arch);
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

const char *nvptx_llvm_version(char *buf, size_t size) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    snprintf(buf, size, "%u.%u.%u", major, minor, patch);
    return buf;
}
