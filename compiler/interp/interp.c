/* interp.c: the reference interpreter. Runs a kernel's block IR on host
 * memory, one program at a time, each to completion.
 *
 * A live value has storage for all its elements (Elem: integers normalized
 * in int64 — i32 sign-extended, u32 zero-extended, i1 0/1 — floats as
 * doubles holding a value exact in their dtype, pointers as addresses).
 * Storage is taken when the value is defined and given back after its last
 * use (computed once per launch, per block: a use inside a loop or branch
 * counts as a use by that op), into a free list of its size for the next
 * value; the bytes held are bounded by InterpOptions.max_bytes.
 * Float arithmetic computes in double and rounds once to the dtype, which
 * is exactly IEEE f32/f16/bf16 arithmetic for + - * / sqrt (double has more
 * than twice their precision); sums reduce pairwise in a fixed order
 * (docs/interpreter.md). Memory accesses are checked against the buffers
 * the caller registered: a pointer carries the buffer it came from in its
 * top 16 bits (host addresses use 48), so running off one array into the
 * next is caught too. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "interp.h"

typedef union {
    int64_t i;
    uint64_t u; /* pointers */
    double f;
} Elem;

typedef enum { FLOW_NEXT, FLOW_RETURN, FLOW_ERROR } Flow;

/* Pointer elements: the address in the low 48 bits, 1 + the index of the
 * buffer it was derived from in the next 15 (0: none known), and in the top
 * bit whether pointer arithmetic moved it outside the 48-bit address space
 * (an i64 offset times the element size overflowing, or the sum leaving
 * [0, 2^48)). Such a pointer is "wild": its low bits are not where it
 * points, so any access through it is out of bounds, even if later
 * arithmetic would bring it back (the offset is not kept). */
enum { ADDR_BITS = 48, MAX_TAG = 0x7fff };
#define ADDR_MASK ((UINT64_C(1) << ADDR_BITS) - 1)
#define WILD_BIT (UINT64_C(1) << 63)
static uint64_t addr_of(uint64_t p) { return p & ADDR_MASK; }
static int tag_of(uint64_t p) { return (int)((p >> ADDR_BITS) & MAX_TAG); }
static bool wild(uint64_t p) { return (p & WILD_BIT) != 0; }

/* Where each value dies: per block, a slot for its entry (arguments nobody
 * uses) and one after each op; a slot lists the values to give back there.
 * The slot after the terminator is given back by the parent once it has
 * read the terminator's operands (end_block). */
typedef struct {
    const BirBlock **blocks;   /* in pre-order */
    int nblocks;
    int *first_slot;           /* per block: its entry slot; slot first + 1 + i follows op i */
    int *slot_start, *kills;   /* slot s lists kills[slot_start[s] .. slot_start[s + 1]) */
    int *hash, hash_mask;      /* BirBlock* -> index, open addressing (-1: empty) */
    bool *pinned;              /* kept for the whole launch: the kernel's parameters */
    int *size_class;           /* per value: index into class_elems */
    int64_t *class_elems;
    int nclasses;
} Lifetimes;

typedef struct {
    const BirFunction *f;
    Elem **vals; /* storage of each value, NULL while it is not live */
    Lifetimes life;
    Elem **pool; /* per size class: given-back buffers, linked through their first element */
    uint64_t held, peak, max_bytes; /* bytes of value storage held (live and pooled) */
    int nlive, npinned;
    bool out_of_memory;
    const InterpBuffer *bufs;
    const char **buf_names;
    int nbufs, last_buf;
    uint32_t grid[3], pid[3];
    FILE *print_out;
    char *error;
    uint64_t writes; /* memory writes so far: a spin that sees none cannot end */
    uint64_t max_loop_iterations;
    uint64_t steps, max_steps; /* element operations so far, and the launch's budget (0: none) */
    double *reduce_tmp; /* a float sum's scratch, taken at the first such sum */
    int64_t reduce_cap;
} Interp;

static int64_t numel(BlkType t) { return type_numel(t); }

static BlkType vtype(Interp *I, int v) { return I->f->values[v].type; }
static Elem *V(Interp *I, int v) { return I->vals[v]; }

/* ---------------------------------------------------------------- errors */

static Flow fail(Interp *I, const BirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static Flow fail(Interp *I, const BirOp *op, const char *fmt, ...) {
    if (I->error) return FLOW_ERROR;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const Source *src = I->f->src;
    /* the source line, trimmed, below the message */
    const char *ls = NULL;
    int llen = 0;
    if (src && op && op->span.line) {
        const char *s = src->text, *end = src->text + src->len;
        for (uint32_t l = 1; l < op->span.line && s < end; s++) l += *s == '\n';
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        const char *e = s;
        while (e < end && *e != '\n') e++;
        ls = s;
        llen = (int)(e - s);
    }
    size_t cap = strlen(msg) + (size_t)llen + 512;
    I->error = malloc(cap);
    if (!I->error) {
        I->out_of_memory = true; /* no message, but never a success */
        return FLOW_ERROR;
    }
    snprintf(I->error, cap, "kernel '%s', %s:%u: program (%u, %u, %u): %s%s%.*s", I->f->name,
             src ? src->name : "?", op ? op->span.line : 0, I->pid[0], I->pid[1], I->pid[2], msg,
             ls ? "\n    " : "", llen, ls ? ls : "");
    return FLOW_ERROR;
}

/* "[5]", "[2, 17]" or "[1, 2, 17]": a block element's index from its
 * linear (row-major) position. */
static void index_str(BlkType t, int64_t k, char *buf, size_t size) {
    if (t.rank == 0) {
        snprintf(buf, size, "(scalar)");
        return;
    }
    int64_t at[BLK_MAX_RANK];
    for (int d = t.rank - 1; d >= 0; d--) at[d] = k % t.shape[d], k /= t.shape[d];
    size_t n = 0;
    for (int d = 0; d < t.rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld%s", d ? ", " : "[", (long long)at[d], d + 1 < t.rank ? "" : "]");
}

/* --------------------------------------------------------- value storage */

static int64_t value_elems(const BirFunction *f, int v) {
    BlkType t = f->values[v].type;
    return t.dtype == DT_VOID ? 1 : numel(t);
}

static int block_index(const Lifetimes *L, const BirBlock *b) {
    for (uint64_t h = ((uint64_t)(uintptr_t)b >> 4) * 0x9E3779B97F4A7C15ull;; h++) {
        int i = L->hash[h & (uint64_t)L->hash_mask];
        if (i < 0 || L->blocks[i] == b) return i;
    }
}

/* Out of memory: the launch ends with INTERP_OUT_OF_MEMORY, never a fault. */
static void out_of_memory(Interp *I, const BirOp *op, uint64_t bytes, bool malloc_failed) {
    I->out_of_memory = true;
    if (malloc_failed)
        fail(I, op, "out of memory: the host could not allocate %llu more bytes for the interpreter's values "
             "(%llu bytes held)", (unsigned long long)bytes, (unsigned long long)I->held);
    else
        fail(I, op, "out of memory: %llu more bytes for this op would bring the values this program holds to "
             "%llu bytes, past the interpreter's limit of %llu bytes (a larger one: BLK_CPU_MAX_BYTES, or "
             "InterpOptions.max_bytes)", (unsigned long long)bytes, (unsigned long long)(I->held + bytes),
             (unsigned long long)I->max_bytes);
}

/* Frees the buffers kept for reuse: they count against the limit. */
static void drain_pools(Interp *I) {
    for (int c = 0; c < I->life.nclasses; c++) {
        while (I->pool[c]) {
            Elem *p = I->pool[c];
            I->pool[c] = (Elem *)(uintptr_t)p[0].u;
            free(p);
            I->held -= (uint64_t)I->life.class_elems[c] * sizeof(Elem);
        }
    }
}

/* Counts `bytes` more against the limit, or reports out of memory. */
static bool charge(Interp *I, const BirOp *op, uint64_t bytes) {
    if (bytes > I->max_bytes - I->held) drain_pools(I);
    if (bytes > I->max_bytes - I->held) {
        out_of_memory(I, op, bytes, false);
        return false;
    }
    I->held += bytes;
    if (I->held > I->peak) I->peak = I->held;
    return true;
}

/* malloc within the limit (scratch buffers); give back with release_bytes. */
static void *take_bytes(Interp *I, const BirOp *op, uint64_t bytes) {
    if (!charge(I, op, bytes)) return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        I->held -= bytes;
        out_of_memory(I, op, bytes, true);
    }
    return p;
}

static void release_bytes(Interp *I, void *p, uint64_t bytes) {
    if (!p) return;
    free(p);
    I->held -= bytes;
}

/* Storage for value v where it is defined (op: for messages): a buffer of
 * its size given back earlier, else a new one. Not zeroed: every op writes
 * all of its results. NULL: out of memory, reported. */
static Elem *define(Interp *I, int v, const BirOp *op) {
    if (I->vals[v]) return I->vals[v];
    int c = I->life.size_class[v];
    Elem *p = I->pool[c];
    if (p) {
        I->pool[c] = (Elem *)(uintptr_t)p[0].u;
    } else if (!(p = take_bytes(I, op, (uint64_t)I->life.class_elems[c] * sizeof(Elem)))) {
        return NULL;
    }
    I->nlive++;
    return I->vals[v] = p;
}

/* After its last use: v's buffer goes to its size's free list. */
static void release(Interp *I, int v) {
    Elem *p = I->vals[v];
    if (!p) return; /* given back already (an empty block's entry and end are one slot) */
    int c = I->life.size_class[v];
    p[0].u = (uint64_t)(uintptr_t)I->pool[c];
    I->pool[c] = p;
    I->vals[v] = NULL;
    I->nlive--;
}

static void release_slot(Interp *I, int slot) {
    const Lifetimes *L = &I->life;
    for (int k = L->slot_start[slot]; k < L->slot_start[slot + 1]; k++) release(I, L->kills[k]);
}

/* The parent has read b's terminator operands: what died there goes. */
static void end_block(Interp *I, const BirBlock *b) {
    int bi = block_index(&I->life, b);
    release_slot(I, I->life.first_slot[bi] + b->ops.len);
}

/* --- lifetimes, once per launch */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int block, pos;
} Ancestor;

