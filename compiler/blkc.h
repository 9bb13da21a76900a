/* blkc.h: the compiler's internal interfaces, in pipeline order:
 * arena -> source and diagnostics -> types -> tokens (lexer) -> AST (parser) -> sema.
 * Each stage lives in the .c file of the same name. */
#ifndef BLKC_H
#define BLKC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BLKC_VERSION "0.1.0"

/* ---------------------------------------------------------------- arena.c */
/* One arena per compilation: everything the front end allocates lives until
 * arena_free, so passes never free individual nodes. */
typedef struct ArenaChunk ArenaChunk;
typedef struct {
    ArenaChunk *head;
} Arena;

void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void arena_free(Arena *a);

/* Growable array of pointers, backed by the arena. */
typedef struct {
    void **items;
    int len, cap;
} PtrVec;
void ptrvec_push(Arena *a, PtrVec *v, void *item);

/* ----------------------------------------------------------------- diag.c */
typedef struct {
    const char *name; /* file name as the user gave it */
    const char *text; /* NUL-terminated contents */
    size_t len;
} Source;

typedef struct {
    uint32_t offset, len; /* byte range in the source */
    uint32_t line, col;   /* 1-based, of offset */
} Span;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagSeverity;

typedef struct {
    DiagSeverity severity;
    const Source *src;
    Span span;
    const char *message;
} Diagnostic;

/* Diagnostics go through a callback so that the runtime API can hand them
 * to its caller as text; the driver's callback prints them to stderr. */
typedef void (*DiagCallback)(void *user, const Diagnostic *d);

#define DIAG_MAX_ERRORS 20

typedef struct {
    DiagCallback callback;
    void *user;
    int errors;      /* errors reported (capped ones not counted beyond the cap) */
    bool capped;     /* the cap was reached: further diagnostics are dropped */
} DiagEngine;

