/* schedule_print.c: --emit=plan, a kernel's schedule as text for people
 * and tests: the block IR with each block value's layout, then the shared
 * memory map, the pipelined loops, the dots, the block loads and stores,
 * and the notes --stats prints. Every line of the schedule names the
 * source line it is about, so a test can look for one (tests/plan/). */
#define _POSIX_C_SOURCE 200809L
#include "gen.h"

/* A value's layout and, where the schedule puts it in shared memory, where. */
static void value_layout(void *ctx, int v, char *buf, size_t size) {
    const Gen *g = ctx;
    const NvptxSchedule *s = g->s;
    nvptx_layout_describe(&s->plan->layouts[v], buf, size);
    size_t at = strlen(buf);
    if (s->in_ring && s->in_ring[v] && at < size) snprintf(buf + at, size - at, " in its loop's ring");
    else if (s->resident_off && s->resident_off[v] >= 0 && at < size)
        snprintf(buf + at, size - at, " resident at %lld", (long long)(s->resident_at + s->resident_off[v]));
    else if (s->carried_at && s->carried_at[v] >= 0 && at < size)
        snprintf(buf + at, size - at, " kept in shared memory at %lld", (long long)(s->carried_base + s->carried_at[v]));
}

/* mma.sync's shape for a dot of these operands (fp8 runs as f16). */
static const char *mma_shape(DType t) {
    return dtype_is_int(t) ? "m16n8k32" : dtype_is_fp8(t) ? "m16n8k16 (fp8 as f16)" : "m16n8k16";
}

/* The instruction a dot runs on, as PTX names it (wgmma's N added by the callers). */
static const char *path_name(Gen *g, const NvptxDotSchedule *d) {
    switch (d->path) {
    case NVPTX_DOT_WGMMA: return "wgmma";
    case NVPTX_DOT_MMA: return arena_printf(&g->arena, "mma.sync %s", mma_shape(vtype(g, d->op->operands[0]).dtype));
    case NVPTX_DOT_TF32: return "mma.sync m16n8k8 tf32";
    case NVPTX_DOT_TF32X3: return "mma.sync m16n8k8 tf32x3";
    default: return "fma";
    }
}

/* How a tensor-core dot sums: into its accumulator, or (fp8) its k-block
 * from zero, added to the accumulator after. */
static const char *accumulation(Gen *g, const BirOp *op) {
    DType t = vtype(g, op->operands[0]).dtype;
    return dtype_is_int(t)              ? "i32 accumulation"
           : nvptx_dot_promoted(g, op) ? "f32 accumulation, each dot's k-block summed apart"
                                       : "f32 accumulation";
}

/* "f16", or "f8e4m3 x f8e5m2" where a and b differ. */
static const char *operand_types(Gen *g, const BirOp *op) {
    DType a = vtype(g, op->operands[0]).dtype, b = vtype(g, op->operands[1]).dtype;
    return a == b ? dtype_name(a) : arena_printf(&g->arena, "%s x %s", dtype_name(a), dtype_name(b));
}

static const char *source_name(NvptxOperandSource s) {
    switch (s) {
    case NVPTX_FROM_RING: return "its loop's ring";
    case NVPTX_FROM_RESIDENT: return "resident (staged once before its loop)";
    case NVPTX_FROM_HOISTED: return "fragments loaded once before its loop";
    case NVPTX_FROM_REGS: return "registers";
    case NVPTX_FROM_STAGE: return "staged by the dot";
    case NVPTX_FROM_CONVERT: return "shared memory into registers";
    default: return "shared memory";
    }
}

/* "[128, 64] f16" */
static void shape_of(Gen *g, int v, char *buf, size_t size) {
    char shape[40];
    shape_str(vtype(g, v), shape, sizeof shape);
    snprintf(buf, size, "%s %s", shape, dtype_name(vtype(g, v).dtype));
}

/* Each conversion to fp8, and how: the hardware's cvt where the arch table
 * has it (its saturation undone: `as` overflows to NaN or inf, language.md
 * §5), else integer operations on f32's bits. */