/* Pre-order: numbers the blocks, and records where each value is defined
 * (its block, and its op's index there or -1 for a block argument). */
static void number_blocks(Lifetimes *L, const BirBlock *b, int *def_block, int *last, int depth, int *max_depth) {
    int bi = L->nblocks++;
    L->blocks[bi] = b;
    if (depth > *max_depth) *max_depth = depth;
    for (int a = 0; a < b->nargs; a++) def_block[b->args[a]] = bi, last[b->args[a]] = -1;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nresults; r++) def_block[op->results[r]] = bi, last[op->results[r]] = i;
        for (int r = 0; r < op->nregions; r++) number_blocks(L, op->regions[r], def_block, last, depth + 1, max_depth);
    }
}

/* A use of v inside op i of a block, at any depth, is a use at the op of
 * v's own block that contains it: a value from before a loop lives until
 * the loop ends. A use out of scope (unverified IR) keeps v for the launch. */
static void find_last_uses(Lifetimes *L, const BirBlock *b, const int *def_block, int *last, Ancestor *stack,
                           int depth) {
    int bi = block_index(L, b);
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        stack[depth] = (Ancestor){bi, i};
        for (int k = 0; k < op->noperands; k++) {
            int v = op->operands[k], at = -2;
            if (v < 0) continue;
            for (int s = depth; s >= 0 && at == -2; s--)
                if (stack[s].block == def_block[v]) at = stack[s].pos;
            if (at == -2) L->pinned[v] = true;
            else if (at > last[v]) last[v] = at;
        }
        for (int r = 0; r < op->nregions; r++) find_last_uses(L, op->regions[r], def_block, last, stack, depth + 1);
    }
}

static int count_blocks(const BirBlock *b) {
    int n = 1;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) n += count_blocks(op->regions[r]);
    }
    return n;
}

static void lifetimes_free(Lifetimes *L) {
    free(L->blocks);
    free(L->first_slot);
    free(L->slot_start);
    free(L->kills);
    free(L->hash);
    free(L->pinned);
    free(L->size_class);
    free(L->class_elems);
}

/* Computes where each value of f dies, and its size class. False: out of memory. */
static bool lifetimes_init(Lifetimes *L, const BirFunction *f) {
    int nv = f->nvalues, nb = count_blocks(f->body), cap = 4;
    while (cap < 2 * nb) cap *= 2;
    int *def_block = malloc((size_t)nv * sizeof *def_block + 1), *last = malloc((size_t)nv * sizeof *last + 1);
    Ancestor *stack = NULL;
    L->blocks = malloc((size_t)nb * sizeof *L->blocks);
    L->first_slot = malloc((size_t)nb * sizeof *L->first_slot);
    L->hash = malloc((size_t)cap * sizeof *L->hash);
    L->pinned = calloc((size_t)nv + 1, sizeof *L->pinned);
    L->size_class = malloc((size_t)nv * sizeof *L->size_class + 1);
    L->class_elems = malloc((size_t)nv * sizeof *L->class_elems + 1);
    L->kills = malloc((size_t)nv * sizeof *L->kills + 1);
    bool ok = def_block && last && L->blocks && L->first_slot && L->hash && L->pinned && L->size_class &&
              L->class_elems && L->kills;
    if (!ok) goto done;
    /* size classes: the distinct element counts */
    for (int v = 0; v < nv; v++) L->class_elems[v] = value_elems(f, v);
    qsort(L->class_elems, (size_t)nv, sizeof *L->class_elems, cmp_i64);
    for (int v = 0; v < nv; v++)
        if (L->nclasses == 0 || L->class_elems[L->nclasses - 1] != L->class_elems[v])
            L->class_elems[L->nclasses++] = L->class_elems[v];
    for (int v = 0; v < nv; v++) {
        int64_t n = value_elems(f, v);
        int lo = 0, hi = L->nclasses - 1;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (L->class_elems[mid] < n) lo = mid + 1;
            else hi = mid;
        }
        L->size_class[v] = lo;
    }
    for (int v = 0; v < nv; v++) def_block[v] = -1, last[v] = -1;
    int max_depth = 0;
    number_blocks(L, f->body, def_block, last, 0, &max_depth);
    for (int i = 0; i < cap; i++) L->hash[i] = -1;
    L->hash_mask = cap - 1;
    for (int bi = 0; bi < nb; bi++)
        for (uint64_t h = ((uint64_t)(uintptr_t)L->blocks[bi] >> 4) * 0x9E3779B97F4A7C15ull;; h++)
            if (L->hash[h & (uint64_t)L->hash_mask] < 0) {
                L->hash[h & (uint64_t)L->hash_mask] = bi;
                break;
            }
    int nslots = 0;
    for (int bi = 0; bi < nb; bi++) L->first_slot[bi] = nslots, nslots += L->blocks[bi]->ops.len + 1;
    stack = malloc((size_t)(max_depth + 1) * sizeof *stack);
    L->slot_start = calloc((size_t)nslots + 2, sizeof *L->slot_start);
    if (!(ok = stack && L->slot_start)) goto done;
    find_last_uses(L, f->body, def_block, last, stack, 0);
    for (int a = 0; a < f->body->nargs; a++) L->pinned[f->body->args[a]] = true;
    /* kills by slot (a counting sort): after the last use, or at the block's
     * entry for an argument nobody uses */
    for (int v = 0; v < nv; v++)
        if (def_block[v] >= 0 && !L->pinned[v]) L->slot_start[L->first_slot[def_block[v]] + last[v] + 2]++;
    for (int s = 0; s < nslots; s++) L->slot_start[s + 1] += L->slot_start[s];
    for (int v = 0; v < nv; v++)
        if (def_block[v] >= 0 && !L->pinned[v]) L->kills[L->slot_start[L->first_slot[def_block[v]] + last[v] + 1]++] = v;
    for (int s = nslots; s > 0; s--) L->slot_start[s] = L->slot_start[s - 1];
    L->slot_start[0] = 0;
done:
    free(def_block);
    free(last);
    free(stack);
    return ok;
}

/* --------------------------------------------------------------- memory */

static bool in_buf(const InterpBuffer *b, uint64_t lo, uint64_t hi_excl) {
    uint64_t base = (uint64_t)(uintptr_t)b->base;
    return lo >= base && hi_excl <= base + b->bytes && lo <= hi_excl;
}

static int find_buf(Interp *I, uint64_t lo, uint64_t hi_excl) {
    if (I->last_buf >= 0 && in_buf(&I->bufs[I->last_buf], lo, hi_excl)) return I->last_buf;
    for (int b = 0; b < I->nbufs; b++)
        if (in_buf(&I->bufs[b], lo, hi_excl)) return I->last_buf = b;
    return -1;
}

/* Explains why one element's access is bad: relative to the buffer its
 * pointer came from, else to the nearest buffer. */
