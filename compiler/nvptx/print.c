/* print.c: device_print through vprintf; device_assert and assume, checked
 * through __assertfail in a debug build. */
#include "gen.h"

/* ------------------------------------------------------------ printing */

/* device_print: each thread prints the elements it holds first (one line
 * each, like the interpreter: "pid (x, y, z) idx [i] prefix value"); a
 * scalar prints from thread 0. Through vprintf, which the driver links. */
bool nvptx_gen_print(Gen *g, const BirOp *op) {
    LLVMValueRef pid[3];
    for (int i = 0; i < 3; i++) {
        char name[40];
        snprintf(name, sizeof name, "llvm.nvvm.read.ptx.sreg.ctaid.%c", "xyz"[i]);
        pid[i] = nvptx_call0(g, name, g->m->t.i32);
    }
    LLVMTypeRef vp_params[2] = {g->m->t.genptr, g->m->t.genptr};
    LLVMTypeRef vp_ty = LLVMFunctionType(g->m->t.i32, vp_params, 2, 0);
    LLVMValueRef vprintf = LLVMGetNamedFunction(g->m->mod, "vprintf");
    if (!vprintf) vprintf = LLVMAddFunction(g->m->mod, "vprintf", vp_ty);
    /* the prefix is the user's text, not format: each '%' doubled, so vprintf prints it as is */
    size_t plen = strlen(op->text);
    char *prefix = arena_alloc(&g->arena, 2 * plen + 1), *q = prefix;
    for (size_t i = 0; i < plen; i++) {
        if (op->text[i] == '%') *q++ = '%';
        *q++ = op->text[i];
    }
    *q = 0;
    size_t fmt_size = (size_t)(q - prefix) + 64;
    char *fmt = arena_alloc(&g->arena, fmt_size);
    for (int a = 0; a < (op->noperands ? op->noperands : 1); a++) {
        int v = op->noperands ? op->operands[a] : -1;
        BlkType t = v >= 0 ? vtype(g, v) : type_scalar(DT_VOID);
        const Layout *l = v >= 0 ? &g->s->plan->layouts[v] : NULL;
        int n = t.rank ? l->nregs : 1;
        LLVMValueRef cond = t.rank ? nvptx_owner(g, l) : is_thread0(g);
        LLVMBasicBlockRef merge = nvptx_begin_if(g, cond);
        int32_t copies = t.rank ? nvptx_layout_copy_regs(l) : 0;
        for (int k = 0; k < n; k++) {
            if (k & copies) continue;
            const char *vf = v < 0                          ? ""
                             : t.dtype == DT_F64             ? " %.17g"
                             : dtype_holds_float(t.dtype)    ? " %.9g"
                             : t.dtype == DT_PTR             ? " 0x%llx"
                             : dtype_is_unsigned(t.dtype)    ? " %llu"
                                                             : " %lld";
            if (t.rank == 2) snprintf(fmt, fmt_size, "pid (%%d, %%d, %%d) idx [%%d, %%d] %s%s\n", prefix, vf);
            else if (t.rank == 1) snprintf(fmt, fmt_size, "pid (%%d, %%d, %%d) idx [%%d] %s%s\n", prefix, vf);
            else snprintf(fmt, fmt_size, "pid (%%d, %%d, %%d) %s%s\n", prefix, vf);
            LLVMValueRef fields[6];
            int nf = 0;
            for (int i = 0; i < 3; i++) fields[nf++] = pid[i];
            for (int d = 0; d < t.rank; d++) fields[nf++] = nvptx_coord(g, l, d, k);
            if (v >= 0) {
                LLVMValueRef x = g->regs[v][k];
                if (dtype_holds_float(t.dtype)) x = nvptx_convert_dtype(g, x, t.dtype, DT_F64);
                else if (t.dtype == DT_PTR) x = addr_i64(g, x);
                else x = nvptx_convert_dtype(g, x, t.dtype, dtype_is_unsigned(t.dtype) ? DT_U64 : DT_I64);
                fields[nf++] = x;
            }
            LLVMTypeRef ftys[6];
            for (int i = 0; i < nf; i++) ftys[i] = LLVMTypeOf(fields[i]);
            LLVMTypeRef st = LLVMStructTypeInContext(g->m->ctx, ftys, (unsigned)nf, 0);
            /* the argument buffer lives in the entry block, so loops do not grow the stack */
            LLVMBasicBlockRef here = LLVMGetInsertBlock(g->b);
            LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(g->fn);
            LLVMPositionBuilderBefore(g->b, LLVMGetFirstInstruction(entry));
            LLVMValueRef buf = LLVMBuildAlloca(g->b, st, "");
            LLVMPositionBuilderAtEnd(g->b, here);
            for (int i = 0; i < nf; i++) LLVMBuildStore(g->b, fields[i], LLVMBuildStructGEP2(g->b, st, buf, (unsigned)i, ""));
            LLVMValueRef args[2] = {LLVMBuildGlobalStringPtr(g->b, fmt, ""), buf};
            LLVMBuildCall2(g->b, vp_ty, vprintf, args, 2, "");
        }
        nvptx_end_if(g, merge);
    }
    return true;
}

