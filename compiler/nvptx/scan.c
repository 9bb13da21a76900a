/* scan.c: the ops that combine elements along an axis in an order the
 * language defines (docs/language.md §6), in shared memory, so the GPU's
 * floats equal the interpreter's bit for bit:
 *   - cumsum, cumprod and associative_scan: log2(n) steps, step d combining
 *     each element with the one d before it (Hillis and Steele);
 *   - reduce with a combine function: a pairwise tree, step d combining
 *     element k (a multiple of 2d) with k + d.
 * Every thread keeps its elements' partials (n values each for an op over
 * n blocks); each step reads them all, then a barrier, then writes them
 * all. Copies of an element write the same value. A combine function is
 * the op's region, emitted on scalars at each use. */
#include "gen.h"

enum { MAX_VALUES = 8 }; /* sema's MAX_COMBINED */

static int elem_bytes(DType d) { return d == DT_I1 ? 1 : dtype_bytes(d); }

/* The shared memory of the op's values, one array per value, row-major. */
int64_t nvptx_scan_smem_bytes(Gen *g, const BirOp *op) {
    int64_t total = 0;
    for (int i = 0; i < op->noperands; i++) {
        BlkType t = vtype(g, op->operands[i]);
        total += type_numel(t) * elem_bytes(t.dtype);
    }
    return total;
}

/* left (+) right: cumsum's add, cumprod's multiply, or the op's region. */
static bool combine(Gen *g, const BirOp *op, LLVMValueRef *left, LLVMValueRef *right, LLVMValueRef *out) {
    if (op->code == BIR_CUMSUM || op->code == BIR_CUMPROD) {
        bool fl = dtype_is_float(vtype(g, op->operands[0]).dtype), mul = op->code == BIR_CUMPROD;
        out[0] = mul ? (fl ? LLVMBuildFMul(g->b, left[0], right[0], "") : LLVMBuildMul(g->b, left[0], right[0], ""))
                     : (fl ? LLVMBuildFAdd(g->b, left[0], right[0], "") : LLVMBuildAdd(g->b, left[0], right[0], ""));
        return true;
    }
    const BirBlock *c = op->regions[0];
    int n = op->noperands;
    for (int i = 0; i < n; i++) {
        nvptx_new_regs(g, c->args[i])[0] = left[i];
        nvptx_new_regs(g, c->args[n + i])[0] = right[i];
    }
    if (!nvptx_gen_block(g, c)) return false;
    const BirOp *y = bir_block_terminator(c);
    for (int i = 0; i < n; i++) out[i] = g->regs[y->operands[i]][0];
    return true;
}

typedef struct {
    int n;                      /* values per element */
    DType d[MAX_VALUES];
    int64_t at[MAX_VALUES];     /* each value's array in the shared region */
    LLVMValueRef *v[MAX_VALUES]; /* each value's partials, per register of l */
    const Layout *l;
    LLVMValueRef *index, *along; /* per register: row-major index, coordinate along the axis */
    int32_t len, stride;         /* the axis' size, and its stride in the row-major index */
} Partials;

/* The op's operands in layout l, their indices, and their arrays. */
static Partials partials(Gen *g, const BirOp *op, const Layout *l, int64_t slot) {
    Partials P = {.n = op->noperands, .l = l};
    int axis = (int)op->attr, nr = l->nregs;
    BlkType t = vtype(g, op->operands[0]);
    P.len = t.shape[axis];
    P.stride = t.rank == 2 && axis == 0 ? t.shape[1] : 1;
    int64_t at = slot;
    for (int i = 0; i < P.n; i++) {
        int x = op->operands[i];
        P.d[i] = vtype(g, x).dtype;
        P.at[i] = at;
        at += type_numel(t) * elem_bytes(P.d[i]);
        LLVMValueRef *src = nvptx_operand(g, x, l, slot);
        P.v[i] = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
        memcpy(P.v[i], src, (size_t)nr * sizeof(LLVMValueRef));
    }
    P.index = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
    P.along = arena_alloc(&g->arena, (size_t)nr * sizeof(LLVMValueRef));
    for (int k = 0; k < nr; k++) {
        P.along[k] = nvptx_coord(g, l, axis, k);
        P.index[k] = t.rank == 2 ? LLVMBuildAdd(g->b, LLVMBuildMul(g->b, nvptx_coord(g, l, 0, k), ci32(g, t.shape[1]), ""),
                                                nvptx_coord(g, l, 1, k), "")
                                 : P.along[k];
    }
    return P;
}

