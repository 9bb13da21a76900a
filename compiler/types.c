/* types.c: element types, shapes, broadcasting and promotion (docs/language.md §3, §5). */
#include <stdio.h>
#include <string.h>

#include "blkc.h"

typedef enum { DK_NONE, DK_BOOL, DK_SINT, DK_UINT, DK_FLOAT, DK_FP8 } DtypeClass;

static const struct { const char *name, *triton; int bits; DtypeClass cls; } dtypes[] = {
    [DT_ERROR] = {"<error>", NULL, 0, DK_NONE}, [DT_VOID] = {"void", NULL, 0, DK_NONE},
#define DTYPE(ID, name, triton, bits, cls) [DT_##ID] = {name, triton, bits, cls},
#include "dtypes.def"
    [DT_PTR] = {"ptr", NULL, 64, DK_NONE},      [DT_TYPE] = {"type", NULL, 0, DK_NONE},
    [DT_STRING] = {"string", NULL, 0, DK_NONE}, [DT_SHAPE] = {"shape", NULL, 0, DK_NONE},
    [DT_TUPLE] = {"tuple", NULL, 0, DK_NONE},  [DT_HELPER] = {"helper", NULL, 0, DK_NONE},
};
enum { NDTYPES = sizeof dtypes / sizeof *dtypes };

static DtypeClass dclass(DType t) { return (unsigned)t < NDTYPES ? dtypes[t].cls : DK_NONE; }

const char *dtype_name(DType t) { return (unsigned)t < NDTYPES && dtypes[t].name ? dtypes[t].name : "?"; }

/* `bool` is the one name besides the table's */
bool dtype_from_name(const char *name, size_t len, DType *out) {
    if (len == 4 && memcmp(name, "bool", 4) == 0) {
        *out = DT_I1;
        return true;
    }
    for (int t = 0; t < NDTYPES; t++) {
        if (dtypes[t].cls != DK_NONE && strlen(dtypes[t].name) == len && memcmp(dtypes[t].name, name, len) == 0) {
            *out = (DType)t;
            return true;
        }
    }
    return false;
}

const char *dtype_name_for_triton(const char *triton_name) {
    for (int t = 0; t < NDTYPES; t++)
        if (dtypes[t].triton && strcmp(dtypes[t].triton, triton_name) == 0) return dtypes[t].name;
    return NULL;
}

const char *dtype_name_list(void) {
    static char list[256];
    if (!list[0])
        for (int t = 0; t < NDTYPES; t++) {
            if (dtypes[t].cls == DK_NONE) continue;
            size_t n = strlen(list);
            snprintf(list + n, sizeof list - n, "%s%s%s", n ? ", " : "", dtypes[t].name, t == DT_I1 ? " (bool)" : "");
        }
    return list;
}

bool dtype_is_int(DType t) { return dclass(t) == DK_SINT || dclass(t) == DK_UINT; }
bool dtype_is_float(DType t) { return dclass(t) == DK_FLOAT; }
bool dtype_is_fp8(DType t) { return dclass(t) == DK_FP8; }
bool dtype_is_signed(DType t) { return dclass(t) == DK_SINT; }
bool dtype_is_unsigned(DType t) { return dclass(t) == DK_UINT; }
bool dtype_is_numeric_elem(DType t) { return dclass(t) != DK_NONE; }
bool dtype_holds_float(DType t) { return dclass(t) == DK_FLOAT || dclass(t) == DK_FP8; }
int dtype_bits(DType t) { return (unsigned)t < NDTYPES ? dtypes[t].bits : 0; }

/* The operand pairs tensor cores multiply and what they accumulate in: f16
 * with f16, bf16 with bf16, f32 with f32 (exact, or as TF32), any two fp8
 * (e4m3 and e5m2 mix) into f32; any two of i8 and u8 into i32. */
DType dot_result_dtype(DType a, DType b) {
    if (a == b && dclass(a) == DK_FLOAT && a != DT_F64) return DT_F32;
    if (dclass(a) == DK_FP8 && dclass(b) == DK_FP8) return DT_F32;
    if ((a == DT_I8 || a == DT_U8) && (b == DT_I8 || b == DT_U8)) return DT_I32;
    return DT_VOID;
}

/* The k a tensor-core step of these operands takes (mma.sync and wgmma
 * alike): 32 bytes of it, 16 elements of 16 bits, 32 of 8 (f32's tf32
 * steps are 8, but its dots, like all, need k >= 16). */
int dot_k_step(DType operand) { return dtype_bits(operand) == 8 ? 32 : 16; }

/* fp8 sums of more terms than this are not kept in full by the tensor cores
 * (Hopper's keep about 13 bits: language.md §7), so a dot sums its k terms
 * this many at a time from zero and adds each sum to its accumulator in f32,
 * as cuBLAS's default mode and DeepGEMM do every 128. */
int dot_promote_terms(DType operand) { return dtype_is_fp8(operand) ? 128 : 0; }

/* A dot's runs: its max_num_imprecise_acc (attr) if given, else the
 * default above, capped at its k (a bound: runs shorter than asked keep it);
 * 0 where its terms go into the accumulator itself: not fp8, or given as
 * DOT_NOT_PROMOTED (Triton's default on Hopper, unbounded in effect). */
int64_t dot_promote_every(DType operand, int64_t attr, int64_t k) {
    int64_t given = attr >> DOT_IMPRECISE_SHIFT, every = given ? given : dot_promote_terms(operand);
    if (!dtype_is_fp8(operand) || !every || given == DOT_NOT_PROMOTED) return 0;
    return every < k ? every : k;
}

bool asm_pack_registers(DType d, int pack, int *regs, int *bits) {
    int b = dtype_bits(d), total = b * pack;
    if (pack == 1 || b >= 32) { /* an element a register */
        *regs = pack, *bits = b;
        return true;
    }
    if (total == 16 || total >= 32) {
        *regs = total >= 32 ? total / 32 : 1, *bits = total >= 32 ? 32 : 16;
        return true;
    }
    return false;
}

bool dtype_fits_int(DType t, int64_t v) {
    int bits = dtype_bits(t);
    switch (dclass(t)) {
    case DK_BOOL: return v == 0 || v == 1;
    case DK_SINT: return bits == 64 || (v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1)));
    case DK_UINT: return v >= 0 && (bits == 64 || v < (INT64_C(1) << bits));
    default: return false;
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
    else if (t.rank == 2) snprintf(buf, size, "[%d, %d]", t.shape[0], t.shape[1]);
    else snprintf(buf, size, "[%d, %d, %d]", t.shape[0], t.shape[1], t.shape[2]);
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

/* f16 and bf16 share a rank: neither holds the other */
static int float_rank(DType t) { return t == DT_F64 ? 3 : t == DT_F32 ? 2 : 1; }

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
    int bits = dtype_bits(t);
    return bits <= 8 ? 1 : bits / 8;
}
