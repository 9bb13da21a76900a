/* builtins.c: the builtins' signatures, from builtins.def and the MATH_OP
 * rows of ops.def; read by sema (checking calls) and ast.c (printing them). */
#include <string.h>

#include "blkc.h"

static const BuiltinSig builtins[BI_COUNT] = {
#define BUILTIN(ID, name, cls, min_args, max_args, ...) \
    [BI_##ID] = {name, {__VA_ARGS__}, min_args, max_args, -1, BC_##cls},
#include "builtins.def"
#define BIR_OP(...)
#define MATH_OP(ID, fn) [BI_##ID] = {#fn, {"x"}, 1, 1, BIR_##ID, BC_ELEMENTWISE},
#include "ops.def"
};

const BuiltinSig *builtin_sig(BuiltinId id) { return &builtins[id]; }

static const bool has_effect[BI_COUNT] = {
#define BUILTIN(...)
#define BUILTIN_EFFECT(ID) [BI_##ID] = true,
#include "builtins.def"
};

bool builtin_has_effect(BuiltinId id) { return has_effect[id]; }

int builtin_find(const char *name) {
    for (int i = 0; i < BI_COUNT; i++)
        if (strcmp(builtins[i].name, name) == 0) return i;
    return -1;
}

/* Levenshtein distance, for names of at most 31 letters (longer: "far"). */
static int edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31) return 99;
    int row[32];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *builtin_nearest(const char *name) {
    const char *best = NULL;
    int best_d = (int)strlen(name) / 3 + 1;
    for (int i = 0; i < BI_COUNT; i++) {
        int d = edit_distance(name, builtins[i].name);
        if (d < best_d) best = builtins[i].name, best_d = d;
    }
    return best;
}

const char *const atomic_sem_names[4] = {[ATOMIC_ACQ_REL] = "acq_rel", [ATOMIC_ACQUIRE] = "acquire",
                                         [ATOMIC_RELEASE] = "release", [ATOMIC_RELAXED] = "relaxed"};
const char *const atomic_scope_names[3] = {[ATOMIC_GPU] = "gpu", [ATOMIC_CTA] = "cta", [ATOMIC_SYS] = "sys"};
/* as PTX spells the cache operators (and Triton's cache_modifier= takes them) */
const char *const cache_modifier_names[CACHE_MODIFIER_COUNT] = {
    [CACHE_DEFAULT] = "", [CACHE_CA] = ".ca", [CACHE_CG] = ".cg", [CACHE_CV] = ".cv",
    [CACHE_WB] = ".wb",   [CACHE_CS] = ".cs", [CACHE_WT] = ".wt"};
const char *const eviction_policy_names[EVICTION_POLICY_COUNT] = {
    [EVICT_NORMAL] = "", [EVICT_FIRST] = "evict_first", [EVICT_LAST] = "evict_last"};

static int name_index(const char *const *names, int n, const char *text, size_t len) {
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && memcmp(names[i], text, len) == 0) return i;
    return -1;
}

int atomic_sem_from_name(const char *text, size_t len) { return name_index(atomic_sem_names, 4, text, len); }
int atomic_scope_from_name(const char *text, size_t len) { return name_index(atomic_scope_names, 3, text, len); }
int cache_modifier_from_name(const char *text, size_t len) {
    return name_index(cache_modifier_names, CACHE_MODIFIER_COUNT, text, len);
}
int eviction_policy_from_name(const char *text, size_t len) {
    return name_index(eviction_policy_names, EVICTION_POLICY_COUNT, text, len);
}

int dot_precision_from_name(const char *text, size_t len) {
    static const char *const names[] = {[DOT_IEEE] = "ieee", [DOT_TF32] = "tf32", [DOT_TF32X3] = "tf32x3"};
    return name_index(names, 3, text, len);
}
