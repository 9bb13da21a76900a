/* pipeline.c: software pipelining of `for` loops whose loads feed dots (the
 * common case of Triton's pipeliner). Such a load becomes copies from
 * global memory straight into a ring of `stages` swizzled shared buffers
 * (--num-stages; by default as many as fit of 3, 4 with an async dot
 * below, down to 2), issued A = stages - 1 iterations ahead, so the tensor
 * cores of one iteration overlap the memory traffic of the next ones.
 *
 * With cp.async (every thread copies 16-byte chunks):
 *   prologue:  copy iterations 0 .. A-1 into slots 0 .. A-1
 *   iteration i: barrier                  (slot (i+A) % stages is read)
 *                copy iteration i + A into that slot; commit
 *                wait until iteration i's copies are done; barrier
 *                the body, its dots reading slot i % stages (ldmatrix,
 *                or wgmma's descriptors after fence.proxy.async)
 *   after:     wait for all copies
 *
 * With TMA (sm_90a, every load of the loop qualifying: tma.c), thread 0
 * copies whole tiles and an mbarrier per slot says when they have landed:
 *   iteration i: barrier, and-ing each thread's "masks all true" for
 *                iteration i + A (bar.red.and)
 *                all true: thread 0 expects the bytes on the slot's
 *                  mbarrier and issues the TMA copies
 *                else: every thread copies its chunks by cp.async (zero
 *                  fill), waits for them, fences; barrier; thread 0 arrives
 *                wait for the phase (i / stages) % 2 of slot i's mbarrier
 *                the body
 * one barrier an iteration instead of two, and no copy work in the threads.
 *
 * A wgmma dot that only feeds itself (async_dot) leaves its group in
 * flight past the iteration: it still reads its slot during the next one,
 * so there is one stage more (4 where they fit) and A = stages - 2. The
 * last dot of a loop whose result only goes to the next iteration, read
 * there only after that iteration's first dot has waited for every group
 * (deferred_dot: attention's acc = dot(p, v, acc * alpha)), also runs on
 * into the next iteration, under its copies and first dot. Its slot is
 * refilled either at the top with a stage more, as async_dot's, or, in a
 * program of one warpgroup, after the first dot's wait (refill_late):
 *   iteration i: wait for slot i % stages; the first dot, waiting for its
 *                group and the last iteration's deferred one; refill (the
 *                barrier, the copies of iteration i + A); the rest
 * A program of one warpgroup shares its SM with others, which the stage
 * more may cost; one of several runs alone (attention's registers), and
 * there a barrier between the first dot and the softmax stalls every
 * warpgroup where at the top it hides under the deferred dot (H100:
 * docs/results/attention_deferred_dot_ab_h100.md).
 *
 * A load qualifies when its result is used only as a dot's operand, its
 * 16-bit elements go 16 bytes at a time (contiguous, aligned, one mask bit
 * per chunk), masked-off elements are zero (cp.async's zero fill), and its
 * pointers and mask are computed, without effects, from the loop variable,
 * loop-invariant values and carried values whose next values are computed
 * so too (a pointer advanced by a stride): then the addresses of a later
 * iteration are that computation run ahead. Loads may be part of it (a
 * gather's row indices, a paged cache's page table) where nothing in the
 * loop writes memory: read ahead they give what they would give in their
 * own iteration; they are predicated on that iteration running
 * (g->ahead_live), so none reads past what the loop would. */
#include <string.h>

#include "gen.h"

enum { PIPE_STAGES = 3 };
_Static_assert(PIPE_STAGES + 1 == NVPTX_RING_MOST_STAGES, "warpspec.c sizes rings by the most stages");

/* (gen.h's NvptxLoopSchedule: what plan() decides for a loop) */
typedef NvptxLoopSchedule PipePlan;

/* ------------------------------------------------------------ detection */

typedef struct {
    Gen *g;
    const BirBlock *body;
    char *in_body;   /* per value: defined by a top-level op of the body, or a body argument */
    char *carried_ok;/* per body argument index: its next value is computable */
    char *memo;      /* per value: 0 unknown, 1 computable, 2 not, 3 visiting */
    bool loads_ahead;/* nothing in the loop writes memory: its loads may be read ahead */
} Slice;

static bool pure(const BirOp *op) {
    BirOpKind k = bir_op_info(op->code)->kind;
    return (k == BIR_KIND_LEAF || k == BIR_KIND_SHAPE || k == BIR_KIND_ELEMENTWISE || k == BIR_KIND_MATH) &&
           op->code != BIR_RAND && op->code != BIR_RANDINT;
}

/* Does anything in b write memory or order memory against other threads
 * (stores, atomics, an asm with effects, the wait for an earlier grid, a
 * barrier: a load read ahead would pass the barrier its iteration reads
 * after)? */
static bool writes_memory(const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        BirOpKind k = bir_op_info(op->code)->kind;
        if ((k == BIR_KIND_MEMORY && op->code != BIR_LOAD) || op->code == BIR_GRID_DEPENDENCY ||
            op->code == BIR_BARRIER || (op->code == BIR_INLINE_ASM && !(op->attr & ASM_PURE)))
            return true;
        for (int r = 0; r < op->nregions; r++)
            if (writes_memory(op->regions[r])) return true;
    }
    return false;
}

/* A load that may be read at another time than where it stands, or not at
 * all: any but a volatile one (that reads when it runs). */
static bool movable_load(const BirOp *op) { return op->code == BIR_LOAD && !(op->attr & MEMORY_VOLATILE); }

/* A load run ahead of its iteration: a movable one, in a loop that writes no memory. */
static bool load_ahead(const Slice *S, const BirOp *op) { return S->loads_ahead && movable_load(op); }

static int arg_index(const BirBlock *body, int v) {
    for (int i = 0; i < body->nargs; i++)
        if (body->args[i] == v) return i;
    return -1;
}

/* Can v's value for a later iteration be computed ahead? */
static bool computable(Slice *S, int v) {
    if (v < 0 || !S->in_body[v]) return true; /* loop-invariant */
    int ai = arg_index(S->body, v);
    if (ai == 0) return true;                 /* the loop variable */
    if (ai > 0) return S->carried_ok[ai];
    if (S->memo[v] == 1 || S->memo[v] == 3) return S->memo[v] == 1;
    if (S->memo[v] == 2) return false;
    const BirOp *op = S->g->f->values[v].def;
    bool ok = op && (pure(op) || load_ahead(S, op));
    S->memo[v] = 3;
    for (int i = 0; ok && i < op->noperands; i++) ok = computable(S, op->operands[i]);
    S->memo[v] = ok ? 1 : 2;
    return ok;
}

static int uses_in(const BirBlock *b, int v) {
    int n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->noperands; k++) n += op->operands[k] == v;
        for (int r = 0; r < op->nregions; r++) n += uses_in(op->regions[r], v);
    }
    return n;
}

/* Is every use of v (anywhere in the block, in ifs too) a dot's a or b, or
 * (with `views`) a transpose whose uses all are? The transposes are noted.
 * A use inside an inner loop is not: that loop's own ring, at the same
 * place in shared memory, would overwrite the slot before the use. */
static bool only_dot_operand(const BirBlock *b, int v, bool views, int *trans) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->noperands; k++) {
            if (op->operands[k] != v || (op->code == BIR_DOT && k < 2)) continue;
            if (!views || op->code != BIR_TRANS || *trans >= 0) return false;
            *trans = op->results[0];
        }
        for (int r = 0; r < op->nregions; r++) {
            bool loop = op->code == BIR_FOR || op->code == BIR_WHILE;
            if (loop ? uses_in(op->regions[r], v) > 0 : !only_dot_operand(op->regions[r], v, views, trans))
                return false;
        }
    }
    return true;
}

/* 8-bit tiles only where every dot reading them (or their transpose) runs
 * on wgmma: mma.sync reads 8-bit operands from registers (dot.c). */
static bool only_wgmma_reads(Gen *g, const BirBlock *b, int v, int trans) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_DOT)
            for (int w = 0; w < 2; w++)
                if ((op->operands[w] == v || op->operands[w] == trans) && nvptx_wgmma_refusal(g, op)) return false;
        for (int r = 0; r < op->nregions; r++)
            if (!only_wgmma_reads(g, op->regions[r], v, trans)) return false;
    }
    return true;
}

static bool zero_other(Gen *g, int v) { return v == BIR_NONE || nvptx_zero_value(g, v); }


/* The bytes of a pipelined load's tile (unpadded). */
static int64_t tile_bytes_of(Gen *g, int v) { return type_numel(vtype(g, v)) * dtype_bytes(vtype(g, v).dtype); }

