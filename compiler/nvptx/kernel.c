/* kernel.c: a kernel's LLVM function: the op dispatch, shared memory
 * planning, parameters, debug locations, and the module around the kernels. */
#include "gen.h"

/* ------------------------------------------------------------------ ops */

/* Shared memory to bring operands from index `first` on into layout `to`. */
static int64_t operands_need(Gen *g, const BirOp *op, const Layout *to, int first) {
    int64_t need = 0;
    for (int i = first; i < op->noperands; i++)
        if (op->operands[i] >= 0) {
            int64_t n = nvptx_operand_smem_bytes(g, op->operands[i], to);
            if (n > need) need = n;
        }
    return need;
}

/* Values flowing into a loop's or branch's results (their first operands
 * from `first`, or a region's yield) in the results' layouts. */
static int64_t carried_need(Gen *g, const BirOp *op, const int *vals, int n) {
    int64_t need = 0;
    for (int i = 0; i < n && i < op->nresults; i++) {
        if (!vtype(g, op->results[i]).rank) continue;
        int64_t k = nvptx_operand_smem_bytes(g, vals[i], &g->plan->layouts[op->results[i]]);
        if (k > need) need = k;
    }
    return need;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Shared memory an op needs. */
static int64_t smem_need(Gen *g, const BirOp *op) {
    const int *a = op->operands;
    switch (op->code) {
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES:
        if (vtype(g, a[0]).rank == 0) return op->code == BIR_STORE || op->code == BIR_LOAD ? 0 : 8; /* atomics' slot */
        return operands_need(g, op, &g->plan->layouts[a[0]], 1);
    case BIR_DOT: return nvptx_dot_smem_bytes(g, op);
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS: return nvptx_reshape_smem_bytes(g, op);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return nvptx_reduce_smem_bytes(g, op);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN:
        return max64(nvptx_scan_smem_bytes(g, op), operands_need(g, op, &g->plan->layouts[op->results[0]], 0));
    case BIR_REDUCE:
        return max64(nvptx_tree_reduce_smem_bytes(g, op), operands_need(g, op, &g->plan->layouts[a[0]], 1));
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: return nvptx_rearrange_smem_bytes(g, op);
    case BIR_FOR: {
        const BirOp *y = bir_block_terminator(op->regions[0]);
        return max64(carried_need(g, op, a + 3, op->noperands - 3), y ? carried_need(g, op, y->operands, y->noperands) : 0);
    }
    case BIR_WHILE: {
        const BirOp *y = bir_block_terminator(op->regions[1]);
        return max64(carried_need(g, op, a, op->noperands), y ? carried_need(g, op, y->operands, y->noperands) : 0);
    }
    case BIR_IF: {
        int64_t need = 0;
        for (int r = 0; r < 2; r++) {
            const BirOp *y = bir_block_terminator(op->regions[r]);
            if (y && y->code == BIR_YIELD) need = max64(need, carried_need(g, op, y->operands, y->noperands));
        }
        return need;
    }
    default:
        if (bir_is_elementwise(op->code) && op->nresults == 1 && vtype(g, op->results[0]).rank)
            return operands_need(g, op, &g->plan->layouts[op->results[0]], 0);
        return 0;
    }
}

/* The most shared memory any op needs, and that op. */
static void plan_smem(Gen *g, const BirBlock *b, const BirOp **largest) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        int64_t need = smem_need(g, op);
        if (need > g->smem_size) g->smem_size = need, *largest = op;
        for (int r = 0; r < op->nregions; r++) plan_smem(g, op->regions[r], largest);
    }
}

/* The most shared memory an op inside a pipelined loop needs (the loop's
 * own carried conversions included): the rings go above it. The region
 * below may reach into the rings for the ops outside those loops: a ring
 * is only live between its prologue's barrier and its last wait, and the
 * next op to use the region starts with a barrier. */
