/* async.c: the instructions of asynchronous copies, as inline PTX (LLVM 19
 * has neither cp.async.bulk.tensor nor mbarrier.try_wait or expect_tx):
 * mbarriers at shared-memory offsets, TMA copies of a tensor map's box, the
 * maps' prefetch, and thread 0's test that a copy stays within its map.
 * pipeline.c and warpspec.c issue them where tma.c's plan says. */
#include "gen.h"

void nvptx_cp_async_16(Gen *g, LLVMValueRef dst_off, LLVMValueRef src, LLVMValueRef ok) {
    /* the predicate form (ignore-src, PTX 7.5): zeros where !ok, src not
     * read; the src-size form cost a select a mask term and a compare a copy
     * in the MoE kernel's loop (docs/notebook.md, 2026-11-27); sm_80's and
     * sm_86's PTX (7.0, 7.1) has only that one */
    if (nvptx_ptx_isa(g->m->arch) < 75) {
        LLVMValueRef size = LLVMBuildSelect(g->b, ok, ci32(g, 16), ci32(g, 0), "");
        LLVMValueRef args[3] = {nvptx_smem_at(g, dst_off), src, size};
        nvptx_call(g, "llvm.nvvm.cp.async.cg.shared.global.16.s", g->m->t.void_t, args, 3);
        return;
    }
    LLVMValueRef args[3] = {nvptx_smem_addr(g, dst_off), src, LLVMBuildNot(g->b, ok, "")};
    nvptx_asm_call(g, g->m->t.void_t, "cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,b,~{memory}", args, 3, true);
}

void nvptx_mbarrier_init(Gen *g, LLVMValueRef at, int count) {
    LLVMValueRef args[2] = {nvptx_smem_addr(g, at), ci32(g, count)};
    nvptx_asm_call(g, g->m->t.void_t, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", args, 2, true);
}

void nvptx_mbarrier_inval(Gen *g, LLVMValueRef at) {
    LLVMValueRef a = nvptx_smem_addr(g, at);
    nvptx_asm_call(g, g->m->t.void_t, "mbarrier.inval.shared::cta.b64 [$0];", "r", &a, 1, true);
}

void nvptx_mbarrier_arrive(Gen *g, LLVMValueRef at) {
    LLVMValueRef a = nvptx_smem_addr(g, at);
    nvptx_asm_call(g, g->m->t.void_t, "{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [$0]; }", "r,~{memory}", &a, 1,
                   true);
}

void nvptx_mbarrier_expect(Gen *g, LLVMValueRef at, int64_t bytes) {
    LLVMValueRef args[2] = {nvptx_smem_addr(g, at), ci32(g, bytes)};
    nvptx_asm_call(g, g->m->t.void_t, "{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1; }",
                   "r,r,~{memory}", args, 2, true);
}

/* Has the phase of the given parity (0 or 1, an i32) completed? try_wait
 * suspends the thread a while before it says no. */
static LLVMValueRef try_wait(Gen *g, LLVMValueRef at, LLVMValueRef parity) {
    LLVMValueRef args[2] = {nvptx_smem_addr(g, at), parity};
    LLVMValueRef ok = nvptx_asm_call(g, g->m->t.i32,
                                     "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2; "
                                     "selp.u32 $0, 1, 0, p; }",
                                     "=r,r,r,~{memory}", args, 2, true);
    return LLVMBuildICmp(g->b, LLVMIntNE, ok, ci32(g, 0), "");
}

/* Waits until that phase has completed: a try_wait loop in LLVM's control
 * flow (no labels inside the asm, which LLVM may duplicate). */
void nvptx_mbarrier_wait(Gen *g, LLVMValueRef at, LLVMValueRef parity) {
    LLVMBasicBlockRef spin = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "mbar.wait");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "mbar.done");
    LLVMBuildBr(g->b, spin);
    LLVMPositionBuilderAtEnd(g->b, spin);
    LLVMBuildCondBr(g->b, try_wait(g, at, parity), done, spin);
    LLVMPositionBuilderAtEnd(g->b, done);
}

