/* test_bir.c: lowering to the block IR, its verifier and its text form.
 * tests/bir/NAME.blk, one feature each, lowers to exactly tests/bir/NAME.bir
 * (blkc --emit=bir's text: no LLVM in it, so it is stable across LLVM
 * versions as PTX is not), under the -D values of its `// defs:` lines;
 * BLK_UPDATE_GOLDEN=1 rewrites the .bir files instead (then read the diff). */
#define _DEFAULT_SOURCE /* open_memstream, scandir */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "blk_files.h"
#include "support.h"

static char *print_bir(const BirFunction *f) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    bir_print(out, f);
    fclose(out);
    return text;
}

static int count_ops(const BirBlock *b, BirOpcode code) {
    int n = 0;
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        n += op->code == code;
        for (int r = 0; r < op->nregions; r++) n += count_ops(op->regions[r], code);
    }
    return n;
}

static const BirOp *first_op(const BirBlock *b, BirOpcode code) {
    for (int i = 0; i < b->ops.len; i++) {
        const BirOp *op = b->ops.items[i];
        if (op->code == code) return op;
        for (int r = 0; r < op->nregions; r++) {
            const BirOp *found = first_op(op->regions[r], code);
            if (found) return found;
        }
    }
    return NULL;
}

/* tests/bir/NAME.blk, lowered under its `// defs: NAME=VALUE ...` lines
 * (the file's path, name: its name); the test fails if it is unreadable.
 * Caller frees. */
static Compilation *compile_bir_file(const char *name, Captured *cap) {
    char *src = test_file(BLK_BIR_DIR, name);
    char defs_text[16][128]; /* (compile_to_bir copies them) */
    const char *defs[17] = {0};
    int n = 0;
    const char *text;
    int len;
    for (const char *at = src; n < 16 && blk_directive(&at, "defs", &text, &len);) {
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", len, text);
        for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && n < 16; tok = strtok_r(NULL, " ", &save)) {
            snprintf(defs_text[n], sizeof defs_text[n], "%s", tok);
            defs[n] = defs_text[n];
            n++;
        }
    }
    Compilation *c = compile_to_bir(name, src, defs, cap);
    free(src);
    return c;
}

/* The 1-based number of the first line where a and b differ, that line of
 * each into la / lb. */
static int first_difference(const char *a, const char *b, char *la, char *lb, size_t size) {
    int line = 1;
    while (*a && *a == *b) {
        if (*a == '\n') line++;
        a++, b++;
    }
    while (line > 1 && a[-1] != '\n') a--, b--;
    snprintf(la, size, "%.*s", (int)strcspn(a, "\n"), a);
    snprintf(lb, size, "%.*s", (int)strcspn(b, "\n"), b);
    return line;
}

ParameterizedTestParameters(bir, golden) { return blk_file_params(BLK_BIR_DIR); }

ParameterizedTest(int *index, bir, golden) {
    char name[256], want_path[1024];
    cr_assert(blk_file_name(BLK_BIR_DIR, *index, name, sizeof name));
    Captured cap = {0};
    Compilation *c = compile_bir_file(name, &cap);
    cr_assert(c && c->ok && c->bir, "%s does not compile:\n%s", name, cap.text);
    char *got = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&got, &len);
    for (int k = 0; k < c->bir->nkernels; k++) { /* as blkc --emit=bir prints a module */
        if (k) fputc('\n', out);
        bir_print(out, c->bir->kernels[k]);
    }
    fclose(out);
    snprintf(want_path, sizeof want_path, "%s/%.*s.bir", BLK_BIR_DIR, (int)(strlen(name) - 4), name);
    const char *update = getenv("BLK_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(want_path, "w");
        cr_assert(f && fputs(got, f) >= 0 && fclose(f) == 0, "%s: cannot write", want_path);
    } else {
        char *want = slurp(want_path);
        cr_assert(want, "%s: no golden file %s (BLK_UPDATE_GOLDEN=1 writes it)", name, want_path);
        char lw[512], lg[512];
        if (strcmp(want, got) != 0) {
            int line = first_difference(want, got, lw, lg, sizeof lw);
            cr_expect_fail("%s: the block IR differs from %s at line %d:\n  expected: %s\n  got:      %s\n"
                           "(BLK_UPDATE_GOLDEN=1 rewrites the golden files; read the diff before committing)\n%s",
                           name, want_path, line, lw, lg, got);
        }
        free(want);
    }
    free(got);
    compilation_free(c);
}