static int64_t smem_in_pipelined_loops(Gen *g, const BirBlock *b, bool inside, bool ring_body) {
    int64_t need = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        bool ring = !inside && op->code == BIR_FOR && nvptx_pipeline_loop(g, op), pipelined = inside || ring;
        /* a dot right in the loop's body stages its loop-invariant operands before the ring is live */
        if (pipelined) need = max64(need, op->code == BIR_DOT && ring_body ? nvptx_dot_smem_bytes_in_loop(g, op, b)
                                                                           : smem_need(g, op));
        for (int r = 0; r < op->nregions; r++)
            need = max64(need, smem_in_pipelined_loops(g, op->regions[r], pipelined, ring));
    }
    return need;
}

/* The op's name in errors: partner and take come from sort and split. */
static const char *user_op_name(const BirOp *op) {
    return op->code == BIR_PARTNER ? "sort" : op->code == BIR_TAKE ? "split" : bir_opcode_name(op->code);
}

/* Over the architecture's limit: the error names the op, why it needs
 * shared memory and what to shrink. */
static bool smem_error(Gen *g, const BirOp *op) {
    const NvptxArch *arch = g->m->arch;
    const char *why, *fix;
    int shaped = op->noperands ? op->operands[0] : op->results[0]; /* the block the error names */
    switch (op->code) {
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        why = "to move its operand between threads";
        fix = "use a smaller block, or compute the operand from arange and scalars so it is recomputed in place";
        break;
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES:
        why = "to bring its operands to the threads that hold its pointers";
        fix = "use a smaller block";
        break;
    case BIR_DOT:
        shaped = op->results[0];
        why = "to share its operands between threads";
        fix = "use smaller blocks (BLOCK_K first)";
        break;
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        why = "to combine the partial results of its warps";
        fix = "use a smaller block along the kept axis, or fewer warps (--num-warps)";
        break;
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN: case BIR_REDUCE:
        why = op->code == BIR_REDUCE ? "to hold the block while it reduces" : "to hold the block while it scans";
        fix = "use a smaller block";
        break;
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER:
        why = "to move its elements between threads";
        fix = "use a smaller block";
        break;
    default:
        shaped = op->nresults ? op->results[0] : op->operands[0];
        why = "to move operands between threads";
        fix = "use smaller blocks";
        break;
    }
    char shape[48];
    shape_str(vtype(g, shaped), shape, sizeof shape);
    return nvptx_gen_fail(g, op, "this %s of a %s block needs %lld bytes of shared memory %s, more than the %lld "
                          "bytes a program may use on %s; %s", user_op_name(op), shape,
                          (long long)g->smem_size, why, (long long)arch->max_shared_bytes, arch->name, fix);
}

/* ------------------------------------------------------------ code size */

/* Every op is unrolled over the registers of its results. LLVM's time grows
 * with that count (here: a 16384-element f16 sort, 63000, compiles in 3 s;
 * 32768 elements, 143000, in 10 s; the example kernels stay under 2500), so
 * a kernel may have this many a thread, no more. */
enum { MAX_UNROLLED_OPS = 65536 };

/* Register operations a thread runs for the ops of b (a loop's body once). */
static int64_t unrolled_ops(Gen *g, const BirBlock *b) {
    int64_t n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->nresults; k++) n += nregs(g, op->results[k]);
        for (int r = 0; r < op->nregions; r++) n += unrolled_ops(g, op->regions[r]);
    }
    return n;
}

/* The ops of b written at source position at (an expression lowers to several). */
static int64_t unrolled_ops_at(Gen *g, const BirBlock *b, Span at, const BirOp **first) {
    int64_t n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->span.offset == at.offset && op->span.len == at.len) {
            for (int k = 0; k < op->nresults; k++) n += nregs(g, op->results[k]);
            bool user_named = op->code == BIR_PARTNER || op->code == BIR_TAKE; /* a sort or split */
            if (!*first || (user_named && (*first)->code != op->code)) *first = op;
        }
        for (int r = 0; r < op->nregions; r++) n += unrolled_ops_at(g, op->regions[r], at, first);
    }
    return n;
}

/* The source expression contributing most to the kernel's size. */
static void largest_contributor(Gen *g, const BirBlock *b, const BirOp **best, int64_t *best_n) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i], *first = NULL;
        int64_t n = unrolled_ops_at(g, g->f->body, op->span, &first);
        if (n > *best_n) *best_n = n, *best = first;
        for (int r = 0; r < op->nregions; r++) largest_contributor(g, op->regions[r], best, best_n);
    }
}

