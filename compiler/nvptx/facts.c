/* facts.c: the launch facts a kernel is compiled under, and what more
 * facts would buy.
 *
 * A fact says a runtime parameter is a multiple of a power of two (a
 * pointer: aligned to it in bytes) or is the integer 1. The runtime states
 * them per launch from the arguments (param_div); the CLI by name
 * (--assume), since its PTX has no launch to look at.
 *
 * --remarks: for each block load and store narrower than its shape would
 * allow, which facts would widen it. The kernel is planned again under
 * other facts: all at once give the widest access; a fact whose removal
 * narrows it again is needed; the smallest multiple that still gives the
 * widest is the one to state. Planning is a linear pass over the kernel,
 * so a few dozen plans cost nothing next to LLVM. */
#include "gen.h"

enum { WIDEST_FACT = 16 }; /* 16-byte accesses need no more than 16-byte alignment */

void nvptx_fact_spelling(const NvptxAssume *a, char *buf, size_t size) {
    if (a->fact == NVPTX_PARAM_ONE) snprintf(buf, size, "%s=1", a->name);
    else snprintf(buf, size, "%s%%%lld", a->name, (long long)a->fact);
}

/* The integer parameter value v is, or -1. */
static int param_index(const BirFunction *f, int v) {
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].value == v && dtype_is_int(f->params[i].type.dtype)) return i;
    return -1;
}

static bool const_value(const BirFunction *f, int v, int64_t *out) {
    const BirOp *d = f->values[v].def;
    if (!d || d->code != BIR_CONST || !dtype_is_int(f->values[v].type.dtype)) return false;
    *out = d->value.i;
    return true;
}

/* The fact an `assume(cond)` states, as --assume would: `N % K == 0` (K a
 * power of two) and `N == 1` for an integer parameter N, either side of the
 * `==`. Returns the parameter's index and sets *fact, or -1. */
static int assumed_fact(const BirFunction *f, const BirOp *assume, int64_t *fact) {
    const BirOp *eq = f->values[assume->operands[0]].def;
    if (!eq || eq->code != BIR_EQ) return -1;
    for (int side = 0; side < 2; side++) {
        int x = eq->operands[side], y = eq->operands[1 - side];
        int64_t c, k;
        if (!const_value(f, y, &c)) continue;
        int p = param_index(f, x);
        if (p >= 0 && c == 1) {
            *fact = NVPTX_PARAM_ONE;
            return p;
        }
        const BirOp *rem = f->values[x].def;
        if (c != 0 || !rem || rem->code != BIR_REM || !const_value(f, rem->operands[1], &k)) continue;
        p = param_index(f, rem->operands[0]);
        if (p >= 0 && k > 1 && (k & (k - 1)) == 0) {
            *fact = k;
            return p;
        }
    }
    return -1;
}

/* Raises div[i] to fact (1 says more than any multiple). */
static void add_fact(int64_t *div, int i, int64_t fact) {
    if (fact == NVPTX_PARAM_ONE) div[i] = NVPTX_PARAM_ONE;
    else if (div[i] != NVPTX_PARAM_ONE && fact > div[i]) div[i] = fact;
}

bool nvptx_kernel_facts(NvptxModule *m, const BirFunction *f, Arena *a, const int64_t **facts) {
    const NvptxOptions *o = m->opt;
    *facts = o->param_div;
    bool declared_one = false, assumed = false;
    for (int i = 0; i < f->nparams; i++) declared_one |= f->params[i].equal_one;
    int64_t fact;
    /* only the body's own assumes: one inside a branch or loop need not hold at every launch */
    for (int i = 0; i < f->body->ops.len && !assumed; i++) {
        const BirOp *op = f->body->ops.items[i];
        assumed = op->code == BIR_ASSUME && assumed_fact(f, op, &fact) >= 0;
    }
    if (!o->nassume && !declared_one && !assumed) return true;
    int64_t *div = arena_alloc(a, (size_t)(f->nparams + 1) * sizeof *div);
    for (int i = 0; i < f->nparams; i++)
        div[i] = f->params[i].equal_one ? NVPTX_PARAM_ONE : o->param_div ? o->param_div[i] : 0; /* @equal(1): as =1 */
    for (int i = 0; i < f->body->ops.len; i++) {
        const BirOp *op = f->body->ops.items[i];
        int p = op->code == BIR_ASSUME ? assumed_fact(f, op, &fact) : -1;
        if (p >= 0) add_fact(div, p, fact);
    }
    for (int k = 0; k < o->nassume; k++) {
        const NvptxAssume *as = &o->assume[k];
        char spelled[160];
        nvptx_fact_spelling(as, spelled, sizeof spelled);
        for (int i = 0; i < f->nparams; i++) {
            const BirParam *p = &f->params[i];
            if (strcmp(p->name, as->name) != 0) continue;
            m->assume_used |= 1ull << k;
            bool ptr = p->type.dtype == DT_PTR;
            if (!ptr && !dtype_is_int(p->type.dtype))
                return nvptx_error(m, f, NULL, "--assume %s: parameter '%s' of kernel '%s' is %s; facts are for "
                                   "integers and pointers", spelled, p->name, f->name, dtype_name(p->type.dtype));
            if (ptr && as->fact == NVPTX_PARAM_ONE)
                return nvptx_error(m, f, NULL, "--assume %s: parameter '%s' of kernel '%s' is a pointer; "
                                   "'=1' is for integers (a pointer takes %s%%16)", spelled, p->name, f->name,
                                   p->name);
            add_fact(div, i, as->fact);
        }
    }
    *facts = div;
    return true;
}