/* Every example, at its defaults and at other -D configurations, lowers to
 * IR that verifies and prints with source lines. */
typedef struct {
    const char *file;
    const char *defs[4];
} Config;

static Config configs[] = {
    {"add.blk", {NULL}},
    {"add.blk", {"T=f16", "BLOCK=256", NULL}},
    {"softmax.blk", {NULL}},
    {"softmax.blk", {"T=f16", "BLOCK=4096", NULL}},
    {"dropout.blk", {NULL}},
    {"dropout.blk", {"T=bf16", "BLOCK=128", NULL}},
    {"activations.blk", {NULL}},
    {"softmax_online.blk", {NULL}},
    {"rmsnorm.blk", {"T=bf16", NULL}},
    {"groupnorm.blk", {NULL}},
    {"cross_entropy.blk", {NULL}},
    {"quantize.blk", {"T=f32", NULL}},
    {"cumsum.blk", {NULL}},
    {"histogram.blk", {NULL}},
    {"topk_sampling.blk", {"K=8", "BLOCK=256", NULL}},
    {"activations.blk", {"T=f16", "APPROX_TANH=true", NULL}},
    {"layernorm.blk", {NULL}},
    {"layernorm.blk", {"T=f32", "BLOCK_SIZE=4096", "BLOCK_SIZE_N=16384", NULL}},
    {"layernorm.blk", {"GROUP_SIZE_M=32", "BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", NULL}},
};

Test(bir, every_example_lowers_verifies_and_prints) {
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        Captured cap = {0};
        Compilation *c = compile_example_bir(configs[i].file, configs[i].defs, &cap);
        cr_assert(c && c->ok && c->bir, "%s (config %zu):\n%s", configs[i].file, i, cap.text);
        cr_expect_gt(c->bir->nkernels, 0);
        for (int k = 0; k < c->bir->nkernels; k++) {
            char err[512];
            cr_expect(bir_verify(c->bir->kernels[k], err, sizeof err), "%s", err);
            char *text = print_bir(c->bir->kernels[k]);
            cr_expect(strstr(text, "; line "), "%s", text);
            cr_expect(strstr(text, "  return"), "%s", text);
            free(text);
        }
        compilation_free(c);
    }
}