/* Tensor map `map`: its parameter's address, as PTX takes it. */
LLVMValueRef nvptx_tma_map_address(Gen *g, int map) {
    return LLVMBuildPtrToInt(g->b, LLVMGetParam(g->fn, (unsigned)(g->f->nparams + map)), g->m->t.i64, "");
}

/* Could the launch make map `map`? Its bit in the parameter after the maps. */
static LLVMValueRef map_made(Gen *g, int map) {
    LLVMValueRef valid = LLVMGetParam(g->fn, (unsigned)(g->f->nparams + g->s->tma.count));
    LLVMValueRef bit = LLVMBuildAnd(g->b, valid, ci32(g, 1 << map), "");
    return LLVMBuildICmp(g->b, LLVMIntNE, bit, ci32(g, 0), "");
}

static LLVMValueRef sext64(Gen *g, LLVMValueRef v) {
    return LLVMGetIntTypeWidth(LLVMTypeOf(v)) < 64 ? LLVMBuildSExt(g->b, v, g->m->t.i64, "") : v;
}

/* A bound's or a row stride's value (i64), as the launch computes it: scale times parameter
 * param's argument (times 1 without one). */
static LLVMValueRef bound_value(Gen *g, int param, int64_t scale) {
    LLVMValueRef v = ci64(g, scale);
    if (param >= 0) v = LLVMBuildMul(g->b, v, sext64(g, g->regs[g->f->params[param].value][0]), "");
    return v;
}

void nvptx_tma_prefetch_maps(Gen *g) {
    /* a division an iteration (the row of a copy whose columns alone are bounded) cost matmul 9% on the
     * H100: one here, then a multiply-high and a correction each time */
    for (int map = 0; map < g->s->tma.count; map++) {
        const NvptxTensorMap *m = &g->s->tma.map[map];
        g->tma_rows[map].divisor = g->tma_rows[map].inverse = NULL;
        if (!m->cols_scale || m->rows_scale) continue;
        LLVMValueRef stride = bound_value(g, m->stride_param, m->stride_scale), u32 = ci64(g, (int64_t)1 << 32);
        LLVMValueRef fits = LLVMBuildICmp(g->b, LLVMIntULT, LLVMBuildSub(g->b, stride, ci64(g, 1), ""),
                                          LLVMBuildSub(g->b, u32, ci64(g, 1), ""), ""); /* 1 <= stride < 2^32 */
        LLVMValueRef d = LLVMBuildTrunc(g->b, LLVMBuildSelect(g->b, fits, stride, ci64(g, 1), ""), g->m->t.i32, "");
        g->tma_rows[map].divisor = d;
        g->tma_rows[map].inverse = LLVMBuildUDiv(g->b, ci32(g, -1), d, "");
    }
    LLVMValueRef first = LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 0), "");
    for (int map = 0; map < g->s->tma.count; map++) { /* the maps the launch could make */
        LLVMValueRef go = LLVMBuildAnd(g->b, first, map_made(g, map), "");
        LLVMValueRef args[2] = {nvptx_tma_map_address(g, map), LLVMBuildZExt(g->b, go, g->m->t.i32, "")};
        nvptx_asm_call(g, g->m->t.void_t, "{ .reg .pred p; setp.ne.u32 p, $1, 0; @p prefetch.tensormap [$0]; }", "l,r", args,
                       2, true);
    }
}

void nvptx_tma_load(Gen *g, LLVMValueRef map, LLVMValueRef dst, LLVMValueRef col, LLVMValueRef row, LLVMValueRef bar) {
    LLVMValueRef args[5] = {nvptx_smem_addr(g, dst), map, col, row, nvptx_smem_addr(g, bar)};
    nvptx_asm_call(g, g->m->t.void_t,
                   "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
                   "r,l,r,r,r,~{memory}", args, 5, true);
}