/* Does v come from this loop's ring (a pipelined load, or its transpose)? */
static bool ringed(const PipePlan *pp, int v) {
    for (int l = 0; l < pp->nloads; l++)
        if (v == pp->loads[l]->results[0] || v == pp->views[l]) return true;
    return false;
}

/* The loop's one dot, on wgmma, when its result only goes back, through
 * the yield, as its own accumulator (matmul's acc = dot(a, b, acc)) and both
 * its operands come from this loop's ring: nothing reads the result or
 * rewrites what the dot reads before the next iteration's dot, so its wgmma
 * group may stay in flight while the next iteration's copies are issued
 * (Triton's "properly async" dot); it is waited for on the way out. An
 * operand the dot stages itself or takes from registers would be rewritten
 * under the running group; another dot in the loop would wait for it anyway. */
static const BirOp *dot_alone(Gen *g, const BirOp *loop, const PipePlan *pp) {
    const BirBlock *body = loop->regions[0];
    const BirOp *y = bir_block_terminator(body);
    if (nvptx_ops_in(body, BIR_DOT) != 1) return NULL;
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        if (op->code != BIR_DOT || nvptx_wgmma_refusal(g, op)) continue;
        if (!ringed(pp, op->operands[0]) || !ringed(pp, op->operands[1])) return NULL;
        int r = op->results[0], k = 0;
        while (k < y->noperands && y->operands[k] != r) k++;
        if (k == y->noperands || op->operands[2] != body->args[1 + k]) return NULL;
        return uses_in(body, r) == 1 && uses_in(body, body->args[1 + k]) == 1 ? op : NULL;
    }
    return NULL;
}

/* The body's last dot, on wgmma, when its result only goes back through
 * the yield and the body reads that carried value only after its first dot,
 * another wgmma dot, all at the top level: that dot's wait for every group
 * (wgmma.wait_group 0) makes the carried registers final before any use, so
 * the last dot's group needs no wait of its own (Triton's attention does
 * the same). Its operands must not be rewritten under the running group:
 * b from the ring (a stage more, or refilled only after that wait), a from
 * the ring or from registers (ptxas keeps those until the wait). The body
 * argument is put in *arg. */
static const BirOp *deferred_dot(Gen *g, const BirOp *loop, const PipePlan *pp, int *arg) {
    const BirBlock *body = loop->regions[0];
    const BirOp *y = bir_block_terminator(body), *first = NULL, *last = NULL;
    int top = 0, first_at = -1;
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        if (op->code != BIR_DOT) continue;
        if (!first) first = op, first_at = i;
        last = op, top++;
    }
    if (top < 2 || top != nvptx_ops_in(body, BIR_DOT) || nvptx_wgmma_refusal(g, first) || nvptx_wgmma_refusal(g, last) ||
        /* (an fp8 dot that is not promoted could be deferred too; that has not run on a GPU) */
        dtype_is_fp8(vtype(g, last->operands[0]).dtype) || dtype_is_fp8(vtype(g, first->operands[0]).dtype))
        return NULL;
    if (!ringed(pp, last->operands[1]) || !(ringed(pp, last->operands[0]) || nvptx_wgmma_a_in_registers(g, last)))
        return NULL;
    int r = last->results[0], k = 0;
    while (k < y->noperands && y->operands[k] != r) k++;
    if (k == y->noperands || uses_in(body, r) != 1) return NULL;
    int a = body->args[1 + k];
    for (int i = 0; i <= first_at; i++) { /* nothing up to the first dot reads it */
        const BirOp *op = body->ops.items[i];
        for (int o = 0; o < op->noperands; o++)
            if (op->operands[o] == a) return NULL;
        for (int rg = 0; rg < op->nregions; rg++)
            if (uses_in(op->regions[rg], a)) return NULL;
    }
    *arg = a;
    return last;
}

/* With a deferred dot whose a is in registers: the body's first dot, when
 * the deferred dot can be issued late, right after it in
 * the next iteration (FlashAttention-3's intra-warpgroup overlap:
 * attention's p V(i) issued after q K^T(i + 1), whose wait leaves p V(i)
 * running under the softmax of i + 1). The deferred dot's a-words and
 * accumulator are carried to the next iteration instead of its result,
 * whose wait is put before the first op after the first dot that reads it
 * (*wait_at); the last iteration's is issued on the way out. */
static const BirOp *overlap_after(Gen *g, const BirOp *loop, const PipePlan *pp, const BirOp **wait_at) {
    const BirBlock *body = loop->regions[0];
    const BirOp *first = NULL;
    int first_at = 0;
    for (int i = 0; i < body->ops.len && !first; i++)
        if (((const BirOp *)body->ops.items[i])->code == BIR_DOT) first = body->ops.items[i], first_at = i;
    if (!first || first == pp->deferred_dot || nvptx_wgmma_refusal(g, first) || nvptx_dot_promoted(g, first) ||
        !nvptx_wgmma_a_in_registers(g, pp->deferred_dot))
        return NULL;
    for (int i = first_at + 1; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        bool reads = false;
        for (int o = 0; o < op->noperands; o++) reads |= op->operands[o] == pp->deferred_arg;
        for (int rg = 0; rg < op->nregions; rg++) reads |= uses_in(op->regions[rg], pp->deferred_arg) > 0;
        if (reads) {
            *wait_at = op;
            return first;
        }
    }
    return NULL;
}

/* Is a dot's wgmma group still running when the loop refills a slot (a
 * stage more, copies one iteration less ahead)? */
static bool in_flight_at_refill(const PipePlan *pp) {
    return pp->async_dot || (pp->deferred_dot && !pp->refill_late);
}

static bool plan_at(Gen *g, const BirOp *loop, PipePlan *pp, int64_t ring_at);
/* planned for the rings at g->s->ring_at (-1: while shared memory is laid out) */
static bool plan(Gen *g, const BirOp *loop, PipePlan *pp) { return plan_at(g, loop, pp, g->s->ring_at); }

/* Does the block return, or hold a loop that pipelines? Then its loop does
 * not: a program must not leave with copies in flight into its shared
 * memory, and an inner loop's ring is where the outer loop's would be. */
static bool holds_return_or_ring(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        PipePlan inner;
        if (op->code == BIR_RETURN || (op->code == BIR_FOR && plan(g, op, &inner))) return true;
        for (int r = 0; r < op->nregions; r++)
            if (holds_return_or_ring(g, op->regions[r])) return true;
    }
    return false;
}

/* The slice of a loop's body whose values can be computed an iteration
 * ahead (the carried values' fixed point); false if the body does not end
 * in its yield. */
static bool slice_of(Gen *g, const BirBlock *body, Slice *S) {
    const BirOp *y = bir_block_terminator(body);
    if (!y || y->code != BIR_YIELD) return false;
    int n = g->f->nvalues + 1;
    *S = (Slice){g, body, arena_alloc(&g->arena, (size_t)n), arena_alloc(&g->arena, (size_t)body->nargs + 1),
                 arena_alloc(&g->arena, (size_t)n), !writes_memory(body)};
    for (int i = 0; i < body->nargs; i++) S->in_body[body->args[i]] = 1;
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        for (int r = 0; r < op->nresults; r++) S->in_body[op->results[r]] = 1;
    }
    for (int i = 1; i < body->nargs; i++) S->carried_ok[i] = 1;
    for (bool changed = true; changed;) {
        changed = false;
        memset(S->memo, 0, (size_t)n);
        for (int i = 1; i < body->nargs; i++)
            if (S->carried_ok[i] && !computable(S, y->operands[i - 1])) S->carried_ok[i] = 0, changed = true;
    }
    memset(S->memo, 0, (size_t)n);
    return true;
}

/* Why a load of the body cannot be copied into a ring (NULL: it can; *trans:
 * the transpose a dot reads instead, or -1). */
