/* elementwise.c: one element of an elementwise op, in LLVM IR: arithmetic,
 * comparisons, conversions, the dispatch to the math functions (math.c),
 * and Philox for rand. */
#include <math.h>

#include "gen.h"

static const char *llvm_float_name(DType d) { return d == DT_F64 ? "f64" : d == DT_F32 ? "f32" : d == DT_F16 ? "f16" : "bf16"; }

/* --------------------------------------------------------- elementwise */

/* Shifts by the width or more act as shifts by the width, as PTX's do
 * (LLVM would make them poison). */
static LLVMValueRef shift(Gen *g, bool left, LLVMValueRef x, LLVMValueRef amt, DType d) {
    int bits = dtype_bits(d);
    LLVMTypeRef t = ty(g, d);
    LLVMValueRef width = LLVMConstInt(t, (unsigned long long)bits, 0);
    LLVMValueRef big = LLVMBuildICmp(g->b, LLVMIntUGE, amt, width, "");
    LLVMValueRef safe = LLVMBuildAnd(g->b, amt, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
    if (left) return LLVMBuildSelect(g->b, big, LLVMConstInt(t, 0, 0), LLVMBuildShl(g->b, x, safe, ""), "");
    if (dtype_is_signed(d)) {
        LLVMValueRef fill = LLVMBuildAShr(g->b, x, LLVMConstInt(t, (unsigned long long)(bits - 1), 0), "");
        return LLVMBuildSelect(g->b, big, fill, LLVMBuildAShr(g->b, x, safe, ""), "");
    }
    return LLVMBuildSelect(g->b, big, LLVMConstInt(t, 0, 0), LLVMBuildLShr(g->b, x, safe, ""), "");
}

static LLVMValueRef fdiv(Gen *g, LLVMValueRef a, LLVMValueRef b, DType d) {
    if (d == DT_F32 && !g->m->opt->precise_math) {
        /* Triton's default: div.full.f32 (2 ulp), not the IEEE-rounded div.rn */
        LLVMValueRef args[2] = {a, b};
        return nvptx_asm_call(g, g->m->t.f32, "div.full.f32 $0, $1, $2;", "=f,f,f", args, 2, false);
    }
    return LLVMBuildFDiv(g->b, a, b, "");
}

LLVMValueRef nvptx_minmax(Gen *g, bool is_max, LLVMValueRef a, LLVMValueRef b, DType d) {
    if (dtype_is_float(d)) {
        /* NaN propagates: max.NaN / min.NaN */
        char name[32];
        snprintf(name, sizeof name, "llvm.%s.%s", is_max ? "maximum" : "minimum", llvm_float_name(d));
        LLVMValueRef args[2] = {a, b};
        return nvptx_call(g, name, ty(g, d), args, 2);
    }
    LLVMIntPredicate p = dtype_is_signed(d) ? (is_max ? LLVMIntSGT : LLVMIntSLT) : (is_max ? LLVMIntUGT : LLVMIntULT);
    return LLVMBuildSelect(g->b, LLVMBuildICmp(g->b, p, a, b, ""), a, b, "");
}

/* fp8 <-> f32 in integer operations, the same as numeric.c's, bit for bit
 * (NaNs included). */
static LLVMValueRef gen_fp8_to_f32(Gen *g, LLVMValueRef code, const Fp8Format *fmt) {
    LLVMBuilderRef b = g->b;
    int shift = 23 - fmt->man_bits;
    LLVMValueRef c = LLVMBuildZExt(b, code, g->m->t.i32, "");
    LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, c, ci32(g, 0x80), ""), ci32(g, 24), "");
    LLVMValueRef mag = LLVMBuildAnd(b, c, ci32(g, 0x7f), "");
    LLVMValueRef e = LLVMBuildLShr(b, mag, ci32(g, fmt->man_bits), "");
    LLVMValueRef m = LLVMBuildAnd(b, mag, ci32(g, (1 << fmt->man_bits) - 1), "");
    LLVMValueRef normal = LLVMBuildOr(b, LLVMBuildShl(b, LLVMBuildAdd(b, e, ci32(g, 127 - fmt->bias), ""), ci32(g, 23), ""),
                                      LLVMBuildShl(b, m, ci32(g, shift), ""), "");
    LLVMValueRef sub = LLVMBuildFMul(b, LLVMBuildUIToFP(b, m, g->m->t.f32, ""),
                                     LLVMConstReal(g->m->t.f32, ldexp(1.0, 1 - fmt->bias - fmt->man_bits)), "");
    LLVMValueRef bits = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, e, ci32(g, 0), ""),
                                        LLVMBuildBitCast(b, sub, g->m->t.i32, ""), normal, "");
    if (fmt->ieee) { /* inf, or NaN as 0x7fffffff */
        LLVMValueRef special = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, m, ci32(g, 0), ""), ci32(g, 0x7f800000),
                                               ci32(g, 0x7fffffff), "");
        LLVMValueRef top = ci32(g, (1 << (7 - fmt->man_bits)) - 1);
        bits = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, e, top, ""), special, bits, "");
    } else {
        bits = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, mag, ci32(g, 0x7f), ""), ci32(g, 0x7ff00000), bits, "");
    }
    return LLVMBuildBitCast(b, LLVMBuildOr(b, bits, sign, ""), g->m->t.f32, "");
}

