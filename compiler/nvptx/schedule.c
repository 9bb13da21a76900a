/* schedule.c: every decision about one kernel, made before its LLVM
 * function exists (gen.h's NvptxSchedule), in this order:
 *   the launch facts and each value's layout (facts.c, layout.c);
 *   which pipelined loads TMA copies (tma.c), and the loop a producer
 *     warpgroup serves (warpspec.c);
 *   the shared-memory map, from the bottom: the region every op shares
 *     (each op that uses it starts with a barrier), the pipelined loops'
 *     rings above what the ops in those loops need, the loop-invariant
 *     wgmma operands kept through their loops, the staging of atomics
 *     added by bulk reductions (bulk.c), the loop blocks kept in shared
 *     memory (carried.c);
 *   the producer's ring;
 *   the bounds: shared memory and code size within the arch's limits.
 * Emission (kernel.c and the files it calls) reads the schedule. */
#include "gen.h"

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
        int64_t k = nvptx_operand_smem_bytes(g, vals[i], &g->s->plan->layouts[op->results[i]]);
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
        return operands_need(g, op, nvptx_memory_layout(g->s->plan, op), 0);
    case BIR_DOT: return nvptx_dot_smem_bytes(g, op);
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS: return nvptx_reshape_smem_bytes(g, op);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return nvptx_reduce_smem_bytes(g, op);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN:
        return max64(nvptx_scan_smem_bytes(g, op), operands_need(g, op, &g->s->plan->layouts[op->results[0]], 0));
    case BIR_REDUCE:
        return max64(nvptx_tree_reduce_smem_bytes(g, op), operands_need(g, op, &g->s->plan->layouts[a[0]], 1));
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: return nvptx_rearrange_smem_bytes(g, op);
    case BIR_GATHER: return nvptx_gather_smem_bytes(g, op);
    case BIR_HISTOGRAM: return nvptx_histogram_smem_bytes(g, op);
    case BIR_FOR: {
        const BirOp *y = bir_block_terminator(op->regions[0]);
        return max64(carried_need(g, op, a + 3, op->noperands - 3), y ? carried_need(g, op, y->operands, y->noperands) : 0);
    }
    case BIR_WHILE: {
        const BirOp *y = bir_block_terminator(op->regions[1]);
        return max64(carried_need(g, op, a, op->noperands), y ? carried_need(g, op, y->operands, y->noperands) : 0);
    }
    case BIR_INLINE_ASM: /* the arguments in the result's layout */
        return vtype(g, op->results[0]).rank ? operands_need(g, op, &g->s->plan->layouts[op->results[0]], 0) : 0;
    case BIR_ASSERT: /* the mask in the condition's layout, where the check is compiled */
        if (!g->m->opt->debug || a[1] == BIR_NONE || !vtype(g, a[0]).rank) return 0;
        return operands_need(g, op, &g->s->plan->layouts[a[0]], 1);
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
            return operands_need(g, op, &g->s->plan->layouts[op->results[0]], 0);
        return 0;
    }
}

/* The most shared memory any op needs, and that op; a wgmma dot right in a
 * for loop's body without the operands staged once before the loop (into
 * the resident region; mma.sync's are staged here, at 0, so their dots
 * count them). */
static void plan_smem(Gen *g, const BirBlock *b, bool for_body, const BirOp **largest) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        bool wgmma = op->code == BIR_DOT && !nvptx_wgmma_refusal(g, op);
        int64_t need = wgmma && for_body ? nvptx_dot_smem_bytes_in_loop(g, op, b) : smem_need(g, op);
        if (need > g->s->smem_size) g->s->smem_size = need, *largest = op;
        for (int r = 0; r < op->nregions; r++) plan_smem(g, op->regions[r], op->code == BIR_FOR, largest);
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
    case BIR_HISTOGRAM:
        shaped = op->results[0];
        why = "to hold its bins";
        fix = "use fewer bins";
        break;
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_SCAN: case BIR_REDUCE:
        why = op->code == BIR_REDUCE ? "to hold the block while it reduces" : "to hold the block while it scans";
        fix = "use a smaller block";
        break;
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: case BIR_GATHER:
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
                          (long long)g->s->smem_size, why, (long long)arch->max_shared_bytes, arch->name, fix);
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
                          shape, (long long)n, (long long)total, MAX_UNROLLED_OPS, g->s->plan->num_warps);
}