static const char *load_refusal(Slice *S, const BirOp *op, int *trans) {
    Gen *g = S->g;
    int v = op->results[0], none = -1;
    BlkType t = vtype(g, v);
    int es = dtype_bytes(t.dtype);
    *trans = -1;
    if (t.rank != 2) return "not a 2-D tile";
    if (op->attr & MEMORY_VOLATILE) return "a volatile load (it reads memory when it runs, never ahead)";
    if (es != 2 && es != 1) return "its elements are not 16-bit or 8-bit (a dot of f32 reads them as they come)";
    if (nvptx_contiguous_dim(g, v) < 0) return "its rows are not known contiguous (a stride not known to be 1)";
    if (nvptx_access_width(g->s->plan, g->f, op) * es < 16)
        return "it moves less than 16 bytes an access, which a copy needs (its access line says what limits it)";
    if (!zero_other(g, op->operands[2])) return "a masked load whose `other` is not 0 (copies fill with zeros)";
    if (!only_dot_operand(S->body, v, true, trans)) return "it feeds more than a dot's operand";
    if (!computable(S, op->operands[0]) || (op->operands[1] != BIR_NONE && !computable(S, op->operands[1]))) {
        /* would loads read ahead make it computable? then the loop's writes are why not */
        Slice T = *S;
        T.loads_ahead = true;
        T.memo = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
        bool by_loads = !S->loads_ahead && computable(&T, op->operands[0]) &&
                        (op->operands[1] == BIR_NONE || computable(&T, op->operands[1]));
        return by_loads ? "its address or mask needs a load of the loop, which is read ahead only where the loop "
                          "writes no memory and has no barrier"
                        : "its address or mask cannot be computed an iteration ahead";
    }
    if (*trans >= 0 && !only_dot_operand(S->body, *trans, false, &none)) return "its transpose feeds more than a dot";
    if (es == 1 && !only_wgmma_reads(g, S->body, v, *trans)) return "an 8-bit tile read by a dot not on wgmma";
    return NULL;
}

/* What the copies' addresses need, run ahead: the carried values they are
 * computed from (pp->carried_ok keeps those of S's computable ones: the
 * others are not computed ahead, where a load among them would be read for
 * nothing), and the loads among their computation (for the plan). */
static void plan_ahead(Gen *g, const BirBlock *body, const Slice *S, PipePlan *pp) {
    const BirOp *y = bir_block_terminator(body);
    char *need = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
    char *carried = arena_alloc(&g->arena, (size_t)body->nargs + 1);
    for (int i = 0; i < pp->nloads; i++)
        for (int k = 0; k < 2; k++)
            if (pp->loads[i]->operands[k] >= 0) need[pp->loads[i]->operands[k]] = 1;
    for (bool more = true; more;) { /* until no carried value joins: its next value is needed too */
        more = false;
        for (int i = body->ops.len - 1; i >= 0; i--) {
            const BirOp *op = body->ops.items[i];
            if (op->nresults != 1 || !need[op->results[0]]) continue;
            for (int k = 0; k < op->noperands; k++)
                if (op->operands[k] >= 0) need[op->operands[k]] = 1;
        }
        for (int i = 1; i < body->nargs; i++)
            if (need[body->args[i]] && S->carried_ok[i] && !carried[i] && y->operands[i - 1] >= 0)
                carried[i] = 1, need[y->operands[i - 1]] = 1, more = true;
    }
    pp->carried_ok = carried;
    pp->nread_ahead = 0;
    for (int i = body->ops.len - 1; i >= 0; i--) {
        const BirOp *op = body->ops.items[i];
        if (op->code != BIR_LOAD || !need[op->results[0]]) continue;
        if (pp->nread_ahead < NVPTX_MAX_READ_AHEAD) pp->read_ahead[pp->nread_ahead] = op;
        pp->nread_ahead++;
    }
}

static bool plan_at(Gen *g, const BirOp *loop, PipePlan *pp, int64_t ring_at) {
    *pp = (PipePlan){0};
    const BirBlock *body = loop->regions[0];
    Slice S;
    if (holds_return_or_ring(g, body) || !slice_of(g, body, &S)) return false;
    int64_t tiles = 0;
    for (int i = 0; i < body->ops.len && pp->nloads < NVPTX_MAX_PIPE_LOADS; i++) {
        const BirOp *op = body->ops.items[i];
        int trans;
        if (op->code != BIR_LOAD || load_refusal(&S, op, &trans)) continue;
        int v = op->results[0];
        pp->views[pp->nloads] = trans;
        pp->loads[pp->nloads] = op;
        /* wgmma's descriptors want each tile at a multiple of 1024 bytes */
        int64_t bytes = g->s->plan->wgmma ? nvptx_round_up(tile_bytes_of(g, v), NVPTX_SWIZZLE_PERIOD) : tile_bytes_of(g, v);
        pp->tile_bytes[pp->nloads++] = bytes;
        tiles += bytes;
    }
    if (!pp->nloads) return false;
    plan_ahead(g, body, &S, pp);
    pp->tma = g->s->tma_of != NULL;
    for (int i = 0; i < pp->nloads; i++) pp->tma &= g->s->tma_of && g->s->tma_of[pp->loads[i]->results[0]] > 0;
    pp->slot_bytes = tiles;
    pp->ws = pp->tma && g->s->ws_loop == loop;
    int64_t per_stage = tiles + (pp->ws ? NVPTX_WS_SLOT_SYNC_BYTES : pp->tma ? 8 : 0);
    /* as many stages as fit above ring_at (and below the resident region, whose
     * size is a multiple of the 1024 bytes the limit is), 2 or 3, or up to 4
     * with a dot in flight (one slot more, copies 2 ahead); while shared memory is being
     * planned ring_at is -1: assume 2 fit */
    /* the lone dot's group stays in flight, unless its fp8 sums are promoted: they are added after
     * a wait in every iteration (wgmma.c) */
    const BirOp *alone = dot_alone(g, loop, pp);
    pp->promoted_alone = alone && nvptx_dot_promoted(g, alone);
    pp->async_dot = pp->promoted_alone ? NULL : alone;
    pp->dot_alone = pp->async_dot != NULL;
    if (!pp->async_dot) pp->deferred_dot = deferred_dot(g, loop, pp, &pp->deferred_arg);
    pp->refill_late = pp->deferred_dot && !pp->ws && g->s->plan->num_warps <= 4; /* (a producer releases at the latch) */
    pp->deferred_on = pp->deferred_dot && !pp->refill_late;
    int most = in_flight_at_refill(pp) ? PIPE_STAGES + 1 : PIPE_STAGES;
    if (g->m->opt->num_stages >= 2) pp->stages = g->m->opt->num_stages; /* asked for: over the limit is an error */
    else if (ring_at < 0) pp->stages = 2;
    else
        for (pp->stages = most; pp->stages >= 2; pp->stages--)
            if (ring_at + pp->stages * per_stage <= g->m->arch->max_shared_bytes - g->s->resident_bytes) break;
    if (pp->stages < 3) { /* no room for the slot the dot reads and one to fill */
        pp->async_dot = NULL;
        if (pp->ws) pp->deferred_dot = NULL; /* then it waits for its group, as any dot */
        pp->refill_late = pp->deferred_dot != NULL;
    }
    /* ping-pong (FlashAttention-3's), asked for: with a dot waited for within the iteration and work on
     * its result before the deferred one, warpgroups taking turns to issue the dots keep the tensor
     * cores busy while one does that work (slower than without as it is, internals.md says why) */
    pp->ping_pong = pp->ws && pp->deferred_dot && g->s->plan->num_warps >= 8 && g->m->opt->ping_pong;
    /* the deferred dot issued late, asked for (--overlap-dots); with ping-pong a turn spans the first dot
     * and that one */
    if (pp->deferred_dot && g->m->opt->overlap_dots)
        pp->overlap_after = overlap_after(g, loop, pp, &pp->deferred_wait_at);
    pp->ahead = in_flight_at_refill(pp) ? pp->stages - 2 : pp->stages - 1;
    pp->lead = pp->ahead + 1; /* a slot is free once its iteration's dots are done: after it, or the next one's wait */
    pp->ring_bytes = pp->stages * per_stage;
    return pp->stages >= 2;
}

static void ring_bytes_in(Gen *g, const BirBlock *b, int64_t *most) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        PipePlan pp;
        if (op->code == BIR_FOR && plan(g, op, &pp) && pp.ring_bytes > *most) *most = pp.ring_bytes;
        for (int r = 0; r < op->nregions; r++) ring_bytes_in(g, op->regions[r], most);
    }
}

/* Is every use of v in b (nested regions and the yield too) a pipelined
 * load's pointer or mask, or an op already marked address-only? */
static bool only_addresses(const BirBlock *b, int v, const PipePlan *pp, const char *marks) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        bool ringed_load = false;
        for (int l = 0; l < pp->nloads; l++) ringed_load |= op == pp->loads[l];
        for (int k = 0; k < op->noperands; k++) {
            if (op->operands[k] != v) continue;
            if (ringed_load ? k > 1 : op->nresults != 1 || !marks[op->results[0]]) return false;
        }
        for (int r = 0; r < op->nregions; r++)
            if (uses_in(op->regions[r], v)) return false;
    }
    return true;
}

