/* carried.c: loop-carried blocks kept in shared memory when the registers
 * would not hold them.
 *
 * A for loop's carried blocks (accumulators like layer norm's dW and dB sums)
 * and the blocks made before it for its body (the weights) stay in registers
 * across every iteration. When the estimated demand inside the loop is over
 * what a thread may have (65536 registers / threads, at most 255), ptxas
 * spills to local memory, which costs far more than shared memory. Then the
 * largest of those blocks move to shared memory: each thread keeps its own
 * elements there (its registers' slots, so no other thread touches them and
 * no barrier is needed), loads them where the body first uses them and
 * stores a carried block's new value at the end of each iteration.
 *
 * The estimate counts, at each op, the 32-bit registers of the block values
 * live there that hold data (anything not recomputed from arange and
 * scalars; addresses and masks mostly fold into offsets), with a value used
 * inside a loop but defined before it live through the whole loop. */
#include "gen.h"

typedef struct {
    Gen *g;
    int *end;          /* per op number: the number of the last op inside it (its own if none) */
    int *def, *last;   /* per value: its def's number, its last use's */
    char *data;        /* per value: holds data (0 unknown, 1 no, 2 yes) */
    const BirOp **ops; /* by number */
    int nops;
} Demand;

/* Numbers the ops in program order; a region's block arguments are defined
 * at the op that owns it, its results at its last op. */
static void number(Demand *D, const BirBlock *b, int *next) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        int me = (*next)++;
        D->ops[me] = op;
        for (int r = 0; r < op->nregions; r++) {
            for (int a = 0; a < op->regions[r]->nargs; a++) D->def[op->regions[r]->args[a]] = me;
            number(D, op->regions[r], next);
        }
        D->end[me] = *next - 1;
        for (int k = 0; k < op->nresults; k++) D->def[op->results[k]] = D->end[me]; /* when the op is done */
    }
}

/* Last uses; a use inside loops that v was defined outside of lasts until
 * the outermost such loop ends. loops: the numbers of the enclosing loops. */
static void uses(Demand *D, const BirBlock *b, int *next, const int *loops, int nloops) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        int me = (*next)++;
        for (int k = 0; k < op->noperands; k++) {
            int v = op->operands[k];
            if (v < 0) continue;
            int until = me;
            for (int l = 0; l < nloops; l++)
                if (D->def[v] < loops[l]) { until = D->end[loops[l]]; break; }
            if (until > D->last[v]) D->last[v] = until;
        }
        int inner[64];
        int n = nloops < 63 ? nloops : 63;
        for (int l = 0; l < n; l++) inner[l] = loops[l];
        bool loop = op->code == BIR_FOR || op->code == BIR_WHILE;
        if (loop) inner[n++] = me;
        for (int r = 0; r < op->nregions; r++) uses(D, op->regions[r], next, inner, n);
    }
}

static bool holds_data(Demand *D, int v) {
    if (D->data[v]) return D->data[v] == 2;
    const BirOp *op = D->g->f->values[v].def;
    bool data = true;
    if (op && (op->code == BIR_ARANGE || op->code == BIR_CONST || op->code == BIR_SPLAT)) data = false;
    else if (op && (bir_is_elementwise(op->code) || op->code == BIR_EXPAND_DIMS || op->code == BIR_BROADCAST) &&
             op->code != BIR_RAND && op->code != BIR_RANDINT) {
        D->data[v] = 1; /* no cycles in SSA; provisional */
        data = false;
        for (int i = 0; i < op->noperands && !data; i++)
            if (op->operands[i] >= 0 && holds_data(D, op->operands[i])) data = true;
    }
    D->data[v] = data ? 2 : 1;
    return data;
}

static int64_t words(Gen *g, int v) {
    BlkType t = vtype(g, v);
    if (!t.rank) return 0; /* scalars: a few registers, not counted */
    return (int64_t)nregs(g, v) * (dtype_bits(t.dtype) > 32 ? 2 : 1);
}

/* The most registers live at once within [from, to], with `minus` (values
 * moved to shared memory) not counted. */
static int64_t peak(Demand *D, int from, int to, const char *minus) {
    int64_t *delta = calloc((size_t)D->nops + 2, sizeof *delta);
    if (!delta) return 0;
    for (int v = 0; v < D->g->f->nvalues; v++) {
        if (D->last[v] <= D->def[v] || minus[v] || !words(D->g, v) || !holds_data(D, v)) continue;
        int a = D->def[v] + 1, b = D->last[v]; /* live from after its def up to its last use */
        if (b < from || a > to) continue;
        delta[a > from ? a : from] += words(D->g, v);
        delta[(b < to ? b : to) + 1] -= words(D->g, v);
    }
    int64_t live = 0, most = 0;
    for (int p = from; p <= to; p++) {
        live += delta[p];
        if (live > most) most = live;
    }
    free(delta);
    return most;
}

/* A carried block a loop may keep in shared memory: 16 bits or wider. */
static bool movable(Gen *g, int v) {
    BlkType t = vtype(g, v);
    return t.rank && dtype_bits(t.dtype) >= 16;
}

