/* bir.c: the block IR's builder, its text form (--emit=bir) and its verifier.
 * The IR itself is declared in blkc.h; docs/architecture.md describes it. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "blkc.h"

static const BirOpInfo ops[BIR_OPCODE_COUNT] = {
#define BIR_OP(ID, name, kind, operands, optional_from, mask_at, results, regions, types, axis) \
    [BIR_##ID] = {name, BIR_KIND_##kind, operands, optional_from, mask_at, results, regions, BIR_TYPES_##types,   \
                  BIR_AXIS_##axis},
#include "ops.def"
};

const BirOpInfo *bir_op_info(BirOpcode code) { return &ops[code]; }

BlkType bir_axis_shape(BirOpcode code, BlkType x, int axis) {
    BirAxisRule rule = ops[code].axis;
    if (rule != BIR_AXIS_REMOVE && rule != BIR_AXIS_ADD) return x;
    int32_t shape[BLK_MAX_RANK + 1];
    int rank = 0;
    for (int d = 0; d <= x.rank; d++) {
        if (d == axis && rule == BIR_AXIS_ADD) shape[rank++] = 1;
        if (d < x.rank && (d != axis || rule == BIR_AXIS_ADD)) shape[rank++] = x.shape[d];
    }
    return type_with_shape(x, rank, shape);
}

const char *bir_opcode_name(BirOpcode code) { return code < BIR_OPCODE_COUNT ? ops[code].name : "?"; }

bool bir_is_elementwise(BirOpcode code) {
    return ops[code].kind == BIR_KIND_ELEMENTWISE || ops[code].kind == BIR_KIND_MATH;
}

bool bir_has_effect(BirOpcode code) {
    switch (ops[code].kind) {
    case BIR_KIND_MEMORY: case BIR_KIND_CONTROL: case BIR_KIND_TERMINATOR: case BIR_KIND_EFFECT: return true;
    case BIR_KIND_LEAF: case BIR_KIND_SHAPE: case BIR_KIND_ELEMENTWISE: case BIR_KIND_MATH: case BIR_KIND_REDUCE:
    case BIR_KIND_DOT:
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- builder */

int bir_value_new(BirFunction *f, BlkType type, const char *name) {
    if (f->nvalues == f->values_cap) {
        int cap = f->values_cap ? f->values_cap * 2 : 64;
        BirValue *v = arena_alloc(f->arena, (size_t)cap * sizeof *v);
        if (f->nvalues) memcpy(v, f->values, (size_t)f->nvalues * sizeof *v);
        f->values = v;
        f->values_cap = cap;
    }
    f->values[f->nvalues] = (BirValue){type, name, NULL};
    return f->nvalues++;
}

BirOp *bir_append(BirFunction *f, BirBlock *b, BirOpcode code, const int *operands, int n,
                  const BlkType *result_type) {
    BirOp *op = arena_alloc(f->arena, sizeof *op);
    op->code = code;
    if (n) {
        op->operands = arena_alloc(f->arena, (size_t)n * sizeof(int));
        memcpy(op->operands, operands, (size_t)n * sizeof(int));
        op->noperands = n;
    }
    if (result_type && result_type->dtype != DT_VOID) {
        op->results = arena_alloc(f->arena, sizeof(int));
        op->results[0] = bir_value_new(f, *result_type, NULL);
        f->values[op->results[0]].def = op;
        op->nresults = 1;
    }
    ptrvec_push(f->arena, &b->ops, op);
    return op;
}

BirBlock *bir_block_new(BirFunction *f) { return arena_alloc(f->arena, sizeof(BirBlock)); }

int bir_block_add_arg(BirFunction *f, BirBlock *b, BlkType type, const char *name) {
    int *args = arena_alloc(f->arena, (size_t)(b->nargs + 1) * sizeof(int));
    if (b->nargs) memcpy(args, b->args, (size_t)b->nargs * sizeof(int));
    args[b->nargs] = bir_value_new(f, type, name);
    b->args = args;
    return args[b->nargs++];
}

static bool is_terminator(BirOpcode c) { return ops[c].kind == BIR_KIND_TERMINATOR; }

BirOp *bir_block_terminator(const BirBlock *b) {
    if (b->ops.len == 0) return NULL;
    BirOp *last = b->ops.items[b->ops.len - 1];
    return is_terminator(last->code) ? last : NULL;
}

static bool block_waits_on_grid(const BirBlock *b) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == BIR_GRID_DEPENDENCY && op->attr == GRID_WAIT) return true;
        for (int r = 0; r < op->nregions; r++)
            if (block_waits_on_grid(op->regions[r])) return true;
    }
    return false;
}

bool bir_waits_on_grid(const BirFunction *f) { return block_waits_on_grid(f->body); }

/* -------------------------------------------------------- dead op removal */

static void count_uses(const BirBlock *b, int *uses) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->noperands; k++)
            if (op->operands[k] >= 0) uses[op->operands[k]]++;
        for (int r = 0; r < op->nregions; r++) count_uses(op->regions[r], uses);
    }
}

static bool sweep(BirBlock *b, const int *uses) {
    bool changed = false;
    int kept = 0;
    for (int i = 0; i < b->ops.len; i++) {
        BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) changed |= sweep(op->regions[r], uses);
        if (!bir_has_effect(op->code) && op->nresults == 1 && uses[op->results[0]] == 0) {
            changed = true;
            continue;
        }
        b->ops.items[kept++] = op;
    }
    b->ops.len = kept;
    return changed;
}

void bir_remove_dead_ops(BirFunction *f) {
    int *uses = malloc((size_t)(f->nvalues + 1) * sizeof(int));
    if (!uses) return; /* an optimization only */
    bool changed = true;
    while (changed) {
        memset(uses, 0, (size_t)(f->nvalues + 1) * sizeof(int));
        count_uses(f->body, uses);
        changed = sweep(f->body, uses);
    }
    free(uses);
}

/* ------------------------------------------- loop-invariant shape ops */

static void mark_defined(const BirBlock *b, bool *inside, bool value) {
    for (int i = 0; i < b->nargs; i++) inside[b->args[i]] = value;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        for (int k = 0; k < op->nresults; k++) inside[op->results[k]] = value;
        for (int r = 0; r < op->nregions; r++) mark_defined(op->regions[r], inside, value);
    }
}

