/* Parquet file writer: places sealed column chunks (colwrite.h) in a file,
 * streaming to a sink.  The layout is the usual one:
 *   "PAR1", the row groups' chunks in order, every column index, every offset
 *   index, the FileMetaData, its length, "PAR1".
 * A row group's chunks are written as soon as it is added, so memory holds one
 * row group's bytes, plus the metadata of the file so far. */
#ifndef PQ_FILEWRITE_H
#define PQ_FILEWRITE_H

/* The writer's created_by, and what pqfs --version prints. */
#define PQ_CREATED_BY "pqfs version 0.1"

#include "colwrite.h"
#include "footer.h"
#include "io.h"

typedef struct pq_filewriter pq_filewriter;

/* `schema` (the file's schema elements, root first) must stay valid until
 * pq_filewriter_finish; n_leaves is how many chunks each row group has. */
int pq_filewriter_new(const pq_sink *sink, const pq_schema_element *schema, int32_t n_schema, int32_t n_leaves,
                      pq_filewriter **out, pq_error *err);
/* Records `cols` (copied) as the sorting_columns of the row groups added
 * from now on; n == 0: none. */
int pq_filewriter_set_sorting(pq_filewriter *w, const pq_sorting_column *cols, int32_t n, pq_error *err);
/* Writes one row group: chunks[0..n_leaves), in leaf order, all with the same
 * number of rows.  Takes the chunks over (they are left zeroed). */
int pq_filewriter_add_row_group(pq_filewriter *w, pq_chunk_out *chunks, pq_error *err);
/* Writes the page indexes and the footer. */
int pq_filewriter_finish(pq_filewriter *w, pq_error *err);
void pq_filewriter_free(pq_filewriter *w);

/* Whether column c of row group g can be copied byte for byte: its metadata
 * describes its bytes plainly (no quirk the reader has to work around). */
bool pq_chunk_copyable(const pq_footer *ft, int32_t g, int32_t c);
/* Reads column c of row group g of f and its page index, and makes a sealed
 * chunk of them unchanged (pq_chunk_copy). */
int pq_chunk_copy_from(pq_file *f, const pq_footer *ft, int32_t g, int32_t c, pq_chunk_out *out, pq_error *err);

typedef struct pq_rewrite_opts {
    pq_write_opts write;
    int32_t batch_rows;        /* rows decoded at a time; 0: 8192 */
    int threads;               /* 0: one per core */
    bool copy_chunks;          /* copy chunks byte for byte where that is safe */
    /* > 0: row groups of this many rows (the last one fewer), cut across the
     * input's own; 0: the input's row groups. */
    int64_t row_group_rows;
    /* Top-level columns the rows are sorted by (stable, NULLs last, NaN
     * after numbers; rowsort.h), recorded as sorting_columns.  The input's
     * rows are then all held in memory, and its schema must be flat. */
    const char *const *sort_by;
    int n_sort_by;
} pq_rewrite_opts;

void pq_rewrite_opts_init(pq_rewrite_opts *o);

/* Writes every row group of `f` (footer `ft`) into a new file on `sink`: the
 * same schema and rows, in the same row groups unless opts->row_group_rows
 * or sort_by reshape them.  Each output column chunk is a task on one of
 * `threads` threads: decoded with the reader and re-encoded by this writer,
 * or with copy_chunks copied byte for byte (pq_chunk_copy) unless it lives in
 * another file or comes from a writer whose chunk sizes are unreliable.  The
 * error reported is the first in file order; it names `name`. */
int pq_file_rewrite(pq_file *f, const pq_footer *ft, const char *name, const pq_rewrite_opts *opts,
                    const pq_sink *sink, pq_error *err);

#endif