void diag_report(DiagEngine *de, DiagSeverity sev, const Source *src, Span span,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* clang-style text: "file:line:col: error: msg\n<line>\n<caret>\n". Caller frees. */
void diag_vreport(DiagEngine *de, DiagSeverity sev, const Source *src, Span span,
                  const char *fmt, va_list ap);
char *diag_format(const Diagnostic *d);
void diag_print_to_file(void *file, const Diagnostic *d); /* a DiagCallback for FILE* */
Span span_join(Span a, Span b);

/* ---------------------------------------------------------------- types.c */
typedef enum {
    DT_ERROR = 0, /* result of an expression that already produced an error */
    DT_VOID,
    DT_I1,
    DT_I32,
    DT_I64,
    DT_U32,
    DT_F16,
    DT_BF16,
    DT_F32,
    DT_PTR,   /* pointer; BlkType.elem holds the pointee */
    DT_TYPE,  /* a compile-time type value (const T: type) */
    DT_STRING,
    DT_SHAPE, /* a shape list [a, b] */
} DType;

#define BLK_MAX_RANK 2
#define BLK_MAX_NUMEL (1 << 20)

/* The type of every value: element dtype plus static shape (rank 0 = scalar). */
typedef struct {
    uint8_t dtype;
    uint8_t elem; /* pointee dtype when dtype == DT_PTR */
    uint8_t rank;
    int32_t shape[BLK_MAX_RANK];
} BlkType;

const char *dtype_name(DType t);
bool dtype_from_name(const char *name, size_t len, DType *out);
bool dtype_is_int(DType t);   /* i1 excluded */
bool dtype_is_float(DType t);
bool dtype_is_signed(DType t);
int dtype_bits(DType t);
int dtype_bytes(DType t); /* in memory: i1 takes a byte, a pointer 8 */
BlkType type_scalar(DType t);
BlkType type_ptr(DType elem);
BlkType type_with_shape(BlkType t, int rank, const int32_t *shape);
bool type_equal(BlkType a, BlkType b);
bool shape_equal(BlkType a, BlkType b);
int64_t type_numel(BlkType t);
/* "f32", "*f16", "[1024] i32", "[32, 128] *f16". Written into buf. */
const char *type_str(BlkType t, char *buf, size_t size);
/* The shape alone: "[1024]", "[32, 128]" or "scalar". Written into buf. */
const char *shape_str(BlkType t, char *buf, size_t size);
/* Broadcast two shapes; false if incompatible. */
bool shape_broadcast(BlkType a, BlkType b, BlkType *out);
/* Promotion of two numeric dtypes (§5 of docs/language.md), weak literals
 * taking the other side's type. */
DType dtype_promote(DType a, bool a_weak, DType b, bool b_weak);
bool is_pow2(int64_t v);

/* ---------------------------------------------------------------- lexer.re */
typedef enum {
    TOK_EOF = 0,
    TOK_ERROR,
    TOK_IDENT,
    TOK_INT,
    TOK_FLOAT,
    TOK_STRING,
    /* keywords */
    TOK_KERNEL, TOK_FN, TOK_CONST, TOK_LET, TOK_VAR, TOK_FOR, TOK_IN, TOK_WHILE, TOK_IF,
    TOK_ELSE, TOK_RETURN, TOK_AS, TOK_TRUE, TOK_FALSE, TOK_NONE, TOK_TYPE,
    TOK_DTYPE, /* i1 bool i32 i64 u32 f16 bf16 f32 */
    /* punctuation */
    TOK_LPAREN, TOK_RPAREN, TOK_LBRACKET, TOK_RBRACKET, TOK_LBRACE, TOK_RBRACE,
    TOK_COMMA, TOK_SEMI, TOK_COLON, TOK_AT, TOK_ARROW,
    /* operators */
    TOK_PLUS, TOK_MINUS, TOK_STAR, TOK_SLASH, TOK_PERCENT,
    TOK_AMP, TOK_PIPE, TOK_CARET, TOK_TILDE, TOK_BANG,
    TOK_SHL, TOK_SHR, TOK_ANDAND, TOK_OROR,
    TOK_EQ, TOK_NE, TOK_LT, TOK_LE, TOK_GT, TOK_GE,
    TOK_ASSIGN, TOK_PLUS_ASSIGN, TOK_MINUS_ASSIGN, TOK_STAR_ASSIGN, TOK_SLASH_ASSIGN,
    TOK_PERCENT_ASSIGN, TOK_AMP_ASSIGN, TOK_PIPE_ASSIGN, TOK_CARET_ASSIGN,
    TOK_SHL_ASSIGN, TOK_SHR_ASSIGN,
    TOK_COUNT
} TokenKind;

typedef struct {
    TokenKind kind;
    Span span;
    const char *text; /* points into the source; span.len bytes */
} Token;

typedef struct {
    const Source *src;
    DiagEngine *de;
    const char *cursor;
    uint32_t line;
    const char *line_start;
} Lexer;

void lexer_init(Lexer *lx, const Source *src, DiagEngine *de);
Token lexer_next(Lexer *lx); /* reports bad characters and unterminated text */
const char *token_kind_name(TokenKind k);

/* ------------------------------------------------------------------ ast.c */
typedef enum {
    E_INT, E_FLOAT, E_BOOL, E_STRING, E_NAME, E_DTYPE, E_UNARY, E_BINARY, E_CAST,
    E_CALL, E_INDEX, E_SHAPE,
} ExprKind;

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR,
    OP_LAND, OP_LOR, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    OP_NEG, OP_NOT, OP_BITNOT,
} OpKind;

typedef struct Expr Expr;
typedef struct Stmt Stmt;
typedef struct Symbol Symbol;
typedef struct HelperDef HelperDef;