Test(bir, variables_become_loop_carried_values_and_if_results) {
    Captured cap = {0};
    Compilation *c = compile_example_bir("layernorm.blk", NULL, &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    const BirFunction *fwd = compilation_kernel(c, "layer_norm_fwd");
    const BirOp *loop = first_op(fwd->body, BIR_FOR);
    cr_assert_not_null(loop);
    cr_expect_eq(loop->nresults, 1, "acc is the one carried value of the first loop");
    cr_expect_eq(loop->regions[0]->nargs, 2, "the loop variable and acc");
    cr_expect_eq(count_ops(fwd->body, BIR_FOR), 3);
    const BirFunction *dx = compilation_kernel(c, "layer_norm_bwd_dx");
    const BirOp *branch = first_op(dx->body, BIR_IF);
    cr_assert_not_null(branch);
    cr_expect_eq(branch->nresults, 2, "partial_dw and partial_db flow out of the if");
    const BirOp *spin = first_op(dx->body, BIR_WHILE);
    cr_assert_not_null(spin);
    cr_expect_eq(spin->nresults, 0, "the lock's loop carries nothing");
    cr_expect_not_null(first_op(spin->regions[0], BIR_ATOMIC_CAS), "the cas is in the condition");
    compilation_free(c);
}

Test(bir, implicit_conversions_become_explicit_ops) {
    Captured cap = {0};
    Compilation *c = compile_bir_file("implicit_conversions.blk", &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    char *text = print_bir(c->bir->kernels[0]);
    /* exp of f16 computes in f32; the literal 2 is made an f16 constant;
     * the i32 n converts to f16 and is splatted; sum of f16 accumulates in f32 */
    cr_expect(strstr(text, "convert %v : [16] f32"), "%s", text);
    cr_expect(strstr(text, "exp %"), "%s", text);
    cr_expect(strstr(text, "const 2.0 : f16"), "%s", text);
    cr_expect(strstr(text, "convert %n : f16"), "%s", text);
    cr_expect(strstr(text, "reduce_sum %"), "%s", text);
    cr_expect_eq(count_ops(c->bir->kernels[0]->body, BIR_REDUCE_SUM), 1);
    const BirOp *sum = first_op(c->bir->kernels[0]->body, BIR_REDUCE_SUM);
    cr_expect_eq(c->bir->kernels[0]->values[sum->operands[0]].type.dtype, DT_F32);
    free(text);
    compilation_free(c);
}

Test(bir, compile_time_if_keeps_one_branch_and_short_circuit_guards_effects) {
    Captured cap = {0};
    Compilation *c = compile_bir_file("const_if_and_short_circuit.blk", &cap); /* B = 16 */
    cr_assert(c && c->ok, "%s", cap.text);
    const BirFunction *f = c->bir->kernels[0];
    cr_expect_eq(count_ops(f->body, BIR_STORE), 2, "one branch of the const if, plus the last store");
    cr_expect_eq(count_ops(f->body, BIR_IF), 1, "only the && with a load becomes an if");
    cr_expect_eq(count_ops(f->body, BIR_AND), 1, "the cheap && stays an and");
    compilation_free(c);
}

Test(bir, dead_ops_are_removed_but_effects_stay) {
    Captured cap = {0};
    Compilation *c = compile_bir_file("dead_ops_and_effects.blk", &cap);
    cr_assert(c && c->ok, "%s", cap.text);
    const BirFunction *f = c->bir->kernels[0];
    cr_expect_eq(count_ops(f->body, BIR_ARANGE), 0);
    cr_expect_eq(count_ops(f->body, BIR_MUL), 0);
    cr_expect_eq(count_ops(f->body, BIR_LOAD), 1, "a load stays: the interpreter checks its bounds");
    cr_expect_eq(count_ops(f->body, BIR_ATOMIC_ADD), 1);
    compilation_free(c);
}

/* ---- the verifier rejects malformed IR, built by hand ---- */

typedef struct {
    Arena arena;
    BirFunction f;
} Hand;

static void hand_init(Hand *h) {
    memset(h, 0, sizeof *h);
    h->f.arena = &h->arena;
    h->f.name = "hand";
    h->f.body = bir_block_new(&h->f);
}

static const char *verify_msg(Hand *h) {
    static char err[512];
    if (bir_verify(&h->f, err, sizeof err)) return NULL;
    return err;
}

Test(bir, verifier_rejects_use_before_definition) {
    Hand h;
    hand_init(&h);
    BlkType i32 = type_scalar(DT_I32);
    int later = bir_value_new(&h.f, i32, "later");
    int ops[2] = {later, later};
    bir_append(&h.f, h.f.body, BIR_ADD, ops, 2, &i32);
    bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
    const char *err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "is used where it is not defined"), "%s", err);
    arena_free(&h.arena);
}

Test(bir, verifier_rejects_mismatched_types_and_shapes) {
    Hand h;
    hand_init(&h);
    BlkType i32 = type_scalar(DT_I32), f32 = type_scalar(DT_F32);
    int a = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i32)->results[0];
    int b = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f32)->results[0];
    bir_append(&h.f, h.f.body, BIR_ADD, (int[]){a, b}, 2, &i32);
    bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
    const char *err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "op 'add': operand 1's type differs from the result's"), "%s", err);
    arena_free(&h.arena);

    hand_init(&h);
    int32_t n = 16, m = 8;
    BlkType v16 = type_with_shape(i32, 1, &n), v8 = type_with_shape(i32, 1, &m);
    int r = bir_append(&h.f, h.f.body, BIR_ARANGE, NULL, 0, &v16)->results[0];
    bir_append(&h.f, h.f.body, BIR_BROADCAST, &r, 1, &v8);
    bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
    err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "dimension 0 cannot broadcast"), "%s", err);
    arena_free(&h.arena);
}

/* Each TYPES rule of ops.def, through one of its ops: a result of a dtype the rule takes passes,
 * one it refuses fails with the rule's message. */
