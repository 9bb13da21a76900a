/* convert.c: a value's elements in another layout. Every op asks for its
 * operands in the layout it computes in (an elementwise op in its result's,
 * a store in its pointers'); the value comes, cheapest first:
 *   - from the thread's own registers, when its layout holds the same
 *     elements in the same threads (nvptx_layout_local_map): no code;
 *   - recomputed in the new layout from operands that are themselves local
 *     or recomputable: arange and scalars, and the shape and elementwise ops
 *     over them (index arithmetic and masks, or a row maximum broadcast over
 *     the columns of the accumulator it was taken from);
 *   - through shared memory: every thread writes what it holds, barrier,
 *     every thread reads what it needs (padded rows, vector accesses: below). */
#include "gen.h"

static Projection identity(void) { return (Projection){{0, 1}}; }

/* The projection of an op's operand x from the coordinates of the op's
 * result r, itself projected by p from the coordinates of a use. */
static Projection through(const BirOp *op, BlkType xt, BlkType rt, Projection p) {
    Projection q = {{-1, -1}};
    switch (op->code) {
    case BIR_EXPAND_DIMS:
        for (int d = 0, k = 0; d < rt.rank; d++)
            if (d != op->attr) q.from[k++] = p.from[d];
        return q;
    case BIR_BROADCAST:
        for (int d = 0; d < xt.rank; d++) q.from[d] = xt.shape[d] == 1 && rt.shape[d] > 1 ? -1 : p.from[d];
        return q;
    case BIR_TRANS:
        q.from[0] = p.from[1], q.from[1] = p.from[0];
        return q;
    default:
        return p;
    }
}

static bool recomputable(Gen *g, int v, const Layout *to, Projection p, int depth) {
    BlkType t = vtype(g, v);
    if (t.rank == 0) return true;
    if (nvptx_layout_local_map(&g->s->plan->layouts[v], to, p, NULL)) return true;
    const BirOp *op = g->f->values[v].def;
    if (!op || depth > 64) return false;
    switch (op->code) {
    case BIR_ARANGE: case BIR_SPLAT: return true;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        return recomputable(g, op->operands[0], to, through(op, vtype(g, op->operands[0]), t, p), depth + 1);
    default:
        if (!bir_is_elementwise(op->code) || op->code == BIR_RAND || op->code == BIR_RANDINT) return false;
        for (int i = 0; i < op->noperands; i++)
            if (!recomputable(g, op->operands[i], to, p, depth + 1)) return false;
        return true;
    }
}

/* The coordinate along v's dimension d for register r of `to`. */
static LLVMValueRef projected_coord(Gen *g, const Layout *to, Projection p, int d, int r) {
    return p.from[d] < 0 ? ci32(g, 0) : nvptx_coord(g, to, p.from[d], r);
}

/* The elements one conversion has worked out, per value and projection:
 * index arithmetic reuses subexpressions (c + c), which a walk per element
 * would make again for every path to them, exponentially many. */
typedef struct Worked {
    int v;
    Projection p;
    bool local;        /* v's registers hold them (map: which) */
    int32_t *map;
    LLVMValueRef *regs; /* [to->nregs], NULL until made */
    struct Worked *next;
} Worked;

static Worked *worked(Gen *g, Worked **memo, int v, const Layout *to, Projection p) {
    for (Worked *w = *memo; w; w = w->next)
        if (w->v == v && memcmp(&w->p, &p, sizeof p) == 0) return w;
    Worked *w = arena_alloc(&g->arena, sizeof *w);
    w->v = v, w->p = p, w->next = *memo;
    w->map = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *w->map);
    w->local = g->regs[v] && nvptx_layout_local_map(&g->s->plan->layouts[v], to, p, w->map);
    w->regs = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *w->regs);
    *memo = w;
    return w;
}