static Flow bad_access(Interp *I, const BirOp *op, const char *what, BlkType shape, int64_t k,
                       uint64_t ptr, DType d) {
    char idx[48];
    index_str(shape, k, idx, sizeof idx);
    uint64_t addr = addr_of(ptr);
    int size = dtype_bytes(d);
    const char *elem_dt = dtype_name(d);
    if (wild(ptr)) {
        int from = tag_of(ptr) - 1;
        if (from < 0)
            return fail(I, op, "out-of-bounds %s: block element %s has a pointer that pointer arithmetic moved "
                        "outside the address space (an offset too large for any buffer)", what, idx);
        return fail(I, op, "out-of-bounds %s: block element %s accesses %s at an offset outside the address space "
                    "(the pointer arithmetic overflowed), far outside %s (%lld elements of %s)", what, idx,
                    I->buf_names[from], I->buf_names[from], (long long)(I->bufs[from].bytes / (size_t)size), elem_dt);
    }
    if (addr % (uint64_t)size)
        return fail(I, op, "misaligned %s: block element %s has address 0x%llx, not a multiple of %d "
                    "(the size of %s)", what, idx, (unsigned long long)addr, size, elem_dt);
    int best = tag_of(ptr) - 1;
    uint64_t best_dist = 0;
    if (best < 0) {
        best_dist = UINT64_MAX;
        for (int b = 0; b < I->nbufs; b++) {
            uint64_t base = (uint64_t)(uintptr_t)I->bufs[b].base, end = base + I->bufs[b].bytes;
            uint64_t dist = addr < base ? base - addr : addr >= end ? addr - end : 0;
            if (dist < best_dist) best_dist = dist, best = b;
        }
    }
    if (best < 0 || best_dist > (UINT64_C(1) << 32))
        return fail(I, op, "out-of-bounds %s: block element %s has address 0x%llx, which is in no "
                    "buffer passed to the kernel", what, idx, (unsigned long long)addr);
    const InterpBuffer *b = &I->bufs[best];
    int64_t at = ((int64_t)addr - (int64_t)(uintptr_t)b->base) / size;
    long long count = (long long)(b->bytes / (size_t)size);
    return fail(I, op, "out-of-bounds %s: block element %s accesses %s[%lld], %s %s (%lld elements of %s)",
                what, idx, I->buf_names[best], (long long)at, at < 0 ? "before the start of" : "past the end of",
                I->buf_names[best], count, elem_dt);
}

static bool elem_ok(Interp *I, uint64_t ptr, uint64_t size) {
    uint64_t a = addr_of(ptr);
    if (wild(ptr) || (a & (size - 1))) return false;
    int tag = tag_of(ptr);
    return tag ? in_buf(&I->bufs[tag - 1], a, a + size) : find_buf(I, a, a + size) >= 0;
}

/* Checks every active element: aligned, and inside the buffer its pointer
 * came from (any registered buffer for a pointer of unknown origin). The
 * fast path checks the active range once; else the first bad element is
 * found and reported. */
static Flow check_access(Interp *I, const BirOp *op, const char *what, const Elem *ptr,
                         const Elem *mask, BlkType shape, DType d) {
    int64_t n = numel(shape);
    uint64_t size = (uint64_t)dtype_bytes(d), lo = UINT64_MAX, hi = 0, misalign = 0, any_wild = 0;
    int tag = -1;
    bool one_tag = true;
    for (int64_t k = 0; k < n; k++) {
        if (mask && !mask[k].i) continue;
        uint64_t a = addr_of(ptr[k].u);
        int t = tag_of(ptr[k].u);
        if (tag < 0) tag = t;
        one_tag &= t == tag;
        lo = a < lo ? a : lo;
        hi = a > hi ? a : hi;
        misalign |= a;
        any_wild |= ptr[k].u;
    }
    if (lo == UINT64_MAX) return FLOW_NEXT; /* nothing active */
    if (one_tag && !(misalign & (size - 1)) && !wild(any_wild)) {
        bool inside = tag > 0 ? in_buf(&I->bufs[tag - 1], lo, hi + size) : find_buf(I, lo, hi + size) >= 0;
        if (inside) return FLOW_NEXT;
    }
    for (int64_t k = 0; k < n; k++) {
        if (mask && !mask[k].i) continue;
        if (!elem_ok(I, ptr[k].u, size)) return bad_access(I, op, what, shape, k, ptr[k].u, d);
    }
    return FLOW_NEXT;
}

static Elem mem_read(uint64_t ptr, DType d) {
    Elem e = {0};
    void *p = (void *)(uintptr_t)addr_of(ptr);
    const Fp8Format *fp8;
    switch (d) {
    case DT_I1: e.i = *(uint8_t *)p != 0; break;
    case DT_I8: e.i = *(int8_t *)p; break;
    case DT_U8: e.i = *(uint8_t *)p; break;
    case DT_I16: e.i = *(int16_t *)p; break;
    case DT_U16: e.i = *(uint16_t *)p; break;
    case DT_I32: e.i = *(int32_t *)p; break;
    case DT_U32: e.i = *(uint32_t *)p; break;
    case DT_F16: e.f = f16_to_f32(*(uint16_t *)p); break;
    case DT_BF16: e.f = bf16_to_f32(*(uint16_t *)p); break;
    case DT_F32: e.f = *(float *)p; break;
    case DT_F64: e.f = *(double *)p; break;
    default:
        if ((fp8 = fp8_format(d))) e.f = fp8_to_f32(*(uint8_t *)p, fp8);
        else e.u = *(uint64_t *)p; /* i64, u64, pointers */
        break;
    }
    return e;
}

static void mem_write(Interp *I, uint64_t ptr, DType d, Elem e) {
    void *p = (void *)(uintptr_t)addr_of(ptr);
    const Fp8Format *fp8;
    switch (d) {
    case DT_I1: *(uint8_t *)p = e.i != 0; break;
    case DT_I8: case DT_U8: *(uint8_t *)p = (uint8_t)e.i; break;
    case DT_I16: case DT_U16: *(uint16_t *)p = (uint16_t)e.i; break;
    case DT_I32: case DT_U32: *(uint32_t *)p = (uint32_t)e.i; break;
    case DT_F16: *(uint16_t *)p = f32_to_f16((float)e.f); break;
    case DT_BF16: *(uint16_t *)p = f32_to_bf16((float)e.f); break;
    case DT_F32: *(float *)p = (float)e.f; break;
    case DT_F64: *(double *)p = e.f; break;
    default:
        if ((fp8 = fp8_format(d))) *(uint8_t *)p = f32_to_fp8((float)e.f, fp8);
        else *(uint64_t *)p = e.u;
        break;
    }
    I->writes++;
}

/* ------------------------------------------------------------ arithmetic */

/* A block element as numeric.c's scalar and back: a float dtype's value in
 * .f, any other's in .i (pointers take their own path). */
static ConstVal scalar_of(Elem x, DType d) { return dtype_is_float(d) ? (ConstVal){.f = x.f} : (ConstVal){.i = x.i}; }

/* The program's arithmetic, numeric.c's (constant folding computes the same);
 * what folding would refuse (overflow, x / 0, a shift out of range) wraps or
 * clamps here, as on the GPU. */
static Elem binary(BirOpcode code, Elem x, Elem y, DType d) {
    unsigned ignored = 0;
    ConstVal v = scalar_binary(code, scalar_of(x, d), scalar_of(y, d), d, &ignored);
    return dtype_is_float(d) ? (Elem){.f = v.f} : (Elem){.i = v.i};
}

static bool compare(BirOpcode code, Elem x, Elem y, DType d) {
    if (d == DT_PTR) { /* addresses compared without their tags */
        ConstVal a = {.i = (int64_t)addr_of(x.u)}, b = {.i = (int64_t)addr_of(y.u)};
        return scalar_compare(code, a, b, DT_U64);
    }
    return scalar_compare(code, scalar_of(x, d), scalar_of(y, d), d);
}

/* neg, not, abs and the math functions (the MATH_OP rows of ops.def: f32
 * math from the C library, numeric.c; the GPU's approximations differ by a
 * few ulp, docs/interpreter.md) */
static Elem unary(BirOpcode code, Elem x, DType d) {
    Elem r = {0};
    bool is_float = dtype_is_float(d);
    switch (code) {
    case BIR_NEG:
        if (is_float) r.f = -x.f;
        else r.i = int_wrap((int64_t)(0 - (uint64_t)x.i), d);
        return r;
    case BIR_NOT: /* integers and i1 (ops.def: BITS) */
        r.i = int_wrap(~x.i, d);
        return r;
    case BIR_ABS:
        if (is_float) r.f = fabs(x.f);
        else r.i = dtype_is_signed(d) && x.i < 0 ? int_wrap((int64_t)(0 - (uint64_t)x.i), d) : x.i;
        return r;
#define BIR_OP(...)
#define MATH_OP(ID, fn) case BIR_##ID:
#include "ops.def"
        /* f32, or f64 where exact (ops.def: MATH) */
        r.f = d == DT_F64 ? blk_math_f64(code, x.f) : blk_math_f32(code, (float)x.f);
        return r;
    /* the other elementwise ops, not of one operand or not arithmetic, and every other op:
       exec's own cases (listed, so that a new unary op missing here is a build error) */
    case BIR_CONVERT: case BIR_PTR_CAST: case BIR_PTR_ADD: case BIR_ADD: case BIR_SUB: case BIR_MUL:
    case BIR_DIV: case BIR_REM: case BIR_AND: case BIR_OR: case BIR_XOR: case BIR_SHL: case BIR_SHR:
    case BIR_UMULHI: case BIR_POW: case BIR_MIN: case BIR_MAX: case BIR_EQ: case BIR_NE: case BIR_LT:
    case BIR_LE: case BIR_GT: case BIR_GE: case BIR_SELECT: case BIR_FMA: case BIR_RAND: case BIR_RANDINT:
#define OPS_TAKES_KIND_ELEMENTWISE
#define OPS_TAKES_KIND_MATH
#include "ops_cases.inc"
    case BIR_OPCODE_COUNT: break;
    }
    return r;
}

