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

#endif