static bool code_size_error(Gen *g, int64_t total) {
    const BirOp *op = NULL;
    int64_t n = 0;
    largest_contributor(g, g->f->body, &op, &n);
    int shaped = op->noperands ? op->operands[0] : op->results[0];
    char shape[48];
    shape_str(vtype(g, shaped), shape, sizeof shape);
    return nvptx_gen_fail(g, op, "this %s of a %s block unrolls to %lld register operations a thread (the kernel to "
                          "%lld, at most %d with %d warps); use more warps (--num-warps) or a smaller block", user_op_name(op),
                          shape, (long long)n, (long long)total, MAX_UNROLLED_OPS, g->plan->num_warps);
}

static void set_location(Gen *g, const BirOp *op) {
    LLVMMetadataRef loc = LLVMDIBuilderCreateDebugLocation(g->ctx, op->span.line ? op->span.line : 1, op->span.col, g->di_sub, NULL);
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
        LLVMValueRef c = fp8 ? LLVMConstInt(g->i8, f32_to_fp8((float)op->value.f, fp8), 0)
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
        const Layout *l = &g->plan->layouts[r];
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
    case BIR_DOT: return nvptx_gen_dot(g, op, slot);
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES:
        if (nvptx_pipelined_load(g, op)) return true; /* its data is in a ring slot */
        return nvptx_gen_memory(g, op, slot);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return nvptx_gen_reduce(g, op, slot);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN: return nvptx_gen_scan(g, op, slot);
    case BIR_REDUCE: return nvptx_gen_tree_reduce(g, op, slot);
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: return nvptx_gen_rearrange(g, op, slot);
    case BIR_FOR: return nvptx_gen_for(g, op);
    case BIR_WHILE: return nvptx_gen_while(g, op);
    case BIR_IF: return nvptx_gen_if(g, op);
    case BIR_YIELD: case BIR_CONDITION: return true; /* read by the parent */
    case BIR_RETURN: nvptx_return(g); return true;
    case BIR_BARRIER: nvptx_barrier(g); return true;
    case BIR_PRINT: return nvptx_gen_print(g, op);
    default:
        if (bir_is_elementwise(op->code)) {
            if (op->code == BIR_SELECT && vtype(g, r).rank && nvptx_gen_tested_select(g, op, slot)) return true;
            const Layout *l = &g->plan->layouts[r];
            LLVMValueRef *x[3] = {NULL, NULL, NULL};
            if (vtype(g, r).rank)
                for (int i = 0; i < op->noperands; i++) x[i] = nvptx_operand(g, a[i], l, slot);
            nvptx_elementwise_regs(g, op, x, nvptx_new_regs(g, r));
            return true;
        }
        return nvptx_gen_fail(g, op, "the NVPTX backend cannot lower '%s'", bir_opcode_name(op->code));
    }
}

bool nvptx_gen_block(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (g->terminated) break; /* after a return: dead code */
        if (g->nlazy) nvptx_carried_load_uses(g, op);
        if (!nvptx_gen_op(g, op)) return false;
    }
    return true;
}

/* ------------------------------------------------------------- kernels */

bool nvptx_gen_fail(Gen *g, const BirOp *op, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nvptx_error(g->m, g->f, op, "%s", msg);
}

static void add_annotation(Gen *g, const char *key, int value) {
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->ctx, key, strlen(key)),
                             LLVMValueAsMetadata(ci32(g, value))};
    LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, md, 3)));
}

/* The module's dynamic shared memory: one extern array that every kernel
 * addresses from 0; a launch gives it the kernel's shared_bytes. */
static LLVMValueRef dynamic_shared(Gen *g) {
    NvptxModule *m = g->m;
    if (!m->shared) {
        LLVMTypeRef at = LLVMArrayType2(g->i8, 0);
        m->shared = LLVMAddGlobalInAddressSpace(g->mod, at, "blk_shared", 3);
        LLVMSetLinkage(m->shared, LLVMExternalLinkage);
        LLVMSetAlignment(m->shared, m->arch->wgmma ? NVPTX_SWIZZLE_PERIOD : 16);
    }
    return m->shared;
}

