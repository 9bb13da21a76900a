/* blkc.h: the compiler's internal interfaces, in pipeline order:
 * arena -> source and diagnostics -> types -> tokens (lexer) -> AST (parser) -> sema.
 * Each stage lives in the .c file of the same name. */
#ifndef BLKC_H
#define BLKC_H

#include <setjmp.h>
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
    jmp_buf *on_oom; /* where arena_alloc jumps when malloc fails; set by the pass that owns it */
} Arena;

void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */

/* FNV-1a of a NUL-terminated string: the hash of the front end's name tables. */
static inline uint32_t str_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}
/* For tests (this thread's arenas): when set to N > 0, the Nth chunk
 * allocation from now fails as if malloc had, driving the out-of-memory
 * paths (tests/test_ptx.c). */
extern _Thread_local long blk_arena_fail_countdown;
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

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE, DIAG_REMARK } DiagSeverity;

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
/* The same with ANSI colours (a terminal's: blkc --color). */
char *diag_format_colour(const Diagnostic *d, bool colour);
void diag_print_to_file(void *file, const Diagnostic *d); /* a DiagCallback for FILE* */
void diag_print_colour_to_file(void *file, const Diagnostic *d); /* the same, coloured */
Span span_join(Span a, Span b);
/* Line `line` (1-based) of the source, its leading blanks left out, *len
 * bytes up to its newline; NULL for line 0 or past the end. */
const char *source_line_text(const Source *src, uint32_t line, int *len);

/* ---------------------------------------------------------------- types.c */
typedef enum {
    DT_ERROR = 0, /* result of an expression that already produced an error */
    DT_VOID,
#define DTYPE(ID, ...) DT_##ID,
#include "dtypes.def"
    DT_PTR,   /* pointer; BlkType.elem holds the pointee */
    DT_TYPE,  /* a compile-time type value (const T: type) */
    DT_STRING,
    DT_SHAPE, /* a shape list [a, b] */
    DT_TUPLE, /* several values: a helper call that returns (a, b, ...) */
    DT_HELPER, /* a helper's name: the combine argument of reduce and associative_scan */
} DType;

#define BLK_MAX_RANK 3
#define BLK_MAX_NUMEL (1 << 20)
/* runtime parameters per kernel: launch facts keep one bit per argument in a u64 */
#define BLK_MAX_KERNEL_ARGS 64
/* The largest source blkc and the runtime read: more is not a program (/dev/zero, a wrong file). */
#define BLK_MAX_SOURCE_BYTES ((size_t)64 << 20)

/* The type of every value: element dtype plus static shape (rank 0 = scalar). */
typedef struct {
    uint8_t dtype;
    uint8_t elem; /* pointee dtype when dtype == DT_PTR */
    uint8_t rank;
    int32_t shape[BLK_MAX_RANK];
} BlkType;

const char *dtype_name(DType t);
bool dtype_from_name(const char *name, size_t len, DType *out);
const char *dtype_name_for_triton(const char *triton_name); /* "float32" -> "f32"; NULL if none */
const char *dtype_name_list(void);                          /* "i1, bool, i32, ...", for messages */
bool dtype_is_int(DType t);      /* i1 excluded */
bool dtype_is_float(DType t);    /* f16, bf16, f32, f64: the types with arithmetic */
bool dtype_is_fp8(DType t);      /* f8e4m3, f8e5m2: storage and conversion only */
DType dot_result_dtype(DType a, DType b); /* what dot(a, b) of these elements gives, DT_VOID: no dot */
int dot_k_step(DType operand);            /* k of one tensor-core step: 16, 32 for 8-bit operands */
int dot_promote_terms(DType operand);     /* fp8: k terms summed apart, then added in f32 (0: all at once) */
int64_t dot_promote_every(DType operand, int64_t attr, int64_t k); /* one dot's runs (its max_num_imprecise_acc) */
/* inline_asm_elementwise with `pack` elements an asm: an operand's elements
 * of dtype d travel in *regs registers of *bits bits each; narrower elements
 * share 32-bit (or, two 8-bit ones, 16-bit) registers, the first in the low
 * bits. False where they cannot (one or two 8-bit elements: no register). */
