/* kernel.c: a kernel's LLVM function, emitted from its schedule: the op
 * dispatch, the parameters (and tensor maps'), debug locations. */
#include "gen.h"

/* ------------------------------------------------------------------ ops */

static void set_location(Gen *g, const BirOp *op) {
    LLVMMetadataRef loc = LLVMDIBuilderCreateDebugLocation(g->m->ctx, op->span.line ? op->span.line : 1, op->span.col, g->di_sub, NULL);
    LLVMSetCurrentDebugLocation2(g->b, loc);
}

bool nvptx_gen_op(Gen *g, const BirOp *op) {
    const int64_t slot = 0; /* the shared region (see smem_size) */
    set_location(g, op);
    const int *a = op->operands;
    int r = op->nresults == 1 ? op->results[0] : -1;
    switch (op->code) {
    case BIR_CONST: {
        DType d = vtype(g, r).dtype;
        const Fp8Format *fp8 = fp8_format(d);
        LLVMValueRef c = fp8 ? LLVMConstInt(g->m->t.i8, f32_to_fp8((float)op->value.f, fp8), 0)
                         : dtype_is_float(d) ? LLVMConstReal(ty(g, d), op->value.f)
                                             : LLVMConstInt(ty(g, d), (unsigned long long)op->value.i, 1);
        nvptx_new_regs(g, r)[0] = c;
        return true;
    }
    case BIR_PROGRAM_ID: case BIR_NUM_PROGRAMS:
        nvptx_new_regs(g, r)[0] = op->code == BIR_PROGRAM_ID ? nvptx_program_id(g, (int)op->attr)
                                                              : nvptx_num_programs(g, (int)op->attr);
        return true;
    case BIR_ARANGE: {
        const Layout *l = &g->s->plan->layouts[r];
        LLVMValueRef *out = nvptx_new_regs(g, r);
        for (int k = 0; k < l->nregs; k++) out[k] = LLVMBuildAdd(g->b, nvptx_coord(g, l, 0, k), ci32(g, op->attr), "");
        return true;
    }
    case BIR_SPLAT: {
        LLVMValueRef *out = nvptx_new_regs(g, r);
        for (int k = 0; k < nregs(g, r); k++) out[k] = g->regs[a[0]][0];
        return true;
    }
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        if (g->staged[r]) return true; /* a pipelined load's view, in its ring slot */
        return nvptx_gen_reshape(g, op, slot);
    case BIR_DOT: {
        const NvptxDotSchedule *ds = nvptx_dot_schedule(g->s, op);
        if (ds->deferred && ds->loop->overlap_after) { /* issued late */
            nvptx_pipeline_hold_deferred(g, op);
            return true;
        }
        if (!nvptx_gen_dot(g, op, slot, ds->then_deferred ? nvptx_pipeline_issue_deferred : NULL)) return false;
        /* the first dot of a loop with a deferred dot has waited for that one too: its slot is free */
        if (ds->ends_deferred) nvptx_pipeline_deferred_waited(g);
        return true;
    }
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES:
        if (nvptx_pipelined_load(g, op)) return true; /* its data is in a ring slot */
        return nvptx_gen_memory(g, op, slot);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return nvptx_gen_reduce(g, op, slot);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN: return nvptx_gen_scan(g, op, slot);
    case BIR_REDUCE: return nvptx_gen_tree_reduce(g, op, slot);
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: return nvptx_gen_rearrange(g, op, slot);
    case BIR_GATHER: return nvptx_gen_gather(g, op, slot);
    case BIR_HISTOGRAM: return nvptx_gen_histogram(g, op, slot);
    case BIR_FOR: return nvptx_gen_for(g, op);
    case BIR_WHILE: return nvptx_gen_while(g, op);
    case BIR_IF: return nvptx_gen_if(g, op);
    case BIR_YIELD: case BIR_CONDITION: return true; /* read by the parent */
    case BIR_RETURN: nvptx_return(g); return true;
    case BIR_BARRIER: nvptx_barrier(g); return true;
    case BIR_PRINT: return nvptx_gen_print(g, op);
    case BIR_ASSERT: case BIR_ASSUME: return nvptx_gen_check(g, op);
    case BIR_INLINE_ASM: return nvptx_gen_inline_asm(g, op, slot);
    case BIR_GRID_DEPENDENCY:
        /* PTX 7.8's griddepcontrol, sm_90 on; before that a grid starts only after the one before it
         * has finished, so there is nothing to wait for or to release */
        if (g->m->arch->grid_dependency)
            nvptx_asm_call(g, g->m->t.void_t, op->attr == GRID_WAIT ? "griddepcontrol.wait;" : "griddepcontrol.launch_dependents;",
                           "~{memory}", NULL, 0, true);
        return true;
    case BIR_READ_COUNTER: {
        /* not readnone in LLVM (the clocks), so each read stays where it is */
        static const char *const reads[] = {"llvm.nvvm.read.ptx.sreg.globaltimer", "llvm.nvvm.read.ptx.sreg.clock64",
                                            "llvm.nvvm.read.ptx.sreg.smid"};
        nvptx_new_regs(g, r)[0] = nvptx_call(g, reads[op->attr], op->attr == COUNTER_SMID ? g->m->t.i32 : g->m->t.i64, NULL, 0);
        return true;
    }
    /* every elementwise op, one per element (nvptx/elementwise.c); listed, not a default, so that an
       op of another kind without its case above is a build error */
#define OPS_TAKES_KIND_LEAF
#define OPS_TAKES_KIND_SHAPE
#define OPS_TAKES_KIND_MEMORY
#define OPS_TAKES_KIND_REDUCE
#define OPS_TAKES_KIND_DOT
#define OPS_TAKES_KIND_CONTROL
#define OPS_TAKES_KIND_TERMINATOR
#define OPS_TAKES_KIND_EFFECT
#include "ops_cases.inc"
    {
        if (op->code == BIR_SELECT && vtype(g, r).rank && nvptx_gen_tested_select(g, op, slot)) return true;
        const Layout *l = &g->s->plan->layouts[r];
        LLVMValueRef *x[3] = {NULL, NULL, NULL};
        if (vtype(g, r).rank)
            for (int i = 0; i < op->noperands; i++) x[i] = nvptx_operand(g, a[i], l, slot);
        nvptx_elementwise_regs(g, op, x, nvptx_new_regs(g, r));
        return true;
    }
    case BIR_OPCODE_COUNT: break;
    }
    return nvptx_gen_fail(g, op, "the NVPTX backend cannot lower '%s'", bir_opcode_name(op->code));
}