static LLVMValueRef gen_f32_to_fp8(Gen *g, LLVMValueRef f, const Fp8Format *fmt) {
    LLVMBuilderRef b = g->b;
    int drop = 23 - fmt->man_bits, emin = 1 - fmt->bias;
    LLVMValueRef u = LLVMBuildBitCast(b, f, g->m->t.i32, "");
    LLVMValueRef a = LLVMBuildAnd(b, u, ci32(g, 0x7fffffff), "");
    LLVMValueRef sign = LLVMBuildAnd(b, LLVMBuildLShr(b, u, ci32(g, 24), ""), ci32(g, 0x80), "");
    /* below the smallest normal: |f| in units of the smallest subnormal, rounded to even */
    LLVMValueRef scaled = LLVMBuildFMul(b, LLVMBuildBitCast(b, a, g->m->t.f32, ""),
                                        LLVMConstReal(g->m->t.f32, ldexp(1.0, fmt->man_bits - emin)), "");
    LLVMValueRef rounded = nvptx_call(g, "llvm.rint.f32", g->m->t.f32, &scaled, 1);
    LLVMValueRef sub = nvptx_call(g, "llvm.fptoui.sat.i32.f32", g->m->t.i32, &rounded, 1);
    /* normal: round the dropped mantissa bits to even, rebase the exponent */
    LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, a, ci32(g, drop), ""), ci32(g, 1), "");
    LLVMValueRef r = LLVMBuildAdd(b, LLVMBuildAdd(b, a, ci32(g, (1 << (drop - 1)) - 1), ""), odd, "");
    LLVMValueRef normal = LLVMBuildSub(b, LLVMBuildLShr(b, r, ci32(g, drop), ""),
                                       ci32(g, (127 - fmt->bias) << fmt->man_bits), "");
    LLVMValueRef is_sub = LLVMBuildICmp(b, LLVMIntULT, a, ci32(g, (int64_t)(emin + 127) << 23), "");
    LLVMValueRef code = LLVMBuildSelect(b, is_sub, sub, normal, "");
    LLVMValueRef over = LLVMBuildICmp(b, LLVMIntUGT, code, ci32(g, fmt->max_finite), "");
    code = LLVMBuildSelect(b, over, ci32(g, fmt->ieee ? fmt->max_finite + 1 : 0x7f), code, "");
    code = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntUGT, a, ci32(g, 0x7f800000), ""), ci32(g, 0x7f), code, "");
    return LLVMBuildTrunc(b, LLVMBuildOr(b, code, sign, ""), g->m->t.i8, "");
}

/* The same by the hardware (sm_90 on; sm_89 has it from PTX 8.1, newer than
 * blkc's PTX for it): cvt.rn.satfinite rounds to nearest
 * even as numeric.c does but saturates, so what lies past the largest
 * finite's rounding boundary (a tie there goes up when its code is odd) and
 * NaN get numeric.c's codes after: e4m3 sign | 0x7f (NaN), e5m2 sign | inf,
 * NaN sign | 0x7f. About 6 instructions where the integer form takes 14. */