static void print_fp8_conversions(Gen *g, FILE *out, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) print_fp8_conversions(g, out, op->regions[r]);
        if (op->code != BIR_CONVERT || !dtype_is_fp8(vtype(g, op->results[0]).dtype)) continue;
        char from[64];
        shape_of(g, op->operands[0], from, sizeof from);
        fprintf(out, "convert line %u %s -> %s: %s\n", op->span.line, from, dtype_name(vtype(g, op->results[0]).dtype),
                g->m->arch->fp8_cvt ? "cvt.rn.satfinite (a value an instruction, the pair's other half 0), then NaN or inf where it saturated"
                                    : "integer operations on f32's bits (no fp8 cvt in this arch's row)");
    }
}

static const char *value_name(Gen *g, int v) { return g->f->values[v].name ? g->f->values[v].name : "a block"; }

static void print_smem(Gen *g, FILE *out) {
    const NvptxSchedule *s = g->s;
    fprintf(out, "shared memory: %lld bytes\n", (long long)s->smem_size);
    if (s->region_bytes) {
        fprintf(out, "  [0, %lld) the region ops share", (long long)s->region_bytes);
        if (s->region_op)
            fprintf(out, " (the most: %s at line %u)", bir_opcode_name(s->region_op->code), s->region_op->span.line);
        fputc('\n', out);
    }
    int64_t rings = 0;
    for (int i = 0; i < s->nloops; i++)
        if (s->loops[i].ring_bytes > rings) rings = s->loops[i].ring_bytes;
    if (rings) fprintf(out, "  [%lld, %lld) pipelined loops' rings\n", (long long)s->ring_at, (long long)(s->ring_at + rings));
    if (s->resident_bytes) {
        fprintf(out, "  [%lld, %lld) loop-invariant wgmma operands\n", (long long)s->resident_at,
                (long long)(s->resident_at + s->resident_bytes));
        for (int v = 0; v < g->f->nvalues; v++)
            if (s->resident_off[v] >= 0) {
                char shape[48];
                shape_of(g, v, shape, sizeof shape);
                fprintf(out, "    %s %s at %lld\n", value_name(g, v), shape, (long long)(s->resident_at + s->resident_off[v]));
            }
    }
    for (int i = 0; i < s->natomics; i++) {
        const NvptxBulkReduce *bk = s->atomics[i].bulk;
        if (bk)
            fprintf(out, "  [%lld, %lld) the two stagings of the %s at line %u (a bulk reduction)\n", (long long)bk->at,
                    (long long)(bk->at + 2 * bk->bytes), bir_opcode_name(s->atomics[i].op->code),
                    s->atomics[i].op->span.line);
    }
    if (s->carried_bytes) {
        fprintf(out, "  [%lld, %lld) loop blocks kept in shared memory\n", (long long)s->carried_base,
                (long long)(s->carried_base + s->carried_bytes));
        for (int k = 0; k < s->nkept; k++) {
            const NvptxKeptBlock *b = &s->kept[k];
            char shape[48];
            shape_of(g, b->value, shape, sizeof shape);
            fprintf(out, "    %s %s at %lld through the loop at line %u\n", value_name(g, b->value), shape,
                    (long long)(s->carried_base + b->at), b->loop->span.line);
        }
    }
}

static void print_load(Gen *g, FILE *out, const NvptxLoopSchedule *ls, int k, int64_t at) {
    const BirOp *ld = ls->loads[k];
    int v = ld->results[0];
    char shape[48];
    shape_of(g, v, shape, sizeof shape);
    fprintf(out, "  load line %u %s: ring slot +%lld, %lld bytes; ", ld->span.line, shape, (long long)at,
            (long long)ls->tile_bytes[k]);
    int map = g->s->tma_of[v] - 1;
    if (map >= 0) {
        const NvptxTensorMap *m = &g->s->tma.map[map];
        fprintf(out, "TMA, map %d (from %s, %d x %d boxes, ", map, g->f->params[m->base_param].name, m->box_rows,
                m->box_inner);
        if (m->swizzle_bytes) fprintf(out, "%d-byte swizzle", m->swizzle_bytes);
        else fprintf(out, "no swizzle");
        /* the mask's bounds the map's extents take (tma.c): its edges read as zeros by TMA */
        int edge = g->s->tma_edge_of[v] - 1;
        if (edge >= 0) m = &g->s->tma.map[edge];
        for (int axis = 0; axis < 2; axis++) {
            int param = axis ? m->cols_param : m->rows_param;
            int64_t scale = axis ? m->cols_scale : m->rows_scale;
            if (!scale) continue;
            char bound[96];
            nvptx_tma_bound_text(param >= 0 ? g->f->params[param].name : NULL, scale, bound, sizeof bound);
            fprintf(out, "; %s bounded by %s", axis ? "columns" : "rows", bound);
            if (edge >= 0) fprintf(out, " in map %d, for the tiles at that edge", edge);
        }
        fputc(')', out);
    } else fprintf(out, "cp.async%s%s", ls->load_not_tma[k] ? "; not TMA: " : "", ls->load_not_tma[k] ? ls->load_not_tma[k] : "");
    if (ls->views[k] >= 0) fprintf(out, "; its dot reads its transpose");
    fputc('\n', out);
}