static bool hoistable(const BirOp *op, const bool *inside) {
    if (op->code != BIR_SPLAT && op->code != BIR_EXPAND_DIMS && op->code != BIR_BROADCAST && op->code != BIR_TRANS)
        return false;
    for (int k = 0; k < op->noperands; k++)
        if (op->operands[k] >= 0 && inside[op->operands[k]]) return false;
    return true;
}

static void hoist_block(BirFunction *f, BirBlock *b, bool *inside) {
    PtrVec out = {0};
    for (int i = 0; i < b->ops.len; i++) {
        BirOp *op = b->ops.items[i];
        for (int r = 0; r < op->nregions; r++) hoist_block(f, op->regions[r], inside); /* inner loops first */
        if (op->code == BIR_FOR || op->code == BIR_WHILE) {
            for (int r = 0; r < op->nregions; r++) mark_defined(op->regions[r], inside, true);
            for (int r = 0; r < op->nregions; r++) {
                BirBlock *body = op->regions[r];
                PtrVec kept = {0};
                for (int j = 0; j < body->ops.len; j++) {
                    BirOp *x = body->ops.items[j];
                    if (hoistable(x, inside)) {
                        ptrvec_push(f->arena, &out, x);
                        for (int k = 0; k < x->nresults; k++) inside[x->results[k]] = false;
                    } else {
                        ptrvec_push(f->arena, &kept, x);
                    }
                }
                body->ops = kept;
            }
            for (int r = 0; r < op->nregions; r++) mark_defined(op->regions[r], inside, false);
        }
        ptrvec_push(f->arena, &out, op);
    }
    b->ops = out;
}

void bir_hoist_invariant_shapes(BirFunction *f) {
    bool *inside = calloc((size_t)f->nvalues + 1, sizeof *inside);
    if (!inside) return; /* an optimization only */
    hoist_block(f, f->body, inside);
    free(inside);
}

/* ------------------------------------------------------------------ print */

typedef struct {
    FILE *out;
    const BirFunction *f;
    char **names;      /* printed name of each value */
    uint32_t last_line;
    uint32_t scan_line; /* where the source scan stopped: the start of this line (0: not yet) */
    const char *scan_at;
    char *line;        /* the op line being built */
    size_t len, cap;
    BirValueNote note; /* or NULL */
    void *note_ctx;
} Printer;

static void put(Printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Printer *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (p->len + (size_t)n + 1 > p->cap) {
        size_t cap = (p->len + (size_t)n + 1) * 2;
        char *grown = realloc(p->line, cap);
        if (!grown) return;
        p->line = grown;
        p->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(p->line + p->len, p->cap - p->len, fmt, ap);
    va_end(ap);
    p->len += (size_t)n;
}

/* Writes the built line, with the source line number in a column. */
static void put_note(Printer *p, int v) {
    if (!p->note) return;
    char buf[256] = "";
    p->note(p->note_ctx, v, buf, sizeof buf);
    if (buf[0]) put(p, " %s", buf);
}

static void flush_line(Printer *p, uint32_t line) {
    enum { COMMENT_COLUMN = 60 };
    fputs(p->len ? p->line : "", p->out);
    if (line) fprintf(p->out, "%*s; line %u", p->len < COMMENT_COLUMN ? (int)(COMMENT_COLUMN - p->len) : 1, "", line);
    fputc('\n', p->out);
    p->len = 0;
}

/* "%offs" for the first value bound to `offs`, "%offs.12" for later ones,
 * "%12" for unnamed values. */
/* A value keeps its source name unless an earlier value has it; then the
 * name gets its number. Names seen so far live in a hash set, so this is
 * linear in the kernel's size. */
static void assign_names(Printer *p) {
    const BirFunction *f = p->f;
    p->names = calloc((size_t)f->nvalues, sizeof(char *));
    size_t cap = 16;
    while (cap < 2 * (size_t)f->nvalues) cap *= 2;
    const char **seen = calloc(cap, sizeof *seen);
    for (int i = 0; i < f->nvalues && p->names && seen; i++) {
        const char *n = f->values[i].name;
        bool taken = false;
        if (n) {
            size_t slot = str_hash(n) & (cap - 1);
            while (seen[slot] && !(taken = strcmp(seen[slot], n) == 0)) slot = (slot + 1) & (cap - 1);
            if (!taken) seen[slot] = n;
        }
        char buf[96];
        if (!n) snprintf(buf, sizeof buf, "%%%d", i);
        else if (taken) snprintf(buf, sizeof buf, "%%%s.%d", n, i);
        else snprintf(buf, sizeof buf, "%%%s", n);
        size_t len = strlen(buf) + 1;
        if ((p->names[i] = malloc(len))) memcpy(p->names[i], buf, len);
    }
    free(seen);
}

static const char *vname(Printer *p, int v) {
    if (v == BIR_NONE) return "none";
    return p->names && p->names[v] ? p->names[v] : "%?";
}

static void put_type(Printer *p, BlkType t) {
    char buf[64];
    put(p, "%s", type_str(t, buf, sizeof buf));
}

static void indent(Printer *p, int depth) { put(p, "%*s", 2 * depth, ""); }

/* The source text of a line, as a comment above the ops it produced. */
static void print_source_line(Printer *p, uint32_t line, int depth) {
    const Source *src = p->f->src;
    if (!src || line == 0 || line == p->last_line) return;
    p->last_line = line;
    /* lines mostly come in order: go on from the last one, so printing stays linear */
    const char *s = src->text, *end = src->text + src->len;
    uint32_t l = 1;
    if (p->scan_line && p->scan_line <= line) s = p->scan_at, l = p->scan_line;
    for (; l < line && s < end; s++)
        if (*s == '\n') l++;
    p->scan_line = l, p->scan_at = s;
    while (s < end && (*s == ' ' || *s == '\t')) s++;
    const char *e = s;
    while (e < end && *e != '\n') e++;
    indent(p, depth);
    put(p, "// %u: %.*s", line, (int)(e - s), s);
    flush_line(p, 0);
}

static void print_block(Printer *p, const BirBlock *b, int depth);

static void put_const(Printer *p, const BirOp *op, BlkType t) {
    if (dtype_is_float(t.dtype)) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.9g", op->value.f);
        if (!strpbrk(buf, ".eEni")) strcat(buf, ".0"); /* keep it recognizable as a float */
        put(p, "%s", buf);
    } else if (t.dtype == DT_I1) {
        put(p, "%s", op->value.i ? "true" : "false");
    } else {
        put(p, "%lld", (long long)op->value.i);
    }
}