bool asm_pack_registers(DType d, int pack, int *regs, int *bits);
bool dtype_is_signed(DType t);
bool dtype_is_unsigned(DType t); /* u8 ... u64 */
bool dtype_is_numeric_elem(DType t); /* any row of dtypes.def */
bool dtype_holds_float(DType t);     /* float or fp8: a ConstVal's .f, not .i */
int dtype_bits(DType t);
bool dtype_fits_int(DType t, int64_t v); /* v is a value of the integer (or i1) type t */
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

/* ---------------------------------------------------------------- ops.def */
/* The block IR's opcodes and what each is (its row of ops.def); bir.c has
 * the table. The IR itself is declared under bir.c below. */
typedef enum {
#define BIR_OP(ID, name, kind, ...) BIR_##ID,
#include "ops.def"
    BIR_OPCODE_COUNT
} BirOpcode;

/* The read-modify-write atomics (ptr, val[, mask] -> the old value), for
 * `case BIR_ATOMIC_RMW_CASES:`; with atomic_cas, every atomic. */
#define BIR_ATOMIC_RMW_CASES \
    BIR_ATOMIC_XCHG: case BIR_ATOMIC_ADD: case BIR_ATOMIC_MAX: case BIR_ATOMIC_MIN: case BIR_ATOMIC_AND: \
    case BIR_ATOMIC_OR: case BIR_ATOMIC_XOR
static inline bool bir_is_atomic(int code) {
    switch (code) {
    case BIR_ATOMIC_CAS: case BIR_ATOMIC_RMW_CASES: return true;
    default: return false;
    }
}

typedef enum {
    BIR_KIND_LEAF, BIR_KIND_SHAPE, BIR_KIND_ELEMENTWISE, BIR_KIND_MATH, BIR_KIND_MEMORY, BIR_KIND_REDUCE,
    BIR_KIND_DOT, BIR_KIND_CONTROL, BIR_KIND_TERMINATOR, BIR_KIND_EFFECT,
} BirOpKind;

/* How dot multiplies f32 operands (docs/language.md §7): exactly, one fma
 * per k (the default); in TF32 (inputs rounded to 10 mantissa bits, tensor
 * cores); or in three TF32 products (hi*hi + hi*lo + lo*hi, about f32's
 * precision on tensor cores). f16 and bf16 operands always use tensor cores. */
typedef enum { DOT_IEEE, DOT_TF32, DOT_TF32X3 } DotPrecision;
/* A dot's attr: its DotPrecision in the low bits, and for fp8 operands the
 * max_num_imprecise_acc it was given (0: the default) from this shift up. */
enum { DOT_PRECISION_MASK = 3, DOT_IMPRECISE_SHIFT = 2 };
/* max_num_imprecise_acc's values: powers of two from one tensor-core step up
 * to DOT_IMPRECISE_MAX, each a bound on a run's terms; or DOT_NOT_PROMOTED
 * (2^30, Triton's default on Hopper): no runs, the tensor cores sum into
 * the accumulator itself. */
enum { DOT_IMPRECISE_MAX = 1 << 20, DOT_NOT_PROMOTED = 1 << 30 };

/* BIR_TRANS's attr: 0 swaps the last two dimensions (trans(x)); any other
 * permutation is TRANS_PERMUTED | from[d] << (TRANS_FROM_SHIFT + 2 d), where
 * the result's dimension d is the operand's dimension from[d]. */
enum { TRANS_PERMUTED = 1, TRANS_FROM_SHIFT = 1 };
static inline int trans_from(int64_t attr, int rank, int d) {
    if (attr) return (int)(attr >> (TRANS_FROM_SHIFT + 2 * d)) & 3;
    return d < rank - 2 ? d : d == rank - 2 ? rank - 1 : rank - 2;
}

enum { FOR_DESCENDING = 1, FOR_UNROLL_SHIFT = 1 };
/* BIR_INLINE_ASM's attr: ASM_PURE | pack << ASM_PACK_SHIFT (elements an asm) */
enum { ASM_PURE = 1, ASM_PACK_SHIFT = 1 };
static inline int asm_pack_of(int64_t attr) { return attr >> ASM_PACK_SHIFT ? (int)(attr >> ASM_PACK_SHIFT) : 1; }
static inline int for_unroll_of(int64_t attr) { return (int)(attr >> FOR_UNROLL_SHIFT); }

