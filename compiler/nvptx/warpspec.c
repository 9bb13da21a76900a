/* warpspec.c: warp specialization of a TMA-copied pipelined loop (sm_90a).
 * A warpgroup more than the program's warps is launched: the producer. It
 * runs no code of the program; one of its threads issues the loop's TMA
 * copies, so the consumer warps (the program's) never wait for each other
 * between iterations. The ring's fills are numbered on from the kernel's
 * entry, across runs of the loop (every program id of a persistent kernel:
 * persistent.c), and fill k goes to slot k % S:
 *
 *   consumers, before the loop: release the fills of its first `lead`
 *                           iterations that run
 *              iteration i: wait for slot i % S to be full (mbarrier);
 *                           the body; then, if iteration i + lead runs,
 *                           release its fill (lead = S, or S - 1 when a
 *                           dot leaves its wgmma group in flight and still
 *                           reads the slot of iteration i - 1): each warp
 *                           votes that the fill's masks are all true,
 *                           thread 0 adds its offsets' test and writes the
 *                           columns and "copy", and one lane a warp
 *                           arrives on the slot's "empty" mbarrier
 *              at the end:  release one more fill, written "stop" (every
 *                           return goes there: persistent.c)
 *   producer, fill k:       wait for slot k % S to be empty; stop if the
 *                           record says so; if every warp voted yes, TMA
 *                           copies completing on its "full" mbarrier, else
 *                           a plain arrive: the consumers see that and
 *                           copy iteration k themselves (cp.async, as the
 *                           other rings' fallback)
 *
 * Each slot has a full mbarrier (one arrival: the producer's, with the
 * bytes), an empty one (one arrival a consumer warp) and a record: the
 * vote, how the fill was copied, copy or stop, and the columns. A fill is
 * released only once the dots of the slot's previous fill are done with
 * it (their iteration's end, or the next one's wait; every earlier run of
 * the loop is over). The mbarriers order every access to a record: on the
 * consumers' side only lane 0 of a warp touches it, the lane that arrives
 * (racecheck orders a thread's accesses by its own arrive only). The
 * producer's stop is the program's end: the mbarriers are not needed again.
 * The consumers' own barriers count only their threads (nvptx_barrier).
 * The mbarriers and records, live from the entry to the end, sit above the
 * shared region the other ops use (kernel.c); the slots may share it, as
 * other rings do, while the loop is not running.
 *
 * Registers: the SM's are split evenly among a launch's warps, so the
 * producer's would be taken from the consumers; setmaxnreg (per warpgroup,
 * hence a producer warpgroup) gives all but PRODUCER_REGS of them back.
 *
 * A kernel gets a producer when it has exactly one pipelined loop, at its
 * top level (it runs once a program id), copied by TMA, whose dot leaves
 * its group in flight or waits alone to promote fp8 sums (see
 * nvptx_ws_refusal), and its warps are whole warpgroups, with room for one
 * more. */
#include "gen.h"

enum { PRODUCER_WARPS = 4, PRODUCER_REGS = NVPTX_WS_PRODUCER_REGS, SM_REGS = 65536 };
enum { SLOT_FULL = 0, SLOT_EMPTY = 8, SLOT_VOTE = 16, SLOT_TMA = 20, SLOT_LIVE = 24, SLOT_COLS = 28, SLOT_ROWS = 44,
       SLOT_EDGES = 60 };
_Static_assert(SLOT_COLS + 4 * 4 <= SLOT_ROWS && SLOT_ROWS + 4 * 4 <= SLOT_EDGES && SLOT_EDGES + 4 <= NVPTX_WS_SLOT_SYNC_BYTES,
               "a record holds four loads' columns and rows, and which take their edge maps");

/* ------------------------------------------------------------- planning */


static bool at_top_level(Gen *g, const BirOp *loop) {
    for (int i = 0; i < g->f->body->ops.len; i++)
        if (g->f->body->ops.items[i] == loop) return true;
    return false;
}