/* Parsed type syntax: `*f16`, `f32`, `*T`, `T`, `type`. Resolved by sema. */
typedef struct {
    Span span;
    bool is_ptr;
    bool is_type_kw;      /* `type` */
    DType dtype;          /* builtin name, or DT_ERROR when `name` is used */
    const char *name;     /* a const type parameter, e.g. T */
} TypeSyntax;

typedef union {
    int64_t i; /* integers and i1 */
    double f;  /* floats, exactly representable in the value's dtype */
    DType dtype;
} ConstVal;

struct Expr {
    ExprKind kind;
    Span span;
    /* filled by sema */
    BlkType type;
    bool is_const; /* folded at compile time; value in cv */
    bool weak;     /* an untyped literal (or a fold of only literals) */
    ConstVal cv;
    union {
        struct { int64_t value; bool invalid; } int_lit; /* invalid: a parse error */
        double float_lit;
        bool bool_lit;
        struct { const char *text; size_t len; } str; /* unescaped */
        struct { const char *name; Symbol *sym; } name;
        DType dtype_lit;
        struct {
            OpKind op;
            Expr *lhs, *rhs;     /* rhs NULL for unary */
            DType operand_dtype; /* sema: both operands convert to this first */
        } binary;
        struct { Expr *operand; TypeSyntax to; } cast;
        struct {
            const char *name;
            Span name_span;
            PtrVec args;        /* Expr* */
            PtrVec arg_names;   /* const char* or NULL, parallel to args */
            int builtin;        /* BuiltinId, or -1 */
            HelperDef *helper;  /* when calling a helper */
            /* for helpers, sema inlines a checked copy of the body: */
            PtrVec inline_params; /* Symbol* bound to args, in order */
            Stmt *inline_body;    /* S_BLOCK */
            Expr *inline_result;  /* the returned expression, or NULL */
        } call;
        struct { Expr *operand; int n; bool is_none[BLK_MAX_RANK + 1]; } index;
        struct { PtrVec dims; } shape; /* Expr* */
    } u;
};

enum { ASSIGN_PLAIN = -1, NOT_AN_ASSIGNMENT = -2 }; /* Stmt.assign.op besides OpKind */

typedef enum { S_LET, S_ASSIGN, S_FOR, S_WHILE, S_IF, S_RETURN, S_EXPR, S_BLOCK } StmtKind;

struct Stmt {
    StmtKind kind;
    Span span;
    union {
        struct {
            bool is_var;
            const char *name;
            Span name_span;
            bool has_type;
            TypeSyntax type;
            Expr *init;
            Symbol *sym;
        } let;
        struct {
            const char *name;
            Span name_span;
            int op; /* ASSIGN_PLAIN for `=`, else OpKind of `op=` */
            Expr *value; /* for `x op= e`, sema rewrites value to `x op e` */
            Symbol *sym;
        } assign;
        struct {
            const char *var;
            Span var_span;
            Expr *start, *end, *step; /* step NULL: 1 */
            Stmt *body;
            Symbol *sym;
        } for_;
        struct { Expr *cond; Stmt *body; } while_;
        struct { Expr *cond; Stmt *then_, *else_; } if_;
        struct { Expr *value; } ret;
        struct { Expr *expr; } expr;
        struct { PtrVec stmts; } block;
    } u;
};

typedef struct {
    Span span;
    const char *name;
    Span name_span;
    bool is_const;
    TypeSyntax type;
    Expr *default_value; /* const parameters only */
    int64_t align;       /* @align(A), 0 if absent */
    int64_t multiple_of; /* @multiple_of(D), 0 if absent */
    Symbol *sym;         /* filled by sema */
} Param;

typedef struct {
    Span span;
    const char *name;
    Span name_span;
    PtrVec params; /* Param* */
    Stmt *body;
    /* filled by sema */
    bool checked_ok;
} KernelDef;

struct HelperDef {
    Span span;
    const char *name;
    Span name_span;
    PtrVec params; /* Param* (names only) */
    Stmt *body;
    bool expanding; /* recursion guard during inlining */
};