/* ------------------------------------------------------------- reductions */

/* Pairwise: halves fold onto each other (x[i] += x[i + n/2]) until one is
 * left, rounding each add to f32 (f64 sums stay in double). n is a power of
 * two. */
static double sum_pairwise(double *x, int64_t n, bool f64) {
    for (int64_t half = n / 2; half >= 1; half /= 2)
        for (int64_t i = 0; i < half; i++) x[i] = f64 ? x[i] + x[i + half] : (float)(x[i] + x[i + half]);
    return x[0];
}

/* dot (docs/language.md §7): each output is acc + the sum over k, in
 * increasing k, of a[m,k] * b[k,n], one f32 fma per term. Products of f16,
 * bf16 and tf32 values are exact in f32, so for those this is f32 addition
 * of exact products in k order. tf32 rounds both operands first; tf32x3
 * splits each into hi = tf32(x) and lo = tf32(x - hi) and adds lo*hi, hi*lo,
 * then hi*hi, each as a pass over k (the order of three dots). */
static float dot_operand(double x, int part) { /* part 0: as is, 1: tf32 hi, 2: tf32 lo */
    float f = (float)x;
    if (part == 0) return f;
    float hi = f32_to_tf32(f);
    return part == 1 ? hi : f32_to_tf32(f - hi);
}

/* 8-bit integer operands: acc + the exact sum, modulo 2^32 (the hardware's
 * wrap-around, in any order). fp8 operands: the products (exact in f32) of
 * each run of `every` k terms (dot_promote_every) summed in f32 from zero in
 * increasing k, then added to acc, one f32 rounding each, run by run: the
 * sums are promoted, as the GPU does (language.md §7); every = 0: summed
 * into acc in increasing k, as f16's. */
static void dot_8bit(const Elem *a, const Elem *b, const Elem *acc, Elem *out, int64_t M, int64_t K, int64_t N,
                     bool ints, int64_t every) {
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            if (ints) {
                uint32_t c = (uint32_t)acc[m * N + n].i;
                for (int64_t k = 0; k < K; k++) c += (uint32_t)(a[m * K + k].i * b[k * N + n].i);
                out[m * N + n].i = (int32_t)c;
                continue;
            }
            float c = (float)acc[m * N + n].f;
            if (!every) {
                for (int64_t k = 0; k < K; k++) c = fmaf((float)a[m * K + k].f, (float)b[k * N + n].f, c);
                out[m * N + n].f = c;
                continue;
            }
            for (int64_t k0 = 0; k0 < K; k0 += every) {
                float part = 0.0f;
                for (int64_t k = k0; k < K && k < k0 + every; k++)
                    part = fmaf((float)a[m * K + k].f, (float)b[k * N + n].f, part);
                c += part;
            }
            out[m * N + n].f = c;
        }
}

static void dot_one(const BirOp *op, DType d, const Elem *a, const Elem *b, const Elem *acc, Elem *out, int64_t M,
                    int64_t K, int64_t N) {
    if (dtype_bits(d) == 8) {
        dot_8bit(a, b, acc, out, M, K, N, dtype_is_int(d), dot_promote_every(d, op->attr, K));
        return;
    }
    /* the passes: {a part, b part} */
    static const int ieee[1][2] = {{0, 0}}, tf32[1][2] = {{1, 1}}, tf32x3[3][2] = {{2, 1}, {1, 2}, {1, 1}};
    int64_t precision = op->attr & DOT_PRECISION_MASK;
    const int(*passes)[2] = precision == DOT_TF32 ? tf32 : precision == DOT_TF32X3 ? tf32x3 : ieee;
    int npasses = precision == DOT_TF32X3 ? 3 : 1;
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            float c = (float)acc[m * N + n].f;
            for (int p = 0; p < npasses; p++)
                for (int64_t k = 0; k < K; k++)
                    c = fmaf(dot_operand(a[m * K + k].f, passes[p][0]), dot_operand(b[k * N + n].f, passes[p][1]), c);
            out[m * N + n].f = c;
        }
    }
}

/* A batched dot ([B, M, K] x [B, K, N]) is B independent products. */
static Flow exec_dot(Interp *I, const BirOp *op) {
    BlkType at = vtype(I, op->operands[0]), bt = vtype(I, op->operands[1]);
    int batched = at.rank - 2;
    int64_t M = at.shape[batched], K = at.shape[batched + 1], N = bt.shape[batched + 1];
    for (int64_t i = 0; i < (batched ? at.shape[0] : 1); i++)
        dot_one(op, (DType)at.dtype, V(I, op->operands[0]) + i * M * K, V(I, op->operands[1]) + i * K * N,
                V(I, op->operands[2]) + i * M * N, V(I, op->results[0]) + i * M * N, M, K, N);
    return FLOW_NEXT;
}

static Flow exec_reduce(Interp *I, const BirOp *op) {
    BlkType xt = vtype(I, op->operands[0]);
    const Elem *x = V(I, op->operands[0]);
    Elem *out = V(I, op->results[0]);
    int axis = (int)op->attr;
    /* one output per element of the other axes (row-major: those before the
     * axis, then those after it); the axis' elements are stride apart */
    int64_t len = xt.shape[axis], stride = 1;
    for (int d = axis + 1; d < xt.rank; d++) stride *= xt.shape[d];
    int64_t outer = numel(xt) / len;
    DType d = xt.dtype;
    bool is_float = dtype_is_float(d);
    for (int64_t o = 0; o < outer; o++) {
        const Elem *row = x + (o / stride) * len * stride + o % stride;
        Elem r = {0};
        switch (op->code) {
        case BIR_REDUCE_SUM:
            if (is_float) {
                if (len > I->reduce_cap) {
                    release_bytes(I, I->reduce_tmp, (uint64_t)I->reduce_cap * sizeof(double));
                    I->reduce_cap = 0;
                    if (!(I->reduce_tmp = take_bytes(I, op, (uint64_t)len * sizeof(double)))) return FLOW_ERROR;
                    I->reduce_cap = len;
                }
                for (int64_t k = 0; k < len; k++) I->reduce_tmp[k] = row[k * stride].f;
                r.f = sum_pairwise(I->reduce_tmp, len, d == DT_F64);
            } else {
                uint64_t s = 0;
                for (int64_t k = 0; k < len; k++) s += (uint64_t)row[k * stride].i;
                r.i = int_wrap((int64_t)s, d);
            }
            break;
        case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: {
            BirOpcode pick = op->code == BIR_REDUCE_MAX ? BIR_MAX : BIR_MIN;
            r = row[0];
            for (int64_t k = 1; k < len; k++) r = binary(pick, r, row[k * stride], d);
            break;
        }
        default: { /* argmax / argmin: the first index of the extreme; a NaN is extreme */
            bool want_max = op->code == BIR_ARGMAX;
            int64_t best = 0;
            for (int64_t k = 1; k < len; k++) {
                Elem b = row[best * stride], c = row[k * stride];
                bool better;
                if (is_float) {
                    if (b.f != b.f) break;
                    better = c.f != c.f || (want_max ? c.f > b.f : c.f < b.f);
                } else {
                    better = scalar_compare(want_max ? BIR_LT : BIR_GT, scalar_of(b, d), scalar_of(c, d), d);
                }
                if (better) best = k;
            }
            r.i = best;
            break;
        }
        }
        out[o] = r;
    }
    return FLOW_NEXT;
}

/* ------------------------------------------------------------------ ops */

static Flow exec_block(Interp *I, const BirBlock *b);

/* flip, reshape, take, partner: each result element is an operand element
 * (row-major storage, so reshape copies). */