const char *nvptx_ws_refusal(Gen *g, const BirOp *loop, bool wanted, int pipelined_loops, int64_t stage_bytes) {
    int n = g->s->plan->num_warps;
    if (g->m->opt->no_warp_specialize) return "--no-warp-specialize";
    /* measured on the H100: with a dot in flight past the refill, a producer
     * gained 4-10% (matmul, docs/results/warp_specialize_ab_h100.md) and 1-5%
     * (attention's p V, attention_deferred_dot_ab_h100.md); attention whose
     * dots all waited within the iteration lost 1-4%; an fp8 matmul, whose
     * one dot waits in every iteration to add its k-block's sum, gained 3-10%
     * (while the consumers wait, the producer's copies go on: notebook,
     * 2026-11-27) */
    if (!wanted)
        return "no dot's group runs on past the loop's refill, nor waits alone to promote fp8 sums (a producer "
               "measured slower there)";
    if (n % 4 || n + PRODUCER_WARPS > 32) {
        return arena_printf(&g->arena, "its %d warps are not whole warpgroups with room for one more", n);
    }
    if (g->m->opt->min_blocks_per_sm > 1) {
        /* a program's registers are all setmaxnreg can move: with more programs an SM too few for the
         * consumers (ptxas may then fail, C7602) */
        return arena_printf(&g->arena, "its occupancy target is %d programs an SM (a producer is used at one)",
                            g->m->opt->min_blocks_per_sm);
    }
    if (!at_top_level(g, loop)) return "the loop is inside another statement (it must run once a program)";
    if (pipelined_loops != 1) return "the kernel has another pipelined loop";
    /* A producer kernel runs one program an SM (setmaxnreg moves a program's registers, .minnctapersm
     * 1). One consumer warpgroup whose ring leaves room for more programs an SM does better without:
     * registers cannot hold 128 threads below 2 (255 x 128 x 2 < 65536). Measured on the H100
     * (matmul, kernel time): 64 x 128 x 64 on 4 warps at 2048^3, 286 TFLOP/s with a producer (one
     * program an SM), 428 without (two); 128 x 64 x 64: 266 against 416; equal at 1024^3 (128
     * programs); rings of one program an SM (64 x 128 x 128, 128 x 128 x 64 on 4 warps) 9-16%
     * faster with one; attention on 4 warps within 1% either way (notebook, 2026-11-28). The ring
     * is sized before the rest of shared memory is laid out, so a kernel whose bulk reductions'
     * stagings take shared memory too keeps its producer (they may leave room for one program). */
    int stages = g->m->opt->num_stages >= 2 ? g->m->opt->num_stages : NVPTX_RING_MOST_STAGES;
    int programs = nvptx_programs_per_sm(g->m->arch, n, 0, stages * stage_bytes, NULL); /* registers unknown yet */
    bool bulk = false;
    for (int i = 0; i < g->s->natomics; i++) bulk |= g->s->atomics[i].bulk != NULL;
    if (n == 4 && programs >= 2 && !bulk)
        return arena_printf(&g->arena, "one consumer warpgroup, whose ring alone (%d stages of %lld bytes, at %s) leaves "
                            "room for %d programs an SM, and a producer holds the kernel to one", stages,
                            (long long)stage_bytes, g->m->opt->num_stages >= 2 ? "the stages asked for" : "its most stages",
                            programs);
    return NULL;
}


/* ------------------------------------------------------------- emission */

static int consumers(Gen *g) { return g->s->plan->num_warps; }

int nvptx_ws_launch_warps(Gen *g) { return consumers(g) + (g->s->ws_loop ? PRODUCER_WARPS : 0); }

/* The registers a consumer thread gets back (setmaxnreg.inc), or 0: no more
 * than it starts with. ptxas starts every thread with an equal share of
 * the SM's registers (one program an SM: .minnctapersm 1), in eights; those
 * of a program are all its warps may share (an inc beyond what the
 * producer's dec freed would wait forever). */