bool nvptx_check_assume_used(NvptxModule *m) {
    for (int k = 0; k < m->opt->nassume; k++) {
        if (m->assume_used >> k & 1) continue;
        char spelled[160];
        nvptx_fact_spelling(&m->opt->assume[k], spelled, sizeof spelled);
        diag_report(m->de, DIAG_ERROR, NULL, (Span){0}, "--assume %s: no kernel compiled has a runtime parameter '%s'",
                    spelled, m->opt->assume[k].name);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- remarks */

typedef struct {
    Gen *g;
    const BirOp **ops; /* block loads and stores, in source order */
    int nops;
    const int64_t *given; /* the facts in force, or NULL */
    int64_t *trial;
    int *candidates; /* integer and pointer parameters a fact could be stated for */
    int ncand;
    const char **advice; /* per access: its remark, or NULL */
} Remarks;

static void collect_accesses(Remarks *R, const BirBlock *b, int cap) {
    const BirFunction *f = R->g->f;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if ((op->code == BIR_LOAD || op->code == BIR_STORE) && f->values[op->operands[0]].type.rank &&
            R->nops < cap)
            R->ops[R->nops++] = op;
        for (int r = 0; r < op->nregions; r++) collect_accesses(R, op->regions[r], cap);
    }
}

/* The trial facts: those given, every candidate raised to WIDEST_FACT
 * (when all), then parameter `which` set to `fact` (when which >= 0). */
static const int64_t *facts_for(Remarks *R, bool all, int which, int64_t fact) {
    for (int i = 0; i < R->g->f->nparams; i++) R->trial[i] = R->given ? R->given[i] : 0;
    for (int c = 0; all && c < R->ncand; c++) {
        int i = R->candidates[c];
        if (R->trial[i] != NVPTX_PARAM_ONE && R->trial[i] < WIDEST_FACT) R->trial[i] = WIDEST_FACT;
    }
    if (which >= 0) R->trial[which] = fact;
    return R->trial;
}

/* Each access's width (elements) under the facts; the plan too, if asked. */
static int *widths_under(Remarks *R, const int64_t *facts, KernelPlan **plan_out) {
    Gen *g = R->g;
    KernelPlan *p = nvptx_plan_kernel(&g->arena, g->f, g->s->plan->num_warps, facts, g->s->plan->wgmma);
    int *w = arena_alloc(&g->arena, (size_t)(R->nops + 1) * sizeof *w);
    for (int i = 0; i < R->nops; i++) w[i] = nvptx_access_width(p, g->f, R->ops[i]);
    if (plan_out) *plan_out = p;
    return w;
}

static const char *access_name(const BirOp *op) { return op->code == BIR_LOAD ? "load" : "store"; }

/* "load not vectorized" or "load in 4-byte accesses" */
static void lead(char *buf, size_t size, const BirOp *op, int width, int es) {
    if (width <= 1) snprintf(buf, size, "%s not vectorized", access_name(op));
    else snprintf(buf, size, "%s in %d-byte accesses", access_name(op), width * es);
}

static void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t at = strlen(buf);
    if (at >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, size - at, fmt, ap);
    va_end(ap);
}

/* One access narrower than the facts could make it: the needed facts. */
static void remark_needed(Remarks *R, int i, int now, int widest, int **minus, int ***at) {
    const BirFunction *f = R->g->f;
    const BirOp *op = R->ops[i];
    int es = dtype_bytes(f->values[op->operands[0]].type.elem);
    char msg[768], assume[320] = "";
    lead(msg, sizeof msg, op, now, es);
    append(msg, sizeof msg, ":");
    int named = 0;
    for (int c = 0; c < R->ncand; c++) {
        if (minus[c][i] >= widest) continue; /* not needed */
        int p = R->candidates[c];
        int64_t k = WIDEST_FACT;
        for (int j = 0; j < 4; j++) /* the smallest multiple that still gives the widest: 1, 2, 4, 8 */
            if (at[c][j][i] >= widest) {
                k = (int64_t)1 << j;
                break;
            }
        const BirParam *prm = &f->params[p];
        if (prm->type.dtype == DT_PTR)
            append(msg, sizeof msg, "%s %s not known to be %lld-byte aligned", named ? "," : "", prm->name,
                   (long long)k);
        else
            append(msg, sizeof msg, "%s %s not known to be a multiple of %lld", named ? "," : "", prm->name,
                   (long long)k);
        append(assume, sizeof assume, "%s%s%%%lld", named ? "," : "", prm->name, (long long)k);
        named++;
    }
    if (!named) /* several facts would each do: name them all */
        for (int c = 0; c < R->ncand; c++) {
            append(assume, sizeof assume, "%s%s%%16", c ? "," : "", f->params[R->candidates[c]].name);
            append(msg, sizeof msg, "%s %s", c ? "," : " facts about", f->params[R->candidates[c]].name);
        }
    append(msg, sizeof msg, " (--assume %s allows %d-byte accesses)", assume, widest * es);
    R->advice[i] = arena_strndup(&R->g->arena, msg, strlen(msg));
}