/* grid_dependency's attr */
enum { GRID_WAIT, GRID_LAUNCH_DEPENDENTS };

/* The hardware counters read_counter reads (its attr), the builtins of the
 * same names: globaltimer (u64 ns), clock (u64 cycles of the SM, %clock64),
 * smid (u32, the SM the program runs on). */
typedef enum { COUNTER_GLOBALTIMER, COUNTER_CLOCK, COUNTER_SMID } BirCounter;

/* An atomic's memory semantics and scope (docs/language.md §9), packed in
 * its op's attr as sem | scope << 2; 0 is the default, acq_rel at GPU
 * scope. */
typedef enum { ATOMIC_ACQ_REL, ATOMIC_ACQUIRE, ATOMIC_RELEASE, ATOMIC_RELAXED } AtomicSem;
typedef enum { ATOMIC_GPU, ATOMIC_CTA, ATOMIC_SYS } AtomicScope;
static inline AtomicSem atomic_sem_of(int64_t attr) { return (AtomicSem)(attr & 3); }
static inline AtomicScope atomic_scope_of(int64_t attr) { return (AtomicScope)(attr >> 2 & 3); }
static inline bool atomic_order_valid(int64_t attr) {
    return attr >= 0 && attr < 12 && atomic_scope_of(attr) <= ATOMIC_SYS;
}

/* A load's or store's cache controls (docs/language.md §9), packed in its
 * op's attr as cache | eviction << 3 | MEMORY_VOLATILE; 0 is the default
 * access. They change how the caches keep the data, never a result. */
typedef enum { CACHE_DEFAULT, CACHE_CA, CACHE_CG, CACHE_CV, CACHE_WB, CACHE_CS, CACHE_WT, CACHE_MODIFIER_COUNT } CacheModifier;
typedef enum { EVICT_NORMAL, EVICT_FIRST, EVICT_LAST, EVICTION_POLICY_COUNT } EvictionPolicy;
enum { MEMORY_VOLATILE = 1 << 5 };
static inline CacheModifier memory_cache_of(int64_t attr) { return (CacheModifier)(attr & 7); }
/* .ca (loads) and .wb (stores) are what PTX does unasked */
static inline bool cache_is_default(CacheModifier c) { return c == CACHE_DEFAULT || c == CACHE_CA || c == CACHE_WB; }
static inline EvictionPolicy memory_eviction_of(int64_t attr) { return (EvictionPolicy)(attr >> 3 & 3); }

/* The rule an op's operand and result types follow (ops.def's TYPES column). */
typedef enum {
    BIR_TYPES_OWN, BIR_TYPES_NUMBER, BIR_TYPES_BITS, BIR_TYPES_INTEGER, BIR_TYPES_INT32, BIR_TYPES_F32,
    BIR_TYPES_FLOAT, BIR_TYPES_MATH, BIR_TYPES_COMPARE,
} BirTypeRule;

/* What an op's attr is to the shapes (ops.def's AXIS column). */
typedef enum { BIR_AXIS_NONE, BIR_AXIS_KEEP, BIR_AXIS_REMOVE, BIR_AXIS_ADD, BIR_AXIS_INDEX } BirAxisRule;

/* A row of ops.def. */
typedef struct {
    const char *name;
    BirOpKind kind;
    int8_t operands, optional_from, mask_at, results, regions;
    BirTypeRule types;
    BirAxisRule axis;
} BirOpInfo;

const BirOpInfo *bir_op_info(BirOpcode code);
/* x's type with the shape ops.def's AXIS rule gives code's result along axis:
 * x's (KEEP), without the axis (REMOVE), with one of size 1 there (ADD);
 * INDEX and NONE rows have no such shape (x's type back). */
BlkType bir_axis_shape(BirOpcode code, BlkType x, int axis);
bool bir_is_elementwise(BirOpcode code); /* ELEMENTWISE and MATH ops */
bool bir_has_effect(BirOpcode code);

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
    TOK_COMMA, TOK_SEMI, TOK_COLON, TOK_AT, TOK_ARROW, TOK_DOT,
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
    Token last; /* the token returned last */
    /* the latest `//` that followed an operand on its line: Triton's floor
     * division, maybe. The parser names it if the statement then fails. */
    Span slashes_after_operand;
} Lexer;