/* For every pipelined loop of b: its ring's loads (and their transposes)
 * in in_ring; in address_only, the values of its body that only those
 * loads' pointers and masks use: the loads read from the ring and the
 * addresses come from the computation run ahead, so the body itself need
 * not compute them (LLVM would drop most, but not a masked load read for
 * its address, nor a layout change through shared memory). */
static void mark_in(Gen *g, const BirBlock *b, char *in_ring, char *address_only) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) mark_in(g, op->regions[r], in_ring, address_only);
        PipePlan pp;
        if (op->code != BIR_FOR || !plan(g, op, &pp)) continue;
        for (int k = 0; k < pp.nloads; k++) {
            in_ring[pp.loads[k]->results[0]] = 1;
            if (pp.views[k] >= 0) in_ring[pp.views[k]] = 1;
        }
        const BirBlock *body = op->regions[0];
        for (int j = body->ops.len - 1; j >= 0; j--) {
            const BirOp *x = body->ops.items[j];
            if (x->nresults != 1 || ringed(&pp, x->results[0]) || !(pure(x) || movable_load(x))) continue;
            if (only_addresses(body, x->results[0], &pp, address_only)) address_only[x->results[0]] = 1;
        }
    }
}

void nvptx_pipeline_marks(Gen *g, char **in_ring, char **address_only) {
    *in_ring = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
    *address_only = arena_alloc(&g->arena, (size_t)g->f->nvalues + 1);
    mark_in(g, g->f->body, *in_ring, *address_only);
}

bool nvptx_pipeline_loop(Gen *g, const BirOp *loop) {
    PipePlan pp;
    return plan(g, loop, &pp);
}

int nvptx_pipeline_loads(Gen *g, const BirOp *loop, const BirOp **loads, int max, int64_t *tile_bytes, bool *dot_alone) {
    PipePlan pp;
    if (!plan(g, loop, &pp) || pp.nloads > max) return 0;
    memcpy(loads, pp.loads, (size_t)pp.nloads * sizeof *loads);
    *tile_bytes = pp.slot_bytes, *dot_alone = pp.dot_alone;
    return pp.nloads;
}

/* A loop planned with the 2 stages assumed while shared memory was laid
 * out (its loads marked, their dots counting no bytes of their own for
 * them) that no longer has room for 2 at ring_at. */
static const BirOp *lost_in(Gen *g, const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_FOR) {
            PipePlan pp;
            if (plan_at(g, op, &pp, -1) && !plan(g, op, &pp)) return op;
        }
        for (int r = 0; r < op->nregions; r++) {
            const BirOp *lost = lost_in(g, op->regions[r]);
            if (lost) return lost;
        }
    }
    return NULL;
}

const BirOp *nvptx_pipeline_lost(Gen *g) { return lost_in(g, g->f->body); }

int64_t nvptx_pipeline_ring_bytes(Gen *g) {
    int64_t most = 0;
    ring_bytes_in(g, g->f->body, &most);
    return most;
}

/* Does the block (not the loops in it) hold a dot? */
static bool holds_dot(const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_DOT) return true;
        for (int r = 0; r < op->nregions; r++)
            if (op->code != BIR_FOR && op->code != BIR_WHILE && holds_dot(op->regions[r])) return true;
    }
    return false;
}

/* Does a dot of the block read v as a or b, itself or transposed? */
static bool read_by_dot(const BirBlock *b, int v) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_DOT && (op->operands[0] == v || op->operands[1] == v)) return true;
        if (op->code == BIR_TRANS && op->operands[0] == v && read_by_dot(b, op->results[0])) return true;
        for (int r = 0; r < op->nregions; r++)
            if (read_by_dot(op->regions[r], v)) return true;
    }
    return false;
}

/* Why a loop whose body holds a dot is not pipelined, for the plan. */
static const char *why_not_pipelined(Gen *g, const BirOp *loop) {
    const BirBlock *body = loop->regions[0];
    Slice S;
    if (holds_return_or_ring(g, body)) return "its body returns, or holds a loop that is pipelined";
    if (!slice_of(g, body, &S)) return "its body does not end in its yield";
    for (int i = 0; i < body->ops.len; i++) { /* the first load a dot reads that cannot be copied */
        const BirOp *op = body->ops.items[i];
        int trans;
        const char *why = op->code == BIR_LOAD && read_by_dot(body, op->results[0]) ? load_refusal(&S, op, &trans) : NULL;
        if (why) return arena_printf(&g->arena, "the load at line %u: %s", op->span.line, why);
    }
    PipePlan pp;
    if (plan_at(g, loop, &pp, -1)) return "no room in shared memory for 2 stages";
    return "no load in its body feeds a dot";
}

static void refusals_in(Gen *g, const BirBlock *b, NvptxLoopRefusal *out, int *n) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        PipePlan pp;
        if (op->code == BIR_FOR && holds_dot(op->regions[0]) && !plan(g, op, &pp))
            out[(*n)++] = (NvptxLoopRefusal){op, why_not_pipelined(g, op)};
        for (int r = 0; r < op->nregions; r++) refusals_in(g, op->regions[r], out, n);
    }
}

int nvptx_pipeline_refusals(Gen *g, NvptxLoopRefusal **out) {
    int most = nvptx_ops_in(g->f->body, BIR_FOR), n = 0;
    *out = arena_alloc(&g->arena, (size_t)(most ? most : 1) * sizeof **out);
    refusals_in(g, g->f->body, *out, &n);
    return n;
}

/* The pipelined loops in program order, each planned once shared memory is laid out. */
static void schedule_in(Gen *g, const BirBlock *b, NvptxLoopSchedule *loops, int *n) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        PipePlan pp;
        if (op->code == BIR_FOR && plan(g, op, &pp)) {
            pp.loop = op;
            loops[(*n)++] = pp;
        }
        for (int r = 0; r < op->nregions; r++) schedule_in(g, op->regions[r], loops, n);
    }
}

int nvptx_pipeline_schedule(Gen *g, NvptxLoopSchedule **loops) {
    int most = nvptx_ops_in(g->f->body, BIR_FOR), n = 0;
    *loops = arena_alloc(&g->arena, (size_t)(most ? most : 1) * sizeof **loops);
    schedule_in(g, g->f->body, *loops, &n);
    return n;
}

/* ----------------------------------------------------------- emission */

/* The registers of values of the body for an iteration other than the
 * current one: the computable ops generated again over `env` (the carried
 * values' registers, in their layouts) and `iv`. Returns the register table. */
static LLVMValueRef **run_ahead(Gen *g, const BirBlock *body, LLVMValueRef **env, LLVMValueRef iv, const int *want,
                                int nwant, LLVMValueRef live) {
    int n = g->f->nvalues + 1;
    LLVMValueRef **tmp = arena_alloc(&g->arena, (size_t)n * sizeof *tmp);
    memcpy(tmp, g->regs, (size_t)n * sizeof *tmp);
    LLVMValueRef *ivr = arena_alloc(&g->arena, sizeof *ivr);
    *ivr = iv;
    tmp[body->args[0]] = ivr;
    for (int i = 1; i < body->nargs; i++) tmp[body->args[i]] = env[i - 1];
    /* which top-level ops the wanted values need */
    char *need = arena_alloc(&g->arena, (size_t)n);
    for (int i = 0; i < nwant; i++)
        if (want[i] >= 0) need[want[i]] = 1;
    for (int i = body->ops.len - 1; i >= 0; i--) {
        const BirOp *op = body->ops.items[i];
        if (op->nresults != 1 || !need[op->results[0]]) continue;
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] >= 0) need[op->operands[k]] = 1;
    }
    LLVMValueRef **saved = g->regs, saved_live = g->ahead_live;
    g->regs = tmp;
    g->ahead_live = live;
    for (int i = 0; i < body->ops.len; i++) {
        const BirOp *op = body->ops.items[i];
        /* (a load here is one computable() let in: the loop writes no memory) */
        if (op->nresults == 1 && need[op->results[0]] && (pure(op) || movable_load(op)) &&
            arg_index(body, op->results[0]) < 0)
            nvptx_gen_op(g, op);
    }
    g->regs = saved, g->ahead_live = saved_live;
    return tmp;
}

/* The carried values of the next iteration, from those of this one: the
 * ones that can be computed ahead (NULL for the others, which no pipelined
 * load's address uses). `live`: whether the iteration they are wanted for
 * runs (then this one does too; NULL: it does). */
