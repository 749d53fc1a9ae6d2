/* Expressions of `where=` (SPEC section 4): parse, bind, normalize, evaluate
 * on column batches, and reason about value ranges for pruning.
 *
 * Life of a predicate:
 *   text --pq_expr_parse--> AST --pq_expr_bind(columns)--> typed expression
 *   --pq_expr_normalize--> NOT pushed inward, BETWEEN as a range, constants folded
 *   then per file: pq_expr_substitute(partition values) + fold (rung 1),
 *   per row group / page: pq_expr_prune(ranges) (rungs 2 and 4),
 *   per batch: pq_expr_filter(batches) (the row filter).
 * Normalization and binding happen once per query, never per row group. */
#ifndef PQ_EXPR_H
#define PQ_EXPR_H

#include "column.h"
#include "mem.h"
#include "numfmt.h"
#include "schema.h"
#include "status.h"

/* ------------------------------------------------------------------ columns */

/* A column the expression may name: a top-level primitive data column (its
 * schema node) or a partition column (described by a synthesized node:
 * INT64, INT32+DATE, or BYTE_ARRAY+STRING).  index is the position in the
 * table's column list; batches and ranges are passed by that index. */
typedef struct pq_expr_column {
    const char *name;
    /* The schema node.  A nested node (list, map, struct) can only be tested
     * with IS [NOT] NULL; its batch is then one entry per row with def 1 for
     * a present value and 0 for NULL (no values). */
    const pq_node *node;
    bool partition;
} pq_expr_column;

/* ------------------------------------------------------------------ values */

typedef enum pq_vtype {
    PQ_V_NULL,                 /* the NULL literal (type unknown) */
    PQ_V_BOOL,
    PQ_V_INT,                  /* all integers, as int64 (UINT64 columns: DECIMAL with scale 0) */
    PQ_V_DOUBLE,               /* FLOAT, DOUBLE, FLOAT16 */
    PQ_V_DECIMAL,              /* unscaled __int128 with a scale */
    PQ_V_STRING,               /* strings and binary: bytes, compared unsigned bytewise */
    PQ_V_DATE,                 /* days since epoch */
    PQ_V_TIME,                 /* nanoseconds since midnight */
    PQ_V_TIMESTAMP,            /* nanoseconds since epoch as __int128 (INT96 and years > 2262 fit) */
} pq_vtype;

typedef struct pq_value {
    pq_vtype type;
    bool is_null;
    union {
        bool b;
        int64_t i;
        double d;
        struct { __int128 unscaled; int32_t scale; } dec;
        pq_bytes s;
        int32_t date;
        int64_t time_ns;
        __int128 ts_ns;
    } u;
} pq_value;

/* Decodes one PLAIN-encoded value of a column's physical type (a statistics
 * min/max, a page index bound, a dictionary entry) into the column's value
 * domain.  Returns -1 when the bytes do not fit the type (wrong length...),
 * leaving *out untouched.  A STRING value points into `p`.  Domains: UINT64
 * is DECIMAL(scale 0); FLOAT and FLOAT16 are DOUBLE; INT96 is a TIMESTAMP in
 * whole microseconds (as the CSV output and DuckDB show it). */
int pq_value_from_plain(const pq_node *col, const uint8_t *p, size_t len, pq_value *out);

/* Total order used by comparisons and pruning: -1, 0, 1.  Both non-null,
 * same vtype (INT with DECIMAL and DATE with TIMESTAMP also compare exactly;
 * decimals of any scales).  Doubles: -0.0 == 0.0, NaN equal to NaN and above
 * everything. */
int pq_value_cmp(const pq_value *a, const pq_value *b);

/* ------------------------------------------------------------------ expressions */

typedef struct pq_expr pq_expr;    /* bound, typed; allocated in the caller's arena */

/* Parses and binds `text` against `cols`.  Errors are PQ_E_USAGE with a
 * message that points at the offending character:
 *   "where=amount >> 100: unexpected '>' at position 9"
 *   "unknown column 'amout'"   "cannot compare DATE with BOOLEAN"
 * The result is normalized (NOT pushed to the leaves, BETWEEN as two
 * comparisons, constant subexpressions folded). */
int pq_expr_compile(const char *text, const pq_expr_column *cols, int n_cols, pq_arena *arena,
                    pq_expr **out, pq_error *err);

/* AND of two expressions (either may be NULL = TRUE). */
pq_expr *pq_expr_and(pq_arena *arena, pq_expr *a, pq_expr *b);

/* Replaces column `index` by a constant and folds.  (Partition values per
 * file.)  Returns a new expression; `e` is unchanged. */
pq_expr *pq_expr_substitute(pq_arena *arena, const pq_expr *e, int index, const pq_value *v);

/* TRUE / FALSE / NULL when the expression is a constant. */
typedef enum pq_tri {
    PQ_TRI_FALSE = 0,          /* no row can satisfy it */
    PQ_TRI_TRUE = 1,           /* every row satisfies it */
    PQ_TRI_MAYBE = 2,          /* unknown */
} pq_tri;
pq_tri pq_expr_constant(const pq_expr *e);

/* The columns an expression reads (indexes into cols), in ascending order:
 * returns their number and stores at most max. */
int pq_expr_columns(const pq_expr *e, int *out, int max);

/* Top-level AND conjuncts: returns their number and stores at most max (as
 * pq_expr_columns does), so a caller sees when it holds only some of them.
 * A single non-AND expression is one conjunct. */