int nvptx_ws_consumer_regs(Gen *g) {
    int64_t start = SM_REGS / (32 * nvptx_ws_launch_warps(g)) / 8 * 8;
    if (start > 256) start = 256; /* the most a thread can have anyway */
    int64_t program = start * 32 * nvptx_ws_launch_warps(g);
    int64_t more = (program - 32 * PRODUCER_WARPS * PRODUCER_REGS) / (32 * consumers(g)) / 8 * 8;
    if (more > 256) more = 256;
    return more > start ? (int)more : 0;
}

static void set_max_regs(Gen *g, bool more, int regs) {
    LLVMValueRef n = ci32(g, regs);
    nvptx_call(g, more ? "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32" : "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
               g->m->t.void_t, &n, 1);
}

static LLVMValueRef sync_field(Gen *g, const NvptxWsRing *r, LLVMValueRef slot, int field) {
    return LLVMBuildAdd(g->b, ci32(g, r->sync_at + field), LLVMBuildMul(g->b, slot, ci32(g, NVPTX_WS_SLOT_SYNC_BYTES), ""), "");
}


static LLVMValueRef load_word(Gen *g, LLVMValueRef off) {
    LLVMValueRef v = LLVMBuildLoad2(g->b, g->m->t.i32, nvptx_smem_at(g, off), "");
    LLVMSetAlignment(v, 4);
    return v;
}

static void store_word(Gen *g, LLVMValueRef off, LLVMValueRef v) {
    LLVMSetAlignment(LLVMBuildStore(g->b, v, nvptx_smem_at(g, off)), 4);
}

static LLVMValueRef is_lane0(Gen *g) { return LLVMBuildICmp(g->b, LLVMIntEQ, g->lane, ci32(g, 0), ""); }

/* Named barrier 1 of every warp, producer included; not .aligned: the
 * producer's lanes reach it apart. */
static void all_warps_barrier(Gen *g) {
    LLVMValueRef args[2] = {ci32(g, 1), ci32(g, 32 * nvptx_ws_launch_warps(g))};
    nvptx_call(g, "llvm.nvvm.barrier.sync.cnt", g->m->t.void_t, args, 2);
}

/* Fill k's slot and phase. k counts in 32 bits and wraps cleanly only
 * where the stages are a power of two (a limit: runtime.md). */
static LLVMValueRef slot_of(Gen *g, const NvptxWsRing *r, LLVMValueRef k) {
    return LLVMBuildURem(g->b, k, ci32(g, r->stages), "");
}

static LLVMValueRef parity_of(Gen *g, const NvptxWsRing *r, LLVMValueRef k) {
    return LLVMBuildAnd(g->b, LLVMBuildUDiv(g->b, k, ci32(g, r->stages), ""), ci32(g, 1), "");
}