/* The tensor maps' parameters (nvptx.h's NvptxTensorMap): byval, so the
 * map stays in parameter space, and grid constants, so LLVM takes its
 * address there (cvta.param) instead of copying it to local memory, where
 * TMA could not read it. */
static void tensor_map_params(Gen *g) {
    if (!g->tma.count) return;
    LLVMTypeRef map_t = LLVMArrayType2(g->i8, 128);
    unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5), align = LLVMGetEnumAttributeKindForName("align", 5);
    LLVMMetadataRef idx[NVPTX_MAX_TENSOR_MAPS];
    for (int j = 0; j < g->tma.count; j++) {
        unsigned at = (unsigned)(g->f->nparams + j + 1); /* attribute index: the parameter's + 1 */
        LLVMAddAttributeAtIndex(g->fn, at, LLVMCreateTypeAttribute(g->ctx, byval, map_t));
        LLVMAddAttributeAtIndex(g->fn, at, LLVMCreateEnumAttribute(g->ctx, align, 64));
        idx[j] = LLVMValueAsMetadata(ci32(g, at));
        LLVMSetValueName2(LLVMGetParam(g->fn, at - 1), "tensor_map", 10);
    }
    LLVMSetValueName2(LLVMGetParam(g->fn, (unsigned)(g->f->nparams + g->tma.count)), "tensor_maps_valid", 17);
    LLVMMetadataRef md[3] = {LLVMValueAsMetadata(g->fn), LLVMMDStringInContext2(g->ctx, "grid_constant", 13),
                             LLVMMDNodeInContext2(g->ctx, idx, (size_t)g->tma.count)};
    LLVMAddNamedMetadataOperand(g->mod, "nvvm.annotations", LLVMMetadataAsValue(g->ctx, LLVMMDNodeInContext2(g->ctx, md, 3)));
}