static void print_loop(Gen *g, FILE *out, const NvptxLoopSchedule *ls) {
    fprintf(out, "loop line %u: pipelined, %d stages, copies %d iteration%s ahead by %s", ls->loop->span.line,
            ls->stages, ls->ahead, ls->ahead == 1 ? "" : "s",
            ls->ws ? "TMA from a producer warpgroup" : ls->tma ? "TMA from thread 0" : "cp.async");
    fprintf(out, ", %lld bytes a stage\n", (long long)ls->slot_bytes);
    int64_t at = 0;
    for (int k = 0; k < ls->nloads; k++) {
        print_load(g, out, ls, k, at);
        at += ls->tile_bytes[k];
    }
    int listed = ls->nread_ahead < NVPTX_MAX_READ_AHEAD ? ls->nread_ahead : NVPTX_MAX_READ_AHEAD;
    for (int k = listed - 1; k >= 0; k--)
        fprintf(out, "  load line %u: read ahead too, for the addresses of the iteration copied (the loop writes "
                     "no memory)\n", ls->read_ahead[k]->span.line);
    if (ls->nread_ahead > listed) fprintf(out, "  and %d loads more read ahead\n", ls->nread_ahead - listed);
    if (ls->async_dot) fprintf(out, "  dot line %u: its group left in flight across iterations (a stage more)\n",
                               ls->async_dot->span.line);
    if (ls->deferred_dot && ls->overlap_after)
        fprintf(out, "  dot line %u: deferred, issued in the next iteration right after dot line %u's group (its "
                     "a-words and accumulator carried; the last iteration's on the way out), so that dot's wait "
                     "leaves it running under the work up to line %u, where it is waited for; refilled %s\n",
                ls->deferred_dot->span.line, ls->overlap_after->span.line, ls->deferred_wait_at->span.line,
                ls->refill_late ? "after that wait" : "at the top (a stage more)");
    else if (ls->deferred_dot)
        fprintf(out, "  dot line %u: deferred, its group waited for by the next iteration's first dot; refilled %s\n",
                ls->deferred_dot->span.line,
                ls->refill_late ? "after that wait" : "at the top (a stage more)");
    if (ls->ws) {
        int regs = nvptx_ws_consumer_regs(g);
        fprintf(out, "  producer warpgroup: 4 warps, %d registers a thread", NVPTX_WS_PRODUCER_REGS);
        if (regs) fprintf(out, "; the consumers' raised to %d (setmaxnreg)", regs);
        fprintf(out, "; releases the fill of iteration i + %d at the end of iteration i\n", ls->lead);
        int groups = g->s->plan->num_warps / 4;
        if (ls->ping_pong)
            fprintf(out, "  ping-pong: its %d consumer warpgroups take turns to issue its dots (named barriers %d to %d), "
                         "so one's other work runs beside the other's dots\n", groups, NVPTX_WS_TURN_BARRIER,
                    NVPTX_WS_TURN_BARRIER + groups - 1);
    } else if (ls->tma) fprintf(out, "  no producer warpgroup: %s\n", ls->why_no_producer);
}