void nvptx_ws_producer(Gen *g, const NvptxWsRing *r) {
    LLVMBasicBlockRef work = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer");
    LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "consumers");
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntUGE, g->warp, ci32(g, consumers(g)), ""), work, rest);
    LLVMPositionBuilderAtEnd(g->b, work);
    int regs = nvptx_ws_consumer_regs(g);
    if (regs) set_max_regs(g, false, PRODUCER_REGS);
    all_warps_barrier(g); /* the consumers have made the mbarriers */
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.done");
    LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.fill");
    LLVMBasicBlockRef runs = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.runs");
    LLVMBasicBlockRef by_tma = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.tma");
    LLVMBasicBlockRef by_threads = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.fallback");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "producer.next");
    /* the producer's first thread works; the others are done */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntEQ, g->tid, ci32(g, 32 * consumers(g)), ""), loop, done);
    LLVMPositionBuilderAtEnd(g->b, loop);
    LLVMValueRef k = LLVMBuildPhi(g->b, g->m->t.i32, "fill"), zero = ci32(g, 0);
    LLVMAddIncoming(k, &zero, &pre, 1);
    LLVMValueRef slot = slot_of(g, r, k);
    LLVMValueRef full = sync_field(g, r, slot, SLOT_FULL);
    nvptx_mbarrier_wait(g, sync_field(g, r, slot, SLOT_EMPTY), parity_of(g, r, k));
    LLVMValueRef live = load_word(g, sync_field(g, r, slot, SLOT_LIVE));
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, live, zero, ""), runs, done); /* else: stop */
    LLVMPositionBuilderAtEnd(g->b, runs);
    LLVMValueRef vote = load_word(g, sync_field(g, r, slot, SLOT_VOTE));
    store_word(g, sync_field(g, r, slot, SLOT_VOTE), ci32(g, 1)); /* for the next fill's votes */
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntNE, vote, zero, ""), by_tma, by_threads);
    LLVMPositionBuilderAtEnd(g->b, by_tma);
    store_word(g, sync_field(g, r, slot, SLOT_TMA), ci32(g, 1));
    LLVMValueRef cols[NVPTX_MAX_TENSOR_MAPS], rows[NVPTX_MAX_TENSOR_MAPS]; /* read before the expect, which releases the record */
    LLVMValueRef edges = NULL;
    for (int l = 0; l < r->nloads; l++) {
        cols[l] = load_word(g, sync_field(g, r, slot, SLOT_COLS + 4 * l));
        rows[l] = r->bounded[l] ? load_word(g, sync_field(g, r, slot, SLOT_ROWS + 4 * l)) : zero;
        if (r->edge_map[l] >= 0 && !edges) edges = load_word(g, sync_field(g, r, slot, SLOT_EDGES));
    }
    nvptx_mbarrier_expect(g, full, r->fill_bytes);
    LLVMValueRef slot_base = LLVMBuildAdd(g->b, ci32(g, r->slots_at), LLVMBuildMul(g->b, slot, ci32(g, (int32_t)r->slot_bytes), ""), "");
    for (int l = 0; l < r->nloads; l++) {
        /* a load with an edge map: each map's copies under its own branch, each naming its map (a
         * selected address measured the same on the H100; the 9% then lost was thread 0's
         * coordinate work: notebook 2026-11-27) */
        LLVMBasicBlockRef merge = NULL;
        for (int which = 0; which < (r->edge_map[l] >= 0 ? 2 : 1); which++) {
            if (r->edge_map[l] >= 0) {
                LLVMValueRef bit = LLVMBuildAnd(g->b, edges, ci32(g, 1 << l), "");
                LLVMValueRef taken = LLVMBuildICmp(g->b, which ? LLVMIntNE : LLVMIntEQ, bit, zero, "");
                merge = nvptx_begin_if(g, taken);
            }
            LLVMValueRef map = nvptx_tma_map_address(g, which ? r->edge_map[l] : r->map[l]);
            for (int j = 0; j < r->boxes[l]; j++) {
                LLVMValueRef dst = LLVMBuildAdd(g->b, slot_base, ci32(g, r->tile_at[l] + j * r->box_bytes[l]), "");
                nvptx_tma_load(g, map, dst, LLVMBuildAdd(g->b, cols[l], ci32(g, j * r->box_inner[l]), ""), rows[l], full);
            }
            if (merge) nvptx_end_if(g, merge);
        }
    }
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, by_threads);
    store_word(g, sync_field(g, r, slot, SLOT_TMA), zero);
    nvptx_mbarrier_arrive(g, full);
    LLVMBuildBr(g->b, next);
    LLVMPositionBuilderAtEnd(g->b, next);
    LLVMValueRef k1 = LLVMBuildAdd(g->b, k, ci32(g, 1), "");
    LLVMAddIncoming(k, &k1, &next, 1);
    LLVMBuildBr(g->b, loop);
    LLVMPositionBuilderAtEnd(g->b, done); /* the program's end: nothing uses the ring after it */
    LLVMBuildRetVoid(g->b);
    LLVMPositionBuilderAtEnd(g->b, rest);
    if (regs) set_max_regs(g, true, regs);
}

