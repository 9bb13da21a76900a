/* hints.c: "a faster build exists" — what the CLI says, once per kernel,
 * when the arch or missing launch facts kept the backend from wgmma, TMA
 * copies or wide loads and stores, with every fact that would allow them.
 *
 * The kernel's decisions are made again without LLVM (decisions_only: the
 * NvptxKernel notes and the remarks, no code generation) under the facts a
 * tidy launch would have: each pointer 16-byte aligned, each integer a
 * multiple of 16, and the unit strides the remarks ask for. If that is
 * better (more wgmma dots or TMA copies, fewer narrow accesses), each added
 * fact is dropped in turn and kept out where nothing is lost, so the hint
 * names only the facts that matter. A few dozen decision passes cost a
 * fraction of one build. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "launch.h"

enum { MAX_FACTS = NVPTX_MAX_ASSUME };

typedef struct {
    int wgmma, tma, narrow; /* dots on wgmma, loads copied by TMA, accesses narrower than they could be */
} Score;

typedef struct {
    NvptxAssume facts[MAX_FACTS];
    int n;
    char names[MAX_FACTS][64]; /* the names the remarks suggested, kept here */
    int nnames;
} FactSet;

/* Counts remarks, and collects the facts each suggests ("--assume X%16,S=1 allows"). */
typedef struct {
    int count;
    FactSet *suggested;
} RemarkSink;