static void print_dot(Gen *g, FILE *out, const NvptxDotSchedule *d) {
    const BirOp *op = d->op;
    BlkType a = vtype(g, op->operands[0]), b = vtype(g, op->operands[1]);
    fprintf(out, "dot line %u [%d, %d] x [%d, %d] %s: %s", op->span.line, a.shape[0], a.shape[1], b.shape[0],
            b.shape[1], operand_types(g, op), path_name(g, d));
    if (d->path == NVPTX_DOT_WGMMA) {
        int32_t n = d->n_used < 256 ? d->n_used : 256;
        int groups = g->s->plan->num_warps / 4;
        fprintf(out, ".m64n%dk%d, %d warpgroup%s x %d tile%s of 64 rows", n, dot_k_step(a.dtype), groups,
                groups > 1 ? "s" : "",
                a.shape[0] / (64 * groups), a.shape[0] / (64 * groups) > 1 ? "s" : "");
        int isa = nvptx_wgmma_isa(g, op);
        if (isa > nvptx_ptx_isa(g->m->arch)) /* the module declares it (NvptxModule.ptx_isa) */
            fprintf(out, " (mixed integer types: the module's PTX declares ISA %d.%d)", isa / 10, isa % 10);
    } else {
        const Layout *lc = &g->s->plan->layouts[op->results[0]];
        fprintf(out, ", warps %d x %d", nvptx_layout_warps_along(lc, 0), nvptx_layout_warps_along(lc, 1));
    }
    if (d->k_used < a.shape[1])
        fprintf(out, "; k %d of %d (a's columns and b's rows from %d on are zeros)", d->k_used, a.shape[1], d->k_used);
    if (d->n_used < b.shape[1]) fprintf(out, "; columns %d of %d (no use observes the rest)", d->n_used, b.shape[1]);
    for (int w = 0; w < 2; w++) {
        NvptxOperandSource from = d->from[w];
        fprintf(out, "%s %s", w ? ", b from" : "; a from", source_name(from));
        bool staged = from == NVPTX_FROM_RING || from == NVPTX_FROM_RESIDENT || from == NVPTX_FROM_STAGE;
        if (d->path == NVPTX_DOT_WGMMA && staged) { /* read by descriptor: how the tile lies */
            Staged st = nvptx_staging(g, op->operands[w], NULL);
            bool k_major = st.cd == (w == 0 ? 1 : 0);
            fprintf(out, " (%d-byte swizzle, %s)", st.slab * st.es, k_major ? "K-major" : w == 0 ? "M-major" : "N-major");
        }
    }
    if (d->promote_every && d->promote_every == a.shape[1]) fprintf(out, "; its k-block summed from zero, added in f32");
    if (d->promote_every && d->promote_every < a.shape[1])
        fprintf(out, "; its k-block summed %d terms at a time from zero, each sum added in f32%s", d->promote_every,
                d->promote_in_turn                 ? " while the next one's wgmmas run (two sets of sums)"
                : d->path == NVPTX_DOT_WGMMA ? " after waiting for it"
                                             : "");
    if (d->in_flight) fprintf(out, "; its group left in flight");
    if (d->deferred) fprintf(out, "; deferred");
    if (d->deferred && d->loop->overlap_after) fprintf(out, ", issued late");
    if (d->then_deferred) fprintf(out, "; the deferred dot issued after it, its wait leaving that one running");
    if (d->takes_turns) fprintf(out, "; issued in its warpgroup's turn");
    if (d->path == NVPTX_DOT_WGMMA) fprintf(out, "; holds %d registers", d->held_regs);
    if (d->not_wgmma) fprintf(out, "; not wgmma: %s", d->not_wgmma);
    fputc('\n', out);
}

