/* A query over a table: the table's columns (the data columns of the files'
 * schema, then the partition columns), one bound predicate (every where= and
 * COL=VALUE component ANDed), a projection and a limit.  Compiled once; the
 * scan and the plan apply it to each file (partition values substituted). */
#ifndef PQ_QUERY_H
#define PQ_QUERY_H

#include "expr.h"
#include "schema.h"
#include "table.h"

typedef struct pq_query_spec {
    const char *const *wheres;   /* where= expressions */
    int n_wheres;
    const char *const *eq_cols;  /* COL=VALUE components: value typed by the column */
    const char *const *eq_vals;  /* NULL value: IS NULL (the NULL partition) */
    int n_eq;
    const char *const *select;   /* NULL: every column */
    int n_select;
    int64_t limit;               /* < 0: none */
} pq_query_spec;

typedef struct pq_query {
    pq_arena arena;
    const pq_schema *schema;     /* the reference schema (first file) */
    int n_data, n_parts, n_cols;
    pq_expr_column *cols;        /* n_cols: data columns, then partition columns */
    pq_node *part_nodes;         /* synthesized primitive nodes of the partition columns */
    pq_part_type *part_types;
    int *out;                    /* projection: indexes into cols */
    int n_out;
    pq_expr *pred;               /* NULL: no filter */
    int64_t limit;
} pq_query;

int pq_query_compile(const pq_schema *schema, const char *const *part_names, const pq_part_type *part_types,
                     int n_parts, const pq_query_spec *spec, pq_query **out, pq_error *err);
void pq_query_free(pq_query *q);

/* The CSV header line of the query's output columns. */
int pq_query_header(const pq_query *q, pq_buf *out);

/* A partition value (text from the path, NULL for the NULL partition) as a
 * typed value of partition column `part`. Returns -1 when it does not parse
 * as the column's type. */
int pq_query_part_value(const pq_query *q, int part, const char *text, pq_value *out);
/* The predicate with the values of partition columns [0, n) substituted
 * and folded (rung 1 of the ladder), in `a`: *out is NULL when the query has
 * no predicate.  values NULL: every one is the NULL partition.  A value not
 * of its column's type: with `bad`, the fold stops, *bad is its column and
 * *out NULL; without, that column is left in (pruning keeps what it cannot
 * decide).  -1: out of memory. */
int pq_query_fold_parts(const pq_query *q, const char *const *values, int n, pq_arena *a, pq_expr **out, int *bad);
/* The same value as a CSV cell. */
int pq_query_part_cell(const pq_query *q, int part, const char *text, pq_buf *out);

/* How a file holds a data column of the table (schema evolution). */
typedef enum pq_fit_state {
    PQ_FIT_SAME = 0,           /* the table's type, or one that widens to it (pq_col_fit.widen) */
    PQ_FIT_MISSING,            /* not in the file: NULL in its rows */
    PQ_FIT_CONFLICT,           /* of a type that does not read as the table's */
} pq_fit_state;
typedef struct pq_col_fit {
    uint8_t state;             /* pq_fit_state */
    uint8_t widen;             /* pq_widen (schema.h) of a PQ_FIT_SAME primitive */
} pq_col_fit;

/* Per file: which leaf each data column is in this file (resolved by name),
 * or an error naming the column.  col_leaf has n_cols entries (-1 for
 * partition and nested).  With `fit` (n_cols entries), a column the file
 * lacks or holds in another type is no error: fit says so (col_node NULL
 * when missing, the file's node on a conflict); a primitive may be of a
 * type that widens to the table's (pq_node_widen), a nested column must
 * have its shape.  Without, every column must be there in the table's
 * shape and type. */
int pq_query_bind_file(const pq_query *q, const pq_schema *file_schema, int32_t *col_leaf,
                       const pq_node **col_node, pq_col_fit *fit, pq_error *err);
/* The error of column `col` whose type in file `file` (node `in_file`)
 * does not read as the table's: names the column, the file and both
 * types. */
int pq_query_conflict(const pq_query *q, int col, const pq_node *in_file, const char *file, pq_error *err);

/* A select= list or --select argument: names separated by commas, each
 * trimmed of spaces, or double-quoted as in expressions ("x,y", quotes
 * inside doubled) for names with commas or edge spaces.  percent: each name
 * is percent-decoded after the split (path components: %2C is a comma inside
 * a name).  Names and the grown *out array are allocated in `a`. */
int pq_select_parse(const char *s, bool percent, pq_arena *a, const char ***out, int *n, pq_error *err);

#endif
