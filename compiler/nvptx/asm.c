/* asm.c: inline_asm_elementwise, the user's PTX once per element. */
#include "gen.h"

/* --------------------------------------------------------- inline asm */

/* The register an asm operand of dtype d travels in, for constraint letter
 * c (sema allows only the pairs that fit): f32 through 'r' as its bits. */
static LLVMTypeRef asm_type(Gen *g, char c, DType d) {
    return c == 'r' && d == DT_F32 ? g->t.i32 : ty(g, d);
}

/* inline_asm_elementwise: each register of the result gets one asm
 * statement, its inputs the arguments' registers in the result's layout;
 * an impure asm has side effects (LLVM keeps and orders it). */
bool nvptx_gen_inline_asm(Gen *g, const BirOp *op, int64_t slot) {
    int r = op->results[0], n = op->noperands;
    BlkType rt = vtype(g, r);
    const char *cons = op->asm_constraints;
    char letters[16];
    int nl = 0;
    for (const char *p = cons; *p && nl < 16; p++) /* one letter an entry, the output's after its '=' */
        if (*p != '=' && *p != ',') letters[nl++] = *p;
    LLVMValueRef **in = arena_alloc(&g->arena, (size_t)n * sizeof *in);
    for (int i = 0; i < n; i++)
        in[i] = rt.rank ? nvptx_operand(g, op->operands[i], &g->s->plan->layouts[r], slot) : g->regs[op->operands[i]];
    LLVMValueRef *out = nvptx_new_regs(g, r), *args = arena_alloc(&g->arena, (size_t)n * sizeof *args);
    LLVMTypeRef ret = asm_type(g, letters[0], rt.dtype);
    for (int k = 0; k < nregs(g, r); k++) {
        for (int i = 0; i < n; i++) {
            DType d = vtype(g, op->operands[i]).dtype;
            args[i] = in[i][k];
            if (asm_type(g, letters[1 + i], d) != ty(g, d)) args[i] = LLVMBuildBitCast(g->b, args[i], g->t.i32, "");
        }
        LLVMValueRef v = nvptx_asm_call(g, ret, op->text, cons, args, n, op->attr == 0);
        out[k] = ret != ty(g, rt.dtype) ? LLVMBuildBitCast(g->b, v, ty(g, rt.dtype), "") : v;
    }
    return true;
}