static void print_accesses(Gen *g, FILE *out, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if ((op->code == BIR_LOAD || op->code == BIR_STORE) && vtype(g, op->operands[0]).rank &&
            !(op->code == BIR_LOAD && g->s->in_ring[op->results[0]])) {
            char why[160], shape[48];
            int w = nvptx_access_limit(g->s->plan, g->f, op, why, sizeof why);
            BlkType pt = vtype(g, op->operands[0]);
            shape_str(pt, shape, sizeof shape);
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " %s", dtype_name(pt.elem));
            fprintf(out, "%s line %u %s: %d byte%s (%d element%s) an access: %s\n", bir_opcode_name(op->code),
                    op->span.line, shape, w * dtype_bytes(pt.elem), w * dtype_bytes(pt.elem) == 1 ? "" : "s", w,
                    w == 1 ? "" : "s", why);
            for (int k = 0; k < g->s->naccesses; k++)
                if (g->s->accesses[k] == op && g->s->access_advice[k]) fprintf(out, "  remark: %s\n", g->s->access_advice[k]);
        } else if (bir_is_atomic(op->code) && vtype(g, op->operands[0]).rank) {
            char shape[48];
            BlkType pt = vtype(g, op->operands[0]);
            shape_str(pt, shape, sizeof shape);
            bool two = pt.elem == DT_F32 && (op->code == BIR_ATOMIC_MAX || op->code == BIR_ATOMIC_MIN); /* by sign */
            const NvptxAtomicSchedule *as = nvptx_atomic_schedule(g->s, op);
            fprintf(out, "%s line %u %s %s: ", bir_opcode_name(op->code), op->span.line, shape, dtype_name(pt.elem));
            if (as->bulk)
                fprintf(out, "one bulk reduction of %lld bytes (cp.reduce.async.bulk, the block contiguous along "
                        "dimension %d), staged in turns; where a mask is false, ", (long long)as->bulk->bytes, as->bulk->cd);
            fprintf(out, "%s %s%s an element, %s%s%s\n", two ? "two" : "one", as->red ? "red" : "atom",
                    two ? "s (one for each sign)" : "",
                    as->offsets ? "at constant offsets from one address a thread" : "each at an address of its own",
                    as->not_bulk ? "; not a bulk reduction: " : "", as->not_bulk ? as->not_bulk : "");
        }
        for (int r = 0; r < op->nregions; r++) print_accesses(g, out, op->regions[r]);
    }
}

/* ---------------------------------------------------------------- notes
 * --stats' lines (NvptxKernel.notes), in the order the code is emitted:
 * the blocks kept in shared memory (carried.c, while planning), then per
 * pipelined loop how its loads are copied and who issues the copies, and
 * per dot how it runs. */