static int count_of(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static void add_fact(FactSet *s, const char *name, int64_t fact) {
    for (int i = 0; i < s->n; i++) {
        if (strcmp(s->facts[i].name, name) != 0) continue;
        if (fact == NVPTX_PARAM_ONE || (s->facts[i].fact != NVPTX_PARAM_ONE && fact > s->facts[i].fact))
            s->facts[i].fact = fact;
        return;
    }
    if (s->n < MAX_FACTS) s->facts[s->n++] = (NvptxAssume){name, fact};
}

static void collect_remark(void *user, const Diagnostic *d) {
    RemarkSink *sink = user;
    if (d->severity != DIAG_REMARK) return;
    sink->count++;
    const char *at = strstr(d->message, "--assume ");
    if (!at || !sink->suggested) return;
    char list[256];
    snprintf(list, sizeof list, "%s", at + 9);
    char *end = strchr(list, ' ');
    if (end) *end = 0;
    FactSet *s = sink->suggested;
    for (char *spec = strtok(list, ","); spec; spec = strtok(NULL, ",")) {
        char *sep = strpbrk(spec, "%=");
        if (!sep || s->nnames == MAX_FACTS) continue;
        bool one = *sep == '=';
        long long k = strtoll(sep + 1, NULL, 10);
        *sep = 0;
        snprintf(s->names[s->nnames], sizeof s->names[0], "%s", spec);
        add_fact(s, s->names[s->nnames++], one ? NVPTX_PARAM_ONE : k);
    }
}

/* Kernel `kernel`'s decisions under these options and facts. */
static bool score_of(Compilation *c, const NvptxOptions *base, const char *arch, const char *kernel, const FactSet *facts,
                     FactSet *suggested, Score *out) {
    NvptxOptions o = *base;
    o.arch = arch;
    o.only_kernel = kernel;
    o.param_div = NULL;
    o.assume = facts->facts;
    o.nassume = facts->n;
    o.remarks = true;
    o.decisions_only = true;
    o.llvm_ir = false;
    RemarkSink sink = {0, suggested};
    DiagEngine saved = c->de;
    c->de = (DiagEngine){collect_remark, &sink, 0, false};
    NvptxOutput res;
    bool ok = compile_ptx(c, &o, &res);
    c->de = saved;
    if (!ok) return false;
    const char *notes = res.nkernels && res.kernels[0].notes ? res.kernels[0].notes : "";
    *out = (Score){count_of(notes, ": wgmma."), count_of(notes, "copied by TMA"), sink.count};
    nvptx_output_free(&res);
    return true;
}

static bool better(Score a, Score b) { /* a better than b in something, worse in nothing */
    return a.wgmma >= b.wgmma && a.tma >= b.tma && a.narrow <= b.narrow &&
           (a.wgmma > b.wgmma || a.tma > b.tma || a.narrow < b.narrow);
}

static bool same(Score a, Score b) { return a.wgmma == b.wgmma && a.tma == b.tma && a.narrow == b.narrow; }

/* The arch a build for `arch` could move to for wgmma and TMA: its
 * arch-specific sibling (sm_90 -> sm_90a), or itself. */
static const char *richer_arch(const char *arch) {
    const NvptxArch *a = nvptx_arch(arch);
    if (!a || a->wgmma) return arch;
    char name[32];
    snprintf(name, sizeof name, "%sa", arch);
    const NvptxArch *b = nvptx_arch(name);
    return b && b->wgmma ? b->name : arch;
}

static void hint_kernel(Compilation *c, const NvptxOptions *opt, const BirFunction *f, DiagEngine *de) {
    const char *arch = opt->arch ? opt->arch : NVPTX_DEFAULT_ARCH;
    FactSet given = {.n = 0}; /* the --assume facts about this kernel's parameters */
    for (int i = 0; i < opt->nassume && i < MAX_FACTS; i++)
        for (int p = 0; p < f->nparams; p++)
            if (strcmp(opt->assume[i].name, f->params[p].name) == 0) given.facts[given.n++] = opt->assume[i];
    FactSet suggested = {.n = 0};
    Score now;
    if (!score_of(c, opt, arch, f->name, &given, &suggested, &now)) return;
    /* every fact a tidy launch has, the remarks' unit strides first */
    FactSet all = given;
    for (int i = 0; i < suggested.n; i++) add_fact(&all, suggested.facts[i].name, suggested.facts[i].fact);
    for (int p = 0; p < f->nparams; p++) {
        const BirParam *prm = &f->params[p];
        if ((prm->type.dtype == DT_PTR || dtype_is_int(prm->type.dtype)) && !prm->equal_one) {
            bool known = false;
            for (int i = 0; i < all.n; i++) known |= strcmp(all.facts[i].name, prm->name) == 0;
            if (!known) add_fact(&all, prm->name, 16);
        }
    }
    const char *rich = richer_arch(arch);
    Score best;
    if (!score_of(c, opt, rich, f->name, &all, NULL, &best) || !better(best, now)) return;
    /* the arch alone, then each added fact dropped where nothing is lost */
    Score s;
    if (rich != arch && score_of(c, opt, arch, f->name, &all, NULL, &s) && same(s, best)) rich = arch;
    for (int i = given.n; i < all.n;) {
        FactSet fewer = all;
        memmove(&fewer.facts[i], &fewer.facts[i + 1], (size_t)(fewer.n - i - 1) * sizeof fewer.facts[0]);
        fewer.n--;
        if (score_of(c, opt, rich, f->name, &fewer, NULL, &s) && same(s, best)) all = fewer;
        else i++;
    }
    char what[256] = "", how[1024] = "";
    size_t n = 0;
    if (best.wgmma > now.wgmma)
        n += (size_t)snprintf(what + n, sizeof what - n, "%d dot%s on wgmma (now %d)", best.wgmma,
                              best.wgmma == 1 ? "" : "s", now.wgmma);
    if (best.tma > now.tma && n < sizeof what)
        n += (size_t)snprintf(what + n, sizeof what - n, "%s%d load%s copied by TMA (now %d)", n ? ", " : "", best.tma,
                              best.tma == 1 ? "" : "s", now.tma);
    if (best.narrow < now.narrow && n < sizeof what)
        snprintf(what + n, sizeof what - n, "%s%d fewer narrow load%s or store%s (-R names them)", n ? ", " : "",
                 now.narrow - best.narrow, now.narrow - best.narrow == 1 ? "" : "s",
                 now.narrow - best.narrow == 1 ? "" : "s");
    n = 0;
    if (rich != arch) n += (size_t)snprintf(how, sizeof how, "--arch %s", rich);
    if (all.n > given.n && n < sizeof how) {
        n += (size_t)snprintf(how + n, sizeof how - n, "%s--assume ", n ? " " : "");
        for (int i = given.n; i < all.n && n < sizeof how; i++) {
            char fact[160];
            nvptx_fact_spelling(&all.facts[i], fact, sizeof fact);
            n += (size_t)snprintf(how + n, sizeof how - n, "%s%s", i > given.n ? "," : "", fact);
        }
    }
    if (all.n > given.n) {
        const char *facts = strstr(how, "--assume ") + 9;
        diag_report(de, DIAG_NOTE, f->src, f->span,
                    "kernel '%s' has a faster build: %s, with %s. The runtime builds it for launches whose "
                    "arguments satisfy these facts; ahead of time, state them, or add the build to a C "
                    "launcher with --emit=c --variant %s", f->name, what, how, facts);
    } else {
        diag_report(de, DIAG_NOTE, f->src, f->span, "kernel '%s' has a faster build: %s, with %s (the runtime "
                    "builds for the device's own arch)", f->name, what, how);
    }
}

bool launch_tidy_facts(Compilation *c, const NvptxOptions *opt, const BirFunction *f, int64_t *div) {
    FactSet none = {.n = 0}, suggested = {.n = 0};
    NvptxOptions o = *opt;
    o.nassume = 0;
    Score now;
    if (!score_of(c, &o, opt->arch ? opt->arch : NVPTX_DEFAULT_ARCH, f->name, &none, &suggested, &now)) return false;
    for (int p = 0; p < f->nparams; p++) {
        const BirParam *prm = &f->params[p];
        bool fact = prm->type.dtype == DT_PTR || dtype_is_int(prm->type.dtype);
        div[p] = fact ? 16 : 0;
        for (int i = 0; fact && i < suggested.n; i++)
            if (strcmp(suggested.facts[i].name, prm->name) == 0 && suggested.facts[i].fact == NVPTX_PARAM_ONE)
                div[p] = NVPTX_PARAM_ONE;
    }
    return true;
}

void launch_faster_hints(Compilation *c, const NvptxOptions *opt, DiagEngine *de) {
    for (int i = 0; c->bir && i < c->bir->nkernels; i++) {
        const BirFunction *f = c->bir->kernels[i];
        if (opt->only_kernel && strcmp(f->name, opt->only_kernel) != 0) continue;
        hint_kernel(c, opt, f, de);
    }
}