typedef struct {
    const Source *src;
    PtrVec kernels; /* KernelDef* */
    PtrVec helpers; /* HelperDef* */
} Module;

Expr *expr_new(Arena *a, ExprKind kind, Span span);
Stmt *stmt_new(Arena *a, StmtKind kind, Span span);
Stmt *stmt_clone(Arena *a, const Stmt *s);
Expr *expr_clone(Arena *a, const Expr *e);
const char *op_name(OpKind op);
/* --emit=ast: the typed tree; only_kernel NULL for all kernels. */
void ast_dump_module(FILE *out, const Module *m, const char *only_kernel);

/* --------------------------------------------------------------- parser.c */
/* Parses a whole module; returns NULL only on allocation failure. Syntax
 * errors are reported and the parser resynchronizes at `;` / `}`. */
Module *parse_module(Arena *a, const Source *src, DiagEngine *de);

/* ----------------------------------------------------------------- sema.c */
/* Builtins. After sema, a call's args are in the order of the parameter
 * names below (docs/language.md §6), NULL where an optional one is absent. */
typedef enum {
    BI_PROGRAM_ID, BI_NUM_PROGRAMS, BI_ARANGE, BI_ZEROS, BI_FULL, BI_LOAD, BI_STORE,
    BI_SUM, BI_MAX, BI_MIN, BI_ARGMAX, BI_ARGMIN, BI_WHERE,
    BI_EXP, BI_EXP2, BI_LOG, BI_LOG2, BI_SQRT, BI_RSQRT, BI_ABS,
    BI_MINIMUM, BI_MAXIMUM, BI_FMA, BI_CDIV,
    BI_ATOMIC_CAS, BI_ATOMIC_XCHG, BI_ATOMIC_ADD, BI_RAND, BI_RANDINT,
    BI_DEBUG_BARRIER, BI_STATIC_ASSERT, BI_DEVICE_PRINT,
    BI_COUNT
} BuiltinId;
const char *builtin_name(BuiltinId id);
const char *builtin_param_name(BuiltinId id, int i); /* NULL past the named ones */

typedef enum {
    SYM_PARAM, SYM_CONST, SYM_LET, SYM_VAR, SYM_LOOP,
} SymbolKind;

struct Symbol {
    SymbolKind kind;
    const char *name;
    Span decl;
    BlkType type;
    bool is_const;
    bool weak;
    ConstVal cv;
    int id;          /* unique within its kernel, for the lowering */
    Param *param;    /* for SYM_PARAM / SYM_CONST */
};

typedef struct {
    const char *name;
    const char *value; /* text, parsed against the parameter's type */
    bool used;
} ConstDef;

/* Checks names, types, shapes and constants of every kernel, binding const
 * parameters from defs (then their defaults). Returns true when no errors. */
bool sema_check_module(Arena *a, Module *m, DiagEngine *de, ConstDef *defs, int ndefs);

/* -------------------------------------------------------------- numeric.c */
/* Triton's tl.randint / tl.rand for one element (design-notes §2). */
uint32_t philox_randint(int64_t seed, uint64_t offset);
float philox_rand(int64_t seed, uint64_t offset);
/* IEEE half and bfloat16 <-> f32; to the narrow types rounds to nearest even. */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);
/* A numeric value converted with the semantics of `as` (docs/language.md §5):
 * floats held as doubles exactly representable in their dtype, integers
 * normalized (i32 sign-extended, u32 zero-extended, i1 0 or 1). Float to int
 * truncates and saturates, NaN giving 0. Shared by the lowering's constant
 * folding and the interpreter, so both agree bit for bit. */
ConstVal convert_scalar(ConstVal v, DType from, DType to);