static void put_operands(Printer *p, const BirOp *op, int from) {
    for (int i = from; i < op->noperands; i++)
        put(p, "%s%s", i > from ? ", " : "", vname(p, op->operands[i]));
}

/* An atomic's sem and scope where they are not the defaults (acq_rel, gpu). */
static void put_atomic_order(Printer *p, const BirOp *op) {
    if (atomic_sem_of(op->attr) != ATOMIC_ACQ_REL) put(p, ", sem %s", atomic_sem_names[atomic_sem_of(op->attr)]);
    if (atomic_scope_of(op->attr) != ATOMIC_GPU) put(p, ", scope %s", atomic_scope_names[atomic_scope_of(op->attr)]);
}

static void print_op(Printer *p, const BirOp *op, int depth) {
    print_source_line(p, op->span.line, depth);
    indent(p, depth);
    for (int i = 0; i < op->nresults; i++) put(p, "%s%s", i ? ", " : "", vname(p, op->results[i]));
    if (op->nresults) put(p, " = ");
    put(p, "%s", bir_opcode_name(op->code));
    const BirFunction *f = p->f;
    switch (op->code) {
    case BIR_CONST:
        put(p, " ");
        put_const(p, op, f->values[op->results[0]].type);
        break;
    case BIR_PROGRAM_ID: case BIR_NUM_PROGRAMS: case BIR_ARANGE:
        put(p, " %lld", (long long)op->attr);
        break;
    case BIR_HISTOGRAM:
        put(p, " %s", vname(p, op->operands[0]));
        if (op->operands[1] != BIR_NONE) put(p, ", mask %s", vname(p, op->operands[1]));
        put(p, ", %lld bins", (long long)op->attr);
        break;
    case BIR_TAKE: case BIR_PARTNER:
        put(p, " ");
        put_operands(p, op, 0);
        put(p, ", axis %lld, %s %lld", (long long)op->attr, op->code == BIR_TAKE ? "index" : "xor",
            (long long)op->value.i);
        break;
    case BIR_LOAD: case BIR_STORE: case BIR_ATOMIC_RMW_CASES: {
        /* the optional operands are shown by name */
        int fixed = op->code == BIR_LOAD ? 1 : 2;
        put(p, " ");
        for (int i = 0; i < fixed; i++) put(p, "%s%s", i ? ", " : "", vname(p, op->operands[i]));
        if (op->noperands > fixed && op->operands[fixed] != BIR_NONE)
            put(p, ", mask %s", vname(p, op->operands[fixed]));
        if (op->code == BIR_LOAD && op->noperands > 2 && op->operands[2] != BIR_NONE)
            put(p, ", other %s", vname(p, op->operands[2]));
        if (bir_is_atomic(op->code)) put_atomic_order(p, op);
        else if (op->attr) { /* cache controls */
            if (memory_cache_of(op->attr)) put(p, ", cache %s", cache_modifier_names[memory_cache_of(op->attr)]);
            if (memory_eviction_of(op->attr)) put(p, ", %s", eviction_policy_names[memory_eviction_of(op->attr)]);
            if (op->attr & MEMORY_VOLATILE) put(p, ", volatile");
        }
        break;
    }
    case BIR_ATOMIC_CAS:
        put(p, " ");
        put_operands(p, op, 0);
        put_atomic_order(p, op);
        break;
    case BIR_DOT:
        put(p, " ");
        put_operands(p, op, 0);
        if ((op->attr & DOT_PRECISION_MASK) != DOT_IEEE)
            put(p, ", precision %s", (op->attr & DOT_PRECISION_MASK) == DOT_TF32 ? "tf32" : "tf32x3");
        if (op->attr >> DOT_IMPRECISE_SHIFT)
            put(p, ", max_num_imprecise_acc %lld", (long long)(op->attr >> DOT_IMPRECISE_SHIFT));
        break;
    case BIR_FOR:
        put(p, " %s = %s to %s step %s", vname(p, op->regions[0]->args[0]), vname(p, op->operands[0]),
            vname(p, op->operands[1]), vname(p, op->operands[2]));
        if (op->attr & FOR_DESCENDING) put(p, " descending");
        if (for_unroll_of(op->attr)) put(p, " unroll %d", for_unroll_of(op->attr));
        break;
    case BIR_RAND: case BIR_RANDINT:
        put(p, " ");
        put_operands(p, op, 0);
        if (op->attr) put(p, ", word %lld", (long long)op->attr);
        break;
    case BIR_READ_COUNTER:
        put(p, " %s", op->attr == COUNTER_GLOBALTIMER ? "globaltimer" : op->attr == COUNTER_CLOCK ? "clock" : "smid");
        break;
    case BIR_PRINT:
        put(p, " \"%s\"%s", op->text, op->noperands ? ", " : "");
        put_operands(p, op, 0);
        break;
    case BIR_GRID_DEPENDENCY:
        put(p, " %s", op->attr == GRID_WAIT ? "wait" : "launch_dependents");
        break;
    case BIR_INLINE_ASM:
        put(p, " \"%s\", \"%s\", ", op->text, op->asm_constraints);
        put_operands(p, op, 0);
        if (op->attr & ASM_PURE) put(p, ", pure");
        if (asm_pack_of(op->attr) > 1) put(p, ", pack %d", asm_pack_of(op->attr));
        if (op->nregions) put(p, ", reference");
        break;
    case BIR_ASSERT:
        put(p, " ");
        put_operands(p, op, 0);
        if (op->text[0]) put(p, ", \"%s\"", op->text);
        break;
    case BIR_TRANS: {
        put(p, " ");
        put_operands(p, op, 0);
        if (!op->attr) break; /* the last two dimensions swapped */
        int rank = f->values[op->results[0]].type.rank;
        put(p, ", dims [");
        for (int d = 0; d < rank; d++) put(p, "%s%d", d ? ", " : "", trans_from(op->attr, rank, d));
        put(p, "]");
        break;
    }
    default:
        if (op->noperands) put(p, " ");
        put_operands(p, op, 0);
        if ((unsigned)op->code < BIR_OPCODE_COUNT && ops[op->code].axis != BIR_AXIS_NONE)
            put(p, ", axis %lld", (long long)op->attr);
        break;
    }
    if (op->nresults) {
        put(p, " : ");
        for (int i = 0; i < op->nresults; i++) {
            if (i) put(p, ", ");
            put_type(p, f->values[op->results[i]].type);
            put_note(p, op->results[i]);
        }
    }
    for (int r = 0; r < op->nregions; r++) {
        const BirBlock *b = op->regions[r];
        const char *label = op->code == BIR_IF ? (r ? "else" : "then")
                          : op->code == BIR_WHILE ? (r ? "do" : "cond")
                          : op->code == BIR_REDUCE || op->code == BIR_SCAN ? "combine" : "do";
        if (r) indent(p, depth);
        else put(p, " ");
        put(p, "%s", label);
        /* a loop's carried values: region argument <- initial value */
        int first = op->code == BIR_FOR ? 1 : 0, init = op->code == BIR_FOR ? 3 : 0;
        if (b->nargs > first) {
            put(p, " (");
            for (int i = first; i < b->nargs; i++) {
                put(p, "%s%s: ", i > first ? ", " : "", vname(p, b->args[i]));
                put_type(p, f->values[b->args[i]].type);
                put_note(p, b->args[i]);
                bool carried = op->code == BIR_FOR || op->code == BIR_WHILE;
                if (carried && init + i - first < op->noperands)
                    put(p, " = %s", vname(p, op->operands[init + i - first]));
            }
            put(p, ")");
        }
        put(p, " {");
        flush_line(p, r == 0 ? op->span.line : 0);
        print_block(p, b, depth + 1);
        indent(p, depth);
        put(p, "}");
        flush_line(p, 0);
        p->last_line = 0; /* show the source again after a region */
    }
    if (!op->nregions) flush_line(p, op->span.line);
}