/* Thread 0's part of the iteration test for one load (gen.h). Without a
 * bound the whole offset from the map's base is the column (row 0); with
 * one, the bounded axes' coordinates are their blocks' element (0, 0) and
 * the other is what the offset leaves (a division for the row when only
 * the columns are bounded). */
LLVMValueRef nvptx_tma_coords_ok(Gen *g, const BirOp *ld, const NvptxTmaMask *mk, LLVMValueRef p00, LLVMValueRef *col,
                                 LLVMValueRef *row, LLVMValueRef *edge) {
    int j = g->s->tma_of[ld->results[0]] - 1, e = g->s->tma_edge_of[ld->results[0]] - 1;
    int jb = e >= 0 ? e : j; /* the map with the bounds */
    const NvptxTensorMap *map = &g->s->tma.map[jb];
    LLVMValueRef base = g->regs[g->f->params[map->base_param].value][0];
    LLVMValueRef off = LLVMBuildSub(g->b, addr_i64(g, p00), addr_i64(g, base), "");
    /* in elements: the map's are 16-bit or 8-bit (tma.c). Shifting 8-bit elements' bytes
     * too had every 8-bit copy fail this test and go by cp.async instead */
    if (map->elem_bytes == 2) off = LLVMBuildAShr(g->b, off, ci64(g, 1), "");
    BlkType t = vtype(g, ld->results[0]);
    int64_t ncols = t.shape[nvptx_contiguous_dim(g, ld->results[0])];
    LLVMValueRef last = ci64(g, NVPTX_TMA_COLUMNS - ncols);
    /* without bounds: the whole offset is the column */
    LLVMValueRef r = ci64(g, 0), c = off;
    LLVMValueRef ok = LLVMBuildICmp(g->b, LLVMIntULE, off, last, ""); /* unsigned: also off >= 0 */
    *edge = LLVMConstInt(g->m->t.i1, 0, 0);
    if (mk->coord[0] >= 0 || mk->coord[1] >= 0) {
        LLVMValueRef plain_r = r, plain_c = c, plain_ok = LLVMBuildAnd(g->b, ok, map_made(g, j), "");
        LLVMValueRef xs[2], unwrapped = LLVMConstInt(g->m->t.i1, 1, 0);
        for (int axis = 0; axis < 2; axis++) {
            int x = mk->coord[axis];
            xs[axis] = x < 0 ? NULL : sext64(g, g->regs[x][0]); /* thread 0's: element (0, 0) */
            if (x < 0 || mk->shift[axis] < 0) continue;
            /* X < B - U: the coordinate is X(0, 0) + U, where the kernel's B - U did not wrap */
            LLVMValueRef u = sext64(g, g->regs[mk->shift[axis]][0]);
            xs[axis] = LLVMBuildAdd(g->b, xs[axis], u, "");
            LLVMValueRef b = bound_value(g, axis ? map->cols_param : map->rows_param, axis ? map->cols_scale : map->rows_scale);
            LLVMValueRef kernels = sext64(g, g->regs[mk->shifted_bound[axis]][0]);
            unwrapped = LLVMBuildAnd(g->b, unwrapped,
                                     LLVMBuildICmp(g->b, LLVMIntEQ, kernels, LLVMBuildSub(g->b, b, u, ""), ""), "");
        }
        /* a load with an edge map: a tile within the columns' bound takes the map without it
         * (X(0) + ncols - 1 < bound), and only a tile at the edge works out the coordinates below
         * (every iteration they cost matmul 8% on the H100: warp 0's wgmma waits for thread 0) */
        LLVMValueRef inside = NULL;
        LLVMBasicBlockRef from = NULL, merge = NULL;
        if (e >= 0) {
            LLVMValueRef bound = bound_value(g, map->cols_param, map->cols_scale);
            inside = LLVMBuildICmp(g->b, LLVMIntSLT, LLVMBuildAdd(g->b, xs[1], ci64(g, ncols - 1), ""), bound, "");
            from = LLVMGetInsertBlock(g->b);
            merge = nvptx_begin_if(g, LLVMBuildNot(g->b, inside, ""));
        }
        LLVMValueRef stride = bound_value(g, map->stride_param, map->stride_scale);
        if (xs[0] && xs[1]) {
            r = xs[0], c = xs[1];
            LLVMValueRef at = LLVMBuildAdd(g->b, LLVMBuildMul(g->b, r, stride, ""), c, "");
            ok = LLVMBuildICmp(g->b, LLVMIntEQ, at, off, "");
        } else if (xs[0]) {
            r = xs[0];
            c = LLVMBuildSub(g->b, off, LLVMBuildMul(g->b, r, stride, ""), "");
            ok = LLVMBuildICmp(g->b, LLVMIntULE, c, last, "");
        } else {
            c = xs[1];
            /* the row: diff / stride by the entry's inverse (q = diff x inverse / 2^32 is the quotient
             * or one less), 32-bit; beyond that r is wrong, but any r with r x stride = diff is the
             * quotient, so the exact check below holds only where it is right */
            LLVMValueRef diff = LLVMBuildSub(g->b, off, c, "");
            LLVMValueRef num = LLVMBuildAnd(g->b, diff, ci64(g, 0xffffffff), "");
            LLVMValueRef d = LLVMBuildZExt(g->b, g->tma_rows[jb].divisor, g->m->t.i64, "");
            LLVMValueRef inv = LLVMBuildZExt(g->b, g->tma_rows[jb].inverse, g->m->t.i64, "");
            LLVMValueRef q = LLVMBuildLShr(g->b, LLVMBuildMul(g->b, num, inv, ""), ci64(g, 32), "");
            LLVMValueRef q1 = LLVMBuildAdd(g->b, q, ci64(g, 1), "");
            LLVMValueRef up = LLVMBuildICmp(g->b, LLVMIntULE, LLVMBuildMul(g->b, q1, d, ""), num, "");
            r = LLVMBuildSelect(g->b, up, q1, q, "");
            LLVMValueRef exact = LLVMBuildICmp(g->b, LLVMIntEQ, LLVMBuildMul(g->b, r, stride, ""), diff, "");
            /* the map's rows are the 2^31 elements' (nvptx_tma_extents) */
            LLVMValueRef end = LLVMBuildMul(g->b, LLVMBuildAdd(g->b, r, ci64(g, map->box_rows), ""), stride, "");
            LLVMValueRef within = LLVMBuildICmp(g->b, LLVMIntSLE, end, ci64(g, NVPTX_TMA_COLUMNS), "");
            ok = LLVMBuildAnd(g->b, exact, within, "");
        }
        /* both coordinates in [0, 2^31): TMA's are signed 32-bit, and it reads zeros below 0 */
        LLVMValueRef lim = ci64(g, NVPTX_TMA_COLUMNS);
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntULT, r, lim, ""), "");
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildICmp(g->b, LLVMIntULT, c, lim, ""), "");
        ok = LLVMBuildAnd(g->b, ok, LLVMBuildAnd(g->b, unwrapped, map_made(g, jb), ""), "");
        if (e >= 0) {
            LLVMBasicBlockRef at_edge = LLVMGetInsertBlock(g->b);
            nvptx_end_if(g, merge);
            LLVMValueRef in[3][2] = {{plain_r, r}, {plain_c, c}, {plain_ok, ok}};
            LLVMValueRef *out[3] = {&r, &c, &ok};
            LLVMBasicBlockRef blocks[2] = {from, at_edge};
            for (int k = 0; k < 3; k++) {
                *out[k] = LLVMBuildPhi(g->b, LLVMTypeOf(in[k][0]), "");
                LLVMAddIncoming(*out[k], in[k], blocks, 2);
            }
            *edge = LLVMBuildNot(g->b, inside, "");
        }
    } else {
        ok = LLVMBuildAnd(g->b, ok, map_made(g, j), "");
    }
    *col = LLVMBuildTrunc(g->b, c, g->m->t.i32, "");
    *row = LLVMBuildTrunc(g->b, r, g->m->t.i32, "");
    return ok;
}