/* ------------------------------------------------------------------ bir.c */
/* The block IR (BIR): the one contract between the front end and the
 * backends (docs/architecture.md). A kernel is a function of SSA values;
 * every value has a BlkType, so a dtype and a static shape. Control flow is
 * structured: for/while/if ops own regions (blocks with arguments), and the
 * values a loop or branch changes flow out through yield and op results. */
typedef enum {
    /* leaves */
    BIR_CONST, BIR_PROGRAM_ID, BIR_NUM_PROGRAMS, BIR_ARANGE,
    /* shapes */
    BIR_SPLAT, BIR_EXPAND_DIMS, BIR_BROADCAST,
    /* elementwise */
    BIR_CONVERT, BIR_PTR_CAST, BIR_PTR_ADD,
    BIR_ADD, BIR_SUB, BIR_MUL, BIR_DIV, BIR_REM, BIR_AND, BIR_OR, BIR_XOR, BIR_SHL, BIR_SHR,
    BIR_MIN, BIR_MAX,
    BIR_EQ, BIR_NE, BIR_LT, BIR_LE, BIR_GT, BIR_GE,
    BIR_NEG, BIR_NOT, BIR_ABS, BIR_EXP, BIR_EXP2, BIR_LOG, BIR_LOG2, BIR_SQRT, BIR_RSQRT,
    BIR_SELECT, BIR_FMA, BIR_RAND, BIR_RANDINT,
    /* memory */
    BIR_LOAD, BIR_STORE, BIR_ATOMIC_CAS, BIR_ATOMIC_XCHG, BIR_ATOMIC_ADD,
    /* reductions over one axis */
    BIR_REDUCE_SUM, BIR_REDUCE_MAX, BIR_REDUCE_MIN, BIR_ARGMAX, BIR_ARGMIN,
    /* control flow and effects */
    BIR_FOR, BIR_WHILE, BIR_IF, BIR_YIELD, BIR_CONDITION, BIR_RETURN,
    BIR_BARRIER, BIR_PRINT,
    BIR_OPCODE_COUNT
} BirOpcode;

enum { BIR_NONE = -1 }; /* an absent optional operand: load's mask and other, a mask */

typedef struct BirBlock BirBlock;

typedef struct {
    BirOpcode code;
    int *operands, noperands; /* value ids, BIR_NONE where an optional one is absent */
    int *results, nresults;
    BirBlock *regions[2];
    int nregions;
    /* attr: the axis (program_id, num_programs, expand_dims, reductions),
     * arange's start, and for BIR_FOR 1 when the step
     * is a negative constant (the loop runs while iv > end). */
    int64_t attr;
    ConstVal value;   /* BIR_CONST, in the result's dtype */
    const char *text; /* BIR_PRINT: the prefix */
    uint32_t line, col;
} BirOp;

struct BirBlock {
    int *args, nargs;
    PtrVec ops; /* BirOp*; the last one of a region is its terminator */
};

typedef struct {
    BlkType type;
    const char *name; /* the source name it was bound to, for printing; or NULL */
    BirOp *def;       /* the op that defines it; NULL for a block argument */
} BirValue;

typedef struct {
    const char *name;
    BlkType type;
    int64_t align, multiple_of; /* attributes, 0 when absent */
    int value;                  /* its value: the body's argument of the same index */
} BirParam;

typedef struct {
    const char *name;
    const Source *src;
    const char *consts;  /* "T = f16, BLOCK = 1024": the const parameters it was built with */
    BirParam *params;    /* the runtime parameters, in launch order */
    int nparams;
    BirBlock *body;      /* args: the runtime parameters; ends in BIR_RETURN */
    BirValue *values;
    int nvalues, values_cap;
    Arena *arena;
} BirFunction;

typedef struct {
    BirFunction **kernels;
    int nkernels;
} BirModule;

const char *bir_opcode_name(BirOpcode code);
int bir_value_new(BirFunction *f, BlkType type, const char *name);
/* Appends an op with the given operands and (for a non-void type) one new result. */
BirOp *bir_append(BirFunction *f, BirBlock *b, BirOpcode code, const int *operands, int n,
                  const BlkType *result_type);