/* ------------------------------------------------------------ checking */

/* __assertfail(message, file, line, function, char size): CUDA's device-side
 * assert, which the driver links as it does vprintf; it prints the message
 * with the block and thread and stops the kernel (CUDA_ERROR_ASSERT). */
static void call_assertfail(Gen *g, const BirOp *op, const char *message) {
    LLVMTypeRef params[5] = {g->m->t.genptr, g->m->t.genptr, g->m->t.i32, g->m->t.genptr, g->m->t.i64};
    LLVMTypeRef fn_ty = LLVMFunctionType(LLVMVoidTypeInContext(g->m->ctx), params, 5, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(g->m->mod, "__assertfail");
    if (!fn) fn = LLVMAddFunction(g->m->mod, "__assertfail", fn_ty);
    const char *file = g->f->src && g->f->src->name ? g->f->src->name : "<source>";
    LLVMValueRef args[5] = {LLVMBuildGlobalStringPtr(g->b, message, ""), LLVMBuildGlobalStringPtr(g->b, file, ""),
                            ci32(g, (int32_t)op->span.line), LLVMBuildGlobalStringPtr(g->b, g->f->name, ""),
                            LLVMConstInt(g->m->t.i64, 1, 0)};
    LLVMBuildCall2(g->b, fn_ty, fn, args, 5, "");
}

/* device_assert: in a debug build, each thread ORs the failures among the
 * elements it holds (masked off ones pass) and calls __assertfail once if
 * any; a scalar is checked by thread 0. Without debug, nothing. assume:
 * llvm.assume, or in a debug build the check instead (a false assumption is
 * otherwise undefined behaviour, silently). */
bool nvptx_gen_check(Gen *g, const BirOp *op) {
    int v = op->operands[0];
    if (op->code == BIR_ASSUME && !g->m->opt->debug) { /* in a debug build, LLVM would fold the check away */
        LLVMValueRef c = g->regs[v][0];
        nvptx_call(g, "llvm.assume", LLVMVoidTypeInContext(g->m->ctx), &c, 1);
    }
    if (!g->m->opt->debug) return true;
    BlkType t = vtype(g, v);
    LLVMValueRef failed;
    if (!t.rank) {
        failed = LLVMBuildAnd(g->b, LLVMBuildNot(g->b, g->regs[v][0], ""), is_thread0(g), "");
        if (op->code == BIR_ASSERT && op->operands[1] != BIR_NONE)
            failed = LLVMBuildAnd(g->b, failed, g->regs[op->operands[1]][0], "");
    } else {
        const Layout *l = &g->s->plan->layouts[v];
        LLVMValueRef *mask = op->operands[1] != BIR_NONE ? nvptx_operand(g, op->operands[1], l, 0) : NULL;
        int32_t copies = nvptx_layout_copy_regs(l);
        failed = LLVMConstInt(g->m->t.i1, 0, 0);
        for (int k = 0; k < l->nregs; k++) {
            if (k & copies) continue;
            LLVMValueRef bad = LLVMBuildNot(g->b, g->regs[v][k], "");
            if (mask) bad = LLVMBuildAnd(g->b, bad, mask[k], "");
            failed = LLVMBuildOr(g->b, failed, bad, "");
        }
    }
    LLVMBasicBlockRef merge = nvptx_begin_if(g, failed);
    if (op->code == BIR_ASSUME) {
        call_assertfail(g, op, "the condition of 'assume' is false");
    } else {
        size_t n = strlen(op->text) + 40;
        char *message = arena_alloc(&g->arena, n);
        snprintf(message, n, op->text[0] ? "device_assert: %s" : "device_assert", op->text);
        call_assertfail(g, op, message);
    }
    nvptx_end_if(g, merge);
    return true;
}
