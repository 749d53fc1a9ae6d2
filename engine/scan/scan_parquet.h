/* A scan's rows as a Parquet file (data.parquet): the output schema, one
 * encoder per row group, and the file they are appended to in order.
 *
 * The schema is the query's projection: each data column's subtree of schema
 * elements as the reference file has it (every file's column must have the
 * same shape and type, as the scan requires), then each projected partition
 * column as an optional INT64, DATE or STRING column.  Every source row group
 * that keeps rows becomes one row group: its kept rows re-encoded by the
 * column writer, or, when it matches entirely, its data columns' chunks
 * copied byte for byte (and the partition columns encoded as constants). */
#ifndef PQ_SCAN_PARQUET_H
#define PQ_SCAN_PARQUET_H

#include "colwrite.h"
#include "filewrite.h"
#include "query.h"
#include "render.h"

typedef struct pq_parquet_out pq_parquet_out;

/* Writes "PAR1" to `sink`.  `ref` is the footer q->schema belongs to; it and
 * q must outlive the writer. */
int pq_parquet_out_new(const pq_query *q, const pq_footer *ref, const pq_write_opts *opts, const pq_sink *sink,
                       pq_parquet_out **out, pq_error *err);
/* Appends one row group (pq_rg_encoder_finish's chunks, taken over). */
int pq_parquet_out_append(pq_parquet_out *po, pq_chunk_out *chunks, pq_error *err);
/* Page indexes and footer. */
int pq_parquet_out_finish(pq_parquet_out *po, pq_error *err);
void pq_parquet_out_free(pq_parquet_out *po);

/* Encodes the rows one source row group keeps.  col_node: per query column,
 * its node in the row group's file (pq_query_bind_file); part_values: the
 * file's partition values (NULL entries: the NULL partition). */
typedef struct pq_rg_encoder pq_rg_encoder;

int pq_rg_encoder_new(const pq_parquet_out *po, const pq_schema *file_schema, const pq_node *const *col_node,
                      const char *const *part_values, pq_rg_encoder **out, pq_error *err);
/* The first n rows of the output columns as rendered (data columns' leaf
 * batches, which may hold more rows: the rest is left out; partition
 * columns constant). */
int pq_rg_encoder_add(pq_rg_encoder *e, const pq_out_col *cols, int32_t n, pq_error *err);
/* Rows added so far. */
int64_t pq_rg_encoder_rows(const pq_rg_encoder *e);
/* Whether row group g of the file can be copied instead (every data leaf
 * copyable, pq_chunk_copyable). */
bool pq_rg_encoder_can_copy(const pq_rg_encoder *e, const pq_footer *ft, int32_t g);
/* Copies row group g's data chunks; the partition columns get its rows. */
int pq_rg_encoder_copy(pq_rg_encoder *e, pq_file *f, const pq_footer *ft, int32_t g, pq_error *err);
/* The sealed row group: *chunks (one per output leaf, malloc'd; give it to
 * pq_parquet_out_append, then free the array). */
int pq_rg_encoder_finish(pq_rg_encoder *e, pq_chunk_out **chunks, pq_error *err);
void pq_rg_encoder_free(pq_rg_encoder *e);

int32_t pq_parquet_out_leaves(const pq_parquet_out *po);

#endif