void lexer_init(Lexer *lx, const Source *src, DiagEngine *de);
Token lexer_next(Lexer *lx); /* reports bad characters and unterminated text */
const char *token_kind_name(TokenKind k);

/* ------------------------------------------------------------------ ast.c */
typedef enum {
    E_INT, E_FLOAT, E_BOOL, E_STRING, E_NAME, E_DTYPE, E_UNARY, E_BINARY, E_CAST,
    E_CALL, E_INDEX, E_SHAPE,
    E_TUPLE, /* (a, b, ...): only a helper's returned value; elements in u.shape.dims */
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
    bool triton_constexpr; /* Triton's `tl.constexpr`, refused (parser); read as i32 */
} TypeSyntax;

typedef union {
    int64_t i; /* integers and i1 */
    double f;  /* floats, exactly representable in the value's dtype */
    DType dtype;
    const char *str; /* a const str parameter's text (NUL-terminated, in the arena) */
} ConstVal;

struct Expr {
    ExprKind kind;
    Span span;
    /* filled by sema */
    BlkType type;
    bool is_const; /* folded at compile time; value in cv */
    bool weak;     /* an untyped literal (or a fold of only literals) */
    bool parenthesized; /* written in parentheses (parser), so `(a < b) < c` is not a chain */
    ConstVal cv;
    union {
        struct { int64_t value; bool invalid, is_u64; } int_lit; /* invalid: a parse error; is_u64: above i64, value holds the bits */
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
            Expr *inline_result;  /* the returned expression, or NULL; a builtin's several
                                     values (split, reduce of a tuple): an E_TUPLE of their types */
            Expr *combine;        /* reduce, associative_scan: the combine helper's call, inlined
                                     on scalar arguments */
        } call;
        /* x[:, None], x[a:b], x[:, 2:6]: per entry None (a new axis of size 1), the whole
         * axis, or a slice lo:hi (either may be NULL: 0, the axis' size) */
        struct {
            Expr *operand;
            int n;
            bool is_none[BLK_MAX_RANK + 1], is_slice[BLK_MAX_RANK + 1];
            Expr *lo[BLK_MAX_RANK + 1], *hi[BLK_MAX_RANK + 1];
        } index;
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
            /* `let (a, b) = f(...)`: one S_LET per name (its name, span and
             * sym; no init), taking the tuple's elements in order */
            PtrVec parts;
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
            Expr *unroll;             /* `unroll = N`, or NULL */
            bool is_static;           /* static_range: unrolled by sema */
            Stmt *body;
            Symbol *sym;
            /* static_range, after sema: a block of checked copies of body, one per
             * value of the loop variable (a constant in each) */
            Stmt *unrolled;
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
    bool equal_one;      /* @equal(1): the integer is 1 at every launch (a unit stride) */
    bool is_none;        /* sema: a pointer passed None in this build (-D NAME=None): absent, its
                          * argument a null pointer, `NAME == None` true */
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
/* The branch an `if` with a compile-time condition takes (NULL: none), the
 * only one sema checks and lowering keeps. */
Stmt *ast_const_if_taken(const Stmt *s);
Expr *expr_clone(Arena *a, const Expr *e);
const char *op_name(OpKind op);
BirOpcode op_kind_opcode(OpKind op); /* the block-IR op of an operator (shared by sema's folding and lower.c) */
/* --emit=ast: the typed tree; only_kernel NULL for all kernels. */
void ast_dump_module(FILE *out, const Module *m, const char *only_kernel);

/* --------------------------------------------------------------- parser.c */
/* Parses a whole module; returns NULL only on allocation failure. Syntax
 * errors are reported and the parser resynchronizes at `;` / `}`. */
Module *parse_module(Arena *a, const Source *src, DiagEngine *de);

/* ------------------------------------------------------------- builtins.c */
/* The language's builtins, from builtins.def and the MATH_OP rows of
 * ops.def. After sema, a call's args are in the order of the parameter
 * names (docs/language.md §6), NULL where an optional one is absent. */
typedef enum {
#define BUILTIN(ID, name, cls, min_args, max_args, ...) BI_##ID,
#include "builtins.def"
#define BIR_OP(...)
#define MATH_OP(ID, fn) BI_##ID,
#include "ops.def"
    BI_COUNT
} BuiltinId;

#define BI_ATOMIC_RMW_CASES \
    BI_ATOMIC_XCHG: case BI_ATOMIC_ADD: case BI_ATOMIC_MAX: case BI_ATOMIC_MIN: case BI_ATOMIC_AND: \
    case BI_ATOMIC_OR: case BI_ATOMIC_XOR

enum { BUILTIN_MAX_PARAMS = 7 }; /* the most named parameters a builtin has (inline_asm_elementwise's) */

/* builtins.def's CLASS column: which of sema's checkers a call goes to */
typedef enum {
    BC_LEAF, BC_SHAPE_CTOR, BC_SHAPE_OP, BC_MEMORY, BC_ELEMENTWISE, BC_REDUCTION, BC_COMBINE, BC_ATOMIC, BC_RANDOM,
    BC_EFFECT, BC_CUSTOM, BC_COUNT
} BuiltinClass;

typedef struct {
    const char *name;
    const char *params[BUILTIN_MAX_PARAMS]; /* parameter names, for named arguments */
    int min_args, max_args; /* max -1: variadic */
    int math_op;            /* the BirOpcode of a MATH_OP row of ops.def, else -1 */
    BuiltinClass cls;
} BuiltinSig;

const BuiltinSig *builtin_sig(BuiltinId id);
/* The BUILTIN_EFFECT rows of builtins.def: an effect or a possible fault. */
bool builtin_has_effect(BuiltinId id);
int builtin_find(const char *name); /* a BuiltinId, or -1 */
/* The builtin whose name is nearest to `name` (at most a third of its
 * letters away, by edit distance), for "did you mean"; NULL if none. */
const char *builtin_nearest(const char *name);
/* dot's input_precision: "ieee", "tf32" or "tf32x3" -> DotPrecision, else -1. */
int dot_precision_from_name(const char *text, size_t len);
/* An atomic's sem= ("acq_rel", "acquire", "release", "relaxed") -> AtomicSem,
 * and scope= ("gpu", "cta", "sys") -> AtomicScope; else -1. */
int atomic_sem_from_name(const char *text, size_t len);
int atomic_scope_from_name(const char *text, size_t len);
extern const char *const atomic_sem_names[4], *const atomic_scope_names[3];
/* A load's or store's cache_modifier= (".ca", ".cg", ".cv" for loads; ".wb", ".cg", ".cs",
 * ".wt" for stores; "" the default) -> CacheModifier, and eviction_policy= ("evict_first",
 * "evict_last"; "" the default) -> EvictionPolicy; else -1. */
int cache_modifier_from_name(const char *text, size_t len);
int eviction_policy_from_name(const char *text, size_t len);
extern const char *const cache_modifier_names[CACHE_MODIFIER_COUNT], *const eviction_policy_names[EVICTION_POLICY_COUNT];

/* ---------------------------------------------------------------- sema*.c */

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
    const Expr *quotient; /* sema: the truncating integer division whose quotient the binding
                             holds (Triton's '/' would have made it a float), or NULL */
    int runtime_depth, const_if_depth; /* sema: the runtime loops and branches, and the
                                          compile-time branches taken, around its declaration */
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
/* The 4 words of one Philox4x32-10 draw (Triton's randint4x); philox_randint is word 0. */
void philox_randint4x(int64_t seed, uint64_t offset, uint32_t out[4]);
uint32_t philox_word(int64_t seed, uint64_t offset, int word);
/* A word as a uniform f32 in [0, 1) (Triton's uint_to_uniform_float): rand is word 0's. */
float philox_uniform(uint32_t word);
/* IEEE half and bfloat16 <-> f32; to the narrow types rounds to nearest even. */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);
/* fp8: the two OCP formats (dtypes.def's DK_FP8 rows). f32 to fp8 rounds to
 * nearest even; beyond the largest finite value e5m2 gives inf and e4m3
 * (which has no inf) NaN, as PyTorch's conversions do. */
