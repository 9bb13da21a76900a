/* sema_asm.c: inline_asm_elementwise: the asm and its constraints against
 * the arguments' types and registers (pack), its operand references (which
 * LLVM would abort on), and the reference helper the interpreter runs. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

/* The LLVM constraint letter an asm operand of dtype d may take: h for
 * 16-bit values, r for 32-bit integers and f32 (its bits), l for 64-bit
 * integers, f for f32, d for f64. */
static bool asm_letter_fits(char c, DType d) {
    switch (c) {
    case 'h': return dtype_bits(d) == 16 && !dtype_is_fp8(d);
    case 'r': return d == DT_I32 || d == DT_U32 || d == DT_F32;
    case 'l': return d == DT_I64 || d == DT_U64;
    case 'f': return d == DT_F32;
    case 'd': return d == DT_F64;
    default: return false;
    }
}

/* inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack,
 * reference): Triton's escape hatch, one output an element; args a value or
 * a tuple of them (broadcast to one shape), constraints one output ("=r")
 * then one per argument. reference (blk's): a helper computing the same on
 * scalars, which the interpreter runs (it cannot run PTX). */
void sema_check_inline_asm(Sema *S, Expr *e) {
    Expr *text = sema_arg(e, 0), *cons = sema_arg(e, 1), *args = sema_arg(e, 2), *pure = sema_arg(e, 4),
         *pack = sema_arg(e, 5), *ref = sema_arg(e, 6);
    const char *name = e->u.call.name;
    if (text->kind != E_STRING || cons->kind != E_STRING) {
        error(S, (text->kind != E_STRING ? text : cons)->span,
              "the asm and the constraints of '%s' are string literals",
              name);
        return;
    }
    Expr *inputs[MAX_COMBINED];
    int n = sema_tuple_items(S, args, inputs, name, "takes at most %d arguments, got %d");
    if (n < 0) return;
    BlkType shape = type_scalar(DT_VOID);
    for (int i = 0; i < n; i++) {
        if (!sema_require_value(S, inputs[i])) return;
        if (i == 0) shape = inputs[i]->type;
        else if (!sema_broadcast_or_error(S, inputs[i]->span, shape, inputs[i]->type, &shape)) return;
    }
    DType out;
    bool is_pure;
    int64_t packed = 1;
    if (!sema_dtype_arg(S, sema_arg(e, 3), &out) || !sema_flag_arg(S, pure, "'is_pure'", &is_pure)) return;
    if (pack && !sema_const_int_arg(S, e, pack, "pack", &packed)) return;
    if (packed < 1 || packed > 16 || (packed & (packed - 1))) {
        error(S, pack->span, "pack = %lld: '%s' runs its asm on 1, 2, 4, 8 or 16 elements at a time", (long long)packed,
              name);
        return;
    }
    /* the operands' registers: the output's, then each argument's (pack
     * elements of a narrow type share 32-bit registers) */
    int regs_of[MAX_COMBINED + 1], bits_of[MAX_COMBINED + 1], nentries = 0;
    for (int i = 0; i <= n; i++) {
        DType d = i == 0 ? out : inputs[i - 1]->type.dtype;
        if (!asm_pack_registers(d, (int)packed, &regs_of[i], &bits_of[i])) {
            error(S, pack->span, "pack = %lld: %lld elements of %s make %lld bits, no register (pack 8-bit elements by "
                  "at least 4, 16-bit ones by at least 2)", (long long)packed, (long long)packed, dtype_name(d),
                  (long long)packed * dtype_bits(d));
            return;
        }
        nentries += regs_of[i];
    }
    /* the constraints: "=X" per output register, then one letter per argument register */
    const char *c = cons->u.str.text, *end = c + cons->u.str.len;
    int entry = 0, outputs = regs_of[0], given = 1;
    for (const char *p = c; p < end; p++) given += *p == ',';
    if (packed > 1 && given != nentries) {
        error(S, cons->span, "the constraints \"%.*s\" have %d entr%s; with pack = %lld the output takes %d register%s "
              "and the argument%s %d, %d in all", (int)cons->u.str.len, c, given, given == 1 ? "y" : "ies",
              (long long)packed, outputs, outputs == 1 ? "" : "s", n == 1 ? "" : "s", nentries - outputs, nentries);
        return;
    }
    for (const char *p = c; p <= end; entry++) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        if (!q) q = end;
        bool output = entry < outputs;
        int operand = 0; /* 0 the output, i the argument i */
        for (int e2 = entry; operand <= n && e2 >= regs_of[operand]; operand++) e2 -= regs_of[operand];
        size_t len = (size_t)(q - p);
        char letter = len == (output ? 2u : 1u) && (!output || p[0] == '=') ? p[output] : 0;
        DType want = operand == 0 ? out : operand <= n ? inputs[operand - 1]->type.dtype : DT_ERROR;
        bool shared = operand <= n && bits_of[operand] != dtype_bits(want); /* several elements a register */
        bool fits = shared ? letter == (bits_of[operand] == 32 ? 'r' : 'h') : asm_letter_fits(letter, want);
        if (entry >= nentries || !letter || !fits) {
            if (entry >= nentries)
                error(S, cons->span,
                      "the constraints \"%.*s\" name more operands than one output and the %d argument%s",
                      (int)cons->u.str.len, c, n, n == 1 ? "" : "s");
            else if (shared)
                error(S, cons->span, "constraint %d (\"%.*s\") does not fit %d %s elements packed in a %d-bit register "
                      "(%s)", entry + 1, (int)len, p, bits_of[operand] / dtype_bits(want), dtype_name(want),
                      bits_of[operand], bits_of[operand] == 32 ? (output ? "\"=r\"" : "\"r\"")
                                                               : (output ? "\"=h\"" : "\"h\""));
            else
                error(S, cons->span, "constraint %d (\"%.*s\") does not fit the %s %s (%s; the letters: h 16-bit, r "
                      "32-bit integers and f32's bits, l 64-bit integers, f f32, d f64)", entry + 1, (int)len, p,
                      output ? "output's type" : "argument's type", dtype_name(want),
                      output ? "the output's is '=' and one letter" : "an argument's is one letter");
            return;
        }
        p = q + 1;
    }
    if (entry != nentries) {
        error(S, cons->span, "the constraints \"%.*s\" have %d entr%s; one output and %d argument%s need %d",
              (int)cons->u.str.len, c, entry, entry == 1 ? "y" : "ies", n, n == 1 ? "" : "s", n + 1);
        return;
    }
    /* the asm's operand references, which LLVM would otherwise reject by aborting: $$ (a '$'),
     * $N or ${N} with N an operand register (the output's first, then the arguments'; no modifiers) */
    const char *t = text->u.str.text, *tend = t + text->u.str.len;
    for (const char *p = t; p < tend; p++) {
        if (*p != '$') continue;
        const char *at = p++;
        if (p < tend && *p == '$') continue;
        bool braced = p < tend && *p == '{';
        if (braced) p++;
        long operand = -1;
        if (p < tend && *p >= '0' && *p <= '9') {
            operand = 0;
            while (p < tend && *p >= '0' && *p <= '9' && operand < nentries) operand = operand * 10 + (*p++ - '0');
        }
        bool closed = !braced || (p < tend && *p == '}');
        if (operand < 0 || operand >= nentries || !closed) {
            if (packed == 1)
                error(S, text->span, "the asm's '%.*s' is no operand: write $0 for the output, $1 to $%d for the "
                      "argument%s, $$ for a '$'", (int)(p - at) + (braced && p < tend), at, n, n == 1 ? "" : "s");
            else
                error(S, text->span, "the asm's '%.*s' is no operand: with pack = %lld write $0 to $%d for the "
                      "output's registers, $%d to $%d for the arguments', $$ for a '$'",
                      (int)(p - at) + (braced && p < tend), at, (long long)packed, outputs - 1, outputs, nentries - 1);
            return;
        }
        if (!braced) p--; /* the loop's p++ moves past the last digit */
    }
    if (ref) {
        if (ref->type.dtype != DT_HELPER) {
            if (ref->type.dtype != DT_ERROR)
                error(S, ref->span, "the reference of '%s' is the name of a helper computing the same on scalars",
                      name);
            return;
        }
        HelperDef *h = sema_find_helper(S, ref->u.name.name);
        if (h->params.len != n) {
            error(S, ref->span, "'%s' takes %d argument%s, but the asm has %d", h->name, h->params.len,
                  h->params.len == 1 ? "" : "s", n);
            note(S, h->name_span, "'%s' is defined here", h->name);
            return;
        }
        Expr *call = sema_scalar_call(S, ref->span, h, inputs, n);
        if (!sema_may_inline(S, ref->span, h, "use as the reference of")) return;
        Expr want = {.type = type_scalar(out)}, *wants[1] = {&want};
        int errors_before = S->de->errors;
        sema_check_combine_result(S, e, call, h, wants, 1);
        if (S->de->errors != errors_before) {
            note(S, ref->span, "'%s' is the reference of '%s' here", h->name, name);
            return;
        }
        e->u.call.combine = call;
    }
    e->type = type_with_shape(type_scalar(out), shape.rank, shape.shape);
}