static LLVMValueRef hw_f32_to_fp8(Gen *g, LLVMValueRef f, const Fp8Format *fmt) {
    LLVMBuilderRef b = g->b;
    LLVMValueRef args[2] = {LLVMConstReal(g->m->t.f32, 0.0), f}; /* the second into the low byte */
    LLVMValueRef pair = nvptx_asm_call(g, g->m->t.i16, fmt->ieee ? "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;"
                                                               : "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;",
                                       "=h,f,f", args, 2, false);
    LLVMValueRef code = LLVMBuildTrunc(b, pair, g->m->t.i8, "");
    double max = fp8_to_f32((uint8_t)fmt->max_finite, fmt);
    double boundary = max + ldexp(1.0, ilogb(max) - fmt->man_bits - 1);
    LLVMValueRef a = nvptx_call(g, "llvm.fabs.f32", g->m->t.f32, &f, 1);
    LLVMValueRef over = LLVMBuildFCmp(b, fmt->max_finite & 1 ? LLVMRealUGE : LLVMRealUGT, a,
                                      LLVMConstReal(g->m->t.f32, boundary), ""); /* (NaN too: unordered) */
    LLVMValueRef top = LLVMBuildTrunc(b, LLVMBuildLShr(b, LLVMBuildBitCast(b, f, g->m->t.i32, ""), ci32(g, 24), ""),
                                      g->m->t.i8, ""); /* the sign and 7 exponent bits */
    LLVMValueRef nan_code = LLVMBuildOr(b, top, LLVMConstInt(g->m->t.i8, 0x7f, 0), "");
    LLVMValueRef special = nan_code;
    if (fmt->ieee) {
        LLVMValueRef inf = LLVMBuildOr(b, LLVMBuildAnd(b, top, LLVMConstInt(g->m->t.i8, 0x80, 0), ""),
                                       LLVMConstInt(g->m->t.i8, (unsigned)fmt->max_finite + 1, 0), "");
        special = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, f, f, ""), nan_code, inf, "");
    }
    return LLVMBuildSelect(b, over, special, code, "");
}

/* `as` (docs/language.md §5; numeric.c's convert_scalar is the reference) */
LLVMValueRef nvptx_convert_dtype(Gen *g, LLVMValueRef x, DType from, DType to) {
    if (from == to) return x;
    const Fp8Format *from8 = fp8_format(from), *to8 = fp8_format(to);
    if (from8) /* exact in f32 */
        return nvptx_convert_dtype(g, gen_fp8_to_f32(g, x, from8), DT_F32, to);
    if (to8) /* through f32, as PyTorch */
        return (g->m->arch->fp8_cvt ? hw_f32_to_fp8 : gen_f32_to_fp8)(g, nvptx_convert_dtype(g, x, from, DT_F32), to8);
    LLVMTypeRef t = ty(g, to);
    bool ff = dtype_is_float(from), tf = dtype_is_float(to);
    if (to == DT_I1)
        return ff ? LLVMBuildFCmp(g->b, LLVMRealUNE, x, LLVMConstNull(ty(g, from)), "")
                  : LLVMBuildICmp(g->b, LLVMIntNE, x, LLVMConstNull(ty(g, from)), "");
    if (ff && tf) {
        if (from == DT_F64 && dtype_bits(to) == 16) /* through f32, as PyTorch */
            return nvptx_convert_dtype(g, LLVMBuildFPTrunc(g->b, x, g->m->t.f32, ""), DT_F32, to);
        if (dtype_bits(to) > dtype_bits(from)) return LLVMBuildFPExt(g->b, x, t, "");
        if (dtype_bits(to) < dtype_bits(from)) return LLVMBuildFPTrunc(g->b, x, t, "");
        /* f16 <-> bf16: through f32 (exact), then one rounding */
        return LLVMBuildFPTrunc(g->b, LLVMBuildFPExt(g->b, x, g->m->t.f32, ""), t, "");
    }
    bool from_unsigned = from == DT_I1 || dtype_is_unsigned(from);
    if (tf) return from_unsigned ? LLVMBuildUIToFP(g->b, x, t, "") : LLVMBuildSIToFP(g->b, x, t, "");
    if (ff) {
        /* truncate toward zero, saturating, NaN -> 0: the .sat intrinsics */
        char name[48];
        snprintf(name, sizeof name, "llvm.%s.sat.i%d.%s", dtype_is_unsigned(to) ? "fptoui" : "fptosi", dtype_bits(to),
                 llvm_float_name(from));
        return nvptx_call(g, name, t, &x, 1);
    }
    int fb = dtype_bits(from), tb = dtype_bits(to);
    if (tb > fb) return from_unsigned ? LLVMBuildZExt(g->b, x, t, "") : LLVMBuildSExt(g->b, x, t, "");
    if (tb < fb) return LLVMBuildTrunc(g->b, x, t, "");
    return x; /* signed <-> unsigned of one width: the same bits */
}