static Flow exec_rearrange(Interp *I, const BirOp *op) {
    BlkType xt = vtype(I, op->operands[0]), rt = vtype(I, op->results[0]);
    const Elem *x = V(I, op->operands[0]);
    Elem *out = V(I, op->results[0]);
    int axis = (int)op->attr;
    int64_t n = numel(rt);
    if (op->code == BIR_RESHAPE) {
        memcpy(out, x, (size_t)n * sizeof *out);
        return FLOW_NEXT;
    }
    int64_t len = xt.shape[axis], inner = 1;
    for (int d = axis + 1; d < xt.rank; d++) inner *= xt.shape[d];
    for (int64_t k = 0; k < n; k++) {
        int64_t src;
        if (op->code == BIR_TAKE) { /* k = (outer, inner) of the result */
            src = (k / inner) * len * inner + op->value.i * inner + k % inner;
        } else {
            int64_t i = (k / inner) % len, j = op->code == BIR_FLIP ? len - 1 - i : i ^ op->value.i;
            src = k + (j - i) * inner;
        }
        out[k] = x[src];
    }
    return FLOW_NEXT;
}

/* inline asm: the interpreter cannot run PTX; it runs the reference helper
 * (the op's region) on each element instead. */
static Flow exec_inline_asm(Interp *I, const BirOp *op) {
    if (!op->nregions)
        return fail(I, op, "inline_asm_elementwise has no reference: the interpreter cannot run PTX; give "
                    "'reference = f', a helper computing the same on scalars");
    const BirBlock *ref = op->regions[0];
    Elem *out = V(I, op->results[0]);
    for (int64_t k = 0; k < numel(vtype(I, op->results[0])); k++) {
        for (int i = 0; i < op->noperands; i++) {
            Elem *a = define(I, ref->args[i], op);
            if (!a) return FLOW_ERROR;
            a[0] = V(I, op->operands[i])[k];
        }
        Flow fl = exec_block(I, ref);
        if (fl != FLOW_NEXT) return fl;
        out[k] = V(I, bir_block_terminator(ref)->operands[0])[0];
        end_block(I, ref);
    }
    return FLOW_NEXT;
}

/* gather: out-of-range indices are errors here (the GPU reads some element
 * of the axis instead). */
static Flow exec_gather(Interp *I, const BirOp *op) {
    BlkType xt = vtype(I, op->operands[0]), rt = vtype(I, op->results[0]), it = vtype(I, op->operands[1]);
    const Elem *x = V(I, op->operands[0]), *index = V(I, op->operands[1]);
    Elem *out = V(I, op->results[0]);
    int axis = (int)op->attr;
    int64_t inner = 1, len = xt.shape[axis], along = rt.shape[axis];
    for (int d = axis + 1; d < rt.rank; d++) inner *= rt.shape[d];
    for (int64_t k = 0; k < numel(rt); k++) {
        int64_t i = index[k].i;
        if (dtype_is_unsigned(it.dtype) ? index[k].u >= (uint64_t)len : i < 0 || i >= len) {
            char idx[48];
            index_str(rt, k, idx, sizeof idx);
            return fail(I, op, "gather: index %lld at element %s is outside the source's axis %d of size %lld",
                        dtype_is_unsigned(it.dtype) ? (long long)index[k].u : (long long)i, idx, axis, (long long)len);
        }
        out[k] = x[(k / inner / along) * len * inner + i * inner + k % inner];
    }
    return FLOW_NEXT;
}

static Flow exec_histogram(Interp *I, const BirOp *op) {
    BlkType xt = vtype(I, op->operands[0]);
    const Elem *x = V(I, op->operands[0]), *mask = op->operands[1] != BIR_NONE ? V(I, op->operands[1]) : NULL;
    Elem *out = V(I, op->results[0]);
    for (int64_t b = 0; b < op->attr; b++) out[b].i = 0;
    for (int64_t k = 0; k < numel(xt); k++) {
        if (mask && !mask[k].i) continue;
        bool inside = dtype_is_unsigned(xt.dtype) ? x[k].u < (uint64_t)op->attr : x[k].i >= 0 && x[k].i < op->attr;
        if (inside) out[x[k].i].i++;
    }
    return FLOW_NEXT;
}

/* left (+) right, n values each: cumsum's add, cumprod's multiply (each
 * rounded to the dtype), or the combine region of reduce/scan. */
static Flow combine(Interp *I, const BirOp *op, const Elem *left, const Elem *right, Elem *out) {
    if (op->code == BIR_CUMSUM || op->code == BIR_CUMPROD) {
        out[0] = binary(op->code == BIR_CUMSUM ? BIR_ADD : BIR_MUL, left[0], right[0], vtype(I, op->results[0]).dtype);
        return FLOW_NEXT;
    }
    const BirBlock *c = op->regions[0];
    int n = op->noperands;
    for (int i = 0; i < n; i++) {
        Elem *l = define(I, c->args[i], op), *r = define(I, c->args[n + i], op);
        if (!l || !r) return FLOW_ERROR;
        l[0] = left[i], r[0] = right[i];
    }
    Flow fl = exec_block(I, c);
    if (fl != FLOW_NEXT) return fl;
    const BirOp *y = bir_block_terminator(c);
    for (int i = 0; i < n; i++) out[i] = V(I, y->operands[i])[0];
    end_block(I, c);
    return FLOW_NEXT;
}

/* cumsum, cumprod, and reduce and scan with a combine function, in the
 * language's orders (language.md §6), as the GPU does them: reduce as a
 * pairwise tree (step d combines element k with k + d, k a multiple of 2d),
 * the scans in log2 steps (step d combines each element with the one d
 * before it). Elements are held as n-tuples, element-major. */
static Flow exec_combine(Interp *I, const BirOp *op) {
    int n = op->noperands, axis = (int)op->attr;
    bool scan = op->code != BIR_REDUCE;
    BlkType xt = vtype(I, op->operands[0]);
    int64_t len = xt.shape[axis], total = numel(xt), inner = 1;
    for (int d = axis + 1; d < xt.rank; d++) inner *= xt.shape[d];
    uint64_t bytes = (uint64_t)(total * n) * sizeof(Elem);
    Elem *cur = take_bytes(I, op, bytes), *prev = cur ? take_bytes(I, op, bytes) : NULL;
    Flow fl = cur && prev ? FLOW_NEXT : FLOW_ERROR;
    for (int64_t k = 0; fl == FLOW_NEXT && k < total; k++)
        for (int i = 0; i < n; i++) cur[k * n + i] = V(I, op->operands[i])[k];
    for (int64_t d = 1; fl == FLOW_NEXT && d < len; d *= 2) {
        memcpy(prev, cur, (size_t)(total * n) * sizeof *cur);
        for (int64_t k = 0; fl == FLOW_NEXT && k < total; k++) {
            int64_t along = (k / inner) % len;
            if (scan && along >= d)
                fl = combine(I, op, prev + (k - d * inner) * n, prev + k * n, cur + k * n);
            else if (!scan && along % (2 * d) == 0)
                fl = combine(I, op, prev + k * n, prev + (k + d * inner) * n, cur + k * n);
        }
    }
    for (int64_t k = 0; fl == FLOW_NEXT && k < total; k++) {
        int64_t along = (k / inner) % len, at = (k / inner / len) * inner + k % inner;
        for (int i = 0; i < n; i++) {
            if (scan) V(I, op->results[i])[k] = cur[k * n + i];
            else if (along == 0) V(I, op->results[i])[at] = cur[k * n + i];
        }
    }
    release_bytes(I, cur, bytes);
    release_bytes(I, prev, bytes);
    return fl;
}

/* dst := src, defining dst if it is not live (a region's argument). */
static bool copy_value(Interp *I, const BirOp *op, int dst, int src) {
    Elem *d = define(I, dst, op);
    if (d) memcpy(d, V(I, src), (size_t)numel(vtype(I, dst)) * sizeof(Elem));
    return d != NULL;
}

static void print_elem(FILE *out, Elem e, DType d) {
    if (dtype_holds_float(d)) fprintf(out, d == DT_F64 ? "%.17g" : "%.9g", e.f);
    else if (dtype_is_unsigned(d)) fprintf(out, "%llu", (unsigned long long)e.i);
    else if (d == DT_PTR) fprintf(out, "0x%llx", (unsigned long long)addr_of(e.u));
    else fprintf(out, "%lld", (long long)e.i);
}

static void exec_print(Interp *I, const BirOp *op) {
    FILE *out = I->print_out;
    if (op->noperands == 0)
        fprintf(out, "pid (%u, %u, %u) %s\n", I->pid[0], I->pid[1], I->pid[2], op->text);
    for (int a = 0; a < op->noperands; a++) {
        BlkType t = vtype(I, op->operands[a]);
        const Elem *x = V(I, op->operands[a]);
        int64_t n = numel(t);
        for (int64_t k = 0; k < n; k++) {
            char idx[48] = "";
            if (t.rank) index_str(t, k, idx, sizeof idx);
            fprintf(out, "pid (%u, %u, %u)%s%s %s ", I->pid[0], I->pid[1], I->pid[2], t.rank ? " idx " : "",
                    idx, op->text);
            print_elem(out, x[k], t.dtype);
            fputc('\n', out);
        }
    }
}