static LLVMValueRef **next_env(Gen *g, const BirOp *loop, const PipePlan *pp, LLVMValueRef **env, LLVMValueRef iv,
                              LLVMValueRef live) {
    const BirBlock *body = loop->regions[0];
    const BirOp *y = bir_block_terminator(body);
    int n = y->noperands;
    int *want = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *want);
    for (int i = 0; i < n; i++) want[i] = pp->carried_ok[1 + i] ? y->operands[i] : -1;
    LLVMValueRef **tmp = run_ahead(g, body, env, iv, want, n, live);
    LLVMValueRef **next = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *next);
    LLVMValueRef **saved = g->regs;
    g->regs = tmp;
    for (int i = 0; i < n; i++)
        next[i] = want[i] < 0 ? NULL : nvptx_operand(g, y->operands[i], &g->s->plan->layouts[loop->results[i]], 0);
    g->regs = saved;
    return next;
}

/* The carried values n iterations after those at *iv (which moves there). */
static LLVMValueRef **steps_ahead(Gen *g, const BirOp *loop, const PipePlan *pp, LLVMValueRef **env, LLVMValueRef *iv,
                                 LLVMValueRef step, int n, LLVMValueRef live) {
    for (int s = 0; s < n; s++) {
        env = next_env(g, loop, pp, env, *iv, live);
        *iv = LLVMBuildAdd(g->b, *iv, step, "");
    }
    return env;
}

static void call_void(Gen *g, const char *name, LLVMValueRef *args, int n) {
    nvptx_call(g, name, g->m->t.void_t, args, n);
}

/* The registers of the loads' pointers and masks for the iteration at iv
 * with carried values env, which runs where `live` holds (NULL: it does). */
static LLVMValueRef **ahead_regs(Gen *g, const BirOp *loop, const PipePlan *pp, LLVMValueRef **env, LLVMValueRef iv,
                                 LLVMValueRef live) {
    int want[2 * NVPTX_MAX_PIPE_LOADS];
    for (int i = 0; i < pp->nloads; i++) want[2 * i] = pp->loads[i]->operands[0], want[2 * i + 1] = pp->loads[i]->operands[1];
    return run_ahead(g, loop->regions[0], env, iv, want, 2 * pp->nloads, live);
}

static LLVMValueRef slot_at(Gen *g, const PipePlan *pp, int64_t at, LLVMValueRef slot) {
    return LLVMBuildAdd(g->b, ci32(g, at), LLVMBuildMul(g->b, slot, ci32(g, (int32_t)pp->slot_bytes), ""), "");
}

/* The mbarrier of a slot (TMA rings): after the slots. */
static LLVMValueRef mbarrier_at(Gen *g, const PipePlan *pp, int64_t ring_at, LLVMValueRef slot) {
    return LLVMBuildAdd(g->b, ci32(g, ring_at + pp->stages * pp->slot_bytes), LLVMBuildMul(g->b, slot, ci32(g, 8), ""), "");
}

/* One iteration's cp.async copies into ring slot `slot` (an i32), each
 * 16-byte chunk predicated by its mask (zero fill) and by `live`; g->regs
 * holds that iteration's pointers and masks. Where a tile is smaller than
 * the threads, lanes or warps hold copies of its chunks: only the owner
 * copies, or the copies would race on the slot (racecheck's write-write). */
static void copy_chunks(Gen *g, const PipePlan *pp, int64_t ring_at, LLVMValueRef slot, LLVMValueRef live) {
    int64_t off = 0;
    for (int i = 0; i < pp->nloads; i++) {
        const BirOp *ld = pp->loads[i];
        int v = ld->results[0];
        const Layout *l = &g->s->plan->layouts[ld->operands[0]];
        LLVMValueRef *ptr = g->regs[ld->operands[0]];
        LLVMValueRef *mask = ld->operands[1] != BIR_NONE ? nvptx_operand(g, ld->operands[1], l, 0) : NULL;
        Staged st = nvptx_staging(g, v, slot_at(g, pp, ring_at + off, slot));
        int32_t copies = nvptx_layout_copy_regs(l);
        LLVMValueRef own = nvptx_owner(g, l); /* a branch, not src-size 0: that writes zeros */
        LLVMBasicBlockRef owned = LLVMIsConstant(own) ? NULL : nvptx_begin_if(g, own);
        for (int r = 0; r < l->nregs; r += 16 / st.es) { /* a 16-byte chunk a copy */
            if (r & copies) continue;
            LLVMValueRef ok = mask ? LLVMBuildAnd(g->b, mask[r], live, "") : live;
            nvptx_cp_async_16(g, nvptx_staged_offset_of(g, &st, l, r), ptr[r], ok);
        }
        if (owned) nvptx_end_if(g, owned);
        off += pp->tile_bytes[i];
    }
}

/* Issues one iteration's cp.async copies, one group. */
static void issue(Gen *g, const BirOp *loop, const PipePlan *pp, int64_t ring_at, LLVMValueRef **env, LLVMValueRef iv,
                  LLVMValueRef slot, LLVMValueRef live) {
    LLVMValueRef **saved = g->regs;
    g->regs = ahead_regs(g, loop, pp, env, iv, live);
    copy_chunks(g, pp, ring_at, slot, live);
    g->regs = saved;
    call_void(g, "llvm.nvvm.cp.async.commit.group", NULL, 0);
}

static void wait_groups(Gen *g, int n) {
    LLVMValueRef a = ci32(g, n);
    call_void(g, "llvm.nvvm.cp.async.wait.group", &a, 1);
}

/* One iteration's tiles for a TMA ring (see the top): the barrier before
 * the refill decides, for every thread alike, between TMA and cp.async. */
/* This thread's part of the test that an iteration's tiles can be TMA
 * copies (g->regs holding its pointers and masks): the terms of its masks
 * that are not its maps' bounds all true (tma.c), and for thread 0 each
 * tile's coordinates within its map; cols and rows get those, edges
 * whether a tile takes its load's edge map (g->s->tma_edge_of). */
static LLVMValueRef tma_vote(Gen *g, const PipePlan *pp, LLVMValueRef *cols, LLVMValueRef *rows, LLVMValueRef *edges) {
    LLVMValueRef t0 = is_thread0(g), ok = LLVMConstInt(g->m->t.i1, 1, 0);
    for (int i = 0; i < pp->nloads; i++) {
        const BirOp *ld = pp->loads[i];
        const NvptxTmaMask *mk = &g->s->tma_mask[g->s->tma_of[ld->results[0]] - 1]; /* planned with its map */
        for (int k = 0; k < mk->nrest; k++) { /* each term in its own layout: every register of every thread */
            LLVMValueRef *term = g->regs[mk->rest[k]];
            int32_t n = g->s->plan->layouts[mk->rest[k]].nregs, copies = nvptx_layout_copy_regs(&g->s->plan->layouts[mk->rest[k]]);
            for (int r = 0; r < n; r++)
                if (!(r & copies)) ok = LLVMBuildAnd(g->b, ok, term[r], "");
        }
        /* thread 0 holds element (0, 0) of every block in its register 0; it alone works the
         * coordinates out (the other threads' time is the loop's: they took matmul 10% there) */
        LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
        LLVMBasicBlockRef merge = nvptx_begin_if(g, t0);
        LLVMValueRef c, r, e, fits = nvptx_tma_coords_ok(g, ld, mk, g->regs[ld->operands[0]][0], &c, &r, &e);
        LLVMBasicBlockRef worked = LLVMGetInsertBlock(g->b);
        nvptx_end_if(g, merge);
        LLVMValueRef in[4][2] = {{LLVMConstInt(g->m->t.i1, 1, 0), fits}, {ci32(g, 0), c}, {ci32(g, 0), r},
                                 {LLVMConstInt(g->m->t.i1, 0, 0), e}};
        LLVMValueRef *out[4] = {&fits, &cols[i], &rows[i], &edges[i]};
        LLVMBasicBlockRef blocks[2] = {from, worked};
        for (int k = 0; k < 4; k++) {
            *out[k] = LLVMBuildPhi(g->b, LLVMTypeOf(in[k][1]), "");
            LLVMAddIncoming(*out[k], in[k], blocks, 2);
        }
        ok = LLVMBuildAnd(g->b, ok, fits, "");
    }
    return ok;
}

