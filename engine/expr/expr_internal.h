/* The node layout shared by expr/expr_*.c (parser, binder, evaluator,
 * pruner) and their unit test and fuzz target.  Other modules use expr.h. */
#ifndef PQ_EXPR_INTERNAL_H
#define PQ_EXPR_INTERNAL_H

#include "expr.h"

#define PQ_EXPR_MAX_DEPTH 256      /* nesting of parentheses, operators, NOT */
#define PQ_EXPR_MAX_LEN 65536      /* bytes of expression text */

typedef enum pq_cmp_op { PQ_OP_EQ, PQ_OP_NE, PQ_OP_LT, PQ_OP_LE, PQ_OP_GT, PQ_OP_GE } pq_cmp_op;
typedef enum pq_arith_op { PQ_OP_ADD, PQ_OP_SUB, PQ_OP_MUL, PQ_OP_MOD } pq_arith_op;

/* ---- syntax tree (parser output) */
typedef enum pq_akind {
    PQ_A_IDENT,                /* text = unescaped name */
    PQ_A_INT, PQ_A_DECIMAL, PQ_A_FLOAT, /* text = the literal as written */
    PQ_A_STRING,               /* text = unescaped bytes */
    PQ_A_TRUE, PQ_A_FALSE, PQ_A_NULL,
    PQ_A_NEG, PQ_A_NOT,        /* args[0] */
    PQ_A_AND, PQ_A_OR,         /* args[0..n) */
    PQ_A_CMP,                  /* op: pq_cmp_op; args[0], args[1] */
    PQ_A_ARITH,                /* op: pq_arith_op */
    PQ_A_BETWEEN,              /* args: x, lo, hi; negated */
    PQ_A_IN,                   /* args: x, items...; negated */
    PQ_A_IS_NULL,              /* args[0]; negated */
    PQ_A_LIKE,                 /* args: x, pattern; negated */
} pq_akind;

typedef struct pq_ast pq_ast;
struct pq_ast {
    pq_akind kind;
    uint8_t op;
    bool negated;
    int32_t pos;               /* 1-based character position in the text */
    int16_t depth;             /* height of the subtree */
    const char *text;
    size_t len;
    pq_ast **args;
    int32_t n_args;
};

/* Text to syntax tree.  Errors are PQ_E_USAGE with the position. */
int pq_x_parse(const char *text, size_t len, pq_arena *arena, pq_ast **out, pq_error *err);

/* ---- bound nodes */
typedef enum pq_xkind {
    PQ_X_LITERAL,              /* value (type = value.type, or the type it was cast to) */
    PQ_X_COLUMN,               /* column, col */
    PQ_X_CAST,                 /* args[0] converted to `type` (exact or to DOUBLE) */
    PQ_X_NEG,                  /* -args[0] */
    PQ_X_ARITH,                /* args[0] op args[1] */
    PQ_X_CMP,                  /* args[0] op args[1], both of one comparable type */
    PQ_X_AND, PQ_X_OR,         /* n-ary, n >= 2 */
    PQ_X_NOT,                  /* only before normalization */
    PQ_X_IS_NULL,              /* args[0] IS [NOT] NULL */
    PQ_X_IN,                   /* args[0] [NOT] IN list (literals of args[0]'s type) */
    PQ_X_LIKE,                 /* args[0] [NOT] LIKE pattern */
} pq_xkind;

/* How a column's values are stored in a batch (the evaluator's kernels). */
typedef enum pq_repr {
    PQ_R_NONE,                 /* always NULL (UNKNOWN) */
    PQ_R_BOOL, PQ_R_I32, PQ_R_U32, PQ_R_I64, PQ_R_U64,
    PQ_R_FLOAT, PQ_R_DOUBLE, PQ_R_HALF,
    PQ_R_INT96,                /* nanoseconds of day + Julian day */
    PQ_R_BYTES,                /* BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY as bytes */
    PQ_R_DEC_BYTES,            /* big-endian two's complement decimal */
} pq_repr;

typedef struct pq_colinfo {
    pq_repr repr;
    pq_vtype type;             /* value domain (UINT64 is DECIMAL with scale 0) */
    int32_t scale;             /* DECIMAL */
    int64_t unit;              /* TIME/TIMESTAMP: nanoseconds per stored unit; else 1 */
    int32_t type_length;       /* FIXED_LEN_BYTE_ARRAY */
    int16_t def_level;         /* a row is non-null iff def == def_level */
    bool f32;                  /* FLOAT/FLOAT16: DuckDB's FLOAT (literals round to float) */
    bool uuid, binary;         /* literal forms: 8-4-4-4-12 text, \xHH escapes */
    bool local_ts;             /* TIMESTAMP not adjusted to UTC: a literal's offset is dropped, as DuckDB does */
    const char *opaque;        /* non-NULL: type name of a column only IS [NOT] NULL can test */
} pq_colinfo;

/* Derives the column's representation from its schema node.  Columns whose
 * values cannot be compared (INTERVAL, DECIMAL wider than 38 digits) get
 * `opaque` set; nothing fails. */
void pq_x_colinfo(const pq_node *node, pq_colinfo *out);

/* How a literal prints: PQ_LF_FLOAT_TOKEN makes a DOUBLE read back as a float
 * literal (`1.5e0`), not a DECIMAL that a FLOAT operand would round. */