/* What keeps a kernel from being built on this arch in this layout, found
 * before any code is (so --emit=plan and the hints' decision passes see it
 * too): a bf16 atomic_add before sm_90, a reduction leaving a thread more
 * than 256 partial results. */
enum { MAX_REDUCE_PARTIALS = 256 };

static bool buildable(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        switch (op->code) {
        case BIR_ATOMIC_ADD:
            if (vtype(g, op->operands[0]).elem == DT_BF16 && g->m->arch->sm < 90)
                return nvptx_gen_fail(g, op, "atomic_add on bf16 needs sm_90 or newer (%s has no bf16 atomics); "
                                             "accumulate in f32 or f16 instead", g->m->arch->name);
            break;
        case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN: {
            int x = op->operands[0];
            int n = nvptx_layout_partials(&g->s->plan->layouts[x], (int)op->attr);
            if (n > MAX_REDUCE_PARTIALS) {
                char shape[48];
                return nvptx_gen_fail(g, op, "this %s of a %s block leaves each thread %d partial results, more than "
                                      "the %d it can hold; use a smaller block along the kept axis, or more warps "
                                      "(--num-warps)", bir_opcode_name(op->code),
                                      shape_str(vtype(g, x), shape, sizeof shape), n, MAX_REDUCE_PARTIALS);
            }
            break;
        }
        default: break; /* the other ops can be built wherever they verify */
        }
        for (int r = 0; r < op->nregions; r++)
            if (!buildable(g, op->regions[r])) return false;
    }
    return true;
}

/* ------------------------------------------------- TMA and the producer */

/* A block atomic (one instruction an element) whose pointers step by
 * constants along both dimensions, in a layout whose register bits and
 * thread bits never share a coordinate bit (so an element's coordinates are
 * its register's plus its thread's): each register's byte offset from
 * register 0's address, else NULL. */
static int64_t *const_atomic_offsets(Gen *g, const BirOp *op) {
    int64_t steps[2];
    if (!nvptx_pointer_steps(g, op->operands[0], steps)) return NULL;
    const Layout *l = nvptx_memory_layout(g->s->plan, op);
    for (int d = 0; d < 2; d++) {
        int32_t regs = 0, threads = 0;
        for (int b = 0; b < l->nreg_bits; b++) {
            if (regs & l->reg[b][d]) return NULL; /* two register bits on one coordinate bit */
            regs |= l->reg[b][d];
        }
        for (int b = 0; b < LAYOUT_LANE_BITS; b++) threads |= l->lane[b][d];
        for (int b = 0; b < l->nwarp_bits; b++) threads |= l->warp[b][d];
        if (regs & threads) return NULL;
    }
    int64_t *off = arena_alloc(&g->arena, (size_t)l->nregs * sizeof *off);
    int64_t es = dtype_bytes(vtype(g, op->operands[0]).elem);
    for (int r = 0; r < l->nregs; r++) {
        off[r] = (nvptx_layout_coord(l, 0, r, 0, 0) * steps[0] + nvptx_layout_coord(l, 1, r, 0, 0) * steps[1]) * es;
        if (off[r] < 0 || off[r] > INT32_MAX) return NULL; /* PTX's [reg+imm] */
    }
    return off;
}

/* Each atomic's schedule: a red where nothing reads its old value and its
 * sem has no acquire (cas and exch have no red), its constant offsets, and
 * whether bulk reductions add it (bulk.c; placed in shared memory later). */