static void fill(Gen *g, const BirOp *loop, const PipePlan *pp, int64_t ring_at, LLVMValueRef **env, LLVMValueRef iv,
                 LLVMValueRef slot, LLVMValueRef live) {
    LLVMValueRef **saved = g->regs;
    g->regs = ahead_regs(g, loop, pp, env, iv, live);
    LLVMValueRef t0 = is_thread0(g), cols[NVPTX_MAX_PIPE_LOADS], rows[NVPTX_MAX_PIPE_LOADS], edges[NVPTX_MAX_PIPE_LOADS];
    LLVMValueRef all = nvptx_barrier_and(g, tma_vote(g, pp, cols, rows, edges));
    LLVMValueRef bar = mbarrier_at(g, pp, ring_at, slot);
    LLVMBasicBlockRef done = nvptx_begin_if(g, live);
    LLVMBasicBlockRef by_tma = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "tma");
    LLVMBasicBlockRef by_threads = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "tma.fallback");
    LLVMBuildCondBr(g->b, all, by_tma, by_threads);
    LLVMPositionBuilderAtEnd(g->b, by_tma);
    LLVMBasicBlockRef t0_done = nvptx_begin_if(g, t0);
    int64_t bytes = 0;
    for (int i = 0; i < pp->nloads; i++) bytes += tile_bytes_of(g, pp->loads[i]->results[0]);
    nvptx_mbarrier_expect(g, bar, bytes);
    int64_t off = 0;
    for (int i = 0; i < pp->nloads; i++) {
        int v = pp->loads[i]->results[0];
        const NvptxTensorMap *map = &g->s->tma.map[g->s->tma_of[v] - 1];
        int inner = vtype(g, v).shape[nvptx_contiguous_dim(g, v)];
        /* with an edge map, each map's copies under its own branch (as warpspec.c issues them) */
        int twin = g->s->tma_edge_of[v] - 1;
        for (int which = 0; which < (twin >= 0 ? 2 : 1); which++) {
            LLVMBasicBlockRef merge = twin >= 0 ? nvptx_begin_if(g, which ? edges[i] : LLVMBuildNot(g->b, edges[i], "")) : NULL;
            LLVMValueRef addr = nvptx_tma_map_address(g, which ? twin : g->s->tma_of[v] - 1);
            for (int j = 0; j < inner / map->box_inner; j++) {
                LLVMValueRef dst = slot_at(g, pp, ring_at + off + (int64_t)j * map->box_rows * map->box_inner * map->elem_bytes, slot);
                LLVMValueRef col = LLVMBuildAdd(g->b, cols[i], ci32(g, j * map->box_inner), "");
                nvptx_tma_load(g, addr, dst, col, rows[i], bar);
            }
            if (merge) nvptx_end_if(g, merge);
        }
        off += pp->tile_bytes[i];
    }
    nvptx_end_if(g, t0_done);
    LLVMBuildBr(g->b, done);
    LLVMPositionBuilderAtEnd(g->b, by_threads);
    copy_chunks(g, pp, ring_at, slot, LLVMConstInt(g->m->t.i1, 1, 0));
    call_void(g, "llvm.nvvm.cp.async.commit.group", NULL, 0);
    wait_groups(g, 0);
    nvptx_proxy_fence(g); /* for wgmma, which reads through the async proxy */
    nvptx_barrier(g);
    LLVMBasicBlockRef arrived = nvptx_begin_if(g, t0);
    nvptx_mbarrier_arrive(g, bar);
    nvptx_end_if(g, arrived);
    nvptx_end_if(g, done);
    g->regs = saved;
}

struct NvptxPipeline {
    PipePlan plan;
    int64_t ring_at;
    LLVMValueRef it;       /* the iteration counter phi, in the loop header (with a producer: the fill
                              number, from g->ws_fills) */
    LLVMValueRef it_next;  /* it + 1, in the latch */
    LLVMValueRef ub, step;
    const BirOp *loop;
    LLVMValueRef **carried, iv; /* this iteration's, for the latch's release (ws) or the deferred refill */
    /* with overlap_after (the deferred dot issued late): the a-words it is issued with, carried (the
     * header's phis) and made in this iteration (the latch's), whether an iteration ran before this one,
     * and its accumulators once issued, in flight */
    LLVMValueRef *words_phi, *words_next, has_prev, *deferred_out;
    int nwords;
};

/* Does the iteration n steps after the one at iv run? Exactly: the loop
 * ends where its variable would overflow (control.c), so an iteration whose
 * variable overflows does not run. A producer warp is then sent exactly
 * the fills of the iterations that run (warpspec.c), and no ring copies
 * from the addresses of an iteration that does not. */
static LLVMValueRef runs(Gen *g, const BirOp *loop, LLVMValueRef iv, int n, LLVMValueRef step, LLVMValueRef ub) {
    DType d = vtype(g, loop->operands[0]).dtype;
    LLVMIntPredicate lt = nvptx_loop_continues(g, loop);
    if (!n) return LLVMBuildICmp(g->b, lt, iv, ub, "");
    /* step by step, as the loop does: n * step may overflow where the sum does not */
    LLVMTypeRef fields[2] = {LLVMTypeOf(iv), g->m->t.i1}, pair = LLVMStructTypeInContext(g->m->ctx, fields, 2, 0);
    char add[48];
    snprintf(add, sizeof add, "llvm.%cadd.with.overflow.i%d", dtype_is_signed(d) ? 's' : 'u', dtype_bits(d));
    LLVMValueRef over = LLVMConstInt(g->m->t.i1, 0, 0);
    for (int k = 0; k < n; k++) {
        LLVMValueRef args[2] = {iv, step}, sum = nvptx_call(g, add, pair, args, 2);
        iv = LLVMBuildExtractValue(g->b, sum, 0, "");
        over = LLVMBuildOr(g->b, over, LLVMBuildExtractValue(g->b, sum, 1, ""), "");
    }
    return LLVMBuildAnd(g->b, LLVMBuildNot(g->b, over, ""), LLVMBuildICmp(g->b, lt, iv, ub, ""), "");
}

/* With a producer warp: if the iteration at iv with carried values env
 * runs (live), the release of its slot, fill number `fill`, with this
 * thread's vote that TMA can copy it. */
static void release(Gen *g, const BirOp *loop, NvptxPipeline *p, LLVMValueRef **env, LLVMValueRef iv, LLVMValueRef live,
                    LLVMValueRef fill) {
    LLVMBasicBlockRef done = nvptx_begin_if(g, live);
    LLVMValueRef **saved = g->regs, cols[NVPTX_MAX_PIPE_LOADS], rows[NVPTX_MAX_PIPE_LOADS], edges[NVPTX_MAX_PIPE_LOADS];
    g->regs = ahead_regs(g, loop, &p->plan, env, iv, NULL); /* (under `live`) */
    LLVMValueRef vote = tma_vote(g, &p->plan, cols, rows, edges);
    g->regs = saved;
    nvptx_ws_release(g, &g->s->ws_ring, fill, vote, cols, rows, edges); /* (g->s->ws_loop is this loop) */
    nvptx_end_if(g, done);
}

static void ws_ring(Gen *g, const PipePlan *pp, int64_t ring_at, NvptxWsRing *r) {
    *r = (NvptxWsRing){.stages = pp->stages, .nloads = pp->nloads, .slots_at = ring_at, .slot_bytes = pp->slot_bytes,
                       .sync_at = ring_at + pp->stages * pp->slot_bytes};
    int64_t off = 0;
    for (int i = 0; i < pp->nloads; i++) {
        int v = pp->loads[i]->results[0];
        const NvptxTensorMap *map = &g->s->tma.map[g->s->tma_of[v] - 1];
        r->tile_at[i] = off;
        r->map[i] = g->s->tma_of[v] - 1;
        r->edge_map[i] = g->s->tma_edge_of[v] - 1;
        r->box_inner[i] = map->box_inner;
        r->boxes[i] = vtype(g, v).shape[nvptx_contiguous_dim(g, v)] / map->box_inner;
        r->box_bytes[i] = (int64_t)map->box_rows * map->box_inner * map->elem_bytes;
        r->bounded[i] = map->rows_scale || r->edge_map[i] >= 0;
        r->fill_bytes += tile_bytes_of(g, v);
        off += pp->tile_bytes[i];
    }
}

/* The staging of ring value v (a load or its transpose) in slot `slot`. */
static Staged ring_staging(Gen *g, NvptxPipeline *p, int v, LLVMValueRef slot) {
    const PipePlan *pp = &p->plan;
    int64_t off = 0;
    int i = 0;
    while (i < pp->nloads - 1 && v != pp->loads[i]->results[0] && v != pp->views[i]) off += pp->tile_bytes[i++];
    return nvptx_staging(g, v, slot_at(g, pp, p->ring_at + off, slot));
}

/* The deferred dot issued late, for the iteration whose fill is `it`
 * (its b in that slot), from its a-words and accumulators, where `issue`
 * (an i1, alike in a warpgroup) holds: its group committed (an empty one
 * where not), its accumulators in flight (as given where not issued). In
 * the body by a branch around its wgmmas (predicated wgmmas make ptxas put
 * a warpgroup.arrive before each, C7519); on the way out, where a block
 * of its own must stay one, predicated. */