static void print_block(Printer *p, const BirBlock *b, int depth) {
    for (int i = 0; i < b->ops.len; i++) print_op(p, b->ops.items[i], depth);
}

void bir_print(FILE *out, const BirFunction *f) { bir_print_noted(out, f, NULL, NULL); }

void bir_print_noted(FILE *out, const BirFunction *f, BirValueNote note, void *ctx) {
    Printer p = {.out = out, .f = f, .note = note, .note_ctx = ctx};
    assign_names(&p);
    put(&p, "kernel @%s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
        const BirParam *prm = &f->params[i];
        put(&p, "%s%s: ", i ? ", " : "", vname(&p, prm->value));
        put_type(&p, prm->type);
        if (prm->align) put(&p, " align %lld", (long long)prm->align);
        if (prm->multiple_of) put(&p, " multiple_of %lld", (long long)prm->multiple_of);
        if (prm->equal_one) put(&p, " equal 1");
    }
    put(&p, ") {");
    flush_line(&p, 0);
    if (f->consts && *f->consts) {
        put(&p, "  // const %s", f->consts);
        flush_line(&p, 0);
    }
    print_block(&p, f->body, 1);
    put(&p, "}");
    flush_line(&p, 0);
    for (int i = 0; p.names && i < f->nvalues; i++) free(p.names[i]);
    free(p.names);
    free(p.line);
}

/* ----------------------------------------------------------------- verify */

typedef struct {
    const BirFunction *f;
    char *err;
    size_t err_size;
    bool *defined;    /* values visible at the current point */
    bool *ever;       /* values defined anywhere: each is defined once */
    const BirOp *op;  /* the op being checked, for messages */
} Verifier;

static bool fail(Verifier *V, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Verifier *V, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (V->op)
        snprintf(V->err, V->err_size, "kernel %s, line %u, op '%s': %s", V->f->name, V->op->span.line,
                 bir_opcode_name(V->op->code), msg);
    else
        snprintf(V->err, V->err_size, "kernel %s: %s", V->f->name, msg);
    return false;
}

static BlkType vt(Verifier *V, int v) { return V->f->values[v].type; }

static bool define(Verifier *V, int v) {
    if (v < 0 || v >= V->f->nvalues) return fail(V, "result %d is not a value", v);
    if (V->ever[v]) return fail(V, "value %%%d is defined twice", v);
    V->ever[v] = V->defined[v] = true;
    return true;
}

static bool is_num(DType d) { return dtype_is_int(d) || dtype_is_float(d); }

/* Result type = operand type, all operands alike. */
static bool same_types(Verifier *V, const BirOp *op, int n) {
    BlkType r = vt(V, op->results[0]);
    for (int i = 0; i < n; i++)
        if (!type_equal(vt(V, op->operands[i]), r)) return fail(V, "operand %d's type differs from the result's", i);
    return true;
}

static bool mask_ok(Verifier *V, int mask, BlkType like) {
    if (mask == BIR_NONE) return true;
    BlkType m = vt(V, mask);
    if (m.dtype != DT_I1 || !shape_equal(m, like)) return fail(V, "the mask must be i1 of the pointer's shape");
    return true;
}

/* The value type a pointer block points to: elem dtype, ptr's shape. */
static BlkType pointee(BlkType p) {
    return type_with_shape(type_scalar(p.elem), p.rank, p.shape);
}

static bool verify_block(Verifier *V, const BirBlock *b, const BirOp *parent, int region);

static bool yields_match(Verifier *V, const BirBlock *region, const int *types_of, int n) {
    const BirOp *t = bir_block_terminator(region);
    if (!t || t->code == BIR_RETURN) return true; /* return: nothing flows on */
    if (t->noperands != n) return fail(V, "the region yields %d values, expected %d", t->noperands, n);
    for (int i = 0; i < n; i++)
        if (!type_equal(vt(V, t->operands[i]), vt(V, types_of[i])))
            return fail(V, "yielded value %d has the wrong type", i);
    return true;
}

/* An elementwise op whose types follow its ops.def rule (its arity is
 * verify_op's): every operand has the result's type, of the rule's class;
 * a comparison's operands share one type and its result is their i1. */