/* v's element for register r of `to` (recomputable(v) holds). */
static LLVMValueRef element(Gen *g, Worked **memo, int v, const Layout *to, Projection p, int r) {
    BlkType t = vtype(g, v);
    if (t.rank == 0) return g->regs[v][0];
    Worked *w = worked(g, memo, v, to, p);
    if (w->local) return g->regs[v][w->map[r]];
    if (w->regs[r]) return w->regs[r];
    const BirOp *op = g->f->values[v].def;
    LLVMValueRef e;
    switch (op->code) {
    case BIR_ARANGE: e = LLVMBuildAdd(g->b, projected_coord(g, to, p, 0, r), ci32(g, op->attr), ""); break;
    case BIR_SPLAT: e = g->regs[op->operands[0]][0]; break;
    case BIR_EXPAND_DIMS: case BIR_BROADCAST: case BIR_TRANS:
        e = element(g, memo, op->operands[0], to, through(op, vtype(g, op->operands[0]), t, p), r);
        break;
    default: {
        LLVMValueRef x[3];
        for (int i = 0; i < op->noperands; i++) x[i] = element(g, memo, op->operands[i], to, p, r);
        e = nvptx_elementwise(g, op, x);
    }
    }
    return w->regs[r] = e;
}

static int mem_bytes(DType d) { return d == DT_PTR ? 8 : dtype_bytes(d); }

int64_t nvptx_smem_value_bytes(Gen *g, int v) {
    BlkType t = vtype(g, v);
    return type_numel(t) * mem_bytes(t.dtype);
}

void nvptx_smem_write(Gen *g, DType d, int64_t smem_at, LLVMValueRef index, LLVMValueRef v) {
    LLVMBuildStore(g->b, to_mem(g, v, d), nvptx_smem_ptr(g, smem_at, index, mem_bytes(d)));
}

LLVMValueRef nvptx_smem_read(Gen *g, DType d, int64_t smem_at, LLVMValueRef index) {
    LLVMTypeRef mt = d == DT_PTR ? g->m->t.gptr : mem_ty(g, d);
    return from_mem(g, LLVMBuildLoad2(g->b, mt, nvptx_smem_ptr(g, smem_at, index, mem_bytes(d)), ""), d);
}

/* A conversion through shared memory stages the value row-major, each row
 * of a 2-D value padded by 16 bytes when it is a multiple of 32 bytes long:
 * consecutive rows then start 4 banks apart, so the 8 rows a warp of an
 * accumulator writes at once (4 lanes a row) fall into different banks
 * rather than all into the same 4 (an 8-way conflict at 256 f16 a row). */
static int64_t staged_pitch(BlkType t) {
    int64_t n = t.shape[t.rank - 1], es = mem_bytes(t.dtype);
    return t.rank == 2 && n * es % 32 == 0 ? n + 16 / es : n;
}

static int64_t staged_bytes(BlkType t) {
    return (t.rank == 2 ? t.shape[0] * staged_pitch(t) : type_numel(t)) * mem_bytes(t.dtype);
}

static LLVMValueRef staged_index(Gen *g, BlkType t, int64_t pitch, LLVMValueRef *c) {
    if (t.rank == 1) return c[0];
    return LLVMBuildAdd(g->b, LLVMBuildMul(g->b, c[0], ci32(g, (int32_t)pitch), ""), c[1], "");
}

/* How many registers of l, from one whose low bits are clear, hold
 * consecutive elements of a row of t (coordinates through p) at an index
 * that is a multiple of their count, so they move as one access of up to
 * 16 bytes: l's lowest register bits step along the row by 1, 2, 4, ...,
 * and no other bit of the layout moves within such a run. */
static int staged_run(const Layout *l, Projection p, BlkType t, int64_t pitch, int64_t smem_at) {
    int last = t.rank - 1, e = p.from[last], es = mem_bytes(t.dtype);
    if (e < 0 || t.dtype == DT_PTR) return 1;
    int n = 0;
    while (n < l->nreg_bits && l->reg[n][e] == (1 << n) && (1 << (n + 1)) * es <= 16) {
        bool along_row = true;
        for (int d = 0; d < last; d++) along_row &= p.from[d] < 0 || l->reg[n][p.from[d]] == 0;
        if (!along_row) break;
        n++;
    }
    /* where the runs start along the row: the other bits' steps, and the pitch */
    int64_t starts = pitch;
    for (int b = n; b < l->nreg_bits; b++) starts |= l->reg[b][e];
    for (int b = 0; b < LAYOUT_LANE_BITS; b++) starts |= l->lane[b][e];
    for (int b = 0; b < l->nwarp_bits; b++) starts |= l->warp[b][e];
    int w = 1 << n;
    while (w > 1 && ((starts & (w - 1)) || smem_at % (w * es))) w /= 2;
    return w;
}