static LLVMValueRef mulhi(Gen *g, uint32_t a, LLVMValueRef b) {
    LLVMValueRef args[2] = {LLVMConstInt(g->m->t.i32, a, 0), b};
    return nvptx_call(g, "llvm.nvvm.mulhi.ui", g->m->t.i32, args, 2);
}

/* Philox4x32-10 of (seed, offset) -> the first output word (design-notes §2). */
/* Word `word` (0-3) of the Philox4x32-10 draw; LLVM merges the rounds of two
 * words of one draw (randn takes two). */
static LLVMValueRef philox(Gen *g, LLVMValueRef seed, LLVMValueRef offset, DType off_dt, int word) {
    LLVMValueRef k0 = LLVMBuildTrunc(g->b, seed, g->m->t.i32, "");
    LLVMValueRef k1 = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, seed, ci64(g, 32), ""), g->m->t.i32, "");
    LLVMValueRef c0, c1, c2 = ci32(g, 0), c3 = ci32(g, 0);
    if (off_dt == DT_I64) {
        c0 = LLVMBuildTrunc(g->b, offset, g->m->t.i32, "");
        c1 = LLVMBuildTrunc(g->b, LLVMBuildLShr(g->b, offset, ci64(g, 32), ""), g->m->t.i32, "");
    } else {
        c0 = offset;
        c1 = ci32(g, 0);
    }
    for (int round = 0; round < 10; round++) {
        LLVMValueRef n0 = LLVMBuildXor(g->b, LLVMBuildXor(g->b, mulhi(g, 0xCD9E8D57u, c2), c1, ""), k0, "");
        LLVMValueRef n2 = LLVMBuildXor(g->b, LLVMBuildXor(g->b, mulhi(g, 0xD2511F53u, c0), c3, ""), k1, "");
        LLVMValueRef n1 = LLVMBuildMul(g->b, ci32(g, (int32_t)0xCD9E8D57u), c2, "");
        LLVMValueRef n3 = LLVMBuildMul(g->b, ci32(g, (int32_t)0xD2511F53u), c0, "");
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
        k0 = LLVMBuildAdd(g->b, k0, ci32(g, (int32_t)0x9E3779B9u), "");
        k1 = LLVMBuildAdd(g->b, k1, ci32(g, (int32_t)0xBB67AE85u), "");
    }
    LLVMValueRef words[4] = {c0, c1, c2, c3};
    return words[word & 3];
}

static LLVMValueRef rand_float(Gen *g, LLVMValueRef word) {
    /* x = (int32) word; x < 0 ? -x - 1 : x; then x * 2^-31 as f32 (one rounding each) */
    LLVMValueRef neg = LLVMBuildICmp(g->b, LLVMIntSLT, word, ci32(g, 0), "");
    LLVMValueRef x = LLVMBuildSelect(g->b, neg, LLVMBuildNot(g->b, word, ""), word, "");
    LLVMValueRef f = LLVMBuildSIToFP(g->b, x, g->m->t.f32, "");
    return LLVMBuildFMul(g->b, f, LLVMConstReal(g->m->t.f32, 4.6566127342e-10f), "");
}