static bool verify_type_rule(Verifier *V, const BirOp *op, BirTypeRule rule) {
    BlkType r = vt(V, op->results[0]);
    DType d = r.dtype;
    switch (rule) {
    case BIR_TYPES_COMPARE: {
        BlkType x = vt(V, op->operands[0]);
        if (d != DT_I1 || !shape_equal(x, r)) return fail(V, "a comparison gives i1 of the operands' shape");
        if (!type_equal(x, vt(V, op->operands[1]))) return fail(V, "compared operands have one type");
        if (x.dtype == DT_PTR && op->code != BIR_EQ && op->code != BIR_NE) return fail(V, "pointers compare with eq/ne only");
        return true;
    }
    case BIR_TYPES_NUMBER: if (!is_num(d)) return fail(V, "on numbers"); break;
    case BIR_TYPES_BITS: if (!dtype_is_int(d) && d != DT_I1) return fail(V, "bitwise on integers or i1"); break;
    case BIR_TYPES_INTEGER: if (!dtype_is_int(d)) return fail(V, "on integers"); break;
    case BIR_TYPES_INT32: if (d != DT_I32 && d != DT_U32) return fail(V, "on 32-bit integers"); break;
    case BIR_TYPES_F32: if (d != DT_F32) return fail(V, "on f32"); break;
    case BIR_TYPES_FLOAT: if (d != DT_F32 && d != DT_F64) return fail(V, "computes in f32 or f64"); break;
    case BIR_TYPES_MATH:
        if (d != DT_F32 && !(d == DT_F64 && blk_math_has_f64(op->code)))
            return fail(V, "math functions compute in f32 (the exact ones also in f64)");
        break;
    case BIR_TYPES_OWN: return fail(V, "internal: no type rule for %s", ops[op->code].name);
    }
    return same_types(V, op, op->noperands);
}

/* ops.def's AXIS column: attr is an axis of operand 0 (of the result, for
 * ADD), and the result's shape follows from it; an op of n operands and n
 * results (reduce, scan) follows the rule for each pair. Dtypes are
 * verify_types' concern. */
static bool verify_axis(Verifier *V, const BirOp *op) {
    BirAxisRule rule = ops[op->code].axis;
    if (rule == BIR_AXIS_NONE) return true;
    if (op->noperands < 1 || op->nresults < 1) return fail(V, "an op along an axis has an operand and a result");
    int pairs = op->nresults == op->noperands ? op->nresults : 1;
    for (int i = 0; i < pairs; i++) {
        BlkType x = vt(V, op->operands[i]), r = vt(V, op->results[i]);
        int rank = rule == BIR_AXIS_ADD ? x.rank + 1 : x.rank;
        if (rule == BIR_AXIS_ADD && x.rank == BLK_MAX_RANK)
            return fail(V, "operand %d has %d dimensions, the most a block has", i, BLK_MAX_RANK);
        if (x.rank < 1 || op->attr < 0 || op->attr >= rank)
            return fail(V, "axis %lld is not one of the %s's %d dimensions", (long long)op->attr,
                        rule == BIR_AXIS_ADD ? "result" : "operand", rank);
        int axis = (int)op->attr;
        switch (rule) {
        case BIR_AXIS_KEEP:
            if (!shape_equal(x, r)) return fail(V, "result %d keeps operand %d's shape", i, i);
            break;
        case BIR_AXIS_REMOVE:
            if (!shape_equal(r, bir_axis_shape(op->code, x, axis)))
                return fail(V, "result %d is operand %d without axis %d", i, i, axis);
            break;
        case BIR_AXIS_ADD:
            if (!shape_equal(r, bir_axis_shape(op->code, x, axis)))
                return fail(V, "result %d is operand %d with a dimension of size 1 at %d", i, i, axis);
            break;
        case BIR_AXIS_INDEX: case BIR_AXIS_NONE: break; /* the index's shape: gather's own case */
        }
    }
    return true;
}