static void note(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(FILE *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
}

static void load_note(Gen *g, FILE *out, const NvptxLoopSchedule *ls, int k) {
    const BirOp *ld = ls->loads[k];
    BlkType t = vtype(g, ld->results[0]);
    char how[200];
    int map = g->s->tma_of[ld->results[0]] - 1;
    if (map >= 0) {
        const NvptxTensorMap *m = &g->s->tma.map[map];
        char stride[96];
        if (m->stride_param < 0) snprintf(stride, sizeof stride, "%lld", (long long)m->stride_scale);
        else if (m->stride_scale == 1) snprintf(stride, sizeof stride, "%s", g->f->params[m->stride_param].name);
        else snprintf(stride, sizeof stride, "%lld x %s", (long long)m->stride_scale, g->f->params[m->stride_param].name);
        char swizzle[32] = "no swizzle";
        if (m->swizzle_bytes) snprintf(swizzle, sizeof swizzle, "%d-byte swizzle", m->swizzle_bytes);
        snprintf(how, sizeof how, "TMA (map %d: from %s, rows %s elements apart, %d x %d boxes, %s)", map,
                 g->f->params[m->base_param].name, stride, m->box_rows, m->box_inner, swizzle);
    } else {
        const char *why = ls->load_not_tma[k];
        snprintf(how, sizeof how, "cp.async%s%s", why ? "; not TMA: " : "", why ? why : "");
    }
    note(out, "  line %u: load [%d, %d] %s: a %d-stage ring, copied by %s\n", ld->span.line, t.shape[0], t.shape[1],
         dtype_name(t.dtype), ls->stages, how);
}

static void loop_notes(Gen *g, FILE *out, const NvptxLoopSchedule *ls) {
    for (int k = 0; k < ls->nloads; k++) load_note(g, out, ls, k);
    if (ls->ws)
        note(out, "  line %u: loop: a producer warpgroup issues its TMA copies (warp specialization: %d warps launched)\n",
             ls->loop->span.line, g->s->launch_warps);
    else if (ls->tma)
        note(out, "  line %u: loop: thread 0 issues its TMA copies; no producer warp: %s\n", ls->loop->span.line,
             ls->why_no_producer);
}

static const char *mma_source(NvptxOperandSource from) {
    switch (from) {
    case NVPTX_FROM_HOISTED: return "loaded once before its loop (ldmatrix)";
    case NVPTX_FROM_RING: return "from its loop's ring (ldmatrix)";
    case NVPTX_FROM_REGS: return "from registers";
    case NVPTX_FROM_STAGE: return "staged in shared memory (ldmatrix)";
    default: return "through shared memory";
    }
}

static const char *wgmma_source(NvptxOperandSource s) {
    switch (s) {
    case NVPTX_FROM_RING: return "from its loop's ring (descriptor";
    case NVPTX_FROM_RESIDENT: return "staged once before its loop (descriptor";
    case NVPTX_FROM_STAGE: return "staged in shared memory (descriptor";
    case NVPTX_FROM_REGS: return "from registers";
    default: return "through shared memory into registers";
    }
}

static void wgmma_note(Gen *g, FILE *out, const NvptxDotSchedule *d) {
    const BirOp *op = d->op;
    BlkType a = vtype(g, op->operands[0]), b = vtype(g, op->operands[1]);
    char how[2][96];
    for (int w = 0; w < 2; w++) {
        NvptxOperandSource src = d->from[w];
        if (src == NVPTX_FROM_RING || src == NVPTX_FROM_RESIDENT || src == NVPTX_FROM_STAGE) {
            Staged st = nvptx_staging(g, op->operands[w], NULL);
            snprintf(how[w], sizeof how[w], "%s, %d-byte swizzle, %s)", wgmma_source(src), st.slab * st.es,
                     st.cd == (w == 0 ? 1 : 0) ? "K-major" : w == 0 ? "M-major" : "N-major");
        } else snprintf(how[w], sizeof how[w], "%s", wgmma_source(src));
    }
    int groups = g->s->plan->num_warps / 4, tiles = a.shape[0] / (64 * groups), n = d->n_used < 256 ? d->n_used : 256;
    note(out, "  line %u: dot [%d, %d] x [%d, %d] %s: wgmma.m64n%dk%d, %s%s, %d warpgroup%s x %d tile%s "
         "of 64 rows; a %s, b %s\n", op->span.line, a.shape[0], a.shape[1], b.shape[0], b.shape[1], operand_types(g, op),
         n, dot_k_step(a.dtype), accumulation(g, op), d->in_flight ? ", one group left in flight across iterations"
            : d->deferred && d->loop->overlap_after ? ", issued in the next iteration after its first dot"
            : d->deferred ? ", its group waited for by the next iteration's first dot"
            : d->then_deferred ? ", the deferred dot issued after it and left running" : "",
         groups, groups > 1 ? "s" : "", tiles, tiles > 1 ? "s" : "", how[0], how[1]);
}

static void dot_note(Gen *g, FILE *out, const NvptxDotSchedule *d) {
    if (d->path == NVPTX_DOT_WGMMA) {
        wgmma_note(g, out, d);
        return;
    }
    const BirOp *op = d->op;
    BlkType a = vtype(g, op->operands[0]), b = vtype(g, op->operands[1]);
    const Layout *lc = &g->s->plan->layouts[op->results[0]];
    char path[192];
    const char *how_a = "through shared memory", *how_b = how_a;
    switch (d->path) {
    case NVPTX_DOT_MMA:
        if (g->s->plan->wgmma)
            snprintf(path, sizeof path, "mma.sync.%s, %s (not wgmma: %s)", mma_shape(a.dtype), accumulation(g, op),
                     d->not_wgmma);
        else snprintf(path, sizeof path, "mma.sync.%s, %s", mma_shape(a.dtype), accumulation(g, op));
        how_a = mma_source(d->from[0]), how_b = mma_source(d->from[1]);
        break;
    case NVPTX_DOT_TF32: snprintf(path, sizeof path, "mma.sync.m16n8k8 tf32, f32 accumulation"); break;
    case NVPTX_DOT_TF32X3: snprintf(path, sizeof path, "mma.sync.m16n8k8 tf32, three products per k-step (tf32x3)"); break;
    default: snprintf(path, sizeof path, "FMA, one f32 fma per term in k order"); break;
    }
    note(out, "  line %u: dot [%d, %d] x [%d, %d] %s: %s, warps %d x %d; a %s, b %s\n", op->span.line, a.shape[0],
         a.shape[1], b.shape[0], b.shape[1], operand_types(g, op), path, nvptx_layout_warps_along(lc, 0),
         nvptx_layout_warps_along(lc, 1), how_a, how_b);
}

static void notes_in(Gen *g, FILE *out, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        const NvptxLoopSchedule *ls = op->code == BIR_FOR ? nvptx_loop_schedule(g->s, op) : NULL;
        if (ls) loop_notes(g, out, ls);
        const NvptxDotSchedule *d = op->code == BIR_DOT ? nvptx_dot_schedule(g->s, op) : NULL;
        if (d) dot_note(g, out, d);
        for (int r = 0; r < op->nregions; r++) notes_in(g, out, op->regions[r]);
        if (nvptx_op_ends_block(op)) break; /* what follows is not emitted */
    }
}