static LLVMValueRef *issue_late(Gen *g, NvptxPipeline *p, LLVMValueRef *words, LLVMValueRef *acc, LLVMValueRef it,
                                LLVMValueRef issue, bool branch) {
    const BirOp *dot = p->plan.deferred_dot;
    int n = nregs(g, dot->results[0]);
    LLVMValueRef *out = arena_alloc(&g->arena, (size_t)n * sizeof *out);
    memcpy(out, acc, (size_t)n * sizeof *out);
    Staged b = ring_staging(g, p, dot->operands[1], LLVMBuildURem(g->b, it, ci32(g, p->plan.stages), ""));
    if (branch) {
        LLVMBasicBlockRef before = LLVMGetInsertBlock(g->b), merge = nvptx_begin_if(g, issue);
        nvptx_wgmma_issue_late(g, dot, words, &b, out, NULL);
        LLVMBasicBlockRef issued = LLVMGetInsertBlock(g->b);
        nvptx_end_if(g, merge);
        for (int k = 0; k < n; k++) {
            LLVMValueRef phi = LLVMBuildPhi(g->b, LLVMTypeOf(acc[k]), "");
            LLVMAddIncoming(phi, &acc[k], &before, 1);
            LLVMAddIncoming(phi, &out[k], &issued, 1);
            out[k] = phi;
        }
    } else
        nvptx_wgmma_issue_late(g, dot, words, &b, out, issue);
    nvptx_asm_void(g, "wgmma.commit_group.sync.aligned;");
    return out;
}

bool nvptx_pipeline_wants_producer(Gen *g, const BirOp *loop) {
    PipePlan pp;
    return plan(g, loop, &pp) && nvptx_loop_wants_producer(&pp);
}

bool nvptx_pipeline_ws_ring(Gen *g, NvptxWsRing *r) {
    PipePlan pp;
    if (!plan(g, g->s->ws_loop, &pp) || !pp.ws) return false; /* planned before the rings were laid out */
    ws_ring(g, &pp, g->s->ring_at, r);
    return true;
}

NvptxPipeline *nvptx_pipeline_begin(Gen *g, const BirOp *loop, LLVMValueRef **init, LLVMValueRef lb, LLVMValueRef ub,
                                    LLVMValueRef step) {
    const NvptxLoopSchedule *ls = nvptx_loop_schedule(g->s, loop);
    if (!ls) return NULL;
    PipePlan pp = *ls;
    NvptxPipeline *p = arena_alloc(&g->arena, sizeof *p);
    p->plan = pp;
    p->loop = loop;
    p->ring_at = g->s->ring_at;
    p->ub = ub, p->step = step;
    if (pp.ws) { /* the fills of iterations 0 .. lead-1, numbered on from the last run's */
        LLVMValueRef **env = init, iv = lb;
        for (int f = 0; f < pp.lead; f++) {
            release(g, loop, p, env, iv, runs(g, loop, lb, f, step, ub),
                    LLVMBuildAdd(g->b, g->ws_fills, ci32(g, f), ""));
            if (f + 1 < pp.lead) {
                env = next_env(g, loop, &pp, env, iv, pp.nread_ahead ? runs(g, loop, lb, f + 1, step, ub) : NULL);
                iv = LLVMBuildAdd(g->b, iv, step, "");
            }
        }
        return p;
    }
    /* prologue: iterations 0 .. ahead-1 */
    nvptx_barrier(g); /* earlier readers of the ring's shared memory are done */
    if (pp.tma) { /* made anew for each run of the loop; the first fill's barrier publishes them */
        LLVMBasicBlockRef made = nvptx_begin_if(g, is_thread0(g));
        for (int s = 0; s < pp.stages; s++) nvptx_mbarrier_init(g, mbarrier_at(g, &pp, p->ring_at, ci32(g, s)), 1);
        nvptx_asm_void(g, "fence.mbarrier_init.release.cluster;");
        nvptx_end_if(g, made);
    }
    LLVMValueRef **env = init, iv = lb;
    for (int s = 0; s < pp.ahead; s++) {
        (pp.tma ? fill : issue)(g, loop, &pp, p->ring_at, env, iv, ci32(g, s), runs(g, loop, lb, s, step, ub));
        if (s + 1 < pp.ahead) {
            env = next_env(g, loop, &pp, env, iv, pp.nread_ahead ? runs(g, loop, lb, s + 1, step, ub) : NULL);
            iv = LLVMBuildAdd(g->b, iv, step, "");
        }
    }
    return p;
}

void nvptx_pipeline_header(Gen *g, NvptxPipeline *p, LLVMBasicBlockRef pre) {
    p->it = LLVMBuildPhi(g->b, g->m->t.i32, "it");
    LLVMValueRef first = p->plan.ws ? g->ws_fills : ci32(g, 0);
    LLVMAddIncoming(p->it, &first, &pre, 1);
    if (!p->plan.overlap_after) return;
    /* the deferred dot's a-words, and whether it has an iteration's to issue: none before the first */
    p->nwords = nvptx_wgmma_a_words(g, p->plan.deferred_dot);
    p->words_phi = arena_alloc(&g->arena, (size_t)p->nwords * sizeof *p->words_phi);
    LLVMValueRef zero = ci32(g, 0), no = LLVMConstInt(g->m->t.i1, 0, 0);
    for (int k = 0; k < p->nwords; k++) {
        p->words_phi[k] = LLVMBuildPhi(g->b, g->m->t.i32, "");
        LLVMAddIncoming(p->words_phi[k], &zero, &pre, 1);
    }
    p->has_prev = LLVMBuildPhi(g->b, g->m->t.i1, "");
    LLVMAddIncoming(p->has_prev, &no, &pre, 1);
}

void nvptx_pipeline_exited(Gen *g, NvptxPipeline *p, LLVMBasicBlockRef from_header, LLVMBasicBlockRef from_latch) {
    if (!p->plan.ws) return;
    /* leaving from the header, iteration `it` did not run; from the latch
     * (the variable would overflow), it did */
    LLVMValueRef fills = LLVMBuildPhi(g->b, g->m->t.i32, "fills");
    LLVMAddIncoming(fills, &p->it, &from_header, 1);
    if (from_latch) LLVMAddIncoming(fills, &p->it_next, &from_latch, 1);
    g->ws_fills = fills;
}

/* Without a producer warp: the iteration pp->ahead ahead is copied into
 * the slot read pp->stages - pp->ahead iterations ago (by a dot done with
 * it: waited for, then the barrier here or fill's). */
static void refill(Gen *g, const BirOp *loop, NvptxPipeline *p, LLVMValueRef **carried, LLVMValueRef iv) {
    const PipePlan *pp = &p->plan;
    if (!pp->tma) nvptx_barrier(g); /* every thread is done with the slot about to be refilled */
    /* (loads read ahead are predicated on the iteration copied running) */
    LLVMValueRef live = pp->nread_ahead ? runs(g, loop, iv, pp->ahead, p->step, p->ub) : NULL;
    LLVMValueRef ahead = iv, **env = steps_ahead(g, loop, pp, carried, &ahead, p->step, pp->ahead, live);
    LLVMValueRef slot_ahead = LLVMBuildURem(g->b, LLVMBuildAdd(g->b, p->it, ci32(g, pp->ahead), ""), ci32(g, pp->stages), "");
    if (!live) live = runs(g, loop, iv, pp->ahead, p->step, p->ub);
    (pp->tma ? fill : issue)(g, loop, pp, p->ring_at, env, ahead, slot_ahead, live);
}

/* This iteration's tiles are in, for every thread, with `later` copy
 * groups (cp.async) issued after them. */
static void await_slot(Gen *g, NvptxPipeline *p, LLVMValueRef slot, int later) {
    const PipePlan *pp = &p->plan;
    if (pp->tma) {
        LLVMValueRef parity = LLVMBuildAnd(g->b, LLVMBuildUDiv(g->b, p->it, ci32(g, pp->stages), ""), ci32(g, 1), "");
        nvptx_mbarrier_wait(g, mbarrier_at(g, pp, p->ring_at, slot), parity);
        return;
    }
    wait_groups(g, later);
    if (g->s->plan->wgmma) /* cp.async wrote through the generic proxy; wgmma reads through the async one */
        nvptx_proxy_fence(g);
    nvptx_barrier(g); /* and everyone's */
}


void nvptx_pipeline_deferred_waited(Gen *g) {
    NvptxPipeline *p = g->deferred_due;
    g->deferred_due = NULL;
    if (p->plan.refill_late) refill(g, p->loop, p, p->carried, p->iv);
}

