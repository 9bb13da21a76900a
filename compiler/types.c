/* types.c: element types, shapes, broadcasting and promotion (docs/language.md §3, §5). */
#include <stdio.h>
#include <string.h>

#include "blkc.h"

static const char *const dtype_names[] = {
    [DT_ERROR] = "<error>", [DT_VOID] = "void", [DT_I1] = "i1",     [DT_I32] = "i32",
    [DT_I64] = "i64",       [DT_U32] = "u32",   [DT_F16] = "f16",   [DT_BF16] = "bf16",
    [DT_F32] = "f32",       [DT_PTR] = "ptr",   [DT_TYPE] = "type", [DT_STRING] = "string",
    [DT_SHAPE] = "shape",   [DT_TUPLE] = "tuple",
};

const char *dtype_name(DType t) {
    return (unsigned)t < sizeof dtype_names / sizeof *dtype_names ? dtype_names[t] : "?";
}

/* The type names of the language, with Triton's name for each (for the
 * errors that catch Triton habits: `tl.float32`, `x: *float32`). */
static const struct { const char *name; DType t; const char *triton; } type_names[] = {
    {"i1", DT_I1, "int1"},    {"bool", DT_I1, NULL},          {"i32", DT_I32, "int32"}, {"i64", DT_I64, "int64"},
    {"u32", DT_U32, "uint32"}, {"f16", DT_F16, "float16"},    {"bf16", DT_BF16, "bfloat16"},
    {"f32", DT_F32, "float32"},
};

bool dtype_from_name(const char *name, size_t len, DType *out) {
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
        if (strlen(type_names[i].name) == len && memcmp(type_names[i].name, name, len) == 0) {
            *out = type_names[i].t;
            return true;
        }
    }
    return false;
}

const char *dtype_name_for_triton(const char *triton_name) {
    for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
        if (type_names[i].triton && strcmp(type_names[i].triton, triton_name) == 0) return type_names[i].name;
    return NULL;
}

const char *dtype_name_list(void) {
    static char list[128];
    if (!list[0])
        for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++) {
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", type_names[i].name);
        }
    return list;
}

bool dtype_is_int(DType t) { return t == DT_I32 || t == DT_I64 || t == DT_U32; }
bool dtype_is_float(DType t) { return t == DT_F16 || t == DT_BF16 || t == DT_F32; }
bool dtype_is_signed(DType t) { return t == DT_I32 || t == DT_I64; }

int dtype_bits(DType t) {
    switch (t) {
    case DT_I1: return 1;
    case DT_F16: case DT_BF16: return 16;
    case DT_I32: case DT_U32: case DT_F32: return 32;
    case DT_I64: case DT_PTR: return 64;
    default: return 0;
    }
}

BlkType type_scalar(DType t) { return (BlkType){.dtype = (uint8_t)t}; }
BlkType type_ptr(DType elem) { return (BlkType){.dtype = DT_PTR, .elem = (uint8_t)elem}; }

BlkType type_with_shape(BlkType t, int rank, const int32_t *shape) {
    t.rank = (uint8_t)rank;
    for (int i = 0; i < BLK_MAX_RANK; i++) t.shape[i] = i < rank ? shape[i] : 0;
    return t;
}

bool shape_equal(BlkType a, BlkType b) {
    if (a.rank != b.rank) return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i]) return false;
    return true;
}

bool type_equal(BlkType a, BlkType b) {
    return a.dtype == b.dtype && (a.dtype != DT_PTR || a.elem == b.elem) && shape_equal(a, b);
}

int64_t type_numel(BlkType t) {
    int64_t n = 1;
    for (int i = 0; i < t.rank; i++) n *= t.shape[i];
    return n;
}

const char *shape_str(BlkType t, char *buf, size_t size) {
    if (t.rank == 0) snprintf(buf, size, "scalar");
    else if (t.rank == 1) snprintf(buf, size, "[%d]", t.shape[0]);
    else snprintf(buf, size, "[%d, %d]", t.shape[0], t.shape[1]);
    return buf;
}

const char *type_str(BlkType t, char *buf, size_t size) {
    char elem[16], shape[32];
    if (t.dtype == DT_PTR) snprintf(elem, sizeof elem, "*%s", dtype_name(t.elem));
    else snprintf(elem, sizeof elem, "%s", dtype_name(t.dtype));
    if (t.rank == 0) snprintf(buf, size, "%s", elem);
    else snprintf(buf, size, "%s %s", shape_str(t, shape, sizeof shape), elem);
    return buf;
}

bool shape_broadcast(BlkType a, BlkType b, BlkType *out) {
    int rank = a.rank > b.rank ? a.rank : b.rank;
    int32_t shape[BLK_MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
        /* align on the right */
        int ia = a.rank - rank + i, ib = b.rank - rank + i;
        int32_t da = ia >= 0 ? a.shape[ia] : 1, db = ib >= 0 ? b.shape[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        shape[i] = da == 1 ? db : da;
    }
    *out = type_with_shape(*out, rank, shape);
    return true;
}

static int float_rank(DType t) { return t == DT_F32 ? 2 : 1; }

DType dtype_promote(DType a, bool a_weak, DType b, bool b_weak) {
    if (a == DT_ERROR || b == DT_ERROR) return DT_ERROR;
    if (a == b) return a;
    /* A weak literal adapts to the typed side: int literals to anything
     * numeric, float literals to float types only. */
    if (a_weak && !b_weak) {
        if (dtype_is_int(a) || a == DT_I1) return b == DT_I1 && a != DT_I1 ? a : b;
        if (dtype_is_float(a)) return dtype_is_float(b) ? b : DT_F32;
    }
    if (b_weak && !a_weak) return dtype_promote(b, true, a, false);
    bool af = dtype_is_float(a), bf = dtype_is_float(b);
    if (af && bf) {
        if (float_rank(a) != float_rank(b)) return float_rank(a) > float_rank(b) ? a : b;
        return DT_F32; /* f16 with bf16 */
    }
    if (af) return a;
    if (bf) return b;
    if (a == DT_I1) return b;
    if (b == DT_I1) return a;
    int wa = dtype_bits(a), wb = dtype_bits(b);
    if (wa != wb) return wa > wb ? a : b;
    return dtype_is_signed(a) ? b : a; /* equal width: unsigned wins */
}

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int dtype_bytes(DType t) {
    switch (t) {
    case DT_I1: return 1;
    case DT_F16: case DT_BF16: return 2;
    case DT_I32: case DT_U32: case DT_F32: return 4;
    default: return 8;
    }
}