const char *nvptx_schedule_notes(Gen *g) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    for (int k = 0; k < g->s->nkept; k++) {
        const NvptxKeptBlock *b = &g->s->kept[k];
        const char *name = g->f->values[b->value].name ? g->f->values[b->value].name : "a block";
        note(out, "  line %u: %s %s kept in shared memory through the loop (%lld bytes): the loop needs about %lld "
             "registers a thread with it in registers, %lld without, of %lld\n", b->loop->span.line,
             b->carried ? "loop-carried" : "loop-invariant", name, (long long)b->bytes, (long long)b->demand,
             (long long)b->without, (long long)b->cap);
    }
    notes_in(g, out, g->f->body);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    char *kept = arena_strndup(&g->arena, text, len);
    free(text);
    return kept;
}

char *nvptx_schedule_text(Gen *g) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) return NULL;
    const NvptxSchedule *s = g->s;
    const BirFunction *f = g->f;
    fprintf(out, "kernel %s on %s: %d warp%s", f->name, g->m->arch->name, s->plan->num_warps,
            s->plan->num_warps == 1 ? "" : "s");
    if (s->launch_warps != s->plan->num_warps) fprintf(out, " and a producer warpgroup (%d launched)", s->launch_warps);
    fprintf(out, "%s\n", g->m->opt->persistent ? ", persistent" : "");
    fprintf(out, "facts:");
    int nfacts = 0;
    for (int i = 0; s->facts && i < f->nparams; i++)
        if (s->facts[i]) {
            char spelled[160];
            NvptxAssume a = {f->params[i].name, s->facts[i]};
            nvptx_fact_spelling(&a, spelled, sizeof spelled);
            fprintf(out, " %s", spelled);
            nfacts++;
        }
    fprintf(out, "%s\n", nfacts ? "" : " none");
    if (s->split_3d)
        fprintf(out, "blocks of three dimensions: each [A, M, N] value built as A values [M, N] (below: its "
                     "name with _0, _1, ...)\n");
    fprintf(out, "registers: ");
    if (s->wgmma_min_regs) fprintf(out, "at least %d a thread (wgmma's)", s->wgmma_min_regs);
    else fprintf(out, "no floor");
    if (s->ws_loop) fprintf(out, "; occupancy target 1 program an SM (setmaxnreg)\n");
    else if (g->m->opt->min_blocks_per_sm > 0) fprintf(out, "; occupancy target %d programs an SM\n", g->m->opt->min_blocks_per_sm);
    else fprintf(out, "; no occupancy target\n");
    print_smem(g, out);
    if (s->tma.count) fprintf(out, "tensor maps: %d, after the parameters\n", s->tma.count);
    fprintf(out, "\n");
    bir_print_noted(out, f, value_layout, g);
    fprintf(out, "\n");
    for (int i = 0; i < s->nloops; i++) print_loop(g, out, &s->loops[i]);
    for (int i = 0; i < s->nrefusals; i++)
        fprintf(out, "loop line %u: not pipelined: %s\n", s->refusals[i].loop->span.line, s->refusals[i].why);
    for (int i = 0; i < s->ndots; i++) print_dot(g, out, &s->dots[i]);
    print_fp8_conversions(g, out, f->body);
    print_accesses(g, out, f->body);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}