static bool verify_types(Verifier *V, const BirOp *op) {
    int n = op->noperands;
    const int *a = op->operands;
    BlkType r = op->nresults ? vt(V, op->results[0]) : type_scalar(DT_VOID);
#define NEED(cond, ...) do { if (!(cond)) return fail(V, __VA_ARGS__); } while (0)
#define ARITY(k) NEED(n == (k), "expected %d operands, got %d", (k), n)
    switch (op->code) {
    case BIR_CONST:
        ARITY(0);
        NEED(r.rank == 0 && (is_num(r.dtype) || dtype_is_fp8(r.dtype) || r.dtype == DT_I1), "a constant is a numeric scalar");
        return true;
    case BIR_PROGRAM_ID: case BIR_NUM_PROGRAMS:
        ARITY(0);
        NEED(op->attr >= 0 && op->attr <= 2 && r.dtype == DT_I32 && r.rank == 0, "an i32 for axis 0-2");
        return true;
    case BIR_ARANGE:
        ARITY(0);
        NEED(r.dtype == DT_I32 && r.rank == 1 && is_pow2(r.shape[0]), "a rank-1 i32 power-of-two block");
        return true;
    case BIR_SPLAT:
        ARITY(1);
        NEED(vt(V, a[0]).rank == 0 && r.rank > 0, "splat makes a block of a scalar");
        NEED(type_equal(type_with_shape(r, 0, NULL), vt(V, a[0])), "splat keeps the dtype");
        return true;
    case BIR_EXPAND_DIMS: case BIR_TAKE: /* their shapes: verify_axis */
        NEED(type_equal(type_with_shape(r, 0, NULL), type_with_shape(vt(V, a[0]), 0, NULL)), "dtype kept");
        NEED(op->code != BIR_TAKE || (op->value.i >= 0 && op->value.i < vt(V, a[0]).shape[op->attr]),
             "take's index is inside its axis");
        return true;
    case BIR_BROADCAST: {
        ARITY(1);
        BlkType x = vt(V, a[0]);
        NEED(x.rank == r.rank && x.rank > 0, "broadcast keeps the rank");
        for (int i = 0; i < r.rank; i++)
            NEED(x.shape[i] == r.shape[i] || x.shape[i] == 1, "dimension %d cannot broadcast", i);
        NEED(type_equal(type_with_shape(r, 0, NULL), type_with_shape(x, 0, NULL)), "dtype kept");
        return true;
    }
    case BIR_TRANS: {
        ARITY(1);
        BlkType x = vt(V, a[0]);
        NEED(x.rank >= 2 && r.rank == x.rank, "trans reorders the dimensions of a 2-D or 3-D block");
        unsigned seen = 0;
        for (int d = 0; d < r.rank; d++) {
            int from = trans_from(op->attr, r.rank, d);
            NEED(from < r.rank && !(seen & 1u << from), "trans's order names dimension %d twice or none of %d", from,
                 r.rank);
            NEED(r.shape[d] == x.shape[from], "trans's result dimension %d is not the operand's dimension %d", d, from);
            seen |= 1u << from;
        }
        NEED(op->attr == 0 || op->attr < (INT64_C(1) << (TRANS_FROM_SHIFT + 2 * r.rank)), "trans's order has %d dimensions",
             r.rank);
        NEED(type_equal(type_with_shape(r, 0, NULL), type_with_shape(x, 0, NULL)), "dtype kept");
        return true;
    }
    case BIR_FLIP: case BIR_PARTNER: {
        BlkType x = vt(V, a[0]);
        NEED(type_equal(x, r), "keeps its operand's type");
        NEED(op->code == BIR_FLIP || (op->value.i > 0 && op->value.i < x.shape[op->attr]),
             "partner's xor is below the axis' size");
        return true;
    }
    case BIR_RESHAPE:
        ARITY(1);
        NEED(type_numel(vt(V, a[0])) == type_numel(r) && vt(V, a[0]).rank >= 1 && r.rank >= 1,
             "reshape keeps the number of elements");
        NEED(type_equal(type_with_shape(r, 0, NULL), type_with_shape(vt(V, a[0]), 0, NULL)), "dtype kept");
        return true;
    case BIR_GATHER: {
        ARITY(2);
        BlkType x = vt(V, a[0]), ix = vt(V, a[1]);
        NEED(ix.rank == x.rank && dtype_is_int(ix.dtype), "an integer index of the source's rank");
        for (int i = 0; i < x.rank; i++)
            if (i != op->attr) NEED(ix.shape[i] == x.shape[i], "the index matches the source off the axis");
        NEED(shape_equal(r, ix) && r.dtype == x.dtype, "the index's shape, the source's dtype");
        return true;
    }
    case BIR_HISTOGRAM: {
        ARITY(2);
        BlkType x = vt(V, a[0]);
        NEED(x.rank == 1 && dtype_is_int(x.dtype), "a 1-D integer input");
        if (!mask_ok(V, a[1], x)) return false;
        NEED(r.rank == 1 && r.dtype == DT_I32 && r.shape[0] == op->attr, "[bins] i32");
        return true;
    }
    case BIR_REDUCE: case BIR_SCAN: {
        BlkType x = n ? vt(V, a[0]) : r;
        NEED(n >= 1 && op->nresults == n && op->nregions == 1, "n operands, n results, a combine region");
        const BirBlock *c = op->regions[0];
        NEED(c->nargs == 2 * n, "the combine region takes 2n scalars");
        for (int i = 0; i < n; i++) {
            BlkType xi = vt(V, a[i]), ri = vt(V, op->results[i]), s = type_with_shape(xi, 0, NULL);
            NEED(shape_equal(xi, x), "the operands have one shape");
            NEED(type_equal(vt(V, c->args[i]), s) && type_equal(vt(V, c->args[n + i]), s),
                 "combine argument %d is a scalar of operand %d's dtype", i, i);
            NEED(type_equal(type_with_shape(ri, 0, NULL), s), "result %d has operand %d's dtype", i, i);
        }
        const BirOp *t = bir_block_terminator(c);
        NEED(t && t->code == BIR_YIELD, "the combine region ends in yield");
        return yields_match(V, c, c->args, n);
    }
    case BIR_CONVERT:
        ARITY(1);
        NEED(shape_equal(vt(V, a[0]), r), "convert keeps the shape");
        NEED(dtype_is_numeric_elem(r.dtype) && dtype_is_numeric_elem(vt(V, a[0]).dtype), "convert is numeric");
        return true;
    case BIR_PTR_CAST:
        ARITY(1);
        NEED(shape_equal(vt(V, a[0]), r) && r.dtype == DT_PTR && vt(V, a[0]).dtype == DT_PTR,
             "ptr_cast maps pointers to pointers");
        return true;
    case BIR_PTR_ADD:
        ARITY(2);
        NEED(type_equal(vt(V, a[0]), r) && r.dtype == DT_PTR, "ptr_add keeps the pointer type");
        NEED(dtype_is_int(vt(V, a[1]).dtype) && shape_equal(vt(V, a[1]), r), "the offset is an integer of the same shape");
        return true;
    /* every row of ops.def with a TYPES rule, from the column (OWN rows have their cases here: a
       row with both would be a duplicate case label, one with neither a -Werror=switch error) */
#define OPS_TAKES_TYPES_OWN
#include "ops_cases.inc"
        return verify_type_rule(V, op, ops[op->code].types);
    case BIR_SELECT:
        ARITY(3);
        NEED(vt(V, a[0]).dtype == DT_I1 && shape_equal(vt(V, a[0]), r), "the condition is i1 of the result's shape");
        NEED(type_equal(vt(V, a[1]), r) && type_equal(vt(V, a[2]), r), "both choices have the result's type");
        return true;
    case BIR_RAND: case BIR_RANDINT:
        ARITY(2);
        NEED(type_equal(vt(V, a[0]), type_scalar(DT_I64)), "the seed is an i64 scalar");
        NEED(dtype_is_int(vt(V, a[1]).dtype) && shape_equal(vt(V, a[1]), r), "offsets are integers of the result's shape");
        NEED(r.dtype == (op->code == BIR_RAND ? DT_F32 : DT_U32), "rand gives f32, randint u32");
        NEED(op->attr >= 0 && op->attr <= 3, "the word of the Philox draw is 0 to 3");
        return true;
    case BIR_LOAD:
        ARITY(3);
        NEED(vt(V, a[0]).dtype == DT_PTR && type_equal(r, pointee(vt(V, a[0]))), "load gives the pointee type");
        if (!mask_ok(V, a[1], r)) return false;
        NEED(a[2] == BIR_NONE || type_equal(vt(V, a[2]), r), "other has the loaded type");
        NEED(a[2] == BIR_NONE || a[1] != BIR_NONE, "other needs a mask");
        NEED(op->attr >= 0 && op->attr <= (MEMORY_VOLATILE | 3 << 3 | 7) && memory_cache_of(op->attr) < CACHE_MODIFIER_COUNT &&
                 memory_eviction_of(op->attr) < EVICTION_POLICY_COUNT,
             "known cache controls");
        return true;
    case BIR_STORE:
        ARITY(3);
        NEED(op->attr >= 0 && op->attr < MEMORY_VOLATILE && memory_cache_of(op->attr) < CACHE_MODIFIER_COUNT &&
                 memory_eviction_of(op->attr) < EVICTION_POLICY_COUNT,
             "known cache controls (a store is never volatile)");
        NEED(vt(V, a[0]).dtype == DT_PTR && type_equal(vt(V, a[1]), pointee(vt(V, a[0]))),
             "the stored value has the pointee type and the pointer's shape");
        return mask_ok(V, a[2], vt(V, a[1]));
    case BIR_ATOMIC_CAS:
        ARITY(3);
        NEED(atomic_order_valid(op->attr), "an atomic's order is a sem and a scope");
        NEED(vt(V, a[0]).dtype == DT_PTR && type_equal(r, pointee(vt(V, a[0]))), "gives the pointee type");
        NEED(type_equal(vt(V, a[1]), r) && type_equal(vt(V, a[2]), r), "cmp and val have the pointee type");
        return true;
    case BIR_ATOMIC_RMW_CASES:
        ARITY(3);
        NEED(atomic_order_valid(op->attr), "an atomic's order is a sem and a scope");
        NEED(vt(V, a[0]).dtype == DT_PTR && type_equal(r, pointee(vt(V, a[0]))), "gives the pointee type");
        NEED(type_equal(vt(V, a[1]), r), "val has the pointee type");
        return mask_ok(V, a[2], r);
    case BIR_REDUCE_SUM: case BIR_REDUCE_MAX: case BIR_REDUCE_MIN: case BIR_ARGMAX: case BIR_ARGMIN: {
        BlkType x = vt(V, a[0]);
        bool arg = op->code == BIR_ARGMAX || op->code == BIR_ARGMIN;
        NEED(dtype_is_float(x.dtype) || (dtype_is_int(x.dtype) && dtype_bits(x.dtype) >= 32),
             "reductions take floats, or integers of 32 or 64 bits");
        NEED(r.dtype == (arg ? DT_I32 : x.dtype), arg ? "arg reductions give i32" : "the dtype is kept");
        NEED(op->code != BIR_REDUCE_SUM || (x.dtype != DT_F16 && x.dtype != DT_BF16),
             "f16/bf16 sums are converted to f32 first");
        return true;
    }
    case BIR_CUMSUM: case BIR_CUMPROD: {
        BlkType x = vt(V, a[0]);
        NEED(type_equal(x, r), "a scan keeps its operand's type");
        NEED(dtype_is_float(x.dtype) ? dtype_bits(x.dtype) >= 32 : dtype_is_int(x.dtype) && dtype_bits(x.dtype) >= 32,
             "scans take f32, f64 and integers of 32 or 64 bits");
        return true;
    }
    case BIR_DOT: {
        ARITY(3);
        BlkType x = vt(V, a[0]), y = vt(V, a[1]), c = vt(V, a[2]);
        int b = x.rank - 2; /* 1: batched, [B, M, K] x [B, K, N] */
        NEED((x.rank == 2 || x.rank == 3) && y.rank == x.rank && x.shape[b + 1] == y.shape[b] &&
                 (!b || x.shape[0] == y.shape[0]),
             "dot takes [M, K] and [K, N], or [B, M, K] and [B, K, N]");
        NEED(dot_result_dtype(x.dtype, y.dtype) != DT_VOID,
             "dot operands are both f16, bf16 or f32, both fp8 or both 8-bit integers");
        NEED(c.rank == x.rank && (!b || c.shape[0] == x.shape[0]) && c.shape[b] == x.shape[b] &&
                 c.shape[b + 1] == y.shape[b + 1] && c.dtype == dot_result_dtype(x.dtype, y.dtype) && type_equal(c, r),
             "dot accumulates into an [M, N] ([B, M, N]) block of its result's type (f32, or i32 for 8-bit "
             "integers)");
        int64_t precision = op->attr & DOT_PRECISION_MASK, imprecise = op->attr >> DOT_IMPRECISE_SHIFT;
        NEED(precision <= DOT_TF32X3 && (precision == DOT_IEEE || x.dtype == DT_F32),
             "a dot's precision is ieee, tf32 or tf32x3 (f32 operands)");
        NEED(imprecise == 0 || (dtype_is_fp8(x.dtype) && (imprecise == DOT_NOT_PROMOTED ||
                                                            (imprecise >= 32 && imprecise <= DOT_IMPRECISE_MAX &&
                                                             !(imprecise & (imprecise - 1))))),
             "a dot's max_num_imprecise_acc is a power of two from 32 to 2^20, or 2^30, for fp8 operands");
        return true;
    }
    case BIR_FOR: {
        NEED(n >= 3 && op->nregions == 1, "for has start, end, step and one region");
        BlkType iv = vt(V, a[0]);
        NEED(iv.rank == 0 && dtype_is_int(iv.dtype), "bounds are integer scalars");
        NEED(type_equal(vt(V, a[1]), iv) && type_equal(vt(V, a[2]), iv), "bounds share one type");
        const BirBlock *body = op->regions[0];
        NEED(body->nargs == n - 2 && op->nresults == n - 3, "args: the iv and each carried value");
        NEED(type_equal(vt(V, body->args[0]), iv), "the iv has the bounds' type");
        for (int i = 3; i < n; i++) {
            NEED(type_equal(vt(V, a[i]), vt(V, body->args[i - 2])), "carried value %d: init type", i - 3);
            NEED(type_equal(vt(V, a[i]), vt(V, op->results[i - 3])), "carried value %d: result type", i - 3);
        }
        return yields_match(V, body, op->results, op->nresults);
    }
    case BIR_WHILE: {
        NEED(op->nregions == 2 && op->nresults == n, "while has cond and body regions");
        for (int r2 = 0; r2 < 2; r2++) {
            NEED(op->regions[r2]->nargs == n, "each region takes the carried values");
            for (int i = 0; i < n; i++)
                NEED(type_equal(vt(V, op->regions[r2]->args[i]), vt(V, a[i])), "carried value %d's type", i);
        }
        for (int i = 0; i < n; i++)
            NEED(type_equal(vt(V, op->results[i]), vt(V, a[i])), "result %d's type", i);
        const BirOp *c = bir_block_terminator(op->regions[0]);
        NEED(c && (c->code == BIR_CONDITION || c->code == BIR_RETURN), "the cond region ends in condition");
        return yields_match(V, op->regions[1], op->results, op->nresults);
    }
    case BIR_IF:
        ARITY(1);
        NEED(type_equal(vt(V, a[0]), type_scalar(DT_I1)), "the condition is a scalar i1");
        NEED(op->nregions == 2 && op->regions[0]->nargs == 0 && op->regions[1]->nargs == 0,
             "if has then and else regions without arguments");
        return yields_match(V, op->regions[0], op->results, op->nresults) &&
               yields_match(V, op->regions[1], op->results, op->nresults);
    case BIR_CONDITION:
        ARITY(1);
        NEED(type_equal(vt(V, a[0]), type_scalar(DT_I1)), "the condition is a scalar i1");
        return true;
    case BIR_READ_COUNTER:
        NEED(op->attr >= COUNTER_GLOBALTIMER && op->attr <= COUNTER_SMID, "a known counter");
        NEED(type_equal(r, type_scalar(op->attr == COUNTER_SMID ? DT_U32 : DT_U64)), "smid is a u32, the others u64");
        return true;
    case BIR_ASSERT:
        NEED(vt(V, a[0]).dtype == DT_I1, "the condition is i1");
        NEED(a[1] == BIR_NONE || type_equal(vt(V, a[1]), vt(V, a[0])), "the mask has the condition's type");
        NEED(op->text != NULL, "an assertion has a message (maybe empty)");
        return true;
    case BIR_ASSUME:
        NEED(type_equal(vt(V, a[0]), type_scalar(DT_I1)), "the condition is a scalar i1");
        return true;
    case BIR_GRID_DEPENDENCY:
        NEED(op->attr == GRID_WAIT || op->attr == GRID_LAUNCH_DEPENDENTS, "wait or launch_dependents");
        return true;
    case BIR_INLINE_ASM: {
        NEED(n >= 1 && op->text && op->asm_constraints && op->nregions <= 1, "asm, constraints, arguments");
        for (int i = 0; i < n; i++) NEED(shape_equal(vt(V, a[i]), r), "the arguments have the result's shape");
        if (op->nregions) {
            const BirBlock *ref = op->regions[0];
            const BirOp *y = bir_block_terminator(ref);
            NEED(ref->nargs == n, "the reference takes one scalar per argument");
            for (int i = 0; i < n; i++)
                NEED(type_equal(vt(V, ref->args[i]), type_scalar(vt(V, a[i]).dtype)), "reference argument %d", i);
            NEED(y && y->code == BIR_YIELD && y->noperands == 1 &&
                 type_equal(vt(V, y->operands[0]), type_scalar(r.dtype)), "the reference yields the result's type");
        }
        return true;
    }
    case BIR_YIELD: case BIR_RETURN: case BIR_BARRIER: case BIR_PRINT:
        NEED(op->code != BIR_RETURN || n == 0, "return takes no operands");
        NEED(op->code != BIR_BARRIER || n == 0, "barrier takes no operands");
        return true;
    case BIR_OPCODE_COUNT: break;
    }
#undef NEED
#undef ARITY
    return fail(V, "unknown opcode %d", (int)op->code);
}