typedef enum pq_litform { PQ_LF_PLAIN, PQ_LF_UUID, PQ_LF_BINARY, PQ_LF_FLOAT_TOKEN, PQ_LF_DECIMAL_TOKEN } pq_litform;

typedef struct pq_kernel pq_kernel; /* evaluator fast path, expr_eval.c */

struct pq_expr {
    pq_xkind kind;
    pq_vtype type;             /* result type: PQ_V_BOOL for predicates */
    int32_t scale;             /* DECIMAL result scale */
    bool f32;                  /* DOUBLE result of FLOAT precision */
    uint8_t op;                /* pq_cmp_op / pq_arith_op */
    bool negated;              /* IS NOT NULL, NOT IN, NOT LIKE */
    uint8_t lit_form;          /* LITERAL: how to print a STRING value (pq_litform) */
    int32_t pos;               /* source position, 0 when synthesized */
    pq_expr **args;
    int32_t n_args;
    pq_value value;            /* LITERAL */
    int32_t column;            /* COLUMN: index into the columns */
    const char *name;          /* COLUMN */
    pq_colinfo col;            /* COLUMN */
    pq_value *list;            /* IN: sorted, distinct, non-null, of args[0]'s type */
    int32_t n_list;
    bool list_has_null;        /* IN: the list held a NULL */
    pq_bytes pattern;          /* LIKE */
    const pq_kernel *kernel;   /* set by pq_x_prepare; NULL: general path */
};

/* Node constructors shared by the binder and the normalizer: a node with
 * room for n_args arguments, a literal, a shallow copy (own argument array). */
pq_expr *pq_x_new(pq_arena *arena, pq_xkind kind, pq_vtype type, int n_args);
pq_expr *pq_x_literal(pq_arena *arena, const pq_value *v);
pq_expr *pq_x_copy(pq_arena *arena, const pq_expr *e);
/* Sorts and dedups an IN list (NULLs removed, reported in *had_null). */
int pq_x_sort_values(pq_value *v, int n, bool *had_null);

/* Literal-only subtree to its value (used for constant folding).  Errors:
 * overflow. */
int pq_x_eval_constant(const pq_expr *e, pq_arena *arena, pq_value *out, pq_error *err);
/* Builds the fast paths of every node (idempotent). */
int pq_x_prepare(pq_expr *e, pq_arena *arena, pq_error *err);
/* For a prepared CMP/IN leaf on a column: 0 when it is FALSE for every
 * non-null row, 1 when TRUE for every non-null row, -1 otherwise. */
int pq_x_kernel_constant(const pq_expr *e);
/* Test hook: when set, pq_expr_filter ignores the fast paths. */
extern bool pq_x_disable_kernels;

/* Normalization (expr_bind.c): NOT pushed to the leaves, constants folded,
 * `literal op column` turned around, and (filter context) predicates that can
 * never be TRUE replaced by FALSE. */
pq_expr *pq_x_normalize(pq_expr *e, pq_arena *arena, pq_error *err);

/* Comparison grid: a column whose stored integer p means the value p * grid in
 * the comparison's domain, compared with the literal L by `op`.  Yields the
 * equivalent test on p: `p op' q`, or a constant for every non-null row
 * (*constant = 0 FALSE, 1 TRUE, -1 none). */
void pq_x_grid_literal(pq_cmp_op op, __int128 literal, __int128 grid, pq_cmp_op *op_out,
                       __int128 *q, int *constant);

/* ---- values (expr_value.c) */
bool pq_x_dec_rescale(__int128 u, int32_t from, int32_t to, __int128 *out); /* to >= from */
int pq_x_dec_cmp(__int128 a, int32_t sa, __int128 b, int32_t sb);
double pq_x_dec_to_double(__int128 u, int32_t scale);
/* Rounds half away from zero to `to` digits (to <= from). */
__int128 pq_x_dec_round(__int128 u, int32_t from, int32_t to);
/* [+-]digits[.digits][e[+-]digits] exactly; -1 on syntax, -2 past 38 digits. */
int pq_x_double_cmp(double a, double b);
__int128 pq_x_floor_div(__int128 a, __int128 b);
__int128 pq_x_int96_ns(const uint8_t b[12]);
__int128 pq_x_be_int(const uint8_t *p, uint32_t len, bool *fits);
double pq_x_round_f32(double d);
const char *pq_x_type_name(pq_vtype t);
/* Converts a value to another type exactly (INT->DECIMAL, DATE->TIMESTAMP,
 * numbers->DOUBLE (rounded; to float precision when f32)).  Returns -1 when
 * the conversion is not one of those. */
int pq_x_value_cast(const pq_value *in, pq_vtype to, int32_t scale, bool f32, pq_value *out);
/* Converts v to a column's value domain exactly: 0; -1 when no value of the
 * column can equal v; -2 when that cannot be decided. */
int pq_x_to_domain(const pq_colinfo *c, const pq_value *v, pq_value *out);
/* Prints a value as an expression literal. */
int pq_x_value_text(const pq_value *v, pq_litform form, pq_buf *out);

/* ---- evaluation (expr_eval.c) */
int32_t pq_x_count_kept(const uint8_t *keep, int32_t n_rows);

#endif