Test(bir, verifier_applies_each_ops_def_type_rule) {
    struct {
        BirOpcode code;
        DType ok, bad;
        const char *why;
    } cases[] = {
        {BIR_MUL, DT_F16, DT_I1, "on numbers"},
        {BIR_XOR, DT_I1, DT_F32, "bitwise on integers or i1"},
        {BIR_SHL, DT_U8, DT_F32, "on integers"},
        {BIR_UMULHI, DT_U32, DT_I64, "on 32-bit integers"},
        {BIR_POW, DT_F32, DT_F64, "on f32"},
        {BIR_FMA, DT_F64, DT_F16, "computes in f32 or f64"},
        {BIR_SQRT, DT_F64, DT_F16, "math functions compute in f32"},
        {BIR_EXP, DT_F32, DT_F64, "math functions compute in f32"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int bad = 0; bad < 2; bad++) {
            Hand h;
            hand_init(&h);
            BlkType t = type_scalar(bad ? cases[i].bad : cases[i].ok);
            int x = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &t)->results[0];
            int n = bir_op_info(cases[i].code)->operands;
            bir_append(&h.f, h.f.body, cases[i].code, (int[]){x, x, x}, n, &t);
            bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
            const char *err = verify_msg(&h);
            if (bad) cr_expect(err && strstr(err, cases[i].why), "%s on %s: %s", bir_opcode_name(cases[i].code),
                               dtype_name(cases[i].bad), err ? err : "accepted");
            else cr_expect(!err, "%s on %s: %s", bir_opcode_name(cases[i].code), dtype_name(cases[i].ok), err);
            arena_free(&h.arena);
        }
    /* a comparison: i1 of its operands' shape, pointers by eq and ne only */
    for (int k = 0; k < 3; k++) {
        Hand h;
        hand_init(&h);
        BlkType f = type_scalar(DT_F32), p = type_ptr(DT_F32), i1 = type_scalar(DT_I1);
        int x = k == 2 ? bir_block_add_arg(&h.f, h.f.body, p, "p") /* a parameter */
                       : bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f)->results[0];
        BirParam param = {.name = "p", .type = p, .value = x};
        if (k == 2) h.f.params = &param, h.f.nparams = 1;
        bir_append(&h.f, h.f.body, k == 2 ? BIR_LT : BIR_EQ, (int[]){x, x}, 2, k == 1 ? &f : &i1);
        bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
        const char *err = verify_msg(&h);
        const char *want[] = {NULL, "a comparison gives i1", "pointers compare with eq/ne only"};
        if (!want[k]) cr_expect(!err, "%s", err);
        else cr_expect(err && strstr(err, want[k]), "case %d: %s", k, err ? err : "accepted");
        arena_free(&h.arena);
    }
}

/* Each AXIS rule of ops.def, through its ops on an f32 [4, 8] block (or [8]): the right result
 * shape passes, a wrong one (or an axis out of range) fails with the rule's message. */
Test(bir, verifier_applies_each_ops_def_axis_rule) {
    struct {
        BirOpcode code;
        int64_t axis;
        int operand_rank; /* 3: [2, 4, 8]; 2: [4, 8]; 1: [8] */
        int rank;
        int32_t shape[BLK_MAX_RANK];
        const char *why; /* NULL: accepted */
    } cases[] = {
        {BIR_CUMSUM, 1, 2, 2, {4, 8}, NULL},
        {BIR_CUMSUM, 1, 2, 2, {8, 4}, "result 0 keeps operand 0's shape"},
        {BIR_CUMSUM, 2, 2, 2, {4, 8}, "axis 2 is not one of the operand's 2 dimensions"},
        {BIR_PARTNER, 1, 2, 2, {4, 8}, NULL},
        {BIR_PARTNER, 1, 2, 1, {4}, "result 0 keeps operand 0's shape"},
        {BIR_REDUCE_SUM, 1, 2, 1, {4}, NULL},
        {BIR_REDUCE_SUM, 0, 2, 1, {4}, "result 0 is operand 0 without axis 0"},
        {BIR_REDUCE_SUM, 1, 2, 2, {4, 1}, "result 0 is operand 0 without axis 1"},
        {BIR_TAKE, 0, 2, 1, {8}, NULL},
        {BIR_TAKE, 1, 2, 2, {4, 8}, "result 0 is operand 0 without axis 1"},
        {BIR_EXPAND_DIMS, 1, 1, 2, {8, 1}, NULL},
        {BIR_EXPAND_DIMS, 0, 1, 2, {8, 1}, "result 0 is operand 0 with a dimension of size 1 at 0"},
        {BIR_EXPAND_DIMS, 2, 1, 2, {8, 1}, "axis 2 is not one of the result's 2 dimensions"},
        {BIR_EXPAND_DIMS, 1, 2, 3, {4, 1, 8}, NULL},
        {BIR_EXPAND_DIMS, 1, 3, 3, {2, 4, 8}, "operand 0 has 3 dimensions, the most a block has"},
        {BIR_REDUCE_SUM, 1, 3, 2, {2, 8}, NULL},
        {BIR_REDUCE_SUM, 1, 3, 2, {2, 4}, "result 0 is operand 0 without axis 1"},
        {BIR_GATHER, 1, 2, 2, {4, 8}, NULL},
        {BIR_GATHER, -1, 2, 2, {4, 8}, "axis -1 is not one of the operand's 2 dimensions"},
    };
    bool seen[BIR_AXIS_INDEX + 1] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Hand h;
        hand_init(&h);
        BlkType f32 = type_scalar(DT_F32), i32 = type_scalar(DT_I32);
        int rank = cases[i].operand_rank;
        BlkType block = type_with_shape(f32, rank, (int32_t[]){2, 4, 8} + 3 - rank);
        BlkType index = type_with_shape(i32, 2, (int32_t[]){4, 8});
        int one = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f32)->results[0];
        int zero = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i32)->results[0];
        int x = bir_append(&h.f, h.f.body, BIR_SPLAT, &one, 1, &block)->results[0];
        int ix = bir_append(&h.f, h.f.body, BIR_SPLAT, &zero, 1, &index)->results[0];
        BlkType rt = type_with_shape(f32, cases[i].rank, cases[i].shape);
        BirOp *op = bir_append(&h.f, h.f.body, cases[i].code, (int[]){x, ix}, cases[i].code == BIR_GATHER ? 2 : 1, &rt);
        op->attr = cases[i].axis;
        op->value.i = 1; /* take's index, partner's xor */
        bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
        const char *err = verify_msg(&h);
        if (cases[i].why) cr_expect(err && strstr(err, cases[i].why), "case %zu: %s", i, err ? err : "accepted");
        else cr_expect(!err, "case %zu: %s", i, err);
        seen[bir_op_info(cases[i].code)->axis] = true;
        arena_free(&h.arena);
    }
    for (int rule = BIR_AXIS_KEEP; rule <= BIR_AXIS_INDEX; rule++) cr_expect(seen[rule], "axis rule %d untested", rule);
}