BirBlock *bir_block_new(BirFunction *f);
int bir_block_add_arg(BirFunction *f, BirBlock *b, BlkType type, const char *name);
BirOp *bir_block_terminator(const BirBlock *b); /* its last op if that is a terminator, else NULL */
/* Removes ops without effects whose results are unused (a load stays: on
 * the interpreter it still checks its bounds). */
void bir_remove_dead_ops(BirFunction *f);
/* --emit=bir: one op per line, with result types and the source line. */
void bir_print(FILE *out, const BirFunction *f);
/* Checks operand dominance, types and shapes of every op, and terminators.
 * Returns true, or false with a message in err. */
bool bir_verify(const BirFunction *f, char *err, size_t err_size);

/* ---------------------------------------------------------------- lower.c */
/* Lowers every checked kernel of the module to BIR. Inputs must have passed
 * sema without errors. */
BirModule *lower_module(Arena *a, const Module *m);

/* --------------------------------------------------------------- layout.c */
/* What the NVPTX backend knows before emitting code: per value, facts along
 * its fastest (last) dimension (Triton's AxisInfo), and how each block
 * shape is spread over the threads of a CTA (Triton's blocked layout). */
enum { AXIS_MAX_DIV = 1 << 30 };

typedef struct {
    int64_t contig;    /* runs of this many consecutive elements increase by 1 */
    int64_t div;       /* the first element of each run is divisible by this (bytes for pointers) */
    int64_t constancy; /* runs of this many consecutive elements are equal */
} AxisInfo;

/* A blocked layout of a rank-1 or rank-2 shape. Dimension rank-1 is the
 * fastest. A thread holds spt[d] consecutive elements per dimension, lanes
 * of a warp tile tpw[d], warps tile wpc[d]; the CTA tile repeats reps[d]
 * times to cover the shape, or wraps (threads hold copies) when larger. */
typedef struct {
    int rank;
    int32_t shape[BLK_MAX_RANK];
    int32_t spt[BLK_MAX_RANK], tpw[BLK_MAX_RANK], wpc[BLK_MAX_RANK], reps[BLK_MAX_RANK];
    int32_t nregs; /* elements each thread holds */
} Layout;

typedef struct {
    int num_warps;
    AxisInfo *axis;   /* per value */
    Layout *layouts;  /* per value; rank 0 for scalars */
} KernelPlan;

/* Analyzes f; num_warps 0 picks the default from the largest block.
 * param_div (NULL, or one entry per runtime parameter) adds facts known at
 * launch, as Triton specializes: a pointer's alignment in bytes, an
 * integer's divisibility; 0 adds nothing. */
KernelPlan *plan_kernel(Arena *a, const BirFunction *f, int num_warps, const int64_t *param_div);
/* Elements (not bytes) one access of a load/store/atomic may cover. */
int plan_access_width(const KernelPlan *p, const BirFunction *f, const BirOp *op);
/* The coordinate along dimension d of register r of thread (warp, lane). */
int32_t layout_coord(const Layout *l, int d, int r, int warp, int lane);
/* The parts of register r: its repetition and in-thread index along d. */
void layout_reg_parts(const Layout *l, int r, int32_t rep[BLK_MAX_RANK], int32_t j[BLK_MAX_RANK]);

/* ------------------------------------------------------ codegen.c, ptx.c */
/* The NVPTX backend: block IR -> LLVM IR (codegen.c) -> PTX (ptx.c). */
typedef struct {
    const char *arch;  /* sm_80, sm_86, sm_89, sm_90 (default) or sm_90a */
    int num_warps;     /* 0: chosen from the largest block */
    bool precise_math; /* IEEE-rounded division, sqrt and rsqrt instead of the approximations */
    bool no_fma;       /* do not contract a * b + c into fma */
    const int64_t *param_div; /* with one kernel only: launch-time facts (see plan_kernel) */
} BackendOptions;