/* Every thread writes the elements it holds, vectors where its registers
 * run along a row, rows `pitch` elements apart. */
static void write_staged(Gen *g, int v, int64_t smem_at, int64_t pitch) {
    const Layout *from = &g->s->plan->layouts[v];
    BlkType t = vtype(g, v);
    int32_t copies = nvptx_layout_copy_regs(from);
    int w = staged_run(from, identity(), t, pitch, smem_at);
    nvptx_barrier(g); /* earlier readers of the shared region are done */
    for (int r = 0; r < from->nregs; r += w) {
        if (r & copies) continue;
        LLVMValueRef c[BLK_MAX_RANK];
        for (int k = 0; k < t.rank; k++) c[k] = nvptx_coord(g, from, k, r);
        LLVMValueRef index = staged_index(g, t, pitch, c);
        if (w == 1) nvptx_smem_write(g, t.dtype, smem_at, index, g->regs[v][r]);
        else nvptx_vector_store(g, nvptx_smem_ptr(g, smem_at, index, mem_bytes(t.dtype)), g->regs[v] + r, w, t.dtype);
    }
    nvptx_barrier(g);
}

int64_t nvptx_convert_smem_bytes(Gen *g, int v, const Layout *to, Projection p) {
    return recomputable(g, v, to, p, 0) ? 0 : staged_bytes(vtype(g, v));
}

LLVMValueRef nvptx_row_major(Gen *g, BlkType t, LLVMValueRef *c) {
    return staged_index(g, t, t.rank == 2 ? t.shape[1] : 1, c);
}

void nvptx_smem_write_value(Gen *g, int v, int64_t smem_at) {
    BlkType t = vtype(g, v);
    write_staged(g, v, smem_at, t.shape[t.rank - 1]);
}

LLVMValueRef *nvptx_convert(Gen *g, int v, const Layout *to, Projection p, int64_t smem_at) {
    LLVMValueRef *out = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *out);
    BlkType t = vtype(g, v);
    if (recomputable(g, v, to, p, 0)) {
        Worked *memo = NULL;
        for (int r = 0; r < to->nregs; r++) out[r] = element(g, &memo, v, to, p, r);
        return out;
    }
    int64_t pitch = staged_pitch(t);
    write_staged(g, v, smem_at, pitch);
    int w = staged_run(to, p, t, pitch, smem_at);
    for (int r = 0; r < to->nregs; r += w) {
        LLVMValueRef c[BLK_MAX_RANK];
        for (int k = 0; k < t.rank; k++) c[k] = projected_coord(g, to, p, k, r);
        LLVMValueRef index = staged_index(g, t, pitch, c);
        if (w == 1) out[r] = nvptx_smem_read(g, t.dtype, smem_at, index);
        else nvptx_vector_load(g, nvptx_smem_ptr(g, smem_at, index, mem_bytes(t.dtype)), w, t.dtype, out + r);
    }
    return out;
}

LLVMValueRef *nvptx_operand(Gen *g, int v, const Layout *to, int64_t smem_at) {
    if (to->rank == 0) return g->regs[v]; /* a scalar where a scalar is wanted */
    if (vtype(g, v).rank == 0) {
        LLVMValueRef *out = arena_alloc(&g->arena, (size_t)to->nregs * sizeof *out);
        for (int r = 0; r < to->nregs; r++) out[r] = g->regs[v][0];
        return out;
    }
    if (nvptx_layout_equal(&g->s->plan->layouts[v], to)) return g->regs[v];
    return nvptx_convert(g, v, to, identity(), smem_at);
}

int64_t nvptx_operand_smem_bytes(Gen *g, int v, const Layout *to) {
    if (to->rank == 0 || vtype(g, v).rank == 0 || nvptx_layout_equal(&g->s->plan->layouts[v], to)) return 0;
    return nvptx_convert_smem_bytes(g, v, to, identity());
}

Projection nvptx_shape_projection(Gen *g, const BirOp *op) {
    return through(op, vtype(g, op->operands[0]), vtype(g, op->results[0]), identity());
}
