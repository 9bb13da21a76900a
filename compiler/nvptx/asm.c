/* asm.c: inline_asm_elementwise, the user's PTX once per element, or once
 * per `pack` elements (Triton's packed form: narrow elements share 32-bit
 * registers, the first in the low bits). */
#include "gen.h"

/* --------------------------------------------------------- inline asm */

/* The register an asm operand of dtype d travels in, for constraint letter
 * c (sema allows only the pairs that fit): f32 through 'r' as its bits; a
 * register of several packed elements as an integer of its width. */
static LLVMTypeRef asm_type(Gen *g, char c, DType d, int bits) {
    if (bits != dtype_bits(d)) return LLVMIntTypeInContext(g->m->ctx, (unsigned)bits);
    return c == 'r' && d == DT_F32 ? g->m->t.i32 : ty(g, d);
}

/* The pack elements at x[k ..] (zeros past nregs) as `regs` operand
 * registers of types tys into args. */
static void pack_operand(Gen *g, LLVMValueRef *x, int k, int nregs, int pack, DType d, int regs,
                         const LLVMTypeRef *tys, LLVMValueRef *args) {
    if (regs == pack) { /* an element a register */
        for (int j = 0; j < pack; j++) {
            LLVMValueRef v = k + j < nregs ? x[k + j] : LLVMConstNull(ty(g, d));
            args[j] = LLVMTypeOf(v) != tys[j] ? LLVMBuildBitCast(g->b, v, tys[j], "") : v;
        }
        return;
    }
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(ty(g, d), (unsigned)pack));
    for (int j = 0; j < pack; j++)
        vec = LLVMBuildInsertElement(g->b, vec, k + j < nregs ? x[k + j] : LLVMConstNull(ty(g, d)), ci32(g, j), "");
    LLVMValueRef words = LLVMBuildBitCast(g->b, vec, LLVMVectorType(tys[0], (unsigned)regs), "");
    for (int j = 0; j < regs; j++) args[j] = LLVMBuildExtractElement(g->b, words, ci32(g, j), "");
}

/* inline_asm_elementwise: each group of `pack` registers of the result gets
 * one asm statement, its inputs the arguments' registers in the result's
 * layout; an impure asm has side effects (LLVM keeps and orders it). */
bool nvptx_gen_inline_asm(Gen *g, const BirOp *op, int64_t slot) {
    int r = op->results[0], n = op->noperands, pack = asm_pack_of(op->attr);
    BlkType rt = vtype(g, r);
    const char *cons = op->asm_constraints;
    int nl = 1;
    for (const char *p = cons; *p; p++) nl += *p == ',';
    char *letters = arena_alloc(&g->arena, (size_t)nl); /* one letter an entry, the outputs' after their '=' */
    nl = 0;
    for (const char *p = cons; *p; p++)
        if (*p != '=' && *p != ',') letters[nl++] = *p;
    /* each operand's registers (sema checked that they exist and that the letters fit) */
    int *regs = arena_alloc(&g->arena, (size_t)(n + 1) * sizeof *regs);
    int *first = arena_alloc(&g->arena, (size_t)(n + 1) * sizeof *first);
    LLVMTypeRef *reg_ty = arena_alloc(&g->arena, (size_t)(nl ? nl : 1) * sizeof *reg_ty); /* each entry's */
    int entries = 0;
    for (int i = 0; i <= n; i++) {
        DType d = i == 0 ? rt.dtype : vtype(g, op->operands[i - 1]).dtype;
        int bits = 0;
        asm_pack_registers(d, pack, &regs[i], &bits);
        first[i] = entries, entries += regs[i];
        for (int j = first[i]; j < entries && j < nl; j++) reg_ty[j] = asm_type(g, letters[j], d, bits);
    }
    LLVMValueRef **in = arena_alloc(&g->arena, (size_t)(n ? n : 1) * sizeof *in);
    for (int i = 0; i < n; i++)
        in[i] = rt.rank ? nvptx_operand(g, op->operands[i], &g->s->plan->layouts[r], slot) : g->regs[op->operands[i]];
    LLVMValueRef *out = nvptx_new_regs(g, r), *args = arena_alloc(&g->arena, (size_t)entries * sizeof *args);
    LLVMTypeRef ret = regs[0] == 1 ? reg_ty[0] : LLVMStructTypeInContext(g->m->ctx, reg_ty, (unsigned)regs[0], 0);
    int nr = nregs(g, r);
    LLVMValueRef *words = arena_alloc(&g->arena, (size_t)regs[0] * sizeof *words);
    for (int k = 0; k < nr; k += pack) {
        for (int i = 0; i < n; i++)
            pack_operand(g, in[i], k, nr, pack, vtype(g, op->operands[i]).dtype, regs[i + 1], reg_ty + first[i + 1],
                         args + first[i + 1] - regs[0]);
        LLVMValueRef v = nvptx_asm_call(g, ret, op->text, cons, args, entries - regs[0], !(op->attr & ASM_PURE));
        for (int j = 0; j < regs[0]; j++) words[j] = regs[0] == 1 ? v : LLVMBuildExtractValue(g->b, v, (unsigned)j, "");
        if (regs[0] == pack) { /* an element a register */
            for (int j = 0; j < pack && k + j < nr; j++)
                out[k + j] = reg_ty[j] != ty(g, rt.dtype) ? LLVMBuildBitCast(g->b, words[j], ty(g, rt.dtype), "") : words[j];
            continue;
        }
        LLVMValueRef all = LLVMGetUndef(LLVMVectorType(reg_ty[0], (unsigned)regs[0]));
        for (int j = 0; j < regs[0]; j++) all = LLVMBuildInsertElement(g->b, all, words[j], ci32(g, j), "");
        LLVMValueRef elems = LLVMBuildBitCast(g->b, all, LLVMVectorType(ty(g, rt.dtype), (unsigned)pack), "");
        for (int j = 0; j < pack && k + j < nr; j++) out[k + j] = LLVMBuildExtractElement(g->b, elems, ci32(g, j), "");
    }
    return true;
}