static bool verify_op(Verifier *V, const BirOp *op) {
    V->op = op;
    if ((unsigned)op->code >= BIR_OPCODE_COUNT) return fail(V, "unknown opcode %d", (int)op->code);
    for (int i = 0; i < op->noperands; i++) {
        int v = op->operands[i];
        int optional_from = ops[op->code].optional_from;
        bool optional = v == BIR_NONE && optional_from >= 0 && i >= optional_from;
        if (optional) continue;
        if (v < 0 || v >= V->f->nvalues) return fail(V, "operand %d is not a value", i);
        if (!V->defined[v]) return fail(V, "operand %s (%%%d) is used where it is not defined",
                                        V->f->values[v].name ? V->f->values[v].name : "", v);
    }
    const BirOpInfo *row = &ops[op->code];
    if (row->results == 0 && op->nresults) return fail(V, "has no result");
    if (row->results == 1 && op->nresults != 1) return fail(V, "has one result");
    if (row->operands >= 0 && op->noperands != row->operands)
        return fail(V, "has %d operands, not %d", op->noperands, row->operands);
    if (op->nregions < 0 || op->nregions > row->regions)
        return fail(V, "has %d regions, at most %d", op->nregions, row->regions);
    for (int r = 0; r < op->nregions; r++)
        if (!verify_block(V, op->regions[r], op, r)) return false;
    V->op = op;
    if (!verify_axis(V, op) || !verify_types(V, op)) return false;
    for (int i = 0; i < op->nresults; i++)
        if (!define(V, op->results[i])) return false;
    return true;
}