/* Ping-pong (a ping_pong loop's dots, wgmma.c): consumer warpgroup w's turn
 * is named barrier NVPTX_WS_TURN_BARRIER + w, of two warpgroups' threads: its own,
 * waiting for it (bar.sync), and the one before it, passing it on
 * (bar.arrive) once it has issued its dot. The last warpgroup passes the
 * first turn before the loop. Every warpgroup issues the same dots in the
 * same order (a program's control flow is uniform), so the turns go round
 * in that order, across runs of the loop; the last pass is left unused at
 * the program's end. */

/* Warpgroup wg's turn: its named barrier and the threads it counts (two warpgroups'). */
static void turn_barrier(Gen *g, LLVMValueRef wg, LLVMValueRef args[2]) {
    args[0] = LLVMBuildAdd(g->b, wg, ci32(g, NVPTX_WS_TURN_BARRIER), "");
    args[1] = ci32(g, 2 * 128);
}

static void pass_turn_to(Gen *g, LLVMValueRef wg) {
    LLVMValueRef args[2];
    turn_barrier(g, wg, args);
    nvptx_asm_call(g, g->m->t.void_t, "bar.arrive $0, $1;", "r,r,~{memory}", args, 2, true);
}

void nvptx_ws_take_turn(Gen *g) {
    LLVMValueRef args[2];
    turn_barrier(g, nvptx_warpgroup(g), args);
    nvptx_call(g, "llvm.nvvm.barrier", g->m->t.void_t, args, 2);
}

void nvptx_ws_pass_turn(Gen *g) {
    LLVMValueRef next = LLVMBuildAdd(g->b, nvptx_warpgroup(g), ci32(g, 1), "");
    LLVMValueRef wrapped = LLVMBuildICmp(g->b, LLVMIntEQ, next, ci32(g, consumers(g) / 4), "");
    pass_turn_to(g, LLVMBuildSelect(g->b, wrapped, ci32(g, 0), next, ""));
}

void nvptx_ws_begin(Gen *g, const NvptxWsRing *r) {
    LLVMBasicBlockRef made = nvptx_begin_if(g, is_thread0(g));
    for (int s = 0; s < r->stages; s++) {
        nvptx_mbarrier_init(g, sync_field(g, r, ci32(g, s), SLOT_FULL), 1);
        nvptx_mbarrier_init(g, sync_field(g, r, ci32(g, s), SLOT_EMPTY), consumers(g));
        store_word(g, sync_field(g, r, ci32(g, s), SLOT_VOTE), ci32(g, 1));
    }
    nvptx_asm_void(g, "fence.mbarrier_init.release.cluster;");
    nvptx_end_if(g, made);
    all_warps_barrier(g); /* publishes them; the producer starts */
    const NvptxLoopSchedule *ls = nvptx_loop_schedule(g->s, g->s->ws_loop);
    if (ls && ls->ping_pong) { /* the first turn, warpgroup 0's */
        LLVMValueRef last = LLVMBuildICmp(g->b, LLVMIntEQ, nvptx_warpgroup(g), ci32(g, consumers(g) / 4 - 1), "");
        LLVMBasicBlockRef passed = nvptx_begin_if(g, last);
        pass_turn_to(g, ci32(g, 0));
        nvptx_end_if(g, passed);
    }
}

/* Lane 0 of each warp writes (warp 0's: the columns and whether to copy
 * or stop) and arrives on the empty mbarrier of fill `fill`'s slot; every
 * lane is done with the slot (wgmma waited, ldmatrix read). */