int pq_expr_conjuncts(const pq_expr *e, const pq_expr **out, int max);

/* When conjunct `e` is `col = literal` or `col IN (literals)` on one column,
 * returns the column index and fills `values` (up to max; NULL literals in an
 * IN list are dropped — they never make a row TRUE); returns -1 otherwise or
 * when there are more than max values.  Used by the dictionary and bloom
 * filter rungs.  Values are in the column's value domain; ones no value of the
 * column can equal (1.5 for an integer column) are left out, so 0 values with
 * a column index means no row matches.  Also -1 where one value has several
 * encodings a hash would tell apart: a floating 0 or NaN, INT96 columns, and
 * comparisons made in DOUBLE on a non-floating column. */
int pq_expr_equality_values(const pq_expr *e, pq_value *values, int max, int *n_values);

/* Encodes a value as the column's PLAIN bytes (what a bloom filter hashes and
 * what a dictionary holds): INT32 4 bytes LE, INT64 8, FLOAT/DOUBLE IEEE bits,
 * BYTE_ARRAY raw bytes, FIXED_LEN_BYTE_ARRAY big-endian decimals padded to
 * type_length (BYTE_ARRAY decimals in their shortest form), BOOLEAN one byte...
 * Returns the length, or -1 when the value has no exact representation in
 * that column (e.g. 1.5 for an INT32 column: no row can equal it), or -2 when
 * that cannot be told here (another type, NULL, an INTERVAL column) or `cap`
 * is too small. */
int pq_value_to_plain(const pq_node *col, const pq_value *v, uint8_t *buf, size_t cap);

/* ------------------------------------------------------------------ evaluation */

/* Evaluates the predicate on n_rows rows.  batches[i] is the batch of column
 * i for every column the expression reads (flat columns: def levels + dense
 * values as produced by the column reader).  keep[r] is set to 1 when the
 * predicate is TRUE for row r, 0 when FALSE or NULL.  Only rows with
 * keep[r] != 0 on input are evaluated when `only_kept` is set (others stay 0).
 * AND/OR stop evaluating a row once it is decided, so a later operand never
 * fails on a row an earlier one rejected.
 * Errors: integer overflow in arithmetic ("integer overflow in amount * 1000"),
 * PQ_E_CORRUPT for a batch with fewer values than non-null rows.
 * No allocation per row; scratch is taken from `arena` once per call: about
 * 6 bytes per row, plus 5 per row for each column read after a conjunct has
 * dropped rows, plus 9-17 per row for each node the fast paths do not cover
 * (arithmetic, column-to-column comparisons).  A scratch arena whose block
 * holds that lets pq_arena_reset reuse it from batch to batch.  Safe to call
 * from several threads on one expression (with separate arenas). */
int pq_expr_filter(const pq_expr *e, const pq_col_batch *const *batches, int32_t n_rows,
                   uint8_t *keep, bool only_kept, pq_arena *scratch, pq_error *err);

/* ------------------------------------------------------------------ pruning */

/* What is known about one column over a set of rows (a row group or a page).
 * Bounds are in the column's value domain and may be loose: min is <= every
 * non-null value, max is >= every non-null value (truncated statistics are
 * still valid bounds); `exact_min`/`exact_max` say whether the bound is a value
 * that occurs.  NaN is never a bound: `may_have_nan` says whether NaN values can
 * be present (floating columns without a proof of no NaN). */
typedef struct pq_col_range {
    bool known;                /* false: nothing is known (every test is MAYBE) */
    bool has_min, has_max;
    pq_value min, max;
    bool exact_min, exact_max;
    bool may_have_nan;
    bool has_null_count;
    int64_t null_count;
    int64_t row_count;         /* rows covered */
} pq_col_range;

/* Three-valued proof over a set of rows: FALSE when no row can make the
 * predicate TRUE, TRUE when every row makes it TRUE, MAYBE otherwise.
 * ranges[i] is used for every column i the expression reads.  One-sided: any
 * doubt (unknown column range, an operator without a rule, LIKE with a leading
 * wildcard...) gives MAYBE. */
pq_tri pq_expr_prune(const pq_expr *e, const pq_col_range *ranges);

/* Text of a bound expression (for plan output), e.g.
 * "(amount > 100) AND (country IN ('DE', 'FR'))".  Deterministic, but not
 * exact enough to key a cache: a FLOAT-precision literal and the DOUBLE
 * one it reads back as print alike. */
int pq_expr_text(const pq_expr *e, pq_buf *out);

/* An exact rendering of a bound expression for cache keys: node kinds,
 * result types, operators, columns and every literal's bits.  Two trees
 * render alike only when they are the same tree, so views written
 * differently (spacing, parentheses, BETWEEN or two comparisons) that
 * normalize to one tree share results.  Top-level conjuncts are sorted, so
 * their order does not matter either, unless one can fail (arithmetic that
 * may overflow): AND skips rows an earlier conjunct rejected, so whether the
 * error happens depends on the order.  Not for reading. */
int pq_expr_key(const pq_expr *e, pq_buf *out);

/* ------------------------------------------------------------------ internals
 * The node layout shared by engine/expr_*.c (parser, binder, evaluator,
 * pruner) and their unit test.  Other modules use the API above. */
#ifdef PQ_EXPR_INTERNAL

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

#endif /* PQ_EXPR_INTERNAL */

#endif