static Flow exec_memory(Interp *I, const BirOp *op) {
    const int *a = op->operands;
    BlkType pt = vtype(I, a[0]);
    DType d = pt.elem;
    int64_t n = numel(pt);
    const Elem *ptr = V(I, a[0]);
    Elem *out = op->nresults ? V(I, op->results[0]) : NULL;
    int mask_at = bir_op_info(op->code)->mask_at;
    const Elem *mask = mask_at >= 0 && a[mask_at] != BIR_NONE ? V(I, a[mask_at]) : NULL;
    const char *what = op->code == BIR_LOAD ? "load" : op->code == BIR_STORE ? "store" : "atomic";
    if (check_access(I, op, what, ptr, mask, pt, d) != FLOW_NEXT) return FLOW_ERROR;
    switch (op->code) {
    case BIR_LOAD: {
        const Elem *other = a[2] != BIR_NONE ? V(I, a[2]) : NULL;
        for (int64_t k = 0; k < n; k++) {
            if (!mask || mask[k].i) out[k] = mem_read(ptr[k].u, d);
            else out[k] = other ? other[k] : (Elem){0}; /* no `other`: 0 here, unspecified on the GPU */
        }
        return FLOW_NEXT;
    }
    case BIR_STORE: {
        const Elem *val = V(I, a[1]);
        for (int64_t k = 0; k < n; k++)
            if (!mask || mask[k].i) mem_write(I, ptr[k].u, d, val[k]);
        return FLOW_NEXT;
    }
    case BIR_ATOMIC_CAS: {
        const Elem *cmp = V(I, a[1]), *val = V(I, a[2]);
        for (int64_t k = 0; k < n; k++) {
            Elem old = mem_read(ptr[k].u, d);
            if (old.i == cmp[k].i) mem_write(I, ptr[k].u, d, val[k]);
            out[k] = old;
        }
        return FLOW_NEXT;
    }
    default: { /* the read-modify-write atomics: elements in order */
        const Elem *val = V(I, a[1]);
        for (int64_t k = 0; k < n; k++) {
            if (mask && !mask[k].i) {
                out[k] = (Elem){0};
                continue;
            }
            Elem old = mem_read(ptr[k].u, d);
            static const BirOpcode update[][2] = {{BIR_ATOMIC_ADD, BIR_ADD}, {BIR_ATOMIC_MAX, BIR_MAX},
                                                  {BIR_ATOMIC_MIN, BIR_MIN}, {BIR_ATOMIC_AND, BIR_AND},
                                                  {BIR_ATOMIC_OR, BIR_OR},   {BIR_ATOMIC_XOR, BIR_XOR}};
            Elem nv = val[k]; /* exchange */
            for (size_t u = 0; u < sizeof update / sizeof *update; u++)
                if (update[u][0] == op->code) nv = binary(update[u][1], old, val[k], d);
            mem_write(I, ptr[k].u, d, nv);
            out[k] = old;
        }
        return FLOW_NEXT;
    }
    }
}

static Flow loop_too_long(Interp *I, const BirOp *op, const char *kind) {
    return fail(I, op,
                "this %s loop ran %llu iterations without ending; the interpreter runs one program at a "
                "time, so a spin waiting for another program never ends (a longer budget: "
                "BLK_CPU_MAX_LOOP_ITERATIONS, or InterpOptions.max_loop_iterations)",
                kind, (unsigned long long)I->max_loop_iterations);
}

static Flow exec_for(Interp *I, const BirOp *op) {
    const BirBlock *body = op->regions[0];
    int n = op->nresults;
    DType d = vtype(I, op->operands[0]).dtype;
    int64_t iv = V(I, op->operands[0])[0].i, end = V(I, op->operands[1])[0].i;
    int64_t step = V(I, op->operands[2])[0].i;
    bool descending = (op->attr & FOR_DESCENDING) != 0;
    for (int i = 0; i < n; i++)
        if (!copy_value(I, op, op->results[i], op->operands[3 + i])) return FLOW_ERROR;
    for (uint64_t iterations = 0; descending ? iv > end : iv < end; iterations++) {
        if (iterations == I->max_loop_iterations) return loop_too_long(I, op, "for");
        Elem *ivp = define(I, body->args[0], op);
        if (!ivp) return FLOW_ERROR;
        ivp[0].i = iv;
        for (int i = 0; i < n; i++)
            if (!copy_value(I, op, body->args[1 + i], op->results[i])) return FLOW_ERROR;
        Flow fl = exec_block(I, body);
        if (fl != FLOW_NEXT) return fl;
        const BirOp *y = bir_block_terminator(body);
        for (int i = 0; i < n; i++) copy_value(I, op, op->results[i], y->operands[i]); /* live: no failure */
        end_block(I, body);
        /* the loop ends rather than wrap when iv + step leaves the type's range */
        int64_t next;
        if (__builtin_add_overflow(iv, step, &next) || int_wrap(next, d) != next) break;
        iv = next;
    }
    return FLOW_NEXT;
}

static bool values_equal(Interp *I, int a, int b) {
    return memcmp(V(I, a), V(I, b), (size_t)numel(vtype(I, a)) * sizeof(Elem)) == 0;
}

static Flow exec_while(Interp *I, const BirOp *op) {
    const BirBlock *cond = op->regions[0], *body = op->regions[1];
    int n = op->nresults;
    for (int i = 0; i < n; i++)
        if (!copy_value(I, op, op->results[i], op->operands[i])) return FLOW_ERROR;
    for (uint64_t iterations = 0;; iterations++) {
        if (iterations == I->max_loop_iterations) return loop_too_long(I, op, "while");
        uint64_t writes_before = I->writes;
        for (int i = 0; i < n; i++)
            if (!copy_value(I, op, cond->args[i], op->results[i])) return FLOW_ERROR;
        Flow fl = exec_block(I, cond);
        if (fl != FLOW_NEXT) return fl;
        const BirOp *c = bir_block_terminator(cond);
        bool again = V(I, c->operands[0])[0].i != 0;
        end_block(I, cond);
        if (!again) return FLOW_NEXT;
        for (int i = 0; i < n; i++)
            if (!copy_value(I, op, body->args[i], op->results[i])) return FLOW_ERROR;
        fl = exec_block(I, body);
        if (fl != FLOW_NEXT) return fl;
        const BirOp *y = bir_block_terminator(body);
        /* An iteration that wrote no memory and changed no carried value
         * repeats forever: no other program runs while this one does. */
        bool same = I->writes == writes_before;
        for (int i = 0; i < n && same; i++) same = values_equal(I, y->operands[i], op->results[i]);
        if (same)
            return fail(I, c, "this while loop can never end: an iteration changed neither memory nor "
                        "its variables, and the interpreter runs one program at a time (a spin lock "
                        "waiting for another program?)");
        for (int i = 0; i < n; i++) copy_value(I, op, op->results[i], y->operands[i]); /* live: no failure */
        end_block(I, body);
    }
}