static LLVMValueRef slot_ptr(Gen *g, const Partials *P, int i, LLVMValueRef index) {
    return nvptx_smem_ptr(g, P->at[i], index, elem_bytes(P->d[i]));
}

static void store_all(Gen *g, const Partials *P) {
    for (int k = 0; k < P->l->nregs; k++)
        for (int i = 0; i < P->n; i++) LLVMBuildStore(g->b, to_mem(g, P->v[i][k], P->d[i]), slot_ptr(g, P, i, P->index[k]));
}

static LLVMValueRef load_value(Gen *g, const Partials *P, int i, LLVMValueRef index) {
    return from_mem(g, LLVMBuildLoad2(g->b, mem_ty(g, P->d[i]), slot_ptr(g, P, i, index), ""), P->d[i]);
}

/* Each register's element combined with a partner's (before it for a scan,
 * after it for a reduce's tree) where `has`, else kept. */
static bool step(Gen *g, const BirOp *op, Partials *P, int k, LLVMValueRef has, LLVMValueRef partner, bool partner_left) {
    LLVMValueRef other[MAX_VALUES], mine[MAX_VALUES], out[MAX_VALUES];
    for (int i = 0; i < P->n; i++) other[i] = load_value(g, P, i, partner), mine[i] = P->v[i][k];
    if (!combine(g, op, partner_left ? other : mine, partner_left ? mine : other, out)) return false;
    for (int i = 0; i < P->n; i++) P->v[i][k] = LLVMBuildSelect(g->b, has, out[i], P->v[i][k], "");
    return true;
}

bool nvptx_gen_scan(Gen *g, const BirOp *op, int64_t slot) {
    const Layout *l = &g->plan->layouts[op->results[0]];
    Partials P = partials(g, op, l, slot);
    nvptx_barrier(g); /* earlier users of the shared region are done */
    store_all(g, &P);
    for (int32_t d = 1; d < P.len; d *= 2) {
        nvptx_barrier(g);
        for (int k = 0; k < l->nregs; k++) {
            LLVMValueRef has = LLVMBuildICmp(g->b, LLVMIntSGE, P.along[k], ci32(g, d), "");
            LLVMValueRef at = LLVMBuildSelect(g->b, has, LLVMBuildSub(g->b, P.index[k], ci32(g, d * P.stride), ""),
                                              P.index[k], "");
            if (!step(g, op, &P, k, has, at, true)) return false;
        }
        nvptx_barrier(g);
        store_all(g, &P);
    }
    for (int i = 0; i < P.n; i++) {
        LLVMValueRef *out = nvptx_new_regs(g, op->results[i]);
        memcpy(out, P.v[i], (size_t)l->nregs * sizeof *out);
    }
    return true;
}

/* reduce: the tree in the operands' own layout, then each result element
 * read at index 0 of its row in the result's layout. */
bool nvptx_gen_tree_reduce(Gen *g, const BirOp *op, int64_t slot) {
    const Layout *l = &g->plan->layouts[op->operands[0]];
    Partials P = partials(g, op, l, slot);
    nvptx_barrier(g);
    store_all(g, &P);
    for (int32_t d = 1; d < P.len; d *= 2) {
        nvptx_barrier(g);
        for (int k = 0; k < l->nregs; k++) {
            LLVMValueRef low = LLVMBuildAnd(g->b, P.along[k], ci32(g, 2 * d - 1), "");
            LLVMValueRef has = LLVMBuildICmp(g->b, LLVMIntEQ, low, ci32(g, 0), "");
            LLVMValueRef at = LLVMBuildSelect(g->b, has, LLVMBuildAdd(g->b, P.index[k], ci32(g, d * P.stride), ""),
                                              P.index[k], "");
            if (!step(g, op, &P, k, has, at, false)) return false;
        }
        nvptx_barrier(g);
        store_all(g, &P);
    }
    nvptx_barrier(g);
    int axis = (int)op->attr;
    BlkType xt = vtype(g, op->operands[0]);
    for (int i = 0; i < P.n; i++) {
        int r = op->results[i];
        const Layout *rl = &g->plan->layouts[r];
        LLVMValueRef *out = nvptx_new_regs(g, r);
        for (int k = 0; k < nregs(g, r); k++) {
            /* the row's first element: the kept coordinate times its stride */
            LLVMValueRef index = ci32(g, 0);
            if (xt.rank == 2) {
                LLVMValueRef kept = nvptx_coord(g, rl, 0, k);
                index = axis == 0 ? kept : LLVMBuildMul(g->b, kept, ci32(g, xt.shape[1]), "");
            }
            out[k] = load_value(g, &P, i, index);
        }
    }
    return true;
}