void nvptx_pipeline_iteration(Gen *g, const BirOp *loop, NvptxPipeline *p, LLVMValueRef **carried, LLVMValueRef iv) {
    const PipePlan *pp = &p->plan;
    int S = pp->stages;
    if (pp->deferred_dot) g->deferred_due = p;
    p->carried = carried, p->iv = iv; /* for the latch's release (ws) or a late refill */
    LLVMValueRef slot = LLVMBuildURem(g->b, p->it, ci32(g, S), "");
    if (pp->ws) {
        LLVMBasicBlockRef by_tma = nvptx_begin_if(g, LLVMBuildNot(g->b, nvptx_ws_wait(g, &g->s->ws_ring, p->it), ""));
        /* the producer left this iteration to the threads: copied now, as a fill's fallback */
        LLVMValueRef **saved = g->regs;
        g->regs = ahead_regs(g, loop, pp, carried, iv, NULL);
        copy_chunks(g, pp, p->ring_at, slot, LLVMConstInt(g->m->t.i1, 1, 0));
        g->regs = saved;
        call_void(g, "llvm.nvvm.cp.async.commit.group", NULL, 0);
        wait_groups(g, 0);
        nvptx_proxy_fence(g);
        nvptx_barrier(g);
        nvptx_end_if(g, by_tma);
    } else if (pp->refill_late) {
        /* the slot to refill is the one the last iteration's deferred dot
         * reads: refilled once the first dot has waited for it (wgmma.c) */
        await_slot(g, p, slot, pp->ahead - 1);
    } else {
        refill(g, loop, p, carried, iv);
        await_slot(g, p, slot, pp->ahead);
    }
    int64_t off = 0;
    for (int i = 0; i < pp->nloads; i++) {
        int v = pp->loads[i]->results[0];
        Staged *st = arena_alloc(&g->arena, sizeof *st);
        LLVMValueRef base = slot_at(g, pp, p->ring_at + off, slot);
        *st = nvptx_staging(g, v, base);
        g->staged[v] = st;
        if (pp->views[i] >= 0) { /* the transpose reads the same bytes, rows along its dimension 0 */
            Staged *sv = arena_alloc(&g->arena, sizeof *sv);
            *sv = nvptx_staging(g, pp->views[i], base);
            g->staged[pp->views[i]] = sv;
        }
        off += pp->tile_bytes[i];
    }
}

void nvptx_pipeline_issue_deferred(Gen *g) {
    NvptxPipeline *p = g->deferred_due;
    LLVMValueRef prev = LLVMBuildSub(g->b, p->it, ci32(g, 1), ""); /* (where there is none, nothing reads it) */
    p->deferred_out = issue_late(g, p, p->words_phi, g->regs[p->plan.deferred_arg], prev, p->has_prev, true);
}

void nvptx_pipeline_hold_deferred(Gen *g, const BirOp *op) {
    NvptxPipeline *p = g->deferred_due;
    int r = op->results[0];
    /* its a-words and accumulator, as it would be issued with: carried to the next iteration, where the
     * yield's value (the accumulator here) becomes its result once issued and waited for */
    p->words_next = arena_alloc(&g->arena, (size_t)p->nwords * sizeof *p->words_next);
    LLVMValueRef *acc = nvptx_wgmma_hold(g, op, 0, p->words_next);
    memcpy(nvptx_new_regs(g, r), acc, (size_t)nregs(g, r) * sizeof *acc);
}

void nvptx_pipeline_before(Gen *g, const BirOp *op) {
    NvptxPipeline *p = g->deferred_due;
    if (op != p->plan.deferred_wait_at) return;
    /* the deferred dot's group (the iteration before's), the last one running: its accumulators, tied
     * through the wait, are the carried value read from here on */
    nvptx_wgmma_wait(g, p->deferred_out, nregs(g, p->plan.deferred_arg), 0);
    g->regs[p->plan.deferred_arg] = p->deferred_out;
    if (p->plan.refill_late) refill(g, p->loop, p, p->carried, p->iv); /* into the slot that dot read */
}

void nvptx_pipeline_latch(Gen *g, const BirOp *loop, NvptxPipeline *p) {
    const PipePlan *pp = &p->plan;
    if (pp->ws) { /* this iteration's dots are done with the slot of fill it + lead - S */
        LLVMValueRef live = pp->nread_ahead ? runs(g, loop, p->iv, pp->lead, p->step, p->ub) : NULL;
        LLVMValueRef ahead = p->iv, **env = steps_ahead(g, loop, pp, p->carried, &ahead, p->step, pp->lead, live);
        release(g, loop, p, env, ahead, live ? live : runs(g, loop, p->iv, pp->lead, p->step, p->ub),
                LLVMBuildAdd(g->b, p->it, ci32(g, pp->lead), ""));
    }
    p->it_next = LLVMBuildAdd(g->b, p->it, ci32(g, 1), "");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(g->b);
    LLVMAddIncoming(p->it, &p->it_next, &latch, 1);
    if (!pp->overlap_after) return;
    for (int k = 0; k < p->nwords; k++) {
        LLVMValueRef next = p->words_next ? p->words_next[k] : ci32(g, 0);
        LLVMAddIncoming(p->words_phi[k], &next, &latch, 1);
    }
    LLVMValueRef yes = LLVMConstInt(g->m->t.i1, 1, 0);
    LLVMAddIncoming(p->has_prev, &yes, &latch, 1);
}

LLVMBasicBlockRef nvptx_pipeline_exit(Gen *g, NvptxPipeline *p, const BirOp *loop, LLVMBasicBlockRef exit,
                                      LLVMValueRef **vals, bool from_latch) {
    const BirOp *in_flight = p->plan.async_dot ? p->plan.async_dot : p->plan.deferred_dot;
    if (!in_flight) return exit;
    /* The dot's last group is waited for on the way out, in a block of its
     * own for each exit edge: a block ptxas sees start with the wait. (In
     * the exit block itself LLVM sinks the code after the loop above it, and
     * an instruction there before the wait makes ptxas serialize every
     * wgmma, C7514; a wait in the latch guarded by "last iteration" makes it
     * inject one on every back edge, C7517.) The accumulator leaving by this
     * edge is tied through the wait, so nothing after the loop reads it before. */
    const BirOp *y = bir_block_terminator(loop->regions[0]);
    LLVMBasicBlockRef at = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef drain = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "for.drain");
    LLVMPositionBuilderAtEnd(g->b, drain);
    for (int k = 0; k < y->noperands; k++) {
        if (y->operands[k] != in_flight->results[0]) continue;
        int n = nregs(g, loop->results[k]);
        LLVMValueRef *tied = arena_alloc(&g->arena, (size_t)n * sizeof *tied);
        memcpy(tied, vals[k], (size_t)n * sizeof *tied);
        if (p->plan.overlap_after) /* the last iteration's deferred dot, issued late: here (vals[k] is its
                                      accumulator), if an iteration ran (from the latch, the one that did) */
            tied = issue_late(g, p, from_latch ? p->words_next : p->words_phi, tied,
                              from_latch ? p->it : LLVMBuildSub(g->b, p->it, ci32(g, 1), ""),
                              from_latch ? LLVMConstInt(g->m->t.i1, 1, 0) : p->has_prev, false);
        nvptx_wgmma_wait(g, tied, n, 0);
        vals[k] = tied;
    }
    LLVMBuildBr(g->b, exit);
    LLVMPositionBuilderAtEnd(g->b, at);
    return drain;
}

void nvptx_pipeline_end(Gen *g, NvptxPipeline *p) {
    g->deferred_due = NULL;
    /* (a producer's ring numbers its fills on, g->ws_fills, and stops at the kernel's end) */
    if (!p->plan.tma)
        wait_groups(g, 0);
    else if (!p->plan.ws) { /* nobody waits on the mbarriers any more: their memory is free again */
        nvptx_barrier(g);
        LLVMBasicBlockRef freed = nvptx_begin_if(g, is_thread0(g));
        for (int s = 0; s < p->plan.stages; s++) nvptx_mbarrier_inval(g, mbarrier_at(g, &p->plan, p->ring_at, ci32(g, s)));
        nvptx_end_if(g, freed);
    }
    for (int i = 0; i < p->plan.nloads; i++) {
        g->staged[p->plan.loads[i]->results[0]] = NULL;
        if (p->plan.views[i] >= 0) g->staged[p->plan.views[i]] = NULL;
    }
}

bool nvptx_pipelined_load(Gen *g, const BirOp *op) {
    return op->code == BIR_LOAD && g->staged && g->staged[op->results[0]];
}
