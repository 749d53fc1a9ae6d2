/* Canonical CSV (SPEC section 5) from column batches.
 *
 * An output column is a top-level schema node with the batches of its leaves
 * (one batch per leaf, all covering the same rows).  Flat columns are written
 * straight from their typed arrays; nested columns (lists, maps, structs) are
 * assembled from repetition/definition levels into JSON text.  A constant
 * column (a partition value) repeats one preformatted cell. */
#ifndef PQ_RENDER_H
#define PQ_RENDER_H

#include "column.h"
#include "mem.h"
#include "schema.h"

/* How a primitive value is written, chosen once per column. */
typedef enum pq_cell_kind {
    PQ_CELL_NULL,          /* UNKNOWN logical type: always null */
    PQ_CELL_BOOL,
    PQ_CELL_I32,
    PQ_CELL_U32,
    PQ_CELL_I64,
    PQ_CELL_U64,
    PQ_CELL_FLOAT,
    PQ_CELL_DOUBLE,
    PQ_CELL_FLOAT16,
    PQ_CELL_STRING,        /* UTF-8 text as is */
    PQ_CELL_BINARY,        /* printable ASCII as is, other bytes \xHH */
    PQ_CELL_DECIMAL_I32,
    PQ_CELL_DECIMAL_I64,
    PQ_CELL_DECIMAL_BYTES, /* big-endian two's complement (BYTE_ARRAY, FLBA) */
    PQ_CELL_DATE,
    PQ_CELL_TIME,          /* int32 millis or int64 micros/nanos */
    PQ_CELL_TIMESTAMP,
    PQ_CELL_INT96,
    PQ_CELL_UUID,
    PQ_CELL_INTERVAL,
} pq_cell_kind;

typedef struct pq_cell_format {
    pq_cell_kind kind;
    pq_phys phys;
    int8_t digits;         /* TIME/TIMESTAMP: 3, 6 or 9 fraction digits */
    bool utc;              /* TIMESTAMP: append "+00" */
    int32_t scale;         /* DECIMAL */
} pq_cell_format;

pq_cell_format pq_cell_format_of(const pq_node *primitive);

typedef struct pq_out_col {
    const pq_node *node;            /* NULL for a constant column */
    const pq_col_batch *leaves;     /* node->n_leaves batches, in leaf order */
    const char *constant;           /* constant column: the CSV cell text ("" = NULL) */
    size_t constant_len;
} pq_out_col;

/* The header line: column names, CSV-quoted where needed. */
int pq_csv_header(const char *const *names, int n, pq_buf *out);

/* Renders n_rows rows; when `keep` is given only rows with keep[i] != 0 are
 * written (the others are still walked to keep the cursors right). */
int pq_csv_rows(const pq_out_col *cols, int n_cols, int32_t n_rows, const uint8_t *keep,
                pq_buf *out, size_t *row_ends, pq_error *err);
/* row_ends (optional, room for n_rows entries): out->len after each written
 * row, so that a consumer can cut the text at a row boundary (LIMIT). */

/* One primitive value as canonical CSV text (quoted if needed); values is
 * the typed array of the column, i the value index.  Exposed for partition
 * values, plan output and tests. */
int pq_csv_cell(const pq_cell_format *f, const void *values, size_t i, pq_buf *out);
/* The same value as a JSON scalar (strings quoted and escaped). */
int pq_json_cell(const pq_cell_format *f, const void *values, size_t i, pq_buf *out);

/* Appends `s` as one CSV field, quoting when it holds , " CR LF or is empty. */
int pq_csv_field(const char *s, size_t n, pq_buf *out);

#endif