static Flow exec_op(Interp *I, const BirOp *op) {
    const int *a = op->operands;
    Elem *out = op->nresults == 1 ? V(I, op->results[0]) : NULL;
    BlkType rt = op->nresults == 1 ? vtype(I, op->results[0]) : type_scalar(DT_VOID);
    int64_t n = numel(rt);
    switch (op->code) {
    case BIR_CONST:
        if (dtype_holds_float(rt.dtype)) out[0].f = op->value.f;
        else out[0].i = op->value.i;
        return FLOW_NEXT;
    case BIR_PROGRAM_ID: out[0].i = I->pid[op->attr]; return FLOW_NEXT;
    case BIR_NUM_PROGRAMS: out[0].i = I->grid[op->attr]; return FLOW_NEXT;
    case BIR_ARANGE:
        for (int64_t k = 0; k < n; k++) out[k].i = op->attr + k;
        return FLOW_NEXT;
    case BIR_SPLAT: {
        Elem x = V(I, a[0])[0];
        for (int64_t k = 0; k < n; k++) out[k] = x;
        return FLOW_NEXT;
    }
    case BIR_EXPAND_DIMS: case BIR_PTR_CAST:
        memcpy(out, V(I, a[0]), (size_t)n * sizeof(Elem));
        return FLOW_NEXT;
    case BIR_TRANS: case BIR_BROADCAST: {
        /* each result element's operand element: by the operand's strides,
         * permuted (trans) or 0 along a broadcast dimension of size 1 */
        BlkType xt = vtype(I, a[0]);
        int64_t xstride[BLK_MAX_RANK], stride[BLK_MAX_RANK], step = 1;
        for (int d = xt.rank - 1; d >= 0; d--) xstride[d] = step, step *= xt.shape[d];
        for (int d = 0; d < rt.rank; d++)
            stride[d] = op->code == BIR_TRANS ? xstride[trans_from(op->attr, rt.rank, d)]
                                              : xt.shape[d] == 1 ? 0 : xstride[d];
        const Elem *x = V(I, a[0]);
        for (int64_t k = 0; k < n; k++) {
            int64_t src = 0, rest = k;
            for (int d = rt.rank - 1; d >= 0; d--) src += rest % rt.shape[d] * stride[d], rest /= rt.shape[d];
            out[k] = x[src];
        }
        return FLOW_NEXT;
    }
    case BIR_DOT: return exec_dot(I, op);
    case BIR_CONVERT: {
        DType from = vtype(I, a[0]).dtype, to = rt.dtype;
        const Elem *x = V(I, a[0]);
        if (dtype_holds_float(from) && from != DT_F64 && (to == DT_F32 || to == DT_F64)) {
            memcpy(out, x, (size_t)n * sizeof(Elem)); /* f16/bf16/fp8 values are exact in f32 */
            return FLOW_NEXT;
        }
        for (int64_t k = 0; k < n; k++) {
            ConstVal c = dtype_holds_float(from) ? (ConstVal){.f = x[k].f} : (ConstVal){.i = x[k].i};
            c = convert_scalar(c, from, to);
            if (dtype_holds_float(to)) out[k].f = c.f;
            else out[k].i = c.i;
        }
        return FLOW_NEXT;
    }
    case BIR_PTR_ADD: {
        const Elem *p = V(I, a[0]), *off = V(I, a[1]);
        uint64_t size = (uint64_t)dtype_bytes(rt.elem);
        for (int64_t k = 0; k < n; k++) {
            /* the buffer tag stays; an address that leaves [0, 2^48) (or whose
             * byte offset overflows 64 bits) makes the pointer wild, never a
             * wrapped address that could land back inside a buffer */
            int64_t bytes = 0, to = 0;
            bool out_of_space = __builtin_mul_overflow(off[k].i, (int64_t)size, &bytes) ||
                                __builtin_add_overflow((int64_t)addr_of(p[k].u), bytes, &to) || to < 0 ||
                                (uint64_t)to > ADDR_MASK;
            out[k].u = (p[k].u & ~ADDR_MASK) | ((uint64_t)to & ADDR_MASK) | (out_of_space ? WILD_BIT : 0);
        }
        return FLOW_NEXT;
    }
    case BIR_ADD: case BIR_SUB: case BIR_MUL: case BIR_DIV: case BIR_REM: case BIR_AND:
    case BIR_OR: case BIR_XOR: case BIR_SHL: case BIR_SHR: case BIR_MIN: case BIR_MAX: case BIR_UMULHI: case BIR_POW: {
        const Elem *x = V(I, a[0]), *y = V(I, a[1]);
        DType d = rt.dtype;
        if (d == DT_F32 && (op->code == BIR_ADD || op->code == BIR_MUL || op->code == BIR_SUB)) {
            /* the hot f32 cases, without the per-element dispatch */
            if (op->code == BIR_ADD) for (int64_t k = 0; k < n; k++) out[k].f = (float)(x[k].f + y[k].f);
            else if (op->code == BIR_SUB) for (int64_t k = 0; k < n; k++) out[k].f = (float)(x[k].f - y[k].f);
            else for (int64_t k = 0; k < n; k++) out[k].f = (float)(x[k].f * y[k].f);
            return FLOW_NEXT;
        }
        for (int64_t k = 0; k < n; k++) out[k] = binary(op->code, x[k], y[k], d);
        return FLOW_NEXT;
    }
    case BIR_EQ: case BIR_NE: case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: {
        const Elem *x = V(I, a[0]), *y = V(I, a[1]);
        DType d = vtype(I, a[0]).dtype;
        for (int64_t k = 0; k < n; k++) out[k].i = compare(op->code, x[k], y[k], d);
        return FLOW_NEXT;
    }
    case BIR_NEG: case BIR_NOT: case BIR_ABS:
#define BIR_OP(...)
#define MATH_OP(ID, fn) case BIR_##ID:
#include "ops.def"
    {
        const Elem *x = V(I, a[0]);
        for (int64_t k = 0; k < n; k++) out[k] = unary(op->code, x[k], rt.dtype);
        return FLOW_NEXT;
    }
    case BIR_SELECT: {
        const Elem *c = V(I, a[0]), *x = V(I, a[1]), *y = V(I, a[2]);
        for (int64_t k = 0; k < n; k++) out[k] = c[k].i ? x[k] : y[k];
        return FLOW_NEXT;
    }
    case BIR_FMA: {
        const Elem *x = V(I, a[0]), *y = V(I, a[1]), *z = V(I, a[2]);
        for (int64_t k = 0; k < n; k++)
            out[k].f = rt.dtype == DT_F64 ? fma(x[k].f, y[k].f, z[k].f) : fmaf((float)x[k].f, (float)y[k].f, (float)z[k].f);
        return FLOW_NEXT;
    }
    case BIR_RAND: case BIR_RANDINT: {
        int64_t seed = V(I, a[0])[0].i;
        const Elem *off = V(I, a[1]);
        bool wide = vtype(I, a[1]).dtype == DT_I64; /* 32-bit offsets leave the high counter 0 */
        for (int64_t k = 0; k < n; k++) {
            uint64_t o = wide ? (uint64_t)off[k].i : (uint32_t)off[k].i;
            uint32_t w = philox_word(seed, o, (int)op->attr); /* attr: which of the draw's 4 words */
            if (op->code == BIR_RAND) out[k].f = philox_uniform(w);
            else out[k].i = w;
        }
        return FLOW_NEXT;
    }
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES:
        return exec_memory(I, op);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN:
        return exec_reduce(I, op);
    case BIR_CUMSUM: case BIR_CUMPROD: case BIR_REDUCE: case BIR_SCAN: return exec_combine(I, op);
    case BIR_FLIP: case BIR_RESHAPE: case BIR_TAKE: case BIR_PARTNER: return exec_rearrange(I, op);
    case BIR_GATHER: return exec_gather(I, op);
    case BIR_INLINE_ASM: return exec_inline_asm(I, op);
    case BIR_HISTOGRAM: return exec_histogram(I, op);
    case BIR_FOR: return exec_for(I, op);
    case BIR_WHILE: return exec_while(I, op);
    case BIR_IF: {
        const BirBlock *branch = op->regions[V(I, a[0])[0].i ? 0 : 1];
        Flow fl = exec_block(I, branch);
        if (fl != FLOW_NEXT) return fl;
        const BirOp *y = bir_block_terminator(branch);
        for (int i = 0; i < op->nresults; i++) copy_value(I, op, op->results[i], y->operands[i]); /* live */
        end_block(I, branch);
        return FLOW_NEXT;
    }
    case BIR_RETURN: return FLOW_RETURN;
    case BIR_YIELD: case BIR_CONDITION: return FLOW_NEXT; /* the parent reads the operands */
    case BIR_BARRIER: return FLOW_NEXT; /* a program's elements already move in lockstep */
    case BIR_PRINT: exec_print(I, op); return FLOW_NEXT;
    case BIR_GRID_DEPENDENCY: return FLOW_NEXT; /* launches run one after the other here */
    case BIR_ASSERT: { /* the first failing element (in row-major order) is named */
        BlkType t = vtype(I, a[0]);
        const Elem *cond = V(I, a[0]), *mask = a[1] != BIR_NONE ? V(I, a[1]) : NULL;
        for (int64_t k = 0; k < numel(t); k++) {
            if (cond[k].i || (mask && !mask[k].i)) continue;
            char idx[48] = "";
            if (t.rank) index_str(t, k, idx, sizeof idx);
            return fail(I, op, "device assertion failed%s%s%s%s%s", t.rank ? " at element " : "", idx,
                        op->text[0] ? ": \"" : "", op->text, op->text[0] ? "\"" : "");
        }
        return FLOW_NEXT;
    }
    case BIR_ASSUME: /* undefined behaviour on the GPU: the interpreter says so */
        if (!V(I, a[0])[0].i)
            return fail(I, op, "the condition of 'assume' is false here: the compiled kernel may compute anything");
        return FLOW_NEXT;
    case BIR_READ_COUNTER: { /* the interpreter is one "SM" (0); both clocks are the host's ns (C11's clock) */
        struct timespec ts = {0};
        timespec_get(&ts, TIME_UTC);
        out[0].i = op->attr == COUNTER_SMID ? 0 : (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        return FLOW_NEXT;
    }
    case BIR_OPCODE_COUNT: break;
    }
    return fail(I, op, "internal error: cannot run op '%s'", bir_opcode_name(op->code));
}

/* The work an op does, for the step budget: one per result element, and a
 * dot's inner products in full. */
static uint64_t op_steps(Interp *I, const BirOp *op) {
    if (op->nresults != 1) return 1;
    BlkType t = vtype(I, op->results[0]);
    uint64_t n = t.dtype == DT_VOID ? 1 : (uint64_t)numel(t);
    if (op->code == BIR_DOT) { /* k: a's last dimension */
        BlkType a = vtype(I, op->operands[0]);
        n *= (uint64_t)a.shape[a.rank - 1];
    }
    return n;
}

/* Runs b's ops, each value living from its op to its last use; the
 * terminator's operands stay for the parent (end_block). */
static Flow exec_block(Interp *I, const BirBlock *b) {
    int first = I->life.first_slot[block_index(&I->life, b)];
    release_slot(I, first); /* arguments nobody uses */
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (I->max_steps && (I->steps += op_steps(I, op)) > I->max_steps)
            return fail(I, op,
                        "the launch ran past its budget of %llu element operations (a longer one: "
                        "BLK_CPU_MAX_STEPS, or InterpOptions.max_steps)",
                        (unsigned long long)I->max_steps);
        for (int r = 0; r < op->nresults; r++)
            if (!define(I, op->results[r], op)) return FLOW_ERROR;
        Flow fl = exec_op(I, op);
        if (fl != FLOW_NEXT) return fl;
        if (i + 1 < b->ops.len) release_slot(I, first + 1 + i);
    }
    return FLOW_NEXT;
}