typedef struct {
    DType dtype;
    int man_bits, bias;
    unsigned max_finite; /* the largest finite code without its sign */
    bool ieee;           /* all-ones exponent holds inf and NaNs (e5m2); else only 0x7f is NaN */
} Fp8Format;
const Fp8Format *fp8_format(DType d); /* NULL if d is not an fp8 type */
uint8_t f32_to_fp8(float f, const Fp8Format *fmt);
float fp8_to_f32(uint8_t code, const Fp8Format *fmt);
/* f32 rounded to TF32 (10 mantissa bits), as cvt.rna.tf32.f32: to nearest,
 * ties away from zero; the result is an f32 with the low 13 bits clear. */
float f32_to_tf32(float f);
/* A numeric value converted with the semantics of `as` (docs/language.md §5):
 * floats held as doubles exactly representable in their dtype, integers
 * normalized (signed types sign-extended, unsigned zero-extended, u64 as its
 * bits, i1 0 or 1). Float to int truncates and saturates, NaN giving 0; f64
 * to f16/bf16 and anything to fp8 round through f32, as PyTorch does. Shared by the lowering's constant
 * folding and the interpreter, so both agree bit for bit. */
ConstVal convert_scalar(ConstVal v, DType from, DType to);
/* An integer wrapped to the integer (or i1) dtype `to`: its low bits,
 * sign- or zero-extended from the type's width (i1: the lowest bit). */