/* One element of an elementwise op, from its operands' elements. */
LLVMValueRef nvptx_elementwise(Gen *g, const BirOp *op, LLVMValueRef *x) {
    const BirFunction *f = g->f;
    BlkType rt = f->values[op->results[0]].type;
    DType d = rt.dtype, od = op->noperands ? f->values[op->operands[0]].type.dtype : d;
    bool fl = dtype_is_float(d);
    LLVMBuilderRef b = g->b;
    switch (op->code) {
    case BIR_CONVERT: return nvptx_convert_dtype(g, x[0], od, d);
    case BIR_PTR_CAST: return x[0];
    case BIR_PTR_ADD: {
        DType offd = f->values[op->operands[1]].type.dtype;
        LLVMValueRef off = dtype_bits(offd) == 64      ? x[1]
                           : dtype_is_unsigned(offd) ? LLVMBuildZExt(b, x[1], g->m->t.i64, "")
                                                     : LLVMBuildSExt(b, x[1], g->m->t.i64, "");
        return LLVMBuildGEP2(b, mem_ty(g, rt.elem), x[0], &off, 1, "");
    }
    case BIR_ADD: return fl ? fp_contract(g, LLVMBuildFAdd(b, x[0], x[1], "")) : LLVMBuildAdd(b, x[0], x[1], "");
    case BIR_SUB: return fl ? fp_contract(g, LLVMBuildFSub(b, x[0], x[1], "")) : LLVMBuildSub(b, x[0], x[1], "");
    case BIR_MUL: return fl ? fp_contract(g, LLVMBuildFMul(b, x[0], x[1], "")) : LLVMBuildMul(b, x[0], x[1], "");
    case BIR_DIV:
        if (fl) return fdiv(g, x[0], x[1], d);
        return dtype_is_signed(d) ? LLVMBuildSDiv(b, x[0], x[1], "") : LLVMBuildUDiv(b, x[0], x[1], "");
    case BIR_REM:
        if (fl) return LLVMBuildFRem(b, x[0], x[1], "");
        return dtype_is_signed(d) ? LLVMBuildSRem(b, x[0], x[1], "") : LLVMBuildURem(b, x[0], x[1], "");
    case BIR_AND: return LLVMBuildAnd(b, x[0], x[1], "");
    case BIR_OR: return LLVMBuildOr(b, x[0], x[1], "");
    case BIR_XOR: return LLVMBuildXor(b, x[0], x[1], "");
    case BIR_SHL: return shift(g, true, x[0], x[1], d);
    case BIR_SHR: return shift(g, false, x[0], x[1], d);
    case BIR_UMULHI: return nvptx_call(g, "llvm.nvvm.mulhi.ui", g->m->t.i32, x, 2);
    case BIR_POW: return nvptx_pow(g, x[0], x[1]);
    case BIR_MIN: return nvptx_minmax(g, false, x[0], x[1], d);
    case BIR_MAX: return nvptx_minmax(g, true, x[0], x[1], d);
    case BIR_EQ: case BIR_NE: case BIR_LT: case BIR_LE: case BIR_GT: case BIR_GE: {
        int k = op->code - BIR_EQ;
        if (dtype_is_float(od)) {
            static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
            return LLVMBuildFCmp(b, fp[k], x[0], x[1], "");
        }
        static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
        static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
        return LLVMBuildICmp(b, dtype_is_signed(od) ? sp[k] : up[k], x[0], x[1], "");
    }
    case BIR_NEG: return fl ? LLVMBuildFNeg(b, x[0], "") : LLVMBuildNeg(b, x[0], "");
    case BIR_NOT: return LLVMBuildNot(b, x[0], "");
    case BIR_ABS:
        if (fl) {
            char name[24];
            snprintf(name, sizeof name, "llvm.fabs.%s", llvm_float_name(d));
            return nvptx_call(g, name, ty(g, d), x, 1);
        }
        if (!dtype_is_signed(d)) return x[0];
        return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, x[0], LLVMConstNull(ty(g, d)), ""),
                               LLVMBuildNeg(b, x[0], ""), x[0], "");
#define BIR_OP(...)
#define MATH_OP(ID, fn) case BIR_##ID: return gen_math_##fn(g, x[0]);
#include "ops.def"
    case BIR_SELECT: return LLVMBuildSelect(b, x[0], x[1], x[2], "");
    case BIR_FMA: return nvptx_call(g, d == DT_F64 ? "llvm.fma.f64" : "llvm.fma.f32", ty(g, d), x, 3);
    case BIR_RAND: case BIR_RANDINT: {
        LLVMValueRef w = philox(g, x[0], x[1], f->values[op->operands[1]].type.dtype, (int)op->attr);
        return op->code == BIR_RAND ? rand_float(g, w) : w;
    }
    /* every op of another kind is none of this function's: listed, not a default, so that an
       elementwise op without its case above is a build error */
#define OPS_TAKES_KIND_ELEMENTWISE
#define OPS_TAKES_KIND_MATH
#include "ops_cases.inc"
    case BIR_OPCODE_COUNT: return NULL;
    }
    return NULL;
}

void nvptx_elementwise_regs(Gen *g, const BirOp *op, LLVMValueRef **x, LLVMValueRef *out) {
    const int *a = op->operands;
    int r = op->results[0];
    int run = nvptx_equal_run(g->s->plan, r); /* e.g. `cols < N`: one compare per vector, fewer live registers */
    for (int k = 0; k < nregs(g, r); k++) {
        if (k & (run - 1)) {
            out[k] = out[k & ~(run - 1)];
            continue;
        }
        LLVMValueRef e[3];
        for (int i = 0; i < op->noperands; i++) e[i] = x[i] ? x[i][k] : g->regs[a[i]][0];
        out[k] = nvptx_elementwise(g, op, e);
    }
}