static bool gen_body(Gen *g, const BirFunction *f) {
    LLVMTypeRef params[BLK_MAX_KERNEL_ARGS + NVPTX_MAX_TENSOR_MAPS + 4];
    if (f->nparams > BLK_MAX_KERNEL_ARGS) /* sema refuses these; a BIR built by hand might not */
        return nvptx_gen_fail(g, NULL, "kernel '%s' has %d parameters; the limit is %d", f->name, f->nparams,
                              BLK_MAX_KERNEL_ARGS);
    int n = f->nparams;
    for (int i = 0; i < n; i++) params[i] = f->params[i].type.dtype == DT_I1 ? g->i8 : ty(g, f->params[i].type.dtype);
    g->ring_at = -1;
    nvptx_tma_plan(g);
    nvptx_ws_plan(g);
    for (int j = 0; j < g->tma.count; j++) params[n++] = g->genptr;
    if (g->tma.count) params[n++] = g->i32;
    if (g->opt->persistent) /* the grid (nvptx.h's NvptxKernel.persistent) */
        for (int a = 0; a < 3; a++) params[n++] = g->i32;
    g->fn = LLVMAddFunction(g->mod, f->name, LLVMFunctionType(g->void_t, params, (unsigned)n, 0));
    tensor_map_params(g);
    add_annotation(g, "kernel", 1);
    add_annotation(g, "maxntidx", 32 * nvptx_ws_launch_warps(g));
    if (g->ws_loop) add_annotation(g, "minctasm", 1); /* setmaxnreg needs it (warpspec.c) */
    else if (g->opt->min_blocks_per_sm > 0) add_annotation(g, "minctasm", g->opt->min_blocks_per_sm);
    uint32_t line = f->body->ops.len ? ((BirOp *)f->body->ops.items[0])->span.line : 1;
    LLVMMetadataRef sub_ty = LLVMDIBuilderCreateSubroutineType(g->m->di, g->m->di_file, NULL, 0, LLVMDIFlagZero);
    g->di_sub = LLVMDIBuilderCreateFunction(g->m->di, g->m->di_file, f->name, strlen(f->name), f->name, strlen(f->name),
                                            g->m->di_file, line, sub_ty, 0, 1, line, LLVMDIFlagZero, 1);
    LLVMSetSubprogram(g->fn, g->di_sub);

    const BirOp *largest = NULL;
    g->ring_at = -1;
    g->in_ring = nvptx_pipeline_marks(g);
    g->resident_bytes = nvptx_dot_plan_resident(g);
    plan_smem(g, f->body, &largest);
    /* pipelined loops' rings above what the ops in those loops need (where
     * wgmma reads them, at the 1024 bytes its 128-byte swizzle repeats in) */
    int64_t region = g->smem_size;
    int64_t align = g->plan->wgmma ? NVPTX_SWIZZLE_PERIOD : 128;
    g->ring_at = nvptx_round_up(smem_in_pipelined_loops(g, f->body, false, false), align);
    /* a producer's mbarriers and records are live from the kernel's entry
     * to its end: the region must stay below them (its slots, as the other
     * rings, only while the loop runs) */
    NvptxWsRing ring;
    if (g->ws_loop && nvptx_pipeline_ws_ring(g, &ring) && ring.sync_at < region) g->ring_at = nvptx_round_up(region, align);
    int64_t max_bytes = g->m->arch->max_shared_bytes;
    const BirOp *lost = nvptx_pipeline_lost(g);
    if (lost)
        return nvptx_gen_fail(g, lost, "this loop's pipelined loads have no room for 2 stages in shared memory above the "
                              "%lld bytes other ops use there and below the %lld bytes of loop-invariant dot "
                              "operands kept there (at most %lld bytes a program on %s); use smaller blocks",
                              (long long)g->ring_at, (long long)g->resident_bytes, (long long)max_bytes,
                              g->m->arch->name);
    int64_t ring_bytes = nvptx_pipeline_ring_bytes(g);
    g->smem_size = ring_bytes && g->ring_at + ring_bytes > region ? g->ring_at + ring_bytes : region;
    if (g->smem_size > max_bytes) {
        if (largest && g->smem_size == region) return smem_error(g, largest);
        return nvptx_gen_fail(g, NULL, "the pipelined loops of '%s' need %lld bytes of shared memory (%lld for their "
                              "cp.async rings above %lld the ops in those loops use), more than the %lld bytes a "
                              "program may use on %s; use fewer stages (--num-stages) or smaller blocks",
                              f->name, (long long)g->smem_size, (long long)ring_bytes, (long long)g->ring_at,
                              (long long)max_bytes, g->m->arch->name);
    }
    if (g->resident_bytes) { /* loop-invariant wgmma operands, above it all */
        g->resident_at = nvptx_round_up(g->smem_size, NVPTX_SWIZZLE_PERIOD);
        g->smem_size = g->resident_at + g->resident_bytes;
        if (g->smem_size > max_bytes)
            return nvptx_gen_fail(g, NULL, "'%s' needs %lld bytes of shared memory: %lld for the loop-invariant dot "
                                  "operands its loops keep there (wgmma reads them from shared memory) above %lld for "
                                  "the rest, more than the %lld bytes a program may use on %s; use fewer stages "
                                  "(--num-stages) or smaller blocks",
                                  f->name, (long long)g->smem_size, (long long)g->resident_bytes,
                                  (long long)g->resident_at, (long long)max_bytes, g->m->arch->name);
    }
    g->carried_base = (g->smem_size + 15) / 16 * 16;
    nvptx_carried_plan(g, max_bytes - g->carried_base);
    if (g->carried_bytes) g->smem_size = g->carried_base + g->carried_bytes;
    int64_t size = unrolled_ops(g, f->body);
    if (size > MAX_UNROLLED_OPS) return code_size_error(g, size);
    if (g->smem_size) g->smem = dynamic_shared(g);

    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(g->ctx, g->fn, "entry");
    LLVMPositionBuilderAtEnd(g->b, entry);
    LLVMSetCurrentDebugLocation2(g->b, LLVMDIBuilderCreateDebugLocation(g->ctx, line, 1, g->di_sub, NULL));
    g->tid = nvptx_call0(g, "llvm.nvvm.read.ptx.sreg.tid.x", g->i32);
    g->lane = LLVMBuildAnd(g->b, g->tid, ci32(g, 31), "");
    g->warp = LLVMBuildLShr(g->b, g->tid, ci32(g, 5), "");
    for (int i = 0; i < f->nparams; i++) {
        LLVMValueRef p = LLVMGetParam(g->fn, (unsigned)i);
        LLVMSetValueName2(p, f->params[i].name, strlen(f->params[i].name));
        if (f->params[i].type.dtype == DT_I1) p = LLVMBuildICmp(g->b, LLVMIntNE, p, LLVMConstInt(g->i8, 0, 0), "");
        if (g->facts && g->facts[i] == NVPTX_PARAM_ONE && dtype_is_int(f->params[i].type.dtype))
            p = LLVMConstInt(ty(g, f->params[i].type.dtype), 1, 0); /* specialized: the argument is 1 */
        nvptx_new_regs(g, f->params[i].value)[0] = p;
    }
    nvptx_tma_prefetch_maps(g);
    if (g->ws_loop) {
        if (!nvptx_pipeline_ws_ring(g, &g->ws_ring))
            return nvptx_gen_fail(g, g->ws_loop, "internal compiler error: the loop chosen for a producer warpgroup "
                                  "does not pipeline once shared memory is laid out");
        nvptx_ws_producer(g, &g->ws_ring);
        nvptx_ws_begin(g, &g->ws_ring);
    }
    nvptx_body_begin(g);
    if (!nvptx_gen_block(g, f->body)) return false;
    nvptx_body_end(g);
    return true;
}