int64_t int_wrap(int64_t v, DType to);
/* The one scalar arithmetic, shared by constant folding (sema) and the
 * interpreter so that both give the same bits. scalar_binary gives what the
 * program computes at run time (docs/language.md §8): a float op in f64,
 * rounded once to d; an integer op wrapped to d, x / 0 all ones and x % 0
 * x, shifts by an amount outside 0 .. bits-1 clamped as PTX's. *flags
 * collects what constant folding refuses (an error there): a signed
 * result not a value of d, a division by zero, a shift out of range.
 * op: ADD SUB MUL DIV REM AND OR XOR SHL SHR UMULHI MIN MAX POW. */
enum { SCALAR_SIGNED_OVERFLOW = 1, SCALAR_DIVIDE_BY_ZERO = 2, SCALAR_SHIFT_OUT_OF_RANGE = 4 };
ConstVal scalar_binary(BirOpcode op, ConstVal a, ConstVal b, DType d, unsigned *flags);
/* A comparison (EQ NE LT LE GT GE) of two numbers of dtype d: unordered
 * (NaN) operands satisfy only NE; u64 compares its bits unsigned. */
bool scalar_compare(BirOpcode op, ConstVal a, ConstVal b, DType d);
/* The f32 math functions (the MATH_OP rows of ops.def) as the interpreter
 * computes them, and constant folding with it: the C library's f32 ones.
 * code must be a MATH_OP opcode. */
float blk_math_f32(BirOpcode code, float x);
/* sqrt, floor, ceil, trunc, rint, round: exact in f64 too, so they take it. */
bool blk_math_has_f64(BirOpcode code);
double blk_math_f64(BirOpcode code, double x);
/* x^y with C's special cases, correctly rounded but for cases within ~1e-14
 * of a tie (numeric.c; nvptx/math.c gives the same bits). */
float blk_pow_f32(float x, float y);

/* The one rule for numeric literals (docs/language.md §2), used for source
 * literals and -D values alike. An integer is decimal without leading zeros
 * (blk has no octal) or 0x hex, and fits in i64 (in u64 where a literal may); a float is read whole, must
 * be finite in f32 and, unless it is zero, must not round to zero there.
 * On failure they return false and set *why to the reason, to follow
 * "literal 'TEXT' ". text need not be NUL-terminated. */
/* above_i64 NULL: an integer must fit i64; else it may take up to u64's
 * range (*out then holds the bits) and *above_i64 says whether it did. */
bool parse_int_literal(const char *text, size_t len, int64_t *out, bool *above_i64, const char **why);
bool parse_float_literal(const char *text, size_t len, double *out, const char **why);