/* trans's order (attr 0: the last two swapped; else each dimension once)
 * and a batched dot's shapes. */
Test(bir, verifier_checks_trans_orders_and_batched_dots) {
    struct {
        int64_t attr;
        int32_t shape[3];
        const char *why; /* NULL: accepted */
    } trans[] = {
        {0, {2, 8, 4}, NULL},
        {TRANS_PERMUTED | 2 << TRANS_FROM_SHIFT | 0 << (TRANS_FROM_SHIFT + 2) | 1 << (TRANS_FROM_SHIFT + 4), {8, 2, 4}, NULL},
        {0, {2, 4, 8}, "trans's result dimension 1 is not the operand's dimension 2"},
        {TRANS_PERMUTED | 1 << TRANS_FROM_SHIFT | 1 << (TRANS_FROM_SHIFT + 2) | 0 << (TRANS_FROM_SHIFT + 4), {4, 4, 2},
         "trans's order names dimension 1 twice"},
    };
    for (size_t i = 0; i < sizeof trans / sizeof trans[0]; i++) {
        Hand h;
        hand_init(&h);
        BlkType f32 = type_scalar(DT_F32), block = type_with_shape(f32, 3, (int32_t[]){2, 4, 8});
        BlkType rt = type_with_shape(f32, 3, trans[i].shape);
        int one = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f32)->results[0];
        int x = bir_append(&h.f, h.f.body, BIR_SPLAT, &one, 1, &block)->results[0];
        bir_append(&h.f, h.f.body, BIR_TRANS, &x, 1, &rt)->attr = trans[i].attr;
        bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
        const char *err = verify_msg(&h);
        if (trans[i].why) cr_expect(err && strstr(err, trans[i].why), "trans case %zu: %s", i, err ? err : "accepted");
        else cr_expect(!err, "trans case %zu: %s", i, err);
        arena_free(&h.arena);
    }
    struct {
        int32_t a[3], b[3], c[3];
        bool ok;
    } dots[] = {
        {{2, 16, 32}, {2, 32, 16}, {2, 16, 16}, true},
        {{2, 16, 32}, {4, 32, 16}, {2, 16, 16}, false}, /* two batches */
        {{2, 16, 32}, {2, 32, 16}, {4, 16, 16}, false},
        {{2, 16, 32}, {2, 16, 32}, {2, 16, 32}, false}, /* k differs */
    };
    for (size_t i = 0; i < sizeof dots / sizeof dots[0]; i++) {
        Hand h;
        hand_init(&h);
        BlkType f16 = type_scalar(DT_F16), f32 = type_scalar(DT_F32);
        BlkType at = type_with_shape(f16, 3, dots[i].a), bt = type_with_shape(f16, 3, dots[i].b);
        BlkType ct = type_with_shape(f32, 3, dots[i].c);
        int h16 = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f16)->results[0];
        int h32 = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &f32)->results[0];
        int a = bir_append(&h.f, h.f.body, BIR_SPLAT, &h16, 1, &at)->results[0];
        int b = bir_append(&h.f, h.f.body, BIR_SPLAT, &h16, 1, &bt)->results[0];
        int c = bir_append(&h.f, h.f.body, BIR_SPLAT, &h32, 1, &ct)->results[0];
        bir_append(&h.f, h.f.body, BIR_DOT, (int[]){a, b, c}, 3, &ct);
        bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
        const char *err = verify_msg(&h);
        if (dots[i].ok) cr_expect(!err, "dot case %zu: %s", i, err);
        else cr_expect(err && strstr(err, "dot "), "dot case %zu: %s", i, err ? err : "accepted");
        arena_free(&h.arena);
    }
}

