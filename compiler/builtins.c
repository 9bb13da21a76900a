/* builtins.c: the builtins' signatures, from builtins.def and the MATH_OP
 * rows of ops.def; read by sema (checking calls) and ast.c (printing them). */
#include <string.h>

#include "blkc.h"

static const BuiltinSig builtins[BI_COUNT] = {
#define BUILTIN(ID, name, min_args, max_args, ...) [BI_##ID] = {name, {__VA_ARGS__}, min_args, max_args, -1},
#include "builtins.def"
#define BIR_OP(...)
#define MATH_OP(ID, fn) [BI_##ID] = {#fn, {"x"}, 1, 1, BIR_##ID},
#include "ops.def"
};

const BuiltinSig *builtin_sig(BuiltinId id) { return &builtins[id]; }

int builtin_find(const char *name) {
    for (int i = 0; i < BI_COUNT; i++)
        if (strcmp(builtins[i].name, name) == 0) return i;
    return -1;
}

int dot_precision_from_name(const char *text, size_t len) {
    static const char *const names[] = {[DOT_IEEE] = "ieee", [DOT_TF32] = "tf32", [DOT_TF32X3] = "tf32x3"};
    for (int i = 0; i < 3; i++)
        if (strlen(names[i]) == len && memcmp(names[i], text, len) == 0) return i;
    return -1;
}