/* ------------------------------------------------------------------ bir.c */
/* The block IR (BIR): the one contract between the front end and the
 * backends (docs/architecture.md). A kernel is a function of SSA values;
 * every value has a BlkType, so a dtype and a static shape. Control flow is
 * structured: for/while/if ops own regions (blocks with arguments), and the
 * values a loop or branch changes flow out through yield and op results. */


enum { BIR_NONE = -1 }; /* an absent optional operand: load's mask and other, a mask */

typedef struct BirBlock BirBlock;

typedef struct {
    BirOpcode code;
    int *operands, noperands; /* value ids, BIR_NONE where an optional one is absent */
    int *results, nresults;
    BirBlock *regions[2];
    int nregions;
    /* attr: the axis (program_id, num_programs, expand_dims, reductions, scans,
     * flip, take, partner), an atomic's sem | scope << 2, a dot's precision,
     * trans's permutation (trans_from),
     * arange's start, and for BIR_FOR FOR_DESCENDING when the step is a
     * negative constant (the loop runs while iv > end) | its unroll factor
     * (0: the compiler's choice) << FOR_UNROLL_SHIFT; inline asm's ASM_PURE |
     * pack << ASM_PACK_SHIFT. */
    int64_t attr;
    ConstVal value;   /* BIR_CONST, in the result's dtype; take's index and partner's xor in .i */
    const char *text; /* BIR_PRINT: the prefix; BIR_ASSERT: the message; BIR_INLINE_ASM: the PTX */
    const char *asm_constraints; /* BIR_INLINE_ASM: "=r,r,r" */
    Span span;        /* its source: debug locations and diagnostics */
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
    bool equal_one;             /* @equal(1) */
    bool is_none;               /* a pointer passed None in this build (-D NAME=None): its argument is
                                 * a null pointer, never read */
    int value;                  /* its value: the body's argument of the same index */
} BirParam;

typedef struct {
    const char *name;
    Span span;           /* the kernel's name in the source */
    const Source *src;
    const char *consts;  /* "T = f16, BLOCK = 1024": the const parameters it was built with */
    BirParam *params;    /* the runtime parameters, in launch order */
    int nparams;
    BirBlock *body;      /* args: the runtime parameters; ends in BIR_RETURN */
    BirValue *values;
    int nvalues, values_cap;
    Arena *arena;
} BirFunction;

/* Whether f has a gdc_wait: a launch may then overlap its start with the end
 * of the grid launched before it (programmatic dependent launch). */
bool bir_waits_on_grid(const BirFunction *f);

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
/* Moves splat, expand_dims, broadcast and trans ops whose operands are
 * defined outside a loop out of it, before the loop: a mask row of a loaded
 * vector (`valid[:, None]`) is then laid out for its uses once, not every
 * iteration (a layout change can go through shared memory). */
void bir_hoist_invariant_shapes(BirFunction *f);
/* --emit=bir: one op per line, with result types and the source line. */
void bir_print(FILE *out, const BirFunction *f);
/* The same with a note after the type of each value an op or region
 * defines (note writes it into buf; "" for none): --emit=plan's layouts. */
typedef void (*BirValueNote)(void *ctx, int value, char *buf, size_t size);
void bir_print_noted(FILE *out, const BirFunction *f, BirValueNote note, void *ctx);
/* Checks operand dominance, types and shapes of every op, and terminators.
 * Returns true, or false with a message in err. */
bool bir_verify(const BirFunction *f, char *err, size_t err_size);

/* -------------------------------------------------------------- split3d.c */
/* For a backend that builds blocks of one or two dimensions: f with each
 * value [A, M, N] split into A values [M, N] (ops along the first dimension
 * become elementwise ops across them). f itself when it has no such value;
 * NULL with why (and the op it could not split, or NULL for an internal
 * error) otherwise. The new function lives in a. */
BirFunction *bir_split_3d(const BirFunction *f, Arena *a, const BirOp **failed_at, char *why, size_t why_size);

/* ---------------------------------------------------------------- lower.c */
/* Lowers every checked kernel of the module to BIR. Inputs must have passed
 * sema without errors. */
BirModule *lower_module(Arena *a, const Module *m);

#endif