static void release_record(Gen *g, const NvptxWsRing *r, LLVMValueRef fill, LLVMValueRef copy, LLVMValueRef all,
                           const LLVMValueRef *cols, const LLVMValueRef *rows, const LLVMValueRef *edges) {
    LLVMValueRef slot = slot_of(g, r, fill);
    LLVMValueRef every_lane = ci32(g, -1);
    nvptx_call(g, "llvm.nvvm.bar.warp.sync", g->m->t.void_t, &every_lane, 1);
    LLVMBasicBlockRef lane0_done = nvptx_begin_if(g, is_lane0(g));
    LLVMBasicBlockRef t0_done = nvptx_begin_if(g, LLVMBuildICmp(g->b, LLVMIntEQ, g->warp, ci32(g, 0), ""));
    store_word(g, sync_field(g, r, slot, SLOT_LIVE), copy);
    LLVMValueRef edge_bits = NULL;
    for (int l = 0; cols && l < r->nloads; l++) {
        store_word(g, sync_field(g, r, slot, SLOT_COLS + 4 * l), cols[l]);
        if (r->bounded[l]) store_word(g, sync_field(g, r, slot, SLOT_ROWS + 4 * l), rows[l]);
        if (r->edge_map[l] < 0) continue;
        LLVMValueRef bit = LLVMBuildSelect(g->b, edges[l], ci32(g, 1 << l), ci32(g, 0), "");
        edge_bits = edge_bits ? LLVMBuildOr(g->b, edge_bits, bit, "") : bit;
    }
    if (edge_bits) store_word(g, sync_field(g, r, slot, SLOT_EDGES), edge_bits);
    nvptx_end_if(g, t0_done);
    LLVMBasicBlockRef no_done = nvptx_begin_if(g, LLVMBuildNot(g->b, all, ""));
    store_word(g, sync_field(g, r, slot, SLOT_VOTE), ci32(g, 0));
    nvptx_end_if(g, no_done);
    nvptx_mbarrier_arrive(g, sync_field(g, r, slot, SLOT_EMPTY)); /* a release: the stores above come first */
    nvptx_end_if(g, lane0_done);
}

void nvptx_ws_release(Gen *g, const NvptxWsRing *r, LLVMValueRef fill, LLVMValueRef vote, const LLVMValueRef *cols,
                      const LLVMValueRef *rows, const LLVMValueRef *edges) {
    LLVMValueRef all_args[2] = {ci32(g, -1), vote};
    LLVMValueRef all = nvptx_call(g, "llvm.nvvm.vote.all.sync", g->m->t.i1, all_args, 2);
    release_record(g, r, fill, ci32(g, 1), all, cols, rows, edges);
}

LLVMValueRef nvptx_ws_wait(Gen *g, const NvptxWsRing *r, LLVMValueRef it) {
    LLVMValueRef slot = slot_of(g, r, it);
    nvptx_mbarrier_wait(g, sync_field(g, r, slot, SLOT_FULL), parity_of(g, r, it));
    /* lane 0 reads how the slot was filled (see the top); a shuffle tells the others */
    LLVMBasicBlockRef from = LLVMGetInsertBlock(g->b);
    LLVMBasicBlockRef read = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "ws.read");
    LLVMBasicBlockRef merge = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "ws.read.end");
    LLVMBuildCondBr(g->b, is_lane0(g), read, merge);
    LLVMPositionBuilderAtEnd(g->b, read);
    LLVMValueRef how = load_word(g, sync_field(g, r, slot, SLOT_TMA));
    LLVMBuildBr(g->b, merge);
    LLVMPositionBuilderAtEnd(g->b, merge);
    LLVMValueRef phi = LLVMBuildPhi(g->b, g->m->t.i32, ""), zero = ci32(g, 0);
    LLVMAddIncoming(phi, &zero, &from, 1);
    LLVMAddIncoming(phi, &how, &read, 1);
    LLVMValueRef args[4] = {ci32(g, -1), phi, zero, ci32(g, 31)};
    LLVMValueRef all = nvptx_call(g, "llvm.nvvm.shfl.sync.idx.i32", g->m->t.i32, args, 4);
    return LLVMBuildICmp(g->b, LLVMIntNE, all, zero, "");
}

void nvptx_ws_end(Gen *g, const NvptxWsRing *r, LLVMValueRef fill) {
    release_record(g, r, fill, ci32(g, 0), LLVMConstInt(g->m->t.i1, 1, 0), NULL, NULL, NULL);
}