/* An access no divisibility fact widens: say what limits it. */
static void remark_limit(Remarks *R, int i, int now, const KernelPlan *all_plan) {
    Gen *g = R->g;
    const BirFunction *f = g->f;
    const BirOp *op = R->ops[i];
    BlkType pt = f->values[op->operands[0]].type;
    int es = dtype_bytes(pt.elem);
    if (now * es >= WIDEST_FACT || pt.shape[pt.rank - 1] == 1) return;
    char msg[512];
    lead(msg, sizeof msg, op, now, es);
    /* an integer that is 1 (a unit stride) may make the addresses consecutive:
     * the first such along the last dimension (row-major), else the first along the other */
    int unit = -1, unit_width = 0;
    for (int c = 0; c < R->ncand; c++) {
        int p = R->candidates[c];
        if (f->params[p].type.dtype == DT_PTR) continue;
        KernelPlan *trial;
        int *w = widths_under(R, facts_for(R, true, p, NVPTX_PARAM_ONE), &trial);
        if (w[i] <= now) continue;
        bool along_last = nvptx_layout_vec_dim(nvptx_memory_layout(trial, op)) == pt.rank - 1;
        if (unit < 0 || along_last) unit = p, unit_width = w[i];
        if (along_last) break;
    }
    if (unit >= 0) {
        R->advice[i] = arena_printf(&g->arena, "%s: %s not known to be 1 (--assume %s=1 allows %d-byte accesses)", msg,
                                    f->params[unit].name, f->params[unit].name, unit_width * es);
        return;
    }
    const AxisInfo *ax = &all_plan->axis[op->operands[0]];
    const Layout *l = &all_plan->layouts[op->operands[0]];
    int vec = nvptx_layout_vec(l), d = nvptx_layout_vec_dim(l);
    if (ax->contig[d] > now && vec <= now)
        R->advice[i] = arena_printf(&g->arena, "%s: each thread holds %d consecutive element%s of the block (%d warps "
                                    "spread its %lld elements)", msg, vec, vec == 1 ? "" : "s", g->s->plan->num_warps,
                                    (long long)type_numel(pt));
    else if (ax->contig[d] <= 1)
        R->advice[i] = arena_printf(&g->arena, "%s: neighbouring elements of the block are not at consecutive addresses",
                                    msg);
}

int nvptx_access_advice(Gen *g, const int64_t *given, const BirOp ***ops, const char ***advice) {
    const BirFunction *f = g->f;
    Remarks R = {.g = g, .given = given};
    int cap = nvptx_ops_in(f->body, BIR_OPCODE_COUNT);
    R.ops = arena_alloc(&g->arena, (size_t)(cap + 1) * sizeof *R.ops);
    R.advice = arena_alloc(&g->arena, (size_t)(cap + 1) * sizeof *R.advice);
    collect_accesses(&R, f->body, cap);
    *ops = R.ops, *advice = R.advice;
    if (!R.nops) return 0;
    R.trial = arena_alloc(&g->arena, (size_t)(f->nparams + 1) * sizeof *R.trial);
    R.candidates = arena_alloc(&g->arena, (size_t)(f->nparams + 1) * sizeof *R.candidates);
    for (int i = 0; i < f->nparams; i++) {
        DType d = f->params[i].type.dtype;
        if ((d == DT_PTR || dtype_is_int(d)) && !(given && given[i] == NVPTX_PARAM_ONE))
            R.candidates[R.ncand++] = i;
    }
    int *now = widths_under(&R, facts_for(&R, false, -1, 0), NULL);
    KernelPlan *all_plan;
    int *widest = widths_under(&R, facts_for(&R, true, -1, 0), &all_plan);
    int **minus = arena_alloc(&g->arena, (size_t)(R.ncand + 1) * sizeof *minus);
    int ***at = arena_alloc(&g->arena, (size_t)(R.ncand + 1) * sizeof *at);
    bool any_wider = false;
    for (int i = 0; i < R.nops; i++) any_wider |= widest[i] > now[i];
    for (int c = 0; any_wider && c < R.ncand; c++) {
        int p = R.candidates[c];
        minus[c] = widths_under(&R, facts_for(&R, true, p, given ? given[p] : 0), NULL);
        at[c] = arena_alloc(&g->arena, 4 * sizeof *at[c]);
        for (int j = 0; j < 4; j++) at[c][j] = widths_under(&R, facts_for(&R, true, p, (int64_t)1 << j), NULL);
    }
    for (int i = 0; i < R.nops; i++) {
        if (widest[i] > now[i]) remark_needed(&R, i, now[i], widest[i], minus, at);
        else remark_limit(&R, i, now[i], all_plan);
    }
    return R.nops;
}