bool nvptx_gen_block(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (g->terminated) break; /* after a return: dead code */
        if (g->lazy.n) nvptx_carried_load_uses(g, op);
        if (g->deferred_due) nvptx_pipeline_before(g, op);
        if (op->nresults == 1 && g->s->address_only && g->s->address_only[op->results[0]]) continue;
        if (!nvptx_gen_op(g, op)) return false;
    }
    return true;
}

/* ------------------------------------------------------------- kernels */


static void add_annotation(Gen *g, const char *key, int value) {
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->m->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(ci32(g, value))};
    LLVMAddNamedMetadataOperand(g->m->mod, "nvvm.annotations", LLVMMetadataAsValue(g->m->ctx, LLVMMDNodeInContext2(g->m->ctx, md, 3)));
}

/* The module's dynamic shared memory: one extern array that every kernel
 * addresses from 0; a launch gives it the kernel's shared_bytes. */
static void make_dynamic_shared(Gen *g) {
    NvptxModule *m = g->m;
    if (!m->shared) {
        LLVMTypeRef at = LLVMArrayType2(g->m->t.i8, 0);
        m->shared = LLVMAddGlobalInAddressSpace(g->m->mod, at, "blk_shared", 3);
        LLVMSetLinkage(m->shared, LLVMExternalLinkage);
        LLVMSetAlignment(m->shared, m->arch->wgmma ? NVPTX_SWIZZLE_PERIOD : 16);
    }
}

/* The tensor maps' parameters (nvptx.h's NvptxTensorMap): byval, so the
 * map stays in parameter space, and grid constants, so LLVM takes its
 * address there (cvta.param) instead of copying it to local memory, where
 * TMA could not read it. */
static void tensor_map_params(Gen *g) {
    if (!g->s->tma.count) return;
    LLVMTypeRef map_t = LLVMArrayType2(g->m->t.i8, 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5), align = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMMetadataRef idx[NVPTX_MAX_TENSOR_MAPS];
    for (int j = 0; j < g->s->tma.count; j++) {
        unsigned at = (unsigned)(g->f->nparams + j + 1); /* attribute index: the parameter's + 1 */
        LLVMAddAttributeAtIndex(g->fn, at, LLVMCreateTypeAttribute(g->m->ctx, byval, map_t));
        LLVMAddAttributeAtIndex(g->fn, at, LLVMCreateEnumAttribute(g->m->ctx, align, 64));
        idx[j] = LLVMValueAsMetadata(ci32(g, at));
        LLVMSetValueName2(LLVMGetParam(g->fn, at - 1), "tensor_map", 10);
    }
    LLVMSetValueName2(LLVMGetParam(g->fn, (unsigned)(g->f->nparams + g->s->tma.count)), "tensor_maps_valid", 17);
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->m->ctx, "grid_constant", 13),
                             LLVMMDNodeInContext2(g->m->ctx, idx, (size_t)g->s->tma.count)};
    LLVMAddNamedMetadataOperand(g->m->mod, "nvvm.annotations", LLVMMetadataAsValue(g->m->ctx, LLVMMDNodeInContext2(g->m->ctx, md, 3)));
}

