/* CSV import: a CSV file with a header becomes a Parquet file, through the
 * column writer (colwrite.h) and the file writer (filewrite.h).
 *
 * The target schema is flat: a root and one primitive column per field.  It
 * is given (the table's, for a write into it) or inferred from the CSV.  A
 * CSV column maps to the target column of the same name; target columns the
 * CSV lacks are NULL.  Text is read as canonical CSV writes it (the inverse
 * of render.c): an empty unquoted field is NULL, "" is the empty string.
 *
 * Rows are cut into row groups of row_group_rows.  The main thread parses;
 * each column of a row group is encoded as its own task on `threads`
 * threads while the next row group is parsed; row groups are appended to the
 * sink in order.  With sort_by, all rows are read first and sorted (stably,
 * ascending, NULLs last), and every row group records sorting_columns. */
#ifndef PQ_CSVIMPORT_H
#define PQ_CSVIMPORT_H

#include "colwrite.h"
#include "io.h"
#include "table.h"

/* Columns a CSV header may have (inference). */
#define PQ_CSV_MAX_COLUMNS 65536

/* A flat schema: elements[0] is the root, elements[1..n) the columns. */
typedef struct pq_csv_schema {
    pq_schema_element *elements;
    int32_t n_elements;
    pq_arena arena;            /* names */
} pq_csv_schema;

void pq_csv_schema_free(pq_csv_schema *s);

/* Reads the CSV once and picks each column's type: INT64 when every value is
 * an integer, else DOUBLE when every value is a number (nan, inf included),
 * BOOLEAN (true/false), DATE (YYYY-MM-DD), TIMESTAMP (MICROS, or NANOS when a
 * value needs it; UTC-adjusted when every value carries an offset, local
 * when none does), else STRING.  A column without values is STRING.  Every
 * column is optional. */
int pq_csv_infer(pq_file *in, const char *name, pq_csv_schema *out, pq_error *err);
/* The same from at most max_rows rows (0: all); *whole (may be NULL) says
 * whether they were all the rows. */
int pq_csv_infer_rows(pq_file *in, const char *name, int64_t max_rows, pq_csv_schema *out, bool *whole,
                      pq_error *err);
#define PQ_CSV_INFER_SAMPLE_ROWS 200000

/* A column whose value is fixed (a partition column, from the path): not
 * written; a CSV column of that name must hold that value on every row. */
typedef struct pq_import_fixed {
    const char *name;
    const char *value;         /* NULL: NULL */
    pq_part_type type;         /* how values compare: INT64, DATE, else as text */
} pq_import_fixed;

typedef struct pq_import_opts {
    pq_write_opts write;
    int64_t row_group_rows;    /* 0: 1,048,576 */
    int threads;               /* 0: one per core */
    const char *const *sort_by; /* column names */
    int n_sort_by;
    const pq_import_fixed *fixed;
    int n_fixed;
    bool *mismatch;            /* out (may be NULL): failed because a value did not fit its column's type */
    int32_t *mismatch_element; /* out (may be NULL): that column's index in `elements` (-1: another failure) */
} pq_import_opts;

void pq_import_opts_init(pq_import_opts *o);

/* Writes the rows of the CSV `in` as a Parquet file with the schema
 * `elements` (root first, flat) to `sink`.  Bad input (a value that does not
 * fit its column, a record with the wrong number of fields, a column the
 * schema lacks, NULL in a required column) is PQ_E_USAGE naming the file,
 * line and column.  *rows_out (may be NULL) gets the rows written. */
int pq_csv_import(pq_file *in, const char *name, const pq_schema_element *elements, int32_t n_elements,
                  const pq_import_opts *opts, const pq_sink *sink, int64_t *rows_out, pq_error *err);

/* CSV to Parquet with inferred types in one pass where it can: the types
 * come from the first PQ_CSV_INFER_SAMPLE_ROWS rows; when a later value does
 * not fit them, restart(restart_ctx) empties the sink and the file is read
 * twice (types from every row, as pq_csv_infer, then the import).  *schema
 * gets the types used (pq_csv_schema_free it, also on failure). */
int pq_csv_import_inferred(pq_file *in, const char *name, const pq_import_opts *opts, const pq_sink *sink,
                           int (*restart)(void *ctx, pq_error *err), void *restart_ctx, pq_csv_schema *schema,
                           int64_t *rows_out, pq_error *err);

#endif