static void plan_atomics(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (bir_is_atomic(op->code)) {
            AtomicSem sem = atomic_sem_of(op->attr);
            bool red = op->code != BIR_ATOMIC_CAS && op->code != BIR_ATOMIC_XCHG &&
                       (sem == ATOMIC_RELAXED || sem == ATOMIC_RELEASE) && !nvptx_value_used(g->f->body, op->results[0]);
            NvptxAtomicSchedule as = {op, red, const_atomic_offsets(g, op), NULL, NULL};
            NvptxBulkReduce bulk;
            if (red && vtype(g, op->operands[0]).rank && g->m->arch->sm >= 90) {
                as.not_bulk = nvptx_bulk_refusal(g, op, red, &bulk);
                if (!as.not_bulk) {
                    NvptxBulkReduce *kept_bulk = arena_alloc(&g->arena, sizeof *kept_bulk);
                    *kept_bulk = bulk;
                    as.bulk = kept_bulk;
                }
            }
            g->s->atomics[g->s->natomics++] = as;
        }
        for (int r = 0; r < op->nregions; r++) plan_atomics(g, op->regions[r]);
    }
}

/* The programs an SM that `bytes` of shared memory a program leave room for. */
static int programs_by_shared(Gen *g, int64_t bytes) {
    NvptxSmShare share[NVPTX_SM_RESOURCES];
    nvptx_sm_shares(g->m->arch, 1, 0, bytes, share);
    return share[NVPTX_SHARE_SHARED].allows;
}

/* The bulk reductions' stagings, each op's two above the rest (live from
 * one run of the op to the next); an op without room keeps its reds. */
static void place_bulk_staging(Gen *g, int64_t max_bytes) {
    for (int i = 0; i < g->s->natomics; i++) {
        NvptxAtomicSchedule *as = &g->s->atomics[i];
        if (!as->bulk) continue;
        NvptxBulkReduce *bk = as->bulk;
        int64_t at = nvptx_round_up(g->s->smem_size, 128), bytes = 2 * bk->bytes;
        /* an occupancy target the shared memory met without them, and would not with them */
        int target = g->m->opt->min_blocks_per_sm;
        bool crowds = target > 0 && programs_by_shared(g, g->s->smem_size) >= target &&
                      programs_by_shared(g, at + bytes) < target;
        if (at + bytes > max_bytes || crowds) {
            as->bulk = NULL;
            as->not_bulk = crowds ? arena_printf(&g->arena, "its two stagings (%lld bytes) would leave shared memory for "
                                                 "fewer than %d programs an SM, the occupancy target", (long long)bytes,
                                                 target)
                                  : arena_printf(&g->arena, "its two stagings (%lld bytes) have no room in shared memory "
                                                 "above the %lld bytes the rest takes", (long long)bytes,
                                                 (long long)g->s->smem_size);
            continue;
        }
        bk->at = at;
        g->s->smem_size = at + bytes;
        g->s->nbulk++;
    }
}

/* Which pipelined loads TMA copies: a loop's all or none (tma.c), where the
 * loop as a whole should copy by TMA. */