bool nvptx_emit_kernel(Gen *g) {
    const BirFunction *f = g->f;
    LLVMTypeRef params[BLK_MAX_KERNEL_ARGS + NVPTX_MAX_TENSOR_MAPS + 4];
    if (f->nparams > BLK_MAX_KERNEL_ARGS) /* sema refuses these; a BIR built by hand might not */
        return nvptx_gen_fail(g, NULL, "kernel '%s' has %d parameters; the limit is %d", f->name, f->nparams,
                              BLK_MAX_KERNEL_ARGS);
    int n = f->nparams;
    for (int i = 0; i < n; i++) params[i] = f->params[i].type.dtype == DT_I1 ? g->m->t.i8 : ty(g, f->params[i].type.dtype);
    for (int j = 0; j < g->s->tma.count; j++) params[n++] = g->m->t.genptr;
    if (g->s->tma.count) params[n++] = g->m->t.i32;
    if (g->m->opt->persistent) /* the grid (nvptx.h's NvptxKernel.persistent) */
        for (int a = 0; a < 3; a++) params[n++] = g->m->t.i32;
    g->fn = LLVMAddFunction(g->m->mod, f->name, LLVMFunctionType(g->m->t.void_t, params, (unsigned)n, 0));
    tensor_map_params(g);
    add_annotation(g, "kernel", 1);
    add_annotation(g, "maxntidx", 32 * nvptx_ws_launch_warps(g));
    if (g->s->ws_loop) add_annotation(g, "minctasm", 1); /* setmaxnreg needs it (warpspec.c) */
    else if (g->m->opt->min_blocks_per_sm > 0) add_annotation(g, "minctasm", g->m->opt->min_blocks_per_sm);
    uint32_t line = f->body->ops.len ? ((BirOp *)f->body->ops.items[0])->span.line : 1;
    LLVMMetadataRef sub_ty = LLVMDIBuilderCreateSubroutineType(g->m->di, g->m->di_file, NULL, 0, LLVMDIFlagZero);
    g->di_sub = LLVMDIBuilderCreateFunction(g->m->di, g->m->di_file, f->name, strlen(f->name), f->name, strlen(f->name),
                                            g->m->di_file, line, sub_ty, 0, 1, line, LLVMDIFlagZero, 1);
    LLVMSetSubprogram(g->fn, g->di_sub);

    if (g->s->smem_size) make_dynamic_shared(g);

    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "entry");
    LLVMPositionBuilderAtEnd(g->b, entry);
    LLVMSetCurrentDebugLocation2(g->b, LLVMDIBuilderCreateDebugLocation(g->m->ctx, line, 1, g->di_sub, NULL));
    g->tid = nvptx_call0(g, "llvm.nvvm.read.ptx.sreg.tid.x", g->m->t.i32);
    g->lane = LLVMBuildAnd(g->b, g->tid, ci32(g, 31), "");
    g->warp = LLVMBuildLShr(g->b, g->tid, ci32(g, 5), "");
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(g->fn, (unsigned)i);
        LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        if (f->params[i].type.dtype == DT_I1) p = LLVMBuildICmp(g->b, LLVMIntNE, p, LLVMConstInt(g->m->t.i8, 0, 0), "");
        if (g->s->facts && g->s->facts[i] == NVPTX_PARAM_ONE && dtype_is_int(f->params[i].type.dtype))
            p = LLVMConstInt(ty(g, f->params[i].type.dtype), 1, 0); /* specialized: the argument is 1 */
        nvptx_new_regs(g, f->params[i].value)[0] = p;
    }
    nvptx_tma_prefetch_maps(g);
    if (g->s->ws_loop) {
        nvptx_ws_producer(g, &g->s->ws_ring);
        nvptx_ws_begin(g, &g->s->ws_ring);
    }
    nvptx_body_begin(g);
    if (!nvptx_gen_block(g, f->body)) return false;
    nvptx_body_end(g);
    return true;
}