/* ops.def's results and regions columns: an add without its result, an add with a region */
Test(bir, verifier_counts_results_and_regions_by_ops_def) {
    for (int k = 0; k < 2; k++) {
        Hand h;
        hand_init(&h);
        BlkType i32 = type_scalar(DT_I32);
        int x = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i32)->results[0];
        BirOp *add = bir_append(&h.f, h.f.body, BIR_ADD, (int[]){x, x}, 2, k ? &i32 : NULL);
        if (k) {
            add->regions[0] = bir_block_new(&h.f);
            add->nregions = 1;
            bir_append(&h.f, add->regions[0], BIR_YIELD, NULL, 0, NULL);
        }
        bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
        const char *err = verify_msg(&h);
        const char *want = k ? "op 'add': has 1 regions, at most 0" : "op 'add': has one result";
        cr_expect(err && strstr(err, want), "%s", err ? err : "accepted");
        arena_free(&h.arena);
    }
}

Test(bir, verifier_rejects_missing_terminators_and_bad_yields) {
    Hand h;
    hand_init(&h);
    BlkType i32 = type_scalar(DT_I32);
    bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i32);
    const char *err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "does not end in a terminator"), "%s", err);
    arena_free(&h.arena);

    /* a for loop carrying one i32 whose body yields nothing */
    hand_init(&h);
    int lo = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i32)->results[0];
    BirOp *loop = bir_append(&h.f, h.f.body, BIR_FOR, (int[]){lo, lo, lo, lo}, 4, NULL);
    loop->regions[0] = bir_block_new(&h.f);
    loop->nregions = 1;
    bir_block_add_arg(&h.f, loop->regions[0], i32, "i");
    bir_block_add_arg(&h.f, loop->regions[0], i32, "acc");
    bir_append(&h.f, loop->regions[0], BIR_YIELD, NULL, 0, NULL);
    loop->results = arena_alloc(&h.arena, sizeof(int));
    loop->results[0] = bir_value_new(&h.f, i32, "acc_out");
    loop->nresults = 1;
    bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
    err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "the region yields 0 values, expected 1"), "%s", err);
    arena_free(&h.arena);
}

Test(bir, values_of_a_region_are_not_visible_after_it) {
    Hand h;
    hand_init(&h);
    BlkType i32 = type_scalar(DT_I32), i1 = type_scalar(DT_I1);
    int c = bir_append(&h.f, h.f.body, BIR_CONST, NULL, 0, &i1)->results[0];
    BirOp *branch = bir_append(&h.f, h.f.body, BIR_IF, &c, 1, NULL);
    branch->nregions = 2;
    branch->regions[0] = bir_block_new(&h.f);
    branch->regions[1] = bir_block_new(&h.f);
    int inner = bir_append(&h.f, branch->regions[0], BIR_CONST, NULL, 0, &i32)->results[0];
    bir_append(&h.f, branch->regions[0], BIR_YIELD, NULL, 0, NULL);
    bir_append(&h.f, branch->regions[1], BIR_YIELD, NULL, 0, NULL);
    bir_append(&h.f, h.f.body, BIR_NEG, &inner, 1, &i32);
    bir_append(&h.f, h.f.body, BIR_RETURN, NULL, 0, NULL);
    const char *err = verify_msg(&h);
    cr_assert_not_null(err);
    cr_expect(strstr(err, "op 'neg': operand"), "%s", err);
    arena_free(&h.arena);
}