bool nvptx_gen_kernel(NvptxModule *m, const BirFunction *f, NvptxKernel *info) {
    /* on the heap: it changes between the setjmp and a longjmp back */
    Gen *g = calloc(1, sizeof *g);
    if (!g) return nvptx_error(m, f, NULL, "out of memory");
    *g = (Gen){.m = m, .ctx = m->ctx, .mod = m->mod, .f = f, .opt = m->opt};
    g->b = LLVMCreateBuilderInContext(g->ctx);
    jmp_buf oom;
    g->arena.on_oom = &oom;
    if (setjmp(oom)) {
        LLVMDisposeBuilder(g->b);
        arena_free(&g->arena);
        free(g);
        return nvptx_error(m, f, NULL, "out of memory");
    }
    g->i1 = LLVMInt1TypeInContext(g->ctx);
    g->i8 = LLVMInt8TypeInContext(g->ctx);
    g->i16 = LLVMInt16TypeInContext(g->ctx);
    g->i32 = LLVMInt32TypeInContext(g->ctx);
    g->i64 = LLVMInt64TypeInContext(g->ctx);
    g->f16 = LLVMHalfTypeInContext(g->ctx);
    g->bf16 = LLVMBFloatTypeInContext(g->ctx);
    g->f32 = LLVMFloatTypeInContext(g->ctx);
    g->f64 = LLVMDoubleTypeInContext(g->ctx);
    g->void_t = LLVMVoidTypeInContext(g->ctx);
    g->gptr = LLVMPointerTypeInContext(g->ctx, 1);
    g->genptr = LLVMPointerTypeInContext(g->ctx, 0);
    bool ok = nvptx_kernel_facts(m, f, &g->arena, &g->facts);
    if (ok) {
        g->plan = nvptx_plan_kernel(&g->arena, f, m->opt->num_warps, g->facts, m->arch->wgmma);
        if (m->opt->remarks) nvptx_remark_accesses(g, g->facts);
        g->regs = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *g->regs);
        g->staged = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *g->staged);
        g->hoisted = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *g->hoisted);
        ok = gen_body(g, f);
        *info = (NvptxKernel){f->name, nvptx_ws_launch_warps(g), g->smem_size, g->tma, NULL, m->opt->persistent,
                              g->wgmma_min_regs, {0}};
        for (int i = 0; g->facts && i < f->nparams && i < BLK_MAX_KERNEL_ARGS; i++) info->facts[i] = g->facts[i];
        info->notes = malloc(strlen(g->notes) + 1);
        if (info->notes) strcpy(info->notes, g->notes);
    }
    LLVMDisposeBuilder(g->b);
    arena_free(&g->arena);
    free(g);
    return ok;
}