/* --------------------------------------------------------------- launch */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static char *launch_error(const BirFunction *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *launch_error(const BirFunction *f, const char *fmt, ...) {
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t cap = strlen(msg) + strlen(f->name) + 32;
    char *out = malloc(cap);
    if (out) snprintf(out, cap, "kernel '%s': %s", f->name, msg);
    return out;
}

/* Buffers without a name are called after the first pointer argument that
 * points into them (so "X" rather than "buffer 3"). Runs after the
 * arguments got their buffer tags. */
static void name_buffers(Interp *I, char (*fallback)[32]) {
    for (int b = 0; b < I->nbufs; b++) I->buf_names[b] = I->bufs[b].name;
    for (int p = 0; p < I->f->nparams; p++) {
        if (I->f->params[p].type.dtype != DT_PTR) continue;
        int tag = tag_of(I->vals[I->f->params[p].value][0].u);
        if (tag && !I->buf_names[tag - 1]) I->buf_names[tag - 1] = I->f->params[p].name;
    }
    for (int b = 0; b < I->nbufs; b++) {
        if (I->buf_names[b]) continue;
        snprintf(fallback[b], sizeof fallback[b], "buffer %d", b);
        I->buf_names[b] = fallback[b];
    }
}

/* Gives back every value but the parameters: a program that returned from
 * inside a loop or branch skipped the ends of the blocks it left. */
static void release_all(Interp *I) {
    for (int v = 0; v < I->f->nvalues; v++)
        if (!I->life.pinned[v]) release(I, v);
}

static char *launch(const BirFunction *f, const InterpArg *args, int nargs, const uint32_t grid[3],
                    const InterpBuffer *bufs, int nbufs, const InterpOptions *opt, InterpReport *report) {
    if (nargs != f->nparams)
        return launch_error(f, "takes %d runtime arguments, got %d", f->nparams, nargs);
    uint64_t plane = (uint64_t)grid[0] * grid[1]; /* < 2^64: each side is below 2^32 */
    if (plane == 0 || grid[2] == 0) return launch_error(f, "the grid (%u, %u, %u) is empty", grid[0], grid[1], grid[2]);
    if (plane > UINT64_MAX / grid[2])
        return launch_error(f, "the grid (%u, %u, %u) has 2^64 programs or more", grid[0], grid[1], grid[2]);
    uint64_t total = plane * grid[2];
    report->outcome = INTERP_FAULT;
    Interp I = {.f = f, .bufs = bufs, .nbufs = nbufs, .last_buf = -1};
    memcpy(I.grid, grid, sizeof I.grid);
    I.print_out = opt && opt->print_out ? opt->print_out : stdout;
    I.max_loop_iterations = opt && opt->max_loop_iterations ? opt->max_loop_iterations : INTERP_MAX_LOOP_ITERATIONS;
    I.max_steps = opt ? opt->max_steps : 0;
    I.max_bytes = opt && opt->max_bytes ? opt->max_bytes : INTERP_MAX_BYTES;
    char *err = NULL;
    I.vals = calloc((size_t)f->nvalues + 1, sizeof *I.vals);
    I.buf_names = calloc((size_t)nbufs + 1, sizeof *I.buf_names);
    char(*fallback)[32] = calloc((size_t)nbufs + 1, sizeof *fallback);
    uint32_t *order = NULL;
    bool ok = I.vals && I.buf_names && fallback && lifetimes_init(&I.life, f) &&
              (I.pool = calloc((size_t)I.life.nclasses + 1, sizeof *I.pool));
    if (!ok) {
        I.out_of_memory = true;
        err = launch_error(f, "out of memory for the interpreter's tables");
        goto done;
    }
    /* the parameters, set once, live for the whole launch */
    for (int a = 0; a < f->body->nargs && !I.error; a++)
        if (define(&I, f->body->args[a], NULL)) I.npinned++;
    if (I.error) {
        err = I.error;
        goto done;
    }
    if (opt && opt->shuffle) {
        if (total > UINT32_MAX || !(order = malloc((size_t)total * sizeof *order))) {
            I.out_of_memory = true;
            err = launch_error(f, "out of memory for the order of %llu programs", (unsigned long long)total);
            goto done;
        }
        for (uint64_t k = 0; k < total; k++) order[k] = (uint32_t)k;
        uint64_t state = opt->shuffle_seed;
        for (uint64_t k = total - 1; k > 0; k--) {
            uint64_t j = splitmix64(&state) % (k + 1);
            uint32_t t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
    }
    for (int p = 0; p < f->nparams; p++) {
        Elem *slot = I.vals[f->params[p].value];
        DType d = f->params[p].type.dtype;
        if (d == DT_PTR) {
            uint64_t a = (uint64_t)(uintptr_t)args[p].p;
            if (a > ADDR_MASK) {
                err = launch_error(f, "pointer argument '%s' (%p) is above the 48-bit addresses the "
                                   "interpreter tracks", f->params[p].name, args[p].p);
                goto done;
            }
            /* the buffer it points into, else one it ends (arrays may be adjacent) */
            int tag = 0;
            for (int b = 0; b < nbufs && !tag && nbufs < MAX_TAG; b++)
                if (in_buf(&bufs[b], a, a + 1)) tag = b + 1;
            for (int b = 0; b < nbufs && !tag && nbufs < MAX_TAG; b++)
                if (in_buf(&bufs[b], a, a)) tag = b + 1;
            slot->u = a | (uint64_t)tag << ADDR_BITS;
        }
        else if (d == DT_F64) slot->f = args[p].f;
        else if (dtype_is_float(d)) /* rounded to the parameter's type, as `as` would */
            slot->f = convert_scalar((ConstVal){.f = (float)args[p].f}, DT_F32, d).f;
        else slot->i = int_wrap(args[p].i, d);
    }
    name_buffers(&I, fallback);
    for (uint64_t k = 0; k < total; k++) {
        uint64_t lin = order ? order[k] : k;
        I.pid[0] = (uint32_t)(lin % grid[0]);
        I.pid[1] = (uint32_t)(lin / grid[0] % grid[1]);
        I.pid[2] = (uint32_t)(lin / grid[0] / grid[1]);
        if (exec_block(&I, f->body) == FLOW_ERROR) break;
        end_block(&I, f->body);
        if (I.nlive > I.npinned) release_all(&I);
    }
    err = I.error;
done:
    report->outcome = I.out_of_memory ? INTERP_OUT_OF_MEMORY : err ? INTERP_FAULT : INTERP_OK;
    report->peak_bytes = I.peak;
    for (int v = 0; I.vals && v < f->nvalues; v++) free(I.vals[v]);
    if (I.pool) drain_pools(&I);
    free(I.pool);
    free(I.vals);
    lifetimes_free(&I.life);
    free(I.buf_names);
    free(fallback);
    free(order);
    free(I.reduce_tmp);
    return err;
}

char *interp_launch(const BirFunction *f, const InterpArg *args, int nargs, const uint32_t grid[3],
                    const InterpBuffer *bufs, int nbufs, const InterpOptions *opt) {
    InterpReport report = {INTERP_FAULT, 0}; /* refused before running: bad arguments or grid */
    char *err = launch(f, args, nargs, grid, bufs, nbufs, opt, &report);
    if (opt && opt->report) *opt->report = report;
    return err;
}