/* Values defined inside a block are visible after it only through the
 * parent's results, so they are hidden again on the way out. */
static bool verify_block(Verifier *V, const BirBlock *b, const BirOp *parent, int region) {
    int nvalues = V->f->nvalues;
    bool *saved = malloc((size_t)nvalues);
    if (!saved) return fail(V, "out of memory");
    memcpy(saved, V->defined, (size_t)nvalues);
    bool ok = true;
    for (int i = 0; i < b->nargs && ok; i++) ok = define(V, b->args[i]);
    for (int i = 0; i < b->ops.len && ok; i++) {
        const BirOp *op = b->ops.items[i];
        if (is_terminator(op->code) && i != b->ops.len - 1) {
            V->op = op;
            ok = fail(V, "a terminator must end its block");
        } else {
            ok = verify_op(V, op);
        }
    }
    if (ok) {
        const BirOp *t = bir_block_terminator(b);
        V->op = parent;
        BirOpcode want = !parent ? BIR_RETURN
                       : parent->code == BIR_WHILE && region == 0 ? BIR_CONDITION : BIR_YIELD;
        if (!t) ok = fail(V, "region %d does not end in a terminator", region);
        else if (t->code != want && t->code != BIR_RETURN)
            ok = fail(V, "region %d ends in '%s', expected '%s'", region, bir_opcode_name(t->code),
                      bir_opcode_name(want));
    }
    memcpy(V->defined, saved, (size_t)nvalues);
    free(saved);
    return ok;
}

bool bir_verify(const BirFunction *f, char *err, size_t err_size) {
    Verifier V = {f, err, err_size, NULL, NULL, NULL};
    size_t n = (size_t)f->nvalues + 1;
    V.defined = calloc(n, 1);
    V.ever = calloc(n, 1);
    bool ok = V.defined && V.ever;
    if (!ok) fail(&V, "out of memory");
    if (ok && f->body->nargs != f->nparams) ok = fail(&V, "the body takes the %d parameters", f->nparams);
    for (int i = 0; ok && i < f->nparams; i++) {
        const BirParam *p = &f->params[i];
        if (p->value != f->body->args[i] || !type_equal(f->values[p->value].type, p->type))
            ok = fail(&V, "parameter %s is not the body's argument %d", p->name, i);
    }
    if (ok) ok = verify_block(&V, f->body, NULL, 0);
    free(V.defined);
    free(V.ever);
    if (ok && err_size) err[0] = 0;
    return ok;
}