static void plan_tma_in(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i], *loads[NVPTX_MAX_TENSOR_MAPS];
        int64_t tile_bytes;
        bool dot_alone;
        int n = op->code == BIR_FOR ? nvptx_pipeline_loads(g, op, loads, NVPTX_MAX_TENSOR_MAPS, &tile_bytes, &dot_alone) : 0;
        NvptxTensorMap maps[NVPTX_MAX_TENSOR_MAPS];
        NvptxTmaMask masks[NVPTX_MAX_TENSOR_MAPS];
        int needed = 0;
        bool tma = n && !nvptx_tma_loop_refusal(g, tile_bytes, dot_alone, nvptx_ops_in(op->regions[0], BIR_DOT)) &&
                   nvptx_tma_plan_loop(g, loads, n, maps, masks);
        for (int k = 0; tma && k < n; k++) needed += 1 + nvptx_tma_edge_twin(&maps[k]);
        if (tma && g->s->tma.count + needed <= NVPTX_MAX_TENSOR_MAPS)
            for (int k = 0; k < n; k++) {
                /* columns alone bounded: a map without the bound for the tiles within it (tma.c) */
                bool twin = nvptx_tma_edge_twin(&maps[k]);
                NvptxTensorMap inner = maps[k];
                if (twin) inner.cols_param = -1, inner.cols_scale = 0;
                g->s->tma_mask[g->s->tma.count] = masks[k];
                g->s->tma.map[g->s->tma.count++] = inner;
                g->s->tma_of[loads[k]->results[0]] = g->s->tma.count;
                if (twin) {
                    g->s->tma.map[g->s->tma.count++] = maps[k];
                    g->s->tma_edge_of[loads[k]->results[0]] = g->s->tma.count;
                }
            }
        for (int r = 0; r < op->nregions; r++) plan_tma_in(g, op->regions[r]);
    }
}

static int pipelined_loops(Gen *g, const BirBlock *b) {
    int n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        n += op->code == BIR_FOR && nvptx_pipeline_loop(g, op);
        for (int r = 0; r < op->nregions; r++) n += pipelined_loops(g, op->regions[r]);
    }
    return n;
}

/* The loop a producer warpgroup serves (warpspec.c says when one may): at
 * the top level, every load copied by TMA. */
static void plan_producer(Gen *g) {
    g->s->ws_loop = NULL;
    const BirBlock *body = g->f->body;
    int npipelined = g->s->tma.count ? pipelined_loops(g, body) : 0;
    for (int i = 0; i < body->ops.len && g->s->tma.count; i++) {
        const BirOp *op = body->ops.items[i], *loads[NVPTX_MAX_TENSOR_MAPS];
        int64_t tile_bytes;
        bool dot_alone;
        if (op->code != BIR_FOR) continue;
        int n = nvptx_pipeline_loads(g, op, loads, NVPTX_MAX_TENSOR_MAPS, &tile_bytes, &dot_alone);
        bool tma = n > 0;
        for (int k = 0; k < n; k++) tma &= g->s->tma_of[loads[k]->results[0]] > 0;
        if (tma && !nvptx_ws_refusal(g, op, nvptx_pipeline_wants_producer(g, op), npipelined, tile_bytes))
            g->s->ws_loop = op;
    }
}

static const char *kept(Gen *g, const char *why) { return why ? arena_strndup(&g->arena, why, strlen(why)) : NULL; }

/* Why each pipelined loop's loads are not TMA copies, and a TMA loop has no
 * producer: from what its schedule says (as nvptx_pipeline_wants_producer
 * decides it; the loops that pipeline). */
static void explain_loops(Gen *g) {
    for (int i = 0; i < g->s->nloops; i++) {
        NvptxLoopSchedule *ls = &g->s->loops[i];
        bool tma = g->m->arch->tma;
        ls->why_not_tma =
            tma ? kept(g, nvptx_tma_loop_refusal(g, ls->slot_bytes, ls->dot_alone, nvptx_ops_in(ls->loop->regions[0], BIR_DOT)))
                : NULL;
        for (int k = 0; k < ls->nloads; k++) {
            const BirOp *ld = ls->loads[k];
            NvptxTensorMap unused;
            const char *why = NULL;
            if (g->s->tma_of[ld->results[0]] == 0 && tma) {
                why = nvptx_tma_refusal(g, ld, &unused, NULL);
                if (!why) why = ls->why_not_tma ? ls->why_not_tma : "another load of its loop cannot be";
            }
            ls->load_not_tma[k] = kept(g, why);
        }
        if (ls->tma && !ls->ws)
            ls->why_no_producer =
                kept(g, nvptx_ws_refusal(g, ls->loop, nvptx_loop_wants_producer(ls), g->s->nloops, ls->slot_bytes));
    }
}