typedef struct BackendModule BackendModule; /* an LLVM context and module */

/* Builds LLVM IR for the kernels of m (one, when only is non-NULL). On
 * failure returns NULL with a message in err. */
BackendModule *codegen_module(const BirModule *m, const char *only, const BackendOptions *opt, char *err,
                              size_t err_size);
void backend_module_free(BackendModule *bm);
/* The warps per program a kernel was built for (the launch's block is 32x that); 0 if unknown. */
int backend_kernel_num_warps(const BackendModule *bm, const char *name);
/* The shared memory a kernel needs per program, in bytes (the launch's
 * dynamic shared memory); 0 if none or unknown. */
int64_t backend_kernel_shared_bytes(const BackendModule *bm, const char *name);
/* Optimizes and writes PTX (or, with llvm_ir, the optimized LLVM IR) to a
 * malloc'ed string. Returns NULL with a message in err on failure. */
char *backend_emit(BackendModule *bm, bool llvm_ir, char *err, size_t err_size);
/* The PTX with each source line as a comment above the instructions it produced. */
char *ptx_annotate(const char *ptx, const Source *src);
/* Is this --arch value known? Its PTX ISA feature string otherwise. */
const char *backend_arch_features(const char *arch);

/* --------------------------------------------------------------- interp.c */
/* The reference interpreter: runs a kernel's BIR on host memory, one program
 * at a time (docs/interpreter.md). The "cpu" device of the runtime. */

/* A runtime argument, in the kernel's parameter order: integers in .i,
 * f32 in .f, pointers in .p. */
typedef union {
    int64_t i;
    double f;
    void *p;
} InterpArg;

/* Host memory the kernel may touch; any access outside these is an error. */
typedef struct {
    void *base;
    size_t bytes;
    const char *name; /* for messages; NULL: named after a pointer argument into it */
} InterpBuffer;

typedef struct {
    bool shuffle;          /* programs in a random order (seeded) instead of 0, 1, 2, ... */
    uint64_t shuffle_seed;
    FILE *print_out;       /* device_print output; NULL: stdout */
} InterpOptions;

/* Runs grid[0] x grid[1] x grid[2] programs of f. Returns NULL, or a
 * malloc'ed message naming the kernel, the source line, the program and
 * what went wrong (an out-of-bounds access, a spin that cannot end, bad
 * arguments). */
char *interp_launch(const BirFunction *f, const InterpArg *args, int nargs, const uint32_t grid[3],
                    const InterpBuffer *bufs, int nbufs, const InterpOptions *opt);

/* -------------------------------------------------------------- compile.c */
/* One compilation: the front end's passes over one source text, and what
 * they produced. Everything is owned by the compilation's arena. */
typedef struct {
    Arena arena;
    Source src;
    DiagEngine de;
    Module *module;
    BirModule *bir; /* after compile_lower */
    bool ok;
} Compilation;

typedef struct {
    const char *name;  /* shown in diagnostics */
    const char *text;  /* need not be NUL-terminated */
    size_t len;
    ConstDef *defs;    /* -D values; `used` is set on the ones that matched */
    int ndefs;
    DiagCallback diag;
    void *diag_user;
} CompileRequest;

/* Lex, parse and check. Returns NULL only if the request is malformed. */
Compilation *compile_front(const CompileRequest *req);
/* Lower the checked module to BIR and verify every kernel; a verifier
 * failure is a compiler bug, reported as an internal error. */
bool compile_lower(Compilation *c);
BirFunction *compilation_kernel(const Compilation *c, const char *name); /* after compile_lower */
void compilation_free(Compilation *c);
/* --emit=tokens; returns the number of errors. */
int dump_tokens(FILE *out, const CompileRequest *req);

#endif