int nvptx_carried_plan(Gen *g, int64_t free_bytes, NvptxKeptBlock *kept) {
    const BirFunction *f = g->f;
    int nkept = 0;
    int64_t used = 0;
    Demand D = {.g = g, .nops = nvptx_ops_in(f->body, BIR_OPCODE_COUNT)};
    D.end = arena_alloc(&g->arena, (size_t)(D.nops + 1) * sizeof *D.end);
    D.ops = arena_alloc(&g->arena, (size_t)(D.nops + 1) * sizeof *D.ops);
    D.def = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *D.def);
    D.last = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *D.last);
    D.data = arena_alloc(&g->arena, (size_t)(f->nvalues + 1) * sizeof *D.data);
    char *minus = arena_alloc(&g->arena, (size_t)(f->nvalues + 1));
    for (int v = 0; v <= f->nvalues; v++) D.def[v] = -1, D.last[v] = -1;
    int next = 0;
    number(&D, f->body, &next);
    next = 0;
    uses(&D, f->body, &next, NULL, 0);
    int64_t threads = 32 * (int64_t)g->s->plan->num_warps, cap = 65536 / threads < 255 ? 65536 / threads : 255;
    for (int n = 0; n < D.nops && !g->s->plan->ndots; n++) { /* dot loops keep their pipelines and registers */
        const BirOp *op = D.ops[n];
        if (op->code != BIR_FOR) continue;
        int64_t demand = peak(&D, n, D.end[n], minus);
        while (demand > cap) {
            /* the largest block held through the loop: values made before it and used
             * only in it first (a load a trip), then carried blocks (a load and a store) */
            int best = -1;
            bool best_carried = false;
            for (int v = 0; v < f->nvalues; v++)
                if (!minus[v] && movable(g, v) && holds_data(&D, v) && D.def[v] < n && D.last[v] > n &&
                    D.last[v] <= D.end[n] && (best < 0 || words(g, v) > words(g, best)))
                    best = v;
            for (int i = 0; i < op->nresults && best < 0; i++) {
                int v = op->results[i];
                if (!minus[v] && movable(g, v) && (best < 0 || words(g, v) > words(g, best))) best = v, best_carried = true;
            }
            if (best < 0) break;
            int64_t bytes = (int64_t)nregs(g, best) * threads * (dtype_bits(vtype(g, best).dtype) / 8);
            if (used + bytes > free_bytes) break;
            NvptxKeptBlock *k = &kept[nkept++];
            *k = (NvptxKeptBlock){.value = best, .loop = op, .at = used, .bytes = bytes, .carried = best_carried,
                                  .demand = demand, .cap = cap};
            used += bytes;
            minus[best] = 1;
            if (best_carried) { /* and the body's views of it: its argument and the value it yields */
                int i = 0;
                while (op->results[i] != best) i++;
                minus[op->regions[0]->args[1 + i]] = 1;
                const BirOp *y = bir_block_terminator(op->regions[0]);
                if (y) minus[y->operands[i]] = 1;
            }
            demand = k->without = peak(&D, n, D.end[n], minus);
        }
    }
    return nkept;
}

void nvptx_carried_enter(Gen *g, const BirOp *loop) {
    for (int v = 0; v < g->f->nvalues; v++) {
        if (g->s->kept_in[v] != loop || g->f->values[v].def == loop) continue;
        LLVMValueRef *regs = g->regs[v];
        nvptx_carried_store(g, v, regs);
        g->lazy.item[g->lazy.n++] = (LazyCarried){v, v, regs};
        g->regs[v] = NULL; /* loaded in the body where first used */
    }
}

void nvptx_carried_leave(Gen *g, int nlazy) {
    for (int i = nlazy; i < g->lazy.n; i++)
        if (g->lazy.item[i].saved) g->regs[g->lazy.item[i].value] = g->lazy.item[i].saved;
    g->lazy.n = nlazy;
}

/* Thread-private slots: register k of thread t at ((k / w) * threads + t) * w + k % w
 * elements from the value's base, w elements making 16 bytes, so a warp's
 * accesses are consecutive 16-byte pieces (no bank conflicts). */
static int slot_width(Gen *g, int v) {
    int w = 16 / (dtype_bits(vtype(g, v).dtype) / 8);
    return nregs(g, v) < w ? nregs(g, v) : w;
}

static LLVMValueRef slot_ptr(Gen *g, int v, int k) {
    int w = slot_width(g, v);
    int64_t threads = 32 * (int64_t)g->s->plan->num_warps;
    LLVMValueRef slot = LLVMBuildAdd(g->b, ci32(g, (int32_t)((k / w) * threads)), g->tid, "");
    return nvptx_smem_ptr(g, g->s->carried_base + g->s->carried_at[v], slot, w * dtype_bits(vtype(g, v).dtype) / 8);
}

void nvptx_carried_store(Gen *g, int result, LLVMValueRef *vals) {
    int w = slot_width(g, result);
    for (int k = 0; k < nregs(g, result); k += w)
        nvptx_vector_store(g, slot_ptr(g, result, k), vals + k, w, vtype(g, result).dtype);
}

void nvptx_carried_load(Gen *g, int v, int result) {
    int w = slot_width(g, result);
    LLVMValueRef *out = nvptx_new_regs(g, v);
    for (int k = 0; k < nregs(g, result); k += w)
        nvptx_vector_load(g, slot_ptr(g, result, k), w, vtype(g, result).dtype, out + k);
}

/* Does op (or an op inside it) use v? */
static bool op_uses(const BirOp *op, int v) {
    for (int i = 0; i < op->noperands; i++)
        if (op->operands[i] == v) return true;
    for (int r = 0; r < op->nregions; r++)
        for (int i = 0; i < op->regions[r]->ops.len; i++)
            if (op_uses(op->regions[r]->ops.items[i], v)) return true;
    return false;
}

void nvptx_carried_load_uses(Gen *g, const BirOp *op) {
    for (int i = 0; i < g->lazy.n; i++) {
        int v = g->lazy.item[i].value;
        if (!g->regs[v] && op_uses(op, v)) nvptx_carried_load(g, v, g->lazy.item[i].result);
    }
}