/* ------------------------------------------------------------ schedule */

bool nvptx_schedule(Gen *g) {
    const BirFunction *f = g->f;
    NvptxModule *m = g->m;
    g->s->plan = nvptx_plan_kernel(&g->arena, f, m->opt->num_warps, g->s->facts, m->arch->wgmma);
    if (m->opt->remarks || m->opt->plan) {
        g->s->naccesses = nvptx_access_advice(g, g->s->facts, &g->s->accesses, &g->s->access_advice);
        for (int i = 0; m->opt->remarks && i < g->s->naccesses; i++)
            if (g->s->access_advice[i])
                diag_report(m->de, DIAG_REMARK, f->src, g->s->accesses[i]->span, "%s", g->s->access_advice[i]);
    }
    if (f->nparams > BLK_MAX_KERNEL_ARGS) /* sema refuses these; a BIR built by hand might not */
        return nvptx_gen_fail(g, NULL, "kernel '%s' has %d parameters; the limit is %d", f->name, f->nparams,
                              BLK_MAX_KERNEL_ARGS);
    if (!buildable(g, f->body)) return false;
    g->s->ring_at = -1;
    g->s->tma_of = arena_alloc(&g->arena, ((size_t)f->nvalues + 1) * sizeof *g->s->tma_of);
    g->s->tma_edge_of = arena_alloc(&g->arena, ((size_t)f->nvalues + 1) * sizeof *g->s->tma_edge_of);
    g->s->tma_memo = nvptx_tma_memo(g); /* TMA's loads and the atomics' constant offsets */
    plan_tma_in(g, f->body);
    int nops = nvptx_ops_in(f->body, BIR_OPCODE_COUNT); /* room for every op: the atomics are some */
    g->s->atomics = arena_alloc(&g->arena, (size_t)(nops + 1) * sizeof *g->s->atomics);
    plan_atomics(g, f->body);
    plan_producer(g);
    const BirOp *largest = NULL;
    nvptx_pipeline_marks(g, &g->s->in_ring, &g->s->address_only);
    g->s->resident_off = arena_alloc(&g->arena, ((size_t)f->nvalues + 1) * sizeof *g->s->resident_off);
    g->s->resident_bytes = nvptx_dot_plan_resident(g, g->s->resident_off);
    plan_smem(g, f->body, false, &largest);
    /* pipelined loops' rings above what the ops in those loops need (where
     * wgmma reads them, at the 1024 bytes its 128-byte swizzle repeats in) */
    int64_t region = g->s->smem_size;
    g->s->region_bytes = region, g->s->region_op = largest;
    int64_t align = g->s->plan->wgmma ? NVPTX_SWIZZLE_PERIOD : 128;
    g->s->ring_at = nvptx_round_up(smem_in_pipelined_loops(g, f->body, false, false), align);
    /* a producer's mbarriers and records are live from the kernel's entry
     * to its end: the region must stay below them (its slots, as the other
     * rings, only while the loop runs) */
    NvptxWsRing ring;
    if (g->s->ws_loop && nvptx_pipeline_ws_ring(g, &ring) && ring.sync_at < region) g->s->ring_at = nvptx_round_up(region, align);
    int64_t max_bytes = g->m->arch->max_shared_bytes;
    const BirOp *lost = nvptx_pipeline_lost(g);
    if (lost)
        return nvptx_gen_fail(g, lost, "this loop's pipelined loads have no room for 2 stages in shared memory above the "
                              "%lld bytes other ops use there and below the %lld bytes of loop-invariant dot "
                              "operands kept there (at most %lld bytes a program on %s); use smaller blocks",
                              (long long)g->s->ring_at, (long long)g->s->resident_bytes, (long long)max_bytes,
                              g->m->arch->name);
    int64_t ring_bytes = nvptx_pipeline_ring_bytes(g);
    g->s->smem_size = ring_bytes && g->s->ring_at + ring_bytes > region ? g->s->ring_at + ring_bytes : region;
    if (g->s->smem_size > max_bytes) {
        if (largest && g->s->smem_size == region) return smem_error(g, largest);
        return nvptx_gen_fail(g, NULL, "the pipelined loops of '%s' need %lld bytes of shared memory (%lld for their "
                              "cp.async rings above %lld the ops in those loops use), more than the %lld bytes a "
                              "program may use on %s; use fewer stages (--num-stages) or smaller blocks",
                              f->name, (long long)g->s->smem_size, (long long)ring_bytes, (long long)g->s->ring_at,
                              (long long)max_bytes, g->m->arch->name);
    }
    if (g->s->resident_bytes) { /* loop-invariant wgmma operands, above it all */
        g->s->resident_at = nvptx_round_up(g->s->smem_size, NVPTX_SWIZZLE_PERIOD);
        g->s->smem_size = g->s->resident_at + g->s->resident_bytes;
        if (g->s->smem_size > max_bytes)
            return nvptx_gen_fail(g, NULL, "'%s' needs %lld bytes of shared memory: %lld for the loop-invariant dot "
                                  "operands its loops keep there (wgmma reads them from shared memory) above %lld for "
                                  "the rest, more than the %lld bytes a program may use on %s; use fewer stages "
                                  "(--num-stages) or smaller blocks",
                                  f->name, (long long)g->s->smem_size, (long long)g->s->resident_bytes,
                                  (long long)g->s->resident_at, (long long)max_bytes, g->m->arch->name);
    }
    place_bulk_staging(g, max_bytes);
    g->s->carried_base = (g->s->smem_size + 15) / 16 * 16;
    size_t nv = (size_t)f->nvalues + 1;
    g->s->kept = arena_alloc(&g->arena, nv * sizeof *g->s->kept);
    g->s->nkept = nvptx_carried_plan(g, max_bytes - g->s->carried_base, g->s->kept);
    g->s->carried_at = arena_alloc(&g->arena, nv * sizeof *g->s->carried_at);
    g->s->kept_in = arena_alloc(&g->arena, nv * sizeof *g->s->kept_in);
    for (size_t v = 0; v < nv; v++) g->s->carried_at[v] = -1;
    for (int k = 0; k < g->s->nkept; k++) {
        const NvptxKeptBlock *b = &g->s->kept[k];
        g->s->carried_at[b->value] = b->at, g->s->kept_in[b->value] = b->loop;
        g->s->carried_bytes = b->at + b->bytes;
    }
    if (g->s->carried_bytes) g->s->smem_size = g->s->carried_base + g->s->carried_bytes;
    int64_t size = unrolled_ops(g, f->body);
    if (size > MAX_UNROLLED_OPS) return code_size_error(g, size);
    if (g->s->ws_loop && !nvptx_pipeline_ws_ring(g, &g->s->ws_ring))
        return nvptx_gen_fail(g, g->s->ws_loop, "internal compiler error: the loop chosen for a producer warpgroup "
                              "does not pipeline once shared memory is laid out");
    g->s->nloops = nvptx_pipeline_schedule(g, &g->s->loops);
    if (g->m->opt->plan) g->s->nrefusals = nvptx_pipeline_refusals(g, &g->s->refusals); /* said, not used */
    explain_loops(g);
    g->s->ndots = nvptx_dot_schedule_all(g, &g->s->dots);
    g->s->launch_warps = nvptx_ws_launch_warps(g);
    g->s->wgmma_min_regs = nvptx_wgmma_register_floor(g->s);
    if (!(g->s->notes = nvptx_schedule_notes(g))) return nvptx_gen_fail(g, NULL, "out of memory");
    return true;
}


